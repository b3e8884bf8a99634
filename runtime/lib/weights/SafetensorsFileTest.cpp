//===- SafetensorsFileTest.cpp - Reading and refusing safetensors files ---===//
//
// Malformed files are written byte by byte (an 8-byte length and a JSON
// header typed out here) so each defect is exactly the one named.
//
//===----------------------------------------------------------------------===//
#include "tfm/runtime/SafetensorsFile.h"
#include "tfm/runtime/SafetensorsWriter.h"

#include "testing/TempFiles.h"

#include <gtest/gtest.h>

#include <cstring>

using namespace tfm;
using namespace tfm::rt;
using namespace tfm::rt::testing;

namespace {

/// A file with `header` as its JSON and `dataBytes` bytes of data.
std::string rawFile(const std::string &header, size_t dataBytes) {
  uint64_t length = header.size();
  std::string out(8, '\0');
  std::memcpy(out.data(), &length, 8);
  return out + header + std::string(dataBytes, '\x01');
}

std::string openError(const std::string &path) {
  auto file = SafetensorsFile::open(path);
  return file ? "" : llvm::toString(file.takeError());
}

} // namespace

TEST(SafetensorsFile, ReadsTensorsInDataOrder) {
  SafetensorsWriter w;
  w.addTensor("b.weight", "F32", {2, 3});
  w.addTensor("a.bias", "BF16", {3});
  w.addTensor("c.scalar", "F16", {});
  std::string bytes;
  llvm::raw_string_ostream os(bytes);
  llvm::Error e = w.write(os, [&](size_t i, llvm::raw_ostream &s) {
    s << std::string(w.tensorBytes(i), static_cast<char>('A' + i));
    return llvm::Error::success();
  });
  ASSERT_FALSE(bool(e)) << llvm::toString(std::move(e));
  os.flush();
  std::string path = writeTemp("ok.safetensors", bytes);

  auto file = SafetensorsFile::open(path);
  ASSERT_TRUE(bool(file)) << llvm::toString(file.takeError());
  const auto &tensors = (*file)->tensors();
  ASSERT_EQ(tensors.size(), 3u);
  EXPECT_EQ(tensors[0].name, "b.weight");
  EXPECT_EQ(tensors[0].dtype, "F32");
  EXPECT_EQ(tensors[0].shape, (std::vector<int64_t>{2, 3}));
  EXPECT_EQ(tensors[0].bytes, 24);
  EXPECT_EQ(tensors[0].offset % 8, 0); // the writer pads the header
  EXPECT_EQ(tensors[1].offset, tensors[0].offset + 24);
  EXPECT_EQ(tensors[2].shape, std::vector<int64_t>{});
  EXPECT_EQ(tensors[2].bytes, 2);
  const SafetensorsTensor *bias = (*file)->findTensor("a.bias");
  ASSERT_NE(bias, nullptr);
  EXPECT_EQ((*file)->data()[bias->offset], 'B');
  EXPECT_EQ((*file)->data()[bias->offset + 5], 'B');
  EXPECT_EQ((*file)->findTensor("__metadata__"), nullptr);
}

TEST(SafetensorsFile, RefusesHeaderLengthPastEndOfFile) {
  std::string bytes = rawFile(R"({"w":{"dtype":"F32","shape":[1],"data_offsets":[0,4]}})", 4);
  bytes.replace(0, 8, std::string("\xe8\x03\0\0\0\0\0\0", 8)); // 1000
  std::string path = writeTemp("longheader.safetensors", bytes);
  std::string error = openError(path);
  EXPECT_EQ(error, path + ": header length 1000 runs past the end of the file (" +
                       std::to_string(bytes.size()) + " bytes: at most " +
                       std::to_string(bytes.size() - 8) +
                       " bytes of header; truncated or not a safetensors file)");
  EXPECT_NE(openError(writeTemp("tiny.safetensors", "abc")).find("too short"),
            std::string::npos);
}

