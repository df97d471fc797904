/*
 * test_kernel_reduce.c - the simulator's typed reduce loops
 * (src/sim/reduce.c) for every dtype x op pair that has a kernel: add,
 * multiply, maximum, minimum on f32/f64/f16/bf16, the same plus and/or on
 * every integer width (signed and unsigned), and and/or/min/max on i1.
 *
 * Each kernel has two loops: a scalar one (the reduced dimension is the
 * innermost, one accumulator) and a vector one (an outer dimension is
 * reduced, a row of accumulators), so each case reduces a matrix across
 * dimension 1 and its transpose across dimension 0, giving the same
 * sequences to both loops.  The float max/min rows walk every branch of
 * the NaN / signed-zero rules (a NaN accumulator, a NaN input, +0 vs -0 in
 * both orders, greater and smaller).  Expected values come from a fold
 * written here with the C types of each dtype (wrapping unsigned
 * arithmetic for integer add/multiply).
 *
 * XRT_SIM_NO_FUSION is set before the first client: fused reductions of
 * f32/f64 run loops of fusion.c instead, and these tests are about the
 * plain kernels every dtype shares.
 */
#define _POSIX_C_SOURCE 200809L /* setenv */
#include "test_kernels.h"

#define C(state) ((xrt_client *)*(state))

enum { ROWS = 4, COLS = 6 };

typedef enum { R_ADD, R_MUL, R_MAX, R_MIN, R_AND, R_OR, R_XOR } rop;
static const char *const rop_name[] = {"add", "multiply", "maximum",
                                       "minimum", "and", "or", "xor"};

static int is_flt(xrt_dtype t) {
  return t == XRT_F32 || t == XRT_F64 || t == XRT_F16 || t == XRT_BF16;
}

/* Writes v as element i of a buffer of type d. */
static void put(const tu_dtinfo *d, void *buf, int i, double v) {
  tu_put(d, buf, i, v, 0);
}

#define FOLD_INT(T, U)                                                       \
  do {                                                                       \
    T a = (T)(int64_t)init;                                                  \
    for (int k = 0; k < n; k++) {                                            \
      T b = (T)(int64_t)v[k];                                                \
      switch (op) {                                                          \
      case R_ADD: a = (T)(U)((U)a + (U)b); break;                            \
      case R_MUL: a = (T)(U)((U)a * (U)b); break;                            \
      case R_MAX: a = a > b ? a : b; break;                                  \
      case R_MIN: a = a < b ? a : b; break;                                  \
      case R_AND: a = (T)(a & b); break;                                     \
      case R_OR: a = (T)(a | b); break;                                      \
      case R_XOR: a = (T)(a ^ b); break;                                     \
      }                                                                      \
    }                                                                        \
    memcpy(out, &a, sizeof a);                                               \
  } while (0)

/* The reference fold of init and v[0..n) for dtype d, written to out. */
static void ref_fold(const tu_dtinfo *d, rop op, double init, const double *v,
                     int n, void *out) {
  switch (d->dt) {
  case XRT_S8: FOLD_INT(int8_t, uint32_t); return;
  case XRT_U8: FOLD_INT(uint8_t, uint32_t); return;
  case XRT_S16: FOLD_INT(int16_t, uint32_t); return;
  case XRT_U16: FOLD_INT(uint16_t, uint32_t); return;
  case XRT_S32: FOLD_INT(int32_t, uint32_t); return;
  case XRT_U32: FOLD_INT(uint32_t, uint32_t); return;
  case XRT_S64: FOLD_INT(int64_t, uint64_t); return;
  case XRT_U64: FOLD_INT(uint64_t, uint64_t); return;
  case XRT_PRED: {
    int a = init != 0;
    for (int k = 0; k < n; k++) {
      int b = v[k] != 0;
      a = (op == R_AND || op == R_MIN) ? (a & b) : (a | b);
    }
    put(d, out, 0, a);
    return;
  }
  default: break;
  }
  double a = tu_round_to(d->dt, init);
  for (int k = 0; k < n; k++) {
    double b = tu_round_to(d->dt, v[k]);
    switch (op) {
    case R_ADD: a = tu_round_to(d->dt, a + b); break;
    case R_MUL: a = tu_round_to(d->dt, a * b); break;
    case R_MAX: a = tu_ref_maxmin(a, b, 1); break;
    case R_MIN: a = tu_ref_maxmin(a, b, 0); break;
    default: fail_msg("float op %d", (int)op);
    }
  }
  put(d, out, 0, a);
}

