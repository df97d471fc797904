/*
 * src/core/parse_pretty.c - the parser, part 3: the pretty syntax of StableHLO ops.
 * Part of the core of xrt; MIT licensed, see LICENSE.
 */
#include "internal.h"

/* ---- pretty syntax ---- */

/* Attribute names of the pretty keywords `key = value`. */
static const char *xrt__pretty_key(xrt_opcode code, xrt__tok key) {
  static const struct { xrt_opcode op; const char *key, *name; } map[] = {
      {XRT_OP_IOTA, "dim", "iota_dimension"},
      {XRT_OP_DYNAMIC_IOTA, "dim", "iota_dimension"},
      {XRT_OP_BROADCAST_IN_DIM, "dims", "broadcast_dimensions"},
      {XRT_OP_DYNAMIC_BROADCAST_IN_DIM, "dims", "broadcast_dimensions"},
      {XRT_OP_TRANSPOSE, "dims", "permutation"},
      {XRT_OP_CONCATENATE, "dim", "dimension"},
      {XRT_OP_PAD, "low", "edge_padding_low"},
      {XRT_OP_PAD, "high", "edge_padding_high"},
      {XRT_OP_PAD, "interior", "interior_padding"},
      {XRT_OP_REVERSE, "dims", "dimensions"},
      {XRT_OP_BROADCAST, "sizes", "broadcast_sizes"},
      {XRT_OP_GET_DIMENSION_SIZE, "dim", "dimension"},
      {XRT_OP_FFT, "type", "fft_type"},
      {XRT_OP_FFT, "length", "fft_length"},
      {XRT_OP_DOT_GENERAL, "precision", "precision_config"},
      {XRT_OP_DOT, "precision", "precision_config"},
      {XRT_OP_CONVOLUTION, "dim_numbers", "dimension_numbers"},
      {XRT_OP_SORT, "dim", "dimension"},
      {XRT_OP_DYNAMIC_SLICE, "sizes", "slice_sizes"},
      {XRT_OP_RNG, "distribution", "rng_distribution"},
      {XRT_OP_RNG_BIT_GENERATOR, "algorithm", "rng_algorithm"},
      {XRT_OP_DYNAMIC_CONV, "dim_numbers", "dimension_numbers"},
      {(xrt_opcode)XRT__OP_EINSUM, "config", "einsum_config"},
      {(xrt_opcode)XRT__OP_UNARY_EINSUM, "config", "einsum_config"},
  };
  for (size_t i = 0; i < sizeof map / sizeof *map; i++)
    if (map[i].op == code && xrt__tok_is(key, map[i].key)) return map[i].name;
  return NULL;
}

/* `[0] x [1]` of dot_general: two INTS into b->dot. */
static void xrt__pretty_dot_dims(xrt__parser *p, xrt__opb *b, int which) {
  static const char *const names[4] = {
      "lhs_batching_dimensions", "rhs_batching_dimensions",
      "lhs_contracting_dimensions", "rhs_contracting_dimensions"};
  for (int side = 0; side < 2; side++) {
    if (side) xrt__expect_kw(p, "x");
    xrt_ir_attr *a = &b->dot[which * 2 + side];
    xrt__ws(p);
    const char *at = p->p;
    xrt__parse_attr(p, a, false);
    if (a->kind != XRT_ATTR_INTS)
      xrt__perr(p, at, XRT_INVALID_ARGUMENT, "expected a list of dimensions");
    a->name = names[which * 2 + side];
  }
}

/* reduce_precision format = e5m10 -> exponent_bits, mantissa_bits. */
static void xrt__pretty_format(xrt__parser *p, const char *at, const xrt_ir_attr *v) {
  const char *s = v->kind == XRT_ATTR_ENUM ? v->s : "";
  long e = 0, m = 0;
  int used = 0;
  if (sscanf(s, "e%ldm%ld%n", &e, &m, &used) != 2 || s[used])
    xrt__perr(p, at, XRT_INVALID_ARGUMENT, "expected a format like e5m10");
  xrt_ir_attr a;
  memset(&a, 0, sizeof a);
  a.kind = XRT_ATTR_INT;
  a.i = e;
  xrt__add_attr(p, "exponent_bits", &a);
  a.i = m;
  xrt__add_attr(p, "mantissa_bits", &a);
}

