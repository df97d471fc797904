/*
 * test_sim_gemm_post.c - a product's epilogue applied in registers by the
 * simulator's micro-kernels (src/sim/gemm.c, sim_gpost; src/sim/fusion.c,
 * sim_fz_post_of): a dot_general whose only use is a line of f32 add,
 * subtract, multiply and divide with column vectors, row vectors, numbers
 * or values of its shape, ending in a clamp, maximum or minimum.  The
 * kernels must give what the ops give one by one, for every value: NaN
 * (which stays NaN),
 * infinities, signed zeros (a ReLU turns -0 into +0, a -0 bound keeps the
 * larger zero), subnormals; on tiles that go straight into the result,
 * through a tile buffer (the last columns, rows past the kernel's), after
 * several K blocks, and on one and two threads; and after 3x3
 * convolutions computed as an im2col panel and one product (NCHW, and
 * NHWC with few positions).  References are the ops'
 * definitions evaluated here in the same order (IEEE maximum and minimum
 * for the bounds).  MIT licensed.
 */
#define _POSIX_C_SOURCE 200809L /* setenv */
#include "test_util.h"

#include <inttypes.h>

static int setup(void **state) { return tu_setup_thread_clients(state, 2); }
static int teardown(void **state) { return tu_teardown_thread_clients(state); }

/* Special and ordinary values, cycled through. */
static const float specials[] = {0.0f,   -0.0f, 1.0f,    -1.0f,  2.5f,
                                 -7.25f, 6.0f,  1e-40f,  -1e-40f, 3e38f,
                                 -3e38f, 0.5f,  -0.125f, 100.0f, 5.75f};

static float special(int64_t i) {
  int64_t n = (int64_t)TU_COUNT(specials) + 3;
  int64_t k = (i * 7 + i / 3) % n;
  if (k == n - 3) return NAN;
  if (k == n - 2) return INFINITY;
  if (k == n - 1) return -INFINITY;
  return specials[k];
}

/* Small integers: sums of products stay exact in any order. */
static float small(int64_t i, int s) {
  return (float)((int64_t)((uint64_t)(i * 5 + s * 11 + (i / 7) * s) % 7) - 3);
}

static float *alloc_f(int64_t n) {
  float *p = malloc(sizeof *p * (size_t)(n ? n : 1));
  assert_non_null(p);
  return p;
}

/* The product's operands: special values through K = 1 (w is +-1, so C
 * holds them exactly), or small integers over K. */
static void operands(int64_t M, int64_t K, int64_t N, float **a, float **w) {
  *a = alloc_f(M * K);
  *w = alloc_f(K * N);
  for (int64_t i = 0; i < M * K; i++)
    (*a)[i] = K == 1 ? special(i) : small(i, 1);
  for (int64_t i = 0; i < K * N; i++)
    (*w)[i] = K == 1 ? (i % 5 == 3 ? -1.0f : 1.0f) : small(i, 2);
}

/* Batch norm as JAX writes it, then ReLU6: ((C - mean) * s + off) clamped
 * to [0, 6]; s has zeros and negative entries (-0 and NaN from 0 * inf). */
static void bn_relu6(tu_clients *c, int64_t M, int64_t K, int64_t N) {
  char prog[4096];
  TU_TPL(prog, sizeof prog,
         "func.func @main(%a: tensor<$1x$2xf32>, %w: tensor<$2x$3xf32>, "
         "%mean: tensor<$3xf32>, %s: tensor<$3xf32>, %off: tensor<$3xf32>) "
         "-> tensor<$1x$3xf32> {\n"
         "  %0 = stablehlo.dot_general %a, %w, contracting_dims = [1] x "
         "[0] : (tensor<$1x$2xf32>, tensor<$2x$3xf32>) -> "
         "tensor<$1x$3xf32>\n"
         "  %1 = stablehlo.broadcast_in_dim %mean, dims = [1] : "
         "(tensor<$3xf32>) -> tensor<$1x$3xf32>\n"
         "  %2 = stablehlo.subtract %0, %1 : tensor<$1x$3xf32>\n"
         "  %3 = stablehlo.broadcast_in_dim %s, dims = [1] : "
         "(tensor<$3xf32>) -> tensor<$1x$3xf32>\n"
         "  %4 = stablehlo.multiply %2, %3 : tensor<$1x$3xf32>\n"
         "  %5 = stablehlo.broadcast_in_dim %off, dims = [1] : "
         "(tensor<$3xf32>) -> tensor<$1x$3xf32>\n"
         "  %6 = stablehlo.add %4, %5 : tensor<$1x$3xf32>\n"
         "  %lo = stablehlo.constant dense<0.0> : tensor<f32>\n"
         "  %hi = stablehlo.constant dense<6.0> : tensor<f32>\n"
         "  %7 = stablehlo.clamp %lo, %6, %hi : (tensor<f32>, "
         "tensor<$1x$3xf32>, tensor<f32>) -> tensor<$1x$3xf32>\n"
         "  func.return %7 : tensor<$1x$3xf32>\n}\n",
         M, K, N);
  float *a, *w;
  operands(M, K, N, &a, &w);
  float *mean = alloc_f(N), *s = alloc_f(N), *off = alloc_f(N);
  for (int64_t n = 0; n < N; n++) {
    mean[n] = n % 4 == 0 ? 0.0f : small(n, 3) * 0.5f;
    s[n] = n % 6 == 1 ? 0.0f : n % 3 == 0 ? -1.5f : small(n, 4) * 0.25f;
    off[n] = n % 5 == 0 ? 0.0f : n % 5 == 1 ? -0.0f : small(n, 5);
  }
  float *want = tu_ref_product(a, w, M, K, N);
  for (int64_t m = 0; m < M; m++)
    for (int64_t n = 0; n < N; n++) {
      float v = (want[m * N + n] - mean[n]) * s[n] + off[n];
      want[m * N + n] = tu_ieee_minf(tu_ieee_maxf(v, 0.0f), 6.0f);
    }
  tu_in in[5] = {{TU_SHAPE(XRT_F32, M, K), a},
                 {TU_SHAPE(XRT_F32, K, N), w},
                 {TU_SHAPE(XRT_F32, N), mean},
                 {TU_SHAPE(XRT_F32, N), s},
                 {TU_SHAPE(XRT_F32, N), off}};
  tu_run_threads_same(c, prog, 5, in, want, M * N);
  free(a), free(w), free(mean), free(s), free(off), free(want);
}

