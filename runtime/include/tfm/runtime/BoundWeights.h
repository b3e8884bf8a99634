//===- BoundWeights.h - A weight file mapped onto a manifest ----*- C++ -*-===//
#ifndef TFM_RUNTIME_BOUNDWEIGHTS_H
#define TFM_RUNTIME_BOUNDWEIGHTS_H

#include "llvm/Support/MemoryBuffer.h"

#include <memory>
#include <vector>

namespace tfm::rt {

/// One pointer per manifest tensor, in manifest order, into a weight file
/// that stays mapped for as long as this object lives. Nothing is copied.
struct BoundWeights {
  std::unique_ptr<llvm::MemoryBuffer> file;
  std::vector<const void *> pointers;
};

} // namespace tfm::rt

#endif // TFM_RUNTIME_BOUNDWEIGHTS_H
