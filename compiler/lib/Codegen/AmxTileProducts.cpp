//===- AmxTileProducts.cpp - AMX tile products as x86 runs them fast -----===//
#include "tfm/Codegen/AmxTileProducts.h"

#include "llvm/Analysis/AssumptionCache.h"
#include "llvm/Analysis/LoopInfo.h"
#include "llvm/Analysis/ScalarEvolution.h"
#include "llvm/Analysis/ScalarEvolutionExpressions.h"
#include "llvm/Analysis/TargetLibraryInfo.h"
#include "llvm/Analysis/ValueTracking.h"
#include "llvm/IR/Dominators.h"
#include "llvm/IR/IRBuilder.h"
#include "llvm/IR/IntrinsicInst.h"
#include "llvm/IR/IntrinsicsX86.h"
#include "llvm/IR/Module.h"
#include "llvm/Transforms/Utils/Local.h"

#include <vector>

using namespace llvm;

namespace {

// llvm.x86.tdpbssd.internal(m, n, k, acc, a, b) and
// llvm.x86.tileloadd64.internal(rows, bytes per row, address, stride).
enum DotOperand { kRows, kRowBytes, kDepth, kAccumulator, kWeights, kActivations };
enum LoadOperand { kLoadRows, kLoadRowBytes, kAddress, kStride };
constexpr int kStepDepth = 4, kMaxDepth = 64;

CallInst *intrinsicCall(Value *v, Intrinsic::ID id) {
  auto *call = dyn_cast<IntrinsicInst>(v);
  return call && call->getIntrinsicID() == id ? call : nullptr;
}

std::optional<int64_t> constantOperand(CallInst *call, unsigned i) {
  if (auto *c = dyn_cast<ConstantInt>(call->getArgOperand(i)))
    return c->getSExtValue();
  return std::nullopt;
}

/// One tdpbssd of 4 bytes' depth and the two tile loads only it reads.
struct Step {
  CallInst *dot, *weights, *activations;
};

std::optional<Step> stepOf(CallInst *dot) {
  if (constantOperand(dot, kDepth) != kStepDepth)
    return std::nullopt;
  CallInst *w = intrinsicCall(dot->getArgOperand(kWeights), Intrinsic::x86_tileloadd64_internal);
  CallInst *x =
      intrinsicCall(dot->getArgOperand(kActivations), Intrinsic::x86_tileloadd64_internal);
  if (!w || !x || !w->hasOneUse() || !x->hasOneUse() || w->getParent() != dot->getParent() ||
      x->getParent() != dot->getParent())
    return std::nullopt;
  // Weights: m rows of 4 bytes; activations: 1 row of n bytes.
  if (w->getArgOperand(kLoadRows) != dot->getArgOperand(kRows) ||
      constantOperand(w, kLoadRowBytes) != kStepDepth || constantOperand(x, kLoadRows) != 1 ||
      x->getArgOperand(kLoadRowBytes) != dot->getArgOperand(kRowBytes))
    return std::nullopt;
  return Step{dot, w, x};
}

/// Marks each `or` of operands without common bits as disjoint, as LLVM 22's
/// own optimiser would: Halide 14 (LLVM 14, before the flag) writes
/// `(8 * u) | j` for the quad j of unit u, and ScalarEvolution reads a
/// disjoint `or` as the sum it is, and any other as an unknown.
void markDisjointOrs(Function &f) {
  SimplifyQuery query(f.getParent()->getDataLayout());
  for (BasicBlock &block : f)
    for (Instruction &inst : block)
      if (auto *orInst = dyn_cast<PossiblyDisjointInst>(&inst))
        if (!orInst->isDisjoint() &&
            haveNoCommonBitsSet(orInst->getOperand(0), orInst->getOperand(1),
                                query.getWithInstruction(&inst)))
          orInst->setIsDisjoint(true);
}

/// A run of steps folded into one product.
struct Fold {
  std::vector<Step> steps;
};

class ChainFolder {
public:
  explicit ChainFolder(Function &f)
      : tlii(f.getParent()->getTargetTriple()), tli(tlii), ac(f), dt(f), li(dt),
        se(f, tli, ac, dt, li) {}

