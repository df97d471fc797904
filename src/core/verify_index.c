/*
 * src/core/verify_index.c - verifier constraints of the index op family: gather,
 * scatter, slices, dynamic slices, pads, windows.
 * Part of the core of xrt; MIT licensed, see LICENSE.
 */
#include "internal.h"

/* ----------------------------------------------------------------------
 * Verifier constraints of the index op family: gather, dynamic_gather,
 * scatter, dynamic_slice, dynamic_update_slice, reduce_window,
 * select_and_scatter and the dynamic_* shape ops (spec "Constraints"
 * sections; Cn below are the spec's numbers). Returns XRT_OK for ops of
 * other families.
 * -------------------------------------------------------------------- */

#define XRT__IX_BIG ((int64_t)1 << 40) /* window attribute values beyond this
                                          cannot describe a real tensor */

/* In range, unique and (when sorted is set) ascending. */
static xrt_status xrt__ix_dims(const xrt__vctx *v, const char *what,
                               const int64_t *d, int64_t n, int64_t rank,
                               bool sorted) {
  xrt_status s = xrt__vdims(v, what, d, n, rank);
  if (s) return s;
  for (int64_t i = 1; sorted && i < n; i++)
    if (d[i] < d[i - 1]) return xrt__vfail(v, "%s must be sorted", what);
  return XRT_OK;
}

/* The concatenation of a and b has no repeated entry. */
static xrt_status xrt__ix_unique2(const xrt__vctx *v, const char *what,
                                  const int64_t *a, int64_t na,
                                  const int64_t *b, int64_t nb) {
  for (int64_t i = 0; i < na; i++)
    if (xrt__contains(b, nb, a[i]))
      return xrt__vfail(v, "%s: dimension %" PRId64 " appears twice", what,
                        a[i]);
  return XRT_OK;
}

/* Operand k is a 1-d integer tensor with n elements. */
static xrt_status xrt__ix_shape_operand(const xrt__vctx *v, int k,
                                        const char *what, int64_t n) {
  const xrt_shape *s = xrt__operand(v, k);
  if (!xrt__dtype_is_int(s->dtype) || s->rank != 1 || s->dims[0] != n)
    return xrt__vfail(v, "%s must be a 1-d integer tensor of %" PRId64
                      " elements", what, n);
  return XRT_OK;
}

/* Shared by gather and scatter: the batching dims pair up (same count,
 * equal sizes, index_vector_dim not among them), index_vector_dim is in
 * range and the index vector has one entry per mapped dimension. */
typedef struct xrt__ix_dn {
  const int64_t *win, *ins, *obat, *ibat, *map;
  int64_t nwin, nins, nobat, nibat, nmap, ivd;
} xrt__ix_dn;

/* Reads the five lists named by names and index_vector_dim (absent: 0)
 * from the dimension numbers dn. */
static xrt_status xrt__ix_read_dn(const xrt__vctx *v, const xrt_ir_attr *dn,
                                  const char *const *names, xrt__ix_dn *d) {
  xrt_status s;
  if ((s = xrt__vfield(v, dn, names[0], &d->win, &d->nwin)) ||
      (s = xrt__vfield(v, dn, names[1], &d->ins, &d->nins)) ||
      (s = xrt__vfield(v, dn, names[2], &d->obat, &d->nobat)) ||
      (s = xrt__vfield(v, dn, names[3], &d->ibat, &d->nibat)) ||
      (s = xrt__vfield(v, dn, names[4], &d->map, &d->nmap)))
    return s;
  const xrt_ir_attr *iv = xrt_ir_attr_field(dn, "index_vector_dim");
  d->ivd = iv && iv->kind == XRT_ATTR_INT ? iv->i : 0;
  return XRT_OK;
}

