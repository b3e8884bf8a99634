// The whole pipeline (Passes.td) on a two-layer Llama prefill function (4
// query heads, 2 kv heads, tied embeddings), then with each optional pass
// left out. Every variant ends fully outlined and planned (PLANNED): no
// region and no kernel op is left in the entry, every launch has its arena
// offsets, every cache its offset in the KV-cache block.

// RUN: tfm-opt %s --tfm-pipeline | FileCheck %s
// RUN: tfm-opt %s --tfm-pipeline | FileCheck %s --check-prefix=PLANNED
// RUN: tfm-opt %s --pass-pipeline='builtin.module(tfm-pipeline{skip=canonicalize,cse})' | FileCheck %s

// The pipeline runs on IR of any stage: on its own output it changes
// nothing, and after a run without deduplication it finishes the job.
// RUN: tfm-opt %s --tfm-pipeline -o %t.once
// RUN: tfm-opt %t.once --tfm-pipeline -o %t.twice
// RUN: diff %t.once %t.twice
// RUN: tfm-opt %s --pass-pipeline='builtin.module(tfm-pipeline{skip=tfm-deduplicate-kernels})' \
// RUN:   | tfm-opt --tfm-pipeline | FileCheck %s

// RUN: tfm-opt %s --pass-pipeline='builtin.module(tfm-pipeline{skip=tfm-fuse-epilogues})' -o %t.epi
// RUN: FileCheck %s --check-prefix=EPI < %t.epi
// RUN: FileCheck %s --check-prefix=PLANNED < %t.epi
// RUN: tfm-opt %s --pass-pipeline='builtin.module(tfm-pipeline{skip=tfm-fuse-epilogues,tfm-choose-cache-layouts})' -o %t.epirows
// RUN: FileCheck %s --check-prefix=EPIROWS < %t.epirows
// RUN: FileCheck %s --check-prefix=PLANNED < %t.epirows
// RUN: tfm-opt %s --pass-pipeline='builtin.module(tfm-pipeline{skip=tfm-fuse-norm-linear})' -o %t.norm
// RUN: FileCheck %s --check-prefix=NORM < %t.norm
// RUN: FileCheck %s --check-prefix=PLANNED < %t.norm
// RUN: tfm-opt %s --pass-pipeline='builtin.module(tfm-pipeline{skip=tfm-choose-cache-layouts})' -o %t.rows
// RUN: FileCheck %s --check-prefix=ROWS < %t.rows
// RUN: FileCheck %s --check-prefix=PLANNED < %t.rows
// RUN: tfm-opt %s --pass-pipeline='builtin.module(tfm-pipeline{skip=tfm-deduplicate-kernels})' -o %t.nodedup
// RUN: FileCheck %s --check-prefix=NODEDUP < %t.nodedup
// RUN: FileCheck %s --check-prefix=PLANNED < %t.nodedup
// RUN: tfm-opt %s --pass-pipeline='builtin.module(tfm-pipeline{skip=tfm-select-schedules})' -o %t.nosched
// RUN: FileCheck %s --check-prefix=NOSCHED < %t.nosched
// RUN: FileCheck %s --check-prefix=PLANNED < %t.nosched
// RUN: tfm-opt %s --pass-pipeline='builtin.module(tfm-pipeline{skip=canonicalize,cse,tfm-fuse-norm-linear,tfm-fuse-epilogues,tfm-slide-window-caches,tfm-choose-cache-layouts,tfm-choose-attention,tfm-quantize-activations,tfm-deduplicate-kernels,tfm-select-schedules})' -o %t.none
// RUN: FileCheck %s --check-prefix=NONE < %t.none
// RUN: FileCheck %s --check-prefix=PLANNED < %t.none
// RUN: tfm-opt %s --tfm-pipeline=schedule=plain | FileCheck %s --check-prefix=PLAIN
// RUN: not tfm-opt %s --pass-pipeline='builtin.module(tfm-pipeline{skip=tfm-plan-memory})' 2>&1 \
// RUN:   | FileCheck %s --check-prefix=REQUIRED
// RUN: not tfm-opt %s --pass-pipeline='builtin.module(tfm-pipeline{skip=tfm-fuse})' 2>&1 \
// RUN:   | FileCheck %s --check-prefix=UNKNOWN

// Outlining and memory planning cannot be left out; a name outside the
// pipeline is refused, naming the passes that can.
// REQUIRED: cannot skip pass 'tfm-plan-memory': the code generator needs its result
// UNKNOWN: cannot skip pass 'tfm-fuse': it is not in the tfm pipeline; the optional passes are canonicalize, cse, tfm-fuse-norm-linear, tfm-fuse-epilogues, tfm-slide-window-caches, tfm-choose-cache-layouts, tfm-choose-attention, tfm-quantize-activations, tfm-deduplicate-kernels, tfm-select-schedules

