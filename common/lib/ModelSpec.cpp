//===- ModelSpec.cpp - Parse and validate a model config ------------------===//
#include "tfm/common/Failure.h"
#include "tfm/common/ModelSpec.h"
#include "ConfigParsing.h"
#include "tfm/common/BoundedFile.h"
#include "tfm/common/BoundedJson.h"
#include "tfm/common/FieldReader.h"
#include "tfm/common/Identifier.h"
#include "tfm/common/RelativeBuckets.h"
#include "tfm/common/UntrustedText.h"

#include "llvm/Support/JSON.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"

#include <cctype>
#include <cmath>
#include <limits>
#include <cstdint>
#include <utility>
#include <vector>
#include <type_traits>
#include <optional>
#include <sstream>

using namespace tfm;
using tfm::config::FieldNames;
namespace json = llvm::json;

namespace {

/// A C identifier: the model name becomes part of file and symbol names.
std::string sanitizeName(const std::string &raw) {
  std::string out;
  for (char c : llvm::StringRef(raw).take_front(kMaxIdentifierLength))
    out += (std::isalnum(static_cast<unsigned char>(c)) || c == '_') ? c : '_';
  if (out.empty() || std::isdigit(static_cast<unsigned char>(out[0])))
    out = "m_" + out;
  return out;
}

/// The runtime looks token ids up in the token table, so they must index it.
void checkTokenId(FieldReader &r, const char *field, int64_t id, int64_t vocabSize) {
  if (!r.failed() && (id < 0 || id >= vocabSize))
    r.fail(field, (r.has(field) ? "found " + std::to_string(id)
                                : "absent, so the family default " + std::to_string(id) +
                                      " applies") +
                      "; expected a token id from 0 to " + std::to_string(vocabSize - 1) +
                      " (below vocab_size)");
}

/// A token id. Some configs list several ids (Llama 3 names two end-of-turn
/// tokens as eos_token_id); generation stops at one id, so the first is taken.
/// An id the config gives must index the vocabulary (the runtime looks it up
/// in the token table); `fallback` stands for an absent or null one.
} // namespace

int64_t config::tokenId(FieldReader &r, const char *field, int64_t fallback, int64_t vocabSize) {
  const json::Value *v = r.raw(field);
  const json::Array *list = v ? v->getAsArray() : nullptr;
  int64_t id = fallback;
  if (list) {
    std::optional<int64_t> first = list->empty() ? std::nullopt : (*list)[0].getAsInteger();
    if (!first)
      r.fail(field, "found " + FieldReader::describe(*v) +
                        ", expected an integer or a non-empty list of integers");
    id = first.value_or(fallback);
    // Every listed id must index the vocabulary, not only the one used.
    for (size_t i = 1; i < list->size() && !r.failed(); ++i) {
      std::optional<int64_t> other = (*list)[i].getAsInteger();
      if (!other || *other < 0 || *other >= vocabSize)
        r.fail(field, "item " + std::to_string(i) + " is " + FieldReader::describe((*list)[i]) +
                          ", expected a token id from 0 to " + std::to_string(vocabSize - 1) +
                          " (below vocab_size)");
    }
  } else {
    id = r.integer(field, false, fallback);
  }
  // A default id is checked too: GPT2Config's 50256 is no token of a smaller vocabulary.
  checkTokenId(r, field, id, vocabSize);
  return id;
}

std::vector<int64_t> config::tokenIdList(FieldReader &r, const char *field) {
  const json::Value *v = r.raw(field);
  const json::Array *list = v ? v->getAsArray() : nullptr;
  std::vector<int64_t> ids;
  for (size_t i = 0; list && i < list->size(); ++i) {
    std::optional<int64_t> id = (*list)[i].getAsInteger();
    if (!id || *id < 0) {
      r.fail(field, "item " + std::to_string(i) + " is " + FieldReader::describe((*list)[i]) +
                        ", expected a token id");
      return {};
    }
    ids.push_back(*id);
  }
  if (v && !list && v->kind() != json::Value::Null && !v->getAsInteger())
    r.fail(field, "found " + FieldReader::describe(*v) + ", expected a list of token ids");
  return ids;
}

