/* test_ops_index.c - gather, scatter, dynamic_slice, dynamic_update_slice,
 * dynamic_gather, reduce_window, select_and_scatter and the dynamic_* shape
 * ops on hand-computed values (clamped and skipped out-of-bound indices,
 * empty and rank-0 tensors, several operands, padding and dilations), the
 * run-time shape checks of the dynamic ops, and the verifier's located
 * errors for each op's constraints. */
#include "test_util.h"

#define C(state) ((xrt_client *)*(state))
#define IN(dt, data, ...) ((tu_in){TU_SHAPE((dt), __VA_ARGS__), (data)})
#define IN0(dt, data) ((tu_in){TU_SCALAR(dt), (data)})

/* ---- gather ---- */

/* Rows of a 3x2 matrix; index_vector_dim == rank(indices) means a trailing
 * index vector of size 1; starts clamp into [0, 3 - 1]. */
static void test_gather_rows_clamped(void **state) {
  const char *p =
      "func.func @main(%a: tensor<3x2xi32>, %i: tensor<4xi32>) -> tensor<4x2xi32> {\n"
      "  %0 = \"stablehlo.gather\"(%a, %i) {dimension_numbers = #stablehlo.gather<\n"
      "    offset_dims = [1], collapsed_slice_dims = [0], start_index_map = [0],\n"
      "    index_vector_dim = 1>, slice_sizes = array<i64: 1, 2>,\n"
      "    indices_are_sorted = false} : (tensor<3x2xi32>, tensor<4xi32>) -> tensor<4x2xi32>\n"
      "  func.return %0 : tensor<4x2xi32>\n}\n";
  const int32_t a[] = {0, 1, 2, 3, 4, 5}, idx[] = {2, -5, 7, 1};
  tu_in in[2] = {IN(XRT_S32, a, 3, 2), IN(XRT_S32, idx, 4)};
  tu_out o;
  TU_RUN_OK(C(state), p, 2, in, &o);
  TU_ASSERT_OUT(&o, 0, int32_t, 4, 5, 0, 1, 4, 5, 2, 3);
  tu_out_free(&o);
}

/* A window of 3 in a dimension of 5: a start of 3 clamps to 2, -2 to 0;
 * i64 indices, f32 data. */
static void test_gather_window_clamped(void **state) {
  const char *p =
      "func.func @main(%a: tensor<5xf32>, %i: tensor<2x1xi64>) -> tensor<2x3xf32> {\n"
      "  %0 = \"stablehlo.gather\"(%a, %i) {dimension_numbers = #stablehlo.gather<\n"
      "    offset_dims = [1], start_index_map = [0], index_vector_dim = 1>,\n"
      "    slice_sizes = array<i64: 3>} : (tensor<5xf32>, tensor<2x1xi64>) -> tensor<2x3xf32>\n"
      "  func.return %0 : tensor<2x3xf32>\n}\n";
  const float a[] = {10, 11, 12, 13, 14};
  const int64_t idx[] = {3, -2};
  tu_in in[2] = {IN(XRT_F32, a, 5), IN(XRT_S64, idx, 2, 1)};
  tu_out o;
  TU_RUN_OK(C(state), p, 2, in, &o);
  TU_ASSERT_OUT(&o, 0, float, 12, 13, 14, 10, 11, 12);
  tu_out_free(&o);
}

/* operand_batching_dims pair operand dim 0 with indices dim 0; ui8
 * indices, i16 data (2-byte moves). */
static void test_gather_batching(void **state) {
  const char *p =
      "func.func @main(%a: tensor<2x3xi16>, %i: tensor<2xui8>) -> tensor<2xi16> {\n"
      "  %0 = \"stablehlo.gather\"(%a, %i) {dimension_numbers = #stablehlo.gather<\n"
      "    collapsed_slice_dims = [1], operand_batching_dims = [0],\n"
      "    start_indices_batching_dims = [0], start_index_map = [1],\n"
      "    index_vector_dim = 1>, slice_sizes = array<i64: 1, 1>}\n"
      "    : (tensor<2x3xi16>, tensor<2xui8>) -> tensor<2xi16>\n"
      "  func.return %0 : tensor<2xi16>\n}\n";
  const int16_t a[] = {1, 2, 3, 4, 5, 6};
  const uint8_t idx[] = {2, 1};
  tu_in in[2] = {IN(XRT_S16, a, 2, 3), IN(XRT_U8, idx, 2)};
  tu_out o;
  TU_RUN_OK(C(state), p, 2, in, &o);
  TU_ASSERT_OUT(&o, 0, int16_t, 3, 5);
  tu_out_free(&o);
}

/* Offset dims before the batch dim; complex<f64> (16-byte) elements and
 * a 2-d index vector in dimension 0 of the indices. */
static void test_gather_c128_offset_first(void **state) {
  const char *p =
      "func.func @main(%a: tensor<3x3xcomplex<f64>>, %i: tensor<2x2xi32>) -> tensor<2x2xcomplex<f64>> {\n"
      "  %0 = \"stablehlo.gather\"(%a, %i) {dimension_numbers = #stablehlo.gather<\n"
      "    offset_dims = [0], collapsed_slice_dims = [1], start_index_map = [0, 1],\n"
      "    index_vector_dim = 0>, slice_sizes = array<i64: 2, 1>}\n"
      "    : (tensor<3x3xcomplex<f64>>, tensor<2x2xi32>) -> tensor<2x2xcomplex<f64>>\n"
      "  func.return %0 : tensor<2x2xcomplex<f64>>\n}\n";
  double a[18];
  for (int k = 0; k < 9; k++) a[2 * k] = k, a[2 * k + 1] = -k;
  /* index vectors (columns): (0, 2) and (9, 1) -> row start clamps to 1 */
  const int32_t idx[] = {0, 9, 2, 1};
  tu_in in[2] = {IN(XRT_C128, a, 3, 3), IN(XRT_S32, idx, 2, 2)};
  tu_out o;
  TU_RUN_OK(C(state), p, 2, in, &o);
  /* result[w][b] = a[start_b + w][col_b] */
  TU_ASSERT_OUT(&o, 0, double, 2, -2, 4, -4, 5, -5, 7, -7);
  tu_out_free(&o);
}

