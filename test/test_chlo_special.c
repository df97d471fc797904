/* test_chlo_special.c - CHLO's special functions on the simulator: erf,
 * erfc and lgamma within 2 ulp (f32) and 1 ulp (f16, bf16) of libm's double
 * result for every f16 and bf16 value and a sweep of f32 values; erf_inv,
 * digamma, polygamma, zeta and bessel_i1e within 1e-6 relative of values
 * computed with SciPy 1.10 (scipy.special.erfinv, psi, polygamma, zeta,
 * i1e, gammaln; written here as literals); XLA's values at the poles and
 * edges; next_after on the bit patterns of every float type. */
#include "chlo_util.h"

static void test_erf(void **state) { sp_libm_op(state, "chlo.erf", erf, -4, 4); }
static void test_erfc(void **state) {
  sp_libm_op(state, "chlo.erfc", erfc, -2, 10);
}
static void test_lgamma(void **state) {
  sp_libm_op(state, "chlo.lgamma", lgamma, -6, 12);
  const double x[9] = {0.5, 1.5, 3.0, 10.25, 100.0, 1e-05, -0.5, -2.5, -7.75};
  const double want[9] = {0.5723649429247, -0.12078223763524526,
                          0.6931471805599453, 13.368023671476045,
                          359.1342053695754, 11.512919692895826,
                          1.2655121234846454, -0.05624371649767401,
                          -8.581847763551867};
  sp_f64(state, "chlo.lgamma", x, NULL, want, 9, 1e-14);
  /* the poles: +inf (XLA and C alike) */
  const double p[4] = {0.0, -1.0, -4.0, -INFINITY};
  const double pw[4] = {INFINITY, INFINITY, INFINITY, INFINITY};
  sp_f64(state, "chlo.lgamma", p, NULL, pw, 4, 0);
}

/* ---- functions without a C counterpart, against SciPy ---- */

static void test_erf_inv(void **state) {
  const double x[13] = {-0.999999, -0.9, -0.5, -0.1, -1e-05, 1e-10, 0.25,
                        0.5, 0.75, 0.9, 0.99, 0.999999, 0.999999999999};
  const double want[13] = {
      -3.458910737275499, -1.1630871536766743, -0.4769362762044699,
      -0.08885599049425769, -8.862269254759594e-06, 8.862269254527581e-11,
      0.2253120550121781, 0.4769362762044699, 0.8134198475976185,
      1.1630871536766743, 1.8213863677184494, 3.458910737275499,
      5.042031898572696};
  sp_f64(state, "chlo.erf_inv", x, NULL, want, 13, 1e-6);
  const float xf[8] = {-0.9990234375f, -0.75f, -0.30000001192092896f,
                       9.999999974752427e-07f, 0.125f, 0.6000000238418579f,
                       0.949999988079071f, 0.9999899864196777f};
  const double wf[8] = {-2.331467773621948, -0.8134198475976185,
                        -0.2724627261055238, 8.862269232154821e-07,
                        0.11123545184094996, 0.5951161115589819,
                        1.385903752236077, 3.123205771165071};
  sp_f32(state, "chlo.erf_inv", xf, NULL, wf, 8, 1e-6);
  /* edges: +-1 -> +-inf, beyond -> NaN, signed zeros kept */
  const double e[6] = {1.0, -1.0, 1.5, -2.0, 0.0, -0.0};
  const double ew[6] = {INFINITY, -INFINITY, NAN, NAN, 0.0, -0.0};
  double got[6];
  sp_run(C(state), "chlo.erf_inv", XRT_F64, e, NULL, 6, got);
  for (int i = 0; i < 6; i++) assert_true(sp_relerr(got[i], ew[i]) == 0);
  assert_true(signbit(got[5]) && !signbit(got[4]));
}