/* Tiles straight into C and through the tile buffer (N = 50: one whole
 * 32-column tile and 18 columns; M = 93 and 41: rows past the last whole
 * 12; M = 8 and 4: the kernels of fewer rows; M = 5: a tile buffer), one
 * K block and several (K = 900).  Products of fewer than 4096 multiply-
 * adds take other paths. */
static void test_batch_norm_relu6(void **state) {
  tu_clients *c = (tu_clients *)*state;
  bn_relu6(c, 93, 1, 50);
  bn_relu6(c, 300, 1, 144);
  bn_relu6(c, 8, 600, 64);
  bn_relu6(c, 4, 1100, 40);
  bn_relu6(c, 5, 900, 33);
  bn_relu6(c, 41, 900, 70);
}

/* Operations the other way round (b op v) and a maximum with 0 (a ReLU):
 * max(s / (mean - C), 0), with divisions by zero. */
static void test_reversed_relu(void **state) {
  tu_clients *c = (tu_clients *)*state;
  const int64_t M = 110, K = 1, N = 40;
  const char *prog =
      "func.func @main(%a: tensor<110x1xf32>, %w: tensor<1x40xf32>, "
      "%mean: tensor<40xf32>, %s: tensor<40xf32>) -> tensor<110x40xf32> {\n"
      "  %0 = stablehlo.dot_general %a, %w, contracting_dims = [1] x [0] : "
      "(tensor<110x1xf32>, tensor<1x40xf32>) -> tensor<110x40xf32>\n"
      "  %1 = stablehlo.broadcast_in_dim %mean, dims = [1] : "
      "(tensor<40xf32>) -> tensor<110x40xf32>\n"
      "  %2 = stablehlo.subtract %1, %0 : tensor<110x40xf32>\n"
      "  %3 = stablehlo.broadcast_in_dim %s, dims = [1] : (tensor<40xf32>) "
      "-> tensor<110x40xf32>\n"
      "  %4 = stablehlo.divide %3, %2 : tensor<110x40xf32>\n"
      "  %c = stablehlo.constant dense<0.0> : tensor<f32>\n"
      "  %z = stablehlo.broadcast_in_dim %c, dims = [] : (tensor<f32>) -> "
      "tensor<110x40xf32>\n"
      "  %5 = stablehlo.maximum %4, %z : tensor<110x40xf32>\n"
      "  func.return %5 : tensor<110x40xf32>\n}\n";
  float *a, *w;
  operands(M, K, N, &a, &w);
  float *mean = alloc_f(N), *s = alloc_f(N);
  for (int64_t n = 0; n < N; n++) {
    mean[n] = n % 3 == 0 ? 0.0f : n % 3 == 1 ? 1.0f : -2.5f;
    s[n] = n % 4 == 0 ? -0.0f : small(n, 6);
  }
  float *want = tu_ref_product(a, w, M, K, N);
  for (int64_t m = 0; m < M; m++)
    for (int64_t n = 0; n < N; n++) {
      float v = s[n] / (mean[n] - want[m * N + n]);
      want[m * N + n] = tu_ieee_maxf(v, 0.0f);
    }
  tu_in in[4] = {{TU_SHAPE(XRT_F32, M, K), a},
                 {TU_SHAPE(XRT_F32, K, N), w},
                 {TU_SHAPE(XRT_F32, N), mean},
                 {TU_SHAPE(XRT_F32, N), s}};
  tu_run_threads_same(c, prog, 4, in, want, M * N);
  free(a), free(w), free(mean), free(s), free(want);
}

/* A residual (a value of C's shape), a number, and bounds lo = -0 (the
 * larger zero stays) and hi = 2; then a minimum alone; then hi = -0,
 * which the kernels leave to the group's own loop. */
static void residual(tu_clients *c, const char *lo, const char *hi, float flo,
                     float fhi) {
  const int64_t M = 61, K = 1, N = 70;
  char prog[4096];
  snprintf(prog, sizeof prog,
         "func.func @main(%%a: tensor<61x1xf32>, %%w: tensor<1x70xf32>, "
         "%%r: tensor<61x70xf32>) -> tensor<61x70xf32> {\n"
         "  %%0 = stablehlo.dot_general %%a, %%w, contracting_dims = [1] x "
         "[0] : (tensor<61x1xf32>, tensor<1x70xf32>) -> "
         "tensor<61x70xf32>\n"
         "  %%1 = stablehlo.add %%0, %%r : tensor<61x70xf32>\n"
         "  %%c = stablehlo.constant dense<-0.5> : tensor<f32>\n"
         "  %%h = stablehlo.broadcast_in_dim %%c, dims = [] : (tensor<f32>) "
         "-> tensor<61x70xf32>\n"
         "  %%2 = stablehlo.multiply %%h, %%1 : tensor<61x70xf32>\n"
         "  %%lo = stablehlo.constant dense<%s> : tensor<f32>\n"
         "  %%hi = stablehlo.constant dense<%s> : tensor<f32>\n"
         "  %%3 = stablehlo.clamp %%lo, %%2, %%hi : (tensor<f32>, "
         "tensor<61x70xf32>, tensor<f32>) -> tensor<61x70xf32>\n"
         "  func.return %%3 : tensor<61x70xf32>\n}\n",
         lo, hi);
  float *a, *w;
  operands(M, K, N, &a, &w);
  float *r = alloc_f(M * N);
  for (int64_t i = 0; i < M * N; i++)
    r[i] = i % 7 == 0 ? -0.0f : i % 11 == 0 ? special(i + 3) : small(i, 7);
  float *want = tu_ref_product(a, w, M, K, N);
  for (int64_t i = 0; i < M * N; i++) {
    float v = -0.5f * (want[i] + r[i]);
    want[i] = tu_ieee_minf(tu_ieee_maxf(v, flo), fhi);
  }
  tu_in in[3] = {{TU_SHAPE(XRT_F32, M, K), a},
                 {TU_SHAPE(XRT_F32, K, N), w},
                 {TU_SHAPE(XRT_F32, M, N), r}};
  tu_run_threads_same(c, prog, 3, in, want, M * N);
  free(a), free(w), free(r), free(want);
}

