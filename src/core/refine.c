/*
 * src/core/refine.c - shape refinement of shape-polymorphic programs: the
 * walk over the program (entry shapes, dimension arguments, function
 * specialisation, regions, dynamic ops to static ones, shape_assertion).
 * Part of the core of xrt; MIT licensed, see LICENSE.
 */
#include "refine.h"

/* ======================================================================
 * 5c. Shape refinement
 *
 * A program with `?` dimensions is parsed but not verified.  Compiling it
 * makes a refined copy (a program of its own whose arena holds the new
 * functions and which keeps a reference to the parsed one, whose
 * attributes and names it shares), as StableHLO's refine-arguments and
 * refine-shapes passes do:
 *  - the entry's arguments take the shapes of xrt_compile_options
 *    (rank, element type and static dimensions must agree);
 *  - ops are visited in program order; each result's shape is inferred
 *    from its operands' (refine_infer.c) and must agree with the static
 *    dimensions it declares; integer tensors of up to XRT__RFOLD_MAX
 *    elements whose contents are known (constants, get_dimension_size and
 *    arithmetic on them, refine_fold.c) are tracked, and an op whose
 *    results are all known becomes a constant;
 *  - dynamic_broadcast_in_dim, dynamic_reshape, dynamic_iota, dynamic_pad,
 *    dynamic_gather, dynamic_conv and real_dynamic_slice with known shape
 *    operands become broadcast_in_dim, reshape, iota, pad, gather,
 *    convolution and slice;
 *  - func.call refines its callee for the call's argument types and known
 *    argument contents (JAX passes dimension sizes as tensor<i64>
 *    arguments): one instance per distinct signature, the first keeping
 *    the function's name, later ones named `name$N`; only functions the
 *    entry reaches are kept;
 *  - custom_call @shape_assertion is checked (its error_message, with
 *    `{k}` replaced by operand k+1's value as JAX formats it, is the
 *    INVALID_ARGUMENT message when it fails) and removed;
 *  - while loops carry their operands' shapes through both regions (a body
 *    that changes them is an error), if/case results take their branches'.
 * Then the copy is CHLO-lowered and verified like any parsed program.
 *
 * Dimension arguments of the entry.  Exports of jax2tf's era pass the
 * dimension variables to @main itself: leading tensor<i64>/tensor<i32>
 * arguments before arrays with `?` dimensions, bound by the caller
 * (XlaCallModule's dim_args_spec, which the module does not record).
 * When the program does not refine with those arguments unknown, xrt
 * binds each to the size of a `?` dimension of the given shapes: first
 * the k-th distinct size for the k-th argument, then every other choice
 * (at most XRT__RSEARCH_MAX), and keeps the first under which the whole
 * program refines and verifies.  The entry still takes those arguments;
 * what the program computes from them is folded to constants.
 * ==================================================================== */

/* Refinement attempts of the dimension-argument search; each costs one
 * refinement of the program. */
#define XRT__RSEARCH_MAX 64

typedef struct xrt__rinst {
  int32_t src_func;
  xrt_ir_type *arg_types;
  xrt__rval *arg_known;
  xrt_ir_func func;
  xrt__rval *ret_known;
  bool busy, done;
} xrt__rinst;

struct xrt__refiner {
  xrt__arena *arena;
  const xrt_ir_module *src;
  xrt__rinst **insts;
  int32_t ninst, cap;
  int depth;
};

#if defined(__GNUC__)
XRT_PRINTF_FORMAT(3, 4)
#endif
XRT__PRIVATE xrt_status xrt__rfail(const xrt__rfn *f, xrt_status code,
                                   const char *fmt, ...) {
  char msg[1024];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(msg, sizeof msg, fmt, ap);
  va_end(ap);
  const xrt_ir_loc *l = f->op ? &f->op->loc : &f->src->loc;
  const char *what = f->op ? (f->op->name ? f->op->name
                                          : xrt_opcode_name(f->op->code))
                           : "func.func";
  return xrt__fail(code, "%s:%d:%d: %s: %s", l->file ? l->file : "<input>",
                   (int)l->line, (int)l->col, what, msg);
}

XRT__PRIVATE void *xrt__ralloc(xrt__rfn *f, size_t bytes) {
  void *p = xrt__arena_alloc(f->r->arena, bytes ? bytes : 1);
  if (p) memset(p, 0, bytes ? bytes : 1);
  return p;
}

XRT__PRIVATE const xrt__rval *xrt__rknown(const xrt__rfn *f, int32_t id) {
  return f->known[id].n >= 0 ? &f->known[id] : NULL;
}

static bool xrt__shape_dynamic(const xrt_shape *s) {
  for (int32_t i = 0; i < s->rank; i++)
    if (s->dims[i] < 0) return true;
  return false;
}

