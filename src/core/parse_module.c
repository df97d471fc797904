/*
 * src/core/parse_module.c - the parser, part 4: functions, module attributes and
 * the module; xrt_program_parse.
 * Part of the core of xrt; MIT licensed, see LICENSE.
 */
#include "internal.h"

/* ---------------------------------------------------------------------
 * Functions and the module
 * ------------------------------------------------------------------- */

/* `(%a: T {attrs} loc(..), ...)` as the body's block arguments. */
static void xrt__parse_func_args(xrt__parser *p) {
  xrt__expect(p, '(');
  if (xrt__eat(p, ')')) return;
  int32_t index = 0;
  do {
    xrt__name nm;
    xrt_ir_type t;
    xrt__ws(p);
    const char *at = p->p;
    xrt__parse_arg(p, &nm, &t);
    size_t am = p->attrs.n;
    xrt__opt_attr_dict(p);
    xrt__sdy_note_attrs(p, am, false, index++, at); /* shardings: kept aside */
    p->attrs.n = am;
    xrt__skip_loc(p);
    xrt__rgn_arg(p, nm, &t);
  } while (xrt__eat(p, ','));
  xrt__expect(p, ')');
}

/* `-> T` or `-> (T {attrs}, ...)` onto p->tys; returns the count. */
static int32_t xrt__parse_func_results(xrt__parser *p) {
  size_t mark = p->tys.n;
  if (!xrt__eat_arrow(p)) return 0;
  bool paren = xrt__eat(p, '(');
  if (!paren || !xrt__eat(p, ')')) {
    do {
      xrt_ir_type t;
      xrt__ws(p);
      const char *at = p->p;
      xrt__parse_type(p, &t);
      *(xrt_ir_type *)xrt__push_raw(p, &p->tys) = t;
      size_t am = p->attrs.n;
      if (paren) xrt__opt_attr_dict(p);
      xrt__sdy_note_attrs(p, am, true, (int32_t)(p->tys.n - mark - 1), at);
      p->attrs.n = am;
      xrt__skip_loc(p);
    } while (paren && xrt__eat(p, ','));
    if (paren) xrt__expect(p, ')');
  }
  return (int32_t)(p->tys.n - mark);
}

/* Records a parsed function with the values of its body. */
static void xrt__func_add(xrt__parser *p, xrt_ir_func *f, const char *name,
                          size_t name_n) {
  size_t n = p->vtypes.n;
  xrt_ir_type *vt = n ? xrt__p_alloc(p, n * sizeof *vt) : NULL;
  for (size_t i = 0; i < n; i++) vt[i] = *xrt__value_type(p, (int32_t)i);
  f->num_values = (int32_t)n;
  f->value_types = vt;
  xrt__sym_add(p, &p->funcs, name, name_n, (int32_t)p->fns.n, 1);
  *(xrt_ir_func *)xrt__push_raw(p, &p->fns) = *f;
}

/* Properties of a generic func.func. */
typedef struct xrt__gfunc {
  const char *name, *name_at; /* sym_name, where its value was written */
  size_t name_n;
  bool is_public;             /* sym_visibility is not "private" */
  bool have_type;             /* function_type seen: */
  size_t tmark;               /* its inputs, then results, on p->tys */
  int32_t nin, nres;
} xrt__gfunc;

/* `name = value, ...}` of a generic func.func's properties or attributes
 * (the opening brace consumed).  function_type is parsed here since a
 * function type is no attribute value; arg_attrs, res_attrs and others are
 * parsed and ignored. */
