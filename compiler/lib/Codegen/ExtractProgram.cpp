//===- ExtractProgram.cpp - ModelSpec -> tfm IR -> passes -> Program ------===//
//
// Drives the MLIR half (build, pipeline stages, IR dumps) and reads the
// final module into a Program: the manifest from the module attribute, one
// Kernel per kernel function, one EntryPoint per entry function.
//
//===----------------------------------------------------------------------===//
#include "tfm/Codegen/LowerToProgram.h"

#include "tfm/Builder/ModelBuilder.h"
#include "tfm/Dialect/TfmOps.h"
#include "tfm/Transforms/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/IR/Verifier.h"
#include "mlir/Pass/PassManager.h"

#include "llvm/ADT/StringMap.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/raw_ostream.h"

#include <algorithm>
#include <map>
#include <set>

using namespace mlir;

namespace tfm {
namespace {

std::vector<int64_t> programShape(Type type) {
  std::vector<int64_t> shape;
  for (int64_t dim : cast<RankedTensorType>(type).getShape())
    shape.push_back(ShapedType::isDynamic(dim) ? kDynamicRows : dim);
  return shape;
}

ElemType elemType(Type type) {
  return cast<RankedTensorType>(type).getElementType().isInteger(32)
             ? ElemType::I32
             : ElemType::F32;
}

bool writeModule(ModuleOp module, const std::string &path,
                 std::string &error) {
  std::error_code ec;
  llvm::raw_fd_ostream os(path, ec);
  if (ec) {
    error = "cannot write IR to '" + path + "': " + ec.message();
    return false;
  }
  module->print(os);
  return true;
}

/// Reads a module at the end of the pipeline into a Program.
class ProgramReader {
public:
  ProgramReader(ModuleOp module, Program &out, std::string &error)
      : module(module), out(out), error(error) {}

  bool read() {
    if (!readManifest())
      return false;
    auto chunk = module->getAttrOfType<IntegerAttr>(attrs::kPrefillChunk);
    if (!chunk)
      return fail(std::string("module has no ") + attrs::kPrefillChunk);
    out.prefillChunk = chunk.getInt();
    out.kvCacheBytes =
        2 * out.spec.nLayers * out.spec.contextLength * out.spec.kvDim() * 4;

    for (auto fn : module.getOps<func::FuncOp>()) {
      if (!fn->hasAttr(attrs::kKernel))
        continue;
      kernelIndex[fn.getSymName()] = static_cast<int>(out.kernels.size());
      out.kernels.emplace_back();
      if (!readKernel(fn, out.kernels.back()))
        return false;
    }
    std::map<std::string, EntryPoint *> entries = {
        {"prefill", &out.prefill}, {"decode", &out.decode}, {"score", &out.score}};
    std::set<std::string> seen;
    for (auto fn : module.getOps<func::FuncOp>()) {
      auto entry = fn->getAttrOfType<StringAttr>(attrs::kEntry);
      if (!entry)
        continue;
      auto it = entries.find(entry.getValue().str());
      if (it == entries.end())
        return fail("function '" + fn.getSymName().str() + "' has " +
                    attrs::kEntry + " '" + entry.getValue().str() +
                    "'; expected 'prefill', 'decode' or 'score'");
      if (!seen.insert(it->first).second)
        return fail("module has two '" + it->first + "' entries");
      if (!readEntry(fn, *it->second))
        return false;
    }
    if (seen.size() != entries.size())
      return fail("module must have a prefill, a decode and a score entry");
    return true;
  }

private:
  bool fail(const std::string &message) {
    error = message;
    return false;
  }

  bool readManifest() {
    auto manifest = module->getAttrOfType<ArrayAttr>(attrs::kManifest);
    if (!manifest)
      return fail(std::string("module has no ") + attrs::kManifest);
    for (Attribute entry : manifest) {
      auto dict = dyn_cast<DictionaryAttr>(entry);
      auto name = dict ? dict.getAs<StringAttr>("name") : StringAttr();
      auto shape = dict ? dict.getAs<DenseI64ArrayAttr>("shape")
                        : DenseI64ArrayAttr();
      if (!name || !shape)
        return fail(std::string(attrs::kManifest) +
                    " entries must be {name: string, shape: array<i64>}");
      weightIndex[name.getValue()] = static_cast<int64_t>(out.weights.size());
      out.weights.push_back(
          {name.str(), std::vector<int64_t>(shape.asArrayRef().begin(),
                                            shape.asArrayRef().end()),
           ElemType::F32});
    }
    return true;
  }

