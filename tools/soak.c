/*
 * soak.c - `make soak`: 8 host threads for SOAK_SECONDS (default 60) doing
 * mixed work on shared objects of one 4-device client, checking every
 * result against a reference computed here; fails on any error and when
 * resident memory grows.
 *
 * Shared: the client, two executables (a 64-element step and a 4-replica
 * launch with two all_reduces), a pmap (its program generated per
 * signature), and two variables that every thread reshards and reads.
 * Each thread picks, at random, one of:
 *   compile    a program from a set of 32 variants (half of them with the
 *              cache off, so the compiler itself runs), run once, released
 *   transfer   upload, download, copy to another device, download
 *   execute    a chain of three asynchronous executions, then a download
 *   pmap       a pmap call on a chunked array over 2 or 4 devices
 *   sharded    an array sharded by a random spec, assembled back, and the
 *              all_reduce launch over a chunked one
 *   reshard    one or both variables to random formats, then read back
 * Variables keep their values through reshards, so any thread can check
 * them at any time.
 *
 * Memory: VmRSS (/proc/self/status) is sampled after a warm-up (every
 * thread has done every kind of work, every cache and pool reached its
 * working size) and at the end; the run fails if it grew by more than 10%
 * + 16 MiB.  That slack absorbs what is not a leak: glibc's per-thread
 * malloc arenas settling, their fragmentation, and the simulator's
 * per-device cache of freed blocks; a leak of even 32 bytes per operation
 * exceeds it within a few minutes at the rates this program runs (the
 * report prints ops/s, so the sensitivity can be checked).
 *
 * Usage: soak [seconds] (or SOAK_SECONDS in the environment).
 */
#define _POSIX_C_SOURCE 200809L
#include <math.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "../xrt.h"
#include "../test/spec_util.h"

#define NDEV 4
#define NTHREADS 8
#define STEP_N 64   /* elements of the step executable's input */
#define COLL_N 16   /* elements of the launch's logical array (4 per device) */
#define VAR_R 16    /* variable 0: VAR_R x VAR_C */
#define VAR_C 8
#define VAR1_N 32   /* variable 1: VAR1_N elements */

/* Under ASan or TSan, resident memory grows by design (the quarantine of
 * freed blocks, shadow memory, race history): the memory check is off. */
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
#define SOAK_SANITIZED 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer)
#define SOAK_SANITIZED 1
#endif
#endif
#ifndef SOAK_SANITIZED
#define SOAK_SANITIZED 0
#endif

enum { OP_COMPILE, OP_TRANSFER, OP_EXECUTE, OP_PMAP, OP_SHARDED, OP_RESHARD,
       OP_KINDS };
static const char *const op_names[OP_KINDS] = {
    "compile", "transfer", "execute", "pmap", "sharded", "reshard"};

/* f(x)[i] = 2 * x[63 - i] + 1 */
static const char *kStep =
    "func.func @main(%x: tensor<64xf32>) -> tensor<64xf32> {\n"
    "  %two = stablehlo.constant dense<2.0> : tensor<64xf32>\n"
    "  %one = stablehlo.constant dense<1.0> : tensor<64xf32>\n"
    "  %0 = stablehlo.multiply %x, %two : tensor<64xf32>\n"
    "  %1 = stablehlo.reverse %0, dims = [0] : tensor<64xf32>\n"
    "  %2 = stablehlo.add %1, %one : tensor<64xf32>\n"
    "  return %2 : tensor<64xf32>\n"
    "}\n";

