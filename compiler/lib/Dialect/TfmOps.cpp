//===- TfmOps.cpp - Types, inference and verifiers of the tfm ops ---------===//
//
// ODS carries the ranks, element types, attribute ranges and the result
// types that follow from operands; what is left here are the relations
// between operand sizes, so that the Halide half can trust every shape it is
// handed.
//
//===----------------------------------------------------------------------===//
#include "tfm/Dialect/TfmOps.h"
#include "tfm/common/RelativeBuckets.h"

#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/OpImplementation.h"
#include "mlir/Interfaces/FunctionInterfaces.h"

using namespace mlir;
using namespace tfm;

bool tfm::isRowsType(Type type) {
  auto tensor = dyn_cast<RankedTensorType>(type);
  return tensor && tensor.getRank() == 2 && tensor.getElementType().isF32() &&
         !ShapedType::isDynamic(tensor.getDimSize(1)) && !tensor.getEncoding();
}

bool tfm::isStaticTensorType(Type type, int64_t rank) {
  auto tensor = dyn_cast<RankedTensorType>(type);
  if (!tensor || tensor.getRank() != rank || !tensor.hasStaticShape() || tensor.getEncoding())
    return false;
  std::optional<ElementEncoding> encoding = weightEncoding(tensor.getElementType());
  if (!encoding)
    return false;
  return !encoding->block || (rank == 2 && tensor.getDimSize(1) % encoding->blockElements() == 0);
}

Type tfm::weightElementType(MLIRContext *context, const ElementEncoding &encoding) {
  if (encoding.block)
    return BlocksType::get(context, blockLayout(*encoding.block).name);
  switch (encoding.plain) {
  case DType::F16:
    return Float16Type::get(context);
  case DType::BF16:
    return BFloat16Type::get(context);
  case DType::F32:
  case DType::I32: // not a weight type; the verifiers refuse it
    break;
  }
  return Float32Type::get(context);
}

std::optional<ElementEncoding> tfm::weightEncoding(Type elementType) {
  if (auto blocks = dyn_cast<BlocksType>(elementType))
    if (std::optional<BlockFormat> format = parseBlockFormat(blocks.getFormat()))
      return ElementEncoding{DType::F32, format};
  if (elementType.isF32())
    return ElementEncoding{DType::F32, std::nullopt};
  if (elementType.isF16())
    return ElementEncoding{DType::F16, std::nullopt};
  if (elementType.isBF16())
    return ElementEncoding{DType::BF16, std::nullopt};
  return std::nullopt;
}

bool tfm::isTokensType(Type type) {
  auto tensor = dyn_cast<RankedTensorType>(type);
  return tensor && tensor.getRank() == 1 && tensor.getElementType().isSignlessInteger(32) &&
         !tensor.getEncoding();
}

MemRefType tfm::cacheBufferType(Type element, int64_t rows, int64_t cols, bool transposed,
                                bool sliding) {
  if (!transposed && !sliding)
    return MemRefType::get({rows, cols}, element);
  SmallVector<int64_t, 2> strides = transposed ? SmallVector<int64_t, 2>{1, rows}
                                               : SmallVector<int64_t, 2>{cols, 1};
  int64_t offset = sliding ? ShapedType::kDynamic : 0;
  return MemRefType::get({rows, cols}, element,
                         StridedLayoutAttr::get(element.getContext(), offset, strides));
}

bool tfm::isSlidingCache(MemRefType type) {
  auto strided = dyn_cast<StridedLayoutAttr>(type.getLayout());
  return strided && ShapedType::isDynamic(strided.getOffset());
}

bool tfm::isTransposedCache(MemRefType type) {
  return type == cacheBufferType(type.getElementType(), type.getDimSize(0), type.getDimSize(1),
                                 /*transposed=*/true, isSlidingCache(type));
}

