/*
 * src/sim/conv.c - convolution and dynamic_conv (large f32/f64
 * ones run as packed GEMM, see gemm.c).
 * Part of the simulated device; MIT licensed, see LICENSE.
 */
#include "internal.h"

/* Zeros that stand for padding elements (any element size, stride 0). */
static const double sim_la_zero[2] = {0.0, 0.0};

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

/* Whether c is a 2D convolution of f32 throughout, one group, static
 * padding: the ones conv_wino.c and conv_direct.c may take. */
SIM_PRIVATE int sim_conv_2d_f32(const sim_conv *c) {
  const sim_la_cvt *t = &c->cv;
  int f32 = (t->ct == XRT_F32) & (t->lt == XRT_F32) & (t->rt == XRT_F32) &
            (t->ot == XRT_F32);
  int one_group = (c->o_per_fgroup == c->O) & (c->o_per_bgroup == c->O);
  return (c->ns == 2) & f32 & (c->tab != NULL) & one_group;
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
  int empty = 0; /* a window of no position: every sum is of nothing */
  for (int32_t d = 0; d < c->ns; d++) empty |= c->K[d] == 0;
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
        if (!empty) sim_conv_elem(c, tab, L, R, lbase, o * c->rof, p, &acc);
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
    xrt_status grc; /* f32/f64 depthwise ones: conv_dw.c */
    if (sim_conv_dw_lower(fc, c, st, &grc)) return grc;
    /* 3x3 ones of stride 1 and many features: Winograd (conv_wino.c) */
    if (sim_conv_wino_lower(fc, c, st, &grc)) return grc;
    /* NCHW ones of few lhs features: from the image (conv_direct.c) */
    if (sim_conv_direct_lower(fc, c, st, &grc)) return grc;
    /* plain products: NCHW results, NHWC 1x1 ones (conv_gemm.c) */
    if (sim_conv_gemm_lower(fc, c, st, &grc)) return grc;
    /* large f32/f64 convolutions: packed GEMM */
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
