//===- TempFiles.h - Files the runtime tests write to read back -*- C++ -*-===//
#ifndef TFM_RUNTIME_TESTING_TEMPFILES_H
#define TFM_RUNTIME_TESTING_TEMPFILES_H

#include "llvm/Support/Error.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/raw_ostream.h"

#include <gtest/gtest.h>

#include <fstream>
#include <string>

namespace tfm::rt::testing {

/// This test's own folder in the test temp dir, with a trailing '/': ctest
/// runs each test as a process of its own, two at a time, and two tests
/// writing one file name (tied.bin) read each other's bytes.
inline std::string tempDir() {
  const ::testing::TestInfo *test = ::testing::UnitTest::GetInstance()->current_test_info();
  std::string dir = ::testing::TempDir() + "tfm-runtime-tests/" +
                    (test ? std::string(test->test_suite_name()) + "." + test->name() : "");
  std::error_code ec = llvm::sys::fs::create_directories(dir);
  EXPECT_FALSE(ec) << dir << ": " << ec.message();
  return dir + "/";
}

/// `name` in this test's folder (tempDir).
inline std::string tempPath(const std::string &name) { return tempDir() + name; }

inline std::string writeFile(const std::string &path, const std::string &bytes) {
  std::ofstream(path, std::ios::binary) << bytes;
  return path;
}

/// `bytes` as the file `name` in the test temp dir; returns its path.
inline std::string writeTemp(const std::string &name, const std::string &bytes) {
  return writeFile(tempPath(name), bytes);
}

/// The file `writer` (a GgufWriter or SafetensorsWriter) lays out, written
/// to `path` with each tensor's bytes from `data(index, os)`; returns `path`.
template <typename Writer, typename Data>
std::string writeTensorFile(const std::string &path, const Writer &writer, Data data) {
  std::error_code ec;
  llvm::raw_fd_ostream os(path, ec);
  EXPECT_FALSE(ec) << path << ": " << ec.message();
  llvm::Error e = writer.write(os, [&](size_t index, llvm::raw_ostream &out) {
    data(index, out);
    return llvm::Error::success();
  });
  EXPECT_FALSE(bool(e)) << llvm::toString(std::move(e));
  return path;
}

} // namespace tfm::rt::testing

#endif // TFM_RUNTIME_TESTING_TEMPFILES_H
