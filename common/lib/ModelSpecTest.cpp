//===- ModelSpecTest.cpp - parseModelSpec: clear errors, real configs -----===//
//
// Every refusal must name the file and the field so a user can fix the config
// without reading our code; a config.json downloaded from Hugging Face must
// parse unedited.
//
//===----------------------------------------------------------------------===//
#include "tfm/common/Hash.h"
#include "tfm/common/ModelSpec.h"

#include "llvm/Support/JSON.h"
#include "llvm/Support/raw_ostream.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <filesystem>

using tfm::ModelSpec;
using tfm::Activation;
using tfm::Family;
using tfm::FfnKind;
using tfm::Norm;
using tfm::NormPosition;
using tfm::Positions;

namespace {

/// A parse as the tests look at it: the spec, or the error's text.
struct ParsedSpec {
  bool ok = false;
  ModelSpec spec;
  std::string error;
};

ParsedSpec adapt(llvm::Expected<ModelSpec> parsed) {
  ParsedSpec out;
  if (parsed) {
    out.ok = true;
    out.spec = std::move(*parsed);
  } else {
    out.error = llvm::toString(parsed.takeError());
  }
  return out;
}

ParsedSpec parseModelSpec(llvm::StringRef text, const std::string &path) {
  return adapt(tfm::parseModelSpec(text, path));
}

ParsedSpec loadSpec(const std::string &path) { return adapt(tfm::loadModelSpec(path)); }

const char *const kPath = "models/tiny/config.json";

/// A valid small Llama config; tests change or remove one field at a time.
llvm::json::Object validConfig() {
  return llvm::json::Object{{"model_type", "llama"},
                            {"hidden_size", 256},
                            {"intermediate_size", 688},
                            {"num_hidden_layers", 2},
                            {"num_attention_heads", 8},
                            {"num_key_value_heads", 2},
                            {"vocab_size", 1000},
                            {"max_position_embeddings", 512},
                            {"rms_norm_eps", 1e-5},
                            {"rope_theta", 10000.0},
                            {"tie_word_embeddings", false}};
}

std::string text(llvm::json::Object obj) {
  std::string s;
  llvm::raw_string_ostream os(s);
  os << llvm::json::Value(std::move(obj));
  return s;
}

ParsedSpec parse(llvm::json::Object obj) { return parseModelSpec(text(std::move(obj)), kPath); }

/// Asserts a refusal whose message names the file and `field`.
void expectRefusal(const ParsedSpec &parsed, const std::string &field) {
  ASSERT_FALSE(parsed.ok) << "expected a refusal naming '" << field << "'";
  EXPECT_NE(parsed.error.find(kPath), std::string::npos) << parsed.error;
  EXPECT_NE(parsed.error.find("'" + field + "'"), std::string::npos) << parsed.error;
}

TEST(ModelSpecTest, ValidConfigGivesEveryField) {
  ParsedSpec parsed = parse(validConfig());
  ASSERT_TRUE(parsed.ok) << parsed.error;
  const ModelSpec &s = parsed.spec;
  EXPECT_EQ(s.family, Family::Llama);
  EXPECT_EQ(s.dim, 256);
  EXPECT_EQ(s.hiddenDim, 688);
  EXPECT_EQ(s.nLayers, 2);
  EXPECT_EQ(s.nHeads, 8);
  EXPECT_EQ(s.nKvHeads, 2);
  EXPECT_EQ(s.headDim, 32);
  EXPECT_EQ(s.qDim(), 256);
  EXPECT_EQ(s.kvDim(), 64);
  EXPECT_EQ(s.vocabSize, 1000);
  EXPECT_EQ(s.contextLength, 512);
  EXPECT_DOUBLE_EQ(s.normEps, 1e-5);
  EXPECT_DOUBLE_EQ(s.ropeTheta, 10000.0);
  EXPECT_FALSE(s.tiedEmbeddings);
  EXPECT_EQ(s.name, "tiny"); // a folder's config.json is named after the folder
}

TEST(ModelSpecTest, OptionalFieldsTakeHuggingFaceDefaults) {
  llvm::json::Object obj = validConfig();
  for (const char *field : {"num_key_value_heads", "rms_norm_eps", "rope_theta", "tie_word_embeddings"})
    obj.erase(field);
  ParsedSpec parsed = parse(std::move(obj));
  ASSERT_TRUE(parsed.ok) << parsed.error;
  EXPECT_EQ(parsed.spec.nKvHeads, parsed.spec.nHeads);
  EXPECT_DOUBLE_EQ(parsed.spec.normEps, 1e-6);
  EXPECT_DOUBLE_EQ(parsed.spec.ropeTheta, 10000.0);
  EXPECT_FALSE(parsed.spec.tiedEmbeddings);
}

TEST(ModelSpecTest, ExplicitHeadDimIsKept) {
  llvm::json::Object obj = validConfig();
  obj["head_dim"] = 64;
  ParsedSpec parsed = parse(std::move(obj));
  ASSERT_TRUE(parsed.ok) << parsed.error;
  EXPECT_EQ(parsed.spec.headDim, 64);
  EXPECT_EQ(parsed.spec.qDim(), 512);
}

TEST(ModelSpecTest, RefusesHiddenSizeNotDivisibleByHeads) {
  llvm::json::Object obj = validConfig();
  obj["hidden_size"] = 250;
  expectRefusal(parse(std::move(obj)), "hidden_size");
}

TEST(ModelSpecTest, ExplicitHeadDimNeedNotDivideHiddenSize) {
  llvm::json::Object obj = validConfig();
  obj["hidden_size"] = 250;
  obj["head_dim"] = 32;
  ParsedSpec parsed = parse(std::move(obj));
  ASSERT_TRUE(parsed.ok) << parsed.error;
  EXPECT_EQ(parsed.spec.dim, 250);
  EXPECT_EQ(parsed.spec.headDim, 32);
  EXPECT_EQ(parsed.spec.qDim(), 256);
  EXPECT_EQ(parsed.spec.kvDim(), 64);
}

TEST(ModelSpecTest, TokenIdListTakesTheFirst) {
  llvm::json::Object obj = validConfig();
  obj["vocab_size"] = 128256;
  obj["eos_token_id"] = llvm::json::Array{128001, 128009};
  ParsedSpec parsed = parse(std::move(obj));
  ASSERT_TRUE(parsed.ok) << parsed.error;
  EXPECT_EQ(parsed.spec.eosTokenId, 128001);

  for (llvm::json::Value bad : {llvm::json::Value(llvm::json::Array{}),
                                llvm::json::Value(llvm::json::Array{"2"})}) {
    llvm::json::Object refused = validConfig();
    refused["eos_token_id"] = std::move(bad);
    expectRefusal(parse(std::move(refused)), "eos_token_id");
  }
}

TEST(ModelSpecTest, LlamaFeatures) {
  ParsedSpec parsed = parse(validConfig());
  ASSERT_TRUE(parsed.ok) << parsed.error;
  EXPECT_EQ(parsed.spec.norm, Norm::RmsNorm);
  EXPECT_EQ(parsed.spec.activation, Activation::Silu);
  EXPECT_EQ(parsed.spec.positions, Positions::Rope);
  EXPECT_FALSE(parsed.spec.qkvBias || parsed.spec.attnOutBias || parsed.spec.ffnBias);
  EXPECT_EQ(parsed.spec.ffn, FfnKind::Gated);
  EXPECT_FALSE(parsed.spec.fusedQkv);
  EXPECT_TRUE(parsed.spec.ropeInterleaved);
  EXPECT_EQ(parsed.spec.rotaryDim, parsed.spec.headDim);
}

TEST(ModelSpecTest, RefusesKvHeadsThatDoNotDivideHeads) {
  llvm::json::Object obj = validConfig();
  obj["num_key_value_heads"] = 3;
  expectRefusal(parse(std::move(obj)), "num_key_value_heads");
}

TEST(ModelSpecTest, RefusesMoreKvHeadsThanHeads) {
  llvm::json::Object obj = validConfig();
  obj["num_key_value_heads"] = 16;
  expectRefusal(parse(std::move(obj)), "num_key_value_heads");
}

TEST(ModelSpecTest, RefusesOddHeadDim) {
  llvm::json::Object obj = validConfig();
  obj["head_dim"] = 33;
  expectRefusal(parse(std::move(obj)), "head_dim");
}

TEST(ModelSpecTest, RefusesEachMissingRequiredField) {
  for (const char *field : {"model_type", "hidden_size", "intermediate_size", "num_hidden_layers",
                            "num_attention_heads", "vocab_size", "max_position_embeddings"}) {
    SCOPED_TRACE(field);
    llvm::json::Object obj = validConfig();
    obj.erase(field);
    ParsedSpec parsed = parse(std::move(obj));
    expectRefusal(parsed, field);
    EXPECT_NE(parsed.error.find("missing"), std::string::npos) << parsed.error;
  }
}

TEST(ModelSpecTest, RefusesNullRequiredField) {
  llvm::json::Object obj = validConfig();
  obj["vocab_size"] = nullptr;
  expectRefusal(parse(std::move(obj)), "vocab_size");
}

TEST(ModelSpecTest, RefusesMistypedFields) {
  const std::pair<const char *, llvm::json::Value> mistyped[] = {
      {"hidden_size", "256"},
      {"num_hidden_layers", 2.5},
      {"num_attention_heads", llvm::json::Array{8}},
      {"rms_norm_eps", "1e-5"},
      {"rope_theta", true},
      {"tie_word_embeddings", 1},
      {"model_type", 7},
      {"hidden_act", 3},
  };
  for (const auto &[field, value] : mistyped) {
    SCOPED_TRACE(field);
    llvm::json::Object obj = validConfig();
    obj[field] = value;
    ParsedSpec parsed = parse(std::move(obj));
    expectRefusal(parsed, field);
    EXPECT_NE(parsed.error.find("expected"), std::string::npos) << parsed.error;
  }
}

TEST(ModelSpecTest, RefusesNonPositiveSizes) {
  for (int64_t bad : {0, -4}) {
    SCOPED_TRACE(bad);
    llvm::json::Object obj = validConfig();
    obj["num_hidden_layers"] = bad;
    ParsedSpec parsed = parse(std::move(obj));
    expectRefusal(parsed, "num_hidden_layers");
    EXPECT_NE(parsed.error.find(std::to_string(bad)), std::string::npos) << parsed.error;
  }
}

TEST(ModelSpecTest, RefusesUnknownModelType) {
  llvm::json::Object obj = validConfig();
  obj["model_type"] = "mamba";
  ParsedSpec parsed = parse(std::move(obj));
  expectRefusal(parsed, "model_type");
  EXPECT_NE(parsed.error.find("mamba"), std::string::npos) << parsed.error;
}

TEST(ModelSpecTest, RefusesFeaturesItDoesNotCompile) {
  const std::pair<const char *, llvm::json::Value> unsupported[] = {
      {"hidden_act", "swiglu_oai"},
      {"rope_scaling", llvm::json::Object{{"type", "dynamic"}, {"factor", 2.0}}},
      {"rope_scaling", llvm::json::Object{{"rope_type", "llama3"}, {"factor", 8.0}}},
      {"partial_rotary_factor", 1.5},
  };
  for (const auto &[field, value] : unsupported) {
    SCOPED_TRACE(field);
    llvm::json::Object obj = validConfig();
    obj[field] = value;
    expectRefusal(parse(std::move(obj)), field);
  }
}

TEST(ModelSpecTest, LlamaVariants) {
  llvm::json::Object obj = validConfig();
  obj["attention_bias"] = true;
  obj["mlp_bias"] = true;
  obj["hidden_act"] = "gelu_pytorch_tanh"; // GeGLU
  obj["rope_scaling"] = llvm::json::Object{{"type", "linear"}, {"factor", 4.0}};
  obj["partial_rotary_factor"] = 0.5;
  ParsedSpec parsed = parse(std::move(obj));
  ASSERT_TRUE(parsed.ok) << parsed.error;
  EXPECT_TRUE(parsed.spec.qkvBias && parsed.spec.attnOutBias && parsed.spec.ffnBias);
  EXPECT_EQ(parsed.spec.activation, Activation::GeluTanh);
  EXPECT_EQ(parsed.spec.ffn, FfnKind::Gated);
  EXPECT_DOUBLE_EQ(parsed.spec.ropeScale, 4.0);
  EXPECT_EQ(parsed.spec.rotaryDim, 16);
}

TEST(ModelSpecTest, Llama3RopeScalingAndEosList) {
  llvm::json::Object obj = validConfig();
  obj["rope_theta"] = 500000.0;
  // Llama 3.1's values: pairs of wavelength under 8192/4 kept, over 8192
  // slowed 8 times, those between blended.
  obj["rope_scaling"] = llvm::json::Object{{"rope_type", "llama3"},
                                           {"factor", 8.0},
                                           {"low_freq_factor", 1.0},
                                           {"high_freq_factor", 4.0},
                                           {"original_max_position_embeddings", 8192}};
  obj["eos_token_id"] = llvm::json::Array{2, 7, 9};
  ParsedSpec parsed = parse(std::move(obj));
  ASSERT_TRUE(parsed.ok) << parsed.error;
  const std::vector<double> &f = parsed.spec.ropeFreqFactors;
  ASSERT_EQ(f.size(), 16u); // head_dim 32
  EXPECT_DOUBLE_EQ(f[0], 1.0);   // wavelength 2 pi
  EXPECT_DOUBLE_EQ(f[15], 8.0);  // 2 pi * 500000^(30/32), past 8192
  for (double factor : f)
    EXPECT_TRUE(factor >= 1.0 && factor <= 8.0) << factor;
  EXPECT_TRUE(std::any_of(f.begin(), f.end(), [](double x) { return x > 1.0 && x < 8.0; }));
  EXPECT_EQ(parsed.spec.eosTokenId, 2);
  EXPECT_EQ(parsed.spec.eosTokenIdList, (std::vector<int64_t>{2, 7, 9}));
  EXPECT_DOUBLE_EQ(parsed.spec.ropeScale, 1.0);
}

/// Phi-3-mini-128k's shape of LongRoPE, 16 pairs: the short and long
/// factors, the pretrained context beside the trained one.
llvm::json::Object longRopeConfig() {
  llvm::json::Object obj = validConfig();
  obj["model_type"] = "phi3";
  obj["max_position_embeddings"] = 4096;
  obj["original_max_position_embeddings"] = 512;
  llvm::json::Array shortFactors, longFactors;
  for (int i = 0; i < 16; ++i) {
    shortFactors.push_back(1.0 + 0.01 * i);
    longFactors.push_back(1.0 + 2.0 * i);
  }
  obj["rope_scaling"] = llvm::json::Object{{"type", "longrope"},
                                           {"short_factor", std::move(shortFactors)},
                                           {"long_factor", std::move(longFactors)}};
  return obj;
}

TEST(ModelSpecTest, LongRopeFactorsForTheCompiledContext) {
  ParsedSpec parsed = parse(longRopeConfig());
  ASSERT_TRUE(parsed.ok) << parsed.error;
  ModelSpec s = parsed.spec;
  EXPECT_EQ(s.ropeOriginalContext, 512);
  EXPECT_DOUBLE_EQ(s.ropeShortFactors[15], 1.15);
  EXPECT_DOUBLE_EQ(s.ropeLongFactors[15], 31.0);
  // transformers' attention factor for a scale of 4096 / 512 = 8.
  EXPECT_DOUBLE_EQ(s.ropeAttnFactor, std::sqrt(1.0 + std::log(8.0) / std::log(512.0)));
  EXPECT_EQ(&ropeFactorsOf(s), &s.ropeLongFactors); // 4096 positions, past 512
  s.contextLength = 512;                             // tfmc --context 512
  EXPECT_EQ(&ropeFactorsOf(s), &s.ropeShortFactors);
  // A given attention factor is kept.
  llvm::json::Object given = longRopeConfig();
  given.getObject("rope_scaling")->insert({"attention_factor", 1.5});
  ParsedSpec withFactor = parse(std::move(given));
  ASSERT_TRUE(withFactor.ok) << withFactor.error;
  EXPECT_DOUBLE_EQ(withFactor.spec.ropeAttnFactor, 1.5);
  // Each list has a factor per pair.
  llvm::json::Object shortList = longRopeConfig();
  (*shortList.getObject("rope_scaling"))["long_factor"] = llvm::json::Array{1.0, 2.0};
  ParsedSpec refused = parse(std::move(shortList));
  expectRefusal(refused, "rope_scaling");
  EXPECT_NE(refused.error.find("long_factor [1,2], expected a positive number per rotated "
                               "pair (16, LongRoPE)"),
            std::string::npos)
      << refused.error;
  // The canonical config states all four.
  ParsedSpec back =
      adapt(tfm::parseCanonicalSpec(parsed.spec.canonicalJson(), "manifest.json", "config."));
  ASSERT_TRUE(back.ok) << back.error;
  EXPECT_EQ(back.spec.ropeLongFactors, parsed.spec.ropeLongFactors);
  EXPECT_DOUBLE_EQ(back.spec.ropeAttnFactor, parsed.spec.ropeAttnFactor);
}

TEST(ModelSpecTest, RefusesAnOddRotaryWidthNamingBothFields) {
  llvm::json::Object obj = validConfig();
  obj["head_dim"] = 10;
  obj["partial_rotary_factor"] = 0.5; // 5 columns
  ParsedSpec parsed = parse(std::move(obj));
  expectRefusal(parsed, "partial_rotary_factor");
  EXPECT_NE(parsed.error.find("head_dim"), std::string::npos) << parsed.error;
}

TEST(ModelSpecTest, RefusesInvalidJson) {
  ParsedSpec parsed = parseModelSpec("{\"model_type\": \"llama\", \"hidden_size\": }", kPath);
  ASSERT_FALSE(parsed.ok);
  EXPECT_NE(parsed.error.find(kPath), std::string::npos) << parsed.error;
  EXPECT_NE(parsed.error.find("JSON"), std::string::npos) << parsed.error;
}

TEST(ModelSpecTest, RefusesNonObjectTopLevel) {
  ParsedSpec parsed = parseModelSpec("[1, 2, 3]", kPath);
  ASSERT_FALSE(parsed.ok);
  EXPECT_NE(parsed.error.find(kPath), std::string::npos) << parsed.error;
  EXPECT_NE(parsed.error.find("object"), std::string::npos) << parsed.error;
}

TEST(ModelSpecTest, LoadNamesAMissingFile) {
  ParsedSpec parsed = loadSpec("no/such/config.json");
  ASSERT_FALSE(parsed.ok);
  EXPECT_NE(parsed.error.find("no/such/config.json"), std::string::npos) << parsed.error;
}

// meta-llama/Llama-2-7b-hf's config.json as published, every field kept.
const char *const kLlama2HfConfig = R"({
  "_name_or_path": "meta-llama/Llama-2-7b-hf",
  "architectures": ["LlamaForCausalLM"],
  "bos_token_id": 1,
  "eos_token_id": 2,
  "hidden_act": "silu",
  "hidden_size": 4096,
  "initializer_range": 0.02,
  "intermediate_size": 11008,
  "max_position_embeddings": 4096,
  "model_type": "llama",
  "num_attention_heads": 32,
  "num_hidden_layers": 32,
  "num_key_value_heads": 32,
  "pad_token_id": null,
  "pretraining_tp": 1,
  "rms_norm_eps": 1e-05,
  "rope_scaling": null,
  "tie_word_embeddings": false,
  "torch_dtype": "float16",
  "transformers_version": "4.31.0.dev0",
  "use_cache": true,
  "vocab_size": 32000
})";

