//===- AmxTileProductsTest.cpp - AMX chains folded only where they may ---===//
//
// A q8_0 unit's product as Halide 14 leaves it in a prefill kernel's
// bitcode (Schedules/CpuFast/PrefillProducts.cpp, scheduleAmxTileDot): 8 tdpbssd of 4 bytes,
// each loading a 16 x 4 tile of weights at a 32-bit index sign-extended
// into the address and a 1 x 64 tile of activation quads at `(8 * unit |
// j) * stride`. Folded, it is one tdpbssd of 32 bytes; on a CPU with AMX
// both forms are compiled by LLVM 22's JIT and give the same sums.
//
//===----------------------------------------------------------------------===//
#include "tfm/Codegen/AmxTileProducts.h"
#include "tfm/common/Targets.h"

#include "JitModule.h"

#include "llvm/AsmParser/Parser.h"
#include "llvm/IR/InstIterator.h"
#include "llvm/IR/IntrinsicInst.h"
#include "llvm/IR/IntrinsicsX86.h"
#include "llvm/IR/LLVMContext.h"
#include "llvm/IR/Module.h"
#include "llvm/Support/SourceMgr.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <memory>
#include <optional>
#include <random>
#include <sstream>
#include <string>
#include <vector>

namespace {

/// How the chain's steps lie in a test function.
struct Chain {
  const char *name;
  int uneven = -1;      // from this step on, the activations lie one row further on
  int storeBefore = -1; // a store to the activations right before this step
};

/// @name(w, x, stride, unit, wbase, out): out (16 x 16 int32) = the unit's
/// 8 steps of w's rows (2176 bytes apart, 4 bytes each from wbase + 4j)
/// times x's quads (stride bytes apart).
std::string chainFunction(const Chain &c) {
  std::ostringstream ir;
  ir << "define void @" << c.name
     << "(ptr %w, ptr %x, i64 %stride, i64 %unit, i32 %wbase, ptr %out) {\n"
     << "  %u8 = shl nsw i64 %unit, 3\n"
     << "  %acc0 = call x86_amx @llvm.x86.tilezero.internal(i16 16, i16 64)\n";
  for (int j = 0; j < 8; ++j) {
    ir << "  %wi" << j << " = add i32 %wbase, " << 4 * j << "\n"
       << "  %wx" << j << " = sext i32 %wi" << j << " to i64\n"
       << "  %wp" << j << " = getelementptr i8, ptr %w, i64 %wx" << j << "\n"
       << "  %a" << j << " = call x86_amx @llvm.x86.tileloadd64.internal(i16 16, i16 4, ptr %wp"
       << j << ", i64 2176)\n"
       << "  %q" << j << " = or i64 %u8, " << j << "\n"
       << "  %xr" << j << " = mul nsw i64 %q" << j << ", %stride\n";
    if (c.uneven >= 0 && j >= c.uneven)
      ir << "  %xo" << j << " = add nsw i64 %xr" << j << ", %stride\n";
    else
      ir << "  %xo" << j << " = add nsw i64 %xr" << j << ", 0\n";
    ir << "  %xp" << j << " = getelementptr i8, ptr %x, i64 %xo" << j << "\n";
    if (j == c.storeBefore)
      ir << "  store i8 1, ptr %x\n";
    ir << "  %b" << j << " = call x86_amx @llvm.x86.tileloadd64.internal(i16 1, i16 64, ptr %xp"
       << j << ", i64 16)\n"
       << "  %acc" << j + 1
       << " = call x86_amx @llvm.x86.tdpbssd.internal(i16 16, i16 64, i16 4, x86_amx %acc" << j
       << ", x86_amx %a" << j << ", x86_amx %b" << j << ")\n";
  }
  ir << "  call void @llvm.x86.tilestored64.internal(i16 16, i16 64, ptr %out, i64 64, x86_amx "
        "%acc8)\n  ret void\n}\n";
  return ir.str();
}

const Chain kChains[] = {
    {"unit_dot"}, {"uneven_rows", 5}, {"store_between", -1, 4}, {"store_first", -1, 0}};

/// A product in a loop whose zero tile LLVM 14 hoisted out of it, as in
/// the 110M Llama's prefill ffn_in.
constexpr const char *kHoistedZero = R"(
define void @hoisted_zero(ptr %w, ptr %x, ptr %out, i64 %n) {
entry:
  %zero = call x86_amx @llvm.x86.tilezero.internal(i16 16, i16 64)
  br label %loop
loop:
  %i = phi i64 [ 0, %entry ], [ %next, %loop ]
  %a = call x86_amx @llvm.x86.tileloadd64.internal(i16 16, i16 32, ptr %w, i64 2176)
  %b = call x86_amx @llvm.x86.tileloadd64.internal(i16 8, i16 64, ptr %x, i64 64)
  %sum = call x86_amx @llvm.x86.tdpbssd.internal(i16 16, i16 64, i16 32, x86_amx %zero, x86_amx %a, x86_amx %b)
  call void @llvm.x86.tilestored64.internal(i16 16, i16 64, ptr %out, i64 64, x86_amx %sum)
  %next = add i64 %i, 1
  %more = icmp ult i64 %next, %n
  br i1 %more, label %loop, label %done
done:
  ret void
}
)";