static void xrt__gfunc_props(xrt__parser *p, xrt__gfunc *g) {
  if (xrt__eat(p, '}')) return;
  do {
    xrt__ws(p);
    const char *kat = p->p;
    xrt__tok k = xrt__peek(p) == '"' ? xrt__string_raw(p) : xrt__ident(p);
    if (!k.n) xrt__expected(p, "an attribute name");
    if (xrt__tok_is(k, "function_type")) {
      if (g->have_type)
        xrt__perr(p, kat, XRT_INVALID_ARGUMENT, "duplicate function_type");
      xrt__expect(p, '=');
      g->tmark = p->tys.n;
      g->nin = xrt__parse_types(p, true);
      if (!xrt__eat_arrow(p)) xrt__expected(p, "'->'");
      if (xrt__peek(p) == '(') {
        g->nres = xrt__parse_types(p, true);
      } else { /* one type: a ',' here ends the attribute */
        xrt_ir_type t;
        xrt__parse_type(p, &t);
        *(xrt_ir_type *)xrt__push_raw(p, &p->tys) = t;
        g->nres = 1;
      }
      g->have_type = true;
      continue;
    }
    xrt_ir_attr a;
    memset(&a, 0, sizeof a);
    xrt__ws(p);
    const char *vat = p->p;
    if (xrt__eat(p, '=')) {
      xrt__ws(p);
      vat = p->p;
      xrt__parse_attr(p, &a, true);
    }
    bool name = xrt__tok_is(k, "sym_name"), vis = xrt__tok_is(k, "sym_visibility");
    if ((name || vis) && a.kind != XRT_ATTR_STRING)
      xrt__perr(p, vat, XRT_INVALID_ARGUMENT, "expected a string");
    if (name) g->name = a.s, g->name_n = (size_t)a.n, g->name_at = vat;
    if (vis) g->is_public = strcmp(a.s, "private") != 0;
  } while (xrt__eat(p, ','));
  xrt__expect(p, '}');
}

/* `: () -> ()` of generic module and function ops. */
static void xrt__expect_unit_fn_type(xrt__parser *p) {
  xrt__expect(p, ':');
  xrt__expect(p, '(');
  xrt__expect(p, ')');
  if (!xrt__eat_arrow(p)) xrt__expected(p, "'->'");
  xrt__expect(p, '(');
  xrt__expect(p, ')');
}

static void xrt__parse_func(xrt__parser *p) {
  xrt__ws(p);
  const char *at = p->p;
  xrt_ir_func f;
  memset(&f, 0, sizeof f);
  xrt__loc_of(p, at, &f.loc.line, &f.loc.col);
  f.loc.file = p->file;
  xrt__expect_kw(p, "func.func");
  f.is_public = !xrt__eat_kw(p, "private");
  if (f.is_public && !xrt__eat_kw(p, "public")) xrt__eat_kw(p, "nested");
  xrt__ws(p);
  const char *nat = p->p;
  xrt__expect(p, '@');
  xrt__tok name;
  if (xrt__peek(p) == '"') name = xrt__string_raw(p);
  else name = xrt__suffix_name(p);
  f.name = xrt__strdup(p, name.s, name.n);
  if (xrt__sym_find(&p->funcs, name.s, name.n))
    xrt__perr(p, nat, XRT_INVALID_ARGUMENT, "redefinition of function @%.*s",
              (int)name.n, name.s);
  xrt__sym_pop(&p->vals, 0);
  p->vtypes.n = 0;
  xrt__rgn r;
  xrt__rgn_begin(p, &r);
  xrt__parse_func_args(p);
  size_t tmark = p->tys.n;
  f.num_results = xrt__parse_func_results(p);
  f.result_types = xrt__vcopy(p, &p->tys, tmark);
  p->tys.n = tmark;
  if (xrt__eat_kw(p, "attributes")) {
    size_t am = p->attrs.n;
    xrt__expect(p, '{');
    xrt__parse_dict_entries(p, '}');
    p->attrs.n = am;
  }
  if (xrt__peek(p) == '{') xrt__parse_block(p, &r, true);
  f.body = xrt__rgn_end(p, &r);
  xrt__skip_loc(p);
  xrt__func_add(p, &f, name.s, name.n);
}

/* Checks the generic func's entry block arguments against its function
 * type (inputs at tys[g->tmark..]); an empty body (a declaration) gets
 * unnamed arguments of those types. */
