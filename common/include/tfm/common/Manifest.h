//===- Manifest.h - What a generated model library expects ------*- C++ -*-===//
//
// The manifest is the JSON a generated library embeds (and writes beside
// itself as manifest.json): its identity (build hash, CPU target), its
// config, the kernels and the schedule each was compiled with, and the weight
// tensors it binds, in binding order. tfmc writes it with formatManifest; the
// runtime reads it with parseManifest and checks weight files and tokenizers
// against it.
//
//===----------------------------------------------------------------------===//
#ifndef TFM_COMMON_MANIFEST_H
#define TFM_COMMON_MANIFEST_H

#include "tfm/common/ElementEncoding.h"
#include "tfm/common/ModelSpec.h"

#include "llvm/Support/Error.h"

#include <cstdint>
#include <string>
#include <vector>

namespace tfm {

struct TensorSpec {
  std::string name;
  std::vector<int64_t> shape;
  ElementEncoding dtype; // as the generated code reads it: f32, f16, bf16 or a block format

  int64_t elementCount() const;
  int64_t byteCount() const { return dtype.tensorBytes(shape); }
};

struct KernelSchedule {
  std::string kernel;   // the kernel's symbol
  std::string schedule; // the schedule it was compiled with
  /// The tensors its first launch reads (a layer's kernel: layer 0's), for
  /// tfm-bench's count of the bytes and FLOPs of a call.
  std::vector<std::string> weights;
  /// What tfmc --tune records its choice under (tfm/common/TuningFile.h).
  std::string tuningKey;
  /// What its matrix products multiply (tfmc --activations), which
  /// tfm-bench holds against the machine's dot products for them.
  Products products = Products::F32;
};

/// The weight and tokenizer files a library was compiled from (tfmc
/// model.gguf, tfmc hf-folder/), which tfm-run and libtfm use when given
/// none: absolute, or relative to the library's folder (the executable's,
/// for --emit exe --bundle). Empty when compiled from a config.
struct ModelFiles {
  std::string weights;
  std::string tokenizer;
};

struct Manifest {
  int64_t abiVersion = 0;
  std::string name;
  std::string buildHash;
  std::string target; // Halide target string with every CPU feature used
  ModelSpec config;
  std::vector<KernelSchedule> kernels;
  std::vector<TensorSpec> tensors; // weights[i] binds tensors[i]
  ModelFiles files;

  /// One schedule name when every kernel uses it, else "mixed (a, b)".
  std::string scheduleSummary() const;
};

/// Parses manifest JSON; `source` names where the text came from in errors.
llvm::Expected<Manifest> parseManifest(llvm::StringRef jsonText, const std::string &source);

/// The largest manifest.json read: Llama 2 70B's, a tensor and a kernel a
/// line, is under a megabyte.
constexpr uint64_t kMaxManifestBytes = 64ull << 20;

/// Reads (tfm/common/BoundedFile.h) and parses the manifest.json at `path`.
llvm::Expected<Manifest> readManifestFile(const std::string &path);

/// The JSON parseManifest reads, indented for people.
std::string formatManifest(const Manifest &manifest);

/// Formats a shape as "[512, 64]" for messages.
std::string formatShape(const std::vector<int64_t> &shape);

} // namespace tfm

#endif // TFM_COMMON_MANIFEST_H
