//===- GgufTokenizerFile.cpp - The tokenizer a GGUF file embeds -----------===//
//
// Keys as llama.cpp writes them (gguf-py's constants): tokenizer.ggml.model,
// .tokens, .token_type, .scores, .merges, .pre, .bos_token_id,
// .eos_token_id, .unknown_token_id, .add_bos_token, .add_space_prefix,
// .remove_extra_whitespaces; for T5's Unigram .precompiled_charsmap; for
// BERT's WordPiece .cls_token_id, .seperator_token_id (sic) and
// .add_eos_token.
//
//===----------------------------------------------------------------------===//
#include "tfm/runtime/GgufFile.h"
#include "tfm/runtime/TokenizerFiles.h"

#include "tfm/common/Failure.h"
#include "tfm/common/UntrustedText.h"

#include "llvm/ADT/STLExtras.h"

#include <algorithm>
#include <cstdint>

using namespace tfm::rt;
using tfm::quoted;

using tfm::failure;

namespace {

/// tokenizer.ggml.pre values and what llama.cpp (llama-vocab.cpp) gives
/// each: the word split, whether a word that is a token skips the merges,
/// and whether encoding starts with BOS when the file does not say. A file
/// without the key predates it and is GPT-2's.
struct PreTokenizer {
  llvm::StringLiteral pre;
  WordSplit split;
  bool ignoreMerges;
  bool addsBos;
};
constexpr PreTokenizer kPreTokenizers[] = {
    {"gpt-2", WordSplit::Gpt2, false, false},
    {"mpt", WordSplit::Gpt2, false, false},
    {"falcon", WordSplit::Falcon, false, false},
    {"llama-bpe", WordSplit::Llama3, true, true},
    {"qwen2", WordSplit::Qwen2, false, false},
    {"smollm", WordSplit::Smollm, false, false},
};

/// The names of kPreTokenizers, quoted, for messages.
std::string preTokenizerNames() {
  std::string names;
  for (const PreTokenizer &p : kPreTokenizers)
    names += (names.empty() ? "" : ", ") + quoted(p.pre.str());
  return names;
}

/// Reads the optional key `key` into `out` with `get`.
template <typename T, typename Get>
llvm::Error readOptional(const GgufFile &file, llvm::StringRef key, T &out, Get get) {
  if (!file.has(key))
    return llvm::Error::success();
  auto value = (file.*get)(key);
  if (!value)
    return value.takeError();
  out = static_cast<T>(*value);
  return llvm::Error::success();
}

/// Reads the optional token id `key` into `out`. llama.cpp writes ids as
/// uint32, with 0xFFFFFFFF (its -1 as uint32) for none, as a negative id
/// is; any other value past int32 is refused rather than cut to another id.
llvm::Error readOptionalId(const GgufFile &file, llvm::StringRef key, int32_t &out) {
  if (!file.has(key))
    return llvm::Error::success();
  llvm::Expected<int64_t> value = file.getInteger(key);
  if (!value)
    return value.takeError();
  if (*value == UINT32_MAX) {
    out = -1;
    return llvm::Error::success();
  }
  if (*value < INT32_MIN || *value > INT32_MAX)
    return failure(file.path() + ": " + key.str() + " is " + std::to_string(*value) +
                   ", expected a token id below 2^31 (or -1 for none)");
  out = static_cast<int32_t>(*value);
  return llvm::Error::success();
}

/// The parts every vocabulary has: token texts, kinds, BOS/EOS/unknown.
struct CommonPart {
  std::vector<std::string> tokens;
  std::vector<TokenKind> kinds;
  SpecialTokens special;
  bool hasAddBos = false;
  int32_t unknown = -1;
};

/// The texts of tokens llama.cpp ends generation at beside EOS, EOT and EOM
/// (llama-vocab.cpp's special_eog_ids), which its converters leave unnamed.
constexpr llvm::StringLiteral kEndOfTurnTexts[] = {
    "<|eot_id|>", "<|im_end|>", "<|end|>",   "<|return|>",      "<|call|>",
    "<end_of_turn>", "<|endoftext|>", "<|eom_id|>", "<EOT>", "_<EOT>",
    "<|end_of_text|>", "<end_of_utterance>"};

/// The tokens beside EOS that end a turn: the file's EOT and EOM, and the
/// tokens of kEndOfTurnTexts.
llvm::Error readEndOfTurn(const GgufFile &file, CommonPart &common) {
  int32_t eot = -1, eom = -1;
  if (llvm::Error e = readOptionalId(file, "tokenizer.ggml.eot_token_id", eot))
    return e;
  if (llvm::Error e = readOptionalId(file, "tokenizer.ggml.eom_token_id", eom))
    return e;
  std::vector<int32_t> &ids = common.special.endOfTurn;
  for (int32_t id : {eot, eom})
    if (id >= 0 && id < static_cast<int64_t>(common.tokens.size()))
      ids.push_back(id);
  for (size_t id = 0; id < common.tokens.size(); ++id)
    if (llvm::is_contained(kEndOfTurnTexts, common.tokens[id]))
      ids.push_back(static_cast<int32_t>(id));
  llvm::sort(ids);
  ids.erase(std::unique(ids.begin(), ids.end()), ids.end());
  return llvm::Error::success();
}

llvm::Expected<CommonPart> readCommon(const GgufFile &file) {
  const std::string &path = file.path();
  CommonPart common;
  auto tokens = file.getStringArray("tokenizer.ggml.tokens");
  if (!tokens)
    return tokens.takeError();
  common.tokens = std::move(*tokens);
  // Token ids are int32 throughout.
  if (common.tokens.size() > static_cast<size_t>(INT32_MAX))
    return failure(path + ": tokenizer.ggml.tokens has " + std::to_string(common.tokens.size()) +
                   " entries, expected at most 2^31-1");
  common.kinds.assign(common.tokens.size(), TokenKind::Normal);
  if (file.has("tokenizer.ggml.token_type")) {
    auto types = file.getI32Array("tokenizer.ggml.token_type");
    if (!types)
      return types.takeError();
    if (types->size() != common.tokens.size())
      return failure(path + ": tokenizer.ggml.token_type has " +
                     std::to_string(types->size()) + " entries, expected one per token (" +
                     std::to_string(common.tokens.size()) + ")");
    for (size_t id = 0; id < types->size(); ++id) {
      int32_t type = (*types)[id];
      if (type < static_cast<int32_t>(TokenKind::Normal) ||
          type > static_cast<int32_t>(TokenKind::Byte))
        return failure(path + ": tokenizer.ggml.token_type[" + std::to_string(id) + "] is " +
                       std::to_string(type) + ", expected 1..6");
      common.kinds[id] = static_cast<TokenKind>(type);
    }
  }
  common.hasAddBos = file.has("tokenizer.ggml.add_bos_token");
  if (llvm::Error e = readOptionalId(file, "tokenizer.ggml.bos_token_id", common.special.bos))
    return std::move(e);
  if (llvm::Error e = readOptionalId(file, "tokenizer.ggml.eos_token_id", common.special.eos))
    return std::move(e);
  if (llvm::Error e = readEndOfTurn(file, common))
    return std::move(e);
  if (llvm::Error e = readOptional(file, "tokenizer.ggml.add_bos_token",
                                   common.special.addBos, &GgufFile::getBool))
    return std::move(e);
  if (llvm::Error e = readOptionalId(file, "tokenizer.ggml.unknown_token_id", common.unknown))
    return std::move(e);
  return common;
}

llvm::Expected<ByteLevelBpeVocabulary> readByteLevel(const GgufFile &file, CommonPart common) {
  const std::string &path = file.path();
  std::string pre = "gpt-2";
  if (llvm::Error e = readOptional(file, "tokenizer.ggml.pre", pre, &GgufFile::getString))
    return std::move(e);
  const PreTokenizer *known = llvm::find_if(
      kPreTokenizers, [&](const PreTokenizer &p) { return pre == p.pre; });
  if (known == std::end(kPreTokenizers))
    return failure(path + ": tokenizer.ggml.pre is " + quoted(pre) +
                   "; supported: " + preTokenizerNames());

  ByteLevelBpeVocabulary vocab;
  vocab.source = path;
  vocab.wordSplit = known->split;
  vocab.ignoreMerges = known->ignoreMerges;
  auto merges = file.getStringArray("tokenizer.ggml.merges");
  if (!merges)
    return merges.takeError();
  for (size_t rank = 0; rank < merges->size(); ++rank) {
    auto [left, right] = llvm::StringRef((*merges)[rank]).split(' ');
    if (left.empty() || right.empty() || right.contains(' '))
      return failure(path + ": tokenizer.ggml.merges[" + std::to_string(rank) + "] is " +
                     quoted((*merges)[rank]) + ", expected two tokens separated by one space");
    vocab.merges.emplace_back(left.str(), right.str());
  }
  vocab.added = addedTokensFromKinds(common.tokens, common.kinds);
  vocab.tokens = std::move(common.tokens);
  vocab.special = common.special;
  vocab.unknown = common.unknown;
  if (!common.hasAddBos)
    vocab.special.addBos = known->addsBos; // GPT-2 style models start without BOS
  return vocab;
}

llvm::Expected<SentencePieceVocabulary> readSentencePiece(const GgufFile &file,
                                                          CommonPart common) {
  SentencePieceVocabulary vocab;
  vocab.source = file.path();
  auto scores = file.getF32Array("tokenizer.ggml.scores");
  if (!scores)
    return scores.takeError();
  vocab.scores = std::move(*scores);
  if (vocab.scores.size() != common.tokens.size())
    return failure(file.path() + ": tokenizer.ggml.scores has " +
                   std::to_string(vocab.scores.size()) + " entries, expected one per token (" +
                   std::to_string(common.tokens.size()) + ")");
  vocab.added = addedTokensFromKinds(common.tokens, common.kinds);
  vocab.pieces = std::move(common.tokens);
  vocab.kinds = std::move(common.kinds);
  vocab.special = common.special;
  if (!common.hasAddBos)
    vocab.special.addBos = true; // SentencePiece (Llama) models start with BOS
  // llama.cpp falls back to bytes whenever the vocabulary has byte pieces.
  vocab.byteFallback = true;
  vocab.unknown = common.unknown;
  vocab.addDummyPrefix = true;
  vocab.removeExtraWhitespaces = false;
  vocab.escapeWhitespaces = true;
  if (llvm::Error e = readOptional(file, "tokenizer.ggml.add_space_prefix",
                                   vocab.addDummyPrefix, &GgufFile::getBool))
    return std::move(e);
  if (llvm::Error e = readOptional(file, "tokenizer.ggml.remove_extra_whitespaces",
                                   vocab.removeExtraWhitespaces, &GgufFile::getBool))
    return std::move(e);
  return vocab;
}

const char kSpaceMark[] = "\xE2\x96\x81"; // U+2581

/// llama.cpp's converter spells a WordPiece vocabulary (BERT's) with "▁" in
/// front of a word's first pieces and continuations bare ("##ing" is
/// "ing"); special tokens ([CLS], ...) and [unusedN] stay as they are.
/// llama.cpp's WPM tokenizer always folds case, as the uncased
/// vocabularies it is written for do; the file has no key for it.
llvm::Expected<WordPieceVocabulary> readWordPiece(const GgufFile &file, CommonPart common) {
  WordPieceVocabulary vocab;
  vocab.source = file.path();
  vocab.added = addedTokensFromKinds(common.tokens, common.kinds);
  vocab.special = common.special;
  if (llvm::Error e = readOptionalId(file, "tokenizer.ggml.cls_token_id", vocab.special.bos))
    return std::move(e);
  if (llvm::Error e = readOptionalId(file, "tokenizer.ggml.seperator_token_id", vocab.special.eos))
    return std::move(e);
  if (!common.hasAddBos)
    vocab.special.addBos = true;
  vocab.special.addEos = true;
  if (llvm::Error e = readOptional(file, "tokenizer.ggml.add_eos_token", vocab.special.addEos,
                                   &GgufFile::getBool))
    return std::move(e);
  vocab.unknown = common.unknown;
  vocab.continues.resize(common.tokens.size());
  for (size_t id = 0; id < common.tokens.size(); ++id) {
    llvm::StringRef text = common.tokens[id];
    bool bracketed = text.starts_with("[") && text.ends_with("]");
    vocab.continues[id] = !bracketed && !text.starts_with(kSpaceMark);
    vocab.tokens.push_back(text.starts_with(kSpaceMark) ? text.drop_front(3).str() : text.str());
  }
  return vocab;
}

/// T5's Unigram model as llama.cpp's converter writes it: SentencePiece's
/// pieces, scores and types, normalizer_spec's precompiled charsmap (an
/// array of bytes) and whitespace settings. llama.cpp's UGM tokenizer adds
/// no BOS, and its whitespace settings default to off where the file has
/// no key. (It also ends an encoder's source with EOS: the source is for
/// the encoder-decoder entry to frame.)
llvm::Expected<SentencePieceVocabulary> readUnigram(const GgufFile &file, CommonPart common) {
  bool hasAddBos = common.hasAddBos;
  auto vocab = readSentencePiece(file, std::move(common));
  if (!vocab)
    return vocab.takeError();
  vocab->model = SentencePieceModel::Unigram;
  if (!hasAddBos)
    vocab->special.addBos = false;
  vocab->addDummyPrefix = false;
  for (auto [key, flag] :
       {std::make_pair("tokenizer.ggml.add_space_prefix", &vocab->addDummyPrefix),
        std::make_pair("tokenizer.ggml.remove_extra_whitespaces", &vocab->removeExtraWhitespaces)})
    if (llvm::Error e = readOptional(file, key, *flag, &GgufFile::getBool))
      return std::move(e);
  if (file.has("tokenizer.ggml.precompiled_charsmap")) {
    auto bytes = file.getI32Array("tokenizer.ggml.precompiled_charsmap");
    if (!bytes)
      return bytes.takeError();
    for (int32_t byte : *bytes)
      vocab->precompiledCharsmap += static_cast<char>(byte);
  }
  return vocab;
}

/// The tokenizer models a GGUF's `tokenizer.ggml.model` may name.
enum class TokenizerModel { ByteLevelBpe, SentencePiece, Unigram, WordPiece };

struct TokenizerModelName {
  TokenizerModel model;
  llvm::StringLiteral name;
};

constexpr TokenizerModelName kTokenizerModels[] = {
    {TokenizerModel::ByteLevelBpe, "gpt2"},
    {TokenizerModel::SentencePiece, "llama"},
    {TokenizerModel::Unigram, "t5"},
    {TokenizerModel::WordPiece, "bert"},
};

const TokenizerModelName *findTokenizerModel(llvm::StringRef name) {
  for (const TokenizerModelName &m : kTokenizerModels)
    if (m.name == name)
      return &m;
  return nullptr;
}

} // namespace

