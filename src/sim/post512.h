/*
 * src/sim/post512.h - the epilogue in registers (sim_gpost, internal.h) on
 * AVX-512: one operation or the bounds on a vector of 16 floats, shared by
 * the product's micro-kernels (gemm.c) and the depthwise convolution's
 * (conv_dw.c), and the bounds of the chain loop (fusion.c), the files
 * that include <immintrin.h>.
 * Part of the simulated device; MIT licensed, see LICENSE.
 */
#ifndef SIM_POST512_H
#define SIM_POST512_H
/* after internal.h (which has no guard: each file includes it first) */
#if SIM_X86
#include <immintrin.h>
#define SIM_HAVE_POST512 1

/* v op b (SIM_FZC_*; + SIM_FZC_REV: b op v). */
__attribute__((target("avx512f"))) static inline __m512
sim_gpost_op512(__m512 v, __m512 b, int op) {
  switch (op) {
  case SIM_FZC_ADD: return _mm512_add_ps(v, b);
  case SIM_FZC_SUB: return _mm512_sub_ps(v, b);
  case SIM_FZC_MUL: return _mm512_mul_ps(v, b);
  case SIM_FZC_DIV: return _mm512_div_ps(v, b);
  case SIM_FZC_ADD + SIM_FZC_REV: return _mm512_add_ps(b, v);
  case SIM_FZC_SUB + SIM_FZC_REV: return _mm512_sub_ps(b, v);
  case SIM_FZC_MUL + SIM_FZC_REV: return _mm512_mul_ps(b, v);
  default: return _mm512_div_ps(b, v);
  }
}

/* The bounds (see sim_gpost); max and min on the vector units, where
 * compares into mask registers and blends took most of the epilogue's
 * time.  Exactly the clamp's choices: max(lo, v) is lo > v ? lo : v, and
 * lo >= v differs only for v = -0 under lo = +0, which adding +0 mends
 * (z; else -0, which changes nothing); v went through an operation, so
 * it is no signaling NaN that adding would change.  No lower bound is
 * lo = -inf and no upper one hi = +inf: max(-inf, v) and min(+inf, v)
 * are v, NaN included (sim_gpost_bounds). */
__attribute__((target("avx512f"))) static inline __m512
sim_gpost_bound512(__m512 v, __m512 lo, __m512 z, __m512 hi) {
  return _mm512_min_ps(hi, _mm512_add_ps(_mm512_max_ps(lo, v), z));
}

/* The three vectors of sim_gpost_bound512 for po. */
__attribute__((target("avx512f"))) static inline void
sim_gpost_bounds(const sim_gpost *po, __m512 *lo, __m512 *z, __m512 *hi) {
  *lo = _mm512_set1_ps(po->has_lo ? po->lo : -INFINITY);
  *z = _mm512_set1_ps(po->lo_pz ? 0.0f : -0.0f);
  *hi = _mm512_set1_ps(po->has_hi ? po->hi : INFINITY);
}

/* The epilogue on four vectors of the same columns [col, col + 16) (four
 * positions of a depthwise convolution), lanes outside mask m unused:
 * operands that are column vectors or numbers only, each loaded once.
 * Inlined: called, the four vectors went through memory (the epilogue
 * then cost more than the chain loop it replaces). */
