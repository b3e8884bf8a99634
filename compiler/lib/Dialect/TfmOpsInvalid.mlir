// RUN: tfm-opt %s --split-input-file --verify-diagnostics

// One split per verifier rule of the tfm dialect: the hand-written verifiers
// and result-type inference of TfmOps.cpp, the ODS constraints of
// TfmOps.td/TfmDialect.td, and the attribute verifier of TfmDialect.cpp.
// Where the custom form cannot express the error (a result type it infers)
// the op is written in generic form.

//===----------------------------------------------------------------------===//
// Declarations
//===----------------------------------------------------------------------===//

module {
  // expected-error@+1 {{'tfm.weight_decl' op attribute 'type' failed to satisfy constraint: type attribute of static 1-D or 2-D weight tensor}}
  tfm.weight_decl @"blk.0.w" : tensor<4x4x4xf32>
}

// -----

module {
  // expected-error@+1 {{'tfm.weight_decl' op attribute 'type' failed to satisfy constraint: type attribute of static 1-D or 2-D weight tensor}}
  tfm.weight_decl @"blk.0.w" : tensor<?x4xf32>
}

// -----

module {
  // A block format's rows hold whole blocks (q4_k: 256 values).
  // expected-error@+1 {{'tfm.weight_decl' op attribute 'type' failed to satisfy constraint: type attribute of static 1-D or 2-D weight tensor}}
  tfm.weight_decl @"blk.0.w" : tensor<4x128x!tfm.blocks<"q4_k">>
}

// -----

module {
  // Block formats are for matrices.
  // expected-error@+1 {{'tfm.weight_decl' op attribute 'type' failed to satisfy constraint: type attribute of static 1-D or 2-D weight tensor}}
  tfm.weight_decl @"blk.0.w" : tensor<256x!tfm.blocks<"q8_0">>
}

// -----

module {
  // expected-error@+1 {{!tfm.blocks: unknown block format "q3_k", expected one of q8_0, q4_0, q4_k, q5_k, q6_k}}
  tfm.weight_decl @"blk.0.w" : tensor<4x256x!tfm.blocks<"q3_k">>
}

// -----

func.func @weight_decl_in_function() {
  // expected-error@+1 {{'tfm.weight_decl' op expects parent op 'builtin.module'}}
  tfm.weight_decl @"blk.0.w" : tensor<4xf32>
  return
}

// -----

func.func @cache_decl_in_function() {
  // expected-error@+1 {{'tfm.cache_decl' op expects parent op 'builtin.module'}}
  tfm.cache_decl @"blk.0.key" : memref<48x32xf32>
  return
}

// -----

module {
  // expected-error@+1 {{'tfm.cache_decl' op attribute 'offset' failed to satisfy constraint: 64-bit signless integer attribute whose value is non-negative}}
  tfm.cache_decl @"blk.0.key" offset -64 : memref<48x32xf32>
}

// -----

// A sliding cache (a dynamic offset) serves a window; a cache of every
// position serves none, and has no base slot.
module {
  // expected-error@+1 {{'tfm.cache_decl' op type 'memref<16x32xf32, strided<[32, 1], offset: ?>>' slides, but no window is given}}
  tfm.cache_decl @"blk.0.key" : memref<16x32xf32, strided<[32, 1], offset: ?>>
}

// -----

module {
  // expected-error@+1 {{'tfm.cache_decl' op type 'memref<48x32xf32>' holds every position, but a window is given}}
  tfm.cache_decl @"blk.0.key" window 8 : memref<48x32xf32>
}

// -----

module {
  // expected-error@+1 {{'tfm.cache_decl' op window 32 is longer than its 16 rows}}
  tfm.cache_decl @"blk.0.key" window 32 : memref<16x32xf32, strided<[1, 16], offset: ?>>
}

// -----

// Attention reads a sliding cache through a window only, and its keys and
// values slide alike.
func.func @sliding_read_whole(%q: tensor<1x64xf32>, %c: memref<16x32xf32, strided<[32, 1], offset: ?>>) {
  // expected-error@+1 {{'tfm.attention' op reads sliding caches 'memref<16x32xf32, strided<[32, 1], offset: ?>>' without a window: expected window > 0}}
  %a = tfm.attention %q, %c, %c {head_dim = 16 : i64, n_heads = 4 : i64, n_kv_heads = 2 : i64}
      : tensor<1x64xf32>, memref<16x32xf32, strided<[32, 1], offset: ?>>, memref<16x32xf32, strided<[32, 1], offset: ?>>
  return
}

// -----

func.func @sliding_keys_only(%q: tensor<1x64xf32>, %k: memref<16x32xf32, strided<[32, 1], offset: ?>>,
                             %v: memref<16x32xf32>) {
  // expected-error@+1 {{must both hold every position or both slide}}
  %a = tfm.attention %q, %k, %v {head_dim = 16 : i64, n_heads = 4 : i64, n_kv_heads = 2 : i64, window = 8 : i64}
      : tensor<1x64xf32>, memref<16x32xf32, strided<[32, 1], offset: ?>>, memref<16x32xf32>
  return
}

// -----

// The transposed layout's column stride must be the row count (48), not the
// width.
module {
  // expected-error@+1 {{'tfm.cache_decl' op attribute 'type' failed to satisfy constraint: type attribute of static 2-D f32, f16 or bf16 memref with an identity or strided<[1, rows]> layout}}
  tfm.cache_decl @"blk.0.key" : memref<48x32xf32, strided<[1, 32]>>
}

// -----

module {
  // expected-error@+1 {{'tfm.cache_decl' op attribute 'type' failed to satisfy constraint: type attribute of static 2-D f32, f16 or bf16 memref with an identity or strided<[1, rows]> layout}}
  tfm.cache_decl @"blk.0.key" : memref<48x32xf32, strided<[1, 48], offset: 8>>
}

