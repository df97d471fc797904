/*
 * src/sim/linalg.c - what the linear algebra and numerics files
 * share: dot-product kernels by compute type, operands converted to and
 * from the compute type, attribute and element helpers.
 * Part of the simulated device; MIT licensed, see LICENSE.
 */
#include "internal.h"

#define SIM_LA_DOTN(NAME, T, FIELD, LD, MAC)                                 \
  static void NAME(sim_la_acc *acc, const char *a, ptrdiff_t as,            \
                   const char *b, ptrdiff_t bs, int64_t n) {                \
    for (int64_t i = 0; i < n; i++, a += as, b += bs)                       \
      MAC(acc->FIELD, LD(*(const T *)(const void *)a),                      \
          LD(*(const T *)(const void *)b));                                 \
  }
#define SIM_LA_MAC_PRED(acc, a, b) ((acc) = (uint8_t)((acc) | ((a) & (b))))

SIM_LA_DOTN(sim_la_dotn_f32, float, f, SIM_LD_ID, SIM_MAC_F)
SIM_LA_DOTN(sim_la_dotn_f64, double, d, SIM_LD_ID, SIM_MAC_F)
SIM_LA_DOTN(sim_la_dotn_f16, uint16_t, f, SIM_LD_F16, SIM_MAC_F)
SIM_LA_DOTN(sim_la_dotn_bf16, uint16_t, f, SIM_LD_BF16, SIM_MAC_F)
SIM_LA_DOTN(sim_la_dotn_u8, uint8_t, u32, SIM_LD_ID, SIM_MAC_U32)
SIM_LA_DOTN(sim_la_dotn_u16, uint16_t, u32, SIM_LD_ID, SIM_MAC_U32)
SIM_LA_DOTN(sim_la_dotn_u32, uint32_t, u32, SIM_LD_ID, SIM_MAC_U32)
SIM_LA_DOTN(sim_la_dotn_u64, uint64_t, u64, SIM_LD_ID, SIM_MAC_U64)
SIM_LA_DOTN(sim_la_dotn_c64, sim_c64, c64, SIM_LD_ID, SIM_MAC_C64)
SIM_LA_DOTN(sim_la_dotn_c128, sim_c128, c128, SIM_LD_ID, SIM_MAC_C128)
SIM_LA_DOTN(sim_la_dotn_pred, uint8_t, b, SIM_LD_ID, SIM_LA_MAC_PRED)

#define SIM_LA_STORE(NAME, T, EXPR)                                          \
  static void NAME(void *out, const sim_la_acc *acc) {                      \
    *(T *)out = (T)(EXPR);                                                  \
  }
SIM_LA_STORE(sim_la_store_f32, float, acc->f)
SIM_LA_STORE(sim_la_store_f64, double, acc->d)
SIM_LA_STORE(sim_la_store_f16, uint16_t, xrt_f32_to_f16(acc->f))
SIM_LA_STORE(sim_la_store_bf16, uint16_t, xrt_f32_to_bf16(acc->f))
SIM_LA_STORE(sim_la_store_u8, uint8_t, acc->u32)
SIM_LA_STORE(sim_la_store_u16, uint16_t, acc->u32)
SIM_LA_STORE(sim_la_store_u32, uint32_t, acc->u32)
SIM_LA_STORE(sim_la_store_u64, uint64_t, acc->u64)
static void sim_la_store_c64(void *out, const sim_la_acc *acc) {
  *(sim_c64 *)out = acc->c64;
}
static void sim_la_store_c128(void *out, const sim_la_acc *acc) {
  *(sim_c128 *)out = acc->c128;
}
SIM_LA_STORE(sim_la_store_pred, uint8_t, acc->b)

/* Kernels for a compute type; 0 if there are none.  Signed and sub-byte
 * integers use the unsigned kernels (same bits mod 2^w). */