static void test_gather_empty_and_rank0(void **state) {
  const char *p =
      "func.func @main(%a: tensor<3x2xi32>, %i: tensor<0x1xi32>, %s: tensor<f32>, %z: tensor<0xi32>)\n"
      "    -> (tensor<0x2xi32>, tensor<f32>) {\n"
      "  %0 = \"stablehlo.gather\"(%a, %i) {dimension_numbers = #stablehlo.gather<\n"
      "    offset_dims = [1], collapsed_slice_dims = [0], start_index_map = [0],\n"
      "    index_vector_dim = 1>, slice_sizes = array<i64: 1, 2>}\n"
      "    : (tensor<3x2xi32>, tensor<0x1xi32>) -> tensor<0x2xi32>\n"
      "  %1 = \"stablehlo.gather\"(%s, %z) {dimension_numbers = #stablehlo.gather<\n"
      "    index_vector_dim = 0>, slice_sizes = array<i64>}\n"
      "    : (tensor<f32>, tensor<0xi32>) -> tensor<f32>\n"
      "  func.return %0, %1 : tensor<0x2xi32>, tensor<f32>\n}\n";
  const int32_t a[] = {0, 1, 2, 3, 4, 5}, none[1] = {0};
  const float s = 2.5f;
  tu_in in[4] = {IN(XRT_S32, a, 3, 2), IN(XRT_S32, none, 0, 1),
                 IN0(XRT_F32, &s), IN(XRT_S32, none, 0)};
  tu_out o;
  TU_RUN_OK(C(state), p, 4, in, &o);
  assert_int_equal(o.bytes[0], 0);
  TU_ASSERT_OUT(&o, 1, float, 2.5f);
  tu_out_free(&o);
}

/* ---- dynamic_gather ---- */

static const char *k_dyn_gather =
    "func.func @main(%a: tensor<3x2xi32>, %i: tensor<2xi32>, %s: tensor<2xi64>) -> tensor<2x2xi32> {\n"
    "  %0 = \"stablehlo.dynamic_gather\"(%a, %i, %s) {dimension_numbers = #stablehlo.gather<\n"
    "    offset_dims = [1], collapsed_slice_dims = [0], start_index_map = [0],\n"
    "    index_vector_dim = 1>} : (tensor<3x2xi32>, tensor<2xi32>, tensor<2xi64>) -> tensor<2x2xi32>\n"
    "  func.return %0 : tensor<2x2xi32>\n}\n";

static void test_dynamic_gather(void **state) {
  const int32_t a[] = {0, 1, 2, 3, 4, 5}, idx[] = {1, 3};
  const int64_t good[] = {1, 2}, bad[] = {1, 1};
  tu_in in[3] = {IN(XRT_S32, a, 3, 2), IN(XRT_S32, idx, 2),
                 IN(XRT_S64, good, 2)};
  tu_out o;
  TU_RUN_OK(C(state), k_dyn_gather, 3, in, &o);
  TU_ASSERT_OUT(&o, 0, int32_t, 2, 3, 4, 5);
  tu_out_free(&o);
  in[2].data = bad;
  assert_int_equal(tu_run(C(state), k_dyn_gather, 3, in, &o),
                   XRT_INVALID_ARGUMENT);
  TU_ASSERT_PREFIX(tu_msg, "<input>:2:");
  TU_ASSERT_CONTAINS(tu_msg, "slice_sizes[1] is 1");
}

/* ---- dynamic_slice / dynamic_update_slice ---- */

static void test_dynamic_slice_clamped(void **state) {
  const char *p =
      "func.func @main(%a: tensor<4x3xi32>, %r: tensor<i64>, %c: tensor<i64>) -> tensor<2x2xi32> {\n"
      "  %0 = \"stablehlo.dynamic_slice\"(%a, %r, %c) {slice_sizes = array<i64: 2, 2>}\n"
      "    : (tensor<4x3xi32>, tensor<i64>, tensor<i64>) -> tensor<2x2xi32>\n"
      "  func.return %0 : tensor<2x2xi32>\n}\n";
  const int32_t a[] = {0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11};
  int64_t r = -1, c = 5;
  tu_in in[3] = {IN(XRT_S32, a, 4, 3), IN0(XRT_S64, &r), IN0(XRT_S64, &c)};
  tu_out o;
  TU_RUN_OK(C(state), p, 3, in, &o);
  TU_ASSERT_OUT(&o, 0, int32_t, 1, 2, 4, 5); /* starts (0, 1) */
  tu_out_free(&o);
  r = 2, c = 0;
  TU_RUN_OK(C(state), p, 3, in, &o);
  TU_ASSERT_OUT(&o, 0, int32_t, 6, 7, 9, 10);
  tu_out_free(&o);
}

static void test_dynamic_slice_empty_rank0(void **state) {
  const char *p =
      "func.func @main(%a: tensor<3xui8>, %i: tensor<ui32>, %s: tensor<i8>) -> (tensor<0xui8>, tensor<i8>) {\n"
      "  %0 = \"stablehlo.dynamic_slice\"(%a, %i) {slice_sizes = array<i64: 0>}\n"
      "    : (tensor<3xui8>, tensor<ui32>) -> tensor<0xui8>\n"
      "  %1 = \"stablehlo.dynamic_slice\"(%s) {slice_sizes = array<i64>} : (tensor<i8>) -> tensor<i8>\n"
      "  func.return %0, %1 : tensor<0xui8>, tensor<i8>\n}\n";
  const uint8_t a[] = {1, 2, 3};
  const uint32_t i = 4000000000u;
  const int8_t s = -7;
  tu_in in[3] = {IN(XRT_U8, a, 3), IN0(XRT_U32, &i), IN0(XRT_S8, &s)};
  tu_out o;
  TU_RUN_OK(C(state), p, 3, in, &o);
  assert_int_equal(o.bytes[0], 0);
  TU_ASSERT_OUT(&o, 1, int8_t, -7);
  tu_out_free(&o);
}

static void test_dynamic_update_slice(void **state) {
  const char *p =
      "func.func @main(%a: tensor<3x3xf32>, %u: tensor<2x2xf32>, %r: tensor<i32>, %c: tensor<i32>) -> tensor<3x3xf32> {\n"
      "  %0 = stablehlo.dynamic_update_slice %a, %u, %r, %c\n"
      "    : (tensor<3x3xf32>, tensor<2x2xf32>, tensor<i32>, tensor<i32>) -> tensor<3x3xf32>\n"
      "  func.return %0 : tensor<3x3xf32>\n}\n";
  const float a[9] = {0}, u[] = {1, 2, 3, 4};
  const int32_t r = 2, c = -7; /* clamp to (1, 0) */
  tu_in in[4] = {IN(XRT_F32, a, 3, 3), IN(XRT_F32, u, 2, 2), IN0(XRT_S32, &r),
                 IN0(XRT_S32, &c)};
  tu_out o;
  TU_RUN_OK(C(state), p, 4, in, &o);
  TU_ASSERT_OUT(&o, 0, float, 0, 0, 0, 1, 2, 0, 3, 4, 0);
  tu_out_free(&o);
}

