//===- GgufFileTest.cpp - Reading and refusing GGUF files ------------------===//
//
// Files are built with GgufWriter (or by hand where the writer would refuse
// to produce the defect) and cut or patched to make each malformed case.
//
//===----------------------------------------------------------------------===//
#include "tfm/runtime/GgufFile.h"
#include "tfm/runtime/GgufWriter.h"

#include "testing/SharedData.h"
#include "testing/TempFiles.h"

#include <gtest/gtest.h>

#include <cstring>
#include <functional>

using namespace tfm;
using namespace tfm::rt;
using namespace tfm::rt::testing;

namespace {

/// Tensor i holds the floats i*1000 + 0, 1, 2, ... (f32) so a wrong offset
/// shows as wrong values.
std::string fileBytes(const GgufWriter &w) {
  std::string out;
  llvm::raw_string_ostream os(out);
  llvm::Error e = w.write(os, [&](size_t i, llvm::raw_ostream &s) {
    int64_t n = w.tensorBytes(i) / 4;
    for (int64_t k = 0; k < n; ++k) {
      float v = static_cast<float>(i * 1000 + k);
      s.write(reinterpret_cast<const char *>(&v), sizeof v);
    }
    s.write_zeros(w.tensorBytes(i) % 4);
    return llvm::Error::success();
  });
  EXPECT_FALSE(bool(e)) << llvm::toString(std::move(e));
  os.flush();
  return out;
}

std::string openError(const std::string &path) {
  auto file = GgufFile::open(path);
  return file ? "" : llvm::toString(file.takeError());
}

template <typename T> std::string raw(T value) {
  std::string out(sizeof value, '\0');
  std::memcpy(out.data(), &value, sizeof value);
  return out;
}

/// A small valid file: two metadata keys and two f32 tensors.
GgufWriter smallModel() {
  GgufWriter w;
  w.addString("general.architecture", "llama");
  w.addStringArray("tokenizer.ggml.tokens", {"<s>", "a", "bc"});
  w.addTensor("token_embd.weight", {3, 4}, GgmlF32);
  w.addTensor("output_norm.weight", {4}, GgmlF32);
  return w;
}

/// One key of every value type, numeric and string arrays, and an array of
/// arrays.
GgufWriter everyValueType() {
  GgufWriter w;
  w.addEncoded("u8", GgufType::U8, raw<uint8_t>(200));
  w.addEncoded("i8", GgufType::I8, raw<int8_t>(-100));
  w.addEncoded("u16", GgufType::U16, raw<uint16_t>(60000));
  w.addEncoded("i16", GgufType::I16, raw<int16_t>(-30000));
  w.addU32("u32", 4000000000u);
  w.addI32("i32", -2000000000);
  w.addF32("f32", 0.25f);
  w.addBool("bool", true);
  w.addString("string", "h\xc3\xa9llo");
  w.addEncoded("u64", GgufType::U64, raw<uint64_t>(1ull << 40));
  w.addEncoded("i64", GgufType::I64, raw<int64_t>(-(1ll << 40)));
  w.addEncoded("f64", GgufType::F64, raw<double>(-1.5));
  w.addF32Array("scores", {0.5f, -2.0f});
  w.addI32Array("types", {1, 2, 3});
  w.addEncoded("u16s", GgufType::Array,
               GgufWriter::encodeU32(uint32_t(GgufType::U16)) + GgufWriter::encodeU64(2) +
                   raw<uint16_t>(7) + raw<uint16_t>(65535));
  w.addStringArray("merges", {"a b", "", "c d"});
  // [[1, 2], [3]] as an array of arrays of int32.
  std::string inner1 = GgufWriter::encodeU32(uint32_t(GgufType::I32)) +
                       GgufWriter::encodeU64(2) + raw<int32_t>(1) + raw<int32_t>(2);
  std::string inner2 = GgufWriter::encodeU32(uint32_t(GgufType::I32)) +
                       GgufWriter::encodeU64(1) + raw<int32_t>(3);
  w.addEncoded("nested", GgufType::Array,
               GgufWriter::encodeU32(uint32_t(GgufType::Array)) + GgufWriter::encodeU64(2) +
                   inner1 + inner2);
  return w;
}

} // namespace

