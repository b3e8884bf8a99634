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
#include "tfm/common/ElementEncoding.h"

namespace tfm {

// The type constraints of TfmDialect.td.
/// 2-D f32 tensor with a static width; its rows may be dynamic (token rows).
bool isRowsType(mlir::Type type);
/// Weight tensor of `rank` with every size static: f32, f16, bf16, or (rank
/// 2) a block format whose rows hold whole blocks.
bool isStaticTensorType(mlir::Type type, int64_t rank);

/// The element type of a weight stored as `encoding`: f32, f16, bf16 or
/// !tfm.blocks<"name">.
mlir::Type weightElementType(mlir::MLIRContext *context, const ElementEncoding &encoding);
/// The encoding a weight element type stands for; none for other types.
std::optional<ElementEncoding> weightEncoding(mlir::Type elementType);
/// 1-D i32 tensor.
bool isTokensType(mlir::Type type);
/// Static 2-D f32, f16 or bf16 memref laid out by rows or transposed,
/// holding every position or sliding (see cacheBufferType).
bool isCacheBufferType(mlir::Type type);

/// A cache layer of `rows` positions by `cols` of `element` (f32, f16 or
/// bf16): rows contiguous, or each column contiguous across positions
/// (`transposed`, strided<[1, rows]>). A `sliding` buffer holds the last
/// `rows` positions, not the first: its first row is a position that moves
/// as the sequence grows, the memref's dynamic offset (`offset: ?`).
mlir::MemRefType cacheBufferType(mlir::Type element, int64_t rows, int64_t cols, bool transposed,
                                 bool sliding);
bool isTransposedCache(mlir::MemRefType type);
bool isSlidingCache(mlir::MemRefType type);

namespace OpTrait {
// Markers (see TfmDialect.td); the passes ask op->hasTrait<...>().
template <typename ConcreteType>
class Epilogue : public mlir::OpTrait::TraitBase<ConcreteType, Epilogue> {};
template <typename ConcreteType>
class RowNormalization : public mlir::OpTrait::TraitBase<ConcreteType, RowNormalization> {};
template <typename ConcreteType>
class FusionRoot : public mlir::OpTrait::TraitBase<ConcreteType, FusionRoot> {};
} // namespace OpTrait

// Names of the attributes the pipeline attaches outside the ops' own ones.
namespace attrs {
/// Module: the most token rows one prefill call handles.
constexpr const char kPrefillChunk[] = "tfm.prefill_chunk";
/// Module: the model's context length (rows of each cache layer).
constexpr const char kContextLength[] = "tfm.context_length";
/// Module: the vocabulary size (columns of the logits).
constexpr const char kVocabSize[] = "tfm.vocab_size";
/// Module: the canonical JSON of the config the module was built from.
constexpr const char kConfig[] = "tfm.config";
/// Module: the explicit target string (tfm/common/Targets.h).
constexpr const char kTarget[] = "tfm.target";
/// Module: bytes of the KV-cache block, set by memory planning.
constexpr const char kKvCacheBytes[] = "tfm.kv_cache_bytes";
/// Entry function: which entry point it is ("prefill", "decode", "score" or
/// "encode").
constexpr const char kEntry[] = "tfm.entry";
/// Entry function: bytes of its activation arena, set by memory planning.
constexpr const char kArenaBytes[] = "tfm.arena_bytes";
/// Kernel function marker (unit attribute).
constexpr const char kKernel[] = "tfm.kernel";
/// Kernel function: the schedule its code generator uses.
constexpr const char kSchedule[] = "tfm.schedule";
/// Kernel argument/result: the rows are the call's token positions.
constexpr const char kTokenRows[] = "tfm.token_rows";
/// Kernel argument: a source (cross-attention) cache (tfm.cache_decl's
/// `source`), whose rows are the encoded source's (unit attribute).
constexpr const char kSourceCache[] = "tfm.source_cache";
} // namespace attrs

} // namespace tfm

#define GET_OP_CLASSES
#include "tfm/Dialect/TfmOps.h.inc"

#endif // TFM_DIALECT_TFMOPS_H
