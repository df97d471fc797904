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
#include "test_util.h"

static const xrt_plugin_api *api(void) { return xrt_sim_plugin_api(); }

static xrt_ir_type ty3(xrt_dtype dt, int64_t a, int64_t b, int64_t c) {
  xrt_ir_type t;
  memset(&t, 0, sizeof t);
  t.kind = XRT_TYPE_TENSOR;
  t.shape.dtype = dt;
  t.shape.rank = 3;
  t.shape.dims[0] = a;
  t.shape.dims[1] = b;
  t.shape.dims[2] = c;
  return t;
}

static xrt_ir_type ty2(xrt_dtype dt, int64_t a, int64_t b) {
  xrt_ir_type t = ty3(dt, a, b, 0);
  t.shape.rank = 2;
  return t;
}

static xrt_ir_attr ints_attr(const char *name, const int64_t *v, int64_t n) {
  xrt_ir_attr a;
  memset(&a, 0, sizeof a);
  a.name = name;
  a.kind = XRT_ATTR_INTS;
  a.ints = v;
  a.n = n;
  return a;
}

static xrt_ir_attr int_attr(const char *name, int64_t v) {
  xrt_ir_attr a;
  memset(&a, 0, sizeof a);
  a.name = name;
  a.kind = XRT_ATTR_INT;
  a.i = v;
  return a;
}

/* One op (values 0..nin-1 in, then its result) and an empty return, as
 * the module's only function, compiled by the simulator's table. */
static xrt_status compile_op(xrt_opcode code, const char *name, int nin,
                             const xrt_ir_type *tin, xrt_ir_type tout,
                             int nattrs, const xrt_ir_attr *attrs,
                             xrt_plugin_error *err) {
  xrt_ir_type types[8];
  int32_t ids[8];
  assert_true(nin + 1 <= 8);
  for (int i = 0; i <= nin; i++) {
    types[i] = i < nin ? tin[i] : tout;
    ids[i] = i;
  }
  xrt_ir_op ops[2];
  memset(ops, 0, sizeof ops);
  ops[0].code = code;
  ops[0].name = name;
  ops[0].num_operands = nin;
  ops[0].operands = ids;
  ops[0].num_results = 1;
  ops[0].results = ids + nin;
  ops[0].num_attrs = nattrs;
  ops[0].attrs = attrs;
  ops[0].callee = -1;
  ops[1].code = XRT_OP_FUNC_RETURN;
  ops[1].name = "func.return";
  ops[1].callee = -1;
  xrt_ir_func f;
  memset(&f, 0, sizeof f);
  f.name = "main";
  f.is_public = true;
  f.num_values = nin + 1;
  f.value_types = types;
  f.body.num_args = nin;
  f.body.args = ids;
  f.body.num_ops = 2;
  f.body.ops = ops;
  xrt_ir_module m;
  memset(&m, 0, sizeof m);
  m.name = "";
  m.num_funcs = 1;
  m.funcs = &f;
  m.num_replicas = m.num_partitions = 1;
  m.stablehlo_version = "1.0.0";
  void *pc = tu_sim_plugin_client(1 << 20), *exe = NULL;
  int32_t dev = 0;
  xrt_plugin_compile_args a;
  memset(&a, 0, sizeof a);
  a.struct_size = sizeof a;
  a.module = &m;
  a.entry = 0;
  a.num_replicas = a.num_partitions = 1;
  a.device_assignment = &dev;
  err->message[0] = 0;
  xrt_status st = api()->compile(pc, &a, &exe, err);
  if (exe) api()->executable_destroy(exe);
  api()->client_destroy(pc);
  return st;
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
  conv_case c;
  memset(&c, 0, sizeof c);
  c.code = XRT_OP_CONVOLUTION;
  c.name = "stablehlo.convolution";
  c.nin = 2;
  c.in[0] = ty3(XRT_F32, 1, 2, 5);
  c.in[1] = ty3(XRT_F32, 3, 2, 2);
  c.out = ty3(XRT_F32, 1, 3, 4);
  const int64_t dn[6] = {0, 1, 1, 0, 0, 1};
  memcpy(c.dn, dn, sizeof dn);
  c.isp[0] = c.ksp[0] = c.osp[0] = 2;
  c.isp[1] = c.ksp[1] = c.osp[1] = 2;
  c.nsp = 1;
  return c;
}