TEST(GgufFile, ReadsEveryValueTypeAndNestedArrays) {
  std::string path = writeTemp("types.gguf", fileBytes(everyValueType()));

  auto file = GgufFile::open(path);
  ASSERT_TRUE(bool(file)) << llvm::toString(file.takeError());
  const GgufFile &f = **file;
  EXPECT_EQ(f.keys().size(), 17u);
  EXPECT_EQ(f.keys().front(), "u8");
  EXPECT_EQ(*f.getInteger("u8"), 200);
  EXPECT_EQ(*f.getInteger("i8"), -100);
  EXPECT_EQ(*f.getInteger("u16"), 60000);
  EXPECT_EQ(*f.getInteger("i16"), -30000);
  EXPECT_EQ(*f.getInteger("u32"), 4000000000ll);
  EXPECT_EQ(*f.getInteger("i32"), -2000000000);
  EXPECT_EQ(*f.getFloat("f32"), 0.25);
  EXPECT_TRUE(*f.getBool("bool"));
  EXPECT_EQ(*f.getString("string"), "h\xc3\xa9llo");
  EXPECT_EQ(*f.getInteger("u64"), 1ll << 40);
  EXPECT_EQ(*f.getInteger("i64"), -(1ll << 40));
  EXPECT_EQ(*f.getFloat("f64"), -1.5);
  EXPECT_EQ(*f.getF32Array("scores"), (std::vector<float>{0.5f, -2.0f}));
  EXPECT_EQ(*f.getI32Array("types"), (std::vector<int32_t>{1, 2, 3}));
  EXPECT_EQ(*f.getI32Array("u16s"), (std::vector<int32_t>{7, 65535}));
  EXPECT_EQ(*f.getStringArray("merges"), (std::vector<std::string>{"a b", "", "c d"}));

  const GgufValue *nested = f.find("nested");
  ASSERT_NE(nested, nullptr);
  EXPECT_EQ(nested->elementType, GgufType::Array);
  ASSERT_EQ(nested->items.size(), 2u);
  EXPECT_EQ(nested->items[0].elementType, GgufType::I32);
  EXPECT_EQ(nested->items[0].count, 2u);
  int32_t second;
  std::memcpy(&second, nested->items[0].elements.data() + 4, 4);
  EXPECT_EQ(second, 2);
  EXPECT_EQ(nested->items[1].count, 1u);
  EXPECT_TRUE(f.tensors().empty());
}

TEST(GgufFile, WriterCopiesValuesReadFromAFile) {
  std::string original = fileBytes(everyValueType());
  auto file = GgufFile::open(writeTemp("copied-from.gguf", original));
  ASSERT_TRUE(bool(file)) << llvm::toString(file.takeError());
  GgufWriter copy;
  for (const std::string &key : (*file)->keys())
    copy.addValue(key, *(*file)->find(key));
  EXPECT_EQ(fileBytes(copy), original);
}

TEST(GgufFile, GettersNameFileAndKeyOnMissingOrWrongType) {
  std::string path = writeTemp("getters.gguf", fileBytes(smallModel()));
  auto file = GgufFile::open(path);
  ASSERT_TRUE(bool(file)) << llvm::toString(file.takeError());
  EXPECT_FALSE((*file)->has("tokenizer.ggml.bos_token_id"));
  std::string missing =
      llvm::toString((*file)->getInteger("tokenizer.ggml.bos_token_id").takeError());
  EXPECT_EQ(missing, path + ": metadata key 'tokenizer.ggml.bos_token_id' is missing, "
                            "expected an integer");
  std::string wrong = llvm::toString((*file)->getF32Array("tokenizer.ggml.tokens").takeError());
  EXPECT_EQ(wrong, path + ": metadata key 'tokenizer.ggml.tokens' is array of string, "
                          "expected an array of float32");
  std::string notString = llvm::toString((*file)->getString("tokenizer.ggml.tokens").takeError());
  EXPECT_NE(notString.find("expected a string"), std::string::npos) << notString;
}

