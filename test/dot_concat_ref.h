/*
 * dot_concat_ref.h - the references and the case runner shared by
 * test_sim_dot_concat.c and test_sim_dot_concat_edges.c (dot_generals
 * reading a concatenation that is never materialized): input values
 * (multiples of 1/4 in [-1, 1]), a concatenation and a dot_general
 * computed here in double, program texts of element type T made f32 or
 * f64, and a runner that checks every result exactly (or within a bound
 * per element), each program run twice.  MIT licensed.
 */
#ifndef XRT_TEST_DOT_CONCAT_REF_H
#define XRT_TEST_DOT_CONCAT_REF_H

#include "test_util.h"

#define MAXR 6

/* Input i: multiples of 1/4 in [-1, 1]. */
static inline double val(int64_t i, int salt) {
  return (double)((i * 7 + salt * 3) % 9 - 4) / 4.0;
}

static inline int64_t numel(int rank, const int64_t *d) {
  int64_t n = 1;
  for (int k = 0; k < rank; k++) n *= d[k];
  return n;
}

/* out = the concatenation of n parts (shapes pd[i], rank) along axis. */
static inline void ref_concat(int n, double *const *parts,
                              const int64_t (*pd)[MAXR], int rank, int axis,
                              double *out) {
  int64_t outer = 1, inner = 1;
  for (int k = 0; k < axis; k++) outer *= pd[0][k];
  for (int k = axis + 1; k < rank; k++) inner *= pd[0][k];
  int64_t at = 0;
  for (int64_t o = 0; o < outer; o++)
    for (int i = 0; i < n; i++) {
      int64_t run = pd[i][axis] * inner;
      for (int64_t e = 0; e < run; e++) out[at++] = parts[i][o * run + e];
    }
}

/* Dimension numbers of a dot_general. */
typedef struct dims {
  int nb, nc;
  int64_t lb[MAXR], rb[MAXR], lc[MAXR], rc[MAXR];
} dims;

static inline int listed(const int64_t *a, int n, int64_t d) {
  for (int i = 0; i < n; i++)
    if (a[i] == d) return 1;
  return 0;
}

/* out = the dot_general of row-major L and R, [batch, lhs free, rhs
 * free]; with absval, the sums of |products| instead. */
static inline void ref_dot_sum(const double *L, int lr, const int64_t *ld,
                               const double *R, int rr, const int64_t *rd,
                               const dims *dd, int absval, double *out) {
  int64_t ls[MAXR], rs[MAXR], lf[MAXR], rf[MAXR], nlf = 0, nrf = 0;
  for (int k = lr - 1, s = 1; k >= 0; k--) ls[k] = s, s *= (int)ld[k];
  for (int k = rr - 1, s = 1; k >= 0; k--) rs[k] = s, s *= (int)rd[k];
  for (int k = 0; k < lr; k++)
    if (!listed(dd->lb, dd->nb, k) && !listed(dd->lc, dd->nc, k))
      lf[nlf++] = k;
  for (int k = 0; k < rr; k++)
    if (!listed(dd->rb, dd->nb, k) && !listed(dd->rc, dd->nc, k))
      rf[nrf++] = k;
  /* result index space: batch dims, lhs free, rhs free */
  int64_t od[3 * MAXR], on = 0;
  for (int q = 0; q < dd->nb; q++) od[on++] = ld[dd->lb[q]];
  for (int q = 0; q < nlf; q++) od[on++] = ld[lf[q]];
  for (int q = 0; q < nrf; q++) od[on++] = rd[rf[q]];
  int64_t cd[MAXR], K = 1;
  for (int q = 0; q < dd->nc; q++) cd[q] = ld[dd->lc[q]], K *= cd[q];
  int64_t total = numel((int)on, od), idx[3 * MAXR] = {0};
  for (int64_t o = 0; o < total; o++) {
    int64_t lo = 0, ro = 0;
    for (int q = 0; q < dd->nb; q++)
      lo += idx[q] * ls[dd->lb[q]], ro += idx[q] * rs[dd->rb[q]];
    for (int q = 0; q < nlf; q++) lo += idx[dd->nb + q] * ls[lf[q]];
    for (int q = 0; q < nrf; q++) ro += idx[dd->nb + nlf + q] * rs[rf[q]];
    double s = 0;
    int64_t ci[MAXR] = {0};
    for (int64_t k = 0; k < K; k++) {
      int64_t a = lo, b = ro;
      for (int q = 0; q < dd->nc; q++)
        a += ci[q] * ls[dd->lc[q]], b += ci[q] * rs[dd->rc[q]];
      s += absval ? fabs(L[a] * R[b]) : L[a] * R[b];
      for (int q = dd->nc - 1; q >= 0; q--) {
        if (++ci[q] < cd[q]) break;
        ci[q] = 0;
      }
    }
    out[o] = s;
    for (int q = (int)on - 1; q >= 0; q--) {
      if (++idx[q] < od[q]) break;
      idx[q] = 0;
    }
  }
}

