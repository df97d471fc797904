/*
 * test_print.c - xrt_program_print: the canonical text form.
 *
 * The property: for every program P that parses, parse(print(P)) is the
 * same IR as P (compared field by field below: functions, ops, values and
 * their types, attributes of every kind, literals bit for bit, regions),
 * and print(parse(print(P))) == print(P) byte for byte.  Checked on every
 * chunk of the StableHLO interpreter tests and the VHLO legalization tests
 * that parse (XRT_TEST_STABLEHLO_DIR, skipped when absent), on examples/,
 * and on hand-written edge cases; plus: pretty and generic twins, and
 * inputs that differ only in names, locations and comments, print the
 * same.
 */
#include "test_util.h"

#include <dirent.h>

/* ---------------------------------------------------------------------
 * IR comparison (a and b: the same program?)
 * ------------------------------------------------------------------- */

typedef struct ircmp {
  char why[512];    /* the first difference */
  int32_t *map;     /* value ids of a's function -> b's (-1: unseen) */
  int32_t nvalues;
  const xrt_ir_func *fa, *fb;
} ircmp;

static bool differ(ircmp *c, const char *fmt, ...) {
  if (!c->why[0]) {
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(c->why, sizeof c->why, fmt, ap);
    va_end(ap);
  }
  return false;
}

static bool quant_eq(const xrt_ir_quant *a, const xrt_ir_quant *b) {
  if (!a || !b) return a == b;
  if (a->storage != b->storage || a->expressed != b->expressed ||
      a->storage_min != b->storage_min || a->storage_max != b->storage_max ||
      a->axis != b->axis || a->num_scales != b->num_scales)
    return false;
  return !memcmp(a->scales, b->scales, sizeof(double) * (size_t)a->num_scales) &&
         !memcmp(a->zero_points, b->zero_points,
                 sizeof(int64_t) * (size_t)a->num_scales);
}

static bool type_eq(const xrt_ir_type *a, const xrt_ir_type *b) {
  if (a->kind != b->kind) return false;
  if (a->kind == XRT_TYPE_TOKEN) return true;
  if (a->kind == XRT_TYPE_TUPLE) {
    if (a->num_elems != b->num_elems) return false;
    for (int32_t i = 0; i < a->num_elems; i++)
      if (!type_eq(&a->elems[i], &b->elems[i])) return false;
    return true;
  }
  if (a->shape.dtype != b->shape.dtype || a->shape.rank != b->shape.rank)
    return false;
  for (int32_t i = 0; i < a->shape.rank; i++)
    if (a->shape.dims[i] != b->shape.dims[i]) return false;
  return quant_eq(a->quant, b->quant);
}

static bool lit_eq(const xrt_ir_literal *a, const xrt_ir_literal *b) {
  if (!a || !b) return a == b;
  return type_eq(&a->type, &b->type) && a->splat == b->splat &&
         a->bytes == b->bytes && (!a->bytes || !memcmp(a->data, b->data, a->bytes));
}

static bool attr_eq(ircmp *c, const xrt_ir_attr *a, const xrt_ir_attr *b,
                    const char *where);

/* Items of two dictionaries, matched by name (order does not matter). */
static bool dict_eq(ircmp *c, const xrt_ir_attr *a, int32_t na,
                    const xrt_ir_attr *b, int32_t nb, const char *where) {
  if (na != nb) return differ(c, "%s: %d entries vs %d", where, (int)na, (int)nb);
  for (int32_t i = 0; i < na; i++) {
    const char *name = a[i].name ? a[i].name : "";
    int32_t k = 0, seen = 0; /* the same occurrence of a repeated name */
    for (int32_t j = 0; j < i; j++) seen += a[j].name && !strcmp(a[j].name, name);
    int32_t j = 0;
    for (; j < nb; j++)
      if (b[j].name && !strcmp(b[j].name, name) && k++ == seen) break;
    if (j == nb) return differ(c, "%s: entry %s missing after printing", where, name);
    char w[256];
    snprintf(w, sizeof w, "%.150s.%.60s", where, name);
    if (!attr_eq(c, &a[i], &b[j], w)) return false;
  }
  return true;
}