/* Compares element i of got with want: bit-exact, except that any NaN
 * matches any NaN, and the sign of a zero must match. */
static void check_elem(const tu_dtinfo *d, const void *got, const void *want,
                       int i, const char *what) {
  if (is_flt(d->dt)) {
    double g = tu_get_f(d, got, i), w = tu_get_f(d, want, i);
    if (w != w) {
      if (g == g) fail_msg("%s[%d]: got %g want NaN", what, i, g);
      return;
    }
    if (!(g == w) || signbit(g) != signbit(w))
      fail_msg("%s[%d]: got %g want %g", what, i, g, w);
    return;
  }
  if (memcmp((const char *)got + (size_t)i * d->size,
             (const char *)want + (size_t)i * d->size, d->size) != 0)
    fail_msg("%s[%d] differs", what, i);
}

/* Reduces m (ROWS x COLS) across dim 1 and m^T across dim 0 with op and
 * init, checking both against the fold of each row. */
static void run_case(xrt_client *c, const tu_dtinfo *d, rop op,
                     const double m[ROWS][COLS], double init) {
  char prog[2048];
  const char *t = d->mlir;
  snprintf(prog, sizeof prog,
           "func.func @main(%%a: tensor<%dx%dx%s>, %%b: tensor<%dx%dx%s>, "
           "%%z: tensor<%s>) -> (tensor<%dx%s>, tensor<%dx%s>) {\n"
           "  %%0 = stablehlo.reduce(%%a init: %%z) applies stablehlo.%s "
           "across dimensions = [1] : (tensor<%dx%dx%s>, tensor<%s>) -> "
           "tensor<%dx%s>\n"
           "  %%1 = stablehlo.reduce(%%b init: %%z) applies stablehlo.%s "
           "across dimensions = [0] : (tensor<%dx%dx%s>, tensor<%s>) -> "
           "tensor<%dx%s>\n"
           "  func.return %%0, %%1 : tensor<%dx%s>, tensor<%dx%s>\n}\n",
           ROWS, COLS, t, COLS, ROWS, t, t, ROWS, t, ROWS, t, rop_name[op],
           ROWS, COLS, t, t, ROWS, t, rop_name[op], COLS, ROWS, t, t, ROWS,
           t, ROWS, t, ROWS, t);
  unsigned char a[ROWS * COLS * 8], b[ROWS * COLS * 8], z[8],
      want[ROWS * 8];
  for (int r = 0; r < ROWS; r++)
    for (int k = 0; k < COLS; k++) {
      put(d, a, r * COLS + k, m[r][k]);
      put(d, b, k * ROWS + r, m[r][k]);
    }
  put(d, z, 0, init);
  for (int r = 0; r < ROWS; r++)
    ref_fold(d, op, init, m[r], COLS, want + (size_t)r * d->size);
  tu_in in[3] = {{TU_SHAPE(d->dt, ROWS, COLS), a},
                 {TU_SHAPE(d->dt, COLS, ROWS), b},
                 {TU_SCALAR(d->dt), z}};
  tu_out o;
  xrt_status st = tu_run(c, prog, 3, in, &o);
  if (st != XRT_OK)
    fail_msg("%s %s: %s: %s", t, rop_name[op], xrt_strerror(st), tu_msg);
  assert_int_equal(o.n, 2);
  for (int j = 0; j < 2; j++) {
    tu_assert_shape(&o, j, TU_SHAPE(d->dt, ROWS));
    for (int r = 0; r < ROWS; r++) {
      char what[64];
      snprintf(what, sizeof what, "%s %s out%d", t, rop_name[op], j);
      check_elem(d, o.data[j], want, r, what);
    }
  }
  tu_out_free(&o);
}

/* Exactly representable in every float type: sums and products stay so. */
static const double flt_arith[ROWS][COLS] = {
    {1, 2, -3, 4, 0.5, -1},
    {2, 2, 2, 2, 0.5, 0.25},
    {-1, -1, -1, 1, 1, 1},
    {8, -0.5, 3, 0.25, -2, 1.5},
};

