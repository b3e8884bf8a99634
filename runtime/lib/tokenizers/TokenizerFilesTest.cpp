//===- TokenizerFilesTest.cpp - Tokenizer formats, settings and refusals -===//
//
// What the goldens do not reach: where special tokens come from (files over
// the model config), how a Hugging Face folder is searched, the pieces of
// the byte-level and SentencePiece algorithms on small made-up inputs, and
// a clear refusal, naming the file and field, of each malformed or
// unsupported file.
//
//===----------------------------------------------------------------------===//
#include "testing/SharedData.h"
#include "TokenizerTestFiles.h"

#include "tfm/runtime/AddedTokens.h"
#include "tfm/runtime/GgufWriter.h"
#include "tfm/runtime/TokenizerFactory.h"
#include "tfm/runtime/WordSplit.h"

#include "llvm/Support/raw_ostream.h"

#include <cstring>

using namespace tfm;
using namespace tfm::rt;
using namespace tfm::rt::testing;

namespace {

tfm::ModelSpec modelConfig(int64_t vocab, int64_t bos = -1, int64_t eos = -1) {
  tfm::ModelSpec config;
  config.vocabSize = vocab;
  config.bosTokenId = bos;
  config.eosTokenId = eos;
  return config;
}

std::unique_ptr<Tokenizer> loadOrFail(const std::string &path, const tfm::ModelSpec &config) {
  auto tok = loadTokenizer(path, config);
  if (!tok) {
    ADD_FAILURE() << llvm::toString(tok.takeError());
    return nullptr;
  }
  return std::move(*tok);
}

std::string loadError(const std::string &path, const tfm::ModelSpec &config) {
  auto tok = loadTokenizer(path, config);
  return tok ? "" : llvm::toString(tok.takeError());
}

std::vector<int32_t> concat(std::initializer_list<std::vector<int32_t>> parts) {
  std::vector<int32_t> all;
  for (const auto &part : parts)
    all.insert(all.end(), part.begin(), part.end());
  return all;
}

//===--- Protobuf encoding of small SentencePiece models ------------------===//

std::string varint(uint64_t value) {
  std::string out;
  do {
    uint8_t byte = value & 0x7f;
    value >>= 7;
    out += static_cast<char>(byte | (value ? 0x80 : 0));
  } while (value);
  return out;
}
std::string varintField(uint32_t number, uint64_t value) {
  return varint(number << 3) + varint(value);
}
std::string bytesField(uint32_t number, const std::string &bytes) {
  return varint(number << 3 | 2) + varint(bytes.size()) + bytes;
}
std::string floatField(uint32_t number, float value) {
  std::string raw(4, '\0');
  std::memcpy(raw.data(), &value, 4);
  return varint(number << 3 | 5) + raw;
}

struct Piece {
  const char *text;
  float score;
  int type; // 1 normal, 2 unknown, 3 control
};

/// ModelProto with `pieces`, trainer_spec `trainer` and, when given,
/// normalizer_spec `normalizer` (both already encoded).
std::string sentencePieceModel(std::initializer_list<Piece> pieces, const std::string &trainer,
                               const std::string *normalizer) {
  std::string model;
  for (const Piece &p : pieces)
    model += bytesField(1, bytesField(1, p.text) + floatField(2, p.score) + varintField(3, p.type));
  model += bytesField(2, trainer);
  if (normalizer)
    model += bytesField(3, *normalizer);
  return model;
}

const std::string kBpe = varintField(3, 2); // trainer_spec.model_type = BPE
#define SPACE "\xE2\x96\x81"                // U+2581

/// <unk> <s> </s> ▁ a b ▁a ab: "▁a" outranks "ab".
std::string smallModel(const std::string *normalizer) {
  return sentencePieceModel({{"<unk>", 0, 2},
                             {"<s>", 0, 3},
                             {"</s>", 0, 3},
                             {SPACE, -1, 1},
                             {"a", -2, 1},
                             {"b", -3, 1},
                             {SPACE "a", -4, 1},
                             {"ab", -5, 1}},
                            kBpe, normalizer);
}

// Llama's normalizer: dummy prefix, spaces kept as they are.
const std::string kLlamaNormalizer = bytesField(1, "identity") + varintField(3, 1) +
                                     varintField(4, 0) + varintField(5, 1);

} // namespace

//===--- SentencePiece -----------------------------------------------------===//

TEST(SentencePieceTokenizer, MergesTheBestScoringPairFirst) {
  std::string dir = tempFolder("spm_small");
  std::string path = writeFile(dir + "/tokenizer.model", smallModel(&kLlamaNormalizer));
  auto tok = loadOrFail(path, modelConfig(8));
  ASSERT_TRUE(tok);
  // "▁ab": "▁a" (-4) beats "ab" (-5), and "▁ab" is no piece.
  EXPECT_EQ(tok->encode("ab", false), (std::vector<int32_t>{6, 5}));
  // "▁b▁ab": a space is a piece of its own where no merge takes it.
  EXPECT_EQ(tok->encode("b ab", false), (std::vector<int32_t>{3, 5, 6, 5}));
  // No byte pieces: an unknown character is <unk>.
  EXPECT_EQ(tok->encode("c", false), (std::vector<int32_t>{3, 0}));
  // Ids from trainer_spec's defaults (unk 0, bos 1, eos 2); BOS first.
  EXPECT_EQ(tok->bosId(), 1);
  EXPECT_EQ(tok->eosId(), 2);
  EXPECT_TRUE(tok->addsBos());
  EXPECT_EQ(tok->encode("a", true), (std::vector<int32_t>{1, 6}));
  // Control pieces in the text are single tokens; the text after one gets
  // the dummy prefix again, and decoding drops it again.
  std::vector<int32_t> ids = tok->encode("a</s>a", false);
  EXPECT_EQ(ids, (std::vector<int32_t>{6, 2, 6}));
  EXPECT_EQ(tok->decode(-1, 6) + tok->decode(6, 2) + tok->decode(2, 6), "a</s>a");
}

