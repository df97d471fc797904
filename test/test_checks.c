/* test_checks.c - the check.* ops (dialect form and custom_call form) as the
 * StableHLO reference interpreter defines them (stablehlo/tests/CheckOps.cpp
 * and stablehlo/reference/Element.cpp):
 *  - expect_eq compares with IEEE equality (APFloat ==): +0 == -0 passes,
 *    NaN == NaN fails;
 *  - expect_almost_eq: equal, or both NaN, or same sign and
 *    |a - b| <= tolerance (default 1e-4);
 *  - expect_close: ULP distance within [min_ulp_difference, max_ulp_difference]
 *    in the operand's own format. */
#include "test_util.h"

#define C(state) ((xrt_client *)*(state))

static char prog[2048];

/* A no-argument function: two constants %a, %b of type T and one check. */
static xrt_status check2(xrt_client *c, const char *t, const char *a,
                         const char *b, const char *check) {
  snprintf(prog, sizeof prog,
           "func.func @main() {\n"
           "  %%a = stablehlo.constant dense<%s> : %s\n"
           "  %%b = stablehlo.constant dense<%s> : %s\n"
           "  %s\n"
           "  func.return\n}\n",
           a, t, b, t, check);
  return tu_run0(c, prog);
}

#define PASS(expr)                                                          \
  do {                                                                      \
    xrt_status st_ = (expr);                                                \
    if (st_ != XRT_OK)                                                      \
      fail_msg("check should pass: %s: %s\n%s", xrt_strerror(st_), tu_msg, prog); \
  } while (0)

#define FAILS(expr)                                                         \
  do {                                                                      \
    xrt_status st_ = (expr);                                                \
    if (st_ != XRT_CHECK_FAILED)                                            \
      fail_msg("check should fail, got %s: %s\n%s", xrt_strerror(st_), tu_msg, prog); \
  } while (0)

static void test_eq(void **state) {
  const char *chk = "check.expect_eq %a, %b : tensor<3xi64>";
  PASS(check2(C(state), "tensor<3xi64>", "[-2, 0, 2]", "[-2, 0, 2]", chk));
  FAILS(check2(C(state), "tensor<3xi64>", "[-2, 0, 2]", "[-2, 1, 2]", chk));
  chk = "check.expect_eq %a, %b : tensor<2xi1>";
  PASS(check2(C(state), "tensor<2xi1>", "[true, false]", "[true, false]", chk));
  FAILS(check2(C(state), "tensor<2xi1>", "[true, false]", "[true, true]", chk));
  chk = "check.expect_eq %a, %b : tensor<ui8>";
  FAILS(check2(C(state), "tensor<ui8>", "255", "254", chk));
}

static void test_eq_const(void **state) {
  PASS(tu_run0(C(state),
               "func.func @main() {\n"
               "  %a = stablehlo.constant dense<[1.5, -2.0]> : tensor<2xf32>\n"
               "  check.expect_eq_const %a, dense<[1.5, -2.0]> : tensor<2xf32>\n"
               "  func.return\n}\n"));
  FAILS(tu_run0(C(state),
                "func.func @main() {\n"
                "  %a = stablehlo.constant dense<[1.5, -2.0]> : tensor<2xf32>\n"
                "  check.expect_eq_const %a, dense<[1.5, 2.0]> : tensor<2xf32>\n"
                "  func.return\n}\n"));
}

static void test_eq_zero_and_nan(void **state) {
  const char *chk = "check.expect_eq %a, %b : tensor<f32>";
  /* IEEE equality, as the reference interpreter: -0 == +0 ... */
  PASS(check2(C(state), "tensor<f32>", "0x80000000", "0.0", chk));
  /* ... and NaN != NaN, even with identical bits */
  FAILS(check2(C(state), "tensor<f32>", "0x7FC00000", "0x7FC00000", chk));
  chk = "check.expect_eq %a, %b : tensor<f64>";
  FAILS(check2(C(state), "tensor<f64>", "0x7FF8000000000000", "1.0", chk));
}

static void test_eq_complex(void **state) {
  const char *chk = "check.expect_eq %a, %b : tensor<complex<f32>>";
  PASS(check2(C(state), "tensor<complex<f32>>", "(1.5, -2.0)", "(1.5, -2.0)", chk));
  FAILS(check2(C(state), "tensor<complex<f32>>", "(1.5, -2.0)", "(1.5, 2.0)", chk));
}

static void test_almost_eq_default(void **state) {
  const char *chk = "check.expect_almost_eq %a, %b : tensor<f64>";
  PASS(check2(C(state), "tensor<f64>", "5.0", "5.00005", chk));
  PASS(check2(C(state), "tensor<f64>", "5.0", "5.0", chk));
  FAILS(check2(C(state), "tensor<f64>", "5.0", "5.001", chk));
  chk = "check.expect_almost_eq %a, %b : tensor<2xf32>";
  PASS(check2(C(state), "tensor<2xf32>", "[1.0, -3.0]", "[1.00005, -3.00005]", chk));
  FAILS(check2(C(state), "tensor<2xf32>", "[1.0, -3.0]", "[1.0, -3.001]", chk));
}

