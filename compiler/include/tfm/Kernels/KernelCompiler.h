//===- KernelCompiler.h - Program kernels to object code --------*- C++ -*-===//
//
// The Halide half of tfmc, seen from outside: it turns one kernel of a
// Program into LLVM bitcode whose function has every shape baked in (LLVM
// 22 compiles it for the target's exact features: tfm/Codegen/KernelObject.h).
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

#include "tfm/Program/CallWindow.h"
#include "tfm/Program/Program.h"

#include <cstdint>
#include <string>
#include <vector>

namespace tfm {

/// Compiles one kernel with its schedule (kernel.schedule, a name of
/// tfm/Program/ScheduleNames.h) for `target`, an explicit target string
/// (tfm/common/Targets.h: Halide's, with amx_int8 besides), into the
/// bitcode file `bitcodePath`. A schedule whose kernel would reach outside
/// the buffers a call in `range` binds is refused, naming the region.
bool compileKernel(const Kernel &kernel, const std::string &target, CallRange range,
                   const std::string &bitcodePath, std::string &error);

/// What compileKernel refuses, found without generating code: the kernel
/// lowered for `target`, its reaches held to the buffers of every call of
/// `range` at its ends.
bool checkKernelBounds(const Kernel &kernel, const std::string &target, CallRange range,
                       std::string &error);

/// A GPU library's multiply-add probe (tfm_model.measure_device_fma): the
/// kernel `kName(out)` whose kThreads threads each run kChains independent
/// chains of kSteps multiply-adds and write their sum to out[thread], a
/// float buffer of kThreads on the device.
struct DeviceFmaProbe {
  static constexpr const char *kName = "tfm_probe_fma";
  static constexpr int kThreads = 1 << 20, kChains = 8, kSteps = 512;
  static constexpr double kFlopsPerCall = 2.0 * kThreads * kChains * kSteps;
};

/// Compiles DeviceFmaProbe's kernel for a GPU `target` into `bitcodePath`.
bool compileDeviceFmaProbe(const std::string &target, const std::string &bitcodePath,
                           std::string &error);

/// Halide's feature bits of `target` (halide_target_feature_t, 64 to a
/// word), as its runtime's halide_can_use_target_features takes them: what
/// a library holds this CPU to before its first call.
std::vector<uint64_t> targetFeatureWords(const std::string &target);

/// Compiles Halide's runtime (thread pool, buffers, errors) once per library.
bool compileKernelRuntime(const std::string &target, const std::string &objectPath,
                          std::string &error);

} // namespace tfm

#endif // TFM_KERNELS_KERNELCOMPILER_H
