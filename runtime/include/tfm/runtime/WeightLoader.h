//===- WeightLoader.h - Bind any weight file to a manifest ------*- C++ -*-===//
//
// One entry point for every weight format tfm reads: GGUF v3 (llama.cpp
// tensor names), safetensors (Hugging Face names; one file, or sharded
// behind a model.safetensors.index.json) and llama2.c checkpoints. The
// format comes from the file's first bytes, not its name. PyTorch pickles
// are refused with the command that converts them.
//
// Every manifest tensor is checked before anything runs: present, of the
// expected shape, of a type this library can take, inside the file. Tensors
// stored as the generated code reads them (the manifest's dtype: f32, f16,
// bf16 or a block format) are used in place, straight from the mapped file
// (or its copy in memory, with --no-mmap).
// Others are converted once into aligned copies: a plain type into another,
// a block format decoded into a plain type, Hugging Face layouts (Conv1D
// transposes, rotate-half q/k rows) rearranged. Nothing is quantized at
// load: a library compiled for a block format takes exactly that format.
//
//===----------------------------------------------------------------------===//
#ifndef TFM_RUNTIME_WEIGHTLOADER_H
#define TFM_RUNTIME_WEIGHTLOADER_H

#include "tfm/runtime/BoundWeights.h"
#include "tfm/runtime/WeightFileBytes.h"
#include "tfm/common/Manifest.h"
#include "tfm/common/WeightFileType.h"

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
  /// The file mapped (the default), or read into memory of the process's
  /// own (tfm-run --no-mmap; WeightFileBytes.h says when that pays).
  WeightMemory memory = WeightMemory::Mapped;
};

/// A weight file whose manifest tensors are all checked, as bindWeights
/// checks them, and each converted only when asked for: a tool that takes
/// a tensor at a time (tfm-quantize) then holds one converted copy, not the
/// whole model's (Llama 2 7B's f16 file is 27 GB as f32).
class WeightTensors {
public:
  struct State; // the open files, and where each tensor lies in them

  explicit WeightTensors(std::shared_ptr<const State> state) : state_(std::move(state)) {}

  /// Manifest tensor `index` encoded and laid out as the manifest says: the
  /// file's own bytes (which the pointer keeps mapped), or a copy converted
  /// now and freed with the last pointer to it.
  llvm::Expected<std::shared_ptr<const void>> tensor(size_t index) const;
  /// Whether tensor(index) converts, rather than pointing into the file.
  bool converts(size_t index) const;
  /// The open files, which the tensors in place point into.
  std::shared_ptr<const void> files() const { return state_; }

private:
  std::shared_ptr<const State> state_;
};

/// Maps (or reads) the weight file at `path` and checks every manifest
/// tensor in it; converts none.
llvm::Expected<WeightTensors> openWeightTensors(const std::string &path, const Manifest &manifest,
                                                const LoadOptions &options);

/// Maps (or reads) the weight file at `path` and points each manifest tensor at data
/// encoded and laid out as the manifest says.
llvm::Expected<BoundWeights> bindWeights(const std::string &path, const Manifest &manifest,
                                         const LoadOptions &options);

/// How each tensor of `spec`'s model is stored in the weight file at
/// `path`: the types of a library that reads that file in place (tfmc
/// --weights-like). f32 tensors are left out (WeightTypes' default). An
/// error names a tensor that is missing, misshapen or of a type tfm does
/// not read.
llvm::Expected<WeightTypes> weightFileTypes(const std::string &path, const ModelSpec &spec);

/// The files the weights at `path` are read from: the file itself, and for
/// a model.safetensors.index.json its shards too (what an output must not
/// overwrite).
std::vector<std::string> weightFilesOf(const std::string &path);

/// What identifies the weight file at `path` wherever it lies and whatever
/// it is called: a content hash of its size and of the bytes that describe
/// it (a GGUF's header, metadata and tensor table; a safetensors file's
/// header; an index's text; a llama2.c checkpoint's header).
llvm::Expected<std::string> weightFileIdentity(const std::string &path);

} // namespace tfm::rt

#endif // TFM_RUNTIME_WEIGHTLOADER_H