/* `reverse = [false, true]` in a conv window: INTS 0/1 like array<i1>. */
static void xrt__window_bools(xrt__parser *p, xrt_ir_attr *w) {
  if (w->kind != XRT_ATTR_DICT) return;
  for (int32_t i = 0; i < w->num_items; i++) {
    xrt_ir_attr *f = (xrt_ir_attr *)&w->items[i]; /* ours: in the arena */
    bool bools = f->kind == XRT_ATTR_LIST && f->num_items > 0;
    for (int32_t k = 0; bools && k < f->num_items; k++)
      bools = f->items[k].kind == XRT_ATTR_BOOL;
    if (!bools) continue;
    int64_t *v = xrt__p_alloc(p, (size_t)f->num_items * sizeof *v);
    for (int32_t k = 0; k < f->num_items; k++) v[k] = f->items[k].i;
    f->kind = XRT_ATTR_INTS;
    f->ints = v;
    f->n = f->num_items;
    f->items = NULL;
    f->num_items = 0;
  }
}

/* `key = value` in pretty syntax. */
static void xrt__pretty_keyval(xrt__parser *p, xrt__opb *b, xrt__tok key) {
  xrt_opcode code = b->op.code;
  xrt__expect(p, '=');
  xrt__ws(p);
  const char *at = p->p;
  if (code == XRT_OP_DOT_GENERAL && xrt__tok_is(key, "batching_dims")) {
    xrt__pretty_dot_dims(p, b, 0);
    return;
  }
  if (code == XRT_OP_DOT_GENERAL && xrt__tok_is(key, "contracting_dims")) {
    xrt__pretty_dot_dims(p, b, 1);
    return;
  }
  xrt_ir_attr v;
  bool conv = code == XRT_OP_CONVOLUTION || code == XRT_OP_DYNAMIC_CONV;
  if (conv && xrt__tok_is(key, "dim_numbers")) {
    memset(&v, 0, sizeof v);
    xrt__skip_balanced(p, true);
    v.kind = XRT_ATTR_STRING;
    v.s = xrt__strdup(p, at, (size_t)(p->p - at));
    v.n = p->p - at;
  } else {
    xrt__parse_attr(p, &v, false);
  }
  if (conv && xrt__tok_is(key, "window")) xrt__window_bools(p, &v);
  if (code == XRT_OP_REDUCE_PRECISION && xrt__tok_is(key, "format")) {
    xrt__pretty_format(p, at, &v);
    return;
  }
  const char *name = xrt__pretty_key(code, key);
  xrt__add_attr(p, name ? name : xrt__strdup(p, key.s, key.n), &v);
}

/* A bare keyword item (compare LT ... FLOAT). */
static void xrt__pretty_keyword(xrt__parser *p, xrt__opb *b, xrt__tok t) {
  static const char *const cmp[2] = {"comparison_direction", "compare_type"};
  xrt_ir_attr a;
  memset(&a, 0, sizeof a);
  a.kind = XRT_ATTR_ENUM;
  a.s = xrt__strdup(p, t.s, t.n);
  a.n = (int64_t)t.n;
  const char *name = "keyword";
  if (b->op.code == XRT_OP_COMPARE && b->positional < 2) name = cmp[b->positional];
  b->positional++;
  xrt__add_attr(p, name, &a);
}

static void xrt__add_ints(xrt__parser *p, const char *name, size_t mark, size_t n) {
  xrt_ir_attr a;
  memset(&a, 0, sizeof a);
  a.kind = XRT_ATTR_INTS;
  a.n = (int64_t)n;
  a.ints = n ? xrt__p_alloc(p, n * sizeof(int64_t)) : NULL;
  if (n) memcpy((void *)a.ints, &XRT__VAT(p->i64s, int64_t, mark), n * sizeof(int64_t));
  xrt__add_attr(p, name, &a);
}

