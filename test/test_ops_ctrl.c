/* test_ops_ctrl.c - control flow and structure ops on hand-computed values:
 * if, case, map, sort, composite, tuples and tokens, optimization_barrier,
 * infeed/outfeed/send/recv through host functions, chlo.scan; and the
 * verifier's constraints for them. */
#include "test_util.h"

#define C(state) ((xrt_client *)*(state))
#define IN(dt, data, ...) ((tu_in){TU_SHAPE((dt), __VA_ARGS__), (data)})
#define IN0(dt, data) ((tu_in){TU_SCALAR(dt), (data)})

/* Runs a program that must be rejected with code; its message must
 * contain want. */
static void expect_error(xrt_client *c, const char *prog, xrt_status code,
                         const char *want) {
  xrt_status st = tu_run0(c, prog);
  if (st != code)
    fail_msg("expected %s, got %s: %s", xrt_strerror(code), xrt_strerror(st),
             tu_msg);
  TU_ASSERT_CONTAINS(tu_msg, want);
}

/* ---- if and case ---- */

static const char *if_prog =
    "func.func @main(%p: tensor<i1>, %x: tensor<2xf32>) -> (tensor<2xf32>, tensor<i32>) {\n"
    "  %r:2 = \"stablehlo.if\"(%p) ({\n"
    "    %a = stablehlo.add %x, %x : tensor<2xf32>\n"
    "    %c = stablehlo.constant dense<1> : tensor<i32>\n"
    "    stablehlo.return %a, %c : tensor<2xf32>, tensor<i32>\n"
    "  }, {\n"
    "    %n = stablehlo.negate %x : tensor<2xf32>\n"
    "    %c = stablehlo.constant dense<2> : tensor<i32>\n"
    "    stablehlo.return %n, %c : tensor<2xf32>, tensor<i32>\n"
    "  }) : (tensor<i1>) -> (tensor<2xf32>, tensor<i32>)\n"
    "  func.return %r#0, %r#1 : tensor<2xf32>, tensor<i32>\n}\n";

static void test_if_branches(void **state) {
  const float x[2] = {1.5f, -3};
  for (int p = 0; p < 2; p++) {
    const uint8_t pred = (uint8_t)p;
    tu_in in[2] = {IN0(XRT_PRED, &pred), IN(XRT_F32, x, 2)};
    tu_out o;
    TU_RUN_OK(C(state), if_prog, 2, in, &o);
    if (p) {
      TU_ASSERT_OUT(&o, 0, float, 3, -6);
      TU_ASSERT_OUT(&o, 1, int32_t, 1);
    } else {
      TU_ASSERT_OUT(&o, 0, float, -1.5f, 3);
      TU_ASSERT_OUT(&o, 1, int32_t, 2);
    }
    tu_out_free(&o);
  }
}

/* On a single device every execute is replica 0 of partition 0. */
static void test_replica_and_partition_id(void **state) {
  const char *p =
      "func.func @main() -> (tensor<ui32>, tensor<ui32>) {\n"
      "  %0 = stablehlo.replica_id : tensor<ui32>\n"
      "  %1 = stablehlo.partition_id : tensor<ui32>\n"
      "  func.return %0, %1 : tensor<ui32>, tensor<ui32>\n"
      "}\n";
  tu_out o;
  TU_RUN_OK(C(state), p, 0, NULL, &o);
  TU_ASSERT_OUT(&o, 0, uint32_t, 0);
  TU_ASSERT_OUT(&o, 1, uint32_t, 0);
  tu_out_free(&o);
}

static void test_case_index_and_default(void **state) {
  const char *p =
      "func.func @main(%i: tensor<i32>) -> tensor<2xi64> {\n"
      "  %a = stablehlo.constant dense<[10, 11]> : tensor<2xi64>\n"
      "  %r = \"stablehlo.case\"(%i) ({\n"
      "    stablehlo.return %a : tensor<2xi64>\n"
      "  }, {\n"
      "    %b = stablehlo.add %a, %a : tensor<2xi64>\n"
      "    stablehlo.return %b : tensor<2xi64>\n"
      "  }, {\n"
      "    %c = stablehlo.constant dense<[-1, -2]> : tensor<2xi64>\n"
      "    stablehlo.return %c : tensor<2xi64>\n"
      "  }) : (tensor<i32>) -> tensor<2xi64>\n"
      "  func.return %r : tensor<2xi64>\n}\n";
  /* Out-of-range indices (negative or too large) run the last branch. */
  const int32_t idx[5] = {0, 1, 2, -1, 3};
  const int64_t want[5][2] = {{10, 11}, {20, 22}, {-1, -2}, {-1, -2}, {-1, -2}};
  for (int k = 0; k < 5; k++) {
    tu_in in = IN0(XRT_S32, &idx[k]);
    tu_out o;
    TU_RUN_OK(C(state), p, 1, &in, &o);
    assert_int_equal(o.bytes[0], sizeof want[k]);
    assert_memory_equal(o.data[0], want[k], sizeof want[k]);
    tu_out_free(&o);
  }
}

static void test_case_single_branch(void **state) {
  const char *p =
      "func.func @main(%i: tensor<i32>) -> tensor<i32> {\n"
      "  %r = \"stablehlo.case\"(%i) ({\n"
      "    stablehlo.return %i : tensor<i32>\n"
      "  }) : (tensor<i32>) -> tensor<i32>\n"
      "  func.return %r : tensor<i32>\n}\n";
  const int32_t i = 7;
  tu_in in = IN0(XRT_S32, &i);
  tu_out o;
  TU_RUN_OK(C(state), p, 1, &in, &o);
  TU_ASSERT_OUT(&o, 0, int32_t, 7);
  tu_out_free(&o);
}

/* ---- map ---- */

