//===- ConfigFamilies.cpp - Each model_type's config.json as a ModelSpec --===//
//
// One parser per Hugging Face model_type, reading the fields its
// transformers configuration class defines, with that class's defaults, so
// a downloaded config.json parses unedited. Fields that do not change the
// forward pass (dropout rates, initialisers, use_cache) are not read; fields
// that would change it in a way tfm does not compile are refused by name.
// The "transformer" type is ours: every switch of ModelSpec as a field.
//
//===----------------------------------------------------------------------===//
#include "ConfigParsing.h"

#include <cmath>
#include <limits>

using namespace tfm;
using namespace tfm::config;
namespace json = llvm::json;

namespace {

/// 4 * dim, the default feed-forward width of most families; a huge dim
/// saturates, for the size checks to refuse.
int64_t fourTimes(int64_t dim) {
  return dim > 0 && dim <= std::numeric_limits<int64_t>::max() / 4
             ? 4 * dim
             : std::numeric_limits<int64_t>::max();
}

/// head_dim = dim / n_heads, refusing a dim the heads do not divide.
int64_t splitHeads(FieldReader &r, const ModelSpec &s, const char *dimField,
                   const char *headsField) {
  if (r.failed())
    return 0;
  if (s.dim % s.nHeads != 0) {
    r.fail(dimField, "found " + std::to_string(s.dim) + ", expected a multiple of " +
                         headsField + " (" + std::to_string(s.nHeads) + ")");
    return 0;
  }
  return s.dim / s.nHeads;
}

/// Hugging Face's activation names (ACT2FN's) and what each computes.
struct HfActivation {
  const char *name;
  Activation activation;
};
const HfActivation kHfActivations[] = {
    {"gelu", Activation::Gelu},          {"gelu_new", Activation::GeluTanh},
    {"gelu_pytorch_tanh", Activation::GeluTanh}, {"gelu_fast", Activation::GeluTanh},
    {"relu", Activation::Relu},          {"silu", Activation::Silu},
    {"swish", Activation::Silu},
};

/// The activation a config's `field` names (`fallback` when absent).
Activation activationOf(FieldReader &r, const char *field, const char *fallback) {
  std::string act = r.string(field, false, fallback);
  for (const HfActivation &known : kHfActivations)
    if (act == known.name)
      return known.activation;
  if (!r.failed())
    r.fail(field, "found " + quoted(act) +
                      ", expected \"gelu\" (exact), \"gelu_new\", \"gelu_pytorch_tanh\" or "
                      "\"gelu_fast\" (tanh GELU), \"relu\", \"silu\" or \"swish\"");
  return Activation::Silu;
}

/// tfm's own config spells each variant by its name; `fallback` when absent.
template <typename Variant>
Variant variantOf(FieldReader &r, const char *field, Variant fallback) {
  std::string name = r.string(field, false, variantName(fallback));
  std::optional<Variant> value = parseVariant<Variant>(name);
  if (!value && !r.failed())
    r.fail(field, "found " + quoted(name) + ", expected one of " + variantNameList<Variant>());
  return value.value_or(fallback);
}

/// The first of several names a config may give one size (an attribute_map
/// of the transformers class); required: missing is named by the first.
int64_t positiveAlias(FieldReader &r, std::initializer_list<const char *> names, bool required,
                      int64_t fallback = 0) {
  for (const char *name : names)
    if (r.has(name))
      return r.positive(name, true);
  return r.positive(*names.begin(), required, fallback);
}

/// RoPE's rotated columns of a head: head_dim * fraction, rounded down as
/// transformers rounds it.
int64_t rotaryColumns(FieldReader &r, const char *field, int64_t headDim, double fallback) {
  double fraction = r.number(field, fallback);
  if (!r.failed() && !(fraction > 0.0 && fraction <= 1.0))
    r.fail(field, "found " + FieldReader::describe(json::Value(fraction)) +
                      ", expected a fraction of the head in (0, 1]");
  return static_cast<int64_t>(headDim * fraction);
}

/// A sliding window: `absent` when the config has no such field, none (0)
/// when it is null.
int64_t slidingWindow(FieldReader &r, const char *field, int64_t absent) {
  const json::Value *window = r.raw(field);
  if (!window)
    return absent;
  return window->kind() == json::Value::Null ? 0 : r.positive(field, true);
}

/// BERT (BertConfig) and RoBERTa (RobertaConfig; CamemBERT and XLM-RoBERTa
/// are RoBERTa): an encoder whose every token attends to every other;
/// learned positions, a token-type table and a LayerNorm on the embedding
/// sum; post-LN blocks with biases everywhere, exact GELU. RoBERTa's
/// positions start past the padding id (create_position_ids_from_input_ids),
/// so its table holds pad_token_id + 1 rows that no text reads. The
/// heads a BertModel is saved with (pooler, masked LM) are not read: the
/// model's output is its hidden states.
void parseBertFamily(FieldReader &r, Family family, ModelSpec &s) {
  bool roberta = family != Family::Bert;
  s.family = family;
  s.architecture = Architecture::Encoder;
  s.norm = Norm::LayerNorm;
  s.normBias = true;
  s.normPosition = NormPosition::Post;
  s.embeddingNorm = true;
  s.positions = Positions::Learned;
  s.ropeTheta = 0.0;
  s.ffn = FfnKind::Plain;
  s.qkvBias = s.attnOutBias = s.ffnBias = true;
  s.dim = r.positive("hidden_size", false, 768);
  s.nLayers = r.positive("num_hidden_layers", false, 12);
  s.nHeads = r.positive("num_attention_heads", false, 12);
  s.nKvHeads = s.nHeads;
  s.hiddenDim = r.positive("intermediate_size", false, 3072);
  s.vocabSize = r.positive("vocab_size", false, roberta ? 50265 : 30522);
  int64_t positions = r.positive("max_position_embeddings", false, 512);
  s.tokenTypes = r.positive("type_vocab_size", false, 2);
  s.normEps = positiveNumber(r, "layer_norm_eps", 1e-12);
  int64_t pad = tokenId(r, "pad_token_id", roberta ? 1 : 0, s.vocabSize);
  s.positionOffset = roberta ? pad + 1 : 0;
  s.contextLength = positions - s.positionOffset;
  if (!r.failed() && s.contextLength < 1)
    r.fail("max_position_embeddings",
           "found " + std::to_string(positions) + ", expected more than pad_token_id + 1 (" +
               std::to_string(s.positionOffset) +
               "): RoBERTa's positions start past the padding id");
  s.bosTokenId = tokenId(r, "bos_token_id", roberta ? 0 : pad, s.vocabSize);
  s.eosTokenId = tokenId(r, "eos_token_id", roberta ? 2 : pad, s.vocabSize);
  s.activation = activationOf(r, "hidden_act", "gelu");
  std::string positionType = r.string("position_embedding_type", false, "absolute");
  if (!r.failed() && positionType != "absolute")
    r.fail("position_embedding_type",
           "found " + quoted(positionType) +
               ", expected \"absolute\" (relative_key position scores are not supported)");
  requireValue(r, "is_decoder", false, "a BERT decoder is not supported; tfm compiles the encoder");
  requireValue(r, "add_cross_attention", false, "cross-attention is not supported");
  s.headDim = splitHeads(r, s, "hidden_size", "num_attention_heads");
  checkSpec(r, s,
            {"hidden_size", "intermediate_size", "num_hidden_layers", "num_attention_heads",
             "num_attention_heads", "hidden_size", "vocab_size", "max_position_embeddings"});
}

} // namespace

