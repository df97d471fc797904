/*
 * test_dynamic_shapes.c - shape-polymorphic programs (`?` dimensions, as
 * jax.export writes symbolic shapes) compiled for concrete argument shapes
 * (xrt_compile_options.arg_shapes): every dynamic op and its static form,
 * dimension arguments, func.call specialisation, shape_assertion, shapes
 * that disagree, cache keys; JAX exports of ../shared/stablehlo/dynamic
 * run against references computed here; and a sweep that compiles every
 * export there (at least test/dynamic_required.txt's count must).
 */
#include "test_util.h"

#ifndef XRT_TEST_DYNAMIC_DIR
#define XRT_TEST_DYNAMIC_DIR "../shared/stablehlo/dynamic"
#endif
#ifndef XRT_TEST_DYNAMIC_REQUIRED
#define XRT_TEST_DYNAMIC_REQUIRED "test/dynamic_required.txt"
#endif

#include <dirent.h>

#define C(state) ((xrt_client *)*(state))

/* Compiles text for the argument shapes of in, runs it on device 0 and
 * downloads every result into *out; the status (message in tu_msg). */
static xrt_status dy_run(xrt_client *c, const char *text, int nin,
                         const tu_in *in, tu_out *out) {
  xrt_shape shapes[16];
  for (int i = 0; i < nin; i++) shapes[i] = in[i].shape;
  xrt_compile_options o;
  xrt_compile_options_init(&o);
  o.filename = "dyn.mlir";
  o.num_arg_shapes = nin;
  o.arg_shapes = shapes;
  xrt_executable *exe = NULL;
  xrt_buffer *args[16] = {0}, *outs[TU_MAX_OUTS] = {0};
  xrt_device *dev = xrt_client_device(c, 0);
  memset(out, 0, sizeof *out);
  tu_msg[0] = 0;
  xrt_status s = xrt_compile(c, text, strlen(text), &o, &exe);
  int nout = s ? 0 : xrt_executable_num_outputs(exe);
  for (int i = 0; !s && i < nin; i++)
    s = xrt_buffer_from_host(c, dev, &in[i].shape, in[i].data, &args[i]);
  if (!s) s = xrt_execute(exe, dev, args, nin, outs, nout, NULL);
  if (!s) s = tu_download(outs, nout, out);
  if (s) tu_save_error();
  for (int i = 0; i < nout; i++) xrt_buffer_release(outs[i]);
  for (int i = 0; i < nin; i++) xrt_buffer_release(args[i]);
  xrt_executable_release(exe);
  return s;
}

#define DY_RUN_OK(c, text, nin, in, out)                                    \
  do {                                                                      \
    xrt_status dy_s_ = dy_run((c), (text), (nin), (in), (out));             \
    if (dy_s_) fail_msg("%s: %s", xrt_strerror(dy_s_), tu_msg);             \
  } while (0)

/* Deterministic inputs: small exact floats, different per position. */
static float dy_val(int64_t i) { return (float)((i * 37) % 23 - 11) / 4.0f; }

static float *dy_fill(int64_t n) {
  float *v = malloc(sizeof *v * (size_t)(n ? n : 1));
  for (int64_t i = 0; i < n; i++) v[i] = dy_val(i);
  return v;
}

static void dy_assert_f32(const tu_out *o, int k, const float *want,
                          int64_t n) {
  assert_int_equal(o->bytes[k], (size_t)n * sizeof(float));
  const float *got = (const float *)o->data[k];
  for (int64_t i = 0; i < n; i++)
    if (fabsf(got[i] - want[i]) > 1e-5f * (1 + fabsf(want[i])))
      fail_msg("element %lld: got %.9g want %.9g", (long long)i,
               (double)got[i], (double)want[i]);
}

/* ---- hand-written programs: each dynamic op ---- */

/* jax.export's newer form: @main reads its dimensions with
 * get_dimension_size and passes them to the inner function as a
 * tensor<i64> dimension argument; dynamic_broadcast_in_dim and
 * dynamic_iota take shapes computed from it. */
static const char *k_wrapped =
    "func.func @main(%x: tensor<?x4xf32>) -> tensor<?x4xf32> {\n"
    "  %d = stablehlo.get_dimension_size %x, dim = 0 : (tensor<?x4xf32>) -> tensor<i32>\n"
    "  %d64 = stablehlo.convert %d : (tensor<i32>) -> tensor<i64>\n"
    "  %r = func.call @inner(%d64, %x) : (tensor<i64>, tensor<?x4xf32>) -> tensor<?x4xf32>\n"
    "  return %r : tensor<?x4xf32>\n"
    "}\n"
    "func.func private @inner(%b: tensor<i64>, %x: tensor<?x4xf32>) -> tensor<?x4xf32> {\n"
    "  %b32 = stablehlo.convert %b : (tensor<i64>) -> tensor<i32>\n"
    "  %b1 = stablehlo.reshape %b32 : (tensor<i32>) -> tensor<1xi32>\n"
    "  %c4 = stablehlo.constant dense<4> : tensor<1xi32>\n"
    "  %s = stablehlo.concatenate %b1, %c4, dim = 0 : (tensor<1xi32>, tensor<1xi32>) -> tensor<2xi32>\n"
    "  %i = stablehlo.dynamic_iota %s, dim = 0 : (tensor<2xi32>) -> tensor<?x4xf32>\n"
    "  %one = stablehlo.constant dense<1.0> : tensor<f32>\n"
    "  %o = stablehlo.dynamic_broadcast_in_dim %one, %s, dims = [] : (tensor<f32>, tensor<2xi32>) -> tensor<?x4xf32>\n"
    "  %a = stablehlo.add %x, %i : tensor<?x4xf32>\n"
    "  %r = stablehlo.add %a, %o : tensor<?x4xf32>\n"
    "  return %r : tensor<?x4xf32>\n"
    "}\n";

