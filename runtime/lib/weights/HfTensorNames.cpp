//===- HfTensorNames.cpp - Hugging Face names of manifest tensors ---------===//
#include "tfm/runtime/HfTensorNames.h"

using namespace tfm::rt;

namespace {

/// One tensor kind: the manifest's stem ("attn_q" in blk.N.attn_q.weight)
/// and the Hugging Face module that holds it. `weightLayout` applies to the
/// ".weight" tensor; biases of permuted projections are permuted too.
struct KindName {
  const char *manifest;
  const char *hf;
  HfLayout weightLayout;
};

struct FamilyNames {
  const char *family;
  const char *layerPrefix;      // "h." for "h.N.<module>"
  const char *optionalPrefix;   // also accepted in front of every name, or ""
  std::vector<KindName> global; // outside the layers
  std::vector<KindName> layer;  // per layer
};

const std::vector<FamilyNames> &families() {
  static const std::vector<FamilyNames> table = {
      {"gpt2", "h.", "transformer.",
       {{"token_embd", "wte", HfLayout::Same},
        {"position_embd", "wpe", HfLayout::Same},
        {"output_norm", "ln_f", HfLayout::Same},
        {"output", "lm_head", HfLayout::Same}},
       {{"attn_norm", "ln_1", HfLayout::Same},
        {"attn_qkv", "attn.c_attn", HfLayout::Transposed},
        {"attn_output", "attn.c_proj", HfLayout::Transposed},
        {"ffn_norm", "ln_2", HfLayout::Same},
        {"ffn_up", "mlp.c_fc", HfLayout::Transposed},
        {"ffn_down", "mlp.c_proj", HfLayout::Transposed}}},
      {"llama", "model.layers.", "",
       {{"token_embd", "model.embed_tokens", HfLayout::Same},
        {"output_norm", "model.norm", HfLayout::Same},
        {"output", "lm_head", HfLayout::Same}},
       {{"attn_norm", "input_layernorm", HfLayout::Same},
        {"attn_q", "self_attn.q_proj", HfLayout::RopePermuted},
        {"attn_k", "self_attn.k_proj", HfLayout::RopePermuted},
        {"attn_v", "self_attn.v_proj", HfLayout::Same},
        {"attn_output", "self_attn.o_proj", HfLayout::Same},
        {"ffn_norm", "post_attention_layernorm", HfLayout::Same},
        {"ffn_gate", "mlp.gate_proj", HfLayout::Same},
        {"ffn_up", "mlp.up_proj", HfLayout::Same},
        {"ffn_down", "mlp.down_proj", HfLayout::Same}}},
  };
  return table;
}

llvm::Error failure(const std::string &message) {
  return llvm::createStringError(llvm::inconvertibleErrorCode(), message);
}

} // namespace

llvm::Expected<HfTensorName> tfm::rt::hfTensorName(const ModelSpec &config,
                                                   llvm::StringRef manifestName) {
  const FamilyNames *family = nullptr;
  for (const FamilyNames &f : families())
    if (config.family == f.family)
      family = &f;
  if (!family)
    return failure("model family '" + config.family +
                   "' has no Hugging Face tensor names here (known: gpt2, llama)");

  llvm::StringRef stem = manifestName;
  llvm::StringRef suffix;
  if (stem.consume_back(".weight"))
    suffix = ".weight";
  else if (stem.consume_back(".bias"))
    suffix = ".bias";
  std::string layer;
  bool wellFormed = !suffix.empty();
  if (stem.consume_front("blk.")) {
    auto [index, rest] = stem.split('.');
    unsigned n;
    wellFormed &= !index.getAsInteger(10, n);
    layer = index.str();
    stem = rest;
  }
  const std::vector<KindName> &kinds = layer.empty() ? family->global : family->layer;
  for (const KindName &k : kinds) {
    if (!wellFormed || stem != k.manifest)
      continue;
    std::string name = (layer.empty() ? std::string() : family->layerPrefix + layer + ".") +
                       k.hf + suffix.str();
    HfTensorName out;
    out.names.push_back(name);
    if (*family->optionalPrefix)
      out.names.push_back(family->optionalPrefix + name);
    if (suffix == ".weight" || k.weightLayout == HfLayout::RopePermuted)
      out.layout = k.weightLayout;
    return out;
  }
  return failure("tensor '" + manifestName.str() + "' has no Hugging Face name in the " +
                 config.family + " table");
}

int64_t tfm::rt::ropeHfRow(int64_t manifestRow, int64_t headDim) {
  int64_t head = manifestRow / headDim;
  int64_t within = manifestRow % headDim;
  return head * headDim + (within % 2) * (headDim / 2) + within / 2;
}