TEST(GgufFile, ReadsTensorInfosAtTheirAlignedOffsets) {
  for (uint32_t alignment : {32u, 64u}) {
    GgufWriter w;
    if (alignment != 32)
      w.setAlignment(alignment);
    w.addString("general.architecture", "gpt2");
    w.addTensor("blk.0.attn_qkv.weight", {6, 5}, GgmlF32);
    w.addTensor("blk.0.attn_qkv.bias", {6}, GgmlF16);
    w.addTensor("blk.0.ffn_up.weight", {2, 64}, GgmlQ8_0);
    w.addTensor("token_embd.weight", {7, 3}, GgmlF32);
    std::string path = writeTemp("tensors" + std::to_string(alignment) + ".gguf", fileBytes(w));

    auto file = GgufFile::open(path);
    ASSERT_TRUE(bool(file)) << llvm::toString(file.takeError());
    const GgufFile &f = **file;
    EXPECT_EQ(f.alignment(), alignment);
    EXPECT_EQ(f.dataOffset() % alignment, 0);
    ASSERT_EQ(f.tensors().size(), 4u);
    const GgufTensorInfo &qkv = f.tensors()[0];
    EXPECT_EQ(qkv.name, "blk.0.attn_qkv.weight");
    EXPECT_EQ(qkv.shape, (std::vector<int64_t>{6, 5}));
    EXPECT_EQ(qkv.ne, (std::vector<int64_t>{5, 6}));
    EXPECT_EQ(qkv.type, GgmlF32);
    EXPECT_EQ(qkv.bytes, 6 * 5 * 4);
    EXPECT_EQ(f.tensors()[1].bytes, 6 * 2);
    EXPECT_EQ(f.tensors()[2].bytes, 2 * 2 * 34); // two q8_0 blocks per row
    EXPECT_STREQ(ggmlTypeInfo(f.tensors()[2].type)->name, "q8_0");
    for (size_t i = 0; i < f.tensors().size(); ++i) {
      const GgufTensorInfo &t = f.tensors()[i];
      EXPECT_EQ((t.offset - f.dataOffset()) % alignment, 0) << t.name;
      float first;
      std::memcpy(&first, f.data() + t.offset, 4);
      EXPECT_EQ(first, static_cast<float>(i * 1000)) << t.name;
    }
    const GgufTensorInfo *embd = f.findTensor("token_embd.weight");
    ASSERT_NE(embd, nullptr);
    float last;
    std::memcpy(&last, f.data() + embd->offset + embd->bytes - 4, 4);
    EXPECT_EQ(last, 3000.0f + 20);
    EXPECT_EQ(f.findTensor("output.weight"), nullptr);
  }
}

TEST(GgufFile, RefusesBadMagic) {
  std::string bytes = fileBytes(smallModel());
  bytes.replace(0, 4, "GGML");
  std::string path = writeTemp("magic.gguf", bytes);
  std::string error = openError(path);
  EXPECT_EQ(error.rfind(path + ": bad magic", 0), 0u) << error;
  EXPECT_NE(error.find("47474d4c"), std::string::npos) << error;
  EXPECT_NE(error.find("expected \"GGUF\""), std::string::npos) << error;
}

TEST(GgufFile, RefusesVersionsOtherThan3) {
  for (uint32_t version : {1u, 2u, 4u}) {
    std::string bytes = fileBytes(smallModel());
    bytes.replace(4, 4, raw(version));
    std::string path = writeTemp("v" + std::to_string(version) + ".gguf", bytes);
    std::string error = openError(path);
    EXPECT_NE(error.find(path + ": GGUF version " + std::to_string(version) +
                         ", this reader reads version 3 only"),
              std::string::npos)
        << error;
  }
}

TEST(GgufFile, RefusesTruncatedMetadataNamingTheKey) {
  std::string bytes = fileBytes(smallModel());
  // Cut inside the second key's array of strings.
  size_t cut = bytes.find("bc") + 1;
  std::string path = writeTemp("cutmeta.gguf", bytes.substr(0, cut));
  std::string error = openError(path);
  EXPECT_EQ(error.rfind(path + ": metadata key \"tokenizer.ggml.tokens\"[2]", 0), 0u) << error;
  EXPECT_NE(error.find("truncated metadata"), std::string::npos) << error;
  EXPECT_NE(error.find("the file has only " + std::to_string(cut) + " bytes"),
            std::string::npos)
      << error;

  std::string header = writeTemp("header.gguf", bytes.substr(0, 10));
  EXPECT_NE(openError(header).find("too short for the 24-byte GGUF header"), std::string::npos);
}

