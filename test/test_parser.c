/* test_parser.c - xrt_program_parse: syntax forms, the IR it produces, and
 * exact error locations ("<input>:LINE:COL: ..."; 1-based, pointing at the
 * start of the offending token; an op's location is its name, as in MLIR). */
#include "test_util.h"

static xrt_program *parse_ok(const char *text) {
  xrt_program *p = NULL;
  xrt_status st = xrt_program_parse(text, strlen(text), NULL, &p);
  if (st != XRT_OK)
    fail_msg("parse failed: %s: %s", xrt_strerror(st), xrt_last_error());
  assert_non_null(p);
  return p;
}

static const xrt_ir_func *func_named(const xrt_ir_module *m, const char *name) {
  for (int i = 0; i < m->num_funcs; i++)
    if (strcmp(m->funcs[i].name, name) == 0) return &m->funcs[i];
  fail_msg("no function %s", name);
  return NULL;
}

static const xrt_ir_type *vtype(const xrt_ir_func *f, int32_t id) {
  assert_true(id >= 0 && id < f->num_values);
  return &f->value_types[id];
}

static void assert_tensor(const xrt_ir_type *t, xrt_dtype dt, int rank,
                          const int64_t *dims) {
  assert_int_equal(t->kind, XRT_TYPE_TENSOR);
  assert_int_equal(t->shape.dtype, dt);
  assert_int_equal(t->shape.rank, rank);
  for (int i = 0; i < rank; i++) assert_int_equal(t->shape.dims[i], dims[i]);
}

static const int64_t d2[] = {2}, d3[] = {3};

static const xrt_ir_attr *attr(const xrt_ir_op *op, const char *name, int kind) {
  const xrt_ir_attr *a = xrt_ir_op_attr(op, name);
  if (!a) fail_msg("op %s has no attribute %s", op->name, name);
  assert_int_equal(a->kind, kind);
  return a;
}

static void assert_ints(const xrt_ir_attr *a, int n, const int64_t *want) {
  assert_non_null(a);
  assert_int_equal(a->kind, XRT_ATTR_INTS);
  assert_int_equal(a->n, n);
  for (int i = 0; i < n; i++) assert_int_equal(a->ints[i], want[i]);
}

/* ---- good programs ---- */

static const char *k_pretty =
    "func.func @main(%a: tensor<2xf32>, %b: tensor<2xf32>) -> tensor<2xf32> {\n"
    "  %0 = stablehlo.add %a, %b : tensor<2xf32>\n"
    "  func.return %0 : tensor<2xf32>\n"
    "}\n";

static void test_pretty(void **state) {
  (void)state;
  xrt_program *p = parse_ok(k_pretty);
  assert_int_equal(xrt_program_function_count(p), 1);
  assert_string_equal(xrt_program_function_name(p, 0), "main");
  const xrt_ir_module *m = xrt_program_module(p);
  assert_non_null(m);
  assert_int_equal(m->num_funcs, 1);
  assert_int_equal(m->num_replicas, 1);
  assert_int_equal(m->num_partitions, 1);
  const xrt_ir_func *f = &m->funcs[0];
  assert_true(f->is_public);
  assert_int_equal(f->loc.line, 1);
  assert_int_equal(f->body.num_args, 2);
  assert_int_equal(f->body.num_ops, 2);
  assert_tensor(vtype(f, f->body.args[1]), XRT_F32, 1, d2);
  const xrt_ir_op *add = &f->body.ops[0], *ret = &f->body.ops[1];
  assert_int_equal(add->code, XRT_OP_ADD);
  assert_string_equal(add->name, "stablehlo.add");
  assert_int_equal(add->num_operands, 2);
  assert_int_equal(add->operands[0], f->body.args[0]);
  assert_int_equal(add->operands[1], f->body.args[1]);
  assert_int_equal(add->num_results, 1);
  assert_tensor(vtype(f, add->results[0]), XRT_F32, 1, d2);
  assert_string_equal(add->loc.file, "<input>");
  assert_int_equal(add->loc.line, 2);
  assert_int_equal(add->loc.col, 8);
  assert_int_equal(ret->code, XRT_OP_FUNC_RETURN);
  assert_int_equal(ret->num_operands, 1);
  assert_int_equal(ret->operands[0], add->results[0]);
  assert_int_equal(f->num_results, 1);
  assert_tensor(&f->result_types[0], XRT_F32, 1, d2);
  xrt_program_release(p);
}

