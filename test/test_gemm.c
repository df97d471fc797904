/*
 * test_gemm.c - the simulator's packed GEMM (dot_general and convolution on
 * f32/f64) against plain reference loops, on awkward shapes and layouts,
 * for each CPU path (XRT_SIM_GEMM=c|avx2|avx512; a path the CPU lacks
 * falls back to the best one it has, so every case still runs).
 */
#define _POSIX_C_SOURCE 200809L
#include "test_kernels.h"

static const char *const paths[] = {"c", "avx2", "avx512", "off"};

/* ---- dot_general ---- */

typedef struct dot_case {
  int lr, rr;            /* ranks */
  int64_t ld[4], rd[4];  /* dims */
  int nb, nc;            /* batching / contracting pairs */
  int64_t lb[2], rb[2], lc[2], rc[2];
} dot_case;

static char prog[8192];

static void dims_str(char *s, size_t n, int r, const int64_t *d, const char *t) {
  size_t o = 0;
  o += (size_t)snprintf(s + o, n - o, "tensor<");
  for (int i = 0; i < r; i++) o += (size_t)snprintf(s + o, n - o, "%lldx", (long long)d[i]);
  snprintf(s + o, n - o, "%s>", t);
}

static void list_str(char *s, size_t n, int k, const int64_t *v) {
  size_t o = 0;
  o += (size_t)snprintf(s + o, n - o, "[");
  for (int i = 0; i < k; i++)
    o += (size_t)snprintf(s + o, n - o, i ? ", %lld" : "%lld", (long long)v[i]);
  snprintf(s + o, n - o, "]");
}

static int is_in(int64_t d, int k, const int64_t *v) {
  for (int i = 0; i < k; i++)
    if (v[i] == d) return 1;
  return 0;
}

/* Free dims of one side, in order. */
static int free_dims(int r, int nb, const int64_t *b, int nc, const int64_t *c,
                     int64_t *out) {
  int n = 0;
  for (int d = 0; d < r; d++)
    if (!is_in(d, nb, b) && !is_in(d, nc, c)) out[n++] = d;
  return n;
}

static void strides(int r, const int64_t *d, int64_t *s) {
  int64_t m = 1;
  for (int i = r - 1; i >= 0; i--) s[i] = m, m *= d[i];
}

static int64_t numel(int r, const int64_t *d) {
  int64_t n = 1;
  for (int i = 0; i < r; i++) n *= d[i];
  return n;
}

/* Increments a multi-index; 0 when it wrapped. */
static int next(int k, int64_t *idx, const int64_t *lim) {
  for (int i = k - 1; i >= 0; i--) {
    if (++idx[i] < lim[i]) return 1;
    idx[i] = 0;
  }
  return 0;
}

/* Runs prog on the two inputs in type t under XRT_SIM_GEMM=path and checks
 * each of its n results against want: within 2 (k + 2) eps bound[i], the
 * error bound of a sum of k products whose magnitudes sum to bound[i]. */
static void run_check(xrt_client *cl, const tu_in *in, xrt_dtype t,
                      const char *path, int64_t n, int64_t k,
                      const double *want, const double *bound) {
  setenv("XRT_SIM_GEMM", path, 1);
  /* the path is chosen at compile time: a cached executable of the same
   * text would keep the previous path's kernels */
  assert_int_equal(xrt_client_clear_cache(cl), XRT_OK);
  tu_out out;
  TU_RUN_OK(cl, prog, 2, in, &out);
  unsetenv("XRT_SIM_GEMM");
  assert_int_equal(out.bytes[0], (size_t)n * (t == XRT_F32 ? 4 : 8));
  double eps = t == XRT_F32 ? 1.2e-7 : 2.3e-16;
  for (int64_t i = 0; i < n; i++) {
    double g = t == XRT_F32 ? ((const float *)out.data[0])[i]
                            : ((const double *)out.data[0])[i];
    double lim = 2.0 * (double)(k + 2) * eps * bound[i] + 1e-300;
    if (!(fabs(g - want[i]) <= lim))
      fail_msg("path %s %s element %lld: got %.17g want %.17g\n%s", path,
               t == XRT_F32 ? "f32" : "f64", (long long)i, g, want[i], prog);
  }
  tu_out_free(&out);
}

