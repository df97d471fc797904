/*
 * test_sim_rnn_copies.c - slices read in place by the fused elementwise
 * loops that use them (src/sim/fusion.c: a slice is a gather view, and a
 * slice of whole rows is read where it lies, tile by tile, without a
 * copy), inside a while loop shaped like an LSTM step and outside one.
 * The loop is
 *
 *   a = xs[t] . W^T + h . U^T                        [M, 4N]
 *   a0, a1, a2 = a[:, 0:N], a[:, N:2N], a[:, 2N:3N]  (row slices)
 *   a3 = a[:, 0:4N:4]                                (strided: a copy)
 *   c' = max(a1, c) + a0 * a2;  h' = clamp(-4, c' - a3, 4);  ys[t] = h'
 *
 * with the carries h, c, ys (the new h and c written straight into the
 * buffers the next iteration reads: src/sim/lower.c sim_while_redirect,
 * control.c), in f32 and f64, one and two threads; and carries that are
 * not (one value returned twice, an outer value).  Values
 * are small integers, so every result is exact: h_T, c_T and ys are
 * compared exactly with the recurrence computed here in double.  MIT
 * licensed.
 */
#include <stdarg.h>

#include "test_util.h"

enum { T = 3 };

typedef struct prog {
  xrt_dtype t;
  int64_t M, N, K;
} prog;

static size_t esz(xrt_dtype t) { return t == XRT_F64 ? 8 : 4; }
static const char *tyname(xrt_dtype t) { return t == XRT_F64 ? "f64" : "f32"; }

/* -1, 0 or 1 from index i and salt s (test_util.h). */
static double val(int64_t i, int s) { return tu_trit(i, s); }

/* Appends printf-formatted text to b (of capacity cap). */
static void put(char *b, size_t cap, const char *fmt, ...) {
  size_t n = strlen(b);
  va_list ap;
  va_start(ap, fmt);
  int w = vsnprintf(b + n, cap - n, fmt, ap);
  va_end(ap);
  assert_true(w >= 0 && (size_t)w < cap - n);
}

