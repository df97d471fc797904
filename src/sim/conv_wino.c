/*
 * src/sim/conv_wino.c - 3x3 convolutions of stride 1 by Winograd's
 * minimal filtering F(2x2, 3x3): 16 products where the direct method
 * takes 36 per 2x2 outputs.
 * Part of the simulated device; MIT licensed, see LICENSE.
 */
#include "internal.h"
#if SIM_X86
#include <immintrin.h>
#endif

/* ======================================================================
 * Winograd F(2x2, 3x3)
 *
 * An f32 convolution of a 3x3 kernel, stride 1, padding 1 on every side,
 * no dilation, one group and many features, either NHWC (features
 * contiguous in the lhs and the result, multiples of 16: JAX's ResNet) or
 * NCHW (rows contiguous, the result dense: PyTorch's SqueezeNet): the
 * result is cut into 2x2 tiles, and for each tile t (its 4x4 lhs patch d,
 * zero outside the image) and each element xi of the 4x4 transformed
 * domain
 *
 *   V[xi][t][c] = (Bt d Bt^T)[xi]      (the patch of feature c)
 *   U[xi][c][o] = (G g G^T)[xi]        (the kernel of c and o)
 *   M[xi][t][o] = sum_c V[xi][t][c] U[xi][c][o]   (16 products)
 *   y = At M At^T                      (the tile's 2x2 results)
 *
 * with Bt = [1 0 -1 0; 0 1 1 0; 0 -1 1 0; 0 1 0 -1], G = [1 0 0; .5 .5 .5;
 * .5 -.5 .5; 0 0 1], At = [1 1 1 0; 0 1 -1 -1].  The 16 products are one
 * batched product of gemm.c (its packed kernels at full speed), 2.25 times
 * fewer multiplications than the direct sum; the transforms are additions
 * (and halvings), over data that stays in the caches.  The transformed
 * kernel U is kept in the client's cache while the kernel argument is
 * unchanged (gemm_cache.c), already packed as the product's operand
 * (NHWC its B, NCHW its A), so a call neither transforms nor packs it;
 * else made per call.  Even a ResNet's last stages (7x7 results: 16 tiles, 512
 * features, a 16 MiB U) take half the time of the direct method.
 *
 * Rounding: each result is the exact convolution of the data rounded
 * differently (the transforms' additions), within the products' own
 * rounding for finite data as the direct method's sum orders are (small
 * integers come out exact: every value the transforms make is a multiple
 * of a quarter well inside f32).  A non-finite lhs or kernel element would
 * make NaN where the direct sum gives an infinity (inf - inf in a
 * transform), so the transforms look for them, and a call that meets one
 * runs the direct method (planned beside) instead.
 * ==================================================================== */

/* lhs and result features, at least: SqueezeNet's 3x3 expands of 16
 * features to 64 on 54x54 (NCHW) take 236 us this way, 272 through the
 * im2col panel (per-step timer, one thread) */
#define SIM_WG_MIN_FEATURES 16
#define SIM_WG_MIN_TILES 16    /* 2x2 tiles of the result, at least */
#define SIM_WG_MAX_U ((int64_t)16 << 20) /* bytes of the transformed kernel */

typedef struct sim_wg {
  const sim_conv *c;
  sim_step gemm;     /* M = V x U, 16 batches: in = {V, U}, out = {M} */
  sim_step direct;   /* the convolution the direct way (non-finite data) */
  int32_t ids[3];    /* V, U, M */
  int32_t gin[2];    /* the product's operands: {V, U} or (NCHW) {U, V} */
  int64_t C, O, H, W, NB, th, tw, T; /* tiles: th x tw per image, T all */
  uint64_t gid;      /* U in the client's cache */
  size_t ucache;     /* its bytes there, packed as the product's operand
                        (NHWC its B, NCHW its A) */
  void (*pack)(const sim_step *, const void *, void *, sim_cx *);
  void (*run)(const sim_step *, void **, sim_cx *, const char *);
  int nchw;          /* NCHW: V, U and M transposed (see below) */
} sim_wg;

#if defined(__GNUC__)
typedef float sim_wg_v __attribute__((vector_size(64)));

/* Column j of Bt d: rows a0..a3 of the patch's column into t0..t3. */
#define SIM_WG_BT(a0, a1, a2, a3, t0, t1, t2, t3)                             \
  do {                                                                        \
    t0 = a0 - a2, t1 = a1 + a2, t2 = a2 - a1, t3 = a1 - a3;                   \
  } while (0)

/* Patch element (i, j), sixteen features from f: zero outside the
 * image (inside: the whole patch is in it). */
#define SIM_WG_LD(v, i, j)                                                    \
  do {                                                                        \
    if (inside || (y0 + (i) >= 0 && y0 + (i) < g->H && x0 + (j) >= 0 &&       \
                   x0 + (j) < g->W))                                          \
      memcpy(&(v), base + (i) * rs + (j) * cs + f, sizeof(v));                \
    else                                                                      \
      (v) = (sim_wg_v){0};                                                    \
  } while (0)
