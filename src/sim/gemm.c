/*
 * src/sim/gemm.c - dot_general and GEMM: packed, cache-blocked f32/f64 matrix
 * products with portable / AVX2 / AVX-512 micro-kernels; convolution as
 * GEMM; CBLAS where it is faster (XRT_WITH_CBLAS).
 * Part of the simulated device; MIT licensed, see LICENSE.
 */
#include "internal.h"
#include "gemm_kernels.h"

/* Both loop orders add the products of one output in k order, so results
 * do not depend on the layout. */
#define SIM_DOT_DEF(NAME, T, A, ZERO, LD, ST, MAC)                            \
  static void NAME(const sim_dot *d, void *out, const void *lhs,              \
                   const void *rhs, void *accp) {                             \
    const T *L = (const T *)lhs, *R = (const T *)rhs;                         \
    T *O = (T *)out;                                                          \
    A *restrict acc = (A *)accp;                                              \
    int64_t N = d->N, K = d->K;                                               \
    for (int64_t b = 0; b < d->B; b++)                                        \
      for (int64_t m = 0; m < d->M; m++, O += N) {                            \
        const T *lrow = L + d->lb[b] + d->lm[m], *rb = R + d->rb[b];          \
        if (d->unit_n) {                                                      \
          for (int64_t n = 0; n < N; n++) acc[n] = ZERO;                      \
          for (int64_t k = 0; k < K; k++) {                                   \
            A a = LD(lrow[d->lk[k]]);                                         \
            const T *restrict rr = rb + d->rk[k];                             \
            int64_t n = 0;                                                    \
            for (; n + 4 <= N; n += 4) { /* unrolled for SLP vectorizing */  \
              MAC(acc[n], a, LD(rr[n]));                                      \
              MAC(acc[n + 1], a, LD(rr[n + 1]));                              \
              MAC(acc[n + 2], a, LD(rr[n + 2]));                              \
              MAC(acc[n + 3], a, LD(rr[n + 3]));                              \
            }                                                                 \
            for (; n < N; n++) MAC(acc[n], a, LD(rr[n]));                     \
          }                                                                   \
          for (int64_t n = 0; n < N; n++) O[n] = ST(acc[n]);                  \
          continue;                                                           \
        }                                                                     \
        int64_t n = 0;                                                        \
        for (; n + 4 <= N; n += 4) { /* four outputs at once, for ILP */      \
          const T *r0 = rb + d->rn[n], *r1 = rb + d->rn[n + 1];               \
          const T *r2 = rb + d->rn[n + 2], *r3 = rb + d->rn[n + 3];           \
          A s0 = ZERO, s1 = ZERO, s2 = ZERO, s3 = ZERO;                       \
          for (int64_t k = 0; k < K; k++) {                                   \
            A a = LD(lrow[d->lk[k]]);                                         \
            int64_t o = d->rk[k];                                             \
            MAC(s0, a, LD(r0[o]));                                            \
            MAC(s1, a, LD(r1[o]));                                            \
            MAC(s2, a, LD(r2[o]));                                            \
            MAC(s3, a, LD(r3[o]));                                            \
          }                                                                   \
          O[n] = ST(s0), O[n + 1] = ST(s1), O[n + 2] = ST(s2);                \
          O[n + 3] = ST(s3);                                                  \
        }                                                                     \
        for (; n < N; n++) {                                                  \
          const T *rr = rb + d->rn[n];                                        \
          A s = ZERO;                                                         \
          for (int64_t k = 0; k < K; k++)                                     \
            MAC(s, LD(lrow[d->lk[k]]), LD(rr[d->rk[k]]));                     \
          O[n] = ST(s);                                                       \
        }                                                                     \
      }                                                                       \
  }
#define SIM_ST_F16(x) xrt_f32_to_f16(x)
#define SIM_ST_BF16(x) xrt_f32_to_bf16(x)

static const sim_c64 sim_c64_zero = {0, 0};
static const sim_c128 sim_c128_zero = {0, 0};

SIM_DOT_DEF(sim_dot_f32, float, float, 0.0f, SIM_LD_ID, SIM_LD_ID, SIM_MAC_F)
SIM_DOT_DEF(sim_dot_f64, double, double, 0.0, SIM_LD_ID, SIM_LD_ID, SIM_MAC_F)
SIM_DOT_DEF(sim_dot_f16, uint16_t, float, 0.0f, SIM_LD_F16, SIM_ST_F16,
            SIM_MAC_F)
SIM_DOT_DEF(sim_dot_bf16, uint16_t, float, 0.0f, SIM_LD_BF16, SIM_ST_BF16,
            SIM_MAC_F)
SIM_DOT_DEF(sim_dot_u8, uint8_t, uint8_t, 0, SIM_LD_ID, SIM_LD_ID, SIM_MAC_U32)
SIM_DOT_DEF(sim_dot_u16, uint16_t, uint16_t, 0, SIM_LD_ID, SIM_LD_ID,
            SIM_MAC_U32)
SIM_DOT_DEF(sim_dot_u32, uint32_t, uint32_t, 0, SIM_LD_ID, SIM_LD_ID,
            SIM_MAC_U32)
SIM_DOT_DEF(sim_dot_u64, uint64_t, uint64_t, 0, SIM_LD_ID, SIM_LD_ID,
            SIM_MAC_U64)
SIM_DOT_DEF(sim_dot_c64, sim_c64, sim_c64, sim_c64_zero, SIM_LD_ID, SIM_LD_ID,
            SIM_MAC_C64)
SIM_DOT_DEF(sim_dot_c128, sim_c128, sim_c128, sim_c128_zero, SIM_LD_ID,
            SIM_LD_ID, SIM_MAC_C128)

/* Kernel and accumulator element size for a result type. Signed and
 * sub-byte integers use the unsigned kernels (same bits mod 2^w). */
SIM_PRIVATE sim_dot_fn sim_dot_for(xrt_dtype t, size_t *acc_size) {
  *acc_size = sim_esize(t);
  switch (t) {
  case XRT_F32: return sim_dot_f32;
  case XRT_F64: return sim_dot_f64;
  case XRT_F16: *acc_size = 4; return sim_dot_f16;
  case XRT_BF16: *acc_size = 4; return sim_dot_bf16;
  case XRT_S8: case XRT_U8: case XRT_S2: case XRT_S4: case XRT_U2:
  case XRT_U4: return sim_dot_u8;
  case XRT_S16: case XRT_U16: return sim_dot_u16;
  case XRT_S32: case XRT_U32: return sim_dot_u32;
  case XRT_S64: case XRT_U64: return sim_dot_u64;
  case XRT_C64: return sim_dot_c64;
  case XRT_C128: return sim_dot_c128;
  default: return NULL;
  }
}

SIM_PRIVATE xrt_status sim_run_dot(const sim_step *st, void **vals, sim_cx *cx) {
  const sim_dot *d = (const sim_dot *)st->data;
  const void *l = vals[st->in[0]], *r = vals[st->in[1]];
  void *out = vals[st->out[0]];
  void *res = d->otmp >= 0 ? vals[d->otmp] : out;
  (void)cx;
  if (d->ltmp >= 0) {
    sim_convert(vals[d->ltmp], l, d->lnumel, d->lt, d->ct);
    l = vals[d->ltmp];
  }
  if (d->rtmp >= 0) {
    sim_convert(vals[d->rtmp], r, d->rnumel, d->rt, d->ct);
    r = vals[d->rtmp];
  }
  d->fn(d, res, l, r, d->acc >= 0 ? vals[d->acc] : NULL);
  if (d->otmp >= 0) sim_convert(out, res, d->onumel, d->ct, d->ot);
  if (d->wrap != XRT_DTYPE_INVALID) sim_wrap_all(d->wrap, out, d->onumel);
  return XRT_OK;
}
/* ======================================================================
 * GEMM: packed, cache-blocked f32/f64 matrix products (dot_general and
 * convolution)
 *
 * C[b, m, n] = sum_k A[b, m, k] * B[b, k, n] in the GotoBLAS/BLIS order,
 * with the roles of the operands chosen for a row-major C: the micro-kernel
 * holds an MR x NR tile of C in vector registers, NR along n (vectors) and
 * MR along m (broadcasts).  So a packed A micro-panel (MR x kc) stays in
 * L1, the packed B block (kc x nc) of one worker in L2 and the packed A
 * block (mc x kc) in L2/L3.  The device's threads each take one lane: a
 * range of C's rows or columns, with its own pack buffers:
 *
 *   per lane, for ic in its rows by mc, pc in K by kc: pack A block
 *     for jc in its columns by nc: pack B block
 *       for each A micro-panel, for each B micro-panel: kernel into C
 *
 * Full tiles go straight to C (the kernel stores or adds), edge tiles
 * through a small tile buffer.  A lane whose columns fit one column block
 * (N <= nc, as in most convolutions) runs sim_gemm_narrow instead: B packed
 * once per K block (all of K when it fits), each A micro-panel packed just
 * before its kernels.  f32 convolutions with contiguous features pack A in
 * strips of 16 k (SIM_GK_STRIP: vector copies of feature runs, no
 * transpose) for a kernel variant that reads that layout (sim_gk.fs).
 * Operands are read through element-offset tables (the ones dot_general
 * computes for any dimension layout, or a convolution's windows), so no
 * transposing copy is made; affine tables get strided fast paths.  f32
 * rows of A contiguous in k are strip-packed too (copies of 16-k runs).
 * When B is an argument of the execute (a model's weights), all of it is
 * kept packed across calls in the client's cache (gemm_cache.c, keyed by
 * the buffer's memory and write generation), so later calls skip its
 * packing (sim_gemm_bpre).  Every other buffer is plan scratch, so
 * execute allocates nothing but that cache's entries.  Kernels exist for
 * AVX-512, AVX2+FMA and portable C, picked at compile time of the program
 * from the running CPU (XRT_SIM_GEMM=c|avx2|avx512|off forces one, for
 * tests; off keeps the plain loops).  With XRT_WITH_CBLAS large products in
 * a BLAS layout call cblas_sgemm / cblas_dgemm instead when CBLAS timed
 * faster on this machine (sim_blas_faster).
 * ==================================================================== */

#ifdef XRT_WITH_CBLAS
#include <cblas.h>
#endif

/* Kernel tables: [0] portable, [1] AVX2, [2] AVX-512; f32 then f64. */
static const sim_gk sim_gks[2][3] = {
    {{"c", 4, 16, 1024, 256, 256, sim_gk_f32_c, NULL, NULL},
#if SIM_GEMM_X86
     {"avx2", 6, 16, 2040, 384, 256, sim_gk_f32_avx2, NULL, NULL},
     {"avx512", 12, 32, 2040, 384, 320, sim_gk_f32_avx512, sim_tr16_f32,
      sim_gk_f32_avx512_strip}},
#else
     {NULL, 0, 0, 0, 0, 0, NULL, NULL, NULL},
     {NULL, 0, 0, 0, 0, 0, NULL, NULL, NULL}},
#endif
    {{"c", 4, 8, 1024, 256, 128, sim_gk_f64_c, NULL, NULL},
#if SIM_GEMM_X86
     {"avx2", 6, 8, 1020, 256, 256, sim_gk_f64_avx2, NULL, NULL},
     {"avx512", 12, 16, 1020, 256, 240, sim_gk_f64_avx512, NULL, NULL}},
#else
     {NULL, 0, 0, 0, 0, 0, NULL, NULL, NULL},
     {NULL, 0, 0, 0, 0, 0, NULL, NULL, NULL}},
#endif
};

/* The best path the CPU runs, or the one XRT_SIM_GEMM names (clamped to
 * what the CPU runs); -1: off. */
static int sim_gemm_path(void) {
  int best = 0;
#if SIM_GEMM_X86
  __builtin_cpu_init();
  if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma"))
    best = 1;
  if (best == 1 && __builtin_cpu_supports("avx512f")) best = 2;
#endif
  if (best > sim_isa_cap()) best = sim_isa_cap();
  const char *e = getenv("XRT_SIM_GEMM");
  if (!e || !*e) return best;
  if (!strcmp(e, "off")) return -1;
  int want = !strcmp(e, "c") ? 0 : !strcmp(e, "avx2") ? 1 : 2;
  return want < best ? want : best;
}

/* A convolution's lhs as the A operand: row m is (batch, output position),
 * column k is (window position, input feature), feature fastest.  A[m, k]
 * is lhs[off] with off = row[m] + kf[k] + sum_d tab_d[pos_d(m), win_d(k)],
 * or 0 where a table says padding / lhs-dilation hole. */
typedef struct sim_gconv {
  int32_t ns;
  const int64_t *tab;        /* sim_conv tables */
  int64_t K[XRT_MAX_RANK];   /* the window's size per spatial dimension */
  const int32_t *mpos;       /* per row, ns entries: pos_d * K_d + toff_d */
  const int32_t *kwin;       /* per window position, ns entries: win_d */
  int64_t Cg, lf;            /* features per group, their lhs stride */
  /* Interior rows, whose every window position is in lhs: row r's
   * window position w is at rbase[r] + wdelta[w] (rbase[r] < 0: not
   * interior), so packing needs no table walk per position. */
  const int64_t *rbase, *wdelta;
} sim_gconv;

/* The lhs offset of window position kw over the first nd spatial
 * dimensions from the row's table starts mp; *ok = 0 when one of them is
 * padding or a hole. */