/* Per participant: r = sum of a over the 4 replicas, out = sum of r * a. */
static const char *kColl =
    "func.func @main(%a: tensor<4xf32>) -> tensor<4xf32> {\n"
    "  %r = \"stablehlo.all_reduce\"(%a) ({\n"
    "  ^bb0(%x: tensor<f32>, %y: tensor<f32>):\n"
    "    %s = stablehlo.add %x, %y : tensor<f32>\n"
    "    stablehlo.return %s : tensor<f32>\n"
    "  }) {replica_groups = dense<[[0, 1, 2, 3]]> : tensor<1x4xi64>}\n"
    "    : (tensor<4xf32>) -> tensor<4xf32>\n"
    "  %m = stablehlo.multiply %r, %a : tensor<4xf32>\n"
    "  %q = \"stablehlo.all_reduce\"(%m) ({\n"
    "  ^bb0(%x: tensor<f32>, %y: tensor<f32>):\n"
    "    %s = stablehlo.add %x, %y : tensor<f32>\n"
    "    stablehlo.return %s : tensor<f32>\n"
    "  }) {replica_groups = dense<[[0, 1, 2, 3]]> : tensor<1x4xi64>}\n"
    "    : (tensor<4xf32>) -> tensor<4xf32>\n"
    "  return %q : tensor<4xf32>\n"
    "}\n";

/* ---- shared state ---- */

static xrt_client *g_client;
static xrt_device *g_dev[NDEV];
static xrt_executable *g_step, *g_coll;
static xrt_pmap *g_pmap;
static xrt_variable *g_var[2];
static float g_var0[VAR_R * VAR_C], g_var1[VAR1_N];
static atomic_bool g_stop, g_failed;
static atomic_ullong g_ops[OP_KINDS];
static pthread_mutex_t g_report_mu = PTHREAD_MUTEX_INITIALIZER;

/* Reports the first failure (with the operation and xrt's message) and
 * stops every thread. */
static void soak_fail(int thread, const char *op, const char *what) {
  pthread_mutex_lock(&g_report_mu);
  if (!atomic_exchange(&g_failed, true))
    fprintf(stderr, "soak: thread %d, %s: %s\n", thread, op, what);
  pthread_mutex_unlock(&g_report_mu);
  atomic_store(&g_stop, true);
}

/* On failure: reports and returns false. */
static bool soak_ok(int thread, const char *op, xrt_status s) {
  if (s == XRT_OK) return true;
  char msg[1200];
  snprintf(msg, sizeof msg, "%s: %s", xrt_strerror(s), xrt_last_error());
  soak_fail(thread, op, msg);
  return false;
}

static bool soak_same(int thread, const char *op, const float *got,
                      const float *want, size_t n) {
  for (size_t i = 0; i < n; i++)
    if (!(got[i] == want[i])) {
      char msg[200];
      snprintf(msg, sizeof msg, "element %zu is %.9g, want %.9g", i,
               (double)got[i], (double)want[i]);
      soak_fail(thread, op, msg);
      return false;
    }
  return true;
}

static uint32_t rnd(uint64_t *s) { /* xorshift64*, one state per thread */
  *s ^= *s >> 12;
  *s ^= *s << 25;
  *s ^= *s >> 27;
  return (uint32_t)((*s * 2685821657736338717ull) >> 32);
}

/* Small integers, exact in f32 through every operation here. */
static void fill(uint64_t *seed, float *x, size_t n) {
  for (size_t i = 0; i < n; i++) x[i] = (float)((int)(rnd(seed) % 33) - 16);
}

static double now_s(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec + t.tv_nsec * 1e-9;
}

/* VmRSS in KiB, or -1. */
static long rss_kib(void) {
  FILE *f = fopen("/proc/self/status", "r");
  if (!f) return -1;
  char line[256];
  long kib = -1;
  while (fgets(line, sizeof line, f))
    if (sscanf(line, "VmRSS: %ld", &kib) == 1) break;
  fclose(f);
  return kib;
}

/* ---- formats ---- */

/* Device lists the formats and launches use. */
static const int kOrders[4][NDEV] = {
    {0, 1, 2, 3}, {3, 2, 1, 0}, {1, 3, 0, 2}, {2, 0, 3, 1}};

static void devs_of(const int *ids, int n, xrt_device **out) {
  for (int i = 0; i < n; i++) out[i] = g_dev[ids[i]];
}

/* A random spec of a rank-r array whose dimension 0 has 16 or 32
 * elements (divisible by every count here), over *n devices. */