/* Column j of the patch through Bt: t0j..t3j. */
#define SIM_WG_COL(j)                                                         \
  do {                                                                        \
    sim_wg_v a0, a1, a2, a3;                                                  \
    SIM_WG_LD(a0, 0, j);                                                      \
    SIM_WG_LD(a1, 1, j);                                                      \
    SIM_WG_LD(a2, 2, j);                                                      \
    SIM_WG_LD(a3, 3, j);                                                      \
    if ((j) == 1 || (j) == 2) {                                               \
      sim_wg_v s_ = a1 + a2;                                                  \
      *bad += s_ - s_;                                                        \
    }                                                                         \
    SIM_WG_BT(a0, a1, a2, a3, t0##j, t1##j, t2##j, t3##j);                    \
  } while (0)
/* Row i of (Bt d) through Bt^T, stored to V rows 4i..4i+3. */
#define SIM_WG_ROW(i)                                                         \
  do {                                                                        \
    sim_wg_v v0, v1, v2, v3;                                                  \
    SIM_WG_BT(t##i##0, t##i##1, t##i##2, t##i##3, v0, v1, v2, v3);            \
    memcpy(o + (size_t)(4 * (i)) * ts, &v0, sizeof v0);                       \
    memcpy(o + (size_t)(4 * (i) + 1) * ts, &v1, sizeof v1);                   \
    memcpy(o + (size_t)(4 * (i) + 2) * ts, &v2, sizeof v2);                   \
    memcpy(o + (size_t)(4 * (i) + 3) * ts, &v3, sizeof v3);                   \
  } while (0)

/* Sixteen features of every element of patch d (rows y0.., columns x0..;
 * zero outside the image) into their 16 V rows.  Every lhs element is in
 * the middle 2x2 of exactly one patch: those are summed and s - s (NaN
 * when one is not finite, or their sum overflows) added to *bad. */
#define SIM_WG_IN(ISA)                                                        \
  static SIM_WG_T_##ISA void sim_wg_in_##ISA(                                 \
      const sim_wg *g, const float *x, float *V, int64_t t_, int64_t b,       \
      int64_t y0, int64_t x0, sim_wg_v *bad) {                                \
    const sim_conv *c = g->c;                                                 \
    size_t ts = (size_t)(g->T * g->C);                                        \
    int inside = y0 >= 0 && x0 >= 0 && y0 + 4 <= g->H && x0 + 4 <= g->W;      \
    const float *base = x + b * c->lb + y0 * c->lsp[0] + x0 * c->lsp[1];      \
    int64_t rs = c->lsp[0], cs = c->lsp[1];                                   \
    for (int64_t f = 0; f < g->C; f += 16) {                                  \
      sim_wg_v t00, t01, t02, t03, t10, t11, t12, t13;                        \
      sim_wg_v t20, t21, t22, t23, t30, t31, t32, t33;                        \
      SIM_WG_COL(0);                                                          \
      SIM_WG_COL(1);                                                          \
      SIM_WG_COL(2);                                                          \
      SIM_WG_COL(3);                                                          \
      float *o = V + t_ * g->C + f;                                           \
      SIM_WG_ROW(0);                                                          \
      SIM_WG_ROW(1);                                                          \
      SIM_WG_ROW(2);                                                          \
      SIM_WG_ROW(3);                                                          \
    }                                                                         \
  }

/* The first n (1..16) lanes of vector v to p, or from p (the rest zero):
 * masked on AVX-512, else a copy of n elements. */
#define SIM_WG_STN_port(p, v, n)                                              \
  do {                                                                        \
    if ((n) == 16) memcpy((p), &(v), sizeof(v));                              \
    else memcpy((p), &(v), sizeof(float) * (size_t)(n));                      \
  } while (0)
#define SIM_WG_LDN_port(v, p, n)                                              \
  do {                                                                        \
    if ((n) == 16) {                                                          \
      memcpy(&(v), (p), sizeof(v));                                           \
    } else {                                                                  \
      (v) = (sim_wg_v){0};                                                    \
      memcpy(&(v), (p), sizeof(float) * (size_t)(n));                         \
    }                                                                         \
  } while (0)
#define SIM_WG_STN_avx2 SIM_WG_STN_port
#define SIM_WG_LDN_avx2 SIM_WG_LDN_port
#define SIM_WG_STN_avx512(p, v, n)                                            \
  _mm512_mask_storeu_ps((p), (__mmask16)((1u << (n)) - 1), (__m512)(v))
#define SIM_WG_LDN_avx512(v, p, n)                                            \
  ((v) = (sim_wg_v)_mm512_maskz_loadu_ps((__mmask16)((1u << (n)) - 1), (p)))
typedef int32_t sim_wg_i __attribute__((vector_size(64)));
#define SIM_WG_SEL(c, a, b)                                                   \
  ((sim_wg_v)(((sim_wg_i)(a) & (c)) | ((sim_wg_i)(b) & ~(c))))
#define SIM_WG_SPLAT(s)                                                       \
  ((sim_wg_v){s, s, s, s, s, s, s, s, s, s, s, s, s, s, s, s})
/* Sixteen results v of C's row r from column c on (cnt of them valid; C
 * has ncol columns) through the epilogue po (sim_gpost): the operations in
 * order, then the bounds, as the fused group's own loops make them. */
#define SIM_WG_POST(ISA, v, r, c, cnt, ncol)                                  \
  do {                                                                        \
    for (int j_ = 0; j_ < po->n; j_++) {                                      \
      const float *pb_ = po->b[j_];                                           \
      sim_wg_v b_;                                                            \
      if (po->arg[j_] == SIM_GPOST_COL) {                                     \
        SIM_WG_LDN_##ISA(b_, pb_ + (c), cnt);                                 \
      } else if (po->arg[j_] == SIM_GPOST_FULL) {                             \
        SIM_WG_LDN_##ISA(b_, pb_ + (r) * (ncol) + (c), cnt);                  \
      } else {                                                                \
        float s_ = po->arg[j_] == SIM_GPOST_ROW ? pb_[r] : pb_[0];            \
        b_ = SIM_WG_SPLAT(s_);                                                \
      }                                                                       \
      int rev_ = (po->op[j_] & SIM_FZC_REV) != 0;                             \
      sim_wg_v x_ = rev_ ? b_ : v, y_ = rev_ ? v : b_;                        \
      switch (po->op[j_] & ~SIM_FZC_REV) {                                    \
      case SIM_FZC_ADD: v = x_ + y_; break;                                   \
      case SIM_FZC_SUB: v = x_ - y_; break;                                   \
      case SIM_FZC_MUL: v = x_ * y_; break;                                   \
      default: v = x_ / y_; break;                                            \
      }                                                                       \
    }                                                                         \
    if (po->has_lo) { /* lo > v takes lo: a NaN v stays */                    \
      sim_wg_v lo_ = SIM_WG_SPLAT(po->lo);                                    \
      v = SIM_WG_SEL(lo_ > v, lo_, v);                                        \
      if (po->lo_pz) v = v + SIM_WG_SPLAT(0.0f); /* -0 becomes +0 */          \
    }                                                                         \
    if (po->has_hi) {                                                         \
      sim_wg_v hi_ = SIM_WG_SPLAT(po->hi);                                    \
      v = SIM_WG_SEL(hi_ < v, hi_, v);                                        \
    }                                                                         \
  } while (0)

/* Row i of a tile's products through At^T: s{i}0, s{i}1. */
#define SIM_WG_OROW(i)                                                        \
  do {                                                                        \
    sim_wg_v m0, m1, m2, m3;                                                  \
    memcpy(&m0, p + (size_t)(4 * (i)) * ts, sizeof m0);                       \
    memcpy(&m1, p + (size_t)(4 * (i) + 1) * ts, sizeof m1);                   \
    memcpy(&m2, p + (size_t)(4 * (i) + 2) * ts, sizeof m2);                   \
    memcpy(&m3, p + (size_t)(4 * (i) + 3) * ts, sizeof m3);                   \
    s##i##0 = m0 + m1 + m2;                                                   \
    s##i##1 = m1 - m2 - m3;                                                   \
  } while (0)
/* Column j of the tile's results: At (m At^T), rows y0 and y0 + 1. */
#define SIM_WG_OCOL(ISA, j)                                                   \
  do {                                                                        \
    sim_wg_v r0 = s0##j + s1##j + s2##j, r1 = s1##j - s2##j - s3##j;          \
    if (x0 + (j) < g->W) {                                                    \
      float *q = y + b * c->ob + y0 * c->osp[0] + (x0 + (j)) * c->osp[1] + f; \
      int64_t p_ = (b * g->H + y0) * g->W + x0 + (j); /* C's row */           \
      if (po) SIM_WG_POST(ISA, r0, p_, f, 16, g->O);                          \
      memcpy(q, &r0, sizeof r0);                                              \
      if (y0 + 1 < g->H) {                                                    \
        if (po) SIM_WG_POST(ISA, r1, p_ + g->W, f, 16, g->O);                 \
        memcpy(q + c->osp[0], &r1, sizeof r1);                                \
      }                                                                       \
    }                                                                         \
  } while (0)

/* The 2x2 results of tile t (rows y0, y0 + 1, columns x0, x0 + 1 that
 * are inside the result) from its 16 products, sixteen features at a
 * time. */
#define SIM_WG_OUT(ISA)                                                       \
  static SIM_WG_T_##ISA void sim_wg_out_##ISA(                                \
      const sim_wg *g, const float *M, float *y, int64_t t, int64_t b,        \
      int64_t y0, int64_t x0, const sim_gpost *po) {                          \
    const sim_conv *c = g->c;                                                 \
    size_t ts = (size_t)(g->T * g->O);                                        \
    for (int64_t f = 0; f < g->O; f += 16) {                                  \
      sim_wg_v s00, s01, s10, s11, s20, s21, s30, s31;                        \
      const float *p = M + t * g->O + f;                                      \
      SIM_WG_OROW(0);                                                         \
      SIM_WG_OROW(1);                                                         \
      SIM_WG_OROW(2);                                                         \
      SIM_WG_OROW(3);                                                         \
      SIM_WG_OCOL(ISA, 0);                                                    \
      SIM_WG_OCOL(ISA, 1);                                                    \
    }                                                                         \
  }

