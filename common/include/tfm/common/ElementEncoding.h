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

#include "llvm/Support/Error.h"

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

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
  /// Bytes of a tensor of `shape` (row-major; blocks run along its rows).
  int64_t tensorBytes(const std::vector<int64_t> &shape) const;
  /// Elements of a buffer holding a row of `n` values: the bytes of its
  /// blocks for a block format (bound as bytes), else `n`.
  int64_t storedRowLength(int64_t n) const { return block ? bytes(n) : n; }
  /// Values per block: 1 for a plain type.
  int64_t blockElements() const;

  bool operator==(const ElementEncoding &o) const { return plain == o.plain && block == o.block; }
  bool operator!=(const ElementEncoding &o) const { return !(*this == o); }
};

/// f32, f16, bf16, q8_0, q4_0, q4_k, q5_k or q6_k.
std::optional<ElementEncoding> parseElementEncoding(std::string_view name);

/// Decodes `n` values stored as `encoding` at `in` (for a block format,
/// whole blocks) into `out`.
void decodeElements(const ElementEncoding &encoding, const uint8_t *in, int64_t n, float *out);

/// `n` values encoded as `encoding`, little-endian; for a block format `n`
/// is a multiple of its block and the values are whole rows.
std::vector<uint8_t> encodeElements(const float *values, size_t n,
                                    const ElementEncoding &encoding);

/// The same, refused when a value is not finite or does not fit the
/// encoding (an f16 past 65504, a block whose f16 scale overflows): the
/// error names the element's index and value and the encoding, for the
/// caller to put the tensor's name before.
llvm::Expected<std::vector<uint8_t>> encodeFiniteElements(const float *values, size_t n,
                                                          const ElementEncoding &encoding);

/// Writes encodeElements' bytes.
void writeElements(const float *values, size_t n, const ElementEncoding &encoding,
                   llvm::raw_ostream &os);

} // namespace tfm

#endif // TFM_WEIGHTS_ELEMENTENCODING_H
