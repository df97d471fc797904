/*
 * src/core/verify.c - the verifier: the shared checks and the core op family.
 * Part of the core of xrt; MIT licensed, see LICENSE.
 */
#include "internal.h"

#if defined(__GNUC__)
XRT_PRINTF_FORMAT(2, 3)
#endif
XRT__PRIVATE xrt_status xrt__vfail(const xrt__vctx *v, const char *fmt, ...) {
  char msg[768];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(msg, sizeof msg, fmt, ap);
  va_end(ap);
  const xrt_ir_loc *l = &v->op->loc;
  return xrt__fail(XRT_INVALID_ARGUMENT, "%s:%d:%d: %s: %s",
                   l->file ? l->file : "<input>", (int)l->line, (int)l->col,
                   v->op->name ? v->op->name : xrt_opcode_name(v->op->code),
                   msg);
}

XRT__PRIVATE const xrt_ir_type *xrt__vtype(const xrt__vctx *v, int32_t id) {
  return &v->func->value_types[id];
}
XRT__PRIVATE const xrt_shape *xrt__vshape(const xrt__vctx *v, int32_t id) {
  return &v->func->value_types[id].shape;
}
XRT__PRIVATE const xrt_shape *xrt__operand(const xrt__vctx *v, int i) {
  return xrt__vshape(v, v->op->operands[i]);
}
XRT__PRIVATE const xrt_shape *xrt__result(const xrt__vctx *v, int i) {
  return xrt__vshape(v, v->op->results[i]);
}

static void xrt__type_str(const xrt_ir_type *t, char *buf, size_t cap) {
  size_t n = 0; /* quantized types with their scales, tuples in full */
  if (t->kind == XRT_TYPE_TENSOR && !t->quant) xrt_shape_format(&t->shape, buf, cap);
  else xrt__p_type_fmt(t, buf, cap, &n);
}

XRT__PRIVATE bool xrt__type_equal(const xrt_ir_type *a, const xrt_ir_type *b) {
  if (a->kind != b->kind) return false;
  if (a->kind == XRT_TYPE_TOKEN) return true;
  if (a->kind == XRT_TYPE_TUPLE) {
    if (a->num_elems != b->num_elems) return false;
    for (int32_t i = 0; i < a->num_elems; i++)
      if (!xrt__type_equal(&a->elems[i], &b->elems[i])) return false;
    return true;
  }
  return xrt__shape_equal(&a->shape, &b->shape) && !a->quant == !b->quant;
}

XRT__PRIVATE xrt_status xrt__vcounts(const xrt__vctx *v, int operands, int results) {
  if (operands >= 0 && v->op->num_operands != operands)
    return xrt__vfail(v, "expects %d operand(s), got %d", operands,
                      (int)v->op->num_operands);
  if (results >= 0 && v->op->num_results != results)
    return xrt__vfail(v, "expects %d result(s), got %d", results,
                      (int)v->op->num_results);
  for (int i = 0; i < v->op->num_operands; i++)
    if (xrt__vtype(v, v->op->operands[i])->kind != XRT_TYPE_TENSOR)
      return xrt__vfail(v, "operand %d must be a tensor", i);
  for (int i = 0; i < v->op->num_results; i++)
    if (xrt__vtype(v, v->op->results[i])->kind != XRT_TYPE_TENSOR)
      return xrt__vfail(v, "result %d must be a tensor", i);
  return XRT_OK;
}

/* Two types must be equal; `what` names them in the message. */
XRT__PRIVATE xrt_status xrt__vsame(const xrt__vctx *v, int32_t a, int32_t b,
                             const char *what) {
  const xrt_ir_type *ta = xrt__vtype(v, a), *tb = xrt__vtype(v, b);
  if (xrt__type_equal(ta, tb)) return XRT_OK;
  char sa[160], sb[160];
  xrt__type_str(ta, sa, sizeof sa);
  xrt__type_str(tb, sb, sizeof sb);
  return xrt__vfail(v, "%s: %s vs %s", what, sa, sb);
}

/* s has exactly the rank dimensions dims. */
XRT__PRIVATE bool xrt__dims_are(const xrt_shape *s, const int64_t *dims,
                                int64_t rank) {
  if (s->rank != rank) return false;
  for (int32_t i = 0; i < s->rank; i++)
    if (s->dims[i] != dims[i]) return false;
  return true;
}

XRT__PRIVATE bool xrt__same_dims(const xrt_shape *a, const xrt_shape *b) {
  return xrt__dims_are(a, b->dims, b->rank);
}

/* Element-type classes an op accepts, as a bit mask of XRT__K_*. */
#define XRT__M(k) (1u << (k))
#define XRT__M_INT (XRT__M(XRT__K_SINT) | XRT__M(XRT__K_UINT))
#define XRT__M_FC (XRT__M(XRT__K_FLOAT) | XRT__M(XRT__K_COMPLEX))
#define XRT__M_NUM (XRT__M_INT | XRT__M_FC)
#define XRT__M_ALL (XRT__M_NUM | XRT__M(XRT__K_PRED))
#define XRT__M_LOGIC (XRT__M_INT | XRT__M(XRT__K_PRED))