/// T5 (T5Config): an encoder–decoder of pre-LN blocks with RMSNorm (no
/// mean, no bias), no biases, no positions but a relative bias on the
/// scores (each stack's first layer's table, by bucket of the distance),
/// scores not scaled by 1/sqrt(d_kv), heads of d_kv columns. v1.0 (T5's)
/// has a ReLU feed-forward and a head tied to the embedding, fed the final
/// norm's output times d_model^-0.5; v1.1 and Flan-T5 a gated GELU (tanh)
/// and an untied head. The context and the source length are n_positions
/// (512; tfmc --context changes both): relative positions have no table.
void config::parseT5(FieldReader &r, ModelSpec &s) {
  s.family = Family::T5;
  s.architecture = Architecture::EncoderDecoder;
  s.norm = Norm::RmsNorm;
  s.positions = Positions::None;
  s.ropeTheta = 0.0;
  s.attnScale = 1.0;
  s.dim = r.positive("d_model", false, 512);
  s.headDim = r.positive("d_kv", false, 64);
  s.hiddenDim = r.positive("d_ff", false, 2048);
  s.nEncoderLayers = r.positive("num_layers", false, 6);
  s.nLayers = r.has("num_decoder_layers") && r.raw("num_decoder_layers")->kind() !=
                                                 json::Value::Null
                  ? r.positive("num_decoder_layers", true)
                  : s.nEncoderLayers;
  s.nHeads = r.positive("num_heads", false, 8);
  s.nKvHeads = s.nHeads;
  s.vocabSize = r.positive("vocab_size", false, 32128);
  s.contextLength = r.positive("n_positions", false, 512);
  s.sourceLength = s.contextLength;
  s.relativeBuckets = r.positive("relative_attention_num_buckets", false, 32);
  s.relativeMaxDistance = r.positive("relative_attention_max_distance", false, 128);
  s.normEps = positiveNumber(r, "layer_norm_epsilon", 1e-6);
  s.tiedEmbeddings = r.boolean("tie_word_embeddings", true);
  s.outputScale = s.tiedEmbeddings ? 1.0 / std::sqrt(double(s.dim)) : 1.0;
  int64_t pad = tokenId(r, "pad_token_id", 0, s.vocabSize);
  s.bosTokenId = pad; // T5 has none; generation starts at decoder_start_token_id
  s.eosTokenId = tokenId(r, "eos_token_id", 1, s.vocabSize);
  s.decoderStartTokenId = tokenId(r, "decoder_start_token_id", pad, s.vocabSize);
  // transformers' T5Config: "[gated-]ACT"; "gated-gelu" is the tanh GELU.
  std::string proj = r.string("feed_forward_proj", false, "relu");
  llvm::StringRef act(proj);
  s.ffn = act.consume_front("gated-") ? FfnKind::Gated : FfnKind::Plain;
  const std::pair<const char *, Activation> kinds[] = {
      {"relu", Activation::Relu}, {"gelu", Activation::Gelu}, {"silu", Activation::Silu}};
  bool known = false;
  for (const auto &[name, activation] : kinds)
    if (act == name) {
      s.activation = activation;
      known = true;
    }
  if (proj == "gated-gelu")
    s.activation = Activation::GeluTanh;
  if (!r.failed() && !known)
    r.fail("feed_forward_proj",
           "found " + quoted(proj) +
               ", expected \"relu\", \"gelu\", \"silu\" or one of them after \"gated-\" "
               "(T5Config's ACT or gated-ACT)");
  requireValue(r, "is_encoder_decoder", true, "tfm compiles T5 as an encoder-decoder");
  FieldNames names{"d_model", "d_ff", "num_decoder_layers", "num_heads",
                   "num_heads", "d_kv", "vocab_size", "n_positions"};
  checkSpec(r, s, names);
}

