// RUN: tfm-opt %s --split-input-file --verify-diagnostics

func.func @linear_k_mismatch(%x: tensor<1x64xf32>, %w: tensor<32x48xf32>) {
  // expected-error @+1 {{input width (K) 64 must equal the weight's second dimension 48 (weight is [N, K])}}
  %y = tfm.linear %x, %w : tensor<1x64xf32>, tensor<32x48xf32> -> tensor<1x32xf32>
  return
}

// -----

func.func @linear_result(%x: tensor<1x64xf32>, %w: tensor<32x64xf32>) {
  // expected-error @+1 {{result must be [1, 32], found 'tensor<1x64xf32>'}}
  %y = tfm.linear %x, %w : tensor<1x64xf32>, tensor<32x64xf32> -> tensor<1x64xf32>
  return
}

// -----

func.func @linear_bias_length(%x: tensor<1x64xf32>, %w: tensor<32x64xf32>, %b: tensor<64xf32>) {
  // expected-error @+1 {{bias length 64 must equal the weight's first dimension (N) 32}}
  %y = tfm.linear %x, %w, %b : tensor<1x64xf32>, tensor<32x64xf32>, tensor<64xf32> -> tensor<1x32xf32>
  return
}

// -----

func.func @linear_bias_rank(%x: tensor<1x64xf32>, %w: tensor<32x64xf32>, %b: tensor<1x32xf32>) {
  // expected-error @+1 {{bias must have rank 1, found 'tensor<1x32xf32>'}}
  %y = tfm.linear %x, %w, %b : tensor<1x64xf32>, tensor<32x64xf32>, tensor<1x32xf32> -> tensor<1x32xf32>
  return
}

// -----

func.func @rope_width(%x: tensor<1x40xf32>) {
  // expected-error @+1 {{input width 40 must be divisible by head_dim 16}}
  %y = tfm.rope %x {head_dim = 16 : i64, theta = 1.0e+04 : f64} : tensor<1x40xf32>
  return
}

// -----

func.func @rope_odd_head(%x: tensor<1x15xf32>) {
  // expected-error @+1 {{head_dim must be positive and even, found 5}}
  %y = tfm.rope %x {head_dim = 5 : i64, theta = 1.0e+04 : f64} : tensor<1x15xf32>
  return
}

// -----

func.func @norm_weight(%x: tensor<1x64xf32>, %w: tensor<32xf32>) {
  // expected-error @+1 {{weight length 32 must equal the input width 64}}
  %y = tfm.rms_norm %x, %w {eps = 1.0e-05 : f64} : tensor<1x64xf32>, tensor<32xf32> -> tensor<1x64xf32>
  return
}

// -----

func.func @layer_norm_bias(%x: tensor<1x64xf32>, %w: tensor<64xf32>, %b: tensor<32xf32>) {
  // expected-error @+1 {{bias length 32 must equal the input width 64}}
  %y = tfm.layer_norm %x, %w, %b {eps = 1.0e-05 : f64} : tensor<1x64xf32>, tensor<64xf32>, tensor<32xf32> -> tensor<1x64xf32>
  return
}

// -----

func.func @layer_norm_eps(%x: tensor<1x64xf32>, %w: tensor<64xf32>) {
  // expected-error @+1 {{eps must be positive, found 0}}
  %y = tfm.layer_norm %x, %w, %w {eps = 0.0 : f64} : tensor<1x64xf32>, tensor<64xf32>, tensor<64xf32> -> tensor<1x64xf32>
  return
}

// -----

func.func @layer_norm_result(%x: tensor<?x64xf32>, %w: tensor<64xf32>) {
  // expected-error @+1 {{result type 'tensor<1x64xf32>' must equal the input type 'tensor<?x64xf32>'}}
  %y = tfm.layer_norm %x, %w, %w {eps = 1.0e-05 : f64} : tensor<?x64xf32>, tensor<64xf32>, tensor<64xf32> -> tensor<1x64xf32>
  return
}

// -----

func.func @slice_cols_range(%x: tensor<1x96xf32>) {
  // expected-error @+1 {{columns [64, 104) must be a non-empty range inside the input width 96}}
  %y = tfm.slice_cols %x {begin = 64 : i64, size = 40 : i64} : tensor<1x96xf32> -> tensor<1x40xf32>
  return
}

// -----

func.func @slice_cols_result(%x: tensor<?x96xf32>) {
  // expected-error @+1 {{result must be [?, 32], found 'tensor<?x16xf32>'}}
  %y = tfm.slice_cols %x {begin = 0 : i64, size = 32 : i64} : tensor<?x96xf32> -> tensor<?x16xf32>
  return
}

// -----