TEST(ModelSpecTest, HuggingFaceLlama2ConfigParsesUnedited) {
  ParsedSpec parsed = parseModelSpec(kLlama2HfConfig, "hub/Llama-2-7b-hf/config.json");
  ASSERT_TRUE(parsed.ok) << parsed.error;
  const ModelSpec &s = parsed.spec;
  EXPECT_EQ(s.name, "Llama_2_7b_hf");
  EXPECT_EQ(s.dim, 4096);
  EXPECT_EQ(s.hiddenDim, 11008);
  EXPECT_EQ(s.nLayers, 32);
  EXPECT_EQ(s.nHeads, 32);
  EXPECT_EQ(s.nKvHeads, 32);
  EXPECT_EQ(s.headDim, 128);
  EXPECT_EQ(s.vocabSize, 32000);
  EXPECT_EQ(s.contextLength, 4096);
  EXPECT_DOUBLE_EQ(s.normEps, 1e-5);
  EXPECT_FALSE(s.tiedEmbeddings);
  EXPECT_EQ(s.bosTokenId, 1);
  EXPECT_EQ(s.eosTokenId, 2);
}

// TinyLlama/TinyLlama-1.1B-Chat-v1.0's config.json: grouped-query attention
// and the newer fields (attention_bias, attention_dropout, rope_theta).
const char *const kTinyLlamaHfConfig = R"({
  "architectures": ["LlamaForCausalLM"],
  "attention_bias": false,
  "attention_dropout": 0.0,
  "bos_token_id": 1,
  "eos_token_id": 2,
  "hidden_act": "silu",
  "hidden_size": 2048,
  "initializer_range": 0.02,
  "intermediate_size": 5632,
  "max_position_embeddings": 2048,
  "model_type": "llama",
  "num_attention_heads": 32,
  "num_hidden_layers": 22,
  "num_key_value_heads": 4,
  "pretraining_tp": 1,
  "rms_norm_eps": 1e-05,
  "rope_scaling": null,
  "rope_theta": 10000.0,
  "tie_word_embeddings": false,
  "torch_dtype": "bfloat16",
  "transformers_version": "4.35.0",
  "use_cache": true,
  "vocab_size": 32000
})";

