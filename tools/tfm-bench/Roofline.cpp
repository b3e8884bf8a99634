//===- Roofline.cpp - This machine's ceilings, measured -------------------===//
//
// Each probe runs on every thread at once, with the widest vectors the CPU
// has (the kernels tfmc compiles for this CPU use them too), and keeps the
// best of three timed passes. The read probes sum floats with several
// accumulators, so that the adds never wait on each other and the loads set
// the pace; the FMA probe runs twelve independent chains per thread, enough
// to cover the latency of every FMA unit of the CPUs we target.
//
//===----------------------------------------------------------------------===//
#include "Roofline.h"

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <functional>
#include <thread>
#include <vector>

#if defined(__x86_64__)
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
  std::vector<float> data(perThread * threads, 1.0f);
  double seconds = bestTime(threads, [&](int t) {
    float s = 0;
    for (int r = 0; r < repeats; ++r)
      s += probes.sum(data.data() + perThread * t, perThread);
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
  return r;
}