static void test_not_nul_terminated(void **state) {
  (void)state;
  size_t n = strlen(k_pretty);
  char *copy = malloc(n); /* no NUL: ASan catches any read past n */
  memcpy(copy, k_pretty, n);
  xrt_program *p = NULL;
  assert_int_equal(xrt_program_parse(copy, n, NULL, &p), XRT_OK);
  xrt_program_release(p);
  /* bytes past len are ignored */
  char *junk = malloc(n + 8);
  memcpy(junk, k_pretty, n);
  memcpy(junk + n, "@@@@@@@@", 8);
  assert_int_equal(xrt_program_parse(junk, n, NULL, &p), XRT_OK);
  xrt_program_release(p);
  free(copy);
  free(junk);
}

static void test_generic_attrs(void **state) {
  (void)state;
  xrt_program *p = parse_ok(
      "func.func @main(%arg0: tensor<4xf32>) -> tensor<2xi1> {\n"
      "  %0 = \"stablehlo.slice\"(%arg0) {start_indices = array<i64: 1>, "
      "limit_indices = array<i64: 3>, strides = array<i64: 1>} : "
      "(tensor<4xf32>) -> tensor<2xf32>\n"
      "  %1 = \"stablehlo.compare\"(%0, %0) <{comparison_direction = "
      "#stablehlo<comparison_direction LT>, compare_type = "
      "#stablehlo<comparison_type FLOAT>}> : (tensor<2xf32>, tensor<2xf32>) "
      "-> tensor<2xi1>\n"
      "  \"func.return\"(%1) : (tensor<2xi1>) -> ()\n"
      "}\n");
  const xrt_ir_func *f = &xrt_program_module(p)->funcs[0];
  assert_int_equal(f->body.num_ops, 3);
  const xrt_ir_op *sl = &f->body.ops[0], *cmp = &f->body.ops[1];
  assert_int_equal(sl->code, XRT_OP_SLICE);
  assert_int_equal(sl->loc.line, 2);
  assert_int_equal(sl->loc.col, 8);
  const int64_t one = 1, three = 3;
  assert_ints(xrt_ir_op_attr(sl, "start_indices"), 1, &one);
  assert_ints(xrt_ir_op_attr(sl, "limit_indices"), 1, &three);
  assert_ints(xrt_ir_op_attr(sl, "strides"), 1, &one);
  assert_tensor(vtype(f, sl->results[0]), XRT_F32, 1, d2);
  assert_int_equal(cmp->code, XRT_OP_COMPARE);
  assert_string_equal(attr(cmp, "comparison_direction", XRT_ATTR_ENUM)->s, "LT");
  assert_string_equal(attr(cmp, "compare_type", XRT_ATTR_ENUM)->s, "FLOAT");
  assert_tensor(vtype(f, cmp->results[0]), XRT_PRED, 1, d2);
  assert_int_equal(f->body.ops[2].code, XRT_OP_FUNC_RETURN);
  xrt_program_release(p);
}

static void test_generic_module(void **state) {
  (void)state;
  xrt_program *p = parse_ok(
      "\"builtin.module\"() ({\n"
      "  \"func.func\"() <{function_type = (tensor<f32>) -> tensor<f32>, "
      "sym_name = \"main\"}> ({\n"
      "  ^bb0(%arg0: tensor<f32>):\n"
      "    %0 = \"stablehlo.negate\"(%arg0) : (tensor<f32>) -> tensor<f32>\n"
      "    \"func.return\"(%0) : (tensor<f32>) -> ()\n"
      "  }) : () -> ()\n"
      "}) : () -> ()\n");
  assert_int_equal(xrt_program_function_count(p), 1);
  assert_string_equal(xrt_program_function_name(p, 0), "main");
  const xrt_ir_func *f = &xrt_program_module(p)->funcs[0];
  assert_int_equal(f->body.num_args, 1);
  assert_int_equal(f->body.ops[0].code, XRT_OP_NEGATE);
  assert_int_equal(f->body.ops[0].operands[0], f->body.args[0]);
  assert_int_equal(f->num_results, 1);
  xrt_program_release(p);
}

