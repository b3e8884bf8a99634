//===- OutputFile.cpp - Write an output whole or not at all ---------------===//
#include "tfm/common/Failure.h"
#include "tfm/common/OutputFile.h"

#include "llvm/Support/Path.h"

#include <csignal>
#include <pthread.h>

namespace fs = llvm::sys::fs;

namespace {

/// Holds back, for its scope, the signals on which LLVM's handlers remove
/// registered files. TempFile::create makes the file, then registers it:
/// a SIGTERM between the two left the temporary behind. Held, the signal
/// arrives once the file is registered, and the handler removes it.
class SignalsHeld {
public:
  SignalsHeld() {
    sigset_t interrupts;
    sigemptyset(&interrupts);
    for (int signal : {SIGHUP, SIGINT, SIGQUIT, SIGTERM, SIGUSR2})
      sigaddset(&interrupts, signal);
    pthread_sigmask(SIG_BLOCK, &interrupts, &previous);
  }
  ~SignalsHeld() { pthread_sigmask(SIG_SETMASK, &previous, nullptr); }
  SignalsHeld(const SignalsHeld &) = delete;
  SignalsHeld &operator=(const SignalsHeld &) = delete;

private:
  sigset_t previous;
};

} // namespace

llvm::Error tfm::closeOutput(llvm::raw_fd_ostream &os, llvm::StringRef path) {
  os.close();
  if (!os.has_error())
    return llvm::Error::success();
  std::error_code error = os.error();
  os.clear_error();
  return failure((path + ": write failed: " + error.message()).str());
}

llvm::Error tfm::refuseInputAsOutput(llvm::StringRef output,
                                     llvm::ArrayRef<std::string> inputs) {
  for (const std::string &input : inputs) {
    bool same = false;
    if (!input.empty() && !fs::equivalent(output, input, same) && same)
      return failure(
          (output + ": refusing to write the output over " +
           (output == input ? llvm::Twine("an input") : "the input " + input) +
           " (the same file): it would be destroyed while it is read; name another output")
              .str());
  }
  return llvm::Error::success();
}

tfm::AtomicOutputFile::AtomicOutputFile(std::string path, std::optional<fs::TempFile> file,
                                        std::unique_ptr<llvm::raw_fd_ostream> stream)
    : path(std::move(path)), file(std::move(file)), stream(std::move(stream)) {}

tfm::AtomicOutputFile::~AtomicOutputFile() {
  if (stream) { // not committed: a write error is the caller's error already
    // Flushed here so that the stream's destructor has nothing left to fail
    // at; never closed, which would close the temporary's descriptor too.
    stream->flush();
    stream->clear_error();
    stream.reset();
  }
  if (file)
    llvm::consumeError(file->discard());
}

llvm::Expected<tfm::AtomicOutputFile> tfm::AtomicOutputFile::create(llvm::StringRef path) {
  // Beside what a link names: the link stays, and the file it names is
  // replaced.
  llvm::SmallString<256> target;
  if (fs::is_symlink_file(path) && !fs::real_path(path, target))
    path = target;
  fs::file_status status;
  if (!fs::status(path, status) && fs::exists(status) && !fs::is_regular_file(status)) {
    if (fs::is_directory(status))
      return failure((path + ": cannot write: it is a folder").str());
    std::error_code ec;
    auto stream = std::make_unique<llvm::raw_fd_ostream>(path, ec, fs::OF_None);
    if (ec)
      return failure((path + ": cannot write: " + ec.message()).str());
    return AtomicOutputFile(path.str(), std::nullopt, std::move(stream));
  }
  llvm::Expected<fs::TempFile> file = [&] {
    SignalsHeld held;
    return fs::TempFile::create(path + ".tmp-%%%%%%%%");
  }();
  if (!file)
    return failure(
        (path + ": cannot write: " + llvm::toString(file.takeError())).str());
  auto stream = std::make_unique<llvm::raw_fd_ostream>(file->FD, /*shouldClose=*/false);
  return AtomicOutputFile(path.str(), std::move(*file), std::move(stream));
}

llvm::Error tfm::AtomicOutputFile::commit() {
  if (!file) { // written in place
    llvm::Error closed = closeOutput(*stream, path);
    stream.reset();
    return closed;
  }
  stream->flush();
  bool failed = stream->has_error();
  std::error_code error = stream->error();
  stream->clear_error();
  stream.reset();
  if (failed) {
    llvm::consumeError(file->discard());
    file.reset();
    return failure(path + ": write failed: " + error.message());
  }
  llvm::Error kept = file->keep(path);
  file.reset();
  if (kept)
    return failure(path + ": cannot move the output into place: " +
                                   llvm::toString(std::move(kept)));
  return llvm::Error::success();
}

llvm::Error tfm::writeTextFile(llvm::StringRef path, llvm::StringRef text) {
  llvm::Expected<AtomicOutputFile> out = AtomicOutputFile::create(path);
  if (!out)
    return out.takeError();
  out->os() << text;
  return out->commit();
}
