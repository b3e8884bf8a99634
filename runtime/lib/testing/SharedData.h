//===- SharedData.h - Locate ../shared test data from a unit test --------===//
//
// Same rule as tests/testlib.py: data missing means skip, except under
// CI=true where it is a failure.
//
//===----------------------------------------------------------------------===//
#ifndef TFM_RUNTIME_TESTING_SHAREDDATA_H
#define TFM_RUNTIME_TESTING_SHAREDDATA_H

#include <gtest/gtest.h>

#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>

namespace tfm::rt::testing {

/// Path of TFM_SHARED_DIR/relpath, or "" (after recording a skip or, under
/// CI, a failure) when it is missing. Callers return on "".
inline std::string sharedPath(const std::string &relpath) {
  const char *dir = std::getenv("TFM_SHARED_DIR");
  std::string path = dir ? std::string(dir) + "/" + relpath : relpath;
  if (dir && std::ifstream(path).good())
    return path;
  const char *ci = std::getenv("CI");
  if (ci && std::string(ci) == "true")
    ADD_FAILURE() << path << " is missing; CI needs the shared data (TFM_SHARED_DIR)";
  return "";
}

inline std::string readFile(const std::string &path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

} // namespace tfm::rt::testing

#define TFM_SHARED_OR_SKIP(var, relpath)                                        \
  std::string var = ::tfm::rt::testing::sharedPath(relpath);                   \
  if (var.empty())                                                              \
  GTEST_SKIP() << relpath << " not found under TFM_SHARED_DIR"

#endif // TFM_RUNTIME_TESTING_SHAREDDATA_H