static xrt_sharding_spec random_spec(uint64_t *seed, int rank, int *n) {
  static const int counts[3] = {1, 2, 4};
  *n = counts[rnd(seed) % 3];
  switch (rnd(seed) % 3) {
  case 0: return tu_spec_chunked(rank, 0, *n);
  case 1: return tu_spec_replicated(rank, *n);
  default:
    if (rank == 2 && *n == 4) return tu_spec_chunked2(2, 2);
    return tu_spec_chunked(rank, 0, *n);
  }
}

/* ---- the operations ---- */

static void ref_step(const float *x, float *y) {
  for (int i = 0; i < STEP_N; i++) y[i] = 2.0f * x[STEP_N - 1 - i] + 1.0f;
}

static void ref_coll(const float *a, float *out) {
  for (int i = 0; i < 4; i++) {
    float r = 0, q = 0;
    for (int p = 0; p < NDEV; p++) r += a[4 * p + i];
    for (int p = 0; p < NDEV; p++) q += r * a[4 * p + i];
    for (int p = 0; p < NDEV; p++) out[4 * p + i] = q;
  }
}

/* One of 32 variants: y = x * k + (k - 3), k = variant + 1. */
static bool op_compile(int th, uint64_t *seed) {
  int k = (int)(rnd(seed) % 32) + 1;
  char text[512];
  snprintf(text, sizeof text,
           "func.func @main(%%x: tensor<16xf32>) -> tensor<16xf32> {\n"
           "  %%k = stablehlo.constant dense<%d.0> : tensor<16xf32>\n"
           "  %%b = stablehlo.constant dense<%d.0> : tensor<16xf32>\n"
           "  %%0 = stablehlo.multiply %%x, %%k : tensor<16xf32>\n"
           "  %%1 = stablehlo.add %%0, %%b : tensor<16xf32>\n"
           "  return %%1 : tensor<16xf32>\n"
           "}\n", k, k - 3);
  xrt_compile_options o;
  xrt_compile_options_init(&o);
  o.cache_disable = (int)(rnd(seed) & 1);
  xrt_executable *e = NULL;
  if (!soak_ok(th, "compile", xrt_compile(g_client, text, strlen(text), &o,
                                          &e)))
    return false;
  float x[16], y[16], want[16];
  fill(seed, x, 16);
  for (int i = 0; i < 16; i++) want[i] = x[i] * (float)k + (float)(k - 3);
  xrt_shape sh = {.dtype = XRT_F32, .rank = 1, .dims = {16}};
  xrt_device *d = g_dev[rnd(seed) % NDEV];
  xrt_buffer *in = NULL, *out = NULL;
  bool ok = soak_ok(th, "compile: upload",
                    xrt_buffer_from_host(g_client, d, &sh, x, &in)) &&
            soak_ok(th, "compile: execute",
                    xrt_execute(e, d, &in, 1, &out, 1, NULL)) &&
            soak_ok(th, "compile: download",
                    xrt_buffer_to_host(out, y, sizeof y)) &&
            soak_same(th, "compile", y, want, 16);
  xrt_buffer_release(in);
  xrt_buffer_release(out);
  xrt_executable_release(e);
  return ok;
}

static bool op_transfer(int th, uint64_t *seed) {
  int64_t n = 1 + (int64_t)(rnd(seed) % 4096);
  float *x = malloc((size_t)n * sizeof *x), *y = malloc((size_t)n * sizeof *y);
  if (!x || !y) {
    free(x);
    free(y);
    soak_fail(th, "transfer", "host memory exhausted");
    return false;
  }
  fill(seed, x, (size_t)n);
  xrt_shape sh = {.dtype = XRT_F32, .rank = 1, .dims = {n}};
  xrt_device *a = g_dev[rnd(seed) % NDEV], *b = g_dev[rnd(seed) % NDEV];
  xrt_buffer *u = NULL, *v = NULL;
  size_t bytes = (size_t)n * sizeof *y;
  bool ok = soak_ok(th, "transfer: upload",
                    xrt_buffer_from_host(g_client, a, &sh, x, &u)) &&
            soak_ok(th, "transfer: download", xrt_buffer_to_host(u, y, bytes)) &&
            soak_same(th, "transfer", y, x, (size_t)n) &&
            soak_ok(th, "transfer: copy", xrt_buffer_copy_to_device(u, b, &v));
  if (ok) {
    memset(y, 0, bytes);
    ok = soak_ok(th, "transfer: download copy",
                 xrt_buffer_to_host(v, y, bytes)) &&
         soak_same(th, "transfer: copy", y, x, (size_t)n);
  }
  xrt_buffer_release(u);
  xrt_buffer_release(v);
  free(x);
  free(y);
  return ok;
}

