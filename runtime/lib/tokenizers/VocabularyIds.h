//===- VocabularyIds.h - Ids a tokenizer vocabulary names -------*- C++ -*-===//
//
// Byte-level BPE and SentencePiece vocabularies both name token ids beside
// their token list (BOS, EOS, unknown, added tokens); both tokenizers index
// their tables with them, so they are checked once, here, before either
// builds on them.
//
//===----------------------------------------------------------------------===//
#ifndef TFM_RUNTIME_LIB_VOCABULARYIDS_H
#define TFM_RUNTIME_LIB_VOCABULARYIDS_H

#include "tfm/runtime/AddedTokens.h"
#include "tfm/runtime/Tokenizer.h"

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"

#include <cstdint>
#include <string>

namespace tfm::rt {

/// Refuses an empty vocabulary of `count` entries or one past int32 ids, a
/// BOS, EOS or `unknown` id (-1: none) at or past its end, and an added
/// token whose id is outside it. Errors name `source` and count the
/// vocabulary in `entries` ("tokens", "pieces").
llvm::Error checkVocabularyIds(const std::string &source, size_t count, llvm::StringRef entries,
                               const SpecialTokens &special, int32_t unknown,
                               llvm::ArrayRef<AddedToken> added);

} // namespace tfm::rt

#endif // TFM_RUNTIME_LIB_VOCABULARYIDS_H
