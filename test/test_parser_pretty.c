/* test_parser_pretty.c - the pretty (custom assembly) form of each op parses
 * to the same IR as its generic form: same opcodes, operands, result types,
 * attribute names, kinds and values (in any order), and regions.  Also the
 * lowering of the interpreter's test ops (interpreter.print/probe,
 * check.expect_serialized_eq) to custom_calls. */
#include "test_util.h"

static xrt_program *parse_or_fail(const char *what, const char *text) {
  xrt_program *p = NULL;
  xrt_status st = xrt_program_parse(text, strlen(text), NULL, &p);
  if (st != XRT_OK)
    fail_msg("%s: parse failed: %s: %s", what, xrt_strerror(st), xrt_last_error());
  return p;
}

static int type_eq(const xrt_ir_type *a, const xrt_ir_type *b) {
  if (a->kind != b->kind || (a->quant == NULL) != (b->quant == NULL)) return 0;
  if (a->kind == XRT_TYPE_TUPLE) {
    if (a->num_elems != b->num_elems) return 0;
    for (int32_t i = 0; i < a->num_elems; i++)
      if (!type_eq(&a->elems[i], &b->elems[i])) return 0;
    return 1;
  }
  if (a->kind == XRT_TYPE_TOKEN) return 1;
  if (a->shape.dtype != b->shape.dtype || a->shape.rank != b->shape.rank) return 0;
  for (int i = 0; i < a->shape.rank; i++)
    if (a->shape.dims[i] != b->shape.dims[i]) return 0;
  return 1;
}

static int attr_eq(const xrt_ir_attr *a, const xrt_ir_attr *b);

/* DICT fields match by name, whatever their order. */
static int dict_eq(const xrt_ir_attr *a, const xrt_ir_attr *b) {
  if (a->num_items != b->num_items) return 0;
  for (int32_t i = 0; i < a->num_items; i++) {
    const xrt_ir_attr *f = xrt_ir_attr_field(b, a->items[i].name);
    if (!f || !attr_eq(&a->items[i], f)) return 0;
  }
  return 1;
}

static int attr_eq(const xrt_ir_attr *a, const xrt_ir_attr *b) {
  if (a->kind != b->kind) return 0;
  switch (a->kind) {
  case XRT_ATTR_UNIT: return 1;
  case XRT_ATTR_INT:
  case XRT_ATTR_BOOL: return a->i == b->i;
  case XRT_ATTR_FLOAT: return a->f == b->f;
  case XRT_ATTR_STRING:
  case XRT_ATTR_ENUM:
  case XRT_ATTR_SYMBOL:
    return a->n == b->n && memcmp(a->s, b->s, (size_t)a->n) == 0;
  case XRT_ATTR_INTS:
    return a->n == b->n &&
           (a->n == 0 || memcmp(a->ints, b->ints, (size_t)a->n * sizeof(int64_t)) == 0);
  case XRT_ATTR_DENSE:
    return type_eq(&a->lit->type, &b->lit->type) && a->lit->bytes == b->lit->bytes &&
           a->lit->splat == b->lit->splat &&
           memcmp(a->lit->data, b->lit->data, a->lit->bytes) == 0;
  case XRT_ATTR_TYPE: return type_eq(a->type, b->type);
  case XRT_ATTR_LIST:
    if (a->num_items != b->num_items) return 0;
    for (int32_t i = 0; i < a->num_items; i++)
      if (!attr_eq(&a->items[i], &b->items[i])) return 0;
    return 1;
  case XRT_ATTR_DICT: return dict_eq(a, b);
  default: return 0;
  }
}

typedef struct cmp_cx {
  const char *what;
  const xrt_ir_func *fa, *fb;
} cmp_cx;

static void region_same(const cmp_cx *c, const xrt_ir_region *a, const xrt_ir_region *b);

static void op_same(const cmp_cx *c, const xrt_ir_op *a, const xrt_ir_op *b) {
  if (a->code != b->code)
    fail_msg("%s: op %s vs %s", c->what, a->name, b->name);
  if (a->num_operands != b->num_operands)
    fail_msg("%s: %s has %d vs %d operands", c->what, a->name, a->num_operands,
             b->num_operands);
  for (int32_t i = 0; i < a->num_operands; i++)
    if (a->operands[i] != b->operands[i])
      fail_msg("%s: %s operand %d differs", c->what, a->name, i);
  if (a->num_results != b->num_results)
    fail_msg("%s: %s has %d vs %d results", c->what, a->name, a->num_results,
             b->num_results);
  for (int32_t i = 0; i < a->num_results; i++)
    if (!type_eq(&c->fa->value_types[a->results[i]], &c->fb->value_types[b->results[i]]))
      fail_msg("%s: %s result %d has another type", c->what, a->name, i);
  if (a->num_attrs != b->num_attrs)
    fail_msg("%s: %s has %d vs %d attributes", c->what, a->name, a->num_attrs,
             b->num_attrs);
  for (int32_t i = 0; i < a->num_attrs; i++) {
    const xrt_ir_attr *o = xrt_ir_op_attr(b, a->attrs[i].name);
    if (!o) fail_msg("%s: %s lacks attribute %s", c->what, b->name, a->attrs[i].name);
    if (!attr_eq(&a->attrs[i], o))
      fail_msg("%s: %s attribute %s differs (kinds %d, %d)", c->what, a->name,
               a->attrs[i].name, a->attrs[i].kind, o->kind);
  }
  if (a->num_regions != b->num_regions)
    fail_msg("%s: %s region counts differ", c->what, a->name);
  for (int32_t i = 0; i < a->num_regions; i++) region_same(c, &a->regions[i], &b->regions[i]);
}

