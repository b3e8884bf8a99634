//===- WeightLoaderTest.cpp - bindWeights over every format ----------------===//
//
// Each manifest tensor t holds value(t, e) at its element e (manifest
// layout). The tests write those values in each file format and layout —
// Hugging Face's transposed Conv1D weights and rotate-half q/k rows are
// produced here by loops written from the layout definitions, not by the
// loader's code — and check that every bound pointer sees value(t, e).
// The values are small integers, exact in f16 and bf16.
//
//===----------------------------------------------------------------------===//
#include "tfm/runtime/GgufWriter.h"
#include "tfm/runtime/NonFiniteWeights.h"
#include "tfm/runtime/Session.h"
#include "tfm/common/BlockQuant.h"
#include "tfm/common/TensorNames.h"
#include "tfm/runtime/SafetensorsWriter.h"
#include "tfm/runtime/WeightLoader.h"

#include "testing/TempFiles.h"

#include "llvm/Support/FileSystem.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <map>
#include <set>
#include <tuple>

using namespace tfm;
using namespace tfm::rt;
using namespace tfm::rt::testing;

namespace {

float value(size_t tensor, int64_t element) {
  return static_cast<float>(static_cast<int64_t>((tensor * 37 + element) % 255) - 127);
}

Manifest llamaManifest(bool tied) {
  Manifest m;
  tfm::ModelSpec &c = m.config;
  c.family = Family::Llama;
  c.dim = 8, c.hiddenDim = 12, c.nLayers = 2, c.nHeads = 2, c.nKvHeads = 1, c.headDim = 4;
  c.rotaryDim = 4;
  c.vocabSize = 16, c.contextLength = 8, c.tiedEmbeddings = tied;
  auto add = [&](std::string name, std::vector<int64_t> shape) {
    m.tensors.push_back({std::move(name), std::move(shape), DType::F32});
  };
  add("token_embd.weight", {16, 8});
  for (int l = 0; l < 2; ++l) {
    std::string p = "blk." + std::to_string(l) + ".";
    add(p + "attn_norm.weight", {8});
    add(p + "attn_q.weight", {8, 8});
    add(p + "attn_k.weight", {4, 8});
    add(p + "attn_v.weight", {4, 8});
    add(p + "attn_output.weight", {8, 8});
    add(p + "ffn_norm.weight", {8});
    add(p + "ffn_gate.weight", {12, 8});
    add(p + "ffn_up.weight", {12, 8});
    add(p + "ffn_down.weight", {8, 12});
  }
  add("output_norm.weight", {8});
  if (!tied)
    add("output.weight", {16, 8});
  return m;
}

Manifest gpt2Manifest() {
  Manifest m;
  tfm::ModelSpec &c = m.config;
  c.family = Family::Gpt2;
  c.dim = 8, c.hiddenDim = 32, c.nLayers = 1, c.nHeads = 2, c.nKvHeads = 2, c.headDim = 4;
  c.vocabSize = 16, c.contextLength = 6, c.tiedEmbeddings = true;
  c.norm = Norm::LayerNorm, c.normBias = true, c.positions = Positions::Learned, c.ffn = FfnKind::Plain;
  c.fusedQkv = true, c.qkvBias = c.attnOutBias = c.ffnBias = true;
  auto add = [&](std::string name, std::vector<int64_t> shape) {
    m.tensors.push_back({std::move(name), std::move(shape), DType::F32});
  };
  add("token_embd.weight", {16, 8});
  add("position_embd.weight", {6, 8});
  add("blk.0.attn_norm.weight", {8});
  add("blk.0.attn_norm.bias", {8});
  add("blk.0.attn_qkv.weight", {24, 8});
  add("blk.0.attn_qkv.bias", {24});
  add("blk.0.attn_output.weight", {8, 8});
  add("blk.0.attn_output.bias", {8});
  add("blk.0.ffn_norm.weight", {8});
  add("blk.0.ffn_norm.bias", {8});
  add("blk.0.ffn_up.weight", {32, 8});
  add("blk.0.ffn_up.bias", {32});
  add("blk.0.ffn_down.weight", {8, 32});
  add("blk.0.ffn_down.bias", {8});
  add("output_norm.weight", {8});
  add("output_norm.bias", {8});
  return m;
}

/// Tensor `index` of `m` as Hugging Face stores it: the values and shape.
std::pair<std::vector<float>, std::vector<int64_t>> hfLayout(const Manifest &m, size_t index,
                                                             HfLayout layout) {
  const TensorSpec &t = m.tensors[index];
  std::vector<float> v(t.elementCount());
  for (int64_t e = 0; e < t.elementCount(); ++e)
    v[e] = value(index, e);
  if (layout == HfLayout::Transposed) {
    int64_t out = t.shape[0], in = t.shape[1];
    std::vector<float> hf(v.size());
    for (int64_t o = 0; o < out; ++o)
      for (int64_t i = 0; i < in; ++i)
        hf[i * out + o] = v[o * in + i];
    return {hf, {in, out}};
  }
  if (layout == HfLayout::RopePermuted) {
    int64_t hd = m.config.headDim, rows = t.shape[0], width = t.elementCount() / rows;
    std::vector<float> hf(v.size());
    for (int64_t h = 0; h < rows / hd; ++h)
      for (int64_t i = 0; i < hd / 2; ++i)
        for (int64_t j = 0; j < 2; ++j)
          for (int64_t c = 0; c < width; ++c)
            hf[(h * hd + j * hd / 2 + i) * width + c] = v[(h * hd + 2 * i + j) * width + c];
    return {hf, t.shape};
  }
  return {v, t.shape};
}

/// IEEE half of a value that has an exact one (integers below 2048).
uint16_t exactHalf(float f) {
  if (f == 0)
    return std::signbit(f) ? 0x8000 : 0;
  uint16_t sign = f < 0 ? 0x8000 : 0;
  int exponent;
  float fraction = std::frexp(std::fabs(f), &exponent); // in [0.5, 1)
  uint16_t mantissa = static_cast<uint16_t>((fraction * 2 - 1) * 1024);
  return sign | static_cast<uint16_t>((exponent - 1 + 15) << 10) | mantissa;
}

void writeElements(llvm::raw_ostream &os, const std::vector<float> &values,
                   const std::string &dtype) {
  for (float f : values) {
    if (dtype == "F32") {
      os.write(reinterpret_cast<const char *>(&f), 4);
      continue;
    }
    uint32_t bits;
    std::memcpy(&bits, &f, 4);
    uint16_t half = dtype == "F16" ? exactHalf(f) : static_cast<uint16_t>(bits >> 16);
    os.write(reinterpret_cast<const char *>(&half), 2);
  }
}

struct HfFileOptions {
  std::string dtype = "F32";
  std::string prefix;                 // prepended to every name
  std::set<std::string> omit;         // Hugging Face names left out
  std::map<std::string, std::vector<int64_t>> reshape; // written with this shape instead
  bool extraBuffers = false;          // add tensors the manifest does not use
};

/// The tensors of `m` under Hugging Face names, in `shards` files.
/// Returns the path to load: the file, or the index when sharded.
std::string writeHf(const std::string &name, const Manifest &m, const HfFileOptions &o,
                    int shards = 1) {
  std::vector<SafetensorsWriter> writers(shards);
  std::vector<std::vector<std::vector<float>>> data(shards);
  std::string weightMap;
  for (size_t i = 0; i < m.tensors.size(); ++i) {
    auto hf = hfTensorName(m.config, m.tensors[i].name);
    EXPECT_TRUE(bool(hf)) << llvm::toString(hf.takeError());
    std::string hfName = o.prefix + hf->names.front();
    if (o.omit.count(hfName))
      continue;
    auto [values, shape] = hfLayout(m, i, hf->layout);
    if (o.reshape.count(hfName))
      shape = o.reshape.at(hfName);
    int shard = static_cast<int>(i % shards);
    writers[shard].addTensor(hfName, o.dtype, shape);
    data[shard].push_back(values);
    std::string shardName = name + "-" + std::to_string(shard + 1) + ".safetensors";
    weightMap += std::string(weightMap.empty() ? "" : ",") + "\"" + hfName + "\":\"" +
                 shardName + "\"";
  }
  if (o.extraBuffers) {
    writers[0].addTensor("h.0.attn.bias", "F32", {1, 1, 6, 6});
    data[0].push_back(std::vector<float>(36, 1.0f));
    writers[0].addTensor("lm_head.weight", "F32", {16, 8});
    data[0].push_back(std::vector<float>(128, 9.0f));
  }
  for (int s = 0; s < shards; ++s) {
    std::string path = shards == 1 ? tempPath(name + ".safetensors")
                                   : tempPath(name + "-" + std::to_string(s + 1) + ".safetensors");
    writeTensorFile(path, writers[s], [&](size_t i, llvm::raw_ostream &out) {
      bool extra = o.extraBuffers && s == 0 && i + 2 >= writers[0].tensorCount();
      writeElements(out, data[s][i], extra ? "F32" : o.dtype);
    });
  }
  if (shards == 1)
    return tempPath(name + ".safetensors");
  return writeTemp(name + ".index.json", "{\"metadata\":{},\"weight_map\":{" + weightMap + "}}");
}

std::string writeGguf(const std::string &name, const Manifest &m, uint32_t type) {
  GgufWriter w;
  w.addString("general.architecture", variantName(m.config.family));
  for (const TensorSpec &t : m.tensors)
    w.addTensor(t.name, t.shape, type);
  return writeTensorFile(tempPath(name + ".gguf"), w, [&](size_t i, llvm::raw_ostream &out) {
    auto [values, shape] = hfLayout(m, i, HfLayout::Same);
    writeElements(out, values, type == GgmlF32 ? "F32" : type == GgmlF16 ? "F16" : "BF16");
  });
}

/// Replaces the file's bytes with as many others: a mapping of it sees
/// them, a copy read before does not.
void overwrite(const std::string &path) {
  uint64_t size = 0;
  ASSERT_FALSE(llvm::sys::fs::file_size(path, size));
  std::error_code ec;
  llvm::raw_fd_ostream out(path, ec);
  ASSERT_FALSE(ec) << ec.message();
  out << std::string(size, '\x5a');
}

/// Binds `path` and checks every tensor's values, after `afterBinding`
/// (given the path) where there is one.
void expectManifestValues(const std::string &path, const Manifest &m,
                          size_t expectedStorage = 0, WeightMemory memory = WeightMemory::Mapped,
                          void (*afterBinding)(const std::string &) = nullptr) {
  auto bound = bindWeights(path, m, LoadOptions{true, memory});
  ASSERT_TRUE(bool(bound)) << llvm::toString(bound.takeError());
  if (afterBinding)
    afterBinding(path);
  ASSERT_EQ(bound->pointers.size(), m.tensors.size());
  for (size_t i = 0; i < m.tensors.size(); ++i) {
    const float *data = static_cast<const float *>(bound->pointers[i]);
    ASSERT_EQ(reinterpret_cast<uintptr_t>(data) % 4, 0u) << m.tensors[i].name;
    for (int64_t e = 0; e < m.tensors[i].elementCount(); ++e)
      ASSERT_EQ(data[e], value(i, e)) << path << ": " << m.tensors[i].name << "[" << e << "]";
  }
  if (expectedStorage)
    EXPECT_EQ(bound->storage.size(), expectedStorage) << path;
}

std::string bindError(const std::string &path, const Manifest &m) {
  auto bound = bindWeights(path, m, LoadOptions{});
  return bound ? "" : llvm::toString(bound.takeError());
}

} // namespace

