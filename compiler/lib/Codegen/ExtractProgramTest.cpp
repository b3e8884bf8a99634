//===- ExtractProgramTest.cpp - lowerToProgram on a small GQA llama -------===//
#include "tfm/Codegen/LowerToProgram.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>
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

TEST(ExtractProgram, KernelCountDoesNotGrowWithLayers) {
  Program two = lower(gqaSpec(2));
  Program five = lower(gqaSpec(5));
  ASSERT_FALSE(two.kernels.empty());
  EXPECT_EQ(two.kernels.size(), five.kernels.size());
  for (size_t i = 0; i < two.kernels.size(); ++i)
    EXPECT_EQ(two.kernels[i].name, five.kernels[i].name);
  // Per layer: attn_in, attention, attn_out, ffn_in, ffn_out.
  EXPECT_EQ(five.decode.launches.size(), 1u + 5u * 5u + 1u);
  EXPECT_EQ(five.prefill.launches.size(), 1u + 5u * 5u + 1u);
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

TEST(ExtractProgram, ProgramFields) {
  Program program = lower(gqaSpec(2));
  EXPECT_EQ(program.prefillChunk, 48); // min(contextLength, 128)
  EXPECT_EQ(program.kvCacheBytes, 2 * 2 * 48 * 32 * 4);
  EXPECT_EQ(program.prefill.name, "prefill");
  EXPECT_EQ(program.decode.name, "decode");
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
  ModelSpec spec = gqaSpec(2);
  Program program = lower(spec);
  for (const EntryPoint *entry : {&program.prefill, &program.decode}) {
    std::set<int64_t> weightsUsed, kLayers, vLayers;
    int tokens = 0, logits = 0;
    for (size_t l = 0; l < entry->launches.size(); ++l) {
      const Launch &launch = entry->launches[l];
      const Kernel &kernel = program.kernels.at(launch.kernel);
      EXPECT_EQ(kernel.name.rfind(entry->name + "_", 0), 0u)
          << entry->name << " launches " << kernel.name;
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
          (binding.storage == Storage::KCache ? kLayers : vLayers)
              .insert(binding.index);
          break;
        case Storage::Tokens:
          ++tokens;
          EXPECT_EQ(param.type, ElemType::I32);
          break;
        case Storage::Logits:
          ++logits;
          EXPECT_EQ(l, entry->launches.size() - 1);
          EXPECT_EQ(param.shape, (std::vector<int64_t>{1, 100}));
          break;
        case Storage::Arena:
          EXPECT_EQ(binding.offset % 64, 0);
          EXPECT_LE(binding.offset + paramBytes(program, param),
                    entry->arenaBytes);
          break;
        }
      }
    }
    EXPECT_EQ(weightsUsed.size(), program.weights.size()) << entry->name;
    EXPECT_EQ(kLayers, (std::set<int64_t>{0, 1}));
    EXPECT_EQ(vLayers, (std::set<int64_t>{0, 1}));
    EXPECT_EQ(tokens, 1);
    EXPECT_EQ(logits, 1);
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
  Program program = lower(gqaSpec(2));
  expectNoLiveOverlap(program, program.prefill);
  expectNoLiveOverlap(program, program.decode);
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
  spec.family = "gpt2";
  Program program;
  std::string error;
  EXPECT_FALSE(lowerToProgram(spec, {}, program, error));
  EXPECT_NE(error.find("family 'gpt2'"), std::string::npos) << error;

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
