/*
 * src/core/refine_fold.c - shape refinement: constant folding of the
 * small integer tensors that compute shapes (what JAX emits around its
 * dimension variables: converts, reshapes, concatenates and arithmetic on
 * get_dimension_size and on dimension arguments).
 * Part of the core of xrt; MIT licensed, see LICENSE.
 *
 * Values are int64: signed types sign-extended, unsigned ones
 * zero-extended, pred 0/1.  What StableHLO leaves undefined or
 * implementation-defined (division by zero, INT_MIN / -1) is not folded:
 * the op then stays and computes at run time, as StablehloRefineShapes'
 * folders leave it.
 */
#include "refine.h"

XRT__PRIVATE bool xrt__rtracked(xrt_dtype dt) {
  return dt == XRT_PRED ||
         (xrt__dtype_is_int(dt) && xrt_dtype_bits(dt) >= 8);
}

XRT__PRIVATE int64_t xrt__rnumel(const xrt_shape *s) {
  int64_t n = 1;
  for (int32_t d = 0; d < s->rank; d++) {
    if (s->dims[d] < 0) return -1;
    if (s->dims[d] && n > INT64_MAX / s->dims[d]) return -1;
    n *= s->dims[d];
  }
  return n;
}

static bool xrt__runsigned(xrt_dtype dt) {
  return dt == XRT_PRED || xrt_dtype_is_unsigned_int(dt);
}

/* v as a value of dt (wrapped to its width). */
static int64_t xrt__rwrap(xrt_dtype dt, int64_t v) {
  if (dt == XRT_PRED) return v != 0;
  int bits = xrt_dtype_bits(dt);
  if (bits >= 64) return v;
  uint64_t mask = ((uint64_t)1 << bits) - 1, u = (uint64_t)v & mask;
  if (xrt_dtype_is_signed_int(dt) && (u >> (bits - 1)))
    u |= ~mask;
  return (int64_t)u;
}

XRT__PRIVATE bool xrt__rread_literal(xrt__rfn *f, const xrt_ir_literal *lit,
                                     xrt__rval *out) {
  xrt_dtype dt = lit->type.shape.dtype;
  int64_t n = xrt__rnumel(&lit->type.shape);
  size_t es = xrt_dtype_size(dt);
  if (!xrt__rtracked(dt) || lit->type.quant || n < 0 || n > XRT__RFOLD_MAX ||
      !es || es > 8 || lit->bytes < (lit->splat ? es : es * (size_t)n))
    return false;
  int64_t *v = (int64_t *)xrt__ralloc(f, sizeof *v * (size_t)(n + 1));
  if (!v) return false;
  const unsigned char *b = (const unsigned char *)lit->data;
  for (int64_t i = 0; i < n; i++) {
    const unsigned char *e = b + (lit->splat ? 0 : (size_t)i * es);
    uint64_t u = 0;
    for (size_t k = 0; k < es; k++) u |= (uint64_t)e[k] << (8 * k);
    v[i] = xrt__rwrap(dt, (int64_t)u);
  }
  out->n = n;
  out->v = v;
  return true;
}

XRT__PRIVATE xrt_status xrt__rconstant(xrt__rfn *f, int32_t id,
                                       xrt_ir_op *out) {
  const xrt__rval *k = &f->known[id];
  const xrt_ir_type *t = &f->types[id];
  size_t es = xrt_dtype_size(t->shape.dtype);
  xrt_ir_literal *lit = (xrt_ir_literal *)xrt__ralloc(f, sizeof *lit);
  xrt_ir_attr *a = (xrt_ir_attr *)xrt__ralloc(f, sizeof *a);
  unsigned char *data = (unsigned char *)xrt__ralloc(f, es * (size_t)k->n);
  if (!lit || !a || !data) return xrt__nomem("a folded constant");
  for (int64_t i = 0; i < k->n; i++)
    for (size_t b = 0; b < es; b++)
      data[(size_t)i * es + b] = (unsigned char)((uint64_t)k->v[i] >> (8 * b));
  lit->type = *t;
  lit->data = data;
  lit->bytes = es * (size_t)k->n;
  a->name = "value";
  a->kind = XRT_ATTR_DENSE;
  a->lit = lit;
  const int32_t *results = out->results;
  memset(out, 0, sizeof *out);
  out->code = XRT_OP_CONSTANT;
  out->name = xrt_opcode_name(XRT_OP_CONSTANT);
  out->num_results = 1;
  out->results = results;
  out->num_attrs = 1;
  out->attrs = a;
  out->callee = -1;
  return XRT_OK;
}

