// RUN: tfm-opt %s --split-input-file --tfm-select-schedules | FileCheck %s --check-prefix=DEFAULT
// RUN: tfm-opt %s --split-input-file --tfm-select-schedules --tfm-select-schedules | FileCheck %s --check-prefix=DEFAULT
// RUN: tfm-opt %s --split-input-file --tfm-select-schedules=overrides=plain | FileCheck %s --check-prefix=PLAIN
// RUN: tfm-opt %s --split-input-file --tfm-select-schedules=overrides=fast | FileCheck %s --check-prefix=FAST
// RUN: tfm-opt %s --split-input-file --tfm-select-schedules=overrides=decode_silu=plain | FileCheck %s --check-prefix=ONE
// RUN: tfm-opt %s --split-input-file --pass-pipeline='builtin.module(tfm-select-schedules{overrides=plain,decode_silu=fast})' \
// RUN:   | FileCheck %s --check-prefix=MIXED
// RUN: not tfm-opt %s --split-input-file --tfm-select-schedules=overrides=fastest 2>&1 \
// RUN:   | FileCheck %s --check-prefix=UNKNOWN-SCHEDULE
// RUN: not tfm-opt %s --split-input-file --tfm-select-schedules=overrides=decode_silu=fastest 2>&1 \
// RUN:   | FileCheck %s --check-prefix=UNKNOWN-SCHEDULE
// RUN: not tfm-opt %s --split-input-file --tfm-select-schedules=overrides=decode_nope=plain 2>&1 \
// RUN:   | FileCheck %s --check-prefix=UNKNOWN-KERNEL

// An x86 target: every kernel without a schedule gets "fast"; a schedule
// already in the IR stays; functions that are not kernels get none.
// `overrides` replaces every choice, the ones in the IR included: one name
// for all kernels, or kernel=name for one, which wins over the name for all.

// DEFAULT-LABEL: func.func @decode
// DEFAULT-NOT:     tfm.schedule
// DEFAULT:       func.func private @decode_silu
// DEFAULT-SAME:    attributes {tfm.kernel, tfm.schedule = "fast"}
// DEFAULT:       func.func private @decode_attention
// DEFAULT-SAME:    attributes {tfm.kernel, tfm.schedule = "fast"}
// DEFAULT:       func.func private @decode_mul
// DEFAULT-SAME:    attributes {tfm.kernel, tfm.schedule = "plain"}
// DEFAULT:       func.func private @helper
// DEFAULT-NOT:     tfm.schedule
// DEFAULT:       {{//[ ]-----}}

// PLAIN-LABEL:   func.func @decode
// PLAIN-NOT:       tfm.schedule
// PLAIN:         func.func private @decode_silu
// PLAIN-SAME:      tfm.schedule = "plain"
// PLAIN:         func.func private @decode_attention
// PLAIN-SAME:      tfm.schedule = "plain"
// PLAIN:         func.func private @decode_mul
// PLAIN-SAME:      tfm.schedule = "plain"
// PLAIN:         func.func private @helper
// PLAIN-NOT:       tfm.schedule
// PLAIN:         {{//[ ]-----}}

// FAST-LABEL:    func.func @decode
// FAST:          func.func private @decode_silu
// FAST-SAME:       tfm.schedule = "fast"
// FAST:          func.func private @decode_attention
// FAST-SAME:       tfm.schedule = "fast"
// FAST:          func.func private @decode_mul
// FAST-SAME:       tfm.schedule = "fast"
// FAST:          {{//[ ]-----}}

// ONE-LABEL:     func.func @decode
// ONE:           func.func private @decode_silu
// ONE-SAME:        tfm.schedule = "plain"
// ONE:           func.func private @decode_attention
// ONE-SAME:        tfm.schedule = "fast"
// ONE:           func.func private @decode_mul
// ONE-SAME:        tfm.schedule = "plain"
// ONE:           {{//[ ]-----}}

// MIXED-LABEL:   func.func @decode
// MIXED:         func.func private @decode_silu
// MIXED-SAME:      tfm.schedule = "fast"
// MIXED:         func.func private @decode_attention
// MIXED-SAME:      tfm.schedule = "plain"
// MIXED:         func.func private @decode_mul
// MIXED-SAME:      tfm.schedule = "plain"
// MIXED:         {{//[ ]-----}}

