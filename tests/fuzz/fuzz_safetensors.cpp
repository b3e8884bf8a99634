//===- fuzz_safetensors.cpp - a .safetensors file bound to a manifest -------===//
//
// Any bytes as model.safetensors: the header parser, then binding to the
// tensors of a tiny Llama and a tiny GPT-2.
//
//===----------------------------------------------------------------------===//
#include "FuzzSupport.h"
#include "tfm/runtime/SafetensorsFile.h"
#include "tfm/runtime/WeightLoader.h"

using namespace tfm;
using namespace tfm::rt;

extern "C" int LLVMFuzzerInitialize(int *, char ***) { return 0; }

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  std::string path = fuzz::writeInput("model.safetensors", data, size);
  if (auto file = SafetensorsFile::open(path); !file)
    return fuzz::checkMessage(file.takeError());
  for (const char *family : {"llama", "gpt2"})
    if (auto weights = bindWeights(path, fuzz::tinyManifest(family), LoadOptions{false}); !weights)
      fuzz::checkMessage(weights.takeError());
  return 0;
}
