/*
 * test_sim_while_carry.c - how a while loop carries its values: values the
 * body returns unchanged stay in place (src/sim/control.c), values it
 * swaps or updates move to the other buffer, and state the body replaces
 * by a dynamic_update_slice of itself is updated in place when nothing
 * else reads it (src/sim/lower.c, sim_while_in_place) - and only then.
 * Each case's result is worked out by hand in the comments.  MIT licensed.
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

/* ---- state written slice by slice (an RNN's outputs) ----
 * xs rows: (1,2,3), (10,20,30), (100,200,300), (7,7,7); three iterations
 * add row i to h and write h into row i of out (initially all -1):
 * out = (1,2,3), (11,22,33), (111,222,333), (-1,-1,-1); h = (111,222,333).
 * EXTRA_VARS/EXTRA_RET add loop values that read out a second time. */
#define RNN_SRC(EXTRA_TYPES, EXTRA_INIT, EXTRA_VARS, EXTRA_BODY, EXTRA_RET,   \
                RESULT)                                                       \
  "func.func @main(%xs: tensor<4x3xf32>, %init: tensor<4x3xf32>) -> "         \
  "tensor<4x3xf32> {\n"                                                       \
  "  %c0 = stablehlo.constant dense<0> : tensor<i32>\n"                       \
  "  %h0 = stablehlo.constant dense<0.0> : tensor<1x3xf32>\n"                 \
  "  %r:" EXTRA_VARS " = stablehlo.while(%i = %c0, %h = %h0, %pxs = %xs, "     \
  "%po = %init" EXTRA_INIT ") : tensor<i32>, tensor<1x3xf32>, "                \
  "tensor<4x3xf32>, tensor<4x3xf32>" EXTRA_TYPES "\n"                          \
  "   cond {\n"                                                                \
  "    %n = stablehlo.constant dense<3> : tensor<i32>\n"                       \
  "    %lt = stablehlo.compare LT, %i, %n, SIGNED : (tensor<i32>, "           \
  "tensor<i32>) -> tensor<i1>\n"                                               \
  "    stablehlo.return %lt : tensor<i1>\n"                                    \
  "  } do {\n"                                                                 \
  "    %z = stablehlo.constant dense<0> : tensor<i32>\n"                       \
  "    %row = stablehlo.dynamic_slice %pxs, %i, %z, sizes = [1, 3] : "        \
  "(tensor<4x3xf32>, tensor<i32>, tensor<i32>) -> tensor<1x3xf32>\n"          \
  "    %h1 = stablehlo.add %h, %row : tensor<1x3xf32>\n"                       \
  "    %po1 = stablehlo.dynamic_update_slice %po, %h1, %i, %z : "             \
  "(tensor<4x3xf32>, tensor<1x3xf32>, tensor<i32>, tensor<i32>) -> "          \
  "tensor<4x3xf32>\n" EXTRA_BODY                                              \
  "    %one = stablehlo.constant dense<1> : tensor<i32>\n"                     \
  "    %i1 = stablehlo.add %i, %one : tensor<i32>\n"                           \
  "    stablehlo.return %i1, %h1, %pxs, %po1" EXTRA_RET " : tensor<i32>, "    \
  "tensor<1x3xf32>, tensor<4x3xf32>, tensor<4x3xf32>" EXTRA_TYPES "\n"         \
  "  }\n"                                                                      \
  "  func.return %r#" RESULT " : tensor<4x3xf32>\n"                            \
  "}\n"

static const float kXs[12] = {1, 2, 3, 10, 20, 30, 100, 200, 300, 7, 7, 7};
static const float kInit[12] = {-1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1};

static void run_rnn(void **state, const char *src, const float want[12]) {
  tu_in in[2] = {{TU_SHAPE(XRT_F32, 4, 3), kXs}, {TU_SHAPE(XRT_F32, 4, 3), kInit}};
  for (int round = 0; round < 2; round++) { /* the caller's init stays -1 */
    tu_out o;
    TU_RUN_OK((xrt_client *)*state, src, 2, in, &o);
    assert_int_equal(o.n, 1);
    assert_int_equal(o.bytes[0], sizeof(float) * 12);
    assert_memory_equal(o.data[0], want, sizeof(float) * 12);
    tu_out_free(&o);
  }
}

/* Only the update reads out: it is written in place. */
static void test_update_slice_state(void **state) {
  static const float want[12] = {1, 2, 3, 11, 22, 33, 111, 222, 333, -1, -1, -1};
  run_rnn(state, RNN_SRC("", "", "4", "", "", "3"), want);
}

/* The body also hands the old out on as another loop value (prev): the
 * update cannot overwrite it, and prev ends as out after two
 * iterations. */
static void test_update_slice_state_also_returned(void **state) {
  static const float want[12] = {1, 2, 3, 11, 22, 33, -1, -1, -1, -1, -1, -1};
  run_rnn(state,
          RNN_SRC(", tensor<4x3xf32>", ", %pprev = %init", "5", "", ", %po",
                  "4"),
          want);
}

/* The body reads the old out after the update (d = -old): d ends as
 * minus out after two iterations. */
static void test_update_slice_state_read_after(void **state) {
  static const float want[12] = {-1, -2, -3, -11, -22, -33, 1, 1, 1, 1, 1, 1};
  run_rnn(state,
          RNN_SRC(", tensor<4x3xf32>", ", %pd = %init", "5",
                  "    %d1 = stablehlo.negate %po : tensor<4x3xf32>\n",
                  ", %d1", "4"),
          want);
}

/* The update's result is read by more than the loop (d = new - old):
 * only the row written last differs, (111,222,333) - (-1,-1,-1). */
static void test_update_slice_state_result_read(void **state) {
  static const float want[12] = {0, 0, 0, 0, 0, 0, 112, 223, 334, 0, 0, 0};
  run_rnn(state,
          RNN_SRC(", tensor<4x3xf32>", ", %pd = %init", "5",
                  "    %d1 = stablehlo.subtract %po1, %po : tensor<4x3xf32>\n",
                  ", %d1", "4"),
          want);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_pass_through_swap_update),
      cmocka_unit_test(test_no_iteration),
      cmocka_unit_test(test_update_slice_state),
      cmocka_unit_test(test_update_slice_state_also_returned),
      cmocka_unit_test(test_update_slice_state_read_after),
      cmocka_unit_test(test_update_slice_state_result_read),
  };
  return cmocka_run_group_tests(tests, tu_setup_client, tu_teardown_client);
}
