// RUN: tfm-opt %s --split-input-file --tfm-choose-cache-layouts | FileCheck %s
// The pass leaves its own output unchanged: running it twice gives the same.
// RUN: tfm-opt %s --split-input-file --tfm-choose-cache-layouts --tfm-choose-cache-layouts | FileCheck %s

// A cache that attention reads as keys is transposed, strided<[1, context]>:
// in its declaration and in every tfm.kv_cache that names it, in every entry
// function, whether the reference feeds attention, a store in a region or a
// store outside one. The value cache keeps rows.

// CHECK-LABEL: module
// CHECK-NEXT:    tfm.cache_decl @blk.0.key : memref<16x32xf32, strided<[1, 16]>>
// CHECK-NEXT:    tfm.cache_decl @blk.0.value : memref<16x32xf32>{{$}}
// CHECK-LABEL: func.func @prefill
// CHECK-SAME:    (%[[Q:.*]]: tensor<?x64xf32>, %[[K:.*]]: tensor<?x32xf32>, %[[V:.*]]: tensor<?x32xf32>)
// CHECK-NEXT:    %[[KC:.*]] = tfm.kv_cache @blk.0.key : memref<16x32xf32, strided<[1, 16]>>
// CHECK-NEXT:    %[[VC:.*]] = tfm.kv_cache @blk.0.value : memref<16x32xf32>{{$}}
// CHECK-NEXT:    tfm.fusion {
// CHECK-NEXT:      tfm.kv_store %[[K]], %[[KC]] : tensor<?x32xf32>, memref<16x32xf32, strided<[1, 16]>>
// CHECK-NEXT:      tfm.kv_store %[[V]], %[[VC]] : tensor<?x32xf32>, memref<16x32xf32>{{$}}
// CHECK-NEXT:    }
// CHECK-NEXT:    tfm.attention %[[Q]], %[[KC]], %[[VC]] {{.*}} : tensor<?x64xf32>, memref<16x32xf32, strided<[1, 16]>>, memref<16x32xf32>{{$}}
// CHECK-LABEL: func.func @decode
// CHECK-SAME:    (%[[Q:.*]]: tensor<1x64xf32>, %[[K:.*]]: tensor<1x32xf32>)
// CHECK-NEXT:    %[[KS:.*]] = tfm.kv_cache @blk.0.key : memref<16x32xf32, strided<[1, 16]>>
// CHECK-NEXT:    tfm.kv_store %[[K]], %[[KS]] : tensor<1x32xf32>, memref<16x32xf32, strided<[1, 16]>>
// CHECK-NEXT:    %[[KC:.*]] = tfm.kv_cache @blk.0.key : memref<16x32xf32, strided<[1, 16]>>
// CHECK-NEXT:    %[[VC:.*]] = tfm.kv_cache @blk.0.value : memref<16x32xf32>{{$}}
// CHECK-NEXT:    tfm.attention %[[Q]], %[[KC]], %[[VC]] {{.*}} : tensor<1x64xf32>, memref<16x32xf32, strided<[1, 16]>>, memref<16x32xf32>{{$}}
module {
  tfm.cache_decl @"blk.0.key" : memref<16x32xf32>
  tfm.cache_decl @"blk.0.value" : memref<16x32xf32>
  func.func @prefill(%q: tensor<?x64xf32>, %k: tensor<?x32xf32>, %v: tensor<?x32xf32>) -> tensor<?x64xf32>
      attributes {tfm.entry = "prefill"} {
    %kc = tfm.kv_cache @"blk.0.key" : memref<16x32xf32>
    %vc = tfm.kv_cache @"blk.0.value" : memref<16x32xf32>
    tfm.fusion {
      tfm.kv_store %k, %kc : tensor<?x32xf32>, memref<16x32xf32>
      tfm.kv_store %v, %vc : tensor<?x32xf32>, memref<16x32xf32>
      tfm.yield
    }
    %a = tfm.attention %q, %kc, %vc {head_dim = 16 : i64, n_heads = 4 : i64, n_kv_heads = 2 : i64}
        : tensor<?x64xf32>, memref<16x32xf32>, memref<16x32xf32>
    return %a : tensor<?x64xf32>
  }
  func.func @decode(%q: tensor<1x64xf32>, %k: tensor<1x32xf32>) -> tensor<1x64xf32> attributes {tfm.entry = "decode"} {
    %ks = tfm.kv_cache @"blk.0.key" : memref<16x32xf32>
    tfm.kv_store %k, %ks : tensor<1x32xf32>, memref<16x32xf32>
    %kc = tfm.kv_cache @"blk.0.key" : memref<16x32xf32>
    %vc = tfm.kv_cache @"blk.0.value" : memref<16x32xf32>
    %a = tfm.attention %q, %kc, %vc {head_dim = 16 : i64, n_heads = 4 : i64, n_kv_heads = 2 : i64}
        : tensor<1x64xf32>, memref<16x32xf32>, memref<16x32xf32>
    return %a : tensor<1x64xf32>
  }
}

