/*
 * src/core/print.c - the IR printer: a parsed program as StableHLO text in
 * one canonical form (xrt_program_print).
 * Part of the core of xrt; MIT licensed, see LICENSE.
 */
#include "internal.h"

/* ======================================================================
 * 5c. Print
 *
 * The text depends on the IR alone, so that inputs that parse to the same
 * IR (pretty or generic syntax, other value names, locations, comments,
 * text or bytecode) print byte for byte the same, and parsing the text
 * gives that IR back:
 *  - module and func.func in their pretty form, every op in MLIR's generic
 *    form: "name"(operands) ({regions}) {attributes} : (types) -> types;
 *  - values numbered in print order: %argN for block arguments, %N for
 *    results (%N:k and %N#i for several);
 *  - attributes sorted by name, in StableHLO's spellings where the IR keeps
 *    enough to know them (#stablehlo<comparison_direction GT>,
 *    #stablehlo.dot<...>, array<i64: ...>);
 *  - numbers exact: floats in the shortest decimal that reads back to the
 *    same bits (hex for NaN and infinities), literals of more than
 *    XRT__PR_LIST_MAX elements as dense<"0x..."> (raw element bytes);
 *  - no locations.
 * ==================================================================== */

/* Literals with more elements than this print as a hex string. */
#define XRT__PR_LIST_MAX 1024

/* The text being built, and the numbering of the values of the function
 * being printed. */
typedef struct xrt__prn {
  char *s;
  size_t n, cap;
  bool oom;      /* out of memory: the text is incomplete */
  bool bad;      /* the IR uses a value it never defines */
  const char *dialect; /* of the op being printed: "stablehlo" or "chlo" */
  xrt_opcode code;     /* the op whose attributes are printed */
  bool index_value;    /* its `value` is of index elements (a constant
                          whose result is: the parser reads them as i64) */
  int32_t num_values;
  int32_t *num;  /* per value id: its number (-1: not defined yet) */
  int32_t *sub;  /* per value id: -2 block argument, -1 the only result,
                    else its index among the op's results */
  int32_t next_res, next_arg;
} xrt__prn;

/* ---------------------------------------------------------------------
 * Output
 * ------------------------------------------------------------------- */

static void xrt__pr_put(xrt__prn *b, const char *s, size_t n) {
  if (b->oom) return;
  if (b->cap - b->n <= n) {
    size_t cap = b->cap ? b->cap : 4096;
    while (cap - b->n <= n) {
      if (cap > SIZE_MAX / 2) {
        b->oom = true;
        return;
      }
      cap *= 2;
    }
    char *d = realloc(b->s, cap); /* the caller frees it with free() */
    if (!d) {
      b->oom = true;
      return;
    }
    b->s = d;
    b->cap = cap;
  }
  memcpy(b->s + b->n, s, n);
  b->n += n;
  b->s[b->n] = 0;
}

static void xrt__pr_puts(xrt__prn *b, const char *s) {
  xrt__pr_put(b, s, strlen(s));
}

static void xrt__pr_fmt(xrt__prn *b, const char *fmt, ...) XRT__PARSE_PRINTF(2, 3);
/* Short formatted pieces (numbers, names). */
static void xrt__pr_fmt(xrt__prn *b, const char *fmt, ...) {
  char tmp[160];
  va_list ap;
  va_start(ap, fmt);
  int k = vsnprintf(tmp, sizeof tmp, fmt, ap);
  va_end(ap);
  if (k < 0 || (size_t)k >= sizeof tmp) b->oom = true; /* never this long */
  else xrt__pr_put(b, tmp, (size_t)k);
}

static void xrt__pr_indent(xrt__prn *b, int n) {
  static const char sp[] = "                                ";
  for (; n > 0; n -= 32) xrt__pr_put(b, sp, (size_t)(n < 32 ? n : 32));
}

/* ---------------------------------------------------------------------
 * Names and strings
 * ------------------------------------------------------------------- */

static bool xrt__pr_idchar(int c) { return xrt__is_namechar(c) && c != '-'; }

/* A bare identifier (an attribute name or keyword the parser reads back). */
static bool xrt__pr_is_ident(const char *s, size_t n) {
  if (!n || !xrt__is_idstart((unsigned char)s[0])) return false;
  for (size_t i = 1; i < n; i++)
    if (!xrt__pr_idchar((unsigned char)s[i])) return false;
  return true;
}

/* "..." with MLIR's escapes: \" \\ \n \t and \XX for other bytes outside
 * printable ASCII (the parser's xrt__unescape reads them all). */
static void xrt__pr_string(xrt__prn *b, const char *s, size_t n) {
  xrt__pr_put(b, "\"", 1);
  size_t run = 0; /* plain characters not yet written */
  for (size_t i = 0; i < n; i++) {
    unsigned char c = (unsigned char)s[i];
    if (c >= 0x20 && c < 0x7f && c != '"' && c != '\\') {
      run++;
      continue;
    }
    xrt__pr_put(b, s + i - run, run);
    run = 0;
    if (c == '"' || c == '\\') xrt__pr_fmt(b, "\\%c", c);
    else if (c == '\n') xrt__pr_puts(b, "\\n");
    else if (c == '\t') xrt__pr_puts(b, "\\t");
    else xrt__pr_fmt(b, "\\%02X", c);
  }
  xrt__pr_put(b, s + n - run, run);
  xrt__pr_put(b, "\"", 1);
}

/* @name, quoted when it has characters a bare symbol cannot. */
static void xrt__pr_symbol(xrt__prn *b, const char *s, size_t n) {
  bool bare = n > 0;
  for (size_t i = 0; bare && i < n; i++) bare = xrt__is_namechar((unsigned char)s[i]);
  xrt__pr_put(b, "@", 1);
  if (bare) xrt__pr_put(b, s, n);
  else xrt__pr_string(b, s, n);
}

/* A dictionary key: bare when it is an identifier. */
static void xrt__pr_key(xrt__prn *b, const char *s) {
  size_t n = strlen(s);
  if (xrt__pr_is_ident(s, n)) xrt__pr_put(b, s, n);
  else xrt__pr_string(b, s, n);
}

