/*
 * src/core/chlo.c - CHLO ops that are StableHLO in disguise, rewritten into
 * StableHLO before verification so that every plugin runs them.
 * Part of the core of xrt; MIT licensed, see LICENSE.
 */
#include "internal.h"

/* ======================================================================
 * 5a. CHLO lowering
 *
 * The CHLO dialect (stablehlo/dialect/ChloOps.td) adds ops to StableHLO
 * for client libraries.  Those with a StableHLO spelling become it here,
 * after parsing and before the verifier sees the module:
 *  - chlo.constant -> constant; chlo.tan -> tan;
 *  - constant_like -> a splat constant of the result's type;
 *  - conj -> complex(real(x), negate(imag(x))), or convert (an identity)
 *    for real types;
 *  - is_inf / is_pos_inf / is_neg_inf -> compare(abs(x) or x, +-inf), or
 *    a constant false for types without infinities;
 *  - broadcast_* -> broadcast_in_dim of each operand whose shape is not
 *    the result's, then the op (CHLO's numpy-style implicit broadcasting:
 *    trailing dimensions line up, or broadcast_dimensions maps the lower
 *    ranked operand's dimensions);
 *  - top_k -> iota, a stable sort over the last dimension comparing values
 *    GT with TOTALORDER (the chlo-legalize-to-stablehlo lowering: ties keep
 *    the lower index first, NaN sorts above +inf), and two slices.
 * Ops are checked here first, so that a malformed CHLO op is reported with
 * its own name; the StableHLO ops it becomes carry its location.  The
 * elementwise math without a StableHLO spelling (acos, erf, lgamma, ...)
 * stays: plugins run it (the verifier checks it as elementwise).
 * ==================================================================== */

typedef struct xrt__cops { /* a region's ops being rebuilt */
  xrt_ir_op *v;
  int32_t n, cap;
} xrt__cops;

typedef struct xrt__cctx {
  xrt__arena *arena;
  xrt_ir_func *f;
  xrt_ir_type *types;      /* f's value types, grown as values are added */
  int32_t nvals, cap;
  const xrt_ir_op *op;     /* the CHLO op being lowered */
  xrt__cops *out;
} xrt__cctx;

#if defined(__GNUC__)
XRT_PRINTF_FORMAT(2, 3)
#endif
static xrt_status xrt__cfail(const xrt__cctx *c, const char *fmt, ...) {
  char msg[512];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(msg, sizeof msg, fmt, ap);
  va_end(ap);
  const xrt_ir_loc *l = &c->op->loc;
  return xrt__fail(XRT_INVALID_ARGUMENT, "%s:%d:%d: %s: %s",
                   l->file ? l->file : "<input>", (int)l->line, (int)l->col,
                   xrt_opcode_name(c->op->code), msg);
}

static void *xrt__chlo_alloc(xrt__cctx *c, size_t n) {
  return xrt__arena_alloc(c->arena, n ? n : 1);
}

/* A copy of value id's type (pointers into c->types move as it grows). */
static xrt_ir_type xrt__ctype(const xrt__cctx *c, int32_t id) {
  return c->types[id];
}

/* A new value of type t; -1 when out of memory. */
static int32_t xrt__cvalue(xrt__cctx *c, const xrt_ir_type *t) {
  if (c->nvals == c->cap) {
    int32_t cap = c->cap < 16 ? 32 : c->cap * 2;
    xrt_ir_type *nt = (xrt_ir_type *)xrt__chlo_alloc(c, sizeof *nt * (size_t)cap);
    if (!nt) return -1;
    if (c->nvals) memcpy(nt, c->types, sizeof *nt * (size_t)c->nvals);
    c->types = nt, c->cap = cap;
  }
  c->types[c->nvals] = *t;
  return c->nvals++;
}

static xrt_ir_type xrt__tensor_type(xrt_dtype dt, const int64_t *dims,
                                    int32_t rank) {
  xrt_ir_type t;
  memset(&t, 0, sizeof t);
  t.kind = XRT_TYPE_TENSOR;
  t.shape.dtype = dt;
  t.shape.rank = rank;
  for (int32_t i = 0; i < rank; i++) t.shape.dims[i] = dims[i];
  return t;
}