static xrt_status xrt__ix_common(const xrt__vctx *v, const xrt__ix_dn *d,
                                 const xrt_shape *opnd, const xrt_shape *idx,
                                 const char *const *names) {
  xrt_status s;
  if (!xrt__dtype_is_int(idx->dtype))
    return xrt__vfail(v, "indices must have an integer element type");
  if (d->ivd < 0 || d->ivd > idx->rank)
    return xrt__vfail(v, "index_vector_dim %" PRId64 " is out of range for "
                      "indices of rank %d", d->ivd, (int)idx->rank);
  if (d->nwin + d->nins + d->nobat != opnd->rank)
    return xrt__vfail(v, "%s, %s and %s must cover the operand's %d "
                      "dimensions", names[0], names[1], names[2],
                      (int)opnd->rank);
  if ((s = xrt__ix_dims(v, names[1], d->ins, d->nins, opnd->rank, true)) ||
      (s = xrt__ix_dims(v, names[2], d->obat, d->nobat, opnd->rank, true)) ||
      (s = xrt__ix_unique2(v, names[1], d->ins, d->nins, d->obat, d->nobat)) ||
      (s = xrt__ix_dims(v, names[3], d->ibat, d->nibat, idx->rank, false)) ||
      (s = xrt__ix_dims(v, names[4], d->map, d->nmap, opnd->rank, false)) ||
      (s = xrt__ix_unique2(v, names[4], d->map, d->nmap, d->obat, d->nobat)))
    return s;
  if (xrt__contains(d->ibat, d->nibat, d->ivd))
    return xrt__vfail(v, "index_vector_dim must not be a batching dimension");
  if (d->nobat != d->nibat)
    return xrt__vfail(v, "%s and %s differ in length", names[2], names[3]);
  for (int64_t i = 0; i < d->nobat; i++)
    if (opnd->dims[d->obat[i]] != idx->dims[d->ibat[i]])
      return xrt__vfail(v, "batching dimension sizes differ: operand %" PRId64
                        " vs indices %" PRId64, opnd->dims[d->obat[i]],
                        idx->dims[d->ibat[i]]);
  int64_t nvec = d->ivd < idx->rank ? idx->dims[d->ivd] : 1;
  if (d->nmap != nvec)
    return xrt__vfail(v, "%s has %" PRId64 " entries but the index vector "
                      "has %" PRId64, names[4], d->nmap, nvec);
  return XRT_OK;
}

/* combine(): the batch sizes (indices shape without index_vector_dim) at
 * the positions not in wdims, the window sizes at wdims. */
static xrt_status xrt__ix_combine(const xrt__vctx *v, const xrt_shape *idx,
                                  int64_t ivd, const int64_t *wdims,
                                  int64_t nw, const int64_t *wsize,
                                  const xrt_shape *got, const char *what) {
  int64_t rank = nw + idx->rank - (ivd < idx->rank ? 1 : 0);
  if (got->rank != rank)
    return xrt__vfail(v, "%s must have rank %" PRId64, what, rank);
  int32_t bi = 0;
  int64_t wi = 0;
  for (int32_t d = 0; d < got->rank; d++) {
    int64_t want;
    if (xrt__contains(wdims, nw, d)) {
      want = wsize[wi++];
    } else {
      if (bi == ivd) bi++;
      want = idx->dims[bi++];
    }
    if (want >= 0 && got->dims[d] != want)
      return xrt__vfail(v, "%s dimension %d must be %" PRId64, what, (int)d,
                        want);
  }
  return XRT_OK;
}