static void test_jax_module(void **state) {
  (void)state;
  xrt_program *p = parse_ok(
      "module @jit_f attributes {mhlo.num_partitions = 3 : i32, "
      "mhlo.num_replicas = 2 : i32} {\n"
      "  func.func public @main(%arg0: tensor<3xf32> {mhlo.layout_mode = "
      "\"default\", jax.arg_info = \"x\"}) -> (tensor<3xf32> "
      "{jax.result_info = \"\", mhlo.layout_mode = \"default\"}) {\n"
      "    %0 = stablehlo.multiply %arg0, %arg0 : tensor<3xf32>\n"
      "    return %0 : tensor<3xf32>\n"
      "  }\n"
      "}\n");
  const xrt_ir_module *m = xrt_program_module(p);
  assert_string_equal(m->name, "jit_f");
  assert_int_equal(m->num_replicas, 2);
  assert_int_equal(m->num_partitions, 3);
  const xrt_ir_func *f = &m->funcs[0];
  assert_string_equal(f->name, "main");
  assert_true(f->is_public);
  assert_tensor(vtype(f, f->body.args[0]), XRT_F32, 1, d3);
  assert_int_equal(f->body.ops[0].code, XRT_OP_MULTIPLY);
  assert_int_equal(f->body.ops[0].loc.line, 3);
  assert_int_equal(f->body.ops[0].loc.col, 10);
  assert_int_equal(f->body.ops[1].code, XRT_OP_FUNC_RETURN);
  assert_tensor(&f->result_types[0], XRT_F32, 1, d3);
  xrt_program_release(p);
}

static void test_locations(void **state) {
  (void)state;
  xrt_program *p = parse_ok(
      "#loc9 = loc(\"top.py\":1:2)\n"
      "module @m {\n"
      "  func.func @main(%arg0: tensor<f32> loc(\"x\")) -> tensor<f32> {\n"
      "    %0 = stablehlo.sine %arg0 : tensor<f32> loc(#loc3)\n"
      "    %1 = stablehlo.cosine %0 : tensor<f32> loc(\"a.py\":7:9)\n"
      "    %2 = stablehlo.negate %1 : tensor<f32> loc(#loc5)\n"
      "    %3 = stablehlo.abs %2 : tensor<f32> loc(#loc9)\n"
      "    return %3 : tensor<f32> loc(#loc)\n"
      "  } loc(#loc)\n"
      "} loc(#loc)\n"
      "#loc = loc(unknown)\n"
      "#loc1 = loc(\"/tmp/a.py\":3:0)\n"
      "#loc2 = loc(\"f\"(#loc1))\n"
      "#loc3 = loc(\"jit(f)/jit(main)/sin\"(#loc2))\n"
      "#loc4 = loc(fused[#loc1, #loc2])\n"
      "#loc5 = loc(callsite(#loc4 at #loc1))\n");
  const xrt_ir_func *f = &xrt_program_module(p)->funcs[0];
  assert_int_equal(f->body.num_ops, 5);
  assert_int_equal(f->body.ops[0].code, XRT_OP_SINE);
  assert_int_equal(f->body.ops[1].code, XRT_OP_COSINE);
  assert_int_equal(f->body.ops[2].code, XRT_OP_NEGATE);
  assert_int_equal(f->body.ops[3].code, XRT_OP_ABS);
  assert_int_equal(f->body.ops[4].code, XRT_OP_FUNC_RETURN);
  xrt_program_release(p);
}