/// Marian (MarianConfig; Helsinki-NLP's opus-mt): the 2017 encoder-decoder
/// with Marian's sinusoid (sines in the first half of the columns), the
/// embedding times sqrt(d_model), post-LN blocks with biases everywhere,
/// `activation_function` (swish), a head tied to the shared embedding and
/// final_logits_bias added to the logits. The source and the decoder each
/// hold up to max_position_embeddings tokens.
void config::parseMarian(FieldReader &r, ModelSpec &s) {
  s.family = Family::Marian;
  s.architecture = Architecture::EncoderDecoder;
  s.norm = Norm::LayerNorm;
  s.normBias = true;
  s.normPosition = NormPosition::Post;
  s.positions = Positions::SinusoidalHalves;
  s.ropeTheta = 0.0;
  s.ffn = FfnKind::Plain;
  s.qkvBias = s.attnOutBias = s.ffnBias = true;
  s.outputBias = true;
  s.vocabSize = r.positive("vocab_size", false, 58101);
  s.dim = r.positive("d_model", false, 1024);
  s.nEncoderLayers = r.positive("encoder_layers", false, 12);
  s.nLayers = r.positive("decoder_layers", false, 12);
  s.nHeads = r.positive("encoder_attention_heads", false, 16);
  s.nKvHeads = s.nHeads;
  s.hiddenDim = r.positive("encoder_ffn_dim", false, 4096);
  s.contextLength = r.positive("max_position_embeddings", false, 1024);
  s.sourceLength = s.contextLength;
  s.normEps = 1e-5; // nn.LayerNorm's default, which MarianConfig does not change
  if (r.boolean("scale_embedding", false))
    s.embeddingScale = std::sqrt(double(s.dim));
  s.activation = activationOf(r, "activation_function", "gelu");
  s.tiedEmbeddings = true;
  requireValue(r, "tie_word_embeddings", true, "Marian's head is its shared embedding");
  requireValue(r, "share_encoder_decoder_embeddings", true,
               "the encoder and decoder share one embedding");
  requireValue(r, "normalize_before", false, "Marian's blocks are post-LN");
  requireValue(r, "decoder_attention_heads", json::Value(s.nHeads),
               "the decoder's heads are the encoder's");
  requireValue(r, "decoder_ffn_dim", json::Value(s.hiddenDim),
               "the decoder's feed-forward is the encoder's width");
  int64_t pad = tokenId(r, "pad_token_id", 58100, s.vocabSize);
  s.bosTokenId = pad; // Marian has none; the decoder starts at decoder_start_token_id
  s.eosTokenId = tokenId(r, "eos_token_id", 0, s.vocabSize);
  s.decoderStartTokenId = tokenId(r, "decoder_start_token_id", pad, s.vocabSize);
  s.headDim = splitHeads(r, s, "d_model", "encoder_attention_heads");
  checkSpec(r, s,
            {"d_model", "encoder_ffn_dim", "decoder_layers", "encoder_attention_heads",
             "encoder_attention_heads", "d_model", "vocab_size", "max_position_embeddings"});
}

void config::parseLlama(FieldReader &r, ModelSpec &s) {
  s.family = Family::Llama;
  s.norm = Norm::RmsNorm;
  s.positions = Positions::Rope;
  s.ropeInterleaved = true; // Hugging Face's q/k rows are permuted at load (TensorNames.h)
  s.ffn = FfnKind::Gated;
  s.dim = r.positive("hidden_size", true);
  s.hiddenDim = r.positive("intermediate_size", true);
  s.nLayers = r.positive("num_hidden_layers", true);
  s.nHeads = r.positive("num_attention_heads", true);
  s.nKvHeads = r.positive("num_key_value_heads", false, s.nHeads);
  s.vocabSize = r.positive("vocab_size", true);
  s.contextLength = r.positive("max_position_embeddings", true);
  s.normEps = positiveNumber(r, "rms_norm_eps", 1e-6);
  s.ropeTheta = positiveNumber(r, "rope_theta", 10000.0);
  s.tiedEmbeddings = r.boolean("tie_word_embeddings", false);
  s.qkvBias = s.attnOutBias = r.boolean("attention_bias", false);
  s.ffnBias = r.boolean("mlp_bias", false);
  s.activation = activationOf(r, "hidden_act", "silu");
  s.bosTokenId = tokenId(r, "bos_token_id", 1, s.vocabSize);
  s.eosTokenId = tokenId(r, "eos_token_id", 2, s.vocabSize);
  if (r.failed())
    return;
  // An explicit head_dim decouples the heads from the hidden size (q is
  // n_heads*head_dim wide, attn_output maps it back to hidden_size).
  s.headDim = r.has("head_dim") ? r.positive("head_dim", true)
                                : splitHeads(r, s, "hidden_size", "num_attention_heads");
  if (r.failed())
    return;
  s.rotaryDim = rotaryColumns(r, "partial_rotary_factor", s.headDim, 1.0);
  readLlamaRopeScaling(r, "rope_scaling", s);
  FieldNames names{"hidden_size",         "intermediate_size",
                   "num_hidden_layers",   "num_attention_heads",
                   "num_key_value_heads", "head_dim",
                   "vocab_size",          "max_position_embeddings"};
  names.rotaryDim = r.has("partial_rotary_factor") ? "partial_rotary_factor" : "head_dim";
  checkSpec(r, s, names);
}

