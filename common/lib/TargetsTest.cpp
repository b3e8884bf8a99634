//===- TargetsTest.cpp - Explicit CPU targets and the host check ----------===//
#include "tfm/common/Targets.h"

#include <gtest/gtest.h>

using namespace tfm;

namespace {

std::string error(llvm::Expected<std::string> target) {
  return target ? "" : llvm::toString(target.takeError());
}

llvm::StringMap<bool> cpu(std::initializer_list<const char *> features) {
  llvm::StringMap<bool> map;
  for (const char *f : features)
    map[f] = true;
  return map;
}

} // namespace

TEST(Targets, PresetsAreExplicit) {
  EXPECT_EQ(llvm::cantFail(resolveTarget("avx2")), "x86-64-linux-sse41-avx-f16c-fma-avx2");
  EXPECT_EQ(llvm::cantFail(resolveTarget("avx512")),
            "x86-64-linux-sse41-avx-f16c-fma-avx2-avx512-avx512_skylake");
}

TEST(Targets, HostIsThisCpusFeatureListAndRunsHere) {
  std::string host = llvm::cantFail(resolveTarget("host"));
  EXPECT_EQ(host.find("host"), std::string::npos);
  EXPECT_EQ(llvm::cantFail(resolveTarget(host)), host); // a valid explicit string
  EXPECT_TRUE(missingCpuFeatures(host, hostCpuFeatures()).empty()) << host;
  // Every feature the CPU has is listed, not only the first.
  llvm::StringMap<bool> cpu = hostCpuFeatures();
  if (cpu.lookup("avx2") && cpu.lookup("fma"))
    EXPECT_NE(host.find("-avx2"), std::string::npos) << host;
}

TEST(Targets, ExplicitStringsAreChecked) {
  EXPECT_EQ(error(resolveTarget("x86-64-linux-avx2")), "");
  EXPECT_NE(error(resolveTarget("x86-64-linux-avx3")).find("unknown x86 feature \"avx3\""),
            std::string::npos);
  // A target from a file is quoted: escaped and cut.
  std::string hostile = "x86-64-linux-" + std::string(1000, 'a') + "\x1b[31m";
  std::string refusal = error(resolveTarget(hostile));
  EXPECT_NE(refusal.find("(1018 bytes)"), std::string::npos) << refusal;
  EXPECT_EQ(refusal.find('\x1b'), std::string::npos) << refusal;
  EXPECT_NE(error(resolveTarget("x86-32-windows")).find("64-bit Linux"), std::string::npos);
  EXPECT_NE(error(resolveTarget("fastest")).find("host, x86-64, avx2, avx512"), std::string::npos);
}

/// AMD's Zen 4: AVX-512 with VNNI and BF16, and no AMX.
llvm::StringMap<bool> amdZen4() {
  return cpu({"sse4.1", "avx", "f16c", "fma", "avx2", "avx512f", "avx512cd", "avx512vl",
              "avx512bw", "avx512dq", "avx512ifma", "avx512vbmi", "avx512bf16", "avx512vnni"});
}

TEST(Targets, MissingFeaturesNameWhatTheCpuLacks) {
  llvm::StringMap<bool> zen4 = amdZen4();
  EXPECT_TRUE(missingCpuFeatures("x86-64-linux-avx2-avx512_cannonlake", zen4).empty());
  // Halide's Sapphire Rapids is Cannon Lake with VNNI and BF16: Zen 4 has it.
  EXPECT_TRUE(missingCpuFeatures("x86-64-linux-avx2-avx512_sapphirerapids", zen4).empty());
  llvm::StringMap<bool> skylakeX = cpu({"sse4.1", "avx", "f16c", "fma", "avx2", "avx512f",
                                        "avx512cd", "avx512vl", "avx512bw", "avx512dq"});
  std::vector<std::string> missing =
      missingCpuFeatures("x86-64-linux-avx2-avx512_sapphirerapids", skylakeX);
  ASSERT_EQ(missing.size(), 1u);
  EXPECT_EQ(missing[0],
            "avx512_sapphirerapids (needs avx512ifma, avx512vbmi, avx512bf16, avx512vnni)");
  EXPECT_EQ(missingCpuFeatures("x86-64-linux-fma4", zen4),
            std::vector<std::string>{"fma4 (needs fma4)"});
}