/* ---------------------------------------------------------------------
 * Numbers
 * ------------------------------------------------------------------- */

/* The raw bits of an element of esz bytes (little-endian host, as the
 * parser stores them). */
static uint64_t xrt__pr_bits(const uint8_t *p, size_t esz) {
  uint64_t v = 0;
  memcpy(&v, p, esz < 8 ? esz : 8);
  return v;
}

/* The exact value of float element bits of type dt. */
static double xrt__pr_fdecode(xrt_dtype dt, uint64_t bits) {
  switch (dt) {
  case XRT_F64: { double d; memcpy(&d, &bits, 8); return d; }
  case XRT_F32: { uint32_t u = (uint32_t)bits; float f; memcpy(&f, &u, 4); return f; }
  case XRT_F16: return xrt_f16_to_f32((uint16_t)bits);
  case XRT_BF16: return xrt_bf16_to_f32((uint16_t)bits);
  default: return xrt_minifloat_to_f64(dt, (uint8_t)bits);
  }
}

/* The bits the parser stores for the decimal value d in type dt (UINT64_MAX
 * when out of range). */
static uint64_t xrt__pr_fencode(xrt_dtype dt, double d) {
  switch (dt) {
  case XRT_F64: { uint64_t u; memcpy(&u, &d, 8); return u; }
  case XRT_F32: {
    float f = xrt__f64_to_f32(d);
    uint32_t u;
    memcpy(&u, &f, 4);
    return u;
  }
  case XRT_F16: return xrt_f64_to_f16(d);
  case XRT_BF16: return xrt_f64_to_bf16(d);
  default: {
    int32_t m = xrt_minifloat_from_f64(dt, d);
    return m < 0 ? UINT64_MAX : (uint64_t)m;
  }
  }
}

/* Makes a %g number a float literal: MLIR's need a '.' ("1.0e+10"). */
static void xrt__pr_dotted(char *s, size_t cap) {
  if (strchr(s, '.')) return;
  char *e = strchr(s, 'e');
  size_t n = strlen(s);
  if (n + 3 > cap) return;
  if (!e) {
    memcpy(s + n, ".0", 3);
  } else {
    memmove(e + 2, e, strlen(e) + 1);
    e[0] = '.';
    e[1] = '0';
  }
}

/* The shortest decimal (%.Ng) that the parser reads back as the float
 * element bits of type dt; false when there is none (NaN, infinities). */
static bool xrt__pr_shortest(xrt_dtype dt, uint64_t bits, char *out, size_t cap) {
  double v = xrt__pr_fdecode(dt, bits);
  if (!isfinite(v)) return false;
  for (int prec = 1; prec <= 17; prec++) {
    snprintf(out, cap, "%.*g", prec, v);
    if (xrt__pr_fencode(dt, strtod(out, NULL)) == bits) {
      xrt__pr_dotted(out, cap);
      return true;
    }
  }
  return false;
}

/* One float element: shortest decimal, else its bits in hex (which the
 * parser stores as they are). */
static void xrt__pr_float_elem(xrt__prn *b, xrt_dtype dt, uint64_t bits) {
  char num[48];
  if (xrt__pr_shortest(dt, bits, num, sizeof num)) xrt__pr_puts(b, num);
  else xrt__pr_fmt(b, "0x%0*" PRIX64, 2 * (int)xrt_dtype_size(dt), bits);
}

/* One element of a literal of type dt at p. */
static void xrt__pr_elem(xrt__prn *b, xrt_dtype dt, const uint8_t *p) {
  size_t esz = xrt_dtype_size(dt);
  uint64_t u = xrt__pr_bits(p, esz);
  if (dt == XRT_PRED) {
    xrt__pr_puts(b, u ? "true" : "false");
  } else if (xrt_dtype_is_complex(dt)) {
    xrt_dtype part = dt == XRT_C64 ? XRT_F32 : XRT_F64;
    size_t half = esz / 2;
    xrt__pr_put(b, "(", 1);
    xrt__pr_float_elem(b, part, xrt__pr_bits(p, half));
    xrt__pr_put(b, ", ", 2);
    xrt__pr_float_elem(b, part, xrt__pr_bits(p + half, half));
    xrt__pr_put(b, ")", 1);
  } else if (xrt_dtype_is_float(dt)) {
    xrt__pr_float_elem(b, dt, u);
  } else if (xrt_dtype_is_signed_int(dt)) {
    int shift = 64 - 8 * (int)esz; /* sign-extend the stored bytes */
    int64_t v = (int64_t)(u << shift) >> shift;
    xrt__pr_fmt(b, "%" PRId64, v);
  } else {
    xrt__pr_fmt(b, "%" PRIu64, u);
  }
}

/* A FLOAT attribute: its f64 bits in hex where no decimal gives them;
 * else, where the syntax wants a type, an f32 when the value is one (as
 * `x : f32` reads back rounded to f32, its shortest f32 decimal does), or
 * an f64; bare (a struct's field), the shortest f64 decimal. */
static void xrt__pr_float_attr(xrt__prn *b, double f, bool typed) {
  char num[48];
  uint64_t bits;
  memcpy(&bits, &f, 8);
  if (!xrt__pr_shortest(XRT_F64, bits, num, sizeof num)) {
    xrt__pr_fmt(b, "0x%016" PRIX64 " : f64", bits); /* read as bits */
    return;
  }
  bool f32 = fabs(f) <= FLT_MAX && (double)(float)f == f;
  if (typed && f32) {
    float g = (float)f;
    uint32_t u;
    memcpy(&u, &g, 4);
    if (xrt__pr_shortest(XRT_F32, u, num, sizeof num)) {
      xrt__pr_puts(b, num);
      xrt__pr_puts(b, " : f32");
      return;
    }
  }
  xrt__pr_puts(b, num);
  if (typed) xrt__pr_puts(b, " : f64");
}

/* ---------------------------------------------------------------------
 * Types
 * ------------------------------------------------------------------- */

/* A quantization scale: shortest decimal ("inf"/"nan" as scan_num reads
 * them). */
