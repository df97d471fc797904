/*
 * test_sim_dot_concat.c - dot_generals over a concatenation that is never
 * materialized (src/sim/dot_concat.c): the concatenated dimension a
 * batching, free or contracting dimension of either operand, through
 * reshapes, two or three parts, parts of one row, f32 and f64, the
 * skinny, packed and plain product kernels; concatenations that must stay
 * materialized (other users, entry results, a reshape merging the
 * dimension, both operands, two concatenations into one product, inside a
 * while body).  Inputs are multiples of 1/4 of a few units, so every sum
 * is exact in any order: results must equal the double-precision
 * reference computed here bit for bit.  A last test shows the
 * concatenation takes no memory.  MIT licensed.
 */
#include "dot_concat_ref.h"

/* ---- a decoder's attention over its KV cache ---- */

/* scores = q . K^T with K = reshape(concat(cache, k)): the concatenated
 * dimension is a free dimension of the rhs; a one-row part. */
static const char keys_src[] =
    "func.func @main(%kc: tensor<5x16xT>, %kn: tensor<1x16xT>, "
    "%q: tensor<2x8xT>) -> tensor<2x6xT> {\n"
    "  %c = stablehlo.concatenate %kc, %kn, dim = 0 : (tensor<5x16xT>, "
    "tensor<1x16xT>) -> tensor<6x16xT>\n"
    "  %k = stablehlo.reshape %c : (tensor<6x16xT>) -> tensor<6x2x8xT>\n"
    "  %s = stablehlo.dot_general %q, %k, batching_dims = [0] x [1], "
    "contracting_dims = [1] x [2] : (tensor<2x8xT>, tensor<6x2x8xT>) -> "
    "tensor<2x6xT>\n"
    "  func.return %s : tensor<2x6xT>\n}\n";

/* out = p . V with V = reshape(concat(cache, v)): a contracting one. */
static const char values_src[] =
    "func.func @main(%vc: tensor<5x16xT>, %vn: tensor<1x16xT>, "
    "%p: tensor<2x6xT>) -> tensor<2x8xT> {\n"
    "  %c = stablehlo.concatenate %vc, %vn, dim = 0 : (tensor<5x16xT>, "
    "tensor<1x16xT>) -> tensor<6x16xT>\n"
    "  %v = stablehlo.reshape %c : (tensor<6x16xT>) -> tensor<6x2x8xT>\n"
    "  %o = stablehlo.dot_general %p, %v, batching_dims = [0] x [1], "
    "contracting_dims = [1] x [0] : (tensor<2x6xT>, tensor<6x2x8xT>) -> "
    "tensor<2x8xT>\n"
    "  func.return %o : tensor<2x8xT>\n}\n";

static void test_attention(void **state) {
  xrt_client *c = (xrt_client *)*state;
  static const int64_t pd[2][MAXR] = {{5, 16}, {1, 16}};
  static const int64_t xd[] = {6, 2, 8};
  static const int64_t qd[] = {2, 8}, pdd[] = {2, 6};
  dims k = {1, 1, {0}, {1}, {1}, {2}};
  dims v = {1, 1, {0}, {1}, {1}, {0}};
  for (int f64 = 0; f64 < 2; f64++) {
    check_one(c, keys_src, f64, 2, pd, 2, 0, 3, xd, 1, 2, qd, &k);
    check_one(c, values_src, f64, 2, pd, 2, 0, 3, xd, 1, 2, pdd, &v);
  }
}

/* The model's shapes, scaled down: a cache of 64 rows, 4 heads of 32
 * (the skinny kernels take both products). */
static const char kv_src[] =
    "func.func @main(%kc: tensor<64x128xT>, %kn: tensor<1x128xT>, "
    "%q: tensor<4x32xT>) -> tensor<4x65xT> {\n"
    "  %c = stablehlo.concatenate %kc, %kn, dim = 0 : (tensor<64x128xT>, "
    "tensor<1x128xT>) -> tensor<65x128xT>\n"
    "  %k = stablehlo.reshape %c : (tensor<65x128xT>) -> tensor<65x4x32xT>\n"
    "  %s = stablehlo.dot_general %q, %k, batching_dims = [0] x [1], "
    "contracting_dims = [1] x [2] : (tensor<4x32xT>, tensor<65x4x32xT>) -> "
    "tensor<4x65xT>\n"
    "  func.return %s : tensor<4x65xT>\n}\n";
static const char pv_src[] =
    "func.func @main(%vc: tensor<64x256xT>, %vn: tensor<1x256xT>, "
    "%p: tensor<4x65xT>) -> tensor<4x64xT> {\n"
    "  %c = stablehlo.concatenate %vc, %vn, dim = 0 : (tensor<64x256xT>, "
    "tensor<1x256xT>) -> tensor<65x256xT>\n"
    "  %v = stablehlo.reshape %c : (tensor<65x256xT>) -> tensor<65x4x64xT>\n"
    "  %o = stablehlo.dot_general %p, %v, batching_dims = [0] x [1], "
    "contracting_dims = [1] x [0] : (tensor<4x65xT>, tensor<65x4x64xT>) -> "
    "tensor<4x64xT>\n"
    "  func.return %o : tensor<4x64xT>\n}\n";

