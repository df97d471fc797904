/* test_types.c - the f8/f6/f4 element types, reduce_precision, chlo.mulhi,
 * quantized tensors (uniform_quantize / uniform_dequantize / quantized
 * arithmetic) and their verifier constraints, and the accuracy of the
 * transcendental functions against libm's double results rounded to the
 * element type.  Expected values are computed by hand (see the comments)
 * or with double-precision libm. */
#include "test_util.h"

#define C(state) ((xrt_client *)*(state))
#define IN(dt, data, ...) ((tu_in){TU_SHAPE((dt), __VA_ARGS__), (data)})

static char prog[8192];

/* Runs "func.func @main(<args>) -> RT { <body> func.return %r : RT }". */
static void run_prog(xrt_client *c, int nin, const tu_in *in, tu_out *o,
                     const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(prog, sizeof prog, fmt, ap);
  va_end(ap);
  TU_RUN_OK(c, prog, nin, in, o);
}

/* Compiles a program that must fail to verify; returns its message. */
static const char *verify_fails(xrt_client *c, const char *text) {
  xrt_executable *exe = NULL;
  xrt_status st = xrt_compile(c, text, strlen(text), NULL, &exe);
  if (st == XRT_OK) {
    xrt_executable_release(exe);
    fail_msg("program compiled but should not:\n%s", text);
  }
  assert_int_equal(st, XRT_INVALID_ARGUMENT);
  tu_save_error();
  return tu_msg;
}

typedef struct mf_type {
  xrt_dtype dt;
  const char *name;
  int bits;
} mf_type;

static const mf_type mf_types[] = {
    {XRT_F8E4M3FN, "f8E4M3FN", 8},      {XRT_F8E5M2, "f8E5M2", 8},
    {XRT_F8E4M3FNUZ, "f8E4M3FNUZ", 8},  {XRT_F8E5M2FNUZ, "f8E5M2FNUZ", 8},
    {XRT_F8E4M3B11FNUZ, "f8E4M3B11FNUZ", 8}, {XRT_F8E3M4, "f8E3M4", 8},
    {XRT_F8E4M3, "f8E4M3", 8},          {XRT_F8E8M0FNU, "f8E8M0FNU", 8},
    {XRT_F6E2M3FN, "f6E2M3FN", 6},      {XRT_F6E3M2FN, "f6E3M2FN", 6},
    {XRT_F4E2M1FN, "f4E2M1FN", 4},
};

/* ---- f8/f6/f4: host buffers and conversions ---- */

/* Every bit pattern survives upload/download, a program that returns its
 * argument, and (NaNs aside) a round trip through f64 and through f32. */
static void test_minifloat_roundtrip(void **state) {
  xrt_device *dev = xrt_client_device(C(state), 0);
  for (size_t k = 0; k < TU_COUNT(mf_types); k++) {
    const mf_type *m = &mf_types[k];
    int n = 1 << m->bits;
    uint8_t pat[256], back[256];
    for (int i = 0; i < n; i++) pat[i] = (uint8_t)i;
    xrt_shape s = TU_SHAPE(m->dt, n);
    xrt_buffer *b = NULL;
    assert_int_equal(xrt_buffer_from_host(C(state), dev, &s, pat, &b), XRT_OK);
    assert_int_equal(xrt_buffer_to_host(b, back, (size_t)n), XRT_OK);
    assert_memory_equal(pat, back, (size_t)n);
    xrt_buffer_release(b);

    tu_in in = IN(m->dt, pat, n);
    tu_out o;
    run_prog(C(state), 1, &in, &o,
             "func.func @main(%%a: tensor<%dx%s>) -> (tensor<%dx%s>, "
             "tensor<%dx%s>, tensor<%dx%s>) {\n"
             "  %%w = stablehlo.convert %%a : (tensor<%dx%s>) -> tensor<%dxf64>\n"
             "  %%b = stablehlo.convert %%w : (tensor<%dxf64>) -> tensor<%dx%s>\n"
             "  %%x = stablehlo.convert %%a : (tensor<%dx%s>) -> tensor<%dxf32>\n"
             "  %%c = stablehlo.convert %%x : (tensor<%dxf32>) -> tensor<%dx%s>\n"
             "  func.return %%a, %%b, %%c : tensor<%dx%s>, tensor<%dx%s>, "
             "tensor<%dx%s>\n}\n",
             n, m->name, n, m->name, n, m->name, n, m->name, n, m->name, n, n,
             n, m->name, n, m->name, n, n, n, m->name, n, m->name, n, m->name,
             n, m->name);
    assert_memory_equal(o.data[0], pat, (size_t)n);
    for (int r = 1; r <= 2; r++) {
      const uint8_t *got = (const uint8_t *)o.data[r];
      for (int i = 0; i < n; i++) {
        double want = xrt_minifloat_to_f64(m->dt, (uint8_t)i);
        if (isnan(want)) {
          if (!isnan(xrt_minifloat_to_f64(m->dt, got[i])))
            fail_msg("%s NaN 0x%02x came back as 0x%02x", m->name, i, got[i]);
        } else if (got[i] != i) {
          fail_msg("%s 0x%02x came back as 0x%02x", m->name, i, got[i]);
        }
      }
    }
    tu_out_free(&o);
  }
}

/* f32 -> small float on hand-computed values, and back. */
static void cvt_f32_to(xrt_client *c, const char *t, const float *x, int n,
                       tu_out *o) {
  tu_in in = IN(XRT_F32, x, n);
  run_prog(c, 1, &in, o,
           "func.func @main(%%a: tensor<%dxf32>) -> tensor<%dx%s> {\n"
           "  %%0 = stablehlo.convert %%a : (tensor<%dxf32>) -> tensor<%dx%s>\n"
           "  func.return %%0 : tensor<%dx%s>\n}\n",
           n, n, t, n, n, t, n, t);
}

