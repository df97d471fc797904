/*
 * test_bytecode_crafted.c - the MLIR bytecode container, the builtin
 * dialect's encodings (src/core/bytecode.c) and VHLO's attribute and type
 * encodings (src/core/bytecode_vhlo.c), with artifacts crafted byte by
 * byte: the official VHLO artifacts never hold most builtin attributes and
 * types (they use VHLO's own), nor every VHLO type and attribute (quantized
 * per-axis types, futures, buffers, bounds, sharding axes, accuracies) or
 * their malformed forms, nor older bytecode formats, aligned sections,
 * resources, properties of non-VHLO ops, block arguments or use-lists in
 * every form, so the reader's handling of them, and of each malformed
 * variant, is only reachable this way.  Every accepted artifact is checked
 * against the exact text MLIR's syntax gives for it; every refused one by
 * its message, which names the byte offset.
 */
#include "test_util.h"

#include <stdarg.h>

/* The reader's text for a whole artifact (src/core/bytecode.c; hidden in
 * libxrt.a, as test_bytecode.c declares it too). */
xrt_status xrt__bytecode_to_text(const char *data, size_t len, const char *file,
                                 char **text, size_t *text_len);

/* ---------------------------------------------------------------------
 * A builder of artifacts
 * ------------------------------------------------------------------- */

typedef struct bb {
  unsigned char d[2048];
  size_t n;
} bb;

static void bb_bytes(bb *b, const void *p, size_t n) {
  assert_true(b->n + n <= sizeof b->d);
  memcpy(b->d + b->n, p, n);
  b->n += n;
}

static void bb_byte(bb *b, unsigned v) {
  unsigned char c = (unsigned char)v;
  bb_bytes(b, &c, 1);
}

/* PrefixVarInt (MLIR's encoding; tested against the reader's own errors
 * in test_bytecode.c). */
static void bb_varint(bb *b, uint64_t v) {
  if (v >> 56) { /* the 9-byte form: a zero byte, then 8 bytes */
    bb_byte(b, 0);
    for (int i = 0; i < 8; i++) bb_byte(b, (unsigned)(v >> (8 * i)) & 0xff);
    return;
  }
  int extra = 0;
  while (extra < 8 && v >> (7 * (extra + 1))) extra++;
  uint64_t x = ((v << 1) | 1) << extra;
  for (int i = 0; i <= extra; i++) bb_byte(b, (unsigned)(x >> (8 * i)) & 0xff);
}

/* Signed varint: zigzag, then PrefixVarInt. */
static void bb_svarint(bb *b, int64_t v) {
  bb_varint(b, ((uint64_t)v << 1) ^ (uint64_t)(v >> 63));
}

static void bb_section(bb *b, int id, const bb *body) {
  bb_byte(b, (unsigned)id);
  bb_varint(b, body->n);
  bb_bytes(b, body->d, body->n);
}

enum { MAXE = 300 };

/* One attribute's or type's bytes. */
typedef struct eb {
  unsigned char d[120];
  size_t n;
} eb;

/* An artifact: strings (0 "builtin", 1 "vhlo", 2 "module", 3 "foo", then
 * the test's), dialects builtin, vhlo, foo, one op name (builtin.module),
 * attributes and types each in a group of its own, an IR section and the
 * optional sections. */
typedef struct art {
  uint64_t version;
  const char *producer;
  const char *strs[MAXE];
  int nstr;
  eb ent[2][MAXE]; /* attributes, types */
  unsigned char dial[2][MAXE], custom[2][MAXE];
  int nent[2];
  bb ir, props, res, resoff;
  bool has_props, has_res, has_resoff;
} art;

static void art_init(art *a) {
  memset(a, 0, sizeof *a);
  a->version = 6;
  a->producer = "StableHLO_v1.0.0";
  a->strs[0] = "builtin";
  a->strs[1] = "vhlo";
  a->strs[2] = "module";
  a->strs[3] = "foo";
  a->nstr = 4;
}

static int str_ix(art *a, const char *s) {
  for (int i = 0; i < a->nstr; i++)
    if (!strcmp(a->strs[i], s)) return i;
  assert_true(a->nstr < MAXE);
  a->strs[a->nstr] = s;
  return a->nstr++;
}

/* A new entry (attribute when !type) of dialect d, custom encoded, with
 * the given bytes. */
static int ent_raw(art *a, bool type, int d, bool custom, const bb *b) {
  int k = type ? 1 : 0, i = a->nent[k]++;
  assert_true(i < MAXE);
  assert_true(b->n <= sizeof a->ent[k][i].d);
  memcpy(a->ent[k][i].d, b->d, b->n);
  a->ent[k][i].n = b->n;
  a->dial[k][i] = (unsigned char)d;
  a->custom[k][i] = custom;
  return i;
}

/* A builtin entry of n varints. */
static int ent_v(art *a, bool type, int n, ...) {
  bb b = {{0}, 0};
  va_list ap;
  va_start(ap, n);
  for (int i = 0; i < n; i++) bb_varint(&b, va_arg(ap, uint64_t));
  va_end(ap);
  return ent_raw(a, type, 0, true, &b);
}
/* A VHLO entry of n varints. */
static int ent_vh(art *a, bool type, int n, ...) {
  bb b = {{0}, 0};
  va_list ap;
  va_start(ap, n);
  for (int i = 0; i < n; i++) bb_varint(&b, va_arg(ap, uint64_t));
  va_end(ap);
  return ent_raw(a, type, 1, true, &b);
}
#define ATTR(a, ...) ent_v(a, false, TU_NARGS(__VA_ARGS__), __VA_ARGS__)
#define VATTR(a, ...) ent_vh(a, false, TU_NARGS(__VA_ARGS__), __VA_ARGS__)
#define VTYPE(a, ...) ent_vh(a, true, TU_NARGS(__VA_ARGS__), __VA_ARGS__)
#define TYPE(a, ...) ent_v(a, true, TU_NARGS(__VA_ARGS__), __VA_ARGS__)
#define U(x) ((uint64_t)(x))
#define TU_NARGS(...) TU_NARGS_(__VA_ARGS__, 12, 11, 10, 9, 8, 7, 6, 5, 4, 3, 2, 1, 0)
#define TU_NARGS_(a, b, c, d, e, f, g, h, i, j, k, l, n, ...) n

static int a_str(art *a, const char *s) { /* StringAttr */
  return ATTR(a, U(2), U(str_ix(a, s)));
}

static int t_int(art *a, int width, int sign) { return TYPE(a, U(0), U((width << 2) | sign)); }

static void art_bytes(art *a, bb *out) {
  bb s = {{0}, 0}, d = {{0}, 0}, at = {{0}, 0}, off = {{0}, 0};
  bb_varint(&s, (uint64_t)a->nstr);
  for (int i = a->nstr - 1; i >= 0; i--) bb_varint(&s, strlen(a->strs[i]) + 1);
  for (int i = 0; i < a->nstr; i++) bb_bytes(&s, a->strs[i], strlen(a->strs[i]) + 1);
  bb_varint(&d, 3);
  static const int names[] = {0, 1, 3}; /* builtin, vhlo, foo */
  for (int i = 0; i < 3; i++)
    bb_varint(&d, a->version >= 1 ? (uint64_t)names[i] << 1 : (uint64_t)names[i]);
  if (a->version >= 4) bb_varint(&d, 1); /* size hint */
  bb_varint(&d, 0);                       /* op names of builtin: module */
  bb_varint(&d, 1);
  bb_varint(&d, a->version >= 5 ? (2 << 1) | 1 : 2);
  bb_varint(&off, (uint64_t)a->nent[0]);
  bb_varint(&off, (uint64_t)a->nent[1]);
  for (int k = 0; k < 2; k++)
    for (int i = 0; i < a->nent[k]; i++) {
      bb_bytes(&at, a->ent[k][i].d, a->ent[k][i].n);
      bb_varint(&off, a->dial[k][i]);
      bb_varint(&off, 1);
      bb_varint(&off, (a->ent[k][i].n << 1) | a->custom[k][i]);
    }
  out->n = 0;
  bb_bytes(out, "ML\xefR", 4);
  bb_varint(out, a->version);
  bb_bytes(out, a->producer, strlen(a->producer) + 1);
  bb_section(out, 0, &s);
  bb_section(out, 1, &d);
  bb_section(out, 2, &at);
  bb_section(out, 3, &off);
  bb_section(out, 4, &a->ir);
  if (a->has_res) bb_section(out, 5, &a->res);
  if (a->has_resoff) bb_section(out, 6, &a->resoff);
  if (a->has_props) bb_section(out, 8, &a->props);
}

