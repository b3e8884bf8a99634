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

std::string shapeText(const std::vector<int64_t> &shape) {
  std::string text = "[";
  for (size_t i = 0; i < shape.size(); ++i)
    text += (i ? ", " : "") + std::to_string(shape[i]);
  return text + "]";
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
      v.image = in;
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
      v.rowStats = {scale};
    } else if (op.kind == "layer_norm") {
      Value &x = operand(0), &w = operand(1), &b = operand(2);
      int dim = static_cast<int>(x.shape[1]);
      float eps = static_cast<float>(attr(k, op, "eps"));
      RDom over(0, dim, name + "_k");
      // Two passes, the mean first: the one-pass E[x^2] - E[x]^2 loses the
      // variance of rows whose mean is large against their spread.
      Func sum(name + "_sum");
      sum(r) = 0.0f;
      sum(r) += x.func(over, r);
      Func mean(name + "_mean");
      mean(r) = sum(r) / dim;
      Func sqDev(name + "_sqdev");
      sqDev(r) = 0.0f;
      Expr dev = x.func(over, r) - mean(r);
      sqDev(r) += dev * dev;
      Func scale(name + "_scale");
      scale(r) = 1.0f / sqrt(sqDev(r) / dim + eps);
      f(c, r) = (x.func(c, r) - mean(r)) * scale(r) * w.func(c) + b.func(c);
      v.reduction = over;
      v.rowStats = {mean, scale};
    } else if (op.kind == "linear") {
      Value &x = operand(0), &w = operand(1);
      int inDim = static_cast<int>(w.shape[1]);
      RDom over(0, inDim, name + "_k");
      Func product(name + "_product");
      product(c, r) = 0.0f;
      product(c, r) += x.func(over, r) * w.func(over, c);
      if (op.operands.size() > 2) {
        Value &bias = operand(2);
        if (bias.shape != std::vector<int64_t>{w.shape[0]})
          fail(k, "linear bias has shape " + shapeText(bias.shape) + ", expected [" +
                      std::to_string(w.shape[0]) + "] (one entry per output column)");
        f(c, r) = product(c, r) + bias.func(c);
      } else {
        f(c, r) = product(c, r);
      }
      v.reduction = over;
      v.product = product;
      v.activations = x.func;
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
    } else if (op.kind == "gelu") {
      Expr x = operand(0).func(c, r);
      if (attr(k, op, "approximate") != 0) {
        // 0.5 x (1 + tanh(u)) = x / (1 + exp(-2u)): the same value, through
        // exp, which Halide vectorises, instead of tanh, which it does not.
        Expr u = float(std::sqrt(2.0 / M_PI)) * (x + 0.044715f * x * x * x);
        f(c, r) = x / (1.0f + exp(-2.0f * u));
      } else {
        f(c, r) = 0.5f * x * (1.0f + erfFloat(x * float(M_SQRT1_2)));
      }
    } else if (op.kind == "add_positions") {
      // Token rows are absolute positions: row r takes the table's row r.
      // A position past the table fails Halide's bounds check on the call.
      Value &x = operand(0), &table = operand(1);
      if (table.shape.size() != 2 || table.shape[1] != x.shape.back())
        fail(k, "add_positions table has shape " + shapeText(table.shape) + ", expected [P, " +
                    std::to_string(x.shape.back()) + "]");
      f(c, r) = x.func(c, r) + table.func(c, r);
    } else if (op.kind == "slice_cols") {
      Value &x = operand(0);
      int64_t begin = static_cast<int64_t>(attr(k, op, "begin"));
      int64_t size = static_cast<int64_t>(attr(k, op, "size"));
      if (begin < 0 || size <= 0 || begin + size > x.shape.back() || op.shape.back() != size)
        fail(k, "slice_cols of columns " + std::to_string(begin) + ".." +
                    std::to_string(begin + size - 1) + " from " + std::to_string(x.shape.back()) +
                    " columns into " + std::to_string(op.shape.back()) +
                    ", expected a range inside the input as wide as the result");
      f(c, r) = x.func(c + static_cast<int>(begin), r);
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

    // Causal: the row at position r reads cache rows 0..r, so the keys a
    // row reduces over depend on the row, and no masked key is computed.
    at.overDim = RDom(0, headDim, name + "_d");
    at.overKeys = RDom(0, kc.image.dim(1).extent(), name + "_s");
    at.overKeys.where(at.overKeys.x <= r);
    Expr kvCol = (h / group) * headDim;

    Func &dot = at.dot;
    dot = Func(name + "_dot");
    dot(s, h, r) = 0.0f;
    dot(s, h, r) += q.func(h * headDim + at.overDim, r) * kc.func(kvCol + at.overDim, s);
    at.score = Func(name + "_score");
    at.score(s, h, r) = dot(s, h, r) * (1.0f / std::sqrt(float(headDim)));
    at.maxScore = Func(name + "_max");
    at.maxScore(h, r) = Float(32).min();
    at.maxScore(h, r) = max(at.maxScore(h, r), at.score(at.overKeys, h, r));
    at.weight = Func(name + "_weight");
    at.weight(s, h, r) = exp(at.score(s, h, r) - at.maxScore(h, r));
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

// Halide's own erf is off by up to 5e-7 relative, and exact GELU is checked
// against references that round erf correctly. Here erf(x) = x P(x^2)/Q(x^2)
// on [-4, 4] (beyond, erf rounds to +-1 in float): a rational fit of least
// maximum relative error (2e-9), made for this file by iteratively
// reweighted least squares, and evaluated in double so that rounding leaves
// only the final rounding to float (6e-8 relative).
Expr tfm::kernels::erfFloat(Expr x) {
  static const double p[] = {1.1283791693718521e+00, 1.8520309842460561e-01,
                             5.4316896019758643e-02, 3.8496066284403399e-03,
                             3.7960877622659865e-04, 4.6847783846046265e-06,
                             -1.3202228865694110e-08};
  static const double q[] = {1.0,
                             4.9746538633153381e-01, 1.1395836608980768e-01,
                             1.5462079609066691e-02, 1.3075687464449231e-03,
                             6.3110584945880698e-05};
  auto f64 = [](double c) { return Internal::make_const(Float(64), c); };
  Expr xd = clamp(cast<double>(x), f64(-4.0), f64(4.0));
  Expr t = xd * xd;
  auto horner = [&](const double *c, int n) {
    Expr acc = f64(c[n - 1]);
    for (int i = n - 2; i >= 0; --i)
      acc = acc * t + f64(c[i]);
    return acc;
  };
  return cast<float>(xd * horner(p, 7) / horner(q, 6));
}
