//===- OutputFile.h - Close an output stream and report its error -*- C++ -*-===//
//
// A raw_fd_ostream destroyed with an unreported write error aborts the
// process ("LLVM ERROR: IO failure on output stream"), so `--logits
// /dev/full` or a full disk would end in an abort. Every file we write is
// finished through here, which turns the error into a message.
//
//===----------------------------------------------------------------------===//
#ifndef TFM_COMMON_OUTPUTFILE_H
#define TFM_COMMON_OUTPUTFILE_H

#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"
#include "llvm/Support/raw_ostream.h"

namespace tfm {

/// Closes `os`, written to `path`; a write or close error becomes
/// "<path>: write failed: <reason>" and is cleared from the stream.
llvm::Error closeOutput(llvm::raw_fd_ostream &os, llvm::StringRef path);

/// Writes `text` to `path` whole, replacing it.
llvm::Error writeTextFile(llvm::StringRef path, llvm::StringRef text);

} // namespace tfm

#endif // TFM_COMMON_OUTPUTFILE_H
