//===- fuzz_safetensors_index.cpp - model.safetensors.index.json ------------===//
//
// Any bytes as a sharded model's index, read and bound to a tiny Llama (the
// shards it names mostly do not exist: the index's own checks come first).
//
//===----------------------------------------------------------------------===//
#include "FuzzSupport.h"
#include "tfm/runtime/SafetensorsFile.h"
#include "tfm/runtime/WeightLoader.h"

using namespace tfm;
using namespace tfm::rt;

extern "C" int LLVMFuzzerInitialize(int *, char ***) { return 0; }

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  std::string path = fuzz::writeInput("index/model.safetensors.index.json", data, size);
  if (auto index = readSafetensorsIndex(path); !index)
    return fuzz::checkMessage(index.takeError());
  if (auto weights = bindWeights(path, fuzz::tinyManifest("llama"), LoadOptions{false}); !weights)
    fuzz::checkMessage(weights.takeError());
  return 0;
}
