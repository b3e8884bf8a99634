//===- KernelAlgorithm.cpp - A kernel's ops as Halide Funcs ---------------===//
#include "KernelAlgorithm.h"
#include "OpRegistry.h"

#include <stdexcept>

using namespace Halide;
using namespace tfm;
using namespace tfm::kernels;

namespace {

[[noreturn]] void fail(const Kernel &k, const std::string &what) {
  throw std::runtime_error("kernel " + k.name + ": " + what);
}

Value &value(const Kernel &k, KernelAlgorithm &a, int index) {
  if (index < 0 || index >= static_cast<int>(a.values.size()))
    fail(k, "operand " + std::to_string(index) + " is not a value of the kernel");
  if (!a.values[index].func.defined())
    fail(k, "operand " + std::to_string(index) + " is an output parameter, not a value");
  return a.values[index];
}

/// Pins a buffer's layout to the shape the kernel was compiled for: columns
/// are dense, the row stride is the column count, and every extent that the
/// config fixes is a constant. Only the row range of token rows and of the
/// cache window stays free (and is 1 row when the kernel is for one row).
/// A cache written by the kernel is a window at the call's positions; one
/// read by it starts at position 0, unless it slides.
void constrainLayout(OutputImageParam b, const KernelParam &p) {
  if (p.shape.size() == 1) {
    b.dim(0).set_stride(1);
    if (!p.tokenRows)
      b.dim(0).set_bounds(0, static_cast<int>(p.shape[0]));
    else if (p.shape[0] != kDynamicRows)
      b.dim(0).set_extent(static_cast<int>(p.shape[0]));
    return;
  }
  int cols = static_cast<int>(p.type.storedRowLength(p.shape[1]));
  if (p.isCache && p.cacheLayout == CacheLayout::Transposed) { // [cols, context] in memory
    b.dim(0).set_bounds(0, cols).set_stride(static_cast<int>(p.shape[0]));
    b.dim(1).set_stride(1);
    if (!p.isOutput && !p.slidingWindow) // a read window starts at the first position
      b.dim(1).set_min(0);
    return;
  }
  b.dim(0).set_bounds(0, cols).set_stride(1);
  b.dim(1).set_stride(cols);
  if (p.isCache) {
    if (!p.isOutput && !p.slidingWindow)
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
      Value &v = value(k, a, it->second);
      // A separate output Func, so that a value both stored and used inside
      // the kernel (q in the attention input) can be scheduled on its own.
      // A cache stores keys and values rounded to its type.
      Func out(p.name);
      if (p.shape.size() == 1)
        out(a.col) = storedValue(p, v.func(a.col));
      else
        out(a.col, a.row) = storedValue(p, v.func(a.col, a.row));
      constrainLayout(out.output_buffer(), p);
      // bf16 pairs lie in tiles of 16 rows from the first input row
      // (Ops/Linear.cpp): an output's rows start there too, so that its row
      // tiles are theirs (the call's rows are every token-rows buffer's).
      if (!a.bf16Pairs.empty() && p.shape.size() == 2 && (p.tokenRows || p.isCache))
        out.output_buffer().dim(1).set_min(a.firstRow());
      a.outputs.push_back(out);
      a.outputValues.push_back(it->second);
      a.outputParams.push_back(&p);
    }
  }

private:
  void addParam(int index) {
    const KernelParam &p = k.params[index];
    Value v;
    v.param = index;
    v.shape = p.shape;
    v.tokenRows = p.tokenRows;
    if (!p.isOutput) {
      ImageParam in(storedElementType(p.type, a.sixteenBitFloats),
                    static_cast<int>(p.shape.size()), p.name);
      constrainLayout(in, p);
      a.inputs.push_back(in);
      v.image = in;
      Func reads = a.reads == InputReads::EdgeClamped ? BoundaryConditions::repeat_edge(in)
                                                      : Func(in);
      if (p.type == ElementEncoding{DType::I32, std::nullopt} ||
          (p.isCache && p.type == ElementEncoding{})) {
        v.func = reads;
      } else if (p.isCache) { // keys or values, widened where they are read
        v.func = Func(p.name + "_values");
        Expr stored = reads(a.col, a.row);
        v.func(a.col, a.row) = p.type.plain == DType::F16 || p.type.plain == DType::BF16
                                   ? widenSixteenBits(stored, p.type.plain)
                                   : cast<float>(stored);
      } else {
        // A weight: its values decoded where they are read (the Func is
        // never scheduled, so it is inlined into its readers).
        v.stored.emplace(in, reads, p.type, static_cast<int>(p.shape.back()));
        v.func = Func(p.name + "_values");
        if (p.shape.size() == 1)
          v.func(a.col) = v.stored->at(a.col, 0);
        else
          v.func(a.col, a.row) = v.stored->at(a.col, a.row);
      }
    }
    a.values.push_back(v);
  }