static void test_reduce_float_arith(void **state) {
  const xrt_dtype ts[] = {XRT_F32, XRT_F64, XRT_F16, XRT_BF16};
  for (size_t i = 0; i < TU_COUNT(ts); i++) {
    run_case(C(state), tu_dt(ts[i]), R_ADD, flt_arith, 0.5);
    run_case(C(state), tu_dt(ts[i]), R_MUL, flt_arith, -1);
  }
}

/* Rows that take every branch of the float max/min rules. */
static void test_reduce_float_minmax(void **state) {
  const double nan = NAN, inf = INFINITY;
  const double m[ROWS][COLS] = {
      {0.0, -0.0, 5, 2, nan, 1},  /* +0 then -0; greater; NaN input ... */
      {-0.0, 0.0, -3, 4, 4, 1},   /* -0 then +0; equal non-zeros */
      {nan, 1, 2, 3, 4, 5},       /* a NaN first: the accumulator is NaN */
      {1, 6, 3, -4, 5, 2},        /* ordinary */
  };
  const xrt_dtype ts[] = {XRT_F32, XRT_F64, XRT_F16, XRT_BF16};
  for (size_t i = 0; i < TU_COUNT(ts); i++) {
    run_case(C(state), tu_dt(ts[i]), R_MAX, m, -inf);
    run_case(C(state), tu_dt(ts[i]), R_MIN, m, inf);
    /* init 0: the first step compares two zeros of either sign */
    run_case(C(state), tu_dt(ts[i]), R_MAX, m, -0.0);
    run_case(C(state), tu_dt(ts[i]), R_MIN, m, 0.0);
  }
}

/* Integer rows: negatives (large when unsigned), wrap-around sums and
 * products, mixed bit patterns for and/or. */
static void test_reduce_ints(void **state) {
  const double m[ROWS][COLS] = {
      {1, -2, 3, 100, 100, -7},
      {127, 127, 3, 5, 7, 11},
      {-1, -1, 12, 10, 6, 3},
      {0x55, 0x33, 0x0f, 0x71, -128, 2},
  };
  const xrt_dtype ts[] = {XRT_S8,  XRT_U8,  XRT_S16, XRT_U16,
                          XRT_S32, XRT_U32, XRT_S64, XRT_U64};
  for (size_t i = 0; i < TU_COUNT(ts); i++) {
    const tu_dtinfo *d = tu_dt(ts[i]);
    run_case(C(state), d, R_ADD, m, 5);
    run_case(C(state), d, R_MUL, m, 3);
    run_case(C(state), d, R_MAX, m, 0);
    run_case(C(state), d, R_MIN, m, 0);
    run_case(C(state), d, R_MAX, m, -100);
    run_case(C(state), d, R_MIN, m, 100);
    run_case(C(state), d, R_AND, m, -1);
    run_case(C(state), d, R_OR, m, 0);
    run_case(C(state), d, R_XOR, m, 6); /* no typed loop: the body runs */
  }
}

/* 64-bit values beyond 32 bits: the wide add/multiply do not truncate. */
static void test_reduce_wide_ints(void **state) {
  const double big = 4294967296.0; /* 2^32 */
  const double m[ROWS][COLS] = {
      {big, big, 1, 2, 3, 4},
      {big, 3, 5, 1, 1, 1},
      {-big, 2, 2, 2, 2, 2},
      {big * 4, -1, big, 7, 9, -3},
  };
  const xrt_dtype ts[] = {XRT_S64, XRT_U64};
  for (size_t i = 0; i < TU_COUNT(ts); i++) {
    const tu_dtinfo *d = tu_dt(ts[i]);
    run_case(C(state), d, R_ADD, m, 0);
    run_case(C(state), d, R_MUL, m, 1);
    run_case(C(state), d, R_MAX, m, 0);
    run_case(C(state), d, R_MIN, m, 0);
  }
}

