//===- WordPieceTokenizer.cpp - BERT's normalizer, word split and WordPiece ===//
#include "tfm/runtime/WordPieceTokenizer.h"

#include "tfm/runtime/UnicodeCategories.h"

#include "VocabularyIds.h"

#include "tfm/common/Failure.h"

#include "llvm/Support/ConvertUTF.h"

using namespace tfm::rt;

namespace {

void appendUtf8(char32_t codepoint, std::string &out) {
  char bytes[UNI_MAX_UTF8_BYTES_PER_CODE_POINT];
  char *end = bytes;
  llvm::ConvertCodePointToUTF8(codepoint, end);
  out.append(bytes, end);
}

/// Hugging Face's BertNormalizer's CJK ideograph blocks (the Unicode
/// CJK Unified Ideographs and their extensions A-E, and the compatibility
/// ideographs), which it sets apart as words.
bool isChineseChar(char32_t c) {
  return (c >= 0x4E00 && c <= 0x9FFF) || (c >= 0x3400 && c <= 0x4DBF) ||
         (c >= 0x20000 && c <= 0x2A6DF) || (c >= 0x2A700 && c <= 0x2B73F) ||
         (c >= 0x2B740 && c <= 0x2B81F) || (c >= 0x2B920 && c <= 0x2CEAF) ||
         (c >= 0xF900 && c <= 0xFAFF) || (c >= 0x2F800 && c <= 0x2FA1F);
}

/// BertPreTokenizer's punctuation: Unicode's P*, and every ASCII symbol
/// ("$", "+", "^", ...).
bool isBertPunctuation(char32_t c) {
  return (c >= 33 && c <= 47) || (c >= 58 && c <= 64) || (c >= 91 && c <= 96) ||
         (c >= 123 && c <= 126) || isPunctuation(c);
}

/// clean_text and handle_chinese_chars: controls, NUL and invalid bytes
/// (U+FFFD to Hugging Face, which reads text as UTF-8) dropped, whitespace
/// a space, ideographs with a space on each side.
std::string cleanText(llvm::StringRef text, const BertNormalization &n) {
  std::string out;
  for (const TextChar &ch : splitCharacters(text)) {
    char32_t c = ch.valid ? ch.codepoint : 0xFFFD;
    bool whitespace = c == '\t' || c == '\n' || c == '\r' || ch.cls == CharClass::Whitespace;
    if (n.cleanText && !whitespace && (c == 0 || c == 0xFFFD || isOtherCategory(c)))
      continue;
    if (n.cleanText && whitespace)
      c = ' ';
    bool apart = n.separateChineseChars && isChineseChar(c);
    if (apart)
      out += ' ';
    appendUtf8(c, out);
    if (apart)
      out += ' ';
  }
  return out;
}

/// strip_accents (NFD, nonspacing marks dropped) and lowercase, a
/// character at a time as Hugging Face's `char::to_lowercase`.
std::string foldCase(const std::string &text, const BertNormalization &n) {
  if (!n.stripAccents && !n.lowercase)
    return text;
  std::string decomposed = n.stripAccents ? normalizeText(text, Normalization::NFD) : text;
  std::string out;
  for (const TextChar &ch : splitCharacters(decomposed)) {
    if (n.stripAccents && isNonspacingMark(ch.codepoint))
      continue;
    llvm::StringRef bytes(decomposed.data() + ch.offset, ch.size);
    out += n.lowercase ? lowercaseCharacter(ch.codepoint) : bytes.str();
  }
  return out;
}

} // namespace