/* Three chained asynchronous executions of the shared step on one device;
 * only the last is awaited (through its download). */
static bool op_execute(int th, uint64_t *seed) {
  float x[STEP_N], want[STEP_N], t[STEP_N], y[STEP_N];
  fill(seed, x, STEP_N);
  ref_step(x, t);
  ref_step(t, want);
  ref_step(want, t);
  memcpy(want, t, sizeof want);
  xrt_shape sh = {.dtype = XRT_F32, .rank = 1, .dims = {STEP_N}};
  xrt_device *d = g_dev[rnd(seed) % NDEV];
  xrt_buffer *b[4] = {NULL, NULL, NULL, NULL};
  xrt_event *up = NULL;
  bool ok = soak_ok(th, "execute: upload",
                    xrt_buffer_from_host_async(g_client, d, &sh, x, &b[0],
                                               &up));
  for (int k = 0; ok && k < 3; k++)
    ok = soak_ok(th, "execute", xrt_execute_async(g_step, d, &b[k], 1,
                                                  &b[k + 1], 1, NULL, NULL));
  if (ok)
    ok = soak_ok(th, "execute: download",
                 xrt_buffer_to_host(b[3], y, sizeof y)) &&
         soak_same(th, "execute", y, want, STEP_N);
  /* x must outlive the upload even when a later call failed. */
  if (up) xrt_event_await(up);
  xrt_event_release(up);
  for (int k = 0; k < 4; k++) xrt_buffer_release(b[k]);
  return ok;
}

/* The pmap's program for one signature: y = 3 * x - 1 on the pieces. */
static xrt_status pmap_source(void *user, const xrt_shape *shapes, int n,
                              char **out_text, size_t *out_len) {
  (void)user;
  if (n != 1 || shapes[0].rank != 1) return XRT_INVALID_ARGUMENT;
  long long k = (long long)shapes[0].dims[0];
  char *t = malloc(512);
  if (!t) return XRT_RESOURCE_EXHAUSTED;
  int len = snprintf(t, 512,
                     "func.func @main(%%x: tensor<%lldxf32>) -> "
                     "tensor<%lldxf32> {\n"
                     "  %%c = stablehlo.constant dense<3.0> : tensor<%lldxf32>\n"
                     "  %%o = stablehlo.constant dense<1.0> : tensor<%lldxf32>\n"
                     "  %%0 = stablehlo.multiply %%x, %%c : tensor<%lldxf32>\n"
                     "  %%1 = stablehlo.subtract %%0, %%o : tensor<%lldxf32>\n"
                     "  return %%1 : tensor<%lldxf32>\n"
                     "}\n", k, k, k, k, k, k, k);
  *out_text = t;
  *out_len = (size_t)len;
  return XRT_OK;
}

