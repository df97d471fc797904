/* test_check_attrs.c - the numeric attributes of the check ops are
 * validated when a program is parsed (fuzz_program found
 * `max_ulp_difference = -3` converted to uint64_t, undefined behaviour):
 *  - check.expect_almost_eq: tolerance, a finite number >= 0;
 *  - check.expect_close: min_ulp_difference and max_ulp_difference,
 *    integers in [0, INT64_MAX], min <= max;
 *  - check.expect_serialized_eq: iter, an integer in [0, INT64_MAX].
 * Every other value (negative, NaN, infinite, a float where an integer
 * goes, a string, a bool) is INVALID_ARGUMENT at the op's file:line:col,
 * naming the op, the attribute and its range, in every input form (the
 * check.* ops, generic "check.*"(...) and custom_call @check.*). */
#include "test_util.h"

#define C(state) ((xrt_client *)*(state))

#define INT64_MAX_S "9223372036854775807"

static char prog[2048];

/* a.mlir: two f32 constants %a, %b and the check on line 4, column 3. */
static const char *with_check(const char *check) {
  snprintf(prog, sizeof prog,
           "func.func @main() {\n"
           "  %%a = stablehlo.constant dense<1.0> : tensor<f32>\n"
           "  %%b = stablehlo.constant dense<1.0> : tensor<f32>\n"
           "  %s\n"
           "  func.return\n}\n",
           check);
  return prog;
}

/* The check on line 4 is refused with exactly "a.mlir:4:3: " + want. */
static void refused(const char *check, const char *want) {
  xrt_compile_options o;
  xrt_compile_options_init(&o);
  o.filename = "a.mlir";
  const char *text = with_check(check);
  xrt_program *p = NULL;
  xrt_status st = xrt_program_parse(text, strlen(text), &o, &p);
  if (st == XRT_OK) {
    xrt_program_release(p);
    fail_msg("parsed, want \"%s\":\n%s", want, text);
  }
  tu_save_error();
  char full[1024];
  snprintf(full, sizeof full, "a.mlir:4:3: %s", want);
  if (st != XRT_INVALID_ARGUMENT || strcmp(tu_msg, full) != 0)
    fail_msg("got %s \"%s\"\nwant INVALID_ARGUMENT \"%s\"\n%s",
             xrt_strerror(st), tu_msg, full, text);
}

/* The check op `name` with the attributes attrs ("a = 1, b = 2") is
 * refused with "a.mlir:4:3: " + want in each form: the pretty op (when
 * no attribute has a type, which that form does not take), the generic
 * op and custom_call @name (operands %a, %b: tensor<f32>). */
static void refused_all_forms(const char *name, const char *attrs,
                              const char *want) {
  char check[512];
  if (!strchr(attrs, ':')) {
    snprintf(check, sizeof check, "%s %%a, %%b, %s : tensor<f32>%s", name,
             attrs,
             strcmp(name, "check.expect_close") ? "" : ", tensor<f32>");
    refused(check, want);
  }
  snprintf(check, sizeof check,
           "\"%s\"(%%a, %%b) {%s} : (tensor<f32>, tensor<f32>) -> ()", name,
           attrs);
  refused(check, want);
  snprintf(check, sizeof check,
           "stablehlo.custom_call @%s(%%a, %%b) {%s} : (tensor<f32>, "
           "tensor<f32>) -> ()", name, attrs);
  refused(check, want);
}

#define CLOSE "check.expect_close %a, %b, "
#define CLOSE_T " : tensor<f32>, tensor<f32>"
#define ULP_RANGE " must be an integer in [0, " INT64_MAX_S "], got "

static void test_close_ulps_refused(void **state) {
  (void)state;
  const char *max = "check.expect_close: max_ulp_difference" ULP_RANGE;
  const char *min = "check.expect_close: min_ulp_difference" ULP_RANGE;
  static const struct { const char *attr, *got; int is_min; } cases[] = {
      {"max_ulp_difference = -3", "-3", 0},        /* the fuzz finding */
      {"max_ulp_difference = -9223372036854775808", "-9223372036854775808", 0},
      {"max_ulp_difference = 0xFFFFFFFFFFFFFFFF", "-1", 0}, /* bit pattern */
      {"max_ulp_difference = 1.0e300", "1e+300", 0},  /* huge, a float */
      {"max_ulp_difference = 2.5", "2.5", 0},
      {"max_ulp_difference = 3.0", "3", 0},          /* a float all the same */
      {"max_ulp_difference = 3 : f32", "3", 0},
      {"max_ulp_difference = 0x7FC00000 : f32", "nan", 0},
      {"max_ulp_difference = 0x7F800000 : f32", "inf", 0},
      {"max_ulp_difference = \"3\"", "a string attribute", 0},
      {"max_ulp_difference = true", "a bool attribute", 0},
      {"max_ulp_difference = [1, 2]", "an integer list attribute", 0},
      {"min_ulp_difference = -1", "-1", 1},
      {"min_ulp_difference = 0.5, max_ulp_difference = 3", "0.5", 1},
  };
  for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
    char want[512];
    snprintf(want, sizeof want, "%s%s", cases[i].is_min ? min : max,
             cases[i].got);
    refused_all_forms("check.expect_close", cases[i].attr, want);
  }
}

