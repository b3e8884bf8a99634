//===- Llama2cCheckpointTest.cpp - Binding and refusing checkpoints -------===//
//
// Writes tiny checkpoints whose every tensor is filled with its own code
// (kind * 100 + layer), so a bound pointer is right when the data it sees
// carries the code of the tensor it was bound for.
//
//===----------------------------------------------------------------------===//
#include "tfm/runtime/Llama2cCheckpoint.h"

#include "testing/TempFiles.h"

#include <gtest/gtest.h>

using namespace tfm;
using namespace tfm::rt;
using namespace tfm::rt::testing;

namespace {

struct Dims {
  int32_t dim = 8, hidden = 12, layers = 2, heads = 2, kvHeads = 1, vocab = 16, seqLen = 4;
  bool tied = true;
};

// llama2.c order; the per-layer kinds are written layer after layer.
const char *const kPerLayer[] = {"attn_norm", "attn_q", "attn_k", "attn_v", "attn_output",
                                 "ffn_norm",  "ffn_gate", "ffn_down", "ffn_up"};

std::vector<int64_t> shapeOf(const std::string &kind, const Dims &d) {
  int64_t kv = d.kvHeads * (d.dim / d.heads);
  if (kind == "token_embd" || kind == "output")
    return {d.vocab, d.dim};
  if (kind == "attn_norm" || kind == "ffn_norm" || kind == "output_norm")
    return {d.dim};
  if (kind == "attn_q" || kind == "attn_output")
    return {d.dim, d.dim};
  if (kind == "attn_k" || kind == "attn_v")
    return {kv, d.dim};
  if (kind == "ffn_gate" || kind == "ffn_up")
    return {d.hidden, d.dim};
  return {d.dim, d.hidden}; // ffn_down
}

int64_t count(const std::vector<int64_t> &shape) {
  int64_t n = 1;
  for (int64_t s : shape)
    n *= s;
  return n;
}

float codeOf(int kind, int layer) { return static_cast<float>(kind * 100 + layer); }

std::string checkpointBytes(const Dims &d) {
  std::string out;
  int32_t header[7] = {d.dim, d.hidden, d.layers, d.heads, d.kvHeads,
                       d.tied ? d.vocab : -d.vocab, d.seqLen};
  out.append(reinterpret_cast<const char *>(header), sizeof header);
  auto fill = [&](int64_t n, float value) {
    for (int64_t i = 0; i < n; ++i)
      out.append(reinterpret_cast<const char *>(&value), sizeof value);
  };
  fill(count(shapeOf("token_embd", d)), codeOf(0, 0));
  for (int k = 0; k < 9; ++k)
    for (int l = 0; l < d.layers; ++l)
      fill(count(shapeOf(kPerLayer[k], d)), codeOf(k + 1, l));
  fill(d.dim, codeOf(10, 0));                          // output_norm
  fill(2 * d.seqLen * (d.dim / d.heads / 2), -1.0f);   // RoPE tables, skipped
  if (!d.tied)
    fill(count(shapeOf("output", d)), codeOf(11, 0));
  return out;
}

Manifest manifestFor(const Dims &d) {
  Manifest m;
  m.config.dim = d.dim;
  m.config.hiddenDim = d.hidden;
  m.config.nLayers = d.layers;
  m.config.nHeads = d.heads;
  m.config.nKvHeads = d.kvHeads;
  m.config.headDim = d.dim / d.heads;
  m.config.rotaryDim = m.config.headDim;
  m.config.vocabSize = d.vocab;
  m.config.contextLength = d.seqLen;
  m.config.tiedEmbeddings = d.tied;
  auto add = [&](const std::string &name, const std::string &kind) {
    m.tensors.push_back({name, shapeOf(kind, d), DType::F32});
  };
  add("token_embd.weight", "token_embd");
  for (int l = 0; l < d.layers; ++l)
    for (const char *kind : kPerLayer)
      add("blk." + std::to_string(l) + "." + kind + ".weight", kind);
  add("output_norm.weight", "output_norm");
  if (!d.tied)
    add("output.weight", "output");
  return m;
}

std::string bindError(const std::string &path, const Manifest &m) {
  auto bound = bindLlama2cCheckpoint(path, m);
  return bound ? "" : llvm::toString(bound.takeError());
}

/// With `Resident`, the file is overwritten once bound: the tensors are a
/// copy, and keep their values.
void expectBoundToOwnData(const Dims &d, WeightMemory memory = WeightMemory::Mapped) {
  Manifest m = manifestFor(d);
  std::string name = d.tied ? "tied.bin" : "untied.bin", bytes = checkpointBytes(d);
  std::string path = writeTemp(name, bytes);
  auto bound = bindLlama2cCheckpoint(path, m, memory);
  ASSERT_TRUE(bool(bound)) << llvm::toString(bound.takeError());
  if (memory == WeightMemory::Resident)
    writeTemp(name, std::string(bytes.size(), 'Z'));
  ASSERT_EQ(bound->pointers.size(), m.tensors.size());
  for (size_t i = 0; i < m.tensors.size(); ++i) {
    const std::string &name = m.tensors[i].name;
    int kind = 0, layer = 0;
    if (name == "output_norm.weight")
      kind = 10;
    else if (name == "output.weight")
      kind = 11;
    else if (name != "token_embd.weight") {
      layer = name[4] - '0';
      std::string k = name.substr(6, name.size() - 6 - 7);
      kind = static_cast<int>(std::find(std::begin(kPerLayer), std::end(kPerLayer), k) -
                              std::begin(kPerLayer)) + 1;
    }
    const float *data = static_cast<const float *>(bound->pointers[i]);
    int64_t n = m.tensors[i].elementCount();
    EXPECT_EQ(data[0], codeOf(kind, layer)) << name;
    EXPECT_EQ(data[n - 1], codeOf(kind, layer)) << name;
  }
}

} // namespace

