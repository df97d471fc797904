/* test_ops.c - every issue-#2 op through compile + execute on hand-computed
 * values; host functions; execute misuse; check failures. */
#include <pthread.h>

#include "test_util.h"

#define C(state) ((xrt_client *)*(state))
#define IN(dt, data, ...) ((tu_in){TU_SHAPE((dt), __VA_ARGS__), (data)})
#define IN0(dt, data) ((tu_in){TU_SCALAR(dt), (data)})

static char prog[4096];

/* %0 = OP %a : T */
static void unary(xrt_client *c, const char *op, const char *t, tu_in a,
                  tu_out *o) {
  snprintf(prog, sizeof prog,
           "func.func @main(%%a: %s) -> %s {\n"
           "  %%0 = stablehlo.%s %%a : %s\n"
           "  func.return %%0 : %s\n}\n",
           t, t, op, t, t);
  TU_RUN_OK(c, prog, 1, &a, o);
}

/* %0 = OP %a : (TIN) -> TOUT */
static void unary_fn(xrt_client *c, const char *op, const char *tin,
                     const char *tout, tu_in a, tu_out *o) {
  snprintf(prog, sizeof prog,
           "func.func @main(%%a: %s) -> %s {\n"
           "  %%0 = stablehlo.%s %%a : (%s) -> %s\n"
           "  func.return %%0 : %s\n}\n",
           tin, tout, op, tin, tout, tout);
  TU_RUN_OK(c, prog, 1, &a, o);
}

/* %0 = OP %a, %b : T */
static void binary(xrt_client *c, const char *op, const char *t, tu_in a,
                   tu_in b, tu_out *o) {
  tu_in in[2] = {a, b};
  snprintf(prog, sizeof prog,
           "func.func @main(%%a: %s, %%b: %s) -> %s {\n"
           "  %%0 = stablehlo.%s %%a, %%b : %s\n"
           "  func.return %%0 : %s\n}\n",
           t, t, t, op, t, t);
  TU_RUN_OK(c, prog, 2, in, o);
}

/* compare DIR, %a, %b, TYPE on 4-element tensors of element type et */
static void compare4(xrt_client *c, const char *dir, const char *ctype,
                     const char *et, tu_in a, tu_in b, tu_out *o) {
  tu_in in[2] = {a, b};
  snprintf(prog, sizeof prog,
           "func.func @main(%%a: tensor<4x%s>, %%b: tensor<4x%s>) -> tensor<4xi1> {\n"
           "  %%0 = stablehlo.compare %s, %%a, %%b, %s : (tensor<4x%s>, "
           "tensor<4x%s>) -> tensor<4xi1>\n"
           "  func.return %%0 : tensor<4xi1>\n}\n",
           et, et, dir, ctype, et, et);
  TU_RUN_OK(c, prog, 2, in, o);
}

/* ---- elementwise arithmetic ---- */

static void test_add_f32(void **state) {
  const float a[4] = {1.5f, -2, 3.25f, 0}, b[4] = {0.5f, 2, -1, -0.0f};
  tu_out o;
  binary(C(state), "add", "tensor<4xf32>", IN(XRT_F32, a, 4), IN(XRT_F32, b, 4), &o);
  tu_assert_shape(&o, 0, TU_SHAPE(XRT_F32, 4));
  TU_ASSERT_OUT(&o, 0, float, 2, 0, 2.25f, 0);
  tu_out_free(&o);
}

static void test_subtract_i32(void **state) {
  const int32_t a[4] = {10, -5, 0, INT32_MIN}, b[4] = {3, 7, -2, 1};
  tu_out o;
  binary(C(state), "subtract", "tensor<4xi32>", IN(XRT_S32, a, 4),
         IN(XRT_S32, b, 4), &o);
  TU_ASSERT_OUT(&o, 0, int32_t, 7, -12, 2, INT32_MAX);
  tu_out_free(&o);
}

static void test_multiply_f64(void **state) {
  const double a[3] = {1.5, -2, 0.25}, b[3] = {2, 3, -4};
  tu_out o;
  binary(C(state), "multiply", "tensor<3xf64>", IN(XRT_F64, a, 3),
         IN(XRT_F64, b, 3), &o);
  TU_ASSERT_OUT(&o, 0, double, 3, -6, -1);
  tu_out_free(&o);
}

static void test_divide(void **state) {
  const int32_t a[4] = {17, -17, 17, -17}, b[4] = {3, 3, -3, -3};
  tu_out o;
  binary(C(state), "divide", "tensor<4xi32>", IN(XRT_S32, a, 4),
         IN(XRT_S32, b, 4), &o);
  TU_ASSERT_OUT(&o, 0, int32_t, 5, -5, -5, 5); /* truncates toward zero */
  tu_out_free(&o);
  const float fa[4] = {1, -3, 1, 0}, fb[4] = {4, 2, 0, 0};
  binary(C(state), "divide", "tensor<4xf32>", IN(XRT_F32, fa, 4),
         IN(XRT_F32, fb, 4), &o);
  const float *r = (const float *)o.data[0];
  assert_true(r[0] == 0.25f && r[1] == -1.5f);
  assert_true(isinf(r[2]) && r[2] > 0);
  assert_true(isnan(r[3]));
  tu_out_free(&o);
  const uint64_t ua[2] = {UINT64_MAX, 20}, ub[2] = {2, 7};
  binary(C(state), "divide", "tensor<2xui64>", IN(XRT_U64, ua, 2),
         IN(XRT_U64, ub, 2), &o);
  TU_ASSERT_OUT(&o, 0, uint64_t, UINT64_MAX / 2, 2);
  tu_out_free(&o);
}

static void test_remainder(void **state) {
  const int32_t a[4] = {17, -17, 17, -17}, b[4] = {3, 3, -3, -3};
  tu_out o;
  binary(C(state), "remainder", "tensor<4xi32>", IN(XRT_S32, a, 4),
         IN(XRT_S32, b, 4), &o);
  TU_ASSERT_OUT(&o, 0, int32_t, 2, -2, 2, -2); /* sign of the dividend */
  tu_out_free(&o);
  const float fa[3] = {5.5f, -5.5f, 5.5f}, fb[3] = {2, 2, -2};
  binary(C(state), "remainder", "tensor<3xf32>", IN(XRT_F32, fa, 3),
         IN(XRT_F32, fb, 3), &o);
  TU_ASSERT_OUT(&o, 0, float, 1.5f, -1.5f, 1.5f);
  tu_out_free(&o);
}

/* Integer x/0 and INT_MIN/-1 are not defined by the spec: only check that
 * execution does not crash (SIGFPE would kill this test). */
static void test_divide_undefined_cases(void **state) {
  const int32_t a[2] = {7, INT32_MIN}, b[2] = {0, -1};
  tu_in in[2] = {IN(XRT_S32, a, 2), IN(XRT_S32, b, 2)};
  const char *ops[2] = {"divide", "remainder"};
  for (int i = 0; i < 2; i++) {
    snprintf(prog, sizeof prog,
             "func.func @main(%%a: tensor<2xi32>, %%b: tensor<2xi32>) -> tensor<2xi32> {\n"
             "  %%0 = stablehlo.%s %%a, %%b : tensor<2xi32>\n"
             "  func.return %%0 : tensor<2xi32>\n}\n",
             ops[i]);
    tu_out o;
    (void)tu_run(C(state), prog, 2, in, &o);
    tu_out_free(&o);
  }
}

static void test_maximum_minimum(void **state) {
  const float a[4] = {1, 5, -2, NAN}, b[4] = {3, 2, -2, 1};
  tu_out o;
  binary(C(state), "maximum", "tensor<4xf32>", IN(XRT_F32, a, 4),
         IN(XRT_F32, b, 4), &o);
  const float *r = (const float *)o.data[0];
  assert_true(r[0] == 3 && r[1] == 5 && r[2] == -2 && isnan(r[3]));
  tu_out_free(&o);
  binary(C(state), "minimum", "tensor<4xf32>", IN(XRT_F32, a, 4),
         IN(XRT_F32, b, 4), &o);
  r = (const float *)o.data[0];
  assert_true(r[0] == 1 && r[1] == 2 && r[2] == -2 && isnan(r[3]));
  tu_out_free(&o);
  const int8_t ia[3] = {-128, 5, 0}, ib[3] = {127, -5, 0};
  binary(C(state), "maximum", "tensor<3xi8>", IN(XRT_S8, ia, 3),
         IN(XRT_S8, ib, 3), &o);
  TU_ASSERT_OUT(&o, 0, int8_t, 127, 5, 0);
  tu_out_free(&o);
  const uint8_t ua[2] = {200, 3}, ub[2] = {100, 4};
  binary(C(state), "minimum", "tensor<2xui8>", IN(XRT_U8, ua, 2),
         IN(XRT_U8, ub, 2), &o);
  TU_ASSERT_OUT(&o, 0, uint8_t, 100, 3);
  tu_out_free(&o);
}

static void test_power(void **state) {
  const float a[3] = {2, 3, 4}, b[3] = {3, 2, 0.5f};
  tu_out o;
  binary(C(state), "power", "tensor<3xf32>", IN(XRT_F32, a, 3),
         IN(XRT_F32, b, 3), &o);
  const double want[3] = {8, 9, 2};
  tu_assert_f32_near(&o, 0, want, 3, 1e-6);
  tu_out_free(&o);
  const int32_t ia[4] = {2, 3, -2, 5}, ib[4] = {10, 3, 3, 0};
  binary(C(state), "power", "tensor<4xi32>", IN(XRT_S32, ia, 4),
         IN(XRT_S32, ib, 4), &o);
  TU_ASSERT_OUT(&o, 0, int32_t, 1024, 27, -8, 1);
  tu_out_free(&o);
}