static inline int64_t sim_gconv_at(const sim_gconv *cv, const int32_t *mp,
                                   const int32_t *kw, int32_t nd, int *ok) {
  int64_t off = 0;
  *ok = 1;
  for (int32_t s = 0; s < nd; s++) {
    int64_t t = cv->tab[mp[s] + kw[s]];
    *ok &= t >= 0;
    off += t;
  }
  return off;
}

typedef struct sim_gemm {
  const sim_gk *k;
  size_t es;
  int64_t BT, M, N, K;
  int64_t mc, kc, nc;
  /* Element offsets: batch (ab, bb, cb), rows and columns of each
   * operand; a stride s > 0 means the table is i * s (fast paths). */
  const int64_t *ab, *bb, *cb, *am, *ak, *bk, *bn, *cm, *cn;
  int64_t am_s, ak_s, bk_s, bn_s, cm_s, cn_s;
  const sim_gconv *conv; /* A is a convolution's windows, else NULL */
  int32_t apack, bpack;  /* scratch */
  int lanes;             /* workers, each with its own B block */
  size_t apack_lane, bpack_lane; /* elements */
  int blas;              /* call CBLAS (XRT_WITH_CBLAS) */
  int astrip;            /* A strip-packed for k->fs (see SIM_GK_STRIP) */
  int64_t np;            /* N rounded up to whole micro-panels */
  uint64_t gid;          /* B may be kept packed (gemm_cache.c), else 0 */
  uint64_t gida;         /* A likewise (sim_gemm_keep_a), else 0 */
} sim_gemm;

/* ---- packing ---- */

/* The packing and tile store functions of element type T. */
#define SIM_GPACK_DEF(SFX, T)                                                \
  /* Lane x (x < nl) of a panel, read from src + off[x], to dst[k * R + x]   \
   * for k < kb: at ks + k in blocks of 16 k (a transpose, one line each)    \
   * when kmap is NULL, else at kmap[k]. */                                  \
  static void sim_gpack_lanes_##SFX(T *dst, int R, const T *src,             \
                                    const int64_t *off, int64_t nl,          \
                                    int64_t ks, const int64_t *kmap,         \
                                    int64_t kb) {                            \
    if (!kmap) {                                                             \
      for (int64_t k = 0; k < kb; k += 16) {                                 \
        int64_t kk = kb - k < 16 ? kb - k : 16;                              \
        for (int64_t x = 0; x < nl; x++) {                                   \
          const T *s = src + off[x] + ks + k;                                \
          T *d = dst + k * R + x;                                            \
          for (int64_t t = 0; t < kk; t++) d[t * R] = s[t];                  \
        }                                                                    \
      }                                                                      \
      return;                                                                \
    }                                                                        \
    for (int64_t x = 0; x < nl; x++) {                                       \
      const T *s = src + off[x];                                             \
      T *d = dst + x;                                                        \
      for (int64_t k = 0; k < kb; k++) d[k * R] = s[kmap[k]];                \
    }                                                                        \
  }                                                                          \
                                                                             \
  /* One A micro-panel: rows r0 .. r0+mv (mv <= MR, rest zero) of columns    \
   * k0 .. k0+kb, into dst[k * MR + i]. */                                   \
  static void sim_gpack_a_##SFX(const sim_gemm *g, const T *a, int64_t r0,  \
                                int64_t mv, int64_t k0, int64_t kb,          \
                                T *dst) {                                    \
    const int MR = g->k->mr;                                                 \
    if (mv < MR)                                                             \
      for (int64_t k = 0; k < kb; k++)                                       \
        for (int i = (int)mv; i < MR; i++) dst[k * MR + i] = 0;              \
    if (g->am_s == 1) {                                                      \
      for (int64_t k = 0; k < kb; k++) {                                     \
        const T *s = a + g->am[r0] + g->ak[k0 + k];                          \
        for (int64_t i = 0; i < mv; i++) dst[k * MR + i] = s[i];             \
      }                                                                      \
      return;                                                                \
    }                                                                        \
    if (g->ak_s == 1 && TR16(g)) {                                           \
      const float *rows[16];                                                 \
      for (int64_t i = 0; i < mv; i++)                                       \
        rows[i] = (const float *)(const void *)(a + g->am[r0 + i] + k0);     \
      for (int64_t k = 0; k < kb; k += 16, dst += 16 * MR) {                 \
        g->k->tr16(rows, (int)mv, kb - k < 16 ? kb - k : 16,                 \
                   (float *)(void *)dst, MR);                                \
        for (int64_t i = 0; i < mv; i++) rows[i] += 16;                      \
      }                                                                      \
      return;                                                                \
    }                                                                        \
    if (g->ak_s == 1)                                                        \
      sim_gpack_lanes_##SFX(dst, MR, a, g->am + r0, mv, k0, NULL, kb);       \
    else                                                                     \
      sim_gpack_lanes_##SFX(dst, MR, a, g->am + r0, mv, 0, g->ak + k0, kb);  \
  }                                                                          \
                                                                             \
  /* A micro-panel of a convolution: runs of Cg features per window. */     \
  static void sim_gpack_conv_##SFX(const sim_gemm *g, const T *a,           \
                                   int64_t r0, int64_t mv, int64_t k0,       \
                                   int64_t kb, T *dst) {                     \
    const int MR = g->k->mr;                                                 \
    const sim_gconv *cv = g->conv;                                           \
    int32_t ns = cv->ns;                                                     \
    for (int64_t i = 0; i < MR; i++) {                                       \
      T *d = dst + i;                                                        \
      if (i >= mv) {                                                         \
        for (int64_t k = 0; k < kb; k++) d[k * MR] = 0;                      \
        continue;                                                            \
      }                                                                      \
      const int32_t *mp = cv->mpos + (r0 + i) * ns;                          \
      const T *row = a + g->am[r0 + i];                                      \
      for (int64_t k = 0; k < kb;) {                                         \
        int64_t kk = k0 + k, w = kk / cv->Cg, f = kk % cv->Cg;               \
        int64_t run = cv->Cg - f < kb - k ? cv->Cg - f : kb - k;             \
        int ok;                                                              \
        int64_t off = sim_gconv_at(cv, mp, cv->kwin + w * ns, ns, &ok);      \
        T *o = d + k * MR;                                                   \
        if (!ok) {                                                           \
          for (int64_t j = 0; j < run; j++) o[j * MR] = 0;                   \
        } else {                                                             \
          const T *s = row + off + f * cv->lf;                               \
          if (cv->lf == 1)                                                   \
            for (int64_t j = 0; j < run; j++) o[j * MR] = s[j];              \
          else                                                               \
            for (int64_t j = 0; j < run; j++) o[j * MR] = s[j * cv->lf];     \
        }                                                                    \
        k += run;                                                            \
      }                                                                      \
    }                                                                        \
  }                                                                          \
                                                                             \
  /* One B micro-panel: columns c0 .. c0+nv (rest zero), rows k0 .. k0+kb,  \
   * into dst[k * NR + j]. */                                                \
  static void sim_gpack_b_##SFX(const sim_gemm *g, const T *b, int64_t c0,  \
                                int64_t nv, int64_t k0, int64_t kb,          \
                                T *dst) {                                    \
    const int NR = g->k->nr;                                                 \
    if (nv < NR)                                                             \
      for (int64_t k = 0; k < kb; k++)                                       \
        for (int j = (int)nv; j < NR; j++) dst[k * NR + j] = 0;              \
    if (g->bn_s == 1) {                                                      \
      const T *s = b + g->bn[c0];                                            \
      const int64_t *bk = g->bk + k0;                                        \
      if (nv * sizeof(T) == 128) /* constant size: inline copies */          \
        for (int64_t k = 0; k < kb; k++) memcpy(dst + k * NR, s + bk[k], 128); \
      else if (nv * sizeof(T) == 64)                                         \
        for (int64_t k = 0; k < kb; k++) memcpy(dst + k * NR, s + bk[k], 64); \
      else                                                                   \
        for (int64_t k = 0; k < kb; k++)                                     \
          memcpy(dst + k * NR, s + bk[k], sizeof(T) * (size_t)nv);           \
      return;                                                                \
    }                                                                        \
    if (g->bk_s == 1 && TR16(g)) {                                           \
      for (int64_t j0 = 0; j0 < nv; j0 += 16) {                              \
        const float *cols[16];                                               \
        int64_t nj = nv - j0 < 16 ? nv - j0 : 16;                            \
        for (int64_t j = 0; j < nj; j++)                                     \
          cols[j] = (const float *)(const void *)(b + g->bn[c0 + j0 + j] +   \
                                                  g->bk[k0]);                \
        T *d = dst + j0;                                                     \
        for (int64_t k = 0; k < kb; k += 16, d += 16 * NR) {                 \
          g->k->tr16(cols, (int)nj, kb - k < 16 ? kb - k : 16,               \
                     (float *)(void *)d, NR);                                \
          for (int64_t j = 0; j < nj; j++) cols[j] += 16;                    \
        }                                                                    \
      }                                                                      \
      return;                                                                \
    }                                                                        \
    if (g->bk_s == 1)                                                        \
      sim_gpack_lanes_##SFX(dst, NR, b, g->bn + c0, nv, g->bk[k0], NULL, kb); \
    else                                                                     \
      sim_gpack_lanes_##SFX(dst, NR, b, g->bn + c0, nv, 0, g->bk + k0, kb);  \
  }                                                                          \
                                                                             \
  /* Adds (or stores, when first) the valid mv x nv part of a tile. */      \
  static void sim_gstore_##SFX(const sim_gemm *g, T *c, const T *tile,      \
                               int64_t r0, int64_t mv, int64_t c0,           \
                               int64_t nv, int first) {                      \
    const int NR = g->k->nr;                                                 \
    for (int64_t i = 0; i < mv; i++, tile += NR) {                           \
      T *row = c + g->cm[r0 + i];                                            \
      if (g->cn_s == 1) {                                                    \
        T *restrict o = row + c0;                                            \
        if (first)                                                           \
          memcpy(o, tile, sizeof(T) * (size_t)nv);                           \
        else                                                                 \
          for (int64_t j = 0; j < nv; j++) o[j] += tile[j];                  \
      } else {                                                               \
        const int64_t *cn = g->cn + c0;                                      \
        if (first)                                                           \
          for (int64_t j = 0; j < nv; j++) row[cn[j]] = tile[j];             \
        else                                                                 \
          for (int64_t j = 0; j < nv; j++) row[cn[j]] += tile[j];            \
      }                                                                      \
    }                                                                        \
  }                                                                          \

#define TR16(g) ((g)->k->tr16 != NULL)
SIM_GPACK_DEF(f32, float)
#undef TR16
#define TR16(g) 0
SIM_GPACK_DEF(f64, double)
#undef TR16

/* ---- the blocked loops ---- */

/* One (batch, ic, pc) block's state shared by the workers. */
typedef struct sim_gblk {
  const sim_gemm *g;
  const char *a, *b;
  char *c;
  char *apack, *bpack;
  int64_t ic, mb, pc, kb;
  int first;
  int lanes; /* in use: at most g->lanes, at most the pool's threads */
  /* All of this batch's B packed (sim_gemm_bpre), or NULL: pack here */
  const char *bpre;
  /* All of A packed (sim_gemm_apre, one batch), or NULL: pack here */
  const char *apre;
  /* Rows of C done (every column, every K block) go to epi on the lane's
   * thread while they are in its cache (sim_gemm_run_epi), or NULL */
  sim_gemm_epi_fn epi;
  void *epi_ctx;
  /* The epilogue the last K block's kernels apply (sim_gemm_run_packed_with),
   * or NULL */
  const sim_gpost *post;
  /* The current micro-panel read in place (sim_gdir), or NULL */
  const void *dir;
} sim_gblk;

/* Copies n elements of one row of A, from column k of the panel on, into
 * a strip-packed micro-panel of kb columns (see SIM_GK_STRIP); src NULL
 * means zeros.  Only the AVX-512 kernel has strips (k->fs), so the runs
 * (at most a strip each) are masked vector copies, not calls to memcpy:
 * features come in short runs when a window position has few (the RGB
 * input of a first layer). */
#if SIM_GEMM_X86
__attribute__((target("avx512f")))
#endif
static void sim_gstrip_put(float *dst, int64_t MR, int64_t kb, int64_t i,
                           int64_t k, int64_t n, const float *src) {
  while (n > 0) {
    int64_t s0 = k / SIM_GK_STRIP * SIM_GK_STRIP, t = k - s0;
    int64_t S = kb - s0 < SIM_GK_STRIP ? kb - s0 : SIM_GK_STRIP;
    int64_t c = S - t < n ? S - t : n;
    float *d = dst + s0 * MR + i * S + t;
#if SIM_GEMM_X86
    __mmask16 m = (__mmask16)((1u << c) - 1); /* c <= 16 */
    _mm512_mask_storeu_ps(d, m, src ? _mm512_maskz_loadu_ps(m, src)
                                    : _mm512_setzero_ps());
#else
    if (c == SIM_GK_STRIP && src) /* constant size: one vector copy */
      memcpy(d, src, sizeof(float) * SIM_GK_STRIP);
    else if (src)
      memcpy(d, src, sizeof(float) * (size_t)c);
    else
      memset(d, 0, sizeof(float) * (size_t)c);
#endif
    k += c, n -= c;
    if (src) src += c;
  }
}

