//===- WeightTensors.cpp - The tensors of a Llama-family model ------------===//
#include "WeightTensors.h"

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

namespace {

WeightTensor projection(std::string name, int64_t out, int64_t in) {
  return {std::move(name), {out, in}, InitKind::Uniform, 1.0 / std::sqrt(double(in))};
}

WeightTensor normGain(std::string name, int64_t dim) {
  return {std::move(name), {dim}, InitKind::NormGain, 0.0};
}

} // namespace

std::vector<WeightTensor> tfm::llamaWeightTensors(const ModelSpec &s) {
  std::vector<WeightTensor> t;
  t.push_back({"token_embd.weight", {s.vocabSize, s.dim}, InitKind::UnitNormal, 0.0});
  for (int64_t l = 0; l < s.nLayers; ++l) {
    t.push_back(normGain(layerTensorName(l, "attn_norm.weight"), s.dim));
    t.push_back(projection(layerTensorName(l, "attn_q.weight"), s.qDim(), s.dim));
    t.push_back(projection(layerTensorName(l, "attn_k.weight"), s.kvDim(), s.dim));
    t.push_back(projection(layerTensorName(l, "attn_v.weight"), s.kvDim(), s.dim));
    t.push_back(projection(layerTensorName(l, "attn_output.weight"), s.dim, s.qDim()));
    t.push_back(normGain(layerTensorName(l, "ffn_norm.weight"), s.dim));
    t.push_back(projection(layerTensorName(l, "ffn_gate.weight"), s.hiddenDim, s.dim));
    t.push_back(projection(layerTensorName(l, "ffn_down.weight"), s.dim, s.hiddenDim));
    t.push_back(projection(layerTensorName(l, "ffn_up.weight"), s.hiddenDim, s.dim));
  }
  t.push_back(normGain("output_norm.weight", s.dim));
  if (!s.tiedEmbeddings)
    t.push_back(projection("output.weight", s.vocabSize, s.dim));
  return t;
}
