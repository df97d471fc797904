/*
 * test_sim_pool_edges.c - the edges of the simulator's per-device thread
 * pools (src/sim/pool.c) that test_pool.c does not reach.
 *
 * - threads_per_device out of 0..256 is refused with INVALID_ARGUMENT;
 *   256 itself is accepted and reported as the devices' "cores";
 * - threads_per_device 0 shares the machine's cores among the devices, at
 *   least one each (200 devices: one thread each on up to 399 cores);
 * - work splitting for 2, 3, 7 and 16 threads: fused elementwise loops
 *   from empty to 300001 elements, and tiled transposes below 1 MiB
 *   (one loop too small to split: serial on the caller) and above it
 *   (split), all checked element by element against a reference loop in
 *   this file;
 * - one pool running many loops in a row, and loops started by several
 *   host threads at once on the same device (a busy pool runs the loop
 *   serially on its caller), every result checked; the same through the
 *   plugin table, whose execute (unlike the core's queues) lets host
 *   threads run on one device at once;
 * - shutdown: a client whose workers never started, and one whose workers
 *   ran, released cleanly (ASan/valgrind check the joins and frees);
 * - an allocation failure at every step of creating a client with pools
 *   fails with RESOURCE_EXHAUSTED and leaks nothing;
 * - (Linux) the default thread count is the cores this process may run
 *   on, and a worker that finds itself on its caller's core narrows its
 *   own affinity to leave it (read back from /proc).
 */
#if defined(__linux__) && !defined(_GNU_SOURCE)
#define _GNU_SOURCE 1 /* sched_getaffinity, sched_setaffinity */
#endif
#include <pthread.h>
#if defined(__linux__)
#include <dirent.h>
#include <sched.h>
#endif

#include "test_plugin_abi.h"

/* y = (x + w) * x - w over n f32: one fused elementwise loop, which the
 * simulator cuts into pieces that the pool runs. */
static char *fused_prog(int64_t n) {
  static const char *fmt =
      "func.func @main(%%x: tensor<%lldxf32>, %%w: tensor<%lldxf32>) -> "
      "tensor<%lldxf32> {\n"
      "  %%a = stablehlo.add %%x, %%w : tensor<%lldxf32>\n"
      "  %%b = stablehlo.multiply %%a, %%x : tensor<%lldxf32>\n"
      "  %%c = stablehlo.subtract %%b, %%w : tensor<%lldxf32>\n"
      "  return %%c : tensor<%lldxf32>\n"
      "}\n";
  long long m = (long long)n;
  size_t len = strlen(fmt) + 7 * 24;
  char *s = (char *)malloc(len);
  assert_non_null(s);
  snprintf(s, len, fmt, m, m, m, m, m, m, m);
  return s;
}

/* Small integers so that every f32 operation is exact. */
static void fill(float *x, float *w, int64_t n, int seed) {
  for (int64_t i = 0; i < n; i++) {
    x[i] = (float)((i * 7 + seed) % 13) - 6.0f;
    w[i] = (float)((i * 3 + seed * 5) % 11) - 5.0f;
  }
}

/* Runs fused_prog(n) on device dev of c and checks every element. */
static void run_fused(xrt_client *c, xrt_executable *exe, int dev, int64_t n,
                      int seed) {
  float *x = (float *)malloc(sizeof(float) * (size_t)(n ? n : 1));
  float *w = (float *)malloc(sizeof(float) * (size_t)(n ? n : 1));
  float *y = (float *)malloc(sizeof(float) * (size_t)(n ? n : 1));
  assert_true(x && w && y);
  fill(x, w, n, seed);
  xrt_shape sh = tu_shape(XRT_F32, 1, &n);
  xrt_device *d = xrt_client_device(c, dev);
  xrt_buffer *in[2] = {0}, *out = NULL;
  assert_int_equal(xrt_buffer_from_host(c, d, &sh, x, &in[0]), XRT_OK);
  assert_int_equal(xrt_buffer_from_host(c, d, &sh, w, &in[1]), XRT_OK);
  xrt_status st = xrt_execute(exe, d, in, 2, &out, 1, NULL);
  if (st != XRT_OK) fail_msg("execute: %s", xrt_last_error());
  assert_int_equal(xrt_buffer_to_host(out, y, sizeof(float) * (size_t)n),
                   XRT_OK);
  for (int64_t i = 0; i < n; i++) {
    float want = (x[i] + w[i]) * x[i] - w[i];
    if (y[i] != want)
      fail_msg("n=%lld i=%lld: got %g, want %g", (long long)n, (long long)i,
               (double)y[i], (double)want);
  }
  xrt_buffer_release(out);
  xrt_buffer_release(in[0]);
  xrt_buffer_release(in[1]);
  free(x);
  free(w);
  free(y);
}