static void test_close_min_above_max_refused(void **state) {
  (void)state;
  refused_all_forms("check.expect_close",
                    "min_ulp_difference = 5, max_ulp_difference = 3",
                    "check.expect_close: min_ulp_difference must be in [0, "
                    "max_ulp_difference = 3], got 5");
  /* max defaults to 3 */
  refused_all_forms("check.expect_close", "min_ulp_difference = 4",
                    "check.expect_close: min_ulp_difference must be in [0, "
                    "max_ulp_difference = 3], got 4");
}

#define ALMOST "check.expect_almost_eq %a, %b, "
#define TOL "check.expect_almost_eq: tolerance must be a finite number >= 0, got "

static void test_tolerance_refused(void **state) {
  (void)state;
  static const struct { const char *attr, *got; } cases[] = {
      {"tolerance = -0.5", "-0.5"},
      {"tolerance = -1", "-1"},
      {"tolerance = 0x7FF8000000000000 : f64", "nan"},
      {"tolerance = 0x7FF0000000000000 : f64", "inf"},
      {"tolerance = 0xFFF0000000000000 : f64", "-inf"},
      {"tolerance = -inf", "-inf"},
      {"tolerance = nan", "an enum attribute"}, /* not a number in MLIR */
      {"tolerance = 1.0e999", "inf"}, /* strtod: too large */
      {"tolerance = \"0.1\"", "a string attribute"},
      {"tolerance = false", "a bool attribute"},
  };
  for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
    char want[512];
    snprintf(want, sizeof want, TOL "%s", cases[i].got);
    refused_all_forms("check.expect_almost_eq", cases[i].attr, want);
  }
}

/* The _const forms, and expect_serialized_eq's iter, which only a
 * custom_call can get past the parser (the check.expect_serialized_eq op
 * is checked as it is read). */
static void test_other_forms_refused(void **state) {
  (void)state;
  refused("\"check.expect_close\"(%a, %b) {max_ulp_difference = -3 : i64} : "
          "(tensor<f32>, tensor<f32>) -> ()",
          "check.expect_close: max_ulp_difference" ULP_RANGE "-3");
  refused("check.expect_almost_eq_const %a, dense<1.0> : tensor<f32> "
          "{tolerance = -2.0}",
          TOL "-2");
  refused("\"check.expect_almost_eq_const\"(%a) {value = dense<1.0> : "
          "tensor<f32>, tolerance = -2.0 : f32} : (tensor<f32>) -> ()",
          TOL "-2");
  refused("stablehlo.custom_call @check.expect_serialized_eq(%a) "
          "{probe_id = \"p\", iter = -1 : i64} : (tensor<f32>) -> ()",
          "check.expect_serialized_eq: iter" ULP_RANGE "-1");
}

/* Values at the ends of the ranges are accepted and checks run with them. */
static void test_limits_accepted(void **state) {
  const char *ok[] = {
      CLOSE "max_ulp_difference = 0" CLOSE_T,
      CLOSE "max_ulp_difference = " INT64_MAX_S CLOSE_T,
      CLOSE "min_ulp_difference = 0, max_ulp_difference = 0" CLOSE_T,
      CLOSE "min_ulp_difference = 0, max_ulp_difference = " INT64_MAX_S CLOSE_T,
      ALMOST "tolerance = 0.0 : tensor<f32>",
      ALMOST "tolerance = 0 : tensor<f32>",
      ALMOST "tolerance = 1.7976931348623157e308 : tensor<f32>",
      ("stablehlo.custom_call @check.expect_close(%a, %b) "
       "{max_ulp_difference = 0 : i64} : (tensor<f32>, tensor<f32>) -> ()"),
  };
  for (size_t i = 0; i < sizeof ok / sizeof *ok; i++) {
    xrt_status st = tu_run0(C(state), with_check(ok[i]));
    if (st != XRT_OK)
      fail_msg("%s: %s\n%s", xrt_strerror(st), tu_msg, prog);
  }
  /* a distance past INT64_MAX (finite against infinite) still fails the
   * widest check */
  static const char inf_vs_one[] =
      "func.func @main() {\n"
      "  %a = stablehlo.constant dense<1.0> : tensor<f32>\n"
      "  %b = stablehlo.constant dense<0x7F800000> : tensor<f32>\n"
      "  check.expect_close %a, %b, max_ulp_difference = " INT64_MAX_S
      " : tensor<f32>, tensor<f32>\n"
      "  func.return\n}\n";
  assert_int_equal(tu_run0(C(state), inf_vs_one), XRT_CHECK_FAILED);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_close_ulps_refused),
      cmocka_unit_test(test_close_min_above_max_refused),
      cmocka_unit_test(test_tolerance_refused),
      cmocka_unit_test(test_other_forms_refused),
      cmocka_unit_test(test_limits_accepted),
  };
  return cmocka_run_group_tests(tests, tu_setup_client, tu_teardown_client);
}
