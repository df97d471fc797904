/*
 * test_kernel_quant.c - the simulator's quantized elementwise kernel
 * (src/sim/quant.c) for every integer storage type (2 to 64 bits, signed
 * and unsigned) and every expressed float type (f32, f64, f16, bf16 and a
 * small float, f8E4M3FN): uniform_quantize (round half to even, zero
 * point, clamping to the storage range), uniform_dequantize, a quantized
 * add and abs (dequantize, compute, requantize), every float op on
 * quantized operands, a quantized compare in every direction, per-axis
 * parameters along the outer and the inner dimension, and the ops the
 * quantized kernel does not compute (UNIMPLEMENTED at compile).
 *
 * The values are multiples of 1/2, so every step is exact in every
 * expressed type, and the expected values follow the spec's formulas
 * evaluated here.
 */
#include "test_kernels.h"

#define C(state) ((xrt_client *)*(state))
enum { N = 8 };

/* The storage types and the expressed types. */
static const xrt_dtype sts[] = {XRT_S2, XRT_S4,  XRT_S8,  XRT_S16,
                                XRT_S32, XRT_S64, XRT_U2,  XRT_U4,
                                XRT_U8, XRT_U16, XRT_U32, XRT_U64};
static const xrt_dtype exs[] = {XRT_F32, XRT_F64, XRT_F16, XRT_BF16,
                                XRT_F8E4M3FN};

static int64_t geti(const tu_dtinfo *s, const void *buf, int i) {
  return (int64_t)tu_get_int(s, buf, i);
}

/* quantize x with scale s, zero point zp into [lo, hi], each step
 * rounded to the expressed type e. */
static int64_t quant(const tu_dtinfo *e, double x, double s, int64_t zp,
                     double lo, double hi) {
  double y = tu_round_to(e->dt, tu_round_to(e->dt, x / s) + (double)zp);
  y = y < lo ? lo : y > hi ? hi : y;
  return (int64_t)tu_ref_round_even(y);
}

