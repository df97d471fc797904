/*
 * test_util.h - helpers shared by the cmocka tests: a client fixture, a
 * compile-upload-execute-download helper, and array assertions; compiles
 * for argument shapes, a main of one group of tests, contexts, plugin
 * clients, pmaps, a plain and a counting allocator, files, program
 * texts from templates (tu_tpl) and of one dot_general (tu_dot_text),
 * hashed values -1, 0, 1 (tu_trit), and (spec_util.h) sharding specs.
 * Focused headers build on it: test_plugin_abi.h (the plugin ABI used
 * directly), test_kernels.h (element codecs and reference kernels),
 * test_bad_progs.h (tables of refused programs), dot_concat_ref.h (the
 * references of the dot_concat tests).
 *
 * Expected values in the tests are always computed independently (by hand or
 * with libm in the test), never read back from xrt.
 */
#ifndef XRT_TEST_UTIL_H
#define XRT_TEST_UTIL_H

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <math.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../xrt.h"
#include "spec_util.h"

#define TU_COUNT(a) (sizeof(a) / sizeof((a)[0]))
#define TU_MAX_OUTS 8

/* A shape from a dims list: TU_SHAPE(XRT_F32, 2, 3) is tensor<2x3xf32>. */
#define TU_SHAPE(dt, ...)                                                   \
  tu_shape((dt), (int)TU_COUNT(((int64_t[]){__VA_ARGS__})),                 \
           (const int64_t[]){__VA_ARGS__})
#define TU_SCALAR(dt) tu_shape((dt), 0, NULL)

/* Whether the run is a light one (XRT_TEST_LIGHT set: `make
 * test-valgrind`, where every multiply-add costs a hundred times more):
 * the largest cases are left to the other runs (test, asan, coverage). */
static inline int tu_light(void) {
  const char *v = getenv("XRT_TEST_LIGHT");
  return v && *v && strcmp(v, "0") != 0;
}

static inline xrt_shape tu_shape(xrt_dtype dt, int rank, const int64_t *dims) {
  xrt_shape s;
  memset(&s, 0, sizeof s);
  s.dtype = dt;
  s.rank = rank;
  for (int i = 0; i < rank; i++) s.dims[i] = dims[i];
  return s;
}

/* One host input of tu_run. */
typedef struct tu_in {
  xrt_shape shape;
  const void *data;
} tu_in;

/* Host copies of every output of one tu_run. */
typedef struct tu_out {
  int n;
  xrt_shape shape[TU_MAX_OUTS];
  void *data[TU_MAX_OUTS];
  size_t bytes[TU_MAX_OUTS];
} tu_out;

/* The message of the last failure, copied so later calls cannot clobber it. */
static char tu_msg[4096];

static inline void tu_save_error(void) {
  snprintf(tu_msg, sizeof tu_msg, "%s", xrt_last_error());
}

static inline void tu_out_free(tu_out *o) {
  for (int i = 0; i < o->n; i++) free(o->data[i]);
  o->n = 0;
}

static inline xrt_status tu_download(xrt_buffer **bufs, int n, tu_out *out) {
  for (int i = 0; i < n; i++) {
    xrt_status st = xrt_buffer_shape(bufs[i], &out->shape[i]);
    if (st != XRT_OK) return st;
    out->bytes[i] = xrt_buffer_bytes(bufs[i]);
    out->data[i] = calloc(1, out->bytes[i] ? out->bytes[i] : 1);
    out->n = i + 1;
    st = xrt_buffer_to_host(bufs[i], out->data[i], out->bytes[i]);
    if (st != XRT_OK) return st;
  }
  return XRT_OK;
}

/* Compiles prog for client, uploads the inputs to device 0, executes reps
 * times on those same buffers (so the device may keep what it derives from
 * them, as packed weights) and copies every output of call r to host
 * memory in out[r] (free each with tu_out_free).  On failure returns the
 * status with the message in tu_msg, and out holds nothing. */