static void test_get_dimension_size_broadcast_iota(void **state) {
  for (int64_t b = 1; b <= 5; b += 2) {
    float *x = dy_fill(b * 4), *want = malloc(sizeof(float) * (size_t)(b * 4));
    for (int64_t i = 0; i < b * 4; i++) want[i] = x[i] + (float)(i / 4) + 1;
    tu_in in[1] = {{TU_SHAPE(XRT_F32, b, 4), x}};
    tu_out o;
    DY_RUN_OK(C(state), k_wrapped, 1, in, &o);
    tu_assert_shape(&o, 0, TU_SHAPE(XRT_F32, b, 4));
    dy_assert_f32(&o, 0, want, b * 4);
    tu_out_free(&o);
    free(x);
    free(want);
  }
}

static void test_dynamic_reshape(void **state) {
  static const char *p =
      "func.func @main(%x: tensor<?x4xf32>) -> tensor<?x2xf32> {\n"
      "  %d = stablehlo.get_dimension_size %x, dim = 0 : (tensor<?x4xf32>) -> tensor<i32>\n"
      "  %c2 = stablehlo.constant dense<2> : tensor<i32>\n"
      "  %d2 = stablehlo.multiply %d, %c2 : tensor<i32>\n"
      "  %a = stablehlo.reshape %d2 : (tensor<i32>) -> tensor<1xi32>\n"
      "  %b = stablehlo.reshape %c2 : (tensor<i32>) -> tensor<1xi32>\n"
      "  %s = stablehlo.concatenate %a, %b, dim = 0 : (tensor<1xi32>, tensor<1xi32>) -> tensor<2xi32>\n"
      "  %r = stablehlo.dynamic_reshape %x, %s : (tensor<?x4xf32>, tensor<2xi32>) -> tensor<?x2xf32>\n"
      "  return %r : tensor<?x2xf32>\n"
      "}\n";
  float *x = dy_fill(12);
  tu_in in[1] = {{TU_SHAPE(XRT_F32, 3, 4), x}};
  tu_out o;
  DY_RUN_OK(C(state), p, 1, in, &o);
  tu_assert_shape(&o, 0, TU_SHAPE(XRT_F32, 6, 2));
  dy_assert_f32(&o, 0, x, 12);
  tu_out_free(&o);
  free(x);
}

/* dynamic_pad with padding computed from the dimension: low 1, high b,
 * interior 1 on dimension 0. */
static void test_dynamic_pad(void **state) {
  static const char *p =
      "func.func @main(%x: tensor<?xf32>) -> tensor<?xf32> {\n"
      "  %d = stablehlo.get_dimension_size %x, dim = 0 : (tensor<?xf32>) -> tensor<i32>\n"
      "  %hi = stablehlo.reshape %d : (tensor<i32>) -> tensor<1xi32>\n"
      "  %lo = stablehlo.constant dense<1> : tensor<1xi32>\n"
      "  %in = stablehlo.constant dense<1> : tensor<1xi32>\n"
      "  %pv = stablehlo.constant dense<-1.0> : tensor<f32>\n"
      "  %r = stablehlo.dynamic_pad %x, %pv, %lo, %hi, %in : (tensor<?xf32>, tensor<f32>, tensor<1xi32>, tensor<1xi32>, tensor<1xi32>) -> tensor<?xf32>\n"
      "  return %r : tensor<?xf32>\n"
      "}\n";
  float x[3] = {5, 6, 7};
  /* 1 + 3 + 2 interior + 3 */
  float want[9] = {-1, 5, -1, 6, -1, 7, -1, -1, -1};
  tu_in in[1] = {{TU_SHAPE(XRT_F32, 3), x}};
  tu_out o;
  DY_RUN_OK(C(state), p, 1, in, &o);
  dy_assert_f32(&o, 0, want, 9);
  tu_out_free(&o);
}

/* real_dynamic_slice with known bounds (a slice) and with a start known
 * only at run time but a limit of start + b (a gather). */
