/*
 * test_sim_movement.c - the simulator's data-movement kernels of
 * src/sim/move.c swept over element types: clamp (a kernel per integer
 * width and signedness, per float and small float format) and select (a
 * kernel per element size, 1 to 16 bytes), each between optimization
 * barriers so that no fusion replaces the kernel.  Values go in and come
 * out as f32 through convert, and are ones every type holds exactly, so
 * that the expected results are the same small table for every type.
 * Also iota in every type (the simulator stores its values with
 * sim_store): sub-byte integers wrap, small floats round to nearest even
 * and saturate at their largest finite value.  And a concatenate of
 * operands of a megabyte, copied on the device's threads.
 * Issue #25 (coverage of src/sim).
 */
#include "test_util.h"

static int setup(void **state) { return tu_setup_client(state); }
static int teardown(void **state) { return tu_teardown_client(state); }

typedef struct clamp_case {
  const char *type;
  float x[4], lo, hi;
  float want[4]; /* clamp(lo, x, hi) */
} clamp_case;

static const clamp_case kClamp[] = {
    /* unsigned and signed integers of every width, and i1 */
    {"i8", {0, 1, 2, 3}, 1, 2, {1, 1, 2, 2}},
    {"i16", {0, 1, 2, 3}, 1, 2, {1, 1, 2, 2}},
    {"ui8", {0, 1, 2, 3}, 1, 2, {1, 1, 2, 2}},
    {"ui16", {0, 1, 2, 3}, 1, 2, {1, 1, 2, 2}},
    {"ui32", {0, 1, 2, 3}, 1, 2, {1, 1, 2, 2}},
    {"ui64", {0, 1, 2, 3}, 1, 2, {1, 1, 2, 2}},
    {"ui4", {0, 1, 2, 3}, 1, 2, {1, 1, 2, 2}},
    {"ui2", {0, 1, 2, 3}, 1, 2, {1, 1, 2, 2}},
    {"i4", {-2, -1, 0, 1}, -1, 0, {-1, -1, 0, 0}},
    {"i2", {-2, -1, 0, 1}, -1, 0, {-1, -1, 0, 0}},
    {"i1", {0, 1, 0, 1}, 1, 1, {1, 1, 1, 1}},
    /* floats and small floats: 0.5, 1, 2, 4 are in every format (f8E8M0FNU
     * holds powers of two only) */
    {"f16", {0.5f, 1, 2, 4}, 1, 2, {1, 1, 2, 2}},
    {"bf16", {0.5f, 1, 2, 4}, 1, 2, {1, 1, 2, 2}},
    {"f8E4M3FN", {0.5f, 1, 2, 4}, 1, 2, {1, 1, 2, 2}},
    {"f8E5M2", {0.5f, 1, 2, 4}, 1, 2, {1, 1, 2, 2}},
    {"f8E4M3FNUZ", {0.5f, 1, 2, 4}, 1, 2, {1, 1, 2, 2}},
    {"f8E5M2FNUZ", {0.5f, 1, 2, 4}, 1, 2, {1, 1, 2, 2}},
    {"f8E4M3B11FNUZ", {0.5f, 1, 2, 4}, 1, 2, {1, 1, 2, 2}},
    {"f8E3M4", {0.5f, 1, 2, 4}, 1, 2, {1, 1, 2, 2}},
    {"f8E4M3", {0.5f, 1, 2, 4}, 1, 2, {1, 1, 2, 2}},
    {"f8E8M0FNU", {0.5f, 1, 2, 4}, 1, 2, {1, 1, 2, 2}},
    {"f6E2M3FN", {0.5f, 1, 2, 4}, 1, 2, {1, 1, 2, 2}},
    {"f6E3M2FN", {0.5f, 1, 2, 4}, 1, 2, {1, 1, 2, 2}},
    {"f4E2M1FN", {0.5f, 1, 2, 4}, 1, 2, {1, 1, 2, 2}},
};

/* clamp(lo, x, hi) and select(p, x, clamp) in type T, p = [1, 0, 1, 0],
 * with barriers around both. */