/* Appends an op of code at the CHLO op's location; arrays are copied. */
static xrt_ir_op *xrt__cemit(xrt__cctx *c, xrt_opcode code,
                             const int32_t *ins, int32_t nin,
                             const int32_t *outs, int32_t nout,
                             const xrt_ir_attr *attrs, int32_t nattrs) {
  xrt__cops *o = c->out;
  if (o->n == o->cap) return NULL; /* sized by the caller: not reached */
  int32_t *ids = (int32_t *)xrt__chlo_alloc(c, sizeof *ids * (size_t)(nin + nout));
  xrt_ir_attr *as = (xrt_ir_attr *)xrt__chlo_alloc(c, sizeof *as * (size_t)nattrs);
  if (!ids || !as) return NULL;
  if (nin) memcpy(ids, ins, sizeof *ids * (size_t)nin);
  if (nout) memcpy(ids + nin, outs, sizeof *ids * (size_t)nout);
  if (nattrs) memcpy(as, attrs, sizeof *as * (size_t)nattrs);
  xrt_ir_op *op = &o->v[o->n++];
  memset(op, 0, sizeof *op);
  op->code = code;
  op->name = xrt_opcode_name(code);
  op->operands = ids, op->num_operands = nin;
  op->results = ids + nin, op->num_results = nout;
  op->attrs = as, op->num_attrs = nattrs;
  op->loc = c->op->loc;
  op->callee = -1;
  return op;
}

static xrt_ir_attr xrt__cattr(const char *name, int kind) {
  xrt_ir_attr a;
  memset(&a, 0, sizeof a);
  a.name = name;
  a.kind = (uint8_t)kind;
  return a;
}

static xrt_ir_attr xrt__cint(const char *name, int64_t v) {
  xrt_ir_attr a = xrt__cattr(name, XRT_ATTR_INT);
  a.i = v;
  return a;
}

static xrt_ir_attr xrt__cenum(const char *name, const char *s) {
  xrt_ir_attr a = xrt__cattr(name, XRT_ATTR_ENUM);
  a.s = s;
  a.n = (int64_t)strlen(s);
  return a;
}

static xrt_status xrt__cints(xrt__cctx *c, const char *name,
                             const int64_t *v, int32_t n, xrt_ir_attr *a) {
  int64_t *copy = (int64_t *)xrt__chlo_alloc(c, sizeof *copy * (size_t)n);
  if (!copy) return xrt__nomem("a CHLO op's attribute");
  if (n) memcpy(copy, v, sizeof *copy * (size_t)n);
  *a = xrt__cattr(name, XRT_ATTR_INTS);
  a->ints = copy;
  a->n = n;
  return XRT_OK;
}

/* Operand and result counts, all tensors, none of the results quantized
 * unless quant_ok. */
static xrt_status xrt__ccounts(const xrt__cctx *c, int nin, int nout) {
  const xrt_ir_op *op = c->op;
  if (op->num_operands != nin || op->num_results != nout)
    return xrt__cfail(c, "expects %d operand(s) and %d result(s), got %d and "
                      "%d", nin, nout, (int)op->num_operands,
                      (int)op->num_results);
  for (int32_t i = 0; i < nin + nout; i++) {
    int32_t id = i < nin ? op->operands[i] : op->results[i - nin];
    if (c->types[id].kind != XRT_TYPE_TENSOR)
      return xrt__cfail(c, "%s %d must be a tensor", i < nin ? "operand"
                        : "result", (int)(i < nin ? i : i - nin));
  }
  return XRT_OK;
}

static void xrt__cshape_str(const xrt_ir_type *t, char *buf, size_t cap) {
  xrt_shape_format(&t->shape, buf, cap);
}

/* ---- splat literals ---- */

/* d (or i when is_int) as one element of dt at dst; false if dt cannot
 * hold it. */
static bool xrt__celem(xrt_dtype dt, double d, int64_t i, bool is_int,
                       uint8_t *dst) {
  int k = xrt__dtype_class(dt);
  if (k == XRT__K_PRED || k == XRT__K_SINT || k == XRT__K_UINT) {
    if (!is_int && !(d > -9.3e18 && d < 9.3e18)) return false;
    int64_t v = is_int ? i : (int64_t)d;
    if (k == XRT__K_PRED) v = v != 0;
    memcpy(dst, &v, xrt_dtype_size(dt)); /* little-endian host */
    return true;
  }
  if (is_int) d = (double)i;
  if (k == XRT__K_COMPLEX) {
    memset(dst, 0, xrt_dtype_size(dt));
    dt = dt == XRT_C64 ? XRT_F32 : XRT_F64;
  }
  if (dt == XRT_F64) {
    memcpy(dst, &d, 8);
  } else if (dt == XRT_F32) {
    float f = isfinite(d) && fabs(d) > 3.4028235677973366e38
                  ? (float)(d < 0 ? -INFINITY : INFINITY) : (float)d;
    memcpy(dst, &f, 4);
  } else if (dt == XRT_F16 || dt == XRT_BF16) {
    uint16_t h = dt == XRT_F16 ? xrt_f64_to_f16(d) : xrt_f64_to_bf16(d);
    memcpy(dst, &h, 2);
  } else {
    int32_t b = xrt_minifloat_from_f64(dt, d);
    if (b < 0) return false;
    *dst = (uint8_t)b;
  }
  return true;
}

/* A constant op writing a splat of one element (elem, of t's type) into
 * value id. */