static void xrt__gfunc_args(xrt__parser *p, const xrt__rgn *r,
                            const xrt__gfunc *g, const char *body_at) {
  int32_t nargs = (int32_t)(p->ints.n - r->args_mark);
  if (nargs == 0 && p->ops.n == r->ops_mark) {
    xrt__name none = {NULL, 0, 1};
    for (int32_t i = 0; i < g->nin; i++) {
      xrt_ir_type t = XRT__VAT(p->tys, xrt_ir_type, g->tmark + (size_t)i);
      xrt__rgn_arg(p, none, &t);
    }
    return;
  }
  if (nargs != g->nin)
    xrt__perr(p, body_at, XRT_INVALID_ARGUMENT,
              "entry block has %d arguments but the function type has %d",
              (int)nargs, (int)g->nin);
  for (int32_t i = 0; i < nargs; i++) {
    size_t k = r->args_mark + (size_t)i;
    const xrt_ir_type *have = xrt__value_type(p, XRT__VAT(p->ints, int32_t, k));
    const xrt_ir_type *in = &XRT__VAT(p->tys, xrt_ir_type, g->tmark + (size_t)i);
    if (xrt__p_type_eq(have, in)) continue;
    const char *at = XRT__VAT(p->uses, const char *, k);
    char want[160], got[160];
    size_t nw = 0, ng = 0;
    xrt__p_type_fmt(in, want, sizeof want, &nw);
    xrt__p_type_fmt(have, got, sizeof got, &ng);
    xrt__perr(p, at, XRT_INVALID_ARGUMENT,
              "entry block argument '%.*s' has type %s but the function type "
              "says %s",
              (int)(xrt__use_end(p, at) - at), at, got, want);
  }
}

/* `"func.func"() <{function_type = (T) -> T, sym_name = "f", ...}>
 * ({^bb0(%a: T): ...}) : () -> ()`, the properties possibly in a `{...}`
 * dictionary after the region instead; at is the opening quote. */
static void xrt__parse_generic_func(xrt__parser *p, const char *at) {
  xrt_ir_func f;
  xrt__gfunc g;
  memset(&f, 0, sizeof f);
  memset(&g, 0, sizeof g);
  xrt__loc_of(p, at, &f.loc.line, &f.loc.col);
  f.loc.file = p->file;
  g.is_public = true;
  xrt__expect(p, '(');
  xrt__expect(p, ')');
  xrt__sym_pop(&p->vals, 0);
  p->vtypes.n = 0;
  size_t tm = p->tys.n;
  if (xrt__peek(p) == '<' && xrt__peek2(p) == '{') {
    p->p += 2;
    xrt__gfunc_props(p, &g);
    xrt__expect(p, '>');
  }
  xrt__rgn r;
  xrt__rgn_begin(p, &r);
  xrt__expect(p, '(');
  xrt__ws(p);
  const char *brace = p->p, *body_at = brace; /* the block label, if any */
  if (xrt__eat(p, '{') && xrt__peek(p) == '^') body_at = p->p;
  p->p = brace;
  xrt__parse_block(p, &r, true);
  xrt__expect(p, ')');
  if (xrt__eat(p, '{')) xrt__gfunc_props(p, &g);
  xrt__expect_unit_fn_type(p);
  if (!g.have_type)
    xrt__perr(p, at, XRT_INVALID_ARGUMENT, "func.func without a function_type");
  if (!g.name)
    xrt__perr(p, at, XRT_INVALID_ARGUMENT, "func.func without a sym_name");
  xrt__gfunc_args(p, &r, &g, body_at);
  f.name = g.name;
  f.is_public = g.is_public;
  f.num_results = g.nres;
  f.result_types = xrt__vcopy(p, &p->tys, g.tmark + (size_t)g.nin);
  f.body = xrt__rgn_end(p, &r);
  p->tys.n = tm;
  xrt__skip_loc(p);
  if (xrt__sym_find(&p->funcs, g.name, g.name_n))
    xrt__perr(p, g.name_at, XRT_INVALID_ARGUMENT,
              "redefinition of function @%s", g.name);
  xrt__func_add(p, &f, g.name, g.name_n);
}

