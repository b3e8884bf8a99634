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

/// Hugging Face config.json text for the model in `file` (llama.cpp's
/// architectures "llama", "gpt2", "gptneox", "bloom", "mpt" and "falcon",
/// read as llama.cpp's loader reads them; what its graph decides from the
/// tensors present, biases and Falcon's second norm, is read from those);
/// `name` becomes the config's "name". Errors name the file and the
/// metadata key.
llvm::Expected<std::string> configJsonFromGguf(const GgufFile &file, const std::string &name);

/// The model of `file` (configJsonFromGguf, parsed): a refusal names the
/// file and the metadata key (or tensor) the field came from, not the
/// config field it became.
llvm::Expected<ModelSpec> modelSpecFromGguf(const GgufFile &file, const std::string &name);

/// The reverse, for files tfm writes: general.architecture, general.name and
/// llama.cpp's hyperparameter keys for `spec` (gpt_neox is llama.cpp's
/// "gptneox"). configJsonFromGguf reads them back as the same spec where
/// llama.cpp's architecture can say it: a variant its graph lacks (ALiBi in
/// Falcon, say) is not in the metadata.
void addGgufModelMetadata(const ModelSpec &spec, GgufWriter &writer);

/// The constants llama.cpp reads as tensors rather than keys, declared after
/// the weights with their values: rope_freqs.weight (Llama 3's scaling).
void addGgufModelConstants(const ModelSpec &spec, GgufWriter &writer);

} // namespace tfm::rt

#endif // TFM_RUNTIME_GGUFCONFIG_H
