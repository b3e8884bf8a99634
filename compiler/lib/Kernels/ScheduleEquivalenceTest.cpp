//===- ScheduleEquivalenceTest.cpp - Every schedule computes the same -----===//
//
// Builds the kernels a Llama layer and a GPT-2 model lower to (by hand, as
// the MLIR half would hand them over), runs each under every schedule set
// with Halide's JIT on the same random inputs, and checks the results agree
// with the plain schedule. Row windows start at a non-zero position, as in a
// real call. The GPT-2 ops are also checked on their own against values
// computed here in double.
//
//===----------------------------------------------------------------------===//
#include "KernelAlgorithm.h"
#include "OpenClKernelRun.h"
#include "Schedules/Schedules.h"
#include "tfm/Program/ScheduleNames.h"

#include "tfm/common/AmxTiles.h"
#include "tfm/common/BlockQuant.h"
#include "tfm/common/HalfFloat.h"

#include "Halide.h"

#include <gtest/gtest.h>

#include <cmath>
#if defined(__x86_64__)
#include <cpuid.h>
#endif
#include <cstdlib>
#include <cstring>
#include <functional>
#include <iostream>
#include <map>
#include <optional>
#include <random>


using namespace tfm;
using namespace tfm::kernels;

namespace {

constexpr int kDim = 64, kHeads = 4, kKvHeads = 2, kHeadDim = 16, kHidden = 96,
              kCtx = 96;
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

/// One layer's cache. The kernels below lay keys out transposed and values
/// in rows, as tfm-choose-cache-layouts does, so both layouts are run.
KernelParam cache(const std::string &name, CacheLayout layout, bool isOutput,
                  int64_t cols = kKvDim) {
  KernelParam p = param(name, {kCtx, cols}, false, isOutput);
  p.isCache = true;
  p.cacheLayout = layout;
  return p;
}

KernelOp op(OpAttrs attrs, std::vector<int> operands, std::vector<int64_t> shape) {
  KernelOp o;
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
              cache("kc", CacheLayout::Transposed, true),
              cache("vc", CacheLayout::Rows, true)};
  RopeAttrs rope{kHeadDim, kHeadDim, 10000.0, true, 1.0, {}};
  k.ops = {op(RmsNormAttrs{1e-5}, {0, 1}, {rows, kDim}),
           op(LinearAttrs{}, {8, 2}, {rows, kHeads * kHeadDim}),
           op(LinearAttrs{}, {8, 3}, {rows, kKvDim}),
           op(LinearAttrs{}, {8, 4}, {rows, kKvDim}),
           op(rope, {9}, {rows, kHeads * kHeadDim}),
           op(rope, {10}, {rows, kKvDim})};
  k.outputValue = {{5, 12}, {6, 13}, {7, 11}};
  return k;
}

/// Grouped-query attention: all keys at once, or in tiles of `keyTile`;
/// over the last `window` keys only when given.
Kernel attention(int64_t rows, int64_t keyTile = 0, int64_t window = 0) {
  Kernel k;
  k.name = "attention";
  k.params = {param("q", {rows, kHeads * kHeadDim}, true),
              cache("kc", CacheLayout::Transposed, false), cache("vc", CacheLayout::Rows, false),
              param("out", {rows, kHeads * kHeadDim}, true, true)};
  k.ops = {op(AttentionAttrs{kHeads, kKvHeads, kHeadDim, {}, keyTile, window}, {0, 1, 2},
              {rows, kHeads * kHeadDim})};
  k.outputValue = {{3, 4}};
  return k;
}

/// norm + gate/up + SiLU·mul.
Kernel feedForwardInput(int64_t rows) {
  Kernel k;
  k.name = "ffn_in";
  k.params = {param("x", {rows, kDim}, true), param("norm", {kDim}), param("wg", {kHidden, kDim}),
              param("wu", {kHidden, kDim}), param("h", {rows, kHidden}, true, true)};
  k.ops = {op(RmsNormAttrs{1e-5}, {0, 1}, {rows, kDim}),
           op(LinearAttrs{}, {5, 2}, {rows, kHidden}), op(LinearAttrs{}, {5, 3}, {rows, kHidden}),
           op(SiluAttrs{}, {6}, {rows, kHidden}), op(MulAttrs{}, {8, 7}, {rows, kHidden})};
  k.outputValue = {{4, 9}};
  return k;
}

/// Down projection + residual add.
Kernel feedForwardOutput(int64_t rows) {
  Kernel k;
  k.name = "ffn_out";
  k.params = {param("h", {rows, kHidden}, true), param("wd", {kDim, kHidden}),
              param("x", {rows, kDim}, true), param("y", {rows, kDim}, true, true)};
  k.ops = {op(LinearAttrs{}, {0, 1}, {rows, kDim}), op(AddAttrs{}, {2, 4}, {rows, kDim})};
  k.outputValue = {{3, 5}};
  return k;
}

// GPT-2 shapes: 5 heads of 16 (an odd head count), an odd vocabulary so that
// column tiles have tails, and as many positions as the context.
constexpr int kGDim = 80, kGHeads = 5, kGHeadDim = 16, kGHidden = 4 * kGDim, kGVocab = 1001;

/// Token embedding + learned positions.
Kernel gpt2Embedding(int64_t rows) {
  Kernel k;
  k.name = "gpt2_embed";
  KernelParam tokens = param("tokens", {rows}, true);
  tokens.type.plain = DType::I32;
  k.params = {param("wte", {kGVocab, kGDim}), tokens, param("wpe", {kCtx, kGDim}),
              param("x", {rows, kGDim}, true, true)};
  k.ops = {op(EmbeddingAttrs{1.0}, {0, 1}, {rows, kGDim}),
           op(AddPositionsAttrs{}, {4, 2}, {rows, kGDim})};
  k.outputValue = {{3, 5}};
  return k;
}

