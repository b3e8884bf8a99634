//===- Llama2cCheckpoint.h - Bind a llama2.c .bin to a manifest -*- C++ -*-===//
//
// A llama2.c checkpoint is a 7-int32 header (dim, hidden_dim, n_layers,
// n_heads, n_kv_heads, vocab_size, seq_len; a negative vocab_size means an
// untied output head) followed by f32 tensors in a fixed order. Every header
// field is checked against the compiled config and every tensor's byte range
// against the file before anything runs.
//
// The checkpoint's seq_len only sizes the RoPE tables llama2.c stores (and
// tfm skips: the generated code computes its own), so it may differ from the
// compiled context length; generation is bounded by the compiled one.
//
//===----------------------------------------------------------------------===//
#ifndef TFM_RUNTIME_LLAMA2CCHECKPOINT_H
#define TFM_RUNTIME_LLAMA2CCHECKPOINT_H

#include "tfm/runtime/BoundWeights.h"
#include "tfm/runtime/WeightFileBytes.h"
#include "tfm/common/Manifest.h"

#include "llvm/Support/Error.h"

#include <string>

namespace tfm::rt {

/// Maps (or, `Resident`, reads) `path` and points each manifest tensor at
/// its data in the file.
llvm::Expected<BoundWeights> bindLlama2cCheckpoint(const std::string &path,
                                                   const Manifest &manifest,
                                                   WeightMemory memory = WeightMemory::Mapped);

} // namespace tfm::rt

#endif // TFM_RUNTIME_LLAMA2CCHECKPOINT_H
