/*
 * src/core/bytecode.c - portable artifacts, part 1: the MLIR bytecode
 * container (mlir/docs/BytecodeFormat.md): varints, sections, the string
 * section, dialect and op name tables, the attribute/type table with the
 * builtin dialect's encodings, properties, resources, and the IR walk
 * (regions, blocks, value numbering, forward references) that writes the
 * program as StableHLO text for the parser.  VHLO's own encodings and ops
 * are in bytecode_vhlo.c.
 * Part of the core of xrt; MIT licensed, see LICENSE.
 */
#include "bytecode.h"

/* The newest bytecode format this reader knows (MLIR's kVersion 6). */
#define XRT__BC_FORMAT_MAX 6
/* Nesting of attributes, types and regions the reader follows. */
#define XRT__BC_MAX_DEPTH 256

enum { /* section ids */
  XRT__SEC_STRING, XRT__SEC_DIALECT, XRT__SEC_ATTRTYPE, XRT__SEC_ATTRTYPE_OFF,
  XRT__SEC_IR, XRT__SEC_RESOURCE, XRT__SEC_RESOURCE_OFF,
  XRT__SEC_DIALECT_VERSIONS, XRT__SEC_PROPERTIES, XRT__SEC_COUNT
};

enum { /* the op encoding mask */
  XRT__OPM_ATTRS = 1, XRT__OPM_RESULTS = 2, XRT__OPM_OPERANDS = 4,
  XRT__OPM_SUCCESSORS = 8, XRT__OPM_REGIONS = 16, XRT__OPM_USELISTS = 32,
  XRT__OPM_PROPS = 64
};

/* ---------------------------------------------------------------------
 * Errors, memory, output
 * ------------------------------------------------------------------- */

XRT__PRIVATE _Noreturn void xrt__bc_fail(xrt__bc *bc, const uint8_t *at,
                                         const char *fmt, ...) {
  char msg[512];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(msg, sizeof msg, fmt, ap);
  va_end(ap);
  size_t off = at && at >= bc->beg ? (size_t)(at - bc->beg) : 0;
  if (off > bc->size) off = bc->size;
  bc->status = xrt__fail(bc->status ? bc->status : XRT_INVALID_ARGUMENT,
                         "%s: bytecode offset %zu: %s", bc->file, off, msg);
  longjmp(bc->jb, 1);
}

static _Noreturn void xrt__bc_oom(xrt__bc *bc) {
  bc->status = xrt__fail(XRT_RESOURCE_EXHAUSTED, "%s: out of host memory "
                         "while reading the artifact", bc->file);
  longjmp(bc->jb, 1);
}

XRT__PRIVATE void *xrt__bc_alloc(xrt__bc *bc, size_t n) {
  void *m = xrt__arena_alloc(bc->arena, n ? n : 1);
  if (!m) xrt__bc_oom(bc);
  return m;
}

/* n elements of size each from the arena, n bounded by the caller. */
static void *xrt__bc_array(xrt__bc *bc, uint64_t n, size_t each) {
  if (n > SIZE_MAX / each / 2) xrt__bc_oom(bc);
  return xrt__bc_alloc(bc, (size_t)n * each);
}

XRT__PRIVATE xrt__bcv *xrt__bc_new(xrt__bc *bc, xrt__bck kind) {
  xrt__bcv *v = xrt__bc_alloc(bc, sizeof *v);
  memset(v, 0, sizeof *v);
  v->kind = (uint8_t)kind;
  return v;
}

static void xrt__bc_grow(xrt__bc *bc, xrt__bcbuf *b, size_t more) {
  if (b->cap - b->n > more) return;
  size_t cap = b->cap ? b->cap : 4096;
  while (cap - b->n <= more) {
    if (cap > SIZE_MAX / 2) xrt__bc_oom(bc);
    cap *= 2;
  }
  char *s = xrt__realloc(&bc->allocator, b->s, b->cap, cap);
  if (!s) xrt__bc_oom(bc);
  b->s = s;
  b->cap = cap;
}

XRT__PRIVATE void xrt__bc_put(xrt__bc *bc, const char *s, size_t n) {
  xrt__bc_grow(bc, &bc->out, n);
  memcpy(bc->out.s + bc->out.n, s, n);
  bc->out.n += n;
  bc->out.s[bc->out.n] = 0;
  for (size_t i = 0; i < n; i++) bc->line += s[i] == '\n';
}

XRT__PRIVATE int64_t xrt__bc_blob_ref(xrt__bc *bc, const char *s, size_t n) {
  const char *beg = (const char *)bc->beg;
  if (!bc->by_ref || s < beg || n > bc->size || s - beg > (ptrdiff_t)(bc->size - n))
    return -1;
  if (bc->num_blobs == bc->cap_blobs) {
    size_t cap = bc->cap_blobs ? bc->cap_blobs * 2 : 64;
    xrt__bcblob *b = xrt__realloc(&bc->allocator, bc->blobs,
                                  bc->cap_blobs * sizeof *b, cap * sizeof *b);
    if (!b) xrt__bc_oom(bc);
    bc->blobs = b;
    bc->cap_blobs = cap;
  }
  bc->blobs[bc->num_blobs].data = s;
  bc->blobs[bc->num_blobs].len = n;
  return (int64_t)bc->num_blobs++;
}

XRT__PRIVATE void xrt__bc_puts(xrt__bc *bc, const char *s) {
  xrt__bc_put(bc, s, strlen(s));
}

XRT__PRIVATE void xrt__bc_printf(xrt__bc *bc, const char *fmt, ...) {
  char buf[256];
  va_list ap;
  va_start(ap, fmt);
  int n = vsnprintf(buf, sizeof buf, fmt, ap);
  va_end(ap);
  if (n < 0) n = 0;
  if ((size_t)n >= sizeof buf) n = (int)sizeof buf - 1; /* short formats only */
  xrt__bc_put(bc, buf, (size_t)n);
}

/* ---------------------------------------------------------------------
 * Primitives
 * ------------------------------------------------------------------- */

XRT__PRIVATE uint8_t xrt__bc_byte(xrt__bc *bc, xrt__bcur *c) {
  if (c->p >= c->end) xrt__bc_fail(bc, c->p, "unexpected end of data");
  return *c->p++;
}

/* PrefixVarInt: the count of trailing zero bits of the first byte is the
 * count of bytes that follow; a zero first byte is followed by 8. */
XRT__PRIVATE uint64_t xrt__bc_varint(xrt__bc *bc, xrt__bcur *c) {
  const uint8_t *at = c->p;
  uint8_t first = xrt__bc_byte(bc, c);
  if (first & 1) return first >> 1;
  int more = 8;
  if (first) for (more = 1; !(first & (1u << more)); more++) {}
  if (c->end - c->p < more) xrt__bc_fail(bc, at, "truncated varint");
  uint64_t v = 0;
  for (int i = more - 1; i >= 0; i--) v = (v << 8) | c->p[i];
  c->p += more;
  if (more == 8) return v;
  return (v << (8 - more - 1)) | ((uint64_t)first >> (more + 1));
}

XRT__PRIVATE int64_t xrt__bc_svarint(xrt__bc *bc, xrt__bcur *c) {
  uint64_t v = xrt__bc_varint(bc, c);
  return (int64_t)((v >> 1) ^ (0 - (v & 1)));
}

/* A count of things that take at least min_each bytes each in what is
 * left of c: larger counts cannot be honest. */
XRT__PRIVATE uint64_t xrt__bc_count(xrt__bc *bc, xrt__bcur *c, size_t min_each) {
  const uint8_t *at = c->p;
  uint64_t n = xrt__bc_varint(bc, c);
  if (min_each && n > (uint64_t)(c->end - c->p) / min_each)
    xrt__bc_fail(bc, at, "count %" PRIu64 " exceeds the data left (%zu bytes)",
                 n, (size_t)(c->end - c->p));
  return n;
}