static xrt_executable *compile_fused(xrt_client *c, int64_t n) {
  char *p = fused_prog(n);
  xrt_executable *exe = tu_compile(c, p, 0, NULL);
  free(p);
  return exe;
}

static int64_t cores_of(xrt_client *c, int dev) {
  xrt_attribute a;
  assert_int_equal(
      xrt_device_attribute_find(xrt_client_device(c, dev), "cores", &a),
      XRT_OK);
  assert_int_equal(a.type, XRT_ATTRIBUTE_INT);
  return a.int_value;
}

static xrt_status try_client(int ndev, int threads, xrt_client **out) {
  xrt_client_options o;
  xrt_client_options_init(&o);
  o.num_devices = ndev;
  o.threads_per_device = threads;
  *out = NULL;
  return xrt_client_create(&o, out);
}

static void test_thread_count_range(void **state) {
  (void)state;
  xrt_client *c = NULL;
  assert_int_equal(try_client(1, 257, &c), XRT_INVALID_ARGUMENT);
  assert_null(c);
  TU_ASSERT_CONTAINS(xrt_last_error(), "threads_per_device must be 0..256");
  TU_ASSERT_CONTAINS(xrt_last_error(), "not 257");
  assert_int_equal(try_client(1, -1, &c), XRT_INVALID_ARGUMENT);
  assert_null(c);
  TU_ASSERT_CONTAINS(xrt_last_error(), "not -1");

  /* 256, the most, is accepted; a tiny loop never starts its workers. */
  assert_int_equal(try_client(2, 256, &c), XRT_OK);
  assert_int_equal(cores_of(c, 0), 256);
  assert_int_equal(cores_of(c, 1), 256);
  xrt_executable *exe = compile_fused(c, 5);
  run_fused(c, exe, 1, 5, 1);
  xrt_executable_release(exe);
  xrt_client_release(c);
}

/* threads_per_device 0: the online cores divided among the devices, at
 * least 1 (and at most 256). */
static void test_default_threads(void **state) {
  (void)state;
  xrt_client *c = NULL;
  /* more devices than cores: 200 (each with a host thread of the core:
   * valgrind allows 500 threads), 20 in a light run (valgrind) */
  int ndev = tu_light() ? 20 : 200;
  assert_int_equal(try_client(ndev, 0, &c), XRT_OK);
  long ncpu = -1;
#if defined(__linux__)
  cpu_set_t allowed;
  if (sched_getaffinity(0, sizeof allowed, &allowed) == 0)
    ncpu = CPU_COUNT(&allowed);
#elif defined(_SC_NPROCESSORS_ONLN)
  ncpu = sysconf(_SC_NPROCESSORS_ONLN);
#endif
  int64_t want = ncpu > 0 ? ncpu / ndev : 1;
  if (want < 1) want = 1;
  assert_int_equal(cores_of(c, 0), want);
  assert_int_equal(cores_of(c, ndev - 1), want);
  xrt_executable *exe = compile_fused(c, 64);
  run_fused(c, exe, ndev - 1, 64, 2);
  xrt_executable_release(exe);
  xrt_client_release(c);

  if (ncpu > 0) {
    assert_int_equal(try_client(1, 0, &c), XRT_OK);
    want = ncpu > 256 ? 256 : ncpu;
    assert_int_equal(cores_of(c, 0), want);
    xrt_client_release(c);
  }
}

/* y = transpose(x) of an r x c f32 matrix: a tiled transpose, which the
 * simulator runs through the pool (serially below 1 MiB). */
