/*
 * test_sim_gemv.c - products of a few lhs rows against weights (the
 * skinny paths of src/sim/skinny.c and the paths around them): weights
 * [K, N] (x @ W, streamed row by row) and [N, K] (x @ W^T), with and
 * without a batch dimension, M = 1..20 lhs rows (the skinny paths take up
 * to 16), odd and even N and K around the 16-lane vectors, the 8-row
 * steps and the column chunks, f32 and f64, one and two threads.
 *
 * Values are small integers (as floats), so every product and every
 * partial sum is exact in f32 and f64: any summation order gives the exact
 * result, computed here in double, and a result off by anything is a
 * wrong element, row or column.  Random values check the rounding: each
 * result within K u sum |a b| (u = 2^-24) of the exact value (the sums are
 * reordered, so a few ulps).  MIT licensed.
 */
#include "test_util.h"

static uint32_t seed = 12345;
static int rnd_int(int lo, int hi) {
  seed = seed * 1664525u + 1013904223u;
  return lo + (int)((seed >> 8) % (uint32_t)(hi - lo + 1));
}

/* lhs [bt, M, K] (no batch dim when Bt = 0) times rhs [bt, K, N] (nn) or
 * [bt, N, K] contracting K, element type f32 or f64, on client c;
 * integers: exact comparison, else the rounding bound. */
static void check(xrt_client *c, xrt_dtype t, int64_t Bt, int64_t M,
                  int64_t N, int64_t K, int nn, int integers) {
  int64_t bt = Bt ? Bt : 1;
  size_t es = t == XRT_F64 ? 8 : 4;
  const char *ty = t == XRT_F64 ? "f64" : "f32";
  double *a = malloc(sizeof(double) * (size_t)(bt * M * K));
  double *b = malloc(sizeof(double) * (size_t)(bt * N * K));
  void *ah = malloc(es * (size_t)(bt * M * K) + 1);
  void *bh = malloc(es * (size_t)(bt * N * K) + 1);
  assert_true(a && b && ah && bh);
  for (int64_t i = 0; i < bt * M * K; i++) {
    a[i] = integers ? rnd_int(-4, 4) : (double)(float)(rnd_int(-1000, 1000) /
                                                      256.0);
    if (t == XRT_F64) ((double *)ah)[i] = a[i];
    else ((float *)ah)[i] = (float)a[i];
  }
  for (int64_t i = 0; i < bt * N * K; i++) {
    b[i] = integers ? rnd_int(-4, 4) : (double)(float)(rnd_int(-1000, 1000) /
                                                      256.0);
    if (t == XRT_F64) ((double *)bh)[i] = b[i];
    else ((float *)bh)[i] = (float)b[i];
  }
  char text[1200];
  long long LB = (long long)Bt, LM = (long long)M, LN = (long long)N,
            LK = (long long)K;
  long long R0 = nn ? LK : LN, R1 = nn ? LN : LK;
  tu_dot_text(text, sizeof text, ty, Bt, M, N, K, nn);
  tu_in in[2] = {
      {Bt ? TU_SHAPE(t, Bt, M, K) : TU_SHAPE(t, M, K), ah},
      {Bt ? TU_SHAPE(t, Bt, R0, R1) : TU_SHAPE(t, R0, R1), bh}};
  tu_out o;
  xrt_status s = tu_run(c, text, 2, in, &o);
  if (s) fail_msg("%s\n%s", tu_msg, text);
  assert_int_equal(o.bytes[0], es * (size_t)(bt * M * N));
  for (int64_t q = 0; q < bt; q++)
    for (int64_t m = 0; m < M; m++)
      for (int64_t n = 0; n < N; n++) {
        double exact = 0, mag = 0;
        for (int64_t k = 0; k < K; k++) {
          double x = a[(q * M + m) * K + k];
          double y = nn ? b[(q * K + k) * N + n] : b[(q * N + n) * K + k];
          exact += x * y;
          mag += fabs(x * y);
        }
        size_t at = (size_t)((q * M + m) * N + n);
        double g = t == XRT_F64 ? ((const double *)o.data[0])[at]
                                : (double)((const float *)o.data[0])[at];
        double bound =
            integers ? 0 : (double)K * ldexp(1.0, t == XRT_F64 ? -53 : -24) *
                               mag;
        if (!(fabs(g - exact) <= bound))
          fail_msg("%s B %lld M %lld N %lld K %lld nn %d: [%lld,%lld,%lld] "
                   "got %.17g want %.17g (bound %.3g)",
                   ty, LB, LM, LN, LK, nn, (long long)q, (long long)m,
                   (long long)n, g, exact, bound);
      }
  tu_out_free(&o);
  free(a), free(b), free(ah), free(bh);
}

