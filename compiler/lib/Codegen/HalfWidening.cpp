//===- HalfWidening.cpp - f16 widening as the CPU's own instruction -------===//
//
// The idiom, as Halide 14 leaves it in the bitcode (S the f16 bits sign-
// extended to i32 and shifted left by 13, vectors or scalars):
//
//   value = fmul (bitcast (and S, 0x8fffe000) to f32), 2^112
//   out   = select (icmp eq (and S, 0x0f800000), 0x0f800000),
//                  (bitcast (or S', 0x7f800000) to f32), value
//
// where S' is S or (and S, 0x8fffe000), and LLVM may have split the select
// into halves, each operand behind the same shufflevector. `value` becomes
// fpext of the f16 bits; a select of that shape then chooses between two
// equal values for every f16 (fpext keeps infinities and NaN), so it goes
// too. Anything else is left as it is.
//
//===----------------------------------------------------------------------===//
#include "tfm/Codegen/HalfWidening.h"

#include "llvm/ADT/SmallVector.h"
#include "llvm/IR/IRBuilder.h"
#include "llvm/IR/Instructions.h"
#include "llvm/IR/Module.h"
#include "llvm/IR/PatternMatch.h"
#include "llvm/IR/ValueHandle.h"
#include "llvm/Transforms/Utils/Local.h"

#include <map>
#include <utility>

using namespace llvm;
using namespace llvm::PatternMatch;

namespace {

constexpr uint32_t kMagnitudeAndSign = 0x8fffe000; // bits 28..30 cleared
constexpr uint32_t kHalfExponent = 0x0f800000;     // an f16's exponent, shifted
constexpr uint32_t kUnshiftedExponent = 0x7c00;    // an f16's exponent in place
constexpr uint32_t kAllOnesExponent = 0x7f800000;

/// An i32 constant or splat, compared as its unsigned value.
auto i32Constant(uint32_t v) { return m_SpecificInt(uint64_t(v)); }

/// A value and the shuffle mask it is read through (empty: read directly).
struct Shuffled {
  Value *base;
  ArrayRef<int> mask;
};

/// `v` without a shufflevector that picks lanes of its first operand alone.
Shuffled peelShuffle(Value *v) {
  if (auto *shuffle = dyn_cast<ShuffleVectorInst>(v))
    if (isa<UndefValue>(shuffle->getOperand(1)))
      return {shuffle->getOperand(0), shuffle->getShuffleMask()};
  return {v, {}};
}

/// The shifted bits S of `value = fmul (bitcast (and S, 0x8fffe000)), 2^112`
/// with S = shl (sext X to i32), 13 for f16 bits X; null otherwise.
Value *idiomShiftedBits(Instruction &inst, Value *&halfBits) {
  Value *shifted = nullptr;
  const APFloat *scale = nullptr;
  if (!match(&inst, m_c_FMul(m_BitCast(m_c_And(m_Value(shifted), i32Constant(kMagnitudeAndSign))),
                             m_APFloat(scale))) ||
      !scale->isExactlyValue(0x1p112))
    return nullptr;
  if (!match(shifted, m_Shl(m_SExt(m_Value(halfBits)), m_SpecificInt(13))) ||
      !halfBits->getType()->getScalarType()->isIntegerTy(16))
    return nullptr;
  return shifted;
}

/// Whether `select` is the idiom's infinity-and-NaN choice over `shifted`
/// (S = shl E, 13), its false operand being `widened` through `mask`. The
/// exponent is tested as (and S, 0x0f800000) == 0x0f800000, or, as LLVM
/// leaves a scalar's, before the shift: (and E, 0x7c00) == 0x7c00.
bool isInfinityChoice(SelectInst &select, Value *shifted, ArrayRef<int> mask) {
  Shuffled special = peelShuffle(select.getTrueValue());
  Value *ored = nullptr;
  if (special.mask != mask ||
      !match(special.base, m_BitCast(m_c_Or(m_Value(ored), i32Constant(kAllOnesExponent)))))
    return false;
  if (ored != shifted && !match(ored, m_c_And(m_Specific(shifted), i32Constant(kMagnitudeAndSign))))
    return false;
  Value *exponent = nullptr;
  CmpPredicate predicate;
  Value *extended = cast<User>(shifted)->getOperand(0); // E
  for (auto [bits, exponentMask] : {std::pair<Value *, uint32_t>{shifted, kHalfExponent},
                                    {extended, kUnshiftedExponent}})
    if (match(select.getCondition(),
              m_ICmp(predicate, m_Value(exponent), i32Constant(exponentMask))) &&
        predicate == ICmpInst::ICMP_EQ) {
      Shuffled exponentBits = peelShuffle(exponent);
      return exponentBits.mask == mask &&
             match(exponentBits.base, m_c_And(m_Specific(bits), i32Constant(exponentMask)));
    }
  return false;
}

} // namespace

int tfm::widenHalvesNatively(Module &module) {
  int replaced = 0;
  for (Function &function : module) {
    SmallVector<WeakTrackingVH> dead;
    std::map<Value *, Value *> shiftedOf; // each fpext -> the S it replaced
    for (BasicBlock &block : function)
      for (Instruction &inst : block) {
        Value *halfBits = nullptr;
        Value *shifted = idiomShiftedBits(inst, halfBits);
        if (!shifted)
          continue;
        IRBuilder<> builder(&inst);
        Type *halfType = halfBits->getType()->getWithNewType(builder.getHalfTy());
        Value *widened =
            builder.CreateFPExt(builder.CreateBitCast(halfBits, halfType), inst.getType());
        inst.replaceAllUsesWith(widened);
        dead.push_back(&inst);
        shiftedOf[widened] = shifted;
        ++replaced;
      }
    for (BasicBlock &block : function)
      for (Instruction &inst : block) {
        auto *select = dyn_cast<SelectInst>(&inst);
        if (!select)
          continue;
        Shuffled value = peelShuffle(select->getFalseValue());
        auto it = shiftedOf.find(value.base);
        if (it != shiftedOf.end() && isInfinityChoice(*select, it->second, value.mask)) {
          select->replaceAllUsesWith(select->getFalseValue());
          dead.push_back(select);
        }
      }
    RecursivelyDeleteTriviallyDeadInstructions(dead);
  }
  return replaced;
}