static inline xrt_status tu_run_reps(xrt_client *client, const char *prog,
                                     int nin, const tu_in *in, int reps,
                                     tu_out *out) {
  xrt_executable *exe = NULL;
  xrt_buffer *args[16] = {0}, *outs[TU_MAX_OUTS] = {0};
  xrt_device *dev = xrt_client_device(client, 0);
  memset(out, 0, sizeof *out * (size_t)reps);
  tu_msg[0] = 0;
  xrt_status st = xrt_compile(client, prog, strlen(prog), NULL, &exe);
  int nout = 0;
  if (st == XRT_OK) {
    nout = xrt_executable_num_outputs(exe);
    if (nout < 0 || nout > TU_MAX_OUTS) {
      snprintf(tu_msg, sizeof tu_msg, "tu_run: bad output count %d", nout);
      xrt_executable_release(exe);
      return XRT_INTERNAL;
    }
  }
  for (int i = 0; st == XRT_OK && i < nin; i++)
    st = xrt_buffer_from_host(client, dev, &in[i].shape, in[i].data, &args[i]);
  for (int r = 0; st == XRT_OK && r < reps; r++) {
    st = xrt_execute(exe, dev, args, nin, outs, nout, NULL);
    if (st == XRT_OK) st = tu_download(outs, nout, &out[r]);
    for (int i = 0; i < nout; i++) xrt_buffer_release(outs[i]), outs[i] = 0;
  }
  if (st != XRT_OK) tu_save_error();
  for (int i = 0; i < nin; i++) xrt_buffer_release(args[i]);
  xrt_executable_release(exe);
  for (int r = 0; st != XRT_OK && r < reps; r++) tu_out_free(&out[r]);
  return st;
}

/* tu_run_reps of one call. */
static inline xrt_status tu_run(xrt_client *client, const char *prog, int nin,
                                const tu_in *in, tu_out *out) {
  return tu_run_reps(client, prog, nin, in, 1, out);
}

/* Runs prog and fails the test unless it succeeds. */
#define TU_RUN_OK(client, prog, nin, in, out)                               \
  do {                                                                      \
    xrt_status tu_st_ = tu_run((client), (prog), (nin), (in), (out));       \
    if (tu_st_ != XRT_OK)                                                   \
      fail_msg("run failed: %s: %s", xrt_strerror(tu_st_), tu_msg);         \
  } while (0)

/* Runs prog twice on one client, fails the test unless both succeed
 * with the same results (the second compile and execute must not see
 * the first's), and leaves the first run's results in out. */
static inline void tu_run_twice(xrt_client *client, const char *prog,
                                int nin, const tu_in *in, tu_out *out) {
  TU_RUN_OK(client, prog, nin, in, out);
  tu_out again;
  TU_RUN_OK(client, prog, nin, in, &again);
  assert_int_equal(again.n, out->n);
  for (int i = 0; i < out->n; i++) {
    assert_int_equal(again.bytes[i], out->bytes[i]);
    assert_memory_equal(again.data[i], out->data[i], out->bytes[i]);
  }
  tu_out_free(&again);
}

/* Compiles and runs a program with no inputs; returns the status. */
static inline xrt_status tu_run0(xrt_client *client, const char *prog) {
  tu_out o;
  xrt_status st = tu_run(client, prog, 0, NULL, &o);
  tu_out_free(&o);
  return st;
}

/* Asserts the output i has the given shape. */
static inline void tu_assert_shape(const tu_out *o, int i, xrt_shape want) {
  assert_true(i < o->n);
  assert_int_equal(o->shape[i].dtype, want.dtype);
  assert_int_equal(o->shape[i].rank, want.rank);
  for (int d = 0; d < want.rank; d++)
    assert_int_equal(o->shape[i].dims[d], want.dims[d]);
}

/* Asserts output i is exactly these bytes (and that many). */
#define TU_ASSERT_OUT(o, i, type, ...)                                      \
  do {                                                                      \
    const type tu_want_[] = {__VA_ARGS__};                                  \
    assert_int_equal((o)->bytes[i], sizeof tu_want_);                       \
    assert_memory_equal((o)->data[i], tu_want_, sizeof tu_want_);           \
  } while (0)

/* Asserts float output i is within rel/abs tolerance tol of the values. */
static inline void tu_assert_f32_near(const tu_out *o, int i, const double *want,
                                      size_t n, double tol) {
  assert_int_equal(o->bytes[i], n * sizeof(float));
  const float *got = (const float *)o->data[i];
  for (size_t k = 0; k < n; k++) {
    double err = fabs((double)got[k] - want[k]);
    double lim = tol * (fabs(want[k]) > 1 ? fabs(want[k]) : 1);
    if (!(err <= lim))
      fail_msg("element %zu: got %.9g want %.9g", k, (double)got[k], want[k]);
  }
}

/* Asserts that s starts with prefix, printing both otherwise. */
#define TU_ASSERT_PREFIX(s, prefix)                                         \
  do {                                                                      \
    const char *tu_s_ = (s), *tu_p_ = (prefix);                             \
    if (strncmp(tu_s_, tu_p_, strlen(tu_p_)) != 0)                          \
      fail_msg("message \"%s\" does not start with \"%s\"", tu_s_, tu_p_);  \
  } while (0)

