//===- KernelObject.h - Kernel bitcode to object code, by LLVM 22 -*- C++ -*-===//
//
// Halide lowers, vectorises and optimises a kernel and writes LLVM bitcode;
// LLVM 22 turns that bitcode into machine code for exactly the CPU features
// the target string names (tfm/common/Targets.h), after one rewrite of its
// own: f16 widened by the CPU's instruction (HalfWidening.h). Halide 14's
// own back end compiles for a named CPU instead: its avx512_sapphirerapids
// feature selects LLVM 14's "sapphirerapids", which brings AVX512-FP16 and
// AMX with it, so the AVX-512 VNNI and BF16 dot products that AMD's Zen 4
// has too could not be used there. Here the instruction selector sees no
// feature the target string does not name, and fails rather than emit one.
//
//===----------------------------------------------------------------------===//
#ifndef TFM_CODEGEN_KERNELOBJECT_H
#define TFM_CODEGEN_KERNELOBJECT_H

#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"

namespace tfm {

/// Compiles the bitcode file `bitcodePath` (Halide's, for `target`, an
/// explicit target string) into the object file `objectPath`.
llvm::Error compileKernelBitcode(llvm::StringRef bitcodePath, llvm::StringRef target,
                                 llvm::StringRef objectPath);

} // namespace tfm

#endif // TFM_CODEGEN_KERNELOBJECT_H
