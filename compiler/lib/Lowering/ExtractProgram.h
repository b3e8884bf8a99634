//===- ExtractProgram.h - a lowered tfm module -> Program -------*- C++ -*-===//
#ifndef TFM_LOWERING_EXTRACTPROGRAM_H
#define TFM_LOWERING_EXTRACTPROGRAM_H

#include "tfm/Program/Program.h"

#include "mlir/IR/BuiltinOps.h"

#include "llvm/Support/Error.h"

namespace tfm {

/// Reads a module that has been outlined and memory-planned into a Program.
/// Everything comes from the IR: the module's attributes, the weight and
/// cache declarations, the kernel functions and the entry functions' launches.
/// An error names what is missing or malformed and where.
llvm::Expected<Program> extractProgram(mlir::ModuleOp module);

} // namespace tfm

#endif // TFM_LOWERING_EXTRACTPROGRAM_H
