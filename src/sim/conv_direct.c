/*
 * src/sim/conv_direct.c - f32 NCHW convolutions of few lhs features (the
 * stems of image networks) summed straight from the image.
 * Part of the simulated device; MIT licensed, see LICENSE.
 */
#include "internal.h"
#include "post512.h"

/* ======================================================================
 * Direct NCHW convolutions of few features
 *
 * A stem (PyTorch's SqueezeNet and ResNet: 3 features, a 7x7 kernel of
 * stride 2) is a product of the kernel [O x K] (K = C * KH * KW, small)
 * and the im2col panel [K x positions]; building that panel (K copies of
 * the image, gathered at stride 2) took a fifth of the product's time.
 * Here no panel is built.  The image is copied once per call into rows
 * split by phase: xp[b][c][y][p][i] = x[b][c][y - pt][i * sw + p - pl]
 * (zero in the padding), so that for every kernel element k = (c, ky, kx)
 * the values a result row reads are one contiguous run:
 *
 *   y[b][o][oy][ox] = sum_k W[o][k] * xp[b][c][oy*sh + ky*dh]
 *                                       [(kx*dw) % sw][ox + (kx*dw) / sw]
 *
 * A tile of 12 result features x 32 positions of one result row sums its
 * K terms in registers: two vectors loaded at a table's offset per k and
 * 24 fused multiply-adds with the kernel's 12 numbers (packed [K][12] per
 * block of 12 features, kept in the client's cache while the kernel
 * argument is unchanged).  Each result is the sum over k in order from 0,
 * as the plain loops' order; padding counts as zero times the weight, as
 * there (0 * inf is NaN).  The epilogue of a fused group (sim_gpost) goes
 * over each tile in registers.  AVX-512 only (elsewhere the panel's way
 * runs).  Only for images of up to 4 features: with more, the panel costs
 * less beside the product, which then wins (SqueezeNet's 3x3 convolutions
 * of 16 features, 54-wide rows, took 12% longer here: a row's last
 * vector is part empty).
 * ==================================================================== */

#if SIM_HAVE_POST512
#define SIM_CDR_MR 12         /* result features of a tile */
#define SIM_CDR_MAX_C 4       /* lhs features, at most (images) */
#define SIM_CDR_MAX_K 512     /* kernel elements per result, at most */
#define SIM_CDR_MIN_O 16      /* result features, at least */
#define SIM_CDR_MIN_W 16      /* results per row, at least */
#define SIM_CDR_SLACK 64      /* floats after xp that tiles may read */

typedef struct sim_cdr {
  const sim_conv *c;
  int64_t C, O, OH, OW, NB, K, nblk;
  int64_t sh, sw, pt, pl, IH, IW;
  int64_t Hp, Wq;         /* xp: rows per feature, floats per phase row */
  const int32_t *off;     /* per k: its run's offset in an image of xp */
  int32_t xp, ap;         /* scratch values: xp, the packed kernel */
  uint64_t gid;           /* the packed kernel in the client's cache */
  size_t abytes;
} sim_cdr;

typedef struct sim_cdr_job {
  const sim_cdr *d;
  const float *x, *A;
  float *xp, *y;
  const sim_gpost *po;
} sim_cdr_job;

/* The kernel w packed per block of SIM_CDR_MR features: A[blk][k][r] (rows
 * past O zero). */
static void sim_cdr_pack(const sim_cdr *d, const float *w, float *A) {
  const sim_conv *c = d->c;
  int64_t KH = c->K[0], KW = c->K[1];
  for (int64_t blk = 0; blk < d->nblk; blk++)
    for (int64_t k = 0; k < d->K; k++) {
      int64_t ch = k / (KH * KW), ky = k / KW % KH, kx = k % KW;
      float *a = A + (blk * d->K + k) * SIM_CDR_MR;
      for (int64_t r = 0; r < SIM_CDR_MR; r++) {
        int64_t o = blk * SIM_CDR_MR + r;
        a[r] = o < d->O ? w[o * c->rof + ch * c->rif + ky * c->rsp[0] +
                            kx * c->rsp[1]]
                        : 0.0f;
      }
    }
}

