/*
 * src/sim/vmath.c - vectorized exponential, tanh and logistic for f32.
 * Part of the simulated device; MIT licensed, see LICENSE.
 */
#include "internal.h"
/* ======================================================================
 * Vectorized elementary functions (f32 exp, tanh, logistic)
 *
 * The simulator computes transcendentals in double and rounds once to the
 * element type (internal.h, SIM_F_EXP): for f32 the result is then the
 * correctly rounded value except when the exact one lies within libm's
 * error of a rounding boundary.  Calling libm per element costs most of a
 * softmax or a GELU, so for f32 these three compute the same double value
 * with straight-line arithmetic on eight lanes at once (GCC/clang vector
 * extensions: one AVX-512 register of doubles), compiled three times like
 * fusion's kernels and picked once at run time:
 *
 *   exp(x) = 2^k exp(r), k = round(x / ln 2), r = x - k ln 2 (two-part
 *   ln 2, exact for |k| <= 2^11), exp(r) by its Taylor series to r^13
 *   (|r| <= 0.347: truncation under 5e-18), 2^k by building the exponent
 *   field.  x is clamped to [-708, 709] first, which changes no f32
 *   result (exp(709) overflows f32 and exp(-708) underflows it to 0).
 *   expm1(y) = 2^k expm1(r) + (2^k - 1) with the same reduction and
 *   expm1(r) by its series (k = 0, r = y below 0.346: relative accuracy
 *   near 0).  tanh(x) = sign(x) e / (e + 2), e = expm1(2|x|),
 *   |x| clamped to 20 (tanh(20) is 1 in double).  logistic(x) =
 *   1 / (1 + exp(-x)), the formula of the scalar path.
 *
 * The double results are within a few double ulps (about 1e-15 relative)
 * of the exact ones, so after rounding to f32 they equal the scalar path's
 * except for inputs within 1e-15 of an f32 rounding boundary, where they
 * may differ by one f32 ulp: test_sim_vmath counts them over 2^20 inputs
 * spread over every exponent (none seen).  No FMA contraction (gcc's ISO
 * C mode), so the three builds agree bit for bit.  NaN in, NaN out.
 * Other compilers keep the scalar path.
 * ==================================================================== */

#if defined(__GNUC__) && (defined(__x86_64__) || defined(__i386__))
#define SIM_VM_X86 1
#define SIM_VM_T_avx2 __attribute__((target("avx2,fma")))
#define SIM_VM_T_avx512 __attribute__((target("avx512f")))
#endif
#define SIM_VM_T_port

#if defined(__GNUC__)
/* Eight lanes (GCC/clang vector extensions): one AVX-512 register of
 * doubles, two AVX2 ones, four SSE2 ones, as the target gives.  The
 * helpers are macros, so no function passes a vector by value. */
typedef float sim_vm_f8 __attribute__((vector_size(32)));
typedef int32_t sim_vm_i8 __attribute__((vector_size(32)));
typedef double sim_vm_d8 __attribute__((vector_size(64)));
typedef int64_t sim_vm_l8 __attribute__((vector_size(64)));

#define SIM_VM_LOG2E 1.4426950408889634
#define SIM_VM_LN2HI 6.93147180369123816490e-01 /* 32 bits: k ln2hi exact */
#define SIM_VM_LN2LO 1.90821492927058770002e-10
#define SIM_VM_SHIFTER 6755399441055744.0 /* 1.5 * 2^52: rounds to integer */

/* c ? a : b, lane by lane, for a mask c of comparisons (-1 or 0). */
#define SIM_VM_SEL_D(c, a, b)                                                 \
  ((sim_vm_d8)(((sim_vm_l8)(a) & (c)) | ((sim_vm_l8)(b) & ~(c))))
#define SIM_VM_SEL_F(c, a, b)                                                 \
  ((sim_vm_f8)(((sim_vm_i8)(a) & (c)) | ((sim_vm_i8)(b) & ~(c))))
#define SIM_VM_CLAMP(x, lo, hi)                                               \
  do {                                                                        \
    sim_vm_d8 lo_ = (sim_vm_d8){0} + (lo), hi_ = (sim_vm_d8){0} + (hi);       \
    x = SIM_VM_SEL_D((x) < lo_, lo_, x);                                      \
    x = SIM_VM_SEL_D((x) > hi_, hi_, x);                                      \
  } while (0)

