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

// llvm.x86.tdpbssd.internal(m, n, k, acc, a, b) (tdpbf16ps's alike) and
// llvm.x86.tileloadd64.internal(rows, bytes per row, address, stride).
enum DotOperand { kRows, kRowBytes, kDepth, kAccumulator, kWeights, kActivations };
enum LoadOperand { kLoadRows, kLoadRowBytes, kAddress, kStride };
/// A step is 4 bytes of depth: 4 int8 values, or one pair of bf16.
constexpr int kStepBytes = 4, kMaxDepth = 64;

CallInst *intrinsicCall(Value *v, Intrinsic::ID id) {
  auto *call = dyn_cast<IntrinsicInst>(v);
  return call && call->getIntrinsicID() == id ? call : nullptr;
}

/// The tile products folded, with the depth operand Halide 14 gives one
/// step: 4 bytes for int8, but 2 (values, not bytes) for bf16. LLVM, as
/// Clang's tile intrinsics, takes the depth in bytes, which the folded
/// products carry.
struct TileProductKind {
  Intrinsic::ID id;
  int stepDepth;
};
constexpr TileProductKind kTileProducts[] = {{Intrinsic::x86_tdpbssd_internal, 4},
                                             {Intrinsic::x86_tdpbf16ps_internal, 2}};

/// The kind of tile product `v` is, where it is one folded here.
const TileProductKind *tileProductKind(Value *v) {
  if (auto *call = dyn_cast<IntrinsicInst>(v))
    for (const TileProductKind &kind : kTileProducts)
      if (call->getIntrinsicID() == kind.id)
        return &kind;
  return nullptr;
}

/// `v` as a tile product of a kind folded here, or null.
IntrinsicInst *tileProduct(Value *v) {
  return tileProductKind(v) ? cast<IntrinsicInst>(v) : nullptr;
}

std::optional<int64_t> constantOperand(CallInst *call, unsigned i) {
  if (auto *c = dyn_cast<ConstantInt>(call->getArgOperand(i)))
    return c->getSExtValue();
  return std::nullopt;
}

/// One tile product of 4 bytes' depth and the two tile loads only it reads.
struct Step {
  IntrinsicInst *dot;
  CallInst *weights, *activations;
};

