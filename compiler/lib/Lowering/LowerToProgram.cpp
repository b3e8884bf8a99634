//===- LowerToProgram.cpp - config or tfm IR -> passes -> Program ---------===//
#include "tfm/Lowering/LowerToProgram.h"

#include "ExtractProgram.h"
#include "VerifyProgram.h"
#include "tfm/Builder/ModelBuilder.h"
#include "tfm/Lowering/IrFile.h"
#include "tfm/common/Failure.h"
#include "tfm/common/OutputFile.h"
#include "tfm/common/UntrustedText.h"
#include "tfm/Dialect/TfmOps.h"
#include "tfm/Transforms/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/IR/Verifier.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Pass/PassRegistry.h"

#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/Support/raw_ostream.h"

#include <algorithm>

using namespace mlir;

namespace tfm {
namespace {

llvm::Error writeModule(ModuleOp module, const std::string &path) {
  // With locations, so that an edited and recompiled module keeps pointing
  // its diagnostics at layers.
  auto print = [&](llvm::raw_ostream &os) {
    module->print(os, OpPrintingFlags().enableDebugInfo(/*enable=*/true, /*prettyForm=*/false));
  };
  if (path == "-") {
    print(llvm::outs());
    return llvm::Error::success(); // the tool reports a failed standard output
  }
  llvm::Expected<AtomicOutputFile> file = AtomicOutputFile::create(path);
  if (!file)
    return file.takeError();
  print(file->os());
  return file->commit();
}

/// The most an error message repeats of MLIR's diagnostics: a file of
/// garbage makes one per line, each quoting the file.
constexpr size_t kMaxDiagnosticBytes = 2048;

/// The context the MLIR half runs in, with its diagnostics collected for
/// error messages: the first ones, each bounded (boundedMessage), up to
/// kMaxDiagnosticBytes in all.
struct LoweringContext {
  MLIRContext context{MLIRContext::Threading::DISABLED};
  std::string diagnostics;
  bool leftOut = false;
  ScopedDiagnosticHandler handler{&context, [this](Diagnostic &diag) {
                                    if (leftOut)
                                      return success();
                                    std::string text;
                                    llvm::raw_string_ostream os(text);
                                    diag.getLocation().print(os);
                                    os << ": " << diag.str();
                                    std::string line = boundedMessage(text) + "\n";
                                    if (diagnostics.size() + line.size() > kMaxDiagnosticBytes) {
                                      diagnostics += "(further diagnostics left out)\n";
                                      leftOut = true;
                                    } else {
                                      diagnostics += line;
                                    }
                                    return success();
                                  }};
  LoweringContext() {
    context.loadDialect<TfmDialect, func::FuncDialect>();
    // --pass-pipeline names passes through the global registry.
    static const bool registered = [] {
      registerTfmPassesAndPipeline();
      return true;
    }();
    (void)registered;
  }
};

llvm::Expected<Program> runPipeline(LoweringContext &lc, ModuleOp module,
                                    const LoweringOptions &options) {
  if (!options.target.empty())
    module->setAttr(attrs::kTarget, StringAttr::get(&lc.context, options.target));

  PassManager pm(&lc.context);
  if (!options.passPipeline.empty()) {
    std::string errors;
    llvm::raw_string_ostream os(errors);
    if (failed(parsePassPipeline(options.passPipeline, pm, os)))
      return failure("--pass-pipeline '" + options.passPipeline + "': " + errors);
  } else {
    TfmPipelineOptions pipeline{options.scheduleOverrides, options.tuningFile, options.skipPasses,
                                options.attentionKeyTile, options.activationBlock,
                                options.bf16Activations};
    if (llvm::Error e = buildTfmPipeline(pm, pipeline))
      return std::move(e);
  }

  if (!options.dumpIrDir.empty()) {
    if (std::error_code ec = llvm::sys::fs::create_directories(options.dumpIrDir))
      return failure("cannot create IR dump folder '" + options.dumpIrDir +
                                     "': " + ec.message());
    llvm::SmallString<256> input(options.dumpIrDir);
    llvm::sys::path::append(input, "input.mlir");
    if (llvm::Error e = writeModule(module, std::string(input)))
      return std::move(e);
    pm.enableIRPrintingToFileTree(
        [](Pass *, Operation *) { return false; }, [](Pass *, Operation *) { return true; },
        /*printModuleScope=*/true, /*printAfterOnlyOnChange=*/false,
        /*printAfterOnlyOnFailure=*/false, options.dumpIrDir);
  }
  if (failed(pm.run(module)))
    return failure("the pass pipeline failed:\n" + lc.diagnostics);
  if (!options.emitMlirPath.empty())
    if (llvm::Error e = writeModule(module, options.emitMlirPath))
      return std::move(e);
  // Whatever the pipeline was, the module is checked as a whole before
  // anything is generated from it.
  llvm::Expected<Program> program = extractProgram(module);
  if (!program)
    return program.takeError();
  if (llvm::Error e = verifyProgram(*program))
    return std::move(e);
  return program;
}

} // namespace

llvm::Expected<Program> lowerConfig(const ModelSpec &spec, const LoweringOptions &options) {
  if (options.target.empty())
    return failure("model '" + spec.name + "': no target to compile for");
  // An encoder's call holds its whole text, every token attending to all;
  // an encoder-decoder's encode its whole source.
  int64_t defaultChunk = spec.encoder()          ? spec.contextLength
                         : spec.encoderDecoder() ? spec.sourceLength
                                                 : std::min<int64_t>(spec.contextLength, 128);
  int64_t prefillChunk = options.prefillChunk ? options.prefillChunk : defaultChunk;
  LoweringContext lc;
  auto module = buildModel(lc.context, spec, prefillChunk, options.target, options.weightTypes,
                           options.cacheType);
  if (!module)
    return module.takeError();
  if (failed(verify(**module)))
    return failure("the built IR does not verify:\n" + lc.diagnostics);
  return runPipeline(lc, **module, options);
}

llvm::Expected<Program> lowerMlirFile(const std::string &path, const LoweringOptions &options) {
  auto text = readIrFile(path);
  if (!text)
    return text.takeError();
  return lowerMlirText((*text)->getBuffer(), path, options);
}

llvm::Expected<Program> lowerMlirText(llvm::StringRef text, const std::string &name,
                                      const LoweringOptions &options) {
  if (llvm::Error e = checkNestingDepth(text, name))
    return std::move(e);
  LoweringContext lc;
  llvm::SourceMgr sources;
  // A copy: MLIR's lexer reads to a terminating NUL, which `text` lacks.
  sources.AddNewSourceBuffer(llvm::MemoryBuffer::getMemBufferCopy(text, name), llvm::SMLoc());
  OwningOpRef<ModuleOp> module = parseSourceFile<ModuleOp>(sources, &lc.context);
  if (!module)
    return failure("cannot read tfm IR from '" + name + "':\n" + lc.diagnostics);
  return runPipeline(lc, *module, options);
}

} // namespace tfm
