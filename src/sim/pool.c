/*
 * src/sim/pool.c - the device thread pools.
 * Part of the simulated device; MIT licensed, see LICENSE.
 */
#include "internal.h"

#include <time.h>

#define SIM_MAX_THREADS 256 /* per device */

/* Polls between loops for up to SIM_SPIN_NS, longer than the serial
 * steps between most parallel ops, where a worker asleep on a condition
 * variable takes tens of microseconds to wake (in a virtual machine more:
 * the caller's wake-up call then cost more than its share of a small
 * product).  1024 polls (20-50 us) let the workers of MobileNetV2 at two
 * threads fall asleep between ops: 0.3 ms, 5.0 -> 4.3 ms a call.  A
 * deadline, not a count: under valgrind or on a CPU with a short pause
 * it is the same time.  No sched_yield: on a loaded machine it gives the
 * core away for a whole time slice, where the wait was to be
 * microseconds. */
#define SIM_SPIN_NS 300000

static inline void sim_spin_pause(void) {
#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
  _mm_pause();
#endif
}

/* One poll's pause; 0 once SIM_SPIN_NS have passed since the first (the
 * clock is read every 64 polls). */
typedef struct sim_spin {
  int polls;
  int64_t end;
} sim_spin;
static int sim_spin_more(sim_spin *sp) {
  sim_spin_pause();
  if (++sp->polls % 64) return 1;
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  int64_t now = (int64_t)t.tv_sec * 1000000000 + t.tv_nsec;
  if (!sp->end) sp->end = now + SIM_SPIN_NS;
  return now < sp->end;
}

/* ---- keeping a worker off its caller's core ----
 * A pool that polls assumes each participant has a core.  Linux's wake-up
 * placement can put a worker on the core of the thread that woke it, and
 * while they share it every loop waits for the worker's turn: rnn took
 * 13 ms instead of 2.6 on two threads until the scheduler moved one of
 * them, up to half a second later.  A worker that finds itself on its
 * caller's core leaves it, by narrowing its own affinity to the cores it
 * started with minus that one (the caller is never pinned: it is the
 * application's or the device's thread). */
#if defined(__linux__)
typedef struct sim_cpus {
  cpu_set_t start; /* the worker's affinity when it started */
  int ok;          /* start was read */
} sim_cpus;

static void sim_cpus_init(sim_cpus *m) {
  m->ok = pthread_getaffinity_np(pthread_self(), sizeof m->start,
                                 &m->start) == 0;
}

static int sim_current_cpu(void) { return sched_getcpu(); }

/* Leaves the caller's core when this thread is on it and may run on
 * another. */
static void sim_cpus_avoid(const sim_cpus *m, int caller) {
  if (!m->ok || caller < 0 || caller >= CPU_SETSIZE ||
      sim_current_cpu() != caller || !CPU_ISSET(caller, &m->start) ||
      CPU_COUNT(&m->start) < 2)
    return;
  cpu_set_t s = m->start;
  CPU_CLR(caller, &s);
  (void)pthread_setaffinity_np(pthread_self(), sizeof s, &s);
}
#else
typedef struct sim_cpus {
  char unused; /* C wants a member; there is nothing to keep */
} sim_cpus;
static void sim_cpus_init(sim_cpus *m) { (void)m; }
static int sim_current_cpu(void) { return -1; }
static void sim_cpus_avoid(const sim_cpus *m, int caller) {
  (void)m, (void)caller;
}
#endif

/* The first chunk of participant p's home run of the current loop. */
static int64_t sim_tpool_home(const struct sim_tpool *tp, int p) {
  return tp->nchunks * p / (tp->nworkers + 1);
}

/* Participant p runs the chunks of its home run, then claims what is left
 * of the others' (a cursor past its run's end claims nothing). */
static void sim_tpool_work(struct sim_tpool *tp, int p) {
  int parts = tp->nworkers + 1;
  for (int i = 0; i < parts; i++) {
    int q = (p + i) % parts;
    int64_t end = sim_tpool_home(tp, q + 1);
    for (;;) {
      int64_t k = (int64_t)atomic_fetch_add(&tp->cur[q].next, 1);
      if (k >= end) break;
      int64_t b = k * tp->chunk, e = b + tp->chunk;
      tp->fn(tp->ctx, b, e < tp->n ? e : tp->n);
    }
  }
}

