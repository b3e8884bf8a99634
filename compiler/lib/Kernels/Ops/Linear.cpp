//===- Linear.cpp - x @ W^T (+ bias) --------------------------------------===//
#include "../OpRegistry.h"

using namespace Halide;

namespace tfm::kernels {

namespace {

/// x @ W^T with the input quantized to 8 bits in units of 32 values
/// (IntegerProduct, KernelAlgorithm.h), as llama.cpp's q8_0 activations:
/// with W's value m * (level - zero point) + offset per sub-block and x's
/// scale * byte per unit,
///   sum_k W x = sum_units scale * sum_k m * level * byte
///             + sum_sub-blocks (offset - zero point * m) * scale * sum bytes.
/// The level * byte sums are integer dot products of unsigned and signed
/// bytes, four at a time: AVX-512 VNNI's vpdpbusd where the target has it.
void defineIntegerProduct(OpDefinition &d, Value &x, const StoredWeight &sw, int inDim,
                          Func affine, Func product) {
  Var c = d.algorithm.col, r = d.algorithm.row, k("k");
  IntegerProduct ip;
  Var g = ip.group = Var("group"), u = ip.unit = Var("unit"), sb = ip.subBlock = Var("sub_block");
  int units = inDim / 32, subBlockSize = sw.subBlockSize();

  RDom inUnit(0, 32, d.name + "_in_unit");
  ip.scale = Func(d.name + "_act_scale");
  ip.scale(u, r) = maximum(abs(x.func(u * 32 + inUnit, r))) / 127.0f;
  Expr scale = ip.scale(k / 32, r);
  ip.quantized = Func(d.name + "_act_bytes");
  ip.quantized(k, r) = cast<int8_t>(
      clamp(round(x.func(k, r) * select(scale > 0.0f, 1.0f / scale, 0.0f)), -127.0f, 127.0f));
  RDom inSubBlock(0, subBlockSize, d.name + "_in_sub_block");
  ip.offsetTerms = Func(d.name + "_act_sums");
  ip.offsetTerms(sb, r) =
      ip.scale(sb * subBlockSize / 32, r) *
      cast<float>(sum(cast<int32_t>(ip.quantized(sb * subBlockSize + inSubBlock, r))));

  ip.inGroup = RDom(0, 4, d.name + "_in_group");
  ip.unitDot = Func(d.name + "_unit_dot");
  ip.unitDot(g, u, c, r) = 0;
  ip.unitDot(g, u, c, r) +=
      cast<int32_t>(cast<int16_t>(sw.unitLevel(u, g, ip.inGroup, c)) *
                    cast<int16_t>(ip.quantized(u * 32 + g * 4 + ip.inGroup, r)));
  ip.overUnits = RDom(0, units, d.name + "_units");
  RVar unit = ip.overUnits.x;
  ip.lanes = Func(d.name + "_lanes");
  ip.lanes(g, c, r) = 0.0f;
  ip.lanes(g, c, r) += cast<float>(ip.unitDot(g, unit, c, r)) *
                       (affine(0, sw.unitSubBlock(unit, g), sw.unitBlock(unit), c) *
                        ip.scale(unit, r));

  Expr inBlock = sb % sw.subBlocks(), block = sb / sw.subBlocks();
  Expr offset = -static_cast<float>(sw.levelZeroPoint()) * affine(0, inBlock, block, c);
  if (sw.affineCount() == 2)
    offset += affine(1, inBlock, block, c);
  ip.offsets = Func(d.name + "_offsets");
  ip.offsets(sb, c) = offset;

  ip.overGroups = RDom(0, 8, d.name + "_groups");
  ip.overSubBlocks = RDom(0, inDim / subBlockSize, d.name + "_sub_blocks");
  product(c, r) = 0.0f;
  product(c, r) += ip.lanes(ip.overGroups, c, r);
  product(c, r) += ip.offsets(ip.overSubBlocks, c) * ip.offsetTerms(ip.overSubBlocks, r);
  d.result.integer = ip;
}

} // namespace

void defineLinear(OpDefinition &d) {
  Value &x = d.operand(0), &w = d.operand(1);
  int inDim = static_cast<int>(w.shape[1]);
  Var c = d.algorithm.col, r = d.algorithm.row;
  Func product(d.name + "_product");
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
    d.result.decodedWeights = decoded;
    if (d.attrs<LinearAttrs>().activationBlock > 0) {
      defineIntegerProduct(d, x, sw, inDim, affine, product);
    } else {
      Expr k = (over.z * sw.subBlocks() + over.y) * sw.subBlockSize() + over.x;
      product(c, r) = 0.0f;
      product(c, r) += x.func(k, r) * decoded(over.x, over.y, over.z, c);
    }
  } else {
    Var k("k");
    Func decoded(d.name + "_decoded");
    decoded(k, c) = w.func(k, c);
    over = RDom(0, inDim, d.name + "_k");
    product(c, r) = 0.0f;
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
