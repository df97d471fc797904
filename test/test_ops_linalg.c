/*
 * test_ops_linalg.c - convolution, dynamic_conv, fft, triangular_solve,
 * cholesky, the batch_norm ops, rng, rng_bit_generator and
 * chlo.ragged_dot on hand-computed values or independent references
 * written here (explicitly padded convolution, naive DFT, substitution),
 * published known-answer vectors for the bit generators, and the
 * verifier's located errors.
 */
#include "test_kernels.h"

#define C(state) ((xrt_client *)*(state))
#define IN(dt, data, ...) ((tu_in){TU_SHAPE((dt), __VA_ARGS__), (data)})

static char prog[8192];

#define CONV_DN                                                             \
  "dimension_numbers = #stablehlo.conv<[b, f, 0]x[o, i, 0]->[b, f, 0]>"

/* ======================================================================
 * convolution: against tu_conv_ref (test_kernels.h), a reference that pads
 * and dilates the input explicitly
 * ==================================================================== */

/* 1-D: feature groups, stride, negative high padding, both dilations and
 * window reversal, canonical layouts. */
static void test_conv_1d(void **state) {
  tu_conv c = {.N = 2, .Cin = 4, .O = 4, .I = 2, .in = {6, 1},
               .k = {3, 1}, .s = {2, 1}, .lo = {3, 0}, .hi = {-1, 0},
               .ld = {2, 1}, .rd = {2, 1}, .rev = {1, 0}, .fg = 2, .bg = 1};
  float x[48], w[24];
  double xd[48], wd[24], y[64];
  for (int i = 0; i < 48; i++) xd[i] = x[i] = (float)((i * 7) % 11 - 5);
  for (int i = 0; i < 24; i++) wd[i] = w[i] = (float)((i * 5) % 7 - 3);
  tu_conv_ref(&c, xd, wd, y);
  assert_int_equal(c.out[0], 5); /* (3 + 11 - 1 - 5) / 2 + 1 */
  snprintf(prog, sizeof prog,
           "func.func @main(%%x: tensor<2x4x6xf32>, %%w: tensor<4x2x3xf32>) "
           "-> tensor<2x4x5xf32> {\n"
           "  %%0 = \"stablehlo.convolution\"(%%x, %%w) {\n"
           "    window_strides = array<i64: 2>,\n"
           "    padding = dense<[[3, -1]]> : tensor<1x2xi64>,\n"
           "    lhs_dilation = array<i64: 2>, rhs_dilation = array<i64: 2>,\n"
           "    window_reversal = array<i1: true>,\n"
           "    dimension_numbers = #stablehlo.conv<[b, f, 0]x[o, i, 0]->"
           "[b, f, 0]>,\n"
           "    feature_group_count = 2 : i64, batch_group_count = 1 : i64\n"
           "  } : (tensor<2x4x6xf32>, tensor<4x2x3xf32>) -> tensor<2x4x5xf32>\n"
           "  func.return %%0 : tensor<2x4x5xf32>\n}\n");
  tu_in in[2] = {IN(XRT_F32, x, 2, 4, 6), IN(XRT_F32, w, 4, 2, 3)};
  tu_out o;
  TU_RUN_OK(C(state), prog, 2, in, &o);
  tu_assert_shape(&o, 0, TU_SHAPE(XRT_F32, 2, 4, 5));
  tu_assert_f32_near(&o, 0, y, 40, 0);
  tu_out_free(&o);
}

/* 2-D: batch groups and permuted layouts on all three sides:
 * lhs [f, 0, b, 1], kernel [0, o, 1, i], result [b, 1, f, 0]. */
static void test_conv_2d_batch_groups(void **state) {
  tu_conv c = {.N = 4, .Cin = 2, .O = 4, .I = 2, .in = {5, 4},
               .k = {2, 3}, .s = {1, 2}, .lo = {1, 0}, .hi = {0, 2},
               .ld = {1, 2}, .rd = {2, 1}, .rev = {0, 1}, .fg = 1, .bg = 2};
  enum { NX = 4 * 2 * 5 * 4, NW = 4 * 2 * 2 * 3 };
  double xd[NX], wd[NW], y[256];
  float x[NX], w[NW];
  for (int i = 0; i < NX; i++) xd[i] = (i * 13) % 9 - 4;
  for (int i = 0; i < NW; i++) wd[i] = (i * 3) % 5 - 2;
  tu_conv_ref(&c, xd, wd, y);
  int64_t H = c.out[0], W = c.out[1];
  assert_int_equal(H, 4); /* 1 + 5 + 0 - 3 + 1 */
  assert_int_equal(W, 4); /* (7 + 2 - 3) / 2 + 1 */
  /* x[n][ch][i0][i1] -> lhs[ch][i0][n][i1]; w[o][i][k0][k1] -> [k0][o][k1][i] */
  for (int n = 0; n < 4; n++)
    for (int ch = 0; ch < 2; ch++)
      for (int i0 = 0; i0 < 5; i0++)
        for (int i1 = 0; i1 < 4; i1++)
          x[((ch * 5 + i0) * 4 + n) * 4 + i1] =
              (float)xd[((n * 2 + ch) * 5 + i0) * 4 + i1];
  for (int oo = 0; oo < 4; oo++)
    for (int i = 0; i < 2; i++)
      for (int k0 = 0; k0 < 2; k0++)
        for (int k1 = 0; k1 < 3; k1++)
          w[((k0 * 4 + oo) * 3 + k1) * 2 + i] =
              (float)wd[((oo * 2 + i) * 2 + k0) * 3 + k1];
  snprintf(prog, sizeof prog,
           "func.func @main(%%x: tensor<2x5x4x4xf32>, %%w: tensor<2x4x3x2xf32>)"
           " -> tensor<2x4x4x4xf32> {\n"
           "  %%0 = \"stablehlo.convolution\"(%%x, %%w) {\n"
           "    window_strides = array<i64: 1, 2>,\n"
           "    padding = dense<[[1, 0], [0, 2]]> : tensor<2x2xi64>,\n"
           "    lhs_dilation = array<i64: 1, 2>, rhs_dilation = array<i64: 2, 1>,\n"
           "    window_reversal = array<i1: false, true>,\n"
           "    dimension_numbers = #stablehlo.conv<[f, 0, b, 1]x[0, o, 1, i]->"
           "[b, 1, f, 0]>,\n"
           "    feature_group_count = 1 : i64, batch_group_count = 2 : i64\n"
           "  } : (tensor<2x5x4x4xf32>, tensor<2x4x3x2xf32>) -> "
           "tensor<2x4x4x4xf32>\n"
           "  func.return %%0 : tensor<2x4x4x4xf32>\n}\n");
  tu_in in[2] = {IN(XRT_F32, x, 2, 5, 4, 4), IN(XRT_F32, w, 2, 4, 3, 2)};
  tu_out o;
  TU_RUN_OK(C(state), prog, 2, in, &o);
  tu_assert_shape(&o, 0, TU_SHAPE(XRT_F32, 2, 4, 4, 4));
  const float *got = (const float *)o.data[0];
  for (int n = 0; n < 2; n++)
    for (int oo = 0; oo < 4; oo++)
      for (int q0 = 0; q0 < H; q0++)
        for (int q1 = 0; q1 < W; q1++) {
          double want = y[((n * 4 + oo) * H + q0) * W + q1];
          float g = got[((n * W + q1) * 4 + oo) * H + q0];
          if (g != (float)want)
            fail_msg("y[%d][%d][%d][%d]: got %g want %g", n, oo, q0, q1, g,
                     want);
        }
  tu_out_free(&o);
}