/* Runs one case in type t (XRT_F32 or XRT_F64) under XRT_SIM_GEMM=path. */
static void run_dot(xrt_client *cl, const dot_case *c, xrt_dtype t,
                    const char *path) {
  const char *ts = t == XRT_F32 ? "f32" : "f64";
  int64_t lf[4], rf[4], od[8], ls[4], rs[4];
  int nlf = free_dims(c->lr, c->nb, c->lb, c->nc, c->lc, lf);
  int nrf = free_dims(c->rr, c->nb, c->rb, c->nc, c->rc, rf);
  int orank = 0;
  for (int i = 0; i < c->nb; i++) od[orank++] = c->ld[c->lb[i]];
  for (int i = 0; i < nlf; i++) od[orank++] = c->ld[lf[i]];
  for (int i = 0; i < nrf; i++) od[orank++] = c->rd[rf[i]];
  char lt[128], rt[128], ot[128], lb[64], rb[64], lc[64], rc[64];
  dims_str(lt, sizeof lt, c->lr, c->ld, ts);
  dims_str(rt, sizeof rt, c->rr, c->rd, ts);
  dims_str(ot, sizeof ot, orank, od, ts);
  list_str(lb, sizeof lb, c->nb, c->lb);
  list_str(rb, sizeof rb, c->nb, c->rb);
  list_str(lc, sizeof lc, c->nc, c->lc);
  list_str(rc, sizeof rc, c->nc, c->rc);
  snprintf(prog, sizeof prog,
           "func.func @main(%%a: %s, %%b: %s) -> %s {\n"
           "  %%0 = stablehlo.dot_general %%a, %%b, batching_dims = %s x %s, "
           "contracting_dims = %s x %s : (%s, %s) -> %s\n"
           "  func.return %%0 : %s\n}\n",
           lt, rt, ot, lb, rb, lc, rc, lt, rt, ot, ot);
  int64_t nl = numel(c->lr, c->ld), nr = numel(c->rr, c->rd);
  int64_t no = numel(orank, od);
  double *a = malloc(sizeof(double) * (size_t)(nl + 1));
  double *b = malloc(sizeof(double) * (size_t)(nr + 1));
  double *want = malloc(sizeof(double) * (size_t)(no + 1));
  double *bound = malloc(sizeof(double) * (size_t)(no + 1));
  float *af = malloc(sizeof(float) * (size_t)(nl + 1));
  float *bf = malloc(sizeof(float) * (size_t)(nr + 1));
  assert_true(a && b && want && bound && af && bf);
  uint32_t seed = 12345u + (uint32_t)nl;
  for (int64_t i = 0; i < nl; i++) {
    seed = seed * 1664525u + 1013904223u;
    af[i] = (float)((int32_t)(seed >> 8) % 2001 - 1000) / 250.0f;
    a[i] = af[i];
  }
  for (int64_t i = 0; i < nr; i++) {
    seed = seed * 1664525u + 1013904223u;
    bf[i] = (float)((int32_t)(seed >> 8) % 2001 - 1000) / 250.0f;
    b[i] = bf[i];
  }
  /* Reference: out[batch, lfree, rfree] = sum over contracting. */
  strides(c->lr, c->ld, ls);
  strides(c->rr, c->rd, rs);
  int64_t ci[2] = {0, 0}, cl_[2] = {1, 1};
  for (int i = 0; i < c->nc; i++) cl_[i] = c->ld[c->lc[i]];
  int64_t kn = numel(c->nc, cl_);
  int64_t oi[8] = {0};
  for (int64_t o = 0; o < no; o++) {
    int64_t lo = 0, ro = 0;
    int p = 0;
    for (int i = 0; i < c->nb; i++, p++)
      lo += oi[p] * ls[c->lb[i]], ro += oi[p] * rs[c->rb[i]];
    for (int i = 0; i < nlf; i++, p++) lo += oi[p] * ls[lf[i]];
    for (int i = 0; i < nrf; i++, p++) ro += oi[p] * rs[rf[i]];
    double s = 0, sa = 0;
    memset(ci, 0, sizeof ci);
    for (int64_t k = 0; k < kn; k++) {
      int64_t l2 = lo, r2 = ro;
      for (int i = 0; i < c->nc; i++)
        l2 += ci[i] * ls[c->lc[i]], r2 += ci[i] * rs[c->rc[i]];
      s += a[l2] * b[r2];
      sa += fabs(a[l2] * b[r2]);
      next(c->nc, ci, cl_);
    }
    want[o] = s;
    bound[o] = sa;
    next(orank, oi, od);
  }
  tu_in in[2];
  in[0].shape = tu_shape(t, c->lr, c->ld);
  in[1].shape = tu_shape(t, c->rr, c->rd);
  in[0].data = t == XRT_F32 ? (const void *)af : (const void *)a;
  in[1].data = t == XRT_F32 ? (const void *)bf : (const void *)b;
  run_check(cl, in, t, path, no, kn, want, bound);
  free(a), free(b), free(want), free(bound), free(af), free(bf);
}