static void test_minifloat_convert_from_f32(void **state) {
  tu_out o;
  /* f8E4M3FN: bias 7, 3 mantissa bits, max 448 = 0x7e, NaN 0x7f/0xff.
   * 0.1 = 1.6 * 2^-4 -> mantissa 4.8/8 rounds to 5: 0x1d (0.1015625).
   * 1.0625 is halfway between 1.0 (0x38) and 1.125 (0x39): even -> 0x38.
   * 1.1875 is halfway between 1.125 and 1.25 (0x3a): even -> 0x3a.
   * 464 is halfway between 448 and 480 (not finite): even -> 448.
   * 480 and above overflow to NaN (no infinity); -1000 -> 0xff.
   * 2^-9 is the smallest subnormal (0x01); 2^-10 is a tie with 0 -> 0;
   * 3 * 2^-11 rounds up to 2^-9. */
  const float e4m3fn_in[] = {1.0f, 0.1f, 1.0625f, 1.1875f, 448.0f, 464.0f,
                             480.0f, -1000.0f, INFINITY, NAN, 0x1p-9f,
                             0x1p-10f, 0x3p-11f, -0.0f, -2.5f, 240.0f};
  cvt_f32_to(C(state), "f8E4M3FN", e4m3fn_in, 16, &o);
  TU_ASSERT_OUT(&o, 0, uint8_t, 0x38, 0x1d, 0x38, 0x3a, 0x7e, 0x7e, 0x7f,
                0xff, 0x7f, 0x7f, 0x01, 0x00, 0x01, 0x80, 0xc2, 0x77);
  tu_out_free(&o);

  /* f8E5M2: bias 15, 2 mantissa bits, max 57344 = 0x7b, inf 0x7c.
   * 61440 is halfway between 57344 and 65536 (inf): even -> inf.
   * Smallest subnormal 2^-16 = 0x01. */
  const float e5m2_in[] = {1.0f, 57344.0f, 61440.0f, -1e6f, 0x1p-16f,
                           0x1p-17f, 1.125f, 1.375f};
  cvt_f32_to(C(state), "f8E5M2", e5m2_in, 8, &o);
  /* 1.125 ties between 1.0 and 1.25 -> 1.0; 1.375 ties between 1.25 and
   * 1.5 -> 1.5 (0x3e). */
  TU_ASSERT_OUT(&o, 0, uint8_t, 0x3c, 0x7b, 0x7c, 0xfc, 0x01, 0x00, 0x3c,
                0x3e);
  tu_out_free(&o);

  /* f8E4M3FNUZ: bias 8, no -0 (it is the NaN 0x80), max 240 = 0x7f. */
  const float fnuz_in[] = {1.0f, -0.0f, 240.0f, 1e6f, NAN, -1.0f};
  cvt_f32_to(C(state), "f8E4M3FNUZ", fnuz_in, 6, &o);
  TU_ASSERT_OUT(&o, 0, uint8_t, 0x40, 0x00, 0x7f, 0x80, 0x80, 0xc0);
  tu_out_free(&o);

  /* f4E2M1FN: values 0, 0.5, 1, 1.5, 2, 3, 4, 6; no inf/NaN.  5 ties
   * between 4 (0x6) and 6 (0x7): even -> 4.  Overflow saturates; NaN -> 0. */
  const float f4_in[] = {5.0f, 100.0f, -100.0f, NAN, 0.25f, 0.75f, -3.0f,
                         INFINITY};
  cvt_f32_to(C(state), "f4E2M1FN", f4_in, 8, &o);
  TU_ASSERT_OUT(&o, 0, uint8_t, 0x06, 0x07, 0x0f, 0x00, 0x00, 0x02, 0x0d,
                0x07);
  tu_out_free(&o);

  /* f6E3M2FN: bias 3, max 28 = 0x1f (1000 saturates), smallest subnormal
   * 2^-4 = 0x01, 2^-2 = 0x04. */
  const float f6_in[] = {28.0f, 1000.0f, 0.0625f, 0.25f};
  cvt_f32_to(C(state), "f6E3M2FN", f6_in, 4, &o);
  TU_ASSERT_OUT(&o, 0, uint8_t, 0x1f, 0x1f, 0x01, 0x04);
  tu_out_free(&o);

  /* f8E8M0FNU: powers of two only.  3 = 1.5 * 2 ties between 2 and 4: the
   * one-bit significand is odd, so 4 (0x81); 0.75 = 1.5 * 2^-1 ties the
   * same way to 1.0 (0x7f); negatives and NaN -> NaN 0xff. */
  const float e8m0_in[] = {1.0f, 3.0f, 0.75f, -1.0f, NAN, 0x1p-127f};
  cvt_f32_to(C(state), "f8E8M0FNU", e8m0_in, 6, &o);
  TU_ASSERT_OUT(&o, 0, uint8_t, 0x7f, 0x81, 0x7f, 0xff, 0xff, 0x00);
  tu_out_free(&o);
}

static void test_minifloat_convert_to_other(void **state) {
  /* f8E4M3FN 0x01 = 2^-9, 0x7e = 448, 0xfe = -448, 0x7f NaN, 0x38 = 1,
   * 0xb4 = -0.75 (1.5 * 2^-1). */
  const uint8_t a[] = {0x01, 0x7e, 0xfe, 0x7f, 0x38, 0xb4};
  tu_in in = IN(XRT_F8E4M3FN, a, 6);
  tu_out o;
  run_prog(C(state), 1, &in, &o,
           "func.func @main(%%a: tensor<6xf8E4M3FN>) -> (tensor<6xf32>, "
           "tensor<6xi8>, tensor<6xui16>, tensor<6xf16>, tensor<6xf8E5M2>) {\n"
           "  %%0 = stablehlo.convert %%a : (tensor<6xf8E4M3FN>) -> tensor<6xf32>\n"
           "  %%1 = stablehlo.convert %%a : (tensor<6xf8E4M3FN>) -> tensor<6xi8>\n"
           "  %%2 = stablehlo.convert %%a : (tensor<6xf8E4M3FN>) -> tensor<6xui16>\n"
           "  %%3 = stablehlo.convert %%a : (tensor<6xf8E4M3FN>) -> tensor<6xf16>\n"
           "  %%4 = stablehlo.convert %%a : (tensor<6xf8E4M3FN>) -> tensor<6xf8E5M2>\n"
           "  func.return %%0, %%1, %%2, %%3, %%4 : tensor<6xf32>, tensor<6xi8>, "
           "tensor<6xui16>, tensor<6xf16>, tensor<6xf8E5M2>\n}\n");
  const float *f = (const float *)o.data[0];
  assert_true(f[0] == 0x1p-9f && f[1] == 448.0f && f[2] == -448.0f);
  assert_true(isnan(f[3]) && f[4] == 1.0f && f[5] == -0.75f);
  /* float -> int truncates and saturates; NaN -> 0 */
  TU_ASSERT_OUT(&o, 1, int8_t, 0, 127, -128, 0, 1, 0);
  TU_ASSERT_OUT(&o, 2, uint16_t, 0, 448, 0, 0, 1, 0);
  /* f16: 2^-9 = 0x1800, 448 = 0x5f00, -448 = 0xdf00, 1 = 0x3c00,
   * -0.75 = 0xba00 */
  const uint16_t *h = (const uint16_t *)o.data[3];
  assert_int_equal(h[0], 0x1800);
  assert_int_equal(h[1], 0x5f00);
  assert_int_equal(h[2], 0xdf00);
  assert_true((h[3] & 0x7c00) == 0x7c00 && (h[3] & 0x3ff));
  assert_int_equal(h[4], 0x3c00);
  assert_int_equal(h[5], 0xba00);
  /* f8E5M2: 2^-9 has biased exponent 6 -> 0x18; 448 = 1.75*2^8 ->
   * 0x5f; -448 0xdf; NaN stays NaN; 1 = 0x3c; -0.75 = 1.5*2^-1 = 0xba. */
  const uint8_t *e = (const uint8_t *)o.data[4];
  assert_int_equal(e[0], 0x18);
  assert_int_equal(e[1], 0x5f);
  assert_int_equal(e[2], 0xdf);
  assert_true(isnan(xrt_minifloat_to_f64(XRT_F8E5M2, e[3])));
  assert_int_equal(e[4], 0x3c);
  assert_int_equal(e[5], 0xba);
  tu_out_free(&o);

  /* integers -> f8E4M3FN: 17 ties between 16 and 18 -> 16 (0x58);
   * 19 ties between 18 and 20 -> 20 (0x5a); 1000 overflows to NaN. */
  const int32_t ints[] = {17, 19, 1000, -3};
  tu_in in2 = IN(XRT_S32, ints, 4);
  run_prog(C(state), 1, &in2, &o,
           "func.func @main(%%a: tensor<4xi32>) -> tensor<4xf8E4M3FN> {\n"
           "  %%0 = stablehlo.convert %%a : (tensor<4xi32>) -> tensor<4xf8E4M3FN>\n"
           "  func.return %%0 : tensor<4xf8E4M3FN>\n}\n");
  TU_ASSERT_OUT(&o, 0, uint8_t, 0x58, 0x5a, 0x7f, 0xc4);
  tu_out_free(&o);
}

