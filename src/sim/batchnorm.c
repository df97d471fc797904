/*
 * src/sim/batchnorm.c - batch_norm_inference, batch_norm_training
 * and batch_norm_grad.
 * Part of the simulated device; MIT licensed, see LICENSE.
 */
#include "internal.h"

/* Elements of operand at (o, f, i) are at (o * F + f) * inner + i, with f
 * along feature_index.  Computed in double precision, rounded once. */
struct sim_bn;
typedef void (*sim_bn_fast_fn)(const struct sim_bn *b, const void *x,
                               void *y, const double *k, int64_t begin,
                               int64_t end);

typedef struct sim_bn {
  int64_t outer, F, inner;
  double eps;
  xrt_dtype t;
  int32_t work; /* pseudo value: per-feature doubles (the fast path's k) */
  sim_bn_fast_fn fast; /* batch_norm_inference on f32 / f64, or NULL */
} sim_bn;

static double sim_la_getd(xrt_dtype t, const void *base, int64_t i) {
  sim_num v;
  sim_load(t, (const char *)base + (size_t)i * sim_esize(t), &v);
  return v.re;
}

static void sim_la_putd(xrt_dtype t, void *base, int64_t i, double d) {
  sim_num v = {d, 0, 0, 0};
  sim_store(t, (char *)base + (size_t)i * sim_esize(t), &v);
}

static int64_t sim_bn_at(const sim_bn *b, int64_t o, int64_t f, int64_t i) {
  return (o * b->F + f) * b->inner + i;
}

/* Per feature f: sum of x (and of (x - mean)^2 when mean is given). */
static double sim_bn_sum(const sim_bn *b, const void *x, int64_t f,
                         const double *center) {
  double s = 0;
  for (int64_t o = 0; o < b->outer; o++)
    for (int64_t i = 0; i < b->inner; i++) {
      double v = sim_la_getd(b->t, x, sim_bn_at(b, o, f, i));
      if (center) v = (v - *center) * (v - *center);
      s += v;
    }
  return s;
}

static void sim_bn_normalize(const sim_bn *b, const void *x, void *y,
                             int64_t f, double scale, double offset,
                             double mean, double var) {
  double sd = sqrt(var + b->eps);
  for (int64_t o = 0; o < b->outer; o++)
    for (int64_t i = 0; i < b->inner; i++) {
      int64_t at = sim_bn_at(b, o, f, i);
      double v = (sim_la_getd(b->t, x, at) - mean) / sd;
      sim_la_putd(b->t, y, at, scale * v + offset);
    }
}

/* The fast batch_norm_inference for f32 and f64: the same operations on
 * the same doubles in the same order as sim_bn_normalize (subtract the
 * mean, divide by sqrt(var + eps), multiply by the scale, add the offset,
 * each rounded to double; then one rounding to the type), so the results
 * are the same bit for bit, but without per-element type dispatch and
 * with the contiguous dimension innermost.  k holds per feature f the
 * mean k[f], sd k[F + f], scale k[2F + f] and offset k[3F + f].  The
 * product and the sum are separate statements so that no compiler fuses
 * them into one FMA.  Items [begin, end) are rows of F features (inner
 * 1: feature innermost, NHWC) or runs of inner elements of one feature
 * (NCHW).  Compiled once per instruction set (sim_isa_level). */
#if defined(__GNUC__)
typedef double sim_bn_d8 __attribute__((vector_size(64)));
typedef float sim_bn_f8 __attribute__((vector_size(32)));

#define SIM_BN_ONE(T, X, M, SD, SC, OF)                                       \
  do {                                                                        \
    double v_ = ((double)(X) - (M)) / (SD);                                   \
    double p_ = (SC) * v_;                                                    \
    r_ = (T)(p_ + (OF));                                                      \
  } while (0)

