//===- OpRegistry.h - One record per kernel op ------------------*- C++ -*-===//
//
// The Halide side of each kernel op of TfmOps.td: the function that defines
// its algorithm (Ops/*.cpp) and where schedules place it. A new op is its
// ODS entry, one define function and one record in OpRegistry.cpp; the op
// kinds and attribute structs come from the ODS through tfm-tblgen.
//
//===----------------------------------------------------------------------===//
#ifndef TFM_KERNELS_OPREGISTRY_H
#define TFM_KERNELS_OPREGISTRY_H

#include "KernelAlgorithm.h"

namespace tfm::kernels {

/// How schedules place an op's Funcs.
enum class Placement {
  /// Rows gathered on their own (the embedding).
  Gather,
  /// Normalises rows: materialised before the projections that read it,
  /// its row statistics computed once per row.
  RowNormalization,
  /// A matrix product: the schedule tiles the output around it.
  Projection,
  /// Causal attention over a cache: per head (and block of rows).
  Attention,
  /// Row-wise or elementwise: inlined into whatever reads it.
  Inline,
};

struct OpRecord {
  OpKind kind;
  void (*define)(OpDefinition &);
  Placement placement;
};

const OpRecord &opRecord(OpKind kind);

// The define functions, one per op, in Ops/.
void defineEmbedding(OpDefinition &d);
void defineRmsNorm(OpDefinition &d);
void defineLayerNorm(OpDefinition &d);
void defineLinear(OpDefinition &d);
/// What linear's product with 8-bit activations reads (Ops/IntegerProduct.cpp).
struct IntegerProductOperands {
  Halide::Func input; // the activations, rows past the call clamped for many rows
  const StoredWeight &weight;
  int inDim;
  int activationBlock; // values sharing one input scale
  bool oneRow;
  Halide::Func affine;  // (i, sub-block, block, col): the weight's multipliers and offsets
  Halide::Func product; // (col, row): defined here
};
/// Sets the result's IntegerProduct; returns whether the product's rows
/// count from the call's first (Value::relativeRows).
bool defineIntegerProduct(OpDefinition &d, const IntegerProductOperands &in);
void defineAddPositions(OpDefinition &d);
void defineAddSinusoid(OpDefinition &d);
void defineSliceCols(OpDefinition &d);
void defineRope(OpDefinition &d);
void defineHeadRmsNorm(OpDefinition &d);
void defineAdd(OpDefinition &d);
void defineMul(OpDefinition &d);
void defineSilu(OpDefinition &d);
void defineRelu(OpDefinition &d);
void defineClamp(OpDefinition &d);
void defineGelu(OpDefinition &d);
void defineSoftcap(OpDefinition &d);
void defineAttention(OpDefinition &d);
void defineLastRow(OpDefinition &d);

} // namespace tfm::kernels

#endif // TFM_KERNELS_OPREGISTRY_H