/* A cache of 512 rows (256 KiB and more: read ahead before the product) */
static const char kv_big_src[] =
    "func.func @main(%kc: tensor<512x128xT>, %kn: tensor<1x128xT>, "
    "%q: tensor<4x32xT>, %vc: tensor<512x128xT>, %vn: tensor<1x128xT>, "
    "%p: tensor<4x513xT>) -> (tensor<4x513xT>, tensor<4x32xT>) {\n"
    "  %c = stablehlo.concatenate %kc, %kn, dim = 0 : (tensor<512x128xT>, "
    "tensor<1x128xT>) -> tensor<513x128xT>\n"
    "  %k = stablehlo.reshape %c : (tensor<513x128xT>) -> tensor<513x4x32xT>\n"
    "  %s = stablehlo.dot_general %q, %k, batching_dims = [0] x [1], "
    "contracting_dims = [1] x [2] : (tensor<4x32xT>, tensor<513x4x32xT>) -> "
    "tensor<4x513xT>\n"
    "  %cv = stablehlo.concatenate %vc, %vn, dim = 0 : (tensor<512x128xT>, "
    "tensor<1x128xT>) -> tensor<513x128xT>\n"
    "  %v = stablehlo.reshape %cv : (tensor<513x128xT>) -> "
    "tensor<513x4x32xT>\n"
    "  %o = stablehlo.dot_general %p, %v, batching_dims = [0] x [1], "
    "contracting_dims = [1] x [0] : (tensor<4x513xT>, tensor<513x4x32xT>) -> "
    "tensor<4x32xT>\n"
    "  func.return %s, %o : tensor<4x513xT>, tensor<4x32xT>\n}\n";

static void check_kv_big(xrt_client *c, int f64) {
  static const int64_t cd[] = {512, 128}, nd[] = {1, 128}, qd[] = {4, 32},
                       pd[] = {4, 513}, xd[] = {513, 4, 32};
  static const int64_t parts_d[2][MAXR] = {{512, 128}, {1, 128}};
  input in[6];
  make_input(&in[0], 1, 2, cd);
  make_input(&in[1], 2, 2, nd);
  make_input(&in[2], 3, 2, qd);
  make_input(&in[3], 4, 2, cd);
  make_input(&in[4], 5, 2, nd);
  make_input(&in[5], 6, 2, pd);
  double *k = malloc(sizeof(double) * 513 * 128);
  double *v = malloc(sizeof(double) * 513 * 128);
  double *pk[2] = {in[0].v, in[1].v}, *pv[2] = {in[3].v, in[4].v};
  ref_concat(2, pk, parts_d, 2, 0, k);
  ref_concat(2, pv, parts_d, 2, 0, v);
  double ws[4 * 513], wo[4 * 32];
  dims dk = {1, 1, {0}, {1}, {1}, {2}}, dv = {1, 1, {0}, {1}, {1}, {0}};
  ref_dot(in[2].v, 2, qd, k, 3, xd, &dk, ws);
  ref_dot(in[5].v, 2, pd, v, 3, xd, &dv, wo);
  double *want[2] = {ws, wo};
  int64_t n[2] = {4 * 513, 4 * 32};
  run_case(c, kv_big_src, f64, 6, in, 2, want, n);
  free(k);
  free(v);
  free_inputs(in, 6);
}

static void test_attention_skinny(void **state) {
  xrt_client *c = (xrt_client *)*state;
  static const int64_t kpd[2][MAXR] = {{64, 128}, {1, 128}};
  static const int64_t kxd[] = {65, 4, 32}, qd[] = {4, 32};
  static const int64_t vpd[2][MAXR] = {{64, 256}, {1, 256}};
  static const int64_t vxd[] = {65, 4, 64}, pd[] = {4, 65};
  dims k = {1, 1, {0}, {1}, {1}, {2}};
  dims v = {1, 1, {0}, {1}, {1}, {0}};
  for (int f64 = 0; f64 < 2; f64++) {
    check_one(c, kv_src, f64, 2, kpd, 2, 0, 3, kxd, 1, 2, qd, &k);
    check_one(c, pv_src, f64, 2, vpd, 2, 0, 3, vxd, 1, 2, pd, &v);
    check_kv_big(c, f64);
  }
}

/* ---- the concatenated dimension in each role, of either operand ---- */

