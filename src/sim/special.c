/*
 * src/sim/special.c - the simulator's kernels for CHLO's math without a
 * StableHLO op: inverse trigonometric and hyperbolic functions (float and
 * complex), erf, erfc, erf_inv, lgamma, digamma, polygamma, the Hurwitz
 * zeta function, bessel_i1e and next_after.
 * Part of the simulated device; MIT licensed, see LICENSE.
 */
#include "internal.h"

/* Semantics at the edges follow XLA's, which the CHLO decompositions
 * (chlo-legalize-to-stablehlo) define: digamma is NaN at its poles (zero
 * and the negative integers); polygamma(n, x) is NaN unless n is a natural
 * number; zeta(x, q) is NaN for x < 1, +inf for x = 1, NaN for q <= 0 when
 * x is not an integer, and at the poles q = 0, -1, ... +inf for even
 * integer x, NaN otherwise; erf_inv(+-1) = +-inf.  f16, bf16 and f32
 * compute in double and round once; f64 uses libm where C has the
 * function and the methods cited below where it does not. */

static const double sim_pi = 3.14159265358979323846;
static const double sim_2_sqrtpi = 1.12837916709551257390; /* 2/sqrt(pi) */
static const double sim_sqrt_2pi = 2.50662827463100050242; /* sqrt(2 pi) */

/* ---- bessel_i1e: exp(-|x|) I1(x) ---- */

/* |x| <= 20: the power series I1(x) = (x/2) sum_k (x^2/4)^k / (k! (k+1)!),
 * whose terms are all positive (no cancellation); beyond: Hankel's
 * asymptotic expansion e^-x I1(x) ~ (2 pi x)^-1/2 sum_k (-1)^k
 * prod_{j<=k} (4 - (2j-1)^2) / (k! (8x)^k) (Abramowitz & Stegun 9.7.1),
 * summed while its terms shrink (at x = 20 they reach 1e-17). */
SIM_PRIVATE double sim_bessel_i1e(double x) {
  double a = fabs(x), r;
  if (isnan(x)) return x;
  if (isinf(x)) return copysign(0.0, x);
  if (a <= 20) {
    double z = a * a / 4, t = a / 2, s = t;
    for (int k = 1; k < 200 && t > s * 1e-18; k++) {
      t *= z / ((double)k * (k + 1));
      s += t;
    }
    r = s * exp(-a);
  } else {
    double t = 1, s = 1;
    for (int k = 1; k < 80; k++) {
      double m = 2.0 * k - 1, nt = -t * (4 - m * m) / (8.0 * k * a);
      if (fabs(nt) >= fabs(t)) break;
      t = nt;
      s += t;
      if (fabs(t) < 1e-18 * fabs(s)) break;
    }
    r = s / (sim_sqrt_2pi * sqrt(a));
  }
  return copysign(r, x);
}

/* ---- digamma ---- */

/* tan(pi x) for a non-integer x, reduced exactly to (-1/2, 1/2]. */
static double sim_tanpi(double x) {
  double r = fmod(x, 1.0); /* exact */
  if (r > 0.5) r -= 1;
  else if (r <= -0.5) r += 1;
  return tan(sim_pi * r);
}

/* x > 0: the recurrence psi(x) = psi(x + 1) - 1/x up to x >= 10, then the
 * asymptotic series psi(x) ~ ln x - 1/(2x) - sum_k B_2k / (2k x^2k) (A&S
 * 6.3.18) to k = 7 (error below 1e-17 at x = 10); x < 0: the reflection
 * psi(x) = psi(1 - x) - pi / tan(pi x) (A&S 6.3.7). */
SIM_PRIVATE double sim_digamma(double x) {
  if (isnan(x) || x == INFINITY) return x;
  if (x <= 0 && x == floor(x)) return NAN; /* poles, -inf included */
  double r = 0;
  if (x < 0) {
    r = -sim_pi / sim_tanpi(x);
    x = 1 - x;
  }
  for (; x < 10; x += 1) r -= 1 / x;
  double z = 1 / (x * x);
  double s = z * (1.0 / 12 - z * (1.0 / 120 - z * (1.0 / 252 - z * (
                 1.0 / 240 - z * (1.0 / 132 - z * (691.0 / 32760 -
                 z / 12.0))))));
  return r + log(x) - 0.5 / x - s;
}

