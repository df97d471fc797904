/*
 * conv_case_util.h - convolution cases for the simulator's convolution
 * tests (test_sim_conv_dw.c, test_sim_conv_gemm.c): a case's logical
 * shape and layout, the reference (sums in double), the program text,
 * random data, running it on xrt and checking the result within the error
 * bound of reordered sums, and the layouts.  MIT licensed.
 */
#ifndef XRT_TEST_CONV_CASE_UTIL_H
#define XRT_TEST_CONV_CASE_UTIL_H

#include "test_util.h"

#include <float.h>
#include <math.h>

#define C(state) ((xrt_client *)*(state))

/* Logical dimensions: lhs and result [b, f, s0..], rhs [o, i, s0..].  C
 * groups of I input features (I = 1: depthwise) and mult results each. */
typedef struct conv_case {
  int ns, f64, ints;
  int64_t N, C, mult, I;
  int64_t in[3], k[3], s[3], lo[3], hi[3], ld[3], rd[3];
  int rev[3];
  int lp[5], rp[5], op[5]; /* logical dimension at each position */
} conv_case;

static int64_t out_dim(const conv_case *k, int d) {
  int64_t dil = (k->in[d] - 1) * k->ld[d] + 1;
  int64_t padded = dil + k->lo[d] + k->hi[d];
  int64_t wext = (k->k[d] - 1) * k->rd[d] + 1;
  return padded < wext ? 0 : (padded - wext) / k->s[d] + 1;
}

/* Logical sizes of each operand. */
static void sizes(const conv_case *k, int64_t *ls, int64_t *rs, int64_t *os) {
  ls[0] = k->N, ls[1] = k->C * k->I;
  rs[0] = k->C * k->mult, rs[1] = k->I;
  os[0] = k->N, os[1] = k->C * k->mult;
  for (int d = 0; d < k->ns; d++) {
    ls[2 + d] = k->in[d], rs[2 + d] = k->k[d], os[2 + d] = out_dim(k, d);
  }
}

/* Element strides per logical dimension of a row-major tensor whose
 * position p holds logical dimension perm[p]. */
static void strides(int rank, const int *perm, const int64_t *sz, int64_t *st) {
  int64_t s = 1;
  for (int p = rank - 1; p >= 0; p--) {
    st[perm[p]] = s;
    s *= sz[perm[p]];
  }
}

static int64_t numel(int rank, const int64_t *sz) {
  int64_t n = 1;
  for (int i = 0; i < rank; i++)
    n *= sz[i];
  return n;
}

/* The reference; sabs[i]: sum |x w| of result i.  x, w as doubles. */
static void reference(const conv_case *k, const double *x, const double *w,
                      double *y, double *sabs) {
  int rank = k->ns + 2;
  int64_t ls[5], rs[5], os[5], lst[5], rst[5], ost[5];
  sizes(k, ls, rs, os);
  strides(rank, k->lp, ls, lst);
  strides(rank, k->rp, rs, rst);
  strides(rank, k->op, os, ost);
  int64_t oi[5] = {0};
  int64_t total = numel(rank, os);
  for (int64_t e = 0; e < total; e++) {
    int64_t r = e; /* logical row-major index of the result */
    for (int d = rank - 1; d >= 0; d--)
      oi[d] = r % os[d], r /= os[d];
    int64_t g = oi[1] / k->mult;
    double sum = 0, sa = 0;
    int64_t kk[3] = {0, 0, 0};
    int64_t nwin = numel(k->ns, k->k);
    for (int64_t t = 0; t < nwin; t++) {
      int64_t rem = t, loff = oi[0] * lst[0];
      int valid = 1;
      for (int d = k->ns - 1; d >= 0; d--)
        kk[d] = rem % k->k[d], rem /= k->k[d];
      int64_t woff = oi[1] * rst[0];
      for (int d = 0; d < k->ns; d++) {
        int64_t kr = k->rev[d] ? k->k[d] - 1 - kk[d] : kk[d];
        int64_t p = oi[2 + d] * k->s[d] + kr * k->rd[d] - k->lo[d];
        if (p < 0 || p % k->ld[d] || p / k->ld[d] >= k->in[d])
          valid = 0;
        else
          loff += p / k->ld[d] * lst[2 + d];
        woff += kk[d] * rst[2 + d];
      }
      for (int64_t i = 0; i < k->I; i++) {
        double xv = valid ? x[loff + (g * k->I + i) * lst[1]] : 0.0;
        double wv = w[woff + i * rst[1]];
        sum += xv * wv;
        sa += fabs(xv * wv);
      }
    }
    int64_t yo = 0;
    for (int d = 0; d < rank; d++)
      yo += oi[d] * ost[d];
    y[yo] = sum, sabs[yo] = sa;
  }
}

static const char letters_l[] = "bf", letters_r[] = "oi";

