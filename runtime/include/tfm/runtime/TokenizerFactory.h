//===- TokenizerFactory.h - The tokenizer of a file or folder --*- C++ -*-===//
//
// One entry point for every tokenizer format. Special tokens come from the
// files: the tokenizer's own (SentencePiece ids, GGUF keys, tokenizer.json's
// post-processor), overridden by Hugging Face's tokenizer_config.json and
// special_tokens_map.json when they sit beside a Hugging Face file. Only where
// the files name no BOS or EOS do the model config's bos/eos ids apply.
// BOS and EOS of a byte-level BPE vocabulary are special added tokens: their
// text in a prompt (e.g. "<|endoftext|>") becomes that one token, as in
// Hugging Face tokenizers.
//
//===----------------------------------------------------------------------===//
#ifndef TFM_RUNTIME_TOKENIZERFACTORY_H
#define TFM_RUNTIME_TOKENIZERFACTORY_H

#include "tfm/common/ModelSpec.h"
#include "tfm/runtime/Tokenizer.h"

#include "llvm/Support/Error.h"

#include <memory>
#include <string>

namespace tfm::rt {

/// The tokenizer in `path`, by the file's name and first bytes:
///   a GGUF file (magic "GGUF")        the tokenizer it embeds
///   tokenizer.json                    Hugging Face BPE or WordPiece
///   vocab.json, encoder.json (*.json) byte-level BPE with merges.txt, or
///                                     vocab.bpe, beside it
///   vocab.txt                         BERT's WordPiece
///   *.model                           SentencePiece
///   *.bin                             llama2.c
/// Refuses a tokenizer with more tokens than config.vocabSize (a llama2.c
/// one must match it exactly, as that format has no other check).
llvm::Expected<std::unique_ptr<Tokenizer>> loadTokenizer(const std::string &path,
                                                         const ModelSpec &config);

/// The tokenizer in `path` without a model, as llama-tokenize uses one: no
/// vocabulary check, BOS and EOS from the files only (llama2.c's 1 and 2 for
/// a tokenizer.bin, which names none).
llvm::Expected<std::unique_ptr<Tokenizer>> loadStandaloneTokenizer(const std::string &path);

/// The tokenizer file of a Hugging Face model folder: tokenizer.json, else
/// vocab.json (with merges.txt), else vocab.txt, else tokenizer.model. When
/// a folder has both tokenizer.json and tokenizer.model, the model is
/// SentencePiece's and tokenizer.json a conversion of it: tokenizer.model
/// is taken.
llvm::Expected<std::string> findTokenizerFile(const std::string &dir);

} // namespace tfm::rt

#endif // TFM_RUNTIME_TOKENIZERFACTORY_H
