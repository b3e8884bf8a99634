// RUN: tfm-opt %s --tfm-select-schedules | FileCheck %s --check-prefix=FAST
// RUN: tfm-opt %s --tfm-select-schedules=schedule=plain | FileCheck %s --check-prefix=PLAIN
// RUN: not tfm-opt %s --tfm-select-schedules=schedule=fastest 2>&1 | FileCheck %s --check-prefix=UNKNOWN

// Every kernel gets the schedule; other functions do not.

// FAST-LABEL:  func.func @decode
// FAST-NOT:      tfm.schedule
// FAST:        func.func private @decode_silu
// FAST-SAME:     tfm.schedule = "fast"
// PLAIN:       func.func private @decode_silu
// PLAIN-SAME:    tfm.schedule = "plain"
// UNKNOWN:     error: unknown schedule 'fastest'; known schedules: fast, plain
module {
  func.func @decode(%x: tensor<1x8xf32>) -> tensor<1x8xf32> attributes {tfm.entry = "decode"} {
    %y = tfm.launch @decode_silu(%x) : (tensor<1x8xf32>) -> tensor<1x8xf32>
    return %y : tensor<1x8xf32>
  }
  func.func private @decode_silu(%x: tensor<1x8xf32>) -> tensor<1x8xf32> attributes {tfm.kernel} {
    %y = tfm.silu %x : tensor<1x8xf32>
    return %y : tensor<1x8xf32>
  }
}
