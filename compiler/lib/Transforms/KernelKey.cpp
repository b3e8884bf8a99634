//===- KernelKey.cpp - A kernel's identity for tuning ---------------------===//
#include "tfm/Transforms/KernelKey.h"

#include "tfm/Dialect/TfmOps.h"
#include "tfm/common/Hash.h"

#include "mlir/IR/OwningOpRef.h"

std::string tfm::kernelTuningKey(mlir::func::FuncOp kernel) {
  mlir::OwningOpRef<mlir::func::FuncOp> copy(kernel.clone());
  copy.get()->removeAttr(attrs::kSchedule);
  copy.get().setSymName("kernel");
  std::string text;
  llvm::raw_string_ostream os(text);
  copy.get()->print(os, mlir::OpPrintingFlags().printGenericOpForm());
  return contentHash(text);
}