static xrt_status xrt__verify_gather(const xrt__vctx *v, bool dynamic) {
  static const char *const names[5] = {
      "offset_dims", "collapsed_slice_dims", "operand_batching_dims",
      "start_indices_batching_dims", "start_index_map"};
  xrt_status s = xrt__vcounts(v, dynamic ? 3 : 2, 1);
  if (s) return s;
  const xrt_ir_attr *dn = xrt__vattr(v, "dimension_numbers", XRT_ATTR_DICT);
  if (!dn) return xrt__vfail(v, "missing attribute 'dimension_numbers'");
  xrt__ix_dn d;
  if ((s = xrt__ix_read_dn(v, dn, names, &d))) return s;
  const xrt_shape *op = xrt__operand(v, 0), *idx = xrt__operand(v, 1),
                  *out = xrt__result(v, 0);
  if ((s = xrt__ix_common(v, &d, op, idx, names)) ||
      (s = xrt__ix_dims(v, names[0], d.win, d.nwin, out->rank, true)))
    return s;
  if (op->dtype != out->dtype)
    return xrt__vfail(v, "operand and result element types differ");
  int64_t ss[XRT_MAX_RANK] = {0}, offs[XRT_MAX_RANK] = {0}, no = 0;
  if (dynamic) {
    if ((s = xrt__ix_shape_operand(v, 2, "slice_sizes", op->rank))) return s;
    for (int32_t k = 0; k < op->rank; k++) ss[k] = -1; /* known at run time */
  } else {
    const int64_t *a;
    int64_t n;
    if ((s = xrt__vints(v, "slice_sizes", false, &a, &n))) return s;
    if (n != op->rank)
      return xrt__vfail(v, "slice_sizes needs one entry per operand "
                        "dimension (%d)", (int)op->rank);
    for (int32_t k = 0; k < op->rank; k++) {
      if (a[k] < 0 || a[k] > op->dims[k])
        return xrt__vfail(v, "slice_sizes[%d] = %" PRId64 " must be in [0, %"
                          PRId64 "]", (int)k, a[k], op->dims[k]);
      bool folded = xrt__contains(d.ins, d.nins, k) ||
                    xrt__contains(d.obat, d.nobat, k);
      if (folded && a[k] > 1)
        return xrt__vfail(v, "slice_sizes[%d] of a collapsed or batching "
                          "dimension must be 0 or 1", (int)k);
      ss[k] = a[k];
    }
  }
  for (int32_t k = 0; k < op->rank; k++)
    if (!xrt__contains(d.ins, d.nins, k) && !xrt__contains(d.obat, d.nobat, k))
      offs[no++] = ss[k];
  if ((s = xrt__ix_combine(v, idx, d.ivd, d.win, d.nwin, offs, out,
                           "result")))
    return s;
  if (dynamic) /* offset sizes come from the result: they must fit */
    for (int32_t k = 0, j = 0; k < op->rank; k++) {
      if (xrt__contains(d.ins, d.nins, k) || xrt__contains(d.obat, d.nobat, k))
        continue;
      if (out->dims[d.win[j++]] > op->dims[k])
        return xrt__vfail(v, "slice of %" PRId64 " exceeds operand dimension "
                          "%d", out->dims[d.win[j - 1]], (int)k);
    }
  return XRT_OK;
}

