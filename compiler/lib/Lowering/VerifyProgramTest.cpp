//===- VerifyProgramTest.cpp - A Program that disagrees with itself -------===//
//
// aidreams260k lowered as tfmc lowers it, then one field edited as a
// hand-written module could have it: each is refused with a message that
// names both values.
//
//===----------------------------------------------------------------------===//
#include "VerifyProgram.h"

#include "tfm/Lowering/LowerToProgram.h"

#include <gtest/gtest.h>

#include <functional>

namespace tfm {
namespace {

/// `config` (a path in the repository) lowered for AVX2 with prefill chunks
/// of `prefillChunk` rows (0: the default).
Program lowered(const char *config = "/configs/aidreams260k.json", int64_t prefillChunk = 0) {
  llvm::Expected<ModelSpec> spec = loadModelSpec(std::string(TFM_SOURCE_DIR) + config);
  if (!spec)
    throw std::runtime_error(llvm::toString(spec.takeError()));
  LoweringOptions options;
  options.target = "x86-64-linux-sse41-avx-f16c-fma-avx2";
  options.prefillChunk = prefillChunk;
  llvm::Expected<Program> program = lowerConfig(*spec, options);
  if (!program)
    throw std::runtime_error(llvm::toString(program.takeError()));
  return std::move(*program);
}

/// Mistral's window of 16 over 128 positions, in prefill chunks of 8: its
/// caches slide, 16 - 1 + 8 = 23 rows each.
Program sliding() {
  return lowered("/tests/reference/configs/mistral-sliding-window.json", 8);
}

/// The refusal of `lowered` after `edit`; "" if it passes.
std::string refusal(const std::function<void(Program &)> &edit,
                    const std::function<Program()> &lower = [] { return lowered(); }) {
  Program p = lower();
  edit(p);
  llvm::Error e = verifyProgram(p);
  return e ? llvm::toString(std::move(e)) : "";
}

/// The launch of `entry` that writes the logits, and its logits parameter.
std::pair<Launch *, KernelParam *> logitsLaunch(Program &p, EntryPoint &entry) {
  for (Launch &l : entry.launches)
    for (size_t i = 0; i < l.bindings.size(); ++i)
      if (l.bindings[i].storage == Storage::Logits)
        return {&l, &p.kernels[l.kernel].params[i]};
  throw std::runtime_error("no launch writes the logits");
}

/// The first launch of `entry` with an arena input, and that binding.
std::pair<Launch *, Binding *> arenaReader(Program &p, EntryPoint &entry) {
  for (Launch &l : entry.launches)
    for (size_t i = 0; i < l.bindings.size(); ++i)
      if (l.bindings[i].storage == Storage::Arena && !p.kernels[l.kernel].params[i].isOutput)
        return {&l, &l.bindings[i]};
  throw std::runtime_error("no launch reads the arena");
}

TEST(VerifyProgram, PassesWhatTfmcLowers) { EXPECT_EQ(refusal([](Program &) {}), ""); }

TEST(VerifyProgram, ContextAgainstCacheRows) {
  EXPECT_EQ(refusal([](Program &p) { p.caches[3].rows = 64; }),
            "cache \"blk.1.value\": 64 rows, but tfm.context_length is 128: expected one row "
            "per position");
}

TEST(VerifyProgram, ContextAgainstConfig) {
  EXPECT_EQ(refusal([](Program &p) {
              p.contextLength = 4096;
              for (CacheBuffer &c : p.caches)
                c.rows = 4096;
            }),
            "tfm.config's context_length 128 differs from tfm.context_length 4096");
}

TEST(VerifyProgram, VocabularyAgainstTheLogitsKernels) {
  EXPECT_EQ(refusal([](Program &p) { p.vocabSize = 1000; }),
            "tfm.config's vocab_size 512 differs from tfm.vocab_size 1000");
  std::string found = refusal([](Program &p) { logitsLaunch(p, p.decode).second->shape[1] = 600; });
  EXPECT_NE(found.find("is [1, 600] f32"), std::string::npos) << found;
  EXPECT_NE(found.find("expected the output [1, 512] f32"), std::string::npos) << found;
}

TEST(VerifyProgram, EveryRowOfLogitsOnlyForScore) {
  std::string found = refusal([](Program &p) {
    KernelParam *logits = logitsLaunch(p, p.prefill).second;
    logits->tokenRows = true;
    logits->shape[0] = kDynamicRows;
  });
  EXPECT_NE(found.find("entry 'prefill'"), std::string::npos) << found;
  EXPECT_NE(found.find("is [?, 512] f32 of token rows, but it is bound to the logits: expected "
                       "the output [1, 512] f32 of the last row"),
            std::string::npos)
      << found;
}

TEST(VerifyProgram, PrefillChunkWithinTheContext) {
  EXPECT_EQ(refusal([](Program &p) { p.prefillChunk = 0; }),
            "tfm.prefill_chunk: found 0, expected 1 to tfm.context_length (128)");
  EXPECT_EQ(refusal([](Program &p) { p.prefillChunk = int64_t(1) << 62; }),
            "tfm.prefill_chunk: found 4611686018427387904, expected 1 to tfm.context_length (128)");
}

TEST(VerifyProgram, CachesInsideTheBlockAndApart) {
  EXPECT_EQ(refusal([](Program &p) { p.kvCacheBytes -= 64; }),
            "cache \"blk.3.value\": offset 229376 and 32768 bytes, but tfm.kv_cache_bytes is "
            "262080: expected a 64-byte aligned offset with the buffer inside the block");
  EXPECT_EQ(refusal([](Program &p) { p.caches[1].offset = 64; }),
            "cache \"blk.0.key\" (bytes 0..32768) and cache \"blk.0.value\" (from byte 64) "
            "overlap");
  // Sizes past int64 are refused, not wrapped.
  std::string found = refusal([](Program &p) { p.caches[0].cols = int64_t(1) << 60; });
  EXPECT_NE(found.find("expected at most 2147483647 elements"), std::string::npos) << found;
}

TEST(VerifyProgram, SlidingCachesHoldAWindowAndACall) {
  EXPECT_EQ(refusal([](Program &) {}, sliding), "");
  EXPECT_EQ(sliding().caches[0].rows, 23);
  // Fewer rows than a window before a chunk and the chunk: a call's rows
  // would pass the buffer's end after the driver moves the window's.
  EXPECT_EQ(refusal([](Program &p) { p.caches[0].rows = 22; }, sliding),
            "cache \"blk.0.key\": 22 rows for a window of 16: expected window - 1 + "
            "tfm.prefill_chunk (8) to tfm.context_length (128)");
  EXPECT_EQ(refusal([](Program &p) { p.caches[2].baseOffset = p.caches[3].offset + 8; }, sliding),
            "cache \"blk.1.value\" (bytes 17664..23552) and cache \"blk.1.key\"'s base (from "
            "byte 17672) overlap");
  // A GPU library's driver moves no rows: its caches hold every position.
  std::string gpu = refusal([](Program &p) { p.target += "-cuda"; }, sliding);
  EXPECT_NE(gpu.find("cache \"blk.0.key\" slides (window 16), but target"), std::string::npos)
      << gpu;
  std::string found = refusal([](Program &p) { p.caches[0].baseOffset = p.kvCacheBytes - 4; },
                              sliding);
  EXPECT_NE(found.find("expected an 8-byte aligned slot inside the block"), std::string::npos)
      << found;
}

TEST(VerifyProgram, SlidingCachesReadThroughTheirWindow) {
  // The decode attention kernel's key cache parameter, read with a window.
  auto keysRead = [](Program &p) -> KernelParam & {
    for (Kernel &k : p.kernels)
      for (KernelParam &q : k.params)
        if (q.isCache && !q.isOutput)
          return q;
    throw std::runtime_error("no kernel reads a cache");
  };
  std::string found = refusal([&](Program &p) { keysRead(p).slidingWindow = 0; }, sliding);
  EXPECT_NE(found.find("reads every position, but its cache"), std::string::npos) << found;
  EXPECT_NE(found.find("slides"), std::string::npos) << found;
  found = refusal([&](Program &p) { keysRead(p).slidingWindow = 17; }, sliding);
  EXPECT_NE(found.find("reads a window of 17, but its cache"), std::string::npos) << found;
  EXPECT_NE(found.find("holds a window of 16"), std::string::npos) << found;
}

TEST(VerifyProgram, ArenaValuesInsideTheArena) {
  std::string found = refusal([](Program &p) { arenaReader(p, p.decode).second->offset = 1 << 20; });
  EXPECT_NE(found.find("arena offset 1048576"), std::string::npos) << found;
  EXPECT_NE(found.find("but the entry's tfm.arena_bytes is"), std::string::npos) << found;
}

TEST(VerifyProgram, ArenaReadsWhatWasWritten) {
  std::string found = refusal([](Program &p) {
    Binding *read = arenaReader(p, p.decode).second;
    read->offset += 64;
  });
  EXPECT_NE(found.find("reads arena bytes"), std::string::npos) << found;
  EXPECT_NE(found.find("no earlier launch wrote as one value"), std::string::npos) << found;
}

TEST(VerifyProgram, OutputsOverlapNoArenaArgument) {
  std::string found = refusal([](Program &p) {
    auto [launch, read] = arenaReader(p, p.decode);
    const Kernel &k = p.kernels[launch->kernel];
    for (size_t i = 0; i < k.params.size(); ++i)
      if (k.params[i].isOutput && launch->bindings[i].storage == Storage::Arena)
        launch->bindings[i].offset = read->offset;
  });
  EXPECT_NE(found.find("overlap, and one of them is written"), std::string::npos) << found;
}

TEST(VerifyProgram, WeightsAreReadOnlyAndOfTheirShape) {
  std::string found = refusal([](Program &p) {
    for (Launch &l : p.decode.launches)
      for (size_t i = 0; i < l.bindings.size(); ++i)
        if (l.bindings[i].storage == Storage::Weight) {
          l.bindings[i].index = (l.bindings[i].index + 1) % int64_t(p.weights.size());
          return;
        }
  });
  EXPECT_NE(found.find(", but its weight"), std::string::npos) << found;
}

TEST(VerifyProgram, KernelsOfBoundedSize) {
  std::string found = refusal([](Program &p) {
    Kernel &k = p.kernels.front();
    KernelOp add = k.ops.back();
    add.attrs = AddAttrs{};
    for (int i = 0; i < 70; ++i) {
      add.operands = {int(k.params.size() + k.ops.size()) - 1,
                      int(k.params.size() + k.ops.size()) - 1};
      k.ops.push_back(add);
    }
  });
  EXPECT_NE(found.find("ops, more than the 64 a kernel may hold"), std::string::npos) << found;
  found = refusal([](Program &p) {
    Kernel &k = p.kernels.front();
    KernelOp add = k.ops.back();
    add.attrs = AddAttrs{};
    for (int i = 0; i < 10; ++i) { // each reads the one before twice
      add.operands = {int(k.params.size() + k.ops.size()) - 1,
                      int(k.params.size() + k.ops.size()) - 1};
      k.ops.push_back(add);
    }
  });
  EXPECT_NE(found.find("(tfm.add) unfolds to more than 256 terms"), std::string::npos) << found;
}

Program encoderDecoder() { return lowered("/tests/reference/configs/t5-v10-relu-tied.json"); }

/// The first launch of `entry` binding a source cache, and that binding's
/// index among its bindings.
std::pair<Launch *, size_t> sourceCacheLaunch(Program &p, EntryPoint &entry) {
  for (Launch &l : entry.launches)
    for (size_t i = 0; i < l.bindings.size(); ++i)
      if (l.bindings[i].storage == Storage::Cache && p.caches[l.bindings[i].index].source)
        return {&l, i};
  throw std::runtime_error("no launch binds a source cache");
}

TEST(VerifyProgram, PassesAnEncoderDecoder) {
  EXPECT_EQ(refusal([](Program &) {}, encoderDecoder), "");
}

// A source cache's rows are the source's: a kernel reads one only through
// an argument that says so (its window is the recorded source rows).
TEST(VerifyProgram, SourceCachesAreReadAsSourceCaches) {
  std::string refused = refusal(
      [](Program &p) {
        // The decoder's reading kernel bound instead to a self cache: its
        // argument says source, the cache does not.
        auto [decodeLaunch, readSlot] = sourceCacheLaunch(p, p.decode);
        decodeLaunch->bindings[readSlot].index = 0;
      },
      encoderDecoder);
  EXPECT_NE(refused.find("reads a source cache"), std::string::npos) << refused;
  EXPECT_NE(refused.find("self-attention cache"), std::string::npos) << refused;
}

// An encode of a chunk's tokens writes that many rows of each source cache.
TEST(VerifyProgram, AnEncodeFitsItsSourceCaches) {
  std::string refused = refusal(
      [](Program &p) {
        p.sourceLength = 100; // fewer rows than the 160 an encode may write
        for (CacheBuffer &c : p.caches)
          if (c.source)
            c.rows = 100;
      },
      encoderDecoder);
  EXPECT_NE(refused.find("at least tfm.prefill_chunk (160"), std::string::npos) << refused;
}

TEST(VerifyProgram, SourceCacheRowsAreTheSourceLength) {
  std::string refused = refusal(
      [](Program &p) {
        for (CacheBuffer &c : p.caches)
          if (c.source)
            c.rows = 8;
      },
      encoderDecoder);
  EXPECT_NE(refused.find("a source cache of 8 rows"), std::string::npos) << refused;
}

} // namespace
} // namespace tfm
