/*
 * test_sim_skinny_heads.c - skinny products whose batches interleave
 * within the weights' rows, as a decoder's attention reads its KV cache
 * (src/sim/skinny.c, "Batches within rows"): q [heads, d] against keys
 * [T, heads, d] (the contracted dimension innermost: chunks of rows,
 * every head of a chunk in turn) and probabilities [heads, T] against
 * values [T, heads, d] (rows of all heads at a time, in parts), on one,
 * two and three threads.
 *
 * Keys: small integers, so every partial sum is exact and any order gives
 * the exact result, computed here: a result off by anything is a wrong
 * element, row or head.  Values: random multiples of 2^-8 plus a third,
 * so every sum rounds, and the result must be bit for bit the promised
 * order: weights of 512 KiB or more (all heads) are cut into parts of
 * consecutive rows of about 256 KiB (at most eight, a multiple of eight
 * rows), each part summed in order from its first row, the parts' sums
 * added in order.  MIT licensed.
 */
#include "test_util.h"

static uint32_t seed = 777;
static int rnd_int(int lo, int hi) {
  seed = seed * 1664525u + 1013904223u;
  return lo + (int)((seed >> 8) % (uint32_t)(hi - lo + 1));
}
static float rnd_frac(void) {
  return (float)rnd_int(-1000, 1000) / 256.0f + 1.0f / 3.0f;
}

/* q [H, M, D] (M rows a head; no M dimension when M is 0) against keys
 * [T, H, D] contracting D: scores [H, M, T], exact integers. */
static void check_keys(xrt_client *c, int64_t H, int64_t M, int64_t T,
                       int64_t D) {
  int64_t m = M ? M : 1;
  float *q = malloc(sizeof(float) * (size_t)(H * m * D));
  float *k = malloc(sizeof(float) * (size_t)(T * H * D));
  assert_true(q && k);
  for (int64_t i = 0; i < H * m * D; i++) q[i] = (float)rnd_int(-4, 4);
  for (int64_t i = 0; i < T * H * D; i++) k[i] = (float)rnd_int(-4, 4);
  char text[1600], qs[64], rs[64];
  long long LH = (long long)H, LM = (long long)M, LT = (long long)T,
            LD = (long long)D;
  if (M) {
    snprintf(qs, sizeof qs, "%lldx%lldx%lld", LH, LM, LD);
    snprintf(rs, sizeof rs, "%lldx%lldx%lld", LH, LM, LT);
  } else {
    snprintf(qs, sizeof qs, "%lldx%lld", LH, LD);
    snprintf(rs, sizeof rs, "%lldx%lld", LH, LT);
  }
  snprintf(text, sizeof text,
           "func.func @main(%%q: tensor<%sxf32>, %%k: tensor<%lldx%lldx%lld"
           "xf32>) -> tensor<%sxf32> {\n"
           "  %%0 = stablehlo.dot_general %%q, %%k, batching_dims = [0] x "
           "[1], contracting_dims = [%d] x [2] : (tensor<%sxf32>, "
           "tensor<%lldx%lldx%lldxf32>) -> tensor<%sxf32>\n"
           "  return %%0 : tensor<%sxf32>\n}\n",
           qs, LT, LH, LD, rs, M ? 2 : 1, qs, LT, LH, LD, rs, rs);
  tu_in in[2] = {{M ? TU_SHAPE(XRT_F32, H, M, D) : TU_SHAPE(XRT_F32, H, D),
                  q},
                 {TU_SHAPE(XRT_F32, T, H, D), k}};
  tu_out o;
  xrt_status s = tu_run(c, text, 2, in, &o);
  if (s) fail_msg("%s\n%s", tu_msg, text);
  assert_int_equal(o.bytes[0], sizeof(float) * (size_t)(H * m * T));
  const float *got = (const float *)o.data[0];
  for (int64_t h = 0; h < H; h++)
    for (int64_t r = 0; r < m; r++)
      for (int64_t t = 0; t < T; t++) {
        double want = 0;
        for (int64_t d = 0; d < D; d++)
          want += (double)q[(h * m + r) * D + d] * k[(t * H + h) * D + d];
        if (got[(h * m + r) * T + t] != (float)want)
          fail_msg("keys H %lld M %lld T %lld D %lld: [%lld,%lld,%lld] got "
                   "%g want %g",
                   LH, LM, LT, LD, (long long)h, (long long)r, (long long)t,
                   (double)got[(h * m + r) * T + t], want);
      }
  tu_out_free(&o);
  free(q);
  free(k);
}