/* y = exp(x) for x in [-708, 709] (clamped by the caller). */
#define SIM_VM_EXP(y, x)                                                      \
  do {                                                                        \
    sim_vm_d8 kd_ = (x) * SIM_VM_LOG2E + SIM_VM_SHIFTER;                      \
    sim_vm_l8 kb_ = (sim_vm_l8)kd_; /* low bits: k, two's complement */       \
    kd_ = kd_ - SIM_VM_SHIFTER;                                               \
    sim_vm_d8 r_ = ((x) - kd_ * SIM_VM_LN2HI) - kd_ * SIM_VM_LN2LO;           \
    sim_vm_d8 p_ = r_ * (1.0 / 6227020800.0) + 1.0 / 479001600.0;             \
    p_ = p_ * r_ + 1.0 / 39916800.0;                                          \
    p_ = p_ * r_ + 1.0 / 3628800.0;                                           \
    p_ = p_ * r_ + 1.0 / 362880.0;                                            \
    p_ = p_ * r_ + 1.0 / 40320.0;                                             \
    p_ = p_ * r_ + 1.0 / 5040.0;                                              \
    p_ = p_ * r_ + 1.0 / 720.0;                                               \
    p_ = p_ * r_ + 1.0 / 120.0;                                               \
    p_ = p_ * r_ + 1.0 / 24.0;                                                \
    p_ = p_ * r_ + 1.0 / 6.0;                                                 \
    p_ = p_ * r_ + 0.5;                                                       \
    p_ = p_ * r_ + 1.0;                                                       \
    p_ = p_ * r_ + 1.0;                                                       \
    y = p_ * (sim_vm_d8)((kb_ + 1023) << 52);                                 \
  } while (0)

/* y = expm1(x) for x in [0, 40]: x = k ln 2 + r as for exp, |r| <= 0.347,
 * expm1(r) by its series to r^14 (truncation under 1e-19 relative), then
 * expm1(x) = 2^k expm1(r) + (2^k - 1).  For x < 0.346, k = 0 and r = x:
 * the series itself, with its relative accuracy near 0; for k >= 1 the
 * two terms add with at most a 1.5-fold loss (expm1(r) >= -0.293), so the
 * result stays within a few double ulps like exp's. */
#define SIM_VM_EXPM1(y, x)                                                    \
  do {                                                                        \
    sim_vm_d8 kd_ = (x) * SIM_VM_LOG2E + SIM_VM_SHIFTER;                      \
    sim_vm_l8 kb_ = (sim_vm_l8)kd_; /* low bits: k */                         \
    kd_ = kd_ - SIM_VM_SHIFTER;                                               \
    sim_vm_d8 r_ = ((x) - kd_ * SIM_VM_LN2HI) - kd_ * SIM_VM_LN2LO;           \
    sim_vm_d8 q_ = r_ * (1.0 / 87178291200.0) + 1.0 / 6227020800.0;           \
    q_ = q_ * r_ + 1.0 / 479001600.0;                                         \
    q_ = q_ * r_ + 1.0 / 39916800.0;                                          \
    q_ = q_ * r_ + 1.0 / 3628800.0;                                           \
    q_ = q_ * r_ + 1.0 / 362880.0;                                            \
    q_ = q_ * r_ + 1.0 / 40320.0;                                             \
    q_ = q_ * r_ + 1.0 / 5040.0;                                              \
    q_ = q_ * r_ + 1.0 / 720.0;                                               \
    q_ = q_ * r_ + 1.0 / 120.0;                                               \
    q_ = q_ * r_ + 1.0 / 24.0;                                                \
    q_ = q_ * r_ + 1.0 / 6.0;                                                 \
    q_ = q_ * r_ + 0.5;                                                       \
    sim_vm_d8 p_ = r_ + (r_ * r_) * q_;                                       \
    sim_vm_d8 s_ = (sim_vm_d8)((kb_ + 1023) << 52); /* 2^k */                 \
    y = s_ * p_ + (s_ - 1.0);                                                 \
  } while (0)

/* Eight f32 results of x (doubles of the eight inputs xf). */
#define SIM_VM_BODY_exp(r, x, xf)                                             \
  do {                                                                        \
    sim_vm_d8 e_;                                                             \
    SIM_VM_CLAMP(x, -708.0, 709.0);                                           \
    SIM_VM_EXP(e_, x);                                                        \
    r = __builtin_convertvector(e_, sim_vm_f8);                               \
  } while (0)