static void test_real_dynamic_slice(void **state) {
  static const char *p =
      "func.func @main(%x: tensor<?x4xf32>, %i: tensor<2xi32>) -> (tensor<?x2xf32>, tensor<?x2xf32>) {\n"
      "  %d = stablehlo.get_dimension_size %x, dim = 0 : (tensor<?x4xf32>) -> tensor<i32>\n"
      "  %d1 = stablehlo.reshape %d : (tensor<i32>) -> tensor<1xi32>\n"
      "  %c0 = stablehlo.constant dense<[0, 1]> : tensor<2xi32>\n"
      "  %c3 = stablehlo.constant dense<3> : tensor<1xi32>\n"
      "  %lim = stablehlo.concatenate %d1, %c3, dim = 0 : (tensor<1xi32>, tensor<1xi32>) -> tensor<2xi32>\n"
      "  %st = stablehlo.constant dense<[2, 1]> : tensor<2xi32>\n"
      "  %a = stablehlo.real_dynamic_slice %x, %c0, %lim, %st : (tensor<?x4xf32>, tensor<2xi32>, tensor<2xi32>, tensor<2xi32>) -> tensor<?x2xf32>\n"
      "  %c2 = stablehlo.constant dense<2> : tensor<1xi32>\n"
      "  %sz = stablehlo.concatenate %d1, %c2, dim = 0 : (tensor<1xi32>, tensor<1xi32>) -> tensor<2xi32>\n"
      "  %j = stablehlo.add %i, %sz : tensor<2xi32>\n"
      "  %ones = stablehlo.constant dense<1> : tensor<2xi32>\n"
      "  %b = stablehlo.real_dynamic_slice %x, %i, %j, %ones : (tensor<?x4xf32>, tensor<2xi32>, tensor<2xi32>, tensor<2xi32>) -> tensor<?x2xf32>\n"
      "  return %a, %b : tensor<?x2xf32>, tensor<?x2xf32>\n"
      "}\n";
  float *x = dy_fill(12);
  int32_t idx[2] = {0, 2};
  tu_in in[2] = {{TU_SHAPE(XRT_F32, 3, 4), x}, {TU_SHAPE(XRT_S32, 2), idx}};
  tu_out o;
  DY_RUN_OK(C(state), p, 2, in, &o);
  float a[4] = {x[1], x[2], x[9], x[10]}; /* rows 0, 2; columns 1, 2 */
  float b[6] = {x[2], x[3], x[6], x[7], x[10], x[11]};
  tu_assert_shape(&o, 0, TU_SHAPE(XRT_F32, 2, 2));
  dy_assert_f32(&o, 0, a, 4);
  tu_assert_shape(&o, 1, TU_SHAPE(XRT_F32, 3, 2));
  dy_assert_f32(&o, 1, b, 6);
  tu_out_free(&o);
  free(x);
}

/* dynamic_gather with slice sizes [1, b]; dynamic_slice of a `?` operand. */
static void test_dynamic_gather_and_slice(void **state) {
  static const char *p =
      "func.func @main(%x: tensor<4x?xf32>, %i: tensor<1xi64>) -> (tensor<?xf32>, tensor<2x2xf32>) {\n"
      "  %d = stablehlo.get_dimension_size %x, dim = 1 : (tensor<4x?xf32>) -> tensor<i32>\n"
      "  %d1 = stablehlo.reshape %d : (tensor<i32>) -> tensor<1xi32>\n"
      "  %one = stablehlo.constant dense<1> : tensor<1xi32>\n"
      "  %ss = stablehlo.concatenate %one, %d1, dim = 0 : (tensor<1xi32>, tensor<1xi32>) -> tensor<2xi32>\n"
      "  %g = \"stablehlo.dynamic_gather\"(%x, %i, %ss) {dimension_numbers = #stablehlo.gather<offset_dims = [0], collapsed_slice_dims = [0], start_index_map = [0]>} : (tensor<4x?xf32>, tensor<1xi64>, tensor<2xi32>) -> tensor<?xf32>\n"
      "  %z = stablehlo.constant dense<1> : tensor<i64>\n"
      "  %s = stablehlo.dynamic_slice %x, %z, %z, sizes = [2, 2] : (tensor<4x?xf32>, tensor<i64>, tensor<i64>) -> tensor<2x2xf32>\n"
      "  return %g, %s : tensor<?xf32>, tensor<2x2xf32>\n"
      "}\n";
  float *x = dy_fill(20);
  int64_t idx[1] = {2};
  tu_in in[2] = {{TU_SHAPE(XRT_F32, 4, 5), x}, {TU_SHAPE(XRT_S64, 1), idx}};
  tu_out o;
  DY_RUN_OK(C(state), p, 2, in, &o);
  tu_assert_shape(&o, 0, TU_SHAPE(XRT_F32, 5));
  dy_assert_f32(&o, 0, x + 10, 5);
  float s[4] = {x[6], x[7], x[11], x[12]};
  dy_assert_f32(&o, 1, s, 4);
  tu_out_free(&o);
  free(x);
}

/* dynamic_conv with padding [[1, 1]] computed at compile time: a 1-d
 * convolution of [1, b, 1] by a 3-tap kernel of ones is a moving sum. */
static void test_dynamic_conv(void **state) {
  static const char *p =
      "func.func @main(%x: tensor<1x?x1xf32>, %k: tensor<3x1x1xf32>) -> tensor<1x?x1xf32> {\n"
      "  %c = stablehlo.constant dense<1> : tensor<i32>\n"
      "  %a = stablehlo.reshape %c : (tensor<i32>) -> tensor<1xi32>\n"
      "  %p2 = stablehlo.concatenate %a, %a, dim = 0 : (tensor<1xi32>, tensor<1xi32>) -> tensor<2xi32>\n"
      "  %pad = stablehlo.reshape %p2 : (tensor<2xi32>) -> tensor<1x2xi32>\n"
      "  %r = \"stablehlo.dynamic_conv\"(%x, %k, %pad) {batch_group_count = 1 : i64, dimension_numbers = #stablehlo.conv<[b, 0, f]x[0, i, o]->[b, 0, f]>, feature_group_count = 1 : i64} : (tensor<1x?x1xf32>, tensor<3x1x1xf32>, tensor<1x2xi32>) -> tensor<1x?x1xf32>\n"
      "  return %r : tensor<1x?x1xf32>\n"
      "}\n";
  float x[5] = {1, 2, 3, 4, 5}, k[3] = {1, 1, 1};
  float want[5] = {3, 6, 9, 12, 9};
  tu_in in[2] = {{TU_SHAPE(XRT_F32, 1, 5, 1), x}, {TU_SHAPE(XRT_F32, 3, 1, 1), k}};
  tu_out o;
  DY_RUN_OK(C(state), p, 2, in, &o);
  tu_assert_shape(&o, 0, TU_SHAPE(XRT_F32, 1, 5, 1));
  dy_assert_f32(&o, 0, want, 5);
  tu_out_free(&o);
}

