// RUN: tfm-opt %s --split-input-file --tfm-outline-kernels | FileCheck %s

// Two layers with the same structure share one kernel; what the region read
// from above becomes arguments (weights, caches), its results the kernel's.

// CHECK-LABEL: func.func @decode
// CHECK-SAME:    (%[[TOKENS:.*]]: tensor<1xi32>)
// CHECK:         %[[X:.*]] = tfm.launch @decode_embedding(%{{.*}}, %[[TOKENS]]) : (tensor<100x64xf32>, tensor<1xi32>) -> tensor<1x64xf32>
// CHECK:         %[[KC0:.*]] = tfm.kv_cache key layer 0
// CHECK:         %[[X1:.*]] = tfm.launch @decode_attn_out(%[[X]], %{{.*}}, %[[KC0]])
// CHECK:         %[[KC1:.*]] = tfm.kv_cache key layer 1
// CHECK:         %[[X2:.*]] = tfm.launch @decode_attn_out(%[[X1]], %{{.*}}, %[[KC1]])
// CHECK:         return %[[X2]]
// CHECK:       func.func private @decode_embedding(%{{.*}}: tensor<100x64xf32>, %{{.*}}: tensor<1xi32> {tfm.token_rows}) -> (tensor<1x64xf32> {tfm.token_rows})
// CHECK-SAME:    attributes {tfm.kernel}
// CHECK:       func.func private @decode_attn_out(%[[A:.*]]: tensor<1x64xf32> {tfm.token_rows}, %[[W:.*]]: tensor<32x64xf32>, %[[C:.*]]: tensor<48x32xf32>) -> (tensor<1x64xf32> {tfm.token_rows})
// CHECK-NEXT:    %[[K:.*]] = tfm.linear %[[A]], %[[W]]
// CHECK-NEXT:    tfm.kv_store %[[K]], %[[C]]
// CHECK-NEXT:    %[[S:.*]] = tfm.silu %[[A]]
// CHECK-NEXT:    return %[[S]]
// CHECK-NOT:   func.func
module {
  func.func @decode(%tokens: tensor<1xi32>) -> tensor<1x64xf32> attributes {tfm.entry = "decode"} {
    %table = tfm.weight "token_embd.weight" : tensor<100x64xf32>
    %x = tfm.embedding %table, %tokens : tensor<100x64xf32>, tensor<1xi32> -> tensor<1x64xf32>
    %w0 = tfm.weight "blk.0.attn_output.weight" : tensor<32x64xf32>
    %kc0 = tfm.kv_cache key layer 0 : tensor<48x32xf32>
    %x1 = tfm.fusion -> tensor<1x64xf32> {
      %k = tfm.linear %x, %w0 : tensor<1x64xf32>, tensor<32x64xf32> -> tensor<1x32xf32>
      tfm.kv_store %k, %kc0 : tensor<1x32xf32>, tensor<48x32xf32>
      %s = tfm.silu %x : tensor<1x64xf32>
      tfm.yield %s : tensor<1x64xf32>
    }
    %w1 = tfm.weight "blk.1.attn_output.weight" : tensor<32x64xf32>
    %kc1 = tfm.kv_cache key layer 1 : tensor<48x32xf32>
    %x2 = tfm.fusion -> tensor<1x64xf32> {
      %k = tfm.linear %x1, %w1 : tensor<1x64xf32>, tensor<32x64xf32> -> tensor<1x32xf32>
      tfm.kv_store %k, %kc1 : tensor<1x32xf32>, tensor<48x32xf32>
      %s = tfm.silu %x1 : tensor<1x64xf32>
      tfm.yield %s : tensor<1x64xf32>
    }
    return %x2 : tensor<1x64xf32>
  }
}

// -----

// Different attributes mean different kernels, even with equal shapes; a
// lone compute op becomes a kernel of its own. After last_row the rows are
// no longer token positions.

