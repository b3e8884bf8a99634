//===- ModelBuilder.cpp - ModelSpec -> tfm IR -----------------------------===//
//
// One layer structure for both families, composed from the spec's features:
// the norm (RMSNorm or LayerNorm), the positions (RoPE on q and k, or a
// learned table added to the embeddings), projection biases, a fused or
// separate q/k/v projection and a gated or plain FFN. Llama follows
// llama2.c / GGUF semantics, GPT-2 Hugging Face's GPT2LMHeadModel.
//
// The weight declarations come from the one tensor table
// (tfm/common/TensorNames.h) and every weight op takes its type from its
// declaration, so names and shapes have a single source.
//
//===----------------------------------------------------------------------===//
#include "tfm/Builder/ModelBuilder.h"
#include "tfm/Dialect/TfmOps.h"
#include "tfm/common/Manifest.h"
#include "tfm/common/TensorNames.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"

#include "llvm/ADT/StringMap.h"

using namespace mlir;

namespace tfm {
namespace {

/// The declarations of the module, by name.
struct Declarations {
  llvm::StringMap<RankedTensorType> weights;
  llvm::StringMap<MemRefType> caches;
};

std::string cacheName(int64_t layer, bool key) {
  return "blk." + std::to_string(layer) + (key ? ".key" : ".value");
}

/// Emits one entry function. `rows` is the token-row dimension of every
/// activation: ShapedType::kDynamic for prefill and score, 1 for decode.
/// `lastRowOnly`: the logits of the call's last token only (prefill), not
/// of every row (score).
class EntryBuilder {
public:
  EntryBuilder(OpBuilder &builder, const ModelSpec &spec, const Declarations &decls,
               int64_t rows, bool lastRowOnly)
      : b(builder), spec(spec), decls(decls), rows(rows), lastRowOnly(lastRowOnly),
        loc(builder.getUnknownLoc()), f32(builder.getF32Type()) {}

  void build(StringRef name) {
    auto tokensType = RankedTensorType::get({rows}, b.getI32Type());
    int64_t logitRows = lastRowOnly ? 1 : rows;
    auto logitsType = RankedTensorType::get({logitRows, spec.vocabSize}, f32);
    auto fn = func::FuncOp::create(b, b.getUnknownLoc(), name,
                                   b.getFunctionType({tokensType}, {logitsType}));
    fn->setAttr(attrs::kEntry, b.getStringAttr(name));
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(fn.addEntryBlock());

    at("embedding");
    Value x = EmbeddingOp::create(b, loc, weight(TensorRole::TokenEmbedding), fn.getArgument(0));
    if (spec.positions == "learned")
      x = AddPositionsOp::create(b, loc, x, weight(TensorRole::PositionEmbedding));
    for (int64_t i = 0; i < spec.nLayers; ++i)
      x = layer(x, i);
    at("output");
    if (lastRowOnly && ShapedType::isDynamic(rows))
      x = LastRowOp::create(b, loc, x);
    Value h = norm(x, TensorRole::OutputNorm);
    Value logits = spec.tiedEmbeddings
                       ? LinearOp::create(b, loc, h, weight(TensorRole::TokenEmbedding), Value())
                       : project(h, TensorRole::Output, -1, /*withBias=*/false);
    func::ReturnOp::create(b, loc, logits);
  }

private:
  /// Ops created from here on belong to `name` (a diagnostic's location).
  void at(const std::string &name) { loc = NameLoc::get(b.getStringAttr(name)); }

