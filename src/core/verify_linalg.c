/*
 * src/core/verify_linalg.c - verifier constraints of the linear-algebra op family:
 * dot_general, convolution, fft, triangular_solve, cholesky, batch norm,
 * random numbers, chlo.ragged_dot.
 * Part of the core of xrt; MIT licensed, see LICENSE.
 */
#include "internal.h"
/* ----------------------------------------------------------------------
 * Verifier constraints of the linalg op family: convolution, dynamic_conv,
 * fft, triangular_solve, cholesky, the batch_norm ops, rng,
 * rng_bit_generator and chlo.ragged_dot (spec "Constraints" sections; Cn
 * below are the spec's numbers). Returns XRT_OK for ops of other families.
 * -------------------------------------------------------------------- */

#define XRT__LA_BIG ((int64_t)1 << 40) /* larger window values cannot
                                          describe a real tensor */

static bool xrt__la_quant(const xrt__vctx *v, int32_t id) {
  return xrt__vtype(v, id)->quant != NULL;
}

/* An optional list attribute of n entries, each in [lo, hi]; absent gives
 * dflt.  Boolean lists (window_reversal) come as 0/1 integers. */
static xrt_status xrt__la_list(const xrt__vctx *v, const char *name,
                               int64_t n, int64_t lo, int64_t hi,
                               int64_t dflt, int64_t *out) {
  const int64_t *x;
  int64_t k, bad;
  xrt_status s = xrt__vints(v, name, true, &x, &k);
  if (s) return s;
  if (x && k != n)
    return xrt__vfail(v, "%s must have %" PRId64 " entries, not %" PRId64,
                      name, n, k);
  if ((bad = xrt__vfill_checked(out, x, n, dflt, lo, hi)) >= 0)
    return xrt__vfail(v, "%s[%" PRId64 "] = %" PRId64 " is out of range",
                      name, bad, out[bad]);
  return XRT_OK;
}

/* An optional boolean attribute (BOOL or INT 0/1). */
static xrt_status xrt__la_bool(const xrt__vctx *v, const char *name,
                               bool *out) {
  const xrt_ir_attr *a = xrt_ir_op_attr(v->op, name);
  *out = false;
  if (!a) return XRT_OK;
  if (a->kind != XRT_ATTR_BOOL && a->kind != XRT_ATTR_INT)
    return xrt__vfail(v, "attribute '%s' must be a boolean", name);
  *out = a->i != 0;
  return XRT_OK;
}

/* An enum attribute that must be one of names; returns its index. */
static xrt_status xrt__la_enum(const xrt__vctx *v, const char *name,
                               const char *const *names, int n, int *out) {
  const xrt_ir_attr *a = xrt_ir_op_attr(v->op, name);
  if (!a || (a->kind != XRT_ATTR_ENUM && a->kind != XRT_ATTR_STRING) || !a->s)
    return xrt__vfail(v, "missing enum attribute '%s'", name);
  for (int i = 0; i < n; i++)
    if (strcmp(a->s, names[i]) == 0) {
      *out = i;
      return XRT_OK;
    }
  return xrt__vfail(v, "'%s' is not a valid %s", a->s, name);
}

/* ---- convolution, dynamic_conv ---- */

typedef struct xrt__la_conv {
  int64_t ib, ifd, isp[XRT_MAX_RANK];
  int64_t kif, kof, ksp[XRT_MAX_RANK];
  int64_t ob, ofd, osp[XRT_MAX_RANK];
} xrt__la_conv;

static xrt_status xrt__la_dn_int(const xrt__vctx *v, const xrt_ir_attr *dn,
                                 const char *name, int64_t *out) {
  const xrt_ir_attr *a = xrt_ir_attr_field(dn, name);
  if (!a || a->kind != XRT_ATTR_INT)
    return xrt__vfail(v, "dimension_numbers needs the integer %s", name);
  *out = a->i;
  return XRT_OK;
}