/* Integer products wrap in the result type; i8 operands accumulate in
 * the i32 result as the interpreter does. */
static void test_conv_int_wrap(void **state) {
  const int32_t x[2] = {1 << 30, 1 << 30}, w[2] = {2, 2};
  const int8_t x8[3] = {100, 100, 100}, w8[1] = {100};
  tu_in in[2] = {IN(XRT_S32, x, 1, 1, 2), IN(XRT_S32, w, 1, 1, 2)};
  tu_out o;
  TU_RUN_OK(C(state),
            "func.func @main(%x: tensor<1x1x2xi32>, %w: tensor<1x1x2xi32>) -> "
            "tensor<1x1x1xi32> {\n"
            "  %0 = \"stablehlo.convolution\"(%x, %w) {" CONV_DN ", "
            "batch_group_count = 1 : i64, feature_group_count = 1 : i64} : (tensor<1x1x2xi32>, "
            "tensor<1x1x2xi32>) -> tensor<1x1x1xi32>\n"
            "  func.return %0 : tensor<1x1x1xi32>\n}\n",
            2, in, &o);
  TU_ASSERT_OUT(&o, 0, int32_t, 0); /* 2^31 + 2^31 wraps to 0 */
  tu_out_free(&o);
  tu_in in8[2] = {IN(XRT_S8, x8, 1, 1, 3), IN(XRT_S8, w8, 1, 1, 1)};
  TU_RUN_OK(C(state),
            "func.func @main(%x: tensor<1x1x3xi8>, %w: tensor<1x1x1xi8>) -> "
            "tensor<1x1x3xi32> {\n"
            "  %0 = \"stablehlo.convolution\"(%x, %w) {" CONV_DN ", "
            "batch_group_count = 1 : i64, feature_group_count = 1 : i64} : (tensor<1x1x3xi8>, "
            "tensor<1x1x1xi8>) -> tensor<1x1x3xi32>\n"
            "  func.return %0 : tensor<1x1x3xi32>\n}\n",
            2, in8, &o);
  TU_ASSERT_OUT(&o, 0, int32_t, 10000, 10000, 10000);
  tu_out_free(&o);
}

/* Padding zeros are multiplied like the interpreter's padded tensor, so an
 * infinite weight over padding gives NaN; an empty kernel gives zeros. */
static void test_conv_padding_nan_and_empty(void **state) {
  const float x[1] = {1}, w[2] = {INFINITY, 1};
  tu_in in[2] = {IN(XRT_F32, x, 1, 1, 1), IN(XRT_F32, w, 1, 1, 2)};
  tu_out o;
  TU_RUN_OK(C(state),
            "func.func @main(%x: tensor<1x1x1xf32>, %w: tensor<1x1x2xf32>) -> "
            "tensor<1x1x1xf32> {\n"
            "  %0 = \"stablehlo.convolution\"(%x, %w) {" CONV_DN ", padding = "
            "dense<[[1, 0]]> : tensor<1x2xi64>, batch_group_count = 1 : i64, "
            "feature_group_count = 1 : i64} : "
            "(tensor<1x1x1xf32>, tensor<1x1x2xf32>) -> tensor<1x1x1xf32>\n"
            "  func.return %0 : tensor<1x1x1xf32>\n}\n",
            2, in, &o);
  assert_true(isnan(((const float *)o.data[0])[0]));
  tu_out_free(&o);
  const float x0[2] = {1, 2};
  tu_in in0[2] = {IN(XRT_F32, x0, 1, 0, 2), IN(XRT_F32, w, 3, 0, 1)};
  TU_RUN_OK(C(state),
            "func.func @main(%x: tensor<1x0x2xf32>, %w: tensor<3x0x1xf32>) -> "
            "tensor<1x3x2xf32> {\n"
            "  %0 = \"stablehlo.convolution\"(%x, %w) {" CONV_DN ", "
            "batch_group_count = 1 : i64, feature_group_count = 1 : i64} : (tensor<1x0x2xf32>, "
            "tensor<3x0x1xf32>) -> tensor<1x3x2xf32>\n"
            "  func.return %0 : tensor<1x3x2xf32>\n}\n",
            2, in0, &o);
  TU_ASSERT_OUT(&o, 0, float, 0, 0, 0, 0, 0, 0);
  tu_out_free(&o);
}

static const char *dyn_conv_prog =
    "func.func @main(%x: tensor<1x1x4xf32>, %w: tensor<1x1x2xf32>, "
    "%p: tensor<1x2xi32>) -> tensor<1x1x4xf32> {\n"
    "  %0 = \"stablehlo.dynamic_conv\"(%x, %w, %p) {\n"
    "    window_strides = array<i64: 1>, lhs_dilation = array<i64: 1>,\n"
    "    rhs_dilation = array<i64: 1>, window_reversal = array<i1: false>,\n"
    "    dimension_numbers = #stablehlo.conv<[b, f, 0]x[o, i, 0]->[b, f, 0]>,\n"
    "    batch_group_count = 1 : i64, feature_group_count = 1 : i64\n"
    "  } : (tensor<1x1x4xf32>, tensor<1x1x2xf32>, tensor<1x2xi32>) -> "
    "tensor<1x1x4xf32>\n"
    "  func.return %0 : tensor<1x1x4xf32>\n}\n";

/* The padding operand is read at run time; one that implies another
 * result shape is a located error. */
static void test_dynamic_conv(void **state) {
  const float x[4] = {1, 2, 3, 4}, w[2] = {10, 1};
  const int32_t p1[2] = {1, 0}, p2[2] = {0, 1}, bad[2] = {2, 1};
  tu_out o;
  tu_in in[3] = {IN(XRT_F32, x, 1, 1, 4), IN(XRT_F32, w, 1, 1, 2),
                 IN(XRT_S32, p1, 1, 2)};
  TU_RUN_OK(C(state), dyn_conv_prog, 3, in, &o);
  TU_ASSERT_OUT(&o, 0, float, 1, 12, 23, 34); /* [0 1 2 3 4] windows */
  tu_out_free(&o);
  in[2].data = p2;
  TU_RUN_OK(C(state), dyn_conv_prog, 3, in, &o);
  TU_ASSERT_OUT(&o, 0, float, 12, 23, 34, 40);
  tu_out_free(&o);
  in[2].data = bad;
  assert_int_equal(tu_run(C(state), dyn_conv_prog, 3, in, &o),
                   XRT_INVALID_ARGUMENT);
  TU_ASSERT_PREFIX(tu_msg, "<input>:2:");
  TU_ASSERT_CONTAINS(tu_msg, "windows");
}

/* ======================================================================
 * fft
 * ==================================================================== */

static void naive_dft(const double *re, const double *im, int64_t n,
                      int inverse, double *ore, double *oim) {
  const double pi = 3.14159265358979323846;
  for (int64_t k = 0; k < n; k++) {
    double sr = 0, si = 0;
    for (int64_t j = 0; j < n; j++) {
      double a = (inverse ? 2 : -2) * pi * (double)(j * k % n) / (double)n;
      sr += re[j] * cos(a) - im[j] * sin(a);
      si += re[j] * sin(a) + im[j] * cos(a);
    }
    ore[k] = inverse ? sr / (double)n : sr;
    oim[k] = inverse ? si / (double)n : si;
  }
}

