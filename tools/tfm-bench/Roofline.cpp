//===- Roofline.cpp - This machine's ceilings, measured -------------------===//
//
// Each probe runs on every thread at once, with the widest vectors the CPU
// has (the kernels tfmc compiles for this CPU use them too), and keeps the
// best of three timed passes. The read probes sum floats with several
// accumulators, so that the adds never wait on each other and the loads set
// the pace; the FMA and dot product probes run twelve independent chains
// per thread, enough to cover the latency of every FMA unit of the CPUs we
// target, and the AMX probes four tiles of sums, each instruction's
// latency covered by the other three's. The read probes' floats lie in huge
// pages, as the runtime's cache, arena and --no-mmap weights do and as Linux
// maps a weight file it read into large folios: in 4 KiB pages the 1 GiB
// probe read 25.6 GB/s on a 2-core AMD EPYC VM while the 110M Llama's f32
// decode read its mapped weights at 28.4, a figure of 110% "of memory".
//
//===----------------------------------------------------------------------===//
#include "Roofline.h"

#include "tfm/runtime/HugePages.h"

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdlib>
#include <functional>
#include <memory>
#include <new>
#include <thread>
#include <vector>

#if defined(__x86_64__)
#include "tfm/common/Targets.h"

#include <immintrin.h>
#endif

using namespace tfm::bench;
using Clock = std::chrono::steady_clock;

