//===- ExtractProgram.cpp - a lowered tfm module -> Program ---------------===//
#include "ExtractProgram.h"

#include "tfm/Dialect/TfmOps.h"
#include "tfm/Program/ScheduleNames.h"
#include "tfm/Program/ScheduleTargets.h"
#include "tfm/Transforms/KernelKey.h"
#include "tfm/common/Failure.h"
#include "tfm/common/Hash.h"
#include "tfm/common/Identifier.h"
#include "tfm/common/ModelSpec.h"
#include "tfm/common/Targets.h"
#include "tfm/common/UntrustedText.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"

#include "llvm/ADT/StringMap.h"
#include "llvm/Support/raw_ostream.h"

#include <cstring>
#include <map>
#include <optional>
#include <set>

using namespace mlir;

namespace tfm {
namespace {

#include "KernelOpsFromMlir.inc"


std::vector<int64_t> programShape(Type type) {
  std::vector<int64_t> shape;
  for (int64_t dim : cast<ShapedType>(type).getShape())
    shape.push_back(ShapedType::isDynamic(dim) ? kDynamicRows : dim);
  return shape;
}

/// i32 token ids, f32 activations and caches, or a weight's encoding.
ElementEncoding elemType(Type type) {
  Type element = cast<ShapedType>(type).getElementType();
  if (element.isInteger(32))
    return ElementEncoding{DType::I32, std::nullopt};
  return weightEncoding(element).value_or(ElementEncoding{});
}

/// A location, from the file: bounded as any text from a file.
std::string locationText(Location loc) {
  std::string text;
  llvm::raw_string_ostream os(text);
  loc.print(os);
  return boundedMessage(text);
}

class ProgramReader {
public:
  explicit ProgramReader(ModuleOp module) : module(module) {}

  llvm::Expected<Program> read() {
    if (!module.getSymName())
      return fail("the module has no name (module @name), which names the library");
    out.name = module.getSymName()->str();
    if (!isBoundedIdentifier(out.name))
      return fail("module name " + quoted(out.name) + ": expected a C identifier of at most " +
                  std::to_string(kMaxIdentifierLength) +
                  " bytes (letters, digits, '_'), which names lib<name>.so and <name>.h");
    if (llvm::Error e = readModuleAttrs())
      return std::move(e);
    for (auto decl : module.getOps<WeightDeclOp>()) {
      weightIndex[decl.getSymName()] = static_cast<int64_t>(out.weights.size());
      out.weights.push_back(
          {decl.getSymName().str(), programShape(decl.getType()), elemType(decl.getType())});
    }
    for (auto decl : module.getOps<CacheDeclOp>()) {
      if (!decl.getOffset())
        return fail("cache " + quoted(decl.getSymName()) +
                    "' has no offset: memory was not planned (tfm-plan-memory)");
      auto type = cast<MemRefType>(decl.getType());
      cacheIndex[decl.getSymName()] = static_cast<int64_t>(out.caches.size());
      if ((decl.getWindow() || decl.getSource()) && !decl.getBase())
        return fail("cache " + quoted(decl.getSymName()) +
                    (decl.getSource() ? " is a source cache" : " slides") +
                    " but has no base slot: memory was not planned (tfm-plan-memory)");
      out.caches.push_back({decl.getSymName().str(), type.getDimSize(0), type.getDimSize(1),
                            elemType(type).plain,
                            isTransposedCache(type) ? CacheLayout::Transposed : CacheLayout::Rows,
                            static_cast<int64_t>(*decl.getOffset()),
                            static_cast<int64_t>(decl.getWindow().value_or(0)),
                            static_cast<int64_t>(decl.getBase().value_or(0)),
                            decl.getSource()});
    }
    for (auto fn : module.getOps<func::FuncOp>()) {
      if (!fn->hasAttr(attrs::kKernel))
        continue;
      kernelIndex[fn.getSymName()] = static_cast<int>(out.kernels.size());
      out.kernels.emplace_back();
      if (llvm::Error e = readKernel(fn, out.kernels.back()))
        return std::move(e);
    }
    std::set<EntryKind> seen;
    for (auto fn : module.getOps<func::FuncOp>()) {
      auto entry = fn->getAttrOfType<StringAttr>(attrs::kEntry);
      if (!entry)
        continue;
      auto kind = llvm::find_if(kEntryKinds, [&](EntryKind k) {
        return entry.getValue() == entryName(k);
      });
      if (kind == std::end(kEntryKinds))
        return fail("function " + quoted(fn.getSymName()) + " has " + attrs::kEntry + " " +
                    quoted(entry.getValue()) + "; expected 'prefill', 'decode', 'score' or "
                    "'encode'");
      if (!seen.insert(*kind).second)
        return fail(std::string("module has two '") + entryName(*kind) + "' entries");
      if (llvm::Error e = readEntry(fn, out.entry(*kind)))
        return std::move(e);
    }
    std::vector<EntryKind> expected = entryKindsOf(out.architecture);
    if (seen != std::set<EntryKind>(expected.begin(), expected.end()))
    {
      std::string names;
      for (EntryKind kind : expected)
        names += (names.empty() ? "" : ", ") + std::string(entryName(kind));
      return fail(std::string("module of an ") + variantName(out.architecture) +
                  " (tfm.config) must have the entries " + names + ", each once, and no other");
    }

    std::string text;
    llvm::raw_string_ostream os(text);
    module->print(os, OpPrintingFlags().printGenericOpForm());
    out.irHash = contentHash(text);
    return std::move(out);
  }

private:
  llvm::Error fail(const std::string &message) { return failure(message); }