static size_t dn_part(char *buf, size_t cap, int rank, const int *perm,
                      const char *let) {
  size_t n = 0;
  n += (size_t)snprintf(buf + n, cap - n, "[");
  for (int p = 0; p < rank; p++) {
    if (perm[p] < 2)
      n += (size_t)snprintf(buf + n, cap - n, "%s%c", p ? ", " : "",
                            let[perm[p]]);
    else
      n += (size_t)snprintf(buf + n, cap - n, "%s%d", p ? ", " : "",
                            perm[p] - 2);
  }
  n += (size_t)snprintf(buf + n, cap - n, "]");
  return n;
}

static void ttype(char *buf, size_t cap, int rank, const int *perm,
                  const int64_t *sz, int f64) {
  size_t n = (size_t)snprintf(buf, cap, "tensor<");
  for (int p = 0; p < rank; p++)
    n += (size_t)snprintf(buf + n, cap - n, "%lldx", (long long)sz[perm[p]]);
  snprintf(buf + n, cap - n, "%s>", f64 ? "f64" : "f32");
}

static char *program(const conv_case *k) {
  int rank = k->ns + 2;
  int64_t ls[5], rs[5], os[5];
  sizes(k, ls, rs, os);
  char lt[128], rt[128], ot[128], dn[128],
      st[64] = "", pad[128] = "", ld[64] = "", rd[64] = "", rev[64] = "";
  ttype(lt, sizeof lt, rank, k->lp, ls, k->f64);
  ttype(rt, sizeof rt, rank, k->rp, rs, k->f64);
  ttype(ot, sizeof ot, rank, k->op, os, k->f64);
  size_t n = dn_part(dn, sizeof dn, rank, k->lp, letters_l);
  n += (size_t)snprintf(dn + n, sizeof dn - n, "x");
  n += dn_part(dn + n, sizeof dn - n, rank, k->rp, letters_r);
  n += (size_t)snprintf(dn + n, sizeof dn - n, "->");
  dn_part(dn + n, sizeof dn - n, rank, k->op, letters_l);
  size_t a = 0, b = 0, c = 0, e = 0, g = 0;
  a += (size_t)snprintf(pad, sizeof pad, "[");
  for (int d = 0; d < k->ns; d++) {
    const char *sep = d ? ", " : "";
    b += (size_t)snprintf(st + b, sizeof st - b, "%s%lld", sep,
                          (long long)k->s[d]);
    a += (size_t)snprintf(pad + a, sizeof pad - a, "%s[%lld, %lld]", sep,
                          (long long)k->lo[d], (long long)k->hi[d]);
    c += (size_t)snprintf(ld + c, sizeof ld - c, "%s%lld", sep,
                          (long long)k->ld[d]);
    e += (size_t)snprintf(rd + e, sizeof rd - e, "%s%lld", sep,
                          (long long)k->rd[d]);
    g += (size_t)snprintf(rev + g, sizeof rev - g, "%s%s", sep,
                          k->rev[d] ? "true" : "false");
  }
  snprintf(pad + a, sizeof pad - a, "]");
  char *prog = malloc(2048);
  assert_non_null(prog);
  snprintf(prog, 2048,
           "func.func @main(%%x: %s, %%w: %s) -> %s {\n"
           "  %%0 = \"stablehlo.convolution\"(%%x, %%w) {\n"
           "    window_strides = array<i64: %s>,\n"
           "    padding = dense<%s> : tensor<%dx2xi64>,\n"
           "    lhs_dilation = array<i64: %s>, rhs_dilation = array<i64: %s>,\n"
           "    window_reversal = array<i1: %s>,\n"
           "    dimension_numbers = #stablehlo.conv<%s>,\n"
           "    feature_group_count = %lld : i64, batch_group_count = 1 : i64\n"
           "  } : (%s, %s) -> %s\n"
           "  func.return %%0 : %s\n}\n",
           lt, rt, ot, st, pad, k->ns, ld, rd, rev, dn, (long long)k->C, lt, rt,
           ot, ot);
  return prog;
}


/* The tests' random numbers: a fixed sequence per program (each sets its
 * own seed in main). */
static uint32_t rng_state = 1;
static uint32_t rnd(uint32_t n) {
  rng_state = rng_state * 1664525u + 1013904223u;
  return (rng_state >> 8) % n;
}

/* Values: small integers (exact sums) or reals in [-1, 1) as floats. */
static void fill(double *v, int64_t n, int ints) {
  for (int64_t i = 0; i < n; i++)
    v[i] = ints ? (double)((int)rnd(7) - 3)
                : (double)(float)((double)rnd(1u << 20) / (1 << 19) - 1.0);
}

static void *pack(const double *v, int64_t n, int f64) {
  void *p = malloc((size_t)(n ? n : 1) * (f64 ? 8 : 4));
  assert_non_null(p);
  for (int64_t i = 0; i < n; i++) {
    if (f64)
      ((double *)p)[i] = v[i];
    else
      ((float *)p)[i] = (float)v[i];
  }
  return p;
}