/* while carries a `?` value; reduce over a `?` dimension; if refines. */
static void test_while_reduce_if(void **state) {
  static const char *p =
      "func.func @main(%x: tensor<?xf32>) -> (tensor<f32>, tensor<?xf32>) {\n"
      "  %z = stablehlo.constant dense<0> : tensor<i32>\n"
      "  %r:2 = stablehlo.while(%i = %z, %v = %x) : tensor<i32>, tensor<?xf32>\n"
      "   cond {\n"
      "    %n = stablehlo.constant dense<3> : tensor<i32>\n"
      "    %c = stablehlo.compare LT, %i, %n : (tensor<i32>, tensor<i32>) -> tensor<i1>\n"
      "    stablehlo.return %c : tensor<i1>\n"
      "  } do {\n"
      "    %one = stablehlo.constant dense<1> : tensor<i32>\n"
      "    %j = stablehlo.add %i, %one : tensor<i32>\n"
      "    %w = stablehlo.add %v, %v : tensor<?xf32>\n"
      "    stablehlo.return %j, %w : tensor<i32>, tensor<?xf32>\n"
      "  }\n"
      "  %f0 = stablehlo.constant dense<0.0> : tensor<f32>\n"
      "  %s = stablehlo.reduce(%r#1 init: %f0) applies stablehlo.add across dimensions = [0] : (tensor<?xf32>, tensor<f32>) -> tensor<f32>\n"
      "  %t = stablehlo.constant dense<true> : tensor<i1>\n"
      "  %y = \"stablehlo.if\"(%t) ({\n"
      "    stablehlo.return %r#1 : tensor<?xf32>\n"
      "  }, {\n"
      "    stablehlo.return %x : tensor<?xf32>\n"
      "  }) : (tensor<i1>) -> tensor<?xf32>\n"
      "  return %s, %y : tensor<f32>, tensor<?xf32>\n"
      "}\n";
  float x[4] = {1, 2, 3, 4}, sum = 80, y[4] = {8, 16, 24, 32};
  tu_in in[1] = {{TU_SHAPE(XRT_F32, 4), x}};
  tu_out o;
  DY_RUN_OK(C(state), p, 1, in, &o);
  dy_assert_f32(&o, 0, &sum, 1);
  dy_assert_f32(&o, 1, y, 4);
  tu_out_free(&o);
}

/* One private function called with two shapes: two instances. */
static void test_call_specialisation(void **state) {
  static const char *p =
      "func.func @main(%x: tensor<?xf32>, %y: tensor<?xf32>) -> (tensor<?xf32>, tensor<?xf32>) {\n"
      "  %a = func.call @twice(%x) : (tensor<?xf32>) -> tensor<?xf32>\n"
      "  %b = func.call @twice(%y) : (tensor<?xf32>) -> tensor<?xf32>\n"
      "  %c = func.call @twice(%a) : (tensor<?xf32>) -> tensor<?xf32>\n"
      "  return %c, %b : tensor<?xf32>, tensor<?xf32>\n"
      "}\n"
      "func.func private @twice(%v: tensor<?xf32>) -> tensor<?xf32> {\n"
      "  %r = stablehlo.add %v, %v : tensor<?xf32>\n"
      "  return %r : tensor<?xf32>\n"
      "}\n";
  float x[2] = {1, 2}, y[3] = {3, 4, 5}, wx[2] = {4, 8}, wy[3] = {6, 8, 10};
  tu_in in[2] = {{TU_SHAPE(XRT_F32, 2), x}, {TU_SHAPE(XRT_F32, 3), y}};
  tu_out o;
  DY_RUN_OK(C(state), p, 2, in, &o);
  dy_assert_f32(&o, 0, wx, 2);
  dy_assert_f32(&o, 1, wy, 3);
  tu_out_free(&o);
}

/* JAX's shape assertion: b >= 2 here, the message formatted with {0}. */
static const char *k_assert =
    "func.func @main(%x: tensor<?xf32>) -> tensor<?xf32> {\n"
    "  %d = stablehlo.get_dimension_size %x, dim = 0 : (tensor<?xf32>) -> tensor<i32>\n"
    "  %two = stablehlo.constant dense<2> : tensor<i32>\n"
    "  %ok = stablehlo.compare GE, %d, %two, SIGNED : (tensor<i32>, tensor<i32>) -> tensor<i1>\n"
    "  stablehlo.custom_call @shape_assertion(%ok, %d) {api_version = 2 : i32, "
    "error_message = \"Input shapes do not match the polymorphic shapes specification. "
    "Expected value >= 2 for dimension variable 'b'. Using the following polymorphic "
    "shapes specifications: args[0].shape = (b,). Obtained dimension variables: 'b' = {0} "
    "from specification 'b' for dimension args[0].shape[0] (= {0}), .\", "
    "has_side_effect = true} : (tensor<i1>, tensor<i32>) -> ()\n"
    "  %r = stablehlo.negate %x : tensor<?xf32>\n"
    "  return %r : tensor<?xf32>\n"
    "}\n";

static void test_shape_assertion(void **state) {
  float x[3] = {1, 2, 3}, want[3] = {-1, -2, -3};
  tu_in in[1] = {{TU_SHAPE(XRT_F32, 3), x}};
  tu_out o;
  DY_RUN_OK(C(state), k_assert, 1, in, &o);
  dy_assert_f32(&o, 0, want, 3);
  tu_out_free(&o);
  in[0].shape = TU_SHAPE(XRT_F32, 1);
  assert_int_equal(dy_run(C(state), k_assert, 1, in, &o), XRT_INVALID_ARGUMENT);
  assert_string_equal(tu_msg,
      "dyn.mlir:5:3: Input shapes do not match the polymorphic shapes "
      "specification. Expected value >= 2 for dimension variable 'b'. Using "
      "the following polymorphic shapes specifications: args[0].shape = (b,). "
      "Obtained dimension variables: 'b' = 1 from specification 'b' for "
      "dimension args[0].shape[0] (= 1), .");
}