TEST(ModelSpecTest, HuggingFaceGroupedQueryConfigParsesUnedited) {
  ParsedSpec parsed = parseModelSpec(kTinyLlamaHfConfig, "TinyLlama-1.1B/config.json");
  ASSERT_TRUE(parsed.ok) << parsed.error;
  EXPECT_EQ(parsed.spec.nKvHeads, 4);
  EXPECT_EQ(parsed.spec.headDim, 64);
  EXPECT_EQ(parsed.spec.kvDim(), 256);
  EXPECT_EQ(parsed.spec.nLayers, 22);
}

TEST(ModelSpecTest, CanonicalJsonIdentifiesTheConfig) {
  ParsedSpec a = parse(validConfig());
  llvm::json::Object changed = validConfig();
  changed["rope_theta"] = 500000.0;
  ParsedSpec b = parse(std::move(changed));
  ASSERT_TRUE(a.ok && b.ok);
  EXPECT_EQ(a.spec.canonicalJson(), parse(validConfig()).spec.canonicalJson());
  EXPECT_NE(tfm::contentHash(a.spec.canonicalJson()), tfm::contentHash(b.spec.canonicalJson()));
}

TEST(ModelSpecTest, ContentHashIsXxh3) {
  // XXH3-64 (seed 0) of the empty input, as the xxHash reference gives it.
  EXPECT_EQ(tfm::contentHash(""), "2d06800538d394c2");
  EXPECT_EQ(tfm::contentHash("foobar").size(), 16u);
  EXPECT_NE(tfm::contentHash("foobar"), tfm::contentHash("foobaz"));
}

