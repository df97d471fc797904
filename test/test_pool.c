/*
 * test_pool.c - the simulator's per-device thread pools, blocked and
 * parallel transposes, parallel copies and the arena planner's reuse of
 * memory across values of mixed sizes.
 *
 * Every result is checked against a reference loop in this file; runs with
 * 1, 2 and 4 threads per device must agree bit for bit.
 */
#if !defined(_POSIX_C_SOURCE) || _POSIX_C_SOURCE < 200809L
#undef _POSIX_C_SOURCE
#define _POSIX_C_SOURCE 200809L
#endif

#include "test_util.h"

/* Deterministic bytes that differ between neighbouring elements. */
static void fill_bytes(unsigned char *p, size_t n, unsigned seed) {
  uint32_t x = seed * 2654435761u + 1;
  for (size_t i = 0; i < n; i++) {
    x = x * 1664525u + 1013904223u;
    p[i] = (unsigned char)(x >> 24);
  }
}

static int64_t numel(int rank, const int64_t *dims) {
  int64_t n = 1;
  for (int k = 0; k < rank; k++) n *= dims[k];
  return n;
}

/* out[i_0..i_r] = in[...] with input dimension perm[k] indexed by i_k. */
static void ref_transpose(size_t es, int rank, const int64_t *in_dims,
                          const int64_t *perm, const unsigned char *in,
                          unsigned char *out) {
  int64_t ist[XRT_MAX_RANK], od[XRT_MAX_RANK], idx[XRT_MAX_RANK] = {0};
  int64_t s = 1;
  for (int k = rank - 1; k >= 0; k--) {
    ist[k] = s;
    s *= in_dims[k];
  }
  for (int k = 0; k < rank; k++) od[k] = in_dims[perm[k]];
  int64_t n = numel(rank, od);
  for (int64_t o = 0; o < n; o++) {
    int64_t src = 0;
    for (int k = 0; k < rank; k++) src += idx[k] * ist[perm[k]];
    memcpy(out + (size_t)o * es, in + (size_t)src * es, es);
    for (int k = rank - 1; k >= 0; k--) {
      if (++idx[k] < od[k]) break;
      idx[k] = 0;
    }
  }
}

typedef struct dt_case {
  xrt_dtype dt;
  const char *name;
  size_t es;
} dt_case;

static const dt_case k_types[] = {
    {XRT_S8, "i8", 1},    {XRT_F16, "f16", 2},          {XRT_F32, "f32", 4},
    {XRT_S64, "i64", 8},  {XRT_C128, "complex<f64>", 16},
};

static void put_type(char *buf, size_t cap, int rank, const int64_t *dims,
                     const char *elem) {
  int n = snprintf(buf, cap, "tensor<");
  for (int k = 0; k < rank; k++)
    n += snprintf(buf + n, cap - (size_t)n, "%lldx", (long long)dims[k]);
  snprintf(buf + n, cap - (size_t)n, "%s>", elem);
}

