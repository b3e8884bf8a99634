//===- WordSplit.h - Byte-level BPE's split of text into words --*- C++ -*-===//
//
// Byte-level BPE merges inside words only. GPT-2 (and MPT, StarCoder, ...)
// cut text into words with the regex
//
//   's|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+
//
// which is matched here by hand over the characters of the text, with the
// same leftmost-first alternation and backtracking the regex engine does.
//
// Falcon splits three times, each split working inside the pieces of the
// one before (llama.cpp's "falcon" pre-tokenizer, after Hugging Face's
// Punctuation, ByteLevel and Split pre-tokenizers of Falcon's
// tokenizer.json):
//
//   1. runs of punctuation, [\p{P}$+<=>^~|`]+ (every ASCII punctuation or
//      symbol character, and Unicode's punctuation), and the text between;
//   2. GPT-2's regex above;
//   3. [0-9][0-9][0-9]: ASCII digits in threes from the left.
//
// Llama 3 (tokenizer.json's Split pre-tokenizer, GGUF's "llama-bpe"):
//
//   (?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}|
//    ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+
//
// Qwen 2 and 3: the same with \p{N} for \p{N}{1,3}, one digit a word.
// SmolLM: every number character alone, then GPT-2's regex in between.
//
//===----------------------------------------------------------------------===//
#ifndef TFM_RUNTIME_WORDSPLIT_H
#define TFM_RUNTIME_WORDSPLIT_H

#include "llvm/ADT/StringRef.h"

#include <vector>

namespace tfm::rt {

enum class WordSplit { Gpt2, Falcon, Llama3, Qwen2, Smollm };

/// The words of `text` in order, as slices of it; they tile the text, so
/// invalid UTF-8 bytes land in some word too (as punctuation would).
std::vector<llvm::StringRef> splitWords(llvm::StringRef text, WordSplit split);

} // namespace tfm::rt

#endif // TFM_RUNTIME_WORDSPLIT_H