TEST(WeightLoader, LlamaSafetensorsUnderHfNamesUnpermutesQK) {
  Manifest m = llamaManifest(/*tied=*/false);
  // The file, plus one aligned copy per q and k tensor; the rest in place.
  expectManifestValues(writeHf("llama-f32", m, {}), m, 1 + 2 * 2);
  Manifest tied = llamaManifest(/*tied=*/true);
  expectManifestValues(writeHf("llama-tied", tied, {}), tied);
}

TEST(WeightLoader, Gpt2SafetensorsTransposesConv1D) {
  Manifest m = gpt2Manifest();
  // Four Conv1D weights are transposed into copies.
  expectManifestValues(writeHf("gpt2-f32", m, {}), m, 1 + 4);
  HfFileOptions prefixed;
  prefixed.prefix = "transformer.";
  prefixed.extraBuffers = true; // attn.bias buffers and a tied lm_head are ignored
  expectManifestValues(writeHf("gpt2-prefixed", m, prefixed), m);
}

TEST(WeightLoader, F16AndBf16SafetensorsEqualF32AfterConversion) {
  for (const char *dtype : {"F16", "BF16"}) {
    HfFileOptions o;
    o.dtype = dtype;
    Manifest llama = llamaManifest(false);
    expectManifestValues(writeHf(std::string("llama-") + dtype, llama, o), llama,
                         1 + llama.tensors.size());
    Manifest gpt2 = gpt2Manifest();
    expectManifestValues(writeHf(std::string("gpt2-") + dtype, gpt2, o), gpt2);
  }
}

