/*
 * src/core/parse.c - the parser, part 1: parser state and scratch stacks, symbol
 * tables, characters and tokens, numbers, types, dense literals and
 * attributes.
 * Part of the core of xrt; MIT licensed, see LICENSE.
 */
#include "internal.h"

#define XRT__PARSE_MAX_DEPTH 256

XRT__PRIVATE void xrt__loc_of(xrt__parser *p, const char *at, int *line, int *col) {
  if (at > p->end) at = p->end;
  if (at < p->lc_pos) { /* backwards: restart from the top (errors only) */
    p->lc_pos = p->lc_line_start = p->beg;
    p->lc_line = 1;
  }
  const char *s = p->lc_pos;
  for (;;) {
    const char *nl = memchr(s, '\n', (size_t)(at - s));
    if (!nl) break;
    p->lc_line++;
    p->lc_line_start = s = nl + 1;
  }
  p->lc_pos = at;
  *line = p->lc_line + p->line_offset;
  *col = (int)(at - p->lc_line_start) + 1;
}

static _Noreturn void xrt__perr_v(xrt__parser *p, int line, int col,
                                  xrt_status code, const char *fmt,
                                  va_list ap) {
  char msg[512];
  p->status = code;
  vsnprintf(msg, sizeof msg, fmt, ap);
  xrt__fail(code, "%s:%d:%d: %s", p->file, line, col, msg);
  longjmp(p->jb, (int)code);
}

XRT__PRIVATE void xrt__perr(xrt__parser *p, const char *at, xrt_status code,
                      const char *fmt, ...) {
  int line, col;
  va_list ap;
  xrt__loc_of(p, at, &line, &col);
  va_start(ap, fmt);
  xrt__perr_v(p, line, col, code, fmt, ap);
}
XRT__PRIVATE void xrt__perr_loc(xrt__parser *p, xrt_ir_loc loc, xrt_status code,
                          const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  xrt__perr_v(p, loc.line, loc.col, code, fmt, ap);
}

XRT__PRIVATE _Noreturn void xrt__oom(xrt__parser *p) {
  xrt__fail(XRT_RESOURCE_EXHAUSTED, "%s: out of host memory while parsing",
            p->file);
  p->status = XRT_RESOURCE_EXHAUSTED; /* what xrt__parse_module returns */
  longjmp(p->jb, (int)XRT_RESOURCE_EXHAUSTED);
}

XRT__PRIVATE const char *xrt__strdup(xrt__parser *p, const char *s, size_t n) {
  char *m = xrt__arena_strndup(p->arena, s, n);
  if (!m) xrt__oom(p);
  return m;
}

/* Appends one entry (uninitialized: callers assign the whole entry). */
XRT__PRIVATE void *xrt__push_raw(xrt__parser *p, xrt__pvec *v) {
  if (v->n == v->cap) {
    size_t cap = v->cap ? v->cap * 2 : 64;
    char *d = xrt__realloc(&p->arena->allocator, v->data, v->n * v->elem,
                           cap * v->elem);
    if (!d) xrt__oom(p);
    v->data = d;
    v->cap = cap;
  }
  return v->data + v->n++ * v->elem;
}

/* Copies entries [mark, n) of v into the arena (NULL when empty). */
XRT__PRIVATE void *xrt__vcopy(xrt__parser *p, const xrt__pvec *v, size_t mark) {
  size_t bytes = (v->n - mark) * v->elem;
  if (!bytes) return NULL;
  void *m = xrt__p_alloc(p, bytes);
  memcpy(m, v->data + mark * v->elem, bytes);
  return m;
}

/* ---------------------------------------------------------------------
 * Symbol tables
 * ------------------------------------------------------------------- */

static uint32_t xrt__hash(const char *s, size_t n) {
  uint32_t h = 2166136261u;
  for (size_t i = 0; i < n; i++) h = (h ^ (unsigned char)s[i]) * 16777619u;
  return h;
}

static void xrt__sym_rehash(xrt__parser *p, xrt__symtab *t, uint32_t nb) {
  /* Refilled below: nothing to copy. */
  int32_t *b = xrt__realloc(&p->arena->allocator, t->buckets, 0,
                            nb * sizeof *b);
  if (!b) xrt__oom(p);
  t->buckets = b;
  t->mask = nb - 1;
  memset(b, 0xff, nb * sizeof *b); /* -1 */
  for (size_t i = 0; i < t->syms.n; i++) { /* oldest first keeps LIFO */
    xrt__sym *s = &XRT__VAT(t->syms, xrt__sym, i);
    s->next = b[s->hash & t->mask];
    b[s->hash & t->mask] = (int32_t)i;
  }
}

XRT__PRIVATE xrt__sym *xrt__sym_find(xrt__symtab *t, const char *s, size_t n) {
  if (!t->buckets) return NULL;
  uint32_t h = xrt__hash(s, n);
  for (int32_t i = t->buckets[h & t->mask]; i >= 0;) {
    xrt__sym *e = &XRT__VAT(t->syms, xrt__sym, i);
    if (e->hash == h && e->n == n && !memcmp(e->s, s, n)) return e;
    i = e->next;
  }
  return NULL;
}

XRT__PRIVATE void xrt__sym_add(xrt__parser *p, xrt__symtab *t, const char *s,
                         size_t n, int32_t id, int32_t count) {
  if (!t->buckets || t->syms.n >= (size_t)t->mask + 1)
    xrt__sym_rehash(p, t, t->buckets ? (t->mask + 1) * 2 : 1024);
  uint32_t h = xrt__hash(s, n);
  xrt__sym *e = xrt__push(p, &t->syms);
  e->s = s;
  e->n = (uint32_t)n;
  e->hash = h;
  e->id = id;
  e->count = count;
  e->next = t->buckets[h & t->mask];
  t->buckets[h & t->mask] = (int32_t)(t->syms.n - 1);
}

/* Forgets the names defined since mark (leaving a scope). */
XRT__PRIVATE void xrt__sym_pop(xrt__symtab *t, size_t mark) {
  while (t->syms.n > mark) {
    xrt__sym *e = &XRT__VAT(t->syms, xrt__sym, t->syms.n - 1);
    t->buckets[e->hash & t->mask] = e->next;
    t->syms.n--;
  }
}

/* ---------------------------------------------------------------------
 * Characters and tokens
 * ------------------------------------------------------------------- */