llvm::Expected<FileVocabulary> tfm::rt::readGgufVocabulary(const GgufFile &file) {
  if (!file.has("tokenizer.ggml.model"))
    return failure(file.path() + ": holds no tokenizer (no 'tokenizer.ggml.model' metadata); "
                                 "pass --tokenizer FILE (tokenizer.json, tokenizer.model, a "
                                 ".gguf that has one, ...)");
  auto name = file.getString("tokenizer.ggml.model");
  if (!name)
    return name.takeError();
  const TokenizerModelName *model = findTokenizerModel(*name);
  if (!model)
    return failure(file.path() + ": tokenizer.ggml.model is " + quoted(*name) +
                   "; supported: \"gpt2\" (byte-level BPE), \"llama\" (SentencePiece BPE), "
                   "\"t5\" (SentencePiece Unigram) and \"bert\" (WordPiece)");
  llvm::Expected<CommonPart> common = readCommon(file);
  if (!common)
    return common.takeError();

  FileVocabulary vocab;
  switch (model->model) {
  case TokenizerModel::ByteLevelBpe: {
    auto bpe = readByteLevel(file, std::move(*common));
    if (!bpe)
      return bpe.takeError();
    vocab.byteLevel = std::move(*bpe);
    break;
  }
  case TokenizerModel::SentencePiece: {
    auto spm = readSentencePiece(file, std::move(*common));
    if (!spm)
      return spm.takeError();
    vocab.sentencePiece = std::move(*spm);
    break;
  }
  case TokenizerModel::Unigram: {
    auto ugm = readUnigram(file, std::move(*common));
    if (!ugm)
      return ugm.takeError();
    vocab.sentencePiece = std::move(*ugm);
    break;
  }
  case TokenizerModel::WordPiece: {
    auto wpm = readWordPiece(file, std::move(*common));
    if (!wpm)
      return wpm.takeError();
    vocab.wordPiece = std::move(*wpm);
    break;
  }
  }
  return vocab;
}