/* out = the dot_general of row-major L and R, [batch, lhs free, rhs
 * free]. */
static inline void ref_dot(const double *L, int lr, const int64_t *ld,
                           const double *R, int rr, const int64_t *rd,
                           const dims *dd, double *out) {
  ref_dot_sum(L, lr, ld, R, rr, rd, dd, 0, out);
}

/* ---- running a case ---- */

typedef struct input {
  int rank;
  int64_t d[MAXR];
  double *v;
} input;

static inline void make_input(input *in, int salt, int rank,
                              const int64_t *d) {
  in->rank = rank;
  memcpy(in->d, d, sizeof(int64_t) * (size_t)rank);
  int64_t n = numel(rank, d);
  in->v = malloc(sizeof(double) * (size_t)(n ? n : 1));
  for (int64_t i = 0; i < n; i++) in->v[i] = val(i, salt);
}

static inline void free_inputs(input *in, int n) {
  for (int i = 0; i < n; i++) free(in[i].v);
}

/* *ti = input in as f32 (or with f64, f64) host data; free ti->data. */
static inline void host_input(const input *in, int f64, tu_in *ti) {
  int64_t n = numel(in->rank, in->d);
  void *buf = malloc((f64 ? 8 : 4) * (size_t)(n ? n : 1));
  assert_non_null(buf);
  for (int64_t e = 0; e < n; e++) {
    if (f64) ((double *)buf)[e] = in->v[e];
    else ((float *)buf)[e] = (float)in->v[e];
  }
  ti->shape = tu_shape(f64 ? XRT_F64 : XRT_F32, in->rank, in->d);
  ti->data = buf;
}

/* in[0, nparts) = the parts pd[i] (of rank rank; input i of salt i + 1)
 * and cat = their concatenation along axis (when cat is not NULL). */
static inline void concat_inputs(input *in, int nparts,
                                 const int64_t (*pd)[MAXR], int rank,
                                 int axis, double *cat) {
  double *parts[4];
  assert_true(nparts <= 4);
  for (int i = 0; i < nparts; i++) {
    make_input(&in[i], i + 1, rank, pd[i]);
    parts[i] = in[i].v;
  }
  if (cat) ref_concat(nparts, parts, pd, rank, axis, cat);
}

/* src with its element type marker T (in "xT>" and "<T>") replaced by
 * f32 or f64 (free the result). */
static inline char *typed(const char *src, int f64) {
  size_t n = strlen(src), w = 0;
  char *r = malloc(3 * n + 1);
  for (size_t i = 0; i < n; i++) {
    if (src[i] == 'T' && i > 0 && (src[i - 1] == 'x' || src[i - 1] == '<') &&
        src[i + 1] == '>') {
      memcpy(r + w, f64 ? "f64" : "f32", 3);
      w += 3;
      continue;
    }
    r[w++] = src[i];
  }
  r[w] = 0;
  return r;
}

/* Runs src (element type T) on client c with the inputs and checks
 * result k against want[k] (nres results of want_n[k] elements): exactly
 * when tol is NULL, else within tol[k][e] (an absolute bound per
 * element).  Each program runs twice (the second on a reused frame). */