static void test_map_single_op(void **state) {
  const char *p =
      "func.func @main(%a: tensor<2x2xi64>, %b: tensor<2x2xi64>) -> tensor<2x2xi64> {\n"
      "  %r = \"stablehlo.map\"(%a, %b) ({\n"
      "  ^bb0(%x: tensor<i64>, %y: tensor<i64>):\n"
      "    %0 = stablehlo.subtract %y, %x : tensor<i64>\n"
      "    stablehlo.return %0 : tensor<i64>\n"
      "  }) {dimensions = array<i64: 0, 1>} : (tensor<2x2xi64>, tensor<2x2xi64>) -> tensor<2x2xi64>\n"
      "  func.return %r : tensor<2x2xi64>\n}\n";
  const int64_t a[4] = {0, 1, 2, 3}, b[4] = {4, 5, 6, 7};
  tu_in in[2] = {IN(XRT_S64, a, 2, 2), IN(XRT_S64, b, 2, 2)};
  tu_out o;
  TU_RUN_OK(C(state), p, 2, in, &o);
  TU_ASSERT_OUT(&o, 0, int64_t, 4, 4, 4, 4);
  tu_out_free(&o);
}

static void test_map_region_and_types(void **state) {
  /* Two ops and a type change: r = convert(x * y + x) to f64. */
  const char *p =
      "func.func @main(%a: tensor<3xf32>, %b: tensor<3xf32>) -> tensor<3xf64> {\n"
      "  %r = \"stablehlo.map\"(%a, %b) ({\n"
      "  ^bb0(%x: tensor<f32>, %y: tensor<f32>):\n"
      "    %0 = stablehlo.multiply %x, %y : tensor<f32>\n"
      "    %1 = stablehlo.add %0, %x : tensor<f32>\n"
      "    %2 = stablehlo.convert %1 : (tensor<f32>) -> tensor<f64>\n"
      "    stablehlo.return %2 : tensor<f64>\n"
      "  }) {dimensions = array<i64: 0>} : (tensor<3xf32>, tensor<3xf32>) -> tensor<3xf64>\n"
      "  func.return %r : tensor<3xf64>\n}\n";
  const float a[3] = {1, 2, -0.5f}, b[3] = {3, 0.25f, 4};
  tu_in in[2] = {IN(XRT_F32, a, 3), IN(XRT_F32, b, 3)};
  tu_out o;
  TU_RUN_OK(C(state), p, 2, in, &o);
  TU_ASSERT_OUT(&o, 0, double, 4, 2.5, -2.5);
  tu_out_free(&o);
}

static void test_map_empty(void **state) {
  const char *p =
      "func.func @main(%a: tensor<0x3xi32>) -> tensor<0x3xi32> {\n"
      "  %r = \"stablehlo.map\"(%a) ({\n"
      "  ^bb0(%x: tensor<i32>):\n"
      "    %c = stablehlo.constant dense<1> : tensor<i32>\n"
      "    %0 = stablehlo.add %x, %c : tensor<i32>\n"
      "    stablehlo.return %0 : tensor<i32>\n"
      "  }) {dimensions = array<i64: 0, 1>} : (tensor<0x3xi32>) -> tensor<0x3xi32>\n"
      "  func.return %r : tensor<0x3xi32>\n}\n";
  const int32_t dummy = 0;
  tu_in in = IN(XRT_S32, &dummy, 0, 3);
  tu_out o;
  TU_RUN_OK(C(state), p, 1, &in, &o);
  assert_int_equal(o.bytes[0], 0);
  tu_assert_shape(&o, 0, TU_SHAPE(XRT_S32, 0, 3));
  tu_out_free(&o);
}

/* ---- sort ---- */

/* sort of one tensor<NxT> with comparator body BODY over %x, %y. */
static char sort_buf[4096];
static const char *sort1(const char *t, const char *et, const char *body,
                         const char *attrs) {
  snprintf(sort_buf, sizeof sort_buf,
           "func.func @main(%%a: %s) -> %s {\n"
           "  %%r = \"stablehlo.sort\"(%%a) ({\n"
           "  ^bb0(%%x: tensor<%s>, %%y: tensor<%s>):\n%s"
           "  }) {%s} : (%s) -> %s\n"
           "  func.return %%r : %s\n}\n",
           t, t, et, et, body, attrs, t, t, t);
  return sort_buf;
}

static void test_sort_total_order_nans(void **state) {
  const float nan = tu_bits_f32(0x7fc00000u), nnan = tu_bits_f32(0xffc00000u);
  const float a[7] = {3, nan, -1, nnan, 0.0f, -0.0f, -INFINITY};
  /* The fast path (one compare) and a comparator region (two ops). */
  const char *bodies[2] = {
      "    %p = stablehlo.compare LT, %x, %y, TOTALORDER : (tensor<f32>, tensor<f32>) -> tensor<i1>\n"
      "    stablehlo.return %p : tensor<i1>\n",
      "    %p = stablehlo.compare GT, %y, %x, TOTALORDER : (tensor<f32>, tensor<f32>) -> tensor<i1>\n"
      "    %q = stablehlo.not %p : tensor<i1>\n"
      "    %r = stablehlo.not %q : tensor<i1>\n"
      "    stablehlo.return %r : tensor<i1>\n"};
  for (int k = 0; k < 2; k++) {
    tu_in in = IN(XRT_F32, a, 7);
    tu_out o;
    TU_RUN_OK(C(state), sort1("tensor<7xf32>", "f32", bodies[k],
                              "dimension = 0 : i64"), 1, &in, &o);
    const uint32_t want[7] = {0xffc00000u, 0xff800000u, tu_f32_bits(-1),
                              0x80000000u, 0, tu_f32_bits(3), 0x7fc00000u};
    assert_int_equal(o.bytes[0], sizeof want);
    assert_memory_equal(o.data[0], want, sizeof want);
    tu_out_free(&o);
  }
}