static xrt_status xrt__verify_scatter(const xrt__vctx *v) {
  static const char *const names[5] = {
      "update_window_dims", "inserted_window_dims", "input_batching_dims",
      "scatter_indices_batching_dims", "scatter_dims_to_operand_dims"};
  const xrt_ir_op *op = v->op;
  int n = op->num_results;
  xrt_status s = xrt__vcounts(v, 2 * n + 1, n);
  if (s) return s;
  if (n < 1 || n > 32 || op->num_regions != 1)
    return xrt__vfail(v, "needs 1 to 32 inputs and one update_computation");
  const xrt_ir_attr *dn =
      xrt__vattr(v, "scatter_dimension_numbers", XRT_ATTR_DICT);
  if (!dn)
    return xrt__vfail(v, "missing attribute 'scatter_dimension_numbers'");
  xrt__ix_dn d;
  if ((s = xrt__ix_read_dn(v, dn, names, &d))) return s;
  const xrt_shape *in0 = xrt__operand(v, 0), *idx = xrt__operand(v, n),
                  *up0 = xrt__operand(v, n + 1);
  const xrt_ir_type *sig[64];
  for (int i = 0; i < n; i++) {
    const xrt_shape *in = xrt__operand(v, i), *up = xrt__operand(v, n + 1 + i);
    if (!xrt__same_dims(in, in0)) return xrt__vfail(v, "inputs differ in shape");
    if (!xrt__same_dims(up, up0))
      return xrt__vfail(v, "updates differ in shape");
    if (up->dtype != in->dtype)
      return xrt__vfail(v, "updates %d and input %d differ in element type",
                        i, i);
    if ((s = xrt__vsame(v, op->operands[i], op->results[i],
                        "result type differs from input type")))
      return s;
    sig[i] = sig[n + i] = NULL;
  }
  if ((s = xrt__ix_common(v, &d, in0, idx, names)) ||
      (s = xrt__ix_dims(v, names[0], d.win, d.nwin, up0->rank, true)))
    return s;
  int64_t ws[XRT_MAX_RANK], nw = 0;
  for (int32_t k = 0; k < in0->rank; k++)
    if (!xrt__contains(d.ins, d.nins, k) && !xrt__contains(d.obat, d.nobat, k))
      ws[nw++] = -1; /* any size up to the input's (checked below) */
  if ((s = xrt__ix_combine(v, idx, d.ivd, d.win, d.nwin, ws, up0,
                           "updates")))
    return s;
  for (int32_t k = 0, j = 0; k < in0->rank; k++) {
    if (xrt__contains(d.ins, d.nins, k) || xrt__contains(d.obat, d.nobat, k))
      continue;
    if (up0->dims[d.win[j++]] > in0->dims[k])
      return xrt__vfail(v, "update window dimension %" PRId64 " (size %"
                        PRId64 ") exceeds input dimension %d (size %" PRId64
                        ")", d.win[j - 1], up0->dims[d.win[j - 1]], (int)k,
                        in0->dims[k]);
  }
  if ((s = xrt__vregion_sig(v, &op->regions[0], "update_computation", 2 * n,
                            sig, n, sig)))
    return s;
  const xrt_ir_region *r = &op->regions[0];
  const xrt_ir_op *term = &r->ops[r->num_ops - 1];
  for (int i = 0; i < 2 * n; i++) {
    const xrt_ir_type *a = xrt__vtype(v, r->args[i]);
    const xrt_ir_type *rt = i < n ? xrt__vtype(v, term->operands[i]) : a;
    if (a->kind != XRT_TYPE_TENSOR || a->shape.rank != 0 ||
        rt->kind != XRT_TYPE_TENSOR || rt->shape.rank != 0 ||
        (!a->quant && a->shape.dtype != xrt__operand(v, i % n)->dtype) ||
        (i < n && rt->shape.dtype != a->shape.dtype))
      return xrt__vfail(v, "update_computation must map scalars of the "
                        "inputs' element types");
  }
  return XRT_OK;
}

/* Start indices: count scalars of one integer type from operand first. */
static xrt_status xrt__ix_starts(const xrt__vctx *v, int first, int count) {
  for (int i = 0; i < count; i++) {
    const xrt_shape *s = xrt__operand(v, first + i);
    if (s->rank != 0 || !xrt__dtype_is_int(s->dtype))
      return xrt__vfail(v, "start index %d must be an integer scalar", i);
    if (s->dtype != xrt__operand(v, first)->dtype)
      return xrt__vfail(v, "start indices must share one element type");
  }
  return XRT_OK;
}

static xrt_status xrt__verify_dynamic_slice(const xrt__vctx *v) {
  if (v->op->num_operands < 1)
    return xrt__vfail(v, "expects an operand and start indices");
  const xrt_shape *x = xrt__operand(v, 0);
  xrt_status s = xrt__vcounts(v, 1 + x->rank, 1);
  const int64_t *sz;
  int64_t n;
  if (s || (s = xrt__ix_starts(v, 1, x->rank)) ||
      (s = xrt__vints(v, "slice_sizes", false, &sz, &n)))
    return s;
  const xrt_shape *out = xrt__result(v, 0);
  if (n != x->rank)
    return xrt__vfail(v, "slice_sizes needs one entry per operand dimension "
                      "(%d)", (int)x->rank);
  if (out->dtype != x->dtype || out->rank != x->rank)
    return xrt__vfail(v, "result must have the operand's element type and "
                      "rank");
  for (int32_t k = 0; k < x->rank; k++) {
    if (sz[k] < 0 || sz[k] > x->dims[k])
      return xrt__vfail(v, "slice_sizes[%d] = %" PRId64 " must be in [0, %"
                        PRId64 "]", (int)k, sz[k], x->dims[k]);
    if (out->dims[k] != sz[k])
      return xrt__vfail(v, "result dimension %d must be %" PRId64, (int)k,
                        sz[k]);
  }
  return XRT_OK;
}