// openai-community/gpt2's config.json as published, every field kept.
const char *const kGpt2HfConfig = R"({
  "activation_function": "gelu_new",
  "architectures": ["GPT2LMHeadModel"],
  "attn_pdrop": 0.1,
  "bos_token_id": 50256,
  "embd_pdrop": 0.1,
  "eos_token_id": 50256,
  "initializer_range": 0.02,
  "layer_norm_epsilon": 1e-05,
  "model_type": "gpt2",
  "n_ctx": 1024,
  "n_embd": 768,
  "n_head": 12,
  "n_layer": 12,
  "n_positions": 1024,
  "resid_pdrop": 0.1,
  "summary_activation": null,
  "summary_first_dropout": 0.1,
  "summary_proj_to_labels": true,
  "summary_type": "cls_index",
  "summary_use_proj": true,
  "task_specific_params": {"text-generation": {"do_sample": true, "max_length": 50}},
  "vocab_size": 50257
})";

TEST(ModelSpecTest, HuggingFaceGpt2ConfigParsesUnedited) {
  ParsedSpec parsed = parseModelSpec(kGpt2HfConfig, "hub/gpt2/config.json");
  ASSERT_TRUE(parsed.ok) << parsed.error;
  const ModelSpec &s = parsed.spec;
  EXPECT_EQ(s.name, "gpt2");
  EXPECT_EQ(s.family, Family::Gpt2);
  EXPECT_EQ(s.dim, 768);
  EXPECT_EQ(s.hiddenDim, 3072);
  EXPECT_EQ(s.nLayers, 12);
  EXPECT_EQ(s.nHeads, 12);
  EXPECT_EQ(s.nKvHeads, 12);
  EXPECT_EQ(s.headDim, 64);
  EXPECT_EQ(s.vocabSize, 50257);
  EXPECT_EQ(s.contextLength, 1024);
  EXPECT_EQ(s.norm, Norm::LayerNorm);
  EXPECT_DOUBLE_EQ(s.normEps, 1e-5);
  EXPECT_EQ(s.activation, Activation::GeluTanh);
  EXPECT_EQ(s.positions, Positions::Learned);
  EXPECT_TRUE(s.qkvBias && s.attnOutBias && s.ffnBias && s.normBias);
  EXPECT_TRUE(s.tiedEmbeddings);
  EXPECT_TRUE(s.fusedQkv);
  EXPECT_EQ(s.ffn, FfnKind::Plain);
  EXPECT_EQ(s.bosTokenId, 50256);
  EXPECT_EQ(s.eosTokenId, 50256);
}

