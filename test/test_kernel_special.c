/*
 * test_kernel_special.c - the simulator's special-function kernels
 * (src/sim/special.c) at the branches the accuracy sweeps of
 * test_chlo_special.c do not take: the CHLO inverse / hyperbolic
 * functions on every float type with a full 16-element block and a tail
 * and special inputs (libm in double as the reference), zeta at its
 * poles, non-real cases and infinite arguments, polygamma's argument
 * checks, digamma's reflection for negative arguments (checked by the
 * recurrence psi(x + 1) = psi(x) + 1/x), bessel_i1e on the series and
 * asymptotic sides, next_after on NaN, equal and zero arguments.
 * Known values: zeta(2) = pi^2/6, zeta(4) = pi^4/90, zeta(3) =
 * 1.2020569031595942 (Apery), I1(1) = 0.5651591039924851.
 */
#include "chlo_util.h"

static const double pi = 3.14159265358979323846;

/* Unary CHLO ops with a libm counterpart on f32, f64, f16, bf16. */
static void test_chlo_unary_types(void **state) {
  static const struct { const char *op; double (*f)(double); } ops[] = {
      {"chlo.acos", acos},   {"chlo.acosh", acosh}, {"chlo.asin", asin},
      {"chlo.asinh", asinh}, {"chlo.atan", atan},   {"chlo.atanh", atanh},
      {"chlo.cosh", cosh},   {"chlo.sinh", sinh},   {"chlo.erf", erf},
      {"chlo.erfc", erfc},   {"chlo.lgamma", lgamma},
  };
  enum { N = 21 };
  const double x[N] = {0, -0.0, 0.5, -0.5, 0.25, 0.99, -0.75, 1, -1, 1.5,
                       2, 3, -3, 10, NAN, INFINITY, -INFINITY, 0.125, 5,
                       -0.3, 7};
  const xrt_dtype ts[] = {XRT_F32, XRT_F64, XRT_F16, XRT_BF16};
  for (size_t t = 0; t < TU_COUNT(ts); t++)
    for (size_t k = 0; k < TU_COUNT(ops); k++) {
      char a[N * 8], out[N * 8];
      double xin[N];
      for (int i = 0; i < N; i++) {
        switch (ts[t]) {
        case XRT_F32: { float f = (float)x[i]; memcpy(a + 4 * i, &f, 4); xin[i] = f; break; }
        case XRT_F64: memcpy(a + 8 * i, &x[i], 8); xin[i] = x[i]; break;
        case XRT_F16: { uint16_t h = xrt_f64_to_f16(x[i]); memcpy(a + 2 * i, &h, 2); xin[i] = xrt_f16_to_f32(h); break; }
        default: { uint16_t h = xrt_f64_to_bf16(x[i]); memcpy(a + 2 * i, &h, 2); xin[i] = xrt_bf16_to_f32(h); break; }
        }
      }
      sp_run(C(state), ops[k].op, ts[t], a, NULL, N, out);
      for (int i = 0; i < N; i++) {
        double w = ops[k].f(xin[i]), g, ulp;
        uint16_t h;
        switch (ts[t]) {
        case XRT_F32: { float f; memcpy(&f, out + 4 * i, 4); g = f; w = (float)w; ulp = 0x1p-23; break; }
        case XRT_F64: memcpy(&g, out + 8 * i, 8); ulp = 0x1p-52; break;
        case XRT_F16: memcpy(&h, out + 2 * i, 2); g = xrt_f16_to_f32(h); w = xrt_f16_to_f32(xrt_f64_to_f16(w)); ulp = 0x1p-10; break;
        default: memcpy(&h, out + 2 * i, 2); g = xrt_bf16_to_f32(h); w = xrt_bf16_to_f32(xrt_f64_to_bf16(w)); ulp = 0x1p-7; break;
        }
        int ok = w != w ? g != g
                 : isinf(w) ? g == w
                 : fabs(g - w) <= 2 * ulp * fabs(w) && (w != 0 || signbit(g) == signbit(w));
        if (!ok)
          fail_msg("%s %s [%d] x=%g: got %.17g want %.17g", ops[k].op,
                   xrt_dtype_name(ts[t]), i, xin[i], g, w);
      }
    }
}

static void test_zeta_edges(void **state) {
  const double z3 = 1.2020569031595942;
  const double x[] = {NAN, 2, 1, 0.5, 2, 3, 2.5, 3, INFINITY, INFINITY,
                      INFINITY, 2, 2, 4, 3, 2};
  const double q[] = {1, NAN, 3, 3, -2, -2, -1.5, -0.5, 0.5, 1, 2,
                      INFINITY, 1, 1, 0.5, 2};
  const double want[] = {
      NAN, NAN,              /* NaN in */
      INFINITY,              /* x = 1: the pole */
      NAN,                   /* x < 1 */
      INFINITY, NAN,         /* q a non-positive integer: even x inf, else NaN */
      NAN,                   /* q < 0 non-integer, x non-integer: not real */
      -8 + 7 * z3,           /* zeta(3, -0.5) = (-0.5)^-3 + 7 zeta(3) */
      INFINITY, 1, 0,        /* x = inf: q < 1, q = 1, q > 1 */
      0,                     /* q = inf */
      pi * pi / 6, pi * pi * pi * pi / 90, 7 * z3,
      pi * pi / 6 - 1,
  };
  sp_f64(state, "chlo.zeta", x, q, want, TU_COUNT(want), 1e-12);
}

