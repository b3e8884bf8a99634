/*===- model_abi.h - The C ABI between a generated model and the runtime ---===*
 *
 * Every library tfmc writes exports one function, under two names, that
 * returns a description of the compiled model and its entry points:
 * tfm_model_get(), which a program that dlopens the library looks up, and
 * tfm_model_get_<name>() (<name> the config's name), which a program that
 * links several models' libraries calls for each. The runtime dlopens the
 * library (or, for `tfmc --emit exe`, links it in) and talks to it only
 * through this struct. Before its first call a library checks that this CPU
 * has its target's features, and asks Linux for AMX tiles where its target
 * uses them: a program on another CPU gets TFM_ERR_CPU and a message.
 *
 * Memory is owned by the caller:
 *  - weights: one pointer per manifest tensor, in manifest order, each to the
 *    tensor's data in the manifest's dtype and row-major shape;
 *  - kv_cache: kv_cache_bytes, zero-initialised once per sequence; its layout
 *    is private to the generated code. A call at position 0 starts the
 *    sequence again. Where a sliding window's caches hold only the window
 *    (a CPU library of a model with one), a call may go back no further
 *    than the window of the positions the sequence reached;
 *  - arena: arena_bytes of scratch for activations, 64-byte aligned.
 * The generated code never allocates per call. A library for a GPU target
 * keeps the weights and each sequence's cache and arena on its device
 * (runtime/model-lib/device_memory.h): the host cache is uploaded once.
 *
 * The entry points return 0 on success, or a non-zero error code (a Halide
 * runtime error code, or TFM_ERR_* below).
 *===----------------------------------------------------------------------===*/
#ifndef TFM_COMMON_MODEL_ABI_H
#define TFM_COMMON_MODEL_ABI_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Bumped on any change to tfm_model below. */
#define TFM_ABI_VERSION 6

/* Returned when a call's positions do not fit the context, or need positions
 * a sliding window's caches have dropped (see last_error). */
#define TFM_ERR_CONTEXT (-1000)
/* Returned by a CPU library's set_device and measure_device_* calls. */
#define TFM_ERR_NOT_GPU (-1001)
/* Returned by every call of a library this CPU cannot run: a feature of its
 * target missing, or AMX tiles the process may not use (see last_error). */
#define TFM_ERR_CPU (-1002)

typedef struct tfm_model {
  uint32_t abi_version;      /* TFM_ABI_VERSION of the compiler that wrote it */
  const char *name;          /* config name */
  const char *build_hash;    /* contentHash of the lowered IR, target and ABI version */
  const char *target;        /* Halide target with every CPU feature the code uses,
                                e.g. "x86-64-linux-sse41-avx-f16c-fma-avx2"; the
                                runtime refuses a library whose features the CPU lacks;
                                amx_int8 and amx_bf16 also need the process's AMX
                                tile permission, which the runtime's check asks
                                Linux for */
  const char *manifest_json; /* the same text as manifest.json */
  uint32_t n_weights;        /* number of manifest tensors */
  uint32_t vocab_size;
  uint32_t context_length;
  uint32_t prefill_chunk;    /* prefill processes tokens in chunks of this size;
                                encode takes at most this many tokens a call */
  uint64_t kv_cache_bytes;
  uint64_t arena_bytes;

  /* A decoder's library has prefill, decode and score, and a null encode;
   * an encoder's (BERT's) has encode only, the others null; an
   * encoder-decoder's (T5's) has all four: encode a source, then run the
   * decoder's tokens through prefill, decode and score, whose
   * cross-attention reads the encoded source.
   *
   * Processes tokens[0..n_tokens) at positions pos..pos+n_tokens-1, appending
   * their keys and values to the cache, and writes the logits of the last
   * token to logits[vocab_size]. */
  int (*prefill)(const void *const *weights, void *kv_cache, void *arena,
                 const int32_t *tokens, int32_t n_tokens, int32_t pos,
                 float *logits);

  /* One token at position pos; same contract as prefill with n_tokens = 1,
   * through kernels scheduled for a single row. */
  int (*decode)(const void *const *weights, void *kv_cache, void *arena,
                int32_t token, int32_t pos, float *logits);

  /* Like prefill, but writes the logits of every token: logits[n_tokens *
   * vocab_size], row i for tokens[i]. Used for --logits and --perplexity. */
  int (*score)(const void *const *weights, void *kv_cache, void *arena,
               const int32_t *tokens, int32_t n_tokens, int32_t pos,
               float *logits);

  /* Threads each of the kernels' parallel loops uses, the calling thread
   * included (runtime/model-lib/parallel_for.c). Until it is called:
   * HL_NUM_THREADS, else the CPUs online, as Halide's own pool. */
  void (*set_num_threads)(int n);

  /* The message of the Halide runtime error behind the last non-zero return
   * on this thread ("" if none): a missing GPU driver or device, say. The
   * library records it instead of letting Halide abort the process. */
  const char *(*last_error)(void);

  /* Frees what the library keeps for the sequence of `kv_cache` (a GPU
   * library: its cache, arena and call buffers on the device, into Halide's
   * cache of device allocations, which later sequences reuse); call it
   * before freeing the cache. A CPU library keeps nothing. */
  void (*release_sequence)(void *kv_cache);

  /* A GPU library: the device (0, 1, ... in the driver's order, as Halide's
   * HL_GPU_DEVICE) that its calls run on; call it before the first call, as
   * the device is opened then. 0, or TFM_ERR_NOT_GPU. */
  int (*set_device)(int device);

  /* A GPU library: the device's copy bandwidth, bytes read plus bytes
   * written per second (GB/s), copying `bytes` from one device buffer to
   * another `repeats` times after one untimed copy; tfm-bench's roofline.
   * 0, a Halide error code (see last_error), or TFM_ERR_NOT_GPU. */
  int (*measure_device_copy)(uint64_t bytes, int repeats, double *gbs);

  /* A GPU library: the device's f32 multiply-add peak in GFLOP/s, from a
   * kernel of independent chains of multiply-adds over a million threads
   * run `repeats` times after one untimed run; tfm-bench's roofline.
   * 0, a Halide error code (see last_error), or TFM_ERR_NOT_GPU. */
  int (*measure_device_fma)(int repeats, double *gflops);

  /* The width of encode's hidden states (the config's hidden size). */
  uint32_t hidden_size;

  /* An encoder's entry: tokens[0..n_tokens), one text, at positions
   * 0..n_tokens-1, every token attending to every other, n_tokens at most
   * prefill_chunk; writes each token's last hidden state to
   * hidden[n_tokens * hidden_size], row i for tokens[i]. The cache holds the
   * call's keys and values, and nothing carries over to the next call. An
   * encoder-decoder's encode also computes every decoder layer's
   * cross-attention keys and values of the source into the cache, once,
   * and starts the decoder's sequence again: prefill from position 0
   * follows. Its decoder's entries return TFM_ERR_CONTEXT before a first
   * encode. */
  int (*encode)(const void *const *weights, void *kv_cache, void *arena,
                const int32_t *tokens, int32_t n_tokens, float *hidden);
} tfm_model;

/* The exported function of a generated library (and tfm_model_get_<name>). */
const tfm_model *tfm_model_get(void);
typedef const tfm_model *(*tfm_model_get_fn)(void);

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* TFM_COMMON_MODEL_ABI_H */
