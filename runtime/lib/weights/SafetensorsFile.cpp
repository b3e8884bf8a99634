//===- SafetensorsFile.cpp - Read a .safetensors file in place ------------===//
#include "tfm/runtime/SafetensorsFile.h"

#include "tfm/common/Manifest.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringSwitch.h"
#include "llvm/Support/JSON.h"
#include "llvm/Support/Path.h"

#include <algorithm>
#include <cstring>

namespace json = llvm::json;
using namespace tfm;
using namespace tfm::rt;

namespace {

llvm::Error failure(const std::string &message) {
  return llvm::createStringError(llvm::inconvertibleErrorCode(), message);
}

std::string describe(const json::Value &v) {
  std::string s;
  llvm::raw_string_ostream os(s);
  os << v;
  return s;
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
SafetensorsFile::open(const std::string &path) {
  auto buffer = llvm::MemoryBuffer::getFile(path, /*IsText=*/false,
                                            /*RequiresNullTerminator=*/false,
                                            /*IsVolatile=*/false);
  if (!buffer)
    return failure(path + ": cannot open the safetensors file: " +
                   buffer.getError().message());
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
  const int64_t dataStart = 8 + static_cast<int64_t>(headerBytes);
  const int64_t dataBytes = size - dataStart;

  llvm::Expected<json::Value> header = json::parse(bytes.substr(8, headerBytes));
  if (!header)
    return failure(filePath + ": the header is not valid JSON: " +
                   llvm::toString(header.takeError()));
  const json::Object *entries = header->getAsObject();
  if (!entries)
    return failure(filePath + ": the header is " + describe(*header) +
                   ", expected a JSON object of tensors");

  for (const auto &[key, value] : *entries) {
    if (key == "__metadata__")
      continue;
    std::string what = filePath + ": tensor '" + key.str() + "'";
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
      return failure(what + ": unknown dtype \"" + t.dtype + "\", expected one of F64, F32, "
                     "F16, BF16, I64, I32, I16, I8, U64, U32, U16, U8, BOOL, F8_E5M2, F8_E4M3");
    if (!readIntegers(entry->get("shape"), int64_t(1) << 40, t.shape))
      return failure(what + ": field 'shape' is " +
                     (entry->get("shape") ? describe(*entry->get("shape")) : "missing") +
                     ", expected an array of non-negative integers");
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
      return failure(filePath + ": tensors '" + previous->name + "' (data_offsets " +
                     range(previous->offset - dataStart,
                           previous->offset + previous->bytes - dataStart) +
                     ") and '" + t.name + "' (data_offsets " +
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
  auto text = llvm::MemoryBuffer::getFile(path, /*IsText=*/true);
  if (!text)
    return failure(path + ": cannot open the safetensors index: " +
                   text.getError().message());
  llvm::Expected<json::Value> parsed = json::parse((*text)->getBuffer());
  if (!parsed)
    return failure(path + ": not valid JSON: " + llvm::toString(parsed.takeError()));
  const json::Object *top = parsed->getAsObject();
  const json::Object *map = top ? top->getObject("weight_map") : nullptr;
  if (!map)
    return failure(path + ": field 'weight_map' missing or not an object, expected "
                          "{\"weight_map\": {tensor name: shard file}}");
  SafetensorsIndex index;
  index.path = path;
  llvm::StringRef dir = llvm::sys::path::parent_path(path);
  for (const auto &[tensor, shard] : *map) {
    std::optional<llvm::StringRef> file = shard.getAsString();
    if (!file || file->empty())
      return failure(path + ": field 'weight_map." + tensor.str() + "' is " + describe(shard) +
                     ", expected the name of a shard file");
    llvm::SmallString<256> shardPath(dir);
    llvm::sys::path::append(shardPath, *file);
    index.shardOf[tensor] = shardPath.str().str();
    if (!llvm::is_contained(index.shards, shardPath.str()))
      index.shards.push_back(shardPath.str().str());
  }
  // JSON objects keep no order; shards open in a stable one.
  llvm::sort(index.shards);
  return index;
}