bool tfm::isCacheBufferType(Type type) {
  auto memref = dyn_cast<MemRefType>(type);
  if (!memref || memref.getRank() != 2 || !memref.hasStaticShape() || memref.getMemorySpace())
    return false;
  Type element = memref.getElementType();
  if (!element.isF32() && !element.isF16() && !element.isBF16())
    return false;
  for (bool transposed : {false, true})
    for (bool sliding : {false, true})
      if (memref == cacheBufferType(element, memref.getDimSize(0), memref.getDimSize(1),
                                    transposed, sliding))
        return true;
  return false;
}

namespace {

RankedTensorType tensorType(Value v) { return cast<RankedTensorType>(v.getType()); }

int64_t width(Value v) { return cast<ShapedType>(v.getType()).getDimSize(1); }

/// The rows type [rows, cols] of f32.
RankedTensorType rowsType(MLIRContext *context, int64_t rows, int64_t cols) {
  return RankedTensorType::get({rows, cols}, Float32Type::get(context));
}

/// A verifier of a vector operand that scales or shifts each column.
LogicalResult checkPerColumn(Operation *op, StringRef name, Value vector, Value input) {
  int64_t length = tensorType(vector).getDimSize(0);
  if (length != width(input))
    return op->emitOpError() << name << " length " << length
                             << " must equal the input width " << width(input);
  return success();
}

/// The declaration `symbol` names, of kind OpT, or an error naming what.
template <typename OpT>
FailureOr<OpT> lookupDecl(Operation *user, SymbolTableCollection &symbols,
                          FlatSymbolRefAttr symbol, StringRef what) {
  auto decl = symbols.lookupNearestSymbolFrom<OpT>(user, symbol);
  if (!decl)
    return user->emitOpError() << "'" << symbol.getValue() << "' is not a " << what
                               << " of this module";
  return decl;
}

} // namespace

//===----------------------------------------------------------------------===//
// Storage
//===----------------------------------------------------------------------===//

LogicalResult WeightOp::verifySymbolUses(SymbolTableCollection &symbols) {
  FailureOr<WeightDeclOp> decl =
      lookupDecl<WeightDeclOp>(*this, symbols, getNameAttr(), "tfm.weight_decl");
  if (failed(decl))
    return failure();
  if (decl->getType() != getType())
    return emitOpError() << "type " << getType() << " differs from the declaration's "
                         << decl->getType();
  return success();
}

LogicalResult KvCacheOp::verifySymbolUses(SymbolTableCollection &symbols) {
  FailureOr<CacheDeclOp> decl =
      lookupDecl<CacheDeclOp>(*this, symbols, getCacheAttr(), "tfm.cache_decl");
  if (failed(decl))
    return failure();
  if (decl->getType() != getType())
    return emitOpError() << "type " << getType() << " differs from the declaration's "
                         << decl->getType();
  return success();
}

//===----------------------------------------------------------------------===//
// Kernel ops
//===----------------------------------------------------------------------===//

LogicalResult EmbeddingOp::inferReturnTypes(MLIRContext *context, std::optional<Location> location,
                                            Adaptor adaptor,
                                            SmallVectorImpl<Type> &inferred) {
  // Inference runs before the operands' ODS type checks: check what it reads.
  if (!isStaticTensorType(adaptor.getTable().getType(), 2) ||
      !isTokensType(adaptor.getTokens().getType()))
    return emitOptionalError(location, "'tfm.embedding' op expects a static 2-D weight table and "
                             "1-D i32 tokens, found ", adaptor.getTable().getType(), " and ",
                             adaptor.getTokens().getType());
  inferred.push_back(rowsType(context, tensorType(adaptor.getTokens()).getDimSize(0),
                              tensorType(adaptor.getTable()).getDimSize(1)));
  return success();
}

LogicalResult CacheDeclOp::verify() {
  auto type = cast<MemRefType>(getType());
  if (isSlidingCache(type) != getWindow().has_value())
    return emitOpError() << "type " << type
                         << (getWindow() ? " holds every position, but a window is given"
                                         : " slides, but no window is given");
  if (getBase() && !getWindow() && !getSource())
    return emitOpError() << "has a base slot, but neither slides (no window) nor is a source "
                            "cache";
  if (getSource() && getWindow())
    return emitOpError() << "is a source (cross-attention) cache with a window: expected "
                            "every source position";
  if (getWindow() && static_cast<int64_t>(*getWindow()) > type.getDimSize(0))
    return emitOpError() << "window " << *getWindow() << " is longer than its "
                         << type.getDimSize(0) << " rows";
  return success();
}