// CHECK-LABEL: func.func @prefill
// CHECK:         %[[A:.*]] = tfm.launch @prefill_rope(%{{.*}}) : (tensor<?x64xf32>) -> tensor<?x64xf32>
// CHECK:         %[[B:.*]] = tfm.launch @prefill_rope_1(%[[A]]) : (tensor<?x64xf32>) -> tensor<?x64xf32>
// CHECK:         %[[L:.*]] = tfm.launch @prefill_last_row(%[[B]]) : (tensor<?x64xf32>) -> tensor<1x64xf32>
// CHECK:         return %[[L]]
// CHECK:       func.func private @prefill_rope(%{{.*}}: tensor<?x64xf32> {tfm.token_rows}) -> (tensor<?x64xf32> {tfm.token_rows})
// CHECK:         head_dim = 16
// CHECK:       func.func private @prefill_rope_1(
// CHECK:         head_dim = 32
// CHECK:       func.func private @prefill_last_row(%{{.*}}: tensor<?x64xf32> {tfm.token_rows}) -> tensor<1x64xf32>
module {
  func.func @prefill(%tokens: tensor<?xi32>) -> tensor<1x64xf32> attributes {tfm.entry = "prefill"} {
    %table = tfm.weight "token_embd.weight" : tensor<100x64xf32>
    %x = tfm.embedding %table, %tokens : tensor<100x64xf32>, tensor<?xi32> -> tensor<?x64xf32>
    %a = tfm.rope %x {head_dim = 16 : i64, theta = 1.0e+04 : f64} : tensor<?x64xf32>
    %b = tfm.rope %a {head_dim = 32 : i64, theta = 1.0e+04 : f64} : tensor<?x64xf32>
    %l = tfm.last_row %b : tensor<?x64xf32> -> tensor<1x64xf32>
    return %l : tensor<1x64xf32>
  }
}

// -----

// score shares prefill's kernels (both run a dynamic number of rows); only
// what differs, its logits over every row, is a kernel of its own.

// CHECK-LABEL: func.func @prefill
// CHECK:         %[[X:.*]] = tfm.launch @prefill_embedding(
// CHECK:         tfm.launch @prefill_logits(%[[X]], %{{.*}}) : (tensor<?x64xf32>, tensor<100x64xf32>) -> tensor<1x100xf32>
// CHECK-LABEL: func.func @score
// CHECK:         %[[Y:.*]] = tfm.launch @prefill_embedding(
// CHECK:         tfm.launch @score_logits(%[[Y]], %{{.*}}) : (tensor<?x64xf32>, tensor<100x64xf32>) -> tensor<?x100xf32>
// CHECK:       func.func private @prefill_embedding(
// CHECK:       func.func private @prefill_logits(
// CHECK:       func.func private @score_logits(%{{.*}}: tensor<?x64xf32> {tfm.token_rows}, %{{.*}}: tensor<100x64xf32>) -> (tensor<?x100xf32> {tfm.token_rows})
// CHECK-NOT:   func.func
module {
  func.func @prefill(%tokens: tensor<?xi32>) -> tensor<1x100xf32> attributes {tfm.entry = "prefill"} {
    %table = tfm.weight "token_embd.weight" : tensor<100x64xf32>
    %x = tfm.embedding %table, %tokens : tensor<100x64xf32>, tensor<?xi32> -> tensor<?x64xf32>
    %o = tfm.fusion -> tensor<1x100xf32> {
      %l = tfm.last_row %x : tensor<?x64xf32> -> tensor<1x64xf32>
      %y = tfm.linear %l, %table : tensor<1x64xf32>, tensor<100x64xf32> -> tensor<1x100xf32>
      tfm.yield %y : tensor<1x100xf32>
    }
    return %o : tensor<1x100xf32>
  }
  func.func @score(%tokens: tensor<?xi32>) -> tensor<?x100xf32> attributes {tfm.entry = "score"} {
    %table = tfm.weight "token_embd.weight" : tensor<100x64xf32>
    %x = tfm.embedding %table, %tokens : tensor<100x64xf32>, tensor<?xi32> -> tensor<?x64xf32>
    %o = tfm.linear %x, %table : tensor<?x64xf32>, tensor<100x64xf32> -> tensor<?x100xf32>
    return %o : tensor<?x100xf32>
  }
}