static xrt_status xrt__la_dn_list(const xrt__vctx *v, const xrt_ir_attr *dn,
                                  const char *name, int64_t n, int64_t *out) {
  const xrt_ir_attr *a = xrt_ir_attr_field(dn, name);
  if (!a || a->kind != XRT_ATTR_INTS)
    return xrt__vfail(v, "dimension_numbers needs the list %s", name);
  if (a->n != n) /* C13, C18, C20 */
    return xrt__vfail(v, "%s must have %" PRId64 " entries, not %" PRId64,
                      name, n, a->n);
  for (int64_t i = 0; i < n; i++) out[i] = a->ints[i];
  return XRT_OK;
}

/* [first] + spatial + [last] is a permutation of 0..N-1 (C14, C19, C21). */
static xrt_status xrt__la_perm(const xrt__vctx *v, const char *what,
                               int64_t first, const int64_t *sp, int64_t last,
                               int64_t N) {
  int64_t all[XRT_MAX_RANK + 2];
  all[0] = first;
  for (int64_t i = 0; i < N - 2; i++) all[1 + i] = sp[i];
  all[N - 1] = last;
  return xrt__vdims(v, what, all, N, N);
}

static xrt_status xrt__la_conv_dn(const xrt__vctx *v, int64_t N,
                                  xrt__la_conv *c) {
  const xrt_ir_attr *dn = xrt__vattr(v, "dimension_numbers", XRT_ATTR_DICT);
  xrt_status s;
  if (!dn) return xrt__vfail(v, "missing dimension_numbers");
  if ((s = xrt__la_dn_int(v, dn, "input_batch_dimension", &c->ib)) ||
      (s = xrt__la_dn_int(v, dn, "input_feature_dimension", &c->ifd)) ||
      (s = xrt__la_dn_list(v, dn, "input_spatial_dimensions", N - 2, c->isp)) ||
      (s = xrt__la_dn_int(v, dn, "kernel_input_feature_dimension", &c->kif)) ||
      (s = xrt__la_dn_int(v, dn, "kernel_output_feature_dimension", &c->kof)) ||
      (s = xrt__la_dn_list(v, dn, "kernel_spatial_dimensions", N - 2,
                           c->ksp)) ||
      (s = xrt__la_dn_int(v, dn, "output_batch_dimension", &c->ob)) ||
      (s = xrt__la_dn_int(v, dn, "output_feature_dimension", &c->ofd)) ||
      (s = xrt__la_dn_list(v, dn, "output_spatial_dimensions", N - 2,
                           c->osp)))
    return s;
  if ((s = xrt__la_perm(v, "input dimensions", c->ib, c->isp, c->ifd, N)) ||
      (s = xrt__la_perm(v, "kernel dimensions", c->kif, c->ksp, c->kof, N)))
    return s;
  return xrt__la_perm(v, "output dimensions", c->ob, c->osp, c->ofd, N);
}

static xrt_status xrt__la_padding(const xrt__vctx *v, int64_t ns,
                                  bool dynamic, int64_t *pad) {
  if (dynamic) {
    const xrt_shape *p = xrt__operand(v, 2);
    if (p->rank != 2 || p->dims[0] != ns || p->dims[1] != 2 ||
        !xrt__dtype_is_int(p->dtype))
      return xrt__vfail(v, "padding must be an integer tensor<%" PRId64
                        "x2>", ns);
    return XRT_OK;
  }
  const int64_t *x;
  int64_t k, bad;
  xrt_status s = xrt__vints(v, "padding", true, &x, &k);
  if (s) return s;
  if (x && k != 2 * ns) /* C5 */
    return xrt__vfail(v, "padding must have %" PRId64 "x2 entries", ns);
  bad = xrt__vfill_checked(pad, x, 2 * ns, 0, -XRT__LA_BIG + 1,
                           XRT__LA_BIG - 1);
  if (bad >= 0)
    return xrt__vfail(v, "padding entry %" PRId64 " is out of range", bad);
  return XRT_OK;
}