/* Transposes a pattern on a client and compares with ref_transpose. */
static void check_transpose(xrt_client *c, const dt_case *t, int rank,
                            const int64_t *dims, const int64_t *perm) {
  char it[128], ot[128], ps[64], prog[1024];
  int64_t od[XRT_MAX_RANK] = {0};
  for (int k = 0; k < rank; k++) od[k] = dims[perm[k]];
  put_type(it, sizeof it, rank, dims, t->name);
  put_type(ot, sizeof ot, rank, od, t->name);
  int n = 0;
  for (int k = 0; k < rank; k++)
    n += snprintf(ps + n, sizeof ps - (size_t)n, "%s%lld", k ? ", " : "",
                  (long long)perm[k]);
  snprintf(prog, sizeof prog,
           "func.func @main(%%a: %s) -> %s {\n"
           "  %%0 = stablehlo.transpose %%a, dims = [%s] : (%s) -> %s\n"
           "  func.return %%0 : %s\n}\n", it, ot, ps, it, ot, ot);
  size_t bytes = (size_t)numel(rank, dims) * t->es;
  unsigned char *in = malloc(bytes + 1), *want = malloc(bytes + 1);
  assert_non_null(in);
  assert_non_null(want);
  fill_bytes(in, bytes, (unsigned)(rank * 31 + (int)t->es));
  if (t->dt == XRT_F16) /* keep f16 bits away from NaN payload questions */
    for (size_t i = 1; i < bytes; i += 2) in[i] &= 0x3f;
  ref_transpose(t->es, rank, dims, perm, in, want);
  tu_in arg = {tu_shape(t->dt, rank, dims), in};
  tu_out out;
  TU_RUN_OK(c, prog, 1, &arg, &out);
  assert_int_equal(out.bytes[0], bytes);
  if (bytes && memcmp(out.data[0], want, bytes) != 0) {
    size_t i = 0;
    while (((unsigned char *)out.data[0])[i] == want[i]) i++;
    fail_msg("%s: transpose [%s] of %s differs at byte %zu", prog, ps, it, i);
  }
  tu_out_free(&out);
  free(in);
  free(want);
}

typedef struct tr_case {
  int rank;
  int64_t dims[4], perm[4];
} tr_case;

static const tr_case k_shapes[] = {
    {2, {1, 37}, {1, 0}},          {2, {37, 1}, {1, 0}},
    {2, {33, 47}, {1, 0}},         {2, {65, 17}, {1, 0}},
    {2, {0, 5}, {1, 0}},           {2, {16, 16}, {1, 0}},
    {2, {64, 64}, {1, 0}},         {3, {5, 7, 9}, {2, 0, 1}},
    {3, {5, 7, 9}, {1, 2, 0}},     {3, {5, 40, 33}, {0, 2, 1}},
    {3, {19, 3, 41}, {2, 1, 0}},   {3, {4, 0, 3}, {2, 1, 0}},
    {4, {3, 17, 2, 35}, {3, 1, 0, 2}},
    {2, {517, 531}, {1, 0}}, /* > 1 MiB in f32: runs in parallel */
};

static void transpose_all(int threads) {
  xrt_client *c = tu_client(1, threads, 0);
  for (size_t t = 0; t < TU_COUNT(k_types); t++)
    for (size_t s = 0; s < TU_COUNT(k_shapes); s++)
      check_transpose(c, &k_types[t], k_shapes[s].rank, k_shapes[s].dims,
                      k_shapes[s].perm);
  /* Big enough for the parallel path with 1-byte elements too. */
  const int64_t big[2] = {1031, 1029}, p10[2] = {1, 0};
  check_transpose(c, &k_types[0], 2, big, p10);
  xrt_client_release(c);
}

static void test_transpose_one_thread(void **state) {
  (void)state;
  transpose_all(1);
}

static void test_transpose_two_threads(void **state) {
  (void)state;
  transpose_all(2);
}

/* ---- one program, 1, 2 and 4 threads ---- */

static const char *k_mixed =
    "func.func @main(%a: tensor<700x600xf32>, %b: tensor<600x700xf32>)\n"
    "    -> (tensor<600x700xf32>, tensor<420000xf32>, tensor<3x600x700xf32>,\n"
    "        tensor<300x350xf32>) {\n"
    "  %t = stablehlo.transpose %a, dims = [1, 0] : (tensor<700x600xf32>) -> tensor<600x700xf32>\n"
    "  %s = stablehlo.add %t, %b : tensor<600x700xf32>\n"
    "  %r = stablehlo.reshape %s : (tensor<600x700xf32>) -> tensor<420000xf32>\n"
    "  %c = stablehlo.broadcast_in_dim %s, dims = [1, 2] : (tensor<600x700xf32>) -> tensor<3x600x700xf32>\n"
    "  %q = stablehlo.slice %t [100:400, 1:700:2] : (tensor<600x700xf32>) -> tensor<300x350xf32>\n"
    "  func.return %s, %r, %c, %q : tensor<600x700xf32>, tensor<420000xf32>, tensor<3x600x700xf32>, tensor<300x350xf32>\n"
    "}\n";