/// The fields GPT2Config has no default for in our reading; tests add or
/// change one at a time.
llvm::json::Object minimalGpt2() {
  return llvm::json::Object{{"model_type", "gpt2"}, {"n_embd", 200},  {"n_layer", 2},
                            {"n_head", 5},          {"vocab_size", 50257}, {"n_positions", 64}};
}

TEST(ModelSpecTest, Gpt2DefaultsAreGpt2Config) {
  ParsedSpec parsed = parse(minimalGpt2());
  ASSERT_TRUE(parsed.ok) << parsed.error;
  const ModelSpec &s = parsed.spec;
  EXPECT_EQ(s.headDim, 40);
  EXPECT_EQ(s.hiddenDim, 800); // n_inner absent: 4 * n_embd
  EXPECT_DOUBLE_EQ(s.normEps, 1e-5);
  EXPECT_EQ(s.activation, Activation::GeluTanh);
  EXPECT_TRUE(s.tiedEmbeddings);
  EXPECT_EQ(s.bosTokenId, 50256);
  EXPECT_EQ(s.eosTokenId, 50256);

  llvm::json::Object nullInner = minimalGpt2();
  nullInner["n_inner"] = nullptr;
  EXPECT_EQ(parse(std::move(nullInner)).spec.hiddenDim, 800);

  llvm::json::Object set = minimalGpt2();
  set["n_inner"] = 512;
  set["layer_norm_epsilon"] = 1e-6;
  set["tie_word_embeddings"] = false;
  ParsedSpec changed = parse(std::move(set));
  ASSERT_TRUE(changed.ok) << changed.error;
  EXPECT_EQ(changed.spec.hiddenDim, 512);
  EXPECT_DOUBLE_EQ(changed.spec.normEps, 1e-6);
  EXPECT_FALSE(changed.spec.tiedEmbeddings);
}

TEST(ModelSpecTest, TokenIdsMustIndexTheVocabulary) {
  for (const char *field : {"bos_token_id", "eos_token_id"}) {
    for (llvm::json::Object config : {validConfig(), minimalGpt2()}) {
      SCOPED_TRACE(field);
      // vocab_size 1000 in both: ids 0 and 999 are the ends of the table.
      config["vocab_size"] = 1000;
      config["bos_token_id"] = 0;
      config["eos_token_id"] = 0;
      for (int64_t id : {0, 999}) {
        llvm::json::Object ok = config;
        ok[field] = id;
        ParsedSpec parsed = parse(std::move(ok));
        ASSERT_TRUE(parsed.ok) << parsed.error;
      }
      for (llvm::json::Value bad : {llvm::json::Value(1000), llvm::json::Value(-1),
                                    llvm::json::Value(llvm::json::Array{1000, 2})}) {
        llvm::json::Object refused = config;
        refused[field] = std::move(bad);
        ParsedSpec parsed = parse(std::move(refused));
        expectRefusal(parsed, field);
        EXPECT_NE(parsed.error.find("below vocab_size"), std::string::npos) << parsed.error;
      }
    }
    // null stands for "none given": the family's default applies, and is
    // checked like a given id (GPT-2's 50256 is past a 1000-token vocabulary).
    llvm::json::Object llama = validConfig();
    llama[field] = nullptr;
    EXPECT_TRUE(parse(std::move(llama)).ok);
    llvm::json::Object gpt2 = minimalGpt2();
    gpt2["vocab_size"] = 1000;
    gpt2["bos_token_id"] = 0;
    gpt2["eos_token_id"] = 0;
    gpt2[field] = nullptr;
    ParsedSpec parsed = parse(std::move(gpt2));
    expectRefusal(parsed, field);
    EXPECT_NE(parsed.error.find("family default 50256"), std::string::npos) << parsed.error;
  }
}

TEST(ModelSpecTest, Gpt2ActivationForms) {
  const std::pair<const char *, Activation> forms[] = {{"gelu_new", Activation::GeluTanh},
                                                       {"gelu_pytorch_tanh", Activation::GeluTanh},
                                                       {"gelu", Activation::Gelu}};
  for (const auto &[given, activation] : forms) {
    SCOPED_TRACE(given);
    llvm::json::Object obj = minimalGpt2();
    obj["activation_function"] = given;
    ParsedSpec parsed = parse(std::move(obj));
    ASSERT_TRUE(parsed.ok) << parsed.error;
    EXPECT_EQ(parsed.spec.activation, activation);
  }
  llvm::json::Object relu = minimalGpt2();
  relu["activation_function"] = "relu";
  ParsedSpec parsedRelu = parse(std::move(relu));
  ASSERT_TRUE(parsedRelu.ok) << parsedRelu.error;
  EXPECT_EQ(parsedRelu.spec.activation, Activation::Relu);
  llvm::json::Object unknown = minimalGpt2();
  unknown["activation_function"] = "quick_gelu";
  ParsedSpec parsed = parse(std::move(unknown));
  expectRefusal(parsed, "activation_function");
  EXPECT_NE(parsed.error.find("\"quick_gelu\""), std::string::npos) << parsed.error;
}

TEST(ModelSpecTest, Gpt2NCtxIsAnAliasOfNPositions) {
  llvm::json::Object onlyCtx = minimalGpt2();
  onlyCtx.erase("n_positions");
  onlyCtx["n_ctx"] = 128;
  ParsedSpec parsed = parse(std::move(onlyCtx));
  ASSERT_TRUE(parsed.ok) << parsed.error;
  EXPECT_EQ(parsed.spec.contextLength, 128);

  llvm::json::Object equal = minimalGpt2();
  equal["n_ctx"] = 64;
  EXPECT_TRUE(parse(std::move(equal)).ok);

  llvm::json::Object mismatch = minimalGpt2();
  mismatch["n_ctx"] = 128;
  ParsedSpec refused = parse(std::move(mismatch));
  expectRefusal(refused, "n_ctx");
  EXPECT_NE(refused.error.find("128"), std::string::npos) << refused.error;
  EXPECT_NE(refused.error.find("64"), std::string::npos) << refused.error;
}