static void test_residual_bounds(void **state) {
  tu_clients *c = (tu_clients *)*state;
  residual(c, "-0.0", "2.0", -0.0f, 2.0f);
  residual(c, "0.0", "0.0", 0.0f, 0.0f);
  residual(c, "-1.0", "-0.0", -1.0f, -0.0f);
  residual(c, "0xFF800000", "1.5", -INFINITY, 1.5f);
}

/* Row vectors (an NCHW convolution's bias: one number per feature, a row
 * of the product): max((C + rb) * rs, 0). */
static void row_vectors(tu_clients *c, int64_t M, int64_t K, int64_t N) {
  char prog[4096];
  TU_TPL(prog, sizeof prog,
         "func.func @main(%a: tensor<$1x$2xf32>, %w: tensor<$2x$3xf32>, "
         "%rb: tensor<$1xf32>, %rs: tensor<$1xf32>) -> tensor<$1x$3xf32> "
         "{\n"
         "  %0 = stablehlo.dot_general %a, %w, contracting_dims = [1] x "
         "[0] : (tensor<$1x$2xf32>, tensor<$2x$3xf32>) -> "
         "tensor<$1x$3xf32>\n"
         "  %1 = stablehlo.broadcast_in_dim %rb, dims = [0] : "
         "(tensor<$1xf32>) -> tensor<$1x$3xf32>\n"
         "  %2 = stablehlo.add %0, %1 : tensor<$1x$3xf32>\n"
         "  %3 = stablehlo.broadcast_in_dim %rs, dims = [0] : "
         "(tensor<$1xf32>) -> tensor<$1x$3xf32>\n"
         "  %4 = stablehlo.multiply %2, %3 : tensor<$1x$3xf32>\n"
         "  %c = stablehlo.constant dense<0.0> : tensor<f32>\n"
         "  %z = stablehlo.broadcast_in_dim %c, dims = [] : (tensor<f32>) "
         "-> tensor<$1x$3xf32>\n"
         "  %5 = stablehlo.maximum %4, %z : tensor<$1x$3xf32>\n"
         "  func.return %5 : tensor<$1x$3xf32>\n}\n",
         M, K, N);
  float *a, *w;
  operands(M, K, N, &a, &w);
  float *rb = alloc_f(M), *rs = alloc_f(M);
  for (int64_t m = 0; m < M; m++) {
    rb[m] = m % 4 == 0 ? -0.0f : small(m, 8) * 0.5f;
    rs[m] = m % 5 == 0 ? -2.0f : small(m, 9);
  }
  float *want = tu_ref_product(a, w, M, K, N);
  for (int64_t m = 0; m < M; m++)
    for (int64_t n = 0; n < N; n++)
      want[m * N + n] = tu_ieee_maxf((want[m * N + n] + rb[m]) * rs[m], 0.0f);
  tu_in in[4] = {{TU_SHAPE(XRT_F32, M, K), a},
                 {TU_SHAPE(XRT_F32, K, N), w},
                 {TU_SHAPE(XRT_F32, M), rb},
                 {TU_SHAPE(XRT_F32, M), rs}};
  tu_run_threads_same(c, prog, 4, in, want, M * N);
  free(a), free(w), free(rb), free(rs), free(want);
}

/* Rows past the kernels', and several K blocks with a last tile of 18
 * columns (the epilogue over C after the tile buffer). */
static void test_row_vectors(void **state) {
  tu_clients *c = (tu_clients *)*state;
  row_vectors(c, 75, 1, 90);
  row_vectors(c, 40, 900, 50);
}

/* ---- every operation, both sides, every kind of operand ----
 * v op b or b op v for add, subtract, multiply and divide, with each kind
 * of operand, then clamp(-50, ., 50) or nothing, on every kernel that
 * takes the epilogue: a dot_general with A's rows contiguous (the
 * strip-packed kernels) and with A transposed (the plain ones), a 1x1
 * NHWC convolution, each with M = 20 and 16 rows (12-row kernels, then
 * the 8- and 4-row ones), several K blocks (the epilogue after a tile
 * buffer), and a 3x3 depthwise convolution (four positions at a time,
 * the border ones after their kernel; column vectors and numbers). */
enum { K_COL, K_ROW, K_FULL, K_ONE, K_KINDS };
enum { F_DOT, F_DOT_T, F_CONV1, F_DW, F_FORMS };
static const char *const op_names[4] = {"add", "subtract", "multiply",
                                        "divide"};

typedef struct op_case {
  int form, op, rev, kind, clamp;
  int64_t M, K, N; /* F_DW: an image of M x DW_W positions, N features */
} op_case;
#define DW_W 14

static float apply_op(int op, float a, float b) {
  return op == 0 ? a + b : op == 1 ? a - b : op == 2 ? a * b : a / b;
}

/* The types of the case's operands and result. */
static void case_types(const op_case *q, char *a, char *w, char *y,
                       size_t n) {
  long long M = q->M, K = q->K, N = q->N;
  switch (q->form) {
  case F_DOT:
    snprintf(a, n, "%lldx%lld", M, K), snprintf(w, n, "%lldx%lld", K, N);
    snprintf(y, n, "%lldx%lld", M, N);
    break;
  case F_DOT_T:
    snprintf(a, n, "%lldx%lld", K, M), snprintf(w, n, "%lldx%lld", K, N);
    snprintf(y, n, "%lldx%lld", M, N);
    break;
  case F_CONV1:
    snprintf(a, n, "1x%lldx1x%lld", M, K);
    snprintf(w, n, "1x1x%lldx%lld", K, N);
    snprintf(y, n, "1x%lldx1x%lld", M, N);
    break;
  default:
    snprintf(a, n, "1x%lldx%dx%lld", M, DW_W, N);
    snprintf(w, n, "3x3x1x%lld", N);
    snprintf(y, n, "1x%lldx%dx%lld", M, DW_W, N);
  }
}

