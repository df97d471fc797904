/*
 * src/core/parse_ops.c - the parser, part 2: values, ops and regions in the
 * generic syntax; check.* ops lowered to host calls.
 * Part of the core of xrt; MIT licensed, see LICENSE.
 */
#include "internal.h"

/* ---------------------------------------------------------------------
 * Values, ops and regions
 * ------------------------------------------------------------------- */

/* ---- value types: each distinct type is stored once (a program has a
 * few dozen, and copying 168-byte types per value was a tenth of the time);
 * xrt_ir_func.value_types is expanded from the indices at the end. ---- */

static uint32_t xrt__type_hash(const xrt_ir_type *t) {
  uint32_t h = (uint32_t)t->kind * 31u + (uint32_t)t->shape.dtype;
  h = h * 31u + (uint32_t)t->shape.rank;
  for (int i = 0; i < t->shape.rank; i++) h = h * 0x9e3779b1u + (uint32_t)t->shape.dims[i];
  h ^= (uint32_t)(uintptr_t)t->quant ^ (uint32_t)(uintptr_t)t->elems;
  return h ^ (h >> 15);
}

/* Same struct (quant and tuple elements by identity). */
static bool xrt__type_same(const xrt_ir_type *a, const xrt_ir_type *b) {
  if (a->kind != b->kind || a->shape.dtype != b->shape.dtype ||
      a->shape.rank != b->shape.rank || a->quant != b->quant ||
      a->num_elems != b->num_elems || a->elems != b->elems)
    return false;
  for (int i = 0; i < a->shape.rank; i++)
    if (a->shape.dims[i] != b->shape.dims[i]) return false;
  return true;
}

static void xrt__utab_grow(xrt__parser *p) {
  uint32_t nb = p->utab ? (p->umask + 1) * 2 : 256;
  int32_t *tab = xrt__alloc(&p->arena->allocator, nb * sizeof *tab);
  if (!tab) xrt__oom(p);
  memset(tab, 0xff, nb * sizeof *tab);
  for (size_t i = 0; i < p->utypes.n; i++) {
    uint32_t h = xrt__type_hash(&XRT__VAT(p->utypes, xrt_ir_type, i)) & (nb - 1);
    while (tab[h] >= 0) h = (h + 1) & (nb - 1);
    tab[h] = (int32_t)i;
  }
  xrt__free(&p->arena->allocator, p->utab);
  p->utab = tab;
  p->umask = nb - 1;
}

/* The index of t in p->utypes, added if new. */
static int32_t xrt__intern_type(xrt__parser *p, const xrt_ir_type *t) {
  if (!p->utab || p->utypes.n * 2 >= p->umask) xrt__utab_grow(p);
  uint32_t h = xrt__type_hash(t) & p->umask;
  for (int32_t i; (i = p->utab[h]) >= 0; h = (h + 1) & p->umask)
    if (xrt__type_same(&XRT__VAT(p->utypes, xrt_ir_type, i), t)) return i;
  *(xrt_ir_type *)xrt__push_raw(p, &p->utypes) = *t;
  p->utab[h] = (int32_t)(p->utypes.n - 1);
  return p->utab[h];
}

XRT__PRIVATE int32_t xrt__new_value(xrt__parser *p, const xrt_ir_type *t) {
  if (p->vtypes.n >= (size_t)INT32_MAX)
    xrt__perr(p, p->p, XRT_RESOURCE_EXHAUSTED, "too many values");
  int32_t u = xrt__intern_type(p, t);
  *(int32_t *)xrt__push_raw(p, &p->vtypes) = u;
  return (int32_t)(p->vtypes.n - 1);
}

static void xrt__define(xrt__parser *p, xrt__name nm, int32_t id) {
  if (xrt__sym_find(&p->vals, nm.s, nm.n))
    xrt__perr(p, nm.s - 1, XRT_INVALID_ARGUMENT, "redefinition of value %%%.*s",
              (int)nm.n, nm.s);
  xrt__sym_add(p, &p->vals, nm.s, nm.n, id, nm.count);
}

