//===- tfmc.cpp - Compile one transformer to a native library -------------===//
//
//   tfmc configs/llama2-7b.json -o generated/llama2-7b
//   tfmc configs/llama2-7b.json --dtype q8_0
//   tfmc configs/llama2-7b.json --weights-like llama-2-7b.Q4_K_M.gguf
//   tfmc model.mlir -o out        (tfm IR of any stage, e.g. from --emit-mlir)
//   tfmc configs/gpt2-small.json --tune   (time the schedules per kernel here first)
//
// Parses the config (or the IR), lowers it through the tfm dialect and pass
// pipeline, compiles every kernel with Halide for the target, and links
// lib<name>.so (and with --emit exe a standalone executable).
//
//===----------------------------------------------------------------------===//
#include "Tune.h"

#include "tfm/Codegen/LibraryWriter.h"
#include "tfm/Lowering/LowerToProgram.h"
#include "tfm/Program/ScheduleNames.h"
#include "tfm/common/CommandLine.h"
#include "tfm/common/ModelSpec.h"
#include "tfm/common/OutputFile.h"
#include "tfm/common/PrivateFiles.h"
#include "tfm/common/Targets.h"
#include "tfm/common/TensorNames.h"
#include "tfm/common/WeightFileType.h"
#include "tfm/runtime/ModelCache.h"
#include "tfm/runtime/WeightLoader.h"

#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/raw_ostream.h"

#include <chrono>
#include <map>
#include <optional>

using namespace llvm;

