// RUN: tfm-opt %s --split-input-file --tfm-outline-kernels | FileCheck %s
// On outlined IR the pass changes nothing: running it twice gives the same.
// RUN: tfm-opt %s --split-input-file --tfm-outline-kernels --tfm-outline-kernels | FileCheck %s

// Two fused layers of the same structure. Every region and every kernel op
// outside one becomes a private kernel and a launch, named <entry>_<role>
// with the role from the weights the kernel reads (attn_in, attn_out) or else
// from its op (embedding, attention). Repeats get _N: this pass does not
// deduplicate (--tfm-deduplicate-kernels does), so the second layer has
// kernels of its own. Values from above become arguments in order of first
// use, caches included (with their layouts); rows of token positions carry
// tfm.token_rows, weights and caches do not.

// CHECK-LABEL: func.func @prefill
// CHECK-SAME:    (%[[TOKENS:.*]]: tensor<?xi32>) -> tensor<?x64xf32> attributes {tfm.entry = "prefill"} {
// CHECK-NEXT:    %[[TABLE:.*]] = tfm.weight @token_embd.weight
// CHECK-NEXT:    %[[X0:.*]] = tfm.launch @prefill_embedding(%[[TABLE]], %[[TOKENS]]) : (tensor<100x64xf32>, tensor<?xi32>) -> tensor<?x64xf32>
// CHECK-NEXT:    %[[WN0:.*]] = tfm.weight @blk.0.attn_norm.weight
// CHECK-NEXT:    %[[WQ0:.*]] = tfm.weight @blk.0.attn_q.weight
// CHECK-NEXT:    %[[WK0:.*]] = tfm.weight @blk.0.attn_k.weight
// CHECK-NEXT:    %[[WV0:.*]] = tfm.weight @blk.0.attn_v.weight
// CHECK-NEXT:    %[[KC0:.*]] = tfm.kv_cache @blk.0.key
// CHECK-NEXT:    %[[VC0:.*]] = tfm.kv_cache @blk.0.value
// CHECK-NEXT:    %[[Q0:.*]] = tfm.launch @prefill_attn_in(%[[X0]], %[[WN0]], %[[WQ0]], %[[WK0]], %[[WV0]], %[[KC0]], %[[VC0]])
// CHECK-SAME:      : (tensor<?x64xf32>, tensor<64xf32>, tensor<64x64xf32>, tensor<32x64xf32>, tensor<32x64xf32>, memref<16x32xf32, strided<[1, 16]>>, memref<16x32xf32>) -> tensor<?x64xf32>
// CHECK-NEXT:    %[[A0:.*]] = tfm.launch @prefill_attention(%[[Q0]], %[[KC0]], %[[VC0]])
// CHECK-NEXT:    %[[WO0:.*]] = tfm.weight @blk.0.attn_output.weight
// CHECK-NEXT:    %[[X1:.*]] = tfm.launch @prefill_attn_out(%[[A0]], %[[WO0]], %[[X0]])
// CHECK:         %[[KC1:.*]] = tfm.kv_cache @blk.1.key
// CHECK-NEXT:    %[[VC1:.*]] = tfm.kv_cache @blk.1.value
// CHECK-NEXT:    %[[Q1:.*]] = tfm.launch @prefill_attn_in_1(%[[X1]], %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %[[KC1]], %[[VC1]])
// CHECK-NEXT:    %[[A1:.*]] = tfm.launch @prefill_attention_1(%[[Q1]], %[[KC1]], %[[VC1]])
// CHECK-NEXT:    %[[WO1:.*]] = tfm.weight @blk.1.attn_output.weight
// CHECK-NEXT:    %[[X2:.*]] = tfm.launch @prefill_attn_out_1(%[[A1]], %[[WO1]], %[[X1]])
// CHECK-NEXT:    return %[[X2]]
// CHECK-NEXT:  }
// CHECK-NEXT:  func.func private @prefill_embedding(%{{.*}}: tensor<100x64xf32>, %{{.*}}: tensor<?xi32> {tfm.token_rows}) -> (tensor<?x64xf32> {tfm.token_rows})
// CHECK-SAME:    attributes {tfm.kernel} {
// CHECK-NEXT:    tfm.embedding
// CHECK-NEXT:    return
// CHECK-NEXT:  }
// CHECK-NEXT:  func.func private @prefill_attn_in(%[[X:.*]]: tensor<?x64xf32> {tfm.token_rows}, %[[WN:.*]]: tensor<64xf32>, %[[WQ:.*]]: tensor<64x64xf32>, %[[WK:.*]]: tensor<32x64xf32>, %[[WV:.*]]: tensor<32x64xf32>, %[[KC:.*]]: memref<16x32xf32, strided<[1, 16]>>, %[[VC:.*]]: memref<16x32xf32>) -> (tensor<?x64xf32> {tfm.token_rows})
// CHECK-SAME:    attributes {tfm.kernel} {
// CHECK-NEXT:    %[[H:.*]] = tfm.rms_norm %[[X]], %[[WN]]
// CHECK-NEXT:    %[[Q:.*]] = tfm.linear %[[H]], %[[WQ]]
// CHECK-NEXT:    %[[K:.*]] = tfm.linear %[[H]], %[[WK]]
// CHECK-NEXT:    %[[V:.*]] = tfm.linear %[[H]], %[[WV]]
// CHECK-NEXT:    %[[KR:.*]] = tfm.rope %[[K]]
// CHECK-NEXT:    tfm.kv_store %[[KR]], %[[KC]]
// CHECK-NEXT:    tfm.kv_store %[[V]], %[[VC]]
// CHECK-NEXT:    %[[QR:.*]] = tfm.rope %[[Q]]
// CHECK-NEXT:    return %[[QR]] : tensor<?x64xf32>
// CHECK-NEXT:  }
// CHECK-NEXT:  func.func private @prefill_attention(%[[Q:.*]]: tensor<?x64xf32> {tfm.token_rows}, %[[KC:.*]]: memref<16x32xf32, strided<[1, 16]>>, %[[VC:.*]]: memref<16x32xf32>) -> (tensor<?x64xf32> {tfm.token_rows})
// CHECK-SAME:    attributes {tfm.kernel} {
// CHECK-NEXT:    %[[A:.*]] = tfm.attention %[[Q]], %[[KC]], %[[VC]]
// CHECK-NEXT:    return %[[A]]
// CHECK-NEXT:  }
// CHECK-NEXT:  func.func private @prefill_attn_out(%[[A:.*]]: tensor<?x64xf32> {tfm.token_rows}, %[[WO:.*]]: tensor<64x64xf32>, %[[X:.*]]: tensor<?x64xf32> {tfm.token_rows}) -> (tensor<?x64xf32> {tfm.token_rows})
// CHECK-SAME:    attributes {tfm.kernel} {
// CHECK-NEXT:    %[[O:.*]] = tfm.linear %[[A]], %[[WO]]
// CHECK-NEXT:    %[[R:.*]] = tfm.add %[[X]], %[[O]]
// CHECK-NEXT:    return %[[R]]
// CHECK-NEXT:  }
// CHECK-NEXT:  func.func private @prefill_attn_in_1(%{{.*}}: tensor<?x64xf32> {tfm.token_rows}, %{{.*}}: tensor<64xf32>, %{{.*}}: tensor<64x64xf32>, %{{.*}}: tensor<32x64xf32>, %{{.*}}: tensor<32x64xf32>, %{{.*}}: memref<16x32xf32, strided<[1, 16]>>, %{{.*}}: memref<16x32xf32>) -> (tensor<?x64xf32> {tfm.token_rows})
// CHECK:       func.func private @prefill_attention_1(
// CHECK:       func.func private @prefill_attn_out_1(
// CHECK-NOT:   func.func
module attributes {tfm.prefill_chunk = 8 : i64} {
  tfm.weight_decl @"token_embd.weight" : tensor<100x64xf32>
  tfm.weight_decl @"blk.0.attn_norm.weight" : tensor<64xf32>
  tfm.weight_decl @"blk.0.attn_q.weight" : tensor<64x64xf32>
  tfm.weight_decl @"blk.0.attn_k.weight" : tensor<32x64xf32>
  tfm.weight_decl @"blk.0.attn_v.weight" : tensor<32x64xf32>
  tfm.weight_decl @"blk.0.attn_output.weight" : tensor<64x64xf32>
  tfm.weight_decl @"blk.1.attn_norm.weight" : tensor<64xf32>
  tfm.weight_decl @"blk.1.attn_q.weight" : tensor<64x64xf32>
  tfm.weight_decl @"blk.1.attn_k.weight" : tensor<32x64xf32>
  tfm.weight_decl @"blk.1.attn_v.weight" : tensor<32x64xf32>
  tfm.weight_decl @"blk.1.attn_output.weight" : tensor<64x64xf32>
  tfm.cache_decl @"blk.0.key" : memref<16x32xf32, strided<[1, 16]>>
  tfm.cache_decl @"blk.0.value" : memref<16x32xf32>
  tfm.cache_decl @"blk.1.key" : memref<16x32xf32, strided<[1, 16]>>
  tfm.cache_decl @"blk.1.value" : memref<16x32xf32>
  func.func @prefill(%tokens: tensor<?xi32>) -> tensor<?x64xf32> attributes {tfm.entry = "prefill"} {
    %table = tfm.weight @"token_embd.weight" : tensor<100x64xf32>
    %x0 = tfm.embedding %table, %tokens : tensor<100x64xf32>, tensor<?xi32>
    %wn0 = tfm.weight @"blk.0.attn_norm.weight" : tensor<64xf32>
    %wq0 = tfm.weight @"blk.0.attn_q.weight" : tensor<64x64xf32>
    %wk0 = tfm.weight @"blk.0.attn_k.weight" : tensor<32x64xf32>
    %wv0 = tfm.weight @"blk.0.attn_v.weight" : tensor<32x64xf32>
    %kc0 = tfm.kv_cache @"blk.0.key" : memref<16x32xf32, strided<[1, 16]>>
    %vc0 = tfm.kv_cache @"blk.0.value" : memref<16x32xf32>
    %q0 = tfm.fusion -> tensor<?x64xf32> {
      %h = tfm.rms_norm %x0, %wn0 {eps = 1.0e-05 : f64} : tensor<?x64xf32>, tensor<64xf32>
      %q = tfm.linear %h, %wq0 : tensor<?x64xf32>, tensor<64x64xf32>
      %k = tfm.linear %h, %wk0 : tensor<?x64xf32>, tensor<32x64xf32>
      %v = tfm.linear %h, %wv0 : tensor<?x64xf32>, tensor<32x64xf32>
      %kr = tfm.rope %k {head_dim = 16 : i64, interleaved = true, position_scale = 1.0 : f64, rotary_dim = 16 : i64, theta = 1.0e+04 : f64} : tensor<?x32xf32>
      tfm.kv_store %kr, %kc0 : tensor<?x32xf32>, memref<16x32xf32, strided<[1, 16]>>
      tfm.kv_store %v, %vc0 : tensor<?x32xf32>, memref<16x32xf32>
      %qr = tfm.rope %q {head_dim = 16 : i64, interleaved = true, position_scale = 1.0 : f64, rotary_dim = 16 : i64, theta = 1.0e+04 : f64} : tensor<?x64xf32>
      tfm.yield %qr : tensor<?x64xf32>
    }
    %a0 = tfm.attention %q0, %kc0, %vc0 {head_dim = 16 : i64, n_heads = 4 : i64, n_kv_heads = 2 : i64}
        : tensor<?x64xf32>, memref<16x32xf32, strided<[1, 16]>>, memref<16x32xf32>
    %wo0 = tfm.weight @"blk.0.attn_output.weight" : tensor<64x64xf32>
    %x1 = tfm.fusion -> tensor<?x64xf32> {
      %o = tfm.linear %a0, %wo0 : tensor<?x64xf32>, tensor<64x64xf32>
      %r = tfm.add %x0, %o : tensor<?x64xf32>
      tfm.yield %r : tensor<?x64xf32>
    }
    %wn1 = tfm.weight @"blk.1.attn_norm.weight" : tensor<64xf32>
    %wq1 = tfm.weight @"blk.1.attn_q.weight" : tensor<64x64xf32>
    %wk1 = tfm.weight @"blk.1.attn_k.weight" : tensor<32x64xf32>
    %wv1 = tfm.weight @"blk.1.attn_v.weight" : tensor<32x64xf32>
    %kc1 = tfm.kv_cache @"blk.1.key" : memref<16x32xf32, strided<[1, 16]>>
    %vc1 = tfm.kv_cache @"blk.1.value" : memref<16x32xf32>
    %q1 = tfm.fusion -> tensor<?x64xf32> {
      %h = tfm.rms_norm %x1, %wn1 {eps = 1.0e-05 : f64} : tensor<?x64xf32>, tensor<64xf32>
      %q = tfm.linear %h, %wq1 : tensor<?x64xf32>, tensor<64x64xf32>
      %k = tfm.linear %h, %wk1 : tensor<?x64xf32>, tensor<32x64xf32>
      %v = tfm.linear %h, %wv1 : tensor<?x64xf32>, tensor<32x64xf32>
      %kr = tfm.rope %k {head_dim = 16 : i64, interleaved = true, position_scale = 1.0 : f64, rotary_dim = 16 : i64, theta = 1.0e+04 : f64} : tensor<?x32xf32>
      tfm.kv_store %kr, %kc1 : tensor<?x32xf32>, memref<16x32xf32, strided<[1, 16]>>
      tfm.kv_store %v, %vc1 : tensor<?x32xf32>, memref<16x32xf32>
      %qr = tfm.rope %q {head_dim = 16 : i64, interleaved = true, position_scale = 1.0 : f64, rotary_dim = 16 : i64, theta = 1.0e+04 : f64} : tensor<?x64xf32>
      tfm.yield %qr : tensor<?x64xf32>
    }
    %a1 = tfm.attention %q1, %kc1, %vc1 {head_dim = 16 : i64, n_heads = 4 : i64, n_kv_heads = 2 : i64}
        : tensor<?x64xf32>, memref<16x32xf32, strided<[1, 16]>>, memref<16x32xf32>
    %wo1 = tfm.weight @"blk.1.attn_output.weight" : tensor<64x64xf32>
    %x2 = tfm.fusion -> tensor<?x64xf32> {
      %o = tfm.linear %a1, %wo1 : tensor<?x64xf32>, tensor<64x64xf32>
      %r = tfm.add %x1, %o : tensor<?x64xf32>
      tfm.yield %r : tensor<?x64xf32>
    }
    return %x2 : tensor<?x64xf32>
  }
}

