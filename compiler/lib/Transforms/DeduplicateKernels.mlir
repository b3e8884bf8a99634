// RUN: tfm-opt %s --split-input-file --tfm-deduplicate-kernels | FileCheck %s
// The pass leaves its own output unchanged: running it twice gives the same.
// RUN: tfm-opt %s --split-input-file --tfm-deduplicate-kernels --tfm-deduplicate-kernels | FileCheck %s

// The cache stores of two layers, as outlining leaves them without epilogue
// fusion. Each layer's key store equals the other's and so does each value
// store, up to locations: they merge into the first, and the launches of
// the second layer go to it. The key and value stores are the same code on
// caches of different layouts (the key cache transposed), so they never
// merge: a kernel is compiled for one layout, and sharing it would write the
// values in the keys' layout (the miscompile this guards against).

// CHECK-LABEL: func.func @prefill
// CHECK-SAME:    (%[[K0:.*]]: tensor<?x32xf32>, %[[V0:.*]]: tensor<?x32xf32>, %[[K1:.*]]: tensor<?x32xf32>, %[[V1:.*]]: tensor<?x32xf32>)
// CHECK-NEXT:    %[[KC0:.*]] = tfm.kv_cache @blk.0.key
// CHECK-NEXT:    %[[VC0:.*]] = tfm.kv_cache @blk.0.value
// CHECK-NEXT:    tfm.launch @prefill_key_store(%[[K0]], %[[KC0]]) : (tensor<?x32xf32>, memref<16x32xf32, strided<[1, 16]>>) -> ()
// CHECK-NEXT:    tfm.launch @prefill_value_store(%[[V0]], %[[VC0]]) : (tensor<?x32xf32>, memref<16x32xf32>) -> ()
// CHECK-NEXT:    %[[KC1:.*]] = tfm.kv_cache @blk.1.key
// CHECK-NEXT:    %[[VC1:.*]] = tfm.kv_cache @blk.1.value
// CHECK-NEXT:    tfm.launch @prefill_key_store(%[[K1]], %[[KC1]]) : (tensor<?x32xf32>, memref<16x32xf32, strided<[1, 16]>>) -> ()
// CHECK-NEXT:    tfm.launch @prefill_value_store(%[[V1]], %[[VC1]]) : (tensor<?x32xf32>, memref<16x32xf32>) -> ()
// CHECK-NEXT:    return
// CHECK-NEXT:  }
// CHECK-NEXT:  func.func private @prefill_key_store(%{{.*}}: tensor<?x32xf32> {tfm.token_rows}, %{{.*}}: memref<16x32xf32, strided<[1, 16]>>) attributes {tfm.kernel} {
// CHECK-NEXT:    tfm.kv_store %{{.*}} : tensor<?x32xf32>, memref<16x32xf32, strided<[1, 16]>>
// CHECK-NEXT:    return
// CHECK-NEXT:  }
// CHECK-NEXT:  func.func private @prefill_value_store(%{{.*}}: tensor<?x32xf32> {tfm.token_rows}, %{{.*}}: memref<16x32xf32>) attributes {tfm.kernel} {
// CHECK-NEXT:    tfm.kv_store %{{.*}} : tensor<?x32xf32>, memref<16x32xf32>{{$}}
// CHECK-NEXT:    return
// CHECK-NEXT:  }
// CHECK-NOT:   func.func
// CHECK-NOT:   _store_1
module {
  tfm.cache_decl @"blk.0.key" : memref<16x32xf32, strided<[1, 16]>>
  tfm.cache_decl @"blk.0.value" : memref<16x32xf32>
  tfm.cache_decl @"blk.1.key" : memref<16x32xf32, strided<[1, 16]>>
  tfm.cache_decl @"blk.1.value" : memref<16x32xf32>
  func.func @prefill(%k0: tensor<?x32xf32>, %v0: tensor<?x32xf32>, %k1: tensor<?x32xf32>, %v1: tensor<?x32xf32>)
      attributes {tfm.entry = "prefill"} {
    %kc0 = tfm.kv_cache @"blk.0.key" : memref<16x32xf32, strided<[1, 16]>>
    %vc0 = tfm.kv_cache @"blk.0.value" : memref<16x32xf32>
    tfm.launch @prefill_key_store(%k0, %kc0) : (tensor<?x32xf32>, memref<16x32xf32, strided<[1, 16]>>) -> ()
    tfm.launch @prefill_value_store(%v0, %vc0) : (tensor<?x32xf32>, memref<16x32xf32>) -> ()
    %kc1 = tfm.kv_cache @"blk.1.key" : memref<16x32xf32, strided<[1, 16]>>
    %vc1 = tfm.kv_cache @"blk.1.value" : memref<16x32xf32>
    tfm.launch @prefill_key_store_1(%k1, %kc1) : (tensor<?x32xf32>, memref<16x32xf32, strided<[1, 16]>>) -> ()
    tfm.launch @prefill_value_store_1(%v1, %vc1) : (tensor<?x32xf32>, memref<16x32xf32>) -> ()
    return
  }
  func.func private @prefill_key_store(%k: tensor<?x32xf32> {tfm.token_rows}, %c: memref<16x32xf32, strided<[1, 16]>>)
      attributes {tfm.kernel} {
    tfm.kv_store %k, %c : tensor<?x32xf32>, memref<16x32xf32, strided<[1, 16]>> loc("blk.0.attn")
    return loc("blk.0.attn")
  } loc("blk.0.attn")
  func.func private @prefill_value_store(%v: tensor<?x32xf32> {tfm.token_rows}, %c: memref<16x32xf32>)
      attributes {tfm.kernel} {
    tfm.kv_store %v, %c : tensor<?x32xf32>, memref<16x32xf32> loc("blk.0.attn")
    return loc("blk.0.attn")
  } loc("blk.0.attn")
  func.func private @prefill_key_store_1(%k: tensor<?x32xf32> {tfm.token_rows}, %c: memref<16x32xf32, strided<[1, 16]>>)
      attributes {tfm.kernel} {
    tfm.kv_store %k, %c : tensor<?x32xf32>, memref<16x32xf32, strided<[1, 16]>> loc("blk.1.attn")
    return loc("blk.1.attn")
  } loc("blk.1.attn")
  func.func private @prefill_value_store_1(%v: tensor<?x32xf32> {tfm.token_rows}, %c: memref<16x32xf32>)
      attributes {tfm.kernel} {
    tfm.kv_store %v, %c : tensor<?x32xf32>, memref<16x32xf32> loc("blk.1.attn")
    return loc("blk.1.attn")
  } loc("blk.1.attn")
}

