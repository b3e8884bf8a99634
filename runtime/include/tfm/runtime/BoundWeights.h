//===- BoundWeights.h - Weight files mapped onto a manifest -----*- C++ -*-===//
#ifndef TFM_RUNTIME_BOUNDWEIGHTS_H
#define TFM_RUNTIME_BOUNDWEIGHTS_H

#include <memory>
#include <vector>

namespace tfm::rt {

/// One pointer per manifest tensor, in manifest order, to data in the
/// manifest's type (f32, f16, bf16 or a block format). Tensors the generated
/// code can read as stored point into mapped files; converted, transposed or
/// permuted ones into 64-byte aligned copies. `storage` keeps both alive for
/// as long as this object lives.
struct BoundWeights {
  std::vector<std::shared_ptr<const void>> storage;
  std::vector<const void *> pointers;
};

} // namespace tfm::rt

#endif // TFM_RUNTIME_BOUNDWEIGHTS_H