/* IR: one builtin.module with location loc and attribute dictionary dict
 * (none when < 0). */
static void ir_module(art *a, int loc, int dict) {
  a->ir.n = 0;
  bb_varint(&a->ir, 1 << 1);
  bb_varint(&a->ir, 0);
  bb_byte(&a->ir, dict >= 0 ? 1 : 0);
  bb_varint(&a->ir, (uint64_t)loc);
  if (dict >= 0) bb_varint(&a->ir, (uint64_t)dict);
}

/* A dictionary {name = value} of one entry. */
static int a_dict1(art *a, const char *name, int value) {
  int k = a_str(a, name);
  return ATTR(a, U(1), U(1), U(k), U(value));
}

static int unknown_loc(art *a) { return ATTR(a, U(15)); }

/* The reader's text of the artifact, or NULL with the error saved. */
static char *text_of(art *a) {
  bb out;
  art_bytes(a, &out);
  char *t = NULL;
  size_t n = 0;
  xrt_status s = xrt__bytecode_to_text((const char *)out.d, out.n, "c.bc", &t, &n);
  if (s) {
    tu_save_error();
    return NULL;
  }
  assert_int_equal(strlen(t), n);
  return t;
}

/* Asserts the artifact reads and its text holds want. */
static void expect_text(art *a, const char *want) {
  char *t = text_of(a);
  if (!t) fail_msg("refused: %s", tu_msg);
  TU_ASSERT_CONTAINS(t, want);
  free(t);
}

/* Asserts the artifact is refused with a located message holding what. */
static void expect_error(art *a, const char *what) {
  char *t = text_of(a);
  if (t) fail_msg("read, expected '%s': %s", what, t);
  TU_ASSERT_PREFIX(tu_msg, "c.bc: bytecode offset ");
  TU_ASSERT_CONTAINS(tu_msg, what);
}

/* The module's attribute `x` is the attribute built by f; its text wanted. */
static void expect_attr_text(art *a, int attr, const char *want) {
  ir_module(a, unknown_loc(a), a_dict1(a, "x", attr));
  char full[512];
  snprintf(full, sizeof full, "\"builtin.module\"() <{x = %s}> : () -> ()", want);
  expect_text(a, full);
}

static void expect_attr_error(art *a, int attr, const char *what) {
  ir_module(a, unknown_loc(a), a_dict1(a, "x", attr));
  expect_error(a, what);
}

/* ---------------------------------------------------------------------
 * Builtin attributes
 * ------------------------------------------------------------------- */

static void test_builtin_scalars(void **state) {
  (void)state;
  art a;
  struct {
    int width, sign;
    int64_t v;
    const char *want;
  } ints[] = {
      {32, 0, -5, "-5 : i32"},     {1, 0, 1, "true"},          {1, 0, 0, "false"},
      {8, 0, 0xff, "-1 : i8"},     {8, 2, 200, "200 : ui8"},   {16, 1, -3, "-3 : si16"},
      {64, 0, INT64_MIN, "-9223372036854775808 : i64"},        {7, 0, 0x40, "-64 : i7"},
  };
  for (size_t i = 0; i < sizeof ints / sizeof ints[0]; i++) {
    art_init(&a);
    int t = t_int(&a, ints[i].width, ints[i].sign);
    bb b = {{0}, 0};
    bb_varint(&b, 8);
    bb_varint(&b, (uint64_t)t);
    if (ints[i].width <= 8) bb_byte(&b, (unsigned)ints[i].v & 0xff);
    else bb_svarint(&b, ints[i].v);
    expect_attr_text(&a, ent_raw(&a, false, 0, true, &b), ints[i].want);
  }
  /* index */
  art_init(&a);
  int ti = TYPE(&a, U(1));
  bb b = {{0}, 0};
  bb_varint(&b, 8);
  bb_varint(&b, (uint64_t)ti);
  bb_svarint(&b, 5);
  expect_attr_text(&a, ent_raw(&a, false, 0, true, &b), "5 : index");

  /* floats: bits of 1.5f, 0.1, 1.0 in f16 and bf16, +inf (hex) */
  struct {
    uint64_t code;
    int64_t bits;
    const char *want;
  } fl[] = {
      {5, 0x3FC00000, "1.5 : f32"},
      {6, 0x3FB999999999999A, "0.1 : f64"},
      {4, 0x3C00, "1.0 : f16"},
      {3, 0xC040, "-3.0 : bf16"},
      {5, 0x7F800000, "0x7F800000 : f32"},
  };
  for (size_t i = 0; i < sizeof fl / sizeof fl[0]; i++) {
    art_init(&a);
    int t = TYPE(&a, fl[i].code);
    bb f = {{0}, 0};
    bb_varint(&f, 9);
    bb_varint(&f, (uint64_t)t);
    bb_svarint(&f, fl[i].bits);
    expect_attr_text(&a, ent_raw(&a, false, 0, true, &f), fl[i].want);
  }
  /* a number of a tensor type */
  art_init(&a);
  int tf = TYPE(&a, U(5));
  int tt = TYPE(&a, U(13), U(1), U(4), U(tf)); /* tensor<2xf32> */
  expect_attr_error(&a, ATTR(&a, U(8), U(tt), U(2)), "number of a non-scalar type");
  /* integer widths out of range */
  art_init(&a);
  expect_attr_error(&a, ATTR(&a, U(6), U(t_int(&a, 0, 0))), "integer width out of range");
  art_init(&a);
  expect_attr_error(&a, ATTR(&a, U(6), U(t_int(&a, 65, 0))), "integer width out of range");
}

static void test_builtin_structures(void **state) {
  (void)state;
  art a;
  /* array of a string, unit and a nested array; an empty array */
  art_init(&a);
  int s = a_str(&a, "q\"\n"), u = ATTR(&a, U(7)), e = ATTR(&a, U(0), U(0));
  expect_attr_text(&a, ATTR(&a, U(0), U(3), U(s), U(u), U(e)),
                   "[\"q\\22\\0A\", unit, []]");
  /* a dictionary inside */
  art_init(&a);
  int k1 = a_str(&a, "k"), v1 = ATTR(&a, U(7));
  expect_attr_text(&a, ATTR(&a, U(1), U(1), U(k1), U(v1)), "{\"k\" = unit}");
  /* a dictionary key that is not a string */
  art_init(&a);
  expect_attr_error(&a, ATTR(&a, U(1), U(1), U(ATTR(&a, U(7))), U(ATTR(&a, U(7)))),
                    "expected a name");
  /* a string with a type: the string */
  art_init(&a);
  int t32 = t_int(&a, 32, 0);
  expect_attr_text(&a, ATTR(&a, U(3), U(str_ix(&a, "typed")), U(t32)), "\"typed\"");
  /* symbol references: plain, quoted, nested (refused), not a string */
  art_init(&a);
  expect_attr_text(&a, ATTR(&a, U(4), U(a_str(&a, "main"))), "@main");
  art_init(&a);
  expect_attr_text(&a, ATTR(&a, U(5), U(a_str(&a, "1a-b")), U(0)), "@\"1a-b\"");
  art_init(&a);
  int r = a_str(&a, "outer");
  expect_attr_error(&a, ATTR(&a, U(5), U(r), U(1), U(r)),
                    "nested symbol references are not supported");
  art_init(&a);
  expect_attr_error(&a, ATTR(&a, U(4), U(ATTR(&a, U(7)))), "expected a symbol");
  /* a distinct attribute is the one it wraps */
  art_init(&a);
  expect_attr_text(&a, ATTR(&a, U(21), U(ATTR(&a, U(7)))), "unit");
  /* codes xrt does not read */
  art_init(&a);
  expect_attr_error(&a, ATTR(&a, U(19)), "builtin attribute code 19 is not supported");
  art_init(&a);
  expect_attr_error(&a, ATTR(&a, U(22)), "builtin attribute code 22 is not supported");
  /* a location where a value belongs prints as unit */
  art_init(&a);
  expect_attr_text(&a, ATTR(&a, U(15)), "unit");
}

