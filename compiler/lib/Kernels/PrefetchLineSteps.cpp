//===- PrefetchLineSteps.cpp - Split prefetches stepped a line at a time ---===//
#include "PrefetchLineSteps.h"

using namespace Halide;
using namespace Halide::Internal;
using tfm::kernels::PrefetchLineSteps;

Stmt PrefetchLineSteps::visit(const For *loop) {
  if (!starts_with(loop->name, "prefetch_split_"))
    return IRMutator::visit(loop);
  splitLoops.push_back(loop->name);
  Stmt result = IRMutator::visit(loop);
  splitLoops.pop_back();
  return result;
}

Expr PrefetchLineSteps::visit(const Call *call) {
  int elementBytes = call->type.bytes();
  if (!call->is_intrinsic(Call::prefetch) || splitLoops.empty() || elementBytes == 1)
    return IRMutator::visit(call);
  // The offset is linear in each split loop's variable (the final
  // simplification may have folded it into a product): its step is the
  // difference between two iterations, a whole number of elements times
  // their size.
  Expr offset = call->args[1];
  for (const std::string &name : splitLoops) {
    Expr first = simplify(substitute(name, 0, offset));
    Expr stepBytes = simplify(substitute(name, 1, offset) - first);
    offset = first + Variable::make(Int(32), name) * simplify(stepBytes / elementBytes);
  }
  std::vector<Expr> args = call->args;
  args[1] = simplify(offset);
  return Call::make(call->type, Call::prefetch, args, Call::Intrinsic);
}
