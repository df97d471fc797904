/*
 * src/sim/conv_gemm.c - convolutions as plain GEMMs: feature-major (NCHW)
 * results as kernel x im2col, NHWC 1x1 ones as lhs x kernel in place,
 * NHWC ones of few positions as im2col x kernel; f32 and f64 with static
 * padding and one feature group.
 * Part of the simulated device; MIT licensed, see LICENSE.
 */
#include "internal.h"

/* ======================================================================
 * Convolution as plain products (gemm.c's packed GEMM, through
 * sim_gemm_lower_dot)
 *
 * gemm.c plans a convolution as windows x weights: C[(b, p), o], so a
 * result whose positions are contiguous and features strided (NCHW, as
 * PyTorch exports) is stored tile by tile through a scatter, and the lhs
 * windows are packed element by element at the feature stride.  Here such
 * a result is computed the other way round, per batch element:
 *
 *   result[b, o, p] = sum_k W[o, k] * cols[b, k, p],  k = (i, window)
 *
 * whose A operand is the kernel as it is (OIHW: rows of k, contiguous)
 * and whose B operand has the positions contiguous.  cols is the im2col
 * panel, built per call into plan scratch (on the device's threads): row
 * (b, i, window) holds, for every result position, the lhs element that
 * window position reads (runs copied, stride 2 by vector permutes), or
 * zero for padding and lhs-dilation holes (0 * inf is nan, as in the
 * other paths).  With the AVX-512 f32 kernels and runs of stride 1 or 2,
 * the panel is built straight in the product's packed layout instead
 * (sim_cg_panels), so the product does not pack it again.  A panel over
 * 4 MiB per batch element is made a batch element and a chunk of whole
 * result rows (about 512 KiB) at a time, so it is read back from L2
 * rather than memory; a batch over 32 MiB goes element by element.
 * Chunks are each one thread's whole (its panel in its own scratch, its
 * product written in place, result rows P apart), so the threads take
 * chunks, not halves of every chunk: no fork-join per chunk, and each
 * thread multiplies the panel it made.  On several threads, a
 * panel that would be made whole goes in 2 (or 1) chunks per thread so,
 * when that keeps the product's K blocks (so its sums).  A 1x1
 * convolution of stride 1 without padding or lhs dilation reads the lhs
 * in place: no copy at all, and its step is the product's own, so the
 * elementwise ops after it (bias, activation) run on its rows as they are
 * done (fusion.c).  The kernel, an argument, stays packed across
 * calls while unchanged (gemm_cache.c, as the weights of a dot).
 *
 * NHWC results (features contiguous, as JAX writes them) stay with gemm.c's
 * windows x weights, except two plain products that let gemm.c treat the
 * kernel as the B operand of a dot (packed once per call at most, and
 * kept packed across calls while the argument is unchanged, gemm_cache.c):
 * a 1x1 convolution without padding or lhs dilation (any stride) is
 * lhs rows x kernel in place, and one of at most as many result positions
 * as features (the last stages of a ResNet, where the weights outweigh the
 * windows) is an im2col panel [positions, (window, feature)] x kernel.
 *
 * Only the order of the sums over k differs from the plain loops (the
 * GEMM's K blocks); results do not depend on the thread count.
 * ==================================================================== */

typedef struct sim_cg {
  const sim_conv *c;
  sim_step gemm;      /* the dot: in = {kernel, cols}, out = result */
  sim_step gemm2;     /* chunked: the dot of the last, narrower chunk */
  int32_t ids[2];     /* gemm.in (and gemm2.in) */
  int32_t cols;       /* im2col scratch */
  int32_t ctmp;       /* chunked: the products of one chunk, [O, width] */
  size_t es;
  int64_t P, Wn, OL;  /* result positions, window positions, last dim */
  /* Last spatial dimension, per window position kx: positions [lo, hi)
   * read x0 + (p - lo) * xs (elements from the lhs row), others zero;
   * gather (lhs dilation): through the table instead. */
  int64_t *lo, *hi, *x0, xs;
  int gather;
  /* 0: one panel of every batch element, one product; 1: a batch element
   * at a time, in chunks of CH positions (whole rows of the last
   * dimension), nch of them, so the panel stays in the caches. */
  int per_batch;
  int64_t CH, nch;
  /* chunked, lanes > 0: each chunk is one thread's whole (its panel in
   * its own part of cols, its product written in place, rows P apart)
   * on up to lanes threads at once (sim_cg_chunks); 0: ctmp */
  int lanes;
  int v512;           /* AVX-512 copies (f32 runs of stride 2) */
  /* cols is built in the layout the products pack B in (sim_cg_panels),
   * so they read it as it is instead of packing a copy of it */
  int packed;
  int64_t cells;      /* elements of one panel (each lane's) */
  int64_t Wo;         /* window positions of the outer dimensions */
  /* packed: per K row, its offset in gemm's (dof) and gemm2's (dof2) B
   * layout, then per K row its K block's rows (sim_cg_panels) */
  int64_t *dof, *dof2;
  /* NHWC: cols is [positions, (window, feature)], the A operand */
  int nhwc;
  const int32_t *mpos; /* NHWC: per row, ns table starts */
} sim_cg;

/* What a piece of the panel reads and writes: rows (batch element,
 * feature) from rb on, the positions of outer rows [po0, po1) (width of
 * them), into cols. */
typedef struct sim_cg_run {
  const sim_cg *g;
  const char *L;
  char *cols;
  int64_t rb, po0, po1, width;
  sim_gbgeom pk;       /* g->packed: the product's B layout */
  const int64_t *dof;  /* and its rows' offsets in it (g->dof) */
} sim_cg_run;

#if SIM_X86_64
#include <immintrin.h>
/* dst[p] = s[2 p] for p < n: two loads (the second masked short of the
 * element after the last one read) and a permutation per 16. */
__attribute__((target("avx512f"))) static void sim_cg_even_f32(
    float *dst, const float *s, int64_t n) {
  const __m512i even = _mm512_setr_epi32(0, 2, 4, 6, 8, 10, 12, 14, 16, 18,
                                         20, 22, 24, 26, 28, 30);
  int64_t p = 0;
  for (; p + 16 <= n; p += 16) {
    __m512 a = _mm512_loadu_ps(s + 2 * p);
    __m512 b = _mm512_maskz_loadu_ps(0x7fff, s + 2 * p + 16);
    _mm512_storeu_ps(dst + p, _mm512_permutex2var_ps(a, even, b));
  }
  for (; p < n; p++) dst[p] = s[2 * p];
}
#define SIM_CG_EVEN(g, d, s, n) \
  ((g)->v512 && sizeof *(d) == 4 \
       ? (sim_cg_even_f32((float *)(void *)(d), \
                          (const float *)(const void *)(s), (n)), 1) \
       : 0)

