//===- SelectSchedules.cpp - a schedule for each kernel -------------------===//
#include "tfm/Dialect/TfmOps.h"
#include "tfm/Program/ScheduleNames.h"
#include "tfm/Program/ScheduleTargets.h"
#include "tfm/Transforms/KernelKey.h"
#include "tfm/Transforms/Passes.h"
#include "tfm/common/TuningFile.h"

#include "llvm/ADT/StringExtras.h"
#include "llvm/ADT/StringMap.h"

namespace tfm {
#define GEN_PASS_DEF_TFMSELECTSCHEDULES
#include "tfm/Transforms/Passes.h.inc"
} // namespace tfm

using namespace mlir;

namespace tfm {
namespace {

/// What decides a kernel's loop structure: its heaviest op.
enum class KernelClass { Projection, Attention, RowWise };

KernelClass classify(func::FuncOp kernel) {
  bool projection = false;
  for (Operation &op : kernel.getBody().front()) {
    if (isa<AttentionOp>(op))
      return KernelClass::Attention;
    projection |= isa<LinearOp>(op);
  }
  return projection ? KernelClass::Projection : KernelClass::RowWise;
}

/// The default schedule per target device and kernel class, first match
/// wins: what a kernel gets when no tuning file names it. Every CPU target
/// runs "fast" today: of the hand-written schedules and Halide's
/// autoschedulers, it was measured fastest or within noise for every class
/// on AVX-512 (tfm-bench --config with every schedule, GPT-2 Small and the
/// 110M Llama). Both GPU back ends run "gpu".
struct ScheduleRule {
  TargetDevice device;
  std::optional<KernelClass> kernelClass;
  const char *schedule;
};

const ScheduleRule kRules[] = {
    {TargetDevice::Cpu, std::nullopt, "fast"},
    {TargetDevice::Cuda, std::nullopt, "gpu"},
    {TargetDevice::OpenCl, std::nullopt, "gpu"},
};

std::string defaultSchedule(StringRef target, KernelClass kernelClass) {
  if (target.empty())
    return kDefaultSchedule;
  for (const ScheduleRule &rule : kRules)
    if (targetDevice(target) == rule.device &&
        (!rule.kernelClass || *rule.kernelClass == kernelClass))
      return rule.schedule;
  return kDefaultSchedule;
}

std::string knownNames() {
  std::vector<std::string> names;
  for (const ScheduleName &s : kScheduleNames)
    names.push_back(s.name);
  return llvm::join(names, ", ");
}

struct SelectSchedulesPass : public impl::TfmSelectSchedulesBase<SelectSchedulesPass> {
  using Base::Base;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    std::optional<std::string> forAll;
    llvm::StringMap<std::string> perKernel;
    if (failed(parseOverrides(forAll, perKernel)))
      return signalPassFailure();

    auto targetAttr = module->getAttrOfType<StringAttr>(attrs::kTarget);
    StringRef target = targetAttr ? targetAttr.getValue() : StringRef();
    TuningFile tuning;
    if (!tuningFile.empty()) {
      llvm::Expected<TuningFile> read = readTuningFile(tuningFile);
      if (!read) {
        module.emitError() << llvm::toString(read.takeError());
        return signalPassFailure();
      }
      tuning = std::move(*read);
    }
    std::string tunedTarget = tuningTarget(target);
    for (auto fn : module.getOps<func::FuncOp>()) {
      if (!fn->hasAttr(attrs::kKernel))
        continue;
      std::optional<std::string> chosen = forAll;
      auto named = perKernel.find(fn.getSymName());
      if (named != perKernel.end()) {
        chosen = named->second;
        perKernel.erase(named);
      }
      if (!chosen && fn->hasAttr(attrs::kSchedule))
        continue; // chosen before, or written by hand
      if (!chosen && !tuning.records.empty())
        if (const TuningRecord *tuned = tuning.find(tunedTarget, kernelTuningKey(fn)))
          if (isScheduleName(tuned->schedule)) // a name this tfmc no longer has: the default
            chosen = tuned->schedule;
      if (!chosen)
        chosen = defaultSchedule(target, classify(fn));
      TargetDevice device = targetDevice(target);
      if (!target.empty() && !scheduleRunsOn(*findScheduleName(*chosen), device)) {
        fn.emitError() << "schedule '" << *chosen << "' does not run on the "
                       << targetDeviceName(device) << " of target '" << target
                       << "'; schedules that do: " << schedulesRunningOn(device);
        return signalPassFailure();
      }
      fn->setAttr(attrs::kSchedule, StringAttr::get(&getContext(), *chosen));
    }
    if (!perKernel.empty()) {
      module.emitError() << "schedule overrides name kernel '" << perKernel.begin()->first()
                         << "', which this module does not have";
      return signalPassFailure();
    }
  }

  /// "plain" or "prefill_attn_in=plain,decode_logits=fast".
  LogicalResult parseOverrides(std::optional<std::string> &forAll,
                               llvm::StringMap<std::string> &perKernel) {
    SmallVector<StringRef> items;
    StringRef(overrides).split(items, ',', -1, /*KeepEmpty=*/false);
    for (StringRef item : items) {
      auto [kernel, name] = item.trim().split('=');
      if (name.empty()) {
        name = kernel;
        kernel = StringRef();
      }
      if (name.empty() || !isScheduleName(name))
        return getOperation().emitError() << "unknown schedule '" << name
                                          << "'; known schedules: " << knownNames();
      if (kernel.empty())
        forAll = name.str();
      else
        perKernel[kernel] = name.str();
    }
    return success();
  }
};

} // namespace
} // namespace tfm
