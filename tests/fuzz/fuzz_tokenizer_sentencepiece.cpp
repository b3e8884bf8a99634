//===- fuzz_tokenizer_sentencepiece.cpp - a SentencePiece tokenizer.model ---===//
//
// Any bytes as a SentencePiece tokenizer.model (a protobuf), loaded without
// a model, then encoding and decoding a text with it.
//
//===----------------------------------------------------------------------===//
#include "FuzzSupport.h"

using namespace tfm;

extern "C" int LLVMFuzzerInitialize(int *, char ***) { return 0; }

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  std::string path = fuzz::writeInput("sentencepiece/tokenizer.model", data, size);
  fuzz::loadAndUseTokenizer(path, "Once upon a time \xf0\x9f\x98\x80 \xff");
  return 0;
}
