//===- WeightTensors.cpp - The tensors of a model and their init ----------===//
#include "WeightTensors.h"

#include "llvm/ADT/StringRef.h"

#include <cmath>

using namespace tfm;

int64_t WeightTensor::numElements() const {
  int64_t n = 1;
  for (int64_t d : shape)
    n *= d;
  return n;
}

std::string tfm::layerTensorName(int64_t layer, const char *suffix) {
  return "blk." + std::to_string(layer) + "." + suffix;
}

llvm::Expected<WeightTensor> tfm::weightTensorFor(std::string name,
                                                  std::vector<int64_t> shape) {
  llvm::StringRef n = name;
  WeightTensor t{name, shape, InitKind::Uniform, 0.0};
  if (n == "token_embd.weight")
    t.init = InitKind::UnitNormal;
  else if (n == "position_embd.weight" || n.ends_with(".bias"))
    t.bound = 0.1;
  else if (n.ends_with("_norm.weight"))
    t.init = InitKind::NormGain;
  else if (n.ends_with(".weight") && shape.size() == 2)
    t.bound = 1.0 / std::sqrt(double(shape[1]));
  else
    return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                   "tensor '" + name +
                                       "': no initialisation for it (expected an embedding, "
                                       "a norm, a bias or a [out, in] matrix)");
  return t;
}

std::vector<WeightTensor> tfm::llamaWeightTensors(const ModelSpec &s) {
  std::vector<std::pair<std::string, std::vector<int64_t>>> shapes;
  shapes.push_back({"token_embd.weight", {s.vocabSize, s.dim}});
  for (int64_t l = 0; l < s.nLayers; ++l) {
    auto add = [&](const char *suffix, std::vector<int64_t> shape) {
      shapes.push_back({layerTensorName(l, suffix), std::move(shape)});
    };
    add("attn_norm.weight", {s.dim});
    add("attn_q.weight", {s.qDim(), s.dim});
    add("attn_k.weight", {s.kvDim(), s.dim});
    add("attn_v.weight", {s.kvDim(), s.dim});
    add("attn_output.weight", {s.dim, s.qDim()});
    add("ffn_norm.weight", {s.dim});
    add("ffn_gate.weight", {s.hiddenDim, s.dim});
    add("ffn_down.weight", {s.dim, s.hiddenDim});
    add("ffn_up.weight", {s.hiddenDim, s.dim});
  }
  shapes.push_back({"output_norm.weight", {s.dim}});
  if (!s.tiedEmbeddings)
    shapes.push_back({"output.weight", {s.vocabSize, s.dim}});
  std::vector<WeightTensor> tensors;
  for (auto &[name, shape] : shapes)
    tensors.push_back(llvm::cantFail(weightTensorFor(name, shape)));
  return tensors;
}
