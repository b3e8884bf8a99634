//===- WordSplit.cpp - Word regexes of byte-level BPE, matched by hand ----===//
#include "tfm/runtime/WordSplit.h"

#include "tfm/runtime/UnicodeCategories.h"

#include "llvm/ADT/StringExtras.h"

#include <algorithm>

using namespace tfm::rt;

namespace {

class WordMatcher {
public:
  explicit WordMatcher(llvm::StringRef text) : chars(splitCharacters(text)) {}

  size_t size() const { return chars.size(); }
  uint32_t offset(size_t i) const { return chars[i].offset; }

  /// The end (a character index) of the word that starts at character `i`.
  size_t wordEnd(size_t i) const {
    const size_t n = chars.size();
    if (is(i, '\'')) {
      // The regex is case-sensitive: "'S" is not a contraction.
      for (llvm::StringRef suffix : {"s", "t", "re", "ve", "m", "ll", "d"})
        if (followedBy(i + 1, suffix))
          return i + 1 + suffix.size();
    }
    // " ?\p{L}+", " ?\p{N}+", " ?[^\s\p{L}\p{N}]+": an optional space, then a
    // run of one class. Without a run after it, the space is whitespace.
    size_t j = is(i, ' ') ? i + 1 : i;
    if (j < n && chars[j].cls != CharClass::Whitespace)
      return runEnd(j, chars[j].cls);
    // "\s+(?!\S)" backs off one character so that a space stays to lead the
    // next word; "\s+" takes a lone whitespace character before a word.
    size_t k = runEnd(i, CharClass::Whitespace);
    return k < n && k - i >= 2 ? k - 1 : k;
  }

  /// The end of the word at character `i` under Llama 3's regex (Qwen 2's
  /// with `maxDigits` 1):
  ///
  ///   (?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}|
  ///    ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+
  size_t llama3WordEnd(size_t i, size_t maxDigits) const {
    const size_t n = chars.size();
    if (is(i, '\'')) {
      for (llvm::StringRef suffix : {"s", "t", "re", "ve", "m", "ll", "d"})
        if (followedByIgnoringCase(i + 1, suffix))
          return i + 1 + suffix.size();
    }
    // An optional character that is no newline, letter or number, then
    // letters; the regex tries it with the character first.
    if (!isNewline(i) && chars[i].cls != CharClass::Letter && chars[i].cls != CharClass::Number &&
        i + 1 < n && chars[i + 1].cls == CharClass::Letter)
      return runEnd(i + 1, CharClass::Letter);
    if (chars[i].cls == CharClass::Letter)
      return runEnd(i, CharClass::Letter);
    if (chars[i].cls == CharClass::Number)
      return std::min(runEnd(i, CharClass::Number), i + maxDigits);
    // " ?[^\s\p{L}\p{N}]+[\r\n]*"
    size_t j = is(i, ' ') ? i + 1 : i;
    if (j < n && chars[j].cls == CharClass::Other) {
      size_t end = runEnd(j, CharClass::Other);
      while (isNewline(end))
        ++end;
      return end;
    }
    // Whitespace from here on. "\s*[\r\n]+" ends after the run's last
    // newline; without one, the run is cut as in GPT-2's regex.
    size_t k = runEnd(i, CharClass::Whitespace);
    for (size_t last = k; last > i; --last)
      if (isNewline(last - 1))
        return last;
    return k < n && k - i >= 2 ? k - 1 : k;
  }

private:
  bool isNewline(size_t i) const { return is(i, '\r') || is(i, '\n'); }
  bool followedByIgnoringCase(size_t i, llvm::StringRef ascii) const {
    for (size_t k = 0; k < ascii.size(); ++k)
      if (!is(i + k, ascii[k]) && !is(i + k, llvm::toUpper(ascii[k])))
        return false;
    return true;
  }
  bool is(size_t i, char c) const {
    return i < chars.size() && chars[i].valid && chars[i].codepoint == static_cast<char32_t>(c);
  }
  bool followedBy(size_t i, llvm::StringRef ascii) const {
    for (size_t k = 0; k < ascii.size(); ++k)
      if (!is(i + k, ascii[k]))
        return false;
    return true;
  }
  size_t runEnd(size_t i, CharClass cls) const {
    while (i < chars.size() && chars[i].cls == cls)
      ++i;
    return i;
  }

