//===- NonFiniteWeights.cpp - Which weight tensor holds a NaN -------------===//
#include "tfm/runtime/NonFiniteWeights.h"
#include "tfm/common/Failure.h"

#include "tfm/runtime/Session.h"

#include "llvm/Support/raw_ostream.h"

#include <cmath>
#include <vector>

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
      // Bound weights are in the manifest's types: decoded a row at a time.
      const TensorSpec &tensor = manifest.tensors[t];
      const int64_t rowLength = tensor.shape.back();
      const int64_t rows = tensor.elementCount() / rowLength;
      const int64_t rowBytes = tensor.dtype.bytes(rowLength);
      const uint8_t *data = static_cast<const uint8_t *>(weights.pointers[t]);
      std::vector<float> row(rowLength);
      for (int64_t r = 0; r < rows; ++r) {
        decodeElements(tensor.dtype, data + r * rowBytes, rowLength, row.data());
        for (int64_t i = 0; i < rowLength; ++i)
          if (!std::isfinite(row[i])) {
            os << ": " << weightsPath << ": tensor '" << tensor.name << "' holds " << row[i]
               << " at element " << r * rowLength + i;
            return failure(message);
          }
      }
    }
    os << "; every weight tensor in " << weightsPath
       << " is finite, so the activations overflowed f32 (weights far outside the usual range?)";
    return failure(message);
  });
}
