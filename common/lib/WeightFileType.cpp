//===- WeightFileType.cpp - What a file type means for each tensor --------===//
#include "tfm/common/Failure.h"
#include "tfm/common/WeightFileType.h"

#include "tfm/common/TensorNames.h"

#include "llvm/ADT/StringRef.h"

using namespace tfm;

namespace {

struct KnownType {
  const char *name;
  const char *encoding; // of most matrices
  bool mix;
  int llamaFileType; // -1: llama.cpp has none (its q4_K_S and q5_K_S are mixes)
};

constexpr KnownType kTypes[] = {
    {"f32", "f32", false, 0},    {"f16", "f16", false, 1},    {"bf16", "bf16", false, 32},
    {"q8_0", "q8_0", false, 7},  {"q4_0", "q4_0", false, 2},  {"q4_k", "q4_k", false, -1},
    {"q5_k", "q5_k", false, -1}, {"q6_k", "q6_k", false, 18}, {"q4_k_m", "q4_k", true, 15},
    {"q5_k_m", "q5_k", true, 17},
};

/// llama.cpp's choice of layers that get more bits in the k-quant mixes.
bool moreBits(int64_t layer, int64_t nLayers) {
  return layer < nLayers / 8 || layer >= 7 * nLayers / 8 || (layer - nLayers / 8) % 3 == 2;
}

/// The layer of "blk.N.*", or -1.
int64_t layerOf(llvm::StringRef name) {
  int64_t layer;
  if (!name.consume_front("blk.") || name.consumeInteger(10, layer) || !name.starts_with("."))
    return -1;
  return layer;
}

ElementEncoding block(BlockFormat format) { return ElementEncoding{DType::F32, format}; }

} // namespace

const char *const tfm::kWeightFileTypeNames =
    "f32, f16, bf16, q8_0, q4_0, q4_k, q5_k, q6_k, q4_k_m, q5_k_m";

std::optional<WeightFileType> tfm::parseWeightFileType(const std::string &name) {
  for (const KnownType &known : kTypes)
    if (name == known.name)
      return WeightFileType{name, *parseElementEncoding(known.encoding), known.mix};
  return std::nullopt;
}

std::optional<uint32_t> WeightFileType::llamaFileType() const {
  for (const KnownType &known : kTypes)
    if (name == known.name && known.llamaFileType >= 0)
      return static_cast<uint32_t>(known.llamaFileType);
  return std::nullopt;
}

ElementEncoding tfm::tensorEncoding(const WeightFileType &type, const std::string &name,
                                    const std::vector<int64_t> &shape, int64_t nLayers,
                                    bool tiedHead, std::string &fallback) {
  fallback.clear();
  // Vectors (norm gains, biases) stay f32 in every type, as llama.cpp's
  // converters write them: ggml's CPU ops refuse an f16 norm weight.
  if (!type.matrices.block)
    return shape.size() == 2 ? type.matrices : ElementEncoding{};
  llvm::StringRef n(name);
  // As llama.cpp: vectors and the learned position table stay f32.
  if (shape.size() != 2 || n == "position_embd.weight")
    return ElementEncoding{};
  ElementEncoding encoding = type.matrices;
  if (type.kQuantMix) {
    bool fourBit = *type.matrices.block == BlockFormat::Q4_K;
    int64_t layer = layerOf(n);
    if (n == "output.weight" || (tiedHead && n == "token_embd.weight"))
      encoding = block(BlockFormat::Q6_K);
    else if ((n.ends_with(".attn_v.weight") || n.ends_with(".ffn_down.weight")) &&
             moreBits(layer, nLayers))
      encoding = block(BlockFormat::Q6_K);
    else if (n.ends_with(".attn_qkv.weight"))
      encoding = block(fourBit ? BlockFormat::Q5_K : BlockFormat::Q6_K);
  }
  const BlockLayout &layout = blockLayout(*encoding.block);
  if (shape[1] % layout.blockElements == 0)
    return encoding;
  bool blocksOf32 = shape[1] % 32 == 0;
  ElementEncoding fitting = blocksOf32 ? block(BlockFormat::Q8_0) : ElementEncoding{DType::F16};
  fallback = "tensor '" + name + "': rows of " + std::to_string(shape[1]) +
             " elements are not a multiple of " + layout.name + "'s block of " +
             std::to_string(layout.blockElements);
  return fitting;
}

llvm::Expected<WeightTypes> tfm::compiledWeightTypes(const ModelSpec &spec,
                                                     const WeightFileType &type) {
  WeightTypes types;
  for (const ModelTensor &t : modelTensors(spec)) {
    std::string fallback;
    ElementEncoding encoding =
        tensorEncoding(type, t.name, t.shape, spec.nLayers, spec.tiedEmbeddings, fallback);
    if (!fallback.empty())
      return failure("--dtype " + type.name + ": " + fallback +
                                     "; compile for a type whose blocks fit (q8_0 and q4_0 "
                                     "take rows of 32), or for the types of a weight file "
                                     "that has them (--weights-like FILE)");
    if (encoding != ElementEncoding{})
      types[t.name] = encoding;
  }
  return types;
}