// -----

// Only caches read as keys are chosen for: a key cache already transposed
// stays so, and a value cache (or one nothing reads as keys) keeps the layout
// it was written with, here transposed by hand.

// CHECK-LABEL: module
// CHECK-NEXT:    tfm.cache_decl @blk.0.key : memref<16x32xf32, strided<[1, 16]>>
// CHECK-NEXT:    tfm.cache_decl @blk.0.value : memref<16x32xf32, strided<[1, 16]>>
// CHECK-NEXT:    tfm.cache_decl @blk.1.key : memref<16x32xf32, strided<[1, 16]>>
// CHECK-LABEL: func.func @decode
// CHECK-NEXT:    %[[KC:.*]] = tfm.kv_cache @blk.0.key : memref<16x32xf32, strided<[1, 16]>>
// CHECK-NEXT:    %[[VC:.*]] = tfm.kv_cache @blk.0.value : memref<16x32xf32, strided<[1, 16]>>
// CHECK-NEXT:    tfm.attention %{{.*}}, %[[KC]], %[[VC]] {{.*}} : tensor<1x64xf32>, memref<16x32xf32, strided<[1, 16]>>, memref<16x32xf32, strided<[1, 16]>>{{$}}
// CHECK-NEXT:    %[[K1:.*]] = tfm.kv_cache @blk.1.key : memref<16x32xf32, strided<[1, 16]>>
// CHECK-NEXT:    tfm.kv_store %{{.*}}, %[[K1]] : tensor<1x32xf32>, memref<16x32xf32, strided<[1, 16]>>{{$}}
module {
  tfm.cache_decl @"blk.0.key" : memref<16x32xf32, strided<[1, 16]>>
  tfm.cache_decl @"blk.0.value" : memref<16x32xf32, strided<[1, 16]>>
  tfm.cache_decl @"blk.1.key" : memref<16x32xf32, strided<[1, 16]>>
  func.func @decode(%q: tensor<1x64xf32>, %k: tensor<1x32xf32>) -> tensor<1x64xf32> attributes {tfm.entry = "decode"} {
    %kc = tfm.kv_cache @"blk.0.key" : memref<16x32xf32, strided<[1, 16]>>
    %vc = tfm.kv_cache @"blk.0.value" : memref<16x32xf32, strided<[1, 16]>>
    %a = tfm.attention %q, %kc, %vc {head_dim = 16 : i64, n_heads = 4 : i64, n_kv_heads = 2 : i64}
        : tensor<1x64xf32>, memref<16x32xf32, strided<[1, 16]>>, memref<16x32xf32, strided<[1, 16]>>
    %k1 = tfm.kv_cache @"blk.1.key" : memref<16x32xf32, strided<[1, 16]>>
    tfm.kv_store %k, %k1 : tensor<1x32xf32>, memref<16x32xf32, strided<[1, 16]>>
    return %a : tensor<1x64xf32>
  }
}

