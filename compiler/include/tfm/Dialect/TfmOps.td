//===- TfmOps.td - Ops of the tfm dialect ------------------*- tablegen -*-===//
//
// Three groups: leaf ops that name storage (weights, cache layers), compute
// ops whose semantics match KernelOp in tfm/Codegen/Program.h, and structure
// ops the pass pipeline introduces (fusion regions, kernel launches).
//
//===----------------------------------------------------------------------===//
#ifndef TFM_OPS_TD
#define TFM_OPS_TD

include "tfm/Dialect/TfmDialect.td"
include "mlir/IR/SymbolInterfaces.td"
include "mlir/Interfaces/ControlFlowInterfaces.td"
include "mlir/Interfaces/InferTypeOpInterface.td"

//===----------------------------------------------------------------------===//
// Leaf ops
//===----------------------------------------------------------------------===//

def Tfm_WeightOp : Tfm_Op<"weight", [Pure]> {
  let summary = "a tensor of the weight file, named as in the manifest";
  let description = [{
    The name refers to an entry of the module's `tfm.manifest`; the result
    type is the tensor's shape there.

    ```mlir
    %w = tfm.weight "blk.0.attn_q.weight" : tensor<768x768xf32>
    ```
  }];
  let arguments = (ins StrAttr:$name);
  let results = (outs Tfm_F32Tensor:$result);
  let assemblyFormat = "$name attr-dict `:` type($result)";
  let hasVerifier = 1;
}

def Tfm_KvCacheOp : Tfm_Op<"kv_cache", [Pure]> {
  let summary = "one layer's key or value cache, [contextLength, kvDim]";
  let description = [{
    Row p holds the key (or value) of the token at position p. `tfm.kv_store`
    writes the rows of the current call, `tfm.attention` reads rows up to the
    position of each query row.

    ```mlir
    %kc = tfm.kv_cache key layer 0 : tensor<1024x256xf32>
    ```
  }];
  let arguments = (ins Tfm_CacheKind:$kind, I64Attr:$layer);
  let results = (outs Tfm_F32Tensor:$result);
  let assemblyFormat = "$kind `layer` $layer attr-dict `:` type($result)";
  let hasVerifier = 1;
}

//===----------------------------------------------------------------------===//
// Compute ops
//===----------------------------------------------------------------------===//

def Tfm_EmbeddingOp : Tfm_Op<"embedding", [Pure]> {
  let summary = "rows of the embedding table selected by token ids";
  let description = [{
    `table` is [vocab, dim], `tokens` is [T] i32; the result is [T, dim].

    ```mlir
    %x = tfm.embedding %table, %tokens : tensor<32000x4096xf32>, tensor<?xi32> -> tensor<?x4096xf32>
    ```
  }];
  let arguments = (ins Tfm_F32Tensor:$table, Tfm_TokenTensor:$tokens);
  let results = (outs Tfm_F32Tensor:$result);
  let assemblyFormat = [{
    $table `,` $tokens attr-dict `:` type($table) `,` type($tokens) `->` type($result)
  }];
  let hasVerifier = 1;
}

def Tfm_RmsNormOp : Tfm_Op<"rms_norm", [Pure]> {
  let summary = "x / sqrt(mean(x^2) + eps) * w, per row";
  let description = [{
    ```mlir
    %h = tfm.rms_norm %x, %w {eps = 1.0e-05 : f64} : tensor<?x64xf32>, tensor<64xf32> -> tensor<?x64xf32>
    ```
  }];
  let arguments = (ins Tfm_F32Tensor:$input, Tfm_F32Tensor:$weight, F64Attr:$eps);
  let results = (outs Tfm_F32Tensor:$result);
  let assemblyFormat = [{
    $input `,` $weight attr-dict `:` type($input) `,` type($weight) `->` type($result)
  }];
  let hasVerifier = 1;
}