/* ---- joining a loop ----
 * A worker takes part in a loop only if it joins while the loop is open;
 * the caller closes it once no chunk is left to claim and waits for the
 * workers that joined, not for every worker: one the host has not run
 * for a while (a virtual machine's vCPU that another guest holds) no
 * longer holds up a loop the caller finished alone.  The state word is
 * the loop's generation, the open bit and the count of joined workers
 * that have not left; cursors and the loop's fields change only when no
 * worker is in (closed, count 0), so a late worker never claims a chunk
 * of another loop. */
#define SIM_TP_ACTIVE 0xFFFFull  /* joined and not left (< SIM_MAX_THREADS) */
#define SIM_TP_OPEN (1ull << 16) /* workers may join */
#define SIM_TP_GEN_SHIFT 17      /* the loop's generation, above */

static uint64_t sim_tp_entry(uint64_t gen) {
  return gen << SIM_TP_GEN_SHIFT | SIM_TP_OPEN;
}

/* Joins loop gen: 1 when it is still open (the worker then runs chunks
 * and leaves), else 0. */
static int sim_tpool_join(struct sim_tpool *tp, uint64_t gen) {
  unsigned long long s = atomic_load_explicit(&tp->state, memory_order_acquire);
  for (;;) {
    if (s >> SIM_TP_GEN_SHIFT != (gen & (~0ull >> SIM_TP_GEN_SHIFT)) ||
        !(s & SIM_TP_OPEN))
      return 0;
    if (atomic_compare_exchange_weak_explicit(&tp->state, &s, s + 1,
                                              memory_order_acq_rel,
                                              memory_order_acquire))
      return 1;
  }
}

/* Leaves the loop joined; the last to leave a closed loop wakes a caller
 * that sleeps (a caller that polls sees the count reach 0). */
static void sim_tpool_leave(struct sim_tpool *tp) {
  uint64_t s = atomic_fetch_sub_explicit(&tp->state, 1,
                                         memory_order_acq_rel) - 1;
  if (!(s & SIM_TP_OPEN) && !(s & SIM_TP_ACTIVE)) {
    pthread_mutex_lock(&tp->mu);
    pthread_cond_signal(&tp->done);
    pthread_mutex_unlock(&tp->mu);
  }
}

/* The caller, its chunks done and none left to claim: closes the loop and
 * waits for the workers in it. */
static void sim_tpool_close(struct sim_tpool *tp) {
  uint64_t s = atomic_fetch_and_explicit(&tp->state, ~SIM_TP_OPEN,
                                         memory_order_acq_rel);
  sim_spin sp = {0, 0};
  while (tp->spin && (s & SIM_TP_ACTIVE) && sim_spin_more(&sp))
    s = atomic_load_explicit(&tp->state, memory_order_acquire);
  if (!(s & SIM_TP_ACTIVE)) return;
  pthread_mutex_lock(&tp->mu);
  while (atomic_load(&tp->state) & SIM_TP_ACTIVE)
    pthread_cond_wait(&tp->done, &tp->mu);
  pthread_mutex_unlock(&tp->mu);
}

/* Polls gen for a loop after seen (pools that spin): 1 when one started,
 * 0 after the polls (then the worker sleeps; stop is read under mu). */
static int sim_tpool_poll(struct sim_tpool *tp, uint64_t seen) {
  if (!tp->spin) return 0;
  sim_spin sp = {0, 0};
  do
    if (atomic_load_explicit(&tp->gen, memory_order_acquire) != seen) return 1;
  while (sim_spin_more(&sp));
  return 0;
}