static xrt_status xrt__verify_dynamic_update_slice(const xrt__vctx *v) {
  if (v->op->num_operands < 2)
    return xrt__vfail(v, "expects an operand, an update and start indices");
  const xrt_shape *x = xrt__operand(v, 0), *u = xrt__operand(v, 1);
  xrt_status s = xrt__vcounts(v, 2 + x->rank, 1);
  if (s || (s = xrt__ix_starts(v, 2, x->rank)) ||
      (s = xrt__vsame(v, v->op->operands[0], v->op->results[0],
                      "result type differs from operand type")))
    return s;
  if (u->dtype != x->dtype || u->rank != x->rank)
    return xrt__vfail(v, "update must have the operand's element type and "
                      "rank");
  for (int32_t k = 0; k < x->rank; k++)
    if (u->dims[k] > x->dims[k])
      return xrt__vfail(v, "update dimension %d (size %" PRId64 ") exceeds "
                        "the operand's (%" PRId64 ")", (int)k, u->dims[k],
                        x->dims[k]);
  return XRT_OK;
}

/* A window attribute: rank entries (2*rank for padding), each in
 * [lo, XRT__IX_BIG] in magnitude; absent means every entry is dflt. */
static xrt_status xrt__ix_window_attr(const xrt__vctx *v, const char *name,
                                      bool required, int32_t rank,
                                      int per_dim, int64_t lo,
                                      int64_t dflt, int64_t *out) {
  const int64_t *a;
  int64_t n, bad;
  xrt_status s = xrt__vints(v, name, !required, &a, &n);
  if (s) return s;
  if (a && n != per_dim * rank)
    return xrt__vfail(v, "%s needs %d entries, has %" PRId64, name,
                      per_dim * (int)rank, n);
  /* every caller's lo is at least -XRT__IX_BIG, so this bounds magnitudes */
  bad = xrt__vfill_checked(out, a, per_dim * rank, dflt, lo, XRT__IX_BIG);
  if (bad >= 0)
    return xrt__vfail(v, "%s[%d] = %" PRId64 " must be %s", name, (int)bad,
                      out[bad], out[bad] > lo ? "at most 2^40" /* too large */
                                : lo > 0 ? "positive" : "in range");
  return XRT_OK;
}

/* Result sizes of windows over x: the shape the spec's num_windows gives. */
static xrt_status xrt__ix_windows(const xrt__vctx *v, const xrt_shape *x,
                                  bool dilations, int64_t *out) {
  int64_t wd[XRT_MAX_RANK], ws[XRT_MAX_RANK], bd[XRT_MAX_RANK],
      wdl[XRT_MAX_RANK], pad[2 * XRT_MAX_RANK];
  int32_t r = x->rank;
  xrt_status s =
      xrt__ix_window_attr(v, "window_dimensions", true, r, 1, 1, 1, wd);
  if (s ||
      (s = xrt__ix_window_attr(v, "window_strides", false, r, 1, 1, 1, ws)) ||
      (s = xrt__ix_window_attr(v, "padding", false, r, 2, -XRT__IX_BIG, 0,
                               pad)))
    return s;
  for (int32_t d = 0; d < r; d++) bd[d] = wdl[d] = 1;
  if (dilations &&
      ((s = xrt__ix_window_attr(v, "base_dilations", false, r, 1, 1, 1, bd)) ||
       (s = xrt__ix_window_attr(v, "window_dilations", false, r, 1, 1, 1,
                                wdl))))
    return s;
  for (int32_t d = 0; d < r; d++) {
    if (x->dims[d] > XRT__IX_BIG ||
        (x->dims[d] > 1 && bd[d] > XRT__IX_BIG / (x->dims[d] - 1)) ||
        (wd[d] > 1 && wdl[d] > XRT__IX_BIG / (wd[d] - 1)))
      return xrt__vfail(v, "window of dimension %d is too large", (int)d);
    int64_t padded = xrt__dilated(x->dims[d], bd[d]) + pad[2 * d] +
                     pad[2 * d + 1];
    if (padded < 0)
      return xrt__vfail(v, "padding makes dimension %d negative", (int)d);
    out[d] = xrt__num_windows(padded, xrt__dilated(wd[d], wdl[d]), ws[d]);
  }
  return XRT_OK;
}

