/*
 * test_sim_conv_wino.c - 3x3 convolutions of stride 1 and padding 1 with
 * many features, NHWC and NCHW, by Winograd's F(2x2, 3x3)
 * (src/sim/conv_wino.c), on one thread and on two, against a reference
 * written here:
 *
 * - small integers: every value the transforms make is a multiple of a
 *   quarter well inside f32, so results must equal the exact sums;
 * - random values: within the error bound of a sum of products,
 *   |got - want| <= 1e-5 * sum |x w| over the window (a reordered f32 sum
 *   of 9 C terms stays far inside it; a wrong tile or transform does not);
 * - an infinity in the lhs or the kernel: the direct method's
 *   results (an infinity where it meets the infinity, NaN where two of
 *   either sign meet or a zero weight multiplies it), not a transform's
 *   inf - inf;
 * - images of odd height and width (tiles cut by the edge), two batch
 *   elements, and three calls on the same kernel buffer (the second keeps
 *   the transformed kernel in the client's cache, the third reads it),
 *   then another kernel.  MIT licensed.
 */
#define _POSIX_C_SOURCE 200809L /* setenv */
#include "test_util.h"

#include <math.h>

static uint32_t seed = 777;
static uint32_t rnd(uint32_t n) {
  seed = seed * 1664525u + 1013904223u;
  return (seed >> 8) % n;
}

/* NHWC with HWIO kernels (JAX), or NCHW with OIHW kernels (PyTorch). */
static int nchw;

/* The lhs, kernel and result types of the layout (nchw). */
static void types(int64_t N, int64_t H, int64_t W, int64_t C, int64_t O,
                  char *xs, char *ks, char *ys, size_t cap) {
  long long n = (long long)N, h = (long long)H, w = (long long)W,
            c = (long long)C, o = (long long)O;
  if (nchw) {
    snprintf(xs, cap, "%lldx%lldx%lldx%lldxf32", n, c, h, w);
    snprintf(ks, cap, "%lldx%lldx3x3xf32", o, c);
    snprintf(ys, cap, "%lldx%lldx%lldx%lldxf32", n, o, h, w);
  } else {
    snprintf(xs, cap, "%lldx%lldx%lldx%lldxf32", n, h, w, c);
    snprintf(ks, cap, "3x3x%lldx%lldxf32", c, o);
    snprintf(ys, cap, "%lldx%lldx%lldx%lldxf32", n, h, w, o);
  }
}

static const char *dims(void) {
  return nchw ? "[b, f, 0, 1]x[o, i, 0, 1]->[b, f, 0, 1]"
              : "[b, 0, 1, f]x[0, 1, i, o]->[b, 0, 1, f]";
}

static char *program(int64_t N, int64_t H, int64_t W, int64_t C, int64_t O) {
  char *t = malloc(2048), xs[96], ks[96], ys[96];
  assert_non_null(t);
  types(N, H, W, C, O, xs, ks, ys, sizeof xs);
  snprintf(t, 2048,
           "func.func @main(%%x: tensor<%s>, %%k: tensor<%s>) -> "
           "tensor<%s> {\n"
           "  %%y = stablehlo.convolution(%%x, %%k) dim_numbers = %s, "
           "window = {stride = [1, 1], pad = [[1, 1], [1, 1]], rhs_dilate = "
           "[1, 1]} {batch_group_count = 1 : i64, feature_group_count = 1 : "
           "i64} : (tensor<%s>, tensor<%s>) -> tensor<%s>\n"
           "  return %%y : tensor<%s>\n}\n",
           xs, ks, ys, dims(), xs, ks, ys, ys);
  return t;
}

/* Offsets of lhs (b, y, x, i), kernel (ky, kx, i, o) and result
 * (b, y, x, o) in the layout. */
