/*
 * src/core/verify_ctrl.c - verifier constraints of the control-flow op family:
 * if, case, while, map, sort, calls, collectives.
 * Part of the core of xrt; MIT licensed, see LICENSE.
 */
#include "internal.h"
/* ----------------------------------------------------------------------
 * Verifier constraints of the ctrl op family. Returns XRT_OK for ops of
 * other families.
 * -------------------------------------------------------------------- */

#define XRT__CTRL_MAXV 256

/* A rank-0 tensor type of element type t (for region signatures). */
static xrt_ir_type xrt__scalar_type(xrt_dtype t) {
  xrt_ir_type s;
  memset(&s, 0, sizeof s);
  s.kind = XRT_TYPE_TENSOR;
  s.shape.dtype = t;
  return s;
}

static bool xrt__is_scalar_of(const xrt__vctx *v, int32_t id, xrt_dtype t) {
  const xrt_ir_type *ty = xrt__vtype(v, id);
  return ty->kind == XRT_TYPE_TENSOR && ty->shape.rank == 0 &&
         ty->shape.dtype == t;
}

/* if/case: (C1) branches take no arguments, (C2) return the result types. */
static xrt_status xrt__verify_branches(const xrt__vctx *v, bool is_if) {
  const xrt_ir_op *op = v->op;
  if (op->num_operands != 1)
    return xrt__vfail(v, "expects 1 operand, got %d", (int)op->num_operands);
  if (!xrt__is_scalar_of(v, op->operands[0], is_if ? XRT_PRED : XRT_S32))
    return xrt__vfail(v, is_if ? "pred must be tensor<i1>"
                               : "index must be tensor<i32>");
  if (is_if ? op->num_regions != 2 : op->num_regions < 1)
    return xrt__vfail(v, is_if ? "needs two regions (true and false branch)"
                               : "needs at least one branch");
  if (op->num_results > XRT__CTRL_MAXV)
    return xrt__vfail(v, "too many results");
  const xrt_ir_type *res[XRT__CTRL_MAXV + 1];
  for (int i = 0; i < op->num_results; i++) res[i] = xrt__vtype(v, op->results[i]);
  for (int k = 0; k < op->num_regions; k++) {
    char what[48];
    if (is_if) snprintf(what, sizeof what, "%s", k ? "false branch" : "true branch");
    else snprintf(what, sizeof what, "branch %d", k);
    xrt_status s = xrt__vregion_sig(v, &op->regions[k], what, 0, NULL,
                                    op->num_results, res);
    if (s) return s;
  }
  return XRT_OK;
}

/* map: (C1) operand shapes are the result's, (C2) at least one operand,
 * (C3) dimensions = [0, ..., rank-1], (C4) the region maps scalars. */
static xrt_status xrt__verify_map(const xrt__vctx *v) {
  const xrt_ir_op *op = v->op;
  int n = op->num_operands;
  xrt_status s = xrt__vcounts(v, -1, 1);
  if (s) return s;
  if (n < 1 || n > XRT__CTRL_MAXV)
    return xrt__vfail(v, "needs 1 to %d operands", XRT__CTRL_MAXV);
  if (op->num_regions != 1) return xrt__vfail(v, "needs one region");
  const xrt_shape *o = xrt__result(v, 0);
  for (int i = 0; i < n; i++)
    if (!xrt__same_dims(xrt__operand(v, i), o))
      return xrt__vfail(v, "operand %d and the result differ in shape", i);
  const int64_t *dims;
  int64_t nd;
  if ((s = xrt__vints(v, "dimensions", true, &dims, &nd))) return s;
  if (dims && nd != o->rank)
    return xrt__vfail(v, "dimensions must be [0, ..., %d]", (int)o->rank - 1);
  for (int64_t i = 0; dims && i < nd; i++)
    if (dims[i] != i)
      return xrt__vfail(v, "dimensions must be [0, ..., %d]", (int)o->rank - 1);
  xrt_ir_type at[XRT__CTRL_MAXV], rt = xrt__scalar_type(o->dtype);
  const xrt_ir_type *args[XRT__CTRL_MAXV], *rets[1] = {&rt};
  for (int i = 0; i < n; i++) {
    at[i] = xrt__scalar_type(xrt__operand(v, i)->dtype);
    args[i] = xrt__vtype(v, op->operands[i])->quant ? NULL : &at[i];
  }
  if (xrt__vtype(v, op->results[0])->quant) rets[0] = NULL;
  return xrt__vregion_sig(v, &op->regions[0], "computation", n, args, 1, rets);
}