// The whole pipeline: seven kernels, launched once per layer; the key
// caches transposed; 2 x 2 caches of 16x32 floats (2048 bytes each) back to
// back; arena values of 8 rows (the prefill chunk) reuse bytes once dead.

// CHECK-LABEL: module attributes {tfm.context_length = 16 : i64, tfm.kv_cache_bytes = 8192 : i64, tfm.prefill_chunk = 8 : i64, tfm.target = "x86-64-linux-sse41-avx-f16c-fma-avx2", tfm.vocab_size = 100 : i64} {
// CHECK:         tfm.cache_decl @blk.0.key offset 0 : memref<16x32xf32, strided<[1, 16]>>
// CHECK-NEXT:    tfm.cache_decl @blk.0.value offset 2048 : memref<16x32xf32>{{$}}
// CHECK-NEXT:    tfm.cache_decl @blk.1.key offset 4096 : memref<16x32xf32, strided<[1, 16]>>
// CHECK-NEXT:    tfm.cache_decl @blk.1.value offset 6144 : memref<16x32xf32>{{$}}
// CHECK-NEXT:    func.func @prefill(%[[TOKENS:[a-z0-9]+]]: tensor<?xi32>) -> tensor<1x100xf32> attributes {tfm.arena_bytes = 7168 : i64, tfm.entry = "prefill"} {
// CHECK-NEXT:      %[[EMB:[0-9]+]] = tfm.weight @token_embd.weight
// CHECK-NEXT:      %[[X0:[0-9]+]] = tfm.launch @prefill_embedding(%[[EMB]], %[[TOKENS]]) {arena_offsets = array<i64: 0>}
// CHECK-NEXT:      tfm.weight @blk.0.attn_norm.weight
// CHECK-NEXT:      tfm.weight @blk.0.attn_q.weight
// CHECK-NEXT:      tfm.weight @blk.0.attn_k.weight
// CHECK-NEXT:      tfm.weight @blk.0.attn_v.weight
// CHECK-NEXT:      %[[KC0:[0-9]+]] = tfm.kv_cache @blk.0.key : memref<16x32xf32, strided<[1, 16]>>
// CHECK-NEXT:      %[[VC0:[0-9]+]] = tfm.kv_cache @blk.0.value : memref<16x32xf32>{{$}}
// CHECK-NEXT:      %[[Q0:[0-9]+]] = tfm.launch @prefill_attn_in(%[[X0]], %{{[0-9]+}}, %{{[0-9]+}}, %{{[0-9]+}}, %{{[0-9]+}}, %[[KC0]], %[[VC0]]) {arena_offsets = array<i64: 2048>}
// CHECK-NEXT:      %[[A0:[0-9]+]] = tfm.launch @prefill_attention(%[[Q0]], %[[KC0]], %[[VC0]]) {arena_offsets = array<i64: 4096>}
// CHECK-NEXT:      tfm.weight @blk.0.attn_output.weight
// CHECK-NEXT:      %[[R0:[0-9]+]] = tfm.launch @prefill_attn_out(%[[A0]], %{{[0-9]+}}, %[[X0]]) {arena_offsets = array<i64: 2048>}
// CHECK-NEXT:      tfm.weight @blk.0.ffn_norm.weight
// CHECK-NEXT:      tfm.weight @blk.0.ffn_gate.weight
// CHECK-NEXT:      tfm.weight @blk.0.ffn_up.weight
// CHECK-NEXT:      %[[M0:[0-9]+]] = tfm.launch @prefill_ffn_in(%[[R0]], %{{[0-9]+}}, %{{[0-9]+}}, %{{[0-9]+}}) {arena_offsets = array<i64: 4096>}
// CHECK-NEXT:      tfm.weight @blk.0.ffn_down.weight
// CHECK-NEXT:      %[[X1:[0-9]+]] = tfm.launch @prefill_ffn_out(%[[M0]], %{{[0-9]+}}, %[[R0]]) {arena_offsets = array<i64: 0>}
// CHECK-COUNT-4:   tfm.weight @blk.1.attn_
// CHECK-NEXT:      %[[KC1:[0-9]+]] = tfm.kv_cache @blk.1.key
// CHECK-NEXT:      %[[VC1:[0-9]+]] = tfm.kv_cache @blk.1.value
// CHECK-NEXT:      %[[Q1:[0-9]+]] = tfm.launch @prefill_attn_in(%[[X1]], %{{[0-9]+}}, %{{[0-9]+}}, %{{[0-9]+}}, %{{[0-9]+}}, %[[KC1]], %[[VC1]]) {arena_offsets = array<i64: 2048>}
// CHECK-NEXT:      %[[A1:[0-9]+]] = tfm.launch @prefill_attention(%[[Q1]], %[[KC1]], %[[VC1]]) {arena_offsets = array<i64: 4096>}
// CHECK-NEXT:      tfm.weight @blk.1.attn_output.weight
// CHECK-NEXT:      %[[R1:[0-9]+]] = tfm.launch @prefill_attn_out(%[[A1]], %{{[0-9]+}}, %[[X1]]) {arena_offsets = array<i64: 2048>}
// CHECK-COUNT-3:   tfm.weight @blk.1.ffn_
// CHECK-NEXT:      %[[M1:[0-9]+]] = tfm.launch @prefill_ffn_in(%[[R1]], %{{[0-9]+}}, %{{[0-9]+}}, %{{[0-9]+}}) {arena_offsets = array<i64: 4096>}
// CHECK-NEXT:      tfm.weight @blk.1.ffn_down.weight
// CHECK-NEXT:      %[[X2:[0-9]+]] = tfm.launch @prefill_ffn_out(%[[M1]], %{{[0-9]+}}, %[[R1]]) {arena_offsets = array<i64: 0>}
// CHECK-NEXT:      tfm.weight @output_norm.weight
// CHECK-NEXT:      %[[L:[0-9]+]] = tfm.launch @prefill_logits(%[[X2]], %{{[0-9]+}}, %[[EMB]]) {arena_offsets = array<i64: -1>}
// CHECK-NEXT:      return %[[L]]
// CHECK-NEXT:    }
// CHECK-NEXT:    func.func private @prefill_embedding(%{{.*}}: tensor<100x64xf32>, %{{.*}}: tensor<?xi32> {tfm.token_rows}) -> (tensor<?x64xf32> {tfm.token_rows}) attributes {tfm.kernel, tfm.schedule = "fast"} {
// CHECK-NEXT:      tfm.embedding
// CHECK-NEXT:      return
// CHECK-NEXT:    }
// CHECK-NEXT:    func.func private @prefill_attn_in(%[[X:[a-z0-9]+]]: tensor<?x64xf32> {tfm.token_rows}, %[[WN:[a-z0-9]+]]: tensor<64xf32>, %[[WQ:[a-z0-9]+]]: tensor<64x64xf32>, %[[WK:[a-z0-9]+]]: tensor<32x64xf32>, %[[WV:[a-z0-9]+]]: tensor<32x64xf32>, %[[KC:[a-z0-9]+]]: memref<16x32xf32, strided<[1, 16]>>, %[[VC:[a-z0-9]+]]: memref<16x32xf32>) -> (tensor<?x64xf32> {tfm.token_rows}) attributes {tfm.kernel, tfm.schedule = "fast"} {
// CHECK-NEXT:      %[[H:[0-9]+]] = tfm.rms_norm %[[X]], %[[WN]]
// CHECK-NEXT:      %[[Q:[0-9]+]] = tfm.linear %[[H]], %[[WQ]]
// CHECK-NEXT:      %[[K:[0-9]+]] = tfm.linear %[[H]], %[[WK]]
// CHECK-NEXT:      %[[V:[0-9]+]] = tfm.linear %[[H]], %[[WV]]
// CHECK-NEXT:      %[[KR:[0-9]+]] = tfm.rope %[[K]]
// CHECK-NEXT:      tfm.kv_store %[[KR]], %[[KC]] : tensor<?x32xf32>, memref<16x32xf32, strided<[1, 16]>>
// CHECK-NEXT:      tfm.kv_store %[[V]], %[[VC]] : tensor<?x32xf32>, memref<16x32xf32>{{$}}
// CHECK-NEXT:      %[[QR:[0-9]+]] = tfm.rope %[[Q]]
// CHECK-NEXT:      return %[[QR]]
// CHECK-NEXT:    }
// CHECK-NEXT:    func.func private @prefill_attention(%{{.*}}: tensor<?x64xf32> {tfm.token_rows}, %{{.*}}: memref<16x32xf32, strided<[1, 16]>>, %{{.*}}: memref<16x32xf32>) -> (tensor<?x64xf32> {tfm.token_rows}) attributes {tfm.kernel, tfm.schedule = "fast"} {
// CHECK-NEXT:      tfm.attention
// CHECK-NEXT:      return
// CHECK-NEXT:    }
// CHECK-NEXT:    func.func private @prefill_attn_out(
// CHECK-NEXT:      tfm.linear
// CHECK-NEXT:      tfm.add
// CHECK-NEXT:      return
// CHECK-NEXT:    }
// CHECK-NEXT:    func.func private @prefill_ffn_in(
// CHECK-NEXT:      tfm.rms_norm
// CHECK-NEXT:      tfm.linear
// CHECK-NEXT:      tfm.linear
// CHECK-NEXT:      tfm.silu
// CHECK-NEXT:      tfm.mul
// CHECK-NEXT:      return
// CHECK-NEXT:    }
// CHECK-NEXT:    func.func private @prefill_ffn_out(
// CHECK-NEXT:      tfm.linear
// CHECK-NEXT:      tfm.add
// CHECK-NEXT:      return
// CHECK-NEXT:    }
// CHECK-NEXT:    func.func private @prefill_logits(%{{.*}}: tensor<?x64xf32> {tfm.token_rows}, %{{.*}}: tensor<64xf32>, %{{.*}}: tensor<100x64xf32>) -> tensor<1x100xf32> attributes {tfm.kernel, tfm.schedule = "fast"} {
// CHECK-NEXT:      tfm.last_row
// CHECK-NEXT:      tfm.rms_norm
// CHECK-NEXT:      tfm.linear
// CHECK-NEXT:      return
// CHECK-NEXT:    }
// CHECK-NEXT:  }