XRT__PRIVATE unsigned xrt__elementwise_mask(xrt_opcode code) {
  switch (code) {
  case XRT_OP_ADD: case XRT_OP_MULTIPLY: case XRT_OP_MAXIMUM:
  case XRT_OP_MINIMUM: return XRT__M_ALL;
  case XRT_OP_SUBTRACT: case XRT_OP_DIVIDE: case XRT_OP_POWER:
  case XRT_OP_NEGATE: return XRT__M_NUM;
  case XRT_OP_REMAINDER: case XRT_OP_SIGN: case XRT_OP_ABS:
    return XRT__M_NUM;
  case XRT_OP_AND: case XRT_OP_OR: case XRT_OP_XOR: case XRT_OP_NOT:
    return XRT__M_LOGIC;
  case XRT_OP_SHIFT_LEFT: case XRT_OP_SHIFT_RIGHT_ARITHMETIC:
  case XRT_OP_SHIFT_RIGHT_LOGICAL: case XRT_OP_POPCNT:
  case XRT_OP_COUNT_LEADING_ZEROS: return XRT__M_INT;
  case XRT_OP_EXPONENTIAL: case XRT_OP_LOG: case XRT_OP_SQRT:
  case XRT_OP_RSQRT: case XRT_OP_TANH: case XRT_OP_LOGISTIC:
  case XRT_OP_SINE: case XRT_OP_COSINE: case XRT_OP_EXPONENTIAL_MINUS_ONE:
  case XRT_OP_LOG_PLUS_ONE: case XRT_OP_CBRT: case XRT_OP_TAN:
  case XRT_OP_ATAN2: return XRT__M_FC;
  case XRT_OP_FLOOR: case XRT_OP_CEIL: case XRT_OP_ROUND_NEAREST_AFZ:
  case XRT_OP_ROUND_NEAREST_EVEN: return XRT__M(XRT__K_FLOAT);
  /* CHLO's elementwise math (ChloOps.td: HLO_AnyFpOrComplexTensor or
   * HLO_AnyFpTensor); bessel_i1e on complex has no definition to follow */
  case XRT_OP_CHLO_ACOS: case XRT_OP_CHLO_ACOSH: case XRT_OP_CHLO_ASIN:
  case XRT_OP_CHLO_ASINH: case XRT_OP_CHLO_ATAN: case XRT_OP_CHLO_ATANH:
  case XRT_OP_CHLO_COSH: case XRT_OP_CHLO_SINH: return XRT__M_FC;
  case XRT_OP_CHLO_BESSEL_I1E: case XRT_OP_CHLO_DIGAMMA: case XRT_OP_CHLO_ERF:
  case XRT_OP_CHLO_ERFC: case XRT_OP_CHLO_ERF_INV: case XRT_OP_CHLO_LGAMMA:
  case XRT_OP_CHLO_NEXT_AFTER: case XRT_OP_CHLO_POLYGAMMA:
  case XRT_OP_CHLO_ZETA: return XRT__M(XRT__K_FLOAT);
  default: return 0;
  }
}

static bool xrt__is_binary_elementwise(xrt_opcode c) {
  switch (c) {
  case XRT_OP_ADD: case XRT_OP_SUBTRACT: case XRT_OP_MULTIPLY:
  case XRT_OP_DIVIDE: case XRT_OP_REMAINDER: case XRT_OP_MAXIMUM:
  case XRT_OP_MINIMUM: case XRT_OP_POWER: case XRT_OP_AND: case XRT_OP_OR:
  case XRT_OP_XOR: case XRT_OP_SHIFT_LEFT: case XRT_OP_SHIFT_RIGHT_ARITHMETIC:
  case XRT_OP_SHIFT_RIGHT_LOGICAL: case XRT_OP_ATAN2:
  case XRT_OP_CHLO_NEXT_AFTER: case XRT_OP_CHLO_POLYGAMMA:
  case XRT_OP_CHLO_ZETA: return true;
  default: return false;
  }
}

static xrt_status xrt__vclass(const xrt__vctx *v, unsigned mask) {
  xrt_dtype t = xrt__operand(v, 0)->dtype;
  if (xrt__vtype(v, v->op->operands[0])->quant) return XRT_OK; /* #3 */
  if (mask & XRT__M(xrt__dtype_class(t))) return XRT_OK;
  return xrt__vfail(v, "element type %s is not allowed", xrt_dtype_name(t));
}

XRT__PRIVATE xrt_status xrt__verify_elementwise(const xrt__vctx *v) {
  bool binary = xrt__is_binary_elementwise(v->op->code);
  xrt_status s = xrt__vcounts(v, binary ? 2 : 1, 1);
  if (s) return s;
  if (binary && (s = xrt__vsame(v, v->op->operands[0], v->op->operands[1],
                                "operand types differ")))
    return s;
  if ((s = xrt__vclass(v, xrt__elementwise_mask(v->op->code)))) return s;
  const xrt_shape *in = xrt__operand(v, 0), *out = xrt__result(v, 0);
  if (v->op->code == XRT_OP_ABS && xrt_dtype_is_complex(in->dtype)) {
    xrt_dtype real = in->dtype == XRT_C64 ? XRT_F32 : XRT_F64;
    if (out->dtype != real || !xrt__same_dims(in, out))
      return xrt__vfail(v, "result of abs of a complex tensor must be its "
                           "real counterpart");
    return XRT_OK;
  }
  return xrt__vsame(v, v->op->operands[0], v->op->results[0],
                    "result type differs from operand type");
}

XRT__PRIVATE const xrt_ir_attr *xrt__vattr(const xrt__vctx *v, const char *name,
                                     int kind) {
  const xrt_ir_attr *a = xrt_ir_op_attr(v->op, name);
  if (a && kind >= 0 && a->kind != kind) return NULL;
  return a;
}