static void run_dot_all(void **state, const dot_case *c) {
  for (size_t p = 0; p < TU_COUNT(paths); p++) {
    run_dot((xrt_client *)*state, c, XRT_F32, paths[p]);
    run_dot((xrt_client *)*state, c, XRT_F64, paths[p]);
  }
}

/* Plain [M, K] x [K, N] over sizes around the register and cache blocks. */
static void test_dot_plain_sizes(void **state) {
  static const int64_t sz[][3] = {{1, 1, 4096}, {7, 33, 129}, {33, 129, 7},
                                  {129, 7, 33}, {13, 65, 400}, {1, 129, 129},
                                  {129, 1, 129}, {25, 17, 1}};
  for (size_t i = 0; i < TU_COUNT(sz); i++) {
    dot_case c = {2, 2, {sz[i][0], sz[i][2]}, {sz[i][2], sz[i][1]}, 0, 1,
                  {0}, {0}, {1}, {0}};
    run_dot_all(state, &c);
  }
}

/* K larger than a K block, M larger than an M block of the portable path. */
static void test_dot_large_k(void **state) {
  dot_case c = {2, 2, {37, 1100}, {1100, 45}, 0, 1, {0}, {0}, {1}, {0}};
  run_dot_all(state, &c);
  dot_case d = {2, 2, {1030, 20}, {20, 9}, 0, 1, {0}, {0}, {1}, {0}};
  run_dot((xrt_client *)*state, &d, XRT_F32, "c");
  run_dot((xrt_client *)*state, &d, XRT_F64, "avx512");
}

/* Transposed operands: contracting dim first on lhs, last on rhs, both. */
static void test_dot_transposed(void **state) {
  dot_case t1 = {2, 2, {129, 33}, {129, 7}, 0, 1, {0}, {0}, {0}, {0}};
  dot_case t2 = {2, 2, {33, 129}, {65, 129}, 0, 1, {0}, {0}, {1}, {1}};
  dot_case t3 = {2, 2, {129, 33}, {65, 129}, 0, 1, {0}, {0}, {0}, {1}};
  run_dot_all(state, &t1);
  run_dot_all(state, &t2);
  run_dot_all(state, &t3);
  /* Large enough for CBLAS in an XRT_BLAS=1 build (both layouts). */
  dot_case t4 = {2, 2, {130, 131}, {132, 131}, 0, 1, {0}, {0}, {1}, {1}};
  dot_case t5 = {2, 2, {131, 130}, {131, 132}, 0, 1, {0}, {0}, {0}, {0}};
  run_dot_all(state, &t4);
  run_dot_all(state, &t5);
}

/* Batch dimensions in any position, two free and two contracting dims. */
static void test_dot_batched(void **state) {
  /* [B, M, K] x [B, K, N] */
  dot_case b1 = {3, 3, {3, 33, 40}, {3, 40, 17}, 1, 1, {0}, {0}, {2}, {1}};
  /* batch last on lhs and in the middle on rhs, rhs transposed */
  dot_case b2 = {3, 3, {40, 33, 3}, {17, 3, 40}, 1, 1, {2}, {1}, {0}, {2}};
  /* two contracting dims, two free dims on lhs, interleaved */
  dot_case b3 = {4, 3, {5, 6, 7, 8}, {8, 9, 6}, 0, 2, {0}, {0}, {1, 3},
                 {2, 0}};
  /* two batch dims */
  dot_case b4 = {4, 4, {2, 3, 20, 30}, {3, 2, 30, 19}, 2, 1, {0, 1}, {1, 0},
                 {3}, {2}};
  run_dot_all(state, &b1);
  run_dot_all(state, &b2);
  run_dot_all(state, &b3);
  run_dot_all(state, &b4);
}

