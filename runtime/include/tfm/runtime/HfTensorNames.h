//===- HfTensorNames.h - Hugging Face names of manifest tensors -*- C++ -*-===//
//
// Manifests (and GGUF files) use llama.cpp's tensor names; Hugging Face
// safetensors use the names of the transformers modules, and two layouts
// that differ from the manifest's:
//   - GPT-2's Conv1D stores its weight [in, out], the transpose of the
//     manifest's [out, in] (c_attn, attn.c_proj, c_fc, mlp.c_proj);
//   - Llama's q_proj and k_proj rows are ordered for "rotate_half" RoPE,
//     which rotates the two halves of each head; tfm (like llama.cpp and
//     llama2.c) rotates interleaved pairs, so the rows are permuted.
// One table serves both directions: the loader looks up the Hugging Face
// name of each manifest tensor, tfm-weights writes under it.
//
//===----------------------------------------------------------------------===//
#ifndef TFM_RUNTIME_HFTENSORNAMES_H
#define TFM_RUNTIME_HFTENSORNAMES_H

#include "tfm/Config/ModelSpec.h"

#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"

#include <cstdint>
#include <string>
#include <vector>

namespace tfm::rt {

/// How a Hugging Face tensor's data relates to the manifest tensor's.
enum class HfLayout {
  Same,
  Transposed,  // a 2-D matrix stored [in, out]
  RopePermuted // rows in rotate-half order; see ropeHfRow
};

struct HfTensorName {
  /// The names a file may use, the canonical one (which tfm-weights
  /// writes) first; GPT-2 checkpoints saved from GPT2LMHeadModel add a
  /// "transformer." prefix.
  std::vector<std::string> names;
  HfLayout layout = HfLayout::Same;
};

/// The Hugging Face name of manifest tensor `manifestName` in a model of
/// `config.family`; an error names the tensor and family when the table
/// has no entry for it.
llvm::Expected<HfTensorName> hfTensorName(const ModelSpec &config,
                                          llvm::StringRef manifestName);

/// For a RopePermuted tensor: the Hugging Face row that holds manifest row
/// `manifestRow`. Within each head of `headDim` rows, manifest row 2*i + j
/// (the j-th element of rotation pair i) is Hugging Face row j*headDim/2 + i.
int64_t ropeHfRow(int64_t manifestRow, int64_t headDim);

} // namespace tfm::rt

#endif // TFM_RUNTIME_HFTENSORNAMES_H