static void fft_prog(const char *type, const char *tin, const char *tout,
                     const char *len) {
  snprintf(prog, sizeof prog,
           "func.func @main(%%x: %s) -> %s {\n"
           "  %%0 = stablehlo.fft %%x, type = %s, length = [%s] : (%s) -> %s\n"
           "  func.return %%0 : %s\n}\n",
           tin, tout, type, len, tin, tout, tout);
}

/* FFT of two rows of complex<f64> against a naive DFT, lengths 1, 2, 5, 8
 * (radix 2 and Bluestein), and IFFT. */
static void test_fft_vs_dft(void **state) {
  const int64_t lens[4] = {1, 2, 5, 8};
  for (int li = 0; li < 4; li++)
    for (int inv = 0; inv < 2; inv++) {
      int64_t n = lens[li];
      double x[2 * 2 * 8], re[8], im[8], ore[8], oim[8];
      for (int64_t i = 0; i < 2 * n; i++) {
        x[2 * i] = sin(1.0 + (double)i * 0.7);
        x[2 * i + 1] = cos(0.3 * (double)(i * i));
      }
      char t[64], l[16];
      snprintf(t, sizeof t, "tensor<2x%lldxcomplex<f64>>", (long long)n);
      snprintf(l, sizeof l, "%lld", (long long)n);
      fft_prog(inv ? "IFFT" : "FFT", t, t, l);
      tu_in in[1] = {IN(XRT_C128, x, 2, n)};
      tu_out o;
      TU_RUN_OK(C(state), prog, 1, in, &o);
      const double *g = (const double *)o.data[0];
      for (int64_t row = 0; row < 2; row++) {
        for (int64_t i = 0; i < n; i++)
          re[i] = x[2 * (row * n + i)], im[i] = x[2 * (row * n + i) + 1];
        naive_dft(re, im, n, inv, ore, oim);
        for (int64_t k = 0; k < n; k++) {
          double gr = g[2 * (row * n + k)], gi = g[2 * (row * n + k) + 1];
          if (fabs(gr - ore[k]) > 1e-12 || fabs(gi - oim[k]) > 1e-12)
            fail_msg("n=%lld inv=%d k=%lld: got (%g,%g) want (%g,%g)",
                     (long long)n, inv, (long long)k, gr, gi, ore[k], oim[k]);
        }
      }
      tu_out_free(&o);
    }
}

/* IFFT(FFT(x)) = x over two dimensions (3 x 5) in complex<f32>. */
static void test_fft_roundtrip_2d(void **state) {
  float x[2 * 15];
  for (int i = 0; i < 30; i++) x[i] = (float)((i * 17) % 13) - 6.0f;
  snprintf(prog, sizeof prog,
           "func.func @main(%%x: tensor<3x5xcomplex<f32>>) -> "
           "tensor<3x5xcomplex<f32>> {\n"
           "  %%0 = stablehlo.fft %%x, type = FFT, length = [3, 5] : "
           "(tensor<3x5xcomplex<f32>>) -> tensor<3x5xcomplex<f32>>\n"
           "  %%1 = stablehlo.fft %%0, type = IFFT, length = [3, 5] : "
           "(tensor<3x5xcomplex<f32>>) -> tensor<3x5xcomplex<f32>>\n"
           "  func.return %%1 : tensor<3x5xcomplex<f32>>\n}\n");
  tu_in in[1] = {IN(XRT_C64, x, 3, 5)};
  tu_out o;
  TU_RUN_OK(C(state), prog, 1, in, &o);
  double want[30];
  for (int i = 0; i < 30; i++) want[i] = x[i];
  o.bytes[0] = 30 * sizeof(float); /* compare as 30 floats */
  tu_assert_f32_near(&o, 0, want, 30, 1e-5);
  tu_out_free(&o);
}

/* RFFT of length 5 and 6 against the DFT's first n/2+1 entries, and
 * IRFFT(RFFT(x)) = x. */
static void test_rfft_irfft(void **state) {
  for (int64_t n = 5; n <= 6; n++) {
    double x[6], zero[6] = {0}, ore[6], oim[6];
    for (int64_t i = 0; i < n; i++) x[i] = (double)(i * i % 7) - 2.5;
    naive_dft(x, zero, n, 0, ore, oim);
    int64_t h = n / 2 + 1;
    char tin[48], tout[64], l[24];
    snprintf(tin, sizeof tin, "tensor<%lldxf64>", (long long)n);
    snprintf(tout, sizeof tout, "tensor<%lldxcomplex<f64>>", (long long)h);
    snprintf(l, sizeof l, "%lld", (long long)n);
    fft_prog("RFFT", tin, tout, l);
    tu_in in[1] = {IN(XRT_F64, x, n)};
    tu_out o;
    TU_RUN_OK(C(state), prog, 1, in, &o);
    tu_assert_shape(&o, 0, TU_SHAPE(XRT_C128, h));
    const double *g = (const double *)o.data[0];
    for (int64_t k = 0; k < h; k++) {
      assert_true(fabs(g[2 * k] - ore[k]) < 1e-12);
      assert_true(fabs(g[2 * k + 1] - oim[k]) < 1e-12);
    }
    double spec[12];
    memcpy(spec, g, sizeof(double) * 2 * (size_t)h);
    tu_out_free(&o);
    fft_prog("IRFFT", tout, tin, l);
    tu_in in2[1] = {IN(XRT_C128, spec, h)};
    TU_RUN_OK(C(state), prog, 1, in2, &o);
    const double *r = (const double *)o.data[0];
    for (int64_t i = 0; i < n; i++) assert_true(fabs(r[i] - x[i]) < 1e-12);
    tu_out_free(&o);
  }
}

/* ======================================================================
 * triangular_solve and cholesky
 * ==================================================================== */

static const char *const trans_names[3] = {"NO_TRANSPOSE", "TRANSPOSE",
                                           "ADJOINT"};

/* op(a)[i][j] for a real n x n matrix, reading only the named triangle. */
static double op_a(const double *a, int n, int lower, int unit, int tr, int i,
                   int j) {
  int r = tr ? j : i, c = tr ? i : j;
  if (r == c && unit) return 1;
  if (lower ? c > r : c < r) return 0;
  return a[r * n + c];
}

/* Every combination of left_side, lower, unit_diagonal and transpose_a on
 * a batch of two 3x3 systems, checked by substituting the solution back;
 * the unused triangle of a holds garbage that must be ignored. */