static void test_sort_stable_equal_keys(void **state) {
  /* Keys sorted descending; equal keys keep their input order. */
  const char *p =
      "func.func @main(%k: tensor<6xi32>, %v: tensor<6xi32>) -> (tensor<6xi32>, tensor<6xi32>) {\n"
      "  %r:2 = \"stablehlo.sort\"(%k, %v) ({\n"
      "  ^bb0(%a: tensor<i32>, %b: tensor<i32>, %c: tensor<i32>, %d: tensor<i32>):\n"
      "    %p = stablehlo.compare GT, %a, %b, SIGNED : (tensor<i32>, tensor<i32>) -> tensor<i1>\n"
      "    stablehlo.return %p : tensor<i1>\n"
      "  }) {dimension = 0 : i64, is_stable = true} : (tensor<6xi32>, tensor<6xi32>) -> (tensor<6xi32>, tensor<6xi32>)\n"
      "  func.return %r#0, %r#1 : tensor<6xi32>, tensor<6xi32>\n}\n";
  const int32_t k[6] = {1, 2, 1, 3, 2, 1}, v[6] = {0, 1, 2, 3, 4, 5};
  tu_in in[2] = {IN(XRT_S32, k, 6), IN(XRT_S32, v, 6)};
  tu_out o;
  TU_RUN_OK(C(state), p, 2, in, &o);
  TU_ASSERT_OUT(&o, 0, int32_t, 3, 2, 2, 1, 1, 1);
  TU_ASSERT_OUT(&o, 1, int32_t, 3, 1, 4, 0, 2, 5);
  tu_out_free(&o);
}

static void test_sort_argsort_by_second(void **state) {
  /* Sorts by the second operand (unsigned), carrying the first along. */
  const char *p =
      "func.func @main(%i: tensor<4xi64>, %k: tensor<4xui8>) -> (tensor<4xi64>, tensor<4xui8>) {\n"
      "  %r:2 = \"stablehlo.sort\"(%i, %k) ({\n"
      "  ^bb0(%a: tensor<i64>, %b: tensor<i64>, %c: tensor<ui8>, %d: tensor<ui8>):\n"
      "    %p = stablehlo.compare LT, %c, %d : (tensor<ui8>, tensor<ui8>) -> tensor<i1>\n"
      "    stablehlo.return %p : tensor<i1>\n"
      "  }) : (tensor<4xi64>, tensor<4xui8>) -> (tensor<4xi64>, tensor<4xui8>)\n"
      "  func.return %r#0, %r#1 : tensor<4xi64>, tensor<4xui8>\n}\n";
  const int64_t i[4] = {0, 1, 2, 3};
  const uint8_t k[4] = {200, 7, 255, 0};
  tu_in in[2] = {IN(XRT_S64, i, 4), IN(XRT_U8, k, 4)};
  tu_out o;
  TU_RUN_OK(C(state), p, 2, in, &o);
  TU_ASSERT_OUT(&o, 0, int64_t, 3, 1, 0, 2);
  TU_ASSERT_OUT(&o, 1, uint8_t, 0, 7, 200, 255);
  tu_out_free(&o);
}

static void test_sort_dimensions(void **state) {
  const int32_t a[6] = {3, 1, 2, 0, 5, -4};
  const char *body =
      "    %p = stablehlo.compare LT, %x, %y : (tensor<i32>, tensor<i32>) -> tensor<i1>\n"
      "    stablehlo.return %p : tensor<i1>\n";
  const char *attrs[3] = {"dimension = 1 : i64", "dimension = -1 : i64",
                          "dimension = 0 : i64"};
  for (int k = 0; k < 3; k++) {
    tu_in in = IN(XRT_S32, a, 2, 3);
    tu_out o;
    TU_RUN_OK(C(state), sort1("tensor<2x3xi32>", "i32", body, attrs[k]), 1,
              &in, &o);
    if (k < 2) TU_ASSERT_OUT(&o, 0, int32_t, 1, 2, 3, -4, 0, 5);
    else TU_ASSERT_OUT(&o, 0, int32_t, 0, 1, -4, 3, 5, 2);
    tu_out_free(&o);
  }
}

static void test_sort_empty_and_single(void **state) {
  const char *body =
      "    %p = stablehlo.compare LT, %x, %y : (tensor<f64>, tensor<f64>) -> tensor<i1>\n"
      "    stablehlo.return %p : tensor<i1>\n";
  const double d = 2.5;
  tu_in in = IN(XRT_F64, &d, 0);
  tu_out o;
  TU_RUN_OK(C(state), sort1("tensor<0xf64>", "f64", body, "dimension = 0 : i64"),
            1, &in, &o);
  assert_int_equal(o.bytes[0], 0);
  tu_out_free(&o);
  in = IN(XRT_F64, &d, 1);
  TU_RUN_OK(C(state), sort1("tensor<1xf64>", "f64", body, "dimension = 0 : i64"),
            1, &in, &o);
  TU_ASSERT_OUT(&o, 0, double, 2.5);
  tu_out_free(&o);
}

static void test_sort_long_reverse(void **state) {
  /* 100 descending values sort to ascending (several merge passes). */
  int32_t a[100], want[100];
  for (int i = 0; i < 100; i++) a[i] = 99 - i, want[i] = i;
  const char *body =
      "    %p = stablehlo.compare LT, %x, %y : (tensor<i32>, tensor<i32>) -> tensor<i1>\n"
      "    stablehlo.return %p : tensor<i1>\n";
  tu_in in = IN(XRT_S32, a, 100);
  tu_out o;
  TU_RUN_OK(C(state), sort1("tensor<100xi32>", "i32", body, "dimension = 0 : i64"),
            1, &in, &o);
  assert_int_equal(o.bytes[0], sizeof want);
  assert_memory_equal(o.data[0], want, sizeof want);
  tu_out_free(&o);
}