// -----

module {
  // expected-error@+1 {{'tfm.cache_decl' op attribute 'type' failed to satisfy constraint: type attribute of static 2-D f32, f16 or bf16 memref with an identity or strided<[1, rows]> layout}}
  tfm.cache_decl @"blk.0.key" : memref<48x32xf32, 1>
}

// -----

module {
  // expected-error@+1 {{'tfm.cache_decl' op attribute 'type' failed to satisfy constraint: type attribute of static 2-D f32, f16 or bf16 memref with an identity or strided<[1, rows]> layout}}
  tfm.cache_decl @"blk.0.key" : memref<?x32xf32>
}

// -----

//===----------------------------------------------------------------------===//
// Storage in a function
//===----------------------------------------------------------------------===//

module {
  func.func @weight_missing() {
    // expected-error@+1 {{'tfm.weight' op 'blk.0.w' is not a tfm.weight_decl of this module}}
    %w = tfm.weight @"blk.0.w" : tensor<64xf32>
    return
  }
}

// -----

module {
  tfm.cache_decl @"blk.0.key" : memref<48x32xf32>
  func.func @weight_names_a_cache() {
    // expected-error@+1 {{'tfm.weight' op 'blk.0.key' is not a tfm.weight_decl of this module}}
    %w = tfm.weight @"blk.0.key" : tensor<48x32xf32>
    return
  }
}

// -----

module {
  tfm.weight_decl @"blk.0.w" : tensor<32x64xf32>
  func.func @weight_type() {
    // expected-error@+1 {{'tfm.weight' op type 'tensor<64x32xf32>' differs from the declaration's 'tensor<32x64xf32>'}}
    %w = tfm.weight @"blk.0.w" : tensor<64x32xf32>
    return
  }
}

// -----

module {
  tfm.weight_decl @"blk.0.w" : tensor<32x64xf32>
  func.func @weight_dynamic() {
    // expected-error@+1 {{'tfm.weight' op result #0 must be static 1-D or 2-D weight tensor, but got 'tensor<?x64xf32>'}}
    %w = tfm.weight @"blk.0.w" : tensor<?x64xf32>
    return
  }
}

// -----

module {
  func.func @kv_cache_missing() {
    // expected-error@+1 {{'tfm.kv_cache' op 'blk.0.key' is not a tfm.cache_decl of this module}}
    %c = tfm.kv_cache @"blk.0.key" : memref<48x32xf32>
    return
  }
}

// -----

module {
  tfm.weight_decl @"blk.0.w" : tensor<48x32xf32>
  func.func @kv_cache_names_a_weight() {
    // expected-error@+1 {{'tfm.kv_cache' op 'blk.0.w' is not a tfm.cache_decl of this module}}
    %c = tfm.kv_cache @"blk.0.w" : memref<48x32xf32>
    return
  }
}

// -----

// The layout is part of the type: a transposed cache is not read as an
// identity one.
module {
  tfm.cache_decl @"blk.0.key" : memref<48x32xf32, strided<[1, 48]>>
  func.func @kv_cache_layout() {
    // expected-error@+1 {{'tfm.kv_cache' op type 'memref<48x32xf32>' differs from the declaration's 'memref<48x32xf32, strided<[1, 48]>>'}}
    %c = tfm.kv_cache @"blk.0.key" : memref<48x32xf32>
    return
  }
}

// -----

module {
  tfm.cache_decl @"blk.0.key" : memref<48x32xf32>
  func.func @kv_cache_layout() {
    // expected-error@+1 {{'tfm.kv_cache' op result #0 must be static 2-D f32, f16 or bf16 memref with an identity or strided<[1, rows]> layout, but got 'memref<48x32xf32, strided<[1, 32]>>'}}
    %c = tfm.kv_cache @"blk.0.key" : memref<48x32xf32, strided<[1, 32]>>
    return
  }
}

// -----

//===----------------------------------------------------------------------===//
// Operand and result types (ODS)
//===----------------------------------------------------------------------===//

func.func @rows_rank(%x: tensor<2x4x64xf32>) {
  // expected-error@+1 {{'tfm.silu' op operand #0 must be 2-D f32 tensor of rows with a static width, but got 'tensor<2x4x64xf32>'}}
  %y = tfm.silu %x : tensor<2x4x64xf32>
  return
}

// -----

func.func @rows_dynamic_width(%x: tensor<4x?xf32>) {
  // expected-error@+1 {{'tfm.silu' op operand #0 must be 2-D f32 tensor of rows with a static width, but got 'tensor<4x?xf32>'}}
  %y = tfm.silu %x : tensor<4x?xf32>
  return
}

// -----

func.func @linear_input_rank(%x: tensor<2x4x64xf32>, %w: tensor<32x64xf32>) {
  // expected-error@+1 {{'tfm.linear' op operand #0 must be 2-D f32 tensor of rows with a static width, but got 'tensor<2x4x64xf32>'}}
  %y = "tfm.linear"(%x, %w) : (tensor<2x4x64xf32>, tensor<32x64xf32>) -> tensor<2x32xf32>
  return
}

// -----

func.func @vector_rank(%x: tensor<4x64xf32>, %w: tensor<1x64xf32>) {
  // expected-error@+1 {{'tfm.rms_norm' op operand #1 must be static 1-D weight tensor (f32, f16 or bf16), but got 'tensor<1x64xf32>'}}
  %y = tfm.rms_norm %x, %w {eps = 1.0e-05 : f64} : tensor<4x64xf32>, tensor<1x64xf32>
  return
}

// -----

func.func @matrix_dynamic(%x: tensor<4x64xf32>, %p: tensor<?x64xf32>) {
  // expected-error@+1 {{'tfm.add_positions' op operand #1 must be static 2-D weight tensor (f32, f16, bf16 or whole blocks of a block format), but got 'tensor<?x64xf32>'}}
  %y = tfm.add_positions %x, %p : tensor<4x64xf32>, tensor<?x64xf32>
  return
}

