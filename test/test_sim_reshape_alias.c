/*
 * test_sim_reshape_alias.c - a reshape the fusion pass leaves alone takes
 * no memory of its own: its result is its operand's memory
 * (src/sim/lower.c, sim_lower_reshape; src/sim/plan.c, sim_root), which
 * then lives as long as the reshape is used.  Reshapes feed dots,
 * reductions, while loops (state, pass-through, state updated slice by
 * slice), func.call, case branches and the entry's results; every result
 * is checked against values computed here; each program runs twice on
 * the same executable frame.  MIT licensed.
 */
#include "test_util.h"

/* c[m x n] = a[m x k] b[k x n] (small integers: exact in f32) */
static void mm(const float *a, const float *b, float *c, int m, int k, int n) {
  for (int i = 0; i < m; i++)
    for (int j = 0; j < n; j++) {
      float s = 0;
      for (int t = 0; t < k; t++) s += a[i * k + t] * b[t * n + j];
      c[i * n + j] = s;
    }
}

static void assert_f32(const tu_out *o, int i, const float *want, size_t n) {
  assert_true(i < o->n);
  assert_int_equal(o->bytes[i], n * sizeof(float));
  assert_memory_equal(o->data[i], want, n * sizeof(float));
}

/* ---- reshapes of an argument and of an intermediate feed dots ---- */
static const char dot_src[] =
    "func.func @main(%x: tensor<2x3x4xf32>, %w: tensor<4x2xf32>) -> "
    "(tensor<6x2xf32>, tensor<6x2xf32>) {\n"
    "  %r = stablehlo.reshape %x : (tensor<2x3x4xf32>) -> tensor<6x4xf32>\n"
    "  %d = stablehlo.dot_general %r, %w, contracting_dims = [1] x [0] : "
    "(tensor<6x4xf32>, tensor<4x2xf32>) -> tensor<6x2xf32>\n"
    "  %a = stablehlo.add %x, %x : tensor<2x3x4xf32>\n"
    "  %ra = stablehlo.reshape %a : (tensor<2x3x4xf32>) -> tensor<6x4xf32>\n"
    "  %e = stablehlo.dot_general %ra, %w, contracting_dims = [1] x [0] : "
    "(tensor<6x4xf32>, tensor<4x2xf32>) -> tensor<6x2xf32>\n"
    "  func.return %d, %e : tensor<6x2xf32>, tensor<6x2xf32>\n"
    "}\n";

static void test_dot(void **state) {
  float x[24], w[8], d[12], e[12];
  for (int i = 0; i < 24; i++) x[i] = (float)(i % 7 - 3);
  for (int i = 0; i < 8; i++) w[i] = (float)(i % 3 - 1);
  mm(x, w, d, 6, 4, 2);
  for (int i = 0; i < 12; i++) e[i] = 2 * d[i];
  tu_in in[2] = {{TU_SHAPE(XRT_F32, 2, 3, 4), x}, {TU_SHAPE(XRT_F32, 4, 2), w}};
  tu_out o;
  tu_run_twice((xrt_client *)*state, dot_src, 2, in, &o);
  assert_int_equal(o.n, 2);
  assert_f32(&o, 0, d, 12);
  assert_f32(&o, 1, e, 12);
  tu_out_free(&o);
}

/* ---- dynamic_reshape (its shape operand checked when it runs) of an
 * intermediate feeds a dot; a wrong shape operand still fails ---- */
static const char dyn_src[] =
    "func.func @main(%x: tensor<2x3xf32>, %s: tensor<2xi32>, "
    "%w: tensor<2x2xf32>) -> tensor<3x2xf32> {\n"
    "  %a = stablehlo.add %x, %x : tensor<2x3xf32>\n"
    "  %r = stablehlo.dynamic_reshape %a, %s : (tensor<2x3xf32>, "
    "tensor<2xi32>) -> tensor<3x2xf32>\n"
    "  %d = stablehlo.dot_general %r, %w, contracting_dims = [1] x [0] : "
    "(tensor<3x2xf32>, tensor<2x2xf32>) -> tensor<3x2xf32>\n"
    "  func.return %d : tensor<3x2xf32>\n"
    "}\n";