/// MistralConfig: LlamaConfig's fields (without biases) and a sliding
/// window, 4096 unless the config says otherwise (null: none, as v0.2 on).
void config::parseMistral(FieldReader &r, ModelSpec &s) {
  parseLlama(r, s);
  s.family = Family::Mistral;
  s.slidingWindow = slidingWindow(r, "sliding_window", 4096);
}

/// Qwen2Config: LlamaConfig's fields, biases on q, k and v (never on the
/// output or the feed-forward), and rotate_half's pairs, which its GGUF
/// keeps (llama.cpp's qwen2 graph rotates halves). Its sliding window is
/// off unless use_sliding_window says otherwise.
void config::parseQwen2(FieldReader &r, ModelSpec &s) {
  parseLlama(r, s);
  s.family = Family::Qwen2;
  s.ropeInterleaved = false;
  s.qkvBias = true;
  s.attnOutBias = s.ffnBias = false;
  requireValue(r, "use_sliding_window", json::Value(false),
               "Qwen 2's sliding window over its lower layers is not compiled");
}

/// Qwen3Config: LlamaConfig's fields (head_dim 128 whatever the hidden
/// size), an RMSNorm of each head of q and k before RoPE, rotate_half's
/// pairs, and no sliding window unless use_sliding_window says so.
void config::parseQwen3(FieldReader &r, ModelSpec &s) {
  parseLlama(r, s);
  s.family = Family::Qwen3;
  s.ropeInterleaved = false;
  s.qkNorm = true;
  requireValue(r, "use_sliding_window", json::Value(false),
               "Qwen 3's sliding window over its lower layers is not compiled");
}

/// Phi3Config: LlamaConfig's fields with q, k and v in one qkv_proj and
/// gate and up in one gate_up_proj, rotate_half's pairs (kept by its GGUF),
/// and a sliding window (null or absent: none). Its LongRoPE scaling is
/// rope_scaling's "longrope" (readLlamaRopeScaling).
void config::parsePhi3(FieldReader &r, ModelSpec &s) {
  parseLlama(r, s);
  s.family = Family::Phi3;
  s.ropeInterleaved = false;
  s.fusedQkv = s.fusedGateUp = true;
  s.slidingWindow = slidingWindow(r, "sliding_window", 0);
}

namespace {

/// What Gemma 2 and 3 share beyond LlamaConfig's fields: the embedding
/// scaled by sqrt(hidden_size), RMSNorm's gain 1 + w (tfm's
/// norm_weight_offset: 0 for a GGUF, which stores the sum), a norm after
/// attention and after the feed-forward, GeGLU (hidden_activation), scores
/// scaled by query_pre_attn_scalar^-1/2, rotate_half's pairs, a tied head.
void parseGemma(FieldReader &r, ModelSpec &s) {
  parseLlama(r, s);
  s.ropeInterleaved = false;
  s.embeddingScale = std::sqrt(double(s.dim));
  s.normWeightOffset = r.number("norm_weight_offset", 1.0);
  s.sandwichNorms = true;
  s.activation = activationOf(r, r.has("hidden_activation") ? "hidden_activation" : "hidden_act",
                              "gelu_pytorch_tanh");
  s.tiedEmbeddings = r.boolean("tie_word_embeddings", true);
  double scalar = positiveNumber(r, "query_pre_attn_scalar", 256.0);
  s.attnScale = 1.0 / std::sqrt(scalar);
  s.slidingWindow = slidingWindow(r, "sliding_window", 4096);
}

/// A soft cap (null or absent: none).
double softcap(FieldReader &r, const char *field, double absent) {
  const json::Value *cap = r.raw(field);
  if (!cap)
    return absent;
  return cap->kind() == json::Value::Null ? 0.0 : positiveNumber(r, field, absent);
}

} // namespace

/// Gemma2Config: the Gemma features, soft caps on the scores and the
/// logits, and every other layer (the even ones) sliding.
void config::parseGemma2(FieldReader &r, ModelSpec &s) {
  parseGemma(r, s);
  s.family = Family::Gemma2;
  s.attnSoftcap = softcap(r, "attn_logit_softcapping", 50.0);
  s.finalSoftcap = softcap(r, "final_logit_softcapping", 30.0);
  s.slidingWindowPattern = 2;
}

/// Gemma3TextConfig: the Gemma features, RMSNorms (1 + w) of each head of
/// q and k, five sliding layers of six (sliding_window_pattern) whose RoPE
/// base is rope_local_base_freq, unscaled, beside global layers with
/// rope_theta and rope_scaling; no soft caps unless given.
void config::parseGemma3(FieldReader &r, ModelSpec &s) {
  parseGemma(r, s);
  s.family = Family::Gemma3;
  s.qkNorm = true;
  s.attnSoftcap = softcap(r, "attn_logit_softcapping", 0.0);
  s.finalSoftcap = softcap(r, "final_logit_softcapping", 0.0);
  s.slidingWindowPattern = r.positive("sliding_window_pattern", false, 6);
  s.ropeLocalTheta = positiveNumber(r, "rope_local_base_freq", 10000.0);
  if (const json::Value *types = r.raw("layer_types"); types && !r.failed()) {
    const json::Array *list = types->getAsArray();
    bool matches = list && static_cast<int64_t>(list->size()) == s.nLayers;
    for (int64_t i = 0; matches && i < s.nLayers; ++i)
      matches = (*list)[i].getAsString() ==
                std::optional<llvm::StringRef>(slides(s, i) ? "sliding_attention"
                                                            : "full_attention");
    if (!matches)
      r.fail("layer_types", "found " + FieldReader::describe(*types) +
                                ", expected sliding_window_pattern's layers (" +
                                std::to_string(s.slidingWindowPattern) +
                                "): each layer but every pattern-th slides");
  }
}