static void region_same(const cmp_cx *c, const xrt_ir_region *a, const xrt_ir_region *b) {
  if (a->num_args != b->num_args || a->num_ops != b->num_ops)
    fail_msg("%s: regions differ in arguments or ops (%d/%d vs %d/%d)", c->what,
             a->num_args, a->num_ops, b->num_args, b->num_ops);
  for (int32_t i = 0; i < a->num_args; i++)
    if (!type_eq(&c->fa->value_types[a->args[i]], &c->fb->value_types[b->args[i]]))
      fail_msg("%s: region argument %d has another type", c->what, i);
  for (int32_t i = 0; i < a->num_ops; i++) op_same(c, &a->ops[i], &b->ops[i]);
}

/* Parses both texts and asserts the same IR; returns the first op of
 * @main in the pretty program's IR (checked against want). */
static void same_ir(const char *what, const char *pretty, const char *generic,
                    xrt_opcode want) {
  xrt_program *pa = parse_or_fail(what, pretty);
  xrt_program *pb = parse_or_fail(what, generic);
  const xrt_ir_module *ma = xrt_program_module(pa), *mb = xrt_program_module(pb);
  assert_int_equal(ma->num_funcs, mb->num_funcs);
  int found = 0;
  for (int32_t i = 0; i < ma->num_funcs; i++) {
    cmp_cx c = {what, &ma->funcs[i], &mb->funcs[i]};
    assert_string_equal(ma->funcs[i].name, mb->funcs[i].name);
    region_same(&c, &ma->funcs[i].body, &mb->funcs[i].body);
    const xrt_ir_region *r = &ma->funcs[i].body;
    for (int32_t k = 0; k < r->num_ops; k++) found |= r->ops[k].code == want;
  }
  if (!found) fail_msg("%s: no %s op in the program", what, xrt_opcode_name(want));
  xrt_program_release(pa);
  xrt_program_release(pb);
}

/* One function @main(ARGS) -> RES whose body is BODY. */
#define MAIN(args, res, body) \
  "func.func @main(" args ") -> " res " {\n" body "\n}\n"

typedef struct pair {
  const char *what;
  xrt_opcode op;
  const char *pretty, *generic;
} pair;

