/*
 * test_sim_threads_batched.c - batched products (attention heads) of the
 * packed GEMM (src/sim/gemm.c) on 1, 2 and 3 threads per device: with at
 * least twice as many batches as threads, each thread takes whole batches
 * (one fork-join for the product), else every batch is split among the
 * threads by rows or columns.  Neither reorders a sum, so every thread
 * count gives the same bits; on small integers (as floats) every sum is
 * exact, checked against sums computed here.  MIT licensed.
 */
#include "test_util.h"

static int setup(void **state) { return tu_setup_thread_clients(state, 3); }
static int teardown(void **state) { return tu_teardown_thread_clients(state); }

/* Element i of operand s: an integer in [-4, 4]. */
static float val(int64_t i, int s) {
  return (float)((int64_t)((uint64_t)(i * 7 + s * 13 + (i / 5) * s) % 9) - 4);
}

/* C[b] = A[b] x B[b]^T with A [B, M, K], B [B, N, K] (as q k^T), f32, on
 * each client: exact, and the same bits on every thread count. */
static void check(tu_clients *c, int64_t Bt, int64_t M, int64_t N, int64_t K) {
  int64_t na = Bt * M * K, nb = Bt * N * K, nc = Bt * M * N;
  float *a = malloc(sizeof *a * (size_t)na), *b = malloc(sizeof *b * (size_t)nb);
  assert_true(a && b);
  for (int64_t i = 0; i < na; i++) a[i] = val(i, 1);
  for (int64_t i = 0; i < nb; i++) b[i] = val(i, 2);
  char prog[1024];
  snprintf(prog, sizeof prog,
           "func.func @main(%%a: tensor<%lldx%lldx%lldxf32>, %%b: "
           "tensor<%lldx%lldx%lldxf32>) -> tensor<%lldx%lldx%lldxf32> {\n"
           "  %%r = stablehlo.dot_general %%a, %%b, batching_dims = [0] x "
           "[0], contracting_dims = [2] x [2] : (tensor<%lldx%lldx%lldxf32>, "
           "tensor<%lldx%lldx%lldxf32>) -> tensor<%lldx%lldx%lldxf32>\n"
           "  func.return %%r : tensor<%lldx%lldx%lldxf32>\n}\n",
           (long long)Bt, (long long)M, (long long)K, (long long)Bt,
           (long long)N, (long long)K, (long long)Bt, (long long)M,
           (long long)N, (long long)Bt, (long long)M, (long long)K,
           (long long)Bt, (long long)N, (long long)K, (long long)Bt,
           (long long)M, (long long)N, (long long)Bt, (long long)M,
           (long long)N);
  tu_in in[2] = {{TU_SHAPE(XRT_F32, Bt, M, K), a},
                 {TU_SHAPE(XRT_F32, Bt, N, K), b}};
  tu_out o[3];
  for (int t = 0; t < 3; t++) {
    xrt_status st = tu_run(c->t[t], prog, 2, in, &o[t]);
    if (st) fail_msg("%s: %s", xrt_strerror(st), tu_msg);
    assert_int_equal(o[t].bytes[0], sizeof(float) * (size_t)nc);
  }
  const float *got = (const float *)o[0].data[0];
  for (int64_t q = 0; q < Bt; q++)
    for (int64_t m = 0; m < M; m++)
      for (int64_t n = 0; n < N; n++) {
        double want = 0;
        for (int64_t k = 0; k < K; k++)
          want += (double)a[(q * M + m) * K + k] * b[(q * N + n) * K + k];
        double g = got[(q * M + m) * N + n];
        if (g != want)
          fail_msg("[%lld,%lld,%lld] %.9g, want %.9g", (long long)q,
                   (long long)m, (long long)n, g, want);
      }
  for (int t = 1; t < 3; t++)
    assert_memory_equal(o[t].data[0], o[0].data[0], o[0].bytes[0]);
  for (int t = 0; t < 3; t++) tu_out_free(&o[t]);
  free(a), free(b);
}

/* 12 heads of 40 x 50 over 33; 7 of 130 x 20 over 64 (several row
 * panels); 5 heads: a batch per thread on two threads, split on three. */
static void test_many_batches(void **state) {
  tu_clients *c = (tu_clients *)*state;
  check(c, 12, 40, 50, 33);
  check(c, 7, 130, 20, 64);
  check(c, 5, 24, 70, 48);
}

/* Fewer batches than twice the threads: each split among the threads. */
static void test_few_batches(void **state) {
  tu_clients *c = (tu_clients *)*state;
  check(c, 3, 64, 96, 40);
  check(c, 2, 100, 30, 20);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_many_batches),
      cmocka_unit_test(test_few_batches),
  };
  return cmocka_run_group_tests(tests, setup, teardown);
}
