/*
 * test_sim_vmath.c - the simulator's f32 exp, tanh, logistic and rsqrt
 * (vectorized
 * in src/sim/vmath.c) against the double-precision libm values rounded
 * once to f32, which is what the simulator promises (internal.h: "compute
 * in double and round once").
 *
 * 2^20 inputs spread over every f32 exponent and sign (one bit pattern in
 * 4096), runs of consecutive inputs at the method's seams (dense[]), plus
 * the edges (zeros, infinities, NaN, the overflow and underflow
 * thresholds, the clamps, denormals).  Every result must be within one
 * f32 ulp of the reference, NaN for NaN; results that are not identical
 * are counted: none with glibc (whose double results are within an ulp;
 * none over all 2^32 inputs either), rare elsewhere (they can only come
 * from inputs whose exact result lies within ~1e-15 of an f32 rounding
 * boundary).  `make test-isa` runs this with XRT_SIM_ISA=portable and
 * avx2 too, so each build of the kernels is checked.  MIT licensed.
 */
#include "test_util.h"

#include <math.h>

enum { FN_EXP, FN_TANH, FN_LOGISTIC, FN_RSQRT };
static const char *const fn_ops[] = {"exponential", "tanh", "logistic",
                                     "rsqrt"};

static float reference(int fn, float x) {
  double d = x;
  switch (fn) {
  case FN_EXP: return (float)exp(d);
  case FN_TANH: return (float)tanh(d);
  case FN_RSQRT: return (float)(1 / sqrt(d));
  default: return (float)(1 / (1 + exp(-d)));
  }
}

static uint32_t bits_of(float f) {
  uint32_t u;
  memcpy(&u, &f, sizeof u);
  return u;
}

/* Distance in ulps between two finite or infinite floats of one sign
 * ordering (as integers on a monotonic scale). */
static int64_t ulps(float a, float b) {
  int64_t ia = bits_of(a), ib = bits_of(b);
  if (ia & 0x80000000) ia = 0x80000000 - ia;
  if (ib & 0x80000000) ib = 0x80000000 - ib;
  return ia > ib ? ia - ib : ib - ia;
}

/* Runs op over x (n elements) through a compiled program. */
static float *run(xrt_client *c, int fn, const float *x, int64_t n) {
  char text[512];
  snprintf(text, sizeof text,
           "func.func @main(%%x: tensor<%lldxf32>) -> tensor<%lldxf32> {\n"
           "  %%y = stablehlo.%s %%x : tensor<%lldxf32>\n"
           "  func.return %%y : tensor<%lldxf32>\n}\n",
           (long long)n, (long long)n, fn_ops[fn], (long long)n,
           (long long)n);
  tu_in in = {TU_SHAPE(XRT_F32, n), x};
  tu_out o;
  xrt_status s = tu_run(c, text, 1, &in, &o);
  if (s) fail_msg("%s: %s", fn_ops[fn], tu_msg);
  float *y = malloc((size_t)n * sizeof *y);
  memcpy(y, o.data[0], (size_t)n * sizeof *y);
  tu_out_free(&o);
  return y;
}

/* Centres of runs of consecutive inputs (both signs) where the kernels'
 * method has seams: near 0 (1 + x, x - x^3/3, where exp's exact value
 * lies within 2^-51 of an f32 rounding boundary), the table's steps
 * (16 x / ln 2 half-integers for exp, 32 x / ln 2 for tanh's expm1(2 x),
 * where 2^m starts to count), the clamps (120 for exp and logistic, 10 for
 * tanh), the f32 overflow, subnormal and underflow thresholds and where
 * tanh and logistic round to 1. */
static const float dense[] = {
    0x1p-25f,   0x1p-24f,   0x1p-12f, 0.0216608f, 0.3357f, 0.3466f,
    0.6931472f, 88.72283f, 87.33654f, 103.27893f, 103.97208f, 120.0f,
    9.0f,       10.0f,     17.32868f, 16.635532f};
enum { DENSE_RUN = 1024 };