/* ---- the panel built packed (AVX-512, f32, runs of stride 1 or 2) ----
 * Built micro-panel by micro-panel in the layout the product packs B in
 * (sim_gemm_bgeom): per K row, the 32 positions of the micro-panel as two
 * vectors, each filled by masked loads of the runs of the lhs rows the
 * positions read (a run per result row the panel crosses), zeros where
 * they read padding.  So the panel is written once, in order, and the
 * product reads it as it is, where the rows of sim_cg_rows are written,
 * read back and packed.  Per micro-panel, what depends only on the last
 * window position kx (the runs' lanes and masks) is worked out once for
 * the features and outer window positions that share it, and the outer
 * dimensions' offsets once per run and outer window position. */
enum { SIM_CG_NR = 32 };    /* the AVX-512 f32 kernel's micro-panel */
enum { SIM_CG_WO_MAX = 64 }; /* outer window positions, at most */

/* One run of a micro-panel: lanes [lane, lane + n) read the result row's
 * positions t0 .. t0 + n - 1; off[wo]: the lhs offset of its row at outer
 * window position wo, or -1 (padding). */
typedef struct sim_cg_seg {
  int64_t lane, t0, n;
  int64_t off[SIM_CG_WO_MAX];
} sim_cg_seg;

/* What a run loads at one kx into the vector of lanes h .. h + 15: mask m
 * (0: nothing), from element base + (its lhs offset) on; for stride 2 the
 * masks of the two loads whose even elements it takes. */
typedef struct sim_cg_ld {
  __mmask16 m, mlo, mhi;
  int64_t base;
} sim_cg_ld;

/* Lanes of a mask's bits spread to the even bits of 16 (bit b -> 2 b). */
static unsigned sim_cg_spread8(unsigned x) {
  x = (x | x << 4) & 0x0F0F;
  x = (x | x << 2) & 0x3333;
  return (x | x << 1) & 0x5555;
}

/* The loads of lanes [lane, lane + n) (run elements 0 .. n - 1 at stride
 * xs from element r0) into the vector of lanes h .. h + 15. */
static sim_cg_ld sim_cg_ld_of(int64_t lane, int64_t n, int64_t r0, int64_t xs,
                              int64_t h) {
  sim_cg_ld l = {0, 0, 0, 0};
  int64_t a = lane > h ? lane : h, e = lane + n < h + 16 ? lane + n : h + 16;
  if (a >= e) return l;
  unsigned m = ((1u << (e - a)) - 1) << (a - h);
  l.m = (__mmask16)m;
  l.base = r0 - (lane - h) * xs; /* lane l of the vector reads base + l xs */
  l.mlo = (__mmask16)sim_cg_spread8(m & 0xFF);
  l.mhi = (__mmask16)sim_cg_spread8(m >> 8);
  return l;
}

/* v with the lanes of l loaded from p (+ l.base: may point before the
 * run; the masked-off lanes are not read). */
__attribute__((target("avx512f"), always_inline)) static inline __m512
sim_cg_load(__m512 v, const sim_cg_ld *l, const float *p, int64_t xs) {
  const float *s = (const float *)(uintptr_t)((uintptr_t)p +
                                              (uintptr_t)l->base *
                                                  sizeof(float));
  if (xs == 1) return _mm512_mask_loadu_ps(v, l->m, s);
  const __m512i even = _mm512_setr_epi32(0, 2, 4, 6, 8, 10, 12, 14, 16, 18,
                                         20, 22, 24, 26, 28, 30);
  __m512 x = _mm512_maskz_loadu_ps(l->mlo, s);
  __m512 y = _mm512_maskz_loadu_ps(l->mhi, s + 16);
  return _mm512_mask_mov_ps(v, l->m, _mm512_permutex2var_ps(x, even, y));
}

/* The runs of micro-panel pj (positions from its first on, up to the
 * run's width) into seg; returns how many. */
static int64_t sim_cg_segs(const sim_cg_run *x, int64_t pj, sim_cg_seg *seg) {
  const sim_cg *g = x->g;
  const sim_conv *c = g->c;
  int32_t d = c->ns - 1;
  int64_t p = pj * SIM_CG_NR, pend = p + SIM_CG_NR, nseg = 0;
  if (pend > x->width) pend = x->width;
  for (int64_t lane = 0; p < pend; nseg++) {
    sim_cg_seg *sg = &seg[nseg];
    int64_t rem = x->po0 + p / g->OL, tq[XRT_MAX_RANK];
    sg->lane = lane, sg->t0 = p % g->OL;
    sg->n = g->OL - sg->t0 < pend - p ? g->OL - sg->t0 : pend - p;
    for (int32_t e = d - 1; e >= 0; e--)
      tq[e] = c->toff[e] + rem % c->out[e] * c->K[e], rem /= c->out[e];
    int64_t w[XRT_MAX_RANK] = {0};
    for (int64_t wo = 0; wo < g->Wo; wo++) {
      int64_t off = 0, ok = 1;
      for (int32_t e = 0; e < d; e++) {
        int64_t t = c->tab[tq[e] + w[e]];
        ok &= t >= 0;
        off += t;
      }
      sg->off[wo] = ok ? off : -1;
      sim_la_next(w, c->K, d);
    }
    p += sg->n, lane += sg->n;
  }
  return nseg;
}

/* The K rows of window column kx of one micro-panel (col: its first
 * position) from its runs' loads ld[0, nseg): every feature and outer
 * window position.  Inlined with NS = nseg for one or two runs (the
 * common case: 32 positions cross one or two result rows), so the masks
 * and bases stay in registers (as an array indexed in a loop they were
 * reloaded for every vector: a fifth of the build); NS = 0 loops over
 * nseg. */