/* ---- scatter ---- */

/* Windows of 2 along dimension 0 of a 5-vector: each update element whose
 * target is out of bounds is skipped (the spec's per-element rule); the
 * other elements of its window still land. */
static void test_scatter_add_out_of_bounds(void **state) {
  const char *p =
      "func.func @main(%a: tensor<5xi32>, %i: tensor<4x1xi32>, %u: tensor<4x2xi32>) -> tensor<5xi32> {\n"
      "  %0 = \"stablehlo.scatter\"(%a, %i, %u) ({\n"
      "  ^bb0(%x: tensor<i32>, %y: tensor<i32>):\n"
      "    %s = stablehlo.add %x, %y : tensor<i32>\n"
      "    stablehlo.return %s : tensor<i32>\n"
      "  }) {scatter_dimension_numbers = #stablehlo.scatter<update_window_dims = [1],\n"
      "      scatter_dims_to_operand_dims = [0], index_vector_dim = 1>,\n"
      "      indices_are_sorted = false, unique_indices = false}\n"
      "    : (tensor<5xi32>, tensor<4x1xi32>, tensor<4x2xi32>) -> tensor<5xi32>\n"
      "  func.return %0 : tensor<5xi32>\n}\n";
  const int32_t a[5] = {0}, idx[] = {1, 1, -1, 4};
  const int32_t u[] = {1, 2, 10, 20, 100, 200, 1000, 2000};
  tu_in in[3] = {IN(XRT_S32, a, 5), IN(XRT_S32, idx, 4, 1),
                 IN(XRT_S32, u, 4, 2)};
  tu_out o;
  TU_RUN_OK(C(state), p, 3, in, &o);
  TU_ASSERT_OUT(&o, 0, int32_t, 200, 11, 22, 0, 1000);
  tu_out_free(&o);
}

/* Updates are applied in order: a non-commutative body (subtract) and a
 * body that returns the update (the last write wins). */
static void test_scatter_order(void **state) {
  const char *p =
      "func.func @main(%a: tensor<2xf64>, %i: tensor<3xi64>, %u: tensor<3xf64>) -> (tensor<2xf64>, tensor<2xf64>) {\n"
      "  %0 = \"stablehlo.scatter\"(%a, %i, %u) ({\n"
      "  ^bb0(%x: tensor<f64>, %y: tensor<f64>):\n"
      "    %s = stablehlo.subtract %x, %y : tensor<f64>\n"
      "    stablehlo.return %s : tensor<f64>\n"
      "  }) {scatter_dimension_numbers = #stablehlo.scatter<inserted_window_dims = [0],\n"
      "      scatter_dims_to_operand_dims = [0], index_vector_dim = 1>}\n"
      "    : (tensor<2xf64>, tensor<3xi64>, tensor<3xf64>) -> tensor<2xf64>\n"
      "  %1 = \"stablehlo.scatter\"(%a, %i, %u) ({\n"
      "  ^bb0(%x: tensor<f64>, %y: tensor<f64>):\n"
      "    stablehlo.return %y : tensor<f64>\n"
      "  }) {scatter_dimension_numbers = #stablehlo.scatter<inserted_window_dims = [0],\n"
      "      scatter_dims_to_operand_dims = [0], index_vector_dim = 1>, unique_indices = false}\n"
      "    : (tensor<2xf64>, tensor<3xi64>, tensor<3xf64>) -> tensor<2xf64>\n"
      "  func.return %0, %1 : tensor<2xf64>, tensor<2xf64>\n}\n";
  const double a[] = {100, 50}, u[] = {1, 2, 8};
  const int64_t idx[] = {0, 0, -3};
  tu_in in[3] = {IN(XRT_F64, a, 2), IN(XRT_S64, idx, 3), IN(XRT_F64, u, 3)};
  tu_out o;
  TU_RUN_OK(C(state), p, 3, in, &o);
  TU_ASSERT_OUT(&o, 0, double, 97, 50);
  TU_ASSERT_OUT(&o, 1, double, 2, 50);
  tu_out_free(&o);
}

/* Two inputs of different element types updated together by one body. */
static void test_scatter_two_operands(void **state) {
  const char *p =
      "func.func @main(%a: tensor<3xi32>, %b: tensor<3xf32>, %i: tensor<2xi32>,\n"
      "                %u: tensor<2xi32>, %v: tensor<2xf32>) -> (tensor<3xi32>, tensor<3xf32>) {\n"
      "  %0:2 = \"stablehlo.scatter\"(%a, %b, %i, %u, %v) ({\n"
      "  ^bb0(%x0: tensor<i32>, %x1: tensor<f32>, %y0: tensor<i32>, %y1: tensor<f32>):\n"
      "    %s = stablehlo.add %x0, %y0 : tensor<i32>\n"
      "    %m = stablehlo.maximum %x1, %y1 : tensor<f32>\n"
      "    stablehlo.return %s, %m : tensor<i32>, tensor<f32>\n"
      "  }) {scatter_dimension_numbers = #stablehlo.scatter<inserted_window_dims = [0],\n"
      "      scatter_dims_to_operand_dims = [0], index_vector_dim = 1>}\n"
      "    : (tensor<3xi32>, tensor<3xf32>, tensor<2xi32>, tensor<2xi32>, tensor<2xf32>)\n"
      "    -> (tensor<3xi32>, tensor<3xf32>)\n"
      "  func.return %0#0, %0#1 : tensor<3xi32>, tensor<3xf32>\n}\n";
  const int32_t a[] = {1, 2, 3}, idx[] = {2, 0}, u[] = {10, 20};
  const float b[] = {0.5f, 0.5f, 0.5f}, v[] = {-1, 7};
  tu_in in[5] = {IN(XRT_S32, a, 3), IN(XRT_F32, b, 3), IN(XRT_S32, idx, 2),
                 IN(XRT_S32, u, 2), IN(XRT_F32, v, 2)};
  tu_out o;
  TU_RUN_OK(C(state), p, 5, in, &o);
  TU_ASSERT_OUT(&o, 0, int32_t, 21, 2, 13);
  TU_ASSERT_OUT(&o, 1, float, 7, 0.5f, 0.5f);
  tu_out_free(&o);
}

