//===- SentencePieceTokenizer.cpp - SentencePiece BPE and Unigram --------===//
#include "tfm/runtime/SentencePieceTokenizer.h"

#include "tfm/runtime/UnicodeCategories.h"

#include "PrecompiledCharsmap.h"
#include "VocabularyIds.h"

#include "tfm/common/Failure.h"
#include "tfm/common/UntrustedText.h"

#include "llvm/ADT/StringExtras.h"

#include <algorithm>
#include <cfloat>
#include <cstdint>
#include <queue>

using namespace tfm::rt;

namespace {

const char kSpaceMark[] = "\xE2\x96\x81"; // U+2581, SentencePiece's escaped space

/// "<0x0A>" -> 0x0A.
bool parseBytePiece(llvm::StringRef piece, unsigned &byte) {
  return piece.size() == 6 && piece.starts_with("<0x") && piece.ends_with(">") &&
         !piece.substr(3, 2).getAsInteger(16, byte) && byte < 256;
}

/// SentencePiece's remove_extra_whitespaces: no leading or trailing spaces,
/// and runs of spaces inside become one.
std::string squeezeSpaces(llvm::StringRef text) {
  std::string out;
  for (char c : text.trim(' ')) {
    if (c == ' ' && !out.empty() && out.back() == ' ')
      continue;
    out += c;
  }
  return out;
}

} // namespace

llvm::Expected<std::unique_ptr<SentencePieceTokenizer>>
SentencePieceTokenizer::create(const SentencePieceVocabulary &vocab) {
  const std::string &src = vocab.source;
  if (llvm::Error e = checkVocabularyIds(src, vocab.pieces.size(), "pieces", vocab.special,
                                         vocab.unknown, vocab.added))
    return std::move(e);
  const auto count = static_cast<int32_t>(vocab.pieces.size());
  if (vocab.scores.size() != vocab.pieces.size() || vocab.kinds.size() != vocab.pieces.size())
    return failure(src + ": " + std::to_string(count) + " pieces but " +
                   std::to_string(vocab.scores.size()) + " scores and " +
                   std::to_string(vocab.kinds.size()) + " token types; expected one of each "
                   "per piece");

  std::unique_ptr<SentencePieceTokenizer> tok(new SentencePieceTokenizer());
  tok->special = vocab.special;
  tok->scores = vocab.scores;
  tok->unknown = vocab.unknown;
  tok->addDummyPrefix = vocab.addDummyPrefix;
  tok->removeExtraWhitespaces = vocab.removeExtraWhitespaces;
  tok->escapeWhitespaces = vocab.escapeWhitespaces;
  tok->added = AddedTokenMatcher(vocab.added);
  tok->printed.resize(count);
  tok->isByte.assign(count, false);
  std::fill(std::begin(tok->byteToken), std::end(tok->byteToken), -1);

  bool anyByte = false;
  for (int32_t id = 0; id < count; ++id) {
    const std::string &piece = vocab.pieces[id];
    TokenKind kind = vocab.kinds[id];
    if (kind == TokenKind::Byte) {
      unsigned byte;
      if (!parseBytePiece(piece, byte))
        return failure(src + ": piece " + std::to_string(id) + " " + tfm::quoted(piece) +
                       " is a byte piece, expected the form <0xXX>");
      tok->isByte[id] = true;
      tok->printed[id] = std::string(1, static_cast<char>(byte));
      if (tok->byteToken[byte] < 0)
        tok->byteToken[byte] = id;
      anyByte = true;
      continue;
    }
    tok->printed[id] = vocab.escapeWhitespaces
                           ? llvm::join(llvm::split(piece, kSpaceMark), " ")
                           : piece;
    if (kind == TokenKind::Normal || kind == TokenKind::UserDefined)
      tok->mergeable.emplace(piece, id); // the first of duplicates wins
  }
  if (vocab.byteFallback) {
    for (int b = 0; b < 256 && anyByte; ++b)
      if (tok->byteToken[b] < 0)
        return failure(src + ": byte fallback is on but there is no piece <0x" +
                       llvm::utohexstr(b, /*LowerCase=*/false, /*Width=*/2) + ">");
  } else {
    std::fill(std::begin(tok->byteToken), std::end(tok->byteToken), -1);
  }
  if (tok->byteToken[0] < 0 && tok->unknown < 0)
    return failure(src + ": the vocabulary has neither byte-fallback pieces nor an unknown "
                         "piece, so text with a character outside it cannot be encoded");
  if (vocab.model == SentencePieceModel::Unigram)
    if (llvm::Error e = tok->prepareUnigram(vocab))
      return std::move(e);
  return std::move(tok);
}

