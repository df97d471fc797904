/*
 * src/sim/elementwise.c - the simulator's elementwise kernels (unary, binary,
 * compare, convert, bitcast), the f8/f6/f4 families, reduce_precision and
 * quantized tensors.
 * Part of the simulated device; MIT licensed, see LICENSE.
 */
#include "internal.h"

/* ---- integer helpers (values travel as 64-bit two's complement) ---- */

/* Low w (< 64) bits of v as a w-bit integer, sign-extended when sg. */
static inline uint64_t sim_wrap(uint64_t v, int w, int sg) {
  uint64_t h = (uint64_t)1 << ((w - 1) & 63);
  v &= (h << 1) - 1;
  return sg ? (v ^ h) - h : v;
}

static inline int64_t sim_sext(uint64_t bits, int w) {
  return (int64_t)(w >= 64 ? bits : sim_wrap(bits, w, 1));
}

/* Mask of the low W bits, W in 1..64 (the & 63 keeps W = 64 shift-safe). */
#define SIM_M64(W) ((W) >= 64 ? ~(uint64_t)0 : ((uint64_t)1 << ((W) & 63)) - 1)

/* Stores v into storage type T of width W: sub-byte widths wrap. */
#define SIM_ST(T, W, SG, v)                                                   \
  ((W) == 8 * (int)sizeof(T) ? (T)(v) : (T)sim_wrap((uint64_t)(v), (W), (SG)))

static inline int64_t sim_sdiv(int64_t a, int64_t b) {
  if (b == 0) return -1;
  if (b == -1) return (int64_t)(0 - (uint64_t)a); /* MIN / -1 wraps to MIN */
  return a / b;
}
static inline uint64_t sim_udiv(uint64_t a, uint64_t b) {
  return b ? a / b : ~(uint64_t)0;
}
static inline int64_t sim_srem(int64_t a, int64_t b) {
  if (b == 0) return a;
  if (b == -1) return 0;
  return a % b; /* sign of the dividend, as C99 */
}
static inline uint64_t sim_urem(uint64_t a, uint64_t b) {
  return b ? a % b : a;
}

/* Square-and-multiply modulo 2^64; narrower types truncate afterwards. */
static inline uint64_t sim_upow(uint64_t base, uint64_t e) {
  uint64_t r = 1;
  for (; e; e >>= 1, base *= base)
    if (e & 1) r *= base;
  return r;
}
/* Negative exponents: 1 and -1 keep their powers, everything else gives 0
 * (the interpreter's rule). */
static inline int64_t sim_spow(int64_t base, int64_t e) {
  if (e < 0) {
    if (base == 1) return 1;
    if (base == -1) return (e & 1) ? -1 : 1;
    return 0;
  }
  return (int64_t)sim_upow((uint64_t)base, (uint64_t)e);
}

/* Arithmetic right shift of a w-bit pattern (also for unsigned types). */
static inline uint64_t sim_sra(uint64_t bits, uint64_t sh, int w) {
  int64_t s = sim_sext(bits, w);
  if (sh >= (uint64_t)w) return s < 0 ? ~(uint64_t)0 : 0;
  return (uint64_t)(s < 0 ? ~(~s >> sh) : s >> sh);
}

static inline uint64_t sim_iabs(int64_t v) {
  return v < 0 ? 0 - (uint64_t)v : (uint64_t)v;
}
static inline int64_t sim_isign(int64_t v) { return (v > 0) - (v < 0); }

static inline int sim_popcnt(uint64_t x) {
#if defined(__GNUC__)
  return __builtin_popcountll(x);
#else
  int c = 0;
  for (; x; x &= x - 1) c++;
  return c;
#endif
}
/* Leading zeros of x viewed as a w-bit number. */
static inline int sim_clz(uint64_t x, int w) {
#if defined(__GNUC__)
  return x ? __builtin_clzll(x) - (64 - w) : w;
#else
  int k = w;
  for (; x; x >>= 1) k--;
  return k;
#endif
}

/* ---- integer kernels ---- */

/* Integer element types: name, dtype, storage T, unsigned compute type P
 * (never narrower than unsigned int, so no promotion to signed int), width
 * W, signedness SG.  OP is passed through for the caller's macro X. */
#define SIM_INT_TYPES(X, OP)                                                  \
  X(OP, s8, XRT_S8, int8_t, uint32_t, 8, 1)                                   \
  X(OP, s16, XRT_S16, int16_t, uint32_t, 16, 1)                               \
  X(OP, s32, XRT_S32, int32_t, uint32_t, 32, 1)                               \
  X(OP, s64, XRT_S64, int64_t, uint64_t, 64, 1)                               \
  X(OP, u8, XRT_U8, uint8_t, uint32_t, 8, 0)                                  \
  X(OP, u16, XRT_U16, uint16_t, uint32_t, 16, 0)                              \
  X(OP, u32, XRT_U32, uint32_t, uint32_t, 32, 0)                              \
  X(OP, u64, XRT_U64, uint64_t, uint64_t, 64, 0)                              \
  X(OP, s2, XRT_S2, int8_t, uint32_t, 2, 1)                                   \
  X(OP, s4, XRT_S4, int8_t, uint32_t, 4, 1)                                   \
  X(OP, u2, XRT_U2, uint8_t, uint32_t, 2, 0)                                  \
  X(OP, u4, XRT_U4, uint8_t, uint32_t, 4, 0)

#define SIM_I_ADD(a, b, P, W, SG) ((P)(a) + (P)(b))
#define SIM_I_SUB(a, b, P, W, SG) ((P)(a) - (P)(b))
#define SIM_I_MUL(a, b, P, W, SG) ((P)(a) * (P)(b))
#define SIM_I_AND(a, b, P, W, SG) ((P)(a) & (P)(b))
#define SIM_I_OR(a, b, P, W, SG) ((P)(a) | (P)(b))
#define SIM_I_XOR(a, b, P, W, SG) ((P)(a) ^ (P)(b))
#define SIM_I_MAX(a, b, P, W, SG) ((a) > (b) ? (a) : (b))
#define SIM_I_MIN(a, b, P, W, SG) ((a) < (b) ? (a) : (b))
#define SIM_I_DIV(a, b, P, W, SG)                                             \
  ((SG) ? (uint64_t)sim_sdiv((int64_t)(a), (int64_t)(b))                      \
        : sim_udiv((uint64_t)(a), (uint64_t)(b)))
#define SIM_I_REM(a, b, P, W, SG)                                             \
  ((SG) ? (uint64_t)sim_srem((int64_t)(a), (int64_t)(b))                      \
        : sim_urem((uint64_t)(a), (uint64_t)(b)))
#define SIM_I_POW(a, b, P, W, SG)                                             \
  ((SG) ? (uint64_t)sim_spow((int64_t)(a), (int64_t)(b))                      \
        : sim_upow((uint64_t)(a), (uint64_t)(b)))
/* Shift counts are read as unsigned W-bit values: negative ones are huge. */
#define SIM_I_SHL(a, b, P, W, SG)                                             \
  ((uint64_t)(P)(b) >= (W) ? 0 : (P)(a) << (uint64_t)(P)(b))
#define SIM_I_SHRL(a, b, P, W, SG)                                            \
  ((uint64_t)(P)(b) >= (W)                                                    \
       ? 0                                                                    \
       : ((uint64_t)(P)(a) & SIM_M64(W)) >> (uint64_t)(P)(b))
#define SIM_I_SHRA(a, b, P, W, SG)                                            \
  sim_sra((uint64_t)(P)(a), (uint64_t)(P)(b) & SIM_M64(W), (W))

#define SIM_I_NEG(a, P, W, SG) ((P)0 - (P)(a))
#define SIM_I_ABS(a, P, W, SG) ((SG) ? sim_iabs((int64_t)(a)) : (uint64_t)(a))
#define SIM_I_SIGN(a, P, W, SG)                                               \
  ((SG) ? (uint64_t)sim_isign((int64_t)(a)) : (uint64_t)((a) != 0))
#define SIM_I_NOT(a, P, W, SG) ((P) ~(P)(a))
#define SIM_I_POPCNT(a, P, W, SG)                                             \
  ((uint64_t)sim_popcnt((uint64_t)(P)(a) & SIM_M64(W)))
#define SIM_I_CLZ(a, P, W, SG)                                                \
  ((uint64_t)sim_clz((uint64_t)(P)(a) & SIM_M64(W), (W)))

#define SIM_INT_BIN_OPS(X)                                                    \
  X(ADD) X(SUB) X(MUL) X(DIV) X(REM) X(MAX) X(MIN) X(POW) X(AND) X(OR)        \
  X(XOR) X(SHL) X(SHRL) X(SHRA)
#define SIM_INT_UN_OPS(X) X(NEG) X(ABS) X(SIGN) X(NOT) X(POPCNT) X(CLZ)

