//===- SelectSchedules.cpp - stamp a schedule name on every kernel --------===//
#include "tfm/Transforms/Passes.h"
#include "tfm/Dialect/TfmOps.h"

#include "llvm/ADT/StringExtras.h"

namespace tfm {
#define GEN_PASS_DEF_TFMSELECTSCHEDULES
#include "tfm/Transforms/Passes.h.inc"
} // namespace tfm

using namespace mlir;

namespace tfm {

llvm::ArrayRef<llvm::StringRef> knownSchedules() {
  static const llvm::StringRef names[] = {"fast", "plain"};
  return names;
}

namespace {

struct SelectSchedulesPass
    : public impl::TfmSelectSchedulesBase<SelectSchedulesPass> {
  using Base::Base;

  void runOnOperation() override {
    if (!llvm::is_contained(knownSchedules(), llvm::StringRef(schedule))) {
      getOperation().emitError()
          << "unknown schedule '" << schedule
          << "'; known schedules: " << llvm::join(knownSchedules(), ", ");
      return signalPassFailure();
    }
    auto name = StringAttr::get(&getContext(), schedule);
    for (auto fn : getOperation().getOps<func::FuncOp>())
      if (fn->hasAttr(attrs::kKernel))
        fn->setAttr(attrs::kSchedule, name);
  }
};

} // namespace
} // namespace tfm