static bool xrt__is_digit(int c) { return c >= '0' && c <= '9'; }
static bool xrt__is_alpha(int c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z');
}
XRT__PRIVATE bool xrt__is_idstart(int c) { return xrt__is_alpha(c) || c == '_'; }
/* bare-id characters (op names, attribute names, keywords) */
static bool xrt__is_idchar(int c) {
  return xrt__is_alpha(c) || xrt__is_digit(c) || c == '_' || c == '$' ||
         c == '.';
}
/* suffix-id characters (%value and @symbol names) */
XRT__PRIVATE bool xrt__is_namechar(int c) { return xrt__is_idchar(c) || c == '-'; }
static int xrt__hexval(int c) {
  if (xrt__is_digit(c)) return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

XRT__PRIVATE void xrt__ws_slow(xrt__parser *p) {
  const char *s = p->p, *e = p->end;
  while (s < e) {
    char c = *s;
    if (c == ' ' || c == '\n' || c == '\t' || c == '\r') {
      s++;
    } else if (c == '/' && s + 1 < e && s[1] == '/') {
      const char *nl = memchr(s, '\n', (size_t)(e - s));
      s = nl ? nl + 1 : e;
    } else {
      break;
    }
  }
  p->p = s;
}

/* "expected X, found 'tok'" at the current position. */
XRT__PRIVATE _Noreturn void xrt__expected(xrt__parser *p, const char *what) {
  xrt__ws(p);
  if (p->p >= p->end) xrt__perr(p, p->p, XRT_INVALID_ARGUMENT,
                                "expected %s, found end of input", what);
  size_t n = 1;
  while (p->p + n < p->end && n < 24 && xrt__is_namechar(p->p[0]) &&
         xrt__is_namechar(p->p[n]))
    n++;
  xrt__perr(p, p->p, XRT_INVALID_ARGUMENT, "expected %s, found '%.*s'", what,
            (int)n, p->p);
}

XRT__PRIVATE void xrt__expect(xrt__parser *p, char c) {
  if (!xrt__eat(p, c)) {
    char what[4] = {'\'', c, '\'', 0};
    xrt__expected(p, what);
  }
}

XRT__PRIVATE bool xrt__eat_arrow(xrt__parser *p) {
  if (xrt__peek(p) != '-' || xrt__peek2(p) != '>') return false;
  p->p += 2;
  return true;
}

/* A bare identifier (letters, digits, _ $ .) at the next token; n == 0 if
 * there is none.  Consumes it. */
XRT__PRIVATE xrt__tok xrt__ident(xrt__parser *p) {
  xrt__tok t = {NULL, 0};
  if (!xrt__is_idstart(xrt__peek(p))) return t;
  t.s = p->p;
  while (p->p < p->end && xrt__is_idchar(*p->p)) p->p++;
  t.n = (size_t)(p->p - t.s);
  return t;
}

/* Consumes keyword kw if it is the next whole identifier. */
XRT__PRIVATE bool xrt__eat_kw(xrt__parser *p, const char *kw) {
  const char *save = p->p;
  xrt__tok t = xrt__ident(p);
  if (xrt__tok_is(t, kw)) return true;
  p->p = save;
  return false;
}

XRT__PRIVATE void xrt__expect_kw(xrt__parser *p, const char *kw) {
  if (!xrt__eat_kw(p, kw)) {
    char what[64];
    snprintf(what, sizeof what, "'%s'", kw);
    xrt__expected(p, what);
  }
}

XRT__PRIVATE bool xrt__peek_kw(xrt__parser *p, const char *kw) {
  const char *save = p->p;
  bool yes = xrt__eat_kw(p, kw);
  p->p = save;
  return yes;
}

/* A %value or @symbol name after its sigil (sigil already consumed). */
XRT__PRIVATE xrt__tok xrt__suffix_name(xrt__parser *p) {
  xrt__tok t = {p->p, 0};
  while (p->p < p->end && xrt__is_namechar(*p->p)) p->p++;
  t.n = (size_t)(p->p - t.s);
  if (!t.n) xrt__expected(p, "a name");
  return t;
}

/* Finds the end of a string literal starting at p->p ('"'); returns its
 * raw contents and moves past the closing quote. */
XRT__PRIVATE xrt__tok xrt__string_raw(xrt__parser *p) {
  const char *s = p->p + 1;
  while (s < p->end && *s != '"') s += (*s == '\\' && s + 1 < p->end) ? 2 : 1;
  if (s >= p->end)
    xrt__perr(p, p->p, XRT_INVALID_ARGUMENT, "unterminated string");
  xrt__tok t = {p->p + 1, (size_t)(s - p->p - 1)};
  p->p = s + 1;
  return t;
}

/* Decodes MLIR string escapes (\" \\ \n \t \XX) into an arena string. */
static const char *xrt__unescape(xrt__parser *p, xrt__tok raw, int64_t *len) {
  char *out = xrt__p_alloc(p, raw.n + 1);
  size_t n = 0;
  for (size_t i = 0; i < raw.n; i++) {
    char c = raw.s[i];
    if (c == '\\' && i + 1 < raw.n) {
      char e = raw.s[++i];
      int h1 = xrt__hexval(e), h2 = i + 1 < raw.n ? xrt__hexval(raw.s[i + 1]) : -1;
      if (e == 'n') c = '\n';
      else if (e == 't') c = '\t';
      else if (h1 >= 0 && h2 >= 0) c = (char)(h1 * 16 + h2), i++;
      else c = e;
    }
    out[n++] = c;
  }
  out[n] = 0;
  if (len) *len = (int64_t)n;
  return out;
}

static const char *xrt__parse_string(xrt__parser *p, int64_t *len) {
  if (xrt__peek(p) != '"') xrt__expected(p, "a string");
  return xrt__unescape(p, xrt__string_raw(p), len);
}

XRT__PRIVATE void xrt__depth_in(xrt__parser *p) {
  if (++p->depth > XRT__PARSE_MAX_DEPTH)
    xrt__perr(p, p->p, XRT_INVALID_ARGUMENT, "nesting deeper than %d levels",
              XRT__PARSE_MAX_DEPTH);
}

/* Skips balanced text up to (not including) an unmatched closer, or a
 * top-level ',' when stop_at_comma.  Brackets ([{< nest, strings are opaque,
 * "->" is not a bracket. */
XRT__PRIVATE void xrt__skip_balanced(xrt__parser *p, bool stop_at_comma) {
  char stack[XRT__PARSE_MAX_DEPTH];
  int depth = 0;
  while (p->p < p->end) {
    char c = *p->p, close = c == '(' ? ')' : c == '[' ? ']' : c == '{' ? '}'
                                                  : c == '<' ? '>' : 0;
    if (c == '"') {
      xrt__string_raw(p);
    } else if (c == '/' && p->p + 1 < p->end && p->p[1] == '/') {
      xrt__ws(p);
    } else if (c == '-' && p->p + 1 < p->end && p->p[1] == '>') {
      p->p += 2;
    } else if (close) {
      if (depth == XRT__PARSE_MAX_DEPTH)
        xrt__perr(p, p->p, XRT_INVALID_ARGUMENT, "nesting too deep");
      stack[depth++] = close;
      p->p++;
    } else if (c == ')' || c == ']' || c == '}' || c == '>') {
      if (depth == 0) return;
      if (stack[depth - 1] != c)
        xrt__perr(p, p->p, XRT_INVALID_ARGUMENT, "unbalanced '%c'", c);
      depth--;
      p->p++;
    } else if (c == ',' && depth == 0 && stop_at_comma) {
      return;
    } else {
      p->p++;
    }
  }
  if (depth) xrt__perr(p, p->p, XRT_INVALID_ARGUMENT, "unexpected end of input");
}

/* Accepts and ignores a location: loc(...). */
XRT__PRIVATE void xrt__skip_loc(xrt__parser *p) {
  if (!xrt__peek_kw(p, "loc")) return;
  xrt__eat_kw(p, "loc");
  xrt__expect(p, '(');
  xrt__skip_balanced(p, false);
  xrt__expect(p, ')');
}

/* strtod's result for the unsigned decimal digits[.digits][e[+-]digits] in
 * [s, e) when one IEEE operation gives it exactly (Clinger's fast path:
 * a mantissa below 2^53 and a power of ten below 1e23); false otherwise. */
static bool xrt__fast_decimal(const char *s, const char *e, double *out) {
  static const double p10[23] = {1e0,  1e1,  1e2,  1e3,  1e4,  1e5,  1e6,  1e7,
                                 1e8,  1e9,  1e10, 1e11, 1e12, 1e13, 1e14, 1e15,
                                 1e16, 1e17, 1e18, 1e19, 1e20, 1e21, 1e22};
#if FLT_EVAL_METHOD != 0
  return false; /* excess precision would round twice */
#endif
  uint64_t m = 0;
  int ex = 0;
  bool dot = false;
  for (; s < e && (xrt__is_digit(*s) || (*s == '.' && !dot)); s++) {
    if (*s == '.') {
      dot = true;
      continue;
    }
    if (m > ((uint64_t)1 << 53) / 10) return false;
    m = m * 10 + (uint64_t)(*s - '0');
    ex -= dot;
  }
  if (s < e) { /* e[+-]digits */
    int sign = 1, x = 0;
    s++;
    if (s < e && (*s == '+' || *s == '-')) sign = *s++ == '-' ? -1 : 1;
    for (; s < e; s++) {
      if (x > 1000) return false;
      x = x * 10 + (*s - '0');
    }
    ex += sign * x;
  }
  if (m == 0) {
    *out = 0.0;
    return true;
  }
  if (m > ((uint64_t)1 << 53) || ex < -22 || ex > 22) return false;
  *out = ex < 0 ? (double)m / p10[-ex] : (double)m * p10[ex];
  return true;
}

/* Scans a numeric token: -?(0x[hex]+ | digits[.digits][e[+-]digits] | inf |
 * nan).  Integers go to mag (overflow is an error), others through strtod. */
XRT__PRIVATE xrt__num xrt__scan_num(xrt__parser *p) {
  xrt__num r;
  memset(&r, 0, sizeof r);
  xrt__ws(p);
  r.at = p->p;
  if (p->p < p->end && *p->p == '-') r.neg = true, p->p++;
  const char *s = p->p, *e = p->end;
  if (e - s >= 3 && (!memcmp(s, "inf", 3) || !memcmp(s, "nan", 3)) &&
      (e - s == 3 || !xrt__is_idchar(s[3]))) {
    r.is_float = true;
    r.d = s[0] == 'i' ? INFINITY : NAN;
    if (r.neg) r.d = -r.d;
    p->p += 3;
    return r;
  }
  if (e - s > 2 && s[0] == '0' && (s[1] == 'x' || s[1] == 'X') &&
      xrt__hexval(s[2]) >= 0) {
    r.hex = true;
    for (s += 2; s < e && xrt__hexval(*s) >= 0; s++) {
      if (r.mag >> 60) xrt__perr(p, r.at, XRT_INVALID_ARGUMENT, "integer too large");
      r.mag = r.mag * 16 + (uint64_t)xrt__hexval(*s);
    }
    p->p = s;
    r.d = r.neg ? -(double)r.mag : (double)r.mag;
    return r;
  }
  if (s >= e || !xrt__is_digit(*s)) xrt__expected(p, "a number");
  bool big = false;
  for (; s < e && xrt__is_digit(*s); s++) {
    uint64_t d = (uint64_t)(*s - '0');
    if (r.mag > (UINT64_MAX - d) / 10) big = true;
    r.mag = r.mag * 10 + d;
  }
  if (s < e && *s == '.') {
    r.is_float = true;
    for (s++; s < e && xrt__is_digit(*s); s++) {}
  }
  if (s < e && (*s == 'e' || *s == 'E')) {
    const char *x = s + 1;
    if (x < e && (*x == '+' || *x == '-')) x++;
    if (x < e && xrt__is_digit(*x)) {
      r.is_float = true;
      for (s = x; s < e && xrt__is_digit(*s); s++) {}
    }
  }
  if (big && !r.is_float)
    xrt__perr(p, r.at, XRT_INVALID_ARGUMENT, "integer too large");
  char buf[128];
  size_t n = (size_t)(s - r.at);
  if (n >= sizeof buf) xrt__perr(p, r.at, XRT_INVALID_ARGUMENT, "number too long");
  double d;
  if (xrt__fast_decimal(r.neg ? r.at + 1 : r.at, s, &d)) {
    r.d = r.neg ? -d : d;
  } else {
    memcpy(buf, r.at, n);
    buf[n] = 0;
    r.d = strtod(buf, NULL);
  }
  p->p = s;
  return r;
}

/* An int64 (used for dimensions, axes, attribute integers). */
XRT__PRIVATE int64_t xrt__num_to_i64(xrt__parser *p, const xrt__num *r) {
  if (r->is_float)
    xrt__perr(p, r->at, XRT_INVALID_ARGUMENT, "expected an integer");
  if (r->neg) {
    if (r->mag > (uint64_t)INT64_MAX + 1)
      xrt__perr(p, r->at, XRT_INVALID_ARGUMENT, "integer out of range");
    return (int64_t)(0 - r->mag);
  }
  if (r->mag > (uint64_t)INT64_MAX && !r->hex)
    xrt__perr(p, r->at, XRT_INVALID_ARGUMENT, "integer out of range");
  return (int64_t)r->mag; /* large hex: the bit pattern */
}

XRT__PRIVATE int64_t xrt__parse_i64(xrt__parser *p) {
  xrt__num r = xrt__scan_num(p);
  return xrt__num_to_i64(p, &r);
}

/* ---------------------------------------------------------------------
 * Types
 * ------------------------------------------------------------------- */

static xrt_dtype xrt__dtype_named(xrt__parser *p, xrt__tok t) {
  if (xrt__tok_is(t, "index")) return p->in_attr ? XRT_S64 : XRT__DT_INDEX;
  /* xrt_dtype_from_name scans a table; programs repeat one or two types */
  if (t.n == p->dt_last.n && t.n && !memcmp(t.s, p->dt_last.s, t.n))
    return p->dt_last_type;
  xrt_dtype dt = xrt_dtype_from_name(t.s, t.n);
  if (dt != XRT_DTYPE_INVALID) p->dt_last = t, p->dt_last_type = dt;
  return dt;
}

/* Integer range of a storage type (quant defaults). */
XRT__PRIVATE void xrt__int_range(xrt_dtype dt, int64_t *lo, int64_t *hi) {
  int b = xrt_dtype_bits(dt);
  if (dt == XRT_PRED) *lo = 0, *hi = 1;
  else if (xrt_dtype_is_signed_int(dt))
    *lo = b >= 64 ? INT64_MIN : -((int64_t)1 << (b - 1)),
    *hi = b >= 64 ? INT64_MAX : ((int64_t)1 << (b - 1)) - 1;
  else
    *lo = 0, *hi = b >= 63 ? INT64_MAX : ((int64_t)1 << b) - 1;
}

/* quant storage types are spelled i8 / u8 (not ui8). */
static xrt_dtype xrt__quant_storage(xrt__parser *p) {
  xrt__ws(p);
  const char *at = p->p;
  xrt__tok t = xrt__ident(p);
  xrt_dtype dt = xrt_dtype_from_name(t.s, t.n);
  if (t.n >= 2 && t.n < 8 && t.s[0] == 'u' && xrt__is_digit(t.s[1])) {
    char buf[10] = "ui";
    memcpy(buf + 2, t.s + 1, t.n - 1);
    dt = xrt_dtype_from_name(buf, t.n + 1);
  }
  if (!xrt_dtype_is_signed_int(dt) && !xrt_dtype_is_unsigned_int(dt))
    xrt__perr(p, at, XRT_UNIMPLEMENTED, "unknown quantized storage type '%.*s'",
              (int)t.n, t.s);
  return dt;
}

/* One scale[:zero_point] of a !quant.uniform. */
static void xrt__quant_scale(xrt__parser *p) {
  xrt__num r = xrt__scan_num(p);
  if (r.hex && !r.neg) memcpy(&r.d, &r.mag, 8); /* as MLIR: a hex is f64 bits */
  *(double *)xrt__push_raw(p, &p->f64s) = r.d;
  int64_t zp = 0;
  if (xrt__eat(p, ':')) zp = xrt__parse_i64(p);
  *(int64_t *)xrt__push_raw(p, &p->i64s) = zp;
}

/* !quant.uniform<i8[<min:max>]:f32[:axis], scale[:zp] | {s:zp, ...}> after
 * the name; returns the storage dtype. */
static xrt_dtype xrt__parse_quant(xrt__parser *p, const xrt_ir_quant **out) {
  xrt_ir_quant *q = xrt__p_alloc(p, sizeof *q);
  xrt__expect(p, '<');
  q->storage = xrt__quant_storage(p);
  xrt__int_range(q->storage, &q->storage_min, &q->storage_max);
  if (xrt__eat(p, '<')) {
    q->storage_min = xrt__parse_i64(p);
    xrt__expect(p, ':');
    q->storage_max = xrt__parse_i64(p);
    xrt__expect(p, '>');
  }
  xrt__expect(p, ':');
  xrt__ws(p);
  const char *at = p->p;
  xrt__tok e = xrt__ident(p);
  q->expressed = xrt_dtype_from_name(e.s, e.n);
  if (!xrt_dtype_is_float(q->expressed))
    xrt__perr(p, at, XRT_UNIMPLEMENTED, "unknown quantized expressed type '%.*s'",
              (int)e.n, e.s);
  q->axis = -1;
  if (xrt__eat(p, ':')) { /* -1 stands for per-tensor: refuse it written */
    xrt__ws(p);
    const char *dat = p->p;
    int64_t d = xrt__parse_i64(p);
    if (d < 0 || d >= XRT_MAX_RANK)
      xrt__perr(p, dat, XRT_INVALID_ARGUMENT, "quantization dimension %lld "
                "must be in [0, %d) (C11: 0 <= quantization_dimension)",
                (long long)d, XRT_MAX_RANK);
    q->axis = (int32_t)d;
  }
  xrt__expect(p, ',');
  size_t fm = p->f64s.n, im = p->i64s.n;
  if (xrt__eat(p, '{')) {
    do xrt__quant_scale(p);
    while (xrt__eat(p, ','));
    xrt__expect(p, '}');
  } else {
    xrt__quant_scale(p);
  }
  xrt__expect(p, '>');
  q->num_scales = (int32_t)(p->f64s.n - fm);
  q->scales = xrt__vcopy(p, &p->f64s, fm);
  q->zero_points = xrt__vcopy(p, &p->i64s, im);
  p->f64s.n = fm;
  p->i64s.n = im;
  *out = q;
  return q->storage;
}

/* An element type: f32, ui8, complex<f64>, !quant.uniform<...>. */
static xrt_dtype xrt__parse_dtype(xrt__parser *p, const xrt_ir_quant **q) {
  xrt__ws(p);
  const char *at = p->p;
  if (xrt__eat(p, '!')) {
    xrt__tok t = xrt__suffix_name(p);
    if (xrt__tok_is(t, "quant.uniform")) return xrt__parse_quant(p, q);
    xrt__perr(p, at, XRT_UNIMPLEMENTED, "unknown type '!%.*s'", (int)t.n, t.s);
  }
  xrt__tok t = xrt__ident(p);
  if (xrt__tok_is(t, "complex")) {
    xrt__expect(p, '<');
    xrt__ws(p);
    const char *eat = p->p;
    xrt__tok e = xrt__ident(p);
    xrt__expect(p, '>');
    if (xrt__tok_is(e, "f32")) return XRT_C64;
    if (xrt__tok_is(e, "f64")) return XRT_C128;
    xrt__perr(p, eat, XRT_UNIMPLEMENTED, "unknown type 'complex<%.*s>'",
              (int)e.n, e.s);
  }
  if (!t.n) xrt__expected(p, "a type");
  xrt_dtype dt = xrt__dtype_named(p, t);
  if (dt == XRT_DTYPE_INVALID)
    xrt__perr(p, at, XRT_UNIMPLEMENTED, "unknown type '%.*s'", (int)t.n, t.s);
  return dt;
}

/* Whether the text at p->p starts with s (moving past it if so). */
static bool xrt__eat_text(xrt__parser *p, const char *s) {
  size_t n = strlen(s);
  if ((size_t)(p->end - p->p) < n || memcmp(p->p, s, n)) return false;
  p->p += n;
  return true;
}

/* A tensor type's encoding after its ',': #stablehlo.bounds<16, ?> (or
 * the long form #stablehlo.type_extensions<bounds = [16, ?]>) becomes the
 * type's bounds (see XRT__TYPE_BOUNDS); other encodings are ignored. */
static void xrt__parse_encoding(xrt__parser *p, xrt_ir_type *t) {
  xrt__ws(p);
  const char *at = p->p;
  bool ext = false;
  if (!xrt__eat_text(p, "#stablehlo.bounds<")) {
    if (!xrt__eat_text(p, "#stablehlo.type_extensions<")) {
      xrt__skip_balanced(p, false);
      return;
    }
    ext = true;
    xrt__expect_kw(p, "bounds");
    xrt__expect(p, '=');
    xrt__expect(p, '[');
  }
  xrt_ir_type *b = xrt__p_alloc(p, sizeof *b);
  memset(b, 0, sizeof *b);
  b->kind = XRT__TYPE_BOUNDS;
  if (xrt__peek(p) != (ext ? ']' : '>')) {
    do {
      xrt__ws(p);
      const char *dat = p->p;
      if (b->shape.rank == XRT_MAX_RANK)
        xrt__perr(p, dat, XRT_INVALID_ARGUMENT, "more bounds than dimensions");
      int64_t d = XRT_DIM_DYNAMIC;
      if (!xrt__eat(p, '?') && (d = xrt__parse_i64(p)) < 0)
        xrt__perr(p, dat, XRT_INVALID_ARGUMENT, "a bound must be ? or >= 0");
      if (b->shape.rank < t->shape.rank &&
          t->shape.dims[b->shape.rank] != XRT_DIM_DYNAMIC && d != XRT_DIM_DYNAMIC)
        xrt__perr(p, dat, XRT_INVALID_ARGUMENT, "static dimension %d cannot "
                  "have a bound (its bound must be ?)", (int)b->shape.rank);
      b->shape.dims[b->shape.rank++] = d;
    } while (xrt__eat(p, ','));
  }
  if (ext) xrt__expect(p, ']');
  xrt__expect(p, '>');
  if (b->shape.rank != t->shape.rank)
    xrt__perr(p, at, XRT_INVALID_ARGUMENT, "%d bounds for a tensor of rank %d",
              (int)b->shape.rank, (int)t->shape.rank);
  t->elems = b;
}

/* The 2x3x part of tensor<2x3xf32>, then the element type (and a tensor's
 * encoding; a memref has none of its own).  Unranked types (tensor<*xf32>)
 * are no StableHLO. */
static void xrt__parse_tensor_body(xrt__parser *p, xrt_ir_type *t, bool memref) {
  for (;;) {
    int c = xrt__peek(p);
    if (c == '*')
      xrt__perr(p, p->p, XRT_UNIMPLEMENTED, "unranked %s are not supported",
                memref ? "memrefs" : "tensors");
    if (!xrt__is_digit(c) && c != '?') break;
    if (t->shape.rank == XRT_MAX_RANK)
      xrt__perr(p, p->p, XRT_INVALID_ARGUMENT, "rank exceeds %d", XRT_MAX_RANK);
    if (c == '?') { /* refined at compile (refine.c) */
      p->p++;
      t->shape.dims[t->shape.rank++] = XRT_DIM_DYNAMIC;
      if (p->p >= p->end || *p->p != 'x') xrt__expected(p, "'x'");
      p->p++;
      continue;
    }
    int64_t d = 0;
    const char *at = p->p;
    for (; p->p < p->end && xrt__is_digit(*p->p); p->p++) {
      if (d > (INT64_MAX - 9) / 10)
        xrt__perr(p, at, XRT_INVALID_ARGUMENT, "dimension too large");
      d = d * 10 + (*p->p - '0');
    }
    t->shape.dims[t->shape.rank++] = d;
    if (p->p >= p->end || *p->p != 'x') xrt__expected(p, "'x'");
    p->p++;
  }
  t->shape.dtype = xrt__parse_dtype(p, &t->quant);
  if (memref && xrt__peek(p) == ',')
    xrt__perr(p, p->p, XRT_UNIMPLEMENTED, "memref layouts and memory spaces "
              "are not supported");
  if (xrt__eat(p, ',')) xrt__parse_encoding(p, t);
}

static void xrt__parse_tuple_body(xrt__parser *p, xrt_ir_type *t) {
  size_t mark = p->tys.n;
  t->kind = XRT_TYPE_TUPLE;
  if (xrt__peek(p) != '>') {
    do {
      xrt_ir_type e;
      xrt__parse_type(p, &e);
      *(xrt_ir_type *)xrt__push_raw(p, &p->tys) = e;
    } while (xrt__eat(p, ','));
  }
  t->num_elems = (int32_t)(p->tys.n - mark);
  t->elems = xrt__vcopy(p, &p->tys, mark);
  p->tys.n = mark;
}

XRT__PRIVATE void xrt__parse_type(xrt__parser *p, xrt_ir_type *t) {
  memset(t, 0, sizeof *t);
  xrt__ws(p);
  const char *at = p->p;
  xrt__depth_in(p);
  bool memref = false;
  xrt__tok bang = {NULL, 0};
  if (xrt__eat_kw(p, "tensor") || (memref = xrt__eat_kw(p, "memref"))) {
    xrt__expect(p, '<');
    xrt__parse_tensor_body(p, t, memref);
    if (memref) t->kind = XRT__TYPE_MEMREF;
    xrt__expect(p, '>');
  } else if (xrt__eat_kw(p, "tuple")) {
    xrt__expect(p, '<');
    xrt__parse_tuple_body(p, t);
    xrt__expect(p, '>');
  } else if (xrt__eat(p, '!') && xrt__tok_is(bang = xrt__suffix_name(p), "stablehlo.token")) {
    t->kind = XRT_TYPE_TOKEN;
  } else if (xrt__tok_is(bang, "stablehlo.future")) {
    xrt__expect(p, '<');
    xrt__parse_tuple_body(p, t);
    t->kind = XRT__TYPE_FUTURE;
    xrt__expect(p, '>');
  } else {
    p->p = at;
    if (!xrt__is_idstart(xrt__peek(p)) && xrt__peek(p) != '!')
      xrt__perr(p, at, XRT_INVALID_ARGUMENT, "expected a type");
    t->shape.dtype = xrt__parse_dtype(p, &t->quant); /* scalar: i32 */
  }
  p->depth--;
}

/* ---------------------------------------------------------------------
 * Dense literals
 * ------------------------------------------------------------------- */

/* (float)d without the undefined behaviour of out-of-range conversions:
 * beyond FLT_MAX + half an ulp it is infinity, else FLT_MAX. */
XRT__PRIVATE float xrt__f64_to_f32(double d) {
  const double max = 3.4028234663852886e38, half_ulp = 10141204801825835211973625643008.0;
  if (!isfinite(d) || fabs(d) <= max) return (float)d;
  float r = fabs(d) >= max + half_ulp ? (float)INFINITY : (float)max;
  return d < 0 ? -r : r;
}

/* Writes d as an element of float type dt. */
static void xrt__store_float(xrt__parser *p, const char *at, xrt_dtype dt,
                             double d, uint8_t *dst) {
  if (dt == XRT_F64) {
    memcpy(dst, &d, 8);
  } else if (dt == XRT_F32) {
    float f = xrt__f64_to_f32(d);
    memcpy(dst, &f, 4);
  } else if (dt == XRT_F16) {
    uint16_t h = xrt_f64_to_f16(d);
    memcpy(dst, &h, 2);
  } else if (dt == XRT_BF16) {
    uint16_t h = xrt_f64_to_bf16(d);
    memcpy(dst, &h, 2);
  } else if (dt >= XRT_F8E4M3FN && dt <= XRT_F4E2M1FN) {
    int32_t b = xrt_minifloat_from_f64(dt, d);
    if (b < 0)
      xrt__perr(p, at, XRT_INVALID_ARGUMENT, "value out of range for %s",
                xrt_dtype_name(dt));
    *dst = (uint8_t)b;
  } else {
    xrt__perr(p, at, XRT_UNIMPLEMENTED, "float literal of type %s",
              xrt_dtype_name(dt));
  }
}

/* One float element: decimal, inf, nan, or 0x... giving the bit pattern. */
static void xrt__lit_float(xrt__parser *p, xrt_dtype dt, uint8_t *dst) {
  xrt__num r = xrt__scan_num(p);
  if (!r.hex) {
    xrt__store_float(p, r.at, dt, r.d, dst);
    return;
  }
  int bits = xrt_dtype_bits(dt);
  if (r.neg || (bits < 64 && r.mag >> bits))
    xrt__perr(p, r.at, XRT_INVALID_ARGUMENT, "hex value out of range for %s",
              xrt_dtype_name(dt));
  uint64_t m = r.mag;
  memcpy(dst, &m, xrt_dtype_size(dt)); /* little-endian host */
}

/* One integer element with the type's range check. */
static void xrt__lit_int(xrt__parser *p, xrt_dtype dt, uint8_t *dst) {
  xrt__ws(p);
  const char *at = p->p;
  int64_t v;
  if (xrt__eat_kw(p, "true")) v = 1;
  else if (xrt__eat_kw(p, "false")) v = 0;
  else {
    xrt__num r = xrt__scan_num(p);
    if (r.is_float)
      xrt__perr(p, at, XRT_INVALID_ARGUMENT, "expected an integer for %s",
                xrt_dtype_name(dt));
    int64_t lo, hi;
    int bits = xrt_dtype_bits(dt);
    xrt__int_range(dt, &lo, &hi);
    bool ok;
    if (r.hex && !r.neg && xrt_dtype_is_signed_int(dt)) { /* bit pattern */
      ok = bits >= 64 || r.mag < ((uint64_t)1 << bits);
      v = (int64_t)r.mag;
      if (ok && bits < 64 && (r.mag >> (bits - 1)) & 1) v -= (int64_t)1 << bits;
    } else if (r.neg) {
      ok = r.mag <= (uint64_t)-(lo + 1) + 1;
      v = (int64_t)(0 - r.mag);
    } else {
      ok = r.mag <= (uint64_t)hi || (bits == 64 && !xrt_dtype_is_signed_int(dt));
      v = (int64_t)r.mag;
    }
    if (!ok)
      xrt__perr(p, at, XRT_INVALID_ARGUMENT, "value %.*s out of range for %s",
                (int)(p->p - at), at, xrt_dtype_name(dt));
  }
  if (dt == XRT_PRED && (v < 0 || v > 1))
    xrt__perr(p, at, XRT_INVALID_ARGUMENT, "value out of range for i1");
  size_t sz = xrt_dtype_size(dt);
  if (sz == 1) *dst = (uint8_t)v;
  else if (sz == 2) { uint16_t x = (uint16_t)v; memcpy(dst, &x, 2); }
  else if (sz == 4) { uint32_t x = (uint32_t)v; memcpy(dst, &x, 4); }
  else memcpy(dst, &v, 8);
}

typedef struct xrt__litw { /* literal being written */
  const xrt_ir_type *type;
  uint8_t *data;
  size_t esz;
  int64_t n, cap; /* elements seen, elements that fit in data */
  uint8_t sink[16]; /* elements past cap go here: a count error follows */
} xrt__litw;

static uint8_t *xrt__litw_slot(xrt__litw *w) {
  return w->n < w->cap ? w->data + (size_t)w->n * w->esz : w->sink;
}

static void xrt__lit_elem(xrt__parser *p, xrt__litw *w) {
  xrt_dtype dt = w->type->shape.dtype;
  uint8_t *dst = xrt__litw_slot(w);
  if (xrt_dtype_is_complex(dt)) {
    xrt_dtype part = dt == XRT_C64 ? XRT_F32 : XRT_F64;
    size_t half = w->esz / 2;
    if (xrt__eat(p, '(')) {
      xrt__lit_float(p, part, dst);
      xrt__expect(p, ',');
      xrt__lit_float(p, part, dst + half);
      xrt__expect(p, ')');
    } else {
      xrt__lit_float(p, part, dst);
      xrt__store_float(p, p->p, part, 0.0, dst + half);
    }
  } else if (xrt_dtype_is_float(dt)) {
    xrt__lit_float(p, dt, dst);
  } else {
    xrt__lit_int(p, dt, dst);
  }
  w->n++;
}

/* [ ... ] at nesting level `level`; its length must match dims[level]. */
static void xrt__lit_list(xrt__parser *p, xrt__litw *w, int level) {
  const xrt_shape *s = &w->type->shape;
  xrt__ws(p);
  const char *at = p->p;
  if (level >= s->rank)
    xrt__perr(p, at, XRT_INVALID_ARGUMENT,
              "dense literal nested deeper than the rank (%d) of its type",
              (int)s->rank);
  xrt__expect(p, '[');
  int64_t count = 0;
  if (!xrt__eat(p, ']')) {
    do {
      if (level + 1 < s->rank) xrt__lit_list(p, w, level + 1);
      else xrt__lit_elem(p, w);
      count++;
    } while (xrt__eat(p, ','));
    xrt__expect(p, ']');
  }
  if (count != s->dims[level])
    xrt__perr(p, at, XRT_INVALID_ARGUMENT,
              "dense literal has %lld elements in dimension %d but its type "
              "has %lld",
              (long long)count, level, (long long)s->dims[level]);
}

static int64_t xrt__numel_sat(const xrt_shape *s) { /* saturating */
  int64_t n = 1;
  for (int i = 0; i < s->rank; i++) {
    if (s->dims[i] == 0) return 0;
    n = n > INT64_MAX / s->dims[i] ? INT64_MAX : n * s->dims[i];
  }
  return n;
}

/* "@K": large constant K of the portable artifact the text was read from
 * (xrt__bctext), its raw element bytes copied; sizes checked as for hex. */
static bool xrt__lit_blob(xrt__parser *p, xrt_ir_literal *lit, int64_t numel,
                          size_t esz, const char *at, xrt__tok raw) {
  if (!p->bc || raw.n < 2 || raw.s[0] != '@') return false;
  size_t k = 0;
  for (size_t i = 1; i < raw.n; i++) {
    if (raw.s[i] < '0' || raw.s[i] > '9' || k > SIZE_MAX / 10 - 10)
      xrt__perr(p, at, XRT_INVALID_ARGUMENT, "bad constant reference");
    k = k * 10 + (size_t)(raw.s[i] - '0');
  }
  if (k >= p->bc->num_blobs)
    xrt__perr(p, at, XRT_INVALID_ARGUMENT, "constant reference out of range");
  size_t bytes = p->bc->blobs[k].len;
  bool splat = bytes == esz && numel != 1;
  if (!splat && (numel == INT64_MAX || bytes != (size_t)numel * esz))
    xrt__perr(p, at, XRT_INVALID_ARGUMENT,
              "constant has %zu bytes, its type needs %lld", bytes,
              (long long)(numel == INT64_MAX ? -1 : numel * (int64_t)esz));
  uint8_t *d = xrt__p_alloc(p, bytes);
  memcpy(d, p->bc->blobs[k].data, bytes);
  lit->data = d;
  lit->bytes = bytes;
  lit->splat = splat;
  return true;
}

/* "0x..." raw element bytes; one element's worth is a splat. */
static void xrt__lit_hex(xrt__parser *p, xrt_ir_literal *lit, int64_t numel,
                         size_t esz) {
  const char *at = p->p;
  xrt__tok raw = xrt__string_raw(p);
  if (xrt__lit_blob(p, lit, numel, esz, at, raw)) return;
  if (raw.n < 2 || raw.s[0] != '0' || (raw.s[1] != 'x' && raw.s[1] != 'X') ||
      raw.n % 2)
    xrt__perr(p, at, XRT_INVALID_ARGUMENT, "expected a hex string \"0x...\"");
  size_t bytes = (raw.n - 2) / 2;
  bool splat = bytes == esz && numel != 1;
  if (!splat && (numel == INT64_MAX || bytes != (size_t)numel * esz))
    xrt__perr(p, at, XRT_INVALID_ARGUMENT,
              "hex literal has %zu bytes, its type needs %lld", bytes,
              (long long)(numel == INT64_MAX ? -1 : numel * (int64_t)esz));
  uint8_t *d = xrt__p_alloc(p, bytes);
  for (size_t i = 0; i < bytes; i++) {
    int h = xrt__hexval(raw.s[2 + 2 * i]), l = xrt__hexval(raw.s[3 + 2 * i]);
    if (h < 0 || l < 0)
      xrt__perr(p, at, XRT_INVALID_ARGUMENT, "bad hex digit in literal");
    d[i] = (uint8_t)(h * 16 + l);
  }
  lit->data = d;
  lit->bytes = bytes;
  lit->splat = splat;
}

/* One form for one value, whichever way it was written (a portable
 * artifact cannot tell them apart): a literal of numel > 1 elements that
 * are all the same becomes a splat of one (as MLIR stores it), and one of
 * a single element is a splat only at rank 0 (dense<1.0> : tensor<f32>;
 * hex, there, says otherwise), a list of one elsewhere. */
static void xrt__lit_canon(xrt_ir_literal *lit, const xrt_shape *s,
                           int64_t numel, size_t esz) {
  if (numel == 1 && s->rank > 0) lit->splat = false; /* bytes: esz either way */
  if (lit->splat || numel < 2 || !esz || lit->bytes != (size_t)numel * esz)
    return;
  const uint8_t *d = (const uint8_t *)lit->data;
  for (size_t i = esz; i < lit->bytes; i += esz)
    if (memcmp(d, d + i, esz)) return;
  lit->splat = true;
  lit->bytes = esz;
}

/* Parses the text between dense< and > (already delimited: p->end is set
 * to the closing '>') for a literal of type t. */
static void xrt__lit_body(xrt__parser *p, const xrt_ir_type *t,
                          xrt_ir_literal *lit) {
  size_t esz = xrt_dtype_size(t->shape.dtype);
  int64_t numel = xrt__numel_sat(&t->shape);
  lit->type = *t;
  int c = xrt__peek(p);
  if (c < 0) { /* dense<> */
    if (numel != 0)
      xrt__perr(p, p->p, XRT_INVALID_ARGUMENT,
                "empty dense literal for a type with %lld elements",
                (long long)numel);
    return;
  }
  if (c == '"') {
    xrt__lit_hex(p, lit, numel, esz);
    xrt__lit_canon(lit, &t->shape, numel, esz);
    return;
  }
  int64_t text = (int64_t)(p->end - p->p) + 1; /* >= elements possible */
  xrt__litw w = {t, NULL, esz, 0, numel < text ? numel : text, {0}};
  if (c != '[') w.cap = 1;
  w.data = xrt__p_alloc(p, (size_t)w.cap * esz);
  if (c == '[') {
    xrt__lit_list(p, &w, 0);
  } else {
    xrt__lit_elem(p, &w);
    lit->splat = true;
  }
  lit->data = w.data;
  lit->bytes = (size_t)(w.n < w.cap ? w.n : w.cap) * esz;
  xrt__lit_canon(lit, &t->shape, numel, esz);
}

/* Moves to the '>' that closes a dense<...> body.  Bodies are usually
 * plain number lists: then it is the first '>', found with memchr. */
static void xrt__skip_dense_body(xrt__parser *p) {
  const char *s = p->p, *gt = memchr(s, '>', (size_t)(p->end - s));
  size_t n = gt ? (size_t)(gt - s) : 0;
  if (gt && gt > s && gt[-1] != '-' && !memchr(s, '<', n) &&
      !memchr(s, '"', n) && !memchr(s, '/', n)) {
    p->p = gt;
    return;
  }
  xrt__skip_balanced(p, false);
}

/* dense<...> : type.  The body is scanned first, then parsed once the type
 * is known.  `index` elements are read as i64 (outside attributes, where
 * `index` is a type of its own, written gets the type as written). */
XRT__PRIVATE void xrt__parse_dense_as(xrt__parser *p, xrt_ir_literal *lit,
                                      xrt_ir_type *written) {
  xrt__expect_kw(p, "dense");
  xrt__expect(p, '<');
  const char *body = p->p;
  xrt__skip_dense_body(p);
  const char *body_end = p->p;
  xrt__expect(p, '>');
  xrt__expect(p, ':');
  xrt_ir_type t;
  xrt__ws(p);
  const char *tat = p->p;
  xrt__parse_type(p, &t);
  if (t.kind != XRT_TYPE_TENSOR)
    xrt__perr(p, tat, XRT_INVALID_ARGUMENT, "dense literal needs a tensor type");
  if (written) *written = t;
  if (t.shape.dtype == XRT__DT_INDEX) t.shape.dtype = XRT_S64;
  const char *save = p->p, *save_end = p->end;
  p->p = body;
  p->end = body_end;
  memset(lit, 0, sizeof *lit);
  xrt__lit_body(p, &t, lit);
  if (xrt__peek(p) >= 0) xrt__expected(p, "'>'");
  p->p = save;
  p->end = save_end;
}

XRT__PRIVATE void xrt__parse_dense(xrt__parser *p, xrt_ir_literal *lit) {
  xrt__parse_dense_as(p, lit, NULL);
}

/* ---------------------------------------------------------------------
 * Attributes
 * ------------------------------------------------------------------- */

/* Reads element i of an integer literal as int64. */
static int64_t xrt__lit_get_int(const xrt_ir_literal *l, int64_t i) {
  xrt_dtype dt = l->type.shape.dtype;
  size_t sz = xrt_dtype_size(dt);
  const uint8_t *s = (const uint8_t *)l->data + (l->splat ? 0 : (size_t)i * sz);
  bool sg = xrt_dtype_is_signed_int(dt);
  switch (sz) {
  case 1: return sg ? (int64_t)(int8_t)s[0] : (int64_t)s[0];
  case 2: { uint16_t x; memcpy(&x, s, 2); return sg ? (int16_t)x : (int64_t)x; }
  case 4: { uint32_t x; memcpy(&x, s, 4); return sg ? (int32_t)x : (int64_t)x; }
  default: { int64_t x; memcpy(&x, s, 8); return x; }
  }
}

/* dense<...> : T in an attribute: integers and i1 become INTS (keeping the
 * literal in lit, for ops whose attribute is a tensor value), others DENSE. */
static void xrt__attr_dense(xrt__parser *p, xrt_ir_attr *a) {
  xrt_ir_literal *lit = xrt__p_alloc(p, sizeof *lit);
  xrt__parse_dense(p, lit);
  int64_t n = xrt__numel_sat(&lit->type.shape);
  xrt_dtype dt = lit->type.shape.dtype;
  a->lit = lit; /* kept: a constant's 'value' turns back into DENSE */
  if ((xrt__dtype_is_int(dt) || dt == XRT_PRED) && !lit->type.quant &&
      n <= (1 << 20)) {
    int64_t *v = xrt__p_alloc(p, (size_t)n * sizeof *v);
    for (int64_t i = 0; i < n; i++) v[i] = xrt__lit_get_int(lit, i);
    a->kind = XRT_ATTR_INTS;
    a->ints = v;
    a->n = n;
  } else {
    a->kind = XRT_ATTR_DENSE;
  }
}

/* Turns the attrs pushed since mark into a LIST, or INTS when all are
 * integers; pops them. */
static void xrt__attr_collect_list(xrt__parser *p, xrt_ir_attr *a, size_t mark) {
  size_t n = p->attrs.n - mark;
  bool ints = true;
  for (size_t i = mark; i < p->attrs.n; i++)
    ints = ints && XRT__VAT(p->attrs, xrt_ir_attr, i).kind == XRT_ATTR_INT;
  if (ints) {
    int64_t *v = xrt__p_alloc(p, n * sizeof *v);
    for (size_t i = 0; i < n; i++) v[i] = XRT__VAT(p->attrs, xrt_ir_attr, mark + i).i;
    a->kind = XRT_ATTR_INTS;
    a->ints = v;
    a->n = (int64_t)n;
  } else {
    a->kind = XRT_ATTR_LIST;
    a->items = xrt__vcopy(p, &p->attrs, mark);
    a->num_items = (int32_t)n;
  }
  p->attrs.n = mark;
}

/* [a, b, ...] */
static void xrt__attr_list(xrt__parser *p, xrt_ir_attr *a, bool suffix) {
  size_t mark = p->attrs.n;
  xrt__expect(p, '[');
  if (!xrt__eat(p, ']')) {
    do {
      xrt_ir_attr e;
      xrt__parse_attr(p, &e, suffix);
      *(xrt_ir_attr *)xrt__push_raw(p, &p->attrs) = e;
    } while (xrt__eat(p, ','));
    xrt__expect(p, ']');
  }
  xrt__attr_collect_list(p, a, mark);
}

/* array<i64: 1, 2> / array<i64> */
static void xrt__attr_array(xrt__parser *p, xrt_ir_attr *a) {
  size_t mark = p->attrs.n;
  xrt__expect(p, '<');
  xrt_ir_type t;
  xrt__parse_type(p, &t);
  if (xrt__eat(p, ':')) {
    do {
      xrt_ir_attr e;
      xrt__parse_attr(p, &e, false);
      if (e.kind == XRT_ATTR_BOOL) e.kind = XRT_ATTR_INT;
      *(xrt_ir_attr *)xrt__push_raw(p, &p->attrs) = e;
    } while (xrt__eat(p, ','));
  }
  xrt__expect(p, '>');
  xrt__attr_collect_list(p, a, mark);
}

/* {k = v, ...} or <k = v, ...> as a DICT (close is '}' or '>'). */
static void xrt__attr_dict(xrt__parser *p, xrt_ir_attr *a, char close) {
  size_t mark = p->attrs.n;
  a->kind = XRT_ATTR_DICT;
  a->num_items = xrt__parse_dict_entries(p, close);
  a->items = xrt__vcopy(p, &p->attrs, mark);
  p->attrs.n = mark;
}

/* Raw text up to the matching closer, as a STRING (unknown shapes). */
static void xrt__attr_raw(xrt__parser *p, xrt_ir_attr *a, char close) {
  xrt__ws(p);
  const char *s = p->p;
  xrt__skip_balanced(p, false);
  const char *e = p->p;
  xrt__expect(p, close);
  a->kind = XRT_ATTR_STRING;
  a->s = xrt__strdup(p, s, (size_t)(e - s));
  a->n = e - s;
}

/* #stablehlo<kind VALUE> -> ENUM; #d.name<k = v> -> DICT; other -> STRING. */
static void xrt__attr_hash(xrt__parser *p, xrt_ir_attr *a) {
  const char *at = p->p;
  p->p++; /* '#' */
  xrt__tok d = xrt__suffix_name(p);
  if (p->p >= p->end || *p->p != '<') { /* alias reference */
    a->kind = XRT_ATTR_STRING;
    a->s = xrt__strdup(p, at, (size_t)(p->p - at));
    a->n = p->p - at;
    return;
  }
  p->p++;
  const char *inner = p->p;
  if (!memchr(d.s, '.', d.n)) {
    xrt__tok kind = xrt__ident(p), val = xrt__ident(p);
    if (kind.n && val.n && xrt__eat(p, '>')) {
      a->kind = XRT_ATTR_ENUM;
      a->s = xrt__strdup(p, val.s, val.n);
      a->n = (int64_t)val.n;
      return;
    }
    p->p = inner;
    xrt__attr_raw(p, a, '>');
    return;
  }
  xrt__ident(p);
  bool fields = xrt__peek(p) == '=' || xrt__peek(p) == '>';
  p->p = inner;
  if (fields) xrt__attr_dict(p, a, '>');
  else xrt__attr_raw(p, a, '>');
}

/* A number with an optional `: type` (when suffix). */
static void xrt__p_attr_number(xrt__parser *p, xrt_ir_attr *a, bool suffix) {
  xrt__num r = xrt__scan_num(p);
  if (r.is_float) {
    a->kind = XRT_ATTR_FLOAT;
    a->f = r.d;
  } else {
    a->kind = XRT_ATTR_INT;
    a->i = xrt__num_to_i64(p, &r);
    a->f = r.d;
  }
  if (!suffix || xrt__peek(p) != ':') return;
  p->p++;
  xrt_ir_type t;
  xrt__parse_type(p, &t);
  xrt_dtype dt = t.shape.dtype;
  if (t.kind != XRT_TYPE_TENSOR || !xrt_dtype_is_float(dt)) return;
  bool bits = a->kind == XRT_ATTR_INT && r.hex;
  a->kind = XRT_ATTR_FLOAT;
  if (bits && dt == XRT_F32) a->f = xrt__bits_to_f32((uint32_t)r.mag);
  else if (bits && dt == XRT_F64) memcpy(&a->f, &r.mag, 8);
  else if (bits && dt == XRT_F16) a->f = xrt_f16_to_f32((uint16_t)r.mag);
  else if (bits && dt == XRT_BF16) a->f = xrt_bf16_to_f32((uint16_t)r.mag);
  /* a number `x : f32` holds an f32, as in MLIR (and in bytecode) */
  else if (dt == XRT_F32) a->f = xrt__f64_to_f32(a->f);
  else if (dt == XRT_F16) a->f = xrt_f16_to_f32(xrt_f64_to_f16(a->f));
  else if (dt == XRT_BF16) a->f = xrt_bf16_to_f32(xrt_f64_to_bf16(a->f));
}

static bool xrt__is_type_word(xrt__parser *p, xrt__tok t) {
  return xrt__tok_is(t, "tensor") || xrt__tok_is(t, "tuple") ||
         xrt__tok_is(t, "complex") || xrt__dtype_named(p, t) != XRT_DTYPE_INVALID;
}

/* An identifier-led attribute: true/false/unit/dense/array/types/keywords. */
static void xrt__attr_word(xrt__parser *p, xrt_ir_attr *a, bool suffix) {
  const char *at = p->p;
  xrt__tok t = xrt__ident(p);
  if (xrt__tok_is(t, "true") || xrt__tok_is(t, "false")) {
    a->kind = XRT_ATTR_BOOL;
    a->i = t.s[0] == 't';
    if (suffix && xrt__peek(p) == ':') { /* true : i1 */
      xrt_ir_type ty;
      p->p++;
      xrt__parse_type(p, &ty);
    }
  } else if (xrt__tok_is(t, "unit")) {
    a->kind = XRT_ATTR_UNIT;
  } else if (xrt__tok_is(t, "dense")) {
    p->p = at;
    xrt__attr_dense(p, a);
  } else if (xrt__tok_is(t, "array")) {
    xrt__attr_array(p, a);
  } else if (xrt__is_type_word(p, t)) {
    xrt_ir_type *ty = xrt__p_alloc(p, sizeof *ty);
    p->p = at;
    xrt__parse_type(p, ty);
    a->kind = XRT_ATTR_TYPE;
    a->type = ty;
  } else if (p->p < p->end && *p->p == '<') { /* affine_map<...> etc. */
    p->p++;
    xrt__attr_raw(p, a, '>');
  } else {
    a->kind = XRT_ATTR_ENUM;
    a->s = xrt__strdup(p, t.s, t.n);
    a->n = (int64_t)t.n;
  }
}

/* Any attribute value.  suffix: a trailing `: type` belongs to the value
 * (true in dictionaries; false in pretty op syntax where ':' starts the op's
 * types). */
XRT__PRIVATE void xrt__parse_attr(xrt__parser *p, xrt_ir_attr *a, bool suffix) {
  memset(a, 0, sizeof *a);
  int c = xrt__peek(p);
  const char *at = p->p;
  bool was_in_attr = p->in_attr;
  xrt__depth_in(p);
  p->in_attr = true;
  if (c == '"') {
    a->kind = XRT_ATTR_STRING;
    a->s = xrt__parse_string(p, &a->n);
  } else if (c == '@') {
    p->p++;
    a->kind = XRT_ATTR_SYMBOL;
    if (xrt__peek(p) == '"') {
      a->s = xrt__parse_string(p, &a->n);
    } else {
      xrt__tok t = xrt__suffix_name(p);
      a->s = xrt__strdup(p, t.s, t.n);
      a->n = (int64_t)t.n;
    }
  } else if (c == '[') {
    xrt__attr_list(p, a, suffix);
  } else if (c == '{') {
    p->p++;
    xrt__attr_dict(p, a, '}');
  } else if (c == '<') {
    p->p++;
    xrt__attr_dict(p, a, '>');
  } else if (c == '#') {
    xrt__attr_hash(p, a);
  } else if (c == '-' || xrt__is_digit(c)) {
    xrt__p_attr_number(p, a, suffix);
  } else if (xrt__is_idstart(c)) {
    xrt__attr_word(p, a, suffix);
  } else if (c == '!') {
    xrt_ir_type *ty = xrt__p_alloc(p, sizeof *ty);
    xrt__parse_type(p, ty);
    a->kind = XRT_ATTR_TYPE;
    a->type = ty;
  } else {
    xrt__skip_balanced(p, true); /* unknown shape: skip it */
    if (p->p == at) xrt__expected(p, "an attribute value");
    a->kind = XRT_ATTR_UNIT;
  }
  p->in_attr = was_in_attr;
  p->depth--;
}

/* Entries `name [= value]` up to `close`, pushed onto p->attrs (the
 * opening bracket is already consumed).  Returns how many. */
XRT__PRIVATE int32_t xrt__parse_dict_entries(xrt__parser *p, char close) {
  int32_t n = 0;
  xrt__depth_in(p);
  if (!xrt__eat(p, close)) {
    do {
      const char *name;
      xrt__tok t;
      if (xrt__peek(p) == '"') {
        name = xrt__parse_string(p, NULL);
      } else {
        t = xrt__ident(p);
        if (!t.n) xrt__expected(p, "an attribute name");
        name = xrt__strdup(p, t.s, t.n);
      }
      xrt_ir_attr a;
      if (xrt__eat(p, '=')) xrt__parse_attr(p, &a, true);
      else memset(&a, 0, sizeof a); /* UNIT */
      a.name = name;
      *(xrt_ir_attr *)xrt__push_raw(p, &p->attrs) = a;
      n++;
    } while (xrt__eat(p, ','));
    if (!xrt__eat(p, close)) {
      char what[4] = {'\'', close, '\'', 0};
      xrt__expected(p, what);
    }
  }
  p->depth--;
  return n;
}