  Value layer(Value x, int64_t i) {
    std::string blk = "blk." + std::to_string(i);
    at(blk + ".attn");
    Value h = norm(x, TensorRole::AttnNorm, i);
    Value q, k, v;
    if (spec.fusedQkv()) {
      Value qkv = linear(h, TensorRole::AttnQkv, i);
      q = sliceCols(qkv, 0, spec.qDim());
      k = sliceCols(qkv, spec.qDim(), spec.kvDim());
      v = sliceCols(qkv, spec.qDim() + spec.kvDim(), spec.kvDim());
    } else {
      q = linear(h, TensorRole::AttnQ, i);
      k = linear(h, TensorRole::AttnK, i);
      v = linear(h, TensorRole::AttnV, i);
    }
    if (spec.positions == "rope") {
      q = rope(q);
      k = rope(k);
    }
    Value keyCache = cache(cacheName(i, true));
    Value valueCache = cache(cacheName(i, false));
    KvStoreOp::create(b, loc, k, keyCache);
    KvStoreOp::create(b, loc, v, valueCache);
    Value attended = AttentionOp::create(b, loc, q, keyCache, valueCache,
                                         b.getI64IntegerAttr(spec.nHeads),
                                         b.getI64IntegerAttr(spec.nKvHeads),
                                         b.getI64IntegerAttr(spec.headDim));
    x = AddOp::create(b, loc, x, linear(attended, TensorRole::AttnOutput, i));

    at(blk + ".ffn");
    h = norm(x, TensorRole::FfnNorm, i);
    Value hidden;
    if (spec.gatedFfn()) {
      Value gate = activate(linear(h, TensorRole::FfnGate, i));
      hidden = MulOp::create(b, loc, gate, linear(h, TensorRole::FfnUp, i));
    } else {
      hidden = activate(linear(h, TensorRole::FfnUp, i));
    }
    return AddOp::create(b, loc, x, linear(hidden, TensorRole::FfnDown, i));
  }

  Value weight(TensorRole role, int64_t layer = -1, TensorPart part = TensorPart::Weight) {
    std::string name = TensorId{role, layer, part}.name();
    return WeightOp::create(b, loc, decls.weights.lookup(name), name);
  }

  Value cache(const std::string &name) {
    return KvCacheOp::create(b, loc, decls.caches.lookup(name), name);
  }

  Value norm(Value x, TensorRole role, int64_t layer = -1) {
    FloatAttr eps = b.getF64FloatAttr(spec.normEps);
    Value w = weight(role, layer);
    if (spec.norm == "layer_norm")
      return LayerNormOp::create(b, loc, x, w, weight(role, layer, TensorPart::Bias), eps);
    return RmsNormOp::create(b, loc, x, w, eps);
  }

  /// A projection of the layer, with a bias when the family has biases.
  Value linear(Value x, TensorRole role, int64_t layer) {
    return project(x, role, layer, spec.projectionBias);
  }

  Value project(Value x, TensorRole role, int64_t layer, bool withBias) {
    Value bias = withBias ? weight(role, layer, TensorPart::Bias) : Value();
    return LinearOp::create(b, loc, x, weight(role, layer), bias);
  }

  Value sliceCols(Value x, int64_t begin, int64_t size) {
    return SliceColsOp::create(b, loc, x, b.getI64IntegerAttr(begin), b.getI64IntegerAttr(size));
  }

  Value rope(Value x) {
    return RopeOp::create(b, loc, x, b.getI64IntegerAttr(spec.headDim),
                          b.getF64FloatAttr(spec.ropeTheta));
  }

  Value activate(Value x) {
    if (spec.activation == "silu")
      return SiluOp::create(b, loc, x);
    return GeluOp::create(b, loc, x, b.getBoolAttr(spec.activation == "gelu_tanh"));
  }

