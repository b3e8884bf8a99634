//===- TuningFile.h - The schedules tfmc --tune measured fastest -*- C++ -*-===//
//
// `tfmc --tune` times each kernel under every candidate schedule on this
// machine (through tfm-bench) and records the winner here, keyed by the
// target (its CPU features) and the kernel's tuning key: a hash of the
// kernel's IR less its name and schedule, so that any later compile of any
// config with the same kernel for the same target reuses the choice. The
// selection pass reads it; a kernel it does not name gets the per-target
// default.
//
//   {"format": "tfmc-tuning", "version": 1, "records": [
//     {"target": "x86-64-linux-avx512...", "kernel_key": "3f0c...",
//      "kernel": "prefill_attn", "config": "gpt2-small",
//      "schedule": "fast-attn32", "median_ms": 0.61, "default_ms": 0.74}]}
//
//===----------------------------------------------------------------------===//
#ifndef TFM_COMMON_TUNINGFILE_H
#define TFM_COMMON_TUNINGFILE_H

#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"

#include <cstdint>
#include <string>
#include <vector>

namespace tfm {

/// The largest tuning file read: a record per kernel and target is a few
/// hundred bytes.
constexpr uint64_t kMaxTuningFileBytes = 64ull << 20;

struct TuningRecord {
  std::string target;    // tuningTarget() of the target it was measured for
  std::string kernelKey; // the kernel's tuning key
  std::string kernel;    // its name and config where it was measured: for people
  std::string config;
  std::string schedule;  // the winner
  double medianMs = 0;   // the winner's median time per call
  double defaultMs = 0;  // the default schedule's, measured beside it
};

struct TuningFile {
  std::vector<TuningRecord> records;

  /// The record for this kernel on this target, or null.
  const TuningRecord *find(llvm::StringRef target, llvm::StringRef kernelKey) const;
  /// Adds `record`, replacing one with the same target and kernel key.
  void put(TuningRecord record);
};

/// The target as tuning records name it: without features that change how
/// a kernel is observed but not what it runs ("profile").
std::string tuningTarget(llvm::StringRef target);

/// Reads a tuning file; a file that does not exist reads as empty.
llvm::Expected<TuningFile> readTuningFile(const std::string &path);
/// Writes it whole (to a temporary file renamed over `path`).
llvm::Error writeTuningFile(const std::string &path, const TuningFile &file);

} // namespace tfm

#endif // TFM_COMMON_TUNINGFILE_H
