//===- Manifest.cpp - Parse a generated model's manifest JSON -------------===//
#include "tfm/runtime/Manifest.h"

#include "llvm/Support/JSON.h"

namespace json = llvm::json;
using namespace tfm::rt;

namespace {

/// Reads required fields of one JSON object; the first problem becomes the
/// error, phrased "<source>: field '<path>': found ..., expected ...".
class ManifestReader {
public:
  ManifestReader(const json::Object &obj, std::string source, std::string prefix)
      : obj(obj), source(std::move(source)), prefix(std::move(prefix)) {}

  bool failed() const { return !error.empty(); }
  llvm::Error takeError() {
    return llvm::createStringError(llvm::inconvertibleErrorCode(), error);
  }

  void fail(const std::string &field, const std::string &what) {
    if (error.empty())
      error = source + ": field '" + prefix + field + "': " + what;
  }

  const json::Value *require(const char *field, const char *expected) {
    const json::Value *v = obj.get(field);
    if (!v)
      fail(field, std::string("missing, expected ") + expected);
    return v;
  }

  int64_t integer(const char *field) {
    const json::Value *v = require(field, "an integer");
    if (!v)
      return 0;
    if (auto i = v->getAsInteger())
      return *i;
    fail(field, "found " + describe(*v) + ", expected an integer");
    return 0;
  }

  std::string string(const char *field) {
    const json::Value *v = require(field, "a string");
    if (!v)
      return "";
    if (auto s = v->getAsString())
      return s->str();
    fail(field, "found " + describe(*v) + ", expected a string");
    return "";
  }

  static std::string describe(const json::Value &v) {
    std::string s;
    llvm::raw_string_ostream os(s);
    os << v;
    return s;
  }

private:
  const json::Object &obj;
  std::string source;
  std::string prefix;
  std::string error;
};

llvm::Error parseConfig(const json::Object &obj, const std::string &source,
                        tfm::ModelSpec &c) {
  std::string text;
  llvm::raw_string_ostream os(text);
  os << json::Value(json::Object(obj));
  tfm::ParsedSpec parsed = tfm::parseCanonicalSpec(os.str(), source, "config.");
  if (!parsed.ok)
    return llvm::createStringError(llvm::inconvertibleErrorCode(), parsed.error);
  c = parsed.spec;
  ManifestReader r(obj, source, "config.");
  // The runtime indexes token tables with these.
  if (c.bosTokenId < 0 || c.bosTokenId >= c.vocabSize)
    r.fail("bos_token_id", "found " + std::to_string(c.bosTokenId) +
                               ", expected a token id below vocab_size " +
                               std::to_string(c.vocabSize));
  if (c.eosTokenId < 0 || c.eosTokenId >= c.vocabSize)
    r.fail("eos_token_id", "found " + std::to_string(c.eosTokenId) +
                               ", expected a token id below vocab_size " +
                               std::to_string(c.vocabSize));
  return r.failed() ? r.takeError() : llvm::Error::success();
}

llvm::Error parseTensor(const json::Value &v, size_t index,
                        const std::string &source, TensorSpec &t) {
  std::string prefix = "tensors[" + std::to_string(index) + "].";
  const json::Object *obj = v.getAsObject();
  if (!obj)
    return llvm::createStringError(
        llvm::inconvertibleErrorCode(),
        source + ": field 'tensors[" + std::to_string(index) + "]': found " +
            ManifestReader::describe(v) + ", expected an object");
  ManifestReader r(*obj, source, prefix);
  t.name = r.string("name");
  t.dtype = r.string("dtype");
  if (const json::Value *shape = r.require("shape", "an array of positive integers")) {
    const json::Array *dims = shape->getAsArray();
    if (!dims)
      r.fail("shape", "found " + ManifestReader::describe(*shape) +
                          ", expected an array of positive integers");
    else
      for (const json::Value &d : *dims) {
        std::optional<int64_t> n = d.getAsInteger();
        if (!n || *n <= 0) {
          r.fail("shape", "found " + ManifestReader::describe(*shape) +
                              ", expected an array of positive integers");
          break;
        }
        t.shape.push_back(*n);
      }
  }
  if (!r.failed() && t.dtype != "f32")
    r.fail("dtype", "found \"" + t.dtype + "\", expected \"f32\" (the only dtype this runtime binds)");
  return r.failed() ? r.takeError() : llvm::Error::success();
}

} // namespace

int64_t TensorSpec::elementCount() const {
  int64_t n = 1;
  for (int64_t d : shape)
    n *= d;
  return n;
}

std::string tfm::rt::formatShape(const std::vector<int64_t> &shape) {
  std::string s = "[";
  for (size_t i = 0; i < shape.size(); ++i)
    s += (i ? ", " : "") + std::to_string(shape[i]);
  return s + "]";
}

llvm::Expected<Manifest> tfm::rt::parseManifest(llvm::StringRef jsonText,
                                                const std::string &source) {
  llvm::Expected<json::Value> parsed = json::parse(jsonText);
  if (!parsed)
    return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                   source + ": not valid JSON: " +
                                       llvm::toString(parsed.takeError()));
  const json::Object *obj = parsed->getAsObject();
  if (!obj)
    return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                   source + ": expected a JSON object at the top level");

  Manifest m;
  ManifestReader r(*obj, source, "");
  m.abiVersion = r.integer("abi_version");
  m.name = r.string("name");
  m.configHash = r.string("config_hash");
  m.target = r.string("target");
  m.schedule = r.string("schedule");
  const json::Value *config = r.require("config", "an object");
  const json::Value *tensors = r.require("tensors", "an array");
  if (r.failed())
    return r.takeError();

  if (!config->getAsObject()) {
    r.fail("config", "found " + ManifestReader::describe(*config) + ", expected an object");
    return r.takeError();
  }
  if (llvm::Error e = parseConfig(*config->getAsObject(), source, m.config))
    return std::move(e);

  const json::Array *list = tensors->getAsArray();
  if (!list) {
    r.fail("tensors", "found " + ManifestReader::describe(*tensors) + ", expected an array");
    return r.takeError();
  }
  for (size_t i = 0; i < list->size(); ++i) {
    TensorSpec t;
    if (llvm::Error e = parseTensor((*list)[i], i, source, t))
      return std::move(e);
    m.tensors.push_back(std::move(t));
  }
  return m;
}
