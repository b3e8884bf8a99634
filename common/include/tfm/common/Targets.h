//===- Targets.h - CPU targets, named explicitly ----------------*- C++ -*-===//
//
// A target is a Halide target string with every CPU feature the generated
// code may use spelled out: "x86-64-linux-sse41-avx-f16c-fma-avx2". The
// compiler never hands Halide the word "host": `host` is resolved here, once,
// to this CPU's features (read through cpuid by LLVM), so that what is cached,
// hashed and recorded in a library is the explicit list. The runtime checks
// that list against the CPU it runs on before calling any kernel.
//
//===----------------------------------------------------------------------===//
#ifndef TFM_COMMON_TARGETS_H
#define TFM_COMMON_TARGETS_H

#include "llvm/ADT/StringMap.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"

#include <cstdint>
#include <string>
#include <vector>

namespace tfm {

/// The names `--target` accepts besides an explicit target string: host,
/// x86-64, avx2, avx512, and the GPUs cuda (capability 80),
/// cuda_capability_86 and opencl, each with this CPU's features for the
/// driver.
std::vector<std::string> targetPresets();

/// The explicit target for a preset name or a target string; a target string
/// is checked (architecture, bits, OS, every feature known). `host` gives
/// this CPU's target.
llvm::Expected<std::string> resolveTarget(llvm::StringRef nameOrTarget);

/// The architecture of a target string ("x86", "arm"), and of the machine
/// this process runs on: a library links with this machine's C compiler,
/// so only for its own architecture.
llvm::StringRef targetArchitecture(llvm::StringRef target);
std::string hostArchitecture();

/// Where a target's kernels run: the CPU, or a GPU through Halide's CUDA
/// or OpenCL back end (the driver runs on the CPU either way).
enum class TargetDevice { Cpu, Cuda, OpenCl };

/// The device of an explicit target string.
TargetDevice targetDevice(llvm::StringRef target);

/// The byte offsets at which an OpenCL kernel can be given a buffer inside
/// a larger one, which it takes as a sub-buffer: a multiple of every
/// device's base-address alignment (CL_DEVICE_MEM_BASE_ADDR_ALIGN: 128
/// bytes on POCL; 512 covers the GPUs we know). A CUDA kernel takes a
/// pointer, which may start anywhere.
constexpr int64_t kOpenClSubBufferAlignment = 512;
/// "cpu", "cuda" or "opencl".
llvm::StringRef targetDeviceName(TargetDevice device);

/// Whether `target` (a target string) names `feature` among its features.
bool targetHasFeature(llvm::StringRef target, llvm::StringRef feature);

/// The LLVM features (-mattr) of every CPU feature `target` names, as
/// "+avx2,+fma,...": what the kernels are compiled with, and all they may
/// use.
llvm::Expected<std::string> targetLlvmFeatures(llvm::StringRef target);

/// The CPU features LLVM reports for this machine ("avx2" -> true, ...).
llvm::StringMap<bool> hostCpuFeatures();

/// The features of `target` that a CPU with `cpuFeatures` lacks, each as
/// "avx512_skylake (needs avx512bw, avx512dq)". Empty when the code runs.
std::vector<std::string> missingCpuFeatures(llvm::StringRef target,
                                            const llvm::StringMap<bool> &cpuFeatures);

} // namespace tfm

#endif // TFM_COMMON_TARGETS_H
