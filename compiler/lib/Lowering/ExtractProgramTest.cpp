//===- ExtractProgramTest.cpp - lowerToProgram on small llama and GPT-2 ---===//
#include "tfm/Codegen/LowerToProgram.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <map>
#include <set>

namespace tfm {
namespace {

/// 4 query heads share 2 kv heads (GQA); sizes are small but all distinct.
ModelSpec gqaSpec(int64_t layers) {
  ModelSpec spec;
  spec.name = "tiny_gqa";
  spec.family = "llama";
  spec.dim = 64;
  spec.hiddenDim = 96;
  spec.nLayers = layers;
  spec.nHeads = 4;
  spec.nKvHeads = 2;
  spec.headDim = 16;
  spec.vocabSize = 100;
  spec.contextLength = 48;
  return spec;
}

/// GPT-2 with odd sizes: 5 heads of 16, vocab 101; tied head unless told.
ModelSpec gpt2Spec(int64_t layers) {
  ModelSpec spec;
  spec.name = "tiny_gpt2";
  spec.family = "gpt2";
  spec.dim = 80;
  spec.hiddenDim = 320;
  spec.nLayers = layers;
  spec.nHeads = 5;
  spec.nKvHeads = 5;
  spec.headDim = 16;
  spec.vocabSize = 101;
  spec.contextLength = 48;
  spec.norm = "layer_norm";
  spec.activation = "gelu_tanh";
  spec.positions = "learned";
  spec.ropeTheta = 0.0;
  spec.projectionBias = true;
  spec.tiedEmbeddings = true;
  spec.bosTokenId = spec.eosTokenId = 100;
  return spec;
}

Program lower(const ModelSpec &spec, LoweringOptions options = {}) {
  Program program;
  std::string error;
  EXPECT_TRUE(lowerToProgram(spec, options, program, error)) << error;
  return program;
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

std::vector<std::string> opKinds(const Kernel &kernel) {
  std::vector<std::string> kinds;
  for (const KernelOp &op : kernel.ops)
    kinds.push_back(op.kind);
  return kinds;
}

std::vector<const EntryPoint *> entries(const Program &program) {
  return {&program.prefill, &program.decode, &program.score};
}

TEST(ExtractProgram, KernelCountDoesNotGrowWithLayers) {
  for (ModelSpec (*shape)(int64_t) : {gqaSpec, gpt2Spec}) {
    Program two = lower(shape(2));
    Program five = lower(shape(5));
    SCOPED_TRACE(five.spec.family);
    ASSERT_FALSE(two.kernels.empty());
    EXPECT_EQ(two.kernels.size(), five.kernels.size());
    for (size_t i = 0; i < two.kernels.size(); ++i)
      EXPECT_EQ(two.kernels[i].name, five.kernels[i].name);
    // Per layer: attn_in, attention, attn_out, ffn_in, ffn_out; before them
    // the embedding, after them the logits.
    for (const EntryPoint *entry : entries(five))
      EXPECT_EQ(entry->launches.size(), 1u + 5u * 5u + 1u) << entry->name;
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
  EXPECT_EQ(opKinds(prefill), (std::vector<std::string>{"last_row", "layer_norm", "linear"}));
  EXPECT_EQ(opKinds(score), (std::vector<std::string>{"layer_norm", "linear"}));
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
    EXPECT_EQ(opKinds(*embed), (std::vector<std::string>{"embedding", "add_positions"}));
    EXPECT_EQ(opKinds(*attnIn), (std::vector<std::string>{"layer_norm", "linear", "slice_cols",
                                                          "slice_cols", "slice_cols"}));
    EXPECT_EQ(opKinds(*attnOut), (std::vector<std::string>{"linear", "add"}));
    EXPECT_EQ(opKinds(*ffnIn), (std::vector<std::string>{"layer_norm", "linear", "gelu"}));
    EXPECT_EQ(opKinds(*ffnOut), (std::vector<std::string>{"linear", "add"}));
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
  const int firstOp = 8;
  const KernelOp &norm = attnIn.ops[0];
  EXPECT_EQ(norm.operands, (std::vector<int>{0, 1, 2}));
  EXPECT_DOUBLE_EQ(norm.attrs.at("eps"), 1e-5);
  EXPECT_EQ(attnIn.ops[1].operands, (std::vector<int>{firstOp, 3, 4})); // bias: 3rd operand
  EXPECT_EQ(attnIn.ops[1].shape, (std::vector<int64_t>{1, 240}));
  for (int slice = 0; slice < 3; ++slice) {
    const KernelOp &op = attnIn.ops[2 + slice];
    EXPECT_EQ(op.operands, (std::vector<int>{firstOp + 1}));
    EXPECT_EQ(op.attrs.at("begin"), 80.0 * slice);
    EXPECT_EQ(op.attrs.at("size"), 80.0);
    EXPECT_EQ(op.shape, (std::vector<int64_t>{1, 80}));
    EXPECT_TRUE(op.tokenRows);
  }
  EXPECT_EQ(attnIn.outputValue.at(7), firstOp + 2); // q
  EXPECT_EQ(attnIn.outputValue.at(5), firstOp + 3); // k cache
  EXPECT_EQ(attnIn.outputValue.at(6), firstOp + 4); // v cache

  const Kernel &attention = *findKernel(program, "decode_attention");
  EXPECT_EQ(attention.ops[0].attrs.at("n_heads"), 5.0);
  EXPECT_EQ(attention.ops[0].attrs.at("n_kv_heads"), 5.0);
  EXPECT_EQ(attention.ops[0].attrs.at("head_dim"), 16.0);

  EXPECT_EQ(findKernel(program, "decode_ffn_in")->ops[2].attrs.at("approximate"), 1.0);
  EXPECT_EQ(findKernel(program, "decode_ffn_out")->ops[0].operands.size(), 3u);
  // The tied output head has no bias.
  EXPECT_EQ(findKernel(program, "decode_logits")->ops[1].operands.size(), 2u);

  ModelSpec exact = gpt2Spec(1);
  exact.activation = "gelu";
  Program erf = lower(exact);
  EXPECT_EQ(findKernel(erf, "decode_ffn_in")->ops[2].attrs.at("approximate"), 0.0);
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
  Program program = lower(gqaSpec(2));
  EXPECT_EQ(program.prefillChunk, 48); // min(contextLength, 128)
  EXPECT_EQ(program.kvCacheBytes, 2 * 2 * 48 * 32 * 4);
  EXPECT_EQ(program.prefill.name, "prefill");
  EXPECT_EQ(program.decode.name, "decode");
  EXPECT_EQ(program.score.name, "score");
  for (const Kernel &kernel : program.kernels)
    EXPECT_EQ(kernel.schedule, "fast") << kernel.name;

  LoweringOptions plain;
  plain.schedule = "plain";
  plain.prefillChunk = 16;
  Program other = lower(gqaSpec(2), plain);
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

  std::vector<std::string> kinds;
  for (const KernelOp &op : decode->ops)
    kinds.push_back(op.kind);
  std::vector<std::string> expectedKinds = {"rms_norm", "linear", "linear",
                                            "linear",   "rope",   "rope"};
  EXPECT_EQ(kinds, expectedKinds);

  // x, norm weight, wq, wk, wv, k cache, v cache, then q as output.
  ASSERT_EQ(decode->params.size(), 8u);
  EXPECT_TRUE(decode->params[0].tokenRows);
  EXPECT_EQ(decode->params[0].shape, (std::vector<int64_t>{1, 64}));
  EXPECT_EQ(prefill->params[0].shape,
            (std::vector<int64_t>{kDynamicRows, 64}));
  for (int cache : {5, 6}) {
    EXPECT_TRUE(decode->params[cache].isCache);
    EXPECT_TRUE(decode->params[cache].isOutput);
    EXPECT_EQ(decode->params[cache].shape, (std::vector<int64_t>{48, 32}));
  }
  EXPECT_TRUE(decode->params[7].isOutput);
  EXPECT_FALSE(decode->params[7].isCache);

  // Values: 8 params, then ops. k cache gets rope(k), v cache linear(v),
  // the output rope(q).
  const int firstOp = 8;
  EXPECT_EQ(decode->outputValue.at(5), firstOp + 5);
  EXPECT_EQ(decode->outputValue.at(6), firstOp + 3);
  EXPECT_EQ(decode->outputValue.at(7), firstOp + 4);
  const KernelOp &ropeQ = decode->ops[4];
  EXPECT_EQ(ropeQ.operands, (std::vector<int>{firstOp + 1}));
  EXPECT_EQ(ropeQ.attrs.at("head_dim"), 16.0);
  EXPECT_EQ(ropeQ.attrs.at("theta"), 10000.0);
  EXPECT_TRUE(ropeQ.tokenRows);
  EXPECT_DOUBLE_EQ(decode->ops[0].attrs.at("eps"), 1e-5);

  const Kernel *attention = findKernel(program, "decode_attention");
  ASSERT_NE(attention, nullptr);
  ASSERT_EQ(attention->ops.size(), 1u);
  EXPECT_EQ(attention->ops[0].attrs.at("n_heads"), 4.0);
  EXPECT_EQ(attention->ops[0].attrs.at("n_kv_heads"), 2.0);
  EXPECT_TRUE(attention->params[1].isCache);
  EXPECT_FALSE(attention->params[1].isOutput);
}

TEST(ExtractProgram, Bindings) {
  for (const ModelSpec &spec : {gqaSpec(2), gpt2Spec(2)}) {
    Program program = lower(spec);
    for (const EntryPoint *entry : entries(program)) {
      SCOPED_TRACE(spec.family + " " + entry->name);
      bool allRows = entry == &program.score;
      std::set<int64_t> weightsUsed, kLayers, vLayers;
      int tokens = 0, logits = 0;
      for (size_t l = 0; l < entry->launches.size(); ++l) {
        const Launch &launch = entry->launches[l];
        const Kernel &kernel = program.kernels.at(launch.kernel);
        // score launches prefill's kernels but for its logits.
        bool named = kernel.name.rfind(entry->name + "_", 0) == 0 ||
                     (allRows && kernel.name.rfind("prefill_", 0) == 0);
        EXPECT_TRUE(named) << entry->name << " launches " << kernel.name;
        ASSERT_EQ(launch.bindings.size(), kernel.params.size()) << kernel.name;
        for (size_t p = 0; p < kernel.params.size(); ++p) {
          const Binding &binding = launch.bindings[p];
          const KernelParam &param = kernel.params[p];
          switch (binding.storage) {
          case Storage::Weight:
            EXPECT_EQ(program.weights.at(binding.index).shape, param.shape);
            weightsUsed.insert(binding.index);
            break;
          case Storage::KCache:
          case Storage::VCache:
            EXPECT_TRUE(param.isCache) << kernel.name << " param " << p;
            (binding.storage == Storage::KCache ? kLayers : vLayers).insert(binding.index);
            break;
          case Storage::Tokens:
            ++tokens;
            EXPECT_EQ(param.type, ElemType::I32);
            break;
          case Storage::Logits:
            ++logits;
            EXPECT_EQ(l, entry->launches.size() - 1);
            EXPECT_EQ(param.shape, (std::vector<int64_t>{allRows ? kDynamicRows : 1,
                                                         spec.vocabSize}));
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
      EXPECT_EQ(kLayers, (std::set<int64_t>{0, 1}));
      EXPECT_EQ(vLayers, (std::set<int64_t>{0, 1}));
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
      EXPECT_TRUE(intact) << entry.name << " launch " << l << " ("
                          << kernel.name << ") reads arena bytes ["
                          << read.begin << ", " << read.end
                          << ") that were overwritten or never written";
      for (const Region &write : writes)
        EXPECT_FALSE(overlaps(read.begin, read.end, write.begin, write.end))
            << entry.name << " launch " << l << " writes over its input";
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
      SCOPED_TRACE(other.spec.family);
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

TEST(ExtractProgram, UnknownScheduleIsAnError) {
  LoweringOptions options;
  options.schedule = "fastest";
  Program program;
  std::string error;
  EXPECT_FALSE(lowerToProgram(gqaSpec(2), options, program, error));
  EXPECT_NE(error.find("unknown schedule 'fastest'"), std::string::npos)
      << error;
  EXPECT_NE(error.find("fast, plain"), std::string::npos) << error;
}

TEST(ExtractProgram, UnsupportedSpecIsAnError) {
  ModelSpec spec = gqaSpec(2);
  spec.family = "mamba";
  Program program;
  std::string error;
  EXPECT_FALSE(lowerToProgram(spec, {}, program, error));
  EXPECT_NE(error.find("family 'mamba'"), std::string::npos) << error;

  ModelSpec relu = gpt2Spec(2);
  relu.activation = "relu";
  EXPECT_FALSE(lowerToProgram(relu, {}, program, error));
  EXPECT_NE(error.find("activation 'relu'"), std::string::npos) << error;

  LoweringOptions tooLong;
  tooLong.prefillChunk = 49;
  EXPECT_FALSE(lowerToProgram(gqaSpec(2), tooLong, program, error));
  EXPECT_NE(error.find("prefill chunk 49"), std::string::npos) << error;
}

TEST(ExtractProgram, DumpsIrAfterEveryStage) {
  std::filesystem::path dir = std::filesystem::temp_directory_path() /
                              ("tfm-extract-program-" +
                               std::to_string(::testing::UnitTest::GetInstance()
                                                  ->random_seed()));
  std::filesystem::remove_all(dir);
  LoweringOptions options;
  options.dumpIrDir = dir.string();
  options.emitMlirPath = (dir / "final.mlir").string();
  lower(gqaSpec(2), options);
  for (const char *name :
       {"00-built.mlir", "01-canonicalize.mlir", "02-fuse-norm-linear.mlir",
        "03-fuse-epilogues.mlir", "04-outline-kernels.mlir",
        "05-plan-memory.mlir", "06-select-schedules.mlir", "final.mlir"})
    EXPECT_TRUE(std::filesystem::exists(dir / name)) << name;
  std::filesystem::remove_all(dir);
}

} // namespace
} // namespace tfm
