//===- fuzz_tokenizer_roundtrip.cpp - Real tokenizers on any bytes --------===//
//
// Every real tokenizer of ../shared (GPT-2's byte-level BPE as vocab.json
// and as a GGUF, Falcon's as a GGUF, Llama 3's, Qwen 3's and Gemma 3's
// tokenizer.json,
// Llama 2's SentencePiece as tokenizer.model and as a GGUF, Phi-3's GGUF,
// llama2.c's tokenizer.bin) encodes any bytes to ids inside its vocabulary,
// and decoding them gives the bytes back, as Tokenizer::decode promises,
// except where a format documents otherwise: SentencePiece (and Gemma's
// tokenizer.json, spelled as it) gives them back normalized as
// sentencepiece itself does (its space symbol U+2581 in the input is a
// space); a tokenizer.json with an NFC normalizer (Qwen's) gives
// the text in NFC; llama2.c's tokenizer.bin
// without the lone control bytes that run.c does not print (see
// Llama2cTokenizer.h); byte-level BPE without the bytes its vocabulary has
// no token for (Falcon's lacks a few; see ByteLevelBpeTokenizer.h).
// BERT's WordPiece (bert-bge's GGUF) normalizes case, accents and spacing,
// so there the decoded text must encode to the same ids; so too where
// SentencePiece's Unigram search (T5's kind; ../shared holds no such model)
// runs over Llama 2's pieces and scores, read as a Unigram model with byte
// fallback, which replaces malformed UTF-8 as sentencepiece does.
//
//===----------------------------------------------------------------------===//
#include "FuzzSupport.h"
#include "tfm/runtime/GgufFile.h"
#include "tfm/runtime/SentencePieceTokenizer.h"
#include "tfm/runtime/TokenizerFactory.h"
#include "tfm/runtime/TokenizerFiles.h"
#include "tfm/runtime/UnicodeCategories.h"

#include "llvm/Support/raw_ostream.h"

#include <array>
#include <cstdlib>
#include <memory>
#include <vector>

using namespace tfm;
using namespace tfm::rt;

namespace {

/// What a format's decode changes in the text it was given.
/// Reencodes: the decoded text is normalized, and must encode to the same
/// ids (WordPiece's folding of case, accents and spacing; Unigram's
/// normalization, malformed UTF-8 becoming U+FFFD as in sentencepiece).
enum class DecodeChange { None, SpaceSymbolIsSpace, ControlBytesDropped, Nfc, Reencodes };

struct NamedTokenizer {
  std::string file;
  std::unique_ptr<Tokenizer> tokenizer;
  DecodeChange normalization;
  std::array<bool, 256> dropped{}; // bytes encode() leaves out
};

/// `text` as a SentencePiece decode returns it: U+2581 becomes a space.
std::string spaceSymbolsAsSpaces(std::string text) {
  const std::string spaceSymbol = "\xe2\x96\x81";
  for (size_t at = text.find(spaceSymbol); at != std::string::npos;
       at = text.find(spaceSymbol, at + 1))
    text.replace(at, spaceSymbol.size(), " ");
  return text;
}

/// `text` as llama2.c's decode returns it: the C0 controls other than
/// \t \n \v \f \r, and DEL, are gone.
std::string withoutControlBytes(const std::string &text) {
  std::string kept;
  for (char c : text) {
    unsigned char byte = static_cast<unsigned char>(c);
    if ((byte >= 0x20 && byte != 0x7f) || (byte >= '\t' && byte <= '\r'))
      kept += c;
  }
  return kept;
}

std::string normalized(const std::string &text, const NamedTokenizer &named) {
  switch (named.normalization) {
  case DecodeChange::None: {
    std::string kept;
    for (char c : text)
      if (!named.dropped[static_cast<unsigned char>(c)])
        kept += c;
    return kept;
  }
  case DecodeChange::SpaceSymbolIsSpace:
    return spaceSymbolsAsSpaces(text);
  case DecodeChange::ControlBytesDropped:
    return withoutControlBytes(text);
  case DecodeChange::Nfc:
    return normalizeText(text, tfm::rt::Normalization::NFC);
  case DecodeChange::Reencodes:
    break; // checked by encoding the decoded text again
  }
  return text;
}

std::vector<NamedTokenizer> &tokenizers() {
  static std::vector<NamedTokenizer> all;
  return all;
}

/// The SentencePiece vocabulary of GGUF `path` searched as a Unigram model.
std::unique_ptr<Tokenizer> unigramOf(const std::string &path) {
  auto file = GgufFile::open(path);
  if (!file)
    fuzz::propertyFailed(llvm::toString(file.takeError()));
  auto vocab = readGgufVocabulary(**file);
  if (!vocab || !vocab->sentencePiece)
    fuzz::propertyFailed(path + ": no SentencePiece vocabulary" +
                         (vocab ? std::string() : ": " + llvm::toString(vocab.takeError())));
  vocab->sentencePiece->model = SentencePieceModel::Unigram;
  auto tokenizer = SentencePieceTokenizer::create(*vocab->sentencePiece);
  if (!tokenizer)
    fuzz::propertyFailed(llvm::toString(tokenizer.takeError()));
  return std::move(*tokenizer);
}

} // namespace

