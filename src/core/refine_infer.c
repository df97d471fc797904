/*
 * src/core/refine_infer.c - shape refinement: the result shapes of ops
 * from their operands' shapes (and the contents of their shape operands),
 * and the static forms of the dynamic_* ops.
 * Part of the core of xrt; MIT licensed, see LICENSE.
 *
 * Each rule fills what it can tell and leaves XRT_DIM_DYNAMIC elsewhere;
 * refine.c merges that with the declared type and fails where a dimension
 * stays dynamic.  Malformed ops (wrong ranks, missing attributes) get no
 * dims here: the verifier reports them once the program is static.
 */
#include "refine.h"

/* Sizes and attribute values beyond this describe no real tensor; rules
 * leave them to the verifier rather than overflow. */
#define XRT__RBIG ((int64_t)1 << 40)

static bool xrt__rsmall(const int64_t *v, int64_t n) {
  for (int64_t i = 0; v && i < n; i++)
    if (v[i] > XRT__RBIG || v[i] < -XRT__RBIG) return false;
  return true;
}

static const xrt_shape *xrt__ropnd(const xrt__rfn *f, const xrt_ir_op *op,
                                   int k) {
  return &f->types[op->operands[k]].shape;
}

/* An INTS attribute or field; NULL (n 0) when absent or of another kind. */
static const int64_t *xrt__rints(const xrt_ir_attr *a, int64_t *n) {
  *n = 0;
  if (!a || a->kind != XRT_ATTR_INTS) return NULL;
  *n = a->n;
  return a->ints;
}

static const int64_t *xrt__rattr(const xrt_ir_op *op, const char *name,
                                 int64_t *n) {
  return xrt__rints(xrt_ir_op_attr(op, name), n);
}

static int64_t xrt__rint_attr(const xrt_ir_op *op, const char *name,
                              int64_t dflt) {
  const xrt_ir_attr *a = xrt_ir_op_attr(op, name);
  return a && a->kind == XRT_ATTR_INT ? a->i : dflt;
}

/* Known contents of operand k with exactly n elements, else NULL. */
static const int64_t *xrt__rvals(const xrt__rfn *f, const xrt_ir_op *op,
                                 int k, int64_t n) {
  if (k >= op->num_operands) return NULL;
  const xrt__rval *v = xrt__rknown(f, op->operands[k]);
  return v && v->n == n ? v->v : NULL;
}

/* Copies dims of the same-rank operand in where out has none (elementwise
 * ops and the like). */
static void xrt__rlike(xrt_shape *out, const xrt_shape *in) {
  if (in->rank != out->rank) return;
  for (int32_t d = 0; d < out->rank; d++)
    if (out->dims[d] < 0) out->dims[d] = in->dims[d];
}

static void xrt__rall_operands(const xrt__rfn *f, const xrt_ir_op *op,
                               xrt_shape *out) {
  for (int32_t k = 0; k < op->num_operands; k++)
    if (f->types[op->operands[k]].kind == XRT_TYPE_TENSOR)
      xrt__rlike(out, xrt__ropnd(f, op, k));
}

/* Result i from operand i (multi-result ops that keep shapes). */
static void xrt__rpairwise(const xrt__rfn *f, const xrt_ir_op *op,
                           xrt_shape *out) {
  for (int32_t i = 0; i < op->num_results && i < op->num_operands; i++)
    xrt__rlike(&out[i], xrt__ropnd(f, op, i));
}

/* chlo.broadcast_*: numpy broadcasting, trailing dimensions aligned (or
 * broadcast_dimensions mapping the lower-ranked operand). */
static void xrt__rchlo_broadcast(const xrt__rfn *f, const xrt_ir_op *op,
                                 xrt_shape *out) {
  int64_t nbd;
  const int64_t *bd = xrt__rattr(op, "broadcast_dimensions", &nbd);
  int64_t want[XRT_MAX_RANK];
  for (int32_t d = 0; d < out->rank; d++) want[d] = 1;
  for (int32_t k = 0; k < op->num_operands; k++) {
    const xrt_shape *s = xrt__ropnd(f, op, k);
    if (op->code == XRT_OP_CHLO_BROADCAST_SELECT && k == 0 && s->rank == 0)
      continue;
    for (int32_t d = 0; d < s->rank; d++) {
      int64_t at = bd && nbd == s->rank && s->rank < out->rank
                       ? bd[d]
                       : out->rank - s->rank + d;
      if (at < 0 || at >= out->rank) return;
      if (s->dims[d] != 1) want[at] = s->dims[d];
    }
  }
  for (int32_t d = 0; d < out->rank; d++) out->dims[d] = want[d];
}

static void xrt__rbroadcast_in_dim(const xrt__rfn *f, const xrt_ir_op *op,
                                   xrt_shape *out) {
  const xrt_shape *in = xrt__ropnd(f, op, 0);
  if (op->code == XRT_OP_DYNAMIC_BROADCAST_IN_DIM) {
    const int64_t *v = xrt__rvals(f, op, 1, out->rank);
    for (int32_t d = 0; v && d < out->rank; d++) out->dims[d] = v[d];
  }
  int64_t n;
  const int64_t *bd = xrt__rattr(op, "broadcast_dimensions", &n);
  for (int64_t i = 0; bd && i < n && i < in->rank; i++)
    if (bd[i] >= 0 && bd[i] < out->rank && out->dims[bd[i]] < 0 &&
        in->dims[i] != 1)
      out->dims[bd[i]] = in->dims[i];
}