// What every variant has in common.

// PLANNED:       module attributes {{{.*}}tfm.kv_cache_bytes = 8192 : i64
// PLANNED:         tfm.cache_decl @blk.0.key offset 0 :
// PLANNED-NEXT:    tfm.cache_decl @blk.0.value offset 2048 :
// PLANNED-NEXT:    tfm.cache_decl @blk.1.key offset 4096 :
// PLANNED-NEXT:    tfm.cache_decl @blk.1.value offset 6144 :
// PLANNED-NEXT:    func.func @prefill({{.*}}) -> tensor<1x100xf32> attributes {tfm.arena_bytes = {{[0-9]+}} : i64, tfm.entry = "prefill"} {
// PLANNED-NOT:       {{tfm\.(fusion|embedding|rms_norm|linear|rope|kv_store|attention|add|mul|silu|last_row) }}
// PLANNED-NOT:       {{tfm\.launch @[a-z0-9_]+\([^)]*\) :}}
// PLANNED:           return
// PLANNED-NOT:     tfm.fusion
// PLANNED-NOT:     tfm.launch

// Without the epilogue pass each RoPE is a kernel, and each cache store is
// one (key_store, value_store) that writes the cache it is given. The two
// layers share them, but key and value stores never share a kernel: the key
// cache is transposed, so the same code on the other layout is another
// kernel.

