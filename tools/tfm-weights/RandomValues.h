//===- RandomValues.h - Deterministic values of one weight tensor -*- C++ -*-===//
//
// Each tensor draws from its own splitmix64 stream, seeded from the user's
// seed and the tensor's name, so a tensor's values do not depend on which
// file format writes it or in what order. Only integer arithmetic and exact
// float scaling are used: the same seed gives the same bytes on any machine.
//
//===----------------------------------------------------------------------===//
#ifndef TFM_WEIGHTS_RANDOMVALUES_H
#define TFM_WEIGHTS_RANDOMVALUES_H

#include "tfm/common/ElementEncoding.h"
#include "WeightTensors.h"

#include "tfm/runtime/Progress.h"

#include <cstddef>
#include <cstdint>
#include <vector>

namespace llvm {
class raw_ostream;
}

namespace tfm {

class TensorValueStream {
public:
  TensorValueStream(const WeightTensor &tensor, uint64_t seed);

  /// Writes the next `n` values of the tensor (row-major order) to `out`.
  void next(float *out, size_t n);

private:
  uint64_t nextBits();
  /// Uniform in [-0.5, 0.5) with 24 bits of resolution.
  float centeredUniform();

  InitKind init;
  float bound;
  uint64_t state;
};

/// Streams the tensor's values to `os` encoded as `encoding`, in bounded
/// chunks of whole rows, so a tensor of any size is written without holding
/// it in memory.
void streamRandomTensor(const WeightTensor &tensor, uint64_t seed,
                        const ElementEncoding &encoding, llvm::raw_ostream &os,
                        rt::Progress &progress);

/// All of the tensor's values (row-major), for writers that rearrange them.
std::vector<float> randomTensorValues(const WeightTensor &tensor, uint64_t seed);

} // namespace tfm

#endif // TFM_WEIGHTS_RANDOMVALUES_H