static xrt_status xrt__verify_reduce_window(const xrt__vctx *v) {
  const xrt_ir_op *op = v->op;
  int n = op->num_results;
  xrt_status s = xrt__vcounts(v, 2 * n, n);
  if (s) return s;
  if (n < 1 || n > 32 || op->num_regions != 1)
    return xrt__vfail(v, "needs 1 to 32 inputs and one body region");
  const xrt_shape *in0 = xrt__operand(v, 0);
  int64_t want[XRT_MAX_RANK];
  if ((s = xrt__ix_windows(v, in0, true, want))) return s;
  const xrt_ir_type *sig[64];
  for (int i = 0; i < n; i++) {
    const xrt_shape *in = xrt__operand(v, i), *init = xrt__operand(v, n + i),
                    *out = xrt__result(v, i);
    if (!xrt__same_dims(in, in0)) return xrt__vfail(v, "inputs differ in shape");
    if (init->rank != 0 || init->dtype != out->dtype)
      return xrt__vfail(v, "init value %d must be a scalar of result %d's "
                        "element type", i, i);
    if (out->rank != in0->rank)
      return xrt__vfail(v, "result %d must have the inputs' rank", i);
    for (int32_t d = 0; d < out->rank; d++)
      if (out->dims[d] != want[d])
        return xrt__vfail(v, "result %d dimension %d must be %" PRId64, i,
                          (int)d, want[d]);
    sig[i] = sig[n + i] = xrt__vtype(v, op->operands[n + i]);
  }
  return xrt__vregion_sig(v, &op->regions[0], "body", 2 * n, sig, n, sig);
}

static xrt_status xrt__verify_select_and_scatter(const xrt__vctx *v) {
  const xrt_ir_op *op = v->op;
  xrt_status s = xrt__vcounts(v, 3, 1);
  if (s) return s;
  if (op->num_regions != 2)
    return xrt__vfail(v, "needs a select and a scatter region");
  const xrt_shape *x = xrt__operand(v, 0), *src = xrt__operand(v, 1),
                  *init = xrt__operand(v, 2);
  if ((s = xrt__vsame(v, op->operands[0], op->results[0],
                      "result type differs from operand type")))
    return s;
  if (src->dtype != x->dtype || init->dtype != x->dtype || init->rank != 0)
    return xrt__vfail(v, "source and init_value must have the operand's "
                      "element type (init_value a scalar)");
  int64_t want[XRT_MAX_RANK];
  if ((s = xrt__ix_windows(v, x, false, want))) return s;
  if (src->rank != x->rank)
    return xrt__vfail(v, "source must have the operand's rank");
  for (int32_t d = 0; d < x->rank; d++)
    if (src->dims[d] != want[d])
      return xrt__vfail(v, "source dimension %d must be %" PRId64
                        " (the number of windows)", (int)d, want[d]);
  const xrt_ir_type *t = xrt__vtype(v, op->operands[2]);
  const xrt_ir_type *sig[2] = {t, t};
  if ((s = xrt__vregion_sig(v, &op->regions[0], "select", 2, sig, 1,
                            (const xrt_ir_type *[]){NULL})))
    return s;
  const xrt_ir_region *sel = &op->regions[0];
  const xrt_ir_type *rt = xrt__vtype(v, sel->ops[sel->num_ops - 1].operands[0]);
  if (rt->kind != XRT_TYPE_TENSOR || rt->shape.dtype != XRT_PRED ||
      rt->shape.rank != 0)
    return xrt__vfail(v, "select region must return tensor<i1>");
  return xrt__vregion_sig(v, &op->regions[1], "scatter", 2, sig, 1, sig);
}

