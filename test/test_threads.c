/*
 * test_threads.c - 8 host threads at once on one client: synchronous and
 * asynchronous executes, transfers, copies, multi-device launches and
 * releases, on shared executables and buffers.  Every result is checked
 * against values computed here; racing releases of one handle must give
 * exactly one XRT_OK.  Run under ThreadSanitizer by `make test-tsan`.
 */
#define _POSIX_C_SOURCE 200809L /* pthread barriers */
#include "test_util.h"

#include <pthread.h>
#include <stdatomic.h>

enum { THREADS = 8, ROUNDS = 24, DEVICES = 2 };

static const char kAxpy[] =
    "func.func @main(%a: tensor<8xf32>, %x: tensor<8xf32>) -> tensor<8xf32> {\n"
    "  %0 = stablehlo.multiply %a, %x : tensor<8xf32>\n"
    "  %1 = stablehlo.add %0, %x : tensor<8xf32>\n"
    "  func.return %1 : tensor<8xf32>\n"
    "}\n";

static const char kNeg[] =
    "module @m attributes {mhlo.num_replicas = 2 : i32} {\n"
    "  func.func @main(%x: tensor<8xf32>) -> tensor<8xf32> {\n"
    "    %0 = stablehlo.negate %x : tensor<8xf32>\n"
    "    func.return %0 : tensor<8xf32>\n"
    "  }\n"
    "}\n";

static const xrt_shape kVec8 = {XRT_F32, 1, {8}};

typedef struct shared {
  xrt_client *client;
  xrt_executable *axpy, *neg;
  xrt_executable *doomed;     /* released by one thread mid-run */
  xrt_buffer *a[DEVICES];     /* shared inputs, one per device */
  float a_host[8];
  pthread_barrier_t barrier;
  xrt_buffer *victim;         /* released by every thread at once */
  _Atomic int victim_ok, victim_invalid;
  _Atomic int failures;
  char failure[512];
  pthread_mutex_t mu;
} shared;

typedef struct worker {
  shared *sh;
  int id;
} worker;

static void record_failure(shared *sh, const char *what) {
  pthread_mutex_lock(&sh->mu);
  if (atomic_fetch_add(&sh->failures, 1) == 0)
    snprintf(sh->failure, sizeof sh->failure, "%s (%s)", what,
             xrt_last_error());
  pthread_mutex_unlock(&sh->mu);
}

#define CHECK(sh, cond, what)              \
  do {                                     \
    if (!(cond)) record_failure(sh, what); \
  } while (0)

/* a * x + x computed here. */
static void axpy_ref(const float *a, const float *x, float *out) {
  for (int i = 0; i < 8; i++) out[i] = a[i] * x[i] + x[i];
}

static bool equal8(const float *x, const float *y) {
  return memcmp(x, y, 8 * sizeof(float)) == 0;
}

static void check_buffer(shared *sh, xrt_buffer *b, const float *want,
                         const char *what) {
  float got[8];
  xrt_status s = xrt_buffer_to_host(b, got, sizeof got);
  CHECK(sh, s == XRT_OK && equal8(got, want), what);
}

/* A synchronous execute on shared inputs. */
static void round_sync(shared *sh, int id, int r) {
  int dev = (id + r) % DEVICES;
  float x[8], want[8];
  for (int i = 0; i < 8; i++) x[i] = (float)(id * 100 + r * 8 + i);
  axpy_ref(sh->a_host, x, want);
  xrt_buffer *xb = NULL, *out = NULL;
  xrt_device *d = xrt_client_device(sh->client, dev);
  CHECK(sh, xrt_buffer_from_host(sh->client, d, &kVec8, x, &xb) == XRT_OK,
        "from_host");
  xrt_buffer *args[2] = {sh->a[dev], xb};
  CHECK(sh, xrt_execute(sh->axpy, d, args, 2, &out, 1, NULL) == XRT_OK,
        "execute");
  check_buffer(sh, out, want, "sync result");
  CHECK(sh, xrt_buffer_release(out) == XRT_OK, "release out");
  CHECK(sh, xrt_buffer_release(xb) == XRT_OK, "release x");
}

/* Upload, execute, copy to the other device, execute there and read back,
 * all queued without waiting in between; inputs are released early. */