__attribute__((target("avx512f"), always_inline)) static inline void
sim_cg_fill(const sim_cg_run *x, const sim_cg_seg *seg,
            sim_cg_ld (*ld)[2], int64_t nseg, const float *Lb,
            float *dst, int64_t col, int64_t kx, const int NS) {
  const sim_cg *g = x->g;
  const sim_conv *c = g->c;
  const int64_t *dof = x->dof, *dkb = x->dof + x->pk.K;
  int64_t KW = c->K[c->ns - 1], xs = g->xs, ns = NS ? NS : nseg;
  sim_cg_ld l0[2] = {ld[0][0], ld[0][1]}, l1[2] = {ld[0][0], ld[0][1]};
  if (NS == 2) l1[0] = ld[1][0], l1[1] = ld[1][1];
  for (int64_t i = 0, k = kx; i < c->Cg; i++) {
    const float *src = Lb + i * c->lf;
    for (int64_t wo = 0; wo < g->Wo; wo++, k += KW) {
      __m512 v0 = _mm512_setzero_ps(), v1 = v0;
      for (int64_t q = 0; q < ns; q++) {
        int64_t off = seg[q].off[wo];
        if (off < 0) continue;
        const sim_cg_ld *l = NS == 0 ? ld[q] : q == 0 ? l0 : l1;
        v0 = sim_cg_load(v0, &l[0], src + off, xs);
        v1 = sim_cg_load(v1, &l[1], src + off, xs);
      }
      float *o = dst + dof[k] + col * dkb[k];
      _mm512_storeu_ps(o, v0);
      _mm512_storeu_ps(o + 16, v1);
    }
  }
}

/* Items [j0, j1) of the run's packed panel: item j is micro-panel j % np
 * of batch element j / np (np: the micro-panels of a batch element); the
 * run's pk is the product's layout, g->dof its K rows' offsets in it. */
__attribute__((target("avx512f"))) static void sim_cg_panels(void *ctx,
                                                             int64_t j0,
                                                             int64_t j1) {
  const sim_cg_run *x = (const sim_cg_run *)ctx;
  const sim_cg *g = x->g;
  const sim_conv *c = g->c;
  int64_t npan = x->pk.np / SIM_CG_NR, KW = c->K[c->ns - 1], xs = g->xs;
  sim_cg_seg seg[SIM_CG_NR];
  sim_cg_ld ld[SIM_CG_NR][2];
  for (int64_t j = j0; j < j1; j++) {
    int64_t bl = j / npan, pj = j % npan, col = pj * SIM_CG_NR;
    int64_t nseg = sim_cg_segs(x, pj, seg);
    const float *Lb =
        (const float *)(const void *)x->L + (x->rb / c->Cg + bl) * c->lb;
    float *dst = (float *)(void *)x->cols + bl * x->pk.K * x->pk.np;
    for (int64_t kx = 0; kx < KW; kx++) {
      int64_t lo = g->lo[kx], hi = g->hi[kx];
      for (int64_t q = 0; q < nseg; q++) {
        const sim_cg_seg *sg = &seg[q];
        int64_t ts = sg->t0 > lo ? sg->t0 : lo;
        int64_t te = sg->t0 + sg->n < hi ? sg->t0 + sg->n : hi;
        int64_t lane = sg->lane + ts - sg->t0, n = te > ts ? te - ts : 0;
        int64_t r0 = g->x0[kx] + (ts - lo) * xs;
        ld[q][0] = sim_cg_ld_of(lane, n, r0, xs, 0);
        ld[q][1] = sim_cg_ld_of(lane, n, r0, xs, 16);
      }
      if (nseg == 1)
        sim_cg_fill(x, seg, ld, nseg, Lb, dst, col, kx, 1);
      else if (nseg == 2)
        sim_cg_fill(x, seg, ld, nseg, Lb, dst, col, kx, 2);
      else
        sim_cg_fill(x, seg, ld, nseg, Lb, dst, col, kx, 0);
    }
  }
}
#define SIM_CG_PACKED 1
#else
#define SIM_CG_EVEN(g, d, s, n) 0
#define SIM_CG_PACKED 0
#endif

#define SIM_CG_ROW(T)                                                       \
  static void sim_cg_last_##T(const sim_cg *g, int64_t kx, const T *src,   \
                              T *dst) {                                      \
    const sim_conv *c = g->c;                                                \
    int32_t d = c->ns - 1;                                                   \
    if (g->gather) {                                                         \
      const int64_t *t = c->tab + c->toff[d] + kx;                           \
      for (int64_t p = 0; p < g->OL; p++) {                                  \
        int64_t o = t[p * c->K[d]];                                          \
        dst[p] = o >= 0 ? src[o] : (T)0;                                     \
      }                                                                      \
      return;                                                                \
    }                                                                        \
    int64_t lo = g->lo[kx], hi = g->hi[kx], xs = g->xs;                      \
    for (int64_t p = 0; p < lo; p++) dst[p] = 0;                             \
    const T *s = src + g->x0[kx];                                            \
    if (xs == 1)                                                             \
      memcpy(dst + lo, s, sizeof(T) * (size_t)(hi - lo));                    \
    else if (xs != 2 || !SIM_CG_EVEN(g, dst + lo, s, hi - lo))               \
      for (int64_t p = lo; p < hi; p++) dst[p] = s[(p - lo) * xs];           \
    for (int64_t p = hi; p < g->OL; p++) dst[p] = 0;                         \
  }
SIM_CG_ROW(float)
SIM_CG_ROW(double)

/* Items [j0, j1) of the panel: item j is row j / Wn (batch element,
 * feature) at window position j % Wn. */
static void sim_cg_rows(void *ctx, int64_t j0, int64_t j1) {
  const sim_cg_run *x = (const sim_cg_run *)ctx;
  const sim_cg *g = x->g;
  const sim_conv *c = g->c;
  int32_t ns = c->ns, d = ns - 1;
  int64_t C = c->Cg, es = (int64_t)g->es;
  for (int64_t j = j0; j < j1; j++) {
    int64_t r = j / g->Wn, wi = j % g->Wn;
    int64_t b = (x->rb + r) / C, i = (x->rb + r) % C;
    const char *src = x->L + (b * c->lb + i * c->lf) * es;
    char *dst = x->cols + (j * x->width) * es;
    int64_t w[XRT_MAX_RANK] = {0}, q[XRT_MAX_RANK] = {0}, rem = wi;
    for (int32_t e = d; e >= 0; e--) w[e] = rem % c->K[e], rem /= c->K[e];
    rem = x->po0;
    for (int32_t e = d - 1; e >= 0; e--)
      q[e] = rem % c->out[e], rem /= c->out[e];
    for (int64_t po = x->po0; po < x->po1; po++) {
      int64_t off = 0;
      int ok = 1;
      for (int32_t e = 0; e < d; e++) {
        int64_t t = c->tab[c->toff[e] + q[e] * c->K[e] + w[e]];
        ok &= t >= 0;
        off += t;
      }
      char *o = dst + (po - x->po0) * g->OL * es;
      if (!ok)
        memset(o, 0, (size_t)(g->OL * es));
      else if (es == 4)
        sim_cg_last_float(g, w[d],
                          (const float *)(const void *)(src + off * es),
                          (float *)(void *)o);
      else
        sim_cg_last_double(g, w[d],
                           (const double *)(const void *)(src + off * es),
                           (double *)(void *)o);
      sim_la_next(q, c->out, d);
    }
  }
}