/* An INTS attribute: returns it, or fails with a message. An absent
 * attribute counts as empty when allow_missing is set. */
XRT__PRIVATE xrt_status xrt__vints(const xrt__vctx *v, const char *name,
                             bool allow_missing, const int64_t **ints,
                             int64_t *n) {
  const xrt_ir_attr *a = xrt_ir_op_attr(v->op, name);
  if (!a) {
    if (!allow_missing) return xrt__vfail(v, "missing attribute '%s'", name);
    *ints = NULL, *n = 0;
    return XRT_OK;
  }
  if (a->kind != XRT_ATTR_INTS)
    return xrt__vfail(v, "attribute '%s' must be a list of integers", name);
  *ints = a->ints, *n = a->n;
  return XRT_OK;
}

/* Every entry of dims is a distinct dimension below rank. */
XRT__PRIVATE xrt_status xrt__vdims(const xrt__vctx *v, const char *what,
                             const int64_t *dims, int64_t n, int64_t rank) {
  for (int64_t i = 0; i < n; i++) {
    if (dims[i] < 0 || dims[i] >= rank)
      return xrt__vfail(v, "%s: dimension %" PRId64 " is out of range for "
                        "rank %" PRId64, what, dims[i], rank);
    for (int64_t j = 0; j < i; j++)
      if (dims[j] == dims[i])
        return xrt__vfail(v, "%s: dimension %" PRId64 " appears twice", what,
                          dims[i]);
  }
  return XRT_OK;
}

/* An INTS field of a DICT attribute such as dimension numbers; an absent
 * field is an empty list. */
XRT__PRIVATE xrt_status xrt__vfield(const xrt__vctx *v, const xrt_ir_attr *dict,
                              const char *name, const int64_t **ints,
                              int64_t *n) {
  const xrt_ir_attr *a = xrt_ir_attr_field(dict, name);
  *ints = NULL, *n = 0;
  if (!a) return XRT_OK;
  if (a->kind != XRT_ATTR_INTS)
    return xrt__vfail(v, "%s must be a list of integers", name);
  *ints = a->ints, *n = a->n;
  return XRT_OK;
}

XRT__PRIVATE bool xrt__contains(const int64_t *d, int64_t n, int64_t x) {
  for (int64_t i = 0; i < n; i++)
    if (d[i] == x) return true;
  return false;
}

XRT__PRIVATE bool xrt__dtype_is_int(xrt_dtype t) {
  return xrt_dtype_is_signed_int(t) || xrt_dtype_is_unsigned_int(t);
}

/* A required INT attribute (*out is 0 when it is missing, which keeps
 * callers free of maybe-uninitialized warnings). */
XRT__PRIVATE xrt_status xrt__vint(const xrt__vctx *v, const char *name,
                                  int64_t *out) {
  const xrt_ir_attr *a = xrt__vattr(v, name, XRT_ATTR_INT);
  *out = a ? a->i : 0;
  return a ? XRT_OK
           : xrt__vfail(v, "missing integer attribute '%s'", name);
}

/* An optional INT attribute; absent gives dflt. */
XRT__PRIVATE xrt_status xrt__vint_or(const xrt__vctx *v, const char *name,
                                     int64_t dflt, int64_t *out) {
  const xrt_ir_attr *a = xrt_ir_op_attr(v->op, name);
  *out = dflt;
  if (!a) return XRT_OK;
  if (a->kind != XRT_ATTR_INT)
    return xrt__vfail(v, "attribute '%s' must be an integer", name);
  *out = a->i;
  return XRT_OK;
}

/* Fills out[0..n) with the entries a of a list attribute (window sizes,
 * strides, dilations, padding), or with dflt where the attribute is absent
 * (a NULL); returns the first index whose entry lies outside [lo, hi], or
 * -1.  The op families word a bad entry differently, so the caller fails
 * with its own message. */
XRT__PRIVATE int64_t xrt__vfill_checked(int64_t *out, const int64_t *a,
                                        int64_t n, int64_t dflt, int64_t lo,
                                        int64_t hi) {
  for (int64_t i = 0; i < n; i++) {
    out[i] = a ? a[i] : dflt;
    if (out[i] < lo || out[i] > hi) return i;
  }
  return -1;
}

/* n elements with dilation - 1 holes between neighbours: the spec's
 * dilated size, for base (lhs) and window (rhs) dilations alike. */
XRT__PRIVATE int64_t xrt__dilated(int64_t n, int64_t dilation) {
  return n ? (n - 1) * dilation + 1 : 0;
}

/* The spec's num_windows along one dimension: how many windows of `window`
 * elements (dilated), `stride` apart, fit in `padded` elements (the input
 * dilated and padded). */
XRT__PRIVATE int64_t xrt__num_windows(int64_t padded, int64_t window,
                                      int64_t stride) {
  if (padded <= 0 || window > padded) return 0;
  return (padded - window) / stride + 1;
}

