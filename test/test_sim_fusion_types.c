/*
 * test_sim_fusion_types.c - the simulator's fused loops (src/sim/fusion.c)
 * over the element types and ops the fusion has kernels of its own for:
 * select fused with its producers and consumers for elements of 1, 2, 8
 * and 16 bytes; reductions fused with an elementwise producer, for add,
 * multiply, maximum and minimum on f32 and f64; and the legacy
 * stablehlo.broadcast fused into an elementwise op; a transpose and a
 * broadcast of a size-1 dimension fused as strided operands.  Expected values come
 * from reference loops in the test, on small integers that every type
 * holds exactly (so the order of a reduction does not matter).  Issue #25
 * (coverage of src/sim).
 */
#include "test_util.h"

static int setup(void **state) { return tu_setup_client(state); }
static int teardown(void **state) { return tu_teardown_client(state); }

#define N 64

/* select(p, convert(x), convert(y)) doubled, in type T, back to f32:
 * 2 * (p ? x : y). */
static void test_fused_select_types(void **state) {
  static const char *types[] = {"i8", "f16", "i64", "f64", "ui8", "bf16"};
  float x[N], y[N];
  uint8_t p[N];
  for (int i = 0; i < N; i++) {
    x[i] = (float)(i % 7 - 3);
    y[i] = (float)(10 - i % 5);
    p[i] = (uint8_t)(i % 3 == 0);
  }
  for (size_t k = 0; k < TU_COUNT(types); k++) {
    const char *t = types[k];
    int unsig = t[0] == 'u';
    char prog[2048];
    snprintf(prog, sizeof prog,
             "func.func @main(%%x: tensor<64xf32>, %%y: tensor<64xf32>, %%p: tensor<64xi1>) -> tensor<64xf32> {\n"
             "  %%a = stablehlo.convert %%x : (tensor<64xf32>) -> tensor<64x%s>\n"
             "  %%b = stablehlo.convert %%y : (tensor<64xf32>) -> tensor<64x%s>\n"
             "  %%s = stablehlo.select %%p, %%a, %%b : tensor<64xi1>, tensor<64x%s>\n"
             "  %%d = stablehlo.add %%s, %%s : tensor<64x%s>\n"
             "  %%r = stablehlo.convert %%d : (tensor<64x%s>) -> tensor<64xf32>\n"
             "  return %%r : tensor<64xf32>\n"
             "}\n",
             t, t, t, t, t);
    float xs[N];
    for (int i = 0; i < N; i++) xs[i] = unsig ? (float)(i % 7) : x[i];
    float w[N];
    for (int i = 0; i < N; i++) w[i] = 2 * (p[i] ? xs[i] : y[i]);
    tu_in in[3] = {{TU_SHAPE(XRT_F32, N), xs},
                   {TU_SHAPE(XRT_F32, N), y},
                   {TU_SHAPE(XRT_PRED, N), p}};
    tu_out o;
    if (tu_run((xrt_client *)*state, prog, 3, in, &o) != XRT_OK)
      fail_msg("%s: %s", t, tu_msg);
    assert_int_equal(o.bytes[0], sizeof w);
    if (memcmp(o.data[0], w, sizeof w) != 0) fail_msg("%s: differs", t);
    tu_out_free(&o);
  }
}

/* select of complex<f64> (16 bytes) fused: real(p ? x + yi : y + xi) +
 * imag(...) = x + y either way, and real alone picks x or y. */
