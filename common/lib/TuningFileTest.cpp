//===- TuningFileTest.cpp - tfmc --tune's records, written and read back --===//
#include "tfm/common/TuningFile.h"

#include "tfm/common/OutputFile.h"

#include "llvm/Support/FileSystem.h"

#include <gtest/gtest.h>

using namespace tfm;

namespace {

/// A fresh path in the system's temporary folder, removed at the end.
struct TemporaryPath {
  std::string path;
  TemporaryPath() {
    llvm::SmallString<128> p;
    llvm::sys::fs::createUniquePath("tfm-tuning-%%%%%%.json", p, /*MakeAbsolute=*/true);
    path = std::string(p);
  }
  ~TemporaryPath() { llvm::sys::fs::remove(path); }
};

TuningRecord record(const std::string &target, const std::string &key,
                    const std::string &schedule) {
  return {target, key, "prefill_attn", "gpt2-small", schedule, 0.5, 0.75};
}

} // namespace

TEST(TuningFile, AMissingFileReadsAsEmpty) {
  TemporaryPath tmp;
  auto file = readTuningFile(tmp.path);
  ASSERT_TRUE(bool(file)) << llvm::toString(file.takeError());
  EXPECT_TRUE(file->records.empty());
}

TEST(TuningFile, RecordsRoundTripAndAreKeyedByTargetAndKernel) {
  TemporaryPath tmp;
  TuningFile file;
  file.put(record("x86-64-linux-avx512", "k1", "fast-attn32"));
  file.put(record("x86-64-linux-avx2", "k1", "fast-c4"));
  file.put(record("x86-64-linux-avx512", "k1", "fast-attn8")); // replaces the first
  ASSERT_EQ(file.records.size(), 2u);
  ASSERT_FALSE(bool(writeTuningFile(tmp.path, file)));

  auto read = readTuningFile(tmp.path);
  ASSERT_TRUE(bool(read)) << llvm::toString(read.takeError());
  const TuningRecord *r = read->find("x86-64-linux-avx512", "k1");
  ASSERT_NE(r, nullptr);
  EXPECT_EQ(r->schedule, "fast-attn8");
  EXPECT_EQ(r->kernel, "prefill_attn");
  EXPECT_EQ(r->config, "gpt2-small");
  EXPECT_DOUBLE_EQ(r->medianMs, 0.5);
  EXPECT_DOUBLE_EQ(r->defaultMs, 0.75);
  EXPECT_EQ(read->find("x86-64-linux-avx2", "k1")->schedule, "fast-c4");
  EXPECT_EQ(read->find("x86-64-linux-avx512", "k2"), nullptr);
  EXPECT_EQ(read->find("arm-64-linux", "k1"), nullptr);
}

TEST(TuningFile, TheProfilerIsNotPartOfTheTarget) {
  EXPECT_EQ(tuningTarget("x86-64-linux-avx2-fma-profile"), "x86-64-linux-avx2-fma");
  EXPECT_EQ(tuningTarget("x86-64-linux-profile-avx2"), "x86-64-linux-avx2");
  EXPECT_EQ(tuningTarget("x86-64-linux"), "x86-64-linux");
}

TEST(TuningFile, ErrorsNameTheFileAndField) {
  TemporaryPath tmp;
  auto errorOf = [&](const std::string &text) {
    EXPECT_FALSE(bool(writeTextFile(tmp.path, text)));
    auto file = readTuningFile(tmp.path);
    return file ? std::string() : llvm::toString(file.takeError());
  };
  std::string e = errorOf(R"({"format": "tfmc-tuning", "version": 1,
                              "records": [{"target": "x86-64-linux", "kernel_key": "k"}]})");
  EXPECT_NE(e.find(tmp.path + ": field 'records[0].schedule': missing, expected a string"),
            std::string::npos)
      << e;
  e = errorOf(R"({"format": "tfmc-tuning", "version": 7, "records": []})");
  EXPECT_NE(e.find("version 7; expected 'tfmc-tuning' version 1"), std::string::npos) << e;
  e = errorOf("[1]");
  EXPECT_NE(e.find("expected a JSON object"), std::string::npos) << e;
}
