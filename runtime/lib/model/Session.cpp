//===- Session.cpp - KV cache, arena and positions for one sequence -------===//
#include "tfm/runtime/Session.h"
#include "tfm/common/Failure.h"

#include "tfm/runtime/HugePages.h"

#include "llvm/Support/raw_ostream.h"

#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <string>

using namespace tfm::rt;

namespace {

/// At least one byte, so a model that needs no scratch still gets a pointer.
size_t roundUp64(uint64_t bytes) { return static_cast<size_t>((bytes + 64) / 64 * 64); }

/// A buffer the generated code writes from its first call: in huge pages
/// where the system grants them, and every page touched now. A transposed
/// key cache writes a position of every column at once, the columns a
/// context's row apart: with 4 KiB pages each column is a page of its own,
/// so a first prefill faulted in a page per column and layer (11 of GPT-2
/// Small's 13.5 ms per layer at 32 tokens), and every decode step missed
/// the TLB once per column. llama.cpp too clears its KV cache when it
/// creates a context. Zeroed (the arena needs it not, but that is how its
/// pages get touched).
void *allocateTouched(uint64_t bytes) { return allocateInHugePages(roundUp64(bytes)); }

/// Physical memory: the cache and arena are refused up front when larger,
/// rather than allocated lazily and killed by the OOM killer mid-prompt.
uint64_t physicalMemoryBytes() {
  long pages = sysconf(_SC_PHYS_PAGES), pageSize = sysconf(_SC_PAGE_SIZE);
  return pages > 0 && pageSize > 0 ? static_cast<uint64_t>(pages) * pageSize : UINT64_MAX;
}

std::string gib(uint64_t bytes) {
  char text[32];
  std::snprintf(text, sizeof text, "%.2f GiB", bytes / double(1ull << 30));
  return text;
}

} // namespace

char NonFiniteLogitError::ID = 0;

void NonFiniteLogitError::log(llvm::raw_ostream &os) const {
  os << "model " << entry << " produced a non-finite logit at position " << position;
}

Session::Session(const tfm_model &model, std::vector<const void *> weights)
    : model(model), weights(std::move(weights)),
      kvCache(allocateTouched(model.kv_cache_bytes)),
      arena(allocateTouched(model.arena_bytes)),
      logits_(model.vocab_size) {}

llvm::Expected<std::unique_ptr<Session>>
Session::create(const tfm_model &model, std::vector<const void *> weights) {
  uint64_t needed = model.kv_cache_bytes + model.arena_bytes, available = physicalMemoryBytes();
  if (needed > available)
    return failure(std::string("model ") + model.name + " needs " + gib(needed) +
                   " for its KV cache (" + gib(model.kv_cache_bytes) + ") and arena (" +
                   gib(model.arena_bytes) + "); this machine has " + gib(available) +
                   " of memory. Compile it with a shorter context (max_position_embeddings)");
  std::unique_ptr<Session> s(new Session(model, std::move(weights)));
  if (!s->kvCache || !s->arena)
    return failure("cannot allocate the KV cache (" + std::to_string(model.kv_cache_bytes) +
                   " bytes) and arena (" + std::to_string(model.arena_bytes) + " bytes)");
  return std::move(s);
}

Session::~Session() {
  if (kvCache && model.release_sequence)
    model.release_sequence(kvCache.get());
}

void Session::reset() {
  std::memset(kvCache.get(), 0, roundUp64(model.kv_cache_bytes));
  pos = 0;
}