/* Arithmetic rounds the exact result once to the element type. */
static void test_minifloat_arith(void **state) {
  /* f8E4M3FN: 1 + 0.0625 = 1.0625 ties -> 1.0 (0x38); 16 * 32 = 512
   * overflows to NaN; 3 / 2 = 1.5 (0x3c); 448 - (-448) -> NaN. */
  const uint8_t a[] = {0x38, 0x48, 0x44, 0x7e};
  const uint8_t b[] = {0x18, 0x58, 0x40, 0xfe};
  tu_in in[2] = {IN(XRT_F8E4M3FN, a, 4), IN(XRT_F8E4M3FN, b, 4)};
  tu_out o;
  run_prog(C(state), 2, in, &o,
           "func.func @main(%%a: tensor<4xf8E4M3FN>, %%b: tensor<4xf8E4M3FN>)"
           " -> (tensor<4xf8E4M3FN>, tensor<4xf8E4M3FN>, tensor<4xf8E4M3FN>,"
           " tensor<4xf8E4M3FN>, tensor<4xi1>, tensor<4xf8E4M3FN>) {\n"
           "  %%0 = stablehlo.add %%a, %%b : tensor<4xf8E4M3FN>\n"
           "  %%1 = stablehlo.multiply %%a, %%b : tensor<4xf8E4M3FN>\n"
           "  %%2 = stablehlo.divide %%a, %%b : tensor<4xf8E4M3FN>\n"
           "  %%3 = stablehlo.subtract %%a, %%b : tensor<4xf8E4M3FN>\n"
           "  %%4 = stablehlo.compare GT, %%a, %%b, FLOAT : (tensor<4xf8E4M3FN>,"
           " tensor<4xf8E4M3FN>) -> tensor<4xi1>\n"
           "  %%5 = stablehlo.exponential %%a : tensor<4xf8E4M3FN>\n"
           "  func.return %%0, %%1, %%2, %%3, %%4, %%5 : tensor<4xf8E4M3FN>, "
           "tensor<4xf8E4M3FN>, tensor<4xf8E4M3FN>, tensor<4xf8E4M3FN>, "
           "tensor<4xi1>, tensor<4xf8E4M3FN>\n}\n");
  /* a = {1, 4, 3, 448}, b = {0.0625, 16, 2, -448} (0x18 = 2^-4, 0x48 = 4,
   * 0x58 = 16, 0x44 = 3, 0x40 = 2). */
  /* add: 1.0625 -> 1 (0x38); 20 (0x5a); 5 (0x4a); 0 */
  TU_ASSERT_OUT(&o, 0, uint8_t, 0x38, 0x5a, 0x4a, 0x00);
  /* mul: 0.0625 (0x18); 64 (0x68); 6 (0x4c); -200704 -> NaN (0xff) */
  TU_ASSERT_OUT(&o, 1, uint8_t, 0x18, 0x68, 0x4c, 0xff);
  /* div: 16 (0x58); 0.25 (0x28); 1.5 (0x3c); -1 (0xb8) */
  TU_ASSERT_OUT(&o, 2, uint8_t, 0x58, 0x28, 0x3c, 0xb8);
  /* sub: 0.9375 = 1.875 * 2^-1 (0x37); -12 (0xd4); 1 (0x38); 896 -> NaN */
  TU_ASSERT_OUT(&o, 3, uint8_t, 0x37, 0xd4, 0x38, 0x7f);
  TU_ASSERT_OUT(&o, 4, uint8_t, 1, 0, 1, 1);
  /* exp(1) = 2.718 -> 2.75 (0x43); exp(4) = 54.6 -> 56 (0x66: 1.75 * 32);
   * exp(3) = 20.09 -> 20 (0x5a); exp(448) -> NaN */
  TU_ASSERT_OUT(&o, 5, uint8_t, 0x43, 0x66, 0x5a, 0x7f);
  tu_out_free(&o);

  /* f4E2M1FN saturates: 6 + 6 = 12 -> 6; 1.5 + 1.5 = 3; f8E5M2
   * overflows to inf: 57344 * 2 -> inf. */
  const uint8_t f4a[] = {0x07, 0x03}, f4b[] = {0x07, 0x03};
  tu_in in4[2] = {IN(XRT_F4E2M1FN, f4a, 2), IN(XRT_F4E2M1FN, f4b, 2)};
  run_prog(C(state), 2, in4, &o,
           "func.func @main(%%a: tensor<2xf4E2M1FN>, %%b: tensor<2xf4E2M1FN>)"
           " -> tensor<2xf4E2M1FN> {\n"
           "  %%0 = stablehlo.add %%a, %%b : tensor<2xf4E2M1FN>\n"
           "  func.return %%0 : tensor<2xf4E2M1FN>\n}\n");
  TU_ASSERT_OUT(&o, 0, uint8_t, 0x07, 0x05);
  tu_out_free(&o);
  const uint8_t e5a[] = {0x7b, 0x3c}, e5b[] = {0x40, 0x7c};
  tu_in in5[2] = {IN(XRT_F8E5M2, e5a, 2), IN(XRT_F8E5M2, e5b, 2)};
  run_prog(C(state), 2, in5, &o,
           "func.func @main(%%a: tensor<2xf8E5M2>, %%b: tensor<2xf8E5M2>)"
           " -> tensor<2xf8E5M2> {\n"
           "  %%0 = stablehlo.multiply %%a, %%b : tensor<2xf8E5M2>\n"
           "  func.return %%0 : tensor<2xf8E5M2>\n}\n");
  TU_ASSERT_OUT(&o, 0, uint8_t, 0x7c, 0x7c); /* 57344*2 = inf, 1*inf */
  tu_out_free(&o);
}