/// A number that must be finite and above zero (an epsilon, a RoPE base):
/// -0 or a negative epsilon is no norm, and -0 would not survive the trip
/// through the canonical JSON (it reads back as 0).
double config::positiveNumber(FieldReader &r, const char *field, double fallback) {
  double value = r.number(field, fallback);
  if (!r.failed() && !(std::isfinite(value) && value > 0))
    r.fail(field, "found " + FieldReader::describe(llvm::json::Value(value)) +
                      ", expected a positive number");
  return value;
}

namespace {

/// Generated kernels index every buffer with int32 element offsets (Halide's
/// buffer indexing), and the driver declares sizes as int32.
constexpr int64_t kMaxElements = INT32_MAX;
/// Far above any published model (Llama 3 405B has 126 layers); the IR and
/// the compile time grow with the layer count.
constexpr int64_t kMaxLayers = 1024;

/// Refuses sizes whose buffers the generated code cannot index: each size,
/// and the products that size a weight, a cache or an activation.
void checkIndexableSizes(FieldReader &r, const ModelSpec &s, const FieldNames &f) {
  if (r.failed())
    return;
  if (s.nLayers > kMaxLayers)
    r.fail(f.nLayers, "found " + std::to_string(s.nLayers) + ", expected at most " +
                          std::to_string(kMaxLayers) + " layers");
  struct Buffer {
    const char *what;
    std::vector<std::pair<const char *, int64_t>> factors;
  };
  const Buffer buffers[] = {
      {"the token embedding and output tables", {{f.vocabSize, s.vocabSize}, {f.dim, s.dim}}},
      {"each feed-forward matrix", {{f.hiddenDim, s.hiddenDim}, {f.dim, s.dim}}},
      {"the query and attention output matrices",
       {{f.nHeads, s.nHeads}, {f.headDim, s.headDim}, {f.dim, s.dim}}},
      {"one layer's key or value cache",
       {{f.contextLength, s.contextLength}, {f.nKvHeads, s.nKvHeads}, {f.headDim, s.headDim}}},
      {"the activations of a full context", {{f.contextLength, s.contextLength}, {f.dim, s.dim}}},
  };
  for (const Buffer &buffer : buffers) {
    int64_t elements = 1;
    std::string formula, values;
    for (const auto &[field, size] : buffer.factors) {
      formula += (formula.empty() ? "" : " x ") + std::string(field);
      values += (values.empty() ? "" : " x ") + std::to_string(size);
      // Each factor is at most 2^31 here, so the running product cannot
      // overflow int64 before it is compared.
      elements = size > kMaxElements ? kMaxElements + 1 : elements * size;
      if (elements > kMaxElements)
        break;
    }
    if (elements > kMaxElements) {
      r.fail(buffer.factors.front().first,
             formula + " = " + values + " elements in " + buffer.what +
                 ", more than the " + std::to_string(kMaxElements) +
                 " a generated kernel can index (int32 element offsets)");
      return;
    }
  }
}


/// RoPE's frequency factors: one per rotated pair, LongRoPE's two lists
/// together with the context they switch at. (A family's config computes
/// them; a canonical config states them.)
void checkRopeFactors(FieldReader &r, const ModelSpec &s) {
  size_t pairs = s.positions == Positions::Rope ? static_cast<size_t>(s.rotaryDim / 2) : 0;
  const std::pair<const char *, const std::vector<double> *> lists[] = {
      {"rope_freq_factors", &s.ropeFreqFactors},
      {"rope_short_factors", &s.ropeShortFactors},
      {"rope_long_factors", &s.ropeLongFactors}};
  for (const auto &[field, factors] : lists)
    if (!r.failed() && !factors->empty() && factors->size() != pairs)
      r.fail(field, "has " + std::to_string(factors->size()) +
                        " entries, expected one per rotated pair (" + std::to_string(pairs) + ")");
  bool longRope = !s.ropeShortFactors.empty() || !s.ropeLongFactors.empty();
  if (!r.failed() && longRope &&
      (s.ropeShortFactors.empty() || s.ropeLongFactors.empty() || s.ropeOriginalContext < 1 ||
       !s.ropeFreqFactors.empty()))
    r.fail("rope_short_factors", "and rope_long_factors (LongRoPE) need each other and "
                                 "rope_original_context >= 1, and exclude rope_freq_factors");
  if (!r.failed() && !(s.ropeAttnFactor > 0.0 && std::isfinite(s.ropeAttnFactor)))
    r.fail("rope_attn_factor", "found " + std::to_string(s.ropeAttnFactor) +
                                   ", expected a positive number");
}

/// Switches that contradict each other or the sizes; each message names both
/// fields as the family's config spells them.
void checkVariants(FieldReader &r, const ModelSpec &s, const FieldNames &f) {
  if (r.failed())
    return;
  if (s.alibi && s.positions == Positions::Rope)
    r.fail(f.alibi, std::string("found true together with RoPE (") +
                        (f.positions ? f.positions : "the family's positions") +
                        "), expected one of them: ALiBi and RoPE both encode positions");
  if (s.positions == Positions::Rope && !r.failed()) {
    const char *rotary = f.rotaryDim ? f.rotaryDim : f.headDim;
    if (s.rotaryDim <= 0 || s.rotaryDim > s.headDim)
      r.fail(rotary, "gives a rotary width of " + std::to_string(s.rotaryDim) +
                         " columns, expected 1 to " + f.headDim + " (" +
                         std::to_string(s.headDim) + ")");
    else if (s.rotaryDim % 2 != 0)
      r.fail(rotary, "gives a rotary width of " + std::to_string(s.rotaryDim) + " of " +
                         f.headDim + " (" + std::to_string(s.headDim) +
                         ") columns, expected an even number (RoPE rotates pairs)");
  }
  checkRopeFactors(r, s);
  if (!r.failed() && (s.nKvHeads > s.nHeads || s.nHeads % s.nKvHeads != 0))
    r.fail(f.nKvHeads, "found " + std::to_string(s.nKvHeads) + ", expected a divisor of " +
                           f.nHeads + " (" + std::to_string(s.nHeads) + ")");
  if (!r.failed() && (s.positionOffset < 0 || s.tokenTypes < 0 ||
                      (s.positions != Positions::Learned && s.positionOffset > 0)))
    r.fail(f.contextLength, "comes with a position offset of " +
                                std::to_string(s.positionOffset) + " and " +
                                std::to_string(s.tokenTypes) +
                                " token types, expected both >= 0 and an offset only with "
                                "learned positions");
  bool encDec = s.encoderDecoder();
  if (!r.failed() && (encDec != (s.nEncoderLayers > 0) || encDec != (s.sourceLength > 0) ||
                      encDec != (s.decoderStartTokenId >= 0)))
    r.fail(f.nLayers, std::string("comes with ") + std::to_string(s.nEncoderLayers) +
                          " encoder layers, a source length of " +
                          std::to_string(s.sourceLength) + " and decoder start token " +
                          std::to_string(s.decoderStartTokenId) + ", expected all three " +
                          (encDec ? "positive (an encoder-decoder)" : "unset (0, 0, -1)"));
  if (!r.failed() && s.decoderStartTokenId >= s.vocabSize)
    r.fail(f.vocabSize, "is " + std::to_string(s.vocabSize) + ", expected more than the "
                        "decoder start token " + std::to_string(s.decoderStartTokenId));
  if (!r.failed() && s.relativeBuckets > 0 &&
      (s.positions != Positions::None || s.relativeBuckets % 2 != 0 ||
       s.relativeMaxDistance < s.relativeBuckets / 2 ||
       s.relativeMaxDistance > kMaxRelativeDistance))
    r.fail(f.contextLength, "comes with " + std::to_string(s.relativeBuckets) +
                                " relative buckets up to distance " +
                                std::to_string(s.relativeMaxDistance) +
                                ", expected an even count, a distance of at least half of it "
                                "and at most " + std::to_string(kMaxRelativeDistance) +
                                ", and no other positions");
  if (!r.failed() && !(s.outputScale > 0.0 && std::isfinite(s.outputScale)))
    r.fail(f.dim, "comes with an output scale of " + std::to_string(s.outputScale) +
                      ", expected a positive number");
  if (!r.failed() && s.encoder() && s.slidingWindow > 0)
    r.fail(f.contextLength, "comes with a sliding window in an encoder, expected none: an "
                            "encoder's tokens attend to every other");
  if (!r.failed() && s.parallelResidual && s.normPosition == NormPosition::Post)
    r.fail(f.parallelResidual, std::string("found true together with post-LN (") +
                                   (f.postNorm ? f.postNorm : "the family's blocks") +
                                   "), expected one of them: a parallel block adds both "
                                   "branches to its input, a post-LN block normalises "
                                   "each sum");
}

} // namespace