// -----

func.func @tokens_type(%t: tensor<100x64xf32>, %tokens: tensor<?xi64>) {
  // expected-error@+1 {{'tfm.embedding' op expects a static 2-D weight table and 1-D i32 tokens, found 'tensor<100x64xf32>' and 'tensor<?xi64>'}}
  %x = tfm.embedding %t, %tokens : tensor<100x64xf32>, tensor<?xi64>
  return
}

// -----

func.func @cache_operand_layout(%k: tensor<4x32xf32>, %c: memref<48x32xf32, strided<[1, 32]>>) {
  // expected-error@+1 {{'tfm.kv_store' op operand #1 must be static 2-D f32, f16 or bf16 memref with an identity or strided<[1, rows]> layout, but got 'memref<48x32xf32, strided<[1, 32]>>'}}
  tfm.kv_store %k, %c : tensor<4x32xf32>, memref<48x32xf32, strided<[1, 32]>>
  return
}

// -----

func.func @unary_result(%x: tensor<4x64xf32>) {
  // expected-error@+1 {{'tfm.silu' op failed to verify that all of {input, result} have same type}}
  %y = "tfm.silu"(%x) : (tensor<4x64xf32>) -> tensor<?x64xf32>
  return
}

// -----

func.func @binary_operands(%a: tensor<4x64xf32>, %b: tensor<?x64xf32>) {
  // expected-error@+1 {{'tfm.mul' op failed to verify that all of {lhs, rhs, result} have same type}}
  %y = "tfm.mul"(%a, %b) : (tensor<4x64xf32>, tensor<?x64xf32>) -> tensor<4x64xf32>
  return
}

// -----

func.func @norm_result(%x: tensor<4x64xf32>, %w: tensor<64xf32>) {
  // expected-error@+1 {{'tfm.rms_norm' op failed to verify that all of {input, result} have same type}}
  %y = "tfm.rms_norm"(%x, %w) <{eps = 1.0e-05 : f64}> : (tensor<4x64xf32>, tensor<64xf32>) -> tensor<?x64xf32>
  return
}

// -----

// The kernel holds a bucket per distance up to the maximum: it is bounded.
func.func @relative_distance_too_far(%q: tensor<4x64xf32>, %c: memref<48x64xf32>,
                                     %t: tensor<32x4xf32>) {
  // expected-error@+1 {{at most 65536}}
  %a = tfm.attention %q, %c, %c, %t {head_dim = 16 : i64, n_heads = 4 : i64, n_kv_heads = 4 : i64,
                                     relative_max_distance = 4294967296 : i64}
      : tensor<4x64xf32>, memref<48x64xf32>, memref<48x64xf32>, tensor<32x4xf32>
  return
}

// -----

// A window masks keys behind a causal row: an encoder's rows see them all.
func.func @window_not_causal(%q: tensor<4x64xf32>, %c: memref<48x64xf32>) {
  // expected-error@+1 {{'tfm.attention' op has a window of 8 without causal masking: expected a window only where causal}}
  %a = tfm.attention %q, %c, %c {causal = false, head_dim = 16 : i64, n_heads = 4 : i64, n_kv_heads = 4 : i64, window = 8 : i64}
      : tensor<4x64xf32>, memref<48x64xf32>, memref<48x64xf32>
  return
}

// -----

func.func @attention_result(%q: tensor<4x64xf32>, %c: memref<48x32xf32>) {
  // expected-error@+1 {{'tfm.attention' op failed to verify that all of {query, result} have same type}}
  %a = "tfm.attention"(%q, %c, %c) <{head_dim = 16 : i64, n_heads = 4 : i64, n_kv_heads = 2 : i64}> : (tensor<4x64xf32>, memref<48x32xf32>, memref<48x32xf32>) -> tensor<1x64xf32>
  return
}

// -----

//===----------------------------------------------------------------------===//
// Attributes (ODS)
//===----------------------------------------------------------------------===//

func.func @eps_zero(%x: tensor<4x64xf32>, %w: tensor<64xf32>) {
  // expected-error@+1 {{'tfm.rms_norm' op attribute 'eps' failed to satisfy constraint: 64-bit float attribute whose value is positive}}
  %y = tfm.rms_norm %x, %w {eps = 0.0 : f64} : tensor<4x64xf32>, tensor<64xf32>
  return
}

// -----

func.func @eps_missing(%x: tensor<4x64xf32>, %w: tensor<64xf32>) {
  // expected-error@+1 {{'tfm.layer_norm' op requires attribute 'eps'}}
  %y = tfm.layer_norm %x, %w, %w : tensor<4x64xf32>, tensor<64xf32>, tensor<64xf32>
  return
}

// -----

func.func @theta_zero(%x: tensor<4x64xf32>) {
  // expected-error@+1 {{'tfm.rope' op attribute 'theta' failed to satisfy constraint: 64-bit float attribute whose value is positive}}
  %y = tfm.rope %x {head_dim = 16 : i64, interleaved = true, position_scale = 1.0 : f64, rotary_dim = 16 : i64, theta = 0.0 : f64} : tensor<4x64xf32>
  return
}

// -----

func.func @head_dim_zero(%x: tensor<4x64xf32>) {
  // expected-error@+1 {{'tfm.rope' op attribute 'head_dim' failed to satisfy constraint: 64-bit signless integer attribute whose value is positive}}
  %y = tfm.rope %x {head_dim = 0 : i64, interleaved = true, position_scale = 1.0 : f64, rotary_dim = 4 : i64, theta = 1.0e+04 : f64} : tensor<4x64xf32>
  return
}

// -----