/* Shapes that disagree once refined, given shapes that do not fit, and no
 * shapes at all. */
static void test_errors(void **state) {
  static const char *p =
      "func.func @main(%x: tensor<?x4xf32>, %y: tensor<?x4xf32>) -> tensor<?x4xf32> {\n"
      "  %d = stablehlo.get_dimension_size %x, dim = 0 : (tensor<?x4xf32>) -> tensor<i32>\n"
      "  %d1 = stablehlo.reshape %d : (tensor<i32>) -> tensor<1xi32>\n"
      "  %c = stablehlo.constant dense<4> : tensor<1xi32>\n"
      "  %s = stablehlo.concatenate %d1, %c, dim = 0 : (tensor<1xi32>, tensor<1xi32>) -> tensor<2xi32>\n"
      "  %b = stablehlo.dynamic_broadcast_in_dim %y, %s, dims = [0, 1] : (tensor<?x4xf32>, tensor<2xi32>) -> tensor<?x4xf32>\n"
      "  %r = stablehlo.add %x, %b : tensor<?x4xf32>\n"
      "  return %r : tensor<?x4xf32>\n"
      "}\n";
  float v[12] = {0};
  tu_out o;
  tu_in ok[2] = {{TU_SHAPE(XRT_F32, 3, 4), v}, {TU_SHAPE(XRT_F32, 1, 4), v}};
  DY_RUN_OK(C(state), p, 2, ok, &o); /* [1, 4] broadcasts to [3, 4] */
  tu_out_free(&o);
  tu_in bad[2] = {{TU_SHAPE(XRT_F32, 3, 4), v}, {TU_SHAPE(XRT_F32, 2, 4), v}};
  assert_int_equal(dy_run(C(state), p, 2, bad, &o), XRT_INVALID_ARGUMENT);
  TU_ASSERT_PREFIX(tu_msg, "dyn.mlir:6:");
  TU_ASSERT_CONTAINS(tu_msg, "broadcast");
  tu_in rank[2] = {{TU_SHAPE(XRT_F32, 3, 4), v}, {TU_SHAPE(XRT_F32, 12), v}};
  assert_int_equal(dy_run(C(state), p, 2, rank, &o), XRT_INVALID_ARGUMENT);
  TU_ASSERT_CONTAINS(tu_msg, "argument 1 is given as tensor<12xf32>, which "
                             "does not fit its type tensor<?x4xf32>");
  tu_in dim[2] = {{TU_SHAPE(XRT_F32, 3, 5), v}, {TU_SHAPE(XRT_F32, 3, 4), v}};
  assert_int_equal(dy_run(C(state), p, 2, dim, &o), XRT_INVALID_ARGUMENT);
  TU_ASSERT_CONTAINS(tu_msg, "argument 0 is given as tensor<3x5xf32>");
  tu_in type[2] = {{TU_SHAPE(XRT_F64, 3, 4), v}, {TU_SHAPE(XRT_F32, 3, 4), v}};
  assert_int_equal(dy_run(C(state), p, 2, type, &o), XRT_INVALID_ARGUMENT);
  TU_ASSERT_CONTAINS(tu_msg, "argument 0 is given as tensor<3x4xf64>");
  xrt_executable *exe = NULL;
  assert_int_equal(xrt_compile(C(state), p, strlen(p), NULL, &exe),
                   XRT_INVALID_ARGUMENT);
  TU_ASSERT_CONTAINS(xrt_last_error(), "argument 0 has dynamic dimensions");
  /* a static program checks given shapes against its own */
  static const char *st =
      "func.func @main(%x: tensor<2xf32>) -> tensor<2xf32> {\n"
      "  return %x : tensor<2xf32>\n"
      "}\n";
  tu_in two[1] = {{TU_SHAPE(XRT_F32, 3), v}};
  assert_int_equal(dy_run(C(state), st, 1, two, &o), XRT_INVALID_ARGUMENT);
  two[0].shape = TU_SHAPE(XRT_F32, 2);
  DY_RUN_OK(C(state), st, 1, two, &o);
  tu_out_free(&o);
}

/* A parsed shape-polymorphic program keeps `?` (XRT_DIM_DYNAMIC); two
 * compiles of one text for other shapes get other keys and executables. */