void config::requireValue(FieldReader &r, const char *field, const json::Value &expected,
                          const char *why) {
  const json::Value *v = r.raw(field);
  if (r.failed() || !v || v->kind() == json::Value::Null || *v == expected)
    return;
  r.fail(field, "found " + FieldReader::describe(*v) + ", expected " +
                    FieldReader::describe(expected) + " (" + why + ")");
}

double config::linearRopeScale(FieldReader &r, const char *field) {
  const json::Value *v = r.raw(field);
  if (r.failed() || !v || v->kind() == json::Value::Null)
    return 1.0;
  const json::Object *o = v->getAsObject();
  std::optional<llvm::StringRef> kind;
  if (o)
    kind = o->getString("rope_type") ? o->getString("rope_type") : o->getString("type");
  std::optional<double> factor = o ? o->getNumber("factor") : std::nullopt;
  if (!kind || *kind != "linear" || !factor || !(*factor >= 1.0) || !std::isfinite(*factor))
    r.fail(field, "found " + FieldReader::describe(*v) +
                      ", expected null or {\"type\": \"linear\", \"factor\": F >= 1} "
                      "(linear position scaling is the RoPE scaling tfm compiles)");
  return factor.value_or(1.0);
}

namespace {

/// Llama 3's divisor of each pair's angle (transformers'
/// _compute_llama3_parameters, llama.cpp's rope_freqs): long wavelengths are
/// slowed by `factor`, short ones kept, those between blended.
std::vector<double> llama3FreqFactors(FieldReader &r, const char *field,
                                      const json::Object &scaling, const ModelSpec &s) {
  auto param = [&](const char *key) {
    std::optional<double> v = scaling.getNumber(key);
    if (!v || !std::isfinite(*v) || !(*v > 0.0))
      r.fail(field, std::string("has ") + key + " " +
                        (v ? FieldReader::describe(json::Value(*v)) : "missing") +
                        ", expected a positive number (Llama 3's scaling)");
    return v.value_or(1.0);
  };
  double factor = param("factor"), low = param("low_freq_factor"),
         high = param("high_freq_factor"), original = param("original_max_position_embeddings");
  if (r.failed())
    return {};
  if (!(high > low))
    r.fail(field, "has high_freq_factor " + FieldReader::describe(json::Value(high)) +
                      ", expected it above low_freq_factor " +
                      FieldReader::describe(json::Value(low)));
  std::vector<double> factors;
  for (int64_t i = 0; i < s.rotaryDim / 2 && !r.failed(); ++i) {
    double invFreq = std::pow(s.ropeTheta, -2.0 * double(i) / double(s.rotaryDim));
    double wavelen = 2.0 * M_PI / invFreq;
    if (wavelen < original / high) {
      factors.push_back(1.0);
    } else if (wavelen > original / low) {
      factors.push_back(factor);
    } else {
      double smooth = (original / wavelen - low) / (high - low);
      factors.push_back(1.0 / ((1.0 - smooth) / factor + smooth));
    }
  }
  return factors;
}

/// One LongRoPE factor list of `scaling`: a positive number per rotated pair.
std::vector<double> longRopeFactors(FieldReader &r, const char *field,
                                    const json::Object &scaling, const char *key,
                                    const ModelSpec &s) {
  std::vector<double> factors;
  const json::Array *items = scaling.getArray(key);
  for (size_t i = 0; items && i < items->size(); ++i) {
    std::optional<double> v = (*items)[i].getAsNumber();
    if (!v || !(*v > 0.0) || !std::isfinite(*v))
      break;
    factors.push_back(*v);
  }
  size_t pairs = static_cast<size_t>(s.rotaryDim / 2);
  if (!items || factors.size() != items->size() || factors.size() != pairs)
    r.fail(field, std::string("has ") + key + " " +
                      (items ? FieldReader::describe(json::Value(json::Array(*items)))
                             : std::string("missing")) +
                      ", expected a positive number per rotated pair (" +
                      std::to_string(pairs) + ", LongRoPE)");
  return factors;
}

/// Phi-3's LongRoPE as transformers' _compute_longrope_parameters reads it:
/// the config's original_max_position_embeddings is the pretrained context
/// (its ratio to max_position_embeddings the scale), else the context and
/// rope_scaling's factor; attention_factor, else sqrt(1 + ln(scale) /
/// ln(original)) for a scale above 1.
void readLongRope(FieldReader &r, const char *field, const json::Object &scaling,
                  ModelSpec &s) {
  s.ropeShortFactors = longRopeFactors(r, field, scaling, "short_factor", s);
  s.ropeLongFactors = longRopeFactors(r, field, scaling, "long_factor", s);
  double scale = scaling.getNumber("factor").value_or(1.0);
  s.ropeOriginalContext = s.contextLength;
  if (r.has("original_max_position_embeddings")) {
    s.ropeOriginalContext = r.positive("original_max_position_embeddings", true);
    scale = double(s.contextLength) / double(std::max<int64_t>(s.ropeOriginalContext, 1));
  }
  std::optional<double> attention = scaling.getNumber("attention_factor");
  if (attention)
    s.ropeAttnFactor = *attention;
  else if (scale > 1.0 && s.ropeOriginalContext > 1)
    s.ropeAttnFactor =
        std::sqrt(1.0 + std::log(scale) / std::log(double(s.ropeOriginalContext)));
}

} // namespace