static void test_negate_abs(void **state) {
  const int32_t a[3] = {1, -2, 0};
  tu_out o;
  unary(C(state), "negate", "tensor<3xi32>", IN(XRT_S32, a, 3), &o);
  TU_ASSERT_OUT(&o, 0, int32_t, -1, 2, 0);
  tu_out_free(&o);
  const float f[3] = {1.5f, 0.0f, -0.0f};
  unary(C(state), "negate", "tensor<3xf32>", IN(XRT_F32, f, 3), &o);
  TU_ASSERT_OUT(&o, 0, float, -1.5f, -0.0f, 0.0f);
  tu_out_free(&o);
  const float g[3] = {-1.5f, 2, -0.0f};
  unary(C(state), "abs", "tensor<3xf32>", IN(XRT_F32, g, 3), &o);
  TU_ASSERT_OUT(&o, 0, float, 1.5f, 2, 0.0f);
  tu_out_free(&o);
  const int32_t h[3] = {-3, 4, 0};
  unary(C(state), "abs", "tensor<3xi32>", IN(XRT_S32, h, 3), &o);
  TU_ASSERT_OUT(&o, 0, int32_t, 3, 4, 0);
  tu_out_free(&o);
}

/* A libm reference applied to the f32 inputs, computed in double. */
typedef double (*ref_fn)(double);
static double ref_rsqrt(double x) { return 1 / sqrt(x); }
static double ref_logistic(double x) { return 1 / (1 + exp(-x)); }

static void check_transcendental(void **state, const char *op, ref_fn ref,
                                 const float *x) {
  tu_out o;
  unary(C(state), op, "tensor<3xf32>", IN(XRT_F32, x, 3), &o);
  double want[3];
  for (int i = 0; i < 3; i++) want[i] = ref((double)x[i]);
  tu_assert_f32_near(&o, 0, want, 3, 2e-6);
  tu_out_free(&o);
}

static void test_transcendentals(void **state) {
  const float ex[3] = {0, 1, -2.5f}, lg[3] = {1, 2.718281828f, 10};
  const float sq[3] = {4, 2.25f, 2}, rs[3] = {4, 0.25f, 2};
  const float th[3] = {0, 1, -0.5f}, lo[3] = {0, 2, -1};
  const float sn[3] = {0, 1.5707963f, 1}, cs[3] = {0, 3.14159265f, 1};
  check_transcendental(state, "exponential", exp, ex);
  check_transcendental(state, "log", log, lg);
  check_transcendental(state, "sqrt", sqrt, sq);
  check_transcendental(state, "rsqrt", ref_rsqrt, rs);
  check_transcendental(state, "tanh", tanh, th);
  check_transcendental(state, "logistic", ref_logistic, lo);
  check_transcendental(state, "sine", sin, sn);
  check_transcendental(state, "cosine", cos, cs);
}

static void test_floor_ceil_sign(void **state) {
  const float x[5] = {-1.5f, 1.5f, -0.0f, 2, -0.5f};
  tu_out o;
  unary(C(state), "floor", "tensor<5xf32>", IN(XRT_F32, x, 5), &o);
  TU_ASSERT_OUT(&o, 0, float, -2, 1, -0.0f, 2, -1);
  tu_out_free(&o);
  unary(C(state), "ceil", "tensor<5xf32>", IN(XRT_F32, x, 5), &o);
  TU_ASSERT_OUT(&o, 0, float, -1, 2, -0.0f, 2, -0.0f);
  tu_out_free(&o);
  const float s[4] = {-2.5f, 0, 3, -0.0f};
  unary(C(state), "sign", "tensor<4xf32>", IN(XRT_F32, s, 4), &o);
  TU_ASSERT_OUT(&o, 0, float, -1, 0, 1, -0.0f);
  tu_out_free(&o);
  const int32_t i[3] = {-5, 0, 7};
  unary(C(state), "sign", "tensor<3xi32>", IN(XRT_S32, i, 3), &o);
  TU_ASSERT_OUT(&o, 0, int32_t, -1, 0, 1);
  tu_out_free(&o);
}

/* ---- logical ---- */

static void test_bitwise_i32(void **state) {
  const int32_t a[3] = {12, -1, 0}, b[3] = {10, 5, 7};
  tu_out o;
  binary(C(state), "and", "tensor<3xi32>", IN(XRT_S32, a, 3), IN(XRT_S32, b, 3), &o);
  TU_ASSERT_OUT(&o, 0, int32_t, 8, 5, 0);
  tu_out_free(&o);
  binary(C(state), "or", "tensor<3xi32>", IN(XRT_S32, a, 3), IN(XRT_S32, b, 3), &o);
  TU_ASSERT_OUT(&o, 0, int32_t, 14, -1, 7);
  tu_out_free(&o);
  binary(C(state), "xor", "tensor<3xi32>", IN(XRT_S32, a, 3), IN(XRT_S32, b, 3), &o);
  TU_ASSERT_OUT(&o, 0, int32_t, 6, -6, 7);
  tu_out_free(&o);
  unary(C(state), "not", "tensor<3xi32>", IN(XRT_S32, a, 3), &o);
  TU_ASSERT_OUT(&o, 0, int32_t, -13, 0, -1);
  tu_out_free(&o);
  const uint8_t u[2] = {0x0F, 0};
  unary(C(state), "not", "tensor<2xui8>", IN(XRT_U8, u, 2), &o);
  TU_ASSERT_OUT(&o, 0, uint8_t, 0xF0, 0xFF);
  tu_out_free(&o);
}

static void test_logical_pred(void **state) {
  const uint8_t a[4] = {1, 1, 0, 0}, b[4] = {1, 0, 1, 0};
  tu_out o;
  binary(C(state), "and", "tensor<4xi1>", IN(XRT_PRED, a, 4), IN(XRT_PRED, b, 4), &o);
  TU_ASSERT_OUT(&o, 0, uint8_t, 1, 0, 0, 0);
  tu_out_free(&o);
  binary(C(state), "or", "tensor<4xi1>", IN(XRT_PRED, a, 4), IN(XRT_PRED, b, 4), &o);
  TU_ASSERT_OUT(&o, 0, uint8_t, 1, 1, 1, 0);
  tu_out_free(&o);
  binary(C(state), "xor", "tensor<4xi1>", IN(XRT_PRED, a, 4), IN(XRT_PRED, b, 4), &o);
  TU_ASSERT_OUT(&o, 0, uint8_t, 0, 1, 1, 0);
  tu_out_free(&o);
  unary(C(state), "not", "tensor<4xi1>", IN(XRT_PRED, a, 4), &o);
  TU_ASSERT_OUT(&o, 0, uint8_t, 0, 0, 1, 1);
  tu_out_free(&o);
}

/* ---- compare ---- */

static void test_compare_float(void **state) {
  const float a[4] = {1, 2, 3, NAN}, b[4] = {2, 2, 1, NAN};
  static const struct { const char *dir; uint8_t want[4]; } rows[] = {
      {"EQ", {0, 1, 0, 0}}, {"NE", {1, 0, 1, 1}}, {"LT", {1, 0, 0, 0}},
      {"LE", {1, 1, 0, 0}}, {"GT", {0, 0, 1, 0}}, {"GE", {0, 1, 1, 0}},
  };
  for (size_t i = 0; i < TU_COUNT(rows); i++) {
    tu_out o;
    compare4(C(state), rows[i].dir, "FLOAT", "f32", IN(XRT_F32, a, 4),
             IN(XRT_F32, b, 4), &o);
    tu_assert_shape(&o, 0, TU_SHAPE(XRT_PRED, 4));
    assert_memory_equal(o.data[0], rows[i].want, 4);
    tu_out_free(&o);
  }
}

static void test_compare_signed_unsigned(void **state) {
  const int32_t a[4] = {-1, 2, 3, INT32_MIN}, b[4] = {1, 2, -3, INT32_MAX};
  tu_out o;
  compare4(C(state), "LT", "SIGNED", "i32", IN(XRT_S32, a, 4), IN(XRT_S32, b, 4), &o);
  TU_ASSERT_OUT(&o, 0, uint8_t, 1, 0, 0, 1);
  tu_out_free(&o);
  compare4(C(state), "GE", "SIGNED", "i32", IN(XRT_S32, a, 4), IN(XRT_S32, b, 4), &o);
  TU_ASSERT_OUT(&o, 0, uint8_t, 0, 1, 1, 0);
  tu_out_free(&o);
  const uint32_t ua[4] = {0xFFFFFFFFu, 1, 0, 7}, ub[4] = {1, 1, 0xFFFFFFFFu, 7};
  compare4(C(state), "LT", "UNSIGNED", "ui32", IN(XRT_U32, ua, 4),
           IN(XRT_U32, ub, 4), &o);
  TU_ASSERT_OUT(&o, 0, uint8_t, 0, 0, 1, 0);
  tu_out_free(&o);
  compare4(C(state), "GT", "UNSIGNED", "ui32", IN(XRT_U32, ua, 4),
           IN(XRT_U32, ub, 4), &o);
  TU_ASSERT_OUT(&o, 0, uint8_t, 1, 0, 0, 0);
  tu_out_free(&o);
  compare4(C(state), "NE", "UNSIGNED", "ui32", IN(XRT_U32, ua, 4),
           IN(XRT_U32, ub, 4), &o);
  TU_ASSERT_OUT(&o, 0, uint8_t, 1, 0, 1, 0);
  tu_out_free(&o);
}

static void test_compare_totalorder(void **state) {
  /* -NaN < -inf < ... < -0 < +0 < ... < +inf < +NaN */
  const float nan = tu_bits_f32(0x7FC00000u), mnan = tu_bits_f32(0xFFC00000u);
  const float a[4] = {-0.0f, nan, mnan, 1}, b[4] = {0.0f, nan, -INFINITY, nan};
  tu_out o;
  compare4(C(state), "LT", "TOTALORDER", "f32", IN(XRT_F32, a, 4),
           IN(XRT_F32, b, 4), &o);
  TU_ASSERT_OUT(&o, 0, uint8_t, 1, 0, 1, 1);
  tu_out_free(&o);
  compare4(C(state), "EQ", "TOTALORDER", "f32", IN(XRT_F32, a, 4),
           IN(XRT_F32, b, 4), &o);
  TU_ASSERT_OUT(&o, 0, uint8_t, 0, 1, 0, 0);
  tu_out_free(&o);
}