/* a batching dimension of the lhs (and of the rhs, sliced with it) */
static const char batch_src[] =
    "func.func @main(%a1: tensor<2x3x4xT>, %a2: tensor<1x3x4xT>, "
    "%b: tensor<3x4x5xT>) -> tensor<3x3x5xT> {\n"
    "  %c = stablehlo.concatenate %a1, %a2, dim = 0 : (tensor<2x3x4xT>, "
    "tensor<1x3x4xT>) -> tensor<3x3x4xT>\n"
    "  %d = stablehlo.dot_general %c, %b, batching_dims = [0] x [0], "
    "contracting_dims = [2] x [1] : (tensor<3x3x4xT>, tensor<3x4x5xT>) -> "
    "tensor<3x3x5xT>\n"
    "  func.return %d : tensor<3x3x5xT>\n}\n";

/* a free dimension of the lhs, three parts, one of one row */
static const char lfree_src[] =
    "func.func @main(%a1: tensor<3x4xT>, %a2: tensor<2x4xT>, "
    "%a3: tensor<1x4xT>, %w: tensor<4x5xT>) -> tensor<6x5xT> {\n"
    "  %c = stablehlo.concatenate %a1, %a2, %a3, dim = 0 : (tensor<3x4xT>, "
    "tensor<2x4xT>, tensor<1x4xT>) -> tensor<6x4xT>\n"
    "  %d = stablehlo.dot_general %c, %w, contracting_dims = [1] x [0] : "
    "(tensor<6x4xT>, tensor<4x5xT>) -> tensor<6x5xT>\n"
    "  func.return %d : tensor<6x5xT>\n}\n";

/* a contracting dimension of the lhs */
static const char lcontr_src[] =
    "func.func @main(%a1: tensor<3x2xT>, %a2: tensor<3x5xT>, "
    "%w: tensor<7x4xT>) -> tensor<3x4xT> {\n"
    "  %c = stablehlo.concatenate %a1, %a2, dim = 1 : (tensor<3x2xT>, "
    "tensor<3x5xT>) -> tensor<3x7xT>\n"
    "  %d = stablehlo.dot_general %c, %w, contracting_dims = [1] x [0] : "
    "(tensor<3x7xT>, tensor<7x4xT>) -> tensor<3x4xT>\n"
    "  func.return %d : tensor<3x4xT>\n}\n";

/* a batching dimension of the rhs, in the middle, through a reshape that
 * splits another dimension */
static const char rbatch_src[] =
    "func.func @main(%b1: tensor<4x2x6xT>, %b2: tensor<4x1x6xT>, "
    "%a: tensor<3x2x5xT>) -> tensor<3x5x4x2xT> {\n"
    "  %c = stablehlo.concatenate %b1, %b2, dim = 1 : (tensor<4x2x6xT>, "
    "tensor<4x1x6xT>) -> tensor<4x3x6xT>\n"
    "  %r = stablehlo.reshape %c : (tensor<4x3x6xT>) -> tensor<4x3x2x3xT>\n"
    "  %d = stablehlo.dot_general %a, %r, batching_dims = [0] x [1], "
    "contracting_dims = [1] x [2] : (tensor<3x2x5xT>, tensor<4x3x2x3xT>) -> "
    "tensor<3x5x4x3xT>\n"
    "  %s = stablehlo.slice %d [0:3, 0:5, 0:4, 0:2] : (tensor<3x5x4x3xT>) -> "
    "tensor<3x5x4x2xT>\n"
    "  func.return %s : tensor<3x5x4x2xT>\n}\n";

static void test_roles(void **state) {
  xrt_client *c = (xrt_client *)*state;
  for (int f64 = 0; f64 < 2; f64++) {
    {
      static const int64_t pd[2][MAXR] = {{2, 3, 4}, {1, 3, 4}};
      static const int64_t cd[] = {3, 3, 4}, bd[] = {3, 4, 5};
      dims d = {1, 1, {0}, {0}, {2}, {1}};
      check_one(c, batch_src, f64, 2, pd, 3, 0, 3, cd, 0, 3, bd, &d);
    }
    {
      static const int64_t pd[3][MAXR] = {{3, 4}, {2, 4}, {1, 4}};
      static const int64_t cd[] = {6, 4}, wd[] = {4, 5};
      dims d = {0, 1, {0}, {0}, {1}, {0}};
      check_one(c, lfree_src, f64, 3, pd, 2, 0, 2, cd, 0, 2, wd, &d);
    }
    {
      static const int64_t pd[2][MAXR] = {{3, 2}, {3, 5}};
      static const int64_t cd[] = {3, 7}, wd[] = {7, 4};
      dims d = {0, 1, {0}, {0}, {1}, {0}};
      check_one(c, lcontr_src, f64, 2, pd, 2, 1, 2, cd, 0, 2, wd, &d);
    }
  }
}