static xrt_status compile_conv(const conv_case *c, xrt_plugin_error *err) {
  static const char *const names[6] = {
      "input_batch_dimension",          "input_feature_dimension",
      "kernel_input_feature_dimension", "kernel_output_feature_dimension",
      "output_batch_dimension",         "output_feature_dimension"};
  xrt_ir_attr items[9];
  for (int i = 0; i < 6; i++) items[i] = int_attr(names[i], c->dn[i]);
  if (c->dn_kind_bad) items[0] = ints_attr(names[0], c->dn, 1);
  items[6] = ints_attr("input_spatial_dimensions", c->isp, c->nsp);
  items[7] = ints_attr("kernel_spatial_dimensions", c->ksp, c->nsp);
  items[8] = ints_attr("output_spatial_dimensions", c->osp, c->nsp);
  xrt_ir_attr attrs[8];
  int n = 0;
  if (!c->no_dn) {
    memset(&attrs[n], 0, sizeof attrs[n]);
    attrs[n].name = "dimension_numbers";
    attrs[n].kind = XRT_ATTR_DICT;
    attrs[n].num_items = 9;
    attrs[n].items = items;
    n++;
  }
  for (int i = 0; i < c->nextra; i++) attrs[n++] = c->extra[i];
  return compile_op(c->code, c->name, c->nin, c->in, c->out, n, attrs, err);
}

#define CONV_REFUSED(c, why)                                                \
  do {                                                                      \
    xrt_plugin_error e_;                                                    \
    xrt_status s_ = compile_conv(&(c), &e_);                                \
    if (s_ != XRT_INVALID_ARGUMENT)                                         \
      fail_msg("line %d: status %d (%s), want INVALID_ARGUMENT", __LINE__,  \
               (int)s_, s_ ? e_.message : "");                              \
    TU_ASSERT_CONTAINS(e_.message, why);                                    \
  } while (0)

#define CONV_COMPILES(c)                                                    \
  do {                                                                      \
    xrt_plugin_error e_;                                                    \
    if (compile_conv(&(c), &e_) != XRT_OK)                                  \
      fail_msg("line %d: %s", __LINE__, e_.message);                        \
  } while (0)

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
  c.extra[0] = int_attr("batch_group_count", 0);
  c.nextra = 1;
  CONV_REFUSED(c, kBad);
  c.extra[0] = int_attr("feature_group_count", 0);
  CONV_REFUSED(c, kBad);
  /* batch 1 is not a multiple of 2 batch groups */
  c.extra[0] = int_attr("batch_group_count", 2);
  CONV_REFUSED(c, kBad);
  /* batch 2 in 2 groups, but 3 output features do not split in 2 */
  c = good();
  c.in[0] = ty3(XRT_F32, 2, 2, 5);
  c.extra[0] = int_attr("batch_group_count", 2);
  c.nextra = 1;
  CONV_REFUSED(c, kBad);
  /* 3 output features in 2 feature groups */
  c = good();
  c.in[0] = ty3(XRT_F32, 1, 4, 5);
  c.extra[0] = int_attr("feature_group_count", 2);
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
  c.extra[0] = int_attr("feature_group_count", 2);
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
    c.extra[0] = int_attr(lists[i], 1); /* not a list */
    c.nextra = 1;
    CONV_REFUSED(c, kBad);
    c.extra[0] = ints_attr(lists[i], two, 2); /* one per dimension */
    CONV_REFUSED(c, kBad);
    c.extra[0] = ints_attr(lists[i], one, 1); /* well-formed */
    if (i == 3) CONV_COMPILES(c);
    if (i < 3) {
      CONV_COMPILES(c);
      c.extra[0] = ints_attr(lists[i], zero, 1); /* must be positive */
      CONV_REFUSED(c, kBad);
    }
  }
  c = good();
  c.extra[0] = ints_attr("padding", pad3, 3);
  c.nextra = 1;
  CONV_REFUSED(c, kBad);
  c.extra[0] = ints_attr("padding", pad1, 2);
  CONV_COMPILES(c);
  const int64_t *huge[4] = {big_lo, big_hi, neg_lo, neg_hi};
  for (int i = 0; i < 4; i++) {
    c.extra[0] = ints_attr("padding", huge[i], 2);
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
  c.extra[0] = ints_attr("padding", pad3, 3);
  c.nextra = 1;
  CONV_COMPILES(c);
  /* without its padding operand */
  c = good();
  c.code = XRT_OP_DYNAMIC_CONV;
  c.name = "stablehlo.dynamic_conv";
  CONV_REFUSED(c, "stablehlo.dynamic_conv: invalid dimension numbers");
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_conv_dims),
      cmocka_unit_test(test_conv_groups),
      cmocka_unit_test(test_conv_window),
      cmocka_unit_test(test_conv_window_counts),
      cmocka_unit_test(test_dynamic_conv),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