static char *transpose_prog(int64_t r, int64_t c) {
  char *s = (char *)malloc(512);
  assert_non_null(s);
  snprintf(s, 512,
           "func.func @main(%%x: tensor<%lldx%lldxf32>) -> "
           "tensor<%lldx%lldxf32> {\n"
           "  %%t = stablehlo.transpose %%x, dims = [1, 0] : "
           "(tensor<%lldx%lldxf32>) -> tensor<%lldx%lldxf32>\n"
           "  return %%t : tensor<%lldx%lldxf32>\n"
           "}\n",
           (long long)r, (long long)c, (long long)c, (long long)r,
           (long long)r, (long long)c, (long long)c, (long long)r,
           (long long)c, (long long)r);
  return s;
}

/* 1 if y (c x r) is the transpose of x (r x c). */
static int is_transpose(const float *x, const float *y, int64_t r,
                        int64_t c) {
  for (int64_t i = 0; i < r; i++)
    for (int64_t j = 0; j < c; j++)
      if (y[j * r + i] != x[i * c + j]) return 0;
  return 1;
}

/* Small (serial on the caller) and large (split) transposes. */
static void test_transpose_sizes(void **state) {
  (void)state;
  static const int64_t rc[][2] = {{3, 5}, {64, 64}, {700, 513}, {1030, 260}};
  static const int threads[] = {2, 5};
  for (size_t t = 0; t < TU_COUNT(threads); t++) {
    xrt_client *c = tu_client(1, threads[t], 0);
    for (size_t k = 0; k < TU_COUNT(rc); k++) {
      int64_t r = rc[k][0], n = rc[k][1], dims[2] = {r, n};
      char *p = transpose_prog(r, n);
      xrt_executable *exe = tu_compile(c, p, 0, NULL);
      free(p);
      float *x = (float *)malloc(sizeof(float) * (size_t)(r * n));
      float *y = (float *)malloc(sizeof(float) * (size_t)(r * n));
      assert_true(x && y);
      for (int64_t i = 0; i < r * n; i++) x[i] = (float)(i % 1000003);
      xrt_shape sh = tu_shape(XRT_F32, 2, dims);
      xrt_device *d = xrt_client_device(c, 0);
      xrt_buffer *in = NULL, *out = NULL;
      assert_int_equal(xrt_buffer_from_host(c, d, &sh, x, &in), XRT_OK);
      assert_int_equal(xrt_execute(exe, d, &in, 1, &out, 1, NULL), XRT_OK);
      assert_int_equal(
          xrt_buffer_to_host(out, y, sizeof(float) * (size_t)(r * n)),
          XRT_OK);
      assert_true(is_transpose(x, y, r, n));
      xrt_buffer_release(out);
      xrt_buffer_release(in);
      xrt_executable_release(exe);
      free(x);
      free(y);
    }
    xrt_client_release(c);
  }
}

/* Sizes from empty and tiny (serial) through just splittable to large,
 * for several pool sizes; every loop checked. */
static void test_split_sizes(void **state) {
  (void)state;
  static const int threads[] = {2, 3, 7, 16};
  static const int64_t sizes[] = {0, 1, 2, 3, 17, 1000, 4097, 65537, 300001};
  for (size_t t = 0; t < TU_COUNT(threads); t++) {
    xrt_client *c = tu_client(2, threads[t], 0);
    assert_int_equal(cores_of(c, 0), threads[t]);
    for (size_t s = 0; s < TU_COUNT(sizes); s++) {
      xrt_executable *exe = compile_fused(c, sizes[s]);
      run_fused(c, exe, (int)(s % 2), sizes[s], (int)(t * 10 + s));
      xrt_executable_release(exe);
    }
    xrt_client_release(c);
  }
}

/* One pool, many loops in a row: the workers wake for each. */
static void test_many_loops(void **state) {
  (void)state;
  xrt_client *c = tu_client(1, 4, 0);
  const int64_t n = 50000;
  xrt_executable *exe = compile_fused(c, n);
  for (int i = 0; i < 40; i++) run_fused(c, exe, 0, n, i);
  xrt_executable_release(exe);
  xrt_client_release(c);
}