/* Every row count 1..20, both layouts, N and K around the vector width,
 * the 8-row steps and the 64-column blocks; batched for every third. */
static void sweep(xrt_client *c, xrt_dtype t) {
  static const int64_t ns[] = {1, 15, 17, 64, 65, 130};
  static const int64_t ks[] = {1, 7, 8, 9, 31, 33, 100};
  for (int64_t m = 1; m <= 20; m++)
    for (int nn = 0; nn < 2; nn++) {
      int64_t n = ns[(m + (int64_t)nn) % TU_COUNT(ns)];
      int64_t k = ks[(m * 3 + (int64_t)nn) % TU_COUNT(ks)];
      check(c, t, m % 3 ? 0 : 2, m, n, k, nn, 1);
    }
}

/* The skinny paths themselves, every row count: [N, K] weights need
 * K >= 32 (here K % 16 = 0 and 15), [K, N] ones N >= 64 (N % 16 = 0 and
 * 15), each with and without a batch. */
static void test_skinny_every_row_count(void **state) {
  xrt_client *c = (xrt_client *)*state;
  for (int64_t m = 1; m <= 16; m++)
    for (int nn = 0; nn < 2; nn++)
      for (int v = 0; v < 2; v++)
        check(c, XRT_F32, v ? 2 : 0, m, nn ? (v ? 79 : 64) : 65 + 2 * m,
              nn ? 40 + m : (v ? 47 : 32), nn, 1);
}

static void test_rows_f32(void **state) {
  sweep((xrt_client *)*state, XRT_F32);
}

static void test_rows_f64(void **state) {
  sweep((xrt_client *)*state, XRT_F64);
}

/* Chunking of long rows: columns past the 4096 / M chunk of the [K, N]
 * path, a tail of 15 columns, K not a multiple of the 8-row step. */
static void test_wide(void **state) {
  xrt_client *c = (xrt_client *)*state;
  check(c, XRT_F32, 0, 1, 4096 + 256 + 15, 37, 1, 1);
  check(c, XRT_F32, 0, 3, 1379, 21, 1, 1);
  check(c, XRT_F32, 0, 16, 300, 19, 1, 1);
  check(c, XRT_F32, 3, 2, 257, 11, 1, 1);
  check(c, XRT_F32, 0, 4, 301, 45, 0, 1);
}

/* The decoder's shapes with random values: the rounding bound. */
static void test_rounding(void **state) {
  xrt_client *c = (xrt_client *)*state;
  check(c, XRT_F32, 0, 1, 2304, 768, 1, 0);
  check(c, XRT_F32, 0, 5, 700, 300, 1, 0);
  check(c, XRT_F32, 12, 1, 64, 513, 1, 0); /* attention: weights by value */
  check(c, XRT_F32, 12, 1, 513, 64, 0, 0); /* attention: scores */
  check(c, XRT_F64, 0, 2, 300, 200, 1, 0);
}

/* Two threads split the columns (and batches) of one product. */
static void test_two_threads(void **state) {
  (void)state;
  xrt_client *c = tu_client(1, 2, 0);
  check(c, XRT_F32, 0, 1, 2304, 768, 1, 1);
  check(c, XRT_F32, 0, 1, 2304, 768, 1, 0);
  check(c, XRT_F32, 0, 7, 1000, 64, 1, 1);
  check(c, XRT_F32, 0, 1, 999, 77, 0, 1);
  check(c, XRT_F32, 5, 2, 65, 40, 1, 1);
  check(c, XRT_F32, 5, 3, 33, 40, 0, 1);
  xrt_client_release(c);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_rows_f32),  cmocka_unit_test(test_rows_f64),
      cmocka_unit_test(test_skinny_every_row_count),
      cmocka_unit_test(test_wide),      cmocka_unit_test(test_rounding),
      cmocka_unit_test(test_two_threads),
  };
  return cmocka_run_group_tests(tests, tu_setup_client, tu_teardown_client);
}