static void test_call_multi_result(void **state) {
  (void)state;
  xrt_program *p = parse_ok(
      "func.func private @two(%x: tensor<i32>) -> (tensor<i32>, tensor<i32>) {\n"
      "  %0 = stablehlo.add %x, %x : tensor<i32>\n"
      "  return %x, %0 : tensor<i32>, tensor<i32>\n"
      "}\n"
      "func.func @main(%a: tensor<i32>) -> tensor<i32> {\n"
      "  %0:2 = call @two(%a) : (tensor<i32>) -> (tensor<i32>, tensor<i32>)\n"
      "  %1 = stablehlo.multiply %0#0, %0#1 : tensor<i32>\n"
      "  %2:2 = func.call @two(%1) : (tensor<i32>) -> (tensor<i32>, tensor<i32>)\n"
      "  return %2#1 : tensor<i32>\n"
      "}\n");
  assert_int_equal(xrt_program_function_count(p), 2);
  assert_string_equal(xrt_program_function_name(p, 0), "two");
  assert_string_equal(xrt_program_function_name(p, 1), "main");
  const xrt_ir_module *m = xrt_program_module(p);
  const xrt_ir_func *two = func_named(m, "two"), *mainf = func_named(m, "main");
  assert_false(two->is_public);
  assert_true(mainf->is_public);
  assert_int_equal(two->num_results, 2);
  const xrt_ir_op *call = &mainf->body.ops[0], *mul = &mainf->body.ops[1];
  assert_int_equal(call->code, XRT_OP_FUNC_CALL);
  assert_int_equal(call->callee, 0);
  assert_int_equal(call->num_results, 2);
  assert_int_equal(call->operands[0], mainf->body.args[0]);
  assert_int_equal(mul->operands[0], call->results[0]);
  assert_int_equal(mul->operands[1], call->results[1]);
  assert_int_not_equal(call->results[0], call->results[1]);
  const xrt_ir_op *call2 = &mainf->body.ops[2], *ret = &mainf->body.ops[3];
  assert_int_equal(call2->code, XRT_OP_FUNC_CALL);
  assert_int_equal(call2->operands[0], mul->results[0]);
  assert_int_equal(ret->operands[0], call2->results[1]);
  xrt_program_release(p);
}

/* The literal of constant op i of the only function. */
static const xrt_ir_literal *const_lit(const xrt_program *p, int i) {
  const xrt_ir_op *op = &xrt_program_module(p)->funcs[0].body.ops[i];
  assert_int_equal(op->code, XRT_OP_CONSTANT);
  const xrt_ir_attr *a = attr(op, "value", XRT_ATTR_DENSE);
  assert_non_null(a->lit);
  return a->lit;
}

/* Asserts a literal holds want (n elements of esize bytes), splat or not. */
static void assert_lit(const xrt_ir_literal *l, const void *want, size_t n,
                       size_t esize) {
  if (l->splat) {
    assert_int_equal(l->bytes, esize);
    for (size_t i = 0; i < n; i++)
      assert_memory_equal(l->data, (const char *)want + i * esize, esize);
  } else {
    assert_int_equal(l->bytes, n * esize);
    assert_memory_equal(l->data, want, n * esize);
  }
}

static void test_literals(void **state) {
  (void)state;
  xrt_program *p = parse_ok(
      "func.func @main() -> tensor<2xf32> {\n"
      "  %0 = stablehlo.constant dense<\"0x0000803F0000003F\"> : tensor<2xf32>\n"
      "  %1 = stablehlo.constant dense<2.5> : tensor<2x3xf32>\n"
      "  %2 = stablehlo.constant dense<[[1, 2, 3], [4, 5, 6]]> : tensor<2x3xi32>\n"
      "  %3 = stablehlo.constant dense<[true, false, true]> : tensor<3xi1>\n"
      "  %4 = stablehlo.constant dense<[0x7F800000, 0xFF800000, 0x7FC00001]> : tensor<3xf32>\n"
      "  %5 = stablehlo.constant dense<-1.5e-2> : tensor<f32>\n"
      "  %6 = stablehlo.constant dense<[(1.5, -2.0), (0.0, 3.25)]> : tensor<2xcomplex<f32>>\n"
      "  %7 = stablehlo.constant dense<[-128, 127, -1]> : tensor<3xi8>\n"
      "  %8 = stablehlo.constant dense<0x0123456789ABCDEF> : tensor<i64>\n"
      "  %9 = stablehlo.constant dense<[0x7E01, 0x8000]> : tensor<2xf16>\n"
      "  %10 = stablehlo.constant dense<[1.5, -0.0]> : tensor<2xbf16>\n"
      "  func.return %0 : tensor<2xf32>\n"
      "}\n");
  const float f0[2] = {1.0f, 0.5f};
  assert_lit(const_lit(p, 0), f0, 2, 4);
  const xrt_ir_literal *l1 = const_lit(p, 1);
  const int64_t d23[] = {2, 3};
  assert_tensor(&l1->type, XRT_F32, 2, d23);
  const float f1[6] = {2.5f, 2.5f, 2.5f, 2.5f, 2.5f, 2.5f};
  assert_lit(l1, f1, 6, 4);
  const int32_t i2[6] = {1, 2, 3, 4, 5, 6};
  assert_lit(const_lit(p, 2), i2, 6, 4);
  const uint8_t b3[3] = {1, 0, 1};
  assert_lit(const_lit(p, 3), b3, 3, 1);
  const uint32_t u4[3] = {0x7F800000u, 0xFF800000u, 0x7FC00001u};
  assert_lit(const_lit(p, 4), u4, 3, 4);
  const float f5 = -1.5e-2f;
  assert_lit(const_lit(p, 5), &f5, 1, 4);
  const float c6[4] = {1.5f, -2.0f, 0.0f, 3.25f};
  assert_lit(const_lit(p, 6), c6, 2, 8);
  const int8_t i7[3] = {-128, 127, -1};
  assert_lit(const_lit(p, 7), i7, 3, 1);
  const int64_t i8 = 0x0123456789ABCDEFll;
  assert_lit(const_lit(p, 8), &i8, 1, 8);
  const uint16_t h9[2] = {0x7E01, 0x8000};
  assert_lit(const_lit(p, 9), h9, 2, 2);
  const uint16_t bf10[2] = {0x3FC0, 0x8000};
  assert_lit(const_lit(p, 10), bf10, 2, 2);
  xrt_program_release(p);
}