#define SIM_WG_T_port
/* Branch coverage leaves these out: the patches' and the epilogue's
 * per-element cases, copied into each instruction set's kernels. */
SIM_WG_IN(port) /* GCOVR_EXCL_BR_LINE */
SIM_WG_OUT(port) /* GCOVR_EXCL_BR_LINE */
#if SIM_X86
#define SIM_WG_T_avx2 __attribute__((target("avx2")))
#define SIM_WG_T_avx512 __attribute__((target("avx512f")))
SIM_WG_IN(avx2) /* GCOVR_EXCL_BR_LINE */
SIM_WG_OUT(avx2) /* GCOVR_EXCL_BR_LINE */
SIM_WG_IN(avx512) /* GCOVR_EXCL_BR_LINE */
SIM_WG_OUT(avx512) /* GCOVR_EXCL_BR_LINE */
#endif

typedef struct sim_wg_job {
  const sim_wg *g;
  const float *x;
  float *V, *M, *y;
  const sim_gpost *po; /* the results' epilogue, or NULL */
  _Atomic int any_bad; /* a transform met a non-finite element */
  int level;           /* 2 AVX-512, 1 AVX2, 0 portable kernels */
} sim_wg_job;

/* The batch element and first row and column of tile t. */
static void sim_wg_tile(const sim_wg *g, int64_t t, int64_t *b, int64_t *y0,
                        int64_t *x0) {
  int64_t per = g->th * g->tw, r = t % per;
  *b = t / per, *y0 = 2 * (r / g->tw), *x0 = 2 * (r % g->tw);
}