/* NHWC rows [m0, m1) of the panel: per result position (b, p) and
 * window position, the lhs features it reads (a run), or zeros. */
static void sim_cg_rows_nhwc(void *ctx, int64_t m0, int64_t m1) {
  const sim_cg_run *x = (const sim_cg_run *)ctx;
  const sim_cg *g = x->g;
  const sim_conv *c = g->c;
  int32_t ns = c->ns;
  size_t es = g->es, run = (size_t)c->Cg * es;
  for (int64_t m = m0; m < m1; m++) {
    const int32_t *mp = g->mpos + m * ns;
    const char *src = x->L + (size_t)(m / g->P * c->lb) * es;
    char *dst = x->cols + (size_t)(m * g->Wn) * run;
    int64_t w[XRT_MAX_RANK] = {0};
    for (int64_t wi = 0; wi < g->Wn; wi++, dst += run) {
      int64_t off = 0;
      int ok = 1;
      for (int32_t e = 0; e < ns; e++) {
        int64_t t = c->tab[mp[e] + w[e]];
        ok &= t >= 0;
        off += t;
      }
      if (ok)
        memcpy(dst, src + (size_t)off * es, run);
      else
        memset(dst, 0, run);
      sim_la_next(w, c->K, ns);
    }
  }
}

/* The run's panel: packed (sim_cg_panels, in items of a micro-panel) or
 * as rows (sim_cg_rows, in items of a row), on the device's threads. */
static void sim_cg_build(const sim_cg *g, sim_cg_run *x, const sim_step *gs,
                         int64_t nb, sim_cx *cx) {
#if SIM_CG_PACKED
  if (g->packed) {
    sim_gemm_bgeom(gs, &x->pk);
    x->dof = gs == &g->gemm2 ? g->dof2 : g->dof;
    int64_t per = x->pk.K * SIM_CG_NR; /* elements an item */
    sim_parallel_for(cx, nb * (x->pk.np / SIM_CG_NR),
                     per >= 65536 ? 1 : 65536 / per, sim_cg_panels, x);
    return;
  }
#endif
  (void)gs;
  int64_t per = x->width; /* pieces of about 64K elements */
  sim_parallel_for(cx, nb * g->c->Cg * g->Wn, per >= 65536 ? 1 : 65536 / per,
                   sim_cg_rows, x);
}

/* The product gs of the panel just built. */
static void sim_cg_multiply(const sim_cg *g, const sim_step *gs, void **vals,
                            sim_cx *cx, const char *cols) {
  if (g->packed)
    sim_gemm_run_packed(gs, vals, cx, cols);
  else
    gs->run(gs, vals, cx);
}

/* Chunked convolutions, a chunk per thread: lane slots in use (bits). */
typedef struct sim_cg_lane {
  const sim_cg *g;
  void **vals;
  const char *L, *W;
  char *cols, *out;
  atomic_ullong busy;
  const char *apre, *apre2; /* the kernel packed for gemm, gemm2, or NULL */
  const sim_gpost *po;      /* the products' epilogue, or NULL */
} sim_cg_lane;

/* A free lane slot, marked busy: at most lanes threads run chunks at once,
 * so one is free but for the moment another thread takes to mark one. */
static int sim_cg_slot(sim_cg_lane *y) {
  for (;;) {
    unsigned long long m = atomic_load(&y->busy);
    for (int i = 0; i < y->g->lanes; i++)
      if (!(m & (1ull << i)) &&
          atomic_compare_exchange_weak(&y->busy, &m, m | (1ull << i)))
        return i;
    sched_yield();
  }
}

/* Chunks [j0, j1): chunk j is batch element j / nch, positions of chunk
 * j % nch; panel and product on the calling thread. */
static void sim_cg_chunks(void *ctx, int64_t j0, int64_t j1) {
  sim_cg_lane *y = (sim_cg_lane *)ctx;
  const sim_cg *g = y->g;
  const sim_conv *c = g->c;
  int slot = sim_cg_slot(y);
  char *cols = y->cols + (size_t)(slot * g->cells) * g->es;
  for (int64_t j = j0; j < j1; j++) {
    int64_t b = j / g->nch, p0 = j % g->nch * g->CH;
    int64_t n = g->P - p0 < g->CH ? g->P - p0 : g->CH;
    const sim_step *gs = n < g->CH ? &g->gemm2 : &g->gemm;
    sim_cg_run x = {g, y->L, cols, b * c->Cg, p0 / g->OL, (p0 + n) / g->OL, n,
                    {0, 0, 0, 0, 0}, NULL};
    sim_cg_build(g, &x, gs, 1, NULL); /* on this thread */
    sim_gemm_run_slot(gs, y->vals, y->W, cols,
                      y->out + (size_t)(b * c->ob + p0) * g->es,
                      n < g->CH ? y->apre2 : y->apre,
                      g->packed ? cols : NULL, slot, y->po);
  }
  atomic_fetch_and(&y->busy, ~(1ull << slot));
}

static xrt_status sim_run_cg(const sim_step *st, void **vals, sim_cx *cx);

/* The whole panel of st (one product of it: not per batch element). */
static void sim_cg_panel(const sim_step *st, void **vals, sim_cx *cx) {
  const sim_cg *g = (const sim_cg *)st->data;
  const sim_conv *c = g->c;
  if (g->nhwc) {
    sim_cg_run y = {g, (const char *)vals[st->in[0]], (char *)vals[g->cols],
                    0, 0, 0, 0, {0, 0, 0, 0, 0}, NULL};
    int64_t per = g->Wn * c->Cg, gr = per >= 16384 ? 1 : 16384 / per;
    sim_parallel_for(cx, c->NB * g->P, gr, sim_cg_rows_nhwc, &y);
    return;
  }
  sim_cg_run x = {g, (const char *)vals[st->in[0]], (char *)vals[g->cols],
                  0, 0, g->P / g->OL, g->P, {0, 0, 0, 0, 0}, NULL};
  sim_cg_build(g, &x, &g->gemm, c->NB, cx);
}

SIM_PRIVATE const sim_step *sim_cg_product(const sim_step *st) {
  if (st->run != sim_run_cg) return NULL;
  const sim_cg *g = (const sim_cg *)st->data;
  return g->nhwc || !g->per_batch ? &g->gemm : NULL;
}

SIM_PRIVATE int sim_cg_run_with(const sim_step *st, void **vals, sim_cx *cx,
                                sim_gemm_epi_fn epi, void *ctx,
                                const sim_gpost *po) {
  const sim_cg *g = (const sim_cg *)st->data;
  if (po && !sim_gemm_post_ok(&g->gemm)) return 0;
  sim_cg_panel(st, vals, cx);
  const char *bpre = g->packed && !g->nhwc ? (const char *)vals[g->cols]
                                           : NULL;
  return sim_gemm_run_packed_with(&g->gemm, vals, cx, bpre, epi, ctx, po);
}

