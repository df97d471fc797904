/*
 * test_kernels.h - what the simulator's kernel tests (test_kernel_*.c)
 * share: element types described (MLIR name, storage size, width,
 * signedness, kind), elements written and read in buffer storage format,
 * f8E4M3FN by its definition, the reference of the float elementwise ops
 * and of the compare directions, and a reference convolution
 * (test_ops_linalg.c, test_gemm.c).  Every reference here is computed
 * from the definitions (libm in double), not by xrt.
 */
#ifndef XRT_TEST_KERNELS_H
#define XRT_TEST_KERNELS_H

#include "test_util.h"

/* Kinds of element types. */
enum { TU_K_INT, TU_K_FLOAT, TU_K_COMPLEX, TU_K_PRED, TU_K_F8 };

typedef struct tu_dtinfo {
  xrt_dtype dt;
  const char *mlir; /* the element type as MLIR writes it */
  size_t size;      /* bytes per element in buffers */
  int bits;         /* width (of the value; sub-byte integers are less) */
  int is_signed;
  int kind;         /* TU_K_* */
} tu_dtinfo;

/* The description of element type t; fails the test for a type the
 * kernel tests do not use. */
static inline const tu_dtinfo *tu_dt(xrt_dtype t) {
#define TU_DT_(t, m, size, bits, sg, k) {XRT_##t, m, size, bits, sg, TU_K_##k}
  static const tu_dtinfo all[] = {
      TU_DT_(F32, "f32", 4, 32, 1, FLOAT),  TU_DT_(F64, "f64", 8, 64, 1, FLOAT),
      TU_DT_(F16, "f16", 2, 16, 1, FLOAT),
      TU_DT_(BF16, "bf16", 2, 16, 1, FLOAT),
      TU_DT_(S2, "i2", 1, 2, 1, INT),       TU_DT_(S4, "i4", 1, 4, 1, INT),
      TU_DT_(S8, "i8", 1, 8, 1, INT),       TU_DT_(S16, "i16", 2, 16, 1, INT),
      TU_DT_(S32, "i32", 4, 32, 1, INT),    TU_DT_(S64, "i64", 8, 64, 1, INT),
      TU_DT_(U2, "ui2", 1, 2, 0, INT),      TU_DT_(U4, "ui4", 1, 4, 0, INT),
      TU_DT_(U8, "ui8", 1, 8, 0, INT),      TU_DT_(U16, "ui16", 2, 16, 0, INT),
      TU_DT_(U32, "ui32", 4, 32, 0, INT),   TU_DT_(U64, "ui64", 8, 64, 0, INT),
      TU_DT_(C64, "complex<f32>", 8, 64, 1, COMPLEX),
      TU_DT_(C128, "complex<f64>", 16, 128, 1, COMPLEX),
      TU_DT_(PRED, "i1", 1, 1, 0, PRED),
      TU_DT_(F8E4M3FN, "f8E4M3FN", 1, 8, 1, F8),
  };
#undef TU_DT_
  for (size_t i = 0; i < TU_COUNT(all); i++)
    if (all[i].dt == t) return &all[i];
  fail_msg("no dtype %d", (int)t);
  return NULL;
}

/* v wrapped to the width of integer type d (sign-extended when signed). */
static inline uint64_t tu_wrap(const tu_dtinfo *d, uint64_t v) {
  if (d->bits >= 64) return v;
  uint64_t m = (1ull << d->bits) - 1;
  v &= m;
  if (d->is_signed && (v >> (d->bits - 1))) v |= ~m;
  return v;
}

/* ---- f8E4M3FN by its definition: sign, 4 exponent bits of bias 7 (0:
 * subnormal), 3 mantissa bits; no infinity, all ones is NaN, max 448 ---- */

/* v rounded to f8E4M3FN (to nearest even; beyond 448: 448). */
static inline double tu_e4m3_round(double v) {
  if (v == 0 || v != v) return v;
  double a = fabs(v), r;
  if (a < 0x1p-6) {
    r = nearbyint(a * 512) / 512; /* subnormals: steps of 2^-9 */
  } else {
    int ex;
    double fr = frexp(a, &ex); /* a = fr 2^ex, fr in [0.5, 1) */
    r = ldexp(nearbyint(ldexp(fr, 4)), ex - 4);
  }
  if (r > 448) r = 448;
  return v < 0 ? -r : r;
}

/* The bits of v rounded to f8E4M3FN. */
static inline uint8_t tu_e4m3_bits(double v) {
  v = tu_e4m3_round(v);
  uint8_t sign = signbit(v) ? 0x80 : 0;
  double a = fabs(v);
  if (a < 0x1p-6) return (uint8_t)(sign | (uint8_t)(a * 512));
  int ex;
  double fr = frexp(a, &ex);
  int m = (int)ldexp(fr, 4) - 8, e = ex - 1 + 7;
  return (uint8_t)(sign | e << 3 | m);
}

