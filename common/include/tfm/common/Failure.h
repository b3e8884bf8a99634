//===- Failure.h - The one way tfm reports an error --------------*- C++ -*-===//
//
// Everything outside the Halide half reports errors as llvm::Error and
// llvm::Expected, each message naming the file, the field or tensor, what
// was found and what was expected. The Halide half (compiler/lib/Kernels)
// throws, as Halide does, and its seam (tfm/Kernels/KernelCompiler.h)
// turns that into a bool and a message, since it may include no LLVM 22
// header.
//
//===----------------------------------------------------------------------===//
#ifndef TFM_COMMON_FAILURE_H
#define TFM_COMMON_FAILURE_H

#include "llvm/ADT/Twine.h"
#include "llvm/Support/Error.h"

namespace tfm {

/// An error carrying `message`.
inline llvm::Error failure(const llvm::Twine &message) {
  return llvm::createStringError(llvm::inconvertibleErrorCode(), message);
}

} // namespace tfm

#endif // TFM_COMMON_FAILURE_H