/* input_batching_dims: update k goes to row k; i8 elements. */
static void test_scatter_batching_and_empty(void **state) {
  const char *p =
      "func.func @main(%a: tensor<2x3xi8>, %i: tensor<2xi32>, %u: tensor<2xi8>,\n"
      "                %e: tensor<0x1xi32>, %f: tensor<0xi8>) -> (tensor<2x3xi8>, tensor<2x3xi8>) {\n"
      "  %0 = \"stablehlo.scatter\"(%a, %i, %u) ({\n"
      "  ^bb0(%x: tensor<i8>, %y: tensor<i8>):\n"
      "    %s = stablehlo.add %x, %y : tensor<i8>\n"
      "    stablehlo.return %s : tensor<i8>\n"
      "  }) {scatter_dimension_numbers = #stablehlo.scatter<inserted_window_dims = [1],\n"
      "      input_batching_dims = [0], scatter_indices_batching_dims = [0],\n"
      "      scatter_dims_to_operand_dims = [1], index_vector_dim = 1>}\n"
      "    : (tensor<2x3xi8>, tensor<2xi32>, tensor<2xi8>) -> tensor<2x3xi8>\n"
      "  %1 = \"stablehlo.scatter\"(%a, %e, %f) ({\n"
      "  ^bb0(%x: tensor<i8>, %y: tensor<i8>):\n"
      "    stablehlo.return %y : tensor<i8>\n"
      "  }) {scatter_dimension_numbers = #stablehlo.scatter<inserted_window_dims = [0, 1],\n"
      "      scatter_dims_to_operand_dims = [0], index_vector_dim = 1>}\n"
      "    : (tensor<2x3xi8>, tensor<0x1xi32>, tensor<0xi8>) -> tensor<2x3xi8>\n"
      "  func.return %0, %1 : tensor<2x3xi8>, tensor<2x3xi8>\n}\n";
  const int8_t a[] = {1, 1, 1, 1, 1, 127}, u[] = {7, 9}, none[1] = {0};
  const int32_t idx[] = {2, 0}, inone[1] = {0};
  tu_in in[5] = {IN(XRT_S8, a, 2, 3), IN(XRT_S32, idx, 2), IN(XRT_S8, u, 2),
                 IN(XRT_S32, inone, 0, 1), IN(XRT_S8, none, 0)};
  tu_out o;
  TU_RUN_OK(C(state), p, 5, in, &o);
  TU_ASSERT_OUT(&o, 0, int8_t, 1, 1, 8, 10, 1, 127);
  TU_ASSERT_OUT(&o, 1, int8_t, 1, 1, 1, 1, 1, 127);
  tu_out_free(&o);
}

/* ---- reduce_window ---- */

/* max over windows of 2 with window dilation 2, stride 2 and one element
 * of low padding (the init value -inf). */
static void test_reduce_window_max_dilated(void **state) {
  const char *p =
      "func.func @main(%a: tensor<5xf32>) -> tensor<2xf32> {\n"
      "  %init = stablehlo.constant dense<0xFF800000> : tensor<f32>\n"
      "  %0 = \"stablehlo.reduce_window\"(%a, %init) ({\n"
      "  ^bb0(%x: tensor<f32>, %y: tensor<f32>):\n"
      "    %m = stablehlo.maximum %x, %y : tensor<f32>\n"
      "    stablehlo.return %m : tensor<f32>\n"
      "  }) {window_dimensions = array<i64: 2>, window_strides = array<i64: 2>,\n"
      "      window_dilations = array<i64: 2>, padding = dense<[[1, 0]]> : tensor<1x2xi64>}\n"
      "    : (tensor<5xf32>, tensor<f32>) -> tensor<2xf32>\n"
      "  func.return %0 : tensor<2xf32>\n}\n";
  const float a[] = {1, 2, 3, 4, 5};
  tu_in in[1] = {IN(XRT_F32, a, 5)};
  tu_out o;
  TU_RUN_OK(C(state), p, 1, in, &o);
  TU_ASSERT_OUT(&o, 0, float, 2, 4);
  tu_out_free(&o);
}

/* A general body (acc + x*x) over a base-dilated input: the holes and the
 * padding hold the init value, which the body sees like any element. */
static void test_reduce_window_base_dilation_body(void **state) {
  const char *p =
      "func.func @main(%a: tensor<3xi32>) -> tensor<4xi32> {\n"
      "  %init = stablehlo.constant dense<1> : tensor<i32>\n"
      "  %0 = \"stablehlo.reduce_window\"(%a, %init) ({\n"
      "  ^bb0(%x: tensor<i32>, %y: tensor<i32>):\n"
      "    %q = stablehlo.multiply %y, %y : tensor<i32>\n"
      "    %s = stablehlo.add %x, %q : tensor<i32>\n"
      "    stablehlo.return %s : tensor<i32>\n"
      "  }) {window_dimensions = array<i64: 2>, base_dilations = array<i64: 2>}\n"
      "    : (tensor<3xi32>, tensor<i32>) -> tensor<4xi32>\n"
      "  func.return %0 : tensor<4xi32>\n}\n";
  const int32_t a[] = {1, 2, 3};
  tu_in in[1] = {IN(XRT_S32, a, 3)};
  tu_out o;
  TU_RUN_OK(C(state), p, 1, in, &o);
  /* dilated [1, h, 2, h, 3] with h = 1 */
  TU_ASSERT_OUT(&o, 0, int32_t, 3, 6, 6, 11);
  tu_out_free(&o);
}

static void test_reduce_window_two_operands_2d(void **state) {
  const char *p =
      "func.func @main(%a: tensor<2x4xi32>, %b: tensor<2x4xui16>) -> (tensor<1x2xi32>, tensor<1x2xui16>) {\n"
      "  %i0 = stablehlo.constant dense<0> : tensor<i32>\n"
      "  %i1 = stablehlo.constant dense<0> : tensor<ui16>\n"
      "  %0:2 = \"stablehlo.reduce_window\"(%a, %b, %i0, %i1) ({\n"
      "  ^bb0(%x0: tensor<i32>, %x1: tensor<ui16>, %y0: tensor<i32>, %y1: tensor<ui16>):\n"
      "    %s = stablehlo.add %x0, %y0 : tensor<i32>\n"
      "    %m = stablehlo.maximum %x1, %y1 : tensor<ui16>\n"
      "    stablehlo.return %s, %m : tensor<i32>, tensor<ui16>\n"
      "  }) {window_dimensions = array<i64: 2, 2>, window_strides = array<i64: 1, 2>}\n"
      "    : (tensor<2x4xi32>, tensor<2x4xui16>, tensor<i32>, tensor<ui16>)\n"
      "    -> (tensor<1x2xi32>, tensor<1x2xui16>)\n"
      "  func.return %0#0, %0#1 : tensor<1x2xi32>, tensor<1x2xui16>\n}\n";
  const int32_t a[] = {1, 5, 2, 4, -1, 0, 10, 3};
  const uint16_t b[] = {1, 5, 2, 4, 60000, 0, 10, 3};
  tu_in in[2] = {IN(XRT_S32, a, 2, 4), IN(XRT_U16, b, 2, 4)};
  tu_out o;
  TU_RUN_OK(C(state), p, 2, in, &o);
  TU_ASSERT_OUT(&o, 0, int32_t, 5, 19);
  TU_ASSERT_OUT(&o, 1, uint16_t, 60000, 10);
  tu_out_free(&o);
}