// -----

// Nothing fused (the optional fusion passes left out): each kernel op is a
// kernel of its own. A lone projection is still named from its weight, with
// _N for the second one of a role; a lone cache store is key_store or
// value_store after the cache it writes, with the cache an argument and no
// results; an op with neither (a norm, an elementwise op, a projection whose
// weight has no role) is named after the op.

// CHECK-LABEL: func.func @decode
// CHECK-SAME:    (%[[TOKENS:.*]]: tensor<1xi32>)
// CHECK-NEXT:    %[[TABLE:.*]] = tfm.weight @token_embd.weight
// CHECK-NEXT:    %[[X:.*]] = tfm.launch @decode_embedding(%[[TABLE]], %[[TOKENS]])
// CHECK-NEXT:    %[[WK:.*]] = tfm.weight @blk.0.attn_k.weight
// CHECK-NEXT:    %[[K:.*]] = tfm.launch @decode_attn_in(%[[X]], %[[WK]])
// CHECK-NEXT:    %[[KC:.*]] = tfm.kv_cache @blk.0.key
// CHECK-NEXT:    %[[VC:.*]] = tfm.kv_cache @blk.0.value
// CHECK-NEXT:    tfm.launch @decode_key_store(%[[K]], %[[KC]]) : (tensor<1x32xf32>, memref<16x32xf32, strided<[1, 16]>>) -> (){{$}}
// CHECK-NEXT:    tfm.launch @decode_value_store(%[[K]], %[[VC]]) : (tensor<1x32xf32>, memref<16x32xf32>) -> (){{$}}
// CHECK-NEXT:    %[[WN:.*]] = tfm.weight @blk.0.ffn_norm.weight
// CHECK-NEXT:    %[[H:.*]] = tfm.launch @decode_rms_norm(%[[X]], %[[WN]])
// CHECK-NEXT:    %[[WG:.*]] = tfm.weight @blk.0.ffn_gate.weight
// CHECK-NEXT:    %[[WU:.*]] = tfm.weight @blk.0.ffn_up.weight
// CHECK-NEXT:    %[[G:.*]] = tfm.launch @decode_ffn_in(%[[H]], %[[WG]])
// CHECK-NEXT:    %[[U:.*]] = tfm.launch @decode_ffn_in_1(%[[H]], %[[WU]])
// CHECK-NEXT:    %[[S:.*]] = tfm.launch @decode_silu(%[[G]])
// CHECK-NEXT:    %[[M:.*]] = tfm.launch @decode_mul(%[[S]], %[[U]])
// CHECK-NEXT:    %[[WD:.*]] = tfm.weight @blk.0.ffn_down.weight
// CHECK-NEXT:    %[[D:.*]] = tfm.launch @decode_ffn_out(%[[M]], %[[WD]])
// CHECK-NEXT:    %[[R:.*]] = tfm.launch @decode_add(%[[X]], %[[D]])
// CHECK-NEXT:    %[[WS:.*]] = tfm.weight @scratch
// CHECK-NEXT:    %[[Y:.*]] = tfm.launch @decode_linear(%[[R]], %[[WS]])
// CHECK-NEXT:    %[[O:.*]] = tfm.launch @decode_logits(%[[Y]], %[[TABLE]])
// CHECK-NEXT:    return %[[O]]
// CHECK-NEXT:  }
// CHECK-NEXT:  func.func private @decode_embedding(%{{.*}}: tensor<100x64xf32>, %{{.*}}: tensor<1xi32> {tfm.token_rows}) -> (tensor<1x64xf32> {tfm.token_rows})
// CHECK:       func.func private @decode_attn_in(%{{.*}}: tensor<1x64xf32> {tfm.token_rows}, %{{.*}}: tensor<32x64xf32>) -> (tensor<1x32xf32> {tfm.token_rows})
// CHECK-NEXT:    tfm.linear
// CHECK-NEXT:    return
// CHECK-NEXT:  }
// CHECK-NEXT:  func.func private @decode_key_store(%[[K:.*]]: tensor<1x32xf32> {tfm.token_rows}, %[[C:.*]]: memref<16x32xf32, strided<[1, 16]>>) attributes {tfm.kernel} {
// CHECK-NEXT:    tfm.kv_store %[[K]], %[[C]]
// CHECK-NEXT:    return{{$}}
// CHECK-NEXT:  }
// CHECK-NEXT:  func.func private @decode_value_store(%[[V:.*]]: tensor<1x32xf32> {tfm.token_rows}, %[[C:.*]]: memref<16x32xf32>) attributes {tfm.kernel} {
// CHECK-NEXT:    tfm.kv_store %[[V]], %[[C]]
// CHECK-NEXT:    return{{$}}
// CHECK-NEXT:  }
// CHECK-NEXT:  func.func private @decode_rms_norm(
// CHECK:       func.func private @decode_ffn_in(
// CHECK:       func.func private @decode_ffn_in_1(
// CHECK:       func.func private @decode_silu(%{{.*}}: tensor<1x96xf32> {tfm.token_rows}) -> (tensor<1x96xf32> {tfm.token_rows})
// CHECK:       func.func private @decode_mul(%{{.*}}: tensor<1x96xf32> {tfm.token_rows}, %{{.*}}: tensor<1x96xf32> {tfm.token_rows}) -> (tensor<1x96xf32> {tfm.token_rows})
// CHECK:       func.func private @decode_ffn_out(
// CHECK:       func.func private @decode_add(
// CHECK:       func.func private @decode_linear(
// CHECK:       func.func private @decode_logits(%{{.*}}: tensor<1x64xf32> {tfm.token_rows}, %{{.*}}: tensor<100x64xf32>) -> (tensor<1x100xf32> {tfm.token_rows})
// CHECK-NOT:   func.func
module {
  tfm.weight_decl @"token_embd.weight" : tensor<100x64xf32>
  tfm.weight_decl @"blk.0.attn_k.weight" : tensor<32x64xf32>
  tfm.weight_decl @"blk.0.ffn_norm.weight" : tensor<64xf32>
  tfm.weight_decl @"blk.0.ffn_gate.weight" : tensor<96x64xf32>
  tfm.weight_decl @"blk.0.ffn_up.weight" : tensor<96x64xf32>
  tfm.weight_decl @"blk.0.ffn_down.weight" : tensor<64x96xf32>
  tfm.weight_decl @"scratch" : tensor<64x64xf32>
  tfm.cache_decl @"blk.0.key" : memref<16x32xf32, strided<[1, 16]>>
  tfm.cache_decl @"blk.0.value" : memref<16x32xf32>
  func.func @decode(%tokens: tensor<1xi32>) -> tensor<1x100xf32> attributes {tfm.entry = "decode"} {
    %table = tfm.weight @"token_embd.weight" : tensor<100x64xf32>
    %x = tfm.embedding %table, %tokens : tensor<100x64xf32>, tensor<1xi32>
    %wk = tfm.weight @"blk.0.attn_k.weight" : tensor<32x64xf32>
    %k = tfm.linear %x, %wk : tensor<1x64xf32>, tensor<32x64xf32>
    %kc = tfm.kv_cache @"blk.0.key" : memref<16x32xf32, strided<[1, 16]>>
    %vc = tfm.kv_cache @"blk.0.value" : memref<16x32xf32>
    tfm.kv_store %k, %kc : tensor<1x32xf32>, memref<16x32xf32, strided<[1, 16]>>
    tfm.kv_store %k, %vc : tensor<1x32xf32>, memref<16x32xf32>
    %wn = tfm.weight @"blk.0.ffn_norm.weight" : tensor<64xf32>
    %h = tfm.rms_norm %x, %wn {eps = 1.0e-05 : f64} : tensor<1x64xf32>, tensor<64xf32>
    %wg = tfm.weight @"blk.0.ffn_gate.weight" : tensor<96x64xf32>
    %wu = tfm.weight @"blk.0.ffn_up.weight" : tensor<96x64xf32>
    %g = tfm.linear %h, %wg : tensor<1x64xf32>, tensor<96x64xf32>
    %u = tfm.linear %h, %wu : tensor<1x64xf32>, tensor<96x64xf32>
    %s = tfm.silu %g : tensor<1x96xf32>
    %m = tfm.mul %s, %u : tensor<1x96xf32>
    %wd = tfm.weight @"blk.0.ffn_down.weight" : tensor<64x96xf32>
    %d = tfm.linear %m, %wd : tensor<1x96xf32>, tensor<64x96xf32>
    %r = tfm.add %x, %d : tensor<1x64xf32>
    %ws = tfm.weight @"scratch" : tensor<64x64xf32>
    %y = tfm.linear %r, %ws : tensor<1x64xf32>, tensor<64x64xf32>
    %o = tfm.linear %y, %table : tensor<1x64xf32>, tensor<100x64xf32>
    return %o : tensor<1x100xf32>
  }
}

