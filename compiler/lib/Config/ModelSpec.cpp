//===- ModelSpec.cpp - Parse and validate a model config ------------------===//
#include "tfm/Config/ModelSpec.h"

#include "llvm/Support/JSON.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"

#include <cctype>
#include <cstdio>
#include <sstream>

using namespace tfm;
namespace json = llvm::json;

namespace {

/// Reads fields from one JSON object and records the first problem found,
/// phrased as "<file>: field '<name>': found ..., expected ...".
class FieldReader {
public:
  FieldReader(const json::Object &obj, std::string path, std::string prefix = "")
      : obj(obj), path(std::move(path)), prefix(std::move(prefix)) {}

  bool failed() const { return !error.empty(); }
  const std::string &message() const { return error; }

  void fail(const std::string &field, const std::string &what) {
    if (error.empty())
      error = path + ": field '" + prefix + field + "': " + what;
  }

  int64_t integer(const char *field, bool required, int64_t fallback = 0) {
    const json::Value *v = obj.get(field);
    if (!v || v->kind() == json::Value::Null) {
      if (required)
        fail(field, "missing, expected an integer");
      return fallback;
    }
    if (auto i = v->getAsInteger())
      return *i;
    fail(field, "found " + describe(*v) + ", expected an integer");
    return fallback;
  }

  int64_t positive(const char *field, bool required, int64_t fallback = 0) {
    int64_t v = integer(field, required, fallback);
    if (!failed() && v <= 0 && (required || obj.get(field)))
      fail(field, "found " + std::to_string(v) + ", expected a positive integer");
    return v;
  }

  double number(const char *field, double fallback) {
    const json::Value *v = obj.get(field);
    if (!v || v->kind() == json::Value::Null)
      return fallback;
    if (auto d = v->getAsNumber())
      return *d;
    fail(field, "found " + describe(*v) + ", expected a number");
    return fallback;
  }

  bool boolean(const char *field, bool fallback) {
    const json::Value *v = obj.get(field);
    if (!v || v->kind() == json::Value::Null)
      return fallback;
    if (auto b = v->getAsBoolean())
      return *b;
    fail(field, "found " + describe(*v) + ", expected true or false");
    return fallback;
  }

  std::string string(const char *field, bool required, std::string fallback = "") {
    const json::Value *v = obj.get(field);
    if (!v || v->kind() == json::Value::Null) {
      if (required)
        fail(field, "missing, expected a string");
      return fallback;
    }
    if (auto s = v->getAsString())
      return s->str();
    fail(field, "found " + describe(*v) + ", expected a string");
    return fallback;
  }

  const json::Value *raw(const char *field) const { return obj.get(field); }

  static std::string describe(const json::Value &v) {
    std::string s;
    llvm::raw_string_ostream os(s);
    os << v;
    return s;
  }

private:
  const json::Object &obj;
  std::string path;
  std::string prefix; // where the object sits in its file, e.g. "config."
  std::string error;
};

/// A C identifier: the model name becomes part of file and symbol names.
std::string sanitizeName(const std::string &raw) {
  std::string out;
  for (char c : raw)
    out += (std::isalnum(static_cast<unsigned char>(c)) || c == '_') ? c : '_';
  if (out.empty() || std::isdigit(static_cast<unsigned char>(out[0])))
    out = "m_" + out;
  return out;
}

void parseLlama(FieldReader &r, ModelSpec &s) {
  s.family = "llama";
  s.dim = r.positive("hidden_size", true);
  s.hiddenDim = r.positive("intermediate_size", true);
  s.nLayers = r.positive("num_hidden_layers", true);
  s.nHeads = r.positive("num_attention_heads", true);
  s.nKvHeads = r.positive("num_key_value_heads", false, s.nHeads);
  s.vocabSize = r.positive("vocab_size", true);
  s.contextLength = r.positive("max_position_embeddings", true);
  s.normEps = r.number("rms_norm_eps", 1e-6);
  s.ropeTheta = r.number("rope_theta", 10000.0);
  s.tiedEmbeddings = r.boolean("tie_word_embeddings", false);
  s.bosTokenId = r.integer("bos_token_id", false, 1);
  s.eosTokenId = r.integer("eos_token_id", false, 2);
  if (r.failed())
    return;

  // Features this family can carry that tfmc does not compile yet: refuse
  // them rather than silently compiling a different model.
  std::string act = r.string("hidden_act", false, "silu");
  if (!r.failed() && act != "silu")
    r.fail("hidden_act", "found \"" + act + "\", expected \"silu\" (the only Llama activation supported)");
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

  if (s.dim % s.nHeads != 0) {
    r.fail("hidden_size", "found " + std::to_string(s.dim) +
                              ", expected a multiple of num_attention_heads (" +
                              std::to_string(s.nHeads) + ")");
    return;
  }
  s.headDim = r.positive("head_dim", false, s.dim / s.nHeads);
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
}

} // namespace

