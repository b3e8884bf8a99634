//===- WeightTensors.h - The tensors a model config implies -----*- C++ -*-===//
//
// What tensors a model has and how their random values are drawn, independent
// of any file format. A format writer picks the tensors it needs by name and
// lays them out its own way. Names follow GGUF's convention
// ("blk.3.attn_q.weight"). A tensor's initialisation follows from its name
// and shape alone, so the tensor list can come from a compiled model's
// manifest or from a config (both through the one tensor table).
//
//===----------------------------------------------------------------------===//
#ifndef TFM_WEIGHTS_WEIGHTTENSORS_H
#define TFM_WEIGHTS_WEIGHTTENSORS_H

#include "tfm/common/ElementEncoding.h"
#include "tfm/common/ModelSpec.h"

#include "llvm/Support/Error.h"

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace tfm {

/// How a tensor's values are drawn. The scales keep activations of any depth
/// well-conditioned: unit-variance embeddings, projections that preserve the
/// scale of their input, norm gains near one.
enum class InitKind {
  UnitNormal,   // approximately N(0, 1)
  Uniform,      // uniform in [-bound, bound]
  NormGain,     // uniform in [0.9, 1.1]
};

struct WeightTensor {
  std::string name;
  std::vector<int64_t> shape; // row-major; for matrices [out, in]
  InitKind init = InitKind::Uniform;
  double bound = 0.0;         // for Uniform only
  /// Set: the encoding the file must store it in (a compiled model's
  /// manifest says so); else the file type's choice.
  std::optional<ElementEncoding> encoding;

  int64_t numElements() const;
};

/// The initialisation of tensor `name` of `shape`, from its role in the
/// tensor table (tfm/common/TensorNames.h): unit-normal token embeddings,
/// small position embeddings and biases (uniform in +-0.1), norm gains near
/// one, matrices [out, in] uniform in +-1/sqrt(in). An error names a tensor
/// the table does not know.
llvm::Expected<WeightTensor> weightTensorFor(std::string name, std::vector<int64_t> shape);

/// Every tensor of `spec`'s model (tfm::modelTensors), with its initialisation.
std::vector<WeightTensor> weightTensors(const ModelSpec &spec);

} // namespace tfm

#endif // TFM_WEIGHTS_WEIGHTTENSORS_H
