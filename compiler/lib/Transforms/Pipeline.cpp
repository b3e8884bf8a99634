//===- Pipeline.cpp - the tfm pass pipeline, as one unit ------------------===//
#include "tfm/Transforms/Passes.h"

#include "mlir/Pass/PassRegistry.h"
#include "mlir/Transforms/Passes.h"

#include "llvm/ADT/StringExtras.h"

using namespace mlir;

namespace tfm {

llvm::ArrayRef<PipelinePass> pipelinePasses() {
  static const PipelinePass passes[] = {
      {"canonicalize", false},
      {"cse", false},
      {"tfm-fuse-norm-linear", false},
      {"tfm-fuse-epilogues", false},
      {"tfm-choose-cache-layouts", false},
      {"tfm-outline-kernels", true},
      {"tfm-deduplicate-kernels", false},
      {"tfm-plan-memory", true},
      {"tfm-select-schedules", false},
  };
  return passes;
}

llvm::Error buildTfmPipeline(OpPassManager &pm, const TfmPipelineOptions &options) {
  for (const std::string &name : options.skip)
    if (!llvm::any_of(pipelinePasses(), [&](const PipelinePass &p) { return name == p.argument; })) {
      std::vector<std::string> known;
      for (const PipelinePass &p : pipelinePasses())
        known.push_back(p.argument);
      return llvm::createStringError("cannot skip pass '" + name +
                                     "': it is not in the tfm pipeline (" +
                                     llvm::join(known, ", ") + ")");
    }
  auto kept = [&](StringRef name) { return !llvm::is_contained(options.skip, name); };
  if (kept("canonicalize"))
    pm.addPass(createCanonicalizerPass());
  if (kept("cse"))
    pm.addPass(createCSEPass());
  if (kept("tfm-fuse-norm-linear"))
    pm.addNestedPass<func::FuncOp>(createTfmFuseNormLinear());
  if (kept("tfm-fuse-epilogues"))
    pm.addNestedPass<func::FuncOp>(createTfmFuseEpilogues());
  if (kept("tfm-choose-cache-layouts"))
    pm.addPass(createTfmChooseCacheLayouts());
  if (kept("tfm-outline-kernels"))
    pm.addPass(createTfmOutlineKernels());
  if (kept("tfm-deduplicate-kernels"))
    pm.addPass(createTfmDeduplicateKernels());
  if (kept("tfm-plan-memory"))
    pm.addPass(createTfmPlanMemory());
  if (kept("tfm-select-schedules"))
    pm.addPass(createTfmSelectSchedules({options.scheduleOverrides}));
  return llvm::Error::success();
}

namespace {
struct PipelineOptions : public PassPipelineOptions<PipelineOptions> {
  Option<std::string> schedule{*this, "schedule",
                               llvm::cl::desc("schedule overrides: a name, or kernel=name,...")};
  ListOption<std::string> skip{*this, "skip", llvm::cl::desc("passes to leave out")};
};
} // namespace

void registerTfmPassesAndPipeline() {
  registerTfmPasses();
  PassPipelineRegistration<PipelineOptions>(
      "tfm-pipeline", "the whole tfm pipeline (Passes.td), less `skip`",
      [](OpPassManager &pm, const PipelineOptions &options) {
        TfmPipelineOptions opts{options.schedule, {options.skip.begin(), options.skip.end()}};
        if (llvm::Error e = buildTfmPipeline(pm, opts))
          llvm::report_fatal_error(std::move(e));
      });
}

} // namespace tfm
