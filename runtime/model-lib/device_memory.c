/*===- device_memory.c - A GPU library's memory on its device -------------===//
 *
 * The weights are the model's: one region each, uploaded at the first call
 * and again only when the caller passes other weights. A sequence is the
 * caller's KV cache: its own regions for the cache, the arena, the tokens
 * of a call and their logits, created at its first call (the cache uploaded
 * as the caller holds it, zeros) and freed by tfm_device_release_sequence.
 * Sequences may be created and released from several threads; one sequence
 * is called from one thread at a time, as on the CPU.
 *
 *===----------------------------------------------------------------------===*/
#include "device_memory.h"

#include <dlfcn.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static tfm_device_region *weights;
static const void **weights_from; /* the host pointers each was uploaded from */
static tfm_device_sequence **sequences;
static int n_sequences, sequence_capacity;

/* The device's driver library, as Halide's runtime looks its functions up:
 * its own lookup opens only the unversioned names (libcuda.so,
 * libOpenCL.so), which a machine with only the NVIDIA driver or an OpenCL
 * loader installed lacks. */
static void *driver_symbol(void **lib, const char *const *names, const char *name) {
  for (; !*lib && *names; ++names)
    *lib = dlopen(*names, RTLD_LAZY | RTLD_LOCAL);
  return *lib ? dlsym(*lib, name) : NULL;
}

void *halide_cuda_get_symbol(void *user_context, const char *name) {
  static const char *const names[] = {"libcuda.so.1", "libcuda.so", NULL};
  static void *lib;
  (void)user_context;
  return driver_symbol(&lib, names, name);
}

void *halide_opencl_get_symbol(void *user_context, const char *name) {
  static const char *const names[] = {"libOpenCL.so.1", "libOpenCL.so", NULL};
  static void *lib;
  (void)user_context;
  return driver_symbol(&lib, names, name);
}

/* Reports `what` through Halide's error handler (the library's records it
 * for the caller) and returns `code`. */
static int fail(int code, const char *what) {
  halide_error(NULL, what);
  return code;
}

/* A region of `bytes`, allocated on the device, as elements of the widest
 * of 4, 2 or 1 bytes that divides it (Halide's extents are 32-bit). */
static int region_allocate(const tfm_device_model *m, tfm_device_region *r, uint64_t bytes) {
  if (r->buffer.device)
    return 0;
  int element = bytes % 4 == 0 ? 4 : bytes % 2 == 0 ? 2 : 1;
  uint64_t count = bytes / element;
  if (count == 0)
    count = 1;
  if (count > INT32_MAX)
    return fail(halide_error_code_buffer_extents_too_large,
                "tfm: a weight, cache or arena too large for one device buffer\n");
  r->dim.min = 0;
  r->dim.extent = (int32_t)count;
  r->dim.stride = 1;
  r->buffer.type.code = halide_type_uint;
  r->buffer.type.bits = (uint8_t)(8 * element);
  r->buffer.type.lanes = 1;
  r->buffer.dimensions = 1;
  r->buffer.dim = &r->dim;
  return halide_device_malloc(NULL, &r->buffer, m->interface());
}

/* Copies `bytes` of `host` to the start of region `r`. */
static int region_upload(const tfm_device_model *m, tfm_device_region *r, const void *host,
                         uint64_t bytes) {
  int element = r->buffer.type.bits / 8;
  int32_t extent = r->dim.extent;
  r->dim.extent = (int32_t)(bytes / element);
  r->buffer.host = (uint8_t *)host;
  r->buffer.flags = halide_buffer_flag_host_dirty;
  int rc = r->dim.extent > 0 ? halide_copy_to_device(NULL, &r->buffer, m->interface()) : 0;
  r->buffer.host = NULL;
  r->buffer.flags = 0;
  r->dim.extent = extent;
  return rc;
}

static void region_free(tfm_device_region *r) {
  if (r->buffer.device)
    halide_device_free(NULL, &r->buffer);
}

static int weights_ready(const tfm_device_model *m, const void *const *w) {
  if (!weights) {
    weights = calloc(m->n_weights ? m->n_weights : 1, sizeof *weights);
    weights_from = calloc(m->n_weights ? m->n_weights : 1, sizeof *weights_from);
    if (!weights || !weights_from)
      return fail(halide_error_code_out_of_memory, "tfm: out of host memory\n");
  }
  for (int i = 0; i < m->n_weights; ++i) {
    if (weights_from[i] == w[i] && weights[i].buffer.device)
      continue;
    int rc = region_allocate(m, &weights[i], m->weight_bytes[i]);
    if (!rc)
      rc = region_upload(m, &weights[i], w[i], m->weight_bytes[i]);
    if (rc)
      return rc;
    weights_from[i] = w[i];
  }
  return 0;
}