static void test_fused_select_complex(void **state) {
  const char *prog =
      "func.func @main(%x: tensor<64xf64>, %y: tensor<64xf64>, %p: tensor<64xi1>) -> tensor<64xf64> {\n"
      "  %a = stablehlo.complex %x, %y : tensor<64xcomplex<f64>>\n"
      "  %b = stablehlo.complex %y, %x : tensor<64xcomplex<f64>>\n"
      "  %s = stablehlo.select %p, %a, %b : tensor<64xi1>, tensor<64xcomplex<f64>>\n"
      "  %d = stablehlo.add %s, %s : tensor<64xcomplex<f64>>\n"
      "  %r = stablehlo.real %d : (tensor<64xcomplex<f64>>) -> tensor<64xf64>\n"
      "  return %r : tensor<64xf64>\n"
      "}\n";
  double x[N], y[N], w[N];
  uint8_t p[N];
  for (int i = 0; i < N; i++) {
    x[i] = i * 0.5;
    y[i] = -i;
    p[i] = (uint8_t)(i % 2);
    w[i] = 2 * (p[i] ? x[i] : y[i]);
  }
  tu_in in[3] = {{TU_SHAPE(XRT_F64, N), x},
                 {TU_SHAPE(XRT_F64, N), y},
                 {TU_SHAPE(XRT_PRED, N), p}};
  tu_out o;
  TU_RUN_OK((xrt_client *)*state, prog, 3, in, &o);
  assert_int_equal(o.bytes[0], sizeof w);
  assert_memory_equal(o.data[0], w, sizeof w);
  tu_out_free(&o);
}

/* reduce(op) over dim 1 of x * y, 8x8, for each reducer and float type;
 * x and y are 1 or 2, so products, sums and extremes are exact. */
static void test_fused_reductions(void **state) {
  static const struct {
    const char *op;
    int kind; /* 0 add, 1 mul, 2 max, 3 min */
    const char *init;
  } ops[] = {{"add", 0, "0.0"},
             {"multiply", 1, "1.0"},
             {"maximum", 2, "-1.0e+30"},
             {"minimum", 3, "1.0e+30"}};
  static const char *types[] = {"f32", "f64"};
  double x[N], y[N];
  for (int i = 0; i < N; i++) {
    x[i] = 1 + i % 2;
    y[i] = 1 + (i % 3 == 0);
  }
  for (size_t t = 0; t < TU_COUNT(types); t++)
    for (size_t k = 0; k < TU_COUNT(ops); k++) {
      const char *ty = types[t];
      char prog[2048];
      snprintf(prog, sizeof prog,
               "func.func @main(%%x: tensor<8x8x%s>, %%y: tensor<8x8x%s>) -> tensor<8x%s> {\n"
               "  %%m = stablehlo.multiply %%x, %%y : tensor<8x8x%s>\n"
               "  %%e = stablehlo.add %%m, %%m : tensor<8x8x%s>\n"
               "  %%z = stablehlo.constant dense<%s> : tensor<%s>\n"
               "  %%r = stablehlo.reduce(%%e init: %%z) applies stablehlo.%s across dimensions = [1] : (tensor<8x8x%s>, tensor<%s>) -> tensor<8x%s>\n"
               "  return %%r : tensor<8x%s>\n"
               "}\n",
               ty, ty, ty, ty, ty, ops[k].init, ty, ops[k].op, ty, ty, ty, ty);
      double want[8];
      for (int i = 0; i < 8; i++) {
        double a = ops[k].kind == 0 ? 0 : ops[k].kind == 1 ? 1
                 : ops[k].kind == 2 ? -1e30 : 1e30;
        for (int j = 0; j < 8; j++) {
          double e = 2 * x[i * 8 + j] * y[i * 8 + j];
          a = ops[k].kind == 0 ? a + e : ops[k].kind == 1 ? a * e
            : ops[k].kind == 2 ? (e > a ? e : a) : (e < a ? e : a);
        }
        want[i] = a;
      }
      tu_out o;
      xrt_status st;
      if (t == 0) {
        float xf[N], yf[N], wf[8];
        for (int i = 0; i < N; i++) xf[i] = (float)x[i], yf[i] = (float)y[i];
        for (int i = 0; i < 8; i++) wf[i] = (float)want[i];
        tu_in in[2] = {{TU_SHAPE(XRT_F32, 8, 8), xf},
                       {TU_SHAPE(XRT_F32, 8, 8), yf}};
        st = tu_run((xrt_client *)*state, prog, 2, in, &o);
        if (st != XRT_OK) fail_msg("%s %s: %s", ty, ops[k].op, tu_msg);
        assert_int_equal(o.bytes[0], sizeof wf);
        if (memcmp(o.data[0], wf, sizeof wf) != 0)
          fail_msg("%s %s differs", ty, ops[k].op);
      } else {
        tu_in in[2] = {{TU_SHAPE(XRT_F64, 8, 8), x},
                       {TU_SHAPE(XRT_F64, 8, 8), y}};
        st = tu_run((xrt_client *)*state, prog, 2, in, &o);
        if (st != XRT_OK) fail_msg("%s %s: %s", ty, ops[k].op, tu_msg);
        assert_int_equal(o.bytes[0], sizeof want);
        if (memcmp(o.data[0], want, sizeof want) != 0)
          fail_msg("%s %s differs", ty, ops[k].op);
      }
      tu_out_free(&o);
    }
}

