/*
 * test_bytecode_serialize.c - xrt_program_serialize's paths the
 * round-trip sweep of test_bytecode_write.c does not reach
 * (src/core/bytecode_write.c): a module's name, replica and partition
 * counts (as properties from format 5, in the attribute dictionary
 * before), discardable attributes of the generic kinds (unit, enum,
 * float, nested lists), many distinct entries (the writer's tables
 * grow), result_accuracy in each spelling, and the refusals of a NULL
 * output, of an op with more than 256 attributes and of attributes VHLO
 * has no form for.  Each written artifact is read back and compared with
 * what was written, field by field.
 */
#include "test_util.h"

static xrt_program *parse_ok(const char *text) {
  xrt_program *p = NULL;
  xrt_status s = xrt_program_parse(text, strlen(text), NULL, &p);
  if (s) fail_msg("%s", xrt_last_error());
  return p;
}

/* Serializes p at target and reads the bytes back. */
static xrt_program *round_trip(const xrt_program *p, const char *target) {
  char *b = NULL;
  size_t n = 0;
  xrt_status s = xrt_program_serialize(p, target, &b, &n);
  if (s) fail_msg("serialize at %s: %s", target ? target : "(newest)", xrt_last_error());
  assert_true(n > 4 && !memcmp(b, "ML\xefR", 4));
  xrt_program *q = NULL;
  s = xrt_program_parse(b, n, NULL, &q);
  if (s) fail_msg("read back at %s: %s", target ? target : "(newest)", xrt_last_error());
  free(b);
  return q;
}

static const char *k_module =
    "module @named attributes {mhlo.num_partitions = 2 : i32, mhlo.num_replicas = 4 : i32} {\n"
    "  func.func @main(%a: tensor<4xf32>) -> tensor<4xf32> {\n"
    "    %0 = stablehlo.add %a, %a : tensor<4xf32>\n"
    "    func.return %0 : tensor<4xf32>\n"
    "  }\n"
    "}\n";

static void test_module_facts(void **state) {
  (void)state;
  xrt_program *p = parse_ok(k_module);
  const xrt_ir_module *m = xrt_program_module(p);
  assert_string_equal(m->name, "named");
  assert_int_equal(m->num_replicas, 4);
  assert_int_equal(m->num_partitions, 2);
  /* properties (1.0.0: format 6), the dictionary (0.14.0: format 4, and
   * 0.10.0: format 1) */
  static const char *const targets[] = {NULL, "1.0.0", "0.14.0", "0.10.0"};
  for (int i = 0; i < 4; i++) {
    xrt_program *q = round_trip(p, targets[i]);
    const xrt_ir_module *r = xrt_program_module(q);
    assert_non_null(r->name);
    assert_string_equal(r->name, "named");
    assert_int_equal(r->num_replicas, 4);
    assert_int_equal(r->num_partitions, 2);
    assert_int_equal(r->num_funcs, 1);
    assert_string_equal(r->funcs[0].name, "main");
    xrt_program_release(q);
  }
  xrt_program_release(p);
}

static void test_null_output(void **state) {
  (void)state;
  xrt_program *p = parse_ok(k_module);
  char *b = NULL;
  size_t n = 0;
  assert_int_equal(xrt_program_serialize(p, NULL, NULL, &n), XRT_INVALID_ARGUMENT);
  assert_string_equal(xrt_last_error(), "xrt_program_serialize: NULL output");
  assert_int_equal(xrt_program_serialize(p, NULL, &b, NULL), XRT_INVALID_ARGUMENT);
  assert_null(b);
  xrt_program_release(p);
}

