//===- KernelCompiler.h - Program kernels to object code --------*- C++ -*-===//
//
// The Halide half of tfmc, seen from outside: it turns one kernel of a
// Program into an object file whose function has every shape baked in.
// Includes no Halide (and no MLIR) header: callers stay clean of both.
//
// The compiled function takes one halide_buffer_t* per kernel parameter:
// first every input parameter in params order, then every output parameter
// in params order. Token rows are indexed by absolute position (the buffer's
// row min is the call's position; see Program.h).
//
//===----------------------------------------------------------------------===//
#ifndef TFM_KERNELS_KERNELCOMPILER_H
#define TFM_KERNELS_KERNELCOMPILER_H

#include "tfm/Codegen/Program.h"

#include <string>
#include <vector>

namespace tfm {

/// Names accepted by `--target`, and the Halide target each one means.
/// "host" is this machine's CPU with every feature Halide detects.
std::vector<std::string> knownTargets();
/// Returns the Halide target string for a name, or "" if unknown.
std::string resolveTarget(const std::string &name);

/// Schedule sets every kernel has: "plain" (obviously right, one thread,
/// no vectors) and "fast" (vectorised, multi-threaded, tiled). "fast" is the
/// default.
std::vector<std::string> knownSchedules();

/// Compiles one kernel for `halideTarget` into `objectPath`.
bool compileKernel(const Kernel &kernel, const std::string &halideTarget,
                   const std::string &objectPath, std::string &error);

/// Compiles Halide's runtime (thread pool, buffers, errors) once per library.
bool compileKernelRuntime(const std::string &halideTarget,
                          const std::string &objectPath, std::string &error);

} // namespace tfm

#endif // TFM_KERNELS_KERNELCOMPILER_H