/* C11, C12, C15-C17, C22-C24. */
static xrt_status xrt__la_groups(const xrt__vctx *v, const xrt__la_conv *c,
                                 int64_t *fg, int64_t *bg) {
  const xrt_shape *l = xrt__operand(v, 0), *r = xrt__operand(v, 1);
  xrt_status s;
  if ((s = xrt__vint_or(v, "feature_group_count", 1, fg)) ||
      (s = xrt__vint_or(v, "batch_group_count", 1, bg)))
    return s;
  if (*fg < 1 || *bg < 1)
    return xrt__vfail(v, "feature_group_count and batch_group_count must be "
                         "positive");
  if (*fg > 1 && *bg > 1)
    return xrt__vfail(v, "feature_group_count and batch_group_count cannot "
                         "both exceed 1");
  int64_t in_f = l->dims[c->ifd], out_f = r->dims[c->kof];
  if (l->dims[c->ib] % *bg)
    return xrt__vfail(v, "input batch size %" PRId64 " is not a multiple of "
                      "batch_group_count %" PRId64, l->dims[c->ib], *bg);
  if (in_f % *fg)
    return xrt__vfail(v, "input feature size %" PRId64 " is not a multiple "
                      "of feature_group_count %" PRId64, in_f, *fg);
  if (r->dims[c->kif] != in_f / *fg)
    return xrt__vfail(v, "kernel input feature size %" PRId64 " must be the "
                      "input feature size / feature_group_count = %" PRId64,
                      r->dims[c->kif], in_f / *fg);
  if (out_f % *bg || out_f % *fg)
    return xrt__vfail(v, "kernel output feature size %" PRId64 " is not a "
                      "multiple of the group count", out_f);
  return XRT_OK;
}

static xrt_status xrt__verify_conv(const xrt__vctx *v, bool dynamic) {
  xrt_status s = xrt__vcounts(v, dynamic ? 3 : 2, 1);
  if (s) return s;
  const xrt_shape *l = xrt__operand(v, 0), *r = xrt__operand(v, 1);
  const xrt_shape *o = xrt__result(v, 0);
  int64_t N = l->rank, ns = N - 2;
  if (N < 2 || r->rank != N || o->rank != N) /* C1, C28 */
    return xrt__vfail(v, "lhs, rhs and result must have the same rank >= 2");
  if (l->dtype != r->dtype && !xrt__la_quant(v, v->op->operands[0]) &&
      !xrt__la_quant(v, v->op->operands[1])) /* C2 */
    return xrt__vfail(v, "lhs and rhs element types differ (%s vs %s)",
                      xrt_dtype_name(l->dtype), xrt_dtype_name(r->dtype));
  xrt__la_conv c;
  int64_t ws[XRT_MAX_RANK], ld[XRT_MAX_RANK], rd[XRT_MAX_RANK];
  int64_t rev[XRT_MAX_RANK], pad[2 * XRT_MAX_RANK], fg, bg;
  if ((s = xrt__la_list(v, "window_strides", ns, 1, XRT__LA_BIG, 1, ws)) ||
      (s = xrt__la_list(v, "lhs_dilation", ns, 1, XRT__LA_BIG, 1, ld)) ||
      (s = xrt__la_list(v, "rhs_dilation", ns, 1, XRT__LA_BIG, 1, rd)) ||
      (s = xrt__la_list(v, "window_reversal", ns, 0, 1, 0, rev)) ||
      (s = xrt__la_padding(v, ns, dynamic, pad)) ||
      (s = xrt__la_conv_dn(v, N, &c)) || (s = xrt__la_groups(v, &c, &fg, &bg)))
    return s;
  const xrt_ir_attr *pc = xrt_ir_op_attr(v->op, "precision_config");
  if (pc && pc->kind == XRT_ATTR_LIST && pc->num_items != 2) /* C25 */
    return xrt__vfail(v, "precision_config must have 2 entries");
  /* C26 */
  if (o->dims[c.ob] != l->dims[c.ib] / bg)
    return xrt__vfail(v, "result batch size must be %" PRId64 ", not %" PRId64,
                      l->dims[c.ib] / bg, o->dims[c.ob]);
  if (o->dims[c.ofd] != r->dims[c.kof])
    return xrt__vfail(v, "result feature size must be %" PRId64 ", not %"
                      PRId64, r->dims[c.kof], o->dims[c.ofd]);
  for (int64_t d = 0; !dynamic && d < ns; d++) {
    int64_t padded = pad[2 * d] + xrt__dilated(l->dims[c.isp[d]], ld[d]) +
                     pad[2 * d + 1];
    int64_t win = xrt__dilated(r->dims[c.ksp[d]], rd[d]);
    int64_t n = xrt__num_windows(padded, win, ws[d]);
    if (o->dims[c.osp[d]] != n)
      return xrt__vfail(v, "result spatial dimension %" PRId64 " must be %"
                        PRId64 " (the number of windows), not %" PRId64,
                        c.osp[d], n, o->dims[c.osp[d]]);
  }
  return XRT_OK;
}

