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

/// Hugging Face tokenizer.json with a BPE model: model.vocab, model.merges
/// ("a b" strings or ["a", "b"] pairs), added_tokens, and a post_processor
/// that may put BOS first. Byte-level (GPT-2's, Llama 3's, Qwen's): a
/// normalizer of none or a Unicode normal form, a ByteLevel pre_tokenizer or
/// a Split by a known regex before it, ignore_merges. SentencePiece's
/// spelling (Gemma's): byte_fallback with a normalizer replacing spaces by
/// "▁".
llvm::Expected<ByteLevelBpeVocabulary> readTokenizerJson(const std::string &path);

/// The special-token settings Hugging Face keeps beside the tokenizer:
/// tokenizer_config.json over special_tokens_map.json.
struct HfTokenizerSettings {
  std::string source; // the files read, for messages
  std::optional<std::string> bosToken, eosToken; // token texts
  std::optional<bool> addBosToken;
  std::vector<AddedToken> addedTokens; // tokenizer_config.json's added_tokens_decoder
};

/// Reads whichever of the two files exist in `dir` (none: empty settings).
llvm::Expected<HfTokenizerSettings> readHfTokenizerSettings(const std::string &dir);

/// The vocabulary a GGUF file embeds (tokenizer.ggml.*): model "gpt2" is
/// byte-level BPE, "llama" SentencePiece; exactly one member is set. BOS and
/// EOS are -1 where the file has no key for them.
struct GgufVocabulary {
  std::optional<ByteLevelBpeVocabulary> byteLevel;
  std::optional<SentencePieceVocabulary> sentencePiece;
};
llvm::Expected<GgufVocabulary> readGgufVocabulary(const GgufFile &file);

} // namespace tfm::rt

#endif // TFM_RUNTIME_TOKENIZERFILES_H
