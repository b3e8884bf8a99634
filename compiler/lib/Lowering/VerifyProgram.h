//===- VerifyProgram.h - A lowered model checked against itself -*- C++ -*-===//
//
// The generated driver trusts the Program it is written from: it builds
// every buffer at the offset and with the shape the IR planned, sizes the
// KV cache and the arena as the module says, and hands the caller's logits
// (vocab_size floats a row) to the kernel that writes them. IR from a file
// is untrusted, and a pipeline named with --pass-pipeline need not plan
// memory at all, so every Program is checked as a whole before anything is
// written, and each refusal names both values that disagree.
//
//===----------------------------------------------------------------------===//
#ifndef TFM_LOWERING_VERIFYPROGRAM_H
#define TFM_LOWERING_VERIFYPROGRAM_H

#include "tfm/Program/Program.h"

#include "llvm/Support/Error.h"

namespace tfm {

/// Checks, with overflow-checked arithmetic:
///  - the context, vocabulary and prefill chunk are in range (the chunk in
///    [1, context]) and agree with the config the module carries;
///  - every weight and cache is indexable by the kernels (int32 element
///    offsets), every cache has the context's rows, lies inside the KV-cache
///    block and overlaps no other;
///  - every kernel holds at most kMaxKernelOps ops;
///  - every launch binds each parameter to storage of its shape and type:
///    weights and token ids only read, arena values inside the entry's
///    arena, the logits of vocab_size columns, one row for prefill and
///    decode and every row for score, written by exactly one launch;
///  - every arena value a launch reads is one a previous launch wrote there
///    whole and no launch overwrote since, and no launch's outputs overlap
///    its own arena inputs or each other.
llvm::Error verifyProgram(const Program &program);

} // namespace tfm

#endif // TFM_LOWERING_VERIFYPROGRAM_H