static const uint8_t *xrt__bc_bytes(xrt__bc *bc, xrt__bcur *c, uint64_t n) {
  if (n > (uint64_t)(c->end - c->p))
    xrt__bc_fail(bc, c->p, "%" PRIu64 " bytes needed, %zu left", n,
                 (size_t)(c->end - c->p));
  const uint8_t *s = c->p;
  c->p += n;
  return s;
}

/* A reference to the string section. */
XRT__PRIVATE const char *xrt__bc_string(xrt__bc *bc, xrt__bcur *c, size_t *len) {
  const uint8_t *at = c->p;
  uint64_t i = xrt__bc_varint(bc, c);
  if (i >= bc->num_strings)
    xrt__bc_fail(bc, at, "string index %" PRIu64 " out of range (%" PRIu64
                 " strings)", i, bc->num_strings);
  if (len) *len = bc->str_len[i];
  return bc->strs[i];
}

XRT__PRIVATE const uint8_t *xrt__bc_blob(xrt__bc *bc, xrt__bcur *c, size_t *len) {
  uint64_t n = xrt__bc_varint(bc, c);
  const uint8_t *s = xrt__bc_bytes(bc, c, n);
  *len = (size_t)n;
  return s;
}

/* An APInt of a known width (<= 64 bits): a byte up to 8 bits, else a
 * signed varint, else words (only one may be active here). */
XRT__PRIVATE uint64_t xrt__bc_apint(xrt__bc *bc, xrt__bcur *c, int bits) {
  if (bits <= 8) return xrt__bc_byte(bc, c);
  if (bits <= 64) return (uint64_t)xrt__bc_svarint(bc, c);
  const uint8_t *at = c->p;
  uint64_t words = xrt__bc_count(bc, c, 1), v = 0;
  for (uint64_t i = 0; i < words; i++) {
    uint64_t w = (uint64_t)xrt__bc_svarint(bc, c);
    if (i == 0) v = w;
    else if (w) xrt__bc_fail(bc, at, "integers wider than 64 bits are not "
                             "supported");
  }
  return v;
}

/* Moves c to an alignment (a power of two, relative to the artifact's
 * start) over 0xCB padding. */
static void xrt__bc_align(xrt__bc *bc, xrt__bcur *c, uint64_t align) {
  if (!align || (align & (align - 1)) || align > 4096)
    xrt__bc_fail(bc, c->p, "bad alignment %" PRIu64, align);
  while ((size_t)(c->p - bc->beg) & (align - 1))
    if (xrt__bc_byte(bc, c) != 0xCB)
      xrt__bc_fail(bc, c->p - 1, "expected alignment padding (0xCB)");
}

/* A section: id byte (high bit: aligned), length, [alignment, padding],
 * data. */
static int xrt__bc_section(xrt__bc *bc, xrt__bcur *c, xrt__bcur *data) {
  const uint8_t *at = c->p;
  uint8_t id = xrt__bc_byte(bc, c);
  uint64_t len = xrt__bc_varint(bc, c);
  if ((id & 0x7f) >= XRT__SEC_COUNT)
    xrt__bc_fail(bc, at, "unknown section id %d", id & 0x7f);
  if (id & 0x80) xrt__bc_align(bc, c, xrt__bc_varint(bc, c));
  data->p = xrt__bc_bytes(bc, c, len);
  data->end = data->p + len;
  return id & 0x7f;
}

/* ---------------------------------------------------------------------
 * Tables: strings, dialects, op names, resources, properties
 * ------------------------------------------------------------------- */

/* Count, the lengths (with their NUL) last string first, then the text. */
static void xrt__bc_strings(xrt__bc *bc, xrt__bcur c) {
  uint64_t n = xrt__bc_count(bc, &c, 1);
  bc->num_strings = n;
  bc->strs = xrt__bc_array(bc, n + 1, sizeof *bc->strs);
  bc->str_len = xrt__bc_array(bc, n + 1, sizeof *bc->str_len);
  size_t end = (size_t)(c.end - c.p);
  const uint8_t *lens = c.p;
  uint64_t *sizes = xrt__bc_array(bc, n + 1, sizeof *sizes);
  for (uint64_t k = 0; k < n; k++) sizes[n - 1 - k] = xrt__bc_varint(bc, &c);
  size_t data = (size_t)(c.end - c.p);
  for (uint64_t k = n; k-- > 0;) {
    if (sizes[k] == 0 || sizes[k] > end - (size_t)(c.p - lens) ||
        sizes[k] > data)
      xrt__bc_fail(bc, lens, "string %" PRIu64 " has a bad length", k);
    data -= (size_t)sizes[k];
    const char *s = (const char *)c.p + data;
    if (s[sizes[k] - 1] != 0)
      xrt__bc_fail(bc, (const uint8_t *)s, "string %" PRIu64 " is not "
                   "NUL-terminated", k);
    bc->strs[k] = s;
    bc->str_len[k] = (size_t)sizes[k] - 1;
  }
  if (data != 0)
    xrt__bc_fail(bc, c.p, "%zu stray bytes in the string section", data);
}

static void xrt__bc_dialects(xrt__bc *bc, xrt__bcur c) {
  uint64_t n = xrt__bc_count(bc, &c, 1);
  bc->num_dialects = n;
  bc->dialects = xrt__bc_array(bc, n + 1, sizeof *bc->dialects);
  for (uint64_t i = 0; i < n; i++) {
    if (bc->version < 1) {
      bc->dialects[i] = xrt__bc_string(bc, &c, NULL);
      continue;
    }
    const uint8_t *at = c.p;
    uint64_t v = xrt__bc_varint(bc, &c);
    if ((v >> 1) >= bc->num_strings)
      xrt__bc_fail(bc, at, "dialect name index out of range");
    bc->dialects[i] = bc->strs[v >> 1];
    if (v & 1) { /* a version: ignored (VHLO versions by producer) */
      xrt__bcur ver;
      if (xrt__bc_section(bc, &c, &ver) != XRT__SEC_DIALECT_VERSIONS)
        xrt__bc_fail(bc, at, "expected a dialect version section");
    }
  }
  uint64_t cap = (uint64_t)(c.end - c.p);
  if (bc->version >= 4) xrt__bc_varint(bc, &c); /* a size hint */
  bc->opnames = xrt__bc_array(bc, cap + 1, sizeof *bc->opnames);
  while (c.p < c.end) {
    const uint8_t *at = c.p;
    uint64_t d = xrt__bc_varint(bc, &c);
    if (d >= bc->num_dialects) xrt__bc_fail(bc, at, "dialect index out of range");
    uint64_t k = xrt__bc_count(bc, &c, 1);
    for (uint64_t j = 0; j < k; j++) {
      size_t dl = strlen(bc->dialects[d]), nl;
      const char *name;
      if (bc->version >= 5) { /* (index << 1) | registered */
        const uint8_t *nat = c.p;
        uint64_t v = xrt__bc_varint(bc, &c) >> 1;
        if (v >= bc->num_strings) xrt__bc_fail(bc, nat, "op name index out of range");
        name = bc->strs[v];
        nl = bc->str_len[v];
      } else {
        name = xrt__bc_string(bc, &c, &nl);
      }
      char *full = xrt__bc_alloc(bc, dl + nl + 2);
      memcpy(full, bc->dialects[d], dl);
      full[dl] = '.';
      memcpy(full + dl + 1, name, nl);
      full[dl + 1 + nl] = 0;
      bc->opnames[bc->num_opnames++] = full;
    }
  }
}