static void test_literal_ui4_range(void **state) {
  (void)state;
  /* 16 is out of range for ui4 */
  tu_parse_fails("func.func @main() -> tensor<3xui4> {\n"
            "  %0 = stablehlo.constant dense<[0, 7, 16]> : tensor<3xui4>\n"
            "  func.return %0 : tensor<3xui4>\n"
            "}\n",
            NULL, XRT_INVALID_ARGUMENT, "<input>:2:40:", NULL);
}

static void test_more_literals(void **state) {
  (void)state;
  xrt_program *p = parse_ok(
      "func.func @main() -> tensor<3xui4> {\n"
      "  %0 = stablehlo.constant dense<[0, 7, 15]> : tensor<3xui4>\n"
      "  %1 = stablehlo.constant dense<[-8, 7]> : tensor<2xi4>\n"
      "  %2 = stablehlo.constant dense<[0x8000000000000000, 1.0]> : tensor<2xf64>\n"
      "  %3 = stablehlo.constant dense<18446744073709551615> : tensor<ui64>\n"
      "  %4 = stablehlo.constant dense<[[[1]], [[2]]]> : tensor<2x1x1xi16>\n"
      "  %5 = stablehlo.constant dense<> : tensor<0xf32>\n"
      "  func.return %0 : tensor<3xui4>\n"
      "}\n");
  const uint8_t u0[3] = {0, 7, 15};
  assert_lit(const_lit(p, 0), u0, 3, 1);
  const int8_t s1[2] = {-8, 7};
  assert_lit(const_lit(p, 1), s1, 2, 1);
  const double f2[2] = {-0.0, 1.0};
  assert_lit(const_lit(p, 2), f2, 2, 8);
  const uint64_t u3 = UINT64_MAX;
  assert_lit(const_lit(p, 3), &u3, 1, 8);
  const int16_t s4[2] = {1, 2};
  assert_lit(const_lit(p, 4), s4, 2, 2);
  const xrt_ir_literal *l5 = const_lit(p, 5);
  assert_int_equal(l5->type.shape.dims[0], 0);
  assert_false(!l5->splat && l5->bytes != 0);
  xrt_program_release(p);
}

