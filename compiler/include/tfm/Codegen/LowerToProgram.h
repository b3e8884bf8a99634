//===- LowerToProgram.h - ModelSpec -> tfm IR -> passes -> Program -*- C++ -*-===//
//
// The MLIR half of tfmc behind an MLIR-free interface: callers (tfmc, tests)
// include no MLIR header.
//
//===----------------------------------------------------------------------===//
#ifndef TFM_CODEGEN_LOWERTOPROGRAM_H
#define TFM_CODEGEN_LOWERTOPROGRAM_H

#include "tfm/Codegen/Program.h"
#include "tfm/common/ModelSpec.h"

#include <cstdint>
#include <string>

namespace tfm {

struct LoweringOptions {
  std::string schedule = "fast";
  int64_t prefillChunk = 0; // 0: min(contextLength, 128)
  std::string dumpIrDir;    // non-empty: write <dir>/NN-<stage>.mlir for the built IR and after every pass
  std::string emitMlirPath; // non-empty: write the final module there
};

/// Builds the tfm IR for spec, runs the pipeline, reads the result into
/// `out`. On failure returns false and a message in `error`.
bool lowerToProgram(const ModelSpec &spec, const LoweringOptions &options,
                    Program &out, std::string &error);

} // namespace tfm

#endif // TFM_CODEGEN_LOWERTOPROGRAM_H