std::vector<int32_t> SentencePieceTokenizer::encode(const std::string &text,
                                                    bool addBos) const {
  std::vector<int32_t> ids;
  if (addBos && special.bos >= 0)
    ids.push_back(special.bos);
  // As llama.cpp does, every stretch of text after an added token gets the
  // dummy prefix again (decode drops it in the same places).
  bool afterAdded = true;
  for (const TextFragment &fragment : added.split(text)) {
    if (fragment.token >= 0) {
      ids.push_back(fragment.token);
      afterAdded = true;
      continue;
    }
    encodeStretch(fragment.text, addDummyPrefix && afterAdded, ids);
    afterAdded = false;
  }
  return ids;
}

llvm::Error SentencePieceTokenizer::prepareUnigram(const SentencePieceVocabulary &vocab) {
  model = SentencePieceModel::Unigram;
  if (!vocab.precompiledCharsmap.empty()) {
    auto map = PrecompiledCharsmap::parse(vocab.precompiledCharsmap, vocab.source);
    if (!map)
      return map.takeError();
    charsmap = std::make_shared<const PrecompiledCharsmap>(std::move(*map));
  }
  userDefined.assign(vocab.pieces.size(), false);
  // sentencepiece's start values: FLT_MIN, the least positive float, is
  // the maximum of a model whose scores are all negative (log
  // probabilities), so that a user-defined piece scores about -0.1.
  minScore = FLT_MAX;
  maxScore = FLT_MIN;
  for (size_t id = 0; id < vocab.pieces.size(); ++id) {
    userDefined[id] = vocab.kinds[id] == TokenKind::UserDefined;
    if (vocab.kinds[id] == TokenKind::Normal) {
      minScore = std::min(minScore, vocab.scores[id]);
      maxScore = std::max(maxScore, vocab.scores[id]);
    }
  }
  for (const auto &[piece, id] : mergeable)
    longestPiece = std::max(longestPiece, piece.size());
  return llvm::Error::success();
}

std::string SentencePieceTokenizer::normalizeForUnigram(llvm::StringRef text,
                                                        bool dummyPrefix) const {
  // normalizer.cc's NormalizePrefix: the longest rule, else one character
  // (an invalid byte as U+FFFD).
  auto nextPiece = [&](llvm::StringRef in) -> std::pair<std::string, size_t> {
    if (charsmap) {
      auto [rule, size] = charsmap->longestRule(in);
      if (size)
        return {rule.str(), size};
    }
    TextChar ch = splitCharacters(in.take_front(4)).front();
    if (!ch.valid)
      return {"\xEF\xBF\xBD", 1};
    return {in.take_front(ch.size).str(), ch.size};
  };
  if (removeExtraWhitespaces)
    while (!text.empty()) {
      auto [piece, size] = nextPiece(text);
      if (piece != " ")
        break;
      text = text.drop_front(size);
    }
  if (text.empty())
    return "";
  const std::string space = escapeWhitespaces ? kSpaceMark : " ";
  std::string out = dummyPrefix ? space : "";
  bool previousSpace = removeExtraWhitespaces;
  while (!text.empty()) {
    auto [piece, size] = nextPiece(text);
    llvm::StringRef rest(piece);
    while (previousSpace && rest.consume_front(" ")) {
    }
    if (!rest.empty()) {
      for (char c : rest)
        out += c == ' ' ? space : std::string(1, c);
      previousSpace = rest.ends_with(" ");
    }
    text = text.drop_front(size);
    if (!removeExtraWhitespaces)
      previousSpace = false;
  }
  if (removeExtraWhitespaces)
    while (llvm::StringRef(out).ends_with(space))
      out.resize(out.size() - space.size());
  return out;
}

