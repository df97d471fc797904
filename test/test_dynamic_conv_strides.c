/*
 * test_dynamic_conv_strides.c - JAX's 1-D strided convolution exports.
 *
 * conv_general_dilated_1d_stride_2_{even,odd}_dynamic.mlir of
 * ../shared/stablehlo/dynamic give their dynamic_conv two window_strides
 * for its one spatial dimension (both 2).  Refinement drops the repeat
 * (src/core/refine_infer.c, xrt__rconv_strides); these tests run both
 * exports for an even and an odd length and compare with a strided
 * convolution with SAME padding written here, and check that strides
 * that are not repeats of the last are still refused.  MIT licensed.
 */
#include "test_util.h"

#ifndef XRT_TEST_DYNAMIC_DIR
#define XRT_TEST_DYNAMIC_DIR "../shared/stablehlo/dynamic"
#endif

enum { CIN = 16, COUT = 16, KW = 4, STRIDE = 2 };

/* out[t][o] = sum over w, i of x[t * STRIDE + w - lo][i] * k[w][i][o],
 * with SAME padding: ceil(n / STRIDE) outputs, the padding split with the
 * smaller half first. */
static int64_t ref_conv_same(const float *x, int64_t n, const float *k,
                             double *out) {
  int64_t nout = (n + STRIDE - 1) / STRIDE;
  int64_t total = (nout - 1) * STRIDE + KW - n;
  int64_t lo = total > 0 ? total / 2 : 0;
  for (int64_t t = 0; t < nout; t++)
    for (int o = 0; o < COUT; o++) {
      double acc = 0;
      for (int w = 0; w < KW; w++) {
        int64_t at = t * STRIDE + w - lo;
        if (at < 0 || at >= n) continue;
        for (int i = 0; i < CIN; i++)
          acc += (double)x[at * CIN + i] * k[(w * CIN + i) * COUT + o];
      }
      out[t * COUT + o] = acc;
    }
  return nout;
}

/* Compiles text for (dim, 1 x n x CIN, KW x CIN x COUT) and runs it. */
static xrt_status run_conv(xrt_client *c, const char *text, int64_t n,
                           const float *x, const float *k, tu_out *out) {
  xrt_shape shapes[3] = {TU_SCALAR(XRT_S64), TU_SHAPE(XRT_F32, 1, n, CIN),
                         TU_SHAPE(XRT_F32, KW, CIN, COUT)};
  const void *data[3] = {&n, x, k};
  xrt_compile_options o;
  xrt_compile_options_init(&o);
  o.filename = "conv.mlir";
  o.num_arg_shapes = 3;
  o.arg_shapes = shapes;
  xrt_executable *e = NULL;
  xrt_buffer *args[3] = {0}, *res[1] = {0};
  xrt_device *dev = xrt_client_device(c, 0);
  memset(out, 0, sizeof *out);
  xrt_status s = xrt_compile(c, text, strlen(text), &o, &e);
  for (int i = 0; !s && i < 3; i++)
    s = xrt_buffer_from_host(c, dev, &shapes[i], data[i], &args[i]);
  if (!s) s = xrt_execute(e, dev, args, 3, res, 1, NULL);
  if (!s) s = tu_download(res, 1, out);
  if (s) tu_save_error();
  xrt_buffer_release(res[0]);
  for (int i = 0; i < 3; i++) xrt_buffer_release(args[i]);
  xrt_executable_release(e);
  return s;
}

static float *filled(size_t n, unsigned seed) {
  float *v = malloc(n * sizeof *v);
  for (size_t i = 0; i < n; i++)
    v[i] = (float)((i * 37u + seed * 11u) % 23u) / 8.0f - 1.25f;
  return v;
}