/* `%x[0]` (get_tuple_element) or `%x [1:3, 0:4:2]` (slice). */
static void xrt__pretty_brackets(xrt__parser *p) {
  xrt__expect(p, '[');
  size_t mark = p->i64s.n, n = 0;
  bool slice = false;
  if (!xrt__eat(p, ']')) {
    do {
      int64_t v[3] = {0, 0, 1};
      v[0] = xrt__parse_i64(p);
      if (xrt__eat(p, ':')) {
        slice = true;
        v[1] = xrt__parse_i64(p);
        if (xrt__eat(p, ':')) v[2] = xrt__parse_i64(p);
      }
      for (int i = 0; i < 3; i++) *(int64_t *)xrt__push_raw(p, &p->i64s) = v[i];
      n++;
    } while (xrt__eat(p, ','));
    xrt__expect(p, ']');
  } else {
    slice = true;
  }
  int64_t *v = n ? &XRT__VAT(p->i64s, int64_t, mark) : NULL;
  if (!slice) {
    xrt_ir_attr a;
    memset(&a, 0, sizeof a);
    a.kind = XRT_ATTR_INT;
    a.i = v[0];
    xrt__add_attr(p, "index", &a);
    p->i64s.n = mark;
    return;
  }
  for (size_t i = 0; i < n; i++) { /* transpose [n][3] into three runs */
    int64_t s = v[3 * i], l = v[3 * i + 1], st = v[3 * i + 2];
    *(int64_t *)xrt__push_raw(p, &p->i64s) = s;
    *(int64_t *)xrt__push_raw(p, &p->i64s) = l;
    *(int64_t *)xrt__push_raw(p, &p->i64s) = st;
  }
  size_t base = mark + 3 * n;
  for (int k = 0; k < 3; k++) /* gather column k into a contiguous run */
    for (size_t i = 0; i < n; i++)
      XRT__VAT(p->i64s, int64_t, mark + k * n + i) = XRT__VAT(p->i64s, int64_t, base + 3 * i + k);
  xrt__add_ints(p, "start_indices", mark, n);
  xrt__add_ints(p, "limit_indices", mark + n, n);
  xrt__add_ints(p, "strides", mark + 2 * n, n);
  p->i64s.n = mark;
}

static void xrt__paren_operands(xrt__parser *p) {
  xrt__expect(p, '(');
  if (xrt__eat(p, ')')) return;
  do xrt__p_operand(p);
  while (xrt__eat(p, ','));
  xrt__expect(p, ')');
}

/* Comma-separated operands, keywords and `key = value` items. */
static void xrt__pretty_items(xrt__parser *p, xrt__opb *b) {
  for (;;) {
    int c = xrt__peek(p);
    bool comma_optional = false;
    if (c == '%') {
      xrt__p_operand(p);
      if (xrt__peek(p) == '[') xrt__pretty_brackets(p);
    } else if (c == '(') {
      xrt__paren_operands(p);
      comma_optional = true;
    } else if (c == '"') {
      xrt_ir_attr a;
      xrt__parse_attr(p, &a, false);
      xrt__add_attr(p, "name", &a);
      comma_optional = true;
    } else if (xrt__is_idstart(c) && !(xrt__peek_kw(p, "loc") )) {
      xrt__tok t = xrt__ident(p);
      if (xrt__peek(p) == '=') xrt__pretty_keyval(p, b, t);
      else xrt__pretty_keyword(p, b, t);
    } else {
      break;
    }
    if (xrt__eat(p, ',')) continue;
    if (!comma_optional) break;
  }
  int nd = 0;
  for (int i = 0; i < 4; i++) nd += b->dot[i].name != NULL;
  if (nd) {
    xrt_ir_attr d;
    memset(&d, 0, sizeof d);
    xrt_ir_attr *items = xrt__p_alloc(p, (size_t)nd * sizeof *items);
    for (int i = 0, k = 0; i < 4; i++)
      if (b->dot[i].name) items[k++] = b->dot[i];
    d.kind = XRT_ATTR_DICT;
    d.items = items;
    d.num_items = nd;
    xrt__add_attr(p, "dot_dimension_numbers", &d);
  }
}

