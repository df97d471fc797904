/*
 * test_sim_mobile_fusion.c - the fused loops of a MobileNet block (issue
 * #21): batch norm as JAX writes it (per-channel vectors broadcast over an
 * NHWC image, subtract / multiply / add) and relu6 (clamp with scalar
 * bounds), alone and after a depthwise convolution.  Covers src/sim/
 * fusion.c's periodic operands (a broadcast whose period divides the tile
 * is filled once), the clamp kernel for scalar bounds (move.c), and a
 * depthwise convolution computed tile by tile into its elementwise
 * consumer (conv_dw.c + fusion.c).
 *
 * References are computed here: the chain one IEEE operation at a time in
 * float (as the program says), clamp as IEEE maximum then minimum (NaN
 * propagates, -0 < +0), the convolution on small integers so that every
 * sum is exact whatever the order.  Results must agree bit for bit, and a
 * program that also returns the convolution (so it cannot be fused into
 * its consumer) must give the same bits.  MIT licensed.
 */
#include "test_util.h"

#include <math.h>

static int setup(void **state) { return tu_setup_client(state); }
static int teardown(void **state) { return tu_teardown_client(state); }

static uint32_t rng_state = 12345u;
static uint32_t rnd(uint32_t n) {
  rng_state = rng_state * 1103515245u + 12345u;
  return (rng_state >> 8) % n;
}

static float clampf_ref(float lo, float x, float hi) {
  return tu_ieee_minf(tu_ieee_maxf(x, lo), hi);
}

/* Same bits, or both NaN. */
static void assert_same_f32(const float *got, const float *want, int64_t n,
                            const char *what) {
  for (int64_t i = 0; i < n; i++) {
    if (isnan(want[i]) && isnan(got[i])) continue;
    if (tu_f32_bits(got[i]) != tu_f32_bits(want[i]))
      fail_msg("%s: element %lld: got %.9g (0x%08x), want %.9g (0x%08x)", what,
               (long long)i, (double)got[i], tu_f32_bits(got[i]),
               (double)want[i], tu_f32_bits(want[i]));
  }
}

/* Batch norm + relu6 over [N, H, W, C]: clamp(0, ((x - m) * s) + b, 6). */
static void bn_relu6_ref(const float *x, const float *m, const float *s,
                         const float *b, int64_t n, int64_t C, float *o) {
  for (int64_t i = 0; i < n; i++) {
    float d = x[i] - m[i % C];
    float p = d * s[i % C];
    float a = p + b[i % C];
    o[i] = clampf_ref(0.0f, a, 6.0f);
  }
}

static int bn_text(char *buf, size_t cap, const char *x, const char *shape,
                   int64_t C) {
  return snprintf(
      buf, cap,
      "  %%bm = stablehlo.broadcast_in_dim %%m, dims = [3] : (tensor<%lldxf32>) -> tensor<%sxf32>\n"
      "  %%d = stablehlo.subtract %s, %%bm : tensor<%sxf32>\n"
      "  %%bs = stablehlo.broadcast_in_dim %%s, dims = [3] : (tensor<%lldxf32>) -> tensor<%sxf32>\n"
      "  %%p = stablehlo.multiply %%d, %%bs : tensor<%sxf32>\n"
      "  %%bb = stablehlo.broadcast_in_dim %%b, dims = [3] : (tensor<%lldxf32>) -> tensor<%sxf32>\n"
      "  %%a = stablehlo.add %%p, %%bb : tensor<%sxf32>\n"
      "  %%lo = stablehlo.constant dense<0.000000e+00> : tensor<f32>\n"
      "  %%hi = stablehlo.constant dense<6.000000e+00> : tensor<f32>\n"
      "  %%r = stablehlo.clamp %%lo, %%a, %%hi : (tensor<f32>, tensor<%sxf32>, tensor<f32>) -> tensor<%sxf32>\n",
      (long long)C, shape, x, shape, (long long)C, shape, shape, (long long)C,
      shape, shape, shape, shape);
}