// -----

// Outlined IR: a cache passed to a launch keeps its layout, since the kernel
// signatures fix it. Here the key cache stays laid out by rows (the kernel
// reads it as keys) and a value cache written transposed stays transposed.

// CHECK-LABEL: module
// CHECK-NEXT:    tfm.cache_decl @blk.0.key : memref<16x32xf32>{{$}}
// CHECK-NEXT:    tfm.cache_decl @blk.0.value : memref<16x32xf32, strided<[1, 16]>>
// CHECK-LABEL: func.func @decode
// CHECK-NEXT:    %[[KC:.*]] = tfm.kv_cache @blk.0.key : memref<16x32xf32>{{$}}
// CHECK-NEXT:    %[[VC:.*]] = tfm.kv_cache @blk.0.value : memref<16x32xf32, strided<[1, 16]>>
// CHECK-NEXT:    tfm.launch @decode_attention(%{{.*}}, %[[KC]], %[[VC]]) : (tensor<1x64xf32>, memref<16x32xf32>, memref<16x32xf32, strided<[1, 16]>>) -> tensor<1x64xf32>
// CHECK-LABEL: func.func private @decode_attention
// CHECK-SAME:    (%{{.*}}: tensor<1x64xf32>, %{{.*}}: memref<16x32xf32>, %{{.*}}: memref<16x32xf32, strided<[1, 16]>>)
module {
  tfm.cache_decl @"blk.0.key" : memref<16x32xf32>
  tfm.cache_decl @"blk.0.value" : memref<16x32xf32, strided<[1, 16]>>
  func.func @decode(%q: tensor<1x64xf32>) -> tensor<1x64xf32> attributes {tfm.entry = "decode"} {
    %kc = tfm.kv_cache @"blk.0.key" : memref<16x32xf32>
    %vc = tfm.kv_cache @"blk.0.value" : memref<16x32xf32, strided<[1, 16]>>
    %a = tfm.launch @decode_attention(%q, %kc, %vc)
        : (tensor<1x64xf32>, memref<16x32xf32>, memref<16x32xf32, strided<[1, 16]>>) -> tensor<1x64xf32>
    return %a : tensor<1x64xf32>
  }
  func.func private @decode_attention(%q: tensor<1x64xf32>, %kc: memref<16x32xf32>,
                                      %vc: memref<16x32xf32, strided<[1, 16]>>) -> tensor<1x64xf32>
      attributes {tfm.kernel} {
    %a = tfm.attention %q, %kc, %vc {head_dim = 16 : i64, n_heads = 4 : i64, n_kv_heads = 2 : i64}
        : tensor<1x64xf32>, memref<16x32xf32>, memref<16x32xf32, strided<[1, 16]>>
    return %a : tensor<1x64xf32>
  }
}

// -----

// A cache of f16 keeps its element type when transposed.

// CHECK-LABEL: module
// CHECK-NEXT:    tfm.cache_decl @blk.0.key : memref<16x32xf16, strided<[1, 16]>>
// CHECK-NEXT:    tfm.cache_decl @blk.0.value : memref<16x32xf16>{{$}}
module {
  tfm.cache_decl @"blk.0.key" : memref<16x32xf16>
  tfm.cache_decl @"blk.0.value" : memref<16x32xf16>
  func.func @decode(%q: tensor<1x64xf32>) -> tensor<1x64xf32> attributes {tfm.entry = "decode"} {
    %kc = tfm.kv_cache @"blk.0.key" : memref<16x32xf16>
    %vc = tfm.kv_cache @"blk.0.value" : memref<16x32xf16>
    %a = tfm.attention %q, %kc, %vc {n_heads = 2 : i64, n_kv_heads = 1 : i64, head_dim = 32 : i64}
        : tensor<1x64xf32>, memref<16x32xf16>, memref<16x32xf16>
    return %a : tensor<1x64xf32>
  }
}