TEST(SentencePieceTokenizer, RemovesExtraWhitespaceByDefault) {
  // Without a normalizer_spec the proto's defaults apply, among them
  // remove_extra_whitespaces.
  std::string path =
      writeFile(tempFolder("spm_defaults") + "/tokenizer.model", smallModel(nullptr));
  auto tok = loadOrFail(path, modelConfig(8));
  ASSERT_TRUE(tok);
  EXPECT_EQ(tok->encode("  a   b ", false), tok->encode("a b", false));
  EXPECT_TRUE(tok->encode("   ", false).empty());
}

TEST(SentencePieceTokenizer, SettingsBesideTheModelOverrideIt) {
  std::string dir = tempFolder("spm_settings");
  std::string path = writeFile(dir + "/tokenizer.model", smallModel(&kLlamaNormalizer));
  writeJson(dir + "/tokenizer_config.json",
            llvm::json::Object{{"add_bos_token", false}, {"bos_token", "</s>"}});
  writeJson(dir + "/special_tokens_map.json",
            llvm::json::Object{{"eos_token", llvm::json::Object{{"content", "<s>"}}}});
  auto tok = loadOrFail(path, modelConfig(8));
  ASSERT_TRUE(tok);
  EXPECT_FALSE(tok->addsBos());
  EXPECT_EQ(tok->bosId(), 2);
  EXPECT_EQ(tok->eosId(), 1);

  writeJson(dir + "/tokenizer_config.json", llvm::json::Object{{"bos_token", "<bos>"}});
  std::string error = loadError(path, modelConfig(8));
  EXPECT_NE(error.find("tokenizer_config.json"), std::string::npos) << error;
  EXPECT_NE(error.find("bos_token \"<bos>\""), std::string::npos) << error;
}

TEST(SentencePieceTokenizer, RefusesMalformedAndUnsupportedModels) {
  std::string dir = tempFolder("spm_bad");
  auto errorFor = [&](const std::string &name, const std::string &bytes) {
    return loadError(writeFile(dir + "/" + name + ".model", bytes), modelConfig(100));
  };
  std::string good = smallModel(&kLlamaNormalizer);

  std::string cut = errorFor("cut", good.substr(0, 5));
  EXPECT_NE(cut.find("cut.model"), std::string::npos) << cut;
  EXPECT_NE(cut.find("truncated"), std::string::npos) << cut;

  std::string none = errorFor("none", bytesField(2, kBpe));
  EXPECT_NE(none.find("no pieces"), std::string::npos) << none;

  std::string word = errorFor("word", sentencePieceModel({{"a", 0, 1}},
                                                         varintField(3, 3), nullptr));
  EXPECT_NE(word.find("trainer_spec.model_type is 3"), std::string::npos) << word;
  EXPECT_NE(word.find("UNIGRAM (1, T5's) and BPE (2, Llama's)"), std::string::npos) << word;

  // A BPE model's normalizer must be the identity; a Unigram model's
  // charsmap must hold together.
  std::string nfkc = bytesField(1, "nmt_nfkc") + bytesField(2, std::string("\x01\x02", 2));
  std::string charsmap = errorFor("charsmap", sentencePieceModel({{"a", 0, 1}}, kBpe, &nfkc));
  EXPECT_NE(charsmap.find("precompiled_charsmap"), std::string::npos) << charsmap;
  EXPECT_NE(charsmap.find("nmt_nfkc"), std::string::npos) << charsmap;
  std::string unigramCharsmap =
      errorFor("unigram_charsmap",
               sentencePieceModel({{"<unk>", 0, 2}, {"a", 0, 1}},
                                  varintField(3, 1) + varintField(40, 0) + varintField(41, 0) +
                                      varintField(42, 0),
                                  &nfkc));
  EXPECT_NE(unigramCharsmap.find("unigram_charsmap.model: the precompiled charsmap has 2 bytes"),
            std::string::npos)
      << unigramCharsmap;

  std::string type = errorFor("type", sentencePieceModel({{"a", 0, 9}}, kBpe, nullptr));
  EXPECT_NE(type.find("pieces[0] \"a\" has type 9"), std::string::npos) << type;

  std::string suffix = errorFor("suffix", sentencePieceModel({{"a", 0, 1}},
                                                             kBpe + varintField(24, 1), nullptr));
  EXPECT_NE(suffix.find("treat_whitespace_as_suffix"), std::string::npos) << suffix;

  std::string group = errorFor("group", std::string("\x0b", 1)); // wire type 3
  EXPECT_NE(group.find("wire type 3"), std::string::npos) << group;
}

//===--- Byte-level BPE ----------------------------------------------------===//

std::vector<std::string> wordsOf(llvm::StringRef text, WordSplit split) {
  std::vector<std::string> out;
  for (llvm::StringRef w : splitWords(text, split))
    out.push_back(w.str());
  return out;
}
using Words = std::vector<std::string>;

TEST(WordSplit, Gpt2SplitsAsTheRegexDoes) {
  auto words = [](llvm::StringRef text) { return wordsOf(text, WordSplit::Gpt2); };
  EXPECT_EQ(words("Hello world"), (Words{"Hello", " world"}));
  // \s+(?!\S) leaves the last space to lead the next word.
  EXPECT_EQ(words("  Hello"), (Words{" ", " Hello"}));
  EXPECT_EQ(words("a\n\nb"), (Words{"a", "\n", "\n", "b"}));
  EXPECT_EQ(words("x  \n"), (Words{"x", "  \n"}));
  // Contractions are lower case only; a space joins letters, digits or
  // punctuation but not another space.
  EXPECT_EQ(words("I'm 'RE 42x"), (Words{"I", "'m", " '", "RE", " 42", "x"}));
  // \p{L} and \p{N} beyond ASCII, and an invalid byte as punctuation.
  EXPECT_EQ(words("caf\xC3\xA9 \xD9\xA3\xFF!"),
            (Words{"caf\xC3\xA9", " \xD9\xA3", "\xFF!"}));
}

