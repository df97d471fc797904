/*
 * test_sim_conv_direct.c - NCHW convolutions of images of few features
 * (the stems of image networks), which the simulator sums straight from
 * the image split by phase (src/sim/conv_direct.c, on CPUs with AVX-512;
 * elsewhere the same programs check the other paths), on one thread and
 * on two, against a windowed sum in double written here:
 *
 * - small integers: every partial sum is an integer well inside f32, so
 *   results must equal the exact sums;
 * - random values: |got - want| <= 1e-5 * sum |x w| over the window;
 * - an infinity in the image or the kernel: an infinity where the sum
 *   meets one, NaN where two of opposite signs meet or where a zero (the
 *   padding's included) multiplies one;
 * - strides 1 and 2 (and 3 down the rows), padding on any side, kernel
 *   dilation, two images, result features not a multiple of 12 (a block's
 *   rows part empty), rows of 19, 20, 32, 40 and 58 results (tiles of one
 *   and two vectors, part empty);
 * - three calls on the same kernel buffer (the packed kernel kept in the
 *   client's cache on the second, read on the third), then new kernels;
 * - an epilogue (a number, a bias per feature, a residual, a value per
 *   position, both bounds) that the tiles apply before they store;
 * - near misses (5 features, a 1x1 kernel, rows of 15 results, an f64
 *   convolution), which the other paths compute, exactly the same.
 * MIT licensed.
 */
#include "test_util.h"

#include <math.h>

static uint32_t seed = 4242;
static uint32_t rnd(uint32_t n) {
  seed = seed * 1664525u + 1013904223u;
  return (seed >> 8) % n;
}

typedef struct cv {
  int64_t N, C, H, W, O, KH, KW, sh, sw, pt, pb, pl, pr, dh, dw;
  int f64, epi;
} cv;

static int64_t out_h(const cv *q) {
  return (q->H + q->pt + q->pb - (q->KH - 1) * q->dh - 1) / q->sh + 1;
}
static int64_t out_w(const cv *q) {
  return (q->W + q->pl + q->pr - (q->KW - 1) * q->dw - 1) / q->sw + 1;
}

/* The program: the convolution, then (epi) y * 0.5 + bias[o] + res -
 * pos[y, x] clamped to [0, 6]. */