std::string tfm::stableHash(const std::string &text) {
  uint64_t h = 14695981039346656037ull;
  for (unsigned char c : text) {
    h ^= c;
    h *= 1099511628211ull;
  }
  char buf[17];
  std::snprintf(buf, sizeof buf, "%016llx", static_cast<unsigned long long>(h));
  return buf;
}

std::string ModelSpec::canonicalJson() const {
  json::Object o{{"name", name},
                 {"family", family},
                 {"dim", dim},
                 {"hidden_dim", hiddenDim},
                 {"n_layers", nLayers},
                 {"n_heads", nHeads},
                 {"n_kv_heads", nKvHeads},
                 {"head_dim", headDim},
                 {"vocab_size", vocabSize},
                 {"context_length", contextLength},
                 {"norm_eps", normEps},
                 {"rope_theta", ropeTheta},
                 {"tied_embeddings", tiedEmbeddings},
                 {"dtype", dtype},
                 {"bos_token_id", bosTokenId},
                 {"eos_token_id", eosTokenId}};
  std::string s;
  llvm::raw_string_ostream os(s);
  os << json::Value(std::move(o)); // llvm::json prints object keys sorted
  return s;
}

ParsedSpec tfm::parseCanonicalSpec(const std::string &jsonText, const std::string &source,
                                   const std::string &fieldPrefix) {
  ParsedSpec result;
  llvm::Expected<json::Value> parsed = json::parse(jsonText);
  const json::Object *obj = parsed ? parsed->getAsObject() : nullptr;
  if (!obj) {
    if (!parsed)
      llvm::consumeError(parsed.takeError());
    result.error = source + ": field '" + fieldPrefix + "': expected a JSON object";
    return result;
  }
  // The same keys canonicalJson() writes, all required.
  FieldReader r(*obj, source, fieldPrefix);
  ModelSpec &s = result.spec;
  s.name = r.string("name", true);
  s.family = r.string("family", true);
  s.dim = r.positive("dim", true);
  s.hiddenDim = r.positive("hidden_dim", true);
  s.nLayers = r.positive("n_layers", true);
  s.nHeads = r.positive("n_heads", true);
  s.nKvHeads = r.positive("n_kv_heads", true);
  s.headDim = r.positive("head_dim", true);
  s.vocabSize = r.positive("vocab_size", true);
  s.contextLength = r.positive("context_length", true);
  s.normEps = r.number("norm_eps", s.normEps);
  s.ropeTheta = r.number("rope_theta", s.ropeTheta);
  s.tiedEmbeddings = r.boolean("tied_embeddings", false);
  s.dtype = r.string("dtype", true);
  s.bosTokenId = r.integer("bos_token_id", true);
  s.eosTokenId = r.integer("eos_token_id", true);
  for (const char *field : {"norm_eps", "rope_theta", "tied_embeddings"})
    if (!obj->get(field))
      r.fail(field, "missing");
  if (r.failed()) {
    result.error = r.message();
    return result;
  }
  result.ok = true;
  return result;
}

ParsedSpec tfm::parseModelSpec(const std::string &jsonText, const std::string &path) {
  ParsedSpec result;
  llvm::Expected<json::Value> parsed = json::parse(jsonText);
  if (!parsed) {
    result.error = path + ": not valid JSON: " + llvm::toString(parsed.takeError());
    return result;
  }
  const json::Object *obj = parsed->getAsObject();
  if (!obj) {
    result.error = path + ": expected a JSON object at the top level";
    return result;
  }

  FieldReader r(*obj, path);
  ModelSpec &s = result.spec;
  std::string type = r.string("model_type", true);
  if (r.failed()) {
    result.error = r.message();
    return result;
  }
  if (type == "llama") {
    parseLlama(r, s);
  } else {
    r.fail("model_type", "found \"" + type + "\", expected one of: \"llama\"");
  }

  std::string name = r.string("name", false);
  if (name.empty())
    name = llvm::sys::path::stem(path == "-" ? std::string("model") : path).str();
  if (name == "config") // a Hugging Face folder's config.json: use the folder name
    name = llvm::sys::path::filename(llvm::sys::path::parent_path(path)).str();
  s.name = sanitizeName(name);

  if (r.failed()) {
    result.error = r.message();
    return result;
  }
  result.ok = true;
  return result;
}

ParsedSpec tfm::loadModelSpec(const std::string &path) {
  auto buf = llvm::MemoryBuffer::getFile(path);
  if (!buf) {
    ParsedSpec r;
    r.error = path + ": cannot read config: " + buf.getError().message();
    return r;
  }
  return parseModelSpec((*buf)->getBuffer().str(), path);
}