std::optional<Step> stepOf(IntrinsicInst *dot) {
  if (constantOperand(dot, kDepth) != tileProductKind(dot)->stepDepth)
    return std::nullopt;
  CallInst *w = intrinsicCall(dot->getArgOperand(kWeights), Intrinsic::x86_tileloadd64_internal);
  CallInst *x =
      intrinsicCall(dot->getArgOperand(kActivations), Intrinsic::x86_tileloadd64_internal);
  if (!w || !x || !w->hasOneUse() || !x->hasOneUse() || w->getParent() != dot->getParent() ||
      x->getParent() != dot->getParent())
    return std::nullopt;
  // Weights: m rows of 4 bytes; activations: 1 row of n bytes.
  if (w->getArgOperand(kLoadRows) != dot->getArgOperand(kRows) ||
      constantOperand(w, kLoadRowBytes) != kStepBytes || constantOperand(x, kLoadRows) != 1 ||
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
    const SCEV *rowDistance = nullptr;
    size_t end = first + 1;
    for (; end < chain.size() && (end - first + 1) * kStepBytes <= kMaxDepth; ++end) {
      const Step &s = chain[end];
      int64_t step = static_cast<int64_t>(end - first);
      if (s.dot->getIntrinsicID() != s0.dot->getIntrinsicID() ||
          s.dot->getArgOperand(kRows) != s0.dot->getArgOperand(kRows) ||
          s.dot->getArgOperand(kRowBytes) != s0.dot->getArgOperand(kRowBytes) ||
          s.weights->getArgOperand(kStride) != s0.weights->getArgOperand(kStride))
        break;
      // The weights' 4 bytes follow the last step's along each row.
      auto *weightsDistance = dyn_cast<SCEVConstant>(
          distance(s0.weights->getArgOperand(kAddress), s.weights->getArgOperand(kAddress)));
      if (!weightsDistance || weightsDistance->getValue()->getSExtValue() != step * kStepBytes)
        break;
      // The activations' row lies one distance further than the last's.
      const SCEV *d =
          distance(s0.activations->getArgOperand(kAddress), s.activations->getArgOperand(kAddress));
      if (isa<SCEVCouldNotCompute>(d))
        break;
      if (!rowDistance) {
        if (d->isZero())
          break;
        rowDistance = d;
      } else if (d != se.getMulExpr(se.getConstant(d->getType(), step), rowDistance)) {
        break;
      }
    }
    return end - first;
  }

private:
  /// `to` - `from` in bytes. Halide indexes a buffer in 32 bits, extended
  /// into each address (sext, or zext where LLVM proved it non-negative)
  /// without a no-wrap flag, so ScalarEvolution cannot see
  /// sext(i + d) - sext(i) as d: it is, as Halide's buffers hold under
  /// 2^31 bytes and their indices never wrap. Two such addresses into one
  /// buffer differ by their indices' difference.
  const SCEV *distance(Value *from, Value *to) {
    auto *f = dyn_cast<GetElementPtrInst>(from), *t = dyn_cast<GetElementPtrInst>(to);
    if (f && t && f->getPointerOperand() == t->getPointerOperand() &&
        f->getNumIndices() == 1 && t->getNumIndices() == 1 &&
        f->getSourceElementType()->isIntegerTy(8) && t->getSourceElementType()->isIntegerTy(8))
      if (Value *fi = narrowIndex(f->idx_begin()->get()))
        if (Value *ti = narrowIndex(t->idx_begin()->get()))
          if (fi->getType() == ti->getType())
            return se.getMinusSCEV(se.getSCEV(ti), se.getSCEV(fi));
    return se.getMinusSCEV(se.getSCEV(to), se.getSCEV(from));
  }

  /// The 32-bit index a GEP's index extends, or null.
  static Value *narrowIndex(Value *index) {
    if (isa<SExtInst, ZExtInst>(index))
      return cast<CastInst>(index)->getOperand(0);
    return nullptr;
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
    IntrinsicInst *dot = tileProduct(&inst);
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
    if (i->mayWriteToMemory() && !tileProduct(i) &&
        !intrinsicCall(i, Intrinsic::x86_tileloadd64_internal) &&
        !intrinsicCall(i, Intrinsic::x86_tilezero_internal))
      return true;
  return false;
}

/// Replaces the run by one tile product of its whole depth, at its last
/// step.
void foldRun(const Fold &run) {
  const Step &first = run.steps.front(), &second = run.steps[1], &last = run.steps.back();
  Module *module = last.dot->getModule();
  IRBuilder<> b(last.dot);
  Type *i16 = b.getInt16Ty(), *i64 = b.getInt64Ty();
  int depth = static_cast<int>(run.steps.size()) * kStepBytes;
  Function *load = Intrinsic::getOrInsertDeclaration(module, Intrinsic::x86_tileloadd64_internal);
  Function *dot = Intrinsic::getOrInsertDeclaration(module, first.dot->getIntrinsicID());
  Value *firstRow = first.activations->getArgOperand(kAddress);
  Value *rowStride = b.CreateSub(b.CreatePtrToInt(second.activations->getArgOperand(kAddress), i64),
                                 b.CreatePtrToInt(firstRow, i64));
  Value *weights = b.CreateCall(
      load, {first.dot->getArgOperand(kRows), ConstantInt::get(i16, depth),
             first.weights->getArgOperand(kAddress), first.weights->getArgOperand(kStride)});
  Value *activations = b.CreateCall(
      load, {ConstantInt::get(i16, depth / kStepBytes), first.dot->getArgOperand(kRowBytes),
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
      IntrinsicInst *dot = tileProduct(&inst);
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
  if (llvm::none_of(kTileProducts, [&](const TileProductKind &kind) {
        return Intrinsic::getDeclarationIfExists(&module, kind.id);
      }))
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