static void case_program(const op_case *q, char *prog, size_t n) {
  char a[64], w[64], y[64], x[1024], b[512], bty[96];
  case_types(q, a, w, y, sizeof a);
  int dw = q->form == F_DW, dot = q->form == F_DOT || q->form == F_DOT_T;
  if (dot)
    snprintf(x, sizeof x,
             "  %%x = stablehlo.dot_general %%a, %%w, contracting_dims = "
             "[%d] x [0] : (tensor<%sxf32>, tensor<%sxf32>) -> "
             "tensor<%sxf32>\n", q->form == F_DOT_T ? 0 : 1, a, w, y);
  else
    snprintf(x, sizeof x,
             "  %%x = stablehlo.convolution(%%a, %%w) dim_numbers = [b, 0, "
             "1, f]x[0, 1, i, o]->[b, 0, 1, f], window = {stride = [1, 1], "
             "pad = [[%d, %d], [%d, %d]], rhs_dilate = [1, 1]} "
             "{batch_group_count = 1 : i64, feature_group_count = %lld : "
             "i64} : (tensor<%sxf32>, tensor<%sxf32>) -> tensor<%sxf32>\n",
             dw, dw, dw, dw, (long long)(dw ? q->N : 1), a, w, y);
  int last = dot ? 1 : 3;
  int64_t rows = dw ? q->M : q->M; /* row vectors: per row of the image */
  if (q->kind == K_FULL) snprintf(bty, sizeof bty, "tensor<%sxf32>", y);
  else if (q->kind == K_ONE) snprintf(bty, sizeof bty, "tensor<f32>");
  else snprintf(bty, sizeof bty, "tensor<%lldxf32>",
                (long long)(q->kind == K_COL ? q->N : rows));
  if (q->kind == K_FULL)
    snprintf(b, sizeof b, "  %%bb = stablehlo.add %%b, %%b : %s\n", bty);
  else if (q->kind == K_ONE)
    snprintf(b, sizeof b, "  %%bb = stablehlo.broadcast_in_dim %%b, dims = "
             "[] : (tensor<f32>) -> tensor<%sxf32>\n", y);
  else
    snprintf(b, sizeof b, "  %%bb = stablehlo.broadcast_in_dim %%b, dims = "
             "[%d] : (%s) -> tensor<%sxf32>\n",
             q->kind == K_COL ? last : dot ? 0 : 1, bty, y);
  const char *l = q->rev ? "%bb" : "%x", *r = q->rev ? "%x" : "%bb";
  if (q->clamp)
    snprintf(prog, n,
             "func.func @main(%%a: tensor<%sxf32>, %%w: tensor<%sxf32>, "
             "%%b: %s) -> tensor<%sxf32> {\n%s%s"
             "  %%y = stablehlo.%s %s, %s : tensor<%sxf32>\n"
             "  %%lo = stablehlo.constant dense<-50.0> : tensor<f32>\n"
             "  %%hi = stablehlo.constant dense<50.0> : tensor<f32>\n"
             "  %%z = stablehlo.clamp %%lo, %%y, %%hi : (tensor<f32>, "
             "tensor<%sxf32>, tensor<f32>) -> tensor<%sxf32>\n"
             "  func.return %%z : tensor<%sxf32>\n}\n",
             a, w, bty, y, x, b, op_names[q->op], l, r, y, y, y, y);
  else
    snprintf(prog, n,
             "func.func @main(%%a: tensor<%sxf32>, %%w: tensor<%sxf32>, "
             "%%b: %s) -> tensor<%sxf32> {\n%s%s"
             "  %%y = stablehlo.%s %s, %s : tensor<%sxf32>\n"
             "  func.return %%y : tensor<%sxf32>\n}\n",
             a, w, bty, y, x, b, op_names[q->op], l, r, y, y);
}

/* The convolution's or product's result, exact (small integers). */
static float *case_x(const op_case *q, const float *a, const float *w) {
  int64_t M = q->M, K = q->K, N = q->N;
  if (q->form == F_DOT || q->form == F_CONV1)
    return tu_ref_product(a, w, M, K, N);
  float *x = alloc_f(q->form == F_DW ? M * DW_W * N : M * N);
  if (q->form == F_DOT_T) {
    float *at = alloc_f(M * K);
    for (int64_t m = 0; m < M; m++)
      for (int64_t k = 0; k < K; k++) at[m * K + k] = a[k * M + m];
    free(x);
    x = tu_ref_product(at, w, M, K, N);
    free(at);
    return x;
  }
  tu_ref_conv3x3(a, w, 1, M, DW_W, N, 1, 1, x);
  return x;
}

static void one_op(tu_clients *c, const op_case *q) {
  char prog[4096];
  case_program(q, prog, sizeof prog);
  int dw = q->form == F_DW;
  int64_t pos = dw ? q->M * DW_W : q->M; /* result rows */
  int64_t na = dw ? pos * q->N : q->M * q->K, nw = dw ? 9 * q->N
                                                     : q->K * q->N;
  int64_t ny = pos * q->N;
  int64_t nb = q->kind == K_FULL  ? ny
               : q->kind == K_ONE ? 1
               : q->kind == K_COL ? q->N
                                  : q->M;
  float *a = alloc_f(na), *w = alloc_f(nw), *b = alloc_f(nb);
  for (int64_t i = 0; i < na; i++) a[i] = small(i, 10);
  for (int64_t i = 0; i < nw; i++) w[i] = small(i, 11);
  for (int64_t i = 0; i < nb; i++) b[i] = small(i, 12) * 0.5f;
  float *x = case_x(q, a, w), *want = alloc_f(ny);
  for (int64_t i = 0; i < ny; i++) {
    int64_t row = i / q->N / (dw ? DW_W : 1), col = i % q->N;
    float bv = q->kind == K_FULL  ? b[i] + b[i]
               : q->kind == K_ONE ? b[0]
               : q->kind == K_COL ? b[col]
                                  : b[row];
    float v = q->rev ? apply_op(q->op, bv, x[i]) : apply_op(q->op, x[i], bv);
    want[i] = q->clamp ? tu_ieee_minf(tu_ieee_maxf(v, -50.0f), 50.0f) : v;
  }
  char at[64], wt[64], yt[64];
  case_types(q, at, wt, yt, sizeof at);
  int64_t ad[4], wd[4], yd[4];
  int ar = sscanf(at, "%" SCNd64 "x%" SCNd64 "x%" SCNd64 "x%" SCNd64, &ad[0],
                  &ad[1], &ad[2], &ad[3]);
  int wr = sscanf(wt, "%" SCNd64 "x%" SCNd64 "x%" SCNd64 "x%" SCNd64, &wd[0],
                  &wd[1], &wd[2], &wd[3]);
  int yr = sscanf(yt, "%" SCNd64 "x%" SCNd64 "x%" SCNd64 "x%" SCNd64, &yd[0],
                  &yd[1], &yd[2], &yd[3]);
  tu_in in[3] = {{tu_shape(XRT_F32, ar, ad), a}, {tu_shape(XRT_F32, wr, wd), w},
                 {tu_shape(XRT_F32, yr, yd), b}};
  if (q->kind == K_ONE) in[2].shape = TU_SCALAR(XRT_F32);
  if (q->kind == K_COL || q->kind == K_ROW)
    in[2].shape = TU_SHAPE(XRT_F32, nb);
  tu_run_threads_same(c, prog, 3, in, want, ny);
  free(a), free(w), free(b), free(x), free(want);
}