TEST(WordSplit, FalconSplitsPunctuationThenGpt2ThenDigitTriples) {
  auto words = [](llvm::StringRef text) { return wordsOf(text, WordSplit::Falcon); };
  // The apostrophe is punctuation before GPT-2's contractions see it; a
  // space stays out of a punctuation run.
  EXPECT_EQ(words("don't 12345!!x"),
            (Words{"don", "'", "t", " ", "123", "45", "!!", "x"}));
  // ASCII symbols count as punctuation; Unicode's symbols (the emoji) do
  // not, its punctuation (the inverted question mark) does.
  EXPECT_EQ(words("$5 \xF0\x9F\xA6\x99.cpp \xC2\xBFs\xC3\xAD?"),
            (Words{"$", "5", " \xF0\x9F\xA6\x99", ".", "cpp", " ", "\xC2\xBF", "s\xC3\xAD", "?"}));
  // Threes from the left, inside each GPT-2 word.
  EXPECT_EQ(words("1234567 12"), (Words{"123", "456", "7", " 12"}));
}

TEST(WordSplit, Llama3SplitsAsItsRegexDoes) {
  auto words = [](llvm::StringRef text) { return wordsOf(text, WordSplit::Llama3); };
  // Contractions in any case; one character that is no letter, digit or
  // newline leads a run of letters (a tab, a bracket), a space leads
  // punctuation, and digits go in threes.
  EXPECT_EQ(words("I'M a(b) (x\tyz 12345"),
            (Words{"I", "'M", " a", "(b", ")", " (", "x", "\tyz", " ", "123", "45"}));
  // Whitespace up to the last newline is one word; newlines stay with the
  // punctuation before them.
  EXPECT_EQ(words("a  \n\n  b!\n\nc"), (Words{"a", "  \n\n", " ", " b", "!\n\n", "c"}));
  EXPECT_EQ(words("x   "), (Words{"x", "   "}));
  EXPECT_EQ(words("\xC3\x84pfel \xD9\xA3\xD9\xA4"), (Words{"\xC3\x84pfel", " ", "\xD9\xA3\xD9\xA4"}));
}

TEST(WordSplit, Qwen2TakesOneDigitAWord) {
  EXPECT_EQ(wordsOf("ab 123", WordSplit::Qwen2), (Words{"ab", " ", "1", "2", "3"}));
}

TEST(WordSplit, SmollmCutsAroundEachDigitThenGpt2) {
  EXPECT_EQ(wordsOf("ab 12x's", WordSplit::Smollm), (Words{"ab", " ", "1", "2", "x", "'s"}));
}

TEST(AddedTokenMatcher, SpecialFirstThenLeftmostLongest) {
  AddedTokenMatcher matcher({{10, "<a>", true},
                             {11, "<ab>", true},
                             {12, "b<a", false},
                             {13, "<m>", true, /*lstrip=*/true, /*rstrip=*/true},
                             {14, "xy", false},
                             {15, "xyz", false}});
  auto split = [&](llvm::StringRef text) {
    std::vector<std::pair<std::string, int32_t>> out;
    for (const TextFragment &f : matcher.split(text))
      out.emplace_back(f.text.str(), f.token);
    return out;
  };
  using Fragments = std::vector<std::pair<std::string, int32_t>>;
  EXPECT_EQ(split("z<ab>"), (Fragments{{"z", -1}, {"<ab>", 11}}));
  // The special "<a>" is cut before the non-special "b<a" is looked for.
  EXPECT_EQ(split("b<a>"), (Fragments{{"b", -1}, {"<a>", 10}}));
  EXPECT_EQ(split("xyzxy"), (Fragments{{"xyz", 15}, {"xy", 14}}));
  // lstrip / rstrip take the whitespace around the token into it.
  EXPECT_EQ(split("a \t<m>  b"), (Fragments{{"a", -1}, {" \t<m>  ", 13}, {"b", -1}}));
  EXPECT_TRUE(matcher.contains(15));
  EXPECT_FALSE(matcher.contains(9));
  EXPECT_TRUE(split("").empty());
}

TEST(ByteLevelBpeTokenizer, SpecialTokensComeFromTheConfigWithoutSettingsFiles) {
  TFM_SHARED_OR_SKIP(encoder, "models/gpt2-tokenizer/encoder.json");
  auto tok = loadOrFail(encoder, modelConfig(50257, 50256, 50256));
  ASSERT_TRUE(tok);
  EXPECT_EQ(tok->bosId(), 50256);
  EXPECT_EQ(tok->eosId(), 50256);
  EXPECT_FALSE(tok->addsBos());
  // <|endoftext|> in the text is the one token, as in Hugging Face.
  EXPECT_EQ(tok->encode("a<|endoftext|>b", false),
            concat({tok->encode("a", false), {50256}, tok->encode("b", false)}));
  EXPECT_EQ(tok->decode(-1, 50256), "<|endoftext|>");

  std::string foreign = loadError(encoder, modelConfig(1000));
  EXPECT_NE(foreign.find("encoder.json"), std::string::npos) << foreign;
  EXPECT_NE(foreign.find("50257 tokens"), std::string::npos) << foreign;
  EXPECT_NE(foreign.find("1000"), std::string::npos) << foreign;
}