// EPI:           func.func @prefill
// EPI:             %[[QKV:[0-9]+]]:3 = tfm.launch @prefill_attn_in(
// EPI-SAME:          -> (tensor<?x64xf32>, tensor<?x32xf32>, tensor<?x32xf32>)
// EPI-NEXT:        %[[Q:[0-9]+]] = tfm.launch @prefill_rope(%[[QKV]]#0)
// EPI-NEXT:        %[[K:[0-9]+]] = tfm.launch @prefill_rope_1(%[[QKV]]#1)
// EPI-NEXT:        %[[KC:[0-9]+]] = tfm.kv_cache @blk.0.key : memref<16x32xf32, strided<[1, 16]>>
// EPI-NEXT:        %[[VC:[0-9]+]] = tfm.kv_cache @blk.0.value : memref<16x32xf32>{{$}}
// EPI-NEXT:        tfm.launch @prefill_key_store(%[[K]], %[[KC]]) {arena_offsets = array<i64>} : (tensor<?x32xf32>, memref<16x32xf32, strided<[1, 16]>>) -> ()
// EPI-NEXT:        tfm.launch @prefill_value_store(%[[QKV]]#2, %[[VC]]) {arena_offsets = array<i64>} : (tensor<?x32xf32>, memref<16x32xf32>) -> ()
// EPI-NEXT:        tfm.launch @prefill_attention(%[[Q]], %[[KC]], %[[VC]])
// EPI-NEXT:        tfm.weight @blk.0.attn_output.weight
// EPI-NEXT:        %[[O:[0-9]+]] = tfm.launch @prefill_attn_out(
// EPI-NEXT:        tfm.launch @prefill_add(%{{[0-9]+}}, %[[O]])
// EPI:             %[[QKV1:[0-9]+]]:3 = tfm.launch @prefill_attn_in(
// EPI-NEXT:        tfm.launch @prefill_rope(%[[QKV1]]#0)
// EPI-NEXT:        %[[K1:[0-9]+]] = tfm.launch @prefill_rope_1(%[[QKV1]]#1)
// EPI-NEXT:        %[[KC1:[0-9]+]] = tfm.kv_cache @blk.1.key
// EPI-NEXT:        %[[VC1:[0-9]+]] = tfm.kv_cache @blk.1.value
// EPI-NEXT:        tfm.launch @prefill_key_store(%[[K1]], %[[KC1]])
// EPI-NEXT:        tfm.launch @prefill_value_store(%[[QKV1]]#2, %[[VC1]])
// EPI:           func.func private @prefill_key_store(%[[A:[a-z0-9]+]]: tensor<?x32xf32> {tfm.token_rows}, %[[C:[a-z0-9]+]]: memref<16x32xf32, strided<[1, 16]>>) attributes {tfm.kernel, tfm.schedule = "fast"} {
// EPI-NEXT:        tfm.kv_store %[[A]], %[[C]] : tensor<?x32xf32>, memref<16x32xf32, strided<[1, 16]>>
// EPI-NEXT:        return
// EPI-NEXT:      }
// EPI-NEXT:      func.func private @prefill_value_store(%[[A:[a-z0-9]+]]: tensor<?x32xf32> {tfm.token_rows}, %[[C:[a-z0-9]+]]: memref<16x32xf32>) attributes {tfm.kernel, tfm.schedule = "fast"} {
// EPI-NEXT:        tfm.kv_store %[[A]], %[[C]] : tensor<?x32xf32>, memref<16x32xf32>{{$}}
// EPI-NEXT:        return
// EPI-NEXT:      }
// EPI-NOT:       _store_1

