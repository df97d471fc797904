/*
 * test_refine_errors.c - the refusals of shape refinement (src/core/refine.c)
 * and the paths of it test_dynamic_shapes.c does not take: result types
 * that disagree with the operands' shapes, a loop value whose shape changes
 * in the body, a function that returns another shape than it declares, a
 * function that calls itself, shape assertions whose condition is unknown
 * or whose message has escaped braces and out-of-range inputs, a wrong
 * count of argument shapes, dimension arguments (i64 and i32, found by
 * search or refused), calls whose signature the callee does not match,
 * programs refined without argument shapes (static arguments around a
 * dynamic body, a real_dynamic_slice), and one function specialised for
 * two known dimension values.  Each refusal is checked by
 * its status and message; each success by the refined output shapes or
 * values, computed by hand.
 */
#include "test_util.h"

#define C(state) ((xrt_client *)*(state))

/* Compiles text, called rf.mlir, for the argument shapes. */
static xrt_executable *rf_compile(xrt_client *c, const char *text, int nin,
                                  const xrt_shape *in, xrt_status *st) {
  return tu_compile_for(c, text, "rf.mlir", nin, in, st);
}

/* The shapes of the first nout outputs of text compiled for in; fails
 * the test unless it compiles. */
static void rf_outputs(xrt_client *c, const char *text, int nin,
                       const xrt_shape *in, xrt_shape *out, int nout) {
  xrt_status s;
  xrt_executable *exe = rf_compile(c, text, nin, in, &s);
  if (s) fail_msg("%s", tu_msg);
  for (int k = 0; k < nout; k++)
    assert_int_equal(xrt_executable_output_shape(exe, k, &out[k]), XRT_OK);
  xrt_executable_release(exe);
}

static void rf_refused(xrt_client *c, const char *text, int nin,
                       const xrt_shape *in, xrt_status want, const char *prefix,
                       const char *what) {
  tu_compile_fails(c, text, "rf.mlir", nin, in, want, prefix, what);
}

static void test_result_disagrees(void **state) {
  /* add of [4] declared [3] */
  static const char *p =
      "func.func @main(%x: tensor<?xf32>) -> tensor<3xf32> {\n"
      "  %r = stablehlo.add %x, %x : (tensor<?xf32>, tensor<?xf32>) -> tensor<3xf32>\n"
      "  return %r : tensor<3xf32>\n}\n";
  xrt_shape in[1] = {TU_SHAPE(XRT_F32, 4)};
  rf_refused(C(state), p, 1, in, XRT_INVALID_ARGUMENT, "rf.mlir:2:8: stablehlo.add: ",
             "result 0: the operands' shapes give tensor<4xf32>, which "
             "disagrees with its type tensor<3xf32>");
  /* a call whose callee's result has another rank than the call says */
  static const char *q =
      "func.func @main(%x: tensor<?xf32>) -> tensor<?x?xf32> {\n"
      "  %r = func.call @f(%x) : (tensor<?xf32>) -> tensor<?x?xf32>\n"
      "  return %r : tensor<?x?xf32>\n}\n"
      "func.func private @f(%x: tensor<?xf32>) -> tensor<?x?xf32> {\n"
      "  %r = stablehlo.reshape %x : (tensor<?xf32>) -> tensor<?xf32>\n"
      "  return %r : tensor<?xf32>\n}\n";
  xrt_status s;
  xrt_executable *exe = rf_compile(C(state), q, 1, in, &s);
  assert_int_not_equal(s, XRT_OK);
  assert_null(exe);
  assert_string_equal(tu_msg, "rf.mlir:7:3: func.return: @f returns "
                              "tensor<4xf32> as result 0, declared tensor<?x?xf32>");
}

