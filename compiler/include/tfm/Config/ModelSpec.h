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
#ifndef TFM_CONFIG_MODELSPEC_H
#define TFM_CONFIG_MODELSPEC_H

#include <cstdint>
#include <string>

namespace tfm {

struct ModelSpec {
  std::string name;        // identifier used for lib<name>.so and C symbols
  std::string family;      // "llama"
  int64_t dim = 0;         // hidden_size
  int64_t hiddenDim = 0;   // intermediate_size (feed-forward width)
  int64_t nLayers = 0;
  int64_t nHeads = 0;
  int64_t nKvHeads = 0;
  int64_t headDim = 0;     // dim / nHeads unless the config says otherwise
  int64_t vocabSize = 0;
  int64_t contextLength = 0;
  double normEps = 1e-5;
  double ropeTheta = 10000.0;
  bool tiedEmbeddings = false;
  std::string dtype = "f32"; // element type of weights and activations
  int64_t bosTokenId = 1;
  int64_t eosTokenId = 2;

  int64_t qDim() const { return nHeads * headDim; }
  int64_t kvDim() const { return nKvHeads * headDim; }

  /// Canonical JSON of every field above; its hash identifies the config in
  /// the generated library so the runtime can refuse a mismatched one.
  std::string canonicalJson() const;
};

/// Result of parsing: either a spec or a message that names the file and field.
struct ParsedSpec {
  bool ok = false;
  ModelSpec spec;
  std::string error;
};

/// Parses a Hugging Face style config.json (or one of our presets).
/// `path` is used in error messages only.
ParsedSpec parseModelSpec(const std::string &jsonText, const std::string &path);

/// Parses the output of ModelSpec::canonicalJson() (as embedded in a
/// generated library's manifest). Every field is required; errors name
/// `fieldPrefix` + the field, e.g. "config.dim".
ParsedSpec parseCanonicalSpec(const std::string &jsonText, const std::string &source,
                              const std::string &fieldPrefix);

/// Reads and parses a config file.
ParsedSpec loadModelSpec(const std::string &path);

/// 64-bit FNV-1a of a string, printed as 16 hex digits. Used for config
/// hashes; stable across platforms and runs.
std::string stableHash(const std::string &text);

} // namespace tfm

#endif // TFM_CONFIG_MODELSPEC_H
