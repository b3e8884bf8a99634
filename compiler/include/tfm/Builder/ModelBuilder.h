//===- ModelBuilder.h - ModelSpec -> tfm IR ---------------------*- C++ -*-===//
#ifndef TFM_BUILDER_MODELBUILDER_H
#define TFM_BUILDER_MODELBUILDER_H

#include "tfm/common/ModelSpec.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/OwningOpRef.h"

#include <string>

namespace tfm {

/// Builds the module of one model: `func.func @prefill(tensor<?xi32>)` and
/// `func.func @decode(tensor<1xi32>)`, both returning the logits of the last
/// token as tensor<1xVxf32>, and `func.func @score(tensor<?xi32>)`, which
/// returns the logits of every token, tensor<?xVxf32>. The module carries the weight manifest
/// (`tfm.manifest`, in the order of the weight file), `tfm.prefill_chunk`
/// and `tfm.context_length`. `prefillChunk` must be in [1, contextLength].
/// On an unsupported spec returns null and a message naming the field.
mlir::OwningOpRef<mlir::ModuleOp> buildModel(mlir::MLIRContext &context,
                                             const ModelSpec &spec,
                                             int64_t prefillChunk,
                                             std::string &error);

} // namespace tfm

#endif // TFM_BUILDER_MODELBUILDER_H
