/*
 * test_kernel_rng.c - the simulator's random number kernels
 * (src/sim/rng.c): rng_bit_generator with THREE_FRY on scalar outputs of
 * 32, 16, 8 and 4 bits against the Threefry-2x32 (20 rounds) known-answer
 * vectors of Random123 (kat_vectors: key and counter zero, all ones, and
 * the digits of pi), with the new state (counter + 1, wrapping); and
 * stablehlo.rng: values of a UNIFORM draw inside [a, b) for float and
 * integer types (ui64 too), a float range holding one value (draws that
 * round up to b are moved to a), NORMAL draws finite, and a shape operand
 * that disagrees with the result at run time.
 */
#include "test_util.h"

#define C(state) ((xrt_client *)*(state))

/* One THREE_FRY draw of each scalar type from state {key, ctr}. */
static void threefry_kat(xrt_client *c, uint64_t key, uint64_t ctr,
                         uint32_t want0) {
  const uint64_t s[2] = {key, ctr};
  tu_in in = {TU_SHAPE(XRT_U64, 2), s};
  tu_out o;
  TU_RUN_OK(c,
            "func.func @main(%s: tensor<2xui64>) -> (tensor<2xui64>, tensor<ui32>, tensor<ui16>, tensor<ui8>, tensor<i4>, tensor<ui4>, tensor<i32>) {\n"
            "  %n, %o = stablehlo.rng_bit_generator %s, algorithm = THREE_FRY : (tensor<2xui64>) -> (tensor<2xui64>, tensor<ui32>)\n"
            "  %n2, %o2 = stablehlo.rng_bit_generator %s, algorithm = THREE_FRY : (tensor<2xui64>) -> (tensor<2xui64>, tensor<ui16>)\n"
            "  %n3, %o3 = stablehlo.rng_bit_generator %s, algorithm = THREE_FRY : (tensor<2xui64>) -> (tensor<2xui64>, tensor<ui8>)\n"
            "  %n4, %o4 = stablehlo.rng_bit_generator %s, algorithm = THREE_FRY : (tensor<2xui64>) -> (tensor<2xui64>, tensor<i4>)\n"
            "  %n5, %o5 = stablehlo.rng_bit_generator %s, algorithm = THREE_FRY : (tensor<2xui64>) -> (tensor<2xui64>, tensor<ui4>)\n"
            "  %n6, %o6 = stablehlo.rng_bit_generator %s, algorithm = THREE_FRY : (tensor<2xui64>) -> (tensor<2xui64>, tensor<i32>)\n"
            "  func.return %n, %o, %o2, %o3, %o4, %o5, %o6 : tensor<2xui64>, tensor<ui32>, tensor<ui16>, tensor<ui8>, tensor<i4>, tensor<ui4>, tensor<i32>\n}\n",
            1, &in, &o);
  TU_ASSERT_OUT(&o, 0, uint64_t, key, ctr + 1);
  TU_ASSERT_OUT(&o, 1, uint32_t, want0);
  TU_ASSERT_OUT(&o, 2, uint16_t, (uint16_t)want0);
  TU_ASSERT_OUT(&o, 3, uint8_t, (uint8_t)want0);
  /* the low 4 bits, sign-extended for i4 */
  int8_t s4 = (int8_t)(want0 & 15);
  if (s4 > 7) s4 = (int8_t)(s4 - 16);
  TU_ASSERT_OUT(&o, 4, int8_t, s4);
  TU_ASSERT_OUT(&o, 5, uint8_t, (uint8_t)(want0 & 15));
  TU_ASSERT_OUT(&o, 6, int32_t, (int32_t)want0);
  tu_out_free(&o);
}

static void test_threefry_known_answers(void **state) {
  /* Random123 threefry2x32_20: ctr {0, 0} key {0, 0} -> 6b200159 ... */
  threefry_kat(C(state), 0, 0, 0x6b200159u);
  /* ctr {ffffffff, ffffffff} key {ffffffff, ffffffff} -> 1cb996fc ...;
   * the counter wraps to 0 */
  threefry_kat(C(state), ~0ull, ~0ull, 0x1cb996fcu);
  /* ctr {243f6a88, 85a308d3} key {13198a2e, 03707344} -> c4923a9c ...
   * (words low first) */
  threefry_kat(C(state), 0x0370734413198a2eull, 0x85a308d3243f6a88ull,
               0xc4923a9cu);
}

/* Odd, empty and 2-bit outputs; Philox's 128-bit counter carries from
 * state[1] into state[2]. */