// -----

// The logits: prefill's region picks the last row, so its result is one row
// that is no token position (no tfm.token_rows); score's logits cover every
// row. Each entry names its own kernels. A function that is not an entry is
// left alone.

// CHECK-LABEL: func.func @prefill
// CHECK:         %[[L:.*]] = tfm.launch @prefill_logits(%{{.*}}, %{{.*}}, %{{.*}}) : (tensor<?x64xf32>, tensor<64xf32>, tensor<100x64xf32>) -> tensor<1x100xf32>
// CHECK-NEXT:    return %[[L]]
// CHECK-LABEL: func.func @score
// CHECK:         %[[L:.*]] = tfm.launch @score_logits(%{{.*}}, %{{.*}}, %{{.*}}) : (tensor<?x64xf32>, tensor<64xf32>, tensor<100x64xf32>) -> tensor<?x100xf32>
// CHECK-NEXT:    return %[[L]]
// CHECK-LABEL: func.func @helper
// CHECK-NEXT:    tfm.silu
// CHECK-NEXT:    return
// CHECK-NEXT:  }
// CHECK-NEXT:  func.func private @prefill_logits(%{{.*}}: tensor<?x64xf32> {tfm.token_rows}, %{{.*}}: tensor<64xf32>, %{{.*}}: tensor<100x64xf32>) -> tensor<1x100xf32> attributes {tfm.kernel} {
// CHECK-NEXT:    tfm.last_row
// CHECK-NEXT:    tfm.rms_norm
// CHECK-NEXT:    tfm.linear
// CHECK-NEXT:    return
// CHECK-NEXT:  }
// CHECK-NEXT:  func.func private @score_logits(%{{.*}}: tensor<?x64xf32> {tfm.token_rows}, %{{.*}}: tensor<64xf32>, %{{.*}}: tensor<100x64xf32>) -> (tensor<?x100xf32> {tfm.token_rows}) attributes {tfm.kernel} {
// CHECK-NEXT:    tfm.rms_norm
// CHECK-NEXT:    tfm.linear
// CHECK-NEXT:    return
// CHECK-NEXT:  }
// CHECK-NOT:   func.func
module {
  tfm.weight_decl @"token_embd.weight" : tensor<100x64xf32>
  tfm.weight_decl @"output_norm.weight" : tensor<64xf32>
  func.func @prefill(%x: tensor<?x64xf32>) -> tensor<1x100xf32> attributes {tfm.entry = "prefill"} {
    %wn = tfm.weight @"output_norm.weight" : tensor<64xf32>
    %table = tfm.weight @"token_embd.weight" : tensor<100x64xf32>
    %o = tfm.fusion -> tensor<1x100xf32> {
      %l = tfm.last_row %x : tensor<?x64xf32>
      %h = tfm.rms_norm %l, %wn {eps = 1.0e-05 : f64} : tensor<1x64xf32>, tensor<64xf32>
      %y = tfm.linear %h, %table : tensor<1x64xf32>, tensor<100x64xf32>
      tfm.yield %y : tensor<1x100xf32>
    }
    return %o : tensor<1x100xf32>
  }
  func.func @score(%x: tensor<?x64xf32>) -> tensor<?x100xf32> attributes {tfm.entry = "score"} {
    %wn = tfm.weight @"output_norm.weight" : tensor<64xf32>
    %table = tfm.weight @"token_embd.weight" : tensor<100x64xf32>
    %o = tfm.fusion -> tensor<?x100xf32> {
      %h = tfm.rms_norm %x, %wn {eps = 1.0e-05 : f64} : tensor<?x64xf32>, tensor<64xf32>
      %y = tfm.linear %h, %table : tensor<?x64xf32>, tensor<100x64xf32>
      tfm.yield %y : tensor<?x100xf32>
    }
    return %o : tensor<?x100xf32>
  }
  func.func @helper(%x: tensor<1x64xf32>) -> tensor<1x64xf32> {
    %s = tfm.silu %x : tensor<1x64xf32>
    return %s : tensor<1x64xf32>
  }
}