/* Offsets: count, then per entry (size << 1 | custom), grouped by dialect. */
static void xrt__bc_attrtypes(xrt__bc *bc, xrt__bcur data, xrt__bcur c) {
  uint64_t na = xrt__bc_count(bc, &c, 0), nt = xrt__bc_count(bc, &c, 0);
  size_t left = (size_t)(c.end - c.p);
  if (na > left || nt > left - na)
    xrt__bc_fail(bc, c.p, "more attributes and types than the offsets hold");
  bc->num_attrs = na;
  bc->num_types = nt;
  bc->attrs = xrt__bc_array(bc, na + 1, sizeof *bc->attrs);
  bc->types = xrt__bc_array(bc, nt + 1, sizeof *bc->types);
  memset(bc->attrs, 0, (size_t)(na + 1) * sizeof *bc->attrs);
  memset(bc->types, 0, (size_t)(nt + 1) * sizeof *bc->types);
  size_t off = 0, total = (size_t)(data.end - data.p);
  for (int pass = 0; pass < 2; pass++) {
    xrt__bcent *e = pass ? bc->types : bc->attrs;
    uint64_t n = pass ? nt : na, i = 0;
    while (i < n) {
      const uint8_t *at = c.p;
      uint64_t d = xrt__bc_varint(bc, &c);
      if (d >= bc->num_dialects) xrt__bc_fail(bc, at, "dialect index out of range");
      uint64_t k = xrt__bc_count(bc, &c, 1);
      if (k > n - i) xrt__bc_fail(bc, at, "more entries than declared");
      for (uint64_t j = 0; j < k; j++, i++) {
        const uint8_t *eat = c.p;
        uint64_t v = xrt__bc_varint(bc, &c), size = v >> 1;
        if (size > total - off)
          xrt__bc_fail(bc, eat, "entry runs past the attribute/type section");
        e[i].data = data.p + off;
        e[i].size = (size_t)size;
        e[i].dialect = (uint32_t)d;
        e[i].custom = v & 1;
        off += (size_t)size;
      }
    }
  }
  if (c.p != c.end) xrt__bc_fail(bc, c.p, "stray bytes after the offsets");
}

/* Count, then per property blob its size and bytes. */
static void xrt__bc_properties(xrt__bc *bc, xrt__bcur c) {
  if (c.p == c.end) return;
  uint64_t n = xrt__bc_count(bc, &c, 1);
  bc->num_props = n;
  bc->prop_off = xrt__bc_array(bc, n + 1, sizeof *bc->prop_off);
  bc->props_beg = c.p;
  bc->props_size = (size_t)(c.end - c.p);
  for (uint64_t i = 0; i < n; i++) {
    bc->prop_off[i] = (uint64_t)(c.p - bc->props_beg);
    uint64_t len = xrt__bc_varint(bc, &c);
    xrt__bc_bytes(bc, &c, len);
  }
  if (c.p != c.end) xrt__bc_fail(bc, c.p, "stray bytes after the properties");
}

/* Resource groups: external ones (skipped), then dialect ones whose blobs
 * dense_resource attributes refer to by index. */
static void xrt__bc_resource_group(xrt__bc *bc, xrt__bcur *off, xrt__bcur *res,
                                   bool keep) {
  uint64_t n = xrt__bc_count(bc, off, 1);
  for (uint64_t i = 0; i < n; i++) {
    xrt__bc_string(bc, off, NULL);
    uint64_t size = xrt__bc_varint(bc, off);
    uint8_t kind = xrt__bc_byte(bc, off);
    xrt__bcur e;
    e.p = xrt__bc_bytes(bc, res, size);
    e.end = e.p + size;
    if (!keep) continue;
    const uint8_t *data = NULL;
    size_t len = 0;
    if (kind == 2 && e.p < e.end) { /* a blob: alignment, size, data */
      xrt__bc_varint(bc, &e);
      uint64_t bl = xrt__bc_varint(bc, &e);
      data = xrt__bc_bytes(bc, &e, bl);
      len = (size_t)bl;
    }
    bc->res_data[bc->num_res] = data;
    bc->res_size[bc->num_res++] = len;
  }
}

static void xrt__bc_resources(xrt__bc *bc, const xrt__bcur *data,
                              const xrt__bcur *offs) {
  if (!data || !offs) {
    if (data || offs) xrt__bc_fail(bc, (data ? data : offs)->p,
                                   "a resource section without its pair");
    return;
  }
  xrt__bcur res = *data, off = *offs;
  size_t cap = (size_t)(off.end - off.p) + 1;
  bc->res_data = xrt__bc_array(bc, cap, sizeof *bc->res_data);
  bc->res_size = xrt__bc_array(bc, cap, sizeof *bc->res_size);
  uint64_t ext = xrt__bc_count(bc, &off, 1);
  for (uint64_t i = 0; i < ext; i++) {
    xrt__bc_string(bc, &off, NULL);
    xrt__bc_resource_group(bc, &off, &res, false);
  }
  while (off.p < off.end) {
    const uint8_t *at = off.p;
    if (xrt__bc_varint(bc, &off) >= bc->num_dialects)
      xrt__bc_fail(bc, at, "dialect index out of range");
    xrt__bc_resource_group(bc, &off, &res, true);
  }
}

/* ---------------------------------------------------------------------
 * Attributes and types: the table, the builtin dialect's encodings
 * ------------------------------------------------------------------- */

static const xrt__bcv *xrt__bc_entry(xrt__bc *bc, xrt__bcent *e, bool type,
                                     const uint8_t *ref);

XRT__PRIVATE const xrt__bcv *xrt__bc_attr(xrt__bc *bc, xrt__bcur *c) {
  const uint8_t *at = c->p;
  uint64_t i = xrt__bc_varint(bc, c);
  if (i >= bc->num_attrs)
    xrt__bc_fail(bc, at, "attribute index %" PRIu64 " out of range (%" PRIu64
                 " attributes)", i, bc->num_attrs);
  return xrt__bc_entry(bc, &bc->attrs[i], false, at);
}

XRT__PRIVATE const xrt__bcv *xrt__bc_type(xrt__bc *bc, xrt__bcur *c) {
  const uint8_t *at = c->p;
  uint64_t i = xrt__bc_varint(bc, c);
  if (i >= bc->num_types)
    xrt__bc_fail(bc, at, "type index %" PRIu64 " out of range (%" PRIu64
                 " types)", i, bc->num_types);
  return xrt__bc_entry(bc, &bc->types[i], true, at);
}

/* A list: count, then attribute or type references. */
XRT__PRIVATE const xrt__bcv **xrt__bc_list(xrt__bc *bc, xrt__bcur *c,
                                           bool types, int32_t *n) {
  uint64_t k = xrt__bc_count(bc, c, 1);
  if (k > INT32_MAX) xrt__bc_fail(bc, c->p, "list too long");
  const xrt__bcv **v = xrt__bc_array(bc, k + 1, sizeof *v);
  for (uint64_t i = 0; i < k; i++)
    v[i] = types ? xrt__bc_type(bc, c) : xrt__bc_attr(bc, c);
  *n = (int32_t)k;
  return v;
}

static const int64_t *xrt__bc_svarints(xrt__bc *bc, xrt__bcur *c, int32_t *n) {
  uint64_t k = xrt__bc_count(bc, c, 1);
  if (k > INT32_MAX) xrt__bc_fail(bc, c->p, "list too long");
  int64_t *v = xrt__bc_array(bc, k + 1, sizeof *v);
  for (uint64_t i = 0; i < k; i++) v[i] = xrt__bc_svarint(bc, c);
  *n = (int32_t)k;
  return v;
}

static const xrt__bcv *xrt__bc_string_attr(xrt__bc *bc, xrt__bcur *c) {
  xrt__bcv *v = xrt__bc_new(bc, XRT__BC_A_STRING);
  v->s = xrt__bc_string(bc, c, &v->len);
  return v;
}

/* A builtin location, string or other attribute that must be of a kind. */
static const xrt__bcv *xrt__bc_attr_of(xrt__bc *bc, xrt__bcur *c,
                                       xrt__bck kind, const char *what) {
  const uint8_t *at = c->p;
  const xrt__bcv *v = xrt__bc_attr(bc, c);
  if (v->kind != kind) xrt__bc_fail(bc, at, "expected %s", what);
  return v;
}