/* Discardable attributes go to the op's dictionary by kind. */
static void test_discardable_attributes(void **state) {
  (void)state;
  static const char *text =
      "func.func @main(%a: tensor<4xf32>) -> tensor<4xf32> {\n"
      "  %0 = stablehlo.add %a, %a {xrt.u = unit, xrt.f = 2.5 : f64, "
      "xrt.l = [1, [2, 3]], xrt.s = \"s\"} : tensor<4xf32>\n"
      "  func.return %0 : tensor<4xf32>\n}\n";
  xrt_program *p = parse_ok(text);
  xrt_program *q = round_trip(p, NULL);
  const xrt_ir_op *op = &xrt_program_module(q)->funcs[0].body.ops[0];
  const xrt_ir_attr *u = xrt_ir_op_attr(op, "xrt.u"), *f = xrt_ir_op_attr(op, "xrt.f"),
                    *s = xrt_ir_op_attr(op, "xrt.s");
  /* a unit attribute is written as a true boolean (VHLO has no unit) */
  assert_non_null(u);
  assert_true(u->kind == XRT_ATTR_BOOL || u->kind == XRT_ATTR_UNIT);
  if (u->kind == XRT_ATTR_BOOL) assert_int_equal(u->i, 1);
  assert_non_null(f);
  assert_int_equal(f->kind, XRT_ATTR_FLOAT);
  assert_true(f->f == 2.5);
  assert_non_null(s);
  assert_string_equal(s->s, "s");
  xrt_program_release(q);
  xrt_program_release(p);
  /* an enumeration under a name VHLO does not know */
  static const char *en =
      "func.func @main(%a: tensor<4xf32>) -> tensor<4xf32> {\n"
      "  %0 = stablehlo.add %a, %a {xrt.e = #stablehlo<comparison_direction LT>} : tensor<4xf32>\n"
      "  func.return %0 : tensor<4xf32>\n}\n";
  xrt_program *pe = parse_ok(en);
  char *b = NULL;
  size_t n = 0;
  assert_int_equal(xrt_program_serialize(pe, NULL, &b, &n), XRT_UNIMPLEMENTED);
  assert_null(b);
  /* (the newest VHLO version xrt writes, then the attribute) */
  TU_ASSERT_PREFIX(xrt_last_error(), "serializing at StableHLO ");
  TU_ASSERT_CONTAINS(xrt_last_error(), ": attribute xrt.e (LT) has no VHLO form");
  xrt_program_release(pe);
}


/* Many distinct attributes and types: the writer's tables grow (and
 * rehash) while they fill; every constant reads back with its value. */
static void test_many_entries(void **state) {
  (void)state;
  enum { N = 1500 };
  size_t cap = (size_t)N * 96 + 256, n = 0;
  char *t = malloc(cap);
  n += (size_t)snprintf(t + n, cap - n, "func.func @main() -> tensor<%dxi32> {\n", N);
  for (int i = 0; i < N; i++)
    n += (size_t)snprintf(t + n, cap - n,
                          "  %%c%d = stablehlo.constant dense<%d> : tensor<%dxi32>\n", i,
                          7 * i + 3, i + 1);
  n += (size_t)snprintf(t + n, cap - n, "  func.return %%c%d : tensor<%dxi32>\n}\n", N - 1, N);
  xrt_program *p = parse_ok(t);
  xrt_program *q = round_trip(p, NULL);
  const xrt_ir_func *f = &xrt_program_module(q)->funcs[0];
  assert_int_equal(f->body.num_ops, N + 1);
  for (int i = 0; i < N; i += 97) {
    const xrt_ir_attr *v = xrt_ir_op_attr(&f->body.ops[i], "value");
    assert_non_null(v);
    assert_non_null(v->lit);
    assert_int_equal(v->lit->type.shape.dims[0], i + 1);
    int32_t x;
    memcpy(&x, v->lit->data, sizeof x); /* a splat: the first element */
    assert_int_equal(x, 7 * i + 3);
  }
  xrt_program_release(q);
  xrt_program_release(p);
  free(t);
}

/* More than 256 attributes on one op: refused by name. */
static void test_too_many_attributes(void **state) {
  (void)state;
  size_t cap = 300 * 40 + 512, n = 0;
  char *t = malloc(cap);
  n += (size_t)snprintf(t + n, cap - n,
                        "func.func @main(%%a: tensor<4xf32>) -> tensor<4xf32> {\n"
                        "  %%0 = stablehlo.add %%a, %%a {");
  for (int i = 0; i < 257; i++)
    n += (size_t)snprintf(t + n, cap - n, "%sxrt.a%d = %d : i64", i ? ", " : "", i, i);
  snprintf(t + n, cap - n, "} : tensor<4xf32>\n  func.return %%0 : tensor<4xf32>\n}\n");
  xrt_program *p = parse_ok(t);
  char *b = NULL;
  size_t len = 0;
  assert_int_equal(xrt_program_serialize(p, NULL, &b, &len), XRT_UNIMPLEMENTED);
  assert_null(b);
  TU_ASSERT_CONTAINS(xrt_last_error(), "stablehlo.add has more than 256 attributes");
  xrt_program_release(p);
  free(t);
}

/* result_accuracy in its other spellings: an integer tolerance, the mode
 * as a generic enum, fields left out (StableHLO's defaults written). */
