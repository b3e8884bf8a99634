//===- WeightTensors.cpp - The tensors of a model and their init ----------===//
#include "WeightTensors.h"

#include "tfm/common/Failure.h"
#include "tfm/common/TensorNames.h"

#include <cmath>

using namespace tfm;

int64_t WeightTensor::numElements() const {
  int64_t n = 1;
  for (int64_t d : shape)
    n *= d;
  return n;
}

llvm::Expected<WeightTensor> tfm::weightTensorFor(std::string name,
                                                  std::vector<int64_t> shape) {
  std::optional<TensorId> id = parseTensorName(name);
  WeightTensor t{name, shape, InitKind::Uniform, 0.0};
  if (!id)
    return failure("tensor '" + name +
                                       "': not a tensor name tfm knows (expected llama.cpp's "
                                       "names, e.g. blk.0.attn_q.weight)");
  bool matrix = shape.size() == 2;
  if (id->role == TensorRole::TokenEmbedding)
    t.init = InitKind::UnitNormal;
  else if (id->role == TensorRole::PositionEmbedding || id->role == TensorRole::TokenTypes ||
           id->part == TensorPart::Bias)
    t.bound = 0.1;
  else if (id->role == TensorRole::AttnNorm || id->role == TensorRole::AttnNorm2 ||
           id->role == TensorRole::FfnNorm || id->role == TensorRole::OutputNorm ||
           id->role == TensorRole::TokenEmbeddingNorm || id->role == TensorRole::AttnQNorm ||
           id->role == TensorRole::AttnKNorm || id->role == TensorRole::AttnPostNorm ||
           id->role == TensorRole::FfnPostNorm || id->role == TensorRole::AttnOutputNorm ||
           id->role == TensorRole::LayerOutputNorm || id->role == TensorRole::CrossAttnNorm)
    t.init = InitKind::NormGain;
  else if (matrix)
    t.bound = 1.0 / std::sqrt(double(shape[1]));
  else
    return failure("tensor '" + name + "': a projection weight of shape [" +
                                       std::to_string(shape.front()) +
                                       "], expected a matrix [out, in]");
  return t;
}

std::vector<WeightTensor> tfm::weightTensors(const ModelSpec &spec) {
  std::vector<WeightTensor> tensors;
  for (const ModelTensor &t : modelTensors(spec))
    tensors.push_back(llvm::cantFail(weightTensorFor(t.name, t.shape)));
  return tensors;
}
