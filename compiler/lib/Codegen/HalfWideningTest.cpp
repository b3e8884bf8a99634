//===- HalfWideningTest.cpp - f16 idiom to fpext, checked on every f16 ----===//
//
// The idiom is written here as Halide 14 leaves it in a kernel's bitcode
// (decode_logits of an f16 Llama): 32 lanes widened at once, the select
// split into halves behind shufflevectors, a scalar copy as a vector
// loop's tail has it, and a scalar whose exponent LLVM tests before the
// shift, as in a block's f16 scale read one at a time (a q8_0 block's d,
// a k-quant's super-block d and dmin). Each function is compiled by LLVM 22's JIT as it is
// and after the rewrite, and both widen all 65536 f16 bit patterns.
//
//===----------------------------------------------------------------------===//
#include "tfm/Codegen/HalfWidening.h"

#include "JitModule.h"

#include "llvm/AsmParser/Parser.h"
#include "llvm/IR/InstIterator.h"
#include "llvm/IR/Instructions.h"
#include "llvm/IR/LLVMContext.h"
#include "llvm/IR/Module.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/TargetParser/Host.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <memory>
#include <optional>
#include <vector>

namespace {

/// widen32(in, out): 32 f16 bit patterns to f32; widen1 and
/// widen1_exponent_unshifted: one.
constexpr const char *kIdiom = R"(
define void @widen32(ptr %in, ptr %out) {
  %h = load <32 x i16>, ptr %in, align 2
  %sx = sext <32 x i16> %h to <32 x i32>
  %s = shl nsw <32 x i32> %sx, splat (i32 13)
  %m = and <32 x i32> %s, splat (i32 -1879056384)
  %e = and <32 x i32> %s, splat (i32 260046848)
  %e0 = shufflevector <32 x i32> %e, <32 x i32> undef, <16 x i32> <i32 0, i32 1, i32 2, i32 3, i32 4, i32 5, i32 6, i32 7, i32 8, i32 9, i32 10, i32 11, i32 12, i32 13, i32 14, i32 15>
  %c0 = icmp eq <16 x i32> %e0, splat (i32 260046848)
  %e1 = shufflevector <32 x i32> %e, <32 x i32> undef, <16 x i32> <i32 16, i32 17, i32 18, i32 19, i32 20, i32 21, i32 22, i32 23, i32 24, i32 25, i32 26, i32 27, i32 28, i32 29, i32 30, i32 31>
  %c1 = icmp eq <16 x i32> %e1, splat (i32 260046848)
  %o = or <32 x i32> %s, splat (i32 2139095040)
  %of = bitcast <32 x i32> %o to <32 x float>
  %mf = bitcast <32 x i32> %m to <32 x float>
  %v = fmul reassoc nnan ninf nsz contract afn <32 x float> %mf, splat (float 0x46F0000000000000)
  %of0 = shufflevector <32 x float> %of, <32 x float> undef, <16 x i32> <i32 0, i32 1, i32 2, i32 3, i32 4, i32 5, i32 6, i32 7, i32 8, i32 9, i32 10, i32 11, i32 12, i32 13, i32 14, i32 15>
  %v0 = shufflevector <32 x float> %v, <32 x float> undef, <16 x i32> <i32 0, i32 1, i32 2, i32 3, i32 4, i32 5, i32 6, i32 7, i32 8, i32 9, i32 10, i32 11, i32 12, i32 13, i32 14, i32 15>
  %r0 = select reassoc nnan ninf nsz contract afn <16 x i1> %c0, <16 x float> %of0, <16 x float> %v0
  %of1 = shufflevector <32 x float> %of, <32 x float> undef, <16 x i32> <i32 16, i32 17, i32 18, i32 19, i32 20, i32 21, i32 22, i32 23, i32 24, i32 25, i32 26, i32 27, i32 28, i32 29, i32 30, i32 31>
  %v1 = shufflevector <32 x float> %v, <32 x float> undef, <16 x i32> <i32 16, i32 17, i32 18, i32 19, i32 20, i32 21, i32 22, i32 23, i32 24, i32 25, i32 26, i32 27, i32 28, i32 29, i32 30, i32 31>
  %r1 = select reassoc nnan ninf nsz contract afn <16 x i1> %c1, <16 x float> %of1, <16 x float> %v1
  store <16 x float> %r0, ptr %out, align 4
  %out1 = getelementptr inbounds float, ptr %out, i64 16
  store <16 x float> %r1, ptr %out1, align 4
  ret void
}

define float @widen1(i16 %h) {
  %sx = sext i16 %h to i32
  %s = shl nsw i32 %sx, 13
  %m = and i32 %s, -1879056384
  %mf = bitcast i32 %m to float
  %v = fmul reassoc nnan ninf nsz contract afn float %mf, 0x46F0000000000000
  %e = and i32 %s, 260046848
  %c = icmp eq i32 %e, 260046848
  %o = or i32 %m, 2139095040
  %of = bitcast i32 %o to float
  %r = select i1 %c, float %of, float %v
  ret float %r
}

define float @widen1_exponent_unshifted(i16 %h) {
  %sx = sext i16 %h to i32
  %s = shl nsw i32 %sx, 13
  %m = and i32 %s, -1879056384
  %e = and i32 %sx, 31744
  %c = icmp eq i32 %e, 31744
  %o = or i32 %s, 2139095040
  %of = bitcast i32 %o to float
  %mf = bitcast i32 %m to float
  %v = fmul reassoc nnan ninf nsz contract afn float %mf, 0x46F0000000000000
  %r = select reassoc nnan ninf nsz contract afn i1 %c, float %of, float %v
  ret float %r
}

; Not the idiom: 2^111 is another scale, so this stays as written.
define float @scaled_otherwise(i16 %h) {
  %sx = sext i16 %h to i32
  %s = shl nsw i32 %sx, 13
  %m = and i32 %s, -1879056384
  %mf = bitcast i32 %m to float
  %v = fmul float %mf, 0x46E0000000000000
  ret float %v
}
)";

