//===- ManifestTest.cpp - Parsing a generated model's manifest -----------===//
#include "tfm/common/Manifest.h"

#include <gtest/gtest.h>

using namespace tfm;

namespace {

const char *const kManifest = R"({"abi_version": 1, "name": "tiny", "build_hash": "0123456789abcdef",
 "target": "x86-64-linux",
 "kernels": [{"kernel": "decode_attention", "schedule": "fast"},
             {"kernel": "decode_logits", "schedule": "plain", "products": "bf16"}],
 "config": {"dim":8,"hidden_dim":12,"n_layers":1,"n_heads":2,"n_kv_heads":1,"head_dim":4,
            "vocab_size":16,"context_length":4,"norm_eps":1e-5,"rope_theta":10000,
            "tied_embeddings":true,"dtype":"f32","bos_token_id":1,"eos_token_id":2,
            "family":"llama","name":"tiny","norm":"rms_norm","activation":"silu",
            "positions":"rope","rope_interleaved":true,"rotary_dim":4,"rope_scale":1,
            "alibi":false,"alibi_max_bias":0,"norm_bias":false,"post_norm":false,
            "parallel_residual":false,"parallel_norms":0,"embedding_norm":false,
            "gated_ffn":true,"fused_qkv":false,"qkv_bias":false,"attn_out_bias":false,
            "ffn_bias":false,"clip_qkv":0,"embedding_scale":1,"rope_freq_factors":[],
            "rope_short_factors":[],"rope_long_factors":[],"rope_original_context":0,
            "rope_attn_factor":1,
            "sliding_window":0,"sliding_window_pattern":0,"rope_local_theta":0,
            "norm_weight_offset":0,"sandwich_norms":false,"qk_norm":false,
            "fused_gate_up":false,"attn_scale":0,"attn_softcap":0,"final_softcap":0,
            "eos_token_id_list":[],"architecture":"decoder","position_offset":0,
            "token_types":0,"n_encoder_layers":0,"source_length":0,"relative_buckets":0,
            "relative_max_distance":0,"output_scale":1,"decoder_start_token_id":-1,
            "output_bias":false},
 "tensors": [{"name": "token_embd.weight", "shape": [16, 8], "dtype": "f32"},
             {"name": "output_norm.weight", "shape": [8], "dtype": "f32"}]})";

std::string parseError(const std::string &text) {
  auto m = parseManifest(text, "manifest.json");
  return m ? "" : llvm::toString(m.takeError());
}

std::string replaced(std::string text, const std::string &from, const std::string &to) {
  size_t at = text.find(from);
  EXPECT_NE(at, std::string::npos) << from;
  return text.replace(at, from.size(), to);
}

} // namespace

TEST(Manifest, ParsesEveryField) {
  auto m = parseManifest(kManifest, "manifest.json");
  ASSERT_TRUE(bool(m)) << llvm::toString(m.takeError());
  EXPECT_EQ(m->abiVersion, 1);
  EXPECT_EQ(m->name, "tiny");
  EXPECT_EQ(m->buildHash, "0123456789abcdef");
  ASSERT_EQ(m->kernels.size(), 2u);
  EXPECT_EQ(m->kernels[1].kernel, "decode_logits");
  EXPECT_EQ(m->kernels[1].schedule, "plain");
  EXPECT_EQ(m->kernels[1].products, tfm::Products::Bf16);
  EXPECT_EQ(m->kernels[0].products, tfm::Products::F32); // a manifest from before the field
  EXPECT_EQ(m->scheduleSummary(), "mixed (fast, plain)");
  EXPECT_EQ(m->config.hiddenDim, 12);
  EXPECT_EQ(m->config.nKvHeads, 1);
  EXPECT_TRUE(m->config.tiedEmbeddings);
  EXPECT_EQ(m->config.eosTokenId, 2);
  ASSERT_EQ(m->tensors.size(), 2u);
  EXPECT_EQ(m->tensors[0].shape, (std::vector<int64_t>{16, 8}));
  EXPECT_EQ(m->tensors[0].elementCount(), 128);
}

TEST(Manifest, NamesMissingAndMistypedFields) {
  std::string e = parseError(replaced(kManifest, R"("hidden_dim":12,)", ""));
  EXPECT_NE(e.find("manifest.json: field 'config.hidden_dim': missing"), std::string::npos) << e;
  e = parseError(replaced(kManifest, R"("shape": [8])", R"("shape": [8, -1])"));
  EXPECT_NE(e.find("field 'tensors[1].shape'"), std::string::npos) << e;
  e = parseError(replaced(kManifest, R"("shape": [8], "dtype": "f32")", R"("shape": [8], "dtype": "f17")"));
  EXPECT_NE(e.find("field 'tensors[1].dtype': found \"f17\""), std::string::npos) << e;
  e = parseError(replaced(kManifest, R"("eos_token_id":2)", R"("eos_token_id":99)"));
  EXPECT_NE(e.find("config.eos_token_id"), std::string::npos) << e;
  e = parseError(replaced(kManifest, R"("products": "bf16")", R"("products": "int4")"));
  EXPECT_NE(e.find("field 'kernels[1].products': found \"int4\", expected one of \"f32\", "
                   "\"int8\", \"bf16\""),
            std::string::npos)
      << e;
  e = parseError("{not json");
  EXPECT_NE(e.find("manifest.json: not valid JSON"), std::string::npos) << e;
}

TEST(Manifest, FormatThenParseGivesTheSameManifest) {
  auto m = parseManifest(kManifest, "manifest.json");
  ASSERT_TRUE(bool(m)) << llvm::toString(m.takeError());
  auto back = parseManifest(formatManifest(*m), "formatted");
  ASSERT_TRUE(bool(back)) << llvm::toString(back.takeError());
  EXPECT_EQ(formatManifest(*back), formatManifest(*m));
  EXPECT_EQ(back->config.canonicalJson(), m->config.canonicalJson());
  EXPECT_EQ(back->target, "x86-64-linux");
  ASSERT_EQ(back->tensors.size(), 2u);
  EXPECT_EQ(back->tensors[1].name, "output_norm.weight");
}

TEST(Manifest, NamesAMalformedKernelEntry) {
  std::string e = parseError(replaced(kManifest, R"({"kernel": "decode_logits", "schedule": "plain",)",
                                      R"({"kernel": "decode_logits",)"));
  EXPECT_NE(e.find("field 'kernels[1].schedule': missing"), std::string::npos) << e;
}