static void test_attr_forms(void **state) {
  (void)state;
  xrt_program *p = parse_ok(
      "func.func @main(%a: tensor<2x3xf32>, %b: tensor<3x4xf32>) -> tensor<2x4xf32> {\n"
      "  %0 = stablehlo.dot_general %a, %b, contracting_dims = [1] x [0] : "
      "(tensor<2x3xf32>, tensor<3x4xf32>) -> tensor<2x4xf32>\n"
      "  %1 = \"stablehlo.dot_general\"(%a, %b) {dot_dimension_numbers = "
      "#stablehlo.dot<lhs_contracting_dimensions = [1], "
      "rhs_contracting_dimensions = [0]>} : (tensor<2x3xf32>, tensor<3x4xf32>) "
      "-> tensor<2x4xf32>\n"
      "  %2 = stablehlo.iota dim = 1 : tensor<2x4xf32>\n"
      "  %3 = stablehlo.custom_call @foo(%2) {backend_config = \"cfg\", "
      "has_side_effect = true} : (tensor<2x4xf32>) -> tensor<2x4xf32>\n"
      "  %4 = stablehlo.compare GE, %0, %1, FLOAT : (tensor<2x4xf32>, "
      "tensor<2x4xf32>) -> tensor<2x4xi1>\n"
      "  %5 = stablehlo.concatenate %0, %1, dim = 0 : (tensor<2x4xf32>, "
      "tensor<2x4xf32>) -> tensor<4x4xf32>\n"
      "  %6 = stablehlo.transpose %5, dims = [1, 0] : (tensor<4x4xf32>) -> "
      "tensor<4x4xf32>\n"
      "  func.return %3 : tensor<2x4xf32>\n"
      "}\n");
  const xrt_ir_op *ops = xrt_program_module(p)->funcs[0].body.ops;
  const int64_t zero = 0, one = 1, perm[2] = {1, 0};
  for (int i = 0; i < 2; i++) {
    assert_int_equal(ops[i].code, XRT_OP_DOT_GENERAL);
    const xrt_ir_attr *dn = attr(&ops[i], "dot_dimension_numbers", XRT_ATTR_DICT);
    assert_ints(xrt_ir_attr_field(dn, "lhs_contracting_dimensions"), 1, &one);
    assert_ints(xrt_ir_attr_field(dn, "rhs_contracting_dimensions"), 1, &zero);
  }
  assert_int_equal(ops[2].code, XRT_OP_IOTA);
  assert_int_equal(attr(&ops[2], "iota_dimension", XRT_ATTR_INT)->i, 1);
  assert_int_equal(ops[3].code, XRT_OP_CUSTOM_CALL);
  assert_string_equal(xrt_ir_op_attr(&ops[3], "call_target_name")->s, "foo");
  const xrt_ir_attr *bc = attr(&ops[3], "backend_config", XRT_ATTR_STRING);
  assert_string_equal(bc->s, "cfg");
  assert_int_equal(bc->n, 3);
  assert_int_equal(attr(&ops[3], "has_side_effect", XRT_ATTR_BOOL)->i, 1);
  assert_string_equal(attr(&ops[4], "comparison_direction", XRT_ATTR_ENUM)->s, "GE");
  assert_string_equal(attr(&ops[4], "compare_type", XRT_ATTR_ENUM)->s, "FLOAT");
  assert_int_equal(attr(&ops[5], "dimension", XRT_ATTR_INT)->i, 0);
  assert_ints(xrt_ir_op_attr(&ops[6], "permutation"), 2, perm);
  xrt_program_release(p);
}

static void test_region(void **state) {
  (void)state;
  xrt_program *p = parse_ok(
      "func.func @main(%x: tensor<4xf32>, %init: tensor<f32>) -> tensor<f32> {\n"
      "  %0 = stablehlo.reduce(%x init: %init) applies stablehlo.add across "
      "dimensions = [0] : (tensor<4xf32>, tensor<f32>) -> tensor<f32>\n"
      "  func.return %0 : tensor<f32>\n"
      "}\n");
  const xrt_ir_func *f = &xrt_program_module(p)->funcs[0];
  const xrt_ir_op *red = &f->body.ops[0];
  assert_int_equal(red->code, XRT_OP_REDUCE);
  assert_int_equal(red->num_operands, 2);
  const int64_t zero = 0;
  assert_ints(xrt_ir_op_attr(red, "dimensions"), 1, &zero);
  assert_int_equal(red->num_regions, 1);
  const xrt_ir_region *r = &red->regions[0];
  assert_int_equal(r->num_args, 2);
  assert_tensor(vtype(f, r->args[0]), XRT_F32, 0, NULL);
  assert_int_equal(r->num_ops, 2);
  assert_int_equal(r->ops[0].code, XRT_OP_ADD);
  assert_int_equal(r->ops[0].operands[0], r->args[0]);
  assert_int_equal(r->ops[0].operands[1], r->args[1]);
  assert_int_equal(r->ops[1].code, XRT_OP_RETURN);
  assert_int_equal(r->ops[1].operands[0], r->ops[0].results[0]);
  assert_tensor(vtype(f, red->results[0]), XRT_F32, 0, NULL);
  xrt_program_release(p);
}

