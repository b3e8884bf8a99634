//===- NonFiniteWeights.h - Which weight tensor holds a NaN -----*- C++ -*-===//
//
// A non-finite logit is reported by the session, which knows no files. The
// weights are scanned only then (a scan of every load would read the whole
// model), to name the file and the tensor that carries the NaN or infinity.
//
//===----------------------------------------------------------------------===//
#ifndef TFM_RUNTIME_NONFINITEWEIGHTS_H
#define TFM_RUNTIME_NONFINITEWEIGHTS_H

#include "tfm/common/Manifest.h"
#include "tfm/runtime/BoundWeights.h"

#include "llvm/Support/Error.h"

#include <string>

namespace tfm::rt {

/// `error` unchanged unless it is a NonFiniteLogitError; that one gains the
/// first manifest tensor of `weights` (bound from `weightsPath`) holding a
/// non-finite value, or the remark that none does.
llvm::Error explainNonFiniteLogits(llvm::Error error, const BoundWeights &weights,
                                   const Manifest &manifest, const std::string &weightsPath);

} // namespace tfm::rt

#endif // TFM_RUNTIME_NONFINITEWEIGHTS_H
