//===- KernelObject.cpp - Kernel bitcode to object code, by LLVM 22 -------===//
#include "tfm/Codegen/KernelObject.h"

#include "tfm/Codegen/AmxTileProducts.h"
#include "tfm/Codegen/HalfWidening.h"
#include "tfm/Codegen/PrefetchLocality.h"
#include "tfm/common/BoundedFile.h"
#include "tfm/common/Failure.h"
#include "tfm/common/Targets.h"

#include "llvm/Bitcode/BitcodeReader.h"
#include "llvm/IR/LLVMContext.h"
#include "llvm/IR/LegacyPassManager.h"
#include "llvm/IR/Module.h"
#include "llvm/MC/TargetRegistry.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/TargetSelect.h"
#include "llvm/Support/raw_ostream.h"
#include "llvm/Target/TargetMachine.h"
#include "llvm/Target/TargetOptions.h"

#include <memory>
#include <mutex>

using namespace tfm;

namespace {

llvm::Error bitcodeFailure(llvm::StringRef bitcodePath, const llvm::Twine &what) {
  return tfm::failure("kernel bitcode " + bitcodePath + ": " + what);
}

/// The options Halide's own back end compiles its modules with (its
/// get_target_options): fused multiply-adds, no infinities or NaNs assumed,
/// as every instruction's fast-math flags say too.
llvm::TargetOptions halideTargetOptions() {
  llvm::TargetOptions options;
  options.AllowFPOpFusion = llvm::FPOpFusion::Fast;
  options.NoInfsFPMath = true;
  options.NoNaNsFPMath = true;
  options.HonorSignDependentRoundingFPMathOption = true;
  options.FunctionSections = true;
  options.UseInitArray = true;
  options.FloatABIType = llvm::FloatABI::Hard;
  return options;
}

} // namespace

llvm::Error tfm::compileKernelBitcode(llvm::StringRef bitcodePath, llvm::StringRef target,
                                      llvm::StringRef objectPath) {
  static std::once_flag initialized;
  std::call_once(initialized, [] {
    llvm::InitializeAllTargetInfos();
    llvm::InitializeAllTargets();
    llvm::InitializeAllTargetMCs();
    llvm::InitializeAllAsmPrinters();
  });

  llvm::Expected<std::string> features = targetLlvmFeatures(target);
  if (!features)
    return features.takeError();
  // Halide wrote it for this compile; read as every file is.
  auto bitcode = readBoundedFile(bitcodePath, 1ull << 32, "kernel bitcode");
  if (!bitcode)
    return bitcode.takeError();
  llvm::LLVMContext context;
  llvm::Expected<std::unique_ptr<llvm::Module>> module =
      llvm::parseBitcodeFile((*bitcode)->getMemBufferRef(), context);
  if (!module)
    return bitcodeFailure(bitcodePath, llvm::toString(module.takeError()));

  const llvm::Triple &triple = (*module)->getTargetTriple();
  std::string error;
  const llvm::Target *llvmTarget = llvm::TargetRegistry::lookupTarget(triple, error);
  if (!llvmTarget)
    return bitcodeFailure(bitcodePath, "no LLVM target for " + triple.str() + ": " + error);
  // The architecture's baseline CPU: every feature beyond it comes from the
  // target string, none from a CPU's name.
  llvm::StringRef cpu = triple.isAArch64() ? "generic" : "x86-64";
  std::unique_ptr<llvm::TargetMachine> machine(llvmTarget->createTargetMachine(
      triple, cpu, *features, halideTargetOptions(), llvm::Reloc::PIC_, llvm::CodeModel::Small,
      llvm::CodeGenOptLevel::Aggressive));
  if (!machine)
    return bitcodeFailure(bitcodePath, "LLVM cannot compile for " + triple.str() + " with " + *features);
  (*module)->setDataLayout(machine->createDataLayout());
  for (llvm::Function &f : **module) {
    f.removeFnAttr("target-cpu");
    f.removeFnAttr("target-features");
    f.removeFnAttr("tune-cpu");
  }
  // F16C on x86; AArch64 converts f16 in its base instruction set.
  if (triple.isAArch64() || llvm::is_contained(llvm::split(*features, ','), "+f16c"))
    widenHalvesNatively(**module);

  prefetchIntoAllCacheLevels(**module);
  if (llvm::is_contained(llvm::split(*features, ','), "+amx-tile"))
    rewriteAmxTileProducts(**module);
  std::error_code ec;
  llvm::raw_fd_ostream out(objectPath, ec, llvm::sys::fs::OF_None);
  if (ec)
    return failure(objectPath + ": cannot write: " + ec.message());
  llvm::legacy::PassManager passes;
  if (machine->addPassesToEmitFile(passes, out, nullptr, llvm::CodeGenFileType::ObjectFile))
    return bitcodeFailure(bitcodePath, "LLVM cannot emit object code for " + triple.str());
  passes.run(**module);
  out.flush();
  if (out.has_error())
    return failure(objectPath + ": cannot write: " +
                                                    out.error().message());
  return llvm::Error::success();
}