def Tfm_LayerNormOp : Tfm_Op<"layer_norm", [Pure]> {
  let summary = "(x - mean) / sqrt(var + eps) * w + b, per row";
  let description = [{
    Mean and biased variance (divided by the width) of each row, as
    PyTorch's LayerNorm computes them; `weight` and `bias` are [width].

    ```mlir
    %h = tfm.layer_norm %x, %w, %b {eps = 1.0e-05 : f64}
        : tensor<?x64xf32>, tensor<64xf32>, tensor<64xf32> -> tensor<?x64xf32>
    ```
  }];
  let arguments = (ins Tfm_F32Tensor:$input, Tfm_F32Tensor:$weight,
                       Tfm_F32Tensor:$bias, F64Attr:$eps);
  let results = (outs Tfm_F32Tensor:$result);
  let assemblyFormat = [{
    $input `,` $weight `,` $bias attr-dict `:` type($input) `,` type($weight)
    `,` type($bias) `->` type($result)
  }];
  let hasVerifier = 1;
}

def Tfm_LinearOp : Tfm_Op<"linear", [Pure]> {
  let summary = "x @ W^T (+ bias) with W in PyTorch layout [N, K]";
  let description = [{
    `input` is [T, K], `weight` is [N, K], the optional `bias` is [N]; the
    result is [T, N].

    ```mlir
    %q = tfm.linear %h, %wq : tensor<?x64xf32>, tensor<64x64xf32> -> tensor<?x64xf32>
    %p = tfm.linear %h, %wo, %bo : tensor<?x64xf32>, tensor<64x64xf32>, tensor<64xf32> -> tensor<?x64xf32>
    ```
  }];
  let arguments = (ins Tfm_F32Tensor:$input, Tfm_F32Tensor:$weight,
                       Optional<Tfm_F32Tensor>:$bias);
  let results = (outs Tfm_F32Tensor:$result);
  let assemblyFormat = [{
    $input `,` $weight (`,` $bias^)? attr-dict `:` type($input) `,` type($weight)
    (`,` type($bias)^)? `->` type($result)
  }];
  let hasVerifier = 1;
}

def Tfm_AddPositionsOp : Tfm_Op<"add_positions", [Pure]> {
  let summary = "adds each row's learned position embedding";
  let description = [{
    Row r of `input` (the token at absolute position r) gets row r of
    `table` ([positions, width]) added. GPT-2's learned absolute positions.

    ```mlir
    %y = tfm.add_positions %x, %wpe : tensor<?x64xf32>, tensor<256x64xf32> -> tensor<?x64xf32>
    ```
  }];
  let arguments = (ins Tfm_F32Tensor:$input, Tfm_F32Tensor:$table);
  let results = (outs Tfm_F32Tensor:$result);
  let assemblyFormat = [{
    $input `,` $table attr-dict `:` type($input) `,` type($table) `->` type($result)
  }];
  let hasVerifier = 1;
}

def Tfm_SliceColsOp : Tfm_Op<"slice_cols", [Pure]> {
  let summary = "columns begin .. begin+size-1 of every row";
  let description = [{
    Splits a fused projection: GPT-2's q, k and v are column ranges of one
    [T, 3*dim] result.

    ```mlir
    %k = tfm.slice_cols %qkv {begin = 64 : i64, size = 64 : i64} : tensor<?x192xf32> -> tensor<?x64xf32>
    ```
  }];
  let arguments = (ins Tfm_F32Tensor:$input, I64Attr:$begin, I64Attr:$size);
  let results = (outs Tfm_F32Tensor:$result);
  let assemblyFormat = "$input attr-dict `:` type($input) `->` type($result)";
  let hasVerifier = 1;
}

def Tfm_RopeOp : Tfm_Op<"rope", [Pure, SameOperandsAndResultType]> {
  let summary = "rotary position embedding on interleaved pairs";
  let description = [{
    Each head of `head_dim` columns rotates its pairs (2i, 2i+1) by the angle
    pos * theta^(-2i/head_dim), where pos is the row's position.

    ```mlir
    %r = tfm.rope %q {head_dim = 16 : i64, theta = 1.0e+04 : f64} : tensor<?x64xf32>
    ```
  }];
  let arguments = (ins Tfm_F32Tensor:$input, I64Attr:$head_dim, F64Attr:$theta);
  let results = (outs Tfm_F32Tensor:$result);
  let assemblyFormat = "$input attr-dict `:` type($result)";
  let hasVerifier = 1;
}

