//===- HalfWidening.cpp - f16 widening as the CPU's own instruction -------===//
//
// The idiom (tfm::kernels::halfBitsToFloat), as Halide 14 leaves it in the
// bitcode, with S = shl (sext X to i32), 13 for f16 bits X:
//
//   normal    = fmul (bitcast (and S, 0x8fffe000) to f32), 2^112
//   subnormal = bitcast (or (and S, 0x80000000),
//                           bitcast (fmul (sitofp (and S, 0x7fe000)), 2^-37))
//   special   = bitcast (or S', 0x7f800000)        S' = S or (and S, 0x8fffe000)
//   out       = select (exponent == 0x0f800000), special,
//                      (select (exponent == 0), subnormal, normal)
//
// with the exponent (and S, 0x0f800000). `normal` becomes fpext of the f16 bits
// X, which is the f16's value for every X; each select that chooses one of
// the other two values for exactly the f16s that value is right for then
// chooses between equal values, so it goes too. LLVM moves lanes around on
// the way: a scalar S may be a lane of a vector shl, and the two exponent
// tests of one S one interleaved vector compare, lanes extracted. So the
// operands are followed lane by lane through extractelement,
// insertelement and shufflevector. Anything else is left as it is.
//
//===----------------------------------------------------------------------===//
#include "tfm/Codegen/HalfWidening.h"

#include "llvm/ADT/SmallVector.h"
#include "llvm/IR/Constants.h"
#include "llvm/IR/IRBuilder.h"
#include "llvm/IR/Instructions.h"
#include "llvm/IR/Module.h"
#include "llvm/IR/PatternMatch.h"
#include "llvm/IR/ValueHandle.h"
#include "llvm/Transforms/Utils/Local.h"

#include <map>
#include <optional>

using namespace llvm;
using namespace llvm::PatternMatch;