namespace {

/// Floats per step of every sum: `count` passed to a SumFn is a multiple.
constexpr size_t kSumStep = 128;
/// Independent multiply-add chains per thread.
constexpr int kChains = 12;

using SumFn = float (*)(const float *data, size_t count);
/// Runs `iterations` steps of kChains chains; returns their sum (kept alive).
using FmaFn = float (*)(float seed, long iterations);

float sumPortable(const float *p, size_t n) {
  float acc[16] = {};
  for (size_t i = 0; i < n; i += 16)
    for (int j = 0; j < 16; ++j)
      acc[j] += p[i + j];
  float s = 0;
  for (float a : acc)
    s += a;
  return s;
}

float fmaPortable(float seed, long iterations) {
  float acc[kChains];
  for (int j = 0; j < kChains; ++j)
    acc[j] = seed + float(j);
  for (long i = 0; i < iterations; ++i)
    for (float &a : acc)
      a = a * 0.999999f + 1e-6f;
  float s = 0;
  for (float a : acc)
    s += a;
  return s;
}

#if defined(__x86_64__)
__attribute__((target("avx512f"))) float sumAvx512(const float *p, size_t n) {
  __m512 acc[8];
  for (__m512 &a : acc)
    a = _mm512_setzero_ps();
  for (size_t i = 0; i < n; i += kSumStep)
    for (int j = 0; j < 8; ++j)
      acc[j] = _mm512_add_ps(acc[j], _mm512_loadu_ps(p + i + 16 * j));
  for (int j = 1; j < 8; ++j)
    acc[0] = _mm512_add_ps(acc[0], acc[j]);
  return _mm512_reduce_add_ps(acc[0]);
}

__attribute__((target("avx512f"))) float fmaAvx512(float seed, long iterations) {
  __m512 acc[kChains];
  for (int j = 0; j < kChains; ++j)
    acc[j] = _mm512_set1_ps(seed + float(j));
  const __m512 mul = _mm512_set1_ps(0.999999f), add = _mm512_set1_ps(1e-6f);
  for (long i = 0; i < iterations; ++i)
    for (__m512 &a : acc)
      a = _mm512_fmadd_ps(a, mul, add);
  for (int j = 1; j < kChains; ++j)
    acc[0] = _mm512_add_ps(acc[0], acc[j]);
  return _mm512_reduce_add_ps(acc[0]);
}

__attribute__((target("avx2"))) float sumAvx2(const float *p, size_t n) {
  __m256 acc[8];
  for (__m256 &a : acc)
    a = _mm256_setzero_ps();
  for (size_t i = 0; i < n; i += kSumStep / 2)
    for (int j = 0; j < 8; ++j)
      acc[j] = _mm256_add_ps(acc[j], _mm256_loadu_ps(p + i + 8 * j));
  alignas(32) float lanes[8];
  for (int j = 1; j < 8; ++j)
    acc[0] = _mm256_add_ps(acc[0], acc[j]);
  _mm256_store_ps(lanes, acc[0]);
  float s = 0;
  for (float l : lanes)
    s += l;
  return s;
}

__attribute__((target("avx2,fma"))) float fmaAvx2(float seed, long iterations) {
  __m256 acc[kChains];
  for (int j = 0; j < kChains; ++j)
    acc[j] = _mm256_set1_ps(seed + float(j));
  const __m256 mul = _mm256_set1_ps(0.999999f), add = _mm256_set1_ps(1e-6f);
  for (long i = 0; i < iterations; ++i)
    for (__m256 &a : acc)
      a = _mm256_fmadd_ps(a, mul, add);
  alignas(32) float lanes[8];
  for (int j = 1; j < kChains; ++j)
    acc[0] = _mm256_add_ps(acc[0], acc[j]);
  _mm256_store_ps(lanes, acc[0]);
  float s = 0;
  for (float l : lanes)
    s += l;
  return s;
}
#endif

#if defined(__x86_64__)
/// Runs `iterations` steps of kChains chains of 16-lane dot products
/// (vpdpbusd, vdpbf16ps), or of 4 AMX tile products; returns a result.
using DotFn = float (*)(float seed, long iterations);

/// int8: 64 multiply-adds a vpdpbusd.
__attribute__((target("avx512f,avx512vnni"))) float int8DotAvx512(float seed, long iterations) {
  __m512i acc[kChains];
  for (int j = 0; j < kChains; ++j)
    acc[j] = _mm512_set1_epi32(int(seed) + j);
  const __m512i a = _mm512_set1_epi8(3), b = _mm512_set1_epi8(-2);
  for (long i = 0; i < iterations; ++i)
    for (__m512i &s : acc)
      s = _mm512_dpbusd_epi32(s, a, b);
  for (int j = 1; j < kChains; ++j)
    acc[0] = _mm512_add_epi32(acc[0], acc[j]);
  return float(_mm512_reduce_add_epi32(acc[0]));
}

/// bf16: 32 multiply-adds a vdpbf16ps.
__attribute__((target("avx512f,avx512bf16"))) float bf16DotAvx512(float seed, long iterations) {
  __m512 acc[kChains];
  for (int j = 0; j < kChains; ++j)
    acc[j] = _mm512_set1_ps(seed + float(j));
  const __m512bh a = (__m512bh)_mm512_set1_epi16(0x3f80), b = (__m512bh)_mm512_set1_epi16(0x3380);
  for (long i = 0; i < iterations; ++i)
    for (__m512 &s : acc)
      s = _mm512_dpbf16_ps(s, a, b);
  for (int j = 1; j < kChains; ++j)
    acc[0] = _mm512_add_ps(acc[0], acc[j]);
  return _mm512_reduce_add_ps(acc[0]);
}

/// AMX's palette 1: 8 tiles of 16 rows of 64 bytes.
struct alignas(64) TileConfig {
  uint8_t palette = 1, startRow = 0, reserved[14] = {};
  uint16_t rowBytes[16] = {};
  uint8_t rows[16] = {};
};

constexpr int kTileProducts = 4;

/// Tiles 0-3 hold sums, 4 and 5 the operands; `product` multiplies 4 by 5
/// into each of tiles 0-3 (tdpbssd or tdpbf16ps), four products that do
/// not wait on each other.
template <typename Product>
__attribute__((target("amx-tile"))) float amxProducts(float seed, long iterations,
                                                      Product product) {
  TileConfig config;
  for (int t = 0; t < 6; ++t) {
    config.rows[t] = 16;
    config.rowBytes[t] = 64;
  }
  _tile_loadconfig(&config);
  alignas(64) uint8_t operand[16 * 64];
  for (int i = 0; i < 16 * 64; ++i)
    operand[i] = uint8_t(int(seed) + i);
  _tile_loadd(4, operand, 64);
  _tile_loadd(5, operand, 64);
  _tile_zero(0);
  _tile_zero(1);
  _tile_zero(2);
  _tile_zero(3);
  for (long i = 0; i < iterations; ++i)
    product();
  alignas(64) float sums[16 * 16];
  _tile_stored(0, sums, 64);
  _tile_release();
  return sums[0];
}

/// int8: 16 x 16 x 64 multiply-adds a tdpbssd.
__attribute__((target("amx-tile,amx-int8"))) float amxInt8(float seed, long iterations) {
  return amxProducts(seed, iterations, []() __attribute__((target("amx-tile,amx-int8"))) {
    _tile_dpbssd(0, 4, 5);
    _tile_dpbssd(1, 4, 5);
    _tile_dpbssd(2, 4, 5);
    _tile_dpbssd(3, 4, 5);
  });
}

/// bf16: 16 x 16 x 32 multiply-adds a tdpbf16ps.
__attribute__((target("amx-tile,amx-bf16"))) float amxBf16(float seed, long iterations) {
  return amxProducts(seed, iterations, []() __attribute__((target("amx-tile,amx-bf16"))) {
    _tile_dpbf16ps(0, 4, 5);
    _tile_dpbf16ps(1, 4, 5);
    _tile_dpbf16ps(2, 4, 5);
    _tile_dpbf16ps(3, 4, 5);
  });
}
#endif

struct Probes {
  const char *isa;
  SumFn sum;
  FmaFn fma;
  int lanes; // floats per FMA
};

Probes probesForThisCpu() {
#if defined(__x86_64__)
  if (__builtin_cpu_supports("avx512f"))
    return {"avx512f", sumAvx512, fmaAvx512, 16};
  if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma"))
    return {"avx2", sumAvx2, fmaAvx2, 8};
#endif
  return {"portable", sumPortable, fmaPortable, 1};
}

/// Seconds for `work(t)` run on threads t = 0..threads-1 at once; best of 3.
double bestTime(int threads, const std::function<float(int)> &work) {
  double best = 1e30;
  volatile float sink = 0; // keeps the results, and so the work, alive
  for (int pass = 0; pass < 3; ++pass) {
    std::vector<float> results(threads);
    auto start = Clock::now();
    std::vector<std::thread> pool;
    for (int t = 0; t < threads; ++t)
      pool.emplace_back([&, t] { results[t] = work(t); });
    for (std::thread &t : pool)
      t.join();
    best = std::min(best, std::chrono::duration<double>(Clock::now() - start).count());
    for (float r : results)
      sink = sink + r;
  }
  return best;
}

/// GB/s reading `bytes` of floats split among the threads, `repeats` times.
double readBandwidth(const Probes &probes, int threads, size_t bytes, int repeats) {
  size_t perThread = bytes / sizeof(float) / threads / kSumStep * kSumStep;
  std::unique_ptr<float, decltype(&std::free)> data(
      static_cast<float *>(tfm::rt::allocateInHugePages(perThread * threads * sizeof(float))),
      &std::free);
  if (!data)
    throw std::bad_alloc();
  double seconds = bestTime(threads, [&](int t) {
    float s = 0;
    for (int r = 0; r < repeats; ++r)
      s += probes.sum(data.get() + perThread * t, perThread);
    return s;
  });
  return double(perThread * threads * sizeof(float)) * repeats / seconds / 1e9;
}

} // namespace