static xrt_status xrt__csplat(xrt__cctx *c, const xrt_ir_type *t,
                              const uint8_t *elem, int32_t id) {
  size_t esz = xrt_dtype_size(t->shape.dtype);
  xrt_ir_literal *lit = (xrt_ir_literal *)xrt__chlo_alloc(c, sizeof *lit);
  uint8_t *data = (uint8_t *)xrt__chlo_alloc(c, esz);
  if (!lit || !data) return xrt__nomem("a CHLO constant");
  memcpy(data, elem, esz);
  memset(lit, 0, sizeof *lit);
  lit->type = *t;
  lit->data = data;
  lit->bytes = esz;
  lit->splat = true;
  xrt_ir_attr a = xrt__cattr("value", XRT_ATTR_DENSE);
  a.lit = lit;
  return xrt__cemit(c, XRT_OP_CONSTANT, NULL, 0, &id, 1, &a, 1)
             ? XRT_OK : xrt__nomem("a CHLO constant");
}

/* ---- constant, constant_like, tan ---- */

/* The op as it is, under its StableHLO code. */
static xrt_status xrt__crename(xrt__cctx *c, xrt_opcode code) {
  xrt__cops *o = c->out;
  o->v[o->n] = *c->op;
  o->v[o->n].code = code;
  o->v[o->n].name = xrt_opcode_name(code);
  o->n++;
  return XRT_OK;
}

static xrt_status xrt__lower_constant_like(xrt__cctx *c) {
  xrt_status s = xrt__ccounts(c, 1, 1);
  if (s) return s;
  xrt_ir_type in = xrt__ctype(c, c->op->operands[0]);
  xrt_ir_type out = xrt__ctype(c, c->op->results[0]);
  if (!xrt__same_dims(&in.shape, &out.shape))
    return xrt__cfail(c, "result shape differs from the operand's");
  if (out.quant) return xrt__cfail(c, "a quantized result is not supported");
  const xrt_ir_attr *v = xrt_ir_op_attr(c->op, "value");
  if (!v) return xrt__cfail(c, "missing attribute 'value'");
  double d = 0;
  int64_t i = 0;
  bool is_int = false, ok = true;
  if (v->kind == XRT_ATTR_FLOAT) d = v->f;
  else if (v->kind == XRT_ATTR_INT || v->kind == XRT_ATTR_BOOL) i = v->i, is_int = true;
  else if (v->kind == XRT_ATTR_INTS && v->n == 1) i = v->ints[0], is_int = true;
  else ok = false;
  uint8_t elem[16];
  if (v->kind == XRT_ATTR_DENSE && v->lit && v->lit->bytes &&
      v->lit->type.shape.dtype == out.shape.dtype &&
      (v->lit->splat || xrt_shape_numel(&v->lit->type.shape) == 1)) {
    memcpy(elem, v->lit->data, xrt_dtype_size(out.shape.dtype));
  } else if (!ok || !xrt__celem(out.shape.dtype, d, i, is_int, elem)) {
    return xrt__cfail(c, "attribute 'value' must be a scalar that the "
                      "result's element type %s holds",
                      xrt_dtype_name(out.shape.dtype));
  }
  return xrt__csplat(c, &out, elem, c->op->results[0]);
}

/* ---- conj ---- */

static xrt_status xrt__lower_conj(xrt__cctx *c) {
  xrt_status s = xrt__ccounts(c, 1, 1);
  if (s) return s;
  int32_t x = c->op->operands[0], r = c->op->results[0];
  xrt_ir_type t = xrt__ctype(c, x), out = xrt__ctype(c, r);
  if (!xrt__type_equal(&t, &out))
    return xrt__cfail(c, "result type differs from operand type");
  int k = xrt__dtype_class(t.shape.dtype);
  if (t.quant || (k != XRT__K_FLOAT && k != XRT__K_COMPLEX))
    return xrt__cfail(c, "operand must be a float or complex tensor, not %s",
                      xrt_dtype_name(t.shape.dtype));
  if (k == XRT__K_FLOAT) /* conj of a real number is itself */
    return xrt__cemit(c, XRT_OP_CONVERT, &x, 1, &r, 1, NULL, 0)
               ? XRT_OK : xrt__nomem("a CHLO op");
  xrt_ir_type part = t;
  part.shape.dtype = t.shape.dtype == XRT_C64 ? XRT_F32 : XRT_F64;
  int32_t re = xrt__cvalue(c, &part), im = xrt__cvalue(c, &part),
          nim = xrt__cvalue(c, &part);
  if (re < 0 || im < 0 || nim < 0) return xrt__nomem("a CHLO op");
  int32_t pair[2] = {re, nim};
  if (!xrt__cemit(c, XRT_OP_REAL, &x, 1, &re, 1, NULL, 0) ||
      !xrt__cemit(c, XRT_OP_IMAG, &x, 1, &im, 1, NULL, 0) ||
      !xrt__cemit(c, XRT_OP_NEGATE, &im, 1, &nim, 1, NULL, 0) ||
      !xrt__cemit(c, XRT_OP_COMPLEX, pair, 2, &r, 1, NULL, 0))
    return xrt__nomem("a CHLO op");
  return XRT_OK;
}

