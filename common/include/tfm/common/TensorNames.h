//===- TensorNames.h - The one table of weight tensor names -----*- C++ -*-===//
//
// Every weight tensor of a model has a role (the attention's q projection,
// the FFN norm, ...). One table names each role in every convention tfm
// meets, and everything that names tensors reads it:
//   - manifests, GGUF files and the tfm IR use llama.cpp's names
//     ("blk.3.attn_q.weight"); modelTensors() lists a config's tensors in
//     that order with their shapes (the builder and tfm-weights);
//   - the outliner names kernels after the roles of the weights they read;
//   - Hugging Face safetensors name the transformers modules, in layouts
//     that differ from the manifest's:
//       GPT-2's Conv1D stores its weight [in, out], the transpose of the
//       manifest's [out, in] (c_attn, attn.c_proj, c_fc, mlp.c_proj);
//       Llama's q_proj and k_proj rows are ordered for "rotate_half" RoPE,
//       which rotates the two halves of each head; tfm (like llama.cpp and
//       llama2.c) rotates Llama's interleaved pairs, so the rows are
//       permuted; BLOOM, GPT-NeoX and Falcon fuse q, k and v per kv head,
//       where the manifest (like llama.cpp's converters) keeps all q rows,
//       then all k rows, then all v rows;
//   - llama2.c checkpoints store the roles in a fixed order, one role at a
//     time across layers.
//
//===----------------------------------------------------------------------===//
#ifndef TFM_COMMON_TENSORNAMES_H
#define TFM_COMMON_TENSORNAMES_H

#include "tfm/common/ModelSpec.h"

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace tfm {

enum class TensorRole {
  TokenEmbedding,
  PositionEmbedding,
  TokenTypes,
  TokenEmbeddingNorm,
  AttnNorm,
  AttnNorm2,
  AttnQ,
  AttnK,
  AttnV,
  AttnQkv,
  AttnQNorm,
  AttnKNorm,
  AttnOutput,
  AttnPostNorm,
  AttnOutputNorm,
  FfnNorm,
  FfnGate,
  FfnUp,
  FfnDown,
  FfnPostNorm,
  LayerOutputNorm,
  AttnRelBias,     // T5's relative position bias table, [buckets, heads]
  CrossAttnNorm,   // an encoder-decoder's cross-attention: its norm,
  CrossAttnQ,      // its q from the decoder's rows,
  CrossAttnK,      // its k and v from the encoder's output,
  CrossAttnV,
  CrossAttnOutput, // and its output projection
  OutputNorm,
  Output,
};

/// Which stack of layers a tensor belongs to: a decoder-only or encoder-only
/// model's one ("blk.N."), or an encoder-decoder's encoder ("enc.blk.N.",
/// "enc.output_norm") or decoder ("dec.blk.N.", "dec.output_norm").
enum class Stack { Only, Encoder, Decoder };

enum class TensorPart { Weight, Bias };

/// One tensor: its role, its layer (-1 outside the layers), part and stack.
struct TensorId {
  TensorRole role;
  int64_t layer = -1;
  TensorPart part = TensorPart::Weight;
  Stack stack = Stack::Only;

  /// The manifest (llama.cpp) name, "blk.3.attn_q.weight".
  std::string name() const;
};

/// The inverse of TensorId::name; nullopt for a name the table lacks.
std::optional<TensorId> parseTensorName(llvm::StringRef name);

/// The role's stem in manifest names ("attn_q") and whether it is per layer.
llvm::StringRef roleStem(TensorRole role);
bool isLayerRole(TensorRole role);

/// The kernel that reads a projection of this role, for kernel names:
/// "attn_in" (q, k, v, qkv), "attn_out", "ffn_in" (gate, up), "ffn_out",
/// "logits" (the output head, or the tied token embedding as a projection).
llvm::StringRef kernelRoleOf(TensorRole role);

struct ModelTensor {
  TensorId id;
  std::string name;
  std::vector<int64_t> shape; // row-major; matrices [out, in]
};

/// A tensor of a GGUF that no kernel reads, since the compiled RoPE tables
/// hold its values: llama.cpp's RoPE frequency factors. A file's must equal
/// the ModelSpec list `factors` (none: the tensor absent).
struct RopeFactorTensor {
  const char *name;
  std::vector<double> ModelSpec::*factors;
  const char *what;
};
llvm::ArrayRef<RopeFactorTensor> ropeFactorTensors();

/// Every weight of `spec`'s model in manifest (and GGUF file) order: the
/// embeddings (and their norm), then per layer its norms and projections,
/// then the final norm and, for an untied head, the output projection.
std::vector<ModelTensor> modelTensors(const ModelSpec &spec);

/// The roles of the norms of the attention and the feed-forward (in front of
/// them, or after their residual adds in post-LN blocks): attn_norm and
/// ffn_norm, except in a Falcon parallel block with two norms, where
/// llama.cpp names the attention's attn_norm_2 (Falcon's ln_attn) and the
/// feed-forward's attn_norm (ln_mlp), and in BERT's blocks, where it names
/// them attn_output_norm and layer_output_norm.
TensorRole attnNormRole(const ModelSpec &spec);

/// Gemma's norm weights: Hugging Face's files store w (the gain is 1 + w),
/// GGUF files the gain itself (llama.cpp's converter adds the 1), and the
/// kernels read gain - spec.normWeightOffset. What a file (a GGUF or not)
/// stores minus what the kernels read for tensor `manifestName`; 0 for
/// every other tensor and family.
double storedMinusRead(const ModelSpec &spec, llvm::StringRef manifestName, bool gguf);
TensorRole ffnNormRole(const ModelSpec &spec);

/// The per-layer roles of a llama2.c checkpoint in file order; the token
/// embedding precedes them, the final norm (then two unused RoPE tables and
/// an untied head) follows.
llvm::ArrayRef<TensorRole> llama2cLayerOrder();

/// How a Hugging Face tensor's data relates to the manifest tensor's.
enum class HfLayout {
  Same,
  Transposed,   // a 2-D matrix stored [in, out]
  RopePermuted, // q or k rows in rotate-half order; see hfRow
  QkvGrouped,   // fused q/k/v rows grouped by kv head; see hfRow
  RowVector     // a vector stored as a [1, N] matrix (Marian's final_logits_bias)
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
llvm::Expected<HfTensorName> hfTensorName(const ModelSpec &config, llvm::StringRef manifestName);

/// For a tensor whose rows Hugging Face orders differently: the Hugging Face
/// row that holds manifest row `manifestRow`.
///  - RopePermuted (Llama's q_proj, k_proj): within the first rotary_dim rows
///    of each head, manifest row 2*i + j (the j-th element of rotation pair
///    i) is row j*rotary_dim/2 + i; the rest of the head keeps its order.
///  - QkvGrouped (BLOOM, GPT-NeoX, Falcon): the manifest's [q | k | v] rows
///    lie per kv head g as [q heads of g | k_g | v_g], head_dim rows each.
/// Any other layout keeps the rows.
int64_t hfRow(HfLayout layout, int64_t manifestRow, const ModelSpec &spec);

} // namespace tfm

#endif // TFM_COMMON_TENSORNAMES_H