/* p [H, M, T] against values [T, H, D] contracting T: [H, M, D], each
 * result exactly the parts' sequential sums added in order. */
static void check_values(xrt_client *c, int64_t H, int64_t M, int64_t T,
                         int64_t D) {
  float *p = malloc(sizeof(float) * (size_t)(H * M * T));
  float *v = malloc(sizeof(float) * (size_t)(T * H * D));
  assert_true(p && v);
  for (int64_t i = 0; i < H * M * T; i++) p[i] = rnd_frac();
  for (int64_t i = 0; i < T * H * D; i++) v[i] = rnd_frac();
  char text[1600];
  long long LH = (long long)H, LM = (long long)M, LT = (long long)T,
            LD = (long long)D;
  snprintf(text, sizeof text,
           "func.func @main(%%p: tensor<%lldx%lldx%lldxf32>, %%v: "
           "tensor<%lldx%lldx%lldxf32>) -> tensor<%lldx%lldx%lldxf32> {\n"
           "  %%0 = stablehlo.dot_general %%p, %%v, batching_dims = [0] x "
           "[1], contracting_dims = [2] x [0] : (tensor<%lldx%lldx%lldxf32>,"
           " tensor<%lldx%lldx%lldxf32>) -> tensor<%lldx%lldx%lldxf32>\n"
           "  return %%0 : tensor<%lldx%lldx%lldxf32>\n}\n",
           LH, LM, LT, LT, LH, LD, LH, LM, LD, LH, LM, LT, LT, LH, LD, LH, LM,
           LD, LH, LM, LD);
  tu_in in[2] = {{TU_SHAPE(XRT_F32, H, M, T), p},
                 {TU_SHAPE(XRT_F32, T, H, D), v}};
  tu_out o;
  xrt_status s = tu_run(c, text, 2, in, &o);
  if (s) fail_msg("%s\n%s", tu_msg, text);
  assert_int_equal(o.bytes[0], sizeof(float) * (size_t)(H * M * D));
  const float *got = (const float *)o.data[0];
  int64_t rows = tu_part_rows(T, 4.0 * (double)(T * H * D), 524288.0,
                              262144.0);
  for (int64_t h = 0; h < H; h++)
    for (int64_t r = 0; r < M; r++)
      for (int64_t d = 0; d < D; d++) {
        float g = got[(h * M + r) * D + d];
        float want = tu_parted_sum(p + (h * M + r) * T, 1, v + h * D + d,
                                   H * D, T, rows);
        if (memcmp(&g, &want, sizeof g) != 0)
          fail_msg("values H %lld M %lld T %lld D %lld: [%lld,%lld,%lld] "
                   "got %.9g want %.9g",
                   LH, LM, LT, LD, (long long)h, (long long)r, (long long)d,
                   (double)g, (double)want);
      }
  tu_out_free(&o);
  free(p);
  free(v);
}

static void shapes(int threads) {
  xrt_client *c = tu_client(1, threads, 0);
  assert_non_null(c);
  /* a decoder's cache of 513 positions, 12 heads of 64: keys in chunks
   * (the last one short), values in six parts (five of 88 rows, 73) */
  check_keys(c, 12, 0, 513, 64);
  check_values(c, 12, 1, 513, 64);
  /* small: one part; two lhs rows a head; odd sizes */
  check_keys(c, 3, 2, 37, 40);
  check_values(c, 3, 2, 200, 80);
  check_values(c, 4, 1, 100, 64);
  xrt_client_release(c);
}

TU_THREAD_TESTS(shapes)

TU_MAIN(NULL, NULL, cmocka_unit_test(test_one_thread),
        cmocka_unit_test(test_two_threads),
        cmocka_unit_test(test_three_threads))