static void test_dynamic_reshape(void **state) {
  const float x[6] = {1, 2, 3, 4, 5, 6}, w[4] = {1, -1, 2, 0};
  float a[6], d[6];
  for (int i = 0; i < 6; i++) a[i] = 2 * x[i];
  mm(a, w, d, 3, 2, 2);
  const int32_t shape[2] = {3, 2}, bad[2] = {2, 3};
  tu_in in[3] = {{TU_SHAPE(XRT_F32, 2, 3), x}, {TU_SHAPE(XRT_S32, 2), shape},
                 {TU_SHAPE(XRT_F32, 2, 2), w}};
  tu_out o;
  tu_run_twice((xrt_client *)*state, dyn_src, 3, in, &o);
  assert_int_equal(o.n, 1);
  assert_f32(&o, 0, d, 6);
  tu_out_free(&o);
  in[1].data = bad;
  assert_int_equal(tu_run((xrt_client *)*state, dyn_src, 3, in, &o),
                   XRT_INVALID_ARGUMENT);
}

/* ---- the operand's memory outlives its own last use: p is read last by
 * q1, its reshape r (and r2, a reshape of r) after three more products
 * whose results would take p's memory if it were given back ---- */
static const char live_src[] =
    "func.func @main(%x: tensor<6x4xf32>, %w: tensor<4x4xf32>) -> "
    "(tensor<6x4xf32>, tensor<f32>, tensor<4xf32>) {\n"
    "  %z = stablehlo.constant dense<0.0> : tensor<f32>\n"
    "  %p = stablehlo.dot_general %x, %w, contracting_dims = [1] x [0] : "
    "(tensor<6x4xf32>, tensor<4x4xf32>) -> tensor<6x4xf32>\n"
    "  %r = stablehlo.reshape %p : (tensor<6x4xf32>) -> tensor<24xf32>\n"
    "  %q1 = stablehlo.dot_general %p, %w, contracting_dims = [1] x [0] : "
    "(tensor<6x4xf32>, tensor<4x4xf32>) -> tensor<6x4xf32>\n"
    "  %q2 = stablehlo.dot_general %q1, %w, contracting_dims = [1] x [0] : "
    "(tensor<6x4xf32>, tensor<4x4xf32>) -> tensor<6x4xf32>\n"
    "  %q3 = stablehlo.dot_general %q2, %w, contracting_dims = [1] x [0] : "
    "(tensor<6x4xf32>, tensor<4x4xf32>) -> tensor<6x4xf32>\n"
    "  %s = stablehlo.reduce(%r init: %z) applies stablehlo.add across "
    "dimensions = [0] : (tensor<24xf32>, tensor<f32>) -> tensor<f32>\n"
    "  %r2 = stablehlo.reshape %r : (tensor<24xf32>) -> tensor<4x6xf32>\n"
    "  %s2 = stablehlo.reduce(%r2 init: %z) applies stablehlo.add across "
    "dimensions = [1] : (tensor<4x6xf32>, tensor<f32>) -> tensor<4xf32>\n"
    "  func.return %q3, %s, %s2 : tensor<6x4xf32>, tensor<f32>, "
    "tensor<4xf32>\n"
    "}\n";

static void test_operand_outlives(void **state) {
  float x[24], w[16], p[24], q1[24], q2[24], q3[24], s = 0, s2[4] = {0};
  for (int i = 0; i < 24; i++) x[i] = (float)(i % 5 - 2);
  for (int i = 0; i < 16; i++) w[i] = (float)((i * 3) % 4 - 1);
  mm(x, w, p, 6, 4, 4);
  mm(p, w, q1, 6, 4, 4);
  mm(q1, w, q2, 6, 4, 4);
  mm(q2, w, q3, 6, 4, 4);
  for (int i = 0; i < 24; i++) {
    s += p[i];
    s2[i / 6] += p[i];
  }
  tu_in in[2] = {{TU_SHAPE(XRT_F32, 6, 4), x}, {TU_SHAPE(XRT_F32, 4, 4), w}};
  tu_out o;
  tu_run_twice((xrt_client *)*state, live_src, 2, in, &o);
  assert_int_equal(o.n, 3);
  assert_f32(&o, 0, q3, 24);
  assert_f32(&o, 1, &s, 1);
  assert_f32(&o, 2, s2, 4);
  tu_out_free(&o);
}

/* ---- while: a reshape of a value from outside (x2 = x m) read in the
 * body, of the state (s = (s + x2) m, three times), a pass-through value returned
 * as a chain of reshapes of itself, a reshape of a loop result ---- */
