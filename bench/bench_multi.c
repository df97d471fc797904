/*
 * bench_multi.c - multi-device benchmarks (issue #4), public API only.
 * MIT licensed.
 *
 * Prints "KEY = NUMBER" lines (best of several repetitions each):
 *   dispatch.pmap8_add.ns          one replicated 4-element add over 8
 *                                  devices (xrt_execute_multi, buffers
 *                                  resident), per call, amortized over
 *                                  many asynchronous calls and one await
 *   dispatch.pmap8_add_sync.ns     the same, each call awaited (latency)
 *   dispatch.pmap8_add_queued.ns   as dispatch.pmap8_add with XRT_NO_INLINE
 *                                  set at compile: every participant runs
 *                                  on its device's worker thread (the
 *                                  default runs a launch this cheap on the
 *                                  calling thread when all devices idle)
 *   collective.allreduce8_64MiB.ms         all_reduce (sum) of 64 MiB of
 *                                  f32 per device over 8 devices
 *   collective.memcpy_8x64MiB.ms   eight 64 MiB memcpys, same run
 *   collective.allreduce8_64MiB.ratio_memcpy  memcpy time / xrt time
 *   scaling.1dev.ms / scaling.2dev.ms     a compute-bound program (a while
 *                                  loop of elementwise math on 1024 f32)
 *                                  on device 0 alone / on devices 0 and 1
 *                                  at once (threads_per_device = 1)
 *   scaling.2dev.speedup           2 * T(1 device) / T(2 devices)
 *   scaling.2threads_c.speedup     the same measure for a plain C loop on
 *                                  one thread vs two (what the machine
 *                                  allows right now: other load on the
 *                                  cores lowers both)
 */
#if !defined(_POSIX_C_SOURCE) || _POSIX_C_SOURCE < 200809L
#undef _POSIX_C_SOURCE
#define _POSIX_C_SOURCE 200809L /* clock_gettime */
#endif

#define BENCH_NAME "bench_multi"
#include "bench_util.h"

#include <pthread.h>

enum { NDEV = 8 };

/* One launch over every device of exe; outputs released at once (the
 * runtime keeps them until the launch is done).  *done may be NULL. */
static xrt_status launch(xrt_executable *exe, xrt_buffer *(*args)[2], int nargs,
                         xrt_event **done) {
  xrt_buffer *outs[NDEV][1];
  xrt_buffer *const *al[NDEV];
  xrt_buffer **ol[NDEV];
  for (int d = 0; d < NDEV; d++) {
    al[d] = args[d];
    ol[d] = outs[d];
  }
  xrt_status s = xrt_execute_multi(exe, al, NDEV, nargs, ol, 1, NULL, done);
  for (int d = 0; !s && d < NDEV; d++) xrt_buffer_release(outs[d][0]);
  return s;
}

/* Uploads n floats (all equal to v) to every device: args[d][slot]. */
static xrt_status upload_all(xrt_client *c, const xrt_shape *shape, const float *data,
                             xrt_buffer *(*args)[2], int slot) {
  for (int d = 0; d < NDEV; d++) {
    xrt_status s = xrt_buffer_from_host(c, xrt_client_device(c, d), shape, data,
                                        &args[d][slot]);
    if (s) return s;
  }
  return XRT_OK;
}

/* ---- dispatch.pmap8_add ---- */

static const char add_src[] =
    "func.func @main(%a: tensor<4xf32>, %b: tensor<4xf32>) -> tensor<4xf32> {\n"
    "  %0 = stablehlo.add %a, %b : tensor<4xf32>\n"
    "  func.return %0 : tensor<4xf32>\n"
    "}\n";

/* n calls, then one await of the last (each device's queue is in order, so
 * the last launch finishes after every earlier one); seconds, or -1. */
static double pmap_batch(xrt_executable *exe, xrt_buffer *(*args)[2], long n, int sync) {
  double t0 = bench_now_s();
  for (long i = 0; i < n; i++) {
    xrt_event *done = NULL;
    xrt_status s = launch(exe, args, 2, &done);
    if (!s && (sync || i == n - 1)) s = xrt_event_await(done);
    xrt_event_release(done);
    if (s) {
      bench_fail("pmap add", s);
      return -1;
    }
  }
  return bench_now_s() - t0;
}