/* The rhs batching case: the reference slices the product itself. */
static void test_rhs_batch(void **state) {
  xrt_client *c = (xrt_client *)*state;
  static const int64_t pd[2][MAXR] = {{4, 2, 6}, {4, 1, 6}};
  static const int64_t cd[] = {4, 3, 6}, xd[] = {4, 3, 2, 3}, ad[] = {3, 2, 5};
  for (int f64 = 0; f64 < 2; f64++) {
    input in[3];
    double cat[72], full[3 * 5 * 4 * 3], want[3 * 5 * 4 * 2];
    concat_inputs(in, 2, pd, 3, 1, cat);
    make_input(&in[2], 9, 3, ad);
    dims d = {1, 1, {0}, {1}, {1}, {2}};
    ref_dot(in[2].v, 3, ad, cat, 4, xd, &d, full);
    for (int i = 0; i < 3 * 5 * 4; i++)
      for (int j = 0; j < 2; j++) want[i * 2 + j] = full[i * 3 + j];
    double *w = want;
    int64_t n = 3 * 5 * 4 * 2;
    (void)cd;
    run_case(c, rbatch_src, f64, 3, in, 1, &w, &n);
    free_inputs(in, 3);
  }
}

/* ---- bigger products: the packed GEMM and skinny kernels per part ---- */

/* rhs contracting dimension split 24 + 16 (packed GEMM, the lhs read at
 * a shifted offset for the second part) */
static const char gemm_k_src[] =
    "func.func @main(%b1: tensor<24x18xT>, %b2: tensor<16x18xT>, "
    "%a: tensor<20x40xT>) -> tensor<20x18xT> {\n"
    "  %c = stablehlo.concatenate %b1, %b2, dim = 0 : (tensor<24x18xT>, "
    "tensor<16x18xT>) -> tensor<40x18xT>\n"
    "  %d = stablehlo.dot_general %a, %c, contracting_dims = [1] x [0] : "
    "(tensor<20x40xT>, tensor<40x18xT>) -> tensor<20x18xT>\n"
    "  func.return %d : tensor<20x18xT>\n}\n";

/* rhs free dimension split 12 + 20 (columns of the result) */
static const char gemm_n_src[] =
    "func.func @main(%b1: tensor<16x12xT>, %b2: tensor<16x20xT>, "
    "%a: tensor<20x16xT>) -> tensor<20x32xT> {\n"
    "  %c = stablehlo.concatenate %b1, %b2, dim = 1 : (tensor<16x12xT>, "
    "tensor<16x20xT>) -> tensor<16x32xT>\n"
    "  %d = stablehlo.dot_general %a, %c, contracting_dims = [1] x [0] : "
    "(tensor<20x16xT>, tensor<16x32xT>) -> tensor<20x32xT>\n"
    "  func.return %d : tensor<20x32xT>\n}\n";

/* one row against weights rows [N, K] split 70 + 3 (skinny, the first
 * part straight into the result) */
static const char skinny_src[] =
    "func.func @main(%b1: tensor<70x64xT>, %b2: tensor<3x64xT>, "
    "%a: tensor<1x64xT>) -> tensor<1x73xT> {\n"
    "  %c = stablehlo.concatenate %b1, %b2, dim = 0 : (tensor<70x64xT>, "
    "tensor<3x64xT>) -> tensor<73x64xT>\n"
    "  %d = stablehlo.dot_general %a, %c, contracting_dims = [1] x [1] : "
    "(tensor<1x64xT>, tensor<73x64xT>) -> tensor<1x73xT>\n"
    "  func.return %d : tensor<1x73xT>\n}\n";

static void test_kernels(void **state) {
  xrt_client *c = (xrt_client *)*state;
  dims kn = {0, 1, {0}, {0}, {1}, {0}};
  dims nt = {0, 1, {0}, {0}, {1}, {1}};
  for (int f64 = 0; f64 < 2; f64++) {
    {
      static const int64_t pd[2][MAXR] = {{24, 18}, {16, 18}};
      static const int64_t cd[] = {40, 18}, ad[] = {20, 40};
      check_one(c, gemm_k_src, f64, 2, pd, 2, 0, 2, cd, 1, 2, ad, &kn);
    }
    {
      static const int64_t pd[2][MAXR] = {{16, 12}, {16, 20}};
      static const int64_t cd[] = {16, 32}, ad[] = {20, 16};
      check_one(c, gemm_n_src, f64, 2, pd, 2, 1, 2, cd, 1, 2, ad, &kn);
    }
    {
      static const int64_t pd[2][MAXR] = {{70, 64}, {3, 64}};
      static const int64_t cd[] = {73, 64}, ad[] = {1, 64};
      check_one(c, skinny_src, f64, 2, pd, 2, 0, 2, cd, 1, 2, ad, &nt);
    }
  }
}

/* The same products on a device of two threads (the parts' products
 * shared by both, the one-row parts on the caller). */