static void sim_wg_in_tiles(void *ctx, int64_t t0, int64_t t1) {
  sim_wg_job *j = (sim_wg_job *)ctx;
  sim_wg_v bad = {0};
  for (int64_t t = t0; t < t1; t++) {
    int64_t b, y0, x0;
    sim_wg_tile(j->g, t, &b, &y0, &x0);
#if SIM_X86
    if (j->level == 2) {
      sim_wg_in_avx512(j->g, j->x, j->V, t, b, y0 - 1, x0 - 1, &bad);
      continue;
    }
    if (j->level == 1) {
      sim_wg_in_avx2(j->g, j->x, j->V, t, b, y0 - 1, x0 - 1, &bad);
      continue;
    }
#endif
    sim_wg_in_port(j->g, j->x, j->V, t, b, y0 - 1, x0 - 1, &bad);
  }
  for (int l = 0; l < 16; l++)
    if (bad[l] != 0) atomic_store(&j->any_bad, 1);
}

static void sim_wg_out_tiles(void *ctx, int64_t t0, int64_t t1) {
  sim_wg_job *j = (sim_wg_job *)ctx;
  for (int64_t t = t0; t < t1; t++) {
    int64_t b, y0, x0;
    sim_wg_tile(j->g, t, &b, &y0, &x0);
#if SIM_X86
    if (j->level == 2) {
      sim_wg_out_avx512(j->g, j->M, j->y, t, b, y0, x0, j->po);
      continue;
    }
    if (j->level == 1) {
      sim_wg_out_avx2(j->g, j->M, j->y, t, b, y0, x0, j->po);
      continue;
    }
#endif
    sim_wg_out_port(j->g, j->M, j->y, t, b, y0, x0, j->po);
  }
}

/* ---- NCHW ----
 * Features strided, positions contiguous (PyTorch's layout): the
 * transposed product M[xi][o][t] = U[xi][o][c] V[xi][c][t], so that
 * vectors run along tiles.  Sixteen tiles of a tile row at once: their
 * patches' column j is every other element of a lhs row from 2 tx - 1 + j
 * (even and odd lanes of two vectors, after copying the four rows into
 * zero-padded buffers), and their results interleave back into two result
 * rows. */
#if SIM_V16_SHUFFLE
#define SIM_WG_NCHW 1
#define SIM_WG_MAX_W 512 /* a result row's length, at most (stack rows) */
#define SIM_WG_ROWBUF (SIM_WG_MAX_W + 64)
#define SIM_WG_LO(a, b)                                                       \
  __builtin_shufflevector(a, b, 0, 16, 1, 17, 2, 18, 3, 19, 4, 20, 5, 21, 6,  \
                          22, 7, 23)
#define SIM_WG_HI(a, b)                                                       \
  __builtin_shufflevector(a, b, 8, 24, 9, 25, 10, 26, 11, 27, 12, 28, 13,     \
                          29, 14, 30, 15, 31)
/* Column j's four rows of the sixteen patches from buffer rows r0..r3 at
 * e = 2 tx0 (j even: even lanes; j odd: odd; from e + 2 for j >= 2). */
#define SIM_WG_NPICK(a, i, j)                                                 \
  do {                                                                        \
    sim_wg_v p_, q_;                                                          \
    memcpy(&p_, rb[i] + e + ((j) >= 2 ? 2 : 0), sizeof p_);                   \
    memcpy(&q_, rb[i] + e + ((j) >= 2 ? 18 : 16), sizeof q_);                 \
    a = (j) % 2 ? SIM_V16_ODD(p_, q_) : SIM_V16_EVEN(p_, q_);                 \
  } while (0)