static void test_result_accuracy_forms(void **state) {
  (void)state;
  static const struct {
    const char *attr, *want;
  } k[] = {
      {"#stablehlo.result_accuracy<atol = 1, rtol = 0.5, ulps = 2, mode = "
       "#stablehlo<result_accuracy_mode HIGHEST>>",
       "#stablehlo.result_accuracy<atol = 1.0, rtol = 0.5, ulps = 2, mode = "
       "#stablehlo.result_accuracy_mode<HIGHEST>>"},
      {"#stablehlo.result_accuracy<ulps = 2>",
       "#stablehlo.result_accuracy<atol = 0.0, rtol = 0.0, ulps = 2, mode = "
       "#stablehlo.result_accuracy_mode<DEFAULT>>"},
  };
  for (int i = 0; i < 2; i++) {
    char text[1024];
    snprintf(text, sizeof text,
             "func.func @main(%%a: tensor<4xf32>) -> tensor<4xf32> {\n"
             "  %%0 = \"stablehlo.cosine\"(%%a) {result_accuracy = %s} : "
             "(tensor<4xf32>) -> tensor<4xf32>\n"
             "  func.return %%0 : tensor<4xf32>\n}\n", k[i].attr);
    xrt_program *p = parse_ok(text);
    xrt_program *q = round_trip(p, "1.10.0");
    char *out = NULL;
    size_t n = 0;
    assert_int_equal(xrt_program_print(q, &out, &n), XRT_OK);
    TU_ASSERT_CONTAINS(out, k[i].want);
    free(out);
    xrt_program_release(q);
    xrt_program_release(p);
  }
}

/* The target's spellings: NULL, "" and "current" are the newest; one
 * older than the oldest VHLO version is refused. */
static void test_targets(void **state) {
  (void)state;
  xrt_program *p = parse_ok(k_module);
  char *a = NULL, *b = NULL, *c = NULL;
  size_t na = 0, nb = 0, nc = 0;
  assert_int_equal(xrt_program_serialize(p, NULL, &a, &na), XRT_OK);
  assert_int_equal(xrt_program_serialize(p, "", &b, &nb), XRT_OK);
  assert_int_equal(xrt_program_serialize(p, "current", &c, &nc), XRT_OK);
  assert_int_equal(na, nb);
  assert_int_equal(na, nc);
  assert_memory_equal(a, b, na);
  assert_memory_equal(a, c, na);
  free(a);
  free(b);
  free(c);
  a = NULL;
  assert_int_equal(xrt_program_serialize(p, "0.0.1", &a, &na), XRT_UNIMPLEMENTED);
  assert_null(a);
  TU_ASSERT_PREFIX(xrt_last_error(), "serializing: target StableHLO 0.0.1 is outside "
                                     "the versions xrt writes (0.9.0 to ");
  xrt_program_release(p);
}

/* Pred constants (one byte each as MLIR packs them, splat or not) and a
 * custom_call's output_operand_aliases read back as written. */
static void test_pred_constants_and_aliases(void **state) {
  (void)state;
  static const char *text =
      "func.func @main(%a: tensor<4xf32>) -> (tensor<3xi1>, tensor<2xi1>, tensor<4xf32>) {\n"
      "  %0 = stablehlo.constant dense<[true, false, true]> : tensor<3xi1>\n"
      "  %1 = stablehlo.constant dense<true> : tensor<2xi1>\n"
      "  %2 = stablehlo.custom_call @foo(%a) {output_operand_aliases = "
      "[#stablehlo.output_operand_alias<output_tuple_indices = [], operand_index = 0, "
      "operand_tuple_indices = []>]} : (tensor<4xf32>) -> tensor<4xf32>\n"
      "  func.return %0, %1, %2 : tensor<3xi1>, tensor<2xi1>, tensor<4xf32>\n}\n";
  xrt_program *p = parse_ok(text);
  xrt_program *q = round_trip(p, NULL);
  char *out = NULL;
  size_t n = 0;
  assert_int_equal(xrt_program_print(q, &out, &n), XRT_OK);
  TU_ASSERT_CONTAINS(out, "dense<[true, false, true]> : tensor<3xi1>");
  /* the splat reads back as its elements (both true) */
  if (!strstr(out, "dense<true> : tensor<2xi1>"))
    TU_ASSERT_CONTAINS(out, "dense<[true, true]> : tensor<2xi1>");
  TU_ASSERT_CONTAINS(out, "#stablehlo.output_operand_alias<output_tuple_indices = [], "
                          "operand_index = 0, operand_tuple_indices = []>");
  free(out);
  xrt_program_release(q);
  xrt_program_release(p);
}

TU_MAIN(NULL, NULL, cmocka_unit_test(test_module_facts),
        cmocka_unit_test(test_null_output),
        cmocka_unit_test(test_discardable_attributes),
        cmocka_unit_test(test_many_entries),
        cmocka_unit_test(test_too_many_attributes),
        cmocka_unit_test(test_result_accuracy_forms),
        cmocka_unit_test(test_targets),
        cmocka_unit_test(test_pred_constants_and_aliases))