TEST(WeightLoader, ShardedEqualsSingle) {
  for (Manifest m : {llamaManifest(false), gpt2Manifest()}) {
    std::string family = variantName(m.config.family);
    std::string index = writeHf("sharded-" + family, m, {}, /*shards=*/3);
    expectManifestValues(index, m);
  }
}

TEST(WeightLoader, GgufF32InPlaceAndF16Bf16Converted) {
  for (Manifest m : {llamaManifest(false), gpt2Manifest()}) {
    std::string family = variantName(m.config.family);
    expectManifestValues(writeGguf("f32-" + family, m, GgmlF32), m, 1);
    expectManifestValues(writeGguf("f16-" + family, m, GgmlF16), m, 1 + m.tensors.size());
    expectManifestValues(writeGguf("bf16-" + family, m, GgmlBF16), m, 1 + m.tensors.size());
  }
}

// One tensor at a time (tfm-quantize): a converted tensor is a copy of its
// own, made when asked for; one stored as the manifest says is the file's.
TEST(WeightLoader, WeightTensorsConvertEachWhenAskedFor) {
  Manifest m = llamaManifest(false);
  for (auto [name, ggmlType, converted] :
       {std::tuple{"tensors-f32", GgmlF32, false}, {"tensors-f16", GgmlF16, true}}) {
    std::string path = writeGguf(name, m, ggmlType);
    auto bound = bindWeights(path, m, LoadOptions{});
    auto tensors = openWeightTensors(path, m, LoadOptions{});
    ASSERT_TRUE(bound && tensors) << name;
    for (size_t i = 0; i < m.tensors.size(); ++i) {
      EXPECT_EQ(tensors->converts(i), converted) << name << ": " << m.tensors[i].name;
      auto first = tensors->tensor(i), second = tensors->tensor(i);
      ASSERT_TRUE(first && second) << name;
      EXPECT_EQ(first->get() != second->get(), converted) << name << ": " << m.tensors[i].name;
      EXPECT_EQ(std::memcmp(first->get(), bound->pointers[i], m.tensors[i].byteCount()), 0)
          << name << ": " << m.tensors[i].name;
    }
  }
}

