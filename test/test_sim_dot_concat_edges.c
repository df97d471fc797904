/*
 * test_sim_dot_concat_edges.c - the edges of src/sim/dot_concat.c (a
 * dot_general reading a concatenation that is never materialized), next
 * to test_sim_dot_concat.c: the concatenated dimension a free dimension
 * after batching and contracting ones (of the lhs and of the rhs), one
 * concatenation read by two products in different roles, f32 and f64, on
 * a device of one and of two threads, big parts read ahead on one thread;
 * and every refusal, where the concatenation is materialized and the
 * products must still be right: a reshape splitting the concatenated
 * dimension, both operands the concatenation, a reshape of it read by
 * another op, reshape chains (two reshapes crashed: fusion made them one
 * loop reading the concatenation), parts or results of no elements (an
 * empty result was read out of bounds), an f64 result of f32 operands, a
 * quantized other operand, integers, a concatenation of one operand, one
 * nobody reads, XRT_SIM_NO_FUSION (in a child process: the variable is
 * read once a process).  Host memory running out at each allocation of
 * the split plans.
 *
 * Inputs are multiples of 1/4 in [-1, 1] (and small integers), so every
 * product and partial sum here is a multiple of a small power of two far
 * below 2^20: exact in f32 and f64 in any order of addition, and results
 * must equal the double-precision references computed here bit for bit.
 * One case (test_rounding) uses inputs off that grid, where the split's
 * order of addition (the parts' partial sums added in part order) differs
 * from the reference's: it is compared with a tolerance.  MIT licensed.
 */
#define _POSIX_C_SOURCE 200809L /* setenv, fork, exec */
#include <errno.h>
#if !defined(_WIN32) /* the XRT_SIM_NO_FUSION child: fork and exec */
#include <sys/wait.h>
#include <unistd.h>
#endif

#include "dot_concat_ref.h"

/* Runs fn on a device of one thread and on one of two (the parts'
 * products shared by both threads, or not). */
static void on_both(void (*fn)(xrt_client *)) {
  for (int threads = 1; threads <= 2; threads++) {
    xrt_client *c = tu_client(1, threads, 0);
    fn(c);
    xrt_client_release(c);
  }
}

/* ---- split: the concatenated dimension free after listed ones ---- */

/* lhs [K, B, M]: the concatenated M after the contracting K and the
 * batching B; the result [B, M, N] takes the parts at an offset of each
 * batch (no part written straight into the result). */
static const char lfree_src[] =
    "func.func @main(%a1: tensor<4x2x3xT>, %a2: tensor<4x2x1xT>, "
    "%b: tensor<2x4x5xT>) -> tensor<2x4x5xT> {\n"
    "  %c = stablehlo.concatenate %a1, %a2, dim = 2 : (tensor<4x2x3xT>, "
    "tensor<4x2x1xT>) -> tensor<4x2x4xT>\n"
    "  %d = stablehlo.dot_general %c, %b, batching_dims = [1] x [0], "
    "contracting_dims = [0] x [1] : (tensor<4x2x4xT>, tensor<2x4x5xT>) -> "
    "tensor<2x4x5xT>\n"
    "  func.return %d : tensor<2x4x5xT>\n}\n";

/* rhs [B, K, N]: the concatenated N after the batching B and the
 * contracting K, three parts; the result [B, M, N] */
static const char rfree_src[] =
    "func.func @main(%b1: tensor<2x4x2xT>, %b2: tensor<2x4x1xT>, "
    "%b3: tensor<2x4x3xT>, %a: tensor<2x3x4xT>) -> tensor<2x3x6xT> {\n"
    "  %c = stablehlo.concatenate %b1, %b2, %b3, dim = 2 : "
    "(tensor<2x4x2xT>, tensor<2x4x1xT>, tensor<2x4x3xT>) -> "
    "tensor<2x4x6xT>\n"
    "  %d = stablehlo.dot_general %a, %c, batching_dims = [0] x [0], "
    "contracting_dims = [2] x [1] : (tensor<2x3x4xT>, tensor<2x4x6xT>) -> "
    "tensor<2x3x6xT>\n"
    "  func.return %d : tensor<2x3x6xT>\n}\n";

static void free_after_listed(xrt_client *c) {
  for (int f64 = 0; f64 < 2; f64++) {
    {
      static const int64_t pd[2][MAXR] = {{4, 2, 3}, {4, 2, 1}};
      static const int64_t cd[] = {4, 2, 4}, bd[] = {2, 4, 5};
      dims d = {1, 1, {1}, {0}, {0}, {1}};
      check_one(c, lfree_src, f64, 2, pd, 3, 2, 3, cd, 0, 3, bd, &d);
    }
    {
      static const int64_t pd[3][MAXR] = {{2, 4, 2}, {2, 4, 1}, {2, 4, 3}};
      static const int64_t cd[] = {2, 4, 6}, ad[] = {2, 3, 4};
      dims d = {1, 1, {0}, {0}, {2}, {1}};
      check_one(c, rfree_src, f64, 3, pd, 3, 2, 3, cd, 1, 3, ad, &d);
    }
  }
}

static void test_free_after_listed(void **state) {
  (void)state;
  on_both(free_after_listed);
}

/* ---- one concatenation read by two products ---- */

/* a free dimension of the first product's lhs and, through a reshape, a
 * contracting dimension of the second's rhs */
static const char two_dots_src[] =
    "func.func @main(%a1: tensor<3x4xT>, %a2: tensor<1x4xT>, "
    "%w: tensor<4x2xT>, %p: tensor<2x4xT>) -> (tensor<4x2xT>, "
    "tensor<2x2x2xT>) {\n"
    "  %c = stablehlo.concatenate %a1, %a2, dim = 0 : (tensor<3x4xT>, "
    "tensor<1x4xT>) -> tensor<4x4xT>\n"
    "  %d1 = stablehlo.dot_general %c, %w, contracting_dims = [1] x [0] : "
    "(tensor<4x4xT>, tensor<4x2xT>) -> tensor<4x2xT>\n"
    "  %r = stablehlo.reshape %c : (tensor<4x4xT>) -> tensor<4x2x2xT>\n"
    "  %d2 = stablehlo.dot_general %p, %r, contracting_dims = [1] x [0] : "
    "(tensor<2x4xT>, tensor<4x2x2xT>) -> tensor<2x2x2xT>\n"
    "  func.return %d1, %d2 : tensor<4x2xT>, tensor<2x2x2xT>\n}\n";

