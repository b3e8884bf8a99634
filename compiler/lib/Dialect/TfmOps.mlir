// RUN: tfm-opt %s --split-input-file | tfm-opt --split-input-file | FileCheck %s
// RUN: tfm-opt %s --split-input-file --cse | FileCheck %s --check-prefix=EFFECTS

// Every op prints back the way it parses, and the printed form parses again.

// Storage: weight declarations of rank 1 and 2, cache declarations in both
// layouts with and without a planned offset, the module attributes the driver
// reads, and the ops that name the declarations inside a function.

// CHECK-LABEL: module attributes
// CHECK-SAME:    tfm.config = "{}"
// CHECK-SAME:    tfm.context_length = 48 : i64
// CHECK-SAME:    tfm.kv_cache_bytes = 12288 : i64
// CHECK-SAME:    tfm.prefill_chunk = 16 : i64
// CHECK-SAME:    tfm.target = "x86-64-linux-sse41-avx-f16c-fma-avx2"
// CHECK-SAME:    tfm.vocab_size = 100 : i64
module attributes {tfm.prefill_chunk = 16 : i64, tfm.context_length = 48 : i64,
                   tfm.vocab_size = 100 : i64, tfm.kv_cache_bytes = 12288 : i64,
                   tfm.config = "{}", tfm.target = "x86-64-linux-sse41-avx-f16c-fma-avx2"} {
  // CHECK-NEXT: tfm.weight_decl @token_embd.weight : tensor<100x64xf32>
  // CHECK-NEXT: tfm.weight_decl @blk.0.attn_norm.weight : tensor<64xf32>
  // CHECK-NEXT: tfm.weight_decl @blk.0.attn_k.weight : tensor<32x64xf32>
  // CHECK-NEXT: tfm.weight_decl @blk.0.attn_v.weight : tensor<32x64xf32>
  tfm.weight_decl @"token_embd.weight" : tensor<100x64xf32>
  tfm.weight_decl @"blk.0.attn_norm.weight" : tensor<64xf32>
  tfm.weight_decl @"blk.0.attn_k.weight" : tensor<32x64xf32>
  tfm.weight_decl @"blk.0.attn_v.weight" : tensor<32x64xf32>
  // CHECK-NEXT: tfm.cache_decl @blk.0.key offset 0 : memref<48x32xf32, strided<[1, 48]>>
  // CHECK-NEXT: tfm.cache_decl @blk.0.value offset 6144 : memref<48x32xf32>
  // CHECK-NEXT: tfm.cache_decl @blk.1.key : memref<48x32xf32, strided<[1, 48]>>
  // CHECK-NEXT: tfm.cache_decl @blk.1.value : memref<48x32xf32>
  tfm.cache_decl @"blk.0.key" offset 0 : memref<48x32xf32, strided<[1, 48]>>
  tfm.cache_decl @"blk.0.value" offset 6144 : memref<48x32xf32>
  tfm.cache_decl @"blk.1.key" : memref<48x32xf32, strided<[1, 48]>>
  tfm.cache_decl @"blk.1.value" : memref<48x32xf32>

  // CHECK-LABEL: func.func @prefill
  // CHECK-SAME:    (%[[TOKENS:.*]]: tensor<?xi32>) -> tensor<1x64xf32>
  // CHECK-SAME:    attributes {tfm.arena_bytes = 0 : i64, tfm.entry = "prefill"}
  func.func @prefill(%tokens: tensor<?xi32>) -> tensor<1x64xf32>
      attributes {tfm.entry = "prefill", tfm.arena_bytes = 0 : i64} {
    // CHECK: %[[TABLE:.*]] = tfm.weight @token_embd.weight : tensor<100x64xf32>
    %table = tfm.weight @"token_embd.weight" : tensor<100x64xf32>
    // CHECK: %[[X:.*]] = tfm.embedding %[[TABLE]], %[[TOKENS]] : tensor<100x64xf32>, tensor<?xi32>{{$}}
    %x = tfm.embedding %table, %tokens : tensor<100x64xf32>, tensor<?xi32>
    // CHECK: %[[WN:.*]] = tfm.weight @blk.0.attn_norm.weight : tensor<64xf32>
    %wn = tfm.weight @"blk.0.attn_norm.weight" : tensor<64xf32>
    // CHECK: %[[H:.*]] = tfm.rms_norm %[[X]], %[[WN]] {eps = 1.000000e-05 : f64} : tensor<?x64xf32>, tensor<64xf32>{{$}}
    %h = tfm.rms_norm %x, %wn {eps = 1.0e-05 : f64} : tensor<?x64xf32>, tensor<64xf32>
    // CHECK: %[[WK:.*]] = tfm.weight @blk.0.attn_k.weight : tensor<32x64xf32>
    // CHECK: %[[WV:.*]] = tfm.weight @blk.0.attn_v.weight : tensor<32x64xf32>
    %wk = tfm.weight @"blk.0.attn_k.weight" : tensor<32x64xf32>
    %wv = tfm.weight @"blk.0.attn_v.weight" : tensor<32x64xf32>
    // CHECK: %[[K:.*]] = tfm.linear %[[H]], %[[WK]] : tensor<?x64xf32>, tensor<32x64xf32>{{$}}
    // CHECK: %[[V:.*]] = tfm.linear %[[H]], %[[WV]] : tensor<?x64xf32>, tensor<32x64xf32>{{$}}
    %k = tfm.linear %h, %wk : tensor<?x64xf32>, tensor<32x64xf32>
    %v = tfm.linear %h, %wv : tensor<?x64xf32>, tensor<32x64xf32>
    // CHECK: %[[KR:.*]] = tfm.rope %[[K]] {head_dim = 16 : i64, interleaved = true, position_scale = 1.000000e+00 : f64, rotary_dim = 16 : i64, theta = 1.000000e+04 : f64} : tensor<?x32xf32>{{$}}
    %kr = tfm.rope %k {head_dim = 16 : i64, interleaved = true, position_scale = 1.0 : f64, rotary_dim = 16 : i64, theta = 1.0e+04 : f64} : tensor<?x32xf32>
    // CHECK: %[[KC:.*]] = tfm.kv_cache @blk.0.key : memref<48x32xf32, strided<[1, 48]>>
    // CHECK: %[[VC:.*]] = tfm.kv_cache @blk.0.value : memref<48x32xf32>{{$}}
    %kc = tfm.kv_cache @"blk.0.key" : memref<48x32xf32, strided<[1, 48]>>
    %vc = tfm.kv_cache @"blk.0.value" : memref<48x32xf32>
    // CHECK: tfm.kv_store %[[KR]], %[[KC]] : tensor<?x32xf32>, memref<48x32xf32, strided<[1, 48]>>
    // CHECK: tfm.kv_store %[[V]], %[[VC]] : tensor<?x32xf32>, memref<48x32xf32>{{$}}
    tfm.kv_store %kr, %kc : tensor<?x32xf32>, memref<48x32xf32, strided<[1, 48]>>
    tfm.kv_store %v, %vc : tensor<?x32xf32>, memref<48x32xf32>
    // CHECK: %[[A:.*]] = tfm.attention %[[X]], %[[KC]], %[[VC]] {head_dim = 16 : i64, n_heads = 4 : i64, n_kv_heads = 2 : i64}
    // CHECK-SAME: : tensor<?x64xf32>, memref<48x32xf32, strided<[1, 48]>>, memref<48x32xf32>{{$}}
    %a = tfm.attention %x, %kc, %vc {head_dim = 16 : i64, n_heads = 4 : i64, n_kv_heads = 2 : i64}
        : tensor<?x64xf32>, memref<48x32xf32, strided<[1, 48]>>, memref<48x32xf32>
    // CHECK: %[[S:.*]] = tfm.silu %[[A]] : tensor<?x64xf32>{{$}}
    %s = tfm.silu %a : tensor<?x64xf32>
    // CHECK: %[[M:.*]] = tfm.mul %[[S]], %[[X]] : tensor<?x64xf32>{{$}}
    %m = tfm.mul %s, %x : tensor<?x64xf32>
    // CHECK: %[[SUM:.*]] = tfm.add %[[M]], %[[H]] : tensor<?x64xf32>{{$}}
    %sum = tfm.add %m, %h : tensor<?x64xf32>
    // CHECK: %[[LAST:.*]] = tfm.last_row %[[SUM]] : tensor<?x64xf32>{{$}}
    %last = tfm.last_row %sum : tensor<?x64xf32>
    // CHECK: return %[[LAST]] : tensor<1x64xf32>
    return %last : tensor<1x64xf32>
  }

  // The same caches through a decode function: a one-row query against the
  // other layer's identity-layout keys and transposed values.
  // CHECK-LABEL: func.func @decode
  // CHECK-SAME:    attributes {tfm.entry = "decode"}
  func.func @decode(%q: tensor<1x64xf32>) -> tensor<1x64xf32> attributes {tfm.entry = "decode"} {
    // CHECK: %[[KC:.*]] = tfm.kv_cache @blk.1.key : memref<48x32xf32, strided<[1, 48]>>
    // CHECK: %[[VC:.*]] = tfm.kv_cache @blk.1.value : memref<48x32xf32>{{$}}
    %kc = tfm.kv_cache @"blk.1.key" : memref<48x32xf32, strided<[1, 48]>>
    %vc = tfm.kv_cache @"blk.1.value" : memref<48x32xf32>
    // CHECK: tfm.attention %{{.*}}, %[[VC]], %[[KC]] {head_dim = 8 : i64, n_heads = 8 : i64, n_kv_heads = 4 : i64}
    // CHECK-SAME: : tensor<1x64xf32>, memref<48x32xf32>, memref<48x32xf32, strided<[1, 48]>>
    %a = tfm.attention %q, %vc, %kc {head_dim = 8 : i64, n_heads = 8 : i64, n_kv_heads = 4 : i64}
        : tensor<1x64xf32>, memref<48x32xf32>, memref<48x32xf32, strided<[1, 48]>>
    return %a : tensor<1x64xf32>
  }
}

