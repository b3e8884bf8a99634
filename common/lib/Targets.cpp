//===- Targets.cpp - CPU targets, named explicitly ------------------------===//
#include "tfm/common/Failure.h"
#include "tfm/common/Targets.h"
#include "tfm/common/AmxTiles.h"
#include "tfm/common/UntrustedText.h"

#include "llvm/ADT/StringExtras.h"
#include "llvm/TargetParser/Host.h"
#include "llvm/TargetParser/Triple.h"

#include <algorithm>
#include <initializer_list>

using namespace tfm;

namespace {

/// A CPU feature of Halide's target strings and the LLVM features
/// (-mattr names, as llvm::sys::getHostCPUFeatures reports them) whose
/// instructions the kernels may use for it: LLVM 22 compiles them with
/// exactly these (tfm/Codegen/KernelObject.h). Halide's Sapphire Rapids is
/// its documented set, Cannon Lake's with AVX-512 VNNI and BF16, which
/// AMD's Zen 4 has too. amx_int8 and amx_bf16 are tfmc's own, not Halide's:
/// the int8 and bf16 tiles of Intel's Sapphire Rapids, which the schedules
/// use only when named (tfm/Kernels/KernelCompiler.h hands Halide the
/// rest). Ordered so that resolving `host` lists them as Halide prints
/// them, the tiles last.
struct CpuFeature {
  const char *arch; // Halide's architecture name
  const char *name;
  std::initializer_list<const char *> needs;
};

const CpuFeature kCpuFeatures[] = {
    {"x86", "sse41", {"sse4.1"}},
    {"x86", "avx", {"avx"}},
    {"x86", "f16c", {"f16c"}},
    {"x86", "fma", {"fma"}},
    {"x86", "fma4", {"fma4"}},
    {"x86", "avx2", {"avx2"}},
    {"x86", "avx512", {"avx512f", "avx512cd"}},
    {"x86", "avx512_knl", {"avx512f", "avx512cd", "avx512pf", "avx512er"}},
    {"x86", "avx512_skylake", {"avx512f", "avx512cd", "avx512vl", "avx512bw", "avx512dq"}},
    {"x86",
     "avx512_cannonlake",
     {"avx512f", "avx512cd", "avx512vl", "avx512bw", "avx512dq", "avx512ifma", "avx512vbmi"}},
    {"x86",
     "avx512_sapphirerapids",
     {"avx512f", "avx512cd", "avx512vl", "avx512bw", "avx512dq", "avx512ifma", "avx512vbmi",
      "avx512bf16", "avx512vnni"}},
    {"x86", "amx_int8", {"amx-tile", "amx-int8"}},
    {"x86", "amx_bf16", {"amx-tile", "amx-bf16"}},
    {"arm", "arm_dot_prod", {"dotprod"}},
    {"arm", "arm_fp16", {"fullfp16"}},
    // Not an instruction set: Halide's profiler (tfmc --profile), which
    // reports each kernel's time per call when the process exits.
    {"x86", "profile", {}},
    {"arm", "profile", {}},
};

/// The GPU a target's kernels run on, besides the CPU that runs the driver:
/// Halide's features for its CUDA and OpenCL back ends. No LLVM feature of
/// the CPU comes with them, and the CPU never lacks them: whether the device
/// is there is asked by the library at its first call.
struct DeviceFeature {
  const char *name;
  TargetDevice device;
};

const DeviceFeature kDeviceFeatures[] = {
    {"cuda", TargetDevice::Cuda},
    {"opencl", TargetDevice::OpenCl},
    // OpenCL kernels may compute in double (RoPE's angles): cl_khr_fp64,
    // which POCL and NVIDIA's OpenCL have.
    {"cl_doubles", TargetDevice::OpenCl},
    // Halide 14's PTX targets. It has none for capability 90: its capability
    // 80 PTX runs on Hopper through the driver's JIT.
    {"cuda_capability_30", TargetDevice::Cuda},
    {"cuda_capability_32", TargetDevice::Cuda},
    {"cuda_capability_35", TargetDevice::Cuda},
    {"cuda_capability_50", TargetDevice::Cuda},
    {"cuda_capability_61", TargetDevice::Cuda},
    {"cuda_capability_70", TargetDevice::Cuda},
    {"cuda_capability_75", TargetDevice::Cuda},
    {"cuda_capability_80", TargetDevice::Cuda},
    {"cuda_capability_86", TargetDevice::Cuda},
};

/// What `--target cuda` compiles PTX for: Ampere's, which Hopper runs.
constexpr const char kDefaultCudaCapability[] = "cuda_capability_80";

const DeviceFeature *findDeviceFeature(llvm::StringRef name) {
  for (const DeviceFeature &f : kDeviceFeatures)
    if (name == f.name)
      return &f;
  return nullptr;
}

/// Features `host` never picks: FMA4 is AMD's pre-Zen extension, KNL needs
/// Xeon Phi instructions LLVM no longer reports, the profiler is asked for.
bool pickedForHost(llvm::StringRef name) {
  return name != "fma4" && name != "avx512_knl" && name != "profile";
}

struct Preset {
  const char *name;
  const char *target;  // empty: this CPU
  const char *devices; // GPU features added to it ("" for none)
};

const Preset kPresets[] = {
    {"host", "", ""},
    {"x86-64", "x86-64-linux-sse41", ""},
    {"avx2", "x86-64-linux-sse41-avx-f16c-fma-avx2", ""},
    {"avx512", "x86-64-linux-sse41-avx-f16c-fma-avx2-avx512-avx512_skylake", ""},
    // The GPUs, with this CPU's features for the driver.
    {"cuda", "", "-cuda-cuda_capability_80"},
    {"cuda_capability_86", "", "-cuda-cuda_capability_86"},
    {"opencl", "", "-opencl-cl_doubles"},
};

const CpuFeature *findFeature(llvm::StringRef arch, llvm::StringRef name) {
  for (const CpuFeature &f : kCpuFeatures)
    if (arch == f.arch && name == f.name)
      return &f;
  return nullptr;
}

std::vector<std::string> knownFeatures(llvm::StringRef arch) {
  std::vector<std::string> names;
  for (const CpuFeature &f : kCpuFeatures)
    if (arch == f.arch)
      names.push_back(f.name);
  for (const DeviceFeature &f : kDeviceFeatures)
    names.push_back(f.name);
  return names;
}

/// Checks the GPU features of a target string: one back end at most, a
/// capability only for CUDA and at most one. Adds the default capability
/// to CUDA without one, so that the explicit string says what PTX is made.
llvm::Error checkDevices(const std::string &shown, std::string &target,
                         llvm::ArrayRef<llvm::StringRef> features) {
  bool cuda = llvm::is_contained(features, "cuda"), opencl = llvm::is_contained(features, "opencl");
  int capabilities = llvm::count_if(
      features, [](llvm::StringRef f) { return f.starts_with("cuda_capability_"); });
  if (cuda && opencl)
    return failure(shown + ": names both cuda and opencl; a library runs on one GPU back end");
  if (capabilities > 1)
    return failure(shown + ": names " + std::to_string(capabilities) +
                   " CUDA capabilities, expected one");
  if (capabilities && !cuda)
    return failure(shown + ": a cuda_capability needs the cuda feature, which it lacks");
  if (llvm::is_contained(features, "cl_doubles") && !opencl)
    return failure(shown + ": cl_doubles needs the opencl feature, which it lacks");
  if (cuda && !capabilities)
    target += std::string("-") + kDefaultCudaCapability;
  return llvm::Error::success();
}

/// Halide's "arch-bits-os" prefix for the machine this process runs on.
std::string hostBase() {
  llvm::Triple triple(llvm::sys::getProcessTriple());
  if (triple.isAArch64())
    return "arm-64-linux";
  return "x86-64-linux";
}

std::string hostTarget() {
  std::string target = hostBase();
  // A copy: `target` grows below and would leave a StringRef into it dangling.
  std::string arch = llvm::StringRef(target).split('-').first.str();
  llvm::StringMap<bool> cpu = hostCpuFeatures();
  for (const CpuFeature &f : kCpuFeatures) {
    if (arch != f.arch || !pickedForHost(f.name))
      continue;
    if (llvm::all_of(f.needs, [&](const char *need) { return cpu.lookup(need); }))
      target += std::string("-") + f.name;
  }
  return target;
}

} // namespace

