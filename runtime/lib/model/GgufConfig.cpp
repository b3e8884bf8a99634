//===- GgufConfig.cpp - The model config a GGUF file describes ------------===//
#include "tfm/runtime/GgufConfig.h"

#include "tfm/common/UntrustedText.h"

#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/JSON.h"

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

// llama.cpp's converters write these keys (gguf-py's constants).
const FieldSource kLlamaFields[] = {
    {"hidden_size", "embedding_length"},
    {"intermediate_size", "feed_forward_length"},
    {"num_hidden_layers", "block_count"},
    {"num_attention_heads", "attention.head_count"},
    {"num_key_value_heads", "attention.head_count_kv", false, true},
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
    return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                   file.path() + ": tensor 'token_embd.weight': " +
                                       (embedding ? "not a matrix" : "missing") +
                                       "; expected [vocab, embedding_length]");
  return embedding->shape[0];
}

} // namespace

llvm::Expected<std::string> tfm::rt::configJsonFromGguf(const GgufFile &file,
                                                         const std::string &name) {
  llvm::Expected<std::string> arch = file.getString("general.architecture");
  if (!arch)
    return arch.takeError();
  if (*arch != "llama" && *arch != "gpt2")
    return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                   file.path() + ": metadata 'general.architecture' is " +
                                       quoted(*arch) + "; expected \"llama\" or \"gpt2\"");
  llvm::Expected<int64_t> vocab = vocabSize(file);
  if (!vocab)
    return vocab.takeError();

  json::Object config{{"name", name}, {"model_type", *arch}, {"vocab_size", *vocab}};
  for (const char *key : {"bos_token_id", "eos_token_id"}) {
    std::string full = std::string("tokenizer.ggml.") + key;
    if (file.has(full)) {
      llvm::Expected<int64_t> id = file.getInteger(full);
      if (!id)
        return id.takeError();
      config[key] = *id;
    }
  }
  bool llama = *arch == "llama";
  if (llvm::Error e = readFields(file, *arch, llama ? llvm::ArrayRef(kLlamaFields)
                                                    : llvm::ArrayRef(kGpt2Fields),
                                 config))
    return std::move(e);
  if (llama) {
    // llama.cpp's converter leaves output.weight out when the head is tied.
    config["tie_word_embeddings"] = file.findTensor("output.weight") == nullptr;
  } else {
    // ggml's GPT-2 graph uses the tanh GELU and the token embedding as the
    // head (its converter stores output.weight as a copy of it).
    config["activation_function"] = "gelu_new";
    config["tie_word_embeddings"] = true;
  }
  std::string text;
  llvm::raw_string_ostream os(text);
  os << llvm::formatv("{0:2}", json::Value(std::move(config)));
  return text;
}

void tfm::rt::addGgufModelMetadata(const ModelSpec &s, GgufWriter &w) {
  w.addString("general.architecture", s.family);
  w.addString("general.name", s.name);
  const std::string arch = s.family;
  auto u32 = [&](const char *key, int64_t value) {
    w.addU32(arch + "." + key, static_cast<uint32_t>(value));
  };
  u32("context_length", s.contextLength);
  u32("embedding_length", s.dim);
  u32("block_count", s.nLayers);
  u32("feed_forward_length", s.hiddenDim);
  u32("attention.head_count", s.nHeads);
  if (s.family == "gpt2") {
    w.addF32(arch + ".attention.layer_norm_epsilon", static_cast<float>(s.normEps));
    return;
  }
  u32("attention.head_count_kv", s.nKvHeads);
  u32("rope.dimension_count", s.headDim);
  w.addF32(arch + ".attention.layer_norm_rms_epsilon", static_cast<float>(s.normEps));
  w.addF32(arch + ".rope.freq_base", static_cast<float>(s.ropeTheta));
}
