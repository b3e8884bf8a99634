//===- GgufConfig.h - The model config a GGUF file describes ----*- C++ -*-===//
//
// A GGUF file carries its hyperparameters as metadata ("llama.block_count",
// "gpt2.embedding_length", ...) instead of a config.json. `tfm-run
// --model-dir FILE.gguf` turns them into the Hugging Face config.json that
// tfmc compiles, so a GGUF and the equivalent Hugging Face folder give the
// same ModelSpec.
//
//===----------------------------------------------------------------------===//
#ifndef TFM_RUNTIME_GGUFCONFIG_H
#define TFM_RUNTIME_GGUFCONFIG_H

#include "tfm/common/ModelSpec.h"
#include "tfm/runtime/GgufFile.h"
#include "tfm/runtime/GgufWriter.h"

#include "llvm/Support/Error.h"

#include <string>

namespace tfm::rt {

/// Hugging Face config.json text for the model in `file` (architectures
/// "llama" and "gpt2"); `name` becomes the config's "name". Errors name the
/// file and the metadata key.
llvm::Expected<std::string> configJsonFromGguf(const GgufFile &file, const std::string &name);

/// The reverse, for files tfm writes: general.architecture, general.name and
/// llama.cpp's hyperparameter keys for `spec`, which configJsonFromGguf
/// reads back as the same spec.
void addGgufModelMetadata(const ModelSpec &spec, GgufWriter &writer);

} // namespace tfm::rt

#endif // TFM_RUNTIME_GGUFCONFIG_H