/* ---- is_inf, is_pos_inf, is_neg_inf ---- */

/* Whether a float type has infinities (the FN, FNUZ and finite small
 * floats do not, so no element of them is infinite). */
static bool xrt__has_inf(xrt_dtype t) {
  xrt_minifloat_format f;
  return !xrt_minifloat_format_of(t, &f) || f.kind == XRT_MINIFLOAT_IEEE;
}

static xrt_status xrt__lower_is_inf(xrt__cctx *c) {
  xrt_status s = xrt__ccounts(c, 1, 1);
  if (s) return s;
  xrt_opcode code = c->op->code;
  int32_t x = c->op->operands[0], r = c->op->results[0];
  xrt_ir_type t = xrt__ctype(c, x), out = xrt__ctype(c, r);
  if (t.quant || xrt__dtype_class(t.shape.dtype) != XRT__K_FLOAT)
    return xrt__cfail(c, "operand must be a float tensor, not %s",
                      xrt_dtype_name(t.shape.dtype));
  if (out.shape.dtype != XRT_PRED || !xrt__same_dims(&t.shape, &out.shape))
    return xrt__cfail(c, "result must be a tensor of i1 with the operand's "
                      "shape");
  uint8_t elem[16];
  if (!xrt__has_inf(t.shape.dtype)) {
    elem[0] = 0;
    return xrt__csplat(c, &out, elem, r);
  }
  double inf = code == XRT_OP_CHLO_IS_NEG_INF ? -INFINITY : INFINITY;
  int32_t k = xrt__cvalue(c, &t), a = x;
  if (k < 0 || !xrt__celem(t.shape.dtype, inf, 0, false, elem))
    return xrt__nomem("a CHLO op");
  if ((s = xrt__csplat(c, &t, elem, k))) return s;
  if (code == XRT_OP_CHLO_IS_INF) { /* |x| == +inf */
    if ((a = xrt__cvalue(c, &t)) < 0 ||
        !xrt__cemit(c, XRT_OP_ABS, &x, 1, &a, 1, NULL, 0))
      return xrt__nomem("a CHLO op");
  }
  int32_t ins[2] = {a, k};
  xrt_ir_attr at[2] = {xrt__cenum("comparison_direction", "EQ"),
                       xrt__cenum("compare_type", "FLOAT")};
  return xrt__cemit(c, XRT_OP_COMPARE, ins, 2, &r, 1, at, 2)
             ? XRT_OK : xrt__nomem("a CHLO op");
}

/* ---- broadcast_* ---- */

static xrt_opcode xrt__broadcast_target(xrt_opcode code) {
  static const xrt_opcode map[][2] = {
      {XRT_OP_CHLO_BROADCAST_ADD, XRT_OP_ADD},
      {XRT_OP_CHLO_BROADCAST_AND, XRT_OP_AND},
      {XRT_OP_CHLO_BROADCAST_ATAN2, XRT_OP_ATAN2},
      {XRT_OP_CHLO_BROADCAST_COMPARE, XRT_OP_COMPARE},
      {XRT_OP_CHLO_BROADCAST_COMPLEX, XRT_OP_COMPLEX},
      {XRT_OP_CHLO_BROADCAST_DIVIDE, XRT_OP_DIVIDE},
      {XRT_OP_CHLO_BROADCAST_MAXIMUM, XRT_OP_MAXIMUM},
      {XRT_OP_CHLO_BROADCAST_MINIMUM, XRT_OP_MINIMUM},
      {XRT_OP_CHLO_BROADCAST_MULTIPLY, XRT_OP_MULTIPLY},
      {XRT_OP_CHLO_BROADCAST_NEXT_AFTER, XRT_OP_CHLO_NEXT_AFTER},
      {XRT_OP_CHLO_BROADCAST_OR, XRT_OP_OR},
      {XRT_OP_CHLO_BROADCAST_POLYGAMMA, XRT_OP_CHLO_POLYGAMMA},
      {XRT_OP_CHLO_BROADCAST_POWER, XRT_OP_POWER},
      {XRT_OP_CHLO_BROADCAST_REMAINDER, XRT_OP_REMAINDER},
      {XRT_OP_CHLO_BROADCAST_SELECT, XRT_OP_SELECT},
      {XRT_OP_CHLO_BROADCAST_SHIFT_LEFT, XRT_OP_SHIFT_LEFT},
      {XRT_OP_CHLO_BROADCAST_SHIFT_RIGHT_ARITHMETIC,
       XRT_OP_SHIFT_RIGHT_ARITHMETIC},
      {XRT_OP_CHLO_BROADCAST_SHIFT_RIGHT_LOGICAL, XRT_OP_SHIFT_RIGHT_LOGICAL},
      {XRT_OP_CHLO_BROADCAST_SUBTRACT, XRT_OP_SUBTRACT},
      {XRT_OP_CHLO_BROADCAST_XOR, XRT_OP_XOR},
      {XRT_OP_CHLO_BROADCAST_ZETA, XRT_OP_CHLO_ZETA},
  };
  for (size_t i = 0; i < XRT__ARRAY_SIZE(map); i++)
    if (map[i][0] == code) return map[i][1];
  return XRT_OP_INVALID;
}

