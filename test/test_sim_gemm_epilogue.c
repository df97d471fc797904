/*
 * test_sim_gemm_epilogue.c - a product with its elementwise epilogue as one
 * step of the simulator (src/sim/fusion.c, sim_fzgm; src/sim/gemm.c,
 * sim_gemm_run_epi): a dot_general or a 1x1 convolution (NHWC or NCHW)
 * whose only use is an elementwise group (bias, batch norm, ReLU, clamp) has the group
 * run over each block of result rows as soon as the product finishes it,
 * in place.  Shapes reach the product's paths: few columns (K blocks
 * outside the rows, the epilogue every few thousand elements), many
 * columns (row blocks outside, the epilogue per block), several K blocks,
 * row counts that are not a multiple of the kernel's, and on two threads
 * the rows split between threads (each runs its own rows' epilogue) or the
 * columns (the epilogue after the product).  Groups that read the product
 * other than element for element (a transpose) or with a period that does
 * not divide a row stay two steps.  Operands are small integers and
 * halves, so every sum is exact in any order: results are checked bit for
 * bit against loops written here, on one and two threads.  MIT licensed.
 */
#include "test_util.h"

static int setup(void **state) { return tu_setup_thread_clients(state, 2); }
static int teardown(void **state) { return tu_teardown_thread_clients(state); }

/* Element i of operand s: an integer in [-4, 4]. */
static float val(int64_t i, int s) {
  return (float)((int64_t)((uint64_t)(i * 7 + s * 13 + (i / 5) * s) % 9) - 4);
}

static float *vec(int64_t n, int s, float scale) {
  float *p = malloc(sizeof *p * (size_t)(n ? n : 1));
  assert_non_null(p);
  for (int64_t i = 0; i < n; i++) p[i] = val(i, s) * scale;
  return p;
}


/* relu(A x W + bias) as JAX writes a dense layer. */
static void dense_relu(tu_clients *c, int64_t M, int64_t K, int64_t N) {
  char prog[2048];
  TU_TPL(prog, sizeof prog,
         "func.func @main(%a: tensor<$1x$2xf32>, %w: tensor<$2x$3xf32>, "
         "%b: tensor<$3xf32>) -> tensor<$1x$3xf32> {\n"
         "  %0 = stablehlo.dot_general %a, %w, contracting_dims = [1] x "
         "[0], precision = [DEFAULT, DEFAULT] : (tensor<$1x$2xf32>, "
         "tensor<$2x$3xf32>) -> tensor<$1x$3xf32>\n"
         "  %1 = stablehlo.broadcast_in_dim %b, dims = [1] : "
         "(tensor<$3xf32>) -> tensor<$1x$3xf32>\n"
         "  %2 = stablehlo.add %0, %1 : tensor<$1x$3xf32>\n"
         "  %z = stablehlo.constant dense<0.0> : tensor<$1x$3xf32>\n"
         "  %3 = stablehlo.maximum %2, %z : tensor<$1x$3xf32>\n"
         "  func.return %3 : tensor<$1x$3xf32>\n}\n",
         M, K, N);
  float *a = vec(M * K, 1, 1.0f), *w = vec(K * N, 2, 1.0f);
  float *b = vec(N, 3, 0.5f), *want = tu_ref_product(a, w, M, K, N);
  for (int64_t m = 0; m < M; m++)
    for (int64_t n = 0; n < N; n++) {
      float v = want[m * N + n] + b[n];
      want[m * N + n] = v > 0.0f ? v : 0.0f;
    }
  tu_in in[3] = {{TU_SHAPE(XRT_F32, M, K), a},
                 {TU_SHAPE(XRT_F32, K, N), w},
                 {TU_SHAPE(XRT_F32, N), b}};
  tu_run_threads_same(c, prog, 3, in, want, M * N);
  free(a), free(w), free(b), free(want);
}

