//===- Manifest.cpp - Parse a generated model's manifest JSON -------------===//
#include "tfm/runtime/Manifest.h"

#include "tfm/Config/FieldReader.h"

#include "llvm/Support/JSON.h"

namespace json = llvm::json;
using namespace tfm::rt;

namespace {

llvm::Error failure(const tfm::FieldReader &r) {
  return llvm::createStringError(llvm::inconvertibleErrorCode(), r.message());
}

llvm::Error parseConfig(const json::Object &obj, const std::string &source,
                        tfm::ModelSpec &c) {
  std::string text;
  llvm::raw_string_ostream os(text);
  os << json::Value(json::Object(obj));
  tfm::ParsedSpec parsed = tfm::parseCanonicalSpec(os.str(), source, "config.");
  if (!parsed.ok)
    return llvm::createStringError(llvm::inconvertibleErrorCode(), parsed.error);
  c = parsed.spec;
  return llvm::Error::success();
}

llvm::Error parseTensor(const json::Value &v, size_t index,
                        const std::string &source, TensorSpec &t) {
  std::string prefix = "tensors[" + std::to_string(index) + "].";
  const json::Object *obj = v.getAsObject();
  if (!obj)
    return llvm::createStringError(
        llvm::inconvertibleErrorCode(),
        source + ": field 'tensors[" + std::to_string(index) + "]': found " +
            tfm::FieldReader::describe(v) + ", expected an object");
  tfm::FieldReader r(*obj, source, prefix);
  t.name = r.string("name", true);
  t.dtype = r.string("dtype", true);
  if (const json::Value *shape = r.require("shape", "an array of positive integers")) {
    const json::Array *dims = shape->getAsArray();
    if (!dims)
      r.fail("shape", "found " + tfm::FieldReader::describe(*shape) +
                          ", expected an array of positive integers");
    else
      for (const json::Value &d : *dims) {
        std::optional<int64_t> n = d.getAsInteger();
        if (!n || *n <= 0) {
          r.fail("shape", "found " + tfm::FieldReader::describe(*shape) +
                              ", expected an array of positive integers");
          break;
        }
        t.shape.push_back(*n);
      }
  }
  if (!r.failed() && t.dtype != "f32")
    r.fail("dtype", "found \"" + t.dtype + "\", expected \"f32\" (the only dtype this runtime binds)");
  return r.failed() ? failure(r) : llvm::Error::success();
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
  tfm::FieldReader r(*obj, source, "");
  m.abiVersion = r.integer("abi_version", true);
  m.name = r.string("name", true);
  m.configHash = r.string("config_hash", true);
  m.target = r.string("target", true);
  m.schedule = r.string("schedule", true);
  const json::Value *config = r.require("config", "an object");
  const json::Value *tensors = r.require("tensors", "an array");
  if (r.failed())
    return failure(r);

  if (!config->getAsObject()) {
    r.fail("config", "found " + tfm::FieldReader::describe(*config) + ", expected an object");
    return failure(r);
  }
  if (llvm::Error e = parseConfig(*config->getAsObject(), source, m.config))
    return std::move(e);

  const json::Array *list = tensors->getAsArray();
  if (!list) {
    r.fail("tensors", "found " + tfm::FieldReader::describe(*tensors) + ", expected an array");
    return failure(r);
  }
  for (size_t i = 0; i < list->size(); ++i) {
    TensorSpec t;
    if (llvm::Error e = parseTensor((*list)[i], i, source, t))
      return std::move(e);
    m.tensors.push_back(std::move(t));
  }
  return m;
}