static bool xrt__type_dynamic(const xrt_ir_type *t) {
  if (t->kind == XRT_TYPE_TUPLE) {
    for (int32_t i = 0; i < t->num_elems; i++)
      if (xrt__type_dynamic(&t->elems[i])) return true;
    return false;
  }
  return t->kind == XRT_TYPE_TENSOR && xrt__shape_dynamic(&t->shape);
}

static bool xrt__region_needs_refine(const xrt_ir_region *r) {
  for (int32_t i = 0; i < r->num_ops; i++) {
    const xrt_ir_op *op = &r->ops[i];
    if (op->code == XRT_OP_REAL_DYNAMIC_SLICE) return true;
    for (int32_t k = 0; k < op->num_regions; k++)
      if (xrt__region_needs_refine(&op->regions[k])) return true;
  }
  return false;
}

XRT__PRIVATE bool xrt__refine_needed(const xrt_ir_module *m) {
  for (int32_t i = 0; i < m->num_funcs; i++) {
    const xrt_ir_func *f = &m->funcs[i];
    for (int32_t v = 0; v < f->num_values; v++)
      if (xrt__type_dynamic(&f->value_types[v])) return true;
    for (int32_t k = 0; k < f->num_results; k++)
      if (xrt__type_dynamic(&f->result_types[k])) return true;
    /* real_dynamic_slice has no static spelling but slice */
    if (xrt__region_needs_refine(&f->body)) return true;
  }
  return false;
}

/* ---- instances ---- */

static bool xrt__rval_equal(const xrt__rval *a, const xrt__rval *b) {
  if (a->n != b->n) return false;
  for (int64_t i = 0; i < a->n; i++)
    if (a->v[i] != b->v[i]) return false;
  return true;
}

static bool xrt__rtype_equal(const xrt_ir_type *a, const xrt_ir_type *b) {
  return xrt__type_equal(a, b) && a->quant == b->quant;
}

static xrt__rinst *xrt__rinst_find(xrt__refiner *r, int32_t func,
                                   const xrt_ir_type *types,
                                   const xrt__rval *known) {
  const xrt_ir_func *src = &r->src->funcs[func];
  for (int32_t i = 0; i < r->ninst; i++) {
    xrt__rinst *in = r->insts[i];
    if (in->src_func != func) continue;
    bool same = true;
    for (int32_t a = 0; same && a < src->body.num_args; a++)
      same = xrt__rtype_equal(&in->arg_types[a], &types[a]) &&
             xrt__rval_equal(&in->arg_known[a], &known[a]);
    if (same) return in;
  }
  return NULL;
}

static xrt__rinst *xrt__rinst_new(xrt__refiner *r, int32_t func,
                                  const xrt_ir_type *types,
                                  const xrt__rval *known) {
  if (r->ninst == r->cap) {
    int32_t cap = r->cap ? 2 * r->cap : 8;
    xrt__rinst **n = (xrt__rinst **)xrt__arena_alloc(
        r->arena, sizeof *n * (size_t)cap);
    if (!n) return NULL;
    if (r->ninst) memcpy(n, r->insts, sizeof *n * (size_t)r->ninst);
    r->insts = n;
    r->cap = cap;
  }
  int32_t na = r->src->funcs[func].body.num_args;
  xrt__rinst *in = (xrt__rinst *)xrt__arena_alloc(r->arena, sizeof *in);
  xrt_ir_type *t = (xrt_ir_type *)xrt__arena_alloc(
      r->arena, sizeof *t * (size_t)(na + 1));
  xrt__rval *k = (xrt__rval *)xrt__arena_alloc(
      r->arena, sizeof *k * (size_t)(na + 1));
  if (!in || !t || !k) return NULL;
  memset(in, 0, sizeof *in);
  for (int32_t a = 0; a < na; a++) t[a] = types[a], k[a] = known[a];
  in->src_func = func;
  in->arg_types = t;
  in->arg_known = k;
  r->insts[r->ninst++] = in;
  return in;
}

/* The instance's name: the function's own for its first instance. */
static const char *xrt__rinst_name(xrt__refiner *r, const xrt__rinst *in) {
  const char *name = r->src->funcs[in->src_func].name;
  int32_t nth = 0;
  for (int32_t i = 0; i < r->ninst && r->insts[i] != in; i++)
    nth += r->insts[i]->src_func == in->src_func;
  if (!nth) return name;
  size_t len = strlen(name) + 16;
  char *s = (char *)xrt__arena_alloc(r->arena, len);
  if (s) snprintf(s, len, "%s$%d", name, (int)nth);
  return s;
}

static xrt_status xrt__rfunc(xrt__refiner *r, xrt__rinst *in);

/* ---- ops ---- */

static xrt_status xrt__rregion(xrt__rfn *f, const xrt_ir_region *src,
                               xrt_ir_region *dst);