/* The common pretty form: items, optional attr-dict, `: types`. */
static void xrt__pretty_common(xrt__parser *p, xrt__opb *b) {
  xrt__pretty_items(p, b);
  xrt__opt_attr_dict(p);
  if (xrt__eat(p, ':')) {
    xrt__parse_pretty_sig(p, b);
    if (b->check) xrt__opt_attr_dict(p);
  } else if (p->ints.n != b->operands_mark || b->num_names) {
    xrt__expected(p, "':'");
  }
}

/* `stablehlo.constant() <{value = ..}> : () -> T`: how MLIR prints a
 * constant whose value's type differs from its result's (quantized). */
static void xrt__pretty_constant_fn(xrt__parser *p, xrt__opb *b) {
  xrt__paren_operands(p);
  if (xrt__peek(p) == '<' && xrt__peek2(p) == '{') {
    p->p += 2;
    xrt__parse_dict_entries(p, '}');
    xrt__expect(p, '>');
  }
  xrt__opt_attr_dict(p);
  xrt__expect(p, ':');
  xrt__parse_fn_type(p, b);
  xrt_ir_attr *v = xrt__find_attr(p, b, "value");
  if (v && v->lit) v->kind = XRT_ATTR_DENSE;
}

static void xrt__pretty_constant(xrt__parser *p) {
  xrt__opt_attr_dict(p);
  xrt_ir_literal *lit = xrt__p_alloc(p, sizeof *lit);
  xrt_ir_type written;
  xrt__parse_dense_as(p, lit, &written);
  xrt_ir_attr a;
  memset(&a, 0, sizeof a);
  a.kind = XRT_ATTR_DENSE;
  a.lit = lit;
  xrt__add_attr(p, "value", &a);
  *(xrt_ir_type *)xrt__push_raw(p, &p->tys) = written;
}

/* `@callee(%a, ...) [{attrs}] : (T) -> T` of func.call and custom_call. */
static void xrt__pretty_call(xrt__parser *p, xrt__opb *b) {
  xrt_ir_attr a;
  xrt__ws(p);
  if (xrt__peek(p) != '@') xrt__expected(p, "'@'");
  xrt__parse_attr(p, &a, false);
  if (b->op.code == XRT_OP_CUSTOM_CALL) a.kind = XRT_ATTR_STRING;
  xrt__add_attr(p, b->op.code == XRT_OP_FUNC_CALL ? "callee" : "call_target_name", &a);
  xrt__paren_operands(p);
  xrt__opt_attr_dict(p);
  xrt__expect(p, ':');
  xrt__parse_fn_type(p, b);
}

/* check.expect_*_const %a, dense<..> : T [{attrs}] */
static void xrt__pretty_check_const(xrt__parser *p, xrt__opb *b) {
  xrt__p_operand(p);
  xrt__expect(p, ',');
  xrt_ir_literal *lit = xrt__p_alloc(p, sizeof *lit);
  xrt__parse_dense(p, lit);
  xrt__opt_attr_dict(p);
  xrt__check_const_operand(p, b, lit);
}

/* A region whose block args are named by names[from..] with the types
 * tys[tmark..] (while's cond/do). */
static void xrt__region_named(xrt__parser *p, size_t from, size_t tmark, int32_t n) {
  xrt__rgn r;
  xrt__rgn_begin(p, &r);
  for (int32_t i = 0; i < n; i++) {
    xrt_ir_type t = XRT__VAT(p->tys, xrt_ir_type, tmark + (size_t)i);
    xrt__rgn_arg(p, XRT__VAT(p->names, xrt__name, from + (size_t)i), &t);
  }
  xrt__parse_block(p, &r, false);
  xrt_ir_region g = xrt__rgn_end(p, &r);
  xrt__push_region(p, &g);
}