static bool attr_eq(ircmp *c, const xrt_ir_attr *a, const xrt_ir_attr *b,
                    const char *where) {
  if (a->kind != b->kind)
    return differ(c, "%s: kind %d vs %d", where, (int)a->kind, (int)b->kind);
  switch (a->kind) {
  case XRT_ATTR_UNIT: return true;
  case XRT_ATTR_INT:
  case XRT_ATTR_BOOL:
    return a->i == b->i || differ(c, "%s: %lld vs %lld", where, (long long)a->i,
                                  (long long)b->i);
  case XRT_ATTR_FLOAT:
    return !memcmp(&a->f, &b->f, sizeof a->f) ||
           differ(c, "%s: %.17g vs %.17g", where, a->f, b->f);
  case XRT_ATTR_STRING:
  case XRT_ATTR_SYMBOL:
    return (a->n == b->n && !memcmp(a->s, b->s, (size_t)a->n)) ||
           differ(c, "%s: \"%s\" vs \"%s\"", where, a->s, b->s);
  case XRT_ATTR_ENUM:
    return !strcmp(a->s, b->s) || differ(c, "%s: %s vs %s", where, a->s, b->s);
  case XRT_ATTR_INTS:
    if (a->n != b->n || (a->n && memcmp(a->ints, b->ints, sizeof(int64_t) * (size_t)a->n)))
      return differ(c, "%s: integers differ", where);
    return lit_eq(a->lit, b->lit) || differ(c, "%s: literal of the integers differs", where);
  case XRT_ATTR_DENSE:
    return lit_eq(a->lit, b->lit) || differ(c, "%s: literal differs", where);
  case XRT_ATTR_TYPE:
    return type_eq(a->type, b->type) || differ(c, "%s: type differs", where);
  case XRT_ATTR_LIST:
    if (a->num_items != b->num_items) return differ(c, "%s: list length", where);
    for (int32_t i = 0; i < a->num_items; i++) {
      char w[256];
      snprintf(w, sizeof w, "%.200s[%d]", where, (int)i);
      if (!attr_eq(c, &a->items[i], &b->items[i], w)) return false;
    }
    return true;
  case XRT_ATTR_DICT:
    return dict_eq(c, a->items, a->num_items, b->items, b->num_items, where);
  default: return differ(c, "%s: unknown kind %d", where, (int)a->kind);
  }
}

/* a's value ida corresponds to b's idb: its first sight defines it. */
static bool value_eq(ircmp *c, int32_t ida, int32_t idb, bool def, const char *where) {
  if (ida < 0 || ida >= c->fa->num_values || idb < 0 || idb >= c->fb->num_values)
    return differ(c, "%s: value id out of range", where);
  if (def) {
    if (c->map[ida] != -1) return differ(c, "%s: value defined twice", where);
    c->map[ida] = idb;
    return type_eq(&c->fa->value_types[ida], &c->fb->value_types[idb]) ||
           differ(c, "%s: value types differ", where);
  }
  return c->map[ida] == idb || differ(c, "%s: uses another value", where);
}

static bool region_eq(ircmp *c, const xrt_ir_region *a, const xrt_ir_region *b,
                      const char *where);

static bool op_eq(ircmp *c, const xrt_ir_op *a, const xrt_ir_op *b, const char *w) {
  if (a->code != b->code || strcmp(a->name, b->name))
    return differ(c, "%s: op %s vs %s", w, a->name, b->name);
  /* callee means something for calls only (ops the parser makes up, like
   * check.*_const's constants, leave it 0 rather than -1) */
  bool call = a->code == XRT_OP_FUNC_CALL || a->code == XRT_OP_CUSTOM_CALL ||
              a->code == XRT_OP_INFEED || a->code == XRT_OP_OUTFEED ||
              a->code == XRT_OP_SEND || a->code == XRT_OP_RECV;
  if (a->num_operands != b->num_operands || a->num_results != b->num_results ||
      a->num_regions != b->num_regions || (call && a->callee != b->callee))
    return differ(c, "%s (%s): operands/results/regions/callee differ", w, a->name);
  for (int32_t i = 0; i < a->num_operands; i++)
    if (!value_eq(c, a->operands[i], b->operands[i], false, w)) return false;
  for (int32_t i = 0; i < a->num_regions; i++) {
    char rw[300];
    snprintf(rw, sizeof rw, "%.200s region %d", w, (int)i);
    if (!region_eq(c, &a->regions[i], &b->regions[i], rw)) return false;
  }
  for (int32_t i = 0; i < a->num_results; i++)
    if (!value_eq(c, a->results[i], b->results[i], true, w)) return false;
  char aw[300];
  snprintf(aw, sizeof aw, "%.200s (%.60s) attribute", w, a->name);
  return dict_eq(c, a->attrs, a->num_attrs, b->attrs, b->num_attrs, aw);
}