/* ---- fft ---- */

static xrt_status xrt__verify_fft(const xrt__vctx *v) {
  static const char *const types[] = {"FFT", "IFFT", "RFFT", "IRFFT"};
  int kind = 0;
  const int64_t *len;
  int64_t nl;
  xrt_status s = xrt__vcounts(v, 1, 1);
  if (s || (s = xrt__la_enum(v, "fft_type", types, 4, &kind)) ||
      (s = xrt__vints(v, "fft_length", false, &len, &nl)))
    return s;
  const xrt_shape *in = xrt__operand(v, 0), *out = xrt__result(v, 0);
  if (nl < 1 || nl > 3) /* C3 */
    return xrt__vfail(v, "fft_length must have 1 to 3 entries");
  if (in->rank < nl) /* C1 */
    return xrt__vfail(v, "operand rank %d is below size(fft_length) %" PRId64,
                      (int)in->rank, nl);
  xrt_dtype it = in->dtype, ot = out->dtype;
  bool ok = kind < 2 ? xrt_dtype_is_complex(it) && it == ot
          : kind == 2 ? (it == XRT_F32 && ot == XRT_C64) ||
                            (it == XRT_F64 && ot == XRT_C128)
                      : (it == XRT_C64 && ot == XRT_F32) ||
                            (it == XRT_C128 && ot == XRT_F64);
  if (!ok) /* C2 */
    return xrt__vfail(v, "element types %s -> %s do not fit fft_type %s",
                      xrt_dtype_name(it), xrt_dtype_name(ot), types[kind]);
  if (out->rank != in->rank)
    return xrt__vfail(v, "operand and result ranks differ");
  const xrt_shape *real = kind == 2 ? in : kind == 3 ? out : NULL;
  for (int64_t i = 0; i < nl; i++) {
    int64_t d = in->rank - nl + i;
    int64_t have = real ? real->dims[d] : in->dims[d];
    if (len[i] != have) /* C4 (and the transformed sizes of FFT/IFFT) */
      return xrt__vfail(v, "fft_length[%" PRId64 "] = %" PRId64 " does not "
                        "match dimension %" PRId64 " (%" PRId64 ")", i, len[i],
                        d, have);
  }
  for (int32_t d = 0; d < in->rank; d++) { /* C5 */
    int64_t want = in->dims[d];
    if (d == in->rank - 1 && kind == 2) want = want == 0 ? 0 : want / 2 + 1;
    if (d == in->rank - 1 && kind == 3) {
      int64_t h = out->dims[d] == 0 ? 0 : out->dims[d] / 2 + 1;
      if (in->dims[d] != h)
        return xrt__vfail(v, "IRFFT operand's last dimension must be %" PRId64,
                          h);
      continue;
    }
    if (out->dims[d] != want)
      return xrt__vfail(v, "result dimension %d must be %" PRId64 ", not %"
                        PRId64, (int)d, want, out->dims[d]);
  }
  return XRT_OK;
}

