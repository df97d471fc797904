/* chlo_util.h - helpers of the CHLO tests (test_chlo_*.c): run one CHLO
 * elementwise op on host arrays, relative-error and ulp checks against
 * references computed in the test. */
#ifndef XRT_TEST_CHLO_UTIL_H
#define XRT_TEST_CHLO_UTIL_H

#include "test_util.h"

#define C(state) ((xrt_client *)*(state))

/* "func.func @main(%a: tensor<NxT>[, %b: ...]) -> tensor<NxR>" running
 * `op` (chlo.erf, ...) in its pretty form. */
static inline void sp_prog(char *buf, size_t cap, const char *op, int nargs,
                    const char *t, const char *r, size_t n) {
  if (nargs == 1)
    snprintf(buf, cap,
             "func.func @main(%%a: tensor<%zux%s>) -> tensor<%zux%s> {\n"
             "  %%r = %s %%a : tensor<%zux%s> -> tensor<%zux%s>\n"
             "  func.return %%r : tensor<%zux%s>\n}\n",
             n, t, n, r, op, n, t, n, r, n, r);
  else
    snprintf(buf, cap,
             "func.func @main(%%a: tensor<%zux%s>, %%b: tensor<%zux%s>) -> "
             "tensor<%zux%s> {\n"
             "  %%r = %s %%a, %%b : tensor<%zux%s>, tensor<%zux%s> -> "
             "tensor<%zux%s>\n"
             "  func.return %%r : tensor<%zux%s>\n}\n",
             n, t, n, t, n, r, op, n, t, n, t, n, r, n, r);
}

/* Runs a unary (b == NULL) or binary op on n elements of dt; the result's
 * bytes go to out (n elements of dt). */
static inline void sp_run(xrt_client *c, const char *op, xrt_dtype dt, const void *a,
                   const void *b, size_t n, void *out) {
  char prog[1024];
  const char *t = xrt_dtype_name(dt);
  sp_prog(prog, sizeof prog, op, b ? 2 : 1, t, t, n);
  tu_in in[2] = {{TU_SHAPE(dt, (int64_t)n), a}, {TU_SHAPE(dt, (int64_t)n), b}};
  tu_out o;
  TU_RUN_OK(c, prog, b ? 2 : 1, in, &o);
  assert_int_equal(o.bytes[0], n * xrt_dtype_size(dt));
  memcpy(out, o.data[0], o.bytes[0]);
  tu_out_free(&o);
}

/* Both NaN, or equal infinities, or within rel of want. */
static inline double sp_relerr(double got, double want) {
  if (isnan(want)) return isnan(got) ? 0 : INFINITY;
  if (isinf(want)) return got == want ? 0 : INFINITY;
  if (want == 0) return got == 0 ? 0 : fabs(got);
  return fabs(got - want) / fabs(want);
}

static inline void sp_check_rel(const char *what, const double *got,
                         const double *want, size_t n, double tol) {
  double worst = 0;
  for (size_t i = 0; i < n; i++) {
    double e = sp_relerr(got[i], want[i]);
    if (!(e <= tol))
      fail_msg("%s: element %zu: got %.17g want %.17g (relative error %g)",
               what, i, got[i], want[i], e);
    if (e > worst) worst = e;
  }
  print_message("%-26s max relative error %.3g\n", what, worst);
}

/* f64 inputs x (and y) through op, checked against want. */
static inline void sp_f64(void **state, const char *op, const double *x,
                   const double *y, const double *want, size_t n, double tol) {
  double got[64];
  assert_true(n <= 64);
  sp_run(C(state), op, XRT_F64, x, y, n, got);
  char what[64];
  snprintf(what, sizeof what, "%s f64", op);
  sp_check_rel(what, got, want, n, tol);
}

/* The same with f32 inputs (the want values are at the f32 inputs). */
static inline void sp_f32(void **state, const char *op, const float *x,
                   const float *y, const double *want, size_t n, double tol) {
  float got[64];
  double g[64];
  assert_true(n <= 64);
  sp_run(C(state), op, XRT_F32, x, y, n, got);
  for (size_t i = 0; i < n; i++) g[i] = got[i];
  char what[64];
  snprintf(what, sizeof what, "%s f32", op);
  sp_check_rel(what, g, want, n, tol);
}

/* ---- ulp checks against libm ---- */

/* The ulp of v in a float type of p significand bits and minimum normal
 * exponent emin. */
static inline double sp_ulp(double v, int p, int emin) {
  int e;
  frexp(v, &e);
  e -= 1; /* v = m 2^e, 1 <= m < 2 */
  if (v == 0 || e < emin) e = emin;
  return ldexp(1.0, e - (p - 1));
}

