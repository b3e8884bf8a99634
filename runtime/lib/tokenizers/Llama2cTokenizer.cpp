//===- Llama2cTokenizer.cpp - llama2.c tokenizer.bin, as run.c does it ----===//
#include "tfm/runtime/Llama2cTokenizer.h"

#include "tfm/common/BoundedFile.h"
#include "tfm/common/Failure.h"

#include "llvm/Support/MemoryBuffer.h"

#include <cstring>
#include <queue>

using namespace tfm::rt;

namespace {

/// Reads little-endian fields in order, remembering whether one ran past the end.
class Cursor {
public:
  explicit Cursor(llvm::StringRef data) : data(data) {}
  bool atEnd() const { return at == data.size(); }
  size_t offset() const { return at; }

  template <typename T> bool read(T &value) {
    if (data.size() - at < sizeof(T))
      return false;
    std::memcpy(&value, data.data() + at, sizeof(T));
    at += sizeof(T);
    return true;
  }
  bool readBytes(size_t n, std::string &out) {
    if (data.size() - at < n)
      return false;
    out.assign(data.data() + at, n);
    at += n;
    return true;
  }

private:
  llvm::StringRef data;
  size_t at = 0;
};

int hexDigit(char c) {
  if (c >= '0' && c <= '9')
    return c - '0';
  if (c >= 'a' && c <= 'f')
    return c - 'a' + 10;
  if (c >= 'A' && c <= 'F')
    return c - 'A' + 10;
  return -1;
}

/// run.c's sscanf(piece, "<0x%02hhX>"): "<0x" then one or two hex digits.
bool parseBytePiece(const std::string &piece, unsigned char &byte) {
  if (piece.size() < 4 || piece.compare(0, 3, "<0x") != 0 || hexDigit(piece[3]) < 0)
    return false;
  int value = hexDigit(piece[3]);
  if (piece.size() > 4 && hexDigit(piece[4]) >= 0)
    value = value * 16 + hexDigit(piece[4]);
  byte = static_cast<unsigned char>(value);
  return true;
}

/// A possible merge of the symbol starting at `left` with its right
/// neighbour, as it stood when pushed: `span` is the number of initial tokens
/// the two covered together.
struct Candidate {
  float score;
  size_t left;
  size_t span;
  int32_t id;
};

/// Orders the queue so that its top is run.c's choice: the best score, and
/// among equal scores the leftmost pair.
struct LosesTo {
  bool operator()(const Candidate &a, const Candidate &b) const {
    if (a.score != b.score)
      return a.score < b.score;
    return a.left > b.left;
  }
};

} // namespace

llvm::Expected<std::unique_ptr<Llama2cTokenizer>>
Llama2cTokenizer::load(const std::string &path, int64_t expectedVocab, int32_t bosId,
                       int32_t eosId) {
  auto file = readBoundedFile(path, kMaxTokenizerFileBytes, "tokenizer");
  if (!file)
    return file.takeError();
  Cursor in((*file)->getBuffer());

  int32_t maxTokenLength = 0;
  if (!in.read(maxTokenLength) || maxTokenLength <= 0)
    return failure(path + ": malformed llama2.c tokenizer: expected a positive int32 "
                          "max_token_length at the start");

  std::unique_ptr<Llama2cTokenizer> tok(new Llama2cTokenizer());
  tok->special = {bosId, eosId, /*addBos=*/true};
  while (!in.atEnd()) {
    size_t entry = tok->pieces.size();
    size_t entryOffset = in.offset();
    float score;
    int32_t length;
    std::string piece;
    if (!in.read(score) || !in.read(length))
      return failure(path + ": malformed llama2.c tokenizer: token " + std::to_string(entry) +
                     " at byte " + std::to_string(entryOffset) +
                     " is cut off (truncated file?)");
    if (length < 0 || length > maxTokenLength)
      return failure(path + ": malformed llama2.c tokenizer: token " + std::to_string(entry) +
                     " has length " + std::to_string(length) + ", expected 0.." +
                     std::to_string(maxTokenLength) + " (max_token_length)");
    if (!in.readBytes(static_cast<size_t>(length), piece))
      return failure(path + ": malformed llama2.c tokenizer: token " + std::to_string(entry) +
                     " needs " + std::to_string(length) +
                     " bytes past the end of the file (truncated file?)");
    tok->scores.push_back(score);
    tok->ids.emplace(piece, static_cast<int32_t>(entry)); // first of duplicates wins
    tok->pieces.push_back(std::move(piece));
  }
  if (expectedVocab >= 0 && tok->vocabSize() != expectedVocab)
    return failure(path + ": foreign tokenizer: it holds " +
                   std::to_string(tok->vocabSize()) + " tokens, the model's vocabulary is " +
                   std::to_string(expectedVocab));
  // Text outside the vocabulary falls back to the byte tokens <0x00>..<0xFF>
  // at ids 3..258 (llama2.c's run.c): a smaller vocabulary cannot encode it.
  constexpr int64_t kMinVocab = kFirstByteToken + 256;
  if (tok->vocabSize() < kMinVocab)
    return failure(path + ": malformed llama2.c tokenizer: it holds " +
                   std::to_string(tok->vocabSize()) + " tokens, expected at least " +
                   std::to_string(kMinVocab) + " (<unk>, BOS, EOS and the 256 byte tokens)");
  return std::move(tok);
}

