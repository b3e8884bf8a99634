//===- tfm-bench.cpp - Compiled models side by side against the roofline -===//
//
//   tfm-bench --weights W --threads 2 generated/m-fast generated/m-plain
//
// Each folder is one compilation of the same config (typically with a
// different --schedule or --target). For each, after one untimed warm-up
// run, the benchmark runs a fresh sequence `--repeat` times: a prefill of --prompt tokens, then --decode
// single-token steps, and reports the medians. Decode reads every weight
// once per token, so its ceiling is this machine's read bandwidth, measured
// here first with the same number of threads.
//
//===----------------------------------------------------------------------===//
#include "tfm/common/CommandLine.h"
#include "tfm/runtime/ModelLibrary.h"
#include "tfm/runtime/OptionNames.h"
#include "tfm/runtime/Session.h"
#include "tfm/runtime/WeightLoader.h"

#include "llvm/Support/CommandLine.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/raw_ostream.h"

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <memory>
#include <thread>
#include <vector>

using namespace llvm;
using Clock = std::chrono::steady_clock;

namespace {

/// The command line, read once in main.
struct Options {
  std::vector<std::string> modelDirs;
  std::string weightsPath;
  int threads = 2, promptTokens = 128, decodeTokens = 64, repeats = 5;
};
Options opt;

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  size_t n = v.size();
  return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

/// Read bandwidth in GB/s: `threads` threads each summing its share of a
/// 1 GiB array, best of three passes.
double measureReadBandwidth(int nThreads) {
  const size_t count = (size_t(1) << 30) / sizeof(float);
  std::vector<float> data(count, 1.0f);
  double best = 0;
  for (int pass = 0; pass < 3; ++pass) {
    std::vector<double> sums(nThreads);
    auto start = Clock::now();
    std::vector<std::thread> pool;
    for (int t = 0; t < nThreads; ++t)
      pool.emplace_back([&, t] {
        size_t begin = count / nThreads * t, end = count / nThreads * (t + 1);
        float acc[16] = {};
        for (size_t i = begin; i < end; i += 16)
          for (int j = 0; j < 16; ++j)
            acc[j] += data[i + j];
        double s = 0;
        for (float a : acc)
          s += a;
        sums[t] = s;
      });
    for (auto &t : pool)
      t.join();
    double seconds = std::chrono::duration<double>(Clock::now() - start).count();
    double total = 0;
    for (double s : sums)
      total += s;
    if (total != double(count)) // keeps the reads alive
      errs() << "tfm-bench: bandwidth probe summed " << total << "\n";
    best = std::max(best, double(count * sizeof(float)) / seconds / 1e9);
  }
  return best;
}

struct Result {
  double prefill = 0, decode = 0; // tokens/s, medians
};

Expected<Result> bench(const std::string &dir, double &weightBytes, std::string &schedule,
                       std::string &target) {
  auto lib = tfm::rt::ModelLibrary::open(dir);
  if (!lib)
    return lib.takeError();
  const tfm_model &model = (*lib)->model();
  auto weights = tfm::rt::bindWeights(opt.weightsPath, (*lib)->manifest(), tfm::rt::LoadOptions{});
  if (!weights)
    return weights.takeError();
  schedule = (*lib)->manifest().scheduleSummary();
  target = model.target;
  // Bytes a decode step reads: every weight once, except an untied
  // embedding table, of which it reads one row.
  const auto &tensors = (*lib)->manifest().tensors;
  bool untied = std::any_of(tensors.begin(), tensors.end(),
                            [](const auto &t) { return t.name == "output.weight"; });
  weightBytes = 0;
  for (const auto &t : tensors)
    if (!(untied && t.name == "token_embd.weight"))
      weightBytes += double(t.byteCount()); // in the type the kernels read
  if (opt.promptTokens + opt.decodeTokens > int(model.context_length))
    return createStringError(inconvertibleErrorCode(),
                             "--prompt + --decode = %d exceeds the context (%u)",
                             opt.promptTokens + opt.decodeTokens, model.context_length);
  model.set_num_threads(opt.threads);

  std::vector<int32_t> prompt(opt.promptTokens);
  uint64_t state = 42;
  for (int32_t &t : prompt) {
    state = state * 6364136223846793005ull + 1442695040888963407ull;
    t = int32_t((state >> 33) % model.vocab_size);
  }
  std::vector<double> prefillRates, decodeRates;
  // Run -1 is not timed: it pages in the mapped weights and starts the
  // thread pool, as llama-bench's warm-up run does.
  for (int run = -1; run < opt.repeats; ++run) {
    auto session = tfm::rt::Session::create(model, weights->pointers);
    if (!session)
      return session.takeError();
    auto start = Clock::now();
    if (Error e = (*session)->prefill(prompt))
      return std::move(e);
    double prefillSeconds = std::chrono::duration<double>(Clock::now() - start).count();
    start = Clock::now();
    int32_t token = prompt.back();
    for (int i = 0; i < opt.decodeTokens; ++i) {
      if (Error e = (*session)->decode(token))
        return std::move(e);
      token = int32_t((token + 7919) % model.vocab_size);
    }
    double decodeSeconds = std::chrono::duration<double>(Clock::now() - start).count();
    if (run < 0)
      continue;
    prefillRates.push_back(opt.promptTokens / prefillSeconds);
    decodeRates.push_back(opt.decodeTokens / decodeSeconds);
  }
  return Result{median(prefillRates), median(decodeRates)};
}

} // namespace