/* 8 elements: xs (T) to ys with per-lane constants. */
#define SIM_BN_VEC8(T, xs, ys, M, SD, SC, OF)                                 \
  do {                                                                        \
    sim_bn_d8 xd_;                                                            \
    if (sizeof(T) == 4) {                                                     \
      sim_bn_f8 xf_;                                                          \
      memcpy(&xf_, xs, sizeof xf_);                                           \
      xd_ = __builtin_convertvector(xf_, sim_bn_d8);                          \
    } else {                                                                  \
      memcpy(&xd_, xs, sizeof xd_);                                           \
    }                                                                         \
    sim_bn_d8 v_ = (xd_ - (M)) / (SD);                                        \
    sim_bn_d8 p_ = (SC) * v_;                                                 \
    sim_bn_d8 r_ = p_ + (OF);                                                 \
    if (sizeof(T) == 4) {                                                     \
      sim_bn_f8 rf_ = __builtin_convertvector(r_, sim_bn_f8);                 \
      memcpy(ys, &rf_, sizeof rf_);                                           \
    } else {                                                                  \
      memcpy(ys, &r_, sizeof r_);                                             \
    }                                                                         \
  } while (0)

#define SIM_BN_FAST(NAME, T, ATTR)                                            \
  ATTR static void NAME(const sim_bn *b, const void *xv, void *yv,            \
                        const double *k, int64_t begin, int64_t end) {       \
    const T *x = (const T *)xv;                                               \
    T *y = (T *)yv;                                                           \
    int64_t F = b->F, n = b->inner;                                           \
    const double *m = k, *sd = k + F, *sc = k + 2 * F, *of = k + 3 * F;       \
    if (n == 1) {                                                             \
      for (int64_t o = begin; o < end; o++) {                                 \
        const T *xr = x + o * F;                                              \
        T *yr = y + o * F;                                                    \
        int64_t f = 0;                                                        \
        for (; f + 8 <= F; f += 8) {                                          \
          sim_bn_d8 mv, sv, cv, ov;                                           \
          memcpy(&mv, m + f, sizeof mv);                                      \
          memcpy(&sv, sd + f, sizeof sv);                                     \
          memcpy(&cv, sc + f, sizeof cv);                                     \
          memcpy(&ov, of + f, sizeof ov);                                     \
          SIM_BN_VEC8(T, xr + f, yr + f, mv, sv, cv, ov);                     \
        }                                                                     \
        for (; f < F; f++) {                                                  \
          T r_;                                                               \
          SIM_BN_ONE(T, xr[f], m[f], sd[f], sc[f], of[f]);                    \
          yr[f] = r_;                                                         \
        }                                                                     \
      }                                                                       \
      return;                                                                 \
    }                                                                         \
    for (int64_t it = begin; it < end; it++) { /* it = o * F + f */           \
      int64_t f = it % F;                                                     \
      const T *xr = x + it * n;                                               \
      T *yr = y + it * n;                                                     \
      sim_bn_d8 mv = (sim_bn_d8){0} + m[f], sv = (sim_bn_d8){0} + sd[f];      \
      sim_bn_d8 cv = (sim_bn_d8){0} + sc[f], ov = (sim_bn_d8){0} + of[f];     \
      int64_t i = 0;                                                          \
      for (; i + 8 <= n; i += 8) SIM_BN_VEC8(T, xr + i, yr + i, mv, sv, cv, ov); \
      for (; i < n; i++) {                                                    \
        T r_;                                                                 \
        SIM_BN_ONE(T, xr[i], m[f], sd[f], sc[f], of[f]);                      \
        yr[i] = r_;                                                           \
      }                                                                       \
    }                                                                         \
  }

SIM_BN_FAST(sim_bn_fast_f32, float, )
SIM_BN_FAST(sim_bn_fast_f64, double, )
#if SIM_X86
#define SIM_BN_X86 1
SIM_BN_FAST(sim_bn_fast_f32_avx2, float, __attribute__((target("avx2"))))
SIM_BN_FAST(sim_bn_fast_f64_avx2, double, __attribute__((target("avx2"))))
SIM_BN_FAST(sim_bn_fast_f32_avx512, float, __attribute__((target("avx512f"))))
SIM_BN_FAST(sim_bn_fast_f64_avx512, double, __attribute__((target("avx512f"))))
#endif

/* The fast kernel for type t at the running CPU's level, or NULL. */
static sim_bn_fast_fn sim_bn_fast_pick(xrt_dtype t) {
  if (t != XRT_F32 && t != XRT_F64) return NULL;
  int f32 = t == XRT_F32;
#if SIM_BN_X86
  int level = sim_isa_level();
  if (level >= 2) return f32 ? sim_bn_fast_f32_avx512 : sim_bn_fast_f64_avx512;
  if (level >= 1) return f32 ? sim_bn_fast_f32_avx2 : sim_bn_fast_f64_avx2;
#endif
  return f32 ? sim_bn_fast_f32 : sim_bn_fast_f64;
}
#else
static sim_bn_fast_fn sim_bn_fast_pick(xrt_dtype t) {
  (void)t;
  return NULL;
}
#endif

