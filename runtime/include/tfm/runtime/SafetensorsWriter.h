//===- SafetensorsWriter.h - Write a .safetensors file ----------*- C++ -*-===//
//
// The layout SafetensorsFile reads: the header length, the JSON header
// (padded with spaces to a multiple of 8 bytes, as the safetensors library
// does, so f32 data stays aligned), then the tensors back to back in the
// order they were added. Tensor data is streamed by the caller. Used by
// tfm-weights and by tests.
//
//===----------------------------------------------------------------------===//
#ifndef TFM_RUNTIME_SAFETENSORSWRITER_H
#define TFM_RUNTIME_SAFETENSORSWRITER_H

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/STLFunctionalExtras.h"
#include "llvm/Support/Error.h"
#include "llvm/Support/raw_ostream.h"

#include <cstdint>
#include <string>
#include <vector>

namespace tfm::rt {

class SafetensorsWriter {
public:
  /// Declares a tensor of safetensors dtype `dtype` ("F32", "F16", "BF16").
  void addTensor(llvm::StringRef name, llvm::StringRef dtype, llvm::ArrayRef<int64_t> shape);
  int64_t tensorBytes(size_t index) const { return tensors[index].bytes; }
  size_t tensorCount() const { return tensors.size(); }

  /// Writes the file; `writeData(index, os)` writes tensor `index`'s
  /// bytes, exactly tensorBytes(index) of them.
  llvm::Error write(llvm::raw_ostream &os,
                    llvm::function_ref<llvm::Error(size_t, llvm::raw_ostream &)> writeData) const;

private:
  struct Tensor {
    std::string name, dtype;
    std::vector<int64_t> shape;
    int64_t bytes;
  };
  std::vector<Tensor> tensors;
};

} // namespace tfm::rt

#endif // TFM_RUNTIME_SAFETENSORSWRITER_H