static const char while_src[] =
    "func.func @main(%x: tensor<2x3xf32>, %m: tensor<3x3xf32>) -> "
    "(tensor<2x3xf32>, tensor<6xf32>, tensor<2x3xf32>) {\n"
    "  %c0 = stablehlo.constant dense<0> : tensor<i32>\n"
    "  %x2 = stablehlo.dot_general %x, %m, contracting_dims = [1] x [0] : "
    "(tensor<2x3xf32>, tensor<3x3xf32>) -> tensor<2x3xf32>\n"
    "  %xr = stablehlo.reshape %x2 : (tensor<2x3xf32>) -> tensor<6xf32>\n"
    "  %r:3 = stablehlo.while(%i = %c0, %s = %x, %p = %x) : tensor<i32>, "
    "tensor<2x3xf32>, tensor<2x3xf32>\n"
    "   cond {\n"
    "    %n = stablehlo.constant dense<3> : tensor<i32>\n"
    "    %lt = stablehlo.compare LT, %i, %n, SIGNED : (tensor<i32>, "
    "tensor<i32>) -> tensor<i1>\n"
    "    stablehlo.return %lt : tensor<i1>\n"
    "  } do {\n"
    "    %sf = stablehlo.reshape %s : (tensor<2x3xf32>) -> tensor<6xf32>\n"
    "    %t = stablehlo.add %sf, %xr : tensor<6xf32>\n"
    "    %t2 = stablehlo.reshape %t : (tensor<6xf32>) -> tensor<2x3xf32>\n"
    "    %d = stablehlo.dot_general %t2, %m, contracting_dims = [1] x [0] : "
    "(tensor<2x3xf32>, tensor<3x3xf32>) -> tensor<2x3xf32>\n"
    "    %pf = stablehlo.reshape %p : (tensor<2x3xf32>) -> tensor<3x2xf32>\n"
    "    %pb = stablehlo.reshape %pf : (tensor<3x2xf32>) -> tensor<2x3xf32>\n"
    "    %one = stablehlo.constant dense<1> : tensor<i32>\n"
    "    %i1 = stablehlo.add %i, %one : tensor<i32>\n"
    "    stablehlo.return %i1, %d, %pb : tensor<i32>, tensor<2x3xf32>, "
    "tensor<2x3xf32>\n"
    "  }\n"
    "  %out = stablehlo.reshape %r#1 : (tensor<2x3xf32>) -> tensor<6xf32>\n"
    "  func.return %r#1, %out, %r#2 : tensor<2x3xf32>, tensor<6xf32>, "
    "tensor<2x3xf32>\n"
    "}\n";

static void test_while(void **state) {
  const float x[6] = {1, -2, 3, 0, 2, -1};
  const float m[9] = {1, 0, -1, 2, 1, 0, 0, -1, 1};
  float s[6], t[6], x2[6];
  mm(x, m, x2, 2, 3, 3);
  memcpy(s, x, sizeof s);
  for (int k = 0; k < 3; k++) {
    for (int i = 0; i < 6; i++) t[i] = s[i] + x2[i];
    mm(t, m, s, 2, 3, 3);
  }
  tu_in in[2] = {{TU_SHAPE(XRT_F32, 2, 3), x}, {TU_SHAPE(XRT_F32, 3, 3), m}};
  tu_out o;
  tu_run_twice((xrt_client *)*state, while_src, 2, in, &o);
  assert_int_equal(o.n, 3);
  assert_f32(&o, 0, s, 6);
  assert_f32(&o, 1, s, 6);
  assert_f32(&o, 2, x, 6);
  tu_out_free(&o);
}

/* ---- state updated slice by slice that the body also reads through a
 * reshape (and hands on as prev): the reshape is a read, so the update
 * is not done in place, and prev is the state before the last update.
 * xs rows (1,2,3), (10,20,30), (100,200,300), (7,7,7); three iterations
 * add row i to h and write h into row i of out (initially -1). ---- */