// Checked before the verifier divides by it.
func.func @kv_heads_zero(%q: tensor<1x64xf32>, %c: memref<48x32xf32>) {
  // expected-error@+1 {{'tfm.attention' op attribute 'n_kv_heads' failed to satisfy constraint: 64-bit signless integer attribute whose value is positive}}
  %a = tfm.attention %q, %c, %c {head_dim = 16 : i64, n_heads = 4 : i64, n_kv_heads = 0 : i64} : tensor<1x64xf32>, memref<48x32xf32>, memref<48x32xf32>
  return
}

// -----

func.func @gelu_form(%x: tensor<4x64xf32>) {
  // expected-error@+1 {{'tfm.gelu' op requires attribute 'approximate'}}
  %y = tfm.gelu %x : tensor<4x64xf32>
  return
}

// -----

func.func @gelu_form_type(%x: tensor<4x64xf32>) {
  // expected-error@+1 {{'tfm.gelu' op attribute 'approximate' failed to satisfy constraint: bool attribute}}
  %y = tfm.gelu %x {approximate = 1 : i64} : tensor<4x64xf32>
  return
}

// -----

// Generic form: the result type is given, not inferred, so that the
// attribute constraint is what fails.
func.func @slice_cols_begin(%x: tensor<?x96xf32>) {
  // expected-error@+1 {{'tfm.slice_cols' op attribute 'begin' failed to satisfy constraint: 64-bit signless integer attribute whose value is non-negative}}
  %y = "tfm.slice_cols"(%x) <{begin = -1 : i64, size = 32 : i64}> : (tensor<?x96xf32>) -> tensor<?x32xf32>
  return
}

// -----

func.func @slice_cols_size(%x: tensor<?x96xf32>) {
  // expected-error@+1 {{'tfm.slice_cols' op attribute 'size' failed to satisfy constraint: 64-bit signless integer attribute whose value is positive}}
  %y = "tfm.slice_cols"(%x) <{begin = 0 : i64, size = 0 : i64}> : (tensor<?x96xf32>) -> tensor<?x0xf32>
  return
}

// -----

func.func @arena_offsets_type(%x: tensor<1x8xf32>) {
  // expected-error@+1 {{'tfm.launch' op attribute 'arena_offsets' failed to satisfy constraint: i64 dense array attribute}}
  %y = tfm.launch @k(%x) {arena_offsets = array<i32: 0>} : (tensor<1x8xf32>) -> tensor<1x8xf32>
  return
}

// -----

//===----------------------------------------------------------------------===//
// Kernel op verifiers and result-type inference
//===----------------------------------------------------------------------===//

func.func @embedding_result(%t: tensor<100x64xf32>, %tokens: tensor<1xi32>) {
  // expected-error@+2 {{'tfm.embedding' op inferred type(s) 'tensor<1x64xf32>' are incompatible with return type(s) of operation 'tensor<1x32xf32>'}}
  // expected-error@+1 {{'tfm.embedding' op failed to infer returned types}}
  %x = "tfm.embedding"(%t, %tokens) : (tensor<100x64xf32>, tensor<1xi32>) -> tensor<1x32xf32>
  return
}

// -----

func.func @rms_norm_weight(%x: tensor<4x64xf32>, %w: tensor<32xf32>) {
  // expected-error@+1 {{'tfm.rms_norm' op weight length 32 must equal the input width 64}}
  %y = tfm.rms_norm %x, %w {eps = 1.0e-05 : f64} : tensor<4x64xf32>, tensor<32xf32>
  return
}

// -----

func.func @layer_norm_weight(%x: tensor<4x64xf32>, %w: tensor<32xf32>) {
  // expected-error@+1 {{'tfm.layer_norm' op weight length 32 must equal the input width 64}}
  %y = tfm.layer_norm %x, %w, %w {eps = 1.0e-05 : f64} : tensor<4x64xf32>, tensor<32xf32>, tensor<32xf32>
  return
}

// -----

func.func @layer_norm_bias(%x: tensor<4x64xf32>, %w: tensor<64xf32>, %b: tensor<32xf32>) {
  // expected-error@+1 {{'tfm.layer_norm' op bias length 32 must equal the input width 64}}
  %y = tfm.layer_norm %x, %w, %b {eps = 1.0e-05 : f64} : tensor<4x64xf32>, tensor<64xf32>, tensor<32xf32>
  return
}

// -----

func.func @linear_k(%x: tensor<1x64xf32>, %w: tensor<32x48xf32>) {
  // expected-error@+1 {{'tfm.linear' op input width (K) 64 must equal the weight's second dimension 48 (weight is [N, K])}}
  %y = tfm.linear %x, %w : tensor<1x64xf32>, tensor<32x48xf32>
  return
}

// -----

func.func @linear_bias(%x: tensor<1x64xf32>, %w: tensor<32x64xf32>, %b: tensor<64xf32>) {
  // expected-error@+1 {{'tfm.linear' op bias length 64 must equal the weight's first dimension (N) 32}}
  %y = tfm.linear %x, %w, %b : tensor<1x64xf32>, tensor<32x64xf32>, tensor<64xf32>
  return
}

// -----

func.func @linear_result(%x: tensor<1x64xf32>, %w: tensor<32x64xf32>) {
  // expected-error@+2 {{'tfm.linear' op inferred type(s) 'tensor<1x32xf32>' are incompatible with return type(s) of operation 'tensor<1x64xf32>'}}
  // expected-error@+1 {{'tfm.linear' op failed to infer returned types}}
  %y = "tfm.linear"(%x, %w) : (tensor<1x64xf32>, tensor<32x64xf32>) -> tensor<1x64xf32>
  return
}

// -----

func.func @add_positions_width(%x: tensor<4x64xf32>, %p: tensor<48x32xf32>) {
  // expected-error@+1 {{'tfm.add_positions' op table width 32 must equal the input width 64}}
  %y = tfm.add_positions %x, %p : tensor<4x64xf32>, tensor<48x32xf32>
  return
}