static bool op_pmap(int th, uint64_t *seed) {
  int n = (rnd(seed) & 1) ? 4 : 2;
  int64_t len = (rnd(seed) & 1) ? 16 : 32;
  float x[32], y[32], want[32];
  fill(seed, x, (size_t)len);
  for (int64_t i = 0; i < len; i++) want[i] = 3.0f * x[i] - 1.0f;
  xrt_device *d[NDEV];
  devs_of(kOrders[rnd(seed) % 4], n, d);
  xrt_shape sh = {.dtype = XRT_F32, .rank = 1, .dims = {len}};
  xrt_sharding_spec spec = tu_spec_chunked(1, 0, n);
  xrt_sharded_array *in = NULL, *out = NULL;
  bool ok = soak_ok(th, "pmap: shard",
                    xrt_sharded_array_from_host(g_client, &sh, x, &spec, d, n,
                                                &in)) &&
            soak_ok(th, "pmap: call",
                    xrt_pmap_call(g_pmap, &in, 1, &out, 1, NULL, NULL)) &&
            /* The output stacks the pieces (n x len/n): the same order. */
            soak_ok(th, "pmap: assemble",
                    xrt_sharded_array_to_host(out, y, sizeof y)) &&
            soak_same(th, "pmap", y, want, (size_t)len);
  xrt_sharded_array_release(in);
  xrt_sharded_array_release(out);
  return ok;
}

static bool op_sharded(int th, uint64_t *seed) {
  /* A 32 x 4 array under a random spec, assembled back. */
  float x[128], y[128];
  fill(seed, x, 128);
  int n;
  xrt_sharding_spec spec = random_spec(seed, 2, &n);
  xrt_device *d[NDEV];
  devs_of(kOrders[rnd(seed) % 4], n, d);
  xrt_shape sh = {.dtype = XRT_F32, .rank = 2, .dims = {32, 4}};
  xrt_sharded_array *a = NULL;
  bool ok = soak_ok(th, "sharded: shard",
                    xrt_sharded_array_from_host(g_client, &sh, x, &spec, d, n,
                                                &a)) &&
            soak_ok(th, "sharded: assemble",
                    xrt_sharded_array_to_host(a, y, sizeof y)) &&
            soak_same(th, "sharded", y, x, 128);
  xrt_sharded_array_release(a);
  if (!ok) return false;
  /* The all_reduce launch over a chunked array on all four devices. */
  float in[COLL_N], want[COLL_N], got[COLL_N];
  fill(seed, in, COLL_N);
  ref_coll(in, want);
  xrt_shape cs = {.dtype = XRT_F32, .rank = 1, .dims = {COLL_N}};
  xrt_sharding_spec ch = tu_spec_chunked(1, 0, NDEV);
  devs_of(kOrders[rnd(seed) % 4], NDEV, d);
  xrt_sharded_array *ca = NULL, *co = NULL;
  xrt_execute_options o;
  xrt_execute_options_init(&o);
  const xrt_sharding_spec *specs[1] = {&ch};
  o.output_specs = specs;
  ok = soak_ok(th, "sharded: shard launch input",
               xrt_sharded_array_from_host(g_client, &cs, in, &ch, d, NDEV,
                                           &ca)) &&
       soak_ok(th, "sharded: launch",
               xrt_execute_sharded(g_coll, &ca, 1, &co, 1, &o, NULL)) &&
       soak_ok(th, "sharded: assemble launch output",
               xrt_sharded_array_to_host(co, got, sizeof got)) &&
       soak_same(th, "sharded: launch", got, want, COLL_N);
  xrt_sharded_array_release(ca);
  xrt_sharded_array_release(co);
  return ok;
}

/* Reshards one variable, or both in one atomic call, to random formats,
 * then reads both back. */
static bool op_reshard(int th, uint64_t *seed) {
  xrt_sharding_spec specs[2];
  xrt_device *d[2][NDEV];
  xrt_variable_format f[2];
  xrt_variable *v[2];
  int count = (rnd(seed) % 3 == 0) ? 2 : 1;
  int first = (int)(rnd(seed) & 1);
  for (int k = 0; k < count; k++) {
    int which = (first + k) & 1, n;
    v[k] = g_var[which];
    specs[k] = random_spec(seed, which == 0 ? 2 : 1, &n);
    devs_of(kOrders[rnd(seed) % 4], n, d[k]);
    f[k] = (xrt_variable_format){&specs[k], d[k], n};
  }
  if (!soak_ok(th, "reshard", xrt_variables_reshard(v, f, count, NULL)))
    return false;
  float y0[VAR_R * VAR_C], y1[VAR1_N];
  return soak_ok(th, "reshard: read variable 0",
                 xrt_variable_to_host(g_var[0], y0, sizeof y0)) &&
         soak_same(th, "reshard: variable 0", y0, g_var0, VAR_R * VAR_C) &&
         soak_ok(th, "reshard: read variable 1",
                 xrt_variable_to_host(g_var[1], y1, sizeof y1)) &&
         soak_same(th, "reshard: variable 1", y1, g_var1, VAR1_N);
}