/// LayerNorm + fused QKV projection with bias, sliced into q, k and v; keys
/// and values stored in the caches.
Kernel gpt2AttentionInput(int64_t rows) {
  Kernel k;
  k.name = "gpt2_attn_in";
  k.params = {param("x", {rows, kGDim}, true),         param("norm_w", {kGDim}),
              param("norm_b", {kGDim}),                param("wqkv", {3 * kGDim, kGDim}),
              param("bqkv", {3 * kGDim}),              param("q", {rows, kGDim}, true, true),
              cache("kc", CacheLayout::Transposed, true, kGDim),
              cache("vc", CacheLayout::Rows, true, kGDim)};
  auto slice = [&](int64_t begin) { return op(SliceColsAttrs{begin, kGDim}, {9}, {rows, kGDim}); };
  k.ops = {op(LayerNormAttrs{1e-5}, {0, 1, 2}, {rows, kGDim}),
           op(LinearAttrs{}, {8, 3, 4}, {rows, 3 * kGDim}), slice(0), slice(kGDim),
           slice(2 * kGDim)};
  k.outputValue = {{5, 10}, {6, 11}, {7, 12}};
  return k;
}

/// Multi-head attention: as many kv heads as heads; all keys at once, or in
/// tiles of `keyTile`.
Kernel gpt2Attention(int64_t rows, int64_t keyTile = 0) {
  Kernel k;
  k.name = "gpt2_attention";
  k.params = {param("q", {rows, kGDim}, true), cache("kc", CacheLayout::Transposed, false, kGDim),
              cache("vc", CacheLayout::Rows, false, kGDim),
              param("out", {rows, kGDim}, true, true)};
  k.ops = {op(AttentionAttrs{kGHeads, kGHeads, kGHeadDim, {}, keyTile, 0}, {0, 1, 2},
              {rows, kGDim})};
  k.outputValue = {{3, 4}};
  return k;
}

/// A projection with bias + residual add (attention output, FFN down).
Kernel gpt2ProjectionResidual(int64_t rows, int64_t inDim) {
  Kernel k;
  k.name = "gpt2_proj_residual";
  k.params = {param("h", {rows, inDim}, true), param("w", {kGDim, inDim}), param("b", {kGDim}),
              param("x", {rows, kGDim}, true), param("y", {rows, kGDim}, true, true)};
  k.ops = {op(LinearAttrs{}, {0, 1, 2}, {rows, kGDim}), op(AddAttrs{}, {5, 3}, {rows, kGDim})};
  k.outputValue = {{4, 6}};
  return k;
}

/// LayerNorm + up projection with bias + GELU.
Kernel gpt2FeedForwardInput(int64_t rows, bool approximate) {
  Kernel k;
  k.name = "gpt2_ffn_in";
  k.params = {param("x", {rows, kGDim}, true), param("norm_w", {kGDim}), param("norm_b", {kGDim}),
              param("wup", {kGHidden, kGDim}), param("bup", {kGHidden}),
              param("h", {rows, kGHidden}, true, true)};
  k.ops = {op(LayerNormAttrs{1e-5}, {0, 1, 2}, {rows, kGDim}),
           op(LinearAttrs{}, {6, 3, 4}, {rows, kGHidden}),
           op(GeluAttrs{approximate}, {7}, {rows, kGHidden})};
  k.outputValue = {{5, 8}};
  return k;
}

/// Final LayerNorm + tied head: for the last row of the call (`lastRow`,
/// prefill and decode) or for every row (score).
Kernel gpt2Logits(int64_t rows, bool lastRow) {
  Kernel k;
  k.name = "gpt2_logits";
  int64_t outRows = lastRow ? 1 : rows;
  k.params = {param("x", {rows, kGDim}, true), param("norm_w", {kGDim}), param("norm_b", {kGDim}),
              param("wte", {kGVocab, kGDim}), param("logits", {outRows, kGVocab}, !lastRow, true)};
  if (lastRow) {
    k.ops = {op(LastRowAttrs{}, {0}, {1, kGDim}), op(LayerNormAttrs{1e-5}, {5, 1, 2}, {1, kGDim}),
             op(LinearAttrs{}, {6, 3}, {1, kGVocab})};
    for (KernelOp &o : k.ops)
      o.tokenRows = false;
    k.outputValue = {{4, 7}};
  } else {
    k.ops = {op(LayerNormAttrs{1e-5}, {0, 1, 2}, {rows, kGDim}),
             op(LinearAttrs{}, {5, 3}, {rows, kGVocab})};
    k.outputValue = {{4, 6}};
  }
  return k;
}

/// Memory for every parameter of a kernel, shared by all schedule runs.
struct Buffers {
  std::vector<std::vector<float>> data;   // f32 parameters
  std::vector<std::vector<int32_t>> ints; // i32 parameters (token ids)
  std::vector<std::vector<uint8_t>> bytes; // weights in another type: as stored
                                           // (`data` holds their values)
  std::vector<Halide::Buffer<>> views;
  int pos = 0;

  /// The memory behind parameter `i`'s view: its token ids, its stored
  /// bytes, or its f32 values.
  struct Bytes {
    uint8_t *data;
    size_t size;
  };
  Bytes backing(const KernelParam &p, size_t i) {
    auto bytesOf = [](auto &v) {
      return Bytes{reinterpret_cast<uint8_t *>(v.data()), v.size() * sizeof(v[0])};
    };
    if (p.type.plain == DType::I32)
      return bytesOf(ints[i]);
    if (!bytes[i].empty())
      return bytesOf(bytes[i]);
    return bytesOf(data[i]);
  }

  /// Element (col, row) of 2-D parameter `i`, rows counted from the window's
  /// first row; element col of a 1-D one.
  float at(size_t i, int row, int col) const {
    const Halide::Buffer<> &v = views[i];
    if (v.dimensions() == 1)
      return data[i][col];
    const float *host = reinterpret_cast<const float *>(v.raw_buffer()->host);
    return host[int64_t(col) * v.dim(0).stride() + int64_t(row) * v.dim(1).stride()];
  }
};

/// Row window of a parameter for a call of `rows` tokens at `pos`.
Halide::Buffer<> view(const KernelParam &p, void *data, int pos, int rows) {
  Halide::Type type = storedElementType(p.type);
  std::vector<halide_dimension_t> dims;
  if (p.shape.size() == 1) {
    dims.push_back({p.tokenRows ? pos : 0, p.tokenRows ? rows : int(p.shape[0]), 1});
  } else if (p.isCache) {
    int start = p.isOutput ? pos : 0, count = p.isOutput ? rows : pos + rows;
    int cols = int(p.shape[1]), ctx = int(p.shape[0]);
    float *origin = static_cast<float *>(data); // the host points at position `start`
    if (p.cacheLayout == CacheLayout::Transposed) {
      origin += start;
      dims = {{0, cols, ctx}, {start, count, 1}};
    } else {
      origin += int64_t(start) * cols;
      dims = {{0, cols, 1}, {start, count, cols}};
    }
    return Halide::Buffer<>(type, origin, int(dims.size()), dims.data());
  } else if (!p.tokenRows && p.isOutput && p.shape[0] == 1) {
    // One row that is not a token row: the last row of the call.
    dims = {{0, int(p.shape[1]), 1}, {pos + rows - 1, 1, int(p.shape[1])}};
  } else {
    int cols = int(p.type.storedRowLength(p.shape[1]));
    dims = {{0, cols, 1}, {p.tokenRows ? pos : 0, p.tokenRows ? rows : int(p.shape[0]), cols}};
  }
  return Halide::Buffer<>(type, data, int(dims.size()), dims.data());
}

