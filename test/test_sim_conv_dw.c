/*
 * test_sim_conv_dw.c - depthwise convolutions (feature_group_count = input
 * features): the simulator's kernels of src/sim/conv_dw.c, features-inner
 * (NHWC) and row by row (NCHW and other layouts), f32 and f64, against a
 * reference written here.
 *
 * The reference sums, in double, over window positions in row-major order
 * from 0, padding and lhs-dilation holes as zeros.  On small integers every
 * product and sum is exact, so results must agree bit for bit; on reals
 * within the error bound of n additions in the element type,
 * (n + 2) u sum |x w| (twice that for f64, whose reference rounds too).
 * Also: the same bits as the packed GEMM computes for one feature alone,
 * the same bits on several threads, 0 * inf at the padding, the depthwise
 * shapes of MobileNetV2, the shapes that stay with the other paths, and
 * (same reference, groups of several features) the GEMM's packing of
 * short feature runs (a first layer on RGB).  MIT licensed.
 */
#include "conv_case_util.h"

typedef conv_case dw_case;

static dw_case random_case(void) {
  dw_case k;
  memset(&k, 0, sizeof k);
  uint32_t r = rnd(10);
  k.ns = r < 2 ? 1 : r < 9 ? 2 : 3;
  k.f64 = rnd(5) == 0;
  k.ints = rnd(2) == 0;
  k.N = 1 + rnd(3);
  k.C = 1 + rnd(40), k.I = 1;
  k.mult = rnd(4) == 0 ? 2 + rnd(2) : 1;
  for (;;) {
    int64_t P = 1;
    for (int d = 0; d < k.ns; d++) {
      int small = k.ns == 3;
      k.in[d] = 1 + rnd(small ? 5 : 12);
      k.k[d] = 1 + rnd(small ? 3 : 5);
      k.s[d] = 1 + rnd(2);
      k.lo[d] = (int64_t)rnd(4) - 1;
      k.hi[d] = (int64_t)rnd(4) - 1;
      k.ld[d] = rnd(4) == 0 ? 2 : 1;
      k.rd[d] = rnd(4) == 0 ? 2 : 1;
      k.rev[d] = rnd(5) == 0;
      P *= out_dim(&k, d);
    }
    if (P > 0)
      break;
  }
  layout(&k, (int)rnd(3));
  return k;
}

/* Random shapes, attributes and layouts (and a few C = 1, which stay with
 * the GEMM path). */
static void test_random(void **state) {
  xrt_client *cl2 = tu_client(1, 3, 0);
  for (int i = 0; i < 300; i++) {
    dw_case k = random_case();
    check(C(state), i % 10 == 0 ? cl2 : NULL, &k);
  }
  xrt_client_release(cl2);
}

static dw_case conv2d(int64_t N, int64_t H, int64_t W, int64_t Cn, int64_t mult,
                      int64_t kh, int64_t kw, int64_t s, int64_t pad, int lay,
                      int f64, int ints) {
  dw_case k;
  memset(&k, 0, sizeof k);
  k.ns = 2, k.f64 = f64, k.ints = ints, k.N = N, k.C = Cn, k.mult = mult;
  k.I = 1;
  k.in[0] = H, k.in[1] = W, k.k[0] = kh, k.k[1] = kw;
  for (int d = 0; d < 2; d++) {
    k.s[d] = s, k.lo[d] = k.hi[d] = pad, k.ld[d] = k.rd[d] = 1;
  }
  layout(&k, lay);
  return k;
}

/* The depthwise convolutions of MobileNetV2 (3x3, padding 1), NHWC as JAX
 * writes them and NCHW, reals. */
static void test_mobilenet_shapes(void **state) {
  static const int64_t sh[][3] = {
      {112, 32, 1}, {112, 96, 2}, {56, 144, 1}, {56, 144, 2}, {28, 192, 1},
      {28, 192, 2}, {14, 384, 1}, {14, 576, 1}, {14, 576, 2}, {7, 960, 1}};
  for (size_t i = 0; i < TU_COUNT(sh); i++)
    for (int lay = 0; lay < 2; lay++) {
      if (tu_light() && lay != (int)(i % 2)) continue; /* a layout a shape */
      dw_case k = conv2d(1, sh[i][0], sh[i][0], sh[i][1], 1, 3, 3, sh[i][2], 1,
                         lay, 0, 0);
      check(C(state), NULL, &k);
    }
}

/* Several threads split the results: the same bits as one. */
static void test_threads(void **state) {
  xrt_client *cl2 = tu_client(1, 4, 0);
  for (int lay = 0; lay < 3; lay++) {
    dw_case k = conv2d(2, 40, 33, 48, 1, 3, 3, 1, 1, lay, 0, 0);
    check(C(state), cl2, &k);
    k = conv2d(3, 21, 20, 24, 2, 5, 5, 2, 2, lay, 1, 0);
    check(C(state), cl2, &k);
  }
  xrt_client_release(cl2);
}