// -----

// Weights in the formats weight files store: f16, bf16 and GGUF's block
// formats, read by the ops as they read f32.

// CHECK-LABEL: module @typed_weights
module @typed_weights {
  // CHECK-NEXT: tfm.weight_decl @token_embd.weight : tensor<100x256x!tfm.blocks<"q8_0">>
  // CHECK-NEXT: tfm.weight_decl @blk.0.attn_q.weight : tensor<256x256x!tfm.blocks<"q4_k">>
  // CHECK-NEXT: tfm.weight_decl @blk.0.ffn_down.weight : tensor<256x512x!tfm.blocks<"q6_k">>
  // CHECK-NEXT: tfm.weight_decl @blk.0.attn_norm.weight : tensor<256xf16>
  // CHECK-NEXT: tfm.weight_decl @output.weight : tensor<100x256xbf16>
  tfm.weight_decl @"token_embd.weight" : tensor<100x256x!tfm.blocks<"q8_0">>
  tfm.weight_decl @"blk.0.attn_q.weight" : tensor<256x256x!tfm.blocks<"q4_k">>
  tfm.weight_decl @"blk.0.ffn_down.weight" : tensor<256x512x!tfm.blocks<"q6_k">>
  tfm.weight_decl @"blk.0.attn_norm.weight" : tensor<256xf16>
  tfm.weight_decl @"output.weight" : tensor<100x256xbf16>

  // CHECK-LABEL: func.func @typed
  func.func @typed(%tokens: tensor<?xi32>) -> tensor<?x100xf32> {
    // CHECK: tfm.embedding %{{.*}}, %{{.*}} : tensor<100x256x!tfm.blocks<"q8_0">>, tensor<?xi32>
    // CHECK: tfm.rms_norm %{{.*}}, %{{.*}} {eps = 1.000000e-05 : f64} : tensor<?x256xf32>, tensor<256xf16>
    // CHECK: tfm.linear %{{.*}}, %{{.*}} : tensor<?x256xf32>, tensor<256x256x!tfm.blocks<"q4_k">>
    // CHECK: tfm.linear %{{.*}}, %{{.*}} : tensor<?x256xf32>, tensor<100x256xbf16>
    %table = tfm.weight @"token_embd.weight" : tensor<100x256x!tfm.blocks<"q8_0">>
    %norm = tfm.weight @"blk.0.attn_norm.weight" : tensor<256xf16>
    %wq = tfm.weight @"blk.0.attn_q.weight" : tensor<256x256x!tfm.blocks<"q4_k">>
    %head = tfm.weight @"output.weight" : tensor<100x256xbf16>
    %x = tfm.embedding %table, %tokens : tensor<100x256x!tfm.blocks<"q8_0">>, tensor<?xi32>
    %h = tfm.rms_norm %x, %norm {eps = 1.0e-05 : f64} : tensor<?x256xf32>, tensor<256xf16>
    %q = tfm.linear %h, %wq : tensor<?x256xf32>, tensor<256x256x!tfm.blocks<"q4_k">>
    %l = tfm.linear %q, %head : tensor<?x256xf32>, tensor<100x256xbf16>
    return %l : tensor<?x100xf32>
  }
}

