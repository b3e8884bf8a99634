//===- KernelAnchors.cpp - What each output of a kernel is built around ---===//
#include "KernelAnchors.h"

#include "../OpRegistry.h"

using namespace tfm::kernels;

namespace {

void collectAnchors(KernelAlgorithm &a, int index, Anchors &out, bool acrossTiles = false) {
  Value &v = a.values[index];
  if (!v.op)
    return;
  switch (opRecord(v.op->kind()).placement) {
  case Placement::Projection:
    out.linears.insert(index);
    if (acrossTiles)
      out.computedAlone.insert(index);
    return;
  case Placement::Attention:
    out.attention = index;
    return;
  case Placement::RowNormalization:
  case Placement::Gather:
    return; // materialised or gathered on their own
  case Placement::Inline:
    break;
  }
  for (int operand : v.op->operands)
    collectAnchors(a, operand, out, acrossTiles || v.readsOtherColumns);
}

} // namespace

KernelAnchors tfm::kernels::findAnchors(KernelAlgorithm &a) {
  KernelAnchors k;
  k.perOutput.resize(a.outputs.size());
  for (size_t i = 0; i < a.outputs.size(); ++i) {
    collectAnchors(a, a.outputValues[i], k.perOutput[i]);
    for (int index : k.perOutput[i].linears)
      k.readers[index] += k.perOutput[i].computedAlone.count(index) ? 2 : 1;
  }
  return k;
}
