//===- AddedTokens.h - Find special and added tokens in text ----*- C++ -*-===//
//
// Tokens such as <|endoftext|>, <s> or MPT's runs of spaces are not made by
// merging: wherever their text appears in the input it becomes that one
// token, and the tokenizer proper only sees the text between them. This is
// what Hugging Face tokenizers do with "added tokens" (and llama.cpp with
// control and user-defined tokens): special tokens are cut out first, then
// the other added tokens inside what is left, each time taking the leftmost
// match and, among matches at one place, the longest.
//
//===----------------------------------------------------------------------===//
#ifndef TFM_RUNTIME_ADDEDTOKENS_H
#define TFM_RUNTIME_ADDEDTOKENS_H

#include "tfm/runtime/Tokenizer.h"

#include "llvm/ADT/StringRef.h"

#include <cstdint>
#include <string>
#include <vector>

namespace tfm::rt {

struct AddedToken {
  int32_t id = -1;
  std::string text;
  bool special = false; // cut out before the non-special ones
  bool lstrip = false;  // the match takes the whitespace before it
  bool rstrip = false;  // ... and after it
};

/// The added tokens of a vocabulary that marks them by kind: control,
/// user-defined and unknown tokens (control and unknown ones special).
std::vector<AddedToken> addedTokensFromKinds(const std::vector<std::string> &texts,
                                             const std::vector<TokenKind> &kinds);

/// A piece of input: plain text for the tokenizer, or one added token.
struct TextFragment {
  llvm::StringRef text; // the input's bytes this fragment covers
  int32_t token = -1;   // the added token's id, or -1 for plain text
};

class AddedTokenMatcher {
public:
  AddedTokenMatcher() = default;
  explicit AddedTokenMatcher(std::vector<AddedToken> tokens);

  /// `text` cut into plain-text fragments and added tokens, in order.
  std::vector<TextFragment> split(llvm::StringRef text) const;

  /// Whether `id` is one of the added tokens.
  bool contains(int32_t id) const;

private:
  /// Indices into `tokens` by first byte, longest first.
  using Candidates = std::vector<std::vector<uint32_t>>;

  void cut(const Candidates &candidates, std::vector<TextFragment> &fragments) const;

  std::vector<AddedToken> tokens;
  Candidates specials, others;
  std::vector<bool> isAdded; // by id
};

} // namespace tfm::rt

#endif // TFM_RUNTIME_ADDEDTOKENS_H