static const char rnn_src[] =
    "func.func @main(%xs: tensor<4x3xf32>, %init: tensor<4x3xf32>) -> "
    "(tensor<4x3xf32>, tensor<12xf32>) {\n"
    "  %c0 = stablehlo.constant dense<0> : tensor<i32>\n"
    "  %h0 = stablehlo.constant dense<0.0> : tensor<1x3xf32>\n"
    "  %r:5 = stablehlo.while(%i = %c0, %h = %h0, %pxs = %xs, %po = %init, "
    "%pprev = %init) : tensor<i32>, tensor<1x3xf32>, tensor<4x3xf32>, "
    "tensor<4x3xf32>, tensor<4x3xf32>\n"
    "   cond {\n"
    "    %n = stablehlo.constant dense<3> : tensor<i32>\n"
    "    %lt = stablehlo.compare LT, %i, %n, SIGNED : (tensor<i32>, "
    "tensor<i32>) -> tensor<i1>\n"
    "    stablehlo.return %lt : tensor<i1>\n"
    "  } do {\n"
    "    %z = stablehlo.constant dense<0> : tensor<i32>\n"
    "    %row = stablehlo.dynamic_slice %pxs, %i, %z, sizes = [1, 3] : "
    "(tensor<4x3xf32>, tensor<i32>, tensor<i32>) -> tensor<1x3xf32>\n"
    "    %h1 = stablehlo.add %h, %row : tensor<1x3xf32>\n"
    "    %pof = stablehlo.reshape %po : (tensor<4x3xf32>) -> tensor<12xf32>\n"
    "    %po1 = stablehlo.dynamic_update_slice %po, %h1, %i, %z : "
    "(tensor<4x3xf32>, tensor<1x3xf32>, tensor<i32>, tensor<i32>) -> "
    "tensor<4x3xf32>\n"
    "    %prev = stablehlo.reshape %pof : (tensor<12xf32>) -> "
    "tensor<4x3xf32>\n"
    "    %one = stablehlo.constant dense<1> : tensor<i32>\n"
    "    %i1 = stablehlo.add %i, %one : tensor<i32>\n"
    "    stablehlo.return %i1, %h1, %pxs, %po1, %prev : tensor<i32>, "
    "tensor<1x3xf32>, tensor<4x3xf32>, tensor<4x3xf32>, tensor<4x3xf32>\n"
    "  }\n"
    "  %pr = stablehlo.reshape %r#4 : (tensor<4x3xf32>) -> tensor<12xf32>\n"
    "  func.return %r#3, %pr : tensor<4x3xf32>, tensor<12xf32>\n"
    "}\n";

static void test_while_update_in_place_read(void **state) {
  static const float xs[12] = {1, 2, 3, 10, 20, 30, 100, 200, 300, 7, 7, 7};
  float init[12], out[12], prev[12], h[3] = {0, 0, 0};
  for (int i = 0; i < 12; i++) init[i] = out[i] = -1;
  for (int k = 0; k < 3; k++) {
    memcpy(prev, out, sizeof prev);
    for (int j = 0; j < 3; j++) out[3 * k + j] = h[j] += xs[3 * k + j];
  }
  tu_in in[2] = {{TU_SHAPE(XRT_F32, 4, 3), xs}, {TU_SHAPE(XRT_F32, 4, 3), init}};
  tu_out o;
  tu_run_twice((xrt_client *)*state, rnn_src, 2, in, &o);
  assert_int_equal(o.n, 2);
  assert_f32(&o, 0, out, 12);
  assert_f32(&o, 1, prev, 12);
  tu_out_free(&o);
}

/* ---- func.call: the callee reshapes its arguments and returns one such
 * reshape; the caller passes a reshape, reshapes a result, and calls the
 * same function again with it ---- */
static const char call_src[] =
    "func.func private @f(%a: tensor<2x3xf32>, %b: tensor<6xf32>) -> "
    "(tensor<6xf32>, tensor<3x2xf32>) {\n"
    "  %ar = stablehlo.reshape %a : (tensor<2x3xf32>) -> tensor<6xf32>\n"
    "  %s = stablehlo.add %ar, %b : tensor<6xf32>\n"
    "  %br = stablehlo.reshape %b : (tensor<6xf32>) -> tensor<3x2xf32>\n"
    "  func.return %s, %br : tensor<6xf32>, tensor<3x2xf32>\n"
    "}\n"
    "func.func @main(%x: tensor<2x3xf32>, %y: tensor<2x3xf32>) -> "
    "(tensor<6xf32>, tensor<6xf32>, tensor<3x2xf32>, tensor<2x3xf32>) {\n"
    "  %yr = stablehlo.reshape %y : (tensor<2x3xf32>) -> tensor<6xf32>\n"
    "  %c:2 = func.call @f(%x, %yr) : (tensor<2x3xf32>, tensor<6xf32>) -> "
    "(tensor<6xf32>, tensor<3x2xf32>)\n"
    "  %cr = stablehlo.reshape %c#1 : (tensor<3x2xf32>) -> tensor<2x3xf32>\n"
    "  %c2:2 = func.call @f(%cr, %c#0) : (tensor<2x3xf32>, tensor<6xf32>) "
    "-> (tensor<6xf32>, tensor<3x2xf32>)\n"
    "  func.return %c#0, %c2#0, %c2#1, %cr : tensor<6xf32>, tensor<6xf32>, "
    "tensor<3x2xf32>, tensor<2x3xf32>\n"
    "}\n";

