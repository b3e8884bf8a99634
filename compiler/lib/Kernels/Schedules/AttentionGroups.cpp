//===- AttentionGroups.cpp - The heads of a KV group read together --------===//
#include "AttentionGroups.h"

using namespace Halide;

void tfm::kernels::orderSharingGroup(Stage stage, const AttentionFuncs &at, bool shareGroup,
                                     std::vector<VarOrRVar> loops, size_t groupAt) {
  if (shareGroup) {
    Var kvHead("kv_head"), inGroup("in_group");
    stage.split(at.h, kvHead, inGroup, at.groupSize, TailStrategy::GuardWithIf).unroll(inGroup);
    loops.insert(loops.begin() + groupAt, inGroup);
  }
  stage.reorder(loops);
}
