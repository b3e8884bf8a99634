//===- GgufConfig.cpp - The model config a GGUF file describes ------------===//
#include "tfm/runtime/GgufConfig.h"

#include "tfm/common/Failure.h"
#include "tfm/common/TensorNames.h"
#include "tfm/common/UntrustedText.h"

#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/JSON.h"

#include <cmath>
#include <optional>
#include <cstdio>
#include <cstdlib>

using namespace tfm;
using namespace tfm::rt;
namespace json = llvm::json;

namespace {

/// One Hugging Face config field and the "<arch>.<key>" metadata it comes from.
struct FieldSource {
  const char *field;
  const char *key;
  bool real = false;      // float metadata (else integer)
  bool optional = false;  // left out of the config when the file has no key
};

// llama.cpp's converters write these keys (gguf-py's constants) and its
// loader reads them (llama-model.cpp, load_hparams); the config fields are
// the ones each model_type's parser in common/lib/ConfigFamilies.cpp reads.
const FieldSource kLlamaFields[] = {
    {"hidden_size", "embedding_length"},
    {"intermediate_size", "feed_forward_length"},
    {"num_hidden_layers", "block_count"},
    {"num_attention_heads", "attention.head_count"},
    {"num_key_value_heads", "attention.head_count_kv", false, true},
    {"head_dim", "attention.key_length", false, true},
    {"max_position_embeddings", "context_length"},
    {"rms_norm_eps", "attention.layer_norm_rms_epsilon", true},
    {"rope_theta", "rope.freq_base", true, true},
};
const FieldSource kGpt2Fields[] = {
    {"n_embd", "embedding_length"},
    {"n_inner", "feed_forward_length"},
    {"n_layer", "block_count"},
    {"n_head", "attention.head_count"},
    {"n_positions", "context_length"},
    {"layer_norm_epsilon", "attention.layer_norm_epsilon", true},
};
const FieldSource kGptNeoxFields[] = {
    {"hidden_size", "embedding_length"},
    {"intermediate_size", "feed_forward_length"},
    {"num_hidden_layers", "block_count"},
    {"num_attention_heads", "attention.head_count"},
    {"max_position_embeddings", "context_length"},
    {"layer_norm_eps", "attention.layer_norm_epsilon", true},
    {"rotary_emb_base", "rope.freq_base", true, true},
};
// BLOOM's feed-forward is 4 * hidden_size; readBloom checks the file agrees.
const FieldSource kBloomFields[] = {
    {"hidden_size", "embedding_length"},
    {"n_layer", "block_count"},
    {"n_head", "attention.head_count"},
    {"seq_length", "context_length"},
    {"layer_norm_epsilon", "attention.layer_norm_epsilon", true},
};
const FieldSource kMptFields[] = {
    {"d_model", "embedding_length"},
    {"n_layers", "block_count"},
    {"n_heads", "attention.head_count"},
    {"max_seq_len", "context_length"},
    {"layer_norm_epsilon", "attention.layer_norm_epsilon", true},
};
// BERT: a GGUF's positions start at row 0 (llama.cpp's converter drops
// RoBERTa's padding rows), so every bert file reads as model_type bert.
const FieldSource kBertFields[] = {
    {"hidden_size", "embedding_length"},
    {"intermediate_size", "feed_forward_length"},
    {"num_hidden_layers", "block_count"},
    {"num_attention_heads", "attention.head_count"},
    {"max_position_embeddings", "context_length"},
    {"layer_norm_eps", "attention.layer_norm_epsilon", true},
};
// T5: llama.cpp's block_count is the encoder's, decoder_block_count (absent:
// as many) the decoder's; the relative buckets' maximum distance is 128 in
// its graph, T5Config's default.
const FieldSource kT5Fields[] = {
    {"d_model", "embedding_length"},
    {"d_ff", "feed_forward_length"},
    {"num_layers", "block_count"},
    {"num_decoder_layers", "decoder_block_count", false, true},
    {"num_heads", "attention.head_count"},
    {"d_kv", "attention.key_length"},
    {"n_positions", "context_length"},
    {"layer_norm_epsilon", "attention.layer_norm_rms_epsilon", true},
    {"relative_attention_num_buckets", "attention.relative_buckets_count"},
    {"decoder_start_token_id", "decoder_start_token_id", false, true},
};
// MPT's nested attn_config.
const FieldSource kMptAttnFields[] = {
    {"alibi_bias_max", "attention.max_alibi_bias", true},
    {"clip_qkv", "attention.clamp_kqv", true, true},
};
const FieldSource kFalconFields[] = {
    {"hidden_size", "embedding_length"},
    {"ffn_hidden_size", "feed_forward_length"},
    {"num_hidden_layers", "block_count"},
    {"num_attention_heads", "attention.head_count"},
    {"max_position_embeddings", "context_length"},
    {"layer_norm_epsilon", "attention.layer_norm_epsilon", true},
    {"rope_theta", "rope.freq_base", true, true},
};

/// One architecture as llama.cpp names it, and the family its config is.
struct GgufArchitecture {
  const char *gguf;
  Family family;
  llvm::ArrayRef<FieldSource> fields;
};

/// A name that appears twice is read as its first family: llama.cpp's
/// converter writes Mistral as llama.
const GgufArchitecture kArchitectures[] = {
    {"llama", Family::Llama, kLlamaFields},     {"qwen2", Family::Qwen2, kLlamaFields},
    {"qwen3", Family::Qwen3, kLlamaFields},     {"phi3", Family::Phi3, kLlamaFields},
    {"gemma2", Family::Gemma2, kLlamaFields},   {"gemma3", Family::Gemma3, kLlamaFields},
    {"llama", Family::Mistral, kLlamaFields},   {"gpt2", Family::Gpt2, kGpt2Fields},
    {"gptneox", Family::GptNeox, kGptNeoxFields}, {"bloom", Family::Bloom, kBloomFields},
    {"mpt", Family::Mpt, kMptFields},           {"falcon", Family::Falcon, kFalconFields},
    {"bert", Family::Bert, kBertFields},       {"t5", Family::T5, kT5Fields},
};

const GgufArchitecture *architectureNamed(llvm::StringRef gguf) {
  for (const GgufArchitecture &a : kArchitectures)
    if (gguf == a.gguf)
      return &a;
  return nullptr;
}

/// The architectures' names, quoted, each once: for messages.
std::string architectureNames() {
  std::string names;
  for (const GgufArchitecture &a : kArchitectures)
    if (architectureNamed(a.gguf) == &a)
      names += (names.empty() ? "" : ", ") + quoted(a.gguf);
  return names;
}

/// A float32 as the shortest decimal that reads back as the same float32:
/// the number its writer meant (a converter stores config.json's 1e-05 as the
/// float nearest it), so that a GGUF and its Hugging Face config give the same
/// ModelSpec and share a compiled library.
double shortestDecimal(float value) {
  char text[32];
  for (int digits = 1; digits < 9; ++digits) {
    std::snprintf(text, sizeof text, "%.*g", digits, static_cast<double>(value));
    if (std::strtof(text, nullptr) == value)
      return std::strtod(text, nullptr);
  }
  return value; // nine significant digits always read back
}

llvm::Error readFields(const GgufFile &file, const std::string &arch,
                       llvm::ArrayRef<FieldSource> fields, json::Object &config) {
  for (const FieldSource &f : fields) {
    std::string key = arch + "." + f.key;
    if (f.optional && !file.has(key))
      continue; // the config's own default applies
    if (f.real) {
      llvm::Expected<double> value = file.getFloat(key);
      if (!value)
        return value.takeError();
      bool f32 = file.find(key)->type == GgufType::F32;
      config[f.field] = f32 ? shortestDecimal(static_cast<float>(*value)) : *value;
    } else {
      llvm::Expected<int64_t> value = file.getInteger(key);
      if (!value)
        return value.takeError();
      config[f.field] = *value;
    }
  }
  return llvm::Error::success();
}

/// The vocabulary size: the token embedding's row count.
llvm::Expected<int64_t> vocabSize(const GgufFile &file) {
  const GgufTensorInfo *embedding = file.findTensor("token_embd.weight");
  if (!embedding || embedding->shape.size() != 2)
    return failure(file.path() + ": tensor 'token_embd.weight': " +
                                       (embedding ? "not a matrix" : "missing") +
                                       "; expected [vocab, embedding_length]");
  return embedding->shape[0];
}

llvm::Error ggufFailure(const GgufFile &file, const std::string &message) {
  return tfm::failure(file.path() + ": " + message);
}

/// Whether the first block has tensor `stem` ("attn_qkv.bias"): what a
/// GGUF says about biases and norms that its metadata does not.
bool hasBlockTensor(const GgufFile &file, const std::string &stem) {
  return file.findTensor("blk.0." + stem) != nullptr;
}

/// A fraction of the head whose product with head_dim, truncated as the
/// parsers (and transformers) do, gives back `columns`.
double rotaryFraction(int64_t columns, int64_t headDim) {
  double fraction = static_cast<double>(columns) / static_cast<double>(headDim);
  while (static_cast<int64_t>(headDim * fraction) < columns)
    fraction = std::nextafter(fraction, 2.0);
  return fraction;
}

/// rope.scaling.type and .factor as the rope_scaling field; llama.cpp
/// writes "none" for no scaling, and tfm compiles only the linear kind.
llvm::Error readRopeScaling(const GgufFile &file, const std::string &arch,
                            json::Object &config) {
  std::string typeKey = arch + ".rope.scaling.type";
  if (!file.has(typeKey))
    return llvm::Error::success();
  llvm::Expected<std::string> type = file.getString(typeKey);
  if (!type)
    return type.takeError();
  if (*type == "none")
    return llvm::Error::success();
  if (*type != "linear")
    return ggufFailure(file, "metadata '" + typeKey + "' is " + quoted(*type) +
                             "; expected \"linear\" or \"none\" (the RoPE scalings tfm compiles)");
  llvm::Expected<double> factor = file.getFloat(arch + ".rope.scaling.factor");
  if (!factor)
    return factor.takeError();
  config["rope_scaling"] = json::Object{{"type", "linear"}, {"factor", *factor}};
  return llvm::Error::success();
}

/// Llama 3's RoPE scaling, which llama.cpp's converter stores as the tensor
/// rope_freqs.weight (each pair's angle divided by it) and no key: tfm's
/// config field rope_freq_factors, folded into the compiled RoPE tables.
llvm::Error readRopeFreqs(const GgufFile &file, json::Object &config) {
  const GgufTensorInfo *freqs = file.findTensor("rope_freqs.weight");
  if (!freqs)
    return llvm::Error::success();
  llvm::Expected<std::vector<float>> values = file.f32Vector(*freqs);
  if (!values)
    return values.takeError();
  json::Array factors;
  for (float value : *values)
    factors.push_back(static_cast<double>(value));
  config["rope_freq_factors"] = std::move(factors);
  return llvm::Error::success();
}

// Keys beyond Llama's: Phi-3's and Gemma's sliding window (llama.cpp
// disables Phi-3's; tfm compiles it, as the published model has it),
// Gemma 2's soft caps.
const FieldSource kSlidingWindowFields[] = {
    {"sliding_window", "attention.sliding_window", false, true},
};
const FieldSource kGemma2Fields[] = {
    {"attn_logit_softcapping", "attn_logit_softcapping", true, true},
    {"final_logit_softcapping", "final_logit_softcapping", true, true},
};

/// Phi-3's sliding window, and its LongRoPE as llama.cpp's converter
/// writes it: the factors as rope_factors_short/long.weight, the
/// pretrained context and the attention factor as keys. As a config's
/// rope_scaling "longrope" with the factor given.
llvm::Error readPhi3(const GgufFile &file, const std::string &arch, json::Object &config) {
  const GgufTensorInfo *shortFactors = file.findTensor("rope_factors_short.weight");
  const GgufTensorInfo *longFactors = file.findTensor("rope_factors_long.weight");
  if (shortFactors || longFactors) {
    if (!shortFactors || !longFactors)
      return ggufFailure(file, std::string("tensor '") +
                                   (shortFactors ? "rope_factors_long" : "rope_factors_short") +
                                   ".weight' is missing beside its LongRoPE pair");
    json::Object scaling{{"rope_type", "longrope"}};
    const std::pair<const char *, const GgufTensorInfo *> lists[] = {
        {"short_factor", shortFactors}, {"long_factor", longFactors}};
    for (auto [key, info] : lists) {
      llvm::Expected<std::vector<float>> values = file.f32Vector(*info);
      if (!values)
        return values.takeError();
      scaling[key] = json::Array(*values);
    }
    const FieldSource keys[] = {
        {"attention_factor", "rope.scaling.attn_factor", true, true},
        {"original_max_position_embeddings", "rope.scaling.original_context_length", false, true},
    };
    json::Object read;
    if (llvm::Error e = readFields(file, arch, keys, read))
      return e;
    if (json::Value *attention = read.get("attention_factor"))
      scaling["attention_factor"] = std::move(*attention);
    if (json::Value *original = read.get("original_max_position_embeddings"))
      config["original_max_position_embeddings"] = std::move(*original);
    config["rope_scaling"] = std::move(scaling);
  }
  return readFields(file, arch, kSlidingWindowFields, config);
}

/// What llama.cpp's Gemma graphs take from a GGUF beyond Llama's keys: norm
/// weights stored with Hugging Face's + 1 added (offset 0), the window,
/// Gemma 2's soft caps, and scores scaled by 1/sqrt(head size): key_length,
/// else the width of a head.
llvm::Error readGemma(const GgufFile &file, const std::string &arch, Family family,
                      json::Object &config) {
  config["norm_weight_offset"] = 0.0;
  const FieldSource headSize{"query_pre_attn_scalar", "attention.key_length", false, true};
  if (!file.has(arch + "." + headSize.key)) {
    llvm::Expected<int64_t> dim = file.getInteger(arch + ".embedding_length");
    llvm::Expected<int64_t> heads = file.getInteger(arch + ".attention.head_count");
    if (!dim || !heads)
      return llvm::joinErrors(dim.takeError(), heads.takeError());
    if (*heads > 0)
      config[headSize.field] = *dim / *heads;
  }
  if (llvm::Error e = readFields(file, arch, {headSize}, config))
    return e;
  if (llvm::Error e = readFields(file, arch, kSlidingWindowFields, config))
    return e;
  return family == Family::Gemma2 ? readFields(file, arch, kGemma2Fields, config)
                                  : llvm::Error::success();
}

/// rope.dimension_count, the columns of each head RoPE rotates (all of
/// them when absent), as the fraction of the head `field` holds.
llvm::Error readRotaryColumns(const GgufFile &file, const std::string &arch,
                              json::Object &config, const char *field) {
  llvm::Expected<int64_t> heads = file.getInteger(arch + ".attention.head_count");
  llvm::Expected<int64_t> dim = file.getInteger(arch + ".embedding_length");
  if (!heads || !dim)
    return llvm::joinErrors(heads.takeError(), dim.takeError());
  std::string keyLength = arch + ".attention.key_length";
  int64_t headDim = 0;
  if (file.has(keyLength)) { // a head size of its own (Qwen 3)
    llvm::Expected<int64_t> length = file.getInteger(keyLength);
    if (!length)
      return length.takeError();
    headDim = *length;
  } else if (*heads <= 0 || *dim % *heads != 0) {
    return ggufFailure(file, "metadata '" + arch + ".embedding_length' is " + std::to_string(*dim) +
                             "; expected a multiple of '" + arch + ".attention.head_count' (" +
                             std::to_string(*heads) + ")");
  } else {
    headDim = *dim / *heads;
  }
  std::string key = arch + ".rope.dimension_count";
  if (!file.has(key))
    return llvm::Error::success();
  llvm::Expected<int64_t> rotary = file.getInteger(key);
  if (!rotary)
    return rotary.takeError();
  if (*rotary <= 0 || *rotary > headDim || *rotary % 2 != 0)
    return ggufFailure(file, "metadata '" + key + "' is " + std::to_string(*rotary) +
                             "; expected an even number of columns from 2 to the head size " +
                             std::to_string(headDim));
  if (*rotary != headDim)
    config[field] = rotaryFraction(*rotary, headDim);
  return llvm::Error::success();
}

/// What each architecture's GGUF says beyond kArchitectures' fields: keys
/// without a one-to-one config field, and the tensors llama.cpp's graph
/// checks for instead of a key (biases, Falcon's second norm, the head).
/// Falcon: llama.cpp's graph is always parallel with RoPE; a second norm
/// (attn_norm_2) marks the new decoder architecture of 40B and 180B.
llvm::Error readFalcon(const GgufFile &file, const std::string &arch, int64_t heads,
                       int64_t kvHeads, json::Object &config) {
  bool twoNorms = hasBlockTensor(file, "attn_norm_2.weight");
  bool newArchitecture = twoNorms || (kvHeads != 1 && kvHeads != heads);
  config["new_decoder_architecture"] = newArchitecture;
  if (newArchitecture) {
    config["num_kv_heads"] = kvHeads;
    config["num_ln_in_parallel_attn"] = twoNorms ? 2 : 1;
  } else {
    config["multi_query"] = kvHeads == 1;
  }
  config["parallel_attn"] = true;
  config["alibi"] = false;
  config["bias"] = hasBlockTensor(file, "attn_qkv.bias");
  return readRopeScaling(file, arch, config);
}

/// BERT's token types are its token_types tensor's rows; llama.cpp's
/// converter marks the attention not causal, which tfm's BERT is.
llvm::Error readBert(const GgufFile &file, const std::string &arch, json::Object &config) {
  const GgufTensorInfo *types = file.findTensor("token_types.weight");
  if (!types || types->shape.size() != 2)
    return ggufFailure(file, std::string("tensor 'token_types.weight': ") +
                                 (types ? "not a matrix" : "missing") +
                                 "; expected BERT's token-type table [types, embedding_length]");
  config["type_vocab_size"] = types->shape[0];
  std::string causal = arch + ".attention.causal";
  if (file.has(causal)) {
    llvm::Expected<bool> value = file.getBool(causal);
    if (!value)
      return value.takeError();
    if (*value)
      return ggufFailure(file, "metadata '" + causal +
                                   "' is true; expected false (a BERT encoder's tokens attend "
                                   "to every other)");
  }
  return llvm::Error::success();
}

llvm::Error readArchitectureSpecifics(const GgufFile &file, const GgufArchitecture &a,
                                      json::Object &config) {
  const std::string arch = a.gguf;
  // The integer at "<arch>.<key>", or `absent` when the file has none.
  auto integer = [&](const char *key,
                     std::optional<int64_t> absent = std::nullopt) -> llvm::Expected<int64_t> {
    std::string full = arch + "." + key;
    if (absent && !file.has(full))
      return *absent;
    return file.getInteger(full);
  };
  bool untiedHead = file.findTensor("output.weight") != nullptr;
  switch (a.family) {
  case Family::Llama:
  case Family::Mistral:
  case Family::Qwen2:
  case Family::Qwen3:
  case Family::Phi3:
  case Family::Gemma2:
  case Family::Gemma3:
    config["tie_word_embeddings"] = !untiedHead;
    if (a.family == Family::Gemma2 || a.family == Family::Gemma3)
      if (llvm::Error e = readGemma(file, arch, a.family, config))
        return e;
    if (a.family == Family::Phi3)
      if (llvm::Error e = readPhi3(file, arch, config))
        return e;
    if (a.family != Family::Qwen2) // Qwen 2's q, k and v always have biases
      config["attention_bias"] = hasBlockTensor(file, "attn_q.bias");
    if (llvm::Error e = readRotaryColumns(file, arch, config, "partial_rotary_factor"))
      return e;
    if (llvm::Error e = readRopeFreqs(file, config))
      return e;
    return readRopeScaling(file, arch, config);
  case Family::Gpt2:
    // ggml's GPT-2 graph uses the tanh GELU and the token embedding as the
    // head (its converter stores output.weight as a copy of it).
    config["activation_function"] = "gelu_new";
    config["tie_word_embeddings"] = true;
    return llvm::Error::success();
  case Family::Bert:
  case Family::Roberta:
  case Family::Camembert:
  case Family::XlmRoberta:
    return readBert(file, arch, config);
  case Family::T5:
    // llama.cpp's graph: a gated feed-forward is GELU's (tanh), a plain
    // one ReLU's, as T5 v1.1's "gated-gelu" and v1.0's "relu".
    config["tie_word_embeddings"] = !untiedHead;
    config["feed_forward_proj"] =
        file.findTensor("enc.blk.0.ffn_gate.weight") ? "gated-gelu" : "relu";
    return llvm::Error::success();
  case Family::GptNeox:
  case Family::Bloom:
  case Family::Mpt:
  case Family::Falcon:
  case Family::Marian: // no GGUF architecture
  case Family::Transformer:
    break;
  }
  config["tie_word_embeddings"] = !untiedHead;
  llvm::Expected<int64_t> heads = integer("attention.head_count");
  llvm::Expected<int64_t> dim = integer("embedding_length");
  if (!heads || !dim)
    return llvm::joinErrors(heads.takeError(), dim.takeError());
  if (*heads <= 0 || *dim % *heads != 0)
    return ggufFailure(file, "metadata '" + arch + ".embedding_length' is " + std::to_string(*dim) +
                             "; expected a multiple of '" + arch + ".attention.head_count' (" +
                             std::to_string(*heads) + ")");

  switch (a.family) {
  case Family::GptNeox: {
    if (llvm::Error e = readRotaryColumns(file, arch, config, "rotary_pct"))
      return e;
    llvm::Expected<bool> parallel = file.getBool(arch + ".use_parallel_residual");
    if (!parallel)
      return parallel.takeError();
    config["use_parallel_residual"] = *parallel;
    config["attention_bias"] = hasBlockTensor(file, "attn_qkv.bias");
    return readRopeScaling(file, arch, config);
  }
  case Family::Bloom: {
    llvm::Expected<int64_t> ffn = integer("feed_forward_length");
    if (!ffn)
      return ffn.takeError();
    if (*ffn != 4 * *dim)
      return ggufFailure(file, "metadata '" + arch + ".feed_forward_length' is " +
                               std::to_string(*ffn) + "; expected 4 * '" + arch +
                               ".embedding_length' (" + std::to_string(4 * *dim) +
                               "), as BLOOM's feed-forward is");
    return llvm::Error::success();
  }
  case Family::Mpt: {
    llvm::Expected<int64_t> ffn = integer("feed_forward_length");
    if (!ffn)
      return ffn.takeError();
    if (*ffn % *dim != 0)
      return ggufFailure(file, "metadata '" + arch + ".feed_forward_length' is " +
                               std::to_string(*ffn) + "; expected a multiple of '" + arch +
                               ".embedding_length' (" + std::to_string(*dim) +
                               "), as MPT's expansion_ratio gives");
    config["expansion_ratio"] = *ffn / *dim;
    config["no_bias"] = !hasBlockTensor(file, "attn_qkv.bias");
    json::Object attn;
    if (llvm::Error e = readFields(file, arch, kMptAttnFields, attn))
      return e;
    config["attn_config"] = std::move(attn);
    return llvm::Error::success();
  }
  case Family::Falcon: {
    llvm::Expected<int64_t> kvHeads = integer("attention.head_count_kv", *heads);
    if (!kvHeads)
      return kvHeads.takeError();
    return readFalcon(file, arch, *heads, *kvHeads, config);
  }
  case Family::Llama:
  case Family::Mistral:
  case Family::Qwen2:
  case Family::Qwen3:
  case Family::Phi3:
  case Family::Gemma2:
  case Family::Gemma3:
  case Family::Gpt2:
  case Family::Bert:
  case Family::Roberta:
  case Family::Camembert:
  case Family::XlmRoberta:
  case Family::T5:
  case Family::Marian:
  case Family::Transformer: // no GGUF architecture
    break;
  }
  return llvm::Error::success();
}

/// The GGUF architecture llama.cpp gives a family, if any.
const GgufArchitecture *architectureOf(const ModelSpec &spec) {
  for (const GgufArchitecture &a : kArchitectures)
    if (spec.family == a.family)
      return &a;
  return nullptr;
}

} // namespace

