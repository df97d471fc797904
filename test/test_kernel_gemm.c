/*
 * test_kernel_gemm.c - the simulator's dot_general kernels (src/sim/gemm.c)
 * for every element type, and the packed f32/f64 GEMM on every CPU path.
 *
 * - The plain dot loops exist per type (f32, f64, f16, bf16, the unsigned
 *   kernels every integer width shares, c64, c128), each with a loop for
 *   a unit-stride rhs (contracting its middle dimension) and one for a
 *   transposed rhs, and an unrolled-by-4 column loop with a remainder: a
 *   B x M x K by B x K x N (or B x N x K) product with N = 6 takes all.
 *   Integer sums that overflow wrap, sub-byte types wrap to their width.
 * - Mixed types (i8 x i8 -> i32, f16 x f16 -> f32) convert the operands
 *   first.
 * - The packed GEMM under XRT_SIM_GEMM = c, avx2, avx512 and off, with the
 *   compile cache off (the path is chosen at compile time, so a cached
 *   executable of another path would otherwise be reused): dots in several
 *   layouts and NHWC convolutions (f32 with contiguous features uses the
 *   strip-packed AVX-512 kernel) with padding, lhs dilation and feature /
 *   batch groups.
 *
 * Inputs are small integers, so every product and sum is exact in every
 * type and summation order, and the expected values (computed here with
 * int64 / double loops) compare exactly.
 */
#define _POSIX_C_SOURCE 200809L /* setenv */
#include "test_kernels.h"

#define C(state) ((xrt_client *)*(state))

/* Every element type but i1 and the small floats. */
static const xrt_dtype dts[] = {
    XRT_F32, XRT_F64, XRT_F16, XRT_BF16, XRT_S8, XRT_U8,  XRT_S16, XRT_U16,
    XRT_S32, XRT_U32, XRT_S64, XRT_U64,  XRT_S4, XRT_U4,  XRT_S2,  XRT_U2,
    XRT_C64, XRT_C128,
};

static int is_cplx(xrt_dtype t) { return t == XRT_C64 || t == XRT_C128; }

/* Small integer test values in [-4, 4] (in [-1, 1] for 2-bit types and
 * [0, 3] for unsigned 2-bit), by a fixed recipe. */
static double val(const tu_dtinfo *d, int64_t i, int salt) {
  int64_t v = (i * 7 + salt * 3 + (i * i) % 5) % 9 - 4;
  if (d->bits == 2) v = d->is_signed ? v % 2 : (v < 0 ? -v : v) % 4;
  else if (!d->is_signed) v = v < 0 ? -v : v;
  return (double)v;
}

/* Runs a B x M x K by (B x K x N, or B x N x K when trans) dot_general of
 * type d (result type o) and checks it against the reference. */
