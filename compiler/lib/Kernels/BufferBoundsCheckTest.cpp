//===- BufferBoundsCheckTest.cpp - Kernels stay inside their buffers ------===//
//
// A tile that overhangs a weight's rows is found in the lowered statement,
// with nothing executed; and every autoscheduler, for every kernel of every
// preset config, for AVX2, AVX-512 and AMX targets alike, keeps inside the
// buffers a call binds (whatever CPU runs the test: the schedules are
// chosen for the target named).
//
//===----------------------------------------------------------------------===//
#include "BufferBoundsCheck.h"
#include "Schedules/Schedules.h"

#include "tfm/Kernels/KernelCompiler.h"
#include "tfm/Lowering/LowerToProgram.h"
#include "tfm/common/ModelSpec.h"
#include "tfm/common/Targets.h"
#include "tfm/common/TensorNames.h"
#include "tfm/common/WeightFileType.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <map>
#include <set>

using namespace tfm;
using namespace tfm::kernels;

namespace {

KernelParam param(const std::string &name, std::vector<int64_t> shape, bool tokenRows,
                  bool isOutput) {
  KernelParam p;
  p.name = name;
  p.shape = std::move(shape);
  p.tokenRows = tokenRows;
  p.isOutput = isOutput;
  p.isWeight = !tokenRows && !isOutput;
  return p;
}

/// GPT-2's tied head over every row of a call (score): [T, 80] rows times
/// the [1001, 80] embedding table.
Kernel tiedHead() {
  Kernel k;
  k.name = "score_logits";
  k.schedule = "plain";
  k.params = {param("x", {kDynamicRows, 80}, true, false), param("wte", {1001, 80}, false, false),
              param("logits", {kDynamicRows, 1001}, true, true)};
  KernelOp linear;
  linear.attrs = LinearAttrs{};
  linear.operands = {0, 1};
  linear.shape = {kDynamicRows, 1001};
  linear.tokenRows = true;
  k.ops = {linear};
  k.outputValue = {{2, 3}};
  return k;
}

/// The violations of `kernel` scheduled plainly, but for its product's
/// decoded weights computed at the root in column tiles of 1024 shifted
/// inwards: the 1001 rows of the table take one tile, shifted to start at
/// row -23.
std::vector<std::string> overhangingTileViolations() {
  Kernel k = tiedHead();
  Halide::Target target("x86-64-linux-sse41-avx-f16c-fma-avx2");
  ScheduledKernel s = scheduleKernel(*findScheduleSet("plain"), k, target, {});
  Value &product = s.algorithm.values[3];
  Halide::Var col("col"), k0("k"), tile("tile"), inTile("in_tile");
  Halide::Func decoded = product.decodedWeights;
  decoded.compute_root().split(decoded.args()[1], tile, inTile, 1024,
                               Halide::TailStrategy::ShiftInwards);
  BufferBoundsCheck check(k, s.algorithm, CallRange{64, 16});
  s.pipeline.add_custom_lowering_pass(&check, [] {});
  std::vector<Halide::Argument> args(s.algorithm.inputs.begin(), s.algorithm.inputs.end());
  s.pipeline.compile_to_module(args, k.name, target.with_feature(Halide::Target::NoRuntime));
  return check.violations();
}

TEST(BufferBoundsCheck, FindsATileOverhangingAWeight) {
  std::vector<std::string> found = overhangingTileViolations();
  ASSERT_EQ(found.size(), 1u);
  EXPECT_EQ(found[0], "input wte dimension 1: a call of 1 rows at position 0 reaches "
                      "-23..1000, outside the 0..1000 it is given");
}

TEST(BufferBoundsCheck, PassesTheKernelsAsScheduled) {
  Kernel k = tiedHead();
  for (const char *schedule : {"plain", "fast", "adams2019"}) {
    k.schedule = schedule;
    std::string error;
    EXPECT_TRUE(checkKernelBounds(k, "x86-64-linux-sse41-avx-f16c-fma-avx2-avx512-avx512_skylake",
                                  CallRange{64, 16}, error))
        << schedule << ": " << error;
  }
}

/// The targets whose autoscheduled kernels differ: 8 lanes, 16 lanes, and
/// Sapphire Rapids' AMX tiles, which only products of 8-bit activations
/// and block-format weights multiply in.
struct TargetCase {
  const char *target;
  const char *weights = nullptr; // tfmc --dtype; null: f32
  int64_t activationBlock = 0;
};
const TargetCase kTargets[] = {
    {"avx2"},
    {"avx512"},
    {"x86-64-linux-sse41-avx-f16c-fma-avx2-avx512-avx512_skylake-avx512_cannonlake-"
     "avx512_sapphirerapids-amx_int8-amx_bf16",
     "q8_0", 32}};

const char *const kAutoschedulers[] = {"adams2019", "li2018", "mullapudi2016"};

/// Every kernel of the config at `path`, autoscheduled for each of
/// `targets`, reads and writes inside its buffers; lowered with prefill
/// chunks of `prefillChunk` rows (0: the default).
void expectAutoschedulersStayInside(const std::string &path, llvm::ArrayRef<TargetCase> targets,
                                    int64_t prefillChunk = 0) {
  llvm::Expected<ModelSpec> spec = loadModelSpec(path);
  ASSERT_TRUE(bool(spec)) << llvm::toString(spec.takeError());
  for (const TargetCase &c : targets) {
    llvm::Expected<std::string> target = resolveTarget(c.target);
    ASSERT_TRUE(bool(target)) << llvm::toString(target.takeError());
    LoweringOptions options;
    options.target = *target;
    options.activationBlock = c.activationBlock;
    options.prefillChunk = prefillChunk;
    if (c.weights) // as a file of that type stores each tensor (rows of no whole block in f16)
      for (const ModelTensor &t : modelTensors(*spec)) {
        std::string fallback;
        options.weightTypes[t.name] =
            tensorEncoding(*parseWeightFileType(c.weights), t.name, t.shape, spec->nLayers,
                           spec->tiedEmbeddings, fallback);
      }
    llvm::Expected<Program> program = lowerConfig(*spec, options);
    ASSERT_TRUE(bool(program)) << llvm::toString(program.takeError());
    CallRange range{program->contextLength, program->prefillChunk};
    for (Kernel kernel : program->kernels)
      for (const char *autoscheduler : kAutoschedulers) {
        kernel.schedule = autoscheduler;
        std::string error;
        EXPECT_TRUE(checkKernelBounds(kernel, *target, range, error))
            << c.target << ": " << error;
      }
  }
}

/// The smallest preset of each family (fewest layers times width): the
/// one swept on every target.
std::set<std::string> smallestOfEachFamily();

/// Every preset config in configs/, one test each (ctest runs them side by
/// side): the smallest of its family on every target, a larger one on the
/// 16-lane target (the targets' vector widths are the smallest's to show,
/// the sizes' tilings these), which halves the sweep's share of CI.
class PresetKernels : public testing::TestWithParam<std::string> {};

TEST_P(PresetKernels, AutoschedulersStayInsideTheBuffers) {
  if (smallestOfEachFamily().count(GetParam()))
    expectAutoschedulersStayInside(GetParam(), kTargets);
  else
    expectAutoschedulersStayInside(GetParam(), {kTargets[1]});
}

/// For each family no preset has (configs/published/ holds real-size
/// configs of those, too slow to sweep), the first small config of the
/// reference tests that has it, on the 16-lane target: the targets'
/// differences are the presets' to show, the families' new ops these. In
/// prefill chunks of 8, so that the windowed families' caches slide (their
/// reads then start at a moving first row); an encoder-decoder's chunk is
/// its source length, as one encode takes the whole source.
class OtherFamilyKernels : public testing::TestWithParam<std::string> {};

TEST_P(OtherFamilyKernels, AutoschedulersStayInsideTheBuffers) {
  llvm::Expected<ModelSpec> spec = loadModelSpec(GetParam());
  ASSERT_TRUE(bool(spec)) << llvm::toString(spec.takeError());
  expectAutoschedulersStayInside(GetParam(), {kTargets[1]},
                                 /*prefillChunk=*/spec->encoderDecoder() ? 0 : 8);
}

/// The .json files of a folder, sorted.
std::vector<std::string> configsIn(const std::string &folder) {
  std::vector<std::string> configs;
  for (const auto &entry : std::filesystem::directory_iterator(folder))
    if (entry.path().extension() == ".json")
      configs.push_back(entry.path().string());
  std::sort(configs.begin(), configs.end());
  return configs;
}

std::vector<std::string> presetConfigs() { return configsIn(TFM_SOURCE_DIR "/configs"); }

std::set<std::string> smallestOfEachFamily() {
  std::map<Family, std::pair<int64_t, std::string>> smallest; // size, path
  for (const std::string &preset : presetConfigs()) {
    llvm::Expected<ModelSpec> spec = loadModelSpec(preset);
    if (!spec) {
      llvm::consumeError(spec.takeError());
      continue;
    }
    int64_t size = spec->nLayers * spec->dim;
    auto [it, inserted] = smallest.insert({spec->family, {size, preset}});
    if (!inserted && size < it->second.first)
      it->second = {size, preset};
  }
  std::set<std::string> paths;
  for (const auto &[family, entry] : smallest)
    paths.insert(entry.second);
  return paths;
}

/// The first reference config of each family that no preset has.
std::vector<std::string> otherFamilyConfigs() {
  std::set<Family> covered;
  for (const std::string &preset : presetConfigs())
    if (llvm::Expected<ModelSpec> spec = loadModelSpec(preset))
      covered.insert(spec->family);
    else
      llvm::consumeError(spec.takeError());
  std::vector<std::string> configs;
  for (const std::string &config : configsIn(TFM_SOURCE_DIR "/tests/reference/configs")) {
    llvm::Expected<ModelSpec> spec = loadModelSpec(config);
    if (!spec) {
      llvm::consumeError(spec.takeError());
      continue;
    }
    if (covered.insert(spec->family).second)
      configs.push_back(config);
  }
  return configs;
}

std::string configTestName(const testing::TestParamInfo<std::string> &info) {
  std::string name = std::filesystem::path(info.param).stem().string();
  for (char &c : name)
    if (!isalnum(static_cast<unsigned char>(c)))
      c = '_';
  return name;
}

INSTANTIATE_TEST_SUITE_P(Configs, PresetKernels, testing::ValuesIn(presetConfigs()),
                         configTestName);
INSTANTIATE_TEST_SUITE_P(Configs, OtherFamilyKernels, testing::ValuesIn(otherFamilyConfigs()),
                         configTestName);

} // namespace
