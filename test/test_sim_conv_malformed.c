/*
 * test_sim_conv_malformed.c - stablehlo.convolution and dynamic_conv ops
 * that the verifier would refuse, built by hand with the plugin ABI's IR
 * structs and compiled through the simulator's plugin table (as
 * test_sim_malformed.c does for other ops): src/sim/conv.c checks the
 * dimension numbers, window attributes, group counts and shapes it relies
 * on itself, so that a module a core failed to verify, or one read back
 * from a cache, is refused with XRT_INVALID_ARGUMENT and a message
 * instead of a kernel indexing out of bounds.  Each case breaks one
 * thing of a well-formed 1-D convolution, which compiles as the control;
 * the window-count edge cases (empty input, empty kernel, a window wider
 * than the padded input) compile.  Issue #25 (coverage of src/sim).
 */
#include "test_plugin_abi.h"

static xrt_ir_type ty3(xrt_dtype dt, int64_t a, int64_t b, int64_t c) {
  xrt_ir_type t = tu_ty(dt, 3, a, b);
  t.shape.dims[2] = c;
  return t;
}

static xrt_ir_type ty2(xrt_dtype dt, int64_t a, int64_t b) {
  return tu_ty(dt, 2, a, b);
}

/* The convolution under test: lhs [N, C, W], rhs [O, I, K], result
 * [N, O, Wout], 1 spatial dimension; every field can be broken. */
typedef struct conv_case {
  xrt_opcode code;
  const char *name;
  int nin;
  xrt_ir_type in[3], out;
  int64_t dn[6]; /* ib, if, kif, kof, ob, of */
  int64_t isp[2], ksp[2], osp[2];
  int nsp;       /* length of each spatial list */
  int dn_kind_bad; /* input_batch_dimension given as a list */
  int no_dn;     /* no dimension_numbers at all */
  xrt_ir_attr extra[6];
  int nextra;
} conv_case;

static conv_case good(void) {
  conv_case c = {.code = XRT_OP_CONVOLUTION,
                 .name = "stablehlo.convolution",
                 .nin = 2,
                 .in = {ty3(XRT_F32, 1, 2, 5), ty3(XRT_F32, 3, 2, 2)},
                 .out = ty3(XRT_F32, 1, 3, 4),
                 .dn = {0, 1, 1, 0, 0, 1},
                 .isp = {2, 2},
                 .ksp = {2, 2},
                 .osp = {2, 2},
                 .nsp = 1};
  return c;
}

static xrt_status compile_conv(const conv_case *c, xrt_plugin_error *err) {
  static const char *const names[6] = {
      "input_batch_dimension",          "input_feature_dimension",
      "kernel_input_feature_dimension", "kernel_output_feature_dimension",
      "output_batch_dimension",         "output_feature_dimension"};
  xrt_ir_attr items[9];
  for (int i = 0; i < 6; i++) items[i] = tu_ir_int(names[i], c->dn[i]);
  if (c->dn_kind_bad) items[0] = tu_ir_ints(names[0], c->dn, 1);
  items[6] = tu_ir_ints("input_spatial_dimensions", c->isp, c->nsp);
  items[7] = tu_ir_ints("kernel_spatial_dimensions", c->ksp, c->nsp);
  items[8] = tu_ir_ints("output_spatial_dimensions", c->osp, c->nsp);
  xrt_ir_attr attrs[8];
  int n = 0;
  if (!c->no_dn) attrs[n++] = tu_ir_dict("dimension_numbers", items, 9);
  for (int i = 0; i < c->nextra; i++) attrs[n++] = c->extra[i];
  tu_ir_one o;
  return tu_sim_compile_module(tu_ir_one_op(&o, c->code, c->name, c->nin,
                                            c->in, 1, &c->out, n, attrs),
                               err);
}

#define CONV_REFUSED(c, why)                                                \
  TU_EXPECT_PLUGIN(XRT_INVALID_ARGUMENT, why, compile_conv, &(c))
#define CONV_COMPILES(c) TU_EXPECT_PLUGIN(XRT_OK, NULL, compile_conv, &(c))

static const char kBad[] =
    "stablehlo.convolution: invalid dimension numbers, window attributes or "
    "shapes";