typedef bool (*op_fn)(int th, uint64_t *seed);
static const op_fn ops[OP_KINDS] = {op_compile, op_transfer, op_execute,
                                    op_pmap, op_sharded, op_reshard};

typedef struct worker {
  int id;
  atomic_int rounds; /* full rounds of every kind (the warm-up needs one) */
} worker;

static void *work(void *arg) {
  worker *w = (worker *)arg;
  uint64_t seed = 0x9E3779B97F4A7C15ull * (uint64_t)(w->id + 1);
  /* First every kind once, in order (the warm-up), then at random. */
  for (int k = 0; k < OP_KINDS && !atomic_load(&g_stop); k++) {
    if (!ops[k](w->id, &seed)) return NULL;
    atomic_fetch_add(&g_ops[k], 1);
  }
  atomic_fetch_add(&w->rounds, 1);
  while (!atomic_load(&g_stop)) {
    int k = (int)(rnd(&seed) % OP_KINDS);
    if (!ops[k](w->id, &seed)) return NULL;
    atomic_fetch_add(&g_ops[k], 1);
  }
  return NULL;
}

/* ---- setup ---- */

static bool setup(void) {
  xrt_client_options co;
  xrt_client_options_init(&co);
  co.num_devices = NDEV;
  co.threads_per_device = 1;
  static const int ids[NDEV] = {0, 1, 2, 3};
  xrt_compile_options o;
  xrt_compile_options_init(&o);
  xrt_pmap_options po;
  xrt_pmap_options_init(&po);
  po.source = pmap_source;
  xrt_status s = xrt_client_create(&co, &g_client);
  for (int k = 0; !s && k < NDEV; k++) g_dev[k] = xrt_client_device(g_client, k);
  if (!s) s = xrt_compile(g_client, kStep, strlen(kStep), NULL, &g_step);
  o.num_replicas = NDEV;
  o.device_assignment = ids;
  if (!s) s = xrt_compile(g_client, kColl, strlen(kColl), &o, &g_coll);
  if (!s) s = xrt_pmap_create(g_client, &po, &g_pmap);
  uint64_t seed = 12345;
  fill(&seed, g_var0, VAR_R * VAR_C);
  fill(&seed, g_var1, VAR1_N);
  xrt_sharding_spec s0 = tu_spec_chunked(2, 0, NDEV);
  xrt_sharding_spec s1 = tu_spec_replicated(1, 2);
  xrt_shape sh0 = {.dtype = XRT_F32, .rank = 2, .dims = {VAR_R, VAR_C}};
  xrt_shape sh1 = {.dtype = XRT_F32, .rank = 1, .dims = {VAR1_N}};
  xrt_variable_format f0 = {&s0, g_dev, NDEV}, f1 = {&s1, g_dev, 2};
  if (!s) s = xrt_variable_create(g_client, "v0", &sh0, g_var0, &f0, &g_var[0]);
  if (!s) s = xrt_variable_create(g_client, "v1", &sh1, g_var1, &f1, &g_var[1]);
  if (s)
    fprintf(stderr, "soak: setup: %s: %s\n", xrt_strerror(s), xrt_last_error());
  return s == XRT_OK;
}

static void teardown(void) {
  xrt_variable_release(g_var[0]);
  xrt_variable_release(g_var[1]);
  xrt_pmap_release(g_pmap);
  xrt_executable_release(g_step);
  xrt_executable_release(g_coll);
  xrt_client_release(g_client);
}

