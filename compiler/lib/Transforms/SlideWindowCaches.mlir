// RUN: tfm-opt %s --split-input-file --tfm-slide-window-caches | FileCheck %s
// The pass leaves its own output unchanged: running it twice gives the same.
// RUN: tfm-opt %s --split-input-file --tfm-slide-window-caches --tfm-slide-window-caches | FileCheck %s
// Choosing layouts after it keeps the caches sliding.
// RUN: tfm-opt %s --split-input-file --tfm-slide-window-caches --tfm-choose-cache-layouts | FileCheck %s --check-prefix=LAYOUT

// Caches only a window of 8 reads, with prefill chunks of 4: 8 - 1 + 4 = 11
// rows of the 64 positions, sliding (a dynamic offset), in the declaration
// and every reference, with the window they serve. A cache some attention
// reads whole keeps every position.

// CHECK-LABEL: module
// CHECK-NEXT:    tfm.cache_decl @blk.0.key window 8 : memref<11x32xf32, strided<[32, 1], offset: ?>>
// CHECK-NEXT:    tfm.cache_decl @blk.0.value window 8 : memref<11x32xf32, strided<[32, 1], offset: ?>>
// CHECK-NEXT:    tfm.cache_decl @blk.1.key : memref<64x32xf32>{{$}}
// CHECK-NEXT:    tfm.cache_decl @blk.1.value : memref<64x32xf32>{{$}}
// CHECK-LABEL: func.func @prefill
// CHECK-NEXT:    %[[KC:.*]] = tfm.kv_cache @blk.0.key : memref<11x32xf32, strided<[32, 1], offset: ?>>
// CHECK-NEXT:    %[[VC:.*]] = tfm.kv_cache @blk.0.value : memref<11x32xf32, strided<[32, 1], offset: ?>>
// CHECK-NEXT:    tfm.kv_store %{{.*}}, %[[KC]] : tensor<?x32xf32>, memref<11x32xf32, strided<[32, 1], offset: ?>>
// CHECK-NEXT:    tfm.attention %{{.*}}, %[[KC]], %[[VC]] {{.*}} : tensor<?x64xf32>, memref<11x32xf32, strided<[32, 1], offset: ?>>, memref<11x32xf32, strided<[32, 1], offset: ?>>

// LAYOUT-LABEL: module
// LAYOUT-NEXT:    tfm.cache_decl @blk.0.key window 8 : memref<11x32xf32, strided<[1, 11], offset: ?>>
// LAYOUT-NEXT:    tfm.cache_decl @blk.0.value window 8 : memref<11x32xf32, strided<[32, 1], offset: ?>>
// LAYOUT-NEXT:    tfm.cache_decl @blk.1.key : memref<64x32xf32, strided<[1, 64]>>
module attributes {tfm.prefill_chunk = 4 : i64} {
  tfm.cache_decl @"blk.0.key" : memref<64x32xf32>
  tfm.cache_decl @"blk.0.value" : memref<64x32xf32>
  tfm.cache_decl @"blk.1.key" : memref<64x32xf32>
  tfm.cache_decl @"blk.1.value" : memref<64x32xf32>
  func.func @prefill(%q: tensor<?x64xf32>, %k: tensor<?x32xf32>) -> tensor<?x64xf32>
      attributes {tfm.entry = "prefill"} {
    %kc = tfm.kv_cache @"blk.0.key" : memref<64x32xf32>
    %vc = tfm.kv_cache @"blk.0.value" : memref<64x32xf32>
    tfm.kv_store %k, %kc : tensor<?x32xf32>, memref<64x32xf32>
    %a = tfm.attention %q, %kc, %vc {head_dim = 16 : i64, n_heads = 4 : i64, n_kv_heads = 2 : i64,
                                     window = 8 : i64}
        : tensor<?x64xf32>, memref<64x32xf32>, memref<64x32xf32>
    %kc1 = tfm.kv_cache @"blk.1.key" : memref<64x32xf32>
    %vc1 = tfm.kv_cache @"blk.1.value" : memref<64x32xf32>
    %b = tfm.attention %a, %kc1, %vc1 {head_dim = 16 : i64, n_heads = 4 : i64, n_kv_heads = 2 : i64,
                                       window = 8 : i64}
        : tensor<?x64xf32>, memref<64x32xf32>, memref<64x32xf32>
    %c = tfm.attention %b, %kc1, %vc1 {head_dim = 16 : i64, n_heads = 4 : i64, n_kv_heads = 2 : i64}
        : tensor<?x64xf32>, memref<64x32xf32>, memref<64x32xf32>
    return %c : tensor<?x64xf32>
  }
}

