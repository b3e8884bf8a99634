//===- ModelSpec.h - One transformer configuration, validated ---*- C++ -*-===//
//
// A ModelSpec is everything a config fixes about a model. Every number in it
// becomes a compile-time constant of the generated kernels; nothing here is
// decided at run time.
//
// The config format is Hugging Face's config.json (so a downloaded one works
// unedited); our presets in configs/ use the same fields plus "name".
//
//===----------------------------------------------------------------------===//
#ifndef TFM_COMMON_MODELSPEC_H
#define TFM_COMMON_MODELSPEC_H

#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"

#include <cstdint>
#include <string>

namespace tfm {

struct ModelSpec {
  std::string name;        // identifier used for lib<name>.so and C symbols
  std::string family;      // "llama" | "gpt2": the manifest's tensor layout
  int64_t dim = 0;         // hidden_size / n_embd
  int64_t hiddenDim = 0;   // feed-forward width (intermediate_size / n_inner)
  int64_t nLayers = 0;
  int64_t nHeads = 0;
  int64_t nKvHeads = 0;
  int64_t headDim = 0;     // dim / nHeads unless the config says otherwise
  int64_t vocabSize = 0;
  /// Rows of each KV cache layer; with learned positions also the rows of
  /// the position table (GPT-2's n_positions).
  int64_t contextLength = 0;
  std::string norm = "rms_norm";   // "rms_norm" | "layer_norm" (weight and bias)
  double normEps = 1e-5;
  /// FFN activation: "silu" (Llama's gated FFN, silu(gate) * up), or GPT-2's
  /// plain FFN with "gelu_tanh" (the tanh approximation) or "gelu" (exact).
  std::string activation = "silu";
  std::string positions = "rope";  // "rope" | "learned" (position_embd table)
  double ropeTheta = 10000.0;      // 0 unless positions is "rope"
  bool projectionBias = false;     // every attention and FFN projection has a bias
  bool tiedEmbeddings = false;
  int64_t bosTokenId = 1;
  int64_t eosTokenId = 2;

  int64_t qDim() const { return nHeads * headDim; }
  int64_t kvDim() const { return nKvHeads * headDim; }
  /// GPT-2 keeps q, k and v in one [3*dim, dim] matrix (attn_qkv).
  bool fusedQkv() const { return family == "gpt2"; }
  /// Llama's FFN has a gate projection (ffn_gate).
  bool gatedFfn() const { return family == "llama"; }

  /// Canonical JSON of every field above; its hash identifies the config in
  /// the generated library so the runtime can refuse a mismatched one.
  std::string canonicalJson() const;
};

/// Parses a Hugging Face style config.json (or one of our presets). `path`
/// names the file in error messages, which also name the field.
llvm::Expected<ModelSpec> parseModelSpec(llvm::StringRef jsonText, const std::string &path);

/// Parses the output of ModelSpec::canonicalJson() (as a generated library's
/// manifest and the tfm IR carry it). Every field is required; errors name
/// `source` and `fieldPrefix` + the field, e.g. "config.dim".
llvm::Expected<ModelSpec> parseCanonicalSpec(llvm::StringRef jsonText, const std::string &source,
                                             const std::string &fieldPrefix);

/// Reads and parses a config file.
llvm::Expected<ModelSpec> loadModelSpec(const std::string &path);

} // namespace tfm

#endif // TFM_COMMON_MODELSPEC_H