// With every cache laid out by rows as well, the key and value stores are
// the same kernel, and rightly so: they compute the same on the same layout.

// EPIROWS-NOT:   strided
// EPIROWS-NOT:   @prefill_value_store
// EPIROWS:       tfm.launch @prefill_key_store(%{{[0-9]+}}, %{{[0-9]+}}) {arena_offsets = array<i64>} : (tensor<?x32xf32>, memref<16x32xf32>) -> ()
// EPIROWS-NEXT:  tfm.launch @prefill_key_store(%{{[0-9]+}}#2, %{{[0-9]+}}) {arena_offsets = array<i64>} : (tensor<?x32xf32>, memref<16x32xf32>) -> ()
// EPIROWS:       func.func private @prefill_key_store(%{{.*}}: tensor<?x32xf32> {tfm.token_rows}, %{{.*}}: memref<16x32xf32>)
// EPIROWS-NOT:   strided
// EPIROWS-NOT:   @prefill_value_store

// Without norm-linear fusion each norm is a kernel of its own and the
// epilogue pass makes one region per projection: RoPE and the store join
// theirs, so the k and v kernels return nothing and only write their cache.
// The last row is a kernel of its own.

// NORM:          func.func @prefill
// NORM:            %[[H:[0-9]+]] = tfm.launch @prefill_rms_norm(
// NORM-COUNT-3:    tfm.weight @blk.0.attn_
// NORM-NEXT:       %[[Q:[0-9]+]] = tfm.launch @prefill_attn_in(%[[H]], %{{[0-9]+}}) {arena_offsets = array<i64: {{[0-9]+}}>}
// NORM-NEXT:       %[[KC:[0-9]+]] = tfm.kv_cache @blk.0.key : memref<16x32xf32, strided<[1, 16]>>
// NORM-NEXT:       tfm.launch @prefill_attn_in_1(%[[H]], %{{[0-9]+}}, %[[KC]]) {arena_offsets = array<i64>} : (tensor<?x64xf32>, tensor<32x64xf32>, memref<16x32xf32, strided<[1, 16]>>) -> ()
// NORM-NEXT:       %[[VC:[0-9]+]] = tfm.kv_cache @blk.0.value : memref<16x32xf32>{{$}}
// NORM-NEXT:       tfm.launch @prefill_attn_in_2(%[[H]], %{{[0-9]+}}, %[[VC]]) {arena_offsets = array<i64>} : (tensor<?x64xf32>, tensor<32x64xf32>, memref<16x32xf32>) -> ()
// NORM-NEXT:       tfm.launch @prefill_attention(%[[Q]], %[[KC]], %[[VC]])
// NORM:            %[[L:[0-9]+]] = tfm.launch @prefill_last_row(
// NORM-NEXT:       %[[N:[0-9]+]] = tfm.launch @prefill_rms_norm{{(_[0-9]+)?}}(%[[L]], %{{[0-9]+}}) {{.*}} : (tensor<1x64xf32>, tensor<64xf32>) -> tensor<1x64xf32>
// NORM-NEXT:       tfm.launch @prefill_logits(%[[N]], %{{[0-9]+}})
// NORM:          func.func private @prefill_attn_in_1(
// NORM-NEXT:       tfm.linear
// NORM-NEXT:       tfm.rope
// NORM-NEXT:       tfm.kv_store
// NORM-NEXT:       return{{$}}
// NORM:          func.func private @prefill_attn_in_2(
// NORM-NEXT:       tfm.linear
// NORM-NEXT:       tfm.kv_store
// NORM-NEXT:       return{{$}}

