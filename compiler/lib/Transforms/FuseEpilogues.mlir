// RUN: tfm-opt %s --split-input-file --tfm-fuse-epilogues | FileCheck %s
// The pass leaves its own output unchanged: running it twice gives the same.
// RUN: tfm-opt %s --split-input-file --tfm-fuse-epilogues --tfm-fuse-epilogues | FileCheck %s

// A linear with no norm before it (attn_output, ffn_down) gets a region of
// its own, and the residual add joins it.

// CHECK-LABEL: func.func @residual
// CHECK-SAME:    (%[[X:.*]]: tensor<1x64xf32>, %[[A:.*]]: tensor<1x64xf32>)
// CHECK-NEXT:    %[[W:.*]] = tfm.weight @blk.0.attn_output.weight
// CHECK-NEXT:    %[[R:.*]] = tfm.fusion -> tensor<1x64xf32> {
// CHECK-NEXT:      %[[O:.*]] = tfm.linear %[[A]], %[[W]]
// CHECK-NEXT:      %[[S:.*]] = tfm.add %[[X]], %[[O]]
// CHECK-NEXT:      tfm.yield %[[S]] : tensor<1x64xf32>
// CHECK-NEXT:    }
// CHECK-NEXT:    return %[[R]]
module {
  tfm.weight_decl @"blk.0.attn_output.weight" : tensor<64x64xf32>
  func.func @residual(%x: tensor<1x64xf32>, %a: tensor<1x64xf32>) -> tensor<1x64xf32> attributes {tfm.entry = "decode"} {
    %w = tfm.weight @"blk.0.attn_output.weight" : tensor<64x64xf32>
    %o = tfm.linear %a, %w : tensor<1x64xf32>, tensor<64x64xf32>
    %s = tfm.add %x, %o : tensor<1x64xf32>
    return %s : tensor<1x64xf32>
  }
}

// -----

// RoPE and both cache stores join the q/k/v region (the cache references
// move up with them); attention, which reads the caches, stays outside and
// after it.

// CHECK-LABEL: func.func @attention_input
// CHECK-SAME:    (%[[H:.*]]: tensor<?x64xf32>)
// CHECK:         %[[KC:.*]] = tfm.kv_cache @blk.0.key : memref<16x32xf32>
// CHECK-NEXT:    %[[VC:.*]] = tfm.kv_cache @blk.0.value : memref<16x32xf32>
// CHECK-NEXT:    %[[R:.*]] = tfm.fusion -> tensor<?x64xf32> {
// CHECK-NEXT:      %[[Q0:.*]] = tfm.linear %[[H]]
// CHECK-NEXT:      %[[K0:.*]] = tfm.linear %[[H]]
// CHECK-NEXT:      %[[V:.*]] = tfm.linear %[[H]]
// CHECK-NEXT:      %[[K:.*]] = tfm.rope %[[K0]]
// CHECK-NEXT:      tfm.kv_store %[[K]], %[[KC]]
// CHECK-NEXT:      tfm.kv_store %[[V]], %[[VC]]
// CHECK-NEXT:      %[[Q:.*]] = tfm.rope %[[Q0]]
// CHECK-NEXT:      tfm.yield %[[Q]] : tensor<?x64xf32>
// CHECK-NEXT:    }
// CHECK-NEXT:    %[[A:.*]] = tfm.attention %[[R]], %[[KC]], %[[VC]]
// CHECK-NEXT:    return %[[A]]
module {
  tfm.weight_decl @"blk.0.attn_q.weight" : tensor<64x64xf32>
  tfm.weight_decl @"blk.0.attn_k.weight" : tensor<32x64xf32>
  tfm.weight_decl @"blk.0.attn_v.weight" : tensor<32x64xf32>
  tfm.cache_decl @"blk.0.key" : memref<16x32xf32>
  tfm.cache_decl @"blk.0.value" : memref<16x32xf32>
  func.func @attention_input(%h: tensor<?x64xf32>) -> tensor<?x64xf32> attributes {tfm.entry = "prefill"} {
    %wq = tfm.weight @"blk.0.attn_q.weight" : tensor<64x64xf32>
    %wk = tfm.weight @"blk.0.attn_k.weight" : tensor<32x64xf32>
    %wv = tfm.weight @"blk.0.attn_v.weight" : tensor<32x64xf32>
    %qkv:3 = tfm.fusion -> tensor<?x64xf32>, tensor<?x32xf32>, tensor<?x32xf32> {
      %q = tfm.linear %h, %wq : tensor<?x64xf32>, tensor<64x64xf32>
      %k = tfm.linear %h, %wk : tensor<?x64xf32>, tensor<32x64xf32>
      %v = tfm.linear %h, %wv : tensor<?x64xf32>, tensor<32x64xf32>
      tfm.yield %q, %k, %v : tensor<?x64xf32>, tensor<?x32xf32>, tensor<?x32xf32>
    }
    %q = tfm.rope %qkv#0 {head_dim = 16 : i64, interleaved = true, position_scale = 1.0 : f64, rotary_dim = 16 : i64, theta = 1.0e+04 : f64} : tensor<?x64xf32>
    %k = tfm.rope %qkv#1 {head_dim = 16 : i64, interleaved = true, position_scale = 1.0 : f64, rotary_dim = 16 : i64, theta = 1.0e+04 : f64} : tensor<?x32xf32>
    %kc = tfm.kv_cache @"blk.0.key" : memref<16x32xf32>
    %vc = tfm.kv_cache @"blk.0.value" : memref<16x32xf32>
    tfm.kv_store %k, %kc : tensor<?x32xf32>, memref<16x32xf32>
    tfm.kv_store %qkv#2, %vc : tensor<?x32xf32>, memref<16x32xf32>
    %a = tfm.attention %q, %kc, %vc {head_dim = 16 : i64, n_heads = 4 : i64, n_kv_heads = 2 : i64}
        : tensor<?x64xf32>, memref<16x32xf32>, memref<16x32xf32>
    return %a : tensor<?x64xf32>
  }
}

