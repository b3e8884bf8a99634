
func.func @attention_cache_width(%q: tensor<1x64xf32>, %c: memref<48x64xf32>) {
  // expected-error@+1 {{'tfm.attention' op cache width 64 must be n_kv_heads*head_dim = 32}}
  %a = tfm.attention %q, %c, %c {head_dim = 16 : i64, n_heads = 4 : i64, n_kv_heads = 2 : i64} : tensor<1x64xf32>, memref<48x64xf32>, memref<48x64xf32>
  return
}

func.retur