static void test_while_region(void **state) {
  (void)state;
  xrt_program *p = parse_ok(
      "func.func @main(%n: tensor<i64>) -> tensor<i64> {\n"
      "  %c0 = stablehlo.constant dense<0> : tensor<i64>\n"
      "  %r0, %r1 = stablehlo.while(%i = %c0, %s = %c0) : tensor<i64>, tensor<i64>\n"
      "  cond {\n"
      "    %lt = stablehlo.compare LT, %i, %n : (tensor<i64>, tensor<i64>) -> tensor<i1>\n"
      "    stablehlo.return %lt : tensor<i1>\n"
      "  } do {\n"
      "    %s2 = stablehlo.add %s, %i : tensor<i64>\n"
      "    stablehlo.return %i, %s2 : tensor<i64>, tensor<i64>\n"
      "  }\n"
      "  func.return %r1 : tensor<i64>\n"
      "}\n");
  const xrt_ir_func *f = &xrt_program_module(p)->funcs[0];
  const xrt_ir_op *w = &f->body.ops[1];
  assert_int_equal(w->code, XRT_OP_WHILE);
  assert_int_equal(w->num_operands, 2);
  assert_int_equal(w->num_results, 2);
  assert_int_equal(w->num_regions, 2);
  assert_int_equal(w->regions[0].num_args, 2);
  assert_int_equal(w->regions[1].num_args, 2);
  /* the cond region uses %n from the enclosing function */
  assert_int_equal(w->regions[0].ops[0].operands[1], f->body.args[0]);
  assert_int_equal(f->body.ops[2].operands[0], w->results[1]);
  xrt_program_release(p);
}

/* ---- errors with exact locations ---- */

static void test_err_empty(void **state) {
  (void)state;
  tu_parse_fails("", NULL, XRT_INVALID_ARGUMENT, "<input>:1:1:", NULL);
}

static void test_err_truncated(void **state) {
  (void)state;
  /* ends after "2" on line 2: the error is at end of input, column 38 */
  tu_parse_fails("func.func @main() -> tensor<2xi32> {\n"
            "  %0 = stablehlo.constant dense<[1, 2",
            NULL, XRT_INVALID_ARGUMENT, "<input>:2:38:", NULL);
}

static void test_err_unknown_op(void **state) {
  (void)state;
  tu_parse_fails("func.func @main(%a: tensor<f32>) -> tensor<f32> {\n"
            "  %0 = stablehlo.frobnicate %a : tensor<f32>\n"
            "  func.return %0 : tensor<f32>\n"
            "}\n",
            NULL, XRT_UNIMPLEMENTED, "<input>:2:8:", "stablehlo.frobnicate");
}

static const char *k_undef =
    "func.func @main(%a: tensor<f32>) -> tensor<f32> {\n"
    "  %0 = stablehlo.add %a, %7 : tensor<f32>\n"
    "  func.return %0 : tensor<f32>\n"
    "}\n";

static void test_err_undefined_value(void **state) {
  (void)state;
  tu_parse_fails(k_undef, NULL, XRT_INVALID_ARGUMENT, "<input>:2:26:", "%7");
}

static void test_err_redefined_value(void **state) {
  (void)state;
  tu_parse_fails("func.func @main(%a: tensor<f32>) -> tensor<f32> {\n"
            "  %0 = stablehlo.negate %a : tensor<f32>\n"
            "  %0 = stablehlo.negate %a : tensor<f32>\n"
            "  func.return %0 : tensor<f32>\n"
            "}\n",
            NULL, XRT_INVALID_ARGUMENT, "<input>:3:3:", "%0");
}

static void test_err_operand_types(void **state) {
  (void)state;
  /* verifier: add of f32 and i32, reported at the op name */
  tu_parse_fails("func.func @main(%a: tensor<f32>, %b: tensor<i32>) -> tensor<f32> {\n"
            "  %0 = stablehlo.add %a, %b : (tensor<f32>, tensor<i32>) -> tensor<f32>\n"
            "  func.return %0 : tensor<f32>\n"
            "}\n",
            NULL, XRT_INVALID_ARGUMENT, "<input>:2:8:", NULL);
}

static void test_err_use_type(void **state) {
  (void)state;
  /* %a is f32 but its use says i32: reported at the use */
  tu_parse_fails("func.func @main(%a: tensor<f32>) -> tensor<i32> {\n"
            "  %0 = stablehlo.negate %a : tensor<i32>\n"
            "  func.return %0 : tensor<i32>\n"
            "}\n",
            NULL, XRT_INVALID_ARGUMENT, "<input>:2:25:", NULL);
}

