//===- Tune.cpp - tfmc --tune: each kernel's fastest schedule here --------===//
#include "Tune.h"

#include "tfm/Program/ScheduleNames.h"
#include "tfm/common/ChildProcess.h"
#include "tfm/common/Failure.h"

#include "llvm/ADT/SmallString.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/raw_ostream.h"

#include <algorithm>
#include <thread>

using namespace llvm;

namespace {

/// Rounds of the comparison, prompt tokens and decode steps per run: enough
/// for medians that hold within the tuning margin on a quiet machine, few
/// enough that GPT-2 Small tunes in minutes on two cores. A short context
/// takes a quarter for the prompt and an eighth for decode.
constexpr int kRounds = 3;
constexpr int64_t kPromptTokens = 128;
constexpr int64_t kDecodeSteps = 32;

std::string sibling(StringRef tool) {
  static int anchor;
  SmallString<256> path(sys::path::parent_path(sys::fs::getMainExecutable(nullptr, &anchor)));
  sys::path::append(path, tool);
  return std::string(path);
}

std::string pathJoin(StringRef a, StringRef b) {
  SmallString<256> p(a);
  sys::path::append(p, b);
  return std::string(p);
}

} // namespace

std::vector<std::string> tfm::defaultTuneCandidates() {
  std::vector<std::string> names = {scheduleName(Schedule::Fast)};
  // Tuning times kernels on this machine's CPU: the CPU's schedules.
  for (const ScheduleName &s : kScheduleNames)
    if (s.schedule != Schedule::Fast && s.schedule != Schedule::Plain &&
        s.device == ScheduleDevice::Cpu)
      names.push_back(s.name);
  return names;
}

Error tfm::tuneSchedules(const TuneRequest &request) {
  if (std::error_code ec = sys::fs::create_directories(request.workDir))
    return failure(request.workDir + ": cannot create: " + ec.message());
  std::string weights = request.weightsLike;
  if (weights.empty()) {
    weights = pathJoin(request.workDir, "random-weights.gguf");
    errs() << "tfmc --tune: random weights -> " << weights << "\n";
    if (Error e = runProgram({sibling("tfm-weights"), request.config, "--format", "gguf",
                              "--dtype", request.weightType.empty() ? "f32" : request.weightType,
                              "-o", weights},
                             std::nullopt, pathJoin(request.workDir, "tfm-weights.log")))
      return e;
  }
  int threads = request.threads > 0 ? request.threads
                                    : int(std::max(1u, std::thread::hardware_concurrency()));
  std::vector<std::string> bench = {
      sibling("tfm-bench"),
      "--config",
      request.config,
      "--weights",
      weights,
      "--schedules",
      join(request.schedules, ","),
      "--leave-out-failing",
      "--tuning-file",
      request.tuningFile,
      "--out",
      pathJoin(request.workDir, "bench"),
      "--threads",
      std::to_string(threads),
      "--repeat",
      std::to_string(kRounds),
      "--prompt",
      std::to_string(std::min(kPromptTokens, request.contextLength / 4)),
      "--decode",
      std::to_string(std::min(kDecodeSteps, request.contextLength / 8))};
  if (!request.compileArgs.empty())
    bench.push_back("--tfmc-args=" + join(request.compileArgs, " "));
  errs() << "tfmc --tune: " << request.schedules.size() << " schedules on " << threads
         << " threads: " << join(request.schedules, ", ") << "\n";
  // Standard output on the terminal: its progress and tables are the
  // user's; standard error (the profiler's reports) in a log.
  return runProgram(bench, std::nullopt, pathJoin(request.workDir, "tfm-bench.log"));
}
