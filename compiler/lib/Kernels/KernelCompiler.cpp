//===- KernelCompiler.cpp - Program kernels to object code ---------------===//
#include "tfm/Kernels/KernelCompiler.h"

#include "KernelAlgorithm.h"
#include "Schedules/Schedules.h"

#include "Halide.h"

using namespace tfm;
using namespace tfm::kernels;

namespace {

int vectorLanes(const Halide::Target &t) {
  if (t.has_feature(Halide::Target::AVX512))
    return 16;
  if (t.has_feature(Halide::Target::AVX))
    return 8;
  return 4;
}

} // namespace

bool tfm::compileKernel(const Kernel &kernel, const std::string &halideTarget,
                        const std::string &objectPath, std::string &error) {
  const ScheduleSet *set = findScheduleSet(kernel.schedule);
  if (!set) {
    error = "kernel " + kernel.name + ": unknown schedule '" + kernel.schedule + "'";
    return false;
  }
  try {
    Halide::Target target(halideTarget);
    KernelAlgorithm algorithm = buildKernelAlgorithm(kernel);
    ScheduleContext ctx{kernel, algorithm, target, vectorLanes(target)};
    set->apply(ctx);

    std::vector<Halide::Argument> args(algorithm.inputs.begin(), algorithm.inputs.end());
    Halide::Pipeline pipeline(algorithm.outputs);
    pipeline.compile_to_object(objectPath, args, kernel.name,
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

bool tfm::compileKernelRuntime(const std::string &halideTarget,
                               const std::string &objectPath, std::string &error) {
  try {
    Halide::compile_standalone_runtime(objectPath, Halide::Target(halideTarget));
  } catch (const Halide::Error &e) {
    error = std::string("Halide runtime: ") + e.what();
    return false;
  }
  return true;
}