void config::readLlamaRopeScaling(FieldReader &r, const char *field, ModelSpec &s) {
  const json::Value *v = r.raw(field);
  const json::Object *o = v ? v->getAsObject() : nullptr;
  std::optional<llvm::StringRef> kind;
  if (o)
    kind = o->getString("rope_type") ? o->getString("rope_type") : o->getString("type");
  if (kind && *kind == "llama3")
    s.ropeFreqFactors = llama3FreqFactors(r, field, *o, s);
  else if (kind && (*kind == "longrope" || *kind == "su")) // "su": Phi-3's first name of it
    readLongRope(r, field, *o, s);
  else if (!kind || *kind == "linear")
    s.ropeScale = linearRopeScale(r, field);
  else
    r.fail(field, "found " + FieldReader::describe(*v) +
                      ", expected null, {\"rope_type\": \"linear\", \"factor\": F >= 1}, "
                      "{\"rope_type\": \"llama3\", \"factor\", \"low_freq_factor\", "
                      "\"high_freq_factor\", \"original_max_position_embeddings\"} or "
                      "{\"rope_type\": \"longrope\", \"short_factor\", \"long_factor\"} "
                      "(the RoPE scalings tfm compiles)");
  if (r.failed() || !r.raw("rope_freq_factors"))
    return;
  if (!s.ropeFreqFactors.empty()) {
    r.fail("rope_freq_factors", std::string("is given together with ") + field +
                                    " llama3, expected one of them");
    return;
  }
  s.ropeFreqFactors = r.positiveNumbers("rope_freq_factors", false);
  if (!r.failed() && static_cast<int64_t>(s.ropeFreqFactors.size()) != s.rotaryDim / 2)
    r.fail("rope_freq_factors", "has " + std::to_string(s.ropeFreqFactors.size()) +
                                    " entries, expected one per rotated pair (" +
                                    std::to_string(s.rotaryDim / 2) + ")");
}