static int64_t xat(int64_t H, int64_t W, int64_t C, int64_t b, int64_t y,
                   int64_t x, int64_t i) {
  return nchw ? ((b * C + i) * H + y) * W + x : ((b * H + y) * W + x) * C + i;
}
static int64_t kat(int64_t C, int64_t O, int64_t ky, int64_t kx, int64_t i,
                   int64_t o) {
  return nchw ? ((o * C + i) * 3 + ky) * 3 + kx
              : ((ky * 3 + kx) * C + i) * O + o;
}

/* The direct sum in double for result (b, y, x, o), and the sum of
 * |x w| over its window (padding as zeros that multiply the kernel, so a
 * NaN or infinite weight makes NaN there too, as the specification's
 * padded lhs does). */
static double direct(const float *x, const float *k, int64_t H, int64_t W,
                     int64_t C, int64_t O, int64_t b, int64_t y, int64_t xx,
                     int64_t o, double *mag) {
  double acc = 0;
  *mag = 0;
  for (int64_t ky = 0; ky < 3; ky++)
    for (int64_t kx = 0; kx < 3; kx++) {
      int64_t iy = y + ky - 1, ix = xx + kx - 1;
      int pad = iy < 0 || iy >= H || ix < 0 || ix >= W;
      for (int64_t i = 0; i < C; i++) { /* padding: zeros, multiplied */
        double xv = pad ? 0.0 : (double)x[xat(H, W, C, b, iy, ix, i)];
        double p = xv * (double)k[kat(C, O, ky, kx, i, o)];
        acc += p;
        *mag += fabs(p);
      }
    }
  return acc;
}

enum { EXACT, CLOSE, SPECIAL_X, SPECIAL_K };

/* Three calls of the convolution on one client, each checked. */
static void check(xrt_client *cl, int64_t N, int64_t H, int64_t W, int64_t C,
                  int64_t O, int kind) {
  int64_t nx = N * H * W * C, nk = 9 * C * O, ny = N * H * W * O;
  float *x = malloc(sizeof(float) * (size_t)nx);
  float *k = malloc(sizeof(float) * (size_t)nk);
  assert_true(x && k);
  for (int64_t i = 0; i < nx; i++)
    x[i] = kind == CLOSE ? (float)((int)rnd(20001) - 10000) / 7919.0f
                         : (float)((int)rnd(9) - 4);
  for (int64_t i = 0; i < nk; i++)
    k[i] = kind == CLOSE ? (float)((int)rnd(20001) - 10000) / 104729.0f
                         : (float)((int)rnd(5) - 2);
  if (kind == SPECIAL_X) { /* infinities of both signs in the lhs */
    x[rnd((uint32_t)nx)] = INFINITY;
    x[rnd((uint32_t)nx)] = -INFINITY;
    x[xat(H, W, C, 0, H / 2, W / 2, 0)] = INFINITY; /* beside the next */
    x[xat(H, W, C, 0, H / 2, W / 2 + 1, 0)] = -INFINITY;
  }
  if (kind == SPECIAL_K) k[rnd((uint32_t)nk)] = INFINITY; /* a weight */
  char *text = program(N, H, W, C, O);
  tu_in in[2] = {{nchw ? TU_SHAPE(XRT_F32, N, C, H, W)
                       : TU_SHAPE(XRT_F32, N, H, W, C), x},
                 {nchw ? TU_SHAPE(XRT_F32, O, C, 3, 3)
                       : TU_SHAPE(XRT_F32, 3, 3, C, O), k}};
  tu_out out[3];
  xrt_status st = tu_run_reps(cl, text, 2, in, 3, out);
  if (st) fail_msg("%s\n%s", tu_msg, text);
  for (int r = 0; r < 3; r++) {
    assert_int_equal(out[r].bytes[0], sizeof(float) * (size_t)ny);
    const float *got = (const float *)out[r].data[0];
    for (int64_t b = 0; b < N; b++)
      for (int64_t y = 0; y < H; y++)
        for (int64_t xx = 0; xx < W; xx++)
          for (int64_t o = 0; o < O; o++) {
            double mag, want = direct(x, k, H, W, C, O, b, y, xx, o, &mag);
            double g = got[xat(H, W, O, b, y, xx, o)];
            int ok;
            if (kind == EXACT) ok = g == want;
            else if (kind == CLOSE) ok = fabs(g - want) <= 1e-5 * mag;
            else if (isnan(want)) ok = isnan(g);
            else if (isinf(want)) ok = g == want;
            else ok = fabs(g - want) <= 1e-5 * mag;
            if (!ok)
              fail_msg("%s N %lld H %lld W %lld C %lld O %lld call %d: "
                       "[b %lld, y %lld, x %lld, o %lld] got %.9g want %.9g",
                       nchw ? "NCHW" : "NHWC", (long long)N, (long long)H,
                       (long long)W,
                       (long long)C, (long long)O, r, (long long)b,
                       (long long)y, (long long)xx, (long long)o, g, want);
          }
    tu_out_free(&out[r]);
  }
  free(text);
  free(x);
  free(k);
}