/// A weight stored in another type than f32: `values` become what that
/// type holds (quantized, rounded), `bytes` how it stores them.
void encodeWeight(const KernelParam &p, std::vector<float> &values, std::vector<uint8_t> &bytes) {
  const int64_t n = p.shape.back(), rows = int64_t(values.size()) / n;
  const int64_t rowBytes = p.type.bytes(n);
  bytes.resize(rows * rowBytes);
  for (int64_t r = 0; r < rows; ++r) {
    float *row = values.data() + r * n;
    uint8_t *out = bytes.data() + r * rowBytes;
    if (p.type.block) {
      quantizeRow(*p.type.block, row, n, out);
      dequantizeRow(*p.type.block, out, n, row);
      continue;
    }
    for (int64_t i = 0; i < n; ++i) {
      bool half = p.type.plain == DType::F16;
      uint16_t h = half ? toHalf(row[i]) : toBfloat16(row[i]);
      std::memcpy(out + 2 * i, &h, 2);
      row[i] = half ? halfToFloat(h) : bfloat16ToFloat(h);
    }
  }
}

/// Lets a test replace the random contents of the inputs.
using Fill = std::function<void(const Kernel &, Buffers &)>;

Buffers makeBuffers(const Kernel &k, int pos, int rows, unsigned seed, const Fill &fill) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> uni(-1.0f, 1.0f);
  Buffers b;
  b.pos = pos;
  for (const KernelParam &p : k.params) {
    size_t n = 1;
    for (int64_t d : p.shape)
      n *= d == kDynamicRows ? rows : d;
    if (p.tokenRows && p.shape.size() == 2)
      n = size_t(rows) * p.shape[1];
    std::vector<float> v;
    std::vector<int32_t> ids;
    if (p.type.plain == DType::I32) {
      for (size_t i = 0; i < n; ++i)
        ids.push_back(int32_t(rng() % kGVocab));
    } else {
      v.resize(n);
      for (float &x : v)
        x = p.isOutput ? 0.0f : uni(rng);
    }
    std::vector<uint8_t> bytes;
    if (p.type.plain != DType::I32 && p.type != ElementEncoding{})
      encodeWeight(p, v, bytes);
    b.data.push_back(std::move(v));
    b.ints.push_back(std::move(ids));
    b.bytes.push_back(std::move(bytes));
  }
  for (size_t i = 0; i < k.params.size(); ++i)
    b.views.push_back(view(k.params[i], b.backing(k.params[i], i).data, pos, rows));
  if (fill)
    fill(k, b);
  return b;
}

/// This CPU as Halide's JIT should see it. Halide 14 calls every CPU with
/// AVX-512 BF16 and VNNI a Sapphire Rapids, and its JIT (LLVM 14, for that
/// CPU by name) then emits AVX512-FP16 instructions (vmovw) that AMD's Zen 4
/// lacks; tfmc's kernels are compiled by LLVM 22 for the named features
/// alone (tfm/Codegen/KernelObject.h). The JIT keeps the feature only where
/// AMX says the CPU is a Sapphire Rapids.
Halide::Target jitTarget() {
  Halide::Target target = Halide::get_jit_target_from_environment();
#if defined(__x86_64__)
  unsigned eax = 0, ebx = 0, ecx = 0, edx = 0;
  bool amxTile = __get_cpuid_count(7, 0, &eax, &ebx, &ecx, &edx) && (edx & (1u << 24));
  if (!amxTile)
    target = target.without_feature(Halide::Target::AVX512_SapphireRapids);
#endif
  return target;
}

/// The AMX tiles this CPU multiplies (cpuid: AMX-TILE, with AMX-INT8 and
/// AMX-BF16) where Linux lets this process use them, as
/// tfm/common/Targets.h's amx_int8 and amx_bf16 ask.
AmxTiles usableAmxTiles() {
  AmxTiles amx;
#if defined(__x86_64__)
  unsigned eax = 0, ebx = 0, ecx = 0, edx = 0;
  if (__get_cpuid_count(7, 0, &eax, &ebx, &ecx, &edx) && (edx & (1u << 24)) &&
      requestAmxTiles()) {
    amx.int8 = edx & (1u << 25);
    amx.bf16 = edx & (1u << 22);
  }
#endif
  return amx;
}

/// Why GPU schedule sets cannot run `k` here, or nothing when they can:
/// 8-bit activations are a CPU form, which tfmc refuses for GPU targets
/// (ExtractProgram.cpp); and without an OpenCL loader no GPU kernel runs,
/// which under CI=true is a failure (tools/install-deps.sh installs POCL).
std::optional<std::string> whyGpuCannotRun(const Kernel &k) {
  for (const KernelOp &op : k.ops)
    if (const auto *linear = std::get_if<LinearAttrs>(&op.attrs))
      if (linear->activationBlock > 0)
        return "8-bit activations are a CPU form, refused for GPU targets";
  if (openClLoaderPresent())
    return std::nullopt;
  std::string missing = "no OpenCL loader (libOpenCL.so): install pocl-opencl-icd and "
                        "ocl-icd-opencl-dev (tools/install-deps.sh)";
  const char *ci = std::getenv("CI");
  if (ci && std::string(ci) == "true")
    ADD_FAILURE() << missing;
  return missing;
}