static void round_async(shared *sh, int id, int r) {
  int dev = (id + r + 1) % DEVICES, other = (dev + 1) % DEVICES;
  float x[8], y[8], want[8], got[8];
  for (int i = 0; i < 8; i++) x[i] = (float)(i - id) * 0.5f + (float)r;
  axpy_ref(sh->a_host, x, y);
  axpy_ref(sh->a_host, y, want);
  xrt_device *d = xrt_client_device(sh->client, dev);
  xrt_device *d2 = xrt_client_device(sh->client, other);
  xrt_buffer *xb = NULL, *yb = NULL, *yc = NULL, *zb = NULL;
  xrt_event *up = NULL, *down = NULL;
  CHECK(sh, xrt_buffer_from_host_async(sh->client, d, &kVec8, x, &xb, &up) ==
                XRT_OK, "from_host_async");
  xrt_buffer *args[2] = {sh->a[dev], xb};
  CHECK(sh, xrt_execute_async(sh->axpy, d, args, 2, &yb, 1, NULL, NULL) ==
                XRT_OK, "execute_async");
  CHECK(sh, xrt_buffer_release(xb) == XRT_OK, "release x early");
  CHECK(sh, xrt_buffer_copy_to_device_async(yb, d2, &yc) == XRT_OK,
        "copy_async");
  CHECK(sh, xrt_buffer_release(yb) == XRT_OK, "release y early");
  xrt_buffer *args2[2] = {sh->a[other], yc};
  CHECK(sh, xrt_execute_async(sh->axpy, d2, args2, 2, &zb, 1, NULL, NULL) ==
                XRT_OK, "execute_async 2");
  CHECK(sh, xrt_buffer_to_host_async(zb, got, sizeof got, &down) == XRT_OK,
        "to_host_async");
  CHECK(sh, xrt_buffer_release(zb) == XRT_OK, "release z early");
  CHECK(sh, xrt_event_await(down) == XRT_OK, "await down");
  CHECK(sh, xrt_event_await(up) == XRT_OK, "await up"); /* x may go now */
  CHECK(sh, equal8(got, want), "async chain result");
  xrt_event_release(up);
  xrt_event_release(down);
  xrt_buffer_release(yc);
}

/* A two-device launch from several threads at once. */
static void round_multi(shared *sh, int id, int r) {
  float x[2][8], want[2][8];
  xrt_buffer *in[2] = {NULL, NULL}, *out[2] = {NULL, NULL};
  for (int k = 0; k < 2; k++) {
    for (int i = 0; i < 8; i++) {
      x[k][i] = (float)(k * 1000 + id * 10 + r + i);
      want[k][i] = -x[k][i];
    }
    CHECK(sh, xrt_buffer_from_host(sh->client,
                                   xrt_client_device(sh->client, k), &kVec8,
                                   x[k], &in[k]) == XRT_OK, "multi upload");
  }
  xrt_buffer *const l0[1] = {in[0]}, *const l1[1] = {in[1]};
  xrt_buffer *const *lists[2] = {l0, l1};
  xrt_buffer **olists[2] = {&out[0], &out[1]};
  xrt_event *done = NULL;
  CHECK(sh, xrt_execute_multi(sh->neg, lists, 2, 1, olists, 1, NULL, &done) ==
                XRT_OK, "execute_multi");
  CHECK(sh, xrt_event_await(done) == XRT_OK, "multi await");
  for (int k = 0; k < 2; k++) {
    check_buffer(sh, out[k], want[k], "multi result");
    xrt_buffer_release(out[k]);
    xrt_buffer_release(in[k]);
  }
  xrt_event_release(done);
}

/* Executes of an executable that another thread releases meanwhile: each
 * call either runs correctly or reports the stale handle. */
static void round_doomed(shared *sh, int id, int r) {
  if (id == 0 && r == ROUNDS / 2) {
    CHECK(sh, xrt_executable_release(sh->doomed) == XRT_OK, "release doomed");
    return;
  }
  int dev = id % DEVICES;
  float want[8];
  axpy_ref(sh->a_host, sh->a_host, want);
  xrt_buffer *out = NULL;
  xrt_buffer *args[2] = {sh->a[dev], sh->a[dev]};
  xrt_status s = xrt_execute_async(sh->doomed, xrt_client_device(sh->client,
                                                                 dev),
                                   args, 2, &out, 1, NULL, NULL);
  CHECK(sh, s == XRT_OK || s == XRT_INVALID_ARGUMENT, "doomed status");
  if (s == XRT_OK) {
    check_buffer(sh, out, want, "doomed result");
    xrt_buffer_release(out);
  } else {
    CHECK(sh, out == NULL, "doomed output on failure");
  }
}

