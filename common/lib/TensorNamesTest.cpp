//===- TensorNamesTest.cpp - The one table of tensor names ----------------===//
#include "tfm/common/TensorNames.h"

#include <gtest/gtest.h>

#include <set>

using namespace tfm;

namespace {

ModelSpec llama() {
  ModelSpec s;
  s.family = Family::Llama;
  s.dim = 64;
  s.hiddenDim = 96;
  s.nLayers = 2;
  s.nHeads = 4;
  s.nKvHeads = 2;
  s.headDim = 16;
  s.rotaryDim = 16;
  s.vocabSize = 100;
  s.contextLength = 48;
  return s;
}

ModelSpec gpt2() {
  ModelSpec s = llama();
  s.family = Family::Gpt2;
  s.nKvHeads = 4;
  s.norm = Norm::LayerNorm;
  s.activation = Activation::GeluTanh;
  s.positions = Positions::Learned;
  s.normBias = true;
  s.ffn = FfnKind::Plain;
  s.fusedQkv = true;
  s.qkvBias = s.attnOutBias = s.ffnBias = true;
  s.tiedEmbeddings = true;
  return s;
}

std::vector<std::string> names(const std::vector<ModelTensor> &tensors) {
  std::vector<std::string> out;
  for (const ModelTensor &t : tensors)
    out.push_back(t.name);
  return out;
}

} // namespace

TEST(TensorNames, NamesRoundTrip) {
  for (const ModelSpec &spec : {llama(), gpt2()})
    for (const ModelTensor &t : modelTensors(spec)) {
      std::optional<TensorId> id = parseTensorName(t.name);
      ASSERT_TRUE(id) << t.name;
      EXPECT_EQ(id->name(), t.name);
      EXPECT_EQ(id->role, t.id.role) << t.name;
      EXPECT_EQ(id->layer, t.id.layer) << t.name;
    }
  EXPECT_FALSE(parseTensorName("blk.x.attn_q.weight"));
  EXPECT_FALSE(parseTensorName("blk.0.token_embd.weight")); // not a layer role
  EXPECT_FALSE(parseTensorName("attn_q.weight"));           // a layer role needs a layer
  EXPECT_FALSE(parseTensorName("output.scale"));
}

TEST(TensorNames, LlamaTensorsInManifestOrder) {
  std::vector<ModelTensor> tensors = modelTensors(llama());
  std::vector<std::string> expected{"token_embd.weight"};
  for (int l = 0; l < 2; ++l)
    for (const char *stem : {"attn_norm", "attn_q", "attn_k", "attn_v", "attn_output",
                             "ffn_norm", "ffn_gate", "ffn_up", "ffn_down"})
      expected.push_back("blk." + std::to_string(l) + "." + stem + ".weight");
  expected.push_back("output_norm.weight");
  expected.push_back("output.weight");
  EXPECT_EQ(names(tensors), expected);
  EXPECT_EQ(tensors[2].shape, (std::vector<int64_t>{64, 64}));  // attn_q: [n_heads*hd, dim]
  EXPECT_EQ(tensors[3].shape, (std::vector<int64_t>{32, 64}));  // attn_k: [n_kv_heads*hd, dim]
  EXPECT_EQ(tensors[7].shape, (std::vector<int64_t>{96, 64}));  // ffn_gate
  EXPECT_EQ(tensors[9].shape, (std::vector<int64_t>{64, 96}));  // ffn_down
}

TEST(TensorNames, Gpt2HasBiasesFusedQkvAndPositions) {
  std::vector<std::string> n = names(modelTensors(gpt2()));
  EXPECT_EQ(n[0], "token_embd.weight");
  EXPECT_EQ(n[1], "position_embd.weight");
  EXPECT_EQ(n[2], "blk.0.attn_norm.weight");
  EXPECT_EQ(n[3], "blk.0.attn_norm.bias");
  EXPECT_EQ(n[4], "blk.0.attn_qkv.weight");
  EXPECT_EQ(n[5], "blk.0.attn_qkv.bias");
  EXPECT_EQ(n.back(), "output_norm.bias"); // tied: no output.weight
  EXPECT_EQ(std::set<std::string>(n.begin(), n.end()).size(), n.size());
}

TEST(TensorNames, KernelRolesOfProjections) {
  EXPECT_EQ(kernelRoleOf(TensorRole::AttnQkv), "attn_in");
  EXPECT_EQ(kernelRoleOf(TensorRole::FfnGate), "ffn_in");
  EXPECT_EQ(kernelRoleOf(TensorRole::FfnDown), "ffn_out");
  EXPECT_EQ(kernelRoleOf(TensorRole::TokenEmbedding), "logits");
  EXPECT_EQ(kernelRoleOf(TensorRole::AttnNorm), "");
}