static void test_erf_inv_inverts_erf(void **state) {
  /* erf(erf_inv(y)) = y over (-1, 1), in f64: an independent check */
  enum { N = 2001 };
  static double y[N], x[N];
  for (int i = 0; i < N; i++) y[i] = -0.9995 + 1.999 * i / (N - 1);
  sp_run(C(state), "chlo.erf_inv", XRT_F64, y, NULL, N, x);
  double worst = 0;
  for (int i = 0; i < N; i++) {
    double e = fabs(erf(x[i]) - y[i]);
    if (e > worst) worst = e;
  }
  print_message("erf(erf_inv(y)) - y       max %.3g\n", worst);
  assert_true(worst < 4e-16);
}

static void test_digamma(void **state) {
  const double x[14] = {0.1, 0.5, 1.0, 2.5, 7.3, 10.0, 25.5,
                        100.0, 100000.0, -0.5, -1.5, -2.25, -10.3, 1e-08};
  const double want[14] = {
      -10.423754940411076, -1.9635100260214235, -0.5772156649015329,
      0.7031566406452432, 1.917820335637986, 2.251752589066721,
      3.2189424728839198, 4.600161852738088, 11.512920464961896,
      0.03648997397857651, 0.7031566406452434, 4.158583564657972,
      4.6624034935820875, -100000000.57721564};
  sp_f64(state, "chlo.digamma", x, NULL, want, 14, 1e-6);
  /* XLA: NaN at the poles (zero and the negative integers), +inf at +inf */
  const double p[5] = {0.0, -1.0, -3.0, INFINITY, -INFINITY};
  const double pw[5] = {NAN, NAN, NAN, INFINITY, NAN};
  sp_f64(state, "chlo.digamma", p, NULL, pw, 5, 0);
}

static void test_polygamma(void **state) {
  const double n[10] = {1.0, 1.0, 2.0, 3.0, 4.0, 6.0, 1.0, 2.0, 1.0, 0.0};
  const double x[10] = {0.5, 1.0, 2.5, 10.0, 0.25, 3.5, -0.5, -1.5, 100.0, 2.5};
  const double want[10] = {
      4.93480220054468, 1.6449340668482266, -0.23620405164172736,
      0.0023199013042898686, -24584.375388637945, -0.13835810755003522,
      8.934802200544679, -0.23620405164172825, 0.010050166663333573,
      0.7031566406452432};
  sp_f64(state, "chlo.polygamma", n, x, want, 10, 1e-6);
  /* n not a natural number: NaN (XLA) */
  const double bn[3] = {-1.0, 1.5, NAN}, bx[3] = {2.0, 2.0, 2.0};
  const double bw[3] = {NAN, NAN, NAN};
  sp_f64(state, "chlo.polygamma", bn, bx, bw, 3, 0);
}

static void test_zeta(void **state) {
  const double x[11] = {2.0, 3.0, 1.5, 4.5, 10.0, 1.01, 50.0, 2.0, 7.25, 2.5,
                        2.0};
  const double q[11] = {1.0, 2.0, 0.5, 3.25, 1.1, 1.0, 1.0, 0.001, 0.05, 20.0,
                        -0.5};
  /* zeta(2, -1/2) = 1/(1/2)^2 + zeta(2, 1/2) = 4 + pi^2/2, by hand */
  const double want[11] = {
      1.6449340668482266, 0.2020569031595943, 4.776537947554834,
      0.007647893802529088, 0.386155862080285, 100.5779433384968,
      1.0000000000000009, 1000001.6425331959, 2706870435.1157603,
      0.007738887702572604, 4 + 4.934802200544679};
  sp_f64(state, "chlo.zeta", x, q, want, 11, 1e-6);
  float xf[10], qf[10];
  for (int i = 0; i < 10; i++) xf[i] = (float)x[i], qf[i] = (float)q[i];
  /* at the f32 inputs, only q = 1.1, 0.001, 0.05 are not exact; skip them */
  const int exact[7] = {0, 1, 2, 3, 5, 6, 9};
  float xe[7], qe[7];
  double we[7];
  for (int i = 0; i < 7; i++)
    xe[i] = xf[exact[i]], qe[i] = qf[exact[i]], we[i] = want[exact[i]];
  we[4] = 100.57803870532598; /* SciPy: zeta at float32(1.01), 1 */
  sp_f32(state, "chlo.zeta", xe, qe, we, 7, 1e-6);
  /* XLA's edges: x < 1 NaN, x = 1 +inf, poles, q <= 0 with x not an
   * integer */
  const double ex[6] = {0.5, 1.0, 2.0, 3.0, 2.5, 2.0};
  const double eq[6] = {1.0, 3.0, 0.0, -2.0, -0.5, INFINITY};
  const double ew[6] = {NAN, INFINITY, INFINITY, NAN, NAN, 0.0};
  sp_f64(state, "chlo.zeta", ex, eq, ew, 6, 0);
}

