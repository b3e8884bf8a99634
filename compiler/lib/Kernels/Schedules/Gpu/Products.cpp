//===- Products.cpp - Matrix products on GPU threads ----------------------===//
//
// Decode's products read every weight once and are bound by memory: a
// column's dot product is split across a warp of lanes that read
// consecutive weights (one transaction for the warp), each lane summing
// every lanes-th element (or block of a block format), and the lanes'
// partial sums, kept in shared memory, are added by the column's thread;
// or, on CUDA (GpuParams::warpShuffles), kept in the lanes' registers and
// added by warp shuffles.
// Prefill's products reuse each weight across the rows: a block computes
// a tile of columns by rows, and each depth step stages the tile's
// weights and activations in shared memory for all its threads.
//
//===----------------------------------------------------------------------===//
#include "Gpu.h"

#include "../../OpRegistry.h"
#include "../LoopSizes.h"

using namespace Halide;

namespace tfm::kernels::gpu {

namespace {

/// The innermost variable of a product's reduction: the element, of the
/// row for a plain type, of a (sub-)block for a block format
/// (StoredWeight.h), whose bytes are contiguous.
RVar innermost(const Value &linear) { return linear.reduction.x; }

void refuseCpuForms(const Value &linear) {
  if (linear.integer || linear.bf16Pairs.defined())
    throw std::runtime_error("the gpu schedule computes products of float activations; " +
                             linear.product.name() + " has 8-bit activations or AMX pairs, "
                             "a CPU form");
}

} // namespace

void scheduleMatvec(ScheduleContext &ctx, const GpuParams &params, Func out,
                    const std::vector<Value *> &linears) {
  KernelAlgorithm &a = ctx.algorithm;
  Var block("block"), column("column"), unit("unit"), columns("columns");
  if (params.warpShuffles) {
    // The threads' x is the lanes' (gpu_lanes), their y the column's: a
    // loop of one column inside the column's thread, split off first so
    // that the guard of the last block's columns encloses what is
    // computed at the column.
    out.split(a.col, columns, unit, 1)
        .split(columns, block, column, params.matvecColumns, TailStrategy::GuardWithIf)
        .gpu_blocks(block, a.row)
        .gpu_threads(unit, column);
  } else {
    out.split(a.col, block, column, params.matvecColumns, TailStrategy::GuardWithIf)
        .gpu_blocks(block, a.row)
        .gpu_threads(column);
  }
  for (Value *lin : linears) {
    refuseCpuForms(*lin);
    Func product = lin->product;
    // A column's thread computes the columns its output reads (both of an
    // interleaved RoPE pair): unrolled, they stay in registers, where a
    // loop over them kept them in an array on the stack.
    product.compute_at(out, params.warpShuffles ? unit : column).unroll(a.col);
    product.update().unroll(a.col);
    RVar over = innermost(*lin);
    int lanes = divisorAtMost(constantExtent(over), params.matvecLanes);
    if (lanes == 1)
      continue; // the column's thread sums it alone
    RVar group("group"), laneStep("lane_step");
    Var lane("lane");
    product.update().split(over, group, laneStep, lanes);
    Func partial = product.update().rfactor(laneStep, lane);
    if (params.warpShuffles) {
      // Each column's warp: its lanes' sums in their registers, read
      // across the warp by the column's sum (Halide's gpu_lanes).
      // Lanes innermost in its storage: a warp's registers hold a column
      // each, where the columns of a RoPE pair would interleave them.
      partial.compute_at(out, column).reorder_storage(lane, a.col, a.row).gpu_lanes(lane);
      partial.update().gpu_lanes(lane);
      continue;
    }
    partial.compute_at(out, block).reorder(lane, a.col, a.row).gpu_threads(lane, a.col);
    partial.update().reorder(lane, a.col, a.row).gpu_threads(lane, a.col);
  }
}

void scheduleMatmul(ScheduleContext &ctx, const GpuParams &params, Func out,
                    const std::vector<Value *> &linears) {
  KernelAlgorithm &a = ctx.algorithm;
  Var colBlock("col_block"), rowBlock("row_block"), colThread("col_thread"),
      rowThread("row_thread");
  out.gpu_tile(a.col, a.row, colBlock, rowBlock, colThread, rowThread, params.matmulColumns,
               params.matmulRows, TailStrategy::GuardWithIf);
  for (Value *lin : linears) {
    refuseCpuForms(*lin);
    Func product = lin->product;
    if (lin->reduction.dimensions() != 1) {
      // A block format: each thread decodes the blocks of its column.
      product.compute_at(out, colThread);
      continue;
    }
    RVar k = lin->reduction.x, step("k_step"), inStep("k_in_step");
    int depth = divisorAtMost(constantExtent(k), params.matmulDepth);
    product.compute_at(out, colBlock).gpu_threads(a.col, a.row);
    product.update()
        .split(k, step, inStep, depth)
        .reorder(inStep, a.col, a.row, step)
        .gpu_threads(a.col, a.row);
    Func weights = lin->decodedWeights.in(product);
    weights.compute_at(product, step).gpu_threads(weights.args()[0], weights.args()[1]);
    auto tiles = a.rowTiles.find(lin->activations.name());
    if (tiles != a.rowTiles.end()) {
      Func rows = tiles->second.in(product);
      rows.compute_at(product, step).gpu_threads(rows.args()[0], rows.args()[1]);
    }
  }
}

} // namespace tfm::kernels::gpu