static void xrt__pr_scale(xrt__prn *b, double d) {
  char num[48];
  uint64_t bits;
  memcpy(&bits, &d, 8);
  if (xrt__pr_shortest(XRT_F64, bits, num, sizeof num)) xrt__pr_puts(b, num);
  else xrt__pr_puts(b, isnan(d) ? "nan" : d < 0 ? "-inf" : "inf");
}

/* !quant.uniform<i8[<min:max>]:f32[:axis], scale[:zp] | {scale[:zp], ...}> */
static void xrt__pr_quant(xrt__prn *b, const xrt_ir_quant *q) {
  int64_t lo, hi;
  xrt__int_range(q->storage, &lo, &hi);
  xrt__pr_puts(b, "!quant.uniform<");
  if (xrt_dtype_is_unsigned_int(q->storage))
    xrt__pr_fmt(b, "u%d", xrt_dtype_bits(q->storage)); /* quant's spelling */
  else
    xrt__pr_puts(b, xrt_dtype_name(q->storage));
  if (q->storage_min != lo || q->storage_max != hi)
    xrt__pr_fmt(b, "<%" PRId64 ":%" PRId64 ">", q->storage_min, q->storage_max);
  xrt__pr_fmt(b, ":%s", xrt_dtype_name(q->expressed));
  if (q->axis >= 0) xrt__pr_fmt(b, ":%d, {", (int)q->axis);
  else xrt__pr_puts(b, ", ");
  for (int32_t i = 0; i < q->num_scales; i++) {
    if (i) xrt__pr_puts(b, ", ");
    xrt__pr_scale(b, q->scales[i]);
    if (q->zero_points[i]) xrt__pr_fmt(b, ":%" PRId64, q->zero_points[i]);
  }
  xrt__pr_puts(b, q->axis >= 0 ? "}>" : ">");
}

static void xrt__pr_elem_type(xrt__prn *b, const xrt_ir_type *t) {
  if (t->quant) xrt__pr_quant(b, t->quant);
  else xrt__pr_puts(b, xrt__dtype_spelling(t->shape.dtype));
}

/* A bounded tensor's `, #stablehlo.bounds<16, ?>` (XRT__TYPE_BOUNDS). */
static void xrt__pr_bounds(xrt__prn *b, const xrt_ir_type *t) {
  const xrt_ir_type *bd = t->elems;
  if (!bd || bd->kind != XRT__TYPE_BOUNDS) return;
  xrt__pr_puts(b, ", #stablehlo.bounds<");
  for (int32_t i = 0; i < bd->shape.rank && i < XRT_MAX_RANK; i++) {
    if (i) xrt__pr_puts(b, ", ");
    if (bd->shape.dims[i] == XRT_DIM_DYNAMIC) xrt__pr_puts(b, "?");
    else xrt__pr_fmt(b, "%" PRId64, bd->shape.dims[i]);
  }
  xrt__pr_puts(b, ">");
}

/* A type; index: spell i64 elements `index` (layouts are index tensors,
 * which the parser reads as i64). */
static void xrt__pr_type_as(xrt__prn *b, const xrt_ir_type *t, bool index) {
  if (t->kind == XRT_TYPE_TOKEN) {
    xrt__pr_puts(b, "!stablehlo.token");
  } else if (t->kind == XRT_TYPE_TUPLE || t->kind == XRT__TYPE_FUTURE) {
    xrt__pr_puts(b, t->kind == XRT_TYPE_TUPLE ? "tuple<" : "!stablehlo.future<");
    for (int32_t i = 0; i < t->num_elems; i++) {
      if (i) xrt__pr_puts(b, ", ");
      xrt__pr_type_as(b, &t->elems[i], false);
    }
    xrt__pr_puts(b, ">");
  } else {
    bool memref = t->kind == XRT__TYPE_MEMREF;
    xrt__pr_puts(b, memref ? "memref<" : "tensor<");
    for (int32_t i = 0; i < t->shape.rank && i < XRT_MAX_RANK; i++)
      if (t->shape.dims[i] == XRT_DIM_DYNAMIC) xrt__pr_puts(b, "?x");
      else xrt__pr_fmt(b, "%" PRId64 "x", t->shape.dims[i]);
    if (index && !t->quant && t->shape.dtype == XRT_S64) xrt__pr_puts(b, "index");
    else xrt__pr_elem_type(b, t);
    if (!memref) xrt__pr_bounds(b, t);
    xrt__pr_puts(b, ">");
  }
}

static void xrt__pr_type(xrt__prn *b, const xrt_ir_type *t) {
  xrt__pr_type_as(b, t, false);
}

/* ---------------------------------------------------------------------
 * Dense literals
 * ------------------------------------------------------------------- */

static int64_t xrt__pr_numel(const xrt_shape *s) { /* saturating */
  int64_t n = 1;
  for (int32_t i = 0; i < s->rank && i < XRT_MAX_RANK; i++) {
    if (s->dims[i] <= 0) return 0;
    n = n > INT64_MAX / s->dims[i] ? INT64_MAX : n * s->dims[i];
  }
  return n;
}

/* "0x..." of the literal's bytes as they are (how the parser reads it). */
static void xrt__pr_hex_bytes(xrt__prn *b, const uint8_t *p, size_t n) {
  static const char hex[] = "0123456789ABCDEF";
  char chunk[256];
  xrt__pr_puts(b, "\"0x");
  for (size_t i = 0; i < n;) {
    size_t k = 0;
    for (; i < n && k < sizeof chunk; i++) {
      chunk[k++] = hex[p[i] >> 4];
      chunk[k++] = hex[p[i] & 15];
    }
    xrt__pr_put(b, chunk, k);
  }
  xrt__pr_puts(b, "\"");
}

/* [[...], ...] over the dimensions from level on; returns past the
 * elements written. */
static const uint8_t *xrt__pr_lit_list(xrt__prn *b, const xrt_ir_type *t,
                                       int level, const uint8_t *p) {
  size_t esz = xrt_dtype_size(t->shape.dtype);
  xrt__pr_put(b, "[", 1);
  for (int64_t i = 0; i < t->shape.dims[level]; i++) {
    if (i) xrt__pr_put(b, ", ", 2);
    if (level + 1 < t->shape.rank) {
      p = xrt__pr_lit_list(b, t, level + 1, p);
    } else {
      xrt__pr_elem(b, t->shape.dtype, p);
      p += esz;
    }
  }
  xrt__pr_put(b, "]", 1);
  return p;
}