/* sort: (C1) operands, (C2) result types, (C3) one shape, (C4) dimension
 * in [-rank, rank), (C5) comparator (E0, E0, E1, E1, ...) -> tensor<i1>. */
static xrt_status xrt__verify_sort(const xrt__vctx *v) {
  const xrt_ir_op *op = v->op;
  int n = op->num_operands;
  xrt_status s = xrt__vcounts(v, -1, n);
  if (s) return s;
  if (n < 1 || n > XRT__CTRL_MAXV / 2)
    return xrt__vfail(v, "needs 1 to %d operands", XRT__CTRL_MAXV / 2);
  if (op->num_regions != 1) return xrt__vfail(v, "needs a comparator region");
  const xrt_shape *s0 = xrt__operand(v, 0);
  for (int i = 0; i < n; i++) {
    if ((s = xrt__vsame(v, op->operands[i], op->results[i],
                        "result type differs from operand type")))
      return s;
    if (!xrt__same_dims(xrt__operand(v, i), s0))
      return xrt__vfail(v, "operand %d differs in shape from operand 0", i);
  }
  int64_t dim;
  if ((s = xrt__vint_or(v, "dimension", -1, &dim))) return s;
  if (dim < -(int64_t)s0->rank || dim >= s0->rank)
    return xrt__vfail(v, "dimension %" PRId64 " is out of range for rank %d",
                      dim, (int)s0->rank);
  xrt_ir_type at[XRT__CTRL_MAXV], rt = xrt__scalar_type(XRT_PRED);
  const xrt_ir_type *args[XRT__CTRL_MAXV], *rets[1] = {&rt};
  for (int i = 0; i < n; i++) {
    bool q = xrt__vtype(v, op->operands[i])->quant != NULL;
    at[i] = xrt__scalar_type(xrt__operand(v, i)->dtype);
    args[2 * i] = args[2 * i + 1] = q ? NULL : &at[i];
  }
  return xrt__vregion_sig(v, &op->regions[0], "comparator", 2 * n, args, 1,
                          rets);
}

/* composite: the decomposition is a function of the module whose
 * signature matches the operands and results. */
static xrt_status xrt__verify_composite(const xrt__vctx *v) {
  const xrt_ir_attr *d = xrt__vattr(v, "decomposition", XRT_ATTR_SYMBOL);
  if (!d || !d->s) return xrt__vfail(v, "missing symbol attribute 'decomposition'");
  const xrt_ir_attr *nm = xrt__vattr(v, "name", -1);
  if (nm && nm->kind != XRT_ATTR_STRING)
    return xrt__vfail(v, "attribute 'name' must be a string");
  const xrt_ir_func *f = NULL;
  for (int32_t i = 0; i < v->module->num_funcs && !f; i++)
    if (v->module->funcs[i].name && !strcmp(v->module->funcs[i].name, d->s))
      f = &v->module->funcs[i];
  if (!f) return xrt__vfail(v, "decomposition @%s is not a function of the "
                            "module", d->s);
  return xrt__vcallee(v, f, true);
}

/* tuple: (C1) the result is tuple<operand types...>. */
static xrt_status xrt__verify_tuple(const xrt__vctx *v) {
  const xrt_ir_op *op = v->op;
  if (op->num_results != 1) return xrt__vfail(v, "expects 1 result");
  const xrt_ir_type *t = xrt__vtype(v, op->results[0]);
  if (t->kind != XRT_TYPE_TUPLE || t->num_elems != op->num_operands)
    return xrt__vfail(v, "result must be a tuple of the %d operand types",
                      (int)op->num_operands);
  for (int i = 0; i < op->num_operands; i++)
    if (!xrt__type_equal(xrt__vtype(v, op->operands[i]), &t->elems[i]))
      return xrt__vfail(v, "tuple element %d differs from operand %d", i, i);
  return XRT_OK;
}

