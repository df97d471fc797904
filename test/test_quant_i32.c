/* test_quant_i32.c - quantized types as the StableHLO spec defines them:
 * storage as wide as the expressed type (i32:f32, the accumulators of
 * JAX's quantized dot_general and convolution; i16:f16) through every op
 * that takes quantized tensors, and the spec's own type constraints
 * (QuantizedTensorElementType C1-C11, C12-C13) cited in messages.
 *
 * Expected values are computed by hand with the spec's rules:
 * dequantize(q) = (q - zp) * scale; quantize(x) =
 * round_half_to_even(clamp(x / scale + zp, storage_min, storage_max)),
 * the division and sum rounded to the expressed type.
 */
#include "test_util.h"

#define C(state) ((xrt_client *)*(state))
#define IN(dt, data, ...) ((tu_in){TU_SHAPE((dt), __VA_ARGS__), (data)})

#define QA "!quant.uniform<i8:f32, 0.5:1>"
#define QB "!quant.uniform<i8:f32, 2.0:0>"
#define QACC "!quant.uniform<i32:f32, 1.0:0>"
#define QACC2 "!quant.uniform<i32:f32, 0.5:-7>"
#define QPB "!quant.uniform<i8:f32:1, {1.0:0, 0.5:0}>"
#define QPACC "!quant.uniform<i32:f32:1, {0.5:0, 0.25:0}>"
#define QW "!quant.uniform<i32:f32, 0.25:10>"
#define QV "!quant.uniform<i32:f32, 0.5:-100>"
#define QN "!quant.uniform<i8:f32, 1.0:0>"

#define DOT_DN                                                              \
  "{dot_dimension_numbers = #stablehlo.dot<lhs_contracting_dimensions = "   \
  "[1], rhs_contracting_dimensions = [0]>}"

/* dot_general of i8-quantized operands into i32-storage results. */
static void test_dot_i32_accumulator(void **state) {
  /* lhs (0.5:1) [[1,3],[5,7]] -> [[0,1],[2,3]]; rhs (2:0) [[1,2],[3,-1]]
   * -> [[2,4],[6,-2]]; product [[0*2+1*6, 0*4+1*-2], [2*2+3*6, 2*4+3*-2]]
   * = [[6,-2],[22,2]].
   *   i32 1.0:0 -> [6,-2,22,2]
   *   i32 0.5:-7 -> x/0.5 - 7 = [5,-11,37,-3]
   * Per-axis rhs along 1, scales {1, 0.5}: [[1,2],[3,-1]] -> [[1,1],[3,-0.5]];
   * product [[0+3, 0-0.5], [2+9, 2-1.5]] = [[3,-0.5],[11,0.5]]; into the
   * per-axis i32 result {0.5, 0.25} (lhs scale x rhs scales, as JAX builds
   * accumulators): column 0 / 0.5, column 1 / 0.25 -> [[6,-2],[22,2]]. */
  const int8_t a[] = {1, 3, 5, 7}, b[] = {1, 2, 3, -1};
  tu_in in[2] = {IN(XRT_S8, a, 2, 2), IN(XRT_S8, b, 2, 2)};
  tu_out o;
  TU_RUN_OK(C(state),
      "func.func @main(%a: tensor<2x2xi8>, %b: tensor<2x2xi8>) -> "
      "(tensor<2x2xi32>, tensor<2x2xi32>, tensor<2x2xi32>) {\n"
      "  %qa = stablehlo.bitcast_convert %a : (tensor<2x2xi8>) -> "
      "tensor<2x2x" QA ">\n"
      "  %qb = stablehlo.bitcast_convert %b : (tensor<2x2xi8>) -> "
      "tensor<2x2x" QB ">\n"
      "  %pb = stablehlo.bitcast_convert %b : (tensor<2x2xi8>) -> "
      "tensor<2x2x" QPB ">\n"
      "  %r1 = \"stablehlo.dot_general\"(%qa, %qb) " DOT_DN " : "
      "(tensor<2x2x" QA ">, tensor<2x2x" QB ">) -> tensor<2x2x" QACC ">\n"
      "  %r2 = \"stablehlo.dot_general\"(%qa, %qb) " DOT_DN " : "
      "(tensor<2x2x" QA ">, tensor<2x2x" QB ">) -> tensor<2x2x" QACC2 ">\n"
      "  %r3 = \"stablehlo.dot_general\"(%qa, %pb) " DOT_DN " : "
      "(tensor<2x2x" QA ">, tensor<2x2x" QPB ">) -> tensor<2x2x" QPACC ">\n"
      "  %s1 = stablehlo.bitcast_convert %r1 : (tensor<2x2x" QACC ">) -> "
      "tensor<2x2xi32>\n"
      "  %s2 = stablehlo.bitcast_convert %r2 : (tensor<2x2x" QACC2 ">) -> "
      "tensor<2x2xi32>\n"
      "  %s3 = stablehlo.bitcast_convert %r3 : (tensor<2x2x" QPACC ">) -> "
      "tensor<2x2xi32>\n"
      "  func.return %s1, %s2, %s3 : tensor<2x2xi32>, tensor<2x2xi32>, "
      "tensor<2x2xi32>\n}\n",
      2, in, &o);
  TU_ASSERT_OUT(&o, 0, int32_t, 6, -2, 22, 2);
  TU_ASSERT_OUT(&o, 1, int32_t, 5, -11, 37, -3);
  TU_ASSERT_OUT(&o, 2, int32_t, 6, -2, 22, 2);
  tu_out_free(&o);
}