// -----

// The GPT-2 ops: learned positions, LayerNorm with bias and a biased
// projection, sliced into columns; GELU in both forms. Result types are
// inferred from the operands and attributes.

// CHECK-LABEL: func.func @gpt2_ops
// CHECK-SAME:    (%[[X:.*]]: tensor<?x64xf32>, %[[P:.*]]: tensor<48x64xf32>, %[[W:.*]]: tensor<64xf32>, %[[B:.*]]: tensor<64xf32>, %[[WQKV:.*]]: tensor<192x64xf32>, %[[BQKV:.*]]: tensor<192xf32>)
func.func @gpt2_ops(%x: tensor<?x64xf32>, %wpe: tensor<48x64xf32>, %w: tensor<64xf32>, %b: tensor<64xf32>,
                    %wqkv: tensor<192x64xf32>, %bqkv: tensor<192xf32>)
    -> (tensor<?x192xf32>, tensor<?x64xf32>, tensor<?x64xf32>) {
  // CHECK: %[[Y:.*]] = tfm.add_positions %[[X]], %[[P]] : tensor<?x64xf32>, tensor<48x64xf32>{{$}}
  %y = tfm.add_positions %x, %wpe : tensor<?x64xf32>, tensor<48x64xf32>
  // BERT's: RoBERTa's offset past the padding rows, token type 0's row.
  // CHECK: tfm.add_positions %[[X]], %[[P]], %[[P]] {offset = 2 : i64} : tensor<?x64xf32>, tensor<48x64xf32>, tensor<48x64xf32>{{$}}
  %z = tfm.add_positions %x, %wpe, %wpe {offset = 2 : i64} : tensor<?x64xf32>, tensor<48x64xf32>, tensor<48x64xf32>
  // CHECK: %[[H:.*]] = tfm.layer_norm %[[Y]], %[[W]], %[[B]] {eps = 1.000000e-05 : f64} : tensor<?x64xf32>, tensor<64xf32>, tensor<64xf32>{{$}}
  %h = tfm.layer_norm %y, %w, %b {eps = 1.0e-05 : f64} : tensor<?x64xf32>, tensor<64xf32>, tensor<64xf32>
  // CHECK: %[[QKV:.*]] = tfm.linear %[[H]], %[[WQKV]], %[[BQKV]] : tensor<?x64xf32>, tensor<192x64xf32>, tensor<192xf32>{{$}}
  %qkv = tfm.linear %h, %wqkv, %bqkv : tensor<?x64xf32>, tensor<192x64xf32>, tensor<192xf32>
  // CHECK: %[[K:.*]] = tfm.slice_cols %[[QKV]] begin 64 size 64 : tensor<?x192xf32>{{$}}
  %k = tfm.slice_cols %qkv begin 64 size 64 : tensor<?x192xf32>
  // CHECK: %[[G:.*]] = tfm.gelu %[[H]] {approximate = true} : tensor<?x64xf32>{{$}}
  // CHECK: %[[E:.*]] = tfm.gelu %[[G]] {approximate = false} : tensor<?x64xf32>{{$}}
  %g = tfm.gelu %h {approximate = true} : tensor<?x64xf32>
  %e = tfm.gelu %g {approximate = false} : tensor<?x64xf32>
  // CHECK: return %[[QKV]], %[[E]], %[[K]] : tensor<?x192xf32>, tensor<?x64xf32>, tensor<?x64xf32>
  return %qkv, %e, %k : tensor<?x192xf32>, tensor<?x64xf32>, tensor<?x64xf32>
}