static bool region_eq(ircmp *c, const xrt_ir_region *a, const xrt_ir_region *b,
                      const char *where) {
  if (a->num_args != b->num_args || a->num_ops != b->num_ops)
    return differ(c, "%s: %d args, %d ops vs %d, %d", where, (int)a->num_args,
                  (int)a->num_ops, (int)b->num_args, (int)b->num_ops);
  for (int32_t i = 0; i < a->num_args; i++)
    if (!value_eq(c, a->args[i], b->args[i], true, where)) return false;
  for (int32_t i = 0; i < a->num_ops; i++) {
    char w[300];
    snprintf(w, sizeof w, "%.200s op %d", where, (int)i);
    if (!op_eq(c, &a->ops[i], &b->ops[i], w)) return false;
  }
  return true;
}

static bool func_eq(ircmp *c, const xrt_ir_func *a, const xrt_ir_func *b) {
  if (strcmp(a->name, b->name) || a->is_public != b->is_public ||
      a->num_values != b->num_values || a->num_results != b->num_results)
    return differ(c, "func @%s: name, visibility, value or result count", a->name);
  for (int32_t i = 0; i < a->num_results; i++)
    if (!type_eq(&a->result_types[i], &b->result_types[i]))
      return differ(c, "func @%s: result %d type", a->name, (int)i);
  c->fa = a;
  c->fb = b;
  c->map = malloc(sizeof(int32_t) * (size_t)(a->num_values + 1));
  assert_non_null(c->map);
  memset(c->map, 0xff, sizeof(int32_t) * (size_t)(a->num_values + 1));
  char w[300];
  snprintf(w, sizeof w, "@%.200s", a->name);
  bool ok = region_eq(c, &a->body, &b->body, w);
  free(c->map);
  c->map = NULL;
  return ok;
}

static bool module_eq(ircmp *c, const xrt_ir_module *a, const xrt_ir_module *b) {
  if (strcmp(a->name, b->name) || a->num_replicas != b->num_replicas ||
      a->num_partitions != b->num_partitions ||
      strcmp(a->stablehlo_version, b->stablehlo_version) ||
      a->num_custom_calls != b->num_custom_calls || a->num_funcs != b->num_funcs)
    return differ(c, "module: name, launch shape, version, custom calls or "
                  "function count");
  for (int32_t i = 0; i < a->num_funcs; i++)
    if (!func_eq(c, &a->funcs[i], &b->funcs[i])) return false;
  return true;
}

/* ---------------------------------------------------------------------
 * Helpers
 * ------------------------------------------------------------------- */

static xrt_program *parse_at(const char *text, size_t len, const char *file,
                             int line_offset) {
  xrt_compile_options o;
  xrt_compile_options_init(&o);
  o.filename = file;
  o.line_offset = line_offset;
  xrt_program *p = NULL;
  return xrt_program_parse(text, len, &o, &p) == XRT_OK ? p : NULL;
}

static xrt_program *parse_ok(const char *text) {
  xrt_program *p = parse_at(text, strlen(text), "test.mlir", 0);
  if (!p) fail_msg("does not parse: %s\n%s", xrt_last_error(), text);
  return p;
}

static char *print_ok(const xrt_program *p) {
  char *text = NULL;
  size_t len = 0;
  xrt_status s = xrt_program_print(p, &text, &len);
  if (s) fail_msg("print: %s", xrt_last_error());
  assert_non_null(text);
  assert_int_equal(strlen(text), len);
  return text;
}

/* The round-trip property for p; false with *why set (the printed text in
 * *text_out, for the message) when it does not hold. */
static bool round_trips(const xrt_program *p, char *why, size_t cap, char **text_out) {
  char *t1 = print_ok(p);
  *text_out = t1;
  xrt_program *q = parse_at(t1, strlen(t1), "printed", 0);
  if (!q) {
    snprintf(why, cap, "the printed text does not parse: %s", xrt_last_error());
    return false;
  }
  ircmp c;
  memset(&c, 0, sizeof c);
  bool ok = module_eq(&c, xrt_program_module(p), xrt_program_module(q));
  if (!ok) snprintf(why, cap, "IR differs after printing: %s", c.why);
  char *t2 = ok ? print_ok(q) : NULL;
  if (ok && strcmp(t1, t2)) {
    ok = false;
    snprintf(why, cap, "printing the reparsed program gives other text");
  }
  free(t2);
  xrt_program_release(q);
  return ok;
}

static void assert_round_trips(const xrt_program *p, const char *label) {
  char why[700], *text = NULL;
  bool ok = round_trips(p, why, sizeof why, &text);
  if (!ok) {
    print_message("%s: %s\nprinted:\n%s\n", label, why, text);
    free(text);
    fail_msg("%s does not round-trip", label);
  }
  free(text);
}

/* Parses text, checks the round trip and returns the canonical text. */
static char *canonical(const char *text) {
  xrt_program *p = parse_ok(text);
  assert_round_trips(p, "program");
  char *t = print_ok(p);
  xrt_program_release(p);
  return t;
}

