//===- Manifest.cpp - Read and write a generated model's manifest ---------===//
#include "tfm/common/Failure.h"
#include "tfm/common/Manifest.h"

#include "tfm/common/BoundedFile.h"
#include "tfm/common/BoundedJson.h"
#include "tfm/common/FieldReader.h"
#include "tfm/common/UntrustedText.h"

#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/JSON.h"

#include <set>

namespace json = llvm::json;
using namespace tfm;

namespace {

/// An optional array of tensor names.
void readTensorNames(FieldReader &r, const char *field, std::vector<std::string> &names) {
  const json::Value *value = r.raw(field);
  if (!value)
    return;
  const json::Array *items = value->getAsArray();
  for (size_t i = 0; items && i < items->size(); ++i) {
    std::optional<llvm::StringRef> name = (*items)[i].getAsString();
    if (!name) {
      items = nullptr;
      break;
    }
    names.push_back(name->str());
  }
  if (!items)
    r.fail(field, "found " + FieldReader::describe(*value) + ", expected an array of tensor names");
}

void readTensor(FieldReader &r, TensorSpec &t) {
  t.name = r.string("name", true);
  std::string dtype = r.string("dtype", true);
  if (const json::Value *shape = r.require("shape", "an array of positive integers")) {
    const json::Array *dims = shape->getAsArray();
    for (size_t i = 0; dims && i < dims->size(); ++i) {
      std::optional<int64_t> n = (*dims)[i].getAsInteger();
      if (!n || *n <= 0) {
        dims = nullptr;
        break;
      }
      t.shape.push_back(*n);
    }
    if (!dims)
      r.fail("shape", "found " + FieldReader::describe(*shape) +
                          ", expected an array of positive integers");
  }
  if (r.failed())
    return;
  std::optional<ElementEncoding> type = parseElementEncoding(dtype);
  if (!type) {
    r.fail("dtype", "found " + quoted(dtype) + ", expected one of f32, f16, bf16, q8_0, q4_0, "
                    "q4_k, q5_k, q6_k");
    return;
  }
  if (type->block && !t.shape.empty() && t.shape.back() % type->blockElements() != 0) {
    r.fail("dtype", "found " + quoted(dtype) + " for rows of " + std::to_string(t.shape.back()) +
                        " values, which do not hold whole blocks of " +
                        std::to_string(type->blockElements()));
    return;
  }
  t.dtype = *type;
}

} // namespace

int64_t TensorSpec::elementCount() const {
  int64_t n = 1;
  for (int64_t d : shape)
    n *= d;
  return n;
}

std::string Manifest::scheduleSummary() const {
  std::set<std::string> names;
  for (const KernelSchedule &k : kernels)
    names.insert(k.schedule);
  if (names.size() == 1)
    return *names.begin();
  std::string list;
  for (const std::string &n : names)
    list += (list.empty() ? "" : ", ") + n;
  return "mixed (" + list + ")";
}

std::string tfm::formatShape(const std::vector<int64_t> &shape) {
  std::string s = "[";
  for (size_t i = 0; i < shape.size(); ++i)
    s += (i ? ", " : "") + std::to_string(shape[i]);
  return s + "]";
}

llvm::Expected<Manifest> tfm::parseManifest(llvm::StringRef jsonText, const std::string &source) {
  llvm::Expected<json::Object> obj = parseBoundedJsonObject(jsonText, source);
  if (!obj)
    return obj.takeError();

  Manifest m;
  FieldReader r(*obj, source, "");
  m.abiVersion = r.integer("abi_version", true);
  m.name = r.string("name", true);
  m.buildHash = r.string("build_hash", true);
  m.target = r.string("target", true);
  const json::Value *config = r.require("config", "an object");
  const json::Value *kernels = r.require("kernels", "an array");
  const json::Value *tensors = r.require("tensors", "an array");
  if (r.failed())
    return failure(r.message());

  std::string configText;
  llvm::raw_string_ostream(configText) << *config;
  llvm::Expected<ModelSpec> spec = parseCanonicalSpec(configText, source, "config.");
  if (!spec)
    return spec.takeError();
  m.config = std::move(*spec);

  if (llvm::Error e = readObjects(r, kernels, "kernels", source, [&](FieldReader &k) {
        m.kernels.push_back({k.string("kernel", true), k.string("schedule", true), {},
                             k.string("tuning_key", false)});
        // A manifest written before the field has none: f32.
        std::string products = k.string("products", false, "f32");
        if (std::optional<Products> parsed = parseVariant<Products>(products))
          m.kernels.back().products = *parsed;
        else
          k.fail("products", "found " + quoted(products) + ", expected one of " +
                                 variantNameList<Products>());
        readTensorNames(k, "weights", m.kernels.back().weights);
      }))
    return std::move(e);
  if (llvm::Error e = readObjects(r, tensors, "tensors", source, [&](FieldReader &t) {
        m.tensors.emplace_back();
        readTensor(t, m.tensors.back());
      }))
    return std::move(e);
  // Optional: only a library compiled from a downloaded model records them.
  if (const json::Object *files = obj->getObject("files")) {
    FieldReader f(*files, source, "files.");
    m.files = {f.string("weights", false), f.string("tokenizer", false)};
    if (f.failed())
      return failure(f.message());
  }
  return m;
}

std::string tfm::formatManifest(const Manifest &m) {
  json::Array kernels;
  for (const KernelSchedule &k : m.kernels) {
    json::Array weights;
    for (const std::string &w : k.weights)
      weights.push_back(w);
    kernels.push_back(json::Object{
        {"kernel", k.kernel}, {"schedule", k.schedule}, {"weights", std::move(weights)},
        {"tuning_key", k.tuningKey}, {"products", variantName(k.products)}});
  }
  json::Array tensors;
  for (const TensorSpec &t : m.tensors) {
    json::Array shape;
    for (int64_t d : t.shape)
      shape.push_back(d);
    tensors.push_back(json::Object{
        {"name", t.name}, {"shape", std::move(shape)}, {"dtype", t.dtype.name()}});
  }
  json::Value config = llvm::cantFail(json::parse(m.config.canonicalJson()));
  json::Object manifest{{"abi_version", m.abiVersion}, {"name", m.name},
                        {"build_hash", m.buildHash},   {"target", m.target},
                        {"config", std::move(config)}, {"kernels", std::move(kernels)},
                        {"tensors", std::move(tensors)}};
  if (!m.files.weights.empty() || !m.files.tokenizer.empty())
    manifest["files"] = json::Object{{"weights", m.files.weights},
                                     {"tokenizer", m.files.tokenizer}};
  return llvm::formatv("{0:2}", json::Value(std::move(manifest))).str() + "\n";
}

llvm::Expected<Manifest> tfm::readManifestFile(const std::string &path) {
  auto text = readBoundedFile(path, kMaxManifestBytes, "manifest");
  if (!text)
    return text.takeError();
  return parseManifest((*text)->getBuffer(), path);
}
