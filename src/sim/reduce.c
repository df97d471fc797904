/*
 * src/sim/reduce.c - reduce.
 * Part of the simulated device; MIT licensed, see LICENSE.
 */
#include "internal.h"

#define SIM_RED_DEF(NAME, T, COMB)                                          \
  static void NAME(void *accp, const void *inp, int64_t n, int vec) {       \
    T *acc = (T *)accp;                                                     \
    const T *in = (const T *)inp;                                           \
    if (vec) {                                                              \
      for (int64_t i = 0; i < n; i++) {                                     \
        T a = acc[i], b = in[i];                                            \
        acc[i] = (T)(COMB);                                                 \
      }                                                                     \
      return;                                                               \
    }                                                                       \
    T a = *acc;                                                             \
    for (int64_t i = 0; i < n; i++) {                                       \
      T b = in[i];                                                          \
      a = (T)(COMB);                                                        \
    }                                                                       \
    *acc = a;                                                               \
  }

SIM_RED_DEF(sim_red_add_f32, float, a + b)
SIM_RED_DEF(sim_red_mul_f32, float, a * b)
SIM_RED_DEF(sim_red_max_f32, float, SIM_FMAX(a, b, a, b))
SIM_RED_DEF(sim_red_min_f32, float, SIM_FMIN(a, b, a, b))
SIM_RED_DEF(sim_red_add_f64, double, a + b)
SIM_RED_DEF(sim_red_mul_f64, double, a * b)
SIM_RED_DEF(sim_red_max_f64, double, SIM_FMAX(a, b, a, b))
SIM_RED_DEF(sim_red_min_f64, double, SIM_FMIN(a, b, a, b))

/* Whether fn is the f32 add (1), the f64 add (2) or another kernel (0):
 * collectives fold those two adds with vector loops of their own. */
SIM_PRIVATE int sim_red_add_kind(sim_red_fn fn) {
  return fn == sim_red_add_f32 ? 1 : fn == sim_red_add_f64 ? 2 : 0;
}
/* f16/bf16 round after every step, as the body would (an f32 add/mul of
 * two halves rounds correctly to half). */
SIM_RED_DEF(sim_red_add_f16, uint16_t,
            xrt_f32_to_f16(xrt_f16_to_f32(a) + xrt_f16_to_f32(b)))
SIM_RED_DEF(sim_red_mul_f16, uint16_t,
            xrt_f32_to_f16(xrt_f16_to_f32(a) * xrt_f16_to_f32(b)))
SIM_RED_DEF(sim_red_max_f16, uint16_t,
            SIM_FMAX(a, b, xrt_f16_to_f32(a), xrt_f16_to_f32(b)))
SIM_RED_DEF(sim_red_min_f16, uint16_t,
            SIM_FMIN(a, b, xrt_f16_to_f32(a), xrt_f16_to_f32(b)))
SIM_RED_DEF(sim_red_add_bf16, uint16_t,
            xrt_f32_to_bf16(xrt_bf16_to_f32(a) + xrt_bf16_to_f32(b)))
SIM_RED_DEF(sim_red_mul_bf16, uint16_t,
            xrt_f32_to_bf16(xrt_bf16_to_f32(a) * xrt_bf16_to_f32(b)))
SIM_RED_DEF(sim_red_max_bf16, uint16_t,
            SIM_FMAX(a, b, xrt_bf16_to_f32(a), xrt_bf16_to_f32(b)))
SIM_RED_DEF(sim_red_min_bf16, uint16_t,
            SIM_FMIN(a, b, xrt_bf16_to_f32(a), xrt_bf16_to_f32(b)))

/* Integers: add/mul/and/or wrap identically for signed and unsigned, so
 * they run on unsigned types (no signed overflow). */