static void test_triangular_solve_substitution(void **state) {
  double a[18];
  for (int i = 0; i < 18; i++) a[i] = (i % 9) % 4 == 0 ? 2.0 + i : 0.5 * (i % 5) - 1;
  double b[12]; /* 2 x 3 x 2 (left) or 2 x 2 x 3 (right) */
  for (int i = 0; i < 12; i++) b[i] = (double)(i * 5 % 7) - 3;
  for (int mask = 0; mask < 24; mask++) {
    int left = mask & 1, lower = (mask >> 1) & 1, unit = (mask >> 2) & 1;
    int tr = mask >> 3;
    const char *bt = left ? "tensor<2x3x2xf64>" : "tensor<2x2x3xf64>";
    snprintf(prog, sizeof prog,
             "func.func @main(%%a: tensor<2x3x3xf64>, %%b: %s) -> %s {\n"
             "  %%0 = \"stablehlo.triangular_solve\"(%%a, %%b) {left_side = %s, "
             "lower = %s, unit_diagonal = %s, transpose_a = "
             "#stablehlo<transpose %s>} : (tensor<2x3x3xf64>, %s) -> %s\n"
             "  func.return %%0 : %s\n}\n",
             bt, bt, left ? "true" : "false", lower ? "true" : "false",
             unit ? "true" : "false", trans_names[tr], bt, bt, bt);
    tu_in in[2] = {IN(XRT_F64, a, 2, 3, 3),
                   left ? IN(XRT_F64, b, 2, 3, 2) : IN(XRT_F64, b, 2, 2, 3)};
    tu_out o;
    TU_RUN_OK(C(state), prog, 2, in, &o);
    const double *X = (const double *)o.data[0];
    for (int bi = 0; bi < 2; bi++) {
      const double *A = a + 9 * bi, *x = X + 6 * bi, *B = b + 6 * bi;
      for (int i = 0; i < (left ? 3 : 2); i++)
        for (int j = 0; j < (left ? 2 : 3); j++) {
          double s = 0; /* (op(a) x)[i][j] or (x op(a))[i][j] */
          for (int k = 0; k < 3; k++)
            s += left ? op_a(A, 3, lower, unit, tr, i, k) * x[k * 2 + j]
                      : x[i * 3 + k] * op_a(A, 3, lower, unit, tr, k, j);
          double want = B[i * (left ? 2 : 3) + j];
          if (fabs(s - want) > 1e-9)
            fail_msg("mask %d batch %d [%d][%d]: %g != %g", mask, bi, i, j, s,
                     want);
        }
    }
    tu_out_free(&o);
  }
}

/* ADJOINT on complex: conj(a)^T x = b, checked by substitution. */
static void test_triangular_solve_adjoint_complex(void **state) {
  const double a[18] = {2, 1, 9, 9, 9, 9,  1, -1, 3, 0.5, 9, 9,
                        0, 2, 1, 1, 4, -2};
  const double b[6] = {1, 2, -3, 0.5, 4, -1};
  tu_in in[2] = {IN(XRT_C128, a, 3, 3), IN(XRT_C128, b, 3, 1)};
  tu_out o;
  TU_RUN_OK(C(state),
            "func.func @main(%a: tensor<3x3xcomplex<f64>>, "
            "%b: tensor<3x1xcomplex<f64>>) -> tensor<3x1xcomplex<f64>> {\n"
            "  %0 = \"stablehlo.triangular_solve\"(%a, %b) {left_side = true, "
            "lower = true, unit_diagonal = false, transpose_a = "
            "#stablehlo<transpose ADJOINT>} : (tensor<3x3xcomplex<f64>>, "
            "tensor<3x1xcomplex<f64>>) -> tensor<3x1xcomplex<f64>>\n"
            "  func.return %0 : tensor<3x1xcomplex<f64>>\n}\n",
            2, in, &o);
  const double *x = (const double *)o.data[0];
  for (int i = 0; i < 3; i++) {
    double sr = 0, si = 0; /* sum_k conj(a[k][i]) x[k], k >= i */
    for (int k = i; k < 3; k++) {
      double ar = a[2 * (k * 3 + i)], ai = -a[2 * (k * 3 + i) + 1];
      sr += ar * x[2 * k] - ai * x[2 * k + 1];
      si += ar * x[2 * k + 1] + ai * x[2 * k];
    }
    assert_true(fabs(sr - b[2 * i]) < 1e-12 && fabs(si - b[2 * i + 1]) < 1e-12);
  }
  tu_out_free(&o);
}

static void test_cholesky(void **state) {
  /* Two SPD matrices: a = m m^T + 3 I. */
  double a[18];
  const double m[18] = {1, 2, 0, -1, 3, 1, 2, 0, 1, 0.5, 1, 2, 1, -1, 0,
                        3, 1, 1};
  for (int bi = 0; bi < 2; bi++)
    for (int i = 0; i < 3; i++)
      for (int j = 0; j < 3; j++) {
        double s = i == j ? 3 : 0;
        for (int k = 0; k < 3; k++)
          s += m[9 * bi + i * 3 + k] * m[9 * bi + j * 3 + k];
        a[9 * bi + i * 3 + j] = s;
      }
  for (int lower = 0; lower < 2; lower++) {
    snprintf(prog, sizeof prog,
             "func.func @main(%%a: tensor<2x3x3xf64>) -> tensor<2x3x3xf64> {\n"
             "  %%0 = stablehlo.cholesky %%a, lower = %s : tensor<2x3x3xf64>\n"
             "  func.return %%0 : tensor<2x3x3xf64>\n}\n",
             lower ? "true" : "false");
    tu_in in[1] = {IN(XRT_F64, a, 2, 3, 3)};
    tu_out o;
    TU_RUN_OK(C(state), prog, 1, in, &o);
    const double *L = (const double *)o.data[0];
    for (int bi = 0; bi < 2; bi++)
      for (int i = 0; i < 3; i++)
        for (int j = 0; j < 3; j++) {
          const double *l = L + 9 * bi;
          if (lower ? j > i : j < i) assert_true(l[i * 3 + j] == 0);
          double s = 0; /* L L^T or U^T U */
          for (int k = 0; k < 3; k++)
            s += lower ? l[i * 3 + k] * l[j * 3 + k]
                       : l[k * 3 + i] * l[k * 3 + j];
          assert_true(fabs(s - a[9 * bi + i * 3 + j]) < 1e-12);
        }
    tu_out_free(&o);
  }
}

/* Complex Hermitian: L L^H = a. */
static void test_cholesky_complex(void **state) {
  /* a = [[4, 1-i], [1+i, 3]] */
  const float a[8] = {4, 0, 1, -1, 1, 1, 3, 0};
  tu_in in[1] = {IN(XRT_C64, a, 2, 2)};
  tu_out o;
  TU_RUN_OK(C(state),
            "func.func @main(%a: tensor<2x2xcomplex<f32>>) -> "
            "tensor<2x2xcomplex<f32>> {\n"
            "  %0 = \"stablehlo.cholesky\"(%a) {lower = true} : "
            "(tensor<2x2xcomplex<f32>>) -> tensor<2x2xcomplex<f32>>\n"
            "  func.return %0 : tensor<2x2xcomplex<f32>>\n}\n",
            1, in, &o);
  /* L = [[2, 0], [(1+i)/2, sqrt(3 - 1/2)]] */
  double want[8] = {2, 0, 0, 0, 0.5, 0.5, sqrt(2.5), 0};
  tu_assert_f32_near(&o, 0, want, 8, 1e-6);
  tu_out_free(&o);
}

/* ======================================================================
 * batch norm: by formula, feature_index 1 of a 2x3x2 tensor
 * ==================================================================== */

static const float bn_x[12] = {1, 2, 3, 5, -1, 0, 4, 4, 2, 8, 3, 1};
static const float bn_scale[3] = {1, 2, 0.5f}, bn_offset[3] = {0, 1, -1};

static double bn_get(int o, int f, int i) { return bn_x[(o * 3 + f) * 2 + i]; }

static void bn_stats(int f, double *mean, double *var) {
  double s = 0, q = 0;
  for (int o = 0; o < 2; o++)
    for (int i = 0; i < 2; i++) s += bn_get(o, f, i);
  *mean = s / 4;
  for (int o = 0; o < 2; o++)
    for (int i = 0; i < 2; i++)
      q += (bn_get(o, f, i) - *mean) * (bn_get(o, f, i) - *mean);
  *var = q / 4;
}

