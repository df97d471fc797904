/*
 * test_refine_infer.c - shape refinement of shape-polymorphic programs
 * (src/core/refine_infer.c, refine.c): for ops test_dynamic_shapes.c leaves
 * out (chlo.broadcast_*, broadcast, dot, rng, reduce_window and
 * convolution with every window attribute, real_dynamic_slice whose limit
 * is its start recomputed through ops with attributes, ops whose
 * attributes make inference give up), each program is compiled for
 * concrete argument shapes and the executable's output shapes are checked
 * against the shapes computed by hand from StableHLO's shape rules; the
 * ones inference cannot tell are refused with their message.  A few are
 * also run, to see the refined program computes what it should.
 */
#include "test_util.h"

#define C(state) ((xrt_client *)*(state))

/* Compiles text, called rf.mlir, for the argument shapes. */
static xrt_executable *rf_compile(xrt_client *c, const char *text, int nin,
                                  const xrt_shape *in, xrt_status *st) {
  return tu_compile_for(c, text, "rf.mlir", nin, in, st);
}

/* A shape in a table: element type, rank, dims. */
typedef struct rsh {
  xrt_dtype dt;
  int rank;
  int64_t d[4];
} rsh;

static xrt_shape rsh_shape(rsh r) { return tu_shape(r.dt, r.rank, r.d); }

typedef struct rf_case {
  const char *what, *text;
  int nin;
  rsh in[3];
  int nout;
  rsh out[2];
} rf_case;

static void assert_shape_eq(const char *what, int k, xrt_shape got, xrt_shape want) {
  bool same = got.dtype == want.dtype && got.rank == want.rank;
  for (int d = 0; same && d < want.rank; d++) same = got.dims[d] == want.dims[d];
  if (!same) {
    char g[128] = "", w[128] = "";
    for (int d = 0; d < got.rank; d++)
      snprintf(g + strlen(g), sizeof g - strlen(g), "%lldx", (long long)got.dims[d]);
    for (int d = 0; d < want.rank; d++)
      snprintf(w + strlen(w), sizeof w - strlen(w), "%lldx", (long long)want.dims[d]);
    fail_msg("%s: output %d is %s (dtype %d), want %s (dtype %d)", what, k, g,
             (int)got.dtype, w, (int)want.dtype);
  }
}

static void rf_check(xrt_client *c, const rf_case *k) {
  xrt_status s;
  xrt_shape in[3];
  for (int i = 0; i < k->nin; i++) in[i] = rsh_shape(k->in[i]);
  xrt_executable *exe = rf_compile(c, k->text, k->nin, in, &s);
  if (s) fail_msg("%s: %s", k->what, tu_msg);
  assert_int_equal(xrt_executable_num_outputs(exe), k->nout);
  for (int i = 0; i < k->nout; i++) {
    xrt_shape got;
    assert_int_equal(xrt_executable_output_shape(exe, i, &got), XRT_OK);
    assert_shape_eq(k->what, i, got, rsh_shape(k->out[i]));
  }
  xrt_executable_release(exe);
}

static void rf_refused(xrt_client *c, const char *text, int nin,
                       const xrt_shape *in, const char *what) {
  tu_compile_fails(c, text, "rf.mlir", nin, in, XRT_INVALID_ARGUMENT,
                   "rf.mlir:", what);
}

#define S TU_SHAPE

/* ---------------------------------------------------------------------
 * Shapes inferred
 * ------------------------------------------------------------------- */

