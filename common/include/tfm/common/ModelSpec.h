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

#include "tfm/common/FieldReader.h"
#include "tfm/common/Variants.h"

#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"

#include <cstdint>
#include <string>
#include <vector>

namespace tfm {

struct ModelSpec {
  std::string name;   // identifier used for lib<name>.so and C symbols
  /// The config's model_type (tfm/common/Variants.h). It picks the Hugging
  /// Face tensor names; the fields below fix the computation.
  Family family = Family::Llama;
  /// A decoder (next-token logits), an encoder (hidden states, attention
  /// in both directions), or an encoder whose output a decoder attends to.
  Architecture architecture = Architecture::Decoder;
  int64_t dim = 0;         // hidden_size / n_embd
  int64_t hiddenDim = 0;   // feed-forward width (intermediate_size / n_inner)
  int64_t nLayers = 0;     // the decoder's layers (an encoder's: its own)
  /// An encoder–decoder's encoder layers (T5's num_layers); 0 otherwise.
  int64_t nEncoderLayers = 0;
  /// An encoder–decoder: the most source tokens one encode takes, the rows
  /// of each layer's cross-attention cache; 0 otherwise.
  int64_t sourceLength = 0;
  int64_t nHeads = 0;
  int64_t nKvHeads = 0;    // nHeads: multi-head; 1: multi-query; else grouped
  int64_t headDim = 0;     // dim / nHeads unless the config says otherwise
  int64_t vocabSize = 0;
  /// Rows of each KV cache layer; with learned positions also the rows of
  /// the position table (GPT-2's n_positions).
  int64_t contextLength = 0;
  /// Learned positions: token i reads row positionOffset + i of the table,
  /// which has contextLength + positionOffset rows (RoBERTa's pad + 1:
  /// rows up to the padding id stand for padding).
  int64_t positionOffset = 0;
  /// BERT's token-type (segment) table, type_vocab_size rows; 0: none.
  /// Every token is of type 0, as in llama.cpp's BERT: a single text.
  int64_t tokenTypes = 0;

  // Positions.
  /// Rotary on q and k, a learned table (position_embd) or the 2017
  /// sinusoid added to the embedding, or none (ALiBi models).
  Positions positions = Positions::Rope;
  double ropeTheta = 10000.0;  // RoPE base; 0 unless positions is rope
  /// RoPE pairs: true rotates (2i, 2i+1) (GPT-J, GGUF Llama); false rotates
  /// (i, i + rotary_dim/2) (GPT-NeoX, Falcon, Hugging Face's rotate_half).
  bool ropeInterleaved = true;
  int64_t rotaryDim = 0;       // leading columns of each head RoPE rotates; 0 unless rope
  double ropeScale = 1.0;      // linear position scaling: angles use position / ropeScale
  /// Per rotated pair, a divisor of its angle (Llama 3's rope_scaling, a
  /// GGUF's rope_freqs.weight); empty: none.
  std::vector<double> ropeFreqFactors;
  /// Phi-3's LongRoPE (rope_scaling "longrope"; a GGUF's
  /// rope_factors_short/long.weight): per rotated pair, the divisors of its
  /// angle for a context up to ropeOriginalContext positions and for one
  /// past it (the compiled context chooses, as llama.cpp's does), and the
  /// factor both the cosine and the sine are multiplied by. Empty: none.
  std::vector<double> ropeShortFactors, ropeLongFactors;
  int64_t ropeOriginalContext = 0;
  double ropeAttnFactor = 1.0;
  /// T5's relative position bias: scores get a learned bias per head and
  /// bucket of the key's distance from the query (relativeBuckets buckets,
  /// logarithmic up to relativeMaxDistance), bidirectional in the encoder
  /// and causal in the decoder, from each stack's first layer's table; 0
  /// buckets: none.
  int64_t relativeBuckets = 0;
  int64_t relativeMaxDistance = 0;
  /// Sliding-window attention: a position sees itself and the window - 1
  /// before it (Mistral's sliding_window); 0: the whole context.
  int64_t slidingWindow = 0;
  /// Which layers slide: every one (0), or layer i when (i + 1) % pattern
  /// is not 0 (Gemma 2: 2, the even layers; Gemma 3: 6, five of six).
  int64_t slidingWindowPattern = 0;
  /// Gemma 3: the sliding layers' RoPE base, without the scaling the
  /// others get; 0: the same RoPE on every layer.
  double ropeLocalTheta = 0.0;
  /// ALiBi: a per-head linear distance penalty on the attention scores.
  bool alibi = false;
  double alibiMaxBias = 0.0;   // the slopes' exponent range (8 in the paper); 0 unless alibi

  // Normalisation and residuals.
  Norm norm = Norm::RmsNorm;
  bool normBias = false;         // LayerNorm has a bias (always false for rms_norm)
  double normEps = 1e-5;
  /// RMSNorm's gain is weight + offset: Gemma's 1 + w in Hugging Face's
  /// files (its GGUF stores the sum, offset 0).
  double normWeightOffset = 0.0;
  /// Gemma 2 and 3: a norm on the attention's and the feed-forward's
  /// outputs too, before each residual add.
  bool sandwichNorms = false;
  /// Post-LN (2017): x = norm(x + sublayer(x)), and no final norm. Pre-LN:
  /// x = x + sublayer(norm(x)), then a final norm.
  NormPosition normPosition = NormPosition::Pre;
  /// GPT-NeoX / Falcon: x = x + attn(n1(x)) + ffn(n2(x)), n2 = n1 when
  /// parallelNorms is 1. 0 unless parallelResidual.
  bool parallelResidual = false;
  int64_t parallelNorms = 0;
  bool embeddingNorm = false;    // a norm right after the embedding (BLOOM)

