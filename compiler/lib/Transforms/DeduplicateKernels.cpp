//===- DeduplicateKernels.cpp - one function per distinct kernel ----------===//
//
// As IREE's dispatch deduplication: kernels are compared structurally, never
// by printed text. Two kernels merge only when everything the code
// generator reads from them is equal: the function type (shapes, and each
// cache buffer's memref layout), the argument and result attributes, the
// schedule, and the body up to locations. Launches that need different
// layouts or bindings therefore never share a kernel.
//
//===----------------------------------------------------------------------===//
#include "tfm/Dialect/TfmOps.h"
#include "tfm/Transforms/Passes.h"

#include "mlir/IR/OperationSupport.h"

#include <unordered_map>

namespace tfm {
#define GEN_PASS_DEF_TFMDEDUPLICATEKERNELS
#include "tfm/Transforms/Passes.h.inc"
} // namespace tfm

using namespace mlir;

namespace tfm {
namespace {

bool sameKernel(func::FuncOp a, func::FuncOp b) {
  return a.getFunctionType() == b.getFunctionType() &&
         a.getAllArgAttrs() == b.getAllArgAttrs() &&
         a.getAllResultAttrs() == b.getAllResultAttrs() &&
         a->getAttr(attrs::kSchedule) == b->getAttr(attrs::kSchedule) &&
         OperationEquivalence::isRegionEquivalentTo(&a.getBody(), &b.getBody(),
                                                    OperationEquivalence::IgnoreLocations);
}

/// What sameKernel compares, hashed: the type, the schedule and each op
/// of the body without its operands' identities or its location. Kernels
/// are compared within a hash only, so that deduplication stays linear in
/// the number of kernels.
llvm::hash_code kernelHash(func::FuncOp fn) {
  llvm::hash_code hash = llvm::hash_combine(fn.getFunctionType(), fn->getAttr(attrs::kSchedule));
  for (Operation &op : fn.getBody().getOps())
    hash = llvm::hash_combine(
        hash, OperationEquivalence::computeHash(&op, OperationEquivalence::ignoreHashValue,
                                                OperationEquivalence::ignoreHashValue,
                                                OperationEquivalence::IgnoreLocations));
  return hash;
}

struct DeduplicateKernelsPass : public impl::TfmDeduplicateKernelsBase<DeduplicateKernelsPass> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    // Kernels that differ in what kernelHash covers never merge.
    std::unordered_map<size_t, SmallVector<func::FuncOp>> kept;
    llvm::DenseMap<StringAttr, func::FuncOp> replacement;
    SmallVector<func::FuncOp> duplicates;
    for (auto fn : module.getOps<func::FuncOp>()) {
      if (!fn->hasAttr(attrs::kKernel))
        continue;
      SmallVector<func::FuncOp> &candidates = kept[static_cast<size_t>(kernelHash(fn))];
      auto same = llvm::find_if(candidates, [&](func::FuncOp k) { return sameKernel(k, fn); });
      if (same == candidates.end()) {
        candidates.push_back(fn);
        continue;
      }
      replacement[fn.getSymNameAttr()] = *same;
      duplicates.push_back(fn);
    }
    if (duplicates.empty())
      return;
    module.walk([&](LaunchOp launch) {
      auto it = replacement.find(launch.getKernelAttr().getAttr());
      if (it != replacement.end())
        launch.setKernelAttr(FlatSymbolRefAttr::get(it->second.getSymNameAttr()));
    });
    for (func::FuncOp fn : duplicates)
      fn.erase();
  }
};

} // namespace
} // namespace tfm
