/*
 * src/sim/batchnorm.c - batch_norm_inference, batch_norm_training
 * and batch_norm_grad.
 * Part of the simulated device; MIT licensed, see LICENSE.
 */
#include "internal.h"

/* Elements of operand at (o, f, i) are at (o * F + f) * inner + i, with f
 * along feature_index.  Computed in double precision, rounded once. */
typedef struct sim_bn {
  int64_t outer, F, inner;
  double eps;
  xrt_dtype t;
  int32_t work; /* pseudo value: per-feature doubles */
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

static xrt_status sim_run_bn_inference(const sim_step *st, void **vals,
                                       sim_cx *cx) {
  const sim_bn *b = (const sim_bn *)st->data;
  (void)cx;
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