/* dense<...> : type.  A splat prints its one element (read back as a
 * splat), an empty literal dense<>, a rank-0 or large one its bytes in hex
 * (read back as not a splat), others as nested lists (xrt__lit_canon
 * leaves these no list a splat would print the same as). */
static void xrt__pr_lit(xrt__prn *b, const xrt_ir_literal *l, bool index) {
  const xrt_ir_type *t = &l->type;
  size_t esz = xrt_dtype_size(t->shape.dtype);
  int64_t numel = xrt__pr_numel(&t->shape);
  const uint8_t *d = (const uint8_t *)l->data;
  xrt__pr_puts(b, "dense<");
  if (!esz || !l->bytes || !d) {
    /* dense<> */
  } else if (l->splat) {
    xrt__pr_elem(b, t->shape.dtype, d);
  } else if (t->shape.rank == 0 || numel > XRT__PR_LIST_MAX ||
             l->bytes != (size_t)numel * esz) {
    xrt__pr_hex_bytes(b, d, l->bytes);
  } else {
    xrt__pr_lit_list(b, t, 0, d);
  }
  xrt__pr_puts(b, "> : ");
  xrt__pr_type_as(b, t, index);
}

/* ---------------------------------------------------------------------
 * Attributes
 * ------------------------------------------------------------------- */

/* Where an attribute value stands: it decides how numbers are typed. */
typedef enum xrt__pr_where {
  XRT__PR_TOP,    /* an op's or a dictionary's entry: 1 : i64 */
  XRT__PR_LIST,   /* an item of [...]: 1 : i64 */
  XRT__PR_STRUCT  /* a field of #stablehlo.x<...>: bare 1 */
} xrt__pr_where;

/* Enum attributes: #<dialect><kind VALUE>, by attribute name (or the name
 * of the list they are items of). */
static const struct { const char *attr, *kind; } xrt__pr_enums[] = {
    {"comparison_direction", "comparison_direction"},
    {"compare_type", "comparison_type"},
    {"precision_config", "precision"},
    {"fft_type", "fft_type"},
    {"rng_distribution", "rng_distribution"},
    {"rng_algorithm", "rng_algorithm"},
    {"transpose_a", "transpose"},
};

/* Struct attributes #mnemonic<field = value, ...>: the attribute name, the
 * op it belongs to (XRT_OP_INVALID: any), the struct it is a field of
 * (NULL: an op's attribute or a list item), and the fields in the order
 * StableHLO prints them (others follow, sorted). */
static const char *const xrt__pr_dot_fields[] = {
    "lhs_batching_dimensions", "rhs_batching_dimensions",
    "lhs_contracting_dimensions", "rhs_contracting_dimensions", NULL};
static const char *const xrt__pr_gather_fields[] = {
    "offset_dims", "collapsed_slice_dims", "operand_batching_dims",
    "start_indices_batching_dims", "start_index_map", "index_vector_dim", NULL};
static const char *const xrt__pr_scatter_fields[] = {
    "update_window_dims", "inserted_window_dims", "input_batching_dims",
    "scatter_indices_batching_dims", "scatter_dims_to_operand_dims",
    "index_vector_dim", NULL};
static const char *const xrt__pr_channel_fields[] = {"handle", "type", NULL};
static const char *const xrt__pr_alias_fields[] = {
    "output_tuple_indices", "operand_index", "operand_tuple_indices", NULL};
static const char *const xrt__pr_algorithm_fields[] = {
    "lhs_precision_type", "rhs_precision_type", "accumulation_type",
    "lhs_component_count", "rhs_component_count", "num_primitive_operations",
    "allow_imprecise_accumulation", NULL};
static const char *const xrt__pr_accuracy_fields[] = {"atol", "rtol", "ulps",
                                                      "mode", NULL};
static const char *const xrt__pr_ragged_fields[] = {
    "lhs_batching_dimensions", "rhs_batching_dimensions",
    "lhs_contracting_dimensions", "rhs_contracting_dimensions",
    "lhs_ragged_dimensions", "rhs_group_dimensions", NULL};
static const char *const xrt__pr_no_fields[] = {NULL};

typedef struct xrt__pr_struct {
  const char *attr;
  xrt_opcode op;
  const char *parent, *mnemonic;
  const char *const *fields;
} xrt__pr_struct;

static const xrt__pr_struct xrt__pr_structs[] = {
    {"dot_dimension_numbers", XRT_OP_INVALID, NULL, "stablehlo.dot",
     xrt__pr_dot_fields},
    {"dimension_numbers", XRT_OP_GATHER, NULL, "stablehlo.gather",
     xrt__pr_gather_fields},
    {"dimension_numbers", XRT_OP_DYNAMIC_GATHER, NULL, "stablehlo.gather",
     xrt__pr_gather_fields},
    {"scatter_dimension_numbers", XRT_OP_INVALID, NULL, "stablehlo.scatter",
     xrt__pr_scatter_fields},
    {"channel_handle", XRT_OP_INVALID, NULL, "stablehlo.channel_handle",
     xrt__pr_channel_fields},
    {"output_operand_aliases", XRT_OP_INVALID, NULL,
     "stablehlo.output_operand_alias", xrt__pr_alias_fields},
    {"algorithm", XRT_OP_DOT_GENERAL, NULL, "stablehlo.dot_algorithm",
     xrt__pr_algorithm_fields},
    {"result_accuracy", XRT_OP_INVALID, NULL, "stablehlo.result_accuracy",
     xrt__pr_accuracy_fields},
    {"mode", XRT_OP_INVALID, "stablehlo.result_accuracy",
     "stablehlo.result_accuracy_mode", xrt__pr_no_fields},
    {"ragged_dot_dimension_numbers", XRT_OP_INVALID, NULL, "chlo.ragged_dot",
     xrt__pr_ragged_fields},
};

/* Dense-array attributes whose elements are not i64. */
static const struct { const char *attr; int bits; } xrt__pr_arrays[] = {
    {"window_reversal", 1},
    {"operandSegmentSizes", 32},
    {"resultSegmentSizes", 32},
};