static void test_err_return_type(void **state) {
  (void)state;
  tu_parse_fails("func.func @main(%a: tensor<i32>) -> tensor<f32> {\n"
            "  func.return %a : tensor<i32>\n"
            "}\n",
            NULL, XRT_INVALID_ARGUMENT, "<input>:2:3:", NULL);
}

static void test_err_literal_count(void **state) {
  (void)state;
  /* the offending token is the literal's opening '[' (column 33) */
  tu_parse_fails("func.func @main() -> tensor<2xi32> {\n"
            "  %0 = stablehlo.constant dense<[1, 2, 3]> : tensor<2xi32>\n"
            "  func.return %0 : tensor<2xi32>\n"
            "}\n",
            NULL, XRT_INVALID_ARGUMENT, "<input>:2:33:", NULL);
}

static void test_err_int_range(void **state) {
  (void)state;
  tu_parse_fails("func.func @main() -> tensor<2xi8> {\n"
            "  %0 = stablehlo.constant dense<[1, 300]> : tensor<2xi8>\n"
            "  func.return %0 : tensor<2xi8>\n"
            "}\n",
            NULL, XRT_INVALID_ARGUMENT, "<input>:2:37:", NULL);
}

static void test_err_missing_brace(void **state) {
  (void)state;
  tu_parse_fails("func.func @main(%a: tensor<f32>) -> tensor<f32> {\n"
            "  func.return %a : tensor<f32>\n",
            NULL, XRT_INVALID_ARGUMENT, "<input>:3:1:", NULL);
}

static void test_err_filename_line_offset(void **state) {
  (void)state;
  xrt_compile_options o;
  xrt_compile_options_init(&o);
  assert_null(o.entry);
  assert_null(o.filename);
  assert_int_equal(o.line_offset, 0);
  o.filename = "model.mlir";
  tu_parse_fails(k_undef, &o, XRT_INVALID_ARGUMENT, "model.mlir:2:26:", NULL);
  o.line_offset = 10;
  tu_parse_fails(k_undef, &o, XRT_INVALID_ARGUMENT, "model.mlir:12:26:", NULL);
  o.filename = NULL;
  tu_parse_fails(k_undef, &o, XRT_INVALID_ARGUMENT, "<input>:12:26:", NULL);
}

static void test_err_locations_in_ir(void **state) {
  (void)state;
  /* line_offset and filename also apply to the locations in the IR */
  xrt_compile_options o;
  xrt_compile_options_init(&o);
  o.filename = "chunk.mlir";
  o.line_offset = 5;
  xrt_program *p = NULL;
  assert_int_equal(xrt_program_parse(k_pretty, strlen(k_pretty), &o, &p), XRT_OK);
  const xrt_ir_op *add = &xrt_program_module(p)->funcs[0].body.ops[0];
  assert_string_equal(add->loc.file, "chunk.mlir");
  assert_int_equal(add->loc.line, 7);
  assert_int_equal(add->loc.col, 8);
  xrt_program_release(p);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_pretty),
      cmocka_unit_test(test_not_nul_terminated),
      cmocka_unit_test(test_generic_attrs),
      cmocka_unit_test(test_generic_module),
      cmocka_unit_test(test_jax_module),
      cmocka_unit_test(test_locations),
      cmocka_unit_test(test_call_multi_result),
      cmocka_unit_test(test_literals),
      cmocka_unit_test(test_literal_ui4_range),
      cmocka_unit_test(test_more_literals),
      cmocka_unit_test(test_attr_forms),
      cmocka_unit_test(test_region),
      cmocka_unit_test(test_while_region),
      cmocka_unit_test(test_err_empty),
      cmocka_unit_test(test_err_truncated),
      cmocka_unit_test(test_err_unknown_op),
      cmocka_unit_test(test_err_undefined_value),
      cmocka_unit_test(test_err_redefined_value),
      cmocka_unit_test(test_err_operand_types),
      cmocka_unit_test(test_err_use_type),
      cmocka_unit_test(test_err_return_type),
      cmocka_unit_test(test_err_literal_count),
      cmocka_unit_test(test_err_int_range),
      cmocka_unit_test(test_err_missing_brace),
      cmocka_unit_test(test_err_filename_line_offset),
      cmocka_unit_test(test_err_locations_in_ir),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
