//===- TfmOps.cpp - Verifiers of the tfm ops ------------------------------===//
//
// The verifiers check the shape rules of Program.h's KernelOp so that the
// Halide half can trust every shape it is handed.
//
//===----------------------------------------------------------------------===//
#include "tfm/Dialect/TfmOps.h"

#include "mlir/IR/OpImplementation.h"
#include "mlir/Interfaces/FunctionInterfaces.h"

using namespace mlir;
using namespace tfm;

#include "tfm/Dialect/TfmEnums.cpp.inc"

namespace {
/// A dynamic dimension (token rows of a prefill call) matches any size.
bool dimsMatch(int64_t a, int64_t b) {
  return a == b || ShapedType::isDynamic(a) || ShapedType::isDynamic(b);
}

RankedTensorType tensorType(Value v) {
  return cast<RankedTensorType>(v.getType());
}

LogicalResult expectRank(Operation *op, StringRef what, Value v, int64_t rank) {
  auto type = tensorType(v);
  if (type.getRank() != rank)
    return op->emitOpError() << what << " must have rank " << rank
                             << ", found " << type;
  return success();
}

std::string dimString(int64_t d) {
  return ShapedType::isDynamic(d) ? std::string("?") : std::to_string(d);
}
} // namespace

LogicalResult WeightOp::verify() {
  if (getName().empty())
    return emitOpError("needs a non-empty manifest name");
  if (!getType().hasStaticShape())
    return emitOpError() << "weight '" << getName()
                         << "' must have a static shape, found " << getType();
  return success();
}

LogicalResult KvCacheOp::verify() {
  if (failed(expectRank(*this, "a cache layer", getResult(), 2)))
    return failure();
  if (!getType().hasStaticShape())
    return emitOpError() << "cache layer must be [contextLength, kvDim] with "
                            "static sizes, found "
                         << getType();
  if (getLayer() < 0)
    return emitOpError() << "layer must be >= 0, found " << getLayer();
  return success();
}

LogicalResult EmbeddingOp::verify() {
  if (failed(expectRank(*this, "table", getTable(), 2)) ||
      failed(expectRank(*this, "tokens", getTokens(), 1)) ||
      failed(expectRank(*this, "result", getResult(), 2)))
    return failure();
  auto table = tensorType(getTable());
  auto result = getType();
  if (!dimsMatch(result.getDimSize(0), tensorType(getTokens()).getDimSize(0)))
    return emitOpError() << "result rows " << dimString(result.getDimSize(0))
                         << " must equal the number of tokens "
                         << dimString(tensorType(getTokens()).getDimSize(0));
  if (result.getDimSize(1) != table.getDimSize(1))
    return emitOpError() << "result width " << result.getDimSize(1)
                         << " must equal the table width "
                         << table.getDimSize(1);
  return success();
}

/// The shared rules of the norms: [T, D] in and out, each per-column vector
/// [D], eps positive.
static LogicalResult verifyNorm(Operation *op, Value input,
                                ArrayRef<Value> vectors,
                                ArrayRef<StringRef> names, Type result,
                                double eps) {
  if (failed(expectRank(op, "input", input, 2)))
    return failure();
  auto inputType = tensorType(input);
  for (auto [vector, name] : llvm::zip(vectors, names)) {
    if (failed(expectRank(op, name, vector, 1)))
      return failure();
    if (tensorType(vector).getDimSize(0) != inputType.getDimSize(1))
      return op->emitOpError() << name << " length "
                               << tensorType(vector).getDimSize(0)
                               << " must equal the input width "
                               << inputType.getDimSize(1);
  }
  if (result != inputType)
    return op->emitOpError() << "result type " << result
                             << " must equal the input type " << inputType;
  if (!(eps > 0.0))
    return op->emitOpError() << "eps must be positive, found " << eps;
  return success();
}

LogicalResult RmsNormOp::verify() {
  return verifyNorm(*this, getInput(), {getWeight()}, {"weight"}, getType(),
                    getEps().convertToDouble());
}