/* Result i of op takes shape want (inferred, XRT_DIM_DYNAMIC where not
 * known): the declared static dimensions must agree, and none may stay
 * dynamic. */
static xrt_status xrt__rmerge(xrt__rfn *f, const xrt_ir_op *op, int i,
                              const xrt_shape *want) {
  xrt_ir_type *t = &f->types[op->results[i]];
  if (t->kind != XRT_TYPE_TENSOR) return XRT_OK;
  xrt_shape got = t->shape;
  char a[160], b[160];
  if (want->rank != got.rank) {
    xrt_shape_format(want, a, sizeof a);
    xrt_shape_format(&got, b, sizeof b);
    return xrt__rfail(f, XRT_INVALID_ARGUMENT, "result %d: the operands' "
                      "shapes give %s, which disagrees with its type %s", i,
                      a, b);
  }
  for (int32_t d = 0; d < got.rank; d++) {
    if (want->dims[d] < 0) continue;
    if (got.dims[d] >= 0 && got.dims[d] != want->dims[d]) {
      xrt_shape_format(want, a, sizeof a);
      xrt_shape_format(&got, b, sizeof b);
      return xrt__rfail(f, XRT_INVALID_ARGUMENT, "result %d: the operands' "
                        "shapes give %s, which disagrees with its type %s",
                        i, a, b);
    }
    got.dims[d] = want->dims[d];
  }
  for (int32_t d = 0; d < got.rank; d++)
    if (got.dims[d] < 0)
      return xrt__rfail(f, XRT_INVALID_ARGUMENT, "result %d: dimension %d "
                        "stays dynamic (its size does not follow from the "
                        "argument shapes at compile time)", i, (int)d);
  t->shape = got;
  return XRT_OK;
}

/* Infers op's result shapes and merges them into f->types. */
static xrt_status xrt__rresults(xrt__rfn *f, const xrt_ir_op *op) {
  if (!op->num_results) return XRT_OK;
  xrt_shape *out = (xrt_shape *)xrt__ralloc(
      f, sizeof *out * (size_t)op->num_results);
  if (!out) return xrt__nomem("refined shapes");
  for (int32_t i = 0; i < op->num_results; i++) {
    out[i] = f->types[op->results[i]].shape;
    for (int32_t d = 0; d < out[i].rank; d++) out[i].dims[d] = XRT_DIM_DYNAMIC;
  }
  xrt_status s = xrt__rinfer(f, op, out);
  for (int32_t i = 0; !s && i < op->num_results; i++)
    s = xrt__rmerge(f, op, i, &out[i]);
  return s;
}

/* The scalar value of operand k of op, for a message; "?" unknown. */
static void xrt__rscalar_str(const xrt__rfn *f, const xrt_ir_op *op, int k,
                             char *buf, size_t cap) {
  const xrt__rval *v =
      k < op->num_operands ? xrt__rknown(f, op->operands[k]) : NULL;
  if (v && v->n == 1) snprintf(buf, cap, "%" PRId64, v->v[0]);
  else snprintf(buf, cap, "?");
}

/* JAX's error_message.format(*inputs): {k} is input k (operand k + 1),
 * {{ and }} are braces. */
static void xrt__rformat(const xrt__rfn *f, const xrt_ir_op *op,
                         const char *fmt, size_t len, char *out, size_t cap) {
  size_t n = 0;
  for (size_t i = 0; i < len && n + 1 < cap; i++) {
    char c = fmt[i];
    if ((c == '{' || c == '}') && i + 1 < len && fmt[i + 1] == c) {
      out[n++] = c;
      i++;
      continue;
    }
    size_t j = i + 1;
    int64_t k = 0;
    while (c == '{' && j < len && fmt[j] >= '0' && fmt[j] <= '9' && k < 1000)
      k = k * 10 + (fmt[j++] - '0');
    if (c == '{' && j > i + 1 && j < len && fmt[j] == '}') {
      char v[32];
      xrt__rscalar_str(f, op, (int)k + 1, v, sizeof v);
      for (const char *p = v; *p && n + 1 < cap; p++) out[n++] = *p;
      i = j;
      continue;
    }
    out[n++] = c;
  }
  out[n] = 0;
}

static bool xrt__is_shape_assertion(const xrt_ir_op *op) {
  if (op->code != XRT_OP_CUSTOM_CALL) return false;
  const xrt_ir_attr *t = xrt_ir_op_attr(op, "call_target_name");
  return t && t->s && strcmp(t->s, "shape_assertion") == 0;
}