SIM_PRIVATE int sim_cg_chunked(const sim_step *st, int64_t *N) {
  if (st->run != sim_run_cg) return 0;
  const sim_cg *g = (const sim_cg *)st->data;
  const sim_conv *c = g->c;
  if (g->nhwc || !g->per_batch || !g->lanes || c->of != g->P ||
      c->ob != c->O * g->P || !sim_gemm_post_rows_ok(&g->gemm) ||
      (g->P % g->CH && !sim_gemm_post_rows_ok(&g->gemm2)))
    return 0;
  *N = g->P;
  return 1;
}

SIM_PRIVATE void sim_cg_run_chunks(const sim_step *st, void **vals,
                                   sim_cx *cx, const sim_gpost *po) {
  const sim_cg *g = (const sim_cg *)st->data;
  sim_cg_lane y = {g, vals, (const char *)vals[st->in[0]],
                   (const char *)vals[st->in[1]], (char *)vals[g->cols],
                   (char *)vals[st->out[0]], 0, NULL, NULL, po};
  void *e1, *e2 = NULL;
  y.apre = sim_gemm_apre(&g->gemm, y.W, cx, &e1);
  y.apre2 = y.apre;
  if (g->P % g->CH) y.apre2 = sim_gemm_apre(&g->gemm2, y.W, cx, &e2);
  int threads = cx && cx->tp ? cx->tp->threads : 1;
  int64_t n = g->c->NB * g->nch;
  if (threads > g->lanes) sim_cg_chunks(&y, 0, n);
  else sim_parallel_for(cx, n, 1, sim_cg_chunks, &y);
  sim_gemm_apre_put(cx, e1);
  sim_gemm_apre_put(cx, e2);
}

static xrt_status sim_run_cg(const sim_step *st, void **vals, sim_cx *cx) {
  const sim_cg *g = (const sim_cg *)st->data;
  const sim_conv *c = g->c;
  if (sim_cg_product(st)) {
    sim_cg_run_with(st, vals, cx, NULL, NULL, NULL);
    return XRT_OK;
  }
  int64_t PO = g->P / g->OL; /* rows of positions of the outer dims */
  sim_cg_run x = {g, (const char *)vals[st->in[0]], (char *)vals[g->cols],
                  0, 0, PO, g->P, {0, 0, 0, 0, 0}, NULL};
  if (g->lanes) {
    sim_cg_run_chunks(st, vals, cx, NULL);
    return XRT_OK;
  }
  /* A batch element (and a chunk) at a time: the product writes through
   * the result's slot, pointed for the while at the element's results, or
   * at the chunk's scratch, whose rows are then copied into place. */
  void *out = vals[st->out[0]];
  char *ct = g->ctmp >= 0 ? (char *)vals[g->ctmp] : NULL;
  xrt_status rc = XRT_OK;
  for (int64_t b = 0; b < c->NB && !rc; b++) {
    char *ob = (char *)out + (size_t)(b * c->ob) * g->es;
    x.rb = b * c->Cg;
    for (int64_t k = 0; k < g->nch && !rc; k++) {
      int64_t p0 = k * g->CH, n = g->P - p0 < g->CH ? g->P - p0 : g->CH;
      x.po0 = p0 / g->OL, x.po1 = (p0 + n) / g->OL, x.width = n;
      const sim_step *gs = n < g->CH ? &g->gemm2 : &g->gemm;
      sim_cg_build(g, &x, gs, 1, cx);
      vals[st->out[0]] = ct ? (void *)ct : (void *)ob;
      sim_cg_multiply(g, gs, vals, cx, x.cols);
      vals[st->out[0]] = out;
      if (ct)
        for (int64_t o = 0; o < c->O; o++)
          memcpy(ob + (size_t)(o * c->of + p0) * g->es,
                 ct + (size_t)(o * n) * g->es, (size_t)n * g->es);
    }
  }
  return rc;
}

static int64_t *sim_cg_tab(sim_fcc *fc, int64_t n) {
  return (int64_t *)sim_palloc(fc, sizeof(int64_t) * (size_t)(n ? n : 1));
}

/* The last dimension's runs of an im2col panel (lhs dilation 1: one run
 * per window position, affine in the result position). */
static xrt_status sim_cg_runs(sim_fcc *fc, sim_cg *g) {
  const sim_conv *c = g->c;
  int32_t d = c->ns - 1;
  g->gather = c->ld[d] != 1;
  g->lo = sim_cg_tab(fc, c->K[d]), g->hi = sim_cg_tab(fc, c->K[d]);
  g->x0 = sim_cg_tab(fc, c->K[d]);
  if (!g->lo || !g->hi || !g->x0) return XRT_RESOURCE_EXHAUSTED;
  g->xs = c->ws[d] * c->lsp[d];
  const int64_t *tb = c->tab + c->toff[d];
  for (int64_t kx = 0; kx < c->K[d]; kx++) {
    int64_t lo = 0, hi = g->OL;
    while (lo < hi && tb[lo * c->K[d] + kx] < 0) lo++;
    while (hi > lo && tb[(hi - 1) * c->K[d] + kx] < 0) hi--;
    g->lo[kx] = lo, g->hi[kx] = hi;
    g->x0[kx] = lo < hi ? tb[lo * c->K[d] + kx] : 0;
    /* the run must be affine in p (window reversal flips the sign) */
    for (int64_t p = lo; p < hi && !g->gather; p++)
      g->gather = tb[p * c->K[d] + kx] != g->x0[kx] + (p - lo) * g->xs;
  }
  return XRT_OK;
}

/* NHWC results (features contiguous) of a 1x1 convolution without
 * padding or lhs dilation: the product of the lhs rows (of the positions
 * the strides pick) and the kernel, both in place (a plain dot_general:
 * result[b, p, o] = sum_i lhs[b, x(p), i] * rhs[i, o]). */