double Roofline::cacheGBs() const {
  for (auto it = reads.rbegin(); it != reads.rend(); ++it)
    if (it->bytes <= cacheBytes)
      return it->gbs;
  return memoryGBs();
}

double Roofline::readGBs(double bytes) const {
  for (const ReadRate &r : reads)
    if (bytes <= double(r.bytes))
      return r.gbs;
  return memoryGBs();
}

namespace {

/// The largest working set read at least twice as fast as memory.
void findCache(Roofline &r) {
  r.cacheBytes = 0;
  for (const ReadRate &rate : r.reads)
    if (rate.gbs >= 2 * r.memoryGBs())
      r.cacheBytes = rate.bytes;
}

} // namespace

Roofline tfm::bench::higherOf(const Roofline &a, const Roofline &b) {
  Roofline r = a;
  r.fmaGflops = std::max(a.fmaGflops, b.fmaGflops);
  r.int8DotGops = std::max(a.int8DotGops, b.int8DotGops);
  r.bf16DotGflops = std::max(a.bf16DotGflops, b.bf16DotGflops);
  r.amxInt8Gops = std::max(a.amxInt8Gops, b.amxInt8Gops);
  r.amxBf16Gflops = std::max(a.amxBf16Gflops, b.amxBf16Gflops);
  for (size_t i = 0; i < r.reads.size() && i < b.reads.size(); ++i)
    r.reads[i].gbs = std::max(a.reads[i].gbs, b.reads[i].gbs);
  findCache(r);
  return r;
}

