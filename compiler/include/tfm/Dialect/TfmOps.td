//===- TfmOps.td - Ops of the tfm dialect ------------------*- tablegen -*-===//
//
// Four groups: module-level declarations of storage (weights, cache layers),
// the ops that name that storage inside a function, the kernel ops (what a
// kernel computes; each has a record in compiler/lib/Kernels/OpRegistry.cpp),
// and the structure ops the pipeline introduces (fusion regions, launches).
//
//===----------------------------------------------------------------------===//
#ifndef TFM_OPS_TD
#define TFM_OPS_TD

include "tfm/Dialect/TfmDialect.td"
include "mlir/IR/SymbolInterfaces.td"
include "mlir/Interfaces/ControlFlowInterfaces.td"
include "mlir/Interfaces/InferTypeOpInterface.td"

//===----------------------------------------------------------------------===//
// Storage declarations
//===----------------------------------------------------------------------===//

def Tfm_WeightDeclOp : Tfm_Op<"weight_decl", [Symbol, HasParent<"::mlir::ModuleOp">]> {
  let summary = "a tensor of the weight file";
  let description = [{
    One tensor the compiled library binds, named as llama.cpp and GGUF name
    it. The declarations in module order are the manifest: the runtime hands
    the library one pointer per declaration, in this order.

    ```mlir
    tfm.weight_decl @"blk.0.attn_q.weight" : tensor<768x768xf32>
    ```
  }];
  let arguments = (ins SymbolNameAttr:$sym_name, TypeAttrOf<Tfm_Weight>:$type);
  let assemblyFormat = "$sym_name attr-dict `:` $type";
}

def Tfm_CacheDeclOp : Tfm_Op<"cache_decl", [Symbol, HasParent<"::mlir::ModuleOp">]> {
  let summary = "one layer's key or value cache";
  let description = [{
    A buffer of `[context, kv_dim]` f32 that lives as long as a sequence:
    row p holds the key (or value) of the token at position p. The memref
    layout says how it lies in memory: the identity (rows contiguous) or
    `strided<[1, context]>` (each dimension contiguous across positions),
    set by `--tfm-choose-cache-layouts`. Memory planning sets `offset`, the
    byte offset of the buffer in the KV-cache block the runtime allocates.

    A cache that only sliding-window attention reads may slide
    (`--tfm-slide-window-caches`): `window` is the attention's, the buffer
    holds the last `window` - 1 positions and a call's rows, and its layout's
    offset is dynamic (`offset: ?`), as the position of its first row moves
    with the sequence. Memory planning sets `base`, the byte offset in the
    block of the int64 that holds that position; the generated driver moves
    the rows still in the window to the front when a call would pass the
    end.

    A `source` cache is an encoder-decoder's cross-attention cache (its kind;
    the others are self-attention caches): row p holds the key (or value)
    of the source's token p, as the encode entry computes them from the
    encoder's output, once per source; the decoder's entries read its first
    source-length rows. Its `base` is the byte offset of the int64 that
    holds that length, which the generated encode writes.

    ```mlir
    tfm.cache_decl @"blk.0.key" offset 0 : memref<1024x768xf32, strided<[1, 1024]>>
    tfm.cache_decl @"blk.1.key" offset 3145728 window 256 base 4194304
        : memref<383x768xf32, strided<[1, 383], offset: ?>>
    tfm.cache_decl @"blk.0.cross_key" source offset 4194368 base 4456512
        : memref<512x128xf32>
    ```
  }];
  let arguments = (ins SymbolNameAttr:$sym_name, TypeAttrOf<Tfm_CacheBuffer>:$type,
                       UnitAttr:$source,
                       OptionalAttr<Tfm_NonNegativeI64Attr>:$offset,
                       OptionalAttr<Tfm_PositiveI64Attr>:$window,
                       OptionalAttr<Tfm_NonNegativeI64Attr>:$base);
  let assemblyFormat = [{
    $sym_name (`source` $source^)? (`offset` $offset^)? (`window` $window^)? (`base` $base^)?
    attr-dict `:` $type
  }];
  let hasVerifier = 1;
}

//===----------------------------------------------------------------------===//
// Storage in a function
//===----------------------------------------------------------------------===//