static void assert_same_print(const char *a, const char *b) {
  char *ta = canonical(a), *tb = canonical(b);
  if (strcmp(ta, tb)) {
    print_message("first:\n%s\nsecond:\n%s\n", ta, tb);
    fail_msg("the two spellings print differently");
  }
  free(ta);
  free(tb);
}

/* ---------------------------------------------------------------------
 * Unit tests
 * ------------------------------------------------------------------- */

static void test_golden(void **state) {
  (void)state;
  char *t = canonical(
      "func.func @main(%a: tensor<4xf32>, %b: tensor<4xf32>) -> tensor<4xf32> {\n"
      "  %0 = stablehlo.add %a, %b : tensor<4xf32>\n"
      "  %1 = stablehlo.compare GT, %0, %b, FLOAT : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xi1>\n"
      "  %2 = stablehlo.select %1, %0, %b : tensor<4xi1>, tensor<4xf32>\n"
      "  return %2 : tensor<4xf32>\n"
      "}\n");
  assert_string_equal(
      t,
      "module {\n"
      "  func.func @main(%arg0: tensor<4xf32>, %arg1: tensor<4xf32>) -> tensor<4xf32> {\n"
      "    %0 = \"stablehlo.add\"(%arg0, %arg1) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>\n"
      "    %1 = \"stablehlo.compare\"(%0, %arg1) {compare_type = #stablehlo<comparison_type FLOAT>, "
      "comparison_direction = #stablehlo<comparison_direction GT>} : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xi1>\n"
      "    %2 = \"stablehlo.select\"(%1, %0, %arg1) : (tensor<4xi1>, tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>\n"
      "    \"func.return\"(%2) : (tensor<4xf32>) -> ()\n"
      "  }\n"
      "}\n");
  free(t);
}

static void test_regions_and_results(void **state) {
  (void)state;
  char *t = canonical(
      "module @m attributes {mhlo.num_replicas = 2 : i32} {\n"
      "func.func private @f(%x: tensor<4xf32>, %i: tensor<i32>) -> (tensor<f32>, tensor<i32>) {\n"
      "  %c = stablehlo.constant dense<0.0> : tensor<f32>\n"
      "  %r = stablehlo.reduce(%x init: %c) applies stablehlo.add across dimensions = [0] : (tensor<4xf32>, tensor<f32>) -> tensor<f32>\n"
      "  %w:2 = stablehlo.while(%a = %r, %n = %i) : tensor<f32>, tensor<i32>\n"
      "   cond { %k = stablehlo.constant dense<3> : tensor<i32>\n"
      "     %p = stablehlo.compare LT, %n, %k : (tensor<i32>, tensor<i32>) -> tensor<i1>\n"
      "     stablehlo.return %p : tensor<i1> }\n"
      "   do { stablehlo.return %a, %n : tensor<f32>, tensor<i32> }\n"
      "  return %w#0, %w#1 : tensor<f32>, tensor<i32>\n"
      "}\n"
      "}\n");
  assert_non_null(strstr(t, "module @m attributes {mhlo.num_replicas = 2 : i32} {\n"));
  assert_non_null(strstr(t, "  func.func private @f(%arg0: tensor<4xf32>, %arg1: tensor<i32>) -> (tensor<f32>, tensor<i32>) {\n"));
  assert_non_null(strstr(t,
      "    %1 = \"stablehlo.reduce\"(%arg0, %0) ({\n"
      "    ^bb0(%arg2: tensor<f32>, %arg3: tensor<f32>):\n"
      "      %2 = \"stablehlo.add\"(%arg2, %arg3) : (tensor<f32>, tensor<f32>) -> tensor<f32>\n"
      "      \"stablehlo.return\"(%2) : (tensor<f32>) -> ()\n"
      "    }) {dimensions = array<i64: 0>} : (tensor<4xf32>, tensor<f32>) -> tensor<f32>\n"));
  assert_non_null(strstr(t, "%3:2 = \"stablehlo.while\"(%1, %arg1) ({\n"));
  assert_non_null(strstr(t, "\"func.return\"(%3#0, %3#1)"));
  free(t);
}

/* Pretty and generic spellings of the same ops, with other names,
 * locations and comments: one text. */
