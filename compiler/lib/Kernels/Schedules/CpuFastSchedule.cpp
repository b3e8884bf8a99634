//===- CpuFastSchedule.cpp - Vectorised, multi-threaded CPU schedule ------===//
//
// Each output of a kernel is tiled, and the ops it reads are computed inside
// its tiles:
//  * a projection feeding a single-row output (decode, and the prefill head)
//    is a matrix-vector product: blocks of output columns run in parallel,
//    each column a contiguous dot product that LLVM vectorises with several
//    accumulators (measured faster than an explicit rfactor over lanes);
//  * a projection feeding token rows (prefill) is a matrix product: a panel
//    of the weight is packed column-major once per column block and reused
//    for every row tile, whose accumulators stay in registers;
//  * elementwise epilogues (bias, RoPE, SiLU·mul, GELU, residual adds,
//    column slices) are inlined into the output, so their inputs never leave
//    the tile;
//  * a projection that several outputs read (GPT-2's fused QKV, sliced into
//    q, k and v) is computed on its own, tiled as above, and the outputs
//    copy their columns from it;
//  * norms (RMSNorm, LayerNorm) are materialised before the projections,
//    their row statistics computed once per row;
//  * attention runs one head (decode) or one head and row (prefill) per task,
//    vectorised across key positions (keys are stored transposed) and across
//    the head dimension for the value mix.
//
//===----------------------------------------------------------------------===//
#include "Schedules.h"

#include <algorithm>
#include <map>
#include <set>

using namespace Halide;
using namespace tfm::kernels;

namespace {

/// Columns per parallel task of a matrix-vector product: enough work per
/// task that dispatch costs little, and enough tasks to share out.
constexpr int kMatvecTask = 64;

/// Ops reached from an output through inlined elementwise ops that need a
/// placement of their own.
struct Anchors {
  std::set<int> linears;
  int attention = -1;
};

void collectAnchors(KernelAlgorithm &a, int index, Anchors &out) {
  Value &v = a.values[index];
  if (!v.op)
    return;
  const std::string &kind = v.op->kind;
  if (kind == "linear") {
    out.linears.insert(index);
    return;
  }
  if (kind == "attention") {
    out.attention = index;
    return;
  }
  if (kind == "rms_norm" || kind == "layer_norm" || kind == "embedding")
    return; // materialised or gathered on their own
  for (int operand : v.op->operands)
    collectAnchors(a, operand, out);
}

/// Largest count of lanes <= `lanes` that divides `n`, so reductions need no
/// guarded tail.
int lanesDividing(int n, int lanes) {
  while (lanes > 1 && n % lanes != 0)
    lanes /= 2;
  return lanes;
}

void scheduleMatvec(ScheduleContext &ctx, Func out, int cols, const std::vector<Value *> &linears) {
  KernelAlgorithm &a = ctx.algorithm;
  Var task("task"), ci("ci");
  int perTask = std::min(kMatvecTask, cols);
  out.split(a.col, task, ci, perTask, TailStrategy::ShiftInwards).parallel(task);
  for (Value *lin : linears) {
    // Each column's reduction is one contiguous dot product; LLVM vectorises
    // it with several accumulators (Halide allows reassociating floats).
    lin->product.compute_at(out, task);
  }
}

void scheduleMatmul(ScheduleContext &ctx, Func out, int cols, const std::vector<Value *> &linears) {
  KernelAlgorithm &a = ctx.algorithm;
  int lanes = ctx.vectorLanes;
  // Two vectors of columns by rowTile rows of accumulators fit the register
  // file (32 zmm with AVX-512, 16 ymm with AVX2).
  int colTile = std::min(2 * lanes, cols);
  int rowTile = lanes >= 16 ? 8 : 4;
  int vec = lanesDividing(colTile, lanes);
  Var co("co"), ci("ci"), ro("ro"), ri("ri");
  out.split(a.col, co, ci, colTile, TailStrategy::ShiftInwards)
      .split(a.row, ro, ri, rowTile, TailStrategy::GuardWithIf)
      .reorder(ci, ri, ro, co)
      .parallel(co)
      .vectorize(ci, vec);
  for (Value *lin : linears) {
    Func prod = lin->product;
    prod.compute_at(out, ro).vectorize(a.col, vec);
    prod.update()
        .reorder(a.col, a.row, lin->reduction.x)
        .vectorize(a.col, vec)
        .unroll(a.col)
        .unroll(a.row);
    Func panel = lin->weight.in(prod);
    std::vector<Var> args = panel.args(); // (k, n)
    panel.compute_at(out, co).reorder_storage(args[1], args[0]).reorder(args[1], args[0]).vectorize(args[1], vec);
  }
}

void scheduleAttention(ScheduleContext &ctx, Func out, Value &attention, bool singleRow) {
  KernelAlgorithm &a = ctx.algorithm;
  AttentionFuncs &at = attention.attention;
  int lanes = ctx.vectorLanes;
  Var head("head"), inHead("in_head"), task("task");
  out.split(a.col, head, inHead, at.headDim).vectorize(inHead, lanesDividing(at.headDim, lanes));
  Var where = head;
  if (singleRow) {
    out.parallel(head);
  } else {
    out.fuse(head, a.row, task).parallel(task);
    where = task;
  }
  Var so("so"), si("si");
  at.dot.compute_at(out, where).vectorize(at.s, lanes, TailStrategy::GuardWithIf);
  at.dot.update()
      .split(at.s, so, si, lanes, TailStrategy::GuardWithIf)
      .reorder(si, at.overDim.x, so)
      .vectorize(si);
  at.score.compute_at(out, where).vectorize(at.s, lanes, TailStrategy::GuardWithIf);
  at.maxScore.compute_at(out, where);
  at.weight.compute_at(out, where).vectorize(at.s, lanes, TailStrategy::GuardWithIf);
  at.denom.compute_at(out, where);
  int dLanes = lanesDividing(at.headDim, lanes);
  at.mixed.compute_at(out, where).vectorize(at.d, dLanes);
  at.mixed.update().reorder(at.d, at.overKeys.x).vectorize(at.d, dLanes);
}

/// A value of one row: decode, or the last row of a prefill. Cache outputs
/// are judged by the value written, not by the cache's shape.
bool isSingleRow(const Value &v) { return v.shape.size() == 2 && v.shape[0] == 1; }

/// Tiles `out` over its columns (and rows) and computes the projections it
/// reads inside the tiles.
void scheduleProjections(ScheduleContext &ctx, Func out, int cols, bool singleRow,
                         const std::vector<Value *> &linears) {
  if (singleRow)
    scheduleMatvec(ctx, out, cols, linears);
  else
    scheduleMatmul(ctx, out, cols, linears);
}

} // namespace