#define TU_ASSERT_CONTAINS(s, sub)                                          \
  do {                                                                      \
    const char *tu_s_ = (s), *tu_p_ = (sub);                                \
    if (!strstr(tu_s_, tu_p_))                                              \
      fail_msg("message \"%s\" does not contain \"%s\"", tu_s_, tu_p_);     \
  } while (0)

/* Compiles text (called filename in messages) for the argument shapes
 * in[0, nin), the compile cache off; the executable, or NULL with the
 * status in *st and the message in tu_msg. */
static inline xrt_executable *tu_compile_for(xrt_client *c, const char *text,
                                             const char *filename, int nin,
                                             const xrt_shape *in,
                                             xrt_status *st) {
  xrt_compile_options o;
  xrt_compile_options_init(&o);
  o.filename = filename;
  o.num_arg_shapes = nin;
  o.arg_shapes = in;
  o.cache_disable = 1;
  xrt_executable *exe = NULL;
  tu_msg[0] = 0;
  *st = xrt_compile(c, text, strlen(text), &o, &exe);
  if (*st) tu_save_error();
  return exe;
}

/* The same compile refused: fails the test unless its status is want and
 * its message starts with prefix and contains sub. */
static inline void tu_compile_fails(xrt_client *c, const char *text,
                                    const char *filename, int nin,
                                    const xrt_shape *in, xrt_status want,
                                    const char *prefix, const char *sub) {
  xrt_status s;
  xrt_executable *exe = tu_compile_for(c, text, filename, nin, in, &s);
  if (!s) {
    xrt_executable_release(exe);
    fail_msg("compiled, expected '%s'", sub);
  }
  if (s != want) fail_msg("status %d (%s), want %d", (int)s, tu_msg, (int)want);
  TU_ASSERT_PREFIX(tu_msg, prefix);
  TU_ASSERT_CONTAINS(tu_msg, sub);
}

/* The main of a test program of one group of tests (the cmocka_unit_test
 * entries after the group fixtures setup and teardown, which may be
 * NULL). */
/* test_one_thread, test_two_threads and test_three_threads: fn(threads)
 * on a client of that many threads each. */
#define TU_THREAD_TESTS(fn)                                                 \
  static void test_one_thread(void **state) {                               \
    (void)state;                                                            \
    fn(1);                                                                  \
  }                                                                         \
  static void test_two_threads(void **state) {                              \
    (void)state;                                                            \
    fn(2);                                                                  \
  }                                                                         \
  static void test_three_threads(void **state) {                            \
    (void)state;                                                            \
    fn(3);                                                                  \
  }

#define TU_MAIN(setup, teardown, ...)                                       \
  int main(void) {                                                          \
    const struct CMUnitTest tests[] = {__VA_ARGS__};                        \
    return cmocka_run_group_tests(tests, setup, teardown);                  \
  }

/* Group fixtures: a default one-device client in *state. */
static inline int tu_setup_client(void **state) {
  xrt_client *c = NULL;
  if (xrt_client_create(NULL, &c) != XRT_OK) return -1;
  *state = c;
  return 0;
}

static inline int tu_teardown_client(void **state) {
  xrt_client_release((xrt_client *)*state);
  return 0;
}

#if defined(_POSIX_C_SOURCE)
/* Group fixtures for tests that define _POSIX_C_SOURCE (mkdtemp): the
 * client of tu_setup_client and a new temporary directory, tu_tmpdir(),
 * removed with all in it at the end. */
static inline char *tu_tmpdir(void) {
  static char dir[64];
  return dir;
}

static inline int tu_setup_client_tmpdir(void **state) {
  snprintf(tu_tmpdir(), 64, "/tmp/xrt_test_XXXXXX");
  if (!mkdtemp(tu_tmpdir())) return -1;
  return tu_setup_client(state);
}

static inline int tu_teardown_client_tmpdir(void **state) {
  char cmd[128];
  snprintf(cmd, sizeof cmd, "rm -rf '%s'", tu_tmpdir());
  if (system(cmd) != 0) return -1;
  return tu_teardown_client(state);
}

/* buf = the path of name in tu_tmpdir(). */
static inline void tu_tmp_path(char *buf, size_t cap, const char *name) {
  snprintf(buf, cap, "%s/%s", tu_tmpdir(), name);
}
#endif

