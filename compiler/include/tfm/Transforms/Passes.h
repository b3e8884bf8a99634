//===- Passes.h - The tfm pass pipeline -------------------------*- C++ -*-===//
#ifndef TFM_TRANSFORMS_PASSES_H
#define TFM_TRANSFORMS_PASSES_H

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Pass/Pass.h"
#include "mlir/Pass/PassManager.h"

#include "tfm/Dialect/TfmDialect.h"

#include <functional>
#include <string>
#include <vector>

namespace tfm {

#define GEN_PASS_DECL
#include "tfm/Transforms/Passes.h.inc"

#define GEN_PASS_REGISTRATION
#include "tfm/Transforms/Passes.h.inc"

/// Schedule names every kernel generator knows (see TfmSelectSchedules).
llvm::ArrayRef<llvm::StringRef> knownSchedules();

/// One named step of the pipeline; tfmc dumps the IR after each.
struct PipelineStage {
  std::string name;
  std::function<void(mlir::OpPassManager &)> addPasses;
};

/// canonicalize/cse -> fuse norm+linear -> fuse epilogues -> outline kernels
/// -> plan memory -> select schedules.
std::vector<PipelineStage> pipelineStages(llvm::StringRef schedule);

/// All stages into one pass manager.
void buildTfmPipeline(mlir::OpPassManager &pm, llvm::StringRef schedule);

/// Registers the individual passes and the `tfm-pipeline` pipeline.
void registerTfmPassesAndPipeline();

} // namespace tfm

#endif // TFM_TRANSFORMS_PASSES_H
