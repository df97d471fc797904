/*
 * test_kernel_conv.c - the simulator's plain convolution loops
 * (src/sim/conv.c) and the dot kernels they share with the other linear
 * algebra ops (src/sim/linalg.c), for every element type: f32, f64, f16,
 * bf16, every integer width (wrapping to the width), c64, c128, i1 (or of
 * ands) and a small float result (f8E4M3FN, computed in f32 and rounded
 * once); mixed operand and result types; no spatial dimensions; and
 * dynamic_conv with its padding in several integer types, and its padding
 * checked at run time (a window count that disagrees with the result,
 * padding beyond 2^40 either way, padding that leaves no window); an
 * empty input, an empty window and an empty batch.
 *
 * The shapes are small, so none of them goes to the packed GEMM.  The
 * reference is a direct 1-D convolution loop written here (padding, lhs
 * and rhs dilation, stride, window reversal), in int64 / double on small
 * integer values (exact in every type).
 */
#include "test_kernels.h"

#define C(state) ((xrt_client *)*(state))

/* Every element type, f8E4M3FN last. */
static const xrt_dtype dts[] = {
    XRT_F32, XRT_F64, XRT_F16, XRT_BF16, XRT_S8,  XRT_U8,   XRT_S16,
    XRT_U16, XRT_S32, XRT_U32, XRT_S64,  XRT_U64, XRT_S4,   XRT_U4,
    XRT_S2,  XRT_U2,  XRT_C64, XRT_C128, XRT_PRED, XRT_F8E4M3FN,
};

/* A small value of type d, by a fixed recipe. */
static double val(const tu_dtinfo *d, int64_t i, int salt) {
  int64_t v = (i * 5 + salt * 3 + (i * i) % 7) % 5 - 2; /* [-2, 2] */
  if (d->kind == TU_K_PRED) return (double)((i + salt) % 3 == 0);
  if (d->kind == TU_K_INT && d->bits == 2)
    return d->is_signed ? (double)(v % 2) : (double)((v < 0 ? -v : v) % 4);
  if (d->kind == TU_K_INT && !d->is_signed) return (double)(v < 0 ? -v : v);
  return (double)v;
}

/* A 1-D convolution [b, 0, f] x [0, i, o] -> [b, 0, f]. */
typedef struct {
  int N, W, Cin, O, K, s, lo, hi, ld, rd, rev;
} conv1;

static int out_len(const conv1 *c) {
  int padded = (c->W - 1) * c->ld + 1 + c->lo + c->hi, ek = (c->K - 1) * c->rd + 1;
  return padded < ek ? 0 : (padded - ek) / c->s + 1;
}

/* Runs c with operands of type a, b and result type o; dyn: the padding
 * as a tensor<1x2x(pt)> operand of dynamic_conv. */