static void test_rbg_shapes_and_carry(void **state) {
  const uint64_t s2[2] = {7, 9}, s3[3] = {7, ~0ull, 41};
  tu_in in[2] = {{TU_SHAPE(XRT_U64, 2), s2}, {TU_SHAPE(XRT_U64, 3), s3}};
  tu_out o;
  TU_RUN_OK(C(state),
            "func.func @main(%s: tensor<2xui64>, %t: tensor<3xui64>) -> (tensor<2xui64>, tensor<5xui2>, tensor<0xui32>, tensor<3xui64>, tensor<3x5xi8>) {\n"
            "  %n, %o = stablehlo.rng_bit_generator %s, algorithm = THREE_FRY : (tensor<2xui64>) -> (tensor<2xui64>, tensor<5xui2>)\n"
            "  %n2, %o2 = stablehlo.rng_bit_generator %s, algorithm = THREE_FRY : (tensor<2xui64>) -> (tensor<2xui64>, tensor<0xui32>)\n"
            "  %n3, %o3 = stablehlo.rng_bit_generator %t, algorithm = PHILOX : (tensor<3xui64>) -> (tensor<3xui64>, tensor<3x5xi8>)\n"
            "  func.return %n, %o, %o2, %n3, %o3 : tensor<2xui64>, tensor<5xui2>, tensor<0xui32>, tensor<3xui64>, tensor<3x5xi8>\n}\n",
            2, in, &o);
  /* key kept, the counter advanced by the counters used (at least one) */
  const uint64_t *n = (const uint64_t *)o.data[0];
  assert_true(n[0] == 7 && n[1] > 9 && n[1] <= 9 + 5);
  for (int i = 0; i < 5; i++) assert_true(((uint8_t *)o.data[1])[i] < 4);
  assert_int_equal(o.bytes[2], 0);
  const uint64_t *p = (const uint64_t *)o.data[3];
  assert_true(p[0] == 7 && p[1] < 15 && p[2] == 42); /* wrapped, carried */
  tu_out_free(&o);
}

/* UNIFORM draws lie in [a, b): floats of every width and integers. */
static void test_rng_uniform_ranges(void **state) {
  tu_out o;
  TU_RUN_OK(C(state),
            "func.func @main() -> (tensor<64xf32>, tensor<64xf64>, tensor<64xf16>, tensor<64xbf16>, tensor<64xi8>, tensor<64xui16>, tensor<64xi64>, tensor<64xf64>) {\n"
            "  %s = stablehlo.constant dense<[64]> : tensor<1xi64>\n"
            "  %fa = stablehlo.constant dense<-2.0> : tensor<f32>\n"
            "  %fb = stablehlo.constant dense<3.0> : tensor<f32>\n"
            "  %da = stablehlo.constant dense<0.5> : tensor<f64>\n"
            "  %db = stablehlo.constant dense<0.75> : tensor<f64>\n"
            "  %ha = stablehlo.constant dense<1.0> : tensor<f16>\n"
            "  %hb = stablehlo.constant dense<2.0> : tensor<f16>\n"
            "  %ba = stablehlo.constant dense<-1.0> : tensor<bf16>\n"
            "  %bb = stablehlo.constant dense<0.0> : tensor<bf16>\n"
            "  %ia = stablehlo.constant dense<-5> : tensor<i8>\n"
            "  %ib = stablehlo.constant dense<5> : tensor<i8>\n"
            "  %ua = stablehlo.constant dense<100> : tensor<ui16>\n"
            "  %ub = stablehlo.constant dense<103> : tensor<ui16>\n"
            "  %la = stablehlo.constant dense<-10000000000> : tensor<i64>\n"
            "  %lb = stablehlo.constant dense<10000000000> : tensor<i64>\n"
            "  %m = stablehlo.constant dense<1.0> : tensor<f64>\n"
            "  %sd = stablehlo.constant dense<2.0> : tensor<f64>\n"
            "  %0 = stablehlo.rng %fa, %fb, %s, distribution = UNIFORM : (tensor<f32>, tensor<f32>, tensor<1xi64>) -> tensor<64xf32>\n"
            "  %1 = stablehlo.rng %da, %db, %s, distribution = UNIFORM : (tensor<f64>, tensor<f64>, tensor<1xi64>) -> tensor<64xf64>\n"
            "  %2 = stablehlo.rng %ha, %hb, %s, distribution = UNIFORM : (tensor<f16>, tensor<f16>, tensor<1xi64>) -> tensor<64xf16>\n"
            "  %3 = stablehlo.rng %ba, %bb, %s, distribution = UNIFORM : (tensor<bf16>, tensor<bf16>, tensor<1xi64>) -> tensor<64xbf16>\n"
            "  %4 = stablehlo.rng %ia, %ib, %s, distribution = UNIFORM : (tensor<i8>, tensor<i8>, tensor<1xi64>) -> tensor<64xi8>\n"
            "  %5 = stablehlo.rng %ua, %ub, %s, distribution = UNIFORM : (tensor<ui16>, tensor<ui16>, tensor<1xi64>) -> tensor<64xui16>\n"
            "  %6 = stablehlo.rng %la, %lb, %s, distribution = UNIFORM : (tensor<i64>, tensor<i64>, tensor<1xi64>) -> tensor<64xi64>\n"
            "  %7 = stablehlo.rng %m, %sd, %s, distribution = NORMAL : (tensor<f64>, tensor<f64>, tensor<1xi64>) -> tensor<64xf64>\n"
            "  func.return %0, %1, %2, %3, %4, %5, %6, %7 : tensor<64xf32>, tensor<64xf64>, tensor<64xf16>, tensor<64xbf16>, tensor<64xi8>, tensor<64xui16>, tensor<64xi64>, tensor<64xf64>\n}\n",
            0, NULL, &o);
  int distinct = 0;
  for (int i = 0; i < 64; i++) {
    float f = ((float *)o.data[0])[i];
    double d = ((double *)o.data[1])[i];
    float h = xrt_f16_to_f32(((uint16_t *)o.data[2])[i]);
    float b = xrt_bf16_to_f32(((uint16_t *)o.data[3])[i]);
    int8_t s8 = ((int8_t *)o.data[4])[i];
    uint16_t u16 = ((uint16_t *)o.data[5])[i];
    int64_t s64 = ((int64_t *)o.data[6])[i];
    double n = ((double *)o.data[7])[i];
    if (!(f >= -2 && f < 3) || !(d >= 0.5 && d < 0.75) || !(h >= 1 && h < 2) ||
        !(b >= -1 && b < 0) || s8 < -5 || s8 >= 5 || u16 < 100 || u16 >= 103 ||
        s64 < -10000000000ll || s64 >= 10000000000ll || !isfinite(n))
      fail_msg("draw %d out of range: %g %g %g %g %d %u %lld %g", i, f, d, h,
               b, s8, u16, (long long)s64, n);
    distinct += i > 0 && ((float *)o.data[0])[i] != ((float *)o.data[0])[i - 1];
  }
  assert_true(distinct > 32); /* not a constant */
  tu_out_free(&o);
}

