//===- ModelCache.cpp - Compile a config on first use, reuse after --------===//
#include "tfm/runtime/ModelCache.h"

#include "tfm/runtime/WeightLoader.h"

#include "tfm/common/BoundedFile.h"
#include "tfm/common/Failure.h"
#include "tfm/common/Hash.h"
#include "tfm/common/OutputFile.h"
#include "tfm/common/PrivateFiles.h"
#include "tfm/common/Targets.h"
#include "tfm/common/TuningFile.h"

#include "llvm/ADT/ScopeExit.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/Process.h"
#include "llvm/Support/Program.h"
#include "llvm/Support/raw_ostream.h"

#include <chrono>
#include <optional>
#include <pwd.h>
#include <unistd.h>

using namespace tfm::rt;
namespace fs = llvm::sys::fs;

using tfm::failure;

namespace {

/// An environment variable's value when it is an absolute path, else "".
std::string absoluteEnv(const char *name) {
  const char *value = std::getenv(name);
  return value && value[0] == '/' ? std::string(value) : std::string();
}

/// This user's home as the password database has it ("" when it has none).
std::string passwordHome() {
  struct passwd entry, *found = nullptr;
  std::vector<char> strings(16384);
  if (getpwuid_r(::geteuid(), &entry, strings.data(), strings.size(), &found) != 0 || !found ||
      !found->pw_dir || found->pw_dir[0] != '/')
    return "";
  return found->pw_dir;
}

std::string join(const std::string &dir, const std::string &name) {
  llvm::SmallString<256> path(dir);
  llvm::sys::path::append(path, name);
  return std::string(path);
}

/// The hash of the tuning file tfmc reads by default, or "" when there is
/// none: a new tuning compiles anew (the kernel cache keeps that short).
llvm::Expected<std::string> tuningHash() {
  llvm::Expected<std::string> path = defaultTuningFile();
  if (!path)
    return path.takeError();
  if (!fs::exists(*path))
    return "";
  if (llvm::Error e = tfm::checkPrivate(*path, "tuning file"))
    return std::move(e);
  auto text = tfm::readBoundedFile(*path, tfm::kMaxTuningFileBytes, "tuning file");
  if (!text)
    return text.takeError();
  return tfm::contentHash((*text)->getBuffer());
}

/// A cache entry tfm-run may load: the folder, its manifest and its
/// libraries this user's alone.
llvm::Error checkEntry(const std::string &dir) {
  if (llvm::Error e = tfm::checkPrivate(dir, "model cache entry"))
    return e;
  std::error_code ec;
  for (fs::directory_iterator it(dir, ec), end; it != end && !ec; it.increment(ec)) {
    llvm::StringRef file = llvm::sys::path::filename(it->path());
    if (file == "manifest.json" || (file.starts_with("lib") && file.ends_with(".so")))
      if (llvm::Error e = tfm::checkPrivate(it->path(), "model cache entry's file"))
        return e;
  }
  if (ec)
    return failure(dir + ": cannot list the model cache entry: " + ec.message());
  return llvm::Error::success();
}

/// Whether a compile finished there: it renames its folder into place
/// whole, the manifest in it.
bool complete(const std::string &dir) { return fs::exists(join(dir, "manifest.json")); }

/// Removes what runs that died left of the entry `dir`: the entry itself if
/// incomplete, and the private folders they compiled in (<dir>.tmp-PID).
/// Only under the entry's lock, which no live compile of it lacks.
llvm::Error removeLeftovers(const std::string &dir) {
  std::string parent = llvm::sys::path::parent_path(dir).str();
  std::string stem = llvm::sys::path::filename(dir).str() + ".tmp-";
  std::vector<std::string> leftovers;
  if (fs::exists(dir))
    leftovers.push_back(dir);
  std::error_code ec;
  for (fs::directory_iterator it(parent, ec), end; it != end && !ec; it.increment(ec))
    if (llvm::sys::path::filename(it->path()).starts_with(stem))
      leftovers.push_back(it->path());
  for (const std::string &leftover : leftovers) {
    if (llvm::Error e = tfm::checkPrivate(leftover, "interrupted model cache entry"))
      return e;
    if (std::error_code removed = fs::remove_directories(leftover))
      return failure(leftover + ": cannot remove an interrupted compile's folder: " +
                     removed.message());
  }
  return llvm::Error::success();
}

/// Runs tfmc with `args`, its output going to a log in `out` (its output
/// folder), which the error of a failed compile carries.
llvm::Error runCompiler(const std::string &tfmc, std::vector<std::string> args,
                        const std::string &out) {
  std::string log = join(out, "tfmc.log");
  std::vector<llvm::StringRef> argv{tfmc};
  for (const std::string &a : args)
    argv.push_back(a);
  std::optional<llvm::StringRef> redirects[] = {std::nullopt, llvm::StringRef(log),
                                                llvm::StringRef(log)};
  std::string launchError;
  int status = llvm::sys::ExecuteAndWait(tfmc, argv, std::nullopt, redirects, 0, 0, &launchError);
  std::string text;
  if (auto buffer = tfm::readBoundedFile(log, 1 << 20, "compiler log"))
    text = (*buffer)->getBuffer().trim().str();
  else
    llvm::consumeError(buffer.takeError());
  fs::remove(log);
  if (status == 0)
    return llvm::Error::success();
  return failure("compiling with " + tfmc + " failed" +
                 (launchError.empty() ? "" : " (" + launchError + ")") +
                 (text.empty() ? std::string() : ":\n" + text));
}

} // namespace