/* The value of the f8E4M3FN bits b. */
static inline double tu_e4m3_value(uint8_t b) {
  int e = (b >> 3) & 15, m = b & 7;
  if ((b & 0x7f) == 0x7f) return NAN;
  double a = e ? ldexp(8 + m, e - 7 - 3) : ldexp(m, -9);
  return b & 0x80 ? -a : a;
}

/* x rounded to float type t (f64 and other types: x). */
static inline double tu_round_to(xrt_dtype t, double x) {
  switch (t) {
  case XRT_F32: return (float)x;
  case XRT_F16: return xrt_f16_to_f32(xrt_f64_to_f16(x));
  case XRT_BF16: return xrt_bf16_to_f32(xrt_f64_to_bf16(x));
  case XRT_F8E4M3FN: return tu_e4m3_round(x);
  default: return x;
  }
}

/* ---- elements in buffers ---- */

/* Writes v, wrapped to the width of integer type d, as element i. */
static inline void tu_put_int(const tu_dtinfo *d, void *buf, int64_t i,
                              uint64_t v) {
  char *p = (char *)buf + (size_t)i * d->size;
  v = tu_wrap(d, v);
  switch (d->size) {
  case 1: { uint8_t x = (uint8_t)v; memcpy(p, &x, 1); return; }
  case 2: { uint16_t x = (uint16_t)v; memcpy(p, &x, 2); return; }
  case 4: { uint32_t x = (uint32_t)v; memcpy(p, &x, 4); return; }
  default: memcpy(p, &v, 8); return;
  }
}

/* Writes re (and im, of complex types) as element i of a buffer of type
 * d: floats rounded once, integers wrapped, pred as 0 or 1. */
static inline void tu_put(const tu_dtinfo *d, void *buf, int64_t i, double re,
                          double im) {
  char *p = (char *)buf + (size_t)i * d->size;
  switch (d->dt) {
  case XRT_F32: { float f = (float)re; memcpy(p, &f, 4); return; }
  case XRT_F64: memcpy(p, &re, 8); return;
  case XRT_F16: { uint16_t h = xrt_f64_to_f16(re); memcpy(p, &h, 2); return; }
  case XRT_BF16: { uint16_t h = xrt_f64_to_bf16(re); memcpy(p, &h, 2); return; }
  case XRT_C64: {
    float f[2] = {(float)re, (float)im};
    memcpy(p, f, 8);
    return;
  }
  case XRT_C128: { double f[2] = {re, im}; memcpy(p, f, 16); return; }
  case XRT_PRED: *(uint8_t *)p = re != 0; return;
  case XRT_F8E4M3FN: *(uint8_t *)p = tu_e4m3_bits(re); return;
  default: tu_put_int(d, buf, i, (uint64_t)(int64_t)re); return;
  }
}

/* Float element i (f16, bf16 and f8E4M3FN widen exactly). */
static inline double tu_get_f(const tu_dtinfo *d, const void *buf,
                              int64_t i) {
  const char *p = (const char *)buf + (size_t)i * d->size;
  uint16_t h;
  switch (d->dt) {
  case XRT_F32: { float f; memcpy(&f, p, 4); return f; }
  case XRT_F64: { double x; memcpy(&x, p, 8); return x; }
  case XRT_F16: memcpy(&h, p, 2); return xrt_f16_to_f32(h);
  case XRT_F8E4M3FN: return tu_e4m3_value(*(const uint8_t *)p);
  default: memcpy(&h, p, 2); return xrt_bf16_to_f32(h);
  }
}

/* Integer element i as stored: its bytes, sign-extended when d is signed
 * (not wrapped to a sub-byte width). */
static inline uint64_t tu_get_int(const tu_dtinfo *d, const void *buf,
                                  int64_t i) {
  const char *p = (const char *)buf + (size_t)i * d->size;
  switch (d->size) {
  case 1: {
    uint8_t u;
    memcpy(&u, p, 1);
    return d->is_signed ? (uint64_t)(int64_t)(int8_t)u : u;
  }
  case 2: {
    uint16_t u;
    memcpy(&u, p, 2);
    return d->is_signed ? (uint64_t)(int64_t)(int16_t)u : u;
  }
  case 4: {
    uint32_t u;
    memcpy(&u, p, 4);
    return d->is_signed ? (uint64_t)(int64_t)(int32_t)u : u;
  }
  default: {
    uint64_t u;
    memcpy(&u, p, 8);
    return u;
  }
  }
}

