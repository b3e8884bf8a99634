//===- ModelBuilder.cpp - ModelSpec -> tfm IR -----------------------------===//
//
// Llama family (llama2.c / GGUF semantics). The manifest is computed first and
// every weight op takes its shape from it, so names and shapes have a single
// source.
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

std::vector<ManifestEntry> llamaManifest(const ModelSpec &spec) {
  std::vector<ManifestEntry> manifest;
  manifest.push_back({"token_embd.weight", {spec.vocabSize, spec.dim}});
  for (int64_t i = 0; i < spec.nLayers; ++i) {
    std::string blk = "blk." + std::to_string(i) + ".";
    manifest.push_back({blk + "attn_norm.weight", {spec.dim}});
    manifest.push_back({blk + "attn_q.weight", {spec.qDim(), spec.dim}});
    manifest.push_back({blk + "attn_k.weight", {spec.kvDim(), spec.dim}});
    manifest.push_back({blk + "attn_v.weight", {spec.kvDim(), spec.dim}});
    manifest.push_back({blk + "attn_output.weight", {spec.dim, spec.qDim()}});
    manifest.push_back({blk + "ffn_norm.weight", {spec.dim}});
    manifest.push_back({blk + "ffn_gate.weight", {spec.hiddenDim, spec.dim}});
    manifest.push_back({blk + "ffn_up.weight", {spec.hiddenDim, spec.dim}});
    manifest.push_back({blk + "ffn_down.weight", {spec.dim, spec.hiddenDim}});
  }
  manifest.push_back({"output_norm.weight", {spec.dim}});
  if (!spec.tiedEmbeddings)
    manifest.push_back({"output.weight", {spec.vocabSize, spec.dim}});
  return manifest;
}

/// Emits one entry function. `rows` is the token-row dimension of every
/// activation: ShapedType::kDynamic for prefill, 1 for decode.
class EntryBuilder {
public:
  EntryBuilder(OpBuilder &builder, const ModelSpec &spec,
               const std::map<std::string, std::vector<int64_t>> &shapes,
               int64_t rows)
      : b(builder), spec(spec), shapes(shapes), rows(rows),
        loc(builder.getUnknownLoc()), f32(builder.getF32Type()) {}

  void build(StringRef name) {
    auto tokensType = RankedTensorType::get({rows}, b.getI32Type());
    auto logitsType = RankedTensorType::get({1, spec.vocabSize}, f32);
    auto fn = func::FuncOp::create(b, loc, name,
                                   b.getFunctionType({tokensType}, {logitsType}));
    fn->setAttr(attrs::kEntry, b.getStringAttr(name));
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(fn.addEntryBlock());

    Value x = EmbeddingOp::create(b, loc, activation(spec.dim),
                                  weight("token_embd.weight"),
                                  fn.getArgument(0));
    for (int64_t i = 0; i < spec.nLayers; ++i)
      x = layer(x, i);
    if (ShapedType::isDynamic(rows))
      x = LastRowOp::create(b, loc, RankedTensorType::get({1, spec.dim}, f32),
                            x);
    Value h = rmsNorm(x, "output_norm.weight");
    Value logits = linear(h, spec.tiedEmbeddings ? "token_embd.weight"
                                                 : "output.weight");
    func::ReturnOp::create(b, loc, logits);
  }

private:
  Value layer(Value x, int64_t i) {
    std::string blk = "blk." + std::to_string(i) + ".";
    Value h = rmsNorm(x, blk + "attn_norm.weight");
    Value q = rope(linear(h, blk + "attn_q.weight"));
    Value k = rope(linear(h, blk + "attn_k.weight"));
    Value v = linear(h, blk + "attn_v.weight");
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
    x = AddOp::create(b, loc, x, linear(attended, blk + "attn_output.weight"));

    h = rmsNorm(x, blk + "ffn_norm.weight");
    Value gate = SiluOp::create(b, loc, linear(h, blk + "ffn_gate.weight"));
    Value up = linear(h, blk + "ffn_up.weight");
    Value gated = MulOp::create(b, loc, gate, up);
    return AddOp::create(b, loc, x, linear(gated, blk + "ffn_down.weight"));
  }

  RankedTensorType activation(int64_t cols) {
    return RankedTensorType::get({rows, cols}, f32);
  }

  Value weight(const std::string &name) {
    auto type = RankedTensorType::get(shapes.at(name), f32);
    return WeightOp::create(b, loc, type, name);
  }

  Value rmsNorm(Value x, const std::string &weightName) {
    return RmsNormOp::create(b, loc, x.getType(), x, weight(weightName),
                             b.getF64FloatAttr(spec.normEps));
  }

  Value linear(Value x, const std::string &weightName) {
    Value w = weight(weightName);
    int64_t outRows = cast<RankedTensorType>(x.getType()).getDimSize(0);
    int64_t outCols = cast<RankedTensorType>(w.getType()).getDimSize(0);
    return LinearOp::create(b, loc,
                            RankedTensorType::get({outRows, outCols}, f32), x,
                            w);
  }

  Value rope(Value x) {
    return RopeOp::create(b, loc, x, b.getI64IntegerAttr(spec.headDim),
                          b.getF64FloatAttr(spec.ropeTheta));
  }

  OpBuilder &b;
  const ModelSpec &spec;
  const std::map<std::string, std::vector<int64_t>> &shapes;
  int64_t rows;
  Location loc;
  Type f32;
};

/// The builder trusts ModelSpec's validation for sizes; it refuses what it
/// has no lowering for.
bool checkSupported(const ModelSpec &spec, int64_t prefillChunk,
                    std::string &error) {
  if (spec.family != "llama") {
    error = "model '" + spec.name + "': family '" + spec.family +
            "' has no tfm builder; expected 'llama'";
    return false;
  }
  if (spec.dtype != "f32") {
    error = "model '" + spec.name + "': dtype '" + spec.dtype +
            "' is not supported; expected 'f32'";
    return false;
  }
  if (spec.dim <= 0 || spec.hiddenDim <= 0 || spec.nLayers <= 0 ||
      spec.nHeads <= 0 || spec.nKvHeads <= 0 || spec.headDim <= 0 ||
      spec.vocabSize <= 0 || spec.contextLength <= 0 ||
      spec.nHeads % spec.nKvHeads != 0 || spec.headDim % 2 != 0) {
    error = "model '" + spec.name +
            "': sizes must be positive, n_heads a multiple of n_kv_heads and "
            "head_dim even";
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

  std::vector<ManifestEntry> manifest = llamaManifest(spec);
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
  EntryBuilder(b, spec, shapes, ShapedType::kDynamic).build("prefill");
  EntryBuilder(b, spec, shapes, 1).build("decode");
  return module;
}

} // namespace tfm