static void run_dot(xrt_client *c, const tu_dtinfo *d, const tu_dtinfo *o,
                    int B, int M, int K, int N, int trans) {
  char prog[2048], lt[64], rt[64], ot[64];
  snprintf(lt, sizeof lt, "tensor<%dx%dx%dx%s>", B, M, K, d->mlir);
  if (trans) snprintf(rt, sizeof rt, "tensor<%dx%dx%dx%s>", B, N, K, d->mlir);
  else snprintf(rt, sizeof rt, "tensor<%dx%dx%dx%s>", B, K, N, d->mlir);
  snprintf(ot, sizeof ot, "tensor<%dx%dx%dx%s>", B, M, N, o->mlir);
  snprintf(prog, sizeof prog,
           "func.func @main(%%a: %s, %%b: %s) -> %s {\n"
           "  %%0 = stablehlo.dot_general %%a, %%b, batching_dims = [0] x [0], "
           "contracting_dims = [2] x [%d] : (%s, %s) -> %s\n"
           "  func.return %%0 : %s\n}\n",
           lt, rt, ot, trans ? 2 : 1, lt, rt, ot, ot);
  int64_t na = (int64_t)B * M * K, nb = (int64_t)B * K * N,
          no = (int64_t)B * M * N;
  char *a = calloc((size_t)na + 1, d->size);
  char *b = calloc((size_t)nb + 1, d->size);
  char *want = calloc((size_t)no + 1, o->size);
  double *ar = calloc((size_t)na + 1, 8), *ai = calloc((size_t)na + 1, 8);
  double *br = calloc((size_t)nb + 1, 8), *bi = calloc((size_t)nb + 1, 8);
  assert_true(a && b && want && ar && ai && br && bi);
  for (int64_t i = 0; i < na; i++) {
    ar[i] = val(d, i, 1), ai[i] = is_cplx(d->dt) ? val(d, i, 5) : 0;
    tu_put(d, a, i, ar[i], ai[i]);
  }
  /* b is indexed canonically [b][k][n]; stored transposed when trans */
  for (int bb = 0; bb < B; bb++)
    for (int k = 0; k < K; k++)
      for (int n = 0; n < N; n++) {
        int64_t ci = ((int64_t)bb * K + k) * N + n;
        int64_t si = trans ? ((int64_t)bb * N + n) * K + k : ci;
        br[ci] = val(d, ci, 2), bi[ci] = is_cplx(d->dt) ? val(d, ci, 7) : 0;
        tu_put(d, b, si, br[ci], bi[ci]);
      }
  for (int bb = 0; bb < B; bb++)
    for (int m = 0; m < M; m++)
      for (int n = 0; n < N; n++) {
        double sr = 0, si = 0;
        uint64_t su = 0;
        for (int k = 0; k < K; k++) {
          int64_t x = ((int64_t)bb * M + m) * K + k;
          int64_t y = ((int64_t)bb * K + k) * N + n;
          sr += ar[x] * br[y] - ai[x] * bi[y];
          si += ar[x] * bi[y] + ai[x] * br[y];
          su += (uint64_t)(int64_t)ar[x] * (uint64_t)(int64_t)br[y];
        }
        int64_t oi = ((int64_t)bb * M + m) * N + n;
        int is_int = o->kind == TU_K_INT;
        tu_put(o, want, oi, is_int ? (double)(int64_t)tu_wrap(o, su) : sr, si);
        if (is_int && o->bits == 64) { /* beyond double's integers: the bits */
          int64_t w = (int64_t)su;
          memcpy(want + oi * 8, &w, 8);
        }
      }
  tu_in in[2] = {{TU_SHAPE(d->dt, B, M, K), a},
                 {trans ? TU_SHAPE(d->dt, B, N, K) : TU_SHAPE(d->dt, B, K, N),
                  b}};
  tu_out out;
  xrt_status st = tu_run(c, prog, 2, in, &out);
  if (st != XRT_OK)
    fail_msg("%s -> %s: %s: %s\n%s", d->mlir, o->mlir, xrt_strerror(st),
             tu_msg, prog);
  tu_assert_shape(&out, 0, TU_SHAPE(o->dt, B, M, N));
  assert_int_equal(out.bytes[0], (size_t)no * o->size);
  if (memcmp(out.data[0], want, (size_t)no * o->size) != 0) {
    for (int64_t i = 0; i < no * (int64_t)o->size; i++)
      if (((char *)out.data[0])[i] != want[i])
        fail_msg("%s -> %s trans %d M %d K %d N %d: byte %lld differs", d->mlir,
                 o->mlir, trans, M, K, N, (long long)i);
  }
  tu_out_free(&out);
  free(a), free(b), free(want), free(ar), free(ai), free(br), free(bi);
}

static void test_dot_every_type(void **state) {
  for (size_t i = 0; i < TU_COUNT(dts); i++)
    for (int trans = 0; trans < 2; trans++) {
      run_dot(C(state), tu_dt(dts[i]), tu_dt(dts[i]), 2, 3, 5, 6, trans);
      run_dot(C(state), tu_dt(dts[i]), tu_dt(dts[i]), 1, 2, 3, 3, trans);
    }
}