/* while: the body doubles the loop value's length */
static void test_loop_value_changes(void **state) {
  static const char *p =
      "func.func @main(%x: tensor<?xf32>) -> tensor<?xf32> {\n"
      "  %z = stablehlo.constant dense<0> : tensor<i32>\n"
      "  %r:2 = stablehlo.while(%i = %z, %v = %x) : tensor<i32>, tensor<?xf32>\n"
      "   cond {\n"
      "    %n = stablehlo.constant dense<3> : tensor<i32>\n"
      "    %c = stablehlo.compare LT, %i, %n : (tensor<i32>, tensor<i32>) -> tensor<i1>\n"
      "    stablehlo.return %c : tensor<i1>\n"
      "  } do {\n"
      "    %w = stablehlo.concatenate %v, %v, dim = 0 : (tensor<?xf32>, tensor<?xf32>) -> tensor<?xf32>\n"
      "    stablehlo.return %i, %w : tensor<i32>, tensor<?xf32>\n"
      "  }\n"
      "  return %r#1 : tensor<?xf32>\n}\n";
  xrt_shape in[1] = {TU_SHAPE(XRT_F32, 4)};
  rf_refused(C(state), p, 1, in, XRT_INVALID_ARGUMENT, "rf.mlir:3:10: stablehlo.while: ",
             "loop value 1 enters as tensor<4xf32> and leaves the body as "
             "tensor<8xf32>");
}

/* a private function declared to return [3] returns [4] */
static void test_function_returns_other_shape(void **state) {
  static const char *p =
      "func.func @main(%x: tensor<?xf32>) -> tensor<?xf32> {\n"
      "  %r = func.call @f(%x) : (tensor<?xf32>) -> tensor<?xf32>\n"
      "  return %r : tensor<?xf32>\n}\n"
      "func.func private @f(%x: tensor<?xf32>) -> tensor<3xf32> {\n"
      "  %y = stablehlo.negate %x : tensor<?xf32>\n"
      "  return %y : tensor<?xf32>\n}\n";
  xrt_shape in[1] = {TU_SHAPE(XRT_F32, 4)};
  rf_refused(C(state), p, 1, in, XRT_INVALID_ARGUMENT, "rf.mlir:7:3: func.return: ",
             "@f returns tensor<4xf32> as result 0, declared tensor<3xf32>");
}

static void test_recursion(void **state) {
  static const char *p =
      "func.func @main(%x: tensor<?xf32>) -> tensor<?xf32> {\n"
      "  %r = func.call @f(%x) : (tensor<?xf32>) -> tensor<?xf32>\n"
      "  return %r : tensor<?xf32>\n}\n"
      "func.func private @f(%x: tensor<?xf32>) -> tensor<?xf32> {\n"
      "  %y = func.call @f(%x) : (tensor<?xf32>) -> tensor<?xf32>\n"
      "  return %y : tensor<?xf32>\n}\n";
  xrt_shape in[1] = {TU_SHAPE(XRT_F32, 2)};
  xrt_status s;
  xrt_executable *exe = rf_compile(C(state), p, 1, in, &s);
  assert_null(exe);
  assert_int_not_equal(s, XRT_OK);
  assert_int_equal(s, XRT_UNIMPLEMENTED);
  assert_string_equal(tu_msg, "rf.mlir:6:8: func.call: @f calls itself");
}