const std::vector<double> &tfm::ropeFactorsOf(const ModelSpec &spec) {
  if (spec.ropeShortFactors.empty())
    return spec.ropeFreqFactors;
  return spec.contextLength > spec.ropeOriginalContext ? spec.ropeLongFactors
                                                       : spec.ropeShortFactors;
}

bool tfm::slides(const ModelSpec &spec, int64_t layer) {
  return spec.slidingWindow > 0 &&
         (spec.slidingWindowPattern <= 1 || (layer + 1) % spec.slidingWindowPattern != 0);
}

int64_t tfm::slidingWindowOf(const ModelSpec &spec, int64_t layer) {
  return slides(spec, layer) && spec.slidingWindow < spec.contextLength ? spec.slidingWindow
                                                                        : 0;
}

void config::checkSpec(FieldReader &r, const ModelSpec &s, const FieldNames &f) {
  checkVariants(r, s, f);
  checkIndexableSizes(r, s, f);
}

std::vector<float> tfm::alibiSlopes(const ModelSpec &spec) {
  if (!spec.alibi)
    return {};
  // The paper's slopes for n heads, n a power of two, are the geometric
  // sequence 2^(-maxBias/n * k), k = 1..n. Otherwise the n2 = 2^floor(log2 n)
  // slopes of n2 heads come first, then every other slope of 2*n2 heads.
  int64_t n = spec.nHeads, n2 = 1;
  while (n2 * 2 <= n)
    n2 *= 2;
  std::vector<float> slopes;
  // Falcon adds the bias before scaling the scores.
  double scale = spec.family == Family::Falcon ? 1.0 / std::sqrt(double(spec.headDim)) : 1.0;
  for (int64_t h = 0; h < n; ++h) {
    double exponent = h < n2 ? (h + 1) * spec.alibiMaxBias / n2
                             : (2 * (h - n2) + 1) * spec.alibiMaxBias / (2 * n2);
    slopes.push_back(static_cast<float>(std::pow(2.0, -exponent) * scale));
  }
  return slopes;
}