static const pair pairs[] = {
    {"dot", XRT_OP_DOT,
     MAIN("%a: tensor<2x3xf32>, %b: tensor<3x4xf32>", "tensor<2x4xf32>",
          "%r = stablehlo.dot %a, %b : (tensor<2x3xf32>, tensor<3x4xf32>) -> tensor<2x4xf32>\n"
          "return %r : tensor<2x4xf32>"),
     MAIN("%a: tensor<2x3xf32>, %b: tensor<3x4xf32>", "tensor<2x4xf32>",
          "%r = \"stablehlo.dot\"(%a, %b) : (tensor<2x3xf32>, tensor<3x4xf32>) -> tensor<2x4xf32>\n"
          "\"func.return\"(%r) : (tensor<2x4xf32>) -> ()")},
    {"dot precision", XRT_OP_DOT,
     MAIN("%a: tensor<3xf32>, %b: tensor<3xf32>", "tensor<f32>",
          "%r = stablehlo.dot %a, %b, precision = [DEFAULT, HIGHEST] : (tensor<3xf32>, tensor<3xf32>) -> tensor<f32>\n"
          "return %r : tensor<f32>"),
     MAIN("%a: tensor<3xf32>, %b: tensor<3xf32>", "tensor<f32>",
          "%r = \"stablehlo.dot\"(%a, %b) {precision_config = [#stablehlo<precision DEFAULT>, "
          "#stablehlo<precision HIGHEST>]} : (tensor<3xf32>, tensor<3xf32>) -> tensor<f32>\n"
          "return %r : tensor<f32>")},
    {"dynamic_slice", XRT_OP_DYNAMIC_SLICE,
     MAIN("%x: tensor<4x4xi32>, %i: tensor<i64>, %j: tensor<i64>", "tensor<2x2xi32>",
          "%r = stablehlo.dynamic_slice %x, %i, %j, sizes = [2, 2]\n"
          "    : (tensor<4x4xi32>, tensor<i64>, tensor<i64>) -> tensor<2x2xi32>\n"
          "return %r : tensor<2x2xi32>"),
     MAIN("%x: tensor<4x4xi32>, %i: tensor<i64>, %j: tensor<i64>", "tensor<2x2xi32>",
          "%r = \"stablehlo.dynamic_slice\"(%x, %i, %j) {slice_sizes = array<i64: 2, 2>}\n"
          "    : (tensor<4x4xi32>, tensor<i64>, tensor<i64>) -> tensor<2x2xi32>\n"
          "return %r : tensor<2x2xi32>")},
    {"dynamic_update_slice", XRT_OP_DYNAMIC_UPDATE_SLICE,
     MAIN("%x: tensor<4x4xi32>, %u: tensor<2x2xi32>, %i: tensor<i64>, %j: tensor<i64>",
          "tensor<4x4xi32>",
          "%r = stablehlo.dynamic_update_slice %x, %u, %i, %j\n"
          "    : (tensor<4x4xi32>, tensor<2x2xi32>, tensor<i64>, tensor<i64>) -> tensor<4x4xi32>\n"
          "return %r : tensor<4x4xi32>"),
     MAIN("%x: tensor<4x4xi32>, %u: tensor<2x2xi32>, %i: tensor<i64>, %j: tensor<i64>",
          "tensor<4x4xi32>",
          "%r = \"stablehlo.dynamic_update_slice\"(%x, %u, %i, %j)\n"
          "    : (tensor<4x4xi32>, tensor<2x2xi32>, tensor<i64>, tensor<i64>) -> tensor<4x4xi32>\n"
          "return %r : tensor<4x4xi32>")},
    {"tuple + get_tuple_element", XRT_OP_GET_TUPLE_ELEMENT,
     MAIN("%a: tensor<2xf32>, %b: tensor<i32>", "tensor<i32>",
          "%t = stablehlo.tuple %a, %b : tuple<tensor<2xf32>, tensor<i32>>\n"
          "%r = stablehlo.get_tuple_element %t[1] : (tuple<tensor<2xf32>, tensor<i32>>) -> tensor<i32>\n"
          "return %r : tensor<i32>"),
     MAIN("%a: tensor<2xf32>, %b: tensor<i32>", "tensor<i32>",
          "%t = \"stablehlo.tuple\"(%a, %b) : (tensor<2xf32>, tensor<i32>) -> tuple<tensor<2xf32>, tensor<i32>>\n"
          "%r = \"stablehlo.get_tuple_element\"(%t) {index = 1 : i32} : (tuple<tensor<2xf32>, tensor<i32>>) -> tensor<i32>\n"
          "return %r : tensor<i32>")},
    {"optimization_barrier", XRT_OP_OPTIMIZATION_BARRIER,
     MAIN("%a: tensor<f32>, %b: tensor<2xi32>", "(tensor<f32>, tensor<2xi32>)",
          "%r:2 = stablehlo.optimization_barrier %a, %b : tensor<f32>, tensor<2xi32>\n"
          "return %r#0, %r#1 : tensor<f32>, tensor<2xi32>"),
     MAIN("%a: tensor<f32>, %b: tensor<2xi32>", "(tensor<f32>, tensor<2xi32>)",
          "%r:2 = \"stablehlo.optimization_barrier\"(%a, %b) : (tensor<f32>, tensor<2xi32>) -> (tensor<f32>, tensor<2xi32>)\n"
          "return %r#0, %r#1 : tensor<f32>, tensor<2xi32>")},
    {"optimization_barrier ()", XRT_OP_OPTIMIZATION_BARRIER,
     MAIN("%a: tensor<f32>", "tensor<f32>",
          "stablehlo.optimization_barrier()\n"
          "%r = stablehlo.optimization_barrier {x = 1 : i64} %a : tensor<f32>\n"
          "return %r : tensor<f32>"),
     MAIN("%a: tensor<f32>", "tensor<f32>",
          "\"stablehlo.optimization_barrier\"() : () -> ()\n"
          "%r = \"stablehlo.optimization_barrier\"(%a) {x = 1 : i64} : (tensor<f32>) -> tensor<f32>\n"
          "return %r : tensor<f32>")},
    {"after_all + create_token", XRT_OP_AFTER_ALL,
     MAIN("%a: !stablehlo.token", "!stablehlo.token",
          "%b = stablehlo.create_token : !stablehlo.token\n"
          "%c = stablehlo.after_all : !stablehlo.token\n"
          "%r = stablehlo.after_all %a, %b, %c : !stablehlo.token\n"
          "return %r : !stablehlo.token"),
     MAIN("%a: !stablehlo.token", "!stablehlo.token",
          "%b = \"stablehlo.create_token\"() : () -> !stablehlo.token\n"
          "%c = \"stablehlo.after_all\"() : () -> !stablehlo.token\n"
          "%r = \"stablehlo.after_all\"(%a, %b, %c) : (!stablehlo.token, !stablehlo.token, "
          "!stablehlo.token) -> !stablehlo.token\n"
          "return %r : !stablehlo.token")},
    {"get_dimension_size", XRT_OP_GET_DIMENSION_SIZE,
     MAIN("%a: tensor<2x3xf32>", "tensor<i32>",
          "%r = stablehlo.get_dimension_size %a, dim = 1 : (tensor<2x3xf32>) -> tensor<i32>\n"
          "return %r : tensor<i32>"),
     MAIN("%a: tensor<2x3xf32>", "tensor<i32>",
          "%r = \"stablehlo.get_dimension_size\"(%a) {dimension = 1 : i64} : (tensor<2x3xf32>) -> tensor<i32>\n"
          "return %r : tensor<i32>")},
    {"rng", XRT_OP_RNG,
     MAIN("%a: tensor<f32>, %b: tensor<f32>, %s: tensor<2xi64>", "tensor<3x3xf32>",
          "%r = stablehlo.rng %a, %b, %s, distribution = UNIFORM\n"
          "    : (tensor<f32>, tensor<f32>, tensor<2xi64>) -> tensor<3x3xf32>\n"
          "return %r : tensor<3x3xf32>"),
     MAIN("%a: tensor<f32>, %b: tensor<f32>, %s: tensor<2xi64>", "tensor<3x3xf32>",
          "%r = \"stablehlo.rng\"(%a, %b, %s) {rng_distribution = #stablehlo<rng_distribution UNIFORM>}\n"
          "    : (tensor<f32>, tensor<f32>, tensor<2xi64>) -> tensor<3x3xf32>\n"
          "return %r : tensor<3x3xf32>")},
    {"rng_bit_generator", XRT_OP_RNG_BIT_GENERATOR,
     MAIN("%s: tensor<2xui64>", "(tensor<2xui64>, tensor<2x2xui32>)",
          "%n, %o = stablehlo.rng_bit_generator %s, algorithm = DEFAULT\n"
          "    : (tensor<2xui64>) -> (tensor<2xui64>, tensor<2x2xui32>)\n"
          "return %n, %o : tensor<2xui64>, tensor<2x2xui32>"),
     MAIN("%s: tensor<2xui64>", "(tensor<2xui64>, tensor<2x2xui32>)",
          "%n, %o = \"stablehlo.rng_bit_generator\"(%s) <{rng_algorithm = #stablehlo<rng_algorithm DEFAULT>}>\n"
          "    : (tensor<2xui64>) -> (tensor<2xui64>, tensor<2x2xui32>)\n"
          "return %n, %o : tensor<2xui64>, tensor<2x2xui32>")},
    {"fft", XRT_OP_FFT,
     MAIN("%a: tensor<4xcomplex<f32>>", "tensor<4xcomplex<f32>>",
          "%r = stablehlo.fft %a, type = FFT, length = [4] : (tensor<4xcomplex<f32>>) -> tensor<4xcomplex<f32>>\n"
          "return %r : tensor<4xcomplex<f32>>"),
     MAIN("%a: tensor<4xcomplex<f32>>", "tensor<4xcomplex<f32>>",
          "%r = \"stablehlo.fft\"(%a) {fft_type = #stablehlo<fft_type FFT>, fft_length = array<i64: 4>}\n"
          "    : (tensor<4xcomplex<f32>>) -> tensor<4xcomplex<f32>>\n"
          "return %r : tensor<4xcomplex<f32>>")},
    {"reduce_precision", XRT_OP_REDUCE_PRECISION,
     MAIN("%a: tensor<4xf32>", "tensor<4xf32>",
          "%r = stablehlo.reduce_precision %a, format = e5m10 : tensor<4xf32>\n"
          "return %r : tensor<4xf32>"),
     MAIN("%a: tensor<4xf32>", "tensor<4xf32>",
          "%r = \"stablehlo.reduce_precision\"(%a) {exponent_bits = 5 : i32, mantissa_bits = 10 : i32}\n"
          "    : (tensor<4xf32>) -> tensor<4xf32>\n"
          "return %r : tensor<4xf32>")},
    {"cholesky", XRT_OP_CHOLESKY,
     MAIN("%a: tensor<3x3xf32>", "tensor<3x3xf32>",
          "%r = stablehlo.cholesky %a, lower = true : tensor<3x3xf32>\n"
          "return %r : tensor<3x3xf32>"),
     MAIN("%a: tensor<3x3xf32>", "tensor<3x3xf32>",
          "%r = \"stablehlo.cholesky\"(%a) {lower = true} : (tensor<3x3xf32>) -> tensor<3x3xf32>\n"
          "return %r : tensor<3x3xf32>")},
    {"composite", XRT_OP_COMPOSITE,
     "func.func @f(%x: tensor<f32>) -> tensor<f32> {\n  return %x : tensor<f32>\n}\n"
     MAIN("%a: tensor<f32>", "tensor<f32>",
          "%r = stablehlo.composite \"my.op\" %a {composite_attributes = {n = 2 : i64},\n"
          "    decomposition = @f, version = 1 : i32} : (tensor<f32>) -> tensor<f32>\n"
          "return %r : tensor<f32>"),
     "func.func @f(%x: tensor<f32>) -> tensor<f32> {\n  return %x : tensor<f32>\n}\n"
     MAIN("%a: tensor<f32>", "tensor<f32>",
          "%r = \"stablehlo.composite\"(%a) {name = \"my.op\", composite_attributes = {n = 2 : i64},\n"
          "    decomposition = @f, version = 1 : i32} : (tensor<f32>) -> tensor<f32>\n"
          "return %r : tensor<f32>")},
    {"uniform_quantize + dequantize", XRT_OP_UNIFORM_QUANTIZE,
     MAIN("%a: tensor<4xf32>", "tensor<4xf32>",
          "%q = stablehlo.uniform_quantize %a : (tensor<4xf32>) -> tensor<4x!quant.uniform<i8:f32, 0.5:3>>\n"
          "%r = stablehlo.uniform_dequantize %q : (tensor<4x!quant.uniform<i8:f32, 0.5:3>>) -> tensor<4xf32>\n"
          "return %r : tensor<4xf32>"),
     MAIN("%a: tensor<4xf32>", "tensor<4xf32>",
          "%q = \"stablehlo.uniform_quantize\"(%a) : (tensor<4xf32>) -> tensor<4x!quant.uniform<i8:f32, 0.5:3>>\n"
          "%r = \"stablehlo.uniform_dequantize\"(%q) : (tensor<4x!quant.uniform<i8:f32, 0.5:3>>) -> tensor<4xf32>\n"
          "return %r : tensor<4xf32>")},
    {"dynamic_broadcast_in_dim", XRT_OP_DYNAMIC_BROADCAST_IN_DIM,
     MAIN("%a: tensor<3xf32>, %s: tensor<2xi64>", "tensor<2x3xf32>",
          "%r = stablehlo.dynamic_broadcast_in_dim %a, %s, dims = [1]\n"
          "    : (tensor<3xf32>, tensor<2xi64>) -> tensor<2x3xf32>\n"
          "return %r : tensor<2x3xf32>"),
     MAIN("%a: tensor<3xf32>, %s: tensor<2xi64>", "tensor<2x3xf32>",
          "%r = \"stablehlo.dynamic_broadcast_in_dim\"(%a, %s) {broadcast_dimensions = array<i64: 1>}\n"
          "    : (tensor<3xf32>, tensor<2xi64>) -> tensor<2x3xf32>\n"
          "return %r : tensor<2x3xf32>")},
    {"dynamic_iota", XRT_OP_DYNAMIC_IOTA,
     MAIN("%s: tensor<1xi64>", "tensor<4xi32>",
          "%r = stablehlo.dynamic_iota %s, dim = 0 : (tensor<1xi64>) -> tensor<4xi32>\n"
          "return %r : tensor<4xi32>"),
     MAIN("%s: tensor<1xi64>", "tensor<4xi32>",
          "%r = \"stablehlo.dynamic_iota\"(%s) {iota_dimension = 0 : i64} : (tensor<1xi64>) -> tensor<4xi32>\n"
          "return %r : tensor<4xi32>")},
    {"dynamic_reshape", XRT_OP_DYNAMIC_RESHAPE,
     MAIN("%a: tensor<6xf32>, %s: tensor<2xi64>", "tensor<2x3xf32>",
          "%r = stablehlo.dynamic_reshape %a, %s : (tensor<6xf32>, tensor<2xi64>) -> tensor<2x3xf32>\n"
          "return %r : tensor<2x3xf32>"),
     MAIN("%a: tensor<6xf32>, %s: tensor<2xi64>", "tensor<2x3xf32>",
          "%r = \"stablehlo.dynamic_reshape\"(%a, %s) : (tensor<6xf32>, tensor<2xi64>) -> tensor<2x3xf32>\n"
          "return %r : tensor<2x3xf32>")},
    {"dynamic_pad", XRT_OP_DYNAMIC_PAD,
     MAIN("%a: tensor<2xf32>, %v: tensor<f32>, %l: tensor<1xi64>, %h: tensor<1xi64>, %i: tensor<1xi64>",
          "tensor<5xf32>",
          "%r = stablehlo.dynamic_pad %a, %v, %l, %h, %i\n"
          "    : (tensor<2xf32>, tensor<f32>, tensor<1xi64>, tensor<1xi64>, tensor<1xi64>) -> tensor<5xf32>\n"
          "return %r : tensor<5xf32>"),
     MAIN("%a: tensor<2xf32>, %v: tensor<f32>, %l: tensor<1xi64>, %h: tensor<1xi64>, %i: tensor<1xi64>",
          "tensor<5xf32>",
          "%r = \"stablehlo.dynamic_pad\"(%a, %v, %l, %h, %i)\n"
          "    : (tensor<2xf32>, tensor<f32>, tensor<1xi64>, tensor<1xi64>, tensor<1xi64>) -> tensor<5xf32>\n"
          "return %r : tensor<5xf32>")},
    {"replica_id + partition_id", XRT_OP_REPLICA_ID,
     MAIN("", "(tensor<ui32>, tensor<ui32>)",
          "%a = stablehlo.replica_id : tensor<ui32>\n"
          "%b = stablehlo.partition_id : tensor<ui32>\n"
          "return %a, %b : tensor<ui32>, tensor<ui32>"),
     MAIN("", "(tensor<ui32>, tensor<ui32>)",
          "%a = \"stablehlo.replica_id\"() : () -> tensor<ui32>\n"
          "%b = \"stablehlo.partition_id\"() : () -> tensor<ui32>\n"
          "return %a, %b : tensor<ui32>, tensor<ui32>")},
    {"unary float ops", XRT_OP_IS_FINITE,
     MAIN("%a: tensor<4xf32>", "tensor<4xi1>",
          "%0 = stablehlo.cbrt %a : tensor<4xf32>\n"
          "%1 = stablehlo.tan %0 : tensor<4xf32>\n"
          "%2 = stablehlo.exponential_minus_one %1 : tensor<4xf32>\n"
          "%3 = stablehlo.log_plus_one %2 : tensor<4xf32>\n"
          "%4 = stablehlo.round_nearest_afz %3 : tensor<4xf32>\n"
          "%5 = stablehlo.round_nearest_even %4 : tensor<4xf32>\n"
          "%6 = stablehlo.atan2 %5, %a : tensor<4xf32>\n"
          "%r = stablehlo.is_finite %6 : (tensor<4xf32>) -> tensor<4xi1>\n"
          "return %r : tensor<4xi1>"),
     MAIN("%a: tensor<4xf32>", "tensor<4xi1>",
          "%0 = \"stablehlo.cbrt\"(%a) : (tensor<4xf32>) -> tensor<4xf32>\n"
          "%1 = \"stablehlo.tan\"(%0) : (tensor<4xf32>) -> tensor<4xf32>\n"
          "%2 = \"stablehlo.exponential_minus_one\"(%1) : (tensor<4xf32>) -> tensor<4xf32>\n"
          "%3 = \"stablehlo.log_plus_one\"(%2) : (tensor<4xf32>) -> tensor<4xf32>\n"
          "%4 = \"stablehlo.round_nearest_afz\"(%3) : (tensor<4xf32>) -> tensor<4xf32>\n"
          "%5 = \"stablehlo.round_nearest_even\"(%4) : (tensor<4xf32>) -> tensor<4xf32>\n"
          "%6 = \"stablehlo.atan2\"(%5, %a) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>\n"
          "%r = \"stablehlo.is_finite\"(%6) : (tensor<4xf32>) -> tensor<4xi1>\n"
          "return %r : tensor<4xi1>")},
    {"integer ops", XRT_OP_POPCNT,
     MAIN("%a: tensor<3xi32>", "tensor<3xi32>",
          "%0 = stablehlo.popcnt %a : tensor<3xi32>\n"
          "%1 = stablehlo.count_leading_zeros %0 : tensor<3xi32>\n"
          "%2 = stablehlo.shift_left %1, %a : tensor<3xi32>\n"
          "%3 = stablehlo.shift_right_arithmetic %2, %a : tensor<3xi32>\n"
          "%r = stablehlo.shift_right_logical %3, %a : tensor<3xi32>\n"
          "return %r : tensor<3xi32>"),
     MAIN("%a: tensor<3xi32>", "tensor<3xi32>",
          "%0 = \"stablehlo.popcnt\"(%a) : (tensor<3xi32>) -> tensor<3xi32>\n"
          "%1 = \"stablehlo.count_leading_zeros\"(%0) : (tensor<3xi32>) -> tensor<3xi32>\n"
          "%2 = \"stablehlo.shift_left\"(%1, %a) : (tensor<3xi32>, tensor<3xi32>) -> tensor<3xi32>\n"
          "%3 = \"stablehlo.shift_right_arithmetic\"(%2, %a) : (tensor<3xi32>, tensor<3xi32>) -> tensor<3xi32>\n"
          "%r = \"stablehlo.shift_right_logical\"(%3, %a) : (tensor<3xi32>, tensor<3xi32>) -> tensor<3xi32>\n"
          "return %r : tensor<3xi32>")},
    {"complex, real, imag", XRT_OP_COMPLEX,
     MAIN("%a: tensor<2xf32>, %b: tensor<2xf32>", "(tensor<2xf32>, tensor<2xf32>)",
          "%c = stablehlo.complex %a, %b : tensor<2xcomplex<f32>>\n"
          "%re = stablehlo.real %c : (tensor<2xcomplex<f32>>) -> tensor<2xf32>\n"
          "%im = stablehlo.imag %c : (tensor<2xcomplex<f32>>) -> tensor<2xf32>\n"
          "return %re, %im : tensor<2xf32>, tensor<2xf32>"),
     MAIN("%a: tensor<2xf32>, %b: tensor<2xf32>", "(tensor<2xf32>, tensor<2xf32>)",
          "%c = \"stablehlo.complex\"(%a, %b) : (tensor<2xf32>, tensor<2xf32>) -> tensor<2xcomplex<f32>>\n"
          "%re = \"stablehlo.real\"(%c) : (tensor<2xcomplex<f32>>) -> tensor<2xf32>\n"
          "%im = \"stablehlo.imag\"(%c) : (tensor<2xcomplex<f32>>) -> tensor<2xf32>\n"
          "return %re, %im : tensor<2xf32>, tensor<2xf32>")},
    {"broadcast", XRT_OP_BROADCAST,
     MAIN("%a: tensor<3xi32>", "tensor<1x2x3xi32>",
          "%r = stablehlo.broadcast %a, sizes = [1, 2] : (tensor<3xi32>) -> tensor<1x2x3xi32>\n"
          "return %r : tensor<1x2x3xi32>"),
     MAIN("%a: tensor<3xi32>", "tensor<1x2x3xi32>",
          "%r = \"stablehlo.broadcast\"(%a) {broadcast_sizes = array<i64: 1, 2>} : (tensor<3xi32>) -> tensor<1x2x3xi32>\n"
          "return %r : tensor<1x2x3xi32>")},
    {"quantized constant", XRT_OP_CONSTANT,
     MAIN("", "tensor<2x!quant.uniform<i8:f32, 0.5:3>>",
          "%r = stablehlo.constant() <{value = dense<[1, 2]> : tensor<2xi8>}> : () -> tensor<2x!quant.uniform<i8:f32, 0.5:3>>\n"
          "return %r : tensor<2x!quant.uniform<i8:f32, 0.5:3>>"),
     MAIN("", "tensor<2x!quant.uniform<i8:f32, 0.5:3>>",
          "%r = \"stablehlo.constant\"() {value = dense<[1, 2]> : tensor<2xi8>} : () -> tensor<2x!quant.uniform<i8:f32, 0.5:3>>\n"
          "return %r : tensor<2x!quant.uniform<i8:f32, 0.5:3>>")},
    {"integer and i1 constants", XRT_OP_CONSTANT,
     MAIN("", "(tensor<2xi32>, tensor<2xi1>)",
          "%a = stablehlo.constant dense<[1, 2]> : tensor<2xi32>\n"
          "%b = stablehlo.constant dense<[true, false]> : tensor<2xi1>\n"
          "return %a, %b : tensor<2xi32>, tensor<2xi1>"),
     MAIN("", "(tensor<2xi32>, tensor<2xi1>)",
          "%a = \"stablehlo.constant\"() <{value = dense<[1, 2]> : tensor<2xi32>}> : () -> tensor<2xi32>\n"
          "%b = \"stablehlo.constant\"() {value = dense<[true, false]> : tensor<2xi1>} : () -> tensor<2xi1>\n"
          "return %a, %b : tensor<2xi32>, tensor<2xi1>")},
    {"convolution window", XRT_OP_CONVOLUTION,
     MAIN("%a: tensor<1x4x4x1xf32>, %k: tensor<3x3x1x1xf32>", "tensor<1x2x2x1xf32>",
          "%r = stablehlo.convolution(%a, %k)\n"
          "    dim_numbers = [b, 0, 1, f]x[0, 1, i, o]->[b, 0, 1, f],\n"
          "    window = {stride = [1, 1], pad = [[0, 0], [0, 0]], lhs_dilate = [1, 1],\n"
          "              rhs_dilate = [1, 1], reverse = [false, true]}\n"
          "    {batch_group_count = 1 : i64, feature_group_count = 1 : i64}\n"
          "    : (tensor<1x4x4x1xf32>, tensor<3x3x1x1xf32>) -> tensor<1x2x2x1xf32>\n"
          "return %r : tensor<1x2x2x1xf32>"),
     MAIN("%a: tensor<1x4x4x1xf32>, %k: tensor<3x3x1x1xf32>", "tensor<1x2x2x1xf32>",
          "%r = \"stablehlo.convolution\"(%a, %k) {\n"
          "    dimension_numbers = #stablehlo.conv<[b, 0, 1, f]x[0, 1, i, o]->[b, 0, 1, f]>,\n"
          "    window_strides = array<i64: 1, 1>, padding = dense<0> : tensor<2x2xi64>,\n"
          "    lhs_dilation = array<i64: 1, 1>, rhs_dilation = array<i64: 1, 1>,\n"
          "    window_reversal = array<i1: false, true>,\n"
          "    batch_group_count = 1 : i64, feature_group_count = 1 : i64}\n"
          "    : (tensor<1x4x4x1xf32>, tensor<3x3x1x1xf32>) -> tensor<1x2x2x1xf32>\n"
          "return %r : tensor<1x2x2x1xf32>")},
};

