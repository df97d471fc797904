/*
 * test_hostfn_edges.c - the built-in check.* host functions on what
 * test_checks.c leaves out: expect_close's ULP distance in every float
 * family (f8, f6 and f4 minifloats including the unsigned E8M0, bf16, f64,
 * complex numbers whose imaginary parts differ), NaN and infinity in ULP
 * terms, failure messages of each element kind (pred, unsigned, complex)
 * and multi-dimensional indices, custom calls with the wrong number or
 * types of operands, xrt_host_call_fail / registration arguments,
 * expect_almost_eq on NaN, infinities, zeros and signs, and host
 * functions named like the check targets with numeric attributes.
 *
 * The ULP distances below are worked out by hand from each format's bit
 * layout (sign, exponent, mantissa): within one sign the distance is the
 * difference of the magnitude bits, across signs their sum; NaN against
 * NaN is 0 and a NaN or infinity against anything else is the maximum,
 * 18446744073709551615 (the reference interpreter's definition).
 */
#include "test_util.h"

#define C(state) ((xrt_client *)*(state))

static char prog[2048];

/* Two constants of type t and one custom call of target on them. */
static xrt_status call2(xrt_client *c, const char *t, const char *a,
                        const char *b, const char *target,
                        const char *attrs) {
  snprintf(prog, sizeof prog,
           "func.func @main() {\n"
           "  %%a = stablehlo.constant dense<%s> : %s\n"
           "  %%b = stablehlo.constant dense<%s> : %s\n"
           "  stablehlo.custom_call @%s(%%a, %%b) {has_side_effect = true%s%s}"
           " : (%s, %s) -> ()\n"
           "  func.return\n}\n",
           a, t, b, t, target, attrs && *attrs ? ", " : "",
           attrs ? attrs : "", t, t);
  return tu_run0(c, prog);
}

typedef struct close_case {
  const char *type, *a, *b;
  int max_ulp;    /* the check's max_ulp_difference */
  bool pass;
  const char *msg; /* a fragment of the failure message */
} close_case;

