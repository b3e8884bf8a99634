//===- ModelBuilder.cpp - ModelSpec -> tfm IR -----------------------------===//
//
// One layer structure for every family, composed from the spec's switches:
// the norm (RMSNorm, LayerNorm with or without bias) and where it sits
// (pre-LN, post-LN, a parallel block with one norm or two), the positions
// (RoPE in either pair layout, a learned or sinusoidal table added to the
// embeddings, or ALiBi slopes on the attention scores), projection biases,
// a fused or separate q/k/v projection (clamped for MPT) and a gated or
// plain FFN. Every switch is decided here, at compile time: what reaches the
// kernels is ops and constants, never a flag read at run time.
//
// The weight declarations come from the one tensor table
// (tfm/common/TensorNames.h) and every weight op takes its type from its
// declaration, so names and shapes have a single source.
//
//===----------------------------------------------------------------------===//
#include "tfm/Builder/ModelBuilder.h"
#include "tfm/Dialect/TfmOps.h"
#include "tfm/common/Failure.h"
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

/// Layer `layer`'s self-attention cache in `stack` ("blk.0.key",
/// "enc.blk.0.key"), or its cross-attention cache of the source
/// ("blk.0.cross_key").
std::string cacheName(Stack stack, int64_t layer, bool key, bool cross = false) {
  return std::string(stack == Stack::Encoder ? "enc." : "") + "blk." + std::to_string(layer) +
         (cross ? ".cross_" : ".") + (key ? "key" : "value");
}

/// Emits one entry function. `rows` is the token-row dimension of every
/// activation: ShapedType::kDynamic for prefill, score and encode, 1 for
/// decode. `lastRowOnly`: the logits of the call's last token only
/// (prefill), not of every row (score). `encoding`: the encode entry, which
/// returns every row's hidden state instead of logits, and of an
/// encoder-decoder also computes each decoder layer's cross-attention keys
/// and values of them into its source caches.
class EntryBuilder {
public:
  EntryBuilder(OpBuilder &builder, const ModelSpec &spec, const Declarations &decls,
               int64_t rows, bool lastRowOnly, bool encoding)
      : b(builder), spec(spec), decls(decls), rows(rows), lastRowOnly(lastRowOnly),
        encoding(encoding), loc(builder.getUnknownLoc()), f32(builder.getF32Type()) {}

  void build(StringRef name) {
    auto tokensType = RankedTensorType::get({rows}, b.getI32Type());
    int64_t outRows = lastRowOnly ? 1 : rows;
    auto outType = RankedTensorType::get({outRows, encoding ? spec.dim : spec.vocabSize}, f32);
    auto fn = func::FuncOp::create(b, b.getUnknownLoc(), name,
                                   b.getFunctionType({tokensType}, {outType}));
    fn->setAttr(attrs::kEntry, b.getStringAttr(name));
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(fn.addEntryBlock());

    at("embedding");
    Value x = EmbeddingOp::create(b, loc, weight(TensorRole::TokenEmbedding), fn.getArgument(0),
                                  b.getF64FloatAttr(spec.embeddingScale));
    x = addPositions(x);
    if (spec.embeddingNorm)
      x = norm(x, TensorRole::TokenEmbeddingNorm);
    if (encoding && spec.encoderDecoder()) {
      x = encodeSource(x);
      func::ReturnOp::create(b, loc, x);
      return;
    }
    stack = spec.encoderDecoder() ? Stack::Decoder : Stack::Only;
    for (int64_t i = 0; i < spec.nLayers; ++i)
      x = layer(x, i);
    if (encoding) { // an encoder's hidden states, post-LN's last norm applied
      func::ReturnOp::create(b, loc, x);
      return;
    }
    at("output");
    if (lastRowOnly && ShapedType::isDynamic(rows))
      x = LastRowOp::create(b, loc, x);
    Value h = spec.outputNorm() ? norm(x, TensorRole::OutputNorm, -1, spec.outputScale) : x;
    Value bias = spec.outputBias ? weight(TensorRole::Output, -1, TensorPart::Bias) : Value();
    Value logits = LinearOp::create(
        b, loc, h, weight(spec.tiedEmbeddings ? TensorRole::TokenEmbedding : TensorRole::Output),
        bias);
    if (spec.finalSoftcap > 0.0)
      logits = SoftcapOp::create(b, loc, logits, b.getF64FloatAttr(spec.finalSoftcap));
    func::ReturnOp::create(b, loc, logits);
  }

private:
  /// Ops created from here on belong to `name` (a diagnostic's location).
  void at(const std::string &name) { loc = NameLoc::get(b.getStringAttr(name)); }

