//===- RooflineCache.h - This machine's roofline, measured once -*- C++ -*-===//
//
// Measuring the roofline takes 10 to 15 seconds and a gigabyte of memory.
// A machine's ceilings change little, so tfm-bench measures them once per
// machine and thread count and keeps them in the cache folder
// (tfm/runtime/ModelCache.h: defaultCacheDir()/roofline/); --remeasure
// measures again. A machine is its host name, CPU model and CPU count.
//
//===----------------------------------------------------------------------===//
#ifndef TFM_BENCH_ROOFLINECACHE_H
#define TFM_BENCH_ROOFLINECACHE_H

#include "Roofline.h"

#include "llvm/Support/Error.h"

#include <optional>
#include <string>

namespace tfm::bench {

/// Where this machine's roofline for `threads` threads is kept.
llvm::Expected<std::string> rooflineCachePath(int threads);

/// The roofline kept at `path`; none when there is none, or when it does not
/// read as one (it is then measured again).
std::optional<Roofline> readCachedRoofline(const std::string &path);

/// Keeps `roof` at `path`, the folder made private as the cache's are.
llvm::Error writeCachedRoofline(const std::string &path, const Roofline &roof);

/// The roofline a benchmark is held against: the cached one, or, with none
/// or --remeasure, one measured before the runs and again after them, the
/// higher of the two kept (higherOf) and cached. Obtained when first asked
/// for, so that a benchmark checks its inputs and compiles first.
class MachineRoofline {
public:
  MachineRoofline(int threads, bool remeasure) : threads(threads), remeasure(remeasure) {}

  /// The ceilings before the runs, printed the first time.
  llvm::Expected<Roofline> before();
  /// After the runs: a measured roofline measured again and cached (a line
  /// says so); a cached one as it was.
  llvm::Expected<Roofline> after();

private:
  int threads;
  bool remeasure;
  bool measured = false;
  std::string cachePath;
  std::optional<Roofline> known;
};

/// The roofline as a table, for the top of tfm-bench's report.
void printRoofline(const Roofline &roof);

} // namespace tfm::bench

#endif // TFM_BENCH_ROOFLINECACHE_H
