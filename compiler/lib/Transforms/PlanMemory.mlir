// RUN: tfm-opt %s --split-input-file --tfm-plan-memory --verify-diagnostics | FileCheck %s

// %a is read by the third launch, so %b and %c each need bytes of their own
// while it lives; the returned value is the caller's (-1).

// CHECK-LABEL: func.func @overlapping
// CHECK-SAME:    tfm.arena_bytes = 192
// CHECK:         tfm.launch @k1({{.*}}) {arena_offsets = array<i64: 0>}
// CHECK:         tfm.launch @k2({{.*}}) {arena_offsets = array<i64: 64>}
// CHECK:         tfm.launch @k3({{.*}}) {arena_offsets = array<i64: 128>}
// CHECK:         tfm.launch @k2({{.*}}) {arena_offsets = array<i64: -1>}
module {
  func.func @overlapping(%t: tensor<1xi32>) -> tensor<1x16xf32> attributes {tfm.entry = "decode"} {
    %a = tfm.launch @k1(%t) : (tensor<1xi32>) -> tensor<1x16xf32>
    %b = tfm.launch @k2(%a) : (tensor<1x16xf32>) -> tensor<1x16xf32>
    %c = tfm.launch @k3(%a, %b) : (tensor<1x16xf32>, tensor<1x16xf32>) -> tensor<1x16xf32>
    %d = tfm.launch @k2(%c) : (tensor<1x16xf32>) -> tensor<1x16xf32>
    return %d : tensor<1x16xf32>
  }
  func.func private @k1(%t: tensor<1xi32>) -> tensor<1x16xf32>
  func.func private @k2(%x: tensor<1x16xf32>) -> tensor<1x16xf32>
  func.func private @k3(%x: tensor<1x16xf32>, %y: tensor<1x16xf32>) -> tensor<1x16xf32>
}

// -----

// In a chain, a value whose last reader has run gives its bytes to the next
// one: %c reuses %a's offset.

// CHECK-LABEL: func.func @chain
// CHECK-SAME:    tfm.arena_bytes = 128
// CHECK:         tfm.launch @k1({{.*}}) {arena_offsets = array<i64: 0>}
// CHECK:         tfm.launch @k2({{.*}}) {arena_offsets = array<i64: 64>}
// CHECK:         tfm.launch @k2({{.*}}) {arena_offsets = array<i64: 0>}
// CHECK:         tfm.launch @k2({{.*}}) {arena_offsets = array<i64: -1>}
module {
  func.func @chain(%t: tensor<1xi32>) -> tensor<1x16xf32> attributes {tfm.entry = "decode"} {
    %a = tfm.launch @k1(%t) : (tensor<1xi32>) -> tensor<1x16xf32>
    %b = tfm.launch @k2(%a) : (tensor<1x16xf32>) -> tensor<1x16xf32>
    %c = tfm.launch @k2(%b) : (tensor<1x16xf32>) -> tensor<1x16xf32>
    %d = tfm.launch @k2(%c) : (tensor<1x16xf32>) -> tensor<1x16xf32>
    return %d : tensor<1x16xf32>
  }
  func.func private @k1(%t: tensor<1xi32>) -> tensor<1x16xf32>
  func.func private @k2(%x: tensor<1x16xf32>) -> tensor<1x16xf32>
}

// -----

// Dynamic rows are bounded by the prefill chunk: 4 rows x 10 floats = 160
// bytes, aligned to 192.

// CHECK-LABEL: func.func @prefill
// CHECK-SAME:    tfm.arena_bytes = 384
// CHECK:         tfm.launch @k1({{.*}}) {arena_offsets = array<i64: 0>}
// CHECK:         tfm.launch @k2({{.*}}) {arena_offsets = array<i64: 192>}
module attributes {tfm.prefill_chunk = 4 : i64} {
  func.func @prefill(%t: tensor<?xi32>) -> tensor<1x10xf32> attributes {tfm.entry = "prefill"} {
    %a = tfm.launch @k1(%t) : (tensor<?xi32>) -> tensor<?x10xf32>
    %b = tfm.launch @k2(%a) : (tensor<?x10xf32>) -> tensor<?x10xf32>
    %c = tfm.launch @k3(%b) : (tensor<?x10xf32>) -> tensor<1x10xf32>
    return %c : tensor<1x10xf32>
  }
  func.func private @k1(%t: tensor<?xi32>) -> tensor<?x10xf32>
  func.func private @k2(%x: tensor<?x10xf32>) -> tensor<?x10xf32>
  func.func private @k3(%x: tensor<?x10xf32>) -> tensor<1x10xf32>
}

// -----

module {
  func.func @unbounded(%t: tensor<?xi32>) -> tensor<1x10xf32> attributes {tfm.entry = "prefill"} {
    // expected-error @+1 {{result type 'tensor<?x10xf32>' has dynamic rows but the module has no tfm.prefill_chunk to bound them}}
    %a = tfm.launch @k1(%t) : (tensor<?xi32>) -> tensor<?x10xf32>
    %c = tfm.launch @k3(%a) : (tensor<?x10xf32>) -> tensor<1x10xf32>
    return %c : tensor<1x10xf32>
  }
  func.func private @k1(%t: tensor<?xi32>) -> tensor<?x10xf32>
  func.func private @k3(%x: tensor<?x10xf32>) -> tensor<1x10xf32>
}