LogicalResult LayerNormOp::verify() {
  return verifyNorm(*this, getInput(), {getWeight(), getBias()},
                    {"weight", "bias"}, getType(), getEps().convertToDouble());
}

LogicalResult LinearOp::verify() {
  if (failed(expectRank(*this, "input", getInput(), 2)) ||
      failed(expectRank(*this, "weight", getWeight(), 2)) ||
      failed(expectRank(*this, "result", getResult(), 2)))
    return failure();
  auto input = tensorType(getInput());
  auto weight = tensorType(getWeight());
  auto result = getType();
  if (input.getDimSize(1) != weight.getDimSize(1))
    return emitOpError() << "input width (K) " << input.getDimSize(1)
                         << " must equal the weight's second dimension "
                         << weight.getDimSize(1) << " (weight is [N, K])";
  if (!dimsMatch(result.getDimSize(0), input.getDimSize(0)) ||
      result.getDimSize(1) != weight.getDimSize(0))
    return emitOpError() << "result must be [" << dimString(input.getDimSize(0))
                         << ", " << weight.getDimSize(0) << "], found "
                         << result;
  if (Value bias = getBias()) {
    if (failed(expectRank(*this, "bias", bias, 1)))
      return failure();
    if (tensorType(bias).getDimSize(0) != weight.getDimSize(0))
      return emitOpError() << "bias length " << tensorType(bias).getDimSize(0)
                           << " must equal the weight's first dimension (N) "
                           << weight.getDimSize(0);
  }
  return success();
}

LogicalResult AddPositionsOp::verify() {
  if (failed(expectRank(*this, "input", getInput(), 2)) ||
      failed(expectRank(*this, "table", getTable(), 2)))
    return failure();
  auto input = tensorType(getInput());
  auto table = tensorType(getTable());
  if (table.getDimSize(1) != input.getDimSize(1))
    return emitOpError() << "table width " << table.getDimSize(1)
                         << " must equal the input width "
                         << input.getDimSize(1);
  if (getType() != input)
    return emitOpError() << "result type " << getType()
                         << " must equal the input type " << input;
  return success();
}

LogicalResult SliceColsOp::verify() {
  if (failed(expectRank(*this, "input", getInput(), 2)))
    return failure();
  auto input = tensorType(getInput());
  int64_t begin = getBegin(), size = getSize(), width = input.getDimSize(1);
  if (begin < 0 || size <= 0 || begin + size > width)
    return emitOpError() << "columns [" << begin << ", " << begin + size
                         << ") must be a non-empty range inside the input "
                            "width "
                         << width;
  if (getType() != RankedTensorType::get({input.getDimSize(0), size},
                                         input.getElementType()))
    return emitOpError() << "result must be [" << dimString(input.getDimSize(0))
                         << ", " << size << "], found " << getType();
  return success();
}

LogicalResult RopeOp::verify() {
  if (failed(expectRank(*this, "input", getInput(), 2)))
    return failure();
  int64_t headDim = getHeadDim();
  int64_t width = tensorType(getInput()).getDimSize(1);
  if (headDim <= 0 || headDim % 2 != 0)
    return emitOpError() << "head_dim must be positive and even, found "
                         << headDim;
  if (width % headDim != 0)
    return emitOpError() << "input width " << width
                         << " must be divisible by head_dim " << headDim;
  if (!(getTheta().convertToDouble() > 0.0))
    return emitOpError() << "theta must be positive, found "
                         << getTheta().convertToDouble();
  return success();
}

