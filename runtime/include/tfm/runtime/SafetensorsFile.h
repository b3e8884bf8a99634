//===- SafetensorsFile.h - Read a .safetensors file in place ----*- C++ -*-===//
//
// safetensors (huggingface/safetensors README): an 8-byte little-endian
// header length N, N bytes of JSON mapping each tensor name to its dtype,
// shape and data_offsets [begin, end) relative to the byte after the
// header, then the data. "__metadata__" holds free-form strings.
//
// The file is mapped, never copied. Opening checks everything the header
// claims against the file: the header fits (and is within the format's
// 100 MB limit), every dtype is one safetensors defines, every byte range
// lies inside the data and matches its shape and dtype, and no two tensors
// share bytes.
//
//===----------------------------------------------------------------------===//
#ifndef TFM_RUNTIME_SAFETENSORSFILE_H
#define TFM_RUNTIME_SAFETENSORSFILE_H

#include "tfm/runtime/WeightFileBytes.h"

#include "llvm/ADT/StringMap.h"
#include "llvm/Support/Error.h"
#include "llvm/Support/MemoryBuffer.h"

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace tfm::rt {

struct SafetensorsTensor {
  std::string name;
  std::string dtype; // as in the file: "F32", "BF16", "I64", ...
  std::vector<int64_t> shape;
  int64_t offset = 0; // absolute byte offset in the file
  int64_t bytes = 0;

  int64_t elementCount() const;
};

/// Bytes per element of a safetensors dtype, 0 for a name it does not define.
int64_t safetensorsDtypeBytes(llvm::StringRef dtype);

class SafetensorsFile {
public:
  static llvm::Expected<std::unique_ptr<SafetensorsFile>>
  open(const std::string &path, WeightMemory memory = WeightMemory::Mapped);

  const std::string &path() const { return filePath; }
  const uint8_t *data() const {
    return reinterpret_cast<const uint8_t *>(buffer->getBufferStart());
  }
  /// Tensors in data order.
  const std::vector<SafetensorsTensor> &tensors() const { return tensorList; }
  /// The tensor called `name`, or nullptr.
  const SafetensorsTensor *findTensor(llvm::StringRef name) const;

private:
  SafetensorsFile() = default;
  llvm::Error parse();

  std::string filePath;
  std::unique_ptr<llvm::MemoryBuffer> buffer;
  std::vector<SafetensorsTensor> tensorList;
  llvm::StringMap<size_t> tensorIndex;
};

/// A model.safetensors.index.json: which shard (a file beside the index)
/// holds each tensor. A shard named by an absolute path or with a ".."
/// component is refused: an index names files in its own folder.
struct SafetensorsIndex {
  std::string path;
  llvm::StringMap<std::string> shardOf; // tensor name -> shard path
  std::vector<std::string> shards;      // distinct shard paths, sorted
};

llvm::Expected<SafetensorsIndex> readSafetensorsIndex(const std::string &path);

} // namespace tfm::rt

#endif // TFM_RUNTIME_SAFETENSORSFILE_H
