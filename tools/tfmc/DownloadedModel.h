//===- DownloadedModel.h - A .gguf or Hugging Face folder as tfmc's input -*- C++ -*-===//
//
// `tfmc model.gguf` and `tfmc hf-folder/` compile what the user downloaded:
// the config from the GGUF's metadata or the folder's config.json, kernels
// that read each tensor in its stored type (as --weights-like), and the
// weight and tokenizer files recorded in the manifest, so that tfm-run and
// libtfm find them; with --emit exe --bundle, copied beside the executable.
//
//===----------------------------------------------------------------------===//
#ifndef TFM_TOOLS_TFMC_DOWNLOADEDMODEL_H
#define TFM_TOOLS_TFMC_DOWNLOADEDMODEL_H

#include "tfm/common/Manifest.h"
#include "tfm/common/ModelSpec.h"

#include "llvm/Support/Error.h"

#include <string>

namespace tfm {

struct DownloadedModel {
  ModelSpec spec;
  ModelFiles files; // absolute paths; no tokenizer when the folder has none
};

/// Whether `input` is a downloaded model rather than a config or .mlir: a
/// folder, or a file that starts with GGUF's magic.
bool isDownloadedModel(const std::string &input);

llvm::Expected<DownloadedModel> findDownloadedModel(const std::string &input);

/// Copies the model's weight files (a safetensors index with its shards)
/// and its tokenizer into `outDir`, refusing to write over any of them, and
/// returns the files as the manifest records them: relative to `outDir`.
llvm::Expected<ModelFiles> bundleModelFiles(const DownloadedModel &model,
                                            const std::string &outDir);

} // namespace tfm

#endif // TFM_TOOLS_TFMC_DOWNLOADEDMODEL_H