#if SIM_GEMM_X86
/* sim_gstrip_put for whole strips: k and n multiples of SIM_GK_STRIP and
 * the panel's columns too (kb % 16 == 0). */
__attribute__((target("avx512f"))) static void sim_gstrip_put16(
    float *dst, int64_t MR, int64_t i, int64_t k, int64_t n,
    const float *src) {
  float *d = dst + k * MR + i * SIM_GK_STRIP;
  __m512 z = _mm512_setzero_ps();
  for (int64_t j = 0; j < n; j += 16, d += 16 * MR)
    _mm512_storeu_ps(d, src ? _mm512_loadu_ps(src + j) : z);
}
#endif

/* sim_gpack_conv_strip for runs shorter than a strip (Cg < 16, as the RGB
 * input of a first layer).  Window positions whose features follow one
 * another in lhs (the next kx of NHWC, Cg floats further) are one copy,
 * padding positions one run of zeros: a 7x7 window over 3 features is 7
 * copies of 21 floats per row, not 49 of 3.  A row whose window rows are
 * each one run is assembled in a buffer with whole-vector copies, then
 * put into its strips whole: masked copies of a few floats straight into
 * the strips cost 3x more (a micro-benchmark of the 7x7 stem's packing on
 * Zen 5). */

/* Row i's runs, window position by window position (any k0, kb), each
 * put into the strips as it ends. */
static void sim_gpack_short_row(const sim_gemm *g, const float *base,
                                const int32_t *mp, int64_t i, int64_t k0,
                                int64_t kb, float *dst) {
  const sim_gconv *cv = g->conv;
  const int64_t MR = g->k->mr, Cg = cv->Cg;
  int32_t ns = cv->ns;
  const float *src = NULL; /* the pending run: its source, or zeros */
  int64_t at = 0, n = 0;   /* its first column and length */
  int64_t w = k0 / Cg, f = k0 % Cg;
  for (int64_t k = 0; k < kb; w++, f = 0) {
    int64_t run = Cg - f < kb - k ? Cg - f : kb - k;
    int ok;
    int64_t off = sim_gconv_at(cv, mp, cv->kwin + w * ns, ns, &ok);
    const float *p = ok ? base + off + f : NULL;
    if (n > 0 && !(p ? src && src + n == p : !src)) {
      sim_gstrip_put(dst, MR, kb, i, at, n, src);
      n = 0;
    }
    if (n == 0) src = p, at = k;
    n += run;
    k += run;
  }
  if (n > 0) sim_gstrip_put(dst, MR, kb, i, at, n, src);
}

/* The valid window positions [*xa, *xb) of the last dimension for a row
 * whose table entries there are tx: 1 when they are one interval whose lhs
 * offsets step by Cg (no lhs dilation), so each row of the window is one
 * run of features. */
static int sim_gpack_short_span(const int64_t *tx, int64_t KX, int64_t Cg,
                                int64_t *xa, int64_t *xb) {
  int64_t a = 0, b;
  while (a < KX && tx[a] < 0) a++;
  for (b = a; b < KX && tx[b] >= 0; b++)
    if (tx[b] != tx[a] + (b - a) * Cg) return 0;
  for (int64_t x = b; x < KX; x++)
    if (tx[x] >= 0) return 0;
  *xa = a, *xb = b;
  return 1;
}

/* n floats of src (NULL: zeros) to row, whole vectors but the last. */
#if SIM_GEMM_X86
__attribute__((target("avx512f")))
#endif
static void sim_grow_put(float *row, int64_t n, const float *src) {
#if SIM_GEMM_X86
  const __m512 z = _mm512_setzero_ps();
  int64_t j = 0;
  for (; j + 16 <= n; j += 16)
    _mm512_storeu_ps(row + j, src ? _mm512_loadu_ps(src + j) : z);
  if (j < n) {
    __mmask16 m = (__mmask16)((1u << (n - j)) - 1);
    _mm512_mask_storeu_ps(row + j, m, src ? _mm512_maskz_loadu_ps(m, src + j) : z);
  }
#else
  if (src)
    memcpy(row, src, sizeof(float) * (size_t)n);
  else
    memset(row, 0, sizeof(float) * (size_t)n);
#endif
}

enum { SIM_GSHORT_MAX = 1024 }; /* most k of a row assembled in a buffer */

/* Row i of the whole window (k0 = 0, kb = Wn * Cg) through a buffer:
 * window row by window row, the valid kx [xa, xb) one run. */
static void sim_gpack_short_whole(const sim_gemm *g, const float *base,
                                  const int32_t *mp, int64_t i, int64_t xa,
                                  int64_t xb, int64_t kb, float *dst) {
  const sim_gconv *cv = g->conv;
  const int64_t MR = g->k->mr, Cg = cv->Cg;
  const int32_t last = cv->ns - 1;
  const int64_t KX = cv->K[last], WX = KX * Cg; /* one row of the window */
  const int64_t *tx = cv->tab + mp[last];
  float row[SIM_GSHORT_MAX];
  for (int64_t w = 0, k = 0; k < kb; w += KX, k += WX) {
    int ok; /* the window row's kx = 0 position, but for its kx */
    int64_t off = sim_gconv_at(cv, mp, cv->kwin + w * cv->ns, last, &ok);
    if (!ok || xa == xb) {
      sim_grow_put(row + k, WX, NULL);
      continue;
    }
    sim_grow_put(row + k, xa * Cg, NULL);
    sim_grow_put(row + k + xa * Cg, (xb - xa) * Cg, base + off + tx[xa]);
    sim_grow_put(row + k + xb * Cg, (KX - xb) * Cg, NULL);
  }
  int64_t kf = 0; /* whole strips: vector copies */
#if SIM_GEMM_X86
  kf = kb / SIM_GK_STRIP * SIM_GK_STRIP;
  if (kf) sim_gstrip_put16(dst, MR, i, 0, kf, row);
#endif
  if (kf < kb) sim_gstrip_put(dst, MR, kb, i, kf, kb - kf, row + kf);
}

static void sim_gpack_conv_short(const sim_gemm *g, const float *a, int64_t r0,
                                 int64_t mv, int64_t k0, int64_t kb,
                                 float *dst) {
  const sim_gconv *cv = g->conv;
  const int64_t MR = g->k->mr, Cg = cv->Cg;
  const int32_t last = cv->ns - 1;
  int64_t Wn = 1;
  for (int32_t s = 0; s < cv->ns; s++) Wn *= cv->K[s];
  int whole = k0 == 0 && kb == Wn * Cg && kb <= SIM_GSHORT_MAX;
  for (int64_t i = 0; i < MR; i++) {
    if (i >= mv) {
      sim_gstrip_put(dst, MR, kb, i, 0, kb, NULL);
      continue;
    }
    const int32_t *mp = cv->mpos + (r0 + i) * cv->ns;
    const float *base = a + g->am[r0 + i];
    int64_t xa, xb;
    if (whole && sim_gpack_short_span(cv->tab + mp[last], cv->K[last], Cg,
                                      &xa, &xb))
      sim_gpack_short_whole(g, base, mp, i, xa, xb, kb, dst);
    else
      sim_gpack_short_row(g, base, mp, i, k0, kb, dst);
  }
}

#if SIM_GEMM_X86
enum { SIM_GPACK_MR = 16 }; /* rows of a micro-panel, at most */

/* sim_gpack_conv_strip for whole strips (Cg, k0 and kb multiples of 16):
 * each row's source found once (interior rows: rbase; the others walk
 * the tables per window position), then per window position the rows'
 * runs copied a vector at a time.  The table walk per row and position
 * and a call per run took as long as the copies: a fifth of a 3x3
 * convolution over 56x56x64 was its packing. */
__attribute__((target("avx512f"))) static void sim_gpack_conv_whole(
    const sim_gemm *g, const float *a, int64_t r0, int64_t mv, int64_t k0,
    int64_t kb, float *dst) {
  const sim_gconv *cv = g->conv;
  const int64_t MR = g->k->mr, Cg = cv->Cg;
  const int32_t ns = cv->ns;
  const float *rowp[SIM_GPACK_MR]; /* interior: window position 0's */
  int edge[SIM_GPACK_MR];          /* walks the tables */
  for (int64_t i = 0; i < MR; i++) {
    int64_t rb = i < mv ? cv->rbase[r0 + i] : -1;
    rowp[i] = rb >= 0 ? a + g->am[r0 + i] + rb : NULL;
    edge[i] = i < mv && rb < 0;
  }
  const __m512 z = _mm512_setzero_ps();
  for (int64_t k = 0; k < kb;) {
    int64_t kk = k0 + k, w = kk / Cg, f = kk % Cg;
    int64_t run = Cg - f < kb - k ? Cg - f : kb - k;
    const int64_t dw = cv->wdelta[w] + f;
    float *d = dst + k * MR;
    for (int64_t i = 0; i < MR; i++, d += SIM_GK_STRIP) {
      const float *s = rowp[i] ? rowp[i] + dw : NULL;
      if (edge[i]) {
        int ok;
        int64_t off = sim_gconv_at(cv, cv->mpos + (r0 + i) * ns,
                                   cv->kwin + w * ns, ns, &ok);
        if (ok) s = a + g->am[r0 + i] + off + f;
      }
      float *o = d;
      if (s)
        for (int64_t j = 0; j < run; j += 16, o += 16 * MR)
          _mm512_storeu_ps(o, _mm512_loadu_ps(s + j));
      else
        for (int64_t j = 0; j < run; j += 16, o += 16 * MR)
          _mm512_storeu_ps(o, z);
    }
    k += run;
  }
}
#endif

/* A convolution micro-panel for f32 with contiguous features (lf == 1),
 * strip-packed: per window position each row copies a run of features, or
 * zeros (padding, rows past mv). */
static void sim_gpack_conv_strip(const sim_gemm *g, const float *a,
                                 int64_t r0, int64_t mv, int64_t k0,
                                 int64_t kb, float *dst) {
  const int64_t MR = g->k->mr;
  const sim_gconv *cv = g->conv;
  int32_t ns = cv->ns;
  if (cv->Cg < SIM_GK_STRIP) {
    sim_gpack_conv_short(g, a, r0, mv, k0, kb, dst);
    return;
  }
  /* Only the AVX-512 kernel has strips (k->fs), so the vector copy runs. */
  int whole = cv->Cg % SIM_GK_STRIP == 0 && k0 % SIM_GK_STRIP == 0 &&
              kb % SIM_GK_STRIP == 0;
  (void)whole;
#if SIM_GEMM_X86
  if (whole && MR <= SIM_GPACK_MR && cv->rbase) {
    sim_gpack_conv_whole(g, a, r0, mv, k0, kb, dst);
    return;
  }
#endif
  for (int64_t k = 0; k < kb;) {
    int64_t kk = k0 + k, w = kk / cv->Cg, f = kk % cv->Cg;
    int64_t run = cv->Cg - f < kb - k ? cv->Cg - f : kb - k;
    const int32_t *kw = cv->kwin + w * ns;
    for (int64_t i = 0; i < MR; i++) {
      const float *src = NULL;
      if (i < mv) {
        int ok;
        int64_t off = sim_gconv_at(cv, cv->mpos + (r0 + i) * ns, kw, ns, &ok);
        if (ok) src = a + g->am[r0 + i] + off + f;
      }
#if SIM_GEMM_X86
      if (whole) {
        sim_gstrip_put16(dst, MR, i, k, run, src);
        continue;
      }
#endif
      sim_gstrip_put(dst, MR, kb, i, k, run, src);
    }
    k += run;
  }
}

#if SIM_GEMM_X86
/* An f32 A micro-panel whose rows are contiguous in m (A transposed, as
 * jax.grad's products have it): per k one masked vector copy of mv <= 16
 * rows, zeros after them. */
__attribute__((target("avx512f"))) static void sim_gpack_a_mrun(
    const sim_gemm *g, const float *a, int64_t r0, int64_t mv, int64_t k0,
    int64_t kb, float *dst) {
  const int64_t MR = g->k->mr;
  const __mmask16 m = (__mmask16)((1u << mv) - 1);
  const __mmask16 w = (__mmask16)((1u << MR) - 1);
  const float *s = a + g->am[r0];
  for (int64_t k = 0; k < kb; k++)
    _mm512_mask_storeu_ps(dst + k * MR, w,
                          _mm512_maskz_loadu_ps(m, s + g->ak[k0 + k]));
}
#endif