/* reshape: at most one unknown dimension, from the element count. */
static void xrt__rreshape(const xrt__rfn *f, const xrt_ir_op *op,
                          const xrt_shape *declared, xrt_shape *out) {
  if (op->code == XRT_OP_DYNAMIC_RESHAPE) {
    const int64_t *v = xrt__rvals(f, op, 1, out->rank);
    for (int32_t d = 0; v && d < out->rank; d++) out->dims[d] = v[d];
    if (v) return;
  }
  int64_t total = xrt__rnumel(xrt__ropnd(f, op, 0)), rest = 1;
  int32_t unknown = -1;
  for (int32_t d = 0; d < out->rank; d++) {
    out->dims[d] = declared->dims[d];
    if (declared->dims[d] < 0) {
      if (unknown >= 0) return;
      unknown = d;
    } else if (declared->dims[d] > XRT__RBIG || rest > XRT__RBIG) {
      return;
    } else {
      rest *= declared->dims[d];
    }
  }
  if (unknown >= 0 && total >= 0 && rest > 0 && total % rest == 0)
    out->dims[unknown] = total / rest;
}

static void xrt__rfrom_values(const xrt__rfn *f, const xrt_ir_op *op, int k,
                              xrt_shape *out) {
  const int64_t *v = xrt__rvals(f, op, k, out->rank);
  for (int32_t d = 0; v && d < out->rank; d++) out->dims[d] = v[d];
}

static void xrt__rtranspose(const xrt__rfn *f, const xrt_ir_op *op,
                            xrt_shape *out) {
  const xrt_shape *in = xrt__ropnd(f, op, 0);
  int64_t n;
  const int64_t *perm = xrt__rattr(op, "permutation", &n);
  if (!perm || n != in->rank || out->rank != in->rank) return;
  for (int64_t i = 0; i < n; i++)
    if (perm[i] >= 0 && perm[i] < in->rank) out->dims[i] = in->dims[perm[i]];
}

/* slice from start/limit/strides (attributes, or the known operands of
 * real_dynamic_slice). */
static void xrt__rslice_dims(const xrt_shape *in, const int64_t *st,
                             const int64_t *li, const int64_t *sd,
                             xrt_shape *out) {
  if (!st || !li || out->rank != in->rank || !xrt__rsmall(st, in->rank) ||
      !xrt__rsmall(li, in->rank) || !xrt__rsmall(sd, in->rank))
    return;
  for (int32_t d = 0; d < out->rank; d++) {
    int64_t stride = sd ? sd[d] : 1;
    if (stride > 0 && li[d] >= st[d])
      out->dims[d] = (li[d] - st[d] + stride - 1) / stride;
  }
}

static bool xrt__rsame_attr(const xrt_ir_attr *a, const xrt_ir_attr *b) {
  if (a->kind != b->kind || a->i != b->i || a->n != b->n ||
      !a->name != !b->name || (a->name && strcmp(a->name, b->name)))
    return false;
  switch (a->kind) {
  case XRT_ATTR_UNIT: case XRT_ATTR_INT: case XRT_ATTR_BOOL:
    return true;
  case XRT_ATTR_FLOAT: return a->f == b->f;
  case XRT_ATTR_STRING: case XRT_ATTR_ENUM: case XRT_ATTR_SYMBOL:
    return a->s && b->s && strcmp(a->s, b->s) == 0;
  case XRT_ATTR_INTS:
    return !a->n || memcmp(a->ints, b->ints, sizeof(int64_t) * (size_t)a->n) == 0;
  case XRT_ATTR_DENSE:
    return a->lit && b->lit && a->lit->bytes == b->lit->bytes &&
           a->lit->splat == b->lit->splat &&
           xrt__type_equal(&a->lit->type, &b->lit->type) &&
           memcmp(a->lit->data, b->lit->data, a->lit->bytes) == 0;
  default: return false; /* not needed for the shape computations JAX emits */
  }
}

/* Whether values a and b hold the same contents by construction: one
 * value, equal known contents, or ops of one kind with equal attributes
 * on equivalent operands (JAX computes a slice's start twice). */
static bool xrt__requiv(const xrt__rfn *f, int32_t a, int32_t b, int depth) {
  if (a == b) return true;
  const xrt__rval *ka = xrt__rknown(f, a), *kb = xrt__rknown(f, b);
  if (ka && kb) return ka->n == kb->n && (!ka->n || !memcmp(ka->v, kb->v,
                                          sizeof(int64_t) * (size_t)ka->n));
  const xrt_ir_op *x = f->def[a], *y = f->def[b];
  if (!x || !y || depth > 32 || x->code != y->code || x->num_regions ||
      y->num_regions || x->num_results != 1 || y->num_results != 1 ||
      x->num_operands != y->num_operands || x->num_attrs != y->num_attrs ||
      x->code == XRT_OP_CUSTOM_CALL || x->code == XRT_OP_FUNC_CALL ||
      x->code == XRT_OP_RNG || x->code == XRT_OP_RNG_BIT_GENERATOR ||
      !xrt__type_equal(&f->types[a], &f->types[b]))
    return false;
  for (int32_t i = 0; i < x->num_attrs; i++)
    if (!xrt__rsame_attr(&x->attrs[i], &y->attrs[i])) return false;
  for (int32_t i = 0; i < x->num_operands; i++)
    if (!xrt__requiv(f, x->operands[i], y->operands[i], depth + 1))
      return false;
  return true;
}

