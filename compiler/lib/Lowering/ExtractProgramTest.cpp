//===- ExtractProgramTest.cpp - lowerConfig on small llama and GPT-2 ------===//
#include "tfm/Lowering/LowerToProgram.h"
#include "tfm/common/OutputFile.h"
#include "tfm/common/TuningFile.h"

#include "llvm/ADT/StringRef.h"
#include "llvm/Support/FileSystem.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <map>
#include <ostream>
#include <set>
#include <stdexcept>
#include <utility>

namespace tfm {

// gtest finds these by argument-dependent lookup, so they live in tfm and
// not in the anonymous namespace: failures print names, not bytes.
inline void PrintTo(OpKind kind, std::ostream *os) { *os << opKindName(kind); }
inline void PrintTo(CacheLayout layout, std::ostream *os) {
  *os << (layout == CacheLayout::Transposed ? "transposed" : "rows");
}

namespace {

/// An explicit target, as tfmc resolves the host to: what is lowered does
/// not depend on the machine the tests run on.
constexpr const char *kTarget = "x86-64-linux-sse41-avx-f16c-fma-avx2";

/// 4 query heads share 2 kv heads (GQA); sizes are small but all distinct.
ModelSpec gqaSpec(int64_t layers) {
  ModelSpec spec;
  spec.name = "tiny_gqa";
  spec.family = Family::Llama;
  spec.dim = 64;
  spec.hiddenDim = 96;
  spec.nLayers = layers;
  spec.nHeads = 4;
  spec.nKvHeads = 2;
  spec.headDim = 16;
  spec.rotaryDim = 16;
  spec.vocabSize = 100;
  spec.contextLength = 48;
  return spec;
}

/// GPT-2 with odd sizes: 5 heads of 16, vocab 101; tied head unless told.
ModelSpec gpt2Spec(int64_t layers) {
  ModelSpec spec;
  spec.name = "tiny_gpt2";
  spec.family = Family::Gpt2;
  spec.dim = 80;
  spec.hiddenDim = 320;
  spec.nLayers = layers;
  spec.nHeads = 5;
  spec.nKvHeads = 5;
  spec.headDim = 16;
  spec.vocabSize = 101;
  spec.contextLength = 48;
  spec.norm = Norm::LayerNorm;
  spec.activation = Activation::GeluTanh;
  spec.positions = Positions::Learned;
  spec.ropeTheta = 0.0;
  spec.normBias = true;
  spec.ffn = FfnKind::Plain;
  spec.fusedQkv = true;
  spec.qkvBias = spec.attnOutBias = spec.ffnBias = true;
  spec.tiedEmbeddings = true;
  spec.bosTokenId = spec.eosTokenId = 100;
  return spec;
}

/// Lowers `spec` for kTarget unless the options name a target. A failure
/// ends the test with the error's message: a helper that returns a value
/// cannot ASSERT, so it throws, and gtest fails the test with the text.
Program lower(const ModelSpec &spec, LoweringOptions options = {}) {
  if (options.target.empty())
    options.target = kTarget;
  llvm::Expected<Program> program = lowerConfig(spec, options);
  if (!program)
    throw std::runtime_error("lowering '" + spec.name +
                             "' failed: " + llvm::toString(program.takeError()));
  return std::move(*program);
}

/// The message of a lowering that must fail ("" and a test failure if it
/// succeeds).
std::string loweringError(const ModelSpec &spec, LoweringOptions options = {}) {
  if (options.target.empty())
    options.target = kTarget;
  llvm::Expected<Program> program = lowerConfig(spec, options);
  if (program) {
    ADD_FAILURE() << "lowering '" << spec.name << "' succeeded";
    return "";
  }
  return llvm::toString(program.takeError());
}

int64_t rowsBound(const Program &program, int64_t rows) {
  return rows == kDynamicRows ? program.prefillChunk : rows;
}

int64_t paramBytes(const Program &program, const KernelParam &param) {
  int64_t elements = 1;
  for (int64_t dim : param.shape)
    elements *= rowsBound(program, dim);
  return elements * 4;
}

const Kernel *findKernel(const Program &program, const std::string &name) {
  for (const Kernel &kernel : program.kernels)
    if (kernel.name == name)
      return &kernel;
  return nullptr;
}

std::vector<OpKind> opKinds(const Kernel &kernel) {
  std::vector<OpKind> kinds;
  for (const KernelOp &op : kernel.ops)
    kinds.push_back(op.kind());
  return kinds;
}

std::vector<const EntryPoint *> entries(const Program &program) {
  std::vector<const EntryPoint *> all;
  for (EntryKind kind : entryKindsOf(program.architecture))
    all.push_back(&program.entry(kind));
  return all;
}

TEST(ExtractProgram, KernelCountDoesNotGrowWithLayers) {
  for (ModelSpec (*shape)(int64_t) : {gqaSpec, gpt2Spec}) {
    Program two = lower(shape(2));
    Program five = lower(shape(5));
    SCOPED_TRACE(five.name);
    ASSERT_FALSE(two.kernels.empty());
    EXPECT_EQ(two.kernels.size(), five.kernels.size());
    for (size_t i = 0; i < two.kernels.size(); ++i)
      EXPECT_EQ(two.kernels[i].name, five.kernels[i].name);
    // Per layer: attn_in, attention, attn_out, ffn_in, ffn_out; before them
    // the embedding, after them the logits.
    for (const EntryPoint *entry : entries(five))
      EXPECT_EQ(entry->launches.size(), 1u + 5u * 5u + 1u) << entryName(entry->kind);
  }
}

TEST(ExtractProgram, ScoreSharesPrefillKernelsButTheLogits) {
  Program program = lower(gpt2Spec(2));
  ASSERT_EQ(program.score.launches.size(), program.prefill.launches.size());
  for (size_t l = 0; l + 1 < program.score.launches.size(); ++l)
    EXPECT_EQ(program.score.launches[l].kernel, program.prefill.launches[l].kernel)
        << "launch " << l;
  const Kernel &prefill = program.kernels.at(program.prefill.launches.back().kernel);
  const Kernel &score = program.kernels.at(program.score.launches.back().kernel);
  EXPECT_EQ(prefill.name, "prefill_logits");
  EXPECT_EQ(score.name, "score_logits");
  EXPECT_EQ(opKinds(prefill),
            (std::vector<OpKind>{OpKind::LastRow, OpKind::LayerNorm, OpKind::Linear}));
  EXPECT_EQ(opKinds(score), (std::vector<OpKind>{OpKind::LayerNorm, OpKind::Linear}));
  // The score logits are token rows, written through the Logits binding.
  const KernelParam &out = score.params.back();
  EXPECT_TRUE(out.isOutput);
  EXPECT_TRUE(out.tokenRows);
  EXPECT_EQ(out.shape, (std::vector<int64_t>{kDynamicRows, 101}));
  EXPECT_EQ(program.score.launches.back().bindings.back().storage, Storage::Logits);
  EXPECT_FALSE(prefill.params.back().tokenRows);
  EXPECT_EQ(prefill.params.back().shape, (std::vector<int64_t>{1, 101}));
  // One kernel more than prefill and decode need.
  std::set<int> used;
  for (const EntryPoint *entry : {&program.prefill, &program.decode})
    for (const Launch &launch : entry->launches)
      used.insert(launch.kernel);
  EXPECT_EQ(program.kernels.size(), used.size() + 1);
}

TEST(ExtractProgram, ManifestOrderAndShapes) {
  ModelSpec spec = gqaSpec(2);
  Program program = lower(spec);
  std::vector<std::pair<std::string, std::vector<int64_t>>> expected = {
      {"token_embd.weight", {100, 64}}};
  for (int layer = 0; layer < 2; ++layer) {
    std::string blk = "blk." + std::to_string(layer) + ".";
    expected.push_back({blk + "attn_norm.weight", {64}});
    expected.push_back({blk + "attn_q.weight", {64, 64}});
    expected.push_back({blk + "attn_k.weight", {32, 64}});
    expected.push_back({blk + "attn_v.weight", {32, 64}});
    expected.push_back({blk + "attn_output.weight", {64, 64}});
    expected.push_back({blk + "ffn_norm.weight", {64}});
    expected.push_back({blk + "ffn_gate.weight", {96, 64}});
    expected.push_back({blk + "ffn_up.weight", {96, 64}});
    expected.push_back({blk + "ffn_down.weight", {64, 96}});
  }
  expected.push_back({"output_norm.weight", {64}});
  expected.push_back({"output.weight", {100, 64}});
  ASSERT_EQ(program.weights.size(), expected.size());
  for (size_t i = 0; i < expected.size(); ++i) {
    EXPECT_EQ(program.weights[i].name, expected[i].first) << "entry " << i;
    EXPECT_EQ(program.weights[i].shape, expected[i].second) << "entry " << i;
  }

  spec.tiedEmbeddings = true;
  Program tied = lower(spec);
  EXPECT_EQ(tied.weights.size(), expected.size() - 1);
  EXPECT_EQ(tied.weights.back().name, "output_norm.weight");
}

TEST(ExtractProgram, Gpt2ManifestOrderAndShapes) {
  ModelSpec spec = gpt2Spec(2);
  Program program = lower(spec);
  std::vector<std::pair<std::string, std::vector<int64_t>>> expected = {
      {"token_embd.weight", {101, 80}}, {"position_embd.weight", {48, 80}}};
  for (int layer = 0; layer < 2; ++layer) {
    std::string blk = "blk." + std::to_string(layer) + ".";
    expected.push_back({blk + "attn_norm.weight", {80}});
    expected.push_back({blk + "attn_norm.bias", {80}});
    expected.push_back({blk + "attn_qkv.weight", {240, 80}});
    expected.push_back({blk + "attn_qkv.bias", {240}});
    expected.push_back({blk + "attn_output.weight", {80, 80}});
    expected.push_back({blk + "attn_output.bias", {80}});
    expected.push_back({blk + "ffn_norm.weight", {80}});
    expected.push_back({blk + "ffn_norm.bias", {80}});
    expected.push_back({blk + "ffn_up.weight", {320, 80}});
    expected.push_back({blk + "ffn_up.bias", {320}});
    expected.push_back({blk + "ffn_down.weight", {80, 320}});
    expected.push_back({blk + "ffn_down.bias", {80}});
  }
  expected.push_back({"output_norm.weight", {80}});
  expected.push_back({"output_norm.bias", {80}});
  ASSERT_EQ(program.weights.size(), expected.size());
  for (size_t i = 0; i < expected.size(); ++i) {
    EXPECT_EQ(program.weights[i].name, expected[i].first) << "entry " << i;
    EXPECT_EQ(program.weights[i].shape, expected[i].second) << "entry " << i;
  }

  spec.tiedEmbeddings = false;
  Program untied = lower(spec);
  ASSERT_EQ(untied.weights.size(), expected.size() + 1);
  EXPECT_EQ(untied.weights.back().name, "output.weight");
  EXPECT_EQ(untied.weights.back().shape, (std::vector<int64_t>{101, 80}));
}

TEST(ExtractProgram, Gpt2Kernels) {
  Program program = lower(gpt2Spec(2));
  for (const char *entry : {"prefill", "decode"}) {
    SCOPED_TRACE(entry);
    std::string prefix = std::string(entry) + "_";
    const Kernel *embed = findKernel(program, prefix + "embedding");
    const Kernel *attnIn = findKernel(program, prefix + "attn_in");
    const Kernel *attnOut = findKernel(program, prefix + "attn_out");
    const Kernel *ffnIn = findKernel(program, prefix + "ffn_in");
    const Kernel *ffnOut = findKernel(program, prefix + "ffn_out");
    ASSERT_TRUE(embed && attnIn && attnOut && ffnIn && ffnOut);
    EXPECT_EQ(opKinds(*embed), (std::vector<OpKind>{OpKind::Embedding, OpKind::AddPositions}));
    EXPECT_EQ(opKinds(*attnIn),
              (std::vector<OpKind>{OpKind::LayerNorm, OpKind::Linear, OpKind::SliceCols,
                                   OpKind::SliceCols, OpKind::SliceCols}));
    EXPECT_EQ(opKinds(*attnOut), (std::vector<OpKind>{OpKind::Linear, OpKind::Add}));
    EXPECT_EQ(opKinds(*ffnIn),
              (std::vector<OpKind>{OpKind::LayerNorm, OpKind::Linear, OpKind::Gelu}));
    EXPECT_EQ(opKinds(*ffnOut), (std::vector<OpKind>{OpKind::Linear, OpKind::Add}));
  }

  // decode_attn_in: x, norm weight and bias, qkv weight and bias, k cache,
  // v cache, then q as output. The caches receive the k and v slices.
  const Kernel &attnIn = *findKernel(program, "decode_attn_in");
  ASSERT_EQ(attnIn.params.size(), 8u);
  EXPECT_EQ(attnIn.params[0].shape, (std::vector<int64_t>{1, 80}));
  EXPECT_EQ(attnIn.params[2].shape, (std::vector<int64_t>{80}));
  EXPECT_EQ(attnIn.params[3].shape, (std::vector<int64_t>{240, 80}));
  EXPECT_EQ(attnIn.params[4].shape, (std::vector<int64_t>{240}));
  for (int cache : {5, 6}) {
    EXPECT_TRUE(attnIn.params[cache].isCache);
    EXPECT_TRUE(attnIn.params[cache].isOutput);
    EXPECT_EQ(attnIn.params[cache].shape, (std::vector<int64_t>{48, 80}));
  }
  // Attention reads the keys across positions: tfm-choose-cache-layouts
  // transposes that cache and leaves the values in rows.
  EXPECT_EQ(attnIn.params[5].cacheLayout, CacheLayout::Transposed);
  EXPECT_EQ(attnIn.params[6].cacheLayout, CacheLayout::Rows);
  const int firstOp = 8;
  ASSERT_EQ(attnIn.ops.size(), 5u);
  const KernelOp &norm = attnIn.ops[0];
  EXPECT_EQ(norm.operands, (std::vector<int>{0, 1, 2}));
  EXPECT_DOUBLE_EQ(std::get<LayerNormAttrs>(norm.attrs).eps, 1e-5);
  EXPECT_EQ(attnIn.ops[1].operands, (std::vector<int>{firstOp, 3, 4})); // bias: 3rd operand
  EXPECT_EQ(attnIn.ops[1].shape, (std::vector<int64_t>{1, 240}));
  // Epilogue fusion decides the order of the three slices; q, k and v are
  // told apart by where they begin.
  std::map<int64_t, int> sliceByBegin; // begin -> value index
  for (int i = 2; i < 5; ++i) {
    const KernelOp &op = attnIn.ops[i];
    ASSERT_EQ(op.kind(), OpKind::SliceCols);
    EXPECT_EQ(op.operands, (std::vector<int>{firstOp + 1}));
    const SliceColsAttrs &slice = std::get<SliceColsAttrs>(op.attrs);
    EXPECT_EQ(slice.size, 80);
    EXPECT_EQ(op.shape, (std::vector<int64_t>{1, 80}));
    EXPECT_TRUE(op.tokenRows);
    sliceByBegin[slice.begin] = firstOp + i;
  }
  ASSERT_EQ(sliceByBegin.size(), 3u);
  EXPECT_EQ(attnIn.outputValue.at(7), sliceByBegin.at(0));   // q
  EXPECT_EQ(attnIn.outputValue.at(5), sliceByBegin.at(80));  // k cache
  EXPECT_EQ(attnIn.outputValue.at(6), sliceByBegin.at(160)); // v cache

  const Kernel &attention = *findKernel(program, "decode_attention");
  const AttentionAttrs &heads = std::get<AttentionAttrs>(attention.ops[0].attrs);
  EXPECT_EQ(heads.nHeads, 5);
  EXPECT_EQ(heads.nKvHeads, 5);
  EXPECT_EQ(heads.headDim, 16);

  EXPECT_TRUE(std::get<GeluAttrs>(findKernel(program, "decode_ffn_in")->ops[2].attrs).approximate);
  EXPECT_EQ(findKernel(program, "decode_ffn_out")->ops[0].operands.size(), 3u);
  // The tied output head has no bias.
  EXPECT_EQ(findKernel(program, "decode_logits")->ops[1].operands.size(), 2u);

  ModelSpec exact = gpt2Spec(1);
  exact.activation = Activation::Gelu;
  Program erf = lower(exact);
  EXPECT_FALSE(std::get<GeluAttrs>(findKernel(erf, "decode_ffn_in")->ops[2].attrs).approximate);
}

TEST(ExtractProgram, LlamaHeadDimIndependentOfDim) {
  ModelSpec spec = gqaSpec(1);
  spec.dim = 72; // 4 heads of 16: q is 64 wide
  Program program = lower(spec);
  std::map<std::string, std::vector<int64_t>> shapes;
  for (const WeightInfo &w : program.weights)
    shapes[w.name] = w.shape;
  EXPECT_EQ(shapes.at("blk.0.attn_q.weight"), (std::vector<int64_t>{64, 72}));
  EXPECT_EQ(shapes.at("blk.0.attn_k.weight"), (std::vector<int64_t>{32, 72}));
  EXPECT_EQ(shapes.at("blk.0.attn_output.weight"), (std::vector<int64_t>{72, 64}));
}

TEST(ExtractProgram, ProgramFields) {
  ModelSpec spec = gqaSpec(2);
  Program program = lower(spec);
  EXPECT_EQ(program.name, "tiny_gqa");
  EXPECT_EQ(program.target, kTarget);
  EXPECT_EQ(program.configJson, spec.canonicalJson());
  EXPECT_FALSE(program.irHash.empty());
  EXPECT_EQ(program.contextLength, 48);
  EXPECT_EQ(program.vocabSize, 100);
  EXPECT_EQ(program.prefillChunk, 48); // min(contextLength, 128)
  for (EntryKind kind : entryKindsOf(program.architecture))
    EXPECT_EQ(program.entry(kind).kind, kind) << entryName(kind);
  // Each kernel's own IR hash names its object in the kernel cache: every
  // kernel has one, and no two kernels of a program share it.
  std::set<std::string> kernelHashes;
  for (const Kernel &kernel : program.kernels) {
    EXPECT_EQ(kernel.schedule, "fast") << kernel.name;
    EXPECT_FALSE(kernel.irHash.empty()) << kernel.name;
    EXPECT_TRUE(kernelHashes.insert(kernel.irHash).second) << kernel.name;
  }
  // The same kernels, lowered again with 2 more layers, hash alike.
  Program deeper = lower(gqaSpec(4));
  for (size_t i = 0; i < program.kernels.size(); ++i)
    EXPECT_EQ(deeper.kernels[i].irHash, program.kernels[i].irHash) << program.kernels[i].name;

  // The KV-cache block: each layer's keys, then its values, back to back at
  // 64-byte aligned offsets.
  ASSERT_EQ(program.caches.size(), 4u);
  int64_t offset = 0;
  for (int layer = 0; layer < 2; ++layer)
    for (bool key : {true, false}) {
      const CacheBuffer &cache = program.caches[2 * layer + (key ? 0 : 1)];
      EXPECT_EQ(cache.name, "blk." + std::to_string(layer) + (key ? ".key" : ".value"));
      EXPECT_EQ(cache.rows, 48);
      EXPECT_EQ(cache.cols, 32);
      EXPECT_EQ(cache.layout, key ? CacheLayout::Transposed : CacheLayout::Rows) << cache.name;
      EXPECT_EQ(cache.offset, offset) << cache.name;
      offset += (cache.rows * cache.cols * 4 + 63) / 64 * 64;
    }
  EXPECT_EQ(program.kvCacheBytes, offset);
  EXPECT_EQ(program.kvCacheBytes, 2 * 2 * 48 * 32 * 4);

  LoweringOptions plain;
  plain.scheduleOverrides = "plain";
  plain.prefillChunk = 16;
  Program other = lower(spec, plain);
  EXPECT_EQ(other.prefillChunk, 16);
  for (const Kernel &kernel : other.kernels)
    EXPECT_EQ(kernel.schedule, "plain") << kernel.name;
}

TEST(ExtractProgram, AttentionInputKernel) {
  Program program = lower(gqaSpec(2));
  const Kernel *decode = findKernel(program, "decode_attn_in");
  const Kernel *prefill = findKernel(program, "prefill_attn_in");
  ASSERT_NE(decode, nullptr);
  ASSERT_NE(prefill, nullptr);

  EXPECT_EQ(opKinds(*decode), (std::vector<OpKind>{OpKind::RmsNorm, OpKind::Linear, OpKind::Linear,
                                                   OpKind::Linear, OpKind::Rope, OpKind::Rope}));

  // x, norm weight, wq, wk, wv, k cache, v cache, then q as output.
  ASSERT_EQ(decode->params.size(), 8u);
  EXPECT_TRUE(decode->params[0].tokenRows);
  EXPECT_EQ(decode->params[0].shape, (std::vector<int64_t>{1, 64}));
  EXPECT_EQ(prefill->params[0].shape, (std::vector<int64_t>{kDynamicRows, 64}));
  for (int cache : {5, 6}) {
    EXPECT_TRUE(decode->params[cache].isCache);
    EXPECT_TRUE(decode->params[cache].isOutput);
    EXPECT_EQ(decode->params[cache].shape, (std::vector<int64_t>{48, 32}));
  }
  EXPECT_EQ(decode->params[5].cacheLayout, CacheLayout::Transposed);
  EXPECT_EQ(decode->params[6].cacheLayout, CacheLayout::Rows);
  EXPECT_TRUE(decode->params[7].isOutput);
  EXPECT_FALSE(decode->params[7].isCache);

  // Values: 8 params, then ops. Epilogue fusion pulls in rope(k) and the
  // cache stores before rope(q): the k cache gets rope(k), the v cache
  // linear(v), the output rope(q).
  const int firstOp = 8;
  EXPECT_EQ(decode->outputValue.at(5), firstOp + 4);
  EXPECT_EQ(decode->outputValue.at(6), firstOp + 3);
  EXPECT_EQ(decode->outputValue.at(7), firstOp + 5);
  EXPECT_EQ(decode->ops[4].operands, (std::vector<int>{firstOp + 2})); // rope(k)
  const KernelOp &ropeQ = decode->ops[5];
  EXPECT_EQ(ropeQ.operands, (std::vector<int>{firstOp + 1}));
  EXPECT_EQ(std::get<RopeAttrs>(ropeQ.attrs).headDim, 16);
  EXPECT_EQ(std::get<RopeAttrs>(ropeQ.attrs).theta, 10000.0);
  EXPECT_TRUE(ropeQ.tokenRows);
  EXPECT_DOUBLE_EQ(std::get<RmsNormAttrs>(decode->ops[0].attrs).eps, 1e-5);

  const Kernel *attention = findKernel(program, "decode_attention");
  ASSERT_NE(attention, nullptr);
  ASSERT_EQ(attention->ops.size(), 1u);
  const AttentionAttrs &heads = std::get<AttentionAttrs>(attention->ops[0].attrs);
  EXPECT_EQ(heads.nHeads, 4);
  EXPECT_EQ(heads.nKvHeads, 2);
  EXPECT_TRUE(attention->params[1].isCache);
  EXPECT_FALSE(attention->params[1].isOutput);
  EXPECT_EQ(attention->params[1].cacheLayout, CacheLayout::Transposed);
  EXPECT_EQ(attention->params[2].cacheLayout, CacheLayout::Rows);
}

TEST(ExtractProgram, Bindings) {
  for (const ModelSpec &spec : {gqaSpec(2), gpt2Spec(2)}) {
    Program program = lower(spec);
    EXPECT_EQ(program.vocabSize, spec.vocabSize);
    for (const EntryPoint *entry : entries(program)) {
      SCOPED_TRACE(std::string(variantName(spec.family)) + " " + entryName(entry->kind));
      bool allRows = entry == &program.score;
      std::set<int64_t> weightsUsed;
      std::set<std::string> cachesUsed;
      int tokens = 0, logits = 0;
      for (size_t l = 0; l < entry->launches.size(); ++l) {
        const Launch &launch = entry->launches[l];
        const Kernel &kernel = program.kernels.at(launch.kernel);
        // score launches prefill's kernels but for its logits.
        bool named = kernel.name.rfind(std::string(entryName(entry->kind)) + "_", 0) == 0 ||
                     (allRows && kernel.name.rfind("prefill_", 0) == 0);
        EXPECT_TRUE(named) << entryName(entry->kind) << " launches " << kernel.name;
        ASSERT_EQ(launch.bindings.size(), kernel.params.size()) << kernel.name;
        for (size_t p = 0; p < kernel.params.size(); ++p) {
          const Binding &binding = launch.bindings[p];
          const KernelParam &param = kernel.params[p];
          switch (binding.storage) {
          case Storage::Weight:
            EXPECT_EQ(program.weights.at(binding.index).shape, param.shape);
            weightsUsed.insert(binding.index);
            break;
          case Storage::Cache: {
            EXPECT_TRUE(param.isCache) << kernel.name << " param " << p;
            const CacheBuffer &cache = program.caches.at(binding.index);
            EXPECT_EQ(param.cacheLayout, cache.layout) << kernel.name << " param " << p;
            EXPECT_EQ(param.shape, (std::vector<int64_t>{cache.rows, cache.cols}));
            cachesUsed.insert(cache.name);
            break;
          }
          case Storage::Tokens:
            ++tokens;
            EXPECT_EQ(param.type.plain, DType::I32);
            break;
          case Storage::Logits:
            ++logits;
            EXPECT_EQ(l, entry->launches.size() - 1);
            EXPECT_EQ(param.shape,
                      (std::vector<int64_t>{allRows ? kDynamicRows : 1, program.vocabSize}));
            // prefill selects the last row; decode's one row is its token's.
            EXPECT_EQ(param.tokenRows, entry != &program.prefill);
            break;
          case Storage::Arena:
            EXPECT_EQ(binding.offset % 64, 0);
            EXPECT_LE(binding.offset + paramBytes(program, param), entry->arenaBytes);
            break;
          }
        }
      }
      EXPECT_EQ(weightsUsed.size(), program.weights.size());
      EXPECT_EQ(cachesUsed,
                (std::set<std::string>{"blk.0.key", "blk.0.value", "blk.1.key", "blk.1.value"}));
      EXPECT_EQ(tokens, 1);
      EXPECT_EQ(logits, 1);
    }
  }
}

/// Replays an entry's launches over the arena: every arena input must still
/// hold exactly what an earlier launch wrote there (no later write touched
/// it), and a launch never writes over its own inputs.
void expectNoLiveOverlap(const Program &program, const EntryPoint &entry) {
  struct Region {
    int64_t begin, end;
    size_t writer;
  };
  std::vector<Region> valid;
  auto overlaps = [](int64_t b0, int64_t e0, int64_t b1, int64_t e1) {
    return b0 < e1 && b1 < e0;
  };
  for (size_t l = 0; l < entry.launches.size(); ++l) {
    const Launch &launch = entry.launches[l];
    const Kernel &kernel = program.kernels.at(launch.kernel);
    std::vector<Region> reads, writes;
    for (size_t p = 0; p < kernel.params.size(); ++p) {
      if (launch.bindings[p].storage != Storage::Arena)
        continue;
      int64_t begin = launch.bindings[p].offset;
      Region region{begin, begin + paramBytes(program, kernel.params[p]), l};
      (kernel.params[p].isOutput ? writes : reads).push_back(region);
    }
    for (const Region &read : reads) {
      bool intact = std::any_of(valid.begin(), valid.end(), [&](const Region &r) {
        return r.begin == read.begin && r.end == read.end;
      });
      EXPECT_TRUE(intact) << entryName(entry.kind) << " launch " << l << " ("
                          << kernel.name << ") reads arena bytes ["
                          << read.begin << ", " << read.end
                          << ") that were overwritten or never written";
      for (const Region &write : writes)
        EXPECT_FALSE(overlaps(read.begin, read.end, write.begin, write.end))
            << entryName(entry.kind) << " launch " << l << " writes over its input";
    }
    for (const Region &write : writes) {
      valid.erase(std::remove_if(valid.begin(), valid.end(),
                                 [&](const Region &r) {
                                   return overlaps(r.begin, r.end, write.begin,
                                                   write.end);
                                 }),
                  valid.end());
      valid.push_back(write);
    }
  }
}

TEST(ExtractProgram, ArenaOffsetsDoNotOverlapWhileLive) {
  for (const Program &other : {lower(gpt2Spec(2)), lower(gqaSpec(2))})
    for (const EntryPoint *entry : entries(other)) {
      SCOPED_TRACE(other.name);
      expectNoLiveOverlap(other, *entry);
    }
  Program program = lower(gqaSpec(2));
  // Reuse: the arena is far smaller than one buffer per launch result.
  int64_t allResults = 0;
  for (const Launch &launch : program.prefill.launches) {
    const Kernel &kernel = program.kernels.at(launch.kernel);
    for (size_t p = 0; p < kernel.params.size(); ++p)
      if (launch.bindings[p].storage == Storage::Arena &&
          kernel.params[p].isOutput)
        allResults += paramBytes(program, kernel.params[p]);
  }
  EXPECT_LT(program.prefill.arenaBytes, allResults / 2);
  EXPECT_GT(program.prefill.arenaBytes, 0);
  EXPECT_GT(program.decode.arenaBytes, 0);
}

// Without the layout pass nothing transposes a cache: the program must say
// rows everywhere, in the cache block and in every kernel signature alike.
TEST(ExtractProgram, SkippingCacheLayoutsLeavesEveryCacheInRows) {
  LoweringOptions options;
  options.skipPasses = {"tfm-choose-cache-layouts"};
  Program program = lower(gqaSpec(2), options);
  ASSERT_EQ(program.caches.size(), 4u);
  for (const CacheBuffer &cache : program.caches)
    EXPECT_EQ(cache.layout, CacheLayout::Rows) << cache.name;
  for (const Kernel &kernel : program.kernels)
    for (const KernelParam &param : kernel.params)
      EXPECT_NE(param.cacheLayout, CacheLayout::Transposed) << kernel.name << " " << param.name;
}

// Regression: the key and value stores were once merged into one kernel and
// one layout then applied to both caches. Without epilogue fusion each store
// is a kernel of its own, identical but for its cache's layout; they must
// stay two kernels, and no kernel parameter may ever be bound to caches of
// two layouts or to a cache laid out otherwise than the parameter says.
TEST(ExtractProgram, CacheStoresKeepTheirCacheLayouts) {
  for (const ModelSpec &spec : {gqaSpec(2), gpt2Spec(2)}) {
    SCOPED_TRACE(spec.name);
    LoweringOptions options;
    options.skipPasses = {"tfm-fuse-epilogues"};
    Program program = lower(spec, options);

    const Kernel *keyStore = findKernel(program, "prefill_key_store");
    const Kernel *valueStore = findKernel(program, "prefill_value_store");
    ASSERT_TRUE(keyStore && valueStore);
    for (const auto &[kernel, layout] : {std::make_pair(keyStore, CacheLayout::Transposed),
                                         std::make_pair(valueStore, CacheLayout::Rows)}) {
      int caches = 0;
      for (const KernelParam &param : kernel->params)
        if (param.isCache) {
          ++caches;
          EXPECT_TRUE(param.isOutput) << kernel->name;
          EXPECT_EQ(param.cacheLayout, layout) << kernel->name;
        }
      EXPECT_EQ(caches, 1) << kernel->name;
    }

    std::map<std::pair<int, size_t>, CacheLayout> boundLayout; // (kernel, param) -> layout
    for (const Launch &launch : program.prefill.launches) {
      const Kernel &kernel = program.kernels.at(launch.kernel);
      ASSERT_EQ(launch.bindings.size(), kernel.params.size()) << kernel.name;
      for (size_t p = 0; p < launch.bindings.size(); ++p) {
        const Binding &binding = launch.bindings[p];
        if (binding.storage != Storage::Cache)
          continue;
        const CacheBuffer &cache = program.caches.at(binding.index);
        auto bound = boundLayout.emplace(std::make_pair(launch.kernel, p), cache.layout).first;
        EXPECT_EQ(bound->second, cache.layout)
            << kernel.name << " param " << p << " is bound to caches of both layouts (now "
            << cache.name << ")";
        EXPECT_EQ(kernel.params[p].cacheLayout, cache.layout)
            << kernel.name << " param " << p << " bound to " << cache.name;
      }
    }
    EXPECT_FALSE(boundLayout.empty());
  }
}

TEST(ExtractProgram, ScheduleOverrides) {
  Program base = lower(gqaSpec(2));
  ASSERT_FALSE(base.decode.launches.empty());
  const std::string chosen = base.kernels.at(base.decode.launches.front().kernel).name;
  EXPECT_EQ(findKernel(base, chosen)->schedule, "fast");

  // One name for every kernel.
  LoweringOptions allPlain;
  allPlain.scheduleOverrides = "plain";
  Program plain = lower(gqaSpec(2), allPlain);
  for (const Kernel &kernel : plain.kernels)
    EXPECT_EQ(kernel.schedule, "plain") << kernel.name;

  // kernel=name changes that kernel only.
  LoweringOptions onePlain;
  onePlain.scheduleOverrides = chosen + "=plain";
  Program overridden = lower(gqaSpec(2), onePlain);
  ASSERT_EQ(overridden.kernels.size(), base.kernels.size());
  for (size_t i = 0; i < base.kernels.size(); ++i) {
    const Kernel &kernel = overridden.kernels[i];
    EXPECT_EQ(kernel.name, base.kernels[i].name);
    EXPECT_EQ(kernel.schedule, kernel.name == chosen ? "plain" : base.kernels[i].schedule)
        << kernel.name;
  }

  // A kernel the module does not have is a mistake, not a no-op.
  LoweringOptions missing;
  missing.scheduleOverrides = "no_such_kernel=plain";
  std::string error = loweringError(gqaSpec(2), missing);
  EXPECT_NE(error.find("'no_such_kernel'"), std::string::npos) << error;
}

// tfmc --tune's records choose a kernel's schedule by its tuning key and
// the target; a record for another target, or none, leaves the default.
TEST(ExtractProgram, TuningFileChoosesPerKernel) {
  Program base = lower(gqaSpec(2));
  std::set<std::string> keys;
  for (const Kernel &kernel : base.kernels)
    EXPECT_TRUE(keys.insert(kernel.tuningKey).second) << kernel.name;
  // The key leaves out the schedule and the name: the same kernels, deeper
  // and all plain, have the same keys.
  LoweringOptions allPlain;
  allPlain.scheduleOverrides = "plain";
  Program deeperPlain = lower(gqaSpec(4), allPlain);
  for (size_t i = 0; i < base.kernels.size(); ++i)
    EXPECT_EQ(deeperPlain.kernels[i].tuningKey, base.kernels[i].tuningKey) << base.kernels[i].name;

  const Kernel &tuned = base.kernels.front(), &elsewhere = base.kernels.back();
  TuningFile file;
  file.put({tuningTarget(std::string(kTarget) + "-profile"), tuned.tuningKey, tuned.name, "tiny",
            "fast-attn32", 1.0, 1.5});
  file.put({"arm-64-linux", elsewhere.tuningKey, elsewhere.name, "tiny", "plain", 1.0, 1.5});
  llvm::SmallString<128> path;
  llvm::sys::fs::createUniquePath("tfm-tuning-%%%%%%.json", path, /*MakeAbsolute=*/true);
  ASSERT_FALSE(bool(writeTuningFile(std::string(path), file)));
  LoweringOptions options;
  options.tuningFile = std::string(path);
  Program chosen = lower(gqaSpec(2), options);
  for (const Kernel &kernel : chosen.kernels)
    EXPECT_EQ(kernel.schedule, kernel.name == tuned.name ? "fast-attn32" : "fast") << kernel.name;
  // An override still wins over the record.
  options.scheduleOverrides = "plain";
  for (const Kernel &kernel : lower(gqaSpec(2), options).kernels)
    EXPECT_EQ(kernel.schedule, "plain") << kernel.name;

  ASSERT_FALSE(bool(writeTextFile(std::string(path), "{\"format\": \"other\"}")));
  options.scheduleOverrides.clear();
  std::string error = loweringError(gqaSpec(2), options);
  EXPECT_NE(error.find(std::string(path) + ": field 'version'"), std::string::npos) << error;
  llvm::sys::fs::remove(path);
}

TEST(ExtractProgram, UnknownScheduleIsAnError) {
  LoweringOptions options;
  options.scheduleOverrides = "fastest";
  std::string error = loweringError(gqaSpec(2), options);
  EXPECT_NE(error.find("unknown schedule 'fastest'"), std::string::npos) << error;
  EXPECT_NE(error.find("fast, fast-mv32, "), std::string::npos) << error;
}

TEST(ExtractProgram, SkippingAnUnknownPassIsAnError) {
  LoweringOptions options;
  options.skipPasses = {"tfm-fuse-everything"};
  std::string error = loweringError(gqaSpec(2), options);
  EXPECT_NE(error.find("'tfm-fuse-everything'"), std::string::npos) << error;
}

// A family or activation with no lowering can no longer be written: the
// variants are types, and the builder switches over every value
// (ModelSpecTest refuses such names in a config).
TEST(ExtractProgram, UnsupportedSpecIsAnError) {
  LoweringOptions tooLong;
  tooLong.prefillChunk = 49;
  std::string error = loweringError(gqaSpec(2), tooLong);
  EXPECT_NE(error.find("prefill chunk 49"), std::string::npos) << error;

  // A config says nothing about the machine: the caller must name a target.
  llvm::Expected<Program> untargeted = lowerConfig(gqaSpec(2), LoweringOptions{});
  ASSERT_FALSE(static_cast<bool>(untargeted));
  error = llvm::toString(untargeted.takeError());
  EXPECT_NE(error.find("no target"), std::string::npos) << error;
}

TEST(ExtractProgram, DumpsIrAfterEveryPass) {
  std::filesystem::path dir = std::filesystem::temp_directory_path() /
                              ("tfm-extract-program-" +
                               std::to_string(::testing::UnitTest::GetInstance()
                                                  ->random_seed()));
  std::filesystem::remove_all(dir);
  LoweringOptions options;
  options.dumpIrDir = dir.string();
  options.emitMlirPath = (dir / "final.mlir").string();
  lower(gqaSpec(2), options);
  EXPECT_TRUE(std::filesystem::exists(dir / "input.mlir"));
  EXPECT_TRUE(std::filesystem::exists(dir / "final.mlir"));
  // MLIR's file tree: <counter>_<pass argument>.mlir after each pass, in a
  // folder per module and per function a nested pass ran on.
  std::vector<std::string> dumped;
  for (const auto &file : std::filesystem::recursive_directory_iterator(dir))
    if (file.is_regular_file())
      dumped.push_back(file.path().filename().string());
  for (const char *pass :
       {"canonicalize", "cse", "tfm-fuse-norm-linear", "tfm-fuse-epilogues",
        "tfm-choose-cache-layouts", "tfm-outline-kernels", "tfm-deduplicate-kernels",
        "tfm-plan-memory", "tfm-select-schedules"}) {
    std::string suffix = std::string("_") + pass + ".mlir";
    EXPECT_TRUE(std::any_of(dumped.begin(), dumped.end(), [&](const std::string &name) {
      return llvm::StringRef(name).ends_with(suffix);
    })) << pass;
  }
  std::filesystem::remove_all(dir);
}

} // namespace
} // namespace tfm
