//===- fuzz_tokenizer_vocab_merges.cpp - vocab.json with merges.txt ---------===//
//
// Any bytes as a GPT-2 vocabulary: up to the first NUL byte vocab.json, the
// rest merges.txt beside it; loaded without a model, then encoding and
// decoding a text.
//
//===----------------------------------------------------------------------===//
#include "FuzzSupport.h"

#include <algorithm>

using namespace tfm;

extern "C" int LLVMFuzzerInitialize(int *, char ***) { return 0; }

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  const uint8_t *split = std::find(data, data + size, 0);
  std::string vocab = fuzz::writeInput("vocab-merges/vocab.json", data, split - data);
  size_t rest = split == data + size ? 0 : size - (split - data) - 1;
  fuzz::writeInput("vocab-merges/merges.txt", rest ? split + 1 : data, rest);
  fuzz::loadAndUseTokenizer(vocab, "Hello world <|endoftext|> \xf0\x9f\x98\x80 \xff");
  return 0;
}