/// GPT-2 as Hugging Face's GPT2Config describes it. reorder_and_upcast_attn
/// only moves an upcast that f32 does not need.
void config::parseGpt2(FieldReader &r, ModelSpec &s) {
  s.family = Family::Gpt2;
  s.norm = Norm::LayerNorm;
  s.normBias = true;
  s.positions = Positions::Learned;
  s.ropeTheta = 0.0;
  s.ffn = FfnKind::Plain;
  s.fusedQkv = true;
  s.qkvBias = s.attnOutBias = s.ffnBias = true;
  s.dim = r.positive("n_embd", true);
  s.nLayers = r.positive("n_layer", true);
  s.nHeads = r.positive("n_head", true);
  s.nKvHeads = s.nHeads;
  s.vocabSize = r.positive("vocab_size", true);
  // n_ctx is the older name of n_positions; configs carry both, equal.
  s.contextLength = r.positive("n_positions", !r.has("n_ctx"));
  if (r.has("n_ctx") && !r.failed()) {
    int64_t nCtx = r.positive("n_ctx", true);
    if (!r.has("n_positions"))
      s.contextLength = nCtx;
    else if (!r.failed() && nCtx != s.contextLength)
      r.fail("n_ctx", "found " + std::to_string(nCtx) + ", expected n_positions (" +
                          std::to_string(s.contextLength) +
                          "): the attention window and the position table must agree");
  }
  s.hiddenDim = r.positive("n_inner", false, fourTimes(s.dim));
  s.normEps = positiveNumber(r, "layer_norm_epsilon", 1e-5);
  s.tiedEmbeddings = r.boolean("tie_word_embeddings", true);
  s.bosTokenId = tokenId(r, "bos_token_id", 50256, s.vocabSize);
  s.eosTokenId = tokenId(r, "eos_token_id", 50256, s.vocabSize);
  if (r.failed())
    return;
  s.activation = activationOf(r, "activation_function", "gelu_new");
  requireValue(r, "scale_attn_weights", true,
               "attention scores are scaled by 1/sqrt(head_dim)");
  requireValue(r, "scale_attn_by_inverse_layer_idx", false,
               "per-layer score scaling is not supported");
  requireValue(r, "add_cross_attention", false, "cross-attention is not supported");
  s.headDim = splitHeads(r, s, "n_embd", "n_head");
  checkSpec(r, s,
            {"n_embd", "n_inner", "n_layer", "n_head", "n_head", "n_embd", "vocab_size",
             "n_positions"});
}

/// BLOOM (BloomConfig): ALiBi instead of positions, a LayerNorm right after
/// the embedding, q/k/v fused per head, tanh GELU, biases everywhere. The
/// config names no context length: BLOOM trained on 2048 tokens, which
/// `seq_length` or tfmc --context may change (ALiBi extrapolates).
void config::parseBloom(FieldReader &r, ModelSpec &s) {
  s.family = Family::Bloom;
  s.norm = Norm::LayerNorm;
  s.normBias = true;
  s.positions = Positions::None;
  s.ropeTheta = 0.0;
  s.alibi = true;
  s.alibiMaxBias = 8.0;
  s.embeddingNorm = true;
  s.activation = Activation::GeluTanh;
  s.ffn = FfnKind::Plain;
  s.fusedQkv = true;
  s.qkvBias = s.attnOutBias = s.ffnBias = true;
  s.dim = positiveAlias(r, {"hidden_size", "n_embed"}, true);
  s.nLayers = positiveAlias(r, {"n_layer", "num_hidden_layers"}, true);
  s.nHeads = positiveAlias(r, {"n_head", "num_attention_heads"}, true);
  s.nKvHeads = s.nHeads;
  s.hiddenDim = fourTimes(s.dim);
  s.vocabSize = r.positive("vocab_size", true);
  s.contextLength = r.positive("seq_length", false, 2048);
  s.normEps = positiveNumber(r, "layer_norm_epsilon", 1e-5);
  s.tiedEmbeddings = r.boolean("tie_word_embeddings", true);
  s.bosTokenId = tokenId(r, "bos_token_id", 1, s.vocabSize);
  s.eosTokenId = tokenId(r, "eos_token_id", 2, s.vocabSize);
  requireValue(r, "apply_residual_connection_post_layernorm", false,
               "residuals that start after the norm are not supported");
  s.headDim = splitHeads(r, s, "hidden_size", "n_head");
  checkSpec(r, s,
            {"hidden_size", "hidden_size", "n_layer", "n_head", "n_head", "hidden_size",
             "vocab_size", "seq_length"});
}

