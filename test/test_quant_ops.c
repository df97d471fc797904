/* test_quant_ops.c - quantized operands and results beyond the elementwise
 * ops: dot_general (per-tensor, per-axis rhs, float result, hybrid float
 * lhs), convolution, reduce / reduce_window (with storage promotion),
 * clamp, select and data movement on per-tensor and per-axis tensors.
 *
 * Programs take and return the storage integers (bitcast_convert to and
 * from the quantized types).  Expected values are computed by hand with
 * the spec's rules: dequantize(q) = (q - zp) * scale; quantize(x) =
 * round_half_to_even(clamp(x / scale + zp, storage_min, storage_max)).
 */
#include "test_util.h"

#define C(state) ((xrt_client *)*(state))
#define IN(dt, data, ...) ((tu_in){TU_SHAPE((dt), __VA_ARGS__), (data)})

/* Quantized element types used below. */
#define QA "!quant.uniform<i8:f32, 0.5:1>"
#define QB "!quant.uniform<i8:f32, 2.0:0>"
#define QR "!quant.uniform<i8:f32, 0.5:-3>"
#define QR4 "!quant.uniform<i8:f32, 4.0:0>"
#define QRC "!quant.uniform<i8<-20:20>:f32, 0.5:0>"
#define QH "!quant.uniform<i8:f32, 0.5:0>"
#define QPA "!quant.uniform<i8:f32:1, {1.0:0, 0.5:0, 2.0:0}>"
#define QONE "!quant.uniform<i8:f32, 1.0:0>"
#define QQ "!quant.uniform<i8:f32, 0.25:0>"

#define DOT_DN                                                              \
  "{dot_dimension_numbers = #stablehlo.dot<lhs_contracting_dimensions = "   \
  "[1], rhs_contracting_dimensions = [0]>}"

/* ---- dot_general ---- */

static void test_dot_per_tensor(void **state) {
  /* lhs (0.5:1) [[1,3],[5,7]] -> [[0,1],[2,3]]; rhs (2:0) [[1,2],[3,-1]]
   * -> [[2,4],[6,-2]]; product [[6,-2],[22,2]].
   *   0.5:-3 -> x/0.5 - 3 = [[9,-7],[41,1]]
   *   4:0 -> [1.5,-0.5,5.5,0.5] rounds half to even: [2,0,6,0]
   *   i8<-20:20> 0.5:0 -> [12,-4,44,4] clamps to [12,-4,20,4]
   *   f32 result: the float product */
  const int8_t a[] = {1, 3, 5, 7}, b[] = {1, 2, 3, -1};
  tu_in in[2] = {IN(XRT_S8, a, 2, 2), IN(XRT_S8, b, 2, 2)};
  tu_out o;
  TU_RUN_OK(C(state),
      "func.func @main(%a: tensor<2x2xi8>, %b: tensor<2x2xi8>) -> "
      "(tensor<2x2xi8>, tensor<2x2xi8>, tensor<2x2xi8>, tensor<2x2xf32>) {\n"
      "  %qa = stablehlo.bitcast_convert %a : (tensor<2x2xi8>) -> "
      "tensor<2x2x" QA ">\n"
      "  %qb = stablehlo.bitcast_convert %b : (tensor<2x2xi8>) -> "
      "tensor<2x2x" QB ">\n"
      "  %r1 = \"stablehlo.dot_general\"(%qa, %qb) " DOT_DN " : "
      "(tensor<2x2x" QA ">, tensor<2x2x" QB ">) -> tensor<2x2x" QR ">\n"
      "  %r2 = \"stablehlo.dot_general\"(%qa, %qb) " DOT_DN " : "
      "(tensor<2x2x" QA ">, tensor<2x2x" QB ">) -> tensor<2x2x" QR4 ">\n"
      "  %r3 = \"stablehlo.dot_general\"(%qa, %qb) " DOT_DN " : "
      "(tensor<2x2x" QA ">, tensor<2x2x" QB ">) -> tensor<2x2x" QRC ">\n"
      "  %r4 = \"stablehlo.dot_general\"(%qa, %qb) " DOT_DN " : "
      "(tensor<2x2x" QA ">, tensor<2x2x" QB ">) -> tensor<2x2xf32>\n"
      "  %s1 = stablehlo.bitcast_convert %r1 : (tensor<2x2x" QR ">) -> "
      "tensor<2x2xi8>\n"
      "  %s2 = stablehlo.bitcast_convert %r2 : (tensor<2x2x" QR4 ">) -> "
      "tensor<2x2xi8>\n"
      "  %s3 = stablehlo.bitcast_convert %r3 : (tensor<2x2x" QRC ">) -> "
      "tensor<2x2xi8>\n"
      "  func.return %s1, %s2, %s3, %r4 : tensor<2x2xi8>, tensor<2x2xi8>, "
      "tensor<2x2xi8>, tensor<2x2xf32>\n}\n",
      2, in, &o);
  TU_ASSERT_OUT(&o, 0, int8_t, 9, -7, 41, 1);
  TU_ASSERT_OUT(&o, 1, int8_t, 2, 0, 6, 0);
  TU_ASSERT_OUT(&o, 2, int8_t, 12, -4, 20, 4);
  TU_ASSERT_OUT(&o, 3, float, 6.0f, -2.0f, 22.0f, 2.0f);
  tu_out_free(&o);
}

