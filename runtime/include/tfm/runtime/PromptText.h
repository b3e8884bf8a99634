//===- PromptText.h - The prompt, from -p, a file or standard input -*- C++ -*-===//
#ifndef TFM_RUNTIME_PROMPTTEXT_H
#define TFM_RUNTIME_PROMPTTEXT_H

#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"

#include <cstdint>
#include <string>

namespace tfm::rt {

/// Where tfm-run's prompt comes from.
struct PromptSource {
  std::string text;      // -p
  bool textGiven = false;
  std::string file;      // -f: a file, or "-" / /dev/stdin for standard input
  bool escapes = false;  // -e
};

/// The prompt: -p's text, or the file's (standard input for "-", as
/// llama.cpp's -f takes it), refused past `limit` bytes; with escapes, as
/// processEscapes reads it. Refuses -p and -f together.
llvm::Expected<std::string> promptText(const PromptSource &source, uint64_t limit);

/// `text` with llama.cpp's escapes (its -e) replaced: \n, \r, \t, \\, \',
/// \", and \xHH for a byte. Any other backslash stays as written.
std::string processEscapes(llvm::StringRef text);

} // namespace tfm::rt

#endif // TFM_RUNTIME_PROMPTTEXT_H
