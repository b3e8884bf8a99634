/*===- parallel_for.h - The parallel loops of a model library --*- C -*-===//
 *
 * What every generated model library links beside its kernels (see
 * parallel_for.c): Halide's do_par_for on workers that spin between loops.
 *
 *===----------------------------------------------------------------------===*/
#ifndef TFM_MODEL_LIB_PARALLEL_FOR_H
#define TFM_MODEL_LIB_PARALLEL_FOR_H

#include "HalideRuntime.h"

#ifdef __cplusplus
extern "C" {
#endif

/** Halide's do_par_for: task(user_context, i, closure) for i in [min, min +
 * size), on the calling thread and the workers; the first non-zero result,
 * else 0. */
int tfm_parallel_for(void *user_context, halide_task_t task, int min, int size,
                     uint8_t *closure);

/** The threads each loop uses, the caller included (at least 1); starts the
 * workers it needs. */
void tfm_parallel_for_threads(int threads);

#ifdef __cplusplus
}
#endif

#endif /* TFM_MODEL_LIB_PARALLEL_FOR_H */
