//===- TensorData.h - Stream tensor data after a file's header --*- C++ -*-===//
//
// GgufWriter and SafetensorsWriter both hand each tensor's bytes to their
// caller to write and must not let a wrong count through: every later
// offset, and the readers' size checks, depend on it.
//
//===----------------------------------------------------------------------===//
#ifndef TFM_RUNTIME_LIB_TENSORDATA_H
#define TFM_RUNTIME_LIB_TENSORDATA_H

#include "llvm/ADT/ArrayRef.h"
#include "tfm/common/Failure.h"
#include "llvm/ADT/STLFunctionalExtras.h"
#include "llvm/Support/Error.h"
#include "llvm/Support/MathExtras.h"
#include "llvm/Support/raw_ostream.h"

#include <cstdint>
#include <string>

namespace tfm::rt {

/// Writes each of `tensors` (anything with a `name` and a `bytes` count)
/// through `writeData(index, os)`, refusing a tensor that got other than
/// its `bytes`, and follows each with zeros up to a multiple of `alignment`
/// (1: back to back).
template <typename Tensor>
llvm::Error writeTensorData(llvm::raw_ostream &os, llvm::ArrayRef<Tensor> tensors,
                            llvm::function_ref<llvm::Error(size_t, llvm::raw_ostream &)> writeData,
                            uint64_t alignment = 1) {
  for (size_t i = 0; i < tensors.size(); ++i) {
    uint64_t before = os.tell();
    if (llvm::Error e = writeData(i, os))
      return e;
    uint64_t written = os.tell() - before;
    if (written != static_cast<uint64_t>(tensors[i].bytes))
      return failure("tensor '" + tensors[i].name + "': wrote " +
                                         std::to_string(written) + " bytes, expected " +
                                         std::to_string(tensors[i].bytes));
    os.write_zeros(llvm::alignTo(written, alignment) - written);
  }
  return llvm::Error::success();
}

} // namespace tfm::rt

#endif // TFM_RUNTIME_LIB_TENSORDATA_H