static void sim_gpack_a_panel(const sim_gblk *x, int64_t p) {
  const sim_gemm *g = x->g;
  int64_t MR = g->k->mr, r0 = x->ic + p * MR;
  int64_t mv = x->mb - p * MR < MR ? x->mb - p * MR : MR;
  char *dst = x->apack + (size_t)(p * MR * x->kb) * g->es;
  if (g->es == 4) {
    if (g->astrip && !g->conv) { /* rows contiguous in k: runs of them */
      const float *a = (const float *)(const void *)x->a;
      float *d = (float *)(void *)dst;
      int64_t kf = 0; /* whole strips: vector copies */
#if SIM_GEMM_X86
      kf = x->kb / SIM_GK_STRIP * SIM_GK_STRIP;
#endif
      for (int64_t i = 0; i < MR; i++) {
        const float *src = i < mv ? a + g->am[r0 + i] + x->pc : NULL;
#if SIM_GEMM_X86
        if (kf) sim_gstrip_put16(d, MR, i, 0, kf, src);
#endif
        if (kf < x->kb)
          sim_gstrip_put(d, MR, x->kb, i, kf, x->kb - kf, src ? src + kf : NULL);
      }
      return;
    }
    if (g->astrip) {
      sim_gpack_conv_strip(g, (const float *)(const void *)x->a, r0, mv,
                           x->pc, x->kb, (float *)(void *)dst);
      return;
    }
#if SIM_GEMM_X86
    if (!g->conv && g->am_s == 1 && g->k->tr16 && MR <= 16) {
      sim_gpack_a_mrun(g, (const float *)(const void *)x->a, r0, mv, x->pc,
                       x->kb, (float *)(void *)dst);
      return;
    }
#endif
    if (g->conv)
      sim_gpack_conv_f32(g, (const float *)(const void *)x->a, r0, mv, x->pc,
                         x->kb, (float *)(void *)dst);
    else
      sim_gpack_a_f32(g, (const float *)(const void *)x->a, r0, mv, x->pc,
                      x->kb, (float *)(void *)dst);
  } else if (g->conv) {
    sim_gpack_conv_f64(g, (const double *)(const void *)x->a, r0, mv, x->pc,
                       x->kb, (double *)(void *)dst);
  } else {
    sim_gpack_a_f64(g, (const double *)(const void *)x->a, r0, mv, x->pc,
                    x->kb, (double *)(void *)dst);
  }
}

static void sim_gpack_b_panel(const sim_gblk *x, int64_t c0, int64_t nv,
                              char *dst) {
  const sim_gemm *g = x->g;
  if (g->es == 4)
    sim_gpack_b_f32(g, (const float *)(const void *)x->b, c0, nv, x->pc,
                    x->kb, (float *)(void *)dst);
  else
    sim_gpack_b_f64(g, (const double *)(const void *)x->b, c0, nv, x->pc,
                    x->kb, (double *)(void *)dst);
}

static void sim_gstore_tile(const sim_gblk *x, const void *tile, int64_t r0,
                            int64_t mv, int64_t c0, int64_t nv) {
  const sim_gemm *g = x->g;
  if (g->es == 4)
    sim_gstore_f32(g, (float *)(void *)x->c, (const float *)tile, r0, mv, c0,
                   nv, x->first);
  else
    sim_gstore_f64(g, (double *)(void *)x->c, (const double *)tile, r0, mv,
                   c0, nv, x->first);
}

/* Packs the B block of columns [c0, c0 + nb) into micro-panels at bp. */
static void sim_gpack_b_block(const sim_gblk *x, int64_t c0, int64_t nb,
                              char *bp) {
  const int64_t NR = x->g->k->nr;
  for (int64_t j = 0; j < nb; j += NR)
    sim_gpack_b_panel(x, c0 + j, nb - j < NR ? nb - j : NR,
                      bp + (size_t)(j * x->kb) * x->g->es);
}

/* A kernel for the first mv < MR rows of a panel only, or NULL. */
static sim_gk_fn sim_gk_rows(const sim_gemm *g, int64_t mv) {
#if SIM_GEMM_X86
  if (g->k->fn == sim_gk_f32_avx512 && (mv == 8 || mv == 4)) {
    if (g->astrip && g->k->fs == sim_gk_f32_avx512_strip)
      return mv == 8 ? sim_gk_f32_avx512_strip8 : sim_gk_f32_avx512_strip4;
    if (!g->astrip)
      return mv == 8 ? sim_gk_f32_avx512_r8 : sim_gk_f32_avx512_r4;
  }
#else
  (void)g, (void)mv;
#endif
  return NULL;
}

/* The kernel of the fewest rows, of 4, 8 or all (fn), that covers mv
 * rows: for a tile through the tile buffer.  ResNet's last stage has 49
 * positions, 4 x 12 + 1: its last panel then computes 4 rows, not 12. */
static sim_gk_fn sim_gk_cover(const sim_gemm *g, sim_gk_fn fn, int64_t mv) {
  sim_gk_fn f = sim_gk_rows(g, mv <= 4 ? 4 : mv <= 8 ? 8 : 0);
  return f ? f : fn;
}

/* The packed A micro-panel ap (C rows r0 .. r0 + mv) times the packed B
 * block bp (C columns c0 .. c0 + nb): full tiles straight into C where its
 * rows are strided and columns dense, others through a tile. */
#if SIM_GEMM_X86
typedef void (*sim_gkp_fn)(int64_t kc, const void *a, const void *b, void *c,
                           int64_t ldc, int first, const sim_gtp *tp);
static sim_gkp_fn sim_gk_post_of(sim_gk_fn fr);
#endif

/* Kernel fk's post kernel (sim_gemm_post_ok allows only kernels that
 * have one) on a whole tile stored straight into C (its NR columns and
 * fk's rows all C's, so the operands' loads stay inside them): element
 * (0, 0) is C's (r0, c0), at c, of row stride ldc. */
static void sim_gemm_post_tile(const sim_gblk *x, sim_gk_fn fk,
                               const char *ap, const char *bj, char *c,
                               int64_t ldc, int64_t r0, int64_t c0) {
#if SIM_GEMM_X86
  sim_gkp_fn fp = sim_gk_post_of(fk);
  if (fp) {
    sim_gtp tp = {x->post, r0, c0, x->g->N, 0xFFFFu, 0xFFFFu};
    fp(x->kb, ap, bj, c, ldc, x->first, &tp);
    return;
  }
#endif
  assert(!"a product's epilogue without a post kernel");
  fk(x->kb, ap, bj, c, ldc, x->first);
  (void)r0, (void)c0;
}

#if SIM_GEMM_X86
/* Whether the masked post kernel can take a tile of fewer than 32
 * columns of a panel computed with fr (the 12-row strip kernel). */
static int sim_gemm_post_masked(const sim_gemm *g, sim_gk_fn fr) {
  return fr == sim_gk_f32_avx512_strip && g->cm_s && g->cn_s == 1;
}
#endif

/* The epilogue over C's rows [r0, r0 + mv), columns [c0, c0 + nv), after
 * the last K block went through a tile buffer. */
static void sim_gemm_post_rows(const sim_gpost *po, char *C, int64_t N,
                               int64_t r0, int64_t mv, int64_t c0,
                               int64_t nv) {
#if SIM_GEMM_X86
  sim_gpost_region(po, (float *)(void *)C, N, r0, mv, c0, nv);
#else
  (void)po, (void)C, (void)N, (void)r0, (void)mv, (void)c0, (void)nv;
#endif
}

#if SIM_GEMM_X86

/* The post kernel doing what kernel fr does (sim_gpost), or NULL. */
static sim_gkp_fn sim_gk_post_of(sim_gk_fn fr) {
  return fr == sim_gk_f32_avx512_strip    ? sim_gkp_f32_avx512_strip
         : fr == sim_gk_f32_avx512_strip8 ? sim_gkp_f32_avx512_strip8
         : fr == sim_gk_f32_avx512_strip4 ? sim_gkp_f32_avx512_strip4
         : fr == sim_gk_f32_avx512        ? sim_gkp_f32_avx512
         : fr == sim_gk_f32_avx512_r8     ? sim_gkp_f32_avx512_r8
         : fr == sim_gk_f32_avx512_r4     ? sim_gkp_f32_avx512_r4
                                          : NULL;
}
#endif

/* The half-tile kernel doing what 12-row kernel f does, or NULL. */
static sim_gk_fn sim_gk_half(sim_gk_fn f) {
#if SIM_GEMM_X86
  return f == sim_gk_f32_avx512_strip ? sim_gkh_f32_avx512_strip
         : f == sim_gk_f32_avx512     ? sim_gkh_f32_avx512
                                      : NULL;
#else
  (void)f;
  return NULL;
#endif
}

static void sim_gemm_panel_row(const sim_gblk *x, const char *ap,
                               const char *bp, int64_t r0, int64_t mv,
                               int64_t c0, int64_t nb) {
  const sim_gemm *g = x->g;
  const int64_t MR = g->k->mr, NR = g->k->nr;
  size_t es = g->es;
  sim_gk_fn fn = g->astrip ? g->k->fs : g->k->fn;
  sim_gk_fn fr = mv == MR ? fn : sim_gk_rows(g, mv); /* mv rows, or NULL */
  sim_gk_fn ft = fr ? fr : sim_gk_cover(g, fn, mv);  /* at least mv rows */
  _Alignas(64) char tile[12 * 32 * sizeof(float)];
  /* the epilogue, after the last K block (C is dense: sim_gemm_post_ok) */
  const sim_gpost *po = x->post && x->pc + x->kb >= g->K ? x->post : NULL;
#if SIM_GEMM_X86
  if (x->dir) { /* whole tiles only (sim_gemm_direct_panel) */
    for (int64_t j = 0; j < nb; j += NR) {
      const char *bj = bp + (size_t)(j * x->kb) * es;
      char *c = x->c + (size_t)(g->cm[r0] + c0 + j) * es;
      if (po) {
        sim_gtp tp = {po, r0, c0 + j, g->N, 0xFFFFu, 0xFFFFu};
        sim_gkpd_f32_avx512(x->kb, x->dir, bj, c, g->cm_s, x->first, &tp);
      } else {
        sim_gkd_f32_avx512(x->kb, x->dir, bj, c, g->cm_s, x->first);
      }
    }
    return;
  }
#endif
  for (int64_t j = 0; j < nb; j += NR) {
    const char *bj = bp + (size_t)(j * x->kb) * es;
    int64_t nv = nb - j < NR ? nb - j : NR;
    if (fr && nv == NR && g->cm_s && g->cn_s == 1) {
      char *c = x->c + (size_t)(g->cm[r0] + c0 + j) * es;
      if (po) {
        sim_gemm_post_tile(x, fr, ap, bj, c, g->cm_s, r0, c0 + j);
        continue;
      }
      fr(x->kb, ap, bj, c, g->cm_s, x->first);
      continue;
    }
#if SIM_GEMM_X86
    if (po && sim_gemm_post_masked(g, fr)) { /* 16 columns or fewer: half */
      unsigned m = nv >= 32 ? 0xFFFFFFFFu : (1u << nv) - 1;
      sim_gtp tp = {po, r0, c0 + j, g->N, m & 0xFFFFu, m >> 16};
      sim_gkp_fn fp = nv <= 16 ? sim_gkphm_f32_avx512_strip
                               : sim_gkpm_f32_avx512_strip;
      fp(x->kb, ap, bj, x->c + (size_t)(g->cm[r0] + c0 + j) * es, g->cm_s,
         x->first, &tp);
      continue;
    }
#endif
    sim_gk_fn fh = nv <= 16 ? sim_gk_half(ft) : NULL;
    (fh ? fh : ft)(x->kb, ap, bj, tile, NR, 1);
    sim_gstore_tile(x, tile, r0, mv, c0 + j, nv);
    if (po) sim_gemm_post_rows(po, x->c, g->cm_s, r0, mv, c0 + j, nv);
  }
}

/* ---- B micro-panel outer ----
 * The loops above meet a B block (kc x nc, in L2) with one A micro-panel
 * at a time (in L1), which suits a B packed here or kept in cache.  A B
 * packed beforehand (sim_gemm_bpre: a model's weights) may come from
 * memory instead, as a ResNet's last stage does (its 3x3 kernels are 9 MiB
 * each, more weights in all than L3 holds).  When a lane's A part of a K
 * block is small (few rows: those convolutions' 49 positions), each B
 * micro-panel goes through all of A's micro-panels instead, while it is
 * in L1, and is read from L2 or memory once (cnn_nhwc on one thread: 2 %
 * faster, in every round of two A/B runs).  The same kernels on the same
 * tiles: the same sums. */
#define SIM_GEMM_SMALL_A ((size_t)256 << 10) /* bytes of A a K block */

/* Whether rows of A (a K block of kb) are few enough for that. */
static int sim_gemm_b_outer(const sim_gblk *x, int64_t rows) {
  const sim_gemm *g = x->g;
  int64_t MR = g->k->mr;
  return x->bpre && (size_t)((rows + MR - 1) / MR * MR * x->kb) * g->es <=
                        SIM_GEMM_SMALL_A;
}

/* The A micro-panels packed one after the other from ap (C rows r0 .. r1,
 * r0 a multiple of MR) times the B block bp (C columns c0 .. c0 + nb), B
 * micro-panel outer. */
static void sim_gemm_rect_bouter(const sim_gblk *x, const char *ap,
                                 const char *bp, int64_t r0, int64_t r1,
                                 int64_t c0, int64_t nb) {
  const sim_gemm *g = x->g;
  const int64_t MR = g->k->mr, NR = g->k->nr;
  size_t es = g->es, astep = (size_t)(MR * x->kb) * es;
  for (int64_t j = 0; j < nb; j += NR) {
    const char *bj = bp + (size_t)(j * x->kb) * es, *a = ap;
    int64_t nv = nb - j < NR ? nb - j : NR;
    for (int64_t r = r0; r < r1; r += MR, a += astep)
      sim_gemm_panel_row(x, a, bj, r, r1 - r < MR ? r1 - r : MR, c0 + j, nv);
  }
}

/* Worker lane: A micro-panels [pa, pe) times columns [n0, n1), in column
 * blocks of nc packed into the lane's own B block. */