/// Runs the scheduled `k` on OpenCL (OpenClKernelRun.h), its outputs
/// written back into `b`.
void runOnOpenCl(const Kernel &k, ScheduledKernel &scheduled, const Halide::Target &target,
                 Buffers &b) {
  // Halide's calling convention: inputs, then outputs, in parameter order;
  // the types the kernel was built with (a GPU's hold f16 and bf16 as u16
  // bits: SixteenBitFloats).
  std::vector<KernelArgument> arguments;
  size_t input = 0, output = 0;
  for (bool outputs : {false, true})
    for (size_t i = 0; i < k.params.size(); ++i) {
      if (k.params[i].isOutput != outputs)
        continue;
      Halide::Type type = outputs ? scheduled.algorithm.outputs[output++].output_types()[0]
                                  : scheduled.algorithm.inputs[input++].type();
      Buffers::Bytes backing = b.backing(k.params[i], i);
      arguments.push_back(
          {type, b.views[i].raw_buffer(), backing.data, backing.size, outputs});
    }
  std::vector<Halide::Argument> inputs(scheduled.algorithm.inputs.begin(),
                                       scheduled.algorithm.inputs.end());
  tfm::kernels::runOnOpenCl(scheduled.pipeline, inputs, target, arguments);
}

/// Runs `k` under schedule `set` and returns every parameter's contents;
/// nothing, with a failure naming the kernel and schedule, if Halide refuses
/// the schedule, so that every other schedule is still checked. CPU sets
/// run in Halide's JIT; GPU sets on OpenCL (runOnOpenCl).
std::optional<Buffers> run(const Kernel &k, const ScheduleSet &set, int pos, int rows,
                           const Fill &fill = {}, AmxTiles amx = {}) {
  Buffers b = makeBuffers(k, pos, rows, 7, fill);
  bool gpu = set.device != ScheduleDevice::Cpu;
  Halide::Target target = jitTarget();
  if (gpu)
    target = target.without_feature(Halide::Target::JIT)
                 .with_feature(Halide::Target::OpenCL)
                 .with_feature(Halide::Target::CLDoubles);
  try {
    ScheduledKernel scheduled = scheduleKernel(set, k, target, amx);
    if (gpu) {
      runOnOpenCl(k, scheduled, target, b);
      return b;
    }
    int input = 0;
    std::vector<Halide::Buffer<>> outs;
    for (size_t i = 0; i < k.params.size(); ++i) {
      if (k.params[i].isOutput)
        outs.push_back(b.views[i]);
      else
        scheduled.algorithm.inputs[input++].set(b.views[i]);
    }
    scheduled.pipeline.realize(Halide::Realization(outs), target);
  } catch (const Halide::Error &e) {
    ADD_FAILURE() << k.name << " schedule " << set.name << ": " << e.what();
    return std::nullopt;
  } catch (const std::exception &e) {
    ADD_FAILURE() << k.name << " schedule " << set.name << ": " << e.what();
    return std::nullopt;
  }
  return b;
}

/// The schedules only Halide's CUDA back end compiles (gpu-warp's warp
/// shuffles): no OpenCL device runs them, so no case checks them here.
/// Their PTX is assembled by e2e_cuda_codegen_* instead.
std::string cudaOnlySchedules() {
  std::string names;
  for (const ScheduleSet &s : scheduleSets())
    if (s.device == ScheduleDevice::Cuda)
      names += std::string(names.empty() ? "" : ", ") + s.name;
  return names;
}

/// The schedule sets this run checks: the CPU's, or with
/// TFM_SCHEDULE_DEVICE=gpu the GPU's that OpenCL runs (ctest runs each case
/// both ways, so that the GPU cases share CI's cores with the CPU's).
std::vector<ScheduleSet> schedulesUnderTest(const Kernel &k) {
  const char *device = std::getenv("TFM_SCHEDULE_DEVICE");
  bool gpu = device && std::string(device) == "gpu";
  if (gpu)
    if (std::optional<std::string> why = whyGpuCannotRun(k)) {
      [&] { GTEST_SKIP() << *why; }();
      return {};
    }
  if (gpu)
    std::cout << "exempt, CUDA only (e2e_cuda_codegen_* assembles them): " << cudaOnlySchedules()
              << "\n";
  std::vector<ScheduleSet> sets;
  for (const ScheduleSet &s : scheduleSets())
    if (s.device == (gpu ? ScheduleDevice::Gpu : ScheduleDevice::Cpu))
      sets.push_back(s);
  return sets;
}

const ScheduleSet &plainSchedule() {
  if (const ScheduleSet *plain = findScheduleSet("plain"))
    return *plain;
  throw std::runtime_error("no plain schedule set");
}

/// Every schedule set's `k` against the plain schedule's `reference` (by
/// default `k` itself; another algorithm of the same op, with the same
/// parameters, otherwise).
void expectSchedulesAgree(const Kernel &k, int pos, int rows, const Kernel *reference = nullptr) {
  std::optional<Buffers> plain = run(reference ? *reference : k, plainSchedule(), pos, rows);
  ASSERT_TRUE(plain);
  const Buffers &expected = *plain;
  float largest = 0.0f;
  for (size_t i = 0; i < k.params.size(); ++i)
    if (k.params[i].isOutput)
      for (float v : expected.data[i])
        largest = std::max(largest, std::fabs(v));
  ASSERT_GT(largest, 0.0f) << "the plain schedule wrote nothing";
  for (const ScheduleSet &s : schedulesUnderTest(k)) {
    std::optional<Buffers> got = run(k, s, pos, rows);
    if (!got)
      continue;
    for (size_t o = 0; o < k.params.size(); ++o) {
      if (!k.params[o].isOutput)
        continue;
      for (size_t i = 0; i < got->data[o].size(); ++i)
        ASSERT_NEAR(got->data[o][i], expected.data[o][i], 1e-5f * largest)
            << k.name << " schedule " << s.name << " output " << k.params[o].name
            << " element " << i;
    }
  }
}

/// Every schedule set's `k` against the plain schedule's `reference`, the
/// same op by another algorithm.
void expectAlgorithmsAgree(const Kernel &k, int pos, int rows, const Kernel &reference) {
  expectSchedulesAgree(k, pos, rows, &reference);
}

/// The value of output parameter `out` at (row, col) computed in double
/// from the inputs; rows count from the window's first row.
using Reference = std::function<double(const Buffers &, int row, int col)>;