// -----

// Everything the code generator reads must be equal for a merge. Of four
// norm kernels with one function type, only the first and the last are the
// same: the second has another eps, the third another schedule. A kernel
// whose argument has no tfm.token_rows is another kernel too, and so is one
// whose body reads its arguments the other way round. Functions that are not
// kernels never merge.

// CHECK-LABEL: func.func @decode
// CHECK-NEXT:    %[[W:.*]] = tfm.weight
// CHECK-NEXT:    %[[A:.*]] = tfm.launch @decode_norm(%{{.*}}, %[[W]])
// CHECK-NEXT:    %[[B:.*]] = tfm.launch @decode_norm_eps(%[[A]], %[[W]])
// CHECK-NEXT:    %[[C:.*]] = tfm.launch @decode_norm_plain(%[[B]], %[[W]])
// CHECK-NEXT:    %[[D:.*]] = tfm.launch @decode_norm(%[[C]], %[[W]])
// CHECK-NEXT:    %[[E:.*]] = tfm.launch @decode_norm_rows(%[[D]], %[[W]])
// CHECK-NEXT:    %[[F:.*]] = tfm.launch @decode_add(%[[D]], %[[E]])
// CHECK-NEXT:    %[[G:.*]] = tfm.launch @decode_add_swapped(%[[D]], %[[F]])
// CHECK-NEXT:    return %[[G]]
// CHECK-NEXT:  }
// CHECK-NEXT:  func.func private @decode_norm(
// CHECK-SAME:    attributes {tfm.kernel, tfm.schedule = "fast"}
// CHECK-NEXT:    tfm.rms_norm %{{.*}} {eps = 1.000000e-05 : f64}
// CHECK-NEXT:    return
// CHECK-NEXT:  }
// CHECK-NEXT:  func.func private @decode_norm_eps(
// CHECK-SAME:    attributes {tfm.kernel, tfm.schedule = "fast"}
// CHECK-NEXT:    tfm.rms_norm %{{.*}} {eps = 9.9999999999999995E-7 : f64}
// CHECK-NEXT:    return
// CHECK-NEXT:  }
// CHECK-NEXT:  func.func private @decode_norm_plain(
// CHECK-SAME:    attributes {tfm.kernel, tfm.schedule = "plain"}
// CHECK-NEXT:    tfm.rms_norm %{{.*}} {eps = 1.000000e-05 : f64}
// CHECK-NEXT:    return
// CHECK-NEXT:  }
// CHECK-NEXT:  func.func private @decode_norm_rows(%{{.*}}: tensor<1x64xf32>, %{{.*}}: tensor<64xf32>) -> tensor<1x64xf32>
// CHECK-SAME:    attributes {tfm.kernel, tfm.schedule = "fast"}
// CHECK-NEXT:    tfm.rms_norm %{{.*}} {eps = 1.000000e-05 : f64}
// CHECK-NEXT:    return
// CHECK-NEXT:  }
// CHECK-NEXT:  func.func private @decode_add(%[[X:.*]]: tensor<1x64xf32> {tfm.token_rows}, %[[Y:.*]]: tensor<1x64xf32> {tfm.token_rows})
// CHECK-NEXT:    tfm.add %[[X]], %[[Y]]
// CHECK-NEXT:    return
// CHECK-NEXT:  }
// CHECK-NEXT:  func.func private @decode_add_swapped(%[[X:.*]]: tensor<1x64xf32> {tfm.token_rows}, %[[Y:.*]]: tensor<1x64xf32> {tfm.token_rows})
// CHECK-NEXT:    tfm.add %[[Y]], %[[X]]
// CHECK-NEXT:    return
// CHECK-NEXT:  }
// CHECK-NEXT:  func.func private @helper(
// CHECK:       func.func private @helper_1(
// CHECK-NOT:   func.func
module {
  tfm.weight_decl @"blk.0.attn_norm.weight" : tensor<64xf32>
  func.func @decode(%x: tensor<1x64xf32>) -> tensor<1x64xf32> attributes {tfm.entry = "decode"} {
    %w = tfm.weight @"blk.0.attn_norm.weight" : tensor<64xf32>
    %a = tfm.launch @decode_norm(%x, %w) : (tensor<1x64xf32>, tensor<64xf32>) -> tensor<1x64xf32>
    %b = tfm.launch @decode_norm_eps(%a, %w) : (tensor<1x64xf32>, tensor<64xf32>) -> tensor<1x64xf32>
    %c = tfm.launch @decode_norm_plain(%b, %w) : (tensor<1x64xf32>, tensor<64xf32>) -> tensor<1x64xf32>
    %d = tfm.launch @decode_norm_1(%c, %w) : (tensor<1x64xf32>, tensor<64xf32>) -> tensor<1x64xf32>
    %e = tfm.launch @decode_norm_rows(%d, %w) : (tensor<1x64xf32>, tensor<64xf32>) -> tensor<1x64xf32>
    %f = tfm.launch @decode_add(%d, %e) : (tensor<1x64xf32>, tensor<1x64xf32>) -> tensor<1x64xf32>
    %g = tfm.launch @decode_add_swapped(%d, %f) : (tensor<1x64xf32>, tensor<1x64xf32>) -> tensor<1x64xf32>
    return %g : tensor<1x64xf32>
  }
  func.func private @decode_norm(%x: tensor<1x64xf32> {tfm.token_rows}, %w: tensor<64xf32>)
      -> (tensor<1x64xf32> {tfm.token_rows}) attributes {tfm.kernel, tfm.schedule = "fast"} {
    %h = tfm.rms_norm %x, %w {eps = 1.0e-05 : f64} : tensor<1x64xf32>, tensor<64xf32>
    return %h : tensor<1x64xf32>
  }
  func.func private @decode_norm_eps(%x: tensor<1x64xf32> {tfm.token_rows}, %w: tensor<64xf32>)
      -> (tensor<1x64xf32> {tfm.token_rows}) attributes {tfm.kernel, tfm.schedule = "fast"} {
    %h = tfm.rms_norm %x, %w {eps = 1.0e-06 : f64} : tensor<1x64xf32>, tensor<64xf32>
    return %h : tensor<1x64xf32>
  }
  func.func private @decode_norm_plain(%x: tensor<1x64xf32> {tfm.token_rows}, %w: tensor<64xf32>)
      -> (tensor<1x64xf32> {tfm.token_rows}) attributes {tfm.kernel, tfm.schedule = "plain"} {
    %h = tfm.rms_norm %x, %w {eps = 1.0e-05 : f64} : tensor<1x64xf32>, tensor<64xf32>
    return %h : tensor<1x64xf32>
  }
  func.func private @decode_norm_1(%x: tensor<1x64xf32> {tfm.token_rows}, %w: tensor<64xf32>)
      -> (tensor<1x64xf32> {tfm.token_rows}) attributes {tfm.kernel, tfm.schedule = "fast"} {
    %h = tfm.rms_norm %x, %w {eps = 1.0e-05 : f64} : tensor<1x64xf32>, tensor<64xf32>
    return %h : tensor<1x64xf32>
  }
  func.func private @decode_norm_rows(%x: tensor<1x64xf32>, %w: tensor<64xf32>)
      -> tensor<1x64xf32> attributes {tfm.kernel, tfm.schedule = "fast"} {
    %h = tfm.rms_norm %x, %w {eps = 1.0e-05 : f64} : tensor<1x64xf32>, tensor<64xf32>
    return %h : tensor<1x64xf32>
  }
  func.func private @decode_add(%x: tensor<1x64xf32> {tfm.token_rows}, %y: tensor<1x64xf32> {tfm.token_rows})
      -> (tensor<1x64xf32> {tfm.token_rows}) attributes {tfm.kernel} {
    %s = tfm.add %x, %y : tensor<1x64xf32>
    return %s : tensor<1x64xf32>
  }
  func.func private @decode_add_swapped(%x: tensor<1x64xf32> {tfm.token_rows}, %y: tensor<1x64xf32> {tfm.token_rows})
      -> (tensor<1x64xf32> {tfm.token_rows}) attributes {tfm.kernel} {
    %s = tfm.add %y, %x : tensor<1x64xf32>
    return %s : tensor<1x64xf32>
  }
  func.func private @helper(%x: tensor<1x64xf32>) -> tensor<1x64xf32> {
    %s = tfm.silu %x : tensor<1x64xf32>
    return %s : tensor<1x64xf32>
  }
  func.func private @helper_1(%x: tensor<1x64xf32>) -> tensor<1x64xf32> {
    %s = tfm.silu %x : tensor<1x64xf32>
    return %s : tensor<1x64xf32>
  }
}
