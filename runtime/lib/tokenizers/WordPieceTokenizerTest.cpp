//===- WordPieceTokenizerTest.cpp - BERT's WordPiece on made-up vocabularies ===//
//
// Each step of BertNormalizer, BertPreTokenizer and WordPiece on a small
// vocabulary, with what Hugging Face's tokenizers give for the same input
// worked out by hand from its source (normalizers/bert.rs,
// pre_tokenizers/bert.rs, models/wordpiece/mod.rs). The goldens of
// bert-bge (TokenizerParityTest) check a real vocabulary.
//
//===----------------------------------------------------------------------===//
#include "tfm/runtime/WordPieceTokenizer.h"

#include "gtest/gtest.h"

#include "llvm/Support/Error.h"

using namespace tfm::rt;

namespace {

enum : int32_t {
  kPad,
  kUnk,
  kCls,
  kSep,
  kUn,
  kWant,
  kEd,
  kWa,
  kNt,
  kComma,
  kRun,
  kNing,
  kApfel,
  kHan,
  kZi,
  kI
};

/// Pieces as a vocab.txt spells them ("##" marks a continuation).
const char *const kPieces[] = {"[PAD]",
                               "[UNK]",
                               "[CLS]",
                               "[SEP]",
                               "un",
                               "want",
                               "##ed",
                               "wa",
                               "##nt",
                               ",",
                               "run",
                               "##ning",
                               "apfel",
                               "\xE6\xBC\xA2" /* 漢 */,
                               "\xE5\xAD\x97" /* 字 */,
                               "i"};

WordPieceVocabulary vocabulary() {
  WordPieceVocabulary vocab;
  vocab.source = "test vocabulary";
  for (llvm::StringRef piece : kPieces) {
    bool continues = piece.starts_with("##");
    vocab.continues.push_back(continues);
    vocab.tokens.push_back(continues ? piece.drop_front(2).str() : piece.str());
  }
  for (int32_t id : {kPad, kUnk, kCls, kSep})
    vocab.added.push_back({id, kPieces[id], /*special=*/true});
  vocab.unknown = kUnk;
  vocab.special.bos = kCls;
  vocab.special.eos = kSep;
  vocab.special.addBos = vocab.special.addEos = true;
  vocab.maxWordChars = 12;
  return vocab;
}

std::unique_ptr<WordPieceTokenizer> create(const WordPieceVocabulary &vocab) {
  auto tok = WordPieceTokenizer::create(vocab);
  if (!tok) {
    ADD_FAILURE() << llvm::toString(tok.takeError());
    return nullptr;
  }
  return std::move(*tok);
}

std::string decodeAll(const Tokenizer &tok, const std::vector<int32_t> &ids) {
  std::string text;
  for (size_t i = 0; i < ids.size(); ++i)
    text += tok.decode(i == 0 ? -1 : ids[i - 1], ids[i]);
  return text;
}

using Ids = std::vector<int32_t>;

TEST(WordPiece, LongestFirstPieceThenLongestContinuations) {
  auto tok = create(vocabulary());
  ASSERT_TRUE(tok);
  // "wanted": "want" before "wa", then "##ed"; "want" alone is one piece.
  EXPECT_EQ(tok->encode("wanted want", false), (Ids{kWant, kEd, kWant}));
  EXPECT_EQ(tok->encode("running", false), (Ids{kRun, kNing}));
}

TEST(WordPiece, AWordItsPiecesCannotSpellIsUnknownAsAWhole) {
  auto tok = create(vocabulary());
  ASSERT_TRUE(tok);
  // "wantx": "want" matches, "##x" does not: the whole word is [UNK], not
  // "want" followed by [UNK].
  EXPECT_EQ(tok->encode("wantx un", false), (Ids{kUnk, kUn}));
  // Past maxWordChars (12) characters, even a word the pieces spell.
  EXPECT_EQ(tok->encode("wantedntntnt", false), (Ids{kWant, kEd, kNt, kNt, kNt}));
  EXPECT_EQ(tok->encode("wantedntntnted", false), (Ids{kUnk}));
}

TEST(WordPiece, PunctuationAndAsciiSymbolsAreWordsOfTheirOwn) {
  auto tok = create(vocabulary());
  ASSERT_TRUE(tok);
  EXPECT_EQ(tok->encode("un,want", false), (Ids{kUn, kComma, kWant}));
  // "$" is a symbol (Sc), punctuation to BERT as every ASCII symbol is: it
  // splits "un$un" into three words.
  EXPECT_EQ(tok->encode("un$un", false), (Ids{kUn, kUnk, kUn}));
}

TEST(WordPiece, NormalizerFoldsCaseStripsAccentsAndDropsControls) {
  auto tok = create(vocabulary());
  ASSERT_TRUE(tok);
  // NFD splits "Ä" into "A" and U+0308, which is dropped; then lowercase.
  EXPECT_EQ(tok->encode("\xC3\x84PFEL", false), (Ids{kApfel}));
  // U+0130 "İ": accents are stripped before lowercasing, as BertNormalizer
  // does: NFD gives "I" and U+0307, the mark goes, "I" lowercases to "i".
  EXPECT_EQ(tok->encode("\xC4\xB0", false), (Ids{kI}));
  // A control (U+0007), a format character (U+200B, Cf), NUL and an invalid
  // byte vanish without splitting the word; a tab is a space.
  EXPECT_EQ(tok->encode(std::string("wa\x07nt\xE2\x80\x8B\tun\x80", 12), false), (Ids{kWant, kUn}));
  EXPECT_EQ(tok->encode(std::string("wa\0nt", 5), false), (Ids{kWant}));
}

TEST(WordPiece, IdeographsAreWordsOfTheirOwn) {
  auto tok = create(vocabulary());
  ASSERT_TRUE(tok);
  // "漢字" has no piece as a whole; set apart, each character is one.
  EXPECT_EQ(tok->encode("\xE6\xBC\xA2\xE5\xAD\x97un", false), (Ids{kHan, kZi, kUn}));
}

TEST(WordPiece, CasedVocabularyKeepsCaseAndAccents) {
  WordPieceVocabulary vocab = vocabulary();
  vocab.normalization.lowercase = vocab.normalization.stripAccents = false;
  auto tok = create(vocab);
  ASSERT_TRUE(tok);
  EXPECT_EQ(tok->encode("Want want", false), (Ids{kUnk, kWant}));
}

TEST(WordPiece, SequencesAreFramedByClsAndSep) {
  auto tok = create(vocabulary());
  ASSERT_TRUE(tok);
  EXPECT_EQ(tok->encode("want", true), (Ids{kCls, kWant, kSep}));
  EXPECT_EQ(tok->encode("", true), (Ids{kCls, kSep}));
  // Special tokens in the text are cut out first, as added tokens.
  EXPECT_EQ(tok->encode("un[SEP]want", false), (Ids{kUn, kSep, kWant}));
}

TEST(WordPiece, DecodeJoinsContinuationsAndSpacesWords) {
  auto tok = create(vocabulary());
  ASSERT_TRUE(tok);
  Ids ids = tok->encode("Wanted, RUNNING \xF0\x9F\xA6\x99!", true);
  ASSERT_EQ(ids, (Ids{kCls, kWant, kEd, kComma, kRun, kNing, kUnk, kUnk, kSep}));
  // Callers leave BOS ([CLS]) out; special tokens print their text.
  Ids afterCls(ids.begin() + 1, ids.end());
  std::string text = decodeAll(*tok, afterCls);
  EXPECT_EQ(text, "wanted , running [UNK] [UNK] [SEP]");
  EXPECT_EQ(tok->encode(text, false), afterCls);
  // A special token inside the text keeps its place.
  Ids inside = tok->encode("un[CLS]want", false);
  EXPECT_EQ(tok->encode(decodeAll(*tok, inside), false), inside);
}

TEST(WordPiece, RefusesAVocabularyWithoutAnUnknownToken) {
  WordPieceVocabulary vocab = vocabulary();
  vocab.unknown = -1;
  auto tok = WordPieceTokenizer::create(vocab);
  ASSERT_FALSE(tok);
  std::string error = llvm::toString(tok.takeError());
  EXPECT_NE(error.find("test vocabulary"), std::string::npos) << error;
  EXPECT_NE(error.find("no unknown token"), std::string::npos) << error;
}

} // namespace