TEST(ByteLevelBpeTokenizer, HuggingFaceFolderSettingsWinOverTheConfig) {
  TFM_SHARED_OR_SKIP(encoder, "models/gpt2-tokenizer/encoder.json");
  TFM_SHARED_OR_SKIP(bpe, "models/gpt2-tokenizer/vocab.bpe");
  std::string dir = tempFolder("hf_gpt2");
  writeFile(dir + "/vocab.json", readFile(encoder));
  writeFile(dir + "/merges.txt", readFile(bpe));
  // A token added past the vocabulary, as chat models do; the model's
  // embedding is padded beyond both.
  writeJson(dir + "/tokenizer_config.json",
            llvm::json::Object{
                {"add_bos_token", true},
                {"bos_token", llvm::json::Object{{"content", "<|endoftext|>"}}},
                {"eos_token", "<|im_end|>"},
                {"added_tokens_decoder",
                 llvm::json::Object{
                     {"50256", llvm::json::Object{{"content", "<|endoftext|>"},
                                                  {"special", true}}},
                     {"50257", llvm::json::Object{{"content", "<|im_end|>"},
                                                  {"special", true}}}}}});
  llvm::Expected<std::string> file = findTokenizerFile(dir);
  ASSERT_TRUE(bool(file)) << llvm::toString(file.takeError());
  EXPECT_EQ(*file, dir + "/vocab.json");
  auto tok = loadOrFail(*file, modelConfig(50304, 1, 2));
  ASSERT_TRUE(tok);
  EXPECT_EQ(tok->vocabSize(), 50258);
  EXPECT_EQ(tok->bosId(), 50256);
  EXPECT_EQ(tok->eosId(), 50257);
  EXPECT_TRUE(tok->addsBos());
  EXPECT_EQ(tok->encode("Hi<|im_end|>", true),
            concat({{50256}, tok->encode("Hi", false), {50257}}));
  EXPECT_EQ(tok->decode(50256, 50257), "<|im_end|>");

  writeJson(dir + "/tokenizer_config.json",
            llvm::json::Object{{"added_tokens_decoder",
                                llvm::json::Object{{"50300", llvm::json::Object{
                                                                 {"content", "<|far|>"}}}}}});
  std::string far = loadError(*file, modelConfig(50304));
  EXPECT_NE(far.find("tokenizer_config.json"), std::string::npos) << far;
  EXPECT_NE(far.find("\"<|far|>\" has id 50300, past the end"), std::string::npos) << far;
}

TEST(ByteLevelBpeTokenizer, TokenizerJsonTemplatePutsBosFirst) {
  TFM_SHARED_OR_SKIP(encoder, "models/gpt2-tokenizer/encoder.json");
  TFM_SHARED_OR_SKIP(bpe, "models/gpt2-tokenizer/vocab.bpe");
  llvm::json::Object json = gpt2TokenizerJson(encoder, bpe, false);
  json["post_processor"] = llvm::json::Object{
      {"type", "TemplateProcessing"},
      {"single", llvm::json::Array{
                     llvm::json::Object{{"SpecialToken",
                                         llvm::json::Object{{"id", "<|endoftext|>"}}}},
                     llvm::json::Object{{"Sequence", llvm::json::Object{{"id", "A"}}}}}},
      {"special_tokens",
       llvm::json::Object{{"<|endoftext|>", llvm::json::Object{{"ids", llvm::json::Array{50256}}}}}}};
  json["normalizer"] = llvm::json::Object{{"type", "NFC"}};
  std::string path = writeJson(tempFolder("template") + "/tokenizer.json", std::move(json));
  auto tok = loadOrFail(path, modelConfig(50257));
  ASSERT_TRUE(tok);
  EXPECT_TRUE(tok->addsBos());
  EXPECT_EQ(tok->bosId(), 50256);
  // NFC composes e + U+0301 into U+00E9 before the split.
  EXPECT_EQ(tok->encode("caf" "e\xCC\x81", false), tok->encode("caf\xC3\xA9", false));
}

TEST(ByteLevelBpeTokenizer, TokenizerJsonFramesTheTextAsRobertaDoes) {
  TFM_SHARED_OR_SKIP(encoder, "models/gpt2-tokenizer/encoder.json");
  TFM_SHARED_OR_SKIP(bpe, "models/gpt2-tokenizer/vocab.bpe");
  std::string dir = tempFolder("roberta");
  auto special = [](const char *id) {
    return llvm::json::Object{{"SpecialToken", llvm::json::Object{{"id", id}}}};
  };
  llvm::json::Object ids{
      {"<|endoftext|>", llvm::json::Object{{"ids", llvm::json::Array{50256}}}}};
  // RoBERTa's post-processor, and the same as a template: <s> A </s>.
  for (llvm::json::Object post :
       {llvm::json::Object{{"type", "RobertaProcessing"},
                           {"cls", llvm::json::Array{"<|endoftext|>", 50256}},
                           {"sep", llvm::json::Array{"<|endoftext|>", 50256}}},
        llvm::json::Object{
            {"type", "TemplateProcessing"},
            {"single",
             llvm::json::Array{special("<|endoftext|>"),
                               llvm::json::Object{{"Sequence", llvm::json::Object{{"id", "A"}}}},
                               special("<|endoftext|>")}},
            {"special_tokens", llvm::json::Object(ids)}}}) {
    llvm::json::Object json = gpt2TokenizerJson(encoder, bpe, false);
    json["post_processor"] = std::move(post);
    auto tok = loadOrFail(writeJson(dir + "/tokenizer.json", std::move(json)), modelConfig(50257));
    ASSERT_TRUE(tok);
    EXPECT_TRUE(tok->addsBos());
    EXPECT_EQ(tok->encode("Hi", true), concat({{50256}, tok->encode("Hi", false), {50256}}));
  }
  // "$A </s>" alone would never be framed: refused by name.
  llvm::json::Object json = gpt2TokenizerJson(encoder, bpe, false);
  json["post_processor"] = llvm::json::Object{
      {"type", "TemplateProcessing"},
      {"single",
       llvm::json::Array{llvm::json::Object{{"Sequence", llvm::json::Object{{"id", "A"}}}},
                         special("<|endoftext|>")}},
      {"special_tokens", std::move(ids)}};
  std::string error = loadError(writeJson(dir + "/tokenizer.json", std::move(json)),
                                modelConfig(50257));
  EXPECT_NE(error.find("post_processor.single is not supported"), std::string::npos) << error;
}