  /// The longest run of `chain` from `first` that folds (at least one step).
  size_t runFrom(const std::vector<Step> &chain, size_t first) {
    const Step &s0 = chain[first];
    const SCEV *activations0 = address(s0.activations);
    const SCEV *rowDistance = nullptr;
    size_t end = first + 1;
    for (; end < chain.size() && (end - first + 1) * kStepDepth <= kMaxDepth; ++end) {
      const Step &s = chain[end];
      int64_t step = static_cast<int64_t>(end - first);
      if (s.dot->getArgOperand(kRows) != s0.dot->getArgOperand(kRows) ||
          s.dot->getArgOperand(kRowBytes) != s0.dot->getArgOperand(kRowBytes) ||
          s.weights->getArgOperand(kStride) != s0.weights->getArgOperand(kStride))
        break;
      // The weights' 4 bytes follow the last step's along each row.
      if (constantDistance(s0.weights->getArgOperand(kAddress),
                           s.weights->getArgOperand(kAddress)) != step * kStepDepth)
        break;
      // The activations' row lies one distance further than the last's.
      const SCEV *distance = se.getMinusSCEV(address(s.activations), activations0);
      if (isa<SCEVCouldNotCompute>(distance))
        break;
      if (!rowDistance) {
        if (distance->isZero())
          break;
        rowDistance = distance;
      } else if (distance != se.getMulExpr(se.getConstant(distance->getType(), step),
                                           rowDistance)) {
        break;
      }
    }
    return end - first;
  }

private:
  const SCEV *address(CallInst *load) { return se.getSCEV(load->getArgOperand(kAddress)); }

  std::optional<int64_t> constantDifference(const SCEV *to, const SCEV *from) {
    if (auto *c = dyn_cast<SCEVConstant>(se.getMinusSCEV(to, from)))
      return c->getValue()->getSExtValue();
    return std::nullopt;
  }

  /// `to` - `from` in bytes, where it is a constant. Halide indexes a buffer
  /// in 32 bits, sign-extended into each address without a no-wrap flag,
  /// so ScalarEvolution cannot see sext(i + 4) - sext(i) as 4: it is, as
  /// Halide's buffers hold under 2^31 bytes and their indices never wrap.
  std::optional<int64_t> constantDistance(Value *from, Value *to) {
    if (std::optional<int64_t> d = constantDifference(se.getSCEV(to), se.getSCEV(from)))
      return d;
    auto *f = dyn_cast<GetElementPtrInst>(from), *t = dyn_cast<GetElementPtrInst>(to);
    if (!f || !t || f->getPointerOperand() != t->getPointerOperand() ||
        f->getNumIndices() != 1 || t->getNumIndices() != 1 ||
        !f->getSourceElementType()->isIntegerTy(8) || !t->getSourceElementType()->isIntegerTy(8))
      return std::nullopt;
    auto *fi = dyn_cast<SExtInst>(f->idx_begin()->get());
    auto *ti = dyn_cast<SExtInst>(t->idx_begin()->get());
    if (!fi || !ti)
      return std::nullopt;
    return constantDifference(se.getSCEV(ti->getOperand(0)), se.getSCEV(fi->getOperand(0)));
  }

