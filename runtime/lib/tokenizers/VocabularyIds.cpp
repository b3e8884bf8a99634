//===- VocabularyIds.cpp - Check the ids a vocabulary names ---------------===//
#include "VocabularyIds.h"

#include "tfm/common/Failure.h"
#include "tfm/common/UntrustedText.h"

#include <utility>

using namespace tfm::rt;

namespace {

} // namespace

llvm::Error tfm::rt::checkVocabularyIds(const std::string &source, int32_t count,
                                        llvm::StringRef entries, const SpecialTokens &special,
                                        int32_t unknown, llvm::ArrayRef<AddedToken> added) {
  std::string vocabulary = "the vocabulary of " + std::to_string(count) + " " + entries.str();
  if (count == 0)
    return failure(source + ": the vocabulary is empty");
  for (auto [what, id] : {std::pair<const char *, int32_t>{"BOS", special.bos},
                          {"EOS", special.eos},
                          {"unknown", unknown}})
    if (id >= count)
      return failure(source + ": the " + what + " id " + std::to_string(id) + " is outside " +
                     vocabulary);
  for (const AddedToken &token : added)
    if (token.id < 0 || token.id >= count)
      return failure(source + ": added token " + tfm::quoted(token.text) + " has id " +
                     std::to_string(token.id) + ", outside " + vocabulary);
  return llvm::Error::success();
}