/* Rows [i0, i1) of xp: row i is (image, feature, padded row). */
__attribute__((target("avx512f"))) static void
sim_cdr_split_rows(void *ctx, int64_t i0, int64_t i1) {
  const sim_cdr_job *j = (const sim_cdr_job *)ctx;
  const sim_cdr *d = j->d;
  const sim_conv *c = d->c;
  for (int64_t i = i0; i < i1; i++) {
    int64_t yp = i % d->Hp, ch = i / d->Hp % d->C, b = i / d->Hp / d->C;
    float *o = j->xp + i * d->sw * d->Wq;
    int64_t y = yp - d->pt;
    if (y < 0 || y >= d->IH) {
      memset(o, 0, sizeof(float) * (size_t)(d->sw * d->Wq));
      continue;
    }
    const float *s = j->x + b * c->lb + ch * c->lf + y * c->lsp[0];
    for (int64_t p = 0; p < d->sw; p++) {
      float *q = o + p * d->Wq;
      /* q[i] = s[i * sw + p - pl]: i in [lo, hi) inside the row */
      int64_t lo = (d->pl - p + d->sw - 1) / d->sw;
      int64_t hi = (d->IW + d->pl - p + d->sw - 1) / d->sw;
      if (lo > d->Wq) lo = d->Wq;
      if (hi > d->Wq) hi = d->Wq;
      memset(q, 0, sizeof(float) * (size_t)lo);
      memset(q + hi, 0, sizeof(float) * (size_t)(d->Wq - hi));
      const float *sp = s + lo * d->sw + p - d->pl;
      int64_t ii = lo;
      if (d->sw == 1) {
        memcpy(q + lo, sp, sizeof(float) * (size_t)(hi - lo));
        continue;
      }
      const __m512i even = _mm512_set_epi32(30, 28, 26, 24, 22, 20, 18, 16,
                                            14, 12, 10, 8, 6, 4, 2, 0);
      /* sw 2: 16 results from the 32 values at sp, inside the row */
      for (; ii + 16 <= hi && ii * 2 + p - d->pl + 32 <= d->IW;
           ii += 16, sp += 32)
        _mm512_storeu_ps(q + ii,
                         _mm512_permutex2var_ps(_mm512_loadu_ps(sp), even,
                                                _mm512_loadu_ps(sp + 16)));
      for (; ii < hi; ii++, sp += d->sw) q[ii] = *sp;
    }
  }
}

#define SIM_CDR_ROWS(X)                                                       \
  X(0) X(1) X(2) X(3) X(4) X(5) X(6) X(7) X(8) X(9) X(10) X(11)
#define SIM_CDR_Z(i) __m512 c##i##a = _mm512_setzero_ps(), c##i##b = c##i##a;
#define SIM_CDR_F2(i)                                                         \
  {                                                                           \
    __m512 a_ = _mm512_set1_ps(a[i]);                                         \
    c##i##a = _mm512_fmadd_ps(a_, b0, c##i##a);                               \
    c##i##b = _mm512_fmadd_ps(a_, b1, c##i##b);                               \
  }
#define SIM_CDR_F1(i)                                                         \
  c##i##a = _mm512_fmadd_ps(_mm512_set1_ps(a[i]), b0, c##i##a);
