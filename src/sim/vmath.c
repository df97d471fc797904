/*
 * src/sim/vmath.c - vectorized exponential, tanh, logistic and rsqrt for
 * f32.
 * Part of the simulated device; MIT licensed, see LICENSE.
 */
#include "internal.h"
/* ======================================================================
 * Vectorized elementary functions (f32 exp, tanh, logistic, rsqrt)
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
 *   exp(x) = 2^m 2^(j/16) exp(r), k = 16 m + j = round(16 x / ln 2),
 *   r = x - k ln2/16 (two-part ln2/16, k chi exact), |r| <= 0.0217;
 *   2^(j/16) from a 16-entry table (one permute on AVX-512, a gather on
 *   AVX2), expm1(r) by its Taylor series to r^7 (truncation under 1.3e-18)
 *   in a short-chained order, 2^m added to the exponent field.  Error under
 *   2.1 double ulps (2.3e-16 relative): the table's rounding, the final
 *   sum's, and a little from r and the product.  x is clamped to
 *   [-120, 120] first, which changes no f32 result (exp(120) overflows
 *   f32, exp(-120) underflows it to 0, and so does 1 / (1 + exp(120))).
 *   expm1(y), y >= 0: the same reduction, 2^(j/16) - 1 = hi + lo from two
 *   tables, v = hi + ((lo + hi p) + p) (= 2^(j/16) exp(r) - 1, p =
 *   expm1(r)), expm1(y) = 2^m v + (2^m - 1): for k = 0, v = p with the
 *   series' relative accuracy near 0; else v >= hi/2 or 2^m - 1 dominates:
 *   under 4 double ulps (4.4e-16 relative).  tanh(x) = sign(x) e / (e + 2),
 *   e = expm1(2|x|), |x| clamped to 10 (tanh(10) rounds to 1 in f32, as
 *   does every tanh beyond).  logistic(x) = 1 / (1 + exp(-x)), the formula
 *   of the scalar path.
 *
 * The double results are within a few double ulps (under 5e-16 relative)
 * of the exact ones, so after rounding to f32 they equal the scalar path's
 * except for inputs whose exact result lies within ~6e-16 of an f32
 * rounding boundary, where they may differ by one f32 ulp: test_sim_vmath
 * counts them over 2^20 inputs spread over every exponent, runs at the
 * seams and the edges (none), and over all 2^32 f32 inputs with glibc
 * 2.36 none differs either (each of the three builds, checked once
 * outside the suite; the bits are those of the former degree-13 Taylor
 * kernels too).  No FMA contraction (gcc's ISO C mode; the AVX-512
 * min/max and permute give what the portable selects and loads give), so
 * the three builds agree bit for bit.  NaN in, NaN out.  Other compilers
 * keep the scalar path.
 * ==================================================================== */

#if SIM_X86
#define SIM_VM_X86 1
#include <immintrin.h>
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
typedef uint64_t sim_vm_u8 __attribute__((vector_size(64)));

#define SIM_VM_SHIFTER 6755399441055744.0 /* 1.5 * 2^52: rounds to integer */
#define SIM_VM_INVC 23.083120654223414    /* 16 / ln 2 */
#define SIM_VM_CHI 0x1.62e42ffp-5         /* ln2/16 to 29 bits: k chi exact */
#define SIM_VM_CLO -0x1.718432a1b0e26p-39 /* ln2/16 - chi */

/* 2^(j/16) rounded to double, and 2^(j/16) - 1 as hi + lo (hi rounded,
 * lo the rounded remainder), j = 0..15. */
static const sim_vm_d8 sim_vm_t2[2] = {
    {0x1.0000000000000p+0, 0x1.0b5586cf9890fp+0, 0x1.172b83c7d517bp+0,
     0x1.2387a6e756238p+0, 0x1.306fe0a31b715p+0, 0x1.3dea64c123422p+0,
     0x1.4bfdad5362a27p+0, 0x1.5ab07dd485429p+0},
    {0x1.6a09e667f3bcdp+0, 0x1.7a11473eb0187p+0, 0x1.8ace5422aa0dbp+0,
     0x1.9c49182a3f090p+0, 0x1.ae89f995ad3adp+0, 0x1.c199bdd85529cp+0,
     0x1.d5818dcfba487p+0, 0x1.ea4afa2a490dap+0}};