static void test_builtin_types(void **state) {
  (void)state;
  art a;
  struct {
    const char *want;
  } w[] = {{"(i32, f64) -> (index)"}, {"complex<f32>"}, {"none"},
           {"tensor<2x?xf32, unit>"}, {"tuple<i32, tensor<*xf32>>"},
           {"si8"}, {"tensor<f16>"}, {"bf16"}};
  for (int i = 0; i < 8; i++) {
    art_init(&a);
    int i32 = t_int(&a, 32, 0), f64 = TYPE(&a, U(6)), idx = TYPE(&a, U(1));
    int f32 = TYPE(&a, U(5)), t;
    switch (i) {
    case 0: t = TYPE(&a, U(2), U(2), U(i32), U(f64), U(1), U(idx)); break;
    case 1: t = TYPE(&a, U(9), U(f32)); break;
    case 2: t = TYPE(&a, U(12)); break;
    case 3: {
      int unit = ATTR(&a, U(7));
      bb b = {{0}, 0};
      bb_varint(&b, 14);
      bb_varint(&b, (uint64_t)unit);
      bb_varint(&b, 2);
      bb_svarint(&b, 2);
      bb_svarint(&b, INT64_MIN); /* MLIR's dynamic size */
      bb_varint(&b, (uint64_t)f32);
      t = ent_raw(&a, true, 0, true, &b);
      break;
    }
    case 4: {
      int un = TYPE(&a, U(18), U(f32));
      t = TYPE(&a, U(15), U(2), U(i32), U(un));
      break;
    }
    case 5: t = t_int(&a, 8, 1); break;
    case 6: t = TYPE(&a, U(13), U(0), U(TYPE(&a, U(4)))); break;
    default: t = TYPE(&a, U(3)); break;
    }
    expect_attr_text(&a, ATTR(&a, U(6), U(t)), w[i].want);
  }
  art_init(&a);
  expect_attr_error(&a, ATTR(&a, U(6), U(TYPE(&a, U(7)))),
                    "builtin type code 7 is not supported");
  /* a type index out of range */
  art_init(&a);
  expect_attr_error(&a, ATTR(&a, U(6), U(9)), "type index 9 out of range (0 types)");
  /* a type that refers to itself */
  art_init(&a);
  expect_attr_error(&a, ATTR(&a, U(6), U(TYPE(&a, U(9), U(0)))), "a type refers to itself");
  /* a type in assembly text (not custom): verbatim */
  art_init(&a);
  bb tx = {{0}, 0};
  bb_bytes(&tx, "!my.type<3>", 12);
  expect_attr_text(&a, ATTR(&a, U(6), U(ent_raw(&a, true, 0, false, &tx))), "!my.type<3>");
  art_init(&a);
  tx.n = 0;
  bb_bytes(&tx, "#my.attr", 8); /* no NUL */
  expect_attr_error(&a, ent_raw(&a, false, 0, false, &tx),
                    "unterminated attribute or type text");
  /* an attribute of a dialect xrt cannot read */
  art_init(&a);
  bb fo = {{0}, 0};
  bb_varint(&fo, 1);
  expect_attr_error(&a, ent_raw(&a, false, 2, true, &fo),
                    "an attribute of dialect 'foo' in an encoding xrt cannot read");
  art_init(&a);
  expect_attr_error(&a, ATTR(&a, U(6), U(ent_raw(&a, true, 2, true, &fo))),
                    "a type of dialect 'foo'");
  /* stray bytes after an entry */
  art_init(&a);
  expect_attr_error(&a, ATTR(&a, U(7), U(0)), "1 stray bytes after an attribute");
}

static void test_builtin_dense(void **state) {
  (void)state;
  art a;
  /* dense array of i16: 1, -2, 3 */
  art_init(&a);
  int i16 = t_int(&a, 16, 0);
  bb b = {{0}, 0};
  bb_varint(&b, 17);
  bb_varint(&b, (uint64_t)i16);
  bb_varint(&b, 3);
  bb_varint(&b, 6);
  bb_bytes(&b, "\x01\x00\xfe\xff\x03\x00", 6);
  expect_attr_text(&a, ent_raw(&a, false, 0, true, &b), "array<i16: 1, -2, 3>");
  /* dense elements: tensor<2xi8> 0x7f, 0x80; an empty one */
  art_init(&a);
  int i8 = t_int(&a, 8, 0);
  int t2 = TYPE(&a, U(13), U(1), U(4), U(i8));
  b.n = 0;
  bb_varint(&b, 18);
  bb_varint(&b, (uint64_t)t2);
  bb_varint(&b, 2);
  bb_bytes(&b, "\x7f\x80", 2);
  expect_attr_text(&a, ent_raw(&a, false, 0, true, &b), "dense<\"0x7F80\"> : tensor<2xi8>");
  art_init(&a);
  int t0 = TYPE(&a, U(13), U(1), U(0), U(t_int(&a, 8, 0)));
  expect_attr_text(&a, ATTR(&a, U(18), U(t0), U(0)), "dense<> : tensor<0xi8>");
  /* a blob longer than its entry */
  art_init(&a);
  expect_attr_error(&a, ATTR(&a, U(18), U(TYPE(&a, U(1))), U(5)), "5 bytes needed, 0 left");
}

/* A resource section: one external group (skipped) and one builtin
 * group holding a blob (kind 2) and a non-blob entry. */
static void add_resources(art *a) {
  a->has_res = a->has_resoff = true;
  a->res.n = a->resoff.n = 0;
  bb_bytes(&a->res, "zz", 2);                   /* external entry */
  bb_bytes(&a->res, "\x03\x05\xAA\xBB", 4); /* align 1, size 2, AA BB */
  bb_bytes(&a->res, "q", 1);                    /* a string entry */
  bb_varint(&a->resoff, 1);                     /* one external group */
  bb_varint(&a->resoff, (uint64_t)str_ix(a, "ext"));
  bb_varint(&a->resoff, 1);
  bb_varint(&a->resoff, (uint64_t)str_ix(a, "e0"));
  bb_varint(&a->resoff, 2);
  bb_byte(&a->resoff, 2);
  bb_varint(&a->resoff, 0); /* dialect builtin: two entries */
  bb_varint(&a->resoff, 2);
  bb_varint(&a->resoff, (uint64_t)str_ix(a, "blob"));
  bb_varint(&a->resoff, 4);
  bb_byte(&a->resoff, 2);
  bb_varint(&a->resoff, (uint64_t)str_ix(a, "str"));
  bb_varint(&a->resoff, 1);
  bb_byte(&a->resoff, 3);
}

static void test_resources(void **state) {
  (void)state;
  art a;
  art_init(&a);
  add_resources(&a);
  int t = TYPE(&a, U(13), U(1), U(4), U(t_int(&a, 8, 0)));
  expect_attr_text(&a, ATTR(&a, U(16), U(t), U(0)), "dense<\"0xAABB\"> : tensor<2xi8>");
  /* the non-blob entry has no bytes */
  art_init(&a);
  add_resources(&a);
  t = TYPE(&a, U(13), U(1), U(0), U(t_int(&a, 8, 0)));
  expect_attr_text(&a, ATTR(&a, U(16), U(t), U(1)), "dense<> : tensor<0xi8>");
  art_init(&a);
  add_resources(&a);
  t = TYPE(&a, U(13), U(1), U(0), U(t_int(&a, 8, 0)));
  expect_attr_error(&a, ATTR(&a, U(16), U(t), U(2)), "resource index out of range");
  /* one of the pair alone */
  art_init(&a);
  add_resources(&a);
  a.has_resoff = false;
  ir_module(&a, unknown_loc(&a), -1);
  expect_error(&a, "a resource section without its pair");
  art_init(&a);
  add_resources(&a);
  a.has_res = false;
  ir_module(&a, unknown_loc(&a), -1);
  expect_error(&a, "a resource section without its pair");
  /* a group of a dialect that does not exist */
  art_init(&a);
  add_resources(&a);
  a.resoff.d[6] = (3 << 1) | 1; /* the builtin group's dialect: 3 */
  ir_module(&a, unknown_loc(&a), -1);
  expect_error(&a, "dialect index out of range");
}

