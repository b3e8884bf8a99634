//===- HalfWideningTest.cpp - f16 idiom to fpext, checked on every f16 ----===//
//
// The idiom is written here as Halide 14 and LLVM 14 leave it in kernels'
// bitcode: 16 lanes of an f16 row (decode_logits of an f16 Llama), the
// selects split into halves behind shufflevectors; a scalar, as a block's
// f16 scale read on its own; and a scalar that is one lane of four block
// scales which LLVM's SLP vectorizer shifted and tested together (a q8_0
// prefill kernel), its exponent tests lanes of one interleaved compare.
// Each function is compiled by LLVM 22's JIT as it is and after the
// rewrite, and run on all 65536 f16 bit patterns with subnormals flushed,
// as the model library's driver runs the kernels: both give each f16's
// exact value.
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
#include <limits>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#if defined(__x86_64__)
#include <xmmintrin.h>
#endif

namespace {

/// A scalar idiom's subnormal value %subf and normal value %n, from its S
/// (%s) and S's magnitude and sign (%m): SCALAR_VALUES in the functions.
constexpr const char *kScalarValues = R"(  %mant = and i32 %s, 8380416
  %mf = sitofp i32 %mant to float
  %sub = fmul reassoc nnan ninf nsz contract afn float %mf, 0x3DA0000000000000
  %subi = bitcast float %sub to i32
  %sign = and i32 %s, -2147483648
  %subs = or i32 %sign, %subi
  %subf = bitcast i32 %subs to float
  %nf = bitcast i32 %m to float
  %n = fmul reassoc nnan ninf nsz contract afn float %nf, 0x46F0000000000000
)";

/// widen16(in, out): 16 f16 bit patterns to f32; widen1(h): one.
constexpr const char *kIdiom = R"(
define void @widen16(ptr %in, ptr %out) {
  %h = load <16 x i16>, ptr %in, align 2
  %sx = sext <16 x i16> %h to <16 x i32>
  %s = shl nsw <16 x i32> %sx, splat (i32 13)
  %e = and <16 x i32> %s, splat (i32 260046848)
  %m = and <16 x i32> %s, splat (i32 -1879056384)
  %e0 = shufflevector <16 x i32> %e, <16 x i32> undef, <8 x i32> <i32 0, i32 1, i32 2, i32 3, i32 4, i32 5, i32 6, i32 7>
  %inf0 = icmp eq <8 x i32> %e0, splat (i32 260046848)
  %e1 = shufflevector <16 x i32> %e, <16 x i32> undef, <8 x i32> <i32 8, i32 9, i32 10, i32 11, i32 12, i32 13, i32 14, i32 15>
  %inf1 = icmp eq <8 x i32> %e1, splat (i32 260046848)
  %o = or <16 x i32> %s, splat (i32 2139095040)
  %of = bitcast <16 x i32> %o to <16 x float>
  %zero0 = icmp eq <8 x i32> %e0, zeroinitializer
  %zero1 = icmp eq <8 x i32> %e1, zeroinitializer
  %mant = and <16 x i32> %s, splat (i32 8380416)
  %mf = sitofp <16 x i32> %mant to <16 x float>
  %sub = fmul reassoc nnan ninf nsz contract afn <16 x float> %mf, splat (float 0x3DA0000000000000)
  %subi = bitcast <16 x float> %sub to <16 x i32>
  %sign = and <16 x i32> %s, splat (i32 -2147483648)
  %subs = or <16 x i32> %subi, %sign
  %subf = bitcast <16 x i32> %subs to <16 x float>
  %nf = bitcast <16 x i32> %m to <16 x float>
  %n = fmul reassoc nnan ninf nsz contract afn <16 x float> %nf, splat (float 0x46F0000000000000)
  %subf0 = shufflevector <16 x float> %subf, <16 x float> undef, <8 x i32> <i32 0, i32 1, i32 2, i32 3, i32 4, i32 5, i32 6, i32 7>
  %n0 = shufflevector <16 x float> %n, <16 x float> undef, <8 x i32> <i32 0, i32 1, i32 2, i32 3, i32 4, i32 5, i32 6, i32 7>
  %f0 = select reassoc nnan ninf nsz contract afn <8 x i1> %zero0, <8 x float> %subf0, <8 x float> %n0
  %subf1 = shufflevector <16 x float> %subf, <16 x float> undef, <8 x i32> <i32 8, i32 9, i32 10, i32 11, i32 12, i32 13, i32 14, i32 15>
  %n1 = shufflevector <16 x float> %n, <16 x float> undef, <8 x i32> <i32 8, i32 9, i32 10, i32 11, i32 12, i32 13, i32 14, i32 15>
  %f1 = select reassoc nnan ninf nsz contract afn <8 x i1> %zero1, <8 x float> %subf1, <8 x float> %n1
  %of0 = shufflevector <16 x float> %of, <16 x float> undef, <8 x i32> <i32 0, i32 1, i32 2, i32 3, i32 4, i32 5, i32 6, i32 7>
  %r0 = select reassoc nnan ninf nsz contract afn <8 x i1> %inf0, <8 x float> %of0, <8 x float> %f0
  %of1 = shufflevector <16 x float> %of, <16 x float> undef, <8 x i32> <i32 8, i32 9, i32 10, i32 11, i32 12, i32 13, i32 14, i32 15>
  %r1 = select reassoc nnan ninf nsz contract afn <8 x i1> %inf1, <8 x float> %of1, <8 x float> %f1
  store <8 x float> %r0, ptr %out, align 4
  %out1 = getelementptr inbounds float, ptr %out, i64 8
  store <8 x float> %r1, ptr %out1, align 4
  ret void
}