/* while(%a = %init, ...) : T, ... [attributes {..}] cond {..} do {..} */
static void xrt__pretty_while(xrt__parser *p, xrt__opb *b) {
  size_t from = p->names.n;
  xrt__expect(p, '(');
  if (!xrt__eat(p, ')')) {
    do {
      xrt__expect(p, '%');
      xrt__tok t = xrt__suffix_name(p);
      xrt__name *nm = xrt__push(p, &p->names);
      nm->s = t.s;
      nm->n = (uint32_t)t.n;
      nm->count = 1;
      xrt__expect(p, '=');
      xrt__p_operand(p);
    } while (xrt__eat(p, ','));
    xrt__expect(p, ')');
  }
  int32_t n = (int32_t)(p->names.n - from);
  xrt__ws(p);
  const char *at = p->p;
  if (n) {
    xrt__expect(p, ':');
    if (xrt__parse_types(p, false) != n)
      xrt__perr(p, at, XRT_INVALID_ARGUMENT,
                "while has %d loop values but lists a different number of types",
                (int)n);
    for (int32_t i = 0; i < n; i++) /* operand types = result types */
      xrt__check_use(p, b, i, &XRT__VAT(p->tys, xrt_ir_type, b->rtypes_mark + (size_t)i));
  }
  if (xrt__eat_kw(p, "attributes")) xrt__opt_attr_dict(p);
  xrt__expect_kw(p, "cond");
  xrt__region_named(p, from, b->rtypes_mark, n);
  xrt__expect_kw(p, "do");
  xrt__region_named(p, from, b->rtypes_mark, n);
  p->names.n = from;
}

/* reduce ... applies OP: the body `r = OP a, b; return r` is synthesized. */
static void xrt__reduce_applies(xrt__parser *p, xrt__opb *b, xrt_opcode code,
                                int32_t init) {
  xrt_ir_type t = *xrt__value_type(p, init);
  xrt__name none = {NULL, 0, 1};
  xrt__rgn r;
  xrt__rgn_begin(p, &r);
  int32_t *ops = xrt__p_alloc(p, 2 * sizeof *ops), *res = xrt__p_alloc(p, sizeof *res);
  ops[0] = xrt__rgn_arg(p, none, &t);
  ops[1] = xrt__rgn_arg(p, none, &t);
  *res = xrt__new_value(p, &t);
  xrt_ir_op op;
  memset(&op, 0, sizeof op);
  op.code = code;
  op.name = xrt_opcode_name(code);
  op.loc = b->op.loc;
  op.num_operands = 2;
  op.operands = ops;
  op.num_results = 1;
  op.results = res;
  xrt__push_op(p, &op);
  memset(&op, 0, sizeof op);
  op.code = XRT_OP_RETURN;
  op.name = xrt_opcode_name(XRT_OP_RETURN);
  op.loc = b->op.loc;
  op.num_operands = 1;
  op.operands = res;
  xrt__push_op(p, &op);
  xrt_ir_region g = xrt__rgn_end(p, &r);
  xrt__push_region(p, &g);
}

/* reducer(%a: T, %c: T) (%b: T, %d: T) { ... }: args are all first-of-pair
 * values, then all second-of-pair values. */
static void xrt__reduce_reducer(xrt__parser *p, int32_t npairs) {
  size_t nmark = p->names.n, tmark = p->tys.n;
  xrt__expect_kw(p, "reducer");
  for (int32_t i = 0; i < npairs; i++) {
    xrt__expect(p, '(');
    for (int k = 0; k < 2; k++) {
      if (k) xrt__expect(p, ',');
      xrt_ir_type t;
      xrt__name nm;
      xrt__parse_arg(p, &nm, &t);
      *(xrt__name *)xrt__push_raw(p, &p->names) = nm;
      *(xrt_ir_type *)xrt__push_raw(p, &p->tys) = t;
    }
    xrt__expect(p, ')');
  }
  xrt__rgn r;
  xrt__rgn_begin(p, &r);
  for (int k = 0; k < 2; k++)
    for (int32_t i = 0; i < npairs; i++) {
      size_t j = (size_t)(2 * i + k);
      xrt_ir_type t = XRT__VAT(p->tys, xrt_ir_type, tmark + j);
      xrt__rgn_arg(p, XRT__VAT(p->names, xrt__name, nmark + j), &t);
    }
  xrt__parse_block(p, &r, false);
  xrt_ir_region g = xrt__rgn_end(p, &r);
  xrt__push_region(p, &g);
  p->names.n = nmark;
  p->tys.n = tmark;
}