static int bench_dispatch(void) {
  enum { REPS = 7, CALLS = 2000 };
  xrt_client *c = bench_client(NDEV, 1);
  xrt_executable *exe = c ? bench_compile_src(c, add_src, NDEV) : NULL;
  /* The same program kept off the inline path: every participant goes
   * through its device's worker thread. */
  setenv("XRT_NO_INLINE", "1", 1);
  xrt_executable *queued = exe ? bench_compile_src(c, add_src, NDEV) : NULL;
  unsetenv("XRT_NO_INLINE");
  if (!queued) exe = NULL;
  xrt_buffer *args[NDEV][2];
  memset(args, 0, sizeof args);
  float a[4] = {1, 2, 3, 4}, b[4] = {5, 6, 7, 8};
  xrt_shape shape = {XRT_F32, 1, {4}};
  xrt_status s = exe ? upload_all(c, &shape, a, args, 0) : XRT_INTERNAL;
  if (!s) s = upload_all(c, &shape, b, args, 1);
  int rc = s ? (exe ? bench_fail("upload", s) : 1) : 0;
  /* Variants: async, each call awaited, async through the queues. */
  double best[3] = {1e30, 1e30, 1e30};
  for (int v = 0; !rc && v < 3; v++) {
    xrt_executable *x = v == 2 ? queued : exe;
    int sync = v == 1;
    if (pmap_batch(x, args, 200, sync) < 0) rc = 1; /* warm up */
    for (int r = 0; !rc && r < REPS; r++) {
      double t = pmap_batch(x, args, CALLS, sync);
      if (t < 0) rc = 1;
      else if (t / CALLS < best[v]) best[v] = t / CALLS;
    }
  }
  /* The results are right: 1+5 .. 4+8 on every device. */
  xrt_buffer *outs[NDEV][1];
  xrt_buffer *const *al[NDEV];
  xrt_buffer **ol[NDEV];
  for (int d = 0; d < NDEV; d++) al[d] = args[d], ol[d] = outs[d];
  xrt_event *done = NULL;
  if (!rc && (s = xrt_execute_multi(exe, al, NDEV, 2, ol, 1, NULL, &done)) == XRT_OK)
    s = xrt_event_await(done);
  xrt_event_release(done);
  for (int d = 0; !rc && d < NDEV; d++) {
    float got[4] = {0};
    if (!s) s = xrt_buffer_to_host(outs[d][0], got, sizeof got);
    if (!s && (got[0] != 6 || got[3] != 12)) {
      fprintf(stderr, "bench: pmap add computed %g .. %g on device %d\n", got[0], got[3], d);
      rc = 1;
    }
  }
  if (!rc && s) rc = bench_fail("pmap add result", s);
  if (!rc) {
    printf("dispatch.pmap8_add.ns = %.1f\n", best[0] * 1e9);
    printf("dispatch.pmap8_add_sync.ns = %.1f\n", best[1] * 1e9);
    printf("dispatch.pmap8_add_queued.ns = %.1f\n", best[2] * 1e9);
  }
  xrt_client_release(c);
  return rc;
}

/* ---- collective.allreduce8_64MiB ---- */

static const char allreduce_src[] =
    "func.func @main(%x: tensor<16777216xf32>) -> tensor<16777216xf32> {\n"
    "  %0 = \"stablehlo.all_reduce\"(%x) ({\n"
    "    ^bb0(%a: tensor<f32>, %b: tensor<f32>):\n"
    "      %s = stablehlo.add %a, %b : tensor<f32>\n"
    "      stablehlo.return %s : tensor<f32>\n"
    "  }) {replica_groups = dense<[[0, 1, 2, 3, 4, 5, 6, 7]]> : tensor<1x8xi64>}\n"
    "     : (tensor<16777216xf32>) -> tensor<16777216xf32>\n"
    "  func.return %0 : tensor<16777216xf32>\n"
    "}\n";