static void two_dots(xrt_client *c) {
  static const int64_t pd[2][MAXR] = {{3, 4}, {1, 4}};
  static const int64_t cd[] = {4, 4}, rd[] = {4, 2, 2}, wd[] = {4, 2},
                       qd[] = {2, 4};
  for (int f64 = 0; f64 < 2; f64++) {
    input in[4];
    double cat[16], d1[8], d2[8];
    concat_inputs(in, 2, pd, 2, 0, cat);
    make_input(&in[2], 3, 2, wd);
    make_input(&in[3], 4, 2, qd);
    dims k1 = {0, 1, {0}, {0}, {1}, {0}}, k2 = {0, 1, {0}, {0}, {1}, {0}};
    ref_dot(cat, 2, cd, in[2].v, 2, wd, &k1, d1);
    ref_dot(in[3].v, 2, qd, cat, 3, rd, &k2, d2);
    double *want[2] = {d1, d2};
    int64_t n[2] = {8, 8};
    run_case(c, two_dots_src, f64, 4, in, 2, want, n);
    free_inputs(in, 4);
  }
}

static void test_two_dots(void **state) {
  (void)state;
  on_both(two_dots);
}

/* ---- big parts read ahead (one thread) or not ---- */

/* lhs [T, H, D]: a part of 256 KiB whose batches (H) are not leading, of
 * the lhs (read ahead on a device of one thread), and the same cache laid
 * out [H, T, D] (leading batches: never read ahead). */
static const char lhs_cache_src[] =
    "func.func @main(%kc: tensor<512x4x32xT>, %kn: tensor<1x4x32xT>, "
    "%q: tensor<4x32xT>) -> tensor<4x513xT> {\n"
    "  %c = stablehlo.concatenate %kc, %kn, dim = 0 : (tensor<512x4x32xT>, "
    "tensor<1x4x32xT>) -> tensor<513x4x32xT>\n"
    "  %s = stablehlo.dot_general %c, %q, batching_dims = [1] x [0], "
    "contracting_dims = [2] x [1] : (tensor<513x4x32xT>, tensor<4x32xT>) -> "
    "tensor<4x513xT>\n"
    "  func.return %s : tensor<4x513xT>\n}\n";
static const char lead_cache_src[] =
    "func.func @main(%kc: tensor<4x512x32xT>, %kn: tensor<4x1x32xT>, "
    "%q: tensor<4x32xT>) -> tensor<4x513xT> {\n"
    "  %c = stablehlo.concatenate %kc, %kn, dim = 1 : (tensor<4x512x32xT>, "
    "tensor<4x1x32xT>) -> tensor<4x513x32xT>\n"
    "  %s = stablehlo.dot_general %c, %q, batching_dims = [0] x [0], "
    "contracting_dims = [2] x [1] : (tensor<4x513x32xT>, tensor<4x32xT>) -> "
    "tensor<4x513xT>\n"
    "  func.return %s : tensor<4x513xT>\n}\n";
/* the rhs [T, H, D] (read ahead too) */
static const char rhs_cache_src[] =
    "func.func @main(%kc: tensor<512x4x32xT>, %kn: tensor<1x4x32xT>, "
    "%q: tensor<4x32xT>) -> tensor<4x513xT> {\n"
    "  %c = stablehlo.concatenate %kc, %kn, dim = 0 : (tensor<512x4x32xT>, "
    "tensor<1x4x32xT>) -> tensor<513x4x32xT>\n"
    "  %s = stablehlo.dot_general %q, %c, batching_dims = [0] x [1], "
    "contracting_dims = [1] x [2] : (tensor<4x32xT>, tensor<513x4x32xT>) -> "
    "tensor<4x513xT>\n"
    "  func.return %s : tensor<4x513xT>\n}\n";

static void caches(xrt_client *c) {
  static const int64_t pd[2][MAXR] = {{512, 4, 32}, {1, 4, 32}};
  static const int64_t cd[] = {513, 4, 32}, qd[] = {4, 32};
  static const int64_t hpd[2][MAXR] = {{4, 512, 32}, {4, 1, 32}};
  static const int64_t hcd[] = {4, 513, 32};
  dims l = {1, 1, {1}, {0}, {2}, {1}}, h = {1, 1, {0}, {0}, {2}, {1}};
  dims r = {1, 1, {0}, {1}, {1}, {2}};
  for (int f64 = 0; f64 < 2; f64++) {
    check_one(c, lhs_cache_src, f64, 2, pd, 3, 0, 3, cd, 0, 2, qd, &l);
    check_one(c, lead_cache_src, f64, 2, hpd, 3, 1, 3, hcd, 0, 2, qd, &h);
    check_one(c, rhs_cache_src, f64, 2, pd, 3, 0, 3, cd, 1, 2, qd, &r);
  }
}

static void test_read_ahead(void **state) {
  (void)state;
  on_both(caches);
}

/* ---- inputs off the grid: the split reorders the sum ---- */

/* lhs [M, K] split along K 300 + 100 (two partial sums added): the
 * reference adds the 400 products in one order, the split in another, so
 * the f32 results differ from it by roundings: each is held within
 * 4 * K * 2^-24 of the sum of |products| (a bound of the error of either
 * order of summation), f64 within the same with 2^-53. */
static const char rounding_src[] =
    "func.func @main(%a1: tensor<5x300xT>, %a2: tensor<5x100xT>, "
    "%w: tensor<400x3xT>) -> tensor<5x3xT> {\n"
    "  %c = stablehlo.concatenate %a1, %a2, dim = 1 : (tensor<5x300xT>, "
    "tensor<5x100xT>) -> tensor<5x400xT>\n"
    "  %d = stablehlo.dot_general %c, %w, contracting_dims = [1] x [0] : "
    "(tensor<5x400xT>, tensor<400x3xT>) -> tensor<5x3xT>\n"
    "  func.return %d : tensor<5x3xT>\n}\n";

static void rounding(xrt_client *c) {
  static const int64_t pd[2][MAXR] = {{5, 300}, {5, 100}};
  static const int64_t cd[] = {5, 400}, wd[] = {400, 3};
  dims d = {0, 1, {0}, {0}, {1}, {0}};
  for (int f64 = 0; f64 < 2; f64++) {
    input in[3];
    make_input(&in[0], 1, 2, pd[0]);
    make_input(&in[1], 2, 2, pd[1]);
    make_input(&in[2], 3, 2, wd);
    /* off the grid: values the element type rounds to, then used as is */
    for (int i = 0; i < 3; i++)
      for (int64_t e = 0; e < numel(2, in[i].d); e++) {
        double v = in[i].v[e] + 1.0 / (double)(e % 97 + 3);
        in[i].v[e] = f64 ? v : (double)(float)v;
      }
    double cat[2000], want[15], mag[15], lim[15];
    double *parts[2] = {in[0].v, in[1].v};
    ref_concat(2, parts, pd, 2, 1, cat);
    ref_dot(cat, 2, cd, in[2].v, 2, wd, &d, want);
    ref_dot_sum(cat, 2, cd, in[2].v, 2, wd, &d, 1, mag);
    double eps = f64 ? 0x1p-53 : 0x1p-24;
    for (int e = 0; e < 15; e++) lim[e] = 4.0 * 400 * eps * mag[e];
    double *w = want, *l = lim;
    int64_t n = 15;
    run_case_tol(c, rounding_src, f64, 3, in, 1, &w, &n, &l);
    free_inputs(in, 3);
  }
}