static float *inputs(int64_t *n_out) {
  static const float edges[] = {
      0.0f, -0.0f, INFINITY, -INFINITY, NAN, 1.0f, -1.0f,
      88.72283f, 88.72284f, -87.33654f, -103.27893f, -103.97208f,
      -104.0f, 709.0f, -709.0f, 1e-30f, -1e-30f, 1e-45f, -1e-45f,
      0.17499999f, 0.175f, 0.17500001f, 9.0f, 10.0f, 20.0f, 21.0f,
      -20.0f, 3.4028235e38f, -3.4028235e38f, 0.34657359f, -0.34657359f,
      0x1p-24f, -0x1p-24f, 0x1p-25f, -0x1p-25f, 0x3p-25f, -0x3p-25f,
      0x1p-126f, -0x1p-126f, 0x1p-149f, -0x1p-149f, 120.0f, -120.0f,
      119.99999f, -119.99999f, 120.00001f, -120.00001f, 10.000001f,
      -10.000001f, 1e10f, -1e10f, -NAN};
  int64_t ne = (int64_t)TU_COUNT(edges);
  int64_t nd = (int64_t)TU_COUNT(dense) * 2 * DENSE_RUN;
  int64_t n = ne + nd + (1 << 20);
  float *x = malloc((size_t)n * sizeof *x);
  memcpy(x, edges, sizeof edges);
  float *d = x + ne;
  for (size_t c = 0; c < TU_COUNT(dense); c++)
    for (int64_t i = 0; i < 2 * DENSE_RUN; i++) {
      uint32_t u = bits_of(dense[c]) - DENSE_RUN / 2 + (uint32_t)(i / 2);
      if (i & 1) u |= 0x80000000u;
      memcpy(d++, &u, sizeof u);
    }
  for (int64_t i = 0; i < (1 << 20); i++) {
    uint32_t u = (uint32_t)i * 4096u + (uint32_t)((i * 2654435761u) & 4095u);
    memcpy(&x[ne + nd + i], &u, sizeof u);
  }
  *n_out = n;
  return x;
}

static void check(xrt_client *c, int fn) {
  int64_t n;
  float *x = inputs(&n);
  float *y = run(c, fn, x, n);
  int64_t differ = 0;
  for (int64_t i = 0; i < n; i++) {
    float want = reference(fn, x[i]);
    if (want != want) {
      if (y[i] == y[i])
        fail_msg("%s(%a): got %a, want NaN", fn_ops[fn], (double)x[i],
                 (double)y[i]);
      continue;
    }
    if (bits_of(y[i]) == bits_of(want)) continue;
    if (y[i] != y[i] || ulps(y[i], want) > 1 ||
        signbit(y[i]) != signbit(want))
      fail_msg("%s(%a): got %a, want %a", fn_ops[fn], (double)x[i],
               (double)y[i], (double)want);
    differ++;
  }
  print_message("%s: %lld of %lld results differ by one ulp from libm's\n",
                fn_ops[fn], (long long)differ, (long long)n);
#ifdef __GLIBC__
  assert_int_equal(differ, 0); /* glibc: none over all 2^32 inputs either */
#else
  assert_true(differ <= n / 100000);
#endif
  free(x);
  free(y);
}

static void test_exp(void **state) { check((xrt_client *)*state, FN_EXP); }
static void test_tanh(void **state) { check((xrt_client *)*state, FN_TANH); }
static void test_logistic(void **state) {
  check((xrt_client *)*state, FN_LOGISTIC);
}

/* Lengths that are not a multiple of the vector width, and values of a
 * softmax-sized row: every element against the reference. */
/* Two correctly rounded double operations: the same bits as libm's sqrt
 * for every input, negative ones (NaN) and -0 (-inf) included. */
static void test_rsqrt(void **state) {
  check((xrt_client *)*state, FN_RSQRT);
}

static void test_tails(void **state) {
  for (int64_t n = 1; n <= 19; n++) {
    float x[19];
    for (int64_t i = 0; i < n; i++) x[i] = (float)(i * 7 % 11) * 0.37f - 2.0f;
    for (int fn = 0; fn < 3; fn++) {
      float *y = run((xrt_client *)*state, fn, x, n);
      for (int64_t i = 0; i < n; i++)
        assert_true(ulps(y[i], reference(fn, x[i])) <= 1);
      free(y);
    }
  }
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_exp),
      cmocka_unit_test(test_tanh),
      cmocka_unit_test(test_logistic),
      cmocka_unit_test(test_rsqrt),
      cmocka_unit_test(test_tails),
  };
  return cmocka_run_group_tests(tests, tu_setup_client, tu_teardown_client);
}
