/*
 * src/sim/quant.c - the simulator's kernel for quantized tensors
 * (!quant.uniform operands or results, uniform_quantize/dequantize).
 * Part of the simulated device; MIT licensed, see LICENSE.
 */
#include "internal.h"

/* Rounds d to the float type t (the expressed type of a computation). */
static double sim_q_rnd(xrt_dtype t, double d) {
  switch (t) {
  case XRT_F32: return (double)(float)d;
  case XRT_F16: return xrt_f16_to_f32(xrt_f64_to_f16(d));
  case XRT_BF16: return xrt_bf16_to_f32(xrt_f64_to_bf16(d));
  case XRT_F64: return d;
  default: return sim_is_mf(t) ? sim_mf_dec1(t, sim_mf_enc(t, d)) : d;
  }
}

/* Element i of a buffer of type t as a double (floats) or integer. */
static double sim_q_ldf(xrt_dtype t, const void *p, size_t i) {
  switch (t) {
  case XRT_F32: return sim_ld_f32(p, i);
  case XRT_F64: return sim_ld_f64(p, i);
  case XRT_F16: return sim_ld_f16(p, i);
  case XRT_BF16: return sim_ld_bf16(p, i);
  default: return sim_mf_dec1(t, ((const uint8_t *)p)[i]);
  }
}
static int64_t sim_q_ldi(xrt_dtype t, const void *p, size_t i) {
  switch (t) {
  case XRT_S2: case XRT_S4: case XRT_S8: return sim_ld_s8(p, i);
  case XRT_S16: return sim_ld_s16(p, i);
  case XRT_S32: return sim_ld_s32(p, i);
  case XRT_S64: return sim_ld_s64(p, i);
  case XRT_U2: case XRT_U4: case XRT_U8: return (int64_t)sim_ld_u8(p, i);
  case XRT_U16: return (int64_t)sim_ld_u16(p, i);
  case XRT_U32: return (int64_t)sim_ld_u32(p, i);
  default: return (int64_t)sim_ld_u64(p, i);
  }
}
static void sim_q_sti(xrt_dtype t, void *p, size_t i, int64_t v) {
  switch (t) {
  case XRT_S2: sim_st_s2_i(p, i, v); break;
  case XRT_S4: sim_st_s4_i(p, i, v); break;
  case XRT_S8: sim_st_s8_i(p, i, v); break;
  case XRT_S16: sim_st_s16_i(p, i, v); break;
  case XRT_S32: sim_st_s32_i(p, i, v); break;
  case XRT_S64: sim_st_s64_i(p, i, v); break;
  case XRT_U2: sim_st_u2_i(p, i, v); break;
  case XRT_U4: sim_st_u4_i(p, i, v); break;
  case XRT_U8: sim_st_u8_i(p, i, v); break;
  case XRT_U16: sim_st_u16_i(p, i, v); break;
  case XRT_U32: sim_st_u32_i(p, i, v); break;
  default: sim_st_u64_i(p, i, v); break;
  }
}
static void sim_q_stf(xrt_dtype t, void *p, size_t i, double v) {
  switch (t) {
  case XRT_F32: sim_st_f32_f(p, i, v); break;
  case XRT_F64: sim_st_f64_f(p, i, v); break;
  case XRT_F16: sim_st_f16_f(p, i, v); break;
  case XRT_BF16: sim_st_bf16_f(p, i, v); break;
  case XRT_PRED: sim_st_pred_f(p, i, v); break;
  default: ((uint8_t *)p)[i] = sim_mf_enc(t, v); break;
  }
}

static inline size_t sim_q_axis(const sim_qv *q, size_t i) {
  return q->dim > 1 ? (i / q->stride) % q->dim : 0;
}