static void test_rounding(void **state) {
  (void)state;
  on_both(rounding);
}

/* ---- materialized: concatenations the products cannot split ---- */

/* the reshape splits the concatenated dimension (8 -> 2 x 4) */
static const char split_dim_src[] =
    "func.func @main(%a1: tensor<2x3xT>, %a2: tensor<2x5xT>, "
    "%w: tensor<4x3xT>) -> tensor<2x2x3xT> {\n"
    "  %c = stablehlo.concatenate %a1, %a2, dim = 1 : (tensor<2x3xT>, "
    "tensor<2x5xT>) -> tensor<2x8xT>\n"
    "  %r = stablehlo.reshape %c : (tensor<2x8xT>) -> tensor<2x2x4xT>\n"
    "  %d = stablehlo.dot_general %r, %w, contracting_dims = [2] x [0] : "
    "(tensor<2x2x4xT>, tensor<4x3xT>) -> tensor<2x2x3xT>\n"
    "  func.return %d : tensor<2x2x3xT>\n}\n";

/* both operands are the concatenation itself */
static const char self_src[] =
    "func.func @main(%a1: tensor<2x4xT>, %a2: tensor<1x4xT>) -> "
    "tensor<3x3xT> {\n"
    "  %c = stablehlo.concatenate %a1, %a2, dim = 0 : (tensor<2x4xT>, "
    "tensor<1x4xT>) -> tensor<3x4xT>\n"
    "  %d = stablehlo.dot_general %c, %c, contracting_dims = [1] x [1] : "
    "(tensor<3x4xT>, tensor<3x4xT>) -> tensor<3x3xT>\n"
    "  func.return %d : tensor<3x3xT>\n}\n";

/* a reshape of it is read by a negate (not a product) */
static const char reshape_user_src[] =
    "func.func @main(%a1: tensor<2x4xT>, %a2: tensor<1x4xT>, "
    "%w: tensor<4x2xT>) -> (tensor<3x2xT>, tensor<12xT>) {\n"
    "  %c = stablehlo.concatenate %a1, %a2, dim = 0 : (tensor<2x4xT>, "
    "tensor<1x4xT>) -> tensor<3x4xT>\n"
    "  %d = stablehlo.dot_general %c, %w, contracting_dims = [1] x [0] : "
    "(tensor<3x4xT>, tensor<4x2xT>) -> tensor<3x2xT>\n"
    "  %r = stablehlo.reshape %c : (tensor<3x4xT>) -> tensor<12xT>\n"
    "  %n = stablehlo.negate %r : tensor<12xT>\n"
    "  func.return %d, %n : tensor<3x2xT>, tensor<12xT>\n}\n";

/* split, with the other operand computed by an add */
static const char other_op_src[] =
    "func.func @main(%a1: tensor<2x4xT>, %a2: tensor<1x4xT>, "
    "%w: tensor<4x2xT>) -> tensor<3x2xT> {\n"
    "  %c = stablehlo.concatenate %a1, %a2, dim = 0 : (tensor<2x4xT>, "
    "tensor<1x4xT>) -> tensor<3x4xT>\n"
    "  %w2 = stablehlo.add %w, %w : tensor<4x2xT>\n"
    "  %d = stablehlo.dot_general %c, %w2, contracting_dims = [1] x [0] : "
    "(tensor<3x4xT>, tensor<4x2xT>) -> tensor<3x2xT>\n"
    "  func.return %d : tensor<3x2xT>\n}\n";

/* split, the other operand [N, K] (its N not of unit stride) */
static const char nt_src[] =
    "func.func @main(%a1: tensor<2x4xT>, %a2: tensor<1x4xT>, "
    "%w: tensor<2x4xT>) -> tensor<3x2xT> {\n"
    "  %c = stablehlo.concatenate %a1, %a2, dim = 0 : (tensor<2x4xT>, "
    "tensor<1x4xT>) -> tensor<3x4xT>\n"
    "  %d = stablehlo.dot_general %c, %w, contracting_dims = [1] x [1] : "
    "(tensor<3x4xT>, tensor<2x4xT>) -> tensor<3x2xT>\n"
    "  func.return %d : tensor<3x2xT>\n}\n";

/* a concatenation of one operand */
static const char single_src[] =
    "func.func @main(%a1: tensor<2x4xT>, %w: tensor<4x2xT>) -> "
    "tensor<2x2xT> {\n"
    "  %c = stablehlo.concatenate %a1, dim = 0 : (tensor<2x4xT>) -> "
    "tensor<2x4xT>\n"
    "  %d = stablehlo.dot_general %c, %w, contracting_dims = [1] x [0] : "
    "(tensor<2x4xT>, tensor<4x2xT>) -> tensor<2x2xT>\n"
    "  func.return %d : tensor<2x2xT>\n}\n";

/* a concatenation nobody reads */
static const char dead_src[] =
    "func.func @main(%a1: tensor<2x4xT>, %a2: tensor<1x4xT>, "
    "%w: tensor<4x2xT>) -> tensor<4x2xT> {\n"
    "  %c = stablehlo.concatenate %a1, %a2, dim = 0 : (tensor<2x4xT>, "
    "tensor<1x4xT>) -> tensor<3x4xT>\n"
    "  %d = stablehlo.add %w, %w : tensor<4x2xT>\n"
    "  func.return %d : tensor<4x2xT>\n}\n";

static void odd_shapes(xrt_client *c) {
  for (int f64 = 0; f64 < 2; f64++) {
    {
      static const int64_t pd[2][MAXR] = {{2, 4}, {1, 4}};
      static const int64_t cd[] = {3, 4}, wd[] = {2, 4};
      dims d = {0, 1, {0}, {0}, {1}, {1}};
      check_one(c, nt_src, f64, 2, pd, 2, 0, 2, cd, 0, 2, wd, &d);
    }
    {
      static const int64_t pd[1][MAXR] = {{2, 4}};
      static const int64_t cd[] = {2, 4}, wd[] = {4, 2};
      dims d = {0, 1, {0}, {0}, {1}, {0}};
      check_one(c, single_src, f64, 1, pd, 2, 0, 2, cd, 0, 2, wd, &d);
    }
    {
      static const int64_t pd[2][MAXR] = {{2, 4}, {1, 4}}, wd[] = {4, 2};
      input in[3];
      make_input(&in[0], 1, 2, pd[0]);
      make_input(&in[1], 2, 2, pd[1]);
      make_input(&in[2], 9, 2, wd);
      double want[8];
      for (int i = 0; i < 8; i++) want[i] = in[2].v[i] + in[2].v[i];
      double *w = want;
      int64_t n = 8;
      run_case(c, dead_src, f64, 3, in, 1, &w, &n);
      free_inputs(in, 3);
    }
  }
}