  /// An encoder-decoder's encode: the encoder's layers over the source and
  /// its final norm, then each decoder layer's cross-attention keys and
  /// values of the result, stored in its source caches once.
  Value encodeSource(Value x) {
    stack = Stack::Encoder;
    for (int64_t i = 0; i < spec.nEncoderLayers; ++i)
      x = layer(x, i);
    at("enc.output");
    if (spec.outputNorm())
      x = norm(x, TensorRole::OutputNorm);
    stack = Stack::Decoder;
    for (int64_t i = 0; i < spec.nLayers; ++i) {
      at("dec.blk." + std::to_string(i) + ".cross_attn");
      KvStoreOp::create(b, loc, project(x, TensorRole::CrossAttnK, i, spec.qkvBias),
                        cache(cacheName(Stack::Decoder, i, true, true)));
      KvStoreOp::create(b, loc, project(x, TensorRole::CrossAttnV, i, spec.qkvBias),
                        cache(cacheName(Stack::Decoder, i, false, true)));
    }
    // The caller's copy, written by a launch of its own: what a call
    // returns is written once, after every launch that reads it.
    at("enc.output");
    return sliceCols(x, 0, spec.dim);
  }

  /// A layer's attention over the source (an encoder-decoder's decoder):
  /// its queries against the source caches encode filled, every source
  /// token seen, then its output projection.
  Value crossAttention(Value h, int64_t i) {
    Value q = project(h, TensorRole::CrossAttnQ, i, spec.qkvBias);
    Value attended = AttentionOp::create(
        b, loc, q, cache(cacheName(stack, i, true, true)),
        cache(cacheName(stack, i, false, true)), Value(), b.getI64IntegerAttr(spec.nHeads),
        b.getI64IntegerAttr(spec.nKvHeads), b.getI64IntegerAttr(spec.headDim),
        b.getDenseF32ArrayAttr({}), b.getI64IntegerAttr(0), b.getI64IntegerAttr(0),
        b.getF64FloatAttr(spec.attnScale), b.getF64FloatAttr(0.0), b.getBoolAttr(false),
        b.getI64IntegerAttr(0));
    return project(attended, TensorRole::CrossAttnOutput, i, spec.attnOutBias);
  }

  /// Pre-LN: x + attn(n1(x)), then + ffn(n2(.)). Post-LN: n1(x + attn(x)),
  /// then n2(. + ffn(.)). Parallel: x + attn(n1(x)) + ffn(n2(x)), n2 = n1
  /// with one shared norm.
  Value layer(Value x, int64_t i) {
    std::string blk = std::string(stack == Stack::Encoder   ? "enc."
                                  : stack == Stack::Decoder ? "dec."
                                                            : "") +
                      "blk." + std::to_string(i);
    at(blk + ".attn");
    bool post = spec.normPosition == NormPosition::Post;
    Value attnIn = post ? x : norm(x, attnNormRole(spec), i);
    Value attended = attention(attnIn, i);
    if (spec.sandwichNorms)
      attended = norm(attended, TensorRole::AttnPostNorm, i);
    if (spec.parallelResidual) {
      at(blk + ".ffn");
      Value ffnIn = spec.parallelNorms == 2 ? norm(x, ffnNormRole(spec), i) : attnIn;
      Value sum = AddOp::create(b, loc, x, attended);
      return AddOp::create(b, loc, sum, feedForward(ffnIn, i));
    }
    x = AddOp::create(b, loc, x, attended);
    if (post)
      x = norm(x, attnNormRole(spec), i);
    if (stack == Stack::Decoder) { // an encoder-decoder's decoder
      at(blk + ".cross_attn");
      Value crossIn = post ? x : norm(x, TensorRole::CrossAttnNorm, i);
      x = AddOp::create(b, loc, x, crossAttention(crossIn, i));
      if (post)
        x = norm(x, TensorRole::CrossAttnNorm, i);
    }
    at(blk + ".ffn");
    Value ffnIn = post ? x : norm(x, TensorRole::FfnNorm, i);
    Value ffnOut = feedForward(ffnIn, i);
    if (spec.sandwichNorms)
      ffnOut = norm(ffnOut, TensorRole::FfnPostNorm, i);
    x = AddOp::create(b, loc, x, ffnOut);
    return post ? norm(x, ffnNormRole(spec), i) : x;
  }

