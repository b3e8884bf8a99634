// RUN: tfm-opt %s --split-input-file --tfm-select-schedules | FileCheck %s
// RUN: not tfm-opt %s --split-input-file --tfm-select-schedules=overrides=fast 2>&1 \
// RUN:   | FileCheck %s --check-prefix=CPU-SCHEDULE
// RUN: not tfm-opt %s --split-input-file --tfm-select-schedules=overrides=gpu-warp 2>&1 \
// RUN:   | FileCheck %s --check-prefix=CUDA-ONLY

// A GPU target, CUDA or OpenCL: every kernel without a schedule gets "gpu".
// A CPU schedule named for one is refused, naming those that run there.

// CHECK:       func.func private @decode_silu
// CHECK-SAME:    tfm.schedule = "gpu"
// CHECK:       {{//[ ]-----}}
// CHECK:       func.func private @decode_silu
// CHECK-SAME:    tfm.schedule = "gpu"

// CPU-SCHEDULE: error: schedule 'fast' does not run on the cuda of target 'x86-64-linux-sse41-cuda-cuda_capability_80'; schedules that do: gpu, gpu-warp
// CPU-SCHEDULE: error: schedule 'fast' does not run on the opencl of target 'x86-64-linux-sse41-opencl-cl_doubles'; schedules that do: gpu

// gpu-warp's warp shuffles are CUDA's alone: taken for CUDA, refused for
// OpenCL.
// CUDA-ONLY:     error: schedule 'gpu-warp' does not run on the opencl of target 'x86-64-linux-sse41-opencl-cl_doubles'; schedules that do: gpu
// CUDA-ONLY:     tfm.target = "x86-64-linux-sse41-cuda-cuda_capability_80"
// CUDA-ONLY:     tfm.schedule = "gpu-warp"

module attributes {tfm.target = "x86-64-linux-sse41-cuda-cuda_capability_80"} {
  func.func private @decode_silu(%x: tensor<1x64xf32>) -> tensor<1x64xf32> attributes {tfm.kernel} {
    %y = tfm.silu %x : tensor<1x64xf32>
    return %y : tensor<1x64xf32>
  }
}

// -----

module attributes {tfm.target = "x86-64-linux-sse41-opencl-cl_doubles"} {
  func.func private @decode_silu(%x: tensor<1x64xf32>) -> tensor<1x64xf32> attributes {tfm.kernel} {
    %y = tfm.silu %x : tensor<1x64xf32>
    return %y : tensor<1x64xf32>
  }
}