/* The legacy broadcast (leading dimensions) fused into an add: x + r[j]. */
static void test_fused_legacy_broadcast(void **state) {
  const char *prog =
      "func.func @main(%x: tensor<4x8xf32>, %r: tensor<8xf32>) -> tensor<4x8xf32> {\n"
      "  %b = \"stablehlo.broadcast\"(%r) {broadcast_sizes = array<i64: 4>} : (tensor<8xf32>) -> tensor<4x8xf32>\n"
      "  %s = stablehlo.add %x, %b : tensor<4x8xf32>\n"
      "  %m = stablehlo.multiply %s, %s : tensor<4x8xf32>\n"
      "  return %m : tensor<4x8xf32>\n"
      "}\n";
  float x[32], r[8], w[32];
  for (int i = 0; i < 32; i++) x[i] = (float)(i - 16);
  for (int j = 0; j < 8; j++) r[j] = (float)(j * 2);
  for (int i = 0; i < 4; i++)
    for (int j = 0; j < 8; j++) {
      float s = x[i * 8 + j] + r[j];
      w[i * 8 + j] = s * s;
    }
  tu_in in[2] = {{TU_SHAPE(XRT_F32, 4, 8), x}, {TU_SHAPE(XRT_F32, 8), r}};
  tu_out o;
  TU_RUN_OK((xrt_client *)*state, prog, 2, in, &o);
  assert_int_equal(o.bytes[0], sizeof w);
  assert_memory_equal(o.data[0], w, sizeof w);
  tu_out_free(&o);
}

/* A transpose and a broadcast of a size-1 dimension feeding a fused
 * elementwise tree: out[i][j] = (x^T[i][j] + r[0][j]) * x^T[i][j]. */
static void test_fused_transpose_broadcast(void **state) {
  const char *prog =
      "func.func @main(%x: tensor<8x4xf32>, %r: tensor<1x8xf32>) -> tensor<4x8xf32> {\n"
      "  %t = stablehlo.transpose %x, dims = [1, 0] : (tensor<8x4xf32>) -> tensor<4x8xf32>\n"
      "  %b = stablehlo.broadcast_in_dim %r, dims = [0, 1] : (tensor<1x8xf32>) -> tensor<4x8xf32>\n"
      "  %s = stablehlo.add %t, %b : tensor<4x8xf32>\n"
      "  %m = stablehlo.multiply %s, %t : tensor<4x8xf32>\n"
      "  return %m : tensor<4x8xf32>\n"
      "}\n";
  float x[32], r[8], w[32];
  for (int i = 0; i < 32; i++) x[i] = (float)(i % 9 - 4);
  for (int j = 0; j < 8; j++) r[j] = (float)(3 - j);
  for (int i = 0; i < 4; i++)
    for (int j = 0; j < 8; j++) {
      float t = x[j * 4 + i];
      w[i * 8 + j] = (t + r[j]) * t;
    }
  tu_in in[2] = {{TU_SHAPE(XRT_F32, 8, 4), x}, {TU_SHAPE(XRT_F32, 1, 8), r}};
  tu_out o;
  TU_RUN_OK((xrt_client *)*state, prog, 2, in, &o);
  assert_int_equal(o.bytes[0], sizeof w);
  assert_memory_equal(o.data[0], w, sizeof w);
  tu_out_free(&o);
}

TU_MAIN(setup, teardown, cmocka_unit_test(test_fused_select_types),
        cmocka_unit_test(test_fused_select_complex),
        cmocka_unit_test(test_fused_reductions),
        cmocka_unit_test(test_fused_legacy_broadcast),
        cmocka_unit_test(test_fused_transpose_broadcast))