/* Runs a 2-D convolution of reals and returns its result (free it). */
static void *run_real(xrt_client *cl, const dw_case *k, const double *x,
                      const double *w, size_t *bytes) {
  tu_out o;
  run(cl, k, x, w, &o);
  void *p = malloc(o.bytes[0]);
  assert_non_null(p);
  memcpy(p, o.data[0], o.bytes[0]);
  *bytes = o.bytes[0];
  tu_out_free(&o);
  return p;
}

/* Each feature alone is an ordinary convolution of one input and one
 * result feature, which (24 x 24 results of 9 products) goes to the packed
 * GEMM: the depthwise kernels add in its order with its kind of multiply-
 * add (fused or not), so the bits agree, whatever XRT_SIM_ISA says. */
static void test_same_bits_as_gemm(void **state) {
  for (int lay = 0; lay < 2; lay++)
    for (int f64 = 0; f64 < 2; f64++) {
      const int64_t Cn = 5, H = 24;
      dw_case k = conv2d(1, H, H, Cn, 1, 3, 3, 1, 1, lay, f64, 0);
      int64_t nx = H * H * Cn, nw = 9 * Cn;
      double *x = malloc(sizeof *x * (size_t)nx),
             *w = malloc(sizeof *w * (size_t)nw);
      double *x1 = malloc(sizeof *x1 * (size_t)(H * H));
      assert_true(x && w && x1);
      fill(x, nx, 0);
      fill(w, nw, 0);
      size_t bytes, b1, es = f64 ? 8 : 4;
      char *all = run_real(C(state), &k, x, w, &bytes);
      assert_int_equal(bytes, (size_t)(H * H * Cn) * es);
      dw_case k1 = k;
      k1.C = 1;
      layout(&k1, 1); /* one feature: the same bytes as NHWC; the GEMM's */
      for (int64_t f = 0; f < Cn; f++) {
        double w1[9];
        for (int64_t i = 0; i < H * H; i++) /* feature f of x */
          x1[i] = lay == 0 ? x[i * Cn + f] : x[f * H * H + i];
        for (int t = 0; t < 9; t++)
          w1[t] = lay == 0 ? w[t * Cn + f] : w[f * 9 + t];
        char *one = run_real(C(state), &k1, x1, w1, &b1);
        assert_int_equal(b1, (size_t)(H * H) * es);
        for (int64_t i = 0; i < H * H; i++) {
          const char *a =
              all + (size_t)(lay == 0 ? i * Cn + f : f * H * H + i) * es;
          if (memcmp(a, one + (size_t)i * es, es) != 0)
            fail_msg("layout %d f64 %d feature %lld result %lld differs", lay,
                     f64, (long long)f, (long long)i);
        }
        free(one);
      }
      free(all), free(x), free(w), free(x1);
    }
}

/* Padding multiplies the weights too: 0 * inf is nan there, while the
 * results whose window is inside the input get inf.  A sum of -0 products
 * is +0 (sums start from +0). */
static void test_special_values(void **state) {
  for (int lay = 0; lay < 2; lay++) {
    /* x: 1 x 3 x 3 x 2 of ones; w[0, 0] of feature 0 is inf */
    float x[18], w[18];
    for (int i = 0; i < 18; i++)
      x[i] = 1.0f, w[i] = 0.5f;
    w[lay == 0 ? 0 : 0] = INFINITY; /* (0, 0) of feature 0 either way */
    char prog[1024];
    snprintf(
        prog, sizeof prog,
        "func.func @main(%%x: tensor<%s>, %%w: tensor<%s>) -> tensor<%s> {\n"
        "  %%0 = \"stablehlo.convolution\"(%%x, %%w) {\n"
        "    padding = dense<[[1, 1], [1, 1]]> : tensor<2x2xi64>,\n"
        "    dimension_numbers = #stablehlo.conv<%s>,\n"
        "    feature_group_count = 2 : i64, batch_group_count = 1 : i64\n"
        "  } : (tensor<%s>, tensor<%s>) -> tensor<%s>\n"
        "  func.return %%0 : tensor<%s>\n}\n",
        lay ? "1x2x3x3xf32" : "1x3x3x2xf32",
        lay ? "2x1x3x3xf32" : "3x3x1x2xf32",
        lay ? "1x2x3x3xf32" : "1x3x3x2xf32",
        lay ? "[b, f, 0, 1]x[o, i, 0, 1]->[b, f, 0, 1]"
            : "[b, 0, 1, f]x[0, 1, i, o]->[b, 0, 1, f]",
        lay ? "1x2x3x3xf32" : "1x3x3x2xf32",
        lay ? "2x1x3x3xf32" : "3x3x1x2xf32",
        lay ? "1x2x3x3xf32" : "1x3x3x2xf32",
        lay ? "1x2x3x3xf32" : "1x3x3x2xf32");
    tu_in in[2] = {
        {lay ? TU_SHAPE(XRT_F32, 1, 2, 3, 3) : TU_SHAPE(XRT_F32, 1, 3, 3, 2),
         x},
        {lay ? TU_SHAPE(XRT_F32, 2, 1, 3, 3) : TU_SHAPE(XRT_F32, 3, 3, 1, 2),
         w}};
    tu_out o;
    TU_RUN_OK(C(state), prog, 2, in, &o);
    const float *y = (const float *)o.data[0];
    for (int p = 0; p < 9; p++) {
      int oy = p / 3, ox = p % 3;
      float f0 = y[lay ? p : p * 2], f1 = y[lay ? 9 + p : p * 2 + 1];
      /* window position (0, 0) reads (oy - 1, ox - 1) */
      if (oy == 0 || ox == 0)
        assert_true(isnan(f0));
      else
        assert_true(isinf(f0) && f0 > 0);
      int n = (oy == 1 ? 3 : 2) * (ox == 1 ? 3 : 2); /* positions inside */
      assert_true(f1 == 0.5f * (float)n);
    }
    tu_out_free(&o);
    /* zeros times -1: +0 */
    for (int i = 0; i < 18; i++)
      x[i] = 0.0f, w[i] = -1.0f;
    TU_RUN_OK(C(state), prog, 2, in, &o);
    y = (const float *)o.data[0];
    for (int i = 0; i < 18; i++)
      assert_true(y[i] == 0.0f && !signbit(y[i]));
    tu_out_free(&o);
  }
}