/* Zero-size dimensions: empty results, and K = 0 (all zeros). */
static void test_dot_zero_size(void **state) {
  dot_case z1 = {2, 2, {0, 50}, {50, 100}, 0, 1, {0}, {0}, {1}, {0}};
  dot_case z2 = {2, 2, {70, 0}, {0, 90}, 0, 1, {0}, {0}, {1}, {0}};
  dot_case z3 = {3, 3, {0, 40, 50}, {0, 50, 60}, 1, 1, {0}, {0}, {2}, {1}};
  run_dot_all(state, &z1);
  run_dot_all(state, &z2);
  run_dot_all(state, &z3);
}


/* ---- convolution (reference: tu_conv_ref in test_kernels.h) ---- */

/* A layout: where each canonical dimension (batch/o, feature/i, 0, 1)
 * sits in the tensor. */
typedef struct layout {
  int pos[4];
} layout;

/* Offset in the laid-out tensor of canonical index idx. */
static int64_t lay_off(const layout *l, const int64_t *cd, const int64_t *idx) {
  int64_t ad[4], st[4];
  for (int i = 0; i < 4; i++) ad[l->pos[i]] = cd[i];
  strides(4, ad, st);
  int64_t o = 0;
  for (int i = 0; i < 4; i++) o += idx[i] * st[l->pos[i]];
  return o;
}

static void lay_str(char *s, const layout *l, const char *names) {
  char v[4];
  for (int i = 0; i < 4; i++) v[l->pos[i]] = names[i];
  sprintf(s, "[%c, %c, %c, %c]", v[0], v[1], v[2], v[3]);
}

static void lay_type(char *s, size_t n, const layout *l, const int64_t *cd,
                     const char *ts) {
  int64_t ad[4];
  for (int i = 0; i < 4; i++) ad[l->pos[i]] = cd[i];
  dims_str(s, n, 4, ad, ts);
}

typedef struct conv_case {
  tu_conv c;
  layout x, w, y;
} conv_case;

/* Copies canonical data into layout l (dims cd). */
static void to_layout(const layout *l, const int64_t *cd, const double *src,
                      double *dst, float *dstf) {
  int64_t idx[4] = {0, 0, 0, 0}, n = numel(4, cd);
  for (int64_t i = 0; i < n; i++) {
    int64_t o = lay_off(l, cd, idx);
    if (dst) dst[o] = src[i];
    if (dstf) dstf[o] = (float)src[i];
    next(4, idx, cd);
  }
}

static double *rand_vals(int64_t n, uint32_t seed) {
  double *v = calloc((size_t)n + 1, sizeof *v);
  assert_non_null(v);
  for (int64_t i = 0; i < n; i++) {
    seed = seed * 1664525u + 1013904223u;
    v[i] = (double)((int32_t)(seed >> 8) % 2001 - 1000) / 250.0;
  }
  return v;
}