#define SIM_DEF_IB(OP, nm, code, T, P, W, SG)                                 \
  static void sim_##OP##_##nm(void *const *in, void *out, size_t n,           \
                              const void *ctx) {                              \
    const T *a = (const T *)in[0], *b = (const T *)in[1];                     \
    T *o = (T *)out;                                                          \
    (void)ctx;                                                                \
    SIM_MAP2(T, a, b, o, n, SIM_ST(T, W, SG, SIM_I_##OP(X, Y, P, W, SG)));   \
  }
#define SIM_DEF_IU(OP, nm, code, T, P, W, SG)                                 \
  static void sim_##OP##_##nm(void *const *in, void *out, size_t n,           \
                              const void *ctx) {                              \
    const T *a = (const T *)in[0];                                            \
    T *o = (T *)out;                                                          \
    (void)ctx;                                                                \
    SIM_MAP1(T, a, o, n, SIM_ST(T, W, SG, SIM_I_##OP(X, P, W, SG)));         \
  }
#define SIM_STAMP_IB(OP) SIM_INT_TYPES(SIM_DEF_IB, OP)
#define SIM_STAMP_IU(OP) SIM_INT_TYPES(SIM_DEF_IU, OP)
SIM_INT_BIN_OPS(SIM_STAMP_IB)
SIM_INT_UN_OPS(SIM_STAMP_IU)

/* ---- pred (i1) kernels: arithmetic on booleans as the spec defines it ---- */

#define SIM_PRED_BIN_OPS(X)                                                   \
  X(ADD, |) X(MUL, &) X(MAX, |) X(MIN, &) X(AND, &) X(OR, |) X(XOR, ^)
#define SIM_DEF_PB(OP, sym)                                                   \
  static void sim_##OP##_pred(void *const *in, void *out, size_t n,           \
                              const void *ctx) {                              \
    const uint8_t *a = (const uint8_t *)in[0], *b = (const uint8_t *)in[1];   \
    uint8_t *o = (uint8_t *)out;                                              \
    (void)ctx;                                                                \
    SIM_MAP2(uint8_t, a, b, o, n, (uint8_t)((X sym Y) & 1));                  \
  }
SIM_PRED_BIN_OPS(SIM_DEF_PB)

static void sim_NOT_pred(void *const *in, void *out, size_t n,
                         const void *ctx) {
  const uint8_t *a = (const uint8_t *)in[0];
  uint8_t *o = (uint8_t *)out;
  (void)ctx;
  SIM_MAP1(uint8_t, a, o, n, (uint8_t)!X);
}

/* ---- float kernels ---- */

/* Float types: name, dtype, storage T, compute type C, load, store, and the
 * totalOrder key of a stored value. */
#define SIM_ID(x) (x)
#define SIM_FLT_TYPES(X, OP)                                                  \
  X(OP, f32, XRT_F32, float, float, SIM_ID, SIM_ID, sim_key_f32)              \
  X(OP, f64, XRT_F64, double, double, SIM_ID, SIM_ID, sim_key_f64)            \
  X(OP, f16, XRT_F16, uint16_t, float, xrt_f16_to_f32, xrt_f32_to_f16,        \
    sim_key_h)                                                                \
  X(OP, bf16, XRT_BF16, uint16_t, float, xrt_bf16_to_f32, xrt_f32_to_bf16,    \
    sim_key_h)

/* Ops computed in the element's compute type C (correctly rounded there,
 * and float has the 2p+2 bits that make f16/bf16 results exact too) ... */
#define SIM_FLT_BIN_OPS(X) X(ADD) X(SUB) X(MUL) X(DIV) X(REM) X(MAX) X(MIN)
#define SIM_FLT_UN_OPS(X)                                                     \
  X(NEG) X(ABS) X(SIGN) X(SQRT) X(FLOOR) X(CEIL) X(RAFZ) X(REVEN)
/* ... and ops computed in double. */
#define SIM_FLT_BIN_DOPS(X) X(POW) X(ATAN2)
#define SIM_FLT_UN_DOPS(X)                                                    \
  X(EXP) X(LOG) X(RSQRT) X(TANH) X(LOGISTIC) X(SIN) X(COS) X(TAN) X(EXPM1)    \
  X(LOG1P) X(CBRT)

/* Stores a double into a float element type with one rounding. */
#define SIM_STD_f32(v) ((float)(v))
#define SIM_STD_f64(v) (v)
#define SIM_STD_f16(v) xrt_f64_to_f16(v)
#define SIM_STD_bf16(v) xrt_f64_to_bf16(v)

#define SIM_DEF_FB(OP, nm, code, T, C, LD, ST, KEY)                           \
  SIM_PRIVATE void sim_##OP##_##nm(void *const *in, void *out, size_t n,           \
                              const void *ctx) {                              \
    const T *a = (const T *)in[0], *b = (const T *)in[1];                     \
    T *o = (T *)out;                                                          \
    (void)ctx;                                                                \
    SIM_MAP2(T, a, b, o, n, ST((C)SIM_F_##OP((C)LD(X), (C)LD(Y))));          \
  }
#define SIM_DEF_FU(OP, nm, code, T, C, LD, ST, KEY)                           \
  SIM_PRIVATE void sim_##OP##_##nm(void *const *in, void *out, size_t n,           \
                              const void *ctx) {                              \
    const T *a = (const T *)in[0];                                            \
    T *o = (T *)out;                                                          \
    (void)ctx;                                                                \
    SIM_MAP1(T, a, o, n, ST((C)SIM_F_##OP((C)LD(X))));                       \
  }
#define SIM_DEF_FBD(OP, nm, code, T, C, LD, ST, KEY)                          \
  static void sim_##OP##_##nm(void *const *in, void *out, size_t n,           \
                              const void *ctx) {                              \
    const T *a = (const T *)in[0], *b = (const T *)in[1];                     \
    T *o = (T *)out;                                                          \
    (void)ctx;                                                                \
    SIM_MAP2(T, a, b, o, n,                                                   \
             SIM_STD_##nm(SIM_F_##OP((double)LD(X), (double)LD(Y))));         \
  }
#define SIM_DEF_FUD(OP, nm, code, T, C, LD, ST, KEY)                          \
  static void sim_##OP##_##nm(void *const *in, void *out, size_t n,           \
                              const void *ctx) {                              \
    const T *a = (const T *)in[0];                                            \
    T *o = (T *)out;                                                          \
    (void)ctx;                                                                \
    SIM_MAP1(T, a, o, n, SIM_STD_##nm(SIM_F_##OP((double)LD(X))));           \
  }
#define SIM_STAMP_FB(OP) SIM_FLT_TYPES(SIM_DEF_FB, OP)
#define SIM_STAMP_FU(OP) SIM_FLT_TYPES(SIM_DEF_FU, OP)
#define SIM_STAMP_FBD(OP) SIM_FLT_TYPES(SIM_DEF_FBD, OP)
#define SIM_STAMP_FUD(OP) SIM_FLT_TYPES(SIM_DEF_FUD, OP)
SIM_FLT_BIN_OPS(SIM_STAMP_FB)
SIM_FLT_UN_OPS(SIM_STAMP_FU)
SIM_FLT_BIN_DOPS(SIM_STAMP_FBD)
SIM_FLT_UN_DOPS(SIM_STAMP_FUD)

/* The kernels that fusion maps to its own per-ISA versions. */

/* is_finite: float -> pred (output never wider than input). */
#define SIM_DEF_ISFIN(OP, nm, code, T, C, LD, ST, KEY)                        \
  static void sim_ISFIN_##nm(void *const *in, void *out, size_t n,            \
                             const void *ctx) {                               \
    const T *a = (const T *)in[0];                                            \
    uint8_t *o = (uint8_t *)out;                                              \
    (void)ctx;                                                                \
    SIM_MAP1(T, a, o, n, (uint8_t)(isfinite(LD(X)) != 0));                   \
  }
SIM_FLT_TYPES(SIM_DEF_ISFIN, ISFIN)

/* ---- complex kernels: values travel as pairs of doubles ---- */

typedef struct sim_c2 {
  double re, im;
} sim_c2;
typedef double _Complex sim_cd;

static inline sim_c2 sim_c2_mk(double re, double im) {
  sim_c2 r;
  r.re = re;
  r.im = im;
  return r;
}
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

#define SIM_CPX_TYPES(X, OP)                                                  \
  X(OP, c64, XRT_C64, float)                                                  \
  X(OP, c128, XRT_C128, double)
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

/* Same-size copy (real of a real type, bitcast); NULL-safe for n == 0. */
static void sim_copy(void *const *in, void *out, size_t n, const void *ctx) {
  size_t esz = *(const size_t *)ctx;
  if (n && in[0] != out) memcpy(out, in[0], n * esz);
}
static void sim_zero(void *const *in, void *out, size_t n, const void *ctx) {
  size_t esz = *(const size_t *)ctx;
  (void)in;
  if (n) memset(out, 0, n * esz); /* +0.0 is all zero bits */
}
static const size_t sim_esz[17] = {0, 1, 2, 3, 4, 5, 6, 7, 8,
                                   9, 10, 11, 12, 13, 14, 15, 16};

/* ---- compare ---- */

#define SIM_CMP_DIRS(X) X(EQ) X(NE) X(GE) X(GT) X(LE) X(LT)
#define SIM_CMP_EQ(x, y) ((x) == (y))
#define SIM_CMP_NE(x, y) ((x) != (y))
#define SIM_CMP_GE(x, y) ((x) >= (y))
#define SIM_CMP_GT(x, y) ((x) > (y))
#define SIM_CMP_LE(x, y) ((x) <= (y))
#define SIM_CMP_LT(x, y) ((x) < (y))
/* Complex: lexicographic on (re, im). */
#define SIM_CCMP_EQ(ar, ai, br, bi) ((ar) == (br) && (ai) == (bi))
#define SIM_CCMP_NE(ar, ai, br, bi) (!SIM_CCMP_EQ(ar, ai, br, bi))
#define SIM_CCMP_GE(ar, ai, br, bi) ((ar) > (br) || ((ar) == (br) && (ai) >= (bi)))
#define SIM_CCMP_GT(ar, ai, br, bi) ((ar) > (br) || ((ar) == (br) && (ai) > (bi)))
#define SIM_CCMP_LE(ar, ai, br, bi) ((ar) < (br) || ((ar) == (br) && (ai) <= (bi)))
#define SIM_CCMP_LT(ar, ai, br, bi) ((ar) < (br) || ((ar) == (br) && (ai) < (bi)))

/* totalOrder keys: unsigned integers ordered like -NaN < -Inf < ... < -0 <
 * +0 < ... < +Inf < +NaN (flip everything for negatives, the sign else). */
static inline uint32_t sim_key_f32(float f) {
  uint32_t u = xrt__f32_to_bits(f);
  return (u >> 31) ? ~u : u | 0x80000000u;
}
static inline uint64_t sim_key_f64(double d) {
  uint64_t u = xrt__f64_to_bits(d);
  return (u >> 63) ? ~u : u | 0x8000000000000000ull;
}
static inline uint16_t sim_key_h(uint16_t u) {
  return (uint16_t)((u >> 15) ? ~(unsigned)u : u | 0x8000u);
}

#define SIM_DEF_CMPI(DIR, nm, code, T, P, W, SG)                              \
  static void sim_cmp_##DIR##_##nm(void *const *in, void *out, size_t n,      \
                                   const void *ctx) {                         \
    const T *a = (const T *)in[0], *b = (const T *)in[1];                     \
    uint8_t *o = (uint8_t *)out;                                              \
    (void)ctx;                                                                \
    SIM_MAP2(T, a, b, o, n, (uint8_t)SIM_CMP_##DIR(X, Y));                   \
  }
#define SIM_DEF_CMPF(DIR, nm, code, T, C, LD, ST, KEY)                        \
  static void sim_cmp_##DIR##_##nm(void *const *in, void *out, size_t n,      \
                                   const void *ctx) {                         \
    const T *a = (const T *)in[0], *b = (const T *)in[1];                     \
    uint8_t *o = (uint8_t *)out;                                              \
    (void)ctx;                                                                \
    SIM_MAP2(T, a, b, o, n, (uint8_t)SIM_CMP_##DIR(LD(X), LD(Y)));           \
  }                                                                           \
  static void sim_tot_##DIR##_##nm(void *const *in, void *out, size_t n,      \
                                   const void *ctx) {                         \
    const T *a = (const T *)in[0], *b = (const T *)in[1];                     \
    uint8_t *o = (uint8_t *)out;                                              \
    (void)ctx;                                                                \
    SIM_MAP2(T, a, b, o, n, (uint8_t)SIM_CMP_##DIR(KEY(X), KEY(Y)));         \
  }
#define SIM_DEF_CMPC(DIR, nm, code, ET)                                       \
  static void sim_cmp_##DIR##_##nm(void *const *in, void *out, size_t n,      \
                                   const void *ctx) {                         \
    const ET *a = (const ET *)in[0], *b = (const ET *)in[1];                  \
    uint8_t *o = (uint8_t *)out;                                              \
    (void)ctx;                                                                \
    for (size_t i = 0; i < n; i++)                                            \
      o[i] = (uint8_t)SIM_CCMP_##DIR(a[2 * i], a[2 * i + 1], b[2 * i],        \
                                     b[2 * i + 1]);                           \
  }
#define SIM_STAMP_CMP(DIR)                                                    \
  SIM_INT_TYPES(SIM_DEF_CMPI, DIR)                                            \
  SIM_DEF_CMPI(DIR, pred, XRT_PRED, uint8_t, uint32_t, 1, 0)                  \
  SIM_FLT_TYPES(SIM_DEF_CMPF, DIR)                                            \
  SIM_CPX_TYPES(SIM_DEF_CMPC, DIR)
SIM_CMP_DIRS(SIM_STAMP_CMP)

/* ---- convert ---- */

/* A conversion loads the source into one of four intermediates - i (int64),
 * u (uint64), f (double, exact for every float type), c (a pair of doubles)
 * - and the destination stores from that intermediate. */

/* Float -> integer: truncate, saturate, NaN -> 0 (APFloat's convertToInteger).
 * Returns the W-bit pattern; the checks come before any cast (no UB). */
static inline uint64_t sim_f2i(double d, int w, int sg) {
  double lim = ldexp(1.0, sg ? w - 1 : w); /* exact; folds for constant w */
  if (d != d) return 0;
  if (sg) { /* d > -lim - 1 means trunc(d) >= -lim (for w = 64 the bound
             * rounds to -lim, whose saturated result is the same value) */
    if (!(d > -lim - 1)) return (uint64_t)0 - ((uint64_t)1 << ((w - 1) & 63));
    if (d >= lim) return ((uint64_t)1 << ((w - 1) & 63)) - 1;
    return (uint64_t)(int64_t)d; /* in range: the cast truncates */
  }
  if (!(d > -1)) return 0;
  if (d >= lim) return SIM_M64(w);
  return (uint64_t)d;
}

/* Integer -> double rounded to odd, so a second rounding to a narrower float
 * is still correct (no double rounding for |v| >= 2^53). */
static inline double sim_u2d_odd(uint64_t m) {
  if (m < ((uint64_t)1 << 53)) return (double)m;
  int drop = 11 - sim_clz(m, 64); /* keep the top 53 bits */
  uint64_t kept = m >> drop;
  if (m & (((uint64_t)1 << drop) - 1)) kept |= 1;
  return ldexp((double)kept, drop);
}
static inline double sim_i2d_odd(int64_t v) {
  return v < 0 ? -sim_u2d_odd(0 - (uint64_t)v) : sim_u2d_odd((uint64_t)v);
}

/* Loads: name, storage T, intermediate kind. */
#define SIM_LD(nm, T, K, expr)                                                \
  static inline K sim_ld_##nm(const void *p, size_t i) {                      \
    const T *a = (const T *)p;                                                \
    return expr;                                                              \
  }
