//===- AddedTokens.cpp - Cut special and added tokens out of text ---------===//
#include "tfm/runtime/AddedTokens.h"

#include "tfm/runtime/UnicodeCategories.h"

#include <algorithm>

using namespace tfm::rt;

AddedTokenMatcher::AddedTokenMatcher(std::vector<AddedToken> added)
    : tokens(std::move(added)), specials(256), others(256) {
  for (uint32_t i = 0; i < tokens.size(); ++i) {
    const AddedToken &token = tokens[i];
    if (token.id >= static_cast<int32_t>(isAdded.size()))
      isAdded.resize(token.id + 1, false);
    if (token.id >= 0)
      isAdded[token.id] = true;
    if (token.text.empty())
      continue; // matches nowhere
    unsigned char first = static_cast<unsigned char>(token.text[0]);
    (token.special ? specials : others)[first].push_back(i);
  }
  for (Candidates *table : {&specials, &others})
    for (std::vector<uint32_t> &list : *table)
      std::stable_sort(list.begin(), list.end(), [&](uint32_t a, uint32_t b) {
        return tokens[a].text.size() > tokens[b].text.size();
      });
}

std::vector<AddedToken> tfm::rt::addedTokensFromKinds(const std::vector<std::string> &texts,
                                                      const std::vector<TokenKind> &kinds) {
  std::vector<AddedToken> added;
  for (size_t id = 0; id < texts.size() && id < kinds.size(); ++id) {
    TokenKind kind = kinds[id];
    if (kind != TokenKind::Control && kind != TokenKind::UserDefined &&
        kind != TokenKind::Unknown)
      continue;
    AddedToken token;
    token.id = static_cast<int32_t>(id);
    token.text = texts[id];
    token.special = kind != TokenKind::UserDefined;
    added.push_back(std::move(token));
  }
  return added;
}

bool AddedTokenMatcher::contains(int32_t id) const {
  return id >= 0 && id < static_cast<int32_t>(isAdded.size()) && isAdded[id];
}

std::vector<TextFragment> AddedTokenMatcher::split(llvm::StringRef text) const {
  std::vector<TextFragment> fragments;
  if (!text.empty())
    fragments.push_back({text, -1});
  cut(specials, fragments);
  cut(others, fragments);
  return fragments;
}

void AddedTokenMatcher::cut(const Candidates &candidates,
                            std::vector<TextFragment> &fragments) const {
  if (tokens.empty())
    return;
  std::vector<TextFragment> result;
  for (const TextFragment &fragment : fragments) {
    if (fragment.token >= 0) {
      result.push_back(fragment);
      continue;
    }
    llvm::StringRef text = fragment.text;
    size_t plainStart = 0;
    for (size_t at = 0; at < text.size();) {
      const AddedToken *match = nullptr;
      for (uint32_t index : candidates[static_cast<unsigned char>(text[at])])
        if (text.substr(at).starts_with(tokens[index].text)) {
          match = &tokens[index];
          break;
        }
      if (!match) {
        ++at;
        continue;
      }
      size_t begin = at, end = at + match->text.size();
      if (match->lstrip)
        begin -= trailingWhitespace(text.slice(plainStart, begin));
      if (match->rstrip)
        end += leadingWhitespace(text.substr(end));
      if (begin > plainStart)
        result.push_back({text.slice(plainStart, begin), -1});
      result.push_back({text.slice(begin, end), match->id});
      plainStart = at = end;
    }
    if (plainStart < text.size())
      result.push_back({text.substr(plainStart), -1});
  }
  fragments = std::move(result);
}