extern "C" int LLVMFuzzerInitialize(int *, char ***) {
  std::string models = fuzz::sharedModelsDir();
  if (models.empty())
    std::exit(std::getenv("CI") && std::string(std::getenv("CI")) == "true" ? 1 : 77);
  for (const char *file : {"gpt2-tokenizer/encoder.json", "gguf-vocab/ggml-vocab-gpt-2.gguf",
                           "gguf-vocab/ggml-vocab-falcon.gguf",
                           "hf-tokenizers/llama3.1/tokenizer.json",
                           "hf-tokenizers/qwen3/tokenizer.json",
                           "hf-tokenizers/gemma3/tokenizer.json",
                           "llama2-tokenizer/tokenizer.model", "gguf-vocab/ggml-vocab-llama-spm.gguf",
                           "gguf-vocab/ggml-vocab-phi-3.gguf",
                           "gguf-vocab/ggml-vocab-bert-bge.gguf",
                           "llama2-tokenizer/tokenizer.bin", "aidreams260k/tokenizer.bin"}) {
    auto tokenizer = loadStandaloneTokenizer(models + "/" + file);
    if (!tokenizer)
      fuzz::propertyFailed(llvm::toString(tokenizer.takeError()));
    llvm::StringRef name(file);
    DecodeChange normalization =
        name.ends_with(".bin") ? DecodeChange::ControlBytesDropped
        : name.contains("tokenizer.model") || name.contains("spm") || name.contains("phi-3") ||
                name.contains("gemma")
            ? DecodeChange::SpaceSymbolIsSpace
        : name.contains("qwen") ? DecodeChange::Nfc
        : name.contains("bert") ? DecodeChange::Reencodes
                                : DecodeChange::None;
    NamedTokenizer named{file, std::move(*tokenizer), normalization};
    // A byte-level vocabulary drops the bytes it has no token for.
    if (normalization == DecodeChange::None)
      for (int byte = 0; byte < 256; ++byte)
        named.dropped[byte] =
            named.tokenizer->encode(std::string(1, static_cast<char>(byte)), false).empty();
    tokenizers().push_back(std::move(named));
  }
  tokenizers().push_back({"gguf-vocab/ggml-vocab-llama-spm.gguf as Unigram",
                          unigramOf(models + "/gguf-vocab/ggml-vocab-llama-spm.gguf"),
                          DecodeChange::Reencodes});
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  std::string text(reinterpret_cast<const char *>(data), size);
  for (const NamedTokenizer &named : tokenizers()) {
    const Tokenizer &tokenizer = *named.tokenizer;
    std::string decoded;
    int32_t previous = -1;
    std::vector<int32_t> ids = tokenizer.encode(text, /*addBos=*/false);
    for (int32_t id : ids) {
      if (id < 0 || id >= tokenizer.vocabSize())
        fuzz::propertyFailed(named.file + ": encode gave id " + std::to_string(id) +
                             " outside the vocabulary");
      decoded += tokenizer.decode(previous, id);
      previous = id;
    }
    if (named.normalization == DecodeChange::Reencodes) {
      if (tokenizer.encode(decoded, /*addBos=*/false) != ids)
        fuzz::propertyFailed(named.file + ": encode(decode(encode(text))) differs from "
                             "encode(text) (" + std::to_string(text.size()) + " bytes in)");
      continue;
    }
    if (decoded != normalized(text, named))
      fuzz::propertyFailed(named.file + ": decode(encode(text)) differs from text (" +
                           std::to_string(text.size()) + " bytes in, " +
                           std::to_string(decoded.size()) + " out)");
  }
  return 0;
}