/* ---------------------------------------------------------------------
 * Locations
 * ------------------------------------------------------------------- */

static void test_locations(void **state) {
  (void)state;
  art a;
  art_init(&a);
  int f = a_str(&a, "f.mlir");
  int fl = ATTR(&a, U(11), U(f), U(3), U(4));
  int un = unknown_loc(&a);
  int nm = ATTR(&a, U(14), U(a_str(&a, "nm")), U(fl));
  int cs = ATTR(&a, U(10), U(nm), U(un));
  int fu = ATTR(&a, U(12), U(2), U(un), U(cs));
  int fm = ATTR(&a, U(13), U(1), U(fu), U(ATTR(&a, U(7))));
  ir_module(&a, fm, -1);
  expect_text(&a, "\"builtin.module\"() : () -> ()");
  /* through xrt_program_parse, a parse error of the op's text is reported
   * at the location the artifact gives: f.mlir:3:4 */
  bb out;
  art_bytes(&a, &out);
  xrt_compile_options o;
  xrt_compile_options_init(&o);
  o.filename = "c.bc";
  xrt_program *p = NULL;
  ir_module(&a, fm, a_dict1(&a, "x", ATTR(&a, U(7))));
  art_bytes(&a, &out);
  xrt_status s = xrt_program_parse((const char *)out.d, out.n, &o, &p);
  if (s == XRT_OK) {
    xrt_program_release(p);
  } else {
    TU_ASSERT_PREFIX(xrt_last_error(), "f.mlir:3:4: ");
  }
  /* with no file in the location: the op's offset */
  ir_module(&a, un, a_dict1(&a, "x", ATTR(&a, U(7))));
  art_bytes(&a, &out);
  p = NULL;
  s = xrt_program_parse((const char *)out.d, out.n, &o, &p);
  if (s == XRT_OK) xrt_program_release(p);
  else TU_ASSERT_PREFIX(xrt_last_error(), "c.bc: bytecode offset ");

  /* a location that is not one; a file name that is not a string; a name
   * that is not a string */
  art_init(&a);
  ir_module(&a, ATTR(&a, U(7)), -1);
  expect_error(&a, "expected a location");
  art_init(&a);
  ir_module(&a, ATTR(&a, U(11), U(ATTR(&a, U(7))), U(1), U(1)), -1);
  expect_error(&a, "expected a file name");
  art_init(&a);
  ir_module(&a, ATTR(&a, U(14), U(ATTR(&a, U(7))), U(unknown_loc(&a))), -1);
  expect_error(&a, "expected a name");
  art_init(&a);
  ir_module(&a, ATTR(&a, U(10), U(unknown_loc(&a)), U(ATTR(&a, U(7)))), -1);
  expect_error(&a, "expected a location");
  /* the op's attributes not a dictionary */
  art_init(&a);
  ir_module(&a, unknown_loc(&a), ATTR(&a, U(7)));
  expect_error(&a, "op attributes are not a dictionary");
}

/* ---------------------------------------------------------------------
 * The container: header, sections, tables
 * ------------------------------------------------------------------- */

static void test_formats(void **state) {
  (void)state;
  /* every format from 0 to 6 reads the same module */
  for (uint64_t v = 0; v <= 6; v++) {
    art a;
    art_init(&a);
    a.version = v;
    ir_module(&a, unknown_loc(&a), a_dict1(&a, "x", ATTR(&a, U(7))));
    expect_text(&a, "\"builtin.module\"() <{x = unit}> : () -> ()");
  }
  /* a producer whose version does not parse */
  art a;
  art_init(&a);
  a.producer = "StableHLO_vx.y";
  ir_module(&a, unknown_loc(&a), -1);
  expect_error(&a, "not a StableHLO portable artifact (producer 'StableHLO_vx.y')");
  /* no NUL after the producer */
  bb b = {{0}, 0};
  bb_bytes(&b, "ML\xefR\x0dStableHLO", 14);
  char *t = NULL;
  assert_int_not_equal(xrt__bytecode_to_text((const char *)b.d, b.n, NULL, &t, NULL), XRT_OK);
  TU_ASSERT_PREFIX(xrt_last_error(), "<input>: bytecode offset 5: unterminated producer");
  assert_null(t);
}

/* Bytes of an artifact with the sections given raw. */
static void raw_artifact(bb *out, const bb *secs, int n) {
  out->n = 0;
  bb_bytes(out, "ML\xefR\x0dStableHLO_v1.0.0", 22);
  for (int i = 0; i < n; i++) bb_bytes(out, secs[i].d, secs[i].n);
}

static void expect_raw_error(const bb *b, const char *what) {
  char *t = NULL;
  xrt_status s = xrt__bytecode_to_text((const char *)b->d, b->n, "c.bc", &t, NULL);
  if (s == XRT_OK) {
    fail_msg("read, expected '%s': %s", what, t);
  }
  TU_ASSERT_PREFIX(xrt_last_error(), "c.bc: bytecode offset ");
  TU_ASSERT_CONTAINS(xrt_last_error(), what);
}

static void test_sections(void **state) {
  (void)state;
  art a;
  bb full, one[2];
  /* an aligned section (id | 0x80, alignment 8, 0xCB padding) reads */
  art_init(&a);
  ir_module(&a, unknown_loc(&a), -1);
  art_bytes(&a, &full);
  /* the IR section is last: rewrite it aligned */
  size_t irlen = a.ir.n, ir_at = full.n - irlen - 2; /* id, 1-byte length */
  assert_int_equal(full.d[ir_at], 4);
  full.n = ir_at;
  bb_byte(&full, 0x84);
  bb_varint(&full, irlen);
  bb_varint(&full, 8);
  while (full.n % 8) bb_byte(&full, 0xCB);
  bb_bytes(&full, a.ir.d, irlen);
  char *t = NULL;
  assert_int_equal(xrt__bytecode_to_text((const char *)full.d, full.n, "c.bc", &t, NULL),
                   XRT_OK);
  TU_ASSERT_CONTAINS(t, "\"builtin.module\"() : () -> ()");
  free(t);
  /* bad alignments: 3, 8192; padding not 0xCB */
  static const uint64_t aligns[] = {3, 8192, 0};
  for (int i = 0; i < 3; i++) {
    full.n = ir_at;
    bb_byte(&full, 0x84);
    bb_varint(&full, irlen);
    bb_varint(&full, aligns[i]);
    expect_raw_error(&full, "bad alignment");
  }
  full.n = ir_at;
  bb_byte(&full, 0x84);
  bb_varint(&full, irlen);
  bb_varint(&full, 4096);
  bb_byte(&full, 0x00);
  expect_raw_error(&full, "expected alignment padding (0xCB)");
  /* an unknown section id, a section twice, a missing section */
  one[0].n = 0;
  bb_bytes(&one[0], "\x09\x01", 2);
  raw_artifact(&full, one, 1);
  expect_raw_error(&full, "unknown section id 9");
  one[0].n = 0;
  bb_bytes(&one[0], "\x00\x03\x01", 3); /* an empty string section */
  one[1] = one[0];
  raw_artifact(&full, one, 2);
  expect_raw_error(&full, "section 0 appears twice");
  raw_artifact(&full, one, 1);
  expect_raw_error(&full, "section 1 is missing");
}

/* A section with a body of varints. */
static void sec_v(bb *out, int id, int n, ...) {
  bb b = {{0}, 0};
  va_list ap;
  va_start(ap, n);
  for (int i = 0; i < n; i++) bb_varint(&b, va_arg(ap, uint64_t));
  va_end(ap);
  out->n = 0;
  bb_section(out, id, &b);
}

/* A section of raw bytes. */
static void sec_raw(bb *out, int id, const char *bytes, size_t n) {
  bb b = {{0}, 0};
  bb_bytes(&b, bytes, n);
  out->n = 0;
  bb_section(out, id, &b);
}