define float @widen1(i16 %h) {
  %sx = sext i16 %h to i32
  %s = shl nsw i32 %sx, 13
  %m = and i32 %s, -1879056384
  %e = and i32 %s, 260046848
  %inf = icmp eq i32 %e, 260046848
  %zero = icmp eq i32 %e, 0
  %o = or i32 %m, 2139095040
  %of = bitcast i32 %o to float
SCALAR_VALUES
  %f = select reassoc nnan ninf nsz contract afn i1 %zero, float %subf, float %n
  %r = select reassoc nnan ninf nsz contract afn i1 %inf, float %of, float %f
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

/// A scalar that is lane 3 of four f16 block scales shifted and tested
/// together, its zero test lane ZERO_LANE of the compare: lane 6 in
/// widen_lane3, the idiom; lane 4 (the third scale's test, not the
/// fourth's) in other_lanes_tested, whose selects must both stay.
constexpr const char *kLane3 = R"(
define float @NAME(ptr %in) {
  %hs = load <4 x i16>, ptr %in, align 2
  %sx = sext <4 x i16> %hs to <4 x i32>
  %sv = shl nsw <4 x i32> %sx, splat (i32 13)
  %s = extractelement <4 x i32> %sv, i64 3
  %m = and i32 %s, -1879056384
  %o = or i32 %s, 2139095040
  %of = bitcast i32 %o to float
SCALAR_VALUES
  %ev = and <4 x i32> %sv, splat (i32 260046848)
  %pairs = shufflevector <4 x i32> %ev, <4 x i32> poison, <8 x i32> <i32 0, i32 0, i32 1, i32 1, i32 2, i32 2, i32 3, i32 3>
  %tests = icmp eq <8 x i32> %pairs, <i32 0, i32 260046848, i32 0, i32 260046848, i32 0, i32 260046848, i32 0, i32 260046848>
  %zero = extractelement <8 x i1> %tests, i64 ZERO_LANE
  %f = select reassoc nnan ninf nsz contract afn i1 %zero, float %subf, float %n
  %inf = extractelement <8 x i1> %tests, i64 7
  %r = select reassoc nnan ninf nsz contract afn i1 %inf, float %of, float %f
  ret float %r
}
)";

std::string lane3Function(const std::string &name, int zeroLane) {
  std::string ir = kLane3;
  ir.replace(ir.find("NAME"), 4, name);
  ir.replace(ir.find("ZERO_LANE"), 9, std::to_string(zeroLane));
  return ir;
}

using Widen16 = void (*)(const uint16_t *, float *);
using Widen1 = float (*)(uint16_t);
using WidenLane3 = float (*)(const uint16_t *);