static void sim_gemm_rect(const sim_gblk *x, int lane, int64_t pa, int64_t pe,
                          int64_t n0, int64_t n1) {
  const sim_gemm *g = x->g;
  const int64_t MR = g->k->mr;
  size_t es = g->es;
  char *bl = x->bpack + g->bpack_lane * (size_t)lane * es;
  for (int64_t jc = n0; jc < n1; jc += g->nc) {
    int64_t nb = n1 - jc < g->nc ? n1 - jc : g->nc;
    const char *bp = bl;
    if (x->bpre)
      bp = x->bpre + (size_t)(x->pc * g->np + jc * x->kb) * es;
    else
      sim_gpack_b_block(x, jc, nb, bl);
    int64_t r0 = x->ic + pa * MR, r1 = x->ic + x->mb;
    if (r1 > x->ic + pe * MR) r1 = x->ic + pe * MR;
    if (sim_gemm_b_outer(x, r1 - r0)) {
      sim_gemm_rect_bouter(x, x->apack + (size_t)(pa * MR * x->kb) * es, bp,
                           r0, r1, jc, nb);
      continue;
    }
    for (int64_t p = pa; p < pe; p++) {
      const char *ap = x->apack + (size_t)(p * MR * x->kb) * es;
      int64_t mv = x->mb - p * MR < MR ? x->mb - p * MR : MR;
      sim_gemm_panel_row(x, ap, bp, x->ic + p * MR, mv, jc, nb);
    }
  }
}

/* A lane's share of C that is one column block (few columns, as in most
 * convolutions): the B block is packed once per K block, and each A
 * micro-panel is packed right before its kernels, so it is read back from
 * L1 rather than through a large A block that would only meet a few B
 * micro-panels. */
/* All of A packed (sim_gemm_apre): the micro-panel of rows from r0 (a
 * multiple of MR) in the K block at pc (kb rows) at this element offset,
 * the next micro-panels after it, as sim_gpack_a_panel packs a block. */
static size_t sim_gemm_aoff(const sim_gemm *g, int64_t pc, int64_t r0,
                            int64_t kb) {
  int64_t MR = g->k->mr, Mp = (g->M + MR - 1) / MR * MR;
  return (size_t)(pc * Mp + r0 * kb);
}

/* Rows of at least this many elements go to an epilogue at once (a few
 * of its tiles; they are still in L2). */
#define SIM_GEMM_EPI_ELEMS 8192

/* For sim_gemm_narrow with B micro-panel outer (sim_gemm_b_outer): A's
 * micro-panels of rows [m0, m1) in this K block, one after the other
 * (packed beforehand, or now when the lane's A block holds them all); else
 * NULL. */
static const char *sim_gemm_narrow_a(sim_gblk *x, int64_t m0, int64_t m1) {
  const sim_gemm *g = x->g;
  const int64_t MR = g->k->mr, pm = (m1 - m0 + MR - 1) / MR;
  if (!sim_gemm_b_outer(x, m1 - m0)) return NULL;
  if (x->apre) return x->apre + sim_gemm_aoff(g, x->pc, m0, x->kb) * g->es;
  if ((size_t)(pm * MR * g->kc) > g->apack_lane) return NULL;
  x->ic = m0, x->mb = m1 - m0;
  for (int64_t p = 0; p < pm; p++) sim_gpack_a_panel(x, p);
  return x->apack;
}

/* Whether A's micro-panel at row r0 (mv rows) of this K block can be read
 * in place by sim_gkd_f32_avx512 (AVX-512 f32 strip kernels, a
 * convolution with whole strips of features, columns [n0, n1) whole
 * tiles): its 12 rows interior and lda apart in lhs.  Then *d and sp (up
 * to nsp strips) describe it. */
enum { SIM_GDIR_STRIPS = 64 };
static int sim_gemm_direct_panel(const sim_gblk *x, int64_t r0, int64_t mv,
                                 int64_t nb, sim_gdir *d, const float **sp) {
#if SIM_GEMM_X86
  const sim_gemm *g = x->g;
  const sim_gconv *cv = g->conv;
  if (!cv || !cv->rbase || !g->astrip || mv != 12 || g->k->mr != 12 ||
      g->k->fs != sim_gk_f32_avx512_strip || cv->Cg % SIM_GK_STRIP ||
      x->pc % SIM_GK_STRIP || x->kb % SIM_GK_STRIP ||
      x->kb / SIM_GK_STRIP > SIM_GDIR_STRIPS || nb % g->k->nr || !g->cm_s ||
      g->cn_s != 1 || cv->rbase[r0] < 0 || cv->rbase[r0 + 1] < 0)
    return 0;
  const int64_t base = g->am[r0] + cv->rbase[r0];
  const int64_t lda = g->am[r0 + 1] + cv->rbase[r0 + 1] - base;
  for (int64_t i = 2; i < 12; i++)
    if (cv->rbase[r0 + i] < 0 ||
        g->am[r0 + i] + cv->rbase[r0 + i] != base + i * lda)
      return 0;
  const float *a0 = (const float *)(const void *)x->a + base;
  for (int64_t s = 0; s < x->kb / SIM_GK_STRIP; s++) {
    int64_t k = x->pc + s * SIM_GK_STRIP;
    sp[s] = a0 + cv->wdelta[k / cv->Cg] + k % cv->Cg;
  }
  d->sp = sp;
  d->lda = lda;
  return 1;
#else
  (void)x, (void)r0, (void)mv, (void)nb, (void)d, (void)sp;
  return 0;
#endif
}

static void sim_gemm_narrow(sim_gblk *x, int lane, int64_t m0, int64_t m1,
                            int64_t n0, int64_t n1) {
  const sim_gemm *g = x->g;
  const int64_t MR = g->k->mr;
  size_t es = g->es;
  char *bl = x->bpack + g->bpack_lane * (size_t)lane * es;
  int64_t nb = n1 - n0;
  for (x->pc = 0; x->pc < g->K; x->pc += g->kc) {
    x->kb = g->K - x->pc < g->kc ? g->K - x->pc : g->kc;
    x->first = x->pc == 0;
    const char *bp = bl;
    if (x->bpre)
      bp = x->bpre + (size_t)(x->pc * g->np + n0 * x->kb) * es;
    else
      sim_gpack_b_block(x, n0, nb, bl);
    int last = x->pc + x->kb >= g->K && x->epi;
    /* B micro-panel outer; not with an epilogue, which takes rows as they
     * are done below */
    const char *abo = x->epi ? NULL : sim_gemm_narrow_a(x, m0, m1);
    if (abo) {
      sim_gemm_rect_bouter(x, abo, bp, m0, m1, n0, nb);
      continue;
    }
    int64_t done = m0; /* rows before it went to the epilogue */
    for (int64_t r0 = m0; r0 < m1; r0 += MR) {
      int64_t mv = m1 - r0 < MR ? m1 - r0 : MR;
      x->ic = r0, x->mb = mv;
      const char *ap = x->apack;
      sim_gdir dir;
      const float *sp[SIM_GDIR_STRIPS];
      if (x->apre)
        ap = x->apre + sim_gemm_aoff(g, x->pc, r0, x->kb) * es;
      else if (sim_gemm_direct_panel(x, r0, mv, nb, &dir, sp))
        x->dir = &dir; /* read in place */
      else
        sim_gpack_a_panel(x, 0); /* at apack: one panel, reused from L1 */
      sim_gemm_panel_row(x, ap, bp, r0, mv, n0, nb);
      x->dir = NULL;
      int64_t end = r0 + mv;
      if (last && ((end - done) * nb >= SIM_GEMM_EPI_ELEMS || end == m1)) {
        x->epi(x->epi_ctx, lane, done, end);
        done = end;
      }
    }
  }
}

/* Whether L lanes split the columns of C (else the rows).  With B packed
 * beforehand (bpre) a row split duplicates no packing, so rows whenever
 * there are enough of them to share evenly (at least 8 micro-panels a
 * lane): a ResNet 3x3 layer on 14x14x256 at two threads, 1.05 -> 0.89 ms
 * (the column split packed all of A on each lane). */
static int sim_gemm_split_cols(const sim_gemm *g, int64_t L, int bpre) {
  int64_t MR = g->k->mr, NR = g->k->nr;
  int64_t pn = (g->N + NR - 1) / NR, pmt = (g->M + MR - 1) / MR;
  if (bpre && pmt >= 8 * L) return 0;
  return L > 1 && pn >= L && (g->N >= g->M || pmt < L);
}

/* One lane's whole loop nest over its share of C: a row range or a column
 * range.  Each lane packs into its own A and B blocks, so a product is one
 * fork-join on the pool (a loaded machine delays every join), at the price
 * of packing the operand that is not split once per lane: the split is
 * along the longer side so that operand is the smaller one. */
static void sim_gemm_lane(const sim_gblk *base, int64_t l) {
  sim_gblk x = *base;
  const sim_gemm *g = x.g;
  int64_t MR = g->k->mr, NR = g->k->nr, L = x.lanes;
  int64_t pn = (g->N + NR - 1) / NR, pmt = (g->M + MR - 1) / MR;
  int64_t m0 = 0, m1 = g->M, n0 = 0, n1 = g->N;
  if (sim_gemm_split_cols(g, L, x.bpre != NULL)) {
    n0 = l * pn / L * NR, n1 = (l + 1) * pn / L * NR;
    n1 = n1 < g->N ? n1 : g->N;
  } else {
    m0 = l * pmt / L * MR, m1 = (l + 1) * pmt / L * MR;
    m1 = m1 < g->M ? m1 : g->M;
  }
  if (m0 >= m1 || n0 >= n1) return;
  x.apack += g->apack_lane * g->es * (size_t)l;
  if (n1 - n0 <= g->nc) {
    sim_gemm_narrow(&x, (int)l, m0, m1, n0, n1);
    return;
  }
  for (x.ic = m0; x.ic < m1; x.ic += g->mc) {
    x.mb = m1 - x.ic < g->mc ? m1 - x.ic : g->mc;
    int64_t pm = (x.mb + MR - 1) / MR;
    for (x.pc = 0; x.pc < g->K; x.pc += g->kc) {
      x.kb = g->K - x.pc < g->kc ? g->K - x.pc : g->kc;
      x.first = x.pc == 0;
      if (x.apre) /* the block's panels, in place */
        x.apack = (char *)(uintptr_t)x.apre +
                  sim_gemm_aoff(g, x.pc, x.ic, x.kb) * g->es;
      else
        for (int64_t p = 0; p < pm; p++) sim_gpack_a_panel(&x, p);
      sim_gemm_rect(&x, (int)l, 0, pm, n0, n1);
    }
    if (x.epi) x.epi(x.epi_ctx, (int)l, x.ic, x.ic + x.mb);
  }
}

static void sim_gemm_lanes(void *ctx, int64_t begin, int64_t end) {
  for (int64_t l = begin; l < end; l++)
    sim_gemm_lane((const sim_gblk *)ctx, l);
}

static void sim_gemm_zero(const sim_gemm *g, char *c) {
  for (int64_t m = 0; m < g->M; m++)
    for (int64_t n = 0; n < g->N; n++)
      memset(c + (size_t)(g->cm[m] + g->cn[n]) * g->es, 0, g->es);
}

#ifdef XRT_WITH_CBLAS
/* One batch through CBLAS (the plan checked the layout). */
static void sim_gemm_blas(const sim_gemm *g, const char *a, const char *b,
                          char *c) {
  CBLAS_TRANSPOSE ta = g->ak_s == 1 ? CblasNoTrans : CblasTrans;
  CBLAS_TRANSPOSE tb = g->bn_s == 1 ? CblasNoTrans : CblasTrans;
  int lda = (int)(g->ak_s == 1 ? g->am_s : g->ak_s);
  int ldb = (int)(g->bn_s == 1 ? g->bk_s : g->bn_s);
  int M = (int)g->M, N = (int)g->N, K = (int)g->K, ldc = (int)g->cm_s;
  if (g->es == 4)
    cblas_sgemm(CblasRowMajor, ta, tb, M, N, K, 1.0f,
                (const float *)(const void *)a, lda,
                (const float *)(const void *)b, ldb, 0.0f,
                (float *)(void *)c, ldc);
  else
    cblas_dgemm(CblasRowMajor, ta, tb, M, N, K, 1.0,
                (const double *)(const void *)a, lda,
                (const double *)(const void *)b, ldb, 0.0,
                (double *)(void *)c, ldc);
}
#endif

/* Batches one thread each (sim_gemm_exec_post): lane slots in use (bits). */
typedef struct sim_gbat {
  sim_gblk x; /* the blocks of every batch; a, b, c at batch 0 */
  const char *A, *B, *bpre, *apre;
  char *C;
  atomic_ullong busy;
} sim_gbat;

/* Elements of one batch's A packed whole (sim_gemm_aoff's layout). */
static int64_t sim_gemm_aelems(const sim_gemm *g) {
  int64_t MR = g->k->mr;
  return g->K * ((g->M + MR - 1) / MR * MR);
}

