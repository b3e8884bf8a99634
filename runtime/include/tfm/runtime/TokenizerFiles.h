//===- TokenizerFiles.h - Read the files tokenizers come in -----*- C++ -*-===//
//
// Each reader turns one file format into the vocabulary struct of the
// tokenizer that uses it, checking what it reads; errors name the file and
// the field. loadTokenizer() (TokenizerFactory.h) picks the reader.
//
//===----------------------------------------------------------------------===//
#ifndef TFM_RUNTIME_TOKENIZERFILES_H
#define TFM_RUNTIME_TOKENIZERFILES_H

#include "tfm/runtime/ByteLevelBpeTokenizer.h"
#include "tfm/runtime/SentencePieceTokenizer.h"
#include "tfm/runtime/WordPieceTokenizer.h"

#include "llvm/Support/Error.h"

#include <optional>
#include <string>

namespace tfm::rt {

class GgufFile;

/// SentencePiece's tokenizer.model (a serialized ModelProto: pieces with
/// score and type, trainer_spec, normalizer_spec). Models other than BPE,
/// and normalization rules other than identity, are refused.
llvm::Expected<SentencePieceVocabulary> readSentencePieceModel(const std::string &path);

/// vocab.json (token -> id) and merges.txt (one "left right" pair per line,
/// after an optional "#version" line); OpenAI's encoder.json and vocab.bpe
/// are the same formats. Neither names special tokens.
llvm::Expected<ByteLevelBpeVocabulary> readVocabAndMerges(const std::string &vocabPath,
                                                          const std::string &mergesPath);

/// A vocabulary as one file gives it: exactly one member is set.
struct FileVocabulary {
  std::optional<ByteLevelBpeVocabulary> byteLevel;
  std::optional<SentencePieceVocabulary> sentencePiece;
  std::optional<WordPieceVocabulary> wordPiece;
};

/// Hugging Face tokenizer.json with a BPE, a WordPiece or a Unigram model.
///
/// BPE: model.vocab, model.merges
/// ("a b" strings or ["a", "b"] pairs), added_tokens, and a post_processor
/// that may put BOS first. Byte-level (GPT-2's, Llama 3's, Qwen's): a
/// normalizer of none or a Unicode normal form, a ByteLevel pre_tokenizer or
/// a Split by a known regex before it, ignore_merges. SentencePiece's
/// spelling (Gemma's): byte_fallback with a normalizer replacing spaces by
/// "▁".
///
/// WordPiece (BERT's): model.vocab, unk_token, continuing_subword_prefix and
/// max_input_chars_per_word; a BertNormalizer or none; BertPreTokenizer; a
/// post_processor putting [CLS] first and [SEP] last (TemplateProcessing or
/// BertProcessing), or none.
///
/// Unigram (T5's, CamemBERT's, XLM-R's, as Hugging Face converts their
/// SentencePiece models): model.vocab's [piece, score] pairs, unk_id and
/// byte_fallback; a normalizer of a Precompiled charsmap, then a right
/// Strip and a Replace of runs of spaces (remove_extra_whitespaces); a
/// Metaspace pre_tokenizer (the dummy prefix), after a WhitespaceSplit or
/// alone. It encodes as the SentencePiece model it came from.
llvm::Expected<FileVocabulary> readTokenizerJson(const std::string &path);

/// BERT's vocab.txt: one token per line, its id the line's index,
/// continuations marked "##". [CLS], [SEP], [UNK], [PAD] and [MASK] are its
/// special tokens, and text is folded to lowercase unless
/// tokenizer_config.json says otherwise (HfTokenizerSettings).
llvm::Expected<WordPieceVocabulary> readWordPieceVocab(const std::string &path);

/// The special-token settings Hugging Face keeps beside the tokenizer:
/// tokenizer_config.json over special_tokens_map.json.
struct HfTokenizerSettings {
  std::string source; // the files read, for messages
  std::optional<std::string> bosToken, eosToken; // token texts
  std::optional<bool> addBosToken;
  std::optional<bool> doLowerCase, stripAccents; // BERT's tokenizers
  std::vector<AddedToken> addedTokens; // tokenizer_config.json's added_tokens_decoder
};

/// Reads whichever of the two files exist in `dir` (none: empty settings).
llvm::Expected<HfTokenizerSettings> readHfTokenizerSettings(const std::string &dir);

/// The vocabulary a GGUF file embeds (tokenizer.ggml.*): model "gpt2" is
/// byte-level BPE, "llama" SentencePiece, "bert" WordPiece. BOS and EOS are
/// -1 where the file has no key for them.
llvm::Expected<FileVocabulary> readGgufVocabulary(const GgufFile &file);

} // namespace tfm::rt

#endif // TFM_RUNTIME_TOKENIZERFILES_H