static void test_every_operation(void **state) {
  tu_clients *c = (tu_clients *)*state;
  for (int form = 0; form < F_FORMS; form++)
    for (int op = 0; op < 4; op++)
      for (int rev = 0; rev < 2; rev++)
        for (int kind = 0; kind < K_KINDS; kind++) {
          if (form == F_DW && kind != K_COL && kind != K_ONE) continue;
          op_case q = {form, op, rev, kind, 1, 20, 8, 40};
          /* a depthwise result fuses with its group in tiles of whole
           * positions: 40 features fit the tiles of a column vector's
           * period, a number alone needs a power of two */
          if (form == F_DW) q.M = 6, q.N = kind == K_ONE ? 64 : 40;
          one_op(c, &q);
          if (form == F_DW) continue;
          q.M = 16; /* the 4-row kernels */
          one_op(c, &q);
        }
  for (int kind = 0; kind < K_KINDS; kind++) { /* no bounds; K blocks */
    op_case q = {F_DOT, 0, 0, kind, 0, 20, 8, 40};
    one_op(c, &q);
    q.form = F_DW, q.M = 6, q.N = kind == K_ONE ? 64 : 40;
    if (kind == K_COL || kind == K_ONE) one_op(c, &q);
    q.N = 40;
    q.form = F_DOT, q.M = 20, q.K = 900, q.clamp = 1;
    one_op(c, &q);
  }
}

/* ---- convolutions as an im2col panel and one product ----
 * A 3x3 convolution (padding 1) whose result a chain reads: batch norm as
 * JAX writes it, then ReLU ((y - mean) * s + off, at least 0), per output
 * feature.  NCHW (conv_gemm.c: kernel x the panel built packed; the
 * features are the product's rows, row vectors to the epilogue) and NHWC
 * with fewer positions than features (the panel x the kernel; column
 * vectors): in registers (y times one, a line) or, when the group is no
 * line (abs(y) first), on the product's rows as they are done. */