static xrt_shape phys_shape(const conv_case *k, const int *perm,
                            const int64_t *sz) {
  int64_t dims[5];
  for (int p = 0; p < k->ns + 2; p++)
    dims[p] = sz[perm[p]];
  return tu_shape(k->f64 ? XRT_F64 : XRT_F32, k->ns + 2, dims);
}

/* Runs k on client cl with x, w (doubles in physical order); the result
 * in *out. */
static void run(xrt_client *cl, const conv_case *k, const double *x,
                const double *w, tu_out *out) {
  int rank = k->ns + 2;
  int64_t ls[5], rs[5], os[5];
  sizes(k, ls, rs, os);
  char *prog = program(k);
  void *xb = pack(x, numel(rank, ls), k->f64);
  void *wb = pack(w, numel(rank, rs), k->f64);
  tu_in in[2] = {{phys_shape(k, k->lp, ls), xb},
                 {phys_shape(k, k->rp, rs), wb}};
  xrt_status st = tu_run(cl, prog, 2, in, out);
  if (st != XRT_OK)
    fail_msg("%s: %s\n%s", xrt_strerror(st), tu_msg, prog);
  assert_int_equal(out->bytes[0], (size_t)numel(rank, os) * (k->f64 ? 8 : 4));
  free(prog), free(xb), free(wb);
}

static double elem(const tu_out *o, int64_t i, int f64) {
  return f64 ? ((const double *)o->data[0])[i]
             : (double)((const float *)o->data[0])[i];
}

/* Runs k and checks it against the reference; with cl2, also that cl2
 * (another thread count) gives the same bits. */
static void check(xrt_client *cl, xrt_client *cl2, const conv_case *k) {
  int rank = k->ns + 2;
  int64_t ls[5], rs[5], os[5];
  sizes(k, ls, rs, os);
  int64_t nx = numel(rank, ls), nw = numel(rank, rs), ny = numel(rank, os);
  double *x = malloc(sizeof *x * (size_t)(nx + 1));
  double *w = malloc(sizeof *w * (size_t)(nw + 1));
  double *y = malloc(sizeof *y * (size_t)(ny + 1));
  double *sa = malloc(sizeof *sa * (size_t)(ny + 1));
  assert_true(x && w && y && sa);
  fill(x, nx, k->ints);
  fill(w, nw, k->ints);
  reference(k, x, w, y, sa);
  tu_out o;
  run(cl, k, x, w, &o);
  int64_t nwin = numel(k->ns, k->k) * k->I;
  double u = k->f64 ? 0x1p-53 : 0x1p-24;
  for (int64_t i = 0; i < ny; i++) {
    double got = elem(&o, i, k->f64);
    double want = k->f64 ? y[i] : (double)(float)y[i];
    if (k->ints) {
      if (memcmp(&got, &want, sizeof got) != 0) {
        char *prog = program(k);
        fail_msg("element %lld: %.17g, want %.17g (exact)\n%s", (long long)i,
                 got, want, prog);
      }
      continue;
    }
    double tol = (double)(nwin + 2) * u * sa[i] * (k->f64 ? 2 : 1) +
                 (k->f64 ? DBL_MIN : FLT_MIN);
    if (!(fabs(got - y[i]) <= tol)) {
      char *prog = program(k);
      fail_msg("element %lld: %.17g, want %.17g within %.3g\n%s", (long long)i,
               got, y[i], tol, prog);
    }
  }
  if (cl2) {
    tu_out o2;
    run(cl2, k, x, w, &o2);
    assert_int_equal(o2.bytes[0], o.bytes[0]);
    assert_memory_equal(o2.data[0], o.data[0], o.bytes[0]);
    tu_out_free(&o2);
  }
  tu_out_free(&o);
  free(x), free(w), free(y), free(sa);
}

/* Layouts: 0 features last (NHWC / HWIO), 1 features first (NCHW /
 * OIHW), 2 random. */
static void layout(conv_case *k, int which) {
  int rank = k->ns + 2;
  for (int t = 0; t < 3; t++) {
    int *perm = t == 0 ? k->lp : t == 1 ? k->rp : k->op;
    if (which == 0) { /* [b, 0.., f], [0.., i, o], [b, 0.., f] */
      if (t == 1) {
        for (int d = 0; d < k->ns; d++)
          perm[d] = 2 + d;
        perm[k->ns] = 1, perm[k->ns + 1] = 0;
      } else {
        perm[0] = 0;
        for (int d = 0; d < k->ns; d++)
          perm[1 + d] = 2 + d;
        perm[k->ns + 1] = 1;
      }
    } else {
      for (int p = 0; p < rank; p++)
        perm[p] = p;
      if (which == 2)
        for (int p = rank - 1; p > 0; p--) {
          int q = (int)rnd((uint32_t)p + 1), tmp = perm[p];
          perm[p] = perm[q], perm[q] = tmp;
        }
    }
  }
}

#endif