/* ---- composite ---- */

static void test_composite_calls_decomposition(void **state) {
  const char *p =
      "func.func private @add_n.impl(%x: tensor<2xi32>) -> tensor<2xi32> {\n"
      "  %c = stablehlo.constant dense<[2, 3]> : tensor<2xi32>\n"
      "  %0 = stablehlo.add %x, %c : tensor<2xi32>\n"
      "  func.return %0 : tensor<2xi32>\n}\n"
      "func.func @main(%a: tensor<2xi32>) -> tensor<2xi32> {\n"
      "  %0 = stablehlo.composite \"my.add_n\" %a {composite_attributes = {n = 2 : i64}, "
      "decomposition = @add_n.impl} : (tensor<2xi32>) -> tensor<2xi32>\n"
      "  %1 = stablehlo.composite \"my.add_n\" %0 {decomposition = @add_n.impl} "
      ": (tensor<2xi32>) -> tensor<2xi32>\n"
      "  func.return %1 : tensor<2xi32>\n}\n";
  const int32_t a[2] = {1, -10};
  tu_in in = IN(XRT_S32, a, 2);
  tu_out o;
  TU_RUN_OK(C(state), p, 1, &in, &o);
  TU_ASSERT_OUT(&o, 0, int32_t, 5, -4);
  tu_out_free(&o);
}

/* ---- tuples and tokens ---- */

static void test_nested_tuple_through_while(void **state) {
  /* Loop state tuple<i, tuple<x>>: three rounds of x = 2x + i. */
  const char *p =
      "func.func @main(%x: tensor<2xf32>) -> (tensor<2xf32>, tensor<i32>) {\n"
      "  %i0 = stablehlo.constant dense<0> : tensor<i32>\n"
      "  %in = stablehlo.tuple %x : tuple<tensor<2xf32>>\n"
      "  %t0 = stablehlo.tuple %i0, %in : tuple<tensor<i32>, tuple<tensor<2xf32>>>\n"
      "  %r = stablehlo.while(%s = %t0) : tuple<tensor<i32>, tuple<tensor<2xf32>>>\n"
      "  cond {\n"
      "    %i = stablehlo.get_tuple_element %s[0] : (tuple<tensor<i32>, tuple<tensor<2xf32>>>) -> tensor<i32>\n"
      "    %n = stablehlo.constant dense<3> : tensor<i32>\n"
      "    %c = stablehlo.compare LT, %i, %n : (tensor<i32>, tensor<i32>) -> tensor<i1>\n"
      "    stablehlo.return %c : tensor<i1>\n"
      "  } do {\n"
      "    %i = stablehlo.get_tuple_element %s[0] : (tuple<tensor<i32>, tuple<tensor<2xf32>>>) -> tensor<i32>\n"
      "    %u = stablehlo.get_tuple_element %s[1] : (tuple<tensor<i32>, tuple<tensor<2xf32>>>) -> tuple<tensor<2xf32>>\n"
      "    %v = stablehlo.get_tuple_element %u[0] : (tuple<tensor<2xf32>>) -> tensor<2xf32>\n"
      "    %f = stablehlo.convert %i : (tensor<i32>) -> tensor<f32>\n"
      "    %fb = stablehlo.broadcast_in_dim %f, dims = [] : (tensor<f32>) -> tensor<2xf32>\n"
      "    %w0 = stablehlo.add %v, %v : tensor<2xf32>\n"
      "    %w = stablehlo.add %w0, %fb : tensor<2xf32>\n"
      "    %one = stablehlo.constant dense<1> : tensor<i32>\n"
      "    %j = stablehlo.add %i, %one : tensor<i32>\n"
      "    %nu = stablehlo.tuple %w : tuple<tensor<2xf32>>\n"
      "    %ns = stablehlo.tuple %j, %nu : tuple<tensor<i32>, tuple<tensor<2xf32>>>\n"
      "    stablehlo.return %ns : tuple<tensor<i32>, tuple<tensor<2xf32>>>\n"
      "  }\n"
      "  %ri = stablehlo.get_tuple_element %r[0] : (tuple<tensor<i32>, tuple<tensor<2xf32>>>) -> tensor<i32>\n"
      "  %ru = stablehlo.get_tuple_element %r[1] : (tuple<tensor<i32>, tuple<tensor<2xf32>>>) -> tuple<tensor<2xf32>>\n"
      "  %rv = stablehlo.get_tuple_element %ru[0] : (tuple<tensor<2xf32>>) -> tensor<2xf32>\n"
      "  func.return %rv, %ri : tensor<2xf32>, tensor<i32>\n}\n";
  const float x[2] = {1, -0.5f};
  tu_in in = IN(XRT_F32, x, 2);
  tu_out o;
  TU_RUN_OK(C(state), p, 1, &in, &o);
  /* x: 1 -> 2 -> 5 -> 12; -0.5 -> -1 -> -1 -> 0 */
  TU_ASSERT_OUT(&o, 0, float, 12, 0);
  TU_ASSERT_OUT(&o, 1, int32_t, 3);
  tu_out_free(&o);
}