/* Sets op.callee of every func.call in a region (callees may be defined
 * after the caller). */
static void xrt__resolve_calls(xrt__parser *p, const xrt_ir_region *g) {
  for (int32_t i = 0; i < g->num_ops; i++) {
    xrt_ir_op *op = (xrt_ir_op *)&g->ops[i];
    for (int32_t k = 0; k < op->num_regions; k++) xrt__resolve_calls(p, &op->regions[k]);
    if (op->code != XRT_OP_FUNC_CALL) continue;
    const xrt_ir_attr *a = xrt_ir_op_attr(op, "callee");
    if (!a || a->kind != XRT_ATTR_SYMBOL)
      xrt__perr_loc(p, op->loc, XRT_INVALID_ARGUMENT, "func.call without a callee");
    xrt__sym *s = xrt__sym_find(&p->funcs, a->s, (size_t)a->n);
    if (!s)
      xrt__perr_loc(p, op->loc, XRT_INVALID_ARGUMENT, "call to unknown function @%s", a->s);
    op->callee = s->id;
  }
}

/* `#alias = value` and `!alias = type` at the top level: ignored. */
static void xrt__skip_alias(xrt__parser *p) {
  p->p++;
  xrt__suffix_name(p);
  xrt__expect(p, '=');
  if (xrt__peek_kw(p, "loc")) {
    xrt__skip_loc(p);
  } else {
    xrt_ir_attr a;
    size_t am = p->attrs.n;
    xrt__parse_attr(p, &a, true);
    p->attrs.n = am;
  }
}

static void xrt__parse_items(xrt__parser *p, xrt_ir_module *m, int close);

/* The value of the module attribute stablehlo.version ("X.Y.Z"); a
 * malformed one is an error at the attribute (searched for from at, the
 * start of the attribute dictionary). */
static const char *xrt__module_version(xrt__parser *p, const char *at,
                                       const xrt_ir_attr *a) {
  int v[3];
  if (a->kind == XRT_ATTR_STRING && xrt__version_parse(a->s, v)) return a->s;
  static const char key[] = "stablehlo.version";
  for (const char *q = at; q + sizeof key - 1 <= p->p; q++)
    if (!memcmp(q, key, sizeof key - 1)) {
      at = q;
      break;
    }
  xrt__perr(p, at, XRT_INVALID_ARGUMENT, "stablehlo.version must be a string "
            "\"MAJOR.MINOR.PATCH\" (like \"%s\"), got %s%s%s",
            XRT__STABLEHLO_VERSION, a->kind == XRT_ATTR_STRING ? "\"" : "",
            a->kind == XRT_ATTR_STRING ? a->s : "another kind of attribute",
            a->kind == XRT_ATTR_STRING ? "\"" : "");
}

/* Module attributes `k = v, ...}` (the opening brace consumed). */
static void xrt__module_attrs(xrt__parser *p, xrt_ir_module *m) {
  size_t am = p->attrs.n;
  const char *at = p->p;
  xrt__parse_dict_entries(p, '}');
  for (size_t i = am; i < p->attrs.n; i++) {
    const xrt_ir_attr *a = &XRT__VAT(p->attrs, xrt_ir_attr, i);
    if (a->kind == XRT_ATTR_STRING && !strcmp(a->name, "sym_name")) m->name = a->s;
    if (!strcmp(a->name, "stablehlo.version"))
      m->stablehlo_version = xrt__module_version(p, at, a);
    if (a->kind != XRT_ATTR_INT) continue;
    if (!strcmp(a->name, "mhlo.num_replicas")) m->num_replicas = (int32_t)a->i;
    if (!strcmp(a->name, "mhlo.num_partitions")) m->num_partitions = (int32_t)a->i;
  }
  p->attrs.n = am;
}

