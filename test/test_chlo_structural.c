/* test_chlo_structural.c - the CHLO ops that the core rewrites into
 * StableHLO (constant, constant_like, conj, tan, is_inf, is_pos_inf,
 * is_neg_inf, the broadcast_* ops with implicit and explicit broadcasting,
 * top_k) on hand-computed values, the opcode names, and bad input located
 * at file:line:col. */
#include "test_util.h"

#define C(state) ((xrt_client *)*(state))
#define IN(dt, data, ...) ((tu_in){TU_SHAPE((dt), __VA_ARGS__), (data)})
#define IN0(dt, data) ((tu_in){TU_SCALAR(dt), (data)})

/* ---- opcode names ---- */

static void test_chlo_opcode_names(void **state) {
  (void)state;
  static const struct { xrt_opcode op; const char *name; } ops[] = {
#define ST_OP(e, s) {XRT_OP_##e, s},
      XRT_OPCODES(ST_OP)
#undef ST_OP
  };
  int chlo = 0;
  for (size_t i = 0; i < TU_COUNT(ops); i++) {
    assert_string_equal(xrt_opcode_name(ops[i].op), ops[i].name);
    assert_int_equal(ops[i].op, (int)i + 1); /* append-only, no gaps */
    for (size_t j = 0; j < i; j++) assert_string_not_equal(ops[j].name, ops[i].name);
    chlo += strncmp(ops[i].name, "chlo.", 5) == 0;
  }
  assert_int_equal(chlo, 3 + 25 + 21);
  assert_string_equal(xrt_opcode_name(XRT_OP_CHLO_TOP_K), "chlo.top_k");
  assert_string_equal(xrt_opcode_name(XRT_OP_COUNT), "invalid");
}

/* ---- constant, constant_like, conj, tan ---- */

static void test_chlo_constants(void **state) {
  const char *prog =
      "func.func @main(%x: tensor<2x3xf32>, %n: tensor<4xi32>) -> "
      "(tensor<2xf64>, tensor<2x3xf32>, tensor<4xi32>, tensor<4xi32>, "
      "tensor<2x3xf32>) {\n"
      "  %0 = chlo.constant dense<[1.5, -2.0]> : tensor<2xf64>\n"
      "  %1 = \"chlo.constant_like\"(%x) {value = 2.500000e-01 : f32} : "
      "(tensor<2x3xf32>) -> tensor<2x3xf32>\n"
      "  %2 = \"chlo.constant_like\"(%n) <{value = -7 : i32}> : "
      "(tensor<4xi32>) -> tensor<4xi32>\n"
      "  %3 = \"chlo.constant\"() {value = dense<[1, 2, 3, 4]> : "
      "tensor<4xi32>} : () -> tensor<4xi32>\n"
      "  %4 = \"chlo.constant_like\"(%x) {value = 0x7F800000 : f32} : "
      "(tensor<2x3xf32>) -> tensor<2x3xf32>\n"
      "  func.return %0, %1, %2, %3, %4 : tensor<2xf64>, tensor<2x3xf32>, "
      "tensor<4xi32>, tensor<4xi32>, tensor<2x3xf32>\n}\n";
  const float x[6] = {0};
  const int32_t n[4] = {0};
  tu_in in[2] = {IN(XRT_F32, x, 2, 3), IN(XRT_S32, n, 4)};
  tu_out o;
  TU_RUN_OK(C(state), prog, 2, in, &o);
  TU_ASSERT_OUT(&o, 0, double, 1.5, -2.0);
  TU_ASSERT_OUT(&o, 1, float, 0.25f, 0.25f, 0.25f, 0.25f, 0.25f, 0.25f);
  TU_ASSERT_OUT(&o, 2, int32_t, -7, -7, -7, -7);
  TU_ASSERT_OUT(&o, 3, int32_t, 1, 2, 3, 4);
  tu_assert_shape(&o, 4, TU_SHAPE(XRT_F32, 2, 3));
  for (int i = 0; i < 6; i++) assert_true(((float *)o.data[4])[i] == INFINITY);
  tu_out_free(&o);
}

