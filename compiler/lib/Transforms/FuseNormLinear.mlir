// RUN: tfm-opt %s --split-input-file --tfm-fuse-norm-linear | FileCheck %s

// The attention input: one norm feeding the q, k and v projections becomes
// one region; the normed rows never leave it.

// CHECK-LABEL: func.func @attention_input
// CHECK-SAME:    (%[[X:.*]]: tensor<1x64xf32>
// CHECK:         %[[R:.*]]:3 = tfm.fusion -> tensor<1x64xf32>, tensor<1x32xf32>, tensor<1x32xf32> {
// CHECK-NEXT:      %[[H:.*]] = tfm.rms_norm %[[X]]
// CHECK-NEXT:      %[[Q:.*]] = tfm.linear %[[H]]
// CHECK-NEXT:      %[[K:.*]] = tfm.linear %[[H]]
// CHECK-NEXT:      %[[V:.*]] = tfm.linear %[[H]]
// CHECK-NEXT:      tfm.yield %[[Q]], %[[K]], %[[V]]
// CHECK:         tfm.rope %[[R]]#0
// CHECK:         tfm.rope %[[R]]#1
// CHECK:         return %{{.*}}, %{{.*}}, %[[R]]#2
func.func @attention_input(%x: tensor<1x64xf32>, %wn: tensor<64xf32>, %wq: tensor<64x64xf32>)
    -> (tensor<1x64xf32>, tensor<1x32xf32>, tensor<1x32xf32>) {
  %h = tfm.rms_norm %x, %wn {eps = 1.0e-05 : f64} : tensor<1x64xf32>, tensor<64xf32> -> tensor<1x64xf32>
  %q0 = tfm.linear %h, %wq : tensor<1x64xf32>, tensor<64x64xf32> -> tensor<1x64xf32>
  %q = tfm.rope %q0 {head_dim = 16 : i64, theta = 1.0e+04 : f64} : tensor<1x64xf32>
  // Defined after the first projection's user: hoisted above the region.
  %wk = tfm.weight "blk.0.attn_k.weight" : tensor<32x64xf32>
  %k0 = tfm.linear %h, %wk : tensor<1x64xf32>, tensor<32x64xf32> -> tensor<1x32xf32>
  %k = tfm.rope %k0 {head_dim = 16 : i64, theta = 1.0e+04 : f64} : tensor<1x32xf32>
  %wv = tfm.weight "blk.0.attn_v.weight" : tensor<32x64xf32>
  %v = tfm.linear %h, %wv : tensor<1x64xf32>, tensor<32x64xf32> -> tensor<1x32xf32>
  return %q, %k, %v : tensor<1x64xf32>, tensor<1x32xf32>, tensor<1x32xf32>
}

// -----

// A norm that something other than a linear reads stays on its own.

// CHECK-LABEL: func.func @norm_with_other_user
// CHECK-NOT:     tfm.fusion
// CHECK:         tfm.rms_norm
func.func @norm_with_other_user(%x: tensor<1x64xf32>, %wn: tensor<64xf32>, %w: tensor<8x64xf32>)
    -> (tensor<1x8xf32>, tensor<1x64xf32>) {
  %h = tfm.rms_norm %x, %wn {eps = 1.0e-05 : f64} : tensor<1x64xf32>, tensor<64xf32> -> tensor<1x64xf32>
  %l = tfm.linear %h, %w : tensor<1x64xf32>, tensor<8x64xf32> -> tensor<1x8xf32>
  %s = tfm.silu %h : tensor<1x64xf32>
  return %l, %s : tensor<1x8xf32>, tensor<1x64xf32>
}

// -----

// The end of prefill: the last row, the final norm and the output projection
// form one region.

// CHECK-LABEL: func.func @prefill_logits
// CHECK-SAME:    (%[[X:.*]]: tensor<?x64xf32>
// CHECK:         %[[R:.*]] = tfm.fusion -> tensor<1x100xf32> {
// CHECK-NEXT:      %[[L:.*]] = tfm.last_row %[[X]]
// CHECK-NEXT:      %[[H:.*]] = tfm.rms_norm %[[L]]
// CHECK-NEXT:      %[[O:.*]] = tfm.linear %[[H]]
// CHECK-NEXT:      tfm.yield %[[O]] : tensor<1x100xf32>
// CHECK:         return %[[R]]
func.func @prefill_logits(%x: tensor<?x64xf32>, %wn: tensor<64xf32>, %wo: tensor<100x64xf32>) -> tensor<1x100xf32> {
  %l = tfm.last_row %x : tensor<?x64xf32> -> tensor<1x64xf32>
  %h = tfm.rms_norm %l, %wn {eps = 1.0e-05 : f64} : tensor<1x64xf32>, tensor<64xf32> -> tensor<1x64xf32>
  %o = tfm.linear %h, %wo : tensor<1x64xf32>, tensor<100x64xf32> -> tensor<1x100xf32>
  return %o : tensor<1x100xf32>
}