/* An empty input padded to one window: only init values, reduced in. */
static void test_reduce_window_empty_padded(void **state) {
  const char *p =
      "func.func @main(%a: tensor<0xf32>) -> tensor<1xf32> {\n"
      "  %init = stablehlo.constant dense<3.0> : tensor<f32>\n"
      "  %0 = \"stablehlo.reduce_window\"(%a, %init) ({\n"
      "  ^bb0(%x: tensor<f32>, %y: tensor<f32>):\n"
      "    %s = stablehlo.add %x, %y : tensor<f32>\n"
      "    stablehlo.return %s : tensor<f32>\n"
      "  }) {window_dimensions = array<i64: 2>, padding = dense<[[1, 1]]> : tensor<1x2xi64>}\n"
      "    : (tensor<0xf32>, tensor<f32>) -> tensor<1xf32>\n"
      "  func.return %0 : tensor<1xf32>\n}\n";
  const float none[1] = {0};
  tu_in in[1] = {IN(XRT_F32, none, 0)};
  tu_out o;
  TU_RUN_OK(C(state), p, 1, in, &o);
  TU_ASSERT_OUT(&o, 0, float, 9);
  tu_out_free(&o);
}

/* ---- select_and_scatter ---- */

static void sas(xrt_client *c, const char *dir, const char *attrs,
                const char *t_op, const char *t_src, tu_in *in, tu_out *o) {
  static char prog[2048];
  snprintf(prog, sizeof prog,
           "func.func @main(%%a: %s, %%s: %s) -> %s {\n"
           "  %%init = stablehlo.constant dense<0.0> : tensor<f32>\n"
           "  %%0 = \"stablehlo.select_and_scatter\"(%%a, %%s, %%init) ({\n"
           "  ^bb0(%%x: tensor<f32>, %%y: tensor<f32>):\n"
           "    %%c = stablehlo.compare %s, %%x, %%y : (tensor<f32>, tensor<f32>) -> tensor<i1>\n"
           "    stablehlo.return %%c : tensor<i1>\n"
           "  }, {\n"
           "  ^bb0(%%x: tensor<f32>, %%y: tensor<f32>):\n"
           "    %%s2 = stablehlo.add %%x, %%y : tensor<f32>\n"
           "    stablehlo.return %%s2 : tensor<f32>\n"
           "  }) {%s} : (%s, %s, tensor<f32>) -> %s\n"
           "  func.return %%0 : %s\n}\n",
           t_op, t_src, t_op, dir, attrs, t_op, t_src, t_op, t_op);
  TU_RUN_OK(c, prog, 2, in, o);
}

/* GE keeps the first of equal elements, GT moves to the later one. */
static void test_select_and_scatter_ties(void **state) {
  const float a[] = {5, 5, 1, 1}, s[] = {1, 2};
  tu_in in[2] = {IN(XRT_F32, a, 4), IN(XRT_F32, s, 2)};
  const char *attrs = "window_dimensions = array<i64: 2>, "
                      "window_strides = array<i64: 2>";
  tu_out o;
  sas(C(state), "GE", attrs, "tensor<4xf32>", "tensor<2xf32>", in, &o);
  TU_ASSERT_OUT(&o, 0, float, 1, 0, 2, 0);
  tu_out_free(&o);
  sas(C(state), "GT", attrs, "tensor<4xf32>", "tensor<2xf32>", in, &o);
  TU_ASSERT_OUT(&o, 0, float, 0, 1, 0, 2);
  tu_out_free(&o);
}

/* Overlapping windows with padding (never selected): all pick the 3. */
static void test_select_and_scatter_padding(void **state) {
  const float a[] = {1, 3, 2}, s[] = {1, 2, 4};
  tu_in in[2] = {IN(XRT_F32, a, 3), IN(XRT_F32, s, 3)};
  tu_out o;
  sas(C(state), "GE", "window_dimensions = array<i64: 3>, "
      "padding = dense<[[1, 1]]> : tensor<1x2xi64>",
      "tensor<3xf32>", "tensor<3xf32>", in, &o);
  TU_ASSERT_OUT(&o, 0, float, 0, 7, 0);
  tu_out_free(&o);
}

/* ---- dynamic shape ops on static shapes ---- */

static void test_dynamic_broadcast_in_dim(void **state) {
  const char *p =
      "func.func @main(%a: tensor<2x1xi32>, %d: tensor<3xi32>) -> tensor<2x2x3xi32> {\n"
      "  %0 = \"stablehlo.dynamic_broadcast_in_dim\"(%a, %d) {broadcast_dimensions = array<i64: 0, 2>}\n"
      "    : (tensor<2x1xi32>, tensor<3xi32>) -> tensor<2x2x3xi32>\n"
      "  func.return %0 : tensor<2x2x3xi32>\n}\n";
  const int32_t a[] = {4, 9}, good[] = {2, 2, 3}, bad[] = {2, 2, 4};
  tu_in in[2] = {IN(XRT_S32, a, 2, 1), IN(XRT_S32, good, 3)};
  tu_out o;
  TU_RUN_OK(C(state), p, 2, in, &o);
  TU_ASSERT_OUT(&o, 0, int32_t, 4, 4, 4, 4, 4, 4, 9, 9, 9, 9, 9, 9);
  tu_out_free(&o);
  in[1].data = bad;
  assert_int_equal(tu_run(C(state), p, 2, in, &o), XRT_INVALID_ARGUMENT);
  TU_ASSERT_PREFIX(tu_msg, "<input>:2:");
  TU_ASSERT_CONTAINS(tu_msg, "output_dimensions[2] is 4");
}