/* %name or %name#k -> value id. */
XRT__PRIVATE int32_t xrt__parse_use(xrt__parser *p) {
  xrt__ws(p);
  const char *at = p->p;
  xrt__expect(p, '%');
  xrt__tok t = xrt__suffix_name(p);
  int64_t idx = 0;
  if (p->p < p->end && *p->p == '#') {
    p->p++;
    xrt__num r = xrt__scan_num(p);
    idx = xrt__num_to_i64(p, &r);
  }
  xrt__sym *s = xrt__sym_find(&p->vals, t.s, t.n);
  if (!s)
    xrt__perr(p, at, XRT_INVALID_ARGUMENT, "use of undefined value %%%.*s",
              (int)t.n, t.s);
  if (idx < 0 || idx >= s->count)
    xrt__perr(p, at, XRT_INVALID_ARGUMENT, "%%%.*s has %d results, not #%lld",
              (int)t.n, t.s, (int)s->count, (long long)idx);
  return s->id + (int32_t)idx;
}

/* Pushes an operand or block argument written at `at` (NULL: none). */
XRT__PRIVATE void xrt__push_operand_at(xrt__parser *p, int32_t id, const char *at) {
  *(int32_t *)xrt__push_raw(p, &p->ints) = id;
  *(const char **)xrt__push_raw(p, &p->uses) = at;
}

static void xrt__push_operand(xrt__parser *p, int32_t id) {
  xrt__push_operand_at(p, id, NULL);
}

/* End of the `%name[#k]` written at at (for messages). */
XRT__PRIVATE const char *xrt__use_end(const xrt__parser *p, const char *at) {
  const char *e = at + 1;
  while (e < p->end && (xrt__is_namechar(*e) || *e == '#')) e++;
  return e;
}

/* Parses a use and pushes it as the op's next operand. */
XRT__PRIVATE void xrt__p_operand(xrt__parser *p) {
  xrt__ws(p);
  const char *at = p->p;
  xrt__push_operand_at(p, xrt__parse_use(p), at);
}

/* Drops ints (and their uses) back to mark. */
static void xrt__ints_pop(xrt__parser *p, size_t mark) {
  p->ints.n = p->uses.n = mark;
}

static bool xrt__quant_eq(const xrt_ir_quant *a, const xrt_ir_quant *b) {
  if (!a || !b) return a == b;
  if (a->storage != b->storage || a->expressed != b->expressed ||
      a->storage_min != b->storage_min || a->storage_max != b->storage_max ||
      a->axis != b->axis || a->num_scales != b->num_scales)
    return false;
  for (int32_t i = 0; i < a->num_scales; i++)
    if (a->scales[i] != b->scales[i] || a->zero_points[i] != b->zero_points[i])
      return false;
  return true;
}

/* A tensor's bounds (XRT__TYPE_BOUNDS), or NULL. */
static const xrt_ir_type *xrt__p_bounds(const xrt_ir_type *t) {
  return t->kind == XRT_TYPE_TENSOR && t->elems &&
                 t->elems->kind == XRT__TYPE_BOUNDS
             ? t->elems
             : NULL;
}

XRT__PRIVATE bool xrt__p_type_eq(const xrt_ir_type *a, const xrt_ir_type *b) {
  if (a->kind != b->kind) return false;
  const xrt_ir_type *ba = xrt__p_bounds(a), *bb = xrt__p_bounds(b);
  if (!ba != !bb || (ba && !xrt__p_type_eq(ba, bb))) return false;
  if (a->kind == XRT_TYPE_TUPLE || a->kind == XRT__TYPE_FUTURE) {
    if (a->num_elems != b->num_elems) return false;
    for (int32_t i = 0; i < a->num_elems; i++)
      if (!xrt__p_type_eq(&a->elems[i], &b->elems[i])) return false;
    return true;
  }
  if (a->kind == XRT_TYPE_TOKEN) return true;
  if (a->shape.dtype != b->shape.dtype || a->shape.rank != b->shape.rank)
    return false;
  for (int i = 0; i < a->shape.rank; i++)
    if (a->shape.dims[i] != b->shape.dims[i]) return false;
  return xrt__quant_eq(a->quant, b->quant);
}