TEST(ModelSpecTest, Gpt2RefusesEachMissingRequiredField) {
  for (const char *field : {"n_embd", "n_layer", "n_head", "vocab_size", "n_positions"}) {
    SCOPED_TRACE(field);
    llvm::json::Object obj = minimalGpt2();
    obj.erase(field);
    ParsedSpec parsed = parse(std::move(obj));
    expectRefusal(parsed, field);
    EXPECT_NE(parsed.error.find("missing"), std::string::npos) << parsed.error;
  }
}

TEST(ModelSpecTest, Gpt2RefusesWhatItDoesNotCompile) {
  const std::pair<const char *, llvm::json::Value> unsupported[] = {
      {"scale_attn_weights", false},
      {"scale_attn_by_inverse_layer_idx", true},
      {"add_cross_attention", true},
      {"n_embd", 201},  // not a multiple of n_head
      {"n_inner", 0},
      {"layer_norm_epsilon", "1e-5"},
      {"activation_function", 1},
  };
  for (const auto &[field, value] : unsupported) {
    SCOPED_TRACE(field);
    llvm::json::Object obj = minimalGpt2();
    obj[field] = value;
    expectRefusal(parse(std::move(obj)), field);
  }
}

TEST(ModelSpecTest, CanonicalJsonRoundTrips) {
  for (ParsedSpec parsed : {parse(validConfig()), parse(minimalGpt2())}) {
    ASSERT_TRUE(parsed.ok) << parsed.error;
    std::string canonical = parsed.spec.canonicalJson();
    SCOPED_TRACE(canonical);
    ParsedSpec back = adapt(tfm::parseCanonicalSpec(canonical, "manifest.json", "config."));
    ASSERT_TRUE(back.ok) << back.error;
    EXPECT_EQ(back.spec.canonicalJson(), canonical);
    EXPECT_EQ(back.spec.norm, parsed.spec.norm);
    EXPECT_EQ(back.spec.activation, parsed.spec.activation);
    EXPECT_EQ(back.spec.positions, parsed.spec.positions);
    EXPECT_EQ(back.spec.qkvBias, parsed.spec.qkvBias);
  }
}

TEST(ModelSpecTest, CanonicalSpecRequiresEveryField) {
  std::string canonical = parse(minimalGpt2()).spec.canonicalJson();
  llvm::Expected<llvm::json::Value> value = llvm::json::parse(canonical);
  ASSERT_TRUE(bool(value));
  for (const auto &entry : *value->getAsObject()) {
    std::string key = entry.first.str();
    SCOPED_TRACE(key);
    llvm::json::Object without = *value->getAsObject();
    without.erase(key);
    ParsedSpec parsed =
        adapt(tfm::parseCanonicalSpec(text(std::move(without)), "lib/manifest.json", "config."));
    ASSERT_FALSE(parsed.ok);
    EXPECT_NE(parsed.error.find("lib/manifest.json"), std::string::npos) << parsed.error;
    EXPECT_NE(parsed.error.find("'config." + key + "'"), std::string::npos) << parsed.error;
  }
}

// Every config in the repository parses: presets and reference shapes.
TEST(ModelSpecTest, RepositoryConfigsParse) {
  namespace fs = std::filesystem;
  int count = 0;
  for (const char *folder : {"configs", "tests/reference/configs"}) {
    for (const fs::directory_entry &entry : fs::directory_iterator(fs::path(TFM_SOURCE_DIR) / folder)) {
      if (entry.path().extension() != ".json")
        continue;
      SCOPED_TRACE(entry.path().string());
      ParsedSpec parsed = loadSpec(entry.path().string());
      EXPECT_TRUE(parsed.ok) << parsed.error;
      ++count;
    }
  }
  EXPECT_GT(count, 0);
}

TEST(ModelSpecTest, PresetShapes) {
  ParsedSpec seventy = loadSpec(std::string(TFM_SOURCE_DIR) + "/configs/llama2-70b.json");
  ASSERT_TRUE(seventy.ok) << seventy.error;
  EXPECT_EQ(seventy.spec.dim, 8192);
  EXPECT_EQ(seventy.spec.hiddenDim, 28672);
  EXPECT_EQ(seventy.spec.nLayers, 80);
  EXPECT_EQ(seventy.spec.nHeads, 64);
  EXPECT_EQ(seventy.spec.nKvHeads, 8);
  EXPECT_EQ(seventy.spec.headDim, 128);

  ParsedSpec bench = loadSpec(std::string(TFM_SOURCE_DIR) + "/configs/llama-110m.json");
  ASSERT_TRUE(bench.ok) << bench.error;
  EXPECT_EQ(bench.spec.name, "llama_110m");
  EXPECT_EQ(bench.spec.dim, 768);
  EXPECT_EQ(bench.spec.nLayers, 12);
  EXPECT_EQ(bench.spec.hiddenDim, 2048);
  EXPECT_EQ(bench.spec.contextLength, 1024);

  struct Gpt2Preset {
    const char *file;
    int64_t dim, heads, layers;
  };
  for (const Gpt2Preset &preset : {Gpt2Preset{"gpt2-small", 768, 12, 12},
                                   Gpt2Preset{"gpt2-medium", 1024, 16, 24},
                                   Gpt2Preset{"gpt2-large", 1280, 20, 36},
                                   Gpt2Preset{"gpt2-xl", 1600, 25, 48}}) {
    SCOPED_TRACE(preset.file);
    ParsedSpec gpt2 =
        loadSpec(std::string(TFM_SOURCE_DIR) + "/configs/" + preset.file + ".json");
    ASSERT_TRUE(gpt2.ok) << gpt2.error;
    EXPECT_EQ(gpt2.spec.family, Family::Gpt2);
    EXPECT_EQ(gpt2.spec.dim, preset.dim);
    EXPECT_EQ(gpt2.spec.nHeads, preset.heads);
    EXPECT_EQ(gpt2.spec.nLayers, preset.layers);
    EXPECT_EQ(gpt2.spec.headDim, 64);
    EXPECT_EQ(gpt2.spec.hiddenDim, 4 * preset.dim);
    EXPECT_EQ(gpt2.spec.vocabSize, 50257);
    EXPECT_EQ(gpt2.spec.contextLength, 1024);
    EXPECT_EQ(gpt2.spec.activation, Activation::GeluTanh);
  }
}

} // namespace

