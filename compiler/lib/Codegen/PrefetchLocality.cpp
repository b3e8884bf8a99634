//===- PrefetchLocality.cpp - Prefetches into every cache level -----------===//
#include "tfm/Codegen/PrefetchLocality.h"

#include "llvm/IR/Constants.h"
#include "llvm/IR/InstIterator.h"
#include "llvm/IR/IntrinsicInst.h"
#include "llvm/IR/Module.h"

int tfm::prefetchIntoAllCacheLevels(llvm::Module &module) {
  // llvm.prefetch(address, rw, locality, cache type)
  constexpr unsigned kLocality = 2, kAllLevels = 3;
  int changed = 0;
  for (llvm::Function &f : module)
    for (llvm::Instruction &inst : llvm::instructions(f)) {
      auto *call = llvm::dyn_cast<llvm::IntrinsicInst>(&inst);
      if (!call || call->getIntrinsicID() != llvm::Intrinsic::prefetch)
        continue;
      auto *locality = llvm::cast<llvm::ConstantInt>(call->getArgOperand(kLocality));
      if (locality->getZExtValue() == kAllLevels)
        continue;
      call->setArgOperand(kLocality, llvm::ConstantInt::get(locality->getType(), kAllLevels));
      ++changed;
    }
  return changed;
}