LogicalResult AttentionOp::verify() {
  if (failed(expectRank(*this, "query", getQuery(), 2)) ||
      failed(expectRank(*this, "key cache", getKeyCache(), 2)) ||
      failed(expectRank(*this, "value cache", getValueCache(), 2)))
    return failure();
  int64_t nHeads = getNHeads(), nKvHeads = getNKvHeads(),
          headDim = getHeadDim();
  if (nHeads <= 0 || nKvHeads <= 0 || headDim <= 0)
    return emitOpError() << "n_heads, n_kv_heads and head_dim must be "
                            "positive, found "
                         << nHeads << ", " << nKvHeads << ", " << headDim;
  if (nHeads % nKvHeads != 0)
    return emitOpError() << "n_heads " << nHeads
                         << " must be a multiple of n_kv_heads " << nKvHeads;
  auto query = tensorType(getQuery());
  if (query.getDimSize(1) != nHeads * headDim)
    return emitOpError() << "query width " << query.getDimSize(1)
                         << " must be n_heads*head_dim = " << nHeads * headDim;
  auto keys = tensorType(getKeyCache());
  if (keys != tensorType(getValueCache()))
    return emitOpError() << "key cache " << keys
                         << " and value cache " << getValueCache().getType()
                         << " must have the same type";
  if (keys.getDimSize(1) != nKvHeads * headDim)
    return emitOpError() << "cache width " << keys.getDimSize(1)
                         << " must be n_kv_heads*head_dim = "
                         << nKvHeads * headDim;
  if (getType() != query)
    return emitOpError() << "result type " << getType()
                         << " must equal the query type " << query;
  return success();
}

LogicalResult LastRowOp::verify() {
  if (failed(expectRank(*this, "input", getInput(), 2)))
    return failure();
  auto input = tensorType(getInput());
  if (getType() != RankedTensorType::get({1, input.getDimSize(1)},
                                         input.getElementType()))
    return emitOpError() << "result must be [1, " << input.getDimSize(1)
                         << "], found " << getType();
  return success();
}

LogicalResult KvStoreOp::verify() {
  if (failed(expectRank(*this, "value", getValue(), 2)) ||
      failed(expectRank(*this, "cache", getCache(), 2)))
    return failure();
  auto value = tensorType(getValue());
  auto cache = tensorType(getCache());
  if (value.getDimSize(1) != cache.getDimSize(1))
    return emitOpError() << "value width " << value.getDimSize(1)
                         << " must equal the cache width "
                         << cache.getDimSize(1);
  if (!ShapedType::isDynamic(value.getDimSize(0)) &&
      value.getDimSize(0) > cache.getDimSize(0))
    return emitOpError() << "value has " << value.getDimSize(0)
                         << " rows, more than the cache's "
                         << cache.getDimSize(0);
  return success();
}

YieldOp FusionOp::getYield() {
  return cast<YieldOp>(getBody().front().getTerminator());
}

LogicalResult FusionOp::verify() {
  Block &body = getBody().front();
  if (body.empty() || !isa<YieldOp>(body.back()))
    return emitOpError("body must end with tfm.yield");
  if (getYield().getValues().getTypes() != getResultTypes())
    return emitOpError("tfm.yield operand types must equal the result types");
  return success();
}

LogicalResult LaunchOp::verify() {
  if (auto offsets = getArenaOffsets()) {
    if (offsets->size() != getNumResults())
      return emitOpError() << "arena_offsets has " << offsets->size()
                           << " entries for " << getNumResults()
                           << " results";
    for (int64_t offset : *offsets)
      if (offset != -1 && (offset < 0 || offset % 64 != 0))
        return emitOpError() << "arena offset " << offset
                             << " must be -1 or a multiple of 64";
  }
  return success();
}

LogicalResult LaunchOp::verifySymbolUses(SymbolTableCollection &symbolTable) {
  auto kernel = symbolTable.lookupNearestSymbolFrom<FunctionOpInterface>(
      *this, getKernelAttr());
  if (!kernel)
    return emitOpError() << "kernel '" << getKernel()
                         << "' is not a function of this module";
  auto type = dyn_cast<FunctionType>(kernel.getFunctionType());
  if (!type || !llvm::equal(type.getInputs(), getArgs().getTypes()) ||
      !llvm::equal(type.getResults(), getResultTypes()))
    return emitOpError() << "argument/result types do not match kernel '"
                         << getKernel() << "' of type "
                         << kernel.getFunctionType();
  return success();
}

#define GET_OP_CLASSES
#include "tfm/Dialect/TfmOps.cpp.inc"