  /// The attention sublayer, its output projection included.
  Value attention(Value h, int64_t i) {
    Value q, k, v;
    if (spec.fusedQkv) {
      Value qkv = clip(project(h, TensorRole::AttnQkv, i, spec.qkvBias));
      q = sliceCols(qkv, 0, spec.qDim());
      k = sliceCols(qkv, spec.qDim(), spec.kvDim());
      v = sliceCols(qkv, spec.qDim() + spec.kvDim(), spec.kvDim());
    } else {
      q = clip(project(h, TensorRole::AttnQ, i, spec.qkvBias));
      k = clip(project(h, TensorRole::AttnK, i, spec.qkvBias));
      v = clip(project(h, TensorRole::AttnV, i, spec.qkvBias));
    }
    if (spec.qkNorm) {
      q = headNorm(q, TensorRole::AttnQNorm, i);
      k = headNorm(k, TensorRole::AttnKNorm, i);
    }
    if (spec.positions == Positions::Rope) {
      q = rope(q, i);
      k = rope(k, i);
    }
    Value keyCache = cache(cacheName(stack, i, true));
    Value valueCache = cache(cacheName(stack, i, false));
    KvStoreOp::create(b, loc, k, keyCache);
    KvStoreOp::create(b, loc, v, valueCache);
    // T5's bias table: the stack's first layer's, shared by its layers.
    bool relative = spec.relativeBuckets > 0;
    Value attended = AttentionOp::create(b, loc, q, keyCache, valueCache,
                                         relative ? weight(TensorRole::AttnRelBias, 0) : Value(),
                                         b.getI64IntegerAttr(spec.nHeads),
                                         b.getI64IntegerAttr(spec.nKvHeads),
                                         b.getI64IntegerAttr(spec.headDim),
                                         b.getDenseF32ArrayAttr(alibiSlopes(spec)),
                                         b.getI64IntegerAttr(0),
                                         b.getI64IntegerAttr(slidingWindowOf(spec, i)),
                                         b.getF64FloatAttr(spec.attnScale),
                                         b.getF64FloatAttr(spec.attnSoftcap),
                                         b.getBoolAttr(!bidirectional()),
                                         b.getI64IntegerAttr(relative ? spec.relativeMaxDistance
                                                                      : 0));
    return project(attended, TensorRole::AttnOutput, i, spec.attnOutBias);
  }

  Value feedForward(Value h, int64_t i) {
    Value hidden;
    switch (spec.ffn) {
    case FfnKind::Gated: { // silu(gate) * up (SwiGLU), gelu(gate) * up (GeGLU)
      Value gate, up;
      if (spec.fusedGateUp) {
        Value both = project(h, TensorRole::FfnUp, i, spec.ffnBias);
        gate = sliceCols(both, 0, spec.hiddenDim);
        up = sliceCols(both, spec.hiddenDim, spec.hiddenDim);
      } else {
        gate = project(h, TensorRole::FfnGate, i, spec.ffnBias);
        up = project(h, TensorRole::FfnUp, i, spec.ffnBias);
      }
      hidden = MulOp::create(b, loc, activate(gate), up);
      break;
    }
    case FfnKind::Plain:
      hidden = activate(project(h, TensorRole::FfnUp, i, spec.ffnBias));
      break;
    }
    return project(hidden, TensorRole::FfnDown, i, spec.ffnBias);
  }

  /// The embedding's positions: RoPE and ALiBi models add none here.
  Value addPositions(Value x) {
    switch (spec.positions) {
    case Positions::Learned:
      return AddPositionsOp::create(
          b, loc, x, weight(TensorRole::PositionEmbedding),
          spec.tokenTypes > 0 ? weight(TensorRole::TokenTypes) : Value(),
          b.getI64IntegerAttr(spec.positionOffset));
    case Positions::Sinusoidal:
    case Positions::SinusoidalHalves:
      return AddSinusoidOp::create(b, loc, x, b.getF64FloatAttr(10000.0),
                                   b.getBoolAttr(spec.positions == Positions::SinusoidalHalves));
    case Positions::Rope:
    case Positions::None:
      break;
    }
    return x;
  }

  /// Whether the layers being built attend in both directions: an
  /// encoder's (BERT's, or an encoder-decoder's over its source).
  bool bidirectional() const { return spec.encoder() || stack == Stack::Encoder; }