/// Runs a kernel with one 2-D output under every schedule set and checks
/// every element against `reference` within `rel` relative plus `abs`
/// absolute error (sums that cancel leave an error relative to their terms),
/// built for a target with the AMX tiles `amx`.
void expectMatchesReference(const Kernel &k, int pos, int rows, const Reference &reference,
                            double rel, double abs, const Fill &fill = {},
                            AmxTiles amx = {}) {
  int out = -1;
  for (size_t i = 0; i < k.params.size(); ++i)
    if (k.params[i].isOutput)
      out = int(i);
  ASSERT_GE(out, 0);
  const KernelParam &p = k.params[out];
  int outRows = p.tokenRows ? rows : int(p.shape[0]), cols = int(p.shape[1]);
  for (const ScheduleSet &s : schedulesUnderTest(k)) {
    std::optional<Buffers> got = run(k, s, pos, rows, fill, amx);
    if (!got)
      continue;
    const Buffers &b = *got;
    for (int r = 0; r < outRows; ++r)
      for (int c = 0; c < cols; ++c) {
        double want = reference(b, r, c), got = b.at(out, r, c);
        std::string where = k.name + " schedule " + s.name + " row " + std::to_string(r) +
                            " col " + std::to_string(c);
        if (std::isnan(want))
          ASSERT_TRUE(std::isnan(got)) << where << ": " << got;
        else if (std::isinf(want))
          ASSERT_EQ(got, want) << where;
        else
          ASSERT_NEAR(got, want, rel * std::fabs(want) + abs) << where;
      }
  }
}

/// A kernel of one op reading the given parameters.
Kernel single(OpAttrs attrs, std::vector<KernelParam> inputs, int64_t rows, int64_t cols) {
  Kernel k;
  k.name = opKindName(kindOf(attrs));
  k.params = std::move(inputs);
  std::vector<int> operands;
  for (size_t i = 0; i < k.params.size(); ++i)
    operands.push_back(int(i));
  k.params.push_back(param("out", {rows, cols}, true, true));
  k.ops = {op(std::move(attrs), operands, {rows, cols})};
  k.outputValue = {{int(k.params.size()) - 1, int(k.params.size())}};
  return k;
}

// A kernel may name any schedule of the one list; the generator must have it.
TEST(ScheduleSets, EveryScheduleNameHasOne) {
  for (const ScheduleName &s : kScheduleNames)
    EXPECT_NE(findScheduleSet(s.name), nullptr) << s.name;
  EXPECT_NE(findScheduleSet(kDefaultSchedule), nullptr);
}

TEST(ScheduleEquivalence, AttentionInputDecode) { expectSchedulesAgree(attentionInput(1), 5, 1); }
TEST(ScheduleEquivalence, AttentionInputPrefill) {
  expectSchedulesAgree(attentionInput(kDynamicRows), 3, 13);
  expectSchedulesAgree(attentionInput(kDynamicRows), 3, 70); // a full row tile and a tail
}
TEST(ScheduleEquivalence, AttentionDecode) { expectSchedulesAgree(attention(1), 21, 1); }
TEST(ScheduleEquivalence, AttentionPrefill) {
  expectSchedulesAgree(attention(kDynamicRows), 4, 11);
  expectSchedulesAgree(attention(kDynamicRows), 0, 70);
}
// FlashAttention's key tiles against all keys at once: tiles of 16 over
// windows that end inside a tile, on a tile's last key, and in the first
// tile; prefill blocks that span tiles.
TEST(ScheduleEquivalence, AttentionKeyTilesDecode) {
  for (int pos : {0, 15, 21, 63})
    expectAlgorithmsAgree(attention(1, 16), pos, 1, attention(1));
}
TEST(ScheduleEquivalence, AttentionKeyTilesPrefill) {
  expectAlgorithmsAgree(attention(kDynamicRows, 16), 4, 11, attention(kDynamicRows));
  expectAlgorithmsAgree(attention(kDynamicRows, 16), 0, 70, attention(kDynamicRows));
}
// A sliding window: the fast schedules' prefill against the plain one, a
// window of 8 from rows before it and past it; key tiles of 16 against all
// keys at once, a window of 20 over three tiles. (The reference logits hold
// both to the oracle's masking.)
TEST(ScheduleEquivalence, AttentionSlidingWindow) {
  expectSchedulesAgree(attention(kDynamicRows, 0, 8), 4, 30);
  expectAlgorithmsAgree(attention(1, 16, 20), 40, 1, attention(1, 0, 20));
}
TEST(ScheduleEquivalence, Gpt2AttentionKeyTiles) {
  expectAlgorithmsAgree(gpt2Attention(1, 8), 30, 1, gpt2Attention(1));
  expectAlgorithmsAgree(gpt2Attention(kDynamicRows, 8), 5, 17, gpt2Attention(kDynamicRows));
}
TEST(ScheduleEquivalence, FeedForwardDecode) {
  expectSchedulesAgree(feedForwardInput(1), 9, 1);
  expectSchedulesAgree(feedForwardOutput(1), 9, 1);
}
TEST(ScheduleEquivalence, FeedForwardPrefill) {
  expectSchedulesAgree(feedForwardInput(kDynamicRows), 2, 1);
  expectSchedulesAgree(feedForwardInput(kDynamicRows), 2, 19);
  expectSchedulesAgree(feedForwardOutput(kDynamicRows), 0, 7);
  expectSchedulesAgree(feedForwardInput(kDynamicRows), 5, 70);
  expectSchedulesAgree(feedForwardOutput(kDynamicRows), 5, 70);
}

