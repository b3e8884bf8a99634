//===- TensorNames.cpp - The one table of weight tensor names -------------===//
#include "tfm/common/Failure.h"
#include "tfm/common/TensorNames.h"

#include <iterator>

using namespace tfm;

namespace {

/// The families with Hugging Face names of their own, in the order of
/// RoleRow::hf; namesOf gives the others'.
struct FamilyNames {
  Family family;
  const char *layerPrefix;    // "h." for "h.N.<module>"
  const char *optionalPrefix; // also accepted in front of every name, or ""
                              // (RoBERTa's: "roberta.", optionalPrefixOf)
};
constexpr FamilyNames kFamilies[] = {
    {Family::Llama, "model.layers.", ""},
    {Family::Gpt2, "h.", "transformer."},
    {Family::Bloom, "h.", "transformer."},
    {Family::Mpt, "transformer.blocks.", ""},
    {Family::GptNeox, "gpt_neox.layers.", ""},
    {Family::Falcon, "transformer.h.", ""},
    {Family::Phi3, "model.layers.", ""},
    {Family::Gemma2, "model.layers.", ""},
    {Family::Bert, "encoder.layer.", "bert."},
};
constexpr size_t kFamilyCount = std::size(kFamilies);

/// A role's Hugging Face module in one family (null: the family has none).
/// `layout` applies to the ".weight" tensor; biases of permuted projections
/// are permuted too. `alias`: another module name a file may use.
struct HfModule {
  const char *module;
  HfLayout layout;
  const char *alias = nullptr;
};

struct RoleRow {
  TensorRole role;
  const char *stem;
  bool perLayer;
  const char *kernelRole; // the kernel a projection of this role feeds, or ""
  HfModule hf[kFamilyCount];
  /// The stem inside an encoder-decoder's stacks, where llama.cpp's T5
  /// names differ (attn_o); null: `stem`.
  const char *stackedStem = nullptr;
};

constexpr HfModule kNone{nullptr, HfLayout::Same};
constexpr HfLayout kSame = HfLayout::Same, kT = HfLayout::Transposed,
                   kRope = HfLayout::RopePermuted, kGrouped = HfLayout::QkvGrouped;

// One row per TensorRole, in enum order; columns as kFamilies.
constexpr RoleRow kRoles[] = {
    {TensorRole::TokenEmbedding, "token_embd", false, "logits",
     {{"model.embed_tokens", kSame}, {"wte", kSame}, {"word_embeddings", kSame},
      {"transformer.wte", kSame}, {"gpt_neox.embed_in", kSame},
      {"transformer.word_embeddings", kSame}, {"model.embed_tokens", kSame}, {"model.embed_tokens", kSame},
      {"embeddings.word_embeddings", kSame}}},
    {TensorRole::PositionEmbedding, "position_embd", false, "",
     {kNone, {"wpe", kSame}, kNone, kNone, kNone, kNone, kNone, kNone,
      {"embeddings.position_embeddings", kSame}}},
    {TensorRole::TokenTypes, "token_types", false, "",
     {kNone, kNone, kNone, kNone, kNone, kNone, kNone, kNone,
      {"embeddings.token_type_embeddings", kSame}}},
    {TensorRole::TokenEmbeddingNorm, "token_embd_norm", false, "",
     {kNone, kNone, {"word_embeddings_layernorm", kSame}, kNone, kNone, kNone, kNone, kNone,
      {"embeddings.LayerNorm", kSame}}},
    // Falcon's two-norm blocks (ln_attn, ln_mlp) name them as llama.cpp's
    // converter does: attn_norm is the feed-forward's ln_mlp (one-norm
    // blocks' input_layernorm feeds both), attn_norm_2 the attention's.
    {TensorRole::AttnNorm, "attn_norm", true, "",
     {{"input_layernorm", kSame}, {"ln_1", kSame}, {"input_layernorm", kSame},
      {"norm_1", kSame}, {"input_layernorm", kSame},
      {"input_layernorm", kSame, "ln_mlp"}, {"input_layernorm", kSame}, {"input_layernorm", kSame}}},
    {TensorRole::AttnNorm2, "attn_norm_2", true, "",
     {kNone, kNone, kNone, kNone, kNone, {"ln_attn", kSame}, kNone, kNone}},
    {TensorRole::AttnQ, "attn_q", true, "attn_in",
     {{"self_attn.q_proj", kRope}, kNone, kNone, kNone, kNone, kNone, kNone, {"self_attn.q_proj", kSame},
      {"attention.self.query", kSame}}},
    {TensorRole::AttnK, "attn_k", true, "attn_in",
     {{"self_attn.k_proj", kRope}, kNone, kNone, kNone, kNone, kNone, kNone, {"self_attn.k_proj", kSame},
      {"attention.self.key", kSame}}},
    {TensorRole::AttnV, "attn_v", true, "attn_in",
     {{"self_attn.v_proj", kSame}, kNone, kNone, kNone, kNone, kNone, kNone, {"self_attn.v_proj", kSame},
      {"attention.self.value", kSame}}},
    {TensorRole::AttnQkv, "attn_qkv", true, "attn_in",
     {kNone, {"attn.c_attn", kT}, {"self_attention.query_key_value", kGrouped},
      {"attn.Wqkv", kSame}, {"attention.query_key_value", kGrouped},
      {"self_attention.query_key_value", kGrouped}, {"self_attn.qkv_proj", kSame}, kNone}},
    // Qwen 3's RMSNorm of each head of q and of k, [head_dim].
    {TensorRole::AttnQNorm, "attn_q_norm", true, "",
     {{"self_attn.q_norm", kSame}, kNone, kNone, kNone, kNone, kNone, kNone, {"self_attn.q_norm", kSame}}},
    {TensorRole::AttnKNorm, "attn_k_norm", true, "",
     {{"self_attn.k_norm", kSame}, kNone, kNone, kNone, kNone, kNone, kNone, {"self_attn.k_norm", kSame}}},
    {TensorRole::AttnOutput, "attn_output", true, "attn_out",
     {{"self_attn.o_proj", kSame}, {"attn.c_proj", kT}, {"self_attention.dense", kSame},
      {"attn.out_proj", kSame}, {"attention.dense", kSame}, {"self_attention.dense", kSame}, {"self_attn.o_proj", kSame}, {"self_attn.o_proj", kSame},
      {"attention.output.dense", kSame}},
     "attn_o"},
        // Gemma's norms of the attention's and the feed-forward's outputs (its
    // post_attention_layernorm is not Llama's, which normalises the
    // feed-forward's input: Gemma's pre_feedforward_layernorm).
    {TensorRole::AttnPostNorm, "post_attention_norm", true, "",
     {kNone, kNone, kNone, kNone, kNone, kNone, kNone, {"post_attention_layernorm", kSame}}},
    // BERT's post-LN norms, after the attention's and the feed-forward's
    // residual adds.
    {TensorRole::AttnOutputNorm, "attn_output_norm", true, "",
     {kNone, kNone, kNone, kNone, kNone, kNone, kNone, kNone,
      {"attention.output.LayerNorm", kSame}}},
    {TensorRole::FfnNorm, "ffn_norm", true, "",
     {{"post_attention_layernorm", kSame}, {"ln_2", kSame}, {"post_attention_layernorm", kSame},
      {"norm_2", kSame}, {"post_attention_layernorm", kSame},
      {"post_attention_layernorm", kSame}, {"post_attention_layernorm", kSame}, {"pre_feedforward_layernorm", kSame}}},
    {TensorRole::FfnGate, "ffn_gate", true, "ffn_in",
     {{"mlp.gate_proj", kSame}, kNone, kNone, kNone, kNone, kNone, kNone, {"mlp.gate_proj", kSame}}},
    {TensorRole::FfnUp, "ffn_up", true, "ffn_in",
     {{"mlp.up_proj", kSame}, {"mlp.c_fc", kT}, {"mlp.dense_h_to_4h", kSame},
      {"ffn.up_proj", kSame}, {"mlp.dense_h_to_4h", kSame}, {"mlp.dense_h_to_4h", kSame}, {"mlp.gate_up_proj", kSame}, {"mlp.up_proj", kSame},
      {"intermediate.dense", kSame}}},
    {TensorRole::FfnDown, "ffn_down", true, "ffn_out",
     {{"mlp.down_proj", kSame}, {"mlp.c_proj", kT}, {"mlp.dense_4h_to_h", kSame},
      {"ffn.down_proj", kSame}, {"mlp.dense_4h_to_h", kSame}, {"mlp.dense_4h_to_h", kSame}, {"mlp.down_proj", kSame}, {"mlp.down_proj", kSame},
      {"output.dense", kSame}}},
        {TensorRole::FfnPostNorm, "post_ffw_norm", true, "",
     {kNone, kNone, kNone, kNone, kNone, kNone, kNone, {"post_feedforward_layernorm", kSame}}},
    {TensorRole::LayerOutputNorm, "layer_output_norm", true, "",
     {kNone, kNone, kNone, kNone, kNone, kNone, kNone, kNone, {"output.LayerNorm", kSame}}},
    // An encoder-decoder's (Hugging Face's names: t5HfName).
    {TensorRole::AttnRelBias, "attn_rel_b", true, "", {}},
    {TensorRole::CrossAttnNorm, "cross_attn_norm", true, "", {}},
    {TensorRole::CrossAttnQ, "cross_attn_q", true, "cross_in", {}},
    {TensorRole::CrossAttnK, "cross_attn_k", true, "cross_kv", {}},
    {TensorRole::CrossAttnV, "cross_attn_v", true, "cross_kv", {}},
    {TensorRole::CrossAttnOutput, "cross_attn_o", true, "cross_out", {}},
    {TensorRole::OutputNorm, "output_norm", false, "",
     {{"model.norm", kSame}, {"ln_f", kSame}, {"ln_f", kSame}, {"transformer.norm_f", kSame},
      {"gpt_neox.final_layer_norm", kSame}, {"transformer.ln_f", kSame}, {"model.norm", kSame}, {"model.norm", kSame}}},
    {TensorRole::Output, "output", false, "logits",
     {{"lm_head", kSame}, {"lm_head", kSame}, {"lm_head", kSame}, {"lm_head", kSame},
      {"embed_out", kSame}, {"lm_head", kSame}, {"lm_head", kSame}, {"lm_head", kSame}}},
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

/// "enc.", "dec." or "": the prefix of a stack's names.
static const char *stackPrefix(Stack stack) {
  switch (stack) {
  case Stack::Encoder:
    return "enc.";
  case Stack::Decoder:
    return "dec.";
  case Stack::Only:
    break;
  }
  return "";
}

static const char *stemIn(const RoleRow &r, Stack stack) {
  return stack != Stack::Only && r.stackedStem ? r.stackedStem : r.stem;
}

std::string TensorId::name() const {
  std::string name = stackPrefix(stack);
  if (layer >= 0)
    name += "blk." + std::to_string(layer) + ".";
  return name + stemIn(row(role), stack) + "." + partSuffix(part);
}

std::optional<TensorId> tfm::parseTensorName(llvm::StringRef name) {
  TensorId id;
  if (name.consume_back(".weight"))
    id.part = TensorPart::Weight;
  else if (name.consume_back(".bias"))
    id.part = TensorPart::Bias;
  else
    return std::nullopt;
  for (Stack stack : {Stack::Encoder, Stack::Decoder})
    if (name.consume_front(stackPrefix(stack)))
      id.stack = stack;
  if (name.consume_front("blk.")) {
    auto [index, stem] = name.split('.');
    unsigned layer;
    if (index.getAsInteger(10, layer))
      return std::nullopt;
    id.layer = layer;
    name = stem;
  }
  for (const RoleRow &r : kRoles)
    if (name == stemIn(r, id.stack) && r.perLayer == (id.layer >= 0)) {
      id.role = r.role;
      return id;
    }
  return std::nullopt;
}

llvm::StringRef tfm::roleStem(TensorRole role) { return row(role).stem; }

bool tfm::isLayerRole(TensorRole role) { return row(role).perLayer; }

llvm::StringRef tfm::kernelRoleOf(TensorRole role) { return row(role).kernelRole; }

llvm::ArrayRef<RopeFactorTensor> tfm::ropeFactorTensors() {
  static const RopeFactorTensor tensors[] = {
      {"rope_freqs.weight", &ModelSpec::ropeFreqFactors,
       "RoPE frequency factors (Llama 3's scaling)"},
      {"rope_factors_short.weight", &ModelSpec::ropeShortFactors,
       "LongRoPE's short factors (Phi-3)"},
      {"rope_factors_long.weight", &ModelSpec::ropeLongFactors,
       "LongRoPE's long factors (Phi-3)"},
  };
  return tensors;
}

std::vector<ModelTensor> tfm::modelTensors(const ModelSpec &spec) {
  std::vector<ModelTensor> tensors;
  Stack stack = Stack::Only; // of the layers being listed
  auto add = [&](TensorRole role, int64_t layer, TensorPart part, std::vector<int64_t> shape) {
    TensorId id{role, layer, part, layer >= 0 || role == TensorRole::OutputNorm ? stack
                                                                              : Stack::Only};
    tensors.push_back({id, id.name(), std::move(shape)});
  };
  auto norm = [&](TensorRole role, int64_t layer) {
    add(role, layer, TensorPart::Weight, {spec.dim});
    if (spec.normBias)
      add(role, layer, TensorPart::Bias, {spec.dim});
  };
  auto projection = [&](TensorRole role, int64_t layer, int64_t out, int64_t in, bool bias) {
    add(role, layer, TensorPart::Weight, {out, in});
    if (bias)
      add(role, layer, TensorPart::Bias, {out});
  };
  auto layer = [&](int64_t l, bool crossAttention) {
    norm(attnNormRole(spec), l);
    if (spec.parallelNorms == 2)
      norm(ffnNormRole(spec), l);
    if (spec.fusedQkv) {
      projection(TensorRole::AttnQkv, l, spec.qDim() + 2 * spec.kvDim(), spec.dim, spec.qkvBias);
    } else {
      projection(TensorRole::AttnQ, l, spec.qDim(), spec.dim, spec.qkvBias);
      projection(TensorRole::AttnK, l, spec.kvDim(), spec.dim, spec.qkvBias);
      projection(TensorRole::AttnV, l, spec.kvDim(), spec.dim, spec.qkvBias);
    }
    if (spec.qkNorm) {
      add(TensorRole::AttnQNorm, l, TensorPart::Weight, {spec.headDim});
      add(TensorRole::AttnKNorm, l, TensorPart::Weight, {spec.headDim});
    }
    projection(TensorRole::AttnOutput, l, spec.dim, spec.qDim(), spec.attnOutBias);
    if (spec.relativeBuckets > 0 && l == 0) // the stack's one table
      add(TensorRole::AttnRelBias, l, TensorPart::Weight, {spec.relativeBuckets, spec.nHeads});
    if (spec.sandwichNorms)
      norm(TensorRole::AttnPostNorm, l);
    if (crossAttention) {
      norm(TensorRole::CrossAttnNorm, l);
      projection(TensorRole::CrossAttnQ, l, spec.qDim(), spec.dim, spec.qkvBias);
      projection(TensorRole::CrossAttnK, l, spec.kvDim(), spec.dim, spec.qkvBias);
      projection(TensorRole::CrossAttnV, l, spec.kvDim(), spec.dim, spec.qkvBias);
      projection(TensorRole::CrossAttnOutput, l, spec.dim, spec.qDim(), spec.attnOutBias);
    }
    if (!spec.parallelResidual)
      norm(ffnNormRole(spec), l);
    if (spec.fusedGateUp) {
      projection(TensorRole::FfnUp, l, 2 * spec.hiddenDim, spec.dim, spec.ffnBias);
    } else {
      if (spec.ffn == FfnKind::Gated)
        projection(TensorRole::FfnGate, l, spec.hiddenDim, spec.dim, spec.ffnBias);
      projection(TensorRole::FfnUp, l, spec.hiddenDim, spec.dim, spec.ffnBias);
    }
    projection(TensorRole::FfnDown, l, spec.dim, spec.hiddenDim, spec.ffnBias);
    if (spec.sandwichNorms)
      norm(TensorRole::FfnPostNorm, l);
  };

  add(TensorRole::TokenEmbedding, -1, TensorPart::Weight, {spec.vocabSize, spec.dim});
  if (spec.embeddingNorm)
    norm(TensorRole::TokenEmbeddingNorm, -1);
  if (spec.positions == Positions::Learned)
    add(TensorRole::PositionEmbedding, -1, TensorPart::Weight,
        {spec.contextLength + spec.positionOffset, spec.dim});
  if (spec.tokenTypes > 0)
    add(TensorRole::TokenTypes, -1, TensorPart::Weight, {spec.tokenTypes, spec.dim});
  if (spec.encoderDecoder()) { // the encoder's stack and its final norm first
    stack = Stack::Encoder;
    for (int64_t l = 0; l < spec.nEncoderLayers; ++l)
      layer(l, /*crossAttention=*/false);
    if (spec.outputNorm())
      norm(TensorRole::OutputNorm, -1);
    stack = Stack::Decoder;
  }
  for (int64_t l = 0; l < spec.nLayers; ++l)
    layer(l, spec.encoderDecoder());
  if (spec.outputNorm())
    norm(TensorRole::OutputNorm, -1);
  stack = Stack::Only;
  if (!spec.tiedEmbeddings && !spec.encoder())
    add(TensorRole::Output, -1, TensorPart::Weight, {spec.vocabSize, spec.dim});
  if (spec.outputBias) // Marian's final_logits_bias, tied head or not
    add(TensorRole::Output, -1, TensorPart::Bias, {spec.vocabSize});
  return tensors;
}

static Family namesOf(Family family);

/// BERT's and RoBERTa's blocks, whose norms llama.cpp names its own way.
static bool bertNames(Family family) { return namesOf(family) == Family::Bert; }

/// llama.cpp's Falcon graph normalises the attention's input with
/// attn_norm_2 when a block has one, and the feed-forward's with attn_norm.
static bool falconTwoNorms(const ModelSpec &spec) {
  return spec.family == Family::Falcon && spec.parallelNorms == 2;
}

double tfm::storedMinusRead(const ModelSpec &spec, llvm::StringRef manifestName, bool gguf) {
  if (spec.family != Family::Gemma2 && spec.family != Family::Gemma3)
    return 0.0;
  std::optional<TensorId> id = parseTensorName(manifestName);
  if (!id || id->part != TensorPart::Weight)
    return 0.0;
  switch (id->role) {
  case TensorRole::AttnNorm:
  case TensorRole::AttnQNorm:
  case TensorRole::AttnKNorm:
  case TensorRole::AttnPostNorm:
  case TensorRole::FfnNorm:
  case TensorRole::FfnPostNorm:
  case TensorRole::OutputNorm:
    return gguf ? spec.normWeightOffset : spec.normWeightOffset - 1.0;
  case TensorRole::TokenEmbedding:
  case TensorRole::PositionEmbedding:
  case TensorRole::TokenTypes:         // BERT's
  case TensorRole::AttnRelBias:        // T5's
  case TensorRole::CrossAttnNorm:
  case TensorRole::CrossAttnQ:
  case TensorRole::CrossAttnK:
  case TensorRole::CrossAttnV:
  case TensorRole::CrossAttnOutput:
  case TensorRole::AttnOutputNorm:
  case TensorRole::LayerOutputNorm:
  case TensorRole::TokenEmbeddingNorm: // no Gemma tensor
  case TensorRole::AttnNorm2:          // Falcon's
  case TensorRole::AttnQ:
  case TensorRole::AttnK:
  case TensorRole::AttnV:
  case TensorRole::AttnQkv:
  case TensorRole::AttnOutput:
  case TensorRole::FfnGate:
  case TensorRole::FfnUp:
  case TensorRole::FfnDown:
  case TensorRole::Output:
    break;
  }
  return 0.0;
}

TensorRole tfm::attnNormRole(const ModelSpec &spec) {
  if (bertNames(spec.family))
    return TensorRole::AttnOutputNorm;
  return falconTwoNorms(spec) ? TensorRole::AttnNorm2 : TensorRole::AttnNorm;
}

TensorRole tfm::ffnNormRole(const ModelSpec &spec) {
  if (bertNames(spec.family))
    return TensorRole::LayerOutputNorm;
  return falconTwoNorms(spec) ? TensorRole::AttnNorm : TensorRole::FfnNorm;
}

llvm::ArrayRef<TensorRole> tfm::llama2cLayerOrder() {
  static const TensorRole order[] = {TensorRole::AttnNorm,  TensorRole::AttnQ,
                                     TensorRole::AttnK,     TensorRole::AttnV,
                                     TensorRole::AttnOutput, TensorRole::FfnNorm,
                                     TensorRole::FfnGate,   TensorRole::FfnDown,
                                     TensorRole::FfnUp};
  return order;
}

/// The family whose Hugging Face names `family` uses.
static Family namesOf(Family family) {
  switch (family) {
  case Family::Mistral:
  case Family::Qwen2:
  case Family::Qwen3:
    return Family::Llama;
  case Family::Gemma3:
    return Family::Gemma2;
  case Family::Roberta:
  case Family::Camembert:
  case Family::XlmRoberta:
    return Family::Bert;
  case Family::Llama:
  case Family::Gpt2:
  case Family::Bloom:
  case Family::Mpt:
  case Family::GptNeox:
  case Family::Falcon:
  case Family::Phi3:
  case Family::Gemma2:
  case Family::Bert:
  case Family::T5:
  case Family::Marian:
  case Family::Transformer:
    break;
  }
  return family;
}

/// Marian's Hugging Face name of tensor `id` (MarianMTModel's modules), or
/// none.
static std::optional<std::string> marianHfName(const TensorId &id) {
  std::string layer = std::string(id.stack == Stack::Encoder ? "model.encoder" : "model.decoder") +
                      ".layers." + std::to_string(id.layer) + ".";
  switch (id.role) {
  case TensorRole::TokenEmbedding:
    return std::string("model.shared");
  case TensorRole::AttnQ:
    return layer + "self_attn.q_proj";
  case TensorRole::AttnK:
    return layer + "self_attn.k_proj";
  case TensorRole::AttnV:
    return layer + "self_attn.v_proj";
  case TensorRole::AttnOutput:
    return layer + "self_attn.out_proj";
  case TensorRole::AttnNorm:
    return layer + "self_attn_layer_norm";
  case TensorRole::CrossAttnQ:
    return layer + "encoder_attn.q_proj";
  case TensorRole::CrossAttnK:
    return layer + "encoder_attn.k_proj";
  case TensorRole::CrossAttnV:
    return layer + "encoder_attn.v_proj";
  case TensorRole::CrossAttnOutput:
    return layer + "encoder_attn.out_proj";
  case TensorRole::CrossAttnNorm:
    return layer + "encoder_attn_layer_norm";
  case TensorRole::FfnUp:
    return layer + "fc1";
  case TensorRole::FfnDown:
    return layer + "fc2";
  case TensorRole::FfnNorm:
    return layer + "final_layer_norm";
  default:
    return std::nullopt;
  }
}

/// T5's Hugging Face name of tensor `id` (T5ForConditionalGeneration's
/// modules: each block's layer 0 is its self-attention, then the decoder's
/// cross-attention, then the feed-forward), or none.
static std::optional<std::string> t5HfName(const ModelSpec &spec, const TensorId &id) {
  std::string stack = id.stack == Stack::Encoder ? "encoder." : "decoder.";
  std::string block = stack + "block." + std::to_string(id.layer) + ".layer.";
  std::string ffn = block + (id.stack == Stack::Encoder ? "1." : "2.");
  bool gated = spec.ffn == FfnKind::Gated;
  switch (id.role) {
  case TensorRole::TokenEmbedding:
    return std::string("shared");
  case TensorRole::Output:
    return std::string("lm_head");
  case TensorRole::OutputNorm:
    return stack + "final_layer_norm";
  case TensorRole::AttnNorm:
    return block + "0.layer_norm";
  case TensorRole::AttnQ:
    return block + "0.SelfAttention.q";
  case TensorRole::AttnK:
    return block + "0.SelfAttention.k";
  case TensorRole::AttnV:
    return block + "0.SelfAttention.v";
  case TensorRole::AttnOutput:
    return block + "0.SelfAttention.o";
  case TensorRole::AttnRelBias:
    return block + "0.SelfAttention.relative_attention_bias";
  case TensorRole::CrossAttnNorm:
    return block + "1.layer_norm";
  case TensorRole::CrossAttnQ:
    return block + "1.EncDecAttention.q";
  case TensorRole::CrossAttnK:
    return block + "1.EncDecAttention.k";
  case TensorRole::CrossAttnV:
    return block + "1.EncDecAttention.v";
  case TensorRole::CrossAttnOutput:
    return block + "1.EncDecAttention.o";
  case TensorRole::FfnNorm:
    return ffn + "layer_norm";
  case TensorRole::FfnGate:
    return ffn + "DenseReluDense.wi_0";
  case TensorRole::FfnUp:
    return ffn + (gated ? "DenseReluDense.wi_1" : "DenseReluDense.wi");
  case TensorRole::FfnDown:
    return ffn + "DenseReluDense.wo";
  default:
    return std::nullopt;
  }
}

/// The prefix a file may put in front of every name: the table's, except
/// that RoBERTa's models (CamemBERT's, XLM-R's) are saved as "roberta.".
static const char *optionalPrefixOf(Family family, const char *tablePrefix) {
  return namesOf(family) == Family::Bert && family != Family::Bert ? "roberta." : tablePrefix;
}

llvm::Expected<HfTensorName> tfm::hfTensorName(const ModelSpec &config,
                                               llvm::StringRef manifestName) {
  switch (config.family) {
  case Family::Transformer: // tfm's own: its files use the manifest's names
    if (!parseTensorName(manifestName))
      return failure("tensor '" + manifestName.str() + "' is not a manifest tensor name");
    return HfTensorName{{manifestName.str()}, HfLayout::Same};
  case Family::Marian: {
    std::optional<TensorId> id = parseTensorName(manifestName);
    if (id && id->role == TensorRole::Output && id->part == TensorPart::Bias)
      return HfTensorName{{"final_logits_bias"}, HfLayout::RowVector};
    std::optional<std::string> name = id ? marianHfName(*id) : std::nullopt;
    if (!name)
      return failure("tensor '" + manifestName.str() + "' has no Hugging Face name in Marian");
    HfTensorName out{{*name + "." + partSuffix(id->part)}, HfLayout::Same};
    if (id->role == TensorRole::TokenEmbedding) // saved under the stacks' names too
      for (const char *alias : {"model.encoder.embed_tokens.weight",
                                "model.decoder.embed_tokens.weight", "lm_head.weight"})
        out.names.push_back(alias);
    return out;
  }
  case Family::T5: {
    std::optional<TensorId> id = parseTensorName(manifestName);
    std::optional<std::string> name = id ? t5HfName(config, *id) : std::nullopt;
    if (!name)
      return failure("tensor '" + manifestName.str() + "' has no Hugging Face name in T5");
    HfTensorName out{{*name + "." + partSuffix(id->part)}, HfLayout::Same};
    if (id->role == TensorRole::TokenEmbedding) // saved under the stacks' names too
      for (const char *alias : {"encoder.embed_tokens.weight", "decoder.embed_tokens.weight"})
        out.names.push_back(alias);
    return out;
  }
  case Family::Llama:
  case Family::Mistral:
  case Family::Qwen2:
  case Family::Qwen3:
  case Family::Gpt2:
  case Family::Bloom:
  case Family::Mpt:
  case Family::GptNeox:
  case Family::Falcon:
  case Family::Phi3:
  case Family::Gemma2:
  case Family::Gemma3:
  case Family::Bert:
  case Family::Roberta:
  case Family::Camembert:
  case Family::XlmRoberta:
    break;
  }
  size_t family = 0;
  while (family < kFamilyCount && namesOf(config.family) != kFamilies[family].family)
    ++family;
  std::optional<TensorId> id = parseTensorName(manifestName);
  const HfModule *module =
      id && family < kFamilyCount ? &row(id->role).hf[family] : nullptr;
  if (!module || !module->module)
    return failure("tensor '" + manifestName.str() + "' has no Hugging Face name in the " +
                   variantName(config.family) + " table");
  const FamilyNames &names = kFamilies[family];
  std::vector<const char *> modules{module->module};
  if (module->alias) // Falcon's two-norm blocks name the feed-forward norm ln_mlp
    modules.insert(config.parallelNorms == 2 ? modules.begin() : modules.end(), module->alias);
  HfTensorName out;
  for (const char *m : modules) {
    std::string name = (id->layer >= 0 ? names.layerPrefix + std::to_string(id->layer) + "." : "") +
                       m + "." + partSuffix(id->part);
    out.names.push_back(name);
    const char *prefix = optionalPrefixOf(config.family, names.optionalPrefix);
    if (*prefix)
      out.names.push_back(prefix + name);
  }
  if (id->part == TensorPart::Weight || module->layout != HfLayout::Transposed)
    out.layout = module->layout;
  // Hugging Face's q and k rows are in rotate_half's order: permuted only
  // for a model compiled to rotate adjacent pairs (GGUF Llama's).
  if (out.layout == HfLayout::RopePermuted && !config.ropeInterleaved)
    out.layout = HfLayout::Same;
  return out;
}

int64_t tfm::hfRow(HfLayout layout, int64_t manifestRow, const ModelSpec &spec) {
  const int64_t headDim = spec.headDim;
  if (layout == HfLayout::RopePermuted) {
    int64_t head = manifestRow / headDim, within = manifestRow % headDim;
    if (within >= spec.rotaryDim)
      return manifestRow;
    return head * headDim + (within % 2) * (spec.rotaryDim / 2) + within / 2;
  }
  if (layout != HfLayout::QkvGrouped)
    return manifestRow;
  const int64_t group = spec.nHeads / spec.nKvHeads, groupRows = (group + 2) * headDim;
  const int64_t within = manifestRow % headDim;
  if (manifestRow < spec.qDim()) {
    int64_t head = manifestRow / headDim;
    return (head / group) * groupRows + (head % group) * headDim + within;
  }
  int64_t kv = manifestRow - spec.qDim();
  bool value = kv >= spec.kvDim();
  int64_t kvHead = (kv % spec.kvDim()) / headDim;
  return kvHead * groupRows + (group + (value ? 1 : 0)) * headDim + within;
}