static const rf_case k_cases[] = {
    {"chlo.broadcast_add, numpy broadcasting",
     "func.func @main(%a: tensor<?x1xf32>, %b: tensor<1x?xf32>) -> tensor<?x?xf32> {\n"
     "  %r = chlo.broadcast_add %a, %b : (tensor<?x1xf32>, tensor<1x?xf32>) -> tensor<?x?xf32>\n"
     "  return %r : tensor<?x?xf32>\n}\n",
     2, {{XRT_F32, 2, {3, 1}}, {XRT_F32, 2, {1, 4}}}, 1, {{XRT_F32, 2, {3, 4}}}},
    {"chlo.broadcast_multiply, lower rank aligned to the trailing dims",
     "func.func @main(%a: tensor<?xf32>, %b: tensor<2x?xf32>) -> tensor<2x?xf32> {\n"
     "  %r = chlo.broadcast_multiply %a, %b : (tensor<?xf32>, tensor<2x?xf32>) -> tensor<2x?xf32>\n"
     "  return %r : tensor<2x?xf32>\n}\n",
     2, {{XRT_F32, 1, {5}}, {XRT_F32, 2, {2, 5}}}, 1, {{XRT_F32, 2, {2, 5}}}},
    {"chlo.broadcast_add with broadcast_dimensions",
     "func.func @main(%a: tensor<?x2xi32>, %b: tensor<?xi32>) -> tensor<?x2xi32> {\n"
     "  %r = chlo.broadcast_add %a, %b {broadcast_dimensions = array<i64: 0>} : (tensor<?x2xi32>, tensor<?xi32>) -> tensor<?x2xi32>\n"
     "  return %r : tensor<?x2xi32>\n}\n",
     2, {{XRT_S32, 2, {3, 2}}, {XRT_S32, 1, {3}}}, 1, {{XRT_S32, 2, {3, 2}}}},
    {"chlo.broadcast_select with a scalar predicate",
     "func.func @main(%p: tensor<i1>, %a: tensor<?xf32>, %b: tensor<?xf32>) -> tensor<?xf32> {\n"
     "  %r = chlo.broadcast_select %p, %a, %b : (tensor<i1>, tensor<?xf32>, tensor<?xf32>) -> tensor<?xf32>\n"
     "  return %r : tensor<?xf32>\n}\n",
     3, {{XRT_PRED, 0, {0}}, {XRT_F32, 1, {6}}, {XRT_F32, 1, {6}}}, 1, {{XRT_F32, 1, {6}}}},
    {"broadcast: sizes, then the operand's dims",
     "func.func @main(%x: tensor<?xf32>) -> tensor<2x?xf32> {\n"
     "  %r = stablehlo.broadcast %x, sizes = [2] : (tensor<?xf32>) -> tensor<2x?xf32>\n"
     "  return %r : tensor<2x?xf32>\n}\n",
     1, {{XRT_F32, 1, {7}}}, 1, {{XRT_F32, 2, {2, 7}}}},
    {"dot: [m, k] x [k, n]",
     "func.func @main(%a: tensor<?x3xf32>, %b: tensor<3x?xf32>) -> tensor<?x?xf32> {\n"
     "  %r = stablehlo.dot %a, %b : (tensor<?x3xf32>, tensor<3x?xf32>) -> tensor<?x?xf32>\n"
     "  return %r : tensor<?x?xf32>\n}\n",
     2, {{XRT_F32, 2, {2, 3}}, {XRT_F32, 2, {3, 5}}}, 1, {{XRT_F32, 2, {2, 5}}}},
    {"dot: matrix x vector",
     "func.func @main(%a: tensor<?x3xf32>, %b: tensor<3xf32>) -> tensor<?xf32> {\n"
     "  %r = stablehlo.dot %a, %b : (tensor<?x3xf32>, tensor<3xf32>) -> tensor<?xf32>\n"
     "  return %r : tensor<?xf32>\n}\n",
     2, {{XRT_F32, 2, {4, 3}}, {XRT_F32, 1, {3}}}, 1, {{XRT_F32, 1, {4}}}},
    {"rng: the shape operand",
     "func.func @main(%x: tensor<?xf32>) -> tensor<?x2xf32> {\n"
     "  %d = stablehlo.get_dimension_size %x, dim = 0 : (tensor<?xf32>) -> tensor<i32>\n"
     "  %d64 = stablehlo.convert %d : (tensor<i32>) -> tensor<i64>\n"
     "  %d1 = stablehlo.reshape %d64 : (tensor<i64>) -> tensor<1xi64>\n"
     "  %c2 = stablehlo.constant dense<2> : tensor<1xi64>\n"
     "  %s = stablehlo.concatenate %d1, %c2, dim = 0 : (tensor<1xi64>, tensor<1xi64>) -> tensor<2xi64>\n"
     "  %a = stablehlo.constant dense<0.0> : tensor<f32>\n"
     "  %b = stablehlo.constant dense<1.0> : tensor<f32>\n"
     "  %r = stablehlo.rng %a, %b, %s, distribution = UNIFORM : (tensor<f32>, tensor<f32>, tensor<2xi64>) -> tensor<?x2xf32>\n"
     "  return %r : tensor<?x2xf32>\n}\n",
     1, {{XRT_F32, 1, {3}}}, 1, {{XRT_F32, 2, {3, 2}}}},
    {"reduce_window: base and window dilation, stride, padding",
     /* x = 5: dilated by 2 -> 9, padded 1 + 0 -> 10; window 2 dilated by
      * 2 -> 3; stride 2: (10 - 3) / 2 + 1 = 4 */
     "func.func @main(%a: tensor<?xf32>) -> tensor<?xf32> {\n"
     "  %init = stablehlo.constant dense<0.0> : tensor<f32>\n"
     "  %0 = \"stablehlo.reduce_window\"(%a, %init) ({\n"
     "  ^bb0(%x: tensor<f32>, %y: tensor<f32>):\n"
     "    %m = stablehlo.add %x, %y : tensor<f32>\n"
     "    stablehlo.return %m : tensor<f32>\n"
     "  }) {window_dimensions = array<i64: 2>, window_strides = array<i64: 2>,\n"
     "      base_dilations = array<i64: 2>, window_dilations = array<i64: 2>,\n"
     "      padding = dense<[[1, 0]]> : tensor<1x2xi64>}\n"
     "    : (tensor<?xf32>, tensor<f32>) -> tensor<?xf32>\n"
     "  func.return %0 : tensor<?xf32>\n}\n",
     1, {{XRT_F32, 1, {5}}}, 1, {{XRT_F32, 1, {4}}}},
    {"convolution: stride, padding, lhs and rhs dilation",
     /* x = 6 dilated by 2 -> 11, padded 1 + 2 -> 14; kernel 3 dilated by
      * 2 -> 5; stride 3: (14 - 5) / 3 + 1 = 4; batch 2, features 4 */
     "func.func @main(%x: tensor<?x?x1xf32>, %k: tensor<3x1x4xf32>) -> tensor<?x?x4xf32> {\n"
     "  %r = \"stablehlo.convolution\"(%x, %k) {batch_group_count = 1 : i64,\n"
     "    dimension_numbers = #stablehlo.conv<[b, 0, f]x[0, i, o]->[b, 0, f]>,\n"
     "    feature_group_count = 1 : i64, window_strides = array<i64: 3>,\n"
     "    padding = dense<[[1, 2]]> : tensor<1x2xi64>, lhs_dilation = array<i64: 2>,\n"
     "    rhs_dilation = array<i64: 2>} : (tensor<?x?x1xf32>, tensor<3x1x4xf32>) -> tensor<?x?x4xf32>\n"
     "  return %r : tensor<?x?x4xf32>\n}\n",
     2, {{XRT_F32, 3, {2, 6, 1}}, {XRT_F32, 3, {3, 1, 4}}}, 1, {{XRT_F32, 3, {2, 4, 4}}}},
    {"convolution: batch_group_count divides the batch",
     /* batch 4 / 2 groups = 2; features 2 (kernel output) */
     "func.func @main(%x: tensor<?x3x2xf32>, %k: tensor<1x2x2xf32>) -> tensor<?x3x2xf32> {\n"
     "  %r = \"stablehlo.convolution\"(%x, %k) {batch_group_count = 2 : i64,\n"
     "    dimension_numbers = #stablehlo.conv<[b, 0, f]x[0, i, o]->[b, 0, f]>,\n"
     "    feature_group_count = 1 : i64} : (tensor<?x3x2xf32>, tensor<1x2x2xf32>) -> tensor<?x3x2xf32>\n"
     "  return %r : tensor<?x3x2xf32>\n}\n",
     2, {{XRT_F32, 3, {4, 3, 2}}, {XRT_F32, 3, {1, 2, 2}}}, 1, {{XRT_F32, 3, {2, 3, 2}}}},
    {"dot_general with batching dims",
     "func.func @main(%a: tensor<?x2x3xf32>, %b: tensor<?x3x4xf32>) -> tensor<?x2x4xf32> {\n"
     "  %r = stablehlo.dot_general %a, %b, batching_dims = [0] x [0], contracting_dims = [2] x [1] : (tensor<?x2x3xf32>, tensor<?x3x4xf32>) -> tensor<?x2x4xf32>\n"
     "  return %r : tensor<?x2x4xf32>\n}\n",
     2, {{XRT_F32, 3, {5, 2, 3}}, {XRT_F32, 3, {5, 3, 4}}}, 1, {{XRT_F32, 3, {5, 2, 4}}}},
    {"gather with a `?` batch of indices",
     "func.func @main(%x: tensor<5x3xf32>, %i: tensor<?x1xi32>) -> tensor<?x3xf32> {\n"
     "  %r = \"stablehlo.gather\"(%x, %i) {dimension_numbers = #stablehlo.gather<offset_dims = [1], collapsed_slice_dims = [0], start_index_map = [0], index_vector_dim = 1>, slice_sizes = array<i64: 1, 3>} : (tensor<5x3xf32>, tensor<?x1xi32>) -> tensor<?x3xf32>\n"
     "  return %r : tensor<?x3xf32>\n}\n",
     2, {{XRT_F32, 2, {5, 3}}, {XRT_S32, 2, {4, 1}}}, 1, {{XRT_F32, 2, {4, 3}}}},
    {"transpose, pad with interior, concatenate",
     /* x [2, 3]: transpose [3, 2]; pad lo 1 hi 2 interior 1 on dim 1:
      * 1 + 2 + 2 + 1 = 6; concatenate with itself on dim 0: 6 */
     "func.func @main(%x: tensor<?x?xf32>) -> tensor<?x?xf32> {\n"
     "  %t = stablehlo.transpose %x, dims = [1, 0] : (tensor<?x?xf32>) -> tensor<?x?xf32>\n"
     "  %z = stablehlo.constant dense<0.0> : tensor<f32>\n"
     "  %p = stablehlo.pad %t, %z, low = [0, 1], high = [0, 2], interior = [0, 1] : (tensor<?x?xf32>, tensor<f32>) -> tensor<?x?xf32>\n"
     "  %c = stablehlo.concatenate %p, %p, dim = 0 : (tensor<?x?xf32>, tensor<?x?xf32>) -> tensor<?x?xf32>\n"
     "  return %c : tensor<?x?xf32>\n}\n",
     1, {{XRT_F32, 2, {2, 3}}}, 1, {{XRT_F32, 2, {6, 6}}}},
    {"slice with strides, reshape of one unknown, sort and optimization_barrier",
     /* x [7, 2]: rows 1..7 step 3 -> 2 rows; reshape to ?x2x2 -> 1 */
     "func.func @main(%x: tensor<?x2xf32>) -> (tensor<?x2x2xf32>, tensor<?x2xf32>) {\n"
     "  %s = stablehlo.slice %x [0:4:3, 0:2] : (tensor<?x2xf32>) -> tensor<?x2xf32>\n"
     "  %r = stablehlo.reshape %s : (tensor<?x2xf32>) -> tensor<?x2x2xf32>\n"
     "  %o:2 = stablehlo.optimization_barrier %s, %x : tensor<?x2xf32>, tensor<?x2xf32>\n"
     "  return %r, %o#1 : tensor<?x2x2xf32>, tensor<?x2xf32>\n}\n",
     1, {{XRT_F32, 2, {7, 2}}}, 2, {{XRT_F32, 3, {1, 2, 2}}, {XRT_F32, 2, {7, 2}}}},
    {"case: the first branch's shapes",
     "func.func @main(%i: tensor<i32>, %x: tensor<?xf32>) -> tensor<?xf32> {\n"
     "  %r = \"stablehlo.case\"(%i) ({\n"
     "    stablehlo.return %x : tensor<?xf32>\n"
     "  }, {\n"
     "    %y = stablehlo.negate %x : tensor<?xf32>\n"
     "    stablehlo.return %y : tensor<?xf32>\n"
     "  }) : (tensor<i32>) -> tensor<?xf32>\n"
     "  return %r : tensor<?xf32>\n}\n",
     2, {{XRT_S32, 0, {0}}, {XRT_F32, 1, {9}}}, 1, {{XRT_F32, 1, {9}}}},
    {"chlo.broadcast_select with a vector predicate",
     "func.func @main(%p: tensor<?xi1>, %a: tensor<?x?xf32>, %b: tensor<?x?xf32>) -> tensor<?x?xf32> {\n"
     "  %r = chlo.broadcast_select %p, %a, %b : (tensor<?xi1>, tensor<?x?xf32>, tensor<?x?xf32>) -> tensor<?x?xf32>\n"
     "  return %r : tensor<?x?xf32>\n}\n",
     3, {{XRT_PRED, 1, {3}}, {XRT_F32, 2, {2, 3}}, {XRT_F32, 2, {2, 3}}}, 1, {{XRT_F32, 2, {2, 3}}}},
    {"gather with an implicit index vector dimension",
     "func.func @main(%x: tensor<5x3xf32>, %i: tensor<?xi32>) -> tensor<?x3xf32> {\n"
     "  %r = \"stablehlo.gather\"(%x, %i) {dimension_numbers = #stablehlo.gather<offset_dims = [1], collapsed_slice_dims = [0], start_index_map = [0], index_vector_dim = 1>, slice_sizes = array<i64: 1, 3>} : (tensor<5x3xf32>, tensor<?xi32>) -> tensor<?x3xf32>\n"
     "  return %r : tensor<?x3xf32>\n}\n",
     2, {{XRT_F32, 2, {5, 3}}, {XRT_S32, 1, {4}}}, 1, {{XRT_F32, 2, {4, 3}}}},
    {"dot_general without batching dims",
     "func.func @main(%a: tensor<?x3xf32>, %b: tensor<3x?xf32>) -> tensor<?x?xf32> {\n"
     "  %r = stablehlo.dot_general %a, %b, contracting_dims = [1] x [0] : (tensor<?x3xf32>, tensor<3x?xf32>) -> tensor<?x?xf32>\n"
     "  return %r : tensor<?x?xf32>\n}\n",
     2, {{XRT_F32, 2, {2, 3}}, {XRT_F32, 2, {3, 5}}}, 1, {{XRT_F32, 2, {2, 5}}}},
    {"broadcast_in_dim expanding a size-1 dimension, and an if",
     "func.func @main(%x: tensor<?x1xf32>, %c: tensor<i1>) -> tensor<?x5xf32> {\n"
     "  %r = stablehlo.broadcast_in_dim %x, dims = [0, 1] : (tensor<?x1xf32>) -> tensor<?x5xf32>\n"
     "  %y = \"stablehlo.if\"(%c) ({\n"
     "    stablehlo.return %r : tensor<?x5xf32>\n"
     "  }, {\n"
     "    stablehlo.return %r : tensor<?x5xf32>\n"
     "  }) : (tensor<i1>) -> tensor<?x5xf32>\n"
     "  return %y : tensor<?x5xf32>\n}\n",
     2, {{XRT_F32, 2, {4, 1}}, {XRT_PRED, 0, {0}}}, 1, {{XRT_F32, 2, {4, 5}}}},
};

