/*
 * src/core/parse_sdy.c - the parser, part 5: sharding annotations as JAX
 * exports them (Shardy's sdy.mesh, sdy.sharding_constraint, sdy.reshard,
 * sdy.manual_computation and sdy.return; mhlo.sharding and sdy.sharding of
 * function arguments and results).
 * Part of the core of xrt; MIT licensed, see LICENSE.
 *
 * The sdy ops get codes past XRT_OP_COUNT and their shardings as STRING
 * attributes (the text inside the brackets); sharding_annot.c rewrites them
 * away at the end of parsing, so the verifier and plugins never see them.
 */
#include "internal.h"

static const struct {
  const char *name;
  int code;
} xrt__sdy_ops[] = {
    {"sdy.sharding_constraint", XRT__OP_SDY_CONSTRAINT},
    {"sdy.reshard", XRT__OP_SDY_RESHARD},
    {"sdy.manual_computation", XRT__OP_SDY_MANUAL},
    {"sdy.return", XRT__OP_SDY_RETURN},
};

XRT__PRIVATE xrt_opcode xrt__sdy_opcode(const char *s, size_t n) {
  for (size_t i = 0; i < XRT__ARRAY_SIZE(xrt__sdy_ops); i++)
    if (strlen(xrt__sdy_ops[i].name) == n && !memcmp(xrt__sdy_ops[i].name, s, n))
      return (xrt_opcode)xrt__sdy_ops[i].code;
  return XRT_OP_INVALID;
}

XRT__PRIVATE bool xrt__is_sdy_op(int code) {
  return code > XRT_OP_COUNT && code <= XRT__OP_SDY_RETURN;
}

XRT__PRIVATE const char *xrt__sdy_name(int code) {
  for (size_t i = 0; i < XRT__ARRAY_SIZE(xrt__sdy_ops); i++)
    if (xrt__sdy_ops[i].code == code) return xrt__sdy_ops[i].name;
  return "invalid";
}

/* The text up to the bracket that closes the one just consumed (close is
 * ']', '}' or '>'), as a STRING attribute named name. */
static void xrt__sdy_raw_attr(xrt__parser *p, const char *name, char close) {
  xrt__ws(p);
  const char *s = p->p;
  xrt__skip_balanced(p, false);
  const char *e = p->p;
  xrt__expect(p, close);
  xrt_ir_attr a;
  memset(&a, 0, sizeof a);
  a.kind = XRT_ATTR_STRING;
  a.s = xrt__strdup(p, s, (size_t)(e - s));
  a.n = e - s;
  xrt__add_attr(p, name, &a);
}

/* `%x <@mesh, [...]> [{attrs}] : T` of sharding_constraint and reshard. */
static void xrt__sdy_constraint(xrt__parser *p, xrt__opb *b) {
  xrt__p_operand(p);
  xrt__expect(p, '<');
  xrt__sdy_raw_attr(p, "sharding", '>');
  xrt__opt_attr_dict(p);
  xrt__expect(p, ':');
  xrt_ir_type t;
  xrt__parse_type(p, &t);
  xrt__check_use(p, b, 0, &t);
  *(xrt_ir_type *)xrt__push_raw(p, &p->tys) = t;
}

/* `key=[...]` / `key={...}` of manual_computation. */
static void xrt__sdy_keyed(xrt__parser *p, const char *key, char open) {
  xrt__expect_kw(p, key);
  xrt__expect(p, '=');
  xrt__expect(p, open);
  xrt__sdy_raw_attr(p, key, open == '[' ? ']' : '}');
}

/* `(%a, ...) in_shardings=[...] out_shardings=[...] manual_axes={...}
 * (%b: T, ...) {body} [{attrs}] : (T, ...) -> T` */