static const sim_vm_d8 sim_vm_m1hi[2] = {
    {0x0.0p+0, 0x1.6ab0d9f3121ecp-5, 0x1.72b83c7d517aep-4,
     0x1.1c3d373ab11c3p-3, 0x1.837f0518db8a9p-3, 0x1.ef5326091a112p-3,
     0x1.2ff6b54d8a89cp-2, 0x1.6ac1f752150a5p-2},
    {0x1.a827999fcef32p-2, 0x1.e8451cfac061bp-2, 0x1.159ca845541b7p-1,
     0x1.389230547e120p-1, 0x1.5d13f32b5a75bp-1, 0x1.83337bb0aa538p-1,
     0x1.ab031b9f7490ep-1, 0x1.d495f454921b3p-1}};
static const sim_vm_d8 sim_vm_m1lo[2] = {
    {0x0.0p+0, 0x1.4c5c95b8c2155p-59, -0x1.9041b9d78a75bp-59,
     0x1.b07eb6c70572dp-58, 0x1.bd1ab48c60b91p-57, -0x1.497dbb83d8512p-57,
     0x1.d4397afec42e2p-56, 0x1.8c93015191eb3p-56},
    {0x1.08b2fb1366ea9p-56, 0x1.7d51023f6cda2p-56, -0x1.22c1d52f369b2p-55,
     0x1.c7c46b071f2bep-56, -0x1.0bc65974466fdp-55, 0x1.11065895048ddp-55,
     0x1.2ed02d75b3707p-55, 0x1.63dce863d76ccp-58}};

/* c ? a : b, lane by lane, for a mask c of comparisons (-1 or 0). */
#define SIM_VM_SEL_D(c, a, b)                                                 \
  ((sim_vm_d8)(((sim_vm_l8)(a) & (c)) | ((sim_vm_l8)(b) & ~(c))))
#define SIM_VM_SEL_F(c, a, b)                                                 \
  ((sim_vm_f8)(((sim_vm_i8)(a) & (c)) | ((sim_vm_i8)(b) & ~(c))))

/* Per build (the suffix): x = min(x, hi), x = min(max(x, lo), hi) (NaN
 * lanes: anything; the kernel puts NaN back), the eight f32 lanes f as
 * doubles, t = tab[k mod 16] (tab0, tab1: its halves as vectors; kb: k in
 * the low bits), and whether four chains fit the registers. */
#define SIM_VM_MIN_port(x, hi)                                                \
  do {                                                                        \
    sim_vm_d8 hi_ = (sim_vm_d8){0} + (hi);                                    \
    x = SIM_VM_SEL_D((x) > hi_, hi_, x);                                      \
  } while (0)
#define SIM_VM_CLAMP_port(x, lo, hi)                                          \
  do {                                                                        \
    sim_vm_d8 lo_ = (sim_vm_d8){0} + (lo);                                    \
    x = SIM_VM_SEL_D((x) < lo_, lo_, x);                                      \
    SIM_VM_MIN_port(x, hi);                                                   \
  } while (0)
#define SIM_VM_CVT_port(f) __builtin_convertvector(f, sim_vm_d8)
#define SIM_VM_LOOKUP_port(t, tab0, tab1, tab, kb)                            \
  do {                                                                        \
    (void)(tab0);                                                             \
    (void)(tab1);                                                             \
    for (int i_ = 0; i_ < 8; i_++)                                         \
      (t)[i_] = (tab)[(kb)[i_] >> 3 & 1][(kb)[i_] & 7];                       \
  } while (0)
#define SIM_VM_WIDE_port 0

#define SIM_VM_MIN_avx2 SIM_VM_MIN_port
#define SIM_VM_CLAMP_avx2 SIM_VM_CLAMP_port
#define SIM_VM_CVT_avx2 SIM_VM_CVT_port
#define SIM_VM_LOOKUP_avx2(t, tab0, tab1, tab, kb)                            \
  do { /* two gathers of four */                                             \
    sim_vm_l8 k_ = (kb) & 15;                                                 \
    __m256i i0_, i1_;                                                         \
    __m256d g0_, g1_;                                                         \
    (void)(tab0);                                                             \
    (void)(tab1);                                                             \
    memcpy(&i0_, &k_, sizeof i0_);                                            \
    memcpy(&i1_, (char *)&k_ + sizeof i0_, sizeof i1_);                       \
    g0_ = _mm256_i64gather_pd((const double *)(tab), i0_, 8);                 \
    g1_ = _mm256_i64gather_pd((const double *)(tab), i1_, 8);                 \
    memcpy(&(t), &g0_, sizeof g0_);                                           \
    memcpy((char *)&(t) + sizeof g0_, &g1_, sizeof g1_);                      \
  } while (0)
#define SIM_VM_WIDE_avx2 0