static void loop_program(const prog *p, char *b, size_t cap) {
  const char *ty = tyname(p->t);
  long long M = p->M, N = p->N, K = p->K, G = 4 * p->N;
  char tx[48], tw[48], tu[48], th[48], tg[48], tys[48], ts[48];
  snprintf(tx, sizeof tx, "tensor<%dx%lldx%lldx%s>", T, M, K, ty);
  snprintf(tw, sizeof tw, "tensor<%lldx%lldx%s>", G, K, ty);
  snprintf(tu, sizeof tu, "tensor<%lldx%lldx%s>", G, N, ty);
  snprintf(th, sizeof th, "tensor<%lldx%lldx%s>", M, N, ty);
  snprintf(tg, sizeof tg, "tensor<%lldx%lldx%s>", M, G, ty);
  snprintf(tys, sizeof tys, "tensor<%dx%lldx%lldx%s>", T, M, N, ty);
  snprintf(ts, sizeof ts, "tensor<%lldx%lldx%s>", M, K, ty);
  b[0] = 0;
  put(b, cap,
      "func.func @main(%%xs: %s, %%w: %s, %%u: %s, %%cin: %s) -> (%s, %s, "
      "%s) {\n",
      tx, tw, tu, th, th, th, tys);
  put(b, cap,
      "  %%c0 = stablehlo.constant dense<0> : tensor<i32>\n"
      "  %%z = stablehlo.constant dense<0.0> : tensor<%s>\n"
      "  %%h0 = stablehlo.broadcast_in_dim %%z, dims = [] : (tensor<%s>) -> "
      "%s\n"
      "  %%y0 = stablehlo.broadcast_in_dim %%z, dims = [] : (tensor<%s>) -> "
      "%s\n",
      ty, ty, th, ty, tys);
  put(b, cap,
      "  %%r:7 = stablehlo.while(%%i = %%c0, %%h = %%h0, %%c = %%cin, %%ys = "
      "%%y0, %%x = %%xs, %%pw = %%w, %%pu = %%u) : tensor<i32>, %s, %s, %s, "
      "%s, %s, %s\n"
      "   cond {\n"
      "    %%n = stablehlo.constant dense<%d> : tensor<i32>\n"
      "    %%lt = stablehlo.compare LT, %%i, %%n, SIGNED : (tensor<i32>, "
      "tensor<i32>) -> tensor<i1>\n"
      "    stablehlo.return %%lt : tensor<i1>\n"
      "  } do {\n"
      "    %%k0 = stablehlo.constant dense<0> : tensor<i32>\n",
      th, th, tys, tx, tw, tu, T);
  put(b, cap,
      "    %%s = stablehlo.dynamic_slice %%x, %%i, %%k0, %%k0, sizes = [1, "
      "%lld, %lld] : (%s, tensor<i32>, tensor<i32>, tensor<i32>) -> "
      "tensor<1x%lldx%lldx%s>\n"
      "    %%xt = stablehlo.reshape %%s : (tensor<1x%lldx%lldx%s>) -> %s\n"
      "    %%g = stablehlo.dot_general %%xt, %%pw, contracting_dims = [1] x "
      "[1] : (%s, %s) -> %s\n"
      "    %%q = stablehlo.dot_general %%h, %%pu, contracting_dims = [1] x "
      "[1] : (%s, %s) -> %s\n"
      "    %%a = stablehlo.add %%g, %%q : %s\n",
      M, K, tx, M, K, ty, M, K, ty, ts, ts, tw, tg, th, tu, tg, tg);
  put(b, cap,
      "    %%a0 = stablehlo.slice %%a [0:%lld, 0:%lld] : (%s) -> %s\n"
      "    %%a1 = stablehlo.slice %%a [0:%lld, %lld:%lld] : (%s) -> %s\n"
      "    %%a2 = stablehlo.slice %%a [0:%lld, %lld:%lld] : (%s) -> %s\n"
      "    %%a3 = stablehlo.slice %%a [0:%lld, 0:%lld:4] : (%s) -> %s\n",
      M, N, tg, th, M, N, 2 * N, tg, th, M, 2 * N, 3 * N, tg, th, M, G, tg,
      th);
  put(b, cap,
      "    %%m = stablehlo.maximum %%a1, %%c : %s\n"
      "    %%p = stablehlo.multiply %%a0, %%a2 : %s\n"
      "    %%c1 = stablehlo.add %%m, %%p : %s\n"
      "    %%d = stablehlo.subtract %%c1, %%a3 : %s\n"
      "    %%lo = stablehlo.constant dense<-4.0> : tensor<%s>\n"
      "    %%hi = stablehlo.constant dense<4.0> : tensor<%s>\n"
      "    %%h1 = stablehlo.clamp %%lo, %%d, %%hi : (tensor<%s>, %s, "
      "tensor<%s>) -> %s\n"
      "    %%h3 = stablehlo.reshape %%h1 : (%s) -> tensor<1x%lldx%lldx%s>\n"
      "    %%ys1 = stablehlo.dynamic_update_slice %%ys, %%h3, %%i, %%k0, "
      "%%k0 : (%s, tensor<1x%lldx%lldx%s>, tensor<i32>, tensor<i32>, "
      "tensor<i32>) -> %s\n"
      "    %%one = stablehlo.constant dense<1> : tensor<i32>\n"
      "    %%i1 = stablehlo.add %%i, %%one : tensor<i32>\n",
      th, th, th, th, ty, ty, ty, th, ty, th, th, M, N, ty, tys, M, N, ty,
      tys);
  put(b, cap,
      "    stablehlo.return %%i1, %%h1, %%c1, %%ys1, %%x, %%pw, %%pu : "
      "tensor<i32>, %s, %s, %s, %s, %s, %s\n"
      "  }\n"
      "  func.return %%r#1, %%r#2, %%r#3 : %s, %s, %s\n"
      "}\n",
      th, th, tys, tx, tw, tu, th, th, tys);
}

static xrt_buffer *upload(xrt_client *c, xrt_dtype t, const xrt_shape *sh,
                          int64_t n, int s) {
  void *h = malloc((size_t)n * esz(t));
  assert_non_null(h);
  for (int64_t i = 0; i < n; i++) {
    if (t == XRT_F64) ((double *)h)[i] = val(i, s);
    else ((float *)h)[i] = (float)val(i, s);
  }
  xrt_buffer *b = NULL;
  if (xrt_buffer_from_host(c, xrt_client_device(c, 0), sh, h, &b))
    fail_msg("upload: %s", xrt_last_error());
  free(h);
  return b;
}