static void test_quant_types(void **state) {
  const double xs[N] = {0, 0.5, 1, -1, 1.5, 3, -2, 100};
  const double ys[N] = {0.5, 0.5, -1, 1, 3, -0.5, 4, -2};
  for (size_t t = 0; t < TU_COUNT(sts); t++)
    for (size_t e = 0; e < TU_COUNT(exs); e++) {
      const tu_dtinfo *s = tu_dt(sts[t]);
      const tu_dtinfo *x = tu_dt(exs[e]);
      int64_t zp = s->is_signed ? 1 : 2;
      double lo = s->is_signed ? -ldexp(1, s->bits - 1) : 0;
      double hi = s->is_signed ? ldexp(1, s->bits - 1) - 1 : ldexp(1, s->bits) - 1;
      if (s->bits == 64) lo = s->is_signed ? -1e6 : 0, hi = 1e6; /* not reached */
      char q[160], prog[4096];
      snprintf(q, sizeof q, "tensor<%dx!quant.uniform<%s:%s, 0.5:%lld>>", N,
               s->mlir, x->mlir, (long long)zp);
      snprintf(prog, sizeof prog,
               "func.func @main(%%a: tensor<%dx%s>, %%b: tensor<%dx%s>) -> "
               "(tensor<%dx%s>, tensor<%dx%s>, tensor<%dx%s>, tensor<%dx%s>, "
               "tensor<%dxi1>) {\n"
               "  %%q = stablehlo.uniform_quantize %%a : (tensor<%dx%s>) -> %s\n"
               "  %%p = stablehlo.uniform_quantize %%b : (tensor<%dx%s>) -> %s\n"
               "  %%0 = stablehlo.bitcast_convert %%q : (%s) -> tensor<%dx%s>\n"
               "  %%1 = stablehlo.uniform_dequantize %%q : (%s) -> tensor<%dx%s>\n"
               "  %%s = stablehlo.add %%q, %%p : %s\n"
               "  %%2 = stablehlo.bitcast_convert %%s : (%s) -> tensor<%dx%s>\n"
               "  %%m = stablehlo.abs %%p : %s\n"
               "  %%3 = stablehlo.bitcast_convert %%m : (%s) -> tensor<%dx%s>\n"
               "  %%4 = stablehlo.compare GT, %%q, %%p : (%s, %s) -> tensor<%dxi1>\n"
               "  func.return %%0, %%1, %%2, %%3, %%4 : tensor<%dx%s>, "
               "tensor<%dx%s>, tensor<%dx%s>, tensor<%dx%s>, tensor<%dxi1>\n}\n",
               N, x->mlir, N, x->mlir, N, s->mlir, N, x->mlir, N, s->mlir, N,
               s->mlir, N, N, x->mlir, q, N, x->mlir, q, q, N, s->mlir, q, N,
               x->mlir, q, q, N, s->mlir, q, q, N, s->mlir, q, q, N, N,
               s->mlir, N, x->mlir, N, s->mlir, N, s->mlir, N);
      char a[N * 8], b[N * 8];
      for (int i = 0; i < N; i++)
        tu_put(x, a, i, xs[i], 0), tu_put(x, b, i, ys[i], 0);
      tu_in in[2] = {{TU_SHAPE(x->dt, N), a}, {TU_SHAPE(x->dt, N), b}};
      tu_out o;
      xrt_status st = tu_run(C(state), prog, 2, in, &o);
      if (st != XRT_OK)
        fail_msg("%s:%s: %s: %s\n%s", s->mlir, x->mlir, xrt_strerror(st),
                 tu_msg, prog);
      for (int i = 0; i < N; i++) {
        int64_t qa = quant(x, tu_round_to(x->dt, xs[i]), 0.5, zp, lo, hi);
        int64_t qb = quant(x, tu_round_to(x->dt, ys[i]), 0.5, zp, lo, hi);
        double va = tu_round_to(x->dt, (double)(qa - zp) * 0.5);
        double vb = tu_round_to(x->dt, (double)(qb - zp) * 0.5);
        int64_t sum = quant(x, tu_round_to(x->dt, va + vb), 0.5, zp, lo, hi);
        int64_t ab = quant(x, tu_round_to(x->dt, fabs(vb)), 0.5, zp, lo, hi);
        if (geti(s, o.data[0], i) != qa || tu_get_f(x, o.data[1], i) != va ||
            geti(s, o.data[2], i) != sum || geti(s, o.data[3], i) != ab ||
            ((uint8_t *)o.data[4])[i] != (va > vb))
          fail_msg("%s:%s [%d]: q %lld/%lld deq %g/%g add %lld/%lld abs "
                   "%lld/%lld gt %d/%d",
                   s->mlir, x->mlir, i, (long long)geti(s, o.data[0], i),
                   (long long)qa, tu_get_f(x, o.data[1], i), va,
                   (long long)geti(s, o.data[2], i), (long long)sum,
                   (long long)geti(s, o.data[3], i), (long long)ab,
                   ((uint8_t *)o.data[4])[i], va > vb);
      }
      tu_out_free(&o);
    }
}

