//===- tfm-bench.cpp - Compiled models side by side against the roofline -===//
//
//   tfm-bench --weights W --threads 2 generated/m-fast generated/m-plain
//
// Each folder is one compilation of the same config (typically with a
// different --schedule or --target). For each, after one untimed warm-up
// run, the benchmark runs a fresh sequence `--repeat` times: a prefill of
// --prompt tokens, then --decode single-token steps, and reports the
// medians. Each is held against this machine's roofline, measured first
// with the same number of threads (Roofline.h): prefill's FLOPs against the
// FMA peak; decode, which reads every weight once per token, against the
// read bandwidth measured for a working set of the weights' size. A GPU
// library is held against its device's multiply-add peak and copy
// bandwidth instead, measured through the library (tfm_model's
// measure_device_fma and measure_device_copy). With --reference,
// each folder's logits are first checked against another compilation's of
// the same config (a GPU library against the CPU's), and a folder that
// computes otherwise is not timed.
//
//===----------------------------------------------------------------------===//
#include "LogitsCheck.h"
#include "Roofline.h"
#include "RooflineCache.h"
#include "ScheduleComparison.h"

#include "tfm/common/BoundedFile.h"
#include "tfm/common/ChildProcess.h"
#include "tfm/common/CommandLine.h"
#include "tfm/common/Failure.h"
#include "tfm/common/Targets.h"
#include "tfm/common/ModelSpec.h"
#include "tfm/common/TensorNames.h"
#include "tfm/runtime/ModelCache.h"
#include "tfm/runtime/ModelLibrary.h"
#include "tfm/runtime/OptionNames.h"
#include "tfm/runtime/Session.h"
#include "tfm/runtime/WeightLoader.h"

#include "llvm/Support/CommandLine.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/FileUtilities.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/raw_ostream.h"

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>
#include <tuple>
#include <vector>

using namespace llvm;
using Clock = std::chrono::steady_clock;

using tfm::failure;