#define SIM_RED_INTS(BITS, W)                                                  \
  SIM_RED_DEF(sim_red_add_u##BITS, uint##BITS##_t, (W)a + (W)b)                \
  SIM_RED_DEF(sim_red_mul_u##BITS, uint##BITS##_t, (W)a * (W)b)                \
  SIM_RED_DEF(sim_red_and_u##BITS, uint##BITS##_t, a & b)                      \
  SIM_RED_DEF(sim_red_or_u##BITS, uint##BITS##_t, a | b)                       \
  SIM_RED_DEF(sim_red_max_u##BITS, uint##BITS##_t, a > b ? a : b)              \
  SIM_RED_DEF(sim_red_min_u##BITS, uint##BITS##_t, a < b ? a : b)              \
  SIM_RED_DEF(sim_red_max_s##BITS, int##BITS##_t, a > b ? a : b)               \
  SIM_RED_DEF(sim_red_min_s##BITS, int##BITS##_t, a < b ? a : b)
SIM_RED_INTS(8, uint32_t)
SIM_RED_INTS(16, uint32_t)
SIM_RED_INTS(32, uint32_t)
SIM_RED_INTS(64, uint64_t)

#define SIM_RED_PICK_INT(BITS, SIGNED)                                        \
  switch (code) {                                                             \
  case XRT_OP_ADD: return sim_red_add_u##BITS;                                \
  case XRT_OP_MULTIPLY: return sim_red_mul_u##BITS;                           \
  case XRT_OP_AND: return sim_red_and_u##BITS;                                \
  case XRT_OP_OR: return sim_red_or_u##BITS;                                  \
  case XRT_OP_MAXIMUM: return SIGNED ? sim_red_max_s##BITS : sim_red_max_u##BITS; \
  case XRT_OP_MINIMUM: return SIGNED ? sim_red_min_s##BITS : sim_red_min_u##BITS; \
  default: return NULL;                                                       \
  }

#define SIM_RED_PICK_FLT(SUF)                                                 \
  switch (code) {                                                             \
  case XRT_OP_ADD: return sim_red_add_##SUF;                                  \
  case XRT_OP_MULTIPLY: return sim_red_mul_##SUF;                             \
  case XRT_OP_MAXIMUM: return sim_red_max_##SUF;                              \
  case XRT_OP_MINIMUM: return sim_red_min_##SUF;                              \
  default: return NULL;                                                       \
  }

/* The typed loop for a body that is one binary op, or NULL. */
SIM_PRIVATE sim_red_fn sim_red_pick(xrt_opcode code, xrt_dtype t) {
  switch (t) {
  case XRT_F32: SIM_RED_PICK_FLT(f32)
  case XRT_F64: SIM_RED_PICK_FLT(f64)
  case XRT_F16: SIM_RED_PICK_FLT(f16)
  case XRT_BF16: SIM_RED_PICK_FLT(bf16)
  case XRT_S8: SIM_RED_PICK_INT(8, 1)
  case XRT_U8: SIM_RED_PICK_INT(8, 0)
  case XRT_S16: SIM_RED_PICK_INT(16, 1)
  case XRT_U16: SIM_RED_PICK_INT(16, 0)
  case XRT_S32: SIM_RED_PICK_INT(32, 1)
  case XRT_U32: SIM_RED_PICK_INT(32, 0)
  case XRT_S64: SIM_RED_PICK_INT(64, 1)
  case XRT_U64: SIM_RED_PICK_INT(64, 0)
  case XRT_PRED:
    if (code == XRT_OP_AND || code == XRT_OP_MINIMUM) return sim_red_and_u8;
    if (code == XRT_OP_OR || code == XRT_OP_MAXIMUM) return sim_red_or_u8;
    return NULL;
  default: return NULL;
  }
}

/* Runs the body for output element o and input element i. */
static xrt_status sim_reduce_elem(const sim_step *st, const sim_reduce *r,
                                  void **vals, sim_cx *cx, int64_t o,
                                  int64_t i) {
  int32_t n = r->n;
  for (int32_t j = 0; j < n; j++) {
    vals[r->bargs[j]] = (char *)vals[st->out[j]] + (size_t)o * r->es[j];
    vals[r->bargs[n + j]] = (char *)vals[st->in[j]] + (size_t)i * r->es[j];
  }
  xrt_status rc = sim_run_plan(&r->body, vals, cx);
  if (rc) return rc;
  if (n == 1) {
    memmove(vals[r->bargs[0]], vals[r->brets[0]], r->es[0]);
    return XRT_OK;
  }
  /* Through tmp: a result may be another accumulator. */
  char *tmp = (char *)vals[r->tmp];
  for (int32_t j = 0; j < n; j++)
    memcpy(tmp + r->toff[j], vals[r->brets[j]], r->es[j]);
  for (int32_t j = 0; j < n; j++)
    memcpy(vals[r->bargs[j]], tmp + r->toff[j], r->es[j]);
  return XRT_OK;
}

/* One innermost run of len input elements starting at i. */
static xrt_status sim_reduce_run_inner(const sim_step *st,
                                       const sim_reduce *r, void **vals,
                                       sim_cx *cx, int64_t o, int64_t i,
                                       int64_t len, int vec) {
  if (r->fast) {
    r->fast((char *)vals[st->out[0]] + (size_t)o * r->es[0],
            (const char *)vals[st->in[0]] + (size_t)i * r->es[0], len, vec);
    return XRT_OK;
  }
  for (int64_t k = 0; k < len; k++) {
    xrt_status rc = sim_reduce_elem(st, r, vals, cx, vec ? o + k : o, i + k);
    if (rc) return rc;
  }
  return XRT_OK;
}

SIM_PRIVATE xrt_status sim_run_reduce(const sim_step *st, void **vals,
                                 sim_cx *cx) {
  const sim_reduce *r = (const sim_reduce *)st->data;
  for (int32_t j = 0; j < r->n; j++)
    r->fill[j]((char *)vals[st->out[j]], (const char *)vals[st->in[r->n + j]],
               r->out_numel);
  if (r->in_numel == 0) return XRT_OK;
  int last = r->rank - 1;
  int64_t len = r->dims[last], idx[XRT_MAX_RANK], o = 0, i = 0;
  int vec = r->ostr[last] != 0;
  memset(idx, 0, sizeof idx);
  for (;;) {
    xrt_status rc = sim_reduce_run_inner(st, r, vals, cx, o, i, len, vec);
    if (rc) return rc;
    i += len;
    int k = last - 1;
    for (; k >= 0; k--) {
      o += r->ostr[k];
      if (++idx[k] < r->dims[k]) break;
      o -= r->ostr[k] * r->dims[k];
      idx[k] = 0;
    }
    if (k < 0) return XRT_OK;
  }
}