static void test_two_threads(void **state) {
  (void)state;
  xrt_client *c = tu_client(1, 2, 0);
  void *st = c;
  test_attention_skinny(&st);
  test_kernels(&st);
  test_roles(&st);
  xrt_client_release(c);
}

/* ---- concatenations that stay materialized ---- */

/* also an entry result and read by an add */
static const char users_src[] =
    "func.func @main(%a1: tensor<2x4xT>, %a2: tensor<1x4xT>, "
    "%w: tensor<4x2xT>) -> (tensor<3x4xT>, tensor<3x2xT>, tensor<3x4xT>) {\n"
    "  %c = stablehlo.concatenate %a1, %a2, dim = 0 : (tensor<2x4xT>, "
    "tensor<1x4xT>) -> tensor<3x4xT>\n"
    "  %d = stablehlo.dot_general %c, %w, contracting_dims = [1] x [0] : "
    "(tensor<3x4xT>, tensor<4x2xT>) -> tensor<3x2xT>\n"
    "  %s = stablehlo.add %c, %c : tensor<3x4xT>\n"
    "  func.return %c, %d, %s : tensor<3x4xT>, tensor<3x2xT>, tensor<3x4xT>\n"
    "}\n";

/* a reshape of it is the entry result */
static const char reshape_out_src[] =
    "func.func @main(%a1: tensor<2x4xT>, %a2: tensor<1x4xT>, "
    "%w: tensor<4x2xT>) -> (tensor<12xT>, tensor<3x2xT>) {\n"
    "  %c = stablehlo.concatenate %a1, %a2, dim = 0 : (tensor<2x4xT>, "
    "tensor<1x4xT>) -> tensor<3x4xT>\n"
    "  %d = stablehlo.dot_general %c, %w, contracting_dims = [1] x [0] : "
    "(tensor<3x4xT>, tensor<4x2xT>) -> tensor<3x2xT>\n"
    "  %r = stablehlo.reshape %c : (tensor<3x4xT>) -> tensor<12xT>\n"
    "  func.return %r, %d : tensor<12xT>, tensor<3x2xT>\n}\n";

static void test_other_users(void **state) {
  xrt_client *c = (xrt_client *)*state;
  static const int64_t pd[2][MAXR] = {{2, 4}, {1, 4}};
  static const int64_t wd[] = {4, 2}, cd[] = {3, 4};
  dims dd = {0, 1, {0}, {0}, {1}, {0}};
  for (int f64 = 0; f64 < 2; f64++) {
    input in[3];
    double cat[12], d[6], s[12];
    concat_inputs(in, 2, pd, 2, 0, cat);
    make_input(&in[2], 9, 2, wd);
    ref_dot(cat, 2, cd, in[2].v, 2, wd, &dd, d);
    for (int i = 0; i < 12; i++) s[i] = cat[i] + cat[i];
    double *want[3] = {cat, d, s};
    int64_t n[3] = {12, 6, 12};
    run_case(c, users_src, f64, 3, in, 3, want, n);
    double *want2[2] = {cat, d};
    int64_t n2[2] = {12, 6};
    run_case(c, reshape_out_src, f64, 3, in, 2, want2, n2);
    free_inputs(in, 3);
  }
}

/* the reshape merges the concatenated dimension with another */
static const char merged_src[] =
    "func.func @main(%a1: tensor<2x3xT>, %a2: tensor<2x5xT>, "
    "%v: tensor<16xT>) -> tensor<T> {\n"
    "  %c = stablehlo.concatenate %a1, %a2, dim = 1 : (tensor<2x3xT>, "
    "tensor<2x5xT>) -> tensor<2x8xT>\n"
    "  %r = stablehlo.reshape %c : (tensor<2x8xT>) -> tensor<16xT>\n"
    "  %d = stablehlo.dot_general %r, %v, contracting_dims = [0] x [0] : "
    "(tensor<16xT>, tensor<16xT>) -> tensor<T>\n"
    "  func.return %d : tensor<T>\n}\n";

/* both operands are the concatenation */
static const char self_src[] =
    "func.func @main(%a1: tensor<2x4xT>, %a2: tensor<1x4xT>) -> "
    "tensor<3x3xT> {\n"
    "  %c = stablehlo.concatenate %a1, %a2, dim = 0 : (tensor<2x4xT>, "
    "tensor<1x4xT>) -> tensor<3x4xT>\n"
    "  %r = stablehlo.reshape %c : (tensor<3x4xT>) -> tensor<3x4xT>\n"
    "  %d = stablehlo.dot_general %c, %r, contracting_dims = [1] x [1] : "
    "(tensor<3x4xT>, tensor<3x4xT>) -> tensor<3x3xT>\n"
    "  func.return %d : tensor<3x3xT>\n}\n";