/* Per-axis parameters along dimension 0 (outer) and 1 (inner). */
static void test_quant_per_axis(void **state) {
  const float x[6] = {1, 2, 3, -1, -2, 4};
  tu_in in = {TU_SHAPE(XRT_F32, 2, 3), x};
  tu_out o;
  TU_RUN_OK(C(state),
            "func.func @main(%a: tensor<2x3xf32>) -> (tensor<2x3xi8>, tensor<2x3xi8>, tensor<2x3xf32>) {\n"
            "  %q = stablehlo.uniform_quantize %a : (tensor<2x3xf32>) -> tensor<2x3x!quant.uniform<i8:f32:0, {0.5:0, 2.0:1}>>\n"
            "  %r = stablehlo.uniform_quantize %a : (tensor<2x3xf32>) -> tensor<2x3x!quant.uniform<i8:f32:1, {1.0:0, 0.5:-1, 4.0:2}>>\n"
            "  %0 = stablehlo.bitcast_convert %q : (tensor<2x3x!quant.uniform<i8:f32:0, {0.5:0, 2.0:1}>>) -> tensor<2x3xi8>\n"
            "  %1 = stablehlo.bitcast_convert %r : (tensor<2x3x!quant.uniform<i8:f32:1, {1.0:0, 0.5:-1, 4.0:2}>>) -> tensor<2x3xi8>\n"
            "  %2 = stablehlo.uniform_dequantize %r : (tensor<2x3x!quant.uniform<i8:f32:1, {1.0:0, 0.5:-1, 4.0:2}>>) -> tensor<2x3xf32>\n"
            "  func.return %0, %1, %2 : tensor<2x3xi8>, tensor<2x3xi8>, tensor<2x3xf32>\n}\n",
            1, &in, &o);
  /* rows (round_nearest_even(x / scale + zero_point)): scale 0.5 zp 0 ->
   * 2, 4, 6; scale 2 zp 1 -> reven(0.5) = 0, reven(0) = 0, reven(3) = 3 */
  TU_ASSERT_OUT(&o, 0, int8_t, 2, 4, 6, 0, 0, 3);
  /* columns: (1, 0), (0.5, -1), (4, 2): 1, 3, reven(2.75) = 3;
   * -1, -5, reven(3) = 3 */
  TU_ASSERT_OUT(&o, 1, int8_t, 1, 3, 3, -1, -5, 3);
  /* back: (q - zp) * scale */
  TU_ASSERT_OUT(&o, 2, float, 1, 2, 4, -1, -2, 4);
  tu_out_free(&o);
}

#define Q4 "tensor<4x!quant.uniform<i8:f32, 0.5:0>>"
#define Q8 "tensor<8x!quant.uniform<i8:f32, 0.5:0>>"

/* Every float op on quantized i8:f32 (scale 0.5) operands and result:
 * dequantize, compute in double, round to f32, requantize (NaN gives 0,
 * infinities clamp). */
static void test_quant_every_op(void **state) {
  const float a[8] = {1, -2, 3, 0.5f, 4, -1, 0, 2.5f};
  const float b[8] = {2, 1, -1, 0.5f, 3, 4, 1, 0.5f};
  tu_in in[2] = {{TU_SHAPE(XRT_F32, 8), a}, {TU_SHAPE(XRT_F32, 8), b}};
  const tu_dtinfo *f32 = tu_dt(XRT_F32);
  for (int k = 0; k < TU_F_COUNT; k++) {
    char prog[1024];
    snprintf(prog, sizeof prog,
             "func.func @main(%%a: tensor<8xf32>, %%b: tensor<8xf32>) -> tensor<8xi8> {\n"
             "  %%p = stablehlo.uniform_quantize %%a : (tensor<8xf32>) -> " Q8 "\n"
             "  %%q = stablehlo.uniform_quantize %%b : (tensor<8xf32>) -> " Q8 "\n"
             "  %%r = stablehlo.%s %%p%s : " Q8 "\n"
             "  %%0 = stablehlo.bitcast_convert %%r : (" Q8 ") -> tensor<8xi8>\n"
             "  func.return %%0 : tensor<8xi8>\n}\n",
             tu_fop(k)->name, tu_fop(k)->binary ? ", %q" : "");
    tu_out o;
    TU_RUN_OK(C(state), prog, 2, in, &o);
    for (int i = 0; i < 8; i++) {
      double r =
          (float)tu_ref_fop(k, a[i], b[i]); /* inputs are exact in 0.5 steps */
      int64_t w = r != r ? 0 : quant(f32, r, 0.5, 0, -128, 127);
      int8_t g = ((int8_t *)o.data[0])[i];
      if (g != w)
        fail_msg("quantized %s [%d] (%g, %g): got %d want %lld",
                 tu_fop(k)->name, i, a[i], b[i], g, (long long)w);
    }
    tu_out_free(&o);
  }
}