/* real_dynamic_slice(x, start, add(start', sizes), ones) with start'
 * equivalent to start and sizes known: the sizes (what
 * StablehloRefineShapes turns into a dynamic_slice). */
static const int64_t *xrt__rslice_sizes(const xrt__rfn *f,
                                        const xrt_ir_op *op, int64_t r) {
  const int64_t *st = xrt__rvals(f, op, 3, r);
  const xrt_ir_op *lim = op->num_operands == 4 ? f->def[op->operands[2]] : NULL;
  for (int64_t d = 0; st && d < r; d++)
    if (st[d] != 1) return NULL;
  if (!st || !lim || lim->code != XRT_OP_ADD || lim->num_operands != 2)
    return NULL;
  for (int k = 0; k < 2; k++) {
    const xrt__rval *c = xrt__rknown(f, lim->operands[1 - k]);
    if (c && c->n == r && xrt__requiv(f, lim->operands[k], op->operands[1], 0))
      return c->v;
  }
  return NULL;
}

static void xrt__rslice(const xrt__rfn *f, const xrt_ir_op *op,
                        xrt_shape *out) {
  const xrt_shape *in = xrt__ropnd(f, op, 0);
  int64_t r = in->rank, n1, n2, n3;
  if (op->code == XRT_OP_REAL_DYNAMIC_SLICE) {
    const int64_t *sizes = xrt__rslice_sizes(f, op, r);
    for (int32_t d = 0; sizes && d < out->rank; d++) out->dims[d] = sizes[d];
    xrt__rslice_dims(in, xrt__rvals(f, op, 1, r), xrt__rvals(f, op, 2, r),
                     xrt__rvals(f, op, 3, r), out);
    return;
  }
  const int64_t *st = xrt__rattr(op, "start_indices", &n1),
                *li = xrt__rattr(op, "limit_indices", &n2),
                *sd = xrt__rattr(op, "strides", &n3);
  if (n1 == r && n2 == r && (!sd || n3 == r))
    xrt__rslice_dims(in, st, li, sd, out);
}

static void xrt__rpad_dims(const xrt_shape *x, const int64_t *lo,
                           const int64_t *hi, const int64_t *in,
                           xrt_shape *out) {
  if (!lo || !hi || out->rank != x->rank || !xrt__rsmall(lo, x->rank) ||
      !xrt__rsmall(hi, x->rank) || !xrt__rsmall(in, x->rank) ||
      !xrt__rsmall(x->dims, x->rank))
    return;
  for (int32_t d = 0; d < x->rank; d++) {
    int64_t interior = in ? in[d] : 0;
    if (x->dims[d] < 0) continue;
    out->dims[d] = lo[d] + hi[d] + x->dims[d] +
                   (x->dims[d] ? (x->dims[d] - 1) * interior : 0);
  }
}

static void xrt__rpad(const xrt__rfn *f, const xrt_ir_op *op,
                      xrt_shape *out) {
  const xrt_shape *x = xrt__ropnd(f, op, 0);
  int64_t r = x->rank, n1, n2, n3;
  if (op->code == XRT_OP_DYNAMIC_PAD) {
    xrt__rpad_dims(x, xrt__rvals(f, op, 2, r), xrt__rvals(f, op, 3, r),
                   xrt__rvals(f, op, 4, r), out);
    return;
  }
  const int64_t *lo = xrt__rattr(op, "edge_padding_low", &n1),
                *hi = xrt__rattr(op, "edge_padding_high", &n2),
                *in = xrt__rattr(op, "interior_padding", &n3);
  if (n1 == r && n2 == r && (!in || n3 == r))
    xrt__rpad_dims(x, lo, hi, in, out);
}

static void xrt__rconcatenate(const xrt__rfn *f, const xrt_ir_op *op,
                              xrt_shape *out) {
  int64_t dim = xrt__rint_attr(op, "dimension", -1), total = 0;
  if (dim < 0 || dim >= out->rank) return;
  for (int32_t k = 0; k < op->num_operands; k++) {
    const xrt_shape *s = xrt__ropnd(f, op, k);
    if (s->rank != out->rank) return;
    for (int32_t d = 0; d < s->rank; d++)
      if (d != dim && out->dims[d] < 0) out->dims[d] = s->dims[d];
    total = total < 0 || s->dims[dim] < 0 || s->dims[dim] > XRT__RBIG
                ? -1
                : total + s->dims[dim];
  }
  out->dims[dim] = total;
}

/* reduce: the inputs' dimensions without the reduced ones. */
static void xrt__rreduce(const xrt__rfn *f, const xrt_ir_op *op,
                         xrt_shape *out) {
  int64_t n;
  const int64_t *dims = xrt__rattr(op, "dimensions", &n);
  const xrt_shape *in = xrt__ropnd(f, op, 0);
  for (int32_t i = 0; i < op->num_results; i++) {
    int32_t k = 0;
    for (int32_t d = 0; d < in->rank && k < out[i].rank; d++)
      if (!xrt__contains(dims, n, d)) out[i].dims[k++] = in->dims[d];
  }
}

