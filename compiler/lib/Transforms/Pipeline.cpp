//===- Pipeline.cpp - the tfm pass pipeline, as one unit ------------------===//
#include "tfm/Transforms/Passes.h"
#include "tfm/common/Failure.h"

#include "mlir/Pass/PassRegistry.h"
#include "mlir/Transforms/Passes.h"

#include "llvm/ADT/StringExtras.h"

using namespace mlir;

namespace tfm {

namespace {

/// Whether the code generator reads a pass's result.
enum class Need { Optional, Required };

enum class PipelinePassId {
#define TFM_PIPELINE_PASS(id, argument, need) id,
#include "tfm/Transforms/Pipeline.def"
};

struct PipelinePass {
  PipelinePassId id;
  const char *argument;
  Need need;
};

const PipelinePass kPipeline[] = {
#define TFM_PIPELINE_PASS(id, argument, need) {PipelinePassId::id, argument, Need::need},
#include "tfm/Transforms/Pipeline.def"
};

void addPass(OpPassManager &pm, PipelinePassId id, const TfmPipelineOptions &options) {
  switch (id) {
  case PipelinePassId::Canonicalize:
    pm.addPass(createCanonicalizerPass());
    return;
  case PipelinePassId::Cse:
    pm.addPass(createCSEPass());
    return;
  case PipelinePassId::FuseNormLinear:
    pm.addNestedPass<func::FuncOp>(createTfmFuseNormLinear());
    return;
  case PipelinePassId::FuseEpilogues:
    pm.addNestedPass<func::FuncOp>(createTfmFuseEpilogues());
    return;
  case PipelinePassId::SlideWindowCaches:
    pm.addPass(createTfmSlideWindowCaches());
    return;
  case PipelinePassId::ChooseCacheLayouts:
    pm.addPass(createTfmChooseCacheLayouts());
    return;
  case PipelinePassId::ChooseAttention:
    pm.addNestedPass<func::FuncOp>(createTfmChooseAttention({options.attentionKeyTile}));
    return;
  case PipelinePassId::QuantizeActivations:
    pm.addNestedPass<func::FuncOp>(
        createTfmQuantizeActivations({options.activationBlock, options.bf16Activations}));
    return;
  case PipelinePassId::OutlineKernels:
    pm.addPass(createTfmOutlineKernels());
    return;
  case PipelinePassId::DeduplicateKernels:
    pm.addPass(createTfmDeduplicateKernels());
    return;
  case PipelinePassId::PlanMemory:
    pm.addPass(createTfmPlanMemory());
    return;
  case PipelinePassId::SelectSchedules:
    pm.addPass(createTfmSelectSchedules({options.scheduleOverrides, options.tuningFile}));
    return;
  }
}

} // namespace

llvm::Error buildTfmPipeline(OpPassManager &pm, const TfmPipelineOptions &options) {
  for (const std::string &name : options.skip) {
    const PipelinePass *pass =
        llvm::find_if(kPipeline, [&](const PipelinePass &p) { return name == p.argument; });
    if (pass == std::end(kPipeline)) {
      std::vector<std::string> optional;
      for (const PipelinePass &p : kPipeline)
        if (p.need == Need::Optional)
          optional.push_back(p.argument);
      return failure("cannot skip pass '" + name +
                                     "': it is not in the tfm pipeline; the optional passes "
                                     "are " + llvm::join(optional, ", "));
    }
    // A module past these passes goes through them unchanged, so skipping
    // one never helps and only leaves IR the code generator cannot read.
    if (pass->need == Need::Required)
      return failure("cannot skip pass '" + name +
                                     "': the code generator needs its result");
  }
  for (const PipelinePass &pass : kPipeline)
    if (!llvm::is_contained(options.skip, pass.argument))
      addPass(pm, pass.id, options);
  return llvm::Error::success();
}

namespace {
struct PipelineOptions : public PassPipelineOptions<PipelineOptions> {
  Option<std::string> schedule{*this, "schedule",
                               llvm::cl::desc("schedule overrides: a name, or kernel=name,...")};
  Option<std::string> tuningFile{*this, "tuning-file",
                                 llvm::cl::desc("schedules recorded by tfmc --tune")};
  Option<int64_t> keyTile{*this, "key-tile",
                          llvm::cl::desc("attention's key tile (0: all keys; -1: default)"),
                          llvm::cl::init(-1)};
  Option<int64_t> activationBlock{
      *this, "activation-block",
      llvm::cl::desc("linear inputs quantized to 8 bits in blocks of this many, or of a "
                     "k-quant weight's 256 (0: f32)"),
      llvm::cl::init(0)};
  Option<bool> bf16Activations{
      *this, "bf16-activations",
      llvm::cl::desc("inputs of products with bf16 weights rounded to bf16"),
      llvm::cl::init(false)};
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
          return mlir::failure();
        TfmPipelineOptions opts{options.schedule, options.tuningFile,
                                {options.skip.begin(), options.skip.end()}, options.keyTile,
                                options.activationBlock, options.bf16Activations};
        if (llvm::Error e = buildTfmPipeline(pm, opts))
          return errorHandler(llvm::toString(std::move(e)));
        return success();
      },
      [](function_ref<void(const mlir::detail::PassOptions &)> optionsHandler) {
        optionsHandler(PipelineOptions());
      });
}

} // namespace tfm