/* ---- select, clamp ---- */

static void test_select(void **state) {
  const uint8_t p[3] = {1, 0, 1};
  const int32_t t[3] = {1, 2, 3}, f[3] = {4, 5, 6};
  tu_in in[3] = {IN(XRT_PRED, p, 3), IN(XRT_S32, t, 3), IN(XRT_S32, f, 3)};
  tu_out o;
  TU_RUN_OK(C(state),
            "func.func @main(%p: tensor<3xi1>, %t: tensor<3xi32>, %f: tensor<3xi32>) -> tensor<3xi32> {\n"
            "  %0 = stablehlo.select %p, %t, %f : (tensor<3xi1>, tensor<3xi32>, tensor<3xi32>) -> tensor<3xi32>\n"
            "  func.return %0 : tensor<3xi32>\n}\n",
            3, in, &o);
  TU_ASSERT_OUT(&o, 0, int32_t, 1, 5, 3);
  tu_out_free(&o);
  const uint8_t ps = 0;
  in[0] = IN0(XRT_PRED, &ps);
  TU_RUN_OK(C(state),
            "func.func @main(%p: tensor<i1>, %t: tensor<3xi32>, %f: tensor<3xi32>) -> tensor<3xi32> {\n"
            "  %0 = stablehlo.select %p, %t, %f : (tensor<i1>, tensor<3xi32>, tensor<3xi32>) -> tensor<3xi32>\n"
            "  func.return %0 : tensor<3xi32>\n}\n",
            3, in, &o);
  TU_ASSERT_OUT(&o, 0, int32_t, 4, 5, 6);
  tu_out_free(&o);
}

static void test_clamp(void **state) {
  const float lo = 0, hi = 10, x[4] = {-1, 5, 11, 10};
  tu_in in[3] = {IN0(XRT_F32, &lo), IN(XRT_F32, x, 4), IN0(XRT_F32, &hi)};
  tu_out o;
  TU_RUN_OK(C(state),
            "func.func @main(%lo: tensor<f32>, %x: tensor<4xf32>, %hi: tensor<f32>) -> tensor<4xf32> {\n"
            "  %0 = stablehlo.clamp %lo, %x, %hi : (tensor<f32>, tensor<4xf32>, tensor<f32>) -> tensor<4xf32>\n"
            "  func.return %0 : tensor<4xf32>\n}\n",
            3, in, &o);
  TU_ASSERT_OUT(&o, 0, float, 0, 5, 10, 10);
  tu_out_free(&o);
  const int32_t mn[3] = {1, 5, -5}, v[3] = {2, 3, -1}, mx[3] = {3, 7, -3};
  tu_in in2[3] = {IN(XRT_S32, mn, 3), IN(XRT_S32, v, 3), IN(XRT_S32, mx, 3)};
  TU_RUN_OK(C(state),
            "func.func @main(%lo: tensor<3xi32>, %x: tensor<3xi32>, %hi: tensor<3xi32>) -> tensor<3xi32> {\n"
            "  %0 = stablehlo.clamp %lo, %x, %hi : tensor<3xi32>\n"
            "  func.return %0 : tensor<3xi32>\n}\n",
            3, in2, &o);
  TU_ASSERT_OUT(&o, 0, int32_t, 2, 5, -3);
  tu_out_free(&o);
}

/* ---- conversions ---- */

static void test_convert(void **state) {
  tu_out o;
  const float f[3] = {1.7f, -1.7f, 300.0f};
  unary_fn(C(state), "convert", "tensor<3xf32>", "tensor<3xi32>", IN(XRT_F32, f, 3), &o);
  TU_ASSERT_OUT(&o, 0, int32_t, 1, -1, 300);
  tu_out_free(&o);
  const int32_t i[2] = {16777217, -3};
  unary_fn(C(state), "convert", "tensor<2xi32>", "tensor<2xf32>", IN(XRT_S32, i, 2), &o);
  TU_ASSERT_OUT(&o, 0, float, 16777216.0f, -3.0f); /* round to nearest even */
  tu_out_free(&o);
  const uint8_t u[2] = {255, 0};
  unary_fn(C(state), "convert", "tensor<2xui8>", "tensor<2xi32>", IN(XRT_U8, u, 2), &o);
  TU_ASSERT_OUT(&o, 0, int32_t, 255, 0);
  tu_out_free(&o);
  const uint8_t p[2] = {1, 0};
  unary_fn(C(state), "convert", "tensor<2xi1>", "tensor<2xf32>", IN(XRT_PRED, p, 2), &o);
  TU_ASSERT_OUT(&o, 0, float, 1.0f, 0.0f);
  tu_out_free(&o);
  const float z[3] = {0.0f, -2.5f, 0.5f};
  unary_fn(C(state), "convert", "tensor<3xf32>", "tensor<3xi1>", IN(XRT_F32, z, 3), &o);
  TU_ASSERT_OUT(&o, 0, uint8_t, 0, 1, 1);
  tu_out_free(&o);
}

static void test_convert_half(void **state) {
  tu_out o;
  const float f[3] = {1.0f, 65504.0f, 0.1f};
  unary_fn(C(state), "convert", "tensor<3xf32>", "tensor<3xf16>", IN(XRT_F32, f, 3), &o);
  TU_ASSERT_OUT(&o, 0, uint16_t, 0x3C00, 0x7BFF, 0x2E66);
  tu_out_free(&o);
  unary_fn(C(state), "convert", "tensor<3xf32>", "tensor<3xbf16>", IN(XRT_F32, f, 3), &o);
  /* 65504 = 0x477FE000 rounds up to 0x4780; 0.1 = 0x3DCCCCCD -> 0x3DCD */
  TU_ASSERT_OUT(&o, 0, uint16_t, 0x3F80, 0x4780, 0x3DCD);
  tu_out_free(&o);
  const uint16_t h[2] = {0x3E00, 0xC500}; /* 1.5, -5.0 */
  unary_fn(C(state), "convert", "tensor<2xf16>", "tensor<2xf64>", IN(XRT_F16, h, 2), &o);
  TU_ASSERT_OUT(&o, 0, double, 1.5, -5.0);
  tu_out_free(&o);
}

static void test_bitcast_convert(void **state) {
  tu_out o;
  const float f[2] = {1.0f, -0.0f};
  unary_fn(C(state), "bitcast_convert", "tensor<2xf32>", "tensor<2xi32>",
           IN(XRT_F32, f, 2), &o);
  TU_ASSERT_OUT(&o, 0, int32_t, 0x3F800000, INT32_MIN);
  tu_out_free(&o);
  const uint16_t h[1] = {0xBC00}; /* f16 -1.0 */
  unary_fn(C(state), "bitcast_convert", "tensor<1xf16>", "tensor<1xui16>",
           IN(XRT_F16, h, 1), &o);
  TU_ASSERT_OUT(&o, 0, uint16_t, 0xBC00);
  tu_out_free(&o);
  const int64_t i[1] = {0x4000000000000000ll}; /* f64 2.0 */
  unary_fn(C(state), "bitcast_convert", "tensor<1xi64>", "tensor<1xf64>",
           IN(XRT_S64, i, 1), &o);
  TU_ASSERT_OUT(&o, 0, double, 2.0);
  tu_out_free(&o);
}

/* ---- shape ops ---- */

static void test_iota(void **state) {
  tu_out o;
  TU_RUN_OK(C(state),
            "func.func @main() -> (tensor<2x3xi32>, tensor<2x3xf32>) {\n"
            "  %0 = stablehlo.iota dim = 1 : tensor<2x3xi32>\n"
            "  %1 = stablehlo.iota dim = 0 : tensor<2x3xf32>\n"
            "  func.return %0, %1 : tensor<2x3xi32>, tensor<2x3xf32>\n}\n",
            0, NULL, &o);
  assert_int_equal(o.n, 2);
  TU_ASSERT_OUT(&o, 0, int32_t, 0, 1, 2, 0, 1, 2);
  TU_ASSERT_OUT(&o, 1, float, 0, 0, 0, 1, 1, 1);
  tu_out_free(&o);
}

static const int32_t k_123[3] = {1, 2, 3}, k_23[6] = {1, 2, 3, 4, 5, 6};

static void test_broadcast_in_dim(void **state) {
  tu_out o;
  tu_in in = IN(XRT_S32, k_123, 3);
  TU_RUN_OK(C(state),
            "func.func @main(%a: tensor<3xi32>) -> (tensor<2x3xi32>, tensor<3x2xi32>) {\n"
            "  %0 = stablehlo.broadcast_in_dim %a, dims = [1] : (tensor<3xi32>) -> tensor<2x3xi32>\n"
            "  %1 = stablehlo.broadcast_in_dim %a, dims = [0] : (tensor<3xi32>) -> tensor<3x2xi32>\n"
            "  func.return %0, %1 : tensor<2x3xi32>, tensor<3x2xi32>\n}\n",
            1, &in, &o);
  TU_ASSERT_OUT(&o, 0, int32_t, 1, 2, 3, 1, 2, 3);
  TU_ASSERT_OUT(&o, 1, int32_t, 1, 1, 2, 2, 3, 3);
  tu_out_free(&o);
  const int32_t s = 7;
  in = IN0(XRT_S32, &s);
  TU_RUN_OK(C(state),
            "func.func @main(%a: tensor<i32>) -> tensor<2x2xi32> {\n"
            "  %0 = \"stablehlo.broadcast_in_dim\"(%a) {broadcast_dimensions = array<i64>} : (tensor<i32>) -> tensor<2x2xi32>\n"
            "  func.return %0 : tensor<2x2xi32>\n}\n",
            1, &in, &o);
  TU_ASSERT_OUT(&o, 0, int32_t, 7, 7, 7, 7);
  tu_out_free(&o);
}