/* One window attribute (rank entries, or 2*rank for padding), or dflt. */
static bool xrt__rwin(const xrt_ir_op *op, const char *name, int32_t count,
                      int64_t dflt, int64_t *out) {
  int64_t n;
  const int64_t *a = xrt__rattr(op, name, &n);
  if (a && (n != count || !xrt__rsmall(a, n))) return false;
  for (int32_t i = 0; i < count; i++) out[i] = a ? a[i] : dflt;
  return true;
}

static void xrt__rreduce_window(const xrt__rfn *f, const xrt_ir_op *op,
                                xrt_shape *out) {
  const xrt_shape *x = xrt__ropnd(f, op, 0);
  int32_t r = x->rank;
  int64_t wd[XRT_MAX_RANK], ws[XRT_MAX_RANK], bd[XRT_MAX_RANK],
      wdl[XRT_MAX_RANK], pad[2 * XRT_MAX_RANK];
  if (!xrt__rwin(op, "window_dimensions", r, 1, wd) ||
      !xrt__rwin(op, "window_strides", r, 1, ws) ||
      !xrt__rwin(op, "base_dilations", r, 1, bd) ||
      !xrt__rwin(op, "window_dilations", r, 1, wdl) ||
      !xrt__rwin(op, "padding", 2 * r, 0, pad))
    return;
  for (int32_t d = 0; d < r; d++) {
    if (x->dims[d] < 0 || x->dims[d] > XRT__RBIG || ws[d] < 1 || bd[d] < 1 ||
        wdl[d] < 1)
      continue;
    int64_t padded = xrt__dilated(x->dims[d], bd[d]) + pad[2 * d] +
                     pad[2 * d + 1];
    int64_t n = xrt__num_windows(padded, xrt__dilated(wd[d], wdl[d]), ws[d]);
    for (int32_t i = 0; i < op->num_results; i++)
      if (out[i].rank == r) out[i].dims[d] = n;
  }
}

static void xrt__rdot(const xrt__rfn *f, const xrt_ir_op *op,
                      xrt_shape *out) {
  const xrt_shape *l = xrt__ropnd(f, op, 0), *r = xrt__ropnd(f, op, 1);
  if (out->rank != l->rank + r->rank - 2 || l->rank < 1 || r->rank < 1)
    return;
  for (int32_t i = 0; i < out->rank; i++)
    out->dims[i] = i < l->rank - 1 ? l->dims[i] : r->dims[i - l->rank + 2];
}

static void xrt__rdot_general(const xrt__rfn *f, const xrt_ir_op *op,
                              xrt_shape *out) {
  const xrt_ir_attr *dn = xrt_ir_op_attr(op, "dot_dimension_numbers");
  int64_t nlb, nrb, nlc, nrc;
  const int64_t *lb = xrt__rints(xrt_ir_attr_field(dn, "lhs_batching_dimensions"), &nlb),
                *rb = xrt__rints(xrt_ir_attr_field(dn, "rhs_batching_dimensions"), &nrb),
                *lc = xrt__rints(xrt_ir_attr_field(dn, "lhs_contracting_dimensions"), &nlc),
                *rc = xrt__rints(xrt_ir_attr_field(dn, "rhs_contracting_dimensions"), &nrc);
  const xrt_shape *l = xrt__ropnd(f, op, 0), *r = xrt__ropnd(f, op, 1);
  int32_t k = 0;
  int64_t want[3 * XRT_MAX_RANK];
  if (nlb > XRT_MAX_RANK) return;
  for (int64_t i = 0; i < nlb; i++)
    want[k++] = lb[i] >= 0 && lb[i] < l->rank ? l->dims[lb[i]] : -1;
  for (int32_t d = 0; d < l->rank; d++)
    if (!xrt__contains(lb, nlb, d) && !xrt__contains(lc, nlc, d))
      want[k++] = l->dims[d];
  for (int32_t d = 0; d < r->rank; d++)
    if (!xrt__contains(rb, nrb, d) && !xrt__contains(rc, nrc, d))
      want[k++] = r->dims[d];
  if (k != out->rank) return;
  for (int32_t d = 0; d < k; d++) out->dims[d] = want[d];
}

/* The window_strides of a dynamic_conv with ns spatial dimensions, as
 * many as it has (n).  JAX's shape-polymorphic lowering of a 1-D
 * conv_general_dilated (its conv_general_dilated_1d_stride_2_* exports)
 * writes one stride more than there are spatial dimensions, repeating
 * the last; those repeats are dropped here (and from the convolution the
 * op becomes), as the strides cannot mean anything else.  Anything other
 * than such repeats is left for the verifier to refuse. */
static const int64_t *xrt__rconv_strides(const xrt_ir_op *op, int64_t ns,
                                         int64_t *n) {
  const int64_t *ws = xrt__rattr(op, "window_strides", n);
  if (!ws || op->code != XRT_OP_DYNAMIC_CONV || ns < 1 || *n <= ns)
    return ws;
  for (int64_t i = ns; i < *n; i++)
    if (ws[i] != ws[ns - 1]) return ws;
  *n = ns;
  return ws;
}

