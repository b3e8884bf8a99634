// RUN: tfm-opt %s --tfm-pipeline | FileCheck %s
// RUN: tfm-opt %s --tfm-pipeline=schedule=plain | FileCheck %s --check-prefix=PLAIN

// The whole pipeline on a 2-layer GQA decode function (4 query heads, 2 kv
// heads, tied embeddings): each layer is five launches of the same five
// kernels, and every value passed between launches has an arena offset.

// CHECK-LABEL: func.func @decode
// CHECK-SAME:    tfm.arena_bytes = 256
// CHECK:         %[[X0:.*]] = tfm.launch @decode_embedding(%[[EMB:.*]], %{{.*}}) {arena_offsets = array<i64: 0>}
// CHECK:         %[[KC0:.*]] = tfm.kv_cache key layer 0
// CHECK:         %[[VC0:.*]] = tfm.kv_cache value layer 0
// CHECK:         %[[Q0:.*]] = tfm.launch @decode_attn_in(%[[X0]], %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %[[KC0]], %[[VC0]]) {arena_offsets = array<i64: 64>}
// CHECK:         %[[A0:.*]] = tfm.launch @decode_attention(%[[Q0]], %[[KC0]], %[[VC0]]) {arena_offsets = array<i64: 128>}
// CHECK:         %[[R0:.*]] = tfm.launch @decode_attn_out(%[[A0]], %{{.*}}, %[[X0]]) {arena_offsets = array<i64: 64>}
// CHECK:         %[[M0:.*]] = tfm.launch @decode_ffn_in(%[[R0]], %{{.*}}, %{{.*}}, %{{.*}}) {arena_offsets = array<i64: 128>}
// CHECK:         %[[X1:.*]] = tfm.launch @decode_ffn_out(%[[M0]], %{{.*}}, %[[R0]]) {arena_offsets = array<i64: 0>}
// CHECK:         %[[KC1:.*]] = tfm.kv_cache key layer 1
// CHECK:         tfm.launch @decode_attn_in(%[[X1]], {{.*}}, %[[KC1]], %{{.*}})
// CHECK:         tfm.launch @decode_attention(
// CHECK:         tfm.launch @decode_attn_out(
// CHECK:         tfm.launch @decode_ffn_in(
// CHECK:         %[[X2:.*]] = tfm.launch @decode_ffn_out(
// CHECK:         %[[LOGITS:.*]] = tfm.launch @decode_logits(%[[X2]], %{{.*}}, %[[EMB]]) {arena_offsets = array<i64: -1>}
// CHECK:         return %[[LOGITS]]

// CHECK:       func.func private @decode_embedding
// CHECK-SAME:    tfm.kernel, tfm.schedule = "fast"
// CHECK:       func.func private @decode_attn_in(%[[X:.*]]: tensor<1x16xf32> {tfm.token_rows}, %[[WN:.*]]: tensor<16xf32>, %[[WQ:.*]]: tensor<16x16xf32>, %[[WK:.*]]: tensor<8x16xf32>, %[[WV:.*]]: tensor<8x16xf32>, %[[KC:.*]]: tensor<64x8xf32>, %[[VC:.*]]: tensor<64x8xf32>) -> (tensor<1x16xf32> {tfm.token_rows})
// CHECK-NEXT:    %[[H:.*]] = tfm.rms_norm %[[X]], %[[WN]]
// CHECK-NEXT:    %[[Q:.*]] = tfm.linear %[[H]], %[[WQ]]
// CHECK-NEXT:    %[[K:.*]] = tfm.linear %[[H]], %[[WK]]
// CHECK-NEXT:    %[[V:.*]] = tfm.linear %[[H]], %[[WV]]
// CHECK-NEXT:    %[[QR:.*]] = tfm.rope %[[Q]]
// CHECK-NEXT:    %[[KR:.*]] = tfm.rope %[[K]]
// CHECK-NEXT:    tfm.kv_store %[[KR]], %[[KC]]
// CHECK-NEXT:    tfm.kv_store %[[V]], %[[VC]]
// CHECK-NEXT:    return %[[QR]]
// CHECK:       func.func private @decode_attention
// CHECK-NEXT:    tfm.attention
// CHECK-NEXT:    return
// CHECK:       func.func private @decode_attn_out
// CHECK-NEXT:    tfm.linear
// CHECK-NEXT:    tfm.add
// CHECK-NEXT:    return
// CHECK:       func.func private @decode_ffn_in
// CHECK-NEXT:    tfm.rms_norm
// CHECK-NEXT:    tfm.linear
// CHECK-NEXT:    tfm.linear
// CHECK-NEXT:    tfm.silu
// CHECK-NEXT:    tfm.mul
// CHECK-NEXT:    return
// CHECK:       func.func private @decode_ffn_out
// CHECK:       func.func private @decode_logits
// CHECK-NEXT:    tfm.rms_norm
// CHECK-NEXT:    tfm.linear
// CHECK-NEXT:    return
// CHECK-NOT:   func.func