static void test_bessel_i1e(void **state) {
  const double x[15] = {0.0, 1e-08, 0.5, -0.5, 1.0, 2.5, 8.0, 10.0,
                        19.9, 20.1, 30.0, 100.0, 1000.0, -50.0, 100000.0};
  const double want[15] = {
      0.0, 4.999999950000002e-09, 0.15642080318487173, -0.15642080318487173,
      0.2079104153497085, 0.20658464953126654, 0.13414249329269812,
      0.1212626813844555, 0.08771710213170608, 0.0872968518432016,
      0.07191633059864755, 0.03974415302513025, 0.01261093025692863,
      -0.055993123892895395, 0.001261561530121817};
  sp_f64(state, "chlo.bessel_i1e", x, NULL, want, 15, 1e-6);
  float xf[15];
  for (int i = 0; i < 15; i++) xf[i] = (float)x[i];
  /* every input but 1e-8 and 19.9/20.1 is an f32 value; there the
   * function is smooth enough that 1e-6 covers the input's rounding */
  sp_f32(state, "chlo.bessel_i1e", xf, NULL, want, 15, 1e-6);
  const double e[3] = {INFINITY, -INFINITY, NAN};
  const double ew[3] = {0.0, -0.0, NAN};
  sp_f64(state, "chlo.bessel_i1e", e, NULL, ew, 3, 0);
}

/* The f16 and bf16 forms compute in double and round once: within 1 ulp of
 * SciPy's values at the same (exactly representable) inputs. */
static void test_special_half(void **state) {
  const double x[4] = {0.5, 2.5, 10.0, -0.5};
  const double dg[4] = {-1.9635100260214235, 0.7031566406452432,
                        2.251752589066721, 0.03648997397857651};
  const double i1[4] = {0.15642080318487173, 0.20658464953126654,
                        0.1212626813844555, -0.15642080318487173};
  for (int t = 0; t < 2; t++) {
    xrt_dtype dt = t ? XRT_BF16 : XRT_F16;
    uint16_t xh[4], r[4];
    for (int i = 0; i < 4; i++)
      xh[i] = t ? xrt_f64_to_bf16(x[i]) : xrt_f64_to_f16(x[i]);
    for (int k = 0; k < 2; k++) {
      sp_run(C(state), k ? "chlo.bessel_i1e" : "chlo.digamma", dt, xh, NULL,
             4, r);
      for (int i = 0; i < 4; i++) {
        double g = t ? xrt_bf16_to_f32(r[i]) : xrt_f16_to_f32(r[i]);
        double w = k ? i1[i] : dg[i];
        double u = sp_ulps(g, w, t ? 8 : 11, t ? -126 : -14, 1e300);
        if (!(u <= 1.0)) fail_msg("%s: %g vs %g (%g ulp)", xrt_dtype_name(dt), g, w, u);
      }
    }
  }
}

/* ---- next_after ---- */

