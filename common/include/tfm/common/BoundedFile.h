//===- BoundedFile.h - Read a file a user names, within limits --*- C++ -*-===//
//
// Config, tokenizer, manifest and weight files are named by the user, or
// found in folders others may have written. A path to a FIFO, /dev/zero or
// a multi-gigabyte file in the place of a small one must be refused, not
// read until memory runs out or opened until a writer comes. Every file a
// tool reads goes through here: opened once, without blocking, and checked
// through that descriptor to be a regular file (of at most so many bytes),
// so that what is checked is what is read.
//
//===----------------------------------------------------------------------===//
#ifndef TFM_COMMON_BOUNDEDFILE_H
#define TFM_COMMON_BOUNDEDFILE_H

#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"
#include "llvm/Support/MemoryBuffer.h"

#include <cstdint>
#include <memory>
#include <string>

namespace tfm {

/// Tokenizer files (tokenizer.json, vocab.json, merges.txt, tokenizer.model,
/// tokenizer.bin) are at most tens of megabytes for any published model.
constexpr uint64_t kMaxTokenizerFileBytes = 1ull << 30;

/// A regular file open for reading; closed with this object.
class RegularFile {
public:
  RegularFile(int fd, uint64_t size) : fd_(fd), size_(size) {}
  RegularFile(RegularFile &&other) noexcept : RegularFile(std::move(other), other.size_) {}
  /// `other`'s descriptor, of `size` bytes.
  RegularFile(RegularFile &&other, uint64_t size) noexcept : fd_(other.fd_), size_(size) {
    other.fd_ = -1;
  }
  RegularFile &operator=(RegularFile &&) = delete;
  ~RegularFile();
  int fd() const { return fd_; }
  uint64_t size() const { return size_; }

private:
  int fd_;
  uint64_t size_;
};

/// Opens `path` for reading without blocking and checks that it is a
/// regular file; an error names the file as the `what` ("config",
/// "GGUF file") it was to be.
llvm::Expected<RegularFile> openRegularFile(llvm::StringRef path, llvm::StringRef what);

/// The contents of the regular file `path` ("-": standard input, read up to
/// the limit), refused with a message naming `what` ("config", "tokenizer")
/// when it is larger than `maxBytes` or not a regular file.
llvm::Expected<std::unique_ptr<llvm::MemoryBuffer>>
readBoundedFile(llvm::StringRef path, uint64_t maxBytes, llvm::StringRef what);

/// The first `bytes` bytes of the regular file `path` (fewer if it is
/// shorter), to tell its format.
llvm::Expected<std::string> readFileHead(llvm::StringRef path, size_t bytes,
                                         llvm::StringRef what);

} // namespace tfm

#endif // TFM_COMMON_BOUNDEDFILE_H