/* ---- triangular_solve, cholesky ---- */

static bool xrt__la_fc(xrt_dtype t) {
  return xrt_dtype_is_float(t) || xrt_dtype_is_complex(t);
}

/* The spec lets these ops take per-tensor (not per-axis) quantized tensors. */
static bool xrt__la_per_tensor_quant(const xrt__vctx *v, int32_t id) {
  const xrt_ir_quant *q = xrt__vtype(v, id)->quant;
  return q && q->axis < 0;
}

static xrt_status xrt__verify_triangular_solve(const xrt__vctx *v) {
  static const char *const tr[] = {"NO_TRANSPOSE", "TRANSPOSE", "ADJOINT"};
  int t = 0;
  bool left = false, b1, b2;
  xrt_status s = xrt__vcounts(v, 2, 1);
  if (s || (s = xrt__la_enum(v, "transpose_a", tr, 3, &t)) ||
      (s = xrt__la_bool(v, "left_side", &left)) ||
      (s = xrt__la_bool(v, "lower", &b1)) ||
      (s = xrt__la_bool(v, "unit_diagonal", &b2)))
    return s;
  const xrt_shape *a = xrt__operand(v, 0), *b = xrt__operand(v, 1);
  int32_t R = a->rank;
  if (a->dtype != b->dtype) /* C1 */
    return xrt__vfail(v, "a and b element types differ");
  if (!xrt__la_fc(a->dtype) && !xrt__la_per_tensor_quant(v, v->op->operands[0]))
    return xrt__vfail(v, "element type %s is not floating-point, complex or "
                      "per-tensor quantized", xrt_dtype_name(a->dtype));
  if (R < 2 || b->rank != R) /* C2 */
    return xrt__vfail(v, "a and b must have the same rank >= 2");
  for (int32_t d = 0; d < R - 2; d++) /* C3 */
    if (a->dims[d] != b->dims[d])
      return xrt__vfail(v, "batch dimension %d of a and b differ", (int)d);
  if (a->dims[R - 1] != a->dims[R - 2]) /* C4 */
    return xrt__vfail(v, "a must be square in its last two dimensions");
  int64_t bd = b->dims[left ? R - 2 : R - 1];
  if (bd != a->dims[R - 1]) /* C4 */
    return xrt__vfail(v, "dimension %d of b is %" PRId64 ", expected %"
                      PRId64 " for left_side = %s", left ? R - 2 : R - 1, bd,
                      a->dims[R - 1], left ? "true" : "false");
  return xrt__vsame(v, v->op->operands[1], v->op->results[0],
                    "result type differs from b"); /* C5 */
}

static xrt_status xrt__verify_cholesky(const xrt__vctx *v) {
  bool lower;
  xrt_status s = xrt__vcounts(v, 1, 1);
  if (s || (s = xrt__la_bool(v, "lower", &lower))) return s;
  const xrt_shape *a = xrt__operand(v, 0);
  if (!xrt__la_fc(a->dtype) && !xrt__la_per_tensor_quant(v, v->op->operands[0]))
    return xrt__vfail(v, "element type %s is not floating-point, complex or "
                      "per-tensor quantized", xrt_dtype_name(a->dtype));
  if (a->rank < 2) return xrt__vfail(v, "a must have rank >= 2"); /* C2 */
  if (a->dims[a->rank - 1] != a->dims[a->rank - 2]) /* C3 */
    return xrt__vfail(v, "a must be square in its last two dimensions");
  return xrt__vsame(v, v->op->operands[0], v->op->results[0],
                    "result type differs from a"); /* C1 */
}

/* ---- batch_norm_* ---- */

/* Operand/result i is the full tensor when bit i of full is set, else a
 * 1-D tensor of the feature size; all share the element type. */