static void sim_gemm_batches(void *ctx, int64_t b0, int64_t b1) {
  sim_gbat *y = (sim_gbat *)ctx;
  const sim_gemm *g = y->x.g;
  size_t es = g->es;
  int slot = 0;
  for (;;) { /* a free slot: at most g->lanes threads run batches */
    unsigned long long m = atomic_load(&y->busy);
    while (slot < g->lanes && (m & (1ull << slot))) slot++;
    if (slot < g->lanes &&
        atomic_compare_exchange_weak(&y->busy, &m, m | (1ull << slot)))
      break;
    if (slot >= g->lanes) sched_yield(), slot = 0;
  }
  for (int64_t bt = b0; bt < b1; bt++) {
    sim_gblk x = y->x;
    x.lanes = 1;
    x.apack += g->apack_lane * es * (size_t)slot;
    x.bpack += g->bpack_lane * es * (size_t)slot;
    x.a = y->A + (size_t)g->ab[bt] * es;
    x.b = y->B + (size_t)g->bb[bt] * es;
    x.c = y->C + (size_t)g->cb[bt] * es;
    x.bpre = y->bpre ? y->bpre + (size_t)(bt * g->K * g->np) * es : NULL;
    x.apre = y->apre ? y->apre + (size_t)(bt * sim_gemm_aelems(g)) * es
                     : NULL;
    sim_gemm_lane(&x, 0);
  }
  atomic_fetch_and(&y->busy, ~(1ull << slot));
}

/* bpre: all of B packed (sim_gemm_bpre), or NULL.  epi (or NULL): takes
 * every row of C as soon as it is done when the lanes split the rows of
 * one batch; returns whether it did (else nothing went to epi). */
/* With the epilogue po (or NULL), which sim_gemm_post_ok allowed. */
static int sim_gemm_exec_post(const sim_gemm *g, const char *A,
                              const char *B, char *C, void **vals, sim_cx *cx,
                              const char *bpre, const char *apre,
                              sim_gemm_epi_fn epi, void *ctx,
                              const sim_gpost *po) {
  size_t es = g->es;
  sim_gblk x;
  memset(&x, 0, sizeof x);
  x.g = g;
  x.first = 1;
  x.post = po;
  x.apre = apre; /* per batch below */
  /* One lane per thread of the device's pool (the plan has buffers for
   * g->lanes); serial: one lane, so an A micro-panel meets every column. */
  int threads = cx && cx->tp ? cx->tp->threads : 1;
  x.lanes = threads < 1 ? 1 : threads < g->lanes ? threads : g->lanes;
  x.apack = (char *)vals[g->apack];
  x.bpack = (char *)vals[g->bpack];
  if (epi && g->BT == 1 && g->K > 0 && !g->blas &&
      !sim_gemm_split_cols(g, x.lanes, bpre != NULL))
    x.epi = epi, x.epi_ctx = ctx;
  /* Many batches (attention heads) on several threads: a batch per
   * thread at a time, one fork-join for all, the same sums. */
  if (threads > 1 && threads <= g->lanes && g->lanes <= 64 &&
      g->BT >= 2 * (int64_t)threads && g->K > 0 && !g->blas) {
    sim_gbat y = {x, A, B, bpre, apre, C, 0};
    sim_parallel_for(cx, g->BT, 1, sim_gemm_batches, &y);
    return 0;
  }
  for (int64_t bt = 0; bt < g->BT; bt++) {
    x.a = A + (size_t)g->ab[bt] * es;
    x.b = B + (size_t)g->bb[bt] * es;
    x.c = C + (size_t)g->cb[bt] * es;
    x.bpre = bpre ? bpre + (size_t)(bt * g->K * g->np) * es : NULL;
    x.apre = apre ? apre + (size_t)(bt * sim_gemm_aelems(g)) * es : NULL;
#ifdef XRT_WITH_CBLAS
    if (g->blas) {
      sim_gemm_blas(g, x.a, x.b, x.c);
      continue;
    }
#endif
    if (g->K == 0)
      sim_gemm_zero(g, x.c);
    else
      sim_parallel_for(cx, x.lanes, 1, sim_gemm_lanes, &x);
  }
  return x.epi != NULL;
}

/* ---- B packed once for many calls (gemm_cache.c) ----
 * All of B in the layout the blocked loops pack a block in, block after
 * block: batch bt, K block at pc (kb rows), micro-panel of columns j (NR
 * of them, zero-padded) at element (bt * K + pc) * np + j * kb, so the B
 * block of any column range starting on a panel is one slice of it. */
typedef struct sim_gfill {
  const sim_gemm *g;
  const char *b;
  char *dst;
  int64_t nk; /* K blocks */
} sim_gfill;

static void sim_gemm_fill_range(void *ctx, int64_t begin, int64_t end) {
  const sim_gfill *f = (const sim_gfill *)ctx;
  const sim_gemm *g = f->g;
  for (int64_t i = begin; i < end; i++) {
    int64_t bt = i / f->nk, pc = i % f->nk * g->kc;
    sim_gblk x;
    memset(&x, 0, sizeof x);
    x.g = g;
    x.b = f->b + (size_t)g->bb[bt] * g->es;
    x.pc = pc;
    x.kb = g->K - pc < g->kc ? g->K - pc : g->kc;
    sim_gpack_b_block(&x, 0, g->N,
                      f->dst + (size_t)((bt * g->K + pc) * g->np) * g->es);
  }
}

/* All of B, every batch, packed into dst. */
static void sim_gemm_fill_b(const sim_gemm *g, const char *B, char *dst,
                            sim_cx *cx) {
  sim_gfill f = {g, B, dst, (g->K + g->kc - 1) / g->kc};
  sim_parallel_for(cx, g->BT * f.nk, 1, sim_gemm_fill_range, &f);
}

/* B's packed copy when B is an argument of this execute with a write
 * generation, from the client's cache (packed now when the cache asks);
 * *entry: what to give back with sim_gcache_put, or NULL. */
static const char *sim_gemm_bpre(const sim_gemm *g, const char *B,
                                 sim_cx *cx, void **entry) {
  *entry = NULL;
  if (g->blas) return NULL;
  int fill;
  char *p = (char *)sim_gcache_get_arg(
      cx, g->gid, B, (size_t)(g->BT * g->K * g->np) * g->es, &fill, entry);
  if (p && fill) sim_gemm_fill_b(g, B, p, cx);
  return p;
}

/* ---- A packed once for many calls (gemm_cache.c) ----
 * A convolution's kernel as the A operand of weights x im2col (conv_gemm.c)
 * is an argument like the weights of a dot: all of it in the layout of
 * sim_gemm_aoff, K block after K block, micro-panels of MR rows (the last
 * one zero-padded) in each; of every batch, one after the other, when the
 * caller keeps it (sim_gemm_pack_a: Winograd's transformed kernels). */
typedef struct sim_gafill_all {
  const sim_gemm *g;
  const char *a;
  char *dst;
  int64_t pm, nk; /* micro-panels, K blocks */
} sim_gafill_all;

static void sim_gemm_afill_all(void *ctx, int64_t begin, int64_t end) {
  const sim_gafill_all *f = (const sim_gafill_all *)ctx;
  const sim_gemm *g = f->g;
  int64_t MR = g->k->mr;
  for (int64_t i = begin; i < end; i++) {
    int64_t bt = i / (f->nk * f->pm), r = i % (f->nk * f->pm);
    sim_gblk x;
    memset(&x, 0, sizeof x);
    x.g = g;
    x.a = f->a + (size_t)g->ab[bt] * g->es;
    x.pc = r / f->pm * g->kc;
    x.kb = g->K - x.pc < g->kc ? g->K - x.pc : g->kc;
    x.ic = r % f->pm * MR;
    x.mb = g->M - x.ic < MR ? g->M - x.ic : MR;
    x.apack = f->dst + ((size_t)(bt * sim_gemm_aelems(g)) +
                        sim_gemm_aoff(g, x.pc, x.ic, x.kb)) * g->es;
    sim_gpack_a_panel(&x, 0);
  }
}

/* A's packed copy when A is an argument of this execute with a write
 * generation (as sim_gemm_bpre); *entry: to give back, or NULL. */
static const char *sim_gemm_apre_of(const sim_gemm *g, const char *A,
                                    sim_cx *cx, void **entry) {
  *entry = NULL;
  if (g->BT != 1 || g->blas) return NULL;
  int64_t MR = g->k->mr, pm = (g->M + MR - 1) / MR;
  int fill;
  char *p = (char *)sim_gcache_get_arg(
      cx, g->gida, A, (size_t)sim_gemm_aelems(g) * g->es, &fill, entry);
  if (p && fill) {
    sim_gafill_all f = {g, A, p, pm, (g->K + g->kc - 1) / g->kc};
    sim_parallel_for(cx, f.nk * pm, 1, sim_gemm_afill_all, &f);
  }
  return p;
}

/* Runs st (a dot, or a convolution planned as GEMM: C = A x B of its
 * operands), calling epi(ctx, lane, m0, m1) (or nothing: NULL) on the rows
 * [m0, m1) of the result on the lane's thread as soon as they are final,
 * lane < the *lanes of sim_gemm_by_rows.  Returns 1 when every row went
 * to epi; 0 when none did (the lanes split the columns, or epi is NULL):
 * the caller then runs its epilogue over the whole result. */
static int sim_gemm_run_with(const sim_step *st, void **vals, sim_cx *cx,
                             const char *bpacked, sim_gemm_epi_fn epi,
                             void *ctx, const sim_gpost *po) {
  const sim_gemm *g = (const sim_gemm *)st->data;
  const char *A = (const char *)vals[st->in[0]];
  const char *B = bpacked ? bpacked : (const char *)vals[st->in[1]];
  void *entry = NULL, *aentry;
  const char *bpre = bpacked ? bpacked : sim_gemm_bpre(g, B, cx, &entry);
  const char *apre = sim_gemm_apre_of(g, A, cx, &aentry);
  int took = sim_gemm_exec_post(g, A, B, (char *)vals[st->out[0]], vals, cx,
                                bpre, apre, epi, ctx, po);
  if (entry) sim_gcache_put(cx->exe->cl, entry, 1);
  if (aentry) sim_gcache_put(cx->exe->cl, aentry, 1);
  return took;
}

SIM_PRIVATE int sim_gemm_run_epi(const sim_step *st, void **vals, sim_cx *cx,
                                 sim_gemm_epi_fn epi, void *ctx) {
  return sim_gemm_run_with(st, vals, cx, NULL, epi, ctx, NULL);
}

SIM_PRIVATE int sim_gemm_post_ok(const sim_step *st) {
  int64_t M, N;
  int lanes;
  if (!sim_gemm_by_rows(st, &M, &N, &lanes)) return 0;
  const sim_gemm *g = (const sim_gemm *)st->data;
#if SIM_GEMM_X86
  return g->BT == 1 && g->K > 0 && !g->blas && g->k->fn == sim_gk_f32_avx512;
#else
  (void)g;
  return 0;
#endif
}

/* sim_gemm_post_ok for a product whose rows may be further apart than
 * its columns (a chunk of an NCHW convolution's result, rows P apart):
 * an epilogue of row vectors and numbers only, which read no row
 * stride. */
SIM_PRIVATE int sim_gemm_post_rows_ok(const sim_step *st) {
  if (!sim_gemm_slots(st)) return 0;
  const sim_gemm *g = (const sim_gemm *)st->data;
#if SIM_GEMM_X86
  return g->cm_s >= g->N && g->cn_s == 1 && g->cb[0] == 0 &&
         g->k->fn == sim_gk_f32_avx512;
#else
  (void)g;
  return 0;
#endif
}

SIM_PRIVATE int sim_gemm_run_packed_with(const sim_step *st, void **vals,
                                         sim_cx *cx, const char *bpre,
                                         sim_gemm_epi_fn epi, void *ctx,
                                         const sim_gpost *po) {
  if (po && !sim_gemm_post_ok(st)) return 0;
  int took = sim_gemm_run_with(st, vals, cx, bpre, epi, ctx, po);
  return po ? 1 : took;
}

static xrt_status sim_run_gemm(const sim_step *st, void **vals, sim_cx *cx) {
  sim_gemm_run_epi(st, vals, cx, NULL, NULL);
  return XRT_OK;
}

/* ---- B packed by the caller ----
 * A convolution's im2col panel can be written straight into the layout
 * sim_gemm_bpre packs B in (conv_gemm.c), which saves the product a
 * second pass over it: element (k, n) of batch bt at
 * (bt * K + pc) * np + (n / nr * nr) * kb + (k - pc) * nr + n % nr, where
 * pc is k's K block (kc rows, kb in the last one) and np is N rounded up
 * to whole micro-panels (columns past N must hold finite values: their
 * products are dropped). */
SIM_PRIVATE int sim_gemm_bgeom(const sim_step *st, sim_gbgeom *geo) {
  if (st->run != sim_run_gemm) return 0;
  const sim_gemm *g = (const sim_gemm *)st->data;
  if (g->blas || g->K <= 0) return 0;
  geo->K = g->K, geo->kc = g->kc, geo->np = g->np, geo->nr = g->k->nr;
  geo->bt = g->BT;
  return 1;
}

SIM_PRIVATE void sim_gemm_pack_b(const sim_step *st, const void *B,
                                 void *dst, sim_cx *cx) {
  sim_gemm_fill_b((const sim_gemm *)st->data, (const char *)B, (char *)dst,
                  cx);
}

SIM_PRIVATE size_t sim_gemm_apack_bytes(const sim_step *st) {
  if (st->run != sim_run_gemm) return 0;
  const sim_gemm *g = (const sim_gemm *)st->data;
  if (g->blas || g->K <= 0) return 0;
  return (size_t)(g->BT * sim_gemm_aelems(g)) * g->es;
}

