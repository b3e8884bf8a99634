//===- Pipeline.cpp - the tfm pass pipeline, as one unit ------------------===//
#include "tfm/Transforms/Passes.h"

#include "mlir/Pass/PassRegistry.h"
#include "mlir/Transforms/Passes.h"

using namespace mlir;

namespace tfm {

std::vector<PipelineStage> pipelineStages(llvm::StringRef schedule) {
  std::string scheduleName = schedule.str();
  return {
      {"canonicalize",
       [](OpPassManager &pm) {
         pm.addPass(createCanonicalizerPass());
         pm.addPass(createCSEPass());
       }},
      {"fuse-norm-linear",
       [](OpPassManager &pm) {
         pm.addNestedPass<func::FuncOp>(createTfmFuseNormLinear());
       }},
      {"fuse-epilogues",
       [](OpPassManager &pm) {
         pm.addNestedPass<func::FuncOp>(createTfmFuseEpilogues());
       }},
      {"outline-kernels",
       [](OpPassManager &pm) { pm.addPass(createTfmOutlineKernels()); }},
      {"plan-memory",
       [](OpPassManager &pm) { pm.addPass(createTfmPlanMemory()); }},
      {"select-schedules",
       [scheduleName](OpPassManager &pm) {
         pm.addPass(createTfmSelectSchedules({scheduleName}));
       }},
  };
}

void buildTfmPipeline(OpPassManager &pm, llvm::StringRef schedule) {
  for (const PipelineStage &stage : pipelineStages(schedule))
    stage.addPasses(pm);
}

namespace {
struct PipelineOptions : public PassPipelineOptions<PipelineOptions> {
  Option<std::string> schedule{*this, "schedule",
                               llvm::cl::desc("fast or plain"),
                               llvm::cl::init("fast")};
};
} // namespace

void registerTfmPassesAndPipeline() {
  registerTfmPasses();
  PassPipelineRegistration<PipelineOptions>(
      "tfm-pipeline",
      "canonicalize, fuse, outline kernels, plan memory, select schedules",
      [](OpPassManager &pm, const PipelineOptions &options) {
        buildTfmPipeline(pm, options.schedule);
      });
}

} // namespace tfm