static int sim_cg_lower_rows(sim_fcc *fc, const sim_conv *c, sim_step *st,
                             int64_t P, xrt_status *rc) {
  int32_t ns = c->ns;
  int64_t s = 1;
  for (int32_t e = ns - 1; e >= 0; e--) {
    if (c->out[e] > 1 && c->osp[e] != s * c->O) return 0;
    s *= c->out[e];
  }
  if ((c->NB > 1 && c->ob != P * c->O) || (c->O > 1 && c->of != 1)) return 0;
  sim_dot *dt = (sim_dot *)sim_palloc(fc, sizeof *dt);
  int64_t *lb = sim_cg_tab(fc, c->NB), *lm = sim_cg_tab(fc, P);
  int64_t *lk = sim_cg_tab(fc, c->Cg), *rb = sim_cg_tab(fc, c->NB);
  int64_t *rk = sim_cg_tab(fc, c->Cg), *rn = sim_cg_tab(fc, c->O);
  if (!dt || !lb || !lm || !lk || !rb || !rk || !rn)
    return (*rc = XRT_RESOURCE_EXHAUSTED), 1;
  memset(dt, 0, sizeof *dt);
  for (int64_t b = 0; b < c->NB; b++) lb[b] = b * c->lb, rb[b] = 0;
  int64_t q[XRT_MAX_RANK] = {0};
  for (int64_t p = 0; p < P; p++) {
    lm[p] = 0;
    for (int32_t e = 0; e < ns; e++) lm[p] += q[e] * c->ws[e] * c->lsp[e];
    sim_la_next(q, c->out, ns);
  }
  for (int64_t i = 0; i < c->Cg; i++) lk[i] = i * c->lf, rk[i] = i * c->rif;
  for (int64_t o = 0; o < c->O; o++) rn[o] = o * c->rof;
  const sim_la_cvt *t = &c->cv;
  dt->B = c->NB, dt->M = P, dt->N = c->O, dt->K = c->Cg;
  dt->lb = lb, dt->lm = lm, dt->lk = lk, dt->rb = rb, dt->rk = rk;
  dt->rn = rn;
  dt->lt = dt->rt = dt->ot = dt->ct = t->ct;
  dt->acc = dt->ltmp = dt->rtmp = dt->otmp = -1;
  dt->lnumel = t->lnumel, dt->rnumel = t->rnumel, dt->onumel = t->onumel;
  dt->wrap = XRT_DTYPE_INVALID;
  return sim_gemm_lower_dot(fc, dt, st, rc);
}

/* The product kernel x panel of N positions per batch element (NB of
 * them), planned into step: result[b, o, p] = sum_k W[o, k] cols[b, k, p]
 * with W[o, k] at lm[o] + lk[k]; direct: the lhs is the panel. */
static int sim_cg_dot(sim_fcc *fc, const sim_conv *c, int64_t NB,
                      const int64_t *lm, const int64_t *lk, int64_t K,
                      int64_t N, int direct, sim_step *step, xrt_status *rc) {
  const sim_la_cvt *t = &c->cv;
  sim_dot *dt = (sim_dot *)sim_palloc(fc, sizeof *dt);
  int64_t *lb = sim_cg_tab(fc, NB), *rb = sim_cg_tab(fc, NB);
  int64_t *rk = sim_cg_tab(fc, K), *rn = sim_cg_tab(fc, N);
  if (!dt || !lb || !rb || !rk || !rn)
    return (*rc = XRT_RESOURCE_EXHAUSTED), 1;
  memset(dt, 0, sizeof *dt);
  for (int64_t b = 0; b < NB; b++)
    lb[b] = 0, rb[b] = direct ? b * c->lb : b * K * N;
  for (int64_t k = 0; k < K; k++) rk[k] = direct ? k * c->lf : k * N;
  int64_t q[XRT_MAX_RANK] = {0};
  for (int64_t p = 0; p < N; p++) {
    rn[p] = direct ? 0 : p;
    for (int32_t e = 0; direct && e < c->ns; e++) rn[p] += q[e] * c->lsp[e];
    if (direct) sim_la_next(q, c->out, c->ns);
  }
  dt->B = NB, dt->M = c->O, dt->N = N, dt->K = K;
  dt->lb = lb, dt->lm = lm, dt->lk = lk, dt->rb = rb, dt->rk = rk;
  dt->rn = rn;
  dt->lt = dt->rt = dt->ot = dt->ct = t->ct;
  dt->acc = dt->ltmp = dt->rtmp = dt->otmp = -1;
  dt->lnumel = t->rnumel, dt->onumel = NB * c->O * N;
  dt->rnumel = direct ? t->lnumel : NB * K * N;
  dt->wrap = XRT_DTYPE_INVALID;
  return sim_gemm_lower_dot(fc, dt, step, rc);
}

/* NHWC results of a convolution of few positions and many weights
 * (positions at most the result features, as in the last stages of a
 * ResNet): an im2col panel [positions, (window, feature)] times the kernel
 * [(window, feature), o] in place, a plain dot_general whose B operand is
 * the kernel itself, so gemm.c can keep it packed across calls while the
 * argument is unchanged (gemm_cache.c), where gemm.c's convolution packs
 * all of it again at every call. */
static int sim_cg_lower_win(sim_fcc *fc, const sim_conv *c, sim_step *st,
                            int64_t P, int64_t Wn, xrt_status *rc) {
  int32_t ns = c->ns;
  int64_t M = c->NB * P, K = Wn * c->Cg;
  int64_t s = 1;
  for (int32_t e = ns - 1; e >= 0; e--) {
    if (c->out[e] > 1 && c->osp[e] != s * c->O) return 0;
    s *= c->out[e];
  }
  if ((c->NB > 1 && c->ob != P * c->O) || (c->O > 1 && c->of != 1) ||
      M > c->O || K < 64 || c->tab_n >= INT32_MAX ||
      (double)M * (double)K * (double)c->cv.cs > 64.0 * 1048576)
    return 0;
  sim_cg *g = (sim_cg *)sim_palloc(fc, sizeof *g);
  sim_dot *dt = (sim_dot *)sim_palloc(fc, sizeof *dt);
  int64_t *lb = sim_cg_tab(fc, 1), *lm = sim_cg_tab(fc, M);
  int64_t *lk = sim_cg_tab(fc, K), *rb = sim_cg_tab(fc, 1);
  int64_t *rk = sim_cg_tab(fc, K), *rn = sim_cg_tab(fc, c->O);
  int32_t *mp = (int32_t *)sim_palloc(fc, sizeof *mp * (size_t)(M * ns + 1));
  if (!g || !dt || !lb || !lm || !lk || !rb || !rk || !rn || !mp)
    return (*rc = XRT_RESOURCE_EXHAUSTED), 1;
  memset(g, 0, sizeof *g);
  memset(dt, 0, sizeof *dt);
  g->c = c, g->es = c->cv.cs, g->P = P, g->Wn = Wn, g->OL = c->out[ns - 1];
  g->nhwc = 1, g->ctmp = -1, g->mpos = mp;
  for (int64_t m = 0; m < M; m++) lm[m] = m * K;
  for (int64_t k = 0; k < K; k++) lk[k] = k;
  lb[0] = rb[0] = 0;
  int64_t w[XRT_MAX_RANK] = {0};
  for (int64_t wi = 0; wi < Wn; wi++) {
    int64_t r = 0;
    for (int32_t e = 0; e < ns; e++) r += w[e] * c->rsp[e];
    for (int64_t i = 0; i < c->Cg; i++) rk[wi * c->Cg + i] = r + i * c->rif;
    sim_la_next(w, c->K, ns);
  }
  for (int64_t o = 0; o < c->O; o++) rn[o] = o * c->rof;
  for (int64_t m = 0; m < M; m++) {
    int64_t rem = m % P;
    for (int32_t e = ns - 1; e >= 0; e--) {
      mp[m * ns + e] = (int32_t)(c->toff[e] + rem % c->out[e] * c->K[e]);
      rem /= c->out[e];
    }
  }
  dt->B = 1, dt->M = M, dt->N = c->O, dt->K = K;
  dt->lb = lb, dt->lm = lm, dt->lk = lk, dt->rb = rb, dt->rk = rk;
  dt->rn = rn;
  dt->lt = dt->rt = dt->ot = dt->ct = c->cv.ct;
  dt->acc = dt->ltmp = dt->rtmp = dt->otmp = -1;
  dt->lnumel = M * K, dt->rnumel = c->cv.rnumel, dt->onumel = c->cv.onumel;
  dt->wrap = XRT_DTYPE_INVALID;
  g->gemm = *st;
  if (!sim_gemm_lower_dot(fc, dt, &g->gemm, rc)) return 0;
  if (*rc) return 1;
  if ((*rc = sim_temp(fc, (size_t)(M * K) * g->es, &g->cols))) return 1;
  g->ids[0] = g->cols;
  g->ids[1] = st->in[1];
  g->gemm.in = g->ids;
  g->gemm.nin = 2;
  st->data = g;
  st->run = sim_run_cg;
  return 1;
}

