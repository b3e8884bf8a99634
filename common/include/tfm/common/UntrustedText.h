//===- UntrustedText.h - Bytes from a file, made safe to show -*- C++ -*-===//
//
// Names, keys and values read from a model file are the file author's bytes:
// printed raw they can carry terminal escape sequences, and a 256 MB key
// makes a 256 MB message. Every message that quotes a file goes through
// quoted(), which escapes and cuts.
//
//===----------------------------------------------------------------------===//
#ifndef TFM_COMMON_UNTRUSTEDTEXT_H
#define TFM_COMMON_UNTRUSTEDTEXT_H

#include "llvm/ADT/StringRef.h"

#include <cstddef>
#include <string>

namespace tfm {

/// The longest excerpt of a file's bytes a message shows.
constexpr size_t kQuotedTextLimit = 80;

/// `text` in double quotes with control bytes, quotes, backslashes and bytes
/// that are not printable ASCII written as C escapes (\n, \x1b, ...), cut
/// after `limit` input bytes with "..." and the total length appended.
std::string quoted(llvm::StringRef text, size_t limit = kQuotedTextLimit);

/// The longest message boundedMessage() lets through.
constexpr size_t kBoundedMessageLimit = 1000;

/// A message another library wrote about a file (MLIR's diagnostics, which
/// print the file's strings in double quotes): each double-quoted run cut
/// after kQuotedTextLimit bytes with "...", control bytes and non-ASCII
/// outside newlines escaped, and the whole cut after kBoundedMessageLimit
/// bytes.
std::string boundedMessage(llvm::StringRef text);

} // namespace tfm

#endif // TFM_COMMON_UNTRUSTEDTEXT_H