static bool xrt__bc_is_loc(const xrt__bcv *v) {
  return v->kind >= XRT__BC_L_UNKNOWN && v->kind <= XRT__BC_L_CALLSITE;
}

static const xrt__bcv *xrt__bc_loc(xrt__bc *bc, xrt__bcur *c) {
  const uint8_t *at = c->p;
  const xrt__bcv *v = xrt__bc_attr(bc, c);
  if (!xrt__bc_is_loc(v)) xrt__bc_fail(bc, at, "expected a location");
  return v;
}

static const xrt__bcv *xrt__bc_builtin_loc(xrt__bc *bc, xrt__bcur *c,
                                           uint64_t code) {
  xrt__bcv *v;
  switch (code) {
  case 10: /* CallSiteLoc */
    v = xrt__bc_new(bc, XRT__BC_L_CALLSITE);
    v->a = xrt__bc_loc(bc, c);
    v->t = xrt__bc_loc(bc, c);
    return v;
  case 11: { /* FileLineColLoc */
    const xrt__bcv *f = xrt__bc_attr_of(bc, c, XRT__BC_A_STRING, "a file name");
    v = xrt__bc_new(bc, XRT__BC_L_FILE);
    v->s = f->s;
    v->len = f->len;
    v->i = (int64_t)(xrt__bc_varint(bc, c) & 0x7fffffff);
    v->j = (int64_t)(xrt__bc_varint(bc, c) & 0x7fffffff);
    return v;
  }
  case 12: case 13: { /* FusedLoc [with metadata] */
    v = xrt__bc_new(bc, XRT__BC_L_FUSED);
    uint64_t k = xrt__bc_count(bc, c, 1);
    const xrt__bcv **kids = xrt__bc_array(bc, k + 1, sizeof *kids);
    for (uint64_t i = 0; i < k; i++) kids[i] = xrt__bc_loc(bc, c);
    v->kids = kids;
    v->n = (int32_t)k;
    if (code == 13) v->a = xrt__bc_attr(bc, c);
    return v;
  }
  case 14: { /* NameLoc */
    const xrt__bcv *nm = xrt__bc_attr_of(bc, c, XRT__BC_A_STRING, "a name");
    v = xrt__bc_new(bc, XRT__BC_L_NAME);
    v->s = nm->s;
    v->len = nm->len;
    v->a = xrt__bc_loc(bc, c);
    return v;
  }
  default:
    return xrt__bc_new(bc, XRT__BC_L_UNKNOWN);
  }
}

static const xrt__bcv *xrt__bc_builtin_attr(xrt__bc *bc, xrt__bcur *c) {
  const uint8_t *at = c->p;
  uint64_t code = xrt__bc_varint(bc, c);
  xrt__bcv *v;
  switch (code) {
  case 0: /* ArrayAttr */
    v = xrt__bc_new(bc, XRT__BC_A_ARRAY);
    v->kids = xrt__bc_list(bc, c, false, &v->n);
    return v;
  case 1: { /* DictionaryAttr: (name, value) pairs */
    v = xrt__bc_new(bc, XRT__BC_A_DICT);
    uint64_t k = xrt__bc_count(bc, c, 2);
    const xrt__bcv **kids = xrt__bc_array(bc, 2 * k + 1, sizeof *kids);
    for (uint64_t i = 0; i < k; i++) {
      kids[2 * i] = xrt__bc_attr_of(bc, c, XRT__BC_A_STRING, "a name");
      kids[2 * i + 1] = xrt__bc_attr(bc, c);
    }
    v->kids = kids;
    v->n = (int32_t)k;
    return v;
  }
  case 2: return xrt__bc_string_attr(bc, c);
  case 3: { /* StringAttr with a type */
    const xrt__bcv *s = xrt__bc_string_attr(bc, c);
    xrt__bc_type(bc, c);
    return s;
  }
  case 4: case 5: { /* [Flat]SymbolRefAttr */
    const xrt__bcv *r = xrt__bc_attr_of(bc, c, XRT__BC_A_STRING, "a symbol");
    v = xrt__bc_new(bc, XRT__BC_A_SYMBOL);
    v->s = r->s;
    v->len = r->len;
    if (code == 5 && xrt__bc_count(bc, c, 1))
      xrt__bc_fail(bc, at, "nested symbol references are not supported");
    return v;
  }
  case 6:
    v = xrt__bc_new(bc, XRT__BC_A_TYPE);
    v->t = xrt__bc_type(bc, c);
    return v;
  case 7: return xrt__bc_new(bc, XRT__BC_A_UNIT);
  case 8: case 9: { /* IntegerAttr, FloatAttr */
    v = xrt__bc_new(bc, code == 8 ? XRT__BC_A_INT : XRT__BC_A_FLOAT);
    v->t = xrt__bc_type(bc, c);
    int bits = v->t->kind == XRT__BC_T_INDEX ? 64 : (int)v->t->i;
    if (v->t->kind != XRT__BC_T_INT && v->t->kind != XRT__BC_T_INDEX &&
        v->t->kind != XRT__BC_T_FLOAT)
      xrt__bc_fail(bc, at, "number of a non-scalar type");
    v->u = xrt__bc_apint(bc, c, bits);
    v->i = (int64_t)v->u;
    if (v->t->kind == XRT__BC_T_INT && bits < 64 && v->t->sub != 2 && bits > 0 &&
        ((v->u >> (bits - 1)) & 1))
      v->i = (int64_t)(v->u | (~(uint64_t)0 << bits));
    return v;
  }
  case 10: case 11: case 12: case 13: case 14: case 15:
    return xrt__bc_builtin_loc(bc, c, code);
  case 16: /* DenseResourceElementsAttr */
    v = xrt__bc_new(bc, XRT__BC_A_RESOURCE);
    v->t = xrt__bc_type(bc, c);
    v->i = (int64_t)xrt__bc_varint(bc, c);
    if ((uint64_t)v->i >= bc->num_res)
      xrt__bc_fail(bc, at, "resource index out of range");
    v->s = (const char *)bc->res_data[v->i];
    v->len = bc->res_size[v->i];
    return v;
  case 17: /* DenseArrayAttr */
    v = xrt__bc_new(bc, XRT__BC_A_DARRAY);
    v->t = xrt__bc_type(bc, c);
    v->i = (int64_t)xrt__bc_varint(bc, c);
    v->s = (const char *)xrt__bc_blob(bc, c, &v->len);
    return v;
  case 18: /* DenseIntOrFPElementsAttr */
    v = xrt__bc_new(bc, XRT__BC_A_TENSOR);
    v->t = xrt__bc_type(bc, c);
    v->s = (const char *)xrt__bc_blob(bc, c, &v->len);
    return v;
  case 21: /* DistinctAttr */
    return xrt__bc_attr(bc, c);
  default:
    xrt__bc_fail(bc, at, "builtin attribute code %" PRIu64 " is not "
                 "supported", code);
  }
}

static const xrt__bcv *xrt__bc_float_type(xrt__bc *bc, const char *name,
                                          int bits) {
  xrt__bcv *v = xrt__bc_new(bc, XRT__BC_T_FLOAT);
  v->s = name;
  v->i = bits;
  return v;
}