/* [1, 1 + 2^-10) holds one f16 value: every draw is 1 (a draw that rounds
 * up to b is moved to a); ui64 draws in a range beyond 2^63. */
static void test_rng_narrow_and_wide(void **state) {
  tu_out o;
  TU_RUN_OK(C(state),
            "func.func @main() -> (tensor<32xf16>, tensor<32xui64>) {\n"
            "  %s = stablehlo.constant dense<[32]> : tensor<1xi64>\n"
            "  %a = stablehlo.constant dense<1.0> : tensor<f16>\n"
            "  %b = stablehlo.constant dense<1.0009765625> : tensor<f16>\n"
            "  %ua = stablehlo.constant dense<5> : tensor<ui64>\n"
            "  %ub = stablehlo.constant dense<18000000000000000000> : tensor<ui64>\n"
            "  %0 = stablehlo.rng %a, %b, %s, distribution = UNIFORM : (tensor<f16>, tensor<f16>, tensor<1xi64>) -> tensor<32xf16>\n"
            "  %1 = stablehlo.rng %ua, %ub, %s, distribution = UNIFORM : (tensor<ui64>, tensor<ui64>, tensor<1xi64>) -> tensor<32xui64>\n"
            "  func.return %0, %1 : tensor<32xf16>, tensor<32xui64>\n}\n",
            0, NULL, &o);
  int big = 0;
  for (int i = 0; i < 32; i++) {
    assert_int_equal(((uint16_t *)o.data[0])[i], 0x3c00); /* 1.0 */
    uint64_t u = ((uint64_t *)o.data[1])[i];
    assert_true(u >= 5 && u < 18000000000000000000ull);
    big += u > (1ull << 63);
  }
  assert_true(big > 0); /* the upper half of the range is reached */
  tu_out_free(&o);
}

/* The shape operand is checked against the result when it runs. */
static void test_rng_shape_mismatch(void **state) {
  const int64_t s = 3;
  tu_in in = {TU_SHAPE(XRT_S64, 1), &s};
  tu_out o;
  xrt_status st = tu_run(C(state),
      "func.func @main(%s: tensor<1xi64>) -> tensor<4xf32> {\n"
      "  %a = stablehlo.constant dense<0.0> : tensor<f32>\n"
      "  %b = stablehlo.constant dense<1.0> : tensor<f32>\n"
      "  %0 = stablehlo.rng %a, %b, %s, distribution = UNIFORM : (tensor<f32>, tensor<f32>, tensor<1xi64>) -> tensor<4xf32>\n"
      "  func.return %0 : tensor<4xf32>\n}\n",
      1, &in, &o);
  assert_int_equal(st, XRT_INVALID_ARGUMENT);
  TU_ASSERT_CONTAINS(tu_msg, "the shape operand's dimension 0 is 3, the result's 4");
}

TU_MAIN(tu_setup_client, tu_teardown_client,
        cmocka_unit_test(test_threefry_known_answers),
        cmocka_unit_test(test_rbg_shapes_and_carry),
        cmocka_unit_test(test_rng_uniform_ranges),
        cmocka_unit_test(test_rng_narrow_and_wide),
        cmocka_unit_test(test_rng_shape_mismatch))