static void test_chlo_conj_tan(void **state) {
  const char *prog =
      "func.func @main(%c: tensor<3xcomplex<f64>>, %r: tensor<2xf32>) -> "
      "(tensor<3xcomplex<f64>>, tensor<2xf32>, tensor<2xf32>) {\n"
      "  %0 = chlo.conj %c : tensor<3xcomplex<f64>> -> tensor<3xcomplex<f64>>\n"
      "  %1 = chlo.conj %r : tensor<2xf32> -> tensor<2xf32>\n"
      "  %2 = chlo.tan %r : tensor<2xf32> -> tensor<2xf32>\n"
      "  func.return %0, %1, %2 : tensor<3xcomplex<f64>>, tensor<2xf32>, "
      "tensor<2xf32>\n}\n";
  const double c[6] = {1, 2, -3, -4, 0.5, 0.0};
  const float r[2] = {0.5f, -1.0f};
  tu_in in[2] = {IN(XRT_C128, c, 3), IN(XRT_F32, r, 2)};
  tu_out o;
  TU_RUN_OK(C(state), prog, 2, in, &o);
  TU_ASSERT_OUT(&o, 0, double, 1, -2, -3, 4, 0.5, -0.0);
  assert_true(signbit(((double *)o.data[0])[5]));
  TU_ASSERT_OUT(&o, 1, float, 0.5f, -1.0f);
  TU_ASSERT_OUT(&o, 2, float, (float)tan(0.5), (float)tan(-1.0));
  tu_out_free(&o);
}

/* ---- is_inf, is_pos_inf, is_neg_inf ---- */

static void test_chlo_is_inf(void **state) {
  const char *prog =
      "func.func @main(%x: tensor<6xf32>, %h: tensor<3xf16>, "
      "%q: tensor<2xf8E4M3FN>) -> (tensor<6xi1>, tensor<6xi1>, tensor<6xi1>, "
      "tensor<3xi1>, tensor<2xi1>) {\n"
      "  %0 = chlo.is_inf %x : tensor<6xf32> -> tensor<6xi1>\n"
      "  %1 = chlo.is_pos_inf %x : tensor<6xf32> -> tensor<6xi1>\n"
      "  %2 = chlo.is_neg_inf %x : tensor<6xf32> -> tensor<6xi1>\n"
      "  %3 = chlo.is_neg_inf %h : tensor<3xf16> -> tensor<3xi1>\n"
      "  %4 = chlo.is_inf %q : tensor<2xf8E4M3FN> -> tensor<2xi1>\n"
      "  func.return %0, %1, %2, %3, %4 : tensor<6xi1>, tensor<6xi1>, "
      "tensor<6xi1>, tensor<3xi1>, tensor<2xi1>\n}\n";
  const float x[6] = {INFINITY, -INFINITY, NAN, 3.4028234663852886e38f, 0.0f,
                      -1.0f};
  /* f16: -inf 0xfc00, +inf 0x7c00, -65504 0xfbff; f8E4M3FN has no
   * infinity: 0x7e is 448, 0x7f NaN */
  const uint16_t h[3] = {0xfc00, 0x7c00, 0xfbff};
  const uint8_t q[2] = {0x7e, 0x7f};
  tu_in in[3] = {IN(XRT_F32, x, 6), IN(XRT_F16, h, 3), IN(XRT_F8E4M3FN, q, 2)};
  tu_out o;
  TU_RUN_OK(C(state), prog, 3, in, &o);
  TU_ASSERT_OUT(&o, 0, uint8_t, 1, 1, 0, 0, 0, 0);
  TU_ASSERT_OUT(&o, 1, uint8_t, 1, 0, 0, 0, 0, 0);
  TU_ASSERT_OUT(&o, 2, uint8_t, 0, 1, 0, 0, 0, 0);
  TU_ASSERT_OUT(&o, 3, uint8_t, 1, 0, 0);
  TU_ASSERT_OUT(&o, 4, uint8_t, 0, 0);
  tu_out_free(&o);
}