/* Operand count, ranks and the dimension_numbers dictionary. */
static void test_conv_dims(void **state) {
  (void)state;
  conv_case c = good();
  CONV_COMPILES(c);

  c = good();
  c.nin = 3; /* a third operand */
  c.in[2] = ty2(XRT_S64, 1, 2);
  CONV_REFUSED(c, kBad);
  c = good();
  c.in[1] = ty2(XRT_F32, 3, 2);
  CONV_REFUSED(c, kBad);
  c = good();
  c.out = ty2(XRT_F32, 1, 3);
  CONV_REFUSED(c, kBad);
  c = good();
  c.no_dn = 1;
  CONV_REFUSED(c, kBad);
  c = good();
  c.dn_kind_bad = 1;
  CONV_REFUSED(c, kBad);
  c = good();
  c.nsp = 2; /* spatial lists of the wrong length */
  CONV_REFUSED(c, kBad);
  /* each of the six dimensions outside the rank, both ways */
  for (int i = 0; i < 6; i++) {
    c = good();
    c.dn[i] = 3;
    CONV_REFUSED(c, kBad);
    c = good();
    c.dn[i] = -1;
    CONV_REFUSED(c, kBad);
  }
  c = good();
  c.isp[0] = 3;
  CONV_REFUSED(c, kBad);
  c = good();
  c.ksp[0] = 7;
  CONV_REFUSED(c, kBad);
  c = good();
  c.osp[0] = -2;
  CONV_REFUSED(c, kBad);
}

/* Group counts that do not divide, and sizes that disagree. */
static void test_conv_groups(void **state) {
  (void)state;
  conv_case c = good();
  c.extra[0] = tu_ir_int("batch_group_count", 0);
  c.nextra = 1;
  CONV_REFUSED(c, kBad);
  c.extra[0] = tu_ir_int("feature_group_count", 0);
  CONV_REFUSED(c, kBad);
  /* batch 1 is not a multiple of 2 batch groups */
  c.extra[0] = tu_ir_int("batch_group_count", 2);
  CONV_REFUSED(c, kBad);
  /* batch 2 in 2 groups, but 3 output features do not split in 2 */
  c = good();
  c.in[0] = ty3(XRT_F32, 2, 2, 5);
  c.extra[0] = tu_ir_int("batch_group_count", 2);
  c.nextra = 1;
  CONV_REFUSED(c, kBad);
  /* 3 output features in 2 feature groups */
  c = good();
  c.in[0] = ty3(XRT_F32, 1, 4, 5);
  c.extra[0] = tu_ir_int("feature_group_count", 2);
  c.nextra = 1;
  CONV_REFUSED(c, kBad);
  /* kernel input features x groups != input features */
  c = good();
  c.in[0] = ty3(XRT_F32, 1, 3, 5);
  CONV_REFUSED(c, kBad);
  /* result batch x batch groups != input batch */
  c = good();
  c.out = ty3(XRT_F32, 2, 3, 4);
  CONV_REFUSED(c, kBad);
  /* result features != kernel output features */
  c = good();
  c.out = ty3(XRT_F32, 1, 4, 4);
  CONV_REFUSED(c, kBad);
  /* well-formed groups compile: 2 feature groups of 1 */
  c = good();
  c.in[0] = ty3(XRT_F32, 1, 2, 5);
  c.in[1] = ty3(XRT_F32, 2, 1, 2);
  c.out = ty3(XRT_F32, 1, 2, 4);
  c.extra[0] = tu_ir_int("feature_group_count", 2);
  c.nextra = 1;
  CONV_COMPILES(c);
}

/* Window attributes: kinds, lengths, values, padding and the window
 * count. */