std::string tfm::rt::compilerPath() {
  static int anchor;
  std::string self = fs::getMainExecutable(nullptr, &anchor);
  llvm::SmallString<256> path(llvm::sys::path::parent_path(self));
  llvm::sys::path::append(path, "tfmc");
  const char *fromEnv = std::getenv("TFMC");
  return fromEnv && *fromEnv ? std::string(fromEnv) : std::string(path);
}

llvm::Expected<std::string> tfm::rt::compilerIdentity(const std::string &tfmc) {
  fs::file_status status;
  if (std::error_code ec = fs::status(tfmc, status); ec || !fs::exists(status))
    return failure(tfmc + ": the compiler tfmc is not there (" +
                   (ec ? ec.message() : std::string("missing")) +
                   "); build it, or name it with the TFMC environment variable");
  auto modified = status.getLastModificationTime().time_since_epoch().count();
  return std::to_string(status.getSize()) + ":" + std::to_string(modified);
}

llvm::Expected<std::string> tfm::rt::defaultCacheDir() {
  if (std::string dir = absoluteEnv("TFM_CACHE_DIR"); !dir.empty())
    return dir;
  if (std::string xdg = absoluteEnv("XDG_CACHE_HOME"); !xdg.empty())
    return join(xdg, "tfmc");
  std::string home = absoluteEnv("HOME");
  if (home.empty())
    home = passwordHome();
  if (home.empty())
    return failure("no cache folder: TFM_CACHE_DIR, XDG_CACHE_HOME and HOME name no absolute "
                   "path, and user " +
                   std::to_string(::geteuid()) +
                   " has no home in the password database; name a folder of your own with "
                   "--cache-dir (tfm-run), or --kernel-cache and --tuning-file (tfmc)");
  return join(join(home, ".cache"), "tfmc");
}

llvm::Expected<std::string> tfm::rt::defaultTuningFile() {
  llvm::Expected<std::string> dir = defaultCacheDir();
  if (!dir)
    return dir.takeError();
  return join(*dir, "tuning.json");
}