// -----

// SiLU(gate) * up lands with the gate/up projections.

// CHECK-LABEL: func.func @gated_ffn
// CHECK:         %[[R:.*]] = tfm.fusion -> tensor<1x96xf32> {
// CHECK-NEXT:      %[[G:.*]] = tfm.linear
// CHECK-NEXT:      %[[U:.*]] = tfm.linear
// CHECK-NEXT:      %[[S:.*]] = tfm.silu %[[G]]
// CHECK-NEXT:      %[[M:.*]] = tfm.mul %[[S]], %[[U]]
// CHECK-NEXT:      tfm.yield %[[M]] : tensor<1x96xf32>
// CHECK-NEXT:    }
// CHECK-NEXT:    return %[[R]]
module {
  tfm.weight_decl @"blk.0.ffn_gate.weight" : tensor<96x64xf32>
  tfm.weight_decl @"blk.0.ffn_up.weight" : tensor<96x64xf32>
  func.func @gated_ffn(%h: tensor<1x64xf32>) -> tensor<1x96xf32> attributes {tfm.entry = "decode"} {
    %wg = tfm.weight @"blk.0.ffn_gate.weight" : tensor<96x64xf32>
    %wu = tfm.weight @"blk.0.ffn_up.weight" : tensor<96x64xf32>
    %gu:2 = tfm.fusion -> tensor<1x96xf32>, tensor<1x96xf32> {
      %g = tfm.linear %h, %wg : tensor<1x64xf32>, tensor<96x64xf32>
      %u = tfm.linear %h, %wu : tensor<1x64xf32>, tensor<96x64xf32>
      tfm.yield %g, %u : tensor<1x96xf32>, tensor<1x96xf32>
    }
    %s = tfm.silu %gu#0 : tensor<1x96xf32>
    %m = tfm.mul %s, %gu#1 : tensor<1x96xf32>
    return %m : tensor<1x96xf32>
  }
}

// -----

// Nothing joins a region across an op with memory effects: a store after an
// attention that reads the same cache stays where it is, outside the region,
// and attention itself never joins one.

