//===- DeviceFmaProbe.cpp - A GPU's multiply-add peak, as a kernel --------===//
//
// What tfm-bench holds a GPU library's prefill against: every thread runs
// independent chains of multiply-adds (enough of them that the GPU issues
// one every cycle rather than waiting on the last), and writes their sum
// so that none is dead. The library times it (device_memory.c).
//
//===----------------------------------------------------------------------===//
#include "tfm/Kernels/KernelCompiler.h"

#include "Halide.h"

using namespace Halide;

bool tfm::compileDeviceFmaProbe(const std::string &tfmTarget, const std::string &bitcodePath,
                                std::string &error) {
  using Probe = DeviceFmaProbe;
  try {
    // Algorithm: chain c of thread x, `steps` dependent multiply-adds.
    Var x("x"), c("c");
    RDom step(0, Probe::kSteps, "step");
    Func chain("fma_chain"), out("probe");
    chain(c, x) = cast<float>(x + c) * 1e-7f;
    // The addend varies with the step (one conversion a step, shared by the
    // chains), so that the update is over the steps.
    chain(c, x) = chain(c, x) * 0.9999f + cast<float>(step.x) * 1e-9f;
    Expr sum = chain(0, x);
    for (int i = 1; i < Probe::kChains; ++i)
      sum += chain(i, x);
    out(x) = sum;

    // Schedule: blocks of 256 threads; each thread's chains unrolled inside
    // the step loop, so that they interleave.
    Var block("block"), thread("thread");
    out.gpu_tile(x, block, thread, 256);
    chain.compute_at(out, thread).bound(c, 0, Probe::kChains).unroll(c);
    chain.update().reorder(c, step.x).unroll(c);
    out.output_buffer().dim(0).set_min(0).set_extent(Probe::kThreads);

    Target target(tfmTarget);
    out.compile_to({{OutputFileType::bitcode, bitcodePath}}, {}, Probe::kName,
                   target.with_feature(Target::NoRuntime));
  } catch (const Halide::Error &e) {
    error = std::string("the device's multiply-add probe: Halide: ") + e.what();
    return false;
  }
  return true;
}