/* Where each operand's dimensions land in the result: map[k][d] for
 * dimension d of operand k. */
typedef struct xrt__bcast {
  int n;
  xrt_ir_type in[3];
  int64_t map[3][XRT_MAX_RANK];
} xrt__bcast;

/* broadcast_dimensions (for the lower-ranked operand; the rhs when the
 * ranks are equal) or numpy's alignment of trailing dimensions. */
static xrt_status xrt__bcast_maps(const xrt__cctx *c, xrt__bcast *b,
                                  int32_t rank) {
  const xrt_ir_attr *bd = xrt_ir_op_attr(c->op, "broadcast_dimensions");
  int low = -1;
  if (bd) {
    if (bd->kind != XRT_ATTR_INTS)
      return xrt__cfail(c, "broadcast_dimensions must be a list of integers");
    low = b->in[0].shape.rank < b->in[1].shape.rank ? 0 : 1;
    if (bd->n != b->in[low].shape.rank)
      return xrt__cfail(c, "broadcast_dimensions has %" PRId64 " entries for "
                        "an operand of rank %d", bd->n,
                        (int)b->in[low].shape.rank);
  }
  for (int k = 0; k < b->n; k++) {
    int32_t r = b->in[k].shape.rank;
    for (int32_t d = 0; d < r; d++) {
      int64_t m = k == low ? bd->ints[d] : d + (rank - r);
      if (m < 0 || m >= rank || (d && m <= b->map[k][d - 1]))
        return xrt__cfail(c, "broadcast_dimensions must be increasing "
                          "dimensions of the result (rank %d)", (int)rank);
      b->map[k][d] = m;
    }
  }
  return XRT_OK;
}

/* The broadcast shape of the operands, checked against the result's. */
static xrt_status xrt__bcast_check(const xrt__cctx *c, const xrt__bcast *b,
                                   const xrt_ir_type *out) {
  int64_t want[XRT_MAX_RANK];
  int32_t rank = out->shape.rank;
  for (int32_t j = 0; j < rank; j++) want[j] = 1;
  for (int k = 0; k < b->n; k++)
    for (int32_t d = 0; d < b->in[k].shape.rank; d++) {
      int64_t sz = b->in[k].shape.dims[d], *w = &want[b->map[k][d]];
      if (sz == 1 || sz == *w) continue;
      if (*w != 1) {
        char s0[96], s1[96];
        xrt__cshape_str(&b->in[0], s0, sizeof s0);
        xrt__cshape_str(&b->in[k], s1, sizeof s1);
        return xrt__cfail(c, "operand shapes %s and %s do not broadcast "
                          "(dimension %d: %" PRId64 " vs %" PRId64 ")", s0,
                          s1, (int)b->map[k][d], *w, sz);
      }
      *w = sz;
    }
  if (!xrt__dims_are(&out->shape, want, rank)) {
    xrt_ir_type wt = *out;
    memcpy(wt.shape.dims, want, sizeof want[0] * (size_t)rank);
    char s0[96], s1[96];
    xrt__cshape_str(out, s0, sizeof s0);
    xrt__cshape_str(&wt, s1, sizeof s1);
    return xrt__cfail(c, "result type %s differs from the broadcast shape "
                      "of the operands, %s", s0, s1);
  }
  return XRT_OK;
}

/* The element types: operands alike (select: i1 and two alike), the
 * result's as the target op derives it, classes the target allows. */
