/*
 * test_sim_rnn_loop.c - products inside a while loop whose weights the
 * body carries through unchanged (an LSTM step): the loop reads them in
 * place (src/sim/control.c, lower.c), the skinny path packs [N, K] weights
 * once per run of the loop or keeps them in the client's cache
 * (src/sim/skinny.c, gemm_cache.c).  The program is
 *
 *   h_0 = 0;  h_{t+1} = xs[t] . W + h_t . U;  ys[t] = h_{t+1}
 *
 * with W [N, K] (x W^T, "nt") or [K, N] (x W, "nn"), U [N, N] (h U^T),
 * M = 1..16 rows, f32 and f64, one and two threads, each executable run
 * several times on the same buffers (the cache records, packs, then
 * reads), then on new weights and back.  Values are small integers, so
 * every sum is exact in any order: results (h_T, ys, and W returned
 * unchanged) are compared exactly with the recurrence computed here in
 * double.  MIT licensed.
 */
#include "test_util.h"

enum { T = 3 };

typedef struct prog {
  xrt_dtype t;
  int64_t M, N, K;
  int nn; /* W [K, N] */
} prog;

static size_t esz(const prog *p) { return p->t == XRT_F64 ? 8 : 4; }

/* -1, 0 or 1 from index i and salt s (test_util.h). */
static double val(int64_t i, int s) { return tu_trit(i, s); }

static void program(const prog *p, char *text, size_t cap) {
  const char *ty = p->t == XRT_F64 ? "f64" : "f32";
  long long M = p->M, N = p->N, K = p->K;
  char ws[64], dn[96];
  if (p->nn)
    snprintf(ws, sizeof ws, "%lldx%lldx%s", K, N, ty);
  else
    snprintf(ws, sizeof ws, "%lldx%lldx%s", N, K, ty);
  snprintf(dn, sizeof dn, "contracting_dims = [1] x [%d]", p->nn ? 0 : 1);
  snprintf(
      text, cap,
      "func.func @main(%%xs: tensor<%dx%lldx%lldx%s>, %%w: tensor<%s>, "
      "%%u: tensor<%lldx%lldx%s>) -> (tensor<%lldx%lldx%s>, "
      "tensor<%dx%lldx%lldx%s>, tensor<%s>) {\n"
      "  %%c0 = stablehlo.constant dense<0> : tensor<i32>\n"
      "  %%z = stablehlo.constant dense<0.0> : tensor<%s>\n"
      "  %%h0 = stablehlo.broadcast_in_dim %%z, dims = [] : (tensor<%s>) -> "
      "tensor<%lldx%lldx%s>\n"
      "  %%y0 = stablehlo.broadcast_in_dim %%z, dims = [] : (tensor<%s>) -> "
      "tensor<%dx%lldx%lldx%s>\n"
      "  %%r:6 = stablehlo.while(%%i = %%c0, %%h = %%h0, %%ys = %%y0, "
      "%%x = %%xs, %%pw = %%w, %%pu = %%u) : tensor<i32>, "
      "tensor<%lldx%lldx%s>, tensor<%dx%lldx%lldx%s>, "
      "tensor<%dx%lldx%lldx%s>, tensor<%s>, tensor<%lldx%lldx%s>\n"
      "   cond {\n"
      "    %%n = stablehlo.constant dense<%d> : tensor<i32>\n"
      "    %%lt = stablehlo.compare LT, %%i, %%n, SIGNED : (tensor<i32>, "
      "tensor<i32>) -> tensor<i1>\n"
      "    stablehlo.return %%lt : tensor<i1>\n"
      "  } do {\n"
      "    %%k0 = stablehlo.constant dense<0> : tensor<i32>\n"
      "    %%s = stablehlo.dynamic_slice %%x, %%i, %%k0, %%k0, sizes = [1, "
      "%lld, %lld] : (tensor<%dx%lldx%lldx%s>, tensor<i32>, tensor<i32>, "
      "tensor<i32>) -> tensor<1x%lldx%lldx%s>\n"
      "    %%xt = stablehlo.reshape %%s : (tensor<1x%lldx%lldx%s>) -> "
      "tensor<%lldx%lldx%s>\n"
      "    %%g = stablehlo.dot_general %%xt, %%pw, %s : "
      "(tensor<%lldx%lldx%s>, tensor<%s>) -> tensor<%lldx%lldx%s>\n"
      "    %%q = stablehlo.dot_general %%h, %%pu, contracting_dims = [1] x "
      "[1] : (tensor<%lldx%lldx%s>, tensor<%lldx%lldx%s>) -> "
      "tensor<%lldx%lldx%s>\n"
      "    %%h1 = stablehlo.add %%g, %%q : tensor<%lldx%lldx%s>\n"
      "    %%h3 = stablehlo.reshape %%h1 : (tensor<%lldx%lldx%s>) -> "
      "tensor<1x%lldx%lldx%s>\n"
      "    %%ys1 = stablehlo.dynamic_update_slice %%ys, %%h3, %%i, %%k0, "
      "%%k0 : (tensor<%dx%lldx%lldx%s>, tensor<1x%lldx%lldx%s>, "
      "tensor<i32>, tensor<i32>, tensor<i32>) -> tensor<%dx%lldx%lldx%s>\n"
      "    %%one = stablehlo.constant dense<1> : tensor<i32>\n"
      "    %%i1 = stablehlo.add %%i, %%one : tensor<i32>\n"
      "    stablehlo.return %%i1, %%h1, %%ys1, %%x, %%pw, %%pu : tensor<i32>, "
      "tensor<%lldx%lldx%s>, tensor<%dx%lldx%lldx%s>, "
      "tensor<%dx%lldx%lldx%s>, tensor<%s>, tensor<%lldx%lldx%s>\n"
      "  }\n"
      "  func.return %%r#1, %%r#2, %%r#4 : tensor<%lldx%lldx%s>, "
      "tensor<%dx%lldx%lldx%s>, tensor<%s>\n"
      "}\n",
      /* signature */
      T, M, K, ty, ws, N, N, ty, M, N, ty, T, M, N, ty, ws,
      /* constants */
      ty, ty, M, N, ty, ty, T, M, N, ty,
      /* while */
      M, N, ty, T, M, N, ty, T, M, K, ty, ws, N, N, ty, T,
      /* slice, reshape */
      M, K, T, M, K, ty, M, K, ty, M, K, ty, M, K, ty,
      /* products */
      dn, M, K, ty, ws, M, N, ty, M, N, ty, N, N, ty, M, N, ty,
      /* add, reshape, update */
      M, N, ty, M, N, ty, M, N, ty, T, M, N, ty, M, N, ty, T, M, N, ty,
      /* return */
      M, N, ty, T, M, N, ty, T, M, K, ty, ws, N, N, ty,
      /* func.return */
      M, N, ty, T, M, N, ty, ws);
}