static void test_reshape_transpose(void **state) {
  tu_out o;
  tu_in in = IN(XRT_S32, k_23, 2, 3);
  TU_RUN_OK(C(state),
            "func.func @main(%a: tensor<2x3xi32>) -> (tensor<3x2xi32>, tensor<3x2xi32>) {\n"
            "  %0 = stablehlo.reshape %a : (tensor<2x3xi32>) -> tensor<3x2xi32>\n"
            "  %1 = stablehlo.transpose %a, dims = [1, 0] : (tensor<2x3xi32>) -> tensor<3x2xi32>\n"
            "  func.return %0, %1 : tensor<3x2xi32>, tensor<3x2xi32>\n}\n",
            1, &in, &o);
  tu_assert_shape(&o, 0, TU_SHAPE(XRT_S32, 3, 2));
  TU_ASSERT_OUT(&o, 0, int32_t, 1, 2, 3, 4, 5, 6);
  TU_ASSERT_OUT(&o, 1, int32_t, 1, 4, 2, 5, 3, 6);
  tu_out_free(&o);
}

static void test_transpose_3d(void **state) {
  int32_t v[12];
  for (int i = 0; i < 12; i++) v[i] = i; /* v[a][b][c] = 6a + 2b + c, 2x3x2 */
  tu_in in = IN(XRT_S32, v, 2, 3, 2);
  tu_out o;
  TU_RUN_OK(C(state),
            "func.func @main(%a: tensor<2x3x2xi32>) -> tensor<2x3x2xi32> {\n"
            "  %0 = stablehlo.transpose %a, dims = [2, 1, 0] : (tensor<2x3x2xi32>) -> tensor<2x3x2xi32>\n"
            "  func.return %0 : tensor<2x3x2xi32>\n}\n",
            1, &in, &o);
  /* r[c][b][a] = v[a][b][c] */
  TU_ASSERT_OUT(&o, 0, int32_t, 0, 6, 2, 8, 4, 10, 1, 7, 3, 9, 5, 11);
  tu_out_free(&o);
}

static void test_slice(void **state) {
  int32_t v[18];
  for (int i = 0; i < 18; i++) v[i] = i; /* 3x6 */
  tu_in in = IN(XRT_S32, v, 3, 6);
  tu_out o;
  TU_RUN_OK(C(state),
            "func.func @main(%a: tensor<3x6xi32>) -> (tensor<2x2xi32>, tensor<1x3xi32>) {\n"
            "  %0 = stablehlo.slice %a [0:3:2, 2:6:3] : (tensor<3x6xi32>) -> tensor<2x2xi32>\n"
            "  %1 = \"stablehlo.slice\"(%a) {start_indices = array<i64: 1, 1>, limit_indices = array<i64: 2, 4>, strides = array<i64: 1, 1>} : (tensor<3x6xi32>) -> tensor<1x3xi32>\n"
            "  func.return %0, %1 : tensor<2x2xi32>, tensor<1x3xi32>\n}\n",
            1, &in, &o);
  TU_ASSERT_OUT(&o, 0, int32_t, 2, 5, 14, 17);
  TU_ASSERT_OUT(&o, 1, int32_t, 7, 8, 9);
  tu_out_free(&o);
}

static void test_concatenate(void **state) {
  const int32_t a[2] = {1, 2}, b[4] = {3, 4, 5, 6};
  tu_in in[2] = {IN(XRT_S32, a, 2, 1), IN(XRT_S32, b, 2, 2)};
  tu_out o;
  TU_RUN_OK(C(state),
            "func.func @main(%a: tensor<2x1xi32>, %b: tensor<2x2xi32>) -> (tensor<2x3xi32>, tensor<4x2xi32>) {\n"
            "  %0 = stablehlo.concatenate %a, %b, dim = 1 : (tensor<2x1xi32>, tensor<2x2xi32>) -> tensor<2x3xi32>\n"
            "  %1 = stablehlo.concatenate %b, %b, dim = 0 : (tensor<2x2xi32>, tensor<2x2xi32>) -> tensor<4x2xi32>\n"
            "  func.return %0, %1 : tensor<2x3xi32>, tensor<4x2xi32>\n}\n",
            2, in, &o);
  TU_ASSERT_OUT(&o, 0, int32_t, 1, 3, 4, 2, 5, 6);
  TU_ASSERT_OUT(&o, 1, int32_t, 3, 4, 5, 6, 3, 4, 5, 6);
  tu_out_free(&o);
}

static void test_pad(void **state) {
  const int32_t pv = 0;
  tu_in in[2] = {IN(XRT_S32, k_123, 3), IN0(XRT_S32, &pv)};
  tu_out o;
  TU_RUN_OK(C(state),
            "func.func @main(%a: tensor<3xi32>, %p: tensor<i32>) -> (tensor<8xi32>, tensor<1xi32>, tensor<4xi32>) {\n"
            "  %0 = stablehlo.pad %a, %p, low = [1], high = [2], interior = [1] : (tensor<3xi32>, tensor<i32>) -> tensor<8xi32>\n"
            "  %1 = stablehlo.pad %a, %p, low = [-1], high = [-1], interior = [0] : (tensor<3xi32>, tensor<i32>) -> tensor<1xi32>\n"
            "  %2 = stablehlo.pad %a, %p, low = [-1], high = [0], interior = [1] : (tensor<3xi32>, tensor<i32>) -> tensor<4xi32>\n"
            "  func.return %0, %1, %2 : tensor<8xi32>, tensor<1xi32>, tensor<4xi32>\n}\n",
            2, in, &o);
  TU_ASSERT_OUT(&o, 0, int32_t, 0, 1, 0, 2, 0, 3, 0, 0);
  TU_ASSERT_OUT(&o, 1, int32_t, 2);
  TU_ASSERT_OUT(&o, 2, int32_t, 0, 2, 0, 3);
  tu_out_free(&o);
}

static void test_pad_2d(void **state) {
  const int32_t v[4] = {1, 2, 3, 4}, pv = -1;
  tu_in in[2] = {IN(XRT_S32, v, 2, 2), IN0(XRT_S32, &pv)};
  tu_out o;
  TU_RUN_OK(C(state),
            "func.func @main(%a: tensor<2x2xi32>, %p: tensor<i32>) -> tensor<3x4xi32> {\n"
            "  %0 = stablehlo.pad %a, %p, low = [1, 0], high = [0, 1], interior = [0, 1] : (tensor<2x2xi32>, tensor<i32>) -> tensor<3x4xi32>\n"
            "  func.return %0 : tensor<3x4xi32>\n}\n",
            2, in, &o);
  TU_ASSERT_OUT(&o, 0, int32_t, -1, -1, -1, -1, 1, -1, 2, -1, 3, -1, 4, -1);
  tu_out_free(&o);
}

static void test_reverse(void **state) {
  tu_in in = IN(XRT_S32, k_23, 3, 2);
  tu_out o;
  TU_RUN_OK(C(state),
            "func.func @main(%a: tensor<3x2xi32>) -> (tensor<3x2xi32>, tensor<3x2xi32>) {\n"
            "  %0 = stablehlo.reverse %a, dims = [0] : tensor<3x2xi32>\n"
            "  %1 = stablehlo.reverse %a, dims = [0, 1] : tensor<3x2xi32>\n"
            "  func.return %0, %1 : tensor<3x2xi32>, tensor<3x2xi32>\n}\n",
            1, &in, &o);
  TU_ASSERT_OUT(&o, 0, int32_t, 5, 6, 3, 4, 1, 2);
  TU_ASSERT_OUT(&o, 1, int32_t, 6, 5, 4, 3, 2, 1);
  tu_out_free(&o);
}

/* ---- reduce ---- */

static void test_reduce_applies(void **state) {
  tu_in in[1] = {IN(XRT_S32, k_23, 2, 3)};
  tu_out o;
  TU_RUN_OK(C(state),
            "func.func @main(%a: tensor<2x3xi32>) -> (tensor<2xi32>, tensor<i32>) {\n"
            "  %z = stablehlo.constant dense<0> : tensor<i32>\n"
            "  %0 = stablehlo.reduce(%a init: %z) applies stablehlo.add across dimensions = [1] : (tensor<2x3xi32>, tensor<i32>) -> tensor<2xi32>\n"
            "  %1 = stablehlo.reduce(%a init: %z) applies stablehlo.add across dimensions = [0, 1] : (tensor<2x3xi32>, tensor<i32>) -> tensor<i32>\n"
            "  func.return %0, %1 : tensor<2xi32>, tensor<i32>\n}\n",
            1, in, &o);
  TU_ASSERT_OUT(&o, 0, int32_t, 6, 15);
  TU_ASSERT_OUT(&o, 1, int32_t, 21);
  tu_out_free(&o);
}

static void test_reduce_region(void **state) {
  const float v[6] = {1, 5, -3, 4, 2, 6};
  tu_in in = IN(XRT_F32, v, 2, 3);
  tu_out o;
  TU_RUN_OK(C(state),
            "func.func @main(%a: tensor<2x3xf32>) -> tensor<3xf32> {\n"
            "  %init = stablehlo.constant dense<0xFF800000> : tensor<f32>\n"
            "  %0 = \"stablehlo.reduce\"(%a, %init) ({\n"
            "  ^bb0(%x: tensor<f32>, %y: tensor<f32>):\n"
            "    %m = stablehlo.maximum %x, %y : tensor<f32>\n"
            "    stablehlo.return %m : tensor<f32>\n"
            "  }) {dimensions = array<i64: 0>} : (tensor<2x3xf32>, tensor<f32>) -> tensor<3xf32>\n"
            "  func.return %0 : tensor<3xf32>\n}\n",
            1, &in, &o);
  TU_ASSERT_OUT(&o, 0, float, 4, 5, 6);
  tu_out_free(&o);
}

