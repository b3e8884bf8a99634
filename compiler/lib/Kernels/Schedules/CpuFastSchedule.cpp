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

/// Packs the weight columns of one column block of `out`, column-major
/// ([K, block]), once per block, so that every row tile reads them
/// contiguously.
void packPanel(ImageParam weight, Func prod, Func out, Var co, Expr inDim, int vec) {
  Func panel = weight.in(prod);
  Var k = panel.args()[0], n = panel.args()[1];
  panel.compute_at(out, co).reorder_storage(n, k);
  const int64_t *rowLength = Internal::as_const_int(inDim);
  if (rowLength && (*rowLength * 4) % 4096 == 0) {
    // Gathering a vector from weight rows whose stride is a multiple of
    // 4 KiB puts all its elements in one L1 set of 8 lines, and every one
    // misses. Load vec x vec blocks row by row instead and transpose them
    // in registers (measured 9.2 -> 6.6 ms for GPT-2's down projection).
    Var kO("kO"), kI("kI"), nO("nO"), nI("nI");
    Func block = weight.in(panel);
    panel.tile(n, k, nO, kO, nI, kI, vec, vec).vectorize(nI).unroll(kI);
    block.compute_at(panel, nO).vectorize(block.args()[0]).unroll(block.args()[1]);
  } else {
    panel.reorder(n, k).vectorize(n, vec);
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
    // The accumulators of a tile: a constant-size block, so that LLVM keeps
    // it in registers (the last row tile uses part of it).
    Func prod = lin->product;
    prod.compute_at(out, ro)
        .bound_storage(a.col, colTile)
        .bound_storage(a.row, rowTile)
        .store_in(MemoryType::Stack)
        .vectorize(a.col, vec);
    prod.update()
        .reorder(a.col, a.row, lin->reduction.x)
        .vectorize(a.col, vec)
        .unroll(a.col)
        .unroll(a.row);
    packPanel(lin->weight, prod, out, co, lin->reduction.x.extent(), vec);
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
  // One key dimension at a time across all keys: a key-cache row is read
  // contiguously. (Reading all dimensions of a few keys instead walks rows
  // context * 4 bytes apart, which share L1 sets when that is a multiple of
  // 4 KiB.)
  at.dot.update()
      .split(at.s, so, si, lanes, TailStrategy::GuardWithIf)
      .reorder(si, so, at.overDim.x)
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
    int vec = lanesDividing(cols, lanes);
    if (param.isKeyCache && !singleRow) {
      // Keys are stored transposed: write vectors along positions, from
      // vec x vec blocks read along columns and transposed in registers.
      Var co("co"), ro("ro"), ci("ci"), ri("ri");
      Func block = a.values[a.outputValues[i]].func.in(out);
      out.tile(a.col, a.row, co, ro, ci, ri, vec, vec, TailStrategy::GuardWithIf)
          .reorder(ri, ci, co, ro)
          .vectorize(ri)
          .unroll(ci)
          .parallel(ro);
      block.compute_at(out, co).vectorize(block.args()[0]).unroll(block.args()[1]);
      continue;
    }
    out.vectorize(a.col, vec);
    if (param.shape.size() == 2 && !singleRow)
      out.parallel(a.row);
  }
}