static void test_twins(void **state) {
  (void)state;
  assert_same_print(
      "#loc1 = loc(\"x.py\":1:2)\n"
      "module {\n"
      "  func.func public @main(%arg0: tensor<2x3xf32> loc(\"a\"), %arg1: tensor<3x4xf32>) -> tensor<2x4xf32> {\n"
      "    // a comment\n"
      "    %0 = stablehlo.dot_general %arg0, %arg1, contracting_dims = [1] x [0], precision = [DEFAULT, HIGHEST] : (tensor<2x3xf32>, tensor<3x4xf32>) -> tensor<2x4xf32> loc(#loc1)\n"
      "    %1 = stablehlo.transpose %0, dims = [0, 1] : (tensor<2x4xf32>) -> tensor<2x4xf32>\n"
      "    %cst = stablehlo.constant dense<[[1.0, 2.0, 3.0, 4.0], [5.0, 6.0, 7.0, 8.5]]> : tensor<2x4xf32>\n"
      "    %2 = stablehlo.add %1, %cst : tensor<2x4xf32>\n"
      "    return %2 : tensor<2x4xf32>\n"
      "  }\n"
      "}\n",
      "\"builtin.module\"() ({\n"
      "  \"func.func\"() <{function_type = (tensor<2x3xf32>, tensor<3x4xf32>) -> tensor<2x4xf32>, sym_name = \"main\"}> ({\n"
      "  ^bb0(%x: tensor<2x3xf32>, %y: tensor<3x4xf32>):\n"
      "    %a = \"stablehlo.dot_general\"(%x, %y) <{dot_dimension_numbers = #stablehlo.dot<lhs_contracting_dimensions = [1], rhs_contracting_dimensions = [0]>, precision_config = [#stablehlo<precision DEFAULT>, #stablehlo<precision HIGHEST>]}> : (tensor<2x3xf32>, tensor<3x4xf32>) -> tensor<2x4xf32> loc(\"q\")\n"
      "    %b = \"stablehlo.transpose\"(%a) {permutation = array<i64: 0, 1>} : (tensor<2x4xf32>) -> tensor<2x4xf32>\n"
      "    %c = \"stablehlo.constant\"() {value = dense<[[1.000000e+00, 2.000000e+00, 3.0, 4.0], [5.0, 6.0, 7.0, 8.5]]> : tensor<2x4xf32>} : () -> tensor<2x4xf32>\n"
      "    %d = \"stablehlo.add\"(%b, %c) : (tensor<2x4xf32>, tensor<2x4xf32>) -> tensor<2x4xf32>\n"
      "    \"func.return\"(%d) : (tensor<2x4xf32>) -> ()\n"
      "  }) : () -> ()\n"
      "}) : () -> ()\n");
  /* convolution: compact dimension numbers and window vs generic */
  assert_same_print(
      "func.func @main(%x: tensor<1x4x4x1xf32>, %w: tensor<3x3x1x1xf32>) -> tensor<1x2x2x1xf32> {\n"
      "  %0 = stablehlo.convolution(%x, %w) dim_numbers = [b, 0, 1, f]x[0, 1, i, o]->[b, 0, 1, f], "
      "window = {stride = [1, 1], lhs_dilate = [1, 1], rhs_dilate = [1, 1]} "
      "{batch_group_count = 1 : i64, feature_group_count = 1 : i64} : (tensor<1x4x4x1xf32>, tensor<3x3x1x1xf32>) -> tensor<1x2x2x1xf32>\n"
      "  return %0 : tensor<1x2x2x1xf32>\n"
      "}\n",
      "func.func @main(%x: tensor<1x4x4x1xf32>, %w: tensor<3x3x1x1xf32>) -> tensor<1x2x2x1xf32> {\n"
      "  %0 = \"stablehlo.convolution\"(%x, %w) {batch_group_count = 1 : i64, "
      "dimension_numbers = #stablehlo.conv<[b, 0, 1, f]x[0, 1, i, o]->[b, 0, 1, f]>, "
      "feature_group_count = 1 : i64, lhs_dilation = array<i64: 1, 1>, rhs_dilation = array<i64: 1, 1>, "
      "window_strides = array<i64: 1, 1>} : (tensor<1x4x4x1xf32>, tensor<3x3x1x1xf32>) -> tensor<1x2x2x1xf32>\n"
      "  func.return %0 : tensor<1x2x2x1xf32>\n"
      "}\n");
}

