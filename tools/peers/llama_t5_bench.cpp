// llama_t5_bench: llama.cpp's speed on an encoder-decoder (T5) GGUF, which
// llama-bench does not run: each repeat encodes a source of SRC tokens, then
// decodes STEPS single tokens after the decoder start token, as tfm-bench
// times tfmc's. Prints "rates ENCODE_TOK_S DECODE_TOK_S", medians of the
// repeats after an untimed first. Built against ../shared/peers' llama.cpp
// by tools/bench_vs_llamacpp.py; the context's defaults (f16 KV cache).
//
//   llama_t5_bench MODEL.gguf SRC STEPS THREADS REPEATS
#include "llama.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <vector>

namespace {

using Clock = std::chrono::steady_clock;

llama_batch batchOf(const std::vector<llama_token> &ids, int first) {
  llama_batch b = llama_batch_init(static_cast<int>(ids.size()), 0, 1);
  for (size_t i = 0; i < ids.size(); ++i) {
    b.token[i] = ids[i];
    b.pos[i] = first + static_cast<int>(i);
    b.n_seq_id[i] = 1;
    b.seq_id[i][0] = 0;
    b.logits[i] = i + 1 == ids.size();
  }
  b.n_tokens = static_cast<int>(ids.size());
  return b;
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

} // namespace

int main(int argc, char **argv) {
  if (argc != 6) {
    std::fprintf(stderr, "usage: %s MODEL.gguf SRC STEPS THREADS REPEATS\n", argv[0]);
    return 2;
  }
  const int src = std::atoi(argv[2]), steps = std::atoi(argv[3]), threads = std::atoi(argv[4]),
            repeats = std::atoi(argv[5]);
  llama_backend_init();
  llama_model *model = llama_model_load_from_file(argv[1], llama_model_default_params());
  if (!model || !llama_model_has_encoder(model) || !llama_model_has_decoder(model)) {
    std::fprintf(stderr, "%s: not an encoder-decoder GGUF llama.cpp loads\n", argv[1]);
    return 1;
  }
  llama_context_params cp = llama_context_default_params();
  cp.n_ctx = cp.n_batch = cp.n_ubatch = std::max(src, steps + 1);
  cp.n_seq_max = 1;
  cp.n_threads = cp.n_threads_batch = threads;
  llama_context *ctx = llama_init_from_model(model, cp);
  if (!ctx) {
    std::fprintf(stderr, "cannot create a context\n");
    return 1;
  }
  const int vocab = llama_vocab_n_tokens(llama_model_get_vocab(model));
  std::vector<llama_token> source(src);
  for (int i = 0; i < src; ++i)
    source[i] = (7919 * (i + 1)) % vocab;
  llama_token start = llama_model_decoder_start_token(model);
  if (start < 0)
    start = 0;
  std::vector<double> encodeRates, decodeRates;
  for (int run = -1; run < repeats; ++run) {
    llama_memory_clear(llama_get_memory(ctx), true);
    auto t0 = Clock::now();
    llama_batch b = batchOf(source, 0);
    if (llama_encode(ctx, b) != 0) {
      std::fprintf(stderr, "encode failed\n");
      return 1;
    }
    llama_batch_free(b);
    auto t1 = Clock::now();
    llama_token token = start;
    for (int i = 0; i < steps; ++i) {
      b = batchOf({token}, i);
      if (llama_decode(ctx, b) != 0) {
        std::fprintf(stderr, "decode failed at step %d\n", i);
        return 1;
      }
      llama_batch_free(b);
      token = (token + 7919) % vocab;
    }
    auto t2 = Clock::now();
    if (run < 0)
      continue;
    encodeRates.push_back(src / std::chrono::duration<double>(t1 - t0).count());
    decodeRates.push_back(steps / std::chrono::duration<double>(t2 - t1).count());
  }
  std::printf("rates %.6g %.6g\n", median(encodeRates), median(decodeRates));
  llama_free(ctx);
  llama_model_free(model);
  return 0;
}
