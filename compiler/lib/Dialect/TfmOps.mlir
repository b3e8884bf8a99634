// RUN: tfm-opt %s --split-input-file | tfm-opt --split-input-file | FileCheck %s

// Leaf and compute ops print back the way they parse.

// CHECK-LABEL: func.func @compute_ops
// CHECK-SAME:    (%[[TOKENS:.*]]: tensor<?xi32>)
func.func @compute_ops(%tokens: tensor<?xi32>) -> tensor<1x64xf32> {
  // CHECK: %[[TABLE:.*]] = tfm.weight "token_embd.weight" : tensor<100x64xf32>
  %table = tfm.weight "token_embd.weight" : tensor<100x64xf32>
  // CHECK: %[[X:.*]] = tfm.embedding %[[TABLE]], %[[TOKENS]] : tensor<100x64xf32>, tensor<?xi32> -> tensor<?x64xf32>
  %x = tfm.embedding %table, %tokens : tensor<100x64xf32>, tensor<?xi32> -> tensor<?x64xf32>
  %wn = tfm.weight "blk.0.attn_norm.weight" : tensor<64xf32>
  // CHECK: %[[H:.*]] = tfm.rms_norm %[[X]], %{{.*}} {eps = 1.000000e-05 : f64} : tensor<?x64xf32>, tensor<64xf32> -> tensor<?x64xf32>
  %h = tfm.rms_norm %x, %wn {eps = 1.0e-05 : f64} : tensor<?x64xf32>, tensor<64xf32> -> tensor<?x64xf32>
  %wk = tfm.weight "blk.0.attn_k.weight" : tensor<32x64xf32>
  // CHECK: %[[K:.*]] = tfm.linear %[[H]], %{{.*}} : tensor<?x64xf32>, tensor<32x64xf32> -> tensor<?x32xf32>
  %k = tfm.linear %h, %wk : tensor<?x64xf32>, tensor<32x64xf32> -> tensor<?x32xf32>
  // CHECK: %[[KR:.*]] = tfm.rope %[[K]] {head_dim = 16 : i64, theta = 1.000000e+04 : f64} : tensor<?x32xf32>
  %kr = tfm.rope %k {head_dim = 16 : i64, theta = 1.0e+04 : f64} : tensor<?x32xf32>
  // CHECK: %[[KC:.*]] = tfm.kv_cache key layer 0 : tensor<48x32xf32>
  // CHECK: %[[VC:.*]] = tfm.kv_cache value layer 0 : tensor<48x32xf32>
  %kc = tfm.kv_cache key layer 0 : tensor<48x32xf32>
  %vc = tfm.kv_cache value layer 0 : tensor<48x32xf32>
  // CHECK: tfm.kv_store %[[KR]], %[[KC]] : tensor<?x32xf32>, tensor<48x32xf32>
  tfm.kv_store %kr, %kc : tensor<?x32xf32>, tensor<48x32xf32>
  // CHECK: %[[A:.*]] = tfm.attention %[[X]], %[[KC]], %[[VC]] {head_dim = 16 : i64, n_heads = 4 : i64, n_kv_heads = 2 : i64}
  %a = tfm.attention %x, %kc, %vc {head_dim = 16 : i64, n_heads = 4 : i64, n_kv_heads = 2 : i64} : tensor<?x64xf32>, tensor<48x32xf32>, tensor<48x32xf32> -> tensor<?x64xf32>
  // CHECK: %[[S:.*]] = tfm.silu %[[A]] : tensor<?x64xf32>
  %s = tfm.silu %a : tensor<?x64xf32>
  // CHECK: %[[M:.*]] = tfm.mul %[[S]], %[[X]] : tensor<?x64xf32>
  %m = tfm.mul %s, %x : tensor<?x64xf32>
  // CHECK: %[[SUM:.*]] = tfm.add %[[M]], %[[H]] : tensor<?x64xf32>
  %sum = tfm.add %m, %h : tensor<?x64xf32>
  // CHECK: %[[LAST:.*]] = tfm.last_row %[[SUM]] : tensor<?x64xf32> -> tensor<1x64xf32>
  %last = tfm.last_row %sum : tensor<?x64xf32> -> tensor<1x64xf32>
  // CHECK: return %[[LAST]]
  return %last : tensor<1x64xf32>
}

// -----

// The GPT-2 ops: learned positions, LayerNorm with bias, a biased fused
// projection split into columns, and GELU in both forms.

