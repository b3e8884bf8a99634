//===- JitModule.h - An IR module run on this CPU, for tests ----*- C++ -*-===//
//
// The back end's rewrites (HalfWidening, AmxTileProducts) are tested by
// compiling a module before and after the rewrite with LLVM 22's JIT, for
// this CPU and its features, and comparing what the two compute.
//
//===----------------------------------------------------------------------===//
#ifndef TFM_CODEGEN_JITMODULE_H
#define TFM_CODEGEN_JITMODULE_H

#include "llvm/ExecutionEngine/Orc/LLJIT.h"
#include "llvm/IR/LLVMContext.h"
#include "llvm/IR/Module.h"
#include "llvm/Support/TargetSelect.h"

#include <gtest/gtest.h>

#include <memory>

namespace tfm::testing {

class JitModule {
public:
  JitModule(std::unique_ptr<llvm::Module> module, std::unique_ptr<llvm::LLVMContext> context) {
    llvm::InitializeNativeTarget();
    llvm::InitializeNativeTargetAsmPrinter();
    auto created = llvm::orc::LLJITBuilder().create();
    if (!created) {
      ADD_FAILURE() << llvm::toString(created.takeError());
      return;
    }
    jit = std::move(*created);
    llvm::cantFail(jit->addIRModule(
        llvm::orc::ThreadSafeModule(std::move(module), std::move(context))));
  }
  /// The compiled function `name`, as a pointer of type F.
  template <typename F> F lookup(llvm::StringRef name) {
    return llvm::cantFail(jit->lookup(name)).toPtr<F>();
  }

private:
  std::unique_ptr<llvm::orc::LLJIT> jit;
};

} // namespace tfm::testing

#endif // TFM_CODEGEN_JITMODULE_H