LogicalResult RmsNormOp::verify() {
  return checkPerColumn(*this, "weight", getWeight(), getInput());
}

LogicalResult HeadRmsNormOp::verify() {
  int64_t headDim = getHeadDim();
  if (width(getInput()) % headDim != 0)
    return emitOpError() << "input width " << width(getInput())
                         << " must be divisible by head_dim " << headDim;
  int64_t length = tensorType(getWeight()).getDimSize(0);
  if (length != headDim)
    return emitOpError() << "weight length " << length << " must equal head_dim " << headDim;
  return success();
}

LogicalResult LayerNormOp::verify() {
  if (failed(checkPerColumn(*this, "weight", getWeight(), getInput())))
    return failure();
  if (Value bias = getBias())
    return checkPerColumn(*this, "bias", bias, getInput());
  return success();
}

LogicalResult LinearOp::verify() {
  int64_t block = getActivationBlock();
  Type element = tensorType(getWeight()).getElementType();
  if (getBf16Input()) {
    if (!element.isBF16())
      return emitOpError() << "bf16_input needs a bf16 weight, found " << element;
    if (block != 0)
      return emitOpError() << "bf16_input and activation_block " << block
                           << " both choose the input's type: expected one of them";
  }
  if (block == 0)
    return success();
  std::optional<ElementEncoding> encoding = weightEncoding(element);
  if (!encoding || !encoding->block)
    return emitOpError() << "activation_block " << block << " needs a block-format weight "
                         << "(!tfm.blocks<...>), found " << element;
  int64_t weightBlock = blockLayout(*encoding->block).blockElements;
  if (block != 32 && block != weightBlock)
    return emitOpError() << "activation_block " << block << " is not supported with a "
                         << blockLayout(*encoding->block).name
                         << " weight: expected 0 (f32 input), 32 or its block, " << weightBlock;
  return success();
}

LogicalResult LinearOp::inferReturnTypes(MLIRContext *context, std::optional<Location> location,
                                         Adaptor adaptor, SmallVectorImpl<Type> &inferred) {
  if (!isRowsType(adaptor.getInput().getType()) ||
      !isStaticTensorType(adaptor.getWeight().getType(), 2) ||
      (adaptor.getBias() && !isStaticTensorType(adaptor.getBias().getType(), 1)))
    return emitOptionalError(location, "'tfm.linear' op expects rows, a static 2-D weight and "
                             "an optional 1-D bias");
  RankedTensorType input = tensorType(adaptor.getInput());
  RankedTensorType weight = tensorType(adaptor.getWeight());
  if (input.getDimSize(1) != weight.getDimSize(1))
    return emitOptionalError(location, "'tfm.linear' op input width (K) ", input.getDimSize(1),
                             " must equal the weight's second dimension ",
                             weight.getDimSize(1), " (weight is [N, K])");
  if (Value bias = adaptor.getBias())
    if (tensorType(bias).getDimSize(0) != weight.getDimSize(0))
      return emitOptionalError(location, "'tfm.linear' op bias length ",
                               tensorType(bias).getDimSize(0),
                               " must equal the weight's first dimension (N) ",
                               weight.getDimSize(0));
  inferred.push_back(rowsType(context, input.getDimSize(0), weight.getDimSize(0)));
  return success();
}

LogicalResult AddPositionsOp::verify() {
  if (width(getTable()) != width(getInput()))
    return emitOpError() << "table width " << width(getTable())
                         << " must equal the input width " << width(getInput());
  if (Value types = getTokenTypes())
    if (width(types) != width(getInput()))
      return emitOpError() << "token_types width " << width(types)
                           << " must equal the input width " << width(getInput());
  return success();
}