llvm::Expected<std::unique_ptr<WordPieceTokenizer>>
WordPieceTokenizer::create(const WordPieceVocabulary &vocab) {
  const std::string &src = vocab.source;
  if (llvm::Error e = checkVocabularyIds(src, vocab.tokens.size(), "tokens", vocab.special,
                                         vocab.unknown, vocab.added))
    return std::move(e);
  const auto count = static_cast<int32_t>(vocab.tokens.size());
  if (vocab.continues.size() != vocab.tokens.size())
    return failure(src + ": " + std::to_string(count) + " tokens but " +
                   std::to_string(vocab.continues.size()) +
                   " continuation marks; expected one per token");
  if (vocab.unknown < 0)
    return failure(src + ": no unknown token; WordPiece needs one for the words its pieces "
                         "cannot spell ([UNK])");
  if (vocab.maxWordChars < 1)
    return failure(src + ": the longest word is " + std::to_string(vocab.maxWordChars) +
                   " characters, expected at least 1");

  std::unique_ptr<WordPieceTokenizer> tok(new WordPieceTokenizer());
  tok->special = vocab.special;
  tok->tokens = vocab.tokens;
  tok->continues = vocab.continues;
  tok->unknown = vocab.unknown;
  tok->normalization = vocab.normalization;
  tok->maxWordChars = vocab.maxWordChars;
  tok->added = AddedTokenMatcher(vocab.added);
  // The first id of a text wins, as in Hugging Face's vocabulary map.
  for (int32_t id = count - 1; id >= 0; --id)
    (vocab.continues[id] ? tok->continuationPieces : tok->firstPieces)[vocab.tokens[id]] = id;
  return tok;
}

void WordPieceTokenizer::encodeWord(const std::string &word, size_t chars,
                                    std::vector<int32_t> &out) const {
  if (static_cast<int64_t>(chars) > maxWordChars) {
    out.push_back(unknown);
    return;
  }
  std::vector<TextChar> characters = splitCharacters(word);
  size_t mark = out.size();
  for (size_t start = 0; start < characters.size();) {
    const auto &pieces = start == 0 ? firstPieces : continuationPieces;
    int32_t found = -1;
    size_t end = characters.size();
    for (; end > start; --end) {
      size_t from = characters[start].offset;
      size_t to = end < characters.size() ? characters[end].offset : word.size();
      auto it = pieces.find(word.substr(from, to - from));
      if (it != pieces.end()) {
        found = it->second;
        break;
      }
    }
    if (found < 0) {
      // A word its pieces cannot spell is unknown as a whole.
      out.resize(mark);
      out.push_back(unknown);
      return;
    }
    out.push_back(found);
    start = end;
  }
}

void WordPieceTokenizer::encodeText(llvm::StringRef text, std::vector<int32_t> &out) const {
  std::string normalized = foldCase(cleanText(text, normalization), normalization);
  std::string word;
  size_t chars = 0;
  auto flush = [&]() {
    if (!word.empty())
      encodeWord(word, chars, out);
    word.clear();
    chars = 0;
  };
  for (const TextChar &ch : splitCharacters(normalized)) {
    llvm::StringRef bytes(normalized.data() + ch.offset, ch.size);
    if (ch.cls == CharClass::Whitespace) {
      flush();
    } else if (isBertPunctuation(ch.codepoint)) {
      flush();
      word = bytes.str();
      chars = 1;
      flush();
    } else {
      word += bytes.str();
      ++chars;
    }
  }
  flush();
}

std::vector<int32_t> WordPieceTokenizer::encode(const std::string &text, bool addBos) const {
  std::vector<int32_t> out;
  if (addBos && special.bos >= 0)
    out.push_back(special.bos);
  for (const TextFragment &fragment : added.split(text)) {
    if (fragment.token >= 0)
      out.push_back(fragment.token);
    else
      encodeText(fragment.text, out);
  }
  if (addBos && special.addEos && special.eos >= 0)
    out.push_back(special.eos);
  return out;
}

std::string WordPieceTokenizer::decode(int32_t previous, int32_t token) const {
  if (token < 0 || token >= vocabSize())
    return "";
  // BOS ([CLS]) itself is left out by callers: the word after it starts the
  // text.
  bool startsText = previous < 0 || previous == special.bos;
  if (continues[token] || startsText)
    return tokens[token];
  return " " + tokens[token];
}