static void test_dynamic_iota(void **state) {
  const char *p =
      "func.func @main(%d: tensor<2xui64>) -> tensor<2x3xf32> {\n"
      "  %0 = stablehlo.dynamic_iota %d, dim = 1 : (tensor<2xui64>) -> tensor<2x3xf32>\n"
      "  func.return %0 : tensor<2x3xf32>\n}\n";
  const uint64_t good[] = {2, 3}, bad[] = {3, 2};
  tu_in in[1] = {IN(XRT_U64, good, 2)};
  tu_out o;
  TU_RUN_OK(C(state), p, 1, in, &o);
  TU_ASSERT_OUT(&o, 0, float, 0, 1, 2, 0, 1, 2);
  tu_out_free(&o);
  in[0].data = bad;
  assert_int_equal(tu_run(C(state), p, 1, in, &o), XRT_INVALID_ARGUMENT);
  TU_ASSERT_PREFIX(tu_msg, "<input>:2:");
  TU_ASSERT_CONTAINS(tu_msg, "output_shape[0] is 3");
}

/* The paddings may change between runs if they keep the result shape;
 * negative edge padding cuts. */
static void test_dynamic_pad(void **state) {
  const char *p =
      "func.func @main(%a: tensor<3xi8>, %v: tensor<i8>, %l: tensor<1xi64>, %h: tensor<1xi64>,\n"
      "                %n: tensor<1xi64>) -> tensor<5xi8> {\n"
      "  %0 = stablehlo.dynamic_pad %a, %v, %l, %h, %n\n"
      "    : (tensor<3xi8>, tensor<i8>, tensor<1xi64>, tensor<1xi64>, tensor<1xi64>) -> tensor<5xi8>\n"
      "  func.return %0 : tensor<5xi8>\n}\n";
  const int8_t a[] = {1, 2, 3}, v = 9;
  int64_t lo = 1, hi = -1, in_ = 1;
  tu_in in[5] = {IN(XRT_S8, a, 3), IN0(XRT_S8, &v), IN(XRT_S64, &lo, 1),
                 IN(XRT_S64, &hi, 1), IN(XRT_S64, &in_, 1)};
  tu_out o;
  TU_RUN_OK(C(state), p, 5, in, &o);
  TU_ASSERT_OUT(&o, 0, int8_t, 9, 1, 9, 2, 9);
  tu_out_free(&o);
  lo = 0, hi = 0;
  TU_RUN_OK(C(state), p, 5, in, &o);
  TU_ASSERT_OUT(&o, 0, int8_t, 1, 9, 2, 9, 3);
  tu_out_free(&o);
  lo = -1, hi = 3, in_ = 0;
  TU_RUN_OK(C(state), p, 5, in, &o);
  TU_ASSERT_OUT(&o, 0, int8_t, 2, 3, 9, 9, 9);
  tu_out_free(&o);
  lo = 0, hi = 1, in_ = 1; /* 6 elements, not 5 */
  assert_int_equal(tu_run(C(state), p, 5, in, &o), XRT_INVALID_ARGUMENT);
  TU_ASSERT_PREFIX(tu_msg, "<input>:3:");
  TU_ASSERT_CONTAINS(tu_msg, "do not give the static result size 5");
}

static void test_dynamic_reshape(void **state) {
  const char *p =
      "func.func @main(%a: tensor<2x3xi16>, %s: tensor<2xi32>) -> tensor<3x2xi16> {\n"
      "  %0 = stablehlo.dynamic_reshape %a, %s : (tensor<2x3xi16>, tensor<2xi32>) -> tensor<3x2xi16>\n"
      "  func.return %0 : tensor<3x2xi16>\n}\n";
  const int16_t a[] = {1, 2, 3, 4, 5, 6};
  const int32_t good[] = {3, 2}, bad[] = {6, 1};
  tu_in in[2] = {IN(XRT_S16, a, 2, 3), IN(XRT_S32, good, 2)};
  tu_out o;
  TU_RUN_OK(C(state), p, 2, in, &o);
  TU_ASSERT_OUT(&o, 0, int16_t, 1, 2, 3, 4, 5, 6);
  tu_out_free(&o);
  in[1].data = bad;
  assert_int_equal(tu_run(C(state), p, 2, in, &o), XRT_INVALID_ARGUMENT);
  TU_ASSERT_PREFIX(tu_msg, "<input>:2:");
}

/* ---- verifier ---- */

static char vbuf[4096];

/* A gather of tensor<3x4xf32> with indices tensor<2x1xi32>. */
static const char *gather_prog(const char *dn, const char *sizes,
                               const char *result) {
  snprintf(vbuf, sizeof vbuf,
           "func.func @main(%%a: tensor<3x4xf32>, %%i: tensor<2x1xi32>) -> %s {\n"
           "  %%0 = \"stablehlo.gather\"(%%a, %%i) {dimension_numbers = "
           "#stablehlo.gather<%s>, slice_sizes = array<i64: %s>}\n"
           "    : (tensor<3x4xf32>, tensor<2x1xi32>) -> %s\n"
           "  func.return %%0 : %s\n}\n",
           result, dn, sizes, result, result);
  return vbuf;
}

static void test_verify_gather(void **state) {
  (void)state;
  const char *ok = "offset_dims = [1], collapsed_slice_dims = [0], "
                   "start_index_map = [0], index_vector_dim = 1";
  xrt_program *p = NULL;
  const char *t = gather_prog(ok, "1, 4", "tensor<2x4xf32>");
  assert_int_equal(xrt_program_parse(t, strlen(t), NULL, &p), XRT_OK);
  xrt_program_release(p);
  tu_parse_fails_at(gather_prog("offset_dims = [1], collapsed_slice_dims = [0], "
                          "start_index_map = [5], index_vector_dim = 1",
                          "1, 4", "tensor<2x4xf32>"),
              "<input>:2:8:", "start_index_map: dimension 5 is out of range");
  tu_parse_fails_at(gather_prog(ok, "1, 5", "tensor<2x5xf32>"), "<input>:2:8:",
              "slice_sizes[1] = 5 must be in [0, 4]");
  tu_parse_fails_at(gather_prog(ok, "1, 3", "tensor<2x4xf32>"), "<input>:2:8:",
              "result dimension 1 must be 3");
  tu_parse_fails_at(gather_prog(ok, "2, 4", "tensor<2x4xf32>"), "<input>:2:8:",
              "collapsed or batching dimension must be 0 or 1");
  tu_parse_fails_at(gather_prog("offset_dims = [1], collapsed_slice_dims = [0], "
                          "start_index_map = [0], index_vector_dim = 3",
                          "1, 4", "tensor<2x4xf32>"),
              "<input>:2:8:", "index_vector_dim 3 is out of range");
  tu_parse_fails_at(gather_prog("offset_dims = [1], collapsed_slice_dims = [0], "
                          "start_index_map = [0, 1], index_vector_dim = 1",
                          "1, 4", "tensor<2x4xf32>"),
              "<input>:2:8:", "start_index_map has 2 entries");
  tu_parse_fails_at(gather_prog("offset_dims = [1], collapsed_slice_dims = [0], "
                          "operand_batching_dims = [1], start_indices_batching_dims = [0], "
                          "start_index_map = [0], index_vector_dim = 1",
                          "1, 1", "tensor<2xf32>"),
              "<input>:2:8:", "must cover the operand");
}

