/*
 * src/sim/linalg.c - linear algebra and numerics: dot kernels, convolution,
 * fft, triangular_solve, cholesky, batch norm, random numbers,
 * chlo.ragged_dot.
 * Part of the simulated device; MIT licensed, see LICENSE.
 */
#include "internal.h"

/* Zeros that stand for padding elements (any element size, stride 0). */
static const double sim_la_zero[2] = {0.0, 0.0};

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

static xrt_status sim_la_cvt_init(sim_fcc *fc, const xrt_ir_op *op,
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
static void sim_la_cvt_pre(const sim_la_cvt *c, void **vals, const void **l,
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

static void sim_la_cvt_post(const sim_la_cvt *c, void **vals, void *out) {
  if (c->otmp >= 0) sim_convert(out, vals[c->otmp], c->onumel, c->ct, c->ot);
  if (sim_la_is_subbyte(c->ot)) sim_wrap_all(c->ot, out, c->onumel);
}

/* Row-major multi-index increment; 0 once every index wrapped. */
SIM_PRIVATE int sim_la_next(int64_t *idx, const int64_t *dims, int n) {
  for (int k = n - 1; k >= 0; k--) {
    if (++idx[k] < dims[k]) return 1;
    idx[k] = 0;
  }
  return 0;
}

static int sim_la_flag(const xrt_ir_op *op, const char *name, int dflt) {
  const xrt_ir_attr *a = xrt_ir_op_attr(op, name);
  if (a && (a->kind == XRT_ATTR_BOOL || a->kind == XRT_ATTR_INT))
    return a->i != 0;
  return dflt;
}

static const char *sim_la_enum(const xrt_ir_op *op, const char *name) {
  const xrt_ir_attr *a = xrt_ir_op_attr(op, name);
  return a && (a->kind == XRT_ATTR_ENUM || a->kind == XRT_ATTR_STRING) && a->s
             ? a->s
             : "";
}

/* An integer element of any integer type as int64 (u64 wraps). */
static int64_t sim_la_geti(xrt_dtype t, const void *base, int64_t i) {
  sim_num v;
  sim_load(t, (const char *)base + (size_t)i * sim_esize(t), &v);
  return v.is_int ? v.i : sim_float_to_i64(v.re);
}

/* Fills the tables for padding pad (lo, hi per dimension). */
static void sim_conv_tables(const sim_conv *c, const int64_t *pad,
                            int64_t *tab) {
  for (int32_t d = 0; d < c->ns; d++) {
    int64_t *t = tab + c->toff[d], K = c->K[d];
    for (int64_t p = 0; p < c->out[d]; p++)
      for (int64_t k = 0; k < K; k++) {
        int64_t kk = c->rev[d] ? K - 1 - k : k;
        int64_t x = p * c->ws[d] + kk * c->rd[d] - pad[2 * d];
        int ok = x >= 0 && x % c->ld[d] == 0 && x / c->ld[d] < c->in[d];
        t[p * K + k] = ok ? x / c->ld[d] * c->lsp[d] : -1;
      }
  }
}

/* The number of windows along spatial dimension d (spec C26). */
static int64_t sim_conv_windows(const sim_conv *c, int32_t d, int64_t lo,
                                int64_t hi) {
  int64_t dil = c->in[d] == 0 ? 0 : (c->in[d] - 1) * c->ld[d] + 1;
  int64_t padded = lo + dil + hi;
  int64_t win = c->K[d] == 0 ? 0 : (c->K[d] - 1) * c->rd[d] + 1;
  if (padded <= 0 || win > padded) return 0;
  return (padded - win) / c->ws[d] + 1;
}

/* One result element: the sum over kernel positions and features. */
static void sim_conv_elem(const sim_conv *c, const int64_t *tab,
                          const char *L, const char *R, int64_t lbase,
                          int64_t rbase, const int64_t *p, sim_la_acc *acc) {
  int64_t k[XRT_MAX_RANK] = {0};
  size_t cs = c->cv.cs;
  ptrdiff_t lfs = (ptrdiff_t)(c->lf * (int64_t)cs);
  ptrdiff_t rfs = (ptrdiff_t)(c->rif * (int64_t)cs);
  do {
    int64_t loff = lbase, roff = rbase;
    int valid = 1;
    for (int32_t d = 0; d < c->ns; d++) {
      int64_t t = tab[c->toff[d] + p[d] * c->K[d] + k[d]];
      valid &= t >= 0;
      loff += t;
      roff += k[d] * c->rsp[d];
    }
    const char *rp = R + (size_t)roff * cs;
    if (valid)
      c->cv.dotn(acc, L + (size_t)loff * cs, lfs, rp, rfs, c->Cg);
    else if (c->zero_mul) /* as the interpreter: 0 * w, so 0 * inf = nan */
      c->cv.dotn(acc, (const char *)sim_la_zero, 0, rp, rfs, c->Cg);
  } while (sim_la_next(k, c->K, c->ns));
}

static void sim_conv_run_tabs(const sim_conv *c, const int64_t *tab,
                              const char *L, const char *R, char *res) {
  int64_t p[XRT_MAX_RANK] = {0};
  size_t cs = c->cv.cs;
  if (c->cv.onumel == 0) return;
  do {
    int64_t obase = 0;
    for (int32_t d = 0; d < c->ns; d++) obase += p[d] * c->osp[d];
    for (int64_t b = 0; b < c->NB; b++)
      for (int64_t o = 0; o < c->O; o++) {
        int64_t lbatch = o / c->o_per_bgroup * c->nb_per_group + b;
        int64_t lbase = lbatch * c->lb + o / c->o_per_fgroup * c->Cg * c->lf;
        sim_la_acc acc;
        memset(&acc, 0, sizeof acc);
        sim_conv_elem(c, tab, L, R, lbase, o * c->rof, p, &acc);
        c->cv.store(res + (size_t)(obase + b * c->ob + o * c->of) * cs, &acc);
      }
  } while (sim_la_next(p, c->out, c->ns));
}

static xrt_status sim_run_conv(const sim_step *st, void **vals, sim_cx *cx) {
  const sim_conv *c = (const sim_conv *)st->data;
  const void *l = vals[st->in[0]], *r = vals[st->in[1]];
  void *out = vals[st->out[0]], *res;
  const int64_t *tab = c->tab;
  if (!tab) {
    int64_t pad[2 * XRT_MAX_RANK];
    const void *pv = vals[st->in[2]];
    xrt_dtype pt = c->pt;
    for (int32_t d = 0; d < c->ns; d++) {
      pad[2 * d] = sim_la_geti(pt, pv, 2 * d);
      pad[2 * d + 1] = sim_la_geti(pt, pv, 2 * d + 1);
      if (pad[2 * d] < -(1ll << 40) || pad[2 * d] > (1ll << 40) ||
          pad[2 * d + 1] < -(1ll << 40) || pad[2 * d + 1] > (1ll << 40))
        return sim_fail_op(cx->err, st->op, XRT_OUT_OF_RANGE, "padding of "
                           "spatial dimension %d is out of range", (int)d);
      int64_t n = sim_conv_windows(c, d, pad[2 * d], pad[2 * d + 1]);
      if (n != c->out[d])
        return sim_fail_op(cx->err, st->op, XRT_INVALID_ARGUMENT, "padding "
                           "[%lld, %lld] of spatial dimension %d gives %lld "
                           "windows, but the result has %lld",
                           (long long)pad[2 * d], (long long)pad[2 * d + 1],
                           (int)d, (long long)n, (long long)c->out[d]);
    }
    int64_t *t = (int64_t *)vals[c->ttmp];
    sim_conv_tables(c, pad, t);
    tab = t;
  }
  sim_la_cvt_pre(&c->cv, vals, &l, &r, &res, out);
  sim_conv_run_tabs(c, tab, (const char *)l, (const char *)r, (char *)res);
  sim_la_cvt_post(&c->cv, vals, out);
  return XRT_OK;
}

static int64_t sim_conv_dn(const xrt_ir_attr *dn, const char *name, int *ok) {
  const xrt_ir_attr *a = xrt_ir_attr_field(dn, name);
  if (!a || a->kind != XRT_ATTR_INT) {
    *ok = 0;
    return 0;
  }
  return a->i;
}

static const int64_t *sim_conv_dns(const xrt_ir_attr *dn, const char *name,
                                   int64_t want, int *ok) {
  const xrt_ir_attr *a = xrt_ir_attr_field(dn, name);
  if (!a || a->kind != XRT_ATTR_INTS || a->n != want) {
    *ok = 0;
    return NULL;
  }
  return a->ints;
}

/* An optional per-spatial-dimension list: absent gives dflt. */
static int sim_conv_list(const xrt_ir_op *op, const char *name, int32_t ns,
                         int64_t dflt, int64_t *out) {
  const xrt_ir_attr *a = sim_attr(op, name, XRT_ATTR_INTS);
  if (xrt_ir_op_attr(op, name) && !a) return 0;
  if (a && a->n != ns) return 0;
  for (int32_t d = 0; d < ns; d++) out[d] = a ? a->ints[d] : dflt;
  return 1;
}

static int64_t sim_conv_count(const xrt_ir_op *op, const char *name) {
  const xrt_ir_attr *a = sim_attr(op, name, XRT_ATTR_INT);
  return a ? a->i : 1;
}

static int sim_dim_ok(int64_t d, int32_t rank) { return d >= 0 && d < rank; }

/* Dimension numbers into strides and sizes. */
static int sim_conv_dims(sim_fcc *fc, const xrt_ir_op *op, sim_conv *c) {
  const xrt_shape *L = sim_shape(fc, op->operands[0]);
  const xrt_shape *R = sim_shape(fc, op->operands[1]);
  const xrt_shape *O = sim_shape(fc, op->results[0]);
  const xrt_ir_attr *dn = xrt_ir_op_attr(op, "dimension_numbers");
  int ok = 1;
  int32_t ns = c->ns, rk = L->rank;
  int64_t ib = sim_conv_dn(dn, "input_batch_dimension", &ok);
  int64_t ifd = sim_conv_dn(dn, "input_feature_dimension", &ok);
  int64_t kif = sim_conv_dn(dn, "kernel_input_feature_dimension", &ok);
  int64_t kof = sim_conv_dn(dn, "kernel_output_feature_dimension", &ok);
  int64_t obd = sim_conv_dn(dn, "output_batch_dimension", &ok);
  int64_t ofd = sim_conv_dn(dn, "output_feature_dimension", &ok);
  const int64_t *isp = sim_conv_dns(dn, "input_spatial_dimensions", ns, &ok);
  const int64_t *ksp = sim_conv_dns(dn, "kernel_spatial_dimensions", ns, &ok);
  const int64_t *osp = sim_conv_dns(dn, "output_spatial_dimensions", ns, &ok);
  ok = ok && sim_dim_ok(ib, rk) && sim_dim_ok(ifd, rk) && sim_dim_ok(kif, rk) &&
       sim_dim_ok(kof, rk) && sim_dim_ok(obd, rk) && sim_dim_ok(ofd, rk);
  for (int32_t d = 0; ok && d < ns; d++)
    ok = sim_dim_ok(isp[d], rk) && sim_dim_ok(ksp[d], rk) &&
         sim_dim_ok(osp[d], rk);
  if (!ok) return 0;
  int64_t ls[XRT_MAX_RANK], rs[XRT_MAX_RANK], os[XRT_MAX_RANK];
  sim_strides(L, ls);
  sim_strides(R, rs);
  sim_strides(O, os);
  for (int32_t d = 0; d < ns; d++) {
    c->K[d] = R->dims[ksp[d]], c->in[d] = L->dims[isp[d]];
    c->out[d] = O->dims[osp[d]];
    c->lsp[d] = ls[isp[d]], c->rsp[d] = rs[ksp[d]], c->osp[d] = os[osp[d]];
  }
  c->lb = ls[ib], c->lf = ls[ifd], c->rif = rs[kif], c->rof = rs[kof];
  c->ob = os[obd], c->of = os[ofd];
  c->NB = O->dims[obd], c->O = O->dims[ofd], c->Cg = R->dims[kif];
  int64_t bg = sim_conv_count(op, "batch_group_count");
  int64_t fg = sim_conv_count(op, "feature_group_count");
  if (bg < 1 || fg < 1 || L->dims[ib] % bg || c->O % bg || c->O % fg ||
      c->Cg * fg != L->dims[ifd] || c->NB * bg != L->dims[ib] ||
      c->O != R->dims[kof])
    return 0;
  c->nb_per_group = c->NB;
  c->o_per_bgroup = c->O / bg ? c->O / bg : 1;
  c->o_per_fgroup = c->O / fg ? c->O / fg : 1;
  return 1;
}

static xrt_status sim_lower_conv_common(sim_fcc *fc, const xrt_ir_op *op,
                                        sim_step *st, int dynamic) {
  const xrt_shape *L = sim_shape(fc, op->operands[0]);
  sim_conv *c = (sim_conv *)sim_palloc(fc, sizeof *c);
  if (!c) return XRT_RESOURCE_EXHAUSTED;
  c->ns = L->rank - 2;
  int ok = op->num_operands == 2 + dynamic && c->ns >= 0 &&
           sim_shape(fc, op->operands[1])->rank == L->rank &&
           sim_shape(fc, op->results[0])->rank == L->rank;
  ok = ok && sim_conv_list(op, "window_strides", c->ns, 1, c->ws) &&
       sim_conv_list(op, "lhs_dilation", c->ns, 1, c->ld) &&
       sim_conv_list(op, "rhs_dilation", c->ns, 1, c->rd) &&
       sim_conv_dims(fc, op, c);
  int64_t rev[XRT_MAX_RANK];
  ok = ok && sim_conv_list(op, "window_reversal", c->ns, 0, rev);
  const xrt_ir_attr *pa = sim_attr(op, "padding", XRT_ATTR_INTS);
  if (!dynamic && pa && pa->n != 2 * c->ns) ok = 0;
  for (int32_t d = 0; ok && d < c->ns; d++) {
    ok = c->ws[d] > 0 && c->ld[d] > 0 && c->rd[d] > 0;
    c->rev[d] = rev[d] != 0;
    c->pad[2 * d] = pa && !dynamic ? pa->ints[2 * d] : 0;
    c->pad[2 * d + 1] = pa && !dynamic ? pa->ints[2 * d + 1] : 0;
    if (ok && !dynamic)
      ok = c->pad[2 * d] > -(1ll << 40) && c->pad[2 * d] < (1ll << 40) &&
           c->pad[2 * d + 1] > -(1ll << 40) && c->pad[2 * d + 1] < (1ll << 40) &&
           sim_conv_windows(c, d, c->pad[2 * d], c->pad[2 * d + 1]) ==
               c->out[d];
  }
  if (!ok)
    return sim_fail_op(fc->cc->err, op, XRT_INVALID_ARGUMENT, "%s: invalid "
                       "dimension numbers, window attributes or shapes",
                       op->name);
  xrt_status rc = sim_la_cvt_init(fc, op, &c->cv, op->operands[0],
                                  op->operands[1]);
  if (rc) return rc;
  c->zero_mul = sim_dtype_is_float(c->cv.ct) || sim_dtype_is_complex(c->cv.ct);
  for (int32_t d = 0; d < c->ns; d++) {
    c->toff[d] = c->tab_n;
    c->tab_n += c->out[d] * c->K[d];
  }
  size_t tb = sizeof(int64_t) * (size_t)(c->tab_n ? c->tab_n : 1);
  c->ttmp = -1;
  if (dynamic) {
    const xrt_shape *ps = sim_shape(fc, op->operands[2]);
    c->pt = ps->dtype;
    if (sim_numel(ps) != 2 * c->ns || !sim_num_supported(c->pt) ||
        sim_dtype_is_float(c->pt) || sim_dtype_is_complex(c->pt))
      return sim_fail_op(fc->cc->err, op, XRT_INVALID_ARGUMENT, "%s: padding "
                         "must be an integer tensor<%dx2>", op->name,
                         (int)c->ns);
    rc = sim_temp(fc, tb, &c->ttmp);
    if (rc) return rc;
  } else {
    int64_t *t = (int64_t *)sim_palloc(fc, tb);
    if (!t) return XRT_RESOURCE_EXHAUSTED;
    sim_conv_tables(c, c->pad, t);
    c->tab = t;
    xrt_status grc; /* large f32/f64 convolutions: packed GEMM */
    if (sim_gemm_lower_conv(fc, c, st, &grc)) return grc;
  }
  st->data = c;
  st->run = sim_run_conv;
  return XRT_OK;
}

SIM_PRIVATE xrt_status sim_lower_convolution(sim_fcc *fc, const xrt_ir_op *op,
                                        sim_step *st) {
  return sim_lower_conv_common(fc, op, st, 0);
}

SIM_PRIVATE xrt_status sim_lower_dynamic_conv(sim_fcc *fc, const xrt_ir_op *op,
                                         sim_step *st) {
  return sim_lower_conv_common(fc, op, st, 1);
}

/* ======================================================================
 * fft
 * ==================================================================== */

/* One transformed axis: a forward DFT of length n, radix-2 when n is a
 * power of two, else Bluestein's chirp-z through a power-of-two FFT of
 * length m >= 2n - 1.  Computed in double precision. */
typedef struct sim_fft_axis {
  int64_t n, m;
  const sim_c128 *tw;    /* m/2 twiddles exp(-2 pi i k / m) */
  const sim_c128 *chirp; /* Bluestein: exp(-pi i k^2 / n), k < n */
  const sim_c128 *filt;  /* Bluestein: FFT of the conjugate chirp, m */
} sim_fft_axis;

typedef struct sim_fft {
  int kind;                /* 0 FFT, 1 IFFT, 2 RFFT, 3 IRFFT */
  int32_t L, rank;
  int64_t dims[XRT_MAX_RANK]; /* the complex work shape */
  int64_t in_last, out_last;  /* last dimension of operand and result */
  sim_fft_axis ax[3];      /* for the last L dimensions, outermost first */
  xrt_dtype it, ot;
  int32_t work, line;      /* pseudo values: work buffer, line scratch */
} sim_fft;

static int sim_is_pow2(int64_t n) { return n > 0 && (n & (n - 1)) == 0; }

static sim_c128 sim_cmul(sim_c128 a, sim_c128 b) {
  sim_c128 r = {a.re * b.re - a.im * b.im, a.re * b.im + a.im * b.re};
  return r;
}

/* In-place iterative radix-2 FFT of length m (a power of two). */
static void sim_fft_pow2(sim_c128 *x, int64_t m, const sim_c128 *tw) {
  for (int64_t i = 1, j = 0; i < m; i++) {
    int64_t bit = m >> 1;
    for (; j & bit; bit >>= 1) j ^= bit;
    j |= bit;
    if (i < j) {
      sim_c128 t = x[i];
      x[i] = x[j];
      x[j] = t;
    }
  }
  for (int64_t len = 2; len <= m; len <<= 1) {
    int64_t half = len >> 1, step = m / len;
    for (int64_t s = 0; s < m; s += len)
      for (int64_t k = 0; k < half; k++) {
        sim_c128 u = x[s + k], v = sim_cmul(x[s + k + half], tw[k * step]);
        x[s + k].re = u.re + v.re, x[s + k].im = u.im + v.im;
        x[s + k + half].re = u.re - v.re, x[s + k + half].im = u.im - v.im;
      }
  }
}

/* Forward DFT of x (length n) in place; scratch holds m elements. */
static void sim_fft_line(const sim_fft_axis *a, sim_c128 *x,
                         sim_c128 *scratch) {
  if (a->n <= 1) return;
  if (a->m == a->n) {
    sim_fft_pow2(x, a->n, a->tw);
    return;
  }
  int64_t n = a->n, m = a->m;
  for (int64_t k = 0; k < m; k++) {
    sim_c128 z = {0, 0};
    scratch[k] = k < n ? sim_cmul(x[k], a->chirp[k]) : z;
  }
  sim_fft_pow2(scratch, m, a->tw);
  for (int64_t k = 0; k < m; k++) {
    scratch[k] = sim_cmul(scratch[k], a->filt[k]);
    scratch[k].im = -scratch[k].im; /* inverse by conjugation */
  }
  sim_fft_pow2(scratch, m, a->tw);
  for (int64_t k = 0; k < n; k++) {
    sim_c128 v = {scratch[k].re / (double)m, -scratch[k].im / (double)m};
    x[k] = sim_cmul(v, a->chirp[k]);
  }
}

/* Transforms every line of buf (shape dims) along dimension d. */
static void sim_fft_axis_run(const sim_fft_axis *a, sim_c128 *buf,
                             const int64_t *dims, int32_t rank, int32_t d,
                             int inverse, sim_c128 *line) {
  int64_t outer = 1, inner = 1, n = dims[d];
  for (int32_t k = 0; k < d; k++) outer *= dims[k];
  for (int32_t k = d + 1; k < rank; k++) inner *= dims[k];
  sim_c128 *scratch = line + n;
  for (int64_t o = 0; o < outer; o++)
    for (int64_t i = 0; i < inner; i++) {
      sim_c128 *base = buf + o * n * inner + i;
      for (int64_t k = 0; k < n; k++) {
        line[k] = base[k * inner];
        if (inverse) line[k].im = -line[k].im;
      }
      sim_fft_line(a, line, scratch);
      for (int64_t k = 0; k < n; k++) {
        sim_c128 v = line[k];
        if (inverse) v.re /= (double)n, v.im = -v.im / (double)n;
        base[k * inner] = v;
      }
    }
}

static void sim_fft_load(const sim_fft *f, const void *in, sim_c128 *w,
                         int64_t count) {
  for (int64_t i = 0; i < count; i++) {
    sim_num v;
    sim_load(f->it, (const char *)in + (size_t)i * sim_esize(f->it), &v);
    w[i].re = v.re, w[i].im = v.im;
  }
}

/* IRFFT's last dimension: the Hermitian extension of the half spectrum,
 * inverse transformed; the real part is the result. */
static void sim_fft_irfft_last(const sim_fft *f, sim_c128 *w, void *out,
                               sim_c128 *line, int64_t lines) {
  const sim_fft_axis *a = &f->ax[f->L - 1];
  int64_t n = a->n, h = f->in_last;
  size_t es = sim_esize(f->ot);
  for (int64_t l = 0; l < lines; l++) {
    const sim_c128 *src = w + l * h;
    for (int64_t k = 0; k < n; k++) {
      sim_c128 v = k < h ? src[k] : src[n - k];
      if (k >= h) v.im = -v.im;
      line[k].re = v.re, line[k].im = -v.im; /* conjugate: inverse */
    }
    sim_fft_line(a, line, line + n);
    for (int64_t k = 0; k < n; k++) {
      sim_num v = {line[k].re / (double)n, 0, 0, 0};
      sim_store(f->ot, (char *)out + (size_t)(l * n + k) * es, &v);
    }
  }
}

static xrt_status sim_run_fft(const sim_step *st, void **vals, sim_cx *cx) {
  const sim_fft *f = (const sim_fft *)st->data;
  sim_c128 *w = (sim_c128 *)vals[f->work], *line = (sim_c128 *)vals[f->line];
  void *out = vals[st->out[0]];
  int64_t total = 1;
  (void)cx;
  for (int32_t k = 0; k < f->rank; k++) total *= f->dims[k];
  if (total == 0) return XRT_OK;
  int inverse = f->kind == 1 || f->kind == 3;
  int32_t axes = f->kind == 3 ? f->L - 1 : f->L;
  sim_fft_load(f, vals[st->in[0]], w, total);
  for (int32_t j = 0; j < axes; j++) {
    int32_t d = f->rank - f->L + j;
    sim_fft_axis_run(&f->ax[j], w, f->dims, f->rank, d, inverse, line);
  }
  if (f->kind == 3) {
    sim_fft_irfft_last(f, w, out, line, total / f->in_last);
    return XRT_OK;
  }
  /* Copy out, keeping the first out_last entries of the last dimension. */
  size_t es = sim_esize(f->ot);
  int64_t lines = total / f->in_last;
  for (int64_t l = 0; l < lines; l++)
    for (int64_t k = 0; k < f->out_last; k++) {
      sim_c128 v = w[l * f->in_last + k];
      sim_num nv = {v.re, v.im, 0, 0};
      sim_store(f->ot, (char *)out + (size_t)(l * f->out_last + k) * es, &nv);
    }
  return XRT_OK;
}

/* Twiddles, chirp and filter of one axis (compile time). */
static xrt_status sim_fft_plan_axis(sim_fcc *fc, sim_fft_axis *a, int64_t n) {
  const double pi = 3.14159265358979323846;
  a->n = n;
  a->m = n;
  if (n <= 1) return XRT_OK;
  if (!sim_is_pow2(n)) {
    a->m = 1;
    while (a->m < 2 * n - 1) a->m <<= 1;
  }
  int64_t m = a->m;
  sim_c128 *tw = (sim_c128 *)sim_palloc(fc, sizeof *tw * (size_t)(m / 2 + 1));
  if (!tw) return XRT_RESOURCE_EXHAUSTED;
  for (int64_t k = 0; k < m / 2; k++) {
    tw[k].re = cos(-2 * pi * (double)k / (double)m);
    tw[k].im = sin(-2 * pi * (double)k / (double)m);
  }
  a->tw = tw;
  if (m == n) return XRT_OK;
  sim_c128 *ch = (sim_c128 *)sim_palloc(fc, sizeof *ch * (size_t)n);
  sim_c128 *fl = (sim_c128 *)sim_palloc(fc, sizeof *fl * (size_t)m);
  if (!ch || !fl) return XRT_RESOURCE_EXHAUSTED;
  for (int64_t k = 0; k < n; k++) {
    /* k^2 mod 2n keeps the angle exact for large k (n < 2^31). */
    uint64_t q = ((uint64_t)k * (uint64_t)k) % (uint64_t)(2 * n);
    ch[k].re = cos(-pi * (double)q / (double)n);
    ch[k].im = sin(-pi * (double)q / (double)n);
  }
  for (int64_t k = 0; k < n; k++) {
    sim_c128 c = {ch[k].re, -ch[k].im};
    fl[k] = c;
    if (k) fl[m - k] = c;
  }
  sim_fft_pow2(fl, m, tw);
  a->chirp = ch;
  a->filt = fl;
  return XRT_OK;
}

static int sim_fft_kind(const char *s) {
  static const char *const names[] = {"FFT", "IFFT", "RFFT", "IRFFT"};
  for (int i = 0; i < 4; i++)
    if (strcmp(s, names[i]) == 0) return i;
  return -1;
}

SIM_PRIVATE xrt_status sim_lower_fft(sim_fcc *fc, const xrt_ir_op *op,
                                sim_step *st) {
  const xrt_shape *I = sim_shape(fc, op->operands[0]);
  const xrt_shape *O = sim_shape(fc, op->results[0]);
  const int64_t *len;
  int64_t nl;
  xrt_status rc = sim_ints(fc, op, "fft_length", 1, &len, &nl);
  if (rc) return rc;
  sim_fft *f = (sim_fft *)sim_palloc(fc, sizeof *f);
  if (!f) return XRT_RESOURCE_EXHAUSTED;
  f->kind = sim_fft_kind(sim_la_enum(op, "fft_type"));
  int ok = f->kind >= 0 && nl >= 1 && nl <= 3 && nl <= I->rank &&
           I->rank == O->rank;
  for (int32_t d = 0; ok && d < I->rank; d++) {
    int last = d == I->rank - 1;
    ok = last || I->dims[d] == O->dims[d];
    if (ok && d >= I->rank - nl) {
      int64_t want = len[d - (I->rank - nl)];
      int64_t have = f->kind == 2 ? I->dims[d] : f->kind == 3 && last
                   ? O->dims[d] : I->dims[d];
      ok = want == have && want < (1ll << 31);
    }
  }
  if (ok) {
    int64_t n = len[nl - 1], h = n == 0 ? 0 : n / 2 + 1;
    int64_t il = I->dims[I->rank - 1], ol = O->dims[O->rank - 1];
    ok = f->kind == 2 ? ol == h : f->kind == 3 ? il == h : il == ol;
  }
  if (!ok)
    return sim_fail_op(fc->cc->err, op, XRT_INVALID_ARGUMENT, "%s: fft_type, "
                       "fft_length and shapes do not agree", op->name);
  if (!sim_dtype_is_complex(f->kind == 3 ? I->dtype : O->dtype) ||
      !(sim_dtype_is_complex(I->dtype) || I->dtype == XRT_F32 ||
        I->dtype == XRT_F64) ||
      !(sim_dtype_is_complex(O->dtype) || O->dtype == XRT_F32 ||
        O->dtype == XRT_F64))
    return sim_unsupported_type(fc, op, I->dtype);
  f->it = I->dtype, f->ot = O->dtype;
  f->L = (int32_t)nl, f->rank = I->rank;
  for (int32_t d = 0; d < I->rank; d++) f->dims[d] = I->dims[d];
  f->in_last = I->rank ? I->dims[I->rank - 1] : 1;
  f->out_last = O->rank ? O->dims[O->rank - 1] : 1;
  int64_t biggest = 1, total = sim_numel(I);
  for (int32_t j = 0; j < f->L; j++) {
    if ((rc = sim_fft_plan_axis(fc, &f->ax[j], len[j]))) return rc;
    int64_t need = f->ax[j].n + f->ax[j].m;
    if (need > biggest) biggest = need;
  }
  rc = sim_temp(fc, sizeof(sim_c128) * (size_t)(total ? total : 1), &f->work);
  if (!rc) rc = sim_temp(fc, sizeof(sim_c128) * (size_t)biggest, &f->line);
  st->data = f;
  st->run = sim_run_fft;
  return rc;
}

/* ======================================================================
 * triangular_solve, cholesky (computed in complex double precision)
 * ==================================================================== */

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

/* ======================================================================
 * batch_norm_inference, batch_norm_training, batch_norm_grad
 * ==================================================================== */

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

/* ======================================================================
 * rng_bit_generator, rng
 * ==================================================================== */

static uint32_t sim_rotl32(uint32_t v, int r) {
  return (v << r) | (v >> (32 - r));
}

/* Threefry-2x32 with 20 rounds (Salmon et al. 2011), as XLA's prng.cc. */
static void sim_threefry2x32(uint32_t k0, uint32_t k1, uint32_t x[2]) {
  static const int rot[8] = {13, 15, 26, 6, 17, 29, 16, 24};
  uint32_t ks[3] = {k0, k1, 0x1BD11BDAu ^ k0 ^ k1};
  x[0] += ks[0];
  x[1] += ks[1];
  for (int i = 0; i < 5; i++) {
    for (int j = 0; j < 4; j++) {
      x[0] += x[1];
      x[1] = sim_rotl32(x[1], rot[(i % 2) * 4 + j]) ^ x[0];
    }
    x[0] += ks[(i + 1) % 3];
    x[1] += ks[(i + 2) % 3] + (uint32_t)(i + 1);
  }
}

/* Philox-4x32 with 10 rounds, as XLA's prng.cc. */
static void sim_philox4x32(uint32_t k0, uint32_t k1, uint32_t x[4]) {
  for (int r = 0; r < 10; r++) {
    uint64_t p0 = (uint64_t)x[0] * 0xD2511F53u;
    uint64_t p1 = (uint64_t)x[2] * 0xCD9E8D57u;
    uint32_t y0 = (uint32_t)(p1 >> 32) ^ x[1] ^ k0, y1 = (uint32_t)p1;
    uint32_t y2 = (uint32_t)(p0 >> 32) ^ x[3] ^ k1, y3 = (uint32_t)p0;
    x[0] = y0, x[1] = y1, x[2] = y2, x[3] = y3;
    k0 += 0x9E3779B9u;
    k1 += 0xBB67AE85u;
  }
}

typedef struct sim_rbg {
  int philox;            /* else three fry */
  int32_t rank, split;   /* three fry 32: the dimension split in halves */
  int64_t dims[XRT_MAX_RANK], numel, nstate;
  size_t es;             /* output element size */
  int bits;              /* output bit width */
  xrt_dtype ot;
} sim_rbg;

/* Stores the low bits of w as one output element. */
static void sim_rbg_put(const sim_rbg *g, void *out, int64_t i, uint64_t w) {
  char *p = (char *)out + (size_t)i * g->es;
  switch (g->es) {
  case 1: {
    uint8_t b = (uint8_t)(w & ((1u << (g->bits < 8 ? g->bits : 8)) - 1u));
    if (g->ot == XRT_S2 || g->ot == XRT_S4)
      b = (uint8_t)sim_wrap_int(g->ot, (int64_t)b);
    *(uint8_t *)p = b;
    break;
  }
  case 2: *(uint16_t *)(void *)p = (uint16_t)w; break;
  case 4: *(uint32_t *)(void *)p = (uint32_t)w; break;
  default: *(uint64_t *)(void *)p = w; break;
  }
}

/* Three fry, 32 bits or fewer: one counter per pair of elements along the
 * split dimension (XLA's SplitShapeIntoHalves); returns counters used. */
static uint64_t sim_rbg_threefry32(const sim_rbg *g, uint64_t key,
                                   uint64_t ctr, void *out) {
  uint32_t k0 = (uint32_t)key, k1 = (uint32_t)(key >> 32);
  if (g->rank == 0) {
    uint32_t x[2] = {(uint32_t)ctr, (uint32_t)(ctr >> 32)};
    sim_threefry2x32(k0, k1, x);
    sim_rbg_put(g, out, 0, x[0]);
    return 1;
  }
  int64_t half[XRT_MAX_RANK], ostr[XRT_MAX_RANK], idx[XRT_MAX_RANK] = {0};
  xrt_shape s;
  memset(&s, 0, sizeof s);
  s.rank = g->rank;
  int64_t hn = 1;
  for (int32_t d = 0; d < g->rank; d++) {
    s.dims[d] = g->dims[d];
    half[d] = d == g->split ? (g->dims[d] + 1) / 2 : g->dims[d];
    hn *= half[d];
  }
  sim_strides(&s, ostr);
  if (hn == 0) return 0;
  for (int64_t h = 0; h < hn; h++) {
    uint64_t c = ctr + (uint64_t)h;
    uint32_t x[2] = {(uint32_t)c, (uint32_t)(c >> 32)};
    sim_threefry2x32(k0, k1, x);
    int64_t off = 0;
    for (int32_t d = 0; d < g->rank; d++)
      off += (d == g->split ? 2 * idx[d] : idx[d]) * ostr[d];
    sim_rbg_put(g, out, off, x[0]);
    if (2 * idx[g->split] + 1 < g->dims[g->split])
      sim_rbg_put(g, out, off + ostr[g->split], x[1]);
    sim_la_next(idx, half, g->rank);
  }
  return (uint64_t)hn;
}

static uint64_t sim_rbg_threefry64(const sim_rbg *g, uint64_t key,
                                   uint64_t ctr, void *out) {
  for (int64_t i = 0; i < g->numel; i++) {
    uint64_t c = ctr + (uint64_t)i;
    uint32_t x[2] = {(uint32_t)c, (uint32_t)(c >> 32)};
    sim_threefry2x32((uint32_t)key, (uint32_t)(key >> 32), x);
    sim_rbg_put(g, out, i, (uint64_t)x[0] | (uint64_t)x[1] << 32);
  }
  return (uint64_t)g->numel;
}

/* Philox: counter c (128 bits: lo, hi) + j gives four words per j, laid
 * out round robin; returns the number of counters used. */
static uint64_t sim_rbg_philox(const sim_rbg *g, uint64_t key, uint64_t lo,
                               uint64_t hi, void *out) {
  int wide = g->es == 8;
  int64_t words = wide ? 2 * g->numel : g->numel;
  uint64_t nv = (uint64_t)((words + 3) / 4);
  for (uint64_t j = 0; j < nv; j++) {
    uint64_t l = lo + j, h = l < lo ? hi + 1 : hi;
    uint32_t x[4] = {(uint32_t)l, (uint32_t)(l >> 32), (uint32_t)h,
                     (uint32_t)(h >> 32)};
    sim_philox4x32((uint32_t)key, (uint32_t)(key >> 32), x);
    for (int q = 0; q < (wide ? 2 : 4); q++) {
      int64_t i = (int64_t)j * (wide ? 2 : 4) + q;
      if (i >= g->numel) break;
      uint64_t w = wide ? (uint64_t)x[2 * q] | (uint64_t)x[2 * q + 1] << 32
                        : x[q];
      sim_rbg_put(g, out, i, w);
    }
  }
  return nv;
}

static xrt_status sim_run_rbg(const sim_step *st, void **vals, sim_cx *cx) {
  const sim_rbg *g = (const sim_rbg *)st->data;
  const uint64_t *s = (const uint64_t *)vals[st->in[0]];
  uint64_t *ns = (uint64_t *)vals[st->out[0]];
  void *out = vals[st->out[1]];
  uint64_t key = s[0];
  (void)cx;
  if (!g->philox) {
    uint64_t used = g->es == 8 ? sim_rbg_threefry64(g, key, s[1], out)
                               : sim_rbg_threefry32(g, key, s[1], out);
    ns[0] = key;
    ns[1] = s[1] + used;
    return XRT_OK;
  }
  /* A 3-word state is (key, counter lo, counter hi); a 2-word one is
   * (key, counter lo) with the key doubling as counter hi, as XLA. */
  uint64_t lo = s[1], hi = g->nstate >= 3 ? s[2] : s[0];
  uint64_t used = sim_rbg_philox(g, key, lo, hi, out);
  uint64_t nl = lo + used;
  ns[0] = key;
  ns[1] = nl;
  if (g->nstate >= 3) ns[2] = nl < lo ? hi + 1 : hi;
  return XRT_OK;
}

SIM_PRIVATE xrt_status sim_lower_rng_bit_generator(sim_fcc *fc,
                                              const xrt_ir_op *op,
                                              sim_step *st) {
  if (op->num_operands != 1 || op->num_results != 2)
    return sim_fail_op(fc->cc->err, op, XRT_INVALID_ARGUMENT, "bad %s",
                       op->name);
  const xrt_shape *S = sim_shape(fc, op->operands[0]);
  const xrt_shape *NS = sim_shape(fc, op->results[0]);
  const xrt_shape *O = sim_shape(fc, op->results[1]);
  const char *alg = sim_la_enum(op, "rng_algorithm");
  sim_rbg *g = (sim_rbg *)sim_palloc(fc, sizeof *g);
  if (!g) return XRT_RESOURCE_EXHAUSTED;
  g->philox = strcmp(alg, "THREE_FRY") != 0; /* DEFAULT is Philox, as XLA */
  g->nstate = S->rank == 1 ? S->dims[0] : 0;
  if (sim_esize(S->dtype) != 8 || S->rank != 1 || NS->rank != 1 ||
      NS->dims[0] != g->nstate ||
      (g->philox ? g->nstate != 2 && g->nstate != 3 : g->nstate != 2))
    return sim_fail_op(fc->cc->err, op, XRT_INVALID_ARGUMENT, "%s: the state "
                       "must be a 64-bit tensor<%sxui64>", op->name,
                       g->philox ? "2 or 3" : "2");
  g->ot = O->dtype;
  g->es = sim_esize(O->dtype);
  g->bits = sim_ew_bits(O->dtype);
  if (!g->es || g->es > 8 || O->dtype == XRT_PRED ||
      sim_dtype_is_complex(O->dtype) || fc->f->value_types[op->results[1]].quant)
    return sim_unsupported_type(fc, op, O->dtype);
  g->rank = O->rank;
  g->numel = sim_numel(O);
  for (int32_t d = 0; d < O->rank; d++) g->dims[d] = O->dims[d];
  /* XLA splits the first even dimension, else the first largest one. */
  g->split = -1;
  for (int32_t d = 0; d < O->rank && g->split < 0; d++)
    if (O->dims[d] % 2 == 0) g->split = d;
  if (g->split < 0)
    for (int32_t d = 0; d < O->rank; d++)
      if (g->split < 0 || O->dims[d] > O->dims[g->split]) g->split = d;
  if (g->split < 0) g->split = 0;
  st->data = g;
  st->run = sim_run_rbg;
  return XRT_OK;
}

/* rng: numbers are Threefry-2x32 bits keyed by the op's source position
 * and counted per execution, so a compiled program draws the same
 * sequence every time it is compiled (the interpreter leaves the values
 * implementation-defined). */
typedef struct sim_rng {
  int normal;
  xrt_dtype t, st;     /* result and shape-operand element types */
  int64_t numel;
  int32_t rank;
  int64_t dims[XRT_MAX_RANK];
  uint64_t key;
  _Atomic uint64_t calls;
} sim_rng;

/* 64 random bits for element i of call `call`, stream s. */
static uint64_t sim_rng_bits(const sim_rng *r, uint64_t call, int64_t i,
                             uint32_t s) {
  uint32_t x[2] = {(uint32_t)i, (uint32_t)((uint64_t)i >> 32) ^ (s << 31)};
  sim_threefry2x32((uint32_t)r->key, (uint32_t)(r->key >> 32) ^ (uint32_t)call,
                   x);
  return (uint64_t)x[0] | (uint64_t)x[1] << 32;
}

static double sim_rng_unit(uint64_t b) { /* [0, 1) */
  return (double)(b >> 11) * (1.0 / 9007199254740992.0);
}

static void sim_rng_uniform(const sim_rng *r, sim_num a, sim_num b,
                            uint64_t call, void *out) {
  size_t es = sim_esize(r->t);
  for (int64_t i = 0; i < r->numel; i++) {
    char *p = (char *)out + (size_t)i * es;
    uint64_t bits = sim_rng_bits(r, call, i, 0);
    sim_num v = a;
    if (a.is_int) {
      uint64_t range = (uint64_t)b.i - (uint64_t)a.i;
      int up = r->t == XRT_U64 ? (uint64_t)b.i > (uint64_t)a.i : b.i > a.i;
      if (up)
        v.i = (int64_t)((uint64_t)a.i + bits % range);
      v.re = (double)v.i;
      sim_store(r->t, p, &v);
      continue;
    }
    v.re = a.re + (b.re - a.re) * sim_rng_unit(bits);
    sim_store(r->t, p, &v);
    sim_num back;
    sim_load(r->t, p, &back);
    if (a.re < b.re && back.re >= b.re) sim_store(r->t, p, &a); /* rounding */
  }
}

/* Box-Muller: mean a, standard deviation b. */
static void sim_rng_normal(const sim_rng *r, sim_num a, sim_num b,
                           uint64_t call, void *out) {
  const double two_pi = 6.28318530717958647692;
  size_t es = sim_esize(r->t);
  for (int64_t i = 0; i < r->numel; i++) {
    double u1 = 1.0 - sim_rng_unit(sim_rng_bits(r, call, i, 0)); /* (0,1] */
    double u2 = sim_rng_unit(sim_rng_bits(r, call, i, 1));
    sim_num v = {a.re + b.re * sqrt(-2.0 * log(u1)) * cos(two_pi * u2), 0, 0,
                 0};
    sim_store(r->t, (char *)out + (size_t)i * es, &v);
  }
}

static xrt_status sim_run_rng(const sim_step *st, void **vals, sim_cx *cx) {
  sim_rng *r = (sim_rng *)(uintptr_t)st->data; /* calls is the one field
                                                  that changes */
  const void *shape = vals[st->in[2]];
  for (int32_t d = 0; d < r->rank; d++)
    if (sim_la_geti(r->st, shape, d) != r->dims[d])
      return sim_fail_op(cx->err, st->op, XRT_INVALID_ARGUMENT, "the shape "
                         "operand's dimension %d is %lld, the result's %lld",
                         (int)d, (long long)sim_la_geti(r->st, shape, d),
                         (long long)r->dims[d]);
  uint64_t call = r->calls++;
  sim_num a, b;
  sim_load(r->t, vals[st->in[0]], &a);
  sim_load(r->t, vals[st->in[1]], &b);
  if (r->normal) sim_rng_normal(r, a, b, call, vals[st->out[0]]);
  else sim_rng_uniform(r, a, b, call, vals[st->out[0]]);
  return XRT_OK;
}

SIM_PRIVATE xrt_status sim_lower_rng(sim_fcc *fc, const xrt_ir_op *op,
                                sim_step *st) {
  if (op->num_operands != 3 || op->num_results != 1)
    return sim_fail_op(fc->cc->err, op, XRT_INVALID_ARGUMENT, "bad %s",
                       op->name);
  const xrt_shape *O = sim_shape(fc, op->results[0]);
  const xrt_shape *S = sim_shape(fc, op->operands[2]);
  sim_rng *r = (sim_rng *)sim_palloc(fc, sizeof *r);
  if (!r) return XRT_RESOURCE_EXHAUSTED;
  r->normal = strcmp(sim_la_enum(op, "rng_distribution"), "NORMAL") == 0;
  r->t = O->dtype;
  r->st = S->dtype;
  if (S->rank != 1 || S->dims[0] != O->rank || sim_dtype_is_float(S->dtype) ||
      sim_dtype_is_complex(S->dtype) || !sim_num_supported(S->dtype))
    return sim_fail_op(fc->cc->err, op, XRT_INVALID_ARGUMENT, "%s: shape must "
                       "be a 1-D integer tensor of the result's rank",
                       op->name);
  if (!sim_num_supported(O->dtype) || sim_dtype_is_complex(O->dtype) ||
      (r->normal && !sim_dtype_is_float(O->dtype)))
    return sim_unsupported_type(fc, op, O->dtype);
  r->rank = O->rank;
  for (int32_t d = 0; d < O->rank; d++) r->dims[d] = O->dims[d];
  r->numel = sim_numel(O);
  /* FNV-1a of the source position: a fixed key per op. */
  uint64_t h = 1469598103934665603ull;
  int64_t parts[3] = {op->loc.line, op->loc.col, (int64_t)fc->pos};
  for (int i = 0; i < 3; i++) h = (h ^ (uint64_t)parts[i]) * 1099511628211ull;
  r->key = h;
  r->calls = 0;
  st->data = r;
  st->run = sim_run_rng;
  return XRT_OK;
}

/* ======================================================================
 * chlo.ragged_dot
 * ==================================================================== */

/* A dot_general whose lhs ragged dimension is cut into groups by the
 * 1-D group_sizes: mode 1 (ragged lhs non-contracting dimension): rows
 * of group g multiply rhs slice g of rhs_group_dimensions, rows past the
 * groups give 0; mode 2 (ragged contracting dimension): result slice g
 * contracts only the group's range; mode 3 (ragged batch dimension): a
 * plain dot_general. */
typedef struct sim_ragged {
  sim_la_cvt cv;
  int mode;
  int64_t G, B, M, N, K;
  const int64_t *lb, *rb, *lm, *rn, *lk, *rk;
  const int64_t *m_r, *k_r; /* ragged index of each m (mode 1), k (mode 2) */
  int64_t rgs;              /* rhs stride of the group dimension */
  xrt_dtype gt;
  int32_t ends;             /* pseudo value: G cumulative group ends */
} sim_ragged;

static void sim_ragged_elem(const sim_ragged *g, const char *L,
                            const char *R, int64_t lo, int64_t ro,
                            int64_t kmin, int64_t kmax, sim_la_acc *acc) {
  size_t cs = g->cv.cs;
  for (int64_t k = 0; k < g->K; k++) {
    if (g->mode == 2 && (g->k_r[k] < kmin || g->k_r[k] >= kmax)) continue;
    g->cv.dotn(acc, L + (size_t)(lo + g->lk[k]) * cs, 0,
               R + (size_t)(ro + g->rk[k]) * cs, 0, 1);
  }
}

static xrt_status sim_run_ragged(const sim_step *st, void **vals, sim_cx *cx) {
  const sim_ragged *g = (const sim_ragged *)st->data;
  const void *l = vals[st->in[0]], *r = vals[st->in[1]];
  void *out = vals[st->out[0]], *res;
  int64_t *ends = (int64_t *)vals[g->ends], acc_end = 0;
  (void)cx;
  for (int64_t i = 0; i < g->G; i++) { /* negative sizes count as 0 */
    int64_t s = sim_la_geti(g->gt, vals[st->in[2]], i);
    if (s > 0 && acc_end <= INT64_MAX - s) acc_end += s;
    ends[i] = acc_end;
  }
  sim_la_cvt_pre(&g->cv, vals, &l, &r, &res, out);
  const char *L = (const char *)l, *R = (const char *)r;
  char *O = (char *)res;
  int64_t groups = g->mode == 2 ? g->G : 1, o = 0;
  for (int64_t gi = 0; gi < groups; gi++) {
    int64_t kmin = gi ? ends[gi - 1] : 0, kmax = g->mode == 2 ? ends[gi] : 0;
    for (int64_t b = 0; b < g->B; b++)
      for (int64_t m = 0; m < g->M; m++) {
        int64_t grp = 0;
        if (g->mode == 1)
          while (grp < g->G && g->m_r[m] >= ends[grp]) grp++;
        for (int64_t n = 0; n < g->N; n++, o++) {
          sim_la_acc acc;
          memset(&acc, 0, sizeof acc);
          if (grp < g->G)
            sim_ragged_elem(g, L, R, g->lb[b] + g->lm[m],
                            g->rb[b] + g->rn[n] + grp * g->rgs, kmin, kmax,
                            &acc);
          g->cv.store(O + (size_t)o * g->cv.cs, &acc);
        }
      }
  }
  sim_la_cvt_post(&g->cv, vals, out);
  return XRT_OK;
}

/* For each entry of the offset table over dims (row-major), the index
 * along dimension `which` of x. */
static const int64_t *sim_ragged_index(sim_fcc *fc, const xrt_shape *x,
                                       const int64_t *dims, int64_t nd,
                                       int64_t which) {
  int64_t sizes[XRT_MAX_RANK], st1[XRT_MAX_RANK], c = 1;
  for (int64_t j = 0; j < nd; j++) {
    sizes[j] = x->dims[dims[j]];
    st1[j] = dims[j] == which;
    c *= sizes[j];
  }
  int64_t *t = (int64_t *)sim_palloc(fc, sizeof *t * (size_t)(c ? c : 1));
  if (t) sim_enum_offsets(nd, sizes, st1, NULL, t, NULL);
  return t;
}

static int sim_ragged_has(const int64_t *v, int64_t n, int64_t x) {
  for (int64_t i = 0; i < n; i++)
    if (v[i] == x) return 1;
  return 0;
}

SIM_PRIVATE xrt_status sim_lower_chlo_ragged_dot(sim_fcc *fc, const xrt_ir_op *op,
                                            sim_step *st) {
  const xrt_ir_attr *dn = xrt_ir_op_attr(op, "ragged_dot_dimension_numbers");
  int64_t nlb, nrb, nlc, nrc, nlr, nrg;
  const int64_t *lbd = sim_dot_field(dn, "lhs_batching_dimensions", &nlb);
  const int64_t *rbd = sim_dot_field(dn, "rhs_batching_dimensions", &nrb);
  const int64_t *lcd = sim_dot_field(dn, "lhs_contracting_dimensions", &nlc);
  const int64_t *rcd = sim_dot_field(dn, "rhs_contracting_dimensions", &nrc);
  const int64_t *lrd = sim_dot_field(dn, "lhs_ragged_dimensions", &nlr);
  const int64_t *rgd = sim_dot_field(dn, "rhs_group_dimensions", &nrg);
  if (op->num_operands != 3 || nlb != nrb || nlc != nrc || nlr != 1 ||
      nrg > 1)
    return sim_fail_op(fc->cc->err, op, XRT_INVALID_ARGUMENT, "bad "
                       "ragged_dot_dimension_numbers");
  const xrt_shape *L = sim_shape(fc, op->operands[0]);
  const xrt_shape *R = sim_shape(fc, op->operands[1]);
  const xrt_shape *GS = sim_shape(fc, op->operands[2]);
  const xrt_shape *O = sim_shape(fc, op->results[0]);
  sim_ragged *g = (sim_ragged *)sim_palloc(fc, sizeof *g);
  if (!g) return XRT_RESOURCE_EXHAUSTED;
  int64_t rdim = lrd[0];
  g->mode = sim_ragged_has(lcd, nlc, rdim) ? 2
          : sim_ragged_has(lbd, nlb, rdim) ? 3 : 1;
  if (GS->rank != 1 || (g->mode == 1) != (nrg == 1))
    return sim_fail_op(fc->cc->err, op, XRT_UNIMPLEMENTED, "%s: only 1-D "
                       "group_sizes, with rhs_group_dimensions exactly when "
                       "the ragged dimension is a non-contracting one",
                       op->name);
  g->G = GS->dims[0];
  g->gt = GS->dtype;
  int64_t lf[XRT_MAX_RANK], rf[XRT_MAX_RANK], nlf, nrf;
  nlf = sim_free_dims(L, lbd, nlb, lcd, nlc, lf);
  nrf = sim_free_dims(R, rbd, nrb, rcd, nrc, rf);
  if (g->mode == 1) { /* the group dimension is not a result dimension */
    int64_t k = 0;
    for (int64_t i = 0; i < nrf; i++)
      if (rf[i] != rgd[0]) rf[k++] = rf[i];
    nrf = k;
  }
  int64_t *rb = NULL, *rk = NULL;
  g->lb = sim_dot_table(fc, L, lbd, nlb, R, rbd, &rb, &g->B);
  g->lk = sim_dot_table(fc, L, lcd, nlc, R, rcd, &rk, &g->K);
  g->lm = sim_dot_table(fc, L, lf, nlf, NULL, NULL, NULL, &g->M);
  g->rn = sim_dot_table(fc, R, rf, nrf, NULL, NULL, NULL, &g->N);
  if (!g->lb || !g->lk || !g->lm || !g->rn) return XRT_RESOURCE_EXHAUSTED;
  g->rb = rb, g->rk = rk;
  if (g->mode == 1) {
    int64_t rs[XRT_MAX_RANK];
    sim_strides(R, rs);
    g->rgs = rs[rgd[0]];
    g->m_r = sim_ragged_index(fc, L, lf, nlf, rdim);
    if (!g->m_r) return XRT_RESOURCE_EXHAUSTED;
    if (R->dims[rgd[0]] != g->G) goto bad;
  }
  if (g->mode == 2 &&
      !(g->k_r = sim_ragged_index(fc, L, lcd, nlc, rdim)))
    return XRT_RESOURCE_EXHAUSTED;
  if ((g->mode == 2 ? g->G : 1) * g->B * g->M * g->N != sim_numel(O))
    goto bad;
  xrt_status rc = sim_la_cvt_init(fc, op, &g->cv, op->operands[0],
                                  op->operands[1]);
  if (!rc) rc = sim_temp(fc, sizeof(int64_t) * (size_t)(g->G + 1), &g->ends);
  st->data = g;
  st->run = sim_run_ragged;
  return rc;
bad:
  return sim_fail_op(fc->cc->err, op, XRT_INVALID_ARGUMENT, "%s: result "
                     "shape does not follow from the operands", op->name);
}