/* ---- Hurwitz zeta ---- */

/* B_2j / (2j)!, j = 1..12: the Euler-Maclaurin remainder's coefficients. */
static const double sim_zeta_c[12] = {
    (1.0 / 6) / 2.0,
    (-1.0 / 30) / 24.0,
    (1.0 / 42) / 720.0,
    (-1.0 / 30) / 40320.0,
    (5.0 / 66) / 3628800.0,
    (-691.0 / 2730) / 479001600.0,
    (7.0 / 6) / 87178291200.0,
    (-3617.0 / 510) / 20922789888000.0,
    (43867.0 / 798) / 6402373705728000.0,
    (-174611.0 / 330) / 2432902008176640000.0,
    (854513.0 / 138) / 1124000727777607680000.0,
    (-236364091.0 / 2730) / 620448401733239439360000.0};

/* Euler-Maclaurin summation (as Cephes' zeta.c does it): the first terms
 * (q + k)^-x directly until q + k > 9 and k >= 9 (or until they stop
 * mattering), then the integral of the rest, half the last term, and up to
 * twelve Bernoulli corrections B_2j/(2j)! x (x+1)...(x+2j-2) a^(-x-2j+1). */
static double sim_zeta_sum(double x, double q) {
  double a = q, b = pow(a, -x), s = b;
  for (int i = 0; i < 9 || a <= 9.0; i++) {
    a += 1;
    b = pow(a, -x);
    s += b;
    if (fabs(b / s) < 1e-17) return s;
  }
  s += b * a / (x - 1) - 0.5 * b;
  double f = x, w = b / a; /* f = x (x+1)...(x+2j-2), w = a^(-x-2j+1) */
  for (int j = 0; j < 12; j++) {
    double t = sim_zeta_c[j] * f * w;
    s += t;
    if (fabs(t / s) < 1e-17) break;
    f *= (x + 2 * j + 1) * (x + 2 * j + 2);
    w /= a * a;
  }
  return s;
}

SIM_PRIVATE double sim_zeta(double x, double q) {
  if (isnan(x) || isnan(q)) return x + q;
  if (x == 1) return INFINITY;
  if (x < 1) return NAN;
  if (q <= 0) {
    bool x_int = x == floor(x);
    if (q == floor(q)) /* a pole */
      return x_int && fmod(x, 2.0) == 0 ? INFINITY : NAN;
    if (!x_int || q < -1e6) return NAN; /* (q + k)^-x is not real */
  }
  if (x == INFINITY) return q < 1 ? INFINITY : q == 1 ? 1 : 0;
  if (q == INFINITY) return 0;
  return sim_zeta_sum(x, q);
}

/* psi^(n)(x) = (-1)^(n+1) n! zeta(n + 1, x) for natural n >= 1 (A&S
 * 6.4.10), digamma for n = 0. */
SIM_PRIVATE double sim_polygamma(double n, double x) {
  if (isnan(n) || isnan(x)) return n + x;
  if (n < 0 || n != floor(n) || isinf(n)) return NAN;
  if (n == 0) return sim_digamma(x);
  double sign = fmod(n, 2.0) == 1 ? 1 : -1;
  return sign * tgamma(n + 1) * sim_zeta(n + 1, x);
}

/* ---- erf_inv ---- */

/* Halley's iteration on erf(x) = y from Winitzki's approximation
 * x0 = sqrt(sqrt(t^2 - l/a) - t), t = 2/(pi a) + l/2, l = ln(1 - y^2),
 * a = 0.147 (relative error below 2e-3): each step x -= u / (1 + x u), with
 * u = (erf(x) - y) / erf'(x), triples the correct digits, so three reach
 * double precision.  Beyond y = 1/2 the residual is (1 - y) - erfc(x),
 * with 1 - y exact, so that it keeps its digits as y approaches 1. */
