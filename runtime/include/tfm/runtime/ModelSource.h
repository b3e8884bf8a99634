//===- ModelSource.h - A downloaded model, found on disk --------*- C++ -*-===//
//
// What `tfm-run --model-dir` accepts: a Hugging Face folder (config.json,
// safetensors, tokenizer files) or one GGUF file (hyperparameters, tensors and
// tokenizer in one). Either way the result is the three things the rest of
// the run needs: a config to compile, a weight file and a tokenizer file.
//
//===----------------------------------------------------------------------===//
#ifndef TFM_RUNTIME_MODELSOURCE_H
#define TFM_RUNTIME_MODELSOURCE_H

#include "tfm/common/ModelSpec.h"

#include "llvm/Support/Error.h"

#include <string>

namespace tfm::rt {

struct ModelSource {
  ModelSpec spec;            // config.json's, or the one a GGUF's metadata describes
  std::string weightsPath;   // for bindWeights
  std::string tokenizerPath; // for loadTokenizer
};

/// Finds the config, weights and tokenizer of `path`. Nothing is written:
/// a GGUF's config is read from its metadata into `spec`. Errors say what
/// is missing and what was looked for. Without `needTokenizer` a folder's
/// tokenizer is not looked for and tokenizerPath stays empty (a GGUF is its
/// own).
llvm::Expected<ModelSource> findModelSource(const std::string &path, bool needTokenizer = true);

} // namespace tfm::rt

#endif // TFM_RUNTIME_MODELSOURCE_H
