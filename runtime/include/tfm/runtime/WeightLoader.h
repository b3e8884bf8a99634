//===- WeightLoader.h - Bind any weight file to a manifest ------*- C++ -*-===//
//
// One entry point for every weight format tfm reads: GGUF v3 (llama.cpp
// tensor names), safetensors (Hugging Face names; one file, or sharded
// behind a model.safetensors.index.json) and llama2.c checkpoints. The
// format comes from the file's first bytes, not its name. PyTorch pickles
// are refused with the command that converts them.
//
// Every manifest tensor is checked before anything runs: present, of the
// expected shape, of a dtype this library can take, inside the file. f32
// tensors stored as the generated code reads them are used in place;
// f16 and bf16 are converted once, and Hugging Face layouts (Conv1D
// transposes, rotate-half q/k rows) rearranged once, into aligned copies.
//
//===----------------------------------------------------------------------===//
#ifndef TFM_RUNTIME_WEIGHTLOADER_H
#define TFM_RUNTIME_WEIGHTLOADER_H

#include "tfm/runtime/BoundWeights.h"
#include "tfm/common/Manifest.h"

#include "llvm/Support/Error.h"

#include <string>

namespace tfm::rt {

enum class WeightFormat { Gguf, Safetensors, SafetensorsIndex, Llama2c };

/// The format of the file at `path`, from its first bytes. PyTorch pickles
/// (zip archives or bare pickles) and folders are refused here.
llvm::Expected<WeightFormat> detectWeightFormat(const std::string &path);

struct LoadOptions {
  /// Draw "converting weights N%" while converting; only ever drawn when
  /// stderr is a terminal.
  bool showProgress = true;
};

/// Maps the weight file at `path` and points each manifest tensor at f32
/// data laid out as the manifest says.
llvm::Expected<BoundWeights> bindWeights(const std::string &path, const Manifest &manifest,
                                         const LoadOptions &options);

} // namespace tfm::rt

#endif // TFM_RUNTIME_WEIGHTLOADER_H