// amx_int8 and amx_bf16 are tfmc's, not Halide's: Halide emits tile
// operations only for its Sapphire Rapids, which a Zen 4 runs without
// having AMX.
TEST(Targets, AmxTilesAreTheirOwnFeature) {
  const std::string sapphireRapids = "x86-64-linux-avx2-avx512_sapphirerapids";
  EXPECT_EQ(error(resolveTarget(sapphireRapids + "-amx_int8-amx_bf16")), "");
  EXPECT_NE(error(resolveTarget("x86-64-linux-avx2-avx512_skylake-amx_int8"))
                .find("amx_int8 needs avx512_sapphirerapids"),
            std::string::npos);
  EXPECT_NE(error(resolveTarget("x86-64-linux-avx2-avx512_skylake-amx_bf16"))
                .find("amx_bf16 needs avx512_sapphirerapids"),
            std::string::npos);
  EXPECT_EQ(llvm::cantFail(targetLlvmFeatures("x86-64-linux-amx_int8-avx512_sapphirerapids"))
                .substr(0, 20),
            "+amx-tile,+amx-int8,");
  EXPECT_EQ(llvm::cantFail(targetLlvmFeatures("x86-64-linux-amx_bf16-avx512_sapphirerapids"))
                .substr(0, 20),
            "+amx-tile,+amx-bf16,");
  EXPECT_EQ(missingCpuFeatures(sapphireRapids + "-amx_int8-amx_bf16", amdZen4()),
            (std::vector<std::string>{"amx_int8 (needs amx-tile, amx-int8)",
                                      "amx_bf16 (needs amx-tile, amx-bf16)"}));
}

TEST(Targets, LlvmFeaturesAreTheUnionOfWhatEachFeatureNeeds) {
  EXPECT_EQ(llvm::cantFail(targetLlvmFeatures("x86-64-linux-sse41-avx-avx2")),
            "+sse4.1,+avx,+avx2");
  EXPECT_EQ(llvm::cantFail(targetLlvmFeatures("x86-64-linux-avx512-avx512_skylake")),
            "+avx512f,+avx512cd,+avx512vl,+avx512bw,+avx512dq");
  EXPECT_EQ(llvm::cantFail(targetLlvmFeatures("x86-64-linux-profile")), "");
  EXPECT_NE(error(targetLlvmFeatures("x86-64-linux-avx3")).find("unknown"),
            std::string::npos);
}

TEST(Targets, TheProfilerIsAskedForNeverPickedForHost) {
  EXPECT_EQ(error(resolveTarget("x86-64-linux-avx2-profile")), "");
  EXPECT_TRUE(targetHasFeature("x86-64-linux-profile-avx2", "profile"));
  EXPECT_FALSE(targetHasFeature("x86-64-linux-avx2", "profile"));
  EXPECT_TRUE(missingCpuFeatures("x86-64-linux-avx2-profile", cpu({"avx2"})).empty());
  llvm::Expected<std::string> host = resolveTarget("host");
  ASSERT_TRUE(bool(host)) << llvm::toString(host.takeError());
  EXPECT_EQ(host->find("profile"), std::string::npos) << *host;
}

TEST(Targets, GpusAreDevicesBesideThisCpu) {
  std::string host = llvm::cantFail(resolveTarget("host"));
  EXPECT_EQ(llvm::cantFail(resolveTarget("cuda")), host + "-cuda-cuda_capability_80");
  EXPECT_EQ(llvm::cantFail(resolveTarget("cuda_capability_86")), host + "-cuda-cuda_capability_86");
  EXPECT_EQ(llvm::cantFail(resolveTarget("opencl")), host + "-opencl-cl_doubles");
  EXPECT_EQ(targetDevice(host), TargetDevice::Cpu);
  EXPECT_EQ(targetDevice(llvm::cantFail(resolveTarget("cuda"))), TargetDevice::Cuda);
  EXPECT_EQ(targetDevice(llvm::cantFail(resolveTarget("opencl"))), TargetDevice::OpenCl);
  // The CPU never lacks a GPU feature, and compiles the driver with its own.
  std::string cuda = llvm::cantFail(resolveTarget("cuda"));
  EXPECT_TRUE(missingCpuFeatures(cuda, hostCpuFeatures()).empty()) << cuda;
  EXPECT_EQ(llvm::cantFail(targetLlvmFeatures(cuda)), llvm::cantFail(targetLlvmFeatures(host)));
}

TEST(Targets, GpuFeaturesAreChecked) {
  // CUDA without a capability is made explicit: PTX for Ampere, which
  // Hopper runs.
  EXPECT_EQ(llvm::cantFail(resolveTarget("x86-64-linux-avx2-cuda")),
            "x86-64-linux-avx2-cuda-cuda_capability_80");
  EXPECT_NE(error(resolveTarget("x86-64-linux-avx2-cuda-opencl")).find("names both cuda and opencl"),
            std::string::npos);
  EXPECT_NE(error(resolveTarget("x86-64-linux-avx2-cuda_capability_86"))
                .find("a cuda_capability needs the cuda feature"),
            std::string::npos);
  EXPECT_NE(error(resolveTarget("x86-64-linux-cuda-cuda_capability_80-cuda_capability_86"))
                .find("names 2 CUDA capabilities"),
            std::string::npos);
  EXPECT_NE(error(resolveTarget("x86-64-linux-cuda-cuda_capability_90")).find("unknown x86 feature"),
            std::string::npos);
  EXPECT_NE(error(resolveTarget("x86-64-linux-avx2-cl_doubles"))
                .find("cl_doubles needs the opencl feature"),
            std::string::npos);
}