static void test_threads_agree(void **state) {
  (void)state;
  enum { R = 700, C = 600 };
  float *a = malloc(sizeof(float) * R * C), *b = malloc(sizeof(float) * R * C);
  float *sum = malloc(sizeof(float) * R * C);
  assert_true(a && b && sum);
  for (int i = 0; i < R * C; i++) {
    a[i] = (float)(i % 977) * 0.25f - 100.0f;
    b[i] = (float)(i % 613) * 0.5f;
  }
  for (int i = 0; i < C; i++) /* sum[i][j] = a[j][i] + b[i][j] */
    for (int j = 0; j < R; j++) sum[i * R + j] = a[j * C + i] + b[i * R + j];
  tu_in in[2] = {{TU_SHAPE(XRT_F32, R, C), a}, {TU_SHAPE(XRT_F32, C, R), b}};
  tu_out first;
  memset(&first, 0, sizeof first);
  const int threads[3] = {1, 2, 4};
  for (int k = 0; k < 3; k++) {
    xrt_client *c = tu_client(1, threads[k], 0);
    tu_out out;
    TU_RUN_OK(c, k_mixed, 2, in, &out);
    assert_int_equal(out.n, 4);
    assert_memory_equal(out.data[0], sum, sizeof(float) * R * C);
    assert_memory_equal(out.data[1], sum, sizeof(float) * R * C);
    for (int r = 0; r < 3; r++)
      assert_memory_equal((float *)out.data[2] + (size_t)r * R * C, sum,
                          sizeof(float) * R * C);
    const float *q = (const float *)out.data[3];
    for (int i = 0; i < 300; i++)
      for (int j = 0; j < 350; j++)
        assert_true(q[i * 350 + j] == a[(1 + 2 * j) * C + 100 + i]);
    if (k == 0) {
      first = out;
    } else {
      for (int i = 0; i < 4; i++)
        assert_memory_equal(out.data[i], first.data[i], out.bytes[i]);
      tu_out_free(&out);
    }
    xrt_client_release(c);
  }
  tu_out_free(&first);
  free(a);
  free(b);
  free(sum);
}

/* ---- many devices, each with its own pool ---- */

static const char *k_t1024 =
    "func.func @main(%a: tensor<1024x1024xf32>) -> tensor<1024x1024xf32> {\n"
    "  %0 = stablehlo.transpose %a, dims = [1, 0] : (tensor<1024x1024xf32>) -> tensor<1024x1024xf32>\n"
    "  func.return %0 : tensor<1024x1024xf32>\n}\n";

static void run_on_device(xrt_client *c, xrt_executable *exe, int d,
                          const float *a) {
  enum { M = 1024 };
  xrt_device *dev = xrt_client_device(c, d);
  xrt_shape sh = TU_SHAPE(XRT_F32, M, M);
  xrt_buffer *in = NULL, *out = NULL;
  assert_non_null(dev);
  assert_int_equal(xrt_buffer_from_host(c, dev, &sh, a, &in), XRT_OK);
  xrt_status s = xrt_execute(exe, dev, &in, 1, &out, 1, NULL);
  if (s) fail_msg("execute on device %d: %s", d, xrt_last_error());
  float *back = malloc(sizeof(float) * M * M);
  assert_non_null(back);
  assert_int_equal(xrt_buffer_to_host(out, back, sizeof(float) * M * M), XRT_OK);
  for (int i = 0; i < M; i++)
    for (int j = 0; j < M; j++)
      if (back[i * M + j] != a[j * M + i])
        fail_msg("device %d: [%d, %d] is %g, not %g", d, i, j,
                 (double)back[i * M + j], (double)a[j * M + i]);
  free(back);
  xrt_buffer_release(out);
  xrt_buffer_release(in);
}