// -----

func.func @add_positions_types_width(%x: tensor<4x64xf32>, %p: tensor<48x64xf32>,
                                     %t: tensor<2x32xf32>) {
  // expected-error@+1 {{'tfm.add_positions' op token_types width 32 must equal the input width 64}}
  %y = tfm.add_positions %x, %p, %t : tensor<4x64xf32>, tensor<48x64xf32>, tensor<2x32xf32>
  return
}

// -----

func.func @slice_cols_range(%x: tensor<?x96xf32>) {
  // expected-error@+2 {{'tfm.slice_cols' op columns [64, 104) must lie inside the input width 96}}
  // expected-error@+1 {{'tfm.slice_cols' op failed to infer returned types}}
  %y = "tfm.slice_cols"(%x) <{begin = 64 : i64, size = 40 : i64}> : (tensor<?x96xf32>) -> tensor<?x40xf32>
  return
}

// -----

func.func @slice_cols_result(%x: tensor<?x96xf32>) {
  // expected-error@+2 {{'tfm.slice_cols' op inferred type(s) 'tensor<?x32xf32>' are incompatible with return type(s) of operation 'tensor<?x16xf32>'}}
  // expected-error@+1 {{'tfm.slice_cols' op failed to infer returned types}}
  %y = "tfm.slice_cols"(%x) <{begin = 0 : i64, size = 32 : i64}> : (tensor<?x96xf32>) -> tensor<?x16xf32>
  return
}

// -----

func.func @rope_odd_rotary_dim(%x: tensor<4x15xf32>) {
  // expected-error@+1 {{'tfm.rope' op rotary_dim must be even (RoPE rotates pairs) and at most head_dim 5, found 5}}
  %y = tfm.rope %x {head_dim = 5 : i64, interleaved = true, position_scale = 1.0 : f64, rotary_dim = 5 : i64, theta = 1.0e+04 : f64} : tensor<4x15xf32>
  return
}

// -----

func.func @rope_width(%x: tensor<4x40xf32>) {
  // expected-error@+1 {{'tfm.rope' op input width 40 must be divisible by head_dim 16}}
  %y = tfm.rope %x {head_dim = 16 : i64, interleaved = true, position_scale = 1.0 : f64, rotary_dim = 16 : i64, theta = 1.0e+04 : f64} : tensor<4x40xf32>
  return
}

// -----

func.func @rope_freq_factors_count(%x: tensor<4x32xf32>) {
  // expected-error@+1 {{'tfm.rope' op freq_factors has 3 entries, expected none or one per rotated pair (8)}}
  %y = tfm.rope %x {freq_factors = array<f64: 1.0, 2.0, 8.0>, head_dim = 16 : i64, interleaved = false, position_scale = 1.0 : f64, rotary_dim = 16 : i64, theta = 1.0e+04 : f64} : tensor<4x32xf32>
  return
}

// -----

func.func @rope_freq_factors_positive(%x: tensor<4x8xf32>) {
  // expected-error@+1 {{'tfm.rope' op freq_factors holds 0.000000e+00, expected positive numbers}}
  %y = tfm.rope %x {freq_factors = array<f64: 1.0, 0.0>, head_dim = 4 : i64, interleaved = false, position_scale = 1.0 : f64, rotary_dim = 4 : i64, theta = 1.0e+04 : f64} : tensor<4x8xf32>
  return
}

// -----

func.func @head_rms_norm_width(%x: tensor<4x40xf32>, %w: tensor<16xf32>) {
  // expected-error@+1 {{'tfm.head_rms_norm' op input width 40 must be divisible by head_dim 16}}
  %y = tfm.head_rms_norm %x, %w {eps = 1.0e-06 : f64, head_dim = 16 : i64} : tensor<4x40xf32>, tensor<16xf32>
  return
}

// -----

func.func @head_rms_norm_weight(%x: tensor<4x32xf32>, %w: tensor<32xf32>) {
  // expected-error@+1 {{'tfm.head_rms_norm' op weight length 32 must equal head_dim 16}}
  %y = tfm.head_rms_norm %x, %w {eps = 1.0e-06 : f64, head_dim = 16 : i64} : tensor<4x32xf32>, tensor<32xf32>
  return
}

// -----

func.func @attention_groups(%q: tensor<1x48xf32>, %c: memref<48x32xf32>) {
  // expected-error@+1 {{'tfm.attention' op n_heads 3 must be a multiple of n_kv_heads 2}}
  %a = tfm.attention %q, %c, %c {head_dim = 16 : i64, n_heads = 3 : i64, n_kv_heads = 2 : i64} : tensor<1x48xf32>, memref<48x32xf32>, memref<48x32xf32>
  return
}

// -----

func.func @attention_key_tile(%q: tensor<1x64xf32>, %c: memref<48x32xf32>) {
  // expected-error@+1 {{'tfm.attention' op attribute 'key_tile' failed to satisfy constraint: 64-bit signless integer attribute whose value is non-negative}}
  %a = tfm.attention %q, %c, %c {head_dim = 16 : i64, key_tile = -8 : i64, n_heads = 4 : i64, n_kv_heads = 2 : i64} : tensor<1x64xf32>, memref<48x32xf32>, memref<48x32xf32>
  return
}

// -----

func.func @attention_query_width(%q: tensor<1x48xf32>, %c: memref<48x32xf32>) {
  // expected-error@+1 {{'tfm.attention' op query width 48 must be n_heads*head_dim = 64}}
  %a = tfm.attention %q, %c, %c {head_dim = 16 : i64, n_heads = 4 : i64, n_kv_heads = 2 : i64} : tensor<1x48xf32>, memref<48x32xf32>, memref<48x32xf32>
  return
}

// -----