// --no-mmap: every format read into memory of the process's own binds the
// same values, with as many copies besides the file as when it is mapped.
TEST(WeightLoader, ResidentFilesBindTheSameValues) {
  for (Manifest m : {llamaManifest(false), gpt2Manifest()}) {
    std::string family = variantName(m.config.family);
    expectManifestValues(writeGguf("resident-" + family, m, GgmlF32), m, 1,
                         WeightMemory::Resident);
    expectManifestValues(writeHf("resident-st-" + family, m, {}), m, 0, WeightMemory::Resident);
    expectManifestValues(writeHf("resident-sharded-" + family, m, {}, /*shards=*/3), m, 0,
                         WeightMemory::Resident);
  }
}

// ... and binds a copy: the values stay when the file changes afterwards.
// The tensor is large enough (256 KiB) for the file to be mapped without
// --no-mmap (LLVM reads files under 16 KiB into the heap).
TEST(WeightLoader, ResidentFilesAreBoundAsCopies) {
  Manifest m;
  m.config.family = Family::Llama;
  m.tensors.push_back({"token_embd.weight", {64, 1024}, DType::F32});
  expectManifestValues(writeGguf("resident-copy", m, GgmlF32), m, 1, WeightMemory::Resident,
                       overwrite);
  expectManifestValues(writeHf("resident-copy-st", m, {}), m, 0, WeightMemory::Resident,
                       overwrite);
}

TEST(WeightFileBytes, ResidentBytesAreACopyInHugePageAlignedMemory) {
  std::string path = tempPath("resident-bytes.bin");
  std::string text;
  for (int i = 0; i < (3 << 20) + 17; ++i) // over a huge page, and not a multiple of one
    text.push_back(static_cast<char>(i * 131 % 251));
  {
    std::error_code ec;
    llvm::raw_fd_ostream out(path, ec);
    ASSERT_FALSE(ec) << ec.message();
    out << text;
  }
  auto mapped = readWeightFile(path, WeightMemory::Mapped, "test file");
  auto resident = readWeightFile(path, WeightMemory::Resident, "test file");
  ASSERT_TRUE(bool(mapped)) << llvm::toString(mapped.takeError());
  ASSERT_TRUE(bool(resident)) << llvm::toString(resident.takeError());
  EXPECT_EQ((*mapped)->getBuffer(), text);
  EXPECT_EQ((*resident)->getBuffer(), text);
  EXPECT_EQ(reinterpret_cast<uintptr_t>((*resident)->getBufferStart()) % (2u << 20), 0u);
  overwrite(path);
  EXPECT_EQ((*resident)->getBuffer(), text) << "the resident bytes are not a copy of the file";

  for (WeightMemory memory : {WeightMemory::Mapped, WeightMemory::Resident}) {
    auto missing = readWeightFile(tempPath("no-such-file.gguf"), memory, "GGUF file");
    ASSERT_FALSE(bool(missing));
    std::string message = llvm::toString(missing.takeError());
    EXPECT_NE(message.find("no-such-file.gguf: cannot open the GGUF file: "), std::string::npos)
        << message;
  }
}