static void test_literals_exact(void **state) {
  (void)state;
  /* NaN payloads, signed zeros, infinities, subnormals, every float width,
   * complex, small and wide integers, splats, rank 0, empty, and a literal
   * large enough for hex: each must come back bit for bit. */
  xrt_program *p = parse_ok(
      "func.func @main() -> () {\n"
      "  %0 = stablehlo.constant dense<[0x7FC00001, -0.0, 0x7F800000, 0xFF800000, 1.0e-45, 0.1, 3.40282347e+38, -2.5]> : tensor<8xf32>\n"
      "  %1 = stablehlo.constant dense<[0.1, 1.0e-310, 0x7FF8000000000123, 1.7976931348623157e308]> : tensor<4xf64>\n"
      "  %2 = stablehlo.constant dense<[0.1, 65504.0, 0x7E01, 6.0e-8]> : tensor<4xf16>\n"
      "  %3 = stablehlo.constant dense<[0.1, 3.0e38, 0x7FC1]> : tensor<3xbf16>\n"
      "  %4 = stablehlo.constant dense<[0.5, 448.0, 0x7F]> : tensor<3xf8E4M3FN>\n"
      "  %5 = stablehlo.constant dense<[(1.5, -0.1), (0x7FC00000, 2.0)]> : tensor<2xcomplex<f32>>\n"
      "  %6 = stablehlo.constant dense<[-9223372036854775808, 9223372036854775807]> : tensor<2xi64>\n"
      "  %7 = stablehlo.constant dense<[18446744073709551615, 0]> : tensor<2xui64>\n"
      "  %8 = stablehlo.constant dense<[-8, 7]> : tensor<2xi4>\n"
      "  %9 = stablehlo.constant dense<[true, false]> : tensor<2xi1>\n"
      "  %10 = stablehlo.constant dense<0.3> : tensor<3x2xf32>\n"
      "  %11 = stablehlo.constant dense<0x7FC00002> : tensor<f32>\n"
      "  %12 = stablehlo.constant dense<> : tensor<0x3xf32>\n"
      "  %13 = stablehlo.constant dense<\"0x0000803F\"> : tensor<f32>\n"
      "  %14 = stablehlo.constant dense<[1.0]> : tensor<1xf32>\n"
      "  %15 = stablehlo.constant dense<[0.25, 0x3F]> : tensor<2xf6E2M3FN>\n"
      "  %16 = stablehlo.constant dense<(1.0, 2.0)> : tensor<2xcomplex<f64>>\n"
      "  return\n"
      "}\n");
  assert_round_trips(p, "literals");
  char *t = print_ok(p);
  assert_non_null(strstr(t, "dense<[0x7FC00001, -0.0, 0x7F800000, 0xFF800000, 1.0e-45, 0.1, 3.4028235e+38, -2.5]>"));
  assert_non_null(strstr(t, "dense<0.3> : tensor<3x2xf32>"));
  assert_non_null(strstr(t, "dense<\"0x0000803F\"> : tensor<f32>"));
  assert_non_null(strstr(t, "dense<> : tensor<0x3xf32>"));
  assert_non_null(strstr(t, "dense<[-8, 7]> : tensor<2xi4>"));
  free(t);
  xrt_program_release(p);

  /* a literal past the list limit prints as hex and reads back */
  size_t n = 3000, cap = 64 + 12 * n;
  char *src = malloc(cap + 256), *q = src;
  assert_non_null(src);
  q += sprintf(q, "func.func @main() -> tensor<%zuxf32> {\n  %%0 = stablehlo.constant dense<[", n);
  for (size_t i = 0; i < n; i++) q += sprintf(q, "%s%.9g", i ? ", " : "", 0.001 * (double)i);
  sprintf(q, "]> : tensor<%zuxf32>\n  return %%0 : tensor<%zuxf32>\n}\n", n, n);
  p = parse_ok(src);
  assert_round_trips(p, "large literal");
  t = print_ok(p);
  assert_non_null(strstr(t, "dense<\"0x000000006F12833A"));
  free(t);
  free(src);
  xrt_program_release(p);
}