static void test_dot_per_axis_rhs(void **state) {
  /* lhs (0.5:0) [[2,4],[6,8]] -> [[1,2],[3,4]]; rhs per-axis along 1 with
   * scales {1, 0.5, 2}: [[1,2,3],[4,-2,1]] -> [[1,1,6],[4,-1,2]];
   * product [[9,-1,10],[19,-1,26]].
   *   per-axis result {1, 0.5, 2}: [[9,-2,5],[19,-2,13]]
   *   per-tensor 1.0:0: the product itself */
  const int8_t a[] = {2, 4, 6, 8}, b[] = {1, 2, 3, 4, -2, 1};
  tu_in in[2] = {IN(XRT_S8, a, 2, 2), IN(XRT_S8, b, 2, 3)};
  tu_out o;
  TU_RUN_OK(C(state),
      "func.func @main(%a: tensor<2x2xi8>, %b: tensor<2x3xi8>) -> "
      "(tensor<2x3xi8>, tensor<2x3xi8>) {\n"
      "  %qa = stablehlo.bitcast_convert %a : (tensor<2x2xi8>) -> "
      "tensor<2x2x" QH ">\n"
      "  %qb = stablehlo.bitcast_convert %b : (tensor<2x3xi8>) -> "
      "tensor<2x3x" QPA ">\n"
      "  %r1 = \"stablehlo.dot_general\"(%qa, %qb) " DOT_DN " : "
      "(tensor<2x2x" QH ">, tensor<2x3x" QPA ">) -> tensor<2x3x" QPA ">\n"
      "  %r2 = \"stablehlo.dot_general\"(%qa, %qb) " DOT_DN " : "
      "(tensor<2x2x" QH ">, tensor<2x3x" QPA ">) -> tensor<2x3x" QONE ">\n"
      "  %s1 = stablehlo.bitcast_convert %r1 : (tensor<2x3x" QPA ">) -> "
      "tensor<2x3xi8>\n"
      "  %s2 = stablehlo.bitcast_convert %r2 : (tensor<2x3x" QONE ">) -> "
      "tensor<2x3xi8>\n"
      "  func.return %s1, %s2 : tensor<2x3xi8>, tensor<2x3xi8>\n}\n",
      2, in, &o);
  TU_ASSERT_OUT(&o, 0, int8_t, 9, -2, 5, 19, -2, 13);
  TU_ASSERT_OUT(&o, 1, int8_t, 9, -1, 10, 19, -1, 26);
  tu_out_free(&o);
}