static void fill_vectors(float *m, float *s, float *b, int64_t C) {
  for (int64_t c = 0; c < C; c++) {
    m[c] = (float)((int)rnd(17) - 8) * 0.375f;
    s[c] = 0.1f + (float)rnd(100) * 0.013f;
    b[c] = (float)((int)rnd(9) - 4) * 0.71f;
  }
}

/* The batch norm chain and relu6 on images whose channel count divides
 * the tile or not, in one tile, several, and several pieces; inputs with
 * -0, +0, NaN and infinities. */
static void test_bn_relu6(void **state) {
  static const int64_t shapes[][4] = {
      {1, 3, 5, 48},  {1, 8, 8, 32},   {1, 16, 16, 96}, {2, 7, 9, 144},
      {1, 4, 4, 960}, {1, 2, 2, 2500}, {1, 28, 28, 96}, {1, 56, 56, 24}};
  xrt_client *cl2 = tu_client(1, 2, 0);
  for (size_t k = 0; k < TU_COUNT(shapes); k++) {
    const int64_t *d = shapes[k];
    int64_t n = d[0] * d[1] * d[2] * d[3], C = d[3];
    if (tu_light() && n > 100000) continue;
    float *x = malloc(sizeof *x * (size_t)n), *w = malloc(sizeof *w * (size_t)n);
    float *m = malloc(sizeof *m * (size_t)C), *s = malloc(sizeof *s * (size_t)C),
          *b = malloc(sizeof *b * (size_t)C);
    assert_non_null(x && w && m && s && b);
    for (int64_t i = 0; i < n; i++) x[i] = (float)((int)rnd(400) - 200) * 0.05f;
    x[0] = -0.0f, x[n / 3] = NAN, x[n / 2] = INFINITY, x[n - 1] = -INFINITY;
    fill_vectors(m, s, b, C);
    bn_relu6_ref(x, m, s, b, n, C, w);
    char shape[64], body[4096], prog[6000];
    snprintf(shape, sizeof shape, "%lldx%lldx%lldx%lld", (long long)d[0],
             (long long)d[1], (long long)d[2], (long long)d[3]);
    bn_text(body, sizeof body, "%x", shape, C);
    snprintf(prog, sizeof prog,
             "func.func @main(%%x: tensor<%sxf32>, %%m: tensor<%lldxf32>, %%s: tensor<%lldxf32>, %%b: tensor<%lldxf32>) -> tensor<%sxf32> {\n"
             "%s  return %%r : tensor<%sxf32>\n}\n",
             shape, (long long)C, (long long)C, (long long)C, shape, body,
             shape);
    tu_in in[4] = {{tu_shape(XRT_F32, 4, d), x},
                   {TU_SHAPE(XRT_F32, C), m},
                   {TU_SHAPE(XRT_F32, C), s},
                   {TU_SHAPE(XRT_F32, C), b}};
    for (int t = 0; t < 2; t++) {
      tu_out o;
      TU_RUN_OK(t ? cl2 : (xrt_client *)*state, prog, 4, in, &o);
      assert_int_equal(o.bytes[0], sizeof *w * (size_t)n);
      assert_same_f32((const float *)o.data[0], w, n, shape);
      tu_out_free(&o);
    }
    free(x), free(w), free(m), free(s), free(b);
  }
  xrt_client_release(cl2);
}

/* clamp with scalar bounds, alone (its own step) and fused after an add,
 * for bounds of every sign of zero, NaN and the ordinary ones; lengths
 * that are not a multiple of the vector. */