static void test_shape_assertions(void **state) {
  /* the condition depends on an argument's values: not known */
  static const char *p =
      "func.func @main(%x: tensor<?xf32>, %b: tensor<i1>) -> tensor<?xf32> {\n"
      "  stablehlo.custom_call @shape_assertion(%b) {api_version = 2 : i32, "
      "error_message = \"never\", has_side_effect = true} : (tensor<i1>) -> ()\n"
      "  return %x : tensor<?xf32>\n}\n";
  xrt_shape in[2] = {TU_SHAPE(XRT_F32, 2), TU_SCALAR(XRT_PRED)};
  rf_refused(C(state), p, 2, in, XRT_INVALID_ARGUMENT, "rf.mlir:2:3: stablehlo.custom_call: ",
             "the assertion's condition is not known at compile time");
  /* a false one: braces escaped, {0} the dimension, {1} and {12} past the
   * inputs, an unclosed brace kept */
  static const char *q =
      "func.func @main(%x: tensor<?xf32>) -> tensor<?xf32> {\n"
      "  %d = stablehlo.get_dimension_size %x, dim = 0 : (tensor<?xf32>) -> tensor<i32>\n"
      "  %f = stablehlo.constant dense<false> : tensor<i1>\n"
      "  stablehlo.custom_call @shape_assertion(%f, %d) {api_version = 2 : i32, "
      "error_message = \"{{b}} = {0}, {1}, {12} and {x} }} {3x {\", has_side_effect = true} "
      ": (tensor<i1>, tensor<i32>) -> ()\n"
      "  return %x : tensor<?xf32>\n}\n";
  xrt_shape one[1] = {TU_SHAPE(XRT_F32, 5)};
  xrt_status s;
  xrt_executable *exe = rf_compile(C(state), q, 1, one, &s);
  assert_null(exe);
  assert_int_equal(s, XRT_INVALID_ARGUMENT);
  assert_string_equal(tu_msg, "rf.mlir:4:3: {b} = 5, ?, ? and {x} } {3x {");
  /* no message: a default one */
  static const char *r =
      "func.func @main(%x: tensor<?xf32>) -> tensor<?xf32> {\n"
      "  %f = stablehlo.constant dense<[true, false]> : tensor<2xi1>\n"
      "  stablehlo.custom_call @shape_assertion(%f) {api_version = 2 : i32, "
      "has_side_effect = true} : (tensor<2xi1>) -> ()\n"
      "  return %x : tensor<?xf32>\n}\n";
  exe = rf_compile(C(state), r, 1, one, &s);
  assert_null(exe);
  assert_int_equal(s, XRT_INVALID_ARGUMENT);
  assert_string_equal(tu_msg, "rf.mlir:3:3: shape assertion failed");
}

static void test_argument_shapes(void **state) {
  static const char *p =
      "func.func @main(%x: tensor<?xf32>, %y: tensor<?xf32>) -> tensor<?xf32> {\n"
      "  return %x : tensor<?xf32>\n}\n";
  xrt_shape in[1] = {TU_SHAPE(XRT_F32, 2)};
  rf_refused(C(state), p, 1, in, XRT_INVALID_ARGUMENT, "rf.mlir:1:1: ",
             "@main takes 2 argument(s), 1 argument shape(s) given");
  /* a `?` given as -1 does not fit */
  xrt_shape two[2] = {TU_SHAPE(XRT_F32, 2), TU_SHAPE(XRT_F32, 2)};
  two[1].dims[0] = XRT_DIM_DYNAMIC;
  rf_refused(C(state), p, 2, two, XRT_INVALID_ARGUMENT, "rf.mlir:1:1: ",
             "argument 1 is given as");
  /* a tuple argument cannot take a shape */
  static const char *t =
      "func.func @main(%x: tensor<?xf32>, %t: tuple<tensor<f32>>) -> tensor<?xf32> {\n"
      "  return %x : tensor<?xf32>\n}\n";
  xrt_shape tt[2] = {TU_SHAPE(XRT_F32, 2), TU_SCALAR(XRT_F32)};
  xrt_status s;
  xrt_executable *exe = rf_compile(C(state), t, 2, tt, &s);
  assert_null(exe);
  assert_int_equal(s, XRT_INVALID_ARGUMENT);
  assert_string_equal(tu_msg, "rf.mlir:1:1: @main: argument 1 is given as "
                              "tensor<f32>, which does not fit its type tuple<...>");
}

/* One private function called with two known dimension values: two
 * instances (types equal, known contents not). */