/* ---- broadcast_* ---- */

static void test_chlo_broadcast_numpy(void **state) {
  /* trailing dimensions line up; size-1 dimensions stretch on either side */
  const char *prog =
      "func.func @main(%a: tensor<2x1x3xf32>, %b: tensor<4x1xf32>, "
      "%s: tensor<f32>) -> (tensor<2x4x3xf32>, tensor<4x1xf32>, "
      "tensor<2x1x3xf32>) {\n"
      "  %0 = chlo.broadcast_subtract %a, %b : (tensor<2x1x3xf32>, "
      "tensor<4x1xf32>) -> tensor<2x4x3xf32>\n"
      "  %1 = chlo.broadcast_multiply %s, %b : (tensor<f32>, tensor<4x1xf32>) "
      "-> tensor<4x1xf32>\n"
      "  %2 = chlo.broadcast_add %a, %a : (tensor<2x1x3xf32>, "
      "tensor<2x1x3xf32>) -> tensor<2x1x3xf32>\n"
      "  func.return %0, %1, %2 : tensor<2x4x3xf32>, tensor<4x1xf32>, "
      "tensor<2x1x3xf32>\n}\n";
  const float a[6] = {1, 2, 3, 4, 5, 6}, b[4] = {10, 20, 30, 40}, s = 0.5f;
  tu_in in[3] = {IN(XRT_F32, a, 2, 1, 3), IN(XRT_F32, b, 4, 1),
                 IN0(XRT_F32, &s)};
  tu_out o;
  TU_RUN_OK(C(state), prog, 3, in, &o);
  tu_assert_shape(&o, 0, TU_SHAPE(XRT_F32, 2, 4, 3));
  const float *r = (const float *)o.data[0];
  for (int i = 0; i < 2; i++)
    for (int j = 0; j < 4; j++)
      for (int k = 0; k < 3; k++)
        assert_true(r[(i * 4 + j) * 3 + k] == a[i * 3 + k] - b[j]);
  TU_ASSERT_OUT(&o, 1, float, 5, 10, 15, 20);
  TU_ASSERT_OUT(&o, 2, float, 2, 4, 6, 8, 10, 12);
  tu_out_free(&o);
}

static void test_chlo_broadcast_dimensions(void **state) {
  /* broadcast_dimensions maps the lower-ranked operand: [3] onto dim 0 of
   * 3x2 (XLA's "in-dim" broadcasting), which numpy could not do */
  const char *prog =
      "func.func @main(%a: tensor<3x2xi32>, %b: tensor<3xi32>) -> "
      "(tensor<3x2xi32>, tensor<3x2xi32>) {\n"
      "  %0 = chlo.broadcast_add %a, %b {broadcast_dimensions = "
      "array<i64: 0>} : (tensor<3x2xi32>, tensor<3xi32>) -> tensor<3x2xi32>\n"
      "  %1 = \"chlo.broadcast_maximum\"(%b, %a) <{broadcast_dimensions = "
      "array<i64: 0>}> : (tensor<3xi32>, tensor<3x2xi32>) -> "
      "tensor<3x2xi32>\n"
      "  func.return %0, %1 : tensor<3x2xi32>, tensor<3x2xi32>\n}\n";
  const int32_t a[6] = {1, 2, 3, 4, 5, 6}, b[3] = {100, 3, -1};
  tu_in in[2] = {IN(XRT_S32, a, 3, 2), IN(XRT_S32, b, 3)};
  tu_out o;
  TU_RUN_OK(C(state), prog, 2, in, &o);
  TU_ASSERT_OUT(&o, 0, int32_t, 101, 102, 6, 7, 4, 5);
  TU_ASSERT_OUT(&o, 1, int32_t, 100, 100, 3, 4, 5, 6);
  tu_out_free(&o);
}