static xrt_shape shape_of(const prog *p, int which) {
  if (which == 0) return TU_SHAPE(p->t, T, p->M, p->K);
  if (which == 1)
    return p->nn ? TU_SHAPE(p->t, p->K, p->N) : TU_SHAPE(p->t, p->N, p->K);
  return TU_SHAPE(p->t, p->N, p->N);
}

static int64_t count_of(const prog *p, int which) {
  return which == 0 ? T * p->M * p->K : which == 1 ? p->N * p->K
                                                   : p->N * p->N;
}

static xrt_buffer *upload(xrt_client *c, const prog *p, int which, int s) {
  xrt_shape sh = shape_of(p, which);
  int64_t n = count_of(p, which);
  void *h = malloc((size_t)n * esz(p));
  assert_non_null(h);
  for (int64_t i = 0; i < n; i++) {
    if (p->t == XRT_F64) ((double *)h)[i] = val(i, s);
    else ((float *)h)[i] = (float)val(i, s);
  }
  xrt_buffer *b = NULL;
  if (xrt_buffer_from_host(c, xrt_client_device(c, 0), &sh, h, &b))
    fail_msg("upload: %s", xrt_last_error());
  free(h);
  return b;
}

static double got_at(const prog *p, const void *g, int64_t i) {
  return p->t == XRT_F64 ? ((const double *)g)[i]
                         : (double)((const float *)g)[i];
}

/* Executes e on buffers made with salts s[3] and checks every output
 * against the recurrence computed here. */
