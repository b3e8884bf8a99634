//===- ConfigParsing.h - Shared pieces of the config parsers ----*- C++ -*-===//
//
// Private to TfmCommon: ModelSpec.cpp reads and checks what every family
// shares, ConfigFamilies.cpp turns each model_type's config.json into a
// ModelSpec. Messages name fields as the family's config spells them, so the
// checks take the field names from the caller.
//
//===----------------------------------------------------------------------===//
#ifndef TFM_COMMON_LIB_CONFIGPARSING_H
#define TFM_COMMON_LIB_CONFIGPARSING_H

#include "tfm/common/FieldReader.h"
#include "tfm/common/ModelSpec.h"

namespace tfm::config {

/// The names a family's config gives its sizes and variant switches, for
/// messages. A switch the family cannot express is null.
struct FieldNames {
  const char *dim, *hiddenDim, *nLayers, *nHeads, *nKvHeads, *headDim, *vocabSize,
      *contextLength;
  const char *positions = nullptr, *alibi = nullptr, *rotaryDim = nullptr,
             *parallelResidual = nullptr, *postNorm = nullptr;
};

/// A token id the config gives (an integer, or a list whose first item is
/// taken), checked against the vocabulary; `fallback` stands for an absent one.
int64_t tokenId(FieldReader &r, const char *field, int64_t fallback, int64_t vocabSize);

/// Every id of a token id list (empty for one id, or none), each a
/// non-negative integer.
std::vector<int64_t> tokenIdList(FieldReader &r, const char *field);

/// A number that must be finite and above zero (an epsilon, a RoPE base).
double positiveNumber(FieldReader &r, const char *field, double fallback);

/// Refuses a field whose value would change the model in a way tfm does not
/// compile: `value` must equal `expected` (a JSON value), and the message
/// says why in `why`.
void requireValue(FieldReader &r, const char *field, const llvm::json::Value &expected,
                  const char *why);

/// RoPE scaling: null, or {"type" or "rope_type": "linear", "factor": f},
/// which divides positions by f. Other kinds are refused.
double linearRopeScale(FieldReader &r, const char *field);

/// Llama's RoPE scaling, read once the rotary width and base are known:
/// `field` (rope_scaling) null, linear (ModelSpec::ropeScale) or Llama 3's
/// (ModelSpec::ropeFreqFactors, as transformers computes them), or tfm's
/// own "rope_freq_factors" (a GGUF's rope_freqs.weight), one per pair.
void readLlamaRopeScaling(FieldReader &r, const char *field, ModelSpec &s);

/// The checks every family's spec passes after it is filled in: combinations
/// of switches that have no meaning, sizes the kernels cannot index.
void checkSpec(FieldReader &r, const ModelSpec &s, const FieldNames &f);

/// The parser of `family`'s config.json (below; an exhaustive switch).
void parseFamily(Family family, FieldReader &r, const std::string &path, ModelSpec &s);

// One parser per model_type (ConfigFamilies.cpp).
void parseLlama(FieldReader &r, ModelSpec &s);
void parseMistral(FieldReader &r, ModelSpec &s);
void parseQwen2(FieldReader &r, ModelSpec &s);
void parseQwen3(FieldReader &r, ModelSpec &s);
void parsePhi3(FieldReader &r, ModelSpec &s);
void parseGemma2(FieldReader &r, ModelSpec &s);
void parseGemma3(FieldReader &r, ModelSpec &s);
void parseGpt2(FieldReader &r, ModelSpec &s);
void parseBloom(FieldReader &r, ModelSpec &s);
void parseMpt(FieldReader &r, const std::string &path, ModelSpec &s);
void parseGptNeox(FieldReader &r, ModelSpec &s);
void parseFalcon(FieldReader &r, ModelSpec &s);
void parseT5(FieldReader &r, ModelSpec &s);
void parseMarian(FieldReader &r, ModelSpec &s);
void parseTransformer(FieldReader &r, ModelSpec &s);

} // namespace tfm::config

#endif // TFM_COMMON_LIB_CONFIGPARSING_H