// CHECK-LABEL: func.func @store_after_read
// CHECK-SAME:    (%[[H:.*]]: tensor<1x64xf32>, %[[Q:.*]]: tensor<1x64xf32>)
// CHECK:         %[[KC:.*]] = tfm.kv_cache @blk.0.key
// CHECK-NEXT:    %[[VC:.*]] = tfm.kv_cache @blk.0.value
// CHECK-NEXT:    %[[WK:.*]] = tfm.weight @blk.0.attn_k.weight
// CHECK-NEXT:    %[[R:.*]] = tfm.fusion -> tensor<1x32xf32> {
// CHECK-NEXT:      %[[K:.*]] = tfm.linear %[[H]], %[[WK]]
// CHECK-NEXT:      tfm.yield %[[K]]
// CHECK-NEXT:    }
// CHECK-NEXT:    %[[A:.*]] = tfm.attention %[[Q]], %[[KC]], %[[VC]]
// CHECK-NEXT:    tfm.kv_store %[[R]], %[[KC]]
// CHECK-NEXT:    return %[[A]]
module {
  tfm.weight_decl @"blk.0.attn_k.weight" : tensor<32x64xf32>
  tfm.cache_decl @"blk.0.key" : memref<16x32xf32>
  tfm.cache_decl @"blk.0.value" : memref<16x32xf32>
  func.func @store_after_read(%h: tensor<1x64xf32>, %q: tensor<1x64xf32>) -> tensor<1x64xf32> attributes {tfm.entry = "decode"} {
    %kc = tfm.kv_cache @"blk.0.key" : memref<16x32xf32>
    %vc = tfm.kv_cache @"blk.0.value" : memref<16x32xf32>
    %wk = tfm.weight @"blk.0.attn_k.weight" : tensor<32x64xf32>
    %k = tfm.linear %h, %wk : tensor<1x64xf32>, tensor<32x64xf32>
    %a = tfm.attention %q, %kc, %vc {head_dim = 16 : i64, n_heads = 4 : i64, n_kv_heads = 2 : i64}
        : tensor<1x64xf32>, memref<16x32xf32>, memref<16x32xf32>
    tfm.kv_store %k, %kc : tensor<1x32xf32>, memref<16x32xf32>
    return %a : tensor<1x64xf32>
  }
}

// -----

// An epilogue that reads the attention's result joins no region before the
// attention either: the region ends where attention begins.

// CHECK-LABEL: func.func @after_attention
// CHECK:         %[[R:.*]] = tfm.fusion -> tensor<1x64xf32> {
// CHECK-NEXT:      tfm.linear
// CHECK-NEXT:      tfm.yield
// CHECK-NEXT:    }
// CHECK-NEXT:    %[[A:.*]] = tfm.attention %[[R]]
// CHECK-NEXT:    %[[S:.*]] = tfm.add %[[A]], %[[R]]
// CHECK-NEXT:    return %[[S]]
module {
  tfm.weight_decl @"blk.0.attn_q.weight" : tensor<64x64xf32>
  tfm.cache_decl @"blk.0.key" : memref<16x32xf32>
  tfm.cache_decl @"blk.0.value" : memref<16x32xf32>
  func.func @after_attention(%h: tensor<1x64xf32>) -> tensor<1x64xf32> attributes {tfm.entry = "decode"} {
    %kc = tfm.kv_cache @"blk.0.key" : memref<16x32xf32>
    %vc = tfm.kv_cache @"blk.0.value" : memref<16x32xf32>
    %wq = tfm.weight @"blk.0.attn_q.weight" : tensor<64x64xf32>
    %q = tfm.linear %h, %wq : tensor<1x64xf32>, tensor<64x64xf32>
    %a = tfm.attention %q, %kc, %vc {head_dim = 16 : i64, n_heads = 4 : i64, n_kv_heads = 2 : i64}
        : tensor<1x64xf32>, memref<16x32xf32>, memref<16x32xf32>
    %s = tfm.add %a, %q : tensor<1x64xf32>
    return %s : tensor<1x64xf32>
  }
}

// -----

// Elementwise ops that read no region stay alone, and a function that is not
// an entry point (a kernel) is left as it is.