namespace {

TEST(ModelSpecTest, FamilyPresetsCarryTheirVariants) {
  auto preset = [](const char *file) {
    ParsedSpec parsed = loadSpec(std::string(TFM_SOURCE_DIR) + "/configs/" + file + ".json");
    EXPECT_TRUE(parsed.ok) << parsed.error;
    return parsed.spec;
  };
  ModelSpec bloom = preset("bloom-560m");
  EXPECT_TRUE(bloom.alibi && bloom.embeddingNorm && bloom.fusedQkv);
  EXPECT_EQ(bloom.positions, Positions::None);
  EXPECT_EQ(bloom.hiddenDim, 4096);
  EXPECT_EQ(tfm::alibiSlopes(bloom).size(), 16u);
  ModelSpec mpt = preset("mpt-7b");
  EXPECT_TRUE(mpt.alibi && !mpt.normBias && !mpt.qkvBias && !mpt.ffnBias);
  EXPECT_EQ(mpt.activation, Activation::Gelu);
  ModelSpec pythia = preset("pythia-160m");
  EXPECT_FALSE(pythia.ropeInterleaved);
  EXPECT_EQ(pythia.rotaryDim, 16); // a quarter of 64
  EXPECT_TRUE(pythia.parallelResidual);
  EXPECT_EQ(pythia.parallelNorms, 2);
  ModelSpec falcon = preset("falcon-7b");
  EXPECT_EQ(falcon.nKvHeads, 1);
  EXPECT_EQ(falcon.headDim, 64);
  EXPECT_EQ(falcon.parallelNorms, 1);
  ModelSpec t2017 = preset("transformer-2017-decoder");
  EXPECT_EQ(t2017.normPosition, NormPosition::Post);
  EXPECT_FALSE(t2017.outputNorm());
  EXPECT_EQ(t2017.positions, Positions::Sinusoidal);
  EXPECT_EQ(t2017.activation, Activation::Relu);
  EXPECT_DOUBLE_EQ(t2017.embeddingScale, std::sqrt(512.0));
}

TEST(ModelSpecTest, AlibiSlopesFollowThePaper) {
  ModelSpec s;
  s.alibi = true;
  s.alibiMaxBias = 8;
  s.nHeads = 8;
  s.headDim = 64;
  std::vector<float> eight = tfm::alibiSlopes(s);
  for (int h = 0; h < 8; ++h)
    EXPECT_FLOAT_EQ(eight[h], std::pow(2.0f, -(h + 1.0f)));
  // 12 heads: the 8 of 8 heads, then the odd ones of 16 (2^-0.5, 2^-1.5, ...).
  s.nHeads = 12;
  std::vector<float> twelve = tfm::alibiSlopes(s);
  EXPECT_FLOAT_EQ(twelve[7], std::pow(2.0f, -8.0f));
  EXPECT_FLOAT_EQ(twelve[8], std::pow(2.0f, -0.5f));
  EXPECT_FLOAT_EQ(twelve[11], std::pow(2.0f, -3.5f));
  s.family = Family::Falcon; // added before scaling: divided by sqrt(head_dim)
  EXPECT_FLOAT_EQ(tfm::alibiSlopes(s)[0], 0.5f / 8.0f);
}

} // namespace

namespace {

llvm::json::Object smallBert(const char *type) {
  return llvm::json::Object{{"model_type", type},        {"hidden_size", 128},
                            {"num_hidden_layers", 2},     {"num_attention_heads", 4},
                            {"intermediate_size", 512},   {"max_position_embeddings", 66},
                            {"vocab_size", 1000},         {"type_vocab_size", 2},
                            {"hidden_act", "gelu"},       {"layer_norm_eps", 1e-12}};
}

} // namespace

TEST(ModelSpecTest, BertIsAPostNormEncoder) {
  ParsedSpec parsed = parse(smallBert("bert"));
  ASSERT_TRUE(parsed.ok) << parsed.error;
  const ModelSpec &s = parsed.spec;
  EXPECT_EQ(s.family, Family::Bert);
  EXPECT_TRUE(s.encoder());
  EXPECT_EQ(s.positions, Positions::Learned);
  EXPECT_EQ(s.positionOffset, 0);
  EXPECT_EQ(s.contextLength, 66);
  EXPECT_EQ(s.tokenTypes, 2);
  EXPECT_EQ(s.normPosition, NormPosition::Post);
  EXPECT_TRUE(s.embeddingNorm);
  EXPECT_EQ(s.norm, Norm::LayerNorm);
  EXPECT_TRUE(s.normBias && s.qkvBias && s.attnOutBias && s.ffnBias);
  EXPECT_EQ(s.activation, Activation::Gelu); // exact, as BERT's "gelu" is
  EXPECT_EQ(s.ffn, FfnKind::Plain);
  EXPECT_DOUBLE_EQ(s.normEps, 1e-12);
  EXPECT_FALSE(s.outputNorm());
}

TEST(ModelSpecTest, RobertaPositionsStartPastThePaddingId) {
  for (const char *type : {"roberta", "camembert", "xlm-roberta"}) {
    llvm::json::Object config = smallBert(type);
    config["pad_token_id"] = 1;
    ParsedSpec parsed = parse(std::move(config));
    ASSERT_TRUE(parsed.ok) << type << ": " << parsed.error;
    EXPECT_TRUE(parsed.spec.encoder());
    EXPECT_EQ(parsed.spec.positionOffset, 2) << type;
    EXPECT_EQ(parsed.spec.contextLength, 64) << type; // 66 rows, 2 of them padding's
  }
  llvm::json::Object tooShort = smallBert("roberta");
  tooShort["max_position_embeddings"] = 2;
  expectRefusal(parse(std::move(tooShort)), "max_position_embeddings");
}