static void test_odd_shapes(void **state) {
  (void)state;
  on_both(odd_shapes);
}

static void not_split(xrt_client *c) {
  for (int f64 = 0; f64 < 2; f64++) {
    {
      static const int64_t pd[2][MAXR] = {{2, 3}, {2, 5}};
      static const int64_t xd[] = {2, 2, 4}, wd[] = {4, 3};
      dims d = {0, 1, {0}, {0}, {2}, {0}};
      check_one(c, split_dim_src, f64, 2, pd, 2, 1, 3, xd, 0, 2, wd, &d);
    }
    check_self(c, self_src, f64);
    {
      static const int64_t pd[2][MAXR] = {{2, 4}, {1, 4}};
      static const int64_t cd[] = {3, 4}, wd[] = {4, 2};
      input in[3];
      double cat[12], d[6], neg[12], w2[8], d2[6];
      concat_inputs(in, 2, pd, 2, 0, cat);
      make_input(&in[2], 9, 2, wd);
      dims dd = {0, 1, {0}, {0}, {1}, {0}};
      ref_dot(cat, 2, cd, in[2].v, 2, wd, &dd, d);
      for (int i = 0; i < 12; i++) neg[i] = -cat[i];
      double *want[2] = {d, neg};
      int64_t n[2] = {6, 12};
      run_case(c, reshape_user_src, f64, 3, in, 2, want, n);
      for (int i = 0; i < 8; i++) w2[i] = in[2].v[i] + in[2].v[i];
      ref_dot(cat, 2, cd, w2, 2, wd, &dd, d2);
      double *want2 = d2;
      int64_t n2 = 6;
      run_case(c, other_op_src, f64, 3, in, 1, &want2, &n2);
      free_inputs(in, 3);
    }
  }
}

static void test_not_split(void **state) {
  (void)state;
  on_both(not_split);
}

/* Reshape chains: the concatenation read through `deep` reshapes (3x4 ->
 * 12 -> 3x4 -> ...) and the other operand through `odeep` of them. */
static char *chain_src(int deep, int odeep) {
  size_t cap = 8192, w = 0;
  char *s = malloc(cap);
  w += (size_t)snprintf(s + w, cap - w,
      "func.func @main(%%a1: tensor<2x4xf32>, %%a2: tensor<1x4xf32>, "
      "%%w: tensor<4x2xf32>) -> tensor<3x2xf32> {\n"
      "  %%c0 = stablehlo.concatenate %%a1, %%a2, dim = 0 : "
      "(tensor<2x4xf32>, tensor<1x4xf32>) -> tensor<3x4xf32>\n");
  for (int i = 1; i <= deep; i++)
    w += (size_t)snprintf(s + w, cap - w,
        "  %%c%d = stablehlo.reshape %%c%d : (tensor<%sxf32>) -> "
        "tensor<%sxf32>\n", i, i - 1, i % 2 ? "3x4" : "12",
        i % 2 ? "12" : "3x4");
  w += (size_t)snprintf(s + w, cap - w, "  %%w0 = stablehlo.add %%w, %%w : "
                        "tensor<4x2xf32>\n");
  for (int i = 1; i <= odeep; i++)
    w += (size_t)snprintf(s + w, cap - w,
        "  %%w%d = stablehlo.reshape %%w%d : (tensor<%sxf32>) -> "
        "tensor<%sxf32>\n", i, i - 1, i % 2 ? "4x2" : "8",
        i % 2 ? "8" : "4x2");
  assert_true(deep % 2 == 0 && odeep % 2 == 0);
  w += (size_t)snprintf(s + w, cap - w,
      "  %%d = stablehlo.dot_general %%c%d, %%w%d, contracting_dims = [1] x "
      "[0] : (tensor<3x4xf32>, tensor<4x2xf32>) -> tensor<3x2xf32>\n"
      "  func.return %%d : tensor<3x2xf32>\n}\n", deep, odeep);
  assert_true(w < cap);
  return s;
}

static void test_reshape_chains(void **state) {
  xrt_client *c = (xrt_client *)*state;
  static const int64_t pd[2][MAXR] = {{2, 4}, {1, 4}};
  static const int64_t cd[] = {3, 4}, wd[] = {4, 2};
  input in[3];
  double cat[12], w2[8], want[6];
  concat_inputs(in, 2, pd, 2, 0, cat);
  make_input(&in[2], 9, 2, wd);
  for (int i = 0; i < 8; i++) w2[i] = 2 * in[2].v[i];
  dims dd = {0, 1, {0}, {0}, {1}, {0}};
  ref_dot(cat, 2, cd, w2, 2, wd, &dd, want);
  double *w = want;
  int64_t n = 6;
  /* the concatenation read through 2 and 8 reshapes (materialized: fusion
   * makes a chain of reshapes one loop, which read the concatenation's
   * bytes when it was left unmaterialized: a crash); split, the other
   * operand 16 and 18 reshapes from its add (past the 16 looked
   * through) */
  static const int chains[][2] = {{2, 0}, {8, 0}, {0, 16}, {0, 18}};
  for (size_t k = 0; k < TU_COUNT(chains); k++) {
    char *src = chain_src(chains[k][0], chains[k][1]);
    run_case(c, src, 0, 3, in, 1, &w, &n);
    free(src);
  }
  free_inputs(in, 3);
}

/* ---- parts or results of no elements ---- */

/* a part of no rows (the concatenation is the other part) */
static const char empty_part_src[] =
    "func.func @main(%a1: tensor<0x4xT>, %a2: tensor<3x4xT>, "
    "%w: tensor<4x2xT>) -> tensor<3x2xT> {\n"
    "  %c = stablehlo.concatenate %a1, %a2, dim = 0 : (tensor<0x4xT>, "
    "tensor<3x4xT>) -> tensor<3x4xT>\n"
    "  %d = stablehlo.dot_general %c, %w, contracting_dims = [1] x [0] : "
    "(tensor<3x4xT>, tensor<4x2xT>) -> tensor<3x2xT>\n"
    "  func.return %d : tensor<3x2xT>\n}\n";