double tfm::bench::measureRangesRead(const std::vector<ByteRange> &ranges, int threads) {
  Probes probes = probesForThisCpu();
  // Each thread reads its share of every range, from a 64-byte boundary
  // on (the sums read floats), in whole steps of the sum: under 64 bytes
  // and a step (512 bytes) per thread of each range go unread.
  struct Share {
    const float *data;
    size_t count;
  };
  std::vector<std::vector<Share>> shares(threads);
  double bytesRead = 0;
  for (const ByteRange &range : ranges) {
    auto begin = reinterpret_cast<uintptr_t>(range.data), end = begin + range.bytes;
    uintptr_t aligned = (begin + 63) / 64 * 64;
    if (aligned >= end)
      continue;
    size_t perThread = (end - aligned) / sizeof(float) / threads / kSumStep * kSumStep;
    if (perThread == 0)
      continue;
    for (int t = 0; t < threads; ++t)
      shares[t].push_back({reinterpret_cast<const float *>(aligned) + perThread * t, perThread});
    bytesRead += double(perThread * threads * sizeof(float));
  }
  if (bytesRead == 0)
    return 0;
  // Small weights are read again until 512 MiB have been, so that
  // starting the threads does not count.
  int repeats = int(std::max(1.0, double(512 << 20) / bytesRead));
  double seconds = bestTime(threads, [&](int t) {
    float s = 0;
    for (int r = 0; r < repeats; ++r)
      for (const Share &share : shares[t])
        s += probes.sum(share.data, share.count);
    return s;
  });
  return bytesRead * repeats / seconds / 1e9;
}

Roofline tfm::bench::measureRoofline(int threads) {
  Probes probes = probesForThisCpu();
  Roofline r;
  r.threads = threads;
  r.vectorIsa = probes.isa;
  // 1 MiB to 128 MiB, then 1 GiB: far past any last-level cache a slice of
  // a CPU gets. Each is read until 2 GiB have been read.
  std::vector<size_t> sizes;
  for (size_t mib = 1; mib <= 128; mib *= 2)
    sizes.push_back(mib << 20);
  sizes.push_back(size_t(1) << 30);
  for (size_t bytes : sizes)
    r.reads.push_back({bytes, readBandwidth(probes, threads, bytes,
                                            int(std::max<size_t>(1, (size_t(2) << 30) / bytes)))});
  findCache(r);
  const long iterations = 20'000'000;
  double seconds = bestTime(threads, [&](int t) { return probes.fma(float(t), iterations); });
  r.fmaGflops = 2.0 * kChains * probes.lanes * double(iterations) * threads / seconds / 1e9;
#if defined(__x86_64__)
  llvm::StringMap<bool> cpu = tfm::hostCpuFeatures(); // asks Linux for AMX's tiles too
  auto peak = [&](DotFn probe, long steps, double opsPerStep) {
    double time = bestTime(threads, [&](int t) { return probe(float(t), steps); });
    return opsPerStep * double(steps) * threads / time / 1e9;
  };
  if (cpu.lookup("avx512vnni"))
    r.int8DotGops = peak(int8DotAvx512, iterations, 2.0 * kChains * 64);
  if (cpu.lookup("avx512bf16"))
    r.bf16DotGflops = peak(bf16DotAvx512, iterations, 2.0 * kChains * 32);
  const long tileSteps = iterations / 10;
  if (cpu.lookup("amx-int8"))
    r.amxInt8Gops = peak(amxInt8, tileSteps, 2.0 * kTileProducts * 16 * 16 * 64);
  if (cpu.lookup("amx-bf16"))
    r.amxBf16Gflops = peak(amxBf16, tileSteps, 2.0 * kTileProducts * 16 * 16 * 32);
#endif
  return r;
}

double Roofline::computeGops(tfm::Products products, bool manyRows) const {
  switch (products) {
  case tfm::Products::F32:
    return fmaGflops;
  case tfm::Products::Int8:
    return std::max({fmaGflops, int8DotGops, manyRows ? amxInt8Gops : 0.0});
  case tfm::Products::Bf16:
    return std::max({fmaGflops, bf16DotGflops, manyRows ? amxBf16Gflops : 0.0});
  }
  return fmaGflops; // unreachable: the switch names every kind
}