/* reduce(%x init: %i), ... [applies OP] across dimensions = [..] : type
 * [reducer(...) {...}] */
static void xrt__pretty_reduce(xrt__parser *p, xrt__opb *b) {
  size_t imark = p->i64s.n; /* inits: (value id, offset of its use) */
  int32_t npairs = 0;
  do {
    xrt__expect(p, '(');
    xrt__p_operand(p);
    xrt__expect_kw(p, "init");
    xrt__expect(p, ':');
    xrt__ws(p);
    *(int64_t *)xrt__push_raw(p, &p->i64s) = p->p - p->beg;
    *(int64_t *)xrt__push_raw(p, &p->i64s) = xrt__parse_use(p);
    xrt__expect(p, ')');
    npairs++;
  } while (xrt__eat(p, ','));
  for (int32_t i = 0; i < npairs; i++) {
    int64_t *init = &XRT__VAT(p->i64s, int64_t, imark + 2 * (size_t)i);
    xrt__push_operand_at(p, (int32_t)init[1], p->beg + init[0]);
  }
  int32_t init0 = (int32_t)XRT__VAT(p->i64s, int64_t, imark + 1);
  p->i64s.n = imark;
  xrt_opcode applies = XRT_OP_INVALID;
  if (xrt__eat_kw(p, "applies")) {
    xrt__ws(p);
    const char *at = p->p;
    xrt__tok t = xrt__ident(p);
    applies = xrt__opcode_from_name(t.s, t.n);
    if (applies == XRT_OP_INVALID)
      xrt__perr(p, at, XRT_UNIMPLEMENTED, "unknown op '%.*s'", (int)t.n, t.s);
    if (npairs != 1)
      xrt__perr(p, at, XRT_UNIMPLEMENTED, "'applies' with %d inputs", (int)npairs);
  }
  xrt__expect_kw(p, "across");
  xrt__expect_kw(p, "dimensions");
  xrt__expect(p, '=');
  xrt_ir_attr a;
  xrt__parse_attr(p, &a, false);
  xrt__add_attr(p, "dimensions", &a);
  xrt__opt_attr_dict(p);
  xrt__expect(p, ':');
  xrt__parse_fn_type(p, b);
  if (applies != XRT_OP_INVALID) xrt__reduce_applies(p, b, applies, init0);
  else xrt__reduce_reducer(p, npairs);
}

/* chlo.scan(%in, ...) inits(%init, ...) dimension = N [attributes {..}]
 * {^bb0(...): ...} : (T, ...) -> (T, ...): the generic form's operands
 * (inputs, then inits), region and attributes, plus operandSegmentSizes
 * = [inputs, inits] as the generic form states it. */
static void xrt__pretty_scan(xrt__parser *p, xrt__opb *b) {
  xrt__paren_operands(p);
  size_t ni = p->ints.n - b->operands_mark;
  xrt__expect_kw(p, "inits");
  xrt__paren_operands(p);
  size_t nc = p->ints.n - b->operands_mark - ni;
  xrt__expect_kw(p, "dimension");
  xrt__expect(p, '=');
  xrt__ws(p);
  const char *at = p->p;
  xrt_ir_attr a;
  xrt__parse_attr(p, &a, false);
  if (a.kind != XRT_ATTR_INT)
    xrt__perr(p, at, XRT_INVALID_ARGUMENT, "expected an integer dimension");
  xrt__add_attr(p, "dimension", &a);
  if (xrt__eat_kw(p, "attributes")) {
    xrt__expect(p, '{');
    xrt__parse_dict_entries(p, '}');
  }
  if (xrt__peek(p) != '{') xrt__expected(p, "'{'");
  xrt__parse_region(p);
  xrt__expect(p, ':');
  xrt__parse_fn_type(p, b);
  size_t mark = p->i64s.n;
  *(int64_t *)xrt__push_raw(p, &p->i64s) = (int64_t)ni;
  *(int64_t *)xrt__push_raw(p, &p->i64s) = (int64_t)nc;
  xrt__add_ints(p, "operandSegmentSizes", mark, 2);
  p->i64s.n = mark;
}