/* Few columns: the epilogue every few thousand elements of the rows. */
static void test_dense_few_columns(void **state) {
  tu_clients *c = (tu_clients *)*state;
  dense_relu(c, 1000, 40, 96); /* one K block, many row chunks */
  dense_relu(c, 37, 800, 200); /* several K blocks, 37 rows */
  dense_relu(c, 1, 16, 24);
  dense_relu(c, 13, 5, 3);
}

/* Many columns: the epilogue per block of rows. */
static void test_dense_many_columns(void **state) {
  tu_clients *c = (tu_clients *)*state;
  int light = tu_light(); /* valgrind: smaller, the same paths */
  dense_relu(c, light ? 100 : 700, 50, 2100);
  dense_relu(c, 50, light ? 100 : 500, 2500);
  dense_relu(c, light ? 600 : 2000, 50, 400); /* two threads: rows split */
}

/* Fewer rows than columns: on two threads the columns are split, and the
 * epilogue runs after the product. */
static void test_dense_split_columns(void **state) {
  tu_clients *c = (tu_clients *)*state;
  dense_relu(c, 24, 64, 1000);
  dense_relu(c, 37, 800, 200);
}

/* The group's result is f64 (8 bytes an element, the product's 4): it
 * cannot take the product's memory, and the two stay steps. */
static void test_wider_result(void **state) {
  tu_clients *c = (tu_clients *)*state;
  const int64_t M = 300, K = 20, N = 64;
  const char *prog =
      "func.func @main(%a: tensor<300x20xf32>, %w: tensor<20x64xf32>, "
      "%b: tensor<64xf32>) -> tensor<300x64xf64> {\n"
      "  %0 = stablehlo.dot_general %a, %w, contracting_dims = [1] x [0] : "
      "(tensor<300x20xf32>, tensor<20x64xf32>) -> tensor<300x64xf32>\n"
      "  %1 = stablehlo.broadcast_in_dim %b, dims = [1] : (tensor<64xf32>) "
      "-> tensor<300x64xf32>\n"
      "  %2 = stablehlo.add %0, %1 : tensor<300x64xf32>\n"
      "  %3 = stablehlo.convert %2 : (tensor<300x64xf32>) -> "
      "tensor<300x64xf64>\n"
      "  func.return %3 : tensor<300x64xf64>\n}\n";
  float *a = vec(M * K, 1, 1.0f), *w = vec(K * N, 2, 1.0f);
  float *b = vec(N, 3, 0.5f), *p = tu_ref_product(a, w, M, K, N);
  tu_in in[3] = {{TU_SHAPE(XRT_F32, M, K), a},
                 {TU_SHAPE(XRT_F32, K, N), w},
                 {TU_SHAPE(XRT_F32, N), b}};
  for (int t = 0; t < 2; t++) {
    tu_out o;
    xrt_status st = tu_run(c->t[t], prog, 3, in, &o);
    if (st) fail_msg("%s: %s", xrt_strerror(st), tu_msg);
    assert_int_equal(o.bytes[0], sizeof(double) * (size_t)(M * N));
    const double *got = (const double *)o.data[0];
    for (int64_t i = 0; i < M * N; i++)
      if (got[i] != (double)(p[i] + b[i % N]))
        fail_msg("element %lld: got %.17g", (long long)i, got[i]);
    tu_out_free(&o);
  }
  free(a), free(w), free(b), free(p);
}