static int bench_allreduce(void) {
  enum { REPS = 5, N = 16777216 };
  size_t bytes = (size_t)N * sizeof(float);
  float *host = malloc(bytes), *dst = malloc(bytes);
  xrt_client *c = host && dst ? bench_client(NDEV, 0) : NULL;
  xrt_executable *exe = c ? bench_compile_src(c, allreduce_src, NDEV) : NULL;
  xrt_buffer *args[NDEV][2];
  memset(args, 0, sizeof args);
  xrt_shape shape = {XRT_F32, 1, {N}};
  int rc = exe ? 0 : 1;
  if (!host || !dst) fprintf(stderr, "bench: out of memory\n");
  for (int d = 0; !rc && d < NDEV; d++) {
    for (size_t i = 0; i < (size_t)N; i++) host[i] = (float)(d + 1) + (float)(i & 7);
    xrt_status s = xrt_buffer_from_host(c, xrt_client_device(c, d), &shape, host, &args[d][0]);
    if (s) rc = bench_fail("upload", s);
  }
  double best_xrt = 1e30, best_mem = 1e30;
  for (int r = 0; !rc && r < REPS; r++) {
    double t0 = bench_now_s();
    xrt_event *done = NULL;
    xrt_status s = launch(exe, args, 1, &done);
    if (!s) s = xrt_event_await(done);
    double t = bench_now_s() - t0;
    xrt_event_release(done);
    if (s) rc = bench_fail("all_reduce", s);
    if (t < best_xrt) best_xrt = t;
    t0 = bench_now_s();
    for (int d = 0; d < NDEV; d++) {
      host[d] = (float)r; /* keeps each copy from being elided */
      memcpy(dst, host, bytes);
    }
    t = bench_now_s() - t0;
    if (dst[NDEV - 1] != (float)r) rc = 1;
    if (t < best_mem) best_mem = t;
  }
  /* Check one result: element i is sum over d of (d + 1 + (i & 7)). */
  if (!rc) {
    xrt_buffer *outs[NDEV][1];
    xrt_buffer *const *al[NDEV];
    xrt_buffer **ol[NDEV];
    for (int d = 0; d < NDEV; d++) al[d] = args[d], ol[d] = outs[d];
    xrt_event *done = NULL;
    xrt_status s = xrt_execute_multi(exe, al, NDEV, 1, ol, 1, NULL, &done);
    if (!s) s = xrt_event_await(done);
    xrt_event_release(done);
    if (!s) s = xrt_buffer_to_host(outs[NDEV - 1][0], dst, bytes);
    for (size_t i = 0; !s && !rc && i < (size_t)N; i += 4099)
      if (dst[i] != (float)(36 + 8 * (int)(i & 7))) {
        fprintf(stderr, "bench: all_reduce gave %g at %zu\n", dst[i], i);
        rc = 1;
      }
    if (s && !rc) rc = bench_fail("all_reduce result", s);
  }
  if (!rc) {
    printf("collective.allreduce8_64MiB.ms = %.3f\n", best_xrt * 1e3);
    printf("collective.memcpy_8x64MiB.ms = %.3f\n", best_mem * 1e3);
    printf("collective.allreduce8_64MiB.ratio_memcpy = %.3f\n", best_mem / best_xrt);
  }
  xrt_client_release(c);
  free(host);
  free(dst);
  return rc;
}

/* ---- scaling.2dev ---- */

/* 20000 iterations of a few elementwise ops on 1024 floats: compute-bound
 * and cache-resident. */
static const char loop_src[] =
    "func.func @main(%x: tensor<1024xf32>) -> tensor<1024xf32> {\n"
    "  %zero = stablehlo.constant dense<0> : tensor<i32>\n"
    "  %one = stablehlo.constant dense<1> : tensor<i32>\n"
    "  %n = stablehlo.constant dense<20000> : tensor<i32>\n"
    "  %k = stablehlo.constant dense<0.999> : tensor<1024xf32>\n"
    "  %c = stablehlo.constant dense<0.5> : tensor<1024xf32>\n"
    "  %r:2 = stablehlo.while(%i = %zero, %v = %x) : tensor<i32>, tensor<1024xf32>\n"
    "  cond {\n"
    "    %p = stablehlo.compare LT, %i, %n : (tensor<i32>, tensor<i32>) -> tensor<i1>\n"
    "    stablehlo.return %p : tensor<i1>\n"
    "  } do {\n"
    "    %a = stablehlo.multiply %v, %k : tensor<1024xf32>\n"
    "    %b = stablehlo.add %a, %c : tensor<1024xf32>\n"
    "    %d = stablehlo.multiply %b, %b : tensor<1024xf32>\n"
    "    %e = stablehlo.sqrt %d : tensor<1024xf32>\n"
    "    %j = stablehlo.add %i, %one : tensor<i32>\n"
    "    stablehlo.return %j, %e : tensor<i32>, tensor<1024xf32>\n"
    "  }\n"
    "  func.return %r#1 : tensor<1024xf32>\n"
    "}\n";