static void check_export(xrt_client *c, const char *file) {
  char path[1024];
  snprintf(path, sizeof path, "%s/%s", XRT_TEST_DYNAMIC_DIR, file);
  size_t len;
  char *text = tu_read_file(path, &len);
  if (!text) {
    print_message("skipped: %s not found\n", path);
    skip();
  }
  float *k = filled((size_t)KW * CIN * COUT, 2);
  for (int64_t n = 6; n <= 9; n++) { /* even and odd lengths */
    float *x = filled((size_t)n * CIN, 1);
    double want[5 * COUT];
    int64_t nout = ref_conv_same(x, n, k, want);
    tu_out o;
    xrt_status s = run_conv(c, text, n, x, k, &o);
    if (s) fail_msg("%s (n = %lld): %s", file, (long long)n, tu_msg);
    xrt_shape ws = TU_SHAPE(XRT_F32, 1, nout, COUT);
    tu_assert_shape(&o, 0, ws);
    tu_assert_f32_near(&o, 0, want, (size_t)(nout * COUT), 1e-5);
    tu_out_free(&o);
    free(x);
  }
  free(k);
  free(text);
}

static void test_stride_2_even(void **state) {
  check_export((xrt_client *)*state,
               "conv_general_dilated_1d_stride_2_even_dynamic.mlir");
}

static void test_stride_2_odd(void **state) {
  check_export((xrt_client *)*state,
               "conv_general_dilated_1d_stride_2_odd_dynamic.mlir");
}

/* A dynamic_conv of one spatial dimension with these window_strides. */
static xrt_status compile_strides(xrt_client *c, const char *strides) {
  char text[1024];
  snprintf(text, sizeof text,
           "func.func @main(%%n: tensor<i64>, %%x: tensor<1x?x16xf32>, "
           "%%k: tensor<4x16x16xf32>) -> tensor<1x?x16xf32> {\n"
           "  %%p = stablehlo.constant dense<[[1, 2]]> : tensor<1x2xi32>\n"
           "  %%r = \"stablehlo.dynamic_conv\"(%%x, %%k, %%p) "
           "{batch_group_count = 1 : i64, dimension_numbers = "
           "#stablehlo.conv<[b, 0, f]x[0, i, o]->[b, 0, f]>, "
           "feature_group_count = 1 : i64, window_strides = array<i64: %s>} "
           ": (tensor<1x?x16xf32>, tensor<4x16x16xf32>, tensor<1x2xi32>) -> "
           "tensor<1x?x16xf32>\n"
           "  func.return %%r : tensor<1x?x16xf32>\n}\n",
           strides);
  xrt_shape shapes[3] = {TU_SCALAR(XRT_S64), TU_SHAPE(XRT_F32, 1, 8, CIN),
                         TU_SHAPE(XRT_F32, KW, CIN, COUT)};
  xrt_compile_options o;
  xrt_compile_options_init(&o);
  o.filename = "strides.mlir";
  o.num_arg_shapes = 3;
  o.arg_shapes = shapes;
  xrt_executable *e = NULL;
  xrt_status s = xrt_compile(c, text, strlen(text), &o, &e);
  if (s) tu_save_error();
  xrt_executable_release(e);
  return s;
}

static void test_other_strides(void **state) {
  xrt_client *c = (xrt_client *)*state;
  /* (8 + 1 + 2 - 4) / 2 + 1 = 4 outputs: the repeat is dropped. */
  assert_int_equal(compile_strides(c, "2, 2"), XRT_OK);
  assert_int_equal(compile_strides(c, "3, 3, 3"), XRT_OK);
  assert_int_equal(compile_strides(c, "2"), XRT_OK);
  /* Not a repeat of the last: refused, located (the output length does
   * not follow from such strides). */
  assert_int_equal(compile_strides(c, "2, 3"), XRT_INVALID_ARGUMENT);
  TU_ASSERT_PREFIX(tu_msg, "strides.mlir:3:8: stablehlo.dynamic_conv:");
  TU_ASSERT_CONTAINS(tu_msg, "stays dynamic");
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_stride_2_even),
      cmocka_unit_test(test_stride_2_odd),
      cmocka_unit_test(test_other_strides),
  };
  return cmocka_run_group_tests(tests, tu_setup_client, tu_teardown_client);
}