/* An NHWC 1x1 convolution with batch norm as JAX writes it, and ReLU6. */
static void conv_bn_relu6(tu_clients *c, int64_t H, int64_t W, int64_t Ci,
                          int64_t Co) {
  char prog[4096];
  TU_TPL(prog, sizeof prog,
         "func.func @main(%x: tensor<1x$1x$2x$3xf32>, %k: "
         "tensor<1x1x$3x$4xf32>, %mean: tensor<$4xf32>, %s: "
         "tensor<$4xf32>, %off: tensor<$4xf32>) -> "
         "tensor<1x$1x$2x$4xf32> {\n"
         "  %0 = stablehlo.convolution(%x, %k) dim_numbers = [b, 0, 1, "
         "f]x[0, 1, i, o]->[b, 0, 1, f], window = {stride = [1, 1], pad = "
         "[[0, 0], [0, 0]], rhs_dilate = [1, 1]} {batch_group_count = 1 : "
         "i64, feature_group_count = 1 : i64} : "
         "(tensor<1x$1x$2x$3xf32>, tensor<1x1x$3x$4xf32>) -> "
         "tensor<1x$1x$2x$4xf32>\n"
         "  %1 = stablehlo.broadcast_in_dim %mean, dims = [3] : "
         "(tensor<$4xf32>) -> tensor<1x$1x$2x$4xf32>\n"
         "  %2 = stablehlo.subtract %0, %1 : tensor<1x$1x$2x$4xf32>\n"
         "  %3 = stablehlo.broadcast_in_dim %s, dims = [3] : "
         "(tensor<$4xf32>) -> tensor<1x$1x$2x$4xf32>\n"
         "  %4 = stablehlo.multiply %2, %3 : tensor<1x$1x$2x$4xf32>\n"
         "  %5 = stablehlo.broadcast_in_dim %off, dims = [3] : "
         "(tensor<$4xf32>) -> tensor<1x$1x$2x$4xf32>\n"
         "  %6 = stablehlo.add %4, %5 : tensor<1x$1x$2x$4xf32>\n"
         "  %lo = stablehlo.constant dense<0.0> : tensor<f32>\n"
         "  %hi = stablehlo.constant dense<6.0> : tensor<f32>\n"
         "  %7 = stablehlo.clamp %lo, %6, %hi : (tensor<f32>, "
         "tensor<1x$1x$2x$4xf32>, tensor<f32>) -> "
         "tensor<1x$1x$2x$4xf32>\n"
         "  func.return %7 : tensor<1x$1x$2x$4xf32>\n}\n",
         H, W, Ci, Co);
  int64_t M = H * W;
  float *x = vec(M * Ci, 4, 1.0f), *k = vec(Ci * Co, 5, 0.5f);
  float *mean = vec(Co, 6, 1.0f), *s = vec(Co, 7, 0.5f);
  float *off = vec(Co, 8, 0.25f), *want = tu_ref_product(x, k, M, Ci, Co);
  for (int64_t m = 0; m < M; m++)
    for (int64_t o = 0; o < Co; o++) {
      float v = (want[m * Co + o] - mean[o]) * s[o] + off[o];
      want[m * Co + o] = v < 0.0f ? 0.0f : v > 6.0f ? 6.0f : v;
    }
  tu_in in[5] = {{TU_SHAPE(XRT_F32, 1, H, W, Ci), x},
                 {TU_SHAPE(XRT_F32, 1, 1, Ci, Co), k},
                 {TU_SHAPE(XRT_F32, Co), mean},
                 {TU_SHAPE(XRT_F32, Co), s},
                 {TU_SHAPE(XRT_F32, Co), off}};
  tu_run_threads_same(c, prog, 5, in, want, M * Co);
  free(x), free(k), free(mean), free(s), free(off), free(want);
}

static void test_conv_batch_norm(void **state) {
  tu_clients *c = (tu_clients *)*state;
  conv_bn_relu6(c, 56, 56, 24, 144);
  conv_bn_relu6(c, 7, 7, 160, 960);
  conv_bn_relu6(c, 28, 28, 16, 24);
}

/* An NCHW convolution (k x k, padding k / 2) with a bias and ReLU, as
 * PyTorch exports one: a 1x1 is the product kernel x lhs in place
 * (conv_gemm.c), so the group takes its rows (features) as they are done;
 * a 3x3 (an im2col panel, then the product) keeps the group a step of
 * its own, which must give the same bits. */
