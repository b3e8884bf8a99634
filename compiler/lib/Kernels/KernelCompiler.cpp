//===- KernelCompiler.cpp - Program kernels to object code ---------------===//
#include "tfm/Kernels/KernelCompiler.h"

#include "KernelAlgorithm.h"
#include "Schedules/Schedules.h"

#include "Halide.h"

using namespace tfm;
using namespace tfm::kernels;

namespace {

struct NamedTarget {
  const char *name;
  const char *halide; // empty: this machine
};

const NamedTarget kTargets[] = {
    {"host", ""},
    {"x86-64", "x86-64-linux-sse41"},
    {"avx2", "x86-64-linux-sse41-avx-f16c-fma-avx2"},
    {"avx512", "x86-64-linux-sse41-avx-f16c-fma-avx2-avx512-avx512_skylake"},
};

int vectorLanes(const Halide::Target &t) {
  if (t.has_feature(Halide::Target::AVX512))
    return 16;
  if (t.has_feature(Halide::Target::AVX))
    return 8;
  return 4;
}

} // namespace

std::vector<std::string> tfm::knownTargets() {
  std::vector<std::string> names;
  for (const NamedTarget &t : kTargets)
    names.push_back(t.name);
  return names;
}

std::string tfm::resolveTarget(const std::string &name) {
  for (const NamedTarget &t : kTargets) {
    if (name != t.name)
      continue;
    if (*t.halide)
      return t.halide;
    return Halide::get_host_target().to_string();
  }
  return "";
}

std::vector<std::string> tfm::knownSchedules() {
  std::vector<std::string> names;
  for (const ScheduleSet &s : scheduleSets())
    names.push_back(s.name);
  return names;
}

bool tfm::compileKernel(const Kernel &kernel, const std::string &halideTarget,
                        const std::string &objectPath, std::string &error) {
  const ScheduleSet *set = nullptr;
  for (const ScheduleSet &s : scheduleSets())
    if (s.name == kernel.schedule)
      set = &s;
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
