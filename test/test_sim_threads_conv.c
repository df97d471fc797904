/*
 * test_sim_threads_conv.c - feature-major (NCHW) convolutions planned by
 * src/sim/conv_gemm.c as weights x im2col products, on 1, 2 and 3 threads
 * per device: on several threads, a panel that one thread would make whole
 * goes in chunks of whole result rows, each chunk one thread's own (its
 * panel and its product, written in place); panels over 4 MiB go in such
 * chunks on any thread count, the products written in place too.
 *
 * Against the reference of conv_case_util.h (sums in double): on small
 * integers every product and partial sum is exact, so bit for bit; on
 * reals within the bound of reordered sums.  The chunks keep the K blocks
 * of the whole product, so every thread count gives the same bits.  Sizes
 * stay small: the panels over 4 MiB have few result features.  Also the
 * kernel kept packed across executes on the same buffer (gemm_cache.c),
 * then a new kernel.  MIT licensed.
 */
#define _POSIX_C_SOURCE 200809L /* setenv */
#include "conv_case_util.h"

/* NCHW / OIHW 2-d convolution: N x I x H x W by O x I x kh x kw. */
static conv_case nchw(int64_t N, int64_t H, int64_t W, int64_t I, int64_t O,
                      int64_t kh, int64_t kw, int64_t s, int64_t pad,
                      int f64, int ints) {
  conv_case k;
  memset(&k, 0, sizeof k);
  k.ns = 2, k.f64 = f64, k.ints = ints, k.N = N, k.C = 1, k.I = I;
  k.mult = O;
  for (int d = 0; d < 3; d++)
    k.s[d] = k.ld[d] = k.rd[d] = 1;
  k.in[0] = H, k.in[1] = W, k.k[0] = kh, k.k[1] = kw;
  for (int d = 0; d < 2; d++)
    k.s[d] = s, k.lo[d] = k.hi[d] = pad;
  layout(&k, 1);
  return k;
}

static int setup(void **state) { return tu_setup_thread_clients(state, 3); }
static int teardown(void **state) { return tu_teardown_thread_clients(state); }

/* One thread against the reference, two and three the same bits. */
static void check_all(void **state, const conv_case *k) {
  tu_clients *c = (tu_clients *)*state;
  check(c->t[0], c->t[1], k);
  check(c->t[1], c->t[2], k);
}

/* Panels under 4 MiB: whole on one thread, in 4 (two threads) or 6
 * (three) chunks of whole rows on several, a last narrower chunk or not;
 * batches go chunk by chunk of each element. */
static void test_row_chunks(void **state) {
  /* 40 x 40 results, 16 x 9 = 144 rows of K: 10 rows a chunk on two
   * threads, 7 (and a last of 5) on three */
  conv_case k = nchw(1, 40, 40, 16, 24, 3, 3, 1, 1, 0, 1);
  check_all(state, &k);
  k = nchw(1, 40, 40, 16, 24, 3, 3, 1, 1, 0, 0);
  check_all(state, &k);
  /* stride 2, no padding: 27 x 27 = 729 results, 14 and 13 rows on two
   * threads, whole on three (fewer than 768 results) */
  k = nchw(2, 55, 55, 8, 20, 3, 3, 2, 0, 0, 1);
  check_all(state, &k);
  /* f64, a batch of 3, 5 x 5 windows: 4 and 3 chunks of each element */
  k = nchw(3, 36, 34, 6, 10, 5, 5, 1, 2, 1, 0);
  check_all(state, &k);
  /* K over one K block (16 x 49 = 784): the same blocks in every chunk;
   * 9, 9, 9 and 7 rows */
  k = nchw(1, 34, 34, 16, 12, 7, 7, 1, 3, 0, 1);
  check_all(state, &k);
}

/* Panels over 4 MiB a batch element (72 x 15625 floats: 8 chunks of 15
 * rows and a last of 5; 147 x 14280: 17 of 7 rows and a last of 1): chunks
 * of whole rows on any thread count, each product written into place. */
static void test_big_panels(void **state) {
  if (tu_light()) {
    print_message("test_big_panels: left to the runs without "
                  "XRT_TEST_LIGHT\n");
    return;
  }
  conv_case k = nchw(1, 125, 125, 8, 4, 3, 3, 1, 1, 0, 1);
  check_all(state, &k);
  /* a batch of 2, reals, stride 2 with a last narrower chunk */
  k = nchw(2, 245, 243, 3, 6, 7, 7, 2, 0, 0, 0);
  check_all(state, &k);
}

