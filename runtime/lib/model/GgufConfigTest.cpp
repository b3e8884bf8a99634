//===- GgufConfigTest.cpp - A GGUF's metadata as the config it came from --===//
//
// Each case is a Hugging Face config.json of one family. Its model is
// written as a GGUF the way tfm-weights writes one (llama.cpp's metadata
// keys, the tensors of the model), read back with configJsonFromGguf, and
// must parse to the same ModelSpec: what `tfm-run --model-dir FILE.gguf`
// compiles is what the file was made from.
//
//===----------------------------------------------------------------------===//
#include "tfm/runtime/GgufConfig.h"

#include "testing/TempFiles.h"

#include "tfm/common/TensorNames.h"

#include <gtest/gtest.h>

using namespace tfm;
using namespace tfm::rt;
using namespace tfm::rt::testing;

namespace {

struct ConfigCase {
  const char *name;
  const char *json;
};

// Small shapes; every switch a GGUF can carry for its architecture.
const ConfigCase kCases[] = {
    {"LlamaGqaLinearRope",
     R"({"model_type": "llama", "hidden_size": 64, "intermediate_size": 96,
         "num_hidden_layers": 2, "num_attention_heads": 4, "num_key_value_heads": 2,
         "vocab_size": 50, "max_position_embeddings": 128, "rms_norm_eps": 1e-06,
         "rope_theta": 500000.0, "rope_scaling": {"type": "linear", "factor": 4.0},
         "attention_bias": true, "tie_word_embeddings": false})"},
    {"Gpt2",
     R"({"model_type": "gpt2", "n_embd": 64, "n_inner": 256, "n_layer": 2, "n_head": 4,
         "vocab_size": 50, "bos_token_id": 0, "eos_token_id": 0, "n_positions": 64,
         "layer_norm_epsilon": 1e-05,
         "activation_function": "gelu_new"})"},
    {"GptNeoxPartialRotary",
     R"({"model_type": "gpt_neox", "hidden_size": 96, "intermediate_size": 384,
         "num_hidden_layers": 2, "num_attention_heads": 4, "vocab_size": 50,
         "max_position_embeddings": 256, "rotary_pct": 0.25, "rotary_emb_base": 10000,
         "layer_norm_eps": 1e-05, "use_parallel_residual": true})"},
    {"GptNeoxSequentialOddFraction",
     R"({"model_type": "gpt_neox", "hidden_size": 80, "intermediate_size": 160,
         "num_hidden_layers": 1, "num_attention_heads": 2, "vocab_size": 50,
         "max_position_embeddings": 64, "rotary_pct": 0.3, "rotary_emb_base": 20000,
         "use_parallel_residual": false, "tie_word_embeddings": true})"},
    {"Bloom",
     R"({"model_type": "bloom", "hidden_size": 64, "n_layer": 2, "n_head": 4,
         "vocab_size": 50, "layer_norm_epsilon": 1e-05, "seq_length": 4096})"},
    {"MptClip",
     R"({"model_type": "mpt", "d_model": 64, "n_heads": 4, "n_layers": 2,
         "expansion_ratio": 2, "max_seq_len": 512, "vocab_size": 50, "no_bias": false,
         "attn_config": {"alibi": true, "alibi_bias_max": 16, "clip_qkv": 6.5}})"},
    {"FalconMultiQuery",
     R"({"model_type": "falcon", "hidden_size": 64, "num_hidden_layers": 2,
         "num_attention_heads": 4, "vocab_size": 50, "multi_query": true,
         "parallel_attn": true, "bias": false, "alibi": false})"},
    {"FalconNewArchitectureTwoNorms",
     R"({"model_type": "falcon", "hidden_size": 64, "num_hidden_layers": 2,
         "num_attention_heads": 4, "num_kv_heads": 2, "new_decoder_architecture": true,
         "vocab_size": 50, "bias": true, "rope_theta": 1000000.0,
         "max_position_embeddings": 512})"},
    {"FalconNewArchitectureOneNorm",
     R"({"model_type": "falcon", "hidden_size": 64, "num_hidden_layers": 1,
         "num_attention_heads": 4, "num_kv_heads": 2, "new_decoder_architecture": true,
         "num_ln_in_parallel_attn": 1, "vocab_size": 50})"},
};

void PrintTo(const ConfigCase &c, std::ostream *os) { *os << c.name; }