// Each malformed header, named for its defect, and how its error goes on
// after "PATH: ".
TEST(SafetensorsFile, RefusesMalformedHeaders) {
  struct Case {
    const char *name;
    const char *header;
    size_t dataBytes;
    const char *expected;
  };
  const Case cases[] = {
      {"overlap",
       R"({"a":{"dtype":"F32","shape":[2],"data_offsets":[0,8]},)"
       R"("b":{"dtype":"F32","shape":[2],"data_offsets":[4,12]}})",
       12,
       "tensors \"a\" (data_offsets [0, 8)) and \"b\" (data_offsets [4, 12)) overlap; expected "
       "each tensor in its own bytes"},
      {"range", R"({"w":{"dtype":"F32","shape":[4],"data_offsets":[0,16]}})", 12,
       "tensor \"w\": data_offsets [0, 16) run past the end of the data (12 bytes after the "
       "header; truncated file?)"},
      {"reversed", R"({"w":{"dtype":"F32","shape":[1],"data_offsets":[8,4]}})", 12,
       "tensor \"w\": field 'data_offsets' is [8,4], expected [begin, end] with 0 <= begin <= end"},
      {"size", R"({"w":{"dtype":"BF16","shape":[2,3],"data_offsets":[0,24]}})", 24,
       "tensor \"w\": data_offsets [0, 24) hold 24 bytes, but shape [2, 3] of BF16 needs 12"},
      {"dtype", R"({"w":{"dtype":"F17","shape":[1],"data_offsets":[0,4]}})", 4,
       "tensor \"w\": unknown dtype \"F17\", expected one of F64, F32"},
      {"json", "{\"w\": [", 0, "the header: not valid JSON"},
      {"shape", R"({"w":{"dtype":"F32","shape":[-1],"data_offsets":[0,4]}})", 4,
       "tensor \"w\": field 'shape' is [-1], expected an array of non-negative integers"},
      {"entry", R"({"w":3})", 0, "tensor \"w\": found 3, expected an object"},
  };
  for (const Case &c : cases) {
    std::string path =
        writeTemp(std::string("bad-") + c.name + ".safetensors", rawFile(c.header, c.dataBytes));
    std::string error = openError(path);
    EXPECT_TRUE(llvm::StringRef(error).starts_with(path + ": " + c.expected))
        << c.name << ": " << error;
  }
}

TEST(SafetensorsIndex, ReadsWeightMapBesideTheIndex) {
  std::string dir = tempDir();
  std::string path = writeTemp("index-ok.json",
                               R"({"metadata":{"total_size":8},"weight_map":)"
                               R"({"a":"s-2.safetensors","b":"s-1.safetensors",)"
                               R"("c":"s-2.safetensors"}})");
  auto index = readSafetensorsIndex(path);
  ASSERT_TRUE(bool(index)) << llvm::toString(index.takeError());
  EXPECT_EQ(index->shards, (std::vector<std::string>{dir + "s-1.safetensors",
                                                     dir + "s-2.safetensors"}));
  EXPECT_EQ(index->shardOf.lookup("a"), dir + "s-2.safetensors");
  EXPECT_EQ(index->shardOf.lookup("b"), dir + "s-1.safetensors");

  std::string bad = writeTemp("index-bad.json", R"({"weight_map":{"a":7}})");
  auto refused = readSafetensorsIndex(bad);
  ASSERT_FALSE(bool(refused));
  EXPECT_EQ(llvm::toString(refused.takeError()),
            bad + ": field 'weight_map': tensor \"a\" maps to 7, expected the name of a shard file");
  std::string none = writeTemp("index-none.json", R"({"metadata":{}})");
  auto missing = readSafetensorsIndex(none);
  ASSERT_FALSE(bool(missing));
  EXPECT_NE(llvm::toString(missing.takeError()).find("field 'weight_map' missing"),
            std::string::npos);
}