  /// `value` as output parameter `p` stores it (a cache rounds keys and
  /// values to its type).
  Expr storedValue(const KernelParam &p, Expr value) {
    if (!p.type.block && (p.type.plain == DType::F16 || p.type.plain == DType::BF16))
      return narrowToSixteenBits(value, p.type.plain, a.sixteenBitFloats);
    return cast(storedElementType(p.type, a.sixteenBitFloats), value);
  }

  void addOp(const KernelOp &op) {
    Value v;
    v.op = &op;
    v.shape = op.shape;
    v.tokenRows = op.tokenRows;
    std::string name = std::string(opKindName(op.kind())).substr(4) + "_" +
                       std::to_string(a.values.size());
    OpDefinition d{k, op, a, v, name};
    opRecord(op.kind()).define(d);
    a.values.push_back(v);
  }

  const Kernel &k;
  KernelAlgorithm &a;
};

} // namespace

const Value *KernelAlgorithm::tokenRowsInput() const {
  for (const Value &v : values)
    if (!v.op && v.tokenRows && v.image.defined())
      return &v;
  return nullptr;
}

Expr KernelAlgorithm::firstRow() const {
  const Value *rows = tokenRowsInput();
  if (!rows)
    throw std::runtime_error("a kernel of many rows has no token-rows input");
  return rows->image.dim(rows->image.dimensions() - 1).min();
}

bool tfm::kernels::multipliesBytePairs(const Halide::Target &target) {
  return target.arch == Halide::Target::X86 &&
         !target.has_feature(Halide::Target::AVX512_SapphireRapids);
}

int tfm::kernels::targetVectorLanes(const Halide::Target &target) {
  if (target.has_feature(Halide::Target::AVX512))
    return 16;
  if (target.has_feature(Halide::Target::AVX))
    return 8;
  return 4;
}

SixteenBitFloats tfm::kernels::sixteenBitFloatsFor(const Halide::Target &target) {
  return target.has_gpu_feature() ? SixteenBitFloats::IntegerBits : SixteenBitFloats::HalideTypes;
}

KernelAlgorithm tfm::kernels::buildKernelAlgorithm(const Kernel &kernel, AmxTiles amx,
                                                   bool bytePairs, int vectorLanes,
                                                   InputReads reads, SixteenBitFloats sixteen) {
  KernelAlgorithm a;
  a.sixteenBitFloats = sixteen;
  a.amx = amx;
  a.reads = reads;
  a.bytePairs = bytePairs;
  a.activationRowTile = vectorLanes;
  Builder(kernel, a).build();
  return a;
}

Value &OpDefinition::operand(size_t i) const {
  if (i >= op.operands.size())
    fail("expects at least " + std::to_string(i + 1) + " operands");
  return value(kernel, algorithm, op.operands[i]);
}

void OpDefinition::fail(const std::string &what) const {
  ::fail(kernel, std::string("op ") + opKindName(op.kind()) + ": " + what);
}
