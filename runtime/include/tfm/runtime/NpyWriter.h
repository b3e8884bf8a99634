//===- NpyWriter.h - float32 matrices as NumPy .npy files -------*- C++ -*-===//
//
// --logits and the reference tests hand logits to NumPy, PyTorch and other
// engines' tooling; .npy (format 1.0) is what all of them read.
//
//===----------------------------------------------------------------------===//
#ifndef TFM_RUNTIME_NPYWRITER_H
#define TFM_RUNTIME_NPYWRITER_H

#include "llvm/Support/Error.h"

#include <string>
#include <vector>

namespace tfm::rt {

/// Writes `data` as a little-endian float32 array of shape [rows, cols].
llvm::Error writeNpyF32(const std::string &path, const std::vector<float> &data, size_t rows,
                        size_t cols);

} // namespace tfm::rt

#endif // TFM_RUNTIME_NPYWRITER_H