static const close_case close_cases[] = {
    /* f8E4M3FN: 1.0 = 0x38, 1.375 = 0x3B: 3 ULP */
    {"tensor<f8E4M3FN>", "0x38", "0x3B", 3, true, NULL},
    {"tensor<f8E4M3FN>", "0x38", "0x3B", 2, false,
     "(3 ULP apart, allowed 0..2)"},
    /* the smallest subnormals of both signs: 1 + 1 */
    {"tensor<f8E4M3FN>", "0x01", "0x81", 2, true, NULL},
    {"tensor<f8E4M3FN>", "0x01", "0x81", 1, false, "(2 ULP apart"},
    /* two NaNs (0x7F, 0xFF) are 0 apart; NaN and 1.0 are not close */
    {"tensor<f8E4M3FN>", "0x7F", "0xFF", 0, true, NULL},
    {"tensor<f8E4M3FN>", "0x7F", "0x38", 100, false,
     "(18446744073709551615 ULP apart, allowed 0..100)"},
    /* f8E5M2: 1.0 = 0x3C, 1.5 = 0x3E; infinity 0x7C vs max 0x7B */
    {"tensor<f8E5M2>", "0x3C", "0x3E", 2, true, NULL},
    {"tensor<f8E5M2>", "0x3C", "0x3E", 1, false, "(2 ULP apart"},
    {"tensor<f8E5M2>", "0x7C", "0x7B", 5, false, "(18446744073709551615 ULP"},
    /* f8E8M0FNU, exponent only and unsigned: 1.0 = 0x7F, 4.0 = 0x81 */
    {"tensor<f8E8M0FNU>", "0x7F", "0x81", 2, true, NULL},
    {"tensor<f8E8M0FNU>", "0x7F", "0x81", 1, false, "(2 ULP apart"},
    /* f6E2M3FN: 1.0 = 0b001000, 1.375 = 0b001011 */
    {"tensor<f6E2M3FN>", "0x08", "0x0B", 3, true, NULL},
    {"tensor<f6E2M3FN>", "0x08", "0x0B", 2, false, "(3 ULP apart"},
    /* f4E2M1FN: 1.0 = 0x2, 6.0 = 0x7; -0.5 = 0x9 and 0.5 = 0x1 */
    {"tensor<f4E2M1FN>", "0x2", "0x7", 5, true, NULL},
    {"tensor<f4E2M1FN>", "0x2", "0x7", 4, false, "(5 ULP apart"},
    {"tensor<f4E2M1FN>", "0x9", "0x1", 2, true, NULL},
    /* bf16: 1.0 = 0x3F80 */
    {"tensor<bf16>", "0x3F80", "0x3F82", 2, true, NULL},
    {"tensor<bf16>", "0x3F80", "0x3F82", 1, false, "(2 ULP apart"},
    /* f64 */
    {"tensor<f64>", "0x3FF0000000000000", "0x3FF0000000000005", 5, true,
     NULL},
    {"tensor<f64>", "0x3FF0000000000000", "0x3FF0000000000005", 4, false,
     "(5 ULP apart"},
    {"tensor<f64>", "0x7FF8000000000000", "0x7FF8000000000001", 0, true, NULL},
    /* f16 infinity against the largest finite value, NaN against NaN */
    {"tensor<f16>", "0x7C00", "0x7BFF", 3, false, "(18446744073709551615"},
    {"tensor<f16>", "0x7E00", "0xFE01", 0, true, NULL},
    /* complex<f32>: the imaginary parts 2.0 and 2 + 2^-21 are 2 ULP apart
     * (the float ULP at 2 is 2^-22); the real parts 1 and 1 + 2^-23 one */
    {"tensor<complex<f32>>", "(1.0, 2.0)", "(1.0, 2.000000476837158203125)",
     2, true, NULL},
    {"tensor<complex<f32>>", "(1.0, 2.0)", "(1.0, 2.000000476837158203125)",
     1, false, "(2 ULP apart, allowed 0..1)"},
    {"tensor<complex<f32>>", "(1.0, 2.0)", "(1.00000011920928955078125, 2.0)",
     1, true, NULL},
    {"tensor<complex<f32>>", "(1.0, 2.0)",
     "(1.0000002384185791015625, 2.000000238418579101562)", 1, false,
     "(2 ULP apart"},
    {"tensor<complex<f64>>", "(1.0, -3.0)", "(1.0, -3.0)", 0, true, NULL},
};

static void test_close_every_family(void **state) {
  for (size_t i = 0; i < TU_COUNT(close_cases); i++) {
    const close_case *k = &close_cases[i];
    char attrs[64];
    snprintf(attrs, sizeof attrs, "max_ulp_difference = %d", k->max_ulp);
    xrt_status st = call2(C(state), k->type, k->a, k->b, "check.expect_close",
                          attrs);
    if (k->pass && st != XRT_OK)
      fail_msg("case %zu should pass: %s: %s", i, xrt_strerror(st), tu_msg);
    if (!k->pass) {
      if (st != XRT_CHECK_FAILED)
        fail_msg("case %zu should fail, got %s: %s", i, xrt_strerror(st),
                 tu_msg);
      TU_ASSERT_CONTAINS(tu_msg, "check.expect_close failed at element []");
      TU_ASSERT_CONTAINS(tu_msg, k->msg);
    }
  }
}

/* The values in failure messages: bools, unsigned integers, complex
 * numbers, and the index of the first element that differs. */
