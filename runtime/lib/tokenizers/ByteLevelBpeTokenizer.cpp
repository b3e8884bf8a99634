//===- ByteLevelBpeTokenizer.cpp - GPT-2 byte-level BPE --------------------===//
#include "tfm/runtime/ByteLevelBpeTokenizer.h"


#include "VocabularyIds.h"

#include "tfm/common/Failure.h"
#include "tfm/common/UntrustedText.h"

#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/ConvertUTF.h"

#include <array>
#include <cstdint>
#include <queue>

using namespace tfm::rt;
using tfm::quoted;

namespace {

/// GPT-2's bytes_to_unicode() inverted: the byte each character of the
/// byte-level alphabet stands for. Printable Latin-1 bytes stand for
/// themselves; the other bytes, in order, for U+0100, U+0101, ...
class ByteAlphabet {
public:
  ByteAlphabet() {
    byteOf.fill(-1);
    char32_t next = 0x100;
    for (int b = 0; b < 256; ++b) {
      bool printable = (b >= '!' && b <= '~') || (b >= 0xA1 && b <= 0xAC) || b >= 0xAE;
      byteOf[printable ? b : next++] = b;
    }
  }

  /// The bytes `text` spells, or false when a character is not in the
  /// alphabet.
  bool decode(llvm::StringRef text, std::string &out) const {
    out.clear();
    const auto *at = reinterpret_cast<const llvm::UTF8 *>(text.data());
    const llvm::UTF8 *end = at + text.size();
    while (at < end) {
      llvm::UTF32 c;
      if (llvm::convertUTF8Sequence(&at, end, &c, llvm::strictConversion) !=
              llvm::conversionOK ||
          c >= byteOf.size() || byteOf[c] < 0)
        return false;
      out += static_cast<char>(byteOf[c]);
    }
    return true;
  }

private:
  std::array<int, 0x100 + 68> byteOf; // 68 bytes are not printable
};

/// A token's bytes in SentencePiece's spelling: "▁" a space, "<0xXX>"
/// one byte (`isByte`).
std::string sentencePieceBytes(llvm::StringRef text, bool &isByte) {
  unsigned value;
  isByte = text.size() == 6 && text.starts_with("<0x") && text.ends_with(">") &&
           !text.substr(3, 2).getAsInteger(16, value);
  if (isByte)
    return std::string(1, static_cast<char>(value));
  std::string out;
  for (size_t at = 0; at < text.size();) {
    if (text.substr(at).starts_with("\xe2\x96\x81")) {
      out += ' ';
      at += 3;
    } else {
      out += text[at++];
    }
  }
  return out;
}

/// The bytes a token's text spells, or false when it spells none.
bool tokenBytes(TokenSpelling spelling, const ByteAlphabet &alphabet, llvm::StringRef text,
                std::string &out, bool &isByte) {
  isByte = false;
  switch (spelling) {
  case TokenSpelling::ByteLevel:
    return alphabet.decode(text, out);
  case TokenSpelling::SentencePiece:
    out = sentencePieceBytes(text, isByte);
    return true;
  }
  return false;
}

std::string describeToken(const std::vector<std::string> &tokens, int32_t id) {
  return "token " + std::to_string(id) + " " + quoted(tokens[id]);
}

} // namespace