/* ---- the float elementwise ops ---- */

enum {
  TU_F_ADD, TU_F_SUB, TU_F_MUL, TU_F_DIV, TU_F_REM, TU_F_MAX, TU_F_MIN,
  TU_F_POW, TU_F_ATAN2, TU_F_NEG, TU_F_ABS, TU_F_SIGN, TU_F_SQRT,
  TU_F_FLOOR, TU_F_CEIL, TU_F_RAFZ, TU_F_REVEN, TU_F_EXP, TU_F_LOG,
  TU_F_RSQRT, TU_F_TANH, TU_F_LOGISTIC, TU_F_SIN, TU_F_COS, TU_F_TAN,
  TU_F_EXPM1, TU_F_LOG1P, TU_F_CBRT, TU_F_COUNT
};

typedef struct tu_fop_info {
  const char *name; /* stablehlo.<name> */
  int binary, transcendental;
} tu_fop_info;

static inline const tu_fop_info *tu_fop(int op) {
  static const tu_fop_info ops[TU_F_COUNT] = {
      [TU_F_ADD] = {"add", 1, 0},          [TU_F_SUB] = {"subtract", 1, 0},
      [TU_F_MUL] = {"multiply", 1, 0},     [TU_F_DIV] = {"divide", 1, 0},
      [TU_F_REM] = {"remainder", 1, 0},    [TU_F_MAX] = {"maximum", 1, 0},
      [TU_F_MIN] = {"minimum", 1, 0},      [TU_F_POW] = {"power", 1, 1},
      [TU_F_ATAN2] = {"atan2", 1, 1},      [TU_F_NEG] = {"negate", 0, 0},
      [TU_F_ABS] = {"abs", 0, 0},          [TU_F_SIGN] = {"sign", 0, 0},
      [TU_F_SQRT] = {"sqrt", 0, 0},        [TU_F_FLOOR] = {"floor", 0, 0},
      [TU_F_CEIL] = {"ceil", 0, 0},
      [TU_F_RAFZ] = {"round_nearest_afz", 0, 0},
      [TU_F_REVEN] = {"round_nearest_even", 0, 0},
      [TU_F_EXP] = {"exponential", 0, 1},  [TU_F_LOG] = {"log", 0, 1},
      [TU_F_RSQRT] = {"rsqrt", 0, 1},      [TU_F_TANH] = {"tanh", 0, 1},
      [TU_F_LOGISTIC] = {"logistic", 0, 1}, [TU_F_SIN] = {"sine", 0, 1},
      [TU_F_COS] = {"cosine", 0, 1},       [TU_F_TAN] = {"tan", 0, 1},
      [TU_F_EXPM1] = {"exponential_minus_one", 0, 1},
      [TU_F_LOG1P] = {"log_plus_one", 0, 1}, [TU_F_CBRT] = {"cbrt", 0, 1},
  };
  return &ops[op];
}

/* IEEE maximum / minimum: NaN wins, -0 < +0. */
static inline double tu_ref_maxmin(double x, double y, int is_max) {
  if (x != x) return x;
  if (y != y) return y;
  if (x == y) return (signbit(x) != 0) == is_max ? y : x;
  return (x > y) == is_max ? x : y;
}

/* Round half to even; NaN and infinities are themselves, a zero result
 * keeps the sign of x. */
static inline double tu_ref_round_even(double x) {
  if (!isfinite(x)) return x;
  double f = floor(x), d = x - f, r;
  r = d > 0.5 ? f + 1 : d < 0.5 ? f : fmod(f, 2) == 0 ? f : f + 1;
  return r == 0 ? copysign(0.0, x) : r;
}

/* The float op (TU_F_*) on x (and y) in double. */
static inline double tu_ref_fop(int op, double x, double y) {
  switch (op) {
  case TU_F_ADD: return x + y;
  case TU_F_SUB: return x - y;
  case TU_F_MUL: return x * y;
  case TU_F_DIV: return x / y;
  case TU_F_REM: return fmod(x, y);
  case TU_F_MAX: return tu_ref_maxmin(x, y, 1);
  case TU_F_MIN: return tu_ref_maxmin(x, y, 0);
  case TU_F_POW: return pow(x, y);
  case TU_F_ATAN2: return atan2(x, y);
  case TU_F_NEG: return -x;
  case TU_F_ABS: return fabs(x);
  case TU_F_SIGN: return x > 0 ? 1 : x < 0 ? -1 : x;
  case TU_F_SQRT: return sqrt(x);
  case TU_F_FLOOR: return floor(x);
  case TU_F_CEIL: return ceil(x);
  case TU_F_RAFZ: return round(x);
  case TU_F_REVEN: return tu_ref_round_even(x);
  case TU_F_EXP: return exp(x);
  case TU_F_LOG: return log(x);
  case TU_F_RSQRT: return 1 / sqrt(x);
  case TU_F_TANH: return tanh(x);
  case TU_F_LOGISTIC: return 1 / (1 + exp(-x));
  case TU_F_SIN: return sin(x);
  case TU_F_COS: return cos(x);
  case TU_F_TAN: return tan(x);
  case TU_F_EXPM1: return expm1(x);
  case TU_F_LOG1P: return log1p(x);
  default: return cbrt(x);
  }
}