static void test_sixteen_devices(void **state) {
  (void)state;
  enum { M = 1024 };
  float *a = malloc(sizeof(float) * M * M);
  assert_non_null(a);
  for (int i = 0; i < M * M; i++) a[i] = (float)i;
  xrt_client *c = tu_client(16, 2, 0);
  xrt_attribute at;
  assert_int_equal(xrt_device_attribute_find(xrt_client_device(c, 15),
                                             "cores", &at), XRT_OK);
  assert_int_equal(at.int_value, 2);
  xrt_executable *exe = NULL;
  assert_int_equal(xrt_compile(c, k_t1024, strlen(k_t1024), NULL, &exe), XRT_OK);
  for (int d = 0; d < 16; d += 5) run_on_device(c, exe, d, a); /* 0 5 10 15 */
  xrt_executable_release(exe);
  xrt_client_release(c);
  free(a);
}

/* ---- threads come and go with the client ---- */

#if defined(_WIN32)
#include <windows.h>
#include <tlhelp32.h>

/* The process's threads (Windows has no /proc: a Toolhelp snapshot). */
static long thread_count(void) {
  HANDLE snap = CreateToolhelp32Snapshot(TH32CS_SNAPTHREAD, 0);
  if (snap == INVALID_HANDLE_VALUE) return -1;
  THREADENTRY32 te;
  te.dwSize = sizeof te;
  long n = 0;
  for (BOOL ok = Thread32First(snap, &te); ok; ok = Thread32Next(snap, &te))
    if (te.th32OwnerProcessID == GetCurrentProcessId()) n++;
  CloseHandle(snap);
  return n;
}

static void pause_ms(int ms) { Sleep((DWORD)ms); }
#else
#include <time.h>

static long thread_count(void) {
  FILE *f = fopen("/proc/self/status", "r");
  char line[256];
  long n = -1;
  while (f && fgets(line, sizeof line, f))
    if (strncmp(line, "Threads:", 8) == 0) n = strtol(line + 8, NULL, 10);
  if (f) fclose(f);
  return n;
}

static void pause_ms(int ms) {
  struct timespec ts = {0, (long)ms * 1000000L};
  nanosleep(&ts, NULL);
}
#endif

/* The process's threads once they number at most want, or after 5 s. A
 * joined thread still counts for a moment: pthread_join returns when the
 * thread has released its stack, before the kernel removes it from the
 * process (a loaded machine under ASan showed one such thread). */
static long thread_count_settled(long want) {
  long n = thread_count();
  for (int i = 0; i < 500 && n > want; i++) {
    pause_ms(10);
    n = thread_count();
  }
  return n;
}

static void test_create_destroy_no_leak(void **state) {
  (void)state;
  enum { M = 1024 };
  float *a = malloc(sizeof(float) * M * M);
  assert_non_null(a);
  for (int i = 0; i < M * M; i++) a[i] = (float)(i * 3);
  pause_ms(50); /* earlier tests' joined threads leave the count */
  long before = thread_count();
  assert_true(before >= 1);
  for (int r = 0; r < 12; r++) {
    xrt_client *c = tu_client(2, 2 + r % 3, 0);
    xrt_executable *exe = NULL;
    assert_int_equal(xrt_compile(c, k_t1024, strlen(k_t1024), NULL, &exe),
                     XRT_OK);
    run_on_device(c, exe, r % 2, a); /* starts that device's workers */
    if (r == 0) assert_true(thread_count() > before);
    xrt_client_release(c); /* joins them */
    assert_true(thread_count_settled(before) <= before);
  }
  free(a);
}

static void test_threads_option(void **state) {
  (void)state;
  xrt_client_options o;
  xrt_client_options_init(&o);
  assert_int_equal(o.threads_per_device, 0);
  o.threads_per_device = -1;
  xrt_client *c = NULL;
  assert_int_equal(xrt_client_create(&o, &c), XRT_INVALID_ARGUMENT);
  assert_null(c);
  assert_non_null(strstr(xrt_last_error(), "threads_per_device"));
  o.threads_per_device = 0; /* cores / devices, at least 1 */
  o.num_devices = 4;
  assert_int_equal(xrt_client_create(&o, &c), XRT_OK);
  xrt_attribute at;
  assert_int_equal(xrt_device_attribute_find(xrt_client_device(c, 3), "cores",
                                             &at), XRT_OK);
  assert_true(at.int_value >= 1);
  xrt_client_release(c);
}