llvm::Expected<std::string> tfm::rt::configJsonFromGguf(const GgufFile &file,
                                                         const std::string &name) {
  llvm::Expected<std::string> archName = file.getString("general.architecture");
  if (!archName)
    return archName.takeError();
  const GgufArchitecture *arch = architectureNamed(*archName);
  if (!arch)
    return ggufFailure(file, "metadata 'general.architecture' is " + quoted(*archName) +
                             "; expected one of " + architectureNames());
  llvm::Expected<int64_t> vocab = vocabSize(file);
  if (!vocab)
    return vocab.takeError();

  json::Object config{
      {"name", name}, {"model_type", variantName(arch->family)}, {"vocab_size", *vocab}};
  for (const char *key : {"bos_token_id", "eos_token_id"}) {
    std::string full = std::string("tokenizer.ggml.") + key;
    if (file.has(full)) {
      llvm::Expected<int64_t> id = file.getInteger(full);
      if (!id)
        return id.takeError();
      config[key] = *id;
    }
  }
  if (llvm::Error e = readFields(file, arch->gguf, arch->fields, config))
    return std::move(e);
  if (llvm::Error e = readArchitectureSpecifics(file, *arch, config))
    return std::move(e);
  std::string text;
  llvm::raw_string_ostream os(text);
  os << llvm::formatv("{0:2}", json::Value(std::move(config)));
  return text;
}