  bool readKernel(func::FuncOp fn, Kernel &kernel) {
    kernel.name = fn.getSymName().str();
    auto schedule = fn->getAttrOfType<StringAttr>(attrs::kSchedule);
    if (!schedule)
      return fail("kernel '" + kernel.name + "' has no " + attrs::kSchedule);
    kernel.schedule = schedule.str();

    Block &body = fn.getBody().front();
    unsigned numArgs = fn.getNumArguments();
    llvm::DenseMap<Value, int> valueIndex;
    std::vector<bool> valueTokenRows;
    for (BlockArgument arg : body.getArguments()) {
      KernelParam param;
      param.shape = programShape(arg.getType());
      param.type = elemType(arg.getType());
      param.tokenRows = static_cast<bool>(
          fn.getArgAttr(arg.getArgNumber(), attrs::kTokenRows));
      for (Operation *user : arg.getUsers()) {
        if (auto store = dyn_cast<KvStoreOp>(user);
            store && store.getCache() == arg)
          param.isCache = param.isOutput = true;
        if (auto attention = dyn_cast<AttentionOp>(user);
            attention && (attention.getKeyCache() == arg ||
                          attention.getValueCache() == arg))
          param.isCache = true;
      }
      param.name = (param.isCache ? "cache" : "in") +
                   std::to_string(arg.getArgNumber());
      valueIndex[arg] = static_cast<int>(kernel.params.size());
      valueTokenRows.push_back(param.tokenRows);
      kernel.params.push_back(param);
    }
    for (unsigned r = 0; r < fn.getNumResults(); ++r) {
      KernelParam param;
      Type type = fn.getResultTypes()[r];
      param.name = "out" + std::to_string(r);
      param.shape = programShape(type);
      param.type = elemType(type);
      param.isOutput = true;
      param.tokenRows =
          static_cast<bool>(fn.getResultAttr(r, attrs::kTokenRows));
      valueTokenRows.push_back(param.tokenRows);
      kernel.params.push_back(param);
    }

    for (Operation &op : body) {
      if (auto ret = dyn_cast<func::ReturnOp>(op)) {
        for (auto [r, value] : llvm::enumerate(ret.getOperands()))
          kernel.outputValue[static_cast<int>(numArgs + r)] =
              valueIndex.lookup(value);
        continue;
      }
      if (auto store = dyn_cast<KvStoreOp>(op)) {
        auto cache = dyn_cast<BlockArgument>(store.getCache());
        if (!cache)
          return fail("kernel '" + kernel.name +
                      "': tfm.kv_store must write a cache argument");
        int param = static_cast<int>(cache.getArgNumber());
        if (kernel.outputValue.count(param))
          return fail("kernel '" + kernel.name + "': cache argument " +
                      std::to_string(param) + " is stored into twice");
        kernel.outputValue[param] = valueIndex.lookup(store.getValue());
        continue;
      }
      if (op.getNumResults() != 1 || op.getDialect() != module->getContext()
                                         ->getLoadedDialect<TfmDialect>())
        return fail("kernel '" + kernel.name + "': unexpected op '" +
                    op.getName().getStringRef().str() + "'");
      KernelOp kop;
      kop.kind = op.getName().stripDialect().str();
      for (Value operand : op.getOperands())
        kop.operands.push_back(valueIndex.lookup(operand));
      kop.shape = programShape(op.getResult(0).getType());
      if (isa<EmbeddingOp>(op))
        kop.tokenRows = true;
      else if (isa<LastRowOp>(op))
        kop.tokenRows = false;
      else
        kop.tokenRows = valueTokenRows[kop.operands.front()];
      for (NamedAttribute attr : op.getAttrs()) {
        if (auto flag = dyn_cast<BoolAttr>(attr.getValue()))
          kop.attrs[attr.getName().str()] = flag.getValue() ? 1.0 : 0.0;
        else if (auto i = dyn_cast<IntegerAttr>(attr.getValue()))
          kop.attrs[attr.getName().str()] = static_cast<double>(i.getInt());
        else if (auto f = dyn_cast<FloatAttr>(attr.getValue()))
          kop.attrs[attr.getName().str()] = f.getValueAsDouble();
      }
      valueIndex[op.getResult(0)] =
          static_cast<int>(kernel.params.size() + kernel.ops.size());
      valueTokenRows.push_back(kop.tokenRows);
      kernel.ops.push_back(std::move(kop));
    }
    for (size_t p = 0; p < kernel.params.size(); ++p)
      if (kernel.params[p].isOutput && !kernel.outputValue.count(p))
        return fail("kernel '" + kernel.name + "': output parameter " +
                    std::to_string(p) + " receives no value");
    return true;
  }

