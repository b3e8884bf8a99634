//===- BlockQuant.h - GGUF's block-quantized weight formats ----*- C++ -*-===//
//
// The block formats of GGUF files, laid out bit for bit as ggml stores them,
// so that files written here load in llama.cpp and its files load here. A
// row of a weight matrix (ggml's ne[0], the contiguous dimension) is cut
// into blocks; each block holds its elements' small integers and the f16
// scales that turn them back into floats:
//
//   q8_0   32 elements, 34 bytes: f16 d, int8 q[32];          x = d*q
//   q4_0   32 elements, 18 bytes: f16 d, 4-bit q[32] packed;   x = d*(q-8)
//          byte j holds element j (low nibble) and element j+16 (high)
//   q4_K  256 elements, 144 bytes: f16 d, f16 dmin, 12 bytes of 6-bit
//          scales sc[8] and mins m[8] packed, 4-bit q[256];
//          element e of sub-block s = e/32: x = d*sc[s]*q - dmin*m[s]
//   q5_K  256 elements, 176 bytes: q4_K's header, then the fifth bits
//          qh[32], then the low 4 bits as q4_K stores them
//   q6_K  256 elements, 210 bytes: low 4 bits ql[128], high 2 bits qh[64],
//          int8 scales sc[16], f16 d; sub-block s = e/16:
//          x = d*sc[s]*(q-32)
//
// Dequantization is the format's definition. Quantization is a choice:
// q8_0 and q4_0 follow the formats' defining rule (the largest magnitude
// maps to the end of the integer range), byte for byte as llama.cpp does;
// the k-quants fit each sub-block's scale (and minimum) by least squares
// over a small grid of candidate level assignments. That is llama.cpp's
// idea but not its weighting, so their values differ from llama-quantize's
// while every file decodes the same in both.
//
//===----------------------------------------------------------------------===//
#ifndef TFM_COMMON_BLOCKQUANT_H
#define TFM_COMMON_BLOCKQUANT_H

#include <cstdint>
#include <optional>
#include <string_view>

namespace tfm {

enum class BlockFormat { Q8_0, Q4_0, Q4_K, Q5_K, Q6_K };

struct BlockLayout {
  BlockFormat format;
  const char *name;     // "q8_0", "q4_0", "q4_k", "q5_k", "q6_k": the command line's spelling
  uint32_t ggmlType;    // GGUF's tensor type id
  int64_t blockElements;
  int64_t blockBytes;
};

const BlockLayout &blockLayout(BlockFormat format);
std::optional<BlockFormat> parseBlockFormat(std::string_view name);

/// Bytes of a row of `n` elements; `n` must be a multiple of the block size.
int64_t blockRowBytes(BlockFormat format, int64_t n);

/// Encodes `n` floats (a multiple of the block size) into blockRowBytes bytes.
void quantizeRow(BlockFormat format, const float *x, int64_t n, uint8_t *out);
/// Decodes `n` elements (a multiple of the block size).
void dequantizeRow(BlockFormat format, const uint8_t *in, int64_t n, float *y);

} // namespace tfm

#endif // TFM_COMMON_BLOCKQUANT_H