static void test_tables(void **state) {
  (void)state;
  bb full, s[5];
  /* string section: a zero length, a length past the data, no NUL, stray
   * bytes (varints: 0x01 = 0, 0x03 = 1, 0x05 = 2) */
  sec_raw(&s[1], 1, "\x01\x01", 2); /* no dialects, a size hint */
  sec_v(&s[2], 2, 0);
  sec_v(&s[3], 3, 2, U(0), U(0));
  sec_v(&s[4], 4, 1, U(0));
  static const struct {
    const char *b;
    size_t n;
    const char *what;
  } strs[] = {
      {"\x03\x01", 2, "string 0 has a bad length"},
      {"\x03\x05", 2, "string 0 has a bad length"},
      {"\x03\x05" "ab", 4, "string 0 is not NUL-terminated"},
      {"\x03\x05" "xya\0", 6, "2 stray bytes in the string section"},
  };
  for (int i = 0; i < 4; i++) {
    sec_raw(&s[0], 0, strs[i].b, strs[i].n);
    raw_artifact(&full, s, 5);
    expect_raw_error(&full, strs[i].what);
  }
  /* dialects: name index out of range; a version that is not a section of
   * dialect versions; an op name of an unknown dialect or string */
  sec_raw(&s[0], 0, "\x03\x05" "a\0", 4);
  sec_v(&s[1], 1, 3, U(1), U(5 << 1), U(0));
  raw_artifact(&full, s, 5);
  expect_raw_error(&full, "dialect name index out of range");
  sec_raw(&s[1], 1, "\x03\x03\x00\x01\x01", 5);
  raw_artifact(&full, s, 5);
  expect_raw_error(&full, "expected a dialect version section");
  /* a versioned dialect with its version section reads */
  sec_raw(&s[1], 1, "\x03\x03\x07\x01\x01", 5);
  raw_artifact(&full, s, 5);
  char *t = NULL;
  assert_int_equal(xrt__bytecode_to_text((const char *)full.d, full.n, "c.bc", &t, NULL),
                   XRT_OK);
  assert_string_equal(t, "\n");
  free(t);
  sec_v(&s[1], 1, 5, U(1), U(0 << 1), U(0), U(4), U(1));
  raw_artifact(&full, s, 5);
  expect_raw_error(&full, "dialect index out of range");
  sec_v(&s[1], 1, 6, U(1), U(0 << 1), U(0), U(0), U(1), U(7 << 1));
  raw_artifact(&full, s, 5);
  expect_raw_error(&full, "op name index out of range");
  /* attribute/type offsets: more than they hold, a dialect out of range,
   * more entries than declared, past the section, stray bytes */
  sec_v(&s[1], 1, 3, U(1), U(0 << 1), U(0));
  sec_v(&s[3], 3, 2, U(5), U(0));
  raw_artifact(&full, s, 5);
  expect_raw_error(&full, "more attributes and types than the offsets hold");
  sec_v(&s[3], 3, 5, U(1), U(0), U(3), U(1), U(1));
  raw_artifact(&full, s, 5);
  expect_raw_error(&full, "dialect index out of range");
  sec_v(&s[3], 3, 6, U(1), U(0), U(0), U(2), U(1), U(1));
  raw_artifact(&full, s, 5);
  expect_raw_error(&full, "more entries than declared");
  sec_v(&s[3], 3, 5, U(1), U(0), U(0), U(1), U(9));
  raw_artifact(&full, s, 5);
  expect_raw_error(&full, "entry runs past the attribute/type section");
  sec_v(&s[3], 3, 3, U(0), U(0), U(0));
  raw_artifact(&full, s, 5);
  expect_raw_error(&full, "stray bytes after the offsets");
  /* a count larger than the data */
  sec_v(&s[3], 3, 2, U(0), U(0));
  sec_v(&s[4], 4, 1, U(0));
  sec_v(&s[1], 1, 1, U(9));
  raw_artifact(&full, s, 5);
  expect_raw_error(&full, "count 9 exceeds the data left (0 bytes)");
  /* the top-level block with arguments; stray bytes after the IR */
  sec_v(&s[1], 1, 2, U(0), U(0));
  sec_v(&s[4], 4, 1, U(1));
  raw_artifact(&full, s, 5);
  expect_raw_error(&full, "the top-level block has arguments");
  sec_v(&s[4], 4, 2, U(0), U(0));
  raw_artifact(&full, s, 5);
  expect_raw_error(&full, "stray bytes after the IR");
  /* properties: stray bytes */
  sec_v(&s[4], 4, 1, U(0));
  sec_v(&s[2], 8, 3, U(1), U(0), U(0));
  s[3].n = 0;
  bb_section(&s[3], 2, &(bb){{0}, 0});
  bb tmp;
  sec_v(&tmp, 3, 2, U(0), U(0));
  bb_bytes(&s[3], tmp.d, tmp.n);
  raw_artifact(&full, s, 5);
  expect_raw_error(&full, "stray bytes after the properties");
}

/* ---------------------------------------------------------------------
 * The IR: ops, regions, blocks, values, properties, use-lists
 * ------------------------------------------------------------------- */

/* op: builtin.module, mask, location (unknown), then the rest given. */
static void op_head(bb *ir, unsigned mask, int loc) {
  bb_varint(ir, 0);
  bb_byte(ir, mask);
  bb_varint(ir, (uint64_t)loc);
}