static xrt_status xrt__verify_batch_norm(const xrt__vctx *v, int nops,
                                         int nres, unsigned full) {
  int64_t fi;
  xrt_status s = xrt__vcounts(v, nops, nres);
  if (s) return s;
  const xrt_ir_attr *e = xrt_ir_op_attr(v->op, "epsilon");
  if (!e || e->kind != XRT_ATTR_FLOAT)
    return xrt__vfail(v, "missing float attribute 'epsilon'");
  if ((s = xrt__vint(v, "feature_index", &fi))) return s;
  const xrt_shape *x = xrt__operand(v, 0);
  if (fi < 0 || fi >= x->rank) /* C1 */
    return xrt__vfail(v, "feature_index %" PRId64 " is out of range for rank "
                      "%d", fi, (int)x->rank);
  if (!xrt_dtype_is_float(x->dtype) &&
      !xrt__la_per_tensor_quant(v, v->op->operands[0]))
    return xrt__vfail(v, "element type %s is not floating-point or "
                      "per-tensor quantized", xrt_dtype_name(x->dtype));
  for (int i = 0; i < nops + nres; i++) {
    int32_t id = i < nops ? v->op->operands[i] : v->op->results[i - nops];
    const xrt_shape *t = xrt__vshape(v, id);
    const char *what = i < nops ? "operand" : "result";
    int k = i < nops ? i : i - nops;
    if (t->dtype != x->dtype) /* C2 */
      return xrt__vfail(v, "%s %d has element type %s, expected %s", what, k,
                        xrt_dtype_name(t->dtype), xrt_dtype_name(x->dtype));
    if ((full >> i) & 1u) {
      if (!xrt__same_dims(t, x))
        return xrt__vfail(v, "%s %d must have the operand's shape", what, k);
    } else if (t->rank != 1 || t->dims[0] != x->dims[fi]) {
      return xrt__vfail(v, "%s %d must be 1-D of size dim(operand, "
                        "feature_index) = %" PRId64, what, k, x->dims[fi]);
    }
  }
  return XRT_OK;
}

/* ---- rng, rng_bit_generator ---- */

static xrt_status xrt__verify_rng(const xrt__vctx *v) {
  static const char *const dist[] = {"UNIFORM", "NORMAL"};
  int kind = 0;
  xrt_status s = xrt__vcounts(v, 3, 1);
  if (s || (s = xrt__la_enum(v, "rng_distribution", dist, 2, &kind))) return s;
  const xrt_shape *a = xrt__operand(v, 0), *b = xrt__operand(v, 1);
  const xrt_shape *sh = xrt__operand(v, 2), *o = xrt__result(v, 0);
  if (a->rank != 0 || b->rank != 0)
    return xrt__vfail(v, "a and b must be 0-dimensional");
  if (a->dtype != o->dtype || b->dtype != o->dtype) /* C1 */
    return xrt__vfail(v, "a, b and result must have the same element type");
  if (kind == 1 && !xrt_dtype_is_float(o->dtype)) /* C2 */
    return xrt__vfail(v, "NORMAL needs a floating-point element type");
  if (!(kind == 0 && (xrt__dtype_is_int(o->dtype) || o->dtype == XRT_PRED)) &&
      !xrt_dtype_is_float(o->dtype))
    return xrt__vfail(v, "element type %s is not allowed",
                      xrt_dtype_name(o->dtype));
  if (sh->rank != 1 || !xrt__dtype_is_int(sh->dtype) || sh->dims[0] != o->rank)
    return xrt__vfail(v, "shape must be a 1-D integer tensor of %d entries",
                      (int)o->rank); /* C3 */
  return XRT_OK;
}