/* custom_call @shape_assertion: true when it holds (the op goes). */
static xrt_status xrt__rassert(xrt__rfn *f, const xrt_ir_op *op) {
  const xrt__rval *c =
      op->num_operands ? xrt__rknown(f, op->operands[0]) : NULL;
  if (!c)
    return xrt__rfail(f, XRT_INVALID_ARGUMENT, "the assertion's condition "
                      "is not known at compile time");
  bool ok = true;
  for (int64_t i = 0; i < c->n; i++) ok = ok && c->v[i] != 0;
  if (ok) return XRT_OK;
  const xrt_ir_attr *m = xrt_ir_op_attr(op, "error_message");
  const char *fmt = m && m->s ? m->s : "shape assertion failed";
  size_t len = m && m->s ? (size_t)m->n : strlen(fmt);
  size_t cap = len * 2 + 256;
  char *msg = (char *)xrt__ralloc((xrt__rfn *)f, cap);
  if (!msg) return xrt__nomem("a shape assertion's message");
  xrt__rformat(f, op, fmt, len, msg, cap);
  const xrt_ir_loc *l = &op->loc;
  return xrt__fail(XRT_INVALID_ARGUMENT, "%s:%d:%d: %s",
                   l->file ? l->file : "<input>", (int)l->line, (int)l->col,
                   msg);
}

/* func.call: the callee instance for the call's argument types and known
 * contents. */
static xrt_status xrt__rcall(xrt__rfn *f, xrt_ir_op *op) {
  xrt__refiner *r = f->r;
  if (op->callee < 0 || op->callee >= r->src->num_funcs)
    return xrt__rfail(f, XRT_INVALID_ARGUMENT, "unknown callee");
  const xrt_ir_func *g = &r->src->funcs[op->callee];
  if (g->body.num_args != op->num_operands ||
      g->num_results != op->num_results)
    return xrt__rfail(f, XRT_INVALID_ARGUMENT, "@%s takes %d argument(s) "
                      "and returns %d, the call has %d and %d", g->name,
                      (int)g->body.num_args, (int)g->num_results,
                      (int)op->num_operands, (int)op->num_results);
  size_t na = (size_t)op->num_operands + 1;
  xrt_ir_type *types = (xrt_ir_type *)xrt__ralloc(f, sizeof *types * na);
  xrt__rval *known = (xrt__rval *)xrt__ralloc(f, sizeof *known * na);
  if (!types || !known) return xrt__nomem("a call's signature");
  for (int32_t i = 0; i < op->num_operands; i++) {
    types[i] = f->types[op->operands[i]];
    known[i] = f->known[op->operands[i]];
  }
  xrt__rinst *in = xrt__rinst_find(r, op->callee, types, known);
  if (!in) {
    if (!(in = xrt__rinst_new(r, op->callee, types, known)))
      return xrt__nomem("a function instance");
    xrt_status s = xrt__rfunc(r, in);
    if (s) return s;
  } else if (in->busy) {
    return xrt__rfail(f, XRT_UNIMPLEMENTED, "@%s calls itself", g->name);
  }
  int32_t idx = 0;
  while (r->insts[idx] != in) idx++;
  op->callee = idx;
  for (int32_t i = 0; i < op->num_results; i++) {
    xrt_shape want = in->func.result_types[i].shape;
    xrt_status s = xrt__rmerge(f, op, i, &want);
    if (s) return s;
    f->known[op->results[i]] = in->ret_known[i];
  }
  return XRT_OK;
}

/* while: the operands' types flow into both regions' arguments and must
 * come back out of the body unchanged. */
static xrt_status xrt__rwhile(xrt__rfn *f, xrt_ir_op *op,
                              xrt_ir_region *regs) {
  const xrt_ir_op *self = op;
  for (int32_t k = 0; k < op->num_regions; k++) {
    const xrt_ir_region *rg = &op->regions[k];
    for (int32_t i = 0; i < rg->num_args && i < op->num_operands; i++)
      f->types[rg->args[i]] = f->types[op->operands[i]];
  }
  for (int32_t k = 0; k < op->num_regions; k++) {
    xrt_status s = xrt__rregion(f, &op->regions[k], &regs[k]);
    f->op = self;
    if (s) return s;
  }
  if (op->num_regions == 2 && regs[1].num_ops) {
    const xrt_ir_op *ret = &regs[1].ops[regs[1].num_ops - 1];
    for (int32_t i = 0; i < ret->num_operands && i < op->num_operands; i++) {
      const xrt_shape *a = &f->types[op->operands[i]].shape,
                      *b = &f->types[ret->operands[i]].shape;
      if (!xrt__shape_equal(a, b)) {
        char sa[160], sb[160];
        xrt_shape_format(a, sa, sizeof sa);
        xrt_shape_format(b, sb, sizeof sb);
        return xrt__rfail(f, XRT_INVALID_ARGUMENT, "loop value %d enters as "
                          "%s and leaves the body as %s", (int)i, sa, sb);
      }
    }
  }
  return XRT_OK;
}