namespace {

/// The command line, read once in main.
struct Options {
  std::vector<std::string> modelDirs;
  std::string weightsPath;
  int threads = 2, promptTokens = 128, decodeTokens = 64, repeats = 5;
  tfm::rt::WeightMemory weightMemory = tfm::rt::WeightMemory::Mapped;
  std::vector<int> depths{0}; // tokens already in the context when timing starts
  std::string referenceDir;     // --reference: whose logits every folder's must match
  std::optional<int> device;    // --device: a GPU library's device
};
Options opt;

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  size_t n = v.size();
  return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

/// FLOPs of a prefill of `tokens` tokens after `depth` others: two per
/// multiply-add of every layer projection for every token, of the head for
/// the last token only (prefill returns its logits alone), and of
/// attention's q.k and weights.v over the positions each token attends to.
/// An encoder's (its encode) has no head, and every token attends to all;
/// an encoder-decoder's encode runs the encoder's layers and the decoder's
/// cross-attention keys and values.
/// Whether an encoder-decoder's encode reads tensor `id` (its encoder's,
/// the decoder's cross-attention keys and values, the embedding); its
/// decode steps read the others.
bool readByEncode(const tfm::TensorId &id) {
  return id.stack == tfm::Stack::Encoder || id.role == tfm::TensorRole::CrossAttnK ||
         id.role == tfm::TensorRole::CrossAttnV || id.role == tfm::TensorRole::TokenEmbedding;
}

double prefillFlops(const tfm::ModelSpec &spec, int tokens, int depth) {
  double perToken = 0, head = 0;
  bool encoding = spec.architecture != tfm::Architecture::Decoder;
  for (const tfm::ModelTensor &t : tfm::modelTensors(spec)) {
    if (t.shape.size() != 2 || tfm::kernelRoleOf(t.id.role).empty() ||
        (spec.encoderDecoder() && !readByEncode(t.id)))
      continue;
    double macs = double(t.shape[0]) * double(t.shape[1]);
    if (tfm::kernelRoleOf(t.id.role) == "logits")
      head = encoding ? 0.0 : macs; // the untied head, or the tied embedding
    else if (tfm::isLayerRole(t.id.role))
      perToken += macs;
  }
  double keysAttended = encoding ? double(tokens) * tokens
                                 : double(tokens) * depth + double(tokens) * (tokens + 1) / 2;
  int64_t layers = spec.encoderDecoder() ? spec.nEncoderLayers : spec.nLayers;
  double attention = 2.0 * double(layers * spec.nHeads * spec.headDim) * keysAttended;
  return 2.0 * (perToken * tokens + head + attention);
}

struct Result {
  double prefill = 0, decode = 0; // tokens/s, medians
  double prefillFlops = 0;        // per prefill of --prompt tokens
  double decodeBytes = 0;         // read by each decode step: weights and KV cache
  double weightsReadGBs = 0;      // reading those weights where they lie (Roofline.h)
  std::string schedule;
  tfm::Products products = tfm::Products::F32; // what prefill's products multiply
  bool gpu = false;
  double deviceCopyGBs = 0;   // a GPU library: its device's copy bandwidth, read + written
  double deviceFmaGflops = 0; // and its f32 multiply-add peak
};

/// What a GPU library copies to measure its device's bandwidth: past any
/// GPU's last-level cache (50 MiB on an H100) many times over.
constexpr uint64_t kDeviceCopyBytes = 256ull << 20;
constexpr int kDeviceCopyRepeats = 10;
/// Runs of the library's multiply-add probe (8.6 GFLOP each).
constexpr int kDeviceFmaRepeats = 10;

/// Every --depth, with --prompt and --decode, fits the model's context.
Error checkContext(const std::string &dir, const tfm_model &model) {
  bool deeper = std::any_of(opt.depths.begin(), opt.depths.end(), [](int d) { return d > 0; });
  if (model.encode && !model.prefill && opt.decodeTokens > 0)
    return failure(dir + ": an encoder (" + model.name +
                   ") encodes one text a call: pass --decode 0");
  if (model.encode && deeper)
    return failure(dir + ": " + model.name + " encodes its prompt from position 0: pass no "
                   "--depth");
  if (model.encode && opt.promptTokens > int(model.prefill_chunk))
    return failure(dir + ": --prompt " + llvm::Twine(opt.promptTokens) +
                   " tokens, more than the encoder takes in one call (" +
                   llvm::Twine(model.prefill_chunk) + ")");
  for (int depth : opt.depths)
    if (depth + opt.promptTokens + opt.decodeTokens > int(model.context_length))
      return failure(dir + ": --depth " + llvm::Twine(depth) + " + --prompt " +
                     llvm::Twine(opt.promptTokens) + " + --decode " +
                     llvm::Twine(opt.decodeTokens) + " = " +
                     llvm::Twine(depth + opt.promptTokens + opt.decodeTokens) +
                     " positions, more than the context of " +
                     llvm::Twine(model.context_length));
  return Error::success();
}

/// The timed prompt: a decoder's prefill, an encoder's encode (its
/// embeddings' throughput, as llama-bench's prompt processing of a BERT),
/// an encoder-decoder's encode of it as the source (the decode steps then
/// attend to it).
Error runPrompt(tfm::rt::Session &session, const std::vector<int32_t> &prompt) {
  if (!session.isEncoder() && !session.hasSource())
    return session.prefill(prompt);
  Expected<std::vector<float>> hidden = session.encode(prompt);
  return hidden ? Error::success() : hidden.takeError();
}

/// A prefill of --prompt tokens, then --decode steps, after an untimed
/// prefill of `depth` tokens (as llama-bench's -d).
Expected<Result> bench(const std::string &dir, int depth) {
  auto lib = tfm::rt::ModelLibrary::open(dir);
  if (!lib)
    return lib.takeError();
  if (opt.device && (*lib)->onGpu())
    if (Error e = (*lib)->selectDevice(*opt.device))
      return std::move(e);
  const tfm_model &model = (*lib)->model();
  auto weights = tfm::rt::bindWeights(opt.weightsPath, (*lib)->manifest(),
                                      tfm::rt::LoadOptions{true, opt.weightMemory});
  if (!weights)
    return weights.takeError();
  Result result;
  result.gpu = (*lib)->onGpu();
  result.schedule = (*lib)->manifest().scheduleSummary();
  for (const tfm::KernelSchedule &k : (*lib)->manifest().kernels)
    if (StringRef(k.kernel).starts_with("prefill_") && k.products != tfm::Products::F32)
      result.products = k.products;
  const tfm::ModelSpec &spec = (*lib)->manifest().config;
  result.prefillFlops = prefillFlops(spec, opt.promptTokens, depth);
  // Bytes a decode step reads: every weight once, except an untied
  // embedding table, of which it reads one row.
  const auto &tensors = (*lib)->manifest().tensors;
  bool untied = std::any_of(tensors.begin(), tensors.end(),
                            [](const auto &t) { return t.name == "output.weight"; });
  std::vector<tfm::bench::ByteRange> decodeWeights;
  for (size_t i = 0; i < tensors.size(); ++i) {
    std::optional<tfm::TensorId> id = tfm::parseTensorName(tensors[i].name);
    bool encodeOnly = spec.encoderDecoder() && id && readByEncode(*id) &&
                      id->role != tfm::TensorRole::TokenEmbedding;
    if (!(untied && tensors[i].name == "token_embd.weight") && !encodeOnly) {
      result.decodeBytes += double(tensors[i].byteCount()); // in the type the kernels read
      decodeWeights.push_back({weights->pointers[i], size_t(tensors[i].byteCount())});
    }
  }
  // And the keys and values of every position before it, of every layer;
  // an encoder-decoder's decoder layers also read the source's (its
  // caches: an encoder layer's pair, a decoder layer's own and its
  // source's, as many rows each where the source is as long as the
  // context).
  double positions = depth + opt.promptTokens + opt.decodeTokens / 2.0;
  double perPosition = double(model.kv_cache_bytes) / double(model.context_length);
  if (spec.encoderDecoder())
    perPosition *= double(spec.nLayers) / double(spec.nEncoderLayers + 2 * spec.nLayers);
  result.decodeBytes += perPosition * positions;
  model.set_num_threads(opt.threads);

  std::vector<int32_t> context = tfm::bench::benchPrompt(depth + opt.promptTokens, model.vocab_size);
  std::vector<int32_t> before(context.begin(), context.begin() + depth),
      prompt(context.begin() + depth, context.end());
  std::vector<double> prefillRates, decodeRates;
  // Run -1 is not timed: it pages in the mapped weights, the cache and the
  // scratch arena, and starts the thread pool, as llama-bench's warm-up run
  // does. Like llama-bench, the runs share one session, started afresh
  // (its cache emptied) before each, so no run pays for first touching
  // the memory the last one used.
  auto session = tfm::rt::Session::create(model, weights->pointers);
  if (!session)
    return session.takeError();
  for (int run = -1; run < opt.repeats; ++run) {
    (*session)->reset();
    if (depth > 0)
      if (Error e = (*session)->prefill(before))
        return std::move(e);
    auto start = Clock::now();
    if (Error e = runPrompt(**session, prompt))
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
    decodeRates.push_back(opt.decodeTokens > 0 ? opt.decodeTokens / decodeSeconds : 0.0);
  }
  result.prefill = median(prefillRates);
  result.decode = median(decodeRates);
  if (result.gpu) {
    Expected<double> gbs = (*lib)->measureDeviceCopy(kDeviceCopyBytes, kDeviceCopyRepeats);
    if (!gbs)
      return gbs.takeError();
    result.deviceCopyGBs = *gbs;
    Expected<double> gflops = (*lib)->measureDeviceFma(kDeviceFmaRepeats);
    if (!gflops)
      return gflops.takeError();
    result.deviceFmaGflops = *gflops;
    return result;
  }
  // After the runs, so that the weights are where decode left them.
  result.weightsReadGBs = tfm::bench::measureRangesRead(decodeWeights, opt.threads);
  return result;
}

/// The target of tfmc options `args` (--target X or --target=X) when its
/// kernels run on a GPU.
std::optional<std::string> gpuTargetIn(const std::vector<std::string> &args) {
  for (size_t i = 0; i < args.size(); ++i) {
    StringRef arg = args[i], name;
    if (arg == "--target" && i + 1 < args.size())
      name = args[i + 1];
    else if (!arg.consume_front("--target="))
      continue;
    else
      name = arg;
    Expected<std::string> target = tfm::resolveTarget(name);
    if (!target) {
      consumeError(target.takeError()); // tfmc names it when it compiles
      continue;
    }
    if (tfm::targetDevice(*target) != tfm::TargetDevice::Cpu)
      return name.str();
  }
  return std::nullopt;
}

/// A library for a GPU against the reference on the CPU (--reference): f32
/// sums in another order, through another device's exp and tanh, over many
/// layers, stay within 1e-3 of the largest logit; a wrong kernel is off by
/// tenths.
constexpr double kOtherDeviceTolerance = 1e-3;

/// Checks `dir` against the --reference logits: the relative difference, or
/// an error when it is over the tolerance of the two compilations.
Expected<double> differenceFromReference(const std::string &dir,
                                         const std::vector<float> &reference) {
  auto lib = tfm::rt::ModelLibrary::open(dir);
  if (!lib)
    return lib.takeError();
  double tolerance = tfm::bench::checkTolerance((*lib)->manifest());
  if ((*lib)->onGpu())
    tolerance = std::max(tolerance, kOtherDeviceTolerance);
  Expected<std::vector<float>> logits =
      tfm::bench::checkLogits(dir, opt.weightsPath, opt.promptTokens, opt.device);
  if (!logits)
    return logits.takeError();
  if (logits->size() != reference.size())
    return failure("its vocabulary differs from --reference " + opt.referenceDir + "'s");
  double difference = tfm::bench::relativeDifference(*logits, reference);
  if (difference > tolerance)
    return failure(formatv("computes other logits than --reference {0} (relative difference "
                           "{1:e2}, expected at most {2:e1}); not timed",
                           opt.referenceDir, difference, tolerance)
                       .str());
  return difference;
}

/// Every model folder opens and the weights bind to each, before anything
/// is measured; returns how many hold a library for a GPU, whose rates the
/// CPU's roofline does not bound.
Expected<size_t> checkFolders() {
  size_t onGpu = 0;
  for (const std::string &dir : opt.modelDirs) {
    auto lib = tfm::rt::ModelLibrary::open(dir);
    if (!lib)
      return lib.takeError();
    auto weights = tfm::rt::bindWeights(opt.weightsPath, (*lib)->manifest(),
                                        tfm::rt::LoadOptions{true, opt.weightMemory});
    if (!weights)
      return tfm::failure(dir + ": " + toString(weights.takeError()));
    if (Error e = checkContext(dir, (*lib)->model()))
      return e;
    onGpu += (*lib)->onGpu();
  }
  return onGpu;
}

void printRow(const std::string &dir, int depth, const Result &r,
              const std::optional<double> &difference, const tfm::bench::Roofline &roof) {
  double gflops = r.prefill / opt.promptTokens * r.prefillFlops / 1e9;
  double gbs = r.decode * r.decodeBytes / 1e9;
  // A GPU's rates are held against its device's multiply-add peak and copy
  // bandwidth.
  double peakGflops = r.gpu ? r.deviceFmaGflops : roof.computeGops(r.products, true);
  std::string peak = formatv("{0:f0}%", peakGflops > 0 ? 100.0 * gflops / peakGflops : 0.0).str();
  double readRoof = r.gpu ? r.deviceCopyGBs : roof.readGBs(r.decodeBytes);
  double wall = r.gpu ? r.deviceCopyGBs : r.weightsReadGBs;
  const char *where = r.gpu ? "device" : r.decodeBytes <= roof.cacheBytes ? "cache" : "memory";
  outs() << formatv("{0,-28} {1,-8} {2,6} {3,14:f1} {4,8:f1} {5,6} {6,13:f1} {7,12:f1} {8,6:f0}% "
                    "{9,-6} {10,12:f1} {11,8:f0}%",
                    dir, r.schedule, depth, r.prefill, gflops, peak, r.decode, gbs,
                    readRoof > 0 ? 100.0 * gbs / readRoof : 0.0, where, wall,
                    wall > 0 ? 100.0 * gbs / wall : 0.0);
  if (difference)
    outs() << formatv(" {0,10:e2}", *difference);
  outs() << "\n";
}

/// The schedule names tfmc knows (tfmc --list-schedules: a name first on
/// each line).
Expected<std::vector<std::string>> knownSchedules() {
  SmallString<128> listing;
  if (std::error_code ec = sys::fs::createTemporaryFile("tfm-bench-schedules", "txt", listing))
    return failure("cannot create a temporary file: " + ec.message());
  FileRemover remove(listing);
  if (Error e = tfm::runProgram({tfm::rt::compilerPath(), "--list-schedules"},
                                std::string(listing), std::nullopt))
    return std::move(e);
  auto text = tfm::readBoundedFile(std::string(listing), 1 << 20, "schedule list");
  if (!text)
    return text.takeError();
  SmallVector<StringRef> lines;
  (*text)->getBuffer().split(lines, '\n', -1, false);
  std::vector<std::string> names;
  for (StringRef line : lines)
    names.push_back(line.split(' ').first.str());
  return names;
}

/// What --config compares, checked before anything compiles or is
/// measured: the config, the weights and every schedule's name.
Error checkComparisonInputs(const std::string &config, const std::vector<std::string> &schedules) {
  if (Expected<tfm::ModelSpec> spec = tfm::loadModelSpec(config); !spec)
    return spec.takeError();
  if (Expected<tfm::rt::WeightFormat> format = tfm::rt::detectWeightFormat(opt.weightsPath);
      !format)
    return format.takeError();
  Expected<std::vector<std::string>> known = knownSchedules();
  if (!known)
    return known.takeError();
  for (const std::string &s : schedules)
    if (std::find(known->begin(), known->end(), s) == known->end())
      return failure("--schedules: unknown schedule '" + s + "'; tfmc has " +
                     join(*known, ", "));
  return Error::success();
}

/// Times every folder, then prints the table; the CPU's roofline only when
/// a folder holds a CPU library.
int benchModels(tfm::bench::MachineRoofline *machine) {
  int status = 0;
  if (machine)
    if (Expected<tfm::bench::Roofline> before = machine->before(); !before) {
      errs() << "tfm-bench: error: " << toString(before.takeError()) << "\n";
      return 1;
    }
  std::optional<std::vector<float>> reference;
  if (!opt.referenceDir.empty()) {
    Expected<std::vector<float>> logits =
        tfm::bench::checkLogits(opt.referenceDir, opt.weightsPath, opt.promptTokens, opt.device);
    if (!logits) {
      errs() << "tfm-bench: error: --reference " << opt.referenceDir << ": "
             << toString(logits.takeError()) << "\n";
      return 1;
    }
    reference = std::move(*logits);
  }
  std::vector<std::tuple<std::string, int, Result, std::optional<double>>> results;
  for (const std::string &dir : opt.modelDirs) {
    std::optional<double> difference;
    if (reference) {
      Expected<double> d = differenceFromReference(dir, *reference);
      if (!d) {
        errs() << "tfm-bench: error: " << dir << ": " << toString(d.takeError()) << "\n";
        status = 1;
        continue;
      }
      difference = *d;
    }
    for (int depth : opt.depths) {
      Expected<Result> r = bench(dir, depth);
      if (!r) {
        errs() << "tfm-bench: error: " << dir << ": " << toString(r.takeError()) << "\n";
        status = 1;
        continue;
      }
      results.emplace_back(dir, depth, *r, difference);
    }
  }
  if (results.empty()) // the errors above say why; no table of nothing
    return status;
  // A measured roofline is measured again after the runs
  // (RooflineCache.h).
  tfm::bench::Roofline roof;
  if (machine) {
    Expected<tfm::bench::Roofline> after = machine->after();
    if (!after) {
      errs() << "tfm-bench: error: " << toString(after.takeError()) << "\n";
      return 1;
    }
    roof = *after;
  }
  for (const auto &[dir, depth, r, difference] : results)
    if (r.gpu)
      outs() << formatv("device roofline of {0}: f32 multiply-add peak {1:f1} GFLOP/s; copy "
                        "{2:f1} GB/s, read + written ({3} MiB copied {4} times on the device)\n",
                        dir, r.deviceFmaGflops, r.deviceCopyGBs, kDeviceCopyBytes >> 20,
                        kDeviceCopyRepeats);
  outs() << formatv("{0,-28} {1,-8} {2,6} {3,14} {4,8} {5,6} {6,13} {7,12} {8,13} {9,13} "
                    "{10,9}{11}\n",
                    "model", "schedule", "depth", "prefill tok/s", "GFLOP/s", "% peak",
                    "decode tok/s", "decode GB/s", "% of read", "weights GB/s", "% of it",
                    reference ? "  vs ref" : "");
  for (const auto &[dir, depth, r, difference] : results)
    printRow(dir, depth, r, difference, roof);
  outs() << formatv("medians of {0} runs: prefill {1} tokens, then {2} decode steps, after "
                    "an untimed prefill of `depth` tokens; `weights GB/s` reads the weights "
                    "where they lie ({3}), after the runs, or a GPU's device copies",
                    opt.repeats, opt.promptTokens, opt.decodeTokens,
                    opt.weightMemory == tfm::rt::WeightMemory::Mapped
                        ? "the mapped file" : "--no-mmap's copy");
  if (reference)
    outs() << formatv("; `vs ref` is the largest logit difference from --reference {0}, "
                      "relative to its largest logit",
                      opt.referenceDir);
  outs() << "\n";
  return status;
}


} // namespace