static const xrt__bcv *xrt__bc_builtin_type(xrt__bc *bc, xrt__bcur *c) {
  const uint8_t *at = c->p;
  uint64_t code = xrt__bc_varint(bc, c);
  xrt__bcv *v;
  switch (code) {
  case 0: { /* IntegerType: (width << 2) | signedness */
    uint64_t w = xrt__bc_varint(bc, c);
    v = xrt__bc_new(bc, XRT__BC_T_INT);
    v->i = (int64_t)(w >> 2);
    v->sub = (uint8_t)(w & 3);
    if (v->i < 1 || v->i > 64) xrt__bc_fail(bc, at, "integer width out of range");
    return v;
  }
  case 1: return xrt__bc_new(bc, XRT__BC_T_INDEX);
  case 2: { /* FunctionType */
    int32_t ni, nr;
    const xrt__bcv **in = xrt__bc_list(bc, c, true, &ni);
    const xrt__bcv **res = xrt__bc_list(bc, c, true, &nr);
    v = xrt__bc_new(bc, XRT__BC_T_FUNC);
    const xrt__bcv **kids = xrt__bc_array(bc, (uint64_t)ni + (uint64_t)nr + 1,
                                          sizeof *kids);
    memcpy(kids, in, (size_t)ni * sizeof *kids);
    memcpy(kids + ni, res, (size_t)nr * sizeof *kids);
    v->kids = kids;
    v->i = ni;
    v->n = ni + nr;
    return v;
  }
  case 3: return xrt__bc_float_type(bc, "bf16", 16);
  case 4: return xrt__bc_float_type(bc, "f16", 16);
  case 5: return xrt__bc_float_type(bc, "f32", 32);
  case 6: return xrt__bc_float_type(bc, "f64", 64);
  case 9:
    v = xrt__bc_new(bc, XRT__BC_T_COMPLEX);
    v->t = xrt__bc_type(bc, c);
    return v;
  case 12: return xrt__bc_new(bc, XRT__BC_T_NONE);
  case 13: case 14: /* RankedTensorType [with encoding] */
    v = xrt__bc_new(bc, XRT__BC_T_TENSOR);
    if (code == 14) v->a = xrt__bc_attr(bc, c);
    v->dims = xrt__bc_svarints(bc, c, &v->n);
    v->t = xrt__bc_type(bc, c);
    return v;
  case 15:
    v = xrt__bc_new(bc, XRT__BC_T_TUPLE);
    v->kids = xrt__bc_list(bc, c, true, &v->n);
    return v;
  case 18:
    v = xrt__bc_new(bc, XRT__BC_T_UNRANKED);
    v->t = xrt__bc_type(bc, c);
    return v;
  default:
    xrt__bc_fail(bc, at, "builtin type code %" PRIu64 " is not supported", code);
  }
}

/* Reads table entry e (at most once; meeting it again while reading it is
 * a cycle). */
static const xrt__bcv *xrt__bc_entry(xrt__bc *bc, xrt__bcent *e, bool type,
                                     const uint8_t *ref) {
  if (e->state == 2) return e->v;
  if (e->state == 1)
    xrt__bc_fail(bc, ref, "%s refers to itself", type ? "a type" : "an attribute");
  if (++bc->depth > XRT__BC_MAX_DEPTH)
    xrt__bc_fail(bc, ref, "attributes and types nested deeper than %d",
                 XRT__BC_MAX_DEPTH);
  e->state = 1;
  xrt__bcur c = {e->data, e->data + e->size};
  const char *d = bc->dialects[e->dialect];
  const xrt__bcv *v;
  if (!e->custom) { /* assembly syntax, NUL-terminated */
    const uint8_t *nul = memchr(c.p, 0, e->size);
    if (!nul) xrt__bc_fail(bc, c.p, "unterminated attribute or type text");
    xrt__bcv *t = xrt__bc_new(bc, type ? XRT__BC_T_TEXT : XRT__BC_A_TEXT);
    t->s = (const char *)c.p;
    t->len = (size_t)(nul - c.p);
    c.p = nul + 1;
    v = t;
  } else if (!strcmp(d, "builtin")) {
    v = type ? xrt__bc_builtin_type(bc, &c) : xrt__bc_builtin_attr(bc, &c);
  } else if (!strcmp(d, "vhlo")) {
    v = type ? xrt__vhlo_read_type(bc, &c) : xrt__vhlo_read_attr(bc, &c);
  } else {
    xrt__bc_fail(bc, c.p, "%s of dialect '%s' in an encoding xrt cannot read",
                 type ? "a type" : "an attribute", d);
  }
  if (c.p != c.end)
    xrt__bc_fail(bc, c.p, "%zu stray bytes after %s", (size_t)(c.end - c.p),
                 type ? "a type" : "an attribute");
  bc->depth--;
  e->v = v;
  e->state = 2;
  return v;
}

/* ---------------------------------------------------------------------
 * The IR: regions, blocks, ops, values
 * ------------------------------------------------------------------- */

/* Reading state of one isolated scope's values (MLIR numbers values from
 * the start of the nearest isolated-from-above region). */
typedef struct xrt__bcscope {
  size_t base; /* first slot of the scope in bc->slots */
} xrt__bcscope;

static void xrt__bc_reserve(xrt__bc *bc, const uint8_t *at, uint64_t n) {
  if (n > (uint64_t)bc->size) xrt__bc_fail(bc, at, "too many values");
  size_t need = bc->num_slots + (size_t)n;
  if (need > bc->cap_slots) {
    size_t cap = bc->cap_slots ? bc->cap_slots : 256;
    while (cap < need) cap *= 2;
    int64_t *s = xrt__realloc(&bc->allocator, bc->slots,
                              bc->cap_slots * sizeof *s, cap * sizeof *s);
    if (!s) xrt__bc_oom(bc);
    bc->slots = s;
    uint8_t *f = xrt__realloc(&bc->allocator, bc->slot_fwd, bc->cap_slots, cap);
    if (!f) xrt__bc_oom(bc);
    bc->slot_fwd = f;
    bc->cap_slots = cap;
  }
  for (size_t i = bc->num_slots; i < need; i++) bc->slots[i] = -1, bc->slot_fwd[i] = 0;
  bc->num_slots = need;
}

/* Leaves a region: its values go; one used but never defined is an
 * error. */
static void xrt__bc_release(xrt__bc *bc, const uint8_t *at, size_t mark) {
  for (size_t i = mark; i < bc->num_slots; i++)
    if (bc->slot_fwd[i])
      xrt__bc_fail(bc, at, "value %zu is used but never defined", i);
  bc->num_slots = mark;
}

/* Defines the next value of the region whose next slot is *next (< end). */
/* A fresh text id for a value of type t. */
static int64_t xrt__bc_new_id(xrt__bc *bc, const xrt__bcv *t) {
  if ((size_t)bc->next_id == bc->cap_ids) {
    size_t cap = bc->cap_ids ? bc->cap_ids * 2 : 256;
    const xrt__bcv **v = xrt__realloc(&bc->allocator, (void *)bc->id_types,
                                      bc->cap_ids * sizeof *v, cap * sizeof *v);
    if (!v) xrt__bc_oom(bc);
    bc->id_types = v;
    bc->cap_ids = cap;
  }
  bc->id_types[bc->next_id] = t;
  return bc->next_id++;
}

XRT__PRIVATE const xrt__bcv *xrt__bc_value_type(xrt__bc *bc, int64_t id) {
  return id >= 0 && id < bc->next_id ? bc->id_types[id] : NULL;
}

static int64_t xrt__bc_define(xrt__bc *bc, const uint8_t *at, size_t *next,
                              size_t end, const xrt__bcv *t) {
  if (*next >= end)
    xrt__bc_fail(bc, at, "more values defined than the region declares");
  size_t k = (*next)++;
  if (bc->slot_fwd[k]) {
    bc->slot_fwd[k] = 0;
    bc->id_types[bc->slots[k]] = t;
    return bc->slots[k];
  }
  if (bc->slots[k] >= 0) xrt__bc_fail(bc, at, "value defined twice");
  return bc->slots[k] = xrt__bc_new_id(bc, t);
}