/* ---- reduce_precision ---- */

static void test_reduce_precision(void **state) {
  /* To e8m7 (bfloat16's layout): 1 + 2^-8 ties between 1 and 1 + 2^-7:
   * even -> 1; 1 + 3*2^-8 ties between 1 + 2^-7 (odd) and 1 + 2^-6 ->
   * 1 + 2^-6; 1 + 2^-8 + 2^-20 is above the tie -> 1 + 2^-7.
   * To e5m10 (f16's layout): 1 + 2^-8 fits, 65504 stays, 65520 ties
   * upwards (65504's mantissa is odd) to 2^16 and overflows to inf, -1e-8
   * is below f16's normal range and flushes to -0; NaN stays NaN. */
  const float x[] = {1.00390625f, 1.01171875f, 1.0f + 0x1p-8f + 0x1p-20f,
                     65504.0f, 65520.0f, -1e-8f, NAN, -3.0f};
  tu_in in = IN(XRT_F32, x, 8);
  tu_out o;
  run_prog(C(state), 1, &in, &o,
           "func.func @main(%%a: tensor<8xf32>) -> (tensor<8xf32>, "
           "tensor<8xf32>, tensor<8xf32>) {\n"
           "  %%0 = stablehlo.reduce_precision %%a, format = e8m7 : tensor<8xf32>\n"
           "  %%1 = stablehlo.reduce_precision %%a, format = e5m10 : tensor<8xf32>\n"
           "  %%2 = \"stablehlo.reduce_precision\"(%%a) {exponent_bits = 2 : i32,"
           " mantissa_bits = 0 : i32} : (tensor<8xf32>) -> tensor<8xf32>\n"
           "  func.return %%0, %%1, %%2 : tensor<8xf32>, tensor<8xf32>, "
           "tensor<8xf32>\n}\n");
  const float *r0 = (const float *)o.data[0], *r1 = (const float *)o.data[1];
  const float *r2 = (const float *)o.data[2];
  assert_true(r0[0] == 1.0f && r0[1] == 1.015625f && r0[2] == 1.0078125f);
  assert_true(r0[3] == 65536.0f && r0[5] < 0 && isnan(r0[6]) && r0[7] == -3.0f);
  assert_true(r1[0] == 1.00390625f && r1[3] == 65504.0f && isinf(r1[4]) && r1[4] > 0);
  assert_true(r1[5] == 0 && signbit(r1[5]) && isnan(r1[6]));
  /* e2m0: biased exponents 127 and 128 remain (values 1 and 2), 126 and
   * below flush to zero, 129 and above to infinity.  1.0039 -> 1; 65504 ->
   * inf; -3 = -1.5 * 2 ties and rounds to the even exponent: -2; NaN with
   * no mantissa bits -> +inf. */
  assert_true(r2[0] == 1.0f && isinf(r2[3]) && r2[7] == -2.0f);
  assert_true(isinf(r2[6]) && r2[6] > 0 && r2[5] == 0);
  tu_out_free(&o);

  /* f64 to e5m2 keeps f8E5M2's values: 0.3 -> 0.3125 (1.25 * 2^-2). */
  const double d[] = {0.3, 1e300};
  tu_in ind = IN(XRT_F64, d, 2);
  run_prog(C(state), 1, &ind, &o,
           "func.func @main(%%a: tensor<2xf64>) -> tensor<2xf64> {\n"
           "  %%0 = stablehlo.reduce_precision %%a, format = e5m2 : tensor<2xf64>\n"
           "  func.return %%0 : tensor<2xf64>\n}\n");
  const double *rd = (const double *)o.data[0];
  assert_true(rd[0] == 0.3125 && isinf(rd[1]));
  tu_out_free(&o);
}

/* ---- chlo.mulhi ---- */

static void mulhi(xrt_client *c, xrt_dtype dt, const char *t, const void *a,
                  const void *b, int n, tu_out *o) {
  tu_in in[2] = {IN(dt, a, n), IN(dt, b, n)};
  run_prog(c, 2, in, o,
           "func.func @main(%%a: tensor<%dx%s>, %%b: tensor<%dx%s>) -> "
           "tensor<%dx%s> {\n"
           "  %%0 = \"chlo.mulhi\"(%%a, %%b) : (tensor<%dx%s>, tensor<%dx%s>)"
           " -> tensor<%dx%s>\n"
           "  func.return %%0 : tensor<%dx%s>\n}\n",
           n, t, n, t, n, t, n, t, n, t, n, t, n, t);
}