int bench(int argc, char **argv) {
  // libLLVM registers its own -threads; ours takes the name.
  tfm::rt::claimOptionName("threads");
  cl::OptionCategory category("tfm-bench options");
  cl::list<std::string> modelDirs(cl::Positional, cl::ZeroOrMore, cl::desc("<model dir>..."),
                                  cl::cat(category));
  cl::opt<std::string> weightsPath(
      "weights", cl::Required,
      cl::desc("Weights: safetensors, GGUF or llama2.c (tfm-weights writes any)"),
      cl::cat(category));
  cl::opt<std::string> config(
      "config",
      cl::desc("Compile this config once per --schedules entry and compare them kernel "
               "by kernel, after checking each against the plain schedule"),
      cl::cat(category));
  cl::opt<std::string> schedules("schedules",
                                 cl::desc("With --config: the schedules compared (default fast)"),
                                 cl::init("fast"), cl::cat(category));
  cl::opt<std::string> kernels(
      "kernels", cl::desc("With --config: show only kernels whose names contain one of these"),
      cl::cat(category));
  cl::opt<std::string> outDir(
      "out",
      cl::desc("With --config: where the libraries, CSV and JSON go (default "
               "tfm-bench-out/<config name>)"),
      cl::cat(category));
  cl::opt<std::string> tuningFile(
      "tuning-file",
      cl::desc("With --config: record each kernel's fastest schedule in this tuning file "
               "(tfmc --tune does; the first of --schedules wins unless another is faster by "
               "over 3%)"),
      cl::cat(category));
  cl::opt<std::string> tfmcArgs(
      "tfmc-args",
      cl::desc("With --config: options for every compile, separated by spaces (e.g. "
               "\"--dtype q8_0 --kv-dtype f16\")"),
      cl::cat(category));
  cl::opt<bool> leaveOutFailing(
      "leave-out-failing",
      cl::desc("With --config: a schedule (other than the first) that Halide refuses or that "
               "computes other logits than plain is left out with a note instead of failing"),
      cl::cat(category));
  cl::opt<bool> ratesOnly(
      "rates", cl::desc("For scripts: one model folder, no roofline; print only 'rates PREFILL "
                        "DECODE' (tok/s, medians) at the first --depth"),
      cl::cat(category));
  cl::opt<std::string> depths(
      "depth", cl::desc("Tokens already in the context when the prefill and decode timed start, "
                        "one run for each of a list such as 0,1024,4096 (default 0)"),
      cl::init("0"), cl::cat(category));
  cl::opt<std::string> reference(
      "reference",
      cl::desc("Check each model folder's logits against this folder's (another compilation "
               "of the same config, such as the CPU library beside a GPU one) before timing it"),
      cl::cat(category));
  cl::opt<int> device("device",
                      cl::desc("The device of the GPU libraries among the folders: 0, 1, ... in "
                               "their driver's order (default: the first)"),
                      cl::cat(category));
  cl::opt<int> threads("threads", cl::desc("Threads (default 2)"), cl::init(2), cl::cat(category));
  cl::opt<bool> noMmap("no-mmap",
                       cl::desc("Read the weights into the process's own memory instead of "
                                "mapping the file (tfm-run --no-mmap)"),
                       cl::cat(category));
  cl::opt<int> promptTokens("prompt", cl::desc("Prefill length (default 128)"), cl::init(128),
                            cl::cat(category));
  cl::opt<int> decodeTokens("decode",
                            cl::desc("Decode steps (default 64; 0: the prompt alone, an "
                                     "encoder's)"),
                            cl::init(64),
                            cl::cat(category));
  cl::opt<int> repeats("repeat",
                       cl::desc("Runs per model, or rounds with --config; medians are reported "
                                "(default 5)"),
                       cl::init(5), cl::cat(category));
  cl::opt<bool> showProfiler(
      "show-profiler",
      cl::desc("With --config: print Halide's profiler reports of the logits checks on the "
               "terminal (default: in <out>/<schedule>.check.log)"),
      cl::cat(category));
  cl::opt<bool> remeasure("remeasure",
                          cl::desc("Measure this machine's roofline again rather than use the "
                                   "one kept from an earlier run (in the cache folder)"),
                          cl::cat(category));
  cl::HideUnrelatedOptions(category);
  tfm::parseCommandLine(argc, argv, "tfm-bench: compiled models side by side\n");
  opt = {std::vector<std::string>(modelDirs.begin(), modelDirs.end()),
         weightsPath,
         threads,
         promptTokens,
         decodeTokens,
         repeats};
  opt.weightMemory = noMmap ? tfm::rt::WeightMemory::Resident : tfm::rt::WeightMemory::Mapped;
  opt.referenceDir = reference;
  if (device.getNumOccurrences()) {
    if (device < 0) {
      errs() << "tfm-bench: error: --device is " << device << ", expected 0 or more\n";
      return 1;
    }
    opt.device = device;
  }
  SmallVector<StringRef> argWords;
  StringRef(tfmcArgs).split(argWords, ' ', -1, /*KeepEmpty=*/false);
  std::vector<std::string> compileArgs(argWords.begin(), argWords.end());
  if (std::optional<std::string> gpu = gpuTargetIn(compileArgs)) {
    errs() << "tfm-bench: error: --tfmc-args names the GPU target " << *gpu
           << ": --config times each kernel with Halide's profiler, which sees only the CPU's "
              "side of a GPU launch; compile the GPU library and the CPU's, and pass their "
              "folders with --reference (the CPU's) instead\n";
    return 1;
  }
  if (!config.empty() && (opt.device || !opt.referenceDir.empty())) {
    errs() << "tfm-bench: error: --device and --reference go with model folders, not --config\n";
    return 1;
  }
  // --decode 0 times the prompt alone: an encoder's (BERT's) whole work.
  if (opt.threads < 1 || opt.repeats < 1 || opt.promptTokens < 1 || opt.decodeTokens < 0) {
    errs() << "tfm-bench: error: --threads, --repeat and --prompt must be >= 1, --decode "
              ">= 0\n";
    return 1;
  }
  if (config.empty() == opt.modelDirs.empty()) {
    errs() << "tfm-bench: error: give model folders, or --config (not both)\n";
    return 1;
  }
  opt.depths.clear();
  for (const std::string &d : tfm::splitCommaList(depths)) {
    int depth = -1;
    if (StringRef(d).getAsInteger(10, depth) || depth < 0) {
      errs() << "tfm-bench: error: --depth: found '" << d
             << "', expected non-negative token counts separated by commas\n";
      return 1;
    }
    opt.depths.push_back(depth);
  }
  if (opt.depths.empty())
    opt.depths.push_back(0);
  // Everything given is checked before anything is measured.
  Expected<size_t> onGpu = config.empty() ? checkFolders() : size_t(0);
  if (!onGpu) {
    errs() << "tfm-bench: error: " << toString(onGpu.takeError()) << "\n";
    return 1;
  }
  if (opt.device && *onGpu == 0) {
    errs() << "tfm-bench: error: --device " << *opt.device
           << " is given, and no model folder holds a GPU library\n";
    return 1;
  }
  if (ratesOnly) {
    Expected<Result> r = bench(opt.modelDirs.front(), opt.depths.front());
    if (!r) {
      errs() << "tfm-bench: error: " << toString(r.takeError()) << "\n";
      return 1;
    }
    outs() << formatv("rates {0} {1}\n", r->prefill, r->decode);
    return 0;
  }
  if (config.empty() && *onGpu == opt.modelDirs.size())
    return benchModels(nullptr); // the device's roofline only
  if (!config.empty())
    if (Error e = checkComparisonInputs(config, tfm::splitCommaList(schedules))) {
      errs() << "tfm-bench: error: " << toString(std::move(e)) << "\n";
      return 1;
    }
  tfm::bench::MachineRoofline machine(opt.threads, remeasure);
  if (config.empty())
    return benchModels(&machine);
  static int anchor;
  tfm::bench::ComparisonOptions comparison{
      config,
      weightsPath,
      outDir.empty() ? "tfm-bench-out/" + sys::path::stem(config).str() : std::string(outDir),
      tfm::splitCommaList(schedules),
      tfm::splitCommaList(kernels),
      sys::fs::getMainExecutable(argv[0], &anchor),
      opt.threads,
      opt.promptTokens,
      opt.decodeTokens,
      opt.repeats};
  comparison.tfmcArgs = compileArgs;
  comparison.tuningFile = tuningFile;
  comparison.leaveOutFailing = leaveOutFailing;
  comparison.showProfiler = showProfiler;
  return tfm::bench::compareSchedules(comparison, machine);
}

int main(int argc, char **argv) {
  return tfm::finishStandardOutput(bench(argc, argv), "tfm-bench");
}
