//===- NonFiniteWeights.cpp - Which weight tensor holds a NaN -------------===//
#include "tfm/runtime/NonFiniteWeights.h"

#include "tfm/runtime/Session.h"

#include "llvm/Support/raw_ostream.h"

#include <cmath>

using namespace tfm;
using namespace tfm::rt;

llvm::Error tfm::rt::explainNonFiniteLogits(llvm::Error error, const BoundWeights &weights,
                                            const Manifest &manifest,
                                            const std::string &weightsPath) {
  return llvm::handleErrors(std::move(error), [&](const NonFiniteLogitError &e) -> llvm::Error {
    std::string message;
    llvm::raw_string_ostream os(message);
    e.log(os);
    for (size_t t = 0; t < manifest.tensors.size() && t < weights.pointers.size(); ++t) {
      const TensorSpec &tensor = manifest.tensors[t];
      int64_t elements = 1;
      for (int64_t d : tensor.shape)
        elements *= d;
      // Bound weights are f32, whatever the file stored (see BoundWeights).
      const float *data = static_cast<const float *>(weights.pointers[t]);
      for (int64_t i = 0; i < elements; ++i)
        if (!std::isfinite(data[i])) {
          os << ": " << weightsPath << ": tensor '" << tensor.name << "' holds " << data[i]
             << " at element " << i;
          return llvm::createStringError(llvm::inconvertibleErrorCode(), message);
        }
    }
    os << "; every weight tensor in " << weightsPath
       << " is finite, so the activations overflowed f32 (weights far outside the usual range?)";
    return llvm::createStringError(llvm::inconvertibleErrorCode(), message);
  });
}
