/* test_chlo_trig.c - CHLO's trigonometric and hyperbolic ops (acos acosh
 * asin asinh atan atanh cosh sinh tan) on the simulator: within 2 ulp (f32)
 * and 1 ulp (f16, bf16) of libm's double result at the same input, for
 * every f16 and bf16 value and a sweep of f32 values; f64 is libm's result;
 * complex64/complex128 against the defining logarithm and exponential
 * formulas computed here; bad element types. */
#include "chlo_util.h"

#include <complex.h>

static void test_acos(void **state) { sp_libm_op(state, "chlo.acos", acos, -1, 1); }
static void test_acosh(void **state) {
  sp_libm_op(state, "chlo.acosh", acosh, 1, 100);
}
static void test_asin(void **state) { sp_libm_op(state, "chlo.asin", asin, -1, 1); }
static void test_asinh(void **state) {
  sp_libm_op(state, "chlo.asinh", asinh, -20, 20);
}
static void test_atan(void **state) {
  sp_libm_op(state, "chlo.atan", atan, -20, 20);
}
static void test_atanh(void **state) {
  sp_libm_op(state, "chlo.atanh", atanh, -1, 1);
}
static void test_cosh(void **state) {
  sp_libm_op(state, "chlo.cosh", cosh, -90, 90);
}
static void test_sinh(void **state) {
  sp_libm_op(state, "chlo.sinh", sinh, -90, 90);
}
static void test_tan(void **state) { sp_libm_op(state, "chlo.tan", tan, -7, 7); }

/* Edges: out of the domain NaN, the poles infinite, signed zeros kept. */
static void test_trig_edges(void **state) {
  const double x[4] = {1.5, -1.0, -0.0, INFINITY};
  double r[4];
  sp_run(C(state), "chlo.acos", XRT_F64, x, NULL, 4, r);
  assert_true(isnan(r[0]) && r[1] == acos(-1.0) && isnan(r[3]));
  sp_run(C(state), "chlo.atanh", XRT_F64, x, NULL, 4, r);
  assert_true(isnan(r[0]) && isinf(r[1]) && r[1] < 0 && signbit(r[2]));
  sp_run(C(state), "chlo.acosh", XRT_F64, x, NULL, 4, r);
  assert_true(isnan(r[1]) && isnan(r[2]) && r[3] == INFINITY);
  sp_run(C(state), "chlo.sinh", XRT_F64, x, NULL, 4, r);
  assert_true(signbit(r[2]) && r[2] == 0 && r[3] == INFINITY);
  /* f32 overflow rounds to infinity */
  const float xf[2] = {100.0f, -100.0f};
  float rf[2];
  sp_run(C(state), "chlo.cosh", XRT_F32, xf, NULL, 2, rf);
  assert_true(rf[0] == INFINITY && rf[1] == INFINITY);
  sp_run(C(state), "chlo.sinh", XRT_F32, xf, NULL, 2, rf);
  assert_true(rf[0] == INFINITY && rf[1] == -INFINITY);
}

/* ---- complex: the formulas that define the principal values ---- */

typedef double _Complex cd;

static cd ct_cd(double re, double im) {
  union {
    cd z;
    double d[2];
  } u;
  u.d[0] = re;
  u.d[1] = im;
  return u.z;
}
static const cd ct_i = 0x1p0 * _Complex_I;

static cd ct_asin(cd z) { return -ct_i * clog(ct_i * z + csqrt(1 - z * z)); }
static cd ct_acos(cd z) { return 1.5707963267948966 - ct_asin(z); }
static cd ct_asinh(cd z) { return clog(z + csqrt(z * z + 1)); }
static cd ct_acosh(cd z) { return clog(z + csqrt(z + 1) * csqrt(z - 1)); }
static cd ct_atan(cd z) {
  return ct_i / 2 * (clog(1 - ct_i * z) - clog(1 + ct_i * z));
}
static cd ct_atanh(cd z) { return (clog(1 + z) - clog(1 - z)) / 2; }
static cd ct_cosh(cd z) { return (cexp(z) + cexp(-z)) / 2; }
static cd ct_sinh(cd z) { return (cexp(z) - cexp(-z)) / 2; }