void SentencePieceTokenizer::encodeUnigram(const std::string &normalized,
                                           std::vector<int32_t> &out) const {
  // The best segmentation of the text up to each byte offset, as
  // unigram_model.cc's EncodeOptimized: scores in float, a later candidate
  // replacing an earlier only when strictly better.
  struct Best {
    int32_t id = -1;
    float score = 0;
    int64_t start = -1;
  };
  const float unknownScore = minScore - 10.0f;
  std::vector<Best> best(normalized.size() + 1);
  std::vector<TextChar> chars = splitCharacters(normalized);
  llvm::StringRef whole(normalized);
  for (size_t c = 0; c < chars.size(); ++c) {
    size_t start = chars[c].offset;
    float here = best[start].score;
    bool singleCharacterPiece = false;
    for (size_t e = c; e < chars.size(); ++e) {
      size_t end = chars[e].offset + chars[e].size;
      if (end - start > longestPiece)
        break;
      auto it = mergeable.find(whole.slice(start, end).str());
      if (it == mergeable.end())
        continue;
      // User-defined pieces always win, as sentencepiece scores them.
      float score = userDefined[it->second]
                        ? static_cast<float>((end - start) * maxScore - 0.1)
                        : scores[it->second];
      Best &target = best[end];
      if (target.start < 0 || here + score > target.score)
        target = {it->second, here + score, static_cast<int64_t>(start)};
      singleCharacterPiece |= e == c;
    }
    if (!singleCharacterPiece) {
      Best &target = best[start + chars[c].size];
      if (target.start < 0 || here + unknownScore > target.score)
        target = {unknown, here + unknownScore, static_cast<int64_t>(start)};
    }
  }
  std::vector<std::pair<int32_t, llvm::StringRef>> path;
  for (size_t end = normalized.size(); end > 0;) {
    const Best &node = best[end];
    path.emplace_back(node.id, whole.slice(node.start, end));
    end = static_cast<size_t>(node.start);
  }
  // An unknown character becomes its bytes with byte fallback; without,
  // a run of unknown characters is one unknown piece, as
  // sentencepiece_processor.cc merges them.
  bool previousUnknown = false;
  for (auto it = path.rbegin(); it != path.rend(); ++it) {
    bool isUnknown = it->first == unknown;
    if (isUnknown && byteToken[0] >= 0) {
      for (unsigned char byte : it->second)
        out.push_back(byteToken[byte]);
    } else if (!(isUnknown && previousUnknown)) {
      out.push_back(it->first);
    }
    previousUnknown = isUnknown;
  }
}

void SentencePieceTokenizer::encodeStretch(llvm::StringRef text, bool dummyPrefix,
                                           std::vector<int32_t> &out) const {
  if (model == SentencePieceModel::Unigram) {
    std::string normalized = normalizeForUnigram(text, dummyPrefix);
    if (!normalized.empty())
      encodeUnigram(normalized, out);
    return;
  }
  std::string normalized = removeExtraWhitespaces ? squeezeSpaces(text) : text.str();
  if (normalized.empty())
    return;
  if (dummyPrefix)
    normalized.insert(0, " ");
  if (escapeWhitespaces)
    normalized = llvm::join(llvm::split(normalized, ' '), kSpaceMark);

  // Characters as a linked list of byte ranges; a merged-away one has size 0.
  struct Symbol {
    uint32_t offset, size;
    int32_t prev, next;
  };
  std::vector<Symbol> symbols;
  for (const TextChar &ch : splitCharacters(normalized))
    symbols.push_back({ch.offset, ch.size, static_cast<int32_t>(symbols.size()) - 1,
                       static_cast<int32_t>(symbols.size()) + 1});
  symbols.back().next = -1;
  llvm::StringRef whole(normalized);
  auto textOf = [&](const Symbol &s) { return whole.substr(s.offset, s.size); };

  struct Candidate {
    float score;
    int32_t left;
    uint32_t size; // of the merged text: stale when the two sides changed
    bool operator<(const Candidate &o) const { // worst on top of a max-heap
      return score != o.score ? score < o.score : left > o.left;
    }
  };
  std::priority_queue<Candidate> queue;
  auto consider = [&](int32_t left) {
    if (left < 0 || symbols[left].next < 0)
      return;
    const Symbol &l = symbols[left], &r = symbols[l.next];
    auto it = mergeable.find(whole.substr(l.offset, l.size + r.size).str());
    if (it != mergeable.end())
      queue.push({scores[it->second], left, l.size + r.size});
  };
  for (int32_t i = 0; i + 1 < static_cast<int32_t>(symbols.size()); ++i)
    consider(i);

  while (!queue.empty()) {
    Candidate c = queue.top();
    queue.pop();
    Symbol &l = symbols[c.left];
    if (l.size == 0 || l.next < 0 || l.size + symbols[l.next].size != c.size)
      continue;
    Symbol &r = symbols[l.next];
    l.size += r.size;
    l.next = r.next;
    if (r.next >= 0)
      symbols[r.next].prev = c.left;
    r.size = 0;
    consider(l.prev);
    consider(c.left);
  }

  for (int32_t i = 0; i >= 0; i = symbols[i].next) {
    llvm::StringRef piece = textOf(symbols[i]);
    auto it = mergeable.find(piece.str());
    if (it != mergeable.end()) {
      out.push_back(it->second);
      continue;
    }
    // Only a single character can be missing: merges make known pieces.
    if (byteToken[0] < 0) {
      out.push_back(unknown);
      continue;
    }
    for (unsigned char byte : piece)
      out.push_back(byteToken[byte]);
  }
}

std::string SentencePieceTokenizer::decode(int32_t previous, int32_t token) const {
  if (token < 0 || token >= vocabSize())
    return "";
  llvm::StringRef text = printed[token];
  bool startsStretch = previous < 0 || added.contains(previous);
  if (addDummyPrefix && startsStretch && !isByte[token] && text.starts_with(" "))
    text = text.drop_front();
  return text.str();
}
