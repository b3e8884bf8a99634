//===- WordSplit.cpp - Word regexes of byte-level BPE, matched by hand ----===//
#include "tfm/runtime/WordSplit.h"

#include "tfm/runtime/UnicodeCategories.h"

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

private:
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

/// Appends GPT-2's words of `text` to `words`.
void splitGpt2(llvm::StringRef text, std::vector<llvm::StringRef> &words) {
  WordMatcher matcher(text);
  for (size_t i = 0; i < matcher.size();) {
    size_t end = matcher.wordEnd(i);
    size_t from = matcher.offset(i);
    size_t to = end < matcher.size() ? matcher.offset(end) : text.size();
    words.push_back(text.slice(from, to));
    i = end;
  }
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

} // namespace

std::vector<llvm::StringRef> tfm::rt::splitWords(llvm::StringRef text, WordSplit split) {
  std::vector<llvm::StringRef> words;
  if (split == WordSplit::Gpt2) {
    splitGpt2(text, words);
    return words;
  }
  std::vector<llvm::StringRef> runs, gpt2Words;
  splitPunctuationRuns(text, runs);
  for (llvm::StringRef run : runs)
    splitGpt2(run, gpt2Words);
  for (llvm::StringRef word : gpt2Words)
    splitDigitTriples(word, words);
  return words;
}