/* Large enough sums to wrap each integer width. */
static void test_dot_int_wrap(void **state) {
  const xrt_dtype ts[] = {XRT_S8, XRT_U8, XRT_S16, XRT_U16, XRT_S4, XRT_U4};
  for (size_t i = 0; i < TU_COUNT(ts); i++)
    run_dot(C(state), tu_dt(ts[i]), tu_dt(ts[i]), 1, 4, 40, 5, 0);
}

/* Operands converted to the result type before the product. */
static void test_dot_mixed_types(void **state) {
  run_dot(C(state), tu_dt(XRT_S8), tu_dt(XRT_S32), 2, 3, 5, 6, 0);
  run_dot(C(state), tu_dt(XRT_U8), tu_dt(XRT_U32), 1, 3, 5, 6, 1);
  run_dot(C(state), tu_dt(XRT_F16), tu_dt(XRT_F32), 2, 3, 5, 6, 1);
  run_dot(C(state), tu_dt(XRT_BF16), tu_dt(XRT_F32), 2, 3, 5, 6, 0);
  run_dot(C(state), tu_dt(XRT_S16), tu_dt(XRT_S64), 1, 4, 7, 5, 0);
}

/* ---- the packed GEMM on each path ---- */

static const char *const paths[] = {"c", "avx2", "avx512", "off"};

/* A client whose compiles skip the compile cache, threads per device
 * (0: the default). */
static xrt_client *nocache_client(int threads) {
  xrt_client_options o;
  xrt_client_options_init(&o);
  o.compile_cache_bytes = 0;
  if (threads) o.threads_per_device = threads;
  xrt_client *c = NULL;
  if (xrt_client_create(&o, &c) != XRT_OK) return NULL;
  return c;
}

static int setup_nocache(void **state) {
  *state = nocache_client(0);
  return *state ? 0 : -1;
}

static void test_gemm_dot_paths(void **state) {
  const tu_dtinfo *f32 = tu_dt(XRT_F32), *f64 = tu_dt(XRT_F64);
  for (size_t p = 0; p < TU_COUNT(paths); p++) {
    setenv("XRT_SIM_GEMM", paths[p], 1);
    for (int trans = 0; trans < 2; trans++) {
      run_dot(C(state), f32, f32, 2, 37, 70, 45, trans);
      run_dot(C(state), f64, f64, 2, 37, 70, 45, trans);
      run_dot(C(state), f32, f32, 1, 13, 3, 200, trans);
      run_dot(C(state), f64, f64, 1, 29, 300, 7, trans);
    }
    unsetenv("XRT_SIM_GEMM");
  }
}

/* Shapes that reach the other loop nests: more columns than one column
 * block on one lane (the general nest), more rows than one row block, an
 * empty contraction (zeros), full tiles over several K blocks, and rows
 * split between two lanes. */
static void test_gemm_shapes(void **state) {
  const tu_dtinfo *f32 = tu_dt(XRT_F32), *f64 = tu_dt(XRT_F64);
  xrt_client *one = nocache_client(1), *two = nocache_client(2);
  for (size_t p = 0; p < TU_COUNT(paths); p++) {
    setenv("XRT_SIM_GEMM", paths[p], 1);
    for (int trans = 0; trans < 2; trans++) {
      run_dot(one, f32, f32, 1, 20, 30, 700, trans);
      run_dot(one, f64, f64, 1, 20, 30, 700, trans);
    }
    run_dot(one, f32, f32, 1, 2100, 2, 4, 0);
    run_dot(one, f64, f64, 1, 1100, 2, 4, 1);
    run_dot(one, f32, f32, 2, 8, 0, 8, 0);
    run_dot(one, f64, f64, 2, 8, 0, 8, 1);
    run_dot(one, f32, f32, 1, 9, 600, 5, 0);
    /* full tiles over several K blocks: the kernels add to C */
    run_dot(one, f32, f32, 1, 24, 1000, 64, 0);
    run_dot(one, f64, f64, 1, 24, 600, 32, 1);
    run_dot(two, f32, f32, 1, 90, 20, 10, 0);
    run_dot(two, f64, f64, 1, 90, 20, 10, 1);
    run_dot(two, f32, f32, 1, 30, 40, 1400, 0);
    run_dot(C(state), f32, f32, 1, 40, 20, 40, 0);
    unsetenv("XRT_SIM_GEMM");
  }
  xrt_client_release(one);
  xrt_client_release(two);
}