static void test_mulhi(void **state) {
  tu_out o;
  /* i8: 64*4 = 256 -> 1; -64*4 = -256 -> -1; -128*-128 = 16384 -> 64;
   * -1*1 = -1 -> -1 (high byte of 0xffff); 3*5 -> 0 */
  const int8_t a8[] = {64, -64, -128, -1, 3}, b8[] = {4, 4, -128, 1, 5};
  mulhi(C(state), XRT_S8, "i8", a8, b8, 5, &o);
  TU_ASSERT_OUT(&o, 0, int8_t, 1, -1, 64, -1, 0);
  tu_out_free(&o);
  /* ui8: 255*255 = 65025 = 0xfe01 -> 254; 128*2 -> 1 */
  const uint8_t u8a[] = {255, 128}, u8b[] = {255, 2};
  mulhi(C(state), XRT_U8, "ui8", u8a, u8b, 2, &o);
  TU_ASSERT_OUT(&o, 0, uint8_t, 254, 1);
  tu_out_free(&o);
  /* i32: MIN*MIN = 2^62 -> 2^30; -1*1 -> -1; MAX*2 = 2^32 - 2 -> 0 */
  const int32_t a32[] = {INT32_MIN, -1, INT32_MAX}, b32[] = {INT32_MIN, 1, 2};
  mulhi(C(state), XRT_S32, "i32", a32, b32, 3, &o);
  TU_ASSERT_OUT(&o, 0, int32_t, 1 << 30, -1, 0);
  tu_out_free(&o);
  /* ui32: 0xffffffff^2 = 0xfffffffe00000001 -> 0xfffffffe */
  const uint32_t u32a[] = {0xffffffffu, 0x80000000u}, u32b[] = {0xffffffffu, 4};
  mulhi(C(state), XRT_U32, "ui32", u32a, u32b, 2, &o);
  TU_ASSERT_OUT(&o, 0, uint32_t, 0xfffffffeu, 2);
  tu_out_free(&o);
  /* i64: MIN*MIN = 2^126 -> 2^62; -1*1 -> -1; MAX*MAX = 2^126 - 2^64 + 1
   * -> 2^62 - 1; MIN*MAX = -2^126 + 2^63 -> -2^62; 2^60 * 16 -> 1 */
  const int64_t a64[] = {INT64_MIN, -1, INT64_MAX, INT64_MIN,
                         (int64_t)1 << 60};
  const int64_t b64[] = {INT64_MIN, 1, INT64_MAX, INT64_MAX, 16};
  mulhi(C(state), XRT_S64, "i64", a64, b64, 5, &o);
  TU_ASSERT_OUT(&o, 0, int64_t, (int64_t)1 << 62, -1,
                ((int64_t)1 << 62) - 1, -((int64_t)1 << 62), 1);
  tu_out_free(&o);
  /* ui64: max*max = 2^128 - 2^65 + 1 -> 2^64 - 2; 2^63 * 2 -> 1 */
  const uint64_t u64a[] = {UINT64_MAX, (uint64_t)1 << 63};
  const uint64_t u64b[] = {UINT64_MAX, 2};
  mulhi(C(state), XRT_U64, "ui64", u64a, u64b, 2, &o);
  TU_ASSERT_OUT(&o, 0, uint64_t, UINT64_MAX - 1, 1);
  tu_out_free(&o);
}

/* ---- quantized tensors ---- */

static void test_quantize_per_tensor(void **state) {
  /* scale 0.5, zero point 3: x / 0.5 + 3 = {5, 0.5, 203, -197, 3.5, 4.5},
   * clamped to [-128, 127] and rounded half to even: {5, 0, 127, -128, 4,
   * 4}.  Dequantized: (q - 3) * 0.5 = {1, -1.5, 62, -65.5, 0.5, 0.5}. */
  const float x[] = {1.0f, -1.25f, 100.0f, -100.0f, 0.25f, 0.75f};
  tu_in in = IN(XRT_F32, x, 6);
  tu_out o;
  run_prog(C(state), 1, &in, &o,
           "func.func @main(%%a: tensor<6xf32>) -> (tensor<6xi8>, "
           "tensor<6xf32>, tensor<6xi8>) {\n"
           "  %%q = stablehlo.uniform_quantize %%a : (tensor<6xf32>) -> "
           "tensor<6x!quant.uniform<i8:f32, 0.5:3>>\n"
           "  %%s = stablehlo.bitcast_convert %%q : (tensor<6x!quant.uniform<i8:"
           "f32, 0.5:3>>) -> tensor<6xi8>\n"
           "  %%d = stablehlo.uniform_dequantize %%q : (tensor<6x!quant.uniform<"
           "i8:f32, 0.5:3>>) -> tensor<6xf32>\n"
           "  %%r = stablehlo.uniform_quantize %%q : (tensor<6x!quant.uniform<"
           "i8:f32, 0.5:3>>) -> tensor<6x!quant.uniform<i8<-10:10>:f32, 2.0:0>>\n"
           "  %%t = stablehlo.bitcast_convert %%r : (tensor<6x!quant.uniform<"
           "i8<-10:10>:f32, 2.0:0>>) -> tensor<6xi8>\n"
           "  func.return %%s, %%d, %%t : tensor<6xi8>, tensor<6xf32>, "
           "tensor<6xi8>\n}\n");
  TU_ASSERT_OUT(&o, 0, int8_t, 5, 0, 127, -128, 4, 4);
  TU_ASSERT_OUT(&o, 1, float, 1.0f, -1.5f, 62.0f, -65.5f, 0.5f, 0.5f);
  /* requantized to scale 2, range [-10, 10]: {0.5, -0.75, 31, -32.75,
   * 0.25, 0.25} -> {0, -1, 10, -10, 0, 0} */
  TU_ASSERT_OUT(&o, 2, int8_t, 0, -1, 10, -10, 0, 0);
  tu_out_free(&o);
}

