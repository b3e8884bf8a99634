//===- Gpt2PreTokenizer.cpp - GPT-2's word regex, matched by hand ---------===//
#include "tfm/runtime/Gpt2PreTokenizer.h"

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

} // namespace

std::vector<llvm::StringRef> tfm::rt::splitGpt2Words(llvm::StringRef text) {
  WordMatcher matcher(text);
  std::vector<llvm::StringRef> words;
  for (size_t i = 0; i < matcher.size();) {
    size_t end = matcher.wordEnd(i);
    size_t from = matcher.offset(i);
    size_t to = end < matcher.size() ? matcher.offset(end) : text.size();
    words.push_back(text.slice(from, to));
    i = end;
  }
  return words;
}