llvm::Expected<std::string> tfm::rt::compiledModelDir(const CompileRequest &request) {
  // What is hashed is what is compiled: these bytes, written below.
  const std::string config = request.spec.canonicalJson();
  const std::string &name = request.spec.name;
  // The key names the CPU features, never "host": a cache shared between
  // machines must not hand one a library built for another's instructions.
  llvm::Expected<std::string> target = tfm::resolveTarget(request.target);
  if (!target)
    return target.takeError();
  std::string tfmc = request.tfmc.empty() ? compilerPath() : request.tfmc;
  llvm::Expected<std::string> identity = compilerIdentity(tfmc);
  if (!identity)
    return identity.takeError();

  std::string weights;
  if (!request.weightsLike.empty()) {
    llvm::Expected<WeightTypes> types = weightFileTypes(request.weightsLike, request.spec);
    if (!types)
      return types.takeError();
    llvm::Expected<std::string> file = weightFileIdentity(request.weightsLike);
    if (!file)
      return file.takeError();
    weights = "weights " + *file + "\n";
    for (const auto &[tensor, encoding] : *types)
      weights += tensor + "=" + encoding.name() + "\n";
  }
  llvm::Expected<std::string> tuning = tuningHash();
  if (!tuning)
    return tuning.takeError();
  std::string key = tfm::contentHash(config + "\n" + *target + "\n" + request.schedule + "\n" +
                                     request.activations + "\n" + weights + *tuning + "\n" +
                                     *identity);
  std::string cacheDir = request.cacheDir;
  if (cacheDir.empty()) {
    llvm::Expected<std::string> dir = defaultCacheDir();
    if (!dir)
      return dir.takeError();
    cacheDir = *dir;
  }
  if (llvm::Error e = tfm::makePrivateDir(cacheDir, "model cache"))
    return std::move(e);
  std::string dir = join(cacheDir, name + "-" + key);
  if (complete(dir)) {
    if (llvm::Error e = checkEntry(dir))
      return std::move(e);
    return dir;
  }

  // One compile per model however many runs ask at once: the first takes
  // the lock and compiles, the others wait and then find its result. The
  // lock is advisory (flock) and dies with its process.
  std::string lockDir = join(cacheDir, "locks");
  if (llvm::Error e = tfm::makePrivateDir(lockDir, "model cache's locks"))
    return std::move(e);
  std::string lockPath = join(lockDir, name + "-" + key + ".lock");
  int lockFd = -1;
  if (std::error_code ec = fs::openFileForReadWrite(lockPath, lockFd, fs::CD_OpenAlways,
                                                    fs::OF_None, 0600))
    return failure(lockPath + ": cannot open the model cache's lock: " + ec.message());
  llvm::scope_exit closeLock([&] {
    fs::unlockFile(lockFd);
    fs::closeFile(lockFd);
  });
  if (llvm::Error e = tfm::checkPrivate(lockPath, "model cache's lock"))
    return std::move(e);
  if (fs::tryLockFile(lockFd)) {
    llvm::errs() << "waiting for another run compiling " << name << " into " << dir << " ...\n";
    if (std::error_code ec = fs::lockFile(lockFd))
      return failure(lockPath + ": cannot lock the model cache: " + ec.message());
  }
  if (complete(dir)) {
    if (llvm::Error e = checkEntry(dir))
      return std::move(e);
    return dir;
  }
  // An entry without its manifest, or a compile's folder, is what a run
  // that died left: compiled again.
  if (llvm::Error e = removeLeftovers(dir))
    return std::move(e);

  // Compile into a private folder and rename it into place, so a concurrent
  // run or an interrupted compile never leaves a half-written model behind.
  std::string scratch = dir + ".tmp-" + std::to_string(::getpid());
  if (llvm::Error e = tfm::makePrivateDir(scratch, "model compile folder"))
    return std::move(e);
  llvm::scope_exit removeScratch([&] { fs::remove_directories(scratch); }); // after a failure
  std::string configFile = join(scratch, name + ".config.json");
  if (llvm::Error e = tfm::writeTextFile(configFile, config + "\n"))
    return std::move(e);
  bool onTerminal = llvm::sys::Process::StandardErrIsDisplayed();
  if (onTerminal)
    llvm::errs() << "compiling " << name << " for " << *target << " (first use; cached in "
                 << dir << ") ...";
  auto start = std::chrono::steady_clock::now();
  std::vector<std::string> args{configFile, "-o", scratch, "--target", *target};
  if (!request.schedule.empty())
    args.insert(args.end(), {"--schedule", request.schedule});
  if (!request.activations.empty())
    args.insert(args.end(), {"--activations", request.activations});
  if (!request.weightsLike.empty()) // f32 throughout needs no file
    args.insert(args.end(), {"--weights-like", request.weightsLike});
  if (llvm::Error e = runCompiler(tfmc, args, scratch)) {
    if (onTerminal)
      llvm::errs() << " failed\n";
    return std::move(e);
  }
  if (std::error_code ec = fs::rename(scratch, dir))
    return failure(dir + ": cannot move the compiled model into the cache: " + ec.message());
  if (onTerminal) {
    double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    llvm::errs() << llvm::format(" done in %.1f s\n", seconds);
  }
  return dir;
}
