//===- GgufConfig.cpp - The model config a GGUF file describes ------------===//
#include "tfm/runtime/GgufConfig.h"

#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/JSON.h"

#include <optional>

using namespace tfm::rt;
namespace json = llvm::json;

namespace {

/// Reads "<arch>.<key>" metadata into a config object under HF field names.
class MetadataReader {
public:
  MetadataReader(const GgufFile &file, std::string arch) : file(file), arch(std::move(arch)) {}

  llvm::Error integer(json::Object &config, const char *field, const std::string &key) {
    llvm::Expected<int64_t> value = file.getInteger(arch + "." + key);
    if (!value)
      return value.takeError();
    config[field] = *value;
    return llvm::Error::success();
  }

  llvm::Error real(json::Object &config, const char *field, const std::string &key,
                   std::optional<double> fallback = std::nullopt) {
    std::string full = arch + "." + key;
    if (!file.has(full) && fallback) {
      config[field] = *fallback;
      return llvm::Error::success();
    }
    llvm::Expected<double> value = file.getFloat(full);
    if (!value)
      return value.takeError();
    config[field] = *value;
    return llvm::Error::success();
  }

private:
  const GgufFile &file;
  std::string arch;
};

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
  llvm::Expected<int64_t> vocab = vocabSize(file);
  if (!vocab)
    return vocab.takeError();

  json::Object config{{"name", name}, {"model_type", *arch}, {"vocab_size", *vocab}};
  MetadataReader meta(file, *arch);
  for (const char *key : {"bos_token_id", "eos_token_id"}) {
    std::string full = std::string("tokenizer.ggml.") + key;
    if (file.has(full)) {
      llvm::Expected<int64_t> id = file.getInteger(full);
      if (!id)
        return id.takeError();
      config[key] = *id;
    }
  }

  llvm::Error e = llvm::Error::success();
  if (*arch == "llama") {
    e = llvm::joinErrors(std::move(e), meta.integer(config, "hidden_size", "embedding_length"));
    e = llvm::joinErrors(std::move(e), meta.integer(config, "intermediate_size", "feed_forward_length"));
    e = llvm::joinErrors(std::move(e), meta.integer(config, "num_hidden_layers", "block_count"));
    e = llvm::joinErrors(std::move(e), meta.integer(config, "num_attention_heads", "attention.head_count"));
    e = llvm::joinErrors(std::move(e), meta.integer(config, "max_position_embeddings", "context_length"));
    e = llvm::joinErrors(std::move(e), meta.real(config, "rms_norm_eps", "attention.layer_norm_rms_epsilon"));
    e = llvm::joinErrors(std::move(e), meta.real(config, "rope_theta", "rope.freq_base", 10000.0));
    config["num_key_value_heads"] = config["num_attention_heads"];
    if (file.has("llama.attention.head_count_kv"))
      e = llvm::joinErrors(std::move(e), meta.integer(config, "num_key_value_heads", "attention.head_count_kv"));
    // llama.cpp's converter leaves output.weight out when the head is tied.
    config["tie_word_embeddings"] = file.findTensor("output.weight") == nullptr;
  } else if (*arch == "gpt2") {
    e = llvm::joinErrors(std::move(e), meta.integer(config, "n_embd", "embedding_length"));
    e = llvm::joinErrors(std::move(e), meta.integer(config, "n_inner", "feed_forward_length"));
    e = llvm::joinErrors(std::move(e), meta.integer(config, "n_layer", "block_count"));
    e = llvm::joinErrors(std::move(e), meta.integer(config, "n_head", "attention.head_count"));
    e = llvm::joinErrors(std::move(e), meta.integer(config, "n_positions", "context_length"));
    e = llvm::joinErrors(std::move(e), meta.real(config, "layer_norm_epsilon", "attention.layer_norm_epsilon"));
    // ggml's GPT-2 graph uses the tanh GELU and the token embedding as the
    // head (its converter stores output.weight as a copy of it).
    config["activation_function"] = "gelu_new";
    config["tie_word_embeddings"] = true;
  } else {
    return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                   file.path() + ": metadata 'general.architecture' is '" + *arch +
                                       "'; expected 'llama' or 'gpt2'");
  }
  if (e)
    return std::move(e);
  std::string text;
  llvm::raw_string_ostream os(text);
  os << llvm::formatv("{0:2}", json::Value(std::move(config)));
  return text;
}
