//===- Attention.cpp - causal grouped-query attention over a cache --------===//
#include "../OpRegistry.h"

#include <cmath>

using namespace Halide;

namespace tfm::kernels {

void defineAttention(OpDefinition &d) {
  Value &q = d.operand(0), &kc = d.operand(1), &vc = d.operand(2);
  if (kc.param < 0 || vc.param < 0)
    d.fail("expects its caches to be kernel parameters");
  const auto &attrs = d.attrs<AttentionAttrs>();
  int headDim = static_cast<int>(attrs.headDim);
  int group = static_cast<int>(attrs.nHeads / attrs.nKvHeads);
  KernelAlgorithm &a = d.algorithm;
  Var r = a.row;
  AttentionFuncs &at = d.result.attention;
  at.headDim = headDim;
  Var s = at.s, h = at.h, dd = at.d;
  const std::string &name = d.name;

  // Causal: the row at position r reads cache rows 0..r, so the keys a row
  // reduces over depend on the row, and no masked key is computed.
  at.overDim = RDom(0, headDim, name + "_d");
  at.overKeys = RDom(0, kc.image.dim(1).extent(), name + "_s");
  at.overKeys.where(at.overKeys.x <= r);
  Expr kvCol = (h / group) * headDim;

  at.dot = Func(name + "_dot");
  at.dot(s, h, r) = 0.0f;
  at.dot(s, h, r) += q.func(h * headDim + at.overDim, r) * kc.func(kvCol + at.overDim, s);
  at.score = Func(name + "_score");
  Expr scaled = at.dot(s, h, r) * (1.0f / std::sqrt(float(headDim)));
  if (!attrs.alibiSlopes.empty()) {
    // The slopes are constants of the generated code: a table Halide embeds
    // in the object file. The bias is computed from the indices per score.
    Halide::Buffer<float> slopes(static_cast<int>(attrs.alibiSlopes.size()), name + "_slopes");
    for (size_t i = 0; i < attrs.alibiSlopes.size(); ++i)
      slopes(static_cast<int>(i)) = attrs.alibiSlopes[i];
    scaled -= slopes(h) * cast<float>(r - s);
  }
  at.score(s, h, r) = scaled;
  at.maxScore = Func(name + "_max");
  at.maxScore(h, r) = Float(32).min();
  at.maxScore(h, r) = max(at.maxScore(h, r), at.score(at.overKeys, h, r));
  at.weight = Func(name + "_weight");
  at.weight(s, h, r) = exp(at.score(s, h, r) - at.maxScore(h, r));
  at.denom = Func(name + "_denom");
  at.denom(h, r) = 0.0f;
  at.denom(h, r) += at.weight(at.overKeys, h, r);
  at.mixed = Func(name + "_mixed");
  at.mixed(dd, h, r) = 0.0f;
  at.mixed(dd, h, r) += at.weight(at.overKeys, h, r) * vc.func(kvCol + dd, at.overKeys);

  Expr head = a.col / headDim, inHead = a.col % headDim;
  Func out(name);
  out(a.col, r) = at.mixed(inHead, head, r) / at.denom(head, r);
  d.result.func = out;
}

} // namespace tfm::kernels