/* Appends t in MLIR syntax to buf[*n..cap) (truncating). */
XRT__PRIVATE void xrt__p_type_fmt(const xrt_ir_type *t, char *buf, size_t cap, size_t *n) {
#define XRT__FMT(...)                                                         \
  do {                                                                        \
    if (*n < cap) {                                                           \
      int k_ = snprintf(buf + *n, cap - *n, __VA_ARGS__);                     \
      *n = k_ < 0 ? cap : *n + (size_t)k_;                                    \
    }                                                                         \
  } while (0)
  if (t->kind == XRT_TYPE_TOKEN) {
    XRT__FMT("!stablehlo.token");
  } else if (t->kind == XRT_TYPE_TUPLE || t->kind == XRT__TYPE_FUTURE) {
    XRT__FMT(t->kind == XRT_TYPE_TUPLE ? "tuple<" : "!stablehlo.future<");
    for (int32_t i = 0; i < t->num_elems; i++) {
      if (i) XRT__FMT(", ");
      xrt__p_type_fmt(&t->elems[i], buf, cap, n);
    }
    XRT__FMT(">");
  } else {
    XRT__FMT(t->kind == XRT__TYPE_MEMREF ? "memref<" : "tensor<");
    for (int i = 0; i < t->shape.rank; i++)
      if (t->shape.dims[i] < 0) XRT__FMT("?x"); /* XRT_DIM_DYNAMIC */
      else XRT__FMT("%lldx", (long long)t->shape.dims[i]);
    const xrt_ir_quant *q = t->quant; /* with its scales: types differ there */
    if (q) XRT__FMT("!quant.uniform<%s:%s", xrt_dtype_name(q->storage),
                    xrt_dtype_name(q->expressed));
    if (q && q->axis >= 0) XRT__FMT(":%d, {", (int)q->axis);
    else if (q) XRT__FMT(", ");
    for (int32_t i = 0; q && i < q->num_scales; i++)
      XRT__FMT("%s%g:%lld", i ? ", " : "", q->scales[i],
               (long long)q->zero_points[i]);
    if (q) XRT__FMT("%s>", q->axis >= 0 ? "}" : "");
    else
      XRT__FMT("%s", xrt__dtype_spelling(t->shape.dtype));
    const xrt_ir_type *b = xrt__p_bounds(t);
    for (int i = 0; b && i < b->shape.rank; i++)
      if (b->shape.dims[i] < 0) XRT__FMT("%s?", i ? ", " : ", #stablehlo.bounds<");
      else XRT__FMT("%s%lld", i ? ", " : ", #stablehlo.bounds<",
                    (long long)b->shape.dims[i]);
    if (b && b->shape.rank) XRT__FMT(">");
    XRT__FMT(">");
  }
#undef XRT__FMT
  if (*n >= cap && cap >= 4) memcpy(buf + cap - 4, "...", 4);
}

/* The op's syntax states type t for its operand k: it must be the type the
 * value was defined with (reported at the use, as MLIR does). */
XRT__PRIVATE void xrt__check_use(xrt__parser *p, const xrt__opb *b, int32_t k,
                           const xrt_ir_type *t) {
  size_t i = b->operands_mark + (size_t)k;
  const xrt_ir_type *have = xrt__value_type(p, XRT__VAT(p->ints, int32_t, i));
  const char *at = XRT__VAT(p->uses, const char *, i);
  if (!at || xrt__p_type_eq(have, t)) return;
  const char *e = xrt__use_end(p, at);
  char want[160], got[160];
  size_t nw = 0, ng = 0;
  xrt__p_type_fmt(t, want, sizeof want, &nw);
  xrt__p_type_fmt(have, got, sizeof got, &ng);
  xrt__perr(p, at, XRT_INVALID_ARGUMENT,
            "use of value '%.*s' expects type %s but it has type %s",
            (int)(e - at), at, want, got);
}