TEST(WordPieceTokenizer, VocabTxtFolderFollowsDoLowerCase) {
  std::string dir = tempFolder("bert_folder");
  writeFile(dir + "/vocab.txt", "[PAD]\n[UNK]\n[CLS]\n[SEP]\n[MASK]\nhello\nHello\n##s\n");
  llvm::Expected<std::string> file = findTokenizerFile(dir);
  ASSERT_TRUE(bool(file)) << llvm::toString(file.takeError());
  EXPECT_EQ(*file, dir + "/vocab.txt");
  // BertTokenizer's default folds case.
  auto uncased = loadOrFail(*file, modelConfig(8));
  ASSERT_TRUE(uncased);
  EXPECT_EQ(uncased->encode("Hellos", true), (std::vector<int32_t>{2, 5, 7, 3}));
  writeJson(dir + "/tokenizer_config.json", llvm::json::Object{{"do_lower_case", false}});
  auto cased = loadOrFail(*file, modelConfig(8));
  ASSERT_TRUE(cased);
  EXPECT_EQ(cased->encode("Hellos hello", false), (std::vector<int32_t>{6, 7, 5}));
}

TEST(ByteLevelBpeTokenizer, RefusesUnsupportedTokenizerJson) {
  TFM_SHARED_OR_SKIP(encoder, "models/gpt2-tokenizer/encoder.json");
  TFM_SHARED_OR_SKIP(bpe, "models/gpt2-tokenizer/vocab.bpe");
  const llvm::json::Object base = gpt2TokenizerJson(encoder, bpe, false);
  std::string dir = tempFolder("bad_json");
  auto errorWith = [&](const char *name, auto change) {
    llvm::json::Object json = base;
    change(json);
    return loadError(writeJson(dir + "/" + name, std::move(json)), modelConfig(50257));
  };
  auto expectMentions = [](const std::string &error, std::initializer_list<const char *> parts) {
    for (const char *part : parts)
      EXPECT_NE(error.find(part), std::string::npos) << error;
  };
  // Only tokenizer.json is read as one; another .json is a vocab.json.
  expectMentions(errorWith("tokenizer.json",
                           [](auto &j) {
                             j["pre_tokenizer"] = llvm::json::Object{{"type", "Metaspace"}};
                           }),
                 {"tokenizer.json", "pre_tokenizer \"Metaspace\""});
  expectMentions(errorWith("tokenizer.json",
                           [](auto &j) {
                             j["normalizer"] = llvm::json::Object{{"type", "Lowercase"}};
                           }),
                 {"normalizer \"Lowercase\""});
  // A Split by a regex tfm does not match by hand, quoted (escaped, cut).
  expectMentions(
      errorWith("tokenizer.json",
                [](auto &j) {
                  j["pre_tokenizer"] = llvm::json::Object{
                      {"type", "Sequence"},
                      {"pretokenizers",
                       llvm::json::Array{
                           llvm::json::Object{{"type", "Split"},
                                              {"pattern", llvm::json::Object{{"Regex", "\\d+\x1b"}}},
                                              {"behavior", "Isolated"},
                                              {"invert", false}},
                           llvm::json::Object{{"type", "ByteLevel"}, {"use_regex", false}}}}};
                }),
      {"pre_tokenizer's Split regex \"\\\\d+\\x1b\"", "Llama 3's and Qwen 2's"});
  // byte_fallback is SentencePiece's spelling, which needs its normalizer.
  expectMentions(errorWith("tokenizer.json",
                           [](auto &j) { (*j.getObject("model"))["byte_fallback"] = true; }),
                 {"model.byte_fallback is true but the normalizer is not a Replace"});
  expectMentions(errorWith("tokenizer.json",
                           [](auto &j) { (*j.getObject("model"))["type"] = "WordLevel"; }),
                 {"model.type is \"WordLevel\"", "BPE, WordPiece and Unigram"});
  // A WordPiece model needs BERT's word split.
  expectMentions(errorWith("tokenizer.json",
                           [](auto &j) { (*j.getObject("model"))["type"] = "WordPiece"; }),
                 {"pre_tokenizer \"ByteLevel\" is not supported beside a WordPiece model"});
  expectMentions(errorWith("tokenizer.json",
                           [](auto &j) {
                             (*j.getObject("model")->getArray("merges"))[3] = "a b c";
                           }),
                 {"model.merges[3]", "\"a b c\""});
  expectMentions(errorWith("tokenizer.json",
                           [](auto &j) {
                             (*j.getObject("model")->getArray("merges"))[0] = "zzqq xx";
                           }),
                 {"merge 0", "\"zzqq\"", "not in the vocabulary"});
  expectMentions(errorWith("tokenizer.json",
                           [](auto &j) {
                             (*(*j.getArray("added_tokens"))[0].getAsObject())["single_word"] =
                                 true;
                           }),
                 {"added_tokens[0]", "single_word"});
  expectMentions(errorWith("tokenizer.json",
                           [](auto &j) {
                             (*j.getObject("model")->getObject("vocab"))["!"] = 7;
                           }),
                 {"model.vocab", "id 7"});
  expectMentions(loadError(writeFile(dir + "/tokenizer.json", "{\"model\": "), modelConfig(10)),
                 {"tokenizer.json", "not valid JSON"});
}

