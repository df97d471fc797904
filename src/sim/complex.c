/*
 * src/sim/complex.c - the simulator's complex arithmetic kernels (c64,
 * c128; abs, real and imag to floats, complex(re, im) from them) and their
 * table.
 * Part of the simulated device; MIT licensed, see LICENSE.
 */
#include "internal.h"

/* ---- complex kernels: values travel as pairs of doubles ---- */

typedef double _Complex sim_cd;

/* A union avoids x + y*I, which turns an infinite y into NaNs. */
static inline sim_cd sim_cd_of(sim_c2 a) {
  union {
    sim_cd z;
    double d[2];
  } u;
  u.d[0] = a.re;
  u.d[1] = a.im;
  return u.z;
}
static inline sim_c2 sim_c2_of(sim_cd z) { return sim_c2_mk(creal(z), cimag(z)); }

static inline sim_c2 sim_c_ADD(sim_c2 a, sim_c2 b) {
  return sim_c2_mk(a.re + b.re, a.im + b.im);
}
static inline sim_c2 sim_c_SUB(sim_c2 a, sim_c2 b) {
  return sim_c2_mk(a.re - b.re, a.im - b.im);
}
static inline sim_c2 sim_c_MUL(sim_c2 a, sim_c2 b) {
  return sim_c2_mk(a.re * b.re - a.im * b.im, a.re * b.im + a.im * b.re);
}
/* C's complex division scales to avoid overflow (Annex G / __divdc3). */
static inline sim_c2 sim_c_DIV(sim_c2 a, sim_c2 b) {
  return sim_c2_of(sim_cd_of(a) / sim_cd_of(b));
}
static inline sim_c2 sim_c_POW(sim_c2 a, sim_c2 b) {
  return sim_c2_of(cpow(sim_cd_of(a), sim_cd_of(b)));
}
/* atan2(y, x) = -i * log((x + i*y) / sqrt(x*x + y*y)), y = lhs. */
static inline sim_c2 sim_c_ATAN2(sim_c2 y, sim_c2 x) {
  sim_c2 w = sim_c2_mk(x.re - y.im, x.im + y.re);
  sim_c2 s = sim_c_ADD(sim_c_MUL(x, x), sim_c_MUL(y, y));
  sim_cd l = clog(sim_cd_of(w) / csqrt(sim_cd_of(s)));
  return sim_c2_mk(cimag(l), -creal(l));
}
/* Lexicographic on (re, im), as the interpreter orders complex numbers. */
static inline sim_c2 sim_c_MAX(sim_c2 a, sim_c2 b) {
  int gt = a.re == b.re ? a.im > b.im : a.re > b.re;
  return gt ? a : b;
}
static inline sim_c2 sim_c_MIN(sim_c2 a, sim_c2 b) {
  int lt = a.re == b.re ? a.im < b.im : a.re < b.re;
  return lt ? a : b;
}

static inline sim_c2 sim_c_NEG(sim_c2 a) { return sim_c2_mk(-a.re, -a.im); }
static inline sim_c2 sim_c_SIGN(sim_c2 a) {
  if (isnan(a.re) || isnan(a.im)) return sim_c2_mk(NAN, NAN);
  if (a.re == 0 && a.im == 0) return a;
  double h = hypot(a.re, a.im);
  return sim_c2_mk(a.re / h, a.im / h);
}
#define SIM_C_LIBM(OP, f)                                                     \
  static inline sim_c2 sim_c_##OP(sim_c2 a) {                                 \
    return sim_c2_of(f(sim_cd_of(a)));                                        \
  }
SIM_C_LIBM(EXP, cexp)
SIM_C_LIBM(LOG, clog)
SIM_C_LIBM(SQRT, csqrt)
SIM_C_LIBM(TANH, ctanh)
SIM_C_LIBM(SIN, csin)
SIM_C_LIBM(COS, ccos)
SIM_C_LIBM(TAN, ctan)
static inline sim_c2 sim_c_RSQRT(sim_c2 a) {
  return sim_c2_of(1.0 / csqrt(sim_cd_of(a)));
}
static inline sim_c2 sim_c_LOGISTIC(sim_c2 a) {
  return sim_c2_of(1.0 / (1.0 + cexp(sim_cd_of(sim_c_NEG(a)))));
}
/* exp(z) - 1 without cancellation near 0: expm1(x)cos(y) - 2sin^2(y/2). */
static inline sim_c2 sim_c_EXPM1(sim_c2 a) {
  double s = sin(0.5 * a.im);
  return sim_c2_mk(expm1(a.re) * cos(a.im) - 2 * s * s, exp(a.re) * sin(a.im));
}
/* log(1 + z): |1+z|^2 - 1 = x(2 + x) + y^2 keeps precision near 0. */
static inline sim_c2 sim_c_LOG1P(sim_c2 a) {
  double t = a.re * (2 + a.re) + a.im * a.im;
  if (!isfinite(t) || t > 1) /* far from 0: the plain formula is fine */
    return sim_c2_of(clog(sim_cd_of(sim_c2_mk(1 + a.re, a.im))));
  return sim_c2_mk(0.5 * log1p(t), atan2(a.im, 1 + a.re));
}
/* Principal cube root: cbrt(|z|) at a third of the argument. */
static inline sim_c2 sim_c_CBRT(sim_c2 a) {
  if (a.re == 0 && a.im == 0) return a;
  double r = cbrt(hypot(a.re, a.im)), t = atan2(a.im, a.re) / 3;
  return sim_c2_mk(r * cos(t), r * sin(t));
}