/* module [@name] [attributes {...}] { ... } */
static void xrt__parse_module_header(xrt__parser *p, xrt_ir_module *m) {
  if (xrt__eat(p, '@')) {
    xrt__tok t = xrt__peek(p) == '"' ? xrt__string_raw(p) : xrt__suffix_name(p);
    m->name = xrt__strdup(p, t.s, t.n);
  }
  if (!xrt__eat_kw(p, "attributes")) return;
  xrt__expect(p, '{');
  xrt__module_attrs(p, m);
}

/* "builtin.module"() [<{sym_name = "m"}>] ({ items }) [{attrs}] : () -> ()
 * after the name. */
static void xrt__parse_generic_module(xrt__parser *p, xrt_ir_module *m) {
  xrt__expect(p, '(');
  xrt__expect(p, ')');
  if (xrt__peek(p) == '<' && xrt__peek2(p) == '{') {
    p->p += 2;
    xrt__module_attrs(p, m);
    xrt__expect(p, '>');
  }
  xrt__expect(p, '(');
  xrt__expect(p, '{');
  if (xrt__peek(p) == '^') { /* ^bb0: */
    p->p++;
    xrt__suffix_name(p);
    xrt__expect(p, ':');
  }
  xrt__parse_items(p, m, '}');
  p->p++;
  xrt__expect(p, ')');
  if (xrt__eat(p, '{')) xrt__module_attrs(p, m);
  xrt__expect_unit_fn_type(p);
  xrt__skip_loc(p);
}

/* Top-level items until `close` (-1: end of input, '}': module body). */
static void xrt__parse_items(xrt__parser *p, xrt_ir_module *m, int close) {
  for (;;) {
    int c = xrt__peek(p);
    if (c == close) return;
    if (c < 0) xrt__expected(p, "'}'");
    if (c == '#' || c == '!') {
      xrt__skip_alias(p);
    } else if (xrt__peek_kw(p, "func.func")) {
      xrt__parse_func(p);
    } else if (close < 0 && (xrt__eat_kw(p, "module") ||
                             xrt__eat_kw(p, "builtin.module"))) {
      xrt__parse_module_header(p, m);
      xrt__expect(p, '{');
      xrt__parse_items(p, m, '}');
      p->p++;
      xrt__skip_loc(p);
    } else {
      const char *at = p->p;
      xrt__tok t = xrt__ident(p);
      if (!t.n && c == '"') {
        t = xrt__string_raw(p);
        if (xrt__tok_is(t, "func.func")) {
          xrt__parse_generic_func(p, at);
          continue;
        }
        if (close < 0 && xrt__tok_is(t, "builtin.module")) {
          xrt__parse_generic_module(p, m);
          continue;
        }
      }
      if (!t.n) xrt__expected(p, "'func.func' or 'module'");
      if (xrt__sdy_module_item(p, t, *at == '"')) continue; /* sdy.mesh */
      xrt__perr(p, at, XRT_UNIMPLEMENTED, "unknown op '%.*s'", (int)t.n, t.s);
    }
  }
}

static void xrt__parser_free(xrt__parser *p) {
  xrt__pvec *v[] = {&p->vals.syms, &p->funcs.syms, &p->vtypes, &p->utypes,
                    &p->ints, &p->uses, &p->i64s, &p->f64s, &p->tys,
                    &p->attrs, &p->ops, &p->regions, &p->names, &p->fns};
  const xrt_allocator *a = &p->arena->allocator;
  for (size_t i = 0; i < sizeof v / sizeof *v; i++) xrt__free(a, v[i]->data);
  xrt__free(a, p->vals.buckets);
  xrt__free(a, p->utab);
  xrt__free(a, p->funcs.buckets);
}

