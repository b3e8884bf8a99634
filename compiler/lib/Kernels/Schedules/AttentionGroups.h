//===- AttentionGroups.h - The heads of a KV group read together -*- C++ -*-===//
//
// Grouped-query attention: the heads of a KV group read the same keys and
// values. A schedule that puts the group's heads in one task (a CPU task,
// a GPU block) orders the stages that read the cache so that each key or
// value element is loaded once for all of them. The CPU's and the GPU's
// attention schedules share it.
//
//===----------------------------------------------------------------------===//
#ifndef TFM_KERNELS_SCHEDULES_ATTENTIONGROUPS_H
#define TFM_KERNELS_SCHEDULES_ATTENTIONGROUPS_H

#include "../KernelAlgorithm.h"

#include <vector>

namespace tfm::kernels {

/// Orders an attention stage's loops as `loops`, innermost first. With
/// `shareGroup` the heads of a KV group go among them, unrolled, at index
/// `groupAt`: right outside a CPU's vector loop (1), or innermost on a GPU
/// thread (0). Each key or value element the loops inside them read is
/// then loaded once for all the group's heads.
void orderSharingGroup(Halide::Stage stage, const AttentionFuncs &at, bool shareGroup,
                       std::vector<Halide::VarOrRVar> loops, size_t groupAt = 1);

} // namespace tfm::kernels

#endif // TFM_KERNELS_SCHEDULES_ATTENTIONGROUPS_H