TEST(ScheduleEquivalence, Gpt2EmbeddingDecode) { expectSchedulesAgree(gpt2Embedding(1), 17, 1); }
TEST(ScheduleEquivalence, Gpt2EmbeddingPrefill) {
  expectSchedulesAgree(gpt2Embedding(kDynamicRows), 6, 21);
}
TEST(ScheduleEquivalence, Gpt2AttentionInputDecode) {
  expectSchedulesAgree(gpt2AttentionInput(1), 11, 1);
}
TEST(ScheduleEquivalence, Gpt2AttentionInputPrefill) {
  expectSchedulesAgree(gpt2AttentionInput(kDynamicRows), 3, 13);
  expectSchedulesAgree(gpt2AttentionInput(kDynamicRows), 3, 70);
}
TEST(ScheduleEquivalence, Gpt2AttentionDecode) { expectSchedulesAgree(gpt2Attention(1), 30, 1); }
TEST(ScheduleEquivalence, Gpt2AttentionPrefill) {
  expectSchedulesAgree(gpt2Attention(kDynamicRows), 5, 17);
}
TEST(ScheduleEquivalence, Gpt2ProjectionsDecode) {
  expectSchedulesAgree(gpt2ProjectionResidual(1, kGDim), 8, 1);
  expectSchedulesAgree(gpt2ProjectionResidual(1, kGHidden), 8, 1);
  expectSchedulesAgree(gpt2FeedForwardInput(1, true), 8, 1);
  expectSchedulesAgree(gpt2FeedForwardInput(1, false), 8, 1);
}
TEST(ScheduleEquivalence, Gpt2ProjectionsPrefill) {
  expectSchedulesAgree(gpt2ProjectionResidual(kDynamicRows, kGDim), 4, 13);
  expectSchedulesAgree(gpt2ProjectionResidual(kDynamicRows, kGHidden), 4, 1);
  expectSchedulesAgree(gpt2FeedForwardInput(kDynamicRows, true), 1, 19);
  expectSchedulesAgree(gpt2FeedForwardInput(kDynamicRows, false), 1, 19);
  expectSchedulesAgree(gpt2ProjectionResidual(kDynamicRows, kGHidden), 4, 70);
  expectSchedulesAgree(gpt2FeedForwardInput(kDynamicRows, true), 4, 70);
}
TEST(ScheduleEquivalence, Gpt2LogitsDecode) { expectSchedulesAgree(gpt2Logits(1, false), 12, 1); }
TEST(ScheduleEquivalence, Gpt2LogitsPrefill) {
  expectSchedulesAgree(gpt2Logits(kDynamicRows, true), 3, 1);
  expectSchedulesAgree(gpt2Logits(kDynamicRows, true), 3, 14);
}
TEST(ScheduleEquivalence, Gpt2LogitsScore) {
  expectSchedulesAgree(gpt2Logits(kDynamicRows, false), 2, 1);
  expectSchedulesAgree(gpt2Logits(kDynamicRows, false), 2, 15);
  expectSchedulesAgree(gpt2Logits(kDynamicRows, false), 2, 66);
}

// Each GPT-2 op against its definition, in double.

TEST(Gpt2Ops, LayerNorm) {
  constexpr int kD = 24;
  Kernel k = single(LayerNormAttrs{1e-5},
                    {param("x", {kDynamicRows, kD}, true), param("w", {kD}), param("b", {kD})},
                    kDynamicRows, kD);
  // Rows with a large mean against their spread test the variance.
  Fill offset = [](const Kernel &, Buffers &b) {
    for (size_t i = 0; i < b.data[0].size(); ++i)
      b.data[0][i] += float(i / kD) * 4.0f;
  };
  Reference ref = [](const Buffers &b, int r, int c) {
    double mean = 0, var = 0;
    for (int j = 0; j < kD; ++j)
      mean += b.at(0, r, j);
    mean /= kD;
    for (int j = 0; j < kD; ++j)
      var += (b.at(0, r, j) - mean) * (b.at(0, r, j) - mean);
    var /= kD;
    return (b.at(0, r, c) - mean) / std::sqrt(var + 1e-5) * b.at(1, 0, c) + b.at(2, 0, c);
  };
  expectMatchesReference(k, 5, 6, ref, 1e-6, 1e-5, offset);
}

/// x from -6 to 6 over a row window, so GELU is seen in its tails too.
Fill ramp = [](const Kernel &, Buffers &b) {
  size_t n = b.data[0].size();
  for (size_t i = 0; i < n; ++i)
    b.data[0][i] = -6.0f + 12.0f * float(i) / float(n - 1);
};

TEST(Gpt2Ops, GeluTanh) {
  Kernel k = single(GeluAttrs{true}, {param("x", {kDynamicRows, 100}, true)}, kDynamicRows, 100);
  Reference ref = [](const Buffers &b, int r, int c) {
    double x = b.at(0, r, c);
    return 0.5 * x * (1.0 + std::tanh(std::sqrt(2.0 / M_PI) * (x + 0.044715 * x * x * x)));
  };
  expectMatchesReference(k, 3, 7, ref, 1e-6, 1e-7, ramp);
}

TEST(Gpt2Ops, GeluExact) {
  Kernel k = single(GeluAttrs{false}, {param("x", {kDynamicRows, 100}, true)}, kDynamicRows, 100);
  Reference ref = [](const Buffers &b, int r, int c) {
    double x = b.at(0, r, c);
    return 0.5 * x * (1.0 + std::erf(x / std::sqrt(2.0)));
  };
  expectMatchesReference(k, 3, 7, ref, 1e-6, 1e-7, ramp);
}

TEST(Gpt2Ops, ErfWithinAnUlp) {
  // Every float step of 2^-12 in [-8, 8], and powers of two down to 2^-40.
  std::vector<float> xs;
  for (int i = -8 * 4096; i <= 8 * 4096; ++i)
    xs.push_back(float(i) / 4096.0f);
  for (int e = -40; e <= 0; ++e)
    xs.push_back(std::ldexp(1.0f, e) * 1.1f);
  Halide::Buffer<float> in(int(xs.size()));
  for (size_t i = 0; i < xs.size(); ++i)
    in(int(i)) = xs[i];
  Halide::Func f;
  Halide::Var i;
  f(i) = erfFloat(in(i));
  f.vectorize(i, 8);
  Halide::Buffer<float> out = f.realize({int(xs.size())});
  for (size_t j = 0; j < xs.size(); ++j) {
    double want = std::erf(double(xs[j]));
    ASSERT_NEAR(out(int(j)), want, 1.2e-7 * std::fabs(want)) << "erf(" << xs[j] << ")";
  }
}

// RoPE's and the sinusoid's angles reach position times 1 radian: every
// position to 2^17 (Llama 3's context) and fractions between, against libm
// in long double, within the one rounding to float.
TEST(Gpt2Ops, SinCosRoundOnceToFloat) {
  std::vector<double> angles;
  for (int i = 0; i <= (1 << 17); i += 7)
    angles.push_back(double(i));
  std::mt19937 rng(5);
  std::uniform_real_distribution<double> any(-2e5, 2e5);
  for (int i = 0; i < 20000; ++i)
    angles.push_back(any(rng) * std::pow(10.0, -(i % 6)));
  Halide::Buffer<double> in(int(angles.size()));
  for (size_t i = 0; i < angles.size(); ++i)
    in(int(i)) = angles[i];
  Halide::Func f;
  Halide::Var i;
  auto [sine, cosine] = sinCosFloat(in(i));
  f(i) = Halide::Tuple(sine, cosine);
  Halide::Realization out = f.realize({int(angles.size())});
  Halide::Buffer<float> sines = out[0], cosines = out[1];
  for (size_t j = 0; j < angles.size(); ++j) {
    long double a = angles[j];
    // Within half a float ulp of the exact value, plus the series' 3e-14.
    auto bound = [](long double want) {
      return std::fabs(double(want)) * 6.0e-8 + 1e-13;
    };
    ASSERT_NEAR(sines(int(j)), double(sinl(a)), bound(sinl(a))) << "sin(" << angles[j] << ")";
    ASSERT_NEAR(cosines(int(j)), double(cosl(a)), bound(cosl(a))) << "cos(" << angles[j] << ")";
  }
}