/* Operands [from, from + n) all have the written type t. */
static void xrt__check_uses(xrt__parser *p, const xrt__opb *b, int32_t from,
                            int32_t n, const xrt_ir_type *t) {
  for (int32_t k = from; k < from + n; k++) xrt__check_use(p, b, k, t);
}

XRT__PRIVATE void xrt__add_attr(xrt__parser *p, const char *name, const xrt_ir_attr *a) {
  xrt_ir_attr *d = xrt__push(p, &p->attrs);
  *d = *a;
  d->name = name;
}

XRT__PRIVATE xrt_ir_attr *xrt__find_attr(xrt__parser *p, xrt__opb *b, const char *name) {
  for (size_t i = b->attrs_mark; i < p->attrs.n; i++) {
    xrt_ir_attr *a = &XRT__VAT(p->attrs, xrt_ir_attr, i);
    if (a->name && !strcmp(a->name, name)) return a;
  }
  return NULL;
}

XRT__PRIVATE void xrt__push_op(xrt__parser *p, const xrt_ir_op *op) {
  *(xrt_ir_op *)xrt__push_raw(p, &p->ops) = *op;
}

/* Copies the op's pieces to the arena, defines its results, pushes it. */
XRT__PRIVATE void xrt__finish_op(xrt__parser *p, xrt__opb *b) {
  int32_t nt = (int32_t)(p->tys.n - b->rtypes_mark);
  if (b->num_names && nt != b->num_names)
    xrt__perr(p, b->at, XRT_INVALID_ARGUMENT,
              "op '%s' defines %d results but its type has %d",
              b->op.name, (int)b->num_names, (int)nt);
  int32_t *res = nt ? xrt__p_alloc(p, (size_t)nt * sizeof *res) : NULL;
  for (int32_t i = 0; i < nt; i++)
    res[i] = xrt__new_value(p, &XRT__VAT(p->tys, xrt_ir_type, b->rtypes_mark + i));
  int32_t id = 0;
  for (size_t i = b->names_mark; i < p->names.n; i++) {
    xrt__name nm = XRT__VAT(p->names, xrt__name, i);
    xrt__define(p, nm, res ? res[id] : 0);
    id += nm.count;
  }
  b->op.num_results = nt;
  b->op.results = res;
  b->op.num_operands = (int32_t)(p->ints.n - b->operands_mark);
  b->op.operands = xrt__vcopy(p, &p->ints, b->operands_mark);
  b->op.num_attrs = (int32_t)(p->attrs.n - b->attrs_mark);
  b->op.attrs = xrt__vcopy(p, &p->attrs, b->attrs_mark);
  b->op.num_regions = (int32_t)(p->regions.n - b->regions_mark);
  b->op.regions = xrt__vcopy(p, &p->regions, b->regions_mark);
  p->names.n = b->names_mark;
  xrt__ints_pop(p, b->operands_mark);
  p->attrs.n = b->attrs_mark;
  p->regions.n = b->regions_mark;
  p->tys.n = b->rtypes_mark;
  xrt__push_op(p, &b->op);
}

XRT__PRIVATE void xrt__rgn_begin(xrt__parser *p, xrt__rgn *r) {
  xrt__depth_in(p);
  r->sym_mark = p->vals.syms.n;
  r->ops_mark = p->ops.n;
  r->args_mark = p->ints.n;
}

/* Adds a block argument (nm.n == 0: unnamed). */
XRT__PRIVATE int32_t xrt__rgn_arg(xrt__parser *p, xrt__name nm, const xrt_ir_type *t) {
  int32_t id = xrt__new_value(p, t);
  if (nm.n) xrt__define(p, nm, id);
  xrt__push_operand_at(p, id, nm.n ? nm.s - 1 : NULL);
  return id;
}