static void test_regions(void **state) {
  (void)state;
  art a;
  for (uint64_t v = 2; v <= 6; v++) {
    /* %0 = module() ({ ^bb0(%1: i32): %2 = module(%1, %3) ; %3 = module() })
     * in an isolated region; then a second block ^bb1 without arguments */
    art_init(&a);
    a.version = v;
    int un = unknown_loc(&a), i32 = t_int(&a, 32, 0);
    bb reg = {{0}, 0};
    bb_varint(&reg, 2); /* two blocks */
    bb_varint(&reg, 3); /* three values */
    bb_varint(&reg, (2 << 1) | 1); /* block 0: two ops, arguments */
    bb_varint(&reg, 1);
    if (v >= 4) {
      bb_varint(&reg, ((uint64_t)i32 << 1) | 1);
      bb_varint(&reg, (uint64_t)un);
    } else {
      bb_varint(&reg, (uint64_t)i32);
      bb_varint(&reg, (uint64_t)un);
    }
    if (v >= 3) bb_byte(&reg, 0); /* no use-lists of the arguments */
    op_head(&reg, 2 | 4 | (v >= 3 ? 32 : 0), un);
    bb_varint(&reg, 1);
    bb_varint(&reg, (uint64_t)i32);
    bb_varint(&reg, 2);
    bb_varint(&reg, 0); /* %1 */
    bb_varint(&reg, 2); /* value 2: a forward reference */
    if (v >= 3) { /* use-lists: one result, 1 entry */
      bb_varint(&reg, 2 << 1);
      bb_varint(&reg, 0);
      bb_varint(&reg, 1);
    }
    op_head(&reg, 2, un);
    bb_varint(&reg, 1);
    bb_varint(&reg, (uint64_t)i32);
    bb_varint(&reg, 0); /* block 1: no ops, no arguments */
    a.ir.n = 0;
    bb_varint(&a.ir, 1 << 1);
    op_head(&a.ir, 2 | 16, un);
    bb_varint(&a.ir, 1);
    bb_varint(&a.ir, (uint64_t)i32);
    bb_varint(&a.ir, (1 << 1) | 1); /* one isolated region */
    if (v >= 2) bb_section(&a.ir, 4, &reg);
    else bb_bytes(&a.ir, reg.d, reg.n);
    /* text ids in the order the reader meets values: the forward
     * reference (typed none until defined) before the result */
    expect_text(&a, "%0 = \"builtin.module\"() ({\n  ^bb0(%1: i32):\n"
                    "    %3 = \"builtin.module\"(%1, %2) : (i32, none) -> (i32)\n"
                    "    %2 = \"builtin.module\"() : () -> (i32)\n  ^bb1:\n}) : () -> (i32)");
  }
  /* a region's value used but never defined; defined twice; too many */
  art_init(&a);
  int un = unknown_loc(&a), i32 = t_int(&a, 32, 0);
  for (int c = 0; c < 5; c++) {
    bb reg = {{0}, 0};
    bb_varint(&reg, 1);
    bb_varint(&reg, c == 2 ? 1 : 2); /* values */
    bb_varint(&reg, (c == 3 ? 1 : 2) << 1);
    if (c == 0) { /* uses value 1, never defined */
      op_head(&reg, 4, un);
      bb_varint(&reg, 1);
      bb_varint(&reg, 1);
      op_head(&reg, 0, un);
    } else if (c == 1 || c == 2) { /* two results in a 1 or 2-value region,
                                    * then a third */
      op_head(&reg, 2, un);
      bb_varint(&reg, 2);
      bb_varint(&reg, (uint64_t)i32);
      bb_varint(&reg, (uint64_t)i32);
      op_head(&reg, 2, un);
      bb_varint(&reg, 1);
      bb_varint(&reg, (uint64_t)i32);
    } else if (c == 3) { /* an operand index past the values */
      op_head(&reg, 4, un);
      bb_varint(&reg, 1);
      bb_varint(&reg, 5);
    } else { /* successors */
      op_head(&reg, 8, un);
      op_head(&reg, 0, un);
    }
    a.ir.n = 0;
    bb_varint(&a.ir, 1 << 1);
    op_head(&a.ir, 16, un);
    bb_varint(&a.ir, 1 << 1); /* one region, not isolated */
    bb_bytes(&a.ir, reg.d, reg.n);
    static const char *const want[] = {
        "value 1 is used but never defined",
        "more values defined than the region declares",
        "more values defined than the region declares",
        "value index 5 out of range (2 values)",
        "ops with successor blocks are not supported"};
    expect_error(&a, want[c]);
  }
  /* an isolated region whose section is not an IR section; stray bytes
   * in it; more regions than the data */
  art_init(&a);
  un = unknown_loc(&a);
  bb reg = {{0}, 0};
  bb_varint(&reg, 0);
  for (int c = 0; c < 3; c++) {
    a.ir.n = 0;
    bb_varint(&a.ir, 1 << 1);
    op_head(&a.ir, 16, un);
    if (c == 2) {
      bb_varint(&a.ir, (uint64_t)99 << 1);
      expect_error(&a, "more regions than the data holds");
      continue;
    }
    bb_varint(&a.ir, (1 << 1) | 1);
    bb reg2 = reg;
    if (c == 1) bb_byte(&reg2, 0x55);
    bb_section(&a.ir, c == 0 ? 0 : 4, &reg2);
    expect_error(&a, c == 0 ? "expected an IR section for a region"
                            : "stray bytes after a region");
  }
  /* an empty region; a bad op mask */
  a.ir.n = 0;
  bb_varint(&a.ir, 1 << 1);
  op_head(&a.ir, 16, un);
  bb_varint(&a.ir, 1 << 1);
  bb_varint(&a.ir, 0);
  expect_text(&a, "\"builtin.module\"() ({\n}) : () -> ()");
  a.ir.n = 0;
  bb_varint(&a.ir, 1 << 1);
  op_head(&a.ir, 0x80, un);
  expect_error(&a, "bad op encoding mask 0x80");
  /* block arguments: a type index out of range (format 6) */
  a.ir.n = 0;
  bb_varint(&a.ir, 1 << 1);
  op_head(&a.ir, 16, un);
  bb_varint(&a.ir, 1 << 1);
  bb_varint(&a.ir, 1); /* one block */
  bb_varint(&a.ir, 1); /* one value */
  bb_varint(&a.ir, 1); /* no ops, arguments */
  bb_varint(&a.ir, 1); /* one argument */
  bb_varint(&a.ir, 40 << 1);
  expect_error(&a, "type index out of range");
}

static void test_uselists(void **state) {
  (void)state;
  art a;
  art_init(&a);
  int un = unknown_loc(&a), i32 = t_int(&a, 32, 0);
  /* two results: a count, then per entry its result index and order */
  for (int c = 0; c < 3; c++) {
    a.ir.n = 0;
    bb_varint(&a.ir, 1 << 1);
    op_head(&a.ir, 2 | 32, un);
    bb_varint(&a.ir, 2);
    bb_varint(&a.ir, (uint64_t)i32);
    bb_varint(&a.ir, (uint64_t)i32);
    bb_varint(&a.ir, 1);
    bb_varint(&a.ir, c == 1 ? 2 : 1); /* result index */
    bb_varint(&a.ir, c == 2 ? 50 << 1 : 2 << 1);
    bb_varint(&a.ir, 1);
    bb_varint(&a.ir, 0);
    if (c == 0) expect_text(&a, "%0, %1 = \"builtin.module\"() : () -> (i32, i32)");
    else expect_error(&a, c == 1 ? "use-list value index out of range"
                                 : "use-list longer than the data left");
  }
  /* block arguments with use-lists */
  a.ir.n = 0;
  bb_varint(&a.ir, 1 << 1);
  op_head(&a.ir, 16, un);
  bb_varint(&a.ir, 1 << 1); /* one region: one block, one value */
  bb_varint(&a.ir, 1);
  bb_varint(&a.ir, 1);
  bb_varint(&a.ir, 1); /* no ops, arguments: one */
  bb_varint(&a.ir, 1);
  bb_varint(&a.ir, (uint64_t)i32 << 1);
  bb_byte(&a.ir, 1);
  bb_varint(&a.ir, 1 << 1);
  bb_varint(&a.ir, 0);
  expect_text(&a, "^bb0(%0: i32):");
}

static void test_properties(void **state) {
  (void)state;
  art a;
  art_init(&a);
  int un = unknown_loc(&a), nm = a_str(&a, "m");
  /* builtin.module's properties: sym_name set, sym_visibility absent */
  a.has_props = true;
  bb_varint(&a.props, 2);
  bb_varint(&a.props, 2); /* blob 0: two entries */
  bb_varint(&a.props, ((uint64_t)nm << 1) | 1);
  bb_varint(&a.props, 0);
  bb_varint(&a.props, 1); /* blob 1: an index past the attributes */
  bb_varint(&a.props, (40 << 1) | 1);
  a.ir.n = 0;
  bb_varint(&a.ir, 1 << 1);
  op_head(&a.ir, 64, un);
  bb_varint(&a.ir, 0);
  expect_text(&a, "\"builtin.module\"() <{sym_name = \"m\"}> : () -> ()");
  a.ir.n = 0;
  bb_varint(&a.ir, 1 << 1);
  op_head(&a.ir, 64, un);
  bb_varint(&a.ir, 1);
  expect_error(&a, "attribute index out of range");
  a.ir.n = 0;
  bb_varint(&a.ir, 1 << 1);
  op_head(&a.ir, 64, un);
  bb_varint(&a.ir, 2);
  expect_error(&a, "properties index 2 out of range");
  a.version = 4;
  a.ir.n = 0;
  bb_varint(&a.ir, 1 << 1);
  op_head(&a.ir, 64, un);
  bb_varint(&a.ir, 0);
  expect_error(&a, "properties before format 5");
  /* three properties: more than builtin.module has */
  a.version = 6;
  a.props.n = 0;
  bb_varint(&a.props, 1);
  bb_varint(&a.props, 3);
  bb_varint(&a.props, 0);
  bb_varint(&a.props, 0);
  bb_varint(&a.props, 0);
  a.ir.n = 0;
  bb_varint(&a.ir, 1 << 1);
  op_head(&a.ir, 64, un);
  bb_varint(&a.ir, 0);
  expect_error(&a, "builtin.module has more properties (3) than xrt knows");
  /* one: fewer than it has */
  a.props.n = 0;
  bb_varint(&a.props, 1);
  bb_varint(&a.props, 1);
  bb_varint(&a.props, 0);
  expect_error(&a, "builtin.module has fewer properties (1) than xrt knows");
}


/* ---------------------------------------------------------------------
 * VHLO types and attributes
 * ------------------------------------------------------------------- */

static int vt(art *a, int code) { return VTYPE(a, U(code)); }

/* An f64 scale's bits as MLIR writes an APFloat of 64 bits: a signed
 * varint of the bit pattern. */
static void bb_f64(bb *b, double d) {
  int64_t bits;
  memcpy(&bits, &d, sizeof bits);
  bb_svarint(b, bits);
}

