//===- GeneratorTest.cpp - Call sequence, stopping and streaming ---------===//
//
// A scripted model behind the ABI records every call and always makes
// "previous token + 1" the most likely next one, so each expectation below
// follows from the generator's contract alone.
//
//===----------------------------------------------------------------------===//
#include "tfm/runtime/Generator.h"

#include <gtest/gtest.h>

#include <string>

using namespace tfm;
using namespace tfm::rt;

namespace {

constexpr int kVocab = 8, kContext = 6;

struct Call {
  std::string entry;
  std::vector<int32_t> tokens;
  int32_t pos;
};
std::vector<Call> calls;

void nextIsSuccessor(int32_t last, float *logits) {
  for (int i = 0; i < kVocab; ++i)
    logits[i] = (i == (last + 1) % kVocab) ? 5.0f : 0.0f;
}

int scriptedPrefill(const void *const *, void *, void *, const int32_t *tokens, int32_t n,
                    int32_t pos, float *logits) {
  calls.push_back({"prefill", std::vector<int32_t>(tokens, tokens + n), pos});
  nextIsSuccessor(tokens[n - 1], logits);
  return 0;
}

int scriptedDecode(const void *const *, void *, void *, int32_t token, int32_t pos,
                   float *logits) {
  calls.push_back({"decode", {token}, pos});
  nextIsSuccessor(token, logits);
  return 0;
}

tfm_model scriptedModel() {
  tfm_model m{};
  m.abi_version = TFM_ABI_VERSION;
  m.vocab_size = kVocab;
  m.context_length = kContext;
  m.kv_cache_bytes = 16;
  m.arena_bytes = 16;
  m.prefill = scriptedPrefill;
  m.decode = scriptedDecode;
  return m;
}

class BracketTokenizer : public Tokenizer {
public:
  BracketTokenizer() { special = {/*bos=*/1, /*eos=*/2, /*addBos=*/true}; }
  int64_t vocabSize() const override { return kVocab; }
  std::vector<int32_t> encode(const std::string &, bool) const override { return {}; }
  std::string decode(int32_t, int32_t token) const override {
    return "<" + std::to_string(token) + ">";
  }
};

struct Outcome {
  GenerationResult result;
  std::string printed;
};

Outcome generateWith(std::vector<int32_t> prompt, int64_t n, std::vector<int32_t> endTokenIds) {
  calls.clear();
  tfm_model model = scriptedModel();
  auto session = Session::create(model, {});
  EXPECT_TRUE(bool(session));
  auto sampler = Sampler::create({});
  BracketTokenizer tokenizer;
  GenerateOptions options;
  options.maxNewTokens = n;
  options.endTokenIds = std::move(endTokenIds);
  Outcome run;
  llvm::raw_string_ostream out(run.printed);
  auto result = generate(**session, tokenizer, *sampler, prompt, options, out);
  EXPECT_TRUE(bool(result)) << llvm::toString(result.takeError());
  run.result = *result;
  return run;
}

} // namespace

TEST(Generator, PrefillsOnceThenDecodesAllButTheLastToken) {
  Outcome run = generateWith({1, 4}, 3, {2});
  EXPECT_EQ(run.result.ids, (std::vector<int32_t>{1, 4, 5, 6, 7}));
  ASSERT_EQ(calls.size(), 3u);
  EXPECT_EQ(calls[0].entry, "prefill");
  EXPECT_EQ(calls[0].tokens, (std::vector<int32_t>{1, 4}));
  EXPECT_EQ(calls[0].pos, 0);
  EXPECT_EQ(calls[1].entry, "decode");
  EXPECT_EQ(calls[1].tokens, std::vector<int32_t>{5});
  EXPECT_EQ(calls[1].pos, 2);
  EXPECT_EQ(calls[2].tokens, std::vector<int32_t>{6});
  EXPECT_EQ(calls[2].pos, 3);
  EXPECT_EQ(run.result.prefillTokens, 2);
  EXPECT_EQ(run.result.decodeCalls, 2);
  EXPECT_EQ(run.printed, "<4><5><6><7>\n");
}

TEST(Generator, StopsAtEosUnlessTold) {
  Outcome stopped = generateWith({1}, 4, {2});
  EXPECT_EQ(stopped.result.ids, (std::vector<int32_t>{1, 2}));
  EXPECT_EQ(stopped.printed, "\n");
  Outcome ignored = generateWith({1}, 4, {});
  EXPECT_EQ(ignored.result.ids, (std::vector<int32_t>{1, 2, 3, 4, 5}));
  EXPECT_EQ(ignored.printed, "<2><3><4><5>\n");
}

TEST(Generator, StopsAtAnyEndToken) {
  // Llama 3 Instruct's list: end of text and end of turn.
  Outcome run = generateWith({3}, 6, {2, 6});
  EXPECT_EQ(run.result.ids, (std::vector<int32_t>{3, 4, 5, 6}));
  EXPECT_EQ(run.printed, "<3><4><5>\n");
}

TEST(Generator, FillsTheContextExactly) {
  // 2 prompt tokens + 5 new ones use positions 0..5 of a 6-long context.
  Outcome run = generateWith({1, 4}, kContext - 2 + 1, {});
  EXPECT_EQ(run.result.ids.size(), 7u);
  EXPECT_EQ(calls.back().pos, kContext - 1);
}

TEST(Session, RefusesCallsPastTheContext) {
  calls.clear();
  tfm_model model = scriptedModel();
  auto session = Session::create(model, {});
  ASSERT_TRUE(bool(session));
  llvm::Error tooLong = (*session)->prefill(std::vector<int32_t>(kContext + 1, 1));
  ASSERT_TRUE(bool(tooLong));
  EXPECT_NE(llvm::toString(std::move(tooLong)).find("context of 6"), std::string::npos);
  EXPECT_TRUE(calls.empty());

  ASSERT_FALSE(bool((*session)->prefill(std::vector<int32_t>(kContext, 1))));
  llvm::Error past = (*session)->decode(1);
  ASSERT_TRUE(bool(past));
  EXPECT_NE(llvm::toString(std::move(past)).find("position 6"), std::string::npos);

  llvm::Error badToken = (*Session::create(model, {}))->decode(kVocab);
  ASSERT_TRUE(bool(badToken));
  EXPECT_NE(llvm::toString(std::move(badToken)).find("outside the vocabulary"), std::string::npos);
}