/* Channel multipliers, f64, one spatial dimension, lhs dilation in the
 * last dimension (the row nest's table), batches: each layout. */
static void test_varieties(void **state) {
  for (int lay = 0; lay < 3; lay++) {
    dw_case k = conv2d(2, 9, 11, 7, 3, 3, 2, 2, 1, lay, 0, 1);
    check(C(state), NULL, &k);
    k = conv2d(3, 8, 8, 17, 1, 5, 5, 1, 2, lay, 1, 0);
    check(C(state), NULL, &k);
    k = conv2d(1, 10, 10, 33, 1, 3, 3, 2, 0, lay, 0, 0);
    k.ld[1] = 2, k.rd[0] = 2, k.rev[1] = 1;
    check(C(state), NULL, &k);
    k = conv2d(1, 6, 19, 40, 2, 2, 4, 3, 1, lay, 1, 1);
    k.s[0] = 1, k.lo[1] = -1, k.hi[1] = 2;
    check(C(state), NULL, &k);
  }
  dw_case k = conv2d(2, 1, 37, 20, 1, 1, 5, 1, 2, 1, 0, 0);
  k.ns = 1, k.in[0] = 37, k.k[0] = 5; /* [b, f, 0] */
  layout(&k, 1);
  check(C(state), NULL, &k);
  layout(&k, 0);
  check(C(state), NULL, &k);
}

/* Shapes the depthwise kernels leave to the other paths: one group (NCHW:
 * NHWC ones are test_few_features'), a window of more than 128 positions,
 * an empty window, no result. */
static void test_other_paths(void **state) {
  dw_case k = conv2d(1, 9, 9, 1, 4, 3, 3, 1, 1, 1, 0, 1);
  check(C(state), NULL, &k);
  k = conv2d(1, 140, 4, 6, 1, 130, 1, 1, 0, 0, 0, 1);
  check(C(state), NULL, &k);
  k = conv2d(1, 4, 140, 6, 1, 1, 130, 1, 0, 1, 0, 1);
  check(C(state), NULL, &k);
  k = conv2d(1, 140, 4, 6, 1, 130, 1, 1, 0, 1, 0, 1);
  check(C(state), NULL, &k);
  k = conv2d(1, 3, 3, 4, 1, 0, 2, 1, 1, 0, 0, 1); /* sums of nothing */
  check(C(state), NULL, &k);
  k = conv2d(0, 3, 3, 4, 1, 2, 2, 1, 0, 0, 0, 1); /* no batch */
  check(C(state), NULL, &k);
}

/* One group of up to 4 input features, or of up to 64 into at most 16
 * results, features last in lhs, the kernel ([0.., i, o]) and the result:
 * the features-inner nest's few-feature kernels (a first layer on RGB, as
 * MobileNet's and ResNet's stems; a 1x1 projection to 16 features), of
 * random shapes, attributes, batches and result counts (a partial last
 * vector of results too); some on three threads. */
