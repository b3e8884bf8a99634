//===- RowOps.cpp - Ops computed row by row without a reduction -----------===//
//
// Gathers, slices, position terms and elementwise math. Every 2-D value is a
// Func (col, row) whose row is the token's absolute position.
//
//===----------------------------------------------------------------------===//
#include "../OpRegistry.h"

#include <cmath>

using namespace Halide;

namespace tfm::kernels {

namespace {
std::string shapeText(const std::vector<int64_t> &shape) {
  std::string text = "[";
  for (size_t i = 0; i < shape.size(); ++i)
    text += (i ? ", " : "") + std::to_string(shape[i]);
  return text + "]";
}
} // namespace

void defineEmbedding(OpDefinition &d) {
  Value &table = d.operand(0), &tokens = d.operand(1);
  int vocab = static_cast<int>(table.shape[0]);
  Var c = d.algorithm.col, r = d.algorithm.row;
  Expr row = table.func(c, clamp(tokens.func(r), 0, vocab - 1));
  double scale = d.attrs<EmbeddingAttrs>().scale;
  Func f(d.name);
  f(c, r) = scale == 1.0 ? row : row * static_cast<float>(scale);
  d.result.func = f;
}

void defineAddPositions(OpDefinition &d) {
  // Token rows are absolute positions: row r takes the table's row r +
  // offset. A position past the table fails Halide's bounds check on the
  // call.
  Value &x = d.operand(0), &table = d.operand(1);
  std::string expected = ", expected [P, " + std::to_string(x.shape.back()) + "]";
  if (table.shape.size() != 2 || table.shape[1] != x.shape.back())
    d.fail("table has shape " + shapeText(table.shape) + expected);
  Var c = d.algorithm.col, r = d.algorithm.row;
  int offset = static_cast<int>(d.attrs<AddPositionsAttrs>().offset);
  Expr sum = x.func(c, r) + table.func(c, r + offset);
  if (d.op.operands.size() > 2) { // every token of type 0
    Value &types = d.operand(2);
    if (types.shape.size() != 2 || types.shape[1] != x.shape.back())
      d.fail("token_types has shape " + shapeText(types.shape) + expected);
    sum += types.func(c, 0);
  }
  Func f(d.name);
  f(c, r) = sum;
  d.result.func = f;
}

void defineSliceCols(OpDefinition &d) {
  Value &x = d.operand(0);
  const auto &attrs = d.attrs<SliceColsAttrs>();
  if (attrs.begin < 0 || attrs.size <= 0 || attrs.begin + attrs.size > x.shape.back() ||
      d.op.shape.back() != attrs.size)
    d.fail("columns " + std::to_string(attrs.begin) + ".." +
           std::to_string(attrs.begin + attrs.size - 1) + " from " +
           std::to_string(x.shape.back()) + " columns into " + std::to_string(d.op.shape.back()) +
           ", expected a range inside the input as wide as the result");
  Var c = d.algorithm.col, r = d.algorithm.row;
  Func f(d.name);
  f(c, r) = x.func(c + static_cast<int>(attrs.begin), r);
  d.result.func = f;
  // Column c reads column c + begin: outside a tile of the output (Phi-3's
  // up half of gate_up), so the input is computed on its own.
  d.result.readsOtherColumns = attrs.begin != 0;
}

void defineLastRow(OpDefinition &d) {
  // The buffers say which row: a one-row value at the call's last position.
  Var c = d.algorithm.col, r = d.algorithm.row;
  Func f(d.name);
  f(c, r) = d.operand(0).func(c, r);
  d.result.func = f;
}

void defineAddSinusoid(OpDefinition &d) {
  Value &x = d.operand(0);
  int width = static_cast<int>(x.shape.back());
  const auto &attrs = d.attrs<AddSinusoidAttrs>();
  if (attrs.halves && width % 2 != 0)
    d.fail("halves of an odd width " + std::to_string(width) + ", expected an even one");
  Var c = d.algorithm.col, r = d.algorithm.row;
  // Column c's pair and whether it takes the sine: side by side (2017), or
  // the sines' half, then the cosines' (Marian).
  int half = width / 2;
  Expr pair = attrs.halves ? select(c < half, c, c - half) : c / 2;
  Expr sineColumn = attrs.halves ? c < half : c % 2 == 0;
  // In double, as for RoPE: at position thousands a float angle loses the
  // bits the reference keeps.
  Expr freq = exp(cast<double>(pair) * Expr(-2.0 * std::log(attrs.base) / width));
  Expr angle = cast<double>(r) * freq;
  Func f(d.name);
  auto [sine, cosine] = sinCosFloat(angle);
  f(c, r) = x.func(c, r) + select(sineColumn, sine, cosine);
  d.result.func = f;
}

void defineRope(OpDefinition &d) {
  Value &x = d.operand(0);
  const auto &attrs = d.attrs<RopeAttrs>();
  int headDim = static_cast<int>(attrs.headDim), rotary = static_cast<int>(attrs.rotaryDim);
  int width = static_cast<int>(x.shape.back());
  Var c = d.algorithm.col, r = d.algorithm.row;
  Expr within = c % headDim;
  // Pair i of the head, whether this column is the pair's first, and the
  // column's partner. Partner indices are clamped into the input: a column
  // past the rotary width passes through, but Halide's bounds still see its
  // partner's index.
  Expr pair, first, self = x.func(c, r), partner;
  if (attrs.interleaved && headDim % 2 == 0) {
    // Both columns of the pair, read as (2i, 2i+1): a tile of even width
    // starting at an even column reads nothing outside itself.
    pair = within / 2;
    first = c % 2 == 0;
    Expr even = x.func(2 * (c / 2), r), odd = x.func(2 * (c / 2) + 1, r);
    self = select(first, even, odd);
    partner = select(first, odd, even);
  } else if (attrs.interleaved) {
    pair = within / 2;
    first = within % 2 == 0;
    partner = select(first, x.func(min(c + 1, width - 1), r), x.func(max(c - 1, 0), r));
  } else {
    // The partner lies half the rotary width away: schedules materialise
    // this op's input (readsOtherColumns), so these reads stay inside the
    // computed row.
    d.result.readsOtherColumns = true;
    int half = rotary / 2;
    first = within < half;
    pair = select(first, within, within - half);
    partner = select(first, x.func(min(c + half, width - 1), r), x.func(max(c - half, 0), r));
  }
  // The angle depends on the pair and the position only: a table per call,
  // not a cosine and a sine per column of every head. Angles in double:
  // positions reach the thousands and a float angle would lose the low bits
  // that the reference keeps.
  // The ops rotating by the same angles (a layer's queries and keys) share
  // one table.
  std::string key = std::to_string(attrs.theta) + "/" + std::to_string(rotary) + "/" +
                    std::to_string(attrs.positionScale) + "/" + std::to_string(attrs.magnitude);
  for (double factor : attrs.freqFactors)
    key += "/" + std::to_string(factor);
  Func &table = d.algorithm.ropeTables[key];
  if (!table.defined()) {
    Var p("pair");
    Expr freq = exp(cast<double>(p) * Expr(-2.0 * std::log(attrs.theta) / rotary));
    if (!attrs.freqFactors.empty()) {
      // Constants of the generated code, as ALiBi's slopes are.
      Halide::Buffer<double> factors(static_cast<int>(attrs.freqFactors.size()),
                                     d.name + "_freq_factors");
      for (size_t i = 0; i < attrs.freqFactors.size(); ++i)
        factors(static_cast<int>(i)) = attrs.freqFactors[i];
      // Clamped: bounds inference takes a select's two pair indices (a
      // rotate_half column's pair is its column or that minus half) as the
      // table's range, beyond the pairs.
      freq /= factors(clamp(p, 0, static_cast<int>(attrs.freqFactors.size()) - 1));
    }
    Expr angle = cast<double>(r) * Expr(1.0 / attrs.positionScale) * freq;
    table = Func(d.name + "_angles");
    auto [sine, cosine] = sinCosFloat(angle);
    if (attrs.magnitude != 1.0) {
      Expr magnitude = static_cast<float>(attrs.magnitude);
      sine *= magnitude;
      cosine *= magnitude;
    }
    table(p, r) = Tuple(cosine, sine);
  }
  d.result.positionTables = {table};
  Expr cs = table(pair, r)[0], sn = table(pair, r)[1];
  Expr rotated = self * cs + select(first, -partner, partner) * sn;
  Func f(d.name);
  f(c, r) = rotary == headDim ? rotated : select(within < rotary, rotated, self);
  d.result.func = f;
}

void defineAdd(OpDefinition &d) {
  Var c = d.algorithm.col, r = d.algorithm.row;
  Func f(d.name);
  f(c, r) = d.operand(0).func(c, r) + d.operand(1).func(c, r);
  d.result.func = f;
}

void defineMul(OpDefinition &d) {
  Var c = d.algorithm.col, r = d.algorithm.row;
  Func f(d.name);
  f(c, r) = d.operand(0).func(c, r) * d.operand(1).func(c, r);
  d.result.func = f;
}

void defineSilu(OpDefinition &d) {
  Var c = d.algorithm.col, r = d.algorithm.row;
  Expr x = d.operand(0).func(c, r);
  Func f(d.name);
  f(c, r) = x / (1.0f + exp(-x));
  d.result.func = f;
}

void defineRelu(OpDefinition &d) {
  Var c = d.algorithm.col, r = d.algorithm.row;
  Func f(d.name);
  f(c, r) = max(d.operand(0).func(c, r), 0.0f);
  d.result.func = f;
}

void defineClamp(OpDefinition &d) {
  Var c = d.algorithm.col, r = d.algorithm.row;
  float limit = static_cast<float>(d.attrs<ClampAttrs>().limit);
  Func f(d.name);
  f(c, r) = clamp(d.operand(0).func(c, r), -limit, limit);
  d.result.func = f;
}

Expr softcapFloat(Expr x, double cap) {
  // tanh(u) = 1 - 2 / (1 + exp(2u)), through exp, which Halide vectorises;
  // its cancellation near 0 costs cap * 1e-7 at most, far below the
  // values it caps.
  float c = static_cast<float>(cap);
  return c * (1.0f - 2.0f / (1.0f + exp(x * (2.0f / c))));
}

void defineSoftcap(OpDefinition &d) {
  Var c = d.algorithm.col, r = d.algorithm.row;
  Func f(d.name);
  f(c, r) = softcapFloat(d.operand(0).func(c, r), d.attrs<SoftcapAttrs>().cap);
  d.result.func = f;
}

void defineGelu(OpDefinition &d) {
  Var c = d.algorithm.col, r = d.algorithm.row;
  Expr x = d.operand(0).func(c, r);
  Func f(d.name);
  if (d.attrs<GeluAttrs>().approximate) {
    // 0.5 x (1 + tanh(u)) = x / (1 + exp(-2u)): the same value, through exp,
    // which Halide vectorises, instead of tanh, which it does not.
    Expr u = float(std::sqrt(2.0 / M_PI)) * (x + 0.044715f * x * x * x);
    f(c, r) = x / (1.0f + exp(-2.0f * u));
  } else {
    f(c, r) = 0.5f * x * (1.0f + erfFloat(x * float(M_SQRT1_2)));
  }
  d.result.func = f;
}

// Halide's own erf is off by up to 5e-7 relative, and exact GELU is checked
// against references that round erf correctly. Here erf(x) = x P(x^2)/Q(x^2)
// on [-4, 4] (beyond, erf rounds to +-1 in float): a rational fit of least
// maximum relative error (2e-9), made for this file by iteratively
// reweighted least squares, and evaluated in double so that rounding leaves
// only the final rounding to float (6e-8 relative).
Expr erfFloat(Expr x) {
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

// Halide's sin and cos of a double call the device's library, whose
// argument reduction for large angles (Payne-Hanek) keeps a table on the
// stack: every GPU kernel with a position table needed a stack frame. Here
// the angle is reduced by the nearest multiple of pi/2 in two steps (Cody
// and Waite: pi/2's high part has trailing zero bits, so the product by
// any quadrant below 2^20 is exact), and sine and cosine are Taylor series
// on [-pi/4, pi/4], within 3e-14 there: only the final rounding to float
// is left.
std::pair<Expr, Expr> sinCosFloat(Expr angle) {
  auto f64 = [](double c) { return Internal::make_const(Float(64), c); };
  const double halfPiHigh = 1.57079632673412561417e+00, halfPiLow = 6.07710050650619224932e-11;
  Expr quarter = round(angle * f64(2.0 / M_PI));
  // Strict: Halide lets LLVM reassociate floats, which would fold the two
  // steps back into one product by a rounded pi/2.
  Expr x = strict_float((angle - quarter * f64(halfPiHigh)) - quarter * f64(halfPiLow));
  Expr x2 = x * x;
  // 1/(2k+1)! and 1/(2k)!, highest first.
  Expr sine = f64(1.0 / 6227020800.0), cosine = f64(-1.0 / 87178291200.0);
  for (double c : {-1.0 / 39916800.0, 1.0 / 362880.0, -1.0 / 5040.0, 1.0 / 120.0, -1.0 / 6.0, 1.0})
    sine = sine * x2 + f64(c);
  for (double c : {1.0 / 479001600.0, -1.0 / 3628800.0, 1.0 / 40320.0, -1.0 / 720.0, 1.0 / 24.0,
                   -0.5, 1.0})
    cosine = cosine * x2 + f64(c);
  sine = sine * x;
  // Halide's % of integers is never negative: the quadrant is 0..3.
  Expr q = cast<int>(quarter) % 4;
  Expr s = select(q == 0, sine, q == 1, cosine, q == 2, -sine, -cosine);
  Expr c = select(q == 0, cosine, q == 1, -sine, q == 2, -cosine, sine);
  return {cast<float>(s), cast<float>(c)};
}

} // namespace tfm::kernels