// CHECK-LABEL: func.func @gpt2_ops
// CHECK-SAME:    (%[[X:.*]]: tensor<?x64xf32>, %[[P:.*]]: tensor<48x64xf32>, %[[W:.*]]: tensor<64xf32>, %[[WQKV:.*]]: tensor<192x64xf32>, %[[BQKV:.*]]: tensor<192xf32>)
func.func @gpt2_ops(%x: tensor<?x64xf32>, %wpe: tensor<48x64xf32>, %w: tensor<64xf32>,
                    %wqkv: tensor<192x64xf32>, %bqkv: tensor<192xf32>) -> (tensor<?x64xf32>, tensor<?x64xf32>) {
  // CHECK: %[[Y:.*]] = tfm.add_positions %[[X]], %[[P]] : tensor<?x64xf32>, tensor<48x64xf32> -> tensor<?x64xf32>
  %y = tfm.add_positions %x, %wpe : tensor<?x64xf32>, tensor<48x64xf32> -> tensor<?x64xf32>
  // CHECK: %[[H:.*]] = tfm.layer_norm %[[Y]], %[[W]], %[[W]] {eps = 1.000000e-05 : f64} : tensor<?x64xf32>, tensor<64xf32>, tensor<64xf32> -> tensor<?x64xf32>
  %h = tfm.layer_norm %y, %w, %w {eps = 1.0e-05 : f64} : tensor<?x64xf32>, tensor<64xf32>, tensor<64xf32> -> tensor<?x64xf32>
  // CHECK: %[[QKV:.*]] = tfm.linear %[[H]], %[[WQKV]], %[[BQKV]] : tensor<?x64xf32>, tensor<192x64xf32>, tensor<192xf32> -> tensor<?x192xf32>
  %qkv = tfm.linear %h, %wqkv, %bqkv : tensor<?x64xf32>, tensor<192x64xf32>, tensor<192xf32> -> tensor<?x192xf32>
  // CHECK: %[[K:.*]] = tfm.slice_cols %[[QKV]] {begin = 64 : i64, size = 64 : i64} : tensor<?x192xf32> -> tensor<?x64xf32>
  %k = tfm.slice_cols %qkv {begin = 64 : i64, size = 64 : i64} : tensor<?x192xf32> -> tensor<?x64xf32>
  // CHECK: %[[G:.*]] = tfm.gelu %[[K]] {approximate = true} : tensor<?x64xf32>
  %g = tfm.gelu %k {approximate = true} : tensor<?x64xf32>
  // CHECK: %[[E:.*]] = tfm.gelu %[[K]] {approximate = false} : tensor<?x64xf32>
  %e = tfm.gelu %k {approximate = false} : tensor<?x64xf32>
  // CHECK: return %[[G]], %[[E]]
  return %g, %e : tensor<?x64xf32>, tensor<?x64xf32>
}

// -----

// A fusion region yields what is used after it.

// CHECK-LABEL: func.func @fusion
func.func @fusion(%x: tensor<1x64xf32>, %w: tensor<64xf32>, %wq: tensor<64x64xf32>) -> tensor<1x64xf32> {
  // CHECK: %[[R:.*]] = tfm.fusion -> tensor<1x64xf32> {
  // CHECK:   %[[H:.*]] = tfm.rms_norm
  // CHECK:   %[[Q:.*]] = tfm.linear %[[H]]
  // CHECK:   tfm.yield %[[Q]] : tensor<1x64xf32>
  // CHECK: }
  %q = tfm.fusion -> tensor<1x64xf32> {
    %h = tfm.rms_norm %x, %w {eps = 1.0e-05 : f64} : tensor<1x64xf32>, tensor<64xf32> -> tensor<1x64xf32>
    %l = tfm.linear %h, %wq : tensor<1x64xf32>, tensor<64x64xf32> -> tensor<1x64xf32>
    tfm.yield %l : tensor<1x64xf32>
  }
  // CHECK: return %[[R]]
  return %q : tensor<1x64xf32>
}

// -----

// A launch names a kernel function of the same type.

module {
  // CHECK-LABEL: func.func @entry
  func.func @entry(%x: tensor<1x8xf32>) -> tensor<1x8xf32> {
    // CHECK: %[[Y:.*]] = tfm.launch @kernel(%{{.*}}) {arena_offsets = array<i64: 0>} : (tensor<1x8xf32>) -> tensor<1x8xf32>
    %y = tfm.launch @kernel(%x) {arena_offsets = array<i64: 0>} : (tensor<1x8xf32>) -> tensor<1x8xf32>
    return %y : tensor<1x8xf32>
  }
  func.func private @kernel(%x: tensor<1x8xf32>) -> tensor<1x8xf32> {
    %y = tfm.silu %x : tensor<1x8xf32>
    return %y : tensor<1x8xf32>
  }
}