static void test_failure_messages(void **state) {
  xrt_status st = call2(C(state), "tensor<2x3xi1>",
                        "[[true, false, true], [false, true, true]]",
                        "[[true, false, true], [false, false, true]]",
                        "check.expect_eq", NULL);
  assert_int_equal(st, XRT_CHECK_FAILED);
  TU_ASSERT_CONTAINS(tu_msg, "check.expect_eq failed at element [1, 1]: "
                             "actual true, expected false");
  st = call2(C(state), "tensor<2x2xui16>", "[[1, 2], [3, 65535]]",
             "[[1, 2], [3, 65534]]", "check.expect_eq", NULL);
  assert_int_equal(st, XRT_CHECK_FAILED);
  TU_ASSERT_CONTAINS(tu_msg, "element [1, 1]: actual 65535, expected 65534");
  st = call2(C(state), "tensor<2xcomplex<f64>>", "[(1.0, 2.5), (3.0, 4.0)]",
             "[(1.0, 2.5), (3.0, -4.0)]", "check.expect_eq", NULL);
  assert_int_equal(st, XRT_CHECK_FAILED);
  TU_ASSERT_CONTAINS(tu_msg, "element [1]: actual (3, 4), expected (3, -4)");
  /* expect_almost_eq names its tolerance */
  st = call2(C(state), "tensor<1x1x2xf64>", "[[[1.0, 2.0]]]",
             "[[[1.0, 2.5]]]", "check.expect_almost_eq", "tolerance = 0.25");
  assert_int_equal(st, XRT_CHECK_FAILED);
  TU_ASSERT_CONTAINS(tu_msg, "element [0, 0, 1]: actual 2, expected 2.5 "
                             "(tolerance 0.25)");
  /* the legacy check.eq: a tolerance of 1e-4 for floats, and nothing
   * appended to its message */
  assert_int_equal(call2(C(state), "tensor<f32>", "1.0", "1.00005", "check.eq",
                         NULL), XRT_OK);
  st = call2(C(state), "tensor<f32>", "1.0", "1.001", "check.eq", NULL);
  assert_int_equal(st, XRT_CHECK_FAILED);
  TU_ASSERT_CONTAINS(tu_msg, "check.eq failed at element []: actual 1, "
                             "expected 1.00100004673004");
  assert_null(strstr(tu_msg, "tolerance"));
  /* and exact equality for integers */
  st = call2(C(state), "tensor<i8>", "-3", "-4", "check.eq", NULL);
  assert_int_equal(st, XRT_CHECK_FAILED);
  TU_ASSERT_CONTAINS(tu_msg, "actual -3, expected -4");
  /* expect_almost_eq: infinity against a large finite value */
  st = call2(C(state), "tensor<f64>", "0x7FF0000000000000", "1.0e300",
             "check.expect_almost_eq", "tolerance = 1.0e308");
  assert_int_equal(st, XRT_CHECK_FAILED);
  TU_ASSERT_CONTAINS(tu_msg, "actual inf, expected 1.0000000000000001e+300");
}


/* expect_almost_eq on special values, each pair judged by the reference
 * interpreter's rule (equal; else both NaN; else no infinity or zero
 * against another nonzero value, the same sign, |a - b| <= tolerance). */