/* convolution and dynamic_conv (padding from its known third operand). */
static void xrt__rconv(const xrt__rfn *f, const xrt_ir_op *op,
                       xrt_shape *out) {
  const xrt_ir_attr *dn = xrt_ir_op_attr(op, "dimension_numbers");
  const xrt_shape *l = xrt__ropnd(f, op, 0), *r = xrt__ropnd(f, op, 1);
  int32_t N = l->rank, ns = N - 2;
  if (!dn || dn->kind != XRT_ATTR_DICT || N < 2 || out->rank != N) return;
  int64_t n, isp_n, ksp_n, osp_n;
  const int64_t *isp = xrt__rints(xrt_ir_attr_field(dn, "input_spatial_dimensions"), &isp_n),
                *ksp = xrt__rints(xrt_ir_attr_field(dn, "kernel_spatial_dimensions"), &ksp_n),
                *osp = xrt__rints(xrt_ir_attr_field(dn, "output_spatial_dimensions"), &osp_n);
  const xrt_ir_attr *ib = xrt_ir_attr_field(dn, "input_batch_dimension"),
                    *kof = xrt_ir_attr_field(dn, "kernel_output_feature_dimension"),
                    *ob = xrt_ir_attr_field(dn, "output_batch_dimension"),
                    *ofd = xrt_ir_attr_field(dn, "output_feature_dimension");
  if (!ib || !kof || !ob || !ofd || isp_n != ns || ksp_n != ns ||
      osp_n != ns || ib->kind != XRT_ATTR_INT || kof->kind != XRT_ATTR_INT ||
      ob->kind != XRT_ATTR_INT || ofd->kind != XRT_ATTR_INT ||
      r->rank != N)
    return;
  const int64_t at[4] = {ib->i, kof->i, ob->i, ofd->i};
  for (int i = 0; i < 4; i++)
    if (at[i] < 0 || at[i] >= N) return;
  for (int32_t d = 0; d < ns; d++)
    if (isp[d] < 0 || isp[d] >= N || ksp[d] < 0 || ksp[d] >= N ||
        osp[d] < 0 || osp[d] >= N)
      return;
  int64_t bg = xrt__rint_attr(op, "batch_group_count", 1);
  if (bg >= 1 && l->dims[ib->i] >= 0) out->dims[ob->i] = l->dims[ib->i] / bg;
  out->dims[ofd->i] = r->dims[kof->i];
  int64_t ws[XRT_MAX_RANK], ld[XRT_MAX_RANK], rd[XRT_MAX_RANK],
      pad[2 * XRT_MAX_RANK];
  const int64_t *p = op->code == XRT_OP_DYNAMIC_CONV
                         ? xrt__rvals(f, op, 2, 2 * (int64_t)ns)
                         : xrt__rattr(op, "padding", &n);
  if (op->code != XRT_OP_DYNAMIC_CONV && p && n != 2 * ns) return;
  if (op->code == XRT_OP_DYNAMIC_CONV && !p) return;
  if (!xrt__rsmall(p, 2 * (int64_t)ns)) return;
  for (int32_t i = 0; i < 2 * ns; i++) pad[i] = p ? p[i] : 0;
  int64_t nws;
  const int64_t *w = xrt__rconv_strides(op, ns, &nws);
  if ((w && (nws != ns || !xrt__rsmall(w, nws))) ||
      !xrt__rwin(op, "lhs_dilation", ns, 1, ld) ||
      !xrt__rwin(op, "rhs_dilation", ns, 1, rd))
    return;
  for (int32_t d = 0; d < ns; d++) ws[d] = w ? w[d] : 1;
  for (int32_t d = 0; d < ns; d++) {
    int64_t x = l->dims[isp[d]], k = r->dims[ksp[d]];
    if (x < 0 || k < 0 || x > XRT__RBIG || k > XRT__RBIG || ws[d] < 1 ||
        ld[d] < 1 || rd[d] < 1)
      continue;
    int64_t padded = pad[2 * d] + xrt__dilated(x, ld[d]) + pad[2 * d + 1];
    out->dims[osp[d]] =
        xrt__num_windows(padded, xrt__dilated(k, rd[d]), ws[d]);
  }
}

/* gather and dynamic_gather (slice_sizes from its known third operand). */
static void xrt__rgather(const xrt__rfn *f, const xrt_ir_op *op,
                         xrt_shape *out) {
  const xrt_ir_attr *dn = xrt_ir_op_attr(op, "dimension_numbers");
  const xrt_shape *x = xrt__ropnd(f, op, 0), *idx = xrt__ropnd(f, op, 1);
  int64_t nwin, nins, nobat, nss;
  const int64_t *win = xrt__rints(xrt_ir_attr_field(dn, "offset_dims"), &nwin),
                *ins = xrt__rints(xrt_ir_attr_field(dn, "collapsed_slice_dims"), &nins),
                *obat = xrt__rints(xrt_ir_attr_field(dn, "operand_batching_dims"), &nobat);
  const xrt_ir_attr *iv = xrt_ir_attr_field(dn, "index_vector_dim");
  int64_t ivd = iv && iv->kind == XRT_ATTR_INT ? iv->i : 0;
  const int64_t *ss = op->code == XRT_OP_DYNAMIC_GATHER
                          ? xrt__rvals(f, op, 2, x->rank)
                          : xrt__rattr(op, "slice_sizes", &nss);
  if (!ss || (op->code == XRT_OP_GATHER && nss != x->rank)) return;
  int64_t offs[XRT_MAX_RANK], no = 0;
  for (int32_t k = 0; k < x->rank; k++)
    if (!xrt__contains(ins, nins, k) && !xrt__contains(obat, nobat, k))
      offs[no++] = ss[k];
  int64_t rank = nwin + idx->rank - (ivd < idx->rank ? 1 : 0);
  if (rank != out->rank || no != nwin) return;
  int32_t bi = 0;
  int64_t wi = 0;
  for (int32_t d = 0; d < out->rank; d++) {
    if (xrt__contains(win, nwin, d)) {
      out->dims[d] = offs[wi++];
    } else {
      if (bi == ivd) bi++;
      if (bi < idx->rank) out->dims[d] = idx->dims[bi++];
    }
  }
}

