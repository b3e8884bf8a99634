/*===- tfm.h - tfmc's runtime as a C library (libtfm.so) ---------*- C -*-===*\
 *
 * Load a model tfmc compiled (or a .gguf / Hugging Face folder, compiled on
 * first use and cached), tokenize, run sequences, sample, detokenize:
 *
 *   tfm_lm *lm;
 *   tfm_load_params params = tfm_load_default_params();
 *   if (tfm_lm_load("model.gguf", &params, &lm) != 0)
 *     fprintf(stderr, "%s\n", tfm_last_error());
 *
 * examples/generate.c is a whole program. Build with
 * `pkg-config --cflags --libs tfm` or CMake's find_package(tfm)
 * (target tfm::tfm).
 *
 * Conventions: a function returning int gives 0 on success and -1 on
 * failure, and tfm_last_error() then says why (per thread, until the next
 * failure). Handles are opaque; each tfm_*_new / tfm_lm_load has its
 * tfm_*_free, which accepts NULL. One handle is used by one thread at a
 * time; sequences of one model share its threads and must not run at the
 * same time.
 *
 * The interface is versioned by TFM_API_VERSION: a program built against
 * one version checks tfm_api_version() at run time. Structures passed by
 * pointer are filled from their tfm_*_default_params() so that fields
 * added later take their defaults.
\*===----------------------------------------------------------------------===*/
#ifndef TFM_H
#define TFM_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define TFM_API_VERSION 1

/* The version this libtfm.so implements (TFM_API_VERSION it was built
 * with), and "tfmc X.Y.Z (commit)". */
int tfm_api_version(void);
const char *tfm_version(void);

/* Why the last failing call of this thread failed; "" before any. */
const char *tfm_last_error(void);

/* --- Models ------------------------------------------------------------- */

/* A compiled model with its weights bound and its tokenizer loaded. */
typedef struct tfm_lm tfm_lm;

typedef struct tfm_load_params {
  const char *weights;     /* weight file; NULL: the model's own (GGUF, HF folder) */
  const char *tokenizer;   /* tokenizer file; NULL: the model's own */
  const char *target;      /* compiling a download: tfmc --target; NULL: "host" */
  const char *schedule;    /* tfmc --schedule; NULL: its per-kernel table */
  const char *activations; /* tfmc --activations; NULL: f32 */
  const char *cache_dir;   /* compiled downloads; NULL: $TFM_CACHE_DIR, ~/.cache/tfmc */
  const char *compiler;    /* tfmc; NULL: $TFMC, else the one installed with libtfm */
  int threads;             /* threads the kernels use; 0: every core */
  int device;              /* a GPU library's device; -1: the driver's first */
  int no_mmap;             /* 1: read the weights into memory instead of mapping them */
} tfm_load_params;

tfm_load_params tfm_load_default_params(void);

/* `path`: a folder tfmc wrote (then `weights` is needed, and `tokenizer`
 * unless the weights are a GGUF), a .gguf file, or a Hugging Face folder
 * (config.json, safetensors, tokenizer files). */
int tfm_lm_load(const char *path, const tfm_load_params *params, tfm_lm **lm);
void tfm_lm_free(tfm_lm *lm);

const char *tfm_lm_name(const tfm_lm *lm);   /* the config's name */
const char *tfm_lm_target(const tfm_lm *lm); /* the Halide target it was compiled for */
int64_t tfm_lm_vocab_size(const tfm_lm *lm);
int64_t tfm_lm_context_length(const tfm_lm *lm); /* compiled; positions per sequence */
int64_t tfm_lm_layers(const tfm_lm *lm);
int64_t tfm_lm_hidden_size(const tfm_lm *lm);
/* 1 for an encoder (BERT: tfm_seq_encode gives embeddings), 0 for a decoder. */
int tfm_lm_is_encoder(const tfm_lm *lm);
/* The manifest tfmc wrote (config, tensors, target), as JSON. */
const char *tfm_lm_manifest_json(const tfm_lm *lm);
int tfm_lm_set_threads(tfm_lm *lm, int threads);