// -----

// Fusion regions: one yielding two values (the body uses values defined
// above), and one without results whose terminator is left implicit.

module {
  tfm.cache_decl @"blk.0.key" : memref<48x32xf32, strided<[1, 48]>>

  // CHECK-LABEL: func.func @fusion
  // CHECK-SAME:    (%[[X:.*]]: tensor<?x64xf32>, %[[W:.*]]: tensor<64xf32>, %[[WQ:.*]]: tensor<64x64xf32>, %[[WK:.*]]: tensor<32x64xf32>)
  func.func @fusion(%x: tensor<?x64xf32>, %w: tensor<64xf32>, %wq: tensor<64x64xf32>, %wk: tensor<32x64xf32>)
      -> (tensor<?x64xf32>, tensor<?x64xf32>) {
    // CHECK:      %[[R:.*]]:2 = tfm.fusion -> tensor<?x64xf32>, tensor<?x64xf32> {
    // CHECK-NEXT:   %[[H:.*]] = tfm.rms_norm %[[X]], %[[W]] {eps = 1.000000e-05 : f64} : tensor<?x64xf32>, tensor<64xf32>
    // CHECK-NEXT:   %[[Q:.*]] = tfm.linear %[[H]], %[[WQ]] : tensor<?x64xf32>, tensor<64x64xf32>
    // CHECK-NEXT:   tfm.yield %[[Q]], %[[H]] : tensor<?x64xf32>, tensor<?x64xf32>
    // CHECK-NEXT: }
    %q, %h = tfm.fusion -> tensor<?x64xf32>, tensor<?x64xf32> {
      %n = tfm.rms_norm %x, %w {eps = 1.0e-05 : f64} : tensor<?x64xf32>, tensor<64xf32>
      %l = tfm.linear %n, %wq : tensor<?x64xf32>, tensor<64x64xf32>
      tfm.yield %l, %n : tensor<?x64xf32>, tensor<?x64xf32>
    }
    // CHECK:      %[[KC:.*]] = tfm.kv_cache @blk.0.key
    %kc = tfm.kv_cache @"blk.0.key" : memref<48x32xf32, strided<[1, 48]>>
    // CHECK-NEXT: tfm.fusion {
    // CHECK-NEXT:   %[[K:.*]] = tfm.linear %[[R]]#0, %[[WK]] : tensor<?x64xf32>, tensor<32x64xf32>
    // CHECK-NEXT:   tfm.kv_store %[[K]], %[[KC]] : tensor<?x32xf32>, memref<48x32xf32, strided<[1, 48]>>
    // CHECK-NEXT: }
    tfm.fusion {
      %k = tfm.linear %q, %wk : tensor<?x64xf32>, tensor<32x64xf32>
      tfm.kv_store %k, %kc : tensor<?x32xf32>, memref<48x32xf32, strided<[1, 48]>>
    }
    // CHECK-NEXT: return %[[R]]#0, %[[R]]#1
    return %q, %h : tensor<?x64xf32>, tensor<?x64xf32>
  }
}