static void test_reduce_argmax(void **state) {
  const float v[4] = {3, 9, 2, 9};
  tu_in in = IN(XRT_F32, v, 4);
  tu_out o;
  TU_RUN_OK(C(state),
            "func.func @main(%v: tensor<4xf32>) -> (tensor<f32>, tensor<i32>) {\n"
            "  %i = stablehlo.iota dim = 0 : tensor<4xi32>\n"
            "  %iv = stablehlo.constant dense<0xFF800000> : tensor<f32>\n"
            "  %ii = stablehlo.constant dense<0> : tensor<i32>\n"
            "  %r:2 = \"stablehlo.reduce\"(%v, %i, %iv, %ii) ({\n"
            "  ^bb0(%av: tensor<f32>, %ai: tensor<i32>, %bv: tensor<f32>, %bi: tensor<i32>):\n"
            "    %gt = stablehlo.compare GT, %av, %bv, FLOAT : (tensor<f32>, tensor<f32>) -> tensor<i1>\n"
            "    %eq = stablehlo.compare EQ, %av, %bv, FLOAT : (tensor<f32>, tensor<f32>) -> tensor<i1>\n"
            "    %lt = stablehlo.compare LT, %ai, %bi, SIGNED : (tensor<i32>, tensor<i32>) -> tensor<i1>\n"
            "    %tie = stablehlo.and %eq, %lt : tensor<i1>\n"
            "    %pick = stablehlo.or %gt, %tie : tensor<i1>\n"
            "    %rv = stablehlo.select %pick, %av, %bv : (tensor<i1>, tensor<f32>, tensor<f32>) -> tensor<f32>\n"
            "    %ri = stablehlo.select %pick, %ai, %bi : (tensor<i1>, tensor<i32>, tensor<i32>) -> tensor<i32>\n"
            "    stablehlo.return %rv, %ri : tensor<f32>, tensor<i32>\n"
            "  }) {dimensions = array<i64: 0>} : (tensor<4xf32>, tensor<4xi32>, tensor<f32>, tensor<i32>) -> (tensor<f32>, tensor<i32>)\n"
            "  func.return %r#0, %r#1 : tensor<f32>, tensor<i32>\n}\n",
            1, &in, &o);
  TU_ASSERT_OUT(&o, 0, float, 9);
  TU_ASSERT_OUT(&o, 1, int32_t, 1); /* first of the two maxima */
  tu_out_free(&o);
}

/* ---- dot_general ---- */

static void test_dot_matmul(void **state) {
  const float a[6] = {1, 2, 3, 4, 5, 6}, b[6] = {7, 8, 9, 10, 11, 12};
  tu_in in[2] = {IN(XRT_F32, a, 2, 3), IN(XRT_F32, b, 3, 2)};
  tu_out o;
  TU_RUN_OK(C(state),
            "func.func @main(%a: tensor<2x3xf32>, %b: tensor<3x2xf32>) -> tensor<2x2xf32> {\n"
            "  %0 = stablehlo.dot_general %a, %b, contracting_dims = [1] x [0] : (tensor<2x3xf32>, tensor<3x2xf32>) -> tensor<2x2xf32>\n"
            "  func.return %0 : tensor<2x2xf32>\n}\n",
            2, in, &o);
  TU_ASSERT_OUT(&o, 0, float, 58, 64, 139, 154);
  tu_out_free(&o);
}

static void test_dot_batch(void **state) {
  const int32_t a[8] = {1, 2, 3, 4, 5, 6, 7, 8}, b[8] = {1, 1, 0, 1, 2, 0, 0, 2};
  tu_in in[2] = {IN(XRT_S32, a, 2, 2, 2), IN(XRT_S32, b, 2, 2, 2)};
  tu_out o;
  TU_RUN_OK(C(state),
            "func.func @main(%a: tensor<2x2x2xi32>, %b: tensor<2x2x2xi32>) -> tensor<2x2x2xi32> {\n"
            "  %0 = stablehlo.dot_general %a, %b, batching_dims = [0] x [0], contracting_dims = [2] x [1], precision = [DEFAULT, DEFAULT] : (tensor<2x2x2xi32>, tensor<2x2x2xi32>) -> tensor<2x2x2xi32>\n"
            "  func.return %0 : tensor<2x2x2xi32>\n}\n",
            2, in, &o);
  TU_ASSERT_OUT(&o, 0, int32_t, 1, 3, 3, 7, 10, 12, 14, 16);
  tu_out_free(&o);
}

static void test_dot_contract_dim0(void **state) {
  const double a[6] = {1, 2, 3, 4, 5, 6}, b[6] = {1, 0, 0, 1, 1, 1};
  tu_in in[2] = {IN(XRT_F64, a, 3, 2), IN(XRT_F64, b, 3, 2)};
  tu_out o;
  TU_RUN_OK(C(state),
            "func.func @main(%a: tensor<3x2xf64>, %b: tensor<3x2xf64>) -> tensor<2x2xf64> {\n"
            "  %0 = \"stablehlo.dot_general\"(%a, %b) {dot_dimension_numbers = #stablehlo.dot<lhs_contracting_dimensions = [0], rhs_contracting_dimensions = [0]>} : (tensor<3x2xf64>, tensor<3x2xf64>) -> tensor<2x2xf64>\n"
            "  func.return %0 : tensor<2x2xf64>\n}\n",
            2, in, &o);
  TU_ASSERT_OUT(&o, 0, double, 6, 8, 8, 10); /* a^T b */
  tu_out_free(&o);
}

/* ---- control flow ---- */

static void test_while_sum(void **state) {
  const int64_t n = 5;
  tu_in in = IN0(XRT_S64, &n);
  tu_out o;
  TU_RUN_OK(C(state),
            "func.func @main(%n: tensor<i64>) -> (tensor<i64>, tensor<i64>) {\n"
            "  %c0 = stablehlo.constant dense<0> : tensor<i64>\n"
            "  %c1 = stablehlo.constant dense<1> : tensor<i64>\n"
            "  %r0, %r1 = stablehlo.while(%i = %c0, %s = %c0) : tensor<i64>, tensor<i64>\n"
            "  cond {\n"
            "    %lt = stablehlo.compare LT, %i, %n : (tensor<i64>, tensor<i64>) -> tensor<i1>\n"
            "    stablehlo.return %lt : tensor<i1>\n"
            "  } do {\n"
            "    %s2 = stablehlo.add %s, %i : tensor<i64>\n"
            "    %i2 = stablehlo.add %i, %c1 : tensor<i64>\n"
            "    stablehlo.return %i2, %s2 : tensor<i64>, tensor<i64>\n"
            "  }\n"
            "  func.return %r0, %r1 : tensor<i64>, tensor<i64>\n}\n",
            1, &in, &o);
  TU_ASSERT_OUT(&o, 0, int64_t, 5);
  TU_ASSERT_OUT(&o, 1, int64_t, 10); /* 0+1+2+3+4 */
  tu_out_free(&o);
}

static void test_func_call(void **state) {
  const int32_t a = 5;
  tu_in in = IN0(XRT_S32, &a);
  tu_out o;
  TU_RUN_OK(C(state),
            "func.func private @twice(%x: tensor<i32>) -> (tensor<i32>, tensor<i32>) {\n"
            "  %0 = stablehlo.add %x, %x : tensor<i32>\n"
            "  func.return %x, %0 : tensor<i32>, tensor<i32>\n"
            "}\n"
            "func.func @main(%a: tensor<i32>) -> tensor<i32> {\n"
            "  %0:2 = func.call @twice(%a) : (tensor<i32>) -> (tensor<i32>, tensor<i32>)\n"
            "  %1 = stablehlo.multiply %0#0, %0#1 : tensor<i32>\n"
            "  %2:2 = call @twice(%1) : (tensor<i32>) -> (tensor<i32>, tensor<i32>)\n"
            "  func.return %2#1 : tensor<i32>\n"
            "}\n",
            1, &in, &o);
  TU_ASSERT_OUT(&o, 0, int32_t, 100); /* 2 * (5 * 10) */
  tu_out_free(&o);
}

/* ---- custom_call to host functions ---- */

typedef struct host_seen {
  int calls;
  int num_inputs, num_outputs;
  xrt_shape in_shape;
  float in[3];
  char target[32], config[32];
} host_seen;

static xrt_status host_scale2(void *user, xrt_host_call *call) {
  host_seen *s = (host_seen *)user;
  s->calls++;
  s->num_inputs = call->num_inputs;
  s->num_outputs = call->num_outputs;
  snprintf(s->target, sizeof s->target, "%s", call->target);
  const xrt_ir_attr *bc = call->op ? xrt_ir_op_attr(call->op, "backend_config") : NULL;
  snprintf(s->config, sizeof s->config, "%s", bc && bc->s ? bc->s : "");
  if (call->num_inputs != 1 || call->num_outputs != 1 ||
      call->inputs[0].bytes != sizeof s->in || call->outputs[0].bytes != sizeof s->in)
    return xrt_host_call_fail(call, XRT_INTERNAL, "unexpected call");
  s->in_shape = call->inputs[0].shape;
  memcpy(s->in, call->inputs[0].data, sizeof s->in);
  float *out = (float *)call->outputs[0].data;
  for (int i = 0; i < 3; i++) out[i] = 2 * s->in[i];
  return XRT_OK;
}