def Tfm_WeightOp : Tfm_Op<"weight",
    [Pure, DeclareOpInterfaceMethods<SymbolUserOpInterface>]> {
  let summary = "the value of a declared weight tensor";
  let description = [{
    The result type is the declaration's; the verifier checks that the
    symbol is a `tfm.weight_decl` of this module.

    ```mlir
    %w = tfm.weight @"blk.0.attn_q.weight" : tensor<768x768xf32>
    ```
  }];
  let arguments = (ins FlatSymbolRefAttr:$name);
  let results = (outs Tfm_Weight:$result);
  let assemblyFormat = "$name attr-dict `:` type($result)";
}

def Tfm_KvCacheOp : Tfm_Op<"kv_cache",
    [Pure, DeclareOpInterfaceMethods<SymbolUserOpInterface>]> {
  let summary = "a reference to a declared cache buffer";
  let description = [{
    Like `memref.get_global`, it reads and writes nothing itself: the ops
    that take the buffer say what they do with it (`tfm.kv_store` writes,
    `tfm.attention` reads), so no pass reorders or merges a read with a
    write. The result type is the declaration's.

    ```mlir
    %kc = tfm.kv_cache @"blk.0.key" : memref<1024x768xf32, strided<[1, 1024]>>
    ```
  }];
  let arguments = (ins FlatSymbolRefAttr:$cache);
  let results = (outs Tfm_CacheBuffer:$result);
  let assemblyFormat = "$cache attr-dict `:` type($result)";
}

//===----------------------------------------------------------------------===//
// Kernel ops
//===----------------------------------------------------------------------===//

def Tfm_EmbeddingOp : Tfm_KernelOp<"embedding", [Pure, Tfm_FusionRoot, InferTypeOpAdaptor]> {
  let summary = "rows of the embedding table selected by token ids";
  let description = [{
    `table` is [vocab, dim], `tokens` is [T] i32; the result is [T, dim],
    multiplied by `scale` (the 2017 Transformer scales by sqrt(dim); the
    default 1 is not printed). An id outside the table reads its nearest row
    (the runtime refuses such ids before any call).

    ```mlir
    %x = tfm.embedding %table, %tokens : tensor<32000x4096xf32>, tensor<?xi32>
    %s = tfm.embedding %table, %tokens {scale = 22.627416997969522 : f64}
        : tensor<37000x512xf32>, tensor<?xi32>
    ```
  }];
  let arguments = (ins Tfm_Matrix:$table, Tfm_Tokens:$tokens,
                       DefaultValuedAttr<Tfm_PositiveF64Attr, "1.0">:$scale);
  let results = (outs Tfm_Rows:$result);
  let assemblyFormat = "$table `,` $tokens attr-dict `:` type($table) `,` type($tokens)";
}

def Tfm_RmsNormOp : Tfm_KernelOp<"rms_norm",
    [Pure, Tfm_RowNormalization, AllTypesMatch<["input", "result"]>]> {
  let summary = "x / sqrt(mean(x^2) + eps) * (w + weight_offset) * scale, per row";
  let description = [{
    `weight_offset` is 1 for Gemma's norms as Hugging Face stores them (a
    gain of 1 + w), else 0. `scale` multiplies the result: T5's final norm
    before a tied head (d_model^-0.5).

    ```mlir
    %h = tfm.rms_norm %x, %w {eps = 1.0e-05 : f64} : tensor<?x64xf32>, tensor<64xf32>
    %g = tfm.rms_norm %x, %w {eps = 1.0e-06 : f64, weight_offset = 1.0 : f64}
        : tensor<?x64xf32>, tensor<64xf32>
    %t = tfm.rms_norm %x, %w {eps = 1.0e-06 : f64, scale = 0.125 : f64}
        : tensor<?x64xf32>, tensor<64xf32>
    ```
  }];
  let arguments = (ins Tfm_Rows:$input, Tfm_Vector:$weight, Tfm_PositiveF64Attr:$eps,
                       DefaultValuedAttr<F64Attr, "0.0">:$weight_offset,
                       DefaultValuedAttr<F64Attr, "1.0">:$scale);
  let results = (outs Tfm_Rows:$result);
  let assemblyFormat = "$input `,` $weight attr-dict `:` type($input) `,` type($weight)";
  let hasVerifier = 1;
}

