//===- DType.h - Element types of tensors -----------------------*- C++ -*-===//
//
// The one list of element types: what a weight file stores, what a manifest
// tensor or a kernel buffer holds. File formats keep their own type codes
// (GGUF's ggml types, safetensors' strings) and map onto these.
//
//===----------------------------------------------------------------------===//
#ifndef TFM_COMMON_DTYPE_H
#define TFM_COMMON_DTYPE_H

#include "llvm/ADT/StringRef.h"

#include <cstdint>
#include <optional>

namespace tfm {

enum class DType { F32, F16, BF16, I32 };

/// "f32", "f16", "bf16", "i32": the spelling of manifests and the command line.
llvm::StringRef dtypeName(DType type);
std::optional<DType> parseDType(llvm::StringRef name);
int64_t dtypeBytes(DType type);

} // namespace tfm

#endif // TFM_COMMON_DTYPE_H
