/*
 * test_sim_skinny_split.c - x @ W products with weights [K, N] (the result's
 * dimension innermost) on the skinny path of src/sim/skinny.c, split over
 * one, two and three threads: every result must be bit for bit the plain
 * sequential f32 sum over k from zero (a product rounded, then added, no
 * fused multiply-add), computed here; weights of 2 MiB or more are cut
 * into parts of consecutive rows (about 1 MiB each, at most eight, a
 * multiple of eight rows), each part's sum sequential, the parts' sums
 * added in order.  That is the order the kernel promises whatever the
 * instruction set (XRT_SIM_ISA), the split of the columns or the parts
 * between threads, the 64-column blocks of a single lhs row, the
 * 16-column vectors after them, the columns one at a time after those,
 * the steps of eight weight rows (K not a multiple of eight), and whether
 * the weights are read in place or, from the third call on the same
 * weights of 2 MiB or more, from their panels in the client's cache.
 * Random values (multiples of 2^-8 of either sign) make every sum round,
 * so another order would show.  MIT licensed.
 */
#include "test_util.h"

static uint32_t seed = 4242;
static float rnd(void) {
  seed = seed * 1664525u + 1013904223u;
  return (float)((int)(seed >> 9) % 2001 - 1000) / 256.0f + 1.0f / 3.0f;
}

/* The rows of each part of [K, N] weights (the promise above). */
static int64_t part_rows(int64_t K, int64_t N) {
  double mib = 1048576.0;
  return tu_part_rows(K, 4.0 * (double)K * (double)N, 2 * mib, mib);
}

/* lhs [bt, M, K] (no batch dimension when Bt = 0) times rhs [bt, K, N]
 * contracting K, on client c: each result exactly the parts' sequential
 * sums added in order. */
static void check(xrt_client *c, int64_t Bt, int64_t M, int64_t N,
                  int64_t K) {
  int64_t bt = Bt ? Bt : 1;
  float *a = malloc(sizeof(float) * (size_t)(bt * M * K));
  float *b = malloc(sizeof(float) * (size_t)(bt * K * N));
  assert_true(a && b);
  for (int64_t i = 0; i < bt * M * K; i++) a[i] = rnd();
  for (int64_t i = 0; i < bt * K * N; i++) b[i] = rnd();
  char text[1200];
  long long LB = (long long)Bt, LM = (long long)M, LN = (long long)N,
            LK = (long long)K;
  tu_dot_text(text, sizeof text, "f32", Bt, M, N, K, 1);
  tu_in in[2] = {{Bt ? TU_SHAPE(XRT_F32, Bt, M, K) : TU_SHAPE(XRT_F32, M, K),
                  a},
                 {Bt ? TU_SHAPE(XRT_F32, Bt, K, N) : TU_SHAPE(XRT_F32, K, N),
                  b}};
  /* weights of 2 MiB or more: the third call reads their panels */
  int reps = 4.0 * (double)(bt * K * N) >= 2 * 1048576.0 ? 3 : 1;
  tu_out o[3];
  xrt_status s = tu_run_reps(c, text, 2, in, reps, o);
  if (s) fail_msg("%s\n%s", tu_msg, text);
  int64_t rows = part_rows(K, N);
  for (int r = 0; r < reps; r++) {
    assert_int_equal(o[r].bytes[0], sizeof(float) * (size_t)(bt * M * N));
    const float *got = (const float *)o[r].data[0];
    for (int64_t q = 0; q < bt; q++)
      for (int64_t m = 0; m < M; m++)
        for (int64_t n = 0; n < N; n++) {
          float g = got[(q * M + m) * N + n];
          float want = tu_parted_sum(a + (q * M + m) * K, 1,
                                     b + q * K * N + n, N, K, rows);
          if (memcmp(&g, &want, sizeof g) != 0)
            fail_msg("B %lld M %lld N %lld K %lld call %d: [%lld,%lld,%lld] "
                     "got %.9g want %.9g",
                     LB, LM, LN, LK, r, (long long)q, (long long)m,
                     (long long)n, (double)g, (double)want);
        }
    tu_out_free(&o[r]);
  }
  free(a);
  free(b);
}

/* The shapes, on a client of the given threads. */
static void shapes(int threads) {
  xrt_client *c = tu_client(1, threads, 0);
  assert_non_null(c);
  /* one lhs row: 64-column blocks only; then blocks, a 16-column vector
   * and 5 single columns; K not a multiple of the 8-row step */
  check(c, 0, 1, 384, 64);
  check(c, 0, 1, 64 * 3 + 16 + 5, 37);
  check(c, 0, 1, 100, 9);
  check(c, 2, 1, 130, 21); /* batched */
  /* several lhs rows: the 16-column vectors, four rows at a time */
  check(c, 0, 3, 213, 19);
  check(c, 0, 6, 150, 24);
  if (!tu_light()) {
    check(c, 0, 1, 768, 768); /* a decoder token's attention output */
    check(c, 0, 1, 2304, 200);
    /* parts: eight of 96 rows (an MLP's down projection); three of 472,
     * 472 and 459 rows for each of two batches of three rows */
    check(c, 0, 1, 768, 3072);
    check(c, 2, 3, 600, 1403);
    /* the same from the weights' panels (48 columns, the last short),
     * one to four lhs rows at a time, and in place when batched */
    check(c, 0, 1, 1000, 700);
    check(c, 0, 6, 1000, 700);
  }
  xrt_client_release(c);
}

TU_THREAD_TESTS(shapes)

TU_MAIN(NULL, NULL, cmocka_unit_test(test_one_thread),
        cmocka_unit_test(test_two_threads),
        cmocka_unit_test(test_three_threads))
