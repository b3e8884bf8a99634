//===- KernelCompiler.cpp - Program kernels to LLVM bitcode ---------------===//
#include "tfm/Kernels/KernelCompiler.h"

#include "KernelAlgorithm.h"
#include "PrefetchLineSteps.h"
#include "Schedules/Schedules.h"

#include "Halide.h"

using namespace tfm;
using namespace tfm::kernels;

namespace {

/// tfmc's features that Halide 14's target strings lack: amx_int8 and
/// amx_bf16 (tfm/common/Targets.h) are Halide's Sapphire Rapids with the use
/// of AMX's int8 or bf16 tiles allowed, which the schedules ask for only
/// under them (a Zen 4 runs Halide's Sapphire Rapids code, and has no AMX).
struct HalideTarget {
  Halide::Target target;
  AmxTiles amx;
};

/// Removes every "-`feature`" from `target`; whether there was one.
bool takeFeature(std::string &target, const std::string &feature) {
  const std::string part = "-" + feature;
  bool found = false;
  for (size_t at; (at = target.find(part)) != std::string::npos; found = true)
    target.erase(at, part.size());
  return found;
}

HalideTarget halideTarget(const std::string &tfmTarget) {
  std::string halide = tfmTarget;
  AmxTiles amx;
  amx.int8 = takeFeature(halide, "amx_int8");
  amx.bf16 = takeFeature(halide, "amx_bf16");
  return {Halide::Target(halide), amx};
}

} // namespace

bool tfm::compileKernel(const Kernel &kernel, const std::string &tfmTarget,
                        const std::string &bitcodePath, std::string &error) {
  const ScheduleSet *set = findScheduleSet(kernel.schedule);
  if (!set) {
    error = "kernel " + kernel.name + ": unknown schedule '" + kernel.schedule + "'";
    return false;
  }
  try {
    auto [target, amx] = halideTarget(tfmTarget);
    KernelAlgorithm algorithm = buildKernelAlgorithm(kernel, amx, multipliesBytePairs(target),
                                                     targetVectorLanes(target));
    Halide::Pipeline pipeline = scheduleKernel(*set, kernel, algorithm, target);
    pipeline.add_custom_lowering_pass(new PrefetchLineSteps);
    std::vector<Halide::Argument> args(algorithm.inputs.begin(), algorithm.inputs.end());
    pipeline.compile_to({{Halide::OutputFileType::bitcode, bitcodePath}}, args, kernel.name,
                        target.with_feature(Halide::Target::NoRuntime));
  } catch (const Halide::Error &e) {
    error = "kernel " + kernel.name + ": Halide: " + e.what();
    return false;
  } catch (const std::exception &e) {
    error = e.what();
    return false;
  }
  return true;
}

bool tfm::compileKernelRuntime(const std::string &tfmTarget, const std::string &objectPath,
                               std::string &error) {
  try {
    // Halide's back end compiles the runtime itself, for a named CPU: its
    // Sapphire Rapids would bring instructions (AVX512-FP16) that other
    // CPUs with VNNI and BF16 lack, and the runtime uses neither.
    Halide::Target target = halideTarget(tfmTarget).target;
    Halide::compile_standalone_runtime(
        objectPath, target.without_feature(Halide::Target::AVX512_SapphireRapids));
  } catch (const Halide::Error &e) {
    error = std::string("Halide runtime: ") + e.what();
    return false;
  }
  return true;
}