TEST(ByteLevelBpeTokenizer, RefusesBrokenVocabAndMerges) {
  std::string dir = tempFolder("bad_vocab");
  writeJson(dir + "/vocab.json", llvm::json::Object{{"a", 0}, {"b", 2}});
  writeFile(dir + "/merges.txt", "#version: 0.2\na b\n");
  std::string gap = loadError(dir + "/vocab.json", modelConfig(10));
  EXPECT_NE(gap.find("vocab.json"), std::string::npos) << gap;
  EXPECT_NE(gap.find("no token has id 1"), std::string::npos) << gap;

  writeJson(dir + "/vocab.json", llvm::json::Object{{"a", 0}, {"b", 1}});
  writeFile(dir + "/merges.txt", "#version: 0.2\nab\n");
  std::string merge = loadError(dir + "/vocab.json", modelConfig(10));
  EXPECT_NE(merge.find("merges.txt:2"), std::string::npos) << merge;

  writeFile(dir + "/merges.txt", "a b\n");
  std::string result = loadError(dir + "/vocab.json", modelConfig(10));
  EXPECT_NE(result.find("merge 0 (\"a b\") uses \"ab\", which is not in the vocabulary"),
            std::string::npos)
      << result;

  std::string lonely = tempFolder("lonely_vocab");
  writeJson(lonely + "/vocab.json", llvm::json::Object{{"a", 0}});
  std::string noMerges = loadError(lonely + "/vocab.json", modelConfig(10));
  EXPECT_NE(noMerges.find("merges.txt or vocab.bpe"), std::string::npos) << noMerges;
}

TEST(ByteLevelBpeTokenizer, DropsBytesTheVocabularyLacks) {
  // As Hugging Face and llama.cpp do: Falcon's vocabulary lacks a few bytes.
  std::string dir = tempFolder("partial_bytes");
  writeJson(dir + "/vocab.json", llvm::json::Object{{"a", 0}, {"b", 1}, {"ab", 2}});
  writeFile(dir + "/merges.txt", "#version: 0.2\na b\n");
  auto tok = loadOrFail(dir + "/vocab.json", modelConfig(3));
  ASSERT_TRUE(tok);
  EXPECT_EQ(tok->encode("abc\x03" "b", /*addBos=*/false), (std::vector<int32_t>{2, 1}));
}

//===--- GGUF --------------------------------------------------------------===//

namespace {

/// A vocabulary GGUF: metadata only, no tensors.
std::string writeGguf(const std::string &name, const GgufWriter &writer) {
  return writeTensorFile(tempFolder(name) + "/vocab.gguf", writer,
                         [](size_t, llvm::raw_ostream &) {});
}

} // namespace

TEST(GgufTokenizer, ReadsASentencePieceVocabulary) {
  GgufWriter w;
  w.addString("tokenizer.ggml.model", "llama");
  w.addStringArray("tokenizer.ggml.tokens",
                   {"<unk>", "<s>", "</s>", SPACE, "a", "b", SPACE "a", "ab"});
  w.addF32Array("tokenizer.ggml.scores", {0, 0, 0, -1, -2, -3, -4, -5});
  w.addI32Array("tokenizer.ggml.token_type", {2, 3, 3, 1, 1, 1, 1, 1});
  w.addU32("tokenizer.ggml.unknown_token_id", 0);
  w.addU32("tokenizer.ggml.eos_token_id", 2);
  w.addBool("tokenizer.ggml.add_space_prefix", false);
  // No bos_token_id key: the model config's BOS applies.
  auto tok = loadOrFail(writeGguf("gguf_spm", w), modelConfig(8, 1, 7));
  ASSERT_TRUE(tok);
  EXPECT_EQ(tok->bosId(), 1);
  EXPECT_EQ(tok->eosId(), 2);
  EXPECT_TRUE(tok->addsBos());
  // Without the space prefix "ab" is "a" + "b" merged, not "▁a" + "b".
  EXPECT_EQ(tok->encode("ab", false), std::vector<int32_t>{7});
}

// As llama.cpp ends generation: the EOT a file names, and tokens of the
// end-of-turn texts it names none for (Llama 3's <|eom_id|>, Phi-3's
// <|end|>); EOS is apart.
TEST(GgufTokenizer, EndOfTurnTokensAsLlamaCppReadsThem) {
  GgufWriter w;
  w.addString("tokenizer.ggml.model", "llama");
  w.addStringArray("tokenizer.ggml.tokens",
                   {"<unk>", "<s>", "</s>", "<|eom_id|>", "a", "<turn>", "<|end|>", "ab"});
  w.addF32Array("tokenizer.ggml.scores", {0, 0, 0, 0, -2, 0, 0, -5});
  w.addI32Array("tokenizer.ggml.token_type", {2, 3, 3, 3, 1, 3, 3, 1});
  w.addU32("tokenizer.ggml.unknown_token_id", 0);
  w.addU32("tokenizer.ggml.eos_token_id", 2);
  w.addU32("tokenizer.ggml.eot_token_id", 5);
  auto tok = loadOrFail(writeGguf("gguf_eot", w), modelConfig(8, 1, 2));
  ASSERT_TRUE(tok);
  EXPECT_EQ(tok->eosId(), 2);
  EXPECT_EQ(tok->endOfTurnIds(), (std::vector<int32_t>{3, 5, 6}));
}

