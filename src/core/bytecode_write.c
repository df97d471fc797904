/*
 * src/core/bytecode_write.c - portable artifacts, part 3: the writer.  A
 * parsed program as MLIR bytecode of the VHLO dialect at a target
 * StableHLO version (xrt_program_serialize): each op becomes the newest
 * VHLO version of it the target has, with every attribute VHLO requires
 * (StableHLO's defaults spelled out, as StableHLO's own serializer does);
 * ops and attributes the target lacks are refused by name.  The op,
 * attribute, type and enumeration tables are the reader's
 * (bytecode_vhlo.c), so that what one writes the other reads.
 * Part of the core of xrt; MIT licensed, see LICENSE.
 */
#include "bytecode.h"

enum { XRT__BW_BUILTIN = 0, XRT__BW_VHLO = 1 }; /* dialect numbers */
enum { XRT__BW_SEC_STRING, XRT__BW_SEC_DIALECT, XRT__BW_SEC_ATTRTYPE,
       XRT__BW_SEC_ATTRTYPE_OFF, XRT__BW_SEC_IR, XRT__BW_SEC_RESOURCE,
       XRT__BW_SEC_RESOURCE_OFF, XRT__BW_SEC_PROPERTIES = 8 };
enum { XRT__BW_OPM_ATTRS = 1, XRT__BW_OPM_RESULTS = 2, XRT__BW_OPM_OPERANDS = 4,
       XRT__BW_OPM_REGIONS = 16, XRT__BW_OPM_PROPS = 64 };

/* Growable bytes. */
typedef struct xrt__bwbuf {
  uint8_t *d;
  size_t n, cap;
} xrt__bwbuf;

/* An interned item (string, attribute, type, property blob): its bytes in
 * a buffer, and for attributes and types the dialect. */
typedef struct xrt__bwent {
  size_t off, len;
  uint8_t dialect;
} xrt__bwent;

/* A table of interned items with an open-addressing index. */
typedef struct xrt__bwtab {
  xrt__bwbuf data;
  xrt__bwent *e;
  size_t n, cap;
  uint32_t *slot; /* index + 1; 0 empty */
  size_t nslot;
} xrt__bwtab;

typedef struct xrt__bw {
  xrt_allocator al;
  jmp_buf jb;
  xrt_status status;
  int ver[3];    /* the target StableHLO version */
  char ver_s[32];
  int format;    /* the bytecode format it implies */
  xrt__bwtab strs, attrs, types, props, opnames;
  xrt__arena arena; /* scratch: index lists */
  const xrt_ir_func *fn;
  int32_t *vmap;    /* function value id -> bytecode value index */
  uint32_t top;     /* values of the open regions of the isolated scope */
  const xrt__vop **opcache; /* by opcode: the chosen VHLO op (or NULL) */
  uint8_t *opdone;
  uint32_t t_i64, t_none; /* common types */
  /* the IR, the module's and a function's region, a section being
   * written: owned here so that a failure (longjmp) frees them too */
  xrt__bwbuf ir, body[2], sec, out;
} xrt__bw;

/* ---------------------------------------------------------------------
 * Errors, bytes, varints
 * ------------------------------------------------------------------- */

static _Noreturn void xrt__bw_fail(xrt__bw *w, xrt_status code, const char *fmt,
                                   ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 3, 4)))
#endif
    ;

static _Noreturn void xrt__bw_fail(xrt__bw *w, xrt_status code, const char *fmt,
                                   ...) {
  char msg[512];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(msg, sizeof msg, fmt, ap);
  va_end(ap);
  w->status = xrt__fail(code, "serializing at StableHLO %s: %s", w->ver_s, msg);
  longjmp(w->jb, 1);
}

static _Noreturn void xrt__bw_oom(xrt__bw *w) {
  w->status = xrt__nomem("the portable artifact");
  longjmp(w->jb, 1);
}

static void xrt__bw_reserve(xrt__bw *w, xrt__bwbuf *b, size_t more) {
  if (b->cap - b->n >= more) return;
  size_t cap = b->cap ? b->cap : 256;
  while (cap - b->n < more) {
    if (cap > SIZE_MAX / 2) xrt__bw_oom(w);
    cap *= 2;
  }
  uint8_t *d = xrt__realloc(&w->al, b->d, b->cap, cap);
  if (!d) xrt__bw_oom(w);
  b->d = d;
  b->cap = cap;
}

static void xrt__bw_bytes(xrt__bw *w, xrt__bwbuf *b, const void *p, size_t n) {
  if (!n) return;
  xrt__bw_reserve(w, b, n);
  memcpy(b->d + b->n, p, n);
  b->n += n;
}

static void xrt__bw_byte(xrt__bw *w, xrt__bwbuf *b, uint8_t v) {
  xrt__bw_bytes(w, b, &v, 1);
}

/* PrefixVarInt: as many trailing zero bits in the first byte as bytes
 * follow (a zero first byte: 8 bytes follow). */
static void xrt__bw_varint(xrt__bw *w, xrt__bwbuf *b, uint64_t v) {
  uint8_t out[9];
  if (v >> 56) {
    out[0] = 0;
    for (int i = 0; i < 8; i++) out[1 + i] = (uint8_t)(v >> (8 * i));
    xrt__bw_bytes(w, b, out, 9);
    return;
  }
  int extra = 0;
  while (extra < 7 && (v >> (7 * (extra + 1)))) extra++;
  uint64_t x = ((v << 1) | 1) << extra;
  for (int i = 0; i <= extra; i++) out[i] = (uint8_t)(x >> (8 * i));
  xrt__bw_bytes(w, b, out, (size_t)extra + 1);
}

static void xrt__bw_svarint(xrt__bw *w, xrt__bwbuf *b, int64_t v) {
  xrt__bw_varint(w, b, ((uint64_t)v << 1) ^ (uint64_t)(v >> 63));
}

/* An APInt of a known width: a byte up to 8 bits, else a signed varint
 * of its sign extension (what MLIR writes). */
static void xrt__bw_apint(xrt__bw *w, xrt__bwbuf *b, uint64_t v, int bits) {
  if (bits <= 8) {
    xrt__bw_byte(w, b, (uint8_t)v);
    return;
  }
  if (bits < 64 && ((v >> (bits - 1)) & 1)) v |= ~(uint64_t)0 << bits;
  else if (bits < 64) v &= ((uint64_t)1 << bits) - 1;
  xrt__bw_svarint(w, b, (int64_t)v);
}

/* ---------------------------------------------------------------------
 * Interning: strings, attributes, types, properties
 * ------------------------------------------------------------------- */

static uint64_t xrt__bw_hash(const uint8_t *p, size_t n, uint8_t d) {
  uint64_t h = 0x9E3779B97F4A7C15ull ^ n ^ ((uint64_t)d << 56);
  size_t i = 0;
  for (; i + 8 <= n; i += 8) { /* 8 bytes a step: large constants */
    uint64_t x;
    memcpy(&x, p + i, 8);
    h = (h ^ x) * 0xff51afd7ed558ccdull;
    h ^= h >> 29;
  }
  for (; i < n; i++) h = (h ^ p[i]) * 0x100000001b3ull;
  return h ^ (h >> 32);
}

static void xrt__bw_rehash(xrt__bw *w, xrt__bwtab *t) {
  size_t ns = t->nslot ? t->nslot * 2 : 1024;
  uint32_t *s = xrt__calloc(&w->al, ns, sizeof *s);
  if (!s) xrt__bw_oom(w);
  for (size_t i = 0; i < t->n; i++) {
    const xrt__bwent *e = &t->e[i];
    size_t h = (size_t)xrt__bw_hash(t->data.d + e->off, e->len, e->dialect);
    while (s[h & (ns - 1)]) h++;
    s[h & (ns - 1)] = (uint32_t)i + 1;
  }
  xrt__free(&w->al, t->slot);
  t->slot = s;
  t->nslot = ns;
}

/* The bytes t->data[mark..] as an item of dialect d: an equal item's
 * index (the bytes are dropped), else a new one. */
static uint32_t xrt__bw_intern(xrt__bw *w, xrt__bwtab *t, size_t mark, uint8_t d) {
  if ((t->n + 1) * 2 > t->nslot) xrt__bw_rehash(w, t);
  const uint8_t *p = t->data.d + mark;
  size_t len = t->data.n - mark;
  size_t h = (size_t)xrt__bw_hash(p, len, d);
  for (;; h++) {
    uint32_t k = t->slot[h & (t->nslot - 1)];
    if (!k) break;
    const xrt__bwent *e = &t->e[k - 1];
    if (e->len == len && e->dialect == d && !memcmp(t->data.d + e->off, p, len)) {
      t->data.n = mark;
      return k - 1;
    }
  }
  if (t->n == t->cap) {
    size_t cap = t->cap ? t->cap * 2 : 256;
    xrt__bwent *e = xrt__realloc(&w->al, t->e, t->cap * sizeof *e, cap * sizeof *e);
    if (!e) xrt__bw_oom(w);
    t->e = e;
    t->cap = cap;
  }
  if (t->n >= UINT32_MAX - 1) xrt__bw_fail(w, XRT_RESOURCE_EXHAUSTED, "too many items");
  t->e[t->n] = (xrt__bwent){mark, len, d};
  t->slot[h & (t->nslot - 1)] = (uint32_t)++t->n;
  return (uint32_t)(t->n - 1);
}

static void xrt__bw_tab_free(xrt__bw *w, xrt__bwtab *t) {
  xrt__free(&w->al, t->data.d);
  xrt__free(&w->al, t->e);
  xrt__free(&w->al, t->slot);
}

static uint32_t xrt__bw_string(xrt__bw *w, const char *s, size_t n) {
  size_t mark = w->strs.data.n;
  xrt__bw_bytes(w, &w->strs.data, s, n);
  return xrt__bw_intern(w, &w->strs, mark, 0);
}