static void test_dot_hybrid(void **state) {
  /* float lhs [[1,2],[3,4]] with the per-axis rhs above ([[1,1,6],
   * [4,-1,2]]): [[9,-1,10],[19,-1,26]].  Per-tensor rhs (0.25:0)
   * [[4,8],[-4,2]] -> [[1,2],[-1,0.5]]: [[-1,3],[-1,8]]. */
  const float a[] = {1, 2, 3, 4};
  const int8_t b[] = {1, 2, 3, 4, -2, 1}, c[] = {4, 8, -4, 2};
  tu_in in[3] = {IN(XRT_F32, a, 2, 2), IN(XRT_S8, b, 2, 3),
                 IN(XRT_S8, c, 2, 2)};
  tu_out o;
  TU_RUN_OK(C(state),
      "func.func @main(%a: tensor<2x2xf32>, %b: tensor<2x3xi8>, "
      "%c: tensor<2x2xi8>) -> (tensor<2x3xf32>, tensor<2x2xf32>) {\n"
      "  %qb = stablehlo.bitcast_convert %b : (tensor<2x3xi8>) -> "
      "tensor<2x3x" QPA ">\n"
      "  %qc = stablehlo.bitcast_convert %c : (tensor<2x2xi8>) -> "
      "tensor<2x2x" QQ ">\n"
      "  %r1 = \"stablehlo.dot_general\"(%a, %qb) " DOT_DN " : "
      "(tensor<2x2xf32>, tensor<2x3x" QPA ">) -> tensor<2x3xf32>\n"
      "  %r2 = \"stablehlo.dot_general\"(%a, %qc) " DOT_DN " : "
      "(tensor<2x2xf32>, tensor<2x2x" QQ ">) -> tensor<2x2xf32>\n"
      "  func.return %r1, %r2 : tensor<2x3xf32>, tensor<2x2xf32>\n}\n",
      3, in, &o);
  TU_ASSERT_OUT(&o, 0, float, 9, -1, 10, 19, -1, 26);
  TU_ASSERT_OUT(&o, 1, float, -1, 3, -1, 8);
  tu_out_free(&o);
}

/* A quantized dot_general inside a while body (pseudo values of a region).
 * Scale 1: each iteration replaces x by row 1 of the outer product x (x) x,
 * x[1] * x: [1,2] -> 2 * [1,2] = [2,4] -> 4 * [2,4] = [8,16]. */
static void test_dot_in_while(void **state) {
  const int8_t a[] = {1, 2};
  tu_in in = IN(XRT_S8, a, 2);
  tu_out o;
  TU_RUN_OK(C(state),
      "func.func @main(%a: tensor<2xi8>) -> tensor<2xi8> {\n"
      "  %qa = stablehlo.bitcast_convert %a : (tensor<2xi8>) -> "
      "tensor<2x" QONE ">\n"
      "  %i0 = stablehlo.constant dense<0> : tensor<i32>\n"
      "  %r:2 = \"stablehlo.while\"(%i0, %qa) ({\n"
      "  ^bb0(%i: tensor<i32>, %x: tensor<2x" QONE ">):\n"
      "    %c = stablehlo.constant dense<2> : tensor<i32>\n"
      "    %p = stablehlo.compare LT, %i, %c : (tensor<i32>, tensor<i32>) -> "
      "tensor<i1>\n"
      "    \"stablehlo.return\"(%p) : (tensor<i1>) -> ()\n"
      "  }, {\n"
      "  ^bb0(%i: tensor<i32>, %x: tensor<2x" QONE ">):\n"
      "    %one = stablehlo.constant dense<1> : tensor<i32>\n"
      "    %j = stablehlo.add %i, %one : tensor<i32>\n"
      "    %d = \"stablehlo.dot_general\"(%x, %x) {dot_dimension_numbers = "
      "#stablehlo.dot<>} : (tensor<2x" QONE ">, tensor<2x" QONE ">) -> "
      "tensor<2x2x" QONE ">\n"
      "    %y = \"stablehlo.slice\"(%d) {start_indices = array<i64: 1, 0>, "
      "limit_indices = array<i64: 2, 2>, strides = array<i64: 1, 1>} : "
      "(tensor<2x2x" QONE ">) -> tensor<1x2x" QONE ">\n"
      "    %z = stablehlo.reshape %y : (tensor<1x2x" QONE ">) -> "
      "tensor<2x" QONE ">\n"
      "    \"stablehlo.return\"(%j, %z) : (tensor<i32>, tensor<2x" QONE
      ">) -> ()\n"
      "  }) : (tensor<i32>, tensor<2x" QONE ">) -> (tensor<i32>, tensor<2x"
      QONE ">)\n"
      "  %s = stablehlo.bitcast_convert %r#1 : (tensor<2x" QONE ">) -> "
      "tensor<2xi8>\n"
      "  func.return %s : tensor<2xi8>\n}\n",
      1, &in, &o);
  TU_ASSERT_OUT(&o, 0, int8_t, 8, 16);
  tu_out_free(&o);
}

/* ---- convolution ---- */