/* An NHWC x HWIO -> NHWC convolution. */
typedef struct {
  int N, H, W, Cin, O, kh, kw, s, lo, hi, ld, rd, fg, bg;
} conv;

static int conv_out(int in, int k, int s, int lo, int hi, int ld, int rd) {
  int padded = (in - 1) * ld + 1 + lo + hi, ek = (k - 1) * rd + 1;
  return padded < ek ? 0 : (padded - ek) / s + 1;
}

/* lhs element (n, y, x, f) of the padded, dilated input, or 0. */
static double conv_in(const conv *c, const double *x, int n, int py, int px,
                      int f) {
  py -= c->lo, px -= c->lo;
  if (py < 0 || px < 0 || py % c->ld || px % c->ld) return 0;
  py /= c->ld, px /= c->ld;
  if (py >= c->H || px >= c->W) return 0;
  return x[(((int64_t)n * c->H + py) * c->W + px) * c->Cin + f];
}

static void run_conv(xrt_client *cl, const conv *c, xrt_dtype t) {
  const tu_dtinfo *d = tu_dt(t);
  int I = c->Cin / c->fg, NB = c->N / c->bg;
  int OH = conv_out(c->H, c->kh, c->s, c->lo, c->hi, c->ld, c->rd);
  int OW = conv_out(c->W, c->kw, c->s, c->lo, c->hi, c->ld, c->rd);
  int64_t nx = (int64_t)c->N * c->H * c->W * c->Cin;
  int64_t nw = (int64_t)c->kh * c->kw * I * c->O;
  int64_t ny = (int64_t)NB * OH * OW * c->O;
  double *x = calloc((size_t)nx, 8), *w = calloc((size_t)nw, 8);
  char *xb = calloc((size_t)nx, d->size), *wb = calloc((size_t)nw, d->size);
  char *want = calloc((size_t)ny + 1, d->size);
  assert_true(x && w && xb && wb && want);
  for (int64_t i = 0; i < nx; i++) tu_put(d, xb, i, x[i] = val(d, i, 3), 0);
  for (int64_t i = 0; i < nw; i++) tu_put(d, wb, i, w[i] = val(d, i, 4), 0);
  int OG = c->O / c->fg, OB = c->O / c->bg;
  for (int n = 0; n < NB; n++)
    for (int oy = 0; oy < OH; oy++)
      for (int ox = 0; ox < OW; ox++)
        for (int o = 0; o < c->O; o++) {
          int nb = (o / OB) * NB + n, f0 = (o / OG) * I;
          double s = 0;
          for (int ky = 0; ky < c->kh; ky++)
            for (int kx = 0; kx < c->kw; kx++)
              for (int i = 0; i < I; i++)
                s += conv_in(c, x, nb, oy * c->s + ky * c->rd,
                             ox * c->s + kx * c->rd, f0 + i) *
                     w[(((int64_t)ky * c->kw + kx) * I + i) * c->O + o];
          tu_put(d, want, (((int64_t)n * OH + oy) * OW + ox) * c->O + o, s, 0);
        }
  char prog[2048];
  const char *ts = d->mlir;
  char xt[64], wt[64], yt[64];
  snprintf(xt, sizeof xt, "tensor<%dx%dx%dx%dx%s>", c->N, c->H, c->W, c->Cin, ts);
  snprintf(wt, sizeof wt, "tensor<%dx%dx%dx%dx%s>", c->kh, c->kw, I, c->O, ts);
  snprintf(yt, sizeof yt, "tensor<%dx%dx%dx%dx%s>", NB, OH, OW, c->O, ts);
  snprintf(prog, sizeof prog,
           "func.func @main(%%x: %s, %%w: %s) -> %s {\n"
           "  %%0 = \"stablehlo.convolution\"(%%x, %%w) {\n"
           "    window_strides = array<i64: %d, %d>,\n"
           "    padding = dense<[[%d, %d], [%d, %d]]> : tensor<2x2xi64>,\n"
           "    lhs_dilation = array<i64: %d, %d>, rhs_dilation = array<i64: %d, %d>,\n"
           "    dimension_numbers = #stablehlo.conv<[b, 0, 1, f]x[0, 1, i, o]->[b, 0, 1, f]>,\n"
           "    feature_group_count = %d : i64, batch_group_count = %d : i64\n"
           "  } : (%s, %s) -> %s\n"
           "  func.return %%0 : %s\n}\n",
           xt, wt, yt, c->s, c->s, c->lo, c->hi, c->lo, c->hi, c->ld, c->ld,
           c->rd, c->rd, c->fg, c->bg, xt, wt, yt, yt);
  tu_in in[2] = {{TU_SHAPE(t, c->N, c->H, c->W, c->Cin), xb},
                 {TU_SHAPE(t, c->kh, c->kw, I, c->O), wb}};
  tu_out out;
  xrt_status st = tu_run(cl, prog, 2, in, &out);
  if (st != XRT_OK)
    fail_msg("%s: %s\n%s", xrt_strerror(st), tu_msg, prog);
  assert_int_equal(out.bytes[0], (size_t)ny * d->size);
  if (memcmp(out.data[0], want, (size_t)ny * d->size) != 0)
    fail_msg("conv %s differs\n%s", ts, prog);
  tu_out_free(&out);
  free(x), free(w), free(xb), free(wb), free(want);
}