#define SIM_VM_MIN_avx512(x, hi)                                              \
  x = (sim_vm_d8)_mm512_min_pd((__m512d)(x), _mm512_set1_pd(hi))
#define SIM_VM_CLAMP_avx512(x, lo, hi)                                        \
  x = (sim_vm_d8)_mm512_max_pd(                                               \
      _mm512_min_pd((__m512d)(x), _mm512_set1_pd(hi)), _mm512_set1_pd(lo))
#define SIM_VM_CVT_avx512(f) ((sim_vm_d8)_mm512_cvtps_pd((__m256)(f)))
#define SIM_VM_LOOKUP_avx512(t, tab0, tab1, tab, kb)                          \
  do {                                                                        \
    (void)(tab);                                                              \
    t = (sim_vm_d8)_mm512_permutex2var_pd((__m512d)(tab0), (__m512i)(kb),     \
                                          (__m512d)(tab1));                   \
  } while (0)
#define SIM_VM_WIDE_avx512 1

/* The reduction for exp and expm1: k = 16 m + j, the nearest integer to
 * 16 x / ln 2 (kb: k in the low bits, two's complement), r = x - k chi -
 * k clo: k chi is exact (|k| < 2^24), so r's error is under 2^-53 |r| plus
 * |k| 2^-53 |clo|, |r| <= ln2/32 (0.02167) and a little more from the
 * rounding of 16 x / ln 2.  p = expm1(r) = r + r^2 (a + r^2 (b + r^2 c)),
 * a, b, c linear in r: the Taylor series to r^7 (truncation under 1.3e-18
 * relative), rounding errors under 2^-53 |p|. */
#define SIM_VM_REDUCE(kb, p, x)                                               \
  do {                                                                        \
    sim_vm_d8 kd_ = (x) * SIM_VM_INVC + SIM_VM_SHIFTER;                       \
    kb = (sim_vm_l8)kd_;                                                      \
    kd_ = kd_ - SIM_VM_SHIFTER;                                               \
    sim_vm_d8 r_ = ((x) - kd_ * SIM_VM_CHI) - kd_ * SIM_VM_CLO;               \
    sim_vm_d8 r2_ = r_ * r_;                                                  \
    sim_vm_d8 a_ = r_ * (1.0 / 6.0) + 0.5;                                    \
    sim_vm_d8 b_ = r_ * (1.0 / 120.0) + 1.0 / 24.0;                           \
    sim_vm_d8 c_ = r_ * (1.0 / 5040.0) + 1.0 / 720.0;                         \
    b_ = r2_ * c_ + b_;                                                       \
    a_ = r2_ * b_ + a_;                                                       \
    p = r2_ * a_ + r_;                                                        \
  } while (0)

/* y = exp(x) for x in [-120, 120]: t = 2^m 2^(j/16) (the table's value,
 * rounding error under 2^-53 t, 2^m added to its exponent field: normal
 * all the way), y = t + t p (t p under 0.022 t: its rounding is
 * negligible; the sum rounds once).  Under 2.1 * 2^-53 relative. */
#define SIM_VM_EXP(y, x, ISA)                                                 \
  do {                                                                        \
    sim_vm_l8 kb_;                                                            \
    sim_vm_d8 p_, t_;                                                         \
    SIM_VM_REDUCE(kb_, p_, x);                                                \
    SIM_VM_LOOKUP_##ISA(t_, t2a, t2b, sim_vm_t2, kb_);                        \
    t_ = (sim_vm_d8)((sim_vm_u8)t_ +                                          \
                     (((sim_vm_u8)kb_ & ~(uint64_t)15) << 48));               \
    y = t_ + t_ * p_;                                                         \
  } while (0)

/* y = expm1(x) for x in [0, 20]: v = 2^(j/16) (1 + p) - 1 = hi + ((lo +
 * hi p) + p), y = 2^m v + (2^m - 1).  k = 0: v = p, relative accuracy
 * near 0.  m = 0 < j: r >= -0.0217 and hi >= 0.0443, so v >= hi/2 and the
 * roundings (hi's 2^-53 hi is cancelled by lo; hi p, the two sums) stay
 * under 3 * 2^-53 v.  m >= 1: 2^m v >= -0.022 2^m against 2^m - 1 >=
 * 2^(m-1), one more rounding: under 4 * 2^-53 relative. */