static void test_batch_norm_inference_training(void **state) {
  const float mean[3] = {1, 2, 3}, var[3] = {4, 0.25f, 1};
  tu_in in[5] = {IN(XRT_F32, bn_x, 2, 3, 2), IN(XRT_F32, bn_scale, 3),
                 IN(XRT_F32, bn_offset, 3), IN(XRT_F32, mean, 3),
                 IN(XRT_F32, var, 3)};
  tu_out o;
  TU_RUN_OK(C(state),
            "func.func @main(%x: tensor<2x3x2xf32>, %s: tensor<3xf32>, "
            "%b: tensor<3xf32>, %m: tensor<3xf32>, %v: tensor<3xf32>) -> "
            "tensor<2x3x2xf32> {\n"
            "  %0 = \"stablehlo.batch_norm_inference\"(%x, %s, %b, %m, %v) "
            "{epsilon = 0.5 : f32, feature_index = 1 : i64} : "
            "(tensor<2x3x2xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>, "
            "tensor<3xf32>) -> tensor<2x3x2xf32>\n"
            "  func.return %0 : tensor<2x3x2xf32>\n}\n",
            5, in, &o);
  double want[12];
  for (int o2 = 0; o2 < 2; o2++)
    for (int f = 0; f < 3; f++)
      for (int i = 0; i < 2; i++)
        want[(o2 * 3 + f) * 2 + i] =
            bn_scale[f] * (bn_get(o2, f, i) - mean[f]) / sqrt(var[f] + 0.5) +
            bn_offset[f];
  tu_assert_f32_near(&o, 0, want, 12, 1e-6);
  tu_out_free(&o);
  TU_RUN_OK(C(state),
            "func.func @main(%x: tensor<2x3x2xf32>, %s: tensor<3xf32>, "
            "%b: tensor<3xf32>) -> (tensor<2x3x2xf32>, tensor<3xf32>, "
            "tensor<3xf32>) {\n"
            "  %0:3 = \"stablehlo.batch_norm_training\"(%x, %s, %b) "
            "{epsilon = 0.0 : f32, feature_index = 1 : i64} : "
            "(tensor<2x3x2xf32>, tensor<3xf32>, tensor<3xf32>) -> "
            "(tensor<2x3x2xf32>, tensor<3xf32>, tensor<3xf32>)\n"
            "  func.return %0#0, %0#1, %0#2 : tensor<2x3x2xf32>, tensor<3xf32>, "
            "tensor<3xf32>\n}\n",
            3, in, &o);
  double wm[3], wv[3];
  for (int f = 0; f < 3; f++) bn_stats(f, &wm[f], &wv[f]);
  for (int o2 = 0; o2 < 2; o2++)
    for (int f = 0; f < 3; f++)
      for (int i = 0; i < 2; i++)
        want[(o2 * 3 + f) * 2 + i] =
            bn_scale[f] * (bn_get(o2, f, i) - wm[f]) / sqrt(wv[f]) +
            bn_offset[f];
  tu_assert_f32_near(&o, 0, want, 12, 1e-6);
  tu_assert_f32_near(&o, 1, wm, 3, 1e-6);
  tu_assert_f32_near(&o, 2, wv, 3, 1e-6);
  tu_out_free(&o);
}

static void test_batch_norm_grad(void **state) {
  const float mean[3] = {1, 2, 3}, var[3] = {4, 0.25f, 1};
  float dy[12];
  for (int i = 0; i < 12; i++) dy[i] = 0.25f * (float)(i % 5) - 0.5f;
  tu_in in[5] = {IN(XRT_F32, bn_x, 2, 3, 2), IN(XRT_F32, bn_scale, 3),
                 IN(XRT_F32, mean, 3), IN(XRT_F32, var, 3),
                 IN(XRT_F32, dy, 2, 3, 2)};
  tu_out o;
  TU_RUN_OK(C(state),
            "func.func @main(%x: tensor<2x3x2xf32>, %s: tensor<3xf32>, "
            "%m: tensor<3xf32>, %v: tensor<3xf32>, %g: tensor<2x3x2xf32>) -> "
            "(tensor<2x3x2xf32>, tensor<3xf32>, tensor<3xf32>) {\n"
            "  %0:3 = \"stablehlo.batch_norm_grad\"(%x, %s, %m, %v, %g) "
            "{epsilon = 0.25 : f32, feature_index = 1 : i64} : "
            "(tensor<2x3x2xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>, "
            "tensor<2x3x2xf32>) -> (tensor<2x3x2xf32>, tensor<3xf32>, "
            "tensor<3xf32>)\n"
            "  func.return %0#0, %0#1, %0#2 : tensor<2x3x2xf32>, tensor<3xf32>, "
            "tensor<3xf32>\n}\n",
            5, in, &o);
  double gx[12], gs[3], gb[3];
  for (int f = 0; f < 3; f++) {
    double ve = var[f] + 0.25, sd = sqrt(ve), sdy = 0, sdyc = 0;
    for (int o2 = 0; o2 < 2; o2++)
      for (int i = 0; i < 2; i++) {
        double g = dy[(o2 * 3 + f) * 2 + i], c = bn_get(o2, f, i) - mean[f];
        sdy += g;
        sdyc += g * c;
      }
    /* dx = scale/sd * (dy - mean(dy) - c * mean(dy * c) / ve) */
    for (int o2 = 0; o2 < 2; o2++)
      for (int i = 0; i < 2; i++) {
        double g = dy[(o2 * 3 + f) * 2 + i], c = bn_get(o2, f, i) - mean[f];
        gx[(o2 * 3 + f) * 2 + i] =
            bn_scale[f] / sd * (g - sdy / 4 - c * (sdyc / 4) / ve);
      }
    gs[f] = sdyc / sd;
    gb[f] = sdy;
  }
  tu_assert_f32_near(&o, 0, gx, 12, 1e-6);
  tu_assert_f32_near(&o, 1, gs, 3, 1e-6);
  tu_assert_f32_near(&o, 2, gb, 3, 1e-6);
  tu_out_free(&o);
}

/* ======================================================================
 * rng_bit_generator: published known-answer vectors (Random123
 * kat_vectors: threefry2x32_20 and philox4x32_10)
 * ==================================================================== */

static void rbg_run(xrt_client *c, const char *alg, const uint64_t *state,
                    int nstate, const char *otype, tu_out *o) {
  snprintf(prog, sizeof prog,
           "func.func @main(%%s: tensor<%dxui64>) -> (tensor<%dxui64>, %s) {\n"
           "  %%0:2 = stablehlo.rng_bit_generator %%s, algorithm = %s : "
           "(tensor<%dxui64>) -> (tensor<%dxui64>, %s)\n"
           "  func.return %%0#0, %%0#1 : tensor<%dxui64>, %s\n}\n",
           nstate, nstate, otype, alg, nstate, nstate, otype, nstate, otype);
  tu_in in[1] = {IN(XRT_U64, state, nstate)};
  TU_RUN_OK(c, prog, 1, in, o);
}