static void conv_nchw_bias_relu(tu_clients *c, int64_t H, int64_t W, int64_t Ci,
                                int64_t Co, int64_t k) {
  char prog[4096];
  TU_TPL(prog, sizeof prog,
         "func.func @main(%x: tensor<1x$3x$1x$2xf32>, %k: "
         "tensor<$4x$3x$5x$5xf32>, %b: tensor<$4xf32>) -> "
         "tensor<1x$4x$1x$2xf32> {\n"
         "  %0 = stablehlo.convolution(%x, %k) dim_numbers = [b, f, 0, "
         "1]x[o, i, 0, 1]->[b, f, 0, 1], window = {stride = [1, 1], pad = "
         "[[$6, $6], [$6, $6]], rhs_dilate = [1, 1]} {batch_group_count = 1 "
         ": i64, feature_group_count = 1 : i64} : "
         "(tensor<1x$3x$1x$2xf32>, tensor<$4x$3x$5x$5xf32>) -> "
         "tensor<1x$4x$1x$2xf32>\n"
         "  %1 = stablehlo.broadcast_in_dim %b, dims = [1] : "
         "(tensor<$4xf32>) -> tensor<1x$4x$1x$2xf32>\n"
         "  %2 = stablehlo.add %0, %1 : tensor<1x$4x$1x$2xf32>\n"
         "  %z = stablehlo.constant dense<0.0> : tensor<1x$4x$1x$2xf32>\n"
         "  %3 = stablehlo.maximum %2, %z : tensor<1x$4x$1x$2xf32>\n"
         "  func.return %3 : tensor<1x$4x$1x$2xf32>\n}\n",
         H, W, Ci, Co, k, k / 2);
  int64_t P = H * W, pad = k / 2;
  float *x = vec(Ci * P, 4, 1.0f), *w = vec(Co * Ci * k * k, 5, 0.5f);
  float *b = vec(Co, 6, 0.25f);
  float *want = malloc(sizeof *want * (size_t)(Co * P));
  assert_non_null(want);
  for (int64_t o = 0; o < Co; o++)
    for (int64_t y = 0; y < H; y++)
      for (int64_t xx = 0; xx < W; xx++) {
        double sum = 0;
        for (int64_t i = 0; i < Ci; i++)
          for (int64_t ky = 0; ky < k; ky++)
            for (int64_t kx = 0; kx < k; kx++) {
              int64_t iy = y + ky - pad, ix = xx + kx - pad;
              if (iy < 0 || iy >= H || ix < 0 || ix >= W) continue;
              sum += (double)w[((o * Ci + i) * k + ky) * k + kx] *
                     x[(i * H + iy) * W + ix];
            }
        float v = (float)sum + b[o];
        want[o * P + y * W + xx] = v > 0.0f ? v : 0.0f;
      }
  tu_in in[3] = {{TU_SHAPE(XRT_F32, 1, Ci, H, W), x},
                 {TU_SHAPE(XRT_F32, Co, Ci, k, k), w},
                 {TU_SHAPE(XRT_F32, Co), b}};
  tu_run_threads_same(c, prog, 3, in, want, Co * P);
  free(x), free(w), free(b), free(want);
}

static void test_conv_nchw_bias_relu(void **state) {
  tu_clients *c = (tu_clients *)*state;
  conv_nchw_bias_relu(c, 54, 54, 32, 128, 1); /* two threads: columns */
  conv_nchw_bias_relu(c, 7, 7, 64, 300, 1);   /* two threads: rows */
  conv_nchw_bias_relu(c, 13, 13, 100, 37, 1);
  conv_nchw_bias_relu(c, 27, 27, 16, 64, 3);
  conv_nchw_bias_relu(c, 13, 13, 24, 50, 3);
}

