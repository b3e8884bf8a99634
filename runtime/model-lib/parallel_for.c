/*===- parallel_for.c - The parallel loops of a model library -------------===//
 *
 * Compiled by tfmc into every generated model library, beside Halide's
 * runtime, and installed as Halide's do_par_for (halide_set_custom_do_par_for,
 * Halide's own hook for it) when the runtime sets the library's threads.
 *
 * Why not Halide's thread pool: a decode step is a few dozen kernels of tens
 * of microseconds each (the 110M Llama's: about 60 of 50 us), and between
 * two of them Halide's workers yield 40 times and then sleep on a condition
 * variable, so each kernel waits for a worker to be woken. These workers
 * spin on the job counter instead, for a bounded time (kSpinsBeforeSleep),
 * and only then sleep on a futex; the caller wakes them only if one sleeps.
 * On an Intel Sapphire Rapids VM with 2 threads (tfm-bench --rates, three
 * alternating pairs), the 110M Llama's Q4_K_M with 8-bit activations went
 * from prefill 1877-1958 / decode 268-280 tok/s to 2096-2171 / 280-290.
 *
 * The loop's iterations go to whichever thread takes the next one (an
 * atomic counter), the calling thread included. A parallel loop inside a
 * task, or one begun while another thread's loop runs, runs serially in
 * the calling thread.
 *
 *===----------------------------------------------------------------------===*/
#include "parallel_for.h"

#include <linux/futex.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <sys/syscall.h>
#include <unistd.h>

enum {
  kMaxWorkers = 255,
  /* About a millisecond of pause instructions on current x86 cores: longer
   * than the gaps between the kernels of a step, shorter than a person
   * notices a spinning core after generation ends. */
  kSpinsBeforeSleep = 1 << 15,
};

static struct {
  halide_task_t task;
  void *user_context;
  uint8_t *closure;
  int min, size;
  atomic_int next;      /* the next iteration to take */
  atomic_int remaining; /* iterations not yet finished */
  atomic_int error;     /* the first non-zero result of a task */
  /* Odd while a loop is being set up, even once it is published; bumped
   * twice for each loop, and at shutdown. */
  atomic_uint generation;
  atomic_int entered; /* workers inside a loop */
  atomic_int sleepers;
  atomic_int threads;   /* threads a loop uses, the caller included */
  atomic_flag busy;     /* held by the thread running a loop */
  atomic_bool shutdown;
  int workers;
  pthread_t worker[kMaxWorkers];
} pool = {.busy = ATOMIC_FLAG_INIT};

/* A spin-wait hint: the core gives its resources to its sibling thread. */
static inline void spinHint(void) {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_ia32_pause();
#elif defined(__aarch64__)
  __asm__ volatile("yield");
#endif
}

static void runIterations(void) {
  int done = 0;
  for (int i; (i = atomic_fetch_add(&pool.next, 1)) < pool.size; ++done) {
    int rc = pool.task(pool.user_context, pool.min + i, pool.closure);
    int none = 0;
    if (rc)
      atomic_compare_exchange_strong(&pool.error, &none, rc);
  }
  if (done)
    atomic_fetch_sub(&pool.remaining, done);
}

/* A worker's index, and the generation when it was started: a loop
 * published before the thread first runs is then still new to it. */
static void *work(void *arg) {
  int index = (int)((uintptr_t)arg & 0xff); /* workers beyond threads - 1 sit out */
  unsigned seen = (unsigned)((uintptr_t)arg >> 8);
  for (;;) {
    unsigned now;
    for (int spins = 0; (now = atomic_load(&pool.generation)) == seen || (now & 1);) {
      if (++spins < kSpinsBeforeSleep) {
        spinHint();
        continue;
      }
      atomic_fetch_add(&pool.sleepers, 1);
      if (atomic_load(&pool.generation) == now)
        syscall(SYS_futex, &pool.generation, FUTEX_WAIT_PRIVATE, now, NULL, NULL, 0);
      atomic_fetch_sub(&pool.sleepers, 1);
      spins = 0;
    }
    if (atomic_load(&pool.shutdown))
      return NULL;
    /* Entered, then checked: a loop being set up waits for every worker that
     * entered before it began, and one entering later sees it begun. */
    atomic_fetch_add(&pool.entered, 1);
    if (atomic_load(&pool.generation) == now) {
      seen = now;
      if (index < atomic_load(&pool.threads) - 1)
        runIterations();
    }
    atomic_fetch_sub(&pool.entered, 1);
  }
}

static void wakeSleepers(void) {
  if (atomic_load(&pool.sleepers))
    syscall(SYS_futex, &pool.generation, FUTEX_WAKE_PRIVATE, kMaxWorkers, NULL, NULL, 0);
}

/* Until the runtime sets them, as many threads as Halide's own pool would
 * take: HL_NUM_THREADS, else the CPUs online. */
static void defaultThreads(void) {
  const char *count = getenv("HL_NUM_THREADS");
  long n = count ? atol(count) : sysconf(_SC_NPROCESSORS_ONLN);
  if (atomic_load(&pool.threads) == 0)
    tfm_parallel_for_threads(n > 0 ? (int)n : 1);
}

int tfm_parallel_for(void *user_context, halide_task_t task, int min, int size,
                     uint8_t *closure) {
  static pthread_once_t threadsChosen = PTHREAD_ONCE_INIT;
  pthread_once(&threadsChosen, defaultThreads);
  /* busy is held until every task of the running loop has returned, so a
   * loop inside one of its tasks, on any thread, runs serially too. */
  int serial = size <= 1 || atomic_load(&pool.threads) <= 1 ||
               atomic_flag_test_and_set(&pool.busy);
  if (serial) {
    for (int i = 0; i < size; ++i) {
      int rc = task(user_context, min + i, closure);
      if (rc)
        return rc;
    }
    return 0;
  }
  atomic_fetch_add(&pool.generation, 1); /* odd: setting up */
  while (atomic_load(&pool.entered) > 0) /* a worker still in the last loop */
    spinHint();
  pool.task = task;
  pool.user_context = user_context;
  pool.closure = closure;
  pool.min = min;
  pool.size = size;
  atomic_store(&pool.error, 0);
  atomic_store(&pool.remaining, size);
  atomic_store(&pool.next, 0);
  atomic_fetch_add(&pool.generation, 1); /* even: published */
  wakeSleepers();
  runIterations();
  while (atomic_load(&pool.remaining) > 0)
    spinHint();
  int rc = atomic_load(&pool.error);
  atomic_flag_clear(&pool.busy);
  return rc;
}

void tfm_parallel_for_threads(int threads) {
  if (threads < 1)
    threads = 1;
  if (threads > kMaxWorkers + 1)
    threads = kMaxWorkers + 1;
  atomic_store(&pool.threads, threads);
  for (; pool.workers < threads - 1; ++pool.workers)
    if (pthread_create(&pool.worker[pool.workers], NULL, work,
                       (void *)((uintptr_t)atomic_load(&pool.generation) << 8 |
                                (uintptr_t)pool.workers)) != 0) {
      atomic_store(&pool.threads, pool.workers + 1); /* the threads there are */
      break;
    }
}

/* Before the library is unloaded: its workers run its code. */
__attribute__((destructor)) static void stopWorkers(void) {
  atomic_store(&pool.shutdown, 1);
  atomic_fetch_add(&pool.generation, 2);
  wakeSleepers();
  for (int i = 0; i < pool.workers; ++i)
    pthread_join(pool.worker[i], NULL);
  pool.workers = 0;
}