static char *program(const cv *q) {
  char *t = malloc(4096), xs[96], ks[96], ys[96], ps[64];
  assert_non_null(t);
  const char *e = q->f64 ? "f64" : "f32";
  long long OH = (long long)out_h(q), OW = (long long)out_w(q);
  snprintf(xs, sizeof xs, "%lldx%lldx%lldx%lldx%s", (long long)q->N,
           (long long)q->C, (long long)q->H, (long long)q->W, e);
  snprintf(ks, sizeof ks, "%lldx%lldx%lldx%lldx%s", (long long)q->O,
           (long long)q->C, (long long)q->KH, (long long)q->KW, e);
  snprintf(ys, sizeof ys, "%lldx%lldx%lldx%lldx%s", (long long)q->N,
           (long long)q->O, OH, OW, e);
  snprintf(ps, sizeof ps, "%lldx%lldx%s", OH, OW, e);
  int n = snprintf(
      t, 4096,
      "func.func @main(%%x: tensor<%s>, %%k: tensor<%s>, %%b: "
      "tensor<%lldx%s>, %%r: tensor<%s>, %%p: tensor<%s>) -> tensor<%s> {\n"
      "  %%y = stablehlo.convolution(%%x, %%k) dim_numbers = [b, f, 0, 1]x"
      "[o, i, 0, 1]->[b, f, 0, 1], window = {stride = [%lld, %lld], pad = "
      "[[%lld, %lld], [%lld, %lld]], rhs_dilate = [%lld, %lld]} "
      "{batch_group_count = 1 : i64, feature_group_count = 1 : i64} : "
      "(tensor<%s>, tensor<%s>) -> tensor<%s>\n",
      xs, ks, (long long)q->O, e, ys, ps, ys, (long long)q->sh,
      (long long)q->sw, (long long)q->pt, (long long)q->pb, (long long)q->pl,
      (long long)q->pr, (long long)q->dh, (long long)q->dw, xs, ks, ys);
  if (!q->epi) {
    snprintf(t + n, 4096 - (size_t)n, "  return %%y : tensor<%s>\n}\n", ys);
    return t;
  }
  snprintf(t + n, 4096 - (size_t)n,
           "  %%h = stablehlo.constant dense<0.5> : tensor<%s>\n"
           "  %%hb = stablehlo.broadcast_in_dim %%h, dims = [] : "
           "(tensor<%s>) -> tensor<%s>\n"
           "  %%bb = stablehlo.broadcast_in_dim %%b, dims = [1] : "
           "(tensor<%lldx%s>) -> tensor<%s>\n"
           "  %%pb = stablehlo.broadcast_in_dim %%p, dims = [2, 3] : "
           "(tensor<%s>) -> tensor<%s>\n"
           "  %%m = stablehlo.multiply %%y, %%hb : tensor<%s>\n"
           "  %%a = stablehlo.add %%m, %%bb : tensor<%s>\n"
           "  %%s = stablehlo.add %%a, %%r : tensor<%s>\n"
           "  %%d = stablehlo.subtract %%s, %%pb : tensor<%s>\n"
           "  %%lo = stablehlo.constant dense<0.0> : tensor<%s>\n"
           "  %%hi = stablehlo.constant dense<6.0> : tensor<%s>\n"
           "  %%c = stablehlo.clamp %%lo, %%d, %%hi : (tensor<%s>, "
           "tensor<%s>, tensor<%s>) -> tensor<%s>\n"
           "  return %%c : tensor<%s>\n}\n",
           e, e, ys, (long long)q->O, e, ys, ps, ys, ys, ys, ys, ys, e, e, e,
           ys, e, ys, ys);
  return t;
}

/* The windowed sum in double of result (b, o, y, x), and sum |x w| over
 * its window (padding: zeros that multiply the kernel). */
static double direct(const cv *q, const double *x, const double *k,
                     int64_t b, int64_t o, int64_t y, int64_t xx,
                     double *mag) {
  double acc = 0;
  *mag = 0;
  for (int64_t c = 0; c < q->C; c++)
    for (int64_t ky = 0; ky < q->KH; ky++)
      for (int64_t kx = 0; kx < q->KW; kx++) {
        int64_t iy = y * q->sh + ky * q->dh - q->pt;
        int64_t ix = xx * q->sw + kx * q->dw - q->pl;
        int pad = iy < 0 || iy >= q->H || ix < 0 || ix >= q->W;
        double xv = pad ? 0.0 : x[((b * q->C + c) * q->H + iy) * q->W + ix];
        double p = xv * k[((o * q->C + c) * q->KH + ky) * q->KW + kx];
        acc += p;
        *mag += fabs(p);
      }
  return acc;
}

enum { EXACT, CLOSE, INF_X, INF_K };

/* The epilogue's steps in the element type, in the group's order. */
static double epi_ref(const cv *q, double v, double bias, double res,
                      double pos) {
  if (!q->f64) {
    float f = (float)v * 0.5f + (float)bias + (float)res - (float)pos;
    return f != f ? f : f < 0.0f ? 0.0f : f > 6.0f ? 6.0f : f;
  }
  double d = v * 0.5 + bias + res - pos;
  return d != d ? d : d < 0.0 ? 0.0 : d > 6.0 ? 6.0 : d;
}

static void *fill(int f64, const double *v, int64_t n) {
  void *p = malloc((f64 ? sizeof(double) : sizeof(float)) * (size_t)n);
  assert_non_null(p);
  for (int64_t i = 0; i < n; i++)
    if (f64) ((double *)p)[i] = v[i];
    else ((float *)p)[i] = (float)v[i];
  return p;
}