/* An attribute or type is built at the end of its table's data (its
 * parts interned first), then interned. */
static size_t xrt__bw_begin(xrt__bwtab *t) { return t->data.n; }

static uint32_t xrt__bw_end(xrt__bw *w, xrt__bwtab *t, size_t mark, uint8_t d) {
  return xrt__bw_intern(w, t, mark, d);
}

/* ---------------------------------------------------------------------
 * Versions
 * ------------------------------------------------------------------- */

static int xrt__bw_cmp(const int a[3], const int b[3]) {
  for (int i = 0; i < 3; i++)
    if (a[i] != b[i]) return a[i] < b[i] ? -1 : 1;
  return 0;
}

/* Whether the target has what appeared in version since. */
static bool xrt__bw_has(const xrt__bw *w, const char *since) {
  int v[3];
  return since && xrt__version_parse(since, v) && xrt__bw_cmp(v, w->ver) <= 0;
}

/* The bytecode format StableHLO writes for a target (what the official
 * artifacts of each version carry). */
static int xrt__bw_format(const int v[3]) {
  static const struct { int v[3], format; } t[] = {
      {{0, 15, 0}, 6}, {{0, 14, 0}, 4}, {{0, 12, 0}, 3}, {{0, 10, 0}, 1}};
  for (size_t i = 0; i < XRT__ARRAY_SIZE(t); i++)
    if (xrt__bw_cmp(v, t[i].v) >= 0) return t[i].format;
  return 0;
}

/* ---------------------------------------------------------------------
 * Types
 * ------------------------------------------------------------------- */

static uint32_t xrt__bw_simple_type(xrt__bw *w, const char *name) {
  int code = xrt__vhlo_type_code(name);
  if (code < 0)
    xrt__bw_fail(w, XRT_UNIMPLEMENTED, "type %s has no VHLO form", name);
  size_t m = xrt__bw_begin(&w->types);
  xrt__bw_varint(w, &w->types.data, (uint64_t)code);
  return xrt__bw_end(w, &w->types, m, XRT__BW_VHLO);
}

/* The signless integer type of a width (quantized storage). */
static uint32_t xrt__bw_int_type(xrt__bw *w, int bits) {
  char name[8];
  snprintf(name, sizeof name, "i%d", bits);
  return xrt__bw_simple_type(w, name);
}

static uint32_t xrt__bw_quant(xrt__bw *w, const xrt_ir_quant *q,
                              uint32_t expressed) {
  uint32_t st = xrt__bw_int_type(w, xrt_dtype_bits(q->storage));
  bool axis = q->axis >= 0;
  xrt__bwbuf *b = &w->types.data;
  size_t m = xrt__bw_begin(&w->types);
  xrt__bw_varint(w, b, axis ? XRT__VT_QUANT_AXIS : XRT__VT_QUANT);
  xrt__bw_varint(w, b, xrt_dtype_is_signed_int(q->storage) ? 1 : 0);
  xrt__bw_varint(w, b, st);
  xrt__bw_varint(w, b, expressed);
  uint64_t bits;
  if (!axis) {
    memcpy(&bits, &q->scales[0], sizeof bits);
    xrt__bw_apint(w, b, bits, 64);
    xrt__bw_svarint(w, b, q->zero_points[0]);
    xrt__bw_svarint(w, b, q->storage_min);
    xrt__bw_svarint(w, b, q->storage_max);
  } else {
    xrt__bw_varint(w, b, (uint64_t)q->axis);
    xrt__bw_svarint(w, b, q->storage_min);
    xrt__bw_svarint(w, b, q->storage_max);
    xrt__bw_varint(w, b, (uint64_t)q->num_scales);
    for (int32_t i = 0; i < q->num_scales; i++) {
      memcpy(&bits, &q->scales[i], sizeof bits);
      xrt__bw_apint(w, b, bits, 64);
    }
    xrt__bw_varint(w, b, (uint64_t)q->num_scales);
    for (int32_t i = 0; i < q->num_scales; i++)
      xrt__bw_svarint(w, b, q->zero_points[i]);
  }
  return xrt__bw_end(w, &w->types, m, XRT__BW_VHLO);
}

static uint32_t xrt__bw_elem(xrt__bw *w, xrt_dtype dt, const xrt_ir_quant *q) {
  if (q) return xrt__bw_quant(w, q, xrt__bw_elem(w, q->expressed, NULL));
  if (dt == XRT_C64 || dt == XRT_C128) {
    uint32_t e = xrt__bw_simple_type(w, dt == XRT_C64 ? "f32" : "f64");
    size_t m = xrt__bw_begin(&w->types);
    xrt__bw_varint(w, &w->types.data, XRT__VT_COMPLEX);
    xrt__bw_varint(w, &w->types.data, e);
    return xrt__bw_end(w, &w->types, m, XRT__BW_VHLO);
  }
  return xrt__bw_simple_type(w, xrt__dtype_spelling(dt));
}

static uint32_t xrt__bw_tensor_type(xrt__bw *w, const xrt_shape *s,
                                    const xrt_ir_quant *q) {
  uint32_t e = xrt__bw_elem(w, s->dtype, q);
  xrt__bwbuf *b = &w->types.data;
  size_t m = xrt__bw_begin(&w->types);
  xrt__bw_varint(w, b, XRT__VT_RANKED_TENSOR);
  xrt__bw_varint(w, b, (uint64_t)s->rank);
  for (int i = 0; i < s->rank; i++) /* MLIR's dynamic size: INT64_MIN */
    xrt__bw_svarint(w, b, s->dims[i] < 0 ? INT64_MIN : s->dims[i]);
  xrt__bw_varint(w, b, e);
  return xrt__bw_end(w, &w->types, m, XRT__BW_VHLO);
}

/* The other forms of tensor type: bounded (tensor<?xT,
 * #stablehlo.bounds<N>>, XRT__TYPE_BOUNDS) and memref (VHLO's buffer);
 * *handled false for a plain tensor type. */
static uint32_t xrt__bw_other_tensor(xrt__bw *w, const xrt_ir_type *t,
                                     bool *handled) {
  const xrt_ir_type *bd = t->elems && t->elems->kind == XRT__TYPE_BOUNDS &&
                                  t->kind == XRT_TYPE_TENSOR
                              ? t->elems
                              : NULL;
  bool memref = t->kind == XRT__TYPE_MEMREF;
  *handled = bd || memref;
  if (!*handled) return 0;
  if (memref && !xrt__bw_has(w, "1.13.0"))
    xrt__bw_fail(w, XRT_UNIMPLEMENTED, "memref types are not in StableHLO %s "
                 "(they appeared in 1.13.0)", w->ver_s);
  uint32_t e = xrt__bw_elem(w, t->shape.dtype, t->quant), enc = 0;
  if (bd) { /* TypeExtensionsV1Attr: the bounds, MLIR's dynamic INT64_MIN */
    size_t m = xrt__bw_begin(&w->attrs);
    xrt__bw_varint(w, &w->attrs.data, XRT__VA_TYPE_EXTENSIONS);
    xrt__bw_varint(w, &w->attrs.data, (uint64_t)bd->shape.rank);
    for (int32_t i = 0; i < bd->shape.rank && i < XRT_MAX_RANK; i++)
      xrt__bw_svarint(w, &w->attrs.data,
                      bd->shape.dims[i] < 0 ? INT64_MIN : bd->shape.dims[i]);
    enc = xrt__bw_end(w, &w->attrs, m, XRT__BW_VHLO);
  }
  xrt__bwbuf *b = &w->types.data;
  size_t m = xrt__bw_begin(&w->types);
  xrt__bw_varint(w, b, memref ? XRT__VT_RANKED_BUFFER : XRT__VT_RANKED_TENSOR_ENC);
  if (!memref) xrt__bw_varint(w, b, enc);
  xrt__bw_varint(w, b, (uint64_t)t->shape.rank);
  for (int i = 0; i < t->shape.rank && i < XRT_MAX_RANK; i++)
    xrt__bw_svarint(w, b, t->shape.dims[i] < 0 ? INT64_MIN : t->shape.dims[i]);
  xrt__bw_varint(w, b, e);
  return xrt__bw_end(w, &w->types, m, XRT__BW_VHLO);
}

static uint32_t xrt__bw_type(xrt__bw *w, const xrt_ir_type *t) {
  if (t->kind == XRT_TYPE_TENSOR || t->kind == XRT__TYPE_MEMREF) {
    bool other;
    uint32_t k = xrt__bw_other_tensor(w, t, &other);
    return other ? k : xrt__bw_tensor_type(w, &t->shape, t->quant);
  }
  if (t->kind == XRT_TYPE_TOKEN) {
    size_t m = xrt__bw_begin(&w->types);
    xrt__bw_varint(w, &w->types.data, XRT__VT_TOKEN);
    return xrt__bw_end(w, &w->types, m, XRT__BW_VHLO);
  }
  bool future = t->kind == XRT__TYPE_FUTURE;
  if (future && !xrt__bw_has(w, "1.15.0"))
    xrt__bw_fail(w, XRT_UNIMPLEMENTED, "!stablehlo.future types are not in "
                 "StableHLO %s (they appeared in 1.15.0)", w->ver_s);
  if (!future && t->kind != XRT_TYPE_TUPLE)
    xrt__bw_fail(w, XRT_UNIMPLEMENTED, "a type of kind %d has no VHLO form",
                 (int)t->kind);
  uint32_t *k = xrt__arena_alloc(&w->arena, ((size_t)t->num_elems + 1) * sizeof *k);
  if (!k) xrt__bw_oom(w);
  for (int32_t i = 0; i < t->num_elems; i++) k[i] = xrt__bw_type(w, &t->elems[i]);
  size_t m = xrt__bw_begin(&w->types);
  xrt__bw_varint(w, &w->types.data, future ? XRT__VT_FUTURE : XRT__VT_TUPLE);
  xrt__bw_varint(w, &w->types.data, (uint64_t)t->num_elems);
  for (int32_t i = 0; i < t->num_elems; i++) xrt__bw_varint(w, &w->types.data, k[i]);
  return xrt__bw_end(w, &w->types, m, XRT__BW_VHLO);
}