static void test_pretty_forms(void **state) {
  (void)state;
  for (size_t i = 0; i < TU_COUNT(pairs); i++)
    same_ir(pairs[i].what, pairs[i].pretty, pairs[i].generic, pairs[i].op);
}

/* ---- the interpreter's test ops ---- */

static const xrt_ir_op *nth_call(const xrt_ir_region *r, int n) {
  for (int32_t i = 0; i < r->num_ops; i++)
    if (r->ops[i].code == XRT_OP_CUSTOM_CALL && n-- == 0) return &r->ops[i];
  fail_msg("no custom_call number %d", n);
  return NULL;
}

static void assert_str_attr(const xrt_ir_op *op, const char *name, const char *want) {
  const xrt_ir_attr *a = xrt_ir_op_attr(op, name);
  if (!a) fail_msg("no attribute %s", name);
  assert_int_equal(a->kind, XRT_ATTR_STRING);
  assert_int_equal(a->n, (int64_t)strlen(want));
  assert_memory_equal(a->s, want, strlen(want));
}

static void check_interp_ops(const char *text) {
  xrt_program *p = parse_or_fail("interpreter ops", text);
  const xrt_ir_func *f = &xrt_program_module(p)->funcs[0];
  const xrt_ir_op *print = nth_call(&f->body, 0), *probe = nth_call(&f->body, 1);
  const xrt_ir_op *eq = nth_call(&f->body, 2), *eq1 = nth_call(&f->body, 3);
  assert_str_attr(print, "call_target_name", "interpreter.print");
  assert_int_equal(print->num_operands, 1);
  assert_int_equal(print->num_results, 0);
  assert_str_attr(probe, "call_target_name", "interpreter.probe");
  assert_str_attr(probe, "probe_id", "p/0");
  assert_int_equal(probe->num_results, 1);
  const xrt_ir_type *t = &f->value_types[probe->results[0]];
  assert_int_equal(t->shape.dtype, XRT_S32);
  assert_int_equal(t->shape.rank, 1);
  assert_int_equal(t->shape.dims[0], 2);
  assert_str_attr(eq, "call_target_name", "check.expect_serialized_eq");
  assert_str_attr(eq, "probe_id", "p/0");
  assert_int_equal(eq->operands[0], probe->results[0]);
  assert_int_equal(eq->num_results, 0);
  const xrt_ir_attr *iter = xrt_ir_op_attr(eq, "iter");
  assert_non_null(iter);
  assert_int_equal(iter->kind, XRT_ATTR_INT);
  assert_int_equal(iter->i, 0);
  iter = xrt_ir_op_attr(eq1, "iter");
  assert_non_null(iter);
  assert_int_equal(iter->i, 3);
  xrt_program_release(p);
}

