/*
 * test_sim_while_carry.c - how a while loop carries its values: values the
 * body returns unchanged stay in place (src/sim/control.c), values it
 * swaps or updates move to the other buffer.  Each case's result is
 * worked out by hand in the comments.  MIT licensed.
 */
#include "test_util.h"

/* i counts to 5; w passes through; a and b swap each iteration; acc adds
 * w + a.  a, b: (1, 10) -> (10, 1) -> (1, 10) ...; acc gets w + a with
 * a = 1, 10, 1, 10, 1 over the five iterations: 0 + 5 w + 23. */
static const char carry_src[] =
    "func.func @main(%w: tensor<3xf32>, %a: tensor<3xf32>, "
    "%b: tensor<3xf32>) -> (tensor<3xf32>, tensor<3xf32>, tensor<3xf32>, "
    "tensor<3xf32>) {\n"
    "  %c0 = stablehlo.constant dense<0> : tensor<i32>\n"
    "  %z = stablehlo.constant dense<0.0> : tensor<3xf32>\n"
    "  %r:5 = stablehlo.while(%i = %c0, %pw = %w, %pa = %a, %pb = %b, "
    "%acc = %z) : tensor<i32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>, "
    "tensor<3xf32>\n"
    "   cond {\n"
    "    %n = stablehlo.constant dense<5> : tensor<i32>\n"
    "    %lt = stablehlo.compare LT, %i, %n, SIGNED : (tensor<i32>, "
    "tensor<i32>) -> tensor<i1>\n"
    "    stablehlo.return %lt : tensor<i1>\n"
    "  } do {\n"
    "    %one = stablehlo.constant dense<1> : tensor<i32>\n"
    "    %i1 = stablehlo.add %i, %one : tensor<i32>\n"
    "    %s = stablehlo.add %pw, %pa : tensor<3xf32>\n"
    "    %acc1 = stablehlo.add %acc, %s : tensor<3xf32>\n"
    "    stablehlo.return %i1, %pw, %pb, %pa, %acc1 : tensor<i32>, "
    "tensor<3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>\n"
    "  }\n"
    "  func.return %r#1, %r#2, %r#3, %r#4 : tensor<3xf32>, tensor<3xf32>, "
    "tensor<3xf32>, tensor<3xf32>\n"
    "}\n";

static void test_pass_through_swap_update(void **state) {
  const float w[3] = {1, 2, 3}, a[3] = {1, 1, 1}, b[3] = {10, 10, 10};
  tu_in in[3] = {{TU_SHAPE(XRT_F32, 3), w}, {TU_SHAPE(XRT_F32, 3), a},
                 {TU_SHAPE(XRT_F32, 3), b}};
  tu_out o;
  TU_RUN_OK((xrt_client *)*state, carry_src, 3, in, &o);
  assert_int_equal(o.n, 4);
  /* w unchanged; after 5 swaps a and b are exchanged */
  TU_ASSERT_OUT(&o, 0, float, 1, 2, 3);
  TU_ASSERT_OUT(&o, 1, float, 10, 10, 10);
  TU_ASSERT_OUT(&o, 2, float, 1, 1, 1);
  /* 5 w + 23 */
  TU_ASSERT_OUT(&o, 3, float, 28, 33, 38);
  tu_out_free(&o);
  /* the caller's buffers are unchanged: run again, same results */
  TU_RUN_OK((xrt_client *)*state, carry_src, 3, in, &o);
  TU_ASSERT_OUT(&o, 3, float, 28, 33, 38);
  tu_out_free(&o);
}

/* Zero iterations: every value comes back as given. */
static void test_no_iteration(void **state) {
  char src[sizeof carry_src];
  memcpy(src, carry_src, sizeof carry_src);
  char *n = strstr(src, "dense<5>");
  n[6] = '0';
  const float w[3] = {1, 2, 3}, a[3] = {4, 5, 6}, b[3] = {7, 8, 9};
  tu_in in[3] = {{TU_SHAPE(XRT_F32, 3), w}, {TU_SHAPE(XRT_F32, 3), a},
                 {TU_SHAPE(XRT_F32, 3), b}};
  tu_out o;
  TU_RUN_OK((xrt_client *)*state, src, 3, in, &o);
  TU_ASSERT_OUT(&o, 0, float, 1, 2, 3);
  TU_ASSERT_OUT(&o, 1, float, 4, 5, 6);
  TU_ASSERT_OUT(&o, 2, float, 7, 8, 9);
  TU_ASSERT_OUT(&o, 3, float, 0, 0, 0);
  tu_out_free(&o);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_pass_through_swap_update),
      cmocka_unit_test(test_no_iteration),
  };
  return cmocka_run_group_tests(tests, tu_setup_client, tu_teardown_client);
}