typedef struct sim_bn_job {
  const sim_bn *b;
  const void *x;
  void *y;
  const double *k;
} sim_bn_job;

static void sim_bn_fast_range(void *ctx, int64_t begin, int64_t end) {
  const sim_bn_job *j = (const sim_bn_job *)ctx;
  j->b->fast(j->b, j->x, j->y, j->k, begin, end);
}

static xrt_status sim_run_bn_inference(const sim_step *st, void **vals,
                                       sim_cx *cx) {
  const sim_bn *b = (const sim_bn *)st->data;
  if (b->fast) {
    double *k = (double *)vals[b->work];
    int64_t F = b->F;
    for (int64_t f = 0; f < F; f++) {
      k[f] = sim_la_getd(b->t, vals[st->in[3]], f);
      k[F + f] = sqrt(sim_la_getd(b->t, vals[st->in[4]], f) + b->eps);
      k[2 * F + f] = sim_la_getd(b->t, vals[st->in[1]], f);
      k[3 * F + f] = sim_la_getd(b->t, vals[st->in[2]], f);
    }
    sim_bn_job j = {b, vals[st->in[0]], vals[st->out[0]], k};
    /* Items: rows of F (feature innermost) or runs of inner; chunks of
     * at least 16K elements. */
    int64_t per = b->inner == 1 ? F : b->inner;
    int64_t items = b->inner == 1 ? b->outer : b->outer * F;
    int64_t grain = per >= 16384 ? 1 : 16384 / per;
    sim_parallel_for(cx, items, grain, sim_bn_fast_range, &j);
    return XRT_OK;
  }
  for (int64_t f = 0; f < b->F; f++)
    sim_bn_normalize(b, vals[st->in[0]], vals[st->out[0]], f,
                     sim_la_getd(b->t, vals[st->in[1]], f),
                     sim_la_getd(b->t, vals[st->in[2]], f),
                     sim_la_getd(b->t, vals[st->in[3]], f),
                     sim_la_getd(b->t, vals[st->in[4]], f));
  return XRT_OK;
}

static xrt_status sim_run_bn_training(const sim_step *st, void **vals,
                                      sim_cx *cx) {
  const sim_bn *b = (const sim_bn *)st->data;
  double n = (double)(b->outer * b->inner);
  (void)cx;
  for (int64_t f = 0; f < b->F; f++) {
    const void *x = vals[st->in[0]];
    double mean = sim_bn_sum(b, x, f, NULL) / n;
    double var = sim_bn_sum(b, x, f, &mean) / n;
    sim_bn_normalize(b, x, vals[st->out[0]], f,
                     sim_la_getd(b->t, vals[st->in[1]], f),
                     sim_la_getd(b->t, vals[st->in[2]], f), mean, var);
    sim_la_putd(b->t, vals[st->out[1]], f, mean);
    sim_la_putd(b->t, vals[st->out[2]], f, var);
  }
  return XRT_OK;
}

/* The spec's decomposition (XLA's batchnorm_expander). */
static xrt_status sim_run_bn_grad(const sim_step *st, void **vals,
                                  sim_cx *cx) {
  const sim_bn *b = (const sim_bn *)st->data;
  const void *x = vals[st->in[0]], *dy = vals[st->in[4]];
  double n = (double)(b->outer * b->inner);
  (void)cx;
  for (int64_t f = 0; f < b->F; f++) {
    double scale = sim_la_getd(b->t, vals[st->in[1]], f);
    double mean = sim_la_getd(b->t, vals[st->in[2]], f);
    double ve = sim_la_getd(b->t, vals[st->in[3]], f) + b->eps;
    double sd = sqrt(ve), sum_dy = 0, sum_dyc = 0;
    for (int64_t o = 0; o < b->outer; o++)
      for (int64_t i = 0; i < b->inner; i++) {
        int64_t at = sim_bn_at(b, o, f, i);
        double g = sim_la_getd(b->t, dy, at);
        sum_dy += g;
        sum_dyc += g * (sim_la_getd(b->t, x, at) - mean);
      }
    for (int64_t o = 0; o < b->outer; o++)
      for (int64_t i = 0; i < b->inner; i++) {
        int64_t at = sim_bn_at(b, o, f, i);
        double c = sim_la_getd(b->t, x, at) - mean;
        double i1 = sim_la_getd(b->t, dy, at) * n, i5 = sum_dyc * c / ve;
        sim_la_putd(b->t, vals[st->out[0]], at,
                    scale / sd / n * (i1 - sum_dy - i5));
      }
    sim_la_putd(b->t, vals[st->out[1]], f, sum_dyc / sd);
    sim_la_putd(b->t, vals[st->out[2]], f, sum_dy);
  }
  return XRT_OK;
}

