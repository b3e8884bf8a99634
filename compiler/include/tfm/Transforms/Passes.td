//===- Passes.td - The tfm pass pipeline -------------------*- tablegen -*-===//
//
// The default pipeline's order, and which passes the code generator needs,
// are listed once, in Pipeline.def: every other pass only makes the result
// faster or smaller, and the compiled model computes the same without it. Every pass leaves a module that is already past it unchanged,
// so the pipeline can run on IR of any stage (`tfmc model.mlir`).
//
//===----------------------------------------------------------------------===//
#ifndef TFM_TRANSFORMS_PASSES_TD
#define TFM_TRANSFORMS_PASSES_TD

include "mlir/Pass/PassBase.td"

def TfmFuseNormLinear : Pass<"tfm-fuse-norm-linear", "mlir::func::FuncOp"> {
  let summary = "group a norm with the projections that read it";
  let description = [{
    A rewrite pattern on every row normalization (`tfm.rms_norm`,
    `tfm.layer_norm`) whose users are all fusion roots outside a region
    (`tfm.linear`) in an entry function: the norm and those projections
    become one `tfm.fusion`
    (attention input: norm + q/k/v or the fused qkv; FFN input: norm +
    gate/up or up; final norm + output head). A `tfm.last_row` that only the
    norm reads joins as well. The norm is computed once per row and never
    written to memory.
  }];
  let dependentDialects = ["::tfm::TfmDialect"];
}

def TfmFuseEpilogues : Pass<"tfm-fuse-epilogues", "mlir::func::FuncOp"> {
  let summary = "pull row-wise consumers into the region that feeds them";
  let description = [{
    Two rewrite patterns, in entry functions. A fusion root (`tfm.linear`,
    `tfm.embedding`) outside any region gets a region of its own. An epilogue op (trait
    `Epilogue`: RoPE, SiLU, GELU, mul, add, column slices, learned
    positions, cache stores) whose operands come from a region (or from
    above it) moves into the latest such region: RoPE and the cache stores
    after q/k/v, SiLU·mul after gate/up, the residual add after attn_output
    and ffn_down. Nothing joins a region across an op with memory effects
    (attention reads the cache), so attention never shares a kernel with a
    store to the cache it reads. A region that holds `kMaxKernelOps` ops
    (tfm/Program/Program.h) takes no more: a longer chain of epilogues
    continues in kernels of their own, so that regions, and the time to
    compile them, stay bounded.
  }];
  let dependentDialects = ["::tfm::TfmDialect"];
}

def TfmSlideWindowCaches : Pass<"tfm-slide-window-caches", "mlir::ModuleOp"> {
  let summary = "give the caches of sliding-window layers window-sized buffers";
  let description = [{
    A cache that only sliding-window attention reads (`tfm.attention`'s
    `window`; Mistral's layers, Gemma's local ones) needs the last `window`
    - 1 positions before a call and the call's own rows: at most `window` -
    1 + `tfm.prefill_chunk` rows. Such a cache becomes a sliding buffer of
    that many rows (`cacheBufferType`'s `sliding`: the memref's offset is
    dynamic) with the `window` it serves, when that is fewer rows than the
    context; the generated driver moves the rows still needed to the front
    when a call would pass its end. A 32k context then costs window-sized
    caches on those layers. Left as they are: caches read whole by any op,
    caches passed to a launch (outlined IR) and those of a GPU target, whose
    caches live on the device. Without it every cache holds every position.

    ```mlir
    // --tfm-slide-window-caches, tfm.prefill_chunk 128, a window of 256:
    tfm.cache_decl @"blk.0.key" : memref<4096x64xf32>
    // becomes
    tfm.cache_decl @"blk.0.key" window 256 : memref<383x64xf32, strided<[64, 1], offset: ?>>
    ```
  }];
}

def TfmChooseCacheLayouts : Pass<"tfm-choose-cache-layouts", "mlir::ModuleOp"> {
  let summary = "lay out each cache buffer for the op that reads it";
  let description = [{
    A key cache (a buffer attention reads as keys) is transposed,
    `strided<[1, context]>`: attention reads each key dimension across
    positions contiguously, which vectorises across keys. Other caches keep
    the layout they were declared with (rows, from the builder). The layout
    lands in the `tfm.cache_decl` type and every `tfm.kv_cache` that names
    it; a cache already passed to a launch (IR outlined before) keeps its
    layout. Without it every cache is laid out by rows.
  }];
}

def TfmChooseAttention : Pass<"tfm-choose-attention", "mlir::func::FuncOp"> {
  let summary = "choose each attention op's algorithm: all keys at once, or key tiles";
  let description = [{
    Sets `key_tile` on every `tfm.attention` that has none (0): the tile of
    keys of FlashAttention's online softmax, or 0 for one softmax over all
    the keys of a row (tfm/Dialect/TfmOps.td). `key-tile=N` asks for tiles
    of N keys, `key-tile=0` for all keys at once; without it, the default
    for the module's target applies (ChooseAttention.cpp: all keys on a
    CPU, tiles of 64 on a GPU), and a tile longer than the cache is the
    whole cache. An op given a tile by hand keeps it.

    Example: `tfm-opt --tfm-choose-attention=key-tile=64 m.mlir`
  }];
  let options = [
    Option<"keyTile", "key-tile", "int64_t", /*default=*/"-1",
           "keys per tile (0: all keys at once; -1: the default)">
  ];
}

