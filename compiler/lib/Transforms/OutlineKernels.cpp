//===- OutlineKernels.cpp - fusion regions -> kernel functions + launches -===//
#include "tfm/Dialect/TfmOps.h"
#include "tfm/Transforms/Passes.h"
#include "tfm/common/TensorNames.h"

#include "mlir/IR/IRMapping.h"
#include "mlir/IR/SymbolTable.h"

#include "llvm/ADT/SetVector.h"
#include "llvm/ADT/StringMap.h"

namespace tfm {
#define GEN_PASS_DEF_TFMOUTLINEKERNELS
#include "tfm/Transforms/Passes.h.inc"
} // namespace tfm

using namespace mlir;

namespace tfm {
namespace {

/// An op outlining turns into a kernel of its own when no region holds it.
bool isKernelWork(Operation *op) {
  return op->hasTrait<OpTrait::Epilogue>() || op->hasTrait<OpTrait::RowNormalization>() ||
         op->hasTrait<OpTrait::FusionRoot>() || isa<AttentionOp, LastRowOp>(op);
}

/// Whether a value's rows are the call's token positions: the tokens and
/// everything computed row by row from them, until last_row picks one row.
class TokenRowsAnalysis {
public:
  bool hasTokenRows(Value value) {
    auto it = cache.find(value);
    if (it != cache.end())
      return it->second;
    bool result = compute(value);
    cache[value] = result;
    return result;
  }

  /// `replacement` takes over `value`'s uses (a launch replacing a region).
  void inherit(Value value, Value replacement) {
    cache[replacement] = hasTokenRows(value);
  }

private:
  bool compute(Value value) {
    Operation *def = value.getDefiningOp();
    if (!def) // the tokens argument of an entry function
      return true;
    if (isa<WeightOp, KvCacheOp, LastRowOp>(def))
      return false;
    if (isa<EmbeddingOp>(def))
      return true;
    if (auto fusion = dyn_cast<FusionOp>(def))
      return hasTokenRows(fusion.getYield().getValues()[
          cast<OpResult>(value).getResultNumber()]);
    return def->getNumOperands() > 0 && hasTokenRows(def->getOperand(0));
  }

  llvm::DenseMap<Value, bool> cache;
};

/// A readable kernel role from what the kernel computes: the role of the
/// first projection's weight (tfm/common/TensorNames.h), else what a lone
/// store writes ("key_store"), else the first op's name.
std::string kernelRole(ArrayRef<Operation *> ops) {
  for (Operation *op : ops)
    if (auto linear = dyn_cast<LinearOp>(op))
      if (auto weight = linear.getWeight().getDefiningOp<WeightOp>())
        if (std::optional<TensorId> id = parseTensorName(weight.getName()))
          if (StringRef role = kernelRoleOf(id->role); !role.empty())
            return role.str();
  if (auto store = dyn_cast<KvStoreOp>(ops.front()))
    if (auto cache = store.getCache().getDefiningOp<KvCacheOp>()) {
      StringRef name = cache.getCache();
      return name.substr(name.rfind('.') + 1).str() + "_store"; // "blk.0.key" -> "key_store"
    }
  return ops.front()->getName().stripDialect().str();
}

struct OutlineKernelsPass
    : public impl::TfmOutlineKernelsBase<OutlineKernelsPass> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    SmallVector<func::FuncOp> entries;
    for (auto fn : module.getOps<func::FuncOp>())
      if (fn->hasAttr(attrs::kEntry))
        entries.push_back(fn);
    SymbolTable table(module);
    symbols = &table;
    for (func::FuncOp entry : entries)
      if (failed(outlineEntry(entry)))
        return signalPassFailure();
  }

  SymbolTable *symbols = nullptr;