/* Integer attributes that StableHLO types i32 (others are i64). */
static const char *const xrt__pr_i32_attrs[] = {
    "api_version", "exponent_bits", "mantissa_bits", "index",
    "mhlo.num_partitions", "mhlo.num_replicas"};

static bool xrt__pr_streq(const char *a, const char *b) {
  return a && b && strcmp(a, b) == 0;
}

static const xrt__pr_struct *xrt__pr_find_struct(const xrt__prn *b,
                                                 const char *name,
                                                 const char *parent) {
  for (size_t i = 0; name && i < XRT__ARRAY_SIZE(xrt__pr_structs); i++) {
    const xrt__pr_struct *s = &xrt__pr_structs[i];
    if (strcmp(s->attr, name) != 0) continue;
    if (s->op != XRT_OP_INVALID && s->op != b->code) continue;
    if (s->parent ? !xrt__pr_streq(s->parent, parent) : parent != NULL) continue;
    return s;
  }
  return NULL;
}

static void xrt__pr_attr(xrt__prn *b, const xrt_ir_attr *a, xrt__pr_where where,
                         const char *name, const char *parent);

/* Item indices of items[0..n) in name order (stable); NULL when out of
 * memory (then they print in their own order). */
static int32_t *xrt__pr_sorted(xrt__prn *b, const xrt_ir_attr *items, int32_t n) {
  int32_t *ix = malloc(sizeof *ix * (size_t)(n > 0 ? n : 1));
  if (!ix) {
    b->oom = true;
    return NULL;
  }
  for (int32_t i = 0; i < n; i++) {
    int32_t j = i;
    const char *k = items[i].name ? items[i].name : "";
    for (; j > 0; j--) {
      const char *p = items[ix[j - 1]].name ? items[ix[j - 1]].name : "";
      if (strcmp(p, k) <= 0) break;
      ix[j] = ix[j - 1];
    }
    ix[j] = i;
  }
  return ix;
}

/* `name = value` (a unit attribute: just its name). */
static void xrt__pr_entry(xrt__prn *b, const xrt_ir_attr *a, xrt__pr_where where,
                          const char *parent) {
  xrt__pr_key(b, a->name ? a->name : "");
  if (a->kind == XRT_ATTR_UNIT) return;
  xrt__pr_puts(b, " = ");
  xrt__pr_attr(b, a, where, a->name, parent);
}

/* Entries of a dictionary sorted by name, separated by ", ". */
static void xrt__pr_entries(xrt__prn *b, const xrt_ir_attr *items, int32_t n,
                            xrt__pr_where where, const char *parent) {
  int32_t *ix = xrt__pr_sorted(b, items, n);
  if (!ix) return;
  for (int32_t i = 0; i < n; i++) {
    if (i) xrt__pr_puts(b, ", ");
    xrt__pr_entry(b, &items[ix[i]], where, parent);
  }
  free(ix);
}

static bool xrt__pr_listed(const char *const *names, const char *name) {
  for (; *names; names++)
    if (xrt__pr_streq(*names, name)) return true;
  return false;
}

/* #mnemonic<fields>: those of the table first, in its order, then the rest
 * sorted by name. */
static void xrt__pr_struct_attr(xrt__prn *b, const xrt_ir_attr *a,
                                const xrt__pr_struct *s) {
  int32_t *ix = xrt__pr_sorted(b, a->items, a->num_items);
  if (!ix) return;
  const char *sep = "";
  xrt__pr_fmt(b, "#%s<", s->mnemonic);
  for (const char *const *f = s->fields; *f; f++)
    for (int32_t i = 0; i < a->num_items; i++) {
      if (!xrt__pr_streq(a->items[ix[i]].name, *f)) continue;
      xrt__pr_puts(b, sep);
      xrt__pr_entry(b, &a->items[ix[i]], XRT__PR_STRUCT, s->mnemonic);
      sep = ", ";
    }
  for (int32_t i = 0; i < a->num_items; i++) {
    if (xrt__pr_listed(s->fields, a->items[ix[i]].name)) continue;
    xrt__pr_puts(b, sep);
    xrt__pr_entry(b, &a->items[ix[i]], XRT__PR_STRUCT, s->mnemonic);
    sep = ", ";
  }
  xrt__pr_puts(b, ">");
  free(ix);
}

/* convolution's dimension_numbers (the nine fields normalize.c makes) in
 * the compact form #stablehlo.conv<[b, 0, 1, f]x[0, 1, i, o]->[b, 0, 1, f]>
 * that normalize.c reads back; false (nothing printed) when the fields do
 * not make one. */
static bool xrt__pr_conv_dims(xrt__prn *b, const xrt_ir_attr *a) {
  static const char letters[3][2] = {{'b', 'f'}, {'i', 'o'}, {'b', 'f'}};
  int slot[3][XRT_MAX_RANK]; /* per position: -2 b or i, -1 f or o, k >= 0
                               spatial dimension k */
  int rank[3];
  if (a->num_items != 9) return false;
  for (int g = 0; g < 3; g++) {
    const xrt_ir_attr *r0 = xrt_ir_attr_field(a, xrt__conv_dim_names[g][0]);
    const xrt_ir_attr *r1 = xrt_ir_attr_field(a, xrt__conv_dim_names[g][1]);
    const xrt_ir_attr *sp = xrt_ir_attr_field(a, xrt__conv_dim_names[g][2]);
    if (!r0 || !r1 || !sp || r0->kind != XRT_ATTR_INT ||
        r1->kind != XRT_ATTR_INT || sp->kind != XRT_ATTR_INTS ||
        sp->n > XRT_MAX_RANK - 2 || sp->lit)
      return false;
    rank[g] = 2 + (int)sp->n;
    for (int i = 0; i < rank[g]; i++) slot[g][i] = INT_MIN;
    for (int64_t k = -2; k < sp->n; k++) {
      int64_t pos = k == -2 ? r0->i : k == -1 ? r1->i : sp->ints[k];
      if (pos < 0 || pos >= rank[g] || slot[g][pos] != INT_MIN) return false;
      slot[g][pos] = (int)k;
    }
  }
  xrt__pr_puts(b, "#stablehlo.conv<");
  for (int g = 0; g < 3; g++) {
    xrt__pr_puts(b, g == 0 ? "[" : g == 1 ? "]x[" : "]->[");
    for (int i = 0; i < rank[g]; i++) {
      if (i) xrt__pr_puts(b, ", ");
      if (slot[g][i] < 0) xrt__pr_put(b, &letters[g][slot[g][i] + 2], 1);
      else xrt__pr_fmt(b, "%d", slot[g][i]);
    }
  }
  xrt__pr_puts(b, "]>");
  return true;
}