static void test_chlo_broadcast_ops(void **state) {
  /* every binary op once, each with a scalar or 1-sized operand */
  const char *prog =
      "func.func @main(%f: tensor<4xf32>, %g: tensor<1xf32>) -> "
      "(tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, "
      "tensor<4xf32>, tensor<4xcomplex<f32>>) {\n"
      "  %0 = chlo.broadcast_divide %f, %g : (tensor<4xf32>, tensor<1xf32>) -> tensor<4xf32>\n"
      "  %1 = chlo.broadcast_remainder %f, %g : (tensor<4xf32>, tensor<1xf32>) -> tensor<4xf32>\n"
      "  %2 = chlo.broadcast_power %g, %f : (tensor<1xf32>, tensor<4xf32>) -> tensor<4xf32>\n"
      "  %3 = chlo.broadcast_minimum %f, %g : (tensor<4xf32>, tensor<1xf32>) -> tensor<4xf32>\n"
      "  %4 = chlo.broadcast_atan2 %f, %g : (tensor<4xf32>, tensor<1xf32>) -> tensor<4xf32>\n"
      "  %5 = chlo.broadcast_complex %f, %g : (tensor<4xf32>, tensor<1xf32>) -> tensor<4xcomplex<f32>>\n"
      "  func.return %0, %1, %2, %3, %4, %5 : tensor<4xf32>, tensor<4xf32>, "
      "tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xcomplex<f32>>\n}\n";
  const float f[4] = {1, -5, 8, 0}, g = 2;
  tu_in in[2] = {IN(XRT_F32, f, 4), IN(XRT_F32, &g, 1)};
  tu_out o;
  TU_RUN_OK(C(state), prog, 2, in, &o);
  TU_ASSERT_OUT(&o, 0, float, 0.5f, -2.5f, 4, 0);
  TU_ASSERT_OUT(&o, 1, float, 1, -1, 0, 0);
  TU_ASSERT_OUT(&o, 2, float, 2, 0.03125f, 256, 1);
  TU_ASSERT_OUT(&o, 3, float, 1, -5, 2, 0);
  TU_ASSERT_OUT(&o, 4, float, (float)atan2(1, 2), (float)atan2(-5, 2),
                (float)atan2(8, 2), 0);
  TU_ASSERT_OUT(&o, 5, float, 1, 2, -5, 2, 8, 2, 0, 2);
  tu_out_free(&o);
}