using Widen32 = void (*)(const uint16_t *, float *);
using Widen1 = float (*)(uint16_t);

std::unique_ptr<llvm::Module> parseIdiom(llvm::LLVMContext &context) {
  llvm::SMDiagnostic error;
  std::unique_ptr<llvm::Module> module = llvm::parseAssemblyString(kIdiom, error, context);
  if (!module)
    ADD_FAILURE() << "the test's IR does not parse: " << error.getMessage().str();
  return module;
}

int count(const llvm::Module &module, llvm::StringRef function, unsigned opcode) {
  int n = 0;
  for (const llvm::Instruction &inst : llvm::instructions(*module.getFunction(function)))
    n += inst.getOpcode() == opcode;
  return n;
}

bool sameFloat(float a, float b) {
  if (std::isnan(a) || std::isnan(b))
    return std::isnan(a) && std::isnan(b);
  uint32_t x, y;
  std::memcpy(&x, &a, 4);
  std::memcpy(&y, &b, 4);
  return x == y; // signed zeros apart
}

/// The module, rewritten or not, compiled for this CPU.
struct Compiled {
  explicit Compiled(bool rewrite) {
    auto context = std::make_unique<llvm::LLVMContext>();
    std::unique_ptr<llvm::Module> module = parseIdiom(*context);
    if (rewrite)
      replaced = tfm::widenHalvesNatively(*module);
    jit.emplace(std::move(module), std::move(context));
  }
  template <typename F> F lookup(llvm::StringRef name) { return jit->lookup<F>(name); }
  int replaced = 0;
  std::optional<tfm::testing::JitModule> jit;
};

class HalfWidening : public ::testing::Test {
protected:
  void SetUp() override {
#if defined(__x86_64__)
    if (!llvm::sys::getHostCPUFeatures().lookup("f16c"))
      GTEST_SKIP() << "this CPU lacks F16C, which the rewritten code converts f16 with";
#endif
  }
};

TEST_F(HalfWidening, ReplacesTheIdiomAndItsInfinityChoice) {
  llvm::LLVMContext context;
  std::unique_ptr<llvm::Module> module = parseIdiom(context);
  ASSERT_TRUE(module);
  EXPECT_EQ(tfm::widenHalvesNatively(*module), 3);
  for (llvm::StringRef f : {"widen32", "widen1", "widen1_exponent_unshifted"}) {
    SCOPED_TRACE(f.str());
    EXPECT_EQ(count(*module, f, llvm::Instruction::FPExt), 1);
    EXPECT_EQ(count(*module, f, llvm::Instruction::FMul), 0);
    EXPECT_EQ(count(*module, f, llvm::Instruction::Select), 0);
    EXPECT_EQ(count(*module, f, llvm::Instruction::ICmp), 0);
  }
  EXPECT_EQ(count(*module, "scaled_otherwise", llvm::Instruction::FMul), 1);
  EXPECT_EQ(count(*module, "scaled_otherwise", llvm::Instruction::FPExt), 0);
}

TEST_F(HalfWidening, EveryHalfWidensAsBefore) {
  Compiled before(false), after(true);
  ASSERT_EQ(after.replaced, 3);
  auto vectorBefore = before.lookup<Widen32>("widen32");
  auto vectorAfter = after.lookup<Widen32>("widen32");
  auto scalarBefore = before.lookup<Widen1>("widen1");
  auto scalarAfter = after.lookup<Widen1>("widen1");
  auto unshiftedBefore = before.lookup<Widen1>("widen1_exponent_unshifted");
  auto unshiftedAfter = after.lookup<Widen1>("widen1_exponent_unshifted");
  std::vector<uint16_t> halves(65536);
  for (size_t i = 0; i < halves.size(); ++i)
    halves[i] = static_cast<uint16_t>(i);
  std::vector<float> was(65536), is(65536);
  for (size_t i = 0; i < halves.size(); i += 32) {
    vectorBefore(&halves[i], &was[i]);
    vectorAfter(&halves[i], &is[i]);
  }
  int differing = 0;
  for (size_t i = 0; i < halves.size(); ++i) {
    differing += !sameFloat(was[i], is[i]);
    differing += !sameFloat(scalarBefore(halves[i]), scalarAfter(halves[i]));
    differing += !sameFloat(scalarAfter(halves[i]), is[i]);
    differing += !sameFloat(unshiftedBefore(halves[i]), unshiftedAfter(halves[i]));
    differing += !sameFloat(unshiftedAfter(halves[i]), is[i]);
  }
  EXPECT_EQ(differing, 0);
  // The idiom is the f16 value: spot checks that the comparison is not of
  // two equally wrong results.
  EXPECT_EQ(is[0x3c00], 1.0f);
  EXPECT_EQ(is[0xc000], -2.0f);
  EXPECT_EQ(is[0x0001], std::ldexp(1.0f, -24)); // the smallest subnormal
  EXPECT_EQ(is[0x7bff], 65504.0f);
  EXPECT_TRUE(std::isinf(is[0xfc00]) && is[0xfc00] < 0);
  EXPECT_TRUE(std::isnan(is[0x7e01]));
}

} // namespace