SIM_LD(pred, uint8_t, uint64_t, a[i] != 0)
SIM_LD(s2, int8_t, int64_t, a[i])
SIM_LD(s4, int8_t, int64_t, a[i])
SIM_LD(s8, int8_t, int64_t, a[i])
SIM_LD(s16, int16_t, int64_t, a[i])
SIM_LD(s32, int32_t, int64_t, a[i])
SIM_LD(s64, int64_t, int64_t, a[i])
SIM_LD(u2, uint8_t, uint64_t, a[i])
SIM_LD(u4, uint8_t, uint64_t, a[i])
SIM_LD(u8, uint8_t, uint64_t, a[i])
SIM_LD(u16, uint16_t, uint64_t, a[i])
SIM_LD(u32, uint32_t, uint64_t, a[i])
SIM_LD(u64, uint64_t, uint64_t, a[i])
SIM_LD(f16, uint16_t, double, xrt_f16_to_f32(a[i]))
SIM_LD(bf16, uint16_t, double, xrt_bf16_to_f32(a[i]))
SIM_LD(f32, float, double, a[i])
SIM_LD(f64, double, double, a[i])
SIM_LD(c64, float, sim_c2, sim_c2_mk(a[2 * i], a[2 * i + 1]))
SIM_LD(c128, double, sim_c2, sim_c2_mk(a[2 * i], a[2 * i + 1]))

/* Stores: sim_st_<dst>_<kind>(out, i, value). */
#define SIM_ST_FNS(nm, T, ei, eu, ef, ec)                                     \
  static inline void sim_st_##nm##_i(void *p, size_t i, int64_t v) {          \
    T *o = (T *)p;                                                            \
    ei;                                                                       \
  }                                                                           \
  static inline void sim_st_##nm##_u(void *p, size_t i, uint64_t v) {         \
    T *o = (T *)p;                                                            \
    eu;                                                                       \
  }                                                                           \
  static inline void sim_st_##nm##_f(void *p, size_t i, double v) {           \
    T *o = (T *)p;                                                            \
    ef;                                                                       \
  }                                                                           \
  static inline void sim_st_##nm##_c(void *p, size_t i, sim_c2 v) {           \
    T *o = (T *)p;                                                            \
    ec;                                                                       \
  }
/* Integers wrap from integers, saturate from floats, ignore imag parts. */
#define SIM_ST_INT(nm, T, W, SG)                                              \
  SIM_ST_FNS(nm, T, o[i] = SIM_ST(T, W, SG, (uint64_t)v),                     \
             o[i] = SIM_ST(T, W, SG, v),                                      \
             o[i] = SIM_ST(T, W, SG, sim_f2i(v, W, SG)),                      \
             o[i] = SIM_ST(T, W, SG, sim_f2i(v.re, W, SG)))
/* Floats: fi/fu/fd convert an int64 / uint64 / double, correctly rounded. */
#define SIM_ST_FLT(nm, T, fi, fu, fd)                                         \
  SIM_ST_FNS(nm, T, o[i] = fi(v), o[i] = fu(v), o[i] = fd(v), o[i] = fd(v.re))
#define SIM_ST_CPX(nm, ET)                                                    \
  SIM_ST_FNS(nm, ET, (o[2 * i] = (ET)v, o[2 * i + 1] = 0),                    \
             (o[2 * i] = (ET)v, o[2 * i + 1] = 0),                            \
             (o[2 * i] = (ET)v, o[2 * i + 1] = 0),                            \
             (o[2 * i] = (ET)v.re, o[2 * i + 1] = (ET)v.im))

SIM_ST_FNS(pred, uint8_t, o[i] = v != 0, o[i] = v != 0, o[i] = v != 0,
           o[i] = v.re != 0)
SIM_ST_INT(s2, int8_t, 2, 1)
SIM_ST_INT(s4, int8_t, 4, 1)
SIM_ST_INT(s8, int8_t, 8, 1)
SIM_ST_INT(s16, int16_t, 16, 1)
SIM_ST_INT(s32, int32_t, 32, 1)
SIM_ST_INT(s64, int64_t, 64, 1)
SIM_ST_INT(u2, uint8_t, 2, 0)
SIM_ST_INT(u4, uint8_t, 4, 0)
SIM_ST_INT(u8, uint8_t, 8, 0)
SIM_ST_INT(u16, uint16_t, 16, 0)
SIM_ST_INT(u32, uint32_t, 32, 0)
SIM_ST_INT(u64, uint64_t, 64, 0)
#define SIM_I2F16(v) xrt_f64_to_f16(sim_i2d_odd(v))
#define SIM_U2F16(v) xrt_f64_to_f16(sim_u2d_odd(v))
#define SIM_I2BF16(v) xrt_f64_to_bf16(sim_i2d_odd(v))
#define SIM_U2BF16(v) xrt_f64_to_bf16(sim_u2d_odd(v))
#define SIM_TOF(v) ((float)(v))
#define SIM_TOD(v) ((double)(v))
SIM_ST_FLT(f16, uint16_t, SIM_I2F16, SIM_U2F16, xrt_f64_to_f16)
SIM_ST_FLT(bf16, uint16_t, SIM_I2BF16, SIM_U2BF16, xrt_f64_to_bf16)
SIM_ST_FLT(f32, float, SIM_TOF, SIM_TOF, SIM_TOF)
SIM_ST_FLT(f64, double, SIM_TOD, SIM_TOD, SIM_TOD)
SIM_ST_CPX(c64, float)
SIM_ST_CPX(c128, double)

/* Convertible types: name, dtype, element bytes, load kind (i/u/f/c). */
#define SIM_CV_SRCS(X)                                                        \
  X(pred, XRT_PRED, 1, u) X(s2, XRT_S2, 1, i) X(s4, XRT_S4, 1, i)             \
  X(s8, XRT_S8, 1, i) X(s16, XRT_S16, 2, i) X(s32, XRT_S32, 4, i)             \
  X(s64, XRT_S64, 8, i) X(u2, XRT_U2, 1, u) X(u4, XRT_U4, 1, u)               \
  X(u8, XRT_U8, 1, u) X(u16, XRT_U16, 2, u) X(u32, XRT_U32, 4, u)             \
  X(u64, XRT_U64, 8, u) X(f16, XRT_F16, 2, f) X(bf16, XRT_BF16, 2, f)         \
  X(f32, XRT_F32, 4, f) X(f64, XRT_F64, 8, f) X(c64, XRT_C64, 8, c)           \
  X(c128, XRT_C128, 16, c)
/* The same list again, carrying the source's parameters (A, B, K). */
#define SIM_CV_DSTS(X, A, B, K)                                               \
  X(A, B, K, pred, XRT_PRED, 1) X(A, B, K, s2, XRT_S2, 1)                     \
  X(A, B, K, s4, XRT_S4, 1) X(A, B, K, s8, XRT_S8, 1)                         \
  X(A, B, K, s16, XRT_S16, 2) X(A, B, K, s32, XRT_S32, 4)                     \
  X(A, B, K, s64, XRT_S64, 8) X(A, B, K, u2, XRT_U2, 1)                       \
  X(A, B, K, u4, XRT_U4, 1) X(A, B, K, u8, XRT_U8, 1)                         \
  X(A, B, K, u16, XRT_U16, 2) X(A, B, K, u32, XRT_U32, 4)                     \
  X(A, B, K, u64, XRT_U64, 8) X(A, B, K, f16, XRT_F16, 2)                     \
  X(A, B, K, bf16, XRT_BF16, 2) X(A, B, K, f32, XRT_F32, 4)                   \
  X(A, B, K, f64, XRT_F64, 8) X(A, B, K, c64, XRT_C64, 8)                     \
  X(A, B, K, c128, XRT_C128, 16)