/* a concatenation of no elements */
static const char empty_cat_src[] =
    "func.func @main(%a1: tensor<0x2xT>, %a2: tensor<0x3xT>, "
    "%w: tensor<5x3xT>) -> tensor<0x3xT> {\n"
    "  %c = stablehlo.concatenate %a1, %a2, dim = 1 : (tensor<0x2xT>, "
    "tensor<0x3xT>) -> tensor<0x5xT>\n"
    "  %d = stablehlo.dot_general %c, %w, contracting_dims = [1] x [0] : "
    "(tensor<0x5xT>, tensor<5x3xT>) -> tensor<0x3xT>\n"
    "  func.return %d : tensor<0x3xT>\n}\n";

/* a result of no elements (the other operand has none): not split */
static const char empty_result_src[] =
    "func.func @main(%a1: tensor<2x4xT>, %a2: tensor<1x4xT>, "
    "%w: tensor<4x0xT>) -> tensor<3x0xT> {\n"
    "  %c = stablehlo.concatenate %a1, %a2, dim = 0 : (tensor<2x4xT>, "
    "tensor<1x4xT>) -> tensor<3x4xT>\n"
    "  %d = stablehlo.dot_general %c, %w, contracting_dims = [1] x [0] : "
    "(tensor<3x4xT>, tensor<4x0xT>) -> tensor<3x0xT>\n"
    "  func.return %d : tensor<3x0xT>\n}\n";

/* split along a contracting dimension of parts of one column */
static const char one_col_src[] =
    "func.func @main(%a1: tensor<3x1xT>, %a2: tensor<3x1xT>, "
    "%a3: tensor<3x1xT>, %w: tensor<3x2xT>) -> tensor<3x2xT> {\n"
    "  %c = stablehlo.concatenate %a1, %a2, %a3, dim = 1 : (tensor<3x1xT>, "
    "tensor<3x1xT>, tensor<3x1xT>) -> tensor<3x3xT>\n"
    "  %d = stablehlo.dot_general %c, %w, contracting_dims = [1] x [0] : "
    "(tensor<3x3xT>, tensor<3x2xT>) -> tensor<3x2xT>\n"
    "  func.return %d : tensor<3x2xT>\n}\n";

static void sizes(xrt_client *c) {
  dims d = {0, 1, {0}, {0}, {1}, {0}};
  for (int f64 = 0; f64 < 2; f64++) {
    {
      static const int64_t pd[2][MAXR] = {{0, 4}, {3, 4}};
      static const int64_t cd[] = {3, 4}, wd[] = {4, 2};
      check_one(c, empty_part_src, f64, 2, pd, 2, 0, 2, cd, 0, 2, wd, &d);
    }
    {
      static const int64_t pd[2][MAXR] = {{0, 2}, {0, 3}};
      static const int64_t cd[] = {0, 5}, wd[] = {5, 3};
      check_one(c, empty_cat_src, f64, 2, pd, 2, 1, 2, cd, 0, 2, wd, &d);
    }
    {
      static const int64_t pd[2][MAXR] = {{2, 4}, {1, 4}};
      static const int64_t cd[] = {3, 4}, wd[] = {4, 0};
      check_one(c, empty_result_src, f64, 2, pd, 2, 0, 2, cd, 0, 2, wd, &d);
    }
    {
      static const int64_t pd[3][MAXR] = {{3, 1}, {3, 1}, {3, 1}};
      static const int64_t cd[] = {3, 3}, wd[] = {3, 2};
      check_one(c, one_col_src, f64, 3, pd, 2, 1, 2, cd, 0, 2, wd, &d);
    }
  }
}

static void test_sizes(void **state) {
  (void)state;
  on_both(sizes);
}

/* ---- other element types: materialized ---- */

/* f32 operands, an f64 result */
static const char wide_src[] =
    "func.func @main(%a1: tensor<2x4xf32>, %a2: tensor<1x4xf32>, "
    "%w: tensor<4x2xf32>) -> tensor<3x2xf64> {\n"
    "  %c = stablehlo.concatenate %a1, %a2, dim = 0 : (tensor<2x4xf32>, "
    "tensor<1x4xf32>) -> tensor<3x4xf32>\n"
    "  %d = stablehlo.dot_general %c, %w, contracting_dims = [1] x [0] : "
    "(tensor<3x4xf32>, tensor<4x2xf32>) -> tensor<3x2xf64>\n"
    "  func.return %d : tensor<3x2xf64>\n}\n";

/* an f32 concatenation against a quantized i8 rhs (scale 0.5) */
#define QW "!quant.uniform<i8:f32, 0.5:0>"
static const char quant_src[] =
    "func.func @main(%a1: tensor<2x4xf32>, %a2: tensor<1x4xf32>, "
    "%wi: tensor<4x2xi8>) -> tensor<3x2xf32> {\n"
    "  %w = stablehlo.bitcast_convert %wi : (tensor<4x2xi8>) -> "
    "tensor<4x2x" QW ">\n"
    "  %c = stablehlo.concatenate %a1, %a2, dim = 0 : (tensor<2x4xf32>, "
    "tensor<1x4xf32>) -> tensor<3x4xf32>\n"
    "  %d = stablehlo.dot_general %c, %w, contracting_dims = [1] x [0] : "
    "(tensor<3x4xf32>, tensor<4x2x" QW ">) -> tensor<3x2xf32>\n"
    "  func.return %d : tensor<3x2xf32>\n}\n";

/* integers */
static const char int_src[] =
    "func.func @main(%a1: tensor<2x4xi32>, %a2: tensor<1x4xi32>, "
    "%w: tensor<4x2xi32>) -> tensor<3x2xi32> {\n"
    "  %c = stablehlo.concatenate %a1, %a2, dim = 0 : (tensor<2x4xi32>, "
    "tensor<1x4xi32>) -> tensor<3x4xi32>\n"
    "  %d = stablehlo.dot_general %c, %w, contracting_dims = [1] x [0] : "
    "(tensor<3x4xi32>, tensor<4x2xi32>) -> tensor<3x2xi32>\n"
    "  func.return %d : tensor<3x2xi32>\n}\n";