typedef struct conc_job {
  xrt_client *c;
  xrt_executable *exe;
  int64_t n;
  int seed;
  int rounds;
} conc_job;

/* Runs fn on each of the n jobs of size bytes at jobs, one thread each;
 * the sum of what they return (the bad results). */
static intptr_t run_threads(void *(*fn)(void *), void *jobs, size_t size,
                            int n) {
  pthread_t tid[8];
  assert_true(n <= 8);
  for (int i = 0; i < n; i++)
    assert_int_equal(
        pthread_create(&tid[i], NULL, fn, (char *)jobs + (size_t)i * size), 0);
  intptr_t bad = 0;
  for (int i = 0; i < n; i++) {
    void *r = NULL;
    assert_int_equal(pthread_join(tid[i], &r), 0);
    bad += (intptr_t)r;
  }
  return bad;
}

/* cmocka's asserts longjmp, which must not happen off the main thread:
 * the host threads count their own failures. */
static void *conc_main(void *arg) {
  conc_job *j = (conc_job *)arg;
  int64_t n = j->n;
  float *x = (float *)malloc(sizeof(float) * (size_t)n);
  float *w = (float *)malloc(sizeof(float) * (size_t)n);
  float *y = (float *)malloc(sizeof(float) * (size_t)n);
  intptr_t bad = 0;
  if (!x || !w || !y) bad++;
  xrt_shape sh = tu_shape(XRT_F32, 1, &n);
  xrt_device *d = xrt_client_device(j->c, 0);
  for (int r = 0; !bad && r < j->rounds; r++) {
    fill(x, w, n, j->seed + r);
    xrt_buffer *in[2] = {0}, *out = NULL;
    if (xrt_buffer_from_host(j->c, d, &sh, x, &in[0]) != XRT_OK ||
        xrt_buffer_from_host(j->c, d, &sh, w, &in[1]) != XRT_OK ||
        xrt_execute(j->exe, d, in, 2, &out, 1, NULL) != XRT_OK ||
        xrt_buffer_to_host(out, y, sizeof(float) * (size_t)n) != XRT_OK)
      bad++;
    for (int64_t i = 0; !bad && i < n; i++)
      if (y[i] != (x[i] + w[i]) * x[i] - w[i]) bad++;
    xrt_buffer_release(out);
    xrt_buffer_release(in[0]);
    xrt_buffer_release(in[1]);
  }
  free(x);
  free(w);
  free(y);
  return (void *)bad;
}

/* Several host threads executing on the same device at once: loops that
 * find the pool busy run on their caller; all results stay right. */
static void test_concurrent_loops(void **state) {
  (void)state;
  enum { NT = 4 };
  xrt_client *c = tu_client(1, 3, 0);
  const int64_t n = 40000;
  xrt_executable *exe = compile_fused(c, n);
  conc_job jobs[NT];
  for (int i = 0; i < NT; i++) jobs[i] = (conc_job){c, exe, n, 100 * i, 12};
  assert_int_equal(run_threads(conc_main, jobs, sizeof jobs[0], NT), 0);
  xrt_executable_release(exe);
  xrt_client_release(c);
}

/* ---- the plugin's execute called directly from several host threads on
 * one device (the core queues a device's launches; the plugin table does
 * not): a loop that finds the pool busy runs serially on its caller ---- */

typedef struct pjob {
  const xrt_plugin_api *api;
  void *pc, *exe;
  int64_t n;
  int seed, rounds;
} pjob;