SIM_PRIVATE void sim_gemm_pack_a(const sim_step *st, const void *A,
                                 void *dst, sim_cx *cx) {
  const sim_gemm *g = (const sim_gemm *)st->data;
  int64_t MR = g->k->mr;
  sim_gafill_all f = {g, (const char *)A, (char *)dst,
                      (g->M + MR - 1) / MR, (g->K + g->kc - 1) / g->kc};
  sim_parallel_for(cx, g->BT * f.nk * f.pm, 4, sim_gemm_afill_all, &f);
}

SIM_PRIVATE void sim_gemm_run_apre(const sim_step *st, void **vals,
                                   sim_cx *cx, const char *apre) {
  const sim_gemm *g = (const sim_gemm *)st->data;
  (void)sim_gemm_exec_post(g, (const char *)vals[st->in[0]],
                           (const char *)vals[st->in[1]],
                           (char *)vals[st->out[0]], vals, cx, NULL, apre,
                           NULL, NULL, NULL);
}

/* Runs st with B already packed at bpre (sim_gemm_bgeom). */
SIM_PRIVATE void sim_gemm_run_packed(const sim_step *st, void **vals,
                                     sim_cx *cx, const char *bpre) {
  sim_gemm_run_with(st, vals, cx, bpre, NULL, NULL, NULL);
}

/* ---- planning ---- */

/* s if t[i] == i * s for every i (s from t[1]), else 0. */
static int64_t sim_gemm_affine(const int64_t *t, int64_t n) {
  if (n <= 1) return 1;
  int64_t s = t[1] - t[0];
  if (t[0] != 0 || s <= 0) return 0;
  for (int64_t i = 2; i < n; i++)
    if (t[i] != i * s) return 0;
  return s;
}

static int64_t *sim_gemm_iota(sim_fcc *fc, int64_t n, int64_t s) {
  int64_t *t = (int64_t *)sim_palloc(fc, sizeof *t * (size_t)(n ? n : 1));
  if (t)
    for (int64_t i = 0; i < n; i++) t[i] = i * s;
  return t;
}

static int64_t sim_gemm_roundup(int64_t x, int64_t m) {
  return (x + m - 1) / m * m;
}

/* Threads of the pools of the client's devices (all alike): the most
 * lanes a product can use. */
static int64_t sim_gemm_threads(const sim_fcc *fc) {
  const struct sim_tpool *tp = sim_tpool_of(fc->cc->exe->cl, 0);
  int t = tp ? tp->threads : 1;
  return t < 1 ? 1 : t > 64 ? 64 : t;
}

/* The K block of a product of N columns: it orders the sums. */
static int64_t sim_gemm_kc(const sim_gk *k, int64_t N, int64_t K, size_t es) {
  int64_t kc = K < k->kc ? (K ? K : 1) : k->kc;
  /* Near-equal K blocks: no thin last block. */
  if (K > k->kc) {
    int64_t nk = (K + k->kc - 1) / k->kc;
    kc = (K + nk - 1) / nk;
  }
  int64_t nc = N < k->nc ? sim_gemm_roundup(N ? N : 1, k->nr) : k->nc;
  /* One column block (sim_gemm_narrow): all of K in one block when its B
   * block fits L2 with room and an A micro-panel half of L1, so C is
   * written once. */
  if (N <= nc && K <= 2 * k->kc && (size_t)(K * nc) * es <= 256 * 1024 &&
      (size_t)(K * k->mr) * es <= 32 * 1024)
    kc = K;
  return kc;
}

/* Block sizes and lanes (at most threads), once the tables are set. */
static void sim_gemm_blocks(sim_gemm *g, int64_t threads) {
  const sim_gk *k = g->k;
  assert(k->mr * k->nr * (int)g->es <= 1536); /* sim_gemm_rect's tile */
  assert(k->mr <= 16 && k->nc % k->nr == 0 && k->mc % k->mr == 0);
  g->am_s = sim_gemm_affine(g->am, g->M);
  g->ak_s = g->conv ? 0 : sim_gemm_affine(g->ak, g->K);
  g->bk_s = sim_gemm_affine(g->bk, g->K);
  g->bn_s = sim_gemm_affine(g->bn, g->N);
  g->cm_s = sim_gemm_affine(g->cm, g->M);
  g->cn_s = sim_gemm_affine(g->cn, g->N);
  g->mc = g->M < k->mc ? sim_gemm_roundup(g->M ? g->M : 1, k->mr) : k->mc;
  g->kc = sim_gemm_kc(k, g->N, g->K, g->es);
  if (g->M > k->mc) { /* near-equal M blocks too */
    int64_t nm = (g->M + k->mc - 1) / k->mc;
    g->mc = sim_gemm_roundup((g->M + nm - 1) / nm, k->mr);
  }
  g->nc = g->N < k->nc ? sim_gemm_roundup(g->N ? g->N : 1, k->nr) : k->nc;
  int64_t pn = (g->N + k->nr - 1) / k->nr, pm = (g->M + k->mr - 1) / k->mr;
  g->np = pn * k->nr;
  int64_t L = threads;
  if (pn < L && pm < L) L = pn > pm ? pn : pm;
  g->lanes = (int)(L > 0 ? L : 1);
  g->bpack_lane = (size_t)(g->kc * g->nc);
  /* one column block: sim_gemm_narrow packs one A micro-panel at a time */
  g->apack_lane = (size_t)((g->N <= g->nc ? k->mr : g->mc) * g->kc);
}

/* Block sizes, lanes and scratch, once the tables are set. */
static xrt_status sim_gemm_finish(sim_fcc *fc, sim_gemm *g) {
  sim_gemm_blocks(g, sim_gemm_threads(fc));
  xrt_status rc =
      sim_temp(fc, g->apack_lane * g->es * (size_t)g->lanes, &g->apack);
  if (!rc)
    rc = sim_temp(fc, g->bpack_lane * (size_t)g->lanes * g->es, &g->bpack);
  return rc;
}

#ifdef XRT_WITH_CBLAS
/* Large products whose operands are plain or transposed matrices can go
 * to BLAS (sim_blas_faster decides whether they do). */
static int sim_gemm_blas_ok(const sim_gemm *g) {
  int64_t lim = 0x7fffffff;
  if (g->conv || g->M < 2 || g->N < 2 || g->K < 2 ||
      (double)g->M * (double)g->N * (double)g->K < 128.0 * 128 * 128)
    return 0;
  if (!g->am_s || !g->ak_s || !g->bk_s || !g->bn_s || g->cn_s != 1 ||
      g->cm_s != g->N)
    return 0;
  if ((g->am_s != 1 && g->ak_s != 1) || (g->bk_s != 1 && g->bn_s != 1))
    return 0;
  return g->M < lim && g->N < lim && g->K < lim && g->am_s < lim &&
         g->ak_s < lim && g->bk_s < lim && g->bn_s < lim;
}

/* ---- CBLAS or ours: timed once per process ----
 * An XRT_BLAS=1 build hands a product to CBLAS only where CBLAS is the
 * faster on the running machine, as autotuners decide: a library may have
 * no kernel for a new CPU (Debian 12's OpenBLAS runs its AVX2 "Haswell"
 * kernel on AMD Zen 5, at about half the speed of xrt's AVX-512 one).  The
 * first compile that meets such a product times both on a SIM_BLAS_N cube
 * of its element type with the device's threads (best of three after a
 * warm-up, alternating); the answer is kept for the process, per element
 * size and thread count.  XRT_SIM_BLAS=1 always calls CBLAS, =0 never. */
#include <time.h>
enum { SIM_BLAS_N = 384 };