#define CONV_ATTRS                                                          \
  " dim_numbers = [b, 0, f]x[0, i, o]->[b, 0, f], window = {stride = [1], " \
  "pad = [[0, 0]], lhs_dilate = [1], rhs_dilate = [1]} "                    \
  "{batch_group_count = 1 : i64, feature_group_count = 1 : i64} : "
#define QX "!quant.uniform<i8:f32, 0.5:0>"
#define QK "!quant.uniform<i8:f32, 1.0:0>"
#define QC "!quant.uniform<i32:f32, 0.5:0>"

/* convolution of i8-quantized input and kernel into an i32 accumulator. */
static void test_convolution_i32_accumulator(void **state) {
  /* x (0.5:0) [2,4,6,8] -> [1,2,3,4]; kernel (1:0), 2 taps, 2 output
   * features: k[.,0] = [1,-1], k[.,1] = [3,2] (storage [1,3,-1,2] in
   * 0,i,o order).  Windows [1,2], [2,3], [3,4]:
   *   feature 0: 1-2 = -1, 2-3 = -1, 3-4 = -1
   *   feature 1: 3+4 = 7, 6+6 = 12, 9+8 = 17
   * into i32 0.5:0 (x scale times k scale): storage = 2 * value
   *   [-2, 14, -2, 24, -2, 34]. */
  const int8_t x[] = {2, 4, 6, 8}, k[] = {1, 3, -1, 2};
  tu_in in[2] = {IN(XRT_S8, x, 1, 4, 1), IN(XRT_S8, k, 2, 1, 2)};
  tu_out o;
  TU_RUN_OK(C(state),
      "func.func @main(%x: tensor<1x4x1xi8>, %k: tensor<2x1x2xi8>) -> "
      "tensor<1x3x2xi32> {\n"
      "  %qx = stablehlo.bitcast_convert %x : (tensor<1x4x1xi8>) -> "
      "tensor<1x4x1x" QX ">\n"
      "  %qk = stablehlo.bitcast_convert %k : (tensor<2x1x2xi8>) -> "
      "tensor<2x1x2x" QK ">\n"
      "  %r = stablehlo.convolution(%qx, %qk)" CONV_ATTRS
      "(tensor<1x4x1x" QX ">, tensor<2x1x2x" QK ">) -> tensor<1x3x2x" QC ">\n"
      "  %s = stablehlo.bitcast_convert %r : (tensor<1x3x2x" QC ">) -> "
      "tensor<1x3x2xi32>\n"
      "  func.return %s : tensor<1x3x2xi32>\n}\n",
      2, in, &o);
  TU_ASSERT_OUT(&o, 0, int32_t, -2, 14, -2, 24, -2, 34);
  tu_out_free(&o);
}

/* uniform_quantize f32 -> i32-quantized, uniform_dequantize back,
 * requantize i32 -> i8 and i32 -> i32, and add of i32-quantized tensors. */