static void test_almost_eq_tolerance(void **state) {
  const char *chk = "check.expect_almost_eq %a, %b, tolerance = 0.1 : tensor<f64>";
  PASS(check2(C(state), "tensor<f64>", "5.0", "5.05", chk));
  FAILS(check2(C(state), "tensor<f64>", "5.0", "5.2", chk));
  PASS(tu_run0(C(state),
               "func.func @main() {\n"
               "  %a = stablehlo.constant dense<5.0> : tensor<f64>\n"
               "  check.expect_almost_eq_const %a, dense<5.05> : tensor<f64> {tolerance = 0.1 : f64}\n"
               "  func.return\n}\n"));
  FAILS(tu_run0(C(state),
                "func.func @main() {\n"
                "  %a = stablehlo.constant dense<5.0> : tensor<f64>\n"
                "  check.expect_almost_eq_const %a, dense<5.2> : tensor<f64> {tolerance = 0.1 : f64}\n"
                "  func.return\n}\n"));
  FAILS(tu_run0(C(state),
                "func.func @main() {\n"
                "  %a = stablehlo.constant dense<5.0> : tensor<f64>\n"
                "  check.expect_almost_eq_const %a, dense<5.001> : tensor<f64>\n"
                "  func.return\n}\n"));
}

static void test_almost_eq_special(void **state) {
  const char *chk = "check.expect_almost_eq %a, %b : tensor<f32>";
  PASS(check2(C(state), "tensor<f32>", "0x7FC00000", "0xFFC00001", chk)); /* NaNs */
  PASS(check2(C(state), "tensor<f32>", "0x7F800000", "0x7F800000", chk)); /* inf */
  FAILS(check2(C(state), "tensor<f32>", "0x7F800000", "0xFF800000", chk));
  FAILS(check2(C(state), "tensor<f32>", "0x7FC00000", "1.0", chk));
  PASS(check2(C(state), "tensor<f32>", "0.0", "0x80000000", chk)); /* +0, -0 */
  /* within 1e-4 but of opposite signs: the interpreter rejects this */
  FAILS(check2(C(state), "tensor<f32>", "1.0e-5", "-1.0e-5", chk));
  chk = "check.expect_almost_eq %a, %b : tensor<complex<f32>>";
  PASS(check2(C(state), "tensor<complex<f32>>", "(1.0, 2.0)", "(1.00001, 2.0)", chk));
  FAILS(check2(C(state), "tensor<complex<f32>>", "(1.0, 2.0)", "(1.0, 2.01)", chk));
}

static void test_custom_call_checks(void **state) {
  const char *chk =
      "stablehlo.custom_call @check.expect_almost_eq(%a, %b) {has_side_effect = "
      "true} : (tensor<2xf32>, tensor<2xf32>) -> ()";
  /* absolute tolerance 1e-3 */
  PASS(check2(C(state), "tensor<2xf32>", "[1.0, 2.0]", "[1.0005, 2.0]", chk));
  FAILS(check2(C(state), "tensor<2xf32>", "[1.0, 2.0]", "[1.002, 2.0]", chk));
  chk = "stablehlo.custom_call @check.expect_eq(%a, %b) {has_side_effect = "
        "true} : (tensor<2xi32>, tensor<2xi32>) -> ()";
  PASS(check2(C(state), "tensor<2xi32>", "[7, 8]", "[7, 8]", chk));
  FAILS(check2(C(state), "tensor<2xi32>", "[7, 8]", "[7, 9]", chk));
  chk = "stablehlo.custom_call @check.expect_close(%a, %b) {has_side_effect = "
        "true} : (tensor<2xf32>, tensor<2xf32>) -> ()";
  PASS(check2(C(state), "tensor<2xf32>", "[1.0, 2.0]", "[1.0, 2.0]", chk));
  FAILS(check2(C(state), "tensor<2xf32>", "[1.0, 2.0]", "[1.5, 2.0]", chk));
}