  llvm::Error readModuleAttrs() {
    auto integer = [&](const char *name, int64_t &value) -> llvm::Error {
      auto attr = module->getAttrOfType<IntegerAttr>(name);
      if (!attr)
        return fail(std::string("module has no ") + name +
                    (name == std::string(attrs::kKvCacheBytes)
                         ? " (memory was not planned: tfm-plan-memory)"
                         : ""));
      value = attr.getInt();
      return llvm::Error::success();
    };
    auto string = [&](const char *name, std::string &value) -> llvm::Error {
      auto attr = module->getAttrOfType<StringAttr>(name);
      if (!attr)
        return fail(std::string("module has no ") + name);
      value = attr.str();
      return llvm::Error::success();
    };
    if (llvm::Error e = integer(attrs::kContextLength, out.contextLength))
      return e;
    if (llvm::Error e = integer(attrs::kVocabSize, out.vocabSize))
      return e;
    if (llvm::Error e = integer(attrs::kPrefillChunk, out.prefillChunk))
      return e;
    if (llvm::Error e = integer(attrs::kKvCacheBytes, out.kvCacheBytes))
      return e;
    if (llvm::Error e = string(attrs::kConfig, out.configJson))
      return e;
    if (llvm::Error e = string(attrs::kTarget, out.target))
      return e;
    if (llvm::Error e = readConfig())
      return e;
    return checkTarget();
  }

  /// What the config fixes about the entries: which there are, and the
  /// width of encode's hidden states.
  llvm::Error readConfig() {
    llvm::Expected<ModelSpec> config =
        parseCanonicalSpec(out.configJson, "the module's tfm.config", "config.");
    if (!config)
      return config.takeError();
    out.architecture = config->architecture;
    out.hiddenSize = config->dim;
    out.sourceLength = config->sourceLength;
    return llvm::Error::success();
  }

  /// What the library records and the runtime checks against the CPU is an
  /// explicit feature list: a preset name ("host", "avx2") would be
  /// recorded as it is, and no CPU would ever run the library.
  llvm::Error checkTarget() {
    llvm::Expected<std::string> resolved = resolveTarget(out.target);
    if (!resolved)
      return fail(std::string(attrs::kTarget) + ": " + llvm::toString(resolved.takeError()));
    if (*resolved != out.target)
      return fail(std::string(attrs::kTarget) + ": found " + quoted(out.target) +
                  ", expected an explicit target string such as " + *resolved +
                  " (tfmc --target resolves a name)");
    return llvm::Error::success();
  }

