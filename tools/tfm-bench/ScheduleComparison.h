//===- ScheduleComparison.h - One config under several schedules -*- C++ -*-===//
//
//   tfm-bench --config C --weights W --schedules fast,mullapudi2016
//
// Compiles the config once per schedule with Halide's profiler (tfmc
// --schedule S --profile), checks that each computes what the plain
// schedule computes (the logits of a prefill and decode steps), then times
// them: each round runs every schedule once, in a child process of its own
// (the profiler reports each kernel's time per call when the process
// exits). Prints, per kernel, each schedule's median time per call and its
// spread, GFLOP/s, GB/s and per cent of this machine's roofline, and writes
// the same as CSV and JSON. With a tuning file, records each kernel's
// fastest schedule in it (tfmc --tune).
//
//===----------------------------------------------------------------------===//
#ifndef TFM_BENCH_SCHEDULECOMPARISON_H
#define TFM_BENCH_SCHEDULECOMPARISON_H

#include "RooflineCache.h"

#include <cstdint>
#include <string>
#include <vector>

namespace tfm::bench {

struct ComparisonOptions {
  std::string config, weights, outDir;
  std::vector<std::string> schedules; // plain is compiled as the reference in any case
  std::vector<std::string> kernels;   // substrings of the kernels to show; empty: all
  std::string self;                   // this executable, run once per schedule and round
  int threads = 2, promptTokens = 128, decodeTokens = 64, repeats = 5;
  std::vector<std::string> tfmcArgs; // passed to every compile (--dtype q8_0, --target ...)
  /// Non-empty: each kernel's winner is recorded here. The first schedule
  /// is the baseline: another wins only when faster by kTuningMargin.
  std::string tuningFile;
  /// A schedule other than plain and the first that fails to compile or to
  /// match plain is left out with a note, not an error.
  bool leaveOutFailing = false;
  /// Halide's profiler reports of the libraries checked in this process go
  /// to the terminal too (otherwise to <outDir>/<schedule>.check.log).
  bool showProfiler = false;
};

/// How much faster than the baseline a schedule must be to be recorded
/// instead: more than the spread of repeated medians on a quiet machine,
/// so that noise does not flip choices between tuning runs.
constexpr double kTuningMargin = 0.03;
/// Profiler samples (one a millisecond) a kernel needs under a schedule for
/// its time to count: a kernel seen less keeps the target's default.
constexpr int kTuningSamples = 10;

/// Runs the comparison; the exit status (non-zero when a schedule fails to
/// compile or computes something else than plain).
/// Compiles, checks, then times: `roofline` is obtained once every
/// library compiled and matched plain.
int compareSchedules(const ComparisonOptions &options, MachineRoofline &roofline);

} // namespace tfm::bench

#endif // TFM_BENCH_SCHEDULECOMPARISON_H