llvm::Expected<std::unique_ptr<ByteLevelBpeTokenizer>>
ByteLevelBpeTokenizer::create(const ByteLevelBpeVocabulary &vocab) {
  const std::string &src = vocab.source;
  if (llvm::Error e = checkVocabularyIds(src, vocab.tokens.size(), "tokens", vocab.special,
                                         vocab.unknown, vocab.added))
    return std::move(e);
  const auto count = static_cast<int32_t>(vocab.tokens.size());
  std::unique_ptr<ByteLevelBpeTokenizer> tok(new ByteLevelBpeTokenizer());
  tok->special = vocab.special;
  tok->normalization = vocab.normalization;
  tok->wordSplit = vocab.wordSplit;
  tok->spelling = vocab.spelling;
  tok->added = AddedTokenMatcher(vocab.added);

  // Normal tokens by their bytes: merges resolve through these only (an
  // added token may spell the same bytes, as MPT's runs of spaces do).
  ByteAlphabet alphabet;
  std::unordered_map<std::string, int32_t> idOfBytes;
  std::vector<std::pair<std::string, int32_t>> deferredAdded; // after the normal tokens
  tok->bytes.resize(count);
  std::fill(std::begin(tok->byteToken), std::end(tok->byteToken), -1);
  for (int32_t id = 0; id < count; ++id) {
    if (tok->added.contains(id)) {
      tok->bytes[id] = vocab.tokens[id];
      // Spelled as the others are ("▁" a space), they are also the results
      // of merges (Gemma's runs of spaces and newlines).
      bool isByte;
      if (vocab.spelling == TokenSpelling::SentencePiece) {
        tok->bytes[id] = sentencePieceBytes(vocab.tokens[id], isByte);
        deferredAdded.emplace_back(tok->bytes[id], id);
      }
      continue;
    }
    bool isByte;
    if (!tokenBytes(vocab.spelling, alphabet, vocab.tokens[id], tok->bytes[id], isByte))
      return failure(src + ": " + describeToken(vocab.tokens, id) +
                     " is not spelled in GPT-2's byte-level alphabet (and is not an added "
                     "token)");
    if (isByte) { // <0xXX>: byte fallback only, never merged into
      int32_t &slot = tok->byteToken[static_cast<unsigned char>(tok->bytes[id][0])];
      if (slot < 0)
        slot = id;
      continue;
    }
    idOfBytes.emplace(tok->bytes[id], id);
    if (vocab.spelling == TokenSpelling::ByteLevel && tok->bytes[id].size() == 1) {
      int32_t &slot = tok->byteToken[static_cast<unsigned char>(tok->bytes[id][0])];
      if (slot < 0)
        slot = id;
    }
  }
  // A byte without a token of its own becomes the unknown token, or is
  // dropped, as Hugging Face and llama.cpp do: vocabularies learnt from text
  // lack some (Falcon's lacks 0xF2 and a dozen control characters).
  for (int32_t &slot : tok->byteToken)
    if (slot < 0)
      slot = vocab.unknown;
  if (vocab.ignoreMerges)
    tok->wholeWords = idOfBytes;
  if (vocab.spelling == TokenSpelling::SentencePiece)
    tok->characters = idOfBytes;
  for (const auto &[bytes, id] : deferredAdded) // normal tokens first for a text both spell
    idOfBytes.emplace(bytes, id);

  std::string left, right;
  auto lookup = [&](const std::string &text, const std::string &bytes, size_t rank,
                    int32_t &id) -> llvm::Error {
    auto it = idOfBytes.find(bytes);
    if (it == idOfBytes.end())
      return failure(src + ": merge " + std::to_string(rank) + " (" +
                     quoted(vocab.merges[rank].first + " " + vocab.merges[rank].second) +
                     ") uses " + quoted(text) + ", which is not in the vocabulary");
    id = it->second;
    return llvm::Error::success();
  };
  for (size_t rank = 0; rank < vocab.merges.size(); ++rank) {
    const auto &[a, b] = vocab.merges[rank];
    bool leftIsByte, rightIsByte;
    if (!tokenBytes(vocab.spelling, alphabet, a, left, leftIsByte) ||
        !tokenBytes(vocab.spelling, alphabet, b, right, rightIsByte))
      return failure(src + ": merge " + std::to_string(rank) + " (" + quoted(a + " " + b) +
                     ") is not spelled in GPT-2's byte-level alphabet");
    int32_t leftId, rightId, result;
    if (llvm::Error e = lookup(a, left, rank, leftId))
      return std::move(e);
    if (llvm::Error e = lookup(b, right, rank, rightId))
      return std::move(e);
    if (llvm::Error e = lookup(a + b, left + right, rank, result))
      return std::move(e);
    // A repeated merge keeps its first (best) rank.
    tok->merges.emplace(pairKey(leftId, rightId),
                        Merge{static_cast<int32_t>(rank), result});
  }
  return std::move(tok);
}