static void test_custom_call(void **state) {
  host_seen seen;
  memset(&seen, 0, sizeof seen);
  assert_int_equal(xrt_client_register_host_function(C(state), "test.scale2",
                                                     host_scale2, &seen), XRT_OK);
  const float a[3] = {1, -2, 0.5f};
  tu_in in = IN(XRT_F32, a, 3);
  tu_out o;
  TU_RUN_OK(C(state),
            "func.func @main(%a: tensor<3xf32>) -> tensor<3xf32> {\n"
            "  %0 = stablehlo.custom_call @test.scale2(%a) {backend_config = \"k=2\"} : (tensor<3xf32>) -> tensor<3xf32>\n"
            "  %1 = stablehlo.add %0, %a : tensor<3xf32>\n"
            "  func.return %1 : tensor<3xf32>\n}\n",
            1, &in, &o);
  TU_ASSERT_OUT(&o, 0, float, 3, -6, 1.5f);
  tu_out_free(&o);
  assert_int_equal(seen.calls, 1);
  assert_int_equal(seen.num_inputs, 1);
  assert_int_equal(seen.num_outputs, 1);
  assert_string_equal(seen.target, "test.scale2");
  assert_string_equal(seen.config, "k=2");
  assert_int_equal(seen.in_shape.dtype, XRT_F32);
  assert_int_equal(seen.in_shape.rank, 1);
  assert_int_equal(seen.in_shape.dims[0], 3);
  assert_memory_equal(seen.in, a, sizeof a);
}

static xrt_status host_sumdiff(void *user, xrt_host_call *call) {
  (void)user;
  const int32_t *a = (const int32_t *)call->inputs[0].data;
  const int32_t *b = (const int32_t *)call->inputs[1].data;
  int32_t *s = (int32_t *)call->outputs[0].data, *d = (int32_t *)call->outputs[1].data;
  for (int i = 0; i < 2; i++) s[i] = a[i] + b[i], d[i] = a[i] - b[i];
  return XRT_OK;
}

static void test_custom_call_two_outputs(void **state) {
  assert_int_equal(xrt_client_register_host_function(C(state), "test.sumdiff",
                                                     host_sumdiff, NULL), XRT_OK);
  const int32_t a[2] = {10, 20}, b[2] = {1, 2};
  tu_in in[2] = {IN(XRT_S32, a, 2), IN(XRT_S32, b, 2)};
  tu_out o;
  TU_RUN_OK(C(state),
            "func.func @main(%a: tensor<2xi32>, %b: tensor<2xi32>) -> (tensor<2xi32>, tensor<2xi32>) {\n"
            "  %0:2 = stablehlo.custom_call @test.sumdiff(%a, %b) : (tensor<2xi32>, tensor<2xi32>) -> (tensor<2xi32>, tensor<2xi32>)\n"
            "  func.return %0#1, %0#0 : tensor<2xi32>, tensor<2xi32>\n}\n",
            2, in, &o);
  TU_ASSERT_OUT(&o, 0, int32_t, 9, 18);
  TU_ASSERT_OUT(&o, 1, int32_t, 11, 22);
  tu_out_free(&o);
}

static xrt_status host_fail(void *user, xrt_host_call *call) {
  (void)user;
  return xrt_host_call_fail(call, XRT_FAILED_PRECONDITION, "boom %d", 42);
}

static void test_custom_call_failure(void **state) {
  assert_int_equal(xrt_client_register_host_function(C(state), "test.fail",
                                                     host_fail, NULL), XRT_OK);
  const float a = 1;
  tu_in in = IN0(XRT_F32, &a);
  tu_out o;
  xrt_status st = tu_run(C(state),
                         "func.func @main(%a: tensor<f32>) -> tensor<f32> {\n"
                         "  %0 = stablehlo.custom_call @test.fail(%a) : (tensor<f32>) -> tensor<f32>\n"
                         "  func.return %0 : tensor<f32>\n}\n",
                         1, &in, &o);
  assert_int_equal(st, XRT_FAILED_PRECONDITION);
  TU_ASSERT_CONTAINS(tu_msg, "boom 42");
  assert_int_equal(o.n, 0);
}

static void test_custom_call_unregistered(void **state) {
  xrt_executable *e = NULL;
  const char *p =
      "func.func @main(%a: tensor<f32>) -> tensor<f32> {\n"
      "  %0 = stablehlo.custom_call @test.nobody_registered_this(%a) : (tensor<f32>) -> tensor<f32>\n"
      "  func.return %0 : tensor<f32>\n}\n";
  assert_int_equal(xrt_compile(C(state), p, strlen(p), NULL, &e), XRT_NOT_FOUND);
  assert_null(e);
  TU_ASSERT_CONTAINS(xrt_last_error(), "test.nobody_registered_this");
}

/* ---- element types ---- */

static void test_int_wrap(void **state) {
  tu_out o;
  const int8_t a[2] = {127, -128}, b[2] = {1, -1};
  binary(C(state), "add", "tensor<2xi8>", IN(XRT_S8, a, 2), IN(XRT_S8, b, 2), &o);
  TU_ASSERT_OUT(&o, 0, int8_t, -128, 127);
  tu_out_free(&o);
  const int8_t m[1] = {16};
  binary(C(state), "multiply", "tensor<1xi8>", IN(XRT_S8, m, 1), IN(XRT_S8, m, 1), &o);
  TU_ASSERT_OUT(&o, 0, int8_t, 0);
  tu_out_free(&o);
  const uint8_t u[2] = {250, 3}, v[2] = {10, 5};
  binary(C(state), "add", "tensor<2xui8>", IN(XRT_U8, u, 2), IN(XRT_U8, v, 2), &o);
  TU_ASSERT_OUT(&o, 0, uint8_t, 4, 8);
  tu_out_free(&o);
  binary(C(state), "subtract", "tensor<2xui8>", IN(XRT_U8, v, 2), IN(XRT_U8, u, 2), &o);
  TU_ASSERT_OUT(&o, 0, uint8_t, 16, 2);
  tu_out_free(&o);
  const uint64_t w[1] = {UINT64_MAX}, one[1] = {1};
  binary(C(state), "add", "tensor<1xui64>", IN(XRT_U64, w, 1), IN(XRT_U64, one, 1), &o);
  TU_ASSERT_OUT(&o, 0, uint64_t, 0);
  tu_out_free(&o);
}

static void test_subbyte_wrap(void **state) {
  tu_out o;
  const int8_t a[3] = {7, -8, 3}, b[3] = {1, -1, 2};
  binary(C(state), "add", "tensor<3xi4>", IN(XRT_S4, a, 3), IN(XRT_S4, b, 3), &o);
  TU_ASSERT_OUT(&o, 0, int8_t, -8, 7, 5); /* stored sign-extended */
  tu_out_free(&o);
  const uint8_t u[2] = {15, 9}, v[2] = {1, 3};
  binary(C(state), "add", "tensor<2xui4>", IN(XRT_U4, u, 2), IN(XRT_U4, v, 2), &o);
  TU_ASSERT_OUT(&o, 0, uint8_t, 0, 12);
  tu_out_free(&o);
}

static void test_half_types(void **state) {
  tu_out o;
  /* f16: 1.5 + 0.25 = 1.75, 2.0 + -0.5 = 1.5 */
  const uint16_t a[2] = {0x3E00, 0x4000}, b[2] = {0x3400, 0xB800};
  binary(C(state), "add", "tensor<2xf16>", IN(XRT_F16, a, 2), IN(XRT_F16, b, 2), &o);
  TU_ASSERT_OUT(&o, 0, uint16_t, 0x3F00, 0x3E00);
  tu_out_free(&o);
  /* f16: 3.0 * -1.5 = -4.5 */
  const uint16_t c[1] = {0x4200}, d[1] = {0xBE00};
  binary(C(state), "multiply", "tensor<1xf16>", IN(XRT_F16, c, 1), IN(XRT_F16, d, 1), &o);
  TU_ASSERT_OUT(&o, 0, uint16_t, 0xC480);
  tu_out_free(&o);
  /* bf16: same sums */
  const uint16_t e[2] = {0x3FC0, 0x4000}, f[2] = {0x3E80, 0xBF00};
  binary(C(state), "add", "tensor<2xbf16>", IN(XRT_BF16, e, 2), IN(XRT_BF16, f, 2), &o);
  TU_ASSERT_OUT(&o, 0, uint16_t, 0x3FE0, 0x3FC0);
  tu_out_free(&o);
}

static void test_pred_arith(void **state) {
  tu_out o;
  const uint8_t a[4] = {1, 1, 0, 0}, b[4] = {1, 0, 1, 0};
  binary(C(state), "add", "tensor<4xi1>", IN(XRT_PRED, a, 4), IN(XRT_PRED, b, 4), &o);
  TU_ASSERT_OUT(&o, 0, uint8_t, 1, 1, 1, 0); /* add is OR */
  tu_out_free(&o);
  binary(C(state), "multiply", "tensor<4xi1>", IN(XRT_PRED, a, 4), IN(XRT_PRED, b, 4), &o);
  TU_ASSERT_OUT(&o, 0, uint8_t, 1, 0, 0, 0); /* multiply is AND */
  tu_out_free(&o);
}

static void test_complex(void **state) {
  tu_out o;
  const float a[4] = {1, 2, 0.5f, -1}, b[4] = {3, -1, 2, 4};
  binary(C(state), "add", "tensor<2xcomplex<f32>>", IN(XRT_C64, a, 2),
         IN(XRT_C64, b, 2), &o);
  TU_ASSERT_OUT(&o, 0, float, 4, 1, 2.5f, 3);
  tu_out_free(&o);
  /* (1+2i)(3-i) = 5+5i; (0.5-i)(2+4i) = 1+2i-2i+4 = 5+0i */
  binary(C(state), "multiply", "tensor<2xcomplex<f32>>", IN(XRT_C64, a, 2),
         IN(XRT_C64, b, 2), &o);
  TU_ASSERT_OUT(&o, 0, float, 5, 5, 5, 0);
  tu_out_free(&o);
  const double c[2] = {1.5, -2.5}, d[2] = {0.25, 0.5};
  binary(C(state), "subtract", "tensor<1xcomplex<f64>>", IN(XRT_C128, c, 1),
         IN(XRT_C128, d, 1), &o);
  TU_ASSERT_OUT(&o, 0, double, 1.25, -3.0);
  tu_out_free(&o);
}