  // Feed-forward.
  /// With a gated feed-forward the activation gates an up projection
  /// (SwiGLU with silu, GeGLU with gelu).
  Activation activation = Activation::Silu;
  FfnKind ffn = FfnKind::Gated;

  // Attention and projections.
  bool fusedQkv = false;     // q, k and v in one [q_dim + 2*kv_dim, dim] matrix
  bool fusedGateUp = false;  // gate and up in one [2*hidden_dim, dim] matrix, gate first (Phi-3)
  bool qkvBias = false;      // biases of the q, k, v (or fused) projections
  bool qkNorm = false;       // RMSNorm of each head of q and k before RoPE (Qwen 3)
  bool attnOutBias = false;  // bias of the attention output projection
  bool ffnBias = false;      // biases of the feed-forward projections
  double clipQkv = 0.0;      // MPT: q, k, v clamped to [-clip, clip]; 0: none
  double attnScale = 0.0;    // what scores are multiplied by; 0: 1/sqrt(head_dim)
  /// Gemma 2's soft caps, cap * tanh(x / cap): of the attention scores and
  /// of the logits; 0: none.
  double attnSoftcap = 0.0;
  double finalSoftcap = 0.0;
  double embeddingScale = 1.0; // the embedding is multiplied by it (2017: sqrt(dim))
  /// The final norm's output is multiplied by it before the head (T5's tied
  /// head: d_model^-0.5).
  double outputScale = 1.0;
  /// A bias added to the logits (Marian's final_logits_bias, GGUF
  /// output.bias), also with a tied head.
  bool outputBias = false;
  bool tiedEmbeddings = false;
  int64_t bosTokenId = 1;
  int64_t eosTokenId = 2;
  /// Every id of an eos_token_id list (Llama 3 Instruct's end of turn and
  /// of text, Gemma 3's): generation stops at any. Empty for a single id.
  std::vector<int64_t> eosTokenIdList;
  /// An encoder–decoder's first decoder token (T5's pad); -1 otherwise.
  int64_t decoderStartTokenId = -1;

  int64_t qDim() const { return nHeads * headDim; }
  int64_t kvDim() const { return nKvHeads * headDim; }
  /// Only an encoder: BERT's hidden states, no decoder.
  bool encoder() const { return architecture == Architecture::Encoder; }
  /// An encoder whose output a decoder's cross-attention reads.
  bool encoderDecoder() const { return architecture == Architecture::EncoderDecoder; }
  /// Pre-LN and parallel blocks end with a final norm; post-LN blocks do not.
  bool outputNorm() const { return normPosition == NormPosition::Pre; }

  /// Canonical JSON of every field above; its hash identifies the config in
  /// the generated library so the runtime can refuse a mismatched one.
  std::string canonicalJson() const;
};

/// ALiBi's slope per query head, the constant the score of query position i
/// and key position j is lowered by per unit of distance: -slope * (i - j).
/// From the paper (Press et al. 2022) with its rule for head counts that are
/// not a power of two, as BLOOM, MPT and llama.cpp compute them; Falcon adds
/// the bias before scaling the scores, so its slopes come out divided by
/// sqrt(head_dim). Empty unless spec.alibi.
std::vector<float> alibiSlopes(const ModelSpec &spec);

/// The divisors of each rotated pair's angle the compiled context uses:
/// LongRoPE's short or long factors, else ropeFreqFactors (maybe none).
const std::vector<double> &ropeFactorsOf(const ModelSpec &spec);

/// Whether layer `layer` is a sliding-window layer (spec.slidingWindowPattern).
bool slides(const ModelSpec &spec, int64_t layer);

/// The sliding window of layer `layer`: the keys its rows see, or 0 for the
/// whole context (also when the window holds the whole context).
int64_t slidingWindowOf(const ModelSpec &spec, int64_t layer);

/// Parses a Hugging Face style config.json (or one of our presets), or
/// the canonical JSON of ModelSpec::canonicalJson() (an object with a
/// "family" and no "model_type"). `path` names the file in error messages,
/// which also name the field, as `namer` calls it when given.
llvm::Expected<ModelSpec> parseModelSpec(llvm::StringRef jsonText, const std::string &path,
                                         FieldReader::FieldNamer namer = {});

/// Parses the output of ModelSpec::canonicalJson() (as a generated library's
/// manifest and the tfm IR carry it). Every field is required; errors name
/// `source` and `fieldPrefix` + the field, e.g. "config.dim".
llvm::Expected<ModelSpec> parseCanonicalSpec(llvm::StringRef jsonText, const std::string &source,
                                             const std::string &fieldPrefix);

/// Reads and parses a config file.
llvm::Expected<ModelSpec> loadModelSpec(const std::string &path);

} // namespace tfm

#endif // TFM_COMMON_MODELSPEC_H