TEST(GgufTokenizer, RefusesUnsupportedOrInconsistentVocabularies) {
  auto errorFor = [](const std::string &name, auto fill) {
    GgufWriter w;
    fill(w);
    return loadError(writeGguf(name, w), modelConfig(100));
  };
  std::string rwkv = errorFor("gguf_rwkv", [](GgufWriter &w) {
    w.addString("tokenizer.ggml.model", "rwkv");
  });
  EXPECT_NE(rwkv.find("vocab.gguf"), std::string::npos) << rwkv;
  EXPECT_NE(rwkv.find("tokenizer.ggml.model is \"rwkv\""), std::string::npos) << rwkv;
  EXPECT_NE(rwkv.find("\"t5\" (SentencePiece Unigram) and \"bert\" (WordPiece)"),
            std::string::npos)
      << rwkv;

  // T5's Unigram: an unknown piece to fall back on, a charsmap that holds together.
  auto unigram = [](GgufWriter &w) {
    w.addString("tokenizer.ggml.model", "t5");
    w.addStringArray("tokenizer.ggml.tokens", {"<pad>", "</s>", "<unk>", "\xE2\x96\x81" "a"});
    w.addF32Array("tokenizer.ggml.scores", {0, 0, 0, -1});
    w.addI32Array("tokenizer.ggml.token_type", {3, 3, 2, 1});
  };
  std::string noUnknown = errorFor("gguf_t5_no_unknown", unigram);
  EXPECT_NE(noUnknown.find("vocab.gguf: the vocabulary has neither byte-fallback pieces nor an "
                           "unknown piece"),
            std::string::npos)
      << noUnknown;
  std::string charsmap = errorFor("gguf_t5_charsmap", [&](GgufWriter &w) {
    unigram(w);
    w.addU32("tokenizer.ggml.unknown_token_id", 2);
    w.addI32Array("tokenizer.ggml.precompiled_charsmap", {1, 2});
  });
  EXPECT_NE(charsmap.find("vocab.gguf: the precompiled charsmap has 2 bytes"), std::string::npos)
      << charsmap;

  std::string pre = errorFor("gguf_pre", [](GgufWriter &w) {
    w.addString("tokenizer.ggml.model", "gpt2");
    w.addStringArray("tokenizer.ggml.tokens", {"a"});
    w.addString("tokenizer.ggml.pre", "deepseek-coder");
  });
  EXPECT_NE(pre.find("tokenizer.ggml.pre is \"deepseek-coder\"; supported: \"gpt-2\""),
            std::string::npos)
      << pre;

  std::string types = errorFor("gguf_types", [](GgufWriter &w) {
    w.addString("tokenizer.ggml.model", "llama");
    w.addStringArray("tokenizer.ggml.tokens", {"a", "b"});
    w.addI32Array("tokenizer.ggml.token_type", {1});
  });
  EXPECT_NE(types.find("tokenizer.ggml.token_type has 1 entries"), std::string::npos) << types;

  std::string scores = errorFor("gguf_scores", [](GgufWriter &w) {
    w.addString("tokenizer.ggml.model", "llama");
    w.addStringArray("tokenizer.ggml.tokens", {"a", "b"});
  });
  EXPECT_NE(scores.find("tokenizer.ggml.scores"), std::string::npos) << scores;

  std::string merges = errorFor("gguf_merges", [](GgufWriter &w) {
    w.addString("tokenizer.ggml.model", "gpt2");
    w.addStringArray("tokenizer.ggml.tokens", {"a"});
    w.addStringArray("tokenizer.ggml.merges", {"a"});
  });
  EXPECT_NE(merges.find("tokenizer.ggml.merges[0] is \"a\""), std::string::npos) << merges;
}

//===--- Finding the file --------------------------------------------------===//

TEST(TokenizerFactory, FindsTheTokenizerOfAFolderAndNamesWhatIsMissing) {
  std::string dir = tempFolder("find");
  llvm::Expected<std::string> none = findTokenizerFile(dir);
  ASSERT_FALSE(bool(none));
  std::string error = llvm::toString(none.takeError());
  EXPECT_NE(error.find(dir), std::string::npos) << error;
  EXPECT_NE(error.find("tokenizer.json"), std::string::npos) << error;

  writeFile(dir + "/vocab.json", "{}");
  EXPECT_EQ(llvm::cantFail(findTokenizerFile(dir)), dir + "/vocab.json");
  writeFile(dir + "/tokenizer.json", "{}");
  EXPECT_EQ(llvm::cantFail(findTokenizerFile(dir)), dir + "/tokenizer.json");
  // tokenizer.json beside tokenizer.model is Hugging Face's conversion of
  // the SentencePiece model.
  writeFile(dir + "/tokenizer.model", "");
  EXPECT_EQ(llvm::cantFail(findTokenizerFile(dir)), dir + "/tokenizer.model");
  // T5's and CamemBERT's SentencePiece models, beside their tokenizer.json.
  for (const char *model : {"spiece.model", "sentencepiece.bpe.model"}) {
    std::string other = tempFolder(model);
    writeFile(other + "/tokenizer.json", "{}");
    writeFile(other + "/" + model, "");
    EXPECT_EQ(llvm::cantFail(findTokenizerFile(other)), other + "/" + model);
  }
  // Marian's pair of models is refused by name, not read as a BPE vocab.json.
  std::string marian = tempFolder("marian");
  writeFile(marian + "/vocab.json", "{}");
  writeFile(marian + "/source.spm", "");
  llvm::Expected<std::string> refused = findTokenizerFile(marian);
  ASSERT_FALSE(bool(refused));
  std::string why = llvm::toString(refused.takeError());
  EXPECT_NE(why.find("Marian's tokenizer (source.spm"), std::string::npos) << why;

  std::string unknown = loadError(writeFile(dir + "/tok.txt", "x"), modelConfig(10));
  EXPECT_NE(unknown.find("tok.txt: unknown tokenizer format"), std::string::npos) << unknown;
  std::string missing = loadError(dir + "/absent.model", modelConfig(10));
  EXPECT_NE(missing.find("absent.model"), std::string::npos) << missing;
}

