//===- Passes.h - The tfm pass pipeline -------------------------*- C++ -*-===//
#ifndef TFM_TRANSFORMS_PASSES_H
#define TFM_TRANSFORMS_PASSES_H

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Pass/Pass.h"
#include "mlir/Pass/PassManager.h"

#include "tfm/Dialect/TfmDialect.h"

#include "llvm/Support/Error.h"

#include <string>
#include <vector>

namespace tfm {

#define GEN_PASS_DECL
#include "tfm/Transforms/Passes.h.inc"

#define GEN_PASS_REGISTRATION
#include "tfm/Transforms/Passes.h.inc"

struct TfmPipelineOptions {
  /// --tfm-select-schedules' `overrides` (empty: the per-target table).
  std::string scheduleOverrides;
  std::string tuningFile; // tfm-select-schedules' tuning-file
  /// Passes to leave out, by argument ("tfm-fuse-epilogues", "cse", ...).
  std::vector<std::string> skip;
  /// --tfm-choose-attention's `key-tile` (-1: its default).
  int64_t attentionKeyTile = -1;
  /// --tfm-quantize-activations' `block` (0: f32 inputs).
  int64_t activationBlock = 0;
  /// --tfm-quantize-activations' `bf16`.
  bool bf16Activations = false;
};

/// canonicalize, cse, fuse norm+linear, fuse epilogues, choose cache
/// layouts, choose attention, quantize activations, outline kernels, deduplicate kernels, plan memory, select
/// schedules; less the skipped ones. Skipping a required pass, or a name not
/// in the pipeline, is an error naming the optional ones.
llvm::Error buildTfmPipeline(mlir::OpPassManager &pm, const TfmPipelineOptions &options);

/// Registers the individual passes and the `tfm-pipeline` pipeline.
void registerTfmPassesAndPipeline();

} // namespace tfm

#endif // TFM_TRANSFORMS_PASSES_H