static void test_chlo_broadcast_int_ops(void **state) {
  const char *prog =
      "func.func @main(%i: tensor<4xi32>, %j: tensor<i32>, %p: tensor<4xi1>, "
      "%q: tensor<i1>) -> (tensor<4xi32>, tensor<4xi32>, tensor<4xi32>, "
      "tensor<4xi1>, tensor<4xi1>, tensor<4xi1>, tensor<4xi32>) {\n"
      "  %5 = chlo.broadcast_shift_left %i, %j : (tensor<4xi32>, tensor<i32>) -> tensor<4xi32>\n"
      "  %6 = chlo.broadcast_shift_right_arithmetic %i, %j : (tensor<4xi32>, tensor<i32>) -> tensor<4xi32>\n"
      "  %7 = chlo.broadcast_shift_right_logical %i, %j : (tensor<4xi32>, tensor<i32>) -> tensor<4xi32>\n"
      "  %8 = chlo.broadcast_and %p, %q : (tensor<4xi1>, tensor<i1>) -> tensor<4xi1>\n"
      "  %9 = chlo.broadcast_or %p, %q : (tensor<4xi1>, tensor<i1>) -> tensor<4xi1>\n"
      "  %10 = chlo.broadcast_xor %p, %q : (tensor<4xi1>, tensor<i1>) -> tensor<4xi1>\n"
      "  %12 = chlo.broadcast_xor %i, %j : (tensor<4xi32>, tensor<i32>) -> tensor<4xi32>\n"
      "  func.return %5, %6, %7, %8, %9, %10, %12 : tensor<4xi32>, "
      "tensor<4xi32>, tensor<4xi32>, tensor<4xi1>, tensor<4xi1>, "
      "tensor<4xi1>, tensor<4xi32>\n}\n";
  const int32_t i[4] = {1, -8, 3, 256}, j = 2;
  const uint8_t p[4] = {1, 0, 1, 0}, q = 1;
  tu_in in[4] = {IN(XRT_S32, i, 4), IN0(XRT_S32, &j), IN(XRT_PRED, p, 4),
                 IN0(XRT_PRED, &q)};
  tu_out o;
  TU_RUN_OK(C(state), prog, 4, in, &o);
  TU_ASSERT_OUT(&o, 0, int32_t, 4, -32, 12, 1024);
  TU_ASSERT_OUT(&o, 1, int32_t, 0, -2, 0, 64);
  TU_ASSERT_OUT(&o, 2, int32_t, 0, 0x3ffffffe, 0, 64);
  TU_ASSERT_OUT(&o, 3, uint8_t, 1, 0, 1, 0);
  TU_ASSERT_OUT(&o, 4, uint8_t, 1, 1, 1, 1);
  TU_ASSERT_OUT(&o, 5, uint8_t, 0, 1, 0, 1);
  TU_ASSERT_OUT(&o, 6, int32_t, 3, -6, 1, 258);
  tu_out_free(&o);
}

static void test_chlo_broadcast_compare_select(void **state) {
  const char *prog =
      "func.func @main(%a: tensor<2x3xf32>, %b: tensor<3xf32>, "
      "%t: tensor<f32>) -> (tensor<2x3xi1>, tensor<2x3xi1>, tensor<2x3xf32>, "
      "tensor<2x3xf32>, tensor<2x3xf32>) {\n"
      "  %0 = chlo.broadcast_compare %a, %b {comparison_direction = "
      "#chlo<comparison_direction GT>} : (tensor<2x3xf32>, tensor<3xf32>) -> "
      "tensor<2x3xi1>\n"
      "  %1 = chlo.broadcast_compare %a, %t {comparison_direction = "
      "#chlo<comparison_direction LT>, compare_type = "
      "#chlo<comparison_type TOTALORDER>} : (tensor<2x3xf32>, tensor<f32>) -> "
      "tensor<2x3xi1>\n"
      "  %2 = chlo.broadcast_select %0, %a, %b : (tensor<2x3xi1>, "
      "tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xf32>\n"
      "  %p = stablehlo.constant dense<[true, false, true]> : tensor<3xi1>\n"
      "  %3 = chlo.broadcast_select %p, %t, %a : (tensor<3xi1>, tensor<f32>, "
      "tensor<2x3xf32>) -> tensor<2x3xf32>\n"
      "  %4 = chlo.broadcast_next_after %a, %t : (tensor<2x3xf32>, "
      "tensor<f32>) -> tensor<2x3xf32>\n"
      "  func.return %0, %1, %2, %3, %4 : tensor<2x3xi1>, tensor<2x3xi1>, "
      "tensor<2x3xf32>, tensor<2x3xf32>, tensor<2x3xf32>\n}\n";
  const float a[6] = {1, 5, -0.0f, 7, 0, 2}, b[3] = {2, 2, 0}, t = 0;
  tu_in in[3] = {IN(XRT_F32, a, 2, 3), IN(XRT_F32, b, 3), IN0(XRT_F32, &t)};
  tu_out o;
  TU_RUN_OK(C(state), prog, 3, in, &o);
  TU_ASSERT_OUT(&o, 0, uint8_t, 0, 1, 0, 1, 0, 1);
  /* TOTALORDER: -0 < +0 */
  TU_ASSERT_OUT(&o, 1, uint8_t, 0, 0, 1, 0, 0, 0);
  TU_ASSERT_OUT(&o, 2, float, 2, 5, 0, 7, 2, 2);
  TU_ASSERT_OUT(&o, 3, float, 0, 5, 0, 0, 0, 0);
  const float *n = (const float *)o.data[4];
  assert_true(n[0] == nextafterf(1, 0) && n[3] == nextafterf(7, 0));
  assert_true(n[4] == 0 && n[2] == 0 && !signbit(n[2]));
  tu_out_free(&o);
}