static void test_interpreter_ops(void **state) {
  (void)state;
  check_interp_ops(
      "func.func @main(%a: tensor<2xi32>) {\n"
      "  interpreter.print %a {note = \"x\"} : tensor<2xi32>\n"
      "  %p = interpreter.probe %a, probe_id = \"p/0\" : tensor<2xi32>\n"
      "  check.expect_serialized_eq %p, probe_id = \"p/0\" : tensor<2xi32>\n"
      "  check.expect_serialized_eq %p, probe_id = \"p/0\", iter = 3 : tensor<2xi32>\n"
      "  func.return\n}\n");
  check_interp_ops(
      "func.func @main(%a: tensor<2xi32>) {\n"
      "  \"interpreter.print\"(%a) : (tensor<2xi32>) -> ()\n"
      "  %p = \"interpreter.probe\"(%a) {probe_id = \"p/0\"} : (tensor<2xi32>) -> tensor<2xi32>\n"
      "  \"check.expect_serialized_eq\"(%p) {probe_id = \"p/0\"} : (tensor<2xi32>) -> ()\n"
      "  \"check.expect_serialized_eq\"(%p) {probe_id = \"p/0\", iter = 3 : ui32} : (tensor<2xi32>) -> ()\n"
      "  func.return\n}\n");
}