static uint32_t xrt__bw_func_type(xrt__bw *w, const xrt_ir_func *f) {
  int32_t ni = f->body.num_args, nr = f->num_results;
  uint32_t *k = xrt__arena_alloc(&w->arena, ((size_t)ni + (size_t)nr + 1) * sizeof *k);
  if (!k) xrt__bw_oom(w);
  for (int32_t i = 0; i < ni; i++)
    k[i] = xrt__bw_type(w, &f->value_types[f->body.args[i]]);
  for (int32_t i = 0; i < nr; i++) k[ni + i] = xrt__bw_type(w, &f->result_types[i]);
  xrt__bwbuf *b = &w->types.data;
  size_t m = xrt__bw_begin(&w->types);
  xrt__bw_varint(w, b, XRT__VT_FUNCTION);
  xrt__bw_varint(w, b, (uint64_t)ni);
  for (int32_t i = 0; i < ni; i++) xrt__bw_varint(w, b, k[i]);
  xrt__bw_varint(w, b, (uint64_t)nr);
  for (int32_t i = 0; i < nr; i++) xrt__bw_varint(w, b, k[ni + i]);
  return xrt__bw_end(w, &w->types, m, XRT__BW_VHLO);
}

/* ---------------------------------------------------------------------
 * VHLO attributes
 * ------------------------------------------------------------------- */

static uint32_t xrt__bw_a_varint(xrt__bw *w, int code, uint64_t v) {
  size_t m = xrt__bw_begin(&w->attrs);
  xrt__bw_varint(w, &w->attrs.data, (uint64_t)code);
  xrt__bw_varint(w, &w->attrs.data, v);
  return xrt__bw_end(w, &w->attrs, m, XRT__BW_VHLO);
}

static uint32_t xrt__bw_a_bool(xrt__bw *w, bool v) {
  return xrt__bw_a_varint(w, XRT__VA_BOOL, v);
}

static uint32_t xrt__bw_a_string(xrt__bw *w, const char *s, size_t n) {
  return xrt__bw_a_varint(w, XRT__VA_STRING, xrt__bw_string(w, s, n));
}

static uint32_t xrt__bw_a_int(xrt__bw *w, uint32_t type, int bits, int64_t v) {
  size_t m = xrt__bw_begin(&w->attrs);
  xrt__bw_varint(w, &w->attrs.data, XRT__VA_INTEGER);
  xrt__bw_varint(w, &w->attrs.data, type);
  xrt__bw_apint(w, &w->attrs.data, (uint64_t)v, bits);
  return xrt__bw_end(w, &w->attrs, m, XRT__BW_VHLO);
}

static uint32_t xrt__bw_a_i64(xrt__bw *w, int64_t v) {
  return xrt__bw_a_int(w, w->t_i64, 64, v);
}

static uint32_t xrt__bw_a_type(xrt__bw *w, uint32_t type) {
  return xrt__bw_a_varint(w, XRT__VA_TYPE, type);
}

static uint32_t xrt__bw_a_list(xrt__bw *w, int code, const uint32_t *k, size_t n) {
  size_t m = xrt__bw_begin(&w->attrs);
  xrt__bw_varint(w, &w->attrs.data, (uint64_t)code);
  xrt__bw_varint(w, &w->attrs.data, code == XRT__VA_DICT ? n / 2 : n);
  for (size_t i = 0; i < n; i++) xrt__bw_varint(w, &w->attrs.data, k[i]);
  return xrt__bw_end(w, &w->attrs, m, XRT__BW_VHLO);
}

/* TensorV1Attr: type, raw data (MLIR's: a splat holds one element; i1
 * is packed eight to a byte, a splat 0x00 or 0xFF). */
static uint32_t xrt__bw_a_tensor(xrt__bw *w, uint32_t type, const void *data,
                                 size_t len) {
  xrt__bwbuf *b = &w->attrs.data;
  size_t m = xrt__bw_begin(&w->attrs);
  xrt__bw_varint(w, b, XRT__VA_TENSOR);
  xrt__bw_varint(w, b, type);
  xrt__bw_varint(w, b, len);
  xrt__bw_bytes(w, b, data, len);
  return xrt__bw_end(w, &w->attrs, m, XRT__BW_VHLO);
}

static uint32_t xrt__bw_a_pred(xrt__bw *w, uint32_t type, const uint8_t *v,
                               int64_t n, bool splat) {
  if (splat || n == 1) {
    uint8_t x = v[0] ? 0xFF : 0;
    if (n == 1) x = v[0] ? 1 : 0;
    return xrt__bw_a_tensor(w, type, &x, 1);
  }
  size_t len = (size_t)(n + 7) / 8;
  uint8_t *p = xrt__arena_alloc(&w->arena, len);
  if (!p) xrt__bw_oom(w);
  memset(p, 0, len);
  for (int64_t i = 0; i < n; i++)
    if (v[i]) p[i / 8] |= (uint8_t)(1u << (i % 8));
  return xrt__bw_a_tensor(w, type, p, len);
}

static int64_t xrt__bw_numel(const xrt_shape *s) {
  int64_t n = 1;
  for (int i = 0; i < s->rank; i++) n *= s->dims[i] < 0 ? 0 : s->dims[i];
  return n;
}

static uint32_t xrt__bw_a_literal(xrt__bw *w, const xrt_ir_literal *l) {
  uint32_t type = xrt__bw_tensor_type(w, &l->type.shape, l->type.quant);
  if (l->type.shape.dtype == XRT_PRED && !l->type.quant)
    return xrt__bw_a_pred(w, type, l->data, xrt__bw_numel(&l->type.shape), l->splat);
  return xrt__bw_a_tensor(w, type, l->data, l->bytes);
}

/* An i64 (or i1) tensor of n values with a shape (NULL: [n]); all equal
 * values are written as a splat, as MLIR stores them. */
static uint32_t xrt__bw_a_ints(xrt__bw *w, const int64_t *v, int64_t n,
                               const int64_t *dims, int rank, bool pred) {
  xrt_shape s;
  memset(&s, 0, sizeof s);
  s.dtype = pred ? XRT_PRED : XRT_S64;
  s.rank = dims ? rank : 1;
  if (dims) memcpy(s.dims, dims, (size_t)rank * sizeof *dims);
  else s.dims[0] = n;
  uint32_t type = xrt__bw_tensor_type(w, &s, NULL);
  bool splat = n > 1;
  for (int64_t i = 1; splat && i < n; i++) splat = v[i] == v[0];
  if (pred) {
    uint8_t *b = xrt__arena_alloc(&w->arena, (size_t)n + 1);
    if (!b) xrt__bw_oom(w);
    for (int64_t i = 0; i < n; i++) b[i] = v[i] != 0;
    return xrt__bw_a_pred(w, type, b, n, splat);
  }
  return xrt__bw_a_tensor(w, type, v, (size_t)(splat ? 1 : n) * sizeof *v);
}

static uint32_t xrt__bw_a_filled(xrt__bw *w, int64_t v, int64_t n, int64_t pairs,
                                 bool pred) {
  int64_t *x = xrt__arena_alloc(&w->arena, (size_t)(n * (pairs ? 2 : 1) + 1) * 8);
  if (!x) xrt__bw_oom(w);
  for (int64_t i = 0; i < n * (pairs ? 2 : 1); i++) x[i] = v;
  int64_t dims[2] = {n, 2};
  return xrt__bw_a_ints(w, x, n * (pairs ? 2 : 1), pairs ? dims : NULL, 2, pred);
}

/* Which VHLO enumeration an enum-valued attribute of this name holds. */
static int xrt__bw_enum_of(const char *name) {
  static const struct { const char *name; int e; } t[] = {
      {"comparison_direction", XRT__BCE_COMPARISON_DIRECTION},
      {"compare_type", XRT__BCE_COMPARISON_TYPE},
      {"fft_type", XRT__BCE_FFT_TYPE},
      {"precision_config", XRT__BCE_PRECISION},
      {"rng_algorithm", XRT__BCE_RNG_ALGORITHM},
      {"rng_distribution", XRT__BCE_RNG_DISTRIBUTION},
      {"transpose_a", XRT__BCE_TRANSPOSE},
      {"mode", XRT__BCE_ACCURACY_MODE}};
  for (size_t i = 0; i < XRT__ARRAY_SIZE(t); i++)
    if (!strcmp(t[i].name, name)) return t[i].e;
  return -1;
}

static int xrt__bw_enum_code(int e) {
  static const uint8_t code[] = {
      XRT__VA_COMPARISON_DIRECTION, XRT__VA_COMPARISON_TYPE, XRT__VA_API_VERSION,
      XRT__VA_FFT_TYPE, XRT__VA_PRECISION, XRT__VA_RNG_ALGORITHM,
      XRT__VA_RNG_DISTRIBUTION, XRT__VA_TRANSPOSE, XRT__VA_RESULT_ACCURACY_MODE};
  return code[e];
}

static uint32_t xrt__bw_a_enum(xrt__bw *w, int e, const char *s, size_t len,
                               const char *what) {
  size_t n;
  const char *const *names = xrt__vhlo_enum_names(e, &n);
  for (size_t i = 0; i < n; i++)
    if (strlen(names[i]) == len && !memcmp(names[i], s, len))
      return xrt__bw_a_varint(w, xrt__bw_enum_code(e), i);
  xrt__bw_fail(w, XRT_INVALID_ARGUMENT, "%s: unknown value %.*s", what, (int)len, s);
}