  /// A kernel's name is its C symbol in the library: named as the
  /// outliner names kernels, it can take no function's place that the
  /// driver, libc or Halide's runtime defines.
  llvm::Error checkKernelName(StringRef name) {
    bool entryPrefixed = llvm::any_of(kEntryKinds, [&](EntryKind kind) {
      StringRef prefix = entryName(kind);
      return name.starts_with(prefix) && name.size() > prefix.size() + 1 &&
             name[prefix.size()] == '_';
    });
    if (isBoundedIdentifier(name) && entryPrefixed)
      return llvm::Error::success();
    return fail("kernel name " + quoted(name) +
                ": expected prefill_, decode_, score_ or encode_ and a C identifier's letters, "
                "digits "
                "and '_', at most " +
                std::to_string(kMaxIdentifierLength) +
                " bytes (the kernel's symbol in the library, as tfm-outline-kernels names it)");
  }

  llvm::Error readKernel(func::FuncOp fn, Kernel &kernel) {
    kernel.name = fn.getSymName().str();
    if (llvm::Error e = checkKernelName(kernel.name))
      return e;
    std::string text;
    llvm::raw_string_ostream os(text);
    fn->print(os, OpPrintingFlags().printGenericOpForm());
    kernel.irHash = contentHash(text);
    kernel.tuningKey = kernelTuningKey(fn);
    auto schedule = fn->getAttrOfType<StringAttr>(attrs::kSchedule);
    kernel.schedule = schedule ? schedule.str() : kDefaultSchedule;
    if (!isScheduleName(kernel.schedule))
      return fail("kernel '" + kernel.name + "' has unknown schedule " + quoted(kernel.schedule));
    TargetDevice device = targetDevice(out.target);
    if (!out.target.empty() && !scheduleRunsOn(*findScheduleName(kernel.schedule), device))
      return fail("kernel '" + kernel.name + "' has schedule " + quoted(kernel.schedule) +
                  ", which does not run on the " + targetDeviceName(device).str() +
                  " of its target; schedules that do: " + schedulesRunningOn(device));

    Block &body = fn.getBody().front();
    unsigned numArgs = fn.getNumArguments();
    llvm::DenseMap<Value, int> valueIndex;
    std::vector<bool> valueTokenRows;
    for (BlockArgument arg : body.getArguments()) {
      KernelParam param;
      param.shape = programShape(arg.getType());
      param.type = elemType(arg.getType());
      param.tokenRows = static_cast<bool>(fn.getArgAttr(arg.getArgNumber(), attrs::kTokenRows));
      param.sourceCache =
          static_cast<bool>(fn.getArgAttr(arg.getArgNumber(), attrs::kSourceCache));
      if (auto memref = dyn_cast<MemRefType>(arg.getType())) {
        param.isCache = true;
        param.cacheLayout = isTransposedCache(memref) ? CacheLayout::Transposed : CacheLayout::Rows;
        param.isOutput = llvm::any_of(arg.getUsers(), [](Operation *user) {
          return isa<KvStoreOp>(user);
        });
      }
      param.name = (param.isCache ? "cache" : "in") + std::to_string(arg.getArgNumber());
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
      param.tokenRows = static_cast<bool>(fn.getResultAttr(r, attrs::kTokenRows));
      valueTokenRows.push_back(param.tokenRows);
      kernel.params.push_back(param);
    }

    for (Operation &op : body) {
      if (auto ret = dyn_cast<func::ReturnOp>(op)) {
        for (auto [r, value] : llvm::enumerate(ret.getOperands()))
          kernel.outputValue[static_cast<int>(numArgs + r)] = valueIndex.lookup(value);
        continue;
      }
      if (auto store = dyn_cast<KvStoreOp>(op)) {
        auto cache = dyn_cast<BlockArgument>(store.getCache());
        if (!cache)
          return fail("kernel '" + kernel.name + "': tfm.kv_store must write a cache argument");
        int param = static_cast<int>(cache.getArgNumber());
        if (kernel.outputValue.count(param))
          return fail("kernel '" + kernel.name + "': cache argument " + std::to_string(param) +
                      " is stored into twice");
        kernel.outputValue[param] = valueIndex.lookup(store.getValue());
        continue;
      }
      std::optional<OpAttrs> typed = kernelOpAttrs(&op);
      if (!typed)
        return fail("kernel '" + kernel.name + "' at " + locationText(op.getLoc()) +
                    ": '" + op.getName().getStringRef().str() + "' is not a kernel op");
      if (const auto *linear = std::get_if<LinearAttrs>(&*typed))
        if (linear->activationBlock > 0 && targetDevice(out.target) != TargetDevice::Cpu)
          return fail("kernel '" + kernel.name + "' at " + locationText(op.getLoc()) +
                      ": 8-bit activations (activation_block " +
                      std::to_string(linear->activationBlock) + ") are a CPU form; target " +
                      quoted(out.target) + " runs on a GPU (leave out --activations int8)");
      KernelOp kop{std::move(*typed), {}, programShape(op.getResult(0).getType()), false};
      for (Value operand : op.getOperands())
        kop.operands.push_back(valueIndex.lookup(operand));
      if (isa<EmbeddingOp>(op))
        kop.tokenRows = true;
      else if (!isa<LastRowOp>(op))
        kop.tokenRows = valueTokenRows[kop.operands.front()];
      valueIndex[op.getResult(0)] = static_cast<int>(kernel.params.size() + kernel.ops.size());
      valueTokenRows.push_back(kop.tokenRows);
      kernel.ops.push_back(std::move(kop));
    }
    for (size_t p = 0; p < kernel.params.size(); ++p)
      if (kernel.params[p].isOutput && !kernel.outputValue.count(p))
        return fail("kernel '" + kernel.name + "': output parameter " + std::to_string(p) +
                    " receives no value");
    return readSlidingWindows(fn, kernel);
  }

