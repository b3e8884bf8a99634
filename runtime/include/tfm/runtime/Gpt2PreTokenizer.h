//===- Gpt2PreTokenizer.h - GPT-2's split of text into words ----*- C++ -*-===//
//
// Byte-level BPE merges inside words only. GPT-2 (and MPT, StarCoder, ...)
// cut text into words with the regex
//
//   's|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+
//
// which is matched here by hand over the characters of the text, with the
// same leftmost-first alternation and backtracking the regex engine does.
//
//===----------------------------------------------------------------------===//
#ifndef TFM_RUNTIME_GPT2PRETOKENIZER_H
#define TFM_RUNTIME_GPT2PRETOKENIZER_H

#include "llvm/ADT/StringRef.h"

#include <vector>

namespace tfm::rt {

/// The words of `text` in order, as slices of it; they tile the text, so
/// invalid UTF-8 bytes land in some word too (as punctuation would).
std::vector<llvm::StringRef> splitGpt2Words(llvm::StringRef text);

} // namespace tfm::rt

#endif // TFM_RUNTIME_GPT2PRETOKENIZER_H
