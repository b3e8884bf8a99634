//===- Linear.cpp - x @ W^T (+ bias) --------------------------------------===//
#include "../OpRegistry.h"

using namespace Halide;

namespace tfm::kernels {

void defineLinear(OpDefinition &d) {
  Value &x = d.operand(0), &w = d.operand(1);
  int inDim = static_cast<int>(w.shape[1]);
  Var c = d.algorithm.col, r = d.algorithm.row;
  Func product(d.name + "_product");
  product(c, r) = 0.0f;
  RDom over;
  // The weight's decoded values are a Func of their own, so that a schedule
  // can decode a tile of them once for many rows.
  if (w.stored && w.stored->isBlocked()) {
    // Element, sub-block, block: each sub-block's multiplier and offset are
    // invariants of its inner loop, and its bytes are contiguous.
    const StoredWeight &sw = *w.stored;
    Var e("e"), s("s"), b("b"), i("i");
    Func affine(d.name + "_affine"); // (i, sub-block, block, col)
    Expr map = sw.affine(0, b, s, c);
    if (sw.affineCount() == 2)
      map = select(i == 0, map, sw.affine(1, b, s, c));
    affine(i, s, b, c) = map;
    Func decoded(d.name + "_decoded");
    decoded(e, s, b, c) = sw.at(b, s, e, c, [&](int index) { return affine(index, s, b, c); });
    d.result.subBlockAffine = affine;
    over = RDom({{0, sw.subBlockSize()}, {0, sw.subBlocks()}, {0, sw.blocks()}}, d.name + "_k");
    Expr k = (over.z * sw.subBlocks() + over.y) * sw.subBlockSize() + over.x;
    product(c, r) += x.func(k, r) * decoded(over.x, over.y, over.z, c);
    d.result.decodedWeights = decoded;
  } else {
    Var k("k");
    Func decoded(d.name + "_decoded");
    decoded(k, c) = w.func(k, c);
    over = RDom(0, inDim, d.name + "_k");
    product(c, r) += x.func(over, r) * decoded(over, c);
    d.result.decodedWeights = decoded;
  }
  Func f(d.name);
  if (d.op.operands.size() > 2) {
    Value &bias = d.operand(2);
    if (bias.shape != std::vector<int64_t>{w.shape[0]})
      d.fail("bias has " + std::to_string(bias.shape.empty() ? 0 : bias.shape[0]) +
             " entries, expected " + std::to_string(w.shape[0]) + " (one per output column)");
    f(c, r) = product(c, r) + bias.func(c);
  } else {
    f(c, r) = product(c, r);
  }
  d.result.func = f;
  d.result.reduction = over;
  d.result.product = product;
  d.result.activations = x.func;
}

} // namespace tfm::kernels