def TfmQuantizeActivations : Pass<"tfm-quantize-activations", "mlir::func::FuncOp"> {
  let summary = "choose each linear op's input: f32, 8-bit integers or bf16";
  let description = [{
    With `block=32`, sets `activation_block` on every `tfm.linear` whose
    weight is in a block format and that has none: its input rows are then
    quantized to 8-bit integers in blocks of 32, each with a scale, and
    multiplied with the weight's integer levels in integer dot products
    (tfm/Dialect/TfmOps.td), as llama.cpp does for its quantized formats.
    A weight whose own blocks are longer, the k-quants' 256 values, has its
    input quantized in blocks of 256 instead, as llama.cpp's q8_K: a
    block's integer sums then share one input scale.
    Faster where the target has 8-bit dot products (AVX-512 VNNI), and no
    longer exact. With `bf16=true`, sets `bf16_input` on every `tfm.linear`
    whose weight is bf16: its input is rounded to bf16, and products of many
    rows multiply in AMX's bf16 tiles where the target has them (amx_bf16).
    Without either option nothing changes: the default keeps every input in
    f32. An op given an input type by hand keeps it.

    Example: `tfm-opt --tfm-quantize-activations=block=32 m.mlir`
  }];
  let options = [
    Option<"block", "block", "int64_t", /*default=*/"0",
           "values per block of the quantized input (32; the k-quants' inputs in "
           "their weight's blocks of 256), or 0 to keep f32 inputs">,
    Option<"bf16", "bf16", "bool", /*default=*/"false",
           "round the inputs of products with bf16 weights to bf16">
  ];
}

def TfmOutlineKernels : Pass<"tfm-outline-kernels", "mlir::ModuleOp"> {
  let summary = "turn each fusion region and lone kernel op into a kernel";
  let description = [{
    In every entry function (`tfm.entry`), each `tfm.fusion` and each kernel
    op or cache store outside a region becomes a `func.func private` kernel
    (`tfm.kernel`) and a `tfm.launch`. Values used from above become
    arguments, yielded values results; a cache the kernel stores into is an
    argument it writes. Arguments and results whose rows are token positions
    carry `tfm.token_rows`. Kernels are named `<entry>_<role>`, the role
    from the weights the kernel reads (tfm/common/TensorNames.h:
    `prefill_attn_in`, `decode_ffn_out`, `score_logits`) or from its op
    (`decode_attention`, `prefill_key_store`), with `_N` for repeats.
  }];
  let dependentDialects = ["::tfm::TfmDialect", "::mlir::func::FuncDialect"];
}

def TfmDeduplicateKernels : Pass<"tfm-deduplicate-kernels", "mlir::ModuleOp"> {
  let summary = "one kernel function for structurally identical kernels";
  let description = [{
    Kernels with the same function type (which includes every cache
    buffer's layout), the same argument and result attributes, the same
    schedule and structurally equivalent bodies (`OperationEquivalence`,
    locations ignored) become the first of them; launches are redirected.
    The kernel count then no longer grows with the layer count, and score
    shares prefill's kernels but for its logits.
  }];
}

def TfmPlanMemory : Pass<"tfm-plan-memory", "mlir::ModuleOp"> {
  let summary = "static offsets for the caches and the values between launches";
  let description = [{
    The KV-cache block: each `tfm.cache_decl` in module order gets its
    `offset`, 64-byte aligned; after the caches, each sliding cache (one
    with a `window`) gets its `base`, the 8 bytes that hold the position of
    its first row; and the module gets `tfm.kv_cache_bytes`.

    The arenas: in each entry function every launch result that is not
    returned lives in one arena. Values are placed first-fit in order of
    definition at 64-byte aligned offsets; two values share bytes only when
    their live ranges (definition to last use, in launches) do not overlap.
    Sizes use the row bound (the module's `tfm.prefill_chunk` for dynamic
    rows) and 4-byte elements. Sets `arena_offsets` on each launch (-1 for
    the returned logits) and `tfm.arena_bytes` on the function.
  }];
}

def TfmSelectSchedules : Pass<"tfm-select-schedules", "mlir::ModuleOp"> {
  let summary = "choose the schedule of each kernel";
  let description = [{
    Sets `tfm.schedule` on every kernel that has none: the schedule a
    tuning file (`tuning-file`, written by tfmc --tune) records for the
    kernel's tuning key and the module's target, else the default from a
    table keyed by the target and the kernel's class (projection,
    attention, gather/elementwise). A schedule already in the IR stays.
    `overrides` replaces the choice: one schedule name for every kernel
    ("plain"), or `kernel=name` pairs separated by commas. Names come from
    the one list of schedules (tfm/Program/ScheduleNames.h). A kernel
    without a schedule compiles with "plain".

    Example: `tfm-opt --tfm-select-schedules=tuning-file=tuning.json m.mlir`
  }];
  let options = [
    Option<"overrides", "overrides", "std::string", /*default=*/"\"\"",
           "a schedule for every kernel, or kernel=schedule,...">,
    Option<"tuningFile", "tuning-file", "std::string", /*default=*/"\"\"",
           "the schedules tfmc --tune recorded (tfm/common/TuningFile.h)">
  ];
}

#endif // TFM_TRANSFORMS_PASSES_TD