static void test_tuple_through_if_call_and_barrier(void **state) {
  /* A tuple returned by an if, passed to a function with a token, and
   * through optimization_barrier together with a token. */
  const char *p =
      "func.func private @swap(%t: tuple<tensor<i64>, tensor<3xi8>>, %k: !stablehlo.token)"
      " -> (tuple<tensor<3xi8>, tensor<i64>>, !stablehlo.token) {\n"
      "  %a = stablehlo.get_tuple_element %t[0] : (tuple<tensor<i64>, tensor<3xi8>>) -> tensor<i64>\n"
      "  %b = stablehlo.get_tuple_element %t[1] : (tuple<tensor<i64>, tensor<3xi8>>) -> tensor<3xi8>\n"
      "  %s = stablehlo.tuple %b, %a : tuple<tensor<3xi8>, tensor<i64>>\n"
      "  %k2 = stablehlo.after_all %k : !stablehlo.token\n"
      "  func.return %s, %k2 : tuple<tensor<3xi8>, tensor<i64>>, !stablehlo.token\n}\n"
      "func.func @main(%p: tensor<i1>, %n: tensor<i64>, %v: tensor<3xi8>) -> (tensor<3xi8>, tensor<i64>) {\n"
      "  %t = \"stablehlo.if\"(%p) ({\n"
      "    %x = stablehlo.tuple %n, %v : tuple<tensor<i64>, tensor<3xi8>>\n"
      "    stablehlo.return %x : tuple<tensor<i64>, tensor<3xi8>>\n"
      "  }, {\n"
      "    %m = stablehlo.negate %n : tensor<i64>\n"
      "    %x = stablehlo.tuple %m, %v : tuple<tensor<i64>, tensor<3xi8>>\n"
      "    stablehlo.return %x : tuple<tensor<i64>, tensor<3xi8>>\n"
      "  }) : (tensor<i1>) -> tuple<tensor<i64>, tensor<3xi8>>\n"
      "  %k = stablehlo.after_all : !stablehlo.token\n"
      "  %s:2 = func.call @swap(%t, %k) : (tuple<tensor<i64>, tensor<3xi8>>, !stablehlo.token)"
      " -> (tuple<tensor<3xi8>, tensor<i64>>, !stablehlo.token)\n"
      "  %b:2 = stablehlo.optimization_barrier %s#0, %s#1 : tuple<tensor<3xi8>, tensor<i64>>, !stablehlo.token\n"
      "  %e0 = stablehlo.get_tuple_element %b#0[0] : (tuple<tensor<3xi8>, tensor<i64>>) -> tensor<3xi8>\n"
      "  %e1 = stablehlo.get_tuple_element %b#0[1] : (tuple<tensor<3xi8>, tensor<i64>>) -> tensor<i64>\n"
      "  func.return %e0, %e1 : tensor<3xi8>, tensor<i64>\n}\n";
  const int64_t n = 41;
  const int8_t v[3] = {1, -2, 3};
  for (int pr = 0; pr < 2; pr++) {
    const uint8_t pred = (uint8_t)pr;
    tu_in in[3] = {IN0(XRT_PRED, &pred), IN0(XRT_S64, &n), IN(XRT_S8, v, 3)};
    tu_out o;
    TU_RUN_OK(C(state), p, 3, in, &o);
    TU_ASSERT_OUT(&o, 0, int8_t, 1, -2, 3);
    TU_ASSERT_OUT(&o, 1, int64_t, pr ? 41 : -41);
    tu_out_free(&o);
  }
}

static void test_tuple_empty_and_token_tuple(void **state) {
  const char *p =
      "func.func @main(%x: tensor<f32>) -> tensor<f32> {\n"
      "  %e = stablehlo.tuple : tuple<>\n"
      "  %k = stablehlo.after_all : !stablehlo.token\n"
      "  %t = stablehlo.tuple %e, %k, %x : tuple<tuple<>, !stablehlo.token, tensor<f32>>\n"
      "  %y = stablehlo.get_tuple_element %t[2] : (tuple<tuple<>, !stablehlo.token, tensor<f32>>) -> tensor<f32>\n"
      "  func.return %y : tensor<f32>\n}\n";
  const float x = -7.25f;
  tu_in in = IN0(XRT_F32, &x);
  tu_out o;
  TU_RUN_OK(C(state), p, 1, &in, &o);
  TU_ASSERT_OUT(&o, 0, float, -7.25f);
  tu_out_free(&o);
}

/* ---- infeed, outfeed, send, recv through host functions ---- */

typedef struct io_log {
  int calls;
  int num_inputs, num_outputs;
  int32_t seen[4];
  int64_t next;
} io_log;

static xrt_status host_infeed(void *user, xrt_host_call *call) {
  io_log *l = (io_log *)user;
  l->calls++;
  l->num_inputs = call->num_inputs;
  l->num_outputs = call->num_outputs;
  if (call->num_outputs != 1 || call->outputs[0].bytes != 2 * sizeof(int64_t))
    return xrt_host_call_fail(call, XRT_INTERNAL, "unexpected infeed");
  int64_t *o = (int64_t *)call->outputs[0].data;
  o[0] = l->next++;
  o[1] = l->next++;
  return XRT_OK;
}

static xrt_status host_outfeed(void *user, xrt_host_call *call) {
  io_log *l = (io_log *)user;
  l->calls++;
  l->num_inputs = call->num_inputs;
  l->num_outputs = call->num_outputs;
  if (call->num_inputs != 1 || call->inputs[0].bytes != 2 * sizeof(int64_t) ||
      call->inputs[0].shape.dtype != XRT_S64)
    return xrt_host_call_fail(call, XRT_INTERNAL, "unexpected outfeed");
  const int64_t *in = (const int64_t *)call->inputs[0].data;
  l->seen[0] = (int32_t)in[0];
  l->seen[1] = (int32_t)in[1];
  return XRT_OK;
}