// The mapped file carries the huge-page advice (smaps' VmFlags "hg"), so
// that what it faults in from disk is cached in 2 MiB folios.
TEST(WeightFileBytes, MappedBytesAreAdvisedIntoHugePages) {
  if (!llvm::sys::fs::exists("/sys/kernel/mm/transparent_hugepage"))
    GTEST_SKIP() << "this kernel has no transparent huge pages: it refuses MADV_HUGEPAGE";
  std::string path = writeTemp("advised.bin", std::string((4 << 20) + 5, '\x2a'));
  auto mapped = readWeightFile(path, WeightMemory::Mapped, "test file");
  ASSERT_TRUE(bool(mapped)) << llvm::toString(mapped.takeError());
  auto start = reinterpret_cast<uintptr_t>((*mapped)->getBufferStart());
  std::ifstream smaps("/proc/self/smaps");
  std::string line, flags;
  bool inMapping = false;
  while (std::getline(smaps, line)) {
    uintptr_t low = 0, high = 0;
    if (std::sscanf(line.c_str(), "%lx-%lx ", &low, &high) == 2) // a mapping's first line
      inMapping = low <= start && start < high;
    else if (inMapping && line.rfind("VmFlags:", 0) == 0)
      flags = line;
  }
  ASSERT_FALSE(flags.empty()) << "no mapping of " << path << " in /proc/self/smaps";
  EXPECT_NE((flags + " ").find(" hg "), std::string::npos) << flags;
}

// A library compiled for the file's types binds it in place, pointing into
// the mapped file; one compiled for f32 gets the decoded values.
TEST(WeightLoader, BlockFormatsBoundInPlaceOrDecoded) {
  for (const char *name : {"q8_0", "q4_0", "q4_k", "q5_k", "q6_k"}) {
    ElementEncoding encoding = *parseElementEncoding(name);
    Manifest m;
    m.config.family = Family::Llama;
    m.tensors.push_back({"token_embd.weight", {3, 256}, encoding});
    std::vector<float> values(3 * 256);
    for (size_t i = 0; i < values.size(); ++i)
      values[i] = std::sin(0.37f * float(i));
    std::vector<uint8_t> blocks(encoding.tensorBytes({3, 256}));
    std::vector<float> decoded(values.size());
    for (int r = 0; r < 3; ++r) {
      uint8_t *row = blocks.data() + r * blocks.size() / 3;
      quantizeRow(*encoding.block, values.data() + 256 * r, 256, row);
      dequantizeRow(*encoding.block, row, 256, decoded.data() + 256 * r);
    }
    GgufWriter w;
    w.addTensor("token_embd.weight", {3, 256}, blockLayout(*encoding.block).ggmlType);
    std::string path = writeTensorFile(tempPath(std::string(name) + ".gguf"), w,
                                       [&](size_t, llvm::raw_ostream &out) {
                                         out.write(reinterpret_cast<const char *>(blocks.data()),
                                                   blocks.size());
                                       });
    auto inPlace = bindWeights(path, m, LoadOptions{});
    ASSERT_TRUE(bool(inPlace)) << llvm::toString(inPlace.takeError());
    EXPECT_EQ(inPlace->storage.size(), 1u) << name << ": no copy besides the mapped file";
    EXPECT_EQ(std::memcmp(inPlace->pointers[0], blocks.data(), blocks.size()), 0) << name;

    m.tensors[0].dtype = ElementEncoding{};
    auto asF32 = bindWeights(path, m, LoadOptions{});
    ASSERT_TRUE(bool(asF32)) << llvm::toString(asF32.takeError());
    const float *f = static_cast<const float *>(asF32->pointers[0]);
    for (size_t i = 0; i < decoded.size(); ++i)
      ASSERT_EQ(f[i], decoded[i]) << name << " element " << i;
  }
}

TEST(WeightLoader, ConvertsF16SpecialValues) {
  Manifest m;
  m.config.family = Family::Llama;
  m.tensors.push_back({"output_norm.weight", {7}, DType::F32});
  const uint16_t halves[7] = {0x0001, 0x03ff, 0x3c00, 0xc000, 0x7c00, 0x8000, 0x7bff};
  SafetensorsWriter w;
  w.addTensor("model.norm.weight", "F16", {7});
  std::string path =
      writeTensorFile(tempPath("special.safetensors"), w, [&](size_t, llvm::raw_ostream &out) {
        out.write(reinterpret_cast<const char *>(halves), sizeof halves);
      });
  auto bound = bindWeights(path, m, LoadOptions{});
  ASSERT_TRUE(bool(bound)) << llvm::toString(bound.takeError());
  const float *f = static_cast<const float *>(bound->pointers[0]);
  EXPECT_EQ(f[0], std::ldexp(1.0f, -24));          // smallest subnormal
  EXPECT_EQ(f[1], std::ldexp(1023.0f, -24));       // largest subnormal
  EXPECT_EQ(f[2], 1.0f);
  EXPECT_EQ(f[3], -2.0f);
  EXPECT_TRUE(std::isinf(f[4]) && f[4] > 0);
  EXPECT_TRUE(f[5] == 0.0f && std::signbit(f[5]));
  EXPECT_EQ(f[6], 65504.0f);
  EXPECT_EQ(reinterpret_cast<uintptr_t>(f) % 64, 0u);
}

