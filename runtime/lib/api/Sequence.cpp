//===- Sequence.cpp - tfm.h: one sequence, its cache and its logits -------===//
#include "ApiHandles.h"

#include <cstring>

using namespace tfm::rt;
using tfm::api::fail;
using tfm::api::failNull;
using tfm::api::guarded;

namespace {

/// A call's error, with the weight tensor to blame when the logits were
/// not finite (as tfm-run says it).
int failCall(tfm_seq *seq, llvm::Error error) {
  return fail(seq->lm->model->explain(std::move(error)));
}

int checkIds(const char *function, const int32_t *ids, int64_t count) {
  if (count < 0)
    return fail(std::string(function) + ": count is " + std::to_string(count) +
                ", expected 0 or more");
  if (!ids && count > 0)
    return failNull(function, "ids");
  return 0;
}

} // namespace

extern "C" int tfm_seq_new(tfm_lm *lm, tfm_seq **seq) {
  if (!lm)
    return failNull("tfm_seq_new", "lm");
  if (!seq)
    return failNull("tfm_seq_new", "seq");
  *seq = nullptr;
  return guarded("tfm_seq_new", [&] {
    auto session = lm->model->newSession();
    if (!session)
      return fail(session.takeError());
    *seq = new tfm_seq{lm, std::move(*session)};
    return 0;
  });
}

extern "C" void tfm_seq_free(tfm_seq *seq) { delete seq; }

extern "C" int tfm_seq_prefill(tfm_seq *seq, const int32_t *ids, int64_t count) {
  if (checkIds("tfm_seq_prefill", ids, count))
    return -1;
  return guarded("tfm_seq_prefill", [&] {
    llvm::Error e = seq->session->prefill(std::vector<int32_t>(ids, ids + count));
    return e ? failCall(seq, std::move(e)) : 0;
  });
}

extern "C" int tfm_seq_decode(tfm_seq *seq, int32_t id) {
  return guarded("tfm_seq_decode", [&] {
    llvm::Error e = seq->session->decode(id);
    return e ? failCall(seq, std::move(e)) : 0;
  });
}

extern "C" int tfm_seq_score(tfm_seq *seq, const int32_t *ids, int64_t count, float *logits) {
  if (checkIds("tfm_seq_score", ids, count))
    return -1;
  if (!logits && count > 0)
    return failNull("tfm_seq_score", "logits");
  return guarded("tfm_seq_score", [&] {
    auto rows = seq->session->score(std::vector<int32_t>(ids, ids + count));
    if (!rows)
      return failCall(seq, rows.takeError());
    std::memcpy(logits, rows->data(), rows->size() * sizeof(float));
    return 0;
  });
}

extern "C" int tfm_seq_encode(tfm_seq *seq, const int32_t *ids, int64_t count, float *hidden) {
  if (checkIds("tfm_seq_encode", ids, count))
    return -1;
  if (!hidden && count > 0)
    return failNull("tfm_seq_encode", "hidden");
  return guarded("tfm_seq_encode", [&] {
    auto rows = seq->session->encode(std::vector<int32_t>(ids, ids + count));
    if (!rows)
      return failCall(seq, rows.takeError());
    std::memcpy(hidden, rows->data(), rows->size() * sizeof(float));
    return 0;
  });
}

extern "C" const float *tfm_seq_logits(const tfm_seq *seq) { return seq->session->logits(); }

extern "C" int64_t tfm_seq_position(const tfm_seq *seq) { return seq->session->position(); }

extern "C" void tfm_seq_reset(tfm_seq *seq) { seq->session->reset(); }
