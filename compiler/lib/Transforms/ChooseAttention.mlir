// RUN: tfm-opt %s --split-input-file --tfm-choose-attention | FileCheck %s --check-prefix=DEFAULT
// RUN: tfm-opt %s --split-input-file --tfm-choose-attention=key-tile=64 | FileCheck %s --check-prefix=FLASH
// RUN: tfm-opt %s --split-input-file --tfm-choose-attention=key-tile=64 --tfm-choose-attention=key-tile=8 \
// RUN:   | FileCheck %s --check-prefix=FLASH
// RUN: tfm-opt %s --split-input-file --tfm-choose-attention=key-tile=0 | FileCheck %s --check-prefix=DEFAULT
// RUN: tfm-opt %s --split-input-file --tfm-choose-attention | FileCheck %s --check-prefix=GPU

// The default keeps one softmax over all keys (no key_tile). key-tile=N
// gives every attention op FlashAttention's tiles of N keys, a tile longer
// than the cache (16 rows) is the whole cache, and an op that has a tile
// keeps it (so a second run changes nothing).

// DEFAULT-LABEL: func.func @prefill
// DEFAULT:         tfm.attention {{.*}} {head_dim = 16 : i64, n_heads = 4 : i64, n_kv_heads = 2 : i64}
// DEFAULT:         tfm.attention {{.*}} {head_dim = 16 : i64, key_tile = 4 : i64, n_heads = 4 : i64, n_kv_heads = 2 : i64}

// FLASH-LABEL:   func.func @prefill
// FLASH:           tfm.attention {{.*}} {head_dim = 16 : i64, key_tile = 16 : i64, n_heads = 4 : i64, n_kv_heads = 2 : i64}
// FLASH:           tfm.attention {{.*}} {head_dim = 16 : i64, key_tile = 4 : i64, n_heads = 4 : i64, n_kv_heads = 2 : i64}
func.func @prefill(%q: tensor<?x64xf32>, %kc: memref<16x32xf32, strided<[1, 16]>>,
                   %vc: memref<16x32xf32>) -> (tensor<?x64xf32>, tensor<?x64xf32>) {
  %a = tfm.attention %q, %kc, %vc {head_dim = 16 : i64, n_heads = 4 : i64, n_kv_heads = 2 : i64}
      : tensor<?x64xf32>, memref<16x32xf32, strided<[1, 16]>>, memref<16x32xf32>
  %b = tfm.attention %q, %kc, %vc {head_dim = 16 : i64, key_tile = 4 : i64, n_heads = 4 : i64, n_kv_heads = 2 : i64}
      : tensor<?x64xf32>, memref<16x32xf32, strided<[1, 16]>>, memref<16x32xf32>
  return %a, %b : tensor<?x64xf32>, tensor<?x64xf32>
}

// -----

// A GPU target's default is tiles of 64 (a block's scores fit its shared
// memory whatever the context); key-tile=0 still asks for all keys.

// GPU-LABEL:     func.func @gpu_prefill
// GPU:             tfm.attention {{.*}} {head_dim = 16 : i64, key_tile = 64 : i64, n_heads = 4 : i64, n_kv_heads = 2 : i64}
module attributes {tfm.target = "x86-64-linux-sse41-opencl-cl_doubles"} {
  func.func @gpu_prefill(%q: tensor<?x64xf32>, %kc: memref<128x32xf32, strided<[1, 128]>>,
                         %vc: memref<128x32xf32>) -> tensor<?x64xf32> {
    %a = tfm.attention %q, %kc, %vc {head_dim = 16 : i64, n_heads = 4 : i64, n_kv_heads = 2 : i64}
        : tensor<?x64xf32>, memref<128x32xf32, strided<[1, 128]>>, memref<128x32xf32>
    return %a : tensor<?x64xf32>
  }
}