#define SIM_VM_EXPM1(y, x, ISA)                                               \
  do {                                                                        \
    sim_vm_l8 kb_;                                                            \
    sim_vm_d8 p_, h_, l_;                                                     \
    SIM_VM_REDUCE(kb_, p_, x);                                                \
    SIM_VM_LOOKUP_##ISA(h_, m1a, m1b, sim_vm_m1hi, kb_);                      \
    SIM_VM_LOOKUP_##ISA(l_, m1c, m1d, sim_vm_m1lo, kb_);                      \
    sim_vm_d8 v_ = h_ + ((l_ + h_ * p_) + p_);                                \
    sim_vm_d8 s_ = /* 2^m, m >= 0 */                                          \
        (sim_vm_d8)((((sim_vm_u8)kb_ >> 4) + 1023) << 52);                    \
    y = s_ * v_ + (s_ - 1.0);                                                 \
  } while (0)

/* The tables as vectors (two halves each), for the permutes. */
#define SIM_VM_TABLES                                                         \
  sim_vm_d8 t2a = sim_vm_t2[0], t2b = sim_vm_t2[1];                           \
  sim_vm_d8 m1a = sim_vm_m1hi[0], m1b = sim_vm_m1hi[1];                       \
  sim_vm_d8 m1c = sim_vm_m1lo[0], m1d = sim_vm_m1lo[1];                       \
  (void)t2a, (void)t2b, (void)m1a, (void)m1b, (void)m1c, (void)m1d

/* Eight f32 results of x (doubles of the eight inputs xf). */
#define SIM_VM_BODY_exp(r, x, xf, ISA)                                        \
  do {                                                                        \
    sim_vm_d8 e_;                                                             \
    SIM_VM_CLAMP_##ISA(x, -120.0, 120.0);                                     \
    SIM_VM_EXP(e_, x, ISA);                                                   \
    r = __builtin_convertvector(e_, sim_vm_f8);                               \
  } while (0)
#define SIM_VM_BODY_tanh(r, x, xf, ISA)                                       \
  do {                                                                        \
    sim_vm_d8 a_ = (sim_vm_d8)((sim_vm_l8)(x) & INT64_MAX), e_;               \
    SIM_VM_MIN_##ISA(a_, 10.0);                                               \
    a_ = a_ * 2.0;                                                            \
    SIM_VM_EXPM1(e_, a_, ISA);                                                \
    r = __builtin_convertvector(e_ / (e_ + 2.0), sim_vm_f8);                  \
    /* the sign of x (tanh(-0) = -0) */                                      \
    r = (sim_vm_f8)((sim_vm_i8)r | ((sim_vm_i8)(xf) & INT32_MIN));            \
  } while (0)
#define SIM_VM_BODY_logistic(r, x, xf, ISA)                                   \
  do {                                                                        \
    sim_vm_d8 e_ = -(x);                                                      \
    SIM_VM_CLAMP_##ISA(e_, -120.0, 120.0);                                    \
    SIM_VM_EXP(e_, e_, ISA);                                                  \
    r = __builtin_convertvector(1.0 / (1.0 + e_), sim_vm_f8);                 \
  } while (0)

/* rsqrt(x) = 1 / sqrt(x) in double, rounded once: the scalar path's two
 * correctly rounded operations, so the same bits (a negative x gives the
 * NaN the square root instruction gives, as libm's sqrt does). */
#define SIM_VM_SQRT_port(x)                                                   \
  do {                                                                        \
    for (int l_ = 0; l_ < 8; l_++) (x)[l_] = __builtin_sqrt((x)[l_]);         \
  } while (0)
#define SIM_VM_SQRT_avx2 SIM_VM_SQRT_port
#ifdef SIM_VM_X86
#define SIM_VM_SQRT_avx512(x) (x) = (sim_vm_d8)_mm512_sqrt_pd((__m512d)(x))
#endif
#define SIM_VM_BODY_rsqrt(r, x, xf, ISA)                                      \
  do {                                                                        \
    sim_vm_d8 s_ = (x);                                                       \
    SIM_VM_SQRT_##ISA(s_);                                                    \
    r = __builtin_convertvector(1.0 / s_, sim_vm_f8);                         \
  } while (0)

/* Four (AVX-512) or two independent chains of eight lanes at a time (their
 * loads, bodies and stores side by side, so that independent work is near
 * in the instruction stream), then eight, then the tail through a
 * zero-padded array (a partial copy straight into a vector makes GCC 12
 * crash under -fsanitize=address); a NaN input gives itself. */