static void run_conv(xrt_client *cl, const conv1 *c, const tu_dtinfo *a,
                     const tu_dtinfo *o, const tu_dtinfo *pt) {
  int OW = out_len(c);
  int64_t nx = (int64_t)c->N * c->W * c->Cin, nw = (int64_t)c->K * c->Cin * c->O;
  int64_t ny = (int64_t)c->N * OW * c->O;
  double *xr = calloc((size_t)nx, 8), *xi = calloc((size_t)nx, 8);
  double *wr = calloc((size_t)nw, 8), *wi = calloc((size_t)nw, 8);
  char *xb = calloc((size_t)nx, a->size), *wb = calloc((size_t)nw, a->size);
  char *want = calloc((size_t)ny + 1, o->size);
  assert_true(xr && xi && wr && wi && xb && wb && want);
  for (int64_t i = 0; i < nx; i++) {
    xr[i] = val(a, i, 1), xi[i] = a->kind == TU_K_COMPLEX ? val(a, i, 4) : 0;
    tu_put(a, xb, i, xr[i], xi[i]);
  }
  for (int64_t i = 0; i < nw; i++) {
    wr[i] = val(a, i, 2), wi[i] = a->kind == TU_K_COMPLEX ? val(a, i, 6) : 0;
    tu_put(a, wb, i, wr[i], wi[i]);
  }
  for (int n = 0; n < c->N; n++)
    for (int q = 0; q < OW; q++)
      for (int f = 0; f < c->O; f++) {
        double sr = 0, si = 0;
        uint64_t su = 0;
        int any = 0;
        for (int k = 0; k < c->K; k++) {
          int kk = c->rev ? c->K - 1 - k : k;
          int p = q * c->s + kk * c->rd - c->lo; /* in the dilated input */
          if (p < 0 || p % c->ld) continue;
          p /= c->ld;
          if (p >= c->W) continue;
          for (int i = 0; i < c->Cin; i++) {
            int64_t xo = ((int64_t)n * c->W + p) * c->Cin + i;
            int64_t wo = ((int64_t)k * c->Cin + i) * c->O + f;
            sr += xr[xo] * wr[wo] - xi[xo] * wi[wo];
            si += xr[xo] * wi[wo] + xi[xo] * wr[wo];
            su += (uint64_t)(int64_t)xr[xo] * (uint64_t)(int64_t)wr[wo];
            any |= xr[xo] != 0 && wr[wo] != 0;
          }
        }
        int64_t oi = ((int64_t)n * OW + q) * c->O + f;
        if (o->kind == TU_K_PRED) tu_put(o, want, oi, any, 0);
        else if (o->kind == TU_K_INT)
          tu_put(o, want, oi, (double)(int64_t)tu_wrap(o, su), 0);
        else tu_put(o, want, oi, sr, si);
        if (o->kind == TU_K_INT && o->bits == 64) memcpy(want + oi * 8, &su, 8);
      }
  char xt[96], wt[96], yt[96], prog[2048];
  snprintf(xt, sizeof xt, "tensor<%dx%dx%dx%s>", c->N, c->W, c->Cin, a->mlir);
  snprintf(wt, sizeof wt, "tensor<%dx%dx%dx%s>", c->K, c->Cin, c->O, a->mlir);
  snprintf(yt, sizeof yt, "tensor<%dx%dx%dx%s>", c->N, OW, c->O, o->mlir);
  char pads[96] = "", ptype[64] = "";
  if (pt) snprintf(ptype, sizeof ptype, "tensor<1x2x%s>", pt->mlir);
  else snprintf(pads, sizeof pads,
                "    padding = dense<[[%d, %d]]> : tensor<1x2xi64>,\n", c->lo, c->hi);
  snprintf(prog, sizeof prog,
           "func.func @main(%%x: %s, %%w: %s%s%s) -> %s {\n"
           "  %%0 = \"stablehlo.%s\"(%%x, %%w%s) {\n"
           "    window_strides = array<i64: %d>,\n%s"
           "    lhs_dilation = array<i64: %d>, rhs_dilation = array<i64: %d>,\n"
           "    window_reversal = array<i1: %s>,\n"
           "    dimension_numbers = #stablehlo.conv<[b, 0, f]x[0, i, o]->[b, 0, f]>,\n"
           "    feature_group_count = 1 : i64, batch_group_count = 1 : i64\n"
           "  } : (%s, %s%s%s) -> %s\n"
           "  func.return %%0 : %s\n}\n",
           xt, wt, pt ? ", %p: " : "", ptype, yt,
           pt ? "dynamic_conv" : "convolution", pt ? ", %p" : "", c->s, pads,
           c->ld, c->rd, c->rev ? "true" : "false", xt, wt, pt ? ", " : "",
           ptype, yt, yt);
  char pbuf[16];
  if (pt) tu_put(pt, pbuf, 0, c->lo, 0), tu_put(pt, pbuf, 1, c->hi, 0);
  tu_in in[3] = {{TU_SHAPE(a->dt, c->N, c->W, c->Cin), xb},
                 {TU_SHAPE(a->dt, c->K, c->Cin, c->O), wb},
                 {pt ? TU_SHAPE(pt->dt, 1, 2) : TU_SCALAR(XRT_S32), pbuf}};
  tu_out out;
  xrt_status st = tu_run(cl, prog, pt ? 3 : 2, in, &out);
  if (st != XRT_OK)
    fail_msg("%s -> %s: %s: %s\n%s", a->mlir, o->mlir, xrt_strerror(st),
             tu_msg, prog);
  assert_int_equal(out.bytes[0], (size_t)ny * o->size);
  for (int64_t i = 0; i < ny; i++)
    if (memcmp((char *)out.data[0] + i * o->size, want + i * o->size,
               o->size) != 0)
      fail_msg("%s -> %s: element %lld differs (byte 0x%x want 0x%x)\n%s",
               a->mlir, o->mlir, (long long)i,
               ((unsigned char *)out.data[0])[i * o->size],
               (unsigned char)want[i * o->size], prog);
  tu_out_free(&out);
  free(xr), free(xi), free(wr), free(wi), free(xb), free(wb), free(want);
}

static const conv1 plain = {2, 5, 2, 3, 2, 1, 0, 0, 1, 1, 0};
static const conv1 windows = {2, 7, 2, 3, 3, 2, 1, 2, 2, 1, 1};

