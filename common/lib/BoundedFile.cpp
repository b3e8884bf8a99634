//===- BoundedFile.cpp - Read a file a user names, within limits ----------===//
#include "tfm/common/BoundedFile.h"
#include "tfm/common/Failure.h"

#include "llvm/Support/FileSystem.h"

#include <cerrno>
#include <cstring>
#include <fcntl.h>
#include <optional>
#include <sys/stat.h>
#include <unistd.h>

using tfm::failure;

namespace {

llvm::Error cannotRead(llvm::StringRef path, llvm::StringRef what, const llvm::Twine &why) {
  return failure((path + ": cannot read the " + what + ": " + why).str());
}

/// Reads what is left of `fd` (a pipe or a terminal) up to `maxBytes`;
/// nothing when there is more, or when reading fails (`error`).
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

tfm::RegularFile::~RegularFile() {
  if (fd_ >= 0)
    ::close(fd_);
}

llvm::Expected<tfm::RegularFile> tfm::openRegularFile(llvm::StringRef path,
                                                      llvm::StringRef what) {
  // Without blocking: a FIFO's open waits for a writer. Regular files
  // ignore the flag.
  int fd = ::open(path.str().c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC);
  if (fd < 0)
    return failure((path + ": cannot open the " + what + ": " +
                                    std::strerror(errno)).str());
  RegularFile file(fd, 0); // closes it on a refusal
  struct stat status;
  if (::fstat(fd, &status) != 0)
    return cannotRead(path, what, std::strerror(errno));
  if (!S_ISREG(status.st_mode))
    return cannotRead(path, what, S_ISDIR(status.st_mode) ? "a folder, not a file"
                                                          : "not a regular file");
  return RegularFile(std::move(file), static_cast<uint64_t>(status.st_size));
}

llvm::Expected<std::unique_ptr<llvm::MemoryBuffer>>
tfm::readBoundedFile(llvm::StringRef path, uint64_t maxBytes, llvm::StringRef what) {
  auto tooLarge = [&](const llvm::Twine &size) {
    return cannotRead(path, what,
                      "it is " + size + " bytes, expected at most " + llvm::Twine(maxBytes) +
                          " for a " + what + " file");
  };
  if (path == "-") { // standard input, whatever it is, read up to the limit
    std::string error;
    std::optional<std::string> data = readStream(STDIN_FILENO, maxBytes, error);
    if (!data)
      return error.empty() ? tooLarge("more than " + llvm::Twine(maxBytes))
                           : cannotRead(path, what, error);
    return llvm::MemoryBuffer::getMemBufferCopy(*data, "<stdin>");
  }
  llvm::Expected<RegularFile> file = openRegularFile(path, what);
  if (!file)
    return file.takeError();
  if (file->size() > maxBytes)
    return tooLarge(llvm::Twine(file->size()));
  auto buffer = llvm::MemoryBuffer::getOpenFile(llvm::sys::fs::convertFDToNativeFile(file->fd()),
                                                path, file->size(),
                                                /*RequiresNullTerminator=*/false);
  if (!buffer)
    return cannotRead(path, what, buffer.getError().message());
  return std::move(*buffer);
}

llvm::Expected<std::string> tfm::readFileHead(llvm::StringRef path, size_t bytes,
                                              llvm::StringRef what) {
  llvm::Expected<RegularFile> file = openRegularFile(path, what);
  if (!file)
    return file.takeError();
  std::string head(bytes, '\0');
  size_t got = 0;
  while (got < bytes) {
    ssize_t n = ::pread(file->fd(), head.data() + got, bytes - got, static_cast<off_t>(got));
    if (n < 0 && errno == EINTR)
      continue;
    if (n < 0)
      return cannotRead(path, what, std::strerror(errno));
    if (n == 0)
      break;
    got += static_cast<size_t>(n);
  }
  head.resize(got);
  return head;
}