XRT__PRIVATE xrt_ir_region xrt__rgn_end(xrt__parser *p, xrt__rgn *r) {
  xrt_ir_region g;
  g.num_args = (int32_t)(p->ints.n - r->args_mark);
  g.args = xrt__vcopy(p, &p->ints, r->args_mark);
  g.num_ops = (int32_t)(p->ops.n - r->ops_mark);
  g.ops = xrt__vcopy(p, &p->ops, r->ops_mark);
  xrt__ints_pop(p, r->args_mark);
  p->ops.n = r->ops_mark;
  xrt__sym_pop(&p->vals, r->sym_mark);
  p->depth--;
  return g;
}

XRT__PRIVATE void xrt__push_region(xrt__parser *p, const xrt_ir_region *g) {
  *(xrt_ir_region *)xrt__push_raw(p, &p->regions) = *g;
}

/* `%name : type [loc]` of a block or function argument. */
XRT__PRIVATE void xrt__parse_arg(xrt__parser *p, xrt__name *nm, xrt_ir_type *t) {
  xrt__expect(p, '%');
  xrt__tok n = xrt__suffix_name(p);
  nm->s = n.s;
  nm->n = (uint32_t)n.n;
  nm->count = 1;
  xrt__expect(p, ':');
  xrt__parse_type(p, t);
}

/* ^bb0(%a: T, ...): */
static void xrt__parse_block_label(xrt__parser *p) {
  p->p++; /* '^' */
  xrt__suffix_name(p);
  if (xrt__eat(p, '(') && !xrt__eat(p, ')')) {
    do {
      xrt__name nm;
      xrt_ir_type t;
      xrt__parse_arg(p, &nm, &t);
      xrt__skip_loc(p);
      xrt__rgn_arg(p, nm, &t);
    } while (xrt__eat(p, ','));
    xrt__expect(p, ')');
  }
  xrt__expect(p, ':');
}

/* `{ [^bb(args):] ops }` into a region already begun. */
XRT__PRIVATE void xrt__parse_block(xrt__parser *p, xrt__rgn *r, bool label_ok) {
  xrt__expect(p, '{');
  if (label_ok && xrt__peek(p) == '^') xrt__parse_block_label(p);
  for (;;) {
    int c = xrt__peek(p);
    if (c == '}') break;
    if (c < 0) xrt__expected(p, "'}'");
    if (c == '^')
      xrt__perr(p, p->p, XRT_UNIMPLEMENTED, "regions with several blocks");
    xrt__parse_op(p);
  }
  p->p++;
  (void)r;
}

/* A whole generic region `{...}` with its own scope. */
XRT__PRIVATE void xrt__parse_region(xrt__parser *p) {
  xrt__rgn r;
  xrt__rgn_begin(p, &r);
  xrt__parse_block(p, &r, true);
  xrt_ir_region g = xrt__rgn_end(p, &r);
  xrt__push_region(p, &g);
}

/* Parses `T, T, ...` or `(T, ...)` types onto p->tys; returns the count. */
XRT__PRIVATE int32_t xrt__parse_types(xrt__parser *p, bool parens) {
  size_t mark = p->tys.n;
  if (parens) xrt__expect(p, '(');
  if (!parens || xrt__peek(p) != ')') {
    do {
      xrt_ir_type t;
      xrt__parse_type(p, &t);
      *(xrt_ir_type *)xrt__push_raw(p, &p->tys) = t;
    } while (xrt__eat(p, ','));
  }
  if (parens) xrt__expect(p, ')');
  return (int32_t)(p->tys.n - mark);
}

/* `(ins) -> outs`; leaves outs on p->tys as the result types. */
XRT__PRIVATE void xrt__parse_fn_type(xrt__parser *p, xrt__opb *b) {
  xrt__ws(p);
  const char *at = p->p;
  int32_t nops = (int32_t)(p->ints.n - b->operands_mark);
  int32_t nin = xrt__parse_types(p, true);
  if (nin != nops)
    xrt__perr(p, at, XRT_INVALID_ARGUMENT,
              "op '%s' has %d operands but its type lists %d",
              b->op.name, (int)nops, (int)nin);
  p->tys.n -= (size_t)nin; /* still readable: nothing pushed since */
  for (int32_t k = 0; k < nin; k++)
    xrt__check_use(p, b, k, &XRT__VAT(p->tys, xrt_ir_type, p->tys.n + (size_t)k));
  if (!xrt__eat_arrow(p)) xrt__expected(p, "'->'");
  xrt__parse_types(p, xrt__peek(p) == '(');
}

