//===- LogitsCheck.h - Whether two compilations compute the same -*- C++ -*-===//
//
// The logits of one fixed run (a prefill of a pseudo-random prompt, then
// decode steps) of a compiled model, and their distance from another's.
// tfm-bench checks each schedule against plain with it (--config), and each
// model folder against a reference folder (--reference: a GPU library
// against the CPU library of the same config).
//
//===----------------------------------------------------------------------===//
#ifndef TFM_BENCH_LOGITSCHECK_H
#define TFM_BENCH_LOGITSCHECK_H

#include "tfm/common/Manifest.h"

#include "llvm/Support/Error.h"

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace tfm::bench {

/// The prompt of every timed run and check: `tokens` pseudo-random ids.
std::vector<int32_t> benchPrompt(int tokens, uint32_t vocab);

/// The logits of a prefill of benchPrompt(promptTokens) and of decode steps
/// after it, run by the library in `dir` with `weights` (a GPU library on
/// `device` when given).
llvm::Expected<std::vector<float>> checkLogits(const std::string &dir, const std::string &weights,
                                               int promptTokens,
                                               std::optional<int> device = std::nullopt);

/// The largest difference of `got` from `want`, relative to the largest
/// magnitude in `want`.
double relativeDifference(const std::vector<float> &got, const std::vector<float> &want);

/// The largest relativeDifference at which a compilation of `manifest`
/// still computes the same as another (reassociated sums, rounded inputs).
double checkTolerance(const tfm::Manifest &manifest);

} // namespace tfm::bench

#endif // TFM_BENCH_LOGITSCHECK_H
