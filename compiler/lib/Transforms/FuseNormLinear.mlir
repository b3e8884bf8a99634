// RUN: tfm-opt %s --split-input-file --tfm-fuse-norm-linear | FileCheck %s
// The pass leaves its own output unchanged: running it twice gives the same.
// RUN: tfm-opt %s --split-input-file --tfm-fuse-norm-linear --tfm-fuse-norm-linear | FileCheck %s

// The attention input: one norm feeding the q, k and v projections becomes
// one region; the normed rows never leave it. Weights defined after the
// first projection's user move above the region; RoPE is not this pass's.

// CHECK-LABEL: func.func @attention_input
// CHECK-SAME:    (%[[X:.*]]: tensor<1x64xf32>)
// CHECK-NEXT:    %[[WN:.*]] = tfm.weight @blk.0.attn_norm.weight
// CHECK-NEXT:    %[[WQ:.*]] = tfm.weight @blk.0.attn_q.weight
// CHECK-NEXT:    %[[WK:.*]] = tfm.weight @blk.0.attn_k.weight
// CHECK-NEXT:    %[[WV:.*]] = tfm.weight @blk.0.attn_v.weight
// CHECK-NEXT:    %[[R:.*]]:3 = tfm.fusion -> tensor<1x64xf32>, tensor<1x32xf32>, tensor<1x32xf32> {
// CHECK-NEXT:      %[[H:.*]] = tfm.rms_norm %[[X]], %[[WN]] {eps = 1.000000e-05 : f64}
// CHECK-NEXT:      %[[Q:.*]] = tfm.linear %[[H]], %[[WQ]]
// CHECK-NEXT:      %[[K:.*]] = tfm.linear %[[H]], %[[WK]]
// CHECK-NEXT:      %[[V:.*]] = tfm.linear %[[H]], %[[WV]]
// CHECK-NEXT:      tfm.yield %[[Q]], %[[K]], %[[V]] : tensor<1x64xf32>, tensor<1x32xf32>, tensor<1x32xf32>
// CHECK-NEXT:    }
// CHECK-NEXT:    %[[QR:.*]] = tfm.rope %[[R]]#0
// CHECK-NEXT:    %[[KR:.*]] = tfm.rope %[[R]]#1
// CHECK-NEXT:    return %[[QR]], %[[KR]], %[[R]]#2
module {
  tfm.weight_decl @"blk.0.attn_norm.weight" : tensor<64xf32>
  tfm.weight_decl @"blk.0.attn_q.weight" : tensor<64x64xf32>
  tfm.weight_decl @"blk.0.attn_k.weight" : tensor<32x64xf32>
  tfm.weight_decl @"blk.0.attn_v.weight" : tensor<32x64xf32>
  func.func @attention_input(%x: tensor<1x64xf32>) -> (tensor<1x64xf32>, tensor<1x32xf32>, tensor<1x32xf32>)
      attributes {tfm.entry = "decode"} {
    %wn = tfm.weight @"blk.0.attn_norm.weight" : tensor<64xf32>
    %h = tfm.rms_norm %x, %wn {eps = 1.0e-05 : f64} : tensor<1x64xf32>, tensor<64xf32>
    %wq = tfm.weight @"blk.0.attn_q.weight" : tensor<64x64xf32>
    %q0 = tfm.linear %h, %wq : tensor<1x64xf32>, tensor<64x64xf32>
    %q = tfm.rope %q0 {head_dim = 16 : i64, interleaved = true, position_scale = 1.0 : f64, rotary_dim = 16 : i64, theta = 1.0e+04 : f64} : tensor<1x64xf32>
    %wk = tfm.weight @"blk.0.attn_k.weight" : tensor<32x64xf32>
    %k0 = tfm.linear %h, %wk : tensor<1x64xf32>, tensor<32x64xf32>
    %k = tfm.rope %k0 {head_dim = 16 : i64, interleaved = true, position_scale = 1.0 : f64, rotary_dim = 16 : i64, theta = 1.0e+04 : f64} : tensor<1x32xf32>
    %wv = tfm.weight @"blk.0.attn_v.weight" : tensor<32x64xf32>
    %v = tfm.linear %h, %wv : tensor<1x64xf32>, tensor<32x64xf32>
    return %q, %k, %v : tensor<1x64xf32>, tensor<1x32xf32>, tensor<1x32xf32>
  }
}

