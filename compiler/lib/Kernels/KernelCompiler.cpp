//===- KernelCompiler.cpp - Program kernels to LLVM bitcode ---------------===//
#include "tfm/Kernels/KernelCompiler.h"

#include "KernelAlgorithm.h"
#include "Schedules/Schedules.h"

#include "Halide.h"

using namespace tfm;
using namespace tfm::kernels;

namespace {

/// tfmc's features that Halide 14's target strings lack: amx_int8
/// (tfm/common/Targets.h) is Halide's Sapphire Rapids with the use of AMX
/// tiles allowed, which the schedules ask for only under it (a Zen 4 runs
/// Halide's Sapphire Rapids code, and has no AMX).
struct HalideTarget {
  Halide::Target target;
  bool amxInt8 = false;
};

HalideTarget halideTarget(const std::string &tfmTarget) {
  const std::string amx = "-amx_int8";
  std::string halide = tfmTarget;
  bool amxInt8 = false;
  for (size_t at; (at = halide.find(amx)) != std::string::npos;) {
    halide.erase(at, amx.size());
    amxInt8 = true;
  }
  return {Halide::Target(halide), amxInt8};
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
    auto [target, amxInt8] = halideTarget(tfmTarget);
    KernelAlgorithm algorithm = buildKernelAlgorithm(kernel, amxInt8);
    Halide::Pipeline pipeline = scheduleKernel(*set, kernel, algorithm, target);
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
