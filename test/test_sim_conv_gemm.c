/*
 * test_sim_conv_gemm.c - ordinary convolutions (one feature group) whose
 * result has its positions contiguous (NCHW, as PyTorch exports), planned
 * by src/sim/conv_gemm.c as weights x im2col GEMMs (1x1 of stride 1: the
 * lhs read in place); NHWC 1x1 convolutions without padding as plain
 * products, NHWC ones of few positions as im2col x kernel; plus random
 * layouts that go to the other paths.  f32 and f64, against a reference
 * written here.
 *
 * The reference sums, in double, over window positions and input
 * features, padding and lhs-dilation holes as zeros.  The GEMM sums in
 * another order (features major, in K blocks), so on reals results must
 * agree within the error bound of n additions in any order,
 * (n + 2) u sum |x w| (twice that for f64, whose reference rounds too); on
 * small integers every product and partial sum is exact, so bit for bit.
 * Also: the same bits on several threads, 0 * inf at the padding is nan,
 * the SqueezeNet shapes, several K blocks and column blocks, im2col
 * panels made a batch element and a chunk of rows at a time.  MIT
 * licensed.
 */
#define _POSIX_C_SOURCE 200809L /* setenv */
#include "conv_case_util.h"

typedef conv_case cg_case;

/* One group (C = 1) of I input features and O = mult results. */
static cg_case base_case(int ns, int64_t N, int64_t I, int64_t O, int lay,
                         int f64, int ints) {
  cg_case k;
  memset(&k, 0, sizeof k);
  k.ns = ns, k.f64 = f64, k.ints = ints, k.N = N, k.C = 1, k.I = I;
  k.mult = O;
  for (int d = 0; d < 3; d++)
    k.s[d] = k.ld[d] = k.rd[d] = 1;
  layout(&k, lay);
  return k;
}

static cg_case conv2d(int64_t N, int64_t H, int64_t W, int64_t I, int64_t O,
                      int64_t kh, int64_t kw, int64_t s, int64_t pad, int lay,
                      int f64, int ints) {
  cg_case k = base_case(2, N, I, O, lay, f64, ints);
  k.in[0] = H, k.in[1] = W, k.k[0] = kh, k.k[1] = kw;
  for (int d = 0; d < 2; d++)
    k.s[d] = s, k.lo[d] = k.hi[d] = pad;
  return k;
}

/* Multiply-adds of the reference. */
static double cost(const cg_case *k) {
  double c = (double)k->N * (double)k->I * (double)k->mult;
  for (int d = 0; d < k->ns; d++)
    c *= (double)out_dim(k, d) * (double)k->k[d];
  return c;
}

/* Batches 1-3, 1-70 features each side, windows 1x1 to 7x7, strides 1-2,
 * padding -1..3, dilations; NCHW / OIHW half the time, NHWC / HWIO or a
 * random layout otherwise. */
static cg_case random_case(void) {
  cg_case k;
  for (;;) {
    uint32_t r = rnd(10);
    int ns = r < 2 ? 1 : r < 9 ? 2 : 3;
    uint32_t l = rnd(4);
    k = base_case(ns, 1 + rnd(3), 1 + rnd(70), 1 + rnd(70),
                  l < 2 ? 1 : l == 2 ? 0 : 2, rnd(4) == 0, rnd(2) == 0);
    int64_t P = 1;
    for (int d = 0; d < ns; d++) {
      int small = ns == 3;
      k.in[d] = 1 + rnd(small ? 6 : 16);
      k.k[d] = 1 + rnd(small ? 3 : 7);
      if (rnd(3) == 0) k.k[d] = 1;
      k.s[d] = 1 + rnd(2);
      k.lo[d] = (int64_t)rnd(5) - 1;
      k.hi[d] = (int64_t)rnd(5) - 1;
      if (rnd(3) == 0) k.lo[d] = k.hi[d] = 0;
      k.ld[d] = rnd(5) == 0 ? 2 : 1;
      k.rd[d] = rnd(5) == 0 ? 2 : 1;
      k.rev[d] = rnd(6) == 0;
      P *= out_dim(&k, d);
    }
    if (P > 0 && cost(&k) < 4e6) break;
  }
  return k;
}