// -----

// A last row that is also used elsewhere stays outside the region.

// CHECK-LABEL: func.func @shared_last_row
// CHECK:         %[[L:.*]] = tfm.last_row
// CHECK:         tfm.fusion
// CHECK-NEXT:      tfm.rms_norm %[[L]]
func.func @shared_last_row(%x: tensor<?x64xf32>, %wn: tensor<64xf32>, %wo: tensor<100x64xf32>)
    -> (tensor<1x100xf32>, tensor<1x64xf32>) {
  %l = tfm.last_row %x : tensor<?x64xf32> -> tensor<1x64xf32>
  %h = tfm.rms_norm %l, %wn {eps = 1.0e-05 : f64} : tensor<1x64xf32>, tensor<64xf32> -> tensor<1x64xf32>
  %o = tfm.linear %h, %wo : tensor<1x64xf32>, tensor<100x64xf32> -> tensor<1x100xf32>
  return %o, %l : tensor<1x100xf32>, tensor<1x64xf32>
}

// -----

// GPT-2's attention input: a LayerNorm feeding the one biased qkv projection
// becomes one region; the weight and bias ops move up with it.

// CHECK-LABEL: func.func @layer_norm_qkv
// CHECK-SAME:    (%[[X:.*]]: tensor<?x64xf32>, %[[W:.*]]: tensor<64xf32>, %[[B:.*]]: tensor<64xf32>)
// CHECK:         %[[WQKV:.*]] = tfm.weight "blk.0.attn_qkv.weight"
// CHECK:         %[[BQKV:.*]] = tfm.weight "blk.0.attn_qkv.bias"
// CHECK:         %[[R:.*]] = tfm.fusion -> tensor<?x192xf32> {
// CHECK-NEXT:      %[[H:.*]] = tfm.layer_norm %[[X]], %[[W]], %[[B]]
// CHECK-NEXT:      %[[QKV:.*]] = tfm.linear %[[H]], %[[WQKV]], %[[BQKV]]
// CHECK-NEXT:      tfm.yield %[[QKV]] : tensor<?x192xf32>
// CHECK:         tfm.slice_cols %[[R]]
func.func @layer_norm_qkv(%x: tensor<?x64xf32>, %w: tensor<64xf32>, %b: tensor<64xf32>) -> tensor<?x64xf32> {
  %h = tfm.layer_norm %x, %w, %b {eps = 1.0e-05 : f64} : tensor<?x64xf32>, tensor<64xf32>, tensor<64xf32> -> tensor<?x64xf32>
  %wqkv = tfm.weight "blk.0.attn_qkv.weight" : tensor<192x64xf32>
  %bqkv = tfm.weight "blk.0.attn_qkv.bias" : tensor<192xf32>
  %qkv = tfm.linear %h, %wqkv, %bqkv : tensor<?x64xf32>, tensor<192x64xf32>, tensor<192xf32> -> tensor<?x192xf32>
  %q = tfm.slice_cols %qkv {begin = 0 : i64, size = 64 : i64} : tensor<?x192xf32> -> tensor<?x64xf32>
  return %q : tensor<?x64xf32>
}

// -----

// The end of GPT-2's prefill: last row, final LayerNorm and the tied output
// head in one region.

// CHECK-LABEL: func.func @prefill_logits_layer_norm
// CHECK:         %[[R:.*]] = tfm.fusion -> tensor<1x100xf32> {
// CHECK-NEXT:      %[[L:.*]] = tfm.last_row
// CHECK-NEXT:      %[[H:.*]] = tfm.layer_norm %[[L]]
// CHECK-NEXT:      %[[O:.*]] = tfm.linear %[[H]]
// CHECK-NEXT:      tfm.yield %[[O]] : tensor<1x100xf32>
// CHECK:         return %[[R]]
func.func @prefill_logits_layer_norm(%x: tensor<?x64xf32>, %w: tensor<64xf32>, %b: tensor<64xf32>, %wte: tensor<100x64xf32>) -> tensor<1x100xf32> {
  %l = tfm.last_row %x : tensor<?x64xf32> -> tensor<1x64xf32>
  %h = tfm.layer_norm %l, %w, %b {eps = 1.0e-05 : f64} : tensor<1x64xf32>, tensor<64xf32>, tensor<64xf32> -> tensor<1x64xf32>
  %o = tfm.linear %h, %wte : tensor<1x64xf32>, tensor<100x64xf32> -> tensor<1x100xf32>
  return %o : tensor<1x100xf32>
}
