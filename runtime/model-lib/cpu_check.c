/*===- cpu_check.c - Whether this CPU runs a model library ----------------===//
 *
 * The target's features are held to this CPU by Halide's runtime check (the
 * one its multi-target dispatch uses); AMX's permission is asked of Linux
 * as tfm-run asks it (common/lib/AmxTiles.cpp).
 *
 *===----------------------------------------------------------------------===*/
#include "cpu_check.h"

#include "HalideRuntime.h"

#include <pthread.h>
#include <stdio.h>

#if defined(__linux__) && defined(__x86_64__)
#include <sys/syscall.h>
#include <unistd.h>
#endif

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static int done;
static char why[512];
static const char *answer;

static int request_amx_tiles(void) {
#if defined(__linux__) && defined(__x86_64__)
  const long req_xcomp_perm = 0x1023, xfeature_xtiledata = 18;
  return syscall(SYS_arch_prctl, req_xcomp_perm, xfeature_xtiledata) == 0;
#else
  return 0;
#endif
}

static void check(const tfm_cpu_target *checked) {
  if (!halide_can_use_target_features(checked->feature_words, checked->features)) {
    snprintf(why, sizeof why,
             "this CPU lacks features of the library's target %s; recompile it here (tfmc "
             "--target host)",
             checked->name);
    answer = why;
  } else if (checked->amx && !request_amx_tiles()) {
    snprintf(why, sizeof why,
             "the library's target %s uses AMX tiles, and Linux refused this process their "
             "use (arch_prctl ARCH_REQ_XCOMP_PERM): this CPU or kernel has no AMX; recompile "
             "it here (tfmc --target host)",
             checked->name);
    answer = why;
  }
}

const char *tfm_cpu_unready(const tfm_cpu_target *target) {
  /* Uncontended, a lock costs nanoseconds against a call's milliseconds. */
  pthread_mutex_lock(&lock);
  if (!done) {
    check(target);
    done = 1;
  }
  const char *result = answer;
  pthread_mutex_unlock(&lock);
  return result;
}
