//===- Pooling.h - An encoder's hidden states as embeddings -----*- C++ -*-===//
//
// tfm-run --embeddings: the rows encode returns, pooled into one vector or
// kept per token, and optionally scaled to unit length, as llama.cpp's
// llama-embedding and sentence-transformers do after the model.
//
//===----------------------------------------------------------------------===//
#ifndef TFM_RUNTIME_POOLING_H
#define TFM_RUNTIME_POOLING_H

#include "tfm/common/Variants.h"

#include <cstddef>
#include <vector>

namespace tfm::rt {

/// The embeddings of `rows` hidden states of `width` floats each (row-major):
/// all of them (Pooling::None), their mean, the first row or the last, one
/// row. `rows` is at least 1.
std::vector<float> poolRows(const std::vector<float> &hidden, size_t rows, size_t width,
                            Pooling pooling);

/// Scales each row of `width` floats to unit Euclidean length; a row of
/// zeros stays zero.
void normalizeRows(std::vector<float> &rows, size_t width);

} // namespace tfm::rt

#endif // TFM_RUNTIME_POOLING_H