static void test_instances_by_known_values(void **state) {
  static const char *p =
      "func.func @main(%x: tensor<?xf32>) -> (tensor<?xf32>, tensor<?xf32>) {\n"
      "  %c2 = stablehlo.constant dense<2> : tensor<i64>\n"
      "  %c3 = stablehlo.constant dense<3> : tensor<i64>\n"
      "  %a = func.call @iota(%c2, %x) : (tensor<i64>, tensor<?xf32>) -> tensor<?xf32>\n"
      "  %b = func.call @iota(%c3, %x) : (tensor<i64>, tensor<?xf32>) -> tensor<?xf32>\n"
      "  %c = func.call @iota(%c2, %x) : (tensor<i64>, tensor<?xf32>) -> tensor<?xf32>\n"
      "  return %a, %b : tensor<?xf32>, tensor<?xf32>\n}\n"
      "func.func private @iota(%n: tensor<i64>, %x: tensor<?xf32>) -> tensor<?xf32> {\n"
      "  %s = stablehlo.reshape %n : (tensor<i64>) -> tensor<1xi64>\n"
      "  %r = stablehlo.dynamic_iota %s, dim = 0 : (tensor<1xi64>) -> tensor<?xf32>\n"
      "  return %r : tensor<?xf32>\n}\n";
  xrt_shape in[1] = {TU_SHAPE(XRT_F32, 7)}, o[2];
  rf_outputs(C(state), p, 1, in, o, 2);
  assert_int_equal(o[0].rank, 1);
  assert_int_equal(o[0].dims[0], 2);
  assert_int_equal(o[1].dims[0], 3);
}

/* jax.export's dimension arguments: @main(%b: tensor<i64>, %x: [?]) is
 * compiled for x's shape; b's value is found by search (the one that
 * satisfies the program), or refused with the first attempt's error. */
static void test_dimension_argument_search(void **state) {
  static const char *p =
      "func.func @main(%b: tensor<i64>, %x: tensor<?xf32>) -> tensor<?xf32> {\n"
      "  %s = stablehlo.reshape %b : (tensor<i64>) -> tensor<1xi64>\n"
      "  %o = stablehlo.constant dense<1.0> : tensor<f32>\n"
      "  %y = stablehlo.dynamic_broadcast_in_dim %o, %s, dims = [] : (tensor<f32>, tensor<1xi64>) -> tensor<?xf32>\n"
      "  %r = stablehlo.add %x, %y : tensor<?xf32>\n"
      "  return %r : tensor<?xf32>\n}\n";
  xrt_shape in[2] = {TU_SCALAR(XRT_S64), TU_SHAPE(XRT_F32, 6)}, o;
  rf_outputs(C(state), p, 2, in, &o, 1);
  assert_int_equal(o.dims[0], 6);
  /* two dimension arguments, two sizes: b = 6 and c = 2 found (choice 0
   * binds them in order) */
  static const char *q =
      "func.func @main(%b: tensor<i64>, %c: tensor<i64>, %x: tensor<?x?xf32>) -> tensor<?x?xf32> {\n"
      "  %b1 = stablehlo.reshape %b : (tensor<i64>) -> tensor<1xi64>\n"
      "  %c1 = stablehlo.reshape %c : (tensor<i64>) -> tensor<1xi64>\n"
      "  %s = stablehlo.concatenate %c1, %b1, dim = 0 : (tensor<1xi64>, tensor<1xi64>) -> tensor<2xi64>\n"
      "  %o = stablehlo.constant dense<1.0> : tensor<f32>\n"
      "  %y = stablehlo.dynamic_broadcast_in_dim %o, %s, dims = [] : (tensor<f32>, tensor<2xi64>) -> tensor<?x?xf32>\n"
      "  %r = stablehlo.add %x, %y : tensor<?x?xf32>\n"
      "  return %r : tensor<?x?xf32>\n}\n";
  xrt_shape in2[3] = {TU_SCALAR(XRT_S64), TU_SCALAR(XRT_S64), TU_SHAPE(XRT_F32, 2, 6)};
  rf_outputs(C(state), q, 3, in2, &o, 1);
  assert_int_equal(o.dims[0], 2);
  assert_int_equal(o.dims[1], 6);
  /* no binding works: the sizes disagree whatever b is */
  static const char *r =
      "func.func @main(%b: tensor<i64>, %x: tensor<?xf32>) -> tensor<?xf32> {\n"
      "  %s = stablehlo.constant dense<3> : tensor<1xi64>\n"
      "  %o = stablehlo.constant dense<1.0> : tensor<f32>\n"
      "  %y = stablehlo.dynamic_broadcast_in_dim %o, %s, dims = [] : (tensor<f32>, tensor<1xi64>) -> tensor<?xf32>\n"
      "  %r = stablehlo.add %x, %y : tensor<?xf32>\n"
      "  return %r : tensor<?xf32>\n}\n";
  rf_refused(C(state), r, 2, in, XRT_INVALID_ARGUMENT, "rf.mlir:5:8: stablehlo.add: ",
             "operand types differ: tensor<6xf32> vs tensor<3xf32>");
}