static void test_attributes(void **state) {
  (void)state;
  xrt_program *p = parse_ok(
      "module @\"m 1\" attributes {mhlo.num_partitions = 2 : i32, stablehlo.version = \"1.2.0\"} {\n"
      "func.func @main(%a: tensor<4xf32>, %q: tensor<4x!quant.uniform<i8<-127:127>:f32:0, {0.5:3, 0.25, 1.0e-3:-2, 0.1}>>, %s: tensor<2xui64>) -> tensor<4xf32> {\n"
      "  %0 = stablehlo.custom_call @foo(%a) {backend_config = \"a \\\"q\\\" \\\\ \\n \\t \\01 \\FF\", "
      "api_version = 2 : i32, has_side_effect = true, mhlo.frontend_attributes = {b = \"x\", a = [1.5 : f32, -0.1 : f64, unit, @g]}, "
      "output_operand_aliases = [#stablehlo.output_operand_alias<output_tuple_indices = [], operand_index = 0, operand_tuple_indices = []>], "
      "tol = 0x7FF8000000000001 : f64, big = -9223372036854775808 : i64, e = 1.0e-5 : f32, "
      "operand_layouts = [dense<[0]> : tensor<1xindex>], t = tensor<2x!quant.uniform<u8:f32, 2.0>>, t0 = tensor<!quant.uniform<i8:f32, 0.5>>, t1 = f16, k = FOO, s = @\"odd name\"} : (tensor<4xf32>) -> tensor<4xf32>\n"
      "  %1 = stablehlo.reduce_precision %0, format = e5m10 : tensor<4xf32>\n"
      "  %2:2 = \"stablehlo.rng_bit_generator\"(%s) {rng_algorithm = #stablehlo<rng_algorithm PHILOX>} : (tensor<2xui64>) -> (tensor<2xui64>, tensor<4xui32>)\n"
      "  return %0 : tensor<4xf32>\n"
      "}\n"
      "}\n");
  assert_round_trips(p, "attributes");
  char *t = print_ok(p);
  assert_non_null(strstr(t, "module @\"m 1\" attributes {mhlo.num_partitions = 2 : i32, stablehlo.version = \"1.2.0\"} {"));
  assert_non_null(strstr(t, "tensor<4x!quant.uniform<i8<-127:127>:f32:0, {0.5:3, 0.25, 0.001:-2, 0.1}>>"));
  assert_non_null(strstr(t, "backend_config = \"a \\\"q\\\" \\\\ \\n \\t \\01 \\FF\""));
  assert_non_null(strstr(t, "e = 1.0e-05 : f32"));
  assert_non_null(strstr(t, "#stablehlo.output_operand_alias<output_tuple_indices = [], operand_index = 0, operand_tuple_indices = []>"));
  assert_non_null(strstr(t, "exponent_bits = 5 : i32, mantissa_bits = 10 : i32"));
  assert_non_null(strstr(t, "rng_algorithm = #stablehlo<rng_algorithm PHILOX>"));
  assert_non_null(strstr(t, "t0 = !quant.uniform<i8:f32, 0.5>, t1 = f16"));
  assert_non_null(strstr(t, "operand_layouts = [dense<[0]> : tensor<1xindex>]"));
  free(t);
  xrt_program_release(p);
}

static void test_bad_arguments(void **state) {
  (void)state;
  char *t = (char *)"x";
  size_t n = 7;
  assert_int_equal(xrt_program_print(NULL, &t, &n), XRT_INVALID_ARGUMENT);
  assert_null(t);
  assert_int_equal(n, 0);
  xrt_program *p = parse_ok("func.func @main() -> () {\n  return\n}\n");
  assert_int_equal(xrt_program_print(p, NULL, NULL), XRT_INVALID_ARGUMENT);
  assert_int_equal(xrt_program_print(p, &t, NULL), XRT_OK);
  free(t);
  xrt_program_release(p);
}

/* ---------------------------------------------------------------------
 * Corpora
 * ------------------------------------------------------------------- */

#ifdef XRT_TEST_STABLEHLO_DIR /* the corpus sweeps need the test data */
typedef struct corpus_stats {
  int chunks, parsed, failed;
} corpus_stats;

static int split_line(const char *p, const char *end) {
  static const char marker[] = "// -----";
  size_t n = sizeof marker - 1;
  if ((size_t)(end - p) < n || memcmp(p, marker, n) != 0) return 0;
  for (p += n; p < end; p++)
    if (*p != ' ' && *p != '\t' && *p != '\r') return 0;
  return 1;
}

/* How a file splits into programs: not at all, at `// -----` lines (as
 * `xrt check --split-input-file`), or before each top-level func.func (the
 * VHLO tests are one module of many functions: one that xrt cannot parse
 * yet would hide all the others). */
typedef enum split_mode { SPLIT_NONE, SPLIT_MARKER, SPLIT_FUNCS } split_mode;

/* Every chunk of the file that parses must round-trip. */
static void check_chunk(const char *path, const char *s, size_t n, int line,
                        corpus_stats *st) {
  st->chunks++;
  xrt_program *prog = parse_at(s, n, path, line);
  if (!prog) return;
  char why[700], *printed = NULL;
  st->parsed++;
  if (!round_trips(prog, why, sizeof why, &printed)) {
    st->failed++;
    print_message("%s:%d: %s\n", path, line + 1, why);
  }
  free(printed);
  xrt_program_release(prog);
}

static void check_file(const char *path, split_mode mode, corpus_stats *st) {
  size_t len;
  char *text = tu_read_file(path, &len);
  const char *chunk = text, *p = text, *end = text + len;
  int line = 0, chunk_line = 0;
  bool chunk_has_func = false;
  for (;;) {
    const char *eol = memchr(p, '\n', (size_t)(end - p));
    if (!eol) eol = end;
    bool at_end = eol == end;
    bool func = mode == SPLIT_FUNCS && !strncmp(p, "func.func ", 10);
    if (func && chunk_has_func) {
      check_chunk(path, chunk, (size_t)(p - chunk), chunk_line, st);
      chunk = p;
      chunk_line = line;
    } else if ((mode == SPLIT_MARKER && split_line(p, eol)) || at_end) {
      check_chunk(path, chunk, (size_t)((at_end ? end : p) - chunk), chunk_line, st);
      chunk = eol + 1;
      chunk_line = line + 1;
    }
    chunk_has_func |= func;
    line++;
    if (at_end) break;
    p = eol + 1;
  }
  free(text);
}

