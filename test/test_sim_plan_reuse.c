/*
 * test_sim_plan_reuse.c - the simulator's planner shares what repeats
 * (dot_general offset tables of equal shapes, compact fused-loop nodes)
 * and an executable loaded from the disk cache computes what a cold
 * compile does.  MIT licensed.
 */
#define _POSIX_C_SOURCE 200809L /* mkdtemp */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "test_util.h"

/* Three dot_generals of equal shapes: two contract x's columns with the
 * rows of w1 and w2 (equal tables, shared), one with the rows of w2
 * transposed (other strides: its own table); each feeds a fused loop
 * (bias broadcast, add, multiply, maximum). */
static const char *prog =
    "module @reuse {\n"
    "  func.func public @main(%x: tensor<2x3xf32>) -> tensor<2x3xf32> {\n"
    "    %w1 = stablehlo.constant dense<[[1.0, 2.0, 3.0], [4.0, 5.0, 6.0], "
    "[7.0, 8.0, 9.0]]> : tensor<3x3xf32>\n"
    "    %w2 = stablehlo.constant dense<[[0.5, -1.0, 2.0], [1.0, 0.0, -3.0], "
    "[2.0, 1.0, 0.25]]> : tensor<3x3xf32>\n"
    "    %b = stablehlo.constant dense<[1.0, 2.0, -3.0]> : tensor<3xf32>\n"
    "    %bb = stablehlo.broadcast_in_dim %b, dims = [1] : (tensor<3xf32>) "
    "-> tensor<2x3xf32>\n"
    "    %d1 = stablehlo.dot_general %x, %w1, contracting_dims = [1] x [0] : "
    "(tensor<2x3xf32>, tensor<3x3xf32>) -> tensor<2x3xf32>\n"
    "    %a1 = stablehlo.add %d1, %bb : tensor<2x3xf32>\n"
    "    %m1 = stablehlo.multiply %a1, %x : tensor<2x3xf32>\n"
    "    %d2 = stablehlo.dot_general %m1, %w2, contracting_dims = [1] x [0] : "
    "(tensor<2x3xf32>, tensor<3x3xf32>) -> tensor<2x3xf32>\n"
    "    %a2 = stablehlo.add %d2, %bb : tensor<2x3xf32>\n"
    "    %d3 = stablehlo.dot_general %a2, %w2, contracting_dims = [1] x [1] : "
    "(tensor<2x3xf32>, tensor<3x3xf32>) -> tensor<2x3xf32>\n"
    "    %a3 = stablehlo.add %d3, %bb : tensor<2x3xf32>\n"
    "    %r = stablehlo.maximum %a3, %x : tensor<2x3xf32>\n"
    "    return %r : tensor<2x3xf32>\n"
    "  }\n"
    "}\n";

static const float w1[3][3] = {{1, 2, 3}, {4, 5, 6}, {7, 8, 9}};
static const float w2[3][3] = {{0.5f, -1, 2}, {1, 0, -3}, {2, 1, 0.25f}};
static const float bias[3] = {1, 2, -3};
static const float x[2][3] = {{1, -2, 3}, {0, 1, -1}};

/* o = a . w (transposed when t) + bias; every value here is exact. */
static void ref_layer(const float *a, const float w[3][3], int t,
                      float o[2][3]) {
  for (int i = 0; i < 2; i++)
    for (int j = 0; j < 3; j++) {
      float s = 0;
      for (int k = 0; k < 3; k++) s += a[i * 3 + k] * (t ? w[j][k] : w[k][j]);
      o[i][j] = s + bias[j];
    }
}

static void reference(double want[6]) {
  float a1[2][3], m1[2][3], a2[2][3], a3[2][3];
  ref_layer(&x[0][0], w1, 0, a1);
  for (int i = 0; i < 2; i++)
    for (int j = 0; j < 3; j++) m1[i][j] = a1[i][j] * x[i][j];
  ref_layer(&m1[0][0], w2, 0, a2);
  ref_layer(&a2[0][0], w2, 1, a3);
  for (int i = 0; i < 2; i++)
    for (int j = 0; j < 3; j++)
      want[i * 3 + j] = a3[i][j] > x[i][j] ? a3[i][j] : x[i][j];
}

static void run_and_check(xrt_client *c) {
  tu_in in = {TU_SHAPE(XRT_F32, 2, 3), x};
  tu_out out;
  double want[6];
  reference(want);
  TU_RUN_OK(c, prog, 1, &in, &out);
  tu_assert_shape(&out, 0, TU_SHAPE(XRT_F32, 2, 3));
  const float *got = (const float *)out.data[0];
  for (int i = 0; i < 6; i++) assert_true(got[i] == (float)want[i]);
  tu_out_free(&out);
}

static void test_cold_compile_matches_reference(void **state) {
  (void)state;
  xrt_client *c = tu_client(1, 1, 0);
  run_and_check(c);
  xrt_client_release(c);
}

#ifdef XRT_HAVE_DISK_CACHE
static xrt_client *store_client(xrt_disk_cache *dc) {
  xrt_client_options o;
  xrt_client_options_init(&o);
  o.num_devices = 1;
  o.threads_per_device = 1;
  o.cache_store = xrt_disk_cache_store(dc);
  xrt_client *c = NULL;
  if (xrt_client_create(&o, &c) != XRT_OK)
    fail_msg("client: %s", xrt_last_error());
  return c;
}

/* A fresh client loads the executable from disk (a hit, no compile) and
 * computes the same values. */
static void test_disk_hit_matches_reference(void **state) {
  (void)state;
  char dir[] = "/tmp/xrt_test_reuse_XXXXXX";
  assert_non_null(mkdtemp(dir));
  xrt_disk_cache_options o;
  xrt_disk_cache_options_init(&o);
  o.directory = dir;
  o.min_compile_ns = 0;
  xrt_disk_cache *dc = NULL;
  assert_int_equal(xrt_disk_cache_open(&o, &dc), XRT_OK);
  xrt_client *c = store_client(dc);
  run_and_check(c); /* miss: compiles and writes the file */
  xrt_client_release(c);
  xrt_disk_cache_stats st;
  assert_int_equal(xrt_disk_cache_get_stats(dc, &st), XRT_OK);
  assert_int_equal(st.hits, 0);
  assert_true(st.writes >= 1);
  c = store_client(dc);
  run_and_check(c); /* hit: deserialized and planned again */
  xrt_client_stats cs;
  assert_int_equal(xrt_client_get_stats(c, &cs), XRT_OK);
  assert_int_equal(cs.compiles, 0);
  xrt_client_release(c);
  assert_int_equal(xrt_disk_cache_get_stats(dc, &st), XRT_OK);
  assert_true(st.hits >= 1); /* the entry (and the alias of the text) */
  xrt_disk_cache_close(dc);
  char cmd[96];
  snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
  assert_int_equal(system(cmd), 0);
}
#endif

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_cold_compile_matches_reference),
#ifdef XRT_HAVE_DISK_CACHE
      cmocka_unit_test(test_disk_hit_matches_reference),
#endif
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