/* Every thread releases the same buffer at once: one wins. */
static void round_victim(shared *sh, int id) {
  if (id == 0) {
    float v[8] = {0};
    CHECK(sh, xrt_buffer_from_host(sh->client,
                                   xrt_client_device(sh->client, 0), &kVec8,
                                   v, &sh->victim) == XRT_OK, "victim");
  }
  pthread_barrier_wait(&sh->barrier);
  xrt_shape shape;
  xrt_status q = xrt_buffer_shape(sh->victim, &shape); /* may race release */
  CHECK(sh, q == XRT_OK || q == XRT_INVALID_ARGUMENT, "victim shape");
  xrt_status s = xrt_buffer_release(sh->victim);
  if (s == XRT_OK) atomic_fetch_add(&sh->victim_ok, 1);
  else if (s == XRT_INVALID_ARGUMENT) atomic_fetch_add(&sh->victim_invalid, 1);
  pthread_barrier_wait(&sh->barrier);
}

static void *worker_main(void *arg) {
  worker *w = (worker *)arg;
  for (int r = 0; r < ROUNDS; r++) {
    round_sync(w->sh, w->id, r);
    round_async(w->sh, w->id, r);
    if (r % 4 == w->id % 4) round_multi(w->sh, w->id, r);
    round_doomed(w->sh, w->id, r);
    if (r % 8 == 0) round_victim(w->sh, w->id);
  }
  return NULL;
}

static void test_eight_threads(void **state) {
  (void)state;
  shared sh;
  memset(&sh, 0, sizeof sh);
  pthread_mutex_init(&sh.mu, NULL);
  pthread_barrier_init(&sh.barrier, NULL, THREADS);
  sh.client = tu_client(DEVICES, 0, 64 << 20);
  assert_int_equal(xrt_compile(sh.client, kAxpy, strlen(kAxpy), NULL,
                               &sh.axpy), XRT_OK);
  assert_int_equal(xrt_compile(sh.client, kAxpy, strlen(kAxpy), NULL,
                               &sh.doomed), XRT_OK);
  assert_int_equal(xrt_compile(sh.client, kNeg, strlen(kNeg), NULL, &sh.neg),
                   XRT_OK);
  for (int i = 0; i < 8; i++) sh.a_host[i] = (float)(i + 1) * 0.25f;
  for (int d = 0; d < DEVICES; d++)
    assert_int_equal(xrt_buffer_from_host(sh.client,
                                          xrt_client_device(sh.client, d),
                                          &kVec8, sh.a_host, &sh.a[d]),
                     XRT_OK);
  pthread_t th[THREADS];
  worker w[THREADS];
  for (int i = 0; i < THREADS; i++) {
    w[i] = (worker){&sh, i};
    assert_int_equal(pthread_create(&th[i], NULL, worker_main, &w[i]), 0);
  }
  for (int i = 0; i < THREADS; i++) pthread_join(th[i], NULL);
  if (atomic_load(&sh.failures))
    fail_msg("%d failure(s), first: %s", atomic_load(&sh.failures), sh.failure);
  int victims = (ROUNDS + 7) / 8;
  assert_int_equal(atomic_load(&sh.victim_ok), victims);
  assert_int_equal(atomic_load(&sh.victim_invalid), victims * (THREADS - 1));
  assert_int_equal(xrt_executable_num_inputs(sh.doomed), -1);
  /* The shared inputs are intact after all of it. */
  for (int d = 0; d < DEVICES; d++) {
    float got[8];
    assert_int_equal(xrt_buffer_to_host(sh.a[d], got, sizeof got), XRT_OK);
    assert_memory_equal(got, sh.a_host, sizeof got);
  }
  xrt_client_release(sh.client);
  pthread_barrier_destroy(&sh.barrier);
  pthread_mutex_destroy(&sh.mu);
}

/* ---- client stats counted by many threads ---- */

enum { STAT_THREADS = 72, STAT_ROUNDS = 5 }; /* more threads than the
                                               per-thread stat blocks */