/* ---- epilogues ----
 * The elementwise ops after the convolution as a chain the output
 * transform applies (fusion.c's sim_run_fused_wino): NCHW bias and ReLU
 * (a number per result row, a lower bound of +0); NHWC batch norm as a
 * scale and shift per feature, a residual of the result's shape and
 * ReLU6 (column vectors, a full value, both bounds); NHWC shift minus the
 * convolution (an operation with its operands reversed).  Small integers
 * and quarters: every result is exact, so it must equal the reference's
 * float steps in the group's order.  With an infinity in the lhs the call
 * runs the direct way and the group after it. */
enum { EPI_BIAS_RELU, EPI_BN_RES_RELU6, EPI_REV_SUB, EPI_CLAMP_NEGZERO,
       EPI_THEN_CONV };

static char *epi_program(int epi, int64_t H, int64_t W, int64_t C,
                         int64_t O) {
  char *t = malloc(4096), xs[96], ks[96], ys[96];
  assert_non_null(t);
  long long o = (long long)O;
  int cl = !nchw; /* channels last: the features' dimension is 3, else 1 */
  types(1, H, W, C, O, xs, ks, ys, sizeof xs);
  char rs[96]; /* %r: a residual of the result's type, or a 1x1 kernel */
  if (epi == EPI_THEN_CONV) snprintf(rs, sizeof rs, "%lldx%lldx1x1xf32", o, o);
  else snprintf(rs, sizeof rs, "%s", ys);
  int n = snprintf(
      t, 4096,
      "func.func @main(%%x: tensor<%s>, %%k: tensor<%s>, "
      "%%s: tensor<%lldxf32>, %%b: tensor<%lldxf32>, %%r: tensor<%s>) -> "
      "tensor<%s> {\n"
      "  %%y = stablehlo.convolution(%%x, %%k) dim_numbers = %s, window = "
      "{stride = [1, 1], pad = [[1, 1], [1, 1]], rhs_dilate = [1, 1]} "
      "{batch_group_count = 1 : i64, feature_group_count = 1 : i64} : "
      "(tensor<%s>, tensor<%s>) -> tensor<%s>\n"
      "  %%sb = stablehlo.broadcast_in_dim %%s, dims = [%d] : "
      "(tensor<%lldxf32>) -> tensor<%s>\n"
      "  %%bb = stablehlo.broadcast_in_dim %%b, dims = [%d] : "
      "(tensor<%lldxf32>) -> tensor<%s>\n",
      xs, ks, o, o, rs, ys, dims(), xs, ks, ys, cl ? 3 : 1, o, ys,
      cl ? 3 : 1, o, ys);
  const char *tail =
      epi == EPI_CLAMP_NEGZERO
          ? "  %%lo = stablehlo.constant dense<-1.0> : tensor<f32>\n"
            "  %%hi = stablehlo.constant dense<-0.0> : tensor<f32>\n"
            "  %%e = stablehlo.clamp %%lo, %%y, %%hi : (tensor<f32>, "
            "tensor<%s>, tensor<f32>) -> tensor<%s>\n"
      : epi == EPI_THEN_CONV
          ? "  %%a = stablehlo.add %%y, %%bb : tensor<%s>\n"
            "  %%z = stablehlo.constant dense<0.0> : tensor<f32>\n"
            "  %%zb = stablehlo.broadcast_in_dim %%z, dims = [] : "
            "(tensor<f32>) -> tensor<%s>\n"
            "  %%m = stablehlo.maximum %%a, %%zb : tensor<%s>\n"
            "  %%e = stablehlo.convolution(%%m, %%r) dim_numbers = "
            "[b, f, 0, 1]x[o, i, 0, 1]->[b, f, 0, 1], window = {stride = "
            "[1, 1], pad = [[0, 0], [0, 0]], rhs_dilate = [1, 1]} "
            "{batch_group_count = 1 : i64, feature_group_count = 1 : i64} "
            ": (tensor<%s>, tensor<%s>) -> tensor<%s>\n"
      : epi == EPI_BIAS_RELU
          ? "  %%a = stablehlo.add %%y, %%bb : tensor<%s>\n"
            "  %%z = stablehlo.constant dense<0.0> : tensor<f32>\n"
            "  %%zb = stablehlo.broadcast_in_dim %%z, dims = [] : "
            "(tensor<f32>) -> tensor<%s>\n"
            "  %%e = stablehlo.maximum %%a, %%zb : tensor<%s>\n"
      : epi == EPI_BN_RES_RELU6
          ? "  %%m = stablehlo.multiply %%y, %%sb : tensor<%s>\n"
            "  %%a = stablehlo.add %%m, %%bb : tensor<%s>\n"
            "  %%q = stablehlo.add %%a, %%r : tensor<%s>\n"
            "  %%lo = stablehlo.constant dense<0.0> : tensor<f32>\n"
            "  %%hi = stablehlo.constant dense<6.0> : tensor<f32>\n"
            "  %%e = stablehlo.clamp %%lo, %%q, %%hi : (tensor<f32>, "
            "tensor<%s>, tensor<f32>) -> tensor<%s>\n"
          : "  %%e = stablehlo.subtract %%bb, %%y : tensor<%s>\n";
  char fmt[1024];
  snprintf(fmt, sizeof fmt, "%s  return %%%%e : tensor<%%s>\n}\n", tail);
  if (epi == EPI_THEN_CONV) /* %r is the 1x1 kernel [O, O, 1, 1] */
    snprintf(t + n, 4096 - (size_t)n, fmt, ys, ys, ys, ys, rs, ys, ys);
  else if (epi == EPI_BN_RES_RELU6)
    snprintf(t + n, 4096 - (size_t)n, fmt, ys, ys, ys, ys, ys, ys);
  else if (epi == EPI_CLAMP_NEGZERO)
    snprintf(t + n, 4096 - (size_t)n, fmt, ys, ys, ys);
  else if (epi == EPI_BIAS_RELU)
    snprintf(t + n, 4096 - (size_t)n, fmt, ys, ys, ys, ys);
  else
    snprintf(t + n, 4096 - (size_t)n, fmt, ys, ys);
  return t;
}

