//===- BoundedFile.h - Read a small file a user names, within limits -*- C++ -*-===//
//
// Config and tokenizer files are read whole. A path to a FIFO, /dev/zero or
// a multi-gigabyte file in their place must be refused, not read until
// memory runs out.
//
//===----------------------------------------------------------------------===//
#ifndef TFM_COMMON_BOUNDEDFILE_H
#define TFM_COMMON_BOUNDEDFILE_H

#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"
#include "llvm/Support/MemoryBuffer.h"

#include <cstdint>
#include <memory>
#include <optional>

namespace tfm {

/// Tokenizer files (tokenizer.json, vocab.json, merges.txt, tokenizer.model,
/// tokenizer.bin) are at most tens of megabytes for any published model.
constexpr uint64_t kMaxTokenizerFileBytes = 1ull << 30;

/// The contents of the regular file `path` ("-": standard input, read up to
/// the limit), refused with a message naming `what` ("config", "tokenizer")
/// when it is larger than `maxBytes` or not a regular file. The file is
/// opened once, without blocking, and checked through that descriptor.
llvm::Expected<std::unique_ptr<llvm::MemoryBuffer>>
readBoundedFile(llvm::StringRef path, uint64_t maxBytes, llvm::StringRef what);

} // namespace tfm

#endif // TFM_COMMON_BOUNDEDFILE_H