XRT__PRIVATE xrt_status xrt__verify_compare(const xrt__vctx *v) {
  xrt_status s = xrt__vcounts(v, 2, 1);
  if (s || (s = xrt__vsame(v, v->op->operands[0], v->op->operands[1],
                           "operand types differ")))
    return s;
  const xrt_shape *out = xrt__result(v, 0);
  if (out->dtype != XRT_PRED || !xrt__same_dims(out, xrt__operand(v, 0)))
    return xrt__vfail(v, "result must be i1 of the operands' shape");
  const xrt_ir_attr *d = xrt__vattr(v, "comparison_direction", XRT_ATTR_ENUM);
  static const char *const dirs[] = {"EQ", "NE", "GE", "GT", "LE", "LT"};
  for (size_t i = 0; d && i < XRT__ARRAY_SIZE(dirs); i++)
    if (strcmp(d->s, dirs[i]) == 0) return XRT_OK;
  return xrt__vfail(v, "comparison_direction must be one of EQ, NE, GE, GT, "
                       "LE, LT");
}

XRT__PRIVATE xrt_status xrt__verify_select(const xrt__vctx *v) {
  xrt_status s = xrt__vcounts(v, 3, 1);
  if (s) return s;
  const xrt_shape *p = xrt__operand(v, 0), *out = xrt__result(v, 0);
  if (p->dtype != XRT_PRED || (p->rank != 0 && !xrt__same_dims(p, out)))
    return xrt__vfail(v, "pred must be i1, a scalar or of the result's shape");
  if ((s = xrt__vsame(v, v->op->operands[1], v->op->results[0],
                      "on_true type differs from result type")))
    return s;
  return xrt__vsame(v, v->op->operands[2], v->op->results[0],
                    "on_false type differs from result type");
}

XRT__PRIVATE xrt_status xrt__verify_clamp(const xrt__vctx *v) {
  xrt_status s = xrt__vcounts(v, 3, 1);
  if (s || (s = xrt__vsame(v, v->op->operands[1], v->op->results[0],
                           "operand type differs from result type")))
    return s;
  const xrt_shape *x = xrt__operand(v, 1);
  for (int i = 0; i < 3; i += 2) {
    const xrt_shape *b = xrt__operand(v, i);
    if (b->dtype != x->dtype || (b->rank != 0 && !xrt__same_dims(b, x)))
      return xrt__vfail(v, "%s must be a scalar or of the operand's shape and "
                        "type", i ? "max" : "min");
  }
  return XRT_OK;
}

XRT__PRIVATE xrt_status xrt__verify_convert(const xrt__vctx *v) {
  xrt_status s = xrt__vcounts(v, 1, 1);
  if (s) return s;
  if (!xrt__same_dims(xrt__operand(v, 0), xrt__result(v, 0)))
    return xrt__vfail(v, "operand and result shapes differ");
  return XRT_OK;
}

XRT__PRIVATE xrt_status xrt__verify_bitcast(const xrt__vctx *v) {
  xrt_status s = xrt__vcounts(v, 1, 1);
  if (s) return s;
  const xrt_shape *in = xrt__operand(v, 0), *out = xrt__result(v, 0);
  int bi = xrt_dtype_bits(in->dtype), bo = xrt_dtype_bits(out->dtype);
  bool ok = false;
  if (bi == bo) ok = xrt__same_dims(in, out);
  else if (bi > bo) /* one to many: an extra trailing dimension */
    ok = out->rank == in->rank + 1 && out->dims[in->rank] == bi / bo &&
         bi % bo == 0 && memcmp(in->dims, out->dims,
                                sizeof(int64_t) * (size_t)in->rank) == 0;
  else /* many to one: the operand's trailing dimension disappears */
    ok = in->rank == out->rank + 1 && in->dims[out->rank] == bo / bi &&
         bo % bi == 0 && memcmp(in->dims, out->dims,
                                sizeof(int64_t) * (size_t)out->rank) == 0;
  return ok ? XRT_OK : xrt__vfail(v, "shapes do not fit a bitcast between %s "
                                  "and %s", xrt_dtype_name(in->dtype),
                                  xrt_dtype_name(out->dtype));
}

/* iota and dynamic_iota: iota_dimension is a dimension of the result. */
XRT__PRIVATE xrt_status xrt__viota_dimension(const xrt__vctx *v) {
  int64_t d;
  xrt_status s = xrt__vint(v, "iota_dimension", &d);
  if (s) return s;
  if (d < 0 || d >= xrt__result(v, 0)->rank)
    return xrt__vfail(v, "iota_dimension %" PRId64 " is out of range", d);
  return XRT_OK;
}

XRT__PRIVATE xrt_status xrt__verify_iota(const xrt__vctx *v) {
  xrt_status s = xrt__vcounts(v, 0, 1);
  return s ? s : xrt__viota_dimension(v);
}

/* broadcast_in_dim and its dynamic form: operand and result share an
 * element type, and broadcast_dimensions maps each operand dimension to a
 * distinct result dimension. */
XRT__PRIVATE xrt_status xrt__vbroadcast_dims(const xrt__vctx *v,
                                             const int64_t *dims, int64_t n) {
  const xrt_shape *in = xrt__operand(v, 0), *out = xrt__result(v, 0);
  if (in->dtype != out->dtype) return xrt__vfail(v, "element types differ");
  if (n != in->rank)
    return xrt__vfail(v, "broadcast_dimensions has %" PRId64 " entries for an "
                      "operand of rank %d", n, (int)in->rank);
  return xrt__vdims(v, "broadcast_dimensions", dims, n, out->rank);
}

