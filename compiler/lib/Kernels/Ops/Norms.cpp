//===- Norms.cpp - RMSNorm and LayerNorm ----------------------------------===//
#include "../OpRegistry.h"

using namespace Halide;

namespace tfm::kernels {

void defineRmsNorm(OpDefinition &d) {
  Value &x = d.operand(0), &w = d.operand(1);
  int dim = static_cast<int>(x.shape[1]);
  const auto &attrs = d.attrs<RmsNormAttrs>();
  float eps = static_cast<float>(attrs.eps);
  Var c = d.algorithm.col, r = d.algorithm.row;
  RDom over(0, dim, d.name + "_k");
  Func sumSq(d.name + "_sumsq");
  sumSq(r) = 0.0f;
  sumSq(r) += x.func(over, r) * x.func(over, r);
  Func scale(d.name + "_scale");
  scale(r) = 1.0f / sqrt(sumSq(r) / dim + eps);
  Func f(d.name);
  Expr gain = attrs.weightOffset == 0.0 ? w.func(c)
                                        : w.func(c) + static_cast<float>(attrs.weightOffset);
  if (attrs.scale != 1.0) // T5's tied head: the final norm times d_model^-0.5
    gain *= static_cast<float>(attrs.scale);
  f(c, r) = x.func(c, r) * scale(r) * gain;
  d.result.func = f;
  d.result.reduction = over;
  d.result.rowStats = {scale};
}

void defineHeadRmsNorm(OpDefinition &d) {
  Value &x = d.operand(0), &w = d.operand(1);
  const auto &attrs = d.attrs<HeadRmsNormAttrs>();
  int headDim = static_cast<int>(attrs.headDim);
  float eps = static_cast<float>(attrs.eps);
  Var c = d.algorithm.col, r = d.algorithm.row, h("head");
  // The statistic of a head is a table of (head, row), computed once per
  // call (as RoPE's angles are); each column reads its head's. Its reads
  // cross columns, so schedules compute the input on its own.
  RDom over(0, headDim, d.name + "_k");
  Expr value = x.func(h * headDim + over, r);
  Func scale(d.name + "_scale");
  scale(h, r) = 1.0f / sqrt(sum(value * value) / headDim + eps);
  Func f(d.name);
  Expr gain = w.func(c % headDim);
  if (attrs.weightOffset != 0.0)
    gain += static_cast<float>(attrs.weightOffset);
  f(c, r) = x.func(c, r) * scale(c / headDim, r) * gain;
  d.result.func = f;
  d.result.positionTables = {scale};
  d.result.readsOtherColumns = true;
}

void defineLayerNorm(OpDefinition &d) {
  Value &x = d.operand(0), &w = d.operand(1);
  int dim = static_cast<int>(x.shape[1]);
  float eps = static_cast<float>(d.attrs<LayerNormAttrs>().eps);
  Var c = d.algorithm.col, r = d.algorithm.row;
  RDom over(0, dim, d.name + "_k");
  // Two passes, the mean first: the one-pass E[x^2] - E[x]^2 loses the
  // variance of rows whose mean is large against their spread.
  Func sum(d.name + "_sum");
  sum(r) = 0.0f;
  sum(r) += x.func(over, r);
  Func mean(d.name + "_mean");
  mean(r) = sum(r) / dim;
  Func sqDev(d.name + "_sqdev");
  sqDev(r) = 0.0f;
  Expr dev = x.func(over, r) - mean(r);
  sqDev(r) += dev * dev;
  Func scale(d.name + "_scale");
  scale(r) = 1.0f / sqrt(sqDev(r) / dim + eps);
  Func f(d.name);
  Expr normed = (x.func(c, r) - mean(r)) * scale(r) * w.func(c);
  f(c, r) = d.op.operands.size() > 2 ? normed + d.operand(2).func(c) : normed;
  d.result.func = f;
  d.result.reduction = over;
  d.result.rowStats = {mean, scale};
}

} // namespace tfm::kernels