namespace {

/// The canonical fields, one list: canonicalJson() writes them and
/// parseCanonicalSpec() reads every one back. `positive` marks sizes.
template <typename Spec, typename Visit>
void forEachCanonicalField(Spec &s, Visit &&visit) {
  visit("name", s.name, false);
  visit("family", s.family, false);
  visit("architecture", s.architecture, false);
  visit("dim", s.dim, true);
  visit("hidden_dim", s.hiddenDim, true);
  visit("n_layers", s.nLayers, true);
  visit("n_encoder_layers", s.nEncoderLayers, false);
  visit("source_length", s.sourceLength, false);
  visit("n_heads", s.nHeads, true);
  visit("n_kv_heads", s.nKvHeads, true);
  visit("head_dim", s.headDim, true);
  visit("vocab_size", s.vocabSize, true);
  visit("context_length", s.contextLength, true);
  visit("position_offset", s.positionOffset, false);
  visit("token_types", s.tokenTypes, false);
  visit("positions", s.positions, false);
  visit("rope_theta", s.ropeTheta, false);
  visit("rope_interleaved", s.ropeInterleaved, false);
  visit("rotary_dim", s.rotaryDim, false);
  visit("rope_scale", s.ropeScale, false);
  visit("rope_freq_factors", s.ropeFreqFactors, false);
  visit("rope_short_factors", s.ropeShortFactors, false);
  visit("rope_long_factors", s.ropeLongFactors, false);
  visit("rope_original_context", s.ropeOriginalContext, false);
  visit("rope_attn_factor", s.ropeAttnFactor, false);
  visit("relative_buckets", s.relativeBuckets, false);
  visit("relative_max_distance", s.relativeMaxDistance, false);
  visit("sliding_window", s.slidingWindow, false);
  visit("sliding_window_pattern", s.slidingWindowPattern, false);
  visit("rope_local_theta", s.ropeLocalTheta, false);
  visit("alibi", s.alibi, false);
  visit("alibi_max_bias", s.alibiMaxBias, false);
  visit("norm", s.norm, false);
  visit("norm_bias", s.normBias, false);
  visit("norm_eps", s.normEps, false);
  visit("norm_weight_offset", s.normWeightOffset, false);
  visit("sandwich_norms", s.sandwichNorms, false);
  visit("post_norm", s.normPosition, false);
  visit("parallel_residual", s.parallelResidual, false);
  visit("parallel_norms", s.parallelNorms, false);
  visit("embedding_norm", s.embeddingNorm, false);
  visit("activation", s.activation, false);
  visit("gated_ffn", s.ffn, false);
  visit("fused_qkv", s.fusedQkv, false);
  visit("fused_gate_up", s.fusedGateUp, false);
  visit("qkv_bias", s.qkvBias, false);
  visit("qk_norm", s.qkNorm, false);
  visit("attn_out_bias", s.attnOutBias, false);
  visit("ffn_bias", s.ffnBias, false);
  visit("clip_qkv", s.clipQkv, false);
  visit("attn_scale", s.attnScale, false);
  visit("attn_softcap", s.attnSoftcap, false);
  visit("final_softcap", s.finalSoftcap, false);
  visit("embedding_scale", s.embeddingScale, false);
  visit("output_scale", s.outputScale, false);
  visit("output_bias", s.outputBias, false);
  visit("tied_embeddings", s.tiedEmbeddings, false);
  visit("bos_token_id", s.bosTokenId, false);
  visit("eos_token_id", s.eosTokenId, false);
  visit("eos_token_id_list", s.eosTokenIdList, false);
  visit("decoder_start_token_id", s.decoderStartTokenId, false);
}

/// Reads one canonical field; every field is required.
struct CanonicalFieldReader {
  FieldReader &r;
  const json::Object &obj;