XRT__PRIVATE xrt_status xrt__verify_broadcast_in_dim(const xrt__vctx *v) {
  xrt_status s = xrt__vcounts(v, 1, 1);
  const int64_t *dims;
  int64_t n;
  if (s || (s = xrt__vints(v, "broadcast_dimensions", false, &dims, &n)) ||
      (s = xrt__vbroadcast_dims(v, dims, n)))
    return s;
  const xrt_shape *in = xrt__operand(v, 0), *out = xrt__result(v, 0);
  for (int64_t i = 0; i < n; i++)
    if (in->dims[i] != 1 && in->dims[i] != out->dims[dims[i]])
      return xrt__vfail(v, "operand dimension %" PRId64 " (size %" PRId64
                        ") does not fit result dimension %" PRId64 " (size %"
                        PRId64 ")", i, in->dims[i], dims[i],
                        out->dims[dims[i]]);
  return XRT_OK;
}

/* broadcast: the result's dims are broadcast_sizes followed by the
 * operand's. */
/* The result's dimensions must be want[0..rank). */
static xrt_status xrt__vresult_dims(const xrt__vctx *v, const xrt_shape *out,
                                    const int64_t *want) {
  for (int32_t i = 0; i < out->rank; i++)
    if (out->dims[i] != want[i])
      return xrt__vfail(v, "result dimension %d is %" PRId64 ", expected %"
                        PRId64, (int)i, out->dims[i], want[i]);
  return XRT_OK;
}

XRT__PRIVATE xrt_status xrt__verify_broadcast(const xrt__vctx *v) {
  xrt_status s = xrt__vcounts(v, 1, 1);
  const int64_t *sizes;
  int64_t n;
  if (s || (s = xrt__vints(v, "broadcast_sizes", false, &sizes, &n)))
    return s;
  const xrt_shape *in = xrt__operand(v, 0), *out = xrt__result(v, 0);
  if (in->dtype != out->dtype) return xrt__vfail(v, "element types differ");
  if (n + in->rank != out->rank)
    return xrt__vfail(v, "result rank %d is not %" PRId64 " broadcast sizes "
                      "plus the operand's rank %d", (int)out->rank, n,
                      (int)in->rank);
  int64_t want[XRT_MAX_RANK];
  for (int32_t i = 0; i < out->rank; i++)
    want[i] = i < n ? sizes[i] : in->dims[i - n];
  return xrt__vresult_dims(v, out, want);
}

/* reshape and dynamic_reshape: operand and result hold the same elements. */
XRT__PRIVATE xrt_status xrt__vsame_elements(const xrt__vctx *v) {
  const xrt_shape *in = xrt__operand(v, 0), *out = xrt__result(v, 0);
  if (in->dtype != out->dtype) return xrt__vfail(v, "element types differ");
  if (xrt_shape_numel(in) != xrt_shape_numel(out))
    return xrt__vfail(v, "operand has %" PRId64 " elements, result %" PRId64,
                      xrt_shape_numel(in), xrt_shape_numel(out));
  return XRT_OK;
}

XRT__PRIVATE xrt_status xrt__verify_reshape(const xrt__vctx *v) {
  xrt_status s = xrt__vcounts(v, 1, 1);
  return s ? s : xrt__vsame_elements(v);
}

XRT__PRIVATE xrt_status xrt__verify_transpose(const xrt__vctx *v) {
  xrt_status s = xrt__vcounts(v, 1, 1);
  const int64_t *perm;
  int64_t n;
  if (s || (s = xrt__vints(v, "permutation", false, &perm, &n))) return s;
  const xrt_shape *in = xrt__operand(v, 0), *out = xrt__result(v, 0);
  if (n != in->rank || out->rank != in->rank)
    return xrt__vfail(v, "permutation must have one entry per dimension");
  if ((s = xrt__vdims(v, "permutation", perm, n, in->rank))) return s;
  for (int64_t i = 0; i < n; i++)
    if (out->dims[i] != in->dims[perm[i]])
      return xrt__vfail(v, "result dimension %" PRId64 " must be %" PRId64, i,
                        in->dims[perm[i]]);
  return in->dtype == out->dtype ? XRT_OK
                                 : xrt__vfail(v, "element types differ");
}

XRT__PRIVATE xrt_status xrt__verify_slice(const xrt__vctx *v) {
  xrt_status s = xrt__vcounts(v, 1, 1);
  const int64_t *st, *li, *sd;
  int64_t n1, n2, n3;
  if (s || (s = xrt__vints(v, "start_indices", false, &st, &n1)) ||
      (s = xrt__vints(v, "limit_indices", false, &li, &n2)) ||
      (s = xrt__vints(v, "strides", true, &sd, &n3)))
    return s;
  const xrt_shape *in = xrt__operand(v, 0), *out = xrt__result(v, 0);
  if (n1 != in->rank || n2 != in->rank || (sd && n3 != in->rank) ||
      out->rank != in->rank)
    return xrt__vfail(v, "start, limit and strides need one entry per "
                         "dimension");
  for (int64_t i = 0; i < n1; i++) {
    int64_t stride = sd ? sd[i] : 1;
    if (st[i] < 0 || st[i] > li[i] || li[i] > in->dims[i] || stride <= 0)
      return xrt__vfail(v, "dimension %" PRId64 ": slice %" PRId64 ":%" PRId64
                        ":%" PRId64 " is invalid for size %" PRId64, i, st[i],
                        li[i], stride, in->dims[i]);
    if (out->dims[i] != (li[i] - st[i] + stride - 1) / stride)
      return xrt__vfail(v, "result dimension %" PRId64 " has the wrong size",
                        i);
  }
  return in->dtype == out->dtype ? XRT_OK
                                 : xrt__vfail(v, "element types differ");
}

/* stablehlo.dot: an lhs of rank 1 or 2 contracted on its last dimension
 * with the first of an rhs of rank 1 or 2. */
