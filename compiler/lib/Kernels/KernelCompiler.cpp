//===- KernelCompiler.cpp - Program kernels to LLVM bitcode ---------------===//
#include "tfm/Kernels/KernelCompiler.h"

#include "BufferBoundsCheck.h"
#include "SharedMemoryCheck.h"
#include "KernelAlgorithm.h"
#include "PrefetchLineSteps.h"
#include "Schedules/Schedules.h"

#include "Halide.h"

#include <functional>

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

namespace {

/// Schedules `kernel`, lowers it with `lower`, and refuses it if it reaches
/// outside its buffers; bitcode compiles write the file on the way.
bool lowerChecked(const Kernel &kernel, const std::string &tfmTarget, CallRange range,
                  std::string &error,
                  const std::function<void(Halide::Pipeline &, const std::vector<Halide::Argument> &,
                                           const Halide::Target &)> &lower) {
  const ScheduleSet *set = findScheduleSet(kernel.schedule);
  if (!set) {
    error = "kernel " + kernel.name + ": unknown schedule '" + kernel.schedule + "'";
    return false;
  }
  try {
    auto [target, amx] = halideTarget(tfmTarget);
    ScheduledKernel scheduled = scheduleKernel(*set, kernel, target, amx);
    Halide::Pipeline &pipeline = scheduled.pipeline;
    BufferBoundsCheck bounds(kernel, scheduled.algorithm, range);
    SharedMemoryCheck shared(kernel, scheduled.algorithm, range);
    pipeline.add_custom_lowering_pass(new PrefetchLineSteps);
    // Both live here, not in the pipeline.
    pipeline.add_custom_lowering_pass(&bounds, [] {});
    if (target.has_gpu_feature())
      pipeline.add_custom_lowering_pass(&shared, [] {});
    std::vector<Halide::Argument> args(scheduled.algorithm.inputs.begin(),
                                       scheduled.algorithm.inputs.end());
    lower(pipeline, args, target.with_feature(Halide::Target::NoRuntime));
    pipeline.clear_custom_lowering_passes();
    if (!bounds.violations().empty()) {
      error = "kernel " + kernel.name + " (schedule " + kernel.schedule +
              ") reaches outside its buffers: " + bounds.violations().front();
      return false;
    }
    if (!shared.violations().empty()) {
      error = "kernel " + kernel.name + " (schedule " + kernel.schedule +
              "): " + shared.violations().front();
      return false;
    }
  } catch (const Halide::Error &e) {
    error = "kernel " + kernel.name + ": Halide: " + e.what();
    return false;
  } catch (const std::exception &e) {
    error = e.what();
    return false;
  }
  return true;
}

} // namespace

bool tfm::compileKernel(const Kernel &kernel, const std::string &tfmTarget, CallRange range,
                        const std::string &bitcodePath, std::string &error) {
  return lowerChecked(kernel, tfmTarget, range, error,
                      [&](Halide::Pipeline &pipeline, const std::vector<Halide::Argument> &args,
                          const Halide::Target &target) {
                        pipeline.compile_to({{Halide::OutputFileType::bitcode, bitcodePath}},
                                            args, kernel.name, target);
                      });
}

bool tfm::checkKernelBounds(const Kernel &kernel, const std::string &tfmTarget, CallRange range,
                            std::string &error) {
  return lowerChecked(kernel, tfmTarget, range, error,
                      [&](Halide::Pipeline &pipeline, const std::vector<Halide::Argument> &args,
                          const Halide::Target &target) {
                        pipeline.compile_to_module(args, kernel.name, target);
                      });
}

std::vector<uint64_t> tfm::targetFeatureWords(const std::string &tfmTarget) {
  Halide::Target target = halideTarget(tfmTarget).target;
  std::vector<uint64_t> words((Halide::Target::FeatureEnd + 63) / 64, 0);
  for (int f = 0; f < Halide::Target::FeatureEnd; ++f)
    if (target.has_feature(static_cast<Halide::Target::Feature>(f)))
      words[f / 64] |= uint64_t(1) << (f % 64);
  return words;
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