static uint32_t xrt__bw_a_f64(xrt__bw *w, double d) {
  uint32_t t = xrt__bw_simple_type(w, "f64");
  uint64_t bits;
  memcpy(&bits, &d, sizeof bits);
  size_t m = xrt__bw_begin(&w->attrs);
  xrt__bw_varint(w, &w->attrs.data, XRT__VA_FLOAT);
  xrt__bw_varint(w, &w->attrs.data, t);
  xrt__bw_apint(w, &w->attrs.data, bits, 64);
  return xrt__bw_end(w, &w->attrs, m, XRT__BW_VHLO);
}

static uint32_t xrt__bw_a_f32(xrt__bw *w, double d) {
  uint32_t t = xrt__bw_simple_type(w, "f32");
  float f = (float)d;
  uint32_t bits;
  memcpy(&bits, &f, sizeof bits);
  size_t m = xrt__bw_begin(&w->attrs);
  xrt__bw_varint(w, &w->attrs.data, XRT__VA_FLOAT);
  xrt__bw_varint(w, &w->attrs.data, t);
  xrt__bw_apint(w, &w->attrs.data, bits, 32);
  return xrt__bw_end(w, &w->attrs, m, XRT__BW_VHLO);
}

/* ResultAccuracyV1Attr: atol, rtol, ulps, mode. */
static uint32_t xrt__bw_a_accuracy(xrt__bw *w, double atol, double rtol,
                                   int64_t ulps, const char *mode, size_t ml) {
  uint32_t md = xrt__bw_a_enum(w, XRT__BCE_ACCURACY_MODE, mode, ml, "result_accuracy");
  uint64_t a, r;
  memcpy(&a, &atol, 8);
  memcpy(&r, &rtol, 8);
  xrt__bwbuf *b = &w->attrs.data;
  size_t m = xrt__bw_begin(&w->attrs);
  xrt__bw_varint(w, b, XRT__VA_RESULT_ACCURACY);
  xrt__bw_apint(w, b, a, 64);
  xrt__bw_apint(w, b, r, 64);
  xrt__bw_svarint(w, b, ulps);
  xrt__bw_varint(w, b, md);
  return xrt__bw_end(w, &w->attrs, m, XRT__BW_VHLO);
}

static const xrt_ir_attr *xrt__bw_field(const xrt_ir_attr *a, const char *name) {
  return xrt_ir_attr_field(a, name);
}

static int64_t xrt__bw_field_int(const xrt_ir_attr *a, const char *name, int64_t d) {
  const xrt_ir_attr *f = xrt__bw_field(a, name);
  return f && (f->kind == XRT_ATTR_INT || f->kind == XRT_ATTR_BOOL) ? f->i : d;
}

static uint32_t xrt__bw_generic(xrt__bw *w, const char *name, const xrt_ir_attr *a);

static uint32_t xrt__bw_a_result_accuracy(xrt__bw *w, const xrt_ir_attr *a) {
  const xrt_ir_attr *at = xrt__bw_field(a, "atol"), *rt = xrt__bw_field(a, "rtol");
  const xrt_ir_attr *mode = xrt__bw_field(a, "mode");
  const char *ms = "DEFAULT";
  if (mode && mode->kind == XRT_ATTR_DICT && mode->num_items == 1)
    ms = mode->items[0].name; /* #stablehlo.result_accuracy_mode<X> */
  else if (mode && mode->kind == XRT_ATTR_ENUM)
    ms = mode->s;
  return xrt__bw_a_accuracy(w, at ? (at->kind == XRT_ATTR_INT ? (double)at->i : at->f) : 0,
                            rt ? (rt->kind == XRT_ATTR_INT ? (double)rt->i : rt->f) : 0,
                            xrt__bw_field_int(a, "ulps", 0), ms, strlen(ms));
}

static uint32_t xrt__bw_a_alias(xrt__bw *w, const xrt_ir_attr *a) {
  const xrt_ir_attr *o = xrt__bw_field(a, "output_tuple_indices");
  const xrt_ir_attr *t = xrt__bw_field(a, "operand_tuple_indices");
  xrt__bwbuf *b = &w->attrs.data;
  size_t m = xrt__bw_begin(&w->attrs);
  xrt__bw_varint(w, b, XRT__VA_OUTPUT_OPERAND_ALIAS);
  int64_t no = o && o->kind == XRT_ATTR_INTS ? o->n : 0;
  xrt__bw_varint(w, b, (uint64_t)no);
  for (int64_t i = 0; i < no; i++) xrt__bw_svarint(w, b, o->ints[i]);
  xrt__bw_svarint(w, b, xrt__bw_field_int(a, "operand_index", 0));
  int64_t nt = t && t->kind == XRT_ATTR_INTS ? t->n : 0;
  xrt__bw_varint(w, b, (uint64_t)nt);
  for (int64_t i = 0; i < nt; i++) xrt__bw_svarint(w, b, t->ints[i]);
  return xrt__bw_end(w, &w->attrs, m, XRT__BW_VHLO);
}

/* A dictionary of VHLO attributes (string keys). */
static uint32_t xrt__bw_a_dict(xrt__bw *w, const xrt_ir_attr *a) {
  uint32_t *k = xrt__arena_alloc(&w->arena, (2 * (size_t)a->num_items + 1) * sizeof *k);
  if (!k) xrt__bw_oom(w);
  for (int32_t i = 0; i < a->num_items; i++) {
    const char *nm = a->items[i].name ? a->items[i].name : "";
    k[2 * i] = xrt__bw_a_string(w, nm, strlen(nm));
    k[2 * i + 1] = xrt__bw_generic(w, nm, &a->items[i]);
  }
  return xrt__bw_a_list(w, XRT__VA_DICT, k, 2 * (size_t)a->num_items);
}

/* Any attribute by its kind, the name saying what enumerations and
 * structures mean. */
static uint32_t xrt__bw_generic(xrt__bw *w, const char *name, const xrt_ir_attr *a) {
  int e;
  switch ((xrt_ir_attr_kind)a->kind) {
  case XRT_ATTR_INT: return xrt__bw_a_i64(w, a->i);
  case XRT_ATTR_FLOAT:
    return !strcmp(name, "epsilon") ? xrt__bw_a_f32(w, a->f) : xrt__bw_a_f64(w, a->f);
  case XRT_ATTR_BOOL: return xrt__bw_a_bool(w, a->i != 0);
  case XRT_ATTR_UNIT: return xrt__bw_a_bool(w, true);
  case XRT_ATTR_STRING: case XRT_ATTR_SYMBOL:
    return xrt__bw_a_string(w, a->s ? a->s : "", (size_t)a->n);
  case XRT_ATTR_ENUM:
    if ((e = xrt__bw_enum_of(name)) < 0)
      xrt__bw_fail(w, XRT_UNIMPLEMENTED, "attribute %s (%.*s) has no VHLO form",
                   name, (int)a->n, a->s);
    return xrt__bw_a_enum(w, e, a->s, (size_t)a->n, name);
  case XRT_ATTR_INTS:
    if (a->lit) return xrt__bw_a_literal(w, a->lit);
    if (!strcmp(name, "padding")) {
      int64_t dims[2] = {a->n / 2, 2};
      return xrt__bw_a_ints(w, a->ints, a->n, dims, 2, false);
    } else {
      uint32_t *k = xrt__arena_alloc(&w->arena, ((size_t)a->n + 1) * sizeof *k);
      if (!k) xrt__bw_oom(w);
      for (int64_t i = 0; i < a->n; i++) k[i] = xrt__bw_a_i64(w, a->ints[i]);
      return xrt__bw_a_list(w, XRT__VA_ARRAY, k, (size_t)a->n);
    }
  case XRT_ATTR_DENSE: return xrt__bw_a_literal(w, a->lit);
  case XRT_ATTR_TYPE: return xrt__bw_a_type(w, xrt__bw_type(w, a->type));
  case XRT_ATTR_LIST: {
    uint32_t *k = xrt__arena_alloc(&w->arena, ((size_t)a->num_items + 1) * sizeof *k);
    if (!k) xrt__bw_oom(w);
    for (int32_t i = 0; i < a->num_items; i++)
      k[i] = !strcmp(name, "output_operand_aliases") && a->items[i].kind == XRT_ATTR_DICT
                 ? xrt__bw_a_alias(w, &a->items[i])
                 : xrt__bw_generic(w, name, &a->items[i]);
    return xrt__bw_a_list(w, XRT__VA_ARRAY, k, (size_t)a->num_items);
  }
  case XRT_ATTR_DICT:
    if (!strcmp(name, "result_accuracy")) return xrt__bw_a_result_accuracy(w, a);
    return xrt__bw_a_dict(w, a);
  default: break;
  }
  xrt__bw_fail(w, XRT_UNIMPLEMENTED, "attribute %s has no VHLO form", name);
}

/* ---------------------------------------------------------------------
 * Op attributes: VHLO properties from StableHLO's attributes
 * ------------------------------------------------------------------- */

/* The op's attributes, each marked once written. */
typedef struct xrt__bwattrs {
  const xrt_ir_op *op;
  const char *shlo;
  bool used[256], grouped[256];
  uint64_t fields[256]; /* group dictionaries: fields written */
} xrt__bwattrs;

static const xrt_ir_attr *xrt__bw_take(xrt__bwattrs *s, const char *name) {
  for (int32_t i = 0; i < s->op->num_attrs && i < 256; i++)
    if (!strcmp(s->op->attrs[i].name, name)) {
      s->used[i] = true;
      return &s->op->attrs[i];
    }
  return NULL;
}