/* The group reads the product transposed. */
static void test_transposed_read(void **state) {
  tu_clients *c = (tu_clients *)*state;
  const int64_t M = 70, K = 30, N = 70;
  const char *prog =
      "func.func @main(%a: tensor<70x30xf32>, %w: tensor<30x70xf32>, "
      "%b: tensor<70x70xf32>) -> tensor<70x70xf32> {\n"
      "  %0 = stablehlo.dot_general %a, %w, contracting_dims = [1] x [0] : "
      "(tensor<70x30xf32>, tensor<30x70xf32>) -> tensor<70x70xf32>\n"
      "  %1 = stablehlo.transpose %0, dims = [1, 0] : (tensor<70x70xf32>) "
      "-> tensor<70x70xf32>\n"
      "  %2 = stablehlo.add %1, %b : tensor<70x70xf32>\n"
      "  func.return %2 : tensor<70x70xf32>\n}\n";
  float *a = vec(M * K, 1, 1.0f), *w = vec(K * N, 2, 1.0f);
  float *b = vec(M * N, 3, 0.5f), *p = tu_ref_product(a, w, M, K, N);
  float *want = malloc(sizeof *want * (size_t)(M * N));
  assert_non_null(want);
  for (int64_t i = 0; i < M; i++)
    for (int64_t j = 0; j < N; j++)
      want[i * N + j] = p[j * N + i] + b[i * N + j];
  tu_in in[3] = {{TU_SHAPE(XRT_F32, M, K), a},
                 {TU_SHAPE(XRT_F32, K, N), w},
                 {TU_SHAPE(XRT_F32, M, N), b}};
  tu_run_threads_same(c, prog, 3, in, want, M * N);
  free(a), free(w), free(b), free(p), free(want);
}

/* The product [96, 64] read as [128, 48] with a [48] vector broadcast over
 * it: its period (48) does not divide a row of the product (64). */
static void test_period_across_rows(void **state) {
  tu_clients *c = (tu_clients *)*state;
  const int64_t M = 96, K = 20, N = 64;
  const char *prog =
      "func.func @main(%a: tensor<96x20xf32>, %w: tensor<20x64xf32>, "
      "%v: tensor<48xf32>) -> tensor<128x48xf32> {\n"
      "  %0 = stablehlo.dot_general %a, %w, contracting_dims = [1] x [0] : "
      "(tensor<96x20xf32>, tensor<20x64xf32>) -> tensor<96x64xf32>\n"
      "  %1 = stablehlo.reshape %0 : (tensor<96x64xf32>) -> "
      "tensor<128x48xf32>\n"
      "  %2 = stablehlo.broadcast_in_dim %v, dims = [1] : (tensor<48xf32>) "
      "-> tensor<128x48xf32>\n"
      "  %3 = stablehlo.multiply %1, %2 : tensor<128x48xf32>\n"
      "  func.return %3 : tensor<128x48xf32>\n}\n";
  float *a = vec(M * K, 1, 1.0f), *w = vec(K * N, 2, 1.0f);
  float *v = vec(48, 3, 0.5f), *want = tu_ref_product(a, w, M, K, N);
  for (int64_t i = 0; i < M * N; i++) want[i] *= v[i % 48];
  tu_in in[3] = {{TU_SHAPE(XRT_F32, M, K), a},
                 {TU_SHAPE(XRT_F32, K, N), w},
                 {TU_SHAPE(XRT_F32, 48), v}};
  tu_run_threads_same(c, prog, 3, in, want, M * N);
  free(a), free(w), free(v), free(want);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_dense_few_columns),
      cmocka_unit_test(test_dense_many_columns),
      cmocka_unit_test(test_dense_split_columns),
      cmocka_unit_test(test_wider_result),
      cmocka_unit_test(test_conv_batch_norm),
      cmocka_unit_test(test_conv_nchw_bias_relu),
      cmocka_unit_test(test_transposed_read),
      cmocka_unit_test(test_period_across_rows),
  };
  return cmocka_run_group_tests(tests, setup, teardown);
}