#define SIM_VM_BODY_tanh(r, x, xf)                                            \
  do {                                                                        \
    sim_vm_d8 a_ = (sim_vm_d8)((sim_vm_l8)(x) & INT64_MAX), e_;               \
    SIM_VM_CLAMP(a_, 0.0, 20.0);                                              \
    a_ = a_ * 2.0;                                                            \
    SIM_VM_EXPM1(e_, a_);                                                     \
    r = __builtin_convertvector(e_ / (e_ + 2.0), sim_vm_f8);                  \
    /* the sign of x (tanh(-0) = -0) */                                      \
    r = (sim_vm_f8)((sim_vm_i8)r | ((sim_vm_i8)(xf) & INT32_MIN));            \
  } while (0)
#define SIM_VM_BODY_logistic(r, x, xf)                                        \
  do {                                                                        \
    sim_vm_d8 e_ = -(x);                                                      \
    SIM_VM_CLAMP(e_, -708.0, 709.0);                                          \
    SIM_VM_EXP(e_, e_);                                                       \
    r = __builtin_convertvector(1.0 / (1.0 + e_), sim_vm_f8);                 \
  } while (0)

/* Eight lanes at a time (the tail through a zero-padded block); a NaN
 * input gives itself. */
#define SIM_VM_KERNEL(ISA, NAME)                                              \
  static SIM_VM_T_##ISA void sim_vm_##NAME##_##ISA(                           \
      void *const *in, void *out, size_t n, const void *ctx) {                \
    const float *a = (const float *)in[0];                                    \
    float *o = (float *)out;                                                  \
    (void)ctx;                                                                \
    size_t i = 0;                                                             \
    for (; i + 16 <= n; i += 16) { /* two independent chains */               \
      sim_vm_f8 xf, yf, r, q;                                                 \
      memcpy(&xf, a + i, sizeof xf);                                          \
      memcpy(&yf, a + i + 8, sizeof yf);                                      \
      sim_vm_d8 x = __builtin_convertvector(xf, sim_vm_d8);                   \
      sim_vm_d8 y = __builtin_convertvector(yf, sim_vm_d8);                   \
      SIM_VM_BODY_##NAME(r, x, xf);                                           \
      SIM_VM_BODY_##NAME(q, y, yf);                                           \
      r = SIM_VM_SEL_F(xf != xf, xf, r);                                      \
      q = SIM_VM_SEL_F(yf != yf, yf, q);                                      \
      memcpy(o + i, &r, sizeof r);                                            \
      memcpy(o + i + 8, &q, sizeof q);                                        \
    }                                                                         \
    for (; i + 8 <= n; i += 8) {                                              \
      sim_vm_f8 xf, r;                                                        \
      memcpy(&xf, a + i, sizeof xf);                                          \
      sim_vm_d8 x = __builtin_convertvector(xf, sim_vm_d8);                   \
      SIM_VM_BODY_##NAME(r, x, xf);                                           \
      r = SIM_VM_SEL_F(xf != xf, xf, r);                                      \
      memcpy(o + i, &r, sizeof r);                                            \
    }                                                                         \
    if (i < n) {                                                              \
      sim_vm_f8 xf = {0}, r;                                                  \
      memcpy(&xf, a + i, (n - i) * sizeof(float));                           \
      sim_vm_d8 x = __builtin_convertvector(xf, sim_vm_d8);                   \
      SIM_VM_BODY_##NAME(r, x, xf);                                           \
      r = SIM_VM_SEL_F(xf != xf, xf, r);                                      \
      memcpy(o + i, &r, (n - i) * sizeof(float));                             \
    }                                                                         \
  }
#define SIM_VM_KERNELS(ISA)                                                   \
  SIM_VM_KERNEL(ISA, exp) SIM_VM_KERNEL(ISA, tanh) SIM_VM_KERNEL(ISA, logistic)

SIM_VM_KERNELS(port)
#ifdef SIM_VM_X86
SIM_VM_KERNELS(avx2)
SIM_VM_KERNELS(avx512)
#define SIM_VM_PICK(name)                                                     \
  (level == 2 ? name##_avx512 : level == 1 ? name##_avx2 : name##_port)
#else
#define SIM_VM_PICK(name) name##_port
#endif
#endif /* __GNUC__ */

SIM_PRIVATE sim_ew_fn sim_vm_kernel(sim_ew_fn fn, int level) {
  (void)level;
#if defined(__GNUC__)
  if (fn == sim_ew_plain(SIM_EW_EXP, XRT_F32)) return SIM_VM_PICK(sim_vm_exp);
  if (fn == sim_ew_plain(SIM_EW_TANH, XRT_F32))
    return SIM_VM_PICK(sim_vm_tanh);
  if (fn == sim_ew_plain(SIM_EW_LOGISTIC, XRT_F32))
    return SIM_VM_PICK(sim_vm_logistic);
#endif
  (void)fn;
  return NULL; /* not one of them, or no vector extensions */
}