TEST(TensorNames, HuggingFaceNamesAndLayouts) {
  auto q = hfTensorName(llama(), "blk.1.attn_q.weight");
  ASSERT_TRUE(bool(q)) << llvm::toString(q.takeError());
  EXPECT_EQ(q->names, std::vector<std::string>{"model.layers.1.self_attn.q_proj.weight"});
  EXPECT_EQ(q->layout, HfLayout::RopePermuted);
  auto qkv = hfTensorName(gpt2(), "blk.0.attn_qkv.weight");
  ASSERT_TRUE(bool(qkv)) << llvm::toString(qkv.takeError());
  EXPECT_EQ(qkv->names, (std::vector<std::string>{"h.0.attn.c_attn.weight",
                                                  "transformer.h.0.attn.c_attn.weight"}));
  EXPECT_EQ(qkv->layout, HfLayout::Transposed);
  auto bias = hfTensorName(gpt2(), "blk.0.attn_qkv.bias");
  ASSERT_TRUE(bool(bias));
  EXPECT_EQ(bias->layout, HfLayout::Same); // a bias is a vector: nothing to transpose
  auto missing = hfTensorName(llama(), "position_embd.weight");
  ASSERT_FALSE(bool(missing));
  EXPECT_NE(llvm::toString(missing.takeError()).find("'position_embd.weight'"), std::string::npos);
}

TEST(TensorNames, RopeRowsInterleave) {
  // head_dim 4: manifest rows (0, 1, 2, 3) are pairs (0, 2) and (1, 3) of Hugging Face's.
  ModelSpec s = llama();
  s.headDim = s.rotaryDim = 4;
  EXPECT_EQ(hfRow(HfLayout::RopePermuted, 0, s), 0);
  EXPECT_EQ(hfRow(HfLayout::RopePermuted, 1, s), 2);
  EXPECT_EQ(hfRow(HfLayout::RopePermuted, 2, s), 1);
  EXPECT_EQ(hfRow(HfLayout::RopePermuted, 7, s), 7);
  // A partial rotary width permutes its columns only: head_dim 8, width 4.
  s.headDim = 8;
  EXPECT_EQ(hfRow(HfLayout::RopePermuted, 1, s), 2);
  EXPECT_EQ(hfRow(HfLayout::RopePermuted, 5, s), 5);
  EXPECT_EQ(hfRow(HfLayout::RopePermuted, 9, s), 10);
}

TEST(TensorNames, FusedQkvRowsByKvGroup) {
  // 4 query heads in 2 kv groups, head_dim 2: Hugging Face rows are
  // [q0 q1 k0 v0 | q2 q3 k1 v1]; the manifest's [q0 q1 q2 q3 | k0 k1 | v0 v1].
  ModelSpec s = llama();
  s.nHeads = 4, s.nKvHeads = 2, s.headDim = 2;
  const int64_t expected[] = {0, 1, 2, 3, 8, 9, 10, 11, 4, 5, 12, 13, 6, 7, 14, 15};
  for (int64_t r = 0; r < 16; ++r)
    EXPECT_EQ(hfRow(HfLayout::QkvGrouped, r, s), expected[r]) << "manifest row " << r;
  // One kv group (Falcon-7B's multi-query): the layouts agree.
  s.nKvHeads = 1;
  for (int64_t r = 0; r < 12; ++r)
    EXPECT_EQ(hfRow(HfLayout::QkvGrouped, r, s), r);
}

TEST(TensorNames, NewFamiliesNameTheirModules) {
  ModelSpec bloom = gpt2();
  bloom.family = Family::Bloom;
  bloom.embeddingNorm = true;
  auto qkv = hfTensorName(bloom, "blk.2.attn_qkv.bias");
  ASSERT_TRUE(bool(qkv)) << llvm::toString(qkv.takeError());
  EXPECT_EQ(qkv->names[0], "h.2.self_attention.query_key_value.bias");
  EXPECT_EQ(qkv->layout, HfLayout::QkvGrouped); // biases follow their rows
  auto embNorm = hfTensorName(bloom, "token_embd_norm.weight");
  ASSERT_TRUE(bool(embNorm));
  EXPECT_EQ(embNorm->names[0], "word_embeddings_layernorm.weight");

  ModelSpec falcon = gpt2();
  falcon.family = Family::Falcon;
  falcon.parallelResidual = true;
  falcon.parallelNorms = 2;
  // As llama.cpp's converter (gguf-py tensor_mapping) and Falcon graph.
  EXPECT_EQ(attnNormRole(falcon), TensorRole::AttnNorm2);
  EXPECT_EQ(ffnNormRole(falcon), TensorRole::AttnNorm);
  auto lnMlp = hfTensorName(falcon, "blk.0.attn_norm.weight");
  ASSERT_TRUE(bool(lnMlp));
  EXPECT_EQ(lnMlp->names, (std::vector<std::string>{"transformer.h.0.ln_mlp.weight",
                                                    "transformer.h.0.input_layernorm.weight"}));
  auto lnAttn = hfTensorName(falcon, "blk.0.attn_norm_2.weight");
  ASSERT_TRUE(bool(lnAttn));
  EXPECT_EQ(lnAttn->names[0], "transformer.h.0.ln_attn.weight");
  auto neoxOut = hfTensorName([] {
    ModelSpec s = gpt2();
    s.family = Family::GptNeox;
    return s;
  }(), "output.weight");
  ASSERT_TRUE(bool(neoxOut));
  EXPECT_EQ(neoxOut->names[0], "embed_out.weight");
}