typedef struct stat_shared {
  xrt_client *client;
  xrt_executable *axpy;
  pthread_barrier_t barrier;
  xrt_buffer *kept[STAT_THREADS];
  atomic_int failures;
} stat_shared;

typedef struct stat_worker {
  stat_shared *sh;
  int id;
} stat_worker;

/* STAT_ROUNDS of: upload, execute, download, release both; then one
 * upload kept.  All threads are alive at once (barriers). */
static void *stat_worker_main(void *arg) {
  stat_worker *w = (stat_worker *)arg;
  stat_shared *sh = w->sh;
  xrt_device *dev = xrt_client_device(sh->client, w->id % DEVICES);
  float x[8], got[8];
  for (int i = 0; i < 8; i++) x[i] = (float)(w->id + i);
  pthread_barrier_wait(&sh->barrier);
  for (int r = 0; r < STAT_ROUNDS; r++) {
    xrt_buffer *in = NULL, *out = NULL;
    xrt_buffer *args[2];
    bool ok = xrt_buffer_from_host(sh->client, dev, &kVec8, x, &in) == XRT_OK;
    args[0] = args[1] = in;
    ok = ok && xrt_execute(sh->axpy, dev, args, 2, &out, 1, NULL) == XRT_OK;
    ok = ok && xrt_buffer_to_host(out, got, sizeof got) == XRT_OK;
    for (int i = 0; ok && i < 8; i++) ok = got[i] == x[i] * x[i] + x[i];
    if (!ok) atomic_fetch_add(&sh->failures, 1);
    xrt_buffer_release(in);
    xrt_buffer_release(out);
  }
  if (xrt_buffer_from_host(sh->client, dev, &kVec8, x, &sh->kept[w->id]))
    atomic_fetch_add(&sh->failures, 1);
  pthread_barrier_wait(&sh->barrier);
  return NULL;
}

/* Every count of every thread is in xrt_client_get_stats, exactly, also
 * past the threads that get a counter block of their own. */
static void test_stats_from_many_threads(void **state) {
  (void)state;
  stat_shared sh;
  memset(&sh, 0, sizeof sh);
  pthread_barrier_init(&sh.barrier, NULL, STAT_THREADS);
  sh.client = tu_client(DEVICES, 0, 64 << 20);
  assert_int_equal(xrt_compile(sh.client, kAxpy, strlen(kAxpy), NULL,
                               &sh.axpy), XRT_OK);
  xrt_client_stats s0, s1, s2;
  assert_int_equal(xrt_client_get_stats(sh.client, &s0), XRT_OK);
  pthread_t th[STAT_THREADS];
  stat_worker w[STAT_THREADS];
  for (int i = 0; i < STAT_THREADS; i++) {
    w[i] = (stat_worker){&sh, i};
    assert_int_equal(pthread_create(&th[i], NULL, stat_worker_main, &w[i]),
                     0);
  }
  for (int i = 0; i < STAT_THREADS; i++) pthread_join(th[i], NULL);
  assert_int_equal(atomic_load(&sh.failures), 0);
  assert_int_equal(xrt_client_get_stats(sh.client, &s1), XRT_OK);
  uint64_t n = STAT_THREADS, r = STAT_ROUNDS;
  assert_int_equal(s1.executions - s0.executions, n * r);
  assert_int_equal(s1.host_to_device - s0.host_to_device, n * (r + 1));
  assert_int_equal(s1.device_to_host - s0.device_to_host, n * r);
  assert_int_equal(s1.device_allocations - s0.device_allocations,
                   n * (2 * r + 1));
  assert_int_equal(s1.device_frees - s0.device_frees, n * 2 * r);
  assert_int_equal(s1.device_bytes_in_use - s0.device_bytes_in_use,
                   n * 8 * sizeof(float));
  for (int i = 0; i < STAT_THREADS; i++) xrt_buffer_release(sh.kept[i]);
  assert_int_equal(xrt_client_get_stats(sh.client, &s2), XRT_OK);
  assert_int_equal(s2.device_frees - s0.device_frees, n * (2 * r + 1));
  assert_int_equal(s2.device_bytes_in_use, s0.device_bytes_in_use);
  xrt_executable_release(sh.axpy);
  xrt_client_release(sh.client);
  pthread_barrier_destroy(&sh.barrier);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_eight_threads),
      cmocka_unit_test(test_stats_from_many_threads),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