/* ---- element functions ---- */

typedef bool (*xrt__rbin_fn)(int64_t a, int64_t b, bool uns, int64_t *out);

static bool xrt__rb_add(int64_t a, int64_t b, bool u, int64_t *o) {
  (void)u;
  *o = (int64_t)((uint64_t)a + (uint64_t)b);
  return true;
}
static bool xrt__rb_sub(int64_t a, int64_t b, bool u, int64_t *o) {
  (void)u;
  *o = (int64_t)((uint64_t)a - (uint64_t)b);
  return true;
}
static bool xrt__rb_mul(int64_t a, int64_t b, bool u, int64_t *o) {
  (void)u;
  *o = (int64_t)((uint64_t)a * (uint64_t)b);
  return true;
}
static bool xrt__rb_div(int64_t a, int64_t b, bool u, int64_t *o) {
  if (b == 0 || (!u && a == INT64_MIN && b == -1)) return false;
  *o = u ? (int64_t)((uint64_t)a / (uint64_t)b) : a / b;
  return true;
}
static bool xrt__rb_rem(int64_t a, int64_t b, bool u, int64_t *o) {
  if (b == 0 || (!u && a == INT64_MIN && b == -1)) return false;
  *o = u ? (int64_t)((uint64_t)a % (uint64_t)b) : a % b;
  return true;
}
static bool xrt__rless(int64_t a, int64_t b, bool u) {
  return u ? (uint64_t)a < (uint64_t)b : a < b;
}
static bool xrt__rb_max(int64_t a, int64_t b, bool u, int64_t *o) {
  *o = xrt__rless(a, b, u) ? b : a;
  return true;
}
static bool xrt__rb_min(int64_t a, int64_t b, bool u, int64_t *o) {
  *o = xrt__rless(a, b, u) ? a : b;
  return true;
}
static bool xrt__rb_and(int64_t a, int64_t b, bool u, int64_t *o) {
  (void)u;
  *o = a & b;
  return true;
}
static bool xrt__rb_or(int64_t a, int64_t b, bool u, int64_t *o) {
  (void)u;
  *o = a | b;
  return true;
}
static bool xrt__rb_xor(int64_t a, int64_t b, bool u, int64_t *o) {
  (void)u;
  *o = a ^ b;
  return true;
}

static const struct {
  xrt_opcode code;
  xrt__rbin_fn fn;
  bool logic; /* also on pred */
} xrt__rbinary[] = {
    {XRT_OP_ADD, xrt__rb_add, false},      {XRT_OP_SUBTRACT, xrt__rb_sub, false},
    {XRT_OP_MULTIPLY, xrt__rb_mul, false}, {XRT_OP_DIVIDE, xrt__rb_div, false},
    {XRT_OP_REMAINDER, xrt__rb_rem, false}, {XRT_OP_MAXIMUM, xrt__rb_max, true},
    {XRT_OP_MINIMUM, xrt__rb_min, true},   {XRT_OP_AND, xrt__rb_and, true},
    {XRT_OP_OR, xrt__rb_or, true},         {XRT_OP_XOR, xrt__rb_xor, true},
};

/* ---- folds ---- */

/* Known operand k of op with n elements (or a scalar, when scalar_ok). */
static const xrt__rval *xrt__rarg(const xrt__rfn *f, const xrt_ir_op *op,
                                  int k, int64_t n, bool scalar_ok) {
  if (k >= op->num_operands) return NULL;
  const xrt__rval *v = xrt__rknown(f, op->operands[k]);
  if (!v || (v->n != n && !(scalar_ok && v->n == 1))) return NULL;
  return v;
}

static int64_t xrt__rat(const xrt__rval *v, int64_t i) {
  return v->n == 1 ? v->v[0] : v->v[i];
}

