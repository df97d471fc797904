/*
 * test_mpi_launch.c - launches of a multi-process executable made
 * participant by participant (xrt_execute_async with options.launch_id,
 * replica and partition), as `xrt check --mpi` runs interpreter.run_parallel
 * (issue #11).  Run by `make test-mpi` under mpirun with 2 and 4 processes.
 *
 * Every process runs its own participants under one id from
 * xrt_client_new_launch_id, which must count alike in every process; an
 * MPMD launch mixes two executables, and the results must be what a plain
 * loop in the test computes.  Values are small integers: float sums are
 * exact in any order.
 */
#include "mpi_util.h"

#define ML_D 2      /* devices per process */
#define ML_MAXP 64  /* participants */

static struct {
  int me, n;     /* process index, processes */
  xrt_client *g; /* joined: ML_D here, n * ML_D in all */
} ml;

/* @main: x * k, then summed over all n replicas. */
static void ml_src(char *src, size_t cap, int n, int k) {
  char groups[512];
  size_t at = (size_t)snprintf(groups, sizeof groups, "[[");
  for (int i = 0; i < n && at < sizeof groups; i++)
    at += (size_t)snprintf(groups + at, sizeof groups - at, "%s%d", i ? ", " : "", i);
  snprintf(groups + at, sizeof groups - at, "]]");
  snprintf(src, cap,
           "func.func @main(%%x: tensor<2xf32>) -> tensor<2xf32> {\n"
           "  %%k = stablehlo.constant dense<%d.0> : tensor<2xf32>\n"
           "  %%y = stablehlo.multiply %%x, %%k : tensor<2xf32>\n"
           "  %%r = \"stablehlo.all_reduce\"(%%y) ({\n"
           "  ^bb0(%%a: tensor<f32>, %%b: tensor<f32>):\n"
           "    %%s = stablehlo.add %%a, %%b : tensor<f32>\n"
           "    stablehlo.return %%s : tensor<f32>\n"
           "  }) {replica_groups = dense<%s> : tensor<1x%dxi64>}\n"
           "      : (tensor<2xf32>) -> tensor<2xf32>\n"
           "  return %%r : tensor<2xf32>\n"
           "}\n",
           k, groups, n);
}

static xrt_executable *ml_compile(const char *src, int replicas) {
  xrt_compile_options co;
  xrt_compile_options_init(&co);
  co.num_replicas = replicas;
  xrt_executable *exe = NULL;
  assert_int_equal(xrt_compile(ml.g, src, strlen(src), &co, &exe), XRT_OK);
  return exe;
}

/* Ids from xrt_client_new_launch_id are the same in every process, even
 * when only process 0 also ran work of its own (a one-device launch takes
 * an id of the process's own). */
static void test_launch_ids_agree(void **state) {
  (void)state;
  if (ml.me == 0) {
    const char *src = "func.func @main(%x: tensor<2xf32>) -> tensor<2xf32> {\n"
                      "  %y = stablehlo.add %x, %x : tensor<2xf32>\n"
                      "  return %y : tensor<2xf32>\n}\n";
    int here = 0;
    xrt_compile_options co;
    xrt_compile_options_init(&co);
    co.num_replicas = co.num_partitions = 1;
    co.device_assignment = &here;
    xrt_executable *exe = NULL;
    assert_int_equal(xrt_compile(ml.g, src, strlen(src), &co, &exe), XRT_OK);
    xrt_shape sh = TU_SHAPE(XRT_F32, 2);
    float x[2] = {1, 2}, y[2];
    xrt_buffer *a = NULL, *o = NULL;
    xrt_device *d = xrt_client_device(ml.g, 0);
    assert_int_equal(xrt_buffer_from_host(ml.g, d, &sh, x, &a), XRT_OK);
    assert_int_equal(xrt_execute(exe, d, &a, 1, &o, 1, NULL), XRT_OK);
    assert_int_equal(xrt_buffer_to_host(o, y, sizeof y), XRT_OK);
    assert_true(y[0] == 2 && y[1] == 4);
    xrt_buffer_release(a);
    xrt_buffer_release(o);
    xrt_executable_release(exe);
  }
  uint64_t mine[3], all[3 * ML_MAXP];
  for (int i = 0; i < 3; i++) {
    mine[i] = xrt_client_new_launch_id(ml.g);
    assert_true(mine[i] != 0);
    if (i) assert_true(mine[i] > mine[i - 1]);
  }
  assert_int_equal(xrt_client_process_allgather(ml.g, mine, all, sizeof mine), XRT_OK);
  for (int p = 0; p < ml.n; p++)
    assert_memory_equal(all + 3 * p, mine, sizeof mine);
}

/* An MPMD launch over every process: even replicas run x * 1, odd ones
 * x * 10, each process only its own, all summed by one all_reduce.  Twice,
 * so that the second launch's id is in step too. */