namespace {

cl::OptionCategory category("tfmc options");

cl::opt<std::string> inputPath(cl::Positional, cl::Required, cl::desc("<config.json | model.mlir>"),
                               cl::cat(category));
cl::opt<std::string> outDir("o", cl::desc("Output folder (default: generated/<name>)"),
                            cl::value_desc("dir"), cl::cat(category));
cl::opt<std::string> targetName(
    "target",
    cl::desc("CPU to compile for: host, avx512, avx2, x86-64 or an explicit Halide target "
             "string (default: host; for a .mlir input, the module's tfm.target)"),
    cl::cat(category));
cl::opt<bool> profile("profile",
                      cl::desc("Compile the kernels with Halide's profiler: the library prints "
                               "each kernel's calls and time per call when its process exits"),
                      cl::cat(category));
cl::opt<std::string> scheduleOverrides(
    "schedule",
    cl::desc("Schedule overrides: one schedule for every kernel (fast, its variants fast-mv32, "
             "fast-mv64, fast-c4, fast-c8, fast-attn8, fast-attn32, fast-k128, fast-k256, "
             "fast-pf0, fast-pf8k, fast-pf16-4k, plain, adams2019, li2018, mullapudi2016), or "
             "kernel=schedule,... "
             "(default: the tuning file's choice, else the target's default)"),
    cl::cat(category));
cl::opt<std::string> attention(
    "attention",
    cl::desc("Attention's algorithm: direct (one softmax over all the keys of a row) or "
             "flash[=N] (FlashAttention: keys in tiles of N, default 64, merged with an online "
             "softmax; in parallel across tiles for decode) (default: direct)"),
    cl::value_desc("algorithm"), cl::cat(category));
cl::opt<std::string> activations(
    "activations",
    cl::desc("What the matrix products multiply: f32 (the input as it is; default), int8 "
             "(for block-format weights: the input quantized to 8 bits in blocks of 32, or "
             "of 256 for the k-quants, as llama.cpp does, for integer dot products) or bf16 (for bf16 weights: the input "
             "rounded to bf16, for AMX's bf16 tiles); the last two are faster, and no longer "
             "exact"),
    cl::value_desc("f32|int8|bf16"), cl::cat(category));
cl::opt<bool> tune("tune",
                   cl::desc("Before compiling, time each kernel under every candidate schedule "
                            "on this machine (checked against plain first) and record the "
                            "fastest in the tuning file; configs only"),
                   cl::cat(category));
cl::opt<std::string> tuneSchedules(
    "tune-schedules",
    cl::desc("The candidates of --tune, the baseline first (default: every schedule but plain, "
             "fast first)"),
    cl::value_desc("a,b,..."), cl::cat(category));
cl::opt<int> tuneThreads("tune-threads",
                         cl::desc("Threads --tune times with (default: every hardware thread)"),
                         cl::init(0), cl::cat(category));
cl::opt<std::string> tuningFile(
    "tuning-file",
    cl::desc("The schedules --tune recorded, per target and kernel; a kernel it does not name "
             "gets the target's default (default: the cache folder's tuning.json; 'none': "
             "defaults only)"),
    cl::value_desc("file"), cl::cat(category));
cl::list<std::string> skipPasses("skip-passes", cl::CommaSeparated,
                                 cl::desc("Passes of the default pipeline to leave out, e.g. "
                                          "tfm-fuse-epilogues,cse"),
                                 cl::cat(category));
cl::opt<std::string> passPipeline("pass-pipeline",
                                  cl::desc("A textual pass pipeline instead of the default, "
                                           "e.g. 'builtin.module(tfm-outline-kernels,"
                                           "tfm-plan-memory)'"),
                                  cl::cat(category));
cl::opt<std::string> emitKind("emit",
                              cl::desc("lib: lib<name>.so (default); exe: also a standalone "
                                       "executable with the runtime linked in; mlir: only the "
                                       "lowered tfm IR, to -o (default: standard output), "
                                       "with no kernel compiled"),
                              cl::init("lib"), cl::cat(category));
cl::opt<int64_t> contextOverride(
    "context",
    cl::desc("Positions the KV cache holds, instead of the config's context length: ALiBi, "
             "sinusoidal and RoPE models run past the length they were trained on"),
    cl::value_desc("N"), cl::init(0), cl::cat(category));
cl::opt<std::string> emitMlir("emit-mlir",
                              cl::desc("Write the lowered tfm IR (with locations) to this file; "
                                       "tfmc compiles it again as it is"),
                              cl::value_desc("file"), cl::cat(category));
cl::opt<bool> dumpIr("dump-ir-after-all",
                     cl::desc("Write the tfm IR before the passes and after each to <out>/ir/"),
                     cl::cat(category));
cl::opt<int> prefillChunk("prefill-chunk",
                          cl::desc("Most tokens one prefill kernel call handles (default: "
                                   "min(context, 128)); configs only"),
                          cl::init(0), cl::cat(category));
cl::opt<std::string> weightType(
    "dtype",
    cl::desc("The format the kernels read weights in, straight from the weight file: f32 "
             "(default), f16, bf16; or q8_0, q4_0, q4_k, q5_k, q6_k, q4_k_m, q5_k_m (matrices "
             "in GGUF's block formats, the rest in f32, as llama.cpp quantizes); configs only"),
    cl::value_desc("type"), cl::cat(category));
cl::opt<std::string>
    weightsLike("weights-like",
                cl::desc("Read every weight in the format this weight file stores it in (GGUF, "
                         "safetensors, llama2.c); configs only"),
                cl::value_desc("file"), cl::cat(category));
cl::opt<std::string>
    kvType("kv-dtype",
           cl::desc("What the KV cache holds: f32, f16 or bf16 (default: f16 for models of over a "
                    "billion parameters, else f32); configs only"),
           cl::value_desc("type"), cl::cat(category));
cl::opt<std::string> kernelCache(
    "kernel-cache",
    cl::desc("Folder of compiled kernels shared by every compile: a kernel with the same IR, "
             "target and compiler is reused from it (default: the cache folder's kernels/, "
             "$TFM_CACHE_DIR or ~/.cache/tfmc; 'none': compile every kernel)"),
    cl::value_desc("dir"), cl::cat(category));
cl::opt<bool> verbose("v", cl::desc("Report every step"), cl::cat(category));

int fail(const std::string &message) {
  errs() << "tfmc: error: " << message << "\n";
  return 1;
}

int64_t parameterCount(const tfm::ModelSpec &spec) {
  int64_t count = 0;
  for (const tfm::ModelTensor &t : tfm::modelTensors(spec)) {
    int64_t n = 1;
    for (int64_t d : t.shape)
      n *= d;
    count += n;
  }
  return count;
}


std::string pathJoin(StringRef a, StringRef b) {
  SmallString<256> p(a);
  sys::path::append(p, b);
  return std::string(p);
}

} // namespace