/* Runs exe on devices [0, ndev) at once (separate launches); seconds. */
static double run_on(xrt_executable *exe, xrt_client *c, xrt_buffer *const *x, int ndev) {
  xrt_buffer *out[2] = {NULL, NULL};
  xrt_event *done[2] = {NULL, NULL};
  xrt_status s = XRT_OK;
  double t0 = bench_now_s();
  for (int d = 0; d < ndev && !s; d++)
    s = xrt_execute_async(exe, xrt_client_device(c, d), &x[d], 1, &out[d], 1, NULL, &done[d]);
  for (int d = 0; d < ndev; d++)
    if (done[d]) {
      xrt_status e = xrt_event_await(done[d]);
      if (!s) s = e;
    }
  double t = bench_now_s() - t0;
  for (int d = 0; d < ndev; d++) {
    xrt_event_release(done[d]);
    xrt_buffer_release(out[d]);
  }
  if (s) {
    bench_fail("scaling run", s);
    return -1;
  }
  return t;
}

/* A compute-bound C loop (about as long as the xrt program). */
static void *spin(void *arg) {
  volatile float x = 0.5f;
  for (long i = 0; i < 20000L * 1024; i++) x = x * 0.999f + 0.5f;
  (void)arg;
  return NULL;
}

/* Seconds for one spin on this thread (n = 1) or on n = 2 threads. */
static double spin_on(int n) {
  pthread_t t[2];
  double t0 = bench_now_s();
  if (n == 1) {
    spin(NULL);
    return bench_now_s() - t0;
  }
  int made = 0;
  for (; made < n; made++)
    if (pthread_create(&t[made], NULL, spin, NULL) != 0) break;
  for (int i = 0; i < made; i++) pthread_join(t[i], NULL);
  return made == n ? bench_now_s() - t0 : -1;
}

static int bench_scaling(void) {
  enum { REPS = 5 };
  xrt_client *c = bench_client(2, 1);
  xrt_executable *exe = NULL;
  xrt_status s = c ? xrt_compile(c, loop_src, sizeof loop_src - 1, NULL, &exe) : XRT_INTERNAL;
  int rc = s ? (c ? bench_fail("compile loop", s) : 1) : 0;
  float v[1024];
  for (int i = 0; i < 1024; i++) v[i] = (float)i / 1024.0f;
  xrt_shape shape = {XRT_F32, 1, {1024}};
  xrt_buffer *x[2] = {NULL, NULL};
  for (int d = 0; !rc && d < 2; d++)
    if ((s = xrt_buffer_from_host(c, xrt_client_device(c, d), &shape, v, &x[d])) != XRT_OK)
      rc = bench_fail("upload", s);
  double best1 = 1e30, best2 = 1e30;
  if (!rc && run_on(exe, c, x, 2) < 0) rc = 1; /* warm up */
  for (int r = 0; !rc && r < REPS; r++) {
    double t1 = run_on(exe, c, x, 1), t2 = run_on(exe, c, x, 2);
    if (t1 < 0 || t2 < 0) rc = 1;
    if (t1 < best1) best1 = t1;
    if (t2 < best2) best2 = t2;
  }
  double c1 = 1e30, c2 = 1e30;
  for (int r = 0; !rc && r < REPS; r++) {
    double t1 = spin_on(1), t2 = spin_on(2);
    if (t2 < 0) rc = 1;
    if (t1 < c1) c1 = t1;
    if (t2 < c2) c2 = t2;
  }
  if (!rc) {
    printf("scaling.1dev.ms = %.3f\n", best1 * 1e3);
    printf("scaling.2dev.ms = %.3f\n", best2 * 1e3);
    printf("scaling.2dev.speedup = %.3f\n", 2 * best1 / best2);
    printf("scaling.2threads_c.speedup = %.3f\n", 2 * c1 / c2);
  }
  xrt_client_release(c);
  return rc;
}

int main(void) {
  int rc = bench_dispatch();
  if (!rc) rc = bench_allreduce();
  if (!rc) rc = bench_scaling();
  fflush(stdout);
  return rc;
}