// -----

// Launches of outlined kernels: the kernel functions are private and carry
// the attributes outlining and schedule selection give them; arguments
// include weights, token ids and both cache layouts; arena_offsets is
// optional and may hold -1 for a result that leaves the function.

module attributes {tfm.context_length = 48 : i64} {
  // CHECK:      tfm.cache_decl @blk.0.key offset 0 : memref<48x32xf32, strided<[1, 48]>>
  // CHECK-NEXT: tfm.cache_decl @blk.0.value offset 6144 : memref<48x32xf32>
  tfm.cache_decl @"blk.0.key" offset 0 : memref<48x32xf32, strided<[1, 48]>>
  tfm.cache_decl @"blk.0.value" offset 6144 : memref<48x32xf32>

  // CHECK-LABEL: func.func @decode
  // CHECK-SAME:    (%[[TOK:.*]]: tensor<1xi32>, %[[T:.*]]: tensor<100x64xf32>, %[[W:.*]]: tensor<32x64xf32>)
  // CHECK-SAME:    attributes {tfm.arena_bytes = 256 : i64, tfm.entry = "decode"}
  func.func @decode(%tokens: tensor<1xi32>, %table: tensor<100x64xf32>, %w: tensor<32x64xf32>)
      -> tensor<1x64xf32> attributes {tfm.entry = "decode", tfm.arena_bytes = 256 : i64} {
    // CHECK: %[[X:.*]] = tfm.launch @decode_embedding(%[[T]], %[[TOK]]) {arena_offsets = array<i64: 0>} : (tensor<100x64xf32>, tensor<1xi32>) -> tensor<1x64xf32>
    %x = tfm.launch @decode_embedding(%table, %tokens) {arena_offsets = array<i64: 0>}
        : (tensor<100x64xf32>, tensor<1xi32>) -> tensor<1x64xf32>
    // CHECK: %[[KC:.*]] = tfm.kv_cache @blk.0.key
    // CHECK: %[[VC:.*]] = tfm.kv_cache @blk.0.value
    %kc = tfm.kv_cache @"blk.0.key" : memref<48x32xf32, strided<[1, 48]>>
    %vc = tfm.kv_cache @"blk.0.value" : memref<48x32xf32>
    // CHECK: %[[A:.*]]:2 = tfm.launch @decode_attn(%[[X]], %[[W]], %[[KC]], %[[VC]]) : (tensor<1x64xf32>, tensor<32x64xf32>, memref<48x32xf32, strided<[1, 48]>>, memref<48x32xf32>) -> (tensor<1x64xf32>, tensor<1x64xf32>)
    %a, %b = tfm.launch @decode_attn(%x, %w, %kc, %vc)
        : (tensor<1x64xf32>, tensor<32x64xf32>, memref<48x32xf32, strided<[1, 48]>>, memref<48x32xf32>)
        -> (tensor<1x64xf32>, tensor<1x64xf32>)
    // CHECK: %[[O:.*]] = tfm.launch @decode_add(%[[A]]#0, %[[A]]#1) {arena_offsets = array<i64: -1>} : (tensor<1x64xf32>, tensor<1x64xf32>) -> tensor<1x64xf32>
    %o = tfm.launch @decode_add(%a, %b) {arena_offsets = array<i64: -1>}
        : (tensor<1x64xf32>, tensor<1x64xf32>) -> tensor<1x64xf32>
    // CHECK: return %[[O]]
    return %o : tensor<1x64xf32>
  }

