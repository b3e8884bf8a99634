//===- GgufWriter.cpp - Write a GGUF v3 file ------------------------------===//
#include "tfm/runtime/GgufWriter.h"

#include "TensorData.h"

#include "llvm/Support/MathExtras.h"

#include <cassert>
#include <cstring>

using namespace tfm::rt;

namespace {

template <typename T> std::string encodeScalar(T value) {
  std::string out(sizeof value, '\0');
  std::memcpy(out.data(), &value, sizeof value);
  return out;
}

/// An array value: element type, count, then the packed elements.
std::string encodeArray(GgufType elementType, uint64_t count, llvm::StringRef packed) {
  return GgufWriter::encodeU32(static_cast<uint32_t>(elementType)) +
         GgufWriter::encodeU64(count) + packed.str();
}

/// `v` as its file stored it after its type.
std::string encodeValue(const GgufValue &v) {
  switch (v.type) {
  case GgufType::U8: case GgufType::Bool: return encodeScalar(static_cast<uint8_t>(v.integer));
  case GgufType::I8: return encodeScalar(static_cast<int8_t>(v.integer));
  case GgufType::U16: return encodeScalar(static_cast<uint16_t>(v.integer));
  case GgufType::I16: return encodeScalar(static_cast<int16_t>(v.integer));
  case GgufType::U32: return encodeScalar(static_cast<uint32_t>(v.integer));
  case GgufType::I32: return encodeScalar(static_cast<int32_t>(v.integer));
  // GgufFile keeps a u64 as its bit pattern.
  case GgufType::U64: return encodeScalar(static_cast<uint64_t>(v.integer));
  case GgufType::I64: return encodeScalar(v.integer);
  case GgufType::F32: return encodeScalar(static_cast<float>(v.real));
  case GgufType::F64: return encodeScalar(v.real);
  case GgufType::String: return GgufWriter::encodeString(v.string);
  case GgufType::Array: break;
  }
  std::string packed = v.elements.str();
  for (const GgufValue &item : v.items)
    packed += encodeValue(item);
  return encodeArray(v.elementType, v.count, packed);
}

} // namespace

std::string GgufWriter::encodeU32(uint32_t value) { return encodeScalar(value); }
std::string GgufWriter::encodeU64(uint64_t value) { return encodeScalar(value); }
std::string GgufWriter::encodeString(llvm::StringRef value) {
  return encodeU64(value.size()) + value.str();
}

void GgufWriter::addValue(llvm::StringRef key, const GgufValue &value) {
  addEncoded(key, value.type, encodeValue(value));
}

void GgufWriter::setAlignment(uint32_t value) {
  assert(llvm::isPowerOf2_32(value) && "GGUF alignment must be a power of two");
  alignment = value;
  addU32("general.alignment", value);
}

void GgufWriter::addEncoded(llvm::StringRef key, GgufType type, std::string encoded) {
  entries.push_back({key.str(), type, std::move(encoded)});
}

void GgufWriter::addString(llvm::StringRef key, llvm::StringRef value) {
  addEncoded(key, GgufType::String, encodeString(value));
}
void GgufWriter::addU32(llvm::StringRef key, uint32_t value) {
  addEncoded(key, GgufType::U32, encodeScalar(value));
}
void GgufWriter::addI32(llvm::StringRef key, int32_t value) {
  addEncoded(key, GgufType::I32, encodeScalar(value));
}
void GgufWriter::addF32(llvm::StringRef key, float value) {
  addEncoded(key, GgufType::F32, encodeScalar(value));
}
void GgufWriter::addBool(llvm::StringRef key, bool value) {
  addEncoded(key, GgufType::Bool, encodeScalar(static_cast<uint8_t>(value)));
}

void GgufWriter::addStringArray(llvm::StringRef key, llvm::ArrayRef<std::string> values) {
  std::string packed;
  for (const std::string &s : values)
    packed += encodeString(s);
  addEncoded(key, GgufType::Array, encodeArray(GgufType::String, values.size(), packed));
}

void GgufWriter::addF32Array(llvm::StringRef key, llvm::ArrayRef<float> values) {
  llvm::StringRef packed(reinterpret_cast<const char *>(values.data()),
                         values.size() * sizeof(float));
  addEncoded(key, GgufType::Array, encodeArray(GgufType::F32, values.size(), packed));
}

void GgufWriter::addI32Array(llvm::StringRef key, llvm::ArrayRef<int32_t> values) {
  llvm::StringRef packed(reinterpret_cast<const char *>(values.data()),
                         values.size() * sizeof(int32_t));
  addEncoded(key, GgufType::Array, encodeArray(GgufType::I32, values.size(), packed));
}

void GgufWriter::addTensor(llvm::StringRef name, llvm::ArrayRef<int64_t> shape,
                           uint32_t ggmlType) {
  const GgmlTypeInfo *info = ggmlTypeInfo(ggmlType);
  assert(info && "not a ggml type");
  int64_t elements = 1;
  for (int64_t d : shape)
    elements *= d;
  tensors.push_back({name.str(), shape.vec(), ggmlType,
                     elements / info->blockSize * info->blockBytes, {}});
}

void GgufWriter::addF32Tensor(llvm::StringRef name, llvm::ArrayRef<float> values) {
  addTensor(name, {static_cast<int64_t>(values.size())}, GgmlF32);
  tensors.back().values.assign(reinterpret_cast<const char *>(values.data()),
                               values.size() * sizeof(float));
}

llvm::Error GgufWriter::write(
    llvm::raw_ostream &os,
    llvm::function_ref<llvm::Error(size_t, llvm::raw_ostream &)> writeData) const {
  std::string head = "GGUF" + encodeU32(3) + encodeU64(tensors.size()) +
                     encodeU64(entries.size());
  for (const Entry &e : entries)
    head += encodeString(e.key) + encodeU32(static_cast<uint32_t>(e.type)) + e.encoded;
  uint64_t offset = 0;
  for (const Tensor &t : tensors) {
    head += encodeString(t.name) + encodeU32(t.shape.size());
    for (auto d = t.shape.rbegin(); d != t.shape.rend(); ++d)
      head += encodeU64(*d);
    head += encodeU32(t.type) + encodeU64(offset);
    offset = llvm::alignTo(offset + t.bytes, alignment);
  }
  os << head;
  if (tensors.empty())
    return llvm::Error::success();
  os.write_zeros(llvm::alignTo(head.size(), alignment) - head.size());
  auto writeOne = [&](size_t i, llvm::raw_ostream &out) -> llvm::Error {
    if (tensors[i].values.empty())
      return writeData(i, out);
    out << tensors[i].values;
    return llvm::Error::success();
  };
  return writeTensorData(os, llvm::ArrayRef(tensors), writeOne, alignment);
}