/* A field of group dictionary `group`, marked written. */
static const xrt_ir_attr *xrt__bw_take_field(xrt__bwattrs *s, const char *group,
                                             const char *field) {
  for (int32_t i = 0; i < s->op->num_attrs && i < 256; i++) {
    const xrt_ir_attr *a = &s->op->attrs[i];
    if (strcmp(a->name, group) || a->kind != XRT_ATTR_DICT) continue;
    s->used[i] = s->grouped[i] = true;
    for (int32_t k = 0; k < a->num_items; k++)
      if (a->items[k].name && !strcmp(a->items[k].name, field)) {
        if (k < 64) s->fields[i] |= (uint64_t)1 << k;
        return &a->items[k];
      }
    return NULL;
  }
  return NULL;
}

/* Which group dictionary holds a VHLO property, and the field's name. */
static const char *xrt__bw_group_of(int group, const char *prop, const char **field) {
  static const char *const dot_algo[] = {
      "lhs_precision_type", "rhs_precision_type", "accumulation_type",
      "lhs_component_count", "rhs_component_count", "num_primitive_operations",
      "allow_imprecise_accumulation"};
  *field = prop;
  switch (group) {
  case XRT__VG_CONV:
    for (int g = 0; g < 3; g++)
      for (int k = 0; k < 3; k++)
        if (!strcmp(prop, xrt__conv_dim_names[g][k])) return "dimension_numbers";
    return NULL;
  case XRT__VG_DOT:
    if (strstr(prop, "_batching_dimensions") || strstr(prop, "_contracting_dimensions"))
      return "dot_dimension_numbers";
    for (size_t i = 0; i < XRT__ARRAY_SIZE(dot_algo); i++)
      if (!strcmp(prop, dot_algo[i])) return "algorithm";
    return NULL;
  case XRT__VG_GATHER:
    if (!strcmp(prop, "indices_are_sorted") || !strcmp(prop, "slice_sizes")) return NULL;
    return "dimension_numbers";
  case XRT__VG_SCATTER:
    if (!strcmp(prop, "indices_are_sorted") || !strcmp(prop, "unique_indices"))
      return NULL;
    return "scatter_dimension_numbers";
  case XRT__VG_CHANNEL: case XRT__VG_CHANNEL2:
    if (!strcmp(prop, "channel_id")) { *field = "handle"; return "channel_handle"; }
    if (!strcmp(prop, "channel_type")) { *field = "type"; return "channel_handle"; }
    return NULL;
  default: return NULL;
  }
}

/* How many spatial or window dimensions the op has (for defaults). */
static int64_t xrt__bw_window_rank(xrt__bwattrs *s) {
  const xrt_ir_attr *d = xrt_ir_op_attr(s->op, "dimension_numbers");
  const xrt_ir_attr *sp = xrt__bw_field(d, "input_spatial_dimensions");
  if (sp && sp->kind == XRT_ATTR_INTS) return sp->n;
  const xrt_ir_attr *wd = xrt_ir_op_attr(s->op, "window_dimensions");
  return wd && wd->kind == XRT_ATTR_INTS ? wd->n : 0;
}

/* The value StableHLO means when it leaves a property out (what its
 * serializer writes then). */
static uint32_t xrt__bw_default_or(xrt__bw *w, xrt__bwattrs *s, const char *prop,
                                   bool *ok) {
  const xrt__vrule *r = xrt__vhlo_rule(s->shlo, prop);
  *ok = true;
  int drop = r ? r->drop : XRT__VD_NEVER;
  uint32_t k[2];
  switch (drop) {
  case XRT__VD_FALSE: return xrt__bw_a_bool(w, false);
  case XRT__VD_ZERO: return xrt__bw_a_i64(w, 0);
  case XRT__VD_MINUS1: return xrt__bw_a_i64(w, -1);
  case XRT__VD_ENUM0: return xrt__bw_a_varint(w, xrt__bw_enum_code(xrt__bw_enum_of(prop)), 0);
  case XRT__VD_API1: return xrt__bw_a_varint(w, XRT__VA_API_VERSION, 1);
  case XRT__VD_DEFAULTS:
    k[0] = k[1] = xrt__bw_a_varint(w, XRT__VA_PRECISION, 0);
    return xrt__bw_a_list(w, XRT__VA_ARRAY, k, 2);
  case XRT__VD_ONES: return xrt__bw_a_filled(w, 1, xrt__bw_window_rank(s), 0, false);
  case XRT__VD_ZEROS:
    return xrt__bw_a_filled(w, 0, xrt__bw_window_rank(s), !strcmp(prop, "padding"),
                            r->rule == XRT__VR_BOOLS);
  case XRT__VD_ACCURACY: return xrt__bw_a_accuracy(w, 0, 0, 0, "DEFAULT", 7);
  case XRT__VD_EMPTY:
    if (r->rule == XRT__VR_ARRAY || r->empty == 't') {
      int64_t dims[2] = {0, 2};
      return xrt__bw_a_ints(w, NULL, 0, dims, strcmp(prop, "source_target_pairs") ? 1 : 2,
                            false);
    }
    if (r->empty == 's') return xrt__bw_a_string(w, "", 0);
    return xrt__bw_a_list(w, r->empty == 'd' ? XRT__VA_DICT : XRT__VA_ARRAY, k, 0);
  default: break;
  }
  *ok = false;
  return UINT32_MAX;
}

static uint32_t xrt__bw_default(xrt__bw *w, xrt__bwattrs *s, const char *prop) {
  bool ok;
  uint32_t v = xrt__bw_default_or(w, s, prop, &ok);
  if (!ok) xrt__bw_fail(w, XRT_INVALID_ARGUMENT, "%s lacks its attribute %s", s->shlo, prop);
  return v;
}

/* A group field that is absent: empty lists, zero numbers, no algorithm. */
static uint32_t xrt__bw_group_default(xrt__bw *w, const char *group,
                                      const char *field) {
  if (!strcmp(group, "algorithm")) return xrt__bw_a_type(w, w->t_none);
  if (strstr(field, "dimensions") || strstr(field, "_dims") || strstr(field, "_map"))
    return xrt__bw_a_ints(w, NULL, 0, NULL, 1, false);
  return xrt__bw_a_i64(w, 0);
}

/* One VHLO property of op. */
static uint32_t xrt__bw_prop(xrt__bw *w, xrt__bwattrs *s, const xrt__vop *d,
                             const char *prop) {
  const char *field, *group = xrt__bw_group_of(d->group, prop, &field);
  if (group) {
    const xrt_ir_attr *f = xrt__bw_take_field(s, group, field);
    if (!f) return xrt__bw_group_default(w, group, field);
    if (f->kind == XRT_ATTR_INTS && !f->lit)
      return xrt__bw_a_ints(w, f->ints, f->n, NULL, 1, false);
    if (f->kind == XRT_ATTR_ENUM && !strcmp(group, "algorithm")) { /* tf32 */
      char ty[32];
      snprintf(ty, sizeof ty, "%.*s", (int)f->n, f->s);
      return xrt__bw_a_type(w, xrt__bw_simple_type(w, ty));
    }
    return xrt__bw_generic(w, prop, f);
  }
  const xrt_ir_attr *a = xrt__bw_take(s, prop);
  if (!a) return xrt__bw_default(w, s, prop);
  const xrt__vrule *r = xrt__vhlo_rule(s->shlo, prop);
  switch (r ? r->rule : XRT__VR_KEEP) {
  case XRT__VR_ARRAY: case XRT__VR_BOOLS:
    if (a->kind != XRT_ATTR_INTS) break;
    if (a->lit && r->rule == XRT__VR_ARRAY) return xrt__bw_a_literal(w, a->lit);
    return xrt__bw_a_ints(w, a->ints, a->n, NULL, 1, r->rule == XRT__VR_BOOLS);
  case XRT__VR_UNIT:
    if (a->kind == XRT_ATTR_UNIT) return xrt__bw_a_bool(w, true);
    break;
  case XRT__VR_API:
    if (a->kind == XRT_ATTR_INT) return xrt__bw_a_varint(w, XRT__VA_API_VERSION, (uint64_t)a->i);
    break;
  case XRT__VR_SYMBOLS:
    if (a->kind == XRT_ATTR_INTS && a->n == 0) return xrt__bw_a_list(w, XRT__VA_ARRAY, NULL, 0);
    break;
  default: break;
  }
  if (a->kind == XRT_ATTR_INTS && !a->lit && r && r->drop == XRT__VD_EMPTY && !a->n)
    return xrt__bw_default(w, s, prop); /* `[]`: the empty value of its kind */
  return xrt__bw_generic(w, prop, a);
}

/* The VHLO op version of a StableHLO op at the target: the newest the
 * target has. */
static const xrt__vop *xrt__bw_vop(xrt__bw *w, const xrt_ir_op *op) {
  bool cached = op->code > XRT_OP_INVALID && op->code < XRT_OP_COUNT;
  if (cached && w->opdone[op->code]) return w->opcache[op->code];
  const char *extra = xrt__extra_op_name(op->code); /* einsum, ... */
  const char *name = op->code == XRT_OP_FUNC_RETURN ? "stablehlo.return"
                     : extra                        ? extra
                                                    : xrt_opcode_name(op->code);
  size_t n;
  const xrt__vop *t = xrt__vhlo_ops_table(&n), *best = NULL, *any = NULL;
  for (size_t i = 0; i < n; i++) {
    if (strcmp(t[i].shlo, name) || t[i].group == XRT__VG_OPAQUE) continue;
    if (!any) any = &t[i]; /* the first version */
    if (xrt__bw_has(w, t[i].since)) best = &t[i]; /* versions ascend */
  }
  if (!best && any)
    xrt__bw_fail(w, XRT_UNIMPLEMENTED, "op %s is not in StableHLO %s (it appeared "
                 "in %s)", op->name, w->ver_s, any->since);
  if (!best)
    xrt__bw_fail(w, XRT_UNIMPLEMENTED, "op %s has no portable (VHLO) form", op->name);
  if (cached) {
    w->opcache[op->code] = best;
    w->opdone[op->code] = 1;
  }
  return best;
}