  TargetLibraryInfoImpl tlii;
  TargetLibraryInfo tli;
  AssumptionCache ac;
  DominatorTree dt;
  LoopInfo li;
  ScalarEvolution se;
};

/// The chains of 4-byte steps in `block`, each in order: a step whose
/// accumulator is the previous step, its only reader.
std::vector<std::vector<Step>> chainsIn(BasicBlock &block) {
  std::vector<std::vector<Step>> chains;
  for (Instruction &inst : block) {
    auto *dot = intrinsicCall(&inst, Intrinsic::x86_tdpbssd_internal);
    if (!dot)
      continue;
    std::optional<Step> step = stepOf(dot);
    if (!step)
      continue;
    auto *previous = dyn_cast<CallInst>(dot->getArgOperand(kAccumulator));
    bool continues = !chains.empty() && chains.back().back().dot == previous &&
                     previous->hasOneUse();
    if (!continues)
      chains.emplace_back();
    chains.back().push_back(*step);
  }
  return chains;
}

/// Whether anything between the run's first tile load and its last
/// product, other than tile loads, products and zero tiles (which LLVM
/// counts as having effects), writes memory (the folded loads move to the
/// last product).
bool writesMemoryWithin(const Fold &run) {
  const Step &first = run.steps.front();
  Instruction *start =
      first.weights->comesBefore(first.activations) ? first.weights : first.activations;
  for (Instruction *i = start; i != run.steps.back().dot; i = i->getNextNode())
    if (i->mayWriteToMemory() && !intrinsicCall(i, Intrinsic::x86_tdpbssd_internal) &&
        !intrinsicCall(i, Intrinsic::x86_tileloadd64_internal) &&
        !intrinsicCall(i, Intrinsic::x86_tilezero_internal))
      return true;
  return false;
}

/// Replaces the run by one tdpbssd of its whole depth, at its last step.
void foldRun(const Fold &run) {
  const Step &first = run.steps.front(), &second = run.steps[1], &last = run.steps.back();
  Module *module = last.dot->getModule();
  IRBuilder<> b(last.dot);
  Type *i16 = b.getInt16Ty(), *i64 = b.getInt64Ty();
  int depth = static_cast<int>(run.steps.size()) * kStepDepth;
  Function *load = Intrinsic::getOrInsertDeclaration(module, Intrinsic::x86_tileloadd64_internal);
  Function *dot = Intrinsic::getOrInsertDeclaration(module, Intrinsic::x86_tdpbssd_internal);
  Value *firstRow = first.activations->getArgOperand(kAddress);
  Value *rowStride = b.CreateSub(b.CreatePtrToInt(second.activations->getArgOperand(kAddress), i64),
                                 b.CreatePtrToInt(firstRow, i64));
  Value *weights = b.CreateCall(
      load, {first.dot->getArgOperand(kRows), ConstantInt::get(i16, depth),
             first.weights->getArgOperand(kAddress), first.weights->getArgOperand(kStride)});
  Value *activations = b.CreateCall(
      load, {ConstantInt::get(i16, depth / kStepDepth), first.dot->getArgOperand(kRowBytes),
             firstRow, rowStride});
  Value *product = b.CreateCall(
      dot, {first.dot->getArgOperand(kRows), first.dot->getArgOperand(kRowBytes),
            ConstantInt::get(i16, depth), first.dot->getArgOperand(kAccumulator), weights,
            activations});
  last.dot->replaceAllUsesWith(product);
  std::vector<WeakTrackingVH> addresses;
  for (auto step = run.steps.rbegin(); step != run.steps.rend(); ++step) {
    step->dot->eraseFromParent();
    for (CallInst *tile : {step->weights, step->activations}) {
      addresses.emplace_back(tile->getArgOperand(kAddress));
      tile->eraseFromParent();
    }
  }
  SmallVector<WeakTrackingVH> dead(addresses.begin(), addresses.end());
  RecursivelyDeleteTriviallyDeadInstructionsPermissive(dead);
}

/// Gives each product whose accumulator starts as a zero tile made
/// elsewhere (LLVM 14 hoists Halide's tilezero out of the loop it is reset
/// in) a tilezero of its own, right before it. A tile shared that way is
/// copied for each product that overwrites it, and x86 copies a tile
/// through memory: a 1 KiB store and load per product, which ffn_in of the
/// 110M Llama spent a fifth of its time waiting on (q8_0 prefill 2000 ->
/// 2300 tok/s).
void rematerializeZeroTiles(Function &f) {
  for (BasicBlock &block : f)
    for (Instruction &inst : block) {
      CallInst *dot = intrinsicCall(&inst, Intrinsic::x86_tdpbssd_internal);
      if (!dot)
        continue;
      CallInst *zero =
          intrinsicCall(dot->getArgOperand(kAccumulator), Intrinsic::x86_tilezero_internal);
      if (!zero || (zero->getParent() == &block && zero->hasOneUse()) ||
          !isa<Constant>(zero->getArgOperand(0)) || !isa<Constant>(zero->getArgOperand(1)))
        continue;
      Instruction *own = zero->clone();
      own->insertBefore(dot->getIterator());
      dot->setArgOperand(kAccumulator, own);
      if (zero->use_empty())
        zero->eraseFromParent();
    }
}

} // namespace

int tfm::rewriteAmxTileProducts(Module &module) {
  Function *declared = Intrinsic::getDeclarationIfExists(&module, Intrinsic::x86_tdpbssd_internal);
  if (!declared)
    return 0;
  int removed = 0;
  for (Function &f : module) {
    if (f.isDeclaration())
      continue;
    std::vector<Fold> folds;
    rematerializeZeroTiles(f);
    markDisjointOrs(f);
    {
      ChainFolder folder(f);
      for (BasicBlock &block : f)
        for (const std::vector<Step> &chain : chainsIn(block))
          for (size_t at = 0; at < chain.size();) {
            size_t length = folder.runFrom(chain, at);
            Fold run{{chain.begin() + at, chain.begin() + at + length}};
            if (length > 1 && !writesMemoryWithin(run))
              folds.push_back(run);
            at += length;
          }
    }
    for (const Fold &run : folds) {
      foldRun(run);
      removed += 3 * static_cast<int>(run.steps.size() - 1);
    }
  }
  return removed;
}
