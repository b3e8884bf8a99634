//===- TensorNames.cpp - The one table of weight tensor names -------------===//
#include "tfm/common/TensorNames.h"

#include <iterator>

using namespace tfm;

namespace {

llvm::Error failure(const std::string &message) {
  return llvm::createStringError(llvm::inconvertibleErrorCode(), message);
}

/// The families with Hugging Face names, in the order of RoleRow::hf.
struct FamilyNames {
  const char *family;
  const char *layerPrefix;    // "h." for "h.N.<module>"
  const char *optionalPrefix; // also accepted in front of every name, or ""
};
constexpr FamilyNames kFamilies[] = {
    {"llama", "model.layers.", ""},
    {"gpt2", "h.", "transformer."},
};
constexpr size_t kFamilyCount = std::size(kFamilies);

/// A role's Hugging Face module in one family (null: the family has none).
/// `layout` applies to the ".weight" tensor; biases of permuted projections
/// are permuted too.
struct HfModule {
  const char *module;
  HfLayout layout;
};

struct RoleRow {
  TensorRole role;
  const char *stem;
  bool perLayer;
  const char *kernelRole; // the kernel a projection of this role feeds, or ""
  HfModule hf[kFamilyCount];
};

constexpr HfModule kNone{nullptr, HfLayout::Same};

// One row per TensorRole, in enum order.
constexpr RoleRow kRoles[] = {
    {TensorRole::TokenEmbedding, "token_embd", false, "logits",
     {{"model.embed_tokens", HfLayout::Same}, {"wte", HfLayout::Same}}},
    {TensorRole::PositionEmbedding, "position_embd", false, "", {kNone, {"wpe", HfLayout::Same}}},
    {TensorRole::AttnNorm, "attn_norm", true, "",
     {{"input_layernorm", HfLayout::Same}, {"ln_1", HfLayout::Same}}},
    {TensorRole::AttnQ, "attn_q", true, "attn_in",
     {{"self_attn.q_proj", HfLayout::RopePermuted}, kNone}},
    {TensorRole::AttnK, "attn_k", true, "attn_in",
     {{"self_attn.k_proj", HfLayout::RopePermuted}, kNone}},
    {TensorRole::AttnV, "attn_v", true, "attn_in", {{"self_attn.v_proj", HfLayout::Same}, kNone}},
    {TensorRole::AttnQkv, "attn_qkv", true, "attn_in",
     {kNone, {"attn.c_attn", HfLayout::Transposed}}},
    {TensorRole::AttnOutput, "attn_output", true, "attn_out",
     {{"self_attn.o_proj", HfLayout::Same}, {"attn.c_proj", HfLayout::Transposed}}},
    {TensorRole::FfnNorm, "ffn_norm", true, "",
     {{"post_attention_layernorm", HfLayout::Same}, {"ln_2", HfLayout::Same}}},
    {TensorRole::FfnGate, "ffn_gate", true, "ffn_in", {{"mlp.gate_proj", HfLayout::Same}, kNone}},
    {TensorRole::FfnUp, "ffn_up", true, "ffn_in",
     {{"mlp.up_proj", HfLayout::Same}, {"mlp.c_fc", HfLayout::Transposed}}},
    {TensorRole::FfnDown, "ffn_down", true, "ffn_out",
     {{"mlp.down_proj", HfLayout::Same}, {"mlp.c_proj", HfLayout::Transposed}}},
    {TensorRole::OutputNorm, "output_norm", false, "",
     {{"model.norm", HfLayout::Same}, {"ln_f", HfLayout::Same}}},
    {TensorRole::Output, "output", false, "logits",
     {{"lm_head", HfLayout::Same}, {"lm_head", HfLayout::Same}}},
};

constexpr bool rolesInEnumOrder() {
  for (size_t i = 0; i < std::size(kRoles); ++i)
    if (static_cast<size_t>(kRoles[i].role) != i)
      return false;
  return true;
}
static_assert(rolesInEnumOrder() && std::size(kRoles) == size_t(TensorRole::Output) + 1,
              "kRoles has one row per TensorRole, in enum order");

const RoleRow &row(TensorRole role) { return kRoles[static_cast<size_t>(role)]; }

const char *partSuffix(TensorPart part) { return part == TensorPart::Weight ? "weight" : "bias"; }

} // namespace

std::string TensorId::name() const {
  std::string name = layer >= 0 ? "blk." + std::to_string(layer) + "." : "";
  return name + row(role).stem + "." + partSuffix(part);
}

std::optional<TensorId> tfm::parseTensorName(llvm::StringRef name) {
  TensorId id;
  if (name.consume_back(".weight"))
    id.part = TensorPart::Weight;
  else if (name.consume_back(".bias"))
    id.part = TensorPart::Bias;
  else
    return std::nullopt;
  if (name.consume_front("blk.")) {
    auto [index, stem] = name.split('.');
    unsigned layer;
    if (index.getAsInteger(10, layer))
      return std::nullopt;
    id.layer = layer;
    name = stem;
  }
  for (const RoleRow &r : kRoles)
    if (name == r.stem && r.perLayer == (id.layer >= 0)) {
      id.role = r.role;
      return id;
    }
  return std::nullopt;
}