/* A scatter into tensor<4xi32> with indices tensor<2x1xi32>. */
static const char *scatter_prog(const char *dn, const char *upd) {
  snprintf(vbuf, sizeof vbuf,
           "func.func @main(%%a: tensor<4xi32>, %%i: tensor<2x1xi32>, %%u: %s) -> tensor<4xi32> {\n"
           "  %%0 = \"stablehlo.scatter\"(%%a, %%i, %%u) ({\n"
           "  ^bb0(%%x: tensor<i32>, %%y: tensor<i32>):\n"
           "    stablehlo.return %%y : tensor<i32>\n"
           "  }) {scatter_dimension_numbers = #stablehlo.scatter<%s>}\n"
           "    : (tensor<4xi32>, tensor<2x1xi32>, %s) -> tensor<4xi32>\n"
           "  func.return %%0 : tensor<4xi32>\n}\n",
           upd, dn, upd);
  return vbuf;
}

static void test_verify_scatter(void **state) {
  (void)state;
  const char *ok = "update_window_dims = [1], scatter_dims_to_operand_dims = [0], "
                   "index_vector_dim = 1";
  xrt_program *p = NULL;
  const char *t = scatter_prog(ok, "tensor<2x3xi32>");
  assert_int_equal(xrt_program_parse(t, strlen(t), NULL, &p), XRT_OK);
  xrt_program_release(p);
  tu_parse_fails_at(scatter_prog(ok, "tensor<3x3xi32>"), "<input>:2:8:",
              "updates dimension 0 must be 2");
  tu_parse_fails_at(scatter_prog(ok, "tensor<2x5xi32>"), "<input>:2:8:",
              "exceeds input dimension 0");
  tu_parse_fails_at(scatter_prog("update_window_dims = [1], scatter_dims_to_operand_dims = [1], "
                           "index_vector_dim = 1", "tensor<2x3xi32>"),
              "<input>:2:8:", "scatter_dims_to_operand_dims: dimension 1 is out "
              "of range");
  tu_parse_fails_at(scatter_prog("update_window_dims = [1], inserted_window_dims = [0], "
                           "scatter_dims_to_operand_dims = [0], index_vector_dim = 1",
                           "tensor<2x3xi32>"),
              "<input>:2:8:", "must cover the operand");
  tu_parse_fails_at(scatter_prog("update_window_dims = [1], scatter_dims_to_operand_dims = [0], "
                           "index_vector_dim = 4", "tensor<2x3xi32>"),
              "<input>:2:8:", "index_vector_dim 4 is out of range");
}

static const char *rw_prog(const char *attrs, const char *result) {
  snprintf(vbuf, sizeof vbuf,
           "func.func @main(%%a: tensor<4xf32>, %%z: tensor<f32>) -> %s {\n"
           "  %%0 = \"stablehlo.reduce_window\"(%%a, %%z) ({\n"
           "  ^bb0(%%x: tensor<f32>, %%y: tensor<f32>):\n"
           "    %%s = stablehlo.add %%x, %%y : tensor<f32>\n"
           "    stablehlo.return %%s : tensor<f32>\n"
           "  }) {%s} : (tensor<4xf32>, tensor<f32>) -> %s\n"
           "  func.return %%0 : %s\n}\n",
           result, attrs, result, result);
  return vbuf;
}

static void test_verify_windows(void **state) {
  (void)state;
  xrt_program *p = NULL;
  const char *t = rw_prog("window_dimensions = array<i64: 2>, window_strides = "
                          "array<i64: 2>", "tensor<2xf32>");
  assert_int_equal(xrt_program_parse(t, strlen(t), NULL, &p), XRT_OK);
  xrt_program_release(p);
  tu_parse_fails_at(rw_prog("window_dimensions = array<i64: 2>, window_strides = "
                      "array<i64: 0>", "tensor<2xf32>"),
              "<input>:2:8:", "window_strides[0] = 0 must be positive");
  tu_parse_fails_at(rw_prog("window_dimensions = array<i64: -1>", "tensor<2xf32>"),
              "<input>:2:8:", "window_dimensions[0] = -1 must be positive");
  tu_parse_fails_at(rw_prog("window_dimensions = array<i64: 2>, base_dilations = "
                      "array<i64: 0>", "tensor<3xf32>"),
              "<input>:2:8:", "base_dilations[0] = 0 must be positive");
  tu_parse_fails_at(rw_prog("window_dimensions = array<i64: 2>", "tensor<2xf32>"),
              "<input>:2:8:", "result 0 dimension 0 must be 3");
  tu_parse_fails_at(rw_prog("window_dimensions = array<i64: 2, 2>", "tensor<3xf32>"),
              "<input>:2:8:", "window_dimensions needs 1 entries");
  tu_parse_fails_at(rw_prog("window_dimensions = array<i64: 2>, padding = dense<[[-5, 0]]> "
                      ": tensor<1x2xi64>", "tensor<0xf32>"),
              "<input>:2:8:", "padding makes dimension 0 negative");
  tu_parse_fails_at(
      "func.func @main(%a: tensor<4xf32>, %s: tensor<3xf32>, %z: tensor<f32>) -> tensor<4xf32> {\n"
      "  %0 = \"stablehlo.select_and_scatter\"(%a, %s, %z) ({\n"
      "  ^bb0(%x: tensor<f32>, %y: tensor<f32>):\n"
      "    %c = stablehlo.compare GE, %x, %y : (tensor<f32>, tensor<f32>) -> tensor<i1>\n"
      "    stablehlo.return %c : tensor<i1>\n"
      "  }, {\n"
      "  ^bb0(%x: tensor<f32>, %y: tensor<f32>):\n"
      "    stablehlo.return %y : tensor<f32>\n"
      "  }) {window_dimensions = array<i64: 2>, window_strides = array<i64: 2>}\n"
      "    : (tensor<4xf32>, tensor<3xf32>, tensor<f32>) -> tensor<4xf32>\n"
      "  func.return %0 : tensor<4xf32>\n}\n",
      "<input>:2:8:", "source dimension 0 must be 2");
}