/* The group's float steps on the convolution's result v. */
static float epi_ref(int epi, double v, float s, float b, float r) {
  float y = (float)v;
  if (epi == EPI_BIAS_RELU) {
    float a = y + b;
    return a != a || a > 0.0f ? a : 0.0f; /* NaN stays NaN */
  }
  if (epi == EPI_REV_SUB) return b - y;
  if (epi == EPI_CLAMP_NEGZERO) {
    if (y != y) return y;
    return y < -1.0f ? -1.0f : y > -0.0f ? -0.0f : y;
  }
  if (epi == EPI_THEN_CONV) { /* the ReLU of the bias sum; the 1x1 after */
    float a = y + b;
    return a != a || a > 0.0f ? a : 0.0f;
  }
  float q = y * s + b + r;
  if (q != q) return q;
  return q < 0.0f ? 0.0f : q > 6.0f ? 6.0f : q;
}

static void check_epilogue(xrt_client *cl, int epi, int64_t H, int64_t W,
                           int64_t C, int64_t O, int with_inf) {
  nchw = epi == EPI_BIAS_RELU || epi == EPI_THEN_CONV;
  int64_t nx = H * W * C, nk = 9 * C * O, ny = H * W * O;
  float *x = malloc(sizeof(float) * (size_t)nx);
  float *k = malloc(sizeof(float) * (size_t)nk);
  float *sc = malloc(sizeof(float) * (size_t)O);
  float *sh = malloc(sizeof(float) * (size_t)O);
  int64_t nr = epi == EPI_THEN_CONV ? O * O : ny; /* %r's elements */
  float *res = malloc(sizeof(float) * (size_t)nr);
  assert_true(x && k && sc && sh && res);
  for (int64_t i = 0; i < nx; i++) x[i] = (float)((int)rnd(5) - 2);
  for (int64_t i = 0; i < nk; i++) k[i] = (float)((int)rnd(3) - 1);
  for (int64_t i = 0; i < O; i++) {
    sc[i] = (float)((int)rnd(5) - 2) * 0.25f;
    sh[i] = (float)((int)rnd(9) - 4) * 0.5f;
  }
  for (int64_t i = 0; i < nr; i++)
    res[i] = epi == EPI_THEN_CONV ? (float)((int)rnd(3) - 1)
                                  : (float)((int)rnd(7) - 3);
  if (with_inf) x[xat(H, W, C, 0, H / 2, W / 3, 1)] = INFINITY;
  char *text = epi_program(epi, H, W, C, O);
  tu_in in[5] = {
      {nchw ? TU_SHAPE(XRT_F32, 1, C, H, W) : TU_SHAPE(XRT_F32, 1, H, W, C),
       x},
      {nchw ? TU_SHAPE(XRT_F32, O, C, 3, 3) : TU_SHAPE(XRT_F32, 3, 3, C, O),
       k},
      {TU_SHAPE(XRT_F32, O), sc},
      {TU_SHAPE(XRT_F32, O), sh},
      {epi == EPI_THEN_CONV ? TU_SHAPE(XRT_F32, O, O, 1, 1)
       : nchw               ? TU_SHAPE(XRT_F32, 1, O, H, W)
                            : TU_SHAPE(XRT_F32, 1, H, W, O),
       res}};
  tu_out out[3];
  xrt_status st = tu_run_reps(cl, text, 5, in, 3, out);
  if (st) fail_msg("%s\n%s", tu_msg, text);
  for (int rep = 0; rep < 3; rep++) {
    const float *got = (const float *)out[rep].data[0];
    float *mid = malloc(sizeof(float) * (size_t)ny); /* the group's result */
    assert_non_null(mid);
    for (int64_t y = 0; y < H; y++)
      for (int64_t xx = 0; xx < W; xx++)
        for (int64_t o = 0; o < O; o++) {
          double mag;
          double v = direct(x, k, H, W, C, O, 0, y, xx, o, &mag);
          int64_t at = xat(H, W, O, 0, y, xx, o);
          mid[at] = epi_ref(epi, v, sc[o], sh[o],
                            epi == EPI_THEN_CONV ? 0.0f : res[at]);
        }
    for (int64_t y = 0; y < H; y++)
      for (int64_t xx = 0; xx < W; xx++)
        for (int64_t o = 0; o < O; o++) {
          int64_t at = xat(H, W, O, 0, y, xx, o);
          float want = mid[at], g = got[at];
          if (epi == EPI_THEN_CONV) { /* the 1x1 convolution after */
            double acc = 0;
            for (int64_t i = 0; i < O; i++)
              acc += (double)mid[xat(H, W, O, 0, y, xx, i)] * res[o * O + i];
            want = (float)acc;
          }
          if (!(g == want || (g != g && want != want)))
            fail_msg("epilogue %d%s call %d: [y %lld, x %lld, o %lld] got "
                     "%.9g want %.9g\n%s",
                     epi, with_inf ? " (an infinity)" : "", rep,
                     (long long)y, (long long)xx, (long long)o, (double)g,
                     (double)want, text);
        }
    free(mid);
    tu_out_free(&out[rep]);
  }
  free(text);
  free(x), free(k), free(sc), free(sh), free(res);
}