/// MPT (MptConfig, as transformers implements it): ALiBi, LayerNorm and
/// projections without biases under no_bias, exact GELU, one [3*d, d] Wqkv,
/// q/k/v optionally clamped (attn_config.clip_qkv).
void config::parseMpt(FieldReader &r, const std::string &path, ModelSpec &s) {
  s.family = Family::Mpt;
  s.norm = Norm::LayerNorm;
  s.positions = Positions::None;
  s.ropeTheta = 0.0;
  s.activation = Activation::Gelu;
  s.ffn = FfnKind::Plain;
  s.fusedQkv = true;
  s.dim = r.positive("d_model", true);
  s.nHeads = r.positive("n_heads", true);
  s.nKvHeads = s.nHeads;
  s.nLayers = r.positive("n_layers", true);
  s.vocabSize = r.positive("vocab_size", true);
  s.contextLength = r.positive("max_seq_len", false, 2048);
  int64_t expansion = r.positive("expansion_ratio", false, 4);
  s.hiddenDim = s.dim > 0 && expansion <= std::numeric_limits<int64_t>::max() / s.dim
                    ? expansion * s.dim
                    : std::numeric_limits<int64_t>::max();
  s.normEps = positiveNumber(r, "layer_norm_epsilon", 1e-5);
  bool noBias = r.boolean("no_bias", true);
  s.normBias = s.qkvBias = s.attnOutBias = s.ffnBias = !noBias;
  s.tiedEmbeddings = r.boolean("tie_word_embeddings", true);
  s.bosTokenId = tokenId(r, "bos_token_id", 0, s.vocabSize);
  s.eosTokenId = tokenId(r, "eos_token_id", 0, s.vocabSize);
  std::string normType = r.string("norm_type", false, "low_precision_layernorm");
  if (!r.failed() && normType != "low_precision_layernorm" && normType != "layernorm")
    r.fail("norm_type", "found " + quoted(normType) +
                            ", expected \"low_precision_layernorm\" or \"layernorm\"");
  requireValue(r, "logit_scale", nullptr, "scaled logits are not supported");
  if (r.failed())
    return;

  auto nested = [&](const char *field) -> const json::Object * {
    const json::Value *v = r.raw(field);
    if (!v || v->kind() == json::Value::Null)
      return nullptr;
    if (!v->getAsObject())
      r.fail(field, "found " + FieldReader::describe(*v) + ", expected an object");
    return v->getAsObject();
  };
  static const json::Object kEmpty;
  const json::Object *attn = nested("attn_config");
  FieldReader a(attn ? *attn : kEmpty, path, "attn_config.");
  std::string attnType = a.string("attn_type", false, "multihead_attention");
  if (!a.failed() && attnType != "multihead_attention")
    a.fail("attn_type", "found " + quoted(attnType) +
                            ", expected \"multihead_attention\" (the attention transformers' "
                            "MPT implements)");
  // transformers' MPT always biases its scores with ALiBi; llm-foundry's
  // rotary option has no transformers implementation.
  s.alibi = a.boolean("alibi", true);
  if (!a.failed() && !s.alibi)
    a.fail("alibi", "found false, expected true (MPT's positions are ALiBi)");
  if (a.boolean("rope", false))
    s.positions = Positions::Rope;
  s.alibiMaxBias = positiveNumber(a, "alibi_bias_max", 8.0);
  double clip = a.number("clip_qkv", 0.0);
  if (!a.failed() && !(std::isfinite(clip) && clip >= 0.0))
    a.fail("clip_qkv", "found " + FieldReader::describe(json::Value(clip)) +
                           ", expected null or a positive number");
  s.clipQkv = clip;
  requireValue(a, "qk_ln", false, "normalised q and k are not supported");
  requireValue(a, "softmax_scale", nullptr,
               "scores are scaled by 1/sqrt(head_dim); another scale is not supported");
  r.adopt(a);
  const json::Object *ffn = nested("ffn_config");
  FieldReader f(ffn ? *ffn : kEmpty, path, "ffn_config.");
  requireValue(f, "ffn_type", "mptmlp", "the feed-forward transformers' MPT implements");
  r.adopt(f);
  s.headDim = splitHeads(r, s, "d_model", "n_heads");
  FieldNames names{"d_model", "expansion_ratio", "n_layers", "n_heads", "n_heads",
                   "d_model", "vocab_size", "max_seq_len"};
  names.alibi = "attn_config.alibi", names.positions = "attn_config.rope";
  checkSpec(r, s, names);
}

/// GPT-NeoX and Pythia (GPTNeoXConfig): rotate_half RoPE on the first
/// rotary_pct of each head, q/k/v fused per head, a parallel residual with
/// two norms unless use_parallel_residual is false.
void config::parseGptNeox(FieldReader &r, ModelSpec &s) {
  s.family = Family::GptNeox;
  s.norm = Norm::LayerNorm;
  s.normBias = true;
  s.positions = Positions::Rope;
  s.ropeInterleaved = false;
  s.ffn = FfnKind::Plain;
  s.fusedQkv = true;
  s.ffnBias = true;
  s.dim = r.positive("hidden_size", true);
  s.hiddenDim = r.positive("intermediate_size", true);
  s.nLayers = r.positive("num_hidden_layers", true);
  s.nHeads = r.positive("num_attention_heads", true);
  s.nKvHeads = s.nHeads;
  s.vocabSize = r.positive("vocab_size", true);
  s.contextLength = r.positive("max_position_embeddings", true);
  s.normEps = positiveNumber(r, "layer_norm_eps", 1e-5);
  s.ropeTheta = positiveNumber(r, r.has("rope_theta") ? "rope_theta" : "rotary_emb_base", 10000.0);
  s.ropeScale = linearRopeScale(r, "rope_scaling");
  s.parallelResidual = r.boolean("use_parallel_residual", true);
  s.parallelNorms = s.parallelResidual ? 2 : 0;
  s.qkvBias = s.attnOutBias = r.boolean("attention_bias", true);
  s.activation = activationOf(r, "hidden_act", "gelu");
  s.tiedEmbeddings = r.boolean("tie_word_embeddings", false);
  s.bosTokenId = tokenId(r, "bos_token_id", 0, s.vocabSize);
  s.eosTokenId = tokenId(r, "eos_token_id", 2, s.vocabSize);
  s.headDim = splitHeads(r, s, "hidden_size", "num_attention_heads");
  if (r.failed())
    return;
  // Newer configs name the fraction partial_rotary_factor.
  const char *rotaryField =
      r.has("partial_rotary_factor") ? "partial_rotary_factor" : "rotary_pct";
  s.rotaryDim = rotaryColumns(r, rotaryField, s.headDim, 0.25);
  FieldNames names{"hidden_size",         "intermediate_size",
                   "num_hidden_layers",   "num_attention_heads",
                   "num_attention_heads", "hidden_size",
                   "vocab_size",          "max_position_embeddings"};
  names.rotaryDim = rotaryField, names.parallelResidual = "use_parallel_residual";
  checkSpec(r, s, names);
}

