//===- ModelBuilder.cpp - ModelSpec -> tfm IR -----------------------------===//
//
// One layer structure for both families, composed from the spec's features:
// the norm (RMSNorm or LayerNorm), the positions (RoPE on q and k, or a
// learned table added to the embeddings), projection biases, a fused or
// separate q/k/v projection and a gated or plain FFN. Llama follows
// llama2.c / GGUF semantics, GPT-2 Hugging Face's GPT2LMHeadModel.
//
// The manifest is computed first and every weight op takes its shape from
// it, so names and shapes have a single source.
//
//===----------------------------------------------------------------------===//
#include "tfm/Builder/ModelBuilder.h"
#include "tfm/Dialect/TfmOps.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"

#include <map>
#include <vector>

using namespace mlir;

namespace tfm {
namespace {

struct ManifestEntry {
  std::string name;
  std::vector<int64_t> shape;
};

/// llama.cpp's GGUF tensor names, in the order of the weight file.
std::vector<ManifestEntry> modelManifest(const ModelSpec &spec) {
  std::vector<ManifestEntry> manifest;
  bool layerNorm = spec.norm == "layer_norm";
  auto norm = [&](const std::string &base) {
    manifest.push_back({base + ".weight", {spec.dim}});
    if (layerNorm)
      manifest.push_back({base + ".bias", {spec.dim}});
  };
  auto projection = [&](const std::string &base, int64_t out, int64_t in) {
    manifest.push_back({base + ".weight", {out, in}});
    if (spec.projectionBias)
      manifest.push_back({base + ".bias", {out}});
  };

  manifest.push_back({"token_embd.weight", {spec.vocabSize, spec.dim}});
  if (spec.positions == "learned")
    manifest.push_back(
        {"position_embd.weight", {spec.contextLength, spec.dim}});
  for (int64_t i = 0; i < spec.nLayers; ++i) {
    std::string blk = "blk." + std::to_string(i) + ".";
    norm(blk + "attn_norm");
    if (spec.fusedQkv()) {
      projection(blk + "attn_qkv", spec.qDim() + 2 * spec.kvDim(), spec.dim);
    } else {
      projection(blk + "attn_q", spec.qDim(), spec.dim);
      projection(blk + "attn_k", spec.kvDim(), spec.dim);
      projection(blk + "attn_v", spec.kvDim(), spec.dim);
    }
    projection(blk + "attn_output", spec.dim, spec.qDim());
    norm(blk + "ffn_norm");
    if (spec.gatedFfn())
      projection(blk + "ffn_gate", spec.hiddenDim, spec.dim);
    projection(blk + "ffn_up", spec.hiddenDim, spec.dim);
    projection(blk + "ffn_down", spec.dim, spec.hiddenDim);
  }
  norm("output_norm");
  if (!spec.tiedEmbeddings) // the output head has no bias in either family
    manifest.push_back({"output.weight", {spec.vocabSize, spec.dim}});
  return manifest;
}

/// Emits one entry function. `rows` is the token-row dimension of every
/// activation: ShapedType::kDynamic for prefill and score, 1 for decode.
/// `lastRowOnly`: the logits of the call's last token only (prefill), not
/// of every row (score).
class EntryBuilder {
public:
  EntryBuilder(OpBuilder &builder, const ModelSpec &spec,
               const std::map<std::string, std::vector<int64_t>> &shapes,
               int64_t rows, bool lastRowOnly)
      : b(builder), spec(spec), shapes(shapes), rows(rows),
        lastRowOnly(lastRowOnly), loc(builder.getUnknownLoc()),
        f32(builder.getF32Type()) {}