static void test_quantize_per_axis(void **state) {
  /* axis 1 with (scale:zp) {1:0, 0.5:1, 0.25:-2}: column j of
   * [[1,2,3],[4,5,6]] becomes x / s_j + zp_j: [[1,5,10],[4,11,22]].
   * axis 0 with {1:0, 0.5:1}: row 0 stays, row 1: {9, 11, 13}. */
  const float x[] = {1, 2, 3, 4, 5, 6};
  tu_in in = IN(XRT_F32, x, 2, 3);
  tu_out o;
  run_prog(C(state), 1, &in, &o,
           "func.func @main(%%a: tensor<2x3xf32>) -> (tensor<2x3xi8>, "
           "tensor<2x3xi8>, tensor<2x3xf32>) {\n"
           "  %%q = stablehlo.uniform_quantize %%a : (tensor<2x3xf32>) -> "
           "tensor<2x3x!quant.uniform<i8:f32:1, {1.0:0, 0.5:1, 0.25:-2}>>\n"
           "  %%s = stablehlo.bitcast_convert %%q : (tensor<2x3x!quant.uniform<"
           "i8:f32:1, {1.0:0, 0.5:1, 0.25:-2}>>) -> tensor<2x3xi8>\n"
           "  %%p = stablehlo.uniform_quantize %%a : (tensor<2x3xf32>) -> "
           "tensor<2x3x!quant.uniform<i8:f32:0, {1.0:0, 0.5:1}>>\n"
           "  %%t = stablehlo.bitcast_convert %%p : (tensor<2x3x!quant.uniform<"
           "i8:f32:0, {1.0:0, 0.5:1}>>) -> tensor<2x3xi8>\n"
           "  %%d = stablehlo.uniform_dequantize %%q : (tensor<2x3x!quant.uniform"
           "<i8:f32:1, {1.0:0, 0.5:1, 0.25:-2}>>) -> tensor<2x3xf32>\n"
           "  func.return %%s, %%t, %%d : tensor<2x3xi8>, tensor<2x3xi8>, "
           "tensor<2x3xf32>\n}\n");
  TU_ASSERT_OUT(&o, 0, int8_t, 1, 5, 10, 4, 11, 22);
  TU_ASSERT_OUT(&o, 1, int8_t, 1, 2, 3, 9, 11, 13);
  TU_ASSERT_OUT(&o, 2, float, 1, 2, 3, 4, 5, 6);
  tu_out_free(&o);

  /* dequantize per-axis from raw storage: axis 0, {0.5:10, 2:-1}:
   * row 0 (q - 10) * 0.5, row 1 (q + 1) * 2 */
  const int8_t q[] = {10, 12, 0, -1, 3, 127};
  tu_in inq = IN(XRT_S8, q, 2, 3);
  run_prog(C(state), 1, &inq, &o,
           "func.func @main(%%a: tensor<2x3xi8>) -> tensor<2x3xf32> {\n"
           "  %%q = stablehlo.bitcast_convert %%a : (tensor<2x3xi8>) -> "
           "tensor<2x3x!quant.uniform<i8:f32:0, {0.5:10, 2.0:-1}>>\n"
           "  %%d = stablehlo.uniform_dequantize %%q : (tensor<2x3x!quant.uniform"
           "<i8:f32:0, {0.5:10, 2.0:-1}>>) -> tensor<2x3xf32>\n"
           "  func.return %%d : tensor<2x3xf32>\n}\n");
  TU_ASSERT_OUT(&o, 0, float, 0.0f, 1.0f, -5.0f, 0.0f, 8.0f, 256.0f);
  tu_out_free(&o);
}

static void test_quantized_add(void **state) {
  /* lhs 0.1:-30, rhs 0.5:-20, result 0.5:-20 (the interpreter's test):
   * {1,2} + {3,4} = {4,6} -> {8-20, 12-20} = {-12, -8}.
   * Then 0.1:0 with {10,-10} + itself = {20,-20} -> {200,-200} clamps to
   * {127, -128}. */
  const float a[] = {1.0f, 2.0f}, b[] = {3.0f, 4.0f}, c[] = {10.0f, -10.0f};
  tu_in in[3] = {IN(XRT_F32, a, 2), IN(XRT_F32, b, 2), IN(XRT_F32, c, 2)};
  tu_out o;
  run_prog(C(state), 3, in, &o,
           "func.func @main(%%a: tensor<2xf32>, %%b: tensor<2xf32>, "
           "%%c: tensor<2xf32>) -> (tensor<2xi8>, tensor<2xi8>, tensor<2xi1>, "
           "tensor<2xi8>) {\n"
           "  %%qa = stablehlo.uniform_quantize %%a : (tensor<2xf32>) -> "
           "tensor<2x!quant.uniform<i8:f32, 0.1:-30>>\n"
           "  %%qb = stablehlo.uniform_quantize %%b : (tensor<2xf32>) -> "
           "tensor<2x!quant.uniform<i8:f32, 0.5:-20>>\n"
           "  %%s = stablehlo.add %%qa, %%qb : (tensor<2x!quant.uniform<i8:f32, "
           "0.1:-30>>, tensor<2x!quant.uniform<i8:f32, 0.5:-20>>) -> "
           "tensor<2x!quant.uniform<i8:f32, 0.5:-20>>\n"
           "  %%r = stablehlo.bitcast_convert %%s : (tensor<2x!quant.uniform<i8:"
           "f32, 0.5:-20>>) -> tensor<2xi8>\n"
           "  %%qc = stablehlo.uniform_quantize %%c : (tensor<2xf32>) -> "
           "tensor<2x!quant.uniform<i8:f32, 0.1>>\n"
           "  %%t = stablehlo.add %%qc, %%qc : tensor<2x!quant.uniform<i8:f32, "
           "0.1>>\n"
           "  %%u = stablehlo.bitcast_convert %%t : (tensor<2x!quant.uniform<i8:"
           "f32, 0.1>>) -> tensor<2xi8>\n"
           "  %%k = stablehlo.compare LT, %%qa, %%qb : (tensor<2x!quant.uniform<"
           "i8:f32, 0.1:-30>>, tensor<2x!quant.uniform<i8:f32, 0.5:-20>>) -> "
           "tensor<2xi1>\n"
           "  %%m = stablehlo.multiply %%qc, %%qc : tensor<2x!quant.uniform<i8:"
           "f32, 0.1>>\n"
           "  %%n = stablehlo.bitcast_convert %%m : (tensor<2x!quant.uniform<i8:"
           "f32, 0.1>>) -> tensor<2xi8>\n"
           "  func.return %%r, %%u, %%k, %%n : tensor<2xi8>, tensor<2xi8>, "
           "tensor<2xi1>, tensor<2xi8>\n}\n");
  TU_ASSERT_OUT(&o, 0, int8_t, -12, -8);
  TU_ASSERT_OUT(&o, 1, int8_t, 127, -128);
  TU_ASSERT_OUT(&o, 2, uint8_t, 1, 1);
  /* 10 * 10 = 100 -> 1000 clamps to 127; (-10)^2 likewise */
  TU_ASSERT_OUT(&o, 3, int8_t, 127, 127);
  tu_out_free(&o);
}

/* ---- verifier ---- */

