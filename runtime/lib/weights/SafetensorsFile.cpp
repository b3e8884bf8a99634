//===- SafetensorsFile.cpp - Read a .safetensors file in place ------------===//
#include "tfm/runtime/SafetensorsFile.h"

#include "tfm/common/BoundedFile.h"
#include "tfm/common/BoundedJson.h"
#include "tfm/common/Failure.h"
#include "tfm/common/Manifest.h"
#include "tfm/common/UntrustedText.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringSet.h"
#include "llvm/ADT/StringSwitch.h"
#include "llvm/Support/JSON.h"
#include "llvm/Support/Path.h"

#include <algorithm>
#include <cstring>

namespace json = llvm::json;
using namespace tfm;
using namespace tfm::rt;

namespace {

/// The safetensors format's own limit on the JSON header (its reference
/// reader, huggingface/safetensors, refuses longer ones as
/// HeaderTooLarge): a longer one is not a safetensors file, and the header
/// is parsed in memory.
constexpr uint64_t kMaxHeaderBytes = 100'000'000;

/// Far beyond any model tensor (they have at most 5 dimensions); it keeps
/// every shape short enough to show in a message.
constexpr size_t kMaxRank = 64;

/// Linux's PATH_MAX: no longer shard name could be opened anyway.
constexpr size_t kMaxShardNameBytes = 4096;

/// Keeps the first `cap` bytes written to it and counts the rest, so that a
/// value as large as the header is never copied to be shown.
class CappedStream : public llvm::raw_ostream {
public:
  explicit CappedStream(size_t cap) : llvm::raw_ostream(/*unbuffered=*/true), cap(cap) {}
  std::string kept;

private:
  void write_impl(const char *ptr, size_t size) override {
    if (kept.size() < cap)
      kept.append(ptr, std::min(size, cap - kept.size()));
    total += size;
  }
  uint64_t current_pos() const override { return total; }

  size_t cap;
  uint64_t total = 0;
};

/// A JSON value from the file as it is written there when short and plain
/// ASCII, else escaped and cut by quoted().
std::string describe(const json::Value &v) {
  CappedStream os(tfm::kQuotedTextLimit);
  os << v;
  uint64_t total = os.tell();
  bool plain = total <= tfm::kQuotedTextLimit &&
               llvm::all_of(os.kept, [](char c) { return c >= 0x20 && c < 0x7f; });
  if (plain)
    return os.kept;
  std::string shown = tfm::quoted(os.kept);
  if (total > os.kept.size())
    shown += "... (" + std::to_string(total) + " bytes)";
  return shown;
}

std::string range(int64_t begin, int64_t end) {
  return "[" + std::to_string(begin) + ", " + std::to_string(end) + ")";
}

/// Reads a JSON array of non-negative integers; false when it is not one or
/// a value is past `limit`.
bool readIntegers(const json::Value *v, int64_t limit, std::vector<int64_t> &out) {
  const json::Array *array = v ? v->getAsArray() : nullptr;
  if (!array)
    return false;
  for (const json::Value &item : *array) {
    std::optional<int64_t> n = item.getAsInteger();
    if (!n || *n < 0 || *n > limit)
      return false;
    out.push_back(*n);
  }
  return true;
}

} // namespace

int64_t tfm::rt::safetensorsDtypeBytes(llvm::StringRef dtype) {
  return llvm::StringSwitch<int64_t>(dtype)
      .Cases({"F64", "I64", "U64"}, 8)
      .Cases({"F32", "I32", "U32"}, 4)
      .Cases({"F16", "BF16", "I16", "U16"}, 2)
      .Cases({"I8", "U8", "BOOL", "F8_E5M2", "F8_E4M3"}, 1)
      .Default(0);
}

int64_t SafetensorsTensor::elementCount() const {
  int64_t n = 1;
  for (int64_t d : shape)
    n *= d;
  return n;
}

llvm::Expected<std::unique_ptr<SafetensorsFile>>
SafetensorsFile::open(const std::string &path, WeightMemory memory) {
  auto buffer = readWeightFile(path, memory, "safetensors file");
  if (!buffer)
    return buffer.takeError();
  std::unique_ptr<SafetensorsFile> file(new SafetensorsFile());
  file->filePath = path;
  file->buffer = std::move(*buffer);
  if (llvm::Error e = file->parse())
    return std::move(e);
  return file;
}