/* Distance in ulps between got (a value of the type) and ref (a double);
 * 0 when both are NaN or the same infinity; refs beyond the type's range
 * must round to infinity. */
static inline double sp_ulps(double got, double ref, int p, int emin, double max) {
  if (isnan(ref)) return isnan(got) ? 0 : INFINITY;
  if (isinf(ref) || fabs(ref) > max) {
    if (isinf(got) && (got > 0) == (ref > 0)) return 0;
    if (!isinf(ref) && fabs(got) == max) return 1;
    return INFINITY;
  }
  if (isinf(got) || isnan(got)) return INFINITY;
  return fabs(got - ref) / sp_ulp(ref, p, emin);
}

typedef double (*sp_fn)(double);

/* Every finite and infinite f16 or bf16 value (and NaN) through op; each
 * result within 1 ulp of fn in double. */
static inline double sp_half_all(xrt_client *c, const char *op, sp_fn fn,
                          xrt_dtype dt) {
  enum { N = 65536 };
  uint16_t *x = malloc(N * sizeof *x), *r = malloc(N * sizeof *r);
  assert_non_null(x);
  assert_non_null(r);
  for (size_t i = 0; i < N; i++) x[i] = (uint16_t)i;
  sp_run(c, op, dt, x, NULL, N, r);
  bool h = dt == XRT_F16;
  double worst = 0, max = h ? 65504.0 : 3.3895313892515355e38;
  for (size_t i = 0; i < N; i++) {
    double xv = h ? xrt_f16_to_f32(x[i]) : xrt_bf16_to_f32(x[i]);
    double gv = h ? xrt_f16_to_f32(r[i]) : xrt_bf16_to_f32(r[i]);
    double u = sp_ulps(gv, fn(xv), h ? 11 : 8, h ? -14 : -126, max);
    if (!(u <= 1.0))
      fail_msg("%s %s(%.9g) = %.9g, libm %.17g: %g ulp", op,
               xrt_dtype_name(dt), xv, gv, fn(xv), u);
    if (u > worst) worst = u;
  }
  free(x);
  free(r);
  return worst;
}

/* f32 values spread over the whole range (every 4099th bit pattern, both
 * signs) plus lo..hi densely; each within 2 ulp of fn in double.  A light
 * run (valgrind, wine) takes a seventh of each. */
static inline double sp_f32_sweep(xrt_client *c, const char *op, sp_fn fn, double lo,
                           double hi) {
  size_t n = 0, cap = 1200000;
  float *x = malloc(cap * sizeof *x), *r = malloc(cap * sizeof *r);
  assert_non_null(x);
  assert_non_null(r);
  const int light = tu_light(), dense = light ? 14286 : 100000;
  const uint64_t stride = light ? 28693 : 4099;
  for (uint64_t b = 0; b < 0x100000000ull && n < cap; b += stride)
    x[n++] = tu_bits_f32((uint32_t)b);
  for (int i = 0; i < dense && n < cap; i++)
    x[n++] = (float)(lo + (hi - lo) * i / (dense - 1.0));
  sp_run(c, op, XRT_F32, x, NULL, n, r);
  double worst = 0;
  for (size_t i = 0; i < n; i++) {
    double ref = fn((double)x[i]);
    double u = sp_ulps(r[i], ref, 24, -126, 3.4028234663852886e38);
    if (!(u <= 2.0))
      fail_msg("%s f32(%.9g) = %.9g, libm %.17g: %g ulp", op, (double)x[i],
               (double)r[i], ref, u);
    if (u > worst) worst = u;
  }
  free(x);
  free(r);
  return worst;
}

static inline void sp_libm_op(void **state, const char *op, sp_fn fn, double lo,
                       double hi) {
  double u32 = sp_f32_sweep(C(state), op, fn, lo, hi);
  double u16 = sp_half_all(C(state), op, fn, XRT_F16);
  double ub16 = sp_half_all(C(state), op, fn, XRT_BF16);
  print_message("%-12s max ulp: f32 %.3f, f16 %.3f, bf16 %.3f\n", op, u32, u16,
                ub16);
  /* f64: libm's own result, bit for bit */
  const double x[6] = {-3.5, -0.25, 1e-300, 0.75, 2.0, 27.5};
  double got[6];
  sp_run(C(state), op, XRT_F64, x, NULL, 6, got);
  for (int i = 0; i < 6; i++) {
    double want = fn(x[i]);
    assert_memory_equal(&got[i], &want, sizeof want);
  }
}

#endif