static bool xrt__rfold_binary(const xrt__rfn *f, const xrt_ir_op *op,
                              xrt_dtype dt, int64_t n, int64_t *out) {
  for (size_t t = 0; t < XRT__ARRAY_SIZE(xrt__rbinary); t++) {
    if (xrt__rbinary[t].code != op->code) continue;
    if (dt == XRT_PRED && !xrt__rbinary[t].logic) return false;
    const xrt__rval *a = xrt__rarg(f, op, 0, n, false),
                    *b = xrt__rarg(f, op, 1, n, false);
    if (!a || !b) return false;
    bool u = xrt__runsigned(dt);
    for (int64_t i = 0; i < n; i++) {
      if (!xrt__rbinary[t].fn(a->v[i], b->v[i], u, &out[i])) return false;
      out[i] = xrt__rwrap(dt, out[i]);
    }
    return true;
  }
  return false;
}

static bool xrt__rfold_unary(const xrt__rfn *f, const xrt_ir_op *op,
                             xrt_dtype dt, int64_t n, int64_t *out) {
  const xrt__rval *a = xrt__rarg(f, op, 0, n, false);
  if (!a) return false;
  const xrt_ir_type *in = &f->types[op->operands[0]];
  for (int64_t i = 0; i < n; i++) {
    int64_t x = a->v[i];
    switch (op->code) {
    case XRT_OP_NEGATE: if (dt == XRT_PRED) return false;
      x = (int64_t)(0 - (uint64_t)x); break;
    case XRT_OP_ABS: if (xrt__runsigned(dt)) return false;
      x = x < 0 ? (int64_t)(0 - (uint64_t)x) : x; break;
    case XRT_OP_SIGN: if (xrt__runsigned(dt)) return false;
      x = (x > 0) - (x < 0); break;
    case XRT_OP_NOT: x = dt == XRT_PRED ? !x : ~x; break;
    case XRT_OP_CONVERT:
      if (!xrt__rtracked(in->shape.dtype) || in->quant) return false;
      if (dt == XRT_PRED) x = x != 0;
      break;
    case XRT_OP_RESHAPE: case XRT_OP_DYNAMIC_RESHAPE: break;
    default: return false;
    }
    out[i] = xrt__rwrap(dt, x);
  }
  return true;
}

static bool xrt__rfold_compare(const xrt__rfn *f, const xrt_ir_op *op,
                               int64_t n, int64_t *out) {
  const xrt__rval *a = xrt__rarg(f, op, 0, n, false),
                  *b = xrt__rarg(f, op, 1, n, false);
  const xrt_ir_attr *d = xrt_ir_op_attr(op, "comparison_direction");
  if (!a || !b || !d || !d->s) return false;
  bool u = xrt__runsigned(f->types[op->operands[0]].shape.dtype);
  static const char *const dirs[] = {"EQ", "NE", "LT", "LE", "GT", "GE"};
  int dir = -1;
  for (int i = 0; i < 6; i++)
    if (strcmp(d->s, dirs[i]) == 0) dir = i;
  if (dir < 0) return false;
  for (int64_t i = 0; i < n; i++) {
    int64_t x = a->v[i], y = b->v[i];
    bool lt = xrt__rless(x, y, u), gt = xrt__rless(y, x, u);
    bool r[6] = {x == y, x != y, lt, !gt, gt, !lt};
    out[i] = r[dir];
  }
  return true;
}

static bool xrt__rfold_select(const xrt__rfn *f, const xrt_ir_op *op,
                              int64_t n, int64_t *out) {
  bool clamp = op->code == XRT_OP_CLAMP;
  const xrt__rval *a = xrt__rarg(f, op, 0, n, true),
                  *b = xrt__rarg(f, op, 1, n, !clamp),
                  *c = xrt__rarg(f, op, 2, n, true);
  if (!a || !b || !c) return false;
  bool u = xrt__runsigned(f->types[op->results[0]].shape.dtype);
  for (int64_t i = 0; i < n; i++) {
    int64_t x = xrt__rat(a, i), y = xrt__rat(b, i), z = xrt__rat(c, i);
    if (clamp) out[i] = xrt__rless(y, x, u) ? x : xrt__rless(z, y, u) ? z : y;
    else out[i] = x ? y : z;
  }
  return true;
}