llvm::Error SafetensorsFile::parse() {
  llvm::StringRef bytes = buffer->getBuffer();
  const int64_t size = static_cast<int64_t>(bytes.size());
  if (size < 8)
    return failure(filePath + ": " + std::to_string(size) +
                   " bytes, too short for the 8-byte safetensors header length");
  uint64_t headerBytes;
  std::memcpy(&headerBytes, bytes.data(), 8);
  if (headerBytes > static_cast<uint64_t>(size - 8))
    return failure(filePath + ": header length " + std::to_string(headerBytes) +
                   " runs past the end of the file (" + std::to_string(size) +
                   " bytes: at most " + std::to_string(size - 8) +
                   " bytes of header; truncated or not a safetensors file)");
  if (headerBytes > kMaxHeaderBytes)
    return failure(filePath + ": header length " + std::to_string(headerBytes) +
                   ", expected at most " + std::to_string(kMaxHeaderBytes) +
                   " bytes (the safetensors format's limit; not a safetensors file?)");
  const int64_t dataStart = 8 + static_cast<int64_t>(headerBytes);
  const int64_t dataBytes = size - dataStart;

  llvm::Expected<json::Value> header =
      parseBoundedJson(bytes.substr(8, headerBytes), filePath + ": the header");
  if (!header)
    return header.takeError();
  const json::Object *entries = header->getAsObject();
  if (!entries)
    return failure(filePath + ": the header is " + describe(*header) +
                   ", expected a JSON object of tensors");

  for (const auto &[key, value] : *entries) {
    if (key == "__metadata__")
      continue;
    std::string what = filePath + ": tensor " + quoted(key);
    const json::Object *entry = value.getAsObject();
    if (!entry)
      return failure(what + ": found " + describe(value) +
                     ", expected an object with dtype, shape and data_offsets");
    SafetensorsTensor t;
    t.name = key.str();
    std::optional<llvm::StringRef> dtype = entry->getString("dtype");
    if (!dtype)
      return failure(what + ": field 'dtype' missing or not a string");
    t.dtype = dtype->str();
    int64_t elementBytes = safetensorsDtypeBytes(t.dtype);
    if (!elementBytes)
      return failure(what + ": unknown dtype " + quoted(t.dtype) + ", expected one of F64, F32, "
                     "F16, BF16, I64, I32, I16, I8, U64, U32, U16, U8, BOOL, F8_E5M2, F8_E4M3");
    if (!readIntegers(entry->get("shape"), int64_t(1) << 40, t.shape))
      return failure(what + ": field 'shape' is " +
                     (entry->get("shape") ? describe(*entry->get("shape")) : "missing") +
                     ", expected an array of non-negative integers");
    if (t.shape.size() > kMaxRank)
      return failure(what + ": field 'shape' has " + std::to_string(t.shape.size()) +
                     " dimensions, expected at most " + std::to_string(kMaxRank));
    std::vector<int64_t> offsets;
    if (!readIntegers(entry->get("data_offsets"), int64_t(1) << 62, offsets) ||
        offsets.size() != 2 || offsets[0] > offsets[1])
      return failure(what + ": field 'data_offsets' is " +
                     (entry->get("data_offsets") ? describe(*entry->get("data_offsets"))
                                                 : "missing") +
                     ", expected [begin, end] with 0 <= begin <= end");
    int64_t elements = 1;
    for (int64_t d : t.shape) {
      if (d && elements > (int64_t(1) << 40) / d)
        return failure(what + ": shape " + formatShape(t.shape) +
                       " has more than 2^40 elements");
      elements *= d;
    }
    t.bytes = offsets[1] - offsets[0];
    if (t.bytes != elements * elementBytes)
      return failure(what + ": data_offsets " + range(offsets[0], offsets[1]) + " hold " +
                     std::to_string(t.bytes) + " bytes, but shape " + formatShape(t.shape) +
                     " of " + t.dtype + " needs " + std::to_string(elements * elementBytes));
    if (offsets[1] > dataBytes)
      return failure(what + ": data_offsets " + range(offsets[0], offsets[1]) +
                     " run past the end of the data (" + std::to_string(dataBytes) +
                     " bytes after the header; truncated file?)");
    t.offset = dataStart + offsets[0];
    tensorList.push_back(std::move(t));
  }

  // JSON objects keep no order: list tensors in data order, which also
  // puts any two that share bytes next to each other.
  llvm::sort(tensorList, [](const SafetensorsTensor &a, const SafetensorsTensor &b) {
    return a.offset != b.offset ? a.offset < b.offset : a.name < b.name;
  });
  const SafetensorsTensor *previous = nullptr;
  for (const SafetensorsTensor &t : tensorList) {
    if (t.bytes == 0)
      continue;
    if (previous && t.offset < previous->offset + previous->bytes)
      return failure(filePath + ": tensors " + quoted(previous->name) + " (data_offsets " +
                     range(previous->offset - dataStart,
                           previous->offset + previous->bytes - dataStart) +
                     ") and " + quoted(t.name) + " (data_offsets " +
                     range(t.offset - dataStart, t.offset + t.bytes - dataStart) +
                     ") overlap; expected each tensor in its own bytes");
    previous = &t;
  }
  for (size_t i = 0; i < tensorList.size(); ++i)
    tensorIndex[tensorList[i].name] = i;
  return llvm::Error::success();
}