/* Downloads n elements of out and compares them exactly with want. */
static void check_out(xrt_buffer *out, xrt_dtype t, const double *want,
                      int64_t n, const char *what) {
  void *g = malloc((size_t)n * esz(t));
  assert_non_null(g);
  assert_int_equal(xrt_buffer_to_host(out, g, (size_t)n * esz(t)), XRT_OK);
  for (int64_t i = 0; i < n; i++) {
    double got = t == XRT_F64 ? ((const double *)g)[i]
                              : (double)((const float *)g)[i];
    if (got != want[i])
      fail_msg("%s %s [%lld]: got %.17g want %.17g", what, tyname(t),
               (long long)i, got, want[i]);
  }
  free(g);
}

static void run_loop(xrt_client *c, const prog *p) {
  static char text[8192];
  loop_program(p, text, sizeof text);
  const int64_t M = p->M, N = p->N, K = p->K, G = 4 * N;
  xrt_shape in[4] = {TU_SHAPE(p->t, T, M, K), TU_SHAPE(p->t, G, K),
                     TU_SHAPE(p->t, G, N), TU_SHAPE(p->t, M, N)};
  int64_t cnt[4] = {T * M * K, G * K, G * N, M * N};
  int salt[4] = {1, 2, 3, 4};
  xrt_status st;
  xrt_executable *e = tu_compile_for(c, text, "lstm.mlir", 4, in, &st);
  if (st) fail_msg("compile: %s\n%s", tu_msg, text);
  xrt_buffer *a[4];
  for (int i = 0; i < 4; i++) a[i] = upload(c, p->t, &in[i], cnt[i], salt[i]);
  /* the recurrence */
  double *h = calloc((size_t)(M * N), sizeof *h);
  double *cc = calloc((size_t)(M * N), sizeof *cc);
  double *ys = calloc((size_t)(T * M * N), sizeof *ys);
  double *g = calloc((size_t)(M * G), sizeof *g);
  assert_non_null(h);
  assert_non_null(cc);
  assert_non_null(ys);
  assert_non_null(g);
  for (int64_t i = 0; i < M * N; i++) cc[i] = val(i, salt[3]);
  for (int t = 0; t < T; t++) {
    for (int64_t m = 0; m < M; m++)
      for (int64_t j = 0; j < G; j++) {
        double acc = 0;
        for (int64_t k = 0; k < K; k++)
          acc += val((t * M + m) * K + k, salt[0]) * val(j * K + k, salt[1]);
        for (int64_t n = 0; n < N; n++)
          acc += h[m * N + n] * val(j * N + n, salt[2]);
        g[m * G + j] = acc;
      }
    for (int64_t m = 0; m < M; m++)
      for (int64_t n = 0; n < N; n++) {
        const double *r = g + m * G;
        double a1 = r[N + n], cv = cc[m * N + n];
        double c1 = (a1 > cv ? a1 : cv) + r[n] * r[2 * N + n];
        double d = c1 - r[4 * n];
        double h1 = d < -4 ? -4 : d > 4 ? 4 : d;
        cc[m * N + n] = c1;
        h[m * N + n] = h1;
        ys[(t * M + m) * N + n] = h1;
      }
  }
  for (int rep = 0; rep < 2; rep++) { /* the same executable twice */
    xrt_buffer *out[3] = {NULL, NULL, NULL};
    st = xrt_execute(e, xrt_client_device(c, 0), a, 4, out, 3, NULL);
    if (st) fail_msg("execute: %s", xrt_last_error());
    check_out(out[0], p->t, h, M * N, "h");
    check_out(out[1], p->t, cc, M * N, "c");
    check_out(out[2], p->t, ys, T * M * N, "ys");
    for (int o = 0; o < 3; o++) xrt_buffer_release(out[o]);
  }
  free(h);
  free(cc);
  free(ys);
  free(g);
  for (int i = 0; i < 4; i++) xrt_buffer_release(a[i]);
  xrt_executable_release(e);
}

/* Rows of 128 and more (read in place, a tile per row), shorter rows
 * (gathered), one row and several. */
static void loop_sizes(xrt_client *c, xrt_dtype t) {
  static const prog ps[] = {
      {XRT_F32, 3, 128, 8}, {XRT_F32, 1, 160, 5}, {XRT_F32, 4, 20, 6},
      {XRT_F32, 8, 256, 16}};
  for (size_t i = 0; i < sizeof ps / sizeof ps[0]; i++) {
    prog p = ps[i];
    p.t = t;
    if (tu_light() && p.N > 200) continue;
    run_loop(c, &p);
  }
}