/* Widening conversions run backwards so an in-place call stays safe. */
#define SIM_DEF_CV(S, SSZ, K, D, dcode, DSZ)                                  \
  static void sim_cv_##S##_##D(void *const *in, void *out, size_t n,          \
                               const void *ctx) {                             \
    const void *a = in[0];                                                    \
    (void)ctx;                                                                \
    if ((DSZ) > (SSZ)) {                                                      \
      for (size_t i = n; i-- > 0;) sim_st_##D##_##K(out, i, sim_ld_##S(a, i)); \
    } else {                                                                  \
      for (size_t i = 0; i < n; i++) sim_st_##D##_##K(out, i, sim_ld_##S(a, i)); \
    }                                                                         \
  }
#define SIM_CV_ROW(S, code, SSZ, K) SIM_CV_DSTS(SIM_DEF_CV, S, SSZ, K)
SIM_CV_SRCS(SIM_CV_ROW)

#define SIM_CV_TENT(S, scode, K, D, dcode, DSZ) [scode][dcode] = sim_cv_##S##_##D,
#define SIM_CV_TROW(S, code, SSZ, K) SIM_CV_DSTS(SIM_CV_TENT, S, code, K)
static const sim_ew_fn sim_cv_tab[XRT_DTYPE_COUNT][XRT_DTYPE_COUNT] = {
    SIM_CV_SRCS(SIM_CV_TROW)};

/* ---- bitcast_convert between element types of equal bit width ---- */

/* Sub-byte types keep their bits in the low part of a byte; a bitcast
 * re-extends them for the destination (s4 -8 = 0xF8 becomes u4 8). */
typedef struct sim_bc_sub {
  int w, sg;
} sim_bc_sub;
/* Indexed [width / 2 - 1][signed]: 2-, 4- and 6-bit types. */
static const sim_bc_sub sim_bc_subs[3][2] = {
    {{2, 0}, {2, 1}}, {{4, 0}, {4, 1}}, {{6, 0}, {6, 1}}};
static void sim_bc_rewrap(void *const *in, void *out, size_t n,
                          const void *ctx) {
  const sim_bc_sub *s = (const sim_bc_sub *)ctx;
  const uint8_t *a = (const uint8_t *)in[0];
  uint8_t *o = (uint8_t *)out;
  for (size_t i = 0; i < n; i++) o[i] = (uint8_t)sim_wrap(a[i], s->w, s->sg);
}

/* Bitcasts between different widths, n = result elements.  The value is the
 * bit string of the elements, element 0 in the lowest bits (little-endian),
 * sub-byte elements and i1 contributing their low bits only. */
typedef struct sim_bc_bits {
  int bt, br, rsg;  /* bits per input / result element; result signed */
  size_t st, sr;    /* bytes per input / result element */
} sim_bc_bits;
static void sim_bc_bit1(const sim_bc_bits *c, const uint8_t *a, uint8_t *o,
                        size_t j) {
  uint8_t acc[16] = {0}; /* the result element, gathered before writing */
  for (int k = 0; k < c->br; k++) {
    size_t bit = j * (size_t)c->br + (size_t)k, e = bit / (size_t)c->bt;
    int off = (int)(bit % (size_t)c->bt);
    if ((a[e * c->st + (size_t)off / 8] >> (off % 8)) & 1)
      acc[k / 8] |= (uint8_t)(1u << (k % 8));
  }
  if (c->br < 8) acc[0] = (uint8_t)sim_wrap(acc[0], c->br, c->rsg);
  memcpy(o + j * c->sr, acc, c->sr);
}
static void sim_bc_bits_run(void *const *in, void *out, size_t n,
                            const void *ctx) {
  const sim_bc_bits *c = (const sim_bc_bits *)ctx;
  /* results wider than the input bytes they consume go backwards (in place) */
  if (c->sr * (size_t)c->bt > (size_t)c->br * c->st) {
    for (size_t j = n; j-- > 0;) sim_bc_bit1(c, in[0], out, j);
  } else {
    for (size_t j = 0; j < n; j++) sim_bc_bit1(c, in[0], out, j);
  }
}
static void sim_bc_bytes(void *const *in, void *out, size_t n,
                         const void *ctx) {
  size_t esz = *(const size_t *)ctx; /* whole bytes: a little-endian copy */
  if (n && in[0] != out) memmove(out, in[0], n * esz);
}

/* ---- chlo.mulhi: the high half of the double-width product ---- */

static inline uint64_t sim_umulh64(uint64_t a, uint64_t b) {
  uint64_t al = a & 0xffffffffu, ah = a >> 32, bl = b & 0xffffffffu, bh = b >> 32;
  uint64_t ll = al * bl, lh = al * bh, hl = ah * bl, hh = ah * bh;
  uint64_t mid = (ll >> 32) + (lh & 0xffffffffu) + (hl & 0xffffffffu);
  return hh + (lh >> 32) + (hl >> 32) + (mid >> 32);
}
/* a and b are w-bit values, sign- or zero-extended to 64 bits. */
static inline uint64_t sim_mulhi(uint64_t a, uint64_t b, int w, int sg) {
  if (w < 64) { /* the product fits 64 bits (w <= 32) */
    if (!sg) return (a * b) >> w;
    return sim_sra(a * b, (uint64_t)w, 64); /* two's complement product */
  }
  uint64_t h = sim_umulh64(a, b);
  if (sg) { /* signed high half from the unsigned one */
    if (a >> 63) h -= b;
    if (b >> 63) h -= a;
  }
  return h;
}
#define SIM_I_MULHI(a, b, P, W, SG)                                           \
  sim_mulhi((SG) ? (uint64_t)(int64_t)(a) : (uint64_t)(a),                    \
            (SG) ? (uint64_t)(int64_t)(b) : (uint64_t)(b), (W), (SG))
SIM_INT_TYPES(SIM_DEF_IB, MULHI)

/* Kernel table indexed by [op][operand element type]; NULL = unsupported. */
#define SIM_TENT_I(OP, nm, code, T, P, W, SG) [SIM_EW_##OP][code] = sim_##OP##_##nm,
#define SIM_TENT_F(OP, nm, code, T, C, LD, ST, KEY) [SIM_EW_##OP][code] = sim_##OP##_##nm,
#define SIM_TENT_C(OP, nm, code, ET) [SIM_EW_##OP][code] = sim_##OP##_##nm,
#define SIM_TENT_P(OP, sym) [SIM_EW_##OP][XRT_PRED] = sim_##OP##_pred,
#define SIM_TROW_I(OP) SIM_INT_TYPES(SIM_TENT_I, OP)
#define SIM_TROW_F(OP) SIM_FLT_TYPES(SIM_TENT_F, OP)
#define SIM_TROW_C(OP) SIM_CPX_TYPES(SIM_TENT_C, OP)
static const sim_ew_fn sim_ew_tab[SIM_EW_NOPS][XRT_DTYPE_COUNT] = {
    SIM_INT_BIN_OPS(SIM_TROW_I) SIM_INT_UN_OPS(SIM_TROW_I)
    SIM_FLT_BIN_OPS(SIM_TROW_F) SIM_FLT_UN_OPS(SIM_TROW_F)
    SIM_FLT_BIN_DOPS(SIM_TROW_F) SIM_FLT_UN_DOPS(SIM_TROW_F)
    SIM_CPX_BIN_OPS(SIM_TROW_C) SIM_CPX_UN_OPS(SIM_TROW_C)
    SIM_PRED_BIN_OPS(SIM_TENT_P)
    [SIM_EW_NOT][XRT_PRED] = sim_NOT_pred,
    SIM_FLT_TYPES(SIM_TENT_F, ISFIN)
    SIM_CPX_TYPES(SIM_TENT_C, ABS)
    SIM_CPX_TYPES(SIM_TENT_C, REAL)
    SIM_CPX_TYPES(SIM_TENT_C, IMAG)
    [SIM_EW_CMK][XRT_F32] = sim_CMK_c64,
    [SIM_EW_CMK][XRT_F64] = sim_CMK_c128,
    SIM_INT_TYPES(SIM_TENT_I, MULHI)
};