TEST(Llama2cCheckpoint, BindsTiedTensorsInPlace) { expectBoundToOwnData(Dims{}); }

TEST(Llama2cCheckpoint, BindsUntiedOutputHead) {
  Dims d;
  d.tied = false;
  expectBoundToOwnData(d);
}

// A vocabulary large enough (a 32 KiB embedding) for the file to be mapped
// without --no-mmap: LLVM reads files under 16 KiB into the heap.
TEST(Llama2cCheckpoint, BindsACopyReadIntoMemory) {
  Dims tied, untied;
  tied.vocab = untied.vocab = 1024;
  untied.tied = false;
  for (const Dims &d : {tied, untied})
    expectBoundToOwnData(d, WeightMemory::Resident);
}

TEST(Llama2cCheckpoint, RefusesHeaderFieldMismatch) {
  Dims file;
  file.hidden = 20;
  std::string error = bindError(writeTemp("hidden20.bin", checkpointBytes(file)), manifestFor(Dims{}));
  EXPECT_NE(error.find("hidden20.bin: header field hidden_dim is 20, the compiled model expects 12"),
            std::string::npos)
      << error;
}

TEST(Llama2cCheckpoint, RefusesTiedUntiedMismatch) {
  Dims file;
  file.tied = false;
  std::string error = bindError(writeTemp("untied2.bin", checkpointBytes(file)), manifestFor(Dims{}));
  EXPECT_NE(error.find("vocab_size is -16"), std::string::npos) << error;
  EXPECT_NE(error.find("tied embeddings"), std::string::npos) << error;
}

TEST(Llama2cCheckpoint, RefusesTruncatedFileNamingTheTensor) {
  Dims d;
  std::string bytes = checkpointBytes(d);
  // Cut into the last layer's ffn_up: the last per-layer tensor in the file.
  int64_t tail = 4 * (d.dim + 2 * d.seqLen * (d.dim / d.heads / 2)) + 4;
  std::string error = bindError(writeTemp("cut.bin", bytes.substr(0, bytes.size() - tail)),
                                manifestFor(d));
  EXPECT_NE(error.find("blk.1.ffn_up.weight"), std::string::npos) << error;
  EXPECT_NE(error.find("truncated"), std::string::npos) << error;
  EXPECT_NE(error.find(std::to_string(bytes.size() - tail) + " bytes"), std::string::npos) << error;
}

TEST(Llama2cCheckpoint, RefusesTrailingData) {
  Dims d;
  std::string error = bindError(writeTemp("long.bin", checkpointBytes(d) + "junk"), manifestFor(d));
  EXPECT_NE(error.find("trailing data"), std::string::npos) << error;
}

TEST(Llama2cCheckpoint, RefusesShortOrMissingFile) {
  std::string shortError = bindError(writeTemp("short.bin", "abc"), manifestFor(Dims{}));
  EXPECT_NE(shortError.find("too short"), std::string::npos) << shortError;
  std::string missing = bindError("/nonexistent/model.bin", manifestFor(Dims{}));
  EXPECT_NE(missing.find("/nonexistent/model.bin"), std::string::npos) << missing;
}

TEST(Llama2cCheckpoint, RefusesManifestTensorItCannotHold) {
  Dims d;
  Manifest m = manifestFor(d);
  m.tensors.push_back({"blk.0.attn_q.bias", {8}, DType::F32});
  std::string error = bindError(writeTemp("bias.bin", checkpointBytes(d)), m);
  EXPECT_NE(error.find("blk.0.attn_q.bias"), std::string::npos) << error;
}
