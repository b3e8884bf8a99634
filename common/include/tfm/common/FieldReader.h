//===- FieldReader.h - Typed fields of a JSON object, with errors -*- C++ -*-===//
//
// Config files and the manifests generated libraries embed are read the same
// way: typed getters that record the first problem, phrased
// "<file>: field '<prefix><name>': found ..., expected ...", so every
// message names the file and the field.
//
//===----------------------------------------------------------------------===//
#ifndef TFM_COMMON_FIELDREADER_H
#define TFM_COMMON_FIELDREADER_H

#include "tfm/common/Failure.h"
#include "tfm/common/UntrustedText.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/Support/JSON.h"

#include <cmath>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

namespace tfm {

/// Reads fields from one JSON object and records the first problem found,
/// phrased as "<file>: field '<name>': found ..., expected ...".
class FieldReader {
public:
  /// What a message calls a field, when the object was derived from a file
  /// of another format (a GGUF's metadata): "metadata 'llama.context_length'".
  using FieldNamer = std::function<std::string(const std::string &field)>;

  FieldReader(const llvm::json::Object &obj, std::string path, std::string prefix = "",
              FieldNamer namer = {})
      : obj(obj), path(std::move(path)), prefix(std::move(prefix)), namer(std::move(namer)) {}

  bool failed() const { return !error.empty(); }
  const std::string &message() const { return error; }

  void fail(const std::string &field, const std::string &what) {
    if (error.empty())
      error = path + ": " + (namer ? namer(prefix + field) : "field '" + prefix + field + "'") +
              ": " + what;
  }

  /// Takes over the first problem of a reader of a nested object (whose
  /// prefix names the object), unless this one has a problem already.
  void adopt(const FieldReader &nested) {
    if (error.empty())
      error = nested.error;
  }

  int64_t integer(const char *field, bool required, int64_t fallback = 0) {
    const llvm::json::Value *v = obj.get(field);
    if (!v || v->kind() == llvm::json::Value::Null) {
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
    const llvm::json::Value *v = obj.get(field);
    if (!v || v->kind() == llvm::json::Value::Null)
      return fallback;
    if (auto d = v->getAsNumber())
      return *d;
    fail(field, "found " + describe(*v) + ", expected a number");
    return fallback;
  }

  /// An array of finite positive numbers; empty when absent or null (a
  /// missing required one fails).
  std::vector<double> positiveNumbers(const char *field, bool required) {
    const llvm::json::Value *v = obj.get(field);
    if (!v || v->kind() == llvm::json::Value::Null) {
      if (required)
        fail(field, "missing, expected an array of positive numbers");
      return {};
    }
    std::vector<double> values;
    if (const llvm::json::Array *items = v->getAsArray())
      for (const llvm::json::Value &item : *items) {
        std::optional<double> d = item.getAsNumber();
        if (!d || !std::isfinite(*d) || !(*d > 0.0))
          break;
        values.push_back(*d);
      }
    if (!v->getAsArray() || values.size() != v->getAsArray()->size())
      fail(field, "found " + describe(*v) + ", expected an array of positive numbers");
    return values;
  }

  bool boolean(const char *field, bool fallback) {
    const llvm::json::Value *v = obj.get(field);
    if (!v || v->kind() == llvm::json::Value::Null)
      return fallback;
    if (auto b = v->getAsBoolean())
      return *b;
    fail(field, "found " + describe(*v) + ", expected true or false");
    return fallback;
  }

  std::string string(const char *field, bool required, std::string fallback = "") {
    const llvm::json::Value *v = obj.get(field);
    if (!v || v->kind() == llvm::json::Value::Null) {
      if (required)
        fail(field, "missing, expected a string");
      return fallback;
    }
    if (auto s = v->getAsString())
      return s->str();
    fail(field, "found " + describe(*v) + ", expected a string");
    return fallback;
  }

  const llvm::json::Value *raw(const char *field) const { return obj.get(field); }

  /// The field's value, or nullptr after failing with "missing, expected <what>".
  const llvm::json::Value *require(const char *field, const char *what) {
    const llvm::json::Value *v = obj.get(field);
    if (!v)
      fail(field, std::string("missing, expected ") + what);
    return v;
  }

  /// Present and not null.
  bool has(const char *field) const {
    const llvm::json::Value *v = obj.get(field);
    return v && v->kind() != llvm::json::Value::Null;
  }

  /// The value as JSON, quoted and cut when long or not plain ASCII: it
  /// comes from a file.
  static std::string describe(const llvm::json::Value &v) {
    std::string s;
    llvm::raw_string_ostream os(s);
    os << v;
    bool plain = s.size() <= kQuotedTextLimit &&
                 llvm::all_of(s, [](char c) { return c >= 0x20 && c < 0x7f; });
    return plain ? s : tfm::quoted(s);
  }

private:
  const llvm::json::Object &obj;
  std::string path;
  std::string prefix; // where the object sits in its file, e.g. "config."
  FieldNamer namer;
  std::string error;
};

/// The array field `field` of `obj`, each element an object read by `read`
/// with a FieldReader prefixed "field[i].".
template <typename Read>
llvm::Error readObjects(FieldReader &r, const llvm::json::Value *list, const char *field,
                        const std::string &source, Read read) {
  const llvm::json::Array *items = list->getAsArray();
  if (!items) {
    r.fail(field, "found " + FieldReader::describe(*list) + ", expected an array");
    return failure(r.message());
  }
  for (size_t i = 0; i < items->size(); ++i) {
    std::string prefix = std::string(field) + "[" + std::to_string(i) + "]";
    const llvm::json::Object *obj = (*items)[i].getAsObject();
    if (!obj)
      return failure(source + ": field '" + prefix + "': found " +
                                         FieldReader::describe((*items)[i]) +
                                         ", expected an object");
    FieldReader item(*obj, source, prefix + ".");
    read(item);
    if (item.failed())
      return failure(item.message());
  }
  return llvm::Error::success();
}

} // namespace tfm

#endif // TFM_COMMON_FIELDREADER_H