static void run_conv(xrt_client *cl, const conv_case *cc, xrt_dtype t,
                     const char *path) {
  tu_conv c = cc->c;
  const char *ts = t == XRT_F32 ? "f32" : "f64";
  tu_conv_out(&c, NULL);
  int64_t xd[4] = {c.N, c.Cin, c.in[0], c.in[1]};
  int64_t wd[4] = {c.O, c.I, c.k[0], c.k[1]};
  int64_t yd[4] = {c.N / c.bg, c.O, c.out[0], c.out[1]};
  int64_t nx = numel(4, xd), nw = numel(4, wd), ny = numel(4, yd);
  double *x = rand_vals(nx, 99u + (uint32_t)nx);
  double *w = rand_vals(nw, 55u + (uint32_t)nw);
  double *xa = calloc((size_t)nx + 1, 8), *wa = calloc((size_t)nw + 1, 8);
  double *y = calloc((size_t)ny + 1, 8), *ya = calloc((size_t)ny + 1, 8);
  double *xl = calloc((size_t)nx + 1, 8), *wl = calloc((size_t)nw + 1, 8);
  double *yl = calloc((size_t)ny + 1, 8), *yal = calloc((size_t)ny + 1, 8);
  float *xf = calloc((size_t)nx + 1, 4), *wf = calloc((size_t)nw + 1, 4);
  assert_true(xa && wa && y && ya && xl && wl && yl && yal && xf && wf);
  for (int64_t i = 0; i < nx; i++) xa[i] = fabs(x[i]);
  for (int64_t i = 0; i < nw; i++) wa[i] = fabs(w[i]);
  tu_conv c2 = c;
  tu_conv_ref(&c, x, w, y);
  tu_conv_ref(&c2, xa, wa, ya); /* error bound: sum of |products| */
  to_layout(&cc->x, xd, x, xl, xf);
  to_layout(&cc->w, wd, w, wl, wf);
  char xt[128], wt[128], yt[128], xs[32], ws[32], ys[32];
  lay_type(xt, sizeof xt, &cc->x, xd, ts);
  lay_type(wt, sizeof wt, &cc->w, wd, ts);
  lay_type(yt, sizeof yt, &cc->y, yd, ts);
  lay_str(xs, &cc->x, "bf01");
  lay_str(ws, &cc->w, "oi01");
  lay_str(ys, &cc->y, "bf01");
  snprintf(prog, sizeof prog,
           "func.func @main(%%x: %s, %%w: %s) -> %s {\n"
           "  %%0 = \"stablehlo.convolution\"(%%x, %%w) {\n"
           "    window_strides = array<i64: %lld, %lld>,\n"
           "    padding = dense<[[%lld, %lld], [%lld, %lld]]> : "
           "tensor<2x2xi64>,\n"
           "    lhs_dilation = array<i64: %lld, %lld>, "
           "rhs_dilation = array<i64: %lld, %lld>,\n"
           "    window_reversal = array<i1: %s, %s>,\n"
           "    dimension_numbers = #stablehlo.conv<%sx%s->%s>,\n"
           "    feature_group_count = %lld : i64, batch_group_count = %lld : "
           "i64\n  } : (%s, %s) -> %s\n"
           "  func.return %%0 : %s\n}\n",
           xt, wt, yt, (long long)c.s[0], (long long)c.s[1],
           (long long)c.lo[0], (long long)c.hi[0], (long long)c.lo[1],
           (long long)c.hi[1], (long long)c.ld[0], (long long)c.ld[1],
           (long long)c.rd[0], (long long)c.rd[1],
           c.rev[0] ? "true" : "false", c.rev[1] ? "true" : "false", xs, ws,
           ys, (long long)c.fg, (long long)c.bg, xt, wt, yt, yt);
  tu_in in[2];
  int64_t axd[4], awd[4];
  for (int i = 0; i < 4; i++)
    axd[cc->x.pos[i]] = xd[i], awd[cc->w.pos[i]] = wd[i];
  in[0].shape = tu_shape(t, 4, axd);
  in[1].shape = tu_shape(t, 4, awd);
  in[0].data = t == XRT_F32 ? (const void *)xf : (const void *)xl;
  in[1].data = t == XRT_F32 ? (const void *)wf : (const void *)wl;
  /* the expected values and their bounds in the output's layout */
  to_layout(&cc->y, yd, y, yl, NULL);
  to_layout(&cc->y, yd, ya, yal, NULL);
  run_check(cl, in, t, path, ny, c.I * c.k[0] * c.k[1], yl, yal);
  free(x), free(w), free(xa), free(wa), free(y), free(ya), free(xl);
  free(wl), free(xf), free(wf), free(yl), free(yal);
}

static void run_conv_all(void **state, const conv_case *c) {
  for (size_t p = 0; p < TU_COUNT(paths); p++) {
    run_conv((xrt_client *)*state, c, XRT_F32, paths[p]);
    run_conv((xrt_client *)*state, c, XRT_F64, paths[p]);
  }
}

#define NHWC {{0, 3, 1, 2}}
#define HWIO {{3, 2, 0, 1}}
#define NCHW {{0, 1, 2, 3}}