/* Whether a newer VHLO version of the op has a property of this name. */
static const char *xrt__bw_newer_prop(const char *shlo, const char *name) {
  size_t n, len = strlen(name);
  const xrt__vop *t = xrt__vhlo_ops_table(&n);
  for (size_t i = 0; i < n; i++) {
    if (strcmp(t[i].shlo, shlo) || !t[i].props) continue;
    for (const char *p = t[i].props; (p = strstr(p, name)); p += len)
      if ((p == t[i].props || p[-1] == ' ') && (p[len] == ' ' || !p[len]))
        return t[i].since;
  }
  return NULL;
}

/* Attributes the chosen version has no place for: those of newer
 * versions are refused unless they hold StableHLO's default; others
 * (discardable ones: mhlo.sharding, ...) go to the op's dictionary. */
static size_t xrt__bw_leftovers(xrt__bw *w, xrt__bwattrs *s, const char **names,
                                uint32_t *vals) {
  size_t n = 0;
  for (int32_t i = 0; i < s->op->num_attrs && i < 256; i++) {
    const xrt_ir_attr *a = &s->op->attrs[i];
    if (s->used[i]) {
      for (int32_t k = 0; s->grouped[i] && k < a->num_items && k < 64; k++)
        if (!(s->fields[i] >> k & 1) && !(a->items[k].kind == XRT_ATTR_INTS &&
                                          a->items[k].n == 0) &&
            strcmp(a->name, "channel_handle")) /* untyped: StableHLO drops the type */
          xrt__bw_fail(w, XRT_UNIMPLEMENTED, "attribute %s.%s of %s is not in "
                       "StableHLO %s", a->name, a->items[k].name ? a->items[k].name : "",
                       s->shlo, w->ver_s);
      continue;
    }
    const char *since = xrt__bw_newer_prop(s->shlo, a->name);
    if (!since && !strcmp(a->name, "algorithm")) since = "1.6.0";
    if (since) {
      bool ok = false;
      uint32_t v = xrt__bw_generic(w, a->name, a), dv = UINT32_MAX;
      if (strcmp(a->name, "algorithm")) dv = xrt__bw_default_or(w, s, a->name, &ok);
      if (ok && v == dv) continue;
      xrt__bw_fail(w, XRT_UNIMPLEMENTED, "attribute %s of %s is not in StableHLO "
                   "%s (it appeared in %s)", a->name, s->shlo, w->ver_s, since);
    }
    names[n] = a->name;
    vals[n++] = xrt__bw_generic(w, a->name, a);
  }
  return n;
}

/* ---------------------------------------------------------------------
 * Builtin attributes: strings, locations, dictionaries, integers
 * ------------------------------------------------------------------- */

static uint32_t xrt__bw_b_string(xrt__bw *w, const char *s, size_t n) {
  uint32_t k = xrt__bw_string(w, s, n);
  size_t m = xrt__bw_begin(&w->attrs);
  xrt__bw_varint(w, &w->attrs.data, XRT__BA_STRING);
  xrt__bw_varint(w, &w->attrs.data, k);
  return xrt__bw_end(w, &w->attrs, m, XRT__BW_BUILTIN);
}

static uint32_t xrt__bw_loc(xrt__bw *w, const xrt_ir_loc *l) {
  if (!l || !l->file || l->line <= 0) {
    size_t m = xrt__bw_begin(&w->attrs);
    xrt__bw_varint(w, &w->attrs.data, XRT__BA_UNKNOWN_LOC);
    return xrt__bw_end(w, &w->attrs, m, XRT__BW_BUILTIN);
  }
  uint32_t f = xrt__bw_b_string(w, l->file, strlen(l->file));
  size_t m = xrt__bw_begin(&w->attrs);
  xrt__bw_varint(w, &w->attrs.data, XRT__BA_FILE_LOC);
  xrt__bw_varint(w, &w->attrs.data, f);
  xrt__bw_varint(w, &w->attrs.data, (uint64_t)l->line);
  xrt__bw_varint(w, &w->attrs.data, (uint64_t)(l->col > 0 ? l->col : 0));
  return xrt__bw_end(w, &w->attrs, m, XRT__BW_BUILTIN);
}

/* An op's attribute dictionary: builtin string names (sorted, as MLIR's
 * DictionaryAttr keeps them) and values. */
static uint32_t xrt__bw_b_dict(xrt__bw *w, const char **names, const uint32_t *vals,
                               size_t n) {
  size_t *ord = xrt__arena_alloc(&w->arena, (n + 1) * sizeof *ord);
  uint32_t *keys = xrt__arena_alloc(&w->arena, (n + 1) * sizeof *keys);
  if (!ord || !keys) xrt__bw_oom(w);
  for (size_t i = 0; i < n; i++) {
    size_t j = i;
    for (; j > 0 && strcmp(names[ord[j - 1]], names[i]) > 0; j--) ord[j] = ord[j - 1];
    ord[j] = i;
  }
  for (size_t i = 0; i < n; i++)
    keys[i] = xrt__bw_b_string(w, names[ord[i]], strlen(names[ord[i]]));
  size_t m = xrt__bw_begin(&w->attrs);
  xrt__bw_varint(w, &w->attrs.data, XRT__BA_DICT);
  xrt__bw_varint(w, &w->attrs.data, n);
  for (size_t i = 0; i < n; i++) {
    xrt__bw_varint(w, &w->attrs.data, keys[i]);
    xrt__bw_varint(w, &w->attrs.data, vals[ord[i]]);
  }
  return xrt__bw_end(w, &w->attrs, m, XRT__BW_BUILTIN);
}

static uint32_t xrt__bw_b_i32(xrt__bw *w, int64_t v) {
  size_t m = xrt__bw_begin(&w->types);
  xrt__bw_varint(w, &w->types.data, XRT__BT_INTEGER);
  xrt__bw_varint(w, &w->types.data, 32 << 2);
  uint32_t t = xrt__bw_end(w, &w->types, m, XRT__BW_BUILTIN);
  m = xrt__bw_begin(&w->attrs);
  xrt__bw_varint(w, &w->attrs.data, XRT__BA_INTEGER);
  xrt__bw_varint(w, &w->attrs.data, t);
  xrt__bw_apint(w, &w->attrs.data, (uint64_t)v, 32);
  return xrt__bw_end(w, &w->attrs, m, XRT__BW_BUILTIN);
}

/* ---------------------------------------------------------------------
 * Ops, regions, the module
 * ------------------------------------------------------------------- */

static uint32_t xrt__bw_opname(xrt__bw *w, uint8_t dialect, const char *name) {
  size_t mark = w->opnames.data.n;
  xrt__bw_bytes(w, &w->opnames.data, name, strlen(name));
  return xrt__bw_intern(w, &w->opnames, mark, dialect);
}

/* Properties: a blob of attribute references (VHLO: required ones in
 * order; builtin ops: (index << 1) | present, optional ones). */
static uint32_t xrt__bw_props(xrt__bw *w, const uint32_t *v, size_t n, bool optional) {
  xrt__bwbuf *b = &w->props.data;
  size_t m = b->n;
  for (size_t i = 0; i < n; i++) {
    uint64_t x = optional ? (v[i] == UINT32_MAX ? 0 : ((uint64_t)v[i] << 1) | 1) : v[i];
    xrt__bw_varint(w, b, x);
  }
  return xrt__bw_intern(w, &w->props, m, 0);
}

static void xrt__bw_region(xrt__bw *w, xrt__bwbuf *out, const xrt_ir_region *r,
                           bool isolated);

/* The op's inherent attributes as VHLO properties (or, before format 5,
 * all of its attributes in its dictionary). */
static void xrt__bw_op_attrs(xrt__bw *w, const xrt_ir_op *op, const xrt__vop *d,
                             uint8_t *mask, uint32_t *dict, uint32_t *props) {
  xrt__bwattrs *s = xrt__arena_alloc(&w->arena, sizeof *s);
  if (!s) xrt__bw_oom(w);
  memset(s, 0, sizeof *s);
  s->op = op;
  s->shlo = xrt_opcode_name(op->code);
  if (op->num_attrs > 256)
    xrt__bw_fail(w, XRT_UNIMPLEMENTED, "%s has more than 256 attributes", op->name);
  size_t np = 0, cap = (size_t)op->num_attrs + 32;
  const char **names = xrt__arena_alloc(&w->arena, cap * sizeof *names);
  uint32_t *vals = xrt__arena_alloc(&w->arena, cap * sizeof *vals);
  if (!names || !vals) xrt__bw_oom(w);
  for (const char *p = d->props; p && *p;) {
    while (*p == ' ') p++;
    size_t len = strcspn(p, " ");
    if (!len) break;
    char *nm = xrt__arena_alloc(&w->arena, len + 1);
    if (!nm) xrt__bw_oom(w);
    memcpy(nm, p, len);
    nm[len] = 0;
    p += len;
    vals[np] = xrt__bw_prop(w, s, d, nm);
    names[np++] = nm;
  }
  size_t nl = xrt__bw_leftovers(w, s, names + np, vals + np);
  if (w->format >= 5) {
    if (np) {
      *props = xrt__bw_props(w, vals, np, false);
      *mask |= XRT__BW_OPM_PROPS;
    }
    if (nl) {
      *dict = xrt__bw_b_dict(w, names + np, vals + np, nl);
      *mask |= XRT__BW_OPM_ATTRS;
    }
  } else if (np + nl) {
    *dict = xrt__bw_b_dict(w, names, vals, np + nl);
    *mask |= XRT__BW_OPM_ATTRS;
  }
}

/* Op: name, mask, location, [attributes], [properties], [result types],
 * [operands], [regions]. */
