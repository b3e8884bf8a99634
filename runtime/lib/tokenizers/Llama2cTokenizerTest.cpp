//===- Llama2cTokenizerTest.cpp - llama2.c tokenizer against real data ---===//
#include "testing/SharedData.h"
#include "testing/TempFiles.h"

#include "tfm/runtime/Llama2cTokenizer.h"

#include "llvm/ADT/StringRef.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/JSON.h"

#include <cstring>

using namespace tfm;
using namespace tfm::rt;
using namespace tfm::rt::testing;

namespace {

std::string loadError(const std::string &path, int64_t vocab) {
  auto tok = Llama2cTokenizer::load(path, vocab);
  if (tok)
    return "";
  return llvm::toString(tok.takeError());
}

template <typename T> void append(std::string &out, T value) {
  out.append(reinterpret_cast<const char *>(&value), sizeof value);
}

} // namespace

// The goldens hold, per prompt, llama2.c's ids (BOS, prompt, generated) and
// its printed text: our encoding must be their prefix and our decoding of
// all ids must print the same text.
TEST(Llama2cTokenizer, MatchesLlama2cOnAidreamsGoldens) {
  TFM_SHARED_OR_SKIP(tokPath, "models/aidreams260k/tokenizer.bin");
  TFM_SHARED_OR_SKIP(goldenPath, "goldens/aidreams260k-greedy.jsonl");
  auto tok = Llama2cTokenizer::load(tokPath, 512);
  ASSERT_TRUE(bool(tok)) << llvm::toString(tok.takeError());

  std::string text = readFile(goldenPath);
  llvm::SmallVector<llvm::StringRef> lines;
  llvm::StringRef(text).trim().split(lines, '\n');
  ASSERT_FALSE(lines.empty());
  for (llvm::StringRef line : lines) {
    auto parsed = llvm::json::parse(line);
    ASSERT_TRUE(bool(parsed)) << llvm::toString(parsed.takeError());
    const llvm::json::Object &o = *parsed->getAsObject();
    std::string prompt = o.getString("prompt")->str();
    std::vector<int32_t> golden;
    for (const llvm::json::Value &v : *o.getArray("ids"))
      golden.push_back(static_cast<int32_t>(*v.getAsInteger()));

    std::vector<int32_t> ids = (*tok)->encode(prompt, /*addBos=*/true);
    ASSERT_LE(ids.size(), golden.size());
    EXPECT_EQ(ids, std::vector<int32_t>(golden.begin(), golden.begin() + ids.size()))
        << "prompt: " << prompt;

    std::string printed;
    for (size_t i = 1; i < golden.size(); ++i)
      printed += (*tok)->decode(golden[i - 1], golden[i]);
    EXPECT_EQ(printed + "\n", o.getString("text")->str()) << "prompt: " << prompt;
  }
}

// Hugging Face's Llama tokenizer cases. SentencePiece splits text at
// whitespace before merging and llama2.c does not, so the two differ only on
// runs of spaces; those cases are left out.
TEST(Llama2cTokenizer, MatchesSentencePieceOnLlama2Vocabulary) {
  TFM_SHARED_OR_SKIP(tokPath, "models/llama2-tokenizer/tokenizer.bin");
  TFM_SHARED_OR_SKIP(inpPath, "goldens/tokenizers/llama-spm.inp");
  TFM_SHARED_OR_SKIP(outPath, "goldens/tokenizers/llama-spm.out");
  auto tok = Llama2cTokenizer::load(tokPath, 32000);
  ASSERT_TRUE(bool(tok)) << llvm::toString(tok.takeError());

  const std::string separator = "\n__ggml_vocab_test__\n";
  std::string inp = readFile(inpPath);
  std::vector<std::string> texts;
  for (size_t at = 0, next; (next = inp.find(separator, at)) != std::string::npos;
       at = next + separator.size())
    texts.push_back(inp.substr(at, next - at));
  llvm::SmallVector<llvm::StringRef> expected;
  std::string out = readFile(outPath);
  llvm::StringRef(out).split(expected, '\n');
  ASSERT_GE(expected.size(), texts.size());

  int compared = 0;
  for (size_t i = 0; i < texts.size(); ++i) {
    if (texts[i].find("  ") != std::string::npos)
      continue;
    std::vector<int32_t> want;
    llvm::SmallVector<llvm::StringRef> fields;
    expected[i].split(fields, ' ', -1, /*KeepEmpty=*/false);
    for (llvm::StringRef f : fields) {
      int32_t id;
      ASSERT_FALSE(f.getAsInteger(10, id)) << "line " << i << ": " << f.str();
      want.push_back(id);
    }
    EXPECT_EQ((*tok)->encode(texts[i], /*addBos=*/false), want) << "case " << i << ": [" << texts[i] << "]";
    ++compared;
  }
  EXPECT_GT(compared, 20);
}