/* NHWC x HWIO, odd sizes, padding 1 (the ResNet layout). */
static void test_conv_nhwc(void **state) {
  conv_case c = {{.N = 1, .Cin = 5, .O = 7, .I = 5, .in = {9, 11},
                  .k = {3, 3}, .s = {1, 1}, .lo = {1, 1}, .hi = {1, 1},
                  .ld = {1, 1}, .rd = {1, 1}, .fg = 1, .bg = 1},
                 NHWC, HWIO, NHWC};
  run_conv_all(state, &c);
  conv_case d = {{.N = 3, .Cin = 33, .O = 40, .I = 33, .in = {7, 6},
                  .k = {1, 2}, .s = {1, 1}, .lo = {0, 0}, .hi = {0, 0},
                  .ld = {1, 1}, .rd = {1, 1}, .fg = 1, .bg = 1},
                 NHWC, HWIO, NHWC};
  run_conv_all(state, &d);
  /* features a multiple of 16 (whole strips): more result features than
   * one column block, then a K of several blocks */
  conv_case e = {{.N = 1, .Cin = 32, .O = 330, .I = 32, .in = {6, 7},
                  .k = {3, 3}, .s = {1, 1}, .lo = {1, 1}, .hi = {1, 1},
                  .ld = {1, 1}, .rd = {1, 1}, .fg = 1, .bg = 1},
                 NHWC, HWIO, NHWC};
  run_conv_all(state, &e);
  conv_case f = {{.N = 2, .Cin = 96, .O = 24, .I = 96, .in = {5, 6},
                  .k = {3, 3}, .s = {1, 1}, .lo = {1, 1}, .hi = {1, 1},
                  .ld = {1, 1}, .rd = {1, 1}, .fg = 1, .bg = 1},
                 NHWC, HWIO, NHWC};
  run_conv_all(state, &f);
}

/* NCHW / OIHW with strides, asymmetric and negative padding, both
 * dilations and window reversal. */
static void test_conv_nchw_windows(void **state) {
  conv_case c = {{.N = 2, .Cin = 6, .O = 33, .I = 6, .in = {13, 10},
                  .k = {3, 2}, .s = {2, 1}, .lo = {2, 0}, .hi = {1, -1},
                  .ld = {1, 2}, .rd = {2, 1}, .rev = {1, 0}, .fg = 1,
                  .bg = 1},
                 NCHW, NCHW, NCHW};
  run_conv_all(state, &c);
}

/* Feature groups and batch groups, permuted layouts on every side. */
static void test_conv_groups(void **state) {
  layout xl = {{2, 0, 3, 1}}, wl = {{1, 3, 0, 2}}, yl = {{3, 1, 0, 2}};
  conv_case f = {{.N = 2, .Cin = 6, .O = 9, .I = 2, .in = {16, 17},
                  .k = {2, 3}, .s = {1, 2}, .lo = {1, 1}, .hi = {0, 1},
                  .ld = {1, 1}, .rd = {1, 1}, .fg = 3, .bg = 1},
                 xl, wl, yl};
  conv_case b = {{.N = 4, .Cin = 3, .O = 6, .I = 3, .in = {15, 14},
                  .k = {3, 1}, .s = {1, 1}, .lo = {1, 0}, .hi = {1, 0},
                  .ld = {1, 1}, .rd = {1, 1}, .rev = {0, 1}, .fg = 1,
                  .bg = 2},
                 xl, wl, yl};
  run_conv_all(state, &f);
  run_conv_all(state, &b);
}

/* No input features: every result is 0. */
static void test_conv_zero_features(void **state) {
  conv_case c = {{.N = 1, .Cin = 0, .O = 16, .I = 0, .in = {8, 8},
                  .k = {3, 3}, .s = {1, 1}, .lo = {1, 1}, .hi = {1, 1},
                  .ld = {1, 1}, .rd = {1, 1}, .fg = 1, .bg = 1},
                 NHWC, HWIO, NHWC};
  run_conv_all(state, &c);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_dot_plain_sizes),
      cmocka_unit_test(test_dot_large_k),
      cmocka_unit_test(test_dot_transposed),
      cmocka_unit_test(test_dot_batched),
      cmocka_unit_test(test_dot_zero_size),
      cmocka_unit_test(test_conv_nhwc),
      cmocka_unit_test(test_conv_nchw_windows),
      cmocka_unit_test(test_conv_groups),
      cmocka_unit_test(test_conv_zero_features),
  };
  return cmocka_run_group_tests(tests, tu_setup_client, tu_teardown_client);
}