static void test_types(void **state) {
  xrt_client *c = (xrt_client *)*state;
  /* cat = [[a1], [a2]] (3x4), w 4x2: values from val() and small ints */
  float a[12], w[8];
  int8_t wi[8];
  int32_t ia[12], iw[8];
  for (int i = 0; i < 12; i++) {
    a[i] = (float)val(i, 1);
    ia[i] = i % 5 - 2;
  }
  for (int i = 0; i < 8; i++) {
    w[i] = (float)val(i, 2);
    wi[i] = (int8_t)(i % 7 - 3);
    iw[i] = 3 - i;
  }
  double want[6], qwant[6];
  int32_t iwant[6];
  for (int m = 0; m < 3; m++)
    for (int n = 0; n < 2; n++) {
      double s = 0, q = 0;
      int32_t is = 0;
      for (int k = 0; k < 4; k++) {
        s += (double)a[m * 4 + k] * (double)w[k * 2 + n];
        q += (double)a[m * 4 + k] * (0.5 * wi[k * 2 + n]);
        is += ia[m * 4 + k] * iw[k * 2 + n];
      }
      want[m * 2 + n] = s, qwant[m * 2 + n] = q, iwant[m * 2 + n] = is;
    }
  tu_out o;
  tu_in in[3] = {{TU_SHAPE(XRT_F32, 2, 4), a},
                 {TU_SHAPE(XRT_F32, 1, 4), a + 8},
                 {TU_SHAPE(XRT_F32, 4, 2), w}};
  TU_RUN_OK(c, wide_src, 3, in, &o);
  assert_int_equal(o.bytes[0], sizeof want);
  assert_memory_equal(o.data[0], want, sizeof want);
  tu_out_free(&o);
  in[2] = (tu_in){TU_SHAPE(XRT_S8, 4, 2), wi};
  TU_RUN_OK(c, quant_src, 3, in, &o);
  assert_int_equal(o.bytes[0], 6 * sizeof(float));
  for (int e = 0; e < 6; e++)
    assert_true(((const float *)o.data[0])[e] == (float)qwant[e]);
  tu_out_free(&o);
  tu_in ii[3] = {{TU_SHAPE(XRT_S32, 2, 4), ia},
                 {TU_SHAPE(XRT_S32, 1, 4), ia + 8},
                 {TU_SHAPE(XRT_S32, 4, 2), iw}};
  TU_RUN_OK(c, int_src, 3, ii, &o);
  assert_int_equal(o.bytes[0], sizeof iwant);
  assert_memory_equal(o.data[0], iwant, sizeof iwant);
  tu_out_free(&o);
}

/* ---- XRT_SIM_NO_FUSION, read once a process: in a child (not on
 * Windows, which has no fork) ---- */

#if !defined(_WIN32)

static const char *self_path = "/proc/self/exe";
static char self_buf[4096];

/* Child: XRT_SIM_NO_FUSION set, the lhs free case on one thread; exit
 * status 0 when its results are right. */
static int child_no_fusion(void) {
  if (!getenv("XRT_SIM_NO_FUSION")) return 2;
  float a[12], w[8], got[6];
  for (int i = 0; i < 12; i++) a[i] = (float)val(i, 1);
  for (int i = 0; i < 8; i++) w[i] = (float)val(i, 2);
  xrt_client *c = NULL;
  if (xrt_client_create(NULL, &c)) return 3;
  tu_in in[3] = {{TU_SHAPE(XRT_F32, 2, 4), a},
                 {TU_SHAPE(XRT_F32, 1, 4), a + 8},
                 {TU_SHAPE(XRT_F32, 4, 2), w}};
  tu_out o;
  static const char src[] =
      "func.func @main(%a1: tensor<2x4xf32>, %a2: tensor<1x4xf32>, "
      "%w: tensor<4x2xf32>) -> tensor<3x2xf32> {\n"
      "  %c = stablehlo.concatenate %a1, %a2, dim = 0 : (tensor<2x4xf32>, "
      "tensor<1x4xf32>) -> tensor<3x4xf32>\n"
      "  %d = stablehlo.dot_general %c, %w, contracting_dims = [1] x [0] : "
      "(tensor<3x4xf32>, tensor<4x2xf32>) -> tensor<3x2xf32>\n"
      "  func.return %d : tensor<3x2xf32>\n}\n";
  int rc = 0;
  if (tu_run(c, src, 3, in, &o)) {
    rc = 4;
  } else {
    if (o.bytes[0] != sizeof got) rc = 5;
    else memcpy(got, o.data[0], sizeof got);
    tu_out_free(&o);
  }
  xrt_client_release(c);
  for (int m = 0; !rc && m < 3; m++)
    for (int n = 0; n < 2; n++) {
      double s = 0;
      for (int k = 0; k < 4; k++) s += (double)a[m * 4 + k] * w[k * 2 + n];
      if (got[m * 2 + n] != (float)s) rc = 6;
    }
  return rc;
}

static void test_no_fusion_env(void **state) {
  (void)state;
  pid_t pid = fork();
  if (pid < 0) fail_msg("fork: %s", strerror(errno));
  if (pid == 0) {
    setenv("XRT_SIM_NO_FUSION", "1", 1);
    execl(self_path, self_path, "--child-no-fusion", (char *)NULL);
    _exit(121);
  }
  int status = 0;
  while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  assert_true(WIFEXITED(status));
  assert_int_equal(WEXITSTATUS(status), 0);
}
#endif /* !_WIN32 */

/* ---- host memory running out at each allocation of a compile ---- */

/* Compiles text (inputs in[0, nin)) with the n-th allocation of the
 * compile failing, for every n: XRT_RESOURCE_EXHAUSTED or success, and no
 * leak; then runs it once and checks result 0 (nwant f32 values). */
static void alloc_walk(const char *text, int nin, const tu_in *in,
                       const float *want, int64_t nwant) {
  int done = 0;
  long n = 1;
  for (; n < 200000 && !done; n++) {
    tu_counting_alloc a;
    xrt_client *c = tu_client_counted(1, &a);
    tu_counting_arm(&a, n);
    xrt_executable *exe = NULL;
    xrt_status s = xrt_compile(c, text, strlen(text), NULL, &exe);
    bool failed = tu_counting_disarm(&a);
    if (s == XRT_OK) {
      xrt_executable_release(exe);
      done = !failed;
    } else if (s != XRT_RESOURCE_EXHAUSTED) {
      fail_msg("allocation %ld: %s: %s", n, xrt_strerror(s),
               xrt_last_error());
    }
    xrt_client_release(c);
    assert_int_equal(atomic_load(&a.live), 0);
  }
  assert_true(done);
  assert_true(n > 10);
  tu_counting_alloc a;
  xrt_client *c = tu_client_counted(1, &a);
  tu_out o;
  TU_RUN_OK(c, text, nin, in, &o);
  assert_int_equal(o.bytes[0], (size_t)nwant * sizeof(float));
  for (int64_t e = 0; e < nwant; e++)
    if (((const float *)o.data[0])[e] != want[e])
      fail_msg("element %lld: got %.9g want %.9g", (long long)e,
               (double)((const float *)o.data[0])[e], (double)want[e]);
  tu_out_free(&o);
  xrt_client_release(c);
  assert_int_equal(atomic_load(&a.live), 0);
}

/* Offset tables of more than 64 entries (each its own block): the lhs
 * [M, K] split along K 65 + 1, M = N = 65. */