/* A bad program whose error is on line 2 (any failure code). */
static void parse_fails_line2(const char *text, const char *sub) {
  tu_parse_fails(text, NULL, XRT_OK, "<input>:2:", sub);
}

static void test_interpreter_op_errors(void **state) {
  (void)state;
  parse_fails_line2("func.func @main(%a: tensor<2xi32>) {\n"
              "  %p = interpreter.probe %a : tensor<2xi32>\n  func.return\n}\n",
              "probe_id");
  parse_fails_line2("func.func @main(%a: tensor<2xi32>) {\n"
              "  check.expect_serialized_eq %a, probe_id = 3 : tensor<2xi32>\n"
              "  func.return\n}\n",
              "probe_id");
  parse_fails_line2("func.func @main(%a: tensor<2xi32>) {\n"
              "  %p = \"interpreter.probe\"(%a) {probe_id = \"x\"} : (tensor<2xi32>) -> tensor<3xi32>\n"
              "  func.return\n}\n",
              "result type");
  parse_fails_line2("func.func @main(%a: tensor<2xi32>) {\n"
              "  check.expect_serialized_eq %a, probe_id = \"x\", iter = -1 : tensor<2xi32>\n"
              "  func.return\n}\n",
              "iter");
  parse_fails_line2("func.func @main(%a: tensor<2xi32>) {\n"
              "  \"interpreter.print\"(%a, %a) : (tensor<2xi32>, tensor<2xi32>) -> ()\n"
              "  func.return\n}\n",
              "one operand");
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_pretty_forms),
      cmocka_unit_test(test_interpreter_ops),
      cmocka_unit_test(test_interpreter_op_errors),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