#define SIM_VM_KERNEL(ISA, NAME)                                              \
  static SIM_VM_T_##ISA void sim_vm_##NAME##_##ISA(                           \
      void *const *in, void *out, size_t n, const void *ctx) {                \
    const float *a = (const float *)in[0];                                    \
    float *o = (float *)out;                                                  \
    (void)ctx;                                                                \
    SIM_VM_TABLES;                                                            \
    size_t i = 0;                                                             \
    for (; SIM_VM_WIDE_##ISA && i + 32 <= n; i += 32) {                       \
      sim_vm_f8 f0, f1, f2, f3, r0, r1, r2, r3;                               \
      memcpy(&f0, a + i, sizeof f0);                                          \
      memcpy(&f1, a + i + 8, sizeof f1);                                      \
      memcpy(&f2, a + i + 16, sizeof f2);                                     \
      memcpy(&f3, a + i + 24, sizeof f3);                                     \
      sim_vm_d8 x0 = SIM_VM_CVT_##ISA(f0), x1 = SIM_VM_CVT_##ISA(f1);         \
      sim_vm_d8 x2 = SIM_VM_CVT_##ISA(f2), x3 = SIM_VM_CVT_##ISA(f3);         \
      SIM_VM_BODY_##NAME(r0, x0, f0, ISA);                                    \
      SIM_VM_BODY_##NAME(r1, x1, f1, ISA);                                    \
      SIM_VM_BODY_##NAME(r2, x2, f2, ISA);                                    \
      SIM_VM_BODY_##NAME(r3, x3, f3, ISA);                                    \
      r0 = SIM_VM_SEL_F(f0 != f0, f0, r0);                                    \
      r1 = SIM_VM_SEL_F(f1 != f1, f1, r1);                                    \
      r2 = SIM_VM_SEL_F(f2 != f2, f2, r2);                                    \
      r3 = SIM_VM_SEL_F(f3 != f3, f3, r3);                                    \
      memcpy(o + i, &r0, sizeof r0);                                          \
      memcpy(o + i + 8, &r1, sizeof r1);                                      \
      memcpy(o + i + 16, &r2, sizeof r2);                                     \
      memcpy(o + i + 24, &r3, sizeof r3);                                     \
    }                                                                         \
    for (; i + 16 <= n; i += 16) {                                            \
      sim_vm_f8 f0, f1, r0, r1;                                               \
      memcpy(&f0, a + i, sizeof f0);                                          \
      memcpy(&f1, a + i + 8, sizeof f1);                                      \
      sim_vm_d8 x0 = SIM_VM_CVT_##ISA(f0), x1 = SIM_VM_CVT_##ISA(f1);         \
      SIM_VM_BODY_##NAME(r0, x0, f0, ISA);                                    \
      SIM_VM_BODY_##NAME(r1, x1, f1, ISA);                                    \
      r0 = SIM_VM_SEL_F(f0 != f0, f0, r0);                                    \
      r1 = SIM_VM_SEL_F(f1 != f1, f1, r1);                                    \
      memcpy(o + i, &r0, sizeof r0);                                          \
      memcpy(o + i + 8, &r1, sizeof r1);                                      \
    }                                                                         \
    for (; i + 8 <= n; i += 8) {                                              \
      sim_vm_f8 xf, r;                                                        \
      memcpy(&xf, a + i, sizeof xf);                                          \
      sim_vm_d8 x = SIM_VM_CVT_##ISA(xf);                                     \
      SIM_VM_BODY_##NAME(r, x, xf, ISA);                                      \
      r = SIM_VM_SEL_F(xf != xf, xf, r);                                      \
      memcpy(o + i, &r, sizeof r);                                            \
    }                                                                         \
    if (i < n) {                                                              \
      float t[8] = {0};                                                       \
      sim_vm_f8 xf, r;                                                        \
      memcpy(t, a + i, (n - i) * sizeof(float));                              \
      memcpy(&xf, t, sizeof xf);                                              \
      sim_vm_d8 x = SIM_VM_CVT_##ISA(xf);                                     \
      SIM_VM_BODY_##NAME(r, x, xf, ISA);                                      \
      r = SIM_VM_SEL_F(xf != xf, xf, r);                                      \
      memcpy(t, &r, sizeof r);                                                \
      memcpy(o + i, t, (n - i) * sizeof(float));                              \
    }                                                                         \
  }
#define SIM_VM_KERNELS(ISA)                                                   \
  SIM_VM_KERNEL(ISA, exp) SIM_VM_KERNEL(ISA, tanh)                            \
  SIM_VM_KERNEL(ISA, logistic) SIM_VM_KERNEL(ISA, rsqrt)

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
  if (fn == sim_ew_plain(SIM_EW_RSQRT, XRT_F32))
    return SIM_VM_PICK(sim_vm_rsqrt);
#endif
  (void)fn;
  return NULL; /* not one of them, or no vector extensions */
}
