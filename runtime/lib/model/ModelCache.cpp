//===- ModelCache.cpp - Compile a config on first use, reuse after --------===//
#include "tfm/runtime/ModelCache.h"

#include "tfm/runtime/WeightLoader.h"

#include "tfm/common/Hash.h"
#include "tfm/common/ModelSpec.h"
#include "tfm/common/Targets.h"

#include "llvm/ADT/ScopeExit.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/Process.h"
#include "llvm/Support/Program.h"
#include "llvm/Support/raw_ostream.h"

#include <chrono>
#include <optional>
#include <unistd.h>

using namespace tfm::rt;

namespace {

llvm::Error failure(const std::string &message) {
  return llvm::createStringError(llvm::inconvertibleErrorCode(), message);
}

std::string envOr(const char *name, const std::string &fallback) {
  const char *value = std::getenv(name);
  return value && *value ? std::string(value) : fallback;
}

} // namespace

std::string tfm::rt::compilerPath() {
  static int anchor;
  std::string self = llvm::sys::fs::getMainExecutable(nullptr, &anchor);
  llvm::SmallString<256> path(llvm::sys::path::parent_path(self));
  llvm::sys::path::append(path, "tfmc");
  return envOr("TFMC", std::string(path));
}

llvm::Expected<std::string> tfm::rt::compilerIdentity(const std::string &tfmc) {
  llvm::sys::fs::file_status status;
  if (std::error_code ec = llvm::sys::fs::status(tfmc, status); ec || !llvm::sys::fs::exists(status))
    return failure(tfmc + ": the compiler tfmc is not there (" +
                   (ec ? ec.message() : std::string("missing")) +
                   "); build it, or name it with the TFMC environment variable");
  auto modified = status.getLastModificationTime().time_since_epoch().count();
  return std::to_string(status.getSize()) + ":" + std::to_string(modified);
}

std::string tfm::rt::defaultCacheDir() {
  std::string explicitDir = envOr("TFM_CACHE_DIR", "");
  if (!explicitDir.empty())
    return explicitDir;
  std::string xdg = envOr("XDG_CACHE_HOME", envOr("HOME", "/tmp") + "/.cache");
  return xdg + "/tfmc";
}

std::string tfm::rt::defaultTuningFile() { return defaultCacheDir() + "/tuning.json"; }