LogicalResult SliceColsOp::inferReturnTypes(MLIRContext *context,
                                            std::optional<Location> location, Adaptor adaptor,
                                            SmallVectorImpl<Type> &inferred) {
  if (!isRowsType(adaptor.getInput().getType()))
    return emitOptionalError(location, "'tfm.slice_cols' op expects rows, found ",
                             adaptor.getInput().getType());
  RankedTensorType input = tensorType(adaptor.getInput());
  int64_t begin = adaptor.getBegin(), size = adaptor.getSize();
  if (begin + size > input.getDimSize(1))
    return emitOptionalError(location, "'tfm.slice_cols' op columns [", begin, ", ",
                             begin + size, ") must lie inside the input width ",
                             input.getDimSize(1));
  inferred.push_back(rowsType(context, input.getDimSize(0), size));
  return success();
}

LogicalResult RopeOp::verify() {
  int64_t headDim = getHeadDim(), rotaryDim = getRotaryDim();
  if (rotaryDim % 2 != 0 || rotaryDim > headDim)
    return emitOpError() << "rotary_dim must be even (RoPE rotates pairs) and at most head_dim "
                         << headDim << ", found " << rotaryDim;
  if (width(getInput()) % headDim != 0)
    return emitOpError() << "input width " << width(getInput())
                         << " must be divisible by head_dim " << headDim;
  llvm::ArrayRef<double> factors = getFreqFactors();
  if (!factors.empty() && static_cast<int64_t>(factors.size()) != rotaryDim / 2)
    return emitOpError() << "freq_factors has " << factors.size()
                         << " entries, expected none or one per rotated pair ("
                         << rotaryDim / 2 << ")";
  for (double f : factors)
    if (!(f > 0.0) || !std::isfinite(f))
      return emitOpError() << "freq_factors holds " << f << ", expected positive numbers";
  double magnitude = getMagnitude().convertToDouble();
  if (!(magnitude > 0.0) || !std::isfinite(magnitude))
    return emitOpError() << "magnitude " << magnitude << ", expected a positive number";
  return success();
}

LogicalResult AttentionOp::verify() {
  int64_t nHeads = getNHeads(), nKvHeads = getNKvHeads(), headDim = getHeadDim();
  if (nHeads % nKvHeads != 0)
    return emitOpError() << "n_heads " << nHeads << " must be a multiple of n_kv_heads "
                         << nKvHeads;
  if (width(getQuery()) != nHeads * headDim)
    return emitOpError() << "query width " << width(getQuery())
                         << " must be n_heads*head_dim = " << nHeads * headDim;
  auto keys = cast<MemRefType>(getKeyCache().getType());
  auto values = cast<MemRefType>(getValueCache().getType());
  if (keys.getShape() != values.getShape())
    return emitOpError() << "key cache " << keys << " and value cache " << values
                         << " must have the same shape";
  if (keys.getDimSize(1) != nKvHeads * headDim)
    return emitOpError() << "cache width " << keys.getDimSize(1)
                         << " must be n_kv_heads*head_dim = " << nKvHeads * headDim;
  // A sliding buffer drops the positions before a window: only a windowed
  // read of it is whole, and its keys and values slide together.
  if (isSlidingCache(keys) != isSlidingCache(values))
    return emitOpError() << "key cache " << keys << " and value cache " << values
                         << " must both hold every position or both slide";
  if (!getCausal() && getWindow() > 0)
    return emitOpError() << "has a window of " << getWindow()
                         << " without causal masking: expected a window only where causal";
  if (isSlidingCache(keys) && getWindow() == 0)
    return emitOpError() << "reads sliding caches " << keys
                         << " without a window: expected window > 0";
  if (Value table = getRelativeBias()) {
    auto shape = tensorType(table).getShape();
    int64_t buckets = shape[0], maxDistance = getRelativeMaxDistance();
    int64_t exact = getCausal() ? buckets / 2 : buckets / 4;
    if (shape[1] != nHeads || buckets % (getCausal() ? 2 : 4) != 0 || maxDistance <= exact ||
        maxDistance > kMaxRelativeDistance)
      return emitOpError() << "relative_bias " << tensorType(table)
                           << " with relative_max_distance " << maxDistance
                           << ": expected [buckets, n_heads = " << nHeads
                           << "], buckets a multiple of " << (getCausal() ? 2 : 4)
                           << " and a maximum distance past the exact ones, at most "
                           << kMaxRelativeDistance;
  } else if (getRelativeMaxDistance() != 0) {
    return emitOpError() << "has relative_max_distance " << getRelativeMaxDistance()
                         << " without a relative_bias table";
  }
  ArrayRef<float> slopes = getAlibiSlopes();
  if (!slopes.empty() && static_cast<int64_t>(slopes.size()) != nHeads)
    return emitOpError() << "alibi_slopes has " << slopes.size()
                         << " slopes, expected none or one per head (" << nHeads << ")";
  return success();
}