/* two concatenations into one product (one of them is split) */
static const char two_src[] =
    "func.func @main(%a1: tensor<2x4xT>, %a2: tensor<1x4xT>, "
    "%b1: tensor<4x2xT>, %b2: tensor<4x3xT>) -> tensor<3x5xT> {\n"
    "  %c1 = stablehlo.concatenate %a1, %a2, dim = 0 : (tensor<2x4xT>, "
    "tensor<1x4xT>) -> tensor<3x4xT>\n"
    "  %c2 = stablehlo.concatenate %b1, %b2, dim = 1 : (tensor<4x2xT>, "
    "tensor<4x3xT>) -> tensor<4x5xT>\n"
    "  %d = stablehlo.dot_general %c1, %c2, contracting_dims = [1] x [0] : "
    "(tensor<3x4xT>, tensor<4x5xT>) -> tensor<3x5xT>\n"
    "  func.return %d : tensor<3x5xT>\n}\n";

static void test_not_split(void **state) {
  xrt_client *c = (xrt_client *)*state;
  for (int f64 = 0; f64 < 2; f64++) {
    {
      static const int64_t pd[2][MAXR] = {{2, 3}, {2, 5}};
      static const int64_t xd[] = {16}, vd[] = {16};
      dims d = {0, 1, {0}, {0}, {0}, {0}};
      check_one(c, merged_src, f64, 2, pd, 2, 1, 1, xd, 0, 1, vd, &d);
    }
    check_self(c, self_src, f64);
    {
      static const int64_t ad[2][MAXR] = {{2, 4}, {1, 4}};
      static const int64_t bd[2][MAXR] = {{4, 2}, {4, 3}};
      static const int64_t c1d[] = {3, 4}, c2d[] = {4, 5};
      input in[4];
      make_input(&in[0], 1, 2, ad[0]);
      make_input(&in[1], 2, 2, ad[1]);
      make_input(&in[2], 3, 2, bd[0]);
      make_input(&in[3], 4, 2, bd[1]);
      double c1[12], c2[20], want[15];
      double *pa[2] = {in[0].v, in[1].v}, *pb[2] = {in[2].v, in[3].v};
      ref_concat(2, pa, ad, 2, 0, c1);
      ref_concat(2, pb, bd, 2, 1, c2);
      dims d = {0, 1, {0}, {0}, {1}, {0}};
      ref_dot(c1, 2, c1d, c2, 2, c2d, &d, want);
      double *w = want;
      int64_t n = 15;
      run_case(c, two_src, f64, 4, in, 1, &w, &n);
      free_inputs(in, 4);
    }
  }
}

/* ---- inside a while body: the state appended to and read by a dot ---- */
static const char while_src[] =
    "func.func @main(%x: tensor<3x4xT>, %row: tensor<1x4xT>, "
    "%w: tensor<4x2xT>) -> tensor<4x2xT> {\n"
    "  %c0 = stablehlo.constant dense<0> : tensor<i32>\n"
    "  %z = stablehlo.constant dense<0.0> : tensor<4x2xT>\n"
    "  %r:3 = stablehlo.while(%i = %c0, %s = %x, %acc = %z) : tensor<i32>, "
    "tensor<3x4xT>, tensor<4x2xT>\n"
    "   cond {\n"
    "    %n = stablehlo.constant dense<2> : tensor<i32>\n"
    "    %lt = stablehlo.compare LT, %i, %n, SIGNED : (tensor<i32>, "
    "tensor<i32>) -> tensor<i1>\n"
    "    stablehlo.return %lt : tensor<i1>\n"
    "  } do {\n"
    "    %c = stablehlo.concatenate %s, %row, dim = 0 : (tensor<3x4xT>, "
    "tensor<1x4xT>) -> tensor<4x4xT>\n"
    "    %d = stablehlo.dot_general %c, %w, contracting_dims = [1] x [0] : "
    "(tensor<4x4xT>, tensor<4x2xT>) -> tensor<4x2xT>\n"
    "    %a = stablehlo.add %acc, %d : tensor<4x2xT>\n"
    "    %s2 = stablehlo.add %s, %s : tensor<3x4xT>\n"
    "    %one = stablehlo.constant dense<1> : tensor<i32>\n"
    "    %i2 = stablehlo.add %i, %one : tensor<i32>\n"
    "    stablehlo.return %i2, %s2, %a : tensor<i32>, tensor<3x4xT>, "
    "tensor<4x2xT>\n"
    "  }\n"
    "  func.return %r#2 : tensor<4x2xT>\n}\n";