/* ---- executables and execute misuse ---- */

static const char *k_addp =
    "func.func @main(%a: tensor<2xf32>, %b: tensor<2xf32>) -> tensor<2xf32> {\n"
    "  %0 = stablehlo.add %a, %b : tensor<2xf32>\n"
    "  func.return %0 : tensor<2xf32>\n}\n";

static void test_executable_info(void **state) {
  xrt_executable *e = NULL;
  assert_int_equal(xrt_compile(C(state), k_addp, strlen(k_addp), NULL, &e), XRT_OK);
  assert_int_equal(xrt_executable_num_inputs(e), 2);
  assert_int_equal(xrt_executable_num_outputs(e), 1);
  assert_string_equal(xrt_executable_name(e), "main");
  xrt_shape s;
  assert_int_equal(xrt_executable_input_shape(e, 1, &s), XRT_OK);
  assert_int_equal(s.dtype, XRT_F32);
  assert_int_equal(s.rank, 1);
  assert_int_equal(s.dims[0], 2);
  assert_int_equal(xrt_executable_output_shape(e, 0, &s), XRT_OK);
  assert_int_equal(s.dtype, XRT_F32);
  assert_int_equal(xrt_executable_release(e), XRT_OK);
}

static const char *k_two_funcs =
    "func.func @helper(%a: tensor<i32>) -> tensor<i32> {\n"
    "  %0 = stablehlo.negate %a : tensor<i32>\n"
    "  func.return %0 : tensor<i32>\n}\n"
    "func.func @other() -> tensor<f32> {\n"
    "  %0 = stablehlo.constant dense<1.0> : tensor<f32>\n"
    "  func.return %0 : tensor<f32>\n}\n";

static void test_entry_selection(void **state) {
  xrt_compile_options o;
  xrt_compile_options_init(&o);
  xrt_executable *e = NULL;
  size_t n = strlen(k_two_funcs);
  /* two functions, none called main: an entry is needed */
  assert_int_not_equal(xrt_compile(C(state), k_two_funcs, n, &o, &e), XRT_OK);
  o.entry = "helper";
  assert_int_equal(xrt_compile(C(state), k_two_funcs, n, &o, &e), XRT_OK);
  assert_string_equal(xrt_executable_name(e), "helper");
  assert_int_equal(xrt_executable_num_inputs(e), 1);
  xrt_executable_release(e);
  e = NULL;
  o.entry = "nope";
  assert_int_equal(xrt_compile(C(state), k_two_funcs, n, &o, &e), XRT_NOT_FOUND);
  assert_null(e);
  /* a single function not named main is the default entry */
  const char *one = "func.func @solo() -> tensor<f32> {\n"
                    "  %0 = stablehlo.constant dense<2.0> : tensor<f32>\n"
                    "  func.return %0 : tensor<f32>\n}\n";
  assert_int_equal(xrt_compile(C(state), one, strlen(one), NULL, &e), XRT_OK);
  assert_string_equal(xrt_executable_name(e), "solo");
  xrt_executable_release(e);
}

/* Executes k_addp with the given args; expects INVALID_ARGUMENT and no output. */
static void expect_bad_execute(xrt_executable *e, xrt_device *d,
                               xrt_buffer **args, int nargs, int nout) {
  xrt_buffer *outs[2] = {NULL, NULL};
  assert_int_equal(xrt_execute(e, d, args, nargs, outs, nout, NULL),
                   XRT_INVALID_ARGUMENT);
  assert_null(outs[0]);
  assert_null(outs[1]);
  assert_true(strlen(xrt_last_error()) > 0);
}

static void test_execute_misuse(void **state) {
  (void)state;
  xrt_client_options co;
  xrt_client_options_init(&co);
  co.num_devices = 2;
  xrt_client *c = NULL;
  assert_int_equal(xrt_client_create(&co, &c), XRT_OK);
  xrt_device *d0 = xrt_client_device(c, 0), *d1 = xrt_client_device(c, 1);
  xrt_executable *e = NULL;
  assert_int_equal(xrt_compile(c, k_addp, strlen(k_addp), NULL, &e), XRT_OK);
  const float v[4] = {1, 2, 3, 4};
  xrt_shape s2 = TU_SHAPE(XRT_F32, 2), s4 = TU_SHAPE(XRT_F32, 4),
            si = TU_SHAPE(XRT_S32, 2);
  xrt_buffer *a = NULL, *wrong_shape = NULL, *wrong_type = NULL, *other = NULL;
  assert_int_equal(xrt_buffer_from_host(c, d0, &s2, v, &a), XRT_OK);
  assert_int_equal(xrt_buffer_from_host(c, d0, &s4, v, &wrong_shape), XRT_OK);
  assert_int_equal(xrt_buffer_from_host(c, d0, &si, v, &wrong_type), XRT_OK);
  assert_int_equal(xrt_buffer_from_host(c, d1, &s2, v, &other), XRT_OK);
  xrt_buffer *one[1] = {a}, *three[3] = {a, a, a};
  xrt_buffer *bad_shape[2] = {a, wrong_shape}, *bad_type[2] = {wrong_type, a};
  xrt_buffer *bad_dev[2] = {a, other}, *good[2] = {a, a};
  expect_bad_execute(e, d0, one, 1, 1);
  expect_bad_execute(e, d0, three, 3, 1);
  expect_bad_execute(e, d0, bad_shape, 2, 1);
  expect_bad_execute(e, d0, bad_type, 2, 1);
  expect_bad_execute(e, d0, bad_dev, 2, 1);
  expect_bad_execute(e, d0, good, 2, 2);
  expect_bad_execute(e, d0, good, 2, 0);
  /* the same arguments work on the right device */
  xrt_buffer *out[1] = {NULL};
  assert_int_equal(xrt_execute(e, d0, good, 2, out, 1, NULL), XRT_OK);
  float back[2];
  assert_int_equal(xrt_buffer_to_host(out[0], back, sizeof back), XRT_OK);
  assert_true(back[0] == 2 && back[1] == 4);
  assert_ptr_equal(xrt_buffer_device(out[0]), d0);
  xrt_client_release(c); /* releases every buffer and the executable */
}

static void test_execute_on_device1(void **state) {
  (void)state;
  xrt_client_options co;
  xrt_client_options_init(&co);
  co.num_devices = 2;
  xrt_client *c = NULL;
  assert_int_equal(xrt_client_create(&co, &c), XRT_OK);
  xrt_device *d1 = xrt_client_device(c, 1);
  xrt_executable *e = NULL;
  assert_int_equal(xrt_compile(c, k_addp, strlen(k_addp), NULL, &e), XRT_OK);
  const float v[2] = {1.25f, -3};
  xrt_shape s2 = TU_SHAPE(XRT_F32, 2);
  xrt_buffer *a = NULL, *out[1] = {NULL};
  assert_int_equal(xrt_buffer_from_host(c, d1, &s2, v, &a), XRT_OK);
  xrt_buffer *args[2] = {a, a};
  assert_int_equal(xrt_execute(e, d1, args, 2, out, 1, NULL), XRT_OK);
  assert_ptr_equal(xrt_buffer_device(out[0]), d1);
  float back[2];
  assert_int_equal(xrt_buffer_to_host(out[0], back, sizeof back), XRT_OK);
  assert_true(back[0] == 2.5f && back[1] == -6);
  xrt_buffer_release(out[0]);
  xrt_buffer_release(a);
  xrt_executable_release(e);
  xrt_client_release(c);
}

/* max + 1 wraps to min, and 1 + 2 = 3, in every integer type: row-major
 * one-byte-per-element storage for the sub-byte types. */
static void test_add_every_int_type(void **state) {
  static const struct { const char *t; xrt_dtype dt; size_t sz; int64_t max, min; } rows[] = {
      {"i2", XRT_S2, 1, 1, -2},          {"i4", XRT_S4, 1, 7, -8},
      {"i8", XRT_S8, 1, 127, -128},      {"i16", XRT_S16, 2, 32767, -32768},
      {"i32", XRT_S32, 4, INT32_MAX, INT32_MIN},
      {"i64", XRT_S64, 8, INT64_MAX, INT64_MIN},
      {"ui2", XRT_U2, 1, 3, 0},          {"ui4", XRT_U4, 1, 15, 0},
      {"ui8", XRT_U8, 1, 255, 0},        {"ui16", XRT_U16, 2, 65535, 0},
      {"ui32", XRT_U32, 4, UINT32_MAX, 0},
      {"ui64", XRT_U64, 8, -1 /* all ones */, 0},
  };
  for (size_t i = 0; i < TU_COUNT(rows); i++) {
    /* little-endian truncation of int64 values gives the storage bytes */
    int64_t av[2] = {rows[i].max, 1}, bv[2] = {1, 2}, want[2] = {rows[i].min, 3};
    if (rows[i].dt == XRT_S2) bv[1] = -1, want[1] = 0; /* 2 is out of range */
    unsigned char a[16], b[16], w[16];
    for (int k = 0; k < 2; k++) {
      memcpy(a + k * rows[i].sz, &av[k], rows[i].sz);
      memcpy(b + k * rows[i].sz, &bv[k], rows[i].sz);
      memcpy(w + k * rows[i].sz, &want[k], rows[i].sz);
    }
    char t[32];
    snprintf(t, sizeof t, "tensor<2x%s>", rows[i].t);
    tu_out o;
    binary(C(state), "add", t, IN(rows[i].dt, a, 2), IN(rows[i].dt, b, 2), &o);
    assert_int_equal(o.bytes[0], 2 * rows[i].sz);
    if (memcmp(o.data[0], w, 2 * rows[i].sz) != 0)
      fail_msg("add on %s gives wrong values", rows[i].t);
    tu_out_free(&o);
  }
}