static void test_vhlo_types(void **state) {
  (void)state;
  for (int i = 0; i < 12; i++) {
    art a;
    art_init(&a);
    int f32 = vt(&a, 4), i8 = vt(&a, 11), t = -1;
    bb b = {{0}, 0};
    const char *want = NULL;
    switch (i) {
    case 0: t = VTYPE(&a, U(1), U(f32)); want = "complex<f32>"; break;
    case 1:
      t = VTYPE(&a, U(8), U(2), U(i8), U(vt(&a, 0)), U(0));
      want = "(i8, i1) -> ()";
      break;
    case 2: {
      int bnd = VATTR(&a, U(18), U(1), U(8)); /* bounds<4>: svarint 4 */
      bb_varint(&b, 21);
      bb_varint(&b, (uint64_t)bnd);
      bb_varint(&b, 1);
      bb_svarint(&b, INT64_MIN);
      bb_varint(&b, (uint64_t)f32);
      t = ent_raw(&a, true, 1, true, &b);
      want = "tensor<?xf32, #stablehlo.bounds<4>>";
      break;
    }
    case 3:
      t = VTYPE(&a, U(23), U(2), U(vt(&a, 0)), U(vt(&a, 22)));
      want = "tuple<i1, !stablehlo.token>";
      break;
    case 4: t = VTYPE(&a, U(42), U(1), U(f32)); want = "!stablehlo.future<f32>"; break;
    case 5: /* i8 storage, f32 expressed, scale 0.5, zero point 3, full range */
      bb_varint(&b, 24);
      bb_varint(&b, 1);
      bb_varint(&b, (uint64_t)i8);
      bb_varint(&b, (uint64_t)f32);
      bb_f64(&b, 0.5);
      bb_svarint(&b, 3);
      bb_svarint(&b, -128);
      bb_svarint(&b, 127);
      t = ent_raw(&a, true, 1, true, &b);
      want = "!quant.uniform<i8:f32, 0.5:3>";
      break;
    case 6: /* per axis 1, range [-100, 100], scales 0.5, 0.25, zps 0, 2 */
      bb_varint(&b, 30);
      bb_varint(&b, 1);
      bb_varint(&b, (uint64_t)i8);
      bb_varint(&b, (uint64_t)f32);
      bb_varint(&b, 1);
      bb_svarint(&b, -100);
      bb_svarint(&b, 100);
      bb_varint(&b, 2);
      bb_f64(&b, 0.5);
      bb_f64(&b, 0.25);
      bb_varint(&b, 2);
      bb_svarint(&b, 0);
      bb_svarint(&b, 2);
      t = ent_raw(&a, true, 1, true, &b);
      want = "!quant.uniform<i8<-100:100>:f32:1, {0.5, 0.25:2}>";
      break;
    case 7: /* unsigned storage, 8 bits: full range 0..255 */
      bb_varint(&b, 24);
      bb_varint(&b, 0);
      bb_varint(&b, (uint64_t)vt(&a, 16));
      bb_varint(&b, (uint64_t)f32);
      bb_f64(&b, 2.0);
      bb_svarint(&b, 0);
      bb_svarint(&b, 0);
      bb_svarint(&b, 255);
      t = ent_raw(&a, true, 1, true, &b);
      want = "!quant.uniform<u8:f32, 2.0>";
      break;
    case 8: t = VTYPE(&a, U(25), U(f32)); want = "tensor<*xf32>"; break;
    case 9:
      b.n = 0;
      bb_varint(&b, 41);
      bb_varint(&b, 1);
      bb_svarint(&b, 2);
      bb_varint(&b, (uint64_t)f32);
      t = ent_raw(&a, true, 1, true, &b);
      want = "memref<2xf32>";
      break;
    case 10: t = vt(&a, 26); want = "!shape.witness"; break;
    default: t = vt(&a, 40); want = "f8E8M0FNU"; break;
    }
    expect_attr_text(&a, VATTR(&a, U(17), U(t)), want);
  }
  art a;
  /* malformed: a complex of a tensor, zero points that do not match the
   * scales, an unknown code */
  art_init(&a);
  int f32 = vt(&a, 4);
  int ten = VTYPE(&a, U(20), U(0), U(f32));
  expect_attr_error(&a, VATTR(&a, U(17), U(VTYPE(&a, U(1), U(ten)))),
                    "expected an integer or floating-point type");
  art_init(&a);
  f32 = vt(&a, 4);
  bb b = {{0}, 0};
  bb_varint(&b, 30);
  bb_varint(&b, 1);
  bb_varint(&b, (uint64_t)vt(&a, 11));
  bb_varint(&b, (uint64_t)f32);
  bb_varint(&b, 0);
  bb_svarint(&b, -128);
  bb_svarint(&b, 127);
  bb_varint(&b, 2);
  bb_f64(&b, 0.5);
  bb_f64(&b, 0.25);
  bb_varint(&b, 1);
  bb_svarint(&b, 0);
  expect_attr_error(&a, VATTR(&a, U(17), U(ent_raw(&a, true, 1, true, &b))),
                    "1 zero points for 2 scales");
  art_init(&a);
  expect_attr_error(&a, VATTR(&a, U(17), U(vt(&a, 99))), "unknown VHLO type code 99");
}