/* The value of element i in the expressed type. */
static double sim_q_load(const sim_qv *q, const void *p, size_t i) {
  if (!q->quant) return sim_q_ldf(q->dt, p, i);
  size_t k = sim_q_axis(q, i);
  /* wraps (no UB) only for zero points the verifier rejects */
  int64_t d = (int64_t)((uint64_t)sim_q_ldi(q->dt, p, i) - (uint64_t)q->zps[k]);
  return sim_q_rnd(q->ex, (double)d * sim_q_rnd(q->ex, q->scales[k]));
}

static void sim_q_store(const sim_qv *q, void *p, size_t i, double x) {
  if (!q->quant) {
    sim_q_stf(q->dt, p, i, x);
    return;
  }
  size_t k = sim_q_axis(q, i);
  double s = sim_q_rnd(q->ex, q->scales[k]);
  double y = sim_q_rnd(q->ex, sim_q_rnd(q->ex, x / s) + (double)q->zps[k]);
  double lo = (double)q->smin, hi = (double)q->smax;
  y = y != y ? 0 : y < lo ? lo : y > hi ? hi : y; /* NaN: zero, as convert */
  sim_q_sti(q->dt, p, i, (int64_t)sim_reven(y));
}

static double sim_q_apply(int e, double x, double y) {
  switch (e) {
#define SIM_Q_B(OP) case SIM_EW_##OP: return (double)SIM_F_##OP(x, y);
#define SIM_Q_U(OP) case SIM_EW_##OP: return (double)SIM_F_##OP(x);
    SIM_FLT_BIN_OPS(SIM_Q_B) SIM_FLT_BIN_DOPS(SIM_Q_B)
    SIM_FLT_UN_OPS(SIM_Q_U) SIM_FLT_UN_DOPS(SIM_Q_U)
#undef SIM_Q_B
#undef SIM_Q_U
  default: return x; /* uniform_quantize / uniform_dequantize */
  }
}

static int sim_q_cmp(int dir, double x, double y) {
  switch (dir) {
  case SIM_EQ: return x == y;
  case SIM_NE: return x != y;
  case SIM_GE: return x >= y;
  case SIM_GT: return x > y;
  case SIM_LE: return x <= y;
  default: return x < y;
  }
}

static void sim_q_one(const sim_q *c, void *const *in, void *out, size_t i) {
  double x = sim_q_load(&c->v[0], in[0], i);
  double y = c->nin > 1 ? sim_q_load(&c->v[1], in[1], i) : 0;
  if (c->e == SIM_Q_COMPARE) {
    ((uint8_t *)out)[i] = (uint8_t)sim_q_cmp(c->dir, x, y);
    return;
  }
  double r = sim_q_apply(c->e, x, y);
  const sim_qv *res = &c->v[c->nin];
  sim_q_store(res, out, i, sim_q_rnd(res->quant ? res->ex : res->dt, r));
}

SIM_PRIVATE void sim_q_run(void *const *in, void *out, size_t n, const void *ctx) {
  const sim_q *c = (const sim_q *)ctx;
  if (c->back) {
    for (size_t i = n; i-- > 0;) sim_q_one(c, in, out, i);
  } else {
    for (size_t i = 0; i < n; i++) sim_q_one(c, in, out, i);
  }
}

static int sim_q_is_storage(xrt_dtype t) {
  enum sim_ew_class c = sim_ew_class(t);
  return c == SIM_EWC_SIGNED || c == SIM_EWC_UNSIGNED;
}

/* Describes value v for the quantized kernel; 0 if its type is unusable. */
SIM_PRIVATE int sim_q_value(const xrt_ir_type *ty, sim_qv *q) {
  memset(q, 0, sizeof *q);
  q->dt = q->ex = ty->shape.dtype;
  q->dim = 1, q->stride = 1;
  const xrt_ir_quant *u = ty->quant;
  if (!u) return sim_dtype_is_float(q->dt) || q->dt == XRT_PRED;
  if (!sim_q_is_storage(u->storage) || u->storage != q->dt ||
      !sim_dtype_is_float(u->expressed) || u->num_scales < 1 || !u->scales ||
      !u->zero_points)
    return 0;
  q->quant = 1, q->ex = u->expressed;
  q->smin = u->storage_min, q->smax = u->storage_max;
  q->scales = u->scales, q->zps = u->zero_points;
  if (u->axis >= 0) {
    if (u->axis >= ty->shape.rank || ty->shape.dims[u->axis] != u->num_scales)
      return 0;
    q->dim = (size_t)u->num_scales;
    for (int32_t d = u->axis + 1; d < ty->shape.rank; d++)
      q->stride *= (size_t)ty->shape.dims[d];
  }
  return 1;
}