static void test_quantize_dequantize_requantize_add(void **state) {
  /* f = [1.5, -2.25, 100000, -3]
   * quantize into 0.25:10: x/0.25 + 10 = [16, 1, 400010, -2]; i8 could
   *   hold neither 400010 nor the zero point arithmetic of large values.
   * dequantize: (q - 10) * 0.25 = the inputs exactly.
   * requantize to i8 1.0:0: [1.5, -2.25, 100000, -3] -> half to even 2,
   *   -2, clamps to 127, -3.
   * requantize to i32 0.5:-100: x/0.5 - 100 = [-97, -104.5 -> -104 (half
   *   to even), 199900, -106].
   * add 0.25:10 + 0.25:10 into 0.25:10: [3, -4.5, 200000, -6] ->
   *   [22, -8, 800010, -14].
   * add 0.25:10 + 0.5:-100 (dequantized [1.5, -2, 100000, -3]) into
   *   0.5:-100: [3, -4.25, 200000, -6] / 0.5 - 100 = [-94, -108.5 -> -108
   *   (half to even), 399900, -112]. */
  const float f[] = {1.5f, -2.25f, 100000.0f, -3.0f};
  tu_in in[1] = {IN(XRT_F32, f, 4)};
  tu_out o;
  TU_RUN_OK(C(state),
      "func.func @main(%f: tensor<4xf32>) -> (tensor<4xi32>, tensor<4xf32>, "
      "tensor<4xi8>, tensor<4xi32>, tensor<4xi32>, tensor<4xi32>) {\n"
      "  %q = stablehlo.uniform_quantize %f : (tensor<4xf32>) -> "
      "tensor<4x" QW ">\n"
      "  %qs = stablehlo.bitcast_convert %q : (tensor<4x" QW ">) -> "
      "tensor<4xi32>\n"
      "  %d = stablehlo.uniform_dequantize %q : (tensor<4x" QW ">) -> "
      "tensor<4xf32>\n"
      "  %n = stablehlo.uniform_quantize %q : (tensor<4x" QW ">) -> "
      "tensor<4x" QN ">\n"
      "  %ns = stablehlo.bitcast_convert %n : (tensor<4x" QN ">) -> "
      "tensor<4xi8>\n"
      "  %v = stablehlo.uniform_quantize %q : (tensor<4x" QW ">) -> "
      "tensor<4x" QV ">\n"
      "  %vs = stablehlo.bitcast_convert %v : (tensor<4x" QV ">) -> "
      "tensor<4xi32>\n"
      "  %s = stablehlo.add %q, %q : tensor<4x" QW ">\n"
      "  %ss = stablehlo.bitcast_convert %s : (tensor<4x" QW ">) -> "
      "tensor<4xi32>\n"
      "  %m = stablehlo.add %q, %v : (tensor<4x" QW ">, tensor<4x" QV
      ">) -> tensor<4x" QV ">\n"
      "  %ms = stablehlo.bitcast_convert %m : (tensor<4x" QV ">) -> "
      "tensor<4xi32>\n"
      "  func.return %qs, %d, %ns, %vs, %ss, %ms : tensor<4xi32>, "
      "tensor<4xf32>, tensor<4xi8>, tensor<4xi32>, tensor<4xi32>, "
      "tensor<4xi32>\n}\n",
      1, in, &o);
  TU_ASSERT_OUT(&o, 0, int32_t, 16, 1, 400010, -2);
  TU_ASSERT_OUT(&o, 1, float, 1.5f, -2.25f, 100000.0f, -3.0f);
  TU_ASSERT_OUT(&o, 2, int8_t, 2, -2, 127, -3);
  TU_ASSERT_OUT(&o, 3, int32_t, -97, -104, 199900, -106);
  TU_ASSERT_OUT(&o, 4, int32_t, 22, -8, 800010, -14);
  TU_ASSERT_OUT(&o, 5, int32_t, -94, -108, 399900, -112);
  tu_out_free(&o);
}

/* i16:f16 (storage as wide as the expressed type) and a reduce that sums
 * i32-quantized values beyond what i8 or i16 could hold. */