XRT__PRIVATE xrt_status xrt__verify_dot(const xrt__vctx *v) {
  xrt_status s = xrt__vcounts(v, 2, 1);
  if (s) return s;
  const xrt_shape *l = xrt__operand(v, 0), *r = xrt__operand(v, 1);
  const xrt_shape *out = xrt__result(v, 0);
  if (l->rank < 1 || l->rank > 2 || r->rank < 1 || r->rank > 2)
    return xrt__vfail(v, "operands must be of rank 1 or 2");
  if (l->dims[l->rank - 1] != r->dims[0])
    return xrt__vfail(v, "lhs dimension %d (%" PRId64 ") and rhs dimension 0 "
                      "(%" PRId64 ") must match", (int)l->rank - 1,
                      l->dims[l->rank - 1], r->dims[0]);
  if (out->rank != l->rank + r->rank - 2)
    return xrt__vfail(v, "result rank %d, expected %d", (int)out->rank,
                      (int)(l->rank + r->rank - 2));
  int64_t want[XRT_MAX_RANK];
  for (int32_t i = 0; i < out->rank; i++)
    want[i] = i < l->rank - 1 ? l->dims[i] : r->dims[i - l->rank + 2];
  return xrt__vresult_dims(v, out, want);
}

XRT__PRIVATE xrt_status xrt__verify_get_dimension_size(const xrt__vctx *v) {
  xrt_status s = xrt__vcounts(v, 1, 1);
  if (s) return s;
  const xrt_ir_attr *d = xrt__vattr(v, "dimension", XRT_ATTR_INT);
  if (!d || d->i < 0 || d->i >= xrt__operand(v, 0)->rank)
    return xrt__vfail(v, "dimension attribute is missing or out of range");
  const xrt_shape *out = xrt__result(v, 0);
  if (out->rank != 0 || out->dtype != XRT_S32)
    return xrt__vfail(v, "result must be tensor<i32>");
  return XRT_OK;
}

XRT__PRIVATE xrt_status xrt__verify_concatenate(const xrt__vctx *v) {
  xrt_status s = xrt__vcounts(v, -1, 1);
  if (s) return s;
  if (v->op->num_operands < 1) return xrt__vfail(v, "needs an operand");
  const xrt_ir_attr *d = xrt__vattr(v, "dimension", XRT_ATTR_INT);
  const xrt_shape *out = xrt__result(v, 0);
  if (!d || d->i < 0 || d->i >= out->rank)
    return xrt__vfail(v, "dimension attribute is missing or out of range");
  int64_t total = 0;
  for (int i = 0; i < v->op->num_operands; i++) {
    const xrt_shape *in = xrt__operand(v, i);
    if (in->rank != out->rank || in->dtype != out->dtype)
      return xrt__vfail(v, "operand %d differs in rank or element type", i);
    for (int32_t k = 0; k < in->rank; k++)
      if (k != d->i && in->dims[k] != out->dims[k])
        return xrt__vfail(v, "operand %d differs in dimension %d", i, (int)k);
    total += in->dims[d->i];
  }
  if (total != out->dims[d->i])
    return xrt__vfail(v, "result dimension %" PRId64 " must be %" PRId64, d->i,
                      total);
  return XRT_OK;
}

XRT__PRIVATE xrt_status xrt__verify_pad(const xrt__vctx *v) {
  xrt_status s = xrt__vcounts(v, 2, 1);
  const int64_t *lo, *hi, *in_;
  int64_t n1, n2, n3;
  if (s || (s = xrt__vints(v, "edge_padding_low", false, &lo, &n1)) ||
      (s = xrt__vints(v, "edge_padding_high", false, &hi, &n2)) ||
      (s = xrt__vints(v, "interior_padding", true, &in_, &n3)))
    return s;
  const xrt_shape *x = xrt__operand(v, 0), *pv = xrt__operand(v, 1),
                  *out = xrt__result(v, 0);
  if (pv->rank != 0 || pv->dtype != x->dtype || out->dtype != x->dtype)
    return xrt__vfail(v, "padding value must be a scalar of the operand's "
                         "element type");
  if (n1 != x->rank || n2 != x->rank || (in_ && n3 != x->rank) ||
      out->rank != x->rank)
    return xrt__vfail(v, "padding needs one entry per dimension");
  for (int64_t i = 0; i < n1; i++) {
    int64_t interior = in_ ? in_[i] : 0;
    if (interior < 0) return xrt__vfail(v, "interior padding is negative");
    int64_t size = x->dims[i] ? lo[i] + hi[i] + x->dims[i] +
                                    (x->dims[i] - 1) * interior
                              : lo[i] + hi[i];
    if (size < 0 || size != out->dims[i])
      return xrt__vfail(v, "result dimension %" PRId64 " must be %" PRId64, i,
                        size);
  }
  return XRT_OK;
}

XRT__PRIVATE xrt_status xrt__verify_reverse(const xrt__vctx *v) {
  xrt_status s = xrt__vcounts(v, 1, 1);
  const int64_t *dims;
  int64_t n;
  if (s || (s = xrt__vints(v, "dimensions", false, &dims, &n)) ||
      (s = xrt__vdims(v, "dimensions", dims, n, xrt__operand(v, 0)->rank)))
    return s;
  return xrt__vsame(v, v->op->operands[0], v->op->results[0],
                    "result type differs from operand type");
}