static void conv_bn_relu(tu_clients *c, int nchw, int sq, int64_t H,
                         int64_t W, int64_t I, int64_t O) {
  char prog[4096], xt[64], wt[64], yt[64];
  long long h = H, w = W, i = I, o = O;
  if (nchw) {
    snprintf(xt, sizeof xt, "1x%lldx%lldx%lld", i, h, w);
    snprintf(wt, sizeof wt, "%lldx%lldx3x3", o, i);
    snprintf(yt, sizeof yt, "1x%lldx%lldx%lld", o, h, w);
  } else {
    snprintf(xt, sizeof xt, "1x%lldx%lldx%lld", h, w, i);
    snprintf(wt, sizeof wt, "3x3x%lldx%lld", i, o);
    snprintf(yt, sizeof yt, "1x%lldx%lldx%lld", h, w, o);
  }
  const char *dn = nchw ? "[b, f, 0, 1]x[o, i, 0, 1]->[b, f, 0, 1]"
                        : "[b, 0, 1, f]x[0, 1, i, o]->[b, 0, 1, f]";
  int fd = nchw ? 1 : 3; /* the result's feature dimension */
  snprintf(prog, sizeof prog,
           "func.func @main(%%x: tensor<%sxf32>, %%w: tensor<%sxf32>, "
           "%%mean: tensor<%lldxf32>, %%s: tensor<%lldxf32>, "
           "%%off: tensor<%lldxf32>) -> tensor<%sxf32> {\n"
           "  %%oc = stablehlo.constant dense<1.0> : tensor<f32>\n"
           "  %%one = stablehlo.broadcast_in_dim %%oc, dims = [] : "
           "(tensor<f32>) -> tensor<%sxf32>\n"
           "  %%y = stablehlo.convolution(%%x, %%w) dim_numbers = %s, "
           "window = {stride = [1, 1], pad = [[1, 1], [1, 1]]} "
           "{batch_group_count = 1 : i64, feature_group_count = 1 : i64} : "
           "(tensor<%sxf32>, tensor<%sxf32>) -> tensor<%sxf32>\n"
           "  %%q = stablehlo.%s : tensor<%sxf32>\n"
           "  %%m = stablehlo.broadcast_in_dim %%mean, dims = [%d] : "
           "(tensor<%lldxf32>) -> tensor<%sxf32>\n"
           "  %%0 = stablehlo.subtract %%q, %%m : tensor<%sxf32>\n"
           "  %%sb = stablehlo.broadcast_in_dim %%s, dims = [%d] : "
           "(tensor<%lldxf32>) -> tensor<%sxf32>\n"
           "  %%1 = stablehlo.multiply %%0, %%sb : tensor<%sxf32>\n"
           "  %%ob = stablehlo.broadcast_in_dim %%off, dims = [%d] : "
           "(tensor<%lldxf32>) -> tensor<%sxf32>\n"
           "  %%2 = stablehlo.add %%1, %%ob : tensor<%sxf32>\n"
           "  %%zc = stablehlo.constant dense<0.0> : tensor<f32>\n"
           "  %%z = stablehlo.broadcast_in_dim %%zc, dims = [] : "
           "(tensor<f32>) -> tensor<%sxf32>\n"
           "  %%3 = stablehlo.maximum %%2, %%z : tensor<%sxf32>\n"
           "  func.return %%3 : tensor<%sxf32>\n}\n",
           xt, wt, o, o, o, yt, yt, dn, xt, wt, yt,
           sq ? "abs %y" : "multiply %y, %one", yt, fd, o, yt, yt, fd, o, yt,
           yt, fd, o, yt, yt, yt, yt, yt);
  int64_t nx = H * W * I, nw = 9 * I * O, ny = H * W * O;
  float *x = alloc_f(nx), *f = alloc_f(nw), *xh = alloc_f(nx);
  float *fh = alloc_f(nw), *y = alloc_f(ny), *want = alloc_f(ny);
  float *mean = alloc_f(O), *s = alloc_f(O), *off = alloc_f(O);
  for (int64_t k = 0; k < nx; k++) x[k] = small(k, 20);
  for (int64_t k = 0; k < nw; k++) f[k] = small(k, 21);
  for (int64_t k = 0; k < O; k++) {
    mean[k] = small(k, 22) * 0.5f;
    s[k] = k % 7 == 2 ? 0.0f : k % 3 == 0 ? -1.5f : small(k, 23) * 0.25f;
    off[k] = k % 5 == 1 ? -0.0f : small(k, 24);
  }
  /* the reference in NHWC / HWIO */
  for (int64_t p = 0; p < H * W; p++)
    for (int64_t q = 0; q < I; q++)
      xh[p * I + q] = nchw ? x[q * H * W + p] : x[p * I + q];
  for (int64_t t = 0; t < 9; t++)
    for (int64_t q = 0; q < I; q++)
      for (int64_t r = 0; r < O; r++)
        fh[(t * I + q) * O + r] =
            nchw ? f[(r * I + q) * 9 + t] : f[(t * I + q) * O + r];
  tu_ref_conv3x3(xh, fh, 1, H, W, O, I, 1, y);
  for (int64_t p = 0; p < H * W; p++)
    for (int64_t r = 0; r < O; r++) {
      float q = sq ? fabsf(y[p * O + r]) : y[p * O + r] * 1.0f;
      float v = (q - mean[r]) * s[r] + off[r];
      want[nchw ? r * H * W + p : p * O + r] = tu_ieee_maxf(v, 0.0f);
    }
  tu_in in[5] = {{nchw ? TU_SHAPE(XRT_F32, 1, I, H, W)
                       : TU_SHAPE(XRT_F32, 1, H, W, I), x},
                 {nchw ? TU_SHAPE(XRT_F32, O, I, 3, 3)
                       : TU_SHAPE(XRT_F32, 3, 3, I, O), f},
                 {TU_SHAPE(XRT_F32, O), mean},
                 {TU_SHAPE(XRT_F32, O), s},
                 {TU_SHAPE(XRT_F32, O), off}};
  tu_run_threads_same(c, prog, 5, in, want, ny);
  free(x), free(f), free(xh), free(fh), free(y), free(want);
  free(mean), free(s), free(off);
}

static void test_im2col_convolutions(void **state) {
  tu_clients *c = (tu_clients *)*state;
  for (int sq = 0; sq < 2; sq++) { /* abs(y) first: no line, rows */
    conv_bn_relu(c, 1, sq, 20, 20, 16, 48); /* 48 x 400 */
    conv_bn_relu(c, 1, sq, 9, 11, 24, 20);  /* a last tile of 3 columns */
    conv_bn_relu(c, 0, sq, 6, 6, 32, 64);   /* 36 positions x 64 */
    conv_bn_relu(c, 0, sq, 5, 7, 24, 40);   /* 35 x 40: a tile buffer */
  }
}

/* Convolutions of one group of few input features (RGB) or few results
 * (conv_dw.c's dn and dn4: four positions of up to four vectors of
 * results, the last masked, or eight positions of one vector), their
 * chain in registers (sim_dw_dn4p_f32_avx512); the positions whose
 * window meets the padding one by one, the chain after their stores. */
static void test_dense_convolutions(void **state) {
  tu_clients *c = (tu_clients *)*state;
  conv_bn_relu(c, 0, 0, 9, 10, 3, 64); /* four whole vectors */
  conv_bn_relu(c, 0, 0, 7, 9, 3, 40);  /* three, the last masked */
  conv_bn_relu(c, 0, 0, 8, 11, 32, 16); /* one vector, eight positions */
  conv_bn_relu(c, 0, 0, 6, 7, 3, 10);  /* one masked vector */
}

/* ---- batch_norm_inference in the epilogue ----
 * The op after a product (fusion.c, sim_fzbn) is (y - mean) * k + off
 * with k = scale / sqrt(var + eps) per feature, in double rounded once:
 * three f32 operations the kernels apply in registers, then a residual
 * and a ReLU.  Features along the result's columns (NHWC convolutions,
 * x @ W) or its rows (feature_index 0 of a product: row vectors); eps 0
 * with var 0 makes k infinite or NaN (scale 0). */
typedef struct bn_case {
  int conv;    /* a 3x3 NHWC convolution, else a dot_general */
  int64_t M, K, N; /* conv: positions side M x M, K features in, N out */
  int fi;      /* dot_general: the feature dimension */
  float eps;
} bn_case;