/* ---- the planner reuses memory of mixed sizes correctly ---- */

/* t_k = transpose(v_{k-1}); w_k = concat(t_k, v_{k-1}) on dim 1;
 * v_k = w_k[:, 3:3+n], returning v_1 and v_STEPS: values of two sizes whose
 * slots get split and merged by the arena planner; with n = 128 (64 KiB
 * results) intermediates also borrow the output buffers before the results
 * are written (v_1's only before step 1's slice). */
static void run_chain(xrt_client *c, int nn) {
  enum { STEPS = 7 };
  char prog[8192], T[32], W[32];
  snprintf(T, sizeof T, "tensor<%dx%dxi32>", nn, nn);
  snprintf(W, sizeof W, "tensor<%dx%dxi32>", nn, 2 * nn);
  int n = snprintf(prog, sizeof prog, "func.func @main(%%v0: %s) -> (%s, %s) {\n",
                   T, T, T);
  for (int k = 1; k <= STEPS; k++)
    n += snprintf(prog + n, sizeof prog - (size_t)n,
                  "  %%t%d = stablehlo.transpose %%v%d, dims = [1, 0] : (%s) -> %s\n"
                  "  %%w%d = stablehlo.concatenate %%t%d, %%v%d, dim = 1 : (%s, %s) -> %s\n"
                  "  %%v%d = stablehlo.slice %%w%d [0:%d, 3:%d] : (%s) -> %s\n",
                  k, k - 1, T, T, k, k, k - 1, T, T, W, k, k, nn, nn + 3, W, T);
  snprintf(prog + n, sizeof prog - (size_t)n,
           "  func.return %%v1, %%v%d : %s, %s\n}\n", STEPS, T, T);
  size_t sq = sizeof(int32_t) * (size_t)nn * (size_t)nn;
  int32_t *v = malloc(sq), *t = malloc(sq), *w = malloc(2 * sq), *v1 = malloc(sq);
  assert_true(v && t && w && v1);
  for (int i = 0; i < nn * nn; i++) v[i] = i * 7 + 1;
  tu_in in = {tu_shape(XRT_S32, 2, (const int64_t[]){nn, nn}), v};
  tu_out out;
  TU_RUN_OK(c, prog, 1, &in, &out);
  for (int k = 1; k <= STEPS; k++) {
    for (int i = 0; i < nn; i++)
      for (int j = 0; j < nn; j++) {
        t[i * nn + j] = v[j * nn + i];
        w[i * 2 * nn + j] = t[i * nn + j];
        w[i * 2 * nn + nn + j] = v[i * nn + j];
      }
    for (int i = 0; i < nn; i++)
      for (int j = 0; j < nn; j++) v[i * nn + j] = w[i * 2 * nn + j + 3];
    if (k == 1) memcpy(v1, v, sq);
  }
  assert_int_equal(out.n, 2);
  assert_memory_equal(out.data[0], v1, sq);
  assert_memory_equal(out.data[1], v, sq);
  tu_out_free(&out);
  free(v);
  free(t);
  free(w);
  free(v1);
}

static void test_mixed_size_chain(void **state) {
  run_chain((xrt_client *)*state, 6);
  run_chain((xrt_client *)*state, 128);
  run_chain((xrt_client *)*state, 131);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_transpose_one_thread),
      cmocka_unit_test(test_transpose_two_threads),
      cmocka_unit_test(test_threads_agree),
      cmocka_unit_test(test_sixteen_devices),
      cmocka_unit_test(test_create_destroy_no_leak),
      cmocka_unit_test(test_threads_option),
      cmocka_unit_test(test_mixed_size_chain),
  };
  return cmocka_run_group_tests(tests, tu_setup_client, tu_teardown_client);
}