/* ---- top_k ---- */

static void test_chlo_top_k(void **state) {
  /* XLA's order: descending in total order (NaN above +inf, -NaN below
   * -inf, +0 above -0), ties by the lower index first */
  const char *prog =
      "func.func @main(%x: tensor<2x7xf32>) -> (tensor<2x3xf32>, "
      "tensor<2x3xi32>, tensor<2x7xf32>, tensor<2x7xi32>, tensor<2x1xf32>, "
      "tensor<2x1xi32>) {\n"
      "  %v, %i = chlo.top_k(%x, k = 3) : tensor<2x7xf32> -> "
      "(tensor<2x3xf32>, tensor<2x3xi32>)\n"
      "  %va, %ia = chlo.top_k(%x, k = 7) : tensor<2x7xf32> -> "
      "(tensor<2x7xf32>, tensor<2x7xi32>)\n"
      "  %v1, %i1 = \"chlo.top_k\"(%x) {k = 1 : i64} : (tensor<2x7xf32>) -> "
      "(tensor<2x1xf32>, tensor<2x1xi32>)\n"
      "  func.return %v, %i, %va, %ia, %v1, %i1 : tensor<2x3xf32>, "
      "tensor<2x3xi32>, tensor<2x7xf32>, tensor<2x7xi32>, tensor<2x1xf32>, "
      "tensor<2x1xi32>\n}\n";
  const float nn = -NAN;
  const float x[14] = {3, 1, 3, 5, 1, 5, 0,
                       -INFINITY, NAN, 0.0f, INFINITY, -0.0f, nn, 2};
  tu_in in[1] = {IN(XRT_F32, x, 2, 7)};
  tu_out o;
  TU_RUN_OK(C(state), prog, 1, in, &o);
  const float *v = (const float *)o.data[0];
  TU_ASSERT_OUT(&o, 1, int32_t, 3, 5, 0, 1, 3, 6); /* along the row */
  assert_true(v[0] == 5 && v[1] == 5 && v[2] == 3);
  assert_true(isnan(v[3]) && v[4] == INFINITY && v[5] == 2);
  TU_ASSERT_OUT(&o, 3, int32_t, 3, 5, 0, 2, 1, 4, 6, 1, 3, 6, 2, 4, 0, 5);
  const float *va = (const float *)o.data[2];
  assert_true(!signbit(va[7 + 3]) && signbit(va[7 + 4]) && va[7 + 5] == -INFINITY);
  assert_true(isnan(va[13]) && signbit(va[13]));
  TU_ASSERT_OUT(&o, 5, int32_t, 3, 1);
  tu_out_free(&o);
}