static void test_call(void **state) {
  const float x[6] = {1, 2, 3, 4, 5, 6}, y[6] = {10, 20, 30, 40, 50, 60};
  float c0[6], c20[6];
  for (int i = 0; i < 6; i++) {
    c0[i] = x[i] + y[i];
    c20[i] = y[i] + c0[i];
  }
  tu_in in[2] = {{TU_SHAPE(XRT_F32, 2, 3), x}, {TU_SHAPE(XRT_F32, 2, 3), y}};
  tu_out o;
  tu_run_twice((xrt_client *)*state, call_src, 2, in, &o);
  assert_int_equal(o.n, 4);
  assert_f32(&o, 0, c0, 6);
  assert_f32(&o, 1, c20, 6);
  assert_f32(&o, 2, c0, 6); /* f returns its b as it came */
  assert_f32(&o, 3, y, 6);
  tu_out_free(&o);
}

/* ---- entry results: a reshape of an argument, of an intermediate (also
 * returned twice, and reshaped again for a reduction), an argument as it
 * came, and a reshape of a reshape ---- */
static const char results_src[] =
    "func.func @main(%x: tensor<2x3xi32>, %y: tensor<2x3xi32>) -> "
    "(tensor<6xi32>, tensor<3x2xi32>, tensor<3x2xi32>, tensor<i32>, "
    "tensor<2x3xi32>, tensor<3x2xi32>) {\n"
    "  %z = stablehlo.constant dense<0> : tensor<i32>\n"
    "  %xr = stablehlo.reshape %x : (tensor<2x3xi32>) -> tensor<6xi32>\n"
    "  %a = stablehlo.multiply %x, %y : tensor<2x3xi32>\n"
    "  %ar = stablehlo.reshape %a : (tensor<2x3xi32>) -> tensor<3x2xi32>\n"
    "  %ar2 = stablehlo.reshape %ar : (tensor<3x2xi32>) -> tensor<6xi32>\n"
    "  %s = stablehlo.reduce(%ar2 init: %z) applies stablehlo.add across "
    "dimensions = [0] : (tensor<6xi32>, tensor<i32>) -> tensor<i32>\n"
    "  %xr2 = stablehlo.reshape %xr : (tensor<6xi32>) -> tensor<3x2xi32>\n"
    "  func.return %xr, %ar, %ar, %s, %x, %xr2 : tensor<6xi32>, "
    "tensor<3x2xi32>, tensor<3x2xi32>, tensor<i32>, tensor<2x3xi32>, "
    "tensor<3x2xi32>\n"
    "}\n";

static void test_results(void **state) {
  const int32_t x[6] = {1, -2, 3, -4, 5, -6}, y[6] = {7, 8, 9, 10, 11, 12};
  int32_t a[6], s = 0;
  for (int i = 0; i < 6; i++) s += a[i] = x[i] * y[i];
  tu_in in[2] = {{TU_SHAPE(XRT_S32, 2, 3), x}, {TU_SHAPE(XRT_S32, 2, 3), y}};
  tu_out o;
  tu_run_twice((xrt_client *)*state, results_src, 2, in, &o);
  assert_int_equal(o.n, 6);
  for (int k = 0; k < 6; k++) {
    const int32_t *want = k == 1 || k == 2 ? a : k == 3 ? &s : x;
    size_t n = k == 3 ? 1 : 6;
    assert_int_equal(o.bytes[k], n * sizeof(int32_t));
    assert_memory_equal(o.data[k], want, n * sizeof(int32_t));
  }
  tu_assert_shape(&o, 5, TU_SHAPE(XRT_S32, 3, 2));
  tu_out_free(&o);
}