  /// Whether `value` is a reference to a source (cross-attention) cache.
  bool isSourceCache(Value value) const {
    auto ref = value.getDefiningOp<KvCacheOp>();
    auto decl = ref ? symbols->lookup<CacheDeclOp>(ref.getCache()) : CacheDeclOp();
    return decl && decl.getSource();
  }
  /// The last `_N` given to each role, so names are found in one lookup.
  llvm::StringMap<int> repeats;

  LogicalResult outlineEntry(func::FuncOp entry) {
    if (!entry.getBody().hasOneBlock())
      return entry.emitError("entry function must have a single block");
    TokenRowsAnalysis tokenRows;
    SmallVector<Operation *> units;
    for (Operation &op : entry.getBody().front())
      if (isa<FusionOp>(op) || isKernelWork(&op))
        units.push_back(&op);
    for (Operation *unit : units)
      outlineUnit(entry, unit, tokenRows);
    return success();
  }

  void outlineUnit(func::FuncOp entry, Operation *unit, TokenRowsAnalysis &tokenRows) {
    SmallVector<Operation *> body;
    SmallVector<Value> results;
    if (auto fusion = dyn_cast<FusionOp>(unit)) {
      for (Operation &op : fusion.getBody().front().without_terminator())
        body.push_back(&op);
      results.assign(fusion.getYield().getValues().begin(),
                     fusion.getYield().getValues().end());
    } else {
      body.push_back(unit);
      results.assign(unit->getResults().begin(), unit->getResults().end());
    }

    // Values from above become arguments, in order of first use.
    llvm::SetVector<Value> inputs;
    for (Operation *op : body)
      for (Value operand : op->getOperands()) {
        Operation *def = operand.getDefiningOp();
        if (!def || !unit->isAncestor(def))
          inputs.insert(operand);
      }

    MLIRContext *ctx = &getContext();
    OpBuilder b(ctx);
    Location loc = unit->getLoc();
    auto type = b.getFunctionType(ValueRange(inputs.getArrayRef()).getTypes(),
                                  ValueRange(results).getTypes());
    auto kernel = func::FuncOp::create(b, loc, "kernel", type);
    kernel.setPrivate();
    kernel->setAttr(attrs::kKernel, b.getUnitAttr());
    Block *block = kernel.addEntryBlock();
    IRMapping mapping;
    for (auto [input, arg] : llvm::zip(inputs, block->getArguments())) {
      mapping.map(input, arg);
      if (tokenRows.hasTokenRows(input))
        kernel.setArgAttr(arg.getArgNumber(), attrs::kTokenRows,
                          b.getUnitAttr());
      if (isSourceCache(input))
        kernel.setArgAttr(arg.getArgNumber(), attrs::kSourceCache, b.getUnitAttr());
    }
    for (auto [index, result] : llvm::enumerate(results))
      if (tokenRows.hasTokenRows(result))
        kernel.setResultAttr(index, attrs::kTokenRows, b.getUnitAttr());
    b.setInsertionPointToEnd(block);
    for (Operation *op : body)
      b.clone(*op, mapping);
    SmallVector<Value> returned;
    for (Value result : results)
      returned.push_back(mapping.lookup(result));
    func::ReturnOp::create(b, loc, returned);

    std::string role = (entry.getSymName() + "_" + kernelRole(body)).str();
    std::string name = role;
    for (int &suffix = repeats[role]; symbols->lookup(name); )
      name = role + "_" + std::to_string(++suffix);
    kernel.setSymName(name);
    symbols->insert(kernel);

    OpBuilder atUnit(unit);
    auto launch =
        LaunchOp::create(atUnit, loc, ValueRange(results).getTypes(),
                         FlatSymbolRefAttr::get(kernel.getSymNameAttr()),
                         inputs.getArrayRef(), DenseI64ArrayAttr());
    for (auto [old, replacement] :
         llvm::zip(unit->getResults(), launch.getResults())) {
      tokenRows.inherit(old, replacement);
      old.replaceAllUsesWith(replacement);
    }
    unit->erase();
  }

};

} // namespace
} // namespace tfm
