//===- OutputFile.h - Write an output whole or not at all -------*- C++ -*-===//
//
// Every file a tool writes goes through here, for three reasons:
//  - a raw_fd_ostream destroyed with an unreported write error aborts the
//    process ("LLVM ERROR: IO failure on output stream"), so `--logits
//    /dev/full` or a full disk would end in an abort; errors become
//    messages instead;
//  - an output is written under a temporary name beside it and renamed over
//    it at the end, so a run that is killed or fails never leaves a
//    truncated file where the output was (the temporary is removed on
//    SIGINT, SIGTERM and errors; a SIGKILL leaves only it, named
//    <output>.tmp-XXXXXXXX);
//  - an output that is the same file as one of the run's inputs (through a
//    symbolic or hard link too) is refused before anything is written.
//
//===----------------------------------------------------------------------===//
#ifndef TFM_COMMON_OUTPUTFILE_H
#define TFM_COMMON_OUTPUTFILE_H

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/raw_ostream.h"

#include <memory>
#include <optional>
#include <string>

namespace tfm {

/// Closes `os`, written to `path`; a write or close error becomes
/// "<path>: write failed: <reason>" and is cleared from the stream.
llvm::Error closeOutput(llvm::raw_fd_ostream &os, llvm::StringRef path);

/// Refuses writing `output` when it is the same file as any of `inputs`
/// (that do exist): writing it would destroy the input it is read from.
llvm::Error refuseInputAsOutput(llvm::StringRef output, llvm::ArrayRef<std::string> inputs);

/// An output file written under a temporary name beside `path` (beside what
/// a symbolic link there names) and renamed over it by commit(). An output
/// that exists and is not a regular file (a device such as /dev/null, a
/// pipe) is written as it is: there is nothing to replace.
class AtomicOutputFile {
public:
  static llvm::Expected<AtomicOutputFile> create(llvm::StringRef path);
  AtomicOutputFile(AtomicOutputFile &&) = default;
  ~AtomicOutputFile(); // without commit(): the temporary is removed

  llvm::raw_fd_ostream &os() { return *stream; }
  /// Flushes, closes and renames the file into place; a write error is
  /// reported and the temporary removed instead.
  llvm::Error commit();

private:
  AtomicOutputFile(std::string path, std::optional<llvm::sys::fs::TempFile> file,
                   std::unique_ptr<llvm::raw_fd_ostream> stream);
  std::string path;
  std::optional<llvm::sys::fs::TempFile> file; // none: written in place
  std::unique_ptr<llvm::raw_fd_ostream> stream;
};

/// Writes `text` to `path` whole (AtomicOutputFile), replacing it.
llvm::Error writeTextFile(llvm::StringRef path, llvm::StringRef text);

} // namespace tfm

#endif // TFM_COMMON_OUTPUTFILE_H