static xrt_status xrt__bcast_types(const xrt__cctx *c, const xrt__bcast *b,
                                   xrt_opcode target, const xrt_ir_type *out) {
  int f = target == XRT_OP_SELECT; /* first value operand */
  if (f && b->in[0].shape.dtype != XRT_PRED)
    return xrt__cfail(c, "pred must be a tensor of i1, not %s",
                      xrt_dtype_name(b->in[0].shape.dtype));
  xrt_dtype t = b->in[f].shape.dtype, r = out->shape.dtype, want = t;
  bool q = b->in[f].quant || b->in[f + 1].quant || out->quant;
  if (b->in[f + 1].shape.dtype != t && !q)
    return xrt__cfail(c, "operand element types differ (%s vs %s)",
                      xrt_dtype_name(t),
                      xrt_dtype_name(b->in[f + 1].shape.dtype));
  if (target == XRT_OP_COMPARE) want = XRT_PRED;
  if (target == XRT_OP_COMPLEX) {
    if (t != XRT_F32 && t != XRT_F64)
      return xrt__cfail(c, "operands must be f32 or f64, not %s",
                        xrt_dtype_name(t));
    want = t == XRT_F32 ? XRT_C64 : XRT_C128;
  }
  unsigned mask = xrt__elementwise_mask(target);
  if (mask && !q && !(mask & (1u << xrt__dtype_class(t))))
    return xrt__cfail(c, "element type %s is not allowed", xrt_dtype_name(t));
  if (r != want && !q)
    return xrt__cfail(c, "result element type must be %s, not %s",
                      xrt_dtype_name(want), xrt_dtype_name(r));
  return XRT_OK;
}

/* The attributes the StableHLO op keeps: compare's, without CHLO's
 * NOTYPE. */
static xrt_status xrt__bcast_attrs(xrt__cctx *c, xrt_opcode target,
                                   xrt_ir_attr **attrs, int32_t *n) {
  const xrt_ir_op *op = c->op;
  *attrs = (xrt_ir_attr *)xrt__chlo_alloc(c, sizeof **attrs * (size_t)op->num_attrs);
  *n = 0;
  if (!*attrs) return xrt__nomem("a CHLO op");
  for (int32_t i = 0; i < op->num_attrs; i++) {
    const xrt_ir_attr *a = &op->attrs[i];
    const char *nm = a->name ? a->name : "";
    if (!strcmp(nm, "broadcast_dimensions")) continue;
    if (!strcmp(nm, "compare_type") && a->kind == XRT_ATTR_ENUM && a->s &&
        !strcmp(a->s, "NOTYPE"))
      continue;
    (*attrs)[(*n)++] = *a;
  }
  if (target == XRT_OP_COMPARE && !xrt_ir_op_attr(op, "comparison_direction"))
    return xrt__cfail(c, "missing attribute 'comparison_direction'");
  return XRT_OK;
}

static xrt_status xrt__lower_broadcast(xrt__cctx *c) {
  xrt_opcode target = xrt__broadcast_target(c->op->code);
  xrt__bcast b;
  memset(&b, 0, sizeof b);
  b.n = target == XRT_OP_SELECT ? 3 : 2;
  xrt_status s = xrt__ccounts(c, b.n, 1);
  if (s) return s;
  xrt_ir_type out = xrt__ctype(c, c->op->results[0]);
  int32_t rank = 0;
  for (int k = 0; k < b.n; k++) {
    b.in[k] = xrt__ctype(c, c->op->operands[k]);
    if (b.in[k].shape.rank > rank) rank = b.in[k].shape.rank;
  }
  if (out.shape.rank != rank)
    return xrt__cfail(c, "result rank %d differs from the operands' highest "
                      "rank %d", (int)out.shape.rank, (int)rank);
  xrt_ir_attr *attrs;
  int32_t nattrs;
  if ((s = xrt__bcast_maps(c, &b, rank)) || (s = xrt__bcast_check(c, &b, &out)) ||
      (s = xrt__bcast_types(c, &b, target, &out)) ||
      (s = xrt__bcast_attrs(c, target, &attrs, &nattrs)))
    return s;
  int32_t ins[3];
  for (int k = 0; k < b.n; k++) {
    ins[k] = c->op->operands[k];
    if (xrt__dims_are(&b.in[k].shape, out.shape.dims, rank)) continue;
    xrt_ir_type t = b.in[k];
    t.shape = out.shape;
    t.shape.dtype = b.in[k].shape.dtype;
    xrt_ir_attr a;
    int32_t v = xrt__cvalue(c, &t);
    if (v < 0) return xrt__nomem("a CHLO op");
    if ((s = xrt__cints(c, "broadcast_dimensions", b.map[k],
                        b.in[k].shape.rank, &a)))
      return s;
    if (!xrt__cemit(c, XRT_OP_BROADCAST_IN_DIM, &ins[k], 1, &v, 1, &a, 1))
      return xrt__nomem("a CHLO op");
    ins[k] = v;
  }
  return xrt__cemit(c, target, ins, b.n, c->op->results, 1, attrs, nattrs)
             ? XRT_OK : xrt__nomem("a CHLO op");
}

/* ---- top_k ---- */