/* The operand index of result element i for broadcast_in_dim. */
static bool xrt__rfold_broadcast(const xrt__rfn *f, const xrt_ir_op *op,
                                 const xrt_shape *out_s, int64_t *out) {
  if (op->num_operands < 1) return false;
  const xrt_shape *in = &f->types[op->operands[0]].shape;
  const xrt__rval *a = xrt__rarg(f, op, 0, xrt__rnumel(in), false);
  const xrt_ir_attr *bd = xrt_ir_op_attr(op, "broadcast_dimensions");
  if (!a || !bd || bd->kind != XRT_ATTR_INTS || bd->n != in->rank)
    return false;
  for (int32_t d = 0; d < in->rank; d++)
    if (bd->ints[d] < 0 || bd->ints[d] >= out_s->rank ||
        (in->dims[d] != 1 && in->dims[d] != out_s->dims[bd->ints[d]]))
      return false;
  int64_t n = xrt__rnumel(out_s), idx[XRT_MAX_RANK];
  for (int64_t i = 0; i < n; i++) {
    int64_t rest = i;
    for (int32_t d = out_s->rank - 1; d >= 0; d--) {
      idx[d] = out_s->dims[d] ? rest % out_s->dims[d] : 0;
      rest = out_s->dims[d] ? rest / out_s->dims[d] : 0;
    }
    int64_t at = 0;
    for (int32_t d = 0; d < in->rank; d++) {
      int64_t od = bd->ints[d];
      if (od < 0 || od >= out_s->rank) return false;
      at = at * in->dims[d] + (in->dims[d] == 1 ? 0 : idx[od]);
    }
    out[i] = a->v[at];
  }
  return true;
}

static bool xrt__rfold_concatenate(const xrt__rfn *f, const xrt_ir_op *op,
                                   const xrt_shape *out_s, int64_t *out) {
  const xrt_ir_attr *dim = xrt_ir_op_attr(op, "dimension");
  if (!dim || dim->kind != XRT_ATTR_INT || dim->i < 0 ||
      dim->i >= out_s->rank)
    return false;
  int64_t outer = 1, inner = 1, pos = 0;
  for (int32_t d = 0; d < dim->i; d++) outer *= out_s->dims[d];
  for (int32_t d = (int32_t)dim->i + 1; d < out_s->rank; d++)
    inner *= out_s->dims[d];
  int64_t row = out_s->dims[dim->i] * inner;
  for (int32_t k = 0; k < op->num_operands; k++) {
    const xrt_shape *s = &f->types[op->operands[k]].shape;
    const xrt__rval *a = xrt__rarg(f, op, k, xrt__rnumel(s), false);
    if (!a || s->rank != out_s->rank) return false;
    for (int32_t d = 0; d < s->rank; d++)
      if (d != dim->i && s->dims[d] != out_s->dims[d]) return false;
    int64_t w = s->dims[dim->i] * inner;
    if (pos + w > row) return false;
    for (int64_t o = 0; o < outer; o++)
      for (int64_t j = 0; j < w; j++) out[o * row + pos + j] = a->v[o * w + j];
    pos += w;
  }
  return pos == row;
}

static bool xrt__rfold_slice(const xrt__rfn *f, const xrt_ir_op *op,
                             const xrt_shape *out_s, int64_t *out) {
  if (op->num_operands < 1) return false;
  const xrt_shape *in = &f->types[op->operands[0]].shape;
  const xrt__rval *a = xrt__rarg(f, op, 0, xrt__rnumel(in), false);
  const xrt_ir_attr *st = xrt_ir_op_attr(op, "start_indices"),
                    *sd = xrt_ir_op_attr(op, "strides");
  if (!a || !st || st->kind != XRT_ATTR_INTS || st->n != in->rank ||
      out_s->rank != in->rank || (sd && (sd->kind != XRT_ATTR_INTS ||
                                         sd->n != in->rank)))
    return false;
  int64_t n = xrt__rnumel(out_s), idx[XRT_MAX_RANK];
  for (int64_t i = 0; i < n; i++) {
    int64_t rest = i, at = 0;
    for (int32_t d = out_s->rank - 1; d >= 0; d--) {
      idx[d] = rest % out_s->dims[d];
      rest /= out_s->dims[d];
    }
    for (int32_t d = 0; d < in->rank; d++) {
      int64_t x = st->ints[d] + idx[d] * (sd ? sd->ints[d] : 1);
      if (x < 0 || x >= in->dims[d]) return false;
      at = at * in->dims[d] + x;
    }
    out[i] = a->v[at];
  }
  return true;
}

