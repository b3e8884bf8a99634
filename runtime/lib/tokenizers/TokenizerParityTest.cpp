//===- TokenizerParityTest.cpp - Every tokenizer against Hugging Face's ids ===//
//
// The goldens in ../shared/goldens/tokenizers are Hugging Face tokenizers'
// ids for texts chosen to be hard (runs of whitespace, emoji, CJK, Khmer,
// digits, contractions); each vocabulary is checked from every file format
// this project reads it in. The same texts and a few more (invalid UTF-8
// among them) must come back byte for byte through encode and decode.
//
//===----------------------------------------------------------------------===//
#include "testing/SharedData.h"
#include "TokenizerTestFiles.h"

#include "tfm/runtime/TokenizerFactory.h"

#include "llvm/ADT/StringRef.h"
#include "llvm/Support/raw_ostream.h"


using namespace tfm;
using namespace tfm::rt;
using namespace tfm::rt::testing;

namespace {

struct GoldenCase {
  std::string text;
  std::vector<int32_t> ids;
};

/// NAME.inp holds texts, each ended by "\n__ggml_vocab_test__\n" (the
/// newline before the separator is not part of the text); NAME.out one
/// line of space-separated ids per text.
std::vector<GoldenCase> readGoldens(const std::string &inpPath, const std::string &outPath) {
  const std::string separator = "\n__ggml_vocab_test__\n";
  std::string inp = readFile(inpPath);
  std::vector<GoldenCase> cases;
  for (size_t at = 0, next; (next = inp.find(separator, at)) != std::string::npos;
       at = next + separator.size())
    cases.push_back({inp.substr(at, next - at), {}});

  std::string out = readFile(outPath);
  llvm::SmallVector<llvm::StringRef> lines;
  llvm::StringRef(out).split(lines, '\n');
  EXPECT_GE(lines.size(), cases.size()) << outPath << " has fewer lines than " << inpPath;
  for (size_t i = 0; i < cases.size() && i < lines.size(); ++i) {
    llvm::SmallVector<llvm::StringRef> fields;
    lines[i].split(fields, ' ', -1, /*KeepEmpty=*/false);
    for (llvm::StringRef field : fields) {
      int32_t id;
      EXPECT_FALSE(field.getAsInteger(10, id)) << outPath << " line " << i + 1;
      cases[i].ids.push_back(id);
    }
  }
  return cases;
}

std::string printable(const std::string &text) {
  std::string out;
  llvm::raw_string_ostream os(out);
  os.write_escaped(text, /*UseHexEscapes=*/true);
  return out;
}

/// Decodes `ids` as the generator prints them: BOS itself is not printed.
std::string decodeAll(const Tokenizer &tok, const std::vector<int32_t> &ids, bool startsWithBos) {
  std::string text;
  for (size_t i = startsWithBos ? 1 : 0; i < ids.size(); ++i)
    text += tok.decode(i == 0 ? -1 : ids[i - 1], ids[i]);
  return text;
}

/// One vocabulary in one file format.
struct Source {
  const char *name;
  const char *golden; // goldens/tokenizers/<golden>.{inp,out}
  const char *file;   // under TFM_SHARED_DIR, or a tokenizer.json made from GPT-2's
  enum {
    Shared,
    TokenizerJsonStringMerges,
    TokenizerJsonPairMerges,
    BertTokenizerJson, // made from bert-bge's GGUF
    BertVocabTxt,
  } kind;
  bool everyByte; // has a token for the bytes UTF-8 never uses (C0, C1, F5..FF)
  int64_t vocab;     // of the model the tokenizer belongs to
  int64_t configBos; // the model config's, used only where the files name none
  int64_t configEos;
};

const Source kSources[] = {
    {"Gpt2EncoderJson", "gpt-2", "models/gpt2-tokenizer/encoder.json", Source::Shared, true,
     50257, 50256, 50256},
    {"Gpt2TokenizerJsonStringMerges", "gpt-2", nullptr, Source::TokenizerJsonStringMerges,
     true, 50257, 50256, 50256},
    {"Gpt2TokenizerJsonPairMerges", "gpt-2", nullptr, Source::TokenizerJsonPairMerges, true, 50257,
     50256, 50256},
    {"Gpt2Gguf", "gpt-2", "models/gguf-vocab/ggml-vocab-gpt-2.gguf", Source::Shared, true, 50257,
     -1, -1},
    {"MptGguf", "mpt", "models/gguf-vocab/ggml-vocab-mpt.gguf", Source::Shared, false, 50432, -1,
     -1},
    {"FalconGguf", "falcon", "models/gguf-vocab/ggml-vocab-falcon.gguf", Source::Shared, false,
     65024, -1, -1},
    {"LlamaSentencePieceModel", "llama-spm", "models/llama2-tokenizer/tokenizer.model",
     Source::Shared, true, 32000, -1, -1},
    {"LlamaGguf", "llama-spm", "models/gguf-vocab/ggml-vocab-llama-spm.gguf", Source::Shared,
     true, 32000, -1, -1},
    {"Llama3TokenizerJson", "llama-bpe", "models/hf-tokenizers/llama3.1/tokenizer.json",
     Source::Shared, true, 128256, -1, -1},
    {"Qwen3TokenizerJson", "qwen2", "models/hf-tokenizers/qwen3/tokenizer.json", Source::Shared,
     true, 151936, -1, -1},
    {"Phi3Gguf", "phi-3", "models/gguf-vocab/ggml-vocab-phi-3.gguf", Source::Shared, true, 32064,
     -1, -1},
};

/// WordPiece normalizes text (case, accents, spaces around punctuation), so
/// its decode gives back text that encodes to the same ids, not the bytes.
const Source kWordPieceSources[] = {
    {"BertGguf", "bert-bge", "models/gguf-vocab/ggml-vocab-bert-bge.gguf", Source::Shared, false,
     30522, -1, -1},
    {"BertTokenizerJson", "bert-bge", nullptr, Source::BertTokenizerJson, false, 30522, -1, -1},
    {"BertVocabTxt", "bert-bge", nullptr, Source::BertVocabTxt, false, 30522, -1, -1},
};

void PrintTo(const Source &source, std::ostream *os) { *os << source.name; }

/// The file of a source a test writes from a shared one ("" without it).
std::string writtenSourceFile(const Source &source) {
  std::string dir = tempFolder(source.name);
  if (source.kind == Source::BertTokenizerJson || source.kind == Source::BertVocabTxt) {
    std::string gguf = sharedPath("models/gguf-vocab/ggml-vocab-bert-bge.gguf");
    if (gguf.empty())
      return "";
    std::vector<std::string> pieces = bertPiecesFromGguf(gguf);
    return source.kind == Source::BertVocabTxt
               ? writeBertVocabTxt(dir + "/vocab.txt", pieces)
               : writeJson(dir + "/tokenizer.json", bertTokenizerJson(pieces));
  }
  std::string encoder = sharedPath("models/gpt2-tokenizer/encoder.json");
  std::string bpe = sharedPath("models/gpt2-tokenizer/vocab.bpe");
  if (encoder.empty() || bpe.empty())
    return "";
  return writeJson(dir + "/tokenizer.json",
                   gpt2TokenizerJson(encoder, bpe, source.kind == Source::TokenizerJsonPairMerges));
}

/// llama2.c's tokenizer.bin of the same Llama vocabulary encodes differently
/// (no split at whitespace before merging), so it is only round-tripped.
const Source kLlama2c = {"Llama2cTokenizerBin", "llama-spm",
                         "models/llama2-tokenizer/tokenizer.bin", Source::Shared, true, 32000,
                         1, 2};

class TokenizerSource : public ::testing::TestWithParam<Source> {
protected:
  /// Loads the source's tokenizer, or records why not (skip or failure).
  std::unique_ptr<Tokenizer> load() {
    const Source &source = GetParam();
    std::string file =
        source.kind == Source::Shared ? sharedPath(source.file) : writtenSourceFile(source);
    if (file.empty())
      return nullptr;
    tfm::ModelSpec config;
    config.vocabSize = source.vocab;
    config.bosTokenId = source.configBos;
    config.eosTokenId = source.configEos;
    auto tok = loadTokenizer(file, config);
    if (!tok) {
      ADD_FAILURE() << llvm::toString(tok.takeError());
      return nullptr;
    }
    return std::move(*tok);
  }