#define SIM_WG_NCOL(j)                                                        \
  do {                                                                        \
    sim_wg_v a0_, a1_, a2_, a3_;                                              \
    SIM_WG_NPICK(a0_, 0, j);                                                  \
    SIM_WG_NPICK(a1_, 1, j);                                                  \
    SIM_WG_NPICK(a2_, 2, j);                                                  \
    SIM_WG_NPICK(a3_, 3, j);                                                  \
    if ((j) == 1 || (j) == 2) {                                               \
      sim_wg_v s_ = a1_ + a2_;                                                \
      *bad += s_ - s_;                                                        \
    }                                                                         \
    SIM_WG_BT(a0_, a1_, a2_, a3_, t0##j, t1##j, t2##j, t3##j);                \
  } while (0)
/* Row i of (Bt d) through Bt^T: V rows 4i..4i+3 of the n tiles. */
#define SIM_WG_NROW(ISA, i)                                                   \
  do {                                                                        \
    sim_wg_v v0_, v1_, v2_, v3_;                                              \
    SIM_WG_BT(t##i##0, t##i##1, t##i##2, t##i##3, v0_, v1_, v2_, v3_);        \
    SIM_WG_STN_##ISA(o + (size_t)(4 * (i)) * ts, v0_, n);                     \
    SIM_WG_STN_##ISA(o + (size_t)(4 * (i) + 1) * ts, v1_, n);                 \
    SIM_WG_STN_##ISA(o + (size_t)(4 * (i) + 2) * ts, v2_, n);                 \
    SIM_WG_STN_##ISA(o + (size_t)(4 * (i) + 3) * ts, v3_, n);                 \
  } while (0)

/* Feature ch of image b, tile row ty: the tiles' V entries.  rb: four
 * row buffers of SIM_WG_ROWBUF, zero past the row. */
#define SIM_WG_NIN(ISA)                                                       \
  static SIM_WG_T_##ISA void sim_wg_nin_##ISA(                                \
      const sim_wg *g, const float *x, float *V, int64_t b, int64_t ch,       \
      int64_t ty, float (*rb)[SIM_WG_ROWBUF], sim_wg_v *bad) {                \
    const sim_conv *c = g->c;                                                 \
    size_t ts = (size_t)(g->C * g->T);                                        \
    /* rb[i][k]: row 2 ty - 1 + i, element k - 1, zero outside the image      \
     * up to L, past the last element the vectors read */                     \
    int64_t L = 2 * ((g->tw + 15) / 16 * 16) + 34;                            \
    for (int i = 0; i < 4; i++) {                                             \
      int64_t yy = 2 * ty - 1 + i;                                            \
      if (yy < 0 || yy >= g->H) {                                             \
        memset(rb[i], 0, sizeof(float) * (size_t)L);                          \
        continue;                                                             \
      }                                                                       \
      rb[i][0] = 0;                                                           \
      memcpy(rb[i] + 1, x + b * c->lb + ch * c->lf + yy * c->lsp[0],          \
             sizeof(float) * (size_t)g->W);                                   \
      memset(rb[i] + 1 + g->W, 0, sizeof(float) * (size_t)(L - 1 - g->W));    \
    }                                                                         \
    float *row = V + ch * g->T + (b * g->th + ty) * g->tw;                    \
    for (int64_t tx = 0; tx < g->tw; tx += 16) {                              \
      int64_t e = 2 * tx, n = g->tw - tx < 16 ? g->tw - tx : 16;              \
      sim_wg_v t00, t01, t02, t03, t10, t11, t12, t13;                        \
      sim_wg_v t20, t21, t22, t23, t30, t31, t32, t33;                        \
      SIM_WG_NCOL(0);                                                         \
      SIM_WG_NCOL(1);                                                         \
      SIM_WG_NCOL(2);                                                         \
      SIM_WG_NCOL(3);                                                         \
      float *o = row + tx;                                                    \
      SIM_WG_NROW(ISA, 0);                                                    \
      SIM_WG_NROW(ISA, 1);                                                    \
      SIM_WG_NROW(ISA, 2);                                                    \
      SIM_WG_NROW(ISA, 3);                                                    \
    }                                                                         \
  }

/* Products xi = 4i..4i+3 of the n tiles through At^T: s{i}0, s{i}1. */
#define SIM_WG_NOROW(ISA, i)                                                  \
  do {                                                                        \
    sim_wg_v m0_, m1_, m2_, m3_;                                              \
    SIM_WG_LDN_##ISA(m0_, p0 + (size_t)(4 * (i)) * ts + tx, n);               \
    SIM_WG_LDN_##ISA(m1_, p0 + (size_t)(4 * (i) + 1) * ts + tx, n);           \
    SIM_WG_LDN_##ISA(m2_, p0 + (size_t)(4 * (i) + 2) * ts + tx, n);           \
    SIM_WG_LDN_##ISA(m3_, p0 + (size_t)(4 * (i) + 3) * ts + tx, n);           \
    s##i##0 = m0_ + m1_ + m2_;                                                \
    s##i##1 = m1_ - m2_ - m3_;                                                \
  } while (0)
/* w results of a row (C's row rr, from column cc) from vectors lo, hi
 * (interleaved), through the epilogue po when there is one. */
#define SIM_WG_NOSTORE(ISA, q, lo, hi, rr, cc)                                \
  do {                                                                        \
    if (po) {                                                                 \
      SIM_WG_POST(ISA, lo, rr, cc, w < 16 ? w : 16, g->H * g->W);             \
      if (w > 16) SIM_WG_POST(ISA, hi, rr, (cc) + 16, w - 16, g->H * g->W);   \
    }                                                                         \
    if (w == 32) {                                                            \
      memcpy((q), &(lo), sizeof(lo));                                         \
      memcpy((q) + 16, &(hi), sizeof(hi));                                    \
    } else {                                                                  \
      SIM_WG_STN_##ISA((q), lo, w < 16 ? w : 16);                             \
      if (w > 16) SIM_WG_STN_##ISA((q) + 16, hi, w - 16);                     \
    }                                                                         \
  } while (0)

/* Result feature f of image b, tile row ty: two result rows from the
 * tiles' products M[xi][f][t]. */
#define SIM_WG_NOUT(ISA)                                                      \
  static SIM_WG_T_##ISA void sim_wg_nout_##ISA(                               \
      const sim_wg *g, const float *M, float *y, int64_t b, int64_t f,        \
      int64_t ty, const sim_gpost *po) {                                      \
    const sim_conv *c = g->c;                                                 \
    size_t ts = (size_t)(g->O * g->T);                                        \
    const float *p0 = M + f * g->T + (b * g->th + ty) * g->tw;                \
    float *y0 = y + b * c->ob + f * c->of + 2 * ty * c->osp[0];               \
    int two = 2 * ty + 1 < g->H;                                              \
    for (int64_t tx = 0; tx < g->tw; tx += 16) {                              \
      int64_t n = g->tw - tx < 16 ? g->tw - tx : 16;                          \
      sim_wg_v s00, s01, s10, s11, s20, s21, s30, s31;                        \
      SIM_WG_NOROW(ISA, 0);                                                   \
      SIM_WG_NOROW(ISA, 1);                                                   \
      SIM_WG_NOROW(ISA, 2);                                                   \
      SIM_WG_NOROW(ISA, 3);                                                   \
      sim_wg_v r00 = s00 + s10 + s20, r01 = s01 + s11 + s21;                  \
      sim_wg_v r10 = s10 - s20 - s30, r11 = s11 - s21 - s31;                  \
      sim_wg_v lo0 = SIM_WG_LO(r00, r01), hi0 = SIM_WG_HI(r00, r01);          \
      sim_wg_v lo1 = SIM_WG_LO(r10, r11), hi1 = SIM_WG_HI(r10, r11);          \
      int64_t x0 = 2 * tx, w = g->W - x0 < 32 ? g->W - x0 : 32;               \
      int64_t rr = b * g->O + f, cc = 2 * ty * g->W + x0;                     \
      SIM_WG_NOSTORE(ISA, y0 + x0, lo0, hi0, rr, cc);                         \
      if (two)                                                                \
        SIM_WG_NOSTORE(ISA, y0 + c->osp[0] + x0, lo1, hi1, rr, cc + g->W);    \
    }                                                                         \
  }

