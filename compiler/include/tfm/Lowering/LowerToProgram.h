//===- LowerToProgram.h - config or tfm IR -> passes -> Program -*- C++ -*-===//
//
// The MLIR half of tfmc behind an MLIR-free interface: callers (tfmc, tests)
// include no MLIR header.
//
//===----------------------------------------------------------------------===//
#ifndef TFM_LOWERING_LOWERTOPROGRAM_H
#define TFM_LOWERING_LOWERTOPROGRAM_H

#include "tfm/Program/Program.h"
#include "tfm/common/ModelSpec.h"
#include "tfm/common/WeightFileType.h"

#include "llvm/Support/Error.h"

#include <cstdint>
#include <string>
#include <vector>

namespace tfm {

struct LoweringOptions {
  /// Explicit target string (resolveTarget in tfm/common/Targets.h). A
  /// config needs one; a .mlir file keeps its module's `tfm.target` when
  /// this is empty.
  std::string target;
  /// Configs only: the most tokens one prefill (an encoder: one encode)
  /// call's kernels take; 0: min(contextLength, 128), an encoder's
  /// contextLength.
  int64_t prefillChunk = 0;
  /// Configs only: the format each weight is read in (absent: f32).
  WeightTypes weightTypes;
  /// Configs only: what the KV cache holds (f32, f16 or bf16).
  DType cacheType = DType::F32;
  /// --tfm-select-schedules overrides: a schedule name, or kernel=name,...
  std::string scheduleOverrides;
  std::string tuningFile; // schedules recorded by tfmc --tune; empty: none
  /// Attention's key tile (tfm-choose-attention): 0 all keys at once, N
  /// FlashAttention's tiles of N keys, -1 the pass's default.
  int64_t attentionKeyTile = -1;
  /// Linear inputs quantized to 8 bits in blocks of this many values for
  /// integer dot products with block-format weights
  /// (tfm-quantize-activations); 0 keeps them f32.
  int64_t activationBlock = 0;
  /// Inputs of products with bf16 weights rounded to bf16, for AMX's bf16
  /// tiles (tfm-quantize-activations).
  bool bf16Activations = false;
  /// Passes of the default pipeline to leave out (Passes.h).
  std::vector<std::string> skipPasses;
  /// Non-empty: this textual pass pipeline instead of the default one,
  /// e.g. "builtin.module(tfm-outline-kernels,tfm-plan-memory)".
  std::string passPipeline;
  /// Non-empty: the module before the passes (input.mlir) and after every
  /// pass, in the pass manager's file tree under this folder.
  std::string dumpIrDir;
  /// Non-empty: the final module, with its locations, written there; tfmc
  /// compiles it again as it is.
  std::string emitMlirPath;
};

/// Builds the tfm IR of `spec`, runs the pipeline and reads the result.
llvm::Expected<Program> lowerConfig(const ModelSpec &spec, const LoweringOptions &options);

/// Parses tfm IR of any stage from `path`, runs the pipeline (which leaves
/// what earlier passes did as it is) and reads the result. The file is
/// untrusted: read bounded (tfm/Lowering/IrFile.h), and the module checked
/// as a whole before anything is generated from it.
llvm::Expected<Program> lowerMlirFile(const std::string &path, const LoweringOptions &options);

/// The same for IR text named `name` in messages.
llvm::Expected<Program> lowerMlirText(llvm::StringRef text, const std::string &name,
                                      const LoweringOptions &options);

} // namespace tfm

#endif // TFM_LOWERING_LOWERTOPROGRAM_H