/* Checks the operand types a pretty type list `: T, ...` (k types, not a
 * function type) states.  Each type is an operand's when there is one per
 * operand, or the single type stands for every operand (elementwise ops,
 * return, check.*); select's `pred_type, result_type` covers its operands
 * too.  tuple and complex list only their result's type. */
static void xrt__sig_uses(xrt__parser *p, const xrt__opb *b,
                          const xrt_ir_type *ty, int32_t k) {
  int32_t nops = (int32_t)(p->ints.n - b->operands_mark), nres = b->num_names;
  xrt_opcode code = b->op.code;
  if (code == XRT_OP_TUPLE || code == XRT_OP_COMPLEX) return;
  if (nres == k || nres == 0) {
    if (k == nops)
      for (int32_t i = 0; i < k; i++) xrt__check_use(p, b, i, &ty[i]);
    else if (k == 1)
      xrt__check_uses(p, b, 0, nops, &ty[0]);
  } else if (code == XRT_OP_SELECT && nres == 1 && k == 2 && nops == 3) {
    xrt__check_use(p, b, 0, &ty[0]);
    xrt__check_uses(p, b, 1, 2, &ty[1]);
  }
}

/* The type after ':' in pretty syntax: a function type, or a type list
 * whose meaning depends on how many results the op declares. */
XRT__PRIVATE void xrt__parse_pretty_sig(xrt__parser *p, xrt__opb *b) {
  xrt__ws(p);
  const char *at = p->p;
  if (xrt__peek(p) == '(') {
    xrt__parse_fn_type(p, b);
    return;
  }
  int32_t nops = (int32_t)(p->ints.n - b->operands_mark);
  size_t tm = p->tys.n;
  int32_t k = xrt__parse_types(p, false), nres = b->num_names;
  if (xrt__eat_arrow(p)) { /* CHLO's `T, ... -> R` or `T -> (R, ...)` */
    if (k != nops)
      xrt__perr(p, at, XRT_INVALID_ARGUMENT,
                "op '%s' has %d operands but its type lists %d",
                b->op.name, (int)nops, (int)k);
    p->tys.n -= (size_t)k; /* still readable: nothing pushed since */
    for (int32_t i = 0; i < k; i++)
      xrt__check_use(p, b, i, &XRT__VAT(p->tys, xrt_ir_type, p->tys.n + (size_t)i));
    xrt__parse_types(p, xrt__peek(p) == '(');
    return;
  }
  xrt__sig_uses(p, b, &XRT__VAT(p->tys, xrt_ir_type, tm), k);
  if (nres == k) return;
  if (nres == 1) { /* select: pred type, result type */
    XRT__VAT(p->tys, xrt_ir_type, b->rtypes_mark) =
        XRT__VAT(p->tys, xrt_ir_type, p->tys.n - 1);
    p->tys.n = b->rtypes_mark + 1;
    return;
  }
  if (nres == 0 && (k == nops || k == 1)) {
    p->tys.n = b->rtypes_mark;
    return;
  }
  xrt__perr(p, at, XRT_INVALID_ARGUMENT,
            "op '%s' has %d operands and %d results but lists %d types",
            b->op.name, (int)nops, (int)nres, (int)k);
}

/* Optional `{attr-dict}` onto the op's attributes. */
XRT__PRIVATE void xrt__opt_attr_dict(xrt__parser *p) {
  if (xrt__eat(p, '{')) xrt__parse_dict_entries(p, '}');
}

/* ---- check.* lowering ---- */

/* The interpreter's test ops (check.*, interpreter.print/probe/
 * run_parallel) become custom_calls of host functions with the op's name
 * as target. */
enum { XRT__P_CHECK_EQ = 1, XRT__CHECK_ALMOST_EQ, XRT__P_CHECK_CLOSE,
       XRT__P_PRINT, XRT__P_PROBE, XRT__P_SERIALIZED_EQ, XRT__P_RUN_PARALLEL };

