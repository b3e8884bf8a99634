//===- ModelCacheTest.cpp - Where the model cache lives -------------------===//
//
// The cache holds libraries tfm-run loads: with no HOME (cron, systemd
// units, `env -i`) it must not fall back to a folder any user could have
// created first, such as /tmp/.cache.
//
//===----------------------------------------------------------------------===//
#include "tfm/runtime/ModelCache.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <optional>
#include <pwd.h>
#include <string>
#include <unistd.h>

using namespace tfm::rt;

namespace {

/// Sets (or with nullopt unsets) an environment variable for one scope.
class ScopedEnv {
public:
  ScopedEnv(const char *name, std::optional<std::string> value) : name(name) {
    if (const char *old = std::getenv(name))
      saved = old;
    if (value)
      setenv(name, value->c_str(), 1);
    else
      unsetenv(name);
  }
  ~ScopedEnv() {
    if (saved)
      setenv(name, saved->c_str(), 1);
    else
      unsetenv(name);
  }

private:
  const char *name;
  std::optional<std::string> saved;
};

std::string cacheDir() {
  llvm::Expected<std::string> dir = defaultCacheDir();
  return dir ? *dir : "error: " + llvm::toString(dir.takeError());
}

TEST(ModelCache, FollowsTheEnvironment) {
  ScopedEnv cache("TFM_CACHE_DIR", std::nullopt), xdg("XDG_CACHE_HOME", "/x/cache"),
      home("HOME", "/h");
  EXPECT_EQ(cacheDir(), "/x/cache/tfmc");
  {
    ScopedEnv noXdg("XDG_CACHE_HOME", std::nullopt);
    EXPECT_EQ(cacheDir(), "/h/.cache/tfmc");
  }
  ScopedEnv explicitDir("TFM_CACHE_DIR", "/mine");
  EXPECT_EQ(cacheDir(), "/mine");
}

TEST(ModelCache, WithoutHomeTakesThePasswordDatabasesHome) {
  ScopedEnv cache("TFM_CACHE_DIR", std::nullopt), xdg("XDG_CACHE_HOME", std::nullopt),
      home("HOME", std::nullopt);
  const struct passwd *user = getpwuid(geteuid());
  ASSERT_NE(user, nullptr);
  EXPECT_EQ(cacheDir(), std::string(user->pw_dir) + "/.cache/tfmc");
  // Relative values are ignored, as the XDG specification says.
  ScopedEnv relativeXdg("XDG_CACHE_HOME", "cache"), relativeHome("HOME", "");
  EXPECT_EQ(cacheDir(), std::string(user->pw_dir) + "/.cache/tfmc");
  EXPECT_EQ(cacheDir().rfind("/tmp", 0), std::string::npos);
}

} // namespace