static void test_random(void **state) {
  xrt_client *cl2 = tu_client(1, 2, 0);
  for (int i = 0; i < (tu_light() ? 100 : 250); i++) {
    cg_case k = random_case();
    check(C(state), i % 8 == 0 ? cl2 : NULL, &k);
  }
  xrt_client_release(cl2);
}

/* The convolutions of SqueezeNet 1.0 (smaller images): the 7x7 stride-2
 * stem, squeeze 1x1, expand 1x1 and 3x3 (padding 1), the 1x1 classifier. */
static void test_squeezenet_shapes(void **state) {
  static const int64_t sh[][6] = {/* H, I, O, k, s, pad */
                                  {41, 3, 96, 7, 2, 0},  {27, 96, 16, 1, 1, 0},
                                  {27, 16, 64, 1, 1, 0}, {27, 16, 64, 3, 1, 1},
                                  {13, 128, 32, 1, 1, 0}, {13, 64, 256, 3, 1, 1},
                                  {13, 512, 100, 1, 1, 0}};
  for (size_t i = 0; i < TU_COUNT(sh); i++) /* light: integers only */
    for (int ints = tu_light() ? 1 : 0; ints < 2; ints++) {
      cg_case k = conv2d(1, sh[i][0], sh[i][0], sh[i][1], sh[i][2], sh[i][3],
                         sh[i][3], sh[i][4], sh[i][5], 1, 0, ints);
      check(C(state), NULL, &k);
    }
}

/* 1x1 of stride 1 (the lhs in place: NCHW as the B operand, NHWC as the A
 * operand), batches; and 1x1 with a stride or padding (an im2col panel in
 * NCHW, the windows of gemm.c in NHWC). */
static void test_pointwise(void **state) {
  for (int lay = 0; lay < 2; lay++)
    for (int f64 = 0; f64 < 2; f64++) {
      cg_case k = conv2d(3, 15, 17, 40, 24, 1, 1, 1, 0, lay, f64, 0);
      check(C(state), NULL, &k);
      k = conv2d(2, 9, 9, 33, 65, 1, 1, 1, 0, lay, f64, 1);
      check(C(state), NULL, &k);
      k = conv2d(2, 15, 16, 20, 30, 1, 1, 2, 0, lay, f64, 1);
      check(C(state), NULL, &k);
      k = conv2d(1, 10, 10, 20, 30, 1, 1, 1, 1, lay, f64, 0);
      check(C(state), NULL, &k);
    }
  cg_case k = base_case(1, 2, 50, 70, 1, 0, 0); /* [b, f, 0] */
  k.in[0] = 300, k.k[0] = 1;
  check(C(state), NULL, &k);
  k = base_case(3, 1, 20, 36, 1, 1, 1);
  k.in[0] = 5, k.in[1] = 6, k.in[2] = 7;
  k.k[0] = k.k[1] = k.k[2] = 1;
  check(C(state), NULL, &k);
}

/* K = 70 x 9 = 630 (two K blocks) and 24 x 24 = 576 positions (several
 * column blocks), each layout; 7x7 windows of 64 features (K = 3136);
 * long rows of stride 2. */
static void test_blocks(void **state) {
  for (int lay = 0; lay < (tu_light() ? 1 : 3); lay++) {
    cg_case k = conv2d(1, 24, 24, 70, 40, 3, 3, 1, 1, lay, 0, 0);
    check(C(state), NULL, &k);
    k.ints = 1;
    check(C(state), NULL, &k);
    k = conv2d(2, 10, 11, 64, 20, 7, 7, 1, 3, lay, 1, 0);
    check(C(state), NULL, &k);
    /* stride 2 along rows of 38 results (vector copies of even elements) */
    k = conv2d(2, 20, 75, 7, 9, 3, 3, 2, 1, lay, 0, lay == 2);
    check(C(state), NULL, &k);
    k.hi[1] = 0, k.lo[1] = 2;
    check(C(state), NULL, &k);
  }
}