/* Checks the 1-D operands and results (size F) and sets up b. */
static xrt_status sim_lower_bn(sim_fcc *fc, const xrt_ir_op *op, sim_step *st,
                               int nops, int nres, unsigned full_mask,
                               sim_run_fn run) {
  if (op->num_operands != nops || op->num_results != nres)
    return sim_fail_op(fc->cc->err, op, XRT_INVALID_ARGUMENT, "bad %s",
                       op->name);
  const xrt_shape *X = sim_shape(fc, op->operands[0]);
  int64_t fi = 0;
  xrt_status rc = sim_int_attr(fc, op, "feature_index", &fi);
  if (rc) return rc;
  const xrt_ir_attr *e = sim_attr(op, "epsilon", XRT_ATTR_FLOAT);
  if (fi < 0 || fi >= X->rank)
    return sim_fail_op(fc->cc->err, op, XRT_INVALID_ARGUMENT, "%s: "
                       "feature_index %lld is out of range", op->name,
                       (long long)fi);
  if (!sim_dtype_is_float(X->dtype)) return sim_unsupported_type(fc, op, X->dtype);
  sim_bn *b = (sim_bn *)sim_palloc(fc, sizeof *b);
  if (!b) return XRT_RESOURCE_EXHAUSTED;
  b->t = X->dtype;
  b->eps = e ? (double)(float)e->f : 0.0; /* epsilon is an f32 */
  b->F = X->dims[fi];
  b->outer = b->inner = 1;
  for (int32_t d = 0; d < fi; d++) b->outer *= X->dims[d];
  for (int32_t d = (int32_t)fi + 1; d < X->rank; d++) b->inner *= X->dims[d];
  for (int i = 0; i < nops + nres; i++) {
    int32_t id = i < nops ? op->operands[i] : op->results[i - nops];
    const xrt_shape *s = sim_shape(fc, id);
    int full = (full_mask >> i) & 1u;
    if (s->dtype != X->dtype || (full ? sim_numel(s) != sim_numel(X)
                                      : s->rank != 1 || s->dims[0] != b->F))
      return sim_fail_op(fc->cc->err, op, XRT_INVALID_ARGUMENT, "%s: "
                         "operand and result shapes do not agree", op->name);
  }
  b->fast = NULL;
  if (run == sim_run_bn_inference && b->F > 0 &&
      (b->fast = sim_bn_fast_pick(b->t)) != NULL &&
      (b->F > (int64_t)(SIZE_MAX / 32) ||
       sim_temp(fc, sizeof(double) * 4 * (size_t)b->F, &b->work)))
    b->fast = NULL; /* the per-element path needs no scratch */
  st->data = b;
  st->run = run;
  return XRT_OK;
}

SIM_PRIVATE xrt_status sim_lower_batch_norm_inference(sim_fcc *fc,
                                                 const xrt_ir_op *op,
                                                 sim_step *st) {
  return sim_lower_bn(fc, op, st, 5, 1, 0x21u, sim_run_bn_inference);
}

SIM_PRIVATE xrt_status sim_lower_batch_norm_training(sim_fcc *fc,
                                                const xrt_ir_op *op,
                                                sim_step *st) {
  return sim_lower_bn(fc, op, st, 3, 3, 0x09u, sim_run_bn_training);
}

SIM_PRIVATE xrt_status sim_lower_batch_norm_grad(sim_fcc *fc, const xrt_ir_op *op,
                                            sim_step *st) {
  return sim_lower_bn(fc, op, st, 5, 3, 0x31u, sim_run_bn_grad);
}