llvm::Error Session::checkTokens(const char *entry, const std::vector<int32_t> &tokens,
                                 bool encoding) const {
  if (encoding && !model.encode)
    return failure(std::string("model ") + model.name +
                   " is a decoder: it has no encode entry (--embeddings needs an encoder such "
                   "as BERT, --source an encoder-decoder such as T5), only prefill, decode and "
                   "score");
  if (!encoding && isEncoder())
    return failure(std::string("model ") + model.name + " is an encoder (BERT's kind): it has no " +
                   entry + ", only encode (tfm-run --embeddings)");
  if (!encoding && hasSource() && !sourceEncoded)
    return failure(std::string("model ") + model.name + " is an encoder-decoder: its " + entry +
                   " needs a source encoded first (tfm-run --source TEXT)");
  if (encoding && tokens.size() > model.prefill_chunk)
    return failure("encode of " + std::to_string(tokens.size()) + " tokens: model " +
                   model.name + " encodes at most " + std::to_string(model.prefill_chunk) +
                   " tokens, one text in one call" + kLongerContext);
  if (tokens.empty())
    return failure(std::string(entry) + " needs at least one token");
  if (pos + static_cast<int64_t>(tokens.size()) > model.context_length)
    return failure(std::string(entry) + " of " + std::to_string(tokens.size()) +
                   " tokens at position " + std::to_string(pos) + " runs past the context of " +
                   std::to_string(model.context_length) + kLongerContext);
  for (int32_t t : tokens)
    if (t < 0 || t >= static_cast<int64_t>(model.vocab_size))
      return failure("token id " + std::to_string(t) + " is outside the vocabulary (0.." +
                     std::to_string(model.vocab_size - 1) + ")");
  return llvm::Error::success();
}

llvm::Error Session::checkCall(const char *entry, int status, int64_t nTokens,
                               const float *out, size_t count, size_t width) {
  if (status == TFM_ERR_CONTEXT)
    return failure(std::string("model ") + entry + " refused positions " +
                   std::to_string(pos) + ".." + std::to_string(pos + nTokens - 1) +
                   ": past the context of " + std::to_string(model.context_length));
  if (status != 0) {
    std::string why = model.last_error ? model.last_error() : "";
    while (!why.empty() && why.back() == '\n')
      why.pop_back();
    return failure(std::string("model ") + entry + " failed with code " +
                   std::to_string(status) + " at position " + std::to_string(pos) +
                   (why.empty() ? "" : ": " + why));
  }
  for (size_t i = 0; i < count; ++i)
    if (!std::isfinite(out[i]))
      return llvm::make_error<NonFiniteLogitError>(entry, pos + static_cast<int64_t>(i / width));
  pos += nTokens;
  return llvm::Error::success();
}

llvm::Error Session::prefill(const std::vector<int32_t> &tokens) {
  if (llvm::Error e = checkTokens("prefill", tokens))
    return e;
  int status = model.prefill(weights.data(), kvCache.get(), arena.get(), tokens.data(),
                             static_cast<int32_t>(tokens.size()),
                             static_cast<int32_t>(pos), logits_.data());
  return checkCall("prefill", status, static_cast<int64_t>(tokens.size()), logits_.data(),
                   logits_.size(), model.vocab_size);
}

llvm::Expected<std::vector<float>> Session::score(const std::vector<int32_t> &tokens) {
  if (llvm::Error e = checkTokens("score", tokens))
    return std::move(e);
  std::vector<float> all(tokens.size() * model.vocab_size);
  int status = model.score(weights.data(), kvCache.get(), arena.get(), tokens.data(),
                           static_cast<int32_t>(tokens.size()), static_cast<int32_t>(pos),
                           all.data());
  if (llvm::Error e = checkCall("score", status, static_cast<int64_t>(tokens.size()),
                                all.data(), all.size(), model.vocab_size))
    return std::move(e);
  std::copy(all.end() - model.vocab_size, all.end(), logits_.begin());
  return all;
}

llvm::Error Session::decode(int32_t token) {
  if (llvm::Error e = checkTokens("decode", {token}))
    return e;
  int status = model.decode(weights.data(), kvCache.get(), arena.get(), token,
                            static_cast<int32_t>(pos), logits_.data());
  return checkCall("decode", status, 1, logits_.data(), logits_.size(), model.vocab_size);
}

llvm::Expected<std::vector<float>> Session::encode(const std::vector<int32_t> &tokens) {
  reset(); // one text a call; an encoder-decoder's decoder starts again
  sourceEncoded = false;
  if (llvm::Error e = checkTokens("encode", tokens, /*encoding=*/true))
    return std::move(e);
  std::vector<float> hidden(tokens.size() * model.hidden_size);
  int status = model.encode(weights.data(), kvCache.get(), arena.get(), tokens.data(),
                            static_cast<int32_t>(tokens.size()), hidden.data());
  if (llvm::Error e = checkCall("encode", status, static_cast<int64_t>(tokens.size()),
                                hidden.data(), hidden.size(), model.hidden_size))
    return std::move(e);
  pos = 0; // the source's positions are its own; the decoder's start at 0
  sourceEncoded = true;
  return hidden;
}