static void *plugin_main(void *arg) {
  pjob *j = (pjob *)arg;
  const int64_t r = j->n, c = j->n;
  size_t b = sizeof(float) * (size_t)(r * c);
  float *x = (float *)malloc(b), *y = (float *)malloc(b);
  intptr_t bad = !x || !y;
  xrt_plugin_error err;
  void *mem[2] = {NULL, NULL};
  for (int i = 0; !bad && i < 2; i++)
    if (j->api->buffer_alloc(j->pc, 0, b, &mem[i], &err) != XRT_OK) bad++;
  for (int k = 0; !bad && k < j->rounds; k++) {
    for (int64_t i = 0; i < r * c; i++) x[i] = (float)(i + j->seed + k);
    if (j->api->buffer_write(j->pc, 0, mem[0], x, b, &err) != XRT_OK) bad++;
    xrt_plugin_execute_args ea = tu_plugin_exec_args(j->exe, mem, 1, 1);
    ea.launch_id = (uint64_t)(j->seed * 1000 + k + 1); /* one each */
    if (!bad && (j->api->execute(j->pc, &ea, &err) != XRT_OK ||
                 j->api->buffer_read(j->pc, 0, mem[1], y, b, &err) != XRT_OK))
      bad++;
    if (!bad && !is_transpose(x, y, r, c)) bad++;
  }
  for (int i = 0; i < 2; i++)
    if (mem[i]) j->api->buffer_free(j->pc, 0, mem[i]);
  free(x);
  free(y);
  return (void *)bad;
}

static void test_plugin_concurrent_same_device(void **state) {
  (void)state;
  enum { NT = 4 };
  const int64_t n = 600; /* 600 x 600 f32: over 1 MiB, split */
  char *text = transpose_prog(n, n);
  xrt_program *prog = NULL;
  assert_int_equal(xrt_program_parse(text, strlen(text), NULL, &prog), XRT_OK);
  free(text);
  const xrt_ir_module *m = xrt_program_module(prog);
  const xrt_plugin_api *api = xrt_sim_plugin_api();
  static const xrt_plugin_host_api host = {
      .struct_size = sizeof host, .log = tu_quiet_log, .now_ns = tu_zero_ns};
  xrt_plugin_client_args ca = tu_plugin_client_args(1, (uint64_t)1 << 26);
  ca.host = &host;
  ca.threads_per_device = 3;
  void *pc = NULL, *exe = NULL;
  xrt_plugin_error err;
  assert_int_equal(api->client_create(&ca, &pc, &err), XRT_OK);
  int32_t dev = 0;
  xrt_plugin_compile_args a = tu_plugin_compile_args(m, 0, &dev);
  assert_int_equal(api->compile(pc, &a, &exe, &err), XRT_OK);
  pjob jobs[NT];
  for (int i = 0; i < NT; i++) jobs[i] = (pjob){api, pc, exe, n, 7 * i, 8};
  assert_int_equal(run_threads(plugin_main, jobs, sizeof jobs[0], NT), 0);
  api->executable_destroy(exe);
  api->client_destroy(pc);
  xrt_program_release(prog);
}

/* Release with workers never started, and right after they ran. */
static void test_shutdown(void **state) {
  (void)state;
  for (int k = 0; k < 5; k++) {
    xrt_client *c = tu_client(3, 8, 0);
    if (k % 2) {
      xrt_executable *exe = compile_fused(c, 20000);
      run_fused(c, exe, k % 3, 20000, k);
      xrt_executable_release(exe);
    }
    xrt_client_release(c);
  }
}

/* The Nth allocation fails while a client with pools is created: every
 * failure is RESOURCE_EXHAUSTED, and nothing leaks. */
static void test_create_alloc_fail(void **state) {
  (void)state;
  long n;
  for (n = 1; n < 10000; n++) {
    tu_counting_alloc a;
    tu_counting_init(&a, n);
    xrt_client_options o;
    xrt_client_options_init(&o);
    o.num_devices = 3;
    o.threads_per_device = 4;
    o.allocator = tu_counting_allocator(&a);
    xrt_client *c = NULL;
    xrt_status st = xrt_client_create(&o, &c);
    if (!atomic_load(&a.failed)) {
      assert_int_equal(st, XRT_OK);
      assert_int_equal(cores_of(c, 2), 4);
      xrt_client_release(c);
      assert_int_equal(atomic_load(&a.live), 0);
      break;
    }
    if (st == XRT_OK) {
      /* the failure was absorbed (a cache, say): the client still works */
      xrt_client_release(c);
    } else {
      assert_int_equal(st, XRT_RESOURCE_EXHAUSTED);
      assert_null(c);
      TU_ASSERT_CONTAINS(xrt_last_error(), "memory");
    }
    assert_int_equal(atomic_load(&a.live), 0);
  }
  assert_true(n > 3);
  assert_true(n < 10000);
}