/* The region's block arguments and terminator operands have these types. */
XRT__PRIVATE xrt_status xrt__vregion_sig(const xrt__vctx *v, const xrt_ir_region *r,
                                   const char *what, int nargs,
                                   const xrt_ir_type *const *args, int nrets,
                                   const xrt_ir_type *const *rets) {
  if (r->num_args != nargs)
    return xrt__vfail(v, "%s region takes %d argument(s), expected %d", what,
                      (int)r->num_args, nargs);
  for (int i = 0; i < nargs; i++)
    if (args[i] && !xrt__type_equal(&v->func->value_types[r->args[i]], args[i]))
      return xrt__vfail(v, "%s region argument %d has the wrong type", what, i);
  const xrt_ir_op *term = r->num_ops ? &r->ops[r->num_ops - 1] : NULL;
  if (!term || term->num_operands != nrets)
    return xrt__vfail(v, "%s region must return %d value(s)", what, nrets);
  for (int i = 0; i < nrets; i++)
    if (rets[i] &&
        !xrt__type_equal(&v->func->value_types[term->operands[i]], rets[i]))
      return xrt__vfail(v, "%s region returns a value of the wrong type at "
                        "position %d", what, i);
  return XRT_OK;
}

XRT__PRIVATE xrt_status xrt__verify_reduce(const xrt__vctx *v) {
  const xrt_ir_op *op = v->op;
  int n = op->num_results;
  xrt_status s = xrt__vcounts(v, 2 * n, n);
  const int64_t *dims;
  int64_t nd;
  if (s || (s = xrt__vints(v, "dimensions", false, &dims, &nd))) return s;
  if (n < 1 || op->num_regions != 1)
    return xrt__vfail(v, "needs at least one input and one body region");
  const xrt_shape *in0 = xrt__operand(v, 0);
  if ((s = xrt__vdims(v, "dimensions", dims, nd, in0->rank))) return s;
  const xrt_ir_type *sig[64];
  if (2 * n > 64) return xrt__vfail(v, "too many operands");
  for (int i = 0; i < n; i++) {
    const xrt_shape *in = xrt__operand(v, i), *init = xrt__operand(v, n + i),
                    *out = xrt__result(v, i);
    if (!xrt__same_dims(in, in0))
      return xrt__vfail(v, "inputs differ in shape");
    if (init->rank != 0 || init->dtype != out->dtype)
      return xrt__vfail(v, "init value %d must be a scalar of result %d's "
                        "element type", i, i);
    int32_t k = 0;
    for (int32_t d = 0; d < in->rank; d++) {
      if (xrt__contains(dims, nd, d)) continue;
      if (k >= out->rank || out->dims[k] != in->dims[d])
        return xrt__vfail(v, "result %d has the wrong shape", i);
      k++;
    }
    if (k != out->rank) return xrt__vfail(v, "result %d has the wrong rank", i);
    sig[i] = sig[n + i] = xrt__vtype(v, op->operands[n + i]);
  }
  return xrt__vregion_sig(v, &op->regions[0], "body", 2 * n, sig, n, sig);
}

static xrt_status xrt__dot_dims(const xrt__vctx *v, const char *name,
                                const int64_t **ints, int64_t *n) {
  return xrt__vfield(v, xrt_ir_op_attr(v->op, "dot_dimension_numbers"), name,
                     ints, n);
}

XRT__PRIVATE xrt_status xrt__verify_dot_general(const xrt__vctx *v) {
  xrt_status s = xrt__vcounts(v, 2, 1);
  const int64_t *lb, *rb, *lc, *rc;
  int64_t nlb, nrb, nlc, nrc;
  if (s || (s = xrt__dot_dims(v, "lhs_batching_dimensions", &lb, &nlb)) ||
      (s = xrt__dot_dims(v, "rhs_batching_dimensions", &rb, &nrb)) ||
      (s = xrt__dot_dims(v, "lhs_contracting_dimensions", &lc, &nlc)) ||
      (s = xrt__dot_dims(v, "rhs_contracting_dimensions", &rc, &nrc)))
    return s;
  const xrt_shape *l = xrt__operand(v, 0), *r = xrt__operand(v, 1),
                  *out = xrt__result(v, 0);
  if (nlb != nrb || nlc != nrc)
    return xrt__vfail(v, "lhs and rhs need as many batching and contracting "
                         "dimensions");
  int64_t ld[2 * XRT_MAX_RANK], rd[2 * XRT_MAX_RANK];
  if (nlb + nlc > XRT_MAX_RANK || nrb + nrc > XRT_MAX_RANK)
    return xrt__vfail(v, "too many dimensions");
  for (int64_t i = 0; i < nlb; i++) ld[i] = lb[i], rd[i] = rb[i];
  for (int64_t i = 0; i < nlc; i++) ld[nlb + i] = lc[i], rd[nrb + i] = rc[i];
  if ((s = xrt__vdims(v, "lhs dimensions", ld, nlb + nlc, l->rank)) ||
      (s = xrt__vdims(v, "rhs dimensions", rd, nrb + nrc, r->rank)))
    return s;
  for (int64_t i = 0; i < nlb + nlc; i++)
    if (l->dims[ld[i]] != r->dims[rd[i]])
      return xrt__vfail(v, "%s dimension sizes differ: lhs dimension %" PRId64
                        " is %" PRId64 ", rhs dimension %" PRId64 " is %"
                        PRId64, i < nlb ? "batching" : "contracting", ld[i],
                        l->dims[ld[i]], rd[i], r->dims[rd[i]]);
  /* Expected result: batch dims, lhs free dims, rhs free dims. */
  int64_t want[XRT_MAX_RANK * 2];
  int k = 0;
  for (int64_t i = 0; i < nlb; i++) want[k++] = l->dims[lb[i]];
  for (int side = 0; side < 2; side++) {
    const xrt_shape *x = side ? r : l;
    const int64_t *used = side ? rd : ld;
    int64_t nused = side ? nrb + nrc : nlb + nlc;
    for (int32_t d = 0; d < x->rank; d++)
      if (!xrt__contains(used, nused, d)) want[k++] = x->dims[d];
  }
  if (!xrt__dims_are(out, want, k))
    return xrt__vfail(v, "result shape does not follow from the operands and "
                         "dimension numbers");
  if (l->dtype != r->dtype && !(xrt__vtype(v, v->op->operands[0])->quant ||
                                xrt__vtype(v, v->op->operands[1])->quant))
    return xrt__vfail(v, "lhs and rhs element types differ (%s vs %s)",
                      xrt_dtype_name(l->dtype), xrt_dtype_name(r->dtype));
  return XRT_OK;
}