static void ct_check(void **state, const char *op, cd (*ref)(cd)) {
  enum { N = 8 };
  const double pts[N][2] = {{0.5, 0.3},  {-1.2, 0.7}, {2.0, -1.5},
                            {0.1, -0.2}, {-0.4, -2.5}, {3.0, 0.25},
                            {-2.0, 1.0}, {0.75, 4.0}};
  double in64[2 * N], out64[2 * N];
  float in32[2 * N], out32[2 * N];
  for (int i = 0; i < N; i++) {
    in64[2 * i] = pts[i][0], in64[2 * i + 1] = pts[i][1];
    in32[2 * i] = (float)pts[i][0], in32[2 * i + 1] = (float)pts[i][1];
  }
  sp_run(C(state), op, XRT_C128, in64, NULL, N, out64);
  sp_run(C(state), op, XRT_C64, in32, NULL, N, out32);
  double w128 = 0, w64 = 0;
  for (int i = 0; i < N; i++) {
    cd want = ref(ct_cd(pts[i][0], pts[i][1]));
    double mag = cabs(want);
    double e1 = cabs(ct_cd(out64[2 * i], out64[2 * i + 1]) - want) / mag;
    double e2 = cabs(ct_cd(out32[2 * i], out32[2 * i + 1]) - want) / mag;
    if (!(e1 < 1e-13) || !(e2 < 2e-7))
      fail_msg("%s(%g%+gi): got %.17g%+.17gi / %.9g%+.9gi, want "
               "%.17g%+.17gi", op, pts[i][0], pts[i][1], out64[2 * i],
               out64[2 * i + 1], (double)out32[2 * i],
               (double)out32[2 * i + 1], creal(want), cimag(want));
    if (e1 > w128) w128 = e1;
    if (e2 > w64) w64 = e2;
  }
  print_message("%-12s complex max relative error: c128 %.3g, c64 %.3g\n", op,
                w128, w64);
}

static void test_trig_complex(void **state) {
  ct_check(state, "chlo.acos", ct_acos);
  ct_check(state, "chlo.asin", ct_asin);
  ct_check(state, "chlo.acosh", ct_acosh);
  ct_check(state, "chlo.asinh", ct_asinh);
  ct_check(state, "chlo.atan", ct_atan);
  ct_check(state, "chlo.atanh", ct_atanh);
  ct_check(state, "chlo.cosh", ct_cosh);
  ct_check(state, "chlo.sinh", ct_sinh);
  ct_check(state, "chlo.tan", ctan);
}

/* Also in the generic form, on small floats (in double, rounded once). */
static void test_trig_generic_f8(void **state) {
  const char *prog =
      "func.func @main(%a: tensor<3xf8E5M2>) -> tensor<3xf8E5M2> {\n"
      "  %r = \"chlo.sinh\"(%a) : (tensor<3xf8E5M2>) -> tensor<3xf8E5M2>\n"
      "  func.return %r : tensor<3xf8E5M2>\n}\n";
  /* f8E5M2: 0x3C = 1, 0x00 = 0, 0xC0 = -2; sinh(1) = 1.175 -> 1.25 (0x3D),
   * sinh(-2) = -3.627 -> -3.5 (0xC3) */
  const uint8_t x[3] = {0x3C, 0x00, 0xC0};
  tu_in in[1] = {{TU_SHAPE(XRT_F8E5M2, 3), x}};
  tu_out o;
  TU_RUN_OK(C(state), prog, 1, in, &o);
  TU_ASSERT_OUT(&o, 0, uint8_t, 0x3D, 0x00, 0xC3);
  tu_out_free(&o);
}

static void test_trig_bad_types(void **state) {
  (void)state;
  tu_parse_fails_at(
      "func.func @main(%a: tensor<4xi32>) -> tensor<4xi32> {\n"
      "  %r = chlo.asin %a : tensor<4xi32> -> tensor<4xi32>\n"
      "  func.return %r : tensor<4xi32>\n}\n",
      "<input>:2:8:", "chlo.asin: element type i32 is not allowed");
  tu_parse_fails_at(
      "func.func @main(%a: tensor<4xf32>) -> tensor<4xf16> {\n"
      "  %r = chlo.cosh %a : tensor<4xf32> -> tensor<4xf16>\n"
      "  func.return %r : tensor<4xf16>\n}\n",
      "<input>:2:8:", "result type differs from operand type");
  tu_parse_fails_at(
      "func.func @main(%a: tensor<4xf32>) -> tensor<4xf32> {\n"
      "  %r = chlo.atanh %a, %a : tensor<4xf32>, tensor<4xf32> -> "
      "tensor<4xf32>\n"
      "  func.return %r : tensor<4xf32>\n}\n",
      "<input>:2:8:", "expects 1 operand(s), got 2");
  /* bessel_i1e has no complex definition to follow */
  tu_parse_fails_at(
      "func.func @main(%a: tensor<2xcomplex<f32>>) -> tensor<2xcomplex<f32>> {\n"
      "  %r = chlo.bessel_i1e %a : tensor<2xcomplex<f32>> -> "
      "tensor<2xcomplex<f32>>\n"
      "  func.return %r : tensor<2xcomplex<f32>>\n}\n",
      "<input>:2:8:", "not allowed");
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_acos),        cmocka_unit_test(test_acosh),
      cmocka_unit_test(test_asin),        cmocka_unit_test(test_asinh),
      cmocka_unit_test(test_atan),        cmocka_unit_test(test_atanh),
      cmocka_unit_test(test_cosh),        cmocka_unit_test(test_sinh),
      cmocka_unit_test(test_tan),         cmocka_unit_test(test_trig_edges),
      cmocka_unit_test(test_trig_complex),
      cmocka_unit_test(test_trig_generic_f8),
      cmocka_unit_test(test_trig_bad_types),
  };
  return cmocka_run_group_tests(tests, tu_setup_client, tu_teardown_client);
}