#if defined(__linux__)
/* Sets the allowed cores of every thread of this process to set, or
 * counts those whose allowed cores are exactly set (when count). */
static int each_thread(const cpu_set_t *set, int count) {
  DIR *d = opendir("/proc/self/task");
  assert_non_null(d);
  int hits = 0;
  struct dirent *e;
  while ((e = readdir(d)) != NULL) {
    if (e->d_name[0] == '.') continue;
    pid_t tid = (pid_t)atoi(e->d_name);
    cpu_set_t got;
    if (!count)
      hits += sched_setaffinity(tid, sizeof *set, set) == 0;
    else if (sched_getaffinity(tid, sizeof got, &got) == 0 &&
             CPU_EQUAL(&got, set))
      hits++;
  }
  closedir(d);
  return hits;
}

/* A worker that shares its caller's core leaves it.  The worker starts
 * with this thread's cores; then every thread, the worker included, is
 * pinned to the first of them, where this thread (an idle device runs
 * the loops on its caller) meets the worker.  The worker must then allow
 * itself the other start cores, and results stay right throughout. */
static void test_worker_leaves_callers_core(void **state) {
  (void)state;
  cpu_set_t start, one, rest;
  assert_int_equal(sched_getaffinity(0, sizeof start, &start), 0);
  if (CPU_COUNT(&start) < 2) skip(); /* one core: nowhere to go */
  int first = 0;
  while (!CPU_ISSET(first, &start)) first++;
  CPU_ZERO(&one);
  CPU_SET(first, &one);
  rest = start;
  CPU_CLR(first, &rest);
  xrt_client *c = tu_client(1, 2, 0);
  const int64_t n = 200000;
  xrt_executable *exe = compile_fused(c, n);
  run_fused(c, exe, 0, n, 0); /* starts the worker with start's cores */
  assert_true(each_thread(&one, 0) >= 2); /* the worker may have moved */
  assert_int_equal(each_thread(&rest, 1), 0);
  /* the worker moves when it next runs, which on one shared core is when
   * the scheduler gives it a turn: up to 200 calls (10 were too few about
   * one run in thirty) */
  for (int i = 1; i <= 200 && each_thread(&rest, 1) != 1; i++)
    run_fused(c, exe, 0, n, i);
  assert_int_equal(each_thread(&rest, 1), 1);
  each_thread(&start, 0);
  xrt_executable_release(exe);
  xrt_client_release(c);
}

/* The default thread count is the cores the process may run on. */
static void test_default_threads_affinity(void **state) {
  (void)state;
  cpu_set_t start, one;
  assert_int_equal(sched_getaffinity(0, sizeof start, &start), 0);
  int first = 0;
  while (!CPU_ISSET(first, &start)) first++;
  CPU_ZERO(&one);
  CPU_SET(first, &one);
  assert_int_equal(sched_setaffinity(0, sizeof one, &one), 0);
  xrt_client *c = NULL;
  xrt_status st = try_client(1, 0, &c);
  assert_int_equal(sched_setaffinity(0, sizeof start, &start), 0);
  assert_int_equal(st, XRT_OK);
  assert_int_equal(cores_of(c, 0), 1);
  xrt_executable *exe = compile_fused(c, 100000);
  run_fused(c, exe, 0, 100000, 3);
  xrt_executable_release(exe);
  xrt_client_release(c);
}
#else
static void test_worker_leaves_callers_core(void **state) {
  (void)state;
  skip();
}
static void test_default_threads_affinity(void **state) {
  (void)state;
  skip();
}
#endif

TU_MAIN(NULL, NULL, cmocka_unit_test(test_thread_count_range),
        cmocka_unit_test(test_default_threads),
        cmocka_unit_test(test_split_sizes),
        cmocka_unit_test(test_transpose_sizes),
        cmocka_unit_test(test_many_loops),
        cmocka_unit_test(test_concurrent_loops),
        cmocka_unit_test(test_plugin_concurrent_same_device),
        cmocka_unit_test(test_shutdown),
        cmocka_unit_test(test_create_alloc_fail),
        cmocka_unit_test(test_worker_leaves_callers_core),
        cmocka_unit_test(test_default_threads_affinity))