#define SIM_CDR_ST(i)                                                         \
  if (i < rows) {                                                             \
    if (po) sim_cdr_post(po, r0 + i, col, ldc, m0, m1, &c##i##a, &c##i##b);   \
    _mm512_mask_storeu_ps(y + i * ys, m0, c##i##a);                           \
    _mm512_mask_storeu_ps(y + i * ys + 16, m1, c##i##b);                      \
  }

/* The epilogue po on the two vectors of C's row r from column col on
 * (lanes in masks m0, m1; C's rows ldc apart), in registers: each
 * operation in turn, then the bounds (sim_gpost). */
__attribute__((target("avx512f"), always_inline)) static inline void
sim_cdr_post(const sim_gpost *po, int64_t r, int64_t col, int64_t ldc,
             __mmask16 m0, __mmask16 m1, __m512 *v0, __m512 *v1) {
  for (int j = 0; j < po->n; j++) {
    const float *bj = po->b[j];
    __m512 b0, b1;
    switch (po->arg[j]) {
    case SIM_GPOST_ROW: b0 = b1 = _mm512_set1_ps(bj[r]); break;
    case SIM_GPOST_ONE: b0 = b1 = _mm512_set1_ps(bj[0]); break;
    case SIM_GPOST_COL:
      b0 = _mm512_maskz_loadu_ps(m0, bj + col);
      b1 = _mm512_maskz_loadu_ps(m1, bj + col + 16);
      break;
    default:
      b0 = _mm512_maskz_loadu_ps(m0, bj + r * ldc + col);
      b1 = _mm512_maskz_loadu_ps(m1, bj + r * ldc + col + 16);
      break;
    }
    *v0 = sim_gpost_op512(*v0, b0, po->op[j]);
    *v1 = sim_gpost_op512(*v1, b1, po->op[j]);
  }
  __m512 lo, z, hi;
  sim_gpost_bounds(po, &lo, &z, &hi);
  *v0 = sim_gpost_bound512(*v0, lo, z, hi);
  *v1 = sim_gpost_bound512(*v1, lo, z, hi);
}

/* One tile: n (1..32) results of a row for each of the block's features
 * (rows of them stored, ys apart), summed over k from xb + off[k]; with
 * the epilogue po (or none), whose rows start at r0 and columns at col
 * (rows ldc apart). */
__attribute__((target("avx512f"))) static void
sim_cdr_tile(const float *A, const float *xb, const int32_t *off, int64_t K,
             int64_t n, float *y, int64_t ys, int64_t rows,
             const sim_gpost *po, int64_t r0, int64_t col, int64_t ldc) {
  SIM_CDR_ROWS(SIM_CDR_Z)
  if (n > 16) {
    for (int64_t k = 0; k < K; k++) {
      const float *a = A + k * SIM_CDR_MR, *p = xb + off[k];
      __m512 b0 = _mm512_loadu_ps(p), b1 = _mm512_loadu_ps(p + 16);
      SIM_CDR_ROWS(SIM_CDR_F2)
    }
  } else {
    for (int64_t k = 0; k < K; k++) {
      const float *a = A + k * SIM_CDR_MR;
      __m512 b0 = _mm512_loadu_ps(xb + off[k]);
      SIM_CDR_ROWS(SIM_CDR_F1)
    }
  }
  __mmask16 m0 = (__mmask16)(n >= 16 ? 0xFFFF : (1u << n) - 1);
  __mmask16 m1 = (__mmask16)(n >= 32 ? 0xFFFF : n > 16 ? (1u << (n - 16)) - 1
                                                         : 0);
  SIM_CDR_ROWS(SIM_CDR_ST)
}

/* Result rows [i0, i1): row i is (image, result row). */
__attribute__((target("avx512f"))) static void
sim_cdr_rows(void *ctx, int64_t i0, int64_t i1) {
  const sim_cdr_job *j = (const sim_cdr_job *)ctx;
  const sim_cdr *d = j->d;
  const sim_conv *c = d->c;
  int64_t img = d->C * d->Hp * d->sw * d->Wq, HW = d->OH * d->OW;
  for (int64_t i = i0; i < i1; i++) {
    int64_t oy = i % d->OH, b = i / d->OH;
    const float *xb = j->xp + b * img + oy * d->sh * d->sw * d->Wq;
    for (int64_t blk = 0; blk < d->nblk; blk++) {
      int64_t o0 = blk * SIM_CDR_MR;
      int64_t rows = d->O - o0 < SIM_CDR_MR ? d->O - o0 : SIM_CDR_MR;
      const float *A = j->A + blk * d->K * SIM_CDR_MR;
      for (int64_t x0 = 0; x0 < d->OW; x0 += 32) {
        int64_t n = d->OW - x0 < 32 ? d->OW - x0 : 32;
        float *y = j->y + b * c->ob + o0 * c->of + oy * c->osp[0] + x0;
        sim_cdr_tile(A, xb + x0, d->off, d->K, n, y, c->of, rows, j->po,
                     b * d->O + o0, oy * d->OW + x0, HW);
      }
    }
  }
}

SIM_PRIVATE int sim_cdir_run_post(const sim_step *st, void **vals,
                                  sim_cx *cx, const sim_gpost *po) {
  const sim_cdr *d = (const sim_cdr *)st->data;
  const float *w = (const float *)vals[st->in[1]];
  /* the packed kernel: kept in the client's cache, else made per call */
  void *entry = NULL;
  int fill = 0;
  float *A = (float *)sim_gcache_get_arg(cx, d->gid, w, d->abytes, &fill,
                                         &entry);
  if (!A || fill) sim_cdr_pack(d, w, A ? A : (float *)vals[d->ap]);
  if (entry) sim_gcache_put(cx->exe->cl, entry, 1);
  float *xp = (float *)vals[d->xp]; /* tiles read into its slack */
  memset(xp + d->NB * d->C * d->Hp * d->sw * d->Wq, 0,
         sizeof(float) * SIM_CDR_SLACK);
  sim_cdr_job j = {d, (const float *)vals[st->in[0]],
                  A ? A : (const float *)vals[d->ap], xp,
                  (float *)vals[st->out[0]], po};
  sim_parallel_for(cx, d->NB * d->C * d->Hp, 8, sim_cdr_split_rows, &j);
  sim_parallel_for(cx, d->NB * d->OH, 1, sim_cdr_rows, &j);
  return 1;
}

static xrt_status sim_run_cdir(const sim_step *st, void **vals, sim_cx *cx) {
  (void)sim_cdir_run_post(st, vals, cx, NULL);
  return XRT_OK;
}

SIM_PRIVATE int sim_cdir_cols(const sim_step *st, int64_t *N) {
  if (st->run != sim_run_cdir) return 0;
  const sim_cdr *d = (const sim_cdr *)st->data;
  *N = d->OH * d->OW;
  return 1;
}

/* Whether c is one this file takes (see above). */
static int sim_cdr_fits(const sim_conv *c) {
  if (!sim_conv_2d_f32(c)) return 0;
  int64_t OH = c->out[0], OW = c->out[1], K = c->Cg * c->K[0] * c->K[1];
  /* a 1x1 kernel is a plain product (conv_gemm.c) */
  int off = (c->Cg > SIM_CDR_MAX_C) | (K > SIM_CDR_MAX_K) |
            (c->K[0] * c->K[1] < 2) |
            (c->O < SIM_CDR_MIN_O) | (OW < SIM_CDR_MIN_W) | (OH < 1) |
            (c->ws[1] > 2);
  for (int32_t d = 0; d < 2; d++)
    off |= (c->ld[d] != 1) | (c->rev[d] != 0) | (c->pad[2 * d] < 0) |
           (c->pad[2 * d + 1] < 0);
  /* rows contiguous in the lhs; the result dense, NCHW */
  off |= (c->lsp[1] != 1) | (c->osp[1] != 1) | (c->osp[0] != OW) |
         (c->of != OH * OW) | ((c->NB > 1) & (c->ob != c->O * OH * OW));
  return !off;
}

SIM_PRIVATE int sim_conv_direct_lower(sim_fcc *fc, const sim_conv *c,
                                      sim_step *st, xrt_status *rc) {
  *rc = XRT_OK;
  if (!sim_cdr_fits(c) || sim_gemm_isa(fc->cc) != 2) return 0;
  sim_cdr *d = (sim_cdr *)sim_palloc(fc, sizeof *d);
  if (!d) return (*rc = XRT_RESOURCE_EXHAUSTED), 1;
  memset(d, 0, sizeof *d);
  d->c = c, d->C = c->Cg, d->O = c->O, d->OH = c->out[0], d->OW = c->out[1];
  d->NB = c->NB, d->K = c->Cg * c->K[0] * c->K[1];
  d->nblk = (d->O + SIM_CDR_MR - 1) / SIM_CDR_MR;
  d->sh = c->ws[0], d->sw = c->ws[1], d->pt = c->pad[0], d->pl = c->pad[2];
  d->IH = c->in[0], d->IW = c->in[1];
  d->Hp = d->IH + c->pad[0] + c->pad[1];
  d->Wq = (d->IW + c->pad[2] + c->pad[3] + d->sw - 1) / d->sw;
  int64_t img = d->C * d->Hp * d->sw * d->Wq;
  if (img + SIM_CDR_SLACK > INT32_MAX) return 0;
  int32_t *off = (int32_t *)sim_palloc(fc, sizeof(int32_t) * (size_t)d->K);
  if (!off) return (*rc = XRT_RESOURCE_EXHAUSTED), 1;
  int64_t KH = c->K[0], KW = c->K[1];
  for (int64_t k = 0; k < d->K; k++) {
    int64_t ch = k / (KH * KW), ky = k / KW % KH, kx = k % KW;
    int64_t dx = kx * c->rd[1];
    off[k] = (int32_t)(((ch * d->Hp + ky * c->rd[0]) * d->sw + dx % d->sw) *
                           d->Wq + dx / d->sw);
  }
  d->off = off;
  d->abytes = sizeof(float) * (size_t)(d->nblk * d->K * SIM_CDR_MR);
  size_t xb = sizeof(float) * (size_t)(d->NB * img + SIM_CDR_SLACK);
  if ((*rc = sim_temp(fc, xb, &d->xp)) || (*rc = sim_temp(fc, d->abytes,
                                                          &d->ap)))
    return 1;
  d->gid = sim_gcache_id();
  st->data = d;
  st->run = sim_run_cdir;
  return 1;
}
#else
SIM_PRIVATE int sim_conv_direct_lower(sim_fcc *fc, const sim_conv *c,
                                      sim_step *st, xrt_status *rc) {
  (void)fc, (void)c, (void)st;
  *rc = XRT_OK;
  return 0; /* AVX-512 only: the panel's way */
}

SIM_PRIVATE int sim_cdir_cols(const sim_step *st, int64_t *N) {
  (void)st, (void)N;
  return 0;
}

SIM_PRIVATE int sim_cdir_run_post(const sim_step *st, void **vals,
                                  sim_cx *cx, const sim_gpost *po) {
  (void)st, (void)vals, (void)cx, (void)po;
  return 0;
}
#endif
