//===- ElementEncoding.h - f32 values as f32, f16 or bf16 bytes -*- C++ -*-===//
#ifndef TFM_WEIGHTS_ELEMENTENCODING_H
#define TFM_WEIGHTS_ELEMENTENCODING_H

#include "tfm/common/DType.h"

#include <cstddef>
#include <cstdint>

namespace llvm {
class raw_ostream;
}

namespace tfm {



/// IEEE binary16 of `value`, rounded to nearest even; overflow gives
/// infinity, tiny values subnormals or zero.
uint16_t toHalf(float value);

/// bfloat16 (the top half of an f32) of `value`, rounded to nearest even.
uint16_t toBfloat16(float value);

/// Writes `n` values encoded as `type`, little-endian.
void writeElements(const float *values, size_t n, DType type, llvm::raw_ostream &os);

} // namespace tfm

#endif // TFM_WEIGHTS_ELEMENTENCODING_H