TEST(GgufFile, RefusesTruncatedTensorDataNamingTheTensor) {
  std::string bytes = fileBytes(smallModel());
  auto whole = GgufFile::open(writeTemp("whole.gguf", bytes));
  ASSERT_TRUE(bool(whole)) << llvm::toString(whole.takeError());
  const GgufTensorInfo &norm = (*whole)->tensors()[1];
  size_t cut = norm.offset + norm.bytes - 1;
  std::string path = writeTemp("cutdata.gguf", bytes.substr(0, cut));
  std::string error = openError(path);
  EXPECT_EQ(error, path + ": tensor \"output_norm.weight\" (f32, ne [4]) needs bytes " +
                       std::to_string(norm.offset) + ".." +
                       std::to_string(norm.offset + norm.bytes) + ", the file has only " +
                       std::to_string(cut) + " bytes (truncated tensor data)");
}

TEST(GgufFile, RefusesAbsurdCounts) {
  std::string bytes = fileBytes(smallModel());
  std::string kv = bytes;
  kv.replace(16, 8, raw<uint64_t>(1ull << 60));
  std::string kvPath = writeTemp("manykv.gguf", kv);
  std::string kvError = openError(kvPath);
  EXPECT_NE(kvError.find(kvPath + ": header says 1152921504606846976 metadata entries and 2 "
                                  "tensors, more than the "),
            std::string::npos)
      << kvError;
  EXPECT_NE(kvError.find("(corrupt header)"), std::string::npos) << kvError;

  std::string tensors = bytes;
  tensors.replace(8, 8, raw<uint64_t>(~0ull));
  std::string tPath = writeTemp("manytensors.gguf", tensors);
  EXPECT_NE(openError(tPath).find("18446744073709551615 tensors"), std::string::npos)
      << openError(tPath);

  // The token array's length field is the 8 bytes after its element type.
  std::string array = bytes;
  size_t lengthAt = array.find("tokenizer.ggml.tokens") + 21 + 4 + 4;
  array.replace(lengthAt, 8, raw<uint64_t>(1ull << 50));
  std::string aPath = writeTemp("longarray.gguf", array);
  std::string aError = openError(aPath);
  EXPECT_NE(aError.find("metadata key \"tokenizer.ggml.tokens\": an array of 1125899906842624 "
                        "string values"),
            std::string::npos)
      << aError;
}

TEST(GgufFile, BoundsTheMemoryOfArrays) {
  // A string array stays the file's bytes until read.
  GgufWriter strings;
  strings.addStringArray("tokenizer.ggml.tokens", std::vector<std::string>(100000, ""));
  std::string stringsPath = writeTemp("many-strings.gguf", fileBytes(strings));
  auto file = GgufFile::open(stringsPath);
  ASSERT_TRUE(static_cast<bool>(file)) << llvm::toString(file.takeError());
  const GgufValue *tokens = (*file)->find("tokenizer.ggml.tokens");
  ASSERT_NE(tokens, nullptr);
  EXPECT_TRUE(tokens->items.empty());
  EXPECT_EQ(tokens->elements.size(), 100000u * 8);
  EXPECT_EQ((*file)->getStringArray("tokenizer.ggml.tokens")->size(), 100000u);

  // Arrays of arrays are parsed into values, so their number is capped.
  std::string empty = GgufWriter::encodeU32(uint32_t(GgufType::I32)) + GgufWriter::encodeU64(0);
  std::string many;
  for (int i = 0; i < 65537; ++i)
    many += empty;
  GgufWriter nested;
  nested.addEncoded("nested", GgufType::Array,
                    GgufWriter::encodeU32(uint32_t(GgufType::Array)) +
                        GgufWriter::encodeU64(65537) + many);
  std::string nestedPath = writeTemp("many-arrays.gguf", fileBytes(nested));
  std::string error = openError(nestedPath);
  EXPECT_NE(error.find(nestedPath + ": metadata key \"nested\": an array of 65537 arrays, "
                                    "expected at most 65536"),
            std::string::npos)
      << error;
}