static void *sim_tpool_main(void *arg) {
  struct sim_tpool *tp = (struct sim_tpool *)arg;
  sim_cpus cpus;
  sim_cpus_init(&cpus); /* before it counts as started: see below */
  int p = atomic_fetch_add(&tp->nextid, 1) + 1;
  pthread_mutex_lock(&tp->mu);
  uint64_t seen = tp->gen0; /* the loop that started us may be running */
  for (;;) {
    while (!tp->stop && atomic_load(&tp->gen) == seen)
      pthread_cond_wait(&tp->wake, &tp->mu);
    if (tp->stop) break;
    pthread_mutex_unlock(&tp->mu);
    for (;;) {
      seen = atomic_load_explicit(&tp->gen, memory_order_acquire);
      /* off the caller's core first, even when too late to join: a worker
       * that shares it never runs while the caller polls, so it would
       * never join and never leave */
      if (tp->spin) sim_cpus_avoid(&cpus, atomic_load(&tp->caller_cpu));
      if (sim_tpool_join(tp, seen)) {
        sim_tpool_work(tp, p);
        sim_tpool_leave(tp);
      }
      if (!sim_tpool_poll(tp, seen)) break;
    }
    pthread_mutex_lock(&tp->mu);
  }
  pthread_mutex_unlock(&tp->mu);
  return NULL;
}

/* Starts the workers once; a thread that cannot be created leaves the pool
 * smaller (still correct: the caller runs every unclaimed chunk). Locked. */
static void sim_tpool_start(struct sim_tpool *tp) {
  tp->started = 1;
  tp->gen0 = tp->gen;
  while (tp->nworkers < tp->threads - 1 &&
         pthread_create(&tp->tid[tp->nworkers], NULL, sim_tpool_main, tp) == 0)
    tp->nworkers++;
  /* Each worker has read the cores it started with (the caller's, which
   * it inherits) before the first loop returns: a worker that read them
   * later, after the application narrowed every thread's cores, would
   * take those for its own and could never leave the caller's core. */
  while (atomic_load(&tp->nextid) < tp->nworkers) sched_yield();
}

static void sim_tpool_stop(struct sim_tpool *tp) {
  pthread_mutex_lock(&tp->mu);
  tp->stop = 1;
  pthread_cond_broadcast(&tp->wake);
  pthread_mutex_unlock(&tp->mu);
  for (int i = 0; i < tp->nworkers; i++) pthread_join(tp->tid[i], NULL);
  tp->nworkers = 0;
}

SIM_PRIVATE void sim_parallel_for(sim_cx *cx, int64_t n, int64_t grain,
                             sim_range_fn fn, void *ctx) {
  struct sim_tpool *tp = cx ? cx->tp : NULL;
  if (n <= 0) return;
  if (grain < 1) grain = 1;
  int expect = 0;
  if (!tp || tp->threads < 2 || n < 2 * grain ||
      !atomic_compare_exchange_strong(&tp->busy, &expect, 1)) {
    fn(ctx, 0, n);
    return;
  }
  /* Four to eight chunks per participant balance a loaded machine without
   * making chunks small (rounded down: 14 items on 2 threads go one by
   * one, not in 7 pairs that one thread would get 4 of). */
  int64_t want = (int64_t)tp->threads * 4;
  int64_t chunk = n / want;
  if (chunk < grain) chunk = grain;
  pthread_mutex_lock(&tp->mu);
  if (!tp->started) sim_tpool_start(tp);
  if (tp->nworkers == 0) {
    pthread_mutex_unlock(&tp->mu);
    atomic_store(&tp->busy, 0);
    fn(ctx, 0, n);
    return;
  }
  tp->fn = fn;
  tp->ctx = ctx;
  tp->n = n;
  tp->chunk = chunk;
  tp->nchunks = (n + chunk - 1) / chunk;
  for (int q = 0; q <= tp->nworkers; q++)
    atomic_store_explicit(&tp->cur[q].next, sim_tpool_home(tp, q),
                          memory_order_relaxed);
  if (tp->spin) atomic_store(&tp->caller_cpu, sim_current_cpu());
  /* The loop opens (no worker is in: the last one closed with none), then
   * gen moves; release: a worker that sees either sees the loop. */
  uint64_t gen = atomic_load_explicit(&tp->gen, memory_order_relaxed) + 1;
  atomic_store_explicit(&tp->state, sim_tp_entry(gen), memory_order_release);
  atomic_store_explicit(&tp->gen, gen, memory_order_release);
  pthread_cond_broadcast(&tp->wake);
  pthread_mutex_unlock(&tp->mu);
  sim_tpool_work(tp, 0);
  sim_tpool_close(tp);
  atomic_store(&tp->busy, 0);
}