#define QK "!quant.uniform<i8:f32:2, {1.0:0, 0.5:0}>"
#define QO "!quant.uniform<i8:f32:2, {0.5:0, 2.0:1}>"
#define CONV_ATTRS                                                          \
  " dim_numbers = [b, 0, f]x[0, i, o]->[b, 0, f], window = {stride = [1], " \
  "pad = [[0, 0]]} {batch_group_count = 1 : i64, feature_group_count = 1 : " \
  "i64} : "

static void test_convolution_1d(void **state) {
  /* input (0.5:0) [2,4,6,8] -> x = [1,2,3,4] (1x4x1, [b,0,f]); kernel 2x1x2
   * ([0,i,o]) per-axis along o with scales {1, 0.5}: storage [[[1,2]],
   * [[-1,4]]] -> w[0] = [1,1], w[1] = [-1,2].  Output feature 0:
   * x[t] - x[t+1] = -1; feature 1: x[t] + 2 x[t+1] = 5, 8, 11.
   *   per-tensor 0.5:0: [[-2,10],[-2,16],[-2,22]]
   *   per-axis {0.5:0, 2:1}: feature 1 is 3.5, 5, 6.5 -> 4, 5, 6
   *   hybrid f32 input [1,2,3,4]: [[-1,5],[-1,8],[-1,11]] */
  const int8_t x[] = {2, 4, 6, 8}, k[] = {1, 2, -1, 4};
  const float xf[] = {1, 2, 3, 4};
  tu_in in[3] = {IN(XRT_S8, x, 1, 4, 1), IN(XRT_S8, k, 2, 1, 2),
                 IN(XRT_F32, xf, 1, 4, 1)};
  tu_out o;
  TU_RUN_OK(C(state),
      "func.func @main(%x: tensor<1x4x1xi8>, %k: tensor<2x1x2xi8>, "
      "%xf: tensor<1x4x1xf32>) -> (tensor<1x3x2xi8>, tensor<1x3x2xi8>, "
      "tensor<1x3x2xf32>) {\n"
      "  %qx = stablehlo.bitcast_convert %x : (tensor<1x4x1xi8>) -> "
      "tensor<1x4x1x" QH ">\n"
      "  %qk = stablehlo.bitcast_convert %k : (tensor<2x1x2xi8>) -> "
      "tensor<2x1x2x" QK ">\n"
      "  %r1 = stablehlo.convolution(%qx, %qk)" CONV_ATTRS
      "(tensor<1x4x1x" QH ">, tensor<2x1x2x" QK ">) -> tensor<1x3x2x" QH ">\n"
      "  %r2 = stablehlo.convolution(%qx, %qk)" CONV_ATTRS
      "(tensor<1x4x1x" QH ">, tensor<2x1x2x" QK ">) -> tensor<1x3x2x" QO ">\n"
      "  %r3 = stablehlo.convolution(%xf, %qk)" CONV_ATTRS
      "(tensor<1x4x1xf32>, tensor<2x1x2x" QK ">) -> tensor<1x3x2xf32>\n"
      "  %s1 = stablehlo.bitcast_convert %r1 : (tensor<1x3x2x" QH ">) -> "
      "tensor<1x3x2xi8>\n"
      "  %s2 = stablehlo.bitcast_convert %r2 : (tensor<1x3x2x" QO ">) -> "
      "tensor<1x3x2xi8>\n"
      "  func.return %s1, %s2, %r3 : tensor<1x3x2xi8>, tensor<1x3x2xi8>, "
      "tensor<1x3x2xf32>\n}\n",
      3, in, &o);
  TU_ASSERT_OUT(&o, 0, int8_t, -2, 10, -2, 16, -2, 22);
  TU_ASSERT_OUT(&o, 1, int8_t, -2, 4, -2, 5, -2, 6);
  TU_ASSERT_OUT(&o, 2, float, -1, 5, -1, 8, -1, 11);
  tu_out_free(&o);
}

/* ---- reduce and reduce_window ---- */

#define QS "!quant.uniform<i8:f32, 0.5:2>"
#define QW "!quant.uniform<i16:f32, 0.5:0>"