static void xrt__sdy_manual(xrt__parser *p, xrt__opb *b) {
  xrt__expect(p, '(');
  if (!xrt__eat(p, ')')) {
    do xrt__p_operand(p);
    while (xrt__eat(p, ','));
    xrt__expect(p, ')');
  }
  xrt__sdy_keyed(p, "in_shardings", '[');
  xrt__sdy_keyed(p, "out_shardings", '[');
  xrt__sdy_keyed(p, "manual_axes", '{');
  xrt__rgn r;
  xrt__rgn_begin(p, &r);
  xrt__expect(p, '(');
  if (!xrt__eat(p, ')')) {
    do {
      xrt__name nm;
      xrt_ir_type t;
      xrt__ws(p);
      xrt__parse_arg(p, &nm, &t);
      xrt__skip_loc(p);
      xrt__rgn_arg(p, nm, &t);
    } while (xrt__eat(p, ','));
    xrt__expect(p, ')');
  }
  xrt__parse_block(p, &r, false);
  xrt_ir_region g = xrt__rgn_end(p, &r);
  xrt__push_region(p, &g);
  xrt__opt_attr_dict(p);
  xrt__expect(p, ':');
  xrt__parse_fn_type(p, b);
}

/* `%a, ... : T, ...` (or nothing) of sdy.return. */
static void xrt__sdy_return(xrt__parser *p, xrt__opb *b) {
  if (xrt__peek(p) != '%') return;
  do xrt__p_operand(p);
  while (xrt__eat(p, ','));
  xrt__opt_attr_dict(p);
  xrt__expect(p, ':');
  int32_t n = (int32_t)(p->ints.n - b->operands_mark);
  size_t tm = p->tys.n;
  if (xrt__parse_types(p, false) != n)
    xrt__perr(p, b->at, XRT_INVALID_ARGUMENT, "sdy.return lists %d types for "
              "%d operands", (int)(p->tys.n - tm), (int)n);
  for (int32_t k = 0; k < n; k++)
    xrt__check_use(p, b, k, &XRT__VAT(p->tys, xrt_ir_type, tm + (size_t)k));
  p->tys.n = tm;
}

/* The pretty form of an sdy op (b->op.code one of ours). */
XRT__PRIVATE void xrt__sdy_pretty(xrt__parser *p, xrt__opb *b) {
  b->op.name = xrt__sdy_name(b->op.code);
  switch ((int)b->op.code) {
  case XRT__OP_SDY_MANUAL: xrt__sdy_manual(p, b); break;
  case XRT__OP_SDY_RETURN: xrt__sdy_return(p, b); break;
  default: xrt__sdy_constraint(p, b); break;
  }
}

/* Keeps an mhlo.sharding or sdy.sharding among a function argument's or
 * result's attributes (p->attrs from mark) for sharding_annot.c. */
XRT__PRIVATE void xrt__sdy_note_attrs(xrt__parser *p, size_t mark, bool result,
                                      int32_t index, const char *at) {
  for (size_t i = mark; i < p->attrs.n; i++) {
    const xrt_ir_attr *a = &XRT__VAT(p->attrs, xrt_ir_attr, i);
    bool sdy = a->name && !strcmp(a->name, "sdy.sharding");
    if (!a->name || a->kind != XRT_ATTR_STRING ||
        (!sdy && strcmp(a->name, "mhlo.sharding")))
      continue;
    xrt__shard_note *n = xrt__p_alloc(p, sizeof *n);
    memset(n, 0, sizeof *n);
    n->func = (int32_t)p->fns.n;
    n->index = index;
    n->result = result;
    n->sdy = sdy;
    n->text = a->s;
    n->loc.file = p->file;
    xrt__loc_of(p, at, &n->loc.line, &n->loc.col);
    n->next = p->annots.notes;
    p->annots.notes = n;
  }
}

/* `"x"=2, ...` of a mesh (inside its brackets) into m. */
static void xrt__sdy_mesh_axes(xrt__parser *p, xrt__mesh *m) {
  size_t mark = p->i64s.n;
  const char *names[XRT_MAX_RANK];
  while (xrt__peek(p) == '"') {
    if (m->naxes == XRT_MAX_RANK)
      xrt__perr(p, p->p, XRT_UNIMPLEMENTED, "a mesh of more than %d axes",
                XRT_MAX_RANK);
    xrt__tok t = xrt__string_raw(p);
    names[m->naxes++] = xrt__strdup(p, t.s, t.n);
    xrt__expect(p, '=');
    xrt__ws(p);
    const char *at = p->p;
    int64_t size = xrt__parse_i64(p);
    if (size < 1) xrt__perr(p, at, XRT_INVALID_ARGUMENT, "mesh axis size %lld "
                            "must be positive", (long long)size);
    *(int64_t *)xrt__push_raw(p, &p->i64s) = size;
    if (!xrt__eat(p, ',')) break;
  }
  m->axes = xrt__p_alloc(p, sizeof *m->axes * (size_t)(m->naxes + 1));
  m->sizes = xrt__p_alloc(p, sizeof *m->sizes * (size_t)(m->naxes + 1));
  for (int32_t i = 0; i < m->naxes; i++) {
    m->axes[i] = names[i];
    m->sizes[i] = XRT__VAT(p->i64s, int64_t, mark + (size_t)i);
  }
  p->i64s.n = mark;
}