/* if/case: the first branch's returned shapes. */
static void xrt__rbranches(const xrt__rfn *f, const xrt_ir_op *op,
                           xrt_shape *out) {
  if (!op->num_regions || !op->regions[0].num_ops) return;
  const xrt_ir_region *r = &op->regions[0];
  const xrt_ir_op *ret = &r->ops[r->num_ops - 1];
  for (int32_t i = 0; i < op->num_results && i < ret->num_operands; i++)
    xrt__rlike(&out[i], &f->types[ret->operands[i]].shape);
}

static void xrt__rbroadcast(const xrt__rfn *f, const xrt_ir_op *op,
                            xrt_shape *out) {
  const xrt_shape *in = xrt__ropnd(f, op, 0);
  int64_t n;
  const int64_t *sizes = xrt__rattr(op, "broadcast_sizes", &n);
  if (n + in->rank != out->rank) return;
  for (int32_t i = 0; i < out->rank; i++)
    out->dims[i] = i < n ? sizes[i] : in->dims[i - n];
}

static bool xrt__is_chlo_broadcast(xrt_opcode c) {
  return c >= XRT_OP_CHLO_BROADCAST_ADD && c <= XRT_OP_CHLO_BROADCAST_ZETA;
}

/* Ops whose results have their operands' shapes. */
static bool xrt__rkeeps_shape(xrt_opcode c) {
  if (xrt__elementwise_mask(c)) return true;
  switch (c) {
  case XRT_OP_COMPARE: case XRT_OP_SELECT: case XRT_OP_CLAMP:
  case XRT_OP_CONVERT: case XRT_OP_IS_FINITE: case XRT_OP_REAL:
  case XRT_OP_IMAG: case XRT_OP_COMPLEX: case XRT_OP_REDUCE_PRECISION:
  case XRT_OP_UNIFORM_QUANTIZE: case XRT_OP_UNIFORM_DEQUANTIZE:
  case XRT_OP_MAP: case XRT_OP_REVERSE: case XRT_OP_CHOLESKY:
  case XRT_OP_DYNAMIC_UPDATE_SLICE: case XRT_OP_SELECT_AND_SCATTER:
  case XRT_OP_BITCAST_CONVERT: case XRT_OP_CHLO_MULHI:
  case XRT_OP_CHLO_CONJ: case XRT_OP_CHLO_IS_INF: case XRT_OP_CHLO_IS_NEG_INF:
  case XRT_OP_CHLO_IS_POS_INF: case XRT_OP_CHLO_TAN:
  case XRT_OP_CHLO_CONSTANT_LIKE: case XRT_OP_BATCH_NORM_INFERENCE:
    return true;
  default:
    return false;
  }
}

/* Ops whose result i has operand i's shape. */
static bool xrt__rpairs(xrt_opcode c) {
  switch (c) {
  case XRT_OP_SORT: case XRT_OP_OPTIMIZATION_BARRIER: case XRT_OP_WHILE:
  case XRT_OP_SCATTER: case XRT_OP_ALL_REDUCE:
  case XRT_OP_COLLECTIVE_PERMUTE: case XRT_OP_COLLECTIVE_BROADCAST:
    return true;
  default:
    return false;
  }
}

/* The operands a rule reads by position: fewer (a malformed op) gets no
 * inference and no rewrite, and the verifier reports it. */
static int32_t xrt__rmin_operands(xrt_opcode c) {
  switch (c) {
  case XRT_OP_DYNAMIC_PAD: return 5;
  case XRT_OP_REAL_DYNAMIC_SLICE: return 4;
  case XRT_OP_RNG: case XRT_OP_DYNAMIC_GATHER: case XRT_OP_DYNAMIC_CONV:
    return 3;
  case XRT_OP_DYNAMIC_BROADCAST_IN_DIM: case XRT_OP_DYNAMIC_RESHAPE:
  case XRT_OP_PAD: case XRT_OP_DOT: case XRT_OP_DOT_GENERAL:
  case XRT_OP_CONVOLUTION: case XRT_OP_GATHER: case XRT_OP_TRIANGULAR_SOLVE:
    return 2;
  default: return 1;
  }
}