static void test_next_after(void **state) {
  const float a[8] = {1.0f, 1.0f, 0.0f, -0.0f, 2.0f, NAN, INFINITY, -1.0f};
  const float b[8] = {2.0f, 0.0f, 1.0f, -1.0f, 2.0f, 1.0f, 0.0f, NAN};
  float r[8];
  sp_run(C(state), "chlo.next_after", XRT_F32, a, b, 8, r);
  assert_int_equal(tu_f32_bits(r[0]), 0x3f800001u);
  assert_int_equal(tu_f32_bits(r[1]), 0x3f7fffffu);
  assert_int_equal(tu_f32_bits(r[2]), 0x00000001u); /* a subnormal */
  assert_int_equal(tu_f32_bits(r[3]), 0x80000001u);
  assert_true(r[4] == 2.0f);
  assert_true(isnan(r[5]) && isnan(r[7]));
  assert_int_equal(tu_f32_bits(r[6]), 0x7f7fffffu);

  const double da[3] = {1.0, 0.0, -1.0}, db[3] = {2.0, -1.0, -2.0};
  double dr[3];
  sp_run(C(state), "chlo.next_after", XRT_F64, da, db, 3, dr);
  assert_true(dr[0] == 1.0 + 0x1p-52);
  assert_true(dr[1] == -0x1p-1074);
  assert_true(dr[2] == -1.0 - 0x1p-52);

  /* f16: 1.0 = 0x3c00, -0 = 0x8000, max 0x7bff, inf 0x7c00 */
  const uint16_t ha[6] = {0x3c00, 0x3c00, 0x0000, 0x8000, 0x7c00, 0x7e00};
  const uint16_t hb[6] = {0x4000, 0x0000, 0xbc00, 0x3c00, 0x0000, 0x3c00};
  uint16_t hr[6];
  sp_run(C(state), "chlo.next_after", XRT_F16, ha, hb, 6, hr);
  const uint16_t hw[6] = {0x3c01, 0x3bff, 0x8001, 0x0001, 0x7bff, 0x7e00};
  assert_memory_equal(hr, hw, sizeof hw);
  /* bf16: 1.0 = 0x3f80 */
  const uint16_t ba[3] = {0x3f80, 0x3f80, 0xbf80};
  const uint16_t bb[3] = {0x4000, 0x0000, 0xbf80};
  uint16_t br[3];
  sp_run(C(state), "chlo.next_after", XRT_BF16, ba, bb, 3, br);
  const uint16_t bw[3] = {0x3f81, 0x3f7f, 0xbf80};
  assert_memory_equal(br, bw, sizeof bw);
}

/* ---- bad input ---- */

static void test_special_bad_types(void **state) {
  (void)state;
  tu_parse_fails_at(
      "func.func @main(%a: tensor<4xi32>) -> tensor<4xi32> {\n"
      "  %r = chlo.erf %a : tensor<4xi32> -> tensor<4xi32>\n"
      "  func.return %r : tensor<4xi32>\n}\n",
      "<input>:2:8:", "element type i32 is not allowed");
  tu_parse_fails_at(
      "func.func @main(%a: tensor<4xcomplex<f32>>) -> tensor<4xcomplex<f32>> {\n"
      "  %r = chlo.lgamma %a : tensor<4xcomplex<f32>> -> tensor<4xcomplex<f32>>\n"
      "  func.return %r : tensor<4xcomplex<f32>>\n}\n",
      "<input>:2:8:", "not allowed");
  tu_parse_fails_at(
      "func.func @main(%a: tensor<4xf32>, %b: tensor<4xf64>) -> tensor<4xf32> {\n"
      "  %r = chlo.zeta %a, %b : tensor<4xf32>, tensor<4xf64> -> tensor<4xf32>\n"
      "  func.return %r : tensor<4xf32>\n}\n",
      "<input>:2:8:", "operand types differ");
  tu_parse_fails_at(
      "func.func @main(%a: tensor<4xf32>) -> tensor<3xf32> {\n"
      "  %r = chlo.digamma %a : tensor<4xf32> -> tensor<3xf32>\n"
      "  func.return %r : tensor<3xf32>\n}\n",
      "<input>:2:8:", "result type differs");
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_erf),
      cmocka_unit_test(test_erfc),
      cmocka_unit_test(test_lgamma),
      cmocka_unit_test(test_erf_inv),
      cmocka_unit_test(test_erf_inv_inverts_erf),
      cmocka_unit_test(test_digamma),
      cmocka_unit_test(test_polygamma),
      cmocka_unit_test(test_zeta),
      cmocka_unit_test(test_bessel_i1e),
      cmocka_unit_test(test_special_half),
      cmocka_unit_test(test_next_after),
      cmocka_unit_test(test_special_bad_types),
  };
  return cmocka_run_group_tests(tests, tu_setup_client, tu_teardown_client);
}
