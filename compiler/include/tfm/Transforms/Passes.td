//===- Passes.td - The tfm pass pipeline -------------------*- tablegen -*-===//
//
// In pipeline order: fuse (norm->linear, then epilogues), outline kernels,
// plan memory, select schedules. buildTfmPipeline (Passes.h) strings them
// together with canonicalize/cse.
//
//===----------------------------------------------------------------------===//
#ifndef TFM_TRANSFORMS_PASSES_TD
#define TFM_TRANSFORMS_PASSES_TD

include "mlir/Pass/PassBase.td"

def TfmFuseNormLinear : Pass<"tfm-fuse-norm-linear", "mlir::func::FuncOp"> {
  let summary = "group a norm with the linears that read it";
  let description = [{
    Every `tfm.rms_norm` or `tfm.layer_norm` whose users are all
    `tfm.linear`s becomes one `tfm.fusion` region with those linears
    (attention input: norm + q/k/v or the fused qkv; FFN input: norm +
    gate/up or up; final norm + output projection). When the
    norm's input is a `tfm.last_row` used only there, that row selection
    joins the region as well. The norm is computed once per row and never
    written to memory.
  }];
  let dependentDialects = ["::tfm::TfmDialect"];
}

def TfmFuseEpilogues : Pass<"tfm-fuse-epilogues", "mlir::func::FuncOp"> {
  let summary = "pull elementwise consumers into the region that feeds them";
  let description = [{
    A `tfm.linear` or `tfm.embedding` not yet in a region gets a region of
    its own. Then every `tfm.rope`, `tfm.silu`, `tfm.gelu`, `tfm.mul`,
    `tfm.add`, `tfm.slice_cols`, `tfm.add_positions` and `tfm.kv_store`
    whose operands come from one region (or from above it) moves into that
    region: the q/k/v slices of a fused projection, RoPE and the cache stores
    after the q/k/v projections, SiLU·mul after gate/up, GELU after up, the
    learned positions after the embedding, the residual add after
    attn_output and ffn_down. A bias is an operand of its linear and comes
    along with it. Nothing joins a region across an op with memory effects
    (attention reads the cache), so attention never shares a kernel with a
    store to the cache it reads.
  }];
  let dependentDialects = ["::tfm::TfmDialect"];
}

def TfmOutlineKernels : Pass<"tfm-outline-kernels", "mlir::ModuleOp"> {
  let summary = "turn each fusion region and lone compute op into a kernel";
  let description = [{
    In every entry function (`tfm.entry`), each `tfm.fusion` and each compute
    op outside a region becomes a `func.func private` kernel (`tfm.kernel`)
    and a `tfm.launch`. Values used from above become arguments, yielded
    values results; a cache the kernel stores into is an argument it writes.
    Arguments and results whose rows are token positions carry
    `tfm.token_rows`. Structurally identical kernels are one function, so the
    kernel count does not grow with the layer count, and score shares
    prefill's kernels but for its logits. Kernels are named after the first
    entry that launches them and their role: `<entry>_<role>`
    (`prefill_attn_in`, `decode_ffn_out`, `score_logits`, ...).
  }];
  let dependentDialects = ["::tfm::TfmDialect", "::mlir::func::FuncDialect"];
}

def TfmPlanMemory : Pass<"tfm-plan-memory", "mlir::ModuleOp"> {
  let summary = "static arena offsets for the tensors passed between launches";
  let description = [{
    In each entry function every launch result that is not returned lives in
    one arena. Values are placed first-fit in order of definition at 64-byte
    aligned offsets; two values share bytes only when their live ranges
    (definition to last use, in launches) do not overlap. Sizes use the row
    bound (the module's `tfm.prefill_chunk` for dynamic rows) and 4-byte
    elements. Sets `arena_offsets` on each launch (-1 for the returned
    logits) and `tfm.arena_bytes` on the function.
  }];
}

def TfmSelectSchedules : Pass<"tfm-select-schedules", "mlir::ModuleOp"> {
  let summary = "stamp the schedule name on every kernel";
  let description = [{
    Sets `tfm.schedule` on every kernel function. Known schedules: "fast"
    (the default, tuned) and "plain" (obviously right).
  }];
  let options = [
    Option<"schedule", "schedule", "std::string", /*default=*/"\"fast\"",
           "schedule for every kernel: fast or plain">
  ];
}

#endif // TFM_TRANSFORMS_PASSES_TD
