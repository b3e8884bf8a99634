//===- fuzz_gguf.cpp - a GGUF file, every reader of it ----------------------===//
//
// Any bytes as a .gguf: the container, the config derived from its metadata
// (and that config through ModelSpec), its embedded tokenizer encoding and
// decoding a text, and binding its tensors to a tiny Llama.
//
//===----------------------------------------------------------------------===//
#include "FuzzSupport.h"
#include "tfm/common/ModelSpec.h"
#include "tfm/runtime/GgufConfig.h"
#include "tfm/runtime/GgufFile.h"
#include "tfm/runtime/WeightLoader.h"

using namespace tfm;
using namespace tfm::rt;

extern "C" int LLVMFuzzerInitialize(int *, char ***) { return 0; }

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  std::string path = fuzz::writeInput("model.gguf", data, size);
  auto file = GgufFile::open(path);
  if (!file)
    return fuzz::checkMessage(file.takeError());
  if (auto config = configJsonFromGguf(**file, "fuzz"); !config)
    fuzz::checkMessage(config.takeError());
  else if (auto spec = parseModelSpec(*config, "derived config"); !spec)
    fuzz::checkMessage(spec.takeError());
  fuzz::loadAndUseTokenizer(path, "Hello world, <s> \xe2\x96\x81 \xff!");
  if (auto weights = bindWeights(path, fuzz::tinyManifest("llama"), LoadOptions{false}); !weights)
    fuzz::checkMessage(weights.takeError());
  return 0;
}