static void test_reduce_pred(void **state) {
  const double m[ROWS][COLS] = {
      {1, 1, 1, 1, 1, 1},
      {0, 0, 0, 0, 0, 0},
      {1, 0, 1, 1, 0, 1},
      {0, 0, 0, 0, 0, 1},
  };
  const tu_dtinfo *d = tu_dt(XRT_PRED);
  for (int init = 0; init < 2; init++) {
    run_case(C(state), d, R_AND, m, init);
    run_case(C(state), d, R_OR, m, init);
    run_case(C(state), d, R_MIN, m, init);
    run_case(C(state), d, R_MAX, m, init);
  }
}

/* A region that is not a single binary op of the element type runs the
 * body per element: add + multiply folds, and a reduce to nothing. */
static void test_reduce_body_and_empty(void **state) {
  const int32_t a[ROWS * COLS] = {1, 2, 3, 4, 5, 6, 1, 1, 1, 1, 1, 1,
                                  2, 0, 2, 0, 2, 0, 3, 1, 2, 1, 3, 1};
  tu_in in = {TU_SHAPE(XRT_S32, ROWS, COLS), a};
  tu_out o;
  TU_RUN_OK(C(state),
            "func.func @main(%a: tensor<4x6xi32>) -> tensor<4xi32> {\n"
            "  %z = stablehlo.constant dense<1> : tensor<i32>\n"
            "  %0 = \"stablehlo.reduce\"(%a, %z) ({\n"
            "  ^bb0(%x: tensor<i32>, %y: tensor<i32>):\n"
            "    %s = stablehlo.add %x, %y : tensor<i32>\n"
            "    %m = stablehlo.multiply %s, %s : tensor<i32>\n"
            "    stablehlo.return %m : tensor<i32>\n"
            "  }) {dimensions = array<i64: 1>} : (tensor<4x6xi32>, tensor<i32>) -> tensor<4xi32>\n"
            "  func.return %0 : tensor<4xi32>\n}\n",
            1, &in, &o);
  /* fold acc = (acc + x)^2 (wrapping) over each row from 1 */
  int32_t want[ROWS];
  for (int r = 0; r < ROWS; r++) {
    uint32_t acc = 1;
    for (int k = 0; k < COLS; k++) {
      uint32_t s = acc + (uint32_t)a[r * COLS + k];
      acc = s * s;
    }
    want[r] = (int32_t)acc;
  }
  assert_int_equal(o.bytes[0], sizeof want);
  assert_memory_equal(o.data[0], want, sizeof want);
  tu_out_free(&o);
}

/* Bodies with no typed loop (xor on integers and i1, add on complex) and a
 * two-result reduce (argmax) run the body per element. */