  /// The window each sliding cache the kernel reads is read with: its
  /// attention's (the op verifier has it read with one).
  llvm::Error readSlidingWindows(func::FuncOp fn, Kernel &kernel) {
    for (const KernelOp &op : kernel.ops)
      if (const auto *attention = std::get_if<AttentionAttrs>(&op.attrs))
        for (int cache : {op.operands[1], op.operands[2]}) {
          KernelParam &param = kernel.params[cache];
          if (isSlidingCache(cast<MemRefType>(fn.getArgument(cache).getType())))
            param.slidingWindow = std::max(param.slidingWindow, attention->window);
        }
    for (auto [index, param] : llvm::enumerate(kernel.params)) {
      auto memref = param.isCache && !param.isOutput
                        ? dyn_cast<MemRefType>(fn.getArgument(index).getType())
                        : MemRefType();
      if (memref && isSlidingCache(memref) && param.slidingWindow == 0)
        return fail("kernel '" + kernel.name + "': cache argument " + std::to_string(index) +
                    " slides, but no windowed tfm.attention reads it");
    }
    return llvm::Error::success();
  }

  /// The entry's function type is the ABI's (tfm/common/model_abi.h): the
  /// call's token ids in, logits of vocab_size columns out, for the last
  /// row (prefill, decode) or every row (score); encode's hidden states,
  /// the config's dim columns, for every row.
  llvm::Error checkEntrySignature(func::FuncOp fn, EntryKind kind) {
    bool oneRow = kind == EntryKind::Decode, everyRow = outputsEveryRow(kind);
    int64_t rows = oneRow ? 1 : ShapedType::kDynamic, width = out.outputWidth(kind);
    std::string expected = std::string("(tensor<") + (oneRow ? "1" : "?") + "xi32>) -> tensor<" +
                           (everyRow ? "?" : "1") + "x" + std::to_string(width) + "xf32>";
    FunctionType type = fn.getFunctionType();
    auto tokens = type.getNumInputs() == 1 ? dyn_cast<RankedTensorType>(type.getInput(0))
                                           : RankedTensorType();
    auto logits = type.getNumResults() == 1 ? dyn_cast<RankedTensorType>(type.getResult(0))
                                            : RankedTensorType();
    bool matches = tokens && logits && tokens.getShape() == ArrayRef<int64_t>{rows} &&
                   tokens.getElementType().isSignlessInteger(32) && !tokens.getEncoding() &&
                   logits.getShape() ==
                       ArrayRef<int64_t>{everyRow ? ShapedType::kDynamic : 1, width} &&
                   logits.getElementType().isF32() && !logits.getEncoding();
    if (matches)
      return llvm::Error::success();
    std::string found;
    llvm::raw_string_ostream os(found);
    os << type;
    return fail(std::string("entry '") + entryName(kind) + "' (function " +
                quoted(fn.getSymName()) + "): type " +
                quoted(found) + ", expected " + expected +
                (kind == EntryKind::Encode ? " (tfm.config's dim " : " (tfm.vocab_size ") +
                std::to_string(width) + ")");
  }