static void test_loop_f32(void **state) {
  loop_sizes((xrt_client *)*state, XRT_F32);
}

static void test_loop_f64(void **state) {
  loop_sizes((xrt_client *)*state, XRT_F64);
}

static void test_loop_two_threads(void **state) {
  (void)state;
  xrt_client *c = tu_client(1, 2, 0);
  loop_sizes(c, XRT_F32);
  loop_sizes(c, XRT_F64);
  xrt_client_release(c);
}

/* Outside a loop, at sizes cut into pieces too: row slices at different
 * row and column offsets and a slice with a row step feeding elementwise
 * ops, o = a[0:R-1, C:2C] * a[1:R, 3C:4C] + a[2:2R:2, 5:C+5], and a slice
 * returned as it is (a copy), q = a[3:R+3, 7:C+7]; a is [2R, 4C]. */
static void run_flat(xrt_client *c, xrt_dtype t, int64_t R, int64_t C) {
  const char *ty = tyname(t);
  long long r = R, cc = C;
  char ta[48], tr[48], tq[48];
  snprintf(ta, sizeof ta, "tensor<%lldx%lldx%s>", 2 * r, 4 * cc, ty);
  snprintf(tr, sizeof tr, "tensor<%lldx%lldx%s>", r - 1, cc, ty);
  snprintf(tq, sizeof tq, "tensor<%lldx%lldx%s>", r, cc, ty);
  static char text[4096];
  text[0] = 0;
  put(text, sizeof text,
      "func.func @main(%%a: %s) -> (%s, %s) {\n"
      "  %%s0 = stablehlo.slice %%a [0:%lld, %lld:%lld] : (%s) -> %s\n"
      "  %%s1 = stablehlo.slice %%a [1:%lld, %lld:%lld] : (%s) -> %s\n"
      "  %%s2 = stablehlo.slice %%a [2:%lld:2, 5:%lld] : (%s) -> %s\n"
      "  %%p = stablehlo.multiply %%s0, %%s1 : %s\n"
      "  %%o = stablehlo.add %%p, %%s2 : %s\n"
      "  %%q = stablehlo.slice %%a [3:%lld, 7:%lld] : (%s) -> %s\n"
      "  func.return %%o, %%q : %s, %s\n"
      "}\n",
      ta, tr, tq, r - 1, cc, 2 * cc, ta, tr, r, 3 * cc, 4 * cc, ta, tr,
      2 * r, cc + 5, ta, tr, tr, tr, r + 3, cc + 7, ta, tq, tr, tq);
  xrt_shape in = TU_SHAPE(t, 2 * R, 4 * C);
  xrt_status st;
  xrt_executable *e = tu_compile_for(c, text, "slices.mlir", 1, &in, &st);
  if (st) fail_msg("compile: %s\n%s", tu_msg, text);
  int64_t W = 4 * C;
  xrt_buffer *a = upload(c, t, &in, 2 * R * W, 7);
  double *w0 = malloc(sizeof *w0 * (size_t)((R - 1) * C));
  double *w1 = malloc(sizeof *w1 * (size_t)(R * C));
  assert_non_null(w0);
  assert_non_null(w1);
  for (int64_t i = 0; i < R - 1; i++)
    for (int64_t j = 0; j < C; j++)
      w0[i * C + j] = val(i * W + C + j, 7) * val((i + 1) * W + 3 * C + j, 7) +
                      val((2 + 2 * i) * W + 5 + j, 7);
  for (int64_t i = 0; i < R; i++)
    for (int64_t j = 0; j < C; j++) w1[i * C + j] = val((3 + i) * W + 7 + j, 7);
  xrt_buffer *out[2] = {NULL, NULL};
  st = xrt_execute(e, xrt_client_device(c, 0), &a, 1, out, 2, NULL);
  if (st) fail_msg("execute: %s", xrt_last_error());
  check_out(out[0], t, w0, (R - 1) * C, "o");
  check_out(out[1], t, w1, R * C, "q");
  xrt_buffer_release(out[0]);
  xrt_buffer_release(out[1]);
  xrt_buffer_release(a);
  free(w0);
  free(w1);
  xrt_executable_release(e);
}