LogicalResult LastRowOp::inferReturnTypes(MLIRContext *context, std::optional<Location> location,
                                          Adaptor adaptor, SmallVectorImpl<Type> &inferred) {
  if (!isRowsType(adaptor.getInput().getType()))
    return emitOptionalError(location, "'tfm.last_row' op expects rows, found ",
                             adaptor.getInput().getType());
  inferred.push_back(rowsType(context, 1, tensorType(adaptor.getInput()).getDimSize(1)));
  return success();
}

LogicalResult KvStoreOp::verify() {
  auto cache = cast<MemRefType>(getCache().getType());
  if (width(getValue()) != cache.getDimSize(1))
    return emitOpError() << "value width " << width(getValue())
                         << " must equal the cache width " << cache.getDimSize(1);
  int64_t rows = tensorType(getValue()).getDimSize(0);
  if (!ShapedType::isDynamic(rows) && rows > cache.getDimSize(0))
    return emitOpError() << "value has " << rows << " rows, more than the cache's "
                         << cache.getDimSize(0);
  return success();
}

//===----------------------------------------------------------------------===//
// Structure ops
//===----------------------------------------------------------------------===//

YieldOp FusionOp::getYield() { return cast<YieldOp>(getBody().front().getTerminator()); }

LogicalResult FusionOp::verify() {
  // Runs before the single-block-terminator trait's check: the body may not
  // end in a yield yet.
  Block &body = getBody().front();
  auto yield = body.empty() ? YieldOp() : dyn_cast<YieldOp>(body.back());
  if (!yield)
    return emitOpError("body must end in tfm.yield");
  if (yield.getValues().getTypes() != getResultTypes())
    return emitOpError("tfm.yield operand types must equal the result types");
  return success();
}

LogicalResult LaunchOp::verify() {
  if (auto offsets = getArenaOffsets()) {
    if (offsets->size() != getNumResults())
      return emitOpError() << "arena_offsets has " << offsets->size() << " entries for "
                           << getNumResults() << " results";
    for (int64_t offset : *offsets)
      if (offset != -1 && (offset < 0 || offset % 64 != 0))
        return emitOpError() << "arena offset " << offset << " must be -1 or a multiple of 64";
  }
  return success();
}

LogicalResult LaunchOp::verifySymbolUses(SymbolTableCollection &symbolTable) {
  auto kernel = symbolTable.lookupNearestSymbolFrom<FunctionOpInterface>(*this, getKernelAttr());
  if (!kernel)
    return emitOpError() << "kernel '" << getKernel() << "' is not a function of this module";
  auto type = dyn_cast<FunctionType>(kernel.getFunctionType());
  if (!type || !llvm::equal(type.getInputs(), getArgs().getTypes()) ||
      !llvm::equal(type.getResults(), getResultTypes()))
    return emitOpError() << "argument/result types do not match kernel '" << getKernel()
                         << "' of type " << kernel.getFunctionType();
  return success();
}

#define GET_OP_CLASSES
#include "tfm/Dialect/TfmOps.cpp.inc"