static void xrt__bw_op(xrt__bw *w, xrt__bwbuf *out, const xrt_ir_op *op) {
  const xrt__vop *d = xrt__bw_vop(w, op);
  uint32_t name = xrt__bw_opname(w, XRT__BW_VHLO, d->vhlo);
  uint32_t loc = xrt__bw_loc(w, &op->loc), dict = 0, props = 0;
  uint8_t mask = 0;
  xrt__bw_op_attrs(w, op, d, &mask, &dict, &props);
  uint32_t *rt = xrt__arena_alloc(&w->arena, ((size_t)op->num_results + 1) * sizeof *rt);
  if (!rt) xrt__bw_oom(w);
  for (int32_t i = 0; i < op->num_results; i++)
    rt[i] = xrt__bw_type(w, &w->fn->value_types[op->results[i]]);
  if (op->num_results) mask |= XRT__BW_OPM_RESULTS;
  if (op->num_operands) mask |= XRT__BW_OPM_OPERANDS;
  if (op->num_regions) mask |= XRT__BW_OPM_REGIONS;
  xrt__bw_varint(w, out, name);
  xrt__bw_byte(w, out, mask);
  xrt__bw_varint(w, out, loc);
  if (mask & XRT__BW_OPM_ATTRS) xrt__bw_varint(w, out, dict);
  if (mask & XRT__BW_OPM_PROPS) xrt__bw_varint(w, out, props);
  if (op->num_results) {
    xrt__bw_varint(w, out, (uint64_t)op->num_results);
    for (int32_t i = 0; i < op->num_results; i++) xrt__bw_varint(w, out, rt[i]);
  }
  if (op->num_operands) {
    xrt__bw_varint(w, out, (uint64_t)op->num_operands);
    for (int32_t i = 0; i < op->num_operands; i++) {
      int32_t v = op->operands[i];
      if (v < 0 || v >= w->fn->num_values || w->vmap[v] < 0)
        xrt__bw_fail(w, XRT_INVALID_ARGUMENT, "%s uses value %d before its "
                     "definition", op->name, (int)v);
      xrt__bw_varint(w, out, (uint64_t)w->vmap[v]);
    }
  }
  if (op->num_regions) { /* VHLO ops' regions see the values around them */
    xrt__bw_varint(w, out, (uint64_t)op->num_regions << 1);
    for (int32_t i = 0; i < op->num_regions; i++)
      xrt__bw_region(w, out, &op->regions[i], false);
  }
}

/* Block arguments: count, then per argument its type (with a location
 * flag from format 4, else type and location). */
static void xrt__bw_block_args(xrt__bw *w, xrt__bwbuf *out, const xrt_ir_region *r) {
  uint32_t unknown = xrt__bw_loc(w, NULL);
  xrt__bw_varint(w, out, (uint64_t)r->num_args);
  for (int32_t i = 0; i < r->num_args; i++) {
    uint32_t t = xrt__bw_type(w, &w->fn->value_types[r->args[i]]);
    if (w->format >= 4) {
      xrt__bw_varint(w, out, (uint64_t)t << 1);
    } else {
      xrt__bw_varint(w, out, t);
      xrt__bw_varint(w, out, unknown);
    }
  }
  if (w->format >= 3) xrt__bw_byte(w, out, 0); /* no use-list orders */
}

/* A region of one block: its values are numbered after those of the
 * regions around it (within the isolated scope) before its ops are
 * written, so that every operand has its index. */
static void xrt__bw_region(xrt__bw *w, xrt__bwbuf *out, const xrt_ir_region *r,
                           bool isolated) {
  if (!r->num_ops && !r->num_args) {
    xrt__bw_varint(w, out, 0);
    return;
  }
  uint32_t save = w->top;
  if (isolated) w->top = 0;
  uint64_t nv = (uint64_t)r->num_args;
  for (int32_t i = 0; i < r->num_ops; i++) nv += (uint64_t)r->ops[i].num_results;
  uint32_t next = w->top;
  for (int32_t i = 0; i < r->num_args; i++) w->vmap[r->args[i]] = (int32_t)next++;
  for (int32_t i = 0; i < r->num_ops; i++)
    for (int32_t k = 0; k < r->ops[i].num_results; k++)
      w->vmap[r->ops[i].results[k]] = (int32_t)next++;
  w->top = next;
  xrt__bw_varint(w, out, 1);
  xrt__bw_varint(w, out, nv);
  xrt__bw_varint(w, out, ((uint64_t)r->num_ops << 1) | (r->num_args ? 1 : 0));
  if (r->num_args) xrt__bw_block_args(w, out, r);
  for (int32_t i = 0; i < r->num_ops; i++) xrt__bw_op(w, out, &r->ops[i]);
  w->top = save; /* the region's values go out of scope */
}

/* An isolated op's regions: in their own IR section from format 2. */
static void xrt__bw_isolated(xrt__bw *w, xrt__bwbuf *out, const xrt__bwbuf *body) {
  if (w->format >= 2) {
    xrt__bw_byte(w, out, XRT__BW_SEC_IR);
    xrt__bw_varint(w, out, body->n);
  }
  xrt__bw_bytes(w, out, body->d, body->n);
}

static void xrt__bw_func(xrt__bw *w, xrt__bwbuf *out, const xrt_ir_func *f) {
  w->fn = f;
  xrt__free(&w->al, w->vmap);
  w->vmap = xrt__calloc(&w->al, (size_t)f->num_values + 1, sizeof *w->vmap);
  if (!w->vmap) xrt__bw_oom(w);
  for (int32_t i = 0; i < f->num_values; i++) w->vmap[i] = -1;
  uint32_t v[5];
  /* arg_attrs function_type res_attrs sym_name sym_visibility */
  v[0] = v[2] = xrt__bw_a_list(w, XRT__VA_ARRAY, NULL, 0);
  v[1] = xrt__bw_a_type(w, xrt__bw_func_type(w, f));
  v[3] = xrt__bw_a_string(w, f->name, strlen(f->name));
  v[4] = f->is_public ? xrt__bw_a_string(w, "", 0) : xrt__bw_a_string(w, "private", 7);
  uint32_t name = xrt__bw_opname(w, XRT__BW_VHLO, "func_v1");
  uint32_t loc = xrt__bw_loc(w, &f->loc), at = 0;
  uint8_t mask = XRT__BW_OPM_REGIONS;
  if (w->format >= 5) {
    at = xrt__bw_props(w, v, 5, false);
    mask |= XRT__BW_OPM_PROPS;
  } else {
    static const char *const nm[] = {"arg_attrs", "function_type", "res_attrs",
                                     "sym_name", "sym_visibility"};
    at = xrt__bw_b_dict(w, (const char **)nm, v, 5);
    mask |= XRT__BW_OPM_ATTRS;
  }
  xrt__bwbuf *body = &w->body[1];
  body->n = 0;
  xrt__bw_region(w, body, &f->body, true);
  xrt__bw_varint(w, out, name);
  xrt__bw_byte(w, out, mask);
  xrt__bw_varint(w, out, loc);
  xrt__bw_varint(w, out, at);
  xrt__bw_varint(w, out, (1 << 1) | 1);
  xrt__bw_isolated(w, out, body);
}

/* The module: builtin.module with its name, replica and partition counts
 * and one region of functions. */
static void xrt__bw_module(xrt__bw *w, xrt__bwbuf *ir, const xrt_ir_module *m) {
  uint32_t name = xrt__bw_opname(w, XRT__BW_BUILTIN, "module");
  xrt_ir_loc none = {NULL, 0, 0};
  uint32_t loc = xrt__bw_loc(w, &none);
  const char *an[3];
  uint32_t av[3];
  size_t na = 0;
  bool named = m->name && m->name[0];
  uint32_t sym = named ? xrt__bw_b_string(w, m->name, strlen(m->name)) : UINT32_MAX;
  if (m->num_partitions > 1)
    an[na] = "mhlo.num_partitions", av[na++] = xrt__bw_b_i32(w, m->num_partitions);
  if (m->num_replicas > 1)
    an[na] = "mhlo.num_replicas", av[na++] = xrt__bw_b_i32(w, m->num_replicas);
  uint8_t mask = XRT__BW_OPM_REGIONS;
  uint32_t props = 0, dict = 0;
  if (w->format >= 5) {
    uint32_t pv[2] = {sym, UINT32_MAX}; /* sym_name, sym_visibility */
    props = xrt__bw_props(w, pv, 2, true);
    mask |= XRT__BW_OPM_PROPS;
  } else if (named) {
    an[na] = "sym_name", av[na++] = sym;
  }
  if (na) {
    dict = xrt__bw_b_dict(w, an, av, na);
    mask |= XRT__BW_OPM_ATTRS;
  }
  xrt__bwbuf *body = &w->body[0];
  xrt__bw_varint(w, body, 1); /* one block */
  xrt__bw_varint(w, body, 0); /* no values */
  xrt__bw_varint(w, body, (uint64_t)m->num_funcs << 1);
  for (int32_t i = 0; i < m->num_funcs; i++) xrt__bw_func(w, body, &m->funcs[i]);
  xrt__bw_varint(w, ir, 1 << 1); /* the top level: one op */
  xrt__bw_varint(w, ir, name);
  xrt__bw_byte(w, ir, mask);
  xrt__bw_varint(w, ir, loc);
  if (mask & XRT__BW_OPM_ATTRS) xrt__bw_varint(w, ir, dict);
  if (mask & XRT__BW_OPM_PROPS) xrt__bw_varint(w, ir, props);
  xrt__bw_varint(w, ir, (1 << 1) | 1);
  xrt__bw_isolated(w, ir, body);
}

/* ---------------------------------------------------------------------
 * Sections and the artifact
 * ------------------------------------------------------------------- */

static void xrt__bw_section(xrt__bw *w, xrt__bwbuf *out, int id, const xrt__bwbuf *b) {
  xrt__bw_byte(w, out, (uint8_t)id);
  xrt__bw_varint(w, out, b->n);
  xrt__bw_bytes(w, out, b->d, b->n);
}