static void bn_op_prog(const bn_case *q, char *prog, size_t cap,
                       char *yt, size_t ycap, int64_t F) {
  char xt[64], wt[64], op[512];
  long long m = q->M, k = q->K, n = q->N, f = F;
  if (q->conv) {
    snprintf(xt, sizeof xt, "1x%lldx%lldx%lld", m, m, k);
    snprintf(wt, sizeof wt, "3x3x%lldx%lld", k, n);
    snprintf(yt, ycap, "1x%lldx%lldx%lld", m, m, n);
    snprintf(op, sizeof op,
             "stablehlo.convolution(%%x, %%w) dim_numbers = [b, 0, 1, f]x"
             "[0, 1, i, o]->[b, 0, 1, f], window = {stride = [1, 1], pad = "
             "[[1, 1], [1, 1]]} {batch_group_count = 1 : i64, "
             "feature_group_count = 1 : i64} : (tensor<%sxf32>, "
             "tensor<%sxf32>) -> tensor<%sxf32>", xt, wt, yt);
  } else {
    snprintf(xt, sizeof xt, "%lldx%lld", m, k);
    snprintf(wt, sizeof wt, "%lldx%lld", k, n);
    snprintf(yt, ycap, "%lldx%lld", m, n);
    snprintf(op, sizeof op,
             "stablehlo.dot_general %%x, %%w, contracting_dims = [1] x [0] "
             ": (tensor<%sxf32>, tensor<%sxf32>) -> tensor<%sxf32>",
             xt, wt, yt);
  }
  snprintf(prog, cap,
           "func.func @main(%%x: tensor<%sxf32>, %%w: tensor<%sxf32>, "
           "%%s: tensor<%lldxf32>, %%o: tensor<%lldxf32>, "
           "%%m: tensor<%lldxf32>, %%v: tensor<%lldxf32>, "
           "%%r: tensor<%sxf32>) -> tensor<%sxf32> {\n"
           "  %%y = %s\n"
           "  %%b = \"stablehlo.batch_norm_inference\"(%%y, %%s, %%o, %%m, "
           "%%v) {epsilon = %.9g : f32, feature_index = %d : i64} : "
           "(tensor<%sxf32>, tensor<%lldxf32>, tensor<%lldxf32>, "
           "tensor<%lldxf32>, tensor<%lldxf32>) -> tensor<%sxf32>\n"
           "  %%a = stablehlo.add %%b, %%r : tensor<%sxf32>\n"
           "  %%zc = stablehlo.constant dense<0.0> : tensor<f32>\n"
           "  %%z = stablehlo.broadcast_in_dim %%zc, dims = [] : "
           "(tensor<f32>) -> tensor<%sxf32>\n"
           "  %%e = stablehlo.maximum %%a, %%z : tensor<%sxf32>\n"
           "  func.return %%e : tensor<%sxf32>\n}\n",
           xt, wt, f, f, f, f, yt, yt, op, (double)q->eps,
           q->conv ? 3 : q->fi, yt, f, f, f, f, yt, yt, yt, yt, yt);
}

static void bn_op(tu_clients *c, const bn_case *q) {
  int64_t M = q->conv ? q->M * q->M : q->M, K = q->conv ? 9 * q->K : q->K;
  int64_t N = q->N, F = q->conv || q->fi == 1 ? N : M;
  char prog[8192], yt[64];
  bn_op_prog(q, prog, sizeof prog, yt, sizeof yt, F);
  int64_t nx = q->conv ? M * q->K : M * K, nw = K * N;
  float *x = alloc_f(nx), *w = alloc_f(nw), *r = alloc_f(M * N);
  float *y = alloc_f(M * N), *want = alloc_f(M * N);
  float *sc = alloc_f(F), *of = alloc_f(F), *mn = alloc_f(F), *vr = alloc_f(F);
  for (int64_t i = 0; i < nx; i++) x[i] = small(i, 30);
  for (int64_t i = 0; i < nw; i++) w[i] = small(i, 31);
  for (int64_t i = 0; i < M * N; i++)
    r[i] = i % 9 == 0 ? -0.0f : small(i, 32) * 0.75f;
  static const float vars[] = {0.0f, 0.25f, 2.0f, 9.0f, 0.1f};
  for (int64_t f = 0; f < F; f++) {
    sc[f] = f % 7 == 2 ? 0.0f : f % 3 == 0 ? -1.5f : small(f, 33) * 0.3f;
    of[f] = f % 5 == 1 ? -0.0f : small(f, 34) * 0.6f;
    mn[f] = small(f, 35) * 0.45f;
    vr[f] = vars[f % 5];
  }
  if (q->conv) {
    tu_ref_conv3x3(x, w, 1, q->M, q->M, N, q->K, 1, y);
  } else {
    float *p = tu_ref_product(x, w, M, K, N);
    memcpy(y, p, sizeof *y * (size_t)(M * N));
    free(p);
  }
  for (int64_t i = 0; i < M; i++)
    for (int64_t j = 0; j < N; j++) {
      int64_t f = F == N ? j : i;
      double sd = sqrt((double)vr[f] + (double)q->eps);
      float k = (float)((double)sc[f] / sd);
      float d = y[i * N + j] - mn[f];
      float t = d * k;
      float v = t + of[f];
      want[i * N + j] = tu_ieee_maxf(v + r[i * N + j], 0.0f);
    }
  tu_in in[7] = {{q->conv ? TU_SHAPE(XRT_F32, 1, q->M, q->M, q->K)
                          : TU_SHAPE(XRT_F32, M, K), x},
                 {q->conv ? TU_SHAPE(XRT_F32, 3, 3, q->K, N)
                          : TU_SHAPE(XRT_F32, K, N), w},
                 {TU_SHAPE(XRT_F32, F), sc},
                 {TU_SHAPE(XRT_F32, F), of},
                 {TU_SHAPE(XRT_F32, F), mn},
                 {TU_SHAPE(XRT_F32, F), vr},
                 {q->conv ? TU_SHAPE(XRT_F32, 1, q->M, q->M, N)
                          : TU_SHAPE(XRT_F32, M, N), r}};
  tu_run_threads_same(c, prog, 7, in, want, M * N);
  free(x), free(w), free(r), free(y), free(want);
  free(sc), free(of), free(mn), free(vr);
}

static void test_batch_norm_op(void **state) {
  tu_clients *c = (tu_clients *)*state;
  static const bn_case cases[] = {
      {1, 12, 32, 48, 3, 1e-3f}, /* 144 positions, strips of features */
      {1, 20, 32, 64, 3, 1e-3f}, /* panels of 12 interior positions read
                                  * in place (sim_gkpd_f32_avx512) */
      {1, 7, 16, 40, 3, 0.0f},   /* a last tile of 8 columns; k = inf */
      {0, 93, 20, 50, 1, 1e-5f}, /* x @ W, column vectors */
      {0, 60, 30, 70, 0, 1e-5f}, /* features along rows */
  };
  for (size_t i = 0; i < TU_COUNT(cases); i++) bn_op(c, &cases[i]);
}