static double sim_blas_now(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

/* Seconds of one C = A B through g (CBLAS when blas). */
static double sim_blas_run(sim_gemm *g, int blas, const char *a,
                           const char *b, char *c, void **vals, sim_cx *cx) {
  g->blas = blas;
  double t0 = sim_blas_now();
  sim_gemm_exec_post(g, a, b, c, vals, cx, NULL, NULL, NULL, NULL, NULL);
  return sim_blas_now() - t0;
}

/* Whether CBLAS multiplies a SIM_BLAS_N cube faster than kernel k does on
 * threads lanes of pool tp; no when memory is short. */
static int sim_blas_measure(const xrt_allocator *al, const sim_gk *k,
                            size_t es, struct sim_tpool *tp, int64_t threads) {
  const int64_t n = SIM_BLAS_N;
  int64_t tab[2 * SIM_BLAS_N + 1]; /* 0, then i, then i * n */
  tab[0] = 0;
  for (int64_t i = 0; i < n; i++) tab[1 + i] = i, tab[1 + n + i] = i * n;
  sim_gemm g;
  memset(&g, 0, sizeof g);
  g.k = k, g.es = es, g.BT = 1, g.M = g.N = g.K = n;
  g.ab = g.bb = g.cb = tab;
  g.am = g.bk = g.cm = tab + 1 + n;
  g.ak = g.bn = g.cn = tab + 1;
  g.apack = 0, g.bpack = 1;
  sim_gemm_blocks(&g, threads);
  size_t mat = sim_align_up((size_t)(n * n) * es);
  size_t ap = sim_align_up(g.apack_lane * es * (size_t)g.lanes);
  size_t bp = sim_align_up(g.bpack_lane * es * (size_t)g.lanes);
  char *raw = (char *)al->alloc(al->self, 3 * mat + ap + bp + SIM_ALIGN);
  if (!raw) return 0;
  char *a = raw + (sim_align_up((size_t)(uintptr_t)raw) - (uintptr_t)raw);
  char *b = a + mat, *c = b + mat;
  void *vals[2] = {c + mat, c + mat + ap};
  memset(a, 0x3f, 2 * mat); /* normal numbers in f32 and f64 */
  sim_cx cx;
  memset(&cx, 0, sizeof cx);
  cx.tp = tp;
  double ours = 1e30, theirs = 1e30;
  for (int r = 0; r < 4; r++) {
    double t = sim_blas_run(&g, 0, a, b, c, vals, &cx);
    double u = sim_blas_run(&g, 1, a, b, c, vals, &cx);
    if (r > 0) {
      ours = t < ours ? t : ours;
      theirs = u < theirs ? u : theirs;
    }
  }
  al->free(al->self, raw);
  return theirs < ours;
}

static pthread_mutex_t sim_blas_mu = PTHREAD_MUTEX_INITIALIZER;
static signed char sim_blas_known[2][65]; /* 0 unknown, 1 ours, 2 CBLAS */

/* Whether products of element size es that CBLAS can take should go to it
 * (see above). */
static int sim_blas_faster(sim_fcc *fc, const sim_gk *k, size_t es) {
  const char *e = getenv("XRT_SIM_BLAS");
  if (e && (!strcmp(e, "0") || !strcmp(e, "1"))) return e[0] == '1';
  int64_t threads = sim_gemm_threads(fc);
  pthread_mutex_lock(&sim_blas_mu);
  signed char *known = &sim_blas_known[es == 8][threads];
  if (!*known)
    *known = sim_blas_measure(&fc->cc->al, k, es,
                              sim_tpool_of(fc->cc->exe->cl, 0), threads)
                 ? 2
                 : 1;
  int r = *known == 2;
  pthread_mutex_unlock(&sim_blas_mu);
  return r;
}
#endif

/* Whether a product pays for packing (K = 0 counts as a small K). */
static int sim_gemm_big(int64_t M, int64_t N, int64_t K) {
  return M > 0 && N > 0 && (double)M * (double)N * (double)(K ? K : 64) >= 4096;
}

SIM_PRIVATE int sim_gemm_isa(sim_cc *cc) {
  if (!cc->gemm_known) cc->gemm_path = sim_gemm_path(), cc->gemm_known = 1;
  return cc->gemm_path;
}

/* A kernel for element type t, or NULL (then the plain loops run). */
static const sim_gk *sim_gemm_kernel(sim_cc *cc, xrt_dtype t) {
  int p = sim_gemm_isa(cc);
  if (p < 0 || (t != XRT_F32 && t != XRT_F64)) return NULL;
  const sim_gk *k = &sim_gks[t == XRT_F64][p];
  return k->fn ? k : &sim_gks[t == XRT_F64][0];
}

/* Replaces a planned f32/f64 dot_general by the packed GEMM when it is big
 * enough to pay for packing.  Returns 0 (leaving st alone) otherwise. */
SIM_PRIVATE int sim_gemm_lower_dot(sim_fcc *fc, const sim_dot *d, sim_step *st,
                              xrt_status *rc) {
  const sim_gk *k = sim_gemm_kernel(fc->cc, d->ct);
  *rc = XRT_OK;
  if (!k || d->lt != d->ct || d->rt != d->ct || d->ot != d->ct ||
      !sim_gemm_big(d->M, d->N, d->K))
    return 0;
  sim_gemm *g = (sim_gemm *)sim_palloc(fc, sizeof *g);
  if (!g) return (*rc = XRT_RESOURCE_EXHAUSTED), 1;
  memset(g, 0, sizeof *g);
  g->k = k;
  g->es = sim_esize(d->ct);
  g->BT = d->B, g->M = d->M, g->N = d->N, g->K = d->K;
  g->ab = d->lb, g->bb = d->rb, g->am = d->lm, g->ak = d->lk;
  g->bk = d->rk, g->bn = d->rn;
  g->cb = sim_gemm_iota(fc, d->B, d->M * d->N);
  g->cm = sim_gemm_iota(fc, d->M, d->N);
  g->cn = sim_gemm_iota(fc, d->N, 1);
  if (!g->cb || !g->cm || !g->cn) return (*rc = XRT_RESOURCE_EXHAUSTED), 1;
  if ((*rc = sim_gemm_finish(fc, g))) return 1;
  /* f32 rows of A contiguous in k: copied in strips, not transposed */
  g->astrip = g->es == 4 && g->ak_s == 1 && g->am_s != 1 && k->fs != NULL;
#ifdef XRT_WITH_CBLAS
  g->blas = sim_gemm_blas_ok(g) && sim_blas_faster(fc, k, g->es);
#endif
  /* B packed across calls when it is an argument (sim_gemm_bpre) */
  g->gid = g->K > 0 ? sim_gcache_id() : 0;
  st->data = g;
  st->run = sim_run_gemm;
  return 1;
}

/* ---- products of one lane's own (conv_gemm.c's chunked convolutions) ----
 * A product that sim_gemm_lower_dot planned, run whole on the calling
 * thread with the pack buffers of lane slot (< sim_gemm_slots), so that
 * as many products as the plan has lanes run at once, each on one thread:
 * no fork-join per product, and each thread packs and multiplies data it
 * wrote itself.  The same blocks and sums as sim_run_gemm with one lane. */

/* The K block the packed product of N columns and a K of type t would
 * have (0: none), so that callers can split N without reordering sums. */
SIM_PRIVATE int64_t sim_gemm_kc_for(sim_fcc *fc, xrt_dtype t, int64_t N,
                                    int64_t K) {
  const sim_gk *k = sim_gemm_kernel(fc->cc, t);
  return k ? sim_gemm_kc(k, N, K, sim_esize(t)) : 0;
}

/* Lane slots of a planned product (0: st is not one). */
SIM_PRIVATE int sim_gemm_slots(const sim_step *st) {
  if (st->run != sim_run_gemm) return 0;
  const sim_gemm *g = (const sim_gemm *)st->data;
  return g->BT == 1 && g->K > 0 && !g->blas ? g->lanes : 0;
}

/* Result rows stride elements apart (>= N): a window of columns of a
 * wider result.  0: not a planned product (st is left alone). */
SIM_PRIVATE int sim_gemm_out_rows(sim_fcc *fc, sim_step *st, int64_t stride,
                                  xrt_status *rc) {
  *rc = XRT_OK;
  if (!sim_gemm_slots(st)) return 0;
  sim_gemm *g = (sim_gemm *)(void *)(uintptr_t)st->data;
  if (stride < g->N || g->cm_s != g->N || g->cn_s != 1) return 0;
  int64_t *cm = sim_gemm_iota(fc, g->M, stride);
  if (!cm) return (*rc = XRT_RESOURCE_EXHAUSTED), 1;
  g->cm = cm;
  g->cm_s = sim_gemm_affine(cm, g->M);
  return 1;
}

/* Whether st is a product of one batch, on our kernels, whose result is M
 * rows of N contiguous elements, one after the other: then an epilogue can
 * take the rows as they are done (sim_gemm_run_epi); *lanes: the most
 * threads it runs on at once. */
SIM_PRIVATE int sim_gemm_by_rows(const sim_step *st, int64_t *M, int64_t *N,
                                 int *lanes) {
  if (!sim_gemm_slots(st)) return 0;
  const sim_gemm *g = (const sim_gemm *)st->data;
  if (g->cm_s != g->N || g->cn_s != 1 || g->cb[0] != 0) return 0;
  *M = g->M, *N = g->N, *lanes = g->lanes;
  return 1;
}

/* Keeps A packed across calls when it is an argument (a convolution's
 * kernel: conv_gemm.c); one batch only. */
SIM_PRIVATE void sim_gemm_keep_a(sim_step *st) {
  if (!sim_gemm_slots(st)) return;
  sim_gemm *g = (sim_gemm *)(void *)(uintptr_t)st->data;
  g->gida = sim_gcache_id();
}

/* A packed for st (sim_gemm_apre_of) or NULL; *entry for sim_gemm_apre_put
 * after the last use. */
SIM_PRIVATE const char *sim_gemm_apre(const sim_step *st, const char *A,
                                      sim_cx *cx, void **entry) {
  *entry = NULL;
  if (!sim_gemm_slots(st)) return NULL;
  return sim_gemm_apre_of((const sim_gemm *)st->data, A, cx, entry);
}

SIM_PRIVATE void sim_gemm_apre_put(sim_cx *cx, void *entry) {
  if (entry) sim_gcache_put(cx->exe->cl, entry, 1);
}

SIM_PRIVATE void sim_gemm_run_slot(const sim_step *st, void **vals,
                                   const char *A, const char *B, char *C,
                                   const char *apre, const char *bpre,
                                   int slot, const sim_gpost *po) {
  const sim_gemm *g = (const sim_gemm *)st->data;
  sim_gblk x = {g, A, B, C, NULL, NULL, 0, 0, 0, 0, 0, 1, bpre, apre,
                NULL, NULL, po, NULL};
  x.apack = (char *)vals[g->apack] + g->apack_lane * g->es * (size_t)slot;
  x.bpack = (char *)vals[g->bpack] + g->bpack_lane * g->es * (size_t)slot;
  x.a += (size_t)g->ab[0] * g->es;
  x.b += (size_t)g->bb[0] * g->es;
  x.c += (size_t)g->cb[0] * g->es;
  sim_gemm_lane(&x, 0);
}

/* ---- convolution as GEMM ---- */

/* Rows: (result batch, output position), position row-major. */
static int sim_gemm_conv_rows(sim_fcc *fc, const sim_conv *c, sim_gemm *g,
                              sim_gconv *cv) {
  int32_t ns = c->ns;
  int64_t P = 1;
  for (int32_t d = 0; d < ns; d++) P *= c->out[d];
  int64_t *am = (int64_t *)sim_palloc(fc, sizeof *am * (size_t)(g->M + 1));
  int64_t *cm = (int64_t *)sim_palloc(fc, sizeof *cm * (size_t)(g->M + 1));
  int32_t *mp = (int32_t *)sim_palloc(
      fc, sizeof *mp * (size_t)(g->M * (ns ? ns : 1) + 1));
  if (!am || !cm || !mp) return 0;
  for (int64_t b = 0, m = 0; b < c->NB; b++) {
    int64_t p[XRT_MAX_RANK] = {0};
    for (int64_t q = 0; q < P; q++, m++) {
      am[m] = b * c->lb;
      cm[m] = b * c->ob;
      for (int32_t d = 0; d < ns; d++) {
        cm[m] += p[d] * c->osp[d];
        mp[m * ns + d] = (int32_t)(c->toff[d] + p[d] * c->K[d]);
      }
      sim_la_next(p, c->out, ns);
    }
  }
  g->am = am, g->cm = cm, cv->mpos = mp;
  return 1;
}

/* cv->rbase and cv->wdelta (sim_gconv), after the rows and the columns:
 * a row is interior when every window position is in lhs at the same
 * distance from position 0 as in the first interior row. */
static int sim_gemm_conv_interior(sim_fcc *fc, int64_t M, int64_t Wn,
                                  sim_gconv *cv) {
  int64_t *rb = (int64_t *)sim_palloc(fc, sizeof *rb * (size_t)(M + 1));
  int64_t *wd = (int64_t *)sim_palloc(fc, sizeof *wd * (size_t)(Wn + 1));
  if (!rb || !wd) return 0;
  memset(wd, 0, sizeof *wd * (size_t)(Wn + 1));
  int have = 0;
  const int32_t ns = cv->ns;
  for (int64_t r = 0; r < M; r++) {
    const int32_t *mp = cv->mpos + r * ns;
    int ok;
    int64_t o0 = sim_gconv_at(cv, mp, cv->kwin, ns, &ok);
    rb[r] = -1;
    if (!ok) continue;
    int64_t w = 1;
    for (; w < Wn; w++) {
      int64_t o = sim_gconv_at(cv, mp, cv->kwin + w * ns, ns, &ok);
      if (!ok || (have && o - o0 != wd[w])) break;
      if (!have) wd[w] = o - o0;
    }
    if (w < Wn) continue;
    have = 1, rb[r] = o0;
  }
  cv->rbase = rb, cv->wdelta = wd;
  return 1;
}

/* Columns of A / rows of B: (window position, feature), feature fastest. */
static int sim_gemm_conv_cols(sim_fcc *fc, const sim_conv *c, sim_gemm *g,
                              sim_gconv *cv) {
  int32_t ns = c->ns;
  int64_t Wn = 1;
  for (int32_t d = 0; d < ns; d++) Wn *= c->K[d];
  int64_t *bk = (int64_t *)sim_palloc(fc, sizeof *bk * (size_t)(g->K + 1));
  int32_t *kw = (int32_t *)sim_palloc(
      fc, sizeof *kw * (size_t)(Wn * (ns ? ns : 1) + 1));
  if (!bk || !kw) return 0;
  int64_t w[XRT_MAX_RANK] = {0};
  for (int64_t i = 0; i < Wn; i++) {
    int64_t r = 0;
    for (int32_t d = 0; d < ns; d++) {
      r += w[d] * c->rsp[d];
      kw[i * ns + d] = (int32_t)w[d];
    }
    for (int64_t f = 0; f < c->Cg; f++) bk[i * c->Cg + f] = r + f * c->rif;
    sim_la_next(w, c->K, ns);
  }
  g->bk = bk, cv->kwin = kw;
  return 1;
}

/* Groups are batches: feature groups split lhs features and result
 * features, batch groups split lhs batches and result features. */
static int sim_gemm_conv_groups(sim_fcc *fc, const sim_conv *c, sim_gemm *g,
                                int64_t G, int fgroups) {
  int64_t *ab = (int64_t *)sim_palloc(fc, sizeof *ab * (size_t)G);
  int64_t *bb = (int64_t *)sim_palloc(fc, sizeof *bb * (size_t)G);
  int64_t *cb = (int64_t *)sim_palloc(fc, sizeof *cb * (size_t)G);
  if (!ab || !bb || !cb) return 0;
  for (int64_t i = 0; i < G; i++) {
    ab[i] = fgroups ? i * c->Cg * c->lf : i * c->NB * c->lb;
    bb[i] = i * g->N * c->rof;
    cb[i] = i * g->N * c->of;
  }
  g->ab = ab, g->bb = bb, g->cb = cb;
  g->bn = sim_gemm_iota(fc, g->N, c->rof);
  g->cn = sim_gemm_iota(fc, g->N, c->of);
  return g->bn && g->cn;
}

/* Replaces a planned static-padding f32/f64 convolution by the packed GEMM
 * when it is big enough.  Returns 0 (leaving st alone) otherwise. */
SIM_PRIVATE int sim_gemm_lower_conv(sim_fcc *fc, const sim_conv *c, sim_step *st,
                               xrt_status *rc) {
  const sim_la_cvt *t = &c->cv;
  const sim_gk *k = sim_gemm_kernel(fc->cc, t->ct);
  *rc = XRT_OK;
  if (!k || !c->tab || t->lt != t->ct || t->rt != t->ct || t->ot != t->ct ||
      c->tab_n >= INT32_MAX)
    return 0;
  int64_t fg = c->o_per_fgroup ? c->O / c->o_per_fgroup : 1;
  int64_t bg = c->o_per_bgroup ? c->O / c->o_per_bgroup : 1;
  if (fg > 1 && bg > 1) return 0;
  int64_t G = fg > 1 ? fg : bg, P = 1, Wn = 1;
  for (int32_t d = 0; d < c->ns; d++) P *= c->out[d], Wn *= c->K[d];
  sim_gemm g0;
  memset(&g0, 0, sizeof g0);
  g0.M = c->NB * P, g0.N = G ? c->O / G : 0, g0.K = Wn * c->Cg, g0.BT = G;
  if (!sim_gemm_big(g0.M, g0.N, g0.K)) return 0;
  sim_gemm *g = (sim_gemm *)sim_palloc(fc, sizeof *g);
  sim_gconv *cv = (sim_gconv *)sim_palloc(fc, sizeof *cv);
  if (!g || !cv) return (*rc = XRT_RESOURCE_EXHAUSTED), 1;
  *g = g0;
  memset(cv, 0, sizeof *cv);
  g->k = k;
  g->es = sim_esize(t->ct);
  g->conv = cv;
  cv->ns = c->ns, cv->tab = c->tab, cv->Cg = c->Cg, cv->lf = c->lf;
  for (int32_t d = 0; d < c->ns; d++) cv->K[d] = c->K[d];
  if (!sim_gemm_conv_rows(fc, c, g, cv) || !sim_gemm_conv_cols(fc, c, g, cv) ||
      !sim_gemm_conv_groups(fc, c, g, G, fg > 1) ||
      !sim_gemm_conv_interior(fc, g->M, Wn, cv))
    return (*rc = XRT_RESOURCE_EXHAUSTED), 1;
  g->ak = g->bk; /* unused by the convolution packer */
  /* Features in runs: copy them into strips rather than transpose. */
  g->astrip = g->es == 4 && c->lf == 1 && k->fs != NULL;
  if ((*rc = sim_gemm_finish(fc, g))) return 1;
  /* the kernel packed across calls when it is an argument, as a dot's
   * weights (it was packed again at every call) */
  g->gid = g->K > 0 ? sim_gcache_id() : 0;
  st->data = g;
  st->run = sim_run_gemm;
  return 1;
}