SIM_PRIVATE double sim_erf_inv(double y) {
  double a = fabs(y), x;
  if (isnan(y)) return y;
  if (a > 1) return NAN;
  if (a == 1) return copysign(INFINITY, y);
  if (a == 0) return y;
  if (a < 1e-4) {
    x = a / sim_2_sqrtpi; /* the first term of the series */
  } else {
    const double k = 0.147;
    double l = log1p(-a) + log1p(a), t = 2 / (sim_pi * k) + l / 2;
    x = sqrt(sqrt(t * t - l / k) - t);
  }
  for (int i = 0; i < 3; i++) {
    double f = a < 0.5 ? erf(x) - a : (1 - a) - erfc(x);
    double u = f / (sim_2_sqrtpi * exp(-x * x));
    x -= u / (1 + x * u);
  }
  return copysign(x, y);
}

/* ---- float kernels ---- */

/* A double rounded once to each element type (beyond f32's range: +-inf,
 * without the undefined conversion). */
static inline float sim_sp_f32(double v) {
  if (fabs(v) > 3.4028235677973366e38 && isfinite(v))
    return v < 0 ? -INFINITY : INFINITY;
  return (float)v;
}
#define SIM_SP_f32(v) sim_sp_f32(v)
#define SIM_SP_f64(v) (v)
#define SIM_SP_f16(v) xrt_f64_to_f16(v)
#define SIM_SP_bf16(v) xrt_f64_to_bf16(v)

#define SIM_DEF_SU(OP, nm, code, T, C, LD, ST, KEY)                           \
  static void sim_##OP##_##nm(void *const *in, void *out, size_t n,           \
                              const void *ctx) {                              \
    const T *a = (const T *)in[0];                                            \
    T *o = (T *)out;                                                          \
    (void)ctx;                                                                \
    SIM_MAP1(T, a, o, n, SIM_SP_##nm(SIM_F_##OP((double)LD(X))));            \
  }
#define SIM_DEF_SB(OP, nm, code, T, C, LD, ST, KEY)                           \
  static void sim_##OP##_##nm(void *const *in, void *out, size_t n,           \
                              const void *ctx) {                              \
    const T *a = (const T *)in[0], *b = (const T *)in[1];                     \
    T *o = (T *)out;                                                          \
    (void)ctx;                                                                \
    SIM_MAP2(T, a, b, o, n,                                                   \
             SIM_SP_##nm(SIM_F_##OP((double)LD(X), (double)LD(Y))));          \
  }
#define SIM_STAMP_SU(OP) SIM_FLT_TYPES(SIM_DEF_SU, OP)
#define SIM_STAMP_SB(OP) SIM_FLT_TYPES(SIM_DEF_SB, OP)
SIM_CHLO_UN_OPS(SIM_STAMP_SU)
SIM_CHLO_BIN_OPS(SIM_STAMP_SB)

/* ---- next_after: one step on the bit patterns ---- */

/* The neighbour of a (bits of a sign-magnitude float type whose sign is
 * bit `sign`) towards b, given both values: NaN if either is NaN, b if
 * they are equal, the smallest subnormal of b's sign from zero. */
static inline uint64_t sim_next_bits(uint64_t ab, double a, double b,
                                     uint64_t sign, uint64_t qnan) {
  if (a != a || b != b) return qnan;
  if (a == b) return ~0ull; /* the caller returns b itself */
  if (a == 0) return (b < 0 ? sign : 0) | 1;
  return (a < b) == (a > 0) ? ab + 1 : ab - 1;
}

static void sim_NEXTAFTER_f32(void *const *in, void *out, size_t n,
                              const void *ctx) {
  const float *a = (const float *)in[0], *b = (const float *)in[1];
  float *o = (float *)out;
  (void)ctx;
  SIM_MAP2(float, a, b, o, n, nextafterf(X, Y));
}
static void sim_NEXTAFTER_f64(void *const *in, void *out, size_t n,
                              const void *ctx) {
  const double *a = (const double *)in[0], *b = (const double *)in[1];
  double *o = (double *)out;
  (void)ctx;
  SIM_MAP2(double, a, b, o, n, nextafter(X, Y));
}
#define SIM_DEF_NEXT16(nm, LD, QNAN)                                          \
  static void sim_NEXTAFTER_##nm(void *const *in, void *out, size_t n,        \
                                 const void *ctx) {                           \
    const uint16_t *a = (const uint16_t *)in[0], *b = (const uint16_t *)in[1];\
    uint16_t *o = (uint16_t *)out;                                            \
    (void)ctx;                                                                \
    for (size_t i = 0; i < n; i++) {                                          \
      uint16_t x = a[i], y = b[i];                                            \
      uint64_t r = sim_next_bits(x, LD(x), LD(y), 0x8000u, QNAN);             \
      o[i] = r == ~0ull ? y : (uint16_t)r;                                    \
    }                                                                         \
  }