/* threads_per_device 0: the allowed cores shared among the devices. */
static int sim_threads_default(int ndev) {
  long cores = sim_os_cpu_count();
  long t = cores > 0 ? cores / (ndev > 0 ? ndev : 1) : 1;
  return t < 1 ? 1 : t > SIM_MAX_THREADS ? SIM_MAX_THREADS : (int)t;
}

SIM_PRIVATE void sim_tpools_free(sim_client *c) {
  if (!c->tp) return;
  for (int i = 0; i < c->ntp; i++) {
    struct sim_tpool *tp = &c->tp[i];
    sim_tpool_stop(tp);
    pthread_cond_destroy(&tp->done);
    pthread_cond_destroy(&tp->wake);
    pthread_mutex_destroy(&tp->mu);
    c->al.free(c->al.self, tp->cur);
  }
  c->al.free(c->al.self, c->tp);
  c->tp = NULL;
  c->ntp = 0;
}

static xrt_status sim_tpool_init(sim_client *c, struct sim_tpool *tp,
                                 int threads, xrt_plugin_error *err) {
  memset(tp, 0, sizeof *tp);
  atomic_init(&tp->busy, 0);
  atomic_init(&tp->nextid, 0);
  atomic_init(&tp->caller_cpu, -1);
  atomic_init(&tp->gen, 0);
  atomic_init(&tp->state, 0);
  tp->threads = threads;
  /* Polling pays when every participant of every pool has a core. */
  long cores = sim_os_cpu_count();
  tp->spin = cores > 0 && (long)threads * (c->ndev > 0 ? c->ndev : 1) <= cores;
  /* One block: the cursors (aligned as the allocator aligns), then tid. */
  tp->cur = (struct sim_tcursor *)c->al.alloc(
      c->al.self, (sizeof(struct sim_tcursor) + sizeof(pthread_t)) *
                      (size_t)threads);
  tp->tid = tp->cur ? (pthread_t *)(tp->cur + threads) : NULL;
  for (int q = 0; tp->cur && q < threads; q++) atomic_init(&tp->cur[q].next, 0);
  if (!tp->tid) return sim_fail(err, XRT_RESOURCE_EXHAUSTED, "out of host "
                                "memory for a thread pool");
  /* Each succeeds only after the one before; a failure undoes those. */
  int mu = pthread_mutex_init(&tp->mu, NULL) == 0;
  int wake = mu && pthread_cond_init(&tp->wake, NULL) == 0;
  if (wake && pthread_cond_init(&tp->done, NULL) == 0) return XRT_OK;
  if (wake) pthread_cond_destroy(&tp->wake);
  if (mu) pthread_mutex_destroy(&tp->mu);
  c->al.free(c->al.self, tp->cur);
  tp->tid = NULL;
  tp->cur = NULL;
  return sim_fail(err, XRT_INTERNAL, "cannot initialise a thread pool");
}

/* One pool per device, no threads yet; also reports the thread count as
 * the devices' "cores" attribute. */
SIM_PRIVATE xrt_status sim_tpools_make(sim_client *c, int threads,
                                  xrt_plugin_error *err) {
  if (threads < 0 || threads > SIM_MAX_THREADS)
    return sim_fail(err, XRT_INVALID_ARGUMENT, "threads_per_device must be "
                    "0..%d, not %d", SIM_MAX_THREADS, threads);
  if (threads == 0) threads = sim_threads_default(c->ndev);
  c->tp = (struct sim_tpool *)c->al.alloc(
      c->al.self, sizeof *c->tp * (size_t)c->ndev);
  if (!c->tp)
    return sim_fail(err, XRT_RESOURCE_EXHAUSTED, "out of host memory");
  c->ntp = 0;
  for (int i = 0; i < c->ndev; i++, c->ntp++) {
    xrt_status s = sim_tpool_init(c, &c->tp[i], threads, err);
    if (s) return s;
    c->dev[i].attrs[1].int_value = threads;
  }
  return XRT_OK;
}

