//===- Roofline.h - This machine's ceilings, measured -----------*- C++ -*-===//
//
// What a kernel can reach on this machine with a given number of threads:
// the read bandwidth from memory, the read bandwidth from the last-level
// cache (for working sets that fit there), and the peak rate of f32 fused
// multiply-adds. Each is measured, not taken from a data sheet: the
// machines this runs on are shared virtual machines whose clocks and
// memory differ from their specifications.
//
//===----------------------------------------------------------------------===//
#ifndef TFM_BENCH_ROOFLINE_H
#define TFM_BENCH_ROOFLINE_H

#include <cstddef>
#include <string>

namespace tfm::bench {

struct Roofline {
  int threads = 1;
  double dramGBs = 0;    // reading a 1 GiB array
  double cacheGBs = 0;   // reading `cacheBytes` again and again
  size_t cacheBytes = 0; // half the last-level cache
  double fmaGflops = 0;  // f32, two FLOPs per multiply-add
  std::string vectorIsa; // what the probes ran with: "avx512f", "avx2", "portable"

  /// The read bandwidth a working set of `bytes` is held against.
  double readGBs(double bytes) const { return bytes <= cacheBytes ? cacheGBs : dramGBs; }
};

/// Measures the three ceilings with `threads` threads (a few seconds).
Roofline measureRoofline(int threads);

} // namespace tfm::bench

#endif // TFM_BENCH_ROOFLINE_H