static void sequence_free(tfm_device_sequence *s) {
  region_free(&s->kv);
  region_free(&s->arena);
  region_free(&s->tokens);
  region_free(&s->logits);
  region_free(&s->staging);
  free(s);
}

static int sequence_create(const tfm_device_model *m, void *kv, tfm_device_sequence **out) {
  tfm_device_sequence *s = calloc(1, sizeof *s);
  if (!s)
    return fail(halide_error_code_out_of_memory, "tfm: out of host memory\n");
  s->kv_host = kv;
  int rc = region_allocate(m, &s->kv, m->kv_bytes);
  if (!rc)
    rc = region_upload(m, &s->kv, kv, m->kv_bytes);
  if (!rc)
    rc = region_allocate(m, &s->arena, m->arena_bytes);
  if (!rc)
    rc = region_allocate(m, &s->tokens, m->tokens_bytes);
  if (!rc)
    rc = region_allocate(m, &s->logits, m->logits_bytes);
  if (!rc && m->staging_slots > 0)
    rc = region_allocate(m, &s->staging, m->staging_slot_bytes * (uint64_t)m->staging_slots);
  if (rc) {
    sequence_free(s);
    return rc;
  }
  *out = s;
  return 0;
}

/* The sequence of host cache `kv`, created when it is new. */
static int sequence_for(const tfm_device_model *m, void *kv, tfm_device_sequence **out) {
  for (int i = 0; i < n_sequences; ++i)
    if (sequences[i]->kv_host == kv) {
      *out = sequences[i];
      return 0;
    }
  if (n_sequences == sequence_capacity) {
    int capacity = sequence_capacity ? 2 * sequence_capacity : 4;
    tfm_device_sequence **grown = realloc(sequences, capacity * sizeof *grown);
    if (!grown)
      return fail(halide_error_code_out_of_memory, "tfm: out of host memory\n");
    sequences = grown;
    sequence_capacity = capacity;
  }
  int rc = sequence_create(m, kv, out);
  if (!rc)
    sequences[n_sequences++] = *out;
  return rc;
}

int tfm_device_enter(const tfm_device_model *m, const void *const *w, void *kv,
                     const int32_t *tokens, int32_t n, tfm_device_sequence **sequence) {
  pthread_mutex_lock(&lock);
  int rc = weights_ready(m, w);
  if (!rc)
    rc = sequence_for(m, kv, sequence);
  pthread_mutex_unlock(&lock);
  if (rc)
    return rc;
  return region_upload(m, &(*sequence)->tokens, tokens, (uint64_t)n * sizeof *tokens);
}

const halide_buffer_t *tfm_device_weight(int i) { return &weights[i].buffer; }

int tfm_device_view(halide_buffer_t *view, const halide_buffer_t *region, int64_t offset) {
  /* halide_device_crop gives a buffer the device memory of another at the
   * offset of its mins from the other's: a parent shaped as the view whose
   * mins stand `offset` bytes before the view's, along a dimension whose
   * stride divides it. */
  halide_dimension_t dims[4];
  int rank = view->dimensions, element = (view->type.bits + 7) / 8, along = -1;
  if (rank > 4 || offset % element != 0)
    return fail(halide_error_code_device_crop_unsupported,
                "tfm: a kernel buffer's offset is not a whole number of its elements\n");
  int64_t elements = offset / element;
  memcpy(dims, view->dim, rank * sizeof *dims);
  for (int i = 0; i < rank; ++i)
    if (dims[i].stride > 0 && elements % dims[i].stride == 0 &&
        (along < 0 || dims[i].stride > dims[along].stride))
      along = i;
  if (along < 0)
    return fail(halide_error_code_device_crop_unsupported,
                "tfm: no stride of a kernel buffer divides its offset\n");
  int64_t min = (int64_t)dims[along].min - elements / dims[along].stride;
  if (min < INT32_MIN)
    return fail(halide_error_code_device_crop_unsupported,
                "tfm: a kernel buffer's offset is past 32-bit coordinates\n");
  dims[along].min = (int32_t)min;
  halide_buffer_t parent = *view;
  parent.dim = dims;
  parent.device = region->device;
  parent.device_interface = region->device_interface;
  parent.flags = 0;
  return halide_device_crop(NULL, &parent, view);
}

static int in_place(const tfm_device_model *m, int64_t offset) {
  return (uint64_t)offset % m->view_alignment == 0;
}