// CHECK-LABEL: func.func @no_producer
// CHECK-NOT:     tfm.fusion
// CHECK:         tfm.silu
// CHECK-LABEL: func.func private @decode_attn_out
// CHECK-NOT:     tfm.fusion
// CHECK:         %[[O:.*]] = tfm.linear
// CHECK-NEXT:    tfm.add %{{.*}}, %[[O]]
// CHECK-NOT:     tfm.fusion
module {
  func.func @no_producer(%x: tensor<1x64xf32>) -> tensor<1x64xf32> attributes {tfm.entry = "decode"} {
    %s = tfm.silu %x : tensor<1x64xf32>
    return %s : tensor<1x64xf32>
  }
  func.func private @decode_attn_out(%a: tensor<1x64xf32>, %w: tensor<64x64xf32>, %x: tensor<1x64xf32>)
      -> tensor<1x64xf32> attributes {tfm.kernel} {
    %o = tfm.linear %a, %w : tensor<1x64xf32>, tensor<64x64xf32>
    %s = tfm.add %x, %o : tensor<1x64xf32>
    return %s : tensor<1x64xf32>
  }
}

// -----

// GPT-2's attention input: the q/k/v column slices of the fused projection
// and both cache stores join its region; only q leaves it.

// CHECK-LABEL: func.func @fused_qkv
// CHECK:         %[[KC:.*]] = tfm.kv_cache @blk.0.key
// CHECK-NEXT:    %[[VC:.*]] = tfm.kv_cache @blk.0.value
// CHECK-NEXT:    %[[R:.*]] = tfm.fusion -> tensor<1x64xf32> {
// CHECK-NEXT:      tfm.layer_norm
// CHECK-NEXT:      %[[QKV:.*]] = tfm.linear
// CHECK-NEXT:      %[[V:.*]] = tfm.slice_cols %[[QKV]] begin 128 size 64 : tensor<1x192xf32>
// CHECK-NEXT:      %[[K:.*]] = tfm.slice_cols %[[QKV]] begin 64 size 64 : tensor<1x192xf32>
// CHECK-NEXT:      tfm.kv_store %[[K]], %[[KC]]
// CHECK-NEXT:      tfm.kv_store %[[V]], %[[VC]]
// CHECK-NEXT:      %[[Q:.*]] = tfm.slice_cols %[[QKV]] begin 0 size 64 : tensor<1x192xf32>
// CHECK-NEXT:      tfm.yield %[[Q]] : tensor<1x64xf32>
// CHECK-NEXT:    }
// CHECK-NEXT:    tfm.attention %[[R]], %[[KC]], %[[VC]]
module {
  tfm.weight_decl @"blk.0.attn_norm.weight" : tensor<64xf32>
  tfm.weight_decl @"blk.0.attn_qkv.weight" : tensor<192x64xf32>
  tfm.weight_decl @"blk.0.attn_qkv.bias" : tensor<192xf32>
  tfm.cache_decl @"blk.0.key" : memref<16x64xf32>
  tfm.cache_decl @"blk.0.value" : memref<16x64xf32>
  func.func @fused_qkv(%x: tensor<1x64xf32>) -> tensor<1x64xf32> attributes {tfm.entry = "decode"} {
    %w = tfm.weight @"blk.0.attn_norm.weight" : tensor<64xf32>
    %wqkv = tfm.weight @"blk.0.attn_qkv.weight" : tensor<192x64xf32>
    %bqkv = tfm.weight @"blk.0.attn_qkv.bias" : tensor<192xf32>
    %qkv = tfm.fusion -> tensor<1x192xf32> {
      %h = tfm.layer_norm %x, %w, %w {eps = 1.0e-05 : f64} : tensor<1x64xf32>, tensor<64xf32>, tensor<64xf32>
      %l = tfm.linear %h, %wqkv, %bqkv : tensor<1x64xf32>, tensor<192x64xf32>, tensor<192xf32>
      tfm.yield %l : tensor<1x192xf32>
    }
    %q = tfm.slice_cols %qkv begin 0 size 64 : tensor<1x192xf32>
    %k = tfm.slice_cols %qkv begin 64 size 64 : tensor<1x192xf32>
    %v = tfm.slice_cols %qkv begin 128 size 64 : tensor<1x192xf32>
    %kc = tfm.kv_cache @"blk.0.key" : memref<16x64xf32>
    %vc = tfm.kv_cache @"blk.0.value" : memref<16x64xf32>
    tfm.kv_store %k, %kc : tensor<1x64xf32>, memref<16x64xf32>
    tfm.kv_store %v, %vc : tensor<1x64xf32>, memref<16x64xf32>
    %a = tfm.attention %q, %kc, %vc {head_dim = 16 : i64, n_heads = 4 : i64, n_kv_heads = 4 : i64}
        : tensor<1x64xf32>, memref<16x64xf32>, memref<16x64xf32>
    return %a : tensor<1x64xf32>
  }
}