static void test_almost_special_pairs(void **state) {
  static const struct {
    const char *a, *b;
    bool pass;
  } pairs[] = {
      {"1.0", "0x7FF8000000000000", false},   /* a number and NaN */
      {"0x7FF8000000000000", "1.0", false},
      {"0.0", "0x7FF0000000000000", false},   /* zero and infinity */
      {"0x7FF0000000000000", "5.0", false},   /* infinity and a number */
      {"5.0", "0xFFF0000000000000", false},
      {"0.0", "0.0005", true},                /* zero and a small value */
      {"0.0005", "0.0", true},
      {"-0.0005", "0.0", false},              /* signs differ */
      {"2.0", "2.0005", true},
      {"2.0", "2.002", false},
  };
  for (size_t i = 0; i < TU_COUNT(pairs); i++) {
    xrt_status st = call2(C(state), "tensor<f64>", pairs[i].a, pairs[i].b,
                          "check.expect_almost_eq", "tolerance = 0.001");
    if (st != (pairs[i].pass ? XRT_OK : XRT_CHECK_FAILED))
      fail_msg("pair %zu (%s, %s): %s: %s", i, pairs[i].a, pairs[i].b,
               xrt_strerror(st), tu_msg);
  }
  /* complex<f64> ULPs, and complex equality differing in the real part */
  assert_int_equal(call2(C(state), "tensor<complex<f64>>", "(1.0, 2.0)",
                         "(1.0, 2.0000000000000004)", "check.expect_close",
                         "max_ulp_difference = 1"), XRT_OK);
  assert_int_equal(call2(C(state), "tensor<complex<f64>>", "(1.0, 2.0)",
                         "(1.0, 2.0000000000000009)", "check.expect_close",
                         "max_ulp_difference = 1"), XRT_CHECK_FAILED);
  TU_ASSERT_CONTAINS(tu_msg, "(2 ULP apart, allowed 0..1)");
  assert_int_equal(call2(C(state), "tensor<complex<f32>>", "(1.0, 2.0)",
                         "(1.5, 2.0)", "check.expect_eq", NULL),
                   XRT_CHECK_FAILED);
  TU_ASSERT_CONTAINS(tu_msg, "actual (1, 2), expected (1.5, 2)");
  /* a number against NaN, either way round, in ULPs */
  assert_int_equal(call2(C(state), "tensor<f32>", "1.0", "0x7FC00000",
                         "check.expect_close", "max_ulp_difference = 9"),
                   XRT_CHECK_FAILED);
  TU_ASSERT_CONTAINS(tu_msg, "(18446744073709551615 ULP apart");
  /* b below a: the distance is still positive */
  assert_int_equal(call2(C(state), "tensor<f32>", "0x3F800003", "1.0",
                         "check.expect_close", "max_ulp_difference = 3"),
                   XRT_OK);
}

/* Host functions whose names are as long as the check targets with
 * numeric attributes (22, 18 and 26 bytes) are not mistaken for them. */
static int calls;

static xrt_status count_call(void *user, xrt_host_call *call) {
  (void)user, (void)call;
  calls++;
  return XRT_OK;
}

static void test_lookalike_targets(void **state) {
  (void)state;
  static const char *names[] = {"check.expect_almost_ex", /* 22 */
                                "check.expect_closX",     /* 18 */
                                "check.expect_serialized_eX"}; /* 26 */
  xrt_client *c = tu_client(1, 0, 0);
  for (size_t i = 0; i < TU_COUNT(names); i++) {
    assert_int_equal(xrt_client_register_host_function(c, names[i],
                                                       count_call, NULL),
                     XRT_OK);
    char p[512];
    snprintf(p, sizeof p,
             "func.func @main() {\n"
             "  %%a = stablehlo.constant dense<1.0> : tensor<f32>\n"
             "  stablehlo.custom_call @%s(%%a) {has_side_effect = true, "
             "tolerance = \"not a number\", max_ulp_difference = -1, "
             "iter = -1} : (tensor<f32>) -> ()\n"
             "  func.return\n}\n", names[i]);
    calls = 0;
    if (tu_run0(c, p) != XRT_OK) fail_msg("%s: %s", names[i], tu_msg);
    assert_int_equal(calls, 1);
  }
  xrt_client_release(c);
}

/* A custom call of a check with one operand, or of two types. */
static void test_operands(void **state) {
  const char *one = "func.func @main() {\n"
                    "  %a = stablehlo.constant dense<1.0> : tensor<f32>\n"
                    "  stablehlo.custom_call @check.expect_eq(%a) "
                    "{has_side_effect = true} : (tensor<f32>) -> ()\n"
                    "  func.return\n}\n";
  assert_int_equal(tu_run0(C(state), one), XRT_INVALID_ARGUMENT);
  TU_ASSERT_CONTAINS(tu_msg, ":3:3: check.expect_eq takes 2 operands");
  const char *two = "func.func @main() {\n"
                    "  %a = stablehlo.constant dense<1.0> : tensor<f32>\n"
                    "  %b = stablehlo.constant dense<[1.0]> : tensor<1xf32>\n"
                    "  stablehlo.custom_call @check.expect_almost_eq(%a, %b) "
                    "{has_side_effect = true} : (tensor<f32>, tensor<1xf32>)"
                    " -> ()\n"
                    "  func.return\n}\n";
  assert_int_equal(tu_run0(C(state), two), XRT_INVALID_ARGUMENT);
  TU_ASSERT_CONTAINS(tu_msg, ":4:3: check.expect_almost_eq: operand types "
                             "differ");
}