SIM_WG_NIN(port) /* GCOVR_EXCL_BR_LINE */
SIM_WG_NOUT(port) /* GCOVR_EXCL_BR_LINE */
#if SIM_X86
SIM_WG_NIN(avx2) /* GCOVR_EXCL_BR_LINE */
SIM_WG_NOUT(avx2) /* GCOVR_EXCL_BR_LINE */
SIM_WG_NIN(avx512) /* GCOVR_EXCL_BR_LINE */
SIM_WG_NOUT(avx512) /* GCOVR_EXCL_BR_LINE */
#endif

/* Items: (image, feature, tile row). */
static void sim_wg_nin_rows(void *ctx, int64_t i0, int64_t i1) {
  sim_wg_job *j = (sim_wg_job *)ctx;
  const sim_wg *g = j->g;
  float rb[4][SIM_WG_ROWBUF];
  sim_wg_v bad = {0};
  for (int64_t i = i0; i < i1; i++) {
    int64_t ty = i % g->th, ch = i / g->th % g->C, b = i / g->th / g->C;
#if SIM_X86
    if (j->level == 2) {
      sim_wg_nin_avx512(g, j->x, j->V, b, ch, ty, rb, &bad);
      continue;
    }
    if (j->level == 1) {
      sim_wg_nin_avx2(g, j->x, j->V, b, ch, ty, rb, &bad);
      continue;
    }
#endif
    sim_wg_nin_port(g, j->x, j->V, b, ch, ty, rb, &bad);
  }
  for (int l = 0; l < 16; l++)
    if (bad[l] != 0) atomic_store(&j->any_bad, 1);
}

static void sim_wg_nout_rows(void *ctx, int64_t i0, int64_t i1) {
  sim_wg_job *j = (sim_wg_job *)ctx;
  const sim_wg *g = j->g;
  for (int64_t i = i0; i < i1; i++) {
    int64_t ty = i % g->th, f = i / g->th % g->O, b = i / g->th / g->O;
#if SIM_X86
    if (j->level == 2) {
      sim_wg_nout_avx512(g, j->M, j->y, b, f, ty, j->po);
      continue;
    }
    if (j->level == 1) {
      sim_wg_nout_avx2(g, j->M, j->y, b, f, ty, j->po);
      continue;
    }
#endif
    sim_wg_nout_port(g, j->M, j->y, b, f, ty, j->po);
  }
}
#define SIM_WG_MAX_W_OR_0 SIM_WG_MAX_W
#else
#define SIM_WG_NCHW 0
#define SIM_WG_MAX_W_OR_0 0
#endif

/* U from the kernel w: for every c and o, G g G^T (at U[xi][c][o], NCHW
 * U[xi][o][c]); 1 when every kernel element is finite. */
static int sim_wg_kernel(const sim_wg *g, const float *w, float *U) {
  const sim_conv *c = g->c;
  size_t xs = (size_t)(g->C * g->O);
  float bad = 0;
  for (int64_t i = 0; i < g->C; i++)
    for (int64_t o = 0; o < g->O; o++) {
      float k[3][3], r[4][3];
      for (int a = 0; a < 3; a++)
        for (int e = 0; e < 3; e++) {
          k[a][e] = w[a * c->rsp[0] + e * c->rsp[1] + i * c->rif + o * c->rof];
          bad += k[a][e] - k[a][e];
        }
      for (int e = 0; e < 3; e++) { /* G g */
        r[0][e] = k[0][e];
        r[1][e] = 0.5f * (k[0][e] + k[1][e] + k[2][e]);
        r[2][e] = 0.5f * (k[0][e] - k[1][e] + k[2][e]);
        r[3][e] = k[2][e];
      }
      float *u = U + (g->nchw ? o * g->C + i : i * g->O + o);
      for (int a = 0; a < 4; a++) { /* (G g) G^T */
        u[(size_t)(4 * a) * xs] = r[a][0];
        u[(size_t)(4 * a + 1) * xs] = 0.5f * (r[a][0] + r[a][1] + r[a][2]);
        u[(size_t)(4 * a + 2) * xs] = 0.5f * (r[a][0] - r[a][1] + r[a][2]);
        u[(size_t)(4 * a + 3) * xs] = r[a][2];
      }
    }
  return bad == 0;
}