static void test_equal_width_and_reduce(void **state) {
  /* f16 [1, -0.5, 3] into i16:f16 0.5:0 -> [2, -1, 6]; dequantized back
   * exactly.  reduce-add of i32 1.0:0 [70000, 70000, -5] with init 0:
   * 139995. */
  const int32_t r[] = {70000, 70000, -5};
  tu_in in[1] = {IN(XRT_S32, r, 3)};
  tu_out o;
  TU_RUN_OK(C(state),
      "func.func @main(%r: tensor<3xi32>) -> (tensor<3xi16>, tensor<3xf16>, "
      "tensor<i32>) {\n"
      "  %h = stablehlo.constant dense<[1.0, -0.5, 3.0]> : tensor<3xf16>\n"
      "  %q = stablehlo.uniform_quantize %h : (tensor<3xf16>) -> "
      "tensor<3x!quant.uniform<i16:f16, 0.5:0>>\n"
      "  %qs = stablehlo.bitcast_convert %q : (tensor<3x!quant.uniform<i16:"
      "f16, 0.5:0>>) -> tensor<3xi16>\n"
      "  %d = stablehlo.uniform_dequantize %q : (tensor<3x!quant.uniform<i16:"
      "f16, 0.5:0>>) -> tensor<3xf16>\n"
      "  %qr = stablehlo.bitcast_convert %r : (tensor<3xi32>) -> "
      "tensor<3x" QACC ">\n"
      "  %z = stablehlo.constant dense<0> : tensor<i32>\n"
      "  %qz = stablehlo.bitcast_convert %z : (tensor<i32>) -> tensor<" QACC
      ">\n"
      "  %sum = stablehlo.reduce(%qr init: %qz) applies stablehlo.add across "
      "dimensions = [0] : (tensor<3x" QACC ">, tensor<" QACC ">) -> tensor<"
      QACC ">\n"
      "  %ss = stablehlo.bitcast_convert %sum : (tensor<" QACC ">) -> "
      "tensor<i32>\n"
      "  func.return %qs, %d, %ss : tensor<3xi16>, tensor<3xf16>, "
      "tensor<i32>\n}\n",
      1, in, &o);
  TU_ASSERT_OUT(&o, 0, int16_t, 2, -1, 6);
  TU_ASSERT_OUT(&o, 1, uint16_t, 0x3c00, 0xb800, 0x4200); /* 1, -0.5, 3 */
  TU_ASSERT_OUT(&o, 2, int32_t, 139995);
  tu_out_free(&o);
}

/* Compiles a one-op program over type T and returns the message. */
static xrt_status compile_type(xrt_client *c, const char *type) {
  char prog[1024];
  snprintf(prog, sizeof prog,
           "func.func @main(%%a: tensor<2x%s>) -> tensor<2x%s> {\n"
           "  %%0 = stablehlo.add %%a, %%a : tensor<2x%s>\n"
           "  func.return %%0 : tensor<2x%s>\n}\n",
           type, type, type, type);
  xrt_executable *exe = NULL;
  xrt_status s = xrt_compile(c, prog, strlen(prog), NULL, &exe);
  tu_save_error();
  xrt_executable_release(exe);
  return s;
}

/* The spec's constraints hold, and say which one failed; its lack of a
 * width rule does too. */
static void test_type_constraints(void **state) {
  assert_int_equal(compile_type(C(state), "!quant.uniform<i32:f32, 1.0:0>"),
                   XRT_OK);
  assert_int_equal(compile_type(C(state), "!quant.uniform<i64:f32, 1.0:0>"),
                   XRT_OK);
  assert_int_equal(compile_type(C(state), "!quant.uniform<i32:f16, 1.0:0>"),
                   XRT_OK);
  assert_int_equal(
      compile_type(C(state), "!quant.uniform<i8<-8:7>:f32, 1.0:9>"),
      XRT_INVALID_ARGUMENT);
  TU_ASSERT_CONTAINS(tu_msg, "zero point 9 is outside the storage range "
                             "[-8, 7] (C7)");
  assert_int_equal(
      compile_type(C(state), "!quant.uniform<i8<-200:7>:f32, 1.0:0>"),
      XRT_INVALID_ARGUMENT);
  TU_ASSERT_CONTAINS(tu_msg, "storage range [-200, 7] does not fit i8 (C3");
  assert_int_equal(compile_type(C(state), "!quant.uniform<i32:f32, -1.0:0>"),
                   XRT_INVALID_ARGUMENT);
  TU_ASSERT_CONTAINS(tu_msg, "must be positive and finite (C5, C6)");
  assert_int_equal(
      compile_type(C(state), "!quant.uniform<i32:f32:-1, {1.0:0, 1.0:0}>"),
      XRT_INVALID_ARGUMENT);
  TU_ASSERT_CONTAINS(tu_msg, "1:53: quantization dimension -1 must be in "
                             "[0, 16) (C11");
  assert_int_equal(
      compile_type(C(state), "!quant.uniform<i32:f32:0, {1.0:0, 1.0:0, "
                             "1.0:0}>"),
      XRT_INVALID_ARGUMENT);
  TU_ASSERT_CONTAINS(tu_msg, "3 scales for quantization dimension 0 of size "
                             "2 (C13)");
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_dot_i32_accumulator),
      cmocka_unit_test(test_convolution_i32_accumulator),
      cmocka_unit_test(test_quantize_dequantize_requantize_add),
      cmocka_unit_test(test_equal_width_and_reduce),
      cmocka_unit_test(test_type_constraints),
  };
  return cmocka_run_group_tests(tests, tu_setup_client, tu_teardown_client);
}