/* A host function of the user's: its failure code and message reach the
 * caller; XRT_OK given to xrt_host_call_fail is turned into INTERNAL. */
static xrt_status fail_with(void *user, xrt_host_call *call) {
  return xrt_host_call_fail(call, (xrt_status)(intptr_t)user, "mine: %d", 7);
}

static void test_user_host_function(void **state) {
  xrt_client *c = tu_client(1, 0, 0);
  (void)state;
  assert_int_equal(xrt_client_register_host_function(c, "", fail_with, NULL),
                   XRT_INVALID_ARGUMENT);
  TU_ASSERT_CONTAINS(xrt_last_error(), "target is NULL or empty");
  assert_int_equal(xrt_client_register_host_function(c, NULL, fail_with, NULL),
                   XRT_INVALID_ARGUMENT);
  assert_int_equal(xrt_client_register_host_function(c, "t", NULL, NULL),
                   XRT_INVALID_ARGUMENT);
  TU_ASSERT_CONTAINS(xrt_last_error(), "fn is NULL");
  assert_int_equal(xrt_client_register_host_function(NULL, "t", fail_with,
                                                     NULL),
                   XRT_INVALID_ARGUMENT);
  TU_ASSERT_CONTAINS(xrt_last_error(), "invalid client");
  /* registered twice: the second replaces the first */
  assert_int_equal(xrt_client_register_host_function(
                       c, "my.fail", fail_with,
                       (void *)(intptr_t)XRT_OUT_OF_RANGE), XRT_OK);
  assert_int_equal(xrt_client_register_host_function(
                       c, "my.fail", fail_with, (void *)(intptr_t)XRT_OK),
                   XRT_OK);
  const char *p = "func.func @main() {\n"
                  "  %a = stablehlo.constant dense<1.0> : tensor<f32>\n"
                  "  stablehlo.custom_call @my.fail(%a) "
                  "{has_side_effect = true} : (tensor<f32>) -> ()\n"
                  "  func.return\n}\n";
  assert_int_equal(tu_run0(c, p), XRT_INTERNAL);
  TU_ASSERT_CONTAINS(tu_msg, "mine: 7");
  xrt_client_release(c);
  /* no call, or one without room for a message: only the code */
  assert_int_equal(xrt_host_call_fail(NULL, XRT_ABORTED, "x"), XRT_ABORTED);
  assert_int_equal(xrt_host_call_fail(NULL, XRT_OK, "x"), XRT_INTERNAL);
  xrt_host_call call;
  memset(&call, 0, sizeof call);
  char buf[8] = "keep";
  call.error = buf;
  call.error_cap = 0;
  assert_int_equal(xrt_host_call_fail(&call, XRT_UNKNOWN, "changed"),
                   XRT_UNKNOWN);
  assert_string_equal(buf, "keep");
  call.error_cap = sizeof buf;
  assert_int_equal(xrt_host_call_fail(&call, XRT_UNKNOWN, "changed %d", 12),
                   XRT_UNKNOWN);
  assert_string_equal(buf, "changed"); /* cut to 7 bytes */
}

TU_MAIN(tu_setup_client, tu_teardown_client,
        cmocka_unit_test(test_close_every_family),
        cmocka_unit_test(test_failure_messages),
        cmocka_unit_test(test_operands),
        cmocka_unit_test(test_almost_special_pairs),
        cmocka_unit_test(test_lookalike_targets),
        cmocka_unit_test(test_user_host_function))