static void test_flat(void **state) {
  xrt_client *c = (xrt_client *)*state;
  run_flat(c, XRT_F32, 5, 128);
  run_flat(c, XRT_F64, 6, 40);
  if (!tu_light()) run_flat(c, XRT_F32, 300, 256); /* pieces */
}

static void test_flat_two_threads(void **state) {
  (void)state;
  xrt_client *c = tu_client(1, 2, 0);
  run_flat(c, XRT_F32, tu_light() ? 40 : 300, 256);
  run_flat(c, XRT_F64, 70, 200);
  xrt_client_release(c);
}

/* Carries whose results are not written where the next iteration reads
 * them: one body value returned for two carries (x, y), an outer value
 * (z = b); u = 2u is.  After 3 iterations x = y = 8a, u = 8a, z = b. */
static void test_carry_kinds(void **state) {
  xrt_client *c = (xrt_client *)*state;
  static const char text[] =
      "func.func @main(%a: tensor<5xf32>, %b: tensor<5xf32>) -> "
      "(tensor<5xf32>, tensor<5xf32>, tensor<5xf32>, tensor<5xf32>) {\n"
      "  %c0 = stablehlo.constant dense<0> : tensor<i32>\n"
      "  %r:5 = stablehlo.while(%i = %c0, %x = %a, %y = %a, %u = %a, %z = "
      "%a) : tensor<i32>, tensor<5xf32>, tensor<5xf32>, tensor<5xf32>, "
      "tensor<5xf32>\n"
      "   cond {\n"
      "    %n = stablehlo.constant dense<3> : tensor<i32>\n"
      "    %lt = stablehlo.compare LT, %i, %n, SIGNED : (tensor<i32>, "
      "tensor<i32>) -> tensor<i1>\n"
      "    stablehlo.return %lt : tensor<i1>\n"
      "  } do {\n"
      "    %s = stablehlo.add %x, %y : tensor<5xf32>\n"
      "    %v = stablehlo.add %u, %u : tensor<5xf32>\n"
      "    %one = stablehlo.constant dense<1> : tensor<i32>\n"
      "    %i1 = stablehlo.add %i, %one : tensor<i32>\n"
      "    stablehlo.return %i1, %s, %s, %v, %b : tensor<i32>, "
      "tensor<5xf32>, tensor<5xf32>, tensor<5xf32>, tensor<5xf32>\n"
      "  }\n"
      "  func.return %r#1, %r#2, %r#3, %r#4 : tensor<5xf32>, tensor<5xf32>, "
      "tensor<5xf32>, tensor<5xf32>\n"
      "}\n";
  xrt_shape in[2] = {TU_SHAPE(XRT_F32, 5), TU_SHAPE(XRT_F32, 5)};
  xrt_status st;
  xrt_executable *e = tu_compile_for(c, text, "carries.mlir", 2, in, &st);
  if (st) fail_msg("compile: %s", tu_msg);
  xrt_buffer *a[2] = {upload(c, XRT_F32, &in[0], 5, 11),
                      upload(c, XRT_F32, &in[1], 5, 12)};
  double w8[5], wb[5];
  for (int i = 0; i < 5; i++) {
    w8[i] = 8 * val(i, 11);
    wb[i] = val(i, 12);
  }
  for (int rep = 0; rep < 2; rep++) {
    xrt_buffer *out[4] = {NULL, NULL, NULL, NULL};
    st = xrt_execute(e, xrt_client_device(c, 0), a, 2, out, 4, NULL);
    if (st) fail_msg("execute: %s", xrt_last_error());
    check_out(out[0], XRT_F32, w8, 5, "x");
    check_out(out[1], XRT_F32, w8, 5, "y");
    check_out(out[2], XRT_F32, w8, 5, "u");
    check_out(out[3], XRT_F32, wb, 5, "z");
    for (int o = 0; o < 4; o++) xrt_buffer_release(out[o]);
  }
  xrt_buffer_release(a[0]);
  xrt_buffer_release(a[1]);
  xrt_executable_release(e);
}

TU_MAIN(tu_setup_client, tu_teardown_client, cmocka_unit_test(test_loop_f32),
        cmocka_unit_test(test_loop_f64),
        cmocka_unit_test(test_loop_two_threads), cmocka_unit_test(test_flat),
        cmocka_unit_test(test_flat_two_threads),
        cmocka_unit_test(test_carry_kinds))