static void test_verify_types(void **state) {
  xrt_client *c = C(state);
  const char *m;
  m = verify_fails(c,
      "func.func @main(%a: tensor<2xf32>) -> tensor<2xf32> {\n"
      "  %0 = stablehlo.reduce_precision %a, format = e0m3 : tensor<2xf32>\n"
      "  func.return %0 : tensor<2xf32>\n}\n");
  TU_ASSERT_CONTAINS(m, ":2:");
  TU_ASSERT_CONTAINS(m, "exponent_bits must be >= 1");
  m = verify_fails(c,
      "func.func @main(%a: tensor<2xf32>) -> tensor<2xf32> {\n"
      "  %0 = \"stablehlo.reduce_precision\"(%a) {exponent_bits = 5 : i32, "
      "mantissa_bits = -1 : i32} : (tensor<2xf32>) -> tensor<2xf32>\n"
      "  func.return %0 : tensor<2xf32>\n}\n");
  TU_ASSERT_CONTAINS(m, "mantissa_bits must be >= 0");
  m = verify_fails(c,
      "func.func @main(%a: tensor<2xi32>) -> tensor<2xi32> {\n"
      "  %0 = stablehlo.reduce_precision %a, format = e5m2 : tensor<2xi32>\n"
      "  func.return %0 : tensor<2xi32>\n}\n");
  TU_ASSERT_CONTAINS(m, "must be a float");
  m = verify_fails(c,
      "func.func @main(%a: tensor<2xf32>) -> tensor<2xf32> {\n"
      "  %0 = stablehlo.uniform_quantize %a : (tensor<2xf32>) -> tensor<2xf32>\n"
      "  func.return %0 : tensor<2xf32>\n}\n");
  TU_ASSERT_CONTAINS(m, "result must be a quantized tensor");
  m = verify_fails(c,
      "func.func @main(%a: tensor<2xf32>) -> tensor<3xi8> {\n"
      "  %0 = stablehlo.uniform_quantize %a : (tensor<2xf32>) -> "
      "tensor<3x!quant.uniform<i8:f32, 0.5:3>>\n"
      "  %1 = stablehlo.bitcast_convert %0 : (tensor<3x!quant.uniform<i8:f32, "
      "0.5:3>>) -> tensor<3xi8>\n"
      "  func.return %1 : tensor<3xi8>\n}\n");
  TU_ASSERT_CONTAINS(m, "shapes differ");
  m = verify_fails(c,
      "func.func @main(%a: tensor<2xf16>) -> tensor<2xi8> {\n"
      "  %0 = stablehlo.uniform_quantize %a : (tensor<2xf16>) -> "
      "tensor<2x!quant.uniform<i8:f32, 0.5:3>>\n"
      "  %1 = stablehlo.bitcast_convert %0 : (tensor<2x!quant.uniform<i8:f32, "
      "0.5:3>>) -> tensor<2xi8>\n"
      "  func.return %1 : tensor<2xi8>\n}\n");
  TU_ASSERT_CONTAINS(m, "expressed type f32 must be f16");
  m = verify_fails(c,
      "func.func @main(%a: tensor<2xf32>) -> tensor<2xi8> {\n"
      "  %0 = stablehlo.uniform_quantize %a : (tensor<2xf32>) -> "
      "tensor<2x!quant.uniform<i8<-10:10>:f32, 0.5:30>>\n"
      "  %1 = stablehlo.bitcast_convert %0 : (tensor<2x!quant.uniform<i8<-10:10>"
      ":f32, 0.5:30>>) -> tensor<2xi8>\n"
      "  func.return %1 : tensor<2xi8>\n}\n");
  TU_ASSERT_CONTAINS(m, "zero point 30 is outside");
  m = verify_fails(c,
      "func.func @main(%a: tensor<2x3xf32>) -> tensor<2x3xi8> {\n"
      "  %0 = stablehlo.uniform_quantize %a : (tensor<2x3xf32>) -> "
      "tensor<2x3x!quant.uniform<i8:f32:1, {0.5:3, 1.0:2}>>\n"
      "  %1 = stablehlo.bitcast_convert %0 : (tensor<2x3x!quant.uniform<i8:f32:1,"
      " {0.5:3, 1.0:2}>>) -> tensor<2x3xi8>\n"
      "  func.return %1 : tensor<2x3xi8>\n}\n");
  TU_ASSERT_CONTAINS(m, "2 scales for quantization dimension 1 of size 3");
  m = verify_fails(c,
      "func.func @main(%a: tensor<2xi8>) -> tensor<2xf16> {\n"
      "  %0 = stablehlo.bitcast_convert %a : (tensor<2xi8>) -> "
      "tensor<2x!quant.uniform<i8:f32, 0.5:3>>\n"
      "  %1 = stablehlo.uniform_dequantize %0 : (tensor<2x!quant.uniform<i8:f32, "
      "0.5:3>>) -> tensor<2xf16>\n"
      "  func.return %1 : tensor<2xf16>\n}\n");
  TU_ASSERT_CONTAINS(m, "must be the expressed type f32");
  m = verify_fails(c,
      "func.func @main(%a: tensor<2xf32>) -> tensor<2xf32> {\n"
      "  %0 = stablehlo.uniform_dequantize %a : (tensor<2xf32>) -> tensor<2xf32>\n"
      "  func.return %0 : tensor<2xf32>\n}\n");
  TU_ASSERT_CONTAINS(m, "operand must be a quantized tensor");
  m = verify_fails(c,
      "func.func @main(%a: tensor<2xf32>) -> tensor<2xf32> {\n"
      "  %0 = \"chlo.mulhi\"(%a, %a) : (tensor<2xf32>, tensor<2xf32>) -> "
      "tensor<2xf32>\n"
      "  func.return %0 : tensor<2xf32>\n}\n");
  TU_ASSERT_CONTAINS(m, "is not an integer type");
  m = verify_fails(c,
      "func.func @main(%a: tensor<2xi32>, %b: tensor<2xi16>) -> tensor<2xi32> {\n"
      "  %0 = \"chlo.mulhi\"(%a, %b) : (tensor<2xi32>, tensor<2xi16>) -> "
      "tensor<2xi32>\n"
      "  func.return %0 : tensor<2xi32>\n}\n");
  TU_ASSERT_CONTAINS(m, "operand types differ");
}

/* ---- accuracy of the transcendentals ---- */

typedef double (*fn1)(double);
static double ref_rsqrt(double x) { return 1 / sqrt(x); }
static double ref_logistic(double x) { return 1 / (1 + exp(-x)); }

typedef struct acc_case {
  const char *op;
  fn1 f;
  double lo, hi; /* input range, sampled uniformly */
} acc_case;

static const acc_case acc_cases[] = {
    {"exponential", exp, -80, 80},     {"log", log, 1e-30, 1e30},
    {"sine", sin, -100, 100},          {"cosine", cos, -100, 100},
    {"tanh", tanh, -12, 12},           {"logistic", ref_logistic, -40, 40},
    {"sqrt", sqrt, 0, 1e30},           {"rsqrt", ref_rsqrt, 1e-30, 1e30},
    {"cbrt", cbrt, -1e6, 1e6},         {"exponential_minus_one", expm1, -20, 20},
    {"log_plus_one", log1p, -0.99, 1e6}, {"tan", tan, -3, 3},
};

