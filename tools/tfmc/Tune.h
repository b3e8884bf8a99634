//===- Tune.h - tfmc --tune: each kernel's fastest schedule here -*- C++ -*-===//
//
// Times every kernel of a config under each candidate schedule on this
// machine and records the winners in the tuning file, which the schedule
// selection pass then reads. The timing is tfm-bench's schedule comparison
// (tools/tfm-bench/ScheduleComparison.h): it compiles the config once per
// candidate with the profiler, checks each against the plain schedule's
// logits, and times them in alternating rounds, on random weights written
// by tfm-weights (or the weight file of --weights-like).
//
//===----------------------------------------------------------------------===//
#ifndef TFM_TOOLS_TFMC_TUNE_H
#define TFM_TOOLS_TFMC_TUNE_H

#include "llvm/Support/Error.h"

#include <cstdint>
#include <string>
#include <vector>

namespace tfm {

struct TuneRequest {
  std::string config;     // the config.json compiled
  std::string tuningFile; // where the winners are recorded
  std::string workDir;    // libraries, weights and tables of the comparison
  /// The candidates, the baseline first: another wins only when clearly
  /// faster (tfm-bench's kTuningMargin).
  std::vector<std::string> schedules;
  /// tfmc options the kernels depend on (--dtype, --kv-dtype, --context,
  /// --prefill-chunk, --target), passed to every compile.
  std::vector<std::string> compileArgs;
  std::string weightsLike; // a weight file to time with; empty: random weights
  std::string weightType;  // their type (tfm-weights --dtype); empty: f32
  int threads = 0;         // 0: every hardware thread
  int64_t contextLength = 0; // positions the compiled cache holds
};

/// Runs the comparison and records its winners; fails when a candidate does
/// not compile or computes something else than plain.
llvm::Error tuneSchedules(const TuneRequest &request);

/// Every schedule but plain, "fast" (the CPU default) first.
std::vector<std::string> defaultTuneCandidates();

} // namespace tfm

#endif // TFM_TOOLS_TFMC_TUNE_H