/* An operand: a value of the scope, maybe not defined yet. */
static int64_t xrt__bc_operand(xrt__bc *bc, xrt__bcur *c, const xrt__bcscope *s) {
  const uint8_t *at = c->p;
  uint64_t i = xrt__bc_varint(bc, c);
  if (i >= bc->num_slots - s->base)
    xrt__bc_fail(bc, at, "value index %" PRIu64 " out of range (%zu values)", i,
                 bc->num_slots - s->base);
  size_t k = s->base + (size_t)i;
  if (bc->slots[k] < 0) {
    bc->slots[k] = xrt__bc_new_id(bc, NULL);
    bc->slot_fwd[k] = 1;
  }
  return bc->slots[k];
}

/* Use-list orders (how uses were ordered): read and dropped. */
static void xrt__bc_uselists(xrt__bc *bc, xrt__bcur *c, uint64_t range) {
  uint64_t n = range > 1 ? xrt__bc_count(bc, c, 1) : 1;
  for (uint64_t v = 0; v < n; v++) {
    if (range > 1 && xrt__bc_varint(bc, c) >= range)
      xrt__bc_fail(bc, c->p, "use-list value index out of range");
    uint64_t k = xrt__bc_varint(bc, c) >> 1;
    if (k > (uint64_t)(c->end - c->p))
      xrt__bc_fail(bc, c->p, "use-list longer than the data left");
    for (uint64_t i = 0; i < k; i++) xrt__bc_varint(bc, c);
  }
}

/* An artifact location as the IR's: the file, line and column it names
 * (a named, fused or call-site location: the first one inside that does),
 * file NULL when there is none. */
static xrt_ir_loc xrt__bc_ir_loc(xrt__bc *bc, const xrt__bcv *l) {
  xrt_ir_loc r = {NULL, 0, 0};
  for (int guard = 0; l && guard < XRT__BC_MAX_DEPTH; guard++) {
    if (l->kind == XRT__BC_L_FILE) {
      if (!bc->last_file || bc->last_file_src != l->s) {
        char *f = xrt__arena_strndup(bc->keep, l->s, l->len);
        if (!f) xrt__bc_oom(bc);
        bc->last_file = f;
        bc->last_file_src = l->s;
      }
      r.file = bc->last_file;
      r.line = (int32_t)l->i;
      r.col = (int32_t)l->j;
      return r;
    }
    if (l->kind == XRT__BC_L_FUSED) {
      for (int32_t i = 0; i < l->n; i++) {
        r = xrt__bc_ir_loc(bc, l->kids[i]);
        if (r.file) return r;
      }
      return r;
    }
    l = l->kind == XRT__BC_L_NAME || l->kind == XRT__BC_L_CALLSITE ? l->a : NULL;
  }
  return r;
}

static void xrt__bc_newline(xrt__bc *bc, int depth) {
  xrt__bc_put(bc, "\n", 1);
  for (int i = 0; i < depth; i++) xrt__bc_put(bc, "  ", 2);
}

static void xrt__bc_region(xrt__bc *bc, xrt__bcur *c, xrt__bcscope *s,
                           const xrt__bcop *owner);

/* A block: (ops << 1 | has args), [args, use-lists], ops. */
static void xrt__bc_block(xrt__bc *bc, xrt__bcur *c, xrt__bcscope *s,
                          size_t *next, size_t end, int index,
                          const xrt__bcop *owner);

/* An op with its regions. */
static void xrt__bc_op(xrt__bc *bc, xrt__bcur *c, xrt__bcscope *s,
                       size_t *next, size_t end, const xrt__bcop *parent,
                       int depth) {
  xrt__bcop op;
  memset(&op, 0, sizeof op);
  const uint8_t *at = c->p;
  op.offset = (size_t)(at - bc->beg);
  op.depth = depth;
  op.parent = parent ? parent->name : "";
  uint64_t ni = xrt__bc_varint(bc, c);
  if (ni >= bc->num_opnames)
    xrt__bc_fail(bc, at, "op name index %" PRIu64 " out of range", ni);
  op.name = bc->opnames[ni];
  uint8_t mask = xrt__bc_byte(bc, c);
  if (mask & ~0x7f) xrt__bc_fail(bc, c->p - 1, "bad op encoding mask 0x%02x", mask);
  op.loc = xrt__bc_loc(bc, c);
  if (mask & XRT__OPM_ATTRS) {
    const uint8_t *aat = c->p;
    op.attrs = xrt__bc_attr(bc, c);
    if (op.attrs->kind != XRT__BC_A_DICT)
      xrt__bc_fail(bc, aat, "op attributes are not a dictionary");
  }
  if (mask & XRT__OPM_PROPS) {
    const uint8_t *pat = c->p;
    if (bc->version < 5) xrt__bc_fail(bc, pat, "properties before format 5");
    uint64_t k = xrt__bc_varint(bc, c);
    if (k >= bc->num_props)
      xrt__bc_fail(bc, pat, "properties index %" PRIu64 " out of range", k);
    /* a blob of attribute references, in the order of the op's
     * definition (VHLO ops have required attributes only) */
    xrt__bcur pc = {bc->props_beg + bc->prop_off[k],
                    bc->props_beg + bc->props_size};
    size_t len;
    const uint8_t *blob = xrt__bc_blob(bc, &pc, &len);
    xrt__bcur b = {blob, blob + len};
    const xrt__bcv **v = xrt__bc_array(bc, len + 1, sizeof *v);
    bool optional = strncmp(op.name, "vhlo.", 5) != 0; /* (index << 1) | set */
    while (b.p < b.end) {
      if (!optional) {
        v[op.num_props++] = xrt__bc_attr(bc, &b);
        continue;
      }
      const uint8_t *oat = b.p;
      uint64_t x = xrt__bc_varint(bc, &b);
      if (x & 1) {
        if ((x >> 1) >= bc->num_attrs)
          xrt__bc_fail(bc, oat, "attribute index out of range");
        v[op.num_props] = xrt__bc_entry(bc, &bc->attrs[x >> 1], false, oat);
      }
      op.num_props++;
    }
    op.props = v;
  }
  if (mask & XRT__OPM_RESULTS)
    op.results = xrt__bc_list(bc, c, true, &op.num_results);
  if (mask & XRT__OPM_OPERANDS) {
    uint64_t k = xrt__bc_count(bc, c, 1);
    int64_t *ids = xrt__bc_array(bc, k + 1, sizeof *ids);
    for (uint64_t i = 0; i < k; i++) ids[i] = xrt__bc_operand(bc, c, s);
    op.operands = ids;
    op.num_operands = (int32_t)k;
  }
  if (mask & XRT__OPM_SUCCESSORS)
    xrt__bc_fail(bc, c->p, "ops with successor blocks are not supported");
  if ((mask & XRT__OPM_USELISTS) && bc->version >= 3)
    xrt__bc_uselists(bc, c, (uint64_t)op.num_results);
  bool isolated = false;
  if (mask & XRT__OPM_REGIONS) {
    uint64_t r = xrt__bc_varint(bc, c);
    isolated = r & 1;
    if ((r >> 1) > (uint64_t)(c->end - c->p) + 1 || (r >> 1) > INT32_MAX)
      xrt__bc_fail(bc, at, "more regions than the data holds");
    op.num_regions = (int32_t)(r >> 1);
  }
  int64_t *res = xrt__bc_array(bc, (uint64_t)op.num_results + 1, sizeof *res);
  for (int32_t i = 0; i < op.num_results; i++)
    res[i] = end > 0 ? xrt__bc_define(bc, at, next, end, op.results[i])
                     : xrt__bc_new_id(bc, op.results[i]);
  op.result_ids = res;
  /* text: one line per op, mapped back to the artifact */
  xrt__bc_newline(bc, depth);
  if (bc->num_lines == bc->cap_lines) {
    size_t cap = bc->cap_lines ? bc->cap_lines * 2 : 256;
    xrt__bcline *l = xrt__realloc(&bc->allocator, bc->lines,
                                  bc->cap_lines * sizeof *l, cap * sizeof *l);
    if (!l) xrt__bc_oom(bc);
    bc->lines = l;
    bc->cap_lines = cap;
  }
  xrt__bcline *ln = &bc->lines[bc->num_lines++];
  memset(ln, 0, sizeof *ln);
  ln->line = bc->line;
  ln->offset = op.offset;
  ln->loc = xrt__bc_ir_loc(bc, op.loc);
  xrt__vhlo_op_head(bc, &op);
  if (op.num_regions) {
    xrt__bcscope inner = {bc->num_slots};
    xrt__bcscope *rs = isolated ? &inner : s;
    xrt__bcur sec = *c, *rc = c;
    if (isolated && bc->version >= 2) {
      if (xrt__bc_section(bc, c, &sec) != XRT__SEC_IR)
        xrt__bc_fail(bc, sec.p, "expected an IR section for a region");
      rc = &sec;
    }
    xrt__bc_put(bc, " (", 2);
    for (int32_t i = 0; i < op.num_regions; i++) {
      if (i) xrt__bc_put(bc, ", ", 2);
      xrt__bc_region(bc, rc, rs, &op);
    }
    xrt__bc_put(bc, ")", 1);
    if (rc == &sec && sec.p != sec.end)
      xrt__bc_fail(bc, sec.p, "stray bytes after a region");
  }
  xrt__vhlo_op_tail(bc, &op);
}