static void test_verify_dynamic_ops(void **state) {
  (void)state;
  tu_parse_fails_at(
      "func.func @main(%a: tensor<3xi32>, %i: tensor<i32>) -> tensor<4xi32> {\n"
      "  %0 = \"stablehlo.dynamic_slice\"(%a, %i) {slice_sizes = array<i64: 4>}\n"
      "    : (tensor<3xi32>, tensor<i32>) -> tensor<4xi32>\n"
      "  func.return %0 : tensor<4xi32>\n}\n",
      "<input>:2:8:", "slice_sizes[0] = 4 must be in [0, 3]");
  tu_parse_fails_at(
      "func.func @main(%a: tensor<3xi32>, %i: tensor<f32>) -> tensor<2xi32> {\n"
      "  %0 = \"stablehlo.dynamic_slice\"(%a, %i) {slice_sizes = array<i64: 2>}\n"
      "    : (tensor<3xi32>, tensor<f32>) -> tensor<2xi32>\n"
      "  func.return %0 : tensor<2xi32>\n}\n",
      "<input>:2:8:", "start index 0 must be an integer scalar");
  tu_parse_fails_at(
      "func.func @main(%a: tensor<3xi32>, %u: tensor<4xi32>, %i: tensor<i32>) -> tensor<3xi32> {\n"
      "  %0 = stablehlo.dynamic_update_slice %a, %u, %i\n"
      "    : (tensor<3xi32>, tensor<4xi32>, tensor<i32>) -> tensor<3xi32>\n"
      "  func.return %0 : tensor<3xi32>\n}\n",
      "<input>:2:8:", "update dimension 0 (size 4) exceeds");
  tu_parse_fails_at(
      "func.func @main(%a: tensor<2x3xi32>, %s: tensor<2xi32>) -> tensor<4x2xi32> {\n"
      "  %0 = stablehlo.dynamic_reshape %a, %s : (tensor<2x3xi32>, tensor<2xi32>) -> tensor<4x2xi32>\n"
      "  func.return %0 : tensor<4x2xi32>\n}\n",
      "<input>:2:8:", "operand has 6 elements, result 8");
  tu_parse_fails_at(
      "func.func @main(%d: tensor<2xi32>) -> tensor<2x3xi32> {\n"
      "  %0 = stablehlo.dynamic_iota %d, dim = 2 : (tensor<2xi32>) -> tensor<2x3xi32>\n"
      "  func.return %0 : tensor<2x3xi32>\n}\n",
      "<input>:2:8:", "iota_dimension 2 is out of range");
  tu_parse_fails_at(
      "func.func @main(%d: tensor<3xi32>) -> tensor<2x3xi32> {\n"
      "  %0 = stablehlo.dynamic_iota %d, dim = 0 : (tensor<3xi32>) -> tensor<2x3xi32>\n"
      "  func.return %0 : tensor<2x3xi32>\n}\n",
      "<input>:2:8:", "output_shape must be a 1-d integer tensor of 2");
  tu_parse_fails_at(
      "func.func @main(%a: tensor<2x1xi32>, %d: tensor<3xi32>) -> tensor<2x2x3xi32> {\n"
      "  %0 = \"stablehlo.dynamic_broadcast_in_dim\"(%a, %d) {broadcast_dimensions = array<i64: 2, 1>}\n"
      "    : (tensor<2x1xi32>, tensor<3xi32>) -> tensor<2x2x3xi32>\n"
      "  func.return %0 : tensor<2x2x3xi32>\n}\n",
      "<input>:2:8:", "operand dimension 0 (size 2) does not broadcast to size 3");
  tu_parse_fails_at(
      "func.func @main(%a: tensor<3xi8>, %v: tensor<i8>, %l: tensor<2xi64>) -> tensor<5xi8> {\n"
      "  %0 = stablehlo.dynamic_pad %a, %v, %l, %l, %l\n"
      "    : (tensor<3xi8>, tensor<i8>, tensor<2xi64>, tensor<2xi64>, tensor<2xi64>) -> tensor<5xi8>\n"
      "  func.return %0 : tensor<5xi8>\n}\n",
      "<input>:2:8:", "edge_padding_low must be a 1-d integer tensor of 1");
  tu_parse_fails_at(
      "func.func @main(%a: tensor<3x2xi32>, %i: tensor<2xi32>, %s: tensor<3xi64>) -> tensor<2x2xi32> {\n"
      "  %0 = \"stablehlo.dynamic_gather\"(%a, %i, %s) {dimension_numbers = #stablehlo.gather<\n"
      "    offset_dims = [1], collapsed_slice_dims = [0], start_index_map = [0],\n"
      "    index_vector_dim = 1>} : (tensor<3x2xi32>, tensor<2xi32>, tensor<3xi64>) -> tensor<2x2xi32>\n"
      "  func.return %0 : tensor<2x2xi32>\n}\n",
      "<input>:2:8:", "slice_sizes must be a 1-d integer tensor of 2");
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_gather_rows_clamped),
      cmocka_unit_test(test_gather_window_clamped),
      cmocka_unit_test(test_gather_batching),
      cmocka_unit_test(test_gather_c128_offset_first),
      cmocka_unit_test(test_gather_empty_and_rank0),
      cmocka_unit_test(test_dynamic_gather),
      cmocka_unit_test(test_dynamic_slice_clamped),
      cmocka_unit_test(test_dynamic_slice_empty_rank0),
      cmocka_unit_test(test_dynamic_update_slice),
      cmocka_unit_test(test_scatter_add_out_of_bounds),
      cmocka_unit_test(test_scatter_order),
      cmocka_unit_test(test_scatter_two_operands),
      cmocka_unit_test(test_scatter_batching_and_empty),
      cmocka_unit_test(test_reduce_window_max_dilated),
      cmocka_unit_test(test_reduce_window_base_dilation_body),
      cmocka_unit_test(test_reduce_window_two_operands_2d),
      cmocka_unit_test(test_reduce_window_empty_padded),
      cmocka_unit_test(test_select_and_scatter_ties),
      cmocka_unit_test(test_select_and_scatter_padding),
      cmocka_unit_test(test_dynamic_broadcast_in_dim),
      cmocka_unit_test(test_dynamic_iota),
      cmocka_unit_test(test_dynamic_pad),
      cmocka_unit_test(test_dynamic_reshape),
      cmocka_unit_test(test_verify_gather),
      cmocka_unit_test(test_verify_scatter),
      cmocka_unit_test(test_verify_windows),
      cmocka_unit_test(test_verify_dynamic_ops),
  };
  return cmocka_run_group_tests(tests, tu_setup_client, tu_teardown_client);
}