// -----

// The FFN input: the norm and the gate and up projections; SiLU and mul stay
// outside (they are epilogues, another pass's).

// CHECK-LABEL: func.func @ffn_input
// CHECK:         %[[R:.*]]:2 = tfm.fusion -> tensor<?x96xf32>, tensor<?x96xf32> {
// CHECK-NEXT:      %[[H:.*]] = tfm.rms_norm
// CHECK-NEXT:      %[[G:.*]] = tfm.linear %[[H]]
// CHECK-NEXT:      %[[U:.*]] = tfm.linear %[[H]]
// CHECK-NEXT:      tfm.yield %[[G]], %[[U]]
// CHECK-NEXT:    }
// CHECK-NEXT:    %[[S:.*]] = tfm.silu %[[R]]#0
// CHECK-NEXT:    tfm.mul %[[S]], %[[R]]#1
module {
  tfm.weight_decl @"blk.0.ffn_norm.weight" : tensor<64xf32>
  tfm.weight_decl @"blk.0.ffn_gate.weight" : tensor<96x64xf32>
  tfm.weight_decl @"blk.0.ffn_up.weight" : tensor<96x64xf32>
  func.func @ffn_input(%x: tensor<?x64xf32>) -> tensor<?x96xf32> attributes {tfm.entry = "prefill"} {
    %wn = tfm.weight @"blk.0.ffn_norm.weight" : tensor<64xf32>
    %wg = tfm.weight @"blk.0.ffn_gate.weight" : tensor<96x64xf32>
    %wu = tfm.weight @"blk.0.ffn_up.weight" : tensor<96x64xf32>
    %h = tfm.rms_norm %x, %wn {eps = 1.0e-05 : f64} : tensor<?x64xf32>, tensor<64xf32>
    %g = tfm.linear %h, %wg : tensor<?x64xf32>, tensor<96x64xf32>
    %u = tfm.linear %h, %wu : tensor<?x64xf32>, tensor<96x64xf32>
    %s = tfm.silu %g : tensor<?x96xf32>
    %m = tfm.mul %s, %u : tensor<?x96xf32>
    return %m : tensor<?x96xf32>
  }
}

// -----

// A norm that something other than a projection reads stays on its own, and
// so do its projections.

// CHECK-LABEL: func.func @norm_with_other_user
// CHECK-NOT:     tfm.fusion
// CHECK:         %[[H:.*]] = tfm.rms_norm
// CHECK-NEXT:    tfm.linear %[[H]]
// CHECK-NEXT:    tfm.silu %[[H]]
// CHECK-NOT:     tfm.fusion
module {
  tfm.weight_decl @"blk.0.ffn_norm.weight" : tensor<64xf32>
  tfm.weight_decl @"blk.0.ffn_up.weight" : tensor<16x64xf32>
  func.func @norm_with_other_user(%x: tensor<1x64xf32>) -> (tensor<1x16xf32>, tensor<1x64xf32>) attributes {tfm.entry = "decode"} {
    %wn = tfm.weight @"blk.0.ffn_norm.weight" : tensor<64xf32>
    %w = tfm.weight @"blk.0.ffn_up.weight" : tensor<16x64xf32>
    %h = tfm.rms_norm %x, %wn {eps = 1.0e-05 : f64} : tensor<1x64xf32>, tensor<64xf32>
    %l = tfm.linear %h, %w : tensor<1x64xf32>, tensor<16x64xf32>
    %s = tfm.silu %h : tensor<1x64xf32>
    return %l, %s : tensor<1x16xf32>, tensor<1x64xf32>
  }
}

// -----

// The end of prefill: the last row, the final norm and the output head form
// one region.