namespace {

constexpr uint32_t kMagnitudeAndSign = 0x8fffe000; // bits 28..30 cleared
constexpr uint32_t kSign = 0x80000000;
constexpr uint32_t kSubnormalMantissa = 0x007fe000; // an f16's mantissa, shifted
constexpr uint32_t kHalfExponent = 0x0f800000;      // an f16's exponent, shifted
constexpr uint32_t kAllOnesExponent = 0x7f800000;
constexpr uint32_t kScaleSubnormal = 0x2d000000; // 2^-37 as f32 bits

/// One lane of a value (`lane` -1: a scalar), as the instruction that
/// computed it sees it.
struct Lane {
  Value *value = nullptr;
  int lane = -1;
  bool operator==(const Lane &o) const { return value == o.value && lane == o.lane; }
  explicit operator bool() const { return value; }
};

/// `v`'s lane `lane` followed back through the instructions that only move
/// lanes: extractelement, insertelement and shufflevector.
Lane source(Value *v, int lane) {
  for (;;) {
    if (auto *extract = dyn_cast<ExtractElementInst>(v)) {
      auto *index = dyn_cast<ConstantInt>(extract->getIndexOperand());
      if (!index)
        break;
      v = extract->getVectorOperand();
      lane = static_cast<int>(index->getZExtValue());
    } else if (auto *insert = dyn_cast<InsertElementInst>(v)) {
      auto *index = dyn_cast<ConstantInt>(insert->getOperand(2));
      if (!index || lane < 0)
        break;
      bool inserted = index->getZExtValue() == static_cast<uint64_t>(lane);
      v = insert->getOperand(inserted ? 1 : 0);
      lane = inserted ? -1 : lane;
    } else if (auto *shuffle = dyn_cast<ShuffleVectorInst>(v)) {
      if (lane < 0)
        break;
      int picked = shuffle->getMaskValue(static_cast<unsigned>(lane));
      if (picked < 0)
        return {};
      int width = static_cast<int>(
          cast<FixedVectorType>(shuffle->getOperand(0)->getType())->getNumElements());
      v = shuffle->getOperand(picked < width ? 0 : 1);
      lane = picked < width ? picked : picked - width;
    } else {
      break;
    }
  }
  return {v, lane};
}

/// Operand `i` of the elementwise instruction `l.value` (an instruction,
/// never null), in the same lane.
Lane operand(Lane l, unsigned i) {
  return source(cast<User>(l.value)->getOperand(i), l.lane);
}

/// The bits of a constant lane that is an i32 or an f32.
std::optional<uint32_t> constantBits(Lane l) {
  auto *c = dyn_cast_or_null<Constant>(l.value);
  if (c && l.lane >= 0)
    c = c->getAggregateElement(static_cast<unsigned>(l.lane));
  if (auto *i = dyn_cast_or_null<ConstantInt>(c); i && i->getBitWidth() == 32)
    return static_cast<uint32_t>(i->getZExtValue());
  if (auto *f = dyn_cast_or_null<ConstantFP>(c); f && f->getType()->isFloatTy())
    return static_cast<uint32_t>(f->getValueAPF().bitcastToAPInt().getZExtValue());
  return std::nullopt;
}

/// Whether `l` is the instruction `opcode` of some value and `constant`,
/// in either order (only a commutative `opcode` takes the constant first);
/// the value in `other`.
bool withConstant(Lane l, unsigned opcode, uint32_t constant, Lane &other) {
  auto *inst = dyn_cast_or_null<Instruction>(l.value);
  if (!inst || inst->getOpcode() != opcode)
    return false;
  for (unsigned i : {1u, 0u}) {
    if (i == 0 && !inst->isCommutative())
      break;
    if (constantBits(operand(l, i)) == constant) {
      other = operand(l, 1 - i);
      return true;
    }
  }
  return false;
}

/// The operand of a one-operand, lane-for-lane instruction `opcode` at
/// `l`, or none.
Lane unaryOperand(Lane l, unsigned opcode) {
  auto *inst = dyn_cast_or_null<Instruction>(l.value);
  if (!inst || inst->getOpcode() != opcode)
    return {};
  auto *from = dyn_cast<FixedVectorType>(inst->getOperand(0)->getType());
  auto *to = dyn_cast<FixedVectorType>(inst->getType());
  if ((from && to) ? from->getNumElements() != to->getNumElements() : from != nullptr)
    return {};
  return operand(l, 0);
}

/// Whether `l` is (and S, mask) for the lane S.
bool masks(Lane l, Lane shifted, uint32_t mask) {
  Lane masked;
  return withConstant(l, Instruction::And, mask, masked) && masked == shifted;
}

/// Whether `condition` is the test that the f16 exponent at `shifted` is
/// all ones (`allOnes`) or zero.
bool testsExponent(Lane condition, Lane shifted, bool allOnes) {
  auto *compare = dyn_cast_or_null<ICmpInst>(condition.value);
  Lane exponent;
  return compare && compare->getPredicate() == ICmpInst::ICMP_EQ &&
         withConstant(condition, Instruction::ICmp, allOnes ? kHalfExponent : 0, exponent) &&
         masks(exponent, shifted, kHalfExponent);
}

/// Whether `l` is the idiom's value for an infinity or NaN at `shifted`.
bool isSpecial(Lane l, Lane shifted) {
  Lane ored;
  return withConstant(unaryOperand(l, Instruction::BitCast), Instruction::Or, kAllOnesExponent,
                      ored) &&
         (ored == shifted || masks(ored, shifted, kMagnitudeAndSign));
}

/// Whether `l` is the idiom's value for an f16 subnormal (or zero) at
/// `shifted`: its mantissa times 2^-24, the sign put back.
bool isSubnormal(Lane l, Lane shifted) {
  Lane ored = unaryOperand(l, Instruction::BitCast);
  auto *inst = dyn_cast_or_null<Instruction>(ored.value);
  if (!inst || inst->getOpcode() != Instruction::Or)
    return false;
  for (unsigned i : {0u, 1u}) {
    Lane scaled, mantissa;
    if (masks(operand(ored, i), shifted, kSign) &&
        withConstant(unaryOperand(operand(ored, 1 - i), Instruction::BitCast),
                     Instruction::FMul, kScaleSubnormal, scaled) &&
        (mantissa = unaryOperand(scaled, Instruction::SIToFP)) &&
        masks(mantissa, shifted, kSubnormalMantissa))
      return true;
  }
  return false;
}

/// Replaces the idiom's `normal` at `inst` with fpext of its f16 bits and
/// records the S it was computed from; false where `inst` is not it.
bool replaceNormalValue(Instruction &inst, std::map<Value *, Value *> &shiftedOf) {
  Value *magnitude = nullptr, *shifted = nullptr;
  if (!match(&inst, m_c_FMul(m_BitCast(m_Value(magnitude)), m_SpecificFP(0x1p112))) ||
      !match(magnitude, m_c_And(m_Value(shifted), m_SpecificInt(kMagnitudeAndSign))))
    return false;
  // A vector's S is its own shl; a scalar's may be one lane of a vector's.
  Lane at = inst.getType()->isVectorTy() ? Lane{shifted, -1} : source(shifted, -1);
  Value *bits = nullptr;
  if (!match(at.value, m_Shl(m_SExt(m_Value(bits)), m_SpecificInt(13))) ||
      !bits->getType()->getScalarType()->isIntegerTy(16))
    return false;
  IRBuilder<> builder(&inst);
  if (at.lane >= 0)
    bits = builder.CreateExtractElement(bits, builder.getInt64(at.lane));
  Type *halfType = bits->getType()->getWithNewType(builder.getHalfTy());
  Value *widened = builder.CreateFPExt(builder.CreateBitCast(bits, halfType), inst.getType());
  inst.replaceAllUsesWith(widened);
  shiftedOf[widened] = shifted;
  return true;
}

/// The select's lanes, each choosing the idiom's special or subnormal value
/// for exactly the f16s it is right for, else a widened value: then the
/// select always gives the widened value. `shiftedOf` maps each fpext to the
/// S it replaced.
bool choosesEqualValues(SelectInst &select, const std::map<Value *, Value *> &shiftedOf) {
  auto *vector = dyn_cast<FixedVectorType>(select.getType());
  int lanes = vector ? static_cast<int>(vector->getNumElements()) : 1;
  for (int lane = 0; lane < lanes; ++lane) {
    int l = vector ? lane : -1;
    Lane widened = source(select.getFalseValue(), l);
    auto it = shiftedOf.find(widened.value);
    if (it == shiftedOf.end())
      return false;
    Lane shifted = source(it->second, widened.lane);
    Lane chosen = source(select.getTrueValue(), l);
    Lane condition =
        source(select.getCondition(), select.getCondition()->getType()->isVectorTy() ? l : -1);
    if (!(testsExponent(condition, shifted, true) && isSpecial(chosen, shifted)) &&
        !(testsExponent(condition, shifted, false) && isSubnormal(chosen, shifted)))
      return false;
  }
  return true;
}

} // namespace

int tfm::widenHalvesNatively(Module &module) {
  int replaced = 0;
  for (Function &function : module) {
    SmallVector<WeakTrackingVH> dead;
    std::map<Value *, Value *> shiftedOf; // each fpext -> the S it replaced
    for (BasicBlock &block : function)
      for (Instruction &inst : block)
        if (replaceNormalValue(inst, shiftedOf)) {
          dead.push_back(&inst);
          ++replaced;
        }
    // A select's operands precede it: once one is replaced, the next one's
    // false value is a widened value.
    for (BasicBlock &block : function)
      for (Instruction &inst : block)
        if (auto *select = dyn_cast<SelectInst>(&inst))
          if (!select->use_empty() && choosesEqualValues(*select, shiftedOf)) {
            select->replaceAllUsesWith(select->getFalseValue());
            dead.push_back(select);
          }
    RecursivelyDeleteTriviallyDeadInstructions(dead);
  }
  return replaced;
}