// -----

// GPT-2's FFN: GELU joins the biased up projection; the biased down
// projection gets its own region with the residual add.

// CHECK-LABEL: func.func @gelu_ffn
// CHECK-SAME:    (%[[X:.*]]: tensor<1x64xf32>, %[[H:.*]]: tensor<1x64xf32>)
// CHECK:         %[[UP:.*]] = tfm.fusion -> tensor<1x256xf32> {
// CHECK-NEXT:      %[[U:.*]] = tfm.linear %[[H]], %[[WU:.*]], %[[BU:.*]] :
// CHECK-NEXT:      %[[G:.*]] = tfm.gelu %[[U]] {approximate = true}
// CHECK-NEXT:      tfm.yield %[[G]] : tensor<1x256xf32>
// CHECK-NEXT:    }
// CHECK:         %[[DOWN:.*]] = tfm.fusion -> tensor<1x64xf32> {
// CHECK-NEXT:      %[[D:.*]] = tfm.linear %[[UP]]
// CHECK-NEXT:      %[[S:.*]] = tfm.add %[[X]], %[[D]]
// CHECK-NEXT:      tfm.yield %[[S]] : tensor<1x64xf32>
// CHECK-NEXT:    }
// CHECK-NEXT:    return %[[DOWN]]
module {
  tfm.weight_decl @"blk.0.ffn_up.weight" : tensor<256x64xf32>
  tfm.weight_decl @"blk.0.ffn_up.bias" : tensor<256xf32>
  tfm.weight_decl @"blk.0.ffn_down.weight" : tensor<64x256xf32>
  tfm.weight_decl @"blk.0.ffn_down.bias" : tensor<64xf32>
  func.func @gelu_ffn(%x: tensor<1x64xf32>, %h: tensor<1x64xf32>) -> tensor<1x64xf32> attributes {tfm.entry = "decode"} {
    %wu = tfm.weight @"blk.0.ffn_up.weight" : tensor<256x64xf32>
    %bu = tfm.weight @"blk.0.ffn_up.bias" : tensor<256xf32>
    %u = tfm.linear %h, %wu, %bu : tensor<1x64xf32>, tensor<256x64xf32>, tensor<256xf32>
    %g = tfm.gelu %u {approximate = true} : tensor<1x256xf32>
    %wd = tfm.weight @"blk.0.ffn_down.weight" : tensor<64x256xf32>
    %bd = tfm.weight @"blk.0.ffn_down.bias" : tensor<64xf32>
    %d = tfm.linear %g, %wd, %bd : tensor<1x256xf32>, tensor<64x256xf32>, tensor<64xf32>
    %s = tfm.add %x, %d : tensor<1x64xf32>
    return %s : tensor<1x64xf32>
  }
}

// -----

// The embedding is a region of its own, and learned positions join it.

// CHECK-LABEL: func.func @learned_positions
// CHECK-SAME:    (%[[TOKENS:.*]]: tensor<?xi32>)
// CHECK-NEXT:    %[[WTE:.*]] = tfm.weight @token_embd.weight
// CHECK-NEXT:    %[[WPE:.*]] = tfm.weight @position_embd.weight
// CHECK-NEXT:    %[[R:.*]] = tfm.fusion -> tensor<?x64xf32> {
// CHECK-NEXT:      %[[E:.*]] = tfm.embedding %[[WTE]], %[[TOKENS]]
// CHECK-NEXT:      %[[P:.*]] = tfm.add_positions %[[E]], %[[WPE]]
// CHECK-NEXT:      tfm.yield %[[P]] : tensor<?x64xf32>
// CHECK-NEXT:    }
// CHECK-NEXT:    return %[[R]]
module {
  tfm.weight_decl @"token_embd.weight" : tensor<100x64xf32>
  tfm.weight_decl @"position_embd.weight" : tensor<16x64xf32>
  func.func @learned_positions(%tokens: tensor<?xi32>) -> tensor<?x64xf32> attributes {tfm.entry = "prefill"} {
    %wte = tfm.weight @"token_embd.weight" : tensor<100x64xf32>
    %e = tfm.embedding %wte, %tokens : tensor<100x64xf32>, tensor<?xi32>
    %wpe = tfm.weight @"position_embd.weight" : tensor<16x64xf32>
    %p = tfm.add_positions %e, %wpe : tensor<?x64xf32>, tensor<16x64xf32>
    return %p : tensor<?x64xf32>
  }
}

