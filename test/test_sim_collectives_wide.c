/*
 * test_sim_collectives_wide.c - an all_reduce over a group wider than the
 * simulator lists in one pass (src/sim/collectives.c, SIM_COLL_MAXG = 64
 * members): each member reduces its slice into its own output, then
 * gathers the slices the others reduced.  66 replicas on 66 devices, for
 * sum and max on i32, against sums worked out in the test; and an
 * all_reduce whose reduction body's element type differs from an
 * operand's of the same size, refused at compile (it used to run and
 * combine the operand's bits as the body's type).  Issue #25 (coverage of src/sim).
 */
#include "test_util.h"

#define NREP 66
#define LEN 200

static char *wide_program(const char *op) {
  size_t cap = 8192;
  char *s = malloc(cap);
  assert_non_null(s);
  int n = snprintf(s, cap,
                   "module @wide attributes {mhlo.num_replicas = %d : i32} {\n"
                   "func.func @main(%%x: tensor<%dxi32>) -> tensor<%dxi32> {\n"
                   "  %%r = \"stablehlo.all_reduce\"(%%x) ({\n"
                   "    ^bb0(%%a: tensor<i32>, %%b: tensor<i32>):\n"
                   "      %%s = stablehlo.%s %%a, %%b : tensor<i32>\n"
                   "      stablehlo.return %%s : tensor<i32>\n"
                   "  }) {replica_groups = dense<[[",
                   NREP, LEN, LEN, op);
  for (int p = 0; p < NREP; p++)
    n += snprintf(s + n, cap - (size_t)n, "%s%d", p ? ", " : "", p);
  snprintf(s + n, cap - (size_t)n,
           "]]> : tensor<1x%dxi64>} : (tensor<%dxi32>) -> tensor<%dxi32>\n"
           "  return %%r : tensor<%dxi32>\n"
           "}\n}\n",
           NREP, LEN, LEN, LEN);
  return s;
}

/* Participant p holds x[i] = p + i; the sum over p is 66 i + 2145, the
 * max 65 + i. */
static void run_wide(const char *op, int is_max) {
  xrt_client *c = tu_client(NREP, 1, 1 << 20);
  char *src = wide_program(op);
  xrt_executable *e = tu_compile(c, src, 0, NULL);
  free(src);
  assert_int_equal(xrt_executable_num_replicas(e), NREP);
  xrt_shape sh = TU_SHAPE(XRT_S32, LEN);
  static xrt_buffer *args[NREP][1], *outs[NREP][1];
  xrt_buffer *const *lists[NREP];
  xrt_buffer **olists[NREP];
  int32_t x[LEN];
  for (int p = 0; p < NREP; p++) {
    for (int i = 0; i < LEN; i++) x[i] = p + i;
    assert_int_equal(xrt_buffer_from_host(c, xrt_client_device(c, p), &sh, x,
                                          &args[p][0]),
                     XRT_OK);
    lists[p] = args[p];
    olists[p] = outs[p];
    outs[p][0] = NULL;
  }
  xrt_event *done = NULL;
  assert_int_equal(xrt_execute_multi(e, lists, NREP, 1, olists, 1, NULL, &done),
                   XRT_OK);
  if (xrt_event_await(done) != XRT_OK) fail_msg("%s", xrt_last_error());
  xrt_event_release(done);
  for (int p = 0; p < NREP; p++) {
    int32_t y[LEN];
    assert_int_equal(xrt_buffer_to_host(outs[p][0], y, sizeof y), XRT_OK);
    for (int i = 0; i < LEN; i++) {
      int32_t want = is_max ? NREP - 1 + i : NREP * i + NREP * (NREP - 1) / 2;
      if (y[i] != want)
        fail_msg("%s: participant %d, element %d: %d, want %d", op, p, i, y[i],
                 want);
    }
    xrt_buffer_release(outs[p][0]);
    xrt_buffer_release(args[p][0]);
  }
  xrt_executable_release(e);
  xrt_client_release(c);
}

static void test_wide_sum(void **state) {
  (void)state;
  run_wide("add", 0);
}

static void test_wide_max(void **state) {
  (void)state;
  run_wide("maximum", 1);
}

/* all_reduce of an i32 and an f32 operand with one i32 body: the verifier
 * lets it through (both are 4 bytes), and the simulator used to add the
 * f32 operand's bit patterns as integers (1.5 + 1.5 gave inf over two
 * replicas); it now refuses the body for the f32 operand. */
static void test_mixed_operands(void **state) {
  (void)state;
  const char *src =
      "module @m attributes {mhlo.num_replicas = 2 : i32} {\n"
      "func.func @main(%x: tensor<2xi32>, %y: tensor<2xf32>) -> (tensor<2xi32>, tensor<2xf32>) {\n"
      "  %r:2 = \"stablehlo.all_reduce\"(%x, %y) ({\n"
      "    ^bb0(%a: tensor<i32>, %b: tensor<i32>):\n"
      "      %s = stablehlo.add %a, %b : tensor<i32>\n"
      "      stablehlo.return %s : tensor<i32>\n"
      "  }) {replica_groups = dense<[[0, 1]]> : tensor<1x2xi64>} : (tensor<2xi32>, tensor<2xf32>) -> (tensor<2xi32>, tensor<2xf32>)\n"
      "  return %r#0, %r#1 : tensor<2xi32>, tensor<2xf32>\n"
      "}\n}\n";
  xrt_client *c = tu_client(2, 1, 0);
  xrt_executable *e = NULL;
  xrt_status st = xrt_compile(c, src, strlen(src), NULL, &e);
  if (st == XRT_OK) {
    xrt_executable_release(e);
    fail_msg("an all_reduce body of the wrong type compiled");
  }
  assert_int_equal(st, XRT_INVALID_ARGUMENT);
  TU_ASSERT_CONTAINS(xrt_last_error(),
                     "stablehlo.all_reduce: the computation's arguments must "
                     "be scalars of operand 1's element type");
  /* reduce_scatter takes the same check */
  const char *rs =
      "func.func @main(%x: tensor<4xf32>) -> tensor<4xf32> {\n"
      "  %r = \"stablehlo.reduce_scatter\"(%x) ({\n"
      "    ^bb0(%a: tensor<i32>, %b: tensor<i32>):\n"
      "      %s = stablehlo.add %a, %b : tensor<i32>\n"
      "      stablehlo.return %s : tensor<i32>\n"
      "  }) {scatter_dimension = 0 : i64, replica_groups = dense<[[0]]> : tensor<1x1xi64>} : (tensor<4xf32>) -> tensor<4xf32>\n"
      "  return %r : tensor<4xf32>\n"
      "}\n";
  assert_int_equal(xrt_compile(c, rs, strlen(rs), NULL, &e),
                   XRT_INVALID_ARGUMENT);
  TU_ASSERT_CONTAINS(xrt_last_error(),
                     "stablehlo.reduce_scatter: the computation's arguments "
                     "must be scalars of operand 0's element type");
  xrt_client_release(c);
}

TU_MAIN(NULL, NULL, cmocka_unit_test(test_wide_sum),
        cmocka_unit_test(test_wide_max), cmocka_unit_test(test_mixed_operands))