/* ---- case: a branch returns a reshape of a value from outside, the
 * other a reshape of its own value; the result is reshaped for a dot ---- */
static const char case_src[] =
    "func.func @main(%x: tensor<2x3xf32>, %sel: tensor<i32>, "
    "%w: tensor<2x2xf32>) -> (tensor<6xf32>, tensor<3x2xf32>) {\n"
    "  %g = \"stablehlo.case\"(%sel) ({\n"
    "    %r = stablehlo.reshape %x : (tensor<2x3xf32>) -> tensor<6xf32>\n"
    "    stablehlo.return %r : tensor<6xf32>\n"
    "  }, {\n"
    "    %n = stablehlo.negate %x : tensor<2x3xf32>\n"
    "    %r2 = stablehlo.reshape %n : (tensor<2x3xf32>) -> tensor<6xf32>\n"
    "    stablehlo.return %r2 : tensor<6xf32>\n"
    "  }) : (tensor<i32>) -> tensor<6xf32>\n"
    "  %gr = stablehlo.reshape %g : (tensor<6xf32>) -> tensor<3x2xf32>\n"
    "  %d = stablehlo.dot_general %gr, %w, contracting_dims = [1] x [0] : "
    "(tensor<3x2xf32>, tensor<2x2xf32>) -> tensor<3x2xf32>\n"
    "  func.return %g, %d : tensor<6xf32>, tensor<3x2xf32>\n"
    "}\n";

static void test_case(void **state) {
  const float x[6] = {1, 2, 3, 4, 5, 6}, w[4] = {1, -1, 2, 0};
  for (int32_t sel = 0; sel < 2; sel++) {
    float g[6], d[6];
    for (int i = 0; i < 6; i++) g[i] = sel ? -x[i] : x[i];
    mm(g, w, d, 3, 2, 2);
    tu_in in[3] = {{TU_SHAPE(XRT_F32, 2, 3), x}, {TU_SCALAR(XRT_S32), &sel},
                   {TU_SHAPE(XRT_F32, 2, 2), w}};
    tu_out o;
    tu_run_twice((xrt_client *)*state, case_src, 3, in, &o);
    assert_int_equal(o.n, 2);
    assert_f32(&o, 0, g, 6);
    assert_f32(&o, 1, d, 6);
    tu_out_free(&o);
  }
}

/* ---- a reshape of a weight argument feeds a product: its B operand is
 * the argument's memory, which the packed-operand cache
 * (src/sim/gemm_cache.c) may keep packed across executes; executed three
 * times on the same buffers, then on a new weight buffer with other
 * contents (a stale pack would give the old results) ---- */
#define G 64
static const char gemm_src[] =
    "func.func @main(%a: tensor<64x64xf32>, %w: tensor<4096xf32>) -> "
    "tensor<64x64xf32> {\n"
    "  %b = stablehlo.reshape %w : (tensor<4096xf32>) -> tensor<64x64xf32>\n"
    "  %c = stablehlo.dot_general %a, %b, contracting_dims = [1] x [0] : "
    "(tensor<64x64xf32>, tensor<64x64xf32>) -> tensor<64x64xf32>\n"
    "  func.return %c : tensor<64x64xf32>\n"
    "}\n";

static void test_reshaped_weight_cached(void **state) {
  xrt_client *c = (xrt_client *)*state;
  xrt_device *dev = xrt_client_device(c, 0);
  static float a[G * G], w[G * G], want[G * G], got[G * G];
  for (int i = 0; i < G * G; i++) a[i] = (float)(i % 5 - 2);
  xrt_executable *exe = NULL;
  assert_int_equal(xrt_compile(c, gemm_src, strlen(gemm_src), NULL, &exe),
                   XRT_OK);
  xrt_shape as = TU_SHAPE(XRT_F32, G, G), ws = TU_SHAPE(XRT_F32, G * G);
  xrt_buffer *ab = NULL;
  assert_int_equal(xrt_buffer_from_host(c, dev, &as, a, &ab), XRT_OK);
  for (int round = 0; round < 2; round++) {
    for (int i = 0; i < G * G; i++) w[i] = (float)((i * (round + 2)) % 7 - 3);
    mm(a, w, want, G, G, G);
    xrt_buffer *wb = NULL;
    assert_int_equal(xrt_buffer_from_host(c, dev, &ws, w, &wb), XRT_OK);
    for (int k = 0; k < 3; k++) {
      xrt_buffer *args[2] = {ab, wb}, *out = NULL;
      assert_int_equal(xrt_execute(exe, dev, args, 2, &out, 1, NULL), XRT_OK);
      assert_int_equal(xrt_buffer_to_host(out, got, sizeof got), XRT_OK);
      assert_memory_equal(got, want, sizeof got);
      xrt_buffer_release(out);
    }
    xrt_buffer_release(wb);
  }
  xrt_buffer_release(ab);
  xrt_executable_release(exe);
}

