//===- Llama2cWriter.h - Weights in llama2.c's checkpoint format -*- C++ -*-===//
//
// The legacy llama2.c layout (export.py's legacy_export, read by run.c):
// a header of 7 int32 (dim, hidden_dim, n_layers, n_heads, n_kv_heads,
// vocab_size, seq_len; vocab_size is negative when the output head is
// untied), then f32 tensors grouped by kind across layers: token embeddings,
// all attention norms, all wq, all wk, all wv, all wo, all ffn norms, all w1
// (gate), all w2 (down), all w3 (up), the final norm, the RoPE tables
// freq_cis_real and freq_cis_imag [seq_len, head_dim/2], and wcls when untied.
//
//===----------------------------------------------------------------------===//
#ifndef TFM_WEIGHTS_LLAMA2CWRITER_H
#define TFM_WEIGHTS_LLAMA2CWRITER_H

#include "WeightTensors.h"

#include <cstdint>
#include <string>
#include <vector>

namespace llvm {
class raw_fd_ostream;
}

namespace tfm {

/// Why `spec` cannot be written in this format, or "" when it can. The
/// header has no head_dim field: readers assume dim / n_heads.
std::string llama2cUnsupportedReason(const ModelSpec &spec, const std::string &configPath);

/// Size in bytes of the file writeLlama2c produces for `spec`.
uint64_t llama2cFileBytes(const ModelSpec &spec, const std::vector<WeightTensor> &tensors);

/// Writes the checkpoint of `spec` with the values of `tensors` (as listed by
/// weightTensors) drawn from `seed`. Returns "" or what went wrong.
std::string writeLlama2c(const ModelSpec &spec, const std::vector<WeightTensor> &tensors,
                         uint64_t seed, llvm::raw_fd_ostream &os);

} // namespace tfm

#endif // TFM_WEIGHTS_LLAMA2CWRITER_H
