//===- PrefetchLineStepsTest.cpp - Split prefetches reach every line -------===//
//
// A row sum prefetching the row two iterations ahead: Halide 14 splits the
// row's prefetch into one per 64 bytes. Each test lowers it and reads back
// the step of the split loop's offset, in elements.
//
//===----------------------------------------------------------------------===//
#include "PrefetchLineSteps.h"

#include <gtest/gtest.h>

#include <memory>
#include <vector>

using namespace Halide;
using namespace Halide::Internal;

namespace {

constexpr int kRowLength = 1024;

/// Records, for each prefetch inside a split loop, the step of its offset
/// per iteration of the innermost such loop and that loop's extent.
class SplitSteps : public IRMutator {
  using IRMutator::visit;
  std::vector<const For *> loops;

  Stmt visit(const For *loop) override {
    bool split = starts_with(loop->name, "prefetch_split_");
    if (split)
      loops.push_back(loop);
    Stmt result = IRMutator::visit(loop);
    if (split)
      loops.pop_back();
    return result;
  }
  Expr visit(const Call *call) override {
    if (call->is_intrinsic(Call::prefetch) && !loops.empty()) {
      const std::string &name = loops.back()->name;
      Expr offset = call->args[1];
      steps.push_back(simplify(substitute(name, 1, offset) - substitute(name, 0, offset)));
      extents.push_back(loops.back()->extent);
    }
    return IRMutator::visit(call);
  }

public:
  std::vector<Expr> steps, extents;
};

/// The sum of each row of `in`, prefetching the row two iterations ahead,
/// with PrefetchLineSteps where `fixed`.
struct RowSum {
  ImageParam in;
  Func sum{"sum"};
  Pipeline pipeline;

  RowSum(Type type, bool fixed) : in(type, 2, "in") {
    Var y("y");
    RDom r(0, kRowLength);
    sum(y) = 0.0f;
    sum(y) += cast<float>(in(r, y));
    sum.update().prefetch(in, y, y, 2, PrefetchBoundStrategy::NonFaulting);
    sum.bound(y, 0, 16);
    pipeline = Pipeline(sum);
    if (fixed)
      pipeline.add_custom_lowering_pass(new tfm::kernels::PrefetchLineSteps);
  }
};

/// Lowers the row sum over `type` elements and returns what SplitSteps saw.
std::unique_ptr<SplitSteps> lowerRowSum(Type type, bool fixed) {
  RowSum rowSum(type, fixed);
  auto seen = std::make_unique<SplitSteps>();
  rowSum.pipeline.add_custom_lowering_pass(seen.get(), nullptr);
  rowSum.pipeline.compile_to_module({rowSum.in}, "row_sum", Target("x86-64-linux-no_runtime"));
  return seen;
}

/// The steps and extents, as integers.
void expectSteps(const SplitSteps &seen, int step, int extent) {
  ASSERT_FALSE(seen.steps.empty()) << "no split prefetch found";
  for (size_t i = 0; i < seen.steps.size(); ++i) {
    const int64_t *s = as_const_int(seen.steps[i]);
    const int64_t *e = as_const_int(simplify(seen.extents[i]));
    ASSERT_TRUE(s && e) << seen.steps[i] << ", " << seen.extents[i];
    EXPECT_EQ(*s, step);
    EXPECT_EQ(*e, extent);
  }
}

// What the pass corrects: Halide 14 steps 64 elements, not 64 bytes. If
// this fails, Halide's SplitPrefetch has been fixed and the pass must go.
TEST(PrefetchLineSteps, Halide14StepsElementsForBytes) {
  std::unique_ptr<SplitSteps> seen = lowerRowSum(Float(32), false);
  expectSteps(*seen, 64, kRowLength * 4 / 64);
}

TEST(PrefetchLineSteps, F32RowReachesEveryLine) {
  std::unique_ptr<SplitSteps> seen = lowerRowSum(Float(32), true);
  expectSteps(*seen, 16, kRowLength * 4 / 64);
}

TEST(PrefetchLineSteps, F16RowReachesEveryLine) {
  std::unique_ptr<SplitSteps> seen = lowerRowSum(Float(16), true);
  expectSteps(*seen, 32, kRowLength * 2 / 64);
}

TEST(PrefetchLineSteps, ByteRowIsLeftAlone) {
  std::unique_ptr<SplitSteps> seen = lowerRowSum(UInt(8), true);
  expectSteps(*seen, 64, kRowLength / 64);
}

// The corrected prefetches, compiled and run, change nothing the kernel
// computes.
TEST(PrefetchLineSteps, RowSumComputesTheSame) {
  RowSum rowSum(Float(32), true);
  Buffer<float> rows(kRowLength, 16);
  for (int y = 0; y < 16; ++y)
    for (int x = 0; x < kRowLength; ++x)
      rows(x, y) = float((x * 7 + y * 3) % 11);
  rowSum.in.set(rows);
  Buffer<float> sums = rowSum.pipeline.realize({16});
  for (int y = 0; y < 16; ++y) {
    float expected = 0;
    for (int x = 0; x < kRowLength; ++x)
      expected += rows(x, y);
    EXPECT_EQ(sums(y), expected) << "row " << y;
  }
}

} // namespace
