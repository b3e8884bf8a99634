//===- PrivateFilesTest.cpp - Folders and files only this user can change -===//
#include "tfm/common/PrivateFiles.h"

#include "llvm/Support/FileSystem.h"

#include <gtest/gtest.h>

#include <fstream>
#include <sys/stat.h>
#include <unistd.h>

using namespace tfm;

namespace {

/// A fresh folder of the test's own, and `name` in it.
class Scratch {
public:
  Scratch()
      : dir(std::string(::testing::TempDir()) + "tfm-private-files/" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name()) {
    llvm::sys::fs::remove_directories(dir);
    llvm::sys::fs::create_directories(dir);
  }
  std::string operator()(const std::string &name) const { return dir + "/" + name; }
  const std::string dir;
};

std::string refusal(llvm::Error e) { return e ? llvm::toString(std::move(e)) : ""; }

TEST(PrivateFiles, CreatesFoldersOnlyTheOwnerCanEnter) {
  Scratch scratch;
  std::string dir = scratch("a/b/c");
  ASSERT_EQ(refusal(makePrivateDir(dir, "cache")), "");
  for (std::string d : {dir, dir.substr(0, dir.size() - 2), dir.substr(0, dir.size() - 4)}) {
    struct stat s;
    ASSERT_EQ(stat(d.c_str(), &s), 0);
    EXPECT_EQ(s.st_mode & 0777, 0700u) << d;
  }
}

TEST(PrivateFiles, RefusesWhatOthersMayWrite) {
  Scratch scratch;
  std::string file = scratch("entry.so");
  std::ofstream(file) << "x";
  chmod(file.c_str(), 0644);
  EXPECT_EQ(refusal(checkPrivate(file, "cached library")), "");
  chmod(file.c_str(), 0664);
  EXPECT_NE(refusal(checkPrivate(file, "cached library")).find("mode 0664, writable by its group"),
            std::string::npos);
  chmod(file.c_str(), 0646);
  EXPECT_NE(refusal(checkPrivate(file, "cached library")).find("writable by its group or others"),
            std::string::npos);
}

TEST(PrivateFiles, RefusesWhatAnotherUserOwns) {
  Scratch scratch;
  if (geteuid() != 0)
    GTEST_SKIP() << "giving a file to another user needs root";
  std::string file = scratch("entry.so");
  std::ofstream(file) << "x";
  ASSERT_EQ(chown(file.c_str(), 65534, 65534), 0);
  EXPECT_NE(refusal(checkPrivate(file, "cached library")).find("owned by uid 65534"),
            std::string::npos);
  // A link of this user's to another's file is judged by what it names.
  std::string link = scratch("link.so");
  ASSERT_EQ(symlink(file.c_str(), link.c_str()), 0);
  std::string found = refusal(checkPrivate(link, "cached library"));
  EXPECT_NE(found.find("what it links to is owned by uid 65534"), std::string::npos) << found;
}

} // namespace
