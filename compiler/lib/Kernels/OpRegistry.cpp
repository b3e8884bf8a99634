//===- OpRegistry.cpp - One record per kernel op --------------------------===//
#include "OpRegistry.h"

#include <stdexcept>

namespace tfm::kernels {
namespace {

const OpRecord kRecords[] = {
    {OpKind::Embedding, defineEmbedding, Placement::Gather},
    {OpKind::RmsNorm, defineRmsNorm, Placement::RowNormalization},
    {OpKind::LayerNorm, defineLayerNorm, Placement::RowNormalization},
    {OpKind::Linear, defineLinear, Placement::Projection},
    {OpKind::AddPositions, defineAddPositions, Placement::Inline},
    {OpKind::AddSinusoid, defineAddSinusoid, Placement::Inline},
    {OpKind::SliceCols, defineSliceCols, Placement::Inline},
    {OpKind::Rope, defineRope, Placement::Inline},
    {OpKind::HeadRmsNorm, defineHeadRmsNorm, Placement::Inline},
    {OpKind::Add, defineAdd, Placement::Inline},
    {OpKind::Mul, defineMul, Placement::Inline},
    {OpKind::Silu, defineSilu, Placement::Inline},
    {OpKind::Relu, defineRelu, Placement::Inline},
    {OpKind::Clamp, defineClamp, Placement::Inline},
    {OpKind::Gelu, defineGelu, Placement::Inline},
    {OpKind::Softcap, defineSoftcap, Placement::Inline},
    {OpKind::Attention, defineAttention, Placement::Attention},
    {OpKind::LastRow, defineLastRow, Placement::Inline},
};
static_assert(sizeof(kRecords) / sizeof(kRecords[0]) == kOpKindCount,
              "every kernel op of TfmOps.td needs a record here");

} // namespace

const OpRecord &opRecord(OpKind kind) {
  for (const OpRecord &record : kRecords)
    if (record.kind == kind)
      return record;
  throw std::runtime_error(std::string("no kernel record for ") + opKindName(kind));
}

} // namespace tfm::kernels