/* chlo.top_k(%x, k = N) [{attrs}] : T -> (T, T) */
static void xrt__pretty_top_k(xrt__parser *p, xrt__opb *b) {
  xrt__expect(p, '(');
  xrt__p_operand(p);
  xrt__expect(p, ',');
  xrt__expect_kw(p, "k");
  xrt__expect(p, '=');
  xrt_ir_attr a;
  xrt__parse_attr(p, &a, false);
  xrt__add_attr(p, "k", &a);
  xrt__expect(p, ')');
  xrt__opt_attr_dict(p);
  xrt__expect(p, ':');
  xrt__parse_pretty_sig(p, b);
}

/* An op name's opcode; create_token is after_all with no inputs (the
 * spec's replacement for it). */
static xrt_opcode xrt__p_opcode(xrt__tok t) {
  if (xrt__tok_is(t, "stablehlo.create_token")) return XRT_OP_AFTER_ALL;
  xrt_opcode c = xrt__opcode_from_name(t.s, t.n);
  if (c == XRT_OP_INVALID) c = xrt__extra_opcode(t.s, t.n); /* not run */
  return c != XRT_OP_INVALID ? c : xrt__sdy_opcode(t.s, t.n); /* parse_sdy.c */
}

/* The name an op code prints as. */
static const char *xrt__p_op_name(xrt_opcode code) {
  if (xrt__is_sdy_op(code)) return xrt__sdy_name(code);
  const char *x = xrt__extra_op_name(code);
  return x ? x : xrt_opcode_name(code);
}

static void xrt__parse_pretty(xrt__parser *p, xrt__opb *b) {
  xrt__ws(p);
  const char *at = p->p;
  xrt__tok t = xrt__ident(p);
  if (!t.n) xrt__expected(p, "an op");
  bool is_const = false;
  xrt_opcode code;
  if (xrt__tok_is(t, "return")) code = XRT_OP_FUNC_RETURN;
  else if (xrt__tok_is(t, "call")) code = XRT_OP_FUNC_CALL;
  else if ((b->check = xrt__p_check_kind(t, &is_const)) != 0) code = XRT_OP_CUSTOM_CALL;
  else code = xrt__p_opcode(t);
  if (code == XRT_OP_INVALID)
    xrt__perr(p, at, XRT_UNIMPLEMENTED, "unknown op '%.*s'", (int)t.n, t.s);
  b->op.code = code;
  b->op.name = xrt__p_op_name(code);
  if (xrt__is_sdy_op(code)) {
    xrt__sdy_pretty(p, b);
    return;
  }
  if (b->check) {
    if (is_const) xrt__pretty_check_const(p, b);
    else xrt__pretty_common(p, b);
    xrt__check_finish(p, b);
    return;
  }
  switch (code) {
  case XRT_OP_CONSTANT: case XRT_OP_CHLO_CONSTANT:
    if (xrt__peek(p) == '(') xrt__pretty_constant_fn(p, b);
    else xrt__pretty_constant(p);
    break;
  case XRT_OP_OPTIMIZATION_BARRIER: /* attr-dict first; `()` if no operands */
    xrt__opt_attr_dict(p);
    if (xrt__peek(p) == '(') xrt__paren_operands(p);
    else xrt__pretty_common(p, b);
    break;
  case XRT_OP_FUNC_CALL:
  case XRT_OP_CUSTOM_CALL: xrt__pretty_call(p, b); break;
  case XRT_OP_WHILE: xrt__pretty_while(p, b); break;
  case XRT_OP_CHLO_SCAN: xrt__pretty_scan(p, b); break;
  case XRT_OP_CHLO_TOP_K: xrt__pretty_top_k(p, b); break;
  case XRT_OP_REDUCE:
    if (xrt__peek(p) == '(') {
      xrt__pretty_reduce(p, b);
      break;
    }
    /* fall through */
  default: xrt__pretty_common(p, b); break;
  }
}