// CHECK-LABEL: func.func @prefill_logits
// CHECK-SAME:    (%[[X:.*]]: tensor<?x64xf32>)
// CHECK:         %[[R:.*]] = tfm.fusion -> tensor<1x100xf32> {
// CHECK-NEXT:      %[[L:.*]] = tfm.last_row %[[X]]
// CHECK-NEXT:      %[[H:.*]] = tfm.rms_norm %[[L]]
// CHECK-NEXT:      %[[O:.*]] = tfm.linear %[[H]]
// CHECK-NEXT:      tfm.yield %[[O]] : tensor<1x100xf32>
// CHECK-NEXT:    }
// CHECK-NEXT:    return %[[R]]
module {
  tfm.weight_decl @"token_embd.weight" : tensor<100x64xf32>
  tfm.weight_decl @"output_norm.weight" : tensor<64xf32>
  func.func @prefill_logits(%x: tensor<?x64xf32>) -> tensor<1x100xf32> attributes {tfm.entry = "prefill"} {
    %wn = tfm.weight @"output_norm.weight" : tensor<64xf32>
    %wo = tfm.weight @"token_embd.weight" : tensor<100x64xf32>
    %l = tfm.last_row %x : tensor<?x64xf32>
    %h = tfm.rms_norm %l, %wn {eps = 1.0e-05 : f64} : tensor<1x64xf32>, tensor<64xf32>
    %o = tfm.linear %h, %wo : tensor<1x64xf32>, tensor<100x64xf32>
    return %o : tensor<1x100xf32>
  }
}

// -----

// A last row that is also used elsewhere stays outside the region.

// CHECK-LABEL: func.func @shared_last_row
// CHECK:         %[[L:.*]] = tfm.last_row
// CHECK-NEXT:    %[[R:.*]] = tfm.fusion -> tensor<1x100xf32> {
// CHECK-NEXT:      %[[H:.*]] = tfm.rms_norm %[[L]]
// CHECK-NEXT:      tfm.linear %[[H]]
// CHECK-NEXT:      tfm.yield
// CHECK-NEXT:    }
// CHECK-NEXT:    return %[[R]], %[[L]]
module {
  tfm.weight_decl @"token_embd.weight" : tensor<100x64xf32>
  tfm.weight_decl @"output_norm.weight" : tensor<64xf32>
  func.func @shared_last_row(%x: tensor<?x64xf32>) -> (tensor<1x100xf32>, tensor<1x64xf32>) attributes {tfm.entry = "prefill"} {
    %wn = tfm.weight @"output_norm.weight" : tensor<64xf32>
    %wo = tfm.weight @"token_embd.weight" : tensor<100x64xf32>
    %l = tfm.last_row %x : tensor<?x64xf32>
    %h = tfm.rms_norm %l, %wn {eps = 1.0e-05 : f64} : tensor<1x64xf32>, tensor<64xf32>
    %o = tfm.linear %h, %wo : tensor<1x64xf32>, tensor<100x64xf32>
    return %o, %l : tensor<1x100xf32>, tensor<1x64xf32>
  }
}

// -----

// GPT-2's attention input: a LayerNorm feeding the one biased qkv projection
// becomes one region; the weight and bias ops defined after the norm move up
// with it, and the column slices stay outside.

// CHECK-LABEL: func.func @layer_norm_qkv
// CHECK-SAME:    (%[[X:.*]]: tensor<?x64xf32>)
// CHECK-NEXT:    %[[W:.*]] = tfm.weight @blk.0.attn_norm.weight
// CHECK-NEXT:    %[[B:.*]] = tfm.weight @blk.0.attn_norm.bias
// CHECK-NEXT:    %[[WQKV:.*]] = tfm.weight @blk.0.attn_qkv.weight
// CHECK-NEXT:    %[[BQKV:.*]] = tfm.weight @blk.0.attn_qkv.bias
// CHECK-NEXT:    %[[R:.*]] = tfm.fusion -> tensor<?x192xf32> {
// CHECK-NEXT:      %[[H:.*]] = tfm.layer_norm %[[X]], %[[W]], %[[B]]
// CHECK-NEXT:      %[[QKV:.*]] = tfm.linear %[[H]], %[[WQKV]], %[[BQKV]]
// CHECK-NEXT:      tfm.yield %[[QKV]] : tensor<?x192xf32>
// CHECK-NEXT:    }
// CHECK-NEXT:    tfm.slice_cols %[[R]] begin 0 size 64 : tensor<?x192xf32>
module {
  tfm.weight_decl @"blk.0.attn_norm.weight" : tensor<64xf32>
  tfm.weight_decl @"blk.0.attn_norm.bias" : tensor<64xf32>
  tfm.weight_decl @"blk.0.attn_qkv.weight" : tensor<192x64xf32>
  tfm.weight_decl @"blk.0.attn_qkv.bias" : tensor<192xf32>
  func.func @layer_norm_qkv(%x: tensor<?x64xf32>) -> tensor<?x64xf32> attributes {tfm.entry = "prefill"} {
    %w = tfm.weight @"blk.0.attn_norm.weight" : tensor<64xf32>
    %b = tfm.weight @"blk.0.attn_norm.bias" : tensor<64xf32>
    %h = tfm.layer_norm %x, %w, %b {eps = 1.0e-05 : f64} : tensor<?x64xf32>, tensor<64xf32>, tensor<64xf32>
    %wqkv = tfm.weight @"blk.0.attn_qkv.weight" : tensor<192x64xf32>
    %bqkv = tfm.weight @"blk.0.attn_qkv.bias" : tensor<192xf32>
    %qkv = tfm.linear %h, %wqkv, %bqkv : tensor<?x64xf32>, tensor<192x64xf32>, tensor<192xf32>
    %q = tfm.slice_cols %qkv begin 0 size 64 : tensor<?x192xf32>
    return %q : tensor<?x64xf32>
  }
}