/* Regions of any other op: if/case branches report their results. */
static xrt_status xrt__rregions(xrt__rfn *f, xrt_ir_op *op) {
  if (!op->num_regions) return XRT_OK;
  xrt_ir_region *regs = (xrt_ir_region *)xrt__ralloc(
      f, sizeof *regs * (size_t)op->num_regions);
  if (!regs) return xrt__nomem("refined regions");
  const xrt_ir_op *self = op;
  xrt_status s = XRT_OK;
  if (op->code == XRT_OP_WHILE) {
    s = xrt__rwhile(f, op, regs);
  } else {
    for (int32_t k = 0; !s && k < op->num_regions; k++) {
      s = xrt__rregion(f, &op->regions[k], &regs[k]);
      f->op = self;
    }
  }
  op->regions = regs;
  return s;
}

/* An op whose results are all known becomes a constant (a single-result
 * op without regions or effects). */
static bool xrt__rfoldable(const xrt_ir_op *op) {
  if (op->num_results != 1 || op->num_regions || op->code == XRT_OP_CONSTANT)
    return false;
  switch (op->code) {
  case XRT_OP_CUSTOM_CALL: case XRT_OP_FUNC_CALL: case XRT_OP_RNG:
  case XRT_OP_RNG_BIT_GENERATOR: case XRT_OP_INFEED: case XRT_OP_RECV:
  case XRT_OP_COMPOSITE:
    return false;
  default:
    return true;
  }
}

/* Refines one op (a copy the caller owns); *drop: remove it. */
static xrt_status xrt__rop(xrt__rfn *f, xrt_ir_op *op, bool *drop) {
  f->op = op;
  xrt_status s = xrt__rregions(f, op);
  f->op = op;
  if (s) return s;
  if (xrt__is_shape_assertion(op)) {
    *drop = true;
    return xrt__rassert(f, op);
  }
  if (op->code == XRT_OP_FUNC_CALL) return xrt__rcall(f, op);
  if ((s = xrt__rresults(f, op)) || (s = xrt__rstatic_form(f, op))) return s;
  f->op = op;
  if (xrt__rfold(f, op) && xrt__rfoldable(op)) {
    xrt_ir_loc loc = op->loc;
    int32_t res = op->results[0];
    if ((s = xrt__rconstant(f, res, op))) return s;
    op->loc = loc;
  }
  return XRT_OK;
}

static xrt_status xrt__rregion(xrt__rfn *f, const xrt_ir_region *src,
                               xrt_ir_region *dst) {
  if (++f->r->depth > 256) {
    f->r->depth--;
    return xrt__rfail(f, XRT_INVALID_ARGUMENT, "regions are nested too "
                      "deeply");
  }
  xrt_ir_op *ops = (xrt_ir_op *)xrt__ralloc(
      f, sizeof *ops * (size_t)src->num_ops);
  if (!ops) return xrt__nomem("refined ops");
  int32_t n = 0;
  xrt_status s = XRT_OK;
  for (int32_t i = 0; !s && i < src->num_ops; i++) {
    bool drop = false;
    ops[n] = src->ops[i];
    s = xrt__rop(f, &ops[n], &drop);
    for (int32_t k = 0; !drop && k < ops[n].num_results; k++)
      f->def[ops[n].results[k]] = &ops[n];
    if (!drop) n++;
  }
  f->r->depth--;
  *dst = *src;
  dst->ops = ops;
  dst->num_ops = n;
  return s;
}

/* ---- functions ---- */

static xrt_status xrt__rfunc_results(xrt__rfn *f, xrt__rinst *in) {
  const xrt_ir_func *src = f->src;
  xrt_ir_region *b = &in->func.body;
  if (!b->num_ops) return XRT_OK; /* the verifier reports it */
  const xrt_ir_op *ret = &b->ops[b->num_ops - 1];
  int32_t n = src->num_results;
  if (ret->num_operands != n) return XRT_OK; /* likewise */
  xrt_ir_type *rt = (xrt_ir_type *)xrt__ralloc(f, sizeof *rt * (size_t)(n + 1));
  in->ret_known = (xrt__rval *)xrt__ralloc(f, sizeof(xrt__rval) * (size_t)(n + 1));
  if (!rt || !in->ret_known) return xrt__nomem("refined result types");
  f->op = ret;
  for (int32_t i = 0; i < n; i++) {
    rt[i] = src->result_types[i];
    const xrt_ir_type *got = &f->types[ret->operands[i]];
    in->ret_known[i] = f->known[ret->operands[i]];
    if (rt[i].kind != XRT_TYPE_TENSOR || got->kind != XRT_TYPE_TENSOR) {
      rt[i] = *got;
      continue;
    }
    bool ok = got->shape.rank == rt[i].shape.rank;
    for (int32_t d = 0; ok && d < got->shape.rank; d++)
      ok = rt[i].shape.dims[d] < 0 || rt[i].shape.dims[d] == got->shape.dims[d];
    if (!ok) {
      char a[160], c[160];
      xrt_shape_format(&got->shape, a, sizeof a);
      xrt_shape_format(&rt[i].shape, c, sizeof c);
      return xrt__rfail(f, XRT_INVALID_ARGUMENT, "@%s returns %s as result "
                        "%d, declared %s", src->name, a, (int)i, c);
    }
    rt[i].shape = got->shape;
  }
  in->func.result_types = rt;
  return XRT_OK;
}