static void test_rbg_threefry_kat(void **state) {
  /* key (k0, k1), counter (c0, c1) -> (x0, x1); a ui64 output element is
   * x0 | x1 << 32 of counter = state[1]. */
  static const uint32_t kat[3][6] = {
      {0, 0, 0, 0, 0x6b200159u, 0x99ba4efeu},
      {0xffffffffu, 0xffffffffu, 0xffffffffu, 0xffffffffu, 0x1cb996fcu,
       0xbb002be7u},
      {0x13198a2eu, 0x03707344u, 0x243f6a88u, 0x85a308d3u, 0xc4923a9cu,
       0x483df7a0u}};
  for (int i = 0; i < 3; i++) {
    uint64_t st[2] = {kat[i][0] | (uint64_t)kat[i][1] << 32,
                      kat[i][2] | (uint64_t)kat[i][3] << 32};
    tu_out o;
    rbg_run(C(state), "THREE_FRY", st, 2, "tensor<1xui64>", &o);
    TU_ASSERT_OUT(&o, 0, uint64_t, st[0], st[1] + 1);
    TU_ASSERT_OUT(&o, 1, uint64_t, kat[i][4] | (uint64_t)kat[i][5] << 32);
    tu_out_free(&o);
  }
  /* 32-bit outputs: the first even dimension is split in halves, one
   * counter per pair (XLA); 3x2 uses counters 0, 1, 2. */
  uint64_t zero[2] = {0, 0};
  tu_out o;
  rbg_run(C(state), "THREE_FRY", zero, 2, "tensor<3x2xui32>", &o);
  TU_ASSERT_OUT(&o, 0, uint64_t, 0, 3);
  assert_int_equal(((const uint32_t *)o.data[1])[0], 0x6b200159u);
  assert_int_equal(((const uint32_t *)o.data[1])[1], 0x99ba4efeu);
  tu_out_free(&o);
  /* Narrow types keep the low bits; floats are the same bits. */
  rbg_run(C(state), "THREE_FRY", zero, 2, "tensor<2xui8>", &o);
  TU_ASSERT_OUT(&o, 1, uint8_t, 0x59, 0xfe);
  TU_ASSERT_OUT(&o, 0, uint64_t, 0, 1);
  tu_out_free(&o);
  rbg_run(C(state), "THREE_FRY", zero, 2, "tensor<2xf32>", &o);
  assert_int_equal(tu_f32_bits(((const float *)o.data[1])[0]), 0x6b200159u);
  tu_out_free(&o);
}

static void test_rbg_philox_kat(void **state) {
  static const uint32_t kat[3][10] = {
      {0, 0, 0, 0, 0, 0, 0x6627e8d5u, 0xe169c58du, 0xbc57ac4cu, 0x9b00dbd8u},
      {0xffffffffu, 0xffffffffu, 0xffffffffu, 0xffffffffu, 0xffffffffu,
       0xffffffffu, 0x408f276du, 0x41c83b0eu, 0xa20bc7c6u, 0x6d5451fdu},
      {0x243f6a88u, 0x85a308d3u, 0x13198a2eu, 0x03707344u, 0xa4093822u,
       0x299f31d0u, 0xd16cfe09u, 0x94fdccebu, 0x5001e420u, 0x24126ea1u}};
  for (int i = 0; i < 3; i++) {
    /* state = (key, counter low, counter high) */
    uint64_t st[3] = {kat[i][4] | (uint64_t)kat[i][5] << 32,
                      kat[i][0] | (uint64_t)kat[i][1] << 32,
                      kat[i][2] | (uint64_t)kat[i][3] << 32};
    tu_out o;
    rbg_run(C(state), "PHILOX", st, 3, "tensor<4xui32>", &o);
    TU_ASSERT_OUT(&o, 1, uint32_t, kat[i][6], kat[i][7], kat[i][8], kat[i][9]);
    uint64_t lo = st[1] + 1, hi = lo == 0 ? st[2] + 1 : st[2];
    TU_ASSERT_OUT(&o, 0, uint64_t, st[0], lo, hi);
    tu_out_free(&o);
    /* 64-bit words pair the 32-bit ones; DEFAULT is Philox. */
    rbg_run(C(state), "DEFAULT", st, 3, "tensor<2xui64>", &o);
    TU_ASSERT_OUT(&o, 1, uint64_t, kat[i][6] | (uint64_t)kat[i][7] << 32,
                  kat[i][8] | (uint64_t)kat[i][9] << 32);
    tu_out_free(&o);
  }
  /* A 2-word state (key, counter low) uses the key as counter high. */
  uint64_t st2[2] = {0, 0};
  tu_out o;
  rbg_run(C(state), "PHILOX", st2, 2, "tensor<5xui32>", &o);
  TU_ASSERT_OUT(&o, 0, uint64_t, 0, 2); /* two 128-bit blocks */
  const uint32_t *w = (const uint32_t *)o.data[1];
  assert_int_equal(w[0], 0x6627e8d5u);
  assert_int_equal(w[3], 0x9b00dbd8u);
  tu_out_free(&o);
}

/* ======================================================================
 * rng: ranges and statistics; the same program draws the same numbers
 * ==================================================================== */

static void test_rng_uniform_normal(void **state) {
  const float a = -2, b = 3;
  tu_in in[2] = {{TU_SCALAR(XRT_F32), &a}, {TU_SCALAR(XRT_F32), &b}};
  const char *p =
      "func.func @main(%a: tensor<f32>, %b: tensor<f32>) -> "
      "(tensor<100x100xf32>, tensor<100x100xf32>) {\n"
      "  %s = stablehlo.constant dense<[100, 100]> : tensor<2xi64>\n"
      "  %0 = stablehlo.rng %a, %b, %s, distribution = UNIFORM : "
      "(tensor<f32>, tensor<f32>, tensor<2xi64>) -> tensor<100x100xf32>\n"
      "  %1 = stablehlo.rng %a, %b, %s, distribution = NORMAL : "
      "(tensor<f32>, tensor<f32>, tensor<2xi64>) -> tensor<100x100xf32>\n"
      "  func.return %0, %1 : tensor<100x100xf32>, tensor<100x100xf32>\n}\n";
  tu_out o, o2;
  TU_RUN_OK(C(state), p, 2, in, &o);
  const float *u = (const float *)o.data[0], *nrm = (const float *)o.data[1];
  double su = 0, sn = 0, qn = 0;
  for (int i = 0; i < 10000; i++) {
    assert_true(u[i] >= a && u[i] < b);
    su += u[i];
    sn += nrm[i];
    qn += nrm[i] * nrm[i];
  }
  double mn = sn / 10000, sdn = sqrt(qn / 10000 - mn * mn);
  assert_true(fabs(su / 10000 - 0.5) < 0.1);
  assert_true(fabs(mn - a) < 0.15);  /* mean a */
  assert_true(fabs(sdn - b) < 0.15); /* standard deviation b */
  TU_RUN_OK(C(state), p, 2, in, &o2);
  assert_memory_equal(o.data[0], o2.data[0], o.bytes[0]);
  assert_memory_equal(o.data[1], o2.data[1], o.bytes[1]);
  tu_out_free(&o);
  tu_out_free(&o2);
}