static void test_infeed_outfeed_host(void **state) {
  io_log in_log, out_log;
  memset(&in_log, 0, sizeof in_log);
  memset(&out_log, 0, sizeof out_log);
  in_log.next = 5;
  assert_int_equal(xrt_client_register_host_function(C(state), "xrt.infeed",
                                                     host_infeed, &in_log), XRT_OK);
  assert_int_equal(xrt_client_register_host_function(C(state), "xrt.outfeed",
                                                     host_outfeed, &out_log), XRT_OK);
  const char *p =
      "func.func @main() -> tensor<2xi64> {\n"
      "  %k = stablehlo.after_all : !stablehlo.token\n"
      "  %a:2 = \"stablehlo.infeed\"(%k) {infeed_config = \"\"} : (!stablehlo.token) -> (tensor<2xi64>, !stablehlo.token)\n"
      "  %b:2 = \"stablehlo.infeed\"(%a#1) : (!stablehlo.token) -> (tensor<2xi64>, !stablehlo.token)\n"
      "  %s = stablehlo.add %a#0, %b#0 : tensor<2xi64>\n"
      "  %t = \"stablehlo.outfeed\"(%s, %b#1) {outfeed_config = \"\"} : (tensor<2xi64>, !stablehlo.token) -> !stablehlo.token\n"
      "  func.return %s : tensor<2xi64>\n}\n";
  tu_out o;
  TU_RUN_OK(C(state), p, 0, NULL, &o);
  /* infeeds give [5, 6] then [7, 8] */
  TU_ASSERT_OUT(&o, 0, int64_t, 12, 14);
  tu_out_free(&o);
  assert_int_equal(in_log.calls, 2);
  assert_int_equal(in_log.num_inputs, 0);
  assert_int_equal(in_log.num_outputs, 1);
  assert_int_equal(out_log.calls, 1);
  assert_int_equal(out_log.num_inputs, 1);
  assert_int_equal(out_log.num_outputs, 0);
  assert_int_equal(out_log.seen[0], 12);
  assert_int_equal(out_log.seen[1], 14);
}

static xrt_status host_send(void *user, xrt_host_call *call) {
  io_log *l = (io_log *)user;
  l->calls++;
  if (call->num_inputs != 1 || call->num_outputs != 0)
    return xrt_host_call_fail(call, XRT_INTERNAL, "unexpected send");
  memcpy(&l->next, call->inputs[0].data, sizeof l->next);
  return XRT_OK;
}

static xrt_status host_recv(void *user, xrt_host_call *call) {
  io_log *l = (io_log *)user;
  l->calls++;
  if (call->num_inputs != 0 || call->num_outputs != 1)
    return xrt_host_call_fail(call, XRT_INTERNAL, "unexpected recv");
  int64_t v = l->next * 10;
  memcpy(call->outputs[0].data, &v, sizeof v);
  return XRT_OK;
}

static void test_send_recv_host(void **state) {
  io_log log;
  memset(&log, 0, sizeof log);
  assert_int_equal(xrt_client_register_host_function(C(state), "xrt.send",
                                                     host_send, &log), XRT_OK);
  assert_int_equal(xrt_client_register_host_function(C(state), "xrt.recv",
                                                     host_recv, &log), XRT_OK);
  const char *p =
      "func.func @main(%x: tensor<i64>) -> tensor<i64> {\n"
      "  %k = stablehlo.after_all : !stablehlo.token\n"
      "  %t = \"stablehlo.send\"(%x, %k) {channel_handle = #stablehlo.channel_handle<handle = 1, type = 2>, "
      "is_host_transfer = true} : (tensor<i64>, !stablehlo.token) -> !stablehlo.token\n"
      "  %r:2 = \"stablehlo.recv\"(%t) {channel_handle = #stablehlo.channel_handle<handle = 1, type = 3>, "
      "is_host_transfer = true} : (!stablehlo.token) -> (tensor<i64>, !stablehlo.token)\n"
      "  func.return %r#0 : tensor<i64>\n}\n";
  const int64_t x = -4;
  tu_in in = IN0(XRT_S64, &x);
  tu_out o;
  TU_RUN_OK(C(state), p, 1, &in, &o);
  TU_ASSERT_OUT(&o, 0, int64_t, -40);
  tu_out_free(&o);
  assert_int_equal(log.calls, 2);
}

static void test_infeed_without_host_function(void **state) {
  /* A fresh client: nothing registered under xrt.infeed. */
  xrt_client *c = NULL;
  (void)state;
  assert_int_equal(xrt_client_create(NULL, &c), XRT_OK);
  expect_error(c,
               "func.func @main() -> tensor<2xi64> {\n"
               "  %k = stablehlo.after_all : !stablehlo.token\n"
               "  %a:2 = \"stablehlo.infeed\"(%k) : (!stablehlo.token) -> (tensor<2xi64>, !stablehlo.token)\n"
               "  func.return %a#0 : tensor<2xi64>\n}\n",
               XRT_NOT_FOUND, "xrt.infeed");
  xrt_client_release(c);
}

/* ---- chlo.scan (generic form) ---- */

#define SCAN_PROG(ATTR)                                                       \
  "func.func @main(%a: tensor<2x3xi32>, %z: tensor<2xi32>) -> (tensor<2x3xi32>, tensor<2xi32>) {\n" \
  "  %r:2 = \"chlo.scan\"(%a, %z) ({\n"                                       \
  "  ^bb0(%x: tensor<2xi32>, %c: tensor<2xi32>):\n"                           \
  "    %s = stablehlo.add %x, %c : tensor<2xi32>\n"                           \
  "    stablehlo.return %s, %s : tensor<2xi32>, tensor<2xi32>\n"              \
  "  }) {dimension = 1 : i64, " ATTR " operandSegmentSizes = array<i32: 1, 1>} : " \
  "(tensor<2x3xi32>, tensor<2xi32>) -> (tensor<2x3xi32>, tensor<2xi32>)\n"     \
  "  func.return %r#0, %r#1 : tensor<2x3xi32>, tensor<2xi32>\n}\n"