static void test_parse_and_cache_keys(void **state) {
  xrt_program *prog = NULL;
  assert_int_equal(xrt_program_parse(k_wrapped, strlen(k_wrapped), NULL, &prog),
                   XRT_OK);
  const xrt_ir_func *f = &xrt_program_module(prog)->funcs[0];
  const xrt_ir_type *t = &f->value_types[f->body.args[0]];
  assert_int_equal(t->shape.dims[0], XRT_DIM_DYNAMIC);
  char buf[64];
  xrt_shape_format(&t->shape, buf, sizeof buf);
  assert_string_equal(buf, "tensor<?x4xf32>");
  xrt_shape s2 = TU_SHAPE(XRT_F32, 2, 4), s5 = TU_SHAPE(XRT_F32, 5, 4);
  xrt_compile_options o;
  xrt_compile_options_init(&o);
  assert_int_equal(o.num_arg_shapes, 0);
  assert_null(o.arg_shapes);
  char k0[XRT_CACHE_KEY_CHARS + 1], k2[XRT_CACHE_KEY_CHARS + 1],
      k2b[XRT_CACHE_KEY_CHARS + 1], k5[XRT_CACHE_KEY_CHARS + 1];
  size_t len = strlen(k_wrapped);
  assert_int_equal(xrt_compile_cache_key(C(state), k_wrapped, len, &o, k0), XRT_OK);
  o.num_arg_shapes = 1;
  o.arg_shapes = &s2;
  assert_int_equal(xrt_compile_cache_key(C(state), k_wrapped, len, &o, k2), XRT_OK);
  assert_int_equal(xrt_compile_cache_key(C(state), k_wrapped, len, &o, k2b), XRT_OK);
  o.arg_shapes = &s5;
  assert_int_equal(xrt_compile_cache_key(C(state), k_wrapped, len, &o, k5), XRT_OK);
  assert_string_equal(k2, k2b);
  assert_string_not_equal(k0, k2);
  assert_string_not_equal(k2, k5);
  xrt_executable *e2 = NULL, *e5 = NULL;
  xrt_shape got;
  o.arg_shapes = &s2;
  assert_int_equal(xrt_compile_program(C(state), prog, &o, &e2), XRT_OK);
  o.arg_shapes = &s5;
  assert_int_equal(xrt_compile_program(C(state), prog, &o, &e5), XRT_OK);
  assert_int_equal(xrt_executable_output_shape(e2, 0, &got), XRT_OK);
  assert_int_equal(got.dims[0], 2);
  assert_int_equal(xrt_executable_output_shape(e5, 0, &got), XRT_OK);
  assert_int_equal(got.dims[0], 5);
  xrt_executable_release(e2);
  xrt_executable_release(e5);
  xrt_program_release(prog); /* the executables keep what they need */
}

/* ---- JAX's exports (../shared/stablehlo/dynamic) ---- */

static char *dy_read(const char *name, size_t *len) {
  char path[1024];
  snprintf(path, sizeof path, "%s/%s", XRT_TEST_DYNAMIC_DIR, name);
  FILE *f = fopen(path, "rb");
  if (!f) return NULL;
  fseek(f, 0, SEEK_END);
  long n = ftell(f);
  fseek(f, 0, SEEK_SET);
  char *t = malloc((size_t)n + 1);
  *len = fread(t, 1, (size_t)n, f);
  t[*len] = 0;
  fclose(f);
  return t;
}

/* One export with its inputs (b = 3 unless the program says otherwise)
 * and a reference computed here from the same inputs. */
typedef struct dy_case {
  const char *file;
  int nin;
  xrt_shape shapes[4];
  int64_t nout;
  void (*ref)(const float *const *in, float *out);
} dy_case;

#define B 3
static void r_add(const float *const *in, float *o) {
  for (int k = 0; k < 2; k++)
    for (int i = 0; i < B * 4; i++) o[k * B * 4 + i] = in[1][i] + in[2][k * B * 4 + i];
}
static void r_clamp(const float *const *in, float *o) {
  for (int i = 0; i < B * 20; i++) {
    float v = in[2][i] < in[1][i] ? in[1][i] : in[2][i];
    o[i] = v > in[3][i] ? in[3][i] : v;
  }
}
static void r_concatenate(const float *const *in, float *o) { /* 3x2x5 twice */
  for (int i = 0; i < 60; i++) o[i] = in[2][i % 30];
}
static void r_dot_general(const float *const *in, float *o) {
  for (int b = 0; b < B; b++)
    for (int i = 0; i < 4; i++) {
      float s = 0;
      for (int k = 0; k < 4; k++) s += in[1][b * 16 + i * 4 + k] * in[2][b * 4 + k];
      o[b * 4 + i] = s;
    }
}
static void r_rowsum5(const float *const *in, float *o) {
  for (int b = 0; b < B; b++) {
    float s = 0;
    for (int k = 0; k < 5; k++) s += in[1][b * 5 + k];
    o[b] = s;
  }
}
static void r_rowsum4(const float *const *in, float *o) {
  for (int b = 0; b < B; b++)
    o[b] = in[1][b * 4] + in[1][b * 4 + 1] + in[1][b * 4 + 2] + in[1][b * 4 + 3];
}
static void r_row1(const float *const *in, float *o) {
  for (int j = 0; j < 4; j++) o[j] = in[1][4 + j];
}
static void r_row_last(const float *const *in, float *o) {
  for (int j = 0; j < 4; j++) o[j] = in[1][(B - 1) * 4 + j];
}
static void r_full(const float *const *in, float *o) {
  for (int i = 0; i < B * 2; i++) o[i] = 3 + in[1][i / 2];
}
static void r_tile(const float *const *in, float *o) {
  for (int b = 0; b < B; b++)
    for (int j = 0; j < 6; j++) o[b * 6 + j] = in[1][b * 3 + j % 3];
}
static void r_roll(const float *const *in, float *o) { /* by 2, flattened */
  for (int i = 0; i < B * 4; i++) o[i] = in[1][(i - 2 + B * 4) % (B * 4)];
}
static void r_stride2(const float *const *in, float *o) { /* rows 0, 2 */
  for (int r = 0, k = 0; r < B; r += 2)
    for (int j = 0; j < 4; j++) o[k++] = in[1][r * 4 + j];
}
static void r_ones(const float *const *in, float *o) {
  for (int i = 0; i < B * 8; i++) o[i] = in[1][i] + 1;
}
static void r_iota(const float *const *in, float *o) {
  for (int i = 0; i < B; i++) o[i] = in[1][i] + (float)i;
}
static void r_copy(const float *const *in, float *o) {
  for (int i = 0; i < B * 4; i++) o[i] = in[1][i];
}
static void r_matmul(const float *const *in, float *o) {
  for (int b = 0; b < B; b++)
    for (int i = 0; i < 8; i++)
      for (int j = 0; j < 5; j++) {
        float s = 0;
        for (int k = 0; k < 4; k++)
          s += in[1][b * 32 + i * 4 + k] * in[2][b * 20 + k * 5 + j];
        o[b * 40 + i * 5 + j] = s;
      }
}
static void r_pad(const float *const *in, float *o) { /* lo 1, hi 1, interior 1 */
  for (int r = 0; r < B * 2; r++)
    for (int j = 0; j < 11; j++)
      o[r * 11 + j] = (j % 2) ? in[1][r * 5 + j / 2] : in[2][0];
}
static void r_bcast0(const float *const *in, float *o) { /* [b,1,6] -> [b,4,5,6] */
  for (int b = 0; b < B; b++)
    for (int i = 0; i < 120; i++) o[b * 120 + i] = in[1][b * 6 + i % 6];
}
static void r_vmap_add(const float *const *in, float *o) {
  for (int i = 0; i < B * 400; i++) o[i] = in[1][i] + in[2][i];
}
static void r_squeeze(const float *const *in, float *o) {
  for (int i = 0; i < B; i++) o[i] = in[1][i];
}
static void r_arange(const float *const *in, float *o) {
  for (int i = 0; i < 2 * B; i++) o[i] = (float)i + in[1][0];
}
static void r_dynamic_slice(const float *const *in, float *o) { /* idx [0, 1] */
  for (int b = 0; b < B; b++)
    for (int j = 0; j < 2; j++) o[b * 2 + j] = in[1][b * 4 + 1 + j];
}