XRT__PRIVATE xrt_status xrt__rinfer(xrt__rfn *f, const xrt_ir_op *op,
                                    xrt_shape *out) {
  xrt_opcode c = op->code;
  if (op->num_operands < xrt__rmin_operands(c) && c != XRT_OP_IF &&
      c != XRT_OP_CASE && c != XRT_OP_CONCATENATE && c != XRT_OP_WHILE)
    return XRT_OK;
  if (xrt__rpairs(c)) {
    xrt__rpairwise(f, op, out);
  } else if (xrt__rkeeps_shape(c)) {
    if (c == XRT_OP_TRIANGULAR_SOLVE) xrt__rlike(out, xrt__ropnd(f, op, 1));
    else xrt__rall_operands(f, op, out);
  } else if (xrt__is_chlo_broadcast(c)) {
    xrt__rchlo_broadcast(f, op, out);
  } else {
    const xrt_shape *declared = &f->types[op->results[0]].shape;
    switch (c) {
    case XRT_OP_BROADCAST_IN_DIM: case XRT_OP_DYNAMIC_BROADCAST_IN_DIM:
      xrt__rbroadcast_in_dim(f, op, out); break;
    case XRT_OP_BROADCAST: xrt__rbroadcast(f, op, out); break;
    case XRT_OP_RESHAPE: case XRT_OP_DYNAMIC_RESHAPE:
      xrt__rreshape(f, op, declared, out); break;
    case XRT_OP_DYNAMIC_IOTA: xrt__rfrom_values(f, op, 0, out); break;
    case XRT_OP_RNG: xrt__rfrom_values(f, op, 2, out); break;
    case XRT_OP_TRANSPOSE: xrt__rtranspose(f, op, out); break;
    case XRT_OP_SLICE: case XRT_OP_REAL_DYNAMIC_SLICE:
      xrt__rslice(f, op, out); break;
    case XRT_OP_PAD: case XRT_OP_DYNAMIC_PAD: xrt__rpad(f, op, out); break;
    case XRT_OP_CONCATENATE: xrt__rconcatenate(f, op, out); break;
    case XRT_OP_REDUCE: xrt__rreduce(f, op, out); break;
    case XRT_OP_REDUCE_WINDOW: xrt__rreduce_window(f, op, out); break;
    case XRT_OP_DOT: xrt__rdot(f, op, out); break;
    case XRT_OP_DOT_GENERAL: xrt__rdot_general(f, op, out); break;
    case XRT_OP_CONVOLUTION: case XRT_OP_DYNAMIC_CONV:
      xrt__rconv(f, op, out); break;
    case XRT_OP_GATHER: case XRT_OP_DYNAMIC_GATHER:
      xrt__rgather(f, op, out); break;
    case XRT_OP_TRIANGULAR_SOLVE: xrt__rlike(out, xrt__ropnd(f, op, 1)); break;
    case XRT_OP_IF: case XRT_OP_CASE: xrt__rbranches(f, op, out); break;
    default: break; /* the declared shape must be static */
    }
  }
  return XRT_OK;
}

/* ---- static forms ---- */

/* An INTS attribute named name holding v[0..n). */
static xrt_status xrt__rints_attr(xrt__rfn *f, const char *name,
                                  const int64_t *v, int64_t n,
                                  xrt_ir_attr *a) {
  int64_t *copy = (int64_t *)xrt__ralloc(f, sizeof *copy * (size_t)(n + 1));
  if (!copy) return xrt__nomem("a refined attribute");
  for (int64_t i = 0; i < n; i++) copy[i] = v[i];
  memset(a, 0, sizeof *a);
  a->name = name;
  a->kind = XRT_ATTR_INTS;
  a->ints = copy;
  a->n = n;
  return XRT_OK;
}

/* op keeps its attributes except those named in drop, gains the nadd of
 * add, and keeps the first nkeep operands; code becomes code. */
static xrt_status xrt__rrewrite(xrt__rfn *f, xrt_ir_op *op, xrt_opcode code,
                                int32_t nkeep, const char *const *drop,
                                const xrt_ir_attr *add, int32_t nadd) {
  xrt_ir_attr *attrs = (xrt_ir_attr *)xrt__ralloc(
      f, sizeof *attrs * (size_t)(op->num_attrs + nadd));
  if (!attrs) return xrt__nomem("refined attributes");
  int32_t n = 0;
  for (int32_t i = 0; i < op->num_attrs; i++) {
    bool gone = false;
    for (const char *const *d = drop; d && *d && !gone; d++)
      gone = op->attrs[i].name && strcmp(op->attrs[i].name, *d) == 0;
    if (!gone) attrs[n++] = op->attrs[i];
  }
  for (int32_t i = 0; i < nadd; i++) attrs[n++] = add[i];
  op->attrs = attrs;
  op->num_attrs = n;
  op->num_operands = nkeep;
  op->code = code;
  op->name = xrt_opcode_name(code);
  return XRT_OK;
}

static xrt_status xrt__rstatic_pad(xrt__rfn *f, xrt_ir_op *op) {
  int64_t r = xrt__ropnd(f, op, 0)->rank;
  static const char *const names[3] = {"edge_padding_low",
                                       "edge_padding_high",
                                       "interior_padding"};
  xrt_ir_attr add[3];
  for (int i = 0; i < 3; i++) {
    const int64_t *v = xrt__rvals(f, op, 2 + i, r);
    if (!v) return XRT_OK;
    xrt_status s = xrt__rints_attr(f, names[i], v, r, &add[i]);
    if (s) return s;
  }
  return xrt__rrewrite(f, op, XRT_OP_PAD, 2, names, add, 3);
}

/* real_dynamic_slice of known sizes from unknown starts: a gather of one
 * window at the start vector (which clamps the start as dynamic_slice
 * does, where real_dynamic_slice leaves it undefined). */
