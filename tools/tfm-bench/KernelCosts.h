//===- KernelCosts.h - The work of one call of a kernel ---------*- C++ -*-===//
//
// What one call of a compiled kernel must do at least: its FLOPs and the
// bytes it must read (weights in the type the kernel reads them, the KV
// cache). Held against the roofline, they say how near a schedule is to
// what this machine allows. The kernel is known by its name, which tfmc
// forms from the entry and the role of what it computes
// ("prefill_attn_in", "decode_ffn_out_1"; tfm/common/TensorNames.h).
//
//===----------------------------------------------------------------------===//
#ifndef TFM_BENCH_KERNELCOSTS_H
#define TFM_BENCH_KERNELCOSTS_H

#include "tfm/common/Manifest.h"
#include "tfm/common/model_abi.h"

#include <optional>
#include <string>

namespace tfm::bench {

struct CallCost {
  double flops = 0;
  double bytes = 0;
  double rows = 1; // token rows the call computes (decode's and prefill's logits: one)
};

/// Where the calls happen: a prefill of `promptTokens`, then decode steps at
/// a depth of `decodeDepth` tokens on average.
struct CallSite {
  int promptTokens = 128;
  int decodeDepth = 160;
};

/// The cost of one call of `kernel`; nothing for a kernel whose name says
/// no role this knows.
std::optional<CallCost> kernelCallCost(const std::string &kernel, const Manifest &manifest,
                                       const tfm_model &model, const CallSite &site);

} // namespace tfm::bench

#endif // TFM_BENCH_KERNELCOSTS_H