/// @pairs(w, x, wbase, xbase, out): 16 pairs of a bf16 row tile as Halide
/// 14 leaves them (Ops/Linear.cpp, defineBf16PairProduct): tdpbf16ps of
/// one pair each (its depth operand 2, values rather than bytes), the
/// weights 4 bytes on from wbase + 4j and the tile's pairs 64 bytes apart
/// from xbase, indices extended with zext where LLVM proved them
/// non-negative. Folded, it is one tdpbf16ps of 64 bytes.
std::string pairsFunction() {
  std::ostringstream ir;
  ir << "define void @pairs(ptr %w, ptr %x, i32 %wbase, i32 %xbase, ptr %out) {\n"
     << "  %acc0 = call x86_amx @llvm.x86.tilezero.internal(i16 16, i16 64)\n";
  for (int j = 0; j < 16; ++j)
    ir << "  %wi" << j << " = add i32 %wbase, " << 4 * j << "\n"
       << "  %wx" << j << " = zext i32 %wi" << j << " to i64\n"
       << "  %wp" << j << " = getelementptr i8, ptr %w, i64 %wx" << j << "\n"
       << "  %a" << j << " = call x86_amx @llvm.x86.tileloadd64.internal(i16 16, i16 4, ptr %wp"
       << j << ", i64 1536)\n"
       << "  %xi" << j << " = add i32 %xbase, " << 64 * j << "\n"
       << "  %xx" << j << " = sext i32 %xi" << j << " to i64\n"
       << "  %xp" << j << " = getelementptr i8, ptr %x, i64 %xx" << j << "\n"
       << "  %b" << j << " = call x86_amx @llvm.x86.tileloadd64.internal(i16 1, i16 64, ptr %xp"
       << j << ", i64 64)\n"
       << "  %acc" << j + 1
       << " = call x86_amx @llvm.x86.tdpbf16ps.internal(i16 16, i16 64, i16 2, x86_amx %acc" << j
       << ", x86_amx %a" << j << ", x86_amx %b" << j << ")\n";
  ir << "  call void @llvm.x86.tilestored64.internal(i16 16, i16 64, ptr %out, i64 64, x86_amx "
        "%acc16)\n  ret void\n}\n";
  return ir.str();
}

std::unique_ptr<llvm::Module> parse(const std::string &functions, llvm::LLVMContext &context) {
  std::string ir = "target triple = \"x86_64-unknown-linux-gnu\"\n" + functions;
  llvm::SMDiagnostic error;
  std::unique_ptr<llvm::Module> module = llvm::parseAssemblyString(ir, error, context);
  if (!module)
    ADD_FAILURE() << "the test's IR does not parse: " << error.getMessage().str();
  return module;
}

std::unique_ptr<llvm::Module> parseChains(llvm::LLVMContext &context) {
  std::string functions = kHoistedZero;
  for (const Chain &c : kChains)
    functions += chainFunction(c);
  return parse(functions, context);
}

/// The depth operand of each tile product (tdpbssd, tdpbf16ps) of
/// `function`, in order.
std::vector<int64_t> productDepths(const llvm::Module &module, llvm::StringRef function) {
  std::vector<int64_t> depths;
  for (const llvm::Instruction &inst : llvm::instructions(*module.getFunction(function)))
    if (auto *call = llvm::dyn_cast<llvm::IntrinsicInst>(&inst))
      if (call->getIntrinsicID() == llvm::Intrinsic::x86_tdpbssd_internal ||
          call->getIntrinsicID() == llvm::Intrinsic::x86_tdpbf16ps_internal)
        depths.push_back(llvm::cast<llvm::ConstantInt>(call->getArgOperand(2))->getSExtValue());
  return depths;
}