static xrt_status xrt__rfunc(xrt__refiner *r, xrt__rinst *in) {
  const xrt_ir_func *src = &r->src->funcs[in->src_func];
  size_t nv = (size_t)src->num_values + 1;
  xrt__rfn f = {r, src, NULL, NULL, NULL, NULL};
  f.types = (xrt_ir_type *)xrt__arena_alloc(r->arena, sizeof *f.types * nv);
  f.known = (xrt__rval *)xrt__arena_alloc(r->arena, sizeof *f.known * nv);
  f.def = (const xrt_ir_op **)xrt__arena_alloc(r->arena, sizeof *f.def * nv);
  if (!f.types || !f.known || !f.def) return xrt__nomem("a refined function");
  memset(f.def, 0, sizeof *f.def * nv);
  for (int32_t v = 0; v < src->num_values; v++) {
    f.types[v] = src->value_types[v];
    f.known[v].n = -1;
    f.known[v].v = NULL;
  }
  for (int32_t a = 0; a < src->body.num_args; a++) {
    f.types[src->body.args[a]] = in->arg_types[a];
    f.known[src->body.args[a]] = in->arg_known[a];
  }
  in->busy = true;
  in->func = *src;
  in->func.name = xrt__rinst_name(r, in);
  if (!in->func.name) return xrt__nomem("a function instance's name");
  xrt_status s = xrt__rregion(&f, &src->body, &in->func.body);
  in->func.value_types = f.types;
  if (!s) s = xrt__rfunc_results(&f, in);
  in->busy = false;
  in->done = !s;
  return s;
}

/* ---- the entry and its arguments ---- */

/* The given shapes agree with the entry's declared argument types. */
static xrt_status xrt__rcheck_args(const xrt_ir_func *f,
                                   const xrt_compile_options *o) {
  int32_t n = f->body.num_args;
  if (o->num_arg_shapes != n)
    return xrt__fail(XRT_INVALID_ARGUMENT, "%s:%d:%d: @%s takes %d "
                     "argument(s), %d argument shape(s) given", f->loc.file,
                     (int)f->loc.line, (int)f->loc.col, f->name, (int)n,
                     o->num_arg_shapes);
  for (int32_t i = 0; i < n; i++) {
    const xrt_ir_type *t = &f->value_types[f->body.args[i]];
    const xrt_shape *g = &o->arg_shapes[i];
    bool ok = t->kind == XRT_TYPE_TENSOR && g->dtype == t->shape.dtype &&
              g->rank == t->shape.rank;
    for (int32_t d = 0; ok && d < g->rank; d++)
      ok = g->dims[d] >= 0 &&
           (t->shape.dims[d] < 0 || t->shape.dims[d] == g->dims[d]);
    if (!ok) {
      char a[160], b[160];
      xrt_shape_format(g, a, sizeof a);
      if (t->kind == XRT_TYPE_TENSOR) xrt_shape_format(&t->shape, b, sizeof b);
      else snprintf(b, sizeof b, "%s", t->kind == XRT_TYPE_TUPLE ? "tuple<...>"
                                                                 : "(not a tensor)");
      return xrt__fail(XRT_INVALID_ARGUMENT, "%s:%d:%d: @%s: argument %d "
                       "is given as %s, which does not fit its type %s",
                       f->loc.file, (int)f->loc.line, (int)f->loc.col,
                       f->name, (int)i, a, b);
    }
  }
  return XRT_OK;
}

/* Leading tensor<i64>/tensor<i32> arguments followed by arrays with `?`
 * dimensions: how many (0: none). */
static int32_t xrt__rdim_args(const xrt_ir_func *f) {
  int32_t k = 0, n = f->body.num_args;
  while (k < n) {
    const xrt_ir_type *t = &f->value_types[f->body.args[k]];
    if (t->kind != XRT_TYPE_TENSOR || t->shape.rank != 0 ||
        (t->shape.dtype != XRT_S64 && t->shape.dtype != XRT_S32))
      break;
    k++;
  }
  for (int32_t i = k; i < n; i++)
    if (xrt__type_dynamic(&f->value_types[f->body.args[i]])) return k;
  return 0;
}