static xrt_status xrt__rslice_gather(xrt__rfn *f, xrt_ir_op *op,
                                     const int64_t *sizes, int64_t r) {
  int64_t *iota = (int64_t *)xrt__ralloc(f, sizeof *iota * (size_t)(r + 1));
  xrt_ir_attr *dn = (xrt_ir_attr *)xrt__ralloc(f, sizeof *dn * 3);
  if (!iota || !dn) return xrt__nomem("a refined gather");
  for (int64_t d = 0; d < r; d++) iota[d] = d;
  xrt_ir_attr add[2];
  xrt_status s;
  if ((s = xrt__rints_attr(f, "offset_dims", iota, r, &dn[0])) ||
      (s = xrt__rints_attr(f, "start_index_map", iota, r, &dn[1])) ||
      (s = xrt__rints_attr(f, "slice_sizes", sizes, r, &add[1])))
    return s;
  memset(&dn[2], 0, sizeof dn[2]);
  dn[2].name = "index_vector_dim";
  dn[2].kind = XRT_ATTR_INT;
  memset(&add[0], 0, sizeof add[0]);
  add[0].name = "dimension_numbers";
  add[0].kind = XRT_ATTR_DICT;
  add[0].items = dn;
  add[0].num_items = 3;
  return xrt__rrewrite(f, op, XRT_OP_GATHER, 2, NULL, add, 2);
}

static xrt_status xrt__rstatic_slice(xrt__rfn *f, xrt_ir_op *op) {
  int64_t r = xrt__ropnd(f, op, 0)->rank;
  const int64_t *sizes = xrt__rvals(f, op, 1, r) ? NULL
                                                 : xrt__rslice_sizes(f, op, r);
  if (sizes) return xrt__rslice_gather(f, op, sizes, r);
  static const char *const names[4] = {"start_indices", "limit_indices",
                                       "strides", NULL};
  xrt_ir_attr add[3];
  for (int i = 0; i < 3; i++) {
    const int64_t *v = xrt__rvals(f, op, 1 + i, r);
    if (!v) /* no plugin runs it: its operands must be known */
      return xrt__rfail(f, XRT_INVALID_ARGUMENT, "start, limit and strides "
                        "must be known at compile time (or the limit the "
                        "start plus known sizes)");
    xrt_status s = xrt__rints_attr(f, names[i], v, r, &add[i]);
    if (s) return s;
  }
  return xrt__rrewrite(f, op, XRT_OP_SLICE, 1, names, add, 3);
}

static xrt_status xrt__rstatic_gather(xrt__rfn *f, xrt_ir_op *op) {
  int64_t r = xrt__ropnd(f, op, 0)->rank;
  const int64_t *v = xrt__rvals(f, op, 2, r);
  static const char *const names[2] = {"slice_sizes", NULL};
  xrt_ir_attr add;
  if (!v) return XRT_OK;
  xrt_status s = xrt__rints_attr(f, names[0], v, r, &add);
  return s ? s : xrt__rrewrite(f, op, XRT_OP_GATHER, 2, names, &add, 1);
}

static xrt_status xrt__rstatic_conv(xrt__rfn *f, xrt_ir_op *op) {
  int64_t ns = xrt__ropnd(f, op, 0)->rank - 2, nws, all;
  const int64_t *v = xrt__rvals(f, op, 2, 2 * ns);
  /* The attributes replaced: padding, and the strides when trimmed. */
  static const char *const names[3] = {"padding", "window_strides", NULL};
  static const char *const pad_only[2] = {"padding", NULL};
  xrt_ir_attr add[2];
  if (!v || ns < 0) return XRT_OK;
  const int64_t *ws = xrt__rconv_strides(op, ns, &nws);
  bool trimmed = ws && xrt__rattr(op, names[1], &all) && nws != all;
  xrt_status s = xrt__rints_attr(f, names[0], v, 2 * ns, &add[0]);
  if (!s && trimmed) s = xrt__rints_attr(f, names[1], ws, nws, &add[1]);
  if (s) return s;
  return xrt__rrewrite(f, op, XRT_OP_CONVOLUTION, 2,
                       trimmed ? names : pad_only, add, trimmed ? 2 : 1);
}

XRT__PRIVATE xrt_status xrt__rstatic_form(xrt__rfn *f, xrt_ir_op *op) {
  static const char *const bcast[3] = {"known_expanding_dimensions",
                                       "known_nonexpanding_dimensions", NULL};
  if (op->num_operands < xrt__rmin_operands(op->code) || op->num_results != 1)
    return XRT_OK;
  int32_t rank = f->types[op->results[0]].shape.rank;
  switch (op->code) {
  case XRT_OP_DYNAMIC_BROADCAST_IN_DIM:
    return xrt__rvals(f, op, 1, rank)
               ? xrt__rrewrite(f, op, XRT_OP_BROADCAST_IN_DIM, 1, bcast,
                               NULL, 0)
               : XRT_OK;
  case XRT_OP_DYNAMIC_RESHAPE:
    return xrt__rvals(f, op, 1, rank)
               ? xrt__rrewrite(f, op, XRT_OP_RESHAPE, 1, NULL, NULL, 0)
               : XRT_OK;
  case XRT_OP_DYNAMIC_IOTA:
    return xrt__rvals(f, op, 0, rank)
               ? xrt__rrewrite(f, op, XRT_OP_IOTA, 0, NULL, NULL, 0)
               : XRT_OK;
  case XRT_OP_DYNAMIC_PAD: return xrt__rstatic_pad(f, op);
  case XRT_OP_REAL_DYNAMIC_SLICE: return xrt__rstatic_slice(f, op);
  case XRT_OP_DYNAMIC_GATHER: return xrt__rstatic_gather(f, op);
  case XRT_OP_DYNAMIC_CONV: return xrt__rstatic_conv(f, op);
  default: return XRT_OK;
  }
}