/* ---- an NCHW convolution made in chunks (conv_gemm.c) ----
 * A 7x7 stride-2 stem on RGB whose im2col panel is over 4 MiB is made in
 * chunks of result rows, each one thread's panel and product; its bias
 * (a row vector: one number per feature), a scale (a number) and ReLU go
 * into each chunk's product (sim_cg_run_chunks).  With a residual (a
 * full value) the group runs after the convolution instead.  Small
 * integers: exact sums. */
static void stem_chunks(tu_clients *c, int residual) {
  /* 87 x 87 positions x 147: a 4.45 MB panel, just over the 4 MiB */
  enum { I = 3, H = 180, O = 16, KS = 7, OH = (H - KS) / 2 + 1 };
  const int64_t nx = I * H * H, nw = O * I * KS * KS, ny = O * OH * OH;
  char prog[4096];
  snprintf(prog, sizeof prog,
           "func.func @main(%%x: tensor<1x%dx%dx%dxf32>, "
           "%%w: tensor<%dx%dx%dx%dxf32>, %%b: tensor<%dxf32>, "
           "%%r: tensor<1x%dx%dx%dxf32>) -> tensor<1x%dx%dx%dxf32> {\n"
           "  %%y = stablehlo.convolution(%%x, %%w) dim_numbers = "
           "[b, f, 0, 1]x[o, i, 0, 1]->[b, f, 0, 1], window = {stride = "
           "[2, 2], pad = [[0, 0], [0, 0]]} {batch_group_count = 1 : i64, "
           "feature_group_count = 1 : i64} : (tensor<1x%dx%dx%dxf32>, "
           "tensor<%dx%dx%dx%dxf32>) -> tensor<1x%dx%dx%dxf32>\n"
           "  %%bb = stablehlo.broadcast_in_dim %%b, dims = [1] : "
           "(tensor<%dxf32>) -> tensor<1x%dx%dx%dxf32>\n"
           "  %%s = stablehlo.add %%y, %%bb : tensor<1x%dx%dx%dxf32>\n"
           "  %%hc = stablehlo.constant dense<0.5> : tensor<f32>\n"
           "  %%h = stablehlo.broadcast_in_dim %%hc, dims = [] : "
           "(tensor<f32>) -> tensor<1x%dx%dx%dxf32>\n"
           "  %%t = stablehlo.%s : tensor<1x%dx%dx%dxf32>\n"
           "  %%zc = stablehlo.constant dense<0.0> : tensor<f32>\n"
           "  %%z = stablehlo.broadcast_in_dim %%zc, dims = [] : "
           "(tensor<f32>) -> tensor<1x%dx%dx%dxf32>\n"
           "  %%e = stablehlo.maximum %%t, %%z : tensor<1x%dx%dx%dxf32>\n"
           "  func.return %%e : tensor<1x%dx%dx%dxf32>\n}\n",
           I, H, H, O, I, KS, KS, O, O, OH, OH, O, OH, OH, I, H, H, O, I, KS,
           KS, O, OH, OH, O, O, OH, OH, O, OH, OH, O, OH, OH,
           residual ? "add %s, %r" : "multiply %s, %h", O, OH, OH, O, OH,
           OH, O, OH, OH, O, OH, OH);
  float *x = alloc_f(nx), *w = alloc_f(nw), *b = alloc_f(O);
  float *r = alloc_f(ny), *want = alloc_f(ny);
  for (int64_t i = 0; i < nx; i++) x[i] = small(i, 40);
  for (int64_t i = 0; i < nw; i++) w[i] = small(i, 41);
  for (int64_t o = 0; o < O; o++) b[o] = small(o, 42) * 0.5f;
  for (int64_t i = 0; i < ny; i++) r[i] = small(i, 43);
  for (int64_t o = 0; o < O; o++)
    for (int64_t p = 0; p < OH * OH; p++) {
      int64_t oh = p / OH, ow = p % OH;
      double acc = 0;
      for (int64_t i = 0; i < I; i++)
        for (int64_t kh = 0; kh < KS; kh++)
          for (int64_t kw = 0; kw < KS; kw++)
            acc += (double)x[(i * H + 2 * oh + kh) * H + 2 * ow + kw] *
                   w[((o * I + i) * KS + kh) * KS + kw];
      float s = (float)acc + b[o];
      float t = residual ? s + r[o * OH * OH + p] : s * 0.5f;
      want[o * OH * OH + p] = tu_ieee_maxf(t, 0.0f);
    }
  tu_in in[4] = {{TU_SHAPE(XRT_F32, 1, I, H, H), x},
                 {TU_SHAPE(XRT_F32, O, I, KS, KS), w},
                 {TU_SHAPE(XRT_F32, O), b},
                 {TU_SHAPE(XRT_F32, 1, O, OH, OH), r}};
  tu_run_threads_same(c, prog, 4, in, want, ny);
  free(x), free(w), free(b), free(r), free(want);
}

static void test_stem_chunks(void **state) {
  if (tu_light()) {
    print_message("test_stem_chunks: left to the runs without "
                  "XRT_TEST_LIGHT\n");
    return;
  }
  tu_clients *c = (tu_clients *)*state;
  stem_chunks(c, 0);
  stem_chunks(c, 1);
}

int main(void) {
  /* the direct paths these tests are about, not Winograd's
   * (test_sim_conv_wino) */
  setenv("XRT_SIM_WINOGRAD", "0", 1);
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_batch_norm_relu6),
      cmocka_unit_test(test_reversed_relu),
      cmocka_unit_test(test_residual_bounds),
      cmocka_unit_test(test_row_vectors),
      cmocka_unit_test(test_every_operation),
      cmocka_unit_test(test_im2col_convolutions),
      cmocka_unit_test(test_dense_convolutions),
      cmocka_unit_test(test_batch_norm_op),
      cmocka_unit_test(test_stem_chunks),
  };
  return cmocka_run_group_tests(tests, setup, teardown);
}