TEST(WeightLoader, CopiesMisalignedF32) {
  Manifest m;
  m.config.family = Family::Llama;
  m.tensors.push_back({"output_norm.weight", {3}, DType::F32});
  // A 9-byte header puts the data at offset 17: no f32 alignment.
  std::string header = R"({"model.norm.weight":{"dtype":"F32","shape":[3],"data_offsets":[0,12]}})";
  while ((8 + header.size()) % 4 != 1)
    header += ' ';
  ASSERT_EQ((8 + header.size()) % 4, 1u);
  uint64_t length = header.size();
  std::string bytes(reinterpret_cast<const char *>(&length), 8);
  const float values[3] = {1.5f, -2.5f, 3.0f};
  bytes += header + std::string(reinterpret_cast<const char *>(values), sizeof values);
  auto bound = bindWeights(writeTemp("misaligned.safetensors", bytes), m, LoadOptions{});
  ASSERT_TRUE(bool(bound)) << llvm::toString(bound.takeError());
  const float *f = static_cast<const float *>(bound->pointers[0]);
  EXPECT_EQ(f[0], 1.5f);
  EXPECT_EQ(f[2], 3.0f);
  EXPECT_EQ(bound->storage.size(), 2u);
}

TEST(WeightLoader, RefusesMissingTensorNamingFileTensorAndHfName) {
  Manifest m = llamaManifest(false);
  HfFileOptions o;
  o.omit = {"model.layers.1.mlp.up_proj.weight"};
  std::string path = writeHf("llama-missing", m, o);
  EXPECT_EQ(bindError(path, m),
            path + ": tensor 'blk.1.ffn_up.weight' is missing: no "
                   "'model.layers.1.mlp.up_proj.weight' (its Hugging Face name) in this file");

  Manifest gpt2 = gpt2Manifest();
  HfFileOptions g;
  g.omit = {"wpe.weight"};
  std::string gpath = writeHf("gpt2-missing", gpt2, g);
  EXPECT_EQ(bindError(gpath, gpt2),
            gpath + ": tensor 'position_embd.weight' is missing: no 'wpe.weight' (its Hugging "
                    "Face name) or 'transformer.wpe.weight' in this file");

  std::string index = writeHf("sharded-missing", m, o, 2);
  EXPECT_EQ(bindError(index, m),
            index + ": tensor 'blk.1.ffn_up.weight' is missing: no "
                    "'model.layers.1.mlp.up_proj.weight' (its Hugging Face name) in its "
                    "weight_map");

  Manifest small = llamaManifest(false);
  small.tensors.resize(3);
  std::string gguf = writeGguf("gguf-missing", small, GgmlF32);
  Manifest full = llamaManifest(false);
  EXPECT_EQ(bindError(gguf, full),
            gguf + ": tensor 'blk.0.attn_k.weight' is missing (the compiled model needs it; "
                   "GGUF files name tensors as llama.cpp does)");
}

TEST(WeightLoader, RefusesWrongShape) {
  Manifest m = gpt2Manifest();
  HfFileOptions o;
  o.reshape = {{"h.0.attn.c_attn.weight", {24, 8}}}; // not transposed as Conv1D stores it
  std::string path = writeHf("gpt2-shape", m, o);
  EXPECT_EQ(bindError(path, m),
            path + ": tensor 'h.0.attn.c_attn.weight' (blk.0.attn_qkv.weight) has shape "
                   "[24, 8], the compiled model expects [8, 24] (Conv1D weights are stored "
                   "[in, out]: the transpose of [24, 8])");

  Manifest llama = llamaManifest(false);
  Manifest wider = llama;
  wider.tensors[0].shape = {16, 9};
  std::string gguf = writeGguf("gguf-shape", wider, GgmlF32);
  EXPECT_EQ(bindError(gguf, llama), gguf + ": tensor 'token_embd.weight' has shape [16, 9], "
                                           "the compiled model expects [16, 8]");
}