static int cmp_str(const void *a, const void *b) {
  return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Files of dir whose names start with prefix and end with suffix, sorted;
 * -1 when dir cannot be opened. */
static int list_files(const char *dir, const char *prefix, const char *suffix,
                      char ***out) {
  DIR *d = opendir(dir);
  if (!d) return -1;
  char **names = NULL;
  int n = 0;
  for (struct dirent *e; (e = readdir(d)) != NULL;) {
    size_t l = strlen(e->d_name), ls = strlen(suffix), lp = strlen(prefix);
    if (l < ls + lp || strcmp(e->d_name + l - ls, suffix) ||
        strncmp(e->d_name, prefix, lp))
      continue;
    names = realloc(names, sizeof *names * (size_t)(n + 1));
    assert_non_null(names);
    names[n] = malloc(strlen(dir) + l + 2);
    assert_non_null(names[n]);
    sprintf(names[n], "%s/%s", dir, e->d_name);
    n++;
  }
  closedir(d);
  if (n) qsort(names, (size_t)n, sizeof *names, cmp_str);
  *out = names;
  return n;
}

static void check_dir(const char *dir, const char *prefix, const char *suffix,
                      split_mode split, corpus_stats *st) {
  char **files = NULL;
  int n = list_files(dir, prefix, suffix, &files);
  for (int i = 0; i < n; i++) {
    check_file(files[i], split, st);
    free(files[i]);
  }
  free(files);
}

static void report(const char *what, const corpus_stats *st) {
  print_message("%s: %d chunks, %d parse, %d of them round-trip\n", what,
                st->chunks, st->parsed, st->parsed - st->failed);
}

static bool have_dir(const char *dir) {
  DIR *d = opendir(dir);
  if (d) closedir(d);
  return d != NULL;
}
#endif

static void test_interpret_corpus(void **state) {
  (void)state;
#ifdef XRT_TEST_STABLEHLO_DIR
  const char *dir = XRT_TEST_STABLEHLO_DIR "/interpret";
  if (!have_dir(dir)) {
    print_message("skipped: %s not found\n", dir);
    skip();
  }
  corpus_stats st = {0, 0, 0};
  check_dir(dir, "", ".mlir", SPLIT_MARKER, &st);
  check_dir(XRT_TEST_STABLEHLO_DIR "/interpret/chlo", "", ".mlir", SPLIT_MARKER, &st);
  report("interpret", &st);
  assert_true(st.parsed > 0);
  assert_int_equal(st.failed, 0);
#else
  print_message("skipped: built without XRT_TEST_STABLEHLO_DIR\n");
  skip();
#endif
}

static void test_vhlo_corpus(void **state) {
  (void)state;
#ifdef XRT_TEST_STABLEHLO_DIR
  const char *dir = XRT_TEST_STABLEHLO_DIR "/vhlo";
  if (!have_dir(dir)) {
    print_message("skipped: %s not found\n", dir);
    skip();
  }
  corpus_stats st = {0, 0, 0};
  check_dir(dir, "stablehlo_legalize_to_vhlo", ".mlir", SPLIT_FUNCS, &st);
  report("vhlo", &st);
  assert_int_equal(st.failed, 0);
#else
  print_message("skipped: built without XRT_TEST_STABLEHLO_DIR\n");
  skip();
#endif
}

static void test_examples(void **state) {
  (void)state;
#ifdef XRT_TEST_EXAMPLES_DIR
  corpus_stats st = {0, 0, 0};
  check_dir(XRT_TEST_EXAMPLES_DIR, "", ".mlir", SPLIT_NONE, &st);
  report("examples", &st);
  assert_true(st.parsed > 0);
  assert_int_equal(st.failed, 0);
#else
  print_message("skipped: built without XRT_TEST_EXAMPLES_DIR\n");
  skip();
#endif
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_golden),
      cmocka_unit_test(test_regions_and_results),
      cmocka_unit_test(test_twins),
      cmocka_unit_test(test_literals_exact),
      cmocka_unit_test(test_attributes),
      cmocka_unit_test(test_bad_arguments),
      cmocka_unit_test(test_examples),
      cmocka_unit_test(test_interpret_corpus),
      cmocka_unit_test(test_vhlo_corpus),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
