// RUN: tfm-opt %s --split-input-file --tfm-plan-memory --verify-diagnostics | FileCheck %s
// Planning a planned module plans it the same again.
// RUN: tfm-opt %s --split-input-file --tfm-plan-memory --tfm-plan-memory --verify-diagnostics | FileCheck %s

// %a is read by the third launch, so %b and %c each need bytes of their own
// while it lives; the returned value is the caller's (-1). Without caches the
// module gets no tfm.kv_cache_bytes.

// CHECK:       module {
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

// CHECK:       module attributes {tfm.prefill_chunk = 4 : i64} {
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

// -----

// The KV-cache block: the caches back to back in declaration order (not by
// name or size), each at a 64-byte aligned offset; an offset already there
// is replaced. 16x32 floats are 2048 bytes; 5x3 floats are 60, so the next
// cache starts at 4096 + 64. The layout does not change the size. Caches
// passed to launches take no arena bytes, and a launch without results gets
// an empty arena_offsets.

// CHECK-LABEL: module attributes {tfm.kv_cache_bytes = 6208 : i64, tfm.prefill_chunk = 4 : i64} {
// CHECK-NEXT:    tfm.cache_decl @blk.1.value offset 0 : memref<16x32xf32>{{$}}
// CHECK-NEXT:    tfm.cache_decl @blk.0.key offset 2048 : memref<16x32xf32, strided<[1, 16]>>
// CHECK-NEXT:    tfm.cache_decl @odd offset 4096 : memref<5x3xf32>
// CHECK-NEXT:    tfm.cache_decl @blk.0.value offset 4160 : memref<16x32xf32>{{$}}
// CHECK-NEXT:    func.func @decode
// CHECK-SAME:      tfm.arena_bytes = 128
// CHECK-NEXT:      %[[A:.*]] = tfm.launch @k1({{.*}}) {arena_offsets = array<i64: 0>}
// CHECK-NEXT:      %[[KC:.*]] = tfm.kv_cache @blk.0.key
// CHECK-NEXT:      %[[VC:.*]] = tfm.kv_cache @blk.0.value
// CHECK-NEXT:      tfm.launch @store(%[[A]], %[[KC]]) {arena_offsets = array<i64>}
// CHECK-NEXT:      tfm.launch @attend(%[[A]], %[[KC]], %[[VC]]) {arena_offsets = array<i64: -1>}
module attributes {tfm.prefill_chunk = 4 : i64} {
  tfm.cache_decl @"blk.1.value" : memref<16x32xf32>
  tfm.cache_decl @"blk.0.key" offset 4096 : memref<16x32xf32, strided<[1, 16]>>
  tfm.cache_decl @"odd" : memref<5x3xf32>
  tfm.cache_decl @"blk.0.value" : memref<16x32xf32>
  func.func @decode(%t: tensor<1xi32>) -> tensor<1x32xf32> attributes {tfm.entry = "decode"} {
    %a = tfm.launch @k1(%t) : (tensor<1xi32>) -> tensor<1x32xf32>
    %kc = tfm.kv_cache @"blk.0.key" : memref<16x32xf32, strided<[1, 16]>>
    %vc = tfm.kv_cache @"blk.0.value" : memref<16x32xf32>
    tfm.launch @store(%a, %kc) : (tensor<1x32xf32>, memref<16x32xf32, strided<[1, 16]>>) -> ()
    %b = tfm.launch @attend(%a, %kc, %vc)
        : (tensor<1x32xf32>, memref<16x32xf32, strided<[1, 16]>>, memref<16x32xf32>) -> tensor<1x32xf32>
    return %b : tensor<1x32xf32>
  }
  func.func private @k1(%t: tensor<1xi32>) -> tensor<1x32xf32>
  func.func private @store(%x: tensor<1x32xf32>, %c: memref<16x32xf32, strided<[1, 16]>>)
  func.func private @attend(%x: tensor<1x32xf32>, %k: memref<16x32xf32, strided<[1, 16]>>, %v: memref<16x32xf32>)
      -> tensor<1x32xf32>
}

// -----

// A cache's bytes follow its element type: 16x32 f16 is 1024 bytes, 5x3
// bf16 is 30 (64 with alignment).

// CHECK-LABEL: module attributes {tfm.kv_cache_bytes = 2112 : i64} {
// CHECK-NEXT:    tfm.cache_decl @blk.0.key offset 0 : memref<16x32xf16, strided<[1, 16]>>
// CHECK-NEXT:    tfm.cache_decl @odd offset 1024 : memref<5x3xbf16>
// CHECK-NEXT:    tfm.cache_decl @blk.0.value offset 1088 : memref<16x32xf16>{{$}}
module {
  tfm.cache_decl @"blk.0.key" : memref<16x32xf16, strided<[1, 16]>>
  tfm.cache_decl @"odd" : memref<5x3xbf16>
  tfm.cache_decl @"blk.0.value" : memref<16x32xf16>
}


// -----

// Sliding caches (a window, a dynamic offset) are placed as the others are,
// then each gets the 8 bytes of its base after the last cache: 11x32 floats
// are 1408 bytes, the last cache ends at 2816 + 2048 = 4864, the bases are
// at 4864 and 4872, and the block is aligned to 4928.

// CHECK-LABEL: module attributes {tfm.kv_cache_bytes = 4928 : i64} {
// CHECK-NEXT:    tfm.cache_decl @blk.0.key offset 0 window 8 base 4864 : memref<11x32xf32, strided<[1, 11], offset: ?>>
// CHECK-NEXT:    tfm.cache_decl @blk.0.value offset 1408 window 8 base 4872 : memref<11x32xf32, strided<[32, 1], offset: ?>>
// CHECK-NEXT:    tfm.cache_decl @blk.1.key offset 2816 : memref<16x32xf32>{{$}}
module {
  tfm.cache_decl @"blk.0.key" window 8 : memref<11x32xf32, strided<[1, 11], offset: ?>>
  tfm.cache_decl @"blk.0.value" window 8 : memref<11x32xf32, strided<[32, 1], offset: ?>>
  tfm.cache_decl @"blk.1.key" : memref<16x32xf32>
}