/// `spec`'s model as tfm-weights lays out a GGUF: the metadata, the
/// special token ids a vocabulary (--vocab) brings, then every tensor as
/// f32 zeros.
std::string writeModelGguf(const ModelSpec &spec, const std::string &path) {
  GgufWriter w;
  addGgufModelMetadata(spec, w);
  w.addU32("tokenizer.ggml.bos_token_id", static_cast<uint32_t>(spec.bosTokenId));
  w.addU32("tokenizer.ggml.eos_token_id", static_cast<uint32_t>(spec.eosTokenId));
  for (const ModelTensor &t : modelTensors(spec))
    w.addTensor(t.name, t.shape, GgmlF32);
  return writeTensorFile(path, w, [&](size_t i, llvm::raw_ostream &out) {
    out.write_zeros(w.tensorBytes(i));
  });
}

llvm::Expected<ModelSpec> specFromGguf(const std::string &path, const std::string &name) {
  auto file = GgufFile::open(path);
  if (!file)
    return file.takeError();
  auto config = configJsonFromGguf(**file, name);
  if (!config)
    return config.takeError();
  return parseModelSpec(*config, path + " (metadata as config.json)");
}

class GgufConfigRoundTrip : public ::testing::TestWithParam<ConfigCase> {};

TEST_P(GgufConfigRoundTrip, MetadataReadsBackAsTheSameSpec) {
  std::string name = std::string("gguf_config_") + GetParam().name;
  std::string json = GetParam().json;
  json.insert(1, "\"name\": \"" + name + "\", ");
  llvm::Expected<ModelSpec> spec = parseModelSpec(json, GetParam().name);
  ASSERT_TRUE(bool(spec)) << llvm::toString(spec.takeError());

  std::string path = writeModelGguf(*spec, tempPath(name + ".gguf"));
  llvm::Expected<ModelSpec> back = specFromGguf(path, name);
  ASSERT_TRUE(bool(back)) << llvm::toString(back.takeError());
  EXPECT_EQ(back->canonicalJson(), spec->canonicalJson());
}

INSTANTIATE_TEST_SUITE_P(Families, GgufConfigRoundTrip, ::testing::ValuesIn(kCases),
                         [](const auto &info) { return std::string(info.param.name); });

TEST(GgufConfig, ArchitectureNamesAreLlamaCpps) {
  llvm::Expected<ModelSpec> spec = parseModelSpec(kCases[2].json, "neox");
  ASSERT_TRUE(bool(spec)) << llvm::toString(spec.takeError());
  auto file = GgufFile::open(writeModelGguf(*spec, tempPath("neox-arch.gguf")));
  ASSERT_TRUE(bool(file)) << llvm::toString(file.takeError());
  auto arch = (*file)->getString("general.architecture");
  ASSERT_TRUE(bool(arch)) << llvm::toString(arch.takeError());
  EXPECT_EQ(*arch, "gptneox");
  auto rotary = (*file)->getInteger("gptneox.rope.dimension_count");
  ASSERT_TRUE(bool(rotary)) << llvm::toString(rotary.takeError());
  EXPECT_EQ(*rotary, 6); // a quarter of the 24-wide heads
}

std::string configError(GgufWriter &w, const std::string &name) {
  w.addTensor("token_embd.weight", {50, 64}, GgmlF32);
  std::string path = writeTensorFile(tempPath(name), w, [&](size_t i, llvm::raw_ostream &out) {
    out.write_zeros(w.tensorBytes(i));
  });
  auto file = GgufFile::open(path);
  if (!file)
    return llvm::toString(file.takeError());
  auto config = configJsonFromGguf(**file, "x");
  return config ? "" : llvm::toString(config.takeError());
}

TEST(GgufConfig, RefusesAnArchitectureItCannotBuild) {
  GgufWriter w;
  w.addString("general.architecture", "deepseek2");
  std::string error = configError(w, "deepseek2.gguf");
  // Each name once, though Mistral is read from "llama" too.
  EXPECT_NE(error.find("deepseek2.gguf: metadata 'general.architecture' is \"deepseek2\"; "
                       "expected one of \"llama\", \"qwen2\""),
            std::string::npos)
      << error;
  EXPECT_EQ(error.find("\"llama\"", error.find("\"llama\"") + 1), std::string::npos) << error;
}

TEST(GgufConfig, RefusesABloomFeedForwardOtherThanFourTimesTheWidth) {
  GgufWriter w;
  w.addString("general.architecture", "bloom");
  for (auto [key, value] : {std::pair{"context_length", 64}, {"embedding_length", 64},
                            {"block_count", 1}, {"attention.head_count", 4},
                            {"feed_forward_length", 200}})
    w.addU32(std::string("bloom.") + key, value);
  w.addF32("bloom.attention.layer_norm_epsilon", 1e-5f);
  std::string error = configError(w, "bloom-ffn.gguf");
  EXPECT_NE(error.find("bloom-ffn.gguf: metadata 'bloom.feed_forward_length' is 200; expected "
                       "4 * 'bloom.embedding_length' (256)"),
            std::string::npos)
      << error;
}

} // namespace
