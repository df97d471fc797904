/*
 * src/sim/solve.c - triangular_solve and cholesky, computed in complex
 * double precision.
 * Part of the simulated device; MIT licensed, see LICENSE.
 */
#include "internal.h"

static int sim_la_flag(const xrt_ir_op *op, const char *name, int dflt) {
  const xrt_ir_attr *a = xrt_ir_op_attr(op, name);
  if (a && (a->kind == XRT_ATTR_BOOL || a->kind == XRT_ATTR_INT))
    return a->i != 0;
  return dflt;
}

typedef struct sim_trsv {
  int left, lower, unit, trans; /* trans: 0 none, 1 transpose, 2 adjoint */
  int64_t batch, M, N;          /* a: M x M; b: M x N (left) or N x M */
  xrt_dtype t;
  int32_t work;                 /* pseudo value: T (M*M) and X (M*N) */
} sim_trsv;

static sim_c128 sim_la_getc(xrt_dtype t, const void *base, int64_t i) {
  sim_num v;
  sim_load(t, (const char *)base + (size_t)i * sim_esize(t), &v);
  sim_c128 c = {v.re, v.im};
  return c;
}

static void sim_la_putc(xrt_dtype t, void *base, int64_t i, sim_c128 c) {
  sim_num v = {c.re, c.im, 0, 0};
  sim_store(t, (char *)base + (size_t)i * sim_esize(t), &v);
}

static sim_c128 sim_cdiv(sim_c128 a, sim_c128 b) {
  if (b.im == 0) {
    sim_c128 r = {a.re / b.re, a.im / b.re};
    return r;
  }
  double d = b.re * b.re + b.im * b.im;
  sim_c128 r = {(a.re * b.re + a.im * b.im) / d,
                (a.im * b.re - a.re * b.im) / d};
  return r;
}

/* T = the matrix that multiplies X from the left once a right-side
 * problem X op(a) = b is transposed into op(a)^T X^T = b^T.  Only the
 * triangle of a named by `lower` is read. */
static void sim_trsv_matrix(const sim_trsv *s, const void *a, int64_t ab,
                            sim_c128 *T) {
  int64_t M = s->M;
  for (int64_t i = 0; i < M; i++)
    for (int64_t j = 0; j < M; j++) {
      /* T[i][j] = opA[i][j] (left) or opA[j][i] (right). */
      int64_t r = s->left ? i : j, c = s->left ? j : i;
      int64_t ar = s->trans ? c : r, ac = s->trans ? r : c; /* A index */
      int in_tri = s->lower ? ac <= ar : ac >= ar;
      sim_c128 v = {0, 0};
      if (ar == ac && s->unit) v.re = 1;
      else if (in_tri) v = sim_la_getc(s->t, a, ab + ar * M + ac);
      if (s->trans == 2) v.im = -v.im;
      T[i * M + j] = v;
    }
}

static xrt_status sim_run_trsv(const sim_step *st, void **vals, sim_cx *cx) {
  const sim_trsv *s = (const sim_trsv *)st->data;
  int64_t M = s->M, N = s->N;
  sim_c128 *T = (sim_c128 *)vals[s->work], *X = T + M * M;
  const void *a = vals[st->in[0]], *b = vals[st->in[1]];
  void *out = vals[st->out[0]];
  /* T is lower triangular when lower, flipped by a transpose and by the
   * right side's transposition. */
  int tlow = s->lower ^ (s->trans != 0) ^ !s->left;
  (void)cx;
  for (int64_t bi = 0; bi < s->batch; bi++) {
    int64_t bb = bi * M * N;
    sim_trsv_matrix(s, a, bi * M * M, T);
    for (int64_t i = 0; i < M; i++) /* X = b (left) or b^T (right) */
      for (int64_t j = 0; j < N; j++)
        X[i * N + j] = sim_la_getc(s->t, b, bb + (s->left ? i * N + j
                                                         : j * M + i));
    for (int64_t q = 0; q < M; q++) {
      int64_t i = tlow ? q : M - 1 - q;
      for (int64_t j = 0; j < N; j++) {
        sim_c128 acc = X[i * N + j];
        for (int64_t k = 0; k < M; k++) {
          if (tlow ? k >= i : k <= i) continue;
          sim_c128 p = sim_cmul(T[i * M + k], X[k * N + j]);
          acc.re -= p.re, acc.im -= p.im;
        }
        X[i * N + j] = sim_cdiv(acc, T[i * M + i]);
      }
    }
    for (int64_t i = 0; i < M; i++)
      for (int64_t j = 0; j < N; j++)
        sim_la_putc(s->t, out, bb + (s->left ? i * N + j : j * M + i),
                    X[i * N + j]);
  }
  return XRT_OK;
}

SIM_PRIVATE int sim_la_linalg_type(xrt_dtype t) {
  return t == XRT_F16 || t == XRT_BF16 || t == XRT_F32 || t == XRT_F64 ||
         t == XRT_C64 || t == XRT_C128 || sim_is_minifloat(t);
}