/* Distance in units in the last place between two values of the same
 * width, through their monotonic integer keys. */
static int64_t ulp_key(uint64_t bits, int w) {
  uint64_t sign = (uint64_t)1 << (w - 1);
  return (bits & sign) ? -(int64_t)(bits & (sign - 1)) : (int64_t)bits;
}
static int64_t ulp_dist(uint64_t a, uint64_t b, int w) {
  int64_t d = ulp_key(a, w) - ulp_key(b, w);
  return d < 0 ? -d : d;
}

#define ACC_N 2048

/* Samples: uniform over [lo, hi], plus a log-spaced half for wide ranges
 * and small magnitudes. */
static double acc_point(const acc_case *c, int i) {
  if (i % 2 == 0 || c->lo * c->hi < 0)
    return c->lo + (c->hi - c->lo) * (double)i / (ACC_N - 1);
  double l0 = log(c->lo > 0 ? c->lo : 1e-6), l1 = log(c->hi);
  return exp(l0 + (l1 - l0) * (double)i / (ACC_N - 1));
}

static void acc_run(xrt_client *cl, const char *op, const char *t, int nin,
                    const tu_in *in, tu_out *o) {
  if (nin == 1)
    run_prog(cl, 1, in, o,
             "func.func @main(%%a: tensor<%dx%s>) -> tensor<%dx%s> {\n"
             "  %%0 = stablehlo.%s %%a : tensor<%dx%s>\n"
             "  func.return %%0 : tensor<%dx%s>\n}\n",
             ACC_N, t, ACC_N, t, op, ACC_N, t, ACC_N, t);
  else
    run_prog(cl, 2, in, o,
             "func.func @main(%%a: tensor<%dx%s>, %%b: tensor<%dx%s>) -> "
             "tensor<%dx%s> {\n"
             "  %%0 = stablehlo.%s %%a, %%b : tensor<%dx%s>\n"
             "  func.return %%0 : tensor<%dx%s>\n}\n",
             ACC_N, t, ACC_N, t, ACC_N, t, op, ACC_N, t, ACC_N, t);
}

static void test_transcendental_accuracy(void **state) {
  static float xf[ACC_N], yf[ACC_N];
  static uint16_t xh[ACC_N], yh[ACC_N], xb[ACC_N];
  for (size_t k = 0; k <= TU_COUNT(acc_cases); k++) {
    const acc_case *c = k < TU_COUNT(acc_cases) ? &acc_cases[k] : NULL;
    int nin = c ? 1 : 2; /* the last round is atan2 */
    for (int i = 0; i < ACC_N; i++) {
      double x = c ? acc_point(c, i) : 10 * sin(0.37 * i);
      double y = 10 * cos(0.91 * i + 0.3);
      xf[i] = (float)x, yf[i] = (float)y;
      /* f16 covers +-65504: scale wide ranges down */
      double xs = c && fabs(c->hi) > 6e4 ? x * 6e4 / c->hi : x;
      if (c && c->f == exp) xs = x / 8; /* keep exp within f16 */
      xh[i] = xrt_f64_to_f16(xs), yh[i] = xrt_f64_to_f16(y);
      xb[i] = xrt_f32_to_bf16(xf[i]);
    }
    const char *op = c ? c->op : "atan2";
    tu_in inf[2] = {IN(XRT_F32, xf, ACC_N), IN(XRT_F32, yf, ACC_N)};
    tu_in inh[2] = {IN(XRT_F16, xh, ACC_N), IN(XRT_F16, yh, ACC_N)};
    tu_in inb[1] = {IN(XRT_BF16, xb, ACC_N)};
    tu_out o;
    acc_run(C(state), op, "f32", nin, inf, &o);
    const float *gf = (const float *)o.data[0];
    for (int i = 0; i < ACC_N; i++) {
      double r = c ? c->f((double)xf[i]) : atan2((double)xf[i], (double)yf[i]);
      float want = (float)r;
      if (isnan(want)) {
        assert_true(isnan(gf[i]));
        continue;
      }
      int64_t d = ulp_dist(tu_f32_bits(gf[i]), tu_f32_bits(want), 32);
      if (d > 2)
        fail_msg("%s f32(%.9g): got %.9g want %.9g (%lld ulp)", op, xf[i],
                 gf[i], want, (long long)d);
    }
    tu_out_free(&o);
    acc_run(C(state), op, "f16", nin, inh, &o);
    const uint16_t *gh = (const uint16_t *)o.data[0];
    for (int i = 0; i < ACC_N; i++) {
      double xv = xrt_f16_to_f32(xh[i]), yv = xrt_f16_to_f32(yh[i]);
      uint16_t want = xrt_f64_to_f16(c ? c->f(xv) : atan2(xv, yv));
      if ((want & 0x7c00) == 0x7c00 && (want & 0x3ff)) {
        assert_true((gh[i] & 0x7c00) == 0x7c00 && (gh[i] & 0x3ff));
        continue;
      }
      int64_t d = ulp_dist(gh[i], want, 16);
      if (d > 1)
        fail_msg("%s f16(%.6g): got 0x%04x want 0x%04x", op, xv, gh[i], want);
    }
    tu_out_free(&o);
    if (!c) continue;
    acc_run(C(state), op, "bf16", 1, inb, &o);
    const uint16_t *gb = (const uint16_t *)o.data[0];
    for (int i = 0; i < ACC_N; i++) {
      double xv = xrt_bf16_to_f32(xb[i]);
      uint16_t want = xrt_f64_to_bf16(c->f(xv));
      if ((want & 0x7f80) == 0x7f80 && (want & 0x7f)) continue; /* NaN */
      int64_t d = ulp_dist(gb[i], want, 16);
      if (d > 1)
        fail_msg("%s bf16(%.6g): got 0x%04x want 0x%04x", op, xv, gb[i], want);
    }
    tu_out_free(&o);
  }
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_minifloat_roundtrip),
      cmocka_unit_test(test_minifloat_convert_from_f32),
      cmocka_unit_test(test_minifloat_convert_to_other),
      cmocka_unit_test(test_minifloat_arith),
      cmocka_unit_test(test_reduce_precision),
      cmocka_unit_test(test_mulhi),
      cmocka_unit_test(test_quantize_per_tensor),
      cmocka_unit_test(test_quantize_per_axis),
      cmocka_unit_test(test_quantized_add),
      cmocka_unit_test(test_verify_types),
      cmocka_unit_test(test_transcendental_accuracy),
  };
  return cmocka_run_group_tests(tests, tu_setup_client, tu_teardown_client);
}