/// Falcon (FalconConfig): multi-query or grouped attention with q/k/v fused
/// by kv group, rotate_half RoPE or ALiBi, a parallel block with one norm
/// (7B) or two (the new decoder architecture of 40B and 180B).
void config::parseFalcon(FieldReader &r, ModelSpec &s) {
  s.family = Family::Falcon;
  s.norm = Norm::LayerNorm;
  s.normBias = true;
  s.ffn = FfnKind::Plain;
  s.fusedQkv = true;
  s.dim = r.positive("hidden_size", true);
  s.nLayers = r.positive("num_hidden_layers", true);
  s.nHeads = r.positive("num_attention_heads", true);
  s.vocabSize = r.positive("vocab_size", true);
  s.contextLength = r.positive("max_position_embeddings", false, 2048);
  s.hiddenDim = r.positive("ffn_hidden_size", false, fourTimes(s.dim));
  s.normEps = positiveNumber(r, "layer_norm_epsilon", 1e-5);
  bool newArchitecture = r.boolean("new_decoder_architecture", false);
  bool multiQuery = r.boolean("multi_query", true);
  s.nKvHeads = newArchitecture ? r.positive("num_kv_heads", false, s.nHeads)
                               : (multiQuery ? 1 : s.nHeads);
  s.alibi = r.boolean("alibi", false);
  if (s.alibi) {
    s.positions = Positions::None;
    s.ropeTheta = 0.0;
    s.alibiMaxBias = 8.0;
  } else {
    s.positions = Positions::Rope;
    s.ropeInterleaved = false;
    s.ropeTheta = positiveNumber(r, "rope_theta", 10000.0);
    s.ropeScale = linearRopeScale(r, "rope_scaling");
  }
  // The new architecture is always parallel; its two norms (ln_attn,
  // ln_mlp) unless num_ln_in_parallel_attn is 1.
  s.parallelResidual = newArchitecture || r.boolean("parallel_attn", true);
  int64_t parallelNorms = r.positive("num_ln_in_parallel_attn", false, newArchitecture ? 2 : 1);
  if (!r.failed() && parallelNorms > 2)
    r.fail("num_ln_in_parallel_attn",
           "found " + std::to_string(parallelNorms) + ", expected 1 or 2");
  s.parallelNorms = !s.parallelResidual ? 0 : (newArchitecture && parallelNorms == 2 ? 2 : 1);
  s.qkvBias = s.attnOutBias = s.ffnBias = r.boolean("bias", false);
  s.activation = activationOf(r, "activation", "gelu");
  s.tiedEmbeddings = r.boolean("tie_word_embeddings", true);
  s.bosTokenId = tokenId(r, "bos_token_id", 11, s.vocabSize);
  s.eosTokenId = tokenId(r, "eos_token_id", 11, s.vocabSize);
  s.headDim = splitHeads(r, s, "hidden_size", "num_attention_heads");
  s.rotaryDim = s.positions == Positions::Rope ? s.headDim : 0;
  FieldNames names{"hidden_size",         "ffn_hidden_size",
                   "num_hidden_layers",   "num_attention_heads",
                   "num_kv_heads",        "hidden_size",
                   "vocab_size",          "max_position_embeddings"};
  names.alibi = "alibi", names.parallelResidual = "parallel_attn";
  checkSpec(r, s, names);
}