  // CHECK-LABEL: func.func private @decode_embedding
  // CHECK-SAME:    (%{{.*}}: tensor<100x64xf32>, %{{.*}}: tensor<1xi32> {tfm.token_rows}) -> (tensor<1x64xf32> {tfm.token_rows})
  // CHECK-SAME:    attributes {tfm.kernel, tfm.schedule = "fast"}
  // CHECK:       tfm.embedding
  func.func private @decode_embedding(%table: tensor<100x64xf32>, %tokens: tensor<1xi32> {tfm.token_rows})
      -> (tensor<1x64xf32> {tfm.token_rows}) attributes {tfm.kernel, tfm.schedule = "fast"} {
    %x = tfm.embedding %table, %tokens : tensor<100x64xf32>, tensor<1xi32>
    return %x : tensor<1x64xf32>
  }

  // CHECK-LABEL: func.func private @decode_attn
  // CHECK:       tfm.kv_store
  // CHECK:       tfm.attention
  func.func private @decode_attn(%x: tensor<1x64xf32> {tfm.token_rows}, %w: tensor<32x64xf32>,
                                 %kc: memref<48x32xf32, strided<[1, 48]>>, %vc: memref<48x32xf32>)
      -> (tensor<1x64xf32> {tfm.token_rows}, tensor<1x64xf32> {tfm.token_rows})
      attributes {tfm.kernel, tfm.schedule = "fast"} {
    %k = tfm.linear %x, %w : tensor<1x64xf32>, tensor<32x64xf32>
    tfm.kv_store %k, %kc : tensor<1x32xf32>, memref<48x32xf32, strided<[1, 48]>>
    tfm.kv_store %k, %vc : tensor<1x32xf32>, memref<48x32xf32>
    %a = tfm.attention %x, %kc, %vc {head_dim = 16 : i64, n_heads = 4 : i64, n_kv_heads = 2 : i64}
        : tensor<1x64xf32>, memref<48x32xf32, strided<[1, 48]>>, memref<48x32xf32>
    return %a, %x : tensor<1x64xf32>, tensor<1x64xf32>
  }