static xrt_status xrt__top_k_check(const xrt__cctx *c, int64_t *k) {
  xrt_status s = xrt__ccounts(c, 1, 2);
  if (s) return s;
  xrt_ir_type x = xrt__ctype(c, c->op->operands[0]);
  const xrt_ir_attr *a = xrt_ir_op_attr(c->op, "k");
  if (!a || a->kind != XRT_ATTR_INT)
    return xrt__cfail(c, "missing integer attribute 'k'");
  int32_t r = x.shape.rank;
  int cls = xrt__dtype_class(x.shape.dtype);
  if (r < 1) return xrt__cfail(c, "operand must have rank 1 or more");
  if (x.quant || cls == XRT__K_COMPLEX || cls == XRT__K_NONE)
    return xrt__cfail(c, "element type %s is not ordered",
                      xrt_dtype_name(x.shape.dtype));
  *k = a->i;
  if (*k < 0 || *k > x.shape.dims[r - 1])
    return xrt__cfail(c, "k = %" PRId64 " is out of range for a last "
                      "dimension of %" PRId64, *k, x.shape.dims[r - 1]);
  xrt_ir_type want = x;
  want.shape.dims[r - 1] = *k;
  for (int i = 0; i < 2; i++) {
    want.shape.dtype = i ? XRT_S32 : x.shape.dtype;
    xrt_ir_type got = xrt__ctype(c, c->op->results[i]);
    if (!xrt__type_equal(&got, &want)) {
      char s0[96];
      xrt__cshape_str(&want, s0, sizeof s0);
      return xrt__cfail(c, "%s must be %s", i ? "indices" : "values", s0);
    }
  }
  return XRT_OK;
}

/* The comparator of the sort: values GT in total order (floats), signed or
 * unsigned order (integers, i1). */
static xrt_status xrt__top_k_comparator(xrt__cctx *c, xrt_dtype t,
                                        xrt_ir_region *g) {
  xrt_ir_type vt = xrt__tensor_type(t, NULL, 0),
              it = xrt__tensor_type(XRT_S32, NULL, 0),
              pt = xrt__tensor_type(XRT_PRED, NULL, 0);
  int32_t *args = (int32_t *)xrt__chlo_alloc(c, 4 * sizeof *args);
  xrt_ir_op *ops = (xrt_ir_op *)xrt__chlo_alloc(c, 2 * sizeof *ops);
  if (!args || !ops) return xrt__nomem("a CHLO op");
  for (int i = 0; i < 4; i++)
    if ((args[i] = xrt__cvalue(c, i < 2 ? &vt : &it)) < 0)
      return xrt__nomem("a CHLO op");
  int32_t p = xrt__cvalue(c, &pt);
  if (p < 0) return xrt__nomem("a CHLO op");
  int cls = xrt__dtype_class(t);
  const char *ct = cls == XRT__K_FLOAT ? "TOTALORDER"
                   : cls == XRT__K_SINT ? "SIGNED" : "UNSIGNED";
  xrt_ir_attr at[2] = {xrt__cenum("comparison_direction", "GT"),
                       xrt__cenum("compare_type", ct)};
  xrt__cops body = {ops, 0, 2}, *outer = c->out;
  c->out = &body;
  bool ok = xrt__cemit(c, XRT_OP_COMPARE, args, 2, &p, 1, at, 2) &&
            xrt__cemit(c, XRT_OP_RETURN, &p, 1, NULL, 0, NULL, 0);
  c->out = outer;
  if (!ok) return xrt__nomem("a CHLO op");
  memset(g, 0, sizeof *g);
  g->num_args = 4, g->args = args;
  g->num_ops = 2, g->ops = ops;
  return XRT_OK;
}

static xrt_status xrt__lower_top_k(xrt__cctx *c) {
  int64_t k = 0;
  xrt_status s = xrt__top_k_check(c, &k);
  if (s) return s;
  xrt_ir_type x = xrt__ctype(c, c->op->operands[0]), it = x;
  int32_t last = x.shape.rank - 1;
  it.shape.dtype = XRT_S32;
  int32_t sorted[2] = {xrt__cvalue(c, &x), -1}, ins[2];
  sorted[1] = xrt__cvalue(c, &it);
  ins[0] = c->op->operands[0];
  ins[1] = xrt__cvalue(c, &it);
  xrt_ir_region *g = (xrt_ir_region *)xrt__chlo_alloc(c, sizeof *g);
  if (sorted[0] < 0 || sorted[1] < 0 || ins[1] < 0 || !g)
    return xrt__nomem("a CHLO op");
  xrt_ir_attr ia = xrt__cint("iota_dimension", last), sa[2];
  sa[0] = xrt__cint("dimension", last);
  sa[1] = xrt__cattr("is_stable", XRT_ATTR_BOOL);
  sa[1].i = 1;
  if ((s = xrt__top_k_comparator(c, x.shape.dtype, g))) return s;
  xrt_ir_op *sort;
  if (!xrt__cemit(c, XRT_OP_IOTA, NULL, 0, &ins[1], 1, &ia, 1) ||
      !(sort = xrt__cemit(c, XRT_OP_SORT, ins, 2, sorted, 2, sa, 2)))
    return xrt__nomem("a CHLO op");
  sort->regions = g;
  sort->num_regions = 1;
  int64_t lo[XRT_MAX_RANK] = {0}, hi[XRT_MAX_RANK], st[XRT_MAX_RANK];
  for (int32_t d = 0; d <= last; d++) hi[d] = x.shape.dims[d], st[d] = 1;
  hi[last] = k;
  for (int i = 0; i < 2; i++) {
    xrt_ir_attr a[3];
    if ((s = xrt__cints(c, "start_indices", lo, last + 1, &a[0])) ||
        (s = xrt__cints(c, "limit_indices", hi, last + 1, &a[1])) ||
        (s = xrt__cints(c, "strides", st, last + 1, &a[2])))
      return s;
    if (!xrt__cemit(c, XRT_OP_SLICE, &sorted[i], 1, &c->op->results[i], 1, a,
                    3))
      return xrt__nomem("a CHLO op");
  }
  return XRT_OK;
}