int32_t Llama2cTokenizer::lookup(const std::string &piece) const {
  auto it = ids.find(piece);
  return it == ids.end() ? -1 : it->second;
}

std::vector<int32_t> Llama2cTokenizer::encode(const std::string &text, bool addBos) const {
  std::vector<int32_t> tokens;
  if (addBos && bosId() >= 0)
    tokens.push_back(bosId());
  // SentencePiece's dummy prefix: a leading space before non-empty text.
  if (!text.empty()) {
    int32_t space = lookup(" ");
    if (space >= 0)
      tokens.push_back(space);
  }

  // One codepoint at a time (a lead byte and up to three continuation
  // bytes); a codepoint missing from the vocabulary falls back to its bytes.
  std::string codepoint;
  for (size_t i = 0; i < text.size(); ++i) {
    unsigned char c = static_cast<unsigned char>(text[i]);
    if ((c & 0xC0) != 0x80)
      codepoint.clear();
    codepoint += static_cast<char>(c);
    bool continues = i + 1 < text.size() &&
                     (static_cast<unsigned char>(text[i + 1]) & 0xC0) == 0x80;
    if (continues && codepoint.size() < 4)
      continue;
    int32_t id = lookup(codepoint);
    if (id >= 0) {
      tokens.push_back(id);
    } else {
      for (unsigned char byte : codepoint)
        tokens.push_back(static_cast<int32_t>(byte) + kFirstByteToken);
    }
    codepoint.clear();
  }

  // Greedily merge the adjacent pair whose merged piece scores best; the
  // first such pair wins a tie. run.c rescans every pair after each merge,
  // which is quadratic (a megabyte of text took most of an hour); a queue of
  // candidate merges makes it O(n log n). Entries are not removed when a
  // merge changes a neighbour; they are recognised as stale when popped.
  //
  // Symbols are named by the index of the first initial token they cover, so
  // index order is sequence order and the smallest index is the leftmost
  // pair. span[i] is how many initial tokens symbol i covers (0 once merged
  // into its left neighbour), so its right neighbour starts at i + span[i];
  // tokens[i] is its id.
  const size_t n = tokens.size();
  if (n < 2)
    return tokens;
  constexpr size_t kNone = static_cast<size_t>(-1);
  constexpr float kNoMerge = -1e10f; // run.c's initial best_score
  const int64_t vocab = vocabSize();
  std::vector<size_t> span(n, 1), prev(n);
  for (size_t i = 0; i < n; ++i)
    prev[i] = i == 0 ? kNone : i - 1;
  std::priority_queue<Candidate, std::vector<Candidate>, LosesTo> queue;
  std::string merged;
  auto consider = [&](size_t left) {
    size_t right = left + span[left];
    if (right >= n)
      return;
    int32_t a = tokens[left], b = tokens[right];
    // An id outside the vocabulary (a BOS or byte-fallback id a small or
    // foreign vocabulary lacks) has no piece, so it merges with nothing.
    if (a < 0 || a >= vocab || b < 0 || b >= vocab)
      return;
    merged.assign(pieces[a]);
    merged.append(pieces[b]);
    int32_t id = lookup(merged);
    // run.c takes a pair only when its score beats -1e10 (never a NaN).
    if (id < 0 || !(scores[id] > kNoMerge))
      return;
    queue.push({scores[id], left, span[left] + span[right], id});
  };
  for (size_t i = 0; i + 1 < n; ++i)
    consider(i);

  while (!queue.empty()) {
    Candidate best = queue.top();
    queue.pop();
    size_t left = best.left;
    if (span[left] == 0)
      continue; // merged into its left neighbour since
    size_t right = left + span[left];
    // Spans only grow, so an unchanged total means neither symbol changed.
    if (right >= n || span[left] + span[right] != best.span)
      continue;
    tokens[left] = best.id;
    span[left] = best.span;
    span[right] = 0;
    if (left + span[left] < n)
      prev[left + span[left]] = left;
    if (prev[left] != kNone)
      consider(prev[left]);
    consider(left);
  }

  size_t kept = 0;
  for (size_t i = 0; i < n; i += span[i])
    tokens[kept++] = tokens[i];
  tokens.resize(kept);
  return tokens;
}

std::string Llama2cTokenizer::decode(int32_t previous, int32_t token) const {
  if (token < 0 || token >= vocabSize())
    return "";
  std::string piece = pieces[token];
  // At the start of a text (after BOS), the dummy-prefix space is not part
  // of the text.
  if ((previous < 0 || previous == bosId()) && !piece.empty() && piece[0] == ' ')
    piece.erase(0, 1);
  unsigned char byte;
  if (parseBytePiece(piece, byte))
    piece.assign(1, static_cast<char>(byte));
  // run.c prints no lone non-printable byte. Bytes >= 0x80 are kept (run.c
  // drops them too) so that byte-fallback UTF-8 characters come out whole.
  if (piece.size() == 1) {
    unsigned char c = static_cast<unsigned char>(piece[0]);
    bool printable = (c >= 0x20 && c < 0x7f) || c == '\t' || c == '\n' || c == '\v' ||
                     c == '\f' || c == '\r' || c >= 0x80;
    if (!printable)
      return "";
  }
  return piece;
}