/* A client of ndev devices, threads_per_device threads and memory_bytes of
 * memory per device (0 keeps the default of each); fails the test if it
 * cannot be created.  Release it with xrt_client_release. */
static inline xrt_client *tu_client(int ndev, int threads,
                                    uint64_t memory_bytes) {
  xrt_client_options o;
  xrt_client_options_init(&o);
  if (ndev) o.num_devices = ndev;
  if (threads) o.threads_per_device = threads;
  if (memory_bytes) o.device_memory_bytes = memory_bytes;
  xrt_client *c = NULL;
  if (xrt_client_create(&o, &c) != XRT_OK)
    fail_msg("client: %s", xrt_last_error());
  return c;
}

/* A context that reads no XRT_PLUGINS, with or without the built-in
 * plugins; fails the test if it cannot be created. */
static inline xrt_context *tu_context(bool builtin) {
  xrt_context_options o;
  xrt_context_options_init(&o);
  o.builtin_plugins = builtin;
  o.env_plugins = false;
  xrt_context *x = NULL;
  if (xrt_context_create(&o, &x) != XRT_OK || !x)
    fail_msg("context: %s", xrt_last_error());
  return x;
}

/* The simulator's plugin table under another name (the caller changes
 * entries of it before registering it). */
static inline xrt_plugin_api tu_sim_table(const char *name) {
  xrt_plugin_api t = *xrt_sim_plugin_api();
  t.name = name;
  return t;
}

/* A context as tu_context(false) holding the plugin table t (which must
 * outlive it, and names itself); fails the test otherwise. */
static inline xrt_context *tu_context_with(const xrt_plugin_api *t) {
  xrt_context *x = tu_context(false);
  if (xrt_context_register_plugin(x, NULL, t, NULL) != XRT_OK)
    fail_msg("register %s: %s", t->name, xrt_last_error());
  return x;
}

/* Options for a client of plugin in ctx with ndev devices (0 keeps the
 * default), the rest default. */
static inline xrt_client_options tu_client_options(xrt_context *ctx,
                                                   const char *plugin,
                                                   int ndev) {
  xrt_client_options o;
  xrt_client_options_init(&o);
  o.context = ctx;
  o.plugin = plugin;
  if (ndev) o.num_devices = ndev;
  return o;
}

/* A client of plugin in ctx with ndev devices (0 keeps the default); fails
 * the test if it cannot be created. */
static inline xrt_client *tu_client_of(xrt_context *ctx, const char *plugin,
                                       int ndev) {
  xrt_client_options o = tu_client_options(ctx, plugin, ndev);
  xrt_client *c = NULL;
  if (xrt_client_create(&o, &c) != XRT_OK)
    fail_msg("client of %s: %s", plugin, xrt_last_error());
  return c;
}

static inline void tu_quiet_log(void *ctx, xrt_log_level level,
                                const char *component, const char *message) {
  (void)ctx, (void)level, (void)component, (void)message;
}

/* Compiles text for replicas (0: the program's own count) on the devices
 * of assignment (may be NULL); fails the test if it does not compile. */
static inline xrt_executable *tu_compile(xrt_client *c, const char *text,
                                         int replicas, const int *assignment) {
  xrt_compile_options o;
  xrt_compile_options_init(&o);
  o.num_replicas = replicas;
  o.device_assignment = assignment;
  xrt_executable *e = NULL;
  if (xrt_compile(c, text, strlen(text), &o, &e) != XRT_OK)
    fail_msg("compile: %s", xrt_last_error());
  return e;
}

/* A pmap of the fixed program text; fails the test if it cannot be
 * created. */
static inline xrt_pmap *tu_pmap(xrt_client *c, const char *text) {
  xrt_pmap_options o;
  xrt_pmap_options_init(&o);
  o.text = text;
  o.len = strlen(text);
  xrt_pmap *p = NULL;
  if (xrt_pmap_create(c, &o, &p) != XRT_OK)
    fail_msg("pmap: %s", xrt_last_error());
  return p;
}

/* The allocator functions of a plugin client made directly through a
 * plugin table: plain malloc and free. */
static inline void *tu_alloc(void *self, size_t n) {
  (void)self;
  return malloc(n ? n : 1);
}

static inline void tu_free(void *self, void *p) {
  (void)self;
  free(p);
}

/* A counting allocator for allocation-failure injection (SQLite's
 * approach): give it to a client (xrt_client_options.allocator =
 * tu_counting_allocator(&a)) and it fails its fail_at-th allocation
 * (1-based; 0 never) once, or with persistent set that one and every one
 * after it; it counts live blocks and bytes, and records the return
 * address of the first failed call (fail_site: where in xrt it was).
 * Thread-safe: xrt allocates on device threads too.  Each block carries a
 * 16-byte header with its size, which keeps malloc's 16-byte alignment. */