// -----

// A region stops growing before its ops unfold to more than kMaxKernelTerms
// (256) terms: each add reads the one before twice, so the linear (3 terms)
// and six adds (255) join, and the seventh (511) and later stay outside.

// CHECK-LABEL: func.func @doubling
// CHECK:         %[[R:.*]] = tfm.fusion -> tensor<1x64xf32> {
// CHECK-NEXT:      tfm.linear
// CHECK-COUNT-6:   tfm.add
// CHECK-NEXT:      tfm.yield
// CHECK-NEXT:    }
// CHECK-NEXT:    %[[A7:.*]] = tfm.add %[[R]], %[[R]]
// CHECK-NEXT:    %[[A8:.*]] = tfm.add %[[A7]], %[[A7]]
// CHECK-NEXT:    return %[[A8]]
module {
  tfm.weight_decl @"blk.0.attn_output.weight" : tensor<64x64xf32>
  func.func @doubling(%a: tensor<1x64xf32>) -> tensor<1x64xf32> attributes {tfm.entry = "decode"} {
    %w = tfm.weight @"blk.0.attn_output.weight" : tensor<64x64xf32>
    %x0 = tfm.linear %a, %w : tensor<1x64xf32>, tensor<64x64xf32>
    %x1 = tfm.add %x0, %x0 : tensor<1x64xf32>
    %x2 = tfm.add %x1, %x1 : tensor<1x64xf32>
    %x3 = tfm.add %x2, %x2 : tensor<1x64xf32>
    %x4 = tfm.add %x3, %x3 : tensor<1x64xf32>
    %x5 = tfm.add %x4, %x4 : tensor<1x64xf32>
    %x6 = tfm.add %x5, %x5 : tensor<1x64xf32>
    %x7 = tfm.add %x6, %x6 : tensor<1x64xf32>
    %x8 = tfm.add %x7, %x7 : tensor<1x64xf32>
    return %x8 : tensor<1x64xf32>
  }
}

// -----

// A region holds at most kMaxKernelOps (64) ops: the linear and 63 of the
// 66 adds that each read the one before and the input join; the last three
// stay outside, each a kernel of its own.