std::unique_ptr<llvm::Module> parseIdiom(llvm::LLVMContext &context) {
  llvm::SMDiagnostic error;
  std::string ir = kIdiom + lane3Function("widen_lane3", 6) +
                   lane3Function("other_lanes_tested", 4);
  for (size_t at; (at = ir.find("SCALAR_VALUES\n")) != std::string::npos;)
    ir.replace(at, 14, kScalarValues);
  std::unique_ptr<llvm::Module> module = llvm::parseAssemblyString(ir, error, context);
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

/// The f16 with bits `h`, from its fields (IEEE 754 binary16).
float halfValue(uint16_t h) {
  int exponent = (h >> 10) & 31, mantissa = h & 1023;
  float magnitude = exponent == 0    ? std::ldexp(static_cast<float>(mantissa), -24)
                    : exponent == 31 ? (mantissa ? std::numeric_limits<float>::quiet_NaN()
                                                 : std::numeric_limits<float>::infinity())
                                     : std::ldexp(static_cast<float>(1024 + mantissa),
                                                  exponent - 25);
  return h & 0x8000 ? -magnitude : magnitude;
}

/// Subnormals flushed to zero, as inputs and results, for its lifetime: as
/// the model library's driver runs the kernels (FTZ and DAZ on x86).
class FlushedSubnormals {
public:
#if defined(__x86_64__)
  FlushedSubnormals() : saved_(_mm_getcsr()) { _mm_setcsr(saved_ | 0x8040); }
  ~FlushedSubnormals() { _mm_setcsr(saved_); }

private:
  unsigned saved_;
#endif
};

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

TEST_F(HalfWidening, ReplacesTheIdiomAndItsChoices) {
  llvm::LLVMContext context;
  std::unique_ptr<llvm::Module> module = parseIdiom(context);
  ASSERT_TRUE(module);
  EXPECT_EQ(tfm::widenHalvesNatively(*module), 4);
  for (llvm::StringRef f : {"widen16", "widen1", "widen_lane3"}) {
    SCOPED_TRACE(f.str());
    EXPECT_EQ(count(*module, f, llvm::Instruction::FPExt), 1);
    EXPECT_EQ(count(*module, f, llvm::Instruction::FMul), 0);
    EXPECT_EQ(count(*module, f, llvm::Instruction::Select), 0);
    EXPECT_EQ(count(*module, f, llvm::Instruction::ICmp), 0);
  }
  EXPECT_EQ(count(*module, "other_lanes_tested", llvm::Instruction::FPExt), 1);
  EXPECT_EQ(count(*module, "other_lanes_tested", llvm::Instruction::Select), 2);
  EXPECT_EQ(count(*module, "scaled_otherwise", llvm::Instruction::FMul), 1);
  EXPECT_EQ(count(*module, "scaled_otherwise", llvm::Instruction::FPExt), 0);
}

TEST_F(HalfWidening, EveryHalfWidensExactlyWithSubnormalsFlushed) {
  Compiled before(false), after(true);
  ASSERT_EQ(after.replaced, 4);
  std::vector<uint16_t> halves(65536);
  for (size_t i = 0; i < halves.size(); ++i)
    halves[i] = static_cast<uint16_t>(i);
  int wrong = 0;
  FlushedSubnormals flushed;
  for (Compiled *compiled : {&before, &after}) {
    SCOPED_TRACE(compiled == &after ? "rewritten" : "as written");
    auto vector = compiled->lookup<Widen16>("widen16");
    auto scalar = compiled->lookup<Widen1>("widen1");
    auto lane = compiled->lookup<WidenLane3>("widen_lane3");
    std::vector<float> widened(65536);
    for (size_t i = 0; i < halves.size(); i += 16)
      vector(&halves[i], &widened[i]);
    for (size_t i = 0; i < halves.size(); ++i) {
      float exact = halfValue(halves[i]);
      const uint16_t fourth[4] = {0, 0, 0, halves[i]};
      for (float got : {widened[i], scalar(halves[i]), lane(fourth)})
        if (!sameFloat(got, exact) && ++wrong <= 5)
          ADD_FAILURE() << "f16 0x" << std::hex << i << std::dec << ": " << got << ", expected "
                        << exact;
    }
  }
  EXPECT_EQ(wrong, 0);
  // The reference is the f16 value: spot checks that it is not wrong too.
  EXPECT_EQ(halfValue(0x3c00), 1.0f);
  EXPECT_EQ(halfValue(0xc000), -2.0f);
  EXPECT_EQ(halfValue(0x0001), std::ldexp(1.0f, -24)); // the smallest subnormal
  EXPECT_EQ(halfValue(0x7bff), 65504.0f);
  EXPECT_TRUE(std::isinf(halfValue(0xfc00)) && halfValue(0xfc00) < 0);
}

} // namespace