static void test_conv_window(void **state) {
  (void)state;
  static const int64_t one[1] = {1}, two[2] = {1, 1}, zero[1] = {0};
  static const int64_t pad1[2] = {0, 0}, pad3[3] = {0, 0, 0};
  static const int64_t big_lo[2] = {(int64_t)1 << 41, 0};
  static const int64_t big_hi[2] = {0, (int64_t)1 << 41};
  static const int64_t neg_lo[2] = {-((int64_t)1 << 41), 0};
  static const int64_t neg_hi[2] = {0, -((int64_t)1 << 41)};
  static const char *const lists[4] = {"window_strides", "lhs_dilation",
                                       "rhs_dilation", "window_reversal"};
  conv_case c;
  for (int i = 0; i < 4; i++) {
    c = good();
    c.extra[0] = tu_ir_int(lists[i], 1); /* not a list */
    c.nextra = 1;
    CONV_REFUSED(c, kBad);
    c.extra[0] = tu_ir_ints(lists[i], two, 2); /* one per dimension */
    CONV_REFUSED(c, kBad);
    c.extra[0] = tu_ir_ints(lists[i], one, 1); /* well-formed */
    if (i == 3) CONV_COMPILES(c);
    if (i < 3) {
      CONV_COMPILES(c);
      c.extra[0] = tu_ir_ints(lists[i], zero, 1); /* must be positive */
      CONV_REFUSED(c, kBad);
    }
  }
  c = good();
  c.extra[0] = tu_ir_ints("padding", pad3, 3);
  c.nextra = 1;
  CONV_REFUSED(c, kBad);
  c.extra[0] = tu_ir_ints("padding", pad1, 2);
  CONV_COMPILES(c);
  const int64_t *huge[4] = {big_lo, big_hi, neg_lo, neg_hi};
  for (int i = 0; i < 4; i++) {
    c.extra[0] = tu_ir_ints("padding", huge[i], 2);
    CONV_REFUSED(c, kBad);
  }
  /* 4 windows of 2 over 5, not 3 */
  c = good();
  c.out = ty3(XRT_F32, 1, 3, 3);
  CONV_REFUSED(c, kBad);
}

/* Window counts at the edges: an empty input (nothing padded: no
 * window), an empty kernel (a window of width 0 at each of 6 positions)
 * and a kernel wider than the input (no window). */
static void test_conv_window_counts(void **state) {
  (void)state;
  conv_case c = good();
  c.in[0] = ty3(XRT_F32, 1, 2, 0);
  c.out = ty3(XRT_F32, 1, 3, 0);
  CONV_COMPILES(c);
  c.out = ty3(XRT_F32, 1, 3, 1);
  CONV_REFUSED(c, kBad);
  c = good();
  c.in[1] = ty3(XRT_F32, 3, 2, 0);
  c.out = ty3(XRT_F32, 1, 3, 6);
  CONV_COMPILES(c);
  c = good();
  c.in[1] = ty3(XRT_F32, 3, 2, 7);
  c.out = ty3(XRT_F32, 1, 3, 0);
  CONV_COMPILES(c);
  c.out = ty3(XRT_F32, 1, 3, 1);
  CONV_REFUSED(c, kBad);
}

/* dynamic_conv: the padding operand must be an integer tensor<nsx2>. */
static void test_dynamic_conv(void **state) {
  (void)state;
  conv_case c = good();
  c.code = XRT_OP_DYNAMIC_CONV;
  c.name = "stablehlo.dynamic_conv";
  c.nin = 3;
  c.in[2] = ty2(XRT_S64, 1, 2);
  CONV_COMPILES(c);
  c.in[2] = ty2(XRT_S32, 1, 2);
  CONV_COMPILES(c);
  static const char kPad[] =
      "stablehlo.dynamic_conv: padding must be an integer tensor<1x2>";
  c.in[2] = ty2(XRT_F32, 1, 2);
  CONV_REFUSED(c, kPad);
  c.in[2] = ty2(XRT_C64, 1, 2);
  CONV_REFUSED(c, kPad);
  c.in[2] = ty2(XRT_S64, 2, 2);
  CONV_REFUSED(c, kPad);
  /* the padding attribute of a dynamic_conv is not read */
  static const int64_t pad3[3] = {9, 9, 9};
  c.in[2] = ty2(XRT_S64, 1, 2);
  c.extra[0] = tu_ir_ints("padding", pad3, 3);
  c.nextra = 1;
  CONV_COMPILES(c);
  /* without its padding operand */
  c = good();
  c.code = XRT_OP_DYNAMIC_CONV;
  c.name = "stablehlo.dynamic_conv";
  CONV_REFUSED(c, "stablehlo.dynamic_conv: invalid dimension numbers");
}

TU_MAIN(NULL, NULL, cmocka_unit_test(test_conv_dims),
        cmocka_unit_test(test_conv_groups), cmocka_unit_test(test_conv_window),
        cmocka_unit_test(test_conv_window_counts),
        cmocka_unit_test(test_dynamic_conv))