static void run_clamp_select(void **state, const clamp_case *c) {
  char prog[4096];
  snprintf(
      prog, sizeof prog,
      "func.func @main(%%x: tensor<4xf32>, %%l: tensor<f32>, %%h: tensor<f32>, %%p: tensor<4xi1>) -> (tensor<4xf32>, tensor<4xf32>) {\n"
      "  %%xt = stablehlo.convert %%x : (tensor<4xf32>) -> tensor<4x%s>\n"
      "  %%lt = stablehlo.convert %%l : (tensor<f32>) -> tensor<%s>\n"
      "  %%ht = stablehlo.convert %%h : (tensor<f32>) -> tensor<%s>\n"
      "  %%a:3 = stablehlo.optimization_barrier %%xt, %%lt, %%ht : tensor<4x%s>, tensor<%s>, tensor<%s>\n"
      "  %%c = stablehlo.clamp %%a#1, %%a#0, %%a#2 : (tensor<%s>, tensor<4x%s>, tensor<%s>) -> tensor<4x%s>\n"
      "  %%s = stablehlo.select %%p, %%a#0, %%c : tensor<4xi1>, tensor<4x%s>\n"
      "  %%b:2 = stablehlo.optimization_barrier %%c, %%s : tensor<4x%s>, tensor<4x%s>\n"
      "  %%cf = stablehlo.convert %%b#0 : (tensor<4x%s>) -> tensor<4xf32>\n"
      "  %%sf = stablehlo.convert %%b#1 : (tensor<4x%s>) -> tensor<4xf32>\n"
      "  return %%cf, %%sf : tensor<4xf32>, tensor<4xf32>\n"
      "}\n",
      c->type, c->type, c->type, c->type, c->type, c->type, c->type, c->type,
      c->type, c->type, c->type, c->type, c->type, c->type, c->type);
  const uint8_t p[4] = {1, 0, 1, 0};
  tu_in in[4] = {{TU_SHAPE(XRT_F32, 4), c->x},
                 {TU_SCALAR(XRT_F32), &c->lo},
                 {TU_SCALAR(XRT_F32), &c->hi},
                 {TU_SHAPE(XRT_PRED, 4), p}};
  tu_out o;
  xrt_status st = tu_run((xrt_client *)*state, prog, 4, in, &o);
  if (st != XRT_OK) fail_msg("%s: %s", c->type, tu_msg);
  const float sel[4] = {c->x[0], c->want[1], c->x[2], c->want[3]};
  assert_int_equal(o.bytes[0], sizeof c->want);
  if (memcmp(o.data[0], c->want, sizeof c->want) != 0)
    fail_msg("%s: clamp differs", c->type);
  if (memcmp(o.data[1], sel, sizeof sel) != 0)
    fail_msg("%s: select differs", c->type);
  tu_out_free(&o);
}

static void test_clamp_select_types(void **state) {
  for (size_t i = 0; i < TU_COUNT(kClamp); i++)
    run_clamp_select(state, &kClamp[i]);
}

/* select of 16-byte elements (complex<f64>): p = [1, 0, 1, 0] picks
 * between x + 0i and (x + 1) + 2xi. */
static void test_select_complex128(void **state) {
  const char *prog =
      "func.func @main(%x: tensor<4xf64>, %p: tensor<4xi1>) -> (tensor<4xf64>, tensor<4xf64>) {\n"
      "  %zero = stablehlo.constant dense<0.0> : tensor<4xf64>\n"
      "  %one = stablehlo.constant dense<1.0> : tensor<4xf64>\n"
      "  %x1 = stablehlo.add %x, %one : tensor<4xf64>\n"
      "  %x2 = stablehlo.add %x, %x : tensor<4xf64>\n"
      "  %a = stablehlo.complex %x, %zero : tensor<4xcomplex<f64>>\n"
      "  %b = stablehlo.complex %x1, %x2 : tensor<4xcomplex<f64>>\n"
      "  %o:2 = stablehlo.optimization_barrier %a, %b : tensor<4xcomplex<f64>>, tensor<4xcomplex<f64>>\n"
      "  %s = stablehlo.select %p, %o#0, %o#1 : tensor<4xi1>, tensor<4xcomplex<f64>>\n"
      "  %t = stablehlo.optimization_barrier %s : tensor<4xcomplex<f64>>\n"
      "  %re = stablehlo.real %t : (tensor<4xcomplex<f64>>) -> tensor<4xf64>\n"
      "  %im = stablehlo.imag %t : (tensor<4xcomplex<f64>>) -> tensor<4xf64>\n"
      "  return %re, %im : tensor<4xf64>, tensor<4xf64>\n"
      "}\n";
  const double x[4] = {1.5, -2, 3.25, 8};
  const uint8_t p[4] = {1, 0, 1, 0};
  tu_in in[2] = {{TU_SHAPE(XRT_F64, 4), x}, {TU_SHAPE(XRT_PRED, 4), p}};
  tu_out o;
  TU_RUN_OK((xrt_client *)*state, prog, 2, in, &o);
  TU_ASSERT_OUT(&o, 0, double, 1.5, -1, 3.25, 9);
  TU_ASSERT_OUT(&o, 1, double, 0, -4, 0, 16);
  tu_out_free(&o);
}

