//===- ModelSpec.cpp - Parse and validate a model config ------------------===//
#include "tfm/common/ModelSpec.h"
#include "tfm/common/BoundedFile.h"
#include "tfm/common/BoundedJson.h"
#include "tfm/common/FieldReader.h"
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
namespace json = llvm::json;

namespace {

/// Longer model names are cut: the name becomes file and symbol names.
constexpr size_t kMaxNameLength = 64;

/// A C identifier: the model name becomes part of file and symbol names.
std::string sanitizeName(const std::string &raw) {
  std::string out;
  for (char c : llvm::StringRef(raw).take_front(kMaxNameLength))
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
int64_t tokenId(FieldReader &r, const char *field, int64_t fallback, int64_t vocabSize) {
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

/// A number that must be finite and above zero (an epsilon, a RoPE base):
/// -0 or a negative epsilon is no norm, and -0 would not survive the trip
/// through the canonical JSON (it reads back as 0).
double positiveNumber(FieldReader &r, const char *field, double fallback) {
  double value = r.number(field, fallback);
  if (!r.failed() && !(std::isfinite(value) && value > 0))
    r.fail(field, "found " + FieldReader::describe(llvm::json::Value(value)) +
                      ", expected a positive number");
  return value;
}

/// The names a family's config gives its sizes, for messages.
struct SizeFields {
  const char *dim, *hiddenDim, *nLayers, *nHeads, *nKvHeads, *headDim, *vocabSize,
      *contextLength;
};
constexpr SizeFields kLlamaSizeFields{"hidden_size",         "intermediate_size",
                                      "num_hidden_layers",   "num_attention_heads",
                                      "num_key_value_heads", "head_dim",
                                      "vocab_size",          "max_position_embeddings"};
constexpr SizeFields kGpt2SizeFields{"n_embd", "n_inner",    "n_layer",    "n_head",
                                     "n_head", "n_embd",     "vocab_size", "n_positions"};
constexpr SizeFields kCanonicalSizeFields{"dim",      "hidden_dim", "n_layers",   "n_heads",
                                          "n_kv_heads", "head_dim", "vocab_size", "context_length"};

/// Generated kernels index every buffer with int32 element offsets (Halide's
/// buffer indexing), and the driver declares sizes as int32.
constexpr int64_t kMaxElements = INT32_MAX;
/// Far above any published model (Llama 3 405B has 126 layers); the IR and
/// the compile time grow with the layer count.
constexpr int64_t kMaxLayers = 1024;

/// Refuses sizes whose buffers the generated code cannot index: each size,
/// and the products that size a weight, a cache or an activation.
void checkIndexableSizes(FieldReader &r, const ModelSpec &s, const SizeFields &f) {
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

void parseLlama(FieldReader &r, ModelSpec &s) {
  s.family = "llama";
  s.norm = "rms_norm";
  s.activation = "silu";
  s.positions = "rope";
  s.projectionBias = false;
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
  s.bosTokenId = tokenId(r, "bos_token_id", 1, s.vocabSize);
  s.eosTokenId = tokenId(r, "eos_token_id", 2, s.vocabSize);
  if (r.failed())
    return;

  // Features this family can carry that tfmc does not compile yet: refuse
  // them rather than silently compiling a different model.
  std::string act = r.string("hidden_act", false, "silu");
  if (!r.failed() && act != "silu")
    r.fail("hidden_act", "found " + quoted(act) + ", expected \"silu\" (the only Llama activation supported)");
  if (r.boolean("attention_bias", false))
    r.fail("attention_bias", "found true, expected false (biased Llama projections are not supported)");
  if (r.boolean("mlp_bias", false))
    r.fail("mlp_bias", "found true, expected false (biased Llama projections are not supported)");
  if (const json::Value *rs = r.raw("rope_scaling"))
    if (rs->kind() != json::Value::Null)
      r.fail("rope_scaling", "found " + FieldReader::describe(*rs) +
                                 ", expected null (RoPE scaling is not supported)");
  if (r.failed())
    return;

  // An explicit head_dim decouples the heads from the hidden size (q is
  // n_heads*head_dim wide, attn_output maps it back to hidden_size).
  if (r.has("head_dim")) {
    s.headDim = r.positive("head_dim", true);
  } else if (s.dim % s.nHeads != 0) {
    r.fail("hidden_size", "found " + std::to_string(s.dim) +
                              ", expected a multiple of num_attention_heads (" +
                              std::to_string(s.nHeads) + ") or an explicit head_dim");
    return;
  } else {
    s.headDim = s.dim / s.nHeads;
  }
  if (r.failed())
    return;
  if (s.headDim % 2 != 0)
    r.fail("head_dim", "found " + std::to_string(s.headDim) +
                           ", expected an even number (RoPE rotates pairs)");
  if (s.nHeads % s.nKvHeads != 0)
    r.fail("num_key_value_heads",
           "found " + std::to_string(s.nKvHeads) +
               ", expected a divisor of num_attention_heads (" +
               std::to_string(s.nHeads) + ")");
  checkIndexableSizes(r, s, kLlamaSizeFields);
}

/// GPT-2 as Hugging Face's GPT2Config describes it. Fields that do not change
/// the forward pass (dropout rates, summary_* of the classification head,
/// task_specific_params, use_cache, reorder_and_upcast_attn, which only moves
/// an upcast that f32 does not need) are not read.
void parseGpt2(FieldReader &r, ModelSpec &s) {
  s.family = "gpt2";
  s.norm = "layer_norm";
  s.positions = "learned";
  s.ropeTheta = 0.0;
  s.projectionBias = true;
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
  // null: 4 * n_embd; a huge n_embd saturates, for the size checks to refuse.
  const int64_t fourTimesDim = s.dim > 0 && s.dim <= std::numeric_limits<int64_t>::max() / 4
                                   ? 4 * s.dim
                                   : std::numeric_limits<int64_t>::max();
  s.hiddenDim = r.positive("n_inner", false, fourTimesDim);
  s.normEps = positiveNumber(r, "layer_norm_epsilon", 1e-5);
  s.tiedEmbeddings = r.boolean("tie_word_embeddings", true);
  s.bosTokenId = tokenId(r, "bos_token_id", 50256, s.vocabSize);
  s.eosTokenId = tokenId(r, "eos_token_id", 50256, s.vocabSize);
  if (r.failed())
    return;

  std::string act = r.string("activation_function", false, "gelu_new");
  if (act == "gelu_new" || act == "gelu_pytorch_tanh")
    s.activation = "gelu_tanh";
  else if (act == "gelu")
    s.activation = "gelu";
  else if (!r.failed())
    r.fail("activation_function",
           "found " + quoted(act) +
               ", expected \"gelu_new\" or \"gelu_pytorch_tanh\" (tanh GELU) or \"gelu\" "
               "(exact GELU)");
  if (!r.boolean("scale_attn_weights", true) && !r.failed())
    r.fail("scale_attn_weights",
           "found false, expected true (attention scores are scaled by 1/sqrt(head_dim))");
  if (r.boolean("scale_attn_by_inverse_layer_idx", false))
    r.fail("scale_attn_by_inverse_layer_idx",
           "found true, expected false (per-layer score scaling is not supported)");
  if (r.boolean("add_cross_attention", false))
    r.fail("add_cross_attention",
           "found true, expected false (cross-attention is not supported)");
  if (r.failed())
    return;

  if (s.dim % s.nHeads != 0) {
    r.fail("n_embd", "found " + std::to_string(s.dim) + ", expected a multiple of n_head (" +
                         std::to_string(s.nHeads) + ")");
    return;
  }
  s.headDim = s.dim / s.nHeads;
  checkIndexableSizes(r, s, kGpt2SizeFields);
}

/// The canonical fields, one list: canonicalJson() writes them and
/// parseCanonicalSpec() reads every one back. `positive` marks sizes.
template <typename Spec, typename Visit>
void forEachCanonicalField(Spec &s, Visit &&visit) {
  visit("name", s.name, false);
  visit("family", s.family, false);
  visit("dim", s.dim, true);
  visit("hidden_dim", s.hiddenDim, true);
  visit("n_layers", s.nLayers, true);
  visit("n_heads", s.nHeads, true);
  visit("n_kv_heads", s.nKvHeads, true);
  visit("head_dim", s.headDim, true);
  visit("vocab_size", s.vocabSize, true);
  visit("context_length", s.contextLength, true);
  visit("norm", s.norm, false);
  visit("norm_eps", s.normEps, false);
  visit("activation", s.activation, false);
  visit("positions", s.positions, false);
  visit("rope_theta", s.ropeTheta, false);
  visit("projection_bias", s.projectionBias, false);
  visit("tied_embeddings", s.tiedEmbeddings, false);
  visit("bos_token_id", s.bosTokenId, false);
  visit("eos_token_id", s.eosTokenId, false);
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
  void operator()(const char *key, bool &value, bool) {
    if (!obj.get(key))
      r.fail(key, "missing, expected true or false");
    value = r.boolean(key, value);
  }
};

} // namespace

std::string ModelSpec::canonicalJson() const {
  json::Object o;
  forEachCanonicalField(*this, [&](const char *key, const auto &value, bool) {
    o[key] = value;
  });
  std::string s;
  llvm::raw_string_ostream os(s);
  os << json::Value(std::move(o)); // llvm::json prints object keys sorted
  return s;
}

namespace {
llvm::Error failure(const std::string &message) {
  return llvm::createStringError(llvm::inconvertibleErrorCode(), message);
}
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
  checkIndexableSizes(r, spec, kCanonicalSizeFields);
  if (r.failed())
    return failure(r.message());
  return spec;
}

llvm::Expected<ModelSpec> tfm::parseModelSpec(llvm::StringRef jsonText, const std::string &path) {
  llvm::Expected<json::Value> parsed = parseBoundedJson(jsonText, path);
  if (!parsed)
    return parsed.takeError();
  const json::Object *obj = parsed->getAsObject();
  if (!obj)
    return failure(path + ": expected a JSON object at the top level");

  FieldReader r(*obj, path);
  ModelSpec s;
  std::string type = r.string("model_type", true);
  if (r.failed())
    return failure(r.message());
  if (type == "llama")
    parseLlama(r, s);
  else if (type == "gpt2")
    parseGpt2(r, s);
  else
    r.fail("model_type", "found " + quoted(type) + ", expected one of: \"llama\", \"gpt2\"");

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
