/*
 * src/sim/gemm_kernels.h - the GEMM's micro-kernels (gemm.c): portable C,
 * AVX2 + FMA and AVX-512 tiles, the AVX-512 strip kernels for A packed in
 * strips of 16 k, their epilogue (post) and half-tile variants, and the
 * 16 x 16 transpose that packing uses.  Included by gemm.c only, after
 * internal.h.
 * Part of the simulated device; MIT licensed, see LICENSE.
 */
#ifndef SIM_GEMM_KERNELS_H
#define SIM_GEMM_KERNELS_H

#if SIM_X86_64
#define SIM_GEMM_X86 1
#include <immintrin.h>
#include "post512.h"
#else
#define SIM_GEMM_X86 0
#endif

/* Computes the MR x NR tile a * b over kc (a: kc x MR, b: kc x NR, both
 * packed k-major) into rows c + i * ldc: stores it when first, else adds
 * it to what is there. */
typedef void (*sim_gk_fn)(int64_t kc, const void *a, const void *b, void *c,
                          int64_t ldc, int first);

typedef struct sim_gk {
  const char *name;
  int mr, nr;
  int64_t mc, kc, nc; /* cache blocks: mc, nc multiples of mr, nr */
  sim_gk_fn fn;
  /* f32 packing transposes 16 x 16 blocks with this, when not NULL */
  void (*tr16)(const float *const *src, int nr, int64_t kk, float *dst,
               int64_t ldd);
  /* When not NULL: fn for A packed in strips (see SIM_GK_STRIP) */
  sim_gk_fn fs;
} sim_gk;
#define SIM_GK_STRIP 16 /* k per strip of a strip-packed A */

/* ---- portable micro-kernels ---- */

#define SIM_GK_C_DEF(NAME, T, MR, NR)                                        \
  static void NAME(int64_t kc, const void *ap, const void *bp, void *cp,   \
                   int64_t ldc, int first) {                                 \
    const T *a = (const T *)ap, *b = (const T *)bp;                          \
    T acc[MR][NR];                                                           \
    memset(acc, 0, sizeof acc);                                              \
    for (int64_t k = 0; k < kc; k++, a += MR, b += NR)                       \
      for (int i = 0; i < MR; i++) {                                         \
        T ai = a[i];                                                         \
        for (int j = 0; j < NR; j++) acc[i][j] += ai * b[j];                 \
      }                                                                      \
    for (int i = 0; i < MR; i++) {                                           \
      T *c = (T *)cp + i * ldc;                                              \
      for (int j = 0; j < NR; j++) c[j] = first ? acc[i][j] : c[j] + acc[i][j]; \
    }                                                                        \
  }
SIM_GK_C_DEF(sim_gk_f32_c, float, 4, 16)
SIM_GK_C_DEF(sim_gk_f64_c, double, 4, 8)

/* An A micro-panel read in place (sim_gemm_direct_panel): strip s of 16
 * k at sp[s], rows lda elements apart. */
typedef struct sim_gdir {
  const float *const *sp;
  int64_t lda;
} sim_gdir;

#if SIM_GEMM_X86
/* ---- AVX-512: 12 x 2 vectors of accumulators (24 of 32 registers) ---- */

#define SIM_GK_ROWS12(X) X(0) X(1) X(2) X(3) X(4) X(5) X(6) X(7) X(8) X(9) \
  X(10) X(11)
#define SIM_GK_ROWS6(X) X(0) X(1) X(2) X(3) X(4) X(5)

#define SIM_GK_Z_DECL(i) V c##i##a = ZERO(), c##i##b = ZERO();
#define SIM_GK_Z_FMA(i)                                                      \
  {                                                                          \
    V ai = SET1(a[i]);                                                       \
    c##i##a = FMA(ai, b0, c##i##a);                                          \
    c##i##b = FMA(ai, b1, c##i##b);                                          \
  }