static xrt_status xrt__verify_rng_bit_generator(const xrt__vctx *v) {
  static const char *const algs[] = {"DEFAULT", "THREE_FRY", "PHILOX"};
  int alg = 0;
  xrt_status s = xrt__vcounts(v, 1, 2);
  if (s || (s = xrt__la_enum(v, "rng_algorithm", algs, 3, &alg))) return s;
  const xrt_shape *st = xrt__operand(v, 0), *o = xrt__result(v, 1);
  if (st->rank != 1 || st->dtype != XRT_U64)
    return xrt__vfail(v, "initial_state must be a 1-D ui64 tensor");
  int64_t n = st->dims[0];
  if (alg == 1 ? n != 2 : n != 2 && n != 3) /* C2 */
    return xrt__vfail(v, "initial_state must have %s entries for %s, not %"
                      PRId64, alg == 1 ? "2" : "2 or 3", algs[alg], n);
  if ((s = xrt__vsame(v, v->op->operands[0], v->op->results[0],
                      "output_state type differs from initial_state")))
    return s; /* C1 */
  if (!xrt__dtype_is_int(o->dtype) && !xrt_dtype_is_float(o->dtype))
    return xrt__vfail(v, "output must have an integer or floating-point "
                         "element type, not %s", xrt_dtype_name(o->dtype));
  return XRT_OK;
}

/* ---- chlo.ragged_dot ---- */

/* Expected result: [groups (mode 2)] + batch + lhs free + rhs free. */
static xrt_status xrt__la_rd_result(const xrt__vctx *v, const int64_t *lb,
                                    const int64_t *lc, int64_t nb, int64_t nc,
                                    const int64_t *rb, const int64_t *rc,
                                    const int64_t *rg, int64_t ng,
                                    int64_t groups) {
  const xrt_shape *l = xrt__operand(v, 0), *r = xrt__operand(v, 1);
  const xrt_shape *o = xrt__result(v, 0);
  int64_t want[3 * XRT_MAX_RANK];
  int k = 0;
  if (groups >= 0) want[k++] = groups;
  for (int64_t i = 0; i < nb; i++) want[k++] = l->dims[lb[i]];
  for (int32_t d = 0; d < l->rank; d++)
    if (!xrt__contains(lb, nb, d) && !xrt__contains(lc, nc, d))
      want[k++] = l->dims[d];
  for (int32_t d = 0; d < r->rank; d++)
    if (!xrt__contains(rb, nb, d) && !xrt__contains(rc, nc, d) &&
        !xrt__contains(rg, ng, d))
      want[k++] = r->dims[d];
  if (!xrt__dims_are(o, want, k))
    return xrt__vfail(v, "result shape does not follow from the operands and "
                         "ragged_dot_dimension_numbers");
  return XRT_OK;
}