static const char tables_k_src[] =
    "func.func @main(%a1: tensor<65x65xf32>, %a2: tensor<65x1xf32>, "
    "%w: tensor<66x65xf32>) -> tensor<65x65xf32> {\n"
    "  %c = stablehlo.concatenate %a1, %a2, dim = 1 : (tensor<65x65xf32>, "
    "tensor<65x1xf32>) -> tensor<65x66xf32>\n"
    "  %d = stablehlo.dot_general %c, %w, contracting_dims = [1] x [0] : "
    "(tensor<65x66xf32>, tensor<66x65xf32>) -> tensor<65x65xf32>\n"
    "  func.return %d : tensor<65x65xf32>\n}\n";

/* ... and batches: lhs [B, 1, 2] split along B 65 + 1 */
static const char tables_b_src[] =
    "func.func @main(%a1: tensor<65x1x2xf32>, %a2: tensor<1x1x2xf32>, "
    "%w: tensor<66x2x1xf32>) -> tensor<66x1x1xf32> {\n"
    "  %c = stablehlo.concatenate %a1, %a2, dim = 0 : (tensor<65x1x2xf32>, "
    "tensor<1x1x2xf32>) -> tensor<66x1x2xf32>\n"
    "  %d = stablehlo.dot_general %c, %w, batching_dims = [0] x [0], "
    "contracting_dims = [2] x [1] : (tensor<66x1x2xf32>, tensor<66x2x1xf32>) "
    "-> tensor<66x1x1xf32>\n"
    "  func.return %d : tensor<66x1x1xf32>\n}\n";

static void walk_one(const char *src, const int64_t (*pd)[MAXR], int rank,
                     int axis, const int64_t *cd, const int64_t *wd,
                     const dims *dd) {
  input in[3];
  double *cat = malloc(sizeof(double) * (size_t)numel(rank, cd));
  concat_inputs(in, 2, pd, rank, axis, cat);
  make_input(&in[2], 3, rank == 2 ? 2 : 3, wd);
  double *want = malloc(sizeof(double) * 65 * 66);
  ref_dot(cat, rank, cd, in[2].v, rank, wd, dd, want);
  int64_t on = rank == 2 ? 65 * 65 : 66;
  float *fw = malloc(sizeof(float) * (size_t)on);
  for (int64_t e = 0; e < on; e++) fw[e] = (float)want[e];
  tu_in ti[3];
  for (int i = 0; i < 3; i++) host_input(&in[i], 0, &ti[i]);
  alloc_walk(src, 3, ti, fw, on);
  for (int i = 0; i < 3; i++) free((void *)ti[i].data);
  free(fw);
  free(want);
  free(cat);
  free_inputs(in, 3);
}

static void test_alloc_tables(void **state) {
  (void)state;
  {
    static const int64_t pd[2][MAXR] = {{65, 65}, {65, 1}};
    static const int64_t cd[] = {65, 66}, wd[] = {66, 65};
    dims d = {0, 1, {0}, {0}, {1}, {0}};
    walk_one(tables_k_src, pd, 2, 1, cd, wd, &d);
  }
  {
    static const int64_t pd[2][MAXR] = {{65, 1, 2}, {1, 1, 2}};
    static const int64_t cd[] = {66, 1, 2}, wd[] = {66, 2, 1};
    dims d = {1, 1, {0}, {0}, {2}, {1}};
    walk_one(tables_b_src, pd, 3, 0, cd, wd, &d);
  }
}

/* Many products over one concatenation (a plan of many small
 * allocations, so that the compile's pool takes new blocks at several of
 * the split's own), and one in a while body (values kept for the loop). */
static char *many_src(int ndots) {
  size_t cap = 16384, w = 0;
  char *s = malloc(cap);
  w += (size_t)snprintf(s + w, cap - w,
      "func.func @main(%%a1: tensor<3x4xf32>, %%a2: tensor<1x4xf32>, "
      "%%w: tensor<4x2xf32>) -> tensor<4x2xf32> {\n"
      "  %%c = stablehlo.concatenate %%a1, %%a2, dim = 0 : "
      "(tensor<3x4xf32>, tensor<1x4xf32>) -> tensor<4x4xf32>\n"
      "  %%s0 = stablehlo.dot_general %%c, %%w, contracting_dims = [1] x [0] "
      ": (tensor<4x4xf32>, tensor<4x2xf32>) -> tensor<4x2xf32>\n");
  for (int i = 1; i < ndots; i++)
    w += (size_t)snprintf(s + w, cap - w,
        "  %%w%d = stablehlo.add %%w, %%s%d : tensor<4x2xf32>\n"
        "  %%s%d = stablehlo.dot_general %%c, %%w%d, contracting_dims = [1] "
        "x [0] : (tensor<4x4xf32>, tensor<4x2xf32>) -> tensor<4x2xf32>\n",
        i, (i - 1) % 2, i, i);
  w += (size_t)snprintf(s + w, cap - w, "  func.return %%s%d : "
                        "tensor<4x2xf32>\n}\n", ndots - 1);
  assert_true(w < cap);
  return s;
}

/* s[0] = cat . w, s[i] = cat . (w + s[(i - 1) % 2]) */
static void many_ref(const float *a, const float *w, int ndots, float *out) {
  double s[2][8], cur[8];
  for (int i = 0; i < ndots; i++) {
    double wi[8];
    for (int e = 0; e < 8; e++)
      wi[e] = (double)w[e] + (i ? s[(i - 1) % 2][e] : 0);
    for (int m = 0; m < 4; m++)
      for (int n = 0; n < 2; n++) {
        double t = 0;
        for (int k = 0; k < 4; k++) t += (double)a[m * 4 + k] * wi[k * 2 + n];
        cur[m * 2 + n] = t;
      }
    if (i < 2) memcpy(s[i], cur, sizeof cur);
  }
  for (int e = 0; e < 8; e++) out[e] = (float)cur[e];
}