/* 1.5 + 2.25 = 3.75 is exact in every float type. */
static void test_add_every_float_type(void **state) {
  tu_out o;
  const uint16_t h[2] = {0x3E00, 0x4080}; /* f16 1.5, 2.25 */
  binary(C(state), "add", "tensor<1xf16>", IN(XRT_F16, &h[0], 1), IN(XRT_F16, &h[1], 1), &o);
  TU_ASSERT_OUT(&o, 0, uint16_t, 0x4380);
  tu_out_free(&o);
  const uint16_t bf[2] = {0x3FC0, 0x4010}; /* bf16 1.5, 2.25 */
  binary(C(state), "add", "tensor<1xbf16>", IN(XRT_BF16, &bf[0], 1), IN(XRT_BF16, &bf[1], 1), &o);
  TU_ASSERT_OUT(&o, 0, uint16_t, 0x4070);
  tu_out_free(&o);
  const float f[2] = {1.5f, 2.25f};
  binary(C(state), "add", "tensor<1xf32>", IN(XRT_F32, &f[0], 1), IN(XRT_F32, &f[1], 1), &o);
  TU_ASSERT_OUT(&o, 0, float, 3.75f);
  tu_out_free(&o);
  const double d[2] = {1.5, 2.25};
  binary(C(state), "add", "tensor<1xf64>", IN(XRT_F64, &d[0], 1), IN(XRT_F64, &d[1], 1), &o);
  TU_ASSERT_OUT(&o, 0, double, 3.75);
  tu_out_free(&o);
}

static void test_zero_size_ops(void **state) {
  const float dummy = 0;
  tu_in in = {TU_SHAPE(XRT_F32, 0, 3), &dummy};
  tu_out o;
  TU_RUN_OK(C(state),
            "func.func @main(%a: tensor<0x3xf32>) -> (tensor<0x3xf32>, tensor<3xf32>) {\n"
            "  %0 = stablehlo.add %a, %a : tensor<0x3xf32>\n"
            "  %z = stablehlo.constant dense<1.0> : tensor<f32>\n"
            "  %1 = stablehlo.reduce(%a init: %z) applies stablehlo.add across dimensions = [0] : (tensor<0x3xf32>, tensor<f32>) -> tensor<3xf32>\n"
            "  func.return %0, %1 : tensor<0x3xf32>, tensor<3xf32>\n}\n",
            1, &in, &o);
  tu_assert_shape(&o, 0, TU_SHAPE(XRT_F32, 0, 3));
  assert_int_equal(o.bytes[0], 0);
  TU_ASSERT_OUT(&o, 1, float, 1, 1, 1); /* reducing nothing gives init */
  tu_out_free(&o);
}

/* Returning an argument gives a new buffer, independent of the input. */
static void test_return_argument(void **state) {
  xrt_client *c = C(state);
  xrt_device *d = xrt_client_device(c, 0);
  const char *p = "func.func @main(%a: tensor<2xi32>) -> (tensor<2xi32>, tensor<2xi32>) {\n"
                  "  func.return %a, %a : tensor<2xi32>, tensor<2xi32>\n}\n";
  xrt_executable *e = NULL;
  assert_int_equal(xrt_compile(c, p, strlen(p), NULL, &e), XRT_OK);
  const int32_t v[2] = {4, -4};
  xrt_shape s = TU_SHAPE(XRT_S32, 2);
  xrt_buffer *a = NULL, *out[2] = {NULL, NULL};
  assert_int_equal(xrt_buffer_from_host(c, d, &s, v, &a), XRT_OK);
  assert_int_equal(xrt_execute(e, d, &a, 1, out, 2, NULL), XRT_OK);
  assert_ptr_not_equal(out[0], a);
  assert_ptr_not_equal(out[0], out[1]);
  assert_int_equal(xrt_buffer_release(a), XRT_OK);
  assert_int_equal(xrt_buffer_release(out[0]), XRT_OK);
  int32_t back[2] = {0, 0};
  assert_int_equal(xrt_buffer_to_host(out[1], back, sizeof back), XRT_OK);
  assert_memory_equal(back, v, sizeof v);
  xrt_buffer_release(out[1]);
  xrt_executable_release(e);
}

/* xrt_execute is thread-safe: one executable, several threads at once. */
typedef struct exec_job {
  xrt_client *c;
  xrt_executable *e;
  int id, errors;
} exec_job;

static void *exec_thread(void *arg) {
  exec_job *j = (exec_job *)arg;
  xrt_device *d = xrt_client_device(j->c, 0);
  xrt_shape s = TU_SHAPE(XRT_F32, 2);
  for (int i = 0; i < 50; i++) {
    const float v[2] = {(float)j->id, (float)i};
    float back[2] = {0, 0};
    xrt_buffer *a = NULL, *out[1] = {NULL};
    xrt_buffer *args[2];
    if (xrt_buffer_from_host(j->c, d, &s, v, &a) != XRT_OK) { j->errors++; continue; }
    args[0] = args[1] = a;
    if (xrt_execute(j->e, d, args, 2, out, 1, NULL) != XRT_OK ||
        xrt_buffer_to_host(out[0], back, sizeof back) != XRT_OK ||
        back[0] != 2 * v[0] || back[1] != 2 * v[1])
      j->errors++;
    xrt_buffer_release(out[0]);
    xrt_buffer_release(a);
  }
  return NULL;
}

static void test_execute_threads(void **state) {
  xrt_executable *e = NULL;
  assert_int_equal(xrt_compile(C(state), k_addp, strlen(k_addp), NULL, &e), XRT_OK);
  pthread_t th[4];
  exec_job jobs[4];
  for (int i = 0; i < 4; i++) {
    jobs[i] = (exec_job){C(state), e, i + 1, 0};
    assert_int_equal(pthread_create(&th[i], NULL, exec_thread, &jobs[i]), 0);
  }
  for (int i = 0; i < 4; i++) {
    pthread_join(th[i], NULL);
    assert_int_equal(jobs[i].errors, 0);
  }
  xrt_executable_release(e);
}

static void test_check_failure_message(void **state) {
  const int32_t a[2] = {12345, 11111};
  tu_in in = IN(XRT_S32, a, 2);
  tu_out o;
  xrt_status st = tu_run(C(state),
                         "func.func @main(%a: tensor<2xi32>) {\n"
                         "  %c = stablehlo.constant dense<[12345, 67890]> : tensor<2xi32>\n"
                         "  check.expect_eq %a, %c : tensor<2xi32>\n"
                         "  func.return\n}\n",
                         1, &in, &o);
  assert_int_equal(st, XRT_CHECK_FAILED);
  TU_ASSERT_CONTAINS(tu_msg, "<input>:3:3");
  TU_ASSERT_CONTAINS(tu_msg, "11111");
  TU_ASSERT_CONTAINS(tu_msg, "67890");
  assert_int_equal(o.n, 0);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_add_f32),
      cmocka_unit_test(test_subtract_i32),
      cmocka_unit_test(test_multiply_f64),
      cmocka_unit_test(test_divide),
      cmocka_unit_test(test_remainder),
      cmocka_unit_test(test_divide_undefined_cases),
      cmocka_unit_test(test_maximum_minimum),
      cmocka_unit_test(test_power),
      cmocka_unit_test(test_negate_abs),
      cmocka_unit_test(test_transcendentals),
      cmocka_unit_test(test_floor_ceil_sign),
      cmocka_unit_test(test_bitwise_i32),
      cmocka_unit_test(test_logical_pred),
      cmocka_unit_test(test_compare_float),
      cmocka_unit_test(test_compare_signed_unsigned),
      cmocka_unit_test(test_compare_totalorder),
      cmocka_unit_test(test_select),
      cmocka_unit_test(test_clamp),
      cmocka_unit_test(test_convert),
      cmocka_unit_test(test_convert_half),
      cmocka_unit_test(test_bitcast_convert),
      cmocka_unit_test(test_iota),
      cmocka_unit_test(test_broadcast_in_dim),
      cmocka_unit_test(test_reshape_transpose),
      cmocka_unit_test(test_transpose_3d),
      cmocka_unit_test(test_slice),
      cmocka_unit_test(test_concatenate),
      cmocka_unit_test(test_pad),
      cmocka_unit_test(test_pad_2d),
      cmocka_unit_test(test_reverse),
      cmocka_unit_test(test_reduce_applies),
      cmocka_unit_test(test_reduce_region),
      cmocka_unit_test(test_reduce_argmax),
      cmocka_unit_test(test_dot_matmul),
      cmocka_unit_test(test_dot_batch),
      cmocka_unit_test(test_dot_contract_dim0),
      cmocka_unit_test(test_while_sum),
      cmocka_unit_test(test_func_call),
      cmocka_unit_test(test_custom_call),
      cmocka_unit_test(test_custom_call_two_outputs),
      cmocka_unit_test(test_custom_call_failure),
      cmocka_unit_test(test_custom_call_unregistered),
      cmocka_unit_test(test_int_wrap),
      cmocka_unit_test(test_subbyte_wrap),
      cmocka_unit_test(test_half_types),
      cmocka_unit_test(test_pred_arith),
      cmocka_unit_test(test_complex),
      cmocka_unit_test(test_executable_info),
      cmocka_unit_test(test_entry_selection),
      cmocka_unit_test(test_execute_misuse),
      cmocka_unit_test(test_execute_on_device1),
      cmocka_unit_test(test_add_every_int_type),
      cmocka_unit_test(test_add_every_float_type),
      cmocka_unit_test(test_zero_size_ops),
      cmocka_unit_test(test_return_argument),
      cmocka_unit_test(test_execute_threads),
      cmocka_unit_test(test_check_failure_message),
  };
  return cmocka_run_group_tests(tests, tu_setup_client, tu_teardown_client);
}