func.func @add_positions_width(%x: tensor<1x64xf32>, %p: tensor<48x32xf32>) {
  // expected-error @+1 {{table width 32 must equal the input width 64}}
  %y = tfm.add_positions %x, %p : tensor<1x64xf32>, tensor<48x32xf32> -> tensor<1x64xf32>
  return
}

// -----

func.func @gelu_form(%x: tensor<1x64xf32>) {
  // expected-error @+1 {{requires attribute 'approximate'}}
  %y = tfm.gelu %x : tensor<1x64xf32>
  return
}

// -----

func.func @attention_cache_width(%q: tensor<1x64xf32>, %c: tensor<48x64xf32>) {
  // expected-error @+1 {{cache width 64 must be n_kv_heads*head_dim = 32}}
  %a = tfm.attention %q, %c, %c {head_dim = 16 : i64, n_heads = 4 : i64, n_kv_heads = 2 : i64} : tensor<1x64xf32>, tensor<48x64xf32>, tensor<48x64xf32> -> tensor<1x64xf32>
  return
}

// -----

func.func @attention_groups(%q: tensor<1x48xf32>, %c: tensor<48x32xf32>) {
  // expected-error @+1 {{n_heads 3 must be a multiple of n_kv_heads 2}}
  %a = tfm.attention %q, %c, %c {head_dim = 16 : i64, n_heads = 3 : i64, n_kv_heads = 2 : i64} : tensor<1x48xf32>, tensor<48x32xf32>, tensor<48x32xf32> -> tensor<1x48xf32>
  return
}

// -----

func.func @attention_query_width(%q: tensor<1x48xf32>, %c: tensor<48x32xf32>) {
  // expected-error @+1 {{query width 48 must be n_heads*head_dim = 64}}
  %a = tfm.attention %q, %c, %c {head_dim = 16 : i64, n_heads = 4 : i64, n_kv_heads = 2 : i64} : tensor<1x48xf32>, tensor<48x32xf32>, tensor<48x32xf32> -> tensor<1x48xf32>
  return
}

// -----

func.func @embedding_width(%t: tensor<100x64xf32>, %tokens: tensor<1xi32>) {
  // expected-error @+1 {{result width 32 must equal the table width 64}}
  %x = tfm.embedding %t, %tokens : tensor<100x64xf32>, tensor<1xi32> -> tensor<1x32xf32>
  return
}

// -----

func.func @kv_store_width(%k: tensor<1x16xf32>, %c: tensor<48x32xf32>) {
  // expected-error @+1 {{value width 16 must equal the cache width 32}}
  tfm.kv_store %k, %c : tensor<1x16xf32>, tensor<48x32xf32>
  return
}

// -----

func.func @last_row_shape(%x: tensor<?x64xf32>) {
  // expected-error @+1 {{result must be [1, 64], found 'tensor<2x64xf32>'}}
  %y = tfm.last_row %x : tensor<?x64xf32> -> tensor<2x64xf32>
  return
}

// -----

func.func @dynamic_weight() {
  // expected-error @+1 {{weight 'w' must have a static shape, found 'tensor<?x4xf32>'}}
  %w = tfm.weight "w" : tensor<?x4xf32>
  return
}

// -----

func.func @fusion_yield_types(%x: tensor<1x8xf32>) {
  // expected-error @+1 {{tfm.yield operand types must equal the result types}}
  %y = tfm.fusion -> tensor<1x4xf32> {
    %s = tfm.silu %x : tensor<1x8xf32>
    tfm.yield %s : tensor<1x8xf32>
  }
  return
}

// -----

module {
  func.func @missing_kernel(%x: tensor<1x8xf32>) {
    // expected-error @+1 {{kernel 'nowhere' is not a function of this module}}
    %y = tfm.launch @nowhere(%x) : (tensor<1x8xf32>) -> tensor<1x8xf32>
    return
  }
}

// -----

module {
  func.func @kernel_type(%x: tensor<1x8xf32>) {
    // expected-error @+1 {{argument/result types do not match kernel 'k'}}
    %y = tfm.launch @k(%x) : (tensor<1x8xf32>) -> tensor<1x4xf32>
    return
  }
  func.func private @k(%x: tensor<1x8xf32>) -> tensor<1x8xf32> {
    return %x : tensor<1x8xf32>
  }
}

// -----

module {
  func.func @offset_alignment(%x: tensor<1x8xf32>) {
    // expected-error @+1 {{arena offset 32 must be -1 or a multiple of 64}}
    %y = tfm.launch @k(%x) {arena_offsets = array<i64: 32>} : (tensor<1x8xf32>) -> tensor<1x8xf32>
    return
  }
  func.func private @k(%x: tensor<1x8xf32>) -> tensor<1x8xf32> {
    return %x : tensor<1x8xf32>
  }
}
