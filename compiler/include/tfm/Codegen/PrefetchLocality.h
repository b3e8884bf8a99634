//===- PrefetchLocality.h - Prefetches into every cache level ----*- C++ -*-===//
//
// Halide 14's runtime issues every scheduled prefetch with locality 0 (no
// temporal locality), which x86 encodes as prefetchnta. The fast schedule
// prefetches a matrix-vector product's weights a few KiB ahead of its reads
// (Schedules/CpuFast/Loops.cpp, prefetchWeightAhead). On an Intel Sapphire Rapids VM
// the 110M Llama's q8_0 decode ran at 80 tok/s with those prefetches as
// prefetchnta, 134 with none and 195 with prefetcht0, and a C loop over the
// same weights slowed down with prefetchnta too (perf put the time on the
// prefetches themselves). The back end therefore gives each prefetch the
// highest locality (prefetcht0; AArch64's PLDL1KEEP).
//
//===----------------------------------------------------------------------===//
#ifndef TFM_CODEGEN_PREFETCHLOCALITY_H
#define TFM_CODEGEN_PREFETCHLOCALITY_H

namespace llvm {
class Module;
} // namespace llvm

namespace tfm {

/// Sets the locality of every llvm.prefetch in `module` to 3 (keep in all
/// cache levels); returns how many it changed.
int prefetchIntoAllCacheLevels(llvm::Module &module);

} // namespace tfm

#endif // TFM_CODEGEN_PREFETCHLOCALITY_H