static int sim_cg_plan(sim_fcc *fc, const sim_conv *c, sim_step *st,
                       int64_t P, int64_t Wn, int64_t K, int direct,
                       int per_batch, int64_t CH, int need_lanes,
                       xrt_status *rc);

/* Whether the panel can be built packed for the products (sim_cg_panels:
 * f32 on AVX-512, runs of stride 1 or 2, micro-panels of 32 columns, the
 * narrower last chunk's product packed alike). */
static int sim_cg_packs(const sim_cg *g, const sim_step *gemm,
                        const sim_step *gemm2, int two) {
#if SIM_CG_PACKED
  sim_gbgeom a, b;
  return g->v512 && g->es == 4 && !g->gather && g->Wo <= SIM_CG_WO_MAX &&
         (g->xs == 1 || g->xs == 2) && sim_gemm_bgeom(gemm, &a) &&
         a.nr == SIM_CG_NR &&
         (!two || (sim_gemm_bgeom(gemm2, &b) && b.nr == SIM_CG_NR &&
                   b.np <= a.np && b.K == a.K));
#else
  (void)g, (void)gemm, (void)gemm2, (void)two;
  return 0;
#endif
}

/* Per K row of st's B layout, its offset (K block and row in it) and then
 * per K row its block's rows (sim_cg_panels). */
static int64_t *sim_cg_dof(sim_fcc *fc, const sim_step *st) {
  sim_gbgeom pk;
  if (!sim_gemm_bgeom(st, &pk)) return NULL;
  int64_t *t = sim_cg_tab(fc, 2 * pk.K);
  if (!t) return NULL;
  for (int64_t pc = 0; pc < pk.K; pc += pk.kc) {
    int64_t kb = pk.K - pc < pk.kc ? pk.K - pc : pk.kc;
    for (int64_t k = pc; k < pc + kb; k++)
      t[k] = pc * pk.np + (k - pc) * pk.nr, t[pk.K + k] = kb;
  }
  return t;
}

SIM_PRIVATE int sim_conv_gemm_lower(sim_fcc *fc, const sim_conv *c,
                                    sim_step *st, xrt_status *rc) {
  const sim_la_cvt *t = &c->cv;
  *rc = XRT_OK;
  if (!c->tab || (t->ct != XRT_F32 && t->ct != XRT_F64) || t->lt != t->ct ||
      t->rt != t->ct || t->ot != t->ct || t->onumel == 0 || c->ns < 1 ||
      c->o_per_fgroup != c->O || c->o_per_bgroup != c->O || c->Cg == 0)
    return 0;
  int32_t ns = c->ns, d = ns - 1;
  int64_t P = 1, Wn = 1;
  for (int32_t e = 0; e < ns; e++) P *= c->out[e], Wn *= c->K[e];
  int direct = 1; /* 1x1, stride 1, no padding or dilation: lhs in place */
  for (int32_t e = 0; e < ns; e++)
    direct &= c->K[e] == 1 && c->ws[e] == 1 && c->ld[e] == 1 &&
              c->pad[2 * e] == 0 && c->pad[2 * e + 1] == 0;
  if (c->lf == 1) { /* features contiguous: gemm.c's windows, or in place */
    int pointwise = 1; /* 1x1 (any stride), no padding, no lhs dilation */
    for (int32_t e = 0; e < ns; e++)
      pointwise &= c->K[e] == 1 && c->ld[e] == 1 && c->pad[2 * e] == 0 &&
                   c->pad[2 * e + 1] == 0;
    if (pointwise) return sim_cg_lower_rows(fc, c, st, P, rc);
    return Wn > 0 ? sim_cg_lower_win(fc, c, st, P, Wn, rc) : 0;
  }
  /* The result must be [b, o, positions] densely (feature-major). */
  int64_t s = 1;
  for (int32_t e = ns - 1; e >= 0; e--) {
    if (c->out[e] > 1 && c->osp[e] != s) return 0;
    s *= c->out[e];
  }
  if ((c->O > 1 && c->of != P) || (c->NB > 1 && c->ob != c->O * P) ||
      Wn == 0)
    return 0;
  int64_t K = c->Cg * Wn;
  /* The panel of all batch elements at once while small; else one batch
   * element at a time, and a panel of a batch element over 4 MiB in
   * chunks of whole rows of about 512 KiB (half of a core's L2: the panel
   * is written and read back from the cache, not memory; smaller panels
   * come back from L3 about as fast as the chunks' extra copies). */
  double es = (double)t->cs, one = (double)K * (double)P * es;
  int per_batch = !direct && (one > 4.0 * 1048576 ||
                              (double)c->NB * one > 32.0 * 1048576);
  int64_t CH = P;
  if (per_batch && one > 4.0 * 1048576) {
    /* at least 4 O positions: each chunk packs the kernel again */
    int64_t want = (int64_t)(524288.0 / ((double)K * es));
    if (want < 512) want = 512;
    if (want < 4 * c->O) want = 4 * c->O;
    CH = (want / c->out[d]) * c->out[d];
    if (CH < c->out[d]) CH = c->out[d];
    if (CH > P) CH = P;
  }
  /* On several threads, a panel that would be made whole (its rows on
   * any thread) and multiplied by column halves (read by the other
   * thread) goes in a few chunks of whole rows instead, each one thread's
   * whole (sim_cg_chunks): when the K blocks, so the sums, stay the same. */
  const struct sim_tpool *tp = sim_tpool_of(fc->cc->exe->cl, 0);
  int64_t T = tp && tp->threads > 1 ? tp->threads : 1;
  int64_t nw = P >= 2 * T * 256 ? 2 * T : P >= T * 256 ? T : 1;
  int64_t R = P / c->out[d], kc = sim_gemm_kc_for(fc, t->ct, P, K);
  if (!direct && !per_batch && T > 1 && nw > 1 && R > 1 && kc > 0) {
    int64_t CH2 = (R + nw - 1) / nw * c->out[d];
    int64_t last = P - (P + CH2 - 1) / CH2 * CH2 + CH2;
    if (CH2 < P && sim_gemm_kc_for(fc, t->ct, CH2, K) == kc &&
        sim_gemm_kc_for(fc, t->ct, last, K) == kc &&
        (sim_cg_plan(fc, c, st, P, Wn, K, 0, 1, CH2, 1, rc) || *rc))
      return 1;
  }
  return sim_cg_plan(fc, c, st, P, Wn, K, direct, per_batch, CH, 0, rc);
}