static double value(int kind, int weight) {
  if (kind == CLOSE)
    return (double)(float)((double)((int)rnd(20001) - 10000) /
                           (weight ? 104729.0 : 7919.0));
  return (double)((int)rnd(weight ? 5 : 9) - (weight ? 2 : 4));
}

/* Three calls of q's program on one client, each checked. */
static void check(xrt_client *cl, const cv *q, int kind) {
  int64_t OH = out_h(q), OW = out_w(q);
  int64_t nx = q->N * q->C * q->H * q->W, nk = q->O * q->C * q->KH * q->KW;
  int64_t ny = q->N * q->O * OH * OW;
  double *x = malloc(sizeof(double) * (size_t)nx);
  double *k = malloc(sizeof(double) * (size_t)nk);
  double *b = malloc(sizeof(double) * (size_t)q->O);
  double *r = malloc(sizeof(double) * (size_t)ny);
  double *p = malloc(sizeof(double) * (size_t)(OH * OW));
  assert_true(x && k && b && r && p);
  for (int64_t i = 0; i < nx; i++) x[i] = value(kind, 0);
  for (int64_t i = 0; i < nk; i++) k[i] = value(kind, 1);
  for (int64_t i = 0; i < q->O; i++) b[i] = (double)((int)rnd(9) - 4) * 0.5;
  for (int64_t i = 0; i < ny; i++) r[i] = (double)((int)rnd(7) - 3);
  for (int64_t i = 0; i < OH * OW; i++) p[i] = (double)((int)rnd(5) - 2);
  if (kind == INF_X) { /* both signs, two side by side, one in a corner */
    x[rnd((uint32_t)nx)] = INFINITY;
    x[rnd((uint32_t)nx)] = -INFINITY;
    int64_t mid = (q->H / 2) * q->W + q->W / 2;
    x[mid] = INFINITY;
    x[mid + 1] = -INFINITY;
    x[0] = INFINITY; /* the first image's corner */
  }
  if (kind == INF_K) {
    k[rnd((uint32_t)nk)] = INFINITY;
    k[nk - 1] = -INFINITY;
  }
  void *xd = fill(q->f64, x, nx), *kd = fill(q->f64, k, nk);
  void *bd = fill(q->f64, b, q->O), *rd = fill(q->f64, r, ny);
  void *pd = fill(q->f64, p, OH * OW);
  xrt_dtype t = q->f64 ? XRT_F64 : XRT_F32;
  char *text = program(q);
  tu_in in[5] = {{TU_SHAPE(t, q->N, q->C, q->H, q->W), xd},
                 {TU_SHAPE(t, q->O, q->C, q->KH, q->KW), kd},
                 {TU_SHAPE(t, q->O), bd},
                 {TU_SHAPE(t, q->N, q->O, OH, OW), rd},
                 {TU_SHAPE(t, OH, OW), pd}};
  tu_out out[3];
  xrt_status st = tu_run_reps(cl, text, 5, in, 3, out);
  if (st) fail_msg("%s\n%s", tu_msg, text);
  for (int call = 0; call < 3; call++) {
    size_t es = q->f64 ? sizeof(double) : sizeof(float);
    assert_int_equal(out[call].bytes[0], es * (size_t)ny);
    for (int64_t i = 0; i < ny; i++) {
      int64_t xx = i % OW, y = i / OW % OH, o = i / OW / OH % q->O;
      int64_t bb = i / OW / OH / q->O;
      double mag, want = direct(q, x, k, bb, o, y, xx, &mag);
      double g = q->f64 ? ((const double *)out[call].data[0])[i]
                        : ((const float *)out[call].data[0])[i];
      if (!q->f64 && isfinite(want)) want = (double)(float)want;
      int ok;
      if (q->epi) {
        want = epi_ref(q, want, b[o], r[i], p[y * OW + xx]);
        ok = kind == CLOSE ? fabs(g - want) <= 1e-5 * (mag + 8)
                           : g == want || (isnan(g) && isnan(want));
      } else if (kind == EXACT) {
        ok = g == want;
      } else if (isnan(want)) {
        ok = isnan(g);
      } else if (isinf(want)) {
        ok = g == want;
      } else {
        ok = fabs(g - want) <= 1e-5 * mag;
      }
      if (!ok)
        fail_msg("call %d [b %lld, o %lld, y %lld, x %lld]: got %.9g want "
                 "%.9g\n%s",
                 call, (long long)bb, (long long)o, (long long)y,
                 (long long)xx, g, want, text);
    }
    tu_out_free(&out[call]);
  }
  free(text);
  free(x), free(k), free(b), free(r), free(p);
  free(xd), free(kd), free(bd), free(rd), free(pd);
}

