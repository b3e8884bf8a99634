//===- fuzz_tokenizer_json.cpp - a Hugging Face tokenizer.json --------------===//
//
// Any bytes as a Hugging Face tokenizer.json, loaded without a model, then
// encoding and decoding a text with it.
//
//===----------------------------------------------------------------------===//
#include "FuzzSupport.h"

using namespace tfm;

extern "C" int LLVMFuzzerInitialize(int *, char ***) { return 0; }

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  std::string path = fuzz::writeInput("tokenizer-json/tokenizer.json", data, size);
  fuzz::loadAndUseTokenizer(path, "Hello world <|endoftext|> \xf0\x9f\x98\x80 \xff");
  return 0;
}