std::vector<std::string> tfm::targetPresets() {
  std::vector<std::string> names;
  for (const Preset &p : kPresets)
    names.push_back(p.name);
  return names;
}

llvm::StringRef tfm::targetArchitecture(llvm::StringRef target) {
  return target.split('-').first;
}

std::string tfm::hostArchitecture() { return targetArchitecture(hostBase()).str(); }

bool tfm::targetHasFeature(llvm::StringRef target, llvm::StringRef feature) {
  llvm::SmallVector<llvm::StringRef> parts;
  target.split(parts, '-');
  return parts.size() > 3 && llvm::is_contained(llvm::ArrayRef(parts).drop_front(3), feature);
}

llvm::StringMap<bool> tfm::hostCpuFeatures() {
  llvm::StringMap<bool> features;
  for (const auto &entry : llvm::sys::getHostCPUFeatures())
    features[entry.getKey()] = entry.getValue();
  // Linux hands a process AMX's tile state only when asked: a CPU with AMX
  // whose kernel refuses counts as one without.
  if (features.lookup("amx-tile") && !requestAmxTiles())
    features["amx-tile"] = features["amx-int8"] = features["amx-bf16"] = false;
  return features;
}

llvm::Expected<std::string> tfm::resolveTarget(llvm::StringRef nameOrTarget) {
  for (const Preset &p : kPresets)
    if (nameOrTarget == p.name)
      return (*p.target ? std::string(p.target) : hostTarget()) + p.devices;

  llvm::SmallVector<llvm::StringRef> parts;
  nameOrTarget.split(parts, '-');
  std::string expected = "one of " + llvm::join(targetPresets(), ", ") +
                         ", or a target string such as " + kPresets[2].target;
  // A target may come from a file (a .mlir module's tfm.target): quoted.
  std::string shown = "target " + quoted(nameOrTarget);
  if (parts.size() < 3)
    return failure(shown + ": expected " + expected);
  llvm::StringRef arch = parts[0], bits = parts[1], os = parts[2];
  if ((arch != "x86" && arch != "arm") || bits != "64" || os != "linux")
    return failure(shown + ": found " + quoted((arch + "-" + bits + "-" + os).str()) +
                   ", expected x86-64-linux or arm-64-linux (64-bit Linux)");
  llvm::ArrayRef<llvm::StringRef> features = llvm::ArrayRef(parts).drop_front(3);
  for (llvm::StringRef feature : features)
    if (!findFeature(arch, feature) && !findDeviceFeature(feature))
      return failure(shown + ": unknown " + arch.str() + " feature " + quoted(feature) +
                     "; known: " + llvm::join(knownFeatures(arch), ", "));
  // Halide emits tile operations for its Sapphire Rapids alone.
  for (llvm::StringRef tiles : {"amx_int8", "amx_bf16"})
    if (llvm::is_contained(features, tiles) &&
        !llvm::is_contained(features, "avx512_sapphirerapids"))
      return failure(shown + ": " + tiles.str() + " needs avx512_sapphirerapids, which it lacks");
  std::string target = nameOrTarget.str();
  if (llvm::Error e = checkDevices(shown, target, features))
    return std::move(e);
  return target;
}

