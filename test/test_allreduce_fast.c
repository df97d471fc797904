/*
 * test_allreduce_fast.c - the one-pass all_reduce of the simulator (each
 * member folds its slice and writes it into every member's output) and its
 * vectorized float sums: results bit for bit equal to folding the inputs
 * one at a time in group order, on f32 and f64, big slices (streamed
 * stores) and small ones, uneven slices and tails, and a non-sum op.
 * MIT licensed.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "xrt.h"
#include "test_util.h"

enum { P = 4, N = (1 << 20) + 37, M = 1001 };

static const char src[] =
    "func.func @main(%a: tensor<1048613xf32>, %b: tensor<1001xf64>)\n"
    "    -> (tensor<1048613xf32>, tensor<1001xf64>, tensor<1048613xf32>) {\n"
    "  %r = \"stablehlo.all_reduce\"(%a) ({\n"
    "    ^bb0(%x: tensor<f32>, %y: tensor<f32>):\n"
    "      %s = stablehlo.add %x, %y : tensor<f32>\n"
    "      stablehlo.return %s : tensor<f32>\n"
    "  }) {replica_groups = dense<[[3, 1, 0, 2]]> : tensor<1x4xi64>}\n"
    "     : (tensor<1048613xf32>) -> tensor<1048613xf32>\n"
    "  %d = \"stablehlo.all_reduce\"(%b) ({\n"
    "    ^bb0(%x: tensor<f64>, %y: tensor<f64>):\n"
    "      %s = stablehlo.add %y, %x : tensor<f64>\n"
    "      stablehlo.return %s : tensor<f64>\n"
    "  }) {replica_groups = dense<[[2, 0], [1, 3]]> : tensor<2x2xi64>}\n"
    "     : (tensor<1001xf64>) -> tensor<1001xf64>\n"
    "  %m = \"stablehlo.all_reduce\"(%a) ({\n"
    "    ^bb0(%x: tensor<f32>, %y: tensor<f32>):\n"
    "      %s = stablehlo.maximum %x, %y : tensor<f32>\n"
    "      stablehlo.return %s : tensor<f32>\n"
    "  }) {replica_groups = dense<[[0, 1, 2, 3]]> : tensor<1x4xi64>}\n"
    "     : (tensor<1048613xf32>) -> tensor<1048613xf32>\n"
    "  func.return %r, %d, %m : tensor<1048613xf32>, tensor<1001xf64>,"
    " tensor<1048613xf32>\n"
    "}\n";

/* Values of mixed magnitudes, so the order of the sum changes its
 * rounding. */
static double value(uint32_t *state) {
  *state = *state * 1664525u + 1013904223u;
  double u = (double)(*state >> 8) / (double)(1u << 24) - 0.5;
  return u * (double)(1u << (*state & 15));
}

static void test_one_pass_matches_ordered_fold(void **st) {
  (void)st;
  float *a[P], *ra[P], *ma[P];
  double *b[P], *rb[P];
  uint32_t seed = 12345;
  for (int p = 0; p < P; p++) {
    a[p] = malloc(sizeof(float) * N), ra[p] = malloc(sizeof(float) * N);
    ma[p] = malloc(sizeof(float) * N);
    b[p] = malloc(sizeof(double) * M), rb[p] = malloc(sizeof(double) * M);
    assert_true(a[p] && ra[p] && ma[p] && b[p] && rb[p]);
    for (int i = 0; i < N; i++) a[p][i] = (float)value(&seed);
    for (int i = 0; i < M; i++) b[p][i] = value(&seed) / 3.0;
  }
  xrt_client *c = tu_client(P, 0, 0);
  xrt_executable *exe = tu_compile(c, src, P, NULL);
  xrt_shape sa = {XRT_F32, 1, {N}}, sb = {XRT_F64, 1, {M}};
  xrt_buffer *args[P][2], *outs[P][3];
  xrt_buffer *const *al[P];
  xrt_buffer **ol[P];
  for (int p = 0; p < P; p++) {
    xrt_device *d = xrt_client_device(c, p);
    assert_int_equal(xrt_buffer_from_host(c, d, &sa, a[p], &args[p][0]), XRT_OK);
    assert_int_equal(xrt_buffer_from_host(c, d, &sb, b[p], &args[p][1]), XRT_OK);
    al[p] = args[p], ol[p] = outs[p];
  }
  for (int rep = 0; rep < 2; rep++) { /* the second reuses cached blocks */
    xrt_event *done = NULL;
    assert_int_equal(xrt_execute_multi(exe, al, P, 2, ol, 3, NULL, &done), XRT_OK);
    assert_int_equal(xrt_event_await(done), XRT_OK);
    xrt_event_release(done);
    for (int p = 0; p < P; p++) {
      assert_int_equal(xrt_buffer_to_host(outs[p][0], ra[p], sizeof(float) * N), XRT_OK);
      assert_int_equal(xrt_buffer_to_host(outs[p][1], rb[p], sizeof(double) * M), XRT_OK);
      assert_int_equal(xrt_buffer_to_host(outs[p][2], ma[p], sizeof(float) * N), XRT_OK);
      for (int k = 0; k < 3; k++) xrt_buffer_release(outs[p][k]);
    }
    for (int i = 0; i < N; i++) {
      float s = a[3][i]; /* group order 3, 1, 0, 2 */
      s += a[1][i];
      s += a[0][i];
      s += a[2][i];
      float mx = a[0][i];
      for (int p = 1; p < P; p++) mx = a[p][i] > mx ? a[p][i] : mx;
      for (int p = 0; p < P; p++) {
        if (memcmp(&ra[p][i], &s, sizeof s) != 0 || ma[p][i] != mx)
          fail_msg("element %d of replica %d: sum %.9g (want %.9g), max %g "
                   "(want %g)", i, p, (double)ra[p][i], (double)s,
                   (double)ma[p][i], (double)mx);
      }
    }
    for (int i = 0; i < M; i++) {
      double s02 = b[2][i] + b[0][i], s13 = b[1][i] + b[3][i];
      assert_true(rb[0][i] == s02 && rb[2][i] == s02);
      assert_true(rb[1][i] == s13 && rb[3][i] == s13);
    }
  }
  xrt_client_release(c);
  for (int p = 0; p < P; p++) free(a[p]), free(ra[p]), free(ma[p]), free(b[p]), free(rb[p]);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_one_pass_matches_ordered_fold),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