static const char *const xrt__check_targets[] = {
    "", "check.expect_eq", "check.expect_almost_eq", "check.expect_close",
    "interpreter.print", "interpreter.probe", "check.expect_serialized_eq",
    "interpreter.run_parallel"};

XRT__PRIVATE int xrt__p_check_kind(xrt__tok t, bool *is_const) {
  static const char *const names[] = {"check.expect_eq", "check.expect_almost_eq",
                                      "check.expect_close"};
  for (int i = XRT__P_PRINT; i <= XRT__P_RUN_PARALLEL; i++)
    if (xrt__tok_is(t, xrt__check_targets[i])) return i;
  if (t.n < 6 || memcmp(t.s, "check.", 6)) return 0;
  for (int i = 0; i < 3; i++) {
    size_t n = strlen(names[i]);
    if (t.n >= n && !memcmp(t.s, names[i], n)) {
      *is_const = t.n == n + 6 && !memcmp(t.s + n, "_const", 6);
      if (t.n == n || (*is_const && i < 2)) return i + 1;
    }
  }
  return 0;
}

/* The constant operand of check.expect_*_const: a CONSTANT op before it. */
XRT__PRIVATE void xrt__check_const_operand(xrt__parser *p, xrt__opb *b,
                                     const xrt_ir_literal *lit) {
  xrt_ir_op c;
  memset(&c, 0, sizeof c);
  c.code = XRT_OP_CONSTANT;
  c.name = xrt_opcode_name(XRT_OP_CONSTANT);
  c.loc = b->op.loc;
  xrt_ir_attr *a = xrt__p_alloc(p, sizeof *a);
  a->name = "value";
  a->kind = XRT_ATTR_DENSE;
  a->lit = lit;
  c.attrs = a;
  c.num_attrs = 1;
  int32_t *res = xrt__p_alloc(p, sizeof *res);
  *res = xrt__new_value(p, &lit->type);
  c.results = res;
  c.num_results = 1;
  xrt__push_op(p, &c);
  xrt__push_operand(p, *res);
}

/* interpreter.probe returns its operand (one result of its type);
 * probe_id is a string; expect_serialized_eq's iter defaults to 0. */
static void xrt__interp_finish(xrt__parser *p, xrt__opb *b) {
  int32_t nops = (int32_t)(p->ints.n - b->operands_mark);
  int32_t nres = (int32_t)(p->tys.n - b->rtypes_mark);
  if (nops != 1)
    xrt__perr(p, b->at, XRT_INVALID_ARGUMENT, "%s takes one operand, not %d",
              xrt__check_targets[b->check], (int)nops);
  const xrt_ir_type *t = xrt__value_type(p, XRT__VAT(p->ints, int32_t, b->operands_mark));
  if (b->check == XRT__P_PROBE && nres == 0 && !b->num_names)
    *(xrt_ir_type *)xrt__push_raw(p, &p->tys) = *t;
  else if (nres != (b->check == XRT__P_PROBE))
    xrt__perr(p, b->at, XRT_INVALID_ARGUMENT, "%s has %d results, not %d",
              xrt__check_targets[b->check], (int)nres, b->check == XRT__P_PROBE);
  if (b->check == XRT__P_PROBE &&
      !xrt__p_type_eq(&XRT__VAT(p->tys, xrt_ir_type, b->rtypes_mark), t))
    xrt__perr(p, b->at, XRT_INVALID_ARGUMENT,
              "interpreter.probe's result type must be its operand's");
  if (b->check == XRT__P_PRINT) return;
  xrt_ir_attr *id = xrt__find_attr(p, b, "probe_id");
  if (!id || id->kind != XRT_ATTR_STRING)
    xrt__perr(p, b->at, XRT_INVALID_ARGUMENT, "%s needs a string probe_id",
              xrt__check_targets[b->check]);
  if (b->check != XRT__P_SERIALIZED_EQ) return;
  xrt_ir_attr *it = xrt__find_attr(p, b, "iter");
  if (it && (it->kind != XRT_ATTR_INT || it->i < 0))
    xrt__perr(p, b->at, XRT_INVALID_ARGUMENT, "iter must be an integer >= 0");
  if (!it) {
    xrt_ir_attr a;
    memset(&a, 0, sizeof a);
    a.kind = XRT_ATTR_INT;
    xrt__add_attr(p, "iter", &a);
  }
}