/* Kernel for uniform_quantize / uniform_dequantize and for float ops with
 * quantized operands or results. */
SIM_PRIVATE sim_ew_fn sim_ew_quant(const xrt_allocator *al,
                                   const xrt_ir_func *f, const xrt_ir_op *op,
                                   int e, int arity, const void **ctx_out,
                                   int *ctx_owned, char *why, size_t whycap) {
  sim_q c;
  memset(&c, 0, sizeof c);
  c.nin = arity;
  c.e = op->code == XRT_OP_UNIFORM_QUANTIZE     ? SIM_Q_QUANTIZE
        : op->code == XRT_OP_UNIFORM_DEQUANTIZE ? SIM_Q_DEQUANTIZE
        : op->code == XRT_OP_COMPARE            ? SIM_Q_COMPARE
                                                : e;
  int known = c.e <= SIM_Q_QUANTIZE; /* reduce_precision, convert: no */
#define SIM_Q_K(OP) known |= e == SIM_EW_##OP;
  SIM_FLT_BIN_OPS(SIM_Q_K) SIM_FLT_BIN_DOPS(SIM_Q_K)
  SIM_FLT_UN_OPS(SIM_Q_K) SIM_FLT_UN_DOPS(SIM_Q_K)
#undef SIM_Q_K
  if (!known)
    return sim_ew_unsup(f, op, op->operands[0], op->results[0],
                        " (quantized)", why, whycap);
  size_t rsz = sim_ew_size(f->value_types[op->results[0]].shape.dtype);
  for (int k = 0; k <= arity; k++) {
    int32_t v = k < arity ? op->operands[k] : op->results[0];
    if (!sim_q_value(&f->value_types[v], &c.v[k]))
      return sim_ew_unsup(f, op, v, -1, " (quantized)", why, whycap);
    if (k < arity && sim_ew_size(c.v[k].dt) < rsz) c.back = 1;
  }
  const sim_qv *r = &c.v[arity];
  if (c.e == SIM_Q_COMPARE) {
    static const char *const dirs[SIM_NDIRS] = {"EQ", "NE", "GE",
                                                "GT", "LE", "LT"};
    const xrt_ir_attr *d = xrt_ir_op_attr(op, "comparison_direction");
    c.dir = -1;
    for (int k = 0; d && d->s && k < SIM_NDIRS; k++)
      if (!strcmp(d->s, dirs[k])) c.dir = k;
    if (c.dir < 0 || r->dt != XRT_PRED || r->quant)
      return sim_ew_unsup(f, op, op->operands[0], op->results[0], "", why,
                          whycap);
  } else if (r->dt == XRT_PRED || (c.e == SIM_Q_QUANTIZE && !r->quant) ||
             (c.e == SIM_Q_DEQUANTIZE && (r->quant || !c.v[0].quant))) {
    return sim_ew_unsup(f, op, op->operands[0], op->results[0], "", why,
                        whycap);
  }
  for (int k = 0; k < arity; k++)
    if (c.v[k].dt == XRT_PRED)
      return sim_ew_unsup(f, op, op->operands[k], -1, "", why, whycap);
  sim_q *m = (sim_q *)al->alloc(al->self, sizeof *m);
  if (!m) return sim_ew_oom(ctx_owned, why, whycap);
  *m = c;
  *ctx_out = m;
  *ctx_owned = 1;
  return sim_q_run;
}