#define F32S(...) TU_SHAPE(XRT_F32, __VA_ARGS__)
#define DIMARG TU_SCALAR(XRT_S64)


/* Inputs: the dimension arguments hold b (3; 2 for the second of
 * concatenate's), arrays dy_val, dynamic_slice's index [0, 1]. */
static void dy_check_case(void **state, const dy_case *k) {
  size_t len;
  char *text = dy_read(k->file, &len);
  if (!text) {
    print_message("skipped %s: %s not found\n", k->file, XRT_TEST_DYNAMIC_DIR);
    return;
  }
  tu_in in[4];
  float *data[4] = {0};
  int64_t dims[4] = {B, 2, B, B};
  for (int i = 0; i < k->nin; i++) {
    in[i].shape = k->shapes[i];
    if (k->shapes[i].dtype == XRT_S64) {
      in[i].data = &dims[i];
    } else {
      data[i] = dy_fill(xrt_shape_numel(&k->shapes[i]));
      in[i].data = data[i];
    }
  }
  tu_out o;
  xrt_status s = dy_run(C(state), text, k->nin, in, &o);
  if (s) fail_msg("%s: %s", k->file, tu_msg);
  float *want = calloc((size_t)k->nout, sizeof *want);
  k->ref((const float *const *)data, want);
  dy_assert_f32(&o, 0, want, k->nout);
  tu_out_free(&o);
  free(want);
  for (int i = 0; i < k->nin; i++) free(data[i]);
  free(text);
}

static void test_exports_values(void **state) {
  const dy_case cases[] = { /* shapes are not constant expressions */
    {"add_dynamic.mlir", 3, {DIMARG, F32S(B, 4), F32S(2, B, 4)}, 2 * B * 4, r_add},
    {"clamp_dynamic.mlir", 4, {DIMARG, F32S(B, 4, 5), F32S(B, 4, 5), F32S(B, 4, 5)}, B * 20, r_clamp},
    {"concatenate_dynamic.mlir", 3, {DIMARG, DIMARG, F32S(3, 2, 5)}, 60, r_concatenate},
    {"dot_general_dynamic.mlir", 3, {DIMARG, F32S(B, 4, 4), F32S(B, 4)}, B * 4, r_dot_general},
    {"reduce_sum_dynamic.mlir", 2, {DIMARG, F32S(B, 5)}, B, r_rowsum5},
    {"einsum_0_dynamic.mlir", 2, {DIMARG, F32S(B, 4)}, B, r_rowsum4},
    {"getitem_op_poly_idx_const_dynamic.mlir", 2, {DIMARG, F32S(B, 4)}, 4, r_row1},
    {"index_in_dim_idx_last_dynamic.mlir", 2, {DIMARG, F32S(B, 4)}, 4, r_row_last},
    {"full_dynamic.mlir", 2, {DIMARG, F32S(B, 1)}, B * 2, r_full},
    {"tile_0_dynamic.mlir", 2, {DIMARG, F32S(B, 3)}, B * 6, r_tile},
    {"roll_dynamic.mlir", 2, {DIMARG, F32S(B, 4)}, B * 4, r_roll},
    {"slice_in_dim_stride_2_odd_dynamic.mlir", 2, {DIMARG, F32S(B, 4)}, 8, r_stride2},
    {"ones_dynamic.mlir", 2, {DIMARG, F32S(B, 2, 4)}, B * 8, r_ones},
    {"iota_dynamic.mlir", 2, {DIMARG, F32S(B)}, B, r_iota},
    {"dynamic_update_slice.mlir", 2, {DIMARG, F32S(B, 4)}, B * 4, r_copy},
    {"matmul_0_dynamic.mlir", 3, {DIMARG, F32S(B, 8, 4), F32S(B, 4, 5)}, B * 40, r_matmul},
    {"pad_dynamic.mlir", 3, {DIMARG, F32S(B, 2, 5), TU_SCALAR(XRT_F32)}, B * 22, r_pad},
    {"broadcast_in_dim_0_dynamic.mlir", 2, {DIMARG, F32S(B, 1, 6)}, B * 120, r_bcast0},
    {"vmap_add_lhs_float32_20_20_rhs_float32_20_20_dynamic.mlir", 3,
     {DIMARG, F32S(B, 20, 20), F32S(B, 20, 20)}, B * 400, r_vmap_add},
    {"squeeze_dynamic.mlir", 2, {DIMARG, F32S(B, 1, 1)}, B, r_squeeze},
    {"arange_dynamic.mlir", 2, {DIMARG, F32S(B)}, 2 * B, r_arange},
    {"reduce_prod_dynamic.mlir", 2, {DIMARG, F32S(B, 5)}, B, r_rowsum5},
};
  for (size_t i = 0; i < TU_COUNT(cases); i++) dy_check_case(state, &cases[i]);
  /* dynamic_slice.mlir: a start known only at run time ([0, 1]) */
  size_t len;
  char *text = dy_read("dynamic_slice.mlir", &len);
  if (!text) return;
  float *x = dy_fill(B * 4), want[B * 2];
  int64_t b = B;
  int32_t idx[2] = {0, 1};
  tu_in in[3] = {{DIMARG, &b}, {F32S(B, 4), x}, {TU_SHAPE(XRT_S32, 2), idx}};
  tu_out o;
  DY_RUN_OK(C(state), text, 3, in, &o);
  const float *ins[2] = {NULL, x};
  r_dynamic_slice(ins, want);
  dy_assert_f32(&o, 0, want, B * 2);
  tu_out_free(&o);
  free(x);
  free(text);
}