static void test_polygamma_edges(void **state) {
  const double n[] = {NAN, 1, -1, 1.5, INFINITY, 0, 1, 2, 3};
  const double x[] = {1, NAN, 1, 1, 1, 1, 1, 1, 2};
  const double z3 = 1.2020569031595942;
  const double want[] = {NAN, NAN, NAN, NAN, NAN,
                         -0.5772156649015329,        /* digamma(1) */
                         pi * pi / 6,                /* trigamma(1) */
                         -2 * z3,                    /* psi''(1) */
                         6 * (pi * pi * pi * pi / 90 - 1)}; /* psi'''(2) */
  sp_f64(state, "chlo.polygamma", n, x, want, TU_COUNT(want), 1e-10);
}

/* digamma: NaN, +inf, and negative arguments through the reflection,
 * checked by psi(x + 1) - psi(x) = 1/x. */
static void test_digamma_edges(void **state) {
  const double x[] = {NAN, INFINITY, -0.7, 0.3, -2.2, -1.2, -0.5, 0.5};
  double got[8];
  sp_run(C(state), "chlo.digamma", XRT_F64, x, NULL, 8, got);
  assert_true(isnan(got[0]));
  assert_true(got[1] == INFINITY);
  for (int k = 2; k < 8; k += 2) {
    double w = 1 / x[k]; /* psi(x + 1) - psi(x) */
    if (fabs((got[k + 1] - got[k]) - w) > 1e-12 * fabs(w))
      fail_msg("psi(%g + 1) - psi(%g) = %.17g, want %.17g", x[k], x[k],
               got[k + 1] - got[k], w);
  }
}

/* bessel_i1e: odd; I1(1) e^-1; large x on the asymptotic series. */
static void test_i1e(void **state) {
  const double x[] = {0, 1, -1, 50, -50, 700, 1e-3};
  double want[7];
  want[0] = 0;
  want[1] = 0.5651591039924851 * exp(-1.0);
  want[2] = -want[1];
  for (int k = 3; k < 6; k += 2) { /* 1/sqrt(2 pi x) sum (-1)^j a_j / x^j */
    double z = fabs(x[k]), term = 1, s = 1;
    for (int j = 1; j < 12; j++) {
      term *= -(4.0 - (2.0 * j - 1) * (2.0 * j - 1)) / (j * 8.0 * z);
      s += term;
    }
    want[k] = s / sqrt(2 * pi * z) * (x[k] < 0 ? -1 : 1);
  }
  want[4] = -want[3];
  want[6] = 0.5e-3 * (1 + 1e-6 / 8) * exp(-1e-3); /* x/2 (1 + x^2/8) */
  sp_f64(state, "chlo.bessel_i1e", x, NULL, want, 7, 1e-12);
}

/* next_after: NaN in either, equal arguments (the second), from zero the
 * smallest subnormal of the target's sign. */
static void test_next_after_edges(void **state) {
  const double a[] = {NAN, 1, 2, 0, 0, -0.0, 1, -1};
  const double b[] = {1, NAN, 2, 1, -1, 0.0, 2, -2};
  double got[8];
  sp_run(C(state), "chlo.next_after", XRT_F64, a, b, 8, got);
  assert_true(isnan(got[0]) && isnan(got[1]));
  assert_true(got[2] == 2);
  assert_true(got[3] == 0x1p-1074 && got[4] == -0x1p-1074);
  assert_true(got[5] == 0 && !signbit(got[5])); /* equal: b itself */
  assert_true(got[6] == 1 + 0x1p-52 && got[7] == -1 - 0x1p-52);
  /* f16 and bf16 on their bit patterns: NaNs (any payload), equal, the
   * least subnormals, toward zero */
  static const struct {
    xrt_dtype dt;
    uint16_t a[6], b[6], exp, man, want[4]; /* want: ho[2..5] */
  } bits[] = {
      {XRT_F16,
       {0x7e00, 0x3c00, 0x3c00, 0x0000, 0x0000, 0x3c00},
       {0x3c00, 0x7e00, 0x3c00, 0x3c00, 0xbc00, 0x0000},
       0x7c00, 0x3ff, {0x3c00, 0x0001, 0x8001, 0x3bff}},
      {XRT_BF16,
       {0x7fc0, 0x3f80, 0x3f80, 0x0000, 0x0000, 0xbf80},
       {0x3f80, 0x7fc0, 0x3f80, 0x3f80, 0xbf80, 0x0000},
       0x7f80, 0x7f, {0x3f80, 0x0001, 0x8001, 0xbf7f}},
  };
  for (size_t k = 0; k < TU_COUNT(bits); k++) {
    uint16_t ho[6];
    sp_run(C(state), "chlo.next_after", bits[k].dt, bits[k].a, bits[k].b, 6,
           ho);
    for (int i = 0; i < 2; i++)
      assert_true((ho[i] & bits[k].exp) == bits[k].exp &&
                  (ho[i] & bits[k].man));
    for (int i = 0; i < 4; i++) assert_int_equal(ho[2 + i], bits[k].want[i]);
  }
}

TU_MAIN(tu_setup_client, tu_teardown_client,
        cmocka_unit_test(test_chlo_unary_types),
        cmocka_unit_test(test_zeta_edges),
        cmocka_unit_test(test_polygamma_edges),
        cmocka_unit_test(test_digamma_edges), cmocka_unit_test(test_i1e),
        cmocka_unit_test(test_next_after_edges))