const SafetensorsTensor *SafetensorsFile::findTensor(llvm::StringRef name) const {
  auto it = tensorIndex.find(name);
  return it == tensorIndex.end() ? nullptr : &tensorList[it->second];
}

llvm::Expected<SafetensorsIndex> tfm::rt::readSafetensorsIndex(const std::string &path) {
  // An index lists tensor names and shard files: a few hundred kilobytes.
  constexpr uint64_t kMaxIndexBytes = 64 << 20;
  auto text = readBoundedFile(path, kMaxIndexBytes, "safetensors index");
  if (!text)
    return text.takeError();
  llvm::Expected<json::Value> parsed = parseBoundedJson((*text)->getBuffer(), path);
  if (!parsed)
    return parsed.takeError();
  const json::Object *top = parsed->getAsObject();
  const json::Object *map = top ? top->getObject("weight_map") : nullptr;
  if (!map)
    return failure(path + ": field 'weight_map' missing or not an object, expected "
                          "{\"weight_map\": {tensor name: shard file}}");
  SafetensorsIndex index;
  index.path = path;
  llvm::StringRef dir = llvm::sys::path::parent_path(path);
  llvm::StringSet<> seen;
  for (const auto &[tensor, shard] : *map) {
    std::string where = path + ": field 'weight_map': tensor " + quoted(tensor);
    std::optional<llvm::StringRef> file = shard.getAsString();
    if (!file || file->empty())
      return failure(where + " maps to " + describe(shard) +
                     ", expected the name of a shard file");
    // The index names files beside it; it must not reach anywhere else.
    bool inside = !llvm::sys::path::is_absolute(*file) &&
                  llvm::none_of(llvm::make_range(llvm::sys::path::begin(*file),
                                                 llvm::sys::path::end(*file)),
                                [](llvm::StringRef part) { return part == ".."; });
    if (!inside)
      return failure(where + " is in shard " + quoted(*file) +
                     ", expected a file name relative to the index's folder (no absolute "
                     "path, no '..')");
    // Shard paths end up in messages as they are (as paths do), so they
    // must be printable and of a length a file system allows.
    auto control = [](char c) { return static_cast<unsigned char>(c) < 0x20 || c == 0x7f; };
    if (file->size() > kMaxShardNameBytes || llvm::any_of(*file, control))
      return failure(where + " is in shard " + quoted(*file) +
                     ", expected a file name of at most " + std::to_string(kMaxShardNameBytes) +
                     " bytes without control characters");
    llvm::SmallString<256> shardPath(dir);
    llvm::sys::path::append(shardPath, *file);
    index.shardOf[tensor] = shardPath.str().str();
    if (seen.insert(shardPath.str()).second)
      index.shards.push_back(shardPath.str().str());
  }
  // JSON objects keep no order; shards open in a stable one.
  llvm::sort(index.shards);
  return index;
}