static void test_shapes_inferred(void **state) {
  for (size_t i = 0; i < sizeof k_cases / sizeof k_cases[0]; i++)
    rf_check(C(state), &k_cases[i]);
}

/* Two of them run: chlo broadcasting and dot compute what they should. */
static void test_refined_programs_run(void **state) {
  float a[3] = {1, 2, 3}, b[4] = {10, 20, 30, 40};
  tu_in in[2] = {{S(XRT_F32, 3, 1), a}, {S(XRT_F32, 1, 4), b}};
  xrt_shape sh[2] = {in[0].shape, in[1].shape};
  xrt_status s;
  xrt_executable *exe = rf_compile(C(state), k_cases[0].text, 2, sh, &s);
  assert_int_equal(s, XRT_OK);
  xrt_device *dev = xrt_client_device(C(state), 0);
  xrt_buffer *args[2], *out = NULL;
  for (int i = 0; i < 2; i++)
    assert_int_equal(xrt_buffer_from_host(C(state), dev, &in[i].shape, in[i].data, &args[i]),
                     XRT_OK);
  assert_int_equal(xrt_execute(exe, dev, args, 2, &out, 1, NULL), XRT_OK);
  float got[12];
  assert_int_equal(xrt_buffer_to_host(out, got, sizeof got), XRT_OK);
  for (int r = 0; r < 3; r++)
    for (int c = 0; c < 4; c++) assert_true(got[r * 4 + c] == a[r] + b[c]);
  xrt_buffer_release(out);
  for (int i = 0; i < 2; i++) xrt_buffer_release(args[i]);
  xrt_executable_release(exe);
}