static xrt_status xrt__verify_dynamic_broadcast_in_dim(const xrt__vctx *v) {
  xrt_status s = xrt__vcounts(v, 2, 1);
  const int64_t *bd, *ke, *kn;
  int64_t n, nke, nkn;
  if (s || (s = xrt__vints(v, "broadcast_dimensions", false, &bd, &n)) ||
      (s = xrt__vints(v, "known_expanding_dimensions", true, &ke, &nke)) ||
      (s = xrt__vints(v, "known_nonexpanding_dimensions", true, &kn, &nkn)))
    return s;
  const xrt_shape *in = xrt__operand(v, 0), *out = xrt__result(v, 0);
  if ((s = xrt__ix_shape_operand(v, 1, "output_dimensions", out->rank)) ||
      (s = xrt__vbroadcast_dims(v, bd, n)) ||
      (s = xrt__vdims(v, "known_expanding_dimensions", ke, nke, in->rank)) ||
      (s = xrt__vdims(v, "known_nonexpanding_dimensions", kn, nkn,
                      in->rank)) ||
      (s = xrt__ix_unique2(v, "known dimensions", ke, nke, kn, nkn)))
    return s;
  for (int64_t i = 0; i < n; i++)
    if (in->dims[i] != 1 && in->dims[i] != out->dims[bd[i]])
      return xrt__vfail(v, "operand dimension %" PRId64 " (size %" PRId64
                        ") does not broadcast to size %" PRId64, i,
                        in->dims[i], out->dims[bd[i]]);
  return XRT_OK;
}

static xrt_status xrt__verify_dynamic_iota(const xrt__vctx *v) {
  xrt_status s = xrt__vcounts(v, 1, 1);
  if (s) return s;
  const xrt_shape *out = xrt__result(v, 0);
  if ((s = xrt__ix_shape_operand(v, 0, "output_shape", out->rank))) return s;
  return xrt__viota_dimension(v);
}

static xrt_status xrt__verify_dynamic_pad(const xrt__vctx *v) {
  xrt_status s = xrt__vcounts(v, 5, 1);
  if (s) return s;
  const xrt_shape *x = xrt__operand(v, 0), *pv = xrt__operand(v, 1),
                  *out = xrt__result(v, 0);
  if (pv->rank != 0 || pv->dtype != x->dtype || out->dtype != x->dtype)
    return xrt__vfail(v, "padding value must be a scalar of the operand's "
                         "element type");
  if (out->rank != x->rank)
    return xrt__vfail(v, "result must have the operand's rank");
  static const char *const names[3] = {"edge_padding_low",
                                       "edge_padding_high",
                                       "interior_padding"};
  for (int i = 0; i < 3; i++)
    if ((s = xrt__ix_shape_operand(v, 2 + i, names[i], x->rank))) return s;
  return XRT_OK;
}

static xrt_status xrt__verify_dynamic_reshape(const xrt__vctx *v) {
  xrt_status s = xrt__vcounts(v, 2, 1);
  if (s) return s;
  const xrt_shape *out = xrt__result(v, 0);
  if ((s = xrt__ix_shape_operand(v, 1, "output_shape", out->rank))) return s;
  return xrt__vsame_elements(v);
}

XRT__PRIVATE xrt_status xrt__verify_index(const xrt__vctx *v) {
  switch (v->op->code) {
  case XRT_OP_GATHER: return xrt__verify_gather(v, false);
  case XRT_OP_DYNAMIC_GATHER: return xrt__verify_gather(v, true);
  case XRT_OP_SCATTER: return xrt__verify_scatter(v);
  case XRT_OP_DYNAMIC_SLICE: return xrt__verify_dynamic_slice(v);
  case XRT_OP_DYNAMIC_UPDATE_SLICE: return xrt__verify_dynamic_update_slice(v);
  case XRT_OP_REDUCE_WINDOW: return xrt__verify_reduce_window(v);
  case XRT_OP_SELECT_AND_SCATTER: return xrt__verify_select_and_scatter(v);
  case XRT_OP_DYNAMIC_BROADCAST_IN_DIM:
    return xrt__verify_dynamic_broadcast_in_dim(v);
  case XRT_OP_DYNAMIC_IOTA: return xrt__verify_dynamic_iota(v);
  case XRT_OP_DYNAMIC_PAD: return xrt__verify_dynamic_pad(v);
  case XRT_OP_DYNAMIC_RESHAPE: return xrt__verify_dynamic_reshape(v);
  default: return XRT_OK;
  }
}