static void test_chlo_top_k_int_batch(void **state) {
  /* rank 3 (batch dims), integers: signed order; u8: unsigned order */
  const char *prog =
      "func.func @main(%x: tensor<2x2x4xi32>, %u: tensor<5xui8>) -> "
      "(tensor<2x2x2xi32>, tensor<2x2x2xi32>, tensor<2xui8>, tensor<2xi32>) {\n"
      "  %v, %i = chlo.top_k(%x, k = 2) : tensor<2x2x4xi32> -> "
      "(tensor<2x2x2xi32>, tensor<2x2x2xi32>)\n"
      "  %w, %j = chlo.top_k(%u, k = 2) : tensor<5xui8> -> (tensor<2xui8>, "
      "tensor<2xi32>)\n"
      "  func.return %v, %i, %w, %j : tensor<2x2x2xi32>, tensor<2x2x2xi32>, "
      "tensor<2xui8>, tensor<2xi32>\n}\n";
  const int32_t x[16] = {-1, -5, 7, 7, 0, 0, 0, 0,
                         -3, -2, -9, -1, 4, 9, 2, 9};
  const uint8_t u[5] = {200, 3, 255, 0, 255};
  tu_in in[2] = {IN(XRT_S32, x, 2, 2, 4), IN(XRT_U8, u, 5)};
  tu_out o;
  TU_RUN_OK(C(state), prog, 2, in, &o);
  TU_ASSERT_OUT(&o, 0, int32_t, 7, 7, 0, 0, -1, -2, 9, 9);
  TU_ASSERT_OUT(&o, 1, int32_t, 2, 3, 0, 1, 3, 1, 1, 3);
  TU_ASSERT_OUT(&o, 2, uint8_t, 255, 255);
  TU_ASSERT_OUT(&o, 3, int32_t, 2, 4);
  tu_out_free(&o);
}

/* ---- bad input ---- */

