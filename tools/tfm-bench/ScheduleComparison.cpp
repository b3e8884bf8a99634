//===- ScheduleComparison.cpp - One config under several schedules --------===//
#include "ScheduleComparison.h"

#include "KernelCosts.h"
#include "LogitsCheck.h"

#include "tfm/common/ChildProcess.h"
#include "tfm/common/Failure.h"
#include "tfm/common/TuningFile.h"

#include "tfm/runtime/ModelCache.h"
#include "tfm/runtime/ModelLibrary.h"
#include "tfm/runtime/Session.h"
#include "tfm/runtime/WeightLoader.h"

#include "tfm/common/BoundedFile.h"
#include "tfm/common/OutputFile.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/JSON.h"

#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/raw_ostream.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <optional>
#include <regex>

#include <fcntl.h>
#include <unistd.h>

using namespace llvm;
using namespace tfm::bench;

namespace {

/// What every other schedule is checked against: tfmc's plain schedule
/// (tfm-bench runs tfmc, and builds without the compiler's headers).
const std::string kReference = "plain";

std::string pathJoin(const std::string &a, const std::string &b) {
  SmallString<256> p(a);
  sys::path::append(p, b);
  return std::string(p);
}

} // namespace

namespace {

/// A file this run wrote (an object, a child's output), or "" (bounded as
/// every read: tfm/common/BoundedFile.h).
std::string readFile(const std::string &path) {
  auto buffer = tfm::readBoundedFile(path, 1ull << 30, "file");
  if (!buffer) {
    consumeError(buffer.takeError());
    return "";
  }
  return (*buffer)->getBuffer().str();
}

/// Halide's profiler report: per pipeline (kernel), a name line, then
/// " total time: T ms  samples: S  runs: R  time/run: X ms".
std::map<std::string, std::pair<double, int>> kernelTimes(const std::string &report) {
  static const std::regex line(
      R"(^ total time: [0-9.]+ ms\s+samples: (\d+)\s+runs: \d+\s+time/run: ([0-9.]+) ms)");
  std::map<std::string, std::pair<double, int>> times;
  SmallVector<StringRef> lines;
  StringRef(report).split(lines, '\n');
  for (size_t i = 1; i < lines.size(); ++i) {
    std::smatch m;
    std::string text = lines[i].str();
    if (std::regex_search(text, m, line))
      times[lines[i - 1].trim().str()] = {std::stod(m[2]), std::stoi(m[1])};
  }
  return times;
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  size_t n = v.size();
  return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

struct Timings {
  std::vector<double> prefill, decode;                 // tok/s per round
  std::map<std::string, std::vector<double>> kernelMs; // per call, per round
  std::map<std::string, int> samples;                  // profiler samples, last round
};

/// Whether schedule `s` compiled `kernel` to the same object bytes as
/// `baseline`: a parameter the kernel does not use (fast-attn32 on a
/// projection), whose time differs from the baseline's by noise alone.
/// Only where the bytes match: Halide names some Funcs from a counter that
/// kernels compiled at once share, and the profiler's table of names lands
/// in the object, so the same code under another name is not caught.
bool sameCode(const std::map<std::string, std::string> &dirs, const std::string &s,
              const std::string &baseline, const std::string &kernel) {
  std::string object = pathJoin("obj", kernel + ".o");
  std::string a = readFile(pathJoin(dirs.at(s), object)),
              b = readFile(pathJoin(dirs.at(baseline), object));
  return !a.empty() && a == b;
}

/// Records in the tuning file, for every kernel timed, the fastest of the
/// `timed` schedules that compile it to other code than the first (the
/// baseline), unless the baseline is within the margin.
Error recordWinners(const ComparisonOptions &opt, const tfm::Manifest &manifest,
                    const std::vector<std::string> &timed,
                    const std::map<std::string, std::string> &dirs,
                    std::map<std::string, Timings> &timings) {
  Expected<tfm::TuningFile> file = tfm::readTuningFile(opt.tuningFile);
  if (!file)
    return file.takeError();
  std::string target = tfm::tuningTarget(manifest.target);
  const std::string &baseline = timed.front();
  outs() << "\nfastest per kernel (recorded in " << opt.tuningFile << "):\n";
  int changed = 0;
  for (const tfm::KernelSchedule &k : manifest.kernels) {
    auto timeOf = [&](const std::string &s) {
      auto found = timings[s].kernelMs.find(k.kernel);
      return found == timings[s].kernelMs.end() ? 0.0 : median(found->second);
    };
    auto sampled = [&](const std::string &s) {
      return timings[s].samples[k.kernel] >= kTuningSamples;
    };
    double baselineMs = timeOf(baseline);
    if (k.tuningKey.empty() || !sampled(baseline))
      continue; // not run (score's kernels), too short to time, or no tuning key

    std::string best = baseline;
    double bestMs = baselineMs;
    for (const std::string &s : timed) {
      double ms = timeOf(s);
      if (sampled(s) && ms < bestMs && ms < baselineMs * (1 - kTuningMargin) &&
          !sameCode(dirs, s, baseline, k.kernel)) {
        best = s;
        bestMs = ms;
      }
    }
    changed += best != baseline;
    outs() << formatv("  {0,-28} {1,-14} {2,9:f3} ms ({3} {4:f3} ms)\n", k.kernel, best, bestMs,
                      baseline, baselineMs);
    file->put({target, k.tuningKey, k.kernel, manifest.config.name, best, bestMs, baselineMs});
  }
  outs() << formatv("  {0} kernels faster than {1} by over {2:f0}%\n", changed, baseline,
                    100 * kTuningMargin);
  return tfm::writeTuningFile(opt.tuningFile, *file);
}

bool shown(const std::string &kernel, const std::vector<std::string> &filters) {
  return filters.empty() || std::any_of(filters.begin(), filters.end(), [&](const std::string &f) {
           return kernel.find(f) != std::string::npos;
         });
}

/// While it lives, what this process writes to standard error (file
/// descriptor 2, where Halide's runtime prints) goes to a file instead.
class StandardErrorToFile {
public:
  explicit StandardErrorToFile(const std::string &path, bool append = false) {
    llvm::errs().flush();
    int file = ::open(path.c_str(), O_WRONLY | O_CREAT | O_CLOEXEC | (append ? O_APPEND : O_TRUNC),
                      0644);
    if (file < 0)
      return; // the reports stay on the terminal
    saved = ::dup(2);
    ::dup2(file, 2);
    ::close(file);
  }
  ~StandardErrorToFile() {
    if (saved < 0)
      return;
    ::fflush(stderr);
    ::dup2(saved, 2);
    ::close(saved);
  }
  StandardErrorToFile(const StandardErrorToFile &) = delete;
  StandardErrorToFile &operator=(const StandardErrorToFile &) = delete;

private:
  int saved = -1;
};

/// One comparison, step by step: compile a library per schedule, check
/// each against plain, time them in alternating rounds, report.
class Comparison {
public:
  explicit Comparison(const ComparisonOptions &opt) : opt(opt), schedules(opt.schedules) {
    if (std::find(schedules.begin(), schedules.end(), kReference) == schedules.end())
      schedules.insert(schedules.begin(), kReference); // checked against, not timed
    timePlain =
        std::find(opt.schedules.begin(), opt.schedules.end(), kReference) != opt.schedules.end();
  }

  /// Runs every step; the comparison's status (leaveOut's) unless a step
  /// fails outright.
  Expected<int> run(MachineRoofline &machine) {
    if (std::error_code ec = sys::fs::create_directories(opt.outDir))
      return tfm::failure(opt.outDir + ": cannot create: " + ec.message());
    if (Error e = compileLibraries())
      return std::move(e);
    auto lib = tfm::rt::ModelLibrary::open(dirs[kReference]);
    if (!lib)
      return lib.takeError();
    Expected<int> result = checkTimeAndReport(**lib, machine);
    // Plain's library, open since its check, reports its profile when it
    // is unloaded.
    std::optional<StandardErrorToFile> quiet;
    if (!opt.showProfiler)
      quiet.emplace(dirs[kReference] + ".check.log", /*append=*/true);
    lib->reset();
    return result;
  }

private:
  Expected<int> checkTimeAndReport(const tfm::rt::ModelLibrary &lib, MachineRoofline &machine) {
    if (Error e = checkAgainstPlain(lib.manifest()))
      return std::move(e);
    if (Expected<Roofline> before = machine.before(); !before)
      return before.takeError();
    if (Error e = timeRounds())
      return std::move(e);
    // A measured roofline again, now that the rounds are over.
    Expected<Roofline> roof = machine.after();
    if (!roof)
      return roof.takeError();
    if (Error e = report(lib, *roof))
      return std::move(e);
    if (!opt.tuningFile.empty() && status == 0 && !timed.empty())
      if (Error e = recordWinners(opt, lib.manifest(), timed, dirs, timings))
        return std::move(e);
    return status;
  }


private:
  /// Whether a schedule that fails to compile or to match plain is left
  /// out with a note (leaveOutFailing, tfmc --tune), the others going on.
  bool leftOutOnFailure(const std::string &s) const {
    return opt.leaveOutFailing && s != kReference && s != opt.schedules.front();
  }

  /// A schedule that failed to match plain: an error, or a note.
  void leaveOut(const std::string &s, const std::string &message) {
    if (leftOutOnFailure(s)) {
      errs() << "tfm-bench: " << s << " left out: " << message << "\n";
      return;
    }
    errs() << "tfm-bench: error: " << message << "\n";
    status = 1;
  }

  /// One library per schedule, with the profiler.
  Error compileLibraries() {
    std::string tfmc = tfm::rt::compilerPath();
    for (const std::string &s : schedules) {
      std::string dir = pathJoin(opt.outDir, s), log = dir + ".tfmc.log";
      errs() << "tfm-bench: compiling " << opt.config << " with " << s << "\n";
      std::vector<std::string> args = {tfmc, opt.config, "--schedule", s, "--profile", "-o", dir};
      args.insert(args.end(), opt.tfmcArgs.begin(), opt.tfmcArgs.end());
      if (Error e = tfm::runProgram(args, log, log)) {
        if (!leftOutOnFailure(s))
          return e;
        leaveOut(s, toString(std::move(e)));
        continue;
      }
      dirs[s] = dir;
    }
    return Error::success();
  }

  /// The logits of schedule `s`'s library. Its profiler reports on
  /// standard error when the library is unloaded: hundreds of lines, kept
  /// in <out>/<s>.check.log unless --show-profiler.
  Expected<std::vector<float>> logitsOf(const std::string &s) {
    std::optional<StandardErrorToFile> quiet;
    if (!opt.showProfiler)
      quiet.emplace(dirs[s] + ".check.log");
    return checkLogits(dirs[s], opt.weights, opt.promptTokens);
  }

  /// Every schedule computes what plain computes; those that do are timed.
  Error checkAgainstPlain(const tfm::Manifest &manifest) {
    Expected<std::vector<float>> reference = logitsOf(kReference);
    if (!reference)
      return tfm::failure("plain: " + toString(reference.takeError()));
    double tolerance = checkTolerance(manifest);
    for (const std::string &s : schedules) {
      if (!dirs.count(s))
        continue; // left out
      Expected<std::vector<float>> logits = logitsOf(s);
      if (!logits) {
        leaveOut(s, s + ": " + toString(logits.takeError()));
        continue;
      }
      differences[s] = relativeDifference(*logits, *reference);
      if (differences[s] > tolerance) {
        leaveOut(s, formatv("{0} computes other logits than plain (relative difference {1:e2}, "
                            "expected at most {2:e1}); not timed",
                            s, differences[s], tolerance)
                        .str());
        continue;
      }
      if (s != kReference || timePlain)
        timed.push_back(s);
    }
    return Error::success();
  }

  /// Rounds of every schedule once each, alternating, so that the
  /// machine's noise falls on all alike.
  Error timeRounds() {
    for (int round = 0; round < opt.repeats; ++round)
      for (const std::string &s : timed) {
        errs() << formatv("tfm-bench: round {0}/{1}: {2}\n", round + 1, opt.repeats, s);
        std::string out = dirs[s] + ".out", err = dirs[s] + ".err";
        if (Error e = tfm::runProgram({opt.self, "--rates", "--weights", opt.weights, "--threads",
                                       std::to_string(opt.threads), "--prompt",
                                       std::to_string(opt.promptTokens), "--decode",
                                       std::to_string(opt.decodeTokens), "--repeat", "3", dirs[s]},
                                      out, err))
          return tfm::failure(s + ": " + toString(std::move(e)));
        Timings &t = timings[s];
        double prefill = 0, decode = 0;
        if (sscanf(readFile(out).c_str(), "rates %lf %lf", &prefill, &decode) == 2) {
          t.prefill.push_back(prefill);
          t.decode.push_back(decode);
        }
        for (auto &[kernel, time] : kernelTimes(readFile(err))) {
          t.kernelMs[kernel].push_back(time.first);
          t.samples[kernel] = time.second;
        }
      }
    return Error::success();
  }

  /// Each schedule's whole-model rates, printed and as JSON rows.
  json::Array reportModels() {
    outs() << formatv("\n{0}: medians of {1} rounds (prefill {2} tokens, {3} decode steps)\n",
                      opt.config, opt.repeats, opt.promptTokens, opt.decodeTokens);
    outs() << formatv("{0,-14} {1,14} {2,13} {3,16}\n", "schedule", "prefill tok/s", "decode tok/s",
                      "vs plain (rel)");
    json::Array rows;
    for (const std::string &s : schedules) {
      bool ran = timings.count(s) && !timings[s].prefill.empty();
      double prefill = ran ? median(timings[s].prefill) : 0,
             decode = ran ? median(timings[s].decode) : 0;
      outs() << formatv("{0,-14} {1,14} {2,13} {3,16:e1}\n", s,
                        ran ? formatv("{0:f1}", prefill).str() : "-",
                        ran ? formatv("{0:f1}", decode).str() : "-", differences[s]);
      rows.push_back(json::Object{{"schedule", s},
                                  {"prefill_tok_s", prefill},
                                  {"decode_tok_s", decode},
                                  {"relative_difference_to_plain", differences[s]}});
    }
    return rows;
  }

  /// Each shown kernel's times under each timed schedule against the
  /// roofline: printed, as CSV lines to `csv` and as JSON rows.
  json::Array reportKernels(const tfm::rt::ModelLibrary &lib, const Roofline &roof,
                            raw_ostream &csv) {
    CallSite site{opt.promptTokens, opt.promptTokens + opt.decodeTokens / 2};
    csv << "kernel,schedule,median_ms,min_ms,max_ms,gflop_s,gb_s,roofline_pct,samples\n";
    json::Array rows;
    for (const tfm::KernelSchedule &k : lib.manifest().kernels) {
      if (!shown(k.kernel, opt.kernels))
        continue;
      std::optional<CallCost> cost = kernelCallCost(k.kernel, lib.manifest(), lib.model(), site);
      // Each kernel is held against the read rate for a working set of its
      // own bytes: the best this machine allows it, reached when the rest of
      // the step leaves its weights in cache. A decode kernel whose layer
      // streams from memory between calls reads a low per cent.
      double rooflineMs = 0;
      if (cost)
        rooflineMs =
            1e3 * std::max(cost->flops / (roof.computeGops(k.products, cost->rows > 1) * 1e9),
                           cost->bytes / (roof.readGBs(cost->bytes) * 1e9));
      bool ran = std::any_of(timed.begin(), timed.end(), [&](const std::string &s) {
        return timings[s].kernelMs.count(k.kernel) > 0;
      });
      if (!ran)
        continue; // score's kernels: tfm-bench runs prefill and decode
      outs() << "\n" << k.kernel;
      if (cost)
        outs() << formatv(" (a call: {0:f2} MFLOP, {1:f2} MB; roofline {2:f4} ms)",
                          cost->flops / 1e6, cost->bytes / 1e6, rooflineMs);
      outs() << formatv("\n  {0,-14} {1,10} {2,17} {3,9} {4,8} {5,11} {6,8}\n", "schedule",
                        "median ms", "spread ms", "GFLOP/s", "GB/s", "% roofline", "samples");
      for (const std::string &s : timed) {
        auto found = timings[s].kernelMs.find(k.kernel);
        if (found == timings[s].kernelMs.end())
          continue;
        const std::vector<double> &ms = found->second;
        double med = median(ms), lo = *std::min_element(ms.begin(), ms.end()),
               hi = *std::max_element(ms.begin(), ms.end());
        int samples = timings[s].samples[k.kernel];
        // Under kTuningSamples a kernel's time is a few of the profiler's
        // 1 ms ticks spread over all its calls, and no rate is given for it
        // (the 110M Llama's prefill embedding, one sample, read 1212% of
        // the roofline).
        bool rated = cost && med > 0 && samples >= kTuningSamples;
        double gflops = rated ? cost->flops / (med * 1e6) : 0;
        double gbs = rated ? cost->bytes / (med * 1e6) : 0;
        double pct = rated ? 100.0 * rooflineMs / med : 0;
        auto rate = [&](double value, const char *format, const char *unrated) {
          return rated ? formatv(format, value).str() : std::string(unrated);
        };
        // The first schedule's code under another name: their difference is
        // this machine's noise.
        std::string sameAs =
            s != timed.front() && sameCode(dirs, s, timed.front(), k.kernel) ? timed.front() : "";
        outs() << formatv("  {0,-14} {1,10:f3} {2,8:f3}-{3,-8:f3} {4,9} {5,8} {6,11} {7,8}{8}{9}\n",
                          s, med, lo, hi, rate(gflops, "{0:f1}", "-"), rate(gbs, "{0:f1}", "-"),
                          rate(pct, "{0:f0}%", "-"), samples,
                          rated || !cost ? "" : "  (too few samples to rate)",
                          sameAs.empty() ? "" : "  (same code as " + sameAs + ")");
        csv << formatv("{0},{1},{2:f4},{3:f4},{4:f4},{5},{6},{7},{8}\n", k.kernel, s, med, lo, hi,
                       rate(gflops, "{0:f2}", ""), rate(gbs, "{0:f2}", ""), rate(pct, "{0:f1}", ""),
                       samples);
        rows.push_back(json::Object{{"kernel", k.kernel},
                                    {"schedule", s},
                                    {"median_ms", med},
                                    {"min_ms", lo},
                                    {"max_ms", hi},
                                    {"gflop_s", rated ? json::Value(gflops) : nullptr},
                                    {"gb_s", rated ? json::Value(gbs) : nullptr},
                                    {"flops_per_call", cost ? cost->flops : 0},
                                    {"bytes_per_call", cost ? cost->bytes : 0},
                                    {"roofline_ms", rooflineMs},
                                    {"roofline_pct", rated ? json::Value(pct) : nullptr},
                                    {"samples", samples},
                                    {"same_code_as", sameAs}});
      }
    }
    return rows;
  }

  /// The reports: the tables on stdout, kernels.csv and results.json in
  /// the output folder.
  Error report(const tfm::rt::ModelLibrary &lib, const Roofline &roof) {
    json::Array modelRows = reportModels();
    std::string csvPath = pathJoin(opt.outDir, "kernels.csv");
    Expected<tfm::AtomicOutputFile> csvFile = tfm::AtomicOutputFile::create(csvPath);
    if (!csvFile)
      return csvFile.takeError();
    json::Array kernelRows = reportKernels(lib, roof, csvFile->os());
    json::Array reads;
    for (const ReadRate &r : roof.reads)
      reads.push_back(json::Object{{"bytes", int64_t(r.bytes)}, {"gb_s", r.gbs}});
    json::Object results{{"config", opt.config},
                         {"threads", opt.threads},
                         {"prompt_tokens", opt.promptTokens},
                         {"decode_tokens", opt.decodeTokens},
                         {"rounds", opt.repeats},
                         {"roofline", json::Object{{"fma_gflop_s", roof.fmaGflops},
                                                   {"int8_dot_gop_s", roof.int8DotGops},
                                                   {"bf16_dot_gflop_s", roof.bf16DotGflops},
                                                   {"amx_int8_gop_s", roof.amxInt8Gops},
                                                   {"amx_bf16_gflop_s", roof.amxBf16Gflops},
                                                   {"vector_isa", roof.vectorIsa},
                                                   {"cache_bytes", int64_t(roof.cacheBytes)},
                                                   {"reads", std::move(reads)}}},
                         {"models", std::move(modelRows)},
                         {"kernels", std::move(kernelRows)}};
    std::string jsonPath = pathJoin(opt.outDir, "results.json");
    if (Error written = joinErrors(
            csvFile->commit(),
            tfm::writeTextFile(jsonPath,
                               formatv("{0:2}", json::Value(std::move(results))).str() + "\n")))
      return written;
    outs() << "\nwritten: " << csvPath << ", " << jsonPath << "\n";
    return Error::success();
  }

  const ComparisonOptions &opt;
  std::vector<std::string> schedules;        // as asked, plain first where not asked for
  bool timePlain = false;                    // plain asked for: timed as well as checked against
  int status = 0;                            // 1 once a schedule failed (leaveOut)
  std::map<std::string, std::string> dirs;   // each compiled schedule's library
  std::map<std::string, double> differences; // from plain's logits
  std::vector<std::string> timed;            // checked, in order
  std::map<std::string, Timings> timings;
};

} // namespace

int tfm::bench::compareSchedules(const ComparisonOptions &opt, MachineRoofline &machine) {
  Expected<int> status = Comparison(opt).run(machine);
  if (!status) {
    errs() << "tfm-bench: error: " << toString(status.takeError()) << "\n";
    return 1;
  }
  return *status;
}