static void test_while_body(void **state) {
  xrt_client *c = (xrt_client *)*state;
  static const int64_t xd[] = {3, 4}, rd[] = {1, 4}, wd[] = {4, 2};
  static const int64_t pd[2][MAXR] = {{3, 4}, {1, 4}}, cd[] = {4, 4};
  dims dd = {0, 1, {0}, {0}, {1}, {0}};
  for (int f64 = 0; f64 < 2; f64++) {
    input in[3];
    make_input(&in[0], 1, 2, xd);
    make_input(&in[1], 2, 2, rd);
    make_input(&in[2], 9, 2, wd);
    double s[12], cat[16], d[8], want[8] = {0};
    memcpy(s, in[0].v, sizeof s);
    for (int it = 0; it < 2; it++) {
      double *parts[2] = {s, in[1].v};
      ref_concat(2, parts, pd, 2, 0, cat);
      ref_dot(cat, 2, cd, in[2].v, 2, wd, &dd, d);
      for (int i = 0; i < 8; i++) want[i] += d[i];
      for (int i = 0; i < 12; i++) s[i] += s[i];
    }
    double *w = want;
    int64_t n = 8;
    run_case(c, while_src, f64, 3, in, 1, &w, &n);
    free_inputs(in, 3);
  }
}

/* ---- the concatenation takes no memory ---- */

/* A 1 MiB cache and a row, concatenated for one product; with a second
 * use (a reduce) the concatenation is materialized.  The executable's
 * host memory after a run differs by about the concatenation's size. */
static const char mem_src[] =
    "func.func @main(%kc: tensor<4096x64xf32>, %kn: tensor<1x64xf32>, "
    "%q: tensor<1x64xf32>) -> (tensor<1x4097xf32>, tensor<f32>) {\n"
    "  %c = stablehlo.concatenate %kc, %kn, dim = 0 : (tensor<4096x64xf32>, "
    "tensor<1x64xf32>) -> tensor<4097x64xf32>\n"
    "  %s = stablehlo.dot_general %q, %c, contracting_dims = [1] x [1] : "
    "(tensor<1x64xf32>, tensor<4097x64xf32>) -> tensor<1x4097xf32>\n"
    "  %z = stablehlo.constant dense<0.0> : tensor<f32>\n"
    "  %t = stablehlo.reduce(%%SRC init: %z) applies stablehlo.add across "
    "dimensions = [0, 1] : (tensor<%%SHAPE>, tensor<f32>) -> tensor<f32>\n"
    "  func.return %s, %t : tensor<1x4097xf32>, tensor<f32>\n}\n";

static long long live_after_run(const char *tmpl, const char *srcv,
                                const char *shape, float *kc, float *kn,
                                float *q, float *got) {
  char text[2048];
  const char *at = strstr(tmpl, "%%SRC");
  const char *at2 = strstr(tmpl, "%%SHAPE");
  snprintf(text, sizeof text, "%.*s%s%.*s%s%s", (int)(at - tmpl), tmpl, srcv,
           (int)(at2 - (at + 5)), at + 5, shape, at2 + 7);
  tu_counting_alloc a;
  xrt_client *c = tu_client_counted(1, &a);
  xrt_executable *exe = NULL;
  xrt_device *dev = xrt_client_device(c, 0);
  if (xrt_compile(c, text, strlen(text), NULL, &exe))
    fail_msg("%s\n%s", xrt_last_error(), text);
  xrt_shape s0 = TU_SHAPE(XRT_F32, 4096, 64), s1 = TU_SHAPE(XRT_F32, 1, 64);
  xrt_buffer *args[3] = {0}, *outs[2] = {0};
  assert_int_equal(xrt_buffer_from_host(c, dev, &s0, kc, &args[0]), XRT_OK);
  assert_int_equal(xrt_buffer_from_host(c, dev, &s1, kn, &args[1]), XRT_OK);
  assert_int_equal(xrt_buffer_from_host(c, dev, &s1, q, &args[2]), XRT_OK);
  assert_int_equal(xrt_execute(exe, dev, args, 3, outs, 2, NULL), XRT_OK);
  assert_int_equal(xrt_buffer_to_host(outs[0], got, 4097 * sizeof(float)),
                   XRT_OK);
  long long live = (long long)atomic_load(&a.live_bytes);
  for (int i = 0; i < 2; i++) xrt_buffer_release(outs[i]);
  for (int i = 0; i < 3; i++) xrt_buffer_release(args[i]);
  xrt_executable_release(exe);
  xrt_client_release(c);
  return live;
}

static void test_no_memory(void **state) {
  (void)state;
  float *kc = malloc(sizeof(float) * 4096 * 64), kn[64], q[64];
  float *g1 = malloc(sizeof(float) * 4097), *g2 = malloc(sizeof(float) * 4097);
  for (int i = 0; i < 4096 * 64; i++) kc[i] = (float)val(i, 1);
  for (int i = 0; i < 64; i++) {
    kn[i] = (float)val(i, 2);
    q[i] = (float)val(i, 3);
  }
  /* the reduce reads the row alone: the concatenation only feeds the dot */
  long long split = live_after_run(mem_src, "%kn", "1x64xf32", kc, kn, q, g1);
  long long whole = live_after_run(mem_src, "%c", "4097x64xf32", kc, kn, q,
                                   g2);
  if (!(whole - split >= 4096LL * 64 * 4 - 65536))
    fail_msg("live bytes %lld split, %lld materialized", split, whole);
  for (int n = 0; n < 4097; n++) {
    double s = 0;
    for (int k = 0; k < 64; k++)
      s += (double)q[k] * (n < 4096 ? (double)kc[n * 64 + k] : (double)kn[k]);
    assert_true(g1[n] == (float)s);
    assert_true(g2[n] == (float)s);
  }
  free(kc);
  free(g1);
  free(g2);
}