static void test_reduce_sum(void **state) {
  /* (0.5:2) [[4,6,8],[2,3,1]] -> [[1,2,3],[0,0.5,-0.5]], init 2 -> 0.
   * Row sums 6 and 0 -> storage 6/0.5 + 2 = 14 and 2.
   * Promoted to i16 storage (0.5:0): [100,100,100] -> 150 -> 300, which
   * i8 could not hold.
   * reduce_window, window 2: [1,5,9] (0.5:0) -> [6,14]. */
  const int8_t a[] = {4, 6, 8, 2, 3, 1}, b[] = {100, 100, 100},
               c[] = {1, 5, 9};
  tu_in in[3] = {IN(XRT_S8, a, 2, 3), IN(XRT_S8, b, 3), IN(XRT_S8, c, 3)};
  tu_out o;
  TU_RUN_OK(C(state),
      "func.func @main(%a: tensor<2x3xi8>, %b: tensor<3xi8>, "
      "%c: tensor<3xi8>) -> (tensor<2xi8>, tensor<i16>, tensor<2xi8>) {\n"
      "  %qa = stablehlo.bitcast_convert %a : (tensor<2x3xi8>) -> "
      "tensor<2x3x" QS ">\n"
      "  %z = stablehlo.constant dense<2> : tensor<i8>\n"
      "  %qz = stablehlo.bitcast_convert %z : (tensor<i8>) -> tensor<" QS ">\n"
      "  %r = stablehlo.reduce(%qa init: %qz) applies stablehlo.add across "
      "dimensions = [1] : (tensor<2x3x" QS ">, tensor<" QS ">) -> tensor<2x"
      QS ">\n"
      "  %s = stablehlo.bitcast_convert %r : (tensor<2x" QS ">) -> "
      "tensor<2xi8>\n"
      "  %qb = stablehlo.bitcast_convert %b : (tensor<3xi8>) -> tensor<3x" QH
      ">\n"
      "  %w0 = stablehlo.constant dense<0> : tensor<i16>\n"
      "  %qw0 = stablehlo.bitcast_convert %w0 : (tensor<i16>) -> tensor<" QW
      ">\n"
      "  %p = \"stablehlo.reduce\"(%qb, %qw0) ({\n"
      "  ^bb0(%x: tensor<" QW ">, %y: tensor<" QW ">):\n"
      "    %t = stablehlo.add %x, %y : tensor<" QW ">\n"
      "    \"stablehlo.return\"(%t) : (tensor<" QW ">) -> ()\n"
      "  }) {dimensions = array<i64: 0>} : (tensor<3x" QH ">, tensor<" QW
      ">) -> tensor<" QW ">\n"
      "  %ps = stablehlo.bitcast_convert %p : (tensor<" QW ">) -> "
      "tensor<i16>\n"
      "  %qc = stablehlo.bitcast_convert %c : (tensor<3xi8>) -> tensor<3x" QH
      ">\n"
      "  %h0 = stablehlo.constant dense<0> : tensor<i8>\n"
      "  %qh0 = stablehlo.bitcast_convert %h0 : (tensor<i8>) -> tensor<" QH
      ">\n"
      "  %w = \"stablehlo.reduce_window\"(%qc, %qh0) ({\n"
      "  ^bb0(%x: tensor<" QH ">, %y: tensor<" QH ">):\n"
      "    %t = stablehlo.add %x, %y : tensor<" QH ">\n"
      "    \"stablehlo.return\"(%t) : (tensor<" QH ">) -> ()\n"
      "  }) {window_dimensions = array<i64: 2>} : (tensor<3x" QH ">, tensor<"
      QH ">) -> tensor<2x" QH ">\n"
      "  %ws = stablehlo.bitcast_convert %w : (tensor<2x" QH ">) -> "
      "tensor<2xi8>\n"
      "  func.return %s, %ps, %ws : tensor<2xi8>, tensor<i16>, "
      "tensor<2xi8>\n}\n",
      3, in, &o);
  TU_ASSERT_OUT(&o, 0, int8_t, 14, 2);
  TU_ASSERT_OUT(&o, 1, int16_t, 300);
  TU_ASSERT_OUT(&o, 2, int8_t, 6, 14);
  tu_out_free(&o);
}

/* ---- clamp and select ---- */