// -----

// Input that is fused already stays as it is, and so does a function that is
// not an entry point (a kernel: its ops are one kernel already).

// CHECK-LABEL: func.func @already_fused
// CHECK-SAME:    (%[[X:.*]]: tensor<1x64xf32>)
// CHECK-NEXT:    %[[WN:.*]] = tfm.weight @output_norm.weight
// CHECK-NEXT:    %[[WO:.*]] = tfm.weight @token_embd.weight
// CHECK-NEXT:    %[[R:.*]] = tfm.fusion -> tensor<1x100xf32> {
// CHECK-NEXT:      %[[H:.*]] = tfm.rms_norm %[[X]], %[[WN]]
// CHECK-NEXT:      %[[O:.*]] = tfm.linear %[[H]], %[[WO]]
// CHECK-NEXT:      tfm.yield %[[O]] : tensor<1x100xf32>
// CHECK-NEXT:    }
// CHECK-NEXT:    return %[[R]]
// CHECK-NEXT:  }
// CHECK-LABEL: func.func private @decode_logits
// CHECK-SAME:    (%[[A:.*]]: tensor<1x64xf32>, %[[B:.*]]: tensor<64xf32>, %[[C:.*]]: tensor<100x64xf32>)
// CHECK-NOT:     tfm.fusion
// CHECK:         %[[H:.*]] = tfm.rms_norm %[[A]], %[[B]]
// CHECK-NEXT:    %[[O:.*]] = tfm.linear %[[H]], %[[C]]
// CHECK-NEXT:    return %[[O]]
module {
  tfm.weight_decl @"token_embd.weight" : tensor<100x64xf32>
  tfm.weight_decl @"output_norm.weight" : tensor<64xf32>
  func.func @already_fused(%x: tensor<1x64xf32>) -> tensor<1x100xf32> attributes {tfm.entry = "decode"} {
    %wn = tfm.weight @"output_norm.weight" : tensor<64xf32>
    %wo = tfm.weight @"token_embd.weight" : tensor<100x64xf32>
    %r = tfm.fusion -> tensor<1x100xf32> {
      %h = tfm.rms_norm %x, %wn {eps = 1.0e-05 : f64} : tensor<1x64xf32>, tensor<64xf32>
      %o = tfm.linear %h, %wo : tensor<1x64xf32>, tensor<100x64xf32>
      tfm.yield %o : tensor<1x100xf32>
    }
    return %r : tensor<1x100xf32>
  }
  func.func private @decode_logits(%x: tensor<1x64xf32>, %wn: tensor<64xf32>, %wo: tensor<100x64xf32>)
      -> tensor<1x100xf32> attributes {tfm.kernel} {
    %h = tfm.rms_norm %x, %wn {eps = 1.0e-05 : f64} : tensor<1x64xf32>, tensor<64xf32>
    %o = tfm.linear %h, %wo : tensor<1x64xf32>, tensor<100x64xf32>
    return %o : tensor<1x100xf32>
  }
}