llvm::StringRef tfm::roleStem(TensorRole role) { return row(role).stem; }

bool tfm::isLayerRole(TensorRole role) { return row(role).perLayer; }

llvm::StringRef tfm::kernelRoleOf(TensorRole role) { return row(role).kernelRole; }

std::vector<ModelTensor> tfm::modelTensors(const ModelSpec &spec) {
  std::vector<ModelTensor> tensors;
  auto add = [&](TensorRole role, int64_t layer, TensorPart part, std::vector<int64_t> shape) {
    TensorId id{role, layer, part};
    tensors.push_back({id, id.name(), std::move(shape)});
  };
  bool layerNorm = spec.norm == "layer_norm";
  auto norm = [&](TensorRole role, int64_t layer) {
    add(role, layer, TensorPart::Weight, {spec.dim});
    if (layerNorm)
      add(role, layer, TensorPart::Bias, {spec.dim});
  };
  auto projection = [&](TensorRole role, int64_t layer, int64_t out, int64_t in) {
    add(role, layer, TensorPart::Weight, {out, in});
    if (spec.projectionBias)
      add(role, layer, TensorPart::Bias, {out});
  };

  add(TensorRole::TokenEmbedding, -1, TensorPart::Weight, {spec.vocabSize, spec.dim});
  if (spec.positions == "learned")
    add(TensorRole::PositionEmbedding, -1, TensorPart::Weight, {spec.contextLength, spec.dim});
  for (int64_t l = 0; l < spec.nLayers; ++l) {
    norm(TensorRole::AttnNorm, l);
    if (spec.fusedQkv()) {
      projection(TensorRole::AttnQkv, l, spec.qDim() + 2 * spec.kvDim(), spec.dim);
    } else {
      projection(TensorRole::AttnQ, l, spec.qDim(), spec.dim);
      projection(TensorRole::AttnK, l, spec.kvDim(), spec.dim);
      projection(TensorRole::AttnV, l, spec.kvDim(), spec.dim);
    }
    projection(TensorRole::AttnOutput, l, spec.dim, spec.qDim());
    norm(TensorRole::FfnNorm, l);
    if (spec.gatedFfn())
      projection(TensorRole::FfnGate, l, spec.hiddenDim, spec.dim);
    projection(TensorRole::FfnUp, l, spec.hiddenDim, spec.dim);
    projection(TensorRole::FfnDown, l, spec.dim, spec.hiddenDim);
  }
  norm(TensorRole::OutputNorm, -1);
  if (!spec.tiedEmbeddings) // the output head has no bias in either family
    add(TensorRole::Output, -1, TensorPart::Weight, {spec.vocabSize, spec.dim});
  return tensors;
}

llvm::ArrayRef<TensorRole> tfm::llama2cLayerOrder() {
  static const TensorRole order[] = {TensorRole::AttnNorm,  TensorRole::AttnQ,
                                     TensorRole::AttnK,     TensorRole::AttnV,
                                     TensorRole::AttnOutput, TensorRole::FfnNorm,
                                     TensorRole::FfnGate,   TensorRole::FfnDown,
                                     TensorRole::FfnUp};
  return order;
}

llvm::Expected<HfTensorName> tfm::hfTensorName(const ModelSpec &config,
                                               llvm::StringRef manifestName) {
  size_t family = 0;
  while (family < kFamilyCount && config.family != kFamilies[family].family)
    ++family;
  if (family == kFamilyCount)
    return failure("model family '" + config.family +
                   "' has no Hugging Face tensor names here (known: llama, gpt2)");
  std::optional<TensorId> id = parseTensorName(manifestName);
  const HfModule *module = id ? &row(id->role).hf[family] : nullptr;
  if (!module || !module->module)
    return failure("tensor '" + manifestName.str() + "' has no Hugging Face name in the " +
                   config.family + " table");
  const FamilyNames &names = kFamilies[family];
  std::string name = (id->layer >= 0 ? names.layerPrefix + std::to_string(id->layer) + "." : "") +
                     module->module + "." + partSuffix(id->part);
  HfTensorName out;
  out.names.push_back(name);
  if (*names.optionalPrefix)
    out.names.push_back(names.optionalPrefix + name);
  if (id->part == TensorPart::Weight || module->layout == HfLayout::RopePermuted)
    out.layout = module->layout;
  return out;
}

int64_t tfm::ropeHfRow(int64_t manifestRow, int64_t headDim) {
  int64_t head = manifestRow / headDim;
  int64_t within = manifestRow % headDim;
  return head * headDim + (within % 2) * (headDim / 2) + within / 2;
}
