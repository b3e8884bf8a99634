//===- tfm-opt.cpp - mlir-opt for the tfm dialect -------------------------===//
//
// Knows the tfm and func dialects, MLIR's generic passes (canonicalize,
// cse, ...), every tfm pass and the `tfm-pipeline` pipeline. Its input is
// read as tfmc reads a .mlir file (tfm/Lowering/IrFile.h): bounded, and
// refused when nested too deep for MLIR's parser.
//
//===----------------------------------------------------------------------===//
#include "tfm/Dialect/TfmDialect.h"
#include "tfm/Lowering/IrFile.h"
#include "tfm/Transforms/Passes.h"
#include "tfm/common/CommandLine.h"
#include "tfm/common/OutputFile.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/DialectRegistry.h"
#include "mlir/Support/FileUtilities.h"
#include "mlir/Tools/mlir-opt/MlirOptMain.h"
#include "mlir/Transforms/Passes.h"

#include "llvm/Support/ToolOutputFile.h"
#include "llvm/Support/raw_ostream.h"

int main(int argc, char **argv) {
  mlir::registerTransformsPasses();
  tfm::registerTfmPassesAndPipeline();
  mlir::DialectRegistry registry;
  registry.insert<tfm::TfmDialect, mlir::func::FuncDialect>();
  tfm::LiteralArguments literal(argc, argv);
  auto [inputPath, outputPath] = mlir::registerAndParseCLIOptions(
      literal.argc(), const_cast<char **>(literal.argv()), "tfm optimizer driver\n", registry);

  llvm::Expected<std::unique_ptr<llvm::MemoryBuffer>> input = tfm::readIrFile(inputPath);
  if (!input) {
    llvm::errs() << "tfm-opt: error: " << llvm::toString(input.takeError()) << "\n";
    return 1;
  }
  std::string error;
  std::unique_ptr<llvm::ToolOutputFile> output = mlir::openOutputFile(outputPath, &error);
  if (!output) {
    llvm::errs() << "tfm-opt: error: " << error << "\n";
    return 1;
  }
  bool ok = mlir::succeeded(mlir::MlirOptMain(output->os(), std::move(*input), registry,
                                              mlir::MlirOptMainConfig::createFromCLOptions()));
  if (llvm::Error e = tfm::closeOutput(output->os(), outputPath)) {
    llvm::errs() << "tfm-opt: error: " << llvm::toString(std::move(e)) << "\n";
    return 1;
  }
  if (!ok)
    return 1;
  output->keep();
  return 0;
}
