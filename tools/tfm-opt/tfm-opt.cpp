//===- tfm-opt.cpp - mlir-opt for the tfm dialect -------------------------===//
//
// Knows the tfm and func dialects, MLIR's generic passes (canonicalize,
// cse, ...), every tfm pass and the `tfm-pipeline` pipeline.
//
//===----------------------------------------------------------------------===//
#include "tfm/Dialect/TfmDialect.h"
#include "tfm/Transforms/Passes.h"
#include "tfm/common/CommandLine.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/DialectRegistry.h"
#include "mlir/Tools/mlir-opt/MlirOptMain.h"
#include "mlir/Transforms/Passes.h"

int main(int argc, char **argv) {
  mlir::registerTransformsPasses();
  tfm::registerTfmPassesAndPipeline();
  mlir::DialectRegistry registry;
  registry.insert<tfm::TfmDialect, mlir::func::FuncDialect>();
  tfm::LiteralArguments literal(argc, argv);
  return mlir::asMainReturnCode(mlir::MlirOptMain(
      literal.argc(), const_cast<char **>(literal.argv()), "tfm optimizer driver\n", registry));
}