__attribute__((target("avx512f"), always_inline)) static inline void
sim_gpost_cols4(const sim_gpost *po, int64_t col, __mmask16 m, __m512 *v0,
                __m512 *v1, __m512 *v2, __m512 *v3) {
  for (int j = 0; j < po->n; j++) {
    const float *bj = po->b[j];
    __m512 b = po->arg[j] == SIM_GPOST_ONE ? _mm512_set1_ps(bj[0])
                                           : _mm512_maskz_loadu_ps(m, bj + col);
    switch (po->op[j]) { /* once for the four */
#define SIM_GP4(K)                                                            \
  case K:                                                                     \
    *v0 = sim_gpost_op512(*v0, b, K), *v1 = sim_gpost_op512(*v1, b, K);       \
    *v2 = sim_gpost_op512(*v2, b, K), *v3 = sim_gpost_op512(*v3, b, K);       \
    break;
      SIM_GP4(0) SIM_GP4(1) SIM_GP4(2) SIM_GP4(3)
      SIM_GP4(4) SIM_GP4(5) SIM_GP4(6) default: SIM_GP4(7)
#undef SIM_GP4
    }
  }
  if (po->has_lo || po->has_hi) {
    __m512 lo, z, hi;
    sim_gpost_bounds(po, &lo, &z, &hi);
    *v0 = sim_gpost_bound512(*v0, lo, z, hi);
    *v1 = sim_gpost_bound512(*v1, lo, z, hi);
    *v2 = sim_gpost_bound512(*v2, lo, z, hi);
    *v3 = sim_gpost_bound512(*v3, lo, z, hi);
  }
}

/* The epilogue on rows [r0, r0 + mv), columns [c0, c0 + nv) of C (row
 * length ldc = N): the tiles that went through a tile buffer, sixteen
 * columns at a time under a mask, in blocks of SIM_GPOST_RB rows that
 * take each operation in turn (one dispatch on the operation a block, and
 * a column vector or number loaded once for it, where each vector took
 * the whole chain's dispatch: the epilogue of MobileNetV2's projections
 * to 24 features, all through the tile buffer, was a quarter of their
 * time). */
enum { SIM_GPOST_RB = 8 };
__attribute__((target("avx512f"))) static inline void sim_gpost_region(
    const sim_gpost *po, float *C, int64_t ldc, int64_t r0, int64_t mv,
    int64_t c0, int64_t nv) {
  __m512 lo, z, hi;
  sim_gpost_bounds(po, &lo, &z, &hi);
  for (int64_t rb = r0; rb < r0 + mv; rb += SIM_GPOST_RB) {
    int nr = r0 + mv - rb < SIM_GPOST_RB ? (int)(r0 + mv - rb) : SIM_GPOST_RB;
    for (int64_t j = c0; j < c0 + nv; j += 16) {
      __mmask16 m = (__mmask16)(c0 + nv - j >= 16 ? 0xFFFF
                                : (1u << (c0 + nv - j)) - 1);
      float *c = C + rb * ldc + j;
      __m512 v[SIM_GPOST_RB];
      for (int i = 0; i < SIM_GPOST_RB; i++)
        v[i] = i < nr ? _mm512_maskz_loadu_ps(m, c + i * ldc)
                      : _mm512_setzero_ps();
      for (int k = 0; k < po->n; k++) {
        const float *bk = po->b[k];
        int arg = po->arg[k];
        __m512 b = arg == SIM_GPOST_ONE   ? _mm512_set1_ps(bk[0])
                   : arg == SIM_GPOST_COL ? _mm512_maskz_loadu_ps(m, bk + j)
                                          : _mm512_setzero_ps();
        switch (po->op[k]) { /* the operand of row i: b, bk[rb + i] or
                                bk[(rb + i) ldc + j ..] */
#define SIM_GPR(K)                                                            \
  case K:                                                                     \
    for (int i = 0; i < nr; i++) {                                            \
      __m512 bi = arg == SIM_GPOST_ROW ? _mm512_set1_ps(bk[rb + i])            \
                  : arg == SIM_GPOST_ONE || arg == SIM_GPOST_COL              \
                      ? b                                                     \
                      : _mm512_maskz_loadu_ps(m, bk + (rb + i) * ldc + j);    \
      v[i] = sim_gpost_op512(v[i], bi, K);                                    \
    }                                                                         \
    break;
          SIM_GPR(0) SIM_GPR(1) SIM_GPR(2) SIM_GPR(3)
          SIM_GPR(4) SIM_GPR(5) SIM_GPR(6) default: SIM_GPR(7)
#undef SIM_GPR
        }
      }
      for (int i = 0; i < nr; i++)
        _mm512_mask_storeu_ps(c + i * ldc, m,
                              sim_gpost_bound512(v[i], lo, z, hi));
    }
  }
}
#endif
#endif