static void xrt__bc_block(xrt__bc *bc, xrt__bcur *c, xrt__bcscope *s,
                          size_t *next, size_t end, int index,
                          const xrt__bcop *owner) {
  const uint8_t *at = c->p;
  uint64_t h = xrt__bc_varint(bc, c), num_ops = h >> 1;
  if (num_ops > (uint64_t)(c->end - c->p))
    xrt__bc_fail(bc, at, "more ops than the data holds");
  int depth = owner ? owner->depth + 1 : 0;
  if (h & 1) {
    uint64_t na = xrt__bc_count(bc, c, 1);
    xrt__bc_newline(bc, depth);
    xrt__bc_printf(bc, "^bb%d(", index);
    for (uint64_t i = 0; i < na; i++) {
      const uint8_t *tat = c->p;
      const xrt__bcv *t;
      if (bc->version >= 4) { /* (type << 1) | has location */
        uint64_t v = xrt__bc_varint(bc, c);
        if ((v >> 1) >= bc->num_types)
          xrt__bc_fail(bc, tat, "type index out of range");
        t = xrt__bc_entry(bc, &bc->types[v >> 1], true, tat);
        if (v & 1) xrt__bc_loc(bc, c);
      } else {
        t = xrt__bc_type(bc, c);
        xrt__bc_loc(bc, c);
      }
      int64_t id = xrt__bc_define(bc, tat, next, end, t);
      xrt__bc_printf(bc, "%s%%%" PRId64 ": ", i ? ", " : "", id);
      xrt__vhlo_put_type(bc, t);
    }
    xrt__bc_put(bc, "):", 2);
    if (bc->version >= 3 && xrt__bc_byte(bc, c))
      xrt__bc_uselists(bc, c, na);
  } else if (index > 0) {
    xrt__bc_newline(bc, depth);
    xrt__bc_printf(bc, "^bb%d:", index);
  }
  for (uint64_t i = 0; i < num_ops; i++)
    xrt__bc_op(bc, c, s, next, end, owner, depth + 1);
}

/* A region: block count, [value count, blocks]. */
static void xrt__bc_region(xrt__bc *bc, xrt__bcur *c, xrt__bcscope *s,
                           const xrt__bcop *owner) {
  const uint8_t *at = c->p;
  if (++bc->depth > XRT__BC_MAX_DEPTH)
    xrt__bc_fail(bc, at, "regions nested deeper than %d", XRT__BC_MAX_DEPTH);
  uint64_t nb = xrt__bc_count(bc, c, 1);
  xrt__bc_put(bc, "{", 1);
  if (nb) {
    uint64_t nv = xrt__bc_varint(bc, c);
    size_t mark = bc->num_slots;
    xrt__bc_reserve(bc, at, nv);
    size_t next = mark, end = mark + (size_t)nv;
    for (uint64_t b = 0; b < nb; b++)
      xrt__bc_block(bc, c, s, &next, end, (int)b, owner);
    xrt__bc_release(bc, c->p, mark);
  }
  xrt__bc_newline(bc, owner->depth);
  xrt__bc_put(bc, "}", 1);
  bc->depth--;
}

/* The IR section: one block (no arguments) of top-level ops. */
static void xrt__bc_ir(xrt__bc *bc, xrt__bcur c) {
  xrt__bcscope s = {0};
  const uint8_t *at = c.p;
  uint64_t h = xrt__bc_varint(bc, &c), n = h >> 1;
  if (h & 1) xrt__bc_fail(bc, at, "the top-level block has arguments");
  if (n > (uint64_t)(c.end - c.p)) xrt__bc_fail(bc, at, "more ops than the data holds");
  size_t next = 0;
  for (uint64_t i = 0; i < n; i++) xrt__bc_op(bc, &c, &s, &next, 0, NULL, 0);
  if (c.p != c.end) xrt__bc_fail(bc, c.p, "stray bytes after the IR");
  xrt__bc_put(bc, "\n", 1);
}

/* ---------------------------------------------------------------------
 * The artifact
 * ------------------------------------------------------------------- */

XRT__PRIVATE bool xrt__is_bytecode(const char *data, size_t len) {
  return data && len >= 4 && !memcmp(data, "ML\xefR", 4);
}

/* Magic, format version, producer ("StableHLO_vX.Y.Z"), checked against
 * what this reader knows. */
static void xrt__bc_header(xrt__bc *bc, xrt__bcur *c) {
  xrt__bc_bytes(bc, c, 4);
  const uint8_t *at = c->p;
  bc->version = xrt__bc_varint(bc, c);
  if (bc->version > XRT__BC_FORMAT_MAX)
    xrt__bc_fail(bc, at, "bytecode format %" PRIu64 " is newer than the "
                 "newest xrt reads (%d)", bc->version, XRT__BC_FORMAT_MAX);
  at = c->p;
  const uint8_t *nul = memchr(c->p, 0, (size_t)(c->end - c->p));
  if (!nul) xrt__bc_fail(bc, at, "unterminated producer string");
  bc->producer = (const char *)c->p;
  c->p = nul + 1;
  static const char pre[] = "StableHLO_v";
  char ver[32];
  int have[3], max[3];
  /* the prefix first: a shorter producer ends before pre's length */
  bool is_shlo = !strncmp(bc->producer, pre, sizeof pre - 1);
  if (is_shlo) snprintf(ver, sizeof ver, "%s", bc->producer + sizeof pre - 1);
  if (!is_shlo || !xrt__version_parse(ver, have))
    xrt__bc_fail(bc, at, "not a StableHLO portable artifact (producer '%.64s')",
                 bc->producer);
  if (!xrt__version_parse(xrt__vhlo_version(), max)) max[0] = max[1] = max[2] = 0;
  int cmp = 0;
  for (int i = 0; i < 3 && !cmp; i++) cmp = (have[i] > max[i]) - (have[i] < max[i]);
  if (cmp > 0) {
    bc->status = XRT_UNIMPLEMENTED;
    xrt__bc_fail(bc, at, "the artifact is StableHLO %d.%d.%d (producer '%.64s'),"
                 " newer than the newest version xrt reads, %s", have[0],
                 have[1], have[2], bc->producer, xrt__vhlo_version());
  }
  memcpy(bc->vhlo, have, sizeof have);
}

