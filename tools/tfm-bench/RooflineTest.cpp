//===- RooflineTest.cpp - Which ceiling a kernel is held against ----------===//
#include "KernelCosts.h"
#include "Roofline.h"

#include <gtest/gtest.h>

using namespace tfm;
using namespace tfm::bench;

namespace {

/// The peaks tfm-bench measured on a 2-core Sapphire Rapids VM (GOP/s).
Roofline sapphireRapids() {
  Roofline r;
  r.fmaGflops = 484;
  r.int8DotGops = 1904;
  r.bf16DotGflops = 242;
  r.amxInt8Gops = 15068;
  r.amxBf16Gflops = 6928;
  return r;
}

} // namespace

TEST(Roofline, ProductsAreHeldAgainstTheFastestMultiplyForTheirInputs) {
  Roofline r = sapphireRapids();
  EXPECT_EQ(r.computeGops(tfm::Products::F32, true), 484);
  EXPECT_EQ(r.computeGops(tfm::Products::Int8, true), 15068);
  EXPECT_EQ(r.computeGops(tfm::Products::Bf16, true), 6928);
  // One row: a tile product does a sixteenth of its work.
  EXPECT_EQ(r.computeGops(tfm::Products::Int8, false), 1904);
  // vdpbf16ps measured below the FMAs: a product is never held lower.
  EXPECT_EQ(r.computeGops(tfm::Products::Bf16, false), 484);
  Roofline zen4 = r; // AVX-512 VNNI and BF16, no AMX
  zen4.amxInt8Gops = zen4.amxBf16Gflops = 0;
  EXPECT_EQ(zen4.computeGops(tfm::Products::Int8, true), 1904);
  EXPECT_EQ(zen4.computeGops(tfm::Products::Bf16, true), 484);
}

// The rows of a call decide whether AMX's tiles count: decode's kernels and
// prefill's logits (the last row alone) compute one.
TEST(KernelCosts, RowsOfACall) {
  Manifest m;
  m.tensors = {{"w", {64, 32}, ElementEncoding{}}};
  for (const char *kernel : {"decode_ffn_in", "prefill_ffn_in", "prefill_logits"})
    m.kernels.push_back({kernel, "fast", {"w"}, "", tfm::Products::Bf16});
  tfm_model model{};
  model.prefill_chunk = 512;
  CallSite site{128, 160};
  for (auto [kernel, rows] : {std::pair{"decode_ffn_in", 1}, std::pair{"prefill_ffn_in", 128},
                              std::pair{"prefill_logits", 1}}) {
    std::optional<CallCost> cost = kernelCallCost(kernel, m, model, site);
    ASSERT_TRUE(cost) << kernel;
    EXPECT_EQ(cost->rows, rows) << kernel;
    EXPECT_EQ(cost->flops, 2.0 * rows * 64 * 32) << kernel;
  }
}