static void test_conv_every_type(void **state) {
  for (size_t i = 0; i < TU_COUNT(dts); i++) {
    const tu_dtinfo *d = tu_dt(dts[i]);
    if (d->kind == TU_K_F8) continue; /* f8 operands: below */
    run_conv(C(state), &plain, d, d, NULL);
    run_conv(C(state), &windows, d, d, NULL);
  }
}

/* Operands converted to the result type first; a small-float result is
 * computed in f32 and rounded once. */
static void test_conv_mixed(void **state) {
  run_conv(C(state), &windows, tu_dt(XRT_S8), tu_dt(XRT_S32), NULL);
  run_conv(C(state), &plain, tu_dt(XRT_F16), tu_dt(XRT_F32), NULL);
  run_conv(C(state), &plain, tu_dt(XRT_S4), tu_dt(XRT_S16), NULL);
  run_conv(C(state), &windows, tu_dt(XRT_F8E4M3FN), tu_dt(XRT_F8E4M3FN), NULL);
  run_conv(C(state), &plain, tu_dt(XRT_F32), tu_dt(XRT_F8E4M3FN), NULL);
}

/* dynamic_conv: the padding is an operand, of any integer type. */
static void test_dynamic_conv(void **state) {
  const xrt_dtype pts[] = {XRT_S32, XRT_S64, XRT_S8, XRT_U16, XRT_U8};
  for (size_t i = 0; i < TU_COUNT(pts); i++) {
    run_conv(C(state), &windows, tu_dt(XRT_F32), tu_dt(XRT_F32), tu_dt(pts[i]));
    run_conv(C(state), &plain, tu_dt(XRT_S32), tu_dt(XRT_S32), tu_dt(pts[i]));
  }
}

/* No spatial dimensions: [b, f] x [i, o] -> [b, f] is a matrix product. */
static void test_conv_no_spatial(void **state) {
  const float x[6] = {1, 2, 3, 4, 5, 6}, w[6] = {1, 0, -1, 2, 1, 1};
  tu_in in[2] = {{TU_SHAPE(XRT_F32, 2, 3), x}, {TU_SHAPE(XRT_F32, 3, 2), w}};
  tu_out o;
  TU_RUN_OK(C(state),
            "func.func @main(%x: tensor<2x3xf32>, %w: tensor<3x2xf32>) -> tensor<2x2xf32> {\n"
            "  %0 = \"stablehlo.convolution\"(%x, %w) {\n"
            "    dimension_numbers = #stablehlo.conv<[b, f]x[i, o]->[b, f]>,\n"
            "    feature_group_count = 1 : i64, batch_group_count = 1 : i64\n"
            "  } : (tensor<2x3xf32>, tensor<3x2xf32>) -> tensor<2x2xf32>\n"
            "  func.return %0 : tensor<2x2xf32>\n}\n",
            2, in, &o);
  /* [1 2 3; 4 5 6] x [1 0; -1 2; 1 1] */
  TU_ASSERT_OUT(&o, 0, float, 2, 7, 5, 16);
  tu_out_free(&o);
}

#define DYN_PROG                                                            \
  "func.func @main(%x: tensor<1x4x1xf32>, %w: tensor<2x1x1xf32>, %p: tensor<1x2xi64>) -> tensor<1x5x1xf32> {\n" \
  "  %0 = \"stablehlo.dynamic_conv\"(%x, %w, %p) {\n"                      \
  "    dimension_numbers = #stablehlo.conv<[b, 0, f]x[0, i, o]->[b, 0, f]>,\n" \
  "    feature_group_count = 1 : i64, batch_group_count = 1 : i64\n"       \
  "  } : (tensor<1x4x1xf32>, tensor<2x1x1xf32>, tensor<1x2xi64>) -> tensor<1x5x1xf32>\n" \
  "  func.return %0 : tensor<1x5x1xf32>\n}\n"

