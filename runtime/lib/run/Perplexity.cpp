//===- Perplexity.cpp - Perplexity of a text, as llama-perplexity ---------===//
#include "tfm/runtime/Perplexity.h"
#include "tfm/common/Failure.h"

#include "llvm/Support/Format.h"

#include <cmath>

using namespace tfm::rt;

namespace {

/// -log softmax(logits)[target], in double so long vocabularies lose nothing.
double negativeLogProbability(const float *logits, int64_t vocab, int32_t target) {
  float largest = logits[0];
  for (int64_t i = 1; i < vocab; ++i)
    largest = std::max(largest, logits[i]);
  double sum = 0;
  for (int64_t i = 0; i < vocab; ++i)
    sum += std::exp(static_cast<double>(logits[i]) - largest);
  return std::log(sum) - (static_cast<double>(logits[target]) - largest);
}

} // namespace

llvm::Expected<PerplexityResult> tfm::rt::perplexity(Session &session,
                                                     const std::vector<int32_t> &tokens,
                                                     int64_t chunkSize, int32_t bosId,
                                                     llvm::raw_ostream &progress) {
  const int64_t total = static_cast<int64_t>(tokens.size());
  // The second half of each chunk is scored, its last token predicting
  // nothing: a chunk of 2 would score none (and print -nan).
  if (chunkSize < 3)
    return failure("perplexity: context size (-c) " + std::to_string(chunkSize) +
                                       " scores no token; expected at least 3");
  if (total < 2 * chunkSize)
    return failure("perplexity: the text is " + std::to_string(total) +
                                       " tokens; at least " + std::to_string(2 * chunkSize) +
                                       " (twice the context size " + std::to_string(chunkSize) +
                                       ") are needed");
  const int64_t vocab = session.vocabSize();
  const int64_t firstScored = chunkSize / 2;
  PerplexityResult result;
  double sum = 0, sumSquares = 0;
  for (int64_t start = 0; start + chunkSize <= total; start += chunkSize) {
    std::vector<int32_t> chunk(tokens.begin() + start, tokens.begin() + start + chunkSize);
    if (bosId >= 0)
      chunk[0] = bosId;
    session.reset();
    llvm::Expected<std::vector<float>> logits = session.score(chunk);
    if (!logits)
      return logits.takeError();
    for (int64_t j = firstScored; j < chunkSize - 1; ++j) {
      double nll = negativeLogProbability(logits->data() + j * vocab, vocab, tokens[start + j + 1]);
      sum += nll;
      sumSquares += nll * nll;
      ++result.scoredTokens;
    }
    ++result.chunks;
    progress << "[" << result.chunks << "]"
             << llvm::format("%.4f", std::exp(sum / result.scoredTokens)) << ",";
    progress.flush();
  }
  progress << "\n";
  const double mean = sum / result.scoredTokens;
  result.perplexity = std::exp(mean);
  const double variance = sumSquares / result.scoredTokens - mean * mean;
  if (variance > 0 && result.scoredTokens > 1)
    result.error = std::sqrt(variance / (result.scoredTokens - 1)) * result.perplexity;
  return result;
}