static inline void run_case_tol(xrt_client *c, const char *src, int f64,
                                int nin, const input *in, int nres,
                                double *const *want, const int64_t *want_n,
                                double *const *tol) {
  char *text = typed(src, f64);
  tu_in ti[8];
  assert_true(nin <= 8);
  for (int i = 0; i < nin; i++) host_input(&in[i], f64, &ti[i]);
  for (int rep = 0; rep < 2; rep++) {
    tu_out o;
    xrt_status s = tu_run(c, text, nin, ti, &o);
    if (s) fail_msg("%s\n%s", tu_msg, text);
    assert_int_equal(o.n, nres);
    for (int k = 0; k < nres; k++) {
      assert_int_equal(o.bytes[k], (size_t)want_n[k] * (f64 ? 8 : 4));
      for (int64_t e = 0; e < want_n[k]; e++) {
        double g = f64 ? ((const double *)o.data[k])[e]
                       : (double)((const float *)o.data[k])[e];
        double lim = tol ? tol[k][e] : 0;
        if (!(fabs(g - want[k][e]) <= lim))
          fail_msg("result %d element %lld: got %.17g want %.17g (%s)\n%s", k,
                   (long long)e, g, want[k][e], f64 ? "f64" : "f32", text);
      }
    }
    tu_out_free(&o);
  }
  for (int i = 0; i < nin; i++) free((void *)ti[i].data);
  free(text);
}

static inline void run_case(xrt_client *c, const char *src, int f64, int nin,
                            const input *in, int nres, double *const *want,
                            const int64_t *want_n) {
  run_case_tol(c, src, f64, nin, in, nres, want, want_n, NULL);
}

/* One product of a concatenation of inputs [0, nparts) along axis (parts
 * pd[i] of rank rank) seen as xd (rank xr) through reshapes, with input
 * nparts (rank orank, od) as the other operand (the rhs unless
 * cat_is_rhs): the program's only result. */
static inline void check_one(xrt_client *c, const char *src, int f64,
                             int nparts, const int64_t (*pd)[MAXR], int rank,
                             int axis, int xr, const int64_t *xd,
                             int cat_is_rhs, int orank, const int64_t *od,
                             const dims *dd) {
  input in[4];
  int64_t cn = 0;
  for (int i = 0; i < nparts; i++) cn += numel(rank, pd[i]);
  double *cat = malloc(sizeof(double) * (size_t)(cn ? cn : 1));
  concat_inputs(in, nparts, pd, rank, axis, cat);
  make_input(&in[nparts], 9, orank, od);
  const int64_t *ld = cat_is_rhs ? od : xd, *rd = cat_is_rhs ? xd : od;
  int lr = cat_is_rhs ? orank : xr, rr = cat_is_rhs ? xr : orank;
  int64_t on = 1;
  for (int q = 0; q < dd->nb; q++) on *= ld[dd->lb[q]];
  for (int k = 0; k < lr; k++)
    if (!listed(dd->lb, dd->nb, k) && !listed(dd->lc, dd->nc, k)) on *= ld[k];
  for (int k = 0; k < rr; k++)
    if (!listed(dd->rb, dd->nb, k) && !listed(dd->rc, dd->nc, k)) on *= rd[k];
  double *want = malloc(sizeof(double) * (size_t)(on ? on : 1));
  if (cat_is_rhs)
    ref_dot(in[nparts].v, lr, ld, cat, rr, rd, dd, want);
  else
    ref_dot(cat, lr, ld, in[nparts].v, rr, rd, dd, want);
  run_case(c, src, f64, nparts + 1, in, 1, &want, &on);
  free(want);
  free(cat);
  free_inputs(in, nparts + 1);
}

/* src: the product of the concatenation of [2, 4] and [1, 4] along rows
 * with itself (or a reshape of itself), contracting the columns: the
 * program's only result, [3, 3]. */
static inline void check_self(xrt_client *c, const char *src, int f64) {
  static const int64_t pd[2][MAXR] = {{2, 4}, {1, 4}}, cd[] = {3, 4};
  input in[2];
  double cat[12], want[9];
  concat_inputs(in, 2, pd, 2, 0, cat);
  dims d = {0, 1, {0}, {0}, {1}, {1}};
  ref_dot(cat, 2, cd, cat, 2, cd, &d, want);
  double *w = want;
  int64_t n = 9;
  run_case(c, src, f64, 2, in, 1, &w, &n);
  free_inputs(in, 2);
}

#endif /* XRT_TEST_DOT_CONCAT_REF_H */