static void test_scan_cumsum_and_reverse(void **state) {
  const char *progs[2] = {SCAN_PROG(""), SCAN_PROG("is_reverse = true,")};
  const int32_t a[6] = {1, 2, 3, 4, 5, 6}, z[2] = {100, 0};
  for (int rev = 0; rev < 2; rev++) {
    tu_in in[2] = {IN(XRT_S32, a, 2, 3), IN(XRT_S32, z, 2)};
    tu_out o;
    TU_RUN_OK(C(state), progs[rev], 2, in, &o);
    if (rev) TU_ASSERT_OUT(&o, 0, int32_t, 106, 105, 103, 15, 11, 6);
    else TU_ASSERT_OUT(&o, 0, int32_t, 101, 103, 106, 4, 9, 15);
    TU_ASSERT_OUT(&o, 1, int32_t, 106, 15);
    tu_out_free(&o);
  }
}

static void test_scan_empty_keeps_init(void **state) {
  const char *p =
      "func.func @main(%a: tensor<0xf32>, %z: tensor<f32>) -> (tensor<0xf32>, tensor<f32>) {\n"
      "  %r:2 = \"chlo.scan\"(%a, %z) ({\n"
      "  ^bb0(%x: tensor<f32>, %c: tensor<f32>):\n"
      "    %s = stablehlo.multiply %x, %c : tensor<f32>\n"
      "    stablehlo.return %s, %s : tensor<f32>, tensor<f32>\n"
      "  }) {dimension = 0 : i64} : (tensor<0xf32>, tensor<f32>) -> (tensor<0xf32>, tensor<f32>)\n"
      "  func.return %r#0, %r#1 : tensor<0xf32>, tensor<f32>\n}\n";
  const float z = 2.5f;
  tu_in in[2] = {IN(XRT_F32, &z, 0), IN0(XRT_F32, &z)};
  tu_out o;
  TU_RUN_OK(C(state), p, 2, in, &o);
  assert_int_equal(o.bytes[0], 0);
  TU_ASSERT_OUT(&o, 1, float, 2.5f);
  tu_out_free(&o);
}

/* ---- verifier ---- */

static void test_verify_if_case(void **state) {
  expect_error(C(state),
               "func.func @main(%p: tensor<i1>) -> tensor<i32> {\n"
               "  %r = \"stablehlo.if\"(%p) ({\n"
               "    %a = stablehlo.constant dense<1> : tensor<i32>\n"
               "    stablehlo.return %a : tensor<i32>\n"
               "  }, {\n"
               "    %b = stablehlo.constant dense<1> : tensor<i64>\n"
               "    stablehlo.return %b : tensor<i64>\n"
               "  }) : (tensor<i1>) -> tensor<i32>\n"
               "  func.return %r : tensor<i32>\n}\n",
               XRT_INVALID_ARGUMENT, "<input>:2:8: stablehlo.if: false branch region returns");
  expect_error(C(state),
               "func.func @main(%i: tensor<i64>) -> tensor<i32> {\n"
               "  %r = \"stablehlo.case\"(%i) ({\n"
               "    %a = stablehlo.constant dense<1> : tensor<i32>\n"
               "    stablehlo.return %a : tensor<i32>\n"
               "  }) : (tensor<i64>) -> tensor<i32>\n"
               "  func.return %r : tensor<i32>\n}\n",
               XRT_INVALID_ARGUMENT, "index must be tensor<i32>");
}

static void test_verify_sort(void **state) {
  const char *body =
      "    %p = stablehlo.compare LT, %x, %y : (tensor<i32>, tensor<i32>) -> tensor<i1>\n"
      "    stablehlo.return %p : tensor<i1>\n";
  expect_error(C(state), sort1("tensor<3xi32>", "i32", body, "dimension = 1 : i64"),
               XRT_INVALID_ARGUMENT, "dimension 1 is out of range for rank 1");
  /* The spec's (C4) -R <= dimension < R leaves no dimension for rank 0. */
  expect_error(C(state), sort1("tensor<i32>", "i32", body, "dimension = 0 : i64"),
               XRT_INVALID_ARGUMENT, "out of range for rank 0");
  const char *badbody =
      "    %p = stablehlo.compare LT, %x, %y : (tensor<i64>, tensor<i64>) -> tensor<i1>\n"
      "    stablehlo.return %p : tensor<i1>\n";
  expect_error(C(state), sort1("tensor<3xi32>", "i64", badbody, "dimension = 0 : i64"),
               XRT_INVALID_ARGUMENT, "comparator region argument 0 has the wrong type");
}

static void test_verify_map(void **state) {
  expect_error(C(state),
               "func.func @main(%a: tensor<2x2xi32>) -> tensor<2x2xi32> {\n"
               "  %r = \"stablehlo.map\"(%a) ({\n"
               "  ^bb0(%x: tensor<i32>):\n"
               "    stablehlo.return %x : tensor<i32>\n"
               "  }) {dimensions = array<i64: 1, 0>} : (tensor<2x2xi32>) -> tensor<2x2xi32>\n"
               "  func.return %r : tensor<2x2xi32>\n}\n",
               XRT_INVALID_ARGUMENT, "dimensions must be [0, ..., 1]");
  expect_error(C(state),
               "func.func @main(%a: tensor<2xi32>) -> tensor<2xi32> {\n"
               "  %r = \"stablehlo.map\"(%a) ({\n"
               "  ^bb0(%x: tensor<2xi32>):\n"
               "    stablehlo.return %x : tensor<2xi32>\n"
               "  }) {dimensions = array<i64: 0>} : (tensor<2xi32>) -> tensor<2xi32>\n"
               "  func.return %r : tensor<2xi32>\n}\n",
               XRT_INVALID_ARGUMENT, "computation region argument 0 has the wrong type");
}

