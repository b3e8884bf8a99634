/*===- device_memory.h - A GPU library's memory on its device --*- C -*-===//
 *
 * What a model library for a GPU target links beside its kernels (see
 * device_memory.c). The caller's ABI stays the CPU's (tfm/common/model_abi.h:
 * host pointers to the weights, the KV cache and the arena); behind it the
 * weights are uploaded once, each sequence's KV cache and arena live on the
 * device, and only the tokens of a call go up and its logits come back. The
 * kernels reach that memory through Halide's device interface alone, so one
 * code serves CUDA and OpenCL.
 *
 *===----------------------------------------------------------------------===*/
#ifndef TFM_MODEL_LIB_DEVICE_MEMORY_H
#define TFM_MODEL_LIB_DEVICE_MEMORY_H

#include "HalideRuntime.h"

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/** One allocation on the device, as a one-dimensional buffer of its bytes. */
typedef struct tfm_device_region {
  halide_buffer_t buffer;
  halide_dimension_t dim;
} tfm_device_region;

/** One sequence's memory on the device, found by its host KV cache.
 * `staging` holds the cache rows a kernel writes where they cannot be given
 * to it in place (tfm_device_cache_write_view). */
typedef struct tfm_device_sequence {
  void *kv_host;
  tfm_device_region kv, arena, tokens, logits, staging;
} tfm_device_sequence;

/** What the driver knows of its model's memory. */
typedef struct tfm_device_model {
  const struct halide_device_interface_t *(*interface)(void);
  int n_weights;
  const uint64_t *weight_bytes;
  uint64_t kv_bytes, arena_bytes, tokens_bytes, logits_bytes;
  /* The byte offsets at which a kernel can be given a view of a region:
   * 1 on CUDA; on OpenCL, where a view is a sub-buffer, a multiple of every
   * device's base-address alignment. */
  uint64_t view_alignment;
  /* The staging region: `staging_slots` slots of `staging_slot_bytes` (a
   * call's rows of the widest cache, rounded up to view_alignment), one for
   * each cache output of a kernel. */
  uint64_t staging_slot_bytes;
  int staging_slots;
} tfm_device_model;

/** Before a call: the weights `w` on the device (uploaded when they are
 * new), the sequence of host cache `kv` (created with its cache uploaded
 * when it is new), and the call's `n` tokens uploaded. 0, or Halide's
 * error code. */
int tfm_device_enter(const tfm_device_model *model, const void *const *w, void *kv,
                     const int32_t *tokens, int32_t n, tfm_device_sequence **sequence);

/** Weight `i`'s region (after tfm_device_enter). */
const halide_buffer_t *tfm_device_weight(int i);

/** Gives `view` (a buffer over host memory, not on any device) the device
 * memory of `region` from byte `offset` on, for the kernel it is passed to.
 * 0, or Halide's error code. */
int tfm_device_view(halide_buffer_t *view, const halide_buffer_t *region, int64_t offset);

/** For the cache rows a kernel writes (`view`), from byte `offset` of the
 * sequence's cache: the cache's memory where the offset is a multiple of
 * the model's view_alignment; else staging slot `slot`, which
 * tfm_device_cache_write_done copies into the cache after the kernel.
 * 0, or Halide's error code. */
int tfm_device_cache_write_view(const tfm_device_model *model, tfm_device_sequence *s,
                                halide_buffer_t *view, int64_t offset, int slot);

/** After the kernel: a staged view's rows copied to byte `offset` of the
 * cache (a device-to-device copy, which takes any offset); nothing for a
 * view given in place. 0, or Halide's error code. */
int tfm_device_cache_write_done(const tfm_device_model *model, tfm_device_sequence *s,
                                halide_buffer_t *view, int64_t offset);

/** Releases what tfm_device_view gave `count` views. */
void tfm_device_release_views(halide_buffer_t *views, int count);

/** Frees the device memory of the sequence of host cache `kv`, if any. */
void tfm_device_release_sequence(void *kv);

/** tfm_model.set_device: the device the calls run on once it is opened. */
int tfm_device_select(int device);

/** tfm_model.measure_device_copy on the model's device. */
int tfm_device_copy_rate(const tfm_device_model *model, uint64_t bytes, int repeats, double *gbs);

/** tfm_model.measure_device_fma: the kernel `probe` (the compiler's
 * DeviceFmaProbe), which does `flops` floating-point operations over an
 * output of `threads` floats, timed on the model's device. */
int tfm_device_fma_rate(const tfm_device_model *model, int (*probe)(halide_buffer_t *out),
                        int32_t threads, double flops, int repeats, double *gflops);

#ifdef __cplusplus
}
#endif

#endif /* TFM_MODEL_LIB_DEVICE_MEMORY_H */
