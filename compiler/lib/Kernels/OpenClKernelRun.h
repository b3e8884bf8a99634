//===- OpenClKernelRun.h - A GPU kernel run on OpenCL, out of process -*- C++ -*-===//
//
// The kernel tests check GPU schedules on an OpenCL device: POCL on the
// CPU-only machines. POCL compiles kernels with its own LLVM, whose symbols
// interpose with Halide's LLVM 14 in one process (POCL then crashes inside
// clang), so a kernel is compiled ahead of time, as tfmc compiles it, linked
// with OpenClKernelRunner.c, and run in a process of its own.
//
//===----------------------------------------------------------------------===//
#ifndef TFM_KERNELS_OPENCLKERNELRUN_H
#define TFM_KERNELS_OPENCLKERNELRUN_H

#include "Halide.h"

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace tfm::kernels {

/// One argument of a kernel call.
struct KernelArgument {
  Halide::Type type;             // the element type the kernel takes
  const halide_buffer_t *view;   // its dimensions; its host lies inside `backing`
  uint8_t *backing;              // the memory around the view, written back for outputs
  size_t backingSize;
  bool isOutput;
};

/// Whether Halide's runtime can open an OpenCL loader (libOpenCL.so, from
/// ocl-icd-opencl-dev): else no OpenCL kernel runs here.
bool openClLoaderPresent();

/// Compiles `pipeline` (taking `inputs`) for `target`, which names opencl,
/// runs it on `arguments` (inputs, then outputs, in Halide's order) in a
/// process of its own, and writes every output's backing back. Throws
/// std::runtime_error naming the step that failed, with its output.
void runOnOpenCl(Halide::Pipeline pipeline, const std::vector<Halide::Argument> &inputs,
                 const Halide::Target &target, const std::vector<KernelArgument> &arguments);

} // namespace tfm::kernels

#endif // TFM_KERNELS_OPENCLKERNELRUN_H