static void test_chlo_bad_input(void **state) {
  (void)state;
  tu_parse_fails_at(
      "func.func @main(%a: tensor<2x3xf32>, %b: tensor<4xf32>) {\n"
      "  %r = chlo.broadcast_add %a, %b : (tensor<2x3xf32>, tensor<4xf32>) -> "
      "tensor<2x3xf32>\n"
      "  func.return\n}\n",
      "<input>:2:8: chlo.broadcast_add: ", "do not broadcast");
  tu_parse_fails_at(
      "func.func @main(%a: tensor<2x3xf32>, %b: tensor<3xf32>) {\n"
      "  %r = chlo.broadcast_add %a, %b : (tensor<2x3xf32>, tensor<3xf32>) -> "
      "tensor<3x3xf32>\n"
      "  func.return\n}\n",
      "<input>:2:8: chlo.broadcast_add: ", "differs from the broadcast shape");
  tu_parse_fails_at(
      "func.func @main(%a: tensor<2x3xf32>, %b: tensor<3xf32>) {\n"
      "  %r = chlo.broadcast_add %a, %b {broadcast_dimensions = array<i64: 0>}"
      " : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xf32>\n"
      "  func.return\n}\n",
      "<input>:2:8: chlo.broadcast_add: ", "do not broadcast");
  tu_parse_fails_at(
      "func.func @main(%a: tensor<3xf32>, %b: tensor<3xi32>) {\n"
      "  %r = chlo.broadcast_multiply %a, %b : (tensor<3xf32>, tensor<3xi32>) "
      "-> tensor<3xf32>\n"
      "  func.return\n}\n",
      "<input>:2:8: chlo.broadcast_multiply: ", "operand element types differ");
  tu_parse_fails_at(
      "func.func @main(%a: tensor<3xf32>, %b: tensor<3xf32>) {\n"
      "  %r = chlo.broadcast_and %a, %b : (tensor<3xf32>, tensor<3xf32>) -> "
      "tensor<3xf32>\n"
      "  func.return\n}\n",
      "<input>:2:8: chlo.broadcast_and: ", "element type f32 is not allowed");
  tu_parse_fails_at(
      "func.func @main(%a: tensor<3xf32>, %b: tensor<3xf32>) {\n"
      "  %r = chlo.broadcast_compare %a, %b : (tensor<3xf32>, tensor<3xf32>) "
      "-> tensor<3xi1>\n"
      "  func.return\n}\n",
      "<input>:2:8: chlo.broadcast_compare: ",
      "missing attribute 'comparison_direction'");
  tu_parse_fails_at(
      "func.func @main(%p: tensor<3xi32>, %a: tensor<3xf32>) {\n"
      "  %r = chlo.broadcast_select %p, %a, %a : (tensor<3xi32>, "
      "tensor<3xf32>, tensor<3xf32>) -> tensor<3xf32>\n"
      "  func.return\n}\n",
      "<input>:2:8: chlo.broadcast_select: ", "pred must be a tensor of i1");
  tu_parse_fails_at(
      "func.func @main(%x: tensor<2x5xf32>) {\n"
      "  %v, %i = chlo.top_k(%x, k = 6) : tensor<2x5xf32> -> "
      "(tensor<2x6xf32>, tensor<2x6xi32>)\n"
      "  func.return\n}\n",
      "<input>:2:12: chlo.top_k: ", "k = 6 is out of range");
  tu_parse_fails_at(
      "func.func @main(%x: tensor<2x5xf32>) {\n"
      "  %v, %i = \"chlo.top_k\"(%x) : (tensor<2x5xf32>) -> "
      "(tensor<2x1xf32>, tensor<2x1xi32>)\n"
      "  func.return\n}\n",
      "<input>:2:12: chlo.top_k: ", "missing integer attribute 'k'");
  tu_parse_fails_at(
      "func.func @main(%x: tensor<5xf32>) {\n"
      "  %v, %i = chlo.top_k(%x, k = 2) : tensor<5xf32> -> "
      "(tensor<2xf32>, tensor<2xi64>)\n"
      "  func.return\n}\n",
      "<input>:2:12: chlo.top_k: ", "indices must be tensor<2xi32>");
  tu_parse_fails_at(
      "func.func @main(%x: tensor<5xi32>) {\n"
      "  %r = chlo.is_inf %x : tensor<5xi32> -> tensor<5xi1>\n"
      "  func.return\n}\n",
      "<input>:2:8: chlo.is_inf: ", "operand must be a float tensor");
  tu_parse_fails_at(
      "func.func @main(%x: tensor<5xf32>) {\n"
      "  %r = \"chlo.constant_like\"(%x) : (tensor<5xf32>) -> tensor<5xf32>\n"
      "  func.return\n}\n",
      "<input>:2:8: chlo.constant_like: ", "missing attribute 'value'");
  tu_parse_fails_at(
      "func.func @main(%x: tensor<5xi32>) {\n"
      "  %r = chlo.conj %x : tensor<5xi32> -> tensor<5xi32>\n"
      "  func.return\n}\n",
      "<input>:2:8: chlo.conj: ", "operand must be a float or complex tensor");
  /* not a CHLO op at all: UNIMPLEMENTED, located */
  tu_parse_fails(
      "func.func @main(%x: tensor<5xf32>) {\n"
      "  %r = chlo.minimum_broadcast_shapes %x : tensor<5xf32> -> "
      "tensor<5xf32>\n"
      "  func.return\n}\n",
      NULL, XRT_UNIMPLEMENTED, "<input>:2:8:",
      "unknown op 'chlo.minimum_broadcast_shapes'");
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_chlo_opcode_names),
      cmocka_unit_test(test_chlo_constants),
      cmocka_unit_test(test_chlo_conj_tan),
      cmocka_unit_test(test_chlo_is_inf),
      cmocka_unit_test(test_chlo_broadcast_numpy),
      cmocka_unit_test(test_chlo_broadcast_dimensions),
      cmocka_unit_test(test_chlo_broadcast_ops),
      cmocka_unit_test(test_chlo_broadcast_int_ops),
      cmocka_unit_test(test_chlo_broadcast_compare_select),
      cmocka_unit_test(test_chlo_top_k),
      cmocka_unit_test(test_chlo_top_k_int_batch),
      cmocka_unit_test(test_chlo_bad_input),
  };
  return cmocka_run_group_tests(tests, tu_setup_client, tu_teardown_client);
}