/* Small panels stay whole on every thread count (fewer than 512
 * results), as 1x1 ones of stride 1 (the lhs in place): the same bits. */
static void test_small(void **state) {
  conv_case k = nchw(1, 13, 13, 32, 40, 3, 3, 1, 1, 0, 1);
  check_all(state, &k);
  k = nchw(2, 20, 20, 8, 16, 1, 1, 1, 0, 0, 0); /* lhs in place */
  check_all(state, &k);
}

/* Executes k's program on one input and one kernel buffer three times,
 * then on a new kernel three times (the kernel is kept packed across
 * executes while its buffer is unchanged: gemm_cache.c), each result
 * checked exactly (small integers) against the reference. */
static void repeat(xrt_client *cl, const conv_case *k) {
  int rank = k->ns + 2;
  int64_t ls[5], rs[5], os[5];
  sizes(k, ls, rs, os);
  int64_t nx = numel(rank, ls), nw = numel(rank, rs), ny = numel(rank, os);
  double *x = malloc(sizeof *x * (size_t)nx);
  double *w = malloc(sizeof *w * (size_t)nw);
  double *y = malloc(sizeof *y * (size_t)ny);
  double *sa = malloc(sizeof *sa * (size_t)ny);
  float *got = malloc(sizeof *got * (size_t)ny);
  assert_true(x && w && y && sa && got);
  char *prog = program(k);
  xrt_executable *e = tu_compile(cl, prog, 0, NULL);
  assert_non_null(e);
  fill(x, nx, 1);
  void *hx = pack(x, nx, 0);
  xrt_shape sx = phys_shape(k, k->lp, ls), sw = phys_shape(k, k->rp, rs);
  xrt_buffer *bx = NULL;
  assert_int_equal(
      xrt_buffer_from_host(cl, xrt_client_device(cl, 0), &sx, hx, &bx),
      XRT_OK);
  for (int kernel = 0; kernel < 2; kernel++) {
    fill(w, nw, 1);
    reference(k, x, w, y, sa);
    void *hw = pack(w, nw, 0);
    xrt_buffer *bw = NULL;
    assert_int_equal(
        xrt_buffer_from_host(cl, xrt_client_device(cl, 0), &sw, hw, &bw),
        XRT_OK);
    for (int r = 0; r < 3; r++) {
      xrt_buffer *args[2] = {bx, bw}, *out = NULL;
      if (xrt_execute(e, xrt_client_device(cl, 0), args, 2, &out, 1, NULL))
        fail_msg("execute: %s", xrt_last_error());
      assert_int_equal(
          xrt_buffer_to_host(out, got, sizeof *got * (size_t)ny), XRT_OK);
      for (int64_t i = 0; i < ny; i++)
        if ((double)got[i] != y[i])
          fail_msg("kernel %d, call %d, element %lld: %.9g, want %.9g\n%s",
                   kernel, r, (long long)i, (double)got[i], y[i], prog);
      xrt_buffer_release(out);
    }
    xrt_buffer_release(bw);
    free(hw);
  }
  xrt_buffer_release(bx);
  xrt_executable_release(e);
  free(hx), free(prog), free(x), free(w), free(y), free(sa), free(got);
}

/* The kernel packed once for many calls, on every path: a whole panel (one
 * thread), chunks of one thread each (two threads; a last narrower chunk
 * has a product of its own), panels over 4 MiB in chunks. */
static void test_kernel_kept(void **state) {
  tu_clients *c = (tu_clients *)*state;
  conv_case k = nchw(1, 36, 34, 6, 20, 3, 3, 1, 1, 0, 1);
  repeat(c->t[0], &k);
  repeat(c->t[1], &k);
  k = nchw(2, 27, 27, 16, 40, 3, 3, 1, 1, 0, 1); /* 13 and 14 rows */
  repeat(c->t[1], &k);
  if (!tu_light()) {
    k = nchw(1, 125, 125, 8, 4, 3, 3, 1, 1, 0, 1);
    repeat(c->t[0], &k);
    repeat(c->t[1], &k);
  }
}

int main(void) {
  /* the direct paths these tests are about, not Winograd's
   * (test_sim_conv_wino) */
  setenv("XRT_SIM_WINOGRAD", "0", 1);
  rng_state = 2121;
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_row_chunks),
      cmocka_unit_test(test_big_panels),
      cmocka_unit_test(test_small),
      cmocka_unit_test(test_kernel_kept),
  };
  return cmocka_run_group_tests(tests, setup, teardown);
}
