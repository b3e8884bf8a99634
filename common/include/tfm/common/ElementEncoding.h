//===- ElementEncoding.h - f32 values as weight files store them -*- C++ -*-===//
//
// How values are stored: a plain element type (f32, f16, bf16) or one of
// GGUF's block formats (tfm/common/BlockQuant.h), which quantize whole rows.
//
//===----------------------------------------------------------------------===//
#ifndef TFM_WEIGHTS_ELEMENTENCODING_H
#define TFM_WEIGHTS_ELEMENTENCODING_H

#include "tfm/common/BlockQuant.h"
#include "tfm/common/DType.h"

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace llvm {
class raw_ostream;
}

namespace tfm {

struct ElementEncoding {
  DType plain = DType::F32;
  std::optional<BlockFormat> block; // set: values are stored in this block format

  /// "f32", "q4_k", ...: the --dtype spelling.
  std::string name() const;
  /// Bytes of `n` values; for a block format `n` is a multiple of its block.
  int64_t bytes(int64_t n) const;
};

/// f32, f16, bf16, q8_0, q4_0, q4_k, q5_k or q6_k.
std::optional<ElementEncoding> parseElementEncoding(std::string_view name);

/// Writes `n` values encoded as `encoding`, little-endian; for a block
/// format `n` is a multiple of its block and the values are whole rows.
void writeElements(const float *values, size_t n, const ElementEncoding &encoding,
                   llvm::raw_ostream &os);

} // namespace tfm

#endif // TFM_WEIGHTS_ELEMENTENCODING_H