SIM_PRIVATE int sim_la_kernels(xrt_dtype ct, sim_la_dotn_fn *dotn,
                          sim_la_store_fn *store) {
  switch (ct) {
  case XRT_F32: *dotn = sim_la_dotn_f32, *store = sim_la_store_f32; return 1;
  case XRT_F64: *dotn = sim_la_dotn_f64, *store = sim_la_store_f64; return 1;
  case XRT_F16: *dotn = sim_la_dotn_f16, *store = sim_la_store_f16; return 1;
  case XRT_BF16: *dotn = sim_la_dotn_bf16, *store = sim_la_store_bf16; return 1;
  case XRT_S8: case XRT_U8: case XRT_S2: case XRT_S4: case XRT_U2:
  case XRT_U4: *dotn = sim_la_dotn_u8, *store = sim_la_store_u8; return 1;
  case XRT_S16: case XRT_U16:
    *dotn = sim_la_dotn_u16, *store = sim_la_store_u16; return 1;
  case XRT_S32: case XRT_U32:
    *dotn = sim_la_dotn_u32, *store = sim_la_store_u32; return 1;
  case XRT_S64: case XRT_U64:
    *dotn = sim_la_dotn_u64, *store = sim_la_store_u64; return 1;
  case XRT_C64: *dotn = sim_la_dotn_c64, *store = sim_la_store_c64; return 1;
  case XRT_C128: *dotn = sim_la_dotn_c128, *store = sim_la_store_c128; return 1;
  case XRT_PRED: *dotn = sim_la_dotn_pred, *store = sim_la_store_pred; return 1;
  default: return 0;
  }
}

static int sim_la_is_subbyte(xrt_dtype t) {
  return t == XRT_S2 || t == XRT_S4 || t == XRT_U2 || t == XRT_U4;
}

SIM_PRIVATE xrt_status sim_la_cvt_init(sim_fcc *fc, const xrt_ir_op *op,
                                  sim_la_cvt *c, int32_t lid, int32_t rid) {
  const xrt_ir_type *types = fc->f->value_types;
  const xrt_shape *L = sim_shape(fc, lid), *R = sim_shape(fc, rid);
  const xrt_shape *O = sim_shape(fc, op->results[0]);
  if (types[lid].quant || types[rid].quant || types[op->results[0]].quant)
    return sim_fail_op(fc->cc->err, op, XRT_UNIMPLEMENTED, "%s of quantized "
                       "tensors is not supported by the simulator", op->name);
  c->lt = L->dtype, c->rt = R->dtype, c->ot = O->dtype;
  c->ct = sim_is_minifloat(O->dtype) ? XRT_F32 : O->dtype;
  if (!sim_la_kernels(c->ct, &c->dotn, &c->store) ||
      !sim_num_supported(c->lt) || !sim_num_supported(c->rt))
    return sim_unsupported_type(fc, op, O->dtype);
  c->cs = sim_esize(c->ct);
  c->lnumel = sim_numel(L), c->rnumel = sim_numel(R), c->onumel = sim_numel(O);
  c->ltmp = c->rtmp = c->otmp = -1;
  xrt_status rc = XRT_OK;
  if (c->lt != c->ct) rc = sim_temp(fc, (size_t)c->lnumel * c->cs, &c->ltmp);
  if (!rc && c->rt != c->ct)
    rc = sim_temp(fc, (size_t)c->rnumel * c->cs, &c->rtmp);
  if (!rc && c->ot != c->ct)
    rc = sim_temp(fc, (size_t)c->onumel * c->cs, &c->otmp);
  return rc;
}

/* Operands in the compute type and where the kernel writes its result. */
SIM_PRIVATE void sim_la_cvt_pre(const sim_la_cvt *c, void **vals, const void **l,
                           const void **r, void **res, void *out) {
  if (c->ltmp >= 0) {
    sim_convert(vals[c->ltmp], *l, c->lnumel, c->lt, c->ct);
    *l = vals[c->ltmp];
  }
  if (c->rtmp >= 0) {
    sim_convert(vals[c->rtmp], *r, c->rnumel, c->rt, c->ct);
    *r = vals[c->rtmp];
  }
  *res = c->otmp >= 0 ? vals[c->otmp] : out;
}

SIM_PRIVATE void sim_la_cvt_post(const sim_la_cvt *c, void **vals, void *out) {
  if (c->otmp >= 0) sim_convert(out, vals[c->otmp], c->onumel, c->ct, c->ot);
  if (sim_la_is_subbyte(c->ot)) sim_wrap_all(c->ot, out, c->onumel);
}

SIM_PRIVATE const char *sim_la_enum(const xrt_ir_op *op, const char *name) {
  const xrt_ir_attr *a = xrt_ir_op_attr(op, name);
  return a && (a->kind == XRT_ATTR_ENUM || a->kind == XRT_ATTR_STRING) && a->s
             ? a->s
             : "";
}