class Tfm_BinaryOp<string mnemonic, string what> :
    Tfm_Op<mnemonic, [Pure, SameOperandsAndResultType]> {
  let summary = "elementwise " # what;
  let description = [{
    ```mlir
    %c = tfm.}] # mnemonic # [{ %a, %b : tensor<?x64xf32>
    ```
  }];
  let arguments = (ins Tfm_F32Tensor:$lhs, Tfm_F32Tensor:$rhs);
  let results = (outs Tfm_F32Tensor:$result);
  let assemblyFormat = "$lhs `,` $rhs attr-dict `:` type($result)";
}

def Tfm_AddOp : Tfm_BinaryOp<"add", "sum">;
def Tfm_MulOp : Tfm_BinaryOp<"mul", "product">;

def Tfm_SiluOp : Tfm_Op<"silu", [Pure, SameOperandsAndResultType]> {
  let summary = "elementwise x * sigmoid(x)";
  let description = [{
    ```mlir
    %s = tfm.silu %g : tensor<?x172xf32>
    ```
  }];
  let arguments = (ins Tfm_F32Tensor:$input);
  let results = (outs Tfm_F32Tensor:$result);
  let assemblyFormat = "$input attr-dict `:` type($result)";
}

def Tfm_GeluOp : Tfm_Op<"gelu", [Pure, SameOperandsAndResultType]> {
  let summary = "elementwise GELU, exact or in its tanh approximation";
  let description = [{
    `approximate = true`: 0.5x(1 + tanh(sqrt(2/pi)(x + 0.044715x^3))), what
    Hugging Face calls "gelu_new" / "gelu_pytorch_tanh" (GPT-2).
    `approximate = false`: the exact 0.5x(1 + erf(x / sqrt(2))) ("gelu").

    ```mlir
    %g = tfm.gelu %u {approximate = true} : tensor<?x256xf32>
    ```
  }];
  let arguments = (ins Tfm_F32Tensor:$input, BoolAttr:$approximate);
  let results = (outs Tfm_F32Tensor:$result);
  let assemblyFormat = "$input attr-dict `:` type($result)";
}

def Tfm_AttentionOp : Tfm_Op<"attention",
    [MemoryEffects<[MemRead<Tfm_KvCacheResource>]>]> {
  let summary = "causal grouped-query attention against one layer's cache";
  let description = [{
    `query` is [T, n_heads*head_dim]; the caches are [contextLength,
    n_kv_heads*head_dim]. The row at position p attends to cache rows 0..p;
    head h uses kv head h / (n_heads / n_kv_heads). Scores are scaled by
    1/sqrt(head_dim). The rows of the current call must have been stored
    (`tfm.kv_store`) before.

    ```mlir
    %a = tfm.attention %q, %kc, %vc {head_dim = 16 : i64, n_heads = 4 : i64, n_kv_heads = 2 : i64}
        : tensor<?x64xf32>, tensor<256x32xf32>, tensor<256x32xf32> -> tensor<?x64xf32>
    ```
  }];
  let arguments = (ins Tfm_F32Tensor:$query, Tfm_F32Tensor:$key_cache,
                       Tfm_F32Tensor:$value_cache, I64Attr:$n_heads,
                       I64Attr:$n_kv_heads, I64Attr:$head_dim);
  let results = (outs Tfm_F32Tensor:$result);
  let assemblyFormat = [{
    $query `,` $key_cache `,` $value_cache attr-dict `:` type($query) `,`
    type($key_cache) `,` type($value_cache) `->` type($result)
  }];
  let hasVerifier = 1;
}