  std::vector<GoldenCase> goldens() {
    std::string golden = std::string("goldens/tokenizers/") + GetParam().golden;
    std::string inp = sharedPath(golden + ".inp"), out = sharedPath(golden + ".out");
    if (inp.empty() || out.empty())
      return {};
    return readGoldens(inp, out);
  }
};

class TokenizerParity : public TokenizerSource {};
class TokenizerRoundTrip : public TokenizerSource {};
class NormalizingTokenizerRoundTrip : public TokenizerSource {};

TEST_P(TokenizerParity, EncodesLikeHuggingFace) {
  std::unique_ptr<Tokenizer> tok = load();
  std::vector<GoldenCase> cases = goldens();
  if (!tok || cases.empty())
    GTEST_SKIP() << "tokenizer or goldens not found under TFM_SHARED_DIR";
  ASSERT_GT(cases.size(), 40u);
  for (size_t i = 0; i < cases.size(); ++i)
    EXPECT_EQ(tok->encode(cases[i].text, /*addBos=*/false), cases[i].ids)
        << "case " << i << ": \"" << printable(cases[i].text) << "\"";
}

/// Texts beyond the goldens: invalid UTF-8 (a stray continuation byte, cut
/// sequences, a surrogate, a lead byte before ASCII), emoji with modifiers
/// and joiners, CJK, runs of mixed whitespace, the special tokens' text,
/// and none at all.
const char *const kExtraTexts[] = {
    "a\x80" "b",
    "\xE2\x82",
    "cut at the end \xF0\x9F\x98",
    "\xED\xA0\x80 surrogate",
    "\xE2x\xF4",
    "\xF0\x9F\x91\x8D\xF0\x9F\x8F\xBD \xF0\x9F\x91\xA8\xE2\x80\x8D\xF0\x9F\x91\xA9\xE2\x80\x8D"
    "\xF0\x9F\x91\xA7!",
    "\xE6\xBC\xA2\xE5\xAD\x97\xE3\x81\x8B\xE3\x81\xAA \xED\x95\x9C\xEA\xB5\xAD\xEC\x96\xB4",
    "   \t\t \n\n\n   \r\n  x  \t",
    "\n",
    "  ",
    "<|endoftext|>Hello<|endoftext|> <s> x</s>  y",
    "",
};

TEST_P(TokenizerRoundTrip, DecodeGivesBackTheBytes) {
  std::unique_ptr<Tokenizer> tok = load();
  if (!tok)
    GTEST_SKIP() << "tokenizer not found under TFM_SHARED_DIR";
  std::vector<std::string> texts(std::begin(kExtraTexts), std::end(kExtraTexts));
  if (GetParam().everyByte) {
    texts.push_back("\xC0\xAF overlong");
    texts.push_back("\xFF\xFE\xFD");
  }
  for (const GoldenCase &c : goldens())
    texts.push_back(c.text);
  for (const std::string &text : texts) {
    std::vector<int32_t> plain = tok->encode(text, /*addBos=*/false);
    EXPECT_EQ(decodeAll(*tok, plain, false), text) << "\"" << printable(text) << "\"";
    if (tok->bosId() >= 0) {
      std::vector<int32_t> withBos = tok->encode(text, /*addBos=*/true);
      ASSERT_FALSE(withBos.empty());
      EXPECT_EQ(withBos[0], tok->bosId());
      EXPECT_EQ(decodeAll(*tok, withBos, true), text) << "\"" << printable(text) << "\"";
    }
  }
}

TEST_P(NormalizingTokenizerRoundTrip, DecodedTextEncodesToTheSameIds) {
  std::unique_ptr<Tokenizer> tok = load();
  if (!tok)
    GTEST_SKIP() << "tokenizer not found under TFM_SHARED_DIR";
  std::vector<std::string> texts(std::begin(kExtraTexts), std::end(kExtraTexts));
  for (const GoldenCase &c : goldens())
    texts.push_back(c.text);
  for (const std::string &text : texts) {
    std::vector<int32_t> plain = tok->encode(text, /*addBos=*/false);
    std::string decoded = decodeAll(*tok, plain, false);
    EXPECT_EQ(tok->encode(decoded, false), plain)
        << "\"" << printable(text) << "\" decoded as \"" << printable(decoded) << "\"";
    std::vector<int32_t> framed = tok->encode(text, /*addBos=*/true);
    ASSERT_GE(framed.size(), 2u);
    EXPECT_EQ(framed.front(), tok->bosId());
    EXPECT_EQ(framed.back(), tok->eosId());
    EXPECT_EQ(std::vector<int32_t>(framed.begin() + 1, framed.end() - 1), plain);
  }
}

std::string sourceName(const ::testing::TestParamInfo<Source> &info) {
  return info.param.name;
}
INSTANTIATE_TEST_SUITE_P(Formats, TokenizerParity, ::testing::ValuesIn(kSources), sourceName);
INSTANTIATE_TEST_SUITE_P(Formats, TokenizerRoundTrip,
                         ::testing::Values(kLlama2c), sourceName);
INSTANTIATE_TEST_SUITE_P(AllFormats, TokenizerRoundTrip, ::testing::ValuesIn(kSources),
                         sourceName);
INSTANTIATE_TEST_SUITE_P(WordPiece, TokenizerParity, ::testing::ValuesIn(kWordPieceSources),
                         sourceName);
INSTANTIATE_TEST_SUITE_P(WordPiece, NormalizingTokenizerRoundTrip,
                         ::testing::ValuesIn(kWordPieceSources), sourceName);

} // namespace