/* "name"(operands) [<{props}>] [(regions)] [{attrs}] : (T) -> T */
static void xrt__parse_generic(xrt__parser *p, xrt__opb *b) {
  xrt__ws(p);
  const char *at = p->p;
  xrt__tok t = xrt__string_raw(p);
  bool is_const = false;
  xrt_opcode code;
  if ((b->check = xrt__p_check_kind(t, &is_const)) != 0) code = XRT_OP_CUSTOM_CALL;
  else code = xrt__p_opcode(t);
  if (code == XRT_OP_INVALID)
    xrt__perr(p, at, XRT_UNIMPLEMENTED, "unknown op '%.*s'", (int)t.n, t.s);
  b->op.code = code;
  b->op.name = xrt__p_op_name(code);
  xrt__paren_operands(p);
  if (xrt__peek(p) == '[')
    xrt__perr(p, p->p, XRT_UNIMPLEMENTED, "successor blocks");
  if (xrt__peek(p) == '<' && xrt__peek2(p) == '{') {
    p->p += 2;
    xrt__parse_dict_entries(p, '}');
    xrt__expect(p, '>');
  }
  if (xrt__eat(p, '(')) {
    do xrt__parse_region(p);
    while (xrt__eat(p, ','));
    xrt__expect(p, ')');
  }
  xrt__opt_attr_dict(p);
  xrt__expect(p, ':');
  xrt__parse_fn_type(p, b);
  xrt_ir_attr *v = xrt__find_attr(p, b, "value");
  if (v && v->lit && (is_const || code == XRT_OP_CONSTANT ||
                      code == XRT_OP_CHLO_CONSTANT))
    v->kind = XRT_ATTR_DENSE; /* a tensor value, not a list of ints */
  if (is_const) {
    if (!v || v->kind != XRT_ATTR_DENSE)
      xrt__perr(p, at, XRT_INVALID_ARGUMENT, "check op needs a dense 'value'");
    xrt__check_const_operand(p, b, v->lit);
  }
  if (b->check) xrt__check_finish(p, b);
}

/* `%a, %b:2 =` before an op; returns the number of results declared. */
static int32_t xrt__parse_result_names(xrt__parser *p) {
  if (xrt__peek(p) != '%') return 0;
  int32_t total = 0;
  do {
    xrt__expect(p, '%');
    xrt__tok t = xrt__suffix_name(p);
    int64_t count = 1;
    if (xrt__eat(p, ':')) {
      xrt__ws(p);
      const char *at = p->p;
      count = xrt__parse_i64(p);
      if (count < 1 || count > (1 << 20))
        xrt__perr(p, at, XRT_INVALID_ARGUMENT, "bad result count");
    }
    xrt__name *nm = xrt__push(p, &p->names);
    nm->s = t.s;
    nm->n = (uint32_t)t.n;
    nm->count = (int32_t)count;
    total += (int32_t)count;
    if (total > (1 << 20)) xrt__perr(p, t.s, XRT_INVALID_ARGUMENT, "too many results");
  } while (xrt__eat(p, ','));
  xrt__expect(p, '=');
  return total;
}

XRT__PRIVATE void xrt__parse_op(xrt__parser *p) {
  xrt__opb b;
  memset(&b, 0, sizeof b);
  b.op.callee = -1;
  b.names_mark = p->names.n;
  b.num_names = xrt__parse_result_names(p);
  xrt__ws(p);
  b.at = p->p; /* the op name, as MLIR locates ops */
  xrt__loc_of(p, b.at, &b.op.loc.line, &b.op.loc.col);
  b.op.loc.file = p->file;
  b.operands_mark = p->ints.n;
  b.attrs_mark = p->attrs.n;
  b.regions_mark = p->regions.n;
  b.rtypes_mark = p->tys.n;
  if (xrt__peek(p) == '"') xrt__parse_generic(p, &b);
  else xrt__parse_pretty(p, &b);
  xrt__skip_loc(p);
  xrt__finish_op(p, &b);
}