/* Builds a refined program from p (entry index entry) for the argument
 * types types, the first ndim arguments known to be dims[]. */
static xrt_status xrt__rattempt(xrt__program *p, int32_t entry,
                                const xrt_ir_type *types, int32_t ndim,
                                const int64_t *dims, xrt__program **out) {
  xrt__program *q = (xrt__program *)xrt__calloc(&p->allocator, 1, sizeof *q);
  if (!q) return xrt__nomem("a refined program");
  q->allocator = p->allocator;
  atomic_init(&q->refs, 1);
  xrt__arena_init(&q->arena, p->allocator);
  q->base = p;
  atomic_fetch_add(&p->refs, 1);
  memcpy(q->text_digest, p->text_digest, sizeof q->text_digest);
  q->has_digest = p->has_digest;
  q->shard = p->shard;
  xrt__refiner r;
  memset(&r, 0, sizeof r);
  r.arena = &q->arena;
  r.src = p->module;
  const xrt_ir_func *ef = &p->module->funcs[entry];
  int32_t na = ef->body.num_args;
  xrt__rval *known = (xrt__rval *)xrt__arena_alloc(
      r.arena, sizeof *known * (size_t)(na + 1));
  xrt_ir_module *m = (xrt_ir_module *)xrt__arena_alloc(r.arena, sizeof *m);
  xrt__rinst *in = known && m ? xrt__rinst_new(&r, entry, types, known) : NULL;
  xrt_status s = in ? XRT_OK : xrt__nomem("a refined program");
  for (int32_t a = 0; !s && a < na; a++) {
    in->arg_known[a].n = a < ndim ? 1 : -1;
    in->arg_known[a].v = NULL;
    if (a < ndim &&
        !(in->arg_known[a].v = (int64_t *)xrt__arena_alloc(r.arena, 8)))
      s = xrt__nomem("a dimension argument");
    else if (a < ndim)
      in->arg_known[a].v[0] = dims[a];
  }
  if (!s) s = xrt__rfunc(&r, in);
  if (!s) {
    *m = *p->module;
    xrt_ir_func *funcs = (xrt_ir_func *)xrt__arena_alloc(
        r.arena, sizeof *funcs * (size_t)r.ninst);
    if (!funcs) s = xrt__nomem("refined functions");
    for (int32_t i = 0; !s && i < r.ninst; i++) funcs[i] = r.insts[i]->func;
    m->funcs = funcs;
    m->num_funcs = r.ninst;
    q->module = m;
  }
  if (!s) s = xrt__chlo_lower_module(&q->arena, m);
  if (!s) s = xrt__verify_module(m);
  if (!s) s = xrt__program_index(q);
  if (s) {
    xrt__program_unref(q);
    return s;
  }
  *out = q;
  return XRT_OK;
}

/* The k-th choice of dimension-argument values: choice 0 binds argument i
 * to the i-th distinct size (or the last), choice c > 0 counts through
 * every assignment in base nvals, skipping choice 0's. */
static bool xrt__rchoice(int64_t c, int32_t ndim, const int64_t *vals,
                         int32_t nvals, int64_t *dims) {
  int64_t natural = 0, total = 1;
  for (int32_t i = 0; i < ndim; i++) {
    if (total > XRT__RSEARCH_MAX) break;
    total *= nvals;
  }
  for (int32_t i = ndim - 1; i >= 0; i--)
    natural = natural * nvals + (i < nvals ? i : nvals - 1);
  int64_t code = c == 0 ? natural : c - 1 < natural ? c - 1 : c;
  if (code >= total) return false;
  for (int32_t i = 0; i < ndim; i++) {
    dims[i] = vals[code % nvals];
    code /= nvals;
  }
  return true;
}

/* The sizes the given shapes put at the `?` dimensions of the entry's
 * arguments after the first ndim, distinct, in order. */
static int32_t xrt__rdyn_sizes(const xrt_ir_func *f, const xrt_ir_type *types,
                               int32_t ndim, int64_t *vals, int32_t cap) {
  int32_t n = 0;
  for (int32_t a = ndim; a < f->body.num_args; a++) {
    const xrt_ir_type *t = &f->value_types[f->body.args[a]];
    for (int32_t d = 0; t->kind == XRT_TYPE_TENSOR && d < t->shape.rank; d++) {
      int64_t v = types[a].shape.dims[d];
      if (t->shape.dims[d] >= 0 || xrt__contains(vals, n, v) || n == cap)
        continue;
      vals[n++] = v;
    }
  }
  return n;
}

/* Tries the dimension-argument bindings; the first choice's error is kept
 * for the caller when none works. */