  void operator()(const char *key, std::string &value, bool) {
    value = r.string(key, true);
  }
  void operator()(const char *key, int64_t &value, bool positive) {
    value = positive ? r.positive(key, true) : r.integer(key, true);
  }
  void operator()(const char *key, double &value, bool) {
    if (!obj.get(key))
      r.fail(key, "missing, expected a number");
    value = r.number(key, value);
  }
  void operator()(const char *key, std::vector<double> &value, bool) {
    value = r.positiveNumbers(key, true);
  }
  void operator()(const char *key, std::vector<int64_t> &value, bool) {
    if (!obj.get(key))
      r.fail(key, "missing, expected a list of token ids");
    value = config::tokenIdList(r, key);
  }
  void operator()(const char *key, bool &value, bool) {
    if (!obj.get(key))
      r.fail(key, "missing, expected true or false");
    value = r.boolean(key, value);
  }
  /// A variant spelled by its name.
  template <typename Variant> void operator()(const char *key, Variant &value, bool) {
    std::string name = r.string(key, true);
    if (r.failed())
      return;
    if (std::optional<Variant> parsed = parseVariant<Variant>(name))
      value = *parsed;
    else
      r.fail(key, "found " + quoted(name) + ", expected one of " + variantNameList<Variant>());
  }
  // The two variants the canonical form spells as switches.
  void operator()(const char *key, NormPosition &value, bool) {
    bool post = false;
    (*this)(key, post, false);
    value = post ? NormPosition::Post : NormPosition::Pre;
  }
  void operator()(const char *key, FfnKind &value, bool) {
    bool gated = false;
    (*this)(key, gated, false);
    value = gated ? FfnKind::Gated : FfnKind::Plain;
  }
};

/// A field as the canonical JSON holds it: numbers, switches and strings as
/// they are, variants by name, except the norm position and the
/// feed-forward kind, which it holds as the switches post_norm and
/// gated_ffn.
template <typename Value> json::Value canonicalValue(const Value &value) { return value; }
template <typename Number> json::Value canonicalValue(const std::vector<Number> &value) {
  json::Array array;
  for (Number v : value)
    array.push_back(v);
  return array;
}
json::Value canonicalValue(Family value) { return variantName(value); }
json::Value canonicalValue(Architecture value) { return variantName(value); }
json::Value canonicalValue(Positions value) { return variantName(value); }
json::Value canonicalValue(Norm value) { return variantName(value); }
json::Value canonicalValue(Activation value) { return variantName(value); }
json::Value canonicalValue(NormPosition value) { return value == NormPosition::Post; }
json::Value canonicalValue(FfnKind value) { return value == FfnKind::Gated; }

} // namespace