static void test_clamp_select(void **state) {
  /* clamp (0.5:0) of [1,5,9] to [2,6] (storage, same scale): [2,5,6].
   * select [T,F,T] between (0.5:0) [1,5,9] -> [0.5,2.5,4.5] and (1:0)
   * [2,4,6], into 0.25:0: [0.5,4,4.5] -> [2,16,18].  With every type
   * equal: the storage values [1,4,9]. */
  const int8_t a[] = {1, 5, 9}, b[] = {2, 4, 6};
  const uint8_t p[] = {1, 0, 1};
  tu_in in[3] = {IN(XRT_S8, a, 3), IN(XRT_S8, b, 3), IN(XRT_PRED, p, 3)};
  tu_out o;
  TU_RUN_OK(C(state),
      "func.func @main(%a: tensor<3xi8>, %b: tensor<3xi8>, %p: tensor<3xi1>) "
      "-> (tensor<3xi8>, tensor<3xi8>, tensor<3xi8>) {\n"
      "  %qa = stablehlo.bitcast_convert %a : (tensor<3xi8>) -> tensor<3x" QH
      ">\n"
      "  %lo = stablehlo.constant dense<2> : tensor<i8>\n"
      "  %hi = stablehlo.constant dense<6> : tensor<i8>\n"
      "  %ql = stablehlo.bitcast_convert %lo : (tensor<i8>) -> tensor<" QH ">\n"
      "  %qh = stablehlo.bitcast_convert %hi : (tensor<i8>) -> tensor<" QH ">\n"
      "  %c = stablehlo.clamp %ql, %qa, %qh : (tensor<" QH ">, tensor<3x" QH
      ">, tensor<" QH ">) -> tensor<3x" QH ">\n"
      "  %cs = stablehlo.bitcast_convert %c : (tensor<3x" QH ">) -> "
      "tensor<3xi8>\n"
      "  %qb = stablehlo.bitcast_convert %b : (tensor<3xi8>) -> tensor<3x" QONE
      ">\n"
      "  %s = stablehlo.select %p, %qa, %qb : (tensor<3xi1>, tensor<3x" QH
      ">, tensor<3x" QONE ">) -> tensor<3x" QQ ">\n"
      "  %ss = stablehlo.bitcast_convert %s : (tensor<3x" QQ ">) -> "
      "tensor<3xi8>\n"
      "  %qb2 = stablehlo.bitcast_convert %b : (tensor<3xi8>) -> tensor<3x" QH
      ">\n"
      "  %t = stablehlo.select %p, %qa, %qb2 : (tensor<3xi1>, tensor<3x" QH
      ">, tensor<3x" QH ">) -> tensor<3x" QH ">\n"
      "  %ts = stablehlo.bitcast_convert %t : (tensor<3x" QH ">) -> "
      "tensor<3xi8>\n"
      "  func.return %cs, %ss, %ts : tensor<3xi8>, tensor<3xi8>, "
      "tensor<3xi8>\n}\n",
      3, in, &o);
  TU_ASSERT_OUT(&o, 0, int8_t, 2, 5, 6);
  TU_ASSERT_OUT(&o, 1, int8_t, 2, 16, 18);
  TU_ASSERT_OUT(&o, 2, int8_t, 1, 4, 9);
  tu_out_free(&o);
}

/* ---- data movement keeps the storage values ---- */

#define QX0 "!quant.uniform<i8:f32:0, {0.5:0, 2.0:1}>"
#define QX1 "!quant.uniform<i8:f32:1, {0.5:0, 2.0:1}>"

