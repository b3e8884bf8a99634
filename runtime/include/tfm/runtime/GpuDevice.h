//===- GpuDevice.h - Whether this machine runs a GPU library ----*- C++ -*-===//
//
// A library for a GPU target runs its kernels through the device's driver,
// which Halide's runtime opens at the first call. Before anything is loaded
// or uploaded the runtime asks the same driver whether there is a device,
// so that a machine without one is told which driver or device it lacks.
//
//===----------------------------------------------------------------------===//
#ifndef TFM_RUNTIME_GPUDEVICE_H
#define TFM_RUNTIME_GPUDEVICE_H

#include "tfm/common/Targets.h"

#include "llvm/Support/Error.h"

#include <string>

namespace tfm::rt {

/// Success when this machine has a device for `device` (always for the
/// CPU); else an error, about `source`, naming the driver library or the
/// device that is missing.
llvm::Error checkGpuDevice(TargetDevice device, const std::string &source);

} // namespace tfm::rt

#endif // TFM_RUNTIME_GPUDEVICE_H
