//===- tfmc.cpp - Compile one transformer config to a native library -----===//
//
//   tfmc configs/llama2-7b.json -o generated/llama2-7b
//
// Parses the config, lowers it through the tfm dialect and pass pipeline,
// compiles every kernel with Halide for the target, and links lib<name>.so
// (and with --emit exe a standalone executable).
//
//===----------------------------------------------------------------------===//
#include "tfm/Codegen/LibraryWriter.h"
#include "tfm/Codegen/LowerToProgram.h"
#include "tfm/common/ModelSpec.h"
#include "tfm/Kernels/KernelCompiler.h"

#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/raw_ostream.h"

#include <chrono>

using namespace llvm;

namespace {

cl::OptionCategory category("tfmc options");

cl::opt<std::string> configPath(cl::Positional, cl::Required, cl::desc("<config.json>"),
                                cl::cat(category));
cl::opt<std::string> outDir("o", cl::desc("Output folder (default: generated/<name>)"),
                            cl::value_desc("dir"), cl::cat(category));
cl::opt<std::string> targetName("target",
                                cl::desc("CPU to compile for: host (default), avx512, avx2, x86-64"),
                                cl::init("host"), cl::cat(category));
cl::opt<std::string> scheduleName("schedule",
                                  cl::desc("Kernel schedule set: fast (default) or plain"),
                                  cl::init("fast"), cl::cat(category));
cl::opt<std::string> emitKind("emit",
                              cl::desc("lib: lib<name>.so (default); exe: also a standalone "
                                       "executable with the runtime linked in"),
                              cl::init("lib"), cl::cat(category));
cl::opt<bool> dumpIr("dump-ir-after-all",
                     cl::desc("Write the tfm IR as built and after every pass to <out>/ir/"),
                     cl::cat(category));
cl::opt<int> prefillChunk("prefill-chunk",
                          cl::desc("Most tokens one prefill kernel call handles (default: "
                                   "min(context, 128))"),
                          cl::init(0), cl::cat(category));
cl::opt<bool> verbose("v", cl::desc("Report every step"), cl::cat(category));

int fail(const std::string &message) {
  errs() << "tfmc: error: " << message << "\n";
  return 1;
}

bool oneOf(const std::string &value, const std::vector<std::string> &known) {
  return std::find(known.begin(), known.end(), value) != known.end();
}

} // namespace

int main(int argc, char **argv) {
  cl::HideUnrelatedOptions(category);
  cl::ParseCommandLineOptions(argc, argv, "tfmc: compile a transformer config to a native library\n");
  auto start = std::chrono::steady_clock::now();

  if (!oneOf(targetName, tfm::knownTargets()))
    return fail("--target: found '" + targetName + "', expected one of: " +
                join(tfm::knownTargets(), ", "));
  if (!oneOf(scheduleName, tfm::knownSchedules()))
    return fail("--schedule: found '" + scheduleName + "', expected one of: " +
                join(tfm::knownSchedules(), ", "));
  if (emitKind != "lib" && emitKind != "exe")
    return fail("--emit: found '" + emitKind + "', expected lib or exe");
  if (prefillChunk < 0)
    return fail("--prefill-chunk: found " + std::to_string(prefillChunk) + ", expected >= 0");

  tfm::ParsedSpec parsed = tfm::loadModelSpec(configPath);
  if (!parsed.ok)
    return fail(parsed.error);
  const tfm::ModelSpec &spec = parsed.spec;

  tfm::LibraryOptions lib;
  lib.outDir = outDir.empty() ? "generated/" + spec.name : std::string(outDir);
  lib.targetName = targetName;
  lib.schedule = scheduleName;
  lib.emitExe = emitKind == "exe";
  lib.verbose = verbose;

  tfm::LoweringOptions lowering;
  lowering.schedule = scheduleName;
  lowering.prefillChunk = prefillChunk;
  if (dumpIr) {
    SmallString<256> irDir(lib.outDir);
    sys::path::append(irDir, "ir");
    lowering.dumpIrDir = std::string(irDir);
  }

  tfm::Program program;
  std::string error;
  if (!tfm::lowerToProgram(spec, lowering, program, error))
    return fail(configPath + ": " + error);
  if (!tfm::writeLibrary(program, lib, error))
    return fail(error);

  double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  errs() << formatv("tfmc: {0}: {1} kernels for {2}, schedule {3}, in {4:f1} s -> {5}\n",
                    spec.name, program.kernels.size(), targetName, scheduleName, seconds,
                    lib.outDir);
  return 0;
}