#define SIM_CPX_BIN_OPS(X)                                                    \
  X(ADD) X(SUB) X(MUL) X(DIV) X(POW) X(ATAN2) X(MAX) X(MIN)
#define SIM_CPX_UN_OPS(X)                                                     \
  X(NEG) X(SIGN) X(EXP) X(LOG) X(SQRT) X(RSQRT) X(TANH) X(LOGISTIC) X(SIN)    \
  X(COS) X(TAN) X(EXPM1) X(LOG1P) X(CBRT)

#define SIM_DEF_CB(OP, nm, code, ET)                                          \
  static void sim_##OP##_##nm(void *const *in, void *out, size_t n,           \
                              const void *ctx) {                              \
    const ET *a = (const ET *)in[0], *b = (const ET *)in[1];                  \
    ET *o = (ET *)out;                                                        \
    (void)ctx;                                                                \
    for (size_t i = 0; i < n; i++) {                                          \
      sim_c2 r = sim_c_##OP(sim_c2_mk(a[2 * i], a[2 * i + 1]),                \
                            sim_c2_mk(b[2 * i], b[2 * i + 1]));               \
      o[2 * i] = (ET)r.re;                                                    \
      o[2 * i + 1] = (ET)r.im;                                                \
    }                                                                         \
  }
#define SIM_DEF_CU(OP, nm, code, ET)                                          \
  static void sim_##OP##_##nm(void *const *in, void *out, size_t n,           \
                              const void *ctx) {                              \
    const ET *a = (const ET *)in[0];                                          \
    ET *o = (ET *)out;                                                        \
    (void)ctx;                                                                \
    for (size_t i = 0; i < n; i++) {                                          \
      sim_c2 r = sim_c_##OP(sim_c2_mk(a[2 * i], a[2 * i + 1]));               \
      o[2 * i] = (ET)r.re;                                                    \
      o[2 * i + 1] = (ET)r.im;                                                \
    }                                                                         \
  }
#define SIM_STAMP_CB(OP) SIM_CPX_TYPES(SIM_DEF_CB, OP)
#define SIM_STAMP_CU(OP) SIM_CPX_TYPES(SIM_DEF_CU, OP)
SIM_CPX_BIN_OPS(SIM_STAMP_CB)
SIM_CPX_UN_OPS(SIM_STAMP_CU)

/* Complex -> real element type: abs, real and imag (outputs are narrower, so
 * forward loops stay alias-safe).  On real inputs real is a copy and imag 0. */
#define SIM_DEF_CR(OP, nm, code, ET)                                          \
  static void sim_##OP##_##nm(void *const *in, void *out, size_t n,           \
                              const void *ctx) {                              \
    const ET *a = (const ET *)in[0];                                          \
    ET *o = (ET *)out;                                                        \
    (void)ctx;                                                                \
    for (size_t i = 0; i < n; i++) o[i] = (ET)SIM_CR_##OP(a[2 * i], a[2 * i + 1]); \
  }
#define SIM_CR_ABS(re, im) hypot(re, im)
#define SIM_CR_REAL(re, im) (re)
#define SIM_CR_IMAG(re, im) (im)
SIM_CPX_TYPES(SIM_DEF_CR, ABS)
SIM_CPX_TYPES(SIM_DEF_CR, REAL)
SIM_CPX_TYPES(SIM_DEF_CR, IMAG)

/* complex(re, im): output twice as wide as the inputs, so run backwards. */
#define SIM_DEF_CMK(OP, nm, code, ET)                                         \
  static void sim_CMK_##nm(void *const *in, void *out, size_t n,              \
                           const void *ctx) {                                 \
    const ET *a = (const ET *)in[0], *b = (const ET *)in[1];                  \
    ET *o = (ET *)out;                                                        \
    (void)ctx;                                                                \
    for (size_t i = n; i-- > 0;) {                                            \
      ET re = a[i], im = b[i];                                                \
      o[2 * i] = re;                                                          \
      o[2 * i + 1] = im;                                                      \
    }                                                                         \
  }
SIM_CPX_TYPES(SIM_DEF_CMK, CMK)

/* Kernel table indexed by [op][operand element type]; NULL = unsupported. */
#define SIM_TENT_C(OP, nm, code, ET) [SIM_EW_##OP][code] = sim_##OP##_##nm,
#define SIM_TROW_C(OP) SIM_CPX_TYPES(SIM_TENT_C, OP)
static const sim_ew_fn sim_cpx_tab[SIM_EW_NOPS][XRT_DTYPE_COUNT] = {
    SIM_CPX_BIN_OPS(SIM_TROW_C) SIM_CPX_UN_OPS(SIM_TROW_C)
    SIM_CPX_TYPES(SIM_TENT_C, ABS)
    SIM_CPX_TYPES(SIM_TENT_C, REAL)
    SIM_CPX_TYPES(SIM_TENT_C, IMAG)
    [SIM_EW_CMK][XRT_F32] = sim_CMK_c64,
    [SIM_EW_CMK][XRT_F64] = sim_CMK_c128,
};

/* The complex kernel of op e (SIM_EW_*) for operand element type t (c64,
 * c128; f32, f64 for complex(re, im)); NULL: none. */
SIM_PRIVATE sim_ew_fn sim_cpx_kernel(int e, xrt_dtype t) {
  return sim_cpx_tab[e][t];
}