  Value weight(TensorRole role, int64_t layer = -1, TensorPart part = TensorPart::Weight) {
    // Layers and their final norm belong to the stack being built.
    Stack of = layer >= 0 || role == TensorRole::OutputNorm ? stack : Stack::Only;
    std::string name = TensorId{role, layer, part, of}.name();
    return WeightOp::create(b, loc, decls.weights.lookup(name), name);
  }

  Value cache(const std::string &name) {
    return KvCacheOp::create(b, loc, decls.caches.lookup(name), name);
  }

  /// The norm of `role`; `scale` multiplies an RMSNorm's output (T5's
  /// final norm before a tied head).
  Value norm(Value x, TensorRole role, int64_t layer = -1, double scale = 1.0) {
    FloatAttr eps = b.getF64FloatAttr(spec.normEps);
    Value w = weight(role, layer);
    switch (spec.norm) {
    case Norm::LayerNorm:
      return LayerNormOp::create(
          b, loc, x, w, spec.normBias ? weight(role, layer, TensorPart::Bias) : Value(), eps);
    case Norm::RmsNorm:
      break;
    }
    return RmsNormOp::create(b, loc, x, w, eps, b.getF64FloatAttr(spec.normWeightOffset),
                             b.getF64FloatAttr(scale));
  }

  Value headNorm(Value x, TensorRole role, int64_t layer) {
    return HeadRmsNormOp::create(b, loc, x, weight(role, layer),
                                 b.getI64IntegerAttr(spec.headDim),
                                 b.getF64FloatAttr(spec.normEps),
                                 b.getF64FloatAttr(spec.normWeightOffset));
  }

  Value clip(Value x) {
    if (spec.clipQkv == 0.0)
      return x;
    return ClampOp::create(b, loc, x, b.getF64FloatAttr(spec.clipQkv));
  }

  Value project(Value x, TensorRole role, int64_t layer, bool withBias) {
    Value bias = withBias ? weight(role, layer, TensorPart::Bias) : Value();
    return LinearOp::create(b, loc, x, weight(role, layer), bias);
  }

  Value sliceCols(Value x, int64_t begin, int64_t size) {
    return SliceColsOp::create(b, loc, x, b.getI64IntegerAttr(begin), b.getI64IntegerAttr(size));
  }

  /// Layer `layer`'s RoPE: Gemma 3's sliding layers have a base of their
  /// own and no scaling.
  Value rope(Value x, int64_t layer) {
    bool local = spec.ropeLocalTheta > 0.0 && slides(spec, layer);
    return RopeOp::create(b, loc, x, b.getI64IntegerAttr(spec.headDim),
                          b.getI64IntegerAttr(spec.rotaryDim),
                          b.getF64FloatAttr(local ? spec.ropeLocalTheta : spec.ropeTheta),
                          b.getBoolAttr(spec.ropeInterleaved),
                          b.getF64FloatAttr(local ? 1.0 : spec.ropeScale),
                          b.getDenseF64ArrayAttr(local ? llvm::ArrayRef<double>()
                                                       : llvm::ArrayRef(ropeFactorsOf(spec))),
                          b.getF64FloatAttr(local ? 1.0 : spec.ropeAttnFactor));
  }

  Value activate(Value x) {
    switch (spec.activation) {
    case Activation::Silu:
      return SiluOp::create(b, loc, x);
    case Activation::Relu:
      return ReluOp::create(b, loc, x);
    case Activation::Gelu:
    case Activation::GeluTanh:
      break;
    }
    return GeluOp::create(b, loc, x, b.getBoolAttr(spec.activation == Activation::GeluTanh));
  }

  OpBuilder &b;
  const ModelSpec &spec;
  const Declarations &decls;
  int64_t rows;
  bool lastRowOnly, encoding;
  Stack stack = Stack::Only; // the layers being built
  Location loc;
  Type f32;
};

