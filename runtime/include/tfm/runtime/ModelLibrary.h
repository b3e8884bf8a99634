//===- ModelLibrary.h - A generated model, loaded and checked ---*- C++ -*-===//
//
// Wraps the tfm_model a generated library exports: either dlopened from a
// model folder written by tfmc, or linked into a standalone executable. On
// load the ABI version, the embedded manifest and (when present) the
// manifest.json beside the library are checked against each other, so a
// stale or mismatched library is refused before any weight is bound; and
// every CPU feature the library was compiled for is checked against this
// CPU, so a library built elsewhere is refused by name instead of dying on
// an illegal instruction.
//
//===----------------------------------------------------------------------===//
#ifndef TFM_RUNTIME_MODELLIBRARY_H
#define TFM_RUNTIME_MODELLIBRARY_H

#include "tfm/common/Manifest.h"
#include "tfm/common/model_abi.h"

#include "llvm/Support/Error.h"

#include <memory>
#include <string>

namespace tfm::rt {

class ModelLibrary {
public:
  /// Opens `<dir>/lib<name>.so` (the one lib*.so in dir; when several, the
  /// one named by dir/manifest.json).
  static llvm::Expected<std::unique_ptr<ModelLibrary>> open(const std::string &dir);

  /// Wraps a model linked into this executable.
  static llvm::Expected<std::unique_ptr<ModelLibrary>> fromLinked(const tfm_model *model);

  ~ModelLibrary();
  ModelLibrary(const ModelLibrary &) = delete;
  ModelLibrary &operator=(const ModelLibrary &) = delete;

  const tfm_model &model() const { return *model_; }
  const Manifest &manifest() const { return manifest_; }
  /// Where the model came from, for messages.
  const std::string &source() const { return source_; }
  /// Whether its kernels run on a GPU (CUDA or OpenCL).
  bool onGpu() const;

  /// A GPU library runs its calls on device `index` of its driver
  /// (tfm-run --device); before the first call. Refused for a CPU library.
  llvm::Error selectDevice(int index) const;
  /// A GPU library's device copy bandwidth in GB/s, read plus written, for
  /// `bytes` copied `repeats` times (tfm_model.measure_device_copy).
  llvm::Expected<double> measureDeviceCopy(uint64_t bytes, int repeats) const;
  /// A GPU library's device f32 multiply-add peak in GFLOP/s, over
  /// `repeats` runs (tfm_model.measure_device_fma).
  llvm::Expected<double> measureDeviceFma(int repeats) const;

private:
  ModelLibrary() = default;
  static llvm::Expected<std::unique_ptr<ModelLibrary>>
  check(std::unique_ptr<ModelLibrary> lib);
  llvm::Expected<double> deviceMeasure(const char *what, int rc, double value) const;

  void *handle_ = nullptr; // dlopen handle; null for a linked model
  const tfm_model *model_ = nullptr;
  Manifest manifest_;
  std::string source_;
};

} // namespace tfm::rt

#endif // TFM_RUNTIME_MODELLIBRARY_H
