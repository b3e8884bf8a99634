//===- KernelAlgorithm.cpp - A kernel's ops as Halide Funcs ---------------===//
#include "KernelAlgorithm.h"

#include <cmath>
#include <stdexcept>

using namespace Halide;
using namespace tfm;
using namespace tfm::kernels;

namespace {

[[noreturn]] void fail(const Kernel &k, const std::string &what) {
  throw std::runtime_error("kernel " + k.name + ": " + what);
}

double attr(const Kernel &k, const KernelOp &op, const char *name) {
  auto it = op.attrs.find(name);
  if (it == op.attrs.end())
    fail(k, "op " + op.kind + " lacks attribute '" + std::string(name) + "'");
  return it->second;
}

Type halideType(ElemType t) { return t == ElemType::I32 ? Int(32) : Float(32); }

/// Pins a buffer's layout to the shape the kernel was compiled for: columns
/// are dense, the row stride is the column count, and every extent that the
/// config fixes is a constant. Only the row range of token rows and of the
/// cache window stays free (and is 1 row when the kernel is for one row).
/// A cache written by the kernel is a window at the call's positions; one
/// read by it starts at position 0.
template <typename BufferLike>
void constrainLayout(BufferLike b, const KernelParam &p) {
  if (p.shape.size() == 1) {
    b.dim(0).set_stride(1);
    if (!p.tokenRows)
      b.dim(0).set_bounds(0, static_cast<int>(p.shape[0]));
    else if (p.shape[0] != kDynamicRows)
      b.dim(0).set_extent(static_cast<int>(p.shape[0]));
    return;
  }
  int cols = static_cast<int>(p.shape[1]);
  if (p.isKeyCache) { // [cols, contextLength] in memory: see Program.h
    b.dim(0).set_bounds(0, cols).set_stride(static_cast<int>(p.shape[0]));
    b.dim(1).set_stride(1);
    if (!p.isOutput) // a read window starts at the first position
      b.dim(1).set_min(0);
    return;
  }
  b.dim(0).set_bounds(0, cols).set_stride(1);
  b.dim(1).set_stride(cols);
  if (p.isCache) {
    if (!p.isOutput)
      b.dim(1).set_min(0);
  } else if (p.shape[0] != kDynamicRows)
    b.dim(1).set_extent(static_cast<int>(p.shape[0]));
}

class Builder {
public:
  Builder(const Kernel &k, KernelAlgorithm &a) : k(k), a(a) {}

  void build() {
    for (size_t i = 0; i < k.params.size(); ++i)
      addParam(static_cast<int>(i));
    for (const KernelOp &op : k.ops)
      addOp(op);
    for (size_t i = 0; i < k.params.size(); ++i) {
      const KernelParam &p = k.params[i];
      if (!p.isOutput)
        continue;
      auto it = k.outputValue.find(static_cast<int>(i));
      if (it == k.outputValue.end())
        fail(k, "output parameter " + p.name + " receives no value");
      Value &v = value(it->second);
      // A separate output Func, so that a value both stored and used inside
      // the kernel (q in the attention input) can be scheduled on its own.
      Func out(p.name);
      if (p.shape.size() == 1)
        out(a.col) = v.func(a.col);
      else
        out(a.col, a.row) = v.func(a.col, a.row);
      constrainLayout(out.output_buffer(), p);
      a.outputs.push_back(out);
      a.outputValues.push_back(it->second);
      a.outputParams.push_back(&p);
    }
  }

private:
  Value &value(int index) {
    if (index < 0 || index >= static_cast<int>(a.values.size()))
      fail(k, "operand " + std::to_string(index) + " is not a value of the kernel");
    if (!a.values[index].func.defined())
      fail(k, "operand " + std::to_string(index) + " is an output parameter, not a value");
    return a.values[index];
  }

  void addParam(int index) {
    const KernelParam &p = k.params[index];
    Value v;
    v.param = index;
    v.shape = p.shape;
    v.tokenRows = p.tokenRows;
    if (!p.isOutput) {
      ImageParam in(halideType(p.type), static_cast<int>(p.shape.size()), p.name);
      constrainLayout(in, p);
      a.inputs.push_back(in);
      v.func = Func(in);
      v.weight = in;
    }
    a.values.push_back(v);
  }