/* ---- every allocation of the split plan may fail ---- */

/* Compiles and runs the attention products (both roles, one program)
 * with the n-th allocation from the start of the compile failing:
 * success with the right results or XRT_RESOURCE_EXHAUSTED; no leak. */
static const char alloc_src[] =
    "func.func @main(%kc: tensor<5x16xf32>, %kn: tensor<1x16xf32>, "
    "%q: tensor<2x8xf32>, %p: tensor<2x6xf32>) -> (tensor<2x6xf32>, "
    "tensor<2x8xf32>) {\n"
    "  %c = stablehlo.concatenate %kc, %kn, dim = 0 : (tensor<5x16xf32>, "
    "tensor<1x16xf32>) -> tensor<6x16xf32>\n"
    "  %k = stablehlo.reshape %c : (tensor<6x16xf32>) -> tensor<6x2x8xf32>\n"
    "  %s = stablehlo.dot_general %q, %k, batching_dims = [0] x [1], "
    "contracting_dims = [1] x [2] : (tensor<2x8xf32>, tensor<6x2x8xf32>) -> "
    "tensor<2x6xf32>\n"
    "  %o = stablehlo.dot_general %p, %k, batching_dims = [0] x [1], "
    "contracting_dims = [1] x [0] : (tensor<2x6xf32>, tensor<6x2x8xf32>) -> "
    "tensor<2x8xf32>\n"
    "  func.return %s, %o : tensor<2x6xf32>, tensor<2x8xf32>\n}\n";

static void test_alloc_failures(void **state) {
  (void)state;
  static const int64_t pd[2][MAXR] = {{5, 16}, {1, 16}};
  static const int64_t cd[] = {6, 16}, xd[] = {6, 2, 8}, qd[] = {2, 8},
                       ppd[] = {2, 6};
  input in[4];
  double cat[96], ws[12], wo[16];
  concat_inputs(in, 2, pd, 2, 0, cat);
  make_input(&in[2], 3, 2, qd);
  make_input(&in[3], 4, 2, ppd);
  dims k = {1, 1, {0}, {1}, {1}, {2}}, v = {1, 1, {0}, {1}, {1}, {0}};
  ref_dot(in[2].v, 2, qd, cat, 3, xd, &k, ws);
  ref_dot(in[3].v, 2, ppd, cat, 3, xd, &v, wo);
  (void)cd;
  tu_in ti[4];
  for (int i = 0; i < 4; i++) host_input(&in[i], 0, &ti[i]);
  int done = 0;
  long n = 1;
  for (; n < 100000 && !done; n++) {
    tu_counting_alloc a;
    xrt_client *c = tu_client_counted(1, &a);
    tu_counting_arm(&a, n);
    tu_out o;
    xrt_status s = tu_run(c, alloc_src, 4, ti, &o);
    bool failed = tu_counting_disarm(&a);
    if (s == XRT_OK) {
      assert_int_equal(o.n, 2);
      for (int e = 0; e < 12; e++)
        assert_true(((const float *)o.data[0])[e] == (float)ws[e]);
      for (int e = 0; e < 16; e++)
        assert_true(((const float *)o.data[1])[e] == (float)wo[e]);
      tu_out_free(&o);
      done = !failed;
    } else if (s != XRT_RESOURCE_EXHAUSTED) {
      fail_msg("allocation %ld: %s: %s", n, xrt_strerror(s), tu_msg);
    }
    xrt_client_release(c);
    assert_int_equal(atomic_load(&a.live), 0);
  }
  assert_true(done);
  assert_true(n > 10); /* the walk reached the compile's allocations */
  for (int i = 0; i < 4; i++) free((void *)ti[i].data);
  free_inputs(in, 4);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_attention),
      cmocka_unit_test(test_attention_skinny),
      cmocka_unit_test(test_roles),
      cmocka_unit_test(test_rhs_batch),
      cmocka_unit_test(test_kernels),
      cmocka_unit_test(test_two_threads),
      cmocka_unit_test(test_other_users),
      cmocka_unit_test(test_not_split),
      cmocka_unit_test(test_while_body),
      cmocka_unit_test(test_no_memory),
      cmocka_unit_test(test_alloc_failures),
  };
  return cmocka_run_group_tests(tests, tu_setup_client, tu_teardown_client);
}
