//===- Perplexity.h - Perplexity of a text, as llama-perplexity -*- C++ -*-===//
//
// The measure other engines report, computed the same way so the numbers
// compare: the tokens are cut into chunks of the context size; each chunk
// runs from position 0 (its first token replaced by BOS when the tokenizer
// adds one) and only its second half is scored, so every scored token has
// at least half a context of history. Log-probabilities come from a
// log-softmax over the generated code's logits.
//
//===----------------------------------------------------------------------===//
#ifndef TFM_RUNTIME_PERPLEXITY_H
#define TFM_RUNTIME_PERPLEXITY_H

#include "tfm/runtime/Session.h"

#include "llvm/Support/Error.h"
#include "llvm/Support/raw_ostream.h"

#include <cstdint>
#include <vector>

namespace tfm::rt {

struct PerplexityResult {
  double perplexity = 0;
  double error = 0;        // one standard error of the estimate
  int64_t chunks = 0;
  int64_t scoredTokens = 0;
};

/// Scores `tokens` in chunks of `chunkSize` (bosId < 0: no BOS replacement),
/// printing the running estimate after each chunk ("[1]12.3456,[2]...") to
/// `progress`. Needs at least 2 * chunkSize tokens, as llama-perplexity does.
llvm::Expected<PerplexityResult> perplexity(Session &session, const std::vector<int32_t> &tokens,
                                            int64_t chunkSize, int32_t bosId,
                                            llvm::raw_ostream &progress);

} // namespace tfm::rt

#endif // TFM_RUNTIME_PERPLEXITY_H