static void test_clamp_scalar_bounds(void **state) {
  static const char *lo_s[] = {"0.000000e+00", "-0.000000e+00", "-1.000000e+00",
                               "0x7FC00000", "2.500000e+00", "-0.000000e+00",
                               "0.000000e+00"};
  static const char *hi_s[] = {"6.000000e+00", "6.000000e+00", "-0.000000e+00",
                               "1.000000e+00", "0x7FC00000", "-0.000000e+00",
                               "0.000000e+00"};
  static const float lo_v[] = {0.0f, -0.0f, -1.0f, NAN, 2.5f, -0.0f, 0.0f};
  static const float hi_v[] = {6.0f, 6.0f, -0.0f, 1.0f, NAN, -0.0f, 0.0f};
  enum { N = 101 };
  float x[N], z[N], w[N], wz[N];
  for (int i = 0; i < N; i++) {
    x[i] = (float)((int)rnd(200) - 100) * 0.1f;
    z[i] = i % 3 == 0 ? -0.0f : 0.0f;
  }
  x[0] = -0.0f, x[1] = 0.0f, x[2] = NAN, x[3] = INFINITY, x[4] = -INFINITY;
  x[5] = 6.0f, x[6] = -1.0f, x[7] = 2.5f, x[99] = -0.0f, x[100] = NAN;
  for (size_t k = 0; k < TU_COUNT(lo_s); k++) {
    for (int i = 0; i < N; i++) {
      w[i] = clampf_ref(lo_v[k], x[i], hi_v[k]);
      wz[i] = clampf_ref(lo_v[k], x[i] + z[i], hi_v[k]);
    }
    for (int fused = 0; fused < 2; fused++) {
      char prog[2048];
      snprintf(prog, sizeof prog,
               "func.func @main(%%x: tensor<101xf32>, %%z: tensor<101xf32>) -> tensor<101xf32> {\n"
               "  %%lo = stablehlo.constant dense<%s> : tensor<f32>\n"
               "  %%hi = stablehlo.constant dense<%s> : tensor<f32>\n"
               "  %%a = stablehlo.add %%x, %%z : tensor<101xf32>\n"
               "  %%r = stablehlo.clamp %%lo, %%%s, %%hi : (tensor<f32>, tensor<101xf32>, tensor<f32>) -> tensor<101xf32>\n"
               "  return %%r : tensor<101xf32>\n}\n",
               lo_s[k], hi_s[k], fused ? "a" : "x");
      tu_in in[2] = {{TU_SHAPE(XRT_F32, N), x}, {TU_SHAPE(XRT_F32, N), z}};
      tu_out o;
      TU_RUN_OK((xrt_client *)*state, prog, 2, in, &o);
      char what[96];
      snprintf(what, sizeof what, "clamp(%s, x, %s)%s", lo_s[k], hi_s[k],
               fused ? " fused" : "");
      assert_same_f32((const float *)o.data[0], fused ? wz : w, N, what);
      tu_out_free(&o);
    }
  }
}

/* A chain whose line takes the other side of some operations (b - v,
 * b / v, b + v), a leaf read twice, no clamp: as written, one IEEE
 * operation at a time. */