static void xrt__pr_dict(xrt__prn *b, const xrt_ir_attr *a, const char *name,
                         const char *parent) {
  bool conv = b->code == XRT_OP_CONVOLUTION || b->code == XRT_OP_DYNAMIC_CONV;
  if (conv && !parent && xrt__pr_streq(name, "dimension_numbers") &&
      xrt__pr_conv_dims(b, a))
    return;
  const xrt__pr_struct *s = xrt__pr_find_struct(b, name, parent);
  if (s) {
    xrt__pr_struct_attr(b, a, s);
    return;
  }
  xrt__pr_puts(b, "{");
  xrt__pr_entries(b, a->items, a->num_items, XRT__PR_TOP, NULL);
  xrt__pr_puts(b, "}");
}

/* Words a bare keyword cannot be: the parser reads them as other kinds. */
static bool xrt__pr_reserved(const char *s, size_t n) {
  static const char *const words[] = {"true", "false", "unit", "dense",
                                      "array", "tensor", "tuple", "complex",
                                      "index", "loc"};
  for (size_t i = 0; i < XRT__ARRAY_SIZE(words); i++)
    if (strlen(words[i]) == n && !memcmp(words[i], s, n)) return true;
  return xrt_dtype_from_name(s, n) != XRT_DTYPE_INVALID;
}

static void xrt__pr_enum(xrt__prn *b, const xrt_ir_attr *a, const char *name) {
  const char *s = a->s ? a->s : "";
  size_t n = strlen(s);
  for (size_t i = 0; name && i < XRT__ARRAY_SIZE(xrt__pr_enums); i++)
    if (!strcmp(xrt__pr_enums[i].attr, name) && xrt__pr_is_ident(s, n)) {
      xrt__pr_fmt(b, "#%s<%s ", b->dialect, xrt__pr_enums[i].kind);
      xrt__pr_put(b, s, n);
      xrt__pr_puts(b, ">");
      return;
    }
  if (xrt__pr_is_ident(s, n) && !xrt__pr_reserved(s, n)) {
    xrt__pr_put(b, s, n);
  } else { /* #x<kind VALUE> reads back as an ENUM of VALUE */
    xrt__pr_fmt(b, "#%s<enum ", b->dialect);
    xrt__pr_put(b, s, n);
    xrt__pr_puts(b, ">");
  }
}

/* INTS without a literal: array<i64: ...> for an op's attribute, [...]
 * inside lists and structs. */
static void xrt__pr_ints(xrt__prn *b, const xrt_ir_attr *a, xrt__pr_where where,
                         const char *name) {
  if (where != XRT__PR_TOP) {
    xrt__pr_puts(b, "[");
    for (int64_t i = 0; i < a->n; i++)
      xrt__pr_fmt(b, "%s%" PRId64, i ? ", " : "", a->ints[i]);
    xrt__pr_puts(b, "]");
    return;
  }
  int bits = 64;
  for (size_t i = 0; name && i < XRT__ARRAY_SIZE(xrt__pr_arrays); i++)
    if (!strcmp(xrt__pr_arrays[i].attr, name)) bits = xrt__pr_arrays[i].bits;
  for (int64_t i = 0; bits == 1 && i < a->n; i++)
    if (a->ints[i] != 0 && a->ints[i] != 1) bits = 64;
  for (int64_t i = 0; bits == 32 && i < a->n; i++)
    if (a->ints[i] != (int32_t)a->ints[i]) bits = 64;
  xrt__pr_fmt(b, "array<i%d", bits);
  for (int64_t i = 0; i < a->n; i++) {
    xrt__pr_puts(b, i ? ", " : ": ");
    if (bits == 1) xrt__pr_puts(b, a->ints[i] ? "true" : "false");
    else xrt__pr_fmt(b, "%" PRId64, a->ints[i]);
  }
  xrt__pr_puts(b, ">");
}

/* custom_call's layouts: lists of tensor<Nxindex>. */
static bool xrt__pr_is_layout(const char *name) {
  return xrt__pr_streq(name, "operand_layouts") ||
         xrt__pr_streq(name, "result_layouts") ||
         xrt__pr_streq(name, "result_tilings");
}

static const char *xrt__pr_int_type(const char *name) {
  for (size_t i = 0; name && i < XRT__ARRAY_SIZE(xrt__pr_i32_attrs); i++)
    if (!strcmp(xrt__pr_i32_attrs[i], name)) return "i32";
  return "i64";
}

/* An attribute's value.  name: the attribute's (a list's items get the
 * list's); parent: the struct it is a field of (NULL: none). */