static void run_check(xrt_client *c, xrt_executable *e, const prog *p,
                      xrt_buffer *const *args, const int *s) {
  xrt_buffer *out[3] = {NULL, NULL, NULL};
  xrt_status st = xrt_execute(e, xrt_client_device(c, 0),
                              (xrt_buffer **)(uintptr_t)args, 3, out, 3, NULL);
  if (st) fail_msg("execute: %s", xrt_last_error());
  const int64_t M = p->M, N = p->N, K = p->K;
  double *h = calloc((size_t)(M * N), sizeof *h);
  double *h1 = calloc((size_t)(M * N), sizeof *h1);
  double *ys = calloc((size_t)(T * M * N), sizeof *ys);
  assert_non_null(h);
  assert_non_null(h1);
  assert_non_null(ys);
  for (int t = 0; t < T; t++) {
    for (int64_t m = 0; m < M; m++)
      for (int64_t n = 0; n < N; n++) {
        double acc = 0;
        for (int64_t k = 0; k < K; k++)
          acc += val((t * M + m) * K + k, s[0]) *
                 val(p->nn ? k * N + n : n * K + k, s[1]);
        for (int64_t j = 0; j < N; j++)
          acc += h[m * N + j] * val(n * N + j, s[2]);
        h1[m * N + n] = acc;
      }
    memcpy(h, h1, sizeof *h * (size_t)(M * N));
    memcpy(ys + t * M * N, h1, sizeof *h * (size_t)(M * N));
  }
  int64_t counts[3] = {M * N, T * M * N, N * K};
  for (int o = 0; o < 3; o++) {
    void *g = malloc((size_t)counts[o] * esz(p));
    assert_non_null(g);
    assert_int_equal(xrt_buffer_to_host(out[o], g, (size_t)counts[o] * esz(p)),
                     XRT_OK);
    for (int64_t i = 0; i < counts[o]; i++) {
      double want = o == 0 ? h[i] : o == 1 ? ys[i] : val(i, s[1]);
      if (got_at(p, g, i) != want)
        fail_msg("M %lld N %lld K %lld nn %d %s: output %d [%lld] got %.17g "
                 "want %.17g (salts %d %d %d)",
                 (long long)M, (long long)N, (long long)K, p->nn,
                 p->t == XRT_F64 ? "f64" : "f32", o, (long long)i,
                 got_at(p, g, i), want, s[0], s[1], s[2]);
    }
    free(g);
    xrt_buffer_release(out[o]);
  }
  free(h);
  free(h1);
  free(ys);
}

/* Compiles p, runs it three times on the same buffers, then with new
 * weights (W and U), then on the first ones again. */
static void reuse(xrt_client *c, const prog *p) {
  static char text[8192];
  program(p, text, sizeof text);
  xrt_shape in[3] = {shape_of(p, 0), shape_of(p, 1), shape_of(p, 2)};
  xrt_status st;
  xrt_executable *e = tu_compile_for(c, text, "rnn.mlir", 3, in, &st);
  if (st) fail_msg("compile: %s\n%s", tu_msg, text);
  int s1[3] = {1, 2, 3}, s2[3] = {1, 5, 6};
  xrt_buffer *a[3], *b[3];
  for (int i = 0; i < 3; i++) a[i] = upload(c, p, i, s1[i]);
  b[0] = a[0];
  b[1] = upload(c, p, 1, s2[1]);
  b[2] = upload(c, p, 2, s2[2]);
  for (int r = 0; r < 3; r++) run_check(c, e, p, a, s1);
  run_check(c, e, p, b, s2);
  run_check(c, e, p, b, s2);
  run_check(c, e, p, a, s1);
  for (int i = 0; i < 3; i++) xrt_buffer_release(a[i]);
  xrt_buffer_release(b[1]);
  xrt_buffer_release(b[2]);
  xrt_executable_release(e);
}

/* Every row count of the skinny path, [N, K] weights: panels of 48
 * columns, whole (N = 48, 96) and partial (33, 100). */
static void test_nt_rows(void **state) {
  xrt_client *c = (xrt_client *)*state;
  static const int64_t ns[] = {33, 48, 100, 96};
  for (int64_t m = 1; m <= 16; m++) {
    prog p = {XRT_F32, m, ns[m % 4], 32 + m % 3 * 8, 0};
    reuse(c, &p);
    if (tu_light()) m += 3;
  }
}