/* iota of 10 in type T, converted to f32. */
static void test_iota_types(void **state) {
  static const struct {
    const char *type;
    float want[10];
  } cases[] = {
      {"i16", {0, 1, 2, 3, 4, 5, 6, 7, 8, 9}},
      {"ui16", {0, 1, 2, 3, 4, 5, 6, 7, 8, 9}},
      {"ui32", {0, 1, 2, 3, 4, 5, 6, 7, 8, 9}},
      {"f16", {0, 1, 2, 3, 4, 5, 6, 7, 8, 9}},
      {"bf16", {0, 1, 2, 3, 4, 5, 6, 7, 8, 9}},
      /* wrapping: i4 holds -8..7, i2 -2..1, ui2 0..3 */
      {"i4", {0, 1, 2, 3, 4, 5, 6, 7, -8, -7}},
      {"i2", {0, 1, -2, -1, 0, 1, -2, -1, 0, 1}},
      {"ui2", {0, 1, 2, 3, 0, 1, 2, 3, 0, 1}},
      /* three or more mantissa bits: exact */
      {"f8E4M3FN", {0, 1, 2, 3, 4, 5, 6, 7, 8, 9}},
      {"f8E3M4", {0, 1, 2, 3, 4, 5, 6, 7, 8, 9}},
      /* two mantissa bits: 9 is a tie between 8 and 10, to even 8 */
      {"f8E5M2", {0, 1, 2, 3, 4, 5, 6, 7, 8, 8}},
      {"f6E3M2FN", {0, 1, 2, 3, 4, 5, 6, 7, 8, 8}},
      /* largest finite 7.5: 8 and 9 saturate */
      {"f6E2M3FN", {0, 1, 2, 3, 4, 5, 6, 7, 7.5f, 7.5f}},
      /* one mantissa bit, largest 6: 5 ties to 4; 7, 8, 9 saturate */
      {"f4E2M1FN", {0, 1, 2, 3, 4, 4, 6, 6, 6, 6}},
  };
  for (size_t k = 0; k < TU_COUNT(cases); k++) {
    char prog[1024];
    snprintf(prog, sizeof prog,
             "func.func @main() -> tensor<10xf32> {\n"
             "  %%i = stablehlo.iota dim = 0 : tensor<10x%s>\n"
             "  %%b = stablehlo.optimization_barrier %%i : tensor<10x%s>\n"
             "  %%f = stablehlo.convert %%b : (tensor<10x%s>) -> tensor<10xf32>\n"
             "  return %%f : tensor<10xf32>\n"
             "}\n",
             cases[k].type, cases[k].type, cases[k].type);
    tu_out o;
    if (tu_run((xrt_client *)*state, prog, 0, NULL, &o) != XRT_OK)
      fail_msg("%s: %s", cases[k].type, tu_msg);
    assert_int_equal(o.bytes[0], sizeof cases[k].want);
    const float *got = (const float *)o.data[0];
    for (int i = 0; i < 10; i++)
      if (got[i] != cases[k].want[i])
        fail_msg("%s: [%d] = %g, want %g", cases[k].type, i, got[i],
                 cases[k].want[i]);
    tu_out_free(&o);
  }
}

/* A concatenate along the dimension after a batch of 1 (NCHW features):
 * operands of a megabyte and more, copied on the device's threads, an
 * empty one among them; on one thread and on two. */
static void test_concat_big_operands(void **state) {
  (void)state;
  const int64_t R = 1024, A = 300, B = 260;
  const char *prog =
      "func.func @main(%a: tensor<1x300x1024xf32>, %e: tensor<1x0x1024xf32>, "
      "%b: tensor<1x260x1024xf32>) -> tensor<1x560x1024xf32> {\n"
      "  %0 = stablehlo.concatenate %a, %e, %b, dim = 1 : "
      "(tensor<1x300x1024xf32>, tensor<1x0x1024xf32>, tensor<1x260x1024xf32>) "
      "-> tensor<1x560x1024xf32>\n"
      "  func.return %0 : tensor<1x560x1024xf32>\n}\n";
  float *a = malloc(sizeof *a * (size_t)(A * R));
  float *b = malloc(sizeof *b * (size_t)(B * R));
  assert_true(a && b);
  for (int64_t i = 0; i < A * R; i++) a[i] = (float)i;
  for (int64_t i = 0; i < B * R; i++) b[i] = -(float)i - 1.0f;
  tu_in in[3] = {{TU_SHAPE(XRT_F32, 1, A, R), a},
                 {TU_SHAPE(XRT_F32, 1, 0, R), a},
                 {TU_SHAPE(XRT_F32, 1, B, R), b}};
  for (int threads = 1; threads <= 2; threads++) {
    xrt_client *c = tu_client(1, threads, 0);
    assert_non_null(c);
    tu_out o;
    TU_RUN_OK(c, prog, 3, in, &o);
    assert_int_equal(o.bytes[0], sizeof(float) * (size_t)((A + B) * R));
    const float *got = (const float *)o.data[0];
    assert_memory_equal(got, a, sizeof(float) * (size_t)(A * R));
    assert_memory_equal(got + A * R, b, sizeof(float) * (size_t)(B * R));
    tu_out_free(&o);
    xrt_client_release(c);
  }
  free(a), free(b);
}

TU_MAIN(setup, teardown, cmocka_unit_test(test_clamp_select_types),
        cmocka_unit_test(test_select_complex128),
        cmocka_unit_test(test_iota_types),
        cmocka_unit_test(test_concat_big_operands))
