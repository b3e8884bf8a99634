//===- BoundedFile.cpp - Read a small file a user names, within limits ----===//
#include "tfm/common/BoundedFile.h"

#include "llvm/Support/FileSystem.h"

#include <cerrno>
#include <cstring>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

namespace {

/// Reads what is left of `fd` (a pipe or a terminal) up to `maxBytes`;
/// nothing when there is more.
std::optional<std::string> readStream(int fd, uint64_t maxBytes, std::string &error) {
  std::string data;
  char chunk[1 << 16];
  for (;;) {
    ssize_t n = ::read(fd, chunk, sizeof chunk);
    if (n < 0 && errno == EINTR)
      continue;
    if (n < 0) {
      error = std::strerror(errno);
      return std::nullopt;
    }
    if (n == 0)
      return data;
    if (data.size() + static_cast<uint64_t>(n) > maxBytes)
      return std::nullopt;
    data.append(chunk, static_cast<size_t>(n));
  }
}

} // namespace

llvm::Expected<std::unique_ptr<llvm::MemoryBuffer>>
tfm::readBoundedFile(llvm::StringRef path, uint64_t maxBytes, llvm::StringRef what) {
  auto fail = [&](const llvm::Twine &message) {
    return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                   (path + ": cannot read the " + what + ": " + message).str());
  };
  auto tooLarge = [&](const llvm::Twine &size) {
    return fail("it is " + size + " bytes, expected at most " + llvm::Twine(maxBytes) +
                " for a " + what + " file");
  };
  if (path == "-") { // standard input, whatever it is, read up to the limit
    std::string error;
    std::optional<std::string> data = readStream(STDIN_FILENO, maxBytes, error);
    if (!data)
      return error.empty() ? tooLarge("more than " + llvm::Twine(maxBytes)) : fail(error);
    return llvm::MemoryBuffer::getMemBufferCopy(*data, "<stdin>");
  }
  // Opened without blocking (a FIFO's open waits for a writer), once: what
  // is checked is what is read, whatever the path names a moment later.
  std::string name = path.str();
  int fd = ::open(name.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC);
  if (fd < 0)
    return fail(std::strerror(errno));
  struct stat status;
  if (::fstat(fd, &status) != 0 || !S_ISREG(status.st_mode)) {
    ::close(fd);
    return fail("not a regular file");
  }
  if (static_cast<uint64_t>(status.st_size) > maxBytes) {
    ::close(fd);
    return tooLarge(llvm::Twine(static_cast<uint64_t>(status.st_size)));
  }
  auto buffer = llvm::MemoryBuffer::getOpenFile(llvm::sys::fs::convertFDToNativeFile(fd), path,
                                                status.st_size,
                                                /*RequiresNullTerminator=*/false);
  ::close(fd);
  if (!buffer)
    return fail(buffer.getError().message());
  return std::move(*buffer);
}