  void build(StringRef name) {
    auto tokensType = RankedTensorType::get({rows}, b.getI32Type());
    int64_t logitRows = lastRowOnly ? 1 : rows;
    auto logitsType = RankedTensorType::get({logitRows, spec.vocabSize}, f32);
    auto fn = func::FuncOp::create(b, loc, name,
                                   b.getFunctionType({tokensType}, {logitsType}));
    fn->setAttr(attrs::kEntry, b.getStringAttr(name));
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(fn.addEntryBlock());

    Value x = EmbeddingOp::create(b, loc, activation(spec.dim),
                                  weight("token_embd.weight"),
                                  fn.getArgument(0));
    if (spec.positions == "learned")
      x = AddPositionsOp::create(b, loc, x.getType(), x,
                                 weight("position_embd.weight"));
    for (int64_t i = 0; i < spec.nLayers; ++i)
      x = layer(x, i);
    if (lastRowOnly && ShapedType::isDynamic(rows))
      x = LastRowOp::create(b, loc, RankedTensorType::get({1, spec.dim}, f32),
                            x);
    Value h = norm(x, "output_norm");
    Value logits = project(h, spec.tiedEmbeddings ? "token_embd.weight"
                                                  : "output.weight",
                           /*withBias=*/false);
    func::ReturnOp::create(b, loc, logits);
  }

private:
  Value layer(Value x, int64_t i) {
    std::string blk = "blk." + std::to_string(i) + ".";
    Value h = norm(x, blk + "attn_norm");
    Value q, k, v;
    if (spec.fusedQkv()) {
      Value qkv = linear(h, blk + "attn_qkv");
      q = sliceCols(qkv, 0, spec.qDim());
      k = sliceCols(qkv, spec.qDim(), spec.kvDim());
      v = sliceCols(qkv, spec.qDim() + spec.kvDim(), spec.kvDim());
    } else {
      q = linear(h, blk + "attn_q");
      k = linear(h, blk + "attn_k");
      v = linear(h, blk + "attn_v");
    }
    if (spec.positions == "rope") {
      q = rope(q);
      k = rope(k);
    }
    auto cacheType =
        RankedTensorType::get({spec.contextLength, spec.kvDim()}, f32);
    Value keyCache = KvCacheOp::create(b, loc, cacheType, CacheKind::Key, i);
    Value valueCache =
        KvCacheOp::create(b, loc, cacheType, CacheKind::Value, i);
    KvStoreOp::create(b, loc, k, keyCache);
    KvStoreOp::create(b, loc, v, valueCache);
    Value attended = AttentionOp::create(
        b, loc, q.getType(), q, keyCache, valueCache,
        b.getI64IntegerAttr(spec.nHeads), b.getI64IntegerAttr(spec.nKvHeads),
        b.getI64IntegerAttr(spec.headDim));
    x = AddOp::create(b, loc, x, linear(attended, blk + "attn_output"));

    h = norm(x, blk + "ffn_norm");
    Value hidden;
    if (spec.gatedFfn()) {
      Value gate = activate(linear(h, blk + "ffn_gate"));
      hidden = MulOp::create(b, loc, gate, linear(h, blk + "ffn_up"));
    } else {
      hidden = activate(linear(h, blk + "ffn_up"));
    }
    return AddOp::create(b, loc, x, linear(hidden, blk + "ffn_down"));
  }

  RankedTensorType activation(int64_t cols) {
    return RankedTensorType::get({rows, cols}, f32);
  }

  Value weight(const std::string &name) {
    auto type = RankedTensorType::get(shapes.at(name), f32);
    return WeightOp::create(b, loc, type, name);
  }

  Value norm(Value x, const std::string &base) {
    FloatAttr eps = b.getF64FloatAttr(spec.normEps);
    Value w = weight(base + ".weight");
    if (spec.norm == "layer_norm") {
      Value bias = weight(base + ".bias");
      return LayerNormOp::create(b, loc, x.getType(), x, w, bias, eps);
    }
    return RmsNormOp::create(b, loc, x.getType(), x, w, eps);
  }

  /// A projection of the layer: `base`.weight, plus `base`.bias when the
  /// family has biases.
  Value linear(Value x, const std::string &base) {
    return project(x, base + ".weight", spec.projectionBias);
  }

  Value project(Value x, const std::string &weightName, bool withBias) {
    Value w = weight(weightName);
    Value bias;
    if (withBias) // "<base>.weight" -> "<base>.bias"
      bias = weight(weightName.substr(0, weightName.size() - 6) + "bias");
    int64_t outRows = cast<RankedTensorType>(x.getType()).getDimSize(0);
    int64_t outCols = cast<RankedTensorType>(w.getType()).getDimSize(0);
    return LinearOp::create(b, loc,
                            RankedTensorType::get({outRows, outCols}, f32), x,
                            w, bias);
  }

  Value sliceCols(Value x, int64_t begin, int64_t size) {
    return SliceColsOp::create(b, loc, activation(size), x,
                               b.getI64IntegerAttr(begin),
                               b.getI64IntegerAttr(size));
  }

  Value rope(Value x) {
    return RopeOp::create(b, loc, x, b.getI64IntegerAttr(spec.headDim),
                          b.getF64FloatAttr(spec.ropeTheta));
  }

