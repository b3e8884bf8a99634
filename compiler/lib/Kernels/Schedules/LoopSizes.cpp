//===- LoopSizes.cpp - Loop sizes that divide a kernel's extents ----------===//
#include "LoopSizes.h"

#include <algorithm>

int tfm::kernels::lanesDividing(int n, int lanes) {
  while (lanes > 1 && n % lanes != 0)
    lanes /= 2;
  return lanes;
}

int tfm::kernels::divisorAtMost(int n, int limit) {
  for (int d = std::min(n, limit); d > 1; --d)
    if (n % d == 0)
      return d;
  return 1;
}