/// The builder trusts ModelSpec's validation for sizes and has a lowering
/// for every variant (exhaustive switches above); it refuses a spec no
/// parser would have made.
llvm::Error checkSupported(const ModelSpec &spec, int64_t prefillChunk) {
  if (spec.dim <= 0 || spec.hiddenDim <= 0 || spec.nLayers <= 0 || spec.nHeads <= 0 ||
      spec.nKvHeads <= 0 || spec.headDim <= 0 || spec.vocabSize <= 0 ||
      spec.contextLength <= 0 || spec.nHeads % spec.nKvHeads != 0)
    return failure("model '" + spec.name +
                                   "': sizes must be positive and n_heads a multiple of "
                                   "n_kv_heads");
  if (prefillChunk < 1 || prefillChunk > spec.contextLength)
    return failure("model '" + spec.name + "': prefill chunk " +
                                   std::to_string(prefillChunk) + " must be in [1, " +
                                   std::to_string(spec.contextLength) +
                                   "] (the context length)");
  // One encode takes the whole source: the kernels' most rows are its.
  if (spec.encoderDecoder() && prefillChunk != spec.sourceLength)
    return failure("model '" + spec.name + "': prefill chunk " + std::to_string(prefillChunk) +
                   ", expected the source length " + std::to_string(spec.sourceLength) +
                   " of an encoder-decoder (encode takes the whole source in one call)");
  if (spec.outputScale != 1.0 && spec.norm != Norm::RmsNorm)
    return failure("model '" + spec.name + "': an output scale is an RMSNorm's (T5's)");
  return llvm::Error::success();
}

} // namespace

llvm::Expected<OwningOpRef<ModuleOp>> buildModel(MLIRContext &context, const ModelSpec &spec,
                                                 int64_t prefillChunk, llvm::StringRef target,
                                                 const WeightTypes &weightTypes, DType cacheType) {
  if (llvm::Error e = checkSupported(spec, prefillChunk))
    return std::move(e);
  if (cacheType == DType::I32)
    return failure("model '" + spec.name +
                                   "': the KV cache holds f32, f16 or bf16, not i32");
  std::vector<ModelTensor> tensors = modelTensors(spec);
  for (const auto &[name, encoding] : weightTypes) {
    const std::string &tensor = name; // a lambda may not capture a structured binding in C++17
    if (llvm::none_of(tensors, [&](const ModelTensor &t) { return t.name == tensor; }))
      return failure("model '" + spec.name + "': a weight type (" +
                                     encoding.name() + ") is given for tensor '" + tensor +
                                     "', which the model does not have");
  }
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
      return failure("model '" + spec.name + "': tensor '" + tensor.name +
                                     "' of shape " + formatShape(tensor.shape) + " cannot be " +
                                     encoding.name() +
                                     " (block formats are for matrices whose rows hold whole "
                                     "blocks of " +
                                     std::to_string(encoding.blockElements()) + " values)");
    WeightDeclOp::create(b, b.getUnknownLoc(), tensor.name, type);
    decls.weights[tensor.name] = type;
  }
  // Every stack's self-attention caches of a position per row; an
  // encoder-decoder's decoder layers also a source cache of keys and of
  // values, a row per source token.
  auto declare = [&](const std::string &name, int64_t rows, bool source) {
    MemRefType type = cacheBufferType(cacheElementType, rows, spec.kvDim(),
                                      /*transposed=*/false, /*sliding=*/false);
    CacheDeclOp::create(b, b.getUnknownLoc(), name, type, source, IntegerAttr(), IntegerAttr(),
                        IntegerAttr());
    decls.caches[name] = type;
  };
  Stack decoder = spec.encoderDecoder() ? Stack::Decoder : Stack::Only;
  for (int64_t i = 0; i < spec.nEncoderLayers; ++i)
    for (bool key : {true, false})
      declare(cacheName(Stack::Encoder, i, key), spec.contextLength, false);
  for (int64_t i = 0; i < spec.nLayers; ++i)
    for (bool key : {true, false}) {
      declare(cacheName(decoder, i, key), spec.contextLength, false);
      if (spec.encoderDecoder())
        declare(cacheName(decoder, i, key, /*cross=*/true), spec.sourceLength, true);
    }

  if (spec.architecture != Architecture::Decoder)
    EntryBuilder(b, spec, decls, ShapedType::kDynamic, /*lastRowOnly=*/false, /*encoding=*/true)
        .build("encode");
  if (spec.encoder())
    return module;
  EntryBuilder(b, spec, decls, ShapedType::kDynamic, /*lastRowOnly=*/true, false).build("prefill");
  EntryBuilder(b, spec, decls, 1, /*lastRowOnly=*/true, false).build("decode");
  EntryBuilder(b, spec, decls, ShapedType::kDynamic, /*lastRowOnly=*/false, false).build("score");
  return module;
}

} // namespace tfm