static void test_vhlo_attrs(void **state) {
  (void)state;
  for (int i = 0; i < 16; i++) {
    art a;
    art_init(&a);
    int f32 = vt(&a, 4), i32 = vt(&a, 13), t = -1;
    bb b = {{0}, 0};
    const char *want = NULL;
    switch (i) {
    case 0: t = VATTR(&a, U(2), U(1)); want = "true"; break;
    case 1: t = VATTR(&a, U(3), U(2)); want = "#stablehlo<comparison_direction GE>"; break;
    case 2:
      t = VATTR(&a, U(6), U(1), U(VATTR(&a, U(14), U(str_ix(&a, "k")))), U(VATTR(&a, U(2), U(0))));
      want = "{\"k\" = false}";
      break;
    case 3: /* 1.5f */
      bb_varint(&b, 8);
      bb_varint(&b, (uint64_t)f32);
      bb_svarint(&b, 0x3FC00000);
      t = ent_raw(&a, false, 1, true, &b);
      want = "1.5 : f32";
      break;
    case 4: /* an f8 value: bits in hex */
      bb_varint(&b, 8);
      bb_varint(&b, (uint64_t)vt(&a, 6));
      bb_byte(&b, 0x38);
      t = ent_raw(&a, false, 1, true, &b);
      want = "0x38 : f8E4M3FN";
      break;
    case 5: /* -2 as i32 (sign-extended), 200 as ui8 */
      bb_varint(&b, 9);
      bb_varint(&b, (uint64_t)i32);
      bb_svarint(&b, -2);
      t = ent_raw(&a, false, 1, true, &b);
      want = "-2 : i32";
      break;
    case 6:
      bb_varint(&b, 9);
      bb_varint(&b, (uint64_t)vt(&a, 16));
      bb_byte(&b, 200);
      t = ent_raw(&a, false, 1, true, &b);
      want = "200 : ui8";
      break;
    case 7:
      bb_varint(&b, 10);
      bb_varint(&b, 1);
      bb_svarint(&b, 1);
      bb_svarint(&b, 0);
      bb_varint(&b, 0);
      t = ent_raw(&a, false, 1, true, &b);
      want = "#stablehlo.output_operand_alias<output_tuple_indices = [1], "
             "operand_index = 0, operand_tuple_indices = []>";
      break;
    case 8: { /* i1 tensor of 10, packed in 2 bytes: 0b00000101, 0b10 */
      int t10 = VTYPE(&a, U(20), U(1), U(20), U(vt(&a, 0)));
      bb_varint(&b, 15);
      bb_varint(&b, (uint64_t)t10);
      bb_varint(&b, 2);
      bb_bytes(&b, "\x05\x02", 2);
      t = ent_raw(&a, false, 1, true, &b);
      want = "dense<\"0x01000100000000000001\"> : tensor<10xi1>"; /* elements 0, 2, 9 */
      break;
    }
    case 9: { /* i1 tensor unpacked: one byte each, nonzero is true */
      int t3 = VTYPE(&a, U(20), U(1), U(6), U(vt(&a, 0)));
      bb_varint(&b, 15);
      bb_varint(&b, (uint64_t)t3);
      bb_varint(&b, 3);
      bb_bytes(&b, "\x07\x00\x01", 3);
      t = ent_raw(&a, false, 1, true, &b);
      want = "dense<\"0x010001\"> : tensor<3xi1>";
      break;
    }
    case 10: { /* accuracy: atol 0.5, rtol 0, ulps 3, mode TOLERANCE (2) */
      int mode = VATTR(&a, U(19), U(2));
      bb_varint(&b, 20);
      bb_f64(&b, 0.5);
      bb_f64(&b, 0);
      bb_svarint(&b, 3);
      bb_varint(&b, (uint64_t)mode);
      t = ent_raw(&a, false, 1, true, &b);
      want = "#stablehlo.result_accuracy<atol = 0.5, rtol = 0.0, ulps = 3, "
             "mode = #stablehlo.result_accuracy_mode<TOLERANCE>>";
      break;
    }
    case 11: { /* axis ref "x" with sub-axis (1)2 */
      int sub = VATTR(&a, U(21), U(2), U(4));
      t = VATTR(&a, U(22), U(VATTR(&a, U(14), U(str_ix(&a, "x")))), U(1), U(sub));
      want = "#stablehlo.axis_ref<name = \"x\", sub_axis_info = (1)2>";
      break;
    }
    case 12:
      t = VATTR(&a, U(22), U(VATTR(&a, U(14), U(str_ix(&a, "y")))), U(0));
      want = "#stablehlo.axis_ref<name = \"y\">";
      break;
    case 13: { /* mesh axes: a named mesh, then a mesh given inline */
      int ax = VATTR(&a, U(1), U(0));
      t = VATTR(&a, U(23), U(VATTR(&a, U(14), U(str_ix(&a, "mesh")))), U(ax));
      want = "#stablehlo.replica_group_mesh_axes<mesh = @mesh, axes = []>";
      break;
    }
    case 14: {
      int ax = VATTR(&a, U(1), U(0));
      t = VATTR(&a, U(23), U(VATTR(&a, U(2), U(1))), U(ax));
      want = "#stablehlo.replica_group_mesh_axes<mesh = true, axes = []>";
      break;
    }
    default:
      t = VATTR(&a, U(18), U(2), U(2), U(1)); /* bounds 1, ? (svarints 1, -1) */
      want = "#stablehlo.bounds<1, ?>";
      break;
    }
    expect_attr_text(&a, t, want);
  }
  /* malformed ones */
  struct {
    int kind;
    const char *what;
  } bad[] = {
      {0, "boolean value 2"},
      {1, "enum value 9 out of range"},
      {2, "enum value 0 out of range"},
      {3, "a dictionary key that is not a string"},
      {4, "an integer attribute of type f32"},
      {5, "a float attribute of type i32"},
      {6, "a number of a non-scalar type"},
      {7, "a tensor attribute of a non-tensor type"},
      {8, "a tensor attribute of dynamic shape"},
      {9, "expected a result accuracy mode"},
      {10, "unknown VHLO attribute code 77"},
  };
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
    art a;
    art_init(&a);
    int f32 = vt(&a, 4), i32 = vt(&a, 13), t = -1;
    bb b = {{0}, 0};
    switch (bad[i].kind) {
    case 0: t = VATTR(&a, U(2), U(2)); break;
    case 1: t = VATTR(&a, U(3), U(9)); break;
    case 2: t = VATTR(&a, U(13), U(0)); break;
    case 3: t = VATTR(&a, U(6), U(1), U(VATTR(&a, U(2), U(0))), U(VATTR(&a, U(2), U(0)))); break;
    case 4: t = VATTR(&a, U(9), U(f32), U(0)); break;
    case 5: t = VATTR(&a, U(8), U(i32), U(0)); break;
    case 6: t = VATTR(&a, U(9), U(VTYPE(&a, U(20), U(0), U(i32))), U(0)); break;
    case 7: t = VATTR(&a, U(15), U(i32), U(0)); break;
    case 8:
      bb_varint(&b, 15);
      bb_varint(&b, (uint64_t)VTYPE(&a, U(20), U(1), U(1), U(vt(&a, 0))));
      bb_varint(&b, 0);
      t = ent_raw(&a, false, 1, true, &b);
      break;
    case 9:
      bb_varint(&b, 20);
      bb_f64(&b, 0);
      bb_f64(&b, 0);
      bb_svarint(&b, 0);
      bb_varint(&b, (uint64_t)VATTR(&a, U(2), U(0)));
      t = ent_raw(&a, false, 1, true, &b);
      break;
    default: t = VATTR(&a, U(77)); break;
    }
    expect_attr_error(&a, t, bad[i].what);
  }
}

/* Nesting beyond the reader's limit of 256: attributes (an array in an
 * array ...) and regions (a module in a module ...). */
static void test_nesting_limits(void **state) {
  (void)state;
  art a;
  art_init(&a);
  int inner = ATTR(&a, U(7));
  for (int i = 0; i < 260; i++) inner = ATTR(&a, U(0), U(1), U(inner));
  expect_attr_error(&a, inner, "attributes and types nested deeper than 256");
  /* 255 nested arrays read (the module's dictionary and x's entry add
   * two levels) */
  art_init(&a);
  inner = ATTR(&a, U(7));
  for (int i = 0; i < 200; i++) inner = ATTR(&a, U(0), U(1), U(inner));
  ir_module(&a, unknown_loc(&a), a_dict1(&a, "x", inner));
  char *t = text_of(&a);
  if (!t) fail_msg("%s", tu_msg);
  TU_ASSERT_CONTAINS(t, "[[[[unit]]]]");
  free(t);
  /* regions */
  art_init(&a);
  int un = unknown_loc(&a);
  a.ir.n = 0;
  bb_varint(&a.ir, 1 << 1);
  for (int i = 0; i < 258; i++) {
    op_head(&a.ir, 16, un);
    bb_varint(&a.ir, 1 << 1); /* one region */
    bb_varint(&a.ir, 1);      /* one block */
    bb_varint(&a.ir, 0);      /* no values */
    bb_varint(&a.ir, 1 << 1); /* one op, no arguments */
  }
  op_head(&a.ir, 0, un);
  expect_error(&a, "regions nested deeper than 256");
}

/* Attribute text, quoted keys, a fused location without a file. */
static void test_text_and_keys(void **state) {
  (void)state;
  art a;
  art_init(&a);
  bb tx = {{0}, 0};
  bb_bytes(&tx, "#my.attr<1>", 12);
  expect_attr_text(&a, ent_raw(&a, false, 0, false, &tx), "#my.attr<1>");
  art_init(&a);
  ir_module(&a, unknown_loc(&a), a_dict1(&a, "a-b", ATTR(&a, U(7))));
  expect_text(&a, "\"builtin.module\"() <{\"a-b\" = unit}> : () -> ()");
  art_init(&a);
  int un = unknown_loc(&a);
  ir_module(&a, ATTR(&a, U(12), U(2), U(un), U(ATTR(&a, U(14), U(a_str(&a, "n")), U(un)))), -1);
  expect_text(&a, "\"builtin.module\"() : () -> ()");
  /* a packed i1 tensor too large for any artifact */
  art_init(&a);
  bb b = {{0}, 0};
  bb_varint(&b, 20);
  bb_varint(&b, 2);
  bb_svarint(&b, (int64_t)1 << 40);
  bb_svarint(&b, (int64_t)1 << 40);
  bb_varint(&b, (uint64_t)vt(&a, 0));
  int big = ent_raw(&a, true, 1, true, &b);
  expect_attr_error(&a, VATTR(&a, U(15), U(big), U(0)), "tensor attribute too large for its data");
}

TU_MAIN(NULL, NULL, cmocka_unit_test(test_builtin_scalars),
        cmocka_unit_test(test_builtin_structures),
        cmocka_unit_test(test_builtin_types),
        cmocka_unit_test(test_builtin_dense), cmocka_unit_test(test_resources),
        cmocka_unit_test(test_locations), cmocka_unit_test(test_formats),
        cmocka_unit_test(test_sections), cmocka_unit_test(test_tables),
        cmocka_unit_test(test_regions), cmocka_unit_test(test_uselists),
        cmocka_unit_test(test_properties), cmocka_unit_test(test_vhlo_types),
        cmocka_unit_test(test_vhlo_attrs),
        cmocka_unit_test(test_nesting_limits),
        cmocka_unit_test(test_text_and_keys))