/* Every comparison direction on dequantized values. */
static void test_quant_compare_dirs(void **state) {
  const float a[4] = {1, -2, 3, 0.5f}, b[4] = {1, 2, -3, 0.25f};
  tu_in in[2] = {{TU_SHAPE(XRT_F32, 4), a}, {TU_SHAPE(XRT_F32, 4), b}};
  static const char *const dirs[6] = {"EQ", "NE", "GE", "GT", "LE", "LT"};
  /* a vs b elementwise: equal, less, greater, greater */
  static const uint8_t want[6][4] = {{1, 0, 0, 0}, {0, 1, 1, 1},
                                     {1, 0, 1, 1}, {0, 0, 1, 1},
                                     {1, 1, 0, 0}, {0, 1, 0, 0}};
  for (int d = 0; d < 6; d++) {
    char prog[1024];
    snprintf(prog, sizeof prog,
             "func.func @main(%%a: tensor<4xf32>, %%b: tensor<4xf32>) -> tensor<4xi1> {\n"
             "  %%p = stablehlo.uniform_quantize %%a : (tensor<4xf32>) -> " Q4 "\n"
             "  %%q = stablehlo.uniform_quantize %%b : (tensor<4xf32>) -> " Q4 "\n"
             "  %%0 = stablehlo.compare %s, %%p, %%q : (" Q4 ", " Q4 ") -> tensor<4xi1>\n"
             "  func.return %%0 : tensor<4xi1>\n}\n",
             dirs[d]);
    tu_out o;
    TU_RUN_OK(C(state), prog, 2, in, &o);
    assert_int_equal(o.bytes[0], 4);
    assert_memory_equal(o.data[0], want[d], 4);
    tu_out_free(&o);
  }
}

/* Ops the quantized kernel does not compute are reported at compile. */
static void test_quant_unsupported(void **state) {
  static const char *const ops[][2] = {
      {"%0 = \"chlo.erf\"(%q) : (" Q4 ") -> " Q4,
       "chlo.erf is not implemented for tensor<4xi8> -> tensor<4xi8> (quantized)"},
      {"%0 = stablehlo.convert %q : (" Q4 ") -> tensor<4xf32>",
       "stablehlo.convert is not implemented for tensor<4xi8> -> tensor<4xf32> (quantized)"},
      {"%0 = stablehlo.is_finite %q : (" Q4 ") -> tensor<4xi1>",
       "stablehlo.is_finite is not implemented for tensor<4xi8> -> tensor<4xi1> (quantized)"},
  };
  const char *rt[] = {Q4, "tensor<4xf32>", "tensor<4xi1>"};
  for (size_t k = 0; k < TU_COUNT(ops); k++) {
    char prog[1024];
    snprintf(prog, sizeof prog,
             "func.func @main(%%a: tensor<4xf32>) -> %s {\n"
             "  %%q = stablehlo.uniform_quantize %%a : (tensor<4xf32>) -> " Q4 "\n"
             "  %s\n  func.return %%0 : %s\n}\n",
             rt[k], ops[k][0], rt[k]);
    xrt_executable *exe = NULL;
    xrt_status st = xrt_compile(C(state), prog, strlen(prog), NULL, &exe);
    assert_int_equal(st, XRT_UNIMPLEMENTED);
    TU_ASSERT_CONTAINS(xrt_last_error(), ops[k][1]);
    assert_null(exe);
  }
}

TU_MAIN(tu_setup_client, tu_teardown_client, cmocka_unit_test(test_quant_types),
        cmocka_unit_test(test_quant_per_axis),
        cmocka_unit_test(test_quant_compare_dirs),
        cmocka_unit_test(test_quant_every_op),
        cmocka_unit_test(test_quant_unsupported))