static void test_few_features(void **state) {
  xrt_client *cl2 = tu_client(1, 3, 0);
  for (int i = 0; i < 160; i++) {
    dw_case k = random_case();
    k.C = 1, k.I = 1 + rnd(4), k.mult = 1 + rnd(70);
    if (i % 4 == 3) k.I = 5 + rnd(60), k.mult = 1 + rnd(16);
    layout(&k, 0);
    check(C(state), i % 8 == 0 ? cl2 : NULL, &k);
  }
  static const int64_t stems[][5] = {/* H, results, window, stride, pad */
                                     {224, 32, 3, 2, 1},
                                     {64, 64, 7, 2, 3}};
  for (size_t i = 0; i < TU_COUNT(stems); i++) {
    dw_case k = conv2d(1, stems[i][0], stems[i][0], 1, stems[i][1],
                       stems[i][2], stems[i][2], stems[i][3], stems[i][4], 0,
                       0, 0);
    k.I = 3;
    check(C(state), cl2, &k);
  }
  xrt_client_release(cl2);
}

/* The few-feature kernels multiply the padding too: 0 * inf is nan where
 * the window leaves the input, inf inside. */
static void test_few_features_padding(void **state) {
  /* x: 1 x 4 x 4 x 3 of ones; w: 3 x 3 x 3 x 17 of 0.25, w[0, 0, 1, 0] inf */
  float x[48], w[459];
  for (int i = 0; i < 48; i++) x[i] = 1.0f;
  for (int i = 0; i < 459; i++) w[i] = 0.25f;
  w[17] = INFINITY;
  const char *prog =
      "func.func @main(%x: tensor<1x4x4x3xf32>, %w: tensor<3x3x3x17xf32>)"
      " -> tensor<1x4x4x17xf32> {\n"
      "  %0 = stablehlo.convolution(%x, %w) dim_numbers = [b, 0, 1, f]x"
      "[0, 1, i, o]->[b, 0, 1, f], window = {pad = [[1, 1], [1, 1]]} "
      "{batch_group_count = 1 : i64, feature_group_count = 1 : i64} : "
      "(tensor<1x4x4x3xf32>, tensor<3x3x3x17xf32>) -> tensor<1x4x4x17xf32>\n"
      "  func.return %0 : tensor<1x4x4x17xf32>\n}\n";
  tu_in in[2] = {{TU_SHAPE(XRT_F32, 1, 4, 4, 3), x},
                 {TU_SHAPE(XRT_F32, 3, 3, 3, 17), w}};
  tu_out o;
  TU_RUN_OK(C(state), prog, 2, in, &o);
  const float *y = (const float *)o.data[0];
  for (int p = 0; p < 16; p++) {
    int oy = p / 4, ox = p % 4;
    int n = (oy == 0 || oy == 3 ? 2 : 3) * (ox == 0 || ox == 3 ? 2 : 3);
    for (int j = 0; j < 17; j++) {
      float v = y[p * 17 + j];
      if (j > 0)
        assert_true(v == 0.75f * (float)n); /* 3 features x 0.25 */
      else if (oy == 0 || ox == 0) /* window position (0, 0) outside */
        assert_true(isnan(v));
      else
        assert_true(isinf(v) && v > 0);
    }
  }
  tu_out_free(&o);
}

/* Not depthwise: few input features per window position go to the
 * packed GEMM when the kernel's results are not contiguous, whose AVX-512
 * packing gathers such short runs row by row (src/sim/gemm.c): a first
 * layer (RGB, kernel [0, 1, o, i]), and 5 features under a 13 x 13 window
 * into 400 results (K = 845 in several blocks, several column blocks). */
static void test_gemm_short_runs(void **state) {
  dw_case k = conv2d(2, 30, 29, 1, 32, 3, 3, 2, 1, 0, 0, 1);
  k.I = 3; /* one group of 3 features */
  k.rp[2] = 0, k.rp[3] = 1;
  check(C(state), NULL, &k);
  k.ints = 0;
  check(C(state), NULL, &k);
  k = conv2d(1, 8, 7, 1, 400, 13, 13, 1, 6, 0, 0, 1);
  k.I = 5, k.lo[1] = 5;
  check(C(state), NULL, &k);
  k = conv2d(1, 12, 12, 2, 8, 3, 3, 1, 1, 0, 0, 1); /* two groups */
  k.I = 7;
  check(C(state), NULL, &k);
}

int main(void) {
  rng_state = 2024;
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_random),
      cmocka_unit_test(test_mobilenet_shapes),
      cmocka_unit_test(test_threads),
      cmocka_unit_test(test_same_bits_as_gemm),
      cmocka_unit_test(test_special_values),
      cmocka_unit_test(test_varieties),
      cmocka_unit_test(test_other_paths),
      cmocka_unit_test(test_few_features),
      cmocka_unit_test(test_few_features_padding),
      cmocka_unit_test(test_gemm_short_runs),
  };
  return cmocka_run_group_tests(tests, tu_setup_client, tu_teardown_client);
}