TEST(WeightLoader, RefusesDtypesItCannotConvert) {
  Manifest m;
  m.config.family = Family::Llama;
  m.tensors.push_back({"token_embd.weight", {2, 32}, ElementEncoding{}});
  GgufWriter w;
  w.addTensor("token_embd.weight", {2, 32}, 6); // q5_0, which tfm does not read
  std::string path =
      writeTensorFile(tempPath("q5_0.gguf"), w, [&](size_t i, llvm::raw_ostream &out) {
        out.write_zeros(w.tensorBytes(i));
      });
  EXPECT_EQ(bindError(path, m),
            path + ": tensor 'token_embd.weight' is q5_0; this library was compiled to read it "
                   "as f32, and tfm reads f32, f16, bf16, q8_0, q4_0, q4_K, q5_K and q6_K");

  // A block format is read in place or not at all: nothing is quantized at load.
  Manifest q8 = m;
  q8.tensors[0].dtype = *parseElementEncoding("q8_0");
  GgufWriter f16;
  f16.addTensor("token_embd.weight", {2, 32}, GgmlF16);
  std::string hpath =
      writeTensorFile(tempPath("f16.gguf"), f16, [&](size_t i, llvm::raw_ostream &out) {
        out.write_zeros(f16.tensorBytes(i));
      });
  EXPECT_EQ(bindError(hpath, q8),
            hpath + ": tensor 'token_embd.weight' is f16; this library was compiled to read it "
                    "as q8_0 in place (nothing is quantized at load); compile for this file's "
                    "types (tfmc --weights-like " + hpath + ")");

  SafetensorsWriter s;
  s.addTensor("model.embed_tokens.weight", "I64", {2, 32});
  std::string spath =
      writeTensorFile(tempPath("i64.safetensors"), s, [&](size_t i, llvm::raw_ostream &out) {
        out.write_zeros(s.tensorBytes(i));
      });
  EXPECT_NE(bindError(spath, m).find(spath + ": tensor 'model.embed_tokens.weight' "
                                             "(token_embd.weight) is I64; this library"),
            std::string::npos)
      << bindError(spath, m);
}

TEST(WeightLoader, RefusesPyTorchPicklesPointingToSafetensors) {
  Manifest m = llamaManifest(false);
  std::string zip = writeTemp("pytorch_model.bin", std::string("PK\x03\x04\x14\0\0\0", 8) +
                                                       "archive/data.pkl");
  std::string bare = writeTemp("legacy.pt", std::string("\x80\x02\x8a\x0a", 4) + "lfc9c");
  for (const std::string &path : {zip, bare}) {
    std::string error = bindError(path, m);
    EXPECT_EQ(error.rfind(path + " is a PyTorch pickle", 0), 0u) << error;
    EXPECT_NE(error.find("Convert it to safetensors"), std::string::npos) << error;
    EXPECT_NE(error.find("safe_serialization=True"), std::string::npos) << error;
  }
}

TEST(WeightLoader, DetectsFormatsFromFirstBytes) {
  Manifest m = llamaManifest(false);
  EXPECT_EQ(*detectWeightFormat(writeGguf("detect", m, GgmlF32)), WeightFormat::Gguf);
  EXPECT_EQ(*detectWeightFormat(writeHf("detect", m, {})), WeightFormat::Safetensors);
  EXPECT_EQ(*detectWeightFormat(writeHf("detect-sharded", m, {}, 2)),
            WeightFormat::SafetensorsIndex);
  // dim 640 opens with the bytes 0x80 0x02, as a pickle does, then zeros.
  int32_t header[7] = {640, 1712, 10, 10, 10, 32000, 2048};
  std::string llama2c(reinterpret_cast<const char *>(header), sizeof header);
  EXPECT_EQ(*detectWeightFormat(writeTemp("dim640.bin", llama2c)), WeightFormat::Llama2c);
  std::string ggml = writeTemp("old.ggml", std::string("GGML") + std::string(40, '\x01'));
  auto unknown = detectWeightFormat(ggml);
  ASSERT_FALSE(bool(unknown));
  EXPECT_EQ(llvm::toString(unknown.takeError()).rfind(
                ggml + ": not a weight file tfm reads: bad magic \"GGML\" (hex 47474d4c); "
                       "expected a GGUF file (magic \"GGUF\")",
                0),
            0u);
  std::string tiny = writeTemp("tiny.bin", "abc");
  auto tooShort = detectWeightFormat(tiny);
  ASSERT_FALSE(bool(tooShort));
  EXPECT_NE(llvm::toString(tooShort.takeError()).find("not a weight file tfm reads"),
            std::string::npos);
  auto missing = detectWeightFormat(tempPath("no-such-weights.bin"));
  ASSERT_FALSE(bool(missing));
  EXPECT_NE(llvm::toString(missing.takeError()).find("no-such-weights.bin: cannot open"),
            std::string::npos);
  auto folder = detectWeightFormat(::testing::TempDir());
  ASSERT_FALSE(bool(folder));
  EXPECT_NE(llvm::toString(folder.takeError()).find("is a folder"), std::string::npos);
}

TEST(WeightLoader, RefusesBrokenShards) {
  Manifest m = llamaManifest(false);
  std::string index = writeHf("broken", m, {}, 2);
  ASSERT_TRUE(llvm::sys::fs::remove(tempPath("broken-2.safetensors")) == std::error_code());
  std::string error = bindError(index, m);
  EXPECT_EQ(error.rfind(tempPath("broken-2.safetensors") + ": cannot open", 0), 0u) << error;
  EXPECT_NE(error.find("(a shard named by " + index + ")"), std::string::npos) << error;

  // The index puts a tensor in a shard that does not hold it.
  writeHf("moved", m, {}, 2);
  std::string moved = writeTemp(
      "moved.index.json",
      R"({"weight_map":{"model.embed_tokens.weight":"moved-2.safetensors"}})");
  Manifest one = m;
  one.tensors.resize(1);
  EXPECT_EQ(bindError(moved, one),
            tempPath("moved-2.safetensors") + ": tensor 'model.embed_tokens.weight' is missing, "
                                              "but " + moved + " puts it in this shard");
}