  OpBuilder &b;
  const ModelSpec &spec;
  const Declarations &decls;
  int64_t rows;
  bool lastRowOnly;
  Location loc;
  Type f32;
};

/// Refuses a feature value with no lowering; names the field.
llvm::Error checkFeature(const ModelSpec &spec, const char *field, const std::string &value,
                         std::initializer_list<const char *> known) {
  for (const char *k : known)
    if (value == k)
      return llvm::Error::success();
  std::string message = "model '" + spec.name + "': " + field + " '" + value +
                        "' has no tfm lowering; expected one of:";
  for (const char *k : known)
    message += std::string(" '") + k + "'";
  return llvm::createStringError(message);
}

/// The builder trusts ModelSpec's validation for sizes; it refuses what it
/// has no lowering for.
llvm::Error checkSupported(const ModelSpec &spec, int64_t prefillChunk) {
  if (llvm::Error e = checkFeature(spec, "family", spec.family, {"llama", "gpt2"}))
    return e;
  if (llvm::Error e = checkFeature(spec, "norm", spec.norm, {"rms_norm", "layer_norm"}))
    return e;
  if (llvm::Error e =
          checkFeature(spec, "activation", spec.activation, {"silu", "gelu_tanh", "gelu"}))
    return e;
  if (llvm::Error e = checkFeature(spec, "positions", spec.positions, {"rope", "learned"}))
    return e;
  if (spec.dim <= 0 || spec.hiddenDim <= 0 || spec.nLayers <= 0 || spec.nHeads <= 0 ||
      spec.nKvHeads <= 0 || spec.headDim <= 0 || spec.vocabSize <= 0 ||
      spec.contextLength <= 0 || spec.nHeads % spec.nKvHeads != 0 ||
      (spec.positions == "rope" && spec.headDim % 2 != 0))
    return llvm::createStringError("model '" + spec.name +
                                   "': sizes must be positive, n_heads a multiple of "
                                   "n_kv_heads and head_dim even with RoPE");
  if (prefillChunk < 1 || prefillChunk > spec.contextLength)
    return llvm::createStringError("model '" + spec.name + "': prefill chunk " +
                                   std::to_string(prefillChunk) + " must be in [1, " +
                                   std::to_string(spec.contextLength) +
                                   "] (the context length)");
  return llvm::Error::success();
}

} // namespace

llvm::Expected<OwningOpRef<ModuleOp>> buildModel(MLIRContext &context, const ModelSpec &spec,
                                                 int64_t prefillChunk, llvm::StringRef target,
                                                 const WeightTypes &weightTypes, DType cacheType) {
  if (llvm::Error e = checkSupported(spec, prefillChunk))
    return std::move(e);
  if (cacheType == DType::I32)
    return llvm::createStringError("model '" + spec.name +
                                   "': the KV cache holds f32, f16 or bf16, not i32");
  std::vector<ModelTensor> tensors = modelTensors(spec);
  for (const auto &[name, encoding] : weightTypes)
    if (llvm::none_of(tensors, [&](const ModelTensor &t) { return t.name == name; }))
      return llvm::createStringError("model '" + spec.name + "': a weight type (" +
                                     encoding.name() + ") is given for tensor '" + name +
                                     "', which the model does not have");
  context.loadDialect<TfmDialect, func::FuncDialect>();
  OpBuilder b(&context);
  OwningOpRef<ModuleOp> module = ModuleOp::create(b.getUnknownLoc(), spec.name);
  ModuleOp m = *module;
  m->setAttr(attrs::kPrefillChunk, b.getI64IntegerAttr(prefillChunk));
  m->setAttr(attrs::kContextLength, b.getI64IntegerAttr(spec.contextLength));
  m->setAttr(attrs::kVocabSize, b.getI64IntegerAttr(spec.vocabSize));
  m->setAttr(attrs::kConfig, b.getStringAttr(spec.canonicalJson()));
  m->setAttr(attrs::kTarget, b.getStringAttr(target));

  b.setInsertionPointToEnd(m.getBody());
  Type cacheElementType = weightElementType(&context, ElementEncoding{cacheType, std::nullopt});
  Declarations decls;
  for (const ModelTensor &tensor : tensors) {
    auto found = weightTypes.find(tensor.name);
    ElementEncoding encoding = found == weightTypes.end() ? ElementEncoding{} : found->second;
    auto type =
        RankedTensorType::get(tensor.shape, weightElementType(b.getContext(), encoding));
    if (!isStaticTensorType(type, static_cast<int64_t>(tensor.shape.size())))
      return llvm::createStringError("model '" + spec.name + "': tensor '" + tensor.name +
                                     "' of shape " + formatShape(tensor.shape) + " cannot be " +
                                     encoding.name() +
                                     " (block formats are for matrices whose rows hold whole "
                                     "blocks of " +
                                     std::to_string(encoding.blockElements()) + " values)");
    WeightDeclOp::create(b, b.getUnknownLoc(), tensor.name, type);
    decls.weights[tensor.name] = type;
  }
  MemRefType cacheBuffer = cacheBufferType(cacheElementType, spec.contextLength, spec.kvDim(),
                                           /*transposed=*/false);
  for (int64_t i = 0; i < spec.nLayers; ++i)
    for (bool key : {true, false}) {
      std::string name = cacheName(i, key);
      CacheDeclOp::create(b, b.getUnknownLoc(), name, cacheBuffer, IntegerAttr());
      decls.caches[name] = cacheBuffer;
    }

  EntryBuilder(b, spec, decls, ShapedType::kDynamic, /*lastRowOnly=*/true).build("prefill");
  EntryBuilder(b, spec, decls, 1, /*lastRowOnly=*/true).build("decode");
  EntryBuilder(b, spec, decls, ShapedType::kDynamic, /*lastRowOnly=*/false).build("score");
  return module;
}

} // namespace tfm
