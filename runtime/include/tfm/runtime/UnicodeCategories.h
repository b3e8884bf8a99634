//===- UnicodeCategories.h - UTF-8 characters and their class -*- C++ -*-===//
//
// Tokenizers see text as characters: a pre-tokenizer groups letters, numbers
// and whitespace, SentencePiece merges characters. Text from users is bytes,
// not always valid UTF-8, and must come back unchanged, so every byte that
// does not start a valid UTF-8 sequence is a character of its own (of class
// Other) rather than an error or a replacement character.
//
// Classes are Unicode's, from ICU: Letter = general category L*, Number =
// N*, Whitespace = the White_Space property (what \s matches in the regex
// engines Hugging Face tokenizers and llama.cpp use). Normalization forms
// are ICU's too.
//
//===----------------------------------------------------------------------===//
#ifndef TFM_RUNTIME_UNICODECATEGORIES_H
#define TFM_RUNTIME_UNICODECATEGORIES_H

#include "llvm/ADT/StringRef.h"

#include <cstdint>
#include <string>
#include <vector>

namespace tfm::rt {

enum class CharClass : uint8_t { Letter, Number, Whitespace, Other };

struct TextChar {
  uint32_t offset = 0; // byte offset in the text
  uint32_t size = 0;   // bytes: 1..4, always 1 for an invalid byte
  char32_t codepoint = 0; // 0 for an invalid byte
  bool valid = false; // false: a byte that starts no valid UTF-8 sequence
  CharClass cls = CharClass::Other;
};

/// The characters of `text` in order; their byte ranges tile the text.
std::vector<TextChar> splitCharacters(llvm::StringRef text);

/// The class of one code point.
CharClass classifyCodepoint(char32_t codepoint);

/// Whether a code point is punctuation: general category P*.
bool isPunctuation(char32_t codepoint);

/// Whether a code point is of Unicode's "Other" categories: control (Cc),
/// format (Cf), surrogate (Cs), private use (Co) or unassigned (Cn).
bool isOtherCategory(char32_t codepoint);

/// Whether a code point is a nonspacing mark (Mn): the accents NFD splits off.
bool isNonspacingMark(char32_t codepoint);

/// A code point's full lowercase mapping, on its own (no context: a final
/// sigma is "σ"), in UTF-8: "İ" is "i̇", two code points.
std::string lowercaseCharacter(char32_t codepoint);

enum class Normalization { None, NFC, NFD, NFKC, NFKD };

/// `text` in normalization form `form`; invalid UTF-8 bytes stay as they are
/// between the normalized valid runs.
std::string normalizeText(llvm::StringRef text, Normalization form);

/// Bytes of whitespace characters at the start / at the end of `text`.
size_t leadingWhitespace(llvm::StringRef text);
size_t trailingWhitespace(llvm::StringRef text);

} // namespace tfm::rt

#endif // TFM_RUNTIME_UNICODECATEGORIES_H
