//===- tfmc.cpp - Compile one transformer to a native library -------------===//
//
//   tfmc configs/llama2-7b.json -o generated/llama2-7b
//   tfmc configs/llama2-7b.json --dtype q8_0
//   tfmc configs/llama2-7b.json --weights-like llama-2-7b.Q4_K_M.gguf
//   tfmc model.gguf -o out        (a download: its config, tensor types and files)
//   tfmc hf-folder/ --emit exe --bundle -o out   (./out/<name> -p "Hello" runs)
//   tfmc model.mlir -o out        (tfm IR of any stage, e.g. from --emit-mlir)
//   tfmc configs/gpt2-small.json --tune   (time the schedules per kernel here first)
//
// Parses the config (or the IR), lowers it through the tfm dialect and pass
// pipeline, compiles every kernel with Halide for the target, and links
// lib<name>.so (and with --emit exe a standalone executable).
//
//===----------------------------------------------------------------------===//
#include "DownloadedModel.h"
#include "Tune.h"

#include "tfm/Codegen/LibraryWriter.h"
#include "tfm/Lowering/LowerToProgram.h"
#include "tfm/Program/ScheduleNames.h"
#include "tfm/common/CommandLine.h"
#include "tfm/common/Failure.h"
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
using tfm::Positions;

namespace {

cl::OptionCategory category("tfmc options");

cl::opt<std::string> inputPath(cl::Positional,
                               cl::desc("<config.json | model.gguf | hf-folder | model.mlir>"),
                               cl::cat(category));
cl::opt<std::string> outDir("o", cl::desc("Output folder (default: generated/<name>)"),
                            cl::value_desc("dir"), cl::cat(category));
/// --target's help, naming every preset (tfm/common/Targets.h).
const std::string &targetHelp() {
  static const std::string help =
      "What to compile for: " + join(tfm::targetPresets(), ", ") +
      " (the GPUs with this CPU's features for the driver), or an explicit Halide target "
      "string (default: host; for a .mlir input, the module's tfm.target)";
  return help;
}
cl::opt<std::string> targetName("target", cl::desc(targetHelp()), cl::cat(category));
cl::opt<bool> profile("profile",
                      cl::desc("Compile the kernels with Halide's profiler: the library prints "
                               "each kernel's calls and time per call when its process exits"),
                      cl::cat(category));
/// --schedule's help, naming every schedule of the one list.
const std::string &scheduleHelp() {
  static const std::string help = [] {
    std::vector<std::string> names;
    for (const tfm::ScheduleName &s : tfm::kScheduleNames)
      names.push_back(s.name);
    return "Schedule overrides: one schedule for every kernel (" + join(names, ", ") +
           "; --list-schedules says what each does), or kernel=schedule,... (default: the "
           "tuning file's choice, else the target's default)";
  }();
  return help;
}

cl::opt<std::string> scheduleOverrides("schedule", cl::desc(scheduleHelp()), cl::cat(category));
cl::opt<bool> listSchedules("list-schedules",
                            cl::desc("Print every schedule's name and what it does, then exit"),
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
             "of 256 for the k-quants, as llama.cpp does, for integer dot products) or bf16 "
             "(for bf16 weights: the input rounded to bf16, for AMX's bf16 tiles); the last "
             "two are faster, and no longer exact"),
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
enum class EmitKind { Lib, Exe, Kernels, Mlir };
cl::opt<EmitKind> emitKind(
    "emit", cl::desc("What tfmc writes"),
    cl::values(clEnumValN(EmitKind::Lib, "lib", "lib<name>.so (default)"),
               clEnumValN(EmitKind::Exe, "exe",
                          "also a standalone executable with the runtime linked in"),
               clEnumValN(EmitKind::Kernels, "kernels",
                          "only each kernel's object, obj/<kernel>.o (a GPU target's PTX or "
                          "OpenCL C inside), and Halide's runtime: no driver, no library"),
               clEnumValN(EmitKind::Mlir, "mlir",
                          "only the lowered tfm IR, to -o (default: standard output), with no "
                          "kernel compiled")),
    cl::init(EmitKind::Lib), cl::cat(category));
cl::opt<bool> bundle("bundle",
                     cl::desc("With --emit exe and a .gguf or Hugging Face folder: copy its "
                              "weights and tokenizer beside the executable, which then runs "
                              "with no flags (default: their paths are recorded)"),
                     cl::cat(category));
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

bool fromIr() { return StringRef(inputPath).ends_with(".mlir"); }

/// The config, with --context applied: a download's, or the config file's;
/// none for a .mlir input.
Expected<std::optional<tfm::ModelSpec>>
loadSpec(const std::optional<tfm::DownloadedModel> &downloaded) {
  if (fromIr()) {
    if (contextOverride != 0)
      return tfm::failure("--context applies to configs; a .mlir module's cache_decl shapes say "
                          "what its cache holds");
    return std::nullopt;
  }
  Expected<tfm::ModelSpec> spec =
      downloaded ? Expected<tfm::ModelSpec>(downloaded->spec) : tfm::loadModelSpec(inputPath);
  if (!spec)
    return spec.takeError();
  if (contextOverride == 0)
    return std::optional<tfm::ModelSpec>(std::move(*spec));
  // A learned table's rows are the context: the tensor's shape.
  if (spec->positions == Positions::Learned)
    return tfm::failure("--context: " + inputPath +
                        " has learned positions, whose table fixes the context at " +
                        std::to_string(spec->contextLength) + " positions");
  // Checked as a config's context is: the cache must stay indexable.
  spec->contextLength = contextOverride;
  if (spec->encoderDecoder()) // T5's n_positions: the source's length as the context's
    spec->sourceLength = contextOverride;
  Expected<tfm::ModelSpec> checked =
      tfm::parseCanonicalSpec(spec->canonicalJson(), inputPath + " with --context", "");
  if (!checked)
    return checked.takeError();
  return std::optional<tfm::ModelSpec>(std::move(*spec));
}

/// The lowering options that make the matrix products multiply `products`.
void setProductInputs(tfm::Products products, tfm::LoweringOptions &lowering) {
  switch (products) {
  case tfm::Products::F32:
    lowering.activationBlock = 0;
    lowering.bf16Activations = false;
    return;
  case tfm::Products::Int8: // the k-quants' 256 is tfm-quantize-activations' choice
    lowering.activationBlock = 32;
    lowering.bf16Activations = false;
    return;
  case tfm::Products::Bf16:
    lowering.activationBlock = 0;
    lowering.bf16Activations = true;
    return;
  }
}

/// The target, the profiler, and what the passes are told.
Error setPipelineOptions(tfm::LoweringOptions &lowering) {
  if (prefillChunk < 0)
    return tfm::failure("--prefill-chunk: found " + std::to_string(prefillChunk) +
                        ", expected >= 0");
  if (!targetName.empty() || !fromIr()) {
    Expected<std::string> target =
        tfm::resolveTarget(targetName.empty() ? std::string("host") : targetName.getValue());
    if (!target)
      return tfm::failure("--target: " + toString(target.takeError()));
    lowering.target = *target;
  }
  if (profile && lowering.target.empty())
    return tfm::failure("--profile: with a .mlir input, give --target too");
  if (profile && !tfm::targetHasFeature(lowering.target, "profile"))
    lowering.target += "-profile";
  lowering.scheduleOverrides = scheduleOverrides;
  lowering.skipPasses.assign(skipPasses.begin(), skipPasses.end());
  lowering.passPipeline = passPipeline;
  lowering.prefillChunk = prefillChunk;
  lowering.emitMlirPath = emitKind == EmitKind::Mlir
                              ? (outDir.empty() ? std::string("-") : std::string(outDir))
                              : std::string(emitMlir);
  if (!attention.empty()) {
    auto [algorithm, tile] = StringRef(attention).split('=');
    int64_t keyTile = 64;
    if (algorithm == "direct" && tile.empty())
      keyTile = 0;
    else if (algorithm != "flash" ||
             (!tile.empty() && (tile.getAsInteger(10, keyTile) || keyTile <= 0)))
      return tfm::failure("--attention: found '" + attention +
                          "', expected direct, flash or flash=N (N > 0)");
    lowering.attentionKeyTile = keyTile;
  }
  if (!activations.empty()) {
    std::optional<tfm::Products> products = tfm::parseVariant<tfm::Products>(activations);
    if (!products)
      return tfm::failure("--activations: found '" + activations + "', expected one of " +
                          tfm::variantNameList<tfm::Products>());
    setProductInputs(*products, lowering);
  }
  return Error::success();
}

/// What the weights and the KV cache are stored as (configs only).
Error setStorageTypes(const std::optional<tfm::ModelSpec> &spec,
                      tfm::LoweringOptions &lowering) {
  if (!weightType.empty() && !weightsLike.empty())
    return tfm::failure("--dtype and --weights-like both say what the weights are; pass one");
  if (!spec && (!weightType.empty() || !weightsLike.empty()))
    return tfm::failure(std::string(weightType.empty() ? "--weights-like" : "--dtype") +
                        " applies to configs; a .mlir module's weight_decl types say how it "
                        "reads its weights");
  if (!spec && !kvType.empty())
    return tfm::failure("--kv-dtype applies to configs; a .mlir module's cache_decl types say "
                        "what its cache holds");
  if (!kvType.empty()) {
    std::optional<tfm::DType> type = tfm::parseDType(kvType);
    if (!type || *type == tfm::DType::I32)
      return tfm::failure("--kv-dtype: found '" + kvType + "', expected f32, f16 or bf16");
    lowering.cacheType = *type;
  } else if (spec && parameterCount(*spec) > 1'000'000'000) {
    lowering.cacheType = tfm::DType::F16; // halves the cache's memory and bandwidth
  }
  if (!weightType.empty()) {
    std::optional<tfm::WeightFileType> type = tfm::parseWeightFileType(weightType);
    if (!type)
      return tfm::failure("--dtype: found '" + weightType + "', expected one of " +
                          tfm::kWeightFileTypeNames);
    Expected<tfm::WeightTypes> types = tfm::compiledWeightTypes(*spec, *type);
    if (!types)
      return tfm::failure(inputPath + ": " + toString(types.takeError()));
    lowering.weightTypes = std::move(*types);
  }
  if (!weightsLike.empty()) {
    Expected<tfm::WeightTypes> types = tfm::rt::weightFileTypes(weightsLike, *spec);
    if (!types)
      return tfm::failure("--weights-like: " + toString(types.takeError()));
    lowering.weightTypes = std::move(*types);
  }
  return Error::success();
}

/// `--emit exe`'s link line (TFM_EXE_LINK_LINE). Its runtime archives are
/// the build's, or, for a tfmc installed (cmake --install) where they are
/// installed too, those beside it: <bin>/TFM_BIN_TO_ARCHIVES/<name>.a.
std::vector<std::string> exeLinkLine(const char *argv0) {
  static int anchor;
  SmallString<256> installed(sys::path::parent_path(sys::fs::getMainExecutable(argv0, &anchor)));
  sys::path::append(installed, TFM_BIN_TO_ARCHIVES);
  sys::path::remove_dots(installed, /*remove_dot_dot=*/true);
  SmallVector<StringRef> parts;
  StringRef(TFM_EXE_LINK_LINE).split(parts, '|', -1, false);
  std::vector<std::string> line;
  for (StringRef part : parts) {
    std::string beside = pathJoin(installed, sys::path::filename(part));
    bool archive = sys::path::is_absolute(part) && part.ends_with(".a");
    line.push_back(archive && sys::fs::exists(beside) ? beside : part.str());
  }
  return line;
}

/// Where the library goes, the kernel cache, and the executable's link line.
Expected<tfm::LibraryOptions> libraryOptions(const std::string &name, const char *argv0) {
  tfm::LibraryOptions lib;
  lib.outDir = outDir.empty() ? "generated/" + name : std::string(outDir);
  lib.verbose = verbose;
  if (kernelCache != "none") {
    static int anchor;
    Expected<std::string> identity =
        tfm::rt::compilerIdentity(sys::fs::getMainExecutable(argv0, &anchor));
    if (!identity)
      return identity.takeError();
    lib.compilerId = *identity;
    if (kernelCache.empty()) {
      Expected<std::string> cacheDir = tfm::rt::defaultCacheDir();
      if (!cacheDir)
        return cacheDir.takeError();
      lib.kernelCacheDir = pathJoin(*cacheDir, "kernels");
    } else {
      lib.kernelCacheDir = kernelCache;
    }
  }
  lib.kernelsOnly = emitKind == EmitKind::Kernels;
  if (emitKind == EmitKind::Exe)
    lib.exeLinkLine = exeLinkLine(argv0);
  return lib;
}

/// The tuning file the schedules are read from (and --tune writes): the
/// cache's, this user's alone as the cache is, unless given; "" for none.
Expected<std::string> tuningFilePath() {
  std::string tuning = tuningFile;
  if (tuning.empty()) {
    Expected<std::string> defaultTuning = tfm::rt::defaultTuningFile();
    if (!defaultTuning)
      return defaultTuning.takeError();
    tuning = *defaultTuning;
    if (sys::fs::exists(tuning))
      if (Error e = tfm::checkPrivate(tuning, "tuning file"))
        return std::move(e);
  }
  if (tuning != "none")
    return tuning;
  if (tune)
    return tfm::failure("--tune records its choices in a tuning file; --tuning-file is 'none'");
  return "";
}

/// --tune: times the candidates on this machine and records the winners.
Error tuneHere(const std::optional<tfm::ModelSpec> &spec, const std::string &tuning,
               const tfm::LibraryOptions &lib) {
  if (!spec || emitKind == EmitKind::Mlir)
    return tfm::failure(
        "--tune compiles and runs a config: give a config.json and a library output");
  if (!scheduleOverrides.empty())
    return tfm::failure("--tune chooses the schedules; --schedule overrides them: pass one");
  tfm::TuneRequest request{inputPath, tuning, pathJoin(lib.outDir, "tune")};
  request.schedules =
      tuneSchedules.empty() ? tfm::defaultTuneCandidates() : tfm::splitCommaList(tuneSchedules);
  for (const std::string &s : request.schedules)
    if (!tfm::isScheduleName(s))
      return tfm::failure("--tune-schedules: unknown schedule '" + s + "'");
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
    return tfm::failure("--tune: " + toString(std::move(e)));
  return Error::success();
}

/// Lowers the config or the IR; with --emit mlir, that is all.
Expected<tfm::Program> lower(const std::optional<tfm::ModelSpec> &spec,
                             const tfm::LoweringOptions &lowering,
                             const std::vector<std::string> &inputs) {
  // No output may be written over what this compile reads.
  if (Error e = tfm::refuseInputAsOutput(lowering.emitMlirPath, inputs))
    return std::move(e);
  Expected<tfm::Program> program =
      spec ? tfm::lowerConfig(*spec, lowering) : tfm::lowerMlirFile(inputPath, lowering);
  if (!program)
    return tfm::failure(inputPath + ": " + toString(program.takeError()));
  return program;
}

/// The library, its manifest and header (and the executable).
Error writeOutputs(const tfm::Program &program, const tfm::LibraryOptions &lib,
                   const std::vector<std::string> &inputs) {
  for (const std::string &output : {std::string("manifest.json"), program.name + ".h",
                                    "lib" + program.name + ".so", program.name})
    if (Error e = tfm::refuseInputAsOutput(pathJoin(lib.outDir, output), inputs))
      return e;
  return tfm::writeLibrary(program, lib);
}

/// What the manifest records of a downloaded model's files: their paths,
/// or with --bundle their copies in the output folder.
Expected<tfm::ModelFiles> recordedFiles(const tfm::DownloadedModel &downloaded,
                                        const std::string &out) {
  if (!bundle)
    return downloaded.files;
  if (std::error_code ec = sys::fs::create_directories(out))
    return tfm::failure(out + ": cannot create: " + ec.message());
  return tfm::bundleModelFiles(downloaded, out);
}

/// One line: the kernels by schedule, the target, the time taken.
void reportCompiled(const tfm::Program &program, const tfm::LibraryOptions &lib,
                    std::chrono::steady_clock::time_point start) {
  std::map<std::string, int> schedules;
  for (const tfm::Kernel &k : program.kernels)
    ++schedules[k.schedule];
  std::vector<std::string> scheduleText;
  for (auto &[schedule, count] : schedules)
    scheduleText.push_back(std::to_string(count) + " " + schedule);
  double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  errs() << formatv("tfmc: {0}: {1} kernels ({2}) for {3} in {4:f1} s -> {5}\n", program.name,
                    program.kernels.size(), join(scheduleText, ", "), program.target, seconds,
                    lib.outDir);
}

void printSchedules() {
  for (const tfm::ScheduleName &s : tfm::kScheduleNames)
    outs() << formatv("{0,-14} {1}\n", s.name, s.summary);
}

/// tfmc's steps, in order.
Error compile(const char *argv0) {
  auto start = std::chrono::steady_clock::now();
  if (inputPath.empty())
    return tfm::failure("no input: give a config.json, a .gguf, a Hugging Face folder or a "
                        ".mlir file (tfmc --help)");
  std::optional<tfm::DownloadedModel> downloaded;
  if (tfm::isDownloadedModel(inputPath)) {
    Expected<tfm::DownloadedModel> found = tfm::findDownloadedModel(inputPath);
    if (!found)
      return found.takeError();
    downloaded = std::move(*found);
    // Its kernels read the tensors as the file stores them, as tfm-run
    // --model-dir compiles it, unless --dtype or --weights-like say else.
    if (weightsLike.empty() && weightType.empty())
      weightsLike = downloaded->files.weights;
  }
  if (bundle && (emitKind != EmitKind::Exe || !downloaded))
    return tfm::failure("--bundle copies a downloaded model's files beside the executable: give "
                        "a .gguf or a Hugging Face folder, and --emit exe");
  Expected<std::optional<tfm::ModelSpec>> spec = loadSpec(downloaded);
  if (!spec)
    return spec.takeError();
  tfm::LoweringOptions lowering;
  if (Error e = setPipelineOptions(lowering))
    return e;
  if (Error e = setStorageTypes(*spec, lowering))
    return e;
  std::string name = *spec ? (*spec)->name : sys::path::stem(inputPath).str();
  Expected<tfm::LibraryOptions> lib = libraryOptions(name, argv0);
  if (!lib)
    return lib.takeError();
  if (dumpIr)
    lowering.dumpIrDir = pathJoin(lib->outDir, "ir");
  Expected<std::string> tuning = tuningFilePath();
  if (!tuning)
    return tuning.takeError();
  if (tune)
    if (Error e = tuneHere(*spec, *tuning, *lib))
      return e;
  lowering.tuningFile = *tuning;

  std::vector<std::string> inputs{inputPath, weightsLike, *tuning};
  Expected<tfm::Program> program = lower(*spec, lowering, inputs);
  if (!program)
    return program.takeError();
  if (emitKind == EmitKind::Mlir)
    return Error::success();
  if (downloaded) {
    Expected<tfm::ModelFiles> files = recordedFiles(*downloaded, lib->outDir);
    if (!files)
      return files.takeError();
    lib->files = *files;
  }
  if (Error e = writeOutputs(*program, *lib, inputs))
    return e;
  reportCompiled(*program, *lib, start);
  return Error::success();
}

} // namespace

int main(int argc, char **argv) {
  cl::HideUnrelatedOptions(category);
  tfm::parseCommandLine(argc, argv, "tfmc: compile a transformer to a native library\n");
  if (listSchedules) {
    printSchedules();
    return tfm::finishStandardOutput(0, "tfmc");
  }
  int status = 0;
  if (Error e = compile(argv[0])) {
    errs() << "tfmc: error: " << toString(std::move(e)) << "\n";
    status = 1;
  }
  return tfm::finishStandardOutput(status, "tfmc");
}