static void test_reduce_generic_bodies(void **state) {
  const int32_t a[ROWS * COLS] = {1, 2, 4, 8, 16, 32, 3, 3, 3, 3, 3, 3,
                                  7, 0, 1, 0, 2, 5, -1, 1, 2, 1, 3, 1};
  const uint8_t p[ROWS * COLS] = {1, 1, 1, 0, 0, 0, 0, 0, 0, 0, 0, 1,
                                  1, 0, 1, 0, 1, 0, 1, 1, 1, 1, 1, 1};
  const float cx[2 * 3 * 2] = {1, 2, 3, 4, 5, 6, -1, -2, 0.5f, 0.25f, 8, 9};
  tu_in in[3] = {{TU_SHAPE(XRT_S32, ROWS, COLS), a},
                 {TU_SHAPE(XRT_PRED, ROWS, COLS), p},
                 {TU_SHAPE(XRT_C64, 2, 3), cx}};
  tu_out o;
  TU_RUN_OK(C(state),
            "func.func @main(%a: tensor<4x6xi32>, %p: tensor<4x6xi1>, %c: tensor<2x3xcomplex<f32>>) -> "
            "(tensor<4xi32>, tensor<6xi1>, tensor<3xcomplex<f32>>) {\n"
            "  %z = stablehlo.constant dense<0> : tensor<i32>\n"
            "  %f = stablehlo.constant dense<true> : tensor<i1>\n"
            "  %cz = stablehlo.constant dense<(0.0, 0.0)> : tensor<complex<f32>>\n"
            "  %0 = stablehlo.reduce(%a init: %z) applies stablehlo.xor across dimensions = [1] : (tensor<4x6xi32>, tensor<i32>) -> tensor<4xi32>\n"
            "  %1 = stablehlo.reduce(%p init: %f) applies stablehlo.xor across dimensions = [0] : (tensor<4x6xi1>, tensor<i1>) -> tensor<6xi1>\n"
            "  %2 = stablehlo.reduce(%c init: %cz) applies stablehlo.add across dimensions = [0] : (tensor<2x3xcomplex<f32>>, tensor<complex<f32>>) -> tensor<3xcomplex<f32>>\n"
            "  func.return %0, %1, %2 : tensor<4xi32>, tensor<6xi1>, tensor<3xcomplex<f32>>\n}\n",
            3, in, &o);
  /* xor of each row by hand */
  TU_ASSERT_OUT(&o, 0, int32_t, 63, 0, 7 ^ 1 ^ 2 ^ 5, -1 ^ 1 ^ 2 ^ 1 ^ 3 ^ 1);
  /* true xor each column */
  TU_ASSERT_OUT(&o, 1, uint8_t, 0, 1, 0, 0, 1, 1);
  TU_ASSERT_OUT(&o, 2, float, 0, 0, 3.5f, 4.25f, 13, 15);
  tu_out_free(&o);

  const float v[8] = {3, 9, 9, 1, -2, 7, 7, 0};
  tu_in vin = {TU_SHAPE(XRT_F32, 2, 4), v};
  TU_RUN_OK(C(state),
            "func.func @main(%v: tensor<2x4xf32>) -> (tensor<2xf32>, tensor<2xi32>) {\n"
            "  %i = stablehlo.iota dim = 1 : tensor<2x4xi32>\n"
            "  %iv = stablehlo.constant dense<0xFF800000> : tensor<f32>\n"
            "  %ii = stablehlo.constant dense<0> : tensor<i32>\n"
            "  %r:2 = \"stablehlo.reduce\"(%v, %i, %iv, %ii) ({\n"
            "  ^bb0(%av: tensor<f32>, %ai: tensor<i32>, %bv: tensor<f32>, %bi: tensor<i32>):\n"
            "    %gt = stablehlo.compare GT, %av, %bv, FLOAT : (tensor<f32>, tensor<f32>) -> tensor<i1>\n"
            "    %eq = stablehlo.compare EQ, %av, %bv, FLOAT : (tensor<f32>, tensor<f32>) -> tensor<i1>\n"
            "    %lt = stablehlo.compare LT, %ai, %bi, SIGNED : (tensor<i32>, tensor<i32>) -> tensor<i1>\n"
            "    %tie = stablehlo.and %eq, %lt : tensor<i1>\n"
            "    %pick = stablehlo.or %gt, %tie : tensor<i1>\n"
            "    %rv = stablehlo.select %pick, %av, %bv : (tensor<i1>, tensor<f32>, tensor<f32>) -> tensor<f32>\n"
            "    %ri = stablehlo.select %pick, %ai, %bi : (tensor<i1>, tensor<i32>, tensor<i32>) -> tensor<i32>\n"
            "    stablehlo.return %rv, %ri : tensor<f32>, tensor<i32>\n"
            "  }) {dimensions = array<i64: 1>} : (tensor<2x4xf32>, tensor<2x4xi32>, tensor<f32>, tensor<i32>) -> (tensor<2xf32>, tensor<2xi32>)\n"
            "  func.return %r#0, %r#1 : tensor<2xf32>, tensor<2xi32>\n}\n",
            1, &vin, &o);
  TU_ASSERT_OUT(&o, 0, float, 9, 7);
  TU_ASSERT_OUT(&o, 1, int32_t, 1, 1);
  tu_out_free(&o);
}

/* The group's client, with fusion off (each op runs its own kernel). */
static int setup(void **state) {
  setenv("XRT_SIM_NO_FUSION", "1", 1);
  return tu_setup_client(state);
}

TU_MAIN(setup, tu_teardown_client, cmocka_unit_test(test_reduce_float_arith),
        cmocka_unit_test(test_reduce_float_minmax),
        cmocka_unit_test(test_reduce_ints),
        cmocka_unit_test(test_reduce_wide_ints),
        cmocka_unit_test(test_reduce_pred),
        cmocka_unit_test(test_reduce_body_and_empty),
        cmocka_unit_test(test_reduce_generic_bodies))