// -----

// Unfused, the last row is a kernel of its own and everything after it has
// no token rows.

// CHECK-LABEL: func.func @prefill
// CHECK-NEXT:    %[[WN:.*]] = tfm.weight @output_norm.weight
// CHECK-NEXT:    %[[TABLE:.*]] = tfm.weight @token_embd.weight
// CHECK-NEXT:    %[[L:.*]] = tfm.launch @prefill_last_row(%{{.*}}) : (tensor<?x64xf32>) -> tensor<1x64xf32>
// CHECK-NEXT:    %[[H:.*]] = tfm.launch @prefill_rms_norm(%[[L]], %[[WN]])
// CHECK-NEXT:    %[[O:.*]] = tfm.launch @prefill_logits(%[[H]], %[[TABLE]])
// CHECK-NEXT:    return %[[O]]
// CHECK-NEXT:  }
// CHECK-NEXT:  func.func private @prefill_last_row(%{{.*}}: tensor<?x64xf32> {tfm.token_rows}) -> tensor<1x64xf32> attributes {tfm.kernel} {
// CHECK:       func.func private @prefill_rms_norm(%{{.*}}: tensor<1x64xf32>, %{{.*}}: tensor<64xf32>) -> tensor<1x64xf32> attributes {tfm.kernel} {
// CHECK:       func.func private @prefill_logits(%{{.*}}: tensor<1x64xf32>, %{{.*}}: tensor<100x64xf32>) -> tensor<1x100xf32> attributes {tfm.kernel} {
// CHECK-NOT:   func.func
module {
  tfm.weight_decl @"token_embd.weight" : tensor<100x64xf32>
  tfm.weight_decl @"output_norm.weight" : tensor<64xf32>
  func.func @prefill(%x: tensor<?x64xf32>) -> tensor<1x100xf32> attributes {tfm.entry = "prefill"} {
    %wn = tfm.weight @"output_norm.weight" : tensor<64xf32>
    %table = tfm.weight @"token_embd.weight" : tensor<100x64xf32>
    %l = tfm.last_row %x : tensor<?x64xf32>
    %h = tfm.rms_norm %l, %wn {eps = 1.0e-05 : f64} : tensor<1x64xf32>, tensor<64xf32>
    %y = tfm.linear %h, %table : tensor<1x64xf32>, tensor<100x64xf32>
    return %y : tensor<1x100xf32>
  }
}