static void shapes(int threads) {
  xrt_client *c = tu_client(1, threads, 0);
  assert_non_null(c);
  nchw = 0;
  check(c, 1, 16, 16, 32, 32, EXACT);  /* 64 whole tiles */
  check(c, 2, 9, 13, 48, 64, EXACT);   /* tiles cut by both edges */
  check(c, 1, 17, 18, 64, 48, CLOSE);
  check(c, 1, 16, 16, 32, 32, CLOSE);  /* another kernel, same shapes */
  check(c, 1, 8, 8, 32, 32, EXACT);    /* 16 tiles, the fewest taken */
  check(c, 1, 7, 7, 64, 48, CLOSE);    /* a ResNet's last stage, smaller */
  check(c, 1, 16, 15, 32, 32, SPECIAL_X);
  check(c, 1, 15, 16, 32, 32, SPECIAL_K);
  if (!tu_light()) {
    check(c, 1, 56, 56, 64, 64, CLOSE); /* a ResNet's first stage */
    check(c, 1, 28, 28, 128, 128, EXACT);
  }
  /* NCHW: sixteen tiles of a row at once; rows of 16 tiles, of 14 (a
   * vector's part), of 27 (one and a part), features not multiples of 16 */
  nchw = 1;
  check(c, 1, 16, 32, 32, 32, EXACT);
  check(c, 2, 9, 27, 40, 36, EXACT);
  check(c, 1, 27, 54, 32, 48, CLOSE);
  check(c, 1, 13, 28, 33, 32, CLOSE);
  check(c, 1, 16, 15, 32, 32, SPECIAL_X);
  check(c, 1, 15, 16, 32, 32, SPECIAL_K);
  if (!tu_light()) check(c, 1, 27, 27, 64, 256, CLOSE); /* SqueezeNet */
  check(c, 1, 18, 18, 16, 64, EXACT); /* 16 lhs features (fires 2, 3) */
  check(c, 1, 12, 20, 24, 16, CLOSE); /* 24 lhs, 16 result features */
  for (int inf = 0; inf < 2; inf++) {
    check_epilogue(c, EPI_BIAS_RELU, 13, 27, 32, 48, inf);
    check_epilogue(c, EPI_BN_RES_RELU6, 11, 9, 32, 48, inf);
    check_epilogue(c, EPI_REV_SUB, 10, 12, 48, 32, inf);
    /* a bound of -0 the output transform does not take: the group after */
    check_epilogue(c, EPI_CLAMP_NEGZERO, 9, 10, 32, 32, inf);
    /* the group's result read by another convolution, not returned */
    check_epilogue(c, EPI_THEN_CONV, 12, 13, 32, 48, inf);
  }
  xrt_client_release(c);
}