func.func @attention_cache_shapes(%q: tensor<1x64xf32>, %k: memref<48x32xf32>, %v: memref<64x32xf32, strided<[1, 64]>>) {
  // expected-error@+1 {{'tfm.attention' op key cache 'memref<48x32xf32>' and value cache 'memref<64x32xf32, strided<[1, 64]>>' must have the same shape}}
  %a = tfm.attention %q, %k, %v {head_dim = 16 : i64, n_heads = 4 : i64, n_kv_heads = 2 : i64} : tensor<1x64xf32>, memref<48x32xf32>, memref<64x32xf32, strided<[1, 64]>>
  return
}

// -----

func.func @attention_cache_width(%q: tensor<1x64xf32>, %c: memref<48x64xf32>) {
  // expected-error@+1 {{'tfm.attention' op cache width 64 must be n_kv_heads*head_dim = 32}}
  %a = tfm.attention %q, %c, %c {head_dim = 16 : i64, n_heads = 4 : i64, n_kv_heads = 2 : i64} : tensor<1x64xf32>, memref<48x64xf32>, memref<48x64xf32>
  return
}

// -----

func.func @last_row_result(%x: tensor<?x64xf32>) {
  // expected-error@+2 {{'tfm.last_row' op inferred type(s) 'tensor<1x64xf32>' are incompatible with return type(s) of operation 'tensor<2x64xf32>'}}
  // expected-error@+1 {{'tfm.last_row' op failed to infer returned types}}
  %y = "tfm.last_row"(%x) : (tensor<?x64xf32>) -> tensor<2x64xf32>
  return
}

// -----

func.func @kv_store_width(%k: tensor<1x16xf32>, %c: memref<48x32xf32>) {
  // expected-error@+1 {{'tfm.kv_store' op value width 16 must equal the cache width 32}}
  tfm.kv_store %k, %c : tensor<1x16xf32>, memref<48x32xf32>
  return
}

// -----

func.func @kv_store_rows(%k: tensor<64x32xf32>, %c: memref<48x32xf32, strided<[1, 48]>>) {
  // expected-error@+1 {{'tfm.kv_store' op value has 64 rows, more than the cache's 48}}
  tfm.kv_store %k, %c : tensor<64x32xf32>, memref<48x32xf32, strided<[1, 48]>>
  return
}

// -----

//===----------------------------------------------------------------------===//
// Fusion regions
//===----------------------------------------------------------------------===//

func.func @fusion_yield_types(%x: tensor<1x8xf32>) {
  // expected-error@+1 {{'tfm.fusion' op tfm.yield operand types must equal the result types}}
  %y = tfm.fusion -> tensor<1x4xf32> {
    %s = tfm.silu %x : tensor<1x8xf32>
    tfm.yield %s : tensor<1x8xf32>
  }
  return
}

// -----

func.func @fusion_yield_count(%x: tensor<1x8xf32>) {
  // expected-error@+1 {{'tfm.fusion' op tfm.yield operand types must equal the result types}}
  %y = tfm.fusion -> tensor<1x8xf32> {
    %s = tfm.silu %x : tensor<1x8xf32>
    tfm.yield %s, %s : tensor<1x8xf32>, tensor<1x8xf32>
  }
  return
}

// -----

// The implicit terminator yields nothing.
func.func @fusion_implicit_yield(%x: tensor<1x8xf32>) {
  // expected-error@+1 {{'tfm.fusion' op tfm.yield operand types must equal the result types}}
  %y = tfm.fusion -> tensor<1x8xf32> {
    %s = tfm.silu %x : tensor<1x8xf32>
  }
  return
}

// -----

func.func @fusion_result_type(%x: tensor<8xf32>) {
  // expected-error@+1 {{'tfm.fusion' op result #0 must be variadic of 2-D f32 tensor of rows with a static width, but got 'tensor<8xf32>'}}
  %y = tfm.fusion -> tensor<8xf32> {
    tfm.yield %x : tensor<8xf32>
  }
  return
}

// -----

func.func @fusion_blocks(%x: tensor<1x8xf32>) {
  // expected-error@+1 {{'tfm.fusion' op expects region #0 to have 0 or 1 blocks}}
  %y = "tfm.fusion"() ({
    "tfm.yield"(%x) : (tensor<1x8xf32>) -> ()
  ^bb1:
    "tfm.yield"(%x) : (tensor<1x8xf32>) -> ()
  }) : () -> tensor<1x8xf32>
  return
}

// -----

func.func @fusion_no_block(%x: tensor<1x8xf32>) {
  // expected-error@+1 {{'tfm.fusion' op region #0 ('body') failed to verify constraint: region with 1 blocks}}
  %y = "tfm.fusion"() ({
  }) : () -> tensor<1x8xf32>
  return
}

// -----

func.func @yield_outside_fusion(%x: tensor<1x8xf32>) {
  // expected-error@+1 {{'tfm.yield' op expects parent op 'tfm.fusion'}}
  tfm.yield %x : tensor<1x8xf32>
}

// -----

//===----------------------------------------------------------------------===//
// Launches
//===----------------------------------------------------------------------===//

module {
  func.func @launch_unknown_kernel(%x: tensor<1x8xf32>) {
    // expected-error@+1 {{'tfm.launch' op kernel 'nowhere' is not a function of this module}}
    %y = tfm.launch @nowhere(%x) : (tensor<1x8xf32>) -> tensor<1x8xf32>
    return
  }
}

// -----

module {
  tfm.weight_decl @"blk.0.w" : tensor<8xf32>
  func.func @launch_not_a_function(%x: tensor<1x8xf32>) {
    // expected-error@+1 {{'tfm.launch' op kernel 'blk.0.w' is not a function of this module}}
    %y = tfm.launch @"blk.0.w"(%x) : (tensor<1x8xf32>) -> tensor<1x8xf32>
    return
  }
}