// Without the layout pass every cache is laid out by rows.

// ROWS-NOT:      strided
// ROWS:          tfm.cache_decl @blk.0.key offset 0 : memref<16x32xf32>{{$}}
// ROWS:          tfm.launch @prefill_attention(%{{[0-9]+}}, %{{[0-9]+}}, %{{[0-9]+}}) {{.*}} : (tensor<?x64xf32>, memref<16x32xf32>, memref<16x32xf32>) -> tensor<?x64xf32>
// ROWS:          func.func private @prefill_attention(%{{.*}}: tensor<?x64xf32> {tfm.token_rows}, %{{.*}}: memref<16x32xf32>, %{{.*}}: memref<16x32xf32>)
// ROWS-NOT:      strided

// Without deduplication the second layer has kernels of its own.

// NODEDUP:       tfm.launch @prefill_attn_in(
// NODEDUP:       tfm.launch @prefill_ffn_out(
// NODEDUP:       tfm.launch @prefill_attn_in_1(
// NODEDUP-NEXT:  tfm.launch @prefill_attention_1(
// NODEDUP-NEXT:  tfm.weight
// NODEDUP-NEXT:  tfm.launch @prefill_attn_out_1(
// NODEDUP:       tfm.launch @prefill_ffn_in_1(
// NODEDUP-NEXT:  tfm.weight
// NODEDUP-NEXT:  tfm.launch @prefill_ffn_out_1(
// NODEDUP:       func.func private @prefill_ffn_out_1(

// Without schedule selection no kernel has a schedule (they compile with
// "plain").

// NOSCHED-NOT:   tfm.schedule
// NOSCHED:       func.func private @prefill_embedding({{.*}} attributes {tfm.kernel} {
// NOSCHED:       func.func private @prefill_logits({{.*}} attributes {tfm.kernel} {
// NOSCHED-NOT:   tfm.schedule

// Only the required passes: every kernel op a kernel, each its own; caches
// by rows; no schedules.

// NONE-NOT:      strided
// NONE-NOT:      tfm.schedule
// NONE:          %[[H:[0-9]+]] = tfm.launch @prefill_rms_norm(
// NONE:          tfm.launch @prefill_attn_in(%[[H]],
// NONE-NEXT:     tfm.launch @prefill_attn_in_1(%[[H]],
// NONE-NEXT:     tfm.launch @prefill_attn_in_2(%[[H]],
// NONE-NEXT:     tfm.launch @prefill_rope(
// NONE-NEXT:     tfm.launch @prefill_rope_1(
// NONE:          tfm.launch @prefill_key_store(
// NONE-NEXT:     tfm.launch @prefill_value_store(
// NONE:          tfm.launch @prefill_key_store_1(
// NONE-NEXT:     tfm.launch @prefill_value_store_1(
// NONE:          tfm.launch @prefill_last_row(
// NONE:          func.func private @prefill_value_store_1(
// NONE-NOT:      strided
// NONE-NOT:      tfm.schedule

// PLAIN-COUNT-7: tfm.schedule = "plain"
// PLAIN-NOT:     tfm.schedule

