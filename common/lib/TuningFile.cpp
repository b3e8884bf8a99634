//===- TuningFile.cpp - Read and write tfmc --tune's records --------------===//
#include "tfm/common/Failure.h"
#include "tfm/common/TuningFile.h"

#include "tfm/common/BoundedFile.h"
#include "tfm/common/BoundedJson.h"
#include "tfm/common/FieldReader.h"
#include "tfm/common/OutputFile.h"

#include "llvm/ADT/SmallVector.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/JSON.h"

namespace json = llvm::json;
using namespace tfm;

namespace {

constexpr const char kFormat[] = "tfmc-tuning";
constexpr int64_t kVersion = 1;

} // namespace

const TuningRecord *TuningFile::find(llvm::StringRef target, llvm::StringRef kernelKey) const {
  for (const TuningRecord &r : records)
    if (r.target == target && r.kernelKey == kernelKey)
      return &r;
  return nullptr;
}

void TuningFile::put(TuningRecord record) {
  for (TuningRecord &r : records)
    if (r.target == record.target && r.kernelKey == record.kernelKey) {
      r = std::move(record);
      return;
    }
  records.push_back(std::move(record));
}

std::string tfm::tuningTarget(llvm::StringRef target) {
  llvm::SmallVector<llvm::StringRef> parts;
  target.split(parts, '-');
  llvm::SmallVector<llvm::StringRef> kept;
  for (size_t i = 0; i < parts.size(); ++i)
    if (i < 3 || parts[i] != "profile")
      kept.push_back(parts[i]);
  return llvm::join(kept, "-");
}

llvm::Expected<TuningFile> tfm::readTuningFile(const std::string &path) {
  TuningFile file;
  if (!llvm::sys::fs::exists(path))
    return file;
  auto buffer = readBoundedFile(path, kMaxTuningFileBytes, "tuning file");
  if (!buffer)
    return buffer.takeError();
  llvm::Expected<json::Object> obj = parseBoundedJsonObject((*buffer)->getBuffer(), path);
  if (!obj)
    return obj.takeError();
  FieldReader r(*obj, path);
  std::string format = r.string("format", true);
  int64_t version = r.integer("version", true);
  const json::Value *records = r.require("records", "an array");
  if (r.failed())
    return failure(r.message());
  if (format != kFormat || version != kVersion)
    return failure(llvm::formatv("{0}: format '{1}' version {2}; expected '{3}' version {4} "
                                 "(written by another tfmc: delete it and tune again)",
                                 path, format, version, kFormat, kVersion)
                       .str());
  if (llvm::Error e = readObjects(r, records, "records", path, [&](FieldReader &f) {
        TuningRecord t;
        t.target = f.string("target", true);
        t.kernelKey = f.string("kernel_key", true);
        t.kernel = f.string("kernel", false);
        t.config = f.string("config", false);
        t.schedule = f.string("schedule", true);
        t.medianMs = f.number("median_ms", 0);
        t.defaultMs = f.number("default_ms", 0);
        file.records.push_back(std::move(t));
      }))
    return std::move(e);
  return file;
}

llvm::Error tfm::writeTuningFile(const std::string &path, const TuningFile &file) {
  json::Array records;
  for (const TuningRecord &r : file.records)
    records.push_back(json::Object{{"target", r.target},
                                   {"kernel_key", r.kernelKey},
                                   {"kernel", r.kernel},
                                   {"config", r.config},
                                   {"schedule", r.schedule},
                                   {"median_ms", r.medianMs},
                                   {"default_ms", r.defaultMs}});
  json::Object top{{"format", kFormat}, {"version", kVersion}, {"records", std::move(records)}};
  // writeTextFile renames it into place: a compile reading the file
  // meanwhile sees the old records or the new, never half of them.
  return writeTextFile(path, llvm::formatv("{0:2}", json::Value(std::move(top))).str() + "\n");
}