static xrt_status xrt__rsearch(xrt__program *p, int32_t entry,
                               const xrt_ir_type *types, int32_t ndim,
                               xrt__program **out) {
  const xrt_ir_func *f = &p->module->funcs[entry];
  int32_t cap = 0;
  for (int32_t a = ndim; a < f->body.num_args; a++)
    cap += f->value_types[f->body.args[a]].shape.rank;
  int64_t *vals = (int64_t *)xrt__calloc(&p->allocator, (size_t)cap + 1, 8);
  int64_t *dims = (int64_t *)xrt__calloc(&p->allocator, (size_t)ndim + 1, 8);
  char *first = NULL;
  xrt_status s = vals && dims ? XRT_OK : xrt__nomem("dimension arguments"),
             s0 = XRT_OK;
  int32_t nvals = s ? 0 : xrt__rdyn_sizes(f, types, ndim, vals, cap);
  for (int64_t c = 0; !s && nvals && c < XRT__RSEARCH_MAX &&
                      xrt__rchoice(c, ndim, vals, nvals, dims); c++) {
    xrt_status t = xrt__rattempt(p, entry, types, ndim, dims, out);
    if (!t) {
      s0 = XRT_OK;
      break;
    }
    if (c == 0) {
      s0 = t;
      first = xrt__strdup_with(&p->allocator, xrt_last_error());
    }
    if (t == XRT_RESOURCE_EXHAUSTED || t == XRT_INTERNAL) {
      s0 = t;
      break;
    }
  }
  if (!s && s0) s = xrt__fail(s0, "%s", first ? first : "refinement failed");
  else if (!s && !nvals) s = XRT_NOT_FOUND;
  xrt__free(&p->allocator, first);
  xrt__free(&p->allocator, vals);
  xrt__free(&p->allocator, dims);
  return s;
}

/* The entry's argument types: the given shapes (checked) or its own. */
static xrt_status xrt__rentry_types(xrt__program *p, const xrt_ir_func *f,
                                    const xrt_compile_options *o,
                                    xrt_ir_type **out) {
  int32_t n = f->body.num_args;
  /* not p's arena: other threads may compile p at the same time */
  xrt_ir_type *t = (xrt_ir_type *)xrt__calloc(&p->allocator, (size_t)n + 1,
                                              sizeof *t);
  *out = t;
  if (!t) return xrt__nomem("the entry's argument types");
  bool given = o && o->num_arg_shapes > 0 && o->arg_shapes;
  xrt_status s = given ? xrt__rcheck_args(f, o) : XRT_OK;
  for (int32_t a = 0; !s && a < n; a++) {
    t[a] = f->value_types[f->body.args[a]];
    if (given) t[a].shape = o->arg_shapes[a];
    else if (xrt__type_dynamic(&t[a]))
      s = xrt__fail(XRT_INVALID_ARGUMENT, "%s:%d:%d: @%s: argument %d has "
                    "dynamic dimensions: give every argument's shape "
                    "(xrt_compile_options.arg_shapes) to compile this "
                    "shape-polymorphic program", f->loc.file,
                    (int)f->loc.line, (int)f->loc.col, f->name, (int)a);
  }
  return s;
}

static xrt_status xrt__refine(xrt__program *p, int32_t entry,
                              const xrt_compile_options *o,
                              xrt__program **out) {
  const xrt_ir_func *f = &p->module->funcs[entry];
  xrt_ir_type *types = NULL;
  xrt_status s = xrt__rentry_types(p, f, o, &types);
  if (s) {
    xrt__free(&p->allocator, types);
    return s;
  }
  s = xrt__rattempt(p, entry, types, 0, NULL, out);
  int32_t ndim = xrt__rdim_args(f);
  if (s && ndim && s != XRT_RESOURCE_EXHAUSTED && s != XRT_INTERNAL &&
      o && o->num_arg_shapes > 0) {
    char *msg = xrt__strdup_with(&p->allocator, xrt_last_error());
    xrt_status t = xrt__rsearch(p, entry, types, ndim, out);
    if (t == XRT_NOT_FOUND) t = xrt__fail(s, "%s", msg ? msg : "");
    xrt__free(&p->allocator, msg);
    s = t;
  }
  xrt__free(&p->allocator, types);
  return s;
}

XRT__PRIVATE xrt_status xrt__refine_executable(xrt__executable *e,
                                               const xrt_compile_options *o) {
  xrt__program *p = e->program;
  if (!p->dynamic && !(o && o->num_arg_shapes > 0 && o->arg_shapes))
    return XRT_OK;
  int32_t entry;
  xrt_status s = xrt__find_entry(p->module, o ? o->entry : NULL, &entry);
  if (s) return s;
  if (!p->dynamic) return xrt__rcheck_args(&p->module->funcs[entry], o);
  xrt__program *q;
  if ((s = xrt__refine(p, entry, o, &q))) return s;
  e->program = q;
  xrt__program_unref(p);
  return XRT_OK;
}
