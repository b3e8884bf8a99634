//===- KernelKey.h - A kernel's identity for tuning -------------*- C++ -*-===//
#ifndef TFM_TRANSFORMS_KERNELKEY_H
#define TFM_TRANSFORMS_KERNELKEY_H

#include "mlir/Dialect/Func/IR/FuncOps.h"

#include <string>

namespace tfm {

/// A hash of the kernel function as printed, less its name and schedule:
/// what it computes, on which shapes and types. The same kernel in any
/// config has the same key, so a schedule tuned for it in one (tfmc --tune,
/// tfm/common/TuningFile.h) serves all.
std::string kernelTuningKey(mlir::func::FuncOp kernel);

} // namespace tfm

#endif // TFM_TRANSFORMS_KERNELKEY_H
