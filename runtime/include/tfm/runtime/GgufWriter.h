//===- GgufWriter.h - Write a GGUF v3 file ----------------------*- C++ -*-===//
//
// The layout GgufFile reads: header, metadata, tensor infos, then each
// tensor's data at the next multiple of the alignment. Tensor data is
// streamed by the caller, one tensor at a time, so a file larger than
// memory can be written. Used by tfm-weights and by tests.
//
//===----------------------------------------------------------------------===//
#ifndef TFM_RUNTIME_GGUFWRITER_H
#define TFM_RUNTIME_GGUFWRITER_H

#include "tfm/runtime/GgufFile.h"

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/STLFunctionalExtras.h"
#include "llvm/Support/raw_ostream.h"

#include <cstdint>
#include <string>
#include <vector>

namespace tfm::rt {

class GgufWriter {
public:
  /// Sets the data alignment and writes it as general.alignment.
  void setAlignment(uint32_t alignment);

  void addString(llvm::StringRef key, llvm::StringRef value);
  void addU32(llvm::StringRef key, uint32_t value);
  void addI32(llvm::StringRef key, int32_t value);
  void addF32(llvm::StringRef key, float value);
  void addBool(llvm::StringRef key, bool value);
  void addStringArray(llvm::StringRef key, llvm::ArrayRef<std::string> values);
  void addF32Array(llvm::StringRef key, llvm::ArrayRef<float> values);
  void addI32Array(llvm::StringRef key, llvm::ArrayRef<int32_t> values);
  /// A value of any type, `encoded` as the file stores it after its type.
  void addEncoded(llvm::StringRef key, GgufType type, std::string encoded);
  /// A value read by GgufFile, stored as its own file stored it (same type,
  /// element types and values), to carry metadata from one file to another.
  void addValue(llvm::StringRef key, const GgufValue &value);

  /// Declares a tensor; `shape` is row-major (the file stores it reversed).
  void addTensor(llvm::StringRef name, llvm::ArrayRef<int64_t> shape, uint32_t ggmlType);
  /// Declares an f32 vector whose values the writer holds and writes itself
  /// (a model constant such as rope_freqs.weight).
  void addF32Tensor(llvm::StringRef name, llvm::ArrayRef<float> values);
  /// Bytes of tensor `index`'s data.
  int64_t tensorBytes(size_t index) const { return tensors[index].bytes; }

  /// Writes the file: header, metadata, tensor infos, and for each tensor
  /// not added with its values the bytes `writeData(index, os)` writes,
  /// which must be exactly tensorBytes(index).
  llvm::Error write(llvm::raw_ostream &os,
                    llvm::function_ref<llvm::Error(size_t, llvm::raw_ostream &)> writeData) const;

  /// Little-endian encodings of values, for addEncoded.
  static std::string encodeU32(uint32_t value);
  static std::string encodeU64(uint64_t value);
  static std::string encodeString(llvm::StringRef value);

private:
  struct Entry {
    std::string key;
    GgufType type;
    std::string encoded;
  };
  struct Tensor {
    std::string name;
    std::vector<int64_t> shape;
    uint32_t type;
    int64_t bytes;
    std::string values; // addF32Tensor's bytes; empty: writeData writes them
  };
  std::vector<Entry> entries;
  std::vector<Tensor> tensors;
  uint32_t alignment = 32;
};

} // namespace tfm::rt

#endif // TFM_RUNTIME_GGUFWRITER_H