  Value activate(Value x) {
    if (spec.activation == "silu")
      return SiluOp::create(b, loc, x);
    return GeluOp::create(b, loc, x,
                          b.getBoolAttr(spec.activation == "gelu_tanh"));
  }

  OpBuilder &b;
  const ModelSpec &spec;
  const std::map<std::string, std::vector<int64_t>> &shapes;
  int64_t rows;
  bool lastRowOnly;
  Location loc;
  Type f32;
};

/// Refuses a feature value with no lowering; names the field.
bool checkFeature(const ModelSpec &spec, const char *field,
                  const std::string &value,
                  std::initializer_list<const char *> known,
                  std::string &error) {
  for (const char *k : known)
    if (value == k)
      return true;
  error = "model '" + spec.name + "': " + field + " '" + value +
          "' has no tfm lowering; expected one of:";
  for (const char *k : known)
    error += std::string(" '") + k + "'";
  return false;
}

/// The builder trusts ModelSpec's validation for sizes; it refuses what it
/// has no lowering for.
bool checkSupported(const ModelSpec &spec, int64_t prefillChunk,
                    std::string &error) {
  if (!checkFeature(spec, "family", spec.family, {"llama", "gpt2"}, error) ||
      !checkFeature(spec, "norm", spec.norm, {"rms_norm", "layer_norm"},
                    error) ||
      !checkFeature(spec, "activation", spec.activation,
                    {"silu", "gelu_tanh", "gelu"}, error) ||
      !checkFeature(spec, "positions", spec.positions, {"rope", "learned"},
                    error) ||
      !checkFeature(spec, "dtype", spec.dtype, {"f32"}, error))
    return false;
  if (spec.dim <= 0 || spec.hiddenDim <= 0 || spec.nLayers <= 0 ||
      spec.nHeads <= 0 || spec.nKvHeads <= 0 || spec.headDim <= 0 ||
      spec.vocabSize <= 0 || spec.contextLength <= 0 ||
      spec.nHeads % spec.nKvHeads != 0 ||
      (spec.positions == "rope" && spec.headDim % 2 != 0)) {
    error = "model '" + spec.name +
            "': sizes must be positive, n_heads a multiple of n_kv_heads and "
            "head_dim even with RoPE";
    return false;
  }
  if (prefillChunk < 1 || prefillChunk > spec.contextLength) {
    error = "model '" + spec.name + "': prefill chunk " +
            std::to_string(prefillChunk) + " must be in [1, " +
            std::to_string(spec.contextLength) + "] (the context length)";
    return false;
  }
  return true;
}

} // namespace

OwningOpRef<ModuleOp> buildModel(MLIRContext &context, const ModelSpec &spec,
                                 int64_t prefillChunk, std::string &error) {
  if (!checkSupported(spec, prefillChunk, error))
    return nullptr;
  context.loadDialect<TfmDialect, func::FuncDialect>();
  OpBuilder b(&context);
  OwningOpRef<ModuleOp> module = ModuleOp::create(b.getUnknownLoc(), spec.name);

  std::vector<ManifestEntry> manifest = modelManifest(spec);
  std::map<std::string, std::vector<int64_t>> shapes;
  SmallVector<Attribute> entries;
  for (const ManifestEntry &entry : manifest) {
    shapes[entry.name] = entry.shape;
    entries.push_back(b.getDictionaryAttr(
        {b.getNamedAttr("name", b.getStringAttr(entry.name)),
         b.getNamedAttr("shape", b.getDenseI64ArrayAttr(entry.shape))}));
  }
  (*module)->setAttr(attrs::kManifest, b.getArrayAttr(entries));
  (*module)->setAttr(attrs::kPrefillChunk, b.getI64IntegerAttr(prefillChunk));
  (*module)->setAttr(attrs::kContextLength,
                     b.getI64IntegerAttr(spec.contextLength));

  b.setInsertionPointToEnd(module->getBody());
  EntryBuilder(b, spec, shapes, ShapedType::kDynamic, /*lastRowOnly=*/true)
      .build("prefill");
  EntryBuilder(b, spec, shapes, 1, /*lastRowOnly=*/true).build("decode");
  EntryBuilder(b, spec, shapes, ShapedType::kDynamic, /*lastRowOnly=*/false)
      .build("score");
  return module;
}

} // namespace tfm
