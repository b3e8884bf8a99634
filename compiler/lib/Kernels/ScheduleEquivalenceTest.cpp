//===- ScheduleEquivalenceTest.cpp - Every schedule computes the same -----===//
//
// Builds the kernels a Llama layer lowers to (by hand, as the MLIR half would
// hand them over), runs each under every schedule set with Halide's JIT on
// the same random inputs, and checks the results agree with the plain
// schedule. Row windows start at a non-zero position, as in a real call.
//
//===----------------------------------------------------------------------===//
#include "KernelAlgorithm.h"
#include "Schedules/Schedules.h"

#include "Halide.h"

#include <gtest/gtest.h>

#include <cmath>
#include <map>
#include <random>

using namespace tfm;
using namespace tfm::kernels;

namespace {

constexpr int kDim = 64, kHeads = 4, kKvHeads = 2, kHeadDim = 16, kHidden = 96,
              kCtx = 48;
constexpr int kKvDim = kKvHeads * kHeadDim;

KernelParam param(const std::string &name, std::vector<int64_t> shape,
                  bool tokenRows = false, bool isOutput = false) {
  KernelParam p;
  p.name = name;
  p.shape = std::move(shape);
  p.tokenRows = tokenRows;
  p.isOutput = isOutput;
  return p;
}

KernelParam cache(const std::string &name, bool isKey, bool isOutput) {
  KernelParam p = param(name, {kCtx, kKvDim}, false, isOutput);
  p.isCache = true;
  p.isKeyCache = isKey;
  return p;
}

KernelOp op(const std::string &kind, std::vector<int> operands, std::vector<int64_t> shape,
            std::map<std::string, double> attrs = {}) {
  KernelOp o;
  o.kind = kind;
  o.operands = std::move(operands);
  o.shape = std::move(shape);
  o.tokenRows = true;
  o.attrs = std::move(attrs);
  return o;
}

/// norm + q/k/v projections + RoPE, keys and values stored in the caches.
Kernel attentionInput(int64_t rows) {
  Kernel k;
  k.name = "attn_in";
  k.params = {param("x", {rows, kDim}, true),       param("norm", {kDim}),
              param("wq", {kHeads * kHeadDim, kDim}), param("wk", {kKvDim, kDim}),
              param("wv", {kKvDim, kDim}),          param("q", {rows, kHeads * kHeadDim}, true, true),
              cache("kc", true, true),              cache("vc", false, true)};
  std::map<std::string, double> rope{{"head_dim", kHeadDim}, {"theta", 10000.0}};
  k.ops = {op("rms_norm", {0, 1}, {rows, kDim}, {{"eps", 1e-5}}),
           op("linear", {8, 2}, {rows, kHeads * kHeadDim}),
           op("linear", {8, 3}, {rows, kKvDim}),
           op("linear", {8, 4}, {rows, kKvDim}),
           op("rope", {9}, {rows, kHeads * kHeadDim}, rope),
           op("rope", {10}, {rows, kKvDim}, rope)};
  k.outputValue = {{5, 12}, {6, 13}, {7, 11}};
  return k;
}

Kernel attention(int64_t rows) {
  Kernel k;
  k.name = "attention";
  k.params = {param("q", {rows, kHeads * kHeadDim}, true), cache("kc", true, false),
              cache("vc", false, false), param("out", {rows, kHeads * kHeadDim}, true, true)};
  k.ops = {op("attention", {0, 1, 2}, {rows, kHeads * kHeadDim},
              {{"n_heads", kHeads}, {"n_kv_heads", kKvHeads}, {"head_dim", kHeadDim}})};
  k.outputValue = {{3, 4}};
  return k;
}

/// norm + gate/up + SiLU·mul.
Kernel feedForwardInput(int64_t rows) {
  Kernel k;
  k.name = "ffn_in";
  k.params = {param("x", {rows, kDim}, true), param("norm", {kDim}), param("wg", {kHidden, kDim}),
              param("wu", {kHidden, kDim}), param("h", {rows, kHidden}, true, true)};
  k.ops = {op("rms_norm", {0, 1}, {rows, kDim}, {{"eps", 1e-5}}),
           op("linear", {5, 2}, {rows, kHidden}), op("linear", {5, 3}, {rows, kHidden}),
           op("silu", {6}, {rows, kHidden}), op("mul", {8, 7}, {rows, kHidden})};
  k.outputValue = {{4, 9}};
  return k;
}

/// Down projection + residual add.
Kernel feedForwardOutput(int64_t rows) {
  Kernel k;
  k.name = "ffn_out";
  k.params = {param("h", {rows, kHidden}, true), param("wd", {kDim, kHidden}),
              param("x", {rows, kDim}, true), param("y", {rows, kDim}, true, true)};
  k.ops = {op("linear", {0, 1}, {rows, kDim}), op("add", {2, 4}, {rows, kDim})};
  k.outputValue = {{3, 5}};
  return k;
}

/// Memory for every parameter of a kernel, shared by all schedule runs.
struct Buffers {
  std::vector<std::vector<float>> data;
  std::vector<Halide::Buffer<>> views;
};

/// Row window of a parameter for a call of `rows` tokens at `pos`.
Halide::Buffer<> view(const KernelParam &p, float *data, int pos, int rows) {
  std::vector<halide_dimension_t> dims;
  if (p.shape.size() == 1) {
    dims.push_back({p.tokenRows ? pos : 0, p.tokenRows ? rows : int(p.shape[0]), 1});
  } else if (p.isCache) {
    int start = p.isOutput ? pos : 0, count = p.isOutput ? rows : pos + rows;
    int cols = int(p.shape[1]), ctx = int(p.shape[0]);
    float *origin = data; // the buffer's host points at position `start`
    if (p.isKeyCache) {
      origin += start;
      dims = {{0, cols, ctx}, {start, count, 1}};
    } else {
      origin += int64_t(start) * cols;
      dims = {{0, cols, 1}, {start, count, cols}};
    }
    return Halide::Buffer<>(Halide::Float(32), origin, int(dims.size()), dims.data());
  } else {
    int cols = int(p.shape[1]);
    dims = {{0, cols, 1}, {p.tokenRows ? pos : 0, p.tokenRows ? rows : int(p.shape[0]), cols}};
  }
  return Halide::Buffer<>(Halide::Float(32), data, int(dims.size()), dims.data());
}

Buffers makeBuffers(const Kernel &k, int pos, int rows, unsigned seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> uni(-1.0f, 1.0f);
  Buffers b;
  for (const KernelParam &p : k.params) {
    size_t n = 1;
    for (int64_t d : p.shape)
      n *= d == kDynamicRows ? rows : d;
    if (p.tokenRows && p.shape.size() == 2)
      n = size_t(rows) * p.shape[1];
    std::vector<float> v(n);
    for (float &x : v)
      x = p.isOutput ? 0.0f : uni(rng);
    b.data.push_back(std::move(v));
  }
  for (size_t i = 0; i < k.params.size(); ++i)
    b.views.push_back(view(k.params[i], b.data[i].data(), pos, rows));
  return b;
}

/// Runs `k` under schedule `set` and returns the contents of its outputs.
std::vector<std::vector<float>> run(const Kernel &k, const ScheduleSet &set, int pos, int rows) {
  Buffers b = makeBuffers(k, pos, rows, 7);
  KernelAlgorithm a = buildKernelAlgorithm(k);
  Halide::Target target = Halide::get_jit_target_from_environment();
  int lanes = target.has_feature(Halide::Target::AVX512) ? 16
              : target.has_feature(Halide::Target::AVX)  ? 8
                                                         : 4;
  ScheduleContext ctx{k, a, target, lanes};
  set.apply(ctx);
  int input = 0;
  std::vector<Halide::Buffer<>> outs;
  for (size_t i = 0; i < k.params.size(); ++i) {
    if (k.params[i].isOutput)
      outs.push_back(b.views[i]);
    else
      a.inputs[input++].set(b.views[i]);
  }
  Halide::Pipeline(a.outputs).realize(Halide::Realization(outs), target);
  std::vector<std::vector<float>> result;
  for (size_t i = 0; i < k.params.size(); ++i)
    if (k.params[i].isOutput)
      result.push_back(b.data[i]);
  return result;
}

void expectSchedulesAgree(const Kernel &k, int pos, int rows) {
  const ScheduleSet *plain = nullptr;
  for (const ScheduleSet &s : scheduleSets())
    if (s.name == "plain")
      plain = &s;
  ASSERT_NE(plain, nullptr);
  auto expected = run(k, *plain, pos, rows);
  float largest = 0.0f;
  for (auto &out : expected)
    for (float v : out)
      largest = std::max(largest, std::fabs(v));
  ASSERT_GT(largest, 0.0f) << "the plain schedule wrote nothing";
  for (const ScheduleSet &s : scheduleSets()) {
    auto got = run(k, s, pos, rows);
    for (size_t o = 0; o < got.size(); ++o)
      for (size_t i = 0; i < got[o].size(); ++i)
        ASSERT_NEAR(got[o][i], expected[o][i], 1e-5f * largest)
            << k.name << " schedule " << s.name << " output " << o << " element " << i;
  }
}

TEST(ScheduleEquivalence, AttentionInputDecode) { expectSchedulesAgree(attentionInput(1), 5, 1); }
TEST(ScheduleEquivalence, AttentionInputPrefill) {
  expectSchedulesAgree(attentionInput(kDynamicRows), 3, 13);
}
TEST(ScheduleEquivalence, AttentionDecode) { expectSchedulesAgree(attention(1), 21, 1); }
TEST(ScheduleEquivalence, AttentionPrefill) {
  expectSchedulesAgree(attention(kDynamicRows), 4, 11);
}
TEST(ScheduleEquivalence, FeedForwardDecode) {
  expectSchedulesAgree(feedForwardInput(1), 9, 1);
  expectSchedulesAgree(feedForwardOutput(1), 9, 1);
}
TEST(ScheduleEquivalence, FeedForwardPrefill) {
  expectSchedulesAgree(feedForwardInput(kDynamicRows), 2, 1);
  expectSchedulesAgree(feedForwardInput(kDynamicRows), 2, 19);
  expectSchedulesAgree(feedForwardOutput(kDynamicRows), 0, 7);
}

} // namespace