static void xrt__pr_attr(xrt__prn *b, const xrt_ir_attr *a, xrt__pr_where where,
                         const char *name, const char *parent) {
  switch ((xrt_ir_attr_kind)a->kind) {
  case XRT_ATTR_UNIT: xrt__pr_puts(b, "unit"); break;
  case XRT_ATTR_INT:
    xrt__pr_fmt(b, "%" PRId64, a->i);
    if (where != XRT__PR_STRUCT) xrt__pr_fmt(b, " : %s", xrt__pr_int_type(name));
    break;
  case XRT_ATTR_FLOAT: xrt__pr_float_attr(b, a->f, where != XRT__PR_STRUCT); break;
  case XRT_ATTR_BOOL: xrt__pr_puts(b, a->i ? "true" : "false"); break;
  case XRT_ATTR_STRING:
    xrt__pr_string(b, a->s ? a->s : "", a->s ? (size_t)a->n : 0);
    break;
  case XRT_ATTR_ENUM: xrt__pr_enum(b, a, name); break;
  case XRT_ATTR_INTS:
    if (a->lit) xrt__pr_lit(b, a->lit, xrt__pr_is_layout(name));
    else xrt__pr_ints(b, a, where, name);
    break;
  case XRT_ATTR_DENSE:
    if (a->lit)
      xrt__pr_lit(b, a->lit, b->index_value && where == XRT__PR_TOP &&
                                 !parent && xrt__pr_streq(name, "value"));
    else xrt__pr_puts(b, "unit");
    break;
  case XRT_ATTR_TYPE: /* a scalar as its element type (dot_algorithm's
                         accumulation_type = f32): the parser reads i32 and
                         tensor<i32> alike */
    if (a->type && a->type->kind == XRT_TYPE_TENSOR && a->type->shape.rank == 0)
      xrt__pr_elem_type(b, a->type);
    else if (a->type)
      xrt__pr_type(b, a->type);
    break;
  case XRT_ATTR_SYMBOL:
    xrt__pr_symbol(b, a->s ? a->s : "", a->s ? (size_t)a->n : 0);
    break;
  case XRT_ATTR_LIST:
    xrt__pr_puts(b, "[");
    for (int32_t i = 0; i < a->num_items; i++) {
      if (i) xrt__pr_puts(b, ", ");
      xrt__pr_attr(b, &a->items[i], XRT__PR_LIST, name, parent);
    }
    xrt__pr_puts(b, "]");
    break;
  case XRT_ATTR_DICT: xrt__pr_dict(b, a, name, parent); break;
  default: xrt__pr_puts(b, "unit"); break;
  }
}

/* ---------------------------------------------------------------------
 * Values, ops, regions
 * ------------------------------------------------------------------- */

static bool xrt__pr_valid(const xrt__prn *b, int32_t id) {
  return id >= 0 && id < b->num_values;
}

static void xrt__pr_value(xrt__prn *b, int32_t id) {
  if (!xrt__pr_valid(b, id) || b->num[id] < 0) {
    b->bad = true;
    xrt__pr_puts(b, "%undefined");
  } else if (b->sub[id] == -2) {
    xrt__pr_fmt(b, "%%arg%d", (int)b->num[id]);
  } else if (b->sub[id] == -1) {
    xrt__pr_fmt(b, "%%%d", (int)b->num[id]);
  } else {
    xrt__pr_fmt(b, "%%%d#%d", (int)b->num[id], (int)b->sub[id]);
  }
}

static void xrt__pr_def_arg(xrt__prn *b, int32_t id) {
  if (!xrt__pr_valid(b, id)) {
    b->bad = true;
    return;
  }
  b->num[id] = b->next_arg++;
  b->sub[id] = -2;
}

static const xrt_ir_type *xrt__pr_vtype(const xrt__prn *b,
                                        const xrt_ir_func *f, int32_t id) {
  static const xrt_ir_type none = {0};
  return xrt__pr_valid(b, id) ? &f->value_types[id] : &none;
}

/* `%argN: type` */
static void xrt__pr_arg(xrt__prn *b, const xrt_ir_func *f, int32_t id) {
  xrt__pr_def_arg(b, id);
  xrt__pr_value(b, id);
  xrt__pr_puts(b, ": ");
  xrt__pr_type(b, xrt__pr_vtype(b, f, id));
}

/* `(T, ...)` or, for one type when single is allowed, `T`. */
static void xrt__pr_types(xrt__prn *b, const xrt_ir_func *f, const int32_t *ids,
                          int32_t n, bool single) {
  bool paren = !(single && n == 1);
  if (paren) xrt__pr_puts(b, "(");
  for (int32_t i = 0; i < n; i++) {
    if (i) xrt__pr_puts(b, ", ");
    xrt__pr_type(b, xrt__pr_vtype(b, f, ids[i]));
  }
  if (paren) xrt__pr_puts(b, ")");
}

static void xrt__pr_op(xrt__prn *b, const xrt_ir_func *f, const xrt_ir_op *op,
                       int indent);

static void xrt__pr_region(xrt__prn *b, const xrt_ir_func *f,
                           const xrt_ir_region *r, int indent) {
  xrt__pr_puts(b, "{\n");
  if (r->num_args) {
    xrt__pr_indent(b, indent);
    xrt__pr_puts(b, "^bb0(");
    for (int32_t i = 0; i < r->num_args; i++) {
      if (i) xrt__pr_puts(b, ", ");
      xrt__pr_arg(b, f, r->args[i]);
    }
    xrt__pr_puts(b, "):\n");
  }
  for (int32_t i = 0; i < r->num_ops; i++) xrt__pr_op(b, f, &r->ops[i], indent + 2);
  xrt__pr_indent(b, indent);
  xrt__pr_puts(b, "}");
}

/* Numbers the op's results: `%N = ` or `%N:k = `. */
static void xrt__pr_results(xrt__prn *b, const xrt_ir_op *op) {
  if (!op->num_results) return;
  int32_t n = b->next_res++;
  for (int32_t i = 0; i < op->num_results; i++) {
    int32_t id = op->results[i];
    if (!xrt__pr_valid(b, id)) {
      b->bad = true;
      continue;
    }
    b->num[id] = n;
    b->sub[id] = op->num_results == 1 ? -1 : i;
  }
  if (op->num_results == 1) xrt__pr_fmt(b, "%%%d = ", (int)n);
  else xrt__pr_fmt(b, "%%%d:%d = ", (int)n, (int)op->num_results);
}