/* get_tuple_element: (C1) 0 <= index < size(operand), (C2) result type. */
static xrt_status xrt__verify_get_tuple_element(const xrt__vctx *v) {
  const xrt_ir_op *op = v->op;
  if (op->num_operands != 1 || op->num_results != 1)
    return xrt__vfail(v, "expects 1 operand and 1 result");
  const xrt_ir_type *t = xrt__vtype(v, op->operands[0]);
  if (t->kind != XRT_TYPE_TUPLE) return xrt__vfail(v, "operand must be a tuple");
  int64_t k;
  xrt_status s = xrt__vint(v, "index", &k);
  if (s) return s;
  if (k < 0 || k >= t->num_elems)
    return xrt__vfail(v, "index %" PRId64 " is out of range for a tuple of %d "
                      "element(s)", k, (int)t->num_elems);
  if (!xrt__type_equal(xrt__vtype(v, op->results[0]), &t->elems[k]))
    return xrt__vfail(v, "result type differs from tuple element %" PRId64, k);
  return XRT_OK;
}

static bool xrt__is_token(const xrt__vctx *v, int32_t id) {
  return xrt__vtype(v, id)->kind == XRT_TYPE_TOKEN;
}

static xrt_status xrt__verify_after_all(const xrt__vctx *v) {
  const xrt_ir_op *op = v->op;
  if (op->num_results != 1 || !xrt__is_token(v, op->results[0]))
    return xrt__vfail(v, "result must be one !stablehlo.token");
  for (int i = 0; i < op->num_operands; i++)
    if (!xrt__is_token(v, op->operands[i]))
      return xrt__vfail(v, "operand %d must be a !stablehlo.token", i);
  return XRT_OK;
}

static xrt_status xrt__verify_barrier(const xrt__vctx *v) {
  const xrt_ir_op *op = v->op;
  if (op->num_operands != op->num_results)
    return xrt__vfail(v, "needs as many results as operands");
  for (int i = 0; i < op->num_operands; i++) {
    xrt_status s = xrt__vsame(v, op->operands[i], op->results[i],
                              "result type differs from operand type");
    if (s) return s;
  }
  return XRT_OK;
}

/* ids[0..n) are tensors except the last, a token (tokens_last) or all
 * tensors. */
static xrt_status xrt__vio_list(const xrt__vctx *v, const int32_t *ids, int n,
                                const char *what, bool token_last) {
  if (token_last && (n < 1 || !xrt__is_token(v, ids[n - 1])))
    return xrt__vfail(v, "the last %s must be a !stablehlo.token", what);
  for (int i = 0; i < n - (token_last ? 1 : 0); i++)
    if (xrt__vtype(v, ids[i])->kind != XRT_TYPE_TENSOR)
      return xrt__vfail(v, "%s %d must be a tensor", what, i);
  return XRT_OK;
}

/* infeed/recv: token -> (tensors..., token); outfeed/send: (tensors...,
 * token) -> token. */
static xrt_status xrt__verify_io(const xrt__vctx *v, bool reads) {
  const xrt_ir_op *op = v->op;
  if (reads) {
    if (op->num_operands != 1 || !xrt__is_token(v, op->operands[0]))
      return xrt__vfail(v, "takes one !stablehlo.token");
    return xrt__vio_list(v, op->results, op->num_results, "result", true);
  }
  if (op->num_results != 1 || !xrt__is_token(v, op->results[0]))
    return xrt__vfail(v, "result must be one !stablehlo.token");
  return xrt__vio_list(v, op->operands, op->num_operands, "operand", true);
}

/* chlo.scan: (inputs..., inits...) -> (outputs..., carries...); the body
 * takes input slices and carries and returns output slices and carries. */
