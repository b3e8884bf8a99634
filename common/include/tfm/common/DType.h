//===- DType.h - Element types of tensors -----------------------*- C++ -*-===//
//
// The one list of element types: what a weight file stores, what a manifest
// tensor or a kernel buffer holds. File formats keep their own type codes
// (GGUF's ggml types, safetensors' strings) and map onto these. Free of
// LLVM headers: the Halide half of tfmc includes it.
//
//===----------------------------------------------------------------------===//
#ifndef TFM_COMMON_DTYPE_H
#define TFM_COMMON_DTYPE_H

#include <cstdint>
#include <optional>
#include <string_view>

namespace tfm {

enum class DType { F32, F16, BF16, I32 };

/// "f32", "f16", "bf16", "i32": the spelling of manifests and the command line.
const char *dtypeName(DType type);
std::optional<DType> parseDType(std::string_view name);
int64_t dtypeBytes(DType type);

} // namespace tfm

#endif // TFM_COMMON_DTYPE_H