  std::vector<TextChar> chars;
};

/// Appends the words of `text` to `words`, each ending where
/// `wordEnd(matcher, start)` says.
template <typename WordEnd>
void splitByMatcher(llvm::StringRef text, std::vector<llvm::StringRef> &words, WordEnd wordEnd) {
  WordMatcher matcher(text);
  for (size_t i = 0; i < matcher.size();) {
    size_t end = wordEnd(matcher, i);
    size_t from = matcher.offset(i);
    size_t to = end < matcher.size() ? matcher.offset(end) : text.size();
    words.push_back(text.slice(from, to));
    i = end;
  }
}

/// Appends GPT-2's words of `text` to `words`.
void splitGpt2(llvm::StringRef text, std::vector<llvm::StringRef> &words) {
  splitByMatcher(text, words, [](const WordMatcher &m, size_t i) { return m.wordEnd(i); });
}

/// Appends Llama 3's words (Qwen 2's with `maxDigits` 1) of `text`.
void splitLlama3(llvm::StringRef text, size_t maxDigits, std::vector<llvm::StringRef> &words) {
  splitByMatcher(text, words, [maxDigits](const WordMatcher &m, size_t i) {
    return m.llama3WordEnd(i, maxDigits);
  });
}

/// Falcon's first split's class: ASCII punctuation and symbols (what
/// llama.cpp's \p{P} plus $+<=>^~|` covers below 128) and, above, Unicode's
/// punctuation categories. Other Unicode symbols (emoji, currency) are not in it.
bool isFalconPunctuation(const TextChar &c) {
  if (!c.valid)
    return false;
  char32_t cp = c.codepoint;
  if (cp < 0x80)
    return (cp >= 0x21 && cp <= 0x2F) || (cp >= 0x3A && cp <= 0x40) ||
           (cp >= 0x5B && cp <= 0x60) || (cp >= 0x7B && cp <= 0x7E);
  return isPunctuation(cp);
}

/// Appends the pieces of `text` that alternate between runs of Falcon
/// punctuation and the text between them.
void splitPunctuationRuns(llvm::StringRef text, std::vector<llvm::StringRef> &pieces) {
  std::vector<TextChar> chars = splitCharacters(text);
  for (size_t i = 0; i < chars.size();) {
    bool punctuation = isFalconPunctuation(chars[i]);
    size_t end = i + 1;
    while (end < chars.size() && isFalconPunctuation(chars[end]) == punctuation)
      ++end;
    size_t to = end < chars.size() ? chars[end].offset : text.size();
    pieces.push_back(text.slice(chars[i].offset, to));
    i = end;
  }
}

bool isAsciiDigit(char c) { return c >= '0' && c <= '9'; }

/// Appends `word` cut around each leftmost run of three ASCII digits.
void splitDigitTriples(llvm::StringRef word, std::vector<llvm::StringRef> &pieces) {
  size_t start = 0;
  for (size_t i = 0; i + 3 <= word.size();) {
    if (isAsciiDigit(word[i]) && isAsciiDigit(word[i + 1]) && isAsciiDigit(word[i + 2])) {
      if (i > start)
        pieces.push_back(word.slice(start, i));
      pieces.push_back(word.substr(i, 3));
      i += 3;
      start = i;
    } else {
      ++i;
    }
  }
  if (start < word.size())
    pieces.push_back(word.substr(start));
}


/// Appends the pieces of `text` cut around each number character, which
/// stands alone.
void splitSingleNumbers(llvm::StringRef text, std::vector<llvm::StringRef> &pieces) {
  std::vector<TextChar> chars = splitCharacters(text);
  size_t start = 0;
  for (const TextChar &c : chars) {
    if (c.cls != CharClass::Number)
      continue;
    if (c.offset > start)
      pieces.push_back(text.slice(start, c.offset));
    pieces.push_back(text.substr(c.offset, c.size));
    start = c.offset + c.size;
  }
  if (start < text.size())
    pieces.push_back(text.substr(start));
}

std::vector<llvm::StringRef> splitFalcon(llvm::StringRef text) {
  std::vector<llvm::StringRef> runs, gpt2Words, words;
  splitPunctuationRuns(text, runs);
  for (llvm::StringRef run : runs)
    splitGpt2(run, gpt2Words);
  for (llvm::StringRef word : gpt2Words)
    splitDigitTriples(word, words);
  return words;
}

std::vector<llvm::StringRef> splitSmollm(llvm::StringRef text) {
  std::vector<llvm::StringRef> pieces, words;
  splitSingleNumbers(text, pieces);
  for (llvm::StringRef piece : pieces)
    splitGpt2(piece, words);
  return words;
}

} // namespace

std::vector<llvm::StringRef> tfm::rt::splitWords(llvm::StringRef text, WordSplit split) {
  std::vector<llvm::StringRef> words;
  switch (split) {
  case WordSplit::Gpt2:
    splitGpt2(text, words);
    return words;
  case WordSplit::Falcon:
    return splitFalcon(text);
  case WordSplit::Llama3:
    splitLlama3(text, 3, words);
    return words;
  case WordSplit::Qwen2:
    splitLlama3(text, 1, words);
    return words;
  case WordSplit::Smollm:
    return splitSmollm(text);
  }
  return words;
}