SIM_PRIVATE int sim_wino_run_post(const sim_step *st, void **vals,
                                  sim_cx *cx, const sim_gpost *po) {
  const sim_wg *g = (const sim_wg *)st->data;
  const float *w = (const float *)vals[st->in[1]];
  /* U: made now into plan scratch, or kept in the client's cache packed
   * as the product's operand (made and packed when the cache asks) */
  void *entry = NULL;
  int fill = 0, ok = 1;
  float *U = (float *)vals[g->ids[1]];
  const char *upre = (const char *)sim_gcache_get_arg(cx, g->gid, w,
                                                      g->ucache, &fill,
                                                      &entry);
  if (!upre || fill) ok = sim_wg_kernel(g, w, U);
  if (upre && fill && ok) g->pack(&g->gemm, U, (void *)(uintptr_t)upre, cx);
  /* a kernel with a non-finite element is not kept: made again per call */
  if (entry) sim_gcache_put(cx->exe->cl, entry, ok);
  sim_wg_job j;
  memset(&j, 0, sizeof j);
  j.g = g, j.x = (const float *)vals[st->in[0]];
  j.V = (float *)vals[g->ids[0]], j.M = (float *)vals[g->ids[2]];
  j.y = (float *)vals[st->out[0]];
  j.level = sim_isa_level();
  j.po = po;
  atomic_init(&j.any_bad, 0);
  if (ok && !g->nchw) sim_parallel_for(cx, g->T, 16, sim_wg_in_tiles, &j);
#if SIM_WG_NCHW
  if (ok && g->nchw)
    sim_parallel_for(cx, g->NB * g->C * g->th, 4, sim_wg_nin_rows, &j);
#endif
  if (!ok || atomic_load(&j.any_bad)) { /* the direct way, no epilogue */
    (void)g->direct.run(&g->direct, vals, cx);
    return 0;
  }
  if (upre) g->run(&g->gemm, vals, cx, upre);
  else (void)g->gemm.run(&g->gemm, vals, cx);
  if (!g->nchw) sim_parallel_for(cx, g->T, 16, sim_wg_out_tiles, &j);
#if SIM_WG_NCHW
  if (g->nchw)
    sim_parallel_for(cx, g->NB * g->O * g->th, 4, sim_wg_nout_rows, &j);
#endif
  return 1;
}

static xrt_status sim_run_wino(const sim_step *st, void **vals, sim_cx *cx) {
  (void)sim_wino_run_post(st, vals, cx, NULL);
  return XRT_OK;
}

SIM_PRIVATE int sim_wino_cols(const sim_step *st, int64_t *N) {
  if (st->run != sim_run_wino) return 0;
  const sim_wg *g = (const sim_wg *)st->data;
  *N = g->nchw ? g->H * g->W : g->O;
  return 1;
}

/* The layout of c this file takes: 1 NHWC (features contiguous and
 * multiples of 16), 2 NCHW (rows contiguous, the result dense), else 0. */
static int sim_wg_layout(const sim_conv *c) {
  if (c->lf == 1 && c->of == 1 && c->Cg % 16 == 0 && c->O % 16 == 0)
    return 1;
  int64_t H = c->out[0], W = c->out[1];
  int rows = (c->lsp[1] == 1) & (c->osp[1] == 1) & (c->osp[0] == W) &
             (c->of == H * W) & ((c->NB == 1) | (c->ob == c->O * H * W)) &
             (W <= SIM_WG_MAX_W_OR_0);
  return SIM_WG_NCHW && rows ? 2 : 0;
}

/* Whether c is one this file takes (see above). */
static int sim_wg_fits(const sim_conv *c) {
  int many = (c->Cg >= SIM_WG_MIN_FEATURES) & (c->O >= SIM_WG_MIN_FEATURES);
  if (!sim_conv_2d_f32(c) || !many || !sim_wg_layout(c)) return 0;
  int off = 0; /* any window attribute other than Winograd's */
  for (int32_t d = 0; d < 2; d++)
    off |= (c->K[d] != 3) | (c->ws[d] != 1) | (c->ld[d] != 1) |
           (c->rd[d] != 1) | (c->rev[d] != 0) | (c->pad[2 * d] != 1) |
           (c->pad[2 * d + 1] != 1) | (c->out[d] != c->in[d]);
  if (off) return 0;
  int64_t T = c->NB * ((c->out[0] + 1) / 2) * ((c->out[1] + 1) / 2);
  return T >= SIM_WG_MIN_TILES &&
         16 * c->Cg * c->O * (int64_t)sizeof(float) <= SIM_WG_MAX_U;
}

