//===- Passes.h - The tfm pass pipeline -------------------------*- C++ -*-===//
#ifndef TFM_TRANSFORMS_PASSES_H
#define TFM_TRANSFORMS_PASSES_H

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Pass/Pass.h"
#include "mlir/Pass/PassManager.h"

#include "tfm/Dialect/TfmDialect.h"

#include <string>

namespace tfm {

#define GEN_PASS_DECL
#include "tfm/Transforms/Passes.h.inc"

#define GEN_PASS_REGISTRATION
#include "tfm/Transforms/Passes.h.inc"

/// Schedule names every kernel generator knows (see TfmSelectSchedules).
llvm::ArrayRef<llvm::StringRef> knownSchedules();

/// canonicalize/cse -> fuse -> outline -> plan memory -> select schedules.
void buildTfmPipeline(mlir::OpPassManager &pm, llvm::StringRef schedule);

/// Registers the individual passes and the `tfm-pipeline` pipeline.
void registerTfmPassesAndPipeline();

} // namespace tfm

#endif // TFM_TRANSFORMS_PASSES_H