/* ---- the reshape takes no memory: a program that keeps a value and its
 * reshape alive together holds as many bytes (after an execute, frame
 * included) as the same program without the reshape; with a copy it
 * would hold one value more (N*N floats). ---- */
#define N 96
#define MEM_SRC(RESHAPE, DOT)                                                 \
  "func.func @main(%x: tensor<96x96xf32>) -> tensor<96x96xf32> {\n"           \
  "  %a = stablehlo.dot_general %x, %x, contracting_dims = [1] x [0] : "      \
  "(tensor<96x96xf32>, tensor<96x96xf32>) -> tensor<96x96xf32>\n" RESHAPE     \
  DOT "  %c = stablehlo.add %a, %b : tensor<96x96xf32>\n"                     \
  "  func.return %c : tensor<96x96xf32>\n"                                    \
  "}\n"

/* Live bytes of client c's allocator after compiling and executing src
 * once (executable and its frame still alive); the result in *c00. */
static long long live_after(xrt_client *c, tu_counting_alloc *al,
                            const char *src, const float *x, float *c00) {
  xrt_shape s = TU_SHAPE(XRT_F32, N, N);
  static float res[N * N];
  long long live = tu_live_after(c, al, src, &s, x, res, sizeof res);
  *c00 = res[0];
  return live;
}

static void test_no_memory(void **state) {
  (void)state;
  static float x[N * N], x2[N * N];
  for (int i = 0; i < N * N; i++) x[i] = (float)(i % 3 - 1);
  mm(x, x, x2, N, N, N);
  float want = x2[0];
  for (int t = 0; t < N; t++) want += x2[t] * x[t * N];
  /* a client each (nothing shared), on one thread: a fused step holds a
   * piece of scratch per thread, and the reshape makes %b3's product and
   * the add one step, whose scratch is not what this measures */
  tu_counting_alloc al, al2;
  xrt_client *c = tu_client_counted_threads(1, 1, &al);
  xrt_client *c2 = tu_client_counted_threads(1, 1, &al2);
  float r0 = 0, r1 = 0;
  long long plain = live_after(
      c, &al,
      MEM_SRC("", "  %b = stablehlo.dot_general %a, %x, contracting_dims = "
                  "[1] x [0] : (tensor<96x96xf32>, tensor<96x96xf32>) -> "
                  "tensor<96x96xf32>\n"),
      x, &r0);
  long long alias = live_after(
      c2, &al2,
      MEM_SRC("  %f = stablehlo.reshape %a : (tensor<96x96xf32>) -> "
              "tensor<1x96x96xf32>\n",
              "  %b3 = stablehlo.dot_general %f, %x, contracting_dims = "
              "[2] x [0] : (tensor<1x96x96xf32>, tensor<96x96xf32>) -> "
              "tensor<1x96x96xf32>\n  %b = stablehlo.reshape %b3 : "
              "(tensor<1x96x96xf32>) -> tensor<96x96xf32>\n"),
      x, &r1);
  assert_true(r0 == want);
  assert_true(r1 == want);
  long long one = (long long)sizeof(float) * N * N;
  printf("live bytes: %lld without the reshapes, %lld with\n", plain, alias);
  assert_true(alias - plain < one / 2);
  xrt_client_release(c);
  xrt_client_release(c2);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_dot),
      cmocka_unit_test(test_operand_outlives),
      cmocka_unit_test(test_while),
      cmocka_unit_test(test_while_update_in_place_read),
      cmocka_unit_test(test_call),
      cmocka_unit_test(test_results),
      cmocka_unit_test(test_case),
      cmocka_unit_test(test_dynamic_reshape),
      cmocka_unit_test(test_reshaped_weight_cached),
      cmocka_unit_test(test_no_memory),
  };
  return cmocka_run_group_tests(tests, tu_setup_client, tu_teardown_client);
}