int compile(int argc, char **argv) {
  cl::HideUnrelatedOptions(category);
  tfm::parseCommandLine(argc, argv, "tfmc: compile a transformer to a native library\n");
  auto start = std::chrono::steady_clock::now();

  if (emitKind != "lib" && emitKind != "exe" && emitKind != "mlir")
    return fail("--emit: found '" + emitKind + "', expected lib, exe or mlir");
  if (prefillChunk < 0)
    return fail("--prefill-chunk: found " + std::to_string(prefillChunk) + ", expected >= 0");
  bool fromIr = StringRef(inputPath).ends_with(".mlir");

  tfm::LoweringOptions lowering;
  if (!targetName.empty() || !fromIr) {
    Expected<std::string> target =
        tfm::resolveTarget(targetName.empty() ? std::string("host") : targetName.getValue());
    if (!target)
      return fail("--target: " + toString(target.takeError()));
    lowering.target = *target;
  }
  if (profile && lowering.target.empty())
    return fail("--profile: with a .mlir input, give --target too");
  if (profile && !tfm::targetHasFeature(lowering.target, "profile"))
    lowering.target += "-profile";
  lowering.scheduleOverrides = scheduleOverrides;
  lowering.skipPasses.assign(skipPasses.begin(), skipPasses.end());
  lowering.passPipeline = passPipeline;
  lowering.prefillChunk = prefillChunk;
  lowering.emitMlirPath = emitMlir;

  std::optional<tfm::ModelSpec> spec;
  if (!fromIr) {
    Expected<tfm::ModelSpec> loaded = tfm::loadModelSpec(inputPath);
    if (!loaded)
      return fail(toString(loaded.takeError()));
    spec = std::move(*loaded);
  }
  if (contextOverride != 0) {
    if (!spec)
      return fail("--context applies to configs; a .mlir module's cache_decl shapes say what "
                  "its cache holds");
    // A learned table's rows are the context: the tensor's shape.
    if (spec->positions == "learned")
      return fail("--context: " + inputPath +
                  " has learned positions, whose table fixes the context at " +
                  std::to_string(spec->contextLength) + " positions");
    // Checked as a config's context is: the cache must stay indexable.
    spec->contextLength = contextOverride;
    Expected<tfm::ModelSpec> checked =
        tfm::parseCanonicalSpec(spec->canonicalJson(), inputPath + " with --context", "");
    if (!checked)
      return fail(toString(checked.takeError()));
  }
  if (!weightType.empty() && !weightsLike.empty())
    return fail("--dtype and --weights-like both say what the weights are; pass one");
  if (fromIr && (!weightType.empty() || !weightsLike.empty()))
    return fail(std::string(weightType.empty() ? "--weights-like" : "--dtype") +
                " applies to configs; a .mlir module's weight_decl types say how it reads "
                "its weights");
  if (fromIr && !kvType.empty())
    return fail("--kv-dtype applies to configs; a .mlir module's cache_decl types say what "
                "its cache holds");
  if (!kvType.empty()) {
    std::optional<tfm::DType> type = tfm::parseDType(kvType);
    if (!type || *type == tfm::DType::I32)
      return fail("--kv-dtype: found '" + kvType + "', expected f32, f16 or bf16");
    lowering.cacheType = *type;
  } else if (spec && parameterCount(*spec) > 1'000'000'000) {
    lowering.cacheType = tfm::DType::F16; // halves the cache's memory and bandwidth
  }
  if (!weightType.empty()) {
    std::optional<tfm::WeightFileType> type = tfm::parseWeightFileType(weightType);
    if (!type)
      return fail("--dtype: found '" + weightType + "', expected one of " +
                  tfm::kWeightFileTypeNames);
    Expected<tfm::WeightTypes> types = tfm::compiledWeightTypes(*spec, *type);
    if (!types)
      return fail(inputPath + ": " + toString(types.takeError()));
    lowering.weightTypes = std::move(*types);
  }
  if (!weightsLike.empty()) {
    Expected<tfm::WeightTypes> types = tfm::rt::weightFileTypes(weightsLike, *spec);
    if (!types)
      return fail("--weights-like: " + toString(types.takeError()));
    lowering.weightTypes = std::move(*types);
  }
  std::string name = spec ? spec->name : sys::path::stem(inputPath).str();
  tfm::LibraryOptions lib;
  lib.outDir = outDir.empty() ? "generated/" + name : std::string(outDir);
  lib.verbose = verbose;
  if (kernelCache != "none") {
    static int anchor;
    Expected<std::string> identity =
        tfm::rt::compilerIdentity(sys::fs::getMainExecutable(argv[0], &anchor));
    if (!identity)
      return fail(toString(identity.takeError()));
    lib.compilerId = *identity;
    if (kernelCache.empty()) {
      Expected<std::string> cacheDir = tfm::rt::defaultCacheDir();
      if (!cacheDir)
        return fail(toString(cacheDir.takeError()));
      lib.kernelCacheDir = pathJoin(*cacheDir, "kernels");
    } else {
      lib.kernelCacheDir = kernelCache;
    }
  }
  if (emitKind == "exe") {
    SmallVector<StringRef> parts;
    StringRef(TFM_EXE_LINK_LINE).split(parts, '|', -1, false);
    for (StringRef part : parts)
      lib.exeLinkLine.push_back(part.str());
  }
  if (dumpIr)
    lowering.dumpIrDir = pathJoin(lib.outDir, "ir");

  std::string tuning = tuningFile;
  if (tuning.empty()) { // the cache's: this user's alone, as the cache is
    Expected<std::string> defaultTuning = tfm::rt::defaultTuningFile();
    if (!defaultTuning)
      return fail(toString(defaultTuning.takeError()));
    tuning = *defaultTuning;
    if (sys::fs::exists(tuning))
      if (Error e = tfm::checkPrivate(tuning, "tuning file"))
        return fail(toString(std::move(e)));
  }
  if (tuning == "none") {
    if (tune)
      return fail("--tune records its choices in a tuning file; --tuning-file is 'none'");
    tuning.clear();
  }
  if (tune) {
    if (!spec || emitKind == "mlir")
      return fail("--tune compiles and runs a config: give a config.json and a library output");
    if (!scheduleOverrides.empty())
      return fail("--tune chooses the schedules; --schedule overrides them: pass one");
    tfm::TuneRequest request{inputPath, tuning, pathJoin(lib.outDir, "tune")};
    request.schedules =
        tuneSchedules.empty() ? tfm::defaultTuneCandidates() : tfm::splitCommaList(tuneSchedules);
    for (const std::string &s : request.schedules)
      if (!tfm::isScheduleName(s))
        return fail("--tune-schedules: unknown schedule '" + s + "'");
    // What the kernels depend on, for every compile of the comparison.
    auto forward = [&](const char *option, const std::string &value) {
      if (!value.empty())
        request.compileArgs.push_back(std::string("--") + option + "=" + value);
    };
    forward("target", targetName);
    forward("dtype", weightType);
    forward("weights-like", weightsLike);
    forward("kv-dtype", kvType);
    forward("context", contextOverride ? std::to_string(contextOverride) : "");
    forward("prefill-chunk", prefillChunk ? std::to_string(prefillChunk) : "");
    forward("attention", attention);
    forward("activations", activations);
    request.weightsLike = weightsLike;
    request.weightType = weightType;
    request.threads = tuneThreads;
    request.contextLength = spec->contextLength;
    if (Error e = tfm::tuneSchedules(request))
      return fail("--tune: " + toString(std::move(e)));
  }
  lowering.tuningFile = tuning;

  if (!attention.empty()) {
    auto [algorithm, tile] = StringRef(attention).split('=');
    int64_t keyTile = 64;
    if (algorithm == "direct" && tile.empty())
      keyTile = 0;
    else if (algorithm != "flash" ||
             (!tile.empty() && (tile.getAsInteger(10, keyTile) || keyTile <= 0)))
      return fail("--attention: found '" + attention +
                  "', expected direct, flash or flash=N (N > 0)");
    lowering.attentionKeyTile = keyTile;
  }

  if (!activations.empty()) {
    if (activations != "f32" && activations != "int8" && activations != "bf16")
      return fail("--activations: found '" + activations + "', expected f32, int8 or bf16");
    lowering.activationBlock = activations == "int8" ? 32 : 0;
    lowering.bf16Activations = activations == "bf16";
  }

  if (emitKind == "mlir")
    lowering.emitMlirPath = outDir.empty() ? std::string("-") : std::string(outDir);
  // No output may be written over what this compile reads.
  std::vector<std::string> inputs{inputPath, weightsLike, tuning};
  if (Error e = tfm::refuseInputAsOutput(lowering.emitMlirPath, inputs))
    return fail(toString(std::move(e)));
  Expected<tfm::Program> program =
      spec ? tfm::lowerConfig(*spec, lowering) : tfm::lowerMlirFile(inputPath, lowering);
  if (!program)
    return fail(inputPath + ": " + toString(program.takeError()));
  if (emitKind == "mlir")
    return 0;
  for (const std::string &output : {std::string("manifest.json"), program->name + ".h",
                                    "lib" + program->name + ".so", program->name})
    if (Error e = tfm::refuseInputAsOutput(pathJoin(lib.outDir, output), inputs))
      return fail(toString(std::move(e)));
  if (Error e = tfm::writeLibrary(*program, lib))
    return fail(toString(std::move(e)));

  std::map<std::string, int> schedules;
  for (const tfm::Kernel &k : program->kernels)
    ++schedules[k.schedule];
  std::vector<std::string> scheduleText;
  for (auto &[schedule, count] : schedules)
    scheduleText.push_back(std::to_string(count) + " " + schedule);
  double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  errs() << formatv("tfmc: {0}: {1} kernels ({2}) for {3} in {4:f1} s -> {5}\n", program->name,
                    program->kernels.size(), join(scheduleText, ", "), program->target, seconds,
                    lib.outDir);
  return 0;
}

int main(int argc, char **argv) {
  return tfm::finishStandardOutput(compile(argc, argv), "tfmc");
}