/* ---- convolutions Winograd does not take ----
 * Near misses of each condition (stride, padding, dilation, kernel size,
 * too few tiles or features, features not multiples of 16 in NHWC, rows
 * too long in NCHW, f64) go the other ways, with the same exact results
 * on small integers.  The reference: a plain windowed sum in double. */
typedef struct near {
  int nchw, f64;
  int64_t H, W, C, O, K, s, plo, phi, d;
} near;

static void check_near(xrt_client *cl, const near *q) {
  nchw = q->nchw;
  int64_t OH = (q->H + q->plo + q->phi - (q->K - 1) * q->d - 1) / q->s + 1;
  int64_t OW = (q->W + q->plo + q->phi - (q->K - 1) * q->d - 1) / q->s + 1;
  int64_t nx = q->H * q->W * q->C, nk = q->K * q->K * q->C * q->O;
  int64_t ny = OH * OW * q->O;
  size_t es = q->f64 ? 8 : 4;
  double *x = malloc(sizeof(double) * (size_t)nx);
  double *k = malloc(sizeof(double) * (size_t)nk);
  char *xb = malloc(es * (size_t)nx), *kb = malloc(es * (size_t)nk);
  assert_true(x && k && xb && kb);
  for (int64_t i = 0; i < nx; i++) x[i] = (double)((int)rnd(5) - 2);
  for (int64_t i = 0; i < nk; i++) k[i] = (double)((int)rnd(3) - 1);
  for (int64_t i = 0; i < nx; i++)
    if (q->f64) ((double *)(void *)xb)[i] = x[i];
    else ((float *)(void *)xb)[i] = (float)x[i];
  for (int64_t i = 0; i < nk; i++)
    if (q->f64) ((double *)(void *)kb)[i] = k[i];
    else ((float *)(void *)kb)[i] = (float)k[i];
  const char *ty = q->f64 ? "f64" : "f32";
  long long H = (long long)q->H, W = (long long)q->W, C = (long long)q->C,
            O = (long long)q->O, K = (long long)q->K, oh = (long long)OH,
            ow = (long long)OW;
  char xs[96], ks[96], ys[96], *t = malloc(2048);
  assert_non_null(t);
  if (nchw) {
    snprintf(xs, sizeof xs, "1x%lldx%lldx%lldx%s", C, H, W, ty);
    snprintf(ks, sizeof ks, "%lldx%lldx%lldx%lldx%s", O, C, K, K, ty);
    snprintf(ys, sizeof ys, "1x%lldx%lldx%lldx%s", O, oh, ow, ty);
  } else {
    snprintf(xs, sizeof xs, "1x%lldx%lldx%lldx%s", H, W, C, ty);
    snprintf(ks, sizeof ks, "%lldx%lldx%lldx%lldx%s", K, K, C, O, ty);
    snprintf(ys, sizeof ys, "1x%lldx%lldx%lldx%s", oh, ow, O, ty);
  }
  snprintf(t, 2048,
           "func.func @main(%%x: tensor<%s>, %%k: tensor<%s>) -> "
           "tensor<%s> {\n"
           "  %%y = stablehlo.convolution(%%x, %%k) dim_numbers = %s, "
           "window = {stride = [%lld, %lld], pad = [[%lld, %lld], [%lld, "
           "%lld]], rhs_dilate = [%lld, %lld]} {batch_group_count = 1 : "
           "i64, feature_group_count = 1 : i64} : (tensor<%s>, tensor<%s>) "
           "-> tensor<%s>\n  return %%y : tensor<%s>\n}\n",
           xs, ks, ys, dims(), (long long)q->s, (long long)q->s,
           (long long)q->plo, (long long)q->phi, (long long)q->plo,
           (long long)q->phi, (long long)q->d, (long long)q->d, xs, ks, ys,
           ys);
  tu_in in[2] = {
      {nchw ? TU_SHAPE(q->f64 ? XRT_F64 : XRT_F32, 1, q->C, q->H, q->W)
            : TU_SHAPE(q->f64 ? XRT_F64 : XRT_F32, 1, q->H, q->W, q->C),
       xb},
      {nchw ? TU_SHAPE(q->f64 ? XRT_F64 : XRT_F32, q->O, q->C, q->K, q->K)
            : TU_SHAPE(q->f64 ? XRT_F64 : XRT_F32, q->K, q->K, q->C, q->O),
       kb}};
  tu_out out;
  if (tu_run(cl, t, 2, in, &out)) fail_msg("%s\n%s", tu_msg, t);
  assert_int_equal(out.bytes[0], es * (size_t)ny);
  for (int64_t oy = 0; oy < OH; oy++)
    for (int64_t ox = 0; ox < OW; ox++)
      for (int64_t o = 0; o < q->O; o++) {
        double want = 0;
        for (int64_t ky = 0; ky < q->K; ky++)
          for (int64_t kx = 0; kx < q->K; kx++) {
            int64_t iy = oy * q->s + ky * q->d - q->plo;
            int64_t ix = ox * q->s + kx * q->d - q->plo;
            if (iy < 0 || iy >= q->H || ix < 0 || ix >= q->W) continue;
            for (int64_t i = 0; i < q->C; i++) {
              int64_t ka = nchw ? ((o * q->C + i) * q->K + ky) * q->K + kx
                                : ((ky * q->K + kx) * q->C + i) * q->O + o;
              want += x[xat(q->H, q->W, q->C, 0, iy, ix, i)] * k[ka];
            }
          }
        int64_t at = nchw ? (o * OH + oy) * OW + ox : (oy * OW + ox) * q->O + o;
        double g = q->f64 ? ((const double *)out.data[0])[at]
                          : (double)((const float *)out.data[0])[at];
        if (g != want)
          fail_msg("near miss [%lld,%lld,%lld] got %g want %g\n%s",
                   (long long)oy, (long long)ox, (long long)o, g, want, t);
      }
  tu_out_free(&out);
  free(t), free(x), free(k), free(xb), free(kb);
}