/* A mesh body after its '<': `["x"=2, ...][, device_ids=[...]]>` (or the
 * older `"x"=2, ...>`). */
static void xrt__sdy_mesh_body(xrt__parser *p, xrt__mesh *m) {
  if (xrt__eat(p, '[')) {
    xrt__sdy_mesh_axes(p, m);
    xrt__expect(p, ']');
  } else {
    xrt__sdy_mesh_axes(p, m);
  }
  if (xrt__eat(p, ',')) xrt__skip_balanced(p, false); /* device_ids */
  xrt__expect(p, '>');
}

/* Consumes lit when the input continues with it. */
static bool xrt__sdy_eat_lit(xrt__parser *p, const char *lit) {
  size_t n = strlen(lit);
  xrt__ws(p);
  if ((size_t)(p->end - p->p) < n || memcmp(p->p, lit, n)) return false;
  p->p += n;
  return true;
}

static xrt__mesh *xrt__sdy_new_mesh(xrt__parser *p, xrt__tok name) {
  xrt__mesh *m = xrt__p_alloc(p, sizeof *m);
  memset(m, 0, sizeof *m);
  m->name = xrt__strdup(p, name.s, name.n);
  m->next = p->annots.meshes;
  p->annots.meshes = m;
  return m;
}

/* A module-level op that is not a function: `sdy.mesh @m = <...>` or its
 * generic form `"sdy.mesh"() <{mesh = #sdy.mesh<...>, sym_name = "m"}> :
 * () -> ()`.  False for any other name (an unknown op). */
XRT__PRIVATE bool xrt__sdy_module_item(xrt__parser *p, xrt__tok t, bool generic) {
  if (!xrt__tok_is(t, "sdy.mesh")) return false;
  if (!generic) {
    xrt__expect(p, '@');
    xrt__tok name = xrt__peek(p) == '"' ? xrt__string_raw(p) : xrt__suffix_name(p);
    xrt__expect(p, '=');
    xrt__sdy_eat_lit(p, "#sdy.mesh"); /* `= #sdy.mesh<...>` */
    xrt__expect(p, '<');
    xrt__sdy_mesh_body(p, xrt__sdy_new_mesh(p, name));
    xrt__skip_loc(p);
    return true;
  }
  xrt__expect(p, '(');
  xrt__expect(p, ')');
  xrt__expect(p, '<');
  xrt__expect(p, '{');
  xrt__tok name = {NULL, 0};
  const char *body = NULL;
  do {
    xrt__ws(p);
    xrt__tok k = xrt__ident(p);
    xrt__expect(p, '=');
    xrt__ws(p);
    if (xrt__tok_is(k, "sym_name") && xrt__peek(p) == '"') {
      name = xrt__string_raw(p);
    } else {
      if (xrt__tok_is(k, "mesh")) body = p->p;
      xrt__skip_balanced(p, true);
    }
  } while (xrt__eat(p, ','));
  xrt__expect(p, '}');
  xrt__expect(p, '>');
  xrt__expect(p, ':');
  xrt__expect(p, '(');
  xrt__expect(p, ')');
  if (!xrt__eat_arrow(p)) xrt__expected(p, "'->'");
  xrt__expect(p, '(');
  xrt__expect(p, ')');
  const char *end = p->p;
  if (!name.n || !body)
    xrt__perr(p, t.s, XRT_INVALID_ARGUMENT, "sdy.mesh needs a mesh and a "
              "sym_name");
  p->p = body;
  if (!xrt__sdy_eat_lit(p, "#sdy.mesh")) xrt__expected(p, "#sdy.mesh<...>");
  xrt__expect(p, '<');
  xrt__sdy_mesh_body(p, xrt__sdy_new_mesh(p, name));
  p->p = end;
  xrt__skip_loc(p);
  return true;
}