static xrt_status xrt__verify_ragged_dot(const xrt__vctx *v) {
  xrt_status s = xrt__vcounts(v, 3, 1);
  if (s) return s;
  const xrt_ir_attr *dn =
      xrt__vattr(v, "ragged_dot_dimension_numbers", XRT_ATTR_DICT);
  if (!dn) return xrt__vfail(v, "missing ragged_dot_dimension_numbers");
  const int64_t *lb, *rb, *lc, *rc, *lr, *rg;
  int64_t nlb, nrb, nlc, nrc, nlr, nrg;
  if ((s = xrt__vfield(v, dn, "lhs_batching_dimensions", &lb, &nlb)) ||
      (s = xrt__vfield(v, dn, "rhs_batching_dimensions", &rb, &nrb)) ||
      (s = xrt__vfield(v, dn, "lhs_contracting_dimensions", &lc, &nlc)) ||
      (s = xrt__vfield(v, dn, "rhs_contracting_dimensions", &rc, &nrc)) ||
      (s = xrt__vfield(v, dn, "lhs_ragged_dimensions", &lr, &nlr)) ||
      (s = xrt__vfield(v, dn, "rhs_group_dimensions", &rg, &nrg)))
    return s;
  const xrt_shape *l = xrt__operand(v, 0), *r = xrt__operand(v, 1);
  const xrt_shape *gs = xrt__operand(v, 2);
  if (nlb != nrb || nlc != nrc)
    return xrt__vfail(v, "lhs and rhs need as many batching and contracting "
                         "dimensions");
  if (nlb + nlc > XRT_MAX_RANK || nrb + nrc + nrg > XRT_MAX_RANK)
    return xrt__vfail(v, "too many dimensions");
  int64_t ld[XRT_MAX_RANK], rd[XRT_MAX_RANK + 1];
  for (int64_t i = 0; i < nlb; i++) ld[i] = lb[i], rd[i] = rb[i];
  for (int64_t i = 0; i < nlc; i++) ld[nlb + i] = lc[i], rd[nrb + i] = rc[i];
  for (int64_t i = 0; i < nrg; i++) rd[nrb + nrc + i] = rg[i];
  if ((s = xrt__vdims(v, "lhs dimensions", ld, nlb + nlc, l->rank)) ||
      (s = xrt__vdims(v, "rhs dimensions", rd, nrb + nrc + nrg, r->rank)))
    return s;
  for (int64_t i = 0; i < nlb + nlc; i++)
    if (l->dims[ld[i]] != r->dims[rd[i]])
      return xrt__vfail(v, "%s dimension sizes differ: lhs %" PRId64
                        " vs rhs %" PRId64, i < nlb ? "batching"
                        : "contracting", l->dims[ld[i]], r->dims[rd[i]]);
  if (nlr != 1) return xrt__vfail(v, "exactly one lhs_ragged_dimensions");
  if (lr[0] < 0 || lr[0] >= l->rank)
    return xrt__vfail(v, "lhs ragged dimension %" PRId64 " is out of range",
                      lr[0]);
  if (gs->rank != 1 || !xrt__dtype_is_int(gs->dtype))
    return xrt__vfail(v, "group_sizes must be a 1-D integer tensor");
  if (l->dtype != r->dtype)
    return xrt__vfail(v, "lhs and rhs element types differ");
  int64_t g = gs->dims[0];
  if (xrt__contains(lc, nlc, lr[0]) || xrt__contains(lb, nlb, lr[0])) {
    if (nrg != 0)
      return xrt__vfail(v, "rhs_group_dimensions must be empty when the "
                           "ragged dimension is a batching or contracting "
                           "one");
    return xrt__la_rd_result(v, lb, lc, nlb, nlc, rb, rc, rg, nrg,
                             xrt__contains(lc, nlc, lr[0]) ? g : -1);
  }
  if (nrg != 1)
    return xrt__vfail(v, "a ragged non-contracting dimension needs one "
                         "rhs_group_dimensions");
  if (r->dims[rg[0]] != g)
    return xrt__vfail(v, "rhs group dimension has size %" PRId64 ", "
                      "group_sizes %" PRId64, r->dims[rg[0]], g);
  return xrt__la_rd_result(v, lb, lc, nlb, nlc, rb, rc, rg, nrg, -1);
}

XRT__PRIVATE xrt_status xrt__verify_linalg(const xrt__vctx *v) {
  switch (v->op->code) {
  case XRT_OP_CONVOLUTION: return xrt__verify_conv(v, false);
  case XRT_OP_DYNAMIC_CONV: return xrt__verify_conv(v, true);
  case XRT_OP_FFT: return xrt__verify_fft(v);
  case XRT_OP_TRIANGULAR_SOLVE: return xrt__verify_triangular_solve(v);
  case XRT_OP_CHOLESKY: return xrt__verify_cholesky(v);
  case XRT_OP_BATCH_NORM_INFERENCE: return xrt__verify_batch_norm(v, 5, 1, 0x21u);
  case XRT_OP_BATCH_NORM_TRAINING: return xrt__verify_batch_norm(v, 3, 3, 0x09u);
  case XRT_OP_BATCH_NORM_GRAD: return xrt__verify_batch_norm(v, 5, 3, 0x31u);
  case XRT_OP_RNG: return xrt__verify_rng(v);
  case XRT_OP_RNG_BIT_GENERATOR: return xrt__verify_rng_bit_generator(v);
  case XRT_OP_CHLO_RAGGED_DOT: return xrt__verify_ragged_dot(v);
  default: return XRT_OK;
  }
}