void tfm::kernels::scheduleCpuFast(ScheduleContext &ctx) {
  KernelAlgorithm &a = ctx.algorithm;
  int lanes = ctx.vectorLanes;

  // Norms: the row statistics once per row, then the normalised rows, all
  // materialised so projections read finished rows.
  for (Value &v : a.values) {
    if (!v.op || (v.op->kind != "rms_norm" && v.op->kind != "layer_norm"))
      continue;
    for (Func f : v.rowStats)
      f.compute_root();
    v.func.compute_root().vectorize(a.col, lanesDividing(static_cast<int>(v.shape[1]), lanes));
    if (!v.tokenRows || v.shape[0] != 1)
      v.func.parallel(a.row);
  }

  std::vector<Anchors> anchors(a.outputs.size());
  std::map<int, int> readers; // linear -> how many outputs read it
  for (size_t i = 0; i < a.outputs.size(); ++i) {
    collectAnchors(a, a.outputValues[i], anchors[i]);
    for (int index : anchors[i].linears)
      ++readers[index];
  }
  for (auto [index, count] : readers) {
    if (count < 2)
      continue;
    Value &lin = a.values[index];
    lin.func.compute_root();
    scheduleProjections(ctx, lin.func, static_cast<int>(lin.shape.back()), isSingleRow(lin),
                        {&lin});
  }

  for (size_t i = 0; i < a.outputs.size(); ++i) {
    Func out = a.outputs[i];
    const KernelParam &param = *a.outputParams[i];
    bool singleRow = isSingleRow(a.values[a.outputValues[i]]);

    if (anchors[i].attention >= 0) {
      scheduleAttention(ctx, out, a.values[anchors[i].attention], singleRow);
      continue;
    }
    std::vector<Value *> linears;
    for (int index : anchors[i].linears)
      if (readers[index] == 1)
        linears.push_back(&a.values[index]);
    int cols = static_cast<int>(param.shape.back());
    if (!linears.empty()) {
      scheduleProjections(ctx, out, cols, singleRow, linears);
      continue;
    }
    // Gathers, copies and plain elementwise outputs.
    out.vectorize(a.col, lanesDividing(cols, lanes));
    if (param.shape.size() == 2 && !singleRow)
      out.parallel(a.row);
  }
}