// CHECK-LABEL: func.func @long_chain
// CHECK:         %[[R:.*]] = tfm.fusion -> tensor<1x64xf32> {
// CHECK-NEXT:      tfm.linear
// CHECK-COUNT-63:  tfm.add
// CHECK-NEXT:      tfm.yield
// CHECK-NEXT:    }
// CHECK-NEXT:    %[[A64:.*]] = tfm.add %[[R]], %{{.*}}
// CHECK-NEXT:    %[[A65:.*]] = tfm.add %[[A64]], %{{.*}}
// CHECK-NEXT:    %[[A66:.*]] = tfm.add %[[A65]], %{{.*}}
// CHECK-NEXT:    return %[[A66]]
module {
  tfm.weight_decl @"blk.0.attn_output.weight" : tensor<64x64xf32>
  func.func @long_chain(%a: tensor<1x64xf32>) -> tensor<1x64xf32> attributes {tfm.entry = "decode"} {
    %w = tfm.weight @"blk.0.attn_output.weight" : tensor<64x64xf32>
    %x0 = tfm.linear %a, %w : tensor<1x64xf32>, tensor<64x64xf32>
    %x1 = tfm.add %x0, %a : tensor<1x64xf32>
    %x2 = tfm.add %x1, %a : tensor<1x64xf32>
    %x3 = tfm.add %x2, %a : tensor<1x64xf32>
    %x4 = tfm.add %x3, %a : tensor<1x64xf32>
    %x5 = tfm.add %x4, %a : tensor<1x64xf32>
    %x6 = tfm.add %x5, %a : tensor<1x64xf32>
    %x7 = tfm.add %x6, %a : tensor<1x64xf32>
    %x8 = tfm.add %x7, %a : tensor<1x64xf32>
    %x9 = tfm.add %x8, %a : tensor<1x64xf32>
    %x10 = tfm.add %x9, %a : tensor<1x64xf32>
    %x11 = tfm.add %x10, %a : tensor<1x64xf32>
    %x12 = tfm.add %x11, %a : tensor<1x64xf32>
    %x13 = tfm.add %x12, %a : tensor<1x64xf32>
    %x14 = tfm.add %x13, %a : tensor<1x64xf32>
    %x15 = tfm.add %x14, %a : tensor<1x64xf32>
    %x16 = tfm.add %x15, %a : tensor<1x64xf32>
    %x17 = tfm.add %x16, %a : tensor<1x64xf32>
    %x18 = tfm.add %x17, %a : tensor<1x64xf32>
    %x19 = tfm.add %x18, %a : tensor<1x64xf32>
    %x20 = tfm.add %x19, %a : tensor<1x64xf32>
    %x21 = tfm.add %x20, %a : tensor<1x64xf32>
    %x22 = tfm.add %x21, %a : tensor<1x64xf32>
    %x23 = tfm.add %x22, %a : tensor<1x64xf32>
    %x24 = tfm.add %x23, %a : tensor<1x64xf32>
    %x25 = tfm.add %x24, %a : tensor<1x64xf32>
    %x26 = tfm.add %x25, %a : tensor<1x64xf32>
    %x27 = tfm.add %x26, %a : tensor<1x64xf32>
    %x28 = tfm.add %x27, %a : tensor<1x64xf32>
    %x29 = tfm.add %x28, %a : tensor<1x64xf32>
    %x30 = tfm.add %x29, %a : tensor<1x64xf32>
    %x31 = tfm.add %x30, %a : tensor<1x64xf32>
    %x32 = tfm.add %x31, %a : tensor<1x64xf32>
    %x33 = tfm.add %x32, %a : tensor<1x64xf32>
    %x34 = tfm.add %x33, %a : tensor<1x64xf32>
    %x35 = tfm.add %x34, %a : tensor<1x64xf32>
    %x36 = tfm.add %x35, %a : tensor<1x64xf32>
    %x37 = tfm.add %x36, %a : tensor<1x64xf32>
    %x38 = tfm.add %x37, %a : tensor<1x64xf32>
    %x39 = tfm.add %x38, %a : tensor<1x64xf32>
    %x40 = tfm.add %x39, %a : tensor<1x64xf32>
    %x41 = tfm.add %x40, %a : tensor<1x64xf32>
    %x42 = tfm.add %x41, %a : tensor<1x64xf32>
    %x43 = tfm.add %x42, %a : tensor<1x64xf32>
    %x44 = tfm.add %x43, %a : tensor<1x64xf32>
    %x45 = tfm.add %x44, %a : tensor<1x64xf32>
    %x46 = tfm.add %x45, %a : tensor<1x64xf32>
    %x47 = tfm.add %x46, %a : tensor<1x64xf32>
    %x48 = tfm.add %x47, %a : tensor<1x64xf32>
    %x49 = tfm.add %x48, %a : tensor<1x64xf32>
    %x50 = tfm.add %x49, %a : tensor<1x64xf32>
    %x51 = tfm.add %x50, %a : tensor<1x64xf32>
    %x52 = tfm.add %x51, %a : tensor<1x64xf32>
    %x53 = tfm.add %x52, %a : tensor<1x64xf32>
    %x54 = tfm.add %x53, %a : tensor<1x64xf32>
    %x55 = tfm.add %x54, %a : tensor<1x64xf32>
    %x56 = tfm.add %x55, %a : tensor<1x64xf32>
    %x57 = tfm.add %x56, %a : tensor<1x64xf32>
    %x58 = tfm.add %x57, %a : tensor<1x64xf32>
    %x59 = tfm.add %x58, %a : tensor<1x64xf32>
    %x60 = tfm.add %x59, %a : tensor<1x64xf32>
    %x61 = tfm.add %x60, %a : tensor<1x64xf32>
    %x62 = tfm.add %x61, %a : tensor<1x64xf32>
    %x63 = tfm.add %x62, %a : tensor<1x64xf32>
    %x64 = tfm.add %x63, %a : tensor<1x64xf32>
    %x65 = tfm.add %x64, %a : tensor<1x64xf32>
    %x66 = tfm.add %x65, %a : tensor<1x64xf32>
    return %x66 : tensor<1x64xf32>
  }
}