typedef struct tu_counting_alloc {
  _Atomic long calls;           /* allocations asked for so far */
  long fail_at;                 /* the allocation that fails; 0: none */
  bool persistent;              /* ... and every later one */
  _Atomic long live;            /* blocks not yet freed */
  _Atomic long long live_bytes; /* their bytes */
  _Atomic bool failed;          /* the injected failure happened */
  const void *_Atomic fail_site; /* return address of the failed call */
} tu_counting_alloc;

#define TU_COUNTING_HDR 16

static inline void tu_counting_init(tu_counting_alloc *a, long fail_at) {
  atomic_init(&a->calls, 0);
  a->fail_at = fail_at;
  a->persistent = false;
  atomic_init(&a->live, 0);
  atomic_init(&a->live_bytes, 0);
  atomic_init(&a->failed, false);
  atomic_init(&a->fail_site, NULL);
}

static inline void *tu_counting_alloc_fn(void *self, size_t size) {
  tu_counting_alloc *a = (tu_counting_alloc *)self;
  long call = atomic_fetch_add(&a->calls, 1) + 1;
  if (call == a->fail_at) {
#if defined(__GNUC__)
    atomic_store(&a->fail_site, __builtin_return_address(0));
#endif
    atomic_store(&a->failed, true);
    return NULL;
  }
  if (a->persistent && a->fail_at && call > a->fail_at) return NULL;
  if (size > SIZE_MAX - TU_COUNTING_HDR) return NULL;
  char *p = (char *)malloc(size + TU_COUNTING_HDR);
  if (!p) return NULL;
  memcpy(p, &size, sizeof size);
  atomic_fetch_add(&a->live, 1);
  atomic_fetch_add(&a->live_bytes, (long long)size);
  return p + TU_COUNTING_HDR;
}

static inline void tu_counting_free_fn(void *self, void *p) {
  tu_counting_alloc *a = (tu_counting_alloc *)self;
  if (!p) return;
  char *h = (char *)p - TU_COUNTING_HDR;
  size_t size;
  memcpy(&size, h, sizeof size);
  atomic_fetch_sub(&a->live, 1);
  atomic_fetch_sub(&a->live_bytes, (long long)size);
  free(h);
}

static inline xrt_allocator tu_counting_allocator(tu_counting_alloc *a) {
  xrt_allocator al = {a, tu_counting_alloc_fn, tu_counting_free_fn};
  return al;
}

/* Arms a to fail the k-th allocation from now (once) and forgets an
 * earlier failure. */
static inline void tu_counting_arm(tu_counting_alloc *a, long k) {
  a->fail_at = atomic_load(&a->calls) + k;
  atomic_store(&a->failed, false);
}

/* Disarms a; whether the armed failure happened. */
static inline bool tu_counting_disarm(tu_counting_alloc *a) {
  bool failed = atomic_load(&a->failed);
  a->fail_at = 0;
  return failed;
}

/* A client of ndev devices (threads per device: 0 for the default) whose
 * host memory comes from a, set up here to fail nothing (tu_counting_arm
 * it); fails the test if the client cannot be created. */
static inline xrt_client *tu_client_counted_threads(int ndev, int threads,
                                                    tu_counting_alloc *a) {
  tu_counting_init(a, 0);
  xrt_client_options o;
  xrt_client_options_init(&o);
  o.num_devices = ndev;
  if (threads) o.threads_per_device = threads;
  o.allocator = tu_counting_allocator(a);
  xrt_client *c = NULL;
  if (xrt_client_create(&o, &c) != XRT_OK)
    fail_msg("client: %s", xrt_last_error());
  return c;
}

static inline xrt_client *tu_client_counted(int ndev, tu_counting_alloc *a) {
  return tu_client_counted_threads(ndev, 0, a);
}

/* Live bytes of client c's allocator al after compiling src and executing
 * it once on argument x of shape s (executable and its frame still
 * alive); its one result's first rbytes bytes into res. */