TEST(Llama2cTokenizer, ByteFallbackRoundTrips) {
  TFM_SHARED_OR_SKIP(tokPath, "models/aidreams260k/tokenizer.bin");
  auto tok = Llama2cTokenizer::load(tokPath, 512);
  ASSERT_TRUE(bool(tok)) << llvm::toString(tok.takeError());
  // Codepoints a 512-token vocabulary lacks come out as <0xXX> byte tokens
  // and decode back to the same UTF-8 bytes.
  const std::string text = "caf\xC3\xA9 \xE2\x9C\x93";
  std::vector<int32_t> ids = (*tok)->encode(text, /*addBos=*/true);
  std::string printed;
  for (size_t i = 1; i < ids.size(); ++i)
    printed += (*tok)->decode(ids[i - 1], ids[i]);
  EXPECT_EQ(printed, text);
}

TEST(Llama2cTokenizer, EmptyTextIsBosAlone) {
  TFM_SHARED_OR_SKIP(tokPath, "models/aidreams260k/tokenizer.bin");
  auto tok = Llama2cTokenizer::load(tokPath, 512);
  ASSERT_TRUE(bool(tok)) << llvm::toString(tok.takeError());
  EXPECT_EQ((*tok)->encode("", true), std::vector<int32_t>{1});
  EXPECT_TRUE((*tok)->encode("", false).empty());
}

TEST(Llama2cTokenizer, RefusesForeignVocabulary) {
  TFM_SHARED_OR_SKIP(tokPath, "models/llama2-tokenizer/tokenizer.bin");
  std::string error = loadError(tokPath, 512);
  EXPECT_NE(error.find("foreign tokenizer"), std::string::npos) << error;
  EXPECT_NE(error.find("32000"), std::string::npos) << error;
  EXPECT_NE(error.find("512"), std::string::npos) << error;
}

TEST(Llama2cTokenizer, RefusesMissingAndMalformedFiles) {
  EXPECT_NE(loadError("/nonexistent/tokenizer.bin", 3).find("/nonexistent/tokenizer.bin"),
            std::string::npos);

  // <unk>, BOS, EOS, the 256 byte tokens, then two merges.
  std::vector<std::string> pieces = {"<unk>", "<s>", "</s>"};
  for (int byte = 0; byte < 256; ++byte)
    pieces.push_back(llvm::formatv("<0x{0:X-2}>", byte).str());
  pieces.push_back("a");
  pieces.push_back("ab");
  auto tokenizerFile = [](const std::vector<std::string> &pieces) {
    std::string bytes;
    append<int32_t>(bytes, 6);
    for (const std::string &piece : pieces) {
      append<float>(bytes, 0.0f);
      append<int32_t>(bytes, static_cast<int32_t>(piece.size()));
      bytes += piece;
    }
    return bytes;
  };
  std::string good = tokenizerFile(pieces);
  EXPECT_EQ(loadError(writeTemp("tok_good.bin", good), 261), "");

  std::string cut = loadError(writeTemp("tok_cut.bin", good.substr(0, good.size() - 1)), 261);
  EXPECT_NE(cut.find("token 260"), std::string::npos) << cut;
  EXPECT_NE(cut.find("truncated"), std::string::npos) << cut;

  std::string tooLong = good;
  int32_t huge = 1000;
  std::memcpy(&tooLong[4 + 4], &huge, 4); // token 0's length
  std::string longError = loadError(writeTemp("tok_long.bin", tooLong), 261);
  EXPECT_NE(longError.find("length 1000"), std::string::npos) << longError;

  // Without the byte tokens, text outside the vocabulary could not be encoded.
  std::string small = loadError(writeTemp("tok_small.bin", tokenizerFile({"<unk>", "a"})), -1);
  EXPECT_NE(small.find("at least 259"), std::string::npos) << small;

  std::string noHeader = loadError(writeTemp("tok_empty.bin", ""), 3);
  EXPECT_NE(noHeader.find("max_token_length"), std::string::npos) << noHeader;
}