/* Plans the product for sim_conv_gemm_lower: per_batch, CH as there;
 * need_lanes: only the chunks of one thread each (sim_cg_chunks), else
 * returns 0 leaving st alone. */
static int sim_cg_plan(sim_fcc *fc, const sim_conv *c, sim_step *st,
                       int64_t P, int64_t Wn, int64_t K, int direct,
                       int per_batch, int64_t CH, int need_lanes,
                       xrt_status *rc) {
  const sim_la_cvt *t = &c->cv;
  int32_t ns = c->ns, d = ns - 1;
  double es = (double)t->cs;
  if (!direct && (double)(per_batch ? 1 : c->NB) * (double)K * (double)CH * es >
                     (double)(1u << 30))
    return 0;
  sim_cg *g = (sim_cg *)sim_palloc(fc, sizeof *g);
  if (!g) return (*rc = XRT_RESOURCE_EXHAUSTED), 1;
  memset(g, 0, sizeof *g);
  g->c = c, g->es = t->cs, g->P = P, g->Wn = Wn, g->OL = c->out[d];
  g->cols = g->ctmp = -1;
  g->per_batch = per_batch;
  g->CH = CH, g->nch = (P + CH - 1) / CH;
  g->v512 = sim_gemm_isa(fc->cc) == 2;
  int64_t *lm = sim_cg_tab(fc, c->O), *lk = sim_cg_tab(fc, K);
  if (!lm || !lk) return (*rc = XRT_RESOURCE_EXHAUSTED), 1;
  for (int64_t o = 0; o < c->O; o++) lm[o] = o * c->rof;
  int64_t w[XRT_MAX_RANK] = {0};
  for (int64_t wi = 0; wi < Wn; wi++) {
    int64_t r = 0;
    for (int32_t e = 0; e < ns; e++) r += w[e] * c->rsp[e];
    for (int64_t i = 0; i < c->Cg; i++) lk[i * Wn + wi] = i * c->rif + r;
    sim_la_next(w, c->K, ns);
  }
  int64_t NB = per_batch ? 1 : c->NB;
  g->gemm = *st;
  if (!sim_cg_dot(fc, c, NB, lm, lk, K, CH, direct, &g->gemm, rc)) return 0;
  if (*rc) return 1;
  int64_t last = P - (g->nch - 1) * CH;
  if (last != CH) {
    g->gemm2 = *st;
    if (!sim_cg_dot(fc, c, NB, lm, lk, K, last, direct, &g->gemm2, rc))
      return 0; /* too small to pack: the other paths */
    if (*rc) return 1;
  }
  if (!direct && g->nch > 1) { /* products in place: lane per chunk */
    int l1 = sim_gemm_slots(&g->gemm);
    int l2 = last != CH ? sim_gemm_slots(&g->gemm2) : l1;
    int L = l1 < l2 ? l1 : l2;
    if (L > 0 && L <= 64 && c->of == P &&
        sim_gemm_out_rows(fc, &g->gemm, P, rc) && !*rc &&
        (last == CH || (sim_gemm_out_rows(fc, &g->gemm2, P, rc) && !*rc)))
      g->lanes = L;
    if (*rc) return 1;
  }
  if (need_lanes && !g->lanes) return 0;
  /* the kernel (A) packed across calls while the argument is unchanged */
  sim_gemm_keep_a(&g->gemm);
  if (last != CH) sim_gemm_keep_a(&g->gemm2);
  if (!direct) {
    if ((*rc = sim_cg_runs(fc, g))) return 1;
    g->Wo = Wn / c->K[d];
    g->packed = sim_cg_packs(g, &g->gemm, &g->gemm2, last != CH);
    if (g->packed) {
      g->dof = sim_cg_dof(fc, &g->gemm);
      g->dof2 = last != CH ? sim_cg_dof(fc, &g->gemm2) : g->dof;
      if (!g->dof || !g->dof2) return (*rc = XRT_RESOURCE_EXHAUSTED), 1;
    }
    sim_gbgeom pk;
    g->cells = NB * K * (g->packed && sim_gemm_bgeom(&g->gemm, &pk) ? pk.np
                                                                      : CH);
    if ((*rc = sim_temp(fc, (size_t)g->cells * g->es *
                                (size_t)(g->lanes ? g->lanes : 1),
                        &g->cols)))
      return 1;
    if (g->nch > 1 && !g->lanes &&
        (*rc = sim_temp(fc, (size_t)(c->O * CH) * g->es, &g->ctmp)))
      return 1;
  }
  g->ids[0] = st->in[1];
  g->ids[1] = direct ? st->in[0] : g->cols;
  g->gemm.in = g->gemm2.in = g->ids;
  g->gemm.nin = g->gemm2.nin = 2;
  if (direct) { /* the product alone: an epilogue can take its rows */
    *st = g->gemm;
    return 1;
  }
  st->data = g;
  st->run = sim_run_cg;
  return 1;
}