TEST(Gpt2Ops, AddPositions) {
  constexpr int kD = 12, kPositions = 32;
  Kernel k = single(AddPositionsAttrs{},
                    {param("x", {kDynamicRows, kD}, true), param("table", {kPositions, kD})},
                    kDynamicRows, kD);
  Reference ref = [](const Buffers &b, int r, int c) {
    return double(b.at(0, r, c)) + b.at(1, b.pos + r, c); // row r is position pos + r
  };
  expectMatchesReference(k, 9, 5, ref, 1e-7, 0.0);
  expectMatchesReference(single(AddPositionsAttrs{},
                                {param("x", {1, kD}, true), param("table", {kPositions, kD})}, 1,
                                kD),
                         kPositions - 1, 1, ref, 1e-7, 0.0);
}

TEST(Gpt2Ops, SliceCols) {
  Kernel k = single(SliceColsAttrs{11, 7}, {param("x", {kDynamicRows, 30}, true)}, kDynamicRows, 7);
  Reference ref = [](const Buffers &b, int r, int c) { return b.at(0, r, c + 11); };
  expectMatchesReference(k, 2, 4, ref, 0.0, 0.0);
}

TEST(Gpt2Ops, LinearBias) {
  constexpr int kK = 20, kN = 37;
  for (int64_t rows : {int64_t(1), kDynamicRows}) {
    Kernel k = single(LinearAttrs{},
                      {param("x", {rows, kK}, true), param("w", {kN, kK}), param("b", {kN})},
                      rows, kN);
    Reference ref = [](const Buffers &b, int r, int c) {
      double sum = b.at(2, 0, c);
      for (int j = 0; j < kK; ++j)
        sum += double(b.at(0, r, j)) * b.at(1, c, j);
      return sum;
    };
    expectMatchesReference(k, 4, rows == 1 ? 1 : 9, ref, 1e-6, 1e-6);
  }
}

// Weights read in the types weight files store, decoded inside the kernel:
// every schedule gives x @ W^T of the values the type holds (decoded here
// by tfm/common/BlockQuant.cpp, independently of the kernel's decoder).
const char *const kWeightTypes[] = {"f16", "bf16", "q8_0", "q4_0", "q4_k", "q5_k", "q6_k"};

// Rows of 512 values are two k-quant blocks; decode also reads rows of 2304
// (72 sub-blocks of 32), past the length at which the fast schedule decodes
// the sub-blocks' scales inside the dot product instead of as vectors first.
TEST(TypedWeights, LinearDecodesEveryType) {
  constexpr int kN = 40;
  struct Shape {
    int64_t rows, rowLength;
  };
  for (const char *name : kWeightTypes)
    for (Shape shape : {Shape{1, 512}, Shape{1, 2304}, Shape{kDynamicRows, 512}}) {
      int64_t kK = shape.rowLength;
      KernelParam w = param("w", {kN, kK});
      w.type = *parseElementEncoding(name);
      Kernel k = single(LinearAttrs{}, {param("x", {shape.rows, kK}, true), w}, shape.rows, kN);
      Reference ref = [kK](const Buffers &b, int r, int c) {
        double sum = 0;
        for (int j = 0; j < kK; ++j)
          sum += double(b.at(0, r, j)) * b.data[1][c * kK + j];
        return sum;
      };
      SCOPED_TRACE(std::string(name) + " row length " + std::to_string(kK));
      expectMatchesReference(k, 3, shape.rows == 1 ? 1 : 70, ref, 1e-5, 1e-5);
    }
}

// Integer sub-block scales are stored by the k-quants alone, and offsets by
// q4_K and q5_K alone: an algorithm asking another format for them is a
// compiler defect, refused with the weight's name instead of reading level
// bytes as scales.
TEST(TypedWeights, SubBlockScalesOnlyWhereStored) {
  Halide::ImageParam image(Halide::UInt(8), 2, "w");
  Halide::Var b("b"), s("s"), n("n");
  auto refusal = [&](const char *type, int i) -> std::string {
    StoredWeight weight(image, image, *parseElementEncoding(type), 512);
    try {
      weight.blockScale(i, b, n);
      weight.subBlockScale(i, b, s, n);
    } catch (const std::logic_error &e) {
      return e.what();
    }
    return "";
  };
  for (const char *type : {"q4_k", "q5_k", "q6_k"})
    EXPECT_EQ(refusal(type, 0), "") << type;
  EXPECT_EQ(refusal("q4_k", 1), "");
  EXPECT_EQ(refusal("q5_k", 1), "");
  EXPECT_EQ(refusal("q6_k", 1), "weight w: q6_k has no sub-block offsets");
  EXPECT_EQ(refusal("q8_0", 0), "weight w: q8_0 has no sub-block scales");
  EXPECT_EQ(refusal("f16", 0), "weight w: a plain type has no sub-block scales");
}