/* --- Tokens ------------------------------------------------------------- */

int32_t tfm_lm_bos(const tfm_lm *lm); /* -1: the vocabulary has none */
int32_t tfm_lm_eos(const tfm_lm *lm); /* -1: none */
/* Whether a prompt for generation starts with BOS (Llama yes, GPT-2 no). */
int tfm_lm_adds_bos(const tfm_lm *lm);

/* Writes the ids of `length` bytes of `text` to `ids` (at most `capacity`),
 * BOS first when `add_bos` and the vocabulary has one. Returns how many ids
 * the text has (more than `capacity`: call again with room for them all),
 * or -1. */
int64_t tfm_lm_tokenize(const tfm_lm *lm, const char *text, size_t length, int add_bos,
                        int32_t *ids, int64_t capacity);

/* The bytes to print for `token` following `previous` (-1 at the start of a
 * text: some tokenizers print a token differently there). Writes at most
 * `capacity` bytes, no terminating zero; returns the length (more than
 * `capacity`: call again), or -1. Concatenating the pieces of a
 * tokenized text, BOS left out, gives back the text. */
int64_t tfm_lm_token_text(const tfm_lm *lm, int32_t previous, int32_t token, char *text,
                          size_t capacity);

/* --- Sequences ---------------------------------------------------------- */

/* One sequence: its own KV cache, from position 0. */
typedef struct tfm_seq tfm_seq;

int tfm_seq_new(tfm_lm *lm, tfm_seq **seq);
void tfm_seq_free(tfm_seq *seq);

/* Runs `count` tokens from the current position; tfm_seq_logits then
 * holds the last one's. Refused past the context. */
int tfm_seq_prefill(tfm_seq *seq, const int32_t *ids, int64_t count);
/* Runs one token at the current position. */
int tfm_seq_decode(tfm_seq *seq, int32_t id);
/* Like prefill, writing every token's logits to `logits`,
 * [count][vocab_size] row-major. */
int tfm_seq_score(tfm_seq *seq, const int32_t *ids, int64_t count, float *logits);
/* An encoder's (BERT's; tfm_lm_is_encoder) one call: `count` tokens, one
 * whole text, every token attending to every other; writes each token's
 * last hidden state to `hidden`, [count][hidden_size] row-major. A decoder
 * refuses it, as an encoder refuses prefill, decode and score. */
int tfm_seq_encode(tfm_seq *seq, const int32_t *ids, int64_t count, float *hidden);
/* The last token's logits, vocab_size of them; valid until the next call. */
const float *tfm_seq_logits(const tfm_seq *seq);
int64_t tfm_seq_position(const tfm_seq *seq); /* the next position to be written */
void tfm_seq_reset(tfm_seq *seq);             /* back to position 0, cache emptied */

/* --- Sampling ----------------------------------------------------------- */

typedef struct tfm_sampler tfm_sampler;

typedef struct tfm_sampler_params {
  float temperature;    /* 0: greedy; default 0.8 */
  int64_t top_k;        /* 0: all (the default) */
  float top_p;          /* 1: all; default 0.95 */
  float min_p;          /* 0: none (the default) */
  float repeat_penalty; /* 1: none (the default); > 1 makes recent tokens less likely */
  int64_t repeat_last_n; /* how many recent tokens the penalty sees; default 64 */
  uint64_t seed;        /* the same seed gives the same tokens; default 42 */
} tfm_sampler_params;

tfm_sampler_params tfm_sampler_default_params(void);
int tfm_sampler_new(const tfm_sampler_params *params, tfm_sampler **sampler);
void tfm_sampler_free(tfm_sampler *sampler);
/* The next token from `count` logits, or -1. The token joins the recent
 * tokens the repeat penalty sees. */
int32_t tfm_sampler_sample(tfm_sampler *sampler, const float *logits, int64_t count);
/* Adds a token the sampler did not choose (the prompt's) to the recent
 * tokens. */
void tfm_sampler_accept(tfm_sampler *sampler, int32_t id);

#ifdef __cplusplus
}
#endif

#endif /* TFM_H */