TargetDevice tfm::targetDevice(llvm::StringRef target) {
  llvm::SmallVector<llvm::StringRef> parts;
  target.split(parts, '-');
  for (llvm::StringRef name : llvm::ArrayRef(parts).drop_front(std::min<size_t>(3, parts.size())))
    if (const DeviceFeature *f = findDeviceFeature(name))
      return f->device;
  return TargetDevice::Cpu;
}

llvm::StringRef tfm::targetDeviceName(TargetDevice device) {
  switch (device) {
  case TargetDevice::Cpu:
    return "cpu";
  case TargetDevice::Cuda:
    return "cuda";
  case TargetDevice::OpenCl:
    return "opencl";
  }
  return "cpu";
}

llvm::Expected<std::string> tfm::targetLlvmFeatures(llvm::StringRef target) {
  llvm::Expected<std::string> resolved = resolveTarget(target);
  if (!resolved)
    return resolved.takeError();
  llvm::SmallVector<llvm::StringRef> parts;
  llvm::StringRef(*resolved).split(parts, '-');
  std::vector<std::string> features;
  for (llvm::StringRef name : llvm::ArrayRef(parts).drop_front(3)) {
    const CpuFeature *feature = findFeature(parts[0], name);
    if (!feature) // a GPU's: nothing of the CPU
      continue;
    for (const char *need : feature->needs)
      if (!llvm::is_contained(features, std::string("+") + need))
        features.push_back(std::string("+") + need);
  }
  return llvm::join(features, ",");
}

std::vector<std::string> tfm::missingCpuFeatures(llvm::StringRef target,
                                                 const llvm::StringMap<bool> &cpuFeatures) {
  llvm::SmallVector<llvm::StringRef> parts;
  target.split(parts, '-');
  std::vector<std::string> missing;
  if (parts.size() < 3)
    return {"'" + target.str() + "' (not a target string)"};
  for (llvm::StringRef name : llvm::ArrayRef(parts).drop_front(3)) {
    if (findDeviceFeature(name))
      continue; // the library asks for its device at the first call
    const CpuFeature *feature = findFeature(parts[0], name);
    if (!feature) {
      missing.push_back(name.str() + " (unknown to this runtime)");
      continue;
    }
    std::vector<std::string> lacking;
    for (const char *need : feature->needs)
      if (!cpuFeatures.lookup(need))
        lacking.push_back(need);
    if (!lacking.empty())
      missing.push_back(name.str() + " (needs " + llvm::join(lacking, ", ") + ")");
  }
  return missing;
}