static inline long long tu_live_after(xrt_client *c, tu_counting_alloc *al,
                                      const char *src, const xrt_shape *s,
                                      const void *x, void *res,
                                      size_t rbytes) {
  xrt_device *dev = xrt_client_device(c, 0);
  xrt_executable *exe = NULL;
  xrt_buffer *arg = NULL, *out = NULL;
  assert_int_equal(xrt_compile(c, src, strlen(src), NULL, &exe), XRT_OK);
  assert_int_equal(xrt_buffer_from_host(c, dev, s, x, &arg), XRT_OK);
  assert_int_equal(xrt_execute(exe, dev, &arg, 1, &out, 1, NULL), XRT_OK);
  assert_int_equal(xrt_buffer_to_host(out, res, rbytes), XRT_OK);
  long long live = atomic_load(&al->live_bytes);
  xrt_buffer_release(out);
  xrt_buffer_release(arg);
  xrt_executable_release(exe);
  return live;
}

/* Writes n bytes of data to the file path; fails the test otherwise. */
/* Reads a whole file into memory from malloc (NUL-terminated, so text can
 * be used as a string; *len excludes the NUL); fails the test if it cannot
 * be read. */
static inline char *tu_read_file(const char *path, size_t *len) {
  FILE *f = fopen(path, "rb");
  if (!f) fail_msg("cannot open %s", path);
  size_t cap = 1 << 16, n = 0;
  char *buf = (char *)malloc(cap);
  for (size_t k; buf && (k = fread(buf + n, 1, cap - n - 1, f)) > 0;) {
    n += k;
    if (n < cap - 1) continue;
    char *more = (char *)realloc(buf, cap *= 2);
    if (!more) free(buf);
    buf = more;
  }
  fclose(f);
  assert_non_null(buf);
  buf[n] = 0;
  *len = n;
  return buf;
}

static inline void tu_write_file(const char *path, const void *data,
                                 size_t n) {
  FILE *f = fopen(path, "wb");
  assert_non_null(f);
  assert_int_equal(fwrite(data, 1, n, f), n);
  fclose(f);
}

static inline uint32_t tu_f32_bits(float f) {
  uint32_t u;
  memcpy(&u, &f, 4);
  return u;
}

/* Group fixtures for tests that run each case with 1, 2 .. n threads and
 * want the same results: *state is a tu_clients of one-device clients,
 * t[i] with i + 1 threads. */
#define TU_MAX_THREAD_CLIENTS 4
typedef struct tu_clients {
  int n;
  xrt_client *t[TU_MAX_THREAD_CLIENTS];
} tu_clients;

static inline int tu_setup_thread_clients(void **state, int n) {
  tu_clients *c = (tu_clients *)calloc(1, sizeof *c);
  if (!c || n < 1 || n > TU_MAX_THREAD_CLIENTS) {
    free(c);
    return -1;
  }
  c->n = n;
  *state = c;
  for (int i = 0; i < n; i++)
    if (!(c->t[i] = tu_client(1, i + 1, 0))) return -1;
  return 0;
}

static inline int tu_teardown_thread_clients(void **state) {
  tu_clients *c = (tu_clients *)*state;
  for (int i = 0; c && i < c->n; i++)
    if (c->t[i]) xrt_client_release(c->t[i]);
  free(c);
  return 0;
}

/* Runs prog (nin inputs) on every client of c: output 0 must be the n
 * floats of want, bit for bit (where want is NaN: any NaN). */
static inline void tu_run_threads_same(tu_clients *c, const char *prog,
                                       int nin, const tu_in *in,
                                       const float *want, int64_t n) {
  for (int t = 0; t < c->n; t++) {
    tu_out o;
    xrt_status st = tu_run(c->t[t], prog, nin, in, &o);
    if (st) fail_msg("%s: %s", xrt_strerror(st), tu_msg);
    assert_int_equal(o.bytes[0], sizeof(float) * (size_t)n);
    const float *got = (const float *)o.data[0];
    for (int64_t i = 0; i < n; i++) {
      int ok = want[i] != want[i] ? got[i] != got[i]
                                  : tu_f32_bits(got[i]) == tu_f32_bits(want[i]);
      if (!ok)
        fail_msg("%d thread(s), element %lld: got %.9g (0x%08x) want %.9g "
                 "(0x%08x)", t + 1, (long long)i, (double)got[i],
                 (unsigned)tu_f32_bits(got[i]), (double)want[i],
                 (unsigned)tu_f32_bits(want[i]));
    }
    tu_out_free(&o);
  }
}

/* IEEE 754-2019 maximum and minimum of floats, the references of max,
 * min, clamp and ReLU: a NaN operand wins (the first one), -0 < +0. */
static inline float tu_ieee_maxf(float a, float b) {
  if (a != a) return a;
  if (b != b) return b;
  if (a == b) return signbit(a) ? b : a;
  return a > b ? a : b;
}