/* "name"(operands) ({regions}) {attributes} : (types) -> types */
static void xrt__pr_op(xrt__prn *b, const xrt_ir_func *f, const xrt_ir_op *op,
                       int indent) {
  bool known = op->code > XRT_OP_INVALID && op->code < XRT_OP_COUNT;
  const char *name = known ? xrt_opcode_name(op->code) : op->name ? op->name : "";
  xrt__pr_indent(b, indent);
  xrt__pr_results(b, op);
  xrt__pr_string(b, name, strlen(name));
  xrt__pr_puts(b, "(");
  for (int32_t i = 0; i < op->num_operands; i++) {
    if (i) xrt__pr_puts(b, ", ");
    xrt__pr_value(b, op->operands[i]);
  }
  xrt__pr_puts(b, ")");
  if (op->num_regions) {
    xrt__pr_puts(b, " (");
    for (int32_t i = 0; i < op->num_regions; i++) {
      if (i) xrt__pr_puts(b, ", ");
      xrt__pr_region(b, f, &op->regions[i], indent);
    }
    xrt__pr_puts(b, ")");
  }
  if (op->num_attrs) { /* regions may have printed other ops' attributes */
    b->code = op->code;
    b->dialect = strncmp(name, "chlo.", 5) == 0 ? "chlo" : "stablehlo";
    b->index_value = op->code == XRT_OP_CONSTANT && op->num_results == 1 &&
                     xrt__pr_valid(b, op->results[0]) &&
                     f->value_types[op->results[0]].shape.dtype == XRT__DT_INDEX;
    xrt__pr_puts(b, " {");
    xrt__pr_entries(b, op->attrs, op->num_attrs, XRT__PR_TOP, NULL);
    xrt__pr_puts(b, "}");
  }
  xrt__pr_puts(b, " : ");
  xrt__pr_types(b, f, op->operands, op->num_operands, false);
  xrt__pr_puts(b, " -> ");
  xrt__pr_types(b, f, op->results, op->num_results, true);
  xrt__pr_puts(b, "\n");
}

/* ---------------------------------------------------------------------
 * Functions and the module
 * ------------------------------------------------------------------- */

/* @name of a function or module: quoted (as written: the parser takes
 * those names raw) when it has other characters. */
static void xrt__pr_sym_name(xrt__prn *b, const char *s) {
  size_t n = strlen(s);
  bool bare = n > 0;
  for (size_t i = 0; bare && i < n; i++) bare = xrt__is_namechar((unsigned char)s[i]);
  if (bare) xrt__pr_fmt(b, "@%s", s);
  else xrt__pr_fmt(b, "@\"%s\"", s);
}

static void xrt__pr_func(xrt__prn *b, const xrt_ir_func *f) {
  size_t bytes = sizeof(int32_t) * (size_t)(f->num_values > 0 ? f->num_values : 1);
  b->num = malloc(bytes);
  b->sub = malloc(bytes);
  if (!b->num || !b->sub) {
    b->oom = true;
  } else {
    memset(b->num, 0xff, bytes); /* -1: not defined yet */
    b->num_values = f->num_values;
    b->next_res = b->next_arg = 0;
    xrt__pr_puts(b, "  func.func ");
    if (!f->is_public) xrt__pr_puts(b, "private ");
    xrt__pr_sym_name(b, f->name ? f->name : "");
    xrt__pr_puts(b, "(");
    for (int32_t i = 0; i < f->body.num_args; i++) {
      if (i) xrt__pr_puts(b, ", ");
      xrt__pr_arg(b, f, f->body.args[i]);
    }
    xrt__pr_puts(b, ")");
    if (f->num_results) {
      xrt__pr_puts(b, " -> ");
      if (f->num_results != 1) xrt__pr_puts(b, "(");
      for (int32_t i = 0; i < f->num_results; i++) {
        if (i) xrt__pr_puts(b, ", ");
        xrt__pr_type(b, &f->result_types[i]);
      }
      if (f->num_results != 1) xrt__pr_puts(b, ")");
    }
    if (f->body.num_ops) { /* else a declaration */
      xrt__pr_puts(b, " {\n");
      for (int32_t i = 0; i < f->body.num_ops; i++)
        xrt__pr_op(b, f, &f->body.ops[i], 4);
      xrt__pr_puts(b, "  }");
    }
    xrt__pr_puts(b, "\n");
  }
  free(b->num);
  free(b->sub);
  b->num = b->sub = NULL;
  b->num_values = 0;
}

/* module [@name] [attributes {...}] { funcs }: the module attributes the IR
 * keeps, where they differ from their defaults. */
static void xrt__pr_module(xrt__prn *b, const xrt_ir_module *m) {
  xrt__pr_puts(b, "module");
  if (m->name && *m->name) {
    xrt__pr_puts(b, " ");
    xrt__pr_sym_name(b, m->name);
  }
  const char *sep = " attributes {";
  if (m->num_partitions != 1) {
    xrt__pr_fmt(b, "%smhlo.num_partitions = %d : i32", sep, (int)m->num_partitions);
    sep = ", ";
  }
  if (m->num_replicas != 1) {
    xrt__pr_fmt(b, "%smhlo.num_replicas = %d : i32", sep, (int)m->num_replicas);
    sep = ", ";
  }
  const char *v = m->stablehlo_version;
  if (v && strcmp(v, XRT__STABLEHLO_VERSION) != 0) {
    xrt__pr_fmt(b, "%sstablehlo.version = ", sep);
    xrt__pr_string(b, v, strlen(v));
    sep = ", ";
  }
  if (sep[0] == ',') xrt__pr_puts(b, "}");
  xrt__pr_puts(b, " {\n");
  for (int32_t i = 0; i < m->num_funcs; i++) xrt__pr_func(b, &m->funcs[i]);
  xrt__pr_puts(b, "}\n");
}

XRT__PRIVATE xrt_status xrt__print_module(const xrt_ir_module *m, char **out_text,
                                          size_t *out_len) {
  xrt__prn b;
  memset(&b, 0, sizeof b);
  b.dialect = "stablehlo";
  xrt__pr_module(&b, m);
  if (b.oom || b.bad) {
    free(b.s);
    return b.oom ? xrt__nomem("the printed program")
                 : xrt__fail(XRT_INVALID_ARGUMENT, "the program uses a value "
                             "it does not define; cannot print it");
  }
  *out_text = b.s;
  if (out_len) *out_len = b.n;
  return XRT_OK;
}

xrt_status xrt_program_print(const xrt_program *program, char **out_text,
                             size_t *out_len) {
  XRT__CHECK_ARG(out_text, "out_text is NULL");
  *out_text = NULL;
  if (out_len) *out_len = 0;
  const xrt_ir_module *m = xrt_program_module(program);
  XRT__CHECK_ARG(m, "invalid program");
  return xrt__print_module(m, out_text, out_len);
}