/* Compare direction dir (0..5: EQ, NE, GE, GT, LE, LT) of operands that
 * compare less (lt) or equal (eq). */
static inline int tu_cmp_dir(int dir, int lt, int eq) {
  switch (dir) {
  case 0: return eq;
  case 1: return !eq;
  case 2: return !lt;
  case 3: return !lt && !eq;
  case 4: return lt || eq;
  default: return lt;
  }
}

/* ---- a reference convolution (test_ops_linalg.c, test_gemm.c) ---- */

/* Canonical layouts: x[N][Cin][sp...], w[O][I][k...], y[N/bg][O][out...];
 * up to two spatial dimensions (pass size 1 for the missing one). */
typedef struct tu_conv {
  int64_t N, Cin, O, I, in[2], k[2], s[2], lo[2], hi[2], ld[2], rd[2];
  int rev[2];
  int64_t fg, bg, out[2];
} tu_conv;

/* Sets c->out and, when P is not NULL, the padded input sizes P. */
static inline void tu_conv_out(tu_conv *c, int64_t *P) {
  for (int d = 0; d < 2; d++) {
    int64_t p = c->lo[d] + (c->in[d] - 1) * c->ld[d] + 1 + c->hi[d];
    c->out[d] = (p - ((c->k[d] - 1) * c->rd[d] + 1)) / c->s[d] + 1;
    if (P) P[d] = p;
  }
}

/* y = conv(x, w) in canonical layouts (sets c->out). */
static inline void tu_conv_ref(tu_conv *c, const double *x, const double *w,
                               double *y) {
  int64_t P[2];
  tu_conv_out(c, P);
  /* The padded, dilated input, built element by element. */
  double *xp = (double *)calloc((size_t)(c->N * c->Cin * P[0] * P[1] + 1),
                                sizeof *xp);
  assert_non_null(xp);
  for (int64_t n = 0; n < c->N; n++)
    for (int64_t ch = 0; ch < c->Cin; ch++)
      for (int64_t i0 = 0; i0 < c->in[0]; i0++)
        for (int64_t i1 = 0; i1 < c->in[1]; i1++) {
          int64_t p0 = c->lo[0] + i0 * c->ld[0], p1 = c->lo[1] + i1 * c->ld[1];
          if (p0 < 0 || p0 >= P[0] || p1 < 0 || p1 >= P[1]) continue;
          xp[((n * c->Cin + ch) * P[0] + p0) * P[1] + p1] =
              x[((n * c->Cin + ch) * c->in[0] + i0) * c->in[1] + i1];
        }
  int64_t NB = c->N / c->bg;
  for (int64_t n = 0; n < NB; n++)
    for (int64_t o = 0; o < c->O; o++)
      for (int64_t q0 = 0; q0 < c->out[0]; q0++)
        for (int64_t q1 = 0; q1 < c->out[1]; q1++) {
          int64_t nb = o / (c->O / c->bg) * NB + n;
          int64_t f0 = o / (c->O / c->fg) * c->I;
          double sum = 0;
          for (int64_t k0 = 0; k0 < c->k[0]; k0++)
            for (int64_t k1 = 0; k1 < c->k[1]; k1++)
              for (int64_t i = 0; i < c->I; i++) {
                int64_t kk0 = c->rev[0] ? c->k[0] - 1 - k0 : k0;
                int64_t kk1 = c->rev[1] ? c->k[1] - 1 - k1 : k1;
                int64_t p0 = q0 * c->s[0] + kk0 * c->rd[0];
                int64_t p1 = q1 * c->s[1] + kk1 * c->rd[1];
                sum += xp[((nb * c->Cin + f0 + i) * P[0] + p0) * P[1] + p1] *
                       w[((o * c->I + i) * c->k[0] + k0) * c->k[1] + k1];
              }
          y[((n * c->O + o) * c->out[0] + q0) * c->out[1] + q1] = sum;
        }
  free(xp);
}

#endif /* XRT_TEST_KERNELS_H */