static void test_rng_int(void **state) {
  const int32_t a = -3, b = 4;
  tu_in in[2] = {{TU_SCALAR(XRT_S32), &a}, {TU_SCALAR(XRT_S32), &b}};
  tu_out o;
  TU_RUN_OK(C(state),
            "func.func @main(%a: tensor<i32>, %b: tensor<i32>) -> "
            "tensor<1000xi32> {\n"
            "  %s = stablehlo.constant dense<1000> : tensor<1xi64>\n"
            "  %0 = \"stablehlo.rng\"(%a, %b, %s) {rng_distribution = "
            "#stablehlo<rng_distribution UNIFORM>} : (tensor<i32>, "
            "tensor<i32>, tensor<1xi64>) -> tensor<1000xi32>\n"
            "  func.return %0 : tensor<1000xi32>\n}\n",
            2, in, &o);
  int seen[7] = {0};
  const int32_t *v = (const int32_t *)o.data[0];
  for (int i = 0; i < 1000; i++) {
    assert_true(v[i] >= a && v[i] < b);
    seen[v[i] - a]++;
  }
  for (int k = 0; k < 7; k++) assert_true(seen[k] > 80); /* ~143 each */
  tu_out_free(&o);
}

/* ======================================================================
 * chlo.ragged_dot, the three modes on hand-computed values
 * ==================================================================== */

static void test_ragged_dot_modes(void **state) {
  /* Mode 1: rows [0,2) use rhs group 0, [2,2) group 1, [2,4) group 2, row
   * 4 is past the groups and gives 0. */
  const float l1[10] = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10};
  const float r1[12] = {1, 0, 0, 1, /* group 0: identity */
                        5, 5, 5, 5, /* group 1: unused */
                        0, 1, 1, 0}; /* group 2: swap */
  const int32_t g1[3] = {2, 0, 2};
  tu_in in1[3] = {IN(XRT_F32, l1, 5, 2), IN(XRT_F32, r1, 3, 2, 2),
                  IN(XRT_S32, g1, 3)};
  tu_out o;
  TU_RUN_OK(C(state),
            "func.func @main(%l: tensor<5x2xf32>, %r: tensor<3x2x2xf32>, "
            "%g: tensor<3xi32>) -> tensor<5x2xf32> {\n"
            "  %0 = \"chlo.ragged_dot\"(%l, %r, %g) {ragged_dot_dimension_numbers"
            " = #chlo.ragged_dot<lhs_batching_dimensions = [], "
            "rhs_batching_dimensions = [], lhs_contracting_dimensions = [1], "
            "rhs_contracting_dimensions = [1], lhs_ragged_dimensions = [0], "
            "rhs_group_dimensions = [0]>} : (tensor<5x2xf32>, "
            "tensor<3x2x2xf32>, tensor<3xi32>) -> tensor<5x2xf32>\n"
            "  func.return %0 : tensor<5x2xf32>\n}\n",
            3, in1, &o);
  TU_ASSERT_OUT(&o, 0, float, 1, 2, 3, 4, 6, 5, 8, 7, 0, 0);
  tu_out_free(&o);
  /* Mode 2: k in [0,1) for group 0, [1,4) for group 1. */
  const float l2[8] = {1, 2, 3, 4, 5, 6, 7, 8};
  const float r2[8] = {1, 10, 1, 10, 1, 10, 1, 10};
  const int64_t g2[2] = {1, 3};
  tu_in in2[3] = {IN(XRT_F32, l2, 2, 4), IN(XRT_F32, r2, 4, 2),
                  IN(XRT_S64, g2, 2)};
  TU_RUN_OK(C(state),
            "func.func @main(%l: tensor<2x4xf32>, %r: tensor<4x2xf32>, "
            "%g: tensor<2xi64>) -> tensor<2x2x2xf32> {\n"
            "  %0 = \"chlo.ragged_dot\"(%l, %r, %g) {ragged_dot_dimension_numbers"
            " = #chlo.ragged_dot<lhs_batching_dimensions = [], "
            "rhs_batching_dimensions = [], lhs_contracting_dimensions = [1], "
            "rhs_contracting_dimensions = [0], lhs_ragged_dimensions = [1], "
            "rhs_group_dimensions = []>} : (tensor<2x4xf32>, tensor<4x2xf32>, "
            "tensor<2xi64>) -> tensor<2x2x2xf32>\n"
            "  func.return %0 : tensor<2x2x2xf32>\n}\n",
            3, in2, &o);
  TU_ASSERT_OUT(&o, 0, float, 1, 10, 5, 50, 9, 90, 21, 210);
  tu_out_free(&o);
  /* Mode 3: a ragged batch dimension is a plain batched dot. */
  const float l3[4] = {1, 2, 3, 4}, r3[4] = {5, 6, 7, 8};
  const int32_t g3[1] = {2};
  tu_in in3[3] = {IN(XRT_F32, l3, 2, 1, 2), IN(XRT_F32, r3, 2, 2, 1),
                  IN(XRT_S32, g3, 1)};
  TU_RUN_OK(C(state),
            "func.func @main(%l: tensor<2x1x2xf32>, %r: tensor<2x2x1xf32>, "
            "%g: tensor<1xi32>) -> tensor<2x1x1xf32> {\n"
            "  %0 = \"chlo.ragged_dot\"(%l, %r, %g) {ragged_dot_dimension_numbers"
            " = #chlo.ragged_dot<lhs_batching_dimensions = [0], "
            "rhs_batching_dimensions = [0], lhs_contracting_dimensions = [2], "
            "rhs_contracting_dimensions = [1], lhs_ragged_dimensions = [0], "
            "rhs_group_dimensions = []>} : (tensor<2x1x2xf32>, "
            "tensor<2x2x1xf32>, tensor<1xi32>) -> tensor<2x1x1xf32>\n"
            "  func.return %0 : tensor<2x1x1xf32>\n}\n",
            3, in3, &o);
  TU_ASSERT_OUT(&o, 0, float, 17, 53);
  tu_out_free(&o);
}

/* ======================================================================
 * verifier: located errors
 * ==================================================================== */

static char vbuf[4096];

static const char *conv_prog(const char *attrs, const char *wt,
                             const char *rt) {
  snprintf(vbuf, sizeof vbuf,
           "func.func @main(%%x: tensor<1x4x6xf32>, %%w: %s) -> %s {\n"
           "  %%0 = \"stablehlo.convolution\"(%%x, %%w) {%s} : "
           "(tensor<1x4x6xf32>, %s) -> %s\n"
           "  func.return %%0 : %s\n}\n",
           wt, rt, attrs, wt, rt, rt);
  return vbuf;
}

static void test_verify_conv(void **state) {
  (void)state;
  tu_parse_fails_at(conv_prog(CONV_DN, "tensor<2x4x3xf32>", "tensor<1x2x5xf32>"),
              "<input>:2:", "number of windows");
  tu_parse_fails_at(conv_prog(CONV_DN ", feature_group_count = 3 : i64",
                        "tensor<3x1x3xf32>", "tensor<1x3x4xf32>"),
              "<input>:2:", "feature_group_count");
  tu_parse_fails_at(conv_prog(CONV_DN ", feature_group_count = 2 : i64, "
                        "batch_group_count = 1 : i64",
                        "tensor<2x4x3xf32>", "tensor<1x2x4xf32>"),
              "<input>:2:", "kernel input feature size");
  tu_parse_fails_at(conv_prog(CONV_DN ", padding = dense<[[1, 1], [0, 0]]> : "
                        "tensor<2x2xi64>",
                        "tensor<2x4x3xf32>", "tensor<1x2x6xf32>"),
              "<input>:2:", "padding must have 1x2 entries");
  tu_parse_fails_at(conv_prog(CONV_DN ", window_strides = array<i64: 0>",
                        "tensor<2x4x3xf32>", "tensor<1x2x4xf32>"),
              "<input>:2:", "window_strides");
  tu_parse_fails_at(conv_prog(CONV_DN ", feature_group_count = 2 : i64, "
                        "batch_group_count = 2 : i64",
                        "tensor<4x2x3xf32>", "tensor<1x4x4xf32>"),
              "<input>:2:", "cannot both exceed 1");
  /* And a valid one parses. */
  xrt_program *p = NULL;
  const char *ok = conv_prog(CONV_DN ", padding = dense<[[1, -2]]> : "
                             "tensor<1x2xi64>",
                             "tensor<2x4x3xf32>", "tensor<1x2x3xf32>");
  assert_int_equal(xrt_program_parse(ok, strlen(ok), NULL, &p), XRT_OK);
  xrt_program_release(p);
}