static void test_data_movement(void **state) {
  /* [[1,2,3],[4,5,6]]: per-tensor and per-axis (along 0; along 1 after the
   * transpose) quantized tensors move their storage unchanged. */
  const int8_t a[] = {1, 2, 3, 4, 5, 6};
  tu_in in = IN(XRT_S8, a, 2, 3);
  tu_out o;
  TU_RUN_OK(C(state),
      "func.func @main(%a: tensor<2x3xi8>) -> (tensor<3x2xi8>, "
      "tensor<3x2xi8>, tensor<6xi8>, tensor<3x2xi8>, tensor<2x2xi8>, "
      "tensor<2x2xi8>) {\n"
      "  %qt = stablehlo.bitcast_convert %a : (tensor<2x3xi8>) -> tensor<2x3x"
      QS ">\n"
      "  %qp = stablehlo.bitcast_convert %a : (tensor<2x3xi8>) -> tensor<2x3x"
      QX0 ">\n"
      "  %t1 = stablehlo.transpose %qt, dims = [1, 0] : (tensor<2x3x" QS
      ">) -> tensor<3x2x" QS ">\n"
      "  %t2 = stablehlo.transpose %qp, dims = [1, 0] : (tensor<2x3x" QX0
      ">) -> tensor<3x2x" QX1 ">\n"
      "  %r1 = stablehlo.reshape %qt : (tensor<2x3x" QS ">) -> tensor<6x" QS
      ">\n"
      "  %r2 = stablehlo.reshape %qp : (tensor<2x3x" QX0 ">) -> tensor<2x3x1x"
      QX0 ">\n"
      "  %r3 = stablehlo.reshape %r2 : (tensor<2x3x1x" QX0 ">) -> tensor<2x3x"
      QX0 ">\n"
      "  %t3 = stablehlo.transpose %r3, dims = [1, 0] : (tensor<2x3x" QX0
      ">) -> tensor<3x2x" QX1 ">\n"
      "  %l1 = stablehlo.slice %qt [0:2, 1:3] : (tensor<2x3x" QS ">) -> "
      "tensor<2x2x" QS ">\n"
      "  %l2 = stablehlo.slice %qp [0:2, 0:3:2] : (tensor<2x3x" QX0 ">) -> "
      "tensor<2x2x" QX0 ">\n"
      "  %s1 = stablehlo.bitcast_convert %t1 : (tensor<3x2x" QS ">) -> "
      "tensor<3x2xi8>\n"
      "  %s2 = stablehlo.bitcast_convert %t2 : (tensor<3x2x" QX1 ">) -> "
      "tensor<3x2xi8>\n"
      "  %s3 = stablehlo.bitcast_convert %r1 : (tensor<6x" QS ">) -> "
      "tensor<6xi8>\n"
      "  %s4 = stablehlo.bitcast_convert %t3 : (tensor<3x2x" QX1 ">) -> "
      "tensor<3x2xi8>\n"
      "  %s5 = stablehlo.bitcast_convert %l1 : (tensor<2x2x" QS ">) -> "
      "tensor<2x2xi8>\n"
      "  %s6 = stablehlo.bitcast_convert %l2 : (tensor<2x2x" QX0 ">) -> "
      "tensor<2x2xi8>\n"
      "  func.return %s1, %s2, %s3, %s4, %s5, %s6 : tensor<3x2xi8>, "
      "tensor<3x2xi8>, tensor<6xi8>, tensor<3x2xi8>, tensor<2x2xi8>, "
      "tensor<2x2xi8>\n}\n",
      1, &in, &o);
  TU_ASSERT_OUT(&o, 0, int8_t, 1, 4, 2, 5, 3, 6);
  TU_ASSERT_OUT(&o, 1, int8_t, 1, 4, 2, 5, 3, 6);
  TU_ASSERT_OUT(&o, 2, int8_t, 1, 2, 3, 4, 5, 6);
  TU_ASSERT_OUT(&o, 3, int8_t, 1, 4, 2, 5, 3, 6);
  TU_ASSERT_OUT(&o, 4, int8_t, 2, 3, 5, 6);
  TU_ASSERT_OUT(&o, 5, int8_t, 1, 3, 4, 6);
  tu_out_free(&o);
}

/* cholesky, batch_norm_inference and triangular_solve take per-tensor
 * quantized operands.  By hand: cholesky([[4,2],[2,5]]) = [[2,0],[1,2]];
 * batch norm of [[1,2],[3,4]] with mean [2,3], variance 1, scale 1, offset
 * 0 is [[-1,-1],[1,1]]; solving [[4,0],[2,5]] x = [4,9] gives x = [1, 1.4],
 * and 1.4 quantizes with scale 0.5 to 3 (2.8 rounded), i.e. 1.5. */
