//===- KernelCosts.cpp - The work of one call of a kernel -----------------===//
//
// A projection kernel reads each of its weights once per call and does two
// FLOPs per weight per row; the rows are the call's tokens (one in decode,
// the prompt in prefill up to the chunk), except for the head, which
// prefill runs on its last row only. Attention reads the keys and values of
// every position a row attends to and does two FLOPs per element of each
// (q.k, then weights.v). The embedding gathers one row per token.
//
//===----------------------------------------------------------------------===//
#include "KernelCosts.h"

#include "llvm/ADT/StringRef.h"

#include <algorithm>
#include <map>

using namespace tfm;
using namespace tfm::bench;

namespace {

/// "decode_ffn_out_1" -> ("decode", "ffn_out").
std::pair<llvm::StringRef, llvm::StringRef> entryAndRole(llvm::StringRef kernel) {
  auto [entry, role] = kernel.split('_');
  size_t last = role.rfind('_');
  if (last != llvm::StringRef::npos && !role.substr(last + 1).empty() &&
      llvm::all_of(role.substr(last + 1), [](char c) { return c >= '0' && c <= '9'; }))
    role = role.take_front(last);
  return {entry, role};
}

} // namespace

std::optional<CallCost> tfm::bench::kernelCallCost(const std::string &kernel,
                                                   const Manifest &manifest, const tfm_model &model,
                                                   const CallSite &site) {
  auto [entry, role] = entryAndRole(kernel);
  const KernelSchedule *record = nullptr;
  for (const KernelSchedule &k : manifest.kernels)
    if (k.kernel == kernel)
      record = &k;
  if (!record)
    return std::nullopt;
  const ModelSpec &spec = manifest.config;
  bool decode = entry == "decode";
  double rows = decode ? 1 : std::min<double>(site.promptTokens, model.prefill_chunk);

  CallCost cost;
  cost.rows = rows;
  if (role == "attention") {
    // Prefill from position 0: row r attends to r + 1 keys.
    double keysPerRow = decode ? site.decodeDepth : (rows + 1) / 2;
    double keysRead = decode ? site.decodeDepth : rows;
    double kvDim = double(spec.nKvHeads * spec.headDim);
    double cacheElementBytes =
        double(model.kv_cache_bytes) / (2.0 * spec.nLayers * double(model.context_length) * kvDim);
    cost.flops = 4.0 * double(spec.nHeads * spec.headDim) * keysPerRow * rows;
    cost.bytes = 2.0 * kvDim * keysRead * cacheElementBytes;
    return cost;
  }
  std::map<std::string, const TensorSpec *> tensors;
  for (const TensorSpec &t : manifest.tensors)
    tensors[t.name] = &t;
  if (role == "embedding") {
    for (const std::string &name : record->weights)
      if (const TensorSpec *t = tensors[name]; t && t->shape.size() == 2)
        cost.bytes += rows * double(t->byteCount()) / double(t->shape[0]); // one row a token
    return cost;
  }
  if (role == "logits" && entry == "prefill")
    cost.rows = rows = 1;
  bool found = false;
  for (const std::string &name : record->weights) {
    const TensorSpec *t = tensors[name];
    if (!t)
      continue;
    found = true;
    cost.bytes += double(t->byteCount());
    if (t->shape.size() == 2)
      cost.flops += 2.0 * rows * double(t->elementCount());
  }
  if (!found)
    return std::nullopt;
  return cost;
}