/* ---------------------------------------------------------------------
 * real_dynamic_slice: the limit is the start (recomputed) plus sizes
 * ------------------------------------------------------------------- */

/* The start computed twice by one chain of ops (an op with attributes of
 * each kind the comparison reads); the limit is the second copy plus
 * [2, 2]: the sizes are [2, 2] whatever the start. */
static const char *k_rds =
    "func.func @main(%x: tensor<?x4xf32>, %i: tensor<4xi32>) -> tensor<?x?xf32> {\n"
    "  %a = stablehlo.slice %i [1:3] : (tensor<4xi32>) -> tensor<2xi32>\n"
    "  %b = stablehlo.slice %i [1:3] : (tensor<4xi32>) -> tensor<2xi32>\n"
    "  %z = stablehlo.constant dense<0> : tensor<2xi32>\n"
    "  %ca = stablehlo.compare GT, %a, %z : (tensor<2xi32>, tensor<2xi32>) -> tensor<2xi1>\n"
    "  %cb = stablehlo.compare GT, %b, %z : (tensor<2xi32>, tensor<2xi32>) -> tensor<2xi1>\n"
    "  %sa = stablehlo.select %ca, %a, %z : tensor<2xi1>, tensor<2xi32>\n"
    "  %sb = stablehlo.select %cb, %b, %z : tensor<2xi1>, tensor<2xi32>\n"
    "  %ta = stablehlo.negate %sa : tensor<2xi32>\n"
    "  %sz = stablehlo.constant dense<2> : tensor<2xi32>\n"
    "  %lim = stablehlo.add SB, %sz : tensor<2xi32>\n"
    "  %ones = stablehlo.constant dense<1> : tensor<2xi32>\n"
    "  %r = stablehlo.real_dynamic_slice %x, %sa, %lim, %ones : (tensor<?x4xf32>, tensor<2xi32>, tensor<2xi32>, tensor<2xi32>) -> tensor<?x?xf32>\n"
    "  return %r : tensor<?x?xf32>\n}\n";