  void addOp(const KernelOp &op) {
    Value v;
    v.op = &op;
    v.shape = op.shape;
    v.tokenRows = op.tokenRows;
    Var c = a.col, r = a.row;
    auto operand = [&](size_t i) -> Value & {
      if (i >= op.operands.size())
        fail(k, "op " + op.kind + " expects at least " + std::to_string(i + 1) + " operands");
      return value(op.operands[i]);
    };
    std::string name = op.kind + "_" + std::to_string(a.values.size());
    Func f(name);

    if (op.kind == "embedding") {
      Value &table = operand(0), &tokens = operand(1);
      int vocab = static_cast<int>(table.shape[0]);
      f(c, r) = table.func(c, clamp(tokens.func(r), 0, vocab - 1));
    } else if (op.kind == "rms_norm") {
      Value &x = operand(0), &w = operand(1);
      int dim = static_cast<int>(x.shape[1]);
      float eps = static_cast<float>(attr(k, op, "eps"));
      RDom over(0, dim, name + "_k");
      Func sumSq(name + "_sumsq");
      sumSq(r) = 0.0f;
      sumSq(r) += x.func(over, r) * x.func(over, r);
      Func scale(name + "_scale");
      scale(r) = 1.0f / sqrt(sumSq(r) / dim + eps);
      f(c, r) = x.func(c, r) * scale(r) * w.func(c);
      v.reduction = over;
      v.rowScale = scale;
    } else if (op.kind == "linear") {
      Value &x = operand(0), &w = operand(1);
      if (w.param < 0)
        fail(k, "linear expects its weight to be a kernel parameter");
      int inDim = static_cast<int>(w.shape[1]);
      RDom over(0, inDim, name + "_k");
      f(c, r) = 0.0f;
      f(c, r) += x.func(over, r) * w.func(over, c);
      v.reduction = over;
      v.weight = w.weight;
    } else if (op.kind == "rope") {
      Value &x = operand(0);
      int headDim = static_cast<int>(attr(k, op, "head_dim"));
      double theta = attr(k, op, "theta");
      // Angles in double: positions reach the thousands and a float angle
      // would lose the low bits that the reference keeps.
      Expr pair = (c % headDim) / 2;
      Expr freq = exp(cast<double>(pair) * Expr(-2.0 * std::log(theta) / headDim));
      Expr angle = cast<double>(r) * freq;
      Expr cs = cast<float>(cos(angle)), sn = cast<float>(sin(angle));
      Expr even = x.func(2 * (c / 2), r), odd = x.func(2 * (c / 2) + 1, r);
      f(c, r) = select(c % 2 == 0, even * cs - odd * sn, even * sn + odd * cs);
    } else if (op.kind == "add") {
      f(c, r) = operand(0).func(c, r) + operand(1).func(c, r);
    } else if (op.kind == "mul") {
      f(c, r) = operand(0).func(c, r) * operand(1).func(c, r);
    } else if (op.kind == "silu") {
      Expr x = operand(0).func(c, r);
      f(c, r) = x / (1.0f + exp(-x));
    } else if (op.kind == "last_row") {
      f(c, r) = operand(0).func(c, r);
    } else if (op.kind == "attention") {
      buildAttention(op, f, v);
    } else {
      fail(k, "unknown op kind '" + op.kind + "'");
    }
    v.func = f;
    a.values.push_back(v);
  }

  void buildAttention(const KernelOp &op, Func &out, Value &v) {
    Value &q = value(op.operands.at(0));
    Value &kc = value(op.operands.at(1));
    Value &vc = value(op.operands.at(2));
    if (kc.param < 0 || vc.param < 0)
      fail(k, "attention expects its caches to be kernel parameters");
    int nHeads = static_cast<int>(attr(k, op, "n_heads"));
    int nKvHeads = static_cast<int>(attr(k, op, "n_kv_heads"));
    int headDim = static_cast<int>(attr(k, op, "head_dim"));
    int group = nHeads / nKvHeads;
    Var r = a.row;
    AttentionFuncs &at = v.attention;
    at.headDim = headDim;
    Var s = at.s, h = at.h, d = at.d;
    std::string name = "attention_" + std::to_string(a.values.size());

    // Keys and values of the window: cache rows 0 .. last position of the call.
    at.overDim = RDom(0, headDim, name + "_d");
    at.overKeys = RDom(0, kc.weight.dim(1).extent(), name + "_s");
    Expr kvCol = (h / group) * headDim;

    Func &dot = at.dot;
    dot = Func(name + "_dot");
    dot(s, h, r) = 0.0f;
    dot(s, h, r) += q.func(h * headDim + at.overDim, r) * kc.func(kvCol + at.overDim, s);
    at.score = Func(name + "_score");
    at.score(s, h, r) = select(s <= r, dot(s, h, r) * (1.0f / std::sqrt(float(headDim))),
                               Float(32).min());
    at.maxScore = Func(name + "_max");
    at.maxScore(h, r) = Float(32).min();
    at.maxScore(h, r) = max(at.maxScore(h, r), at.score(at.overKeys, h, r));
    at.weight = Func(name + "_weight");
    at.weight(s, h, r) = select(s <= r, exp(at.score(s, h, r) - at.maxScore(h, r)), 0.0f);
    at.denom = Func(name + "_denom");
    at.denom(h, r) = 0.0f;
    at.denom(h, r) += at.weight(at.overKeys, h, r);
    at.mixed = Func(name + "_mixed");
    at.mixed(d, h, r) = 0.0f;
    at.mixed(d, h, r) += at.weight(at.overKeys, h, r) * vc.func(kvCol + d, at.overKeys);

    Expr head = a.col / headDim, inHead = a.col % headDim;
    out(a.col, r) = at.mixed(inHead, head, r) / at.denom(head, r);
  }

  const Kernel &k;
  KernelAlgorithm &a;
};

} // namespace

KernelAlgorithm tfm::kernels::buildKernelAlgorithm(const Kernel &kernel) {
  KernelAlgorithm a;
  Builder(kernel, a).build();
  return a;
}