// A non-finite logit is explained by the tensor that holds a NaN or an
// infinity, read in the type the library binds it in.
TEST(NonFiniteWeights, NamesTheTensorInItsType) {
  Manifest m;
  m.config.family = Family::Llama;
  m.tensors.push_back({"output_norm.weight", {4}, ElementEncoding{DType::F16, std::nullopt}});
  m.tensors.push_back({"output.weight", {2, 32}, *parseElementEncoding("q8_0")});
  const uint16_t norm[4] = {0x3c00, 0x3c00, 0x3c00, 0x3c00}; // ones
  std::vector<uint8_t> blocks(2 * 34, 0);
  blocks[34] = 0x00, blocks[35] = 0x7e; // the second row's scale: an f16 NaN
  blocks[36] = 1;                        // times a non-zero level
  BoundWeights bound;
  bound.pointers = {norm, blocks.data()};
  std::string message = llvm::toString(explainNonFiniteLogits(
      llvm::make_error<NonFiniteLogitError>("decode", 5), bound, m, "w.gguf"));
  EXPECT_NE(message.find("w.gguf: tensor 'output.weight' holds nan at element 32"),
            std::string::npos)
      << message;
}

// Llama 3's RoPE scaling lives in the compiled tables; a GGUF's
// rope_freqs.weight must be those factors, and is never ignored.
TEST(WeightLoader, RopeFreqsMustBeTheCompiledFactors) {
  Manifest scaled = llamaManifest(false);
  scaled.config.ropeFreqFactors = {1.0, 8.0};
  auto write = [&](const std::string &name, std::vector<float> freqs) {
    GgufWriter w;
    w.addString("general.architecture", "llama");
    for (const TensorSpec &t : scaled.tensors)
      w.addTensor(t.name, t.shape, GgmlF32);
    if (!freqs.empty())
      w.addF32Tensor("rope_freqs.weight", freqs);
    return writeTensorFile(tempPath(name + ".gguf"), w, [&](size_t i, llvm::raw_ostream &out) {
      writeElements(out, hfLayout(scaled, i, HfLayout::Same).first, "F32");
    });
  };
  std::string withFreqs = write("rope-freqs", {1.0f, 8.0f});
  expectManifestValues(withFreqs, scaled);

  Manifest other = scaled;
  other.config.ropeFreqFactors = {1.0, 4.0};
  std::string differs = bindError(withFreqs, other);
  EXPECT_NE(differs.find("tensor 'rope_freqs.weight', RoPE frequency factors (Llama 3's scaling), "
                         "differs"),
            std::string::npos)
      << differs;
  std::string unscaled = bindError(withFreqs, llamaManifest(false));
  EXPECT_NE(unscaled.find("is present, but the library was compiled without them"),
            std::string::npos)
      << unscaled;
  std::string missing = bindError(write("no-rope-freqs", {}), scaled);
  EXPECT_NE(missing.find("tensor 'rope_freqs.weight' is missing"), std::string::npos) << missing;
}

// LongRoPE's two lists are held the same way: each tensor must be its list.
TEST(WeightLoader, LongRopeFactorsMustBeTheCompiledOnes) {
  Manifest longRope = llamaManifest(false);
  longRope.config.ropeShortFactors = {1.0, 1.5};
  longRope.config.ropeLongFactors = {2.0, 9.0};
  auto write = [&](const std::string &name, std::vector<float> shortFactors,
                   std::vector<float> longFactors) {
    GgufWriter w;
    w.addString("general.architecture", "llama");
    for (const TensorSpec &t : longRope.tensors)
      w.addTensor(t.name, t.shape, GgmlF32);
    w.addF32Tensor("rope_factors_short.weight", shortFactors);
    w.addF32Tensor("rope_factors_long.weight", longFactors);
    return writeTensorFile(tempPath(name + ".gguf"), w, [&](size_t i, llvm::raw_ostream &out) {
      writeElements(out, hfLayout(longRope, i, HfLayout::Same).first, "F32");
    });
  };
  expectManifestValues(write("longrope", {1.0f, 1.5f}, {2.0f, 9.0f}), longRope);
  std::string differs = bindError(write("longrope-other", {1.0f, 1.5f}, {2.0f, 8.0f}), longRope);
  EXPECT_NE(differs.find("tensor 'rope_factors_long.weight', LongRoPE's long factors (Phi-3), "
                         "differs from those the library was compiled with"),
            std::string::npos)
      << differs;
}