int main(int argc, char **argv) {
  // libLLVM registers its own -threads; ours takes the name.
  tfm::rt::claimOptionName("threads");
  cl::OptionCategory category("tfm-bench options");
  cl::list<std::string> modelDirs(cl::Positional, cl::OneOrMore, cl::desc("<model dir>..."),
                                  cl::cat(category));
  cl::opt<std::string> weightsPath("weights", cl::Required,
                                   cl::desc("Weights: safetensors, GGUF or llama2.c (tfm-weights writes any)"),
                                   cl::cat(category));
  cl::opt<int> threads("threads", cl::desc("Threads (default 2)"), cl::init(2), cl::cat(category));
  cl::opt<int> promptTokens("prompt", cl::desc("Prefill length (default 128)"), cl::init(128),
                            cl::cat(category));
  cl::opt<int> decodeTokens("decode", cl::desc("Decode steps (default 64)"), cl::init(64),
                            cl::cat(category));
  cl::opt<int> repeats("repeat", cl::desc("Runs per model; medians are reported (default 5)"),
                       cl::init(5), cl::cat(category));
  cl::HideUnrelatedOptions(category);
  tfm::parseCommandLine(argc, argv, "tfm-bench: compiled models side by side\n");
  opt = {std::vector<std::string>(modelDirs.begin(), modelDirs.end()),
         weightsPath,
         threads,
         promptTokens,
         decodeTokens,
         repeats};
  if (opt.threads < 1 || opt.repeats < 1 || opt.promptTokens < 1 || opt.decodeTokens < 1) {
    errs() << "tfm-bench: error: --threads, --repeat, --prompt and --decode must be >= 1\n";
    return 1;
  }
  double bandwidth = measureReadBandwidth(opt.threads);
  outs() << formatv("read bandwidth, {0} threads: {1:f1} GB/s\n", opt.threads, bandwidth);
  outs() << formatv("{0,-28} {1,-8} {2,14} {3,13} {4,12} {5,10}\n", "model", "schedule",
                    "prefill tok/s", "decode tok/s", "decode GB/s", "% of read");
  int status = 0;
  for (const std::string &dir : opt.modelDirs) {
    double bytes = 0;
    std::string schedule, target;
    Expected<Result> r = bench(dir, bytes, schedule, target);
    if (!r) {
      errs() << "tfm-bench: error: " << dir << ": " << toString(r.takeError()) << "\n";
      status = 1;
      continue;
    }
    double gbs = r->decode * bytes / 1e9;
    outs() << formatv("{0,-28} {1,-8} {2,14:f1} {3,13:f1} {4,12:f1} {5,9:f0}%\n", dir, schedule,
                      r->prefill, r->decode, gbs, 100.0 * gbs / bandwidth);
  }
  outs() << formatv("medians of {0} runs: prefill {1} tokens, then {2} decode steps\n", opt.repeats,
                    opt.promptTokens, opt.decodeTokens);
  return status;
}