/// tfm's own config: every switch of ModelSpec by name, with the 2017
/// Transformer's choices as defaults (sinusoidal positions, post-LN is
/// opt-in, ReLU, biases, a tied head).
void config::parseTransformer(FieldReader &r, ModelSpec &s) {
  s.family = Family::Transformer;
  s.dim = r.positive("d_model", true);
  s.nHeads = r.positive("n_heads", true);
  s.nKvHeads = r.positive("n_kv_heads", false, s.nHeads);
  s.nLayers = r.positive("n_layers", true);
  s.hiddenDim = r.positive("d_ff", true);
  s.vocabSize = r.positive("vocab_size", true);
  s.contextLength = r.positive("context_length", true);
  // The 2017 encoder-decoder: an encoder over a source of up to
  // source_length tokens, whose output every decoder layer attends to.
  s.architecture = variantOf(r, "architecture", Architecture::Decoder);
  if (s.architecture == Architecture::Encoder)
    r.fail("architecture", "found \"encoder\", expected \"decoder\" or \"encoder_decoder\" "
                           "(an encoder alone is BERT's: model_type bert)");
  bool encDec = s.encoderDecoder();
  s.nEncoderLayers = encDec ? r.positive("n_encoder_layers", false, s.nLayers) : 0;
  s.sourceLength = encDec ? r.positive("source_length", false, s.contextLength) : 0;
  s.headDim = r.has("head_dim") ? r.positive("head_dim", true)
                                : splitHeads(r, s, "d_model", "n_heads");
  s.positions = variantOf(r, "positions", Positions::Sinusoidal);
  bool rope = s.positions == Positions::Rope;
  s.ropeTheta = rope ? positiveNumber(r, "rope_theta", 10000.0) : 0.0;
  std::string pairs = r.string("rope_pairs", false, "interleaved");
  if (!r.failed() && pairs != "interleaved" && pairs != "half")
    r.fail("rope_pairs", "found " + quoted(pairs) + ", expected \"interleaved\" or \"half\"");
  s.ropeInterleaved = pairs == "interleaved";
  s.rotaryDim = rope ? r.positive("rotary_dim", false, s.headDim) : 0;
  s.ropeScale = rope ? positiveNumber(r, "rope_scale", 1.0) : 1.0;
  s.alibi = r.boolean("alibi", false);
  s.alibiMaxBias = s.alibi ? positiveNumber(r, "alibi_max_bias", 8.0) : 0.0;
  s.norm = variantOf(r, "norm", Norm::LayerNorm);
  s.normBias = r.boolean("norm_bias", s.norm == Norm::LayerNorm);
  if (!r.failed() && s.normBias && s.norm == Norm::RmsNorm)
    r.fail("norm_bias", "found true with norm \"rms_norm\", expected false (RMSNorm has no bias)");
  s.normEps = positiveNumber(r, "norm_eps", 1e-5);
  s.normPosition = variantOf(r, "norm_position", NormPosition::Pre);
  s.parallelResidual = r.boolean("parallel_residual", false);
  s.parallelNorms = s.parallelResidual ? r.positive("parallel_norms", false, 2) : 0;
  if (!r.failed() && s.parallelNorms > 2)
    r.fail("parallel_norms", "found " + std::to_string(s.parallelNorms) + ", expected 1 or 2");
  s.embeddingNorm = r.boolean("embedding_norm", false);
  s.activation = variantOf(r, "activation", Activation::Relu);
  s.ffn = r.boolean("gated_ffn", false) ? FfnKind::Gated : FfnKind::Plain;
  s.fusedQkv = r.boolean("fused_qkv", false);
  s.qkvBias = r.boolean("qkv_bias", true);
  s.attnOutBias = r.boolean("attn_out_bias", true);
  s.ffnBias = r.boolean("ffn_bias", true);
  s.clipQkv = r.has("clip_qkv") ? positiveNumber(r, "clip_qkv", 0.0) : 0.0;
  const json::Value *scale = r.raw("embedding_scale");
  if (scale && scale->getAsString() && *scale->getAsString() == "sqrt_d_model")
    s.embeddingScale = std::sqrt(double(s.dim));
  else if (scale && !scale->getAsNumber() && scale->kind() != json::Value::Null)
    r.fail("embedding_scale", "found " + FieldReader::describe(*scale) +
                                  ", expected a number or \"sqrt_d_model\"");
  else
    s.embeddingScale = positiveNumber(r, "embedding_scale", 1.0);
  s.tiedEmbeddings = r.boolean("tie_word_embeddings", true);
  s.bosTokenId = tokenId(r, "bos_token_id", 1, s.vocabSize);
  s.eosTokenId = tokenId(r, "eos_token_id", 2, s.vocabSize);
  s.decoderStartTokenId = encDec ? tokenId(r, "decoder_start_token_id", s.bosTokenId,
                                           s.vocabSize)
                                 : -1;
  FieldNames names{"d_model", "d_ff", "n_layers", "n_heads", "n_kv_heads", "head_dim",
                   "vocab_size", "context_length"};
  names.positions = "positions", names.alibi = "alibi", names.rotaryDim = "rotary_dim";
  names.parallelResidual = "parallel_residual", names.postNorm = "norm_position";
  checkSpec(r, s, names);
}

void config::parseFamily(Family family, FieldReader &r, const std::string &path, ModelSpec &s) {
  switch (family) {
  case Family::Llama:
    return parseLlama(r, s);
  case Family::Mistral:
    return parseMistral(r, s);
  case Family::Qwen2:
    return parseQwen2(r, s);
  case Family::Qwen3:
    return parseQwen3(r, s);
  case Family::Phi3:
    return parsePhi3(r, s);
  case Family::Gemma2:
    return parseGemma2(r, s);
  case Family::Gemma3:
    return parseGemma3(r, s);
  case Family::Gpt2:
    return parseGpt2(r, s);
  case Family::Bloom:
    return parseBloom(r, s);
  case Family::Mpt:
    return parseMpt(r, path, s);
  case Family::GptNeox:
    return parseGptNeox(r, s);
  case Family::Falcon:
    return parseFalcon(r, s);
  case Family::Bert:
  case Family::Roberta:
  case Family::Camembert:
  case Family::XlmRoberta:
    return parseBertFamily(r, family, s);
  case Family::T5:
    return parseT5(r, s);
  case Family::Marian:
    return parseMarian(r, s);
  case Family::Transformer:
    return parseTransformer(r, s);
  }
}