// -----

module {
  func.func @launch_result_type(%x: tensor<1x8xf32>) {
    // expected-error@+1 {{'tfm.launch' op argument/result types do not match kernel 'k' of type '(tensor<1x8xf32>) -> tensor<1x8xf32>'}}
    %y = tfm.launch @k(%x) : (tensor<1x8xf32>) -> tensor<1x4xf32>
    return
  }
  func.func private @k(%x: tensor<1x8xf32>) -> tensor<1x8xf32> attributes {tfm.kernel} {
    return %x : tensor<1x8xf32>
  }
}

// -----

module {
  func.func @launch_argument_count(%x: tensor<1x8xf32>) {
    // expected-error@+1 {{'tfm.launch' op argument/result types do not match kernel 'k' of type '(tensor<1x8xf32>) -> tensor<1x8xf32>'}}
    %y = tfm.launch @k(%x, %x) : (tensor<1x8xf32>, tensor<1x8xf32>) -> tensor<1x8xf32>
    return
  }
  func.func private @k(%x: tensor<1x8xf32>) -> tensor<1x8xf32> attributes {tfm.kernel} {
    return %x : tensor<1x8xf32>
  }
}

// -----

module {
  func.func @launch_result_count(%x: tensor<1x8xf32>) {
    // expected-error@+1 {{'tfm.launch' op argument/result types do not match kernel 'k' of type '(tensor<1x8xf32>) -> tensor<1x8xf32>'}}
    tfm.launch @k(%x) : (tensor<1x8xf32>) -> ()
    return
  }
  func.func private @k(%x: tensor<1x8xf32>) -> tensor<1x8xf32> attributes {tfm.kernel} {
    return %x : tensor<1x8xf32>
  }
}

// -----

module {
  func.func @launch_cache_layout(%x: tensor<1x8xf32>, %c: memref<48x8xf32>) {
    // expected-error@+1 {{'tfm.launch' op argument/result types do not match kernel 'k' of type '(tensor<1x8xf32>, memref<48x8xf32, strided<[1, 48]>>) -> tensor<1x8xf32>'}}
    %y = tfm.launch @k(%x, %c) : (tensor<1x8xf32>, memref<48x8xf32>) -> tensor<1x8xf32>
    return
  }
  func.func private @k(%x: tensor<1x8xf32>, %c: memref<48x8xf32, strided<[1, 48]>>) -> tensor<1x8xf32>
}

// -----

module {
  func.func @launch_argument_kind(%x: tensor<1x8x2xf32>) {
    // expected-error@+1 {{'tfm.launch' op operand #0 must be variadic of 2-D f32 tensor of rows with a static width or static 1-D or 2-D weight tensor or 1-D i32 tensor of token ids or static 2-D f32, f16 or bf16 memref with an identity or strided<[1, rows]> layout, but got 'tensor<1x8x2xf32>'}}
    %y = tfm.launch @k(%x) : (tensor<1x8x2xf32>) -> tensor<1x8xf32>
    return
  }
  func.func private @k(%x: tensor<1x8x2xf32>) -> tensor<1x8xf32>
}

// -----

module {
  func.func @launch_result_kind(%x: tensor<1x8xf32>) {
    // expected-error@+1 {{'tfm.launch' op result #0 must be variadic of 2-D f32 tensor of rows with a static width, but got 'tensor<8xf32>'}}
    %y = tfm.launch @k(%x) : (tensor<1x8xf32>) -> tensor<8xf32>
    return
  }
  func.func private @k(%x: tensor<1x8xf32>) -> tensor<8xf32>
}

// -----

module {
  func.func @arena_offsets_count(%x: tensor<1x8xf32>) {
    // expected-error@+1 {{'tfm.launch' op arena_offsets has 2 entries for 1 results}}
    %y = tfm.launch @k(%x) {arena_offsets = array<i64: 0, 64>} : (tensor<1x8xf32>) -> tensor<1x8xf32>
    return
  }
  func.func private @k(%x: tensor<1x8xf32>) -> tensor<1x8xf32>
}

// -----

module {
  func.func @arena_offset_alignment(%x: tensor<1x8xf32>) {
    // expected-error@+1 {{'tfm.launch' op arena offset 32 must be -1 or a multiple of 64}}
    %y = tfm.launch @k(%x) {arena_offsets = array<i64: 32>} : (tensor<1x8xf32>) -> tensor<1x8xf32>
    return
  }
  func.func private @k(%x: tensor<1x8xf32>) -> tensor<1x8xf32>
}

// -----

module {
  func.func @arena_offset_negative(%x: tensor<1x8xf32>) {
    // expected-error@+1 {{'tfm.launch' op arena offset -64 must be -1 or a multiple of 64}}
    %y = tfm.launch @k(%x) {arena_offsets = array<i64: -64>} : (tensor<1x8xf32>) -> tensor<1x8xf32>
    return
  }
  func.func private @k(%x: tensor<1x8xf32>) -> tensor<1x8xf32>
}

// -----

//===----------------------------------------------------------------------===//
// Attributes the pipeline attaches (TfmDialect::verifyOperationAttribute)
//===----------------------------------------------------------------------===//

// expected-error@+1 {{'tfm.prefill_chunk' must be a positive integer, found 0 : i64}}
module attributes {tfm.prefill_chunk = 0 : i64} {
}

// -----

// expected-error@+1 {{'tfm.context_length' must be a positive integer, found -128 : i64}}
module attributes {tfm.context_length = -128 : i64} {
}

// -----

// expected-error@+1 {{'tfm.vocab_size' must be a positive integer, found "512"}}
module attributes {tfm.vocab_size = "512"} {
}

// -----

// expected-error@+1 {{'tfm.kv_cache_bytes' must be a positive integer, found 1.000000e+00 : f64}}
module attributes {tfm.kv_cache_bytes = 1.0 : f64} {
}

