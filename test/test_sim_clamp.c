/*
 * test_sim_clamp.c - f32 clamp (src/sim/move.c, sixteen lanes at a time)
 * against a reference written here: clamp(lo, x, hi) = min(max(x, lo),
 * hi) with IEEE-754 maximum/minimum (a NaN operand gives NaN, -0 < +0),
 * bit for bit, with scalar and array bounds, NaN and signed-zero inputs
 * and bounds, and lengths around the vector width.  MIT licensed.
 */
#include "test_util.h"

#include <math.h>

static uint32_t bits_of(float f) {
  uint32_t u;
  memcpy(&u, &f, sizeof u);
  return u;
}


static float pick(uint32_t r) {
  static const float vals[] = {-7.5f, -6.0f, -1.0f, -0.0f, 0.0f,  0.5f,
                               1.0f,  5.99f, 6.0f,  6.5f,  100.f, NAN};
  return vals[r % (sizeof vals / sizeof vals[0])];
}

static void check(xrt_client *c, int64_t n, int scalar_bounds) {
  float *x = malloc(sizeof(float) * (size_t)n);
  float *lo = malloc(sizeof(float) * (size_t)n);
  float *hi = malloc(sizeof(float) * (size_t)n);
  uint32_t seed = (uint32_t)n * 2654435761u + (uint32_t)scalar_bounds;
  for (int64_t i = 0; i < n; i++) {
    seed = seed * 1664525u + 1013904223u;
    x[i] = pick(seed >> 8);
    lo[i] = pick(seed >> 16);
    hi[i] = pick(seed >> 20);
  }
  char text[512];
  if (scalar_bounds)
    snprintf(text, sizeof text,
             "func.func @main(%%l: tensor<f32>, %%x: tensor<%lldxf32>, "
             "%%h: tensor<f32>) -> tensor<%lldxf32> {\n"
             "  %%r = stablehlo.clamp %%l, %%x, %%h : (tensor<f32>, "
             "tensor<%lldxf32>, tensor<f32>) -> tensor<%lldxf32>\n"
             "  func.return %%r : tensor<%lldxf32>\n}\n",
             (long long)n, (long long)n, (long long)n, (long long)n,
             (long long)n);
  else
    snprintf(text, sizeof text,
             "func.func @main(%%l: tensor<%lldxf32>, %%x: tensor<%lldxf32>, "
             "%%h: tensor<%lldxf32>) -> tensor<%lldxf32> {\n"
             "  %%r = stablehlo.clamp %%l, %%x, %%h : tensor<%lldxf32>\n"
             "  func.return %%r : tensor<%lldxf32>\n}\n",
             (long long)n, (long long)n, (long long)n, (long long)n,
             (long long)n, (long long)n);
  xrt_shape vs = TU_SHAPE(XRT_F32, n), ss = TU_SCALAR(XRT_F32);
  tu_in in[3] = {{scalar_bounds ? ss : vs, lo}, {vs, x},
                 {scalar_bounds ? ss : vs, hi}};
  tu_out o;
  xrt_status s = tu_run(c, text, 3, in, &o);
  if (s) fail_msg("%s", tu_msg);
  const float *got = (const float *)o.data[0];
  for (int64_t i = 0; i < n; i++) {
    float l = scalar_bounds ? lo[0] : lo[i], h = scalar_bounds ? hi[0] : hi[i];
    float want = tu_ieee_minf(tu_ieee_maxf(x[i], l), h);
    if (bits_of(got[i]) != bits_of(want) && !(got[i] != got[i] && want != want))
      fail_msg("n %lld scalar %d [%lld]: clamp(%a, %a, %a) = %a, want %a",
               (long long)n, scalar_bounds, (long long)i, (double)l,
               (double)x[i], (double)h, (double)got[i], (double)want);
  }
  tu_out_free(&o);
  free(x);
  free(lo);
  free(hi);
}

static void test_scalar_bounds(void **state) {
  for (int64_t n = 1; n <= 40; n++) check((xrt_client *)*state, n, 1);
  check((xrt_client *)*state, 4099, 1);
}

static void test_array_bounds(void **state) {
  for (int64_t n = 1; n <= 40; n++) check((xrt_client *)*state, n, 0);
  check((xrt_client *)*state, 4099, 0);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_scalar_bounds),
      cmocka_unit_test(test_array_bounds),
  };
  return cmocka_run_group_tests(tests, tu_setup_client, tu_teardown_client);
}