/* ---- the sweep ---- */

/* The entry's argument types with every `?` given size v. */
static int dy_shapes_of(const xrt_program *p, int64_t v, xrt_shape *out,
                        int cap) {
  const xrt_ir_module *m = xrt_program_module(p);
  const xrt_ir_func *f = NULL;
  for (int32_t i = 0; i < m->num_funcs; i++)
    if (strcmp(m->funcs[i].name, "main") == 0) f = &m->funcs[i];
  if (!f || f->body.num_args > cap) return -1;
  for (int32_t a = 0; a < f->body.num_args; a++) {
    out[a] = f->value_types[f->body.args[a]].shape;
    for (int32_t d = 0; d < out[a].rank; d++)
      if (out[a].dims[d] == XRT_DIM_DYNAMIC) out[a].dims[d] = v;
  }
  return f->body.num_args;
}

/* Compiles one export for every `?` = v (JAX's exports bind one symbol
 * per dimension variable; these need one size each, and b = 3 works for
 * every one that compiles: see README). */
static bool dy_compile_file(xrt_client *c, const char *name, int64_t v) {
  size_t len;
  char *text = dy_read(name, &len);
  xrt_program *p = NULL;
  xrt_compile_options o;
  xrt_compile_options_init(&o);
  o.filename = name;
  xrt_shape shapes[64];
  bool ok = text && !xrt_program_parse(text, len, &o, &p);
  int n = ok ? dy_shapes_of(p, v, shapes, 64) : -1;
  o.num_arg_shapes = n;
  o.arg_shapes = shapes;
  o.cache_disable = 1;
  xrt_executable *e = NULL;
  ok = n >= 0 && !xrt_compile_program(c, p, &o, &e);
  if (!ok) print_message("  %s: %s\n", name, xrt_last_error());
  xrt_executable_release(e);
  xrt_program_release(p);
  free(text);
  return ok;
}

static int dy_required(void) {
  FILE *f = fopen(XRT_TEST_DYNAMIC_REQUIRED, "r");
  char line[256];
  int n = -1;
  while (f && fgets(line, sizeof line, f))
    if (line[0] != '#' && sscanf(line, "%d", &n) == 1) break;
  if (f) fclose(f);
  return n;
}

static void test_exports_sweep(void **state) {
  DIR *d = opendir(XRT_TEST_DYNAMIC_DIR);
  if (!d) {
    print_message("skipped: %s not found\n", XRT_TEST_DYNAMIC_DIR);
    skip();
  }
  int total = 0, ok = 0;
  struct dirent *e;
  while ((e = readdir(d))) {
    size_t n = strlen(e->d_name);
    if (n < 5 || strcmp(e->d_name + n - 5, ".mlir") != 0) continue;
    total++;
    ok += dy_compile_file(C(state), e->d_name, B);
  }
  closedir(d);
  int want = dy_required();
  print_message("dynamic: %d/%d exports compile (required: %d)\n", ok, total,
                want);
  assert_true(want > 0);
  assert_true(ok >= want);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_get_dimension_size_broadcast_iota),
      cmocka_unit_test(test_dynamic_reshape),
      cmocka_unit_test(test_dynamic_pad),
      cmocka_unit_test(test_real_dynamic_slice),
      cmocka_unit_test(test_dynamic_gather_and_slice),
      cmocka_unit_test(test_dynamic_conv),
      cmocka_unit_test(test_while_reduce_if),
      cmocka_unit_test(test_call_specialisation),
      cmocka_unit_test(test_shape_assertion),
      cmocka_unit_test(test_errors),
      cmocka_unit_test(test_parse_and_cache_keys),
      cmocka_unit_test(test_exports_values),
      cmocka_unit_test(test_exports_sweep),
  };
  return cmocka_run_group_tests(tests, tu_setup_client, tu_teardown_client);
}