std::string ModelSpec::canonicalJson() const {
  json::Object o;
  forEachCanonicalField(*this, [&](const char *key, const auto &value, bool) {
    o[key] = canonicalValue(value);
  });
  std::string s;
  llvm::raw_string_ostream os(s);
  os << json::Value(std::move(o)); // llvm::json prints object keys sorted
  return s;
}

namespace {
} // namespace

llvm::Expected<ModelSpec> tfm::parseCanonicalSpec(llvm::StringRef jsonText,
                                                  const std::string &source,
                                                  const std::string &fieldPrefix) {
  llvm::Expected<json::Value> parsed = parseBoundedJson(jsonText, source);
  const json::Object *obj = parsed ? parsed->getAsObject() : nullptr;
  if (!obj) {
    if (!parsed)
      llvm::consumeError(parsed.takeError());
    return failure(source + ": field '" + fieldPrefix + "': expected a JSON object");
  }
  ModelSpec spec;
  FieldReader r(*obj, source, fieldPrefix);
  forEachCanonicalField(spec, CanonicalFieldReader{r, *obj});
  checkTokenId(r, "bos_token_id", spec.bosTokenId, spec.vocabSize);
  checkTokenId(r, "eos_token_id", spec.eosTokenId, spec.vocabSize);
  // The canonical names: a manifest or IR that was edited is checked as a
  // config would be.
  config::FieldNames names{"dim",      "hidden_dim", "n_layers",   "n_heads",
                           "n_kv_heads", "head_dim", "vocab_size", "context_length"};
  names.positions = "positions", names.alibi = "alibi", names.rotaryDim = "rotary_dim";
  names.parallelResidual = "parallel_residual", names.postNorm = "post_norm";
  config::checkSpec(r, spec, names);
  if (r.failed())
    return failure(r.message());
  return spec;
}

llvm::Expected<ModelSpec> tfm::parseModelSpec(llvm::StringRef jsonText, const std::string &path,
                                              FieldReader::FieldNamer namer) {
  llvm::Expected<json::Object> obj = parseBoundedJsonObject(jsonText, path);
  if (!obj)
    return obj.takeError();
  if (!obj->get("model_type") && obj->get("family"))
    return parseCanonicalSpec(jsonText, path, "");

  FieldReader r(*obj, path, "", std::move(namer));
  ModelSpec s;
  std::string type = r.string("model_type", true);
  if (r.failed())
    return failure(r.message());
  std::optional<Family> family = parseVariant<Family>(type);
  if (!family)
    r.fail("model_type", "found " + quoted(type) + ", expected one of " +
                             variantNameList<Family>());
  else
    config::parseFamily(*family, r, path, s);
  // Every family's ids were checked against its vocabulary (tokenId).
  s.eosTokenIdList = config::tokenIdList(r, "eos_token_id");

  std::string name = r.string("name", false);
  if (name.empty())
    name = llvm::sys::path::stem(path == "-" ? std::string("model") : path).str();
  if (name == "config") // a Hugging Face folder's config.json: use the folder name
    name = llvm::sys::path::filename(llvm::sys::path::parent_path(path)).str();
  s.name = sanitizeName(name);

  if (r.failed())
    return failure(r.message());
  return s;
}

llvm::Expected<ModelSpec> tfm::loadModelSpec(const std::string &path) {
  // Real configs are a few kilobytes; 16 MiB leaves room for any metadata.
  constexpr uint64_t kMaxConfigBytes = 16 << 20;
  auto buf = readBoundedFile(path, kMaxConfigBytes, "config");
  if (!buf)
    return buf.takeError();
  return parseModelSpec((*buf)->getBuffer(), path);
}