// -----

// A window that a chunk's rows and the window's keys fill past the context
// saves nothing: 60 - 1 + 8 > 64, the caches keep every position. Without a
// prefill chunk (hand-written IR) the rows a call writes are not bounded:
// nothing slides either.

// CHECK-LABEL: module
// CHECK-NEXT:    tfm.cache_decl @blk.0.key : memref<64x32xf32>{{$}}
// CHECK-LABEL: module
// CHECK-NEXT:    tfm.cache_decl @blk.0.key : memref<64x32xf32>{{$}}
module attributes {tfm.prefill_chunk = 8 : i64} {
  tfm.cache_decl @"blk.0.key" : memref<64x32xf32>
  tfm.cache_decl @"blk.0.value" : memref<64x32xf32>
  func.func @decode(%q: tensor<1x64xf32>) -> tensor<1x64xf32> attributes {tfm.entry = "decode"} {
    %kc = tfm.kv_cache @"blk.0.key" : memref<64x32xf32>
    %vc = tfm.kv_cache @"blk.0.value" : memref<64x32xf32>
    %a = tfm.attention %q, %kc, %vc {head_dim = 16 : i64, n_heads = 4 : i64, n_kv_heads = 2 : i64,
                                     window = 60 : i64}
        : tensor<1x64xf32>, memref<64x32xf32>, memref<64x32xf32>
    return %a : tensor<1x64xf32>
  }
}

// -----

module {
  tfm.cache_decl @"blk.0.key" : memref<64x32xf32>
  tfm.cache_decl @"blk.0.value" : memref<64x32xf32>
  func.func @decode(%q: tensor<1x64xf32>) -> tensor<1x64xf32> attributes {tfm.entry = "decode"} {
    %kc = tfm.kv_cache @"blk.0.key" : memref<64x32xf32>
    %vc = tfm.kv_cache @"blk.0.value" : memref<64x32xf32>
    %a = tfm.attention %q, %kc, %vc {head_dim = 16 : i64, n_heads = 4 : i64, n_kv_heads = 2 : i64,
                                     window = 8 : i64}
        : tensor<1x64xf32>, memref<64x32xf32>, memref<64x32xf32>
    return %a : tensor<1x64xf32>
  }
}

// -----

// A GPU target's caches live on the device and hold every position.

// CHECK-LABEL: module
// CHECK-NEXT:    tfm.cache_decl @blk.0.key : memref<64x32xf32>{{$}}
module attributes {tfm.prefill_chunk = 4 : i64, tfm.target = "x86-64-linux-avx2-cuda-cuda_capability_80"} {
  tfm.cache_decl @"blk.0.key" : memref<64x32xf32>
  tfm.cache_decl @"blk.0.value" : memref<64x32xf32>
  func.func @decode(%q: tensor<1x64xf32>) -> tensor<1x64xf32> attributes {tfm.entry = "decode"} {
    %kc = tfm.kv_cache @"blk.0.key" : memref<64x32xf32>
    %vc = tfm.kv_cache @"blk.0.value" : memref<64x32xf32>
    %a = tfm.attention %q, %kc, %vc {head_dim = 16 : i64, n_heads = 4 : i64, n_kv_heads = 2 : i64,
                                     window = 8 : i64}
        : tensor<1x64xf32>, memref<64x32xf32>, memref<64x32xf32>
    return %a : tensor<1x64xf32>
  }
}
