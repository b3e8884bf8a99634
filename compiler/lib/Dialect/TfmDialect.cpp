//===- TfmDialect.cpp - Registration of the tfm dialect -------------------===//
#include "tfm/Dialect/TfmDialect.h"
#include "tfm/Dialect/TfmOps.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/Interfaces/FunctionInterfaces.h"
#include "mlir/IR/DialectImplementation.h"

#include "llvm/ADT/TypeSwitch.h"

using namespace mlir;

#include "tfm/Dialect/TfmDialect.cpp.inc"

#define GET_TYPEDEF_CLASSES
#include "tfm/Dialect/TfmTypes.cpp.inc"

void tfm::TfmDialect::initialize() {
  addTypes<
#define GET_TYPEDEF_LIST
#include "tfm/Dialect/TfmTypes.cpp.inc"
      >();
  addOperations<
#define GET_OP_LIST
#include "tfm/Dialect/TfmOps.cpp.inc"
      >();
}

/// The module attributes the driver reads (TfmDialect.td) have the types it
/// expects, wherever they come from: the builder, a pass or a hand edit.
LogicalResult tfm::TfmDialect::verifyOperationAttribute(Operation *op, NamedAttribute attr) {
  StringRef name = attr.getName().getValue();
  auto positiveInteger = [&]() -> LogicalResult {
    auto value = dyn_cast<IntegerAttr>(attr.getValue());
    if (!value || value.getInt() <= 0)
      return op->emitError() << "'" << name << "' must be a positive integer, found "
                             << attr.getValue();
    return success();
  };
  if (name == attrs::kPrefillChunk || name == attrs::kContextLength ||
      name == attrs::kVocabSize || name == attrs::kKvCacheBytes) {
    if (!isa<ModuleOp>(op))
      return op->emitError() << "'" << name << "' belongs on the module";
    return positiveInteger();
  }
  // An entry or a kernel is a function with a body: what the passes and
  // the code generators walk.
  if (name == attrs::kEntry || name == attrs::kKernel) {
    auto fn = dyn_cast<FunctionOpInterface>(op);
    if (!fn || fn.isExternal() || !llvm::hasSingleElement(fn.getFunctionBody()))
      return op->emitError() << "'" << name << "' belongs on a function with a body of one block";
  }
  if (name == attrs::kEntry) {
    auto entry = dyn_cast<StringAttr>(attr.getValue());
    if (!entry ||
        !llvm::is_contained({"prefill", "decode", "score", "encode"}, entry.getValue()))
      return op->emitError() << "'" << name
                             << "' must be \"prefill\", \"decode\", \"score\" or "
                                "\"encode\", found "
                             << attr.getValue();
    return success();
  }
  if (name == attrs::kConfig || name == attrs::kTarget || name == attrs::kSchedule) {
    if (!isa<StringAttr>(attr.getValue()))
      return op->emitError() << "'" << name << "' must be a string, found " << attr.getValue();
    return success();
  }
  if (name == attrs::kArenaBytes) {
    auto value = dyn_cast<IntegerAttr>(attr.getValue());
    if (!value || value.getInt() < 0)
      return op->emitError() << "'" << name << "' must be a non-negative integer, found "
                             << attr.getValue();
    return success();
  }
  if (name == attrs::kKernel) {
    if (!isa<UnitAttr>(attr.getValue()))
      return op->emitError() << "'" << name << "' is a unit attribute, found " << attr.getValue();
    return success();
  }
  return op->emitError() << "unknown tfm attribute '" << name << "'";
}

/// Kernel arguments and results: `tfm.token_rows` and `tfm.source_cache`,
/// unit attributes.
static LogicalResult verifyValueAttribute(Operation *op, NamedAttribute attr) {
  if (attr.getName() != tfm::attrs::kTokenRows && attr.getName() != tfm::attrs::kSourceCache)
    return op->emitError() << "unknown tfm argument/result attribute '"
                           << attr.getName().getValue() << "'";
  if (!isa<UnitAttr>(attr.getValue()))
    return op->emitError() << "'" << attr.getName().getValue() << "' is a unit attribute, found "
                           << attr.getValue();
  return success();
}

LogicalResult tfm::TfmDialect::verifyRegionArgAttribute(Operation *op, unsigned, unsigned,
                                                        NamedAttribute attr) {
  return verifyValueAttribute(op, attr);
}

LogicalResult tfm::TfmDialect::verifyRegionResultAttribute(Operation *op, unsigned, unsigned,
                                                           NamedAttribute attr) {
  return verifyValueAttribute(op, attr);
}

LogicalResult tfm::BlocksType::verify(function_ref<InFlightDiagnostic()> emitError,
                                      StringRef format) {
  if (!parseBlockFormat(format))
    return emitError() << "!tfm.blocks: unknown block format \"" << format
                       << "\", expected one of q8_0, q4_0, q4_k, q5_k, q6_k";
  return success();
}