static void test_near_misses(void **state) {
  (void)state;
  static const near q[] = {
      /* nchw f64  H   W    C   O  K  s plo phi d */
      {0, 0, 16, 16, 32, 32, 3, 2, 1, 1, 1},   /* stride 2 */
      {0, 0, 16, 16, 32, 32, 3, 1, 0, 0, 1},   /* no padding */
      {0, 0, 16, 16, 32, 32, 3, 1, 1, 0, 1},   /* padding on one side */
      {0, 0, 16, 16, 32, 32, 3, 1, 2, 2, 2},   /* kernel dilation */
      {0, 0, 16, 16, 32, 32, 5, 1, 2, 2, 1},   /* a 5x5 kernel */
      {0, 0, 6, 6, 32, 32, 3, 1, 1, 1, 1},     /* 9 tiles */
      {0, 0, 16, 16, 8, 32, 3, 1, 1, 1, 1},    /* 8 lhs features */
      {0, 0, 16, 16, 32, 8, 3, 1, 1, 1, 1},    /* 8 result features */
      {1, 0, 16, 16, 15, 32, 3, 1, 1, 1, 1},   /* NCHW, 15 lhs features */
      {0, 0, 16, 16, 40, 48, 3, 1, 1, 1, 1},   /* NHWC, 40 features */
      {0, 1, 16, 16, 32, 32, 3, 1, 1, 1, 1},   /* f64 */
      {1, 0, 2, 520, 32, 32, 3, 1, 1, 1, 1},   /* NCHW rows of 520 */
      {1, 0, 16, 16, 32, 32, 3, 2, 1, 1, 1},   /* NCHW, stride 2 */
  };
  xrt_client *c = tu_client(1, 1, 0);
  assert_non_null(c);
  for (size_t i = 0; i < TU_COUNT(q); i++) check_near(c, &q[i]);
  xrt_client_release(c);
}

/* Without the client's cache (XRT_SIM_GEMM_CACHE_MB=0, read when a
 * client is made): the transformed kernel is made again at every call. */
static void test_no_cache(void **state) {
  (void)state;
  setenv("XRT_SIM_GEMM_CACHE_MB", "0", 1);
  xrt_client *c = tu_client(1, 1, 0);
  unsetenv("XRT_SIM_GEMM_CACHE_MB");
  assert_non_null(c);
  nchw = 0;
  check(c, 1, 16, 16, 32, 32, EXACT);
  nchw = 1;
  check(c, 1, 16, 32, 32, 32, EXACT);
  check(c, 1, 15, 16, 32, 32, SPECIAL_K);
  xrt_client_release(c);
}

static void test_one_thread(void **state) {
  (void)state;
  shapes(1);
}

static void test_two_threads(void **state) {
  (void)state;
  shapes(2);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_one_thread),
      cmocka_unit_test(test_two_threads),
      cmocka_unit_test(test_no_cache),
      cmocka_unit_test(test_near_misses),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