/* [K, N] weights (x W), and a product too long for the skinny path. */
static void test_nn_and_long(void **state) {
  xrt_client *c = (xrt_client *)*state;
  prog p = {XRT_F32, 8, 64, 40, 1};
  reuse(c, &p);
  prog q = {XRT_F32, 5, 70, 33, 1};
  reuse(c, &q);
  prog r = {XRT_F32, 17, 40, 32, 0}; /* more rows than skinny takes */
  reuse(c, &r);
}

static void test_f64(void **state) {
  xrt_client *c = (xrt_client *)*state;
  prog p = {XRT_F64, 8, 48, 32, 0};
  reuse(c, &p);
  prog q = {XRT_F64, 3, 40, 36, 1};
  reuse(c, &q);
}

/* Two lanes share the panels (and the first iteration's packing). */
static void test_two_threads(void **state) {
  (void)state;
  xrt_client *c = tu_client(1, 2, 0);
  prog p = {XRT_F32, 8, 200, 64, 0};
  reuse(c, &p);
  prog q = {XRT_F32, 3, 100, 48, 0};
  reuse(c, &q);
  xrt_client_release(c);
}

/* Every allocation of compiling and running the loop fails in turn (the
 * client's allocator): each call either succeeds with the right results
 * (a failed cache entry only costs packing) or reports the memory. */
static void test_allocation_failures(void **state) {
  (void)state;
  prog p = {XRT_F32, 4, 48, 32, 0};
  static char text[8192];
  program(&p, text, sizeof text);
  xrt_shape in[3] = {shape_of(&p, 0), shape_of(&p, 1), shape_of(&p, 2)};
  int s1[3] = {1, 2, 3};
  int done = 0;
  long k = 1;
  for (; !done && k < 2000; k++) {
    tu_counting_alloc a;
    xrt_client *c = tu_client_counted(1, &a);
    tu_counting_arm(&a, k);
    xrt_status st;
    xrt_executable *e = tu_compile_for(c, text, "rnn.mlir", 3, in, &st);
    if (st) {
      assert_int_equal(st, XRT_RESOURCE_EXHAUSTED);
      assert_true(a.failed);
    } else {
      xrt_buffer *b[3] = {NULL, NULL, NULL};
      int up = 1;
      for (int i = 0; i < 3 && up; i++) {
        xrt_shape sh = shape_of(&p, i);
        int64_t n = count_of(&p, i);
        float *h = malloc(sizeof(float) * (size_t)n);
        assert_non_null(h);
        for (int64_t j = 0; j < n; j++) h[j] = (float)val(j, s1[i]);
        st = xrt_buffer_from_host(c, xrt_client_device(c, 0), &sh, h, &b[i]);
        free(h);
        if (st) {
          assert_int_equal(st, XRT_RESOURCE_EXHAUSTED);
          up = 0;
        }
      }
      for (int r = 0; r < 3 && up; r++) {
        xrt_buffer *out[3] = {NULL, NULL, NULL};
        st = xrt_execute(e, xrt_client_device(c, 0), b, 3, out, 3, NULL);
        for (int o = 0; o < 3; o++)
          if (out[o]) xrt_buffer_release(out[o]);
        if (st) {
          assert_int_equal(st, XRT_RESOURCE_EXHAUSTED);
          break;
        }
      }
      bool failed = tu_counting_disarm(&a);
      done = !failed;
      if (up) run_check(c, e, &p, b, s1); /* right after any failure */
      for (int i = 0; i < 3; i++)
        if (b[i]) xrt_buffer_release(b[i]);
      xrt_executable_release(e);
    }
    if (st && !e) done = !tu_counting_disarm(&a);
    xrt_client_release(c);
    if (tu_light()) k += 7;
  }
  assert_true(done);
  assert_true(k > 20); /* compiling and running allocate many times */
}

TU_MAIN(tu_setup_client, tu_teardown_client, cmocka_unit_test(test_nt_rows),
        cmocka_unit_test(test_nn_and_long), cmocka_unit_test(test_f64),
        cmocka_unit_test(test_two_threads),
        cmocka_unit_test(test_allocation_failures))