/* Calls whose signature the callee does not match, a callee returning a
 * token, and leading integer arguments that are no dimension arguments. */
static void test_call_signatures(void **state) {
  xrt_shape in[1] = {TU_SHAPE(XRT_F32, 4)};
  xrt_status s;
  xrt_executable *exe;
  /* the call says rank 2, the callee declares and returns rank 1 */
  static const char *rank =
      "func.func @main(%x: tensor<?xf32>) -> tensor<?x?xf32> {\n"
      "  %r = func.call @f(%x) : (tensor<?xf32>) -> tensor<?x?xf32>\n"
      "  return %r : tensor<?x?xf32>\n}\n"
      "func.func private @f(%x: tensor<?xf32>) -> tensor<?xf32> {\n"
      "  return %x : tensor<?xf32>\n}\n";
  exe = rf_compile(C(state), rank, 1, in, &s);
  assert_null(exe);
  assert_int_equal(s, XRT_INVALID_ARGUMENT);
  TU_ASSERT_PREFIX(tu_msg, "rf.mlir:2:");
  /* a call with more arguments than the callee takes */
  static const char *arity =
      "func.func @main(%x: tensor<?xf32>) -> tensor<?xf32> {\n"
      "  %r = func.call @f(%x, %x) : (tensor<?xf32>, tensor<?xf32>) -> tensor<?xf32>\n"
      "  return %r : tensor<?xf32>\n}\n"
      "func.func private @f(%x: tensor<?xf32>) -> tensor<?xf32> {\n"
      "  return %x : tensor<?xf32>\n}\n";
  rf_refused(C(state), arity, 1, in, XRT_INVALID_ARGUMENT, "rf.mlir:2:8: func.call: ",
             "@f takes 1 argument(s) and returns 1, the call has 2 and 1");
  /* a token through a private function: not a tensor, kept as it is */
  static const char *tok =
      "func.func @main(%x: tensor<?xf32>) -> tensor<?xf32> {\n"
      "  %t = stablehlo.create_token : !stablehlo.token\n"
      "  %r:2 = func.call @f(%x, %t) : (tensor<?xf32>, !stablehlo.token) -> (tensor<?xf32>, !stablehlo.token)\n"
      "  return %r#0 : tensor<?xf32>\n}\n"
      "func.func private @f(%x: tensor<?xf32>, %t: !stablehlo.token) -> (tensor<?xf32>, !stablehlo.token) {\n"
      "  %y = stablehlo.negate %x : tensor<?xf32>\n"
      "  return %y, %t : tensor<?xf32>, !stablehlo.token\n}\n";
  xrt_shape o;
  rf_outputs(C(state), tok, 1, in, &o, 1);
  assert_int_equal(o.dims[0], 4);
  /* a leading tensor<i64> argument, but no `?` argument after it: no
   * search for its value; the size it gives stays unknown */
  static const char *nodim =
      "func.func @main(%b: tensor<i64>, %x: tensor<3xf32>) -> tensor<?xf32> {\n"
      "  %s = stablehlo.reshape %b : (tensor<i64>) -> tensor<1xi64>\n"
      "  %r = stablehlo.dynamic_iota %s, dim = 0 : (tensor<1xi64>) -> tensor<?xf32>\n"
      "  return %r : tensor<?xf32>\n}\n";
  xrt_shape two[2] = {TU_SCALAR(XRT_S64), TU_SHAPE(XRT_F32, 3)};
  rf_refused(C(state), nodim, 2, two, XRT_INVALID_ARGUMENT,
             "rf.mlir:3:8: stablehlo.dynamic_iota: ",
             "result 0: dimension 0 stays dynamic");
}