static void test_mpmd_all_reduce(void **state) {
  (void)state;
  int n = ml.n * ML_D;
  char src1[2048], src10[2048];
  ml_src(src1, sizeof src1, n, 1);
  ml_src(src10, sizeof src10, n, 10);
  xrt_executable *exe[2] = {ml_compile(src1, n), ml_compile(src10, n)};
  xrt_shape sh = TU_SHAPE(XRT_F32, 2);
  for (int round = 0; round < 2; round++) {
    float want[2] = {0, 0};
    for (int p = 0; p < n; p++) {
      float k = p % 2 ? 10.0f : 1.0f;
      want[0] += k * (float)(p + 1 + round);
      want[1] += k * (float)(2 * (p + 1));
    }
    xrt_execute_options eo;
    xrt_execute_options_init(&eo);
    eo.launch_id = xrt_client_new_launch_id(ml.g);
    xrt_buffer *args[ML_MAXP] = {0}, *outs[ML_MAXP] = {0};
    xrt_event *done[ML_MAXP] = {0};
    int ran = 0;
    for (int p = 0; p < n; p++) {
      xrt_device *d = xrt_executable_device(exe[p % 2], p);
      assert_non_null(d);
      assert_int_equal(xrt_device_process_index(d), p / ML_D);
      if (xrt_device_is_addressable(d) != 1) continue;
      float x[2] = {(float)(p + 1 + round), (float)(2 * (p + 1))};
      assert_int_equal(xrt_buffer_from_host(ml.g, d, &sh, x, &args[p]), XRT_OK);
      eo.replica = p;
      assert_int_equal(xrt_execute_async(exe[p % 2], d, &args[p], 1, &outs[p], 1, &eo,
                                         &done[p]),
                       XRT_OK);
      ran++;
    }
    assert_int_equal(ran, ML_D);
    for (int p = 0; p < n; p++) {
      if (!done[p]) continue;
      assert_int_equal(xrt_event_await(done[p]), XRT_OK);
      float got[2];
      assert_int_equal(xrt_buffer_to_host(outs[p], got, sizeof got), XRT_OK);
      assert_true(got[0] == want[0] && got[1] == want[1]);
      xrt_event_release(done[p]);
      xrt_buffer_release(args[p]);
      xrt_buffer_release(outs[p]);
    }
  }
  xrt_executable_release(exe[0]);
  xrt_executable_release(exe[1]);
}

/* A one-device executable placed on another process's device runs
 * nowhere here, with or without a launch id. */
static void test_single_elsewhere(void **state) {
  (void)state;
  if (ml.n < 2) return; /* needs another process; make test-mpi runs 2 and 4 */
  const char *src = "func.func @main(%x: tensor<2xf32>) -> tensor<2xf32> {\n"
                    "  return %x : tensor<2xf32>\n}\n";
  int there = ((ml.me + 1) % ml.n) * ML_D, here = ml.me * ML_D;
  xrt_compile_options co;
  xrt_compile_options_init(&co);
  co.num_replicas = co.num_partitions = 1;
  xrt_shape sh = TU_SHAPE(XRT_F32, 2);
  float x[2] = {3, 4}, got[2] = {0, 0};
  xrt_device *mine = xrt_client_device(ml.g, 0);
  xrt_buffer *a = NULL, *o = NULL;
  assert_int_equal(xrt_buffer_from_host(ml.g, mine, &sh, x, &a), XRT_OK);
  for (int k = 0; k < 2; k++) {
    co.device_assignment = k ? &here : &there;
    xrt_executable *exe = NULL;
    assert_int_equal(xrt_compile(ml.g, src, strlen(src), &co, &exe), XRT_OK);
    xrt_status s = xrt_execute(exe, mine, &a, 1, &o, 1, NULL);
    if (k == 0) {
      assert_int_equal(s, XRT_INVALID_ARGUMENT);
      TU_ASSERT_CONTAINS(xrt_last_error(), "of process");
      assert_null(o);
    } else { /* its own device: runs */
      assert_int_equal(s, XRT_OK);
      assert_int_equal(xrt_buffer_to_host(o, got, sizeof got), XRT_OK);
      assert_true(got[0] == 3 && got[1] == 4);
      xrt_buffer_release(o);
      o = NULL;
    }
    xrt_executable_release(exe);
  }
  xrt_buffer_release(a);
}

static int ml_setup(void **state) {
  (void)state;
  tm_world w = tm_join(ML_D, ML_MAXP, 0);
  ml.me = w.me;
  ml.n = w.np;
  ml.g = w.client;
  return 0;
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_launch_ids_agree),
      cmocka_unit_test(test_mpmd_all_reduce),
      cmocka_unit_test(test_single_elsewhere),
  };
  return cmocka_run_group_tests(tests, ml_setup, tm_teardown) ? 1 : 0;
}