static void xrt__parser_init(xrt__parser *p) {
  p->vals.syms.elem = p->funcs.syms.elem = sizeof(xrt__sym);
  p->utypes.elem = p->tys.elem = sizeof(xrt_ir_type);
  p->vtypes.elem = sizeof(int32_t);
  p->ints.elem = sizeof(int32_t);
  p->uses.elem = sizeof(const char *);
  p->i64s.elem = sizeof(int64_t);
  p->f64s.elem = sizeof(double);
  p->attrs.elem = sizeof(xrt_ir_attr);
  p->ops.elem = sizeof(xrt_ir_op);
  p->regions.elem = sizeof(xrt_ir_region);
  p->names.elem = sizeof(xrt__name);
  p->fns.elem = sizeof(xrt_ir_func);
}

/* Sizes the per-value scratch for the input up front: regrowing it by
 * doubling costs more than the parse itself on large functions. */
static void xrt__reserve(xrt__parser *p, xrt__pvec *v, size_t n) {
  if (n <= v->cap) return;
  char *d = xrt__realloc(&p->arena->allocator, v->data, v->n * v->elem,
                         n * v->elem);
  if (!d) xrt__oom(p);
  v->data = d;
  v->cap = n;
}

static void xrt__parse_all(xrt__parser *p, xrt_ir_module *m) {
  size_t guess = (size_t)(p->end - p->beg) / 48 + 64; /* ~one value a line */
  if (guess > (1u << 22)) guess = 1u << 22;
  xrt__reserve(p, &p->vtypes, guess);
  xrt__reserve(p, &p->vals.syms, guess);
  xrt__parse_items(p, m, -1);
  m->num_funcs = (int32_t)p->fns.n;
  m->funcs = xrt__vcopy(p, &p->fns, 0);
  for (int32_t i = 0; i < m->num_funcs; i++) xrt__resolve_calls(p, &m->funcs[i].body);
  xrt__shard_pass(p, m); /* sharding annotations: sharding_annot.c */
}

static xrt_status xrt__parse_run(xrt__arena *arena, const char *text,
                                 size_t len, const char *file, int line_offset,
                                 xrt_ir_module **out,
                                 const xrt__shard_info **shard,
                                 const xrt__bctext *bc) {
  /* The parser's scratch comes from the arena's allocator (the client's,
   * for xrt_compile). */
  xrt__parser *p = xrt__calloc(&arena->allocator, 1, sizeof *p);
  if (!p) return xrt__nomem("the parser");
  xrt__parser_init(p);
  p->arena = arena;
  p->beg = p->p = p->lc_pos = p->lc_line_start = text ? text : "";
  p->end = p->beg + (text ? len : 0);
  p->lc_line = 1;
  p->file = file ? file : "<input>";
  p->line_offset = line_offset;
  p->bc = bc;
  xrt_ir_module *m = xrt__arena_alloc(arena, sizeof *m);
  xrt_status st = XRT_OK;
  if (!m) {
    st = xrt__nomem("the parsed module");
  } else if (setjmp(p->jb) == 0) {
    m->name = "";
    m->num_replicas = m->num_partitions = 1;
    m->stablehlo_version = XRT__STABLEHLO_VERSION;
    xrt__parse_all(p, m);
    *out = m;
    if (shard) *shard = p->shard;
  } else {
    st = p->status;
  }
  xrt__parser_free(p);
  xrt__free(&arena->allocator, p);
  return st;
}

XRT__PRIVATE xrt_status xrt__parse_module(xrt__arena *arena, const char *text,
                                    size_t len, const char *file,
                                    int line_offset, xrt_ir_module **out,
                                    const xrt__shard_info **shard) {
  return xrt__parse_run(arena, text, len, file, line_offset, out, shard, NULL);
}

XRT__PRIVATE xrt_status xrt__parse_module_bc(xrt__arena *arena,
                                       const struct xrt__bctext *bc,
                                       xrt_ir_module **out,
                                       const xrt__shard_info **shard) {
  return xrt__parse_run(arena, bc->text, bc->len, bc->file, 0, out, shard, bc);
}