// 8-bit activations (activation_block 32, or a k-quant's 256): every
// schedule gives the sum of the weight's values times each input value
// rounded to its block's grid, scale = largest |x| of the block / 127, as
// the op defines it; the blocks are computed here in float as the kernel
// does (x * (1 / scale), rounded to nearest even), so that no value lands
// on the other side of a tie. With 256, one row sums a block's units in
// integers (RowBlockSums, IntegerProduct.h) on targets without VNNI.
void expectIntegerActivationsMatchTheirDefinition(AmxTiles amx) {
  constexpr int kN = 40, kK = 512;
  struct Case {
    const char *name;
    int64_t block;
  };
  for (Case weight : {Case{"q8_0", 32}, Case{"q4_0", 32}, Case{"q4_k", 32}, Case{"q5_k", 32},
                      Case{"q6_k", 32}, Case{"q4_k", 256}, Case{"q5_k", 256}, Case{"q6_k", 256}})
    for (int64_t rows : {int64_t(1), kDynamicRows}) {
      KernelParam w = param("w", {kN, kK});
      w.type = *parseElementEncoding(weight.name);
      Kernel k = single(LinearAttrs{weight.block}, {param("x", {rows, kK}, true), w}, rows, kN);
      int block = static_cast<int>(weight.block);
      Reference ref = [block](const Buffers &b, int r, int c) {
        double sum = 0;
        for (int first = 0; first < kK; first += block) {
          float largest = 0.0f;
          for (int j = first; j < first + block; ++j)
            largest = std::max(largest, std::fabs(b.at(0, r, j)));
          float scale = largest / 127.0f, inverse = scale > 0.0f ? 1.0f / scale : 0.0f;
          for (int j = first; j < first + block; ++j) {
            float level = std::nearbyint(b.at(0, r, j) * inverse);
            sum += double(scale) * std::clamp(level, -127.0f, 127.0f) * b.data[1][c * kK + j];
          }
        }
        return sum;
      };
      SCOPED_TRACE(std::string(weight.name) + " in blocks of " + std::to_string(block) +
                   (rows == 1 ? ", one row" : ", rows"));
      expectMatchesReference(k, 3, rows == 1 ? 1 : 70, ref, 1e-5, 1e-5, {}, amx);
    }
}

TEST(TypedWeights, IntegerActivationsMatchTheirDefinition) {
  expectIntegerActivationsMatchTheirDefinition({});
}

// The same, built for AMX: every format's prefill products multiply signed
// levels in tiles (tdpbssd; q8_0's read in place, the others' unpacked),
// 70 rows and 40 columns leaving partial tiles.
TEST(TypedWeights, IntegerActivationsMatchTheirDefinitionInAmxTiles) {
  if (!usableAmxTiles().int8)
    GTEST_SKIP() << "this CPU has no AMX int8 tiles, or Linux refused this process their use";
  expectIntegerActivationsMatchTheirDefinition({/*int8=*/true, /*bf16=*/false});
}

// bf16 inputs (bf16_input): every schedule gives the sum of the bf16
// weights times each input value rounded to bf16 (to nearest even), in
// double here. Rows of 512 by 40 columns (partial tiles), and of 80 (40
// pairs: blocks of 10 pairs) by 8 columns (fewer than a tile).
void expectBf16InputsMatchTheirDefinition(AmxTiles amx) {
  struct Shape {
    int rowLength, cols;
  };
  for (Shape shape : {Shape{512, 40}, Shape{80, 8}})
    for (int64_t rows : {int64_t(1), kDynamicRows}) {
      int kK = shape.rowLength, kN = shape.cols;
      KernelParam w = param("w", {kN, kK});
      w.type = *parseElementEncoding("bf16");
      LinearAttrs attrs{};
      attrs.bf16Input = true;
      Kernel k = single(attrs, {param("x", {rows, kK}, true), w}, rows, kN);
      Reference ref = [kK](const Buffers &b, int r, int c) {
        double sum = 0;
        for (int j = 0; j < kK; ++j)
          sum += double(bfloat16ToFloat(toBfloat16(b.at(0, r, j)))) * b.data[1][c * kK + j];
        return sum;
      };
      SCOPED_TRACE("row length " + std::to_string(kK) + ", " + std::to_string(kN) + " columns" +
                   (rows == 1 ? ", one row" : ", rows"));
      expectMatchesReference(k, 3, rows == 1 ? 1 : 70, ref, 1e-5, 1e-5, {}, amx);
    }
}

TEST(TypedWeights, Bf16InputsMatchTheirDefinition) { expectBf16InputsMatchTheirDefinition({}); }

// The same, built for AMX's bf16 tiles: prefill's products multiply pairs
// in tiles (tdpbf16ps), 70 rows and 40 columns leaving partial tiles.
TEST(TypedWeights, Bf16InputsMatchTheirDefinitionInAmxTiles) {
  if (!usableAmxTiles().bf16)
    GTEST_SKIP() << "this CPU has no AMX bf16 tiles, or Linux refused this process their use";
  expectBf16InputsMatchTheirDefinition({/*int8=*/false, /*bf16=*/true});
}

TEST(TypedWeights, EmbeddingDecodesRows) {
  constexpr int kWidth = 256;
  for (const char *name : kWeightTypes) {
    KernelParam table = param("table", {kGVocab, kWidth});
    table.type = *parseElementEncoding(name);
    KernelParam tokens = param("tokens", {kDynamicRows}, true);
    tokens.type.plain = DType::I32;
    Kernel k = single(EmbeddingAttrs{1.0}, {table, tokens}, kDynamicRows, kWidth);
    Reference ref = [](const Buffers &b, int r, int c) {
      return double(b.data[0][b.ints[1][r] * kWidth + c]);
    };
    SCOPED_TRACE(name);
    expectMatchesReference(k, 2, 5, ref, 0.0, 0.0);
  }
}

// The kernels widen f16 with their own bit arithmetic: subnormals, signed
// zero, the extremes, infinities and NaN come out as HalfFloat.h decodes them.
TEST(TypedWeights, F16ExtremesDecodeExactly) {
  constexpr int kWidth = 16;
  const uint16_t halves[] = {0x0001, 0x03ff, 0x0400, 0x3c00, 0xc000, 0x8000,
                             0x7bff, 0xfbff, 0x7c00, 0xfc00, 0x7e01, 0x83ff};
  KernelParam table = param("table", {kGVocab, kWidth});
  table.type = ElementEncoding{DType::F16, std::nullopt};
  KernelParam tokens = param("tokens", {kDynamicRows}, true);
  tokens.type.plain = DType::I32;
  Kernel k = single(EmbeddingAttrs{1.0}, {table, tokens}, kDynamicRows, kWidth);
  Fill extremes = [&](const Kernel &, Buffers &b) {
    for (size_t i = 0; i < b.data[0].size(); ++i) {
      uint16_t h = halves[i % std::size(halves)];
      std::memcpy(b.bytes[0].data() + 2 * i, &h, 2);
      b.data[0][i] = halfToFloat(h);
    }
  };
  Reference ref = [](const Buffers &b, int r, int c) {
    return double(b.data[0][b.ints[1][r] * kWidth + c]);
  };
  expectMatchesReference(k, 2, 5, ref, 0.0, 0.0, extremes);
}

} // namespace
