//===- Llama2cWriter.cpp - llama2.c checkpoint layout ----------------------===//
#include "Llama2cWriter.h"

#include "RandomValues.h"

#include "tfm/common/TensorNames.h"

#include "llvm/Support/raw_ostream.h"

#include <cmath>
#include <limits>
#include <map>

using namespace tfm;

namespace {

bool fitsInt32(int64_t v) { return v <= std::numeric_limits<int32_t>::max(); }

/// The tensors in file order, looked up by name so that the model's tensor
/// list stays the single source of shapes and initialisation.
std::vector<const WeightTensor *> fileOrder(const ModelSpec &s,
                                            const std::vector<WeightTensor> &tensors,
                                            std::string &error) {
  std::map<std::string, const WeightTensor *> byName;
  for (const WeightTensor &t : tensors)
    byName[t.name] = &t;
  std::vector<std::string> names{TensorId{TensorRole::TokenEmbedding}.name()};
  for (TensorRole role : llama2cLayerOrder())
    for (int64_t l = 0; l < s.nLayers; ++l)
      names.push_back(TensorId{role, l}.name());
  names.push_back(TensorId{TensorRole::OutputNorm}.name());
  std::vector<const WeightTensor *> order;
  for (const std::string &name : names) {
    auto it = byName.find(name);
    if (it == byName.end()) {
      error = "llama2c format: the model has no tensor '" + name + "'";
      return {};
    }
    order.push_back(it->second);
  }
  return order;
}

const WeightTensor *untiedHead(const std::vector<WeightTensor> &tensors) {
  for (const WeightTensor &t : tensors)
    if (t.name == TensorId{TensorRole::Output}.name())
      return &t;
  return nullptr;
}

void writeInt32(llvm::raw_ostream &os, int64_t v) {
  int32_t i = static_cast<int32_t>(v);
  os.write(reinterpret_cast<const char *>(&i), sizeof i);
}

/// RoPE tables as export.py writes them: cos and sin of pos * theta^(-2i/hd).
/// The runtime recomputes them, but readers of the format expect the bytes.
void writeRopeTable(const ModelSpec &s, bool imaginary, llvm::raw_ostream &os,
                    rt::Progress &progress) {
  int64_t half = s.headDim / 2;
  std::vector<float> row(half);
  for (int64_t pos = 0; pos < s.contextLength; ++pos) {
    for (int64_t i = 0; i < half; ++i) {
      double freq = std::pow(s.ropeTheta, -2.0 * double(i) / double(s.headDim));
      double angle = double(pos) * freq;
      row[i] = static_cast<float>(imaginary ? std::sin(angle) : std::cos(angle));
    }
    os.write(reinterpret_cast<const char *>(row.data()), row.size() * sizeof(float));
    progress.advance(row.size() * sizeof(float));
  }
}

} // namespace

std::string tfm::llama2cUnsupportedReason(const ModelSpec &s, const std::string &configPath) {
  if (s.family != Family::Llama)
    return configPath + ": model_type '" + variantName(s.family) +
           "' cannot be written in the llama2c format, which holds Llama-family models only";
  if (s.headDim * s.nHeads != s.dim)
    return configPath + ": field 'head_dim': found " + std::to_string(s.headDim) +
           ", expected hidden_size / num_attention_heads = " + std::to_string(s.dim / s.nHeads) +
           " for the llama2c format, whose header has no head_dim";
  const std::pair<const char *, int64_t> headerFields[] = {
      {"hidden_size", s.dim},        {"intermediate_size", s.hiddenDim},
      {"num_hidden_layers", s.nLayers}, {"num_attention_heads", s.nHeads},
      {"num_key_value_heads", s.nKvHeads}, {"vocab_size", s.vocabSize},
      {"max_position_embeddings", s.contextLength}};
  for (const auto &[field, value] : headerFields)
    if (!fitsInt32(value))
      return configPath + ": field '" + field + "': found " + std::to_string(value) +
             ", expected at most 2147483647 for the llama2c format's int32 header";
  return "";
}

uint64_t tfm::llama2cFileBytes(const ModelSpec &s, const std::vector<WeightTensor> &tensors) {
  uint64_t floats = 2 * uint64_t(s.contextLength) * uint64_t(s.headDim / 2);
  for (const WeightTensor &t : tensors)
    floats += uint64_t(t.numElements());
  return 7 * sizeof(int32_t) + floats * sizeof(float);
}

std::string tfm::writeLlama2c(const ModelSpec &s, const std::vector<WeightTensor> &tensors,
                              uint64_t seed, llvm::raw_fd_ostream &os) {
  std::string error;
  std::vector<const WeightTensor *> order = fileOrder(s, tensors, error);
  if (!error.empty())
    return error;
  const WeightTensor *head = untiedHead(tensors);
  if ((head != nullptr) == s.tiedEmbeddings)
    return "llama2c format: tie_word_embeddings is " +
           std::string(s.tiedEmbeddings ? "true" : "false") + " but the model " +
           (head ? "has" : "lacks") + " an 'output.weight' tensor";

  rt::Progress progress("writing weights", llama2cFileBytes(s, tensors));
  for (int64_t field : {s.dim, s.hiddenDim, s.nLayers, s.nHeads, s.nKvHeads})
    writeInt32(os, field);
  writeInt32(os, s.tiedEmbeddings ? s.vocabSize : -s.vocabSize);
  writeInt32(os, s.contextLength);

  for (const WeightTensor *t : order) {
    streamRandomTensor(*t, seed, ElementEncoding{}, os, progress);
    if (os.has_error())
      return "write failed in tensor '" + t->name + "'";
  }
  writeRopeTable(s, /*imaginary=*/false, os, progress);
  writeRopeTable(s, /*imaginary=*/true, os, progress);
  if (head)
    streamRandomTensor(*head, seed, ElementEncoding{}, os, progress);
  return "";
}
