//===- GgufFile.h - Read a GGUF v3 file in place ----------------*- C++ -*-===//
//
// GGUF (llama.cpp's docs/gguf.md): "GGUF", uint32 version, uint64 tensor
// count, uint64 metadata count; metadata key/value pairs; tensor infos (name,
// n_dims, ne[] fastest-first, ggml type, offset from the data section); then
// the data section at the next multiple of general.alignment (default 32).
// All integers are little-endian.
//
// The file is mapped, never copied: strings and numeric arrays point into the
// mapping. Every count, length and offset is checked against the file size
// when the file is opened, so a GgufFile that exists is safe to read.
//
//===----------------------------------------------------------------------===//
#ifndef TFM_RUNTIME_GGUFFILE_H
#define TFM_RUNTIME_GGUFFILE_H

#include "tfm/common/ElementEncoding.h"
#include "tfm/runtime/WeightFileBytes.h"

#include "llvm/ADT/StringMap.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"
#include "llvm/Support/MemoryBuffer.h"

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace tfm::rt {

/// Metadata value types, numbered as in the file.
enum class GgufType : uint32_t {
  U8 = 0, I8 = 1, U16 = 2, I16 = 3, U32 = 4, I32 = 5, F32 = 6, Bool = 7,
  String = 8, Array = 9, U64 = 10, I64 = 11, F64 = 12,
};

/// "uint32", "string", "array of float32", ... for messages.
const char *ggufTypeName(GgufType type);

/// The ggml tensor types a GGUF file may hold (ggml.h's enum ggml_type).
enum GgmlType : uint32_t {
  GgmlF32 = 0, GgmlF16 = 1, GgmlQ8_0 = 8, GgmlBF16 = 30,
};

/// Storage of one ggml type: blockSize elements take blockBytes bytes.
struct GgmlTypeInfo {
  const char *name; // "f32", "q8_0", ...
  int64_t blockSize;
  int64_t blockBytes;
};

/// The storage of ggml type `type`, or nullptr for a type id ggml does not
/// define.
const GgmlTypeInfo *ggmlTypeInfo(uint32_t type);

/// The ggml type id that stores values encoded as `encoding`.
uint32_t ggmlTypeOf(const ElementEncoding &encoding);
/// The encoding a ggml type id stands for; none for types tfm does not read.
std::optional<ElementEncoding> encodingOfGgmlType(uint32_t type);

/// One metadata value. Numeric scalars are widened into `integer` (all
/// integer types and bool) or `real` (f32, f64); strings and arrays of
/// numbers or strings point into the mapped file (`elements`: the values as
/// stored, an array of strings as u64 length and bytes each); arrays of
/// arrays are `items`.
struct GgufValue {
  GgufType type = GgufType::U8;
  int64_t integer = 0; // u64 values above INT64_MAX are refused when read
  double real = 0.0;
  llvm::StringRef string;
  // Arrays:
  GgufType elementType = GgufType::U8;
  uint64_t count = 0;
  llvm::StringRef elements;     // numeric and string element types, as stored
  std::vector<GgufValue> items; // array element type
};

struct GgufTensorInfo {
  std::string name;
  std::vector<int64_t> ne;    // as stored: fastest-varying dimension first
  std::vector<int64_t> shape; // row-major (manifest order): ne reversed
  uint32_t type = GgmlF32;
  int64_t offset = 0; // absolute byte offset in the file
  int64_t bytes = 0;

  int64_t elementCount() const;
};

/// Whether the file at `path` starts with GGUF's magic (a weight file that
/// may embed its tokenizer, and then serves as one).
bool hasGgufMagic(const std::string &path);

class GgufFile {
public:
  /// Maps (or, `Resident`, reads) and checks `path`: header, every metadata
  /// value and tensor info, and every tensor's byte range.
  static llvm::Expected<std::unique_ptr<GgufFile>>
  open(const std::string &path, WeightMemory memory = WeightMemory::Mapped);

  const std::string &path() const { return filePath; }
  uint64_t alignment() const { return dataAlignment; }
  int64_t dataOffset() const { return dataStart; }
  const uint8_t *data() const {
    return reinterpret_cast<const uint8_t *>(buffer->getBufferStart());
  }
  int64_t size() const { return static_cast<int64_t>(buffer->getBufferSize()); }

  /// Metadata keys in file order.
  const std::vector<std::string> &keys() const { return keyOrder; }
  /// The value of `key`, or nullptr when the file has none.
  const GgufValue *find(llvm::StringRef key) const;
  bool has(llvm::StringRef key) const { return find(key) != nullptr; }

  // Typed getters: an error names the file and key when the key is missing
  // or holds another type. Callers test has() first for optional keys.
  llvm::Expected<std::string> getString(llvm::StringRef key) const;
  /// Any integer type whose value fits in int64.
  llvm::Expected<int64_t> getInteger(llvm::StringRef key) const;
  /// float32 or float64.
  llvm::Expected<double> getFloat(llvm::StringRef key) const;
  llvm::Expected<bool> getBool(llvm::StringRef key) const;
  llvm::Expected<std::vector<std::string>> getStringArray(llvm::StringRef key) const;
  llvm::Expected<std::vector<float>> getF32Array(llvm::StringRef key) const;
  /// Any integer element type whose values fit in int32.
  llvm::Expected<std::vector<int32_t>> getI32Array(llvm::StringRef key) const;

  /// Tensor infos in file order.
  const std::vector<GgufTensorInfo> &tensors() const { return tensorInfos; }
  /// The tensor called `name`, or nullptr.
  const GgufTensorInfo *findTensor(llvm::StringRef name) const;
  /// The values of `tensor`, an f32 vector of this file (a model constant
  /// such as rope_freqs.weight); an error names it otherwise.
  llvm::Expected<std::vector<float>> f32Vector(const GgufTensorInfo &tensor) const;

private:
  friend class GgufParser;
  GgufFile() = default;

  llvm::Expected<const GgufValue *> require(llvm::StringRef key, const char *expected) const;
  llvm::Error wrongType(llvm::StringRef key, const GgufValue &value,
                        const char *expected) const;

  std::string filePath;
  std::unique_ptr<llvm::MemoryBuffer> buffer;
  uint64_t dataAlignment = 32;
  int64_t dataStart = 0;
  std::vector<std::string> keyOrder;
  llvm::StringMap<GgufValue> metadata;
  std::vector<GgufTensorInfo> tensorInfos;
  llvm::StringMap<size_t> tensorIndex;
};

} // namespace tfm::rt

#endif // TFM_RUNTIME_GGUFFILE_H