static char *rds_with(const char *limit_start) {
  size_t n = strlen(k_rds) + 64;
  char *t = malloc(n);
  const char *at = strstr(k_rds, "SB");
  snprintf(t, n, "%.*s%s%s", (int)(at - k_rds), k_rds, limit_start, at + 2);
  return t;
}

static void test_real_dynamic_slice_equivalent_starts(void **state) {
  xrt_shape in[2] = {S(XRT_F32, 5, 4), S(XRT_S32, 4)};
  /* select(compare(slice)) recomputed: the same start */
  char *t = rds_with("%sb");
  rf_case k = {"start recomputed", t, 2, {{XRT_F32, 2, {5, 4}}, {XRT_S32, 1, {4}}},
               1, {{XRT_F32, 2, {2, 2}}}};
  rf_check(C(state), &k);
  free(t);
  /* and it runs: rows 1..2, columns 2..3 of x (start [1, 2]) */
  float x[20];
  for (int i = 0; i < 20; i++) x[i] = (float)i;
  int32_t idx[4] = {9, 1, 2, 9};
  tu_in args[2] = {{in[0], x}, {in[1], idx}};
  tu_out o;
  t = rds_with("%sb");
  xrt_compile_options opt;
  xrt_compile_options_init(&opt);
  opt.num_arg_shapes = 2;
  opt.arg_shapes = in;
  xrt_executable *exe = NULL;
  assert_int_equal(xrt_compile(C(state), t, strlen(t), &opt, &exe), XRT_OK);
  xrt_device *dev = xrt_client_device(C(state), 0);
  xrt_buffer *b[2], *out = NULL;
  for (int i = 0; i < 2; i++)
    assert_int_equal(xrt_buffer_from_host(C(state), dev, &args[i].shape, args[i].data, &b[i]),
                     XRT_OK);
  assert_int_equal(xrt_execute(exe, dev, b, 2, &out, 1, NULL), XRT_OK);
  assert_int_equal(tu_download(&out, 1, &o), XRT_OK);
  TU_ASSERT_OUT(&o, 0, float, 6, 7, 10, 11);
  tu_out_free(&o);
  xrt_buffer_release(out);
  for (int i = 0; i < 2; i++) xrt_buffer_release(b[i]);
  xrt_executable_release(exe);
  free(t);
  /* starts that are not the same: a different slice, a different
   * comparison, another op: the sizes are unknown */
  static const char *const others[] = {"%i2", "%cmp2", "%ta"};
  for (int i = 0; i < 3; i++) {
    size_t n = strlen(k_rds) + 512;
    char *u = malloc(n);
    const char *at = strstr(k_rds, "  %sz");
    snprintf(u, n, "%.*s%s%s", (int)(at - k_rds), k_rds,
             "  %c2 = stablehlo.slice %i [0:2] : (tensor<4xi32>) -> tensor<2xi32>\n"
             "  %i2 = stablehlo.select %cb, %c2, %z : tensor<2xi1>, tensor<2xi32>\n"
             "  %cc = stablehlo.compare LT, %b, %z : (tensor<2xi32>, tensor<2xi32>) -> tensor<2xi1>\n"
             "  %cmp2 = stablehlo.select %cc, %b, %z : tensor<2xi1>, tensor<2xi32>\n",
             at);
    char *v = malloc(n);
    const char *sb = strstr(u, "SB");
    snprintf(v, n, "%.*s%s%s", (int)(sb - u), u, others[i], sb + 2);
    rf_refused(C(state), v, 2, in, "dimension 0 stays dynamic");
    free(u);
    free(v);
  }
}

