//===- fuzz_llama2c_checkpoint.cpp - a llama2.c checkpoint bound to a manifest ---===//
//
// Any bytes as a llama2.c model.bin, bound to a tiny Llama: the header
// fields, the shared/unshared classifier sign and the tensor sizes.
//
//===----------------------------------------------------------------------===//
#include "FuzzSupport.h"
#include "tfm/runtime/WeightLoader.h"

using namespace tfm;
using namespace tfm::rt;

extern "C" int LLVMFuzzerInitialize(int *, char ***) { return 0; }

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  std::string path = fuzz::writeInput("model.bin", data, size);
  if (auto weights = bindWeights(path, fuzz::tinyManifest("llama"), LoadOptions{false}); !weights)
    fuzz::checkMessage(weights.takeError());
  return 0;
}
