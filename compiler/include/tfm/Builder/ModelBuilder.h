//===- ModelBuilder.h - ModelSpec -> tfm IR ---------------------*- C++ -*-===//
#ifndef TFM_BUILDER_MODELBUILDER_H
#define TFM_BUILDER_MODELBUILDER_H

#include "tfm/common/ModelSpec.h"
#include "tfm/common/WeightFileType.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/OwningOpRef.h"

#include "llvm/Support/Error.h"

namespace tfm {

/// Builds the module of one model, named after it:
///  - a `tfm.weight_decl` per weight tensor, in weight-file order
///    (tfm/common/TensorNames.h), and a `tfm.cache_decl` per layer's key
///    and value cache (row layout; a pass may transpose it);
///  - `func.func @prefill(tensor<?xi32>)` and `@decode(tensor<1xi32>)`,
///    both returning the last token's logits as tensor<1xVxf32>, and
///    `@score(tensor<?xi32>)`, returning every token's, tensor<?xVxf32>;
///  - the module attributes of TfmDialect.td: prefill chunk, context
///    length, vocabulary size, the canonical config and `target` (an
///    explicit target string, tfm/common/Targets.h).
/// Each weight's element type is its entry in `weightTypes` (f32 when it
/// has none); an entry naming no tensor of the model is an error. The
/// caches hold `cacheType` (f32, f16 or bf16).
/// Ops carry the layer they belong to as a location ("blk.3.attn").
/// `prefillChunk` must be in [1, contextLength]; an unsupported spec is an
/// error naming the field.
llvm::Expected<mlir::OwningOpRef<mlir::ModuleOp>>
buildModel(mlir::MLIRContext &context, const ModelSpec &spec, int64_t prefillChunk,
           llvm::StringRef target, const WeightTypes &weightTypes, DType cacheType);

} // namespace tfm

#endif // TFM_BUILDER_MODELBUILDER_H