TEST(ModelSpecTest, BertRefusesWhatItDoesNotCompileByName) {
  llvm::json::Object relative = smallBert("bert");
  relative["position_embedding_type"] = "relative_key";
  ParsedSpec refused = parse(std::move(relative));
  expectRefusal(refused, "position_embedding_type");
  EXPECT_NE(refused.error.find("relative_key"), std::string::npos) << refused.error;
  for (const char *field : {"is_decoder", "add_cross_attention"}) {
    llvm::json::Object config = smallBert("bert");
    config[field] = true;
    expectRefusal(parse(std::move(config)), field);
  }
}

TEST(ModelSpecTest, EncoderFieldsSurviveTheCanonicalJson) {
  llvm::json::Object config = smallBert("camembert");
  config["pad_token_id"] = 1;
  ParsedSpec parsed = parse(std::move(config));
  ASSERT_TRUE(parsed.ok) << parsed.error;
  llvm::Expected<ModelSpec> back =
      tfm::parseCanonicalSpec(parsed.spec.canonicalJson(), "manifest", "config.");
  ASSERT_TRUE(bool(back)) << llvm::toString(back.takeError());
  EXPECT_EQ(back->canonicalJson(), parsed.spec.canonicalJson());
  EXPECT_TRUE(back->encoder());
  EXPECT_EQ(back->positionOffset, 2);
  EXPECT_EQ(back->tokenTypes, 2);
}

namespace {

llvm::json::Object smallT5() {
  return llvm::json::Object{{"model_type", "t5"},     {"d_model", 128},  {"d_kv", 16},
                            {"d_ff", 256},            {"num_layers", 2}, {"num_heads", 6},
                            {"vocab_size", 1000},     {"n_positions", 160}};
}

} // namespace

TEST(ModelSpecTest, T5IsAnEncoderDecoderWithRelativeBuckets) {
  ParsedSpec v10 = parse(smallT5());
  ASSERT_TRUE(v10.ok) << v10.error;
  const ModelSpec &s = v10.spec;
  EXPECT_TRUE(s.encoderDecoder());
  EXPECT_EQ(s.nEncoderLayers, 2);
  EXPECT_EQ(s.nLayers, 2); // num_decoder_layers absent: as many
  EXPECT_EQ(s.headDim, 16); // d_kv, not d_model / heads
  EXPECT_EQ(s.relativeBuckets, 32);
  EXPECT_EQ(s.relativeMaxDistance, 128);
  EXPECT_EQ(s.positions, Positions::None);
  EXPECT_EQ(s.norm, Norm::RmsNorm);
  EXPECT_DOUBLE_EQ(s.attnScale, 1.0); // scores not scaled by 1/sqrt(d_kv)
  EXPECT_EQ(s.activation, Activation::Relu);
  EXPECT_EQ(s.ffn, FfnKind::Plain);
  EXPECT_TRUE(s.tiedEmbeddings);
  EXPECT_DOUBLE_EQ(s.outputScale, 1.0 / std::sqrt(128.0));
  EXPECT_EQ(s.sourceLength, 160);
  EXPECT_EQ(s.decoderStartTokenId, 0);

  llvm::json::Object gated = smallT5();
  gated["feed_forward_proj"] = "gated-gelu";
  gated["tie_word_embeddings"] = false;
  gated["num_decoder_layers"] = 3;
  ParsedSpec v11 = parse(std::move(gated));
  ASSERT_TRUE(v11.ok) << v11.error;
  EXPECT_EQ(v11.spec.ffn, FfnKind::Gated);
  EXPECT_EQ(v11.spec.activation, Activation::GeluTanh); // transformers' gelu_new
  EXPECT_DOUBLE_EQ(v11.spec.outputScale, 1.0);
  EXPECT_EQ(v11.spec.nLayers, 3);
}

TEST(ModelSpecTest, T5RefusesAnUnknownFeedForwardByName) {
  for (const char *proj : {"gated-swiglu", "gelu-relu", "mish"}) {
    llvm::json::Object config = smallT5();
    config["feed_forward_proj"] = proj;
    ParsedSpec refused = parse(std::move(config));
    expectRefusal(refused, "feed_forward_proj");
    EXPECT_NE(refused.error.find(proj), std::string::npos) << refused.error;
  }
}

TEST(ModelSpecTest, MarianAndThe2017EncoderDecoder) {
  llvm::json::Object marian{{"model_type", "marian"},        {"d_model", 128},
                            {"encoder_layers", 2},           {"decoder_layers", 3},
                            {"encoder_attention_heads", 4},  {"encoder_ffn_dim", 256},
                            {"activation_function", "swish"}, {"max_position_embeddings", 64},
                            {"scale_embedding", true},       {"vocab_size", 101},
                            {"pad_token_id", 100}};
  ParsedSpec parsed = parse(std::move(marian));
  ASSERT_TRUE(parsed.ok) << parsed.error;
  const ModelSpec &m = parsed.spec;
  EXPECT_TRUE(m.encoderDecoder());
  EXPECT_EQ(m.positions, Positions::SinusoidalHalves);
  EXPECT_EQ(m.nEncoderLayers, 2);
  EXPECT_EQ(m.nLayers, 3);
  EXPECT_EQ(m.normPosition, NormPosition::Post);
  EXPECT_EQ(m.activation, Activation::Silu);
  EXPECT_TRUE(m.outputBias && m.tiedEmbeddings);
  EXPECT_DOUBLE_EQ(m.embeddingScale, std::sqrt(128.0));
  EXPECT_EQ(m.decoderStartTokenId, 100); // the pad token

  llvm::json::Object preLn{{"model_type", "marian"}, {"normalize_before", true}};
  expectRefusal(parse(std::move(preLn)), "normalize_before");

  llvm::json::Object t2017{{"model_type", "transformer"}, {"architecture", "encoder_decoder"},
                           {"d_model", 64},               {"n_heads", 4},
                           {"n_layers", 1},               {"n_encoder_layers", 2},
                           {"d_ff", 128},                 {"vocab_size", 100},
                           {"context_length", 32},        {"norm_position", "post"}};
  ParsedSpec transformer = parse(std::move(t2017));
  ASSERT_TRUE(transformer.ok) << transformer.error;
  EXPECT_EQ(transformer.spec.nEncoderLayers, 2);
  EXPECT_EQ(transformer.spec.sourceLength, 32);
  EXPECT_EQ(transformer.spec.decoderStartTokenId, 1); // its BOS
  EXPECT_EQ(transformer.spec.positions, Positions::Sinusoidal);
}