static inline float tu_ieee_minf(float a, float b) {
  if (a != a) return a;
  if (b != b) return b;
  if (a == b) return signbit(a) ? a : b;
  return a < b ? a : b;
}

/* C = A x W ([M, K] x [K, N], row-major) summed in double from 0 in k
 * order, then rounded: exact for small integers whatever the order of
 * the sums under test.  The caller frees it. */
static inline float *tu_ref_product(const float *a, const float *w,
                                    int64_t M, int64_t K, int64_t N) {
  float *c = (float *)malloc(sizeof *c * (size_t)(M * N > 0 ? M * N : 1));
  if (!c) fail_msg("out of memory");
  for (int64_t m = 0; m < M; m++)
    for (int64_t n = 0; n < N; n++) {
      double s = 0;
      for (int64_t k = 0; k < K; k++) s += (double)a[m * K + k] * w[k * N + n];
      c[m * N + n] = (float)s;
    }
  return c;
}

/* The rows of each part of K rows of weights of the given bytes, as the
 * skinny products of src/sim/skinny.c cut them: none under min bytes,
 * else about part bytes a part (at most eight), a multiple of 8 rows. */
static inline int64_t tu_part_rows(int64_t K, double bytes, double min,
                                   double part) {
  if (bytes < min) return K;
  int64_t want = bytes >= 8 * part ? 8 : (int64_t)(bytes / part);
  int64_t rows = ((K + want - 1) / want + 7) / 8 * 8;
  return rows >= K ? K : rows;
}

/* sum over k < K of a[k as] b[k bs] in f32 as those products promise:
 * each part of rows summed in order from zero (a product rounded, then
 * added), the parts' sums added in order. */
static inline float tu_parted_sum(const float *a, int64_t as, const float *b,
                                  int64_t bs, int64_t K, int64_t rows) {
  volatile float sum = 0; /* each step rounded to f32 */
  for (int64_t k0 = 0; k0 < K; k0 += rows) {
    volatile float acc = 0;
    for (int64_t k = k0; k < K && k < k0 + rows; k++) {
      volatile float p = a[k * as] * b[k * bs];
      acc = acc + p;
    }
    sum = k0 ? sum + acc : acc;
  }
  return sum;
}

/* The reference of a 3x3 NHWC convolution with padding 1 and stride st
 * of x ([N, H, W, XC]) with f ([3, 3, I, C]: one group of XC = I input
 * features when I > 1, else depthwise, XC = C) into y ([N, OH, OW, C]),
 * summed in double in window order: exact for small integers. */
static inline void tu_ref_conv3x3(const float *x, const float *f, int64_t N,
                                  int64_t H, int64_t W, int64_t C, int64_t I,
                                  int64_t st, float *y) {
  int64_t OH = (H + 2 - 3) / st + 1, OW = (W + 2 - 3) / st + 1;
  int64_t XC = I == 1 ? C : I;
  for (int64_t n = 0; n < N; n++)
    for (int64_t oh = 0; oh < OH; oh++)
      for (int64_t ow = 0; ow < OW; ow++)
        for (int64_t c = 0; c < C; c++) {
          double acc = 0;
          for (int64_t kh = 0; kh < 3; kh++)
            for (int64_t kw = 0; kw < 3; kw++) {
              int64_t ih = oh * st + kh - 1, iw = ow * st + kw - 1;
              if (ih < 0 || ih >= H || iw < 0 || iw >= W) continue;
              const float *xp = x + ((n * H + ih) * W + iw) * XC;
              const float *fp = f + (kh * 3 + kw) * I * C + c;
              if (I == 1)
                acc += (double)xp[c] * fp[0];
              else
                for (int64_t i = 0; i < I; i++)
                  acc += (double)xp[i] * fp[i * C];
            }
          y[((n * OH + oh) * OW + ow) * C + c] = (float)acc;
        }
}

static inline float tu_bits_f32(uint32_t u) {
  float f;
  memcpy(&f, &u, 4);
  return f;
}

/* -1, 0 or 1 from index i and salt s, hashed (no period that a kernel's
 * blocks could line up with): test values whose every sum is exact. */
static inline double tu_trit(int64_t i, int s) {
  uint32_t x = (uint32_t)(i * 2654435761u) ^ (uint32_t)(s * 40503u);
  x ^= x >> 13;
  x *= 0x5bd1e995u;
  x ^= x >> 15;
  return (double)((int)(x % 3u) - 1);
}