TEST(GgufFile, RefusesBadTensorInfos) {
  struct Case {
    const char *name;
    std::function<void(GgufWriter &)> build;
    std::function<void(std::string &)> patch;
    std::string expected;
  };
  // output_norm.weight's info: n_dims (4 bytes), ne[0] (8), type (4), offset (8).
  auto patch = [](size_t at, std::string value) {
    return [at, value](std::string &b) {
      b.replace(b.find("output_norm.weight") + 18 + at, value.size(), value);
    };
  };
  std::vector<Case> cases = {
      {"type", [](GgufWriter &) {}, patch(12, raw<uint32_t>(99)),
       "tensor \"output_norm.weight\": ggml type 99, not a type ggml defines"},
      {"dims", [](GgufWriter &) {}, patch(0, raw<uint32_t>(9)),
       "tensor \"output_norm.weight\": n_dims 9, expected at most 4"},
      {"zero", [](GgufWriter &) {}, patch(4, raw<uint64_t>(0)),
       "tensor \"output_norm.weight\": dimension ne[0] = 0, expected a positive size"},
      {"block", [](GgufWriter &) {}, patch(12, raw<uint32_t>(GgmlQ8_0)),
       "tensor \"output_norm.weight\": ne[0] = 4 is not a multiple of q8_0's block size 32"},
      {"offset", [](GgufWriter &) {}, patch(16, raw<uint64_t>(52)),
       "tensor \"output_norm.weight\": data offset 52 is not a multiple of the alignment 32"},
      {"twice", [](GgufWriter &w) { w.addTensor("token_embd.weight", {1}, GgmlF32); },
       [](std::string &) {}, "tensor \"token_embd.weight\" appears twice"},
      {"key", [](GgufWriter &w) { w.addString("general.architecture", "gpt2"); },
       [](std::string &) {}, "metadata key \"general.architecture\" appears twice"},
      {"align", [](GgufWriter &w) { w.addU32("general.alignment", 24); }, [](std::string &) {},
       "metadata key 'general.alignment' is 24, expected a power of two"},
      {"valuetype", [](GgufWriter &w) { w.addEncoded("odd", GgufType(13), ""); },
       [](std::string &) {}, "metadata key \"odd\": value type 13, expected a GGUF value type"},
  };
  for (const Case &c : cases) {
    GgufWriter w = smallModel();
    c.build(w);
    std::string bytes = fileBytes(w);
    c.patch(bytes);
    std::string path = writeTemp(std::string("bad-") + c.name + ".gguf", bytes);
    std::string error = openError(path);
    EXPECT_NE(error.find(path + ": " + c.expected), std::string::npos) << c.name << ": " << error;
  }
}

TEST(GgufFile, RefusesMissingFile) {
  std::string error = openError("/nonexistent/model.gguf");
  EXPECT_NE(error.find("/nonexistent/model.gguf: cannot open"), std::string::npos) << error;
}

TEST(GgufFile, ReadsLlamaCppVocabularyFiles) {
  TFM_SHARED_OR_SKIP(path, "models/gguf-vocab/ggml-vocab-gpt-2.gguf");
  auto file = GgufFile::open(path);
  ASSERT_TRUE(bool(file)) << llvm::toString(file.takeError());
  EXPECT_EQ(*(*file)->getString("tokenizer.ggml.model"), "gpt2");
  auto tokens = (*file)->getStringArray("tokenizer.ggml.tokens");
  ASSERT_TRUE(bool(tokens)) << llvm::toString(tokens.takeError());
  EXPECT_EQ(tokens->size(), 50257u);
  EXPECT_EQ((*tokens)[0], "!");
  auto merges = (*file)->getStringArray("tokenizer.ggml.merges");
  ASSERT_TRUE(bool(merges)) << llvm::toString(merges.takeError());
  EXPECT_EQ(merges->size(), 50000u);
  auto types = (*file)->getI32Array("tokenizer.ggml.token_type");
  ASSERT_TRUE(bool(types)) << llvm::toString(types.takeError());
  EXPECT_EQ(types->size(), tokens->size());
}
