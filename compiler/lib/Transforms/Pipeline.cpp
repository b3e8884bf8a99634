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
  for (const std::string &name : options.skip) {
    const PipelinePass *pass = llvm::find_if(
        pipelinePasses(), [&](const PipelinePass &p) { return name == p.argument; });
    if (pass == pipelinePasses().end()) {
      std::vector<std::string> optional;
      for (const PipelinePass &p : pipelinePasses())
        if (!p.required)
          optional.push_back(p.argument);
      return llvm::createStringError("cannot skip pass '" + name +
                                     "': it is not in the tfm pipeline; the optional passes "
                                     "are " + llvm::join(optional, ", "));
    }
    // A module past these passes goes through them unchanged, so skipping
    // one never helps and only leaves IR the code generator cannot read.
    if (pass->required)
      return llvm::createStringError("cannot skip pass '" + name +
                                     "': the code generator needs its result");
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
  // registerPassPipeline rather than PassPipelineRegistration: a bad `skip`
  // is reported through the error handler, not a fatal error.
  registerPassPipeline(
      "tfm-pipeline", "the whole tfm pipeline (Passes.td), less `skip`",
      [](OpPassManager &pm, StringRef text,
         function_ref<LogicalResult(const Twine &)> errorHandler) -> LogicalResult {
        PipelineOptions options;
        if (failed(options.parseFromString(text)))
          return failure();
        TfmPipelineOptions opts{options.schedule, {options.skip.begin(), options.skip.end()}};
        if (llvm::Error e = buildTfmPipeline(pm, opts))
          return errorHandler(llvm::toString(std::move(e)));
        return success();
      },
      [](function_ref<void(const detail::PassOptions &)> optionsHandler) {
        optionsHandler(PipelineOptions());
      });
}

} // namespace tfm