static void xrt__bc_read(xrt__bc *bc) {
  xrt__bcur c = {bc->beg, bc->beg + bc->size}, sec[XRT__SEC_COUNT];
  bool have[XRT__SEC_COUNT] = {false};
  xrt__bc_header(bc, &c);
  while (c.p < c.end) {
    const uint8_t *at = c.p;
    xrt__bcur d;
    int id = xrt__bc_section(bc, &c, &d);
    if (have[id]) xrt__bc_fail(bc, at, "section %d appears twice", id);
    have[id] = true;
    sec[id] = d;
  }
  static const int required[] = {XRT__SEC_STRING, XRT__SEC_DIALECT,
                                 XRT__SEC_ATTRTYPE, XRT__SEC_ATTRTYPE_OFF,
                                 XRT__SEC_IR};
  for (size_t i = 0; i < XRT__ARRAY_SIZE(required); i++)
    if (!have[required[i]])
      xrt__bc_fail(bc, c.p, "section %d is missing", required[i]);
  xrt__bc_strings(bc, sec[XRT__SEC_STRING]);
  if (have[XRT__SEC_PROPERTIES]) xrt__bc_properties(bc, sec[XRT__SEC_PROPERTIES]);
  xrt__bc_dialects(bc, sec[XRT__SEC_DIALECT]);
  xrt__bc_resources(bc, have[XRT__SEC_RESOURCE] ? &sec[XRT__SEC_RESOURCE] : NULL,
                    have[XRT__SEC_RESOURCE_OFF] ? &sec[XRT__SEC_RESOURCE_OFF]
                                                : NULL);
  xrt__bc_attrtypes(bc, sec[XRT__SEC_ATTRTYPE], sec[XRT__SEC_ATTRTYPE_OFF]);
  bc->line = 1;
  xrt__bc_ir(bc, sec[XRT__SEC_IR]);
}

/* Copies the text and its line table into the program's arena. */
static void xrt__bc_keep(xrt__bc *bc, xrt__bctext *out) {
  char *t = xrt__arena_alloc(bc->keep, bc->out.n + 1);
  xrt__bcline *l = xrt__arena_alloc(bc->keep, bc->num_lines * sizeof *l + 1);
  xrt__bcblob *b = xrt__arena_alloc(bc->keep, bc->num_blobs * sizeof *b + 1);
  if (!t || !l || !b) xrt__bc_oom(bc);
  if (bc->num_blobs) memcpy(b, bc->blobs, bc->num_blobs * sizeof *b);
  out->blobs = b;
  out->num_blobs = bc->num_blobs;
  memcpy(t, bc->out.s, bc->out.n);
  t[bc->out.n] = 0;
  if (bc->num_lines) memcpy(l, bc->lines, bc->num_lines * sizeof *l);
  out->text = t;
  out->len = bc->out.n;
  out->lines = l;
  out->num_lines = bc->num_lines;
  out->file = bc->file;
}

static xrt_status xrt__bc_run(xrt__arena *keep, const char *data, size_t len,
                              const char *file, bool by_ref, xrt__bctext *out) {
  memset(out, 0, sizeof *out);
  xrt__bc *bc = xrt__calloc(&keep->allocator, 1, sizeof *bc);
  if (!bc) return xrt__nomem("the bytecode reader");
  xrt__arena tmp;
  xrt__arena_init(&tmp, keep->allocator);
  bc->arena = &tmp;
  bc->keep = keep;
  bc->allocator = keep->allocator;
  bc->beg = (const uint8_t *)data;
  bc->size = len;
  bc->file = file;
  bc->by_ref = by_ref;
  xrt_status s = XRT_OK;
  if (setjmp(bc->jb) == 0) {
    xrt__bc_read(bc);
    xrt__bc_keep(bc, out);
  } else {
    s = bc->status;
  }
  xrt__free(&bc->allocator, bc->out.s);
  xrt__free(&bc->allocator, bc->lines);
  xrt__free(&bc->allocator, bc->slots);
  xrt__free(&bc->allocator, bc->slot_fwd);
  xrt__free(&bc->allocator, (void *)bc->id_types);
  xrt__free(&bc->allocator, bc->blobs);
  xrt__arena_release(&tmp);
  xrt__free(&keep->allocator, bc);
  return s;
}

XRT__PRIVATE xrt_status xrt__bytecode_read(xrt__arena *keep, const char *data,
                                           size_t len, const char *file,
                                           xrt__bctext *out) {
  return xrt__bc_run(keep, data, len, file, true, out);
}

/* The line of the generated text that starts at or before line. */
static const xrt__bcline *xrt__bc_line(const xrt__bctext *t, int32_t line) {
  size_t lo = 0, hi = t->num_lines;
  while (lo < hi) {
    size_t mid = lo + (hi - lo) / 2;
    if (t->lines[mid].line <= line) lo = mid + 1;
    else hi = mid;
  }
  return lo ? &t->lines[lo - 1] : NULL;
}

/* The artifact's location of what the parser found at loc; line 0 when
 * the artifact has none (stripped debug information), since the
 * generated text's lines mean nothing to the user. */
static void xrt__bc_relocate(const xrt__bctext *t, xrt_ir_loc *loc) {
  const xrt__bcline *l = xrt__bc_line(t, loc->line);
  if (l && l->loc.file) {
    *loc = l->loc;
  } else {
    loc->line = 0;
    loc->col = 0;
  }
}

static void xrt__bc_relocate_region(const xrt__bctext *t, const xrt_ir_region *r) {
  for (int32_t i = 0; i < r->num_ops; i++) {
    xrt_ir_op *op = (xrt_ir_op *)&r->ops[i]; /* ours until shared */
    xrt__bc_relocate(t, &op->loc);
    for (int32_t k = 0; k < op->num_regions; k++)
      xrt__bc_relocate_region(t, &op->regions[k]);
  }
}

/* After the parser read the text: ops and functions take the artifact's
 * own locations where it has them; a parse error's "FILE:LINE:COL:" becomes
 * that location, or "FILE: bytecode offset N:" of the op. */
XRT__PRIVATE xrt_status xrt__bytecode_locate(const xrt__bctext *t,
                                             xrt_status parsed,
                                             xrt_ir_module *m) {
  if (parsed == XRT_OK) {
    for (int32_t i = 0; i < m->num_funcs; i++) {
      xrt_ir_func *f = (xrt_ir_func *)&m->funcs[i];
      xrt__bc_relocate(t, &f->loc);
      xrt__bc_relocate_region(t, &f->body);
    }
    return XRT_OK;
  }
  char msg[2048]; /* as long as xrt_last_error's own buffer */
  snprintf(msg, sizeof msg, "%s", xrt_last_error());
  size_t fl = strlen(t->file);
  int line = 0, col = 0, used = 0;
  if (strncmp(msg, t->file, fl) || sscanf(msg + fl, ":%d:%d: %n", &line, &col,
                                          &used) < 2 || !used)
    return parsed;
  const xrt__bcline *l = xrt__bc_line(t, line);
  if (!l) return parsed;
  if (l->loc.file)
    return xrt__fail(parsed, "%s:%d:%d: %s", l->loc.file, (int)l->loc.line,
                     (int)l->loc.col, msg + fl + used);
  return xrt__fail(parsed, "%s: bytecode offset %zu: %s", t->file, l->offset,
                   msg + fl + used);
}

/* The artifact as text in malloc'd memory (for tests and tools that want
 * the text itself): *text must be freed with free().  Not in the single
 * file, which has no such tests. */
#if !defined(XRT__AMALGAMATION)
XRT__PRIVATE xrt_status xrt__bytecode_to_text(const char *data, size_t len,
                                              const char *file, char **text,
                                              size_t *text_len) {
  *text = NULL;
  xrt__arena a;
  xrt__arena_init(&a, xrt_allocator_system());
  xrt__bctext t;
  xrt_status s = xrt__bc_run(&a, data, len, file ? file : "<input>", false, &t);
  if (!s && !(*text = malloc(t.len + 1))) s = xrt__nomem("the artifact's text");
  if (!s) {
    memcpy(*text, t.text, t.len + 1);
    if (text_len) *text_len = t.len;
  }
  xrt__arena_release(&a);
  return s;
}
#endif