/* Programs whose arguments are static but whose body is not (a
 * dynamic_iota of a constant shape) or that hold a real_dynamic_slice
 * (which has no static spelling but slice) are refined without argument
 * shapes, and compute what they should. */
static void test_static_arguments(void **state) {
  static const char *iota =
      "func.func @main(%x: tensor<3xf32>) -> tensor<?xf32> {\n"
      "  %s = stablehlo.constant dense<4> : tensor<1xi64>\n"
      "  %r = stablehlo.dynamic_iota %s, dim = 0 : (tensor<1xi64>) -> tensor<?xf32>\n"
      "  return %r : tensor<?xf32>\n}\n";
  float x[16];
  for (int i = 0; i < 16; i++) x[i] = (float)i;
  tu_in in[1] = {{TU_SHAPE(XRT_F32, 3), x}};
  tu_out o;
  xrt_status s = tu_run(C(state), iota, 1, in, &o);
  if (s) fail_msg("%s", tu_msg);
  tu_assert_shape(&o, 0, TU_SHAPE(XRT_F32, 4));
  TU_ASSERT_OUT(&o, 0, float, 0, 1, 2, 3);
  tu_out_free(&o);
  static const char *rds =
      "func.func @main(%x: tensor<4x4xf32>) -> tensor<2x2xf32> {\n"
      "  %a = stablehlo.constant dense<[1, 1]> : tensor<2xi32>\n"
      "  %b = stablehlo.constant dense<[3, 4]> : tensor<2xi32>\n"
      "  %c = stablehlo.constant dense<[1, 2]> : tensor<2xi32>\n"
      "  %r = stablehlo.real_dynamic_slice %x, %a, %b, %c : (tensor<4x4xf32>, tensor<2xi32>, tensor<2xi32>, tensor<2xi32>) -> tensor<2x2xf32>\n"
      "  return %r : tensor<2x2xf32>\n}\n";
  in[0].shape = TU_SHAPE(XRT_F32, 4, 4);
  s = tu_run(C(state), rds, 1, in, &o);
  if (s) fail_msg("%s", tu_msg);
  /* rows 1, 2; columns 1, 3 */
  TU_ASSERT_OUT(&o, 0, float, 5, 7, 9, 11);
  tu_out_free(&o);
  /* a tensor<i32> dimension argument */
  static const char *dim32 =
      "func.func @main(%b: tensor<i32>, %x: tensor<?xf32>) -> tensor<?xf32> {\n"
      "  %s = stablehlo.reshape %b : (tensor<i32>) -> tensor<1xi32>\n"
      "  %o = stablehlo.constant dense<1.0> : tensor<f32>\n"
      "  %y = stablehlo.dynamic_broadcast_in_dim %o, %s, dims = [] : (tensor<f32>, tensor<1xi32>) -> tensor<?xf32>\n"
      "  %r = stablehlo.add %x, %y : tensor<?xf32>\n"
      "  return %r : tensor<?xf32>\n}\n";
  xrt_shape sh[2] = {TU_SCALAR(XRT_S32), TU_SHAPE(XRT_F32, 5)}, out;
  rf_outputs(C(state), dim32, 2, sh, &out, 1);
  assert_int_equal(out.dims[0], 5);
}

TU_MAIN(tu_setup_client, tu_teardown_client,
        cmocka_unit_test(test_result_disagrees),
        cmocka_unit_test(test_loop_value_changes),
        cmocka_unit_test(test_function_returns_other_shape),
        cmocka_unit_test(test_recursion),
        cmocka_unit_test(test_shape_assertions),
        cmocka_unit_test(test_argument_shapes),
        cmocka_unit_test(test_instances_by_known_values),
        cmocka_unit_test(test_dimension_argument_search),
        cmocka_unit_test(test_call_signatures),
        cmocka_unit_test(test_static_arguments))