static const char while_src[] =
    "func.func @main(%a1: tensor<3x4xf32>, %a2: tensor<1x4xf32>, "
    "%w: tensor<4x2xf32>) -> tensor<4x2xf32> {\n"
    "  %c0 = stablehlo.constant dense<0> : tensor<i32>\n"
    "  %z = stablehlo.constant dense<0.0> : tensor<4x2xf32>\n"
    "  %r:3 = stablehlo.while(%i = %c0, %s = %a1, %acc = %z) : tensor<i32>, "
    "tensor<3x4xf32>, tensor<4x2xf32>\n"
    "   cond {\n"
    "    %n = stablehlo.constant dense<2> : tensor<i32>\n"
    "    %lt = stablehlo.compare LT, %i, %n, SIGNED : (tensor<i32>, "
    "tensor<i32>) -> tensor<i1>\n"
    "    stablehlo.return %lt : tensor<i1>\n"
    "  } do {\n"
    "    %c = stablehlo.concatenate %s, %a2, dim = 0 : (tensor<3x4xf32>, "
    "tensor<1x4xf32>) -> tensor<4x4xf32>\n"
    "    %d = stablehlo.dot_general %c, %w, contracting_dims = [1] x [0] : "
    "(tensor<4x4xf32>, tensor<4x2xf32>) -> tensor<4x2xf32>\n"
    "    %a = stablehlo.add %acc, %d : tensor<4x2xf32>\n"
    "    %s2 = stablehlo.add %s, %s : tensor<3x4xf32>\n"
    "    %one = stablehlo.constant dense<1> : tensor<i32>\n"
    "    %i2 = stablehlo.add %i, %one : tensor<i32>\n"
    "    stablehlo.return %i2, %s2, %a : tensor<i32>, tensor<3x4xf32>, "
    "tensor<4x2xf32>\n"
    "  }\n"
    "  func.return %r#2 : tensor<4x2xf32>\n}\n";

/* The while body's concatenation of the state and np copies of a row:
 * many parts, each read inside the loop (values kept for it). */
static char *while_parts_src(int np) {
  size_t cap = 8192, w = 0;
  char *s = malloc(cap);
  int rows = 3 + np;
  w += (size_t)snprintf(s + w, cap - w,
      "func.func @main(%%a1: tensor<3x4xf32>, %%a2: tensor<1x4xf32>, "
      "%%w: tensor<4x2xf32>) -> tensor<%dx2xf32> {\n"
      "  %%c0 = stablehlo.constant dense<0> : tensor<i32>\n"
      "  %%z = stablehlo.constant dense<0.0> : tensor<%dx2xf32>\n"
      "  %%r:3 = stablehlo.while(%%i = %%c0, %%s = %%a1, %%acc = %%z) : "
      "tensor<i32>, tensor<3x4xf32>, tensor<%dx2xf32>\n"
      "   cond {\n"
      "    %%n = stablehlo.constant dense<2> : tensor<i32>\n"
      "    %%lt = stablehlo.compare LT, %%i, %%n, SIGNED : (tensor<i32>, "
      "tensor<i32>) -> tensor<i1>\n"
      "    stablehlo.return %%lt : tensor<i1>\n"
      "  } do {\n"
      "    %%c = stablehlo.concatenate %%s", rows, rows, rows);
  for (int i = 0; i < np; i++) w += (size_t)snprintf(s + w, cap - w, ", %%a2");
  w += (size_t)snprintf(s + w, cap - w, ", dim = 0 : (tensor<3x4xf32>");
  for (int i = 0; i < np; i++)
    w += (size_t)snprintf(s + w, cap - w, ", tensor<1x4xf32>");
  w += (size_t)snprintf(s + w, cap - w,
      ") -> tensor<%dx4xf32>\n"
      "    %%d = stablehlo.dot_general %%c, %%w, contracting_dims = [1] x "
      "[0] : (tensor<%dx4xf32>, tensor<4x2xf32>) -> tensor<%dx2xf32>\n"
      "    %%a = stablehlo.add %%acc, %%d : tensor<%dx2xf32>\n"
      "    %%s2 = stablehlo.add %%s, %%s : tensor<3x4xf32>\n"
      "    %%one = stablehlo.constant dense<1> : tensor<i32>\n"
      "    %%i2 = stablehlo.add %%i, %%one : tensor<i32>\n"
      "    stablehlo.return %%i2, %%s2, %%a : tensor<i32>, tensor<3x4xf32>, "
      "tensor<%dx2xf32>\n"
      "  }\n"
      "  func.return %%r#2 : tensor<%dx2xf32>\n}\n",
      rows, rows, rows, rows, rows, rows);
  assert_true(w < cap);
  return s;
}

/* acc += [s; a2 x np] . w twice, s doubled in between (rows 3 + np) */
static void while_ref(const float *a, const float *w, int np, float *want) {
  float s[12];
  int rows = 3 + np;
  memcpy(s, a, sizeof s);
  for (int e = 0; e < rows * 2; e++) want[e] = 0;
  for (int it = 0; it < 2; it++) {
    for (int m = 0; m < rows; m++)
      for (int n = 0; n < 2; n++) {
        double t = 0;
        for (int k = 0; k < 4; k++)
          t += (double)(m < 3 ? s[m * 4 + k] : a[12 + k]) * w[k * 2 + n];
        want[m * 2 + n] += (float)t;
      }
    for (int e = 0; e < 12; e++) s[e] += s[e];
  }
}

static void test_alloc_many(void **state) {
  (void)state;
  float a[16], w[8], want[8];
  for (int i = 0; i < 16; i++) a[i] = (float)val(i, 1);
  for (int i = 0; i < 8; i++) w[i] = (float)val(i, 2);
  tu_in in[3] = {{TU_SHAPE(XRT_F32, 3, 4), a},
                 {TU_SHAPE(XRT_F32, 1, 4), a + 12},
                 {TU_SHAPE(XRT_F32, 4, 2), w}};
  int ndots = tu_light() ? 8 : 24;
  char *src = many_src(ndots);
  many_ref(a, w, ndots, want);
  alloc_walk(src, 3, in, want, 8);
  free(src);
  /* the while body, with two parts and with 71 */
  while_ref(a, w, 1, want);
  alloc_walk(while_src, 3, in, want, 8);
  float wmany[146];
  char *wsrc = while_parts_src(70);
  while_ref(a, w, 70, wmany);
  alloc_walk(wsrc, 3, in, wmany, 146);
  free(wsrc);
}

int main(int argc, char **argv) {
#if !defined(_WIN32)
  ssize_t self_len = readlink("/proc/self/exe", self_buf, sizeof self_buf - 1);
  if (self_len > 0) {
    self_buf[self_len] = 0;
    self_path = self_buf;
  }
  if (argc == 2 && strcmp(argv[1], "--child-no-fusion") == 0)
    return child_no_fusion();
#else
  (void)argc, (void)argv;
#endif
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_free_after_listed),
      cmocka_unit_test(test_two_dots),
      cmocka_unit_test(test_read_ahead),
      cmocka_unit_test(test_rounding),
      cmocka_unit_test(test_not_split),
      cmocka_unit_test(test_reshape_chains),
      cmocka_unit_test(test_sizes),
      cmocka_unit_test(test_odd_shapes),
      cmocka_unit_test(test_types),
#if !defined(_WIN32)
      cmocka_unit_test(test_no_fusion_env),
#endif
      cmocka_unit_test(test_alloc_tables),
      cmocka_unit_test(test_alloc_many),
  };
  return cmocka_run_group_tests(tests, tu_setup_client, tu_teardown_client);
}