static void test_verify_tuple_and_composite(void **state) {
  expect_error(C(state),
               "func.func @main(%x: tensor<f32>) -> tensor<f32> {\n"
               "  %t = stablehlo.tuple %x : tuple<tensor<f32>>\n"
               "  %y = stablehlo.get_tuple_element %t[1] : (tuple<tensor<f32>>) -> tensor<f32>\n"
               "  func.return %y : tensor<f32>\n}\n",
               XRT_INVALID_ARGUMENT, "<input>:3:");
  expect_error(C(state),
               "func.func @main(%x: tensor<f32>) -> tensor<f32> {\n"
               "  %t = stablehlo.tuple %x : tuple<tensor<f32>>\n"
               "  %y = stablehlo.get_tuple_element %t[1] : (tuple<tensor<f32>>) -> tensor<f32>\n"
               "  func.return %y : tensor<f32>\n}\n",
               XRT_INVALID_ARGUMENT, "index 1 is out of range");
  expect_error(C(state),
               "func.func @main(%x: tensor<f32>) -> tensor<f32> {\n"
               "  %y = stablehlo.composite \"a.b\" %x {decomposition = @nowhere} : (tensor<f32>) -> tensor<f32>\n"
               "  func.return %y : tensor<f32>\n}\n",
               XRT_INVALID_ARGUMENT, "decomposition @nowhere is not a function");
  expect_error(C(state),
               "func.func private @d(%x: tensor<f64>) -> tensor<f64> {\n"
               "  func.return %x : tensor<f64>\n}\n"
               "func.func @main(%x: tensor<f32>) -> tensor<f32> {\n"
               "  %y = stablehlo.composite \"a.b\" %x {decomposition = @d} : (tensor<f32>) -> tensor<f32>\n"
               "  func.return %y : tensor<f32>\n}\n",
               XRT_INVALID_ARGUMENT, "operand 0 has the wrong type for @d");
}

static void test_verify_tokens(void **state) {
  expect_error(C(state),
               "func.func @main(%x: tensor<f32>) -> tensor<f32> {\n"
               "  %k = \"stablehlo.after_all\"(%x) : (tensor<f32>) -> !stablehlo.token\n"
               "  func.return %x : tensor<f32>\n}\n",
               XRT_INVALID_ARGUMENT, "operand 0 must be a !stablehlo.token");
  expect_error(C(state),
               "func.func @main() -> tensor<2xi64> {\n"
               "  %k = stablehlo.after_all : !stablehlo.token\n"
               "  %a = \"stablehlo.infeed\"(%k) : (!stablehlo.token) -> tensor<2xi64>\n"
               "  func.return %a : tensor<2xi64>\n}\n",
               XRT_INVALID_ARGUMENT, "<input>:3:8: stablehlo.infeed: the last result must be a !stablehlo.token");
}

static void test_verify_scan(void **state) {
  expect_error(C(state),
               "func.func @main(%a: tensor<2xi32>, %i: tensor<i32>) -> tensor<i32> {\n"
               "  %r:2 = \"chlo.scan\"(%a, %i) ({\n"
               "  ^bb0(%x: tensor<i32>, %c: tensor<i32>):\n"
               "    %s = stablehlo.add %x, %c : tensor<i32>\n"
               "    stablehlo.return %s, %s : tensor<i32>, tensor<i32>\n"
               "  }) {dimension = 3 : i64} : (tensor<2xi32>, tensor<i32>) -> (tensor<2xi32>, tensor<i32>)\n"
               "  func.return %r#1 : tensor<i32>\n}\n",
               XRT_INVALID_ARGUMENT, "<input>:2:10: chlo.scan: dimension 3 is out of range");
  expect_error(C(state),
               "func.func @main(%a: tensor<2xi32>, %i: tensor<i32>) -> tensor<i64> {\n"
               "  %r:2 = \"chlo.scan\"(%a, %i) ({\n"
               "  ^bb0(%x: tensor<i32>, %c: tensor<i32>):\n"
               "    %s = stablehlo.convert %x : (tensor<i32>) -> tensor<i64>\n"
               "    stablehlo.return %x, %s : tensor<i32>, tensor<i64>\n"
               "  }) {dimension = 0 : i64, operandSegmentSizes = array<i32: 1, 1>} : "
               "(tensor<2xi32>, tensor<i32>) -> (tensor<2xi32>, tensor<i64>)\n"
               "  func.return %r#1 : tensor<i64>\n}\n",
               XRT_INVALID_ARGUMENT, "carry 0 must keep the type of its init");
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_if_branches),
      cmocka_unit_test(test_case_index_and_default),
      cmocka_unit_test(test_case_single_branch),
      cmocka_unit_test(test_map_single_op),
      cmocka_unit_test(test_map_region_and_types),
      cmocka_unit_test(test_map_empty),
      cmocka_unit_test(test_sort_total_order_nans),
      cmocka_unit_test(test_sort_stable_equal_keys),
      cmocka_unit_test(test_sort_argsort_by_second),
      cmocka_unit_test(test_sort_dimensions),
      cmocka_unit_test(test_sort_empty_and_single),
      cmocka_unit_test(test_sort_long_reverse),
      cmocka_unit_test(test_composite_calls_decomposition),
      cmocka_unit_test(test_nested_tuple_through_while),
      cmocka_unit_test(test_tuple_through_if_call_and_barrier),
      cmocka_unit_test(test_tuple_empty_and_token_tuple),
      cmocka_unit_test(test_infeed_outfeed_host),
      cmocka_unit_test(test_send_recv_host),
      cmocka_unit_test(test_infeed_without_host_function),
      cmocka_unit_test(test_scan_cumsum_and_reverse),
      cmocka_unit_test(test_scan_empty_keeps_init),
      cmocka_unit_test(test_verify_if_case),
      cmocka_unit_test(test_verify_sort),
      cmocka_unit_test(test_verify_map),
      cmocka_unit_test(test_verify_tuple_and_composite),
      cmocka_unit_test(test_verify_tokens),
      cmocka_unit_test(test_verify_scan),
      cmocka_unit_test(test_replica_and_partition_id),
  };
  return cmocka_run_group_tests(tests, tu_setup_client, tu_teardown_client);
}