def Tfm_LayerNormOp : Tfm_KernelOp<"layer_norm",
    [Pure, Tfm_RowNormalization, AllTypesMatch<["input", "result"]>]> {
  let summary = "(x - mean) / sqrt(var + eps) * w (+ b), per row";
  let description = [{
    Mean and biased variance (divided by the width) of each row, as
    PyTorch's LayerNorm computes them; `weight` and the optional `bias` are
    [width] (MPT's LayerNorm has no bias).

    ```mlir
    %h = tfm.layer_norm %x, %w, %b {eps = 1.0e-05 : f64}
        : tensor<?x64xf32>, tensor<64xf32>, tensor<64xf32>
    %n = tfm.layer_norm %x, %w {eps = 1.0e-05 : f64} : tensor<?x64xf32>, tensor<64xf32>
    ```
  }];
  let arguments = (ins Tfm_Rows:$input, Tfm_Vector:$weight, Optional<Tfm_Vector>:$bias,
                       Tfm_PositiveF64Attr:$eps);
  let results = (outs Tfm_Rows:$result);
  let assemblyFormat = [{
    $input `,` $weight (`,` $bias^)? attr-dict `:` type($input) `,` type($weight)
    (`,` type($bias)^)?
  }];
  let hasVerifier = 1;
}

def Tfm_LinearOp : Tfm_KernelOp<"linear", [Pure, Tfm_FusionRoot, InferTypeOpAdaptor]> {
  let summary = "x @ W^T (+ bias) with W in PyTorch layout [N, K]";
  let description = [{
    `input` is [T, K], `weight` is [N, K], the optional `bias` is [N]; the
    result is [T, N].

    `activation_block` is the algorithm. 0: the input is read as it is, in
    f32, and each weight decoded to f32 (exact up to f32 rounding). 32:
    each row of the input is first quantized to 8-bit integers in blocks of
    32 values, each with an f32 scale (its largest magnitude / 127, as
    llama.cpp's q8_0), and a block-format weight's integer levels are
    multiplied with those bytes in integer dot products (AVX-512 VNNI where
    the target has it; AMX tiles for many rows on a target with amx_int8,
    the levels then taken less their zero point, as signed bytes),
    then scaled. Faster, and no longer exact: the
    rounding of the input adds an error of about 1/254 of each block's
    largest value. Only for weights in a block format. 256, for a k-quant
    weight (q4_k, q5_k, q6_k), whose blocks are 256 values: the same with
    one scale per 256 values, as llama.cpp's q8_K, so that a block's
    integer sums need not be scaled apart (one row, on a target without
    VNNI, sums them in integers, times the weight's integer sub-block
    scales); the error is that of each 256 values' largest.

    `bf16_input` rounds each input value to bf16 (to nearest even) before
    the product, for a bf16 weight: each product of two bf16 values is then
    exact in f32, as AMX's bf16 tiles (tdpbf16ps, for many rows on a target
    with amx_bf16) and AVX-512 BF16's dot products compute it, and only the
    sum is rounded. Faster on those targets, and no longer exact: the input
    loses all but 8 bits of its significand, a relative error of up to
    2^-9 per value.

    ```mlir
    %q = tfm.linear %h, %wq : tensor<?x64xf32>, tensor<64x64xf32>
    %p = tfm.linear %h, %wo, %bo : tensor<?x64xf32>, tensor<64x64xf32>, tensor<64xf32>
    %i = tfm.linear %h, %w8 {activation_block = 32 : i64}
        : tensor<?x64xf32>, tensor<64x64x!tfm.blocks<"q8_0">>
    %k = tfm.linear %h256, %w4 {activation_block = 256 : i64}
        : tensor<1x256xf32>, tensor<64x256x!tfm.blocks<"q4_k">>
    %j = tfm.linear %h, %wb {bf16_input = true} : tensor<?x64xf32>, tensor<64x64xbf16>
    ```
  }];
  let arguments = (ins Tfm_Rows:$input, Tfm_Matrix:$weight, Optional<Tfm_Vector>:$bias,
                       DefaultValuedAttr<ConfinedAttr<I64Attr, [IntNonNegative]>, "0">:
                           $activation_block,
                       DefaultValuedAttr<BoolAttr, "false">:$bf16_input);
  let results = (outs Tfm_Rows:$result);
  let assemblyFormat = [{
    $input `,` $weight (`,` $bias^)? attr-dict `:` type($input) `,` type($weight)
    (`,` type($bias)^)?
  }];
  let hasVerifier = 1;
}

def Tfm_AddPositionsOp : Tfm_KernelOp<"add_positions",
    [Pure, Tfm_Epilogue, AllTypesMatch<["input", "result"]>]> {
  let summary = "adds each row's learned position embedding (and token type)";
  let description = [{
    Row r of `input` (the token at absolute position r) gets row
    r + `offset` of `table` ([positions, width]) added: GPT-2's and BERT's
    learned absolute positions; RoBERTa's start past its padding id
    (offset pad + 1). With `token_types` ([types, width], BERT's segment
    table), its row 0 is added too: every token is of the first type, one
    text, as llama.cpp's BERT has it.

    ```mlir
    %y = tfm.add_positions %x, %wpe : tensor<?x64xf32>, tensor<256x64xf32>
    %z = tfm.add_positions %x, %wpe, %types {offset = 2 : i64}
        : tensor<?x64xf32>, tensor<258x64xf32>, tensor<1x64xf32>
    ```
  }];
  let arguments = (ins Tfm_Rows:$input, Tfm_Matrix:$table, Optional<Tfm_Matrix>:$token_types,
                       DefaultValuedAttr<ConfinedAttr<I64Attr, [IntNonNegative]>, "0">:$offset);
  let results = (outs Tfm_Rows:$result);
  let assemblyFormat = [{
    $input `,` $table (`,` $token_types^)? attr-dict `:` type($input) `,` type($table)
    (`,` type($token_types)^)?
  }];
  let hasVerifier = 1;
}

def Tfm_AddSinusoidOp : Tfm_KernelOp<"add_sinusoid",
    [Pure, Tfm_Epilogue, AllTypesMatch<["input", "result"]>]> {
  let summary = "adds the 2017 Transformer's sinusoidal position encoding";
  let description = [{
    Row r (the token at absolute position r) gets PE(r, 2i) =
    sin(r / base^(2i/width)) and PE(r, 2i+1) = cos(r / base^(2i/width))
    added; computed in the kernel, so it has no table and no length limit.
    With `halves` (Marian's layout), PE(r, i) = sin(r / base^(2i/width)) and
    PE(r, width/2 + i) = cos(r / base^(2i/width)) for i < width/2.

    ```mlir
    %y = tfm.add_sinusoid %x {base = 1.0e+04 : f64} : tensor<?x512xf32>
    %z = tfm.add_sinusoid %x {base = 1.0e+04 : f64, halves = true} : tensor<?x512xf32>
    ```
  }];
  let arguments = (ins Tfm_Rows:$input, Tfm_PositiveF64Attr:$base,
                       DefaultValuedAttr<BoolAttr, "false">:$halves);
  let results = (outs Tfm_Rows:$result);
  let assemblyFormat = "$input attr-dict `:` type($input)";
}

def Tfm_SliceColsOp : Tfm_KernelOp<"slice_cols", [Pure, Tfm_Epilogue, InferTypeOpAdaptor]> {
  let summary = "columns begin .. begin+size-1 of every row";
  let description = [{
    Splits a fused projection: GPT-2's q, k and v are column ranges of one
    [T, 3*dim] result.

    ```mlir
    %k = tfm.slice_cols %qkv begin 64 size 64 : tensor<?x192xf32>
    ```
  }];
  let arguments = (ins Tfm_Rows:$input, Tfm_NonNegativeI64Attr:$begin,
                       Tfm_PositiveI64Attr:$size);
  let results = (outs Tfm_Rows:$result);
  // The sizes are spelled out rather than left to attr-dict: result type
  // inference reads them while the op is parsed, before attr-dict's
  // attributes become the op's properties.
  let assemblyFormat = "$input `begin` $begin `size` $size attr-dict `:` type($input)";
}

def Tfm_HeadRmsNormOp : Tfm_KernelOp<"head_rms_norm",
    [Pure, Tfm_Epilogue, AllTypesMatch<["input", "result"]>]> {
  let summary = "RMSNorm of each head of a row, with one weight shared by the heads";
  let description = [{
    Each head of `head_dim` columns becomes x / sqrt(mean(x^2) + eps) *
    (w + weight_offset), its mean over the head's own columns; `weight` is
    [head_dim]. Qwen 3 and Gemma 3 normalise q and k this way before RoPE.
    A head's statistic is a table of (head, row), computed once per call.

    ```mlir
    %n = tfm.head_rms_norm %q, %w {eps = 1.0e-06 : f64, head_dim = 16 : i64}
        : tensor<?x64xf32>, tensor<16xf32>
    ```
  }];
  let arguments = (ins Tfm_Rows:$input, Tfm_Vector:$weight, Tfm_PositiveI64Attr:$head_dim,
                       Tfm_PositiveF64Attr:$eps, DefaultValuedAttr<F64Attr, "0.0">:$weight_offset);
  let results = (outs Tfm_Rows:$result);
  let assemblyFormat = "$input `,` $weight attr-dict `:` type($input) `,` type($weight)";
  let hasVerifier = 1;
}

def Tfm_RopeOp : Tfm_KernelOp<"rope", [Pure, Tfm_Epilogue, AllTypesMatch<["input", "result"]>]> {
  let summary = "rotary position embedding";
  let description = [{
    Each head of `head_dim` columns rotates the pairs of its first
    `rotary_dim` columns (all of them, unless the rotary embedding is
    partial) by the angle (pos / position_scale) * theta^(-2i/rotary_dim),
    where pos is the row's position; the other columns pass through. Pair i
    is the columns (2i, 2i+1) when `interleaved` (GPT-J, GGUF Llama), else
    (i, i + rotary_dim/2) (GPT-NeoX, Falcon, Hugging Face's rotate_half).
    `freq_factors`, when given (one per pair), divide each pair's angle:
    Llama 3's scaling of the long wavelengths, llama.cpp's rope_freqs,
    LongRoPE's short or long factors. `magnitude` multiplies the cosine and
    the sine, so the rotated columns (LongRoPE's attention factor; 1: a
    rotation).

    ```mlir
    %r = tfm.rope %q {head_dim = 16 : i64, interleaved = true, position_scale = 1.0 : f64,
                      rotary_dim = 16 : i64, theta = 1.0e+04 : f64} : tensor<?x64xf32>
    %s = tfm.rope %q {freq_factors = array<f64: 1.0, 1.5, 4.0, 9.0>, head_dim = 16 : i64,
                      interleaved = false, magnitude = 1.19 : f64, position_scale = 1.0 : f64,
                      rotary_dim = 8 : i64, theta = 1.0e+04 : f64} : tensor<?x64xf32>
    ```
  }];
  let arguments = (ins Tfm_Rows:$input, Tfm_PositiveI64Attr:$head_dim,
                       Tfm_PositiveI64Attr:$rotary_dim, Tfm_PositiveF64Attr:$theta,
                       BoolAttr:$interleaved, Tfm_PositiveF64Attr:$position_scale,
                       DefaultValuedAttr<DenseF64ArrayAttr, "{}">:$freq_factors,
                       DefaultValuedAttr<F64Attr, "1.0">:$magnitude);
  let results = (outs Tfm_Rows:$result);
  let assemblyFormat = "$input attr-dict `:` type($input)";
  let hasVerifier = 1;
}

class Tfm_BinaryOp<string mnemonic, string what> :
    Tfm_KernelOp<mnemonic, [Pure, Tfm_Epilogue, AllTypesMatch<["lhs", "rhs", "result"]>]> {
  let summary = "elementwise " # what;
  let description = [{
    ```mlir
    %c = tfm.}] # mnemonic # [{ %a, %b : tensor<?x64xf32>
    ```
  }];
  let arguments = (ins Tfm_Rows:$lhs, Tfm_Rows:$rhs);
  let results = (outs Tfm_Rows:$result);
  let assemblyFormat = "$lhs `,` $rhs attr-dict `:` type($result)";
}

def Tfm_AddOp : Tfm_BinaryOp<"add", "sum">;
def Tfm_MulOp : Tfm_BinaryOp<"mul", "product">;

def Tfm_SiluOp : Tfm_KernelOp<"silu", [Pure, Tfm_Epilogue, AllTypesMatch<["input", "result"]>]> {
  let summary = "elementwise x * sigmoid(x)";
  let description = [{
    ```mlir
    %s = tfm.silu %g : tensor<?x172xf32>
    ```
  }];
  let arguments = (ins Tfm_Rows:$input);
  let results = (outs Tfm_Rows:$result);
  let assemblyFormat = "$input attr-dict `:` type($input)";
}

def Tfm_ReluOp : Tfm_KernelOp<"relu", [Pure, Tfm_Epilogue, AllTypesMatch<["input", "result"]>]> {
  let summary = "elementwise max(x, 0)";
  let description = [{
    ```mlir
    %r = tfm.relu %u : tensor<?x2048xf32>
    ```
  }];
  let arguments = (ins Tfm_Rows:$input);
  let results = (outs Tfm_Rows:$result);
  let assemblyFormat = "$input attr-dict `:` type($input)";
}

def Tfm_ClampOp : Tfm_KernelOp<"clamp", [Pure, Tfm_Epilogue, AllTypesMatch<["input", "result"]>]> {
  let summary = "elementwise clamp to [-limit, limit]";
  let description = [{
    MPT's clip_qkv: the fused q/k/v projection is clamped before the heads
    split.

    ```mlir
    %c = tfm.clamp %qkv {limit = 8.0 : f64} : tensor<?x192xf32>
    ```
  }];
  let arguments = (ins Tfm_Rows:$input, Tfm_PositiveF64Attr:$limit);
  let results = (outs Tfm_Rows:$result);
  let assemblyFormat = "$input attr-dict `:` type($input)";
}

def Tfm_SoftcapOp : Tfm_KernelOp<"softcap", [Pure, Tfm_Epilogue, AllTypesMatch<["input", "result"]>]> {
  let summary = "elementwise cap * tanh(x / cap)";
  let description = [{
    Gemma 2's final logit soft-capping: values pass nearly unchanged well
    inside (-cap, cap) and approach it smoothly beyond.

    ```mlir
    %l = tfm.softcap %logits {cap = 30.0 : f64} : tensor<?x256xf32>
    ```
  }];
  let arguments = (ins Tfm_Rows:$input, Tfm_PositiveF64Attr:$cap);
  let results = (outs Tfm_Rows:$result);
  let assemblyFormat = "$input attr-dict `:` type($input)";
}

def Tfm_GeluOp : Tfm_KernelOp<"gelu", [Pure, Tfm_Epilogue, AllTypesMatch<["input", "result"]>]> {
  let summary = "elementwise GELU, exact or in its tanh approximation";
  let description = [{
    `approximate = true`: 0.5x(1 + tanh(sqrt(2/pi)(x + 0.044715x^3))), what
    Hugging Face calls "gelu_new" / "gelu_pytorch_tanh" (GPT-2).
    `approximate = false`: the exact 0.5x(1 + erf(x / sqrt(2))) ("gelu").

    ```mlir
    %g = tfm.gelu %u {approximate = true} : tensor<?x256xf32>
    ```
  }];
  let arguments = (ins Tfm_Rows:$input, BoolAttr:$approximate);
  let results = (outs Tfm_Rows:$result);
  let assemblyFormat = "$input attr-dict `:` type($input)";
}

def Tfm_AttentionOp : Tfm_KernelOp<"attention", [AllTypesMatch<["query", "result"]>]> {
  let summary = "grouped-query attention against one layer's cache";
  let description = [{
    `query` is [T, n_heads*head_dim]; the caches are [context,
    n_kv_heads*head_dim] buffers, which it reads. The row at position p
    attends to cache rows 0..p (`causal`, a decoder's), or, not causal, to
    every row the call's cache window holds, 0 .. the call's last position
    (an encoder's, whose call holds the whole text); head h uses kv head
    h / (n_heads / n_kv_heads). Scores are scaled by 1/sqrt(head_dim). With ALiBi,
    `alibi_slopes` holds one constant per query head, and the score of
    position i for key j is lowered by slope * (i - j) after scaling; the
    bias is computed from the indices, never stored. The rows of the current
    call must have been stored (`tfm.kv_store`) before.

    `key_tile` is the algorithm. 0: every score of a row at once, then one
    softmax over them. N > 0: FlashAttention's, keys in tiles of N: each
    tile's scores, their maximum, the sum of their exponentials and the
    values they weight are computed on their own, and merged tile by tile
    with an online softmax (the running sums rescaled by exp(old max - new
    max)), so no row of scores is ever held whole; single-row (decode)
    kernels may compute the tiles in parallel and merge after
    (flash-decoding). Causal masking is by index within each tile.

    `window` > 0 is sliding-window attention (Mistral, Gemma): the row at
    position p attends to cache rows p - window + 1 .. p only, masked by
    index as causality is, so a row reduces over at most `window` keys.
    With `relative_bias` ([buckets, n_heads], T5's table), the score of
    query position i for key j gets the bias of head h and j - i's bucket:
    distances below buckets / 4 (bidirectional, not causal: the sign takes
    half the buckets) or buckets / 2 (causal) have one each, longer ones
    share logarithmically wider buckets up to `relative_max_distance`, past
    which all fall in the last (transformers' _relative_position_bucket).
    The buckets are a table of the compiled code; the bias is added after
    scaling, as ALiBi's.

    `scale` > 0 replaces 1/sqrt(head_dim) (Gemma's query_pre_attn_scalar);
    `softcap` > 0 caps each scaled score s at softcap * tanh(s / softcap)
    (Gemma 2), before ALiBi's bias and the mask.

    ```mlir
    %a = tfm.attention %q, %kc, %vc {head_dim = 16 : i64, n_heads = 4 : i64, n_kv_heads = 2 : i64}
        : tensor<?x64xf32>, memref<256x32xf32, strided<[1, 256]>>, memref<256x32xf32>
    %b = tfm.attention %q, %kc, %vc {alibi_slopes = array<f32: 0.25, 0.0625, 0.015625, 0.00390625>,
                                     head_dim = 16 : i64, n_heads = 4 : i64, n_kv_heads = 4 : i64}
        : tensor<?x64xf32>, memref<256x64xf32, strided<[1, 256]>>, memref<256x64xf32>
    %c = tfm.attention %q, %kc, %vc {head_dim = 16 : i64, key_tile = 64 : i64, n_heads = 4 : i64,
                                     n_kv_heads = 2 : i64}
        : tensor<?x64xf32>, memref<256x32xf32, strided<[1, 256]>>, memref<256x32xf32>
    %d = tfm.attention %q, %kc, %vc {head_dim = 16 : i64, n_heads = 4 : i64, n_kv_heads = 2 : i64,
                                     window = 64 : i64}
        : tensor<?x64xf32>, memref<256x32xf32, strided<[1, 256]>>, memref<256x32xf32>
    %e = tfm.attention %q, %kc, %vc {causal = false, head_dim = 16 : i64, n_heads = 4 : i64,
                                     n_kv_heads = 4 : i64}
        : tensor<?x64xf32>, memref<256x64xf32, strided<[1, 256]>>, memref<256x64xf32>
    ```
  }];
  let arguments = (ins Tfm_Rows:$query,
                       Arg<Tfm_CacheBuffer, "the layer's keys", [MemRead]>:$key_cache,
                       Arg<Tfm_CacheBuffer, "the layer's values", [MemRead]>:$value_cache,
                       Optional<Tfm_Matrix>:$relative_bias,
                       Tfm_PositiveI64Attr:$n_heads, Tfm_PositiveI64Attr:$n_kv_heads,
                       Tfm_PositiveI64Attr:$head_dim,
                       DefaultValuedAttr<DenseF32ArrayAttr, "{}">:$alibi_slopes,
                       DefaultValuedAttr<ConfinedAttr<I64Attr, [IntNonNegative]>, "0">:$key_tile,
                       DefaultValuedAttr<ConfinedAttr<I64Attr, [IntNonNegative]>, "0">:$window,
                       DefaultValuedAttr<F64Attr, "0.0">:$scale,
                       DefaultValuedAttr<F64Attr, "0.0">:$softcap,
                       DefaultValuedAttr<BoolAttr, "true">:$causal,
                       DefaultValuedAttr<ConfinedAttr<I64Attr, [IntNonNegative]>, "0">:
                           $relative_max_distance);
  let results = (outs Tfm_Rows:$result);
  let assemblyFormat = [{
    $query `,` $key_cache `,` $value_cache (`,` $relative_bias^)? attr-dict `:` type($query)
    `,` type($key_cache) `,` type($value_cache) (`,` type($relative_bias)^)?
  }];
  let hasVerifier = 1;
}

def Tfm_LastRowOp : Tfm_KernelOp<"last_row", [Pure, InferTypeOpAdaptor]> {
  let summary = "the row of the call's last token, [T, N] -> [1, N]";
  let description = [{
    ```mlir
    %l = tfm.last_row %x : tensor<?x64xf32>
    ```
  }];
  let arguments = (ins Tfm_Rows:$input);
  let results = (outs Tfm_Rows:$result);
  let assemblyFormat = "$input attr-dict `:` type($input)";
}

//===----------------------------------------------------------------------===//
// Cache writes
//===----------------------------------------------------------------------===//

def Tfm_KvStoreOp : Tfm_Op<"kv_store", [Tfm_Epilogue]> {
  let summary = "writes the call's rows into one layer's cache";
  let description = [{
    Row r of `value` (position r) goes to row r of `cache`. A kernel that
    holds a store has the cache as an argument it writes (an output of the
    compiled kernel), so a store is part of a kernel without being a kernel
    op of its own.

    ```mlir
    tfm.kv_store %k, %kc : tensor<?x32xf32>, memref<256x32xf32, strided<[1, 256]>>
    ```
  }];
  let arguments = (ins Tfm_Rows:$value,
                       Arg<Tfm_CacheBuffer, "the layer's cache", [MemWrite]>:$cache);
  let assemblyFormat = "$value `,` $cache attr-dict `:` type($value) `,` type($cache)";
  let hasVerifier = 1;
}

//===----------------------------------------------------------------------===//
// Structure ops
//===----------------------------------------------------------------------===//

def Tfm_FusionOp : Tfm_Op<"fusion",
    [RecursiveMemoryEffects, SingleBlockImplicitTerminator<"YieldOp">]> {
  let summary = "ops that will become one kernel";
  let description = [{
    Like IREE's dispatch regions: the body may use any value defined above;
    `tfm.yield` names the values used after the region. Outlining turns each
    fusion into a private kernel function and a `tfm.launch`.

    ```mlir
    %q = tfm.fusion -> tensor<?x64xf32> {
      %h = tfm.rms_norm %x, %w {eps = 1.0e-05 : f64} : tensor<?x64xf32>, tensor<64xf32>
      %l = tfm.linear %h, %wq : tensor<?x64xf32>, tensor<64x64xf32>
      tfm.yield %l : tensor<?x64xf32>
    }
    ```
  }];
  let results = (outs Variadic<Tfm_Rows>:$results);
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
  let arguments = (ins Variadic<Tfm_Rows>:$values);
  let builders = [OpBuilder<(ins), [{ build($_builder, $_state, ::mlir::ValueRange()); }]>];
  let assemblyFormat = "($values^ `:` type($values))? attr-dict";
}

def Tfm_LaunchOp : Tfm_Op<"launch",
    [DeclareOpInterfaceMethods<SymbolUserOpInterface>]> {
  let summary = "runs an outlined kernel function";
  let description = [{
    Arguments and results match the kernel's function type. A kernel writes
    the cache buffers it stores into, so a launch has side effects.
    After memory planning, `arena_offsets` gives for each result its byte
    offset in the entry function's arena, or -1 for a result that leaves the
    function (the logits).

    ```mlir
    %q = tfm.launch @prefill_attn_in(%x, %wn, %wq, %wk, %wv, %kc, %vc) {arena_offsets = array<i64: 0>}
        : (tensor<?x64xf32>, ...) -> tensor<?x64xf32>
    ```
  }];
  let arguments = (ins FlatSymbolRefAttr:$kernel, Variadic<Tfm_KernelValue>:$args,
                       OptionalAttr<DenseI64ArrayAttr>:$arena_offsets);
  let results = (outs Variadic<Tfm_Rows>:$results);
  let assemblyFormat = [{
    $kernel `(` $args `)` attr-dict `:` functional-type($args, $results)
  }];
  let hasVerifier = 1;
}

#endif // TFM_OPS_TD