SIM_DEF_NEXT16(f16, xrt_f16_to_f32, 0x7e00u)
SIM_DEF_NEXT16(bf16, xrt_bf16_to_f32, 0x7fc0u)

/* ---- complex kernels: double complex from <complex.h> ---- */

typedef double _Complex sim_sp_cd;

/* A union avoids x + y*I, which turns an infinite y into NaNs. */
static inline sim_sp_cd sim_sp_cd_of(double re, double im) {
  union {
    sim_sp_cd z;
    double d[2];
  } u;
  u.d[0] = re;
  u.d[1] = im;
  return u.z;
}

#define SIM_CHLO_CPX_OPS(X)                                                   \
  X(ACOS, cacos) X(ACOSH, cacosh) X(ASIN, casin) X(ASINH, casinh)             \
  X(ATAN, catan) X(ATANH, catanh) X(COSH, ccosh) X(SINH, csinh)
#define SIM_DEF_SC(OP, fn)                                                    \
  static void sim_##OP##_c64(void *const *in, void *out, size_t n,            \
                             const void *ctx) {                               \
    const float *a = (const float *)in[0];                                    \
    float *o = (float *)out;                                                  \
    (void)ctx;                                                                \
    for (size_t i = 0; i < n; i++) {                                          \
      sim_sp_cd z = fn(sim_sp_cd_of(a[2 * i], a[2 * i + 1]));                 \
      o[2 * i] = sim_sp_f32(creal(z));                                        \
      o[2 * i + 1] = sim_sp_f32(cimag(z));                                    \
    }                                                                         \
  }                                                                           \
  static void sim_##OP##_c128(void *const *in, void *out, size_t n,           \
                              const void *ctx) {                              \
    const double *a = (const double *)in[0];                                  \
    double *o = (double *)out;                                                \
    (void)ctx;                                                                \
    for (size_t i = 0; i < n; i++) {                                          \
      sim_sp_cd z = fn(sim_sp_cd_of(a[2 * i], a[2 * i + 1]));                 \
      o[2 * i] = creal(z);                                                    \
      o[2 * i + 1] = cimag(z);                                                \
    }                                                                         \
  }
SIM_CHLO_CPX_OPS(SIM_DEF_SC)

/* ---- the table ---- */

#define SIM_SENT_F(OP, nm, code, T, C, LD, ST, KEY)                           \
  [SIM_EW_##OP][code] = sim_##OP##_##nm,
#define SIM_SROW_F(OP) SIM_FLT_TYPES(SIM_SENT_F, OP)
#define SIM_SROW_C(OP, fn)                                                    \
  [SIM_EW_##OP][XRT_C64] = sim_##OP##_c64,                                    \
  [SIM_EW_##OP][XRT_C128] = sim_##OP##_c128,
static const sim_ew_fn sim_chlo_tab[SIM_EW_NOPS][XRT_DTYPE_COUNT] = {
    SIM_CHLO_UN_OPS(SIM_SROW_F) SIM_CHLO_BIN_OPS(SIM_SROW_F)
    SIM_CHLO_CPX_OPS(SIM_SROW_C)
    [SIM_EW_NEXTAFTER][XRT_F32] = sim_NEXTAFTER_f32,
    [SIM_EW_NEXTAFTER][XRT_F64] = sim_NEXTAFTER_f64,
    [SIM_EW_NEXTAFTER][XRT_F16] = sim_NEXTAFTER_f16,
    [SIM_EW_NEXTAFTER][XRT_BF16] = sim_NEXTAFTER_bf16,
};

SIM_PRIVATE sim_ew_fn sim_chlo_kernel(int e, xrt_dtype t) {
  if (e < 0 || e >= SIM_EW_NOPS || (unsigned)t >= XRT_DTYPE_COUNT) return NULL;
  return sim_chlo_tab[e][t];
}