/* NHWC convolutions of at most as many positions as result features (the
 * last stages of a ResNet): an im2col panel times the kernel in place;
 * padding, stride 2, batches, f64, and one position too many (gemm.c). */
static void test_nhwc_few_positions(void **state) {
  for (int ints = 0; ints < 2; ints++) {
    cg_case k = conv2d(1, 7, 7, 64, 96, 3, 3, 1, 1, 0, 0, ints);
    check(C(state), NULL, &k);
    k = conv2d(2, 4, 4, 32, 64, 3, 3, 1, 1, 0, 1, ints);
    check(C(state), NULL, &k);
    k = conv2d(1, 9, 9, 30, 70, 3, 3, 2, 1, 0, 0, ints);
    check(C(state), NULL, &k);
    k = conv2d(3, 3, 3, 8, 27, 2, 2, 1, 0, 0, 0, ints); /* M = O = 27 */
    check(C(state), NULL, &k);
    k.N = 4; /* M = 36 > O */
    check(C(state), NULL, &k);
  }
  xrt_client *cl2 = tu_client(1, 2, 0);
  cg_case k = conv2d(1, 14, 14, 48, 256, 3, 3, 1, 1, 0, 0, 0);
  check(C(state), cl2, &k);
  xrt_client_release(cl2);
}

/* Results [b, f, 0, 1] from operands in other layouts (read through
 * their strides: the im2col panel, the kernel's offsets), and HWIO
 * kernels against NCHW inputs; ints and reals. */
static void test_odd_layouts(void **state) {
  static const int lps[][4] = {{1, 2, 0, 3}, {2, 3, 1, 0}, {0, 2, 3, 1}};
  static const int rps[][4] = {{2, 3, 1, 0}, {1, 2, 3, 0}, {3, 0, 2, 1}};
  for (int i = 0; i < 3; i++)
    for (int ints = 0; ints < 2; ints++) {
      cg_case k = conv2d(2, 13, 15, 21, 19, 3, 3, 1 + (i == 1), 1, 1, 0, ints);
      memcpy(k.lp, lps[i], sizeof lps[i]);
      memcpy(k.rp, rps[i], sizeof rps[i]);
      check(C(state), NULL, &k);
      k = conv2d(3, 11, 12, 30, 17, 1, 1, 1, 0, 1, 1, ints); /* 1x1 */
      memcpy(k.lp, lps[i], sizeof lps[i]);
      memcpy(k.rp, rps[i], sizeof rps[i]);
      check(C(state), NULL, &k);
    }
}

/* Several threads split the products: the same bits as one. */
static void test_threads(void **state) {
  xrt_client *cl2 = tu_client(1, 2, 0);
  xrt_client *cl4 = tu_client(1, 4, 0);
  /* light: one image of each (still rows for every thread) */
  int nb = tu_light() ? 1 : 2;
  for (int lay = 0; lay < (tu_light() ? 1 : 3); lay++) {
    cg_case k = conv2d(nb, 30, 33, 48, 64, 3, 3, 1, 1, lay, 0, 0);
    check(C(state), cl2, &k);
    check(C(state), cl4, &k);
    k = conv2d(nb + 1, 21, 20, 24, 40, 5, 5, 2, 2, lay, 1, 0);
    check(C(state), cl2, &k);
    k = conv2d(nb, 28, 28, 64, 96, 1, 1, 1, 0, lay, 0, 0);
    check(C(state), cl4, &k);
  }
  xrt_client_release(cl2);
  xrt_client_release(cl4);
}

/* As the interpreter: padding is a zero that multiplies the weight, so an
 * infinite weight makes nan where its window position is padding and
 * infinity where it reads 1; a lhs nan spreads to the windows that read it
 * and no further. */