static bool xrt__rfold_iota(const xrt_ir_op *op, const xrt_shape *out_s,
                            int64_t *out) {
  const xrt_ir_attr *d = xrt_ir_op_attr(op, "iota_dimension");
  if (!d || d->kind != XRT_ATTR_INT || d->i < 0 || d->i >= out_s->rank)
    return false;
  int64_t inner = 1, n = xrt__rnumel(out_s);
  for (int32_t k = (int32_t)d->i + 1; k < out_s->rank; k++)
    inner *= out_s->dims[k];
  for (int64_t i = 0; i < n; i++)
    out[i] = xrt__rwrap(out_s->dtype, (i / inner) % out_s->dims[d->i]);
  return true;
}

static bool xrt__rfold_into(xrt__rfn *f, const xrt_ir_op *op,
                            const xrt_shape *s, int64_t n, int64_t *v) {
  switch (op->code) {
  case XRT_OP_GET_DIMENSION_SIZE: {
    const xrt_ir_attr *d = xrt_ir_op_attr(op, "dimension");
    if (op->num_operands < 1) return false;
    const xrt_shape *in = &f->types[op->operands[0]].shape;
    if (!d || d->kind != XRT_ATTR_INT || d->i < 0 || d->i >= in->rank ||
        in->dims[d->i] < 0 || n != 1)
      return false;
    v[0] = xrt__rwrap(s->dtype, in->dims[d->i]);
    return true;
  }
  case XRT_OP_COMPARE: return xrt__rfold_compare(f, op, n, v);
  case XRT_OP_SELECT: case XRT_OP_CLAMP:
    return xrt__rfold_select(f, op, n, v);
  case XRT_OP_BROADCAST_IN_DIM: return xrt__rfold_broadcast(f, op, s, v);
  case XRT_OP_CONCATENATE: return xrt__rfold_concatenate(f, op, s, v);
  case XRT_OP_SLICE: return xrt__rfold_slice(f, op, s, v);
  case XRT_OP_IOTA: return xrt__rfold_iota(op, s, v);
  default:
    return xrt__rfold_binary(f, op, s->dtype, n, v) ||
           xrt__rfold_unary(f, op, s->dtype, n, v);
  }
}

XRT__PRIVATE bool xrt__rfold(xrt__rfn *f, const xrt_ir_op *op) {
  if (op->num_results != 1) return false;
  int32_t id = op->results[0];
  const xrt_ir_type *t = &f->types[id];
  if (t->kind != XRT_TYPE_TENSOR || t->quant || !xrt__rtracked(t->shape.dtype))
    return false;
  for (int32_t d = 0; d < t->shape.rank; d++)
    if (t->shape.dims[d] < 0) return false;
  int64_t n = xrt__rnumel(&t->shape);
  if (n < 0 || n > XRT__RFOLD_MAX) return false;
  if (op->code == XRT_OP_CONSTANT) {
    const xrt_ir_attr *a = xrt_ir_op_attr(op, "value");
    return a && a->lit && xrt__rread_literal(f, a->lit, &f->known[id]);
  }
  for (int32_t k = 0; k < op->num_operands; k++)
    if (!xrt__rknown(f, op->operands[k]) &&
        op->code != XRT_OP_GET_DIMENSION_SIZE)
      return false;
  int64_t *v = (int64_t *)xrt__ralloc(f, sizeof *v * (size_t)(n + 1));
  if (!v || !xrt__rfold_into(f, op, &t->shape, n, v)) return false;
  f->known[id].n = n;
  f->known[id].v = v;
  return true;
}