static void print_ops(const char *when, double elapsed, long rss) {
  unsigned long long total = 0;
  printf("%s: %.0f s,", when, elapsed);
  for (int k = 0; k < OP_KINDS; k++) {
    unsigned long long n = atomic_load(&g_ops[k]);
    total += n;
    printf(" %s %llu", op_names[k], n);
  }
  printf(" (total %llu), VmRSS %ld KiB\n", total, rss);
  fflush(stdout);
}

static void sleep_s(double s) {
  struct timespec t = {(time_t)s, (long)((s - (double)(time_t)s) * 1e9)};
  nanosleep(&t, NULL);
}

int main(int argc, char **argv) {
  const char *arg = argc > 1 ? argv[1] : getenv("SOAK_SECONDS");
  double seconds = arg && *arg ? atof(arg) : 60;
  if (!(seconds >= 1)) {
    fprintf(stderr, "soak: bad duration '%s' (seconds, at least 1)\n", arg);
    return 2;
  }
  if (!setup()) return 1;
  worker w[NTHREADS];
  pthread_t t[NTHREADS];
  double t0 = now_s();
  for (int i = 0; i < NTHREADS; i++) {
    w[i].id = i;
    atomic_init(&w[i].rounds, 0);
    if (pthread_create(&t[i], NULL, work, &w[i])) {
      fprintf(stderr, "soak: cannot start thread %d\n", i);
      atomic_store(&g_stop, true);
      for (int j = 0; j < i; j++) pthread_join(t[j], NULL);
      teardown();
      return 1;
    }
  }
  /* Warm-up: every thread through every kind once, and then a tenth of
   * the run (at least 2 s, at most 30 s) for pools and caches to settle. */
  for (bool all = false; !all && !atomic_load(&g_stop);) {
    all = true;
    for (int i = 0; i < NTHREADS; i++) all &= atomic_load(&w[i].rounds) > 0;
    if (!all) sleep_s(0.01);
  }
  double warm = seconds / 10 < 2 ? 2 : seconds / 10 > 30 ? 30 : seconds / 10;
  while (!atomic_load(&g_stop) && now_s() - t0 < warm) sleep_s(0.05);
  long rss0 = rss_kib();
  print_ops("start (after warm-up)", now_s() - t0, rss0);
  double t1 = now_s(), report = seconds / 10 > 60 ? 60 : seconds / 10;
  double next = t1 + report;
  while (!atomic_load(&g_stop) && now_s() - t1 < seconds) {
    sleep_s(0.05);
    if (now_s() >= next) {
      print_ops("progress", now_s() - t0, rss_kib());
      next += report;
    }
  }
  atomic_store(&g_stop, true);
  for (int i = 0; i < NTHREADS; i++) pthread_join(t[i], NULL);
  double elapsed = now_s() - t0;
  long rss1 = rss_kib();
  print_ops("end", elapsed, rss1);
  unsigned long long total = 0;
  for (int k = 0; k < OP_KINDS; k++) total += atomic_load(&g_ops[k]);
  printf("ops/s %.0f over %d threads\n", (double)total / elapsed, NTHREADS);
  teardown();
  if (atomic_load(&g_failed)) {
    printf("soak: FAILED (see the error above)\n");
    return 1;
  }
  long limit = rss0 + rss0 / 10 + 16 * 1024;
  printf("VmRSS start %ld KiB, end %ld KiB, limit %ld KiB (start + 10%% + "
         "16 MiB)\n", rss0, rss1, limit);
  if (rss0 < 0 || rss1 < 0) {
    printf("soak: FAILED: cannot read VmRSS from /proc/self/status\n");
    return 1;
  }
  if (SOAK_SANITIZED) {
    printf("soak: OK, no errors (memory not checked: sanitizer build)\n");
    return 0;
  }
  if (rss1 > limit) {
    printf("soak: FAILED: resident memory grew\n");
    return 1;
  }
  printf("soak: OK, no errors\n");
  return 0;
}