  llvm::Error readEntry(func::FuncOp fn, EntryPoint &entry) {
    if (!isBoundedIdentifier(fn.getSymName()))
      return fail("entry function name " + quoted(fn.getSymName()) +
                  ": expected a C identifier of at most " +
                  std::to_string(kMaxIdentifierLength) + " bytes");
    if (llvm::Error e = checkEntrySignature(fn, entry.kind))
      return e;
    const std::string name = entryName(entry.kind);
    auto arena = fn->getAttrOfType<IntegerAttr>(attrs::kArenaBytes);
    if (!arena)
      return fail("entry '" + name + "' has no " + attrs::kArenaBytes +
                  " (memory was not planned: tfm-plan-memory)");
    entry.arenaBytes = arena.getInt();
    for (Operation &op : fn.getBody().front()) {
      auto launch = dyn_cast<LaunchOp>(op);
      if (!launch) {
        if (isa<WeightOp, KvCacheOp, func::ReturnOp>(op))
          continue;
        return fail("entry '" + name + "' at " + locationText(op.getLoc()) + ": '" +
                    op.getName().getStringRef().str() +
                    "' was not outlined into a kernel (tfm-outline-kernels)");
      }
      Launch out;
      auto kernel = kernelIndex.find(launch.getKernel());
      if (kernel == kernelIndex.end())
        return fail("entry '" + name + "' launches unknown kernel " +
                    quoted(launch.getKernel()));
      out.kernel = kernel->second;
      std::optional<ArrayRef<int64_t>> offsets = launch.getArenaOffsets();
      if (!offsets)
        return fail("entry '" + name + "': launch of " + quoted(launch.getKernel()) +
                    " has no arena offsets (tfm-plan-memory)");
      for (auto [index, arg] : llvm::enumerate(launch.getArgs())) {
        Binding binding;
        if (llvm::Error e = bindInput(name, arg, binding))
          return e;
        if (llvm::Error e = markWeight(name, launch, index, binding))
          return e;
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
    return llvm::Error::success();
  }

  /// A kernel parameter bound to a weight is one in every launch: the
  /// window of rows the driver binds (tfm/Program/CallWindow.h) follows.
  llvm::Error markWeight(const std::string &entry, LaunchOp launch, size_t index,
                         const Binding &binding) {
    KernelParam &param = out.kernels[kernelIndex.lookup(launch.getKernel())].params[index];
    bool weight = binding.storage == Storage::Weight;
    if (weightSeen.insert({&param, weight}).first->second != weight)
      return fail("entry '" + entry + "': kernel " + quoted(launch.getKernel()) + " argument " +
                  std::to_string(index) + " is a weight in one launch and not in another");
    param.isWeight = weight;
    return llvm::Error::success();
  }

  llvm::Error bindInput(const std::string &entry, Value arg, Binding &binding) {
    if (isa<BlockArgument>(arg)) {
      binding.storage = Storage::Tokens;
      return llvm::Error::success();
    }
    Operation *def = arg.getDefiningOp();
    if (auto weight = dyn_cast<WeightOp>(def)) {
      binding.storage = Storage::Weight;
      binding.index = weightIndex.lookup(weight.getName());
      return llvm::Error::success();
    }
    if (auto cache = dyn_cast<KvCacheOp>(def)) {
      binding.storage = Storage::Cache;
      binding.index = cacheIndex.lookup(cache.getCache());
      return llvm::Error::success();
    }
    if (auto producer = dyn_cast<LaunchOp>(def)) {
      int64_t offset = (*producer.getArenaOffsets())[cast<OpResult>(arg).getResultNumber()];
      if (offset < 0)
        return fail("entry '" + entry + "': a returned value is also read by a later launch");
      binding.storage = Storage::Arena;
      binding.offset = offset;
      return llvm::Error::success();
    }
    return fail("entry '" + entry + "': launch argument defined by '" +
                def->getName().getStringRef().str() + "' has no run-time storage");
  }

  ModuleOp module;
  Program out;
  llvm::StringMap<int64_t> weightIndex, cacheIndex;
  llvm::StringMap<int> kernelIndex;
  std::map<const KernelParam *, bool> weightSeen;
};

} // namespace

llvm::Expected<Program> extractProgram(ModuleOp module) { return ProgramReader(module).read(); }

} // namespace tfm
