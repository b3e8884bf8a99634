//===- Threads.cpp - One GPU thread per point -----------------------------===//
#include "Gpu.h"

#include <stdexcept>

using namespace Halide;

namespace tfm::kernels::gpu {

void threadPerPoint(Stage stage, std::vector<Var> vars, int threads) {
  // Halide's GPU loops are at most three deep.
  while (vars.size() > 3) {
    Var fused(vars[vars.size() - 2].name() + "_" + vars.back().name());
    stage.fuse(vars[vars.size() - 2], vars.back(), fused);
    vars.pop_back();
    vars.back() = fused;
  }
  Var block(vars[0].name() + "_block"), thread(vars[0].name() + "_thread");
  stage.split(vars[0], block, thread, threads, TailStrategy::GuardWithIf).gpu_threads(thread);
  if (vars.size() == 1)
    stage.gpu_blocks(block);
  else if (vars.size() == 2)
    stage.gpu_blocks(block, vars[1]);
  else
    stage.gpu_blocks(block, vars[1], vars[2]);
}

void threadPerPoint(Func f, int threads) {
  threadPerPoint(Stage(f), f.args(), threads);
  for (int i = 0; i < f.num_update_definitions(); ++i)
    threadPerPoint(f.update(i), f.args(), threads);
}

int constantExtent(const RVar &r) {
  const int64_t *extent = Internal::as_const_int(r.extent());
  if (!extent)
    throw std::runtime_error("reduction " + r.name() + " has no constant extent");
  return static_cast<int>(*extent);
}

} // namespace tfm::kernels::gpu