static void test_chain_sides(void **state) {
  enum { H = 13, W = 11, C = 40, N = H * W * C };
  float *x = malloc(sizeof *x * N), *w = malloc(sizeof *w * N);
  float m[C], s[C], b[C];
  assert_non_null(x && w);
  for (int i = 0; i < N; i++) x[i] = (float)((int)rnd(64) - 32) * 0.125f;
  x[5] = -0.0f, x[6] = NAN;
  fill_vectors(m, s, b, C);
  for (int i = 0; i < N; i++) {
    float q = b[i % C] - x[i];
    float t = s[i % C] / q;
    float u = t * x[i];
    w[i] = m[i % C] + u;
  }
  const char *prog =
      "func.func @main(%x: tensor<1x13x11x40xf32>, %m: tensor<40xf32>, %s: tensor<40xf32>, %b: tensor<40xf32>) -> tensor<1x13x11x40xf32> {\n"
      "  %bm = stablehlo.broadcast_in_dim %m, dims = [3] : (tensor<40xf32>) -> tensor<1x13x11x40xf32>\n"
      "  %bs = stablehlo.broadcast_in_dim %s, dims = [3] : (tensor<40xf32>) -> tensor<1x13x11x40xf32>\n"
      "  %bb = stablehlo.broadcast_in_dim %b, dims = [3] : (tensor<40xf32>) -> tensor<1x13x11x40xf32>\n"
      "  %q = stablehlo.subtract %bb, %x : tensor<1x13x11x40xf32>\n"
      "  %t = stablehlo.divide %bs, %q : tensor<1x13x11x40xf32>\n"
      "  %u = stablehlo.multiply %t, %x : tensor<1x13x11x40xf32>\n"
      "  %r = stablehlo.add %bm, %u : tensor<1x13x11x40xf32>\n"
      "  return %r : tensor<1x13x11x40xf32>\n}\n";
  int64_t d[4] = {1, H, W, C};
  tu_in in[4] = {{tu_shape(XRT_F32, 4, d), x},
                 {TU_SHAPE(XRT_F32, C), m},
                 {TU_SHAPE(XRT_F32, C), s},
                 {TU_SHAPE(XRT_F32, C), b}};
  tu_out o;
  TU_RUN_OK((xrt_client *)*state, prog, 4, in, &o);
  assert_int_equal(o.bytes[0], sizeof *w * N);
  assert_same_f32((const float *)o.data[0], w, N, "chain");
  tu_out_free(&o);
  free(x), free(w);
}

/* A 1x1 convolution (a product) then batch norm and relu6, the chain
 * writing over the product it reads (which dies there); the same with the
 * product also read transposed in the chain (then not over it), and with
 * the product also returned (then not over it either).  Small integers:
 * exact products. */
static void test_in_place(void **state) {
  enum { P = 12 * 10, CI = 8, C = 16 };
  float x[P * CI], f[CI * C], y[P * C], w[P * C], wt[P * C];
  float m[C], s[C], b[C];
  for (int i = 0; i < P * CI; i++) x[i] = (float)((int)rnd(7) - 3);
  for (int i = 0; i < CI * C; i++) f[i] = (float)((int)rnd(5) - 2);
  fill_vectors(m, s, b, C);
  for (int p = 0; p < P; p++)
    for (int c = 0; c < C; c++) {
      float acc = 0;
      for (int k = 0; k < CI; k++) acc += x[p * CI + k] * f[k * C + c];
      y[p * C + c] = acc; /* exact: small integers */
    }
  bn_relu6_ref(y, m, s, b, P * C, C, w);
  /* variant 1: + y viewed as [C, P] transposed back (element i again) */
  for (int i = 0; i < P * C; i++) wt[i] = w[i] + y[i];
  static const char *tails[3] = {
      "  return %r : tensor<1x12x10x16xf32>\n}\n",
      "  %yt = stablehlo.transpose %y, dims = [0, 3, 1, 2] : (tensor<1x12x10x16xf32>) -> tensor<1x16x12x10xf32>\n"
      "  %yb = stablehlo.transpose %yt, dims = [0, 2, 3, 1] : (tensor<1x16x12x10xf32>) -> tensor<1x12x10x16xf32>\n"
      "  %ry = stablehlo.add %r, %yb : tensor<1x12x10x16xf32>\n"
      "  return %ry : tensor<1x12x10x16xf32>\n}\n",
      "  return %r, %y : tensor<1x12x10x16xf32>, tensor<1x12x10x16xf32>\n}\n"};
  for (int v = 0; v < 3; v++) {
    char body[4096], prog[8192];
    bn_text(body, sizeof body, "%y", "1x12x10x16", C);
    snprintf(prog, sizeof prog,
             "func.func @main(%%x: tensor<1x12x10x8xf32>, %%f: tensor<1x1x8x16xf32>, %%m: tensor<16xf32>, %%s: tensor<16xf32>, %%b: tensor<16xf32>) -> %s {\n"
             "  %%y = stablehlo.convolution(%%x, %%f) dim_numbers = [b, 0, 1, f]x[0, 1, i, o]->[b, 0, 1, f], window = {stride = [1, 1], pad = [[0, 0], [0, 0]], rhs_dilate = [1, 1]} {batch_group_count = 1 : i64, feature_group_count = 1 : i64} : (tensor<1x12x10x8xf32>, tensor<1x1x8x16xf32>) -> tensor<1x12x10x16xf32>\n"
             "%s%s",
             v == 2 ? "(tensor<1x12x10x16xf32>, tensor<1x12x10x16xf32>)"
                    : "tensor<1x12x10x16xf32>",
             body, tails[v]);
    int64_t xd[4] = {1, 12, 10, CI}, fd[4] = {1, 1, CI, C};
    tu_in in[5] = {{tu_shape(XRT_F32, 4, xd), x},
                   {tu_shape(XRT_F32, 4, fd), f},
                   {TU_SHAPE(XRT_F32, C), m},
                   {TU_SHAPE(XRT_F32, C), s},
                   {TU_SHAPE(XRT_F32, C), b}};
    tu_out o;
    TU_RUN_OK((xrt_client *)*state, prog, 5, in, &o);
    assert_int_equal(o.n, v == 2 ? 2 : 1);
    assert_same_f32((const float *)o.data[0], v == 1 ? wt : w, P * C, "bn");
    if (v == 2) assert_same_f32((const float *)o.data[1], y, P * C, "conv");
    tu_out_free(&o);
  }
}

