//===- OutlineKernels.cpp - fusion regions -> kernel functions + launches -===//
#include "tfm/Dialect/TfmOps.h"
#include "tfm/Transforms/Passes.h"

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

bool isComputeOp(Operation *op) {
  return isa<EmbeddingOp, AddPositionsOp, RmsNormOp, LayerNormOp, LinearOp,
             SliceColsOp, RopeOp, AddOp, MulOp, SiluOp, GeluOp, AttentionOp,
             LastRowOp, KvStoreOp>(op);
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

/// "blk.3.ffn_down.weight" -> "ffn_down".
StringRef weightRole(StringRef name) {
  if (name.consume_front("blk."))
    name = name.drop_until([](char c) { return c == '.'; }).drop_front();
  name.consume_back(".weight");
  return name;
}

/// A readable kernel role from what the kernel computes.
std::string kernelRole(ArrayRef<Operation *> ops) {
  for (Operation *op : ops) {
    auto linear = dyn_cast<LinearOp>(op);
    if (!linear)
      continue;
    auto weight = linear.getWeight().getDefiningOp<WeightOp>();
    if (!weight)
      return "linear";
    StringRef role = weightRole(weight.getName());
    if (role == "attn_q" || role == "attn_k" || role == "attn_v" ||
        role == "attn_qkv")
      return "attn_in";
    if (role == "ffn_gate" || role == "ffn_up")
      return "ffn_in";
    if (role == "attn_output")
      return "attn_out";
    if (role == "ffn_down")
      return "ffn_out";
    if (role == "output" || role == "token_embd")
      return "logits";
    return role.str();
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
    // Kernels are shared across entry points too: score runs prefill's
    // kernels (both are specialised for a dynamic row count) and adds only
    // its logits kernel. Decode's one-row kernels never match prefill's.
    llvm::StringMap<func::FuncOp> kernelsByBody;
    for (func::FuncOp entry : entries)
      if (failed(outlineEntry(entry, kernelsByBody)))
        return signalPassFailure();
  }

  LogicalResult outlineEntry(func::FuncOp entry,
                             llvm::StringMap<func::FuncOp> &kernelsByBody) {
    if (!entry.getBody().hasOneBlock())
      return entry.emitError("entry function must have a single block");
    TokenRowsAnalysis tokenRows;
    SmallVector<Operation *> units;
    for (Operation &op : entry.getBody().front())
      if (isa<FusionOp>(op) || isComputeOp(&op))
        units.push_back(&op);
    for (Operation *unit : units)
      outlineUnit(entry, unit, tokenRows, kernelsByBody);
    return success();
  }

  void outlineUnit(func::FuncOp entry, Operation *unit,
                   TokenRowsAnalysis &tokenRows,
                   llvm::StringMap<func::FuncOp> &kernelsByBody) {
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
    func::FuncOp shared = deduplicate(kernel, role, kernelsByBody);

    OpBuilder atUnit(unit);
    auto launch =
        LaunchOp::create(atUnit, loc, ValueRange(results).getTypes(),
                         FlatSymbolRefAttr::get(shared.getSymNameAttr()),
                         inputs.getArrayRef(), DenseI64ArrayAttr());
    for (auto [old, replacement] :
         llvm::zip(unit->getResults(), launch.getResults())) {
      tokenRows.inherit(old, replacement);
      old.replaceAllUsesWith(replacement);
    }
    unit->erase();
  }

  /// Returns the existing kernel with the same body, or inserts `kernel`
  /// into the module under a fresh name derived from `role`.
  func::FuncOp deduplicate(func::FuncOp kernel, const std::string &role,
                           llvm::StringMap<func::FuncOp> &kernelsByBody) {
    std::string key;
    {
      llvm::raw_string_ostream os(key);
      kernel->print(os, OpPrintingFlags().printGenericOpForm());
    }
    auto it = kernelsByBody.find(key);
    if (it != kernelsByBody.end()) {
      kernel.erase();
      return it->second;
    }
    ModuleOp module = getOperation();
    std::string name = role;
    for (int suffix = 1; module.lookupSymbol(name); ++suffix)
      name = role + "_" + std::to_string(suffix);
    kernel.setSymName(name);
    module.push_back(kernel);
    kernelsByBody[key] = kernel;
    return kernel;
  }
};

} // namespace
} // namespace tfm