/* The start a broadcast of a scalar taken from an argument (an empty
 * dimension list), recomputed for the limit: sizes [3, 1]. */
static void test_real_dynamic_slice_broadcast_start(void **state) {
  static const char *p =
      "func.func @main(%x: tensor<?x4xf32>, %i: tensor<2xi32>) -> tensor<?x?xf32> {\n"
      "  %a0 = stablehlo.slice %i [0:1] : (tensor<2xi32>) -> tensor<1xi32>\n"
      "  %a1 = stablehlo.reshape %a0 : (tensor<1xi32>) -> tensor<i32>\n"
      "  %a = stablehlo.broadcast_in_dim %a1, dims = [] : (tensor<i32>) -> tensor<2xi32>\n"
      "  %b0 = stablehlo.slice %i [0:1] : (tensor<2xi32>) -> tensor<1xi32>\n"
      "  %b1 = stablehlo.reshape %b0 : (tensor<1xi32>) -> tensor<i32>\n"
      "  %b = stablehlo.broadcast_in_dim %b1, dims = [] : (tensor<i32>) -> tensor<2xi32>\n"
      "  %sz = stablehlo.constant dense<[3, 1]> : tensor<2xi32>\n"
      "  %lim = stablehlo.add %sz, %b : tensor<2xi32>\n"
      "  %ones = stablehlo.constant dense<1> : tensor<2xi32>\n"
      "  %r = stablehlo.real_dynamic_slice %x, %a, %lim, %ones : (tensor<?x4xf32>, tensor<2xi32>, tensor<2xi32>, tensor<2xi32>) -> tensor<?x?xf32>\n"
      "  return %r : tensor<?x?xf32>\n}\n";
  rf_case k = {"broadcast start", p, 2, {{XRT_F32, 2, {6, 4}}, {XRT_S32, 1, {2}}},
               1, {{XRT_F32, 2, {3, 1}}}};
  rf_check(C(state), &k);
}

TU_MAIN(tu_setup_client, tu_teardown_client,
        cmocka_unit_test(test_shapes_inferred),
        cmocka_unit_test(test_refined_programs_run),
        cmocka_unit_test(test_real_dynamic_slice_equivalent_starts),
        cmocka_unit_test(test_real_dynamic_slice_broadcast_start))