static void test_special_values(void **state) {
  for (int f64 = 0; f64 < 2; f64++) {
    cg_case k = conv2d(1, 8, 8, 4, 16, 3, 3, 1, 1, 1, f64, 0);
    int64_t nx = 4 * 8 * 8, nw = 16 * 4 * 9, ny = 16 * 8 * 8;
    double *x = malloc(sizeof *x * (size_t)nx);
    double *w = calloc((size_t)nw, sizeof *w);
    assert_true(x && w);
    for (int64_t i = 0; i < nx; i++)
      x[i] = 1.0;
    w[0] = INFINITY; /* o 0, i 0, window (0, 0) */
    tu_out o;
    run(C(state), &k, x, w, &o);
    for (int64_t p = 0; p < 64; p++) {
      double v = elem(&o, p, f64); /* o = 0: position p */
      if (p / 8 == 0 || p % 8 == 0)
        assert_true(isnan(v));
      else
        assert_true(isinf(v) && v > 0);
    }
    for (int64_t i = 64; i < ny; i++)
      assert_true(elem(&o, i, f64) == 0.0);
    tu_out_free(&o);
    /* a nan in the lhs at (i 1, 4, 4), all weights 1: the 3x3 results
     * around it are nan, the others 4 * (taps inside the image) */
    for (int64_t i = 0; i < nw; i++)
      w[i] = 1.0;
    x[64 + 4 * 8 + 4] = NAN;
    run(C(state), &k, x, w, &o);
    for (int64_t i = 0; i < ny; i++) {
      int64_t y = i % 64 / 8, xx = i % 8;
      double v = elem(&o, i, f64);
      int rows = 3 - (y == 0) - (y == 7), cols = 3 - (xx == 0) - (xx == 7);
      if (y >= 3 && y <= 5 && xx >= 3 && xx <= 5)
        assert_true(isnan(v));
      else
        assert_true(v == 4.0 * rows * cols);
    }
    tu_out_free(&o);
    free(x), free(w);
  }
}

/* im2col panels over 4 MiB a batch element: one element at a time, in
 * chunks of whole result rows (a last, narrower chunk or not), the same
 * bits on two threads; f64 with strides and dilation. */
static void test_chunks(void **state) {
  if (tu_light()) {
    print_message("test_chunks: left to the runs without XRT_TEST_LIGHT\n");
    return;
  }
  xrt_client *cl2 = tu_client(1, 2, 0);
  cg_case k = conv2d(3, 80, 80, 64, 8, 3, 3, 1, 1, 1, 0, 1);
  check(C(state), cl2, &k);
  k = conv2d(2, 100, 90, 60, 5, 3, 3, 1, 1, 1, 0, 0);
  check(C(state), NULL, &k);
  k = conv2d(2, 120, 110, 30, 6, 5, 5, 2, 2, 1, 1, 0);
  k.rd[1] = 2;
  check(C(state), cl2, &k);
  k = conv2d(1, 130, 60, 40, 1, 3, 3, 1, 1, 1, 0, 1); /* one result row */
  check(C(state), NULL, &k);
  /* 3.5 MiB an element, 42 MiB the batch: elements one by one, whole */
  k = conv2d(12, 40, 40, 64, 4, 3, 3, 1, 1, 1, 0, 1);
  check(C(state), cl2, &k);
  xrt_client_release(cl2);
}

int main(void) {
  /* the direct paths these tests are about, not Winograd's
   * (test_sim_conv_wino) */
  setenv("XRT_SIM_WINOGRAD", "0", 1);
  rng_state = 4242;
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_random),
      cmocka_unit_test(test_squeezenet_shapes),
      cmocka_unit_test(test_pointwise),
      cmocka_unit_test(test_blocks),
      cmocka_unit_test(test_nhwc_few_positions),
      cmocka_unit_test(test_odd_layouts),
      cmocka_unit_test(test_threads),
      cmocka_unit_test(test_special_values),
      cmocka_unit_test(test_chunks),
  };
  return cmocka_run_group_tests(tests, tu_setup_client, tu_teardown_client);
}