/* A depthwise 3x3 convolution (NHWC, padding 1, stride 1 or 2) then batch
 * norm and relu6: the convolution runs tile by tile into the chain, in
 * chunks of several tiles when a tile holds few positions (the last chunk
 * of a piece partial); or (I > 1) one group of 3 input features (a first
 * layer) or of 32 into 16 results, the same way.  The inputs are small integers (exact sums);
 * the program that also returns the convolution (two uses: not fused into
 * the chain) must agree. */
static void test_dw_epilogue(void **state) {
  static const int64_t cases[][6] = {/* N, H, W, C, stride, I */
                                     {1, 9, 7, 32, 1, 1},
                                     {1, 16, 16, 48, 2, 1},
                                     {2, 5, 6, 24, 1, 1},
                                     {1, 3, 3, 960, 1, 1},
                                     {1, 2, 3, 2500, 1, 1},
                                     {1, 56, 56, 24, 1, 1},
                                     {1, 28, 28, 96, 2, 1},
                                     {1, 14, 14, 576, 1, 1},
                                     {1, 20, 18, 200, 2, 1},
                                     {1, 30, 34, 32, 2, 3},
                                     {2, 9, 11, 70, 1, 3},
                                     {1, 12, 10, 16, 1, 32}};
  xrt_client *cl2 = tu_client(1, 2, 0);
  for (size_t k = 0; k < TU_COUNT(cases); k++) {
    const int64_t *q = cases[k];
    int64_t N = q[0], H = q[1], W = q[2], C = q[3], st = q[4], I = q[5];
    int64_t OH = (H + 2 - 3) / st + 1, OW = (W + 2 - 3) / st + 1;
    int64_t XC = I == 1 ? C : I; /* lhs features */
    int64_t nx = N * H * W * XC, ny = N * OH * OW * C;
    if (tu_light() && ny > 50000) continue;
    float *x = malloc(sizeof *x * (size_t)nx),
          *f = malloc(sizeof *f * 9 * (size_t)(I * C));
    float *y = malloc(sizeof *y * (size_t)ny), *w = malloc(sizeof *w * (size_t)ny);
    float *m = malloc(sizeof *m * (size_t)C), *s = malloc(sizeof *s * (size_t)C),
          *b = malloc(sizeof *b * (size_t)C);
    assert_non_null(x && f && y && w && m && s && b);
    for (int64_t i = 0; i < nx; i++) x[i] = (float)((int)rnd(9) - 4);
    for (int64_t i = 0; i < 9 * I * C; i++) f[i] = (float)((int)rnd(7) - 3);
    fill_vectors(m, s, b, C);
    tu_ref_conv3x3(x, f, N, H, W, C, I, st, y); /* exact */
    bn_relu6_ref(y, m, s, b, ny, C, w);
    char xs[64], ys[64], body[4096], prog[2][8000];
    snprintf(xs, sizeof xs, "%lldx%lldx%lldx%lld", (long long)N, (long long)H,
             (long long)W, (long long)XC);
    snprintf(ys, sizeof ys, "%lldx%lldx%lldx%lld", (long long)N, (long long)OH,
             (long long)OW, (long long)C);
    bn_text(body, sizeof body, "%y", ys, C);
    for (int two = 0; two < 2; two++)
      snprintf(prog[two], sizeof prog[two],
               "func.func @main(%%x: tensor<%sxf32>, %%f: tensor<3x3x%lldx%lldxf32>, %%m: tensor<%lldxf32>, %%s: tensor<%lldxf32>, %%b: tensor<%lldxf32>) -> (tensor<%sxf32>%s%s%s) {\n"
               "  %%y = stablehlo.convolution(%%x, %%f) dim_numbers = [b, 0, 1, f]x[0, 1, i, o]->[b, 0, 1, f], window = {stride = [%lld, %lld], pad = [[1, 1], [1, 1]], rhs_dilate = [1, 1]} {batch_group_count = 1 : i64, feature_group_count = %lld : i64} : (tensor<%sxf32>, tensor<3x3x%lldx%lldxf32>) -> tensor<%sxf32>\n"
               "%s  return %%r%s : tensor<%sxf32>%s%s%s\n}\n",
               xs, (long long)I, (long long)C, (long long)C, (long long)C,
               (long long)C, ys, two ? ", tensor<" : "", two ? ys : "",
               two ? "xf32>" : "", (long long)st, (long long)st,
               (long long)(I == 1 ? C : 1), xs, (long long)I, (long long)C, ys,
               body, two ? ", %y" : "", ys, two ? ", tensor<" : "",
               two ? ys : "", two ? "xf32>" : "");
    int64_t fd[4] = {3, 3, I, C}, xd[4] = {N, H, W, XC};
    tu_in in[5] = {{tu_shape(XRT_F32, 4, xd), x},
                   {tu_shape(XRT_F32, 4, fd), f},
                   {TU_SHAPE(XRT_F32, C), m},
                   {TU_SHAPE(XRT_F32, C), s},
                   {TU_SHAPE(XRT_F32, C), b}};
    for (int v = 0; v < 4; v++) { /* one thread, two; fused, not */
      tu_out o;
      TU_RUN_OK(v & 1 ? cl2 : (xrt_client *)*state, prog[v >> 1], 5, in, &o);
      assert_int_equal(o.n, 1 + (v >> 1));
      assert_int_equal(o.bytes[0], sizeof *w * (size_t)ny);
      assert_same_f32((const float *)o.data[0], w, ny, ys);
      if (v >> 1) assert_same_f32((const float *)o.data[1], y, ny, "conv");
      tu_out_free(&o);
    }
    free(x), free(f), free(y), free(w), free(m), free(s), free(b);
  }
  xrt_client_release(cl2);
}

TU_MAIN(setup, teardown, cmocka_unit_test(test_bn_relu6),
        cmocka_unit_test(test_clamp_scalar_bounds),
        cmocka_unit_test(test_chain_sides),
        cmocka_unit_test(test_in_place),
        cmocka_unit_test(test_dw_epilogue))