/* N C H W O KH KW sh sw pt pb pl pr dh dw f64 epi */
static const cv shapes_taken[] = {
    /* SqueezeNet's stem, smaller: 7x7 of stride 2, rows of 20 */
    {1, 3, 45, 45, 24, 7, 7, 2, 2, 0, 0, 0, 0, 1, 1, 0, 0},
    /* ResNet's: padding 3, rows of 32 */
    {1, 3, 64, 64, 16, 7, 7, 2, 2, 3, 3, 3, 3, 1, 1, 0, 0},
    /* 3x3 of stride 1 on one feature, 20 features (a block of 8), rows
     * of 40 (a tile of two vectors, then one of part of one) */
    {1, 1, 17, 40, 20, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 0, 0},
    /* two images of 4 features, stride 3 down and 2 across, padding
     * uneven, the kernel dilated: rows of 19 */
    {2, 4, 23, 37, 28, 3, 2, 3, 2, 0, 1, 2, 0, 2, 2, 0, 0},
    /* rows of 58: padding only after, a 5x4 kernel */
    {1, 2, 9, 60, 16, 5, 4, 1, 1, 0, 2, 0, 1, 1, 1, 0, 0},
};

static const cv shapes_near[] = {
    {1, 5, 20, 40, 16, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 0, 0}, /* 5 features */
    {1, 3, 20, 40, 16, 1, 1, 1, 1, 0, 0, 0, 0, 1, 1, 0, 0}, /* 1x1 */
    {1, 3, 20, 29, 16, 3, 3, 2, 2, 1, 1, 1, 1, 1, 1, 0, 0}, /* rows of 15 */
    {1, 3, 20, 40, 12, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 0, 0}, /* 12 features */
    {1, 3, 20, 40, 16, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 1, 0}, /* f64 */
};

static void run_all(int threads) {
  xrt_client *c = tu_client(1, threads, 0);
  assert_non_null(c);
  for (size_t i = 0; i < TU_COUNT(shapes_taken); i++) {
    cv q = shapes_taken[i];
    check(c, &q, i % 2 ? CLOSE : EXACT);
    check(c, &q, i % 2 ? EXACT : CLOSE); /* new kernels, same shapes */
    check(c, &q, INF_X);
    check(c, &q, INF_K);
    q.epi = 1;
    check(c, &q, EXACT);
    check(c, &q, INF_X);
  }
  for (size_t i = 0; i < TU_COUNT(shapes_near); i++) {
    cv q = shapes_near[i];
    check(c, &q, EXACT);
    q.epi = 1;
    check(c, &q, EXACT);
  }
  if (!tu_light()) { /* SqueezeNet's stem itself, with its bias and ReLU */
    cv q = {1, 3, 224, 224, 96, 7, 7, 2, 2, 0, 0, 0, 0, 1, 1, 0, 1};
    check(c, &q, CLOSE);
  }
  xrt_client_release(c);
}

static void test_one_thread(void **state) {
  (void)state;
  run_all(1);
}

static void test_two_threads(void **state) {
  (void)state;
  run_all(2);
}

TU_MAIN(NULL, NULL, cmocka_unit_test(test_one_thread),
        cmocka_unit_test(test_two_threads))