static void test_gemm_conv_paths(void **state) {
  const conv cs[] = {
      /* features a multiple of 16: whole strips */
      {2, 6, 7, 16, 24, 3, 3, 1, 1, 1, 1, 1, 1, 1},
      {1, 5, 5, 32, 40, 3, 3, 1, 1, 1, 1, 1, 1, 1},
      /* a ragged last strip, stride 2, rhs dilation */
      {2, 9, 8, 20, 18, 3, 2, 2, 2, 0, 1, 2, 1, 1},
      /* lhs dilation holes and negative padding */
      {1, 6, 6, 7, 33, 3, 3, 1, 1, -1, 2, 1, 1, 1},
      /* feature groups and batch groups */
      {2, 7, 7, 12, 24, 3, 3, 1, 1, 1, 1, 1, 3, 1},
      {4, 7, 6, 5, 32, 2, 3, 1, 0, 1, 1, 1, 1, 2},
      /* one pixel */
      {3, 1, 1, 64, 48, 1, 1, 1, 0, 0, 1, 1, 1, 1},
  };
  for (size_t p = 0; p < TU_COUNT(paths); p++) {
    setenv("XRT_SIM_GEMM", paths[p], 1);
    for (size_t i = 0; i < TU_COUNT(cs); i++) {
      run_conv(C(state), &cs[i], XRT_F32);
      run_conv(C(state), &cs[i], XRT_F64);
    }
    unsetenv("XRT_SIM_GEMM");
  }
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_dot_every_type),
      cmocka_unit_test(test_dot_int_wrap),
      cmocka_unit_test(test_dot_mixed_types),
  };
  const struct CMUnitTest gemm[] = {
      cmocka_unit_test(test_gemm_dot_paths),
      cmocka_unit_test(test_gemm_conv_paths),
      cmocka_unit_test(test_gemm_shapes),
  };
  int rc = cmocka_run_group_tests(tests, tu_setup_client, tu_teardown_client);
  return rc | cmocka_run_group_tests(gemm, setup_nocache, tu_teardown_client);
}