//===--- Gemma's tokenizer.json: SentencePiece's spelling ------------------===//

// No golden of Gemma's ids ships; these are the rules of its tokenizer.json
// (a Replace of " " with "▁", BPE with byte_fallback, no dummy prefix,
// <bos> put first by its post_processor), checked on the real file.
class GemmaTokenizerJson : public ::testing::Test {
protected:
  void SetUp() override {
    std::string file = sharedPath("models/hf-tokenizers/gemma3/tokenizer.json");
    if (file.empty())
      GTEST_SKIP() << "models/hf-tokenizers/gemma3 not found under TFM_SHARED_DIR";
    auto loaded = loadStandaloneTokenizer(file);
    ASSERT_TRUE(bool(loaded)) << llvm::toString(loaded.takeError());
    tok = std::move(*loaded);
  }
  std::vector<std::string> pieces(const std::string &text) const {
    std::vector<std::string> out;
    for (int32_t id : tok->encode(text, false))
      out.push_back(tok->decode(-1, id));
    return out;
  }
  std::unique_ptr<Tokenizer> tok;
};

TEST_F(GemmaTokenizerJson, SpacesAreSpelledAndKeptWithoutADummyPrefix) {
  // Whole words with their leading space are single tokens; the text's
  // start gets no space.
  EXPECT_EQ(pieces("Hello world"), (Words{"Hello", " world"}));
  EXPECT_EQ(pieces(" the"), (Words{" the"}));
  // A "▁" typed is a space, as the normalizer makes it.
  EXPECT_EQ(tok->encode("a\xE2\x96\x81" "b", false), tok->encode("a b", false));
  // A run of spaces is one token of its own.
  EXPECT_EQ(pieces("a    b").size(), 3u);
}

TEST_F(GemmaTokenizerJson, ACharacterWithoutATokenFallsBackToItsBytes) {
  // U+F0000 (private use) has no token: four <0xXX> tokens, a byte each.
  EXPECT_EQ(pieces("\xF3\xB0\x80\x80"), (Words{"\xF3", "\xB0", "\x80", "\x80"}));
  std::string text = "x\xF3\xB0\x80\x80y \xF0\x9F\xA6\x99 \xEE\x80\x80";
  std::string decoded;
  for (int32_t id : tok->encode(text, false))
    decoded += tok->decode(-1, id);
  EXPECT_EQ(decoded, text);
}

TEST_F(GemmaTokenizerJson, TurnMarkersAndBosAreWholeTokens) {
  std::vector<int32_t> ids = tok->encode("<start_of_turn>user\nHi<end_of_turn>", true);
  ASSERT_GE(ids.size(), 4u);
  EXPECT_EQ(ids[0], tok->bosId());
  EXPECT_EQ(tok->decode(-1, ids[0]), "<bos>");
  EXPECT_EQ(tok->decode(-1, ids[1]), "<start_of_turn>");
  EXPECT_EQ(tok->decode(-1, ids.back()), "<end_of_turn>");
}

//===--- tokenizer.json with a Unigram model ------------------------------===//

namespace {

/// A Unigram tokenizer.json as Hugging Face converts a SentencePiece model,
/// with `normalizer` in place of the converted one.
std::string unigramJson(const std::string &name, llvm::json::Value normalizer) {
  llvm::json::Object model{
      {"type", "Unigram"},
      {"unk_id", 0},
      {"vocab", llvm::json::Array{llvm::json::Array{"<unk>", 0.0},
                                  llvm::json::Array{"\xe2\x96\x81" "ab", -1.0},
                                  llvm::json::Array{"\xe2\x96\x81" "a", -2.0},
                                  llvm::json::Array{"b", -3.0}}}};
  llvm::json::Object root{
      {"model", std::move(model)},
      {"normalizer", std::move(normalizer)},
      {"pre_tokenizer",
       llvm::json::Object{{"type", "Metaspace"}, {"replacement", "\xe2\x96\x81"},
                          {"prepend_scheme", "always"}}}};
  return writeJson(tempFolder(name) + "/tokenizer.json", std::move(root));
}

} // namespace

TEST(TokenizerJson, UnigramEncodesItsBestSegmentation) {
  llvm::json::Array steps{
      llvm::json::Object{{"type", "Strip"}, {"left", false}, {"right", true}},
      llvm::json::Object{{"type", "Replace"},
                         {"pattern", llvm::json::Object{{"Regex", " {2,}"}}},
                         {"content", "\xe2\x96\x81"}}};
  auto loaded = loadStandaloneTokenizer(
      unigramJson("unigram", llvm::json::Object{{"type", "Sequence"},
                                                {"normalizers", std::move(steps)}}));
  ASSERT_TRUE(bool(loaded)) << llvm::toString(loaded.takeError());
  // "▁ab" (-1) beats "▁a" + "b" (-5); the extra spaces are removed first,
  // and the "▁" before the last "b" has no piece: unknown.
  EXPECT_EQ((*loaded)->encode("ab  a b ", false), (std::vector<int32_t>{1, 2, 0, 3}));
}

TEST(TokenizerJson, UnigramRefusesANormalizerItDoesNotModel) {
  std::string error = loadError(
      unigramJson("unigram_lowercase", llvm::json::Object{{"type", "Lowercase"}}),
      modelConfig(10));
  EXPECT_NE(error.find("normalizer step \"Lowercase\""), std::string::npos) << error;
}
