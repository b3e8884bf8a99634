//===- Roofline.h - This machine's ceilings, measured -----------*- C++ -*-===//
//
// What a kernel can reach on this machine with a given number of threads:
// the peak rate of f32 fused multiply-adds, of the narrower dot products
// the CPU has (AVX-512 VNNI and BF16, AMX's int8 and bf16 tiles), and the
// read bandwidth for working sets from 1 MiB (in cache) to 1 GiB (from
// memory). Each is
// measured, not taken from a data sheet: the machines this runs on are
// shared virtual machines whose caches, clocks and memory differ from their
// specifications (a 2-core slice of a CPU that reports 512 MiB of L3).
//
//===----------------------------------------------------------------------===//
#ifndef TFM_BENCH_ROOFLINE_H
#define TFM_BENCH_ROOFLINE_H

#include "tfm/common/Variants.h"

#include <cstddef>
#include <string>
#include <vector>

namespace tfm::bench {

/// Read bandwidth when a working set of `bytes` is read again and again.
struct ReadRate {
  size_t bytes;
  double gbs;
};

struct Roofline {
  int threads = 1;
  double fmaGflops = 0;        // f32, two FLOPs per multiply-add
  // Dot products of narrower inputs, two operations per multiply-add as
  // for FLOPs; 0 where the CPU (or, for AMX, Linux) lacks them.
  double int8DotGops = 0;   // AVX-512 VNNI, vpdpbusd
  double bf16DotGflops = 0; // AVX-512 BF16, vdpbf16ps
  double amxInt8Gops = 0;   // AMX, tdpbssd
  double amxBf16Gflops = 0; // AMX, tdpbf16ps
  std::string vectorIsa;       // what the probes ran with: "avx512f", "avx2", "portable"
  std::vector<ReadRate> reads; // by working set, smallest first; the last is memory's
  size_t cacheBytes = 0;       // the largest working set read at least twice as fast as memory

  double memoryGBs() const { return reads.back().gbs; }
  /// The rate at the largest working set that still reads from cache.
  double cacheGBs() const;
  /// What a working set of `bytes` is held against: the rate measured for
  /// the smallest working set at least as large.
  double readGBs(double bytes) const;
  /// The ceiling of matrix products whose inputs are `products` (a
  /// manifest's: "f32", or "int8" and "bf16" as tfmc --activations rounds
  /// them): f32 FMAs, or the fastest dot product this CPU has for the
  /// inputs. AMX's tiles count for many rows only (`manyRows`): a tile
  /// product of one row does a sixteenth of its work.
  double computeGops(tfm::Products products, bool manyRows) const;
};

/// Measures the ceilings with `threads` threads (a few seconds).
Roofline measureRoofline(int threads);

/// A run of bytes to read, such as one weight tensor where it lies.
struct ByteRange {
  const void *data;
  size_t bytes;
};

/// GB/s reading `ranges`, each split among `threads` threads (small ones
/// again and again); best of 3. The ceiling of a decode step that reads
/// its weights where they lie: on a KVM guest (issue 8) a 7 GB file's
/// cached pages read at 15 GB/s with two threads while the fresh memory
/// of measureRoofline read at 29.
double measureRangesRead(const std::vector<ByteRange> &ranges, int threads);

/// Each ceiling the higher of two measurements of the same machine: on a
/// shared machine neighbours lower a measurement for a while (memory read
/// 35 GB/s before a run and 58 after one), and a kernel timed in a quiet
/// moment then reads above a ceiling measured in a busy one.
Roofline higherOf(const Roofline &a, const Roofline &b);

} // namespace tfm::bench

#endif // TFM_BENCH_ROOFLINE_H