/* text = a program of one dot_general of element type ty ("f32", "f64"):
 * lhs [Bt, M, K] times rhs [Bt, K, N] (nn) or [Bt, N, K] (not nn: its
 * last dimension contracted), batched over the first dimension, or with
 * no batch dimension when Bt = 0; the result [Bt, M, N]. */
static inline void tu_dot_text(char *text, size_t cap, const char *ty,
                               int64_t Bt, int64_t M, int64_t N, int64_t K,
                               int nn) {
  char ls[64], rs[64], os[64];
  long long LB = (long long)Bt, LM = (long long)M, LN = (long long)N,
            LK = (long long)K;
  long long R0 = nn ? LK : LN, R1 = nn ? LN : LK;
  if (Bt) {
    snprintf(ls, sizeof ls, "%lldx%lldx%lldx%s", LB, LM, LK, ty);
    snprintf(rs, sizeof rs, "%lldx%lldx%lldx%s", LB, R0, R1, ty);
    snprintf(os, sizeof os, "%lldx%lldx%lldx%s", LB, LM, LN, ty);
  } else {
    snprintf(ls, sizeof ls, "%lldx%lldx%s", LM, LK, ty);
    snprintf(rs, sizeof rs, "%lldx%lldx%s", R0, R1, ty);
    snprintf(os, sizeof os, "%lldx%lldx%s", LM, LN, ty);
  }
  int w = snprintf(
      text, cap,
      "func.func @main(%%a: tensor<%s>, %%b: tensor<%s>) -> tensor<%s> "
      "{\n  %%r = stablehlo.dot_general %%a, %%b, %s contracting_dims = "
      "[%d] x [%d], precision = [DEFAULT, DEFAULT] : (tensor<%s>, "
      "tensor<%s>) -> tensor<%s>\n  func.return %%r : tensor<%s>\n}\n",
      ls, rs, os, Bt ? "batching_dims = [0] x [0]," : "", Bt ? 2 : 1,
      (Bt ? 1 : 0) + (nn ? 0 : 1), ls, rs, os, os);
  assert_true(w > 0 && (size_t)w < cap);
}

/* Expands a program template into out (of capacity cap): $1 ... $9
 * become the numbers v[0] ... v[n - 1] (printed as %lld); fails the test
 * if out is too small.  TU_TPL(out, cap, t, M, K, N) passes the numbers
 * in line. */
static inline void tu_tpl(char *out, size_t cap, const char *t, int n,
                          const long long *v) {
  size_t w = 0;
  for (; *t && w + 24 < cap; t++) {
    if (t[0] == '$' && t[1] >= '1' && t[1] < '1' + n && t[1] <= '9') {
      w += (size_t)snprintf(out + w, cap - w, "%lld", v[t[1] - '1']);
      t++;
    } else {
      out[w++] = *t;
    }
  }
  out[w] = 0;
  assert_true(*t == 0); /* the buffer was big enough */
}

#define TU_TPL(out, cap, t, ...)                                            \
  tu_tpl((out), (cap), (t), (int)TU_COUNT(((long long[]){__VA_ARGS__})),    \
         (const long long[]){__VA_ARGS__})

/* Parses text (options may be NULL) expecting it to fail with code (XRT_OK
 * means any failure code); the message, saved in tu_msg, must start with
 * prefix and contain sub (when sub is not NULL). */
static inline void tu_parse_fails(const char *text,
                                  const xrt_compile_options *options,
                                  xrt_status code, const char *prefix,
                                  const char *sub) {
  xrt_program *p = NULL;
  xrt_status st = xrt_program_parse(text, strlen(text), options, &p);
  if (st == XRT_OK) {
    xrt_program_release(p);
    fail_msg("bad program parsed (want an error at %s)", prefix);
  }
  assert_null(p);
  tu_save_error();
  TU_ASSERT_PREFIX(tu_msg, prefix);
  if (sub) TU_ASSERT_CONTAINS(tu_msg, sub);
  if (code != XRT_OK && st != code)
    fail_msg("status %s, want %s (%s)", xrt_strerror(st), xrt_strerror(code),
             tu_msg);
}

/* A program the verifier rejects: INVALID_ARGUMENT located at where. */
static inline void tu_parse_fails_at(const char *text, const char *where,
                                     const char *sub) {
  tu_parse_fails(text, NULL, XRT_INVALID_ARGUMENT, where, sub);
}

/* ---- a plugin's execute called directly (test_disk_cache.c,
 * test_sim_fusion_bytes.c) ---- */

#endif /* XRT_TEST_UTIL_H */