/* Is a a LIST of n >= 1 SYMBOLs (n stored in *n)? */
static bool xrt__symbol_list(const xrt_ir_attr *a, int32_t *n) {
  if (!a || a->kind != XRT_ATTR_LIST || a->num_items < 1) return false;
  for (int32_t i = 0; i < a->num_items; i++)
    if (a->items[i].kind != XRT_ATTR_SYMBOL) return false;
  *n = a->num_items;
  return true;
}

/* interpreter.run_parallel: programs = [[@f, ...], ...] (replicas of
 * equally many partitions) and an optional infeed = [@q, ...].  Operands
 * and results are matched with the programs' parameters and results when
 * the host function runs them (the functions may come later in the
 * module). */
static void xrt__run_parallel_finish(xrt__parser *p, xrt__opb *b) {
  xrt_ir_attr *progs = xrt__find_attr(p, b, "programs");
  int32_t parts = 0, n = 0;
  bool ok = progs && progs->kind == XRT_ATTR_LIST && progs->num_items >= 1;
  for (int32_t r = 0; ok && r < progs->num_items; r++) {
    ok = xrt__symbol_list(&progs->items[r], &n) && (r == 0 || n == parts);
    parts = n;
  }
  if (!ok)
    xrt__perr(p, b->at, XRT_INVALID_ARGUMENT, "interpreter.run_parallel needs "
              "programs = [[@f, ...], ...]: one non-empty list of functions "
              "per replica, all of the same length");
  xrt_ir_attr *feed = xrt__find_attr(p, b, "infeed");
  if (feed && !xrt__symbol_list(feed, &n))
    xrt__perr(p, b->at, XRT_INVALID_ARGUMENT, "interpreter.run_parallel's "
              "infeed must be a list of functions [@f, ...]");
}

/* Target name and default attributes of a lowered check op. */
XRT__PRIVATE void xrt__check_finish(xrt__parser *p, xrt__opb *b) {
  xrt_ir_attr a;
  memset(&a, 0, sizeof a);
  b->op.code = XRT_OP_CUSTOM_CALL;
  b->op.name = xrt_opcode_name(XRT_OP_CUSTOM_CALL);
  a.kind = XRT_ATTR_STRING;
  a.s = xrt__check_targets[b->check];
  a.n = (int64_t)strlen(a.s);
  xrt__add_attr(p, "call_target_name", &a);
  if (b->check == XRT__P_RUN_PARALLEL) {
    xrt__run_parallel_finish(p, b);
  } else if (b->check >= XRT__P_PRINT) {
    xrt__interp_finish(p, b);
  } else if (b->check == XRT__CHECK_ALMOST_EQ) {
    xrt_ir_attr *t = xrt__find_attr(p, b, "tolerance");
    if (!t) {
      memset(&a, 0, sizeof a);
      a.kind = XRT_ATTR_FLOAT;
      a.f = 0.0001;
      xrt__add_attr(p, "tolerance", &a);
    } else if (t->kind == XRT_ATTR_INT) {
      t->kind = XRT_ATTR_FLOAT;
      t->f = (double)t->i;
    }
  } else if (b->check == XRT__P_CHECK_CLOSE) {
    static const char *const ulps[] = {"min_ulp_difference", "max_ulp_difference"};
    for (int i = 0; i < 2; i++) {
      if (xrt__find_attr(p, b, ulps[i])) continue;
      memset(&a, 0, sizeof a);
      a.kind = XRT_ATTR_INT;
      a.i = i ? 3 : 0;
      xrt__add_attr(p, ulps[i], &a);
    }
  }
}
