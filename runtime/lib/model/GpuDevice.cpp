//===- GpuDevice.cpp - Whether this machine runs a GPU library ------------===//
#include "tfm/runtime/GpuDevice.h"

#include "tfm/common/Failure.h"

#include <dlfcn.h>

#include <cstdint>
#include <initializer_list>

using namespace tfm;

namespace {

/// The first of `names` that opens, as the library's runtime opens it
/// (runtime/model-lib/device_memory.c); null if none.
void *openFirst(std::initializer_list<const char *> names) {
  for (const char *name : names)
    if (void *lib = dlopen(name, RTLD_LAZY | RTLD_LOCAL))
      return lib;
  return nullptr;
}

llvm::Error checkCuda(const std::string &source) {
  void *lib = openFirst({"libcuda.so.1", "libcuda.so"});
  if (!lib)
    return failure(source + ": runs its kernels on an NVIDIA GPU through CUDA, and this machine "
                            "has no NVIDIA driver (libcuda.so.1 is not found); compile it for "
                            "the CPU (tfmc --target host) to run it here");
  using Init = int (*)(unsigned);
  using Count = int (*)(int *);
  auto init = reinterpret_cast<Init>(dlsym(lib, "cuInit"));
  auto count = reinterpret_cast<Count>(dlsym(lib, "cuDeviceGetCount"));
  int devices = 0;
  int status = init && count ? init(0) : -1;
  if (status == 0)
    status = count(&devices);
  if (status != 0 || devices == 0)
    return failure(source + ": runs its kernels on an NVIDIA GPU through CUDA; the NVIDIA driver "
                            "is here but reports no device (cuInit or cuDeviceGetCount: status " +
                   std::to_string(status) + ", " + std::to_string(devices) + " devices)");
  return llvm::Error::success();
}

llvm::Error checkOpenCl(const std::string &source) {
  void *lib = openFirst({"libOpenCL.so.1", "libOpenCL.so"});
  if (!lib)
    return failure(source + ": runs its kernels through OpenCL, and this machine has no OpenCL "
                            "loader (libOpenCL.so.1 is not found: install ocl-icd-libopencl1 "
                            "and a platform, such as pocl-opencl-icd)");
  using Platforms = int32_t (*)(uint32_t, void **, uint32_t *);
  auto platforms = reinterpret_cast<Platforms>(dlsym(lib, "clGetPlatformIDs"));
  uint32_t found = 0;
  int32_t status = platforms ? platforms(0, nullptr, &found) : -1;
  if (status != 0 || found == 0)
    return failure(source + ": runs its kernels through OpenCL, and this machine has no OpenCL "
                            "platform (clGetPlatformIDs: status " + std::to_string(status) +
                   "; install one, such as pocl-opencl-icd for the CPU)");
  return llvm::Error::success();
}

} // namespace

llvm::Error tfm::rt::checkGpuDevice(TargetDevice device, const std::string &source) {
  switch (device) {
  case TargetDevice::Cpu:
    return llvm::Error::success();
  case TargetDevice::Cuda:
    return checkCuda(source);
  case TargetDevice::OpenCl:
    return checkOpenCl(source);
  }
  return llvm::Error::success();
}