/* ---- the walk ---- */

/* How many ops a CHLO op may become at most; 0 if it stays as it is. */
static int xrt__chlo_expansion(xrt_opcode code) {
  switch (code) {
  case XRT_OP_CHLO_CONSTANT: case XRT_OP_CHLO_CONSTANT_LIKE:
  case XRT_OP_CHLO_TAN: return 1;
  case XRT_OP_CHLO_CONJ: case XRT_OP_CHLO_IS_INF: case XRT_OP_CHLO_IS_POS_INF:
  case XRT_OP_CHLO_IS_NEG_INF: case XRT_OP_CHLO_TOP_K: return 4;
  default: return xrt__broadcast_target(code) ? 4 : 0;
  }
}

static xrt_status xrt__chlo_lower_op(xrt__cctx *c) {
  switch (c->op->code) {
  case XRT_OP_CHLO_CONSTANT: return xrt__crename(c, XRT_OP_CONSTANT);
  case XRT_OP_CHLO_TAN: return xrt__crename(c, XRT_OP_TAN);
  case XRT_OP_CHLO_CONSTANT_LIKE: return xrt__lower_constant_like(c);
  case XRT_OP_CHLO_CONJ: return xrt__lower_conj(c);
  case XRT_OP_CHLO_IS_INF: case XRT_OP_CHLO_IS_POS_INF:
  case XRT_OP_CHLO_IS_NEG_INF: return xrt__lower_is_inf(c);
  case XRT_OP_CHLO_TOP_K: return xrt__lower_top_k(c);
  default: return xrt__lower_broadcast(c);
  }
}

static xrt_status xrt__chlo_region(xrt__cctx *c, xrt_ir_region *r, int depth) {
  if (depth > 256) return XRT_OK; /* the verifier reports the nesting */
  int64_t extra = 0;
  for (int32_t i = 0; i < r->num_ops; i++) {
    const xrt_ir_op *op = &r->ops[i];
    for (int32_t k = 0; k < op->num_regions; k++) {
      xrt_status s = xrt__chlo_region(c, (xrt_ir_region *)&op->regions[k],
                                      depth + 1); /* ours until shared */
      if (s) return s;
    }
    extra += xrt__chlo_expansion(op->code);
  }
  if (!extra) return XRT_OK;
  int64_t cap = r->num_ops + extra;
  if (cap > INT32_MAX) return xrt__nomem("a region's ops");
  xrt__cops out = {(xrt_ir_op *)xrt__chlo_alloc(c, sizeof(xrt_ir_op) * (size_t)cap),
                   0, (int32_t)cap};
  if (!out.v) return xrt__nomem("a region's ops");
  xrt_status s = XRT_OK;
  c->out = &out;
  for (int32_t i = 0; !s && i < r->num_ops; i++) {
    c->op = &r->ops[i];
    if (xrt__chlo_expansion(c->op->code)) s = xrt__chlo_lower_op(c);
    else out.v[out.n++] = *c->op;
  }
  c->out = NULL;
  if (s) return s;
  r->ops = out.v;
  r->num_ops = out.n;
  return XRT_OK;
}

XRT__PRIVATE xrt_status xrt__chlo_lower_module(xrt__arena *arena,
                                               xrt_ir_module *m) {
  for (int32_t i = 0; i < m->num_funcs; i++) {
    xrt_ir_func *f = (xrt_ir_func *)&m->funcs[i]; /* ours until shared */
    xrt__cctx c;
    memset(&c, 0, sizeof c);
    c.arena = arena;
    c.f = f;
    c.types = (xrt_ir_type *)f->value_types;
    c.nvals = c.cap = f->num_values;
    xrt_status s = xrt__chlo_region(&c, &f->body, 0);
    f->value_types = c.types;
    f->num_values = c.nvals;
    if (s) return s;
  }
  return XRT_OK;
}