int tfm_device_cache_write_view(const tfm_device_model *m, tfm_device_sequence *s,
                                halide_buffer_t *view, int64_t offset, int slot) {
  if (in_place(m, offset))
    return tfm_device_view(view, &s->kv.buffer, offset);
  if (slot < 0 || slot >= m->staging_slots)
    return fail(halide_error_code_generic_error, "tfm: a cache write past the staging slots\n");
  return tfm_device_view(view, &s->staging.buffer, (int64_t)m->staging_slot_bytes * slot);
}

int tfm_device_cache_write_done(const tfm_device_model *m, tfm_device_sequence *s,
                                halide_buffer_t *view, int64_t offset) {
  if (in_place(m, offset))
    return 0;
  /* The rows' place in the cache, shaped as the view: a view that is only
   * copied into, never given to a kernel, may start at any byte. */
  halide_dimension_t dims[4];
  halide_buffer_t rows = *view;
  memcpy(dims, view->dim, view->dimensions * sizeof *dims);
  rows.dim = dims;
  rows.device = 0;
  rows.device_interface = NULL;
  rows.flags = 0;
  int rc = tfm_device_view(&rows, &s->kv.buffer, offset);
  if (!rc)
    rc = halide_buffer_copy(NULL, view, m->interface(), &rows);
  tfm_device_release_views(&rows, 1);
  return rc;
}

void tfm_device_release_views(halide_buffer_t *views, int count) {
  for (int i = 0; i < count; ++i)
    if (views[i].device)
      halide_device_release_crop(NULL, &views[i]);
}

void tfm_device_release_sequence(void *kv) {
  pthread_mutex_lock(&lock);
  for (int i = 0; i < n_sequences; ++i)
    if (sequences[i]->kv_host == kv) {
      sequence_free(sequences[i]);
      sequences[i] = sequences[--n_sequences];
      break;
    }
  pthread_mutex_unlock(&lock);
}

int tfm_device_select(int device) {
  if (device < 0)
    return fail(halide_error_code_generic_error, "tfm: a device index must be 0 or more\n");
  halide_set_gpu_device(device);
  return 0;
}

static double seconds_now(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

int tfm_device_fma_rate(const tfm_device_model *m, int (*probe)(halide_buffer_t *out),
                        int32_t threads, double flops, int repeats, double *gflops) {
  tfm_device_region sums;
  memset(&sums, 0, sizeof sums);
  int rc = region_allocate(m, &sums, (uint64_t)threads * sizeof(float));
  halide_dimension_t dim = {0, threads, 1, 0};
  halide_buffer_t out;
  memset(&out, 0, sizeof out);
  out.type.code = halide_type_float;
  out.type.bits = 32;
  out.type.lanes = 1;
  out.dimensions = 1;
  out.dim = &dim;
  if (!rc)
    rc = tfm_device_view(&out, &sums.buffer, 0);
  double start = 0;
  /* Run -1 is not timed: it loads the kernel onto the device. */
  for (int i = -1; i < repeats && !rc; ++i) {
    if (i == 0) {
      rc = halide_device_sync(NULL, &out);
      start = seconds_now();
    }
    if (!rc)
      rc = probe(&out);
  }
  if (!rc)
    rc = halide_device_sync(NULL, &out);
  double seconds = seconds_now() - start;
  tfm_device_release_views(&out, 1);
  region_free(&sums);
  if (!rc)
    *gflops = seconds > 0 ? flops * repeats / seconds / 1e9 : 0;
  return rc;
}

int tfm_device_copy_rate(const tfm_device_model *m, uint64_t bytes, int repeats, double *gbs) {
  tfm_device_region from, to;
  memset(&from, 0, sizeof from);
  memset(&to, 0, sizeof to);
  int rc = region_allocate(m, &from, bytes);
  if (!rc)
    rc = region_allocate(m, &to, bytes);
  double start = 0;
  /* Copy -1 is not timed: it starts the device's queue and pages in both. */
  for (int i = -1; i < repeats && !rc; ++i) {
    if (i == 0) {
      rc = halide_device_sync(NULL, &to.buffer);
      start = seconds_now();
    }
    if (!rc)
      rc = halide_buffer_copy(NULL, &from.buffer, m->interface(), &to.buffer);
  }
  if (!rc)
    rc = halide_device_sync(NULL, &to.buffer);
  double seconds = seconds_now() - start;
  region_free(&from);
  region_free(&to);
  if (!rc)
    *gbs = seconds > 0 ? 2.0 * (double)bytes * repeats / seconds / 1e9 : 0;
  return rc;
}