// -----

module {
  // expected-error@+1 {{'tfm.context_length' belongs on the module}}
  func.func @module_attribute_on_function() attributes {tfm.context_length = 128 : i64} {
    return
  }
}

// -----

// expected-error@+1 {{'tfm.config' must be a string, found {context_length = 128 : i64}}}
module attributes {tfm.config = {context_length = 128 : i64}} {
}

// -----

// expected-error@+1 {{'tfm.target' must be a string, found ["x86-64-linux", "avx2"]}}
module attributes {tfm.target = ["x86-64-linux", "avx2"]} {
}

// -----

module {
  // expected-error@+1 {{'tfm.entry' must be "prefill", "decode", "score" or "encode", found 0 : i64}}
  func.func @entry_kind() attributes {tfm.entry = 0 : i64} {
    return
  }
}

// -----

module {
  // expected-error@+1 {{'tfm.schedule' must be a string, found @fast}}
  func.func private @schedule_kind() attributes {tfm.kernel, tfm.schedule = @fast} {
    return
  }
}

// -----

module {
  // expected-error@+1 {{'tfm.arena_bytes' must be a non-negative integer, found -64 : i64}}
  func.func @arena_bytes_negative() attributes {tfm.arena_bytes = -64 : i64} {
    return
  }
}

// -----

// expected-error@+1 {{unknown tfm attribute 'tfm.chunk'}}
module attributes {tfm.chunk = 16 : i64} {
}

// -----

module {
  func.func @unknown_attribute_on_op(%x: tensor<1x8xf32>) {
    // expected-error@+1 {{unknown tfm attribute 'tfm.fused'}}
    %y = tfm.silu %x {tfm.fused} : tensor<1x8xf32>
    return
  }
}

// -----

module {
  // expected-error@+1 {{'tfm.entry' must be "prefill", "decode", "score" or "encode", found "train"}}
  func.func @entry_unknown() attributes {tfm.entry = "train"} {
    return
  }
}

// -----

module {
  // expected-error@+1 {{'tfm.kernel' is a unit attribute, found 1 : i64}}
  func.func private @kernel_not_unit() attributes {tfm.kernel = 1 : i64} {
    return
  }
}

// -----

module {
  // expected-error@+1 {{'tfm.token_rows' is a unit attribute, found true}}
  func.func private @token_rows_not_unit(%x: tensor<?x8xf32> {tfm.token_rows = true})
}

// -----

module {
  // expected-error@+1 {{unknown tfm argument/result attribute 'tfm.rows'}}
  func.func private @unknown_result_attribute() -> (tensor<?x8xf32> {tfm.rows})
}

// -----

func.func @fusion_body_without_yield(%x: tensor<1x8xf32>) {
  // expected-error@+1 {{'tfm.fusion' op body must end in tfm.yield}}
  %y = "tfm.fusion"() ({
    %s = tfm.silu %x : tensor<1x8xf32>
  }) : () -> tensor<1x8xf32>
  return
}

// -----

func.func @activation_block_on_f32_weight(%x: tensor<1x64xf32>, %w: tensor<16x64xf32>) {
  // expected-error@+1 {{'tfm.linear' op activation_block 32 needs a block-format weight (!tfm.blocks<...>), found 'f32'}}
  %y = tfm.linear %x, %w {activation_block = 32 : i64} : tensor<1x64xf32>, tensor<16x64xf32>
  return
}

// -----

func.func @bf16_input_on_f16_weight(%x: tensor<1x64xf32>, %w: tensor<16x64xf16>) {
  // expected-error@+1 {{'tfm.linear' op bf16_input needs a bf16 weight, found 'f16'}}
  %y = tfm.linear %x, %w {bf16_input = true} : tensor<1x64xf32>, tensor<16x64xf16>
  return
}

// -----

func.func @bf16_input_with_activation_block(%x: tensor<1x64xf32>, %w: tensor<16x64xbf16>) {
  // expected-error@+1 {{'tfm.linear' op bf16_input and activation_block 32 both choose the input's type: expected one of them}}
  %y = tfm.linear %x, %w {activation_block = 32 : i64, bf16_input = true} : tensor<1x64xf32>, tensor<16x64xbf16>
  return
}

// -----

func.func @activation_block_not_32(%x: tensor<1x64xf32>, %w: tensor<16x64x!tfm.blocks<"q8_0">>) {
  // expected-error@+1 {{'tfm.linear' op activation_block 16 is not supported with a q8_0 weight: expected 0 (f32 input), 32 or its block, 32}}
  %y = tfm.linear %x, %w {activation_block = 16 : i64} : tensor<1x64xf32>, tensor<16x64x!tfm.blocks<"q8_0">>
  return
}

// -----

// 256 is a k-quant's block, not q8_0's.
func.func @activation_block_256_on_q8_0(%x: tensor<1x256xf32>, %w: tensor<16x256x!tfm.blocks<"q8_0">>) {
  // expected-error@+1 {{'tfm.linear' op activation_block 256 is not supported with a q8_0 weight: expected 0 (f32 input), 32 or its block, 32}}
  %y = tfm.linear %x, %w {activation_block = 256 : i64} : tensor<1x256xf32>, tensor<16x256x!tfm.blocks<"q8_0">>
  return
}

// -----

module {
  // expected-error@+1 {{'tfm.kernel' belongs on a function with a body of one block}}
  func.func private @kernel_without_body(%x: tensor<1x8xf32>) -> tensor<1x8xf32> attributes {tfm.kernel}
}

// -----

module {
  // expected-error@+1 {{'tfm.entry' belongs on a function with a body of one block}}
  func.func private @entry_without_body(%t: tensor<1xi32>) -> tensor<1x8xf32> attributes {tfm.entry = "decode"}
}