static xrt_status xrt__verify_scan(const xrt__vctx *v) {
  const xrt_ir_op *op = v->op;
  int64_t dim;
  xrt_status s = xrt__vint(v, "dimension", &dim);
  if (s) return s;
  if (op->num_regions != 1) return xrt__vfail(v, "needs a body region");
  const xrt_ir_region *r = &op->regions[0];
  if (r->num_args != op->num_operands)
    return xrt__vfail(v, "body takes %d argument(s), expected %d",
                      (int)r->num_args, (int)op->num_operands);
  const xrt_ir_op *term = r->num_ops ? &r->ops[r->num_ops - 1] : NULL;
  if (!term || term->num_operands != op->num_results)
    return xrt__vfail(v, "body must return %d value(s)", (int)op->num_results);
  const xrt_ir_attr *seg = xrt__vattr(v, "operandSegmentSizes", XRT_ATTR_INTS);
  if (seg && (seg->n != 2 || seg->ints[0] < 0 || seg->ints[1] < 0 ||
              seg->ints[0] + seg->ints[1] != op->num_operands ||
              seg->ints[1] > op->num_results))
    return xrt__vfail(v, "operandSegmentSizes does not fit the operands");
  for (int i = 0; i < op->num_operands; i++)
    if (xrt__vtype(v, op->operands[i])->kind != XRT_TYPE_TENSOR)
      return xrt__vfail(v, "operand %d must be a tensor", i);
  /* Without segment sizes the inits are the trailing operands whose body
   * argument has their own type (an input's argument is a slice). */
  int nc = 0;
  if (seg) nc = (int)seg->ints[1];
  else
    while (nc < op->num_operands &&
           xrt__type_equal(&v->func->value_types[r->args[op->num_operands - 1 - nc]],
                           xrt__vtype(v, op->operands[op->num_operands - 1 - nc])))
      nc++;
  int ni = op->num_operands - nc, no = op->num_results - nc;
  if (no < 0) return xrt__vfail(v, "fewer results than carries");
  for (int i = 0; i < ni; i++) {
    const xrt_shape *in = xrt__operand(v, i);
    const xrt_ir_type *at = &v->func->value_types[r->args[i]];
    if (dim < 0 || dim >= in->rank)
      return xrt__vfail(v, "dimension %" PRId64 " is out of range for input "
                        "%d of rank %d", dim, i, (int)in->rank);
    bool ok = at->kind == XRT_TYPE_TENSOR && at->shape.dtype == in->dtype &&
              at->shape.rank == in->rank - 1;
    for (int k = 0, j = 0; ok && k < in->rank; k++)
      if (k != dim) ok = at->shape.dims[j++] == in->dims[k];
    if (!ok)
      return xrt__vfail(v, "body argument %d must be a slice of input %d", i, i);
  }
  for (int j = 0; j < nc; j++) {
    const xrt_ir_type *init = xrt__vtype(v, op->operands[ni + j]);
    if (!xrt__type_equal(&v->func->value_types[r->args[ni + j]], init) ||
        !xrt__type_equal(xrt__vtype(v, op->results[no + j]), init) ||
        !xrt__type_equal(&v->func->value_types[term->operands[no + j]], init))
      return xrt__vfail(v, "carry %d must keep the type of its init", j);
  }
  return XRT_OK;
}

XRT__PRIVATE xrt_status xrt__verify_ctrl(const xrt__vctx *v) {
  switch (v->op->code) {
  case XRT_OP_IF: return xrt__verify_branches(v, true);
  case XRT_OP_CASE: return xrt__verify_branches(v, false);
  case XRT_OP_MAP: return xrt__verify_map(v);
  case XRT_OP_SORT: return xrt__verify_sort(v);
  case XRT_OP_COMPOSITE: return xrt__verify_composite(v);
  case XRT_OP_TUPLE: return xrt__verify_tuple(v);
  case XRT_OP_GET_TUPLE_ELEMENT: return xrt__verify_get_tuple_element(v);
  case XRT_OP_AFTER_ALL: return xrt__verify_after_all(v);
  case XRT_OP_OPTIMIZATION_BARRIER: return xrt__verify_barrier(v);
  case XRT_OP_INFEED: case XRT_OP_RECV: return xrt__verify_io(v, true);
  case XRT_OP_OUTFEED: case XRT_OP_SEND: return xrt__verify_io(v, false);
  case XRT_OP_CHLO_SCAN: return xrt__verify_scan(v);
  default: return XRT_OK;
  }
}