module attributes {tfm.prefill_chunk = 8 : i64, tfm.context_length = 16 : i64, tfm.vocab_size = 100 : i64,
                   tfm.target = "x86-64-linux-sse41-avx-f16c-fma-avx2"} {
  tfm.weight_decl @"token_embd.weight" : tensor<100x64xf32>
  tfm.weight_decl @"blk.0.attn_norm.weight" : tensor<64xf32>
  tfm.weight_decl @"blk.0.attn_q.weight" : tensor<64x64xf32>
  tfm.weight_decl @"blk.0.attn_k.weight" : tensor<32x64xf32>
  tfm.weight_decl @"blk.0.attn_v.weight" : tensor<32x64xf32>
  tfm.weight_decl @"blk.0.attn_output.weight" : tensor<64x64xf32>
  tfm.weight_decl @"blk.0.ffn_norm.weight" : tensor<64xf32>
  tfm.weight_decl @"blk.0.ffn_gate.weight" : tensor<96x64xf32>
  tfm.weight_decl @"blk.0.ffn_up.weight" : tensor<96x64xf32>
  tfm.weight_decl @"blk.0.ffn_down.weight" : tensor<64x96xf32>
  tfm.weight_decl @"blk.1.attn_norm.weight" : tensor<64xf32>
  tfm.weight_decl @"blk.1.attn_q.weight" : tensor<64x64xf32>
  tfm.weight_decl @"blk.1.attn_k.weight" : tensor<32x64xf32>
  tfm.weight_decl @"blk.1.attn_v.weight" : tensor<32x64xf32>
  tfm.weight_decl @"blk.1.attn_output.weight" : tensor<64x64xf32>
  tfm.weight_decl @"blk.1.ffn_norm.weight" : tensor<64xf32>
  tfm.weight_decl @"blk.1.ffn_gate.weight" : tensor<96x64xf32>
  tfm.weight_decl @"blk.1.ffn_up.weight" : tensor<96x64xf32>
  tfm.weight_decl @"blk.1.ffn_down.weight" : tensor<64x96xf32>
  tfm.weight_decl @"output_norm.weight" : tensor<64xf32>
  tfm.cache_decl @"blk.0.key" : memref<16x32xf32>
  tfm.cache_decl @"blk.0.value" : memref<16x32xf32>
  tfm.cache_decl @"blk.1.key" : memref<16x32xf32>
  tfm.cache_decl @"blk.1.value" : memref<16x32xf32>
  func.func @prefill(%tokens: tensor<?xi32>) -> tensor<1x100xf32> attributes {tfm.entry = "prefill"} {
    %emb = tfm.weight @"token_embd.weight" : tensor<100x64xf32>
    %x0 = tfm.embedding %emb, %tokens : tensor<100x64xf32>, tensor<?xi32>
    %wn0 = tfm.weight @"blk.0.attn_norm.weight" : tensor<64xf32>
    %h0 = tfm.rms_norm %x0, %wn0 {eps = 1.0e-05 : f64} : tensor<?x64xf32>, tensor<64xf32>
    %wq0 = tfm.weight @"blk.0.attn_q.weight" : tensor<64x64xf32>
    %wk0 = tfm.weight @"blk.0.attn_k.weight" : tensor<32x64xf32>
    %wv0 = tfm.weight @"blk.0.attn_v.weight" : tensor<32x64xf32>
    %q0 = tfm.linear %h0, %wq0 : tensor<?x64xf32>, tensor<64x64xf32>
    %k0 = tfm.linear %h0, %wk0 : tensor<?x64xf32>, tensor<32x64xf32>
    %v0 = tfm.linear %h0, %wv0 : tensor<?x64xf32>, tensor<32x64xf32>
    %qr0 = tfm.rope %q0 {head_dim = 16 : i64, interleaved = true, position_scale = 1.0 : f64, rotary_dim = 16 : i64, theta = 1.0e+04 : f64} : tensor<?x64xf32>
    %kr0 = tfm.rope %k0 {head_dim = 16 : i64, interleaved = true, position_scale = 1.0 : f64, rotary_dim = 16 : i64, theta = 1.0e+04 : f64} : tensor<?x32xf32>
    %kc0 = tfm.kv_cache @"blk.0.key" : memref<16x32xf32>
    %vc0 = tfm.kv_cache @"blk.0.value" : memref<16x32xf32>
    tfm.kv_store %kr0, %kc0 : tensor<?x32xf32>, memref<16x32xf32>
    tfm.kv_store %v0, %vc0 : tensor<?x32xf32>, memref<16x32xf32>
    %a0 = tfm.attention %qr0, %kc0, %vc0 {head_dim = 16 : i64, n_heads = 4 : i64, n_kv_heads = 2 : i64}
        : tensor<?x64xf32>, memref<16x32xf32>, memref<16x32xf32>
    %wo0 = tfm.weight @"blk.0.attn_output.weight" : tensor<64x64xf32>
    %o0 = tfm.linear %a0, %wo0 : tensor<?x64xf32>, tensor<64x64xf32>
    %r0 = tfm.add %x0, %o0 : tensor<?x64xf32>
    %wf0 = tfm.weight @"blk.0.ffn_norm.weight" : tensor<64xf32>
    %f0 = tfm.rms_norm %r0, %wf0 {eps = 1.0e-05 : f64} : tensor<?x64xf32>, tensor<64xf32>
    %wg0 = tfm.weight @"blk.0.ffn_gate.weight" : tensor<96x64xf32>
    %wu0 = tfm.weight @"blk.0.ffn_up.weight" : tensor<96x64xf32>
    %g0 = tfm.linear %f0, %wg0 : tensor<?x64xf32>, tensor<96x64xf32>
    %u0 = tfm.linear %f0, %wu0 : tensor<?x64xf32>, tensor<96x64xf32>
    %s0 = tfm.silu %g0 : tensor<?x96xf32>
    %m0 = tfm.mul %s0, %u0 : tensor<?x96xf32>
    %wd0 = tfm.weight @"blk.0.ffn_down.weight" : tensor<64x96xf32>
    %d0 = tfm.linear %m0, %wd0 : tensor<?x96xf32>, tensor<64x96xf32>
    %x1 = tfm.add %r0, %d0 : tensor<?x64xf32>
    %wn1 = tfm.weight @"blk.1.attn_norm.weight" : tensor<64xf32>
    %h1 = tfm.rms_norm %x1, %wn1 {eps = 1.0e-05 : f64} : tensor<?x64xf32>, tensor<64xf32>
    %wq1 = tfm.weight @"blk.1.attn_q.weight" : tensor<64x64xf32>
    %wk1 = tfm.weight @"blk.1.attn_k.weight" : tensor<32x64xf32>
    %wv1 = tfm.weight @"blk.1.attn_v.weight" : tensor<32x64xf32>
    %q1 = tfm.linear %h1, %wq1 : tensor<?x64xf32>, tensor<64x64xf32>
    %k1 = tfm.linear %h1, %wk1 : tensor<?x64xf32>, tensor<32x64xf32>
    %v1 = tfm.linear %h1, %wv1 : tensor<?x64xf32>, tensor<32x64xf32>
    %qr1 = tfm.rope %q1 {head_dim = 16 : i64, interleaved = true, position_scale = 1.0 : f64, rotary_dim = 16 : i64, theta = 1.0e+04 : f64} : tensor<?x64xf32>
    %kr1 = tfm.rope %k1 {head_dim = 16 : i64, interleaved = true, position_scale = 1.0 : f64, rotary_dim = 16 : i64, theta = 1.0e+04 : f64} : tensor<?x32xf32>
    %kc1 = tfm.kv_cache @"blk.1.key" : memref<16x32xf32>
    %vc1 = tfm.kv_cache @"blk.1.value" : memref<16x32xf32>
    tfm.kv_store %kr1, %kc1 : tensor<?x32xf32>, memref<16x32xf32>
    tfm.kv_store %v1, %vc1 : tensor<?x32xf32>, memref<16x32xf32>
    %a1 = tfm.attention %qr1, %kc1, %vc1 {head_dim = 16 : i64, n_heads = 4 : i64, n_kv_heads = 2 : i64}
        : tensor<?x64xf32>, memref<16x32xf32>, memref<16x32xf32>
    %wo1 = tfm.weight @"blk.1.attn_output.weight" : tensor<64x64xf32>
    %o1 = tfm.linear %a1, %wo1 : tensor<?x64xf32>, tensor<64x64xf32>
    %r1 = tfm.add %x1, %o1 : tensor<?x64xf32>
    %wf1 = tfm.weight @"blk.1.ffn_norm.weight" : tensor<64xf32>
    %f1 = tfm.rms_norm %r1, %wf1 {eps = 1.0e-05 : f64} : tensor<?x64xf32>, tensor<64xf32>
    %wg1 = tfm.weight @"blk.1.ffn_gate.weight" : tensor<96x64xf32>
    %wu1 = tfm.weight @"blk.1.ffn_up.weight" : tensor<96x64xf32>
    %g1 = tfm.linear %f1, %wg1 : tensor<?x64xf32>, tensor<96x64xf32>
    %u1 = tfm.linear %f1, %wu1 : tensor<?x64xf32>, tensor<96x64xf32>
    %s1 = tfm.silu %g1 : tensor<?x96xf32>
    %m1 = tfm.mul %s1, %u1 : tensor<?x96xf32>
    %wd1 = tfm.weight @"blk.1.ffn_down.weight" : tensor<64x96xf32>
    %d1 = tfm.linear %m1, %wd1 : tensor<?x96xf32>, tensor<64x96xf32>
    %x2 = tfm.add %r1, %d1 : tensor<?x64xf32>
    %wout = tfm.weight @"output_norm.weight" : tensor<64xf32>
    %last = tfm.last_row %x2 : tensor<?x64xf32>
    %hout = tfm.rms_norm %last, %wout {eps = 1.0e-05 : f64} : tensor<1x64xf32>, tensor<64xf32>
    %logits = tfm.linear %hout, %emb : tensor<1x64xf32>, tensor<100x64xf32>
    return %logits : tensor<1x100xf32>
  }
}