  // CHECK-LABEL: func.func private @decode_add
  // CHECK-SAME:    -> tensor<1x64xf32> attributes {tfm.kernel, tfm.schedule = "fast"}
  func.func private @decode_add(%a: tensor<1x64xf32> {tfm.token_rows}, %b: tensor<1x64xf32> {tfm.token_rows})
      -> tensor<1x64xf32> attributes {tfm.kernel, tfm.schedule = "fast"} {
    %s = tfm.add %a, %b : tensor<1x64xf32>
    return %s : tensor<1x64xf32>
  }
}

// -----

// The memory effects the ops declare, as CSE sees them: kv_cache is pure,
// attention only reads its caches (two identical reads merge), kv_store
// writes (a read after it stays, and a repeated store is kept).

module {
  tfm.cache_decl @"blk.0.key" : memref<48x32xf32>

  // EFFECTS-LABEL: func.func @effects
  // EFFECTS-SAME:    (%[[Q:.*]]: tensor<1x32xf32>, %[[K:.*]]: tensor<1x32xf32>)
  // EFFECTS-NEXT:    %[[C:.*]] = tfm.kv_cache @blk.0.key
  // EFFECTS-NEXT:    %[[A:.*]] = tfm.attention %[[Q]], %[[C]], %[[C]]
  // EFFECTS-NEXT:    tfm.kv_store %[[K]], %[[C]]
  // EFFECTS-NEXT:    tfm.kv_store %[[K]], %[[C]]
  // EFFECTS-NEXT:    %[[B:.*]] = tfm.attention %[[Q]], %[[C]], %[[C]]
  // EFFECTS-NEXT:    return %[[A]], %[[A]], %[[B]]
  func.func @effects(%q: tensor<1x32xf32>, %k: tensor<1x32xf32>)
      -> (tensor<1x32xf32>, tensor<1x32xf32>, tensor<1x32xf32>) {
    %c0 = tfm.kv_cache @"blk.0.key" : memref<48x32xf32>
    %c1 = tfm.kv_cache @"blk.0.key" : memref<48x32xf32>
    %a = tfm.attention %q, %c0, %c0 {head_dim = 16 : i64, n_heads = 2 : i64, n_kv_heads = 2 : i64}
        : tensor<1x32xf32>, memref<48x32xf32>, memref<48x32xf32>
    %b = tfm.attention %q, %c1, %c1 {head_dim = 16 : i64, n_heads = 2 : i64, n_kv_heads = 2 : i64}
        : tensor<1x32xf32>, memref<48x32xf32>, memref<48x32xf32>
    tfm.kv_store %k, %c0 : tensor<1x32xf32>, memref<48x32xf32>
    tfm.kv_store %k, %c1 : tensor<1x32xf32>, memref<48x32xf32>
    %c = tfm.attention %q, %c0, %c0 {head_dim = 16 : i64, n_heads = 2 : i64, n_kv_heads = 2 : i64}
        : tensor<1x32xf32>, memref<48x32xf32>, memref<48x32xf32>
    return %a, %b, %c : tensor<1x32xf32>, tensor<1x32xf32>, tensor<1x32xf32>
  }
}
