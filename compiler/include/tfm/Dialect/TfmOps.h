//===- TfmOps.h - Ops of the tfm dialect ------------------------*- C++ -*-===//
#ifndef TFM_DIALECT_TFMOPS_H
#define TFM_DIALECT_TFMOPS_H

#include "mlir/Bytecode/BytecodeOpInterface.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/OpDefinition.h"
#include "mlir/IR/SymbolTable.h"
#include "mlir/Interfaces/ControlFlowInterfaces.h"
#include "mlir/Interfaces/InferTypeOpInterface.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

#include "tfm/Dialect/TfmDialect.h"
#include "tfm/Dialect/TfmEnums.h.inc"

namespace tfm {

/// The KV cache: written by kv_store, read by attention (see TfmDialect.td).
struct KvCacheResource
    : public mlir::SideEffects::Resource::Base<KvCacheResource> {
  llvm::StringRef getName() final { return "tfm.kv_cache"; }
};

// Names of the attributes the pipeline attaches outside the ops' own ones.
namespace attrs {
/// Module: array of {name, shape} dictionaries, the weight file's manifest.
constexpr const char kManifest[] = "tfm.manifest";
/// Module: the most token rows one prefill call handles.
constexpr const char kPrefillChunk[] = "tfm.prefill_chunk";
/// Module: the model's context length (rows of each cache layer).
constexpr const char kContextLength[] = "tfm.context_length";
/// Entry function: which entry point it is ("prefill", "decode" or "score").
constexpr const char kEntry[] = "tfm.entry";
/// Entry function: bytes of its activation arena, set by memory planning.
constexpr const char kArenaBytes[] = "tfm.arena_bytes";
/// Kernel function marker (unit attribute).
constexpr const char kKernel[] = "tfm.kernel";
/// Kernel function: the schedule name its code generator uses.
constexpr const char kSchedule[] = "tfm.schedule";
/// Kernel argument/result: the rows are the call's token positions.
constexpr const char kTokenRows[] = "tfm.token_rows";
} // namespace attrs

} // namespace tfm

#define GET_OP_CLASSES
#include "tfm/Dialect/TfmOps.h.inc"

#endif // TFM_DIALECT_TFMOPS_H