/* The batched product M[xi] = V[xi] x U[xi] of g, planned into g->gemm. */
static int sim_wg_product(sim_fcc *fc, sim_wg *g, xrt_status *rc) {
  sim_dot *dt = (sim_dot *)sim_palloc(fc, sizeof *dt);
  int64_t *lb = (int64_t *)sim_palloc(fc, sizeof(int64_t) * 16);
  int64_t *rb = (int64_t *)sim_palloc(fc, sizeof(int64_t) * 16);
  int64_t mn = g->T > g->O ? g->T : g->O;
  int64_t *lm = (int64_t *)sim_palloc(fc, sizeof(int64_t) * (size_t)mn);
  int64_t *lk = (int64_t *)sim_palloc(fc, sizeof(int64_t) * (size_t)g->C);
  int64_t *rk = (int64_t *)sim_palloc(fc, sizeof(int64_t) * (size_t)g->C);
  int64_t *rn = (int64_t *)sim_palloc(fc, sizeof(int64_t) * (size_t)mn);
  if (!dt || !lb || !rb || !lm || !lk || !rk || !rn)
    return (*rc = XRT_RESOURCE_EXHAUSTED), 1;
  memset(dt, 0, sizeof *dt);
  /* rows and columns of the product: tiles x features, NCHW the other
   * way round */
  int64_t M = g->nchw ? g->O : g->T, N = g->nchw ? g->T : g->O;
  for (int64_t b = 0; b < 16; b++)
    lb[b] = b * M * g->C, rb[b] = b * g->C * N;
  for (int64_t m = 0; m < M; m++) lm[m] = m * g->C;
  for (int64_t k = 0; k < g->C; k++) lk[k] = k, rk[k] = k * N;
  for (int64_t n = 0; n < N; n++) rn[n] = n;
  dt->B = 16, dt->M = M, dt->N = N, dt->K = g->C;
  dt->lb = lb, dt->lm = lm, dt->lk = lk, dt->rb = rb, dt->rk = rk;
  dt->rn = rn;
  dt->lt = dt->rt = dt->ot = dt->ct = XRT_F32;
  dt->acc = dt->ltmp = dt->rtmp = dt->otmp = -1;
  dt->lnumel = 16 * M * g->C, dt->rnumel = 16 * g->C * N;
  dt->onumel = 16 * M * N;
  dt->wrap = XRT_DTYPE_INVALID;
  g->gin[0] = g->nchw ? g->ids[1] : g->ids[0];
  g->gin[1] = g->nchw ? g->ids[0] : g->ids[1];
  g->gemm.in = g->gin, g->gemm.nin = 2;
  g->gemm.out = g->ids + 2, g->gemm.nout = 1;
  return sim_gemm_lower_dot(fc, dt, &g->gemm, rc);
}

SIM_PRIVATE int sim_conv_wino_lower(sim_fcc *fc, const sim_conv *c,
                                    sim_step *st, xrt_status *rc) {
  *rc = XRT_OK;
  /* XRT_SIM_WINOGRAD=0: the direct ways (tests of them, comparisons) */
  const char *env = getenv("XRT_SIM_WINOGRAD");
  if ((env && strcmp(env, "0") == 0) || !sim_wg_fits(c) ||
      sim_gemm_isa(fc->cc) < 0)
    return 0;
  sim_wg *g = (sim_wg *)sim_palloc(fc, sizeof *g);
  if (!g) return (*rc = XRT_RESOURCE_EXHAUSTED), 1;
  memset(g, 0, sizeof *g);
  g->c = c, g->C = c->Cg, g->O = c->O, g->H = c->out[0], g->W = c->out[1];
  g->NB = c->NB, g->th = (g->H + 1) / 2, g->tw = (g->W + 1) / 2;
  g->T = g->NB * g->th * g->tw;
  g->nchw = sim_wg_layout(c) == 2;
  size_t vb = sizeof(float) * (size_t)(16 * g->T * g->C);
  size_t ub = sizeof(float) * (size_t)(16 * g->C * g->O);
  size_t mb = sizeof(float) * (size_t)(16 * g->T * g->O);
  if ((*rc = sim_temp(fc, vb, &g->ids[0])) ||
      (*rc = sim_temp(fc, ub, &g->ids[1])) ||
      (*rc = sim_temp(fc, mb, &g->ids[2])))
    return 1;
  g->gemm = *st;
  if (!sim_wg_product(fc, g, rc)) return 0;
  if (*rc) return 1;
  /* the direct way, for calls that meet a non-finite element */
  g->direct = *st;
  xrt_status grc = XRT_OK;
  if (!sim_conv_gemm_lower(fc, c, &g->direct, &grc) &&
      !sim_gemm_lower_conv(fc, c, &g->direct, &grc))
    return 0;
  if ((*rc = grc)) return 1;
  /* U kept only as the product packs it (no packing: a BLAS product) */
  sim_gbgeom pk;
  g->ucache = g->nchw ? sim_gemm_apack_bytes(&g->gemm)
              : sim_gemm_bgeom(&g->gemm, &pk)
                  ? sizeof(float) * (size_t)(pk.bt * pk.K * pk.np)
                  : 0;
  g->pack = g->nchw ? sim_gemm_pack_a : sim_gemm_pack_b;
  g->run = g->nchw ? sim_gemm_run_apre : sim_gemm_run_packed;
  g->gid = g->ucache ? sim_gcache_id() : 0;
  st->data = g;
  st->run = sim_run_wino;
  return 1;
}
#else
SIM_PRIVATE int sim_conv_wino_lower(sim_fcc *fc, const sim_conv *c,
                                    sim_step *st, xrt_status *rc) {
  (void)fc, (void)c, (void)st;
  *rc = XRT_OK;
  return 0; /* no vector extensions: the other paths */
}
#endif