XRT__PRIVATE xrt_status xrt__verify_while(const xrt__vctx *v) {
  const xrt_ir_op *op = v->op;
  int n = op->num_operands;
  if (op->num_results != n || op->num_regions != 2)
    return xrt__vfail(v, "needs as many results as operands and two regions");
  /* The loop values' types: on the stack for most loops; a loop that
   * carries a model's weights (thousands) takes a heap array. */
  const xrt_ir_type *stack[64], **sig = stack;
  xrt_allocator al = xrt_allocator_system();
  if (n > (int)XRT__ARRAY_SIZE(stack) &&
      !(sig = (const xrt_ir_type **)xrt__calloc(&al, (size_t)n, sizeof *sig)))
    return xrt__nomem("a while loop's value types");
  xrt_status s = XRT_OK;
  for (int i = 0; i < n && !s; i++) {
    s = xrt__vsame(v, op->operands[i], op->results[i],
                   "loop value type differs from result type");
    sig[i] = xrt__vtype(v, op->operands[i]);
  }
  if (!s)
    s = xrt__vregion_sig(v, &op->regions[0], "cond", n, sig, 1,
                         (const xrt_ir_type *[]){NULL});
  if (!s) {
    const xrt_ir_region *c = &op->regions[0];
    const xrt_ir_type *ct =
        &v->func->value_types[c->ops[c->num_ops - 1].operands[0]];
    if (ct->kind != XRT_TYPE_TENSOR || ct->shape.dtype != XRT_PRED ||
        ct->shape.rank != 0)
      s = xrt__vfail(v, "cond region must return tensor<i1>");
  }
  if (!s) s = xrt__vregion_sig(v, &op->regions[1], "body", n, sig, n, sig);
  if (sig != stack) xrt__free(&al, sig);
  return s;
}

/* The op's operands and results have the types of f's arguments and
 * results: f is func.call's callee or composite's decomposition, which the
 * messages name as such. */
XRT__PRIVATE xrt_status xrt__vcallee(const xrt__vctx *v, const xrt_ir_func *f,
                                     bool decomposition) {
  const xrt_ir_op *op = v->op;
  if (op->num_operands != f->body.num_args || op->num_results != f->num_results)
    return xrt__vfail(v, "%s@%s takes %d argument(s) and returns %d",
                      decomposition ? "decomposition " : "", f->name,
                      (int)f->body.num_args, (int)f->num_results);
  for (int i = 0; i < op->num_operands; i++)
    if (!xrt__type_equal(xrt__vtype(v, op->operands[i]),
                         &f->value_types[f->body.args[i]]))
      return xrt__vfail(v, "%s %d has the wrong type for @%s",
                        decomposition ? "operand" : "argument", i, f->name);
  for (int i = 0; i < op->num_results; i++)
    if (!xrt__type_equal(xrt__vtype(v, op->results[i]), &f->result_types[i]))
      return xrt__vfail(v, "result %d has the wrong type for @%s", i, f->name);
  return XRT_OK;
}

XRT__PRIVATE xrt_status xrt__verify_call(const xrt__vctx *v) {
  const xrt_ir_op *op = v->op;
  if (op->callee < 0 || op->callee >= v->module->num_funcs)
    return xrt__vfail(v, "callee is not a function of this module");
  return xrt__vcallee(v, &v->module->funcs[op->callee], false);
}

XRT__PRIVATE xrt_status xrt__verify_constant(const xrt__vctx *v) {
  xrt_status s = xrt__vcounts(v, 0, 1);
  if (s) return s;
  const xrt_ir_attr *a = xrt__vattr(v, "value", XRT_ATTR_DENSE);
  if (!a || !a->lit) return xrt__vfail(v, "missing dense attribute 'value'");
  if (!xrt__shape_equal(&a->lit->type.shape, xrt__result(v, 0)))
    return xrt__vfail(v, "value type differs from result type");
  return XRT_OK;
}

XRT__PRIVATE xrt_status xrt__verify_custom_call(const xrt__vctx *v) {
  const xrt_ir_attr *t = xrt__vattr(v, "call_target_name", XRT_ATTR_STRING);
  if (!t) return xrt__vfail(v, "missing string attribute 'call_target_name'");
  return xrt__check_attrs_verify(v->op, t->s, (size_t)t->n); /* hostfn.c */
}