// UNKNOWN-SCHEDULE: error: unknown schedule 'fastest'; known schedules: fast, fast-mv32, {{.*}}, plain, adams2019, li2018, mullapudi2016
// UNKNOWN-KERNEL:   error: schedule overrides name kernel 'decode_nope', which this module does not have

module attributes {tfm.target = "x86-64-linux-sse41-avx-f16c-fma-avx2"} {
  func.func @decode(%x: tensor<1x64xf32>) -> tensor<1x64xf32> attributes {tfm.entry = "decode"} {
    %y = tfm.launch @decode_silu(%x) : (tensor<1x64xf32>) -> tensor<1x64xf32>
    %z = tfm.launch @decode_mul(%y, %x) : (tensor<1x64xf32>, tensor<1x64xf32>) -> tensor<1x64xf32>
    return %z : tensor<1x64xf32>
  }
  func.func private @decode_silu(%x: tensor<1x64xf32>) -> tensor<1x64xf32> attributes {tfm.kernel} {
    %y = tfm.silu %x : tensor<1x64xf32>
    return %y : tensor<1x64xf32>
  }
  func.func private @decode_attention(%q: tensor<1x64xf32>, %k: memref<16x64xf32>, %v: memref<16x64xf32>)
      -> tensor<1x64xf32> attributes {tfm.kernel} {
    %a = tfm.attention %q, %k, %v {head_dim = 16 : i64, n_heads = 4 : i64, n_kv_heads = 4 : i64}
        : tensor<1x64xf32>, memref<16x64xf32>, memref<16x64xf32>
    return %a : tensor<1x64xf32>
  }
  func.func private @decode_mul(%x: tensor<1x64xf32>, %y: tensor<1x64xf32>) -> tensor<1x64xf32>
      attributes {tfm.kernel, tfm.schedule = "plain"} {
    %z = tfm.mul %x, %y : tensor<1x64xf32>
    return %z : tensor<1x64xf32>
  }
  func.func private @helper(%x: tensor<1x64xf32>) -> tensor<1x64xf32> {
    %y = tfm.silu %x : tensor<1x64xf32>
    return %y : tensor<1x64xf32>
  }
}

// -----

// An ARM target runs "fast" as well; a target with no row in the table (or
// none at all) gets the default, "plain", written out. A "fast" already in
// the IR stays unless overridden.

// DEFAULT:       func.func private @decode_silu
// DEFAULT-SAME:    tfm.schedule = "fast"
// DEFAULT:       {{//[ ]-----}}
// DEFAULT:       func.func private @decode_silu
// DEFAULT-SAME:    tfm.schedule = "plain"
// DEFAULT:       func.func private @decode_mul
// DEFAULT-SAME:    tfm.schedule = "fast"

// PLAIN:         func.func private @decode_silu
// PLAIN-SAME:      tfm.schedule = "plain"
// PLAIN:         {{//[ ]-----}}
// PLAIN:         func.func private @decode_silu
// PLAIN-SAME:      tfm.schedule = "plain"
// PLAIN:         func.func private @decode_mul
// PLAIN-SAME:      tfm.schedule = "plain"

// ONE:           func.func private @decode_silu
// ONE-SAME:        tfm.schedule = "plain"
// ONE:           {{//[ ]-----}}
// ONE:           func.func private @decode_silu
// ONE-SAME:        tfm.schedule = "plain"
// ONE:           func.func private @decode_mul
// ONE-SAME:        tfm.schedule = "fast"

module attributes {tfm.target = "arm-64-linux-arm_dot_prod"} {
  func.func private @decode_silu(%x: tensor<1x64xf32>) -> tensor<1x64xf32> attributes {tfm.kernel} {
    %y = tfm.silu %x : tensor<1x64xf32>
    return %y : tensor<1x64xf32>
  }
}

// -----

module {
  func.func private @decode_silu(%x: tensor<1x64xf32>) -> tensor<1x64xf32> attributes {tfm.kernel} {
    %y = tfm.silu %x : tensor<1x64xf32>
    return %y : tensor<1x64xf32>
  }
  func.func private @decode_mul(%x: tensor<1x64xf32>, %y: tensor<1x64xf32>) -> tensor<1x64xf32>
      attributes {tfm.kernel, tfm.schedule = "fast"} {
    %z = tfm.mul %x, %y : tensor<1x64xf32>
    return %z : tensor<1x64xf32>
  }
}
