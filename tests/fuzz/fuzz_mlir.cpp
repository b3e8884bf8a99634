//===- fuzz_mlir.cpp - tfm IR through the front end of tfmc ----------------===//
//
// Any bytes as a .mlir file tfmc is handed: parsed, verified, run through
// the default pass pipeline, read into a Program and checked as a whole
// (lowerMlirText), with no code generated. A refusal must keep the promise
// every message keeps (FuzzSupport.h); what is accepted must be a Program
// the driver can trust: verifyProgram passed it, and its names are C
// identifiers.
//
//===----------------------------------------------------------------------===//
#include "FuzzSupport.h"
#include "tfm/Lowering/LowerToProgram.h"
#include "tfm/common/Identifier.h"

using namespace tfm;

extern "C" int LLVMFuzzerInitialize(int *, char ***) { return 0; }

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  llvm::StringRef text(reinterpret_cast<const char *>(data), size);
  LoweringOptions options;
  options.target = "x86-64-linux-sse41-avx-f16c-fma-avx2"; // never this machine's: the same
  options.tuningFile = "";                                  // result everywhere
  llvm::Expected<Program> program = lowerMlirText(text, "model.mlir", options);
  if (!program)
    return fuzz::checkMessage(program.takeError());
  if (!isBoundedIdentifier(program->name))
    fuzz::propertyFailed("an accepted module is named '" + program->name + "'");
  for (const Kernel &k : program->kernels)
    if (!isBoundedIdentifier(k.name) || k.ops.size() > kMaxKernelOps)
      fuzz::propertyFailed("an accepted kernel is named '" + k.name + "' with " +
                           std::to_string(k.ops.size()) + " ops");
  return 0;
}
