//===- OutputFileTest.cpp - Outputs written whole, never over an input ----===//
#include "tfm/common/OutputFile.h"

#include "llvm/Support/FileSystem.h"

#include <gtest/gtest.h>

#include <fstream>
#include <sstream>
#include <unistd.h>

using namespace tfm;

namespace {

/// A fresh folder of the test's own, and `name` in it.
class Scratch {
public:
  Scratch()
      : dir(std::string(::testing::TempDir()) + "tfm-output-file/" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name()) {
    llvm::sys::fs::remove_directories(dir);
    llvm::sys::fs::create_directories(dir);
  }
  std::string operator()(const std::string &name) const { return dir + "/" + name; }
  const std::string dir;
};

std::string contents(const std::string &path) {
  std::ifstream in(path);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

std::string refusal(llvm::Error e) { return e ? llvm::toString(std::move(e)) : ""; }

TEST(OutputFile, AnUncommittedOutputLeavesTheOldFile) {
  Scratch scratch;
  std::string path = scratch("out.txt");
  ASSERT_EQ(refusal(writeTextFile(path, "old")), "");
  {
    llvm::Expected<AtomicOutputFile> out = AtomicOutputFile::create(path);
    ASSERT_TRUE(bool(out));
    out->os() << "new, but never committed";
  }
  EXPECT_EQ(contents(path), "old");
  std::error_code ec;
  for (llvm::sys::fs::directory_iterator it(scratch.dir, ec), end;
       it != end && !ec; it.increment(ec))
    EXPECT_EQ(it->path().find(".tmp-"), std::string::npos) << it->path() << " was left";
  ASSERT_EQ(refusal(writeTextFile(path, "new")), "");
  EXPECT_EQ(contents(path), "new");
}

TEST(OutputFile, ALinkKeepsPointingAtTheOutput) {
  Scratch scratch;
  std::string target = scratch("target.txt"), link = scratch("link.txt");
  ASSERT_EQ(refusal(writeTextFile(target, "old")), "");
  unlink(link.c_str());
  ASSERT_EQ(symlink(target.c_str(), link.c_str()), 0);
  ASSERT_EQ(refusal(writeTextFile(link, "new")), "");
  EXPECT_TRUE(llvm::sys::fs::is_symlink_file(link));
  EXPECT_EQ(contents(target), "new");
}

TEST(OutputFile, RefusesAnOutputThatIsAnInput) {
  Scratch scratch;
  std::string input = scratch("in.gguf"), link = scratch("in-link.gguf"),
              hard = scratch("in-hard.gguf"), other = scratch("other.gguf");
  ASSERT_EQ(refusal(writeTextFile(input, "weights")), "");
  unlink(link.c_str());
  unlink(hard.c_str());
  ASSERT_EQ(symlink(input.c_str(), link.c_str()), 0);
  ASSERT_EQ(::link(input.c_str(), hard.c_str()), 0);
  for (const std::string &output : {input, link, hard})
    EXPECT_NE(refusal(refuseInputAsOutput(output, {"", other, input})).find("refusing"),
              std::string::npos)
        << output;
  EXPECT_EQ(refusal(refuseInputAsOutput(other, {input})), "");
}

TEST(OutputFile, WritesADeviceInPlace) {
  ASSERT_EQ(refusal(writeTextFile("/dev/null", "discarded")), "");
  llvm::sys::fs::file_status status;
  ASSERT_FALSE(llvm::sys::fs::status("/dev/null", status));
  EXPECT_EQ(status.type(), llvm::sys::fs::file_type::character_file);
  EXPECT_NE(refusal(writeTextFile("/dev/full", "x")).find("/dev/full: write failed"),
            std::string::npos);
}

} // namespace