static void test_verify_others(void **state) {
  (void)state;
  tu_parse_fails_at("func.func @main(%x: tensor<4xcomplex<f32>>) -> "
              "tensor<4xcomplex<f32>> {\n"
              "  %0 = stablehlo.fft %x, type = FFT, length = [8] : "
              "(tensor<4xcomplex<f32>>) -> tensor<4xcomplex<f32>>\n"
              "  func.return %0 : tensor<4xcomplex<f32>>\n}\n",
              "<input>:2:", "fft_length[0]");
  tu_parse_fails_at("func.func @main(%x: tensor<8xf32>) -> tensor<8xcomplex<f32>> {\n"
              "  %0 = stablehlo.fft %x, type = RFFT, length = [8] : "
              "(tensor<8xf32>) -> tensor<8xcomplex<f32>>\n"
              "  func.return %0 : tensor<8xcomplex<f32>>\n}\n",
              "<input>:2:", "result dimension 0 must be 5");
  tu_parse_fails_at("func.func @main(%a: tensor<3x2xf32>, %b: tensor<3x1xf32>) -> "
              "tensor<3x1xf32> {\n"
              "  %0 = \"stablehlo.triangular_solve\"(%a, %b) {left_side = true, "
              "lower = true, unit_diagonal = false, transpose_a = "
              "#stablehlo<transpose NO_TRANSPOSE>} : (tensor<3x2xf32>, "
              "tensor<3x1xf32>) -> tensor<3x1xf32>\n"
              "  func.return %0 : tensor<3x1xf32>\n}\n",
              "<input>:2:", "square");
  tu_parse_fails_at("func.func @main(%a: tensor<3xf32>) -> tensor<3xf32> {\n"
              "  %0 = \"stablehlo.cholesky\"(%a) {lower = true} : "
              "(tensor<3xf32>) -> tensor<3xf32>\n"
              "  func.return %0 : tensor<3xf32>\n}\n",
              "<input>:2:", "rank >= 2");
  tu_parse_fails_at("func.func @main(%x: tensor<2x3xf32>, %s: tensor<3xf32>, "
              "%b: tensor<3xf32>) -> tensor<2x3xf32> {\n"
              "  %0:3 = \"stablehlo.batch_norm_training\"(%x, %s, %b) "
              "{epsilon = 0.0 : f32, feature_index = 2 : i64} : "
              "(tensor<2x3xf32>, tensor<3xf32>, tensor<3xf32>) -> "
              "(tensor<2x3xf32>, tensor<3xf32>, tensor<3xf32>)\n"
              "  func.return %0#0 : tensor<2x3xf32>\n}\n",
              "<input>:2:", "feature_index 2 is out of range");
  tu_parse_fails_at("func.func @main(%x: tensor<2x3xf32>, %s: tensor<2xf32>, "
              "%b: tensor<3xf32>) -> tensor<2x3xf32> {\n"
              "  %0:3 = \"stablehlo.batch_norm_training\"(%x, %s, %b) "
              "{epsilon = 0.0 : f32, feature_index = 1 : i64} : "
              "(tensor<2x3xf32>, tensor<2xf32>, tensor<3xf32>) -> "
              "(tensor<2x3xf32>, tensor<3xf32>, tensor<3xf32>)\n"
              "  func.return %0#0 : tensor<2x3xf32>\n}\n",
              "<input>:2:", "operand 1 must be 1-D");
  tu_parse_fails_at("func.func @main(%s: tensor<3xui64>) -> tensor<4xui32> {\n"
              "  %0:2 = stablehlo.rng_bit_generator %s, algorithm = THREE_FRY "
              ": (tensor<3xui64>) -> (tensor<3xui64>, tensor<4xui32>)\n"
              "  func.return %0#1 : tensor<4xui32>\n}\n",
              "<input>:2:", "initial_state must have 2 entries");
  tu_parse_fails_at("func.func @main(%a: tensor<i32>, %b: tensor<i32>) -> "
              "tensor<3xi32> {\n"
              "  %s = stablehlo.constant dense<3> : tensor<1xi64>\n"
              "  %0 = stablehlo.rng %a, %b, %s, distribution = NORMAL : "
              "(tensor<i32>, tensor<i32>, tensor<1xi64>) -> tensor<3xi32>\n"
              "  func.return %0 : tensor<3xi32>\n}\n",
              "<input>:3:", "NORMAL");
  tu_parse_fails_at("func.func @main(%l: tensor<5x2xf32>, %r: tensor<2x2x2xf32>, "
              "%g: tensor<3xi32>) -> tensor<5x2xf32> {\n"
              "  %0 = \"chlo.ragged_dot\"(%l, %r, %g) {ragged_dot_dimension_numbers"
              " = #chlo.ragged_dot<lhs_batching_dimensions = [], "
              "rhs_batching_dimensions = [], lhs_contracting_dimensions = [1], "
              "rhs_contracting_dimensions = [1], lhs_ragged_dimensions = [0], "
              "rhs_group_dimensions = [0]>} : (tensor<5x2xf32>, "
              "tensor<2x2x2xf32>, tensor<3xi32>) -> tensor<5x2xf32>\n"
              "  func.return %0 : tensor<5x2xf32>\n}\n",
              "<input>:2:", "rhs group dimension has size 2");
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_conv_1d),
      cmocka_unit_test(test_conv_2d_batch_groups),
      cmocka_unit_test(test_conv_int_wrap),
      cmocka_unit_test(test_conv_padding_nan_and_empty),
      cmocka_unit_test(test_dynamic_conv),
      cmocka_unit_test(test_fft_vs_dft),
      cmocka_unit_test(test_fft_roundtrip_2d),
      cmocka_unit_test(test_rfft_irfft),
      cmocka_unit_test(test_triangular_solve_substitution),
      cmocka_unit_test(test_triangular_solve_adjoint_complex),
      cmocka_unit_test(test_cholesky),
      cmocka_unit_test(test_cholesky_complex),
      cmocka_unit_test(test_batch_norm_inference_training),
      cmocka_unit_test(test_batch_norm_grad),
      cmocka_unit_test(test_rbg_threefry_kat),
      cmocka_unit_test(test_rbg_philox_kat),
      cmocka_unit_test(test_rng_uniform_normal),
      cmocka_unit_test(test_rng_int),
      cmocka_unit_test(test_ragged_dot_modes),
      cmocka_unit_test(test_verify_conv),
      cmocka_unit_test(test_verify_others),
  };
  return cmocka_run_group_tests(tests, tu_setup_client, tu_teardown_client);
}