std::vector<int32_t> ByteLevelBpeTokenizer::encode(const std::string &text,
                                                   bool addBos) const {
  std::vector<int32_t> ids;
  if (addBos && special.bos >= 0)
    ids.push_back(special.bos);
  for (const TextFragment &fragment : added.split(text)) {
    if (fragment.token >= 0) {
      ids.push_back(fragment.token);
      continue;
    }
    std::string normalized = normalizeText(fragment.text, normalization);
    if (spelling == TokenSpelling::SentencePiece) { // one word, "▁" a space
      bool isByte;
      encodeWord(sentencePieceBytes(normalized, isByte), ids);
      continue;
    }
    for (llvm::StringRef word : splitWords(normalized, wordSplit))
      encodeWord(word, ids);
  }
  if (addBos && special.addEos && special.eos >= 0)
    ids.push_back(special.eos); // RoBERTa's <s> ... </s>
  return ids;
}

void ByteLevelBpeTokenizer::encodeWord(llvm::StringRef word, std::vector<int32_t> &out) const {
  {
    std::lock_guard<std::mutex> lock(cacheMutex);
    auto it = cache.find(word.str());
    if (it != cache.end()) {
      out.insert(out.end(), it->second.begin(), it->second.end());
      return;
    }
  }
  std::vector<int32_t> ids = mergeWord(word);
  out.insert(out.end(), ids.begin(), ids.end());
  std::lock_guard<std::mutex> lock(cacheMutex);
  if (cache.size() < kCacheEntries)
    cache.emplace(word.str(), std::move(ids));
}

std::vector<int32_t> ByteLevelBpeTokenizer::mergeWord(llvm::StringRef word) const {
  if (auto whole = wholeWords.find(word.str()); whole != wholeWords.end())
    return {whole->second};
  // The word's symbols as a linked list; a merged-away symbol has id -1.
  struct Symbol {
    int32_t id, prev, next;
  };
  std::vector<Symbol> symbols;
  for (int32_t id : firstSymbols(word))
    symbols.push_back({id, static_cast<int32_t>(symbols.size()) - 1,
                       static_cast<int32_t>(symbols.size()) + 1});
  if (!symbols.empty())
    symbols.back().next = -1;

  struct Candidate {
    int32_t rank, left, leftId, rightId;
    bool operator<(const Candidate &o) const { // worst on top of a max-heap
      return rank != o.rank ? rank > o.rank : left > o.left;
    }
  };
  std::priority_queue<Candidate> queue;
  auto consider = [&](int32_t left) {
    if (left < 0 || symbols[left].next < 0)
      return;
    const Symbol &l = symbols[left], &r = symbols[l.next];
    auto it = merges.find(pairKey(l.id, r.id));
    if (it != merges.end())
      queue.push({it->second.rank, left, l.id, r.id});
  };
  for (int32_t i = 0; i + 1 < static_cast<int32_t>(symbols.size()); ++i)
    consider(i);

  while (!queue.empty()) {
    Candidate c = queue.top();
    queue.pop();
    Symbol &l = symbols[c.left];
    // Stale when either side has merged since: a symbol's id only changes
    // to a longer token, never back.
    if (l.id != c.leftId || l.next < 0 || symbols[l.next].id != c.rightId)
      continue;
    Symbol &r = symbols[l.next];
    l.id = merges.at(pairKey(c.leftId, c.rightId)).result;
    l.next = r.next;
    if (r.next >= 0)
      symbols[r.next].prev = c.left;
    r.id = -1;
    consider(l.prev);
    consider(c.left);
  }

  std::vector<int32_t> ids;
  for (int32_t i = symbols.empty() ? -1 : 0; i >= 0; i = symbols[i].next)
    ids.push_back(symbols[i].id);
  return ids;
}

std::vector<int32_t> ByteLevelBpeTokenizer::firstSymbols(llvm::StringRef word) const {
  std::vector<int32_t> ids;
  auto addBytes = [&](llvm::StringRef bytes) {
    for (unsigned char byte : bytes)
      if (int32_t id = byteToken[byte]; id >= 0)
        ids.push_back(id);
  };
  if (spelling == TokenSpelling::ByteLevel) {
    addBytes(word);
    return ids;
  }
  for (const TextChar &c : splitCharacters(word)) {
    llvm::StringRef text = word.substr(c.offset, c.size);
    auto it = characters.find(text.str());
    if (it != characters.end())
      ids.push_back(it->second);
    else
      addBytes(text); // byte fallback
  }
  return ids;
}

std::string ByteLevelBpeTokenizer::decode(int32_t /*previous*/, int32_t token) const {
  if (token < 0 || token >= vocabSize())
    return "";
  return bytes[token];
}
