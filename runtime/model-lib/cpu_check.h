/*===- cpu_check.h - Whether this CPU runs a model library -----*- C -*-===//
 *
 * A library is compiled for a target's CPU features, and a target with AMX
 * tiles also needs the process's permission to use them, which Linux gives
 * on request. Any program may call a library (not only tfm-run, which checks
 * both before loading one): the library checks them itself, once, before
 * its first call, and refuses with a message rather than dying of an
 * illegal instruction.
 *
 *===----------------------------------------------------------------------===*/
#ifndef TFM_MODEL_LIB_CPU_CHECK_H
#define TFM_MODEL_LIB_CPU_CHECK_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/** What a library's driver knows of its target. */
typedef struct tfm_cpu_target {
  const char *name;          /* the target string, for messages */
  int feature_words;         /* Halide's feature bits of the target, */
  const uint64_t *features;  /* as halide_can_use_target_features takes them */
  int amx;                   /* whether its kernels use AMX tiles */
} tfm_cpu_target;

/** NULL when this CPU and process run `target`'s code; else why not. The
 * check runs once per process; every later call returns its answer. */
const char *tfm_cpu_unready(const tfm_cpu_target *target);

#ifdef __cplusplus
}
#endif

#endif /* TFM_MODEL_LIB_CPU_CHECK_H */