static void test_close_f16(void **state) {
  /* f16 ulp at 5.0 is 2^-8: 5.004 rounds to 5 + 1/256 (1 ulp), 5.0390625 is
   * 10 ulps away */
  const char *t = "tensor<f16>";
  PASS(check2(C(state), t, "5.0", "5.004",
              "check.expect_close %a, %b, max_ulp_difference = 3 : tensor<f16>, tensor<f16>"));
  PASS(check2(C(state), t, "5.0", "5.004",
              "check.expect_close %a, %b, max_ulp_difference = 1 : tensor<f16>, tensor<f16>"));
  FAILS(check2(C(state), t, "5.0", "5.004",
               "check.expect_close %a, %b, max_ulp_difference = 0 : tensor<f16>, tensor<f16>"));
  FAILS(check2(C(state), t, "5.0", "5.0390625",
               "check.expect_close %a, %b, max_ulp_difference = 3 : tensor<f16>, tensor<f16>"));
  FAILS(check2(C(state), t, "5.0", "5.004",
               "check.expect_close %a, %b, max_ulp_difference = 3, min_ulp_difference = 2 : tensor<f16>, tensor<f16>"));
  PASS(check2(C(state), t, "0x7E00", "0x7E00",
              "check.expect_close %a, %b, max_ulp_difference = 0 : tensor<f16>, tensor<f16>"));
}

static void test_close_f32(void **state) {
  const char *t = "tensor<2xf32>";
  /* 0x3F800001 is the float right after 1.0 */
  PASS(check2(C(state), t, "[1.0, -2.0]", "[0x3F800001, -2.0]",
              "check.expect_close %a, %b, max_ulp_difference = 1 : tensor<2xf32>, tensor<2xf32>"));
  FAILS(check2(C(state), t, "[1.0, -2.0]", "[0x3F800001, -2.0]",
               "check.expect_close %a, %b, max_ulp_difference = 0 : tensor<2xf32>, tensor<2xf32>"));
  PASS(check2(C(state), t, "[1.0, -2.0]", "[1.0, 0xC0000003]",
              "check.expect_close %a, %b, max_ulp_difference = 3 : tensor<2xf32>, tensor<2xf32>"));
}

static void test_failure_message(void **state) {
  xrt_compile_options o;
  xrt_compile_options_init(&o);
  o.filename = "t.mlir";
  const char *p = "func.func @main() {\n"
                  "  %a = stablehlo.constant dense<[1.5, 7.0]> : tensor<2xf32>\n"
                  "  check.expect_eq_const %a, dense<[1.5, 7.0]> : tensor<2xf32>\n"
                  "  check.expect_eq_const %a, dense<[2.5, 7.0]> : tensor<2xf32>\n"
                  "  func.return\n}\n";
  xrt_executable *e = NULL;
  assert_int_equal(xrt_compile(C(state), p, strlen(p), &o, &e), XRT_OK);
  assert_int_equal(xrt_executable_num_outputs(e), 0);
  assert_int_equal(xrt_execute(e, xrt_client_device(C(state), 0), NULL, 0, NULL,
                               0, NULL),
                   XRT_CHECK_FAILED);
  tu_save_error();
  TU_ASSERT_CONTAINS(tu_msg, "t.mlir:4:3"); /* the second check failed */
  TU_ASSERT_CONTAINS(tu_msg, "1.5");
  TU_ASSERT_CONTAINS(tu_msg, "2.5");
  assert_int_equal(xrt_last_status(), XRT_CHECK_FAILED);
  xrt_executable_release(e);
}

static void test_passing_checks_run_again(void **state) {
  /* an executable whose checks pass can run many times */
  const char *p = "func.func @main() -> tensor<i32> {\n"
                  "  %a = stablehlo.constant dense<3> : tensor<i32>\n"
                  "  %b = stablehlo.add %a, %a : tensor<i32>\n"
                  "  check.expect_eq_const %b, dense<6> : tensor<i32>\n"
                  "  func.return %b : tensor<i32>\n}\n";
  xrt_executable *e = NULL;
  assert_int_equal(xrt_compile(C(state), p, strlen(p), NULL, &e), XRT_OK);
  for (int i = 0; i < 3; i++) {
    xrt_buffer *out[1] = {NULL};
    assert_int_equal(xrt_execute(e, xrt_client_device(C(state), 0), NULL, 0,
                                 out, 1, NULL), XRT_OK);
    int32_t v = 0;
    assert_int_equal(xrt_buffer_to_host(out[0], &v, sizeof v), XRT_OK);
    assert_int_equal(v, 6);
    xrt_buffer_release(out[0]);
  }
  xrt_executable_release(e);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_eq),
      cmocka_unit_test(test_eq_const),
      cmocka_unit_test(test_eq_zero_and_nan),
      cmocka_unit_test(test_eq_complex),
      cmocka_unit_test(test_almost_eq_default),
      cmocka_unit_test(test_almost_eq_tolerance),
      cmocka_unit_test(test_almost_eq_special),
      cmocka_unit_test(test_custom_call_checks),
      cmocka_unit_test(test_close_f16),
      cmocka_unit_test(test_close_f32),
      cmocka_unit_test(test_failure_message),
      cmocka_unit_test(test_passing_checks_run_again),
  };
  return cmocka_run_group_tests(tests, tu_setup_client, tu_teardown_client);
}