TEST(AmxTileProducts, FoldsEachChainItCanProve) {
  llvm::LLVMContext context;
  std::unique_ptr<llvm::Module> module = parseChains(context);
  ASSERT_TRUE(module);
  // unit_dot: 8 steps into 1, each fold removing 3 instructions a step;
  // uneven_rows: steps 0..4 and 5..7 apart, 5 lying a row past the others'
  // spacing.
  EXPECT_EQ(tfm::rewriteAmxTileProducts(*module), 3 * (7 + 4 + 2));
  EXPECT_EQ(productDepths(*module, "unit_dot"), std::vector<int64_t>{32});
  EXPECT_EQ(productDepths(*module, "uneven_rows"), (std::vector<int64_t>{20, 12}));
  // A store among the steps, or between the first step's loads, could
  // change what a load moved past it reads.
  EXPECT_EQ(productDepths(*module, "store_between"), std::vector<int64_t>(8, 4));
  EXPECT_EQ(productDepths(*module, "store_first"), std::vector<int64_t>(8, 4));
}

// bf16 pairs fold as int8 quads do: 16 steps of 4 bytes into one of 64
// bytes, its depth given in bytes as LLVM takes it.
TEST(AmxTileProducts, FoldsBf16Pairs) {
  llvm::LLVMContext context;
  std::unique_ptr<llvm::Module> module = parse(pairsFunction(), context);
  ASSERT_TRUE(module);
  EXPECT_EQ(tfm::rewriteAmxTileProducts(*module), 3 * 15);
  EXPECT_EQ(productDepths(*module, "pairs"), std::vector<int64_t>{64});
}

// The hoisted zero tile would be copied through memory before each
// product overwrites it: the product gets a tilezero of its own.
TEST(AmxTileProducts, EachProductGetsItsOwnZeroTile) {
  llvm::LLVMContext context;
  std::unique_ptr<llvm::Module> module = parseChains(context);
  ASSERT_TRUE(module);
  tfm::rewriteAmxTileProducts(*module);
  int products = 0;
  for (const llvm::Instruction &inst : llvm::instructions(*module->getFunction("hoisted_zero")))
    if (auto *call = llvm::dyn_cast<llvm::IntrinsicInst>(&inst))
      if (call->getIntrinsicID() == llvm::Intrinsic::x86_tdpbssd_internal) {
        ++products;
        auto *zero = llvm::dyn_cast<llvm::IntrinsicInst>(call->getArgOperand(3));
        ASSERT_TRUE(zero && zero->getIntrinsicID() == llvm::Intrinsic::x86_tilezero_internal);
        EXPECT_EQ(zero->getParent(), call->getParent());
        EXPECT_TRUE(zero->hasOneUse());
      }
  EXPECT_EQ(products, 1);
  EXPECT_EQ(module->getFunction("hoisted_zero")->getEntryBlock().size(), 1u); // the branch
}

using UnitDot = void (*)(const int8_t *, const int8_t *, int64_t, int64_t, int32_t, int32_t *);

/// unit_dot, folded or not, compiled for this CPU.
struct Compiled {
  explicit Compiled(bool fold) {
    auto context = std::make_unique<llvm::LLVMContext>();
    std::unique_ptr<llvm::Module> module = parseChains(*context);
    if (fold)
      removed = tfm::rewriteAmxTileProducts(*module);
    jit.emplace(std::move(module), std::move(context));
  }
  UnitDot unitDot() { return jit->lookup<UnitDot>("unit_dot"); }
  int removed = 0;
  std::optional<tfm::testing::JitModule> jit;
};

TEST(AmxTileProducts, FoldedChainSumsAsBefore) {
  // Asking for the features also asks Linux for the tiles (Targets.h).
  if (!tfm::hostCpuFeatures().lookup("amx-int8"))
    GTEST_SKIP() << "this CPU has no AMX int8 tiles, or Linux refused this process their use";
  Compiled before(false), after(true);
  ASSERT_GT(after.removed, 0);
  // Weights: 16 rows of 2176 bytes; activations: 3 units of 8 quads of 64
  // bytes, 80 bytes apart (a padded stride).
  constexpr int64_t kStride = 80, kUnit = 2;
  std::mt19937 random(11);
  std::uniform_int_distribution<int> byte(-128, 127);
  std::vector<int8_t> w(16 * 2176), x(3 * 8 * kStride);
  for (int8_t &v : w)
    v = static_cast<int8_t>(byte(random));
  for (int8_t &v : x)
    v = static_cast<int8_t>(byte(random));
  std::vector<int32_t> was(256), is(256), expected(256);
  before.unitDot()(w.data(), x.data(), kStride, kUnit, 100, was.data());
  after.unitDot()(w.data(), x.data(), kStride, kUnit, 100, is.data());
  for (int m = 0; m < 16; ++m)
    for (int n = 0; n < 16; ++n)
      for (int k = 0; k < 32; ++k)
        expected[m * 16 + n] +=
            w[m * 2176 + 100 + k] * x[(kUnit * 8 + k / 4) * kStride + n * 4 + k % 4];
  EXPECT_EQ(was, expected);
  EXPECT_EQ(is, expected);
}

} // namespace
