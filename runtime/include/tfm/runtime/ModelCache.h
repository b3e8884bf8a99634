//===- ModelCache.h - Compile a config on first use, reuse after -*- C++ -*-===//
//
// `tfm-run --model-dir` needs a compiled library for whatever model it is
// handed. It runs tfmc (installed beside tfm-run) once per config, target (its
// explicit CPU feature list, never "host"), schedule, activations, weight
// types (each tensor's, as the weight file stores it: the library reads the
// file in place) and weight file (its identity: what it holds, not its
// name), into a cache folder named by their hash, and reuses the result.
// tfmc compiles exactly the config bytes that were hashed: written into the
// private folder the compile runs in. The hash also covers the tfmc binary
// (size and time), so a rebuilt compiler does not reuse libraries an older
// one wrote.
//
//===----------------------------------------------------------------------===//
#ifndef TFM_RUNTIME_MODELCACHE_H
#define TFM_RUNTIME_MODELCACHE_H

#include "tfm/common/ModelSpec.h"

#include "llvm/Support/Error.h"

#include <string>

namespace tfm::rt {

struct CompileRequest {
  ModelSpec spec;              // what is compiled: its canonical JSON, hashed and handed to tfmc
  std::string target = "host"; // a preset or target string (tfm/common/Targets.h)
  std::string schedule;        // tfmc --schedule; empty: the target's default table
  std::string activations;     // tfmc --activations; empty: f32
  std::string weightsLike;     // tfmc --weights-like; empty: f32 weights
  std::string cacheDir;        // empty: defaultCacheDir()
  std::string tfmc;            // the compiler; empty: tfmc beside this executable
};

/// $TFM_CACHE_DIR, else $XDG_CACHE_HOME/tfmc, else $HOME/.cache/tfmc, else
/// the .cache/tfmc of this user's home in the password database (cron,
/// systemd units and `env -i` run with no HOME): never a folder another
/// user could have made first. Relative values are ignored, as the XDG
/// specification says; with none left, an error says to name a folder.
llvm::Expected<std::string> defaultCacheDir();

/// The tuning file tfmc reads by default (written by tfmc --tune):
/// defaultCacheDir()/tuning.json.
llvm::Expected<std::string> defaultTuningFile();

/// $TFMC, else tfmc installed beside the running executable.
std::string compilerPath();

/// What distinguishes one build of the compiler at `tfmc` from another (its
/// size and time), for cache keys.
llvm::Expected<std::string> compilerIdentity(const std::string &tfmc);

/// The folder holding the library compiled for `request`, compiling it first
/// when the cache has none. The cache folder is private (0700, checked as
/// tfm/common/PrivateFiles.h says), an entry is checked before it is used,
/// and an entry an interrupted run left incomplete is compiled again.
/// Compiling reports progress on a terminal.
llvm::Expected<std::string> compiledModelDir(const CompileRequest &request);

} // namespace tfm::rt

#endif // TFM_RUNTIME_MODELCACHE_H