llvm::Expected<ModelSpec> tfm::rt::modelSpecFromGguf(const GgufFile &file,
                                                      const std::string &name) {
  llvm::Expected<std::string> config = configJsonFromGguf(file, name);
  if (!config)
    return config.takeError();
  llvm::Expected<std::string> archName = file.getString("general.architecture");
  if (!archName)
    return archName.takeError();
  const GgufArchitecture *arch = architectureNamed(*archName);
  // A field is what the metadata key it came from is called in the file.
  auto namer = [&](const std::string &field) -> std::string {
    for (const FieldSource &f : arch->fields)
      if (field == f.field)
        return "metadata '" + std::string(arch->gguf) + "." + f.key + "'";
    if (field == "vocab_size")
      return "tensor 'token_embd.weight' (its rows are the vocabulary)";
    if (field == "bos_token_id" || field == "eos_token_id")
      return "metadata 'tokenizer.ggml." + field + "'";
    if (field == "rope_freq_factors")
      return "tensor 'rope_freqs.weight'";
    if (field == "partial_rotary_factor" || field == "rotary_pct")
      return "metadata '" + *archName + ".rope.dimension_count'";
    return "the metadata (as config field '" + field + "')";
  };
  return parseModelSpec(*config, file.path(), namer);
}

void tfm::rt::addGgufModelMetadata(const ModelSpec &s, GgufWriter &w) {
  // A family llama.cpp has no architecture for keeps its own name and
  // Llama's keys, which describe most of it.
  const GgufArchitecture *known = architectureOf(s);
  const std::string arch = known ? known->gguf : variantName(s.family);
  w.addString("general.architecture", arch);
  w.addString("general.name", s.name);
  auto u32 = [&](const char *key, int64_t value) {
    w.addU32(arch + "." + key, static_cast<uint32_t>(value));
  };
  auto f32 = [&](const char *key, double value) {
    w.addF32(arch + "." + key, static_cast<float>(value));
  };
  u32("context_length", s.contextLength);
  u32("embedding_length", s.dim);
  u32("block_count", s.encoderDecoder() ? s.nEncoderLayers : s.nLayers);
  if (s.encoderDecoder()) {
    u32("decoder_block_count", s.nLayers);
    u32("decoder_start_token_id", s.decoderStartTokenId);
  }
  if (s.relativeBuckets > 0)
    u32("attention.relative_buckets_count", s.relativeBuckets);
  u32("feed_forward_length", s.hiddenDim);
  u32("attention.head_count", s.nHeads);
  if (s.family == Family::Gpt2) {
    f32("attention.layer_norm_epsilon", s.normEps);
    return;
  }
  u32("attention.head_count_kv", s.nKvHeads);
  // llama.cpp's head size when it is its own; T5's d_kv always (its reader
  // above takes no default).
  if (s.headDim * s.nHeads != s.dim || s.family == Family::T5) {
    u32("attention.key_length", s.headDim);
    u32("attention.value_length", s.headDim);
  }
  switch (s.norm) {
  case Norm::RmsNorm:
    f32("attention.layer_norm_rms_epsilon", s.normEps);
    break;
  case Norm::LayerNorm:
    f32("attention.layer_norm_epsilon", s.normEps);
    break;
  }
  if (s.positions == Positions::Rope) {
    u32("rope.dimension_count", s.rotaryDim);
    f32("rope.freq_base", s.ropeTheta);
    if (s.ropeScale != 1.0) {
      w.addString(arch + ".rope.scaling.type", "linear");
      f32("rope.scaling.factor", s.ropeScale);
    }
    if (!s.ropeShortFactors.empty()) { // LongRoPE: its factors are tensors
      u32("rope.scaling.original_context_length", s.ropeOriginalContext);
      f32("rope.scaling.attn_factor", s.ropeAttnFactor);
    }
  }
  if (s.slidingWindow > 0)
    u32("attention.sliding_window", s.slidingWindow);
  if (s.attnSoftcap > 0.0)
    f32("attn_logit_softcapping", s.attnSoftcap);
  if (s.finalSoftcap > 0.0)
    f32("final_logit_softcapping", s.finalSoftcap);
  if (s.family == Family::GptNeox)
    w.addBool(arch + ".use_parallel_residual", s.parallelResidual);
  if (s.encoder())
    w.addBool(arch + ".attention.causal", false);
  if (s.family == Family::Mpt) {
    f32("attention.max_alibi_bias", s.alibi ? s.alibiMaxBias : 0.0);
    if (s.clipQkv > 0.0)
      f32("attention.clamp_kqv", s.clipQkv);
  }
}

void tfm::rt::addGgufModelConstants(const ModelSpec &s, GgufWriter &w) {
  for (const RopeFactorTensor &t : ropeFactorTensors()) {
    const std::vector<double> &factors = s.*t.factors;
    if (!factors.empty())
      w.addF32Tensor(t.name, std::vector<float>(factors.begin(), factors.end()));
  }
}
