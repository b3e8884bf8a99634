//===- WeightFileType.h - What a file type means for each tensor -*- C++ -*-===//
//
// The type a user asks a weight file to be written in (tfm-weights --dtype,
// tfm-quantize --type) and the element encoding it gives each tensor:
//
//   f32, f16, bf16        every matrix in that type, vectors (norms,
//                         biases) in f32, as llama.cpp's converters write
//                         GGUF files (ggml refuses an f16 norm weight);
//   q8_0 ... q6_k         every matrix in that block format, the rest
//                         (norms, biases, learned positions) in f32, as
//                         llama.cpp quantizes;
//   q4_k_m, q5_k_m        llama.cpp's mixes of those names: q4_K (q5_K) for
//                         most matrices; q6_K for the output head (the tied
//                         embedding when there is none) and, in the layers
//                         llama.cpp gives more bits (the first and last
//                         eighth, and every third between), for attn_v and
//                         ffn_down; a fused attn_qkv one step up.
//
// A matrix whose rows do not hold whole blocks falls back, as llama.cpp's
// do, to a format whose blocks fit: q8_0 for the k-quants when rows hold
// blocks of 32, else f16 (llama.cpp steps from q4_K to q5_0, which tfm
// lacks, and refuses q8_0 and q4_0 outright).
//
//===----------------------------------------------------------------------===//
#ifndef TFM_COMMON_WEIGHTFILETYPE_H
#define TFM_COMMON_WEIGHTFILETYPE_H

#include "tfm/common/ElementEncoding.h"
#include "tfm/common/ModelSpec.h"

#include "llvm/Support/Error.h"

#include <map>
#include <optional>
#include <string>
#include <vector>

namespace tfm {

struct WeightFileType {
  std::string name;         // as given: "q4_k_m"
  ElementEncoding matrices; // the encoding of most matrices
  bool kQuantMix = false;   // q4_k_m, q5_k_m

  /// llama.cpp's general.file_type (LLAMA_FTYPE_*), which GGUF files
  /// record; none for q4_k and q5_k, which llama.cpp only writes as mixes.
  std::optional<uint32_t> llamaFileType() const;
};

/// The names parseWeightFileType takes, for messages.
extern const char *const kWeightFileTypeNames;
std::optional<WeightFileType> parseWeightFileType(const std::string &name);

/// The encoding of tensor `name` of `shape` in a file of `type` for a model
/// of `nLayers` layers whose output head is `tiedHead` (the token embedding).
/// A fallback (the encoding returned is then not the type's) sets `fallback`
/// to why, naming the tensor, its row length and the block it lacks.
ElementEncoding tensorEncoding(const WeightFileType &type, const std::string &name,
                               const std::vector<int64_t> &shape, int64_t nLayers,
                               bool tiedHead, std::string &fallback);

/// Tensor name -> the encoding a compiled library reads it in; a tensor
/// that is absent is f32.
using WeightTypes = std::map<std::string, ElementEncoding>;

/// The weight types of a library compiled for `type` (tfmc --dtype): those
/// of a file of that type, except that where a file would fall back to
/// another format, this refuses with the tensor, its row length and the
/// block size: a compile gets the format asked for or an error.
llvm::Expected<WeightTypes> compiledWeightTypes(const ModelSpec &spec, const WeightFileType &type);

} // namespace tfm

#endif // TFM_COMMON_WEIGHTFILETYPE_H