static void test_linalg_per_tensor(void **state) {
  const char *prog =
    "func.func @main() -> (tensor<2x2xf32>, tensor<2x2xf32>, tensor<2x1xf32>) {\n"
    "  %a = stablehlo.constant dense<[[4.0, 2.0], [2.0, 5.0]]> : tensor<2x2xf32>\n"
    "  %qa = stablehlo.uniform_quantize %a : (tensor<2x2xf32>) -> tensor<2x2x!quant.uniform<i8:f32, 0.5:0>>\n"
    "  %l = stablehlo.cholesky %qa, lower = true : tensor<2x2x!quant.uniform<i8:f32, 0.5:0>>\n"
    "  %dl = stablehlo.uniform_dequantize %l : (tensor<2x2x!quant.uniform<i8:f32, 0.5:0>>) -> tensor<2x2xf32>\n"
    "  %x = stablehlo.constant dense<[[1.0, 2.0], [3.0, 4.0]]> : tensor<2x2xf32>\n"
    "  %qx = stablehlo.uniform_quantize %x : (tensor<2x2xf32>) -> tensor<2x2x!quant.uniform<i8:f32, 0.25:0>>\n"
    "  %s = stablehlo.constant dense<[1.0, 1.0]> : tensor<2xf32>\n"
    "  %qs = stablehlo.uniform_quantize %s : (tensor<2xf32>) -> tensor<2x!quant.uniform<i8:f32, 0.25:0>>\n"
    "  %m = stablehlo.constant dense<[2.0, 3.0]> : tensor<2xf32>\n"
    "  %qm = stablehlo.uniform_quantize %m : (tensor<2xf32>) -> tensor<2x!quant.uniform<i8:f32, 0.25:0>>\n"
    "  %vv = stablehlo.constant dense<[1.0, 1.0]> : tensor<2xf32>\n"
    "  %qv = stablehlo.uniform_quantize %vv : (tensor<2xf32>) -> tensor<2x!quant.uniform<i8:f32, 0.25:0>>\n"
    "  %z = stablehlo.constant dense<[0.0, 0.0]> : tensor<2xf32>\n"
    "  %qz = stablehlo.uniform_quantize %z : (tensor<2xf32>) -> tensor<2x!quant.uniform<i8:f32, 0.25:0>>\n"
    "  %bn = \"stablehlo.batch_norm_inference\"(%qx, %qs, %qz, %qm, %qv) {epsilon = 0.0 : f32, feature_index = 1 : i64} : (tensor<2x2x!quant.uniform<i8:f32, 0.25:0>>, tensor<2x!quant.uniform<i8:f32, 0.25:0>>, tensor<2x!quant.uniform<i8:f32, 0.25:0>>, tensor<2x!quant.uniform<i8:f32, 0.25:0>>, tensor<2x!quant.uniform<i8:f32, 0.25:0>>) -> tensor<2x2x!quant.uniform<i8:f32, 0.25:0>>\n"
    "  %dbn = stablehlo.uniform_dequantize %bn : (tensor<2x2x!quant.uniform<i8:f32, 0.25:0>>) -> tensor<2x2xf32>\n"
    "  %b = stablehlo.constant dense<[[4.0], [9.0]]> : tensor<2x1xf32>\n"
    "  %qb = stablehlo.uniform_quantize %b : (tensor<2x1xf32>) -> tensor<2x1x!quant.uniform<i8:f32, 0.5:0>>\n"
    "  %t = \"stablehlo.triangular_solve\"(%qa, %qb) {left_side = true, lower = true, unit_diagonal = false, transpose_a = #stablehlo<transpose NO_TRANSPOSE>} : (tensor<2x2x!quant.uniform<i8:f32, 0.5:0>>, tensor<2x1x!quant.uniform<i8:f32, 0.5:0>>) -> tensor<2x1x!quant.uniform<i8:f32, 0.5:0>>\n"
    "  %dt = stablehlo.uniform_dequantize %t : (tensor<2x1x!quant.uniform<i8:f32, 0.5:0>>) -> tensor<2x1xf32>\n"
    "  func.return %dl, %dbn, %dt : tensor<2x2xf32>, tensor<2x2xf32>, tensor<2x1xf32>\n"
    "}\n"
;
  tu_out o;
  TU_RUN_OK(C(state), prog, 0, NULL, &o);
  TU_ASSERT_OUT(&o, 0, float, 2, 0, 1, 2);
  TU_ASSERT_OUT(&o, 1, float, -1, -1, 1, 1);
  TU_ASSERT_OUT(&o, 2, float, 1, 1.5f);
  tu_out_free(&o);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_linalg_per_tensor),
      cmocka_unit_test(test_dot_per_tensor),
      cmocka_unit_test(test_dot_per_axis_rhs),
      cmocka_unit_test(test_dot_hybrid),
      cmocka_unit_test(test_dot_in_while),
      cmocka_unit_test(test_convolution_1d),
      cmocka_unit_test(test_reduce_sum),
      cmocka_unit_test(test_clamp_select),
      cmocka_unit_test(test_data_movement),
  };
  return cmocka_run_group_tests(tests, tu_setup_client, tu_teardown_client);
}