  bool readEntry(func::FuncOp fn, EntryPoint &entry) {
    entry.name = fn.getSymName().str();
    auto arena = fn->getAttrOfType<IntegerAttr>(attrs::kArenaBytes);
    if (!arena)
      return fail("entry '" + entry.name + "' has no " + attrs::kArenaBytes +
                  " (memory was not planned)");
    entry.arenaBytes = arena.getInt();
    for (Operation &op : fn.getBody().front()) {
      auto launch = dyn_cast<LaunchOp>(op);
      if (!launch) {
        if (isa<WeightOp, KvCacheOp, func::ReturnOp>(op))
          continue;
        return fail("entry '" + entry.name + "': '" +
                    op.getName().getStringRef().str() +
                    "' was not outlined into a kernel");
      }
      Launch out;
      auto kernel = kernelIndex.find(launch.getKernel());
      if (kernel == kernelIndex.end())
        return fail("entry '" + entry.name + "' launches unknown kernel '" +
                    launch.getKernel().str() + "'");
      out.kernel = kernel->second;
      std::optional<ArrayRef<int64_t>> offsets = launch.getArenaOffsets();
      if (!offsets)
        return fail("entry '" + entry.name + "': launch of '" +
                    launch.getKernel().str() + "' has no arena offsets");
      for (Value arg : launch.getArgs()) {
        Binding binding;
        if (!bindInput(entry.name, arg, binding))
          return false;
        out.bindings.push_back(binding);
      }
      for (int64_t offset : *offsets) {
        Binding binding;
        binding.storage = offset < 0 ? Storage::Logits : Storage::Arena;
        binding.offset = std::max<int64_t>(offset, 0);
        out.bindings.push_back(binding);
      }
      entry.launches.push_back(std::move(out));
    }
    return true;
  }

  bool bindInput(const std::string &entry, Value arg, Binding &binding) {
    if (isa<BlockArgument>(arg)) {
      binding.storage = Storage::Tokens;
      return true;
    }
    Operation *def = arg.getDefiningOp();
    if (auto weight = dyn_cast<WeightOp>(def)) {
      auto it = weightIndex.find(weight.getName());
      if (it == weightIndex.end())
        return fail("entry '" + entry + "': weight '" +
                    weight.getName().str() + "' is not in the manifest");
      if (out.weights[it->second].shape != programShape(weight.getType()))
        return fail("entry '" + entry + "': weight '" +
                    weight.getName().str() +
                    "' has a different shape than in the manifest");
      binding.storage = Storage::Weight;
      binding.index = it->second;
      return true;
    }
    if (auto cache = dyn_cast<KvCacheOp>(def)) {
      binding.storage = cache.getKind() == CacheKind::Key ? Storage::KCache
                                                          : Storage::VCache;
      binding.index = static_cast<int64_t>(cache.getLayer());
      return true;
    }
    if (auto producer = dyn_cast<LaunchOp>(def)) {
      int64_t offset = (*producer.getArenaOffsets())[cast<OpResult>(arg)
                                                         .getResultNumber()];
      if (offset < 0)
        return fail("entry '" + entry +
                    "': a returned value is also read by a later launch");
      binding.storage = Storage::Arena;
      binding.offset = offset;
      return true;
    }
    return fail("entry '" + entry + "': launch argument defined by '" +
                def->getName().getStringRef().str() +
                "' has no run-time storage");
  }

  ModuleOp module;
  Program &out;
  std::string &error;
  llvm::StringMap<int64_t> weightIndex;
  llvm::StringMap<int> kernelIndex;
};

} // namespace

bool lowerToProgram(const ModelSpec &spec, const LoweringOptions &options,
                    Program &out, std::string &error) {
  int64_t prefillChunk = options.prefillChunk
                             ? options.prefillChunk
                             : std::min<int64_t>(spec.contextLength, 128);
  MLIRContext context(MLIRContext::Threading::DISABLED);
  context.loadDialect<TfmDialect, func::FuncDialect>();
  std::string diagnostics;
  ScopedDiagnosticHandler handler(&context, [&](Diagnostic &diag) {
    diagnostics += diag.str() + "\n";
    return success();
  });

  OwningOpRef<ModuleOp> module =
      buildModel(context, spec, prefillChunk, error);
  if (!module)
    return false;
  if (failed(verify(*module))) {
    error = "the built IR does not verify:\n" + diagnostics;
    return false;
  }

  if (!options.dumpIrDir.empty()) {
    if (std::error_code ec =
            llvm::sys::fs::create_directories(options.dumpIrDir)) {
      error = "cannot create IR dump folder '" + options.dumpIrDir +
              "': " + ec.message();
      return false;
    }
  }
  auto dump = [&](int index, llvm::StringRef stage) {
    if (options.dumpIrDir.empty())
      return true;
    llvm::SmallString<256> path(options.dumpIrDir);
    llvm::sys::path::append(path,
                            llvm::formatv("{0:02}-{1}.mlir", index, stage).str());
    return writeModule(*module, std::string(path), error);
  };
  if (!dump(0, "built"))
    return false;

  int index = 0;
  for (const PipelineStage &stage : pipelineStages(options.schedule)) {
    PassManager pm(&context);
    stage.addPasses(pm);
    if (failed(pm.run(*module))) {
      error = "pass stage '" + stage.name + "' failed: " + diagnostics;
      return false;
    }
    if (!dump(++index, stage.name))
      return false;
  }
  if (!options.emitMlirPath.empty() &&
      !writeModule(*module, options.emitMlirPath, error))
    return false;

  out = Program();
  out.spec = spec;
  return ProgramReader(*module, out, error).read();
}

} // namespace tfm
