//===- KernelAnchors.h - What each output of a kernel is built around ---*- C++ -*-===//
//
// Every schedule that fuses a kernel's elementwise ops into its outputs
// (the CPU's and the GPU's) first finds, for each output, the ops it reads
// that need a placement of their own: its projections and its attention,
// reached through the inlined ops between them and the output.
//
//===----------------------------------------------------------------------===//
#ifndef TFM_KERNELS_SCHEDULES_KERNELANCHORS_H
#define TFM_KERNELS_SCHEDULES_KERNELANCHORS_H

#include "../KernelAlgorithm.h"

#include <map>
#include <set>
#include <vector>

namespace tfm::kernels {

/// Ops reached from an output through inlined elementwise ops that need a
/// placement of their own.
struct Anchors {
  std::set<int> linears;
  std::set<int> computedAlone; // linears read across tiles (readsOtherColumns)
  int attention = -1;
};

/// Each output's anchors, and how many outputs read each linear (one read
/// across tiles counts as two: such a linear is computed on its own).
struct KernelAnchors {
  std::vector<Anchors> perOutput;
  std::map<int, int> readers;

  /// Whether linear `index` is computed on its own rather than inside the
  /// one output that reads it.
  bool computedAlone(int index) const { return readers.at(index) >= 2; }
};

KernelAnchors findAnchors(KernelAlgorithm &a);

/// A value of one row: decode, or the last row of a prefill. Cache outputs
/// are judged by the value written, not by the cache's shape.
inline bool isSingleRow(const Value &v) { return v.shape.size() == 2 && v.shape[0] == 1; }

} // namespace tfm::kernels

#endif // TFM_KERNELS_SCHEDULES_KERNELANCHORS_H