#define SIM_GK_Z_STORE(i)                                                    \
  if (!first) {                                                              \
    c##i##a = ADD(c##i##a, LOAD(c + (i) * ldc));                             \
    c##i##b = ADD(c##i##b, LOAD(c + (i) * ldc + W));                         \
  }                                                                          \
  STORE(c + (i) * ldc, c##i##a);                                             \
  STORE(c + (i) * ldc + W, c##i##b);

/* TAIL stores the sums: SIM_GK_TAIL, or SIM_GK_TAIL_POST with the
 * parameters SIM_GK_PP (a product's epilogue in registers). */
#define SIM_GK_TAIL(ROWS) ROWS(SIM_GK_Z_STORE)
#define SIM_GK_NOPP
#define SIM_GK_VEC_DEF_T(NAME, TGT, T, MR, ROWS, PP, TAIL)                   \
  __attribute__((target(TGT))) static void NAME(                            \
      int64_t kc, const void *ap, const void *bp, void *cp, int64_t ldc,     \
      int first PP) {                                                        \
    const T *a = (const T *)ap, *b = (const T *)bp;                          \
    T *c = (T *)cp;                                                          \
    ROWS(SIM_GK_Z_DECL)                                                      \
    for (int64_t k = 0; k < kc; k++, a += MR, b += 2 * W) {                  \
      V b0 = LOAD(b), b1 = LOAD(b + W);                                      \
      ROWS(SIM_GK_Z_FMA)                                                     \
    }                                                                        \
    TAIL(ROWS)                                                               \
  }
#define SIM_GK_VEC_DEF(NAME, TGT, T, MR, ROWS)                               \
  SIM_GK_VEC_DEF_T(NAME, TGT, T, MR, ROWS, SIM_GK_NOPP, SIM_GK_TAIL)

#define V __m512
#define W 16
#define ZERO _mm512_setzero_ps
#define SET1 _mm512_set1_ps
#define FMA _mm512_fmadd_ps
#define LOAD _mm512_loadu_ps
#define STORE _mm512_storeu_ps
#define ADD _mm512_add_ps
SIM_GK_VEC_DEF(sim_gk_f32_avx512, "avx512f", float, 12, SIM_GK_ROWS12)

/* The same tile with A packed in strips of SIM_GK_STRIP k: strip s holds
 * A[i, 16 s + t] at [s * 16 * MR + i * 16 + t], a last short strip of r
 * k at stride r.  So packing copies runs of k (a convolution's features)
 * instead of transposing them, and the kernel's broadcasts read at fixed
 * offsets from one pointer. */
#define SIM_GK_S_FMA(i)                                                      \
  {                                                                          \
    V ai = SET1(a[(i) * S]);                                                 \
    c##i##a = FMA(ai, b0, c##i##a);                                          \
    c##i##b = FMA(ai, b1, c##i##b);                                          \
  }
#define SIM_GK_PF2 (8 * SIM_GK_STRIP) /* k ahead of the L2 prefetch */
/* B's vectors of one k, and prefetches: B's micro-panel streams from L2,
 * one strip ahead into L1; and from memory (weights packed once, read
 * once a call, as a late ResNet stage's 9 MiB): 8 strips (16 KiB) ahead
 * into L2, which took 8% off a chain of such convolutions. */
#define SIM_GK_B_STEP                                                        \
  V b0 = LOAD(b), b1 = LOAD(b + W);                                          \
  _mm_prefetch((const char *)(b + SIM_GK_STRIP * 2 * W), _MM_HINT_T0);       \
  _mm_prefetch((const char *)(b + SIM_GK_STRIP * 2 * W + W), _MM_HINT_T0);   \
  _mm_prefetch((const char *)(b + SIM_GK_PF2 * 2 * W), _MM_HINT_T1);         \
  _mm_prefetch((const char *)(b + SIM_GK_PF2 * 2 * W + W), _MM_HINT_T1);
#define SIM_GK_B_LOAD2 V b0 = LOAD(b), b1 = LOAD(b + W);
/* A strip kernel: DECL the accumulators of a row, STEP B's vectors of one
 * k in a whole strip (with prefetches), LOADB them in the last strip, FMA
 * a row's multiply-adds; the post kernels' parameter last (it has a
 * comma). */
#define SIM_GK_STRIP_DEF_G(NAME, ROWS, TAIL, DECL, STEP, LOADB, FMA, ...)    \
  __attribute__((target("avx512f"))) static void NAME(                       \
      int64_t kc, const void *ap, const void *bp, void *cp, int64_t ldc,     \
      int first __VA_ARGS__) {                                               \
    const float *as = (const float *)ap, *b = (const float *)bp;             \
    float *c = (float *)cp;                                                  \
    ROWS(DECL)                                                               \
    int64_t k = 0;                                                           \
    for (; k + SIM_GK_STRIP <= kc;                                           \
         k += SIM_GK_STRIP, as += SIM_GK_STRIP * 12) {                       \
      const float *a = as;                                                   \
      enum { S = SIM_GK_STRIP };                                             \
      for (int t = 0; t < SIM_GK_STRIP; t++, a++, b += 2 * W) {              \
        STEP                                                                 \
        ROWS(FMA)                                                            \
      }                                                                      \
    }                                                                        \
    const float *a = as;                                                     \
    const int64_t S = kc - k;                                                \
    for (; k < kc; k++, a++, b += 2 * W) {                                   \
      LOADB                                                                  \
      ROWS(FMA)                                                              \
    }                                                                        \
    TAIL(ROWS)                                                               \
  }
#define SIM_GK_STRIP_DEF_T(NAME, ROWS, PP, TAIL)                             \
  SIM_GK_STRIP_DEF_G(NAME, ROWS, TAIL, SIM_GK_Z_DECL, SIM_GK_B_STEP,         \
                     SIM_GK_B_LOAD2, SIM_GK_S_FMA, PP)
#define SIM_GK_STRIP_DEF(NAME, ROWS)                                         \
  SIM_GK_STRIP_DEF_T(NAME, ROWS, SIM_GK_NOPP, SIM_GK_TAIL)
#define SIM_GK_ROWS8(X) X(0) X(1) X(2) X(3) X(4) X(5) X(6) X(7)
#define SIM_GK_ROWS4(X) X(0) X(1) X(2) X(3)
SIM_GK_STRIP_DEF(sim_gk_f32_avx512_strip, SIM_GK_ROWS12)
/* The first 8 or 4 rows of a 12-row panel, stored straight into C: a
 * product whose rows end there (128 = 10 x 12 + 8) needs no tile buffer
 * and computes no padding rows. */
SIM_GK_STRIP_DEF(sim_gk_f32_avx512_strip8, SIM_GK_ROWS8)
SIM_GK_STRIP_DEF(sim_gk_f32_avx512_strip4, SIM_GK_ROWS4)
SIM_GK_VEC_DEF(sim_gk_f32_avx512_r8, "avx512f", float, 12, SIM_GK_ROWS8)
SIM_GK_VEC_DEF(sim_gk_f32_avx512_r4, "avx512f", float, 12, SIM_GK_ROWS4)

/* ---- the epilogue in registers (sim_gpost, internal.h) ----
 * The post kernels take the tile's place in C (sim_gtp) and apply the
 * epilogue to the final sums (added to C's when not the first K block)
 * before storing them: per operation one switch for the whole tile, its
 * operands two vectors (a column vector or one number), one number per
 * row (a row vector) or two vectors per row (a value of C's shape). */
typedef struct sim_gtp {
  const sim_gpost *po;
  int64_t row, col; /* the tile's first element in C */
  int64_t ldb;      /* C's row length: full operands' row stride */
  unsigned m0, m1;  /* masked kernel: the columns of each vector in C */
} sim_gtp;

#define SIM_GKP_U(i)                                                         \
  c##i##a = sim_gpost_op512(c##i##a, b0, OPC);                               \
  c##i##b = sim_gpost_op512(c##i##b, b1, OPC);
#define SIM_GKP_F(i)                                                         \
  c##i##a = sim_gpost_op512(                                                 \
      c##i##a, LOAD(bf + (i) * ldb), OPC);                                   \
  c##i##b = sim_gpost_op512(c##i##b, LOAD(bf + (i) * ldb + W), OPC);
#define SIM_GKP_R(i)                                                         \
  {                                                                          \
    V t_ = SET1(br[i]);                                                      \
    c##i##a = sim_gpost_op512(c##i##a, t_, OPC);                             \
    c##i##b = sim_gpost_op512(c##i##b, t_, OPC);                             \
  }
#define SIM_GKP_CASE(K, ROWS, X)                                             \
  case K: {                                                                  \
    enum { OPC = K };                                                        \
    ROWS(X)                                                                  \
  } break;
#define SIM_GKP_SWITCH(OP, ROWS, X)                                          \
  switch (OP) {                                                              \
    SIM_GKP_CASE(0, ROWS, X) SIM_GKP_CASE(1, ROWS, X)                        \
    SIM_GKP_CASE(2, ROWS, X) SIM_GKP_CASE(3, ROWS, X)                        \
    SIM_GKP_CASE(4, ROWS, X) SIM_GKP_CASE(5, ROWS, X)                        \
    SIM_GKP_CASE(6, ROWS, X) default: {                                      \
      enum { OPC = 7 };                                                      \
      ROWS(X)                                                                \
    }                                                                        \
  }
#define SIM_GKP_SUM(i)                                                       \
  if (!first) {                                                              \
    c##i##a = ADD(c##i##a, LOAD(c + (i) * ldc));                             \
    c##i##b = ADD(c##i##b, LOAD(c + (i) * ldc + W));                         \
  }
#define SIM_GKP_CL(i)                                                        \
  c##i##a = sim_gpost_bound512(c##i##a, lo, z, hi);                          \
  c##i##b = sim_gpost_bound512(c##i##b, lo, z, hi);
#define SIM_GKP_ST(i)                                                        \
  STORE(c + (i) * ldc, c##i##a);                                             \
  STORE(c + (i) * ldc + W, c##i##b);
#define SIM_GK_PP , const sim_gtp *tp
/* A row vector's operation (then on to the next one), and the bounds:
 * parts of both post tails. */
#define SIM_GKP_ROWV(ROWS)                                                   \
  if (po->arg[j] == SIM_GPOST_ROW) {                                         \
    const float *br = bj + tp->row;                                          \
    SIM_GKP_SWITCH(po->op[j], ROWS, SIM_GKP_R)                               \
    continue;                                                                \
  }
#define SIM_GKP_BOUNDS(ROWS)                                                 \
  if (po->has_lo || po->has_hi) {                                            \
    V lo, z, hi;                                                             \
    sim_gpost_bounds(po, &lo, &z, &hi);                                      \
    ROWS(SIM_GKP_CL)                                                         \
  }
#define SIM_GK_TAIL_POST(ROWS)                                               \
  {                                                                          \
    const sim_gpost *po = tp->po;                                            \
    const int64_t ldb = tp->ldb;                                             \
    ROWS(SIM_GKP_SUM)                                                        \
    for (int j = 0; j < po->n; j++) {                                        \
      const float *bj = po->b[j];                                            \
      if (po->arg[j] == SIM_GPOST_FULL) {                                    \
        const float *bf = bj + tp->row * ldb + tp->col;                      \
        SIM_GKP_SWITCH(po->op[j], ROWS, SIM_GKP_F)                           \
        continue;                                                            \
      }                                                                      \
      SIM_GKP_ROWV(ROWS)                                                     \
      V b0 = po->arg[j] == SIM_GPOST_ONE ? SET1(bj[0]) : LOAD(bj + tp->col); \
      V b1 = po->arg[j] == SIM_GPOST_ONE ? b0 : LOAD(bj + tp->col + W);      \
      SIM_GKP_SWITCH(po->op[j], ROWS, SIM_GKP_U)                             \
    }                                                                        \
    SIM_GKP_BOUNDS(ROWS)                                                     \
    ROWS(SIM_GKP_ST)                                                         \
  }
SIM_GK_STRIP_DEF_T(sim_gkp_f32_avx512_strip, SIM_GK_ROWS12, SIM_GK_PP,
                   SIM_GK_TAIL_POST)
SIM_GK_STRIP_DEF_T(sim_gkp_f32_avx512_strip8, SIM_GK_ROWS8, SIM_GK_PP,
                   SIM_GK_TAIL_POST)
SIM_GK_STRIP_DEF_T(sim_gkp_f32_avx512_strip4, SIM_GK_ROWS4, SIM_GK_PP,
                   SIM_GK_TAIL_POST)
/* The same for a tile of fewer than 32 columns of C (the last of a
 * product 24 or 40 wide: MobileNet's projections), so that it needs no
 * tile buffer and no epilogue pass over it: C's loads and stores and the
 * operands' loads masked to the tile's columns; an operand of C's shape
 * (a residual) is loaded into an array first, in a loop that is not
 * unrolled, since ASan instruments each masked load lane by lane (see
 * the post kernels above).  The lanes past the tile's columns compute
 * on zeros and are never stored. */
#define SIM_GKPM_F(i)                                                        \
  c##i##a = sim_gpost_op512(c##i##a, fr[2 * (i)], OPC);                      \
  c##i##b = sim_gpost_op512(c##i##b, fr[2 * (i) + 1], OPC);
#define SIM_GKPM_SUM(i)                                                      \
  if (!first) {                                                              \
    c##i##a = ADD(c##i##a, _mm512_maskz_loadu_ps(m0, c + (i) * ldc));        \
    c##i##b = ADD(c##i##b, _mm512_maskz_loadu_ps(m1, c + (i) * ldc + W));    \
  }
#define SIM_GKPM_ST(i)                                                       \
  _mm512_mask_storeu_ps(c + (i) * ldc, m0, c##i##a);                         \
  _mm512_mask_storeu_ps(c + (i) * ldc + W, m1, c##i##b);
#define SIM_GK_TAIL_POSTM(ROWS)                                              \
  {                                                                          \
    const sim_gpost *po = tp->po;                                            \
    const __mmask16 m0 = (__mmask16)tp->m0, m1 = (__mmask16)tp->m1;          \
    ROWS(SIM_GKPM_SUM)                                                       \
    for (int j = 0; j < po->n; j++) {                                        \
      const float *bj = po->b[j];                                            \
      SIM_GKP_ROWV(ROWS)                                                     \
      if (po->arg[j] == SIM_GPOST_FULL) {                                    \
        V fr[24];                                                            \
        const float *bf = bj + tp->row * tp->ldb + tp->col;                  \
        _Pragma("GCC unroll 1") for (int r = 0; r < 24; r++)                 \
          fr[r] = _mm512_maskz_loadu_ps(r & 1 ? m1 : m0,                     \
                                        bf + r / 2 * tp->ldb + r % 2 * W);   \
        SIM_GKP_SWITCH(po->op[j], ROWS, SIM_GKPM_F)                          \
        continue;                                                            \
      }                                                                      \
      int one = po->arg[j] == SIM_GPOST_ONE;                                 \
      V b0 = one ? SET1(bj[0]) : _mm512_maskz_loadu_ps(m0, bj + tp->col);    \
      V b1 = one ? b0 : _mm512_maskz_loadu_ps(m1, bj + tp->col + W);         \
      SIM_GKP_SWITCH(po->op[j], ROWS, SIM_GKP_U)                             \
    }                                                                        \
    SIM_GKP_BOUNDS(ROWS)                                                     \
    ROWS(SIM_GKPM_ST)                                                        \
  }
SIM_GK_STRIP_DEF_T(sim_gkpm_f32_avx512_strip, SIM_GK_ROWS12, SIM_GK_PP,
                   SIM_GK_TAIL_POSTM)

/* ---- half tiles: 12 rows of one vector ----
 * A tile of 16 or fewer columns of C (the last of 169 positions, or all
 * of a product 16 wide: MobileNet's 1x1 convolutions to 16 features)
 * reads B's micro-panel as the full kernels do (32 columns a k, the
 * second half zeros) but multiplies only its first vector: half the
 * multiply-adds, the same sums in the same order for the columns it has.
 * The plain one stores into a tile buffer (ldc); the post one applies the
 * epilogue and stores straight into C under mask m0, as the masked post
 * kernel above. */
#define SIM_GKH_DECL(i) V c##i##a = ZERO();
#define SIM_GKH_FMA(i) c##i##a = FMA(SET1(a[(i) * S]), b0, c##i##a);
#define SIM_GKH_STORE(i)                                                     \
  if (!first) c##i##a = ADD(c##i##a, LOAD(c + (i) * ldc));                   \
  STORE(c + (i) * ldc, c##i##a);
#define SIM_GKH_TAIL(ROWS) ROWS(SIM_GKH_STORE)
#define SIM_GKH_LOAD V b0 = LOAD(b);
#define SIM_GKH_STEP                                                         \
  V b0 = LOAD(b);                                                            \
  _mm_prefetch((const char *)(b + SIM_GK_STRIP * 2 * W), _MM_HINT_T0);
#define SIM_GKH_STRIP_DEF_T(NAME, PP, TAIL)                                  \
  SIM_GK_STRIP_DEF_G(NAME, SIM_GK_ROWS12, TAIL, SIM_GKH_DECL, SIM_GKH_STEP,  \
                     SIM_GKH_LOAD, SIM_GKH_FMA, PP)
SIM_GKH_STRIP_DEF_T(sim_gkh_f32_avx512_strip, SIM_GK_NOPP, SIM_GKH_TAIL)
/* A packed the plain way (MR values of a k together) */
__attribute__((target("avx512f"))) static void sim_gkh_f32_avx512(
    int64_t kc, const void *ap, const void *bp, void *cp, int64_t ldc,
    int first) {
  const float *a = (const float *)ap, *b = (const float *)bp;
  float *c = (float *)cp;
  enum { S = 1 };
  SIM_GK_ROWS12(SIM_GKH_DECL)
  for (int64_t k = 0; k < kc; k++, a += 12, b += 2 * W) {
    V b0 = LOAD(b);
    SIM_GK_ROWS12(SIM_GKH_FMA)
  }
  SIM_GKH_TAIL(SIM_GK_ROWS12)
}
#define SIM_GKPH_U(i) c##i##a = sim_gpost_op512(c##i##a, b0, OPC);
#define SIM_GKPH_F(i) c##i##a = sim_gpost_op512(c##i##a, fr[i], OPC);
#define SIM_GKPH_R(i) c##i##a = sim_gpost_op512(c##i##a, SET1(br[i]), OPC);
#define SIM_GKPH_CL(i) c##i##a = sim_gpost_bound512(c##i##a, lo, z, hi);
#define SIM_GKPH_ST(i) _mm512_mask_storeu_ps(c + (i) * ldc, m0, c##i##a);
#define SIM_GKPH_SUM(i)                                                      \
  if (!first)                                                                \
    c##i##a = ADD(c##i##a, _mm512_maskz_loadu_ps(m0, c + (i) * ldc));
#define SIM_GKH_TAIL_POSTM(ROWS)                                             \
  {                                                                          \
    const sim_gpost *po = tp->po;                                            \
    const __mmask16 m0 = (__mmask16)tp->m0;                                  \
    ROWS(SIM_GKPH_SUM)                                                       \
    for (int j = 0; j < po->n; j++) {                                        \
      const float *bj = po->b[j];                                            \
      if (po->arg[j] == SIM_GPOST_ROW) {                                     \
        const float *br = bj + tp->row;                                      \
        SIM_GKP_SWITCH(po->op[j], ROWS, SIM_GKPH_R)                          \
        continue;                                                            \
      }                                                                      \
      if (po->arg[j] == SIM_GPOST_FULL) {                                    \
        V fr[12];                                                            \
        const float *bf = bj + tp->row * tp->ldb + tp->col;                  \
        _Pragma("GCC unroll 1") for (int r = 0; r < 12; r++)                 \
          fr[r] = _mm512_maskz_loadu_ps(m0, bf + r * tp->ldb);               \
        SIM_GKP_SWITCH(po->op[j], ROWS, SIM_GKPH_F)                          \
        continue;                                                            \
      }                                                                      \
      V b0 = po->arg[j] == SIM_GPOST_ONE                                     \
                 ? SET1(bj[0])                                               \
                 : _mm512_maskz_loadu_ps(m0, bj + tp->col);                  \
      SIM_GKP_SWITCH(po->op[j], ROWS, SIM_GKPH_U)                            \
    }                                                                        \
    if (po->has_lo || po->has_hi) {                                          \
      V lo, z, hi;                                                           \
      sim_gpost_bounds(po, &lo, &z, &hi);                                    \
      ROWS(SIM_GKPH_CL)                                                      \
    }                                                                        \
    ROWS(SIM_GKPH_ST)                                                        \
  }
SIM_GKH_STRIP_DEF_T(sim_gkphm_f32_avx512_strip, SIM_GK_PP, SIM_GKH_TAIL_POSTM)

/* The strip kernel reading A where it is: a convolution's micro-panel of
 * 12 interior rows lda elements apart in lhs (consecutive positions of an
 * NHWC row), strip s of 16 k at sp[s] (one window position's features),
 * so the panel is not copied (sim_gemm_direct_panel).  ap points to a
 * sim_gdir; kc is a multiple of 16.  The same multiply-adds in the same
 * order as the packed panel's: the same sums. */
#define SIM_GK_D_FMA(i)                                                      \
  {                                                                          \
    V ai = SET1(a[(i) * lda]);                                               \
    c##i##a = FMA(ai, b0, c##i##a);                                          \
    c##i##b = FMA(ai, b1, c##i##b);                                          \
  }
#define SIM_GK_DIRECT_DEF_T(NAME, PP, TAIL)                                  \
  __attribute__((target("avx512f"))) static void NAME(                       \
      int64_t kc, const void *ap, const void *bp, void *cp, int64_t ldc,     \
      int first PP) {                                                        \
    const sim_gdir *d = (const sim_gdir *)ap;                                \
    const float *b = (const float *)bp;                                      \
    float *c = (float *)cp;                                                  \
    const int64_t lda = d->lda;                                              \
    SIM_GK_ROWS12(SIM_GK_Z_DECL)                                             \
    for (int64_t s = 0; s < kc / SIM_GK_STRIP; s++) {                        \
      const float *a = d->sp[s];                                             \
      for (int t = 0; t < SIM_GK_STRIP; t++, a++, b += 2 * W) {              \
        SIM_GK_B_STEP                                                        \
        SIM_GK_ROWS12(SIM_GK_D_FMA)                                          \
      }                                                                      \
    }                                                                        \
    TAIL(SIM_GK_ROWS12)                                                      \
  }
SIM_GK_DIRECT_DEF_T(sim_gkd_f32_avx512, SIM_GK_NOPP, SIM_GK_TAIL)
SIM_GK_DIRECT_DEF_T(sim_gkpd_f32_avx512, SIM_GK_PP, SIM_GK_TAIL_POST)
SIM_GK_VEC_DEF_T(sim_gkp_f32_avx512, "avx512f", float, 12, SIM_GK_ROWS12,
                 SIM_GK_PP, SIM_GK_TAIL_POST)
SIM_GK_VEC_DEF_T(sim_gkp_f32_avx512_r8, "avx512f", float, 12, SIM_GK_ROWS8,
                 SIM_GK_PP, SIM_GK_TAIL_POST)
SIM_GK_VEC_DEF_T(sim_gkp_f32_avx512_r4, "avx512f", float, 12, SIM_GK_ROWS4,
                 SIM_GK_PP, SIM_GK_TAIL_POST)
#undef V
#undef W
#undef ZERO
#undef SET1
#undef FMA
#undef LOAD
#undef STORE
#undef ADD

#define V __m512d
#define W 8
#define ZERO _mm512_setzero_pd
#define SET1 _mm512_set1_pd
#define FMA _mm512_fmadd_pd
#define LOAD _mm512_loadu_pd
#define STORE _mm512_storeu_pd
#define ADD _mm512_add_pd
SIM_GK_VEC_DEF(sim_gk_f64_avx512, "avx512f", double, 12, SIM_GK_ROWS12)
#undef V
#undef W
#undef ZERO
#undef SET1
#undef FMA
#undef LOAD
#undef STORE
#undef ADD

/* ---- AVX2 + FMA: 6 x 2 vectors of accumulators (12 of 16) ---- */

#define V __m256
#define W 8
#define ZERO _mm256_setzero_ps
#define SET1 _mm256_set1_ps
#define FMA _mm256_fmadd_ps
#define LOAD _mm256_loadu_ps
#define STORE _mm256_storeu_ps
#define ADD _mm256_add_ps
SIM_GK_VEC_DEF(sim_gk_f32_avx2, "avx2,fma", float, 6, SIM_GK_ROWS6)
#undef V
#undef W
#undef ZERO
#undef SET1
#undef FMA
#undef LOAD
#undef STORE
#undef ADD

#define V __m256d
#define W 4
#define ZERO _mm256_setzero_pd
#define SET1 _mm256_set1_pd
#define FMA _mm256_fmadd_pd
#define LOAD _mm256_loadu_pd
#define STORE _mm256_storeu_pd
#define ADD _mm256_add_pd
SIM_GK_VEC_DEF(sim_gk_f64_avx2, "avx2,fma", double, 6, SIM_GK_ROWS6)
#undef V
#undef W
#undef ZERO
#undef SET1
#undef FMA
#undef LOAD
#undef STORE
#undef ADD

/* Packs a block by a 16 x 16 transpose: source row r (r < nr, zero
 * after) is src[r][0 .. kk), kk <= 16; writes lanes [0, nr) of
 * dst + k * ldd for k < kk.  nr <= 16. */
__attribute__((target("avx512f"))) static void sim_tr16_f32(
    const float *const *src, int nr, int64_t kk, float *dst, int64_t ldd) {
  __m512 r[16], t[16], u[16], v[16];
  __mmask16 km = (__mmask16)((1u << kk) - 1), om = (__mmask16)((1u << nr) - 1);
  for (int i = 0; i < 16; i++)
    r[i] = i < nr ? _mm512_maskz_loadu_ps(km, src[i]) : _mm512_setzero_ps();
  for (int i = 0; i < 16; i += 2) {
    t[i] = _mm512_unpacklo_ps(r[i], r[i + 1]);
    t[i + 1] = _mm512_unpackhi_ps(r[i], r[i + 1]);
  }
  for (int i = 0; i < 16; i += 4) { /* u[i + e]: element e of rows i..i+3 */
    u[i] = _mm512_shuffle_ps(t[i], t[i + 2], 0x44);
    u[i + 1] = _mm512_shuffle_ps(t[i], t[i + 2], 0xEE);
    u[i + 2] = _mm512_shuffle_ps(t[i + 1], t[i + 3], 0x44);
    u[i + 3] = _mm512_shuffle_ps(t[i + 1], t[i + 3], 0xEE);
  }
  for (int h = 0; h < 16; h += 8)
    for (int e = 0; e < 4; e++) {
      v[h + e] = _mm512_shuffle_f32x4(u[h + e], u[h + 4 + e], 0x88);
      v[h + 4 + e] = _mm512_shuffle_f32x4(u[h + e], u[h + 4 + e], 0xDD);
    }
  for (int e = 0; e < 8; e++) { /* v[e], v[8 + e]: elements e and e + 8 */
    __m512 lo = _mm512_shuffle_f32x4(v[e], v[8 + e], 0x88);
    __m512 hi = _mm512_shuffle_f32x4(v[e], v[8 + e], 0xDD);
    if (e < kk) _mm512_mask_storeu_ps(dst + e * ldd, om, lo);
    if (e + 8 < kk) _mm512_mask_storeu_ps(dst + (e + 8) * ldd, om, hi);
  }
}
#endif /* SIM_GEMM_X86 */

#endif /* SIM_GEMM_KERNELS_H */