// PLAIN-COUNT-7: tfm.schedule = "plain"

module attributes {tfm.prefill_chunk = 8 : i64} {
  func.func @decode(%tokens: tensor<1xi32>) -> tensor<1x32xf32> attributes {tfm.entry = "decode"} {
    %emb = tfm.weight "token_embd.weight" : tensor<32x16xf32>
    %x0 = tfm.embedding %emb, %tokens : tensor<32x16xf32>, tensor<1xi32> -> tensor<1x16xf32>
    %wn0 = tfm.weight "blk.0.attn_norm.weight" : tensor<16xf32>
    %h0 = tfm.rms_norm %x0, %wn0 {eps = 1.0e-05 : f64} : tensor<1x16xf32>, tensor<16xf32> -> tensor<1x16xf32>
    %wq0 = tfm.weight "blk.0.attn_q.weight" : tensor<16x16xf32>
    %q00 = tfm.linear %h0, %wq0 : tensor<1x16xf32>, tensor<16x16xf32> -> tensor<1x16xf32>
    %q0 = tfm.rope %q00 {head_dim = 4 : i64, theta = 1.0e+04 : f64} : tensor<1x16xf32>
    %wk0 = tfm.weight "blk.0.attn_k.weight" : tensor<8x16xf32>
    %k00 = tfm.linear %h0, %wk0 : tensor<1x16xf32>, tensor<8x16xf32> -> tensor<1x8xf32>
    %k0 = tfm.rope %k00 {head_dim = 4 : i64, theta = 1.0e+04 : f64} : tensor<1x8xf32>
    %wv0 = tfm.weight "blk.0.attn_v.weight" : tensor<8x16xf32>
    %v0 = tfm.linear %h0, %wv0 : tensor<1x16xf32>, tensor<8x16xf32> -> tensor<1x8xf32>
    %kc0 = tfm.kv_cache key layer 0 : tensor<64x8xf32>
    %vc0 = tfm.kv_cache value layer 0 : tensor<64x8xf32>
    tfm.kv_store %k0, %kc0 : tensor<1x8xf32>, tensor<64x8xf32>
    tfm.kv_store %v0, %vc0 : tensor<1x8xf32>, tensor<64x8xf32>
    %a0 = tfm.attention %q0, %kc0, %vc0 {head_dim = 4 : i64, n_heads = 4 : i64, n_kv_heads = 2 : i64} : tensor<1x16xf32>, tensor<64x8xf32>, tensor<64x8xf32> -> tensor<1x16xf32>
    %wo0 = tfm.weight "blk.0.attn_output.weight" : tensor<16x16xf32>
    %o0 = tfm.linear %a0, %wo0 : tensor<1x16xf32>, tensor<16x16xf32> -> tensor<1x16xf32>
    %r0 = tfm.add %x0, %o0 : tensor<1x16xf32>
    %wf0 = tfm.weight "blk.0.ffn_norm.weight" : tensor<16xf32>
    %f0 = tfm.rms_norm %r0, %wf0 {eps = 1.0e-05 : f64} : tensor<1x16xf32>, tensor<16xf32> -> tensor<1x16xf32>
    %wg0 = tfm.weight "blk.0.ffn_gate.weight" : tensor<24x16xf32>
    %g00 = tfm.linear %f0, %wg0 : tensor<1x16xf32>, tensor<24x16xf32> -> tensor<1x24xf32>
    %g0 = tfm.silu %g00 : tensor<1x24xf32>
    %wu0 = tfm.weight "blk.0.ffn_up.weight" : tensor<24x16xf32>
    %u0 = tfm.linear %f0, %wu0 : tensor<1x16xf32>, tensor<24x16xf32> -> tensor<1x24xf32>
    %m0 = tfm.mul %g0, %u0 : tensor<1x24xf32>
    %wd0 = tfm.weight "blk.0.ffn_down.weight" : tensor<16x24xf32>
    %d0 = tfm.linear %m0, %wd0 : tensor<1x24xf32>, tensor<16x24xf32> -> tensor<1x16xf32>
    %x1 = tfm.add %r0, %d0 : tensor<1x16xf32>
    %wn1 = tfm.weight "blk.1.attn_norm.weight" : tensor<16xf32>
    %h1 = tfm.rms_norm %x1, %wn1 {eps = 1.0e-05 : f64} : tensor<1x16xf32>, tensor<16xf32> -> tensor<1x16xf32>
    %wq1 = tfm.weight "blk.1.attn_q.weight" : tensor<16x16xf32>
    %q01 = tfm.linear %h1, %wq1 : tensor<1x16xf32>, tensor<16x16xf32> -> tensor<1x16xf32>
    %q1 = tfm.rope %q01 {head_dim = 4 : i64, theta = 1.0e+04 : f64} : tensor<1x16xf32>
    %wk1 = tfm.weight "blk.1.attn_k.weight" : tensor<8x16xf32>
    %k01 = tfm.linear %h1, %wk1 : tensor<1x16xf32>, tensor<8x16xf32> -> tensor<1x8xf32>
    %k1 = tfm.rope %k01 {head_dim = 4 : i64, theta = 1.0e+04 : f64} : tensor<1x8xf32>
    %wv1 = tfm.weight "blk.1.attn_v.weight" : tensor<8x16xf32>
    %v1 = tfm.linear %h1, %wv1 : tensor<1x16xf32>, tensor<8x16xf32> -> tensor<1x8xf32>
    %kc1 = tfm.kv_cache key layer 1 : tensor<64x8xf32>
    %vc1 = tfm.kv_cache value layer 1 : tensor<64x8xf32>
    tfm.kv_store %k1, %kc1 : tensor<1x8xf32>, tensor<64x8xf32>
    tfm.kv_store %v1, %vc1 : tensor<1x8xf32>, tensor<64x8xf32>
    %a1 = tfm.attention %q1, %kc1, %vc1 {head_dim = 4 : i64, n_heads = 4 : i64, n_kv_heads = 2 : i64} : tensor<1x16xf32>, tensor<64x8xf32>, tensor<64x8xf32> -> tensor<1x16xf32>
    %wo1 = tfm.weight "blk.1.attn_output.weight" : tensor<16x16xf32>
    %o1 = tfm.linear %a1, %wo1 : tensor<1x16xf32>, tensor<16x16xf32> -> tensor<1x16xf32>
    %r1 = tfm.add %x1, %o1 : tensor<1x16xf32>
    %wf1 = tfm.weight "blk.1.ffn_norm.weight" : tensor<16xf32>
    %f1 = tfm.rms_norm %r1, %wf1 {eps = 1.0e-05 : f64} : tensor<1x16xf32>, tensor<16xf32> -> tensor<1x16xf32>
    %wg1 = tfm.weight "blk.1.ffn_gate.weight" : tensor<24x16xf32>
    %g01 = tfm.linear %f1, %wg1 : tensor<1x16xf32>, tensor<24x16xf32> -> tensor<1x24xf32>
    %g1 = tfm.silu %g01 : tensor<1x24xf32>
    %wu1 = tfm.weight "blk.1.ffn_up.weight" : tensor<24x16xf32>
    %u1 = tfm.linear %f1, %wu1 : tensor<1x16xf32>, tensor<24x16xf32> -> tensor<1x24xf32>
    %m1 = tfm.mul %g1, %u1 : tensor<1x24xf32>
    %wd1 = tfm.weight "blk.1.ffn_down.weight" : tensor<16x24xf32>
    %d1 = tfm.linear %m1, %wd1 : tensor<1x24xf32>, tensor<16x24xf32> -> tensor<1x16xf32>
    %x2 = tfm.add %r1, %d1 : tensor<1x16xf32>
    %wout = tfm.weight "output_norm.weight" : tensor<16xf32>
    %hout = tfm.rms_norm %x2, %wout {eps = 1.0e-05 : f64} : tensor<1x16xf32>, tensor<16xf32> -> tensor<1x16xf32>
    %logits = tfm.linear %hout, %emb : tensor<1x16xf32>, tensor<32x16xf32> -> tensor<1x32xf32>
    return %logits : tensor<1x32xf32>
  }
}