llvm::Expected<std::string> tfm::rt::compiledModelDir(const CompileRequest &request) {
  llvm::Expected<tfm::ModelSpec> spec = tfm::loadModelSpec(request.configPath);
  if (!spec)
    return spec.takeError();
  // The key names the CPU features, never "host": a cache shared between
  // machines must not hand one a library built for another's instructions.
  llvm::Expected<std::string> target = tfm::resolveTarget(request.target);
  if (!target)
    return target.takeError();
  std::string tfmc = request.tfmc.empty() ? compilerPath() : request.tfmc;
  llvm::Expected<std::string> identity = compilerIdentity(tfmc);
  if (!identity)
    return identity.takeError();

  std::string weightTypes;
  if (!request.weightsLike.empty()) {
    llvm::Expected<WeightTypes> types = weightFileTypes(request.weightsLike, *spec);
    if (!types)
      return types.takeError();
    for (const auto &[name, encoding] : *types)
      weightTypes += name + "=" + encoding.name() + "\n";
  }
  // The schedules tfmc reads from the tuning file: a new tuning compiles
  // anew (the kernel cache keeps that short).
  std::string tuning;
  if (auto buffer = llvm::MemoryBuffer::getFile(defaultTuningFile()))
    tuning = tfm::contentHash((*buffer)->getBuffer());
  std::string key = tfm::contentHash(spec->canonicalJson() + "\n" + *target + "\n" +
                                     request.schedule + "\n" + request.activations + "\n" +
                                     weightTypes + tuning + "\n" +
                                     *identity);
  std::string cacheDir = request.cacheDir.empty() ? defaultCacheDir() : request.cacheDir;
  std::string dir = cacheDir + "/" + spec->name + "-" + key;
  if (llvm::sys::fs::exists(dir + "/manifest.json"))
    return dir;

  if (std::error_code ec = llvm::sys::fs::create_directories(cacheDir))
    return failure(cacheDir + ": cannot create the model cache: " + ec.message());
  // One compile per model however many runs ask at once: the first takes
  // the lock and compiles, the others wait and then find its result. The
  // lock is advisory (flock) and dies with its process.
  std::string lockDir = cacheDir + "/locks";
  if (std::error_code ec = llvm::sys::fs::create_directories(lockDir))
    return failure(lockDir + ": cannot create the model cache's locks: " + ec.message());
  std::string lockPath = lockDir + "/" + spec->name + "-" + key + ".lock";
  int lockFd = -1;
  if (std::error_code ec = llvm::sys::fs::openFileForReadWrite(
          lockPath, lockFd, llvm::sys::fs::CD_OpenAlways, llvm::sys::fs::OF_None))
    return failure(lockPath + ": cannot open the model cache's lock: " + ec.message());
  llvm::scope_exit closeLock([&] {
    llvm::sys::fs::unlockFile(lockFd);
    llvm::sys::fs::closeFile(lockFd);
  });
  if (llvm::sys::fs::tryLockFile(lockFd)) {
    llvm::errs() << "waiting for another run compiling " << spec->name << " into " << dir
                 << " ...\n";
    if (std::error_code ec = llvm::sys::fs::lockFile(lockFd))
      return failure(lockPath + ": cannot lock the model cache: " + ec.message());
  }
  if (llvm::sys::fs::exists(dir + "/manifest.json"))
    return dir;
  // Compile into a private folder and rename it into place, so a concurrent
  // run or an interrupted compile never leaves a half-written model behind.
  std::string scratch = dir + ".tmp-" + std::to_string(::getpid());
  bool onTerminal = llvm::sys::Process::StandardErrIsDisplayed();
  if (onTerminal)
    llvm::errs() << "compiling " << spec->name << " for " << *target
                 << " (first use; cached in " << dir << ") ...";
  auto start = std::chrono::steady_clock::now();
  std::string errorFile = scratch + ".log";
  std::vector<llvm::StringRef> args{tfmc, request.configPath, "-o", scratch, "--target", *target};
  if (!request.schedule.empty()) {
    args.push_back("--schedule");
    args.push_back(request.schedule);
  }
  if (!request.activations.empty()) {
    args.push_back("--activations");
    args.push_back(request.activations);
  }
  if (!weightTypes.empty()) { // f32 throughout needs no file
    args.push_back("--weights-like");
    args.push_back(request.weightsLike);
  }
  std::optional<llvm::StringRef> redirects[] = {std::nullopt, llvm::StringRef(errorFile),
                                                llvm::StringRef(errorFile)};
  std::string launchError;
  int status = llvm::sys::ExecuteAndWait(tfmc, args, std::nullopt, redirects, 0, 0, &launchError);
  if (status != 0) {
    if (onTerminal)
      llvm::errs() << " failed\n";
    std::string log;
    if (auto buffer = llvm::MemoryBuffer::getFile(errorFile))
      log = (*buffer)->getBuffer().trim().str();
    llvm::sys::fs::remove(errorFile);
    llvm::sys::fs::remove_directories(scratch);
    return failure("compiling " + request.configPath + " with " + tfmc + " failed" +
                   (launchError.empty() ? "" : " (" + launchError + ")") +
                   (log.empty() ? std::string() : ":\n" + log));
  }
  llvm::sys::fs::remove(errorFile);
  if (std::error_code ec = llvm::sys::fs::rename(scratch, dir)) {
    // Another run finished the same model first: use its copy.
    llvm::sys::fs::remove_directories(scratch);
    if (!llvm::sys::fs::exists(dir + "/manifest.json"))
      return failure(dir + ": cannot move the compiled model into the cache: " + ec.message());
  }
  if (onTerminal) {
    double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    llvm::errs() << llvm::format(" done in %.1f s\n", seconds);
  }
  return dir;
}