SIM_PRIVATE xrt_status sim_lower_triangular_solve(sim_fcc *fc, const xrt_ir_op *op,
                                             sim_step *st) {
  const xrt_shape *A = sim_shape(fc, op->operands[0]);
  const xrt_shape *B = sim_shape(fc, op->operands[1]);
  sim_trsv *s = (sim_trsv *)sim_palloc(fc, sizeof *s);
  if (!s) return XRT_RESOURCE_EXHAUSTED;
  s->left = sim_la_flag(op, "left_side", 0);
  s->lower = sim_la_flag(op, "lower", 0);
  s->unit = sim_la_flag(op, "unit_diagonal", 0);
  const char *tr = sim_la_enum(op, "transpose_a");
  s->trans = strcmp(tr, "TRANSPOSE") == 0 ? 1
             : strcmp(tr, "ADJOINT") == 0 ? 2 : 0;
  int r = A->rank, ok = r >= 2 && B->rank == r && A->dims[r - 1] == A->dims[r - 2];
  for (int d = 0; ok && d < r - 2; d++) ok = A->dims[d] == B->dims[d];
  if (ok) {
    s->M = A->dims[r - 1];
    s->N = B->dims[s->left ? r - 1 : r - 2];
    ok = B->dims[s->left ? r - 2 : r - 1] == s->M;
  }
  if (!ok)
    return sim_fail_op(fc->cc->err, op, XRT_INVALID_ARGUMENT, "%s: shapes of "
                       "a and b do not agree", op->name);
  if (!sim_la_linalg_type(A->dtype) || B->dtype != A->dtype)
    return sim_unsupported_type(fc, op, A->dtype);
  s->t = A->dtype;
  s->batch = 1;
  for (int d = 0; d < r - 2; d++) s->batch *= A->dims[d];
  st->data = s;
  st->run = sim_run_trsv;
  size_t w = (size_t)(s->M * s->M + s->M * s->N);
  return sim_temp(fc, sizeof(sim_c128) * (w ? w : 1), &s->work);
}

typedef struct sim_chol {
  int lower;
  int64_t batch, n;
  xrt_dtype t;
  int32_t work; /* pseudo value: L (n*n) */
} sim_chol;

/* L L^H = a from the triangle of a named by lower (the other one is
 * read as its conjugate mirror); the other triangle of the result is 0,
 * as in the spec's example.  A matrix that is not positive definite gives
 * NaNs, like XLA. */
static void sim_chol_one(const sim_chol *c, const void *a, int64_t base,
                         sim_c128 *Lm) {
  int64_t n = c->n;
  for (int64_t j = 0; j < n; j++) {
    for (int64_t i = j; i < n; i++) {
      /* Hermitian element H[i][j], i >= j. */
      sim_c128 h = c->lower ? sim_la_getc(c->t, a, base + i * n + j)
                            : sim_la_getc(c->t, a, base + j * n + i);
      if (!c->lower) h.im = -h.im;
      for (int64_t k = 0; k < j; k++) {
        sim_c128 y = Lm[j * n + k];
        y.im = -y.im;
        sim_c128 p = sim_cmul(Lm[i * n + k], y);
        h.re -= p.re, h.im -= p.im;
      }
      if (i == j) {
        sim_c128 d = {sqrt(h.re), 0};
        Lm[j * n + j] = d;
      } else {
        Lm[i * n + j] = sim_cdiv(h, Lm[j * n + j]);
      }
    }
    for (int64_t i = 0; i < j; i++) {
      sim_c128 z = {0, 0};
      Lm[i * n + j] = z;
    }
  }
}

static xrt_status sim_run_chol(const sim_step *st, void **vals, sim_cx *cx) {
  const sim_chol *c = (const sim_chol *)st->data;
  sim_c128 *Lm = (sim_c128 *)vals[c->work];
  int64_t n = c->n;
  (void)cx;
  for (int64_t b = 0; b < c->batch; b++) {
    int64_t base = b * n * n;
    sim_chol_one(c, vals[st->in[0]], base, Lm);
    for (int64_t i = 0; i < n; i++)
      for (int64_t j = 0; j < n; j++) {
        sim_c128 v = c->lower ? Lm[i * n + j] : Lm[j * n + i];
        if (!c->lower) v.im = -v.im; /* U = L^H */
        sim_la_putc(c->t, vals[st->out[0]], base + i * n + j, v);
      }
  }
  return XRT_OK;
}

SIM_PRIVATE xrt_status sim_lower_cholesky(sim_fcc *fc, const xrt_ir_op *op,
                                     sim_step *st) {
  const xrt_shape *A = sim_shape(fc, op->operands[0]);
  int r = A->rank;
  if (r < 2 || A->dims[r - 1] != A->dims[r - 2])
    return sim_fail_op(fc->cc->err, op, XRT_INVALID_ARGUMENT, "%s: a must be "
                       "a batch of square matrices", op->name);
  if (!sim_la_linalg_type(A->dtype)) return sim_unsupported_type(fc, op, A->dtype);
  sim_chol *c = (sim_chol *)sim_palloc(fc, sizeof *c);
  if (!c) return XRT_RESOURCE_EXHAUSTED;
  c->lower = sim_la_flag(op, "lower", 0);
  c->n = A->dims[r - 1];
  c->t = A->dtype;
  c->batch = 1;
  for (int d = 0; d < r - 2; d++) c->batch *= A->dims[d];
  st->data = c;
  st->run = sim_run_chol;
  size_t w = (size_t)(c->n * c->n);
  return sim_temp(fc, sizeof(sim_c128) * (w ? w : 1), &c->work);
}