def Tfm_LastRowOp : Tfm_Op<"last_row", [Pure]> {
  let summary = "the row of the call's last token, [T, N] -> [1, N]";
  let description = [{
    ```mlir
    %l = tfm.last_row %x : tensor<?x64xf32> -> tensor<1x64xf32>
    ```
  }];
  let arguments = (ins Tfm_F32Tensor:$input);
  let results = (outs Tfm_F32Tensor:$result);
  let assemblyFormat = "$input attr-dict `:` type($input) `->` type($result)";
  let hasVerifier = 1;
}

def Tfm_KvStoreOp : Tfm_Op<"kv_store",
    [MemoryEffects<[MemWrite<Tfm_KvCacheResource>]>]> {
  let summary = "writes the call's rows into one layer's cache";
  let description = [{
    Row r of `value` (position r) goes to row r of `cache`.

    ```mlir
    tfm.kv_store %k, %kc : tensor<?x32xf32>, tensor<256x32xf32>
    ```
  }];
  let arguments = (ins Tfm_F32Tensor:$value, Tfm_F32Tensor:$cache);
  let assemblyFormat = "$value `,` $cache attr-dict `:` type($value) `,` type($cache)";
  let hasVerifier = 1;
}

//===----------------------------------------------------------------------===//
// Structure ops
//===----------------------------------------------------------------------===//

def Tfm_FusionOp : Tfm_Op<"fusion", [RecursiveMemoryEffects, SingleBlock]> {
  let summary = "ops that will become one kernel";
  let description = [{
    Like IREE's dispatch regions: the body may use any value defined above;
    `tfm.yield` names the values used after the region. Outlining turns each
    fusion into a private kernel function and a `tfm.launch`.

    ```mlir
    %q = tfm.fusion -> tensor<?x64xf32> {
      %h = tfm.rms_norm %x, %w {eps = 1.0e-05 : f64} : tensor<?x64xf32>, tensor<64xf32> -> tensor<?x64xf32>
      %l = tfm.linear %h, %wq : tensor<?x64xf32>, tensor<64x64xf32> -> tensor<?x64xf32>
      tfm.yield %l : tensor<?x64xf32>
    }
    ```
  }];
  let results = (outs Variadic<Tfm_AnyTensor>:$results);
  let regions = (region SizedRegion<1>:$body);
  let assemblyFormat = "(`->` type($results)^)? attr-dict-with-keyword $body";
  let hasVerifier = 1;
  let extraClassDeclaration = [{
    ::tfm::YieldOp getYield();
  }];
}

def Tfm_YieldOp : Tfm_Op<"yield",
    [Pure, Terminator, ReturnLike, HasParent<"FusionOp">]> {
  let summary = "the values a fusion region gives back";
  let description = [{
    ```mlir
    tfm.yield %a, %b : tensor<?x64xf32>, tensor<?x64xf32>
    ```
  }];
  let arguments = (ins Variadic<Tfm_AnyTensor>:$values);
  let assemblyFormat = "($values^ `:` type($values))? attr-dict";
}

def Tfm_LaunchOp : Tfm_Op<"launch",
    [DeclareOpInterfaceMethods<SymbolUserOpInterface>]> {
  let summary = "runs an outlined kernel function";
  let description = [{
    Arguments and results match the kernel's function type. A kernel writes
    the cache arguments it stores into, so a launch has side effects.
    After memory planning, `arena_offsets` gives for each result its byte
    offset in the entry function's arena, or -1 for a result that leaves the
    function (the logits).

    ```mlir
    %q = tfm.launch @prefill_attn_in(%x, %wn, %wq, %wk, %wv, %kc, %vc) {arena_offsets = array<i64: 0>}
        : (tensor<?x64xf32>, ...) -> tensor<?x64xf32>
    ```
  }];
  let arguments = (ins FlatSymbolRefAttr:$kernel, Variadic<Tfm_AnyTensor>:$args,
                       OptionalAttr<DenseI64ArrayAttr>:$arena_offsets);
  let results = (outs Variadic<Tfm_AnyTensor>:$results);
  let assemblyFormat = [{
    $kernel `(` $args `)` attr-dict `:` functional-type($args, $results)
  }];
  let hasVerifier = 1;
}

#endif // TFM_OPS_TD