/* Compare kernels by [totalorder][direction][element type]. */
enum { SIM_EQ, SIM_NE, SIM_GE, SIM_GT, SIM_LE, SIM_LT, SIM_NDIRS };
#define SIM_CENT_I(DIR, nm, code, T, P, W, SG) [0][SIM_##DIR][code] = sim_cmp_##DIR##_##nm,
#define SIM_CENT_F(DIR, nm, code, T, C, LD, ST, KEY)                          \
  [0][SIM_##DIR][code] = sim_cmp_##DIR##_##nm,                                \
  [1][SIM_##DIR][code] = sim_tot_##DIR##_##nm,
#define SIM_CENT_C(DIR, nm, code, ET) [0][SIM_##DIR][code] = sim_cmp_##DIR##_##nm,
#define SIM_CROW(DIR)                                                         \
  SIM_INT_TYPES(SIM_CENT_I, DIR)                                              \
  [0][SIM_##DIR][XRT_PRED] = sim_cmp_##DIR##_pred,                            \
  SIM_FLT_TYPES(SIM_CENT_F, DIR) SIM_CPX_TYPES(SIM_CENT_C, DIR)
static const sim_ew_fn sim_cmp_tab[2][SIM_NDIRS][XRT_DTYPE_COUNT] = {
    SIM_CMP_DIRS(SIM_CROW)};

SIM_PRIVATE int sim_ew_op_of(xrt_opcode code) {
  switch (code) {
#define SIM_EW_CASE(e, xo, ar, vk)                                            \
  case XRT_OP_##xo:                                                           \
    return SIM_EW_##e;
    SIM_EW_OPS(SIM_EW_CASE)
#undef SIM_EW_CASE
  default:
    return -1;
  }
}

/* True if the op code is one sim_ew_kernel handles. */
SIM_PRIVATE int sim_ew_handles(xrt_opcode code) {
  return sim_op(code)->ew_arity != 0;
}

SIM_PRIVATE enum sim_ew_class sim_ew_class(xrt_dtype t) {
  switch (t) {
  case XRT_PRED: return SIM_EWC_PRED;
  case XRT_S2: case XRT_S4: case XRT_S8: case XRT_S16: case XRT_S32:
  case XRT_S64: return SIM_EWC_SIGNED;
  case XRT_U2: case XRT_U4: case XRT_U8: case XRT_U16: case XRT_U32:
  case XRT_U64: return SIM_EWC_UNSIGNED;
  case XRT_F16: case XRT_BF16: case XRT_F32: case XRT_F64:
    return SIM_EWC_FLOAT;
  case XRT_C64: case XRT_C128: return SIM_EWC_COMPLEX;
  case XRT_F8E4M3FN: case XRT_F8E5M2: case XRT_F8E4M3FNUZ:
  case XRT_F8E5M2FNUZ: case XRT_F8E4M3B11FNUZ: case XRT_F8E3M4:
  case XRT_F8E4M3: case XRT_F8E8M0FNU: case XRT_F6E2M3FN: case XRT_F6E3M2FN:
  case XRT_F4E2M1FN: return SIM_EWC_MINIFLOAT;
  default: return SIM_EWC_NONE;
  }
}

/* Bit width of an element type (the MLIR one: 64 for c64). */
SIM_PRIVATE int sim_ew_bits(xrt_dtype t) {
  static const int8_t bits[XRT_DTYPE_COUNT] = {
      [XRT_PRED] = 1, [XRT_S8] = 8, [XRT_S16] = 16, [XRT_S32] = 32,
      [XRT_S64] = 64, [XRT_U8] = 8, [XRT_U16] = 16, [XRT_U32] = 32,
      [XRT_U64] = 64, [XRT_F16] = 16, [XRT_BF16] = 16, [XRT_F32] = 32,
      [XRT_F64] = 64, [XRT_C64] = 64, [XRT_S2] = 2, [XRT_S4] = 4,
      [XRT_U2] = 2, [XRT_U4] = 4, [XRT_F8E4M3FN] = 8, [XRT_F8E5M2] = 8,
      [XRT_F8E4M3FNUZ] = 8, [XRT_F8E5M2FNUZ] = 8, [XRT_F8E4M3B11FNUZ] = 8,
      [XRT_F8E3M4] = 8, [XRT_F8E4M3] = 8, [XRT_F8E8M0FNU] = 8,
      [XRT_F6E2M3FN] = 6, [XRT_F6E3M2FN] = 6, [XRT_F4E2M1FN] = 4};
  if (t == XRT_C128) return 128; /* does not fit the int8_t table */
  return (unsigned)t < XRT_DTYPE_COUNT ? bits[t] : 0;
}
/* Bytes per element in buffers. */
SIM_PRIVATE size_t sim_ew_size(xrt_dtype t) {
  int b = sim_ew_bits(t);
  return b <= 8 ? (b > 0) : (size_t)b / 8;
}

/* The core's opcode names, dtype classes and shape spelling, repeated here
 * so that the plugin built as a shared object calls nothing in xrt.c. */
SIM_PRIVATE const char *sim_opcode_name(xrt_opcode code) {
  static const char *const names[XRT_OP_COUNT] = {
      [XRT_OP_INVALID] = "invalid",
#define SIM_OPCODE_NAME(e, s) [XRT_OP_##e] = s,
      XRT_OPCODES(SIM_OPCODE_NAME)
#undef SIM_OPCODE_NAME
  };
  return (unsigned)code < XRT_OP_COUNT ? names[code] : "invalid";
}
SIM_PRIVATE int sim_dtype_is_float(xrt_dtype t) {
  enum sim_ew_class c = sim_ew_class(t);
  return c == SIM_EWC_FLOAT || c == SIM_EWC_MINIFLOAT;
}
SIM_PRIVATE int sim_dtype_is_complex(xrt_dtype t) {
  return sim_ew_class(t) == SIM_EWC_COMPLEX;
}
/* "tensor<2x3xf32>" into buf (cap > 0), truncated if it does not fit. */
static void sim_shape_format(const xrt_shape *s, char *buf, size_t cap) {
  size_t n = (size_t)snprintf(buf, cap, "tensor<");
  for (int32_t i = 0; i < s->rank && i < XRT_MAX_RANK && n < cap; i++)
    n += (size_t)snprintf(buf + n, cap - n, "%lldx", (long long)s->dims[i]);
  if (n < cap) snprintf(buf + n, cap - n, "%s>", sim_dtype_name(s->dtype));
}

/* Writes "<op> is not implemented for <type>[ -> <type>]" and returns NULL. */
static sim_ew_fn sim_ew_unsup(const xrt_ir_func *f, const xrt_ir_op *op,
                              int32_t v, int32_t r, const char *why_extra,
                              char *why, size_t whycap) {
  char a[128] = "", b[128] = "";
  sim_shape_format(&f->value_types[v].shape, a, sizeof a);
  if (r >= 0) sim_shape_format(&f->value_types[r].shape, b, sizeof b);
  if (why && whycap)
    snprintf(why, whycap, "%s is not implemented for %s%s%s%s",
             op->name ? op->name : sim_opcode_name(op->code), a,
             r >= 0 ? " -> " : "", b, why_extra ? why_extra : "");
  return NULL;
}

/* A kernel context could not be allocated: *ctx_owned = -1 tells the
 * caller (out of memory, not unsupported). */
static sim_ew_fn sim_ew_oom(int *ctx_owned, char *why, size_t whycap) {
  *ctx_owned = -1;
  if (why && whycap)
    snprintf(why, whycap, "out of host memory for an elementwise kernel's "
             "context");
  return NULL;
}

/* ---- the f8/f6/f4 families ---- */

/* Every op decodes through a 256-entry table (exact in double), computes in
 * double and rounds once to the result type, as the interpreter's APFloat
 * arithmetic and mapWithUpcastToDouble do.  Values a format cannot hold
 * follow APFloat's convert: formats with infinities overflow to them, the
 * FN/FNUZ and E8M0 formats (NaN but no infinity) give NaN, and the FP6/FP4
 * formats (neither) saturate to their largest value; NaN becomes +0 there. */
typedef struct sim_mf {
  xrt_dtype t, r;   /* operand and result element types */
  int dir;          /* compare: SIM_EQ..SIM_LT, +8 for TOTALORDER */
  uint8_t tmask;    /* the operand's bits within its byte */
  double dec[256];  /* operand bit pattern -> value */
} sim_mf;

static uint8_t sim_mf_enc(xrt_dtype t, double d) {
  xrt_minifloat_format f;
  if (!xrt_minifloat_format_of(t, &f)) return 0;
  unsigned mw = (unsigned)(f.ebits + f.mbits), all = (1u << mw) - 1u;
  unsigned neg = d < 0 && f.kind != XRT_MINIFLOAT_E8M0 ? 1u << mw : 0u;
  if (d != d) { /* NaN; FP6/FP4 have none */
    int32_t r = xrt_minifloat_from_f64(t, d);
    return (uint8_t)(r >= 0 ? r : 0);
  }
  if (d - d != 0) { /* infinity */
    switch (f.kind) {
    case XRT_MINIFLOAT_IEEE: return (uint8_t)(neg | (all >> f.mbits << f.mbits));
    case XRT_MINIFLOAT_FN: return (uint8_t)(neg | all);
    case XRT_MINIFLOAT_FNUZ: return (uint8_t)(1u << mw);
    case XRT_MINIFLOAT_E8M0: return 0xff;
    default: return (uint8_t)(neg | all); /* saturate */
    }
  }
  int32_t r = xrt_minifloat_from_f64(t, d);
  return (uint8_t)(r >= 0 ? r : (int32_t)(neg | all)); /* FP6/FP4 saturate */
}

static inline double sim_mf_dec1(xrt_dtype t, uint8_t b) {
  xrt_minifloat_format f;
  if (!xrt_minifloat_format_of(t, &f)) return 0;
  unsigned w = f.kind == XRT_MINIFLOAT_E8M0 ? 8u : 1u + f.ebits + f.mbits;
  return xrt_minifloat_to_f64(t, (uint8_t)(b & ((1u << w) - 1u)));
}

/* totalOrder key of a sign-magnitude pattern of width w (E8M0: unsigned). */
static inline unsigned sim_mf_key(const sim_mf *m, uint8_t b) {
  unsigned v = b & m->tmask, h = (m->tmask + 1u) >> 1;
  if (m->t == XRT_F8E8M0FNU) return v;
  return (v & h) ? m->tmask - v : v | h; /* negatives reversed below */
}

#define SIM_DEF_MB(OP)                                                        \
  static void sim_##OP##_mf(void *const *in, void *out, size_t n,             \
                            const void *ctx) {                                \
    const sim_mf *m = (const sim_mf *)ctx;                                    \
    const uint8_t *a = (const uint8_t *)in[0], *b = (const uint8_t *)in[1];   \
    uint8_t *o = (uint8_t *)out;                                              \
    for (size_t i = 0; i < n; i++)                                            \
      o[i] = sim_mf_enc(m->r, (double)SIM_F_##OP(m->dec[a[i]], m->dec[b[i]])); \
  }
#define SIM_DEF_MU(OP)                                                        \
  static void sim_##OP##_mf(void *const *in, void *out, size_t n,             \
                            const void *ctx) {                                \
    const sim_mf *m = (const sim_mf *)ctx;                                    \
    const uint8_t *a = (const uint8_t *)in[0];                                \
    uint8_t *o = (uint8_t *)out;                                              \
    for (size_t i = 0; i < n; i++)                                            \
      o[i] = sim_mf_enc(m->r, (double)SIM_F_##OP(m->dec[a[i]]));              \
  }
SIM_FLT_BIN_OPS(SIM_DEF_MB)
SIM_FLT_BIN_DOPS(SIM_DEF_MB)
SIM_FLT_UN_OPS(SIM_DEF_MU)
SIM_FLT_UN_DOPS(SIM_DEF_MU)
SIM_DEF_MU(REAL)
SIM_DEF_MU(IMAG)

static void sim_ISFIN_mf(void *const *in, void *out, size_t n,
                         const void *ctx) {
  const sim_mf *m = (const sim_mf *)ctx;
  const uint8_t *a = (const uint8_t *)in[0];
  uint8_t *o = (uint8_t *)out;
  for (size_t i = 0; i < n; i++) o[i] = (uint8_t)(isfinite(m->dec[a[i]]) != 0);
}

static void sim_cmp_mf(void *const *in, void *out, size_t n,
                       const void *ctx) {
  const sim_mf *m = (const sim_mf *)ctx;
  const uint8_t *a = (const uint8_t *)in[0], *b = (const uint8_t *)in[1];
  uint8_t *o = (uint8_t *)out;
  for (size_t i = 0; i < n; i++) {
    int r = 0;
    if (m->dir >= 8) { /* TOTALORDER on the bit patterns */
      unsigned x = sim_mf_key(m, a[i]), y = sim_mf_key(m, b[i]);
      switch (m->dir - 8) {
      case SIM_EQ: r = x == y; break;
      case SIM_NE: r = x != y; break;
      case SIM_GE: r = x >= y; break;
      case SIM_GT: r = x > y; break;
      case SIM_LE: r = x <= y; break;
      default: r = x < y; break;
      }
    } else {
      double x = m->dec[a[i]], y = m->dec[b[i]];
      switch (m->dir) {
      case SIM_EQ: r = x == y; break;
      case SIM_NE: r = x != y; break;
      case SIM_GE: r = x >= y; break;
      case SIM_GT: r = x > y; break;
      case SIM_LE: r = x <= y; break;
      default: r = x < y; break;
      }
    }
    o[i] = (uint8_t)r;
  }
}

/* Conversions: a small float to any other type goes through its exact
 * double value; anything to a small float through a double rounded to odd
 * (integers) or exact (floats), so the final rounding is the only one. */
static inline double sim_k2d_i(int64_t v) { return sim_i2d_odd(v); }
static inline double sim_k2d_u(uint64_t v) { return sim_u2d_odd(v); }
static inline double sim_k2d_f(double v) { return v; }
static inline double sim_k2d_c(sim_c2 v) { return v.re; }

#define SIM_DEF_CV_TOMF(S, code, SSZ, K)                                      \
  static void sim_cv_##S##_mf(void *const *in, void *out, size_t n,           \
                              const void *ctx) {                              \
    const sim_mf *m = (const sim_mf *)ctx;                                    \
    uint8_t *o = (uint8_t *)out;                                              \
    for (size_t i = 0; i < n; i++)                                            \
      o[i] = sim_mf_enc(m->r, sim_k2d_##K(sim_ld_##S(in[0], i)));            \
  }
SIM_CV_SRCS(SIM_DEF_CV_TOMF)

#define SIM_DEF_CV_FROMMF(A, B, K, D, dcode, DSZ)                             \
  static void sim_cv_mf_##D(void *const *in, void *out, size_t n,             \
                            const void *ctx) {                                \
    const sim_mf *m = (const sim_mf *)ctx;                                    \
    const uint8_t *a = (const uint8_t *)in[0];                                \
    for (size_t i = n; i-- > 0;) /* never narrower: backwards */             \
      sim_st_##D##_f(out, i, m->dec[a[i]]);                                   \
  }
SIM_CV_DSTS(SIM_DEF_CV_FROMMF, 0, 0, 0)

static void sim_cv_mf_mf(void *const *in, void *out, size_t n,
                         const void *ctx) {
  const sim_mf *m = (const sim_mf *)ctx;
  const uint8_t *a = (const uint8_t *)in[0];
  uint8_t *o = (uint8_t *)out;
  for (size_t i = 0; i < n; i++) o[i] = sim_mf_enc(m->r, m->dec[a[i]]);
}

#define SIM_CV_TOMF_ENT(S, code, SSZ, K) [code] = sim_cv_##S##_mf,
static const sim_ew_fn sim_cv_tomf_tab[XRT_DTYPE_COUNT] = {
    SIM_CV_SRCS(SIM_CV_TOMF_ENT)};
#define SIM_CV_FROMMF_ENT(A, B, K, D, dcode, DSZ) [dcode] = sim_cv_mf_##D,
static const sim_ew_fn sim_cv_frommf_tab[XRT_DTYPE_COUNT] = {
    SIM_CV_DSTS(SIM_CV_FROMMF_ENT, 0, 0, 0)};

static inline int sim_is_mf(xrt_dtype t) {
  return t >= XRT_F8E4M3FN && t <= XRT_F4E2M1FN;
}

/* A context for small-float kernels, from al (the caller frees it). */
static sim_mf *sim_mf_new(const xrt_allocator *al, xrt_dtype t, xrt_dtype r) {
  sim_mf *m = (sim_mf *)al->alloc(al->self, sizeof *m);
  if (!m) return NULL;
  m->t = t, m->r = r, m->dir = 0, m->tmask = 0xff;
  xrt_minifloat_format f;
  if (xrt_minifloat_format_of(t, &f) && f.kind != XRT_MINIFLOAT_E8M0)
    m->tmask = (uint8_t)((2u << (f.ebits + f.mbits)) - 1u);
  for (int b = 0; b < 256; b++)
    m->dec[b] = sim_is_mf(t) ? sim_mf_dec1(t, (uint8_t)b) : 0;
  return m;
}

/* ---- reduce_precision ---- */

/* The interpreter's bit recipe on the element's pattern: round the mantissa
 * to nearest even at the new width, then flush exponents beyond the new
 * range to signed zero or infinity; NaN stays itself (becomes +inf when no
 * mantissa bits are left). */
typedef struct sim_rp {
  xrt_dtype t;
  int width, sm, se;  /* bit width, source mantissa / exponent bits */
  int eb, mb;         /* exponent_bits, mantissa_bits */
  uint64_t inf;       /* +inf pattern (NaN for formats without infinity) */
} sim_rp;

static uint64_t sim_rp_bits(const sim_rp *c, uint64_t x, int isnan_) {
  uint64_t orig = x, wmask = SIM_M64(c->width);
  if (c->mb < c->sm) {
    int sh = c->sm - c->mb;
    uint64_t last = (uint64_t)1 << sh;
    uint64_t bias = ((x & last) >> sh) + ((last >> 1) - 1);
    x = ((x + bias) & ~(last - 1)) & wmask;
  }
  if (c->eb < c->se) {
    uint64_t sign = (uint64_t)1 << (c->width - 1);
    uint64_t emask = (((uint64_t)1 << c->se) - 1) << c->sm;
    uint64_t ebias = ((uint64_t)1 << (c->se - 1)) - 1;
    uint64_t rbias = ((uint64_t)1 << (c->eb - 1)) - 1;
    uint64_t xe = x & emask;
    if (xe > (ebias + rbias) << c->sm) x = (x & sign) | emask;
    else if (xe <= (ebias - rbias) << c->sm) x &= sign;
  }
  if (isnan_) return c->mb > 0 ? orig : c->inf;
  return x;
}

static void sim_rp_run(void *const *in, void *out, size_t n,
                       const void *ctx) {
  const sim_rp *c = (const sim_rp *)ctx;
  switch (c->t) {
  case XRT_F32: {
    const uint32_t *a = (const uint32_t *)in[0];
    uint32_t *o = (uint32_t *)out;
    for (size_t i = 0; i < n; i++)
      o[i] = (uint32_t)sim_rp_bits(c, a[i], (a[i] & 0x7fffffffu) > 0x7f800000u);
    break;
  }
  case XRT_F64: {
    const uint64_t *a = (const uint64_t *)in[0];
    uint64_t *o = (uint64_t *)out;
    for (size_t i = 0; i < n; i++)
      o[i] = sim_rp_bits(c, a[i], (a[i] << 1) > ((uint64_t)0x7ff << 53));
    break;
  }
  case XRT_F16: case XRT_BF16: {
    const uint16_t *a = (const uint16_t *)in[0];
    uint16_t *o = (uint16_t *)out;
    uint16_t inf = c->t == XRT_F16 ? 0x7c00u : 0x7f80u;
    for (size_t i = 0; i < n; i++)
      o[i] = (uint16_t)sim_rp_bits(c, a[i], (a[i] & 0x7fffu) > inf);
    break;
  }
  default: { /* small floats */
    const uint8_t *a = (const uint8_t *)in[0];
    uint8_t *o = (uint8_t *)out;
    for (size_t i = 0; i < n; i++) {
      uint8_t b = (uint8_t)(a[i] & SIM_M64(c->width));
      o[i] = (uint8_t)sim_rp_bits(c, b, isnan(sim_mf_dec1(c->t, b)));
    }
    break;
  }
  }
}

static sim_ew_fn sim_ew_reduce_precision(const xrt_allocator *al,
                                         const xrt_ir_func *f,
                                         const xrt_ir_op *op,
                                         const void **ctx_out, int *ctx_owned,
                                         char *why, size_t whycap) {
  xrt_dtype t = f->value_types[op->operands[0]].shape.dtype;
  const xrt_ir_attr *e = xrt_ir_op_attr(op, "exponent_bits");
  const xrt_ir_attr *m = xrt_ir_op_attr(op, "mantissa_bits");
  static const int8_t mant[XRT_DTYPE_COUNT] = {
      [XRT_F16] = 10, [XRT_BF16] = 7, [XRT_F32] = 23, [XRT_F64] = 52};
  int width = sim_ew_bits(t), sm = (unsigned)t < XRT_DTYPE_COUNT ? mant[t] : 0;
  xrt_minifloat_format mf;
  if (xrt_minifloat_format_of(t, &mf)) sm = mf.mbits;
  else if (!sm) width = 0;
  if (!width || f->value_types[op->results[0]].shape.dtype != t)
    return sim_ew_unsup(f, op, op->operands[0], op->results[0], "", why, whycap);
  if (!e || e->kind != XRT_ATTR_INT || !m || m->kind != XRT_ATTR_INT ||
      e->i < 1 || m->i < 0) {
    if (why && whycap)
      snprintf(why, whycap, "%s needs exponent_bits >= 1 and mantissa_bits "
               ">= 0", op->name ? op->name : "stablehlo.reduce_precision");
    return NULL;
  }
  sim_rp *c = (sim_rp *)al->alloc(al->self, sizeof *c);
  if (!c) return sim_ew_oom(ctx_owned, why, whycap);
  c->t = t, c->width = width, c->sm = sm, c->se = width - sm - 1;
  c->eb = e->i > 64 ? 64 : (int)e->i, c->mb = m->i > 64 ? 64 : (int)m->i;
  if (sim_is_mf(t)) c->inf = sim_mf_enc(t, (double)INFINITY);
  else c->inf = (((uint64_t)1 << c->se) - 1) << sm;
  *ctx_out = c;
  *ctx_owned = 1;
  return sim_rp_run;
}

/* Rounds d to the float type t (the expressed type of a computation). */
static double sim_q_rnd(xrt_dtype t, double d) {
  switch (t) {
  case XRT_F32: return (double)(float)d;
  case XRT_F16: return xrt_f16_to_f32(xrt_f64_to_f16(d));
  case XRT_BF16: return xrt_bf16_to_f32(xrt_f64_to_bf16(d));
  case XRT_F64: return d;
  default: return sim_is_mf(t) ? sim_mf_dec1(t, sim_mf_enc(t, d)) : d;
  }
}

/* Element i of a buffer of type t as a double (floats) or integer. */
static double sim_q_ldf(xrt_dtype t, const void *p, size_t i) {
  switch (t) {
  case XRT_F32: return sim_ld_f32(p, i);
  case XRT_F64: return sim_ld_f64(p, i);
  case XRT_F16: return sim_ld_f16(p, i);
  case XRT_BF16: return sim_ld_bf16(p, i);
  default: return sim_mf_dec1(t, ((const uint8_t *)p)[i]);
  }
}
static int64_t sim_q_ldi(xrt_dtype t, const void *p, size_t i) {
  switch (t) {
  case XRT_S2: case XRT_S4: case XRT_S8: return sim_ld_s8(p, i);
  case XRT_S16: return sim_ld_s16(p, i);
  case XRT_S32: return sim_ld_s32(p, i);
  case XRT_S64: return sim_ld_s64(p, i);
  case XRT_U2: case XRT_U4: case XRT_U8: return (int64_t)sim_ld_u8(p, i);
  case XRT_U16: return (int64_t)sim_ld_u16(p, i);
  case XRT_U32: return (int64_t)sim_ld_u32(p, i);
  default: return (int64_t)sim_ld_u64(p, i);
  }
}
static void sim_q_sti(xrt_dtype t, void *p, size_t i, int64_t v) {
  switch (t) {
  case XRT_S2: sim_st_s2_i(p, i, v); break;
  case XRT_S4: sim_st_s4_i(p, i, v); break;
  case XRT_S8: sim_st_s8_i(p, i, v); break;
  case XRT_S16: sim_st_s16_i(p, i, v); break;
  case XRT_S32: sim_st_s32_i(p, i, v); break;
  case XRT_S64: sim_st_s64_i(p, i, v); break;
  case XRT_U2: sim_st_u2_i(p, i, v); break;
  case XRT_U4: sim_st_u4_i(p, i, v); break;
  case XRT_U8: sim_st_u8_i(p, i, v); break;
  case XRT_U16: sim_st_u16_i(p, i, v); break;
  case XRT_U32: sim_st_u32_i(p, i, v); break;
  default: sim_st_u64_i(p, i, v); break;
  }
}
static void sim_q_stf(xrt_dtype t, void *p, size_t i, double v) {
  switch (t) {
  case XRT_F32: sim_st_f32_f(p, i, v); break;
  case XRT_F64: sim_st_f64_f(p, i, v); break;
  case XRT_F16: sim_st_f16_f(p, i, v); break;
  case XRT_BF16: sim_st_bf16_f(p, i, v); break;
  case XRT_PRED: sim_st_pred_f(p, i, v); break;
  default: ((uint8_t *)p)[i] = sim_mf_enc(t, v); break;
  }
}

static inline size_t sim_q_axis(const sim_qv *q, size_t i) {
  return q->dim > 1 ? (i / q->stride) % q->dim : 0;
}

/* The value of element i in the expressed type. */
static double sim_q_load(const sim_qv *q, const void *p, size_t i) {
  if (!q->quant) return sim_q_ldf(q->dt, p, i);
  size_t k = sim_q_axis(q, i);
  /* wraps (no UB) only for zero points the verifier rejects */
  int64_t d = (int64_t)((uint64_t)sim_q_ldi(q->dt, p, i) - (uint64_t)q->zps[k]);
  return sim_q_rnd(q->ex, (double)d * sim_q_rnd(q->ex, q->scales[k]));
}

static void sim_q_store(const sim_qv *q, void *p, size_t i, double x) {
  if (!q->quant) {
    sim_q_stf(q->dt, p, i, x);
    return;
  }
  size_t k = sim_q_axis(q, i);
  double s = sim_q_rnd(q->ex, q->scales[k]);
  double y = sim_q_rnd(q->ex, sim_q_rnd(q->ex, x / s) + (double)q->zps[k]);
  double lo = (double)q->smin, hi = (double)q->smax;
  y = y != y ? 0 : y < lo ? lo : y > hi ? hi : y; /* NaN: zero, as convert */
  sim_q_sti(q->dt, p, i, (int64_t)sim_reven(y));
}

static double sim_q_apply(int e, double x, double y) {
  switch (e) {
#define SIM_Q_B(OP) case SIM_EW_##OP: return (double)SIM_F_##OP(x, y);
#define SIM_Q_U(OP) case SIM_EW_##OP: return (double)SIM_F_##OP(x);
    SIM_FLT_BIN_OPS(SIM_Q_B) SIM_FLT_BIN_DOPS(SIM_Q_B)
    SIM_FLT_UN_OPS(SIM_Q_U) SIM_FLT_UN_DOPS(SIM_Q_U)
#undef SIM_Q_B
#undef SIM_Q_U
  default: return x; /* uniform_quantize / uniform_dequantize */
  }
}

static int sim_q_cmp(int dir, double x, double y) {
  switch (dir) {
  case SIM_EQ: return x == y;
  case SIM_NE: return x != y;
  case SIM_GE: return x >= y;
  case SIM_GT: return x > y;
  case SIM_LE: return x <= y;
  default: return x < y;
  }
}

static void sim_q_one(const sim_q *c, void *const *in, void *out, size_t i) {
  double x = sim_q_load(&c->v[0], in[0], i);
  double y = c->nin > 1 ? sim_q_load(&c->v[1], in[1], i) : 0;
  if (c->e == SIM_Q_COMPARE) {
    ((uint8_t *)out)[i] = (uint8_t)sim_q_cmp(c->dir, x, y);
    return;
  }
  double r = sim_q_apply(c->e, x, y);
  const sim_qv *res = &c->v[c->nin];
  sim_q_store(res, out, i, sim_q_rnd(res->quant ? res->ex : res->dt, r));
}

SIM_PRIVATE void sim_q_run(void *const *in, void *out, size_t n, const void *ctx) {
  const sim_q *c = (const sim_q *)ctx;
  if (c->back) {
    for (size_t i = n; i-- > 0;) sim_q_one(c, in, out, i);
  } else {
    for (size_t i = 0; i < n; i++) sim_q_one(c, in, out, i);
  }
}

static int sim_q_is_storage(xrt_dtype t) {
  enum sim_ew_class c = sim_ew_class(t);
  return c == SIM_EWC_SIGNED || c == SIM_EWC_UNSIGNED;
}

/* Describes value v for the quantized kernel; 0 if its type is unusable. */
SIM_PRIVATE int sim_q_value(const xrt_ir_type *ty, sim_qv *q) {
  memset(q, 0, sizeof *q);
  q->dt = q->ex = ty->shape.dtype;
  q->dim = 1, q->stride = 1;
  const xrt_ir_quant *u = ty->quant;
  if (!u) return sim_dtype_is_float(q->dt) || q->dt == XRT_PRED;
  if (!sim_q_is_storage(u->storage) || u->storage != q->dt ||
      !sim_dtype_is_float(u->expressed) || u->num_scales < 1 || !u->scales ||
      !u->zero_points)
    return 0;
  q->quant = 1, q->ex = u->expressed;
  q->smin = u->storage_min, q->smax = u->storage_max;
  q->scales = u->scales, q->zps = u->zero_points;
  if (u->axis >= 0) {
    if (u->axis >= ty->shape.rank || ty->shape.dims[u->axis] != u->num_scales)
      return 0;
    q->dim = (size_t)u->num_scales;
    for (int32_t d = u->axis + 1; d < ty->shape.rank; d++)
      q->stride *= (size_t)ty->shape.dims[d];
  }
  return 1;
}

/* Kernel for uniform_quantize / uniform_dequantize and for float ops with
 * quantized operands or results. */
static sim_ew_fn sim_ew_quant(const xrt_allocator *al, const xrt_ir_func *f,
                              const xrt_ir_op *op, int e, int arity,
                              const void **ctx_out, int *ctx_owned, char *why,
                              size_t whycap) {
  sim_q c;
  memset(&c, 0, sizeof c);
  c.nin = arity;
  c.e = op->code == XRT_OP_UNIFORM_QUANTIZE     ? SIM_Q_QUANTIZE
        : op->code == XRT_OP_UNIFORM_DEQUANTIZE ? SIM_Q_DEQUANTIZE
        : op->code == XRT_OP_COMPARE            ? SIM_Q_COMPARE
                                                : e;
  int known = c.e <= SIM_Q_QUANTIZE; /* reduce_precision, convert: no */
#define SIM_Q_K(OP) known |= e == SIM_EW_##OP;
  SIM_FLT_BIN_OPS(SIM_Q_K) SIM_FLT_BIN_DOPS(SIM_Q_K)
  SIM_FLT_UN_OPS(SIM_Q_K) SIM_FLT_UN_DOPS(SIM_Q_K)
#undef SIM_Q_K
  if (!known)
    return sim_ew_unsup(f, op, op->operands[0], op->results[0],
                        " (quantized)", why, whycap);
  size_t rsz = sim_ew_size(f->value_types[op->results[0]].shape.dtype);
  for (int k = 0; k <= arity; k++) {
    int32_t v = k < arity ? op->operands[k] : op->results[0];
    if (!sim_q_value(&f->value_types[v], &c.v[k]))
      return sim_ew_unsup(f, op, v, -1, " (quantized)", why, whycap);
    if (k < arity && sim_ew_size(c.v[k].dt) < rsz) c.back = 1;
  }
  const sim_qv *r = &c.v[arity];
  if (c.e == SIM_Q_COMPARE) {
    static const char *const dirs[SIM_NDIRS] = {"EQ", "NE", "GE",
                                                "GT", "LE", "LT"};
    const xrt_ir_attr *d = xrt_ir_op_attr(op, "comparison_direction");
    c.dir = -1;
    for (int k = 0; d && d->s && k < SIM_NDIRS; k++)
      if (!strcmp(d->s, dirs[k])) c.dir = k;
    if (c.dir < 0 || r->dt != XRT_PRED || r->quant)
      return sim_ew_unsup(f, op, op->operands[0], op->results[0], "", why,
                          whycap);
  } else if (r->dt == XRT_PRED || (c.e == SIM_Q_QUANTIZE && !r->quant) ||
             (c.e == SIM_Q_DEQUANTIZE && (r->quant || !c.v[0].quant))) {
    return sim_ew_unsup(f, op, op->operands[0], op->results[0], "", why,
                        whycap);
  }
  for (int k = 0; k < arity; k++)
    if (c.v[k].dt == XRT_PRED)
      return sim_ew_unsup(f, op, op->operands[k], -1, "", why, whycap);
  sim_q *m = (sim_q *)al->alloc(al->self, sizeof *m);
  if (!m) return sim_ew_oom(ctx_owned, why, whycap);
  *m = c;
  *ctx_out = m;
  *ctx_owned = 1;
  return sim_q_run;
}

/* The compare_type each element class takes (floats: TOTALORDER too). */
static const char *const sim_cmp_types[SIM_EWC_COUNT] = {
    [SIM_EWC_PRED] = "UNSIGNED", [SIM_EWC_SIGNED] = "SIGNED",
    [SIM_EWC_UNSIGNED] = "UNSIGNED", [SIM_EWC_FLOAT] = "FLOAT",
    [SIM_EWC_MINIFLOAT] = "FLOAT", [SIM_EWC_COMPLEX] = "FLOAT"};

/* Compare: direction and compare_type attributes pick the kernel. */
static sim_ew_fn sim_ew_compare(const xrt_allocator *al, const xrt_ir_func *f,
                                const xrt_ir_op *op, const void **ctx_out,
                                int *ctx_owned, char *why, size_t whycap) {
  static const char *const dirs[SIM_NDIRS] = {"EQ", "NE", "GE",
                                              "GT", "LE", "LT"};
  xrt_dtype t = f->value_types[op->operands[0]].shape.dtype;
  xrt_dtype r = f->value_types[op->results[0]].shape.dtype;
  const xrt_ir_attr *d = xrt_ir_op_attr(op, "comparison_direction");
  const xrt_ir_attr *ct = xrt_ir_op_attr(op, "compare_type");
  enum sim_ew_class cls = sim_ew_class(t);
  int dir = -1, tot = 0;
  if (f->value_types[op->operands[1]].shape.dtype != t || r != XRT_PRED)
    return sim_ew_unsup(f, op, op->operands[0], op->results[0], "", why, whycap);
  for (int k = 0; d && d->s && k < SIM_NDIRS; k++)
    if (!strcmp(d->s, dirs[k])) dir = k;
  if (dir < 0)
    return sim_ew_unsup(f, op, op->operands[0], -1,
                        " (bad comparison_direction)", why, whycap);
  if (ct && ct->s) { /* the type must fit the elements (spec (C3)) */
    const char *s = ct->s;
    tot = !strcmp(s, "TOTALORDER");
    int ok = (tot && sim_dtype_is_float(t)) ||
             (sim_cmp_types[cls] && !strcmp(s, sim_cmp_types[cls]));
    if (!ok)
      return sim_ew_unsup(f, op, op->operands[0], -1,
                          " with this compare_type", why, whycap);
  }
  if (cls == SIM_EWC_MINIFLOAT) {
    sim_mf *m = sim_mf_new(al, t, r);
    if (!m) return sim_ew_oom(ctx_owned, why, whycap);
    m->dir = dir + (tot ? 8 : 0);
    *ctx_out = m;
    *ctx_owned = 1;
    return sim_cmp_mf;
  }
  sim_ew_fn fn = cls != SIM_EWC_NONE ? sim_cmp_tab[tot][dir][t] : NULL;
  return fn ? fn : sim_ew_unsup(f, op, op->operands[0], -1, "", why, whycap);
}

/* bitcast_convert: n counts result elements (the operand has n * bits(r) /
 * bits(t) of them).  Whole-byte types copy bytes, assuming a little-endian
 * host like the rest of the simulator. */
static sim_ew_fn sim_ew_bitcast(const xrt_allocator *al, const xrt_ir_func *f,
                                const xrt_ir_op *op, const void **ctx_out,
                                int *ctx_owned, char *why, size_t whycap) {
  xrt_dtype t = f->value_types[op->operands[0]].shape.dtype;
  xrt_dtype r = f->value_types[op->results[0]].shape.dtype;
  int bt = sim_ew_bits(t), br = sim_ew_bits(r);
  if (!bt || !br || (bt % br && br % bt))
    return sim_ew_unsup(f, op, op->operands[0], op->results[0], "", why, whycap);
  if (bt == br && (bt >= 8 || bt == 1)) {
    *ctx_out = &sim_esz[sim_ew_size(t)];
    return sim_copy;
  }
  if (bt == br) { /* 2-, 4- and 6-bit types: re-extend the low bits */
    *ctx_out = &sim_bc_subs[bt / 2 - 1][r == XRT_S2 || r == XRT_S4];
    return sim_bc_rewrap;
  }
  if (bt % 8 == 0 && br % 8 == 0) {
    *ctx_out = &sim_esz[sim_ew_size(r)];
    return sim_bc_bytes;
  }
  sim_bc_bits *c = (sim_bc_bits *)al->alloc(al->self, sizeof *c);
  if (!c) return sim_ew_oom(ctx_owned, why, whycap);
  c->bt = bt, c->br = br, c->rsg = r == XRT_S2 || r == XRT_S4;
  c->st = sim_ew_size(t), c->sr = sim_ew_size(r);
  *ctx_out = c;
  *ctx_owned = 1;
  return sim_bc_bits_run;
}

/* real/imag of a real element type: a copy and zeros. */
static sim_ew_fn sim_ew_real_imag(int e, xrt_dtype t, const void **ctx_out) {
  if (sim_ew_class(t) != SIM_EWC_FLOAT) return NULL;
  *ctx_out = &sim_esz[sim_ew_size(t)];
  return e == SIM_EW_REAL ? sim_copy : sim_zero;
}

/* The element type a result must have for an op whose operand has type t. */
static xrt_dtype sim_ew_result_type(int e, xrt_dtype t) {
  if (e == SIM_EW_ISFIN) return XRT_PRED;
  if (e == SIM_EW_CMK) return t == XRT_F32 ? XRT_C64 : XRT_C128;
  if ((e == SIM_EW_ABS || e == SIM_EW_REAL || e == SIM_EW_IMAG) &&
      sim_dtype_is_complex(t))
    return t == XRT_C64 ? XRT_F32 : XRT_F64;
  return t;
}

/* Small-float kernels by op (NULL: the op does not apply to floats). */
static const sim_ew_fn sim_mf_tab[SIM_EW_NOPS] = {
#define SIM_MF_ENT(OP) [SIM_EW_##OP] = sim_##OP##_mf,
    SIM_FLT_BIN_OPS(SIM_MF_ENT) SIM_FLT_BIN_DOPS(SIM_MF_ENT)
    SIM_FLT_UN_OPS(SIM_MF_ENT) SIM_FLT_UN_DOPS(SIM_MF_ENT)
    SIM_MF_ENT(REAL) SIM_MF_ENT(IMAG) SIM_MF_ENT(ISFIN)
#undef SIM_MF_ENT
};

/* A kernel with a sim_mf context: operand type t, result type r. */
static sim_ew_fn sim_ew_mf(const xrt_allocator *al, const xrt_ir_func *f,
                           const xrt_ir_op *op, sim_ew_fn fn, xrt_dtype t,
                           xrt_dtype r, const void **ctx_out, int *ctx_owned,
                           char *why, size_t whycap) {
  if (!fn)
    return sim_ew_unsup(f, op, op->operands[0], op->results[0], "", why, whycap);
  sim_mf *m = sim_mf_new(al, t, r);
  if (!m) return sim_ew_oom(ctx_owned, why, whycap);
  *ctx_out = m;
  *ctx_owned = 1;
  return fn;
}

/* convert between any two element types (small floats included). */
static sim_ew_fn sim_ew_convert(const xrt_allocator *al, const xrt_ir_func *f,
                                const xrt_ir_op *op, const void **ctx_out,
                                int *ctx_owned, char *why, size_t whycap) {
  xrt_dtype t = f->value_types[op->operands[0]].shape.dtype;
  xrt_dtype r = f->value_types[op->results[0]].shape.dtype;
  enum sim_ew_class ct = sim_ew_class(t), cr = sim_ew_class(r);
  if (ct == SIM_EWC_NONE || cr == SIM_EWC_NONE)
    return sim_ew_unsup(f, op, op->operands[0], op->results[0], "", why, whycap);
  int mt = ct == SIM_EWC_MINIFLOAT, mr = cr == SIM_EWC_MINIFLOAT;
  if (mt || mr) {
    sim_ew_fn fn = mt && mr ? sim_cv_mf_mf
                   : mt     ? sim_cv_frommf_tab[r]
                            : sim_cv_tomf_tab[t];
    return sim_ew_mf(al, f, op, fn, t, r, ctx_out, ctx_owned, why, whycap);
  }
  sim_ew_fn fn = sim_cv_tab[t][r];
  return fn ? fn : sim_ew_unsup(f, op, op->operands[0], op->results[0], "", why, whycap);
}

/* Kernel for an elementwise op whose operands all have the result's shape
 * (n elements each; for a bitcast_convert that changes the element width, n
 * counts result elements).  ctx_out receives a pointer (may be NULL) passed
 * back as ctx on every call; *ctx_owned is 1 if the caller must free it
 * with al (it came from al), -1 (and NULL returned) when al failed.
 * Returns NULL and writes a reason into why if unsupported.  Quantized
 * operands or results (and uniform_quantize/dequantize) go to sim_ew_quant,
 * which needs the result's shape to find per-axis parameters. */
SIM_PRIVATE sim_ew_fn sim_ew_kernel(const xrt_allocator *al, const xrt_ir_func *f,
                               const xrt_ir_op *op, const void **ctx_out,
                               int *ctx_owned, char *why, size_t whycap) {
  *ctx_out = NULL;
  *ctx_owned = 0;
  int e = sim_ew_op_of(op->code);
  int handled = sim_ew_handles(op->code);
  /* (the message below gives other ops one operand) */
  int arity = handled ? sim_op(op->code)->ew_arity : 1;
  if (!handled || op->num_operands != arity || op->num_results != 1) {
    if (why && whycap)
      snprintf(why, whycap, "%s is not an elementwise op with %d operand(s)",
               op->name ? op->name : sim_opcode_name(op->code), arity);
    return NULL;
  }
  int quant = op->code == XRT_OP_UNIFORM_QUANTIZE ||
              op->code == XRT_OP_UNIFORM_DEQUANTIZE;
  for (int k = 0; k <= arity; k++) {
    int32_t v = k < arity ? op->operands[k] : op->results[0];
    const xrt_ir_type *ty = &f->value_types[v];
    if (ty->kind != XRT_TYPE_TENSOR)
      return sim_ew_unsup(f, op, v, -1, "", why, whycap);
    if (ty->quant) quant = 1;
  }
  xrt_dtype t = f->value_types[op->operands[0]].shape.dtype;
  xrt_dtype r = f->value_types[op->results[0]].shape.dtype;
  /* a bitcast between a quantized type and its storage type is a copy */
  if (op->code == XRT_OP_BITCAST_CONVERT)
    return sim_ew_bitcast(al, f, op, ctx_out, ctx_owned, why, whycap);
  if (quant)
    return sim_ew_quant(al, f, op, e, arity, ctx_out, ctx_owned, why, whycap);
  if (op->code == XRT_OP_COMPARE)
    return sim_ew_compare(al, f, op, ctx_out, ctx_owned, why, whycap);
  if (op->code == XRT_OP_CONVERT)
    return sim_ew_convert(al, f, op, ctx_out, ctx_owned, why, whycap);
  if (op->code == XRT_OP_REDUCE_PRECISION)
    return sim_ew_reduce_precision(al, f, op, ctx_out, ctx_owned, why,
                                   whycap);
  if (arity == 2 && f->value_types[op->operands[1]].shape.dtype != t)
    return sim_ew_unsup(f, op, op->operands[1], op->results[0],
                        " (operand types differ)", why, whycap);
  if (sim_ew_class(t) == SIM_EWC_NONE || r != sim_ew_result_type(e, t))
    return sim_ew_unsup(f, op, op->operands[0], op->results[0], "", why, whycap);
  if (sim_ew_class(t) == SIM_EWC_MINIFLOAT)
    return sim_ew_mf(al, f, op, sim_mf_tab[e], t, r, ctx_out, ctx_owned, why,
                     whycap);
  sim_ew_fn fn = sim_ew_tab[e][t];
  if (!fn && (e == SIM_EW_REAL || e == SIM_EW_IMAG))
    fn = sim_ew_real_imag(e, t, ctx_out);
  return fn ? fn : sim_ew_unsup(f, op, op->operands[0], -1, "", why, whycap);
}
