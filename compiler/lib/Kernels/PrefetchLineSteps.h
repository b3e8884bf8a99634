//===- PrefetchLineSteps.h - Split prefetches stepped a line at a time -----===//
//
// Halide 14 splits a prefetched region wider than a cache line into a loop
// of one prefetch per 64 bytes (SplitPrefetch in its Prefetch.cpp), but
// adds the loop's step to an offset counted in elements, not bytes: the
// prefetches of a region of f32 elements land 256 bytes apart, and reach
// one line in four of it. Decode attention prefetches each key's row of
// values for a head this way (Schedules/CpuFast/Attention.cpp), 256 bytes
// of f32 or 128 of f16, and so fetched only its first line ahead of the mix.
//
//===----------------------------------------------------------------------===//
#ifndef TFM_KERNELS_PREFETCHLINESTEPS_H
#define TFM_KERNELS_PREFETCHLINESTEPS_H

#include "Halide.h"

namespace tfm::kernels {

/// A custom lowering pass (Pipeline::add_custom_lowering_pass) that makes
/// each loop Halide 14 wrapped around a split prefetch step its offset by
/// the bytes it meant, in elements: prefetches of elements of 2 or more
/// bytes then reach every line of their region.
class PrefetchLineSteps : public Halide::Internal::IRMutator {
  using IRMutator::visit;
  std::vector<std::string> splitLoops; // the enclosing prefetch_split_ loops
  Halide::Internal::Stmt visit(const Halide::Internal::For *loop) override;
  Halide::Expr visit(const Halide::Internal::Call *call) override;
};

} // namespace tfm::kernels

#endif // TFM_KERNELS_PREFETCHLINESTEPS_H
