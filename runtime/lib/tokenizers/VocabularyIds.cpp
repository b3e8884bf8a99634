//===- VocabularyIds.cpp - Check the ids a vocabulary names ---------------===//
#include "VocabularyIds.h"

#include "tfm/common/Failure.h"
#include "tfm/common/UntrustedText.h"

#include <utility>

using namespace tfm::rt;

namespace {

} // namespace

llvm::Error tfm::rt::checkVocabularyIds(const std::string &source, size_t count,
                                        llvm::StringRef entries, const SpecialTokens &special,
                                        int32_t unknown, llvm::ArrayRef<AddedToken> added) {
  std::string vocabulary = "the vocabulary of " + std::to_string(count) + " " + entries.str();
  if (count == 0)
    return failure(source + ": the vocabulary is empty");
  if (count > static_cast<size_t>(INT32_MAX))
    return failure(source + ": " + std::to_string(count) + " " + entries.str() +
                   ", expected at most 2^31-1 (token ids are int32)");
  const auto size = static_cast<int32_t>(count);
  for (auto [what, id] : {std::pair<const char *, int32_t>{"BOS", special.bos},
                          {"EOS", special.eos},
                          {"unknown", unknown}})
    if (id >= size)
      return failure(source + ": the " + what + " id " + std::to_string(id) + " is outside " +
                     vocabulary);
  for (const AddedToken &token : added)
    if (token.id < 0 || token.id >= size)
      return failure(source + ": added token " + tfm::quoted(token.text) + " has id " +
                     std::to_string(token.id) + ", outside " + vocabulary);
  return llvm::Error::success();
}
