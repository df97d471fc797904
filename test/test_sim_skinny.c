/*
 * test_sim_skinny.c - skinny f32 products (src/sim/skinny.c): few lhs rows
 * against weights, the contracted dimension innermost in both operands,
 * with and without batch dimensions, against a double-precision reference
 * written here.  Each result must be within the floating-point error bound
 * of a sum of K products, K u sum |a b| (u = 2^-24), of the exact value;
 * products the skinny path does not take (contracted dimension not
 * innermost, too short, too many rows) are checked the same way.  MIT
 * licensed.
 */
#include "test_util.h"

#include <math.h>

static uint32_t seed = 7;
static float rnd(void) {
  seed = seed * 1664525u + 1013904223u;
  return (float)((int)(seed >> 9) % 2001 - 1000) / 256.0f;
}

/* lhs [Bt, M, K] . rhs [Bt, N, K] contracting K, batch Bt (Bt = 0: no
 * batch dimension), or with rhs_t: rhs [Bt, K, N] contracting its K. */
static void check(xrt_client *c, int64_t Bt, int64_t M, int64_t N, int64_t K,
                  int rhs_t) {
  int64_t bt = Bt ? Bt : 1;
  float *a = malloc(sizeof(float) * (size_t)(bt * M * K));
  float *b = malloc(sizeof(float) * (size_t)(bt * N * K));
  for (int64_t i = 0; i < bt * M * K; i++) a[i] = rnd();
  for (int64_t i = 0; i < bt * N * K; i++) b[i] = rnd();
  char ls[64], rs[64], os[64], text[1024];
  if (Bt) {
    snprintf(ls, sizeof ls, "%lldx%lldx%lld", (long long)Bt, (long long)M,
             (long long)K);
    snprintf(rs, sizeof rs, "%lldx%lldx%lld", (long long)Bt,
             (long long)(rhs_t ? K : N), (long long)(rhs_t ? N : K));
    snprintf(os, sizeof os, "%lldx%lldx%lld", (long long)Bt, (long long)M,
             (long long)N);
  } else {
    snprintf(ls, sizeof ls, "%lldx%lld", (long long)M, (long long)K);
    snprintf(rs, sizeof rs, "%lldx%lld", (long long)(rhs_t ? K : N),
             (long long)(rhs_t ? N : K));
    snprintf(os, sizeof os, "%lldx%lld", (long long)M, (long long)N);
  }
  snprintf(text, sizeof text,
           "func.func @main(%%a: tensor<%sxf32>, %%b: tensor<%sxf32>) -> "
           "tensor<%sxf32> {\n"
           "  %%r = stablehlo.dot_general %%a, %%b, %s contracting_dims = "
           "[%d] x [%d], precision = [DEFAULT, DEFAULT] : (tensor<%sxf32>, "
           "tensor<%sxf32>) -> tensor<%sxf32>\n"
           "  func.return %%r : tensor<%sxf32>\n}\n",
           ls, rs, os, Bt ? "batching_dims = [0] x [0]," : "", Bt ? 2 : 1,
           (Bt ? 1 : 0) + (rhs_t ? 0 : 1), ls, rs, os, os);
  tu_in in[2] = {{Bt ? TU_SHAPE(XRT_F32, Bt, M, K) : TU_SHAPE(XRT_F32, M, K),
                  a},
                 {Bt ? (rhs_t ? TU_SHAPE(XRT_F32, Bt, K, N)
                              : TU_SHAPE(XRT_F32, Bt, N, K))
                     : (rhs_t ? TU_SHAPE(XRT_F32, K, N)
                              : TU_SHAPE(XRT_F32, N, K)),
                  b}};
  tu_out o;
  xrt_status s = tu_run(c, text, 2, in, &o);
  if (s) fail_msg("%s\n%s", tu_msg, text);
  const float *got = (const float *)o.data[0];
  for (int64_t q = 0; q < bt; q++)
    for (int64_t m = 0; m < M; m++)
      for (int64_t n = 0; n < N; n++) {
        double exact = 0, mag = 0;
        for (int64_t k = 0; k < K; k++) {
          double x = a[(q * M + m) * K + k];
          double y = rhs_t ? b[(q * K + k) * N + n] : b[(q * N + n) * K + k];
          exact += x * y;
          mag += fabs(x * y);
        }
        double g = got[(q * M + m) * N + n];
        double bound = (double)K * ldexp(1.0, -24) * mag + 1e-30;
        if (!(fabs(g - exact) <= bound))
          fail_msg("B %lld M %lld N %lld K %lld rhs_t %d: [%lld,%lld,%lld] "
                   "got %.9g want %.9g (bound %.3g)",
                   (long long)Bt, (long long)M, (long long)N, (long long)K,
                   rhs_t, (long long)q, (long long)m, (long long)n, g, exact,
                   bound);
      }
  tu_out_free(&o);
  free(a);
  free(b);
}

/* The shapes of the model zoo's LSTM step and decoder token. */
static void test_model_shapes(void **state) {
  xrt_client *c = (xrt_client *)*state;
  check(c, 0, 8, 1024, 128, 0);
  check(c, 0, 8, 1024, 256, 0);
  check(c, 0, 1, 2304, 768, 0);
  check(c, 12, 1, 64, 64, 0); /* attention: one query against keys */
}

/* Every row count up to 17 (tiles of four, a partial one), odd and even
 * column counts, lengths around the 16-lane blocks. */
static void test_edges(void **state) {
  xrt_client *c = (xrt_client *)*state;
  static const int64_t ks[] = {31, 32, 33, 47, 48, 63, 200};
  for (int64_t m = 1; m <= 17; m++)
    for (size_t i = 0; i < TU_COUNT(ks); i++)
      check(c, m % 3 ? 0 : 2, m, 1 + (m * 5) % 9, ks[i], 0);
}

/* Weights [K, N] (x @ W): 64-result blocks and the columns after them,
 * any K; with fewer than 64 results, the other paths; same bound. */
static void test_weights_kn(void **state) {
  xrt_client *c = (xrt_client *)*state;
  check(c, 0, 1, 2304, 768, 1); /* a decoder token's QKV product */
  check(c, 0, 8, 100, 64, 1);
  check(c, 3, 5, 130, 7, 1);
  check(c, 2, 17, 64, 40, 1); /* more rows than the skinny path takes */
  for (int64_t m = 1; m <= 9; m++) check(c, m % 2, m, 64 + 9 * m, 3 + m, 1);
  check(c, 0, 8, 40, 64, 1);
  check(c, 3, 2, 17, 35, 1);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_model_shapes),
      cmocka_unit_test(test_edges),
      cmocka_unit_test(test_weights_kn),
  };
  return cmocka_run_group_tests(tests, tu_setup_client, tu_teardown_client);
}