/* dynamic_conv's padding is checked when it runs. */
static void test_dynamic_conv_padding_checked(void **state) {
  const float x[4] = {1, 2, 3, 4}, w[2] = {1, 10};
  const int64_t good[2] = {1, 1}, few[2] = {0, 0};
  tu_in in[3] = {{TU_SHAPE(XRT_F32, 1, 4, 1), x},
                 {TU_SHAPE(XRT_F32, 2, 1, 1), w},
                 {TU_SHAPE(XRT_S64, 1, 2), good}};
  tu_out o;
  TU_RUN_OK(C(state), DYN_PROG, 3, in, &o);
  /* [0 1 2 3 4 0] windows of (1, 10) */
  TU_ASSERT_OUT(&o, 0, float, 10, 21, 32, 43, 4);
  tu_out_free(&o);
  in[2].data = few;
  assert_int_equal(tu_run(C(state), DYN_PROG, 3, in, &o), XRT_INVALID_ARGUMENT);
  TU_ASSERT_CONTAINS(tu_msg, "padding [0, 0] of spatial dimension 0 gives 3 "
                             "windows, but the result has 5");
  const int64_t bad[4][2] = {{1ll << 41, 0}, {-(1ll << 41), 0},
                             {0, 1ll << 41}, {0, -(1ll << 41)}};
  for (int k = 0; k < 4; k++) {
    in[2].data = bad[k];
    assert_int_equal(tu_run(C(state), DYN_PROG, 3, in, &o), XRT_OUT_OF_RANGE);
    TU_ASSERT_CONTAINS(tu_msg, "padding of spatial dimension 0 is out of range");
  }
  /* padding that leaves nothing: no window at all */
  const int64_t none[2] = {-4, 0};
  in[2].data = none;
  assert_int_equal(tu_run(C(state), DYN_PROG, 3, in, &o), XRT_INVALID_ARGUMENT);
  TU_ASSERT_CONTAINS(tu_msg, "padding [-4, 0] of spatial dimension 0 gives 0 "
                             "windows, but the result has 5");
}

/* Runs an f32 convolution [b, 0, f] x [0, i, o] -> [b, 0, f] of x and w
 * of dims xd and wd (the result's yd), with the attribute line pad ("" for
 * none); fails the test unless it runs. */
static void conv_f32(xrt_client *c, const int64_t xd[3], const int64_t wd[3],
                     const int64_t yd[3], const char *pad, const float *x,
                     const float *w, tu_out *o) {
  char t[3][48], prog[1024];
  const int64_t *d[3] = {xd, wd, yd};
  for (int k = 0; k < 3; k++)
    snprintf(t[k], sizeof t[k], "tensor<%lldx%lldx%lldxf32>",
             (long long)d[k][0], (long long)d[k][1], (long long)d[k][2]);
  snprintf(prog, sizeof prog,
           "func.func @main(%%x: %s, %%w: %s) -> %s {\n"
           "  %%0 = \"stablehlo.convolution\"(%%x, %%w) {\n%s"
           "    dimension_numbers = #stablehlo.conv<[b, 0, f]x[0, i, o]->[b, 0, f]>,\n"
           "    feature_group_count = 1 : i64, batch_group_count = 1 : i64\n"
           "  } : (%s, %s) -> %s\n"
           "  func.return %%0 : %s\n}\n",
           t[0], t[1], t[2], pad, t[0], t[1], t[2], t[2]);
  tu_in in[2] = {{TU_SHAPE(XRT_F32, xd[0], xd[1], xd[2]), x},
                 {TU_SHAPE(XRT_F32, wd[0], wd[1], wd[2]), w}};
  TU_RUN_OK(c, prog, 2, in, o);
}

/* An empty input padded to one window, and an empty window: sums of
 * nothing. */
static void test_conv_empty(void **state) {
  const float x[3] = {1, 2, 3}, w[2] = {1, 10};
  tu_out o;
  conv_f32(C(state), (int64_t[]){1, 0, 1}, (int64_t[]){2, 1, 1},
           (int64_t[]){1, 1, 1},
           "    padding = dense<[[1, 1]]> : tensor<1x2xi64>,\n", x, w, &o);
  TU_ASSERT_OUT(&o, 0, float, 0);
  tu_out_free(&o);
  conv_f32(C(state), (int64_t[]){1, 3, 1}, (int64_t[]){0, 1, 1},
           (int64_t[]){1, 4, 1}, "", x, w, &o);
  TU_ASSERT_OUT(&o, 0, float, 0, 0, 0, 0);
  tu_out_free(&o);
  /* an empty batch: an empty result */
  conv_f32(C(state), (int64_t[]){0, 4, 1}, (int64_t[]){2, 1, 1},
           (int64_t[]){0, 3, 1}, "", x, w, &o);
  tu_assert_shape(&o, 0, TU_SHAPE(XRT_F32, 0, 3, 1));
  assert_int_equal(o.bytes[0], 0);
  tu_out_free(&o);
}

TU_MAIN(tu_setup_client, tu_teardown_client,
        cmocka_unit_test(test_conv_every_type),
        cmocka_unit_test(test_conv_mixed), cmocka_unit_test(test_dynamic_conv),
        cmocka_unit_test(test_conv_no_spatial),
        cmocka_unit_test(test_dynamic_conv_padding_checked),
        cmocka_unit_test(test_conv_empty))