/* Dialects, then op names grouped by dialect. */
static void xrt__bw_dialects(xrt__bw *w, xrt__bwbuf *b) {
  static const char *const names[] = {"builtin", "vhlo"};
  uint32_t k[2];
  for (int i = 0; i < 2; i++) k[i] = xrt__bw_string(w, names[i], strlen(names[i]));
  uint32_t *on = xrt__arena_alloc(&w->arena, (w->opnames.n + 1) * sizeof *on);
  if (!on) xrt__bw_oom(w);
  for (size_t i = 0; i < w->opnames.n; i++) {
    const xrt__bwent *e = &w->opnames.e[i];
    on[i] = xrt__bw_string(w, (const char *)w->opnames.data.d + e->off, e->len);
  }
  xrt__bw_varint(w, b, 2);
  for (int i = 0; i < 2; i++) xrt__bw_varint(w, b, w->format >= 1 ? k[i] << 1 : k[i]);
  if (w->format >= 4) xrt__bw_varint(w, b, w->opnames.n);
  for (uint8_t d = 0; d < 2; d++) {
    size_t n = 0;
    for (size_t i = 0; i < w->opnames.n; i++) n += w->opnames.e[i].dialect == d;
    if (!n) continue;
    xrt__bw_varint(w, b, d);
    xrt__bw_varint(w, b, n);
    for (size_t i = 0; i < w->opnames.n; i++)
      if (w->opnames.e[i].dialect == d)
        xrt__bw_varint(w, b, w->format >= 5 ? ((uint64_t)on[i] << 1) | 1 : on[i]);
  }
}

/* Op names are numbered by dialect group in the dialect section: the IR
 * refers to them by that order. */
static void xrt__bw_opname_order(xrt__bw *w, uint32_t *order) {
  uint32_t k = 0;
  for (uint8_t d = 0; d < 2; d++)
    for (size_t i = 0; i < w->opnames.n; i++)
      if (w->opnames.e[i].dialect == d) order[i] = k++;
}

/* Entries in runs of one dialect: dialect, count, (size << 1 | custom). */
static void xrt__bw_offsets(xrt__bw *w, xrt__bwbuf *b, const xrt__bwtab *t) {
  for (size_t i = 0; i < t->n;) {
    size_t j = i;
    while (j < t->n && t->e[j].dialect == t->e[i].dialect) j++;
    xrt__bw_varint(w, b, t->e[i].dialect);
    xrt__bw_varint(w, b, j - i);
    for (size_t k = i; k < j; k++) xrt__bw_varint(w, b, ((uint64_t)t->e[k].len << 1) | 1);
    i = j;
  }
}

static void xrt__bw_strings(xrt__bw *w, xrt__bwbuf *b) {
  xrt__bw_varint(w, b, w->strs.n);
  for (size_t i = w->strs.n; i-- > 0;) xrt__bw_varint(w, b, w->strs.e[i].len + 1);
  for (size_t i = 0; i < w->strs.n; i++) {
    xrt__bw_bytes(w, b, w->strs.data.d + w->strs.e[i].off, w->strs.e[i].len);
    xrt__bw_byte(w, b, 0);
  }
}

static void xrt__bw_properties(xrt__bw *w, xrt__bwbuf *b) {
  xrt__bw_varint(w, b, w->props.n);
  for (size_t i = 0; i < w->props.n; i++) {
    xrt__bw_varint(w, b, w->props.e[i].len);
    xrt__bw_bytes(w, b, w->props.data.d + w->props.e[i].off, w->props.e[i].len);
  }
}

/* The artifact: header, then the sections in the order MLIR writes them.
 * The IR refers to op names by interning order, which is the dialect
 * section's (builtin.module first, VHLO ops after). */
static void xrt__bw_write(xrt__bw *w, const xrt_ir_module *m, xrt__bwbuf *out) {
  w->t_i64 = xrt__bw_simple_type(w, "i64");
  w->t_none = xrt__bw_simple_type(w, "none");
  /* builtin.module first and vhlo names after: interning order is then
   * the dialect section's order */
  xrt__bw_opname(w, XRT__BW_BUILTIN, "module");
  xrt__bwbuf *ir = &w->ir, *sec = &w->sec;
  xrt__bw_module(w, ir, m);
  uint32_t *order = xrt__arena_alloc(&w->arena, (w->opnames.n + 1) * sizeof *order);
  if (!order) xrt__bw_oom(w);
  xrt__bw_opname_order(w, order);
  for (size_t i = 0; i < w->opnames.n; i++)
    if (order[i] != i)
      xrt__bw_fail(w, XRT_INTERNAL, "op names out of order");
  char producer[48];
  snprintf(producer, sizeof producer, "StableHLO_v%s", w->ver_s);
  xrt__bw_bytes(w, out, "ML\xefR", 4);
  xrt__bw_varint(w, out, (uint64_t)w->format);
  xrt__bw_bytes(w, out, producer, strlen(producer) + 1);
  xrt__bw_dialects(w, sec);
  xrt__bw_section(w, out, XRT__BW_SEC_DIALECT, sec);
  sec->n = 0;
  xrt__bw_varint(w, sec, w->attrs.n);
  xrt__bw_varint(w, sec, w->types.n);
  xrt__bw_offsets(w, sec, &w->attrs);
  xrt__bw_offsets(w, sec, &w->types);
  xrt__bw_section(w, out, XRT__BW_SEC_ATTRTYPE_OFF, sec);
  xrt__bw_byte(w, out, XRT__BW_SEC_ATTRTYPE);
  xrt__bw_varint(w, out, w->attrs.data.n + w->types.data.n);
  xrt__bw_bytes(w, out, w->attrs.data.d, w->attrs.data.n);
  xrt__bw_bytes(w, out, w->types.data.d, w->types.data.n);
  xrt__bw_section(w, out, XRT__BW_SEC_IR, ir);
  if (w->format >= 6) { /* empty resource sections, as MLIR writes them */
    sec->n = 0;
    xrt__bw_varint(w, sec, 0);
    xrt__bw_section(w, out, XRT__BW_SEC_RESOURCE_OFF, sec);
    sec->n = 0;
    xrt__bw_section(w, out, XRT__BW_SEC_RESOURCE, sec);
  }
  sec->n = 0;
  xrt__bw_strings(w, sec);
  xrt__bw_section(w, out, XRT__BW_SEC_STRING, sec);
  if (w->format >= 5) {
    sec->n = 0;
    xrt__bw_properties(w, sec);
    xrt__bw_section(w, out, XRT__BW_SEC_PROPERTIES, sec);
  }
}

static xrt_status xrt__bw_target(xrt__bw *w, const char *target) {
  int max[3];
  xrt__version_parse(xrt__vhlo_version(), max);
  if (!target || !*target || !strcmp(target, "current")) target = xrt__vhlo_version();
  if (!xrt__version_parse(target, w->ver))
    return xrt__fail(XRT_INVALID_ARGUMENT, "serializing: target version '%.40s' "
                     "is not MAJOR.MINOR.PATCH", target);
  static const int min[3] = {0, 9, 0};
  if (xrt__bw_cmp(w->ver, min) < 0 || xrt__bw_cmp(w->ver, max) > 0)
    return xrt__fail(XRT_UNIMPLEMENTED, "serializing: target StableHLO %s is "
                     "outside the versions xrt writes (0.9.0 to %s)", target,
                     xrt__vhlo_version());
  snprintf(w->ver_s, sizeof w->ver_s, "%d.%d.%d", w->ver[0], w->ver[1], w->ver[2]);
  w->format = xrt__bw_format(w->ver);
  return XRT_OK;
}

static xrt_status xrt__bytecode_write(const xrt_ir_module *m, const char *target,
                                            char **out_data, size_t *out_size) {
  xrt__bw *w = calloc(1, sizeof *w);
  if (!w) return xrt__nomem("the artifact writer");
  w->al = xrt_allocator_system();
  xrt__arena_init(&w->arena, w->al);
  w->opcache = calloc(XRT_OP_COUNT, sizeof *w->opcache);
  w->opdone = calloc(XRT_OP_COUNT, 1);
  xrt_status s = w->opcache && w->opdone ? xrt__bw_target(w, target)
                                          : xrt__nomem("the artifact writer");
  if (!s && setjmp(w->jb) == 0) {
    xrt__bw_write(w, m, &w->out);
  } else if (!s) {
    s = w->status;
  }
  if (!s) {
    *out_data = malloc(w->out.n ? w->out.n : 1);
    if (!*out_data) s = xrt__nomem("the portable artifact");
    else memcpy(*out_data, w->out.d, w->out.n), *out_size = w->out.n;
  }
  xrt__free(&w->al, w->out.d);
  xrt__free(&w->al, w->ir.d);
  xrt__free(&w->al, w->body[0].d);
  xrt__free(&w->al, w->body[1].d);
  xrt__free(&w->al, w->sec.d);
  xrt__bw_tab_free(w, &w->strs);
  xrt__bw_tab_free(w, &w->attrs);
  xrt__bw_tab_free(w, &w->types);
  xrt__bw_tab_free(w, &w->props);
  xrt__bw_tab_free(w, &w->opnames);
  xrt__free(&w->al, w->vmap);
  xrt__arena_release(&w->arena);
  free(w->opcache);
  free(w->opdone);
  free(w);
  return s;
}

XRT_API xrt_status xrt_program_serialize(const xrt_program *program,
                                         const char *target_version,
                                         char **out_data, size_t *out_size) {
  if (!out_data || !out_size)
    return xrt__fail(XRT_INVALID_ARGUMENT, "xrt_program_serialize: NULL output");
  *out_data = NULL;
  *out_size = 0;
  const xrt_ir_module *m = program ? xrt_program_module(program) : NULL;
  if (!m) return xrt__fail(XRT_INVALID_ARGUMENT, "xrt_program_serialize: invalid program");
  return xrt__bytecode_write(m, target_version, out_data, out_size);
}
