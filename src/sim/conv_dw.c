/*
 * src/sim/conv_dw.c - depthwise convolutions: one input feature per group
 * (feature_group_count = input features, any channel multiplier), f32 and
 * f64 with static padding, any layout, strides, padding and dilations;
 * and, in the same loop nest, convolutions of one group of up to four
 * input features, or of up to 64 into at most 16 results, laid out NHWC /
 * HWIO (a first layer on RGB, a MobileNet projection to 16 features).
 * Part of the simulated device; MIT licensed, see LICENSE.
 */
#include "internal.h"

/* ======================================================================
 * Depthwise convolution
 *
 * As a GEMM (gemm.c) a depthwise convolution is one tiny product per group
 * (N = channel multiplier, K = window positions), whose packing costs far
 * more than its arithmetic.  Here result[b, p, f * mult + j] is the sum
 * over window positions t of lhs[b, f, x_t(p)] * rhs[t, 0, f * mult + j],
 * from 0, in window order (row-major, as the GEMM's columns), one multiply
 * and add per position, padding and lhs-dilation holes included as zeros
 * (0 * inf is nan, as in the other paths).  The multiply-adds are fused
 * where the GEMM micro-kernels fuse them (AVX2, AVX-512: the same choice of
 * kernels, sim_gemm_isa) and separate in the portable build, so a result
 * is bit for bit the packed GEMM's of the same convolution (one K block:
 * windows up to 256 positions).  Two loop nests, picked when planning:
 *
 *  - features contiguous in lhs (NHWC, as JAX writes them): per result
 *    position, the window positions' lhs rows (or a row of zeros) and
 *    weight rows go to a kernel that runs across the features, several
 *    vectors of sums at a time.  A row of results (all dimensions but the
 *    last) finds its window rows once; along the last dimension, the
 *    positions whose windows lie inside lhs (the interior, found when
 *    planning) go four at a time to a kernel that loads each weight
 *    vector once for the four and steps its lhs pointers itself (a padding
 *    row of zeros steps by 0), the border's one by one (MobileNetV2's 3x3
 *    layer on 112x112x32: 191 -> 87 us on one AVX-512 core).  One group of
 *    at most four input features takes the same nest with kernels that
 *    broadcast each lhs element against a vector of the group's results
 *    (MobileNetV2's first layer: 468 -> 126 us as against the packed
 *    GEMM; ResNet's 7x7/2 one, 64 results: 1.77 -> 1.21 ms; a 1x1
 *    convolution of 112x112x32 into 16 results: 184 -> 95 us);
 *  - otherwise (NCHW): per result row (batch, feature, positions of all but
 *    the last spatial dimension), a vector of results along the last one at
 *    a time, four rows of one feature at once; each window position reads
 *    a run of the lhs row (masked at the padding; stride 2: two loads and
 *    a shuffle; larger strides: a gather), or, with lhs dilation, goes
 *    through the table one result at a time.
 *
 * Either splits its results across the device's threads when large.  The
 * small convolutions that used to take the plain loops of conv.c (whose
 * multiply-adds are separate) now fuse them too on AVX2 / AVX-512.
 * ==================================================================== */

#if SIM_X86
#define SIM_DW_X86 1
#include <immintrin.h>
#include "post512.h"
#else
#define SIM_DW_X86 0
#endif

enum {
  SIM_DW_TAPS = 128, /* most window positions (rows of them: row nest) */
  SIM_DW_ROWS = 4,   /* row nest: rows at once (independent sums) */
  SIM_DW_CB = 256,   /* features per block when the result is strided */
  SIM_DW_RUN = 4,    /* features-inner: result positions per kernel call */
  SIM_DW_DENSE = 4,  /* most input features of one group (dn, dn4) */
  SIM_DW_NARROW = 16, /* or most results, with at most */
  SIM_DW_NARROW_CI = 64 /* this many input features */
};

/* Window position kx of the last spatial dimension (row nest): results i
 * in [lo, hi) read x0 + (i - lo) * xs of their lhs row, the others zero;
 * or, when tab is not NULL, tab[i * ts] (-1: zero). */
typedef struct sim_dw_col {
  int64_t lo, hi, xs, x0;
  const int64_t *tab;
} sim_dw_col;

/* Kernels of one element type and instruction set. */
typedef struct sim_dw_k {
  /* o[c] = the sum over t < nt of ip[t][off + c] * wp[t][off + c], in t
   * order from 0, for c < n. */
  void (*ch)(int64_t nt, const char *const *ip, const char *const *wp,
             int64_t off, void *o, int64_t n);
  /* ch for SIM_DW_RUN result positions at once, position u reading
   * ip[t] + u * xs[t] elements (xs[t] = 0: a padding row of zeros) and
   * writing o + u * os, for u < SIM_DW_RUN * ng: each weight vector is
   * loaded once for SIM_DW_RUN of them (the same sums, in the same
   * order). */
  void (*ch4)(int64_t nt, const char *const *ip, const char *const *wp,
              const int64_t *xs, int64_t ng, void *o, int64_t os, int64_t n);
  /* Few input features (one group of ci, sim_dw.cin): o[j] = the sum over
   * t < nt, then i < ci, of ip[t][i] * wp[t][i * wci + j], for j < n. */
  void (*dn)(int64_t nt, int64_t ci, const char *const *ip,
             const char *const *wp, int64_t wci, void *o, int64_t n);
  /* dn for SIM_DW_RUN * ng positions, as ch4 reads and writes them. */
  void (*dn4)(int64_t nt, int64_t ci, const char *const *ip,
              const char *const *wp, int64_t wci, const int64_t *xs,
              int64_t ng, void *o, int64_t os, int64_t n);
  /* For each of nr <= SIM_DW_ROWS rows r: acc_r[i * as] (i < n) = the sum
   * over window positions (ro < nro, kx < KX), in order from 0, of
   * L[roff[r * nro + ro] + col_kx(i)] * w[woff[ro * KX + kx]] (roff < 0:
   * a padding row of zeros).  vec: as == 1 and no column goes through a
   * table (then vectors of results). */
  void (*row)(char *const *acc, int64_t nr, int64_t as, int64_t n,
              const char *L, int64_t nro, const int64_t *roff, int64_t KX,
              const sim_dw_col *cols, int64_t ts, const char *w,
              const int64_t *woff, int vec);
} sim_dw_k;

/* p + bytes as an address, which may lie outside p's array: only masked
 * loads use it, for lanes inside. */
static inline const void *sim_dw_addr(const void *p, int64_t bytes) {
  return (const void *)(uintptr_t)((uintptr_t)p + (uintptr_t)bytes);
}

/* Row u's lhs vector for column q (the row kernel's vector loop; mode 0
 * none, 1 whole, 2 masked by m, 3 gathered, 4 every other element) times
 * wv, into A. */
#define SIM_DW_ROWX(A, u, T, V, VZERO, VLD, MLD, MGS, MS2, VFMA)               \
  {                                                                            \
    V xv = VZERO;                                                              \
    int64_t R = roff[(u) * nro + ro];                                          \
    const T *x = R < 0 ? L : L + R + q->x0;                                    \
    if (R < 0 || mode == 0) {                                                  \
    } else if (mode == 1) {                                                    \
      xv = VLD(x + d);                                                         \
    } else if (mode == 2) {                                                    \
      MLD(xv, (const T *)sim_dw_addr(x, d * (int64_t)sizeof(T)), m);           \
    } else if (mode == 4) {                                                    \
      MS2(xv, (const T *)sim_dw_addr(x, 2 * d * (int64_t)sizeof(T)), la, le);  \
    } else {                                                                   \
      MGS(xv, x, m, d, q->xs);                                                 \
    }                                                                          \
    A = VFMA(xv, wv, A);                                                       \
  }

/* The kernels, one instantiation per element type T and instruction set:
 * V a vector of VL elements with its zero, load, store, broadcast and
 * (fused or not) multiply-add VFMA(x, w, acc), SFMA the scalar one; MT a
 * lane mask, MK(a, e) the one of lanes [a, e) (clamped), MLD(v, p, m) a
 * load of those lanes (zeros in the others, which are not read),
 * MGS(v, p, m, d, xs) the same from p[(d + l) * xs], MS2(v, p, a, e) from
 * p[2 l] (two loads and a shuffle), MST(p, v, r) a store of lanes
 * [0, r). */
/* dn4's four vectors of results of one position (w0..w3 the weights, X
 * its lhs element) and their stores. */
#define SIM_DW_DN4Q(V, VSET1, VFMA, A, B, C, D, X)                             \
  {                                                                            \
    V xv = VSET1(X);                                                           \
    A = VFMA(xv, w0, A), B = VFMA(xv, w1, B);                                  \
    C = VFMA(xv, w2, C), D = VFMA(xv, w3, D);                                  \
  }
/* ch4 and dn4: the two vectors of results of four positions (a0, b0 ..
 * a3, b3) at o + c, os elements apart. */
#define SIM_DW_ST4X2(VST, VL)                                                  \
  VST(o + c, a0), VST(o + c + (VL), b0);                                       \
  VST(o + os + c, a1), VST(o + os + c + (VL), b1);                             \
  VST(o + 2 * os + c, a2), VST(o + 2 * os + c + (VL), b2);                     \
  VST(o + 3 * os + c, a3), VST(o + 3 * os + c + (VL), b3);
/* dn and dn4: the weight vector w0 at W, its r lanes (mask m) when the
 * vector of results is partial. */
#define SIM_DW_DNW(VLD, MLD, VL, W)                                            \
  if (r == (VL)) {                                                             \
    w0 = VLD(W);                                                               \
  } else {                                                                     \
    MLD(w0, (W), m);                                                           \
  }
#define SIM_DW_DN4S(VST, VL, P, A, B, C, D)                                    \
  VST((P), A), VST((P) + (VL), B), VST((P) + 2 * (VL), C),                     \
      VST((P) + 3 * (VL), D);
/* ch4 (see sim_dw_k) as NAME; PP: more parameters; POST2(c), POSTM(c, m):
 * what happens to the sums (a0 .. a3, b0 .. b3 of columns c on; a0 .. a3
 * under mask m) before they are stored: nothing, or the epilogue in
 * registers (sim_dw_ch4p_f32_avx512). */
#define SIM_DW_NOPP
#define SIM_DW_NOPOST2(c)
#define SIM_DW_NOPOSTM(c, m)
#define SIM_DW_CH4(NAME, T, ATTR, V, VL, VZERO, VLD, VST, VFMA, MT, MK, MLD,   \
                   MST, PP, POST2, POSTM)                                      \
  ATTR static void NAME(int64_t nt, const char *const *ip,                     \
                        const char *const *wp, const int64_t *xsp,             \
                        int64_t ng, void *op, int64_t os, int64_t n PP) {      \
    for (int64_t g = 0; g < ng; g++) {                                         \
      T *o = (T *)op + g * 4 * os;                                             \
      int64_t c = 0;                                                           \
      for (; c + 2 * (VL) <= n; c += 2 * (VL)) {                               \
        V a0 = VZERO, a1 = VZERO, a2 = VZERO, a3 = VZERO;                      \
        V b0 = VZERO, b1 = VZERO, b2 = VZERO, b3 = VZERO;                      \
        for (int64_t t = 0; t < nt; t++) {                                     \
          const int64_t xs = xsp[t];                                           \
          const T *x = (const T *)(const void *)ip[t] + c + g * 4 * xs;        \
          const T *w = (const T *)(const void *)wp[t] + c;                     \
          V w0 = VLD(w), w1 = VLD(w + (VL));                                   \
          a0 = VFMA(VLD(x), w0, a0);                                           \
          b0 = VFMA(VLD(x + (VL)), w1, b0);                                    \
          a1 = VFMA(VLD(x + xs), w0, a1);                                      \
          b1 = VFMA(VLD(x + xs + (VL)), w1, b1);                               \
          a2 = VFMA(VLD(x + 2 * xs), w0, a2);                                  \
          b2 = VFMA(VLD(x + 2 * xs + (VL)), w1, b2);                           \
          a3 = VFMA(VLD(x + 3 * xs), w0, a3);                                  \
          b3 = VFMA(VLD(x + 3 * xs + (VL)), w1, b3);                           \
        }                                                                      \
        POST2(c)                                                               \
        SIM_DW_ST4X2(VST, VL)                                                  \
      }                                                                        \
      for (; c < n; c += (VL)) { /* one vector, the last one masked */         \
        int64_t r = n - c < (VL) ? n - c : (VL);                               \
        MT m = MK(0, r);                                                       \
        V a0 = VZERO, a1 = VZERO, a2 = VZERO, a3 = VZERO, x0 = VZERO;          \
        V w0 = VZERO;                                                          \
        for (int64_t t = 0; t < nt; t++) {                                     \
          const int64_t xs = xsp[t];                                           \
          const T *x = (const T *)(const void *)ip[t] + c + g * 4 * xs;        \
          MLD(w0, (const T *)(const void *)wp[t] + c, m);                      \
          MLD(x0, x, m);                                                       \
          a0 = VFMA(x0, w0, a0);                                               \
          MLD(x0, x + xs, m);                                                  \
          a1 = VFMA(x0, w0, a1);                                               \
          MLD(x0, x + 2 * xs, m);                                              \
          a2 = VFMA(x0, w0, a2);                                               \
          MLD(x0, x + 3 * xs, m);                                              \
          a3 = VFMA(x0, w0, a3);                                               \
        }                                                                      \
        POSTM(c, m)                                                            \
        MST(o + c, a0, r), MST(o + os + c, a1, r);                             \
        MST(o + 2 * os + c, a2, r), MST(o + 3 * os + c, a3, r);                \
      }                                                                        \
    }                                                                          \
  }                                                                            \

#define SIM_DW_KERNELS(SFX, T, ATTR, V, VL, VZERO, VLD, VST, VSET1, VFMA,      \
                       SFMA, MT, MK, MLD, MGS, MS2, MST)                       \
  ATTR static void sim_dw_ch_##SFX(int64_t nt, const char *const *ip,          \
                                   const char *const *wp, int64_t off,         \
                                   void *op, int64_t n) {                      \
    T *o = (T *)op;                                                            \
    int64_t c = 0;                                                             \
    for (; c + 4 * (VL) <= n; c += 4 * (VL)) {                                 \
      V a0 = VZERO, a1 = VZERO, a2 = VZERO, a3 = VZERO;                        \
      for (int64_t t = 0; t < nt; t++) {                                       \
        const T *x = (const T *)(const void *)ip[t] + off + c;                 \
        const T *w = (const T *)(const void *)wp[t] + off + c;                 \
        a0 = VFMA(VLD(x), VLD(w), a0);                                         \
        a1 = VFMA(VLD(x + (VL)), VLD(w + (VL)), a1);                           \
        a2 = VFMA(VLD(x + 2 * (VL)), VLD(w + 2 * (VL)), a2);                   \
        a3 = VFMA(VLD(x + 3 * (VL)), VLD(w + 3 * (VL)), a3);                   \
      }                                                                        \
      VST(o + c, a0), VST(o + c + (VL), a1);                                   \
      VST(o + c + 2 * (VL), a2), VST(o + c + 3 * (VL), a3);                    \
    }                                                                          \
    for (; c + 2 * (VL) <= n; c += 2 * (VL)) {                                 \
      V a0 = VZERO, a1 = VZERO;                                                \
      for (int64_t t = 0; t < nt; t++) {                                       \
        const T *x = (const T *)(const void *)ip[t] + off + c;                 \
        const T *w = (const T *)(const void *)wp[t] + off + c;                 \
        a0 = VFMA(VLD(x), VLD(w), a0);                                         \
        a1 = VFMA(VLD(x + (VL)), VLD(w + (VL)), a1);                           \
      }                                                                        \
      VST(o + c, a0), VST(o + c + (VL), a1);                                   \
    }                                                                          \
    for (; c < n; c += (VL)) { /* one vector, the last one masked */           \
      int64_t r = n - c < (VL) ? n - c : (VL);                                 \
      MT m = MK(0, r);                                                         \
      V a0 = VZERO, x0 = VZERO, w0 = VZERO;                                    \
      for (int64_t t = 0; t < nt; t++) {                                       \
        MLD(x0, (const T *)(const void *)ip[t] + off + c, m);                  \
        MLD(w0, (const T *)(const void *)wp[t] + off + c, m);                  \
        a0 = VFMA(x0, w0, a0);                                                 \
      }                                                                        \
      MST(o + c, a0, r);                                                       \
    }                                                                          \
  }                                                                            \
                                                                               \
  SIM_DW_CH4(sim_dw_ch4_##SFX, T, ATTR, V, VL, VZERO, VLD, VST, VFMA, MT, MK,  \
             MLD, MST, SIM_DW_NOPP, SIM_DW_NOPOST2, SIM_DW_NOPOSTM)           \
                                                                               \
  ATTR static void sim_dw_dn_##SFX(int64_t nt, int64_t ci,                     \
                                   const char *const *ip,                      \
                                   const char *const *wp, int64_t wci,         \
                                   void *op, int64_t n) {                      \
    T *o = (T *)op;                                                            \
    int64_t c = 0;                                                             \
    /* four whole vectors at once: four chains, where one chain a vector     \
     * waited on each multiply-add (a stem's positions at the padding:     \
     * 12% of its time for 7% of its positions) */                         \
    for (; c + 4 * (VL) <= n; c += 4 * (VL)) {                                 \
      V a0 = VZERO, a1 = VZERO, a2 = VZERO, a3 = VZERO;                        \
      for (int64_t t = 0; t < nt; t++) {                                       \
        const T *x = (const T *)(const void *)ip[t];                           \
        const T *w = (const T *)(const void *)wp[t] + c;                       \
        for (int64_t i = 0; i < ci; i++, w += wci) {                           \
          V xv = VSET1(x[i]);                                                  \
          a0 = VFMA(xv, VLD(w), a0), a1 = VFMA(xv, VLD(w + (VL)), a1);         \
          a2 = VFMA(xv, VLD(w + 2 * (VL)), a2);                                \
          a3 = VFMA(xv, VLD(w + 3 * (VL)), a3);                                \
        }                                                                      \
      }                                                                        \
      SIM_DW_DN4S(VST, VL, o + c, a0, a1, a2, a3)                              \
    }                                                                          \
    for (; c < n; c += (VL)) { /* the last vector masked */                    \
      const int64_t r = n - c < (VL) ? n - c : (VL);                           \
      MT m = MK(0, r);                                                         \
      V a0 = VZERO, w0 = VZERO;                                                \
      for (int64_t t = 0; t < nt; t++) {                                       \
        const T *x = (const T *)(const void *)ip[t];                           \
        const T *w = (const T *)(const void *)wp[t] + c;                       \
        for (int64_t i = 0; i < ci; i++, w += wci) {                           \
          SIM_DW_DNW(VLD, MLD, VL, w)                                          \
          a0 = VFMA(VSET1(x[i]), w0, a0);                                      \
        }                                                                      \
      }                                                                        \
      MST(o + c, a0, r);                                                       \
    }                                                                          \
  }                                                                            \
                                                                               \
  /* dn4's vector of results [c, c + r) (r <= VL) for P (4 or 8)          \
   * positions from group g's first on, P chains of multiply-adds: eight   \
   * when the results are one vector and two groups remain (four wait on   \
   * the multiply-add's latency: MobileNetV2's projection to 16 features   \
   * on 112x112, 149 -> 188 GFLOP/s); the same sums either way.  The      \
   * loops over u are unrolled: else a[] lives in memory (3x slower). */    \
  static inline __attribute__((always_inline)) ATTR void sim_dw_dnv_##SFX(    \
      int64_t nt, int64_t ci, const char *const *ip, const char *const *wp,    \
      int64_t wci, const int64_t *xsp, int64_t g, T *o, int64_t os,            \
      int64_t c, int64_t r, int P) {                                           \
    MT m = MK(0, r);                                                           \
    V a[8], w0 = VZERO;                                                        \
    _Pragma("GCC unroll 8")                                                   \
    for (int u = 0; u < 8; u++) a[u] = VZERO;                                  \
    for (int64_t t = 0; t < nt; t++) {                                         \
      const int64_t xs = xsp[t];                                               \
      const T *x = (const T *)(const void *)ip[t] + g * 4 * xs;                \
      const T *w = (const T *)(const void *)wp[t] + c;                         \
      for (int64_t i = 0; i < ci; i++, w += wci) {                             \
        SIM_DW_DNW(VLD, MLD, VL, w)                                            \
        _Pragma("GCC unroll 8")                                               \
        for (int u = 0; u < P; u++)                                            \
          a[u] = VFMA(VSET1(x[u * xs + i]), w0, a[u]);                         \
      }                                                                        \
    }                                                                          \
    _Pragma("GCC unroll 8")                                                   \
    for (int u = 0; u < P; u++) MST(o + u * os + c, a[u], r);                  \
  }                                                                            \
                                                                               \
  ATTR static void sim_dw_dn4_##SFX(                                           \
      int64_t nt, int64_t ci, const char *const *ip, const char *const *wp,    \
      int64_t wci, const int64_t *xsp, int64_t ng, void *op, int64_t os,       \
      int64_t n) {                                                             \
    for (int64_t g = 0; g < ng; g++) {                                         \
      T *o = (T *)op + g * 4 * os;                                             \
      int64_t c = 0;                                                           \
      /* 512-bit vectors: four of results a position while they fill */        \
      for (; sizeof(V) == 64 && c + 4 * (VL) <= n; c += 4 * (VL)) {            \
        V a0 = VZERO, a1 = VZERO, a2 = VZERO, a3 = VZERO;                      \
        V b0 = VZERO, b1 = VZERO, b2 = VZERO, b3 = VZERO;                      \
        V c0 = VZERO, c1 = VZERO, c2 = VZERO, c3 = VZERO;                      \
        V d0 = VZERO, d1 = VZERO, d2 = VZERO, d3 = VZERO;                      \
        for (int64_t t = 0; t < nt; t++) {                                     \
          const int64_t xs = xsp[t];                                           \
          const T *x = (const T *)(const void *)ip[t] + g * 4 * xs;            \
          const T *w = (const T *)(const void *)wp[t] + c;                     \
          for (int64_t i = 0; i < ci; i++, w += wci) {                         \
            V w0 = VLD(w), w1 = VLD(w + (VL));                                 \
            V w2 = VLD(w + 2 * (VL)), w3 = VLD(w + 3 * (VL));                  \
            SIM_DW_DN4Q(V, VSET1, VFMA, a0, b0, c0, d0, x[i])                  \
            SIM_DW_DN4Q(V, VSET1, VFMA, a1, b1, c1, d1, x[xs + i])             \
            SIM_DW_DN4Q(V, VSET1, VFMA, a2, b2, c2, d2, x[2 * xs + i])         \
            SIM_DW_DN4Q(V, VSET1, VFMA, a3, b3, c3, d3, x[3 * xs + i])         \
          }                                                                    \
        }                                                                      \
        SIM_DW_DN4S(VST, VL, o + c, a0, b0, c0, d0)                            \
        SIM_DW_DN4S(VST, VL, o + os + c, a1, b1, c1, d1)                       \
        SIM_DW_DN4S(VST, VL, o + 2 * os + c, a2, b2, c2, d2)                   \
        SIM_DW_DN4S(VST, VL, o + 3 * os + c, a3, b3, c3, d3)                   \
      }                                                                        \
      for (; c + 2 * (VL) <= n; c += 2 * (VL)) {                               \
        V a0 = VZERO, a1 = VZERO, a2 = VZERO, a3 = VZERO;                      \
        V b0 = VZERO, b1 = VZERO, b2 = VZERO, b3 = VZERO;                      \
        for (int64_t t = 0; t < nt; t++) {                                     \
          const int64_t xs = xsp[t];                                           \
          const T *x = (const T *)(const void *)ip[t] + g * 4 * xs;            \
          const T *w = (const T *)(const void *)wp[t] + c;                     \
          for (int64_t i = 0; i < ci; i++, w += wci) {                         \
            V w0 = VLD(w), w1 = VLD(w + (VL));                                 \
            V xv = VSET1(x[i]);                                                \
            a0 = VFMA(xv, w0, a0), b0 = VFMA(xv, w1, b0);                      \
            xv = VSET1(x[xs + i]);                                             \
            a1 = VFMA(xv, w0, a1), b1 = VFMA(xv, w1, b1);                      \
            xv = VSET1(x[2 * xs + i]);                                         \
            a2 = VFMA(xv, w0, a2), b2 = VFMA(xv, w1, b2);                      \
            xv = VSET1(x[3 * xs + i]);                                         \
            a3 = VFMA(xv, w0, a3), b3 = VFMA(xv, w1, b3);                      \
          }                                                                    \
        }                                                                      \
        SIM_DW_ST4X2(VST, VL)                                                  \
      }                                                                        \
      if (n <= (VL) && g + 1 < ng) { /* eight positions: two groups */       \
        sim_dw_dnv_##SFX(nt, ci, ip, wp, wci, xsp, g, o, os, 0, n, 8);         \
        g++;                                                                   \
        continue;                                                              \
      }                                                                        \
      for (; c < n; c += (VL)) /* one vector, the last one masked */           \
        sim_dw_dnv_##SFX(nt, ci, ip, wp, wci, xsp, g, o, os, c,                \
                         n - c < (VL) ? n - c : (VL), 4);                      \
    }                                                                          \
  }                                                                            \
                                                                               \
  ATTR static void sim_dw_row_##SFX(                                           \
      char *const *accp, int64_t nr, int64_t as, int64_t n, const char *Lp,    \
      int64_t nro, const int64_t *roff, int64_t KX, const sim_dw_col *cols,    \
      int64_t ts, const char *wp, const int64_t *woff, int vec) {              \
    const T *L = (const T *)(const void *)Lp;                                  \
    const T *W = (const T *)(const void *)wp;                                  \
    if (vec) { /* a vector of results of each row, every tap in turn */        \
      T *a[SIM_DW_ROWS];                                                       \
      for (int64_t u = 0; u < SIM_DW_ROWS; u++)                                \
        a[u] = (T *)(void *)accp[u < nr ? u : 0];                              \
      for (int64_t i0 = 0; i0 < n; i0 += (VL)) {                               \
        int64_t r = n - i0 < (VL) ? n - i0 : (VL);                             \
        V a0 = VZERO, a1 = VZERO, a2 = VZERO, a3 = VZERO;                      \
        for (int64_t ro = 0; ro < nro; ro++) {                                 \
          const int64_t *wo = woff + ro * KX;                                  \
          for (int64_t kx = 0; kx < KX; kx++) {                                \
            const sim_dw_col *q = cols + kx;                                   \
            int64_t la = q->lo - i0, le = q->hi - i0, d = i0 - q->lo;          \
            int mode = le <= la ? 0 : q->xs == 2 ? 4 : q->xs != 1 ? 3          \
                       : la <= 0 && le >= (VL) ? 1 : 2;                        \
            MT m = MK(la, le);                                                 \
            V wv = VSET1(W[wo[kx]]);                                           \
            SIM_DW_ROWX(a0, 0, T, V, VZERO, VLD, MLD, MGS, MS2, VFMA)          \
            if (nr > 1)                                                        \
              SIM_DW_ROWX(a1, 1, T, V, VZERO, VLD, MLD, MGS, MS2, VFMA)        \
            if (nr > 2)                                                        \
              SIM_DW_ROWX(a2, 2, T, V, VZERO, VLD, MLD, MGS, MS2, VFMA)        \
            if (nr > 3)                                                        \
              SIM_DW_ROWX(a3, 3, T, V, VZERO, VLD, MLD, MGS, MS2, VFMA)        \
          }                                                                    \
        }                                                                      \
        if (r == (VL)) {                                                       \
          VST(a[0] + i0, a0);                                                  \
          if (nr > 1) VST(a[1] + i0, a1);                                      \
          if (nr > 2) VST(a[2] + i0, a2);                                      \
          if (nr > 3) VST(a[3] + i0, a3);                                      \
        } else {                                                               \
          MST(a[0] + i0, a0, r);                                               \
          if (nr > 1) MST(a[1] + i0, a1, r);                                   \
          if (nr > 2) MST(a[2] + i0, a2, r);                                   \
          if (nr > 3) MST(a[3] + i0, a3, r);                                   \
        }                                                                      \
      }                                                                        \
      return;                                                                  \
    }                                                                          \
    for (int64_t u = 0; u < nr; u++) { /* one result at a time */              \
      T *acc = (T *)(void *)accp[u];                                           \
      const int64_t *rf = roff + u * nro;                                      \
      for (int64_t i = 0; i < n; i++) {                                        \
        T s = (T)0;                                                            \
        for (int64_t ro = 0; ro < nro; ro++)                                   \
          for (int64_t kx = 0; kx < KX; kx++) {                                \
            const sim_dw_col *q = cols + kx;                                   \
            T v = (T)0;                                                        \
            if (rf[ro] < 0) {                                                  \
            } else if (q->tab) {                                               \
              int64_t t = q->tab[i * ts];                                      \
              if (t >= 0) v = L[rf[ro] + t];                                   \
            } else if (i >= q->lo && i < q->hi) {                              \
              v = L[rf[ro] + q->x0 + (i - q->lo) * q->xs];                     \
            }                                                                  \
            s = SFMA(v, W[woff[ro * KX + kx]], s);                             \
          }                                                                    \
        acc[i * as] = s;                                                       \
      }                                                                        \
    }                                                                          \
  }

/* ---- portable: separate multiply and add (as the portable GEMM) ---- */

#define SIM_DW_MAC(x, w, a) ((x) * (w) + (a))
/* Masks as lane ranges; masked loads through an array. */
typedef struct sim_dw_pm {
  int64_t a, e;
} sim_dw_pm;
static inline sim_dw_pm sim_dw_pmk(int64_t a, int64_t e) {
  sim_dw_pm m = {a, e};
  return m;
}
#define SIM_DW_PMLD(T, VL, v, p, m, IDX)                                       \
  do {                                                                         \
    T t_[VL];                                                                  \
    for (int64_t l_ = 0; l_ < (VL); l_++)                                      \
      t_[l_] = l_ >= (m).a && l_ < (m).e ? (p)[IDX] : (T)0;                    \
    memcpy(&(v), t_, sizeof(v));                                               \
  } while (0)
#define SIM_DW_PMST(p, v, r) memcpy((p), &(v), sizeof(*(p)) * (size_t)(r))
#if defined(__GNUC__) || defined(__clang__)
/* GCC/clang vector extensions: one 16-byte register (SSE2, NEON). */
typedef float sim_dw_vf __attribute__((vector_size(16)));
typedef double sim_dw_vd __attribute__((vector_size(16)));
static inline sim_dw_vf sim_dw_ldf(const float *p) {
  sim_dw_vf v;
  memcpy(&v, p, sizeof v);
  return v;
}
static inline sim_dw_vd sim_dw_ldd(const double *p) {
  sim_dw_vd v;
  memcpy(&v, p, sizeof v);
  return v;
}
#define SIM_DW_STV(p, v) memcpy((p), &(v), sizeof(v))
#define SIM_DW_VZF ((sim_dw_vf){0})
#define SIM_DW_VZD ((sim_dw_vd){0})
#define SIM_DW_SETF(s) ((sim_dw_vf){0} + (s))
#define SIM_DW_SETD(s) ((sim_dw_vd){0} + (s))
#define SIM_DW_PF 4
#define SIM_DW_PD 2
#else
/* Other compilers: one element is a vector. */
typedef float sim_dw_vf;
typedef double sim_dw_vd;
#define sim_dw_ldf(p) (*(p))
#define sim_dw_ldd(p) (*(p))
#define SIM_DW_STV(p, v) (*(p) = (v))
#define SIM_DW_VZF 0.0f
#define SIM_DW_VZD 0.0
#define SIM_DW_SETF(s) (s)
#define SIM_DW_SETD(s) (s)
#define SIM_DW_PF 1
#define SIM_DW_PD 1
#endif
#define SIM_DW_MLDF(v, p, m) SIM_DW_PMLD(float, SIM_DW_PF, v, p, m, l_)
#define SIM_DW_MLDD(v, p, m) SIM_DW_PMLD(double, SIM_DW_PD, v, p, m, l_)
#define SIM_DW_MS2F(v, p, a, e)                                                \
  SIM_DW_PMLD(float, SIM_DW_PF, v, p, sim_dw_pmk((a), (e)), 2 * l_)
#define SIM_DW_MS2D(v, p, a, e)                                                \
  SIM_DW_PMLD(double, SIM_DW_PD, v, p, sim_dw_pmk((a), (e)), 2 * l_)
#define SIM_DW_MGSF(v, p, m, d, xs)                                            \
  SIM_DW_PMLD(float, SIM_DW_PF, v, p, m, ((d) + l_) * (xs))
#define SIM_DW_MGSD(v, p, m, d, xs)                                            \
  SIM_DW_PMLD(double, SIM_DW_PD, v, p, m, ((d) + l_) * (xs))
SIM_DW_KERNELS(f32_port, float, , sim_dw_vf, SIM_DW_PF, SIM_DW_VZF,
               sim_dw_ldf, SIM_DW_STV, SIM_DW_SETF, SIM_DW_MAC, SIM_DW_MAC,
               sim_dw_pm, sim_dw_pmk, SIM_DW_MLDF, SIM_DW_MGSF, SIM_DW_MS2F,
               SIM_DW_PMST)
SIM_DW_KERNELS(f64_port, double, , sim_dw_vd, SIM_DW_PD, SIM_DW_VZD,
               sim_dw_ldd, SIM_DW_STV, SIM_DW_SETD, SIM_DW_MAC, SIM_DW_MAC,
               sim_dw_pm, sim_dw_pmk, SIM_DW_MLDD, SIM_DW_MGSD, SIM_DW_MS2D,
               SIM_DW_PMST)
#undef SIM_DW_MAC
#undef SIM_DW_PMLD
#undef SIM_DW_PMST
#undef SIM_DW_STV
#undef SIM_DW_VZF
#undef SIM_DW_VZD
#undef SIM_DW_SETF
#undef SIM_DW_SETD
#undef SIM_DW_PF
#undef SIM_DW_PD
#undef SIM_DW_MLDF
#undef SIM_DW_MLDD
#undef SIM_DW_MGSF
#undef SIM_DW_MGSD
#undef SIM_DW_MS2F
#undef SIM_DW_MS2D
#if !defined(__GNUC__) && !defined(__clang__)
#undef sim_dw_ldf
#undef sim_dw_ldd
#endif

#if SIM_DW_X86
/* ---- AVX2 and AVX-512: fused multiply-adds (as their GEMM kernels) ---- */

#define SIM_DW_T2 __attribute__((target("avx2,fma")))
#define SIM_DW_T5 __attribute__((target("avx512f")))
#define SIM_DW_FMAF(x, w, a) __builtin_fmaf((x), (w), (a))
#define SIM_DW_FMAD(x, w, a) __builtin_fma((x), (w), (a))

/* Lane masks of [a, e) (clamped to the vector) and gather indices
 * (d + l) * xs. */
SIM_DW_T5 static inline __mmask16 sim_dw_m16(int64_t a, int64_t e) {
  a = a < 0 ? 0 : a > 16 ? 16 : a;
  e = e < 0 ? 0 : e > 16 ? 16 : e;
  return (__mmask16)(((1u << e) - 1) & ~((1u << a) - 1));
}
SIM_DW_T5 static inline __mmask8 sim_dw_m8(int64_t a, int64_t e) {
  return (__mmask8)sim_dw_m16(a, e > 8 ? 8 : e);
}
SIM_DW_T2 static inline __m256i sim_dw_m8x32(int64_t a, int64_t e) {
  a = a < 0 ? 0 : a > 8 ? 8 : a;
  e = e < 0 ? 0 : e > 8 ? 8 : e;
  __m256i l = _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7);
  return _mm256_andnot_si256(_mm256_cmpgt_epi32(_mm256_set1_epi32((int)a), l),
                             _mm256_cmpgt_epi32(_mm256_set1_epi32((int)e), l));
}
SIM_DW_T2 static inline __m256i sim_dw_m4x64(int64_t a, int64_t e) {
  a = a < 0 ? 0 : a > 4 ? 4 : a;
  e = e < 0 ? 0 : e > 4 ? 4 : e;
  __m256i l = _mm256_setr_epi64x(0, 1, 2, 3);
  return _mm256_andnot_si256(_mm256_cmpgt_epi64(_mm256_set1_epi64x(a), l),
                             _mm256_cmpgt_epi64(_mm256_set1_epi64x(e), l));
}
SIM_DW_T5 static inline __m512i sim_dw_ix16(int64_t d, int64_t xs) {
  __m512i l = _mm512_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13,
                                14, 15);
  return _mm512_mullo_epi32(_mm512_add_epi32(_mm512_set1_epi32((int)d), l),
                            _mm512_set1_epi32((int)xs));
}
SIM_DW_T2 static inline __m256i sim_dw_ix8(int64_t d, int64_t xs) {
  __m256i l = _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7);
  return _mm256_mullo_epi32(_mm256_add_epi32(_mm256_set1_epi32((int)d), l),
                            _mm256_set1_epi32((int)xs));
}
SIM_DW_T2 static inline __m128i sim_dw_ix4(int64_t d, int64_t xs) {
  __m128i l = _mm_setr_epi32(0, 1, 2, 3);
  return _mm_mullo_epi32(_mm_add_epi32(_mm_set1_epi32((int)d), l),
                         _mm_set1_epi32((int)xs));
}

/* Even elements of the 2 VL from p whose lanes l lie in [a, e): the
 * elements [2 a, 2 e - 1) of two masked loads, then shuffled. */
SIM_DW_T5 static inline uint32_t sim_dw_m32(int64_t a, int64_t e) {
  a = a < 0 ? 0 : a > 32 ? 32 : a;
  e = e < 0 ? 0 : e > 32 ? 32 : e;
  return (uint32_t)((((uint64_t)1 << e) - 1) & ~(((uint64_t)1 << a) - 1));
}
SIM_DW_T5 static inline __m512 sim_dw_s2_5f(const float *p, int64_t a,
                                            int64_t e) {
  uint32_t m = sim_dw_m32(2 * a, 2 * e - 1);
  __m512 lo = _mm512_maskz_loadu_ps((__mmask16)m, p);
  __m512 hi = _mm512_maskz_loadu_ps((__mmask16)(m >> 16), p + 16);
  __m512i ev = _mm512_setr_epi32(0, 2, 4, 6, 8, 10, 12, 14, 16, 18, 20, 22,
                                 24, 26, 28, 30);
  return _mm512_permutex2var_ps(lo, ev, hi);
}
SIM_DW_T5 static inline __m512d sim_dw_s2_5d(const double *p, int64_t a,
                                             int64_t e) {
  uint32_t m = sim_dw_m32(2 * a, 2 * e - 1);
  __m512d lo = _mm512_maskz_loadu_pd((__mmask8)m, p);
  __m512d hi = _mm512_maskz_loadu_pd((__mmask8)(m >> 8), p + 8);
  __m512i ev = _mm512_setr_epi64(0, 2, 4, 6, 8, 10, 12, 14);
  return _mm512_permutex2var_pd(lo, ev, hi);
}
SIM_DW_T2 static inline __m256 sim_dw_s2_2f(const float *p, int64_t a,
                                            int64_t e) {
  __m256 lo = _mm256_maskload_ps(p, sim_dw_m8x32(2 * a, 2 * e - 1));
  __m256 hi = _mm256_maskload_ps(p + 8, sim_dw_m8x32(2 * a - 8, 2 * e - 9));
  __m256 ev = _mm256_shuffle_ps(lo, hi, 0x88); /* lo0 lo2 hi0 hi2 | 4 6 */
  return _mm256_castpd_ps(_mm256_permute4x64_pd(_mm256_castps_pd(ev), 0xd8));
}
SIM_DW_T2 static inline __m256d sim_dw_s2_2d(const double *p, int64_t a,
                                             int64_t e) {
  __m256d lo = _mm256_maskload_pd(p, sim_dw_m4x64(2 * a, 2 * e - 1));
  __m256d hi = _mm256_maskload_pd(p + 4, sim_dw_m4x64(2 * a - 4, 2 * e - 5));
  return _mm256_permute4x64_pd(_mm256_unpacklo_pd(lo, hi), 0xd8);
}
#define SIM_DW_MS2_2F(v, p, a, e) ((v) = sim_dw_s2_2f((p), (a), (e)))
#define SIM_DW_MS2_2D(v, p, a, e) ((v) = sim_dw_s2_2d((p), (a), (e)))
#define SIM_DW_MS2_5F(v, p, a, e) ((v) = sim_dw_s2_5f((p), (a), (e)))
#define SIM_DW_MS2_5D(v, p, a, e) ((v) = sim_dw_s2_5d((p), (a), (e)))

#define SIM_DW_MLD2F(v, p, m) ((v) = _mm256_maskload_ps((p), (m)))
#define SIM_DW_MLD2D(v, p, m) ((v) = _mm256_maskload_pd((p), (m)))
#define SIM_DW_MGS2F(v, p, m, d, xs)                                           \
  ((v) = _mm256_mask_i32gather_ps(_mm256_setzero_ps(), (p),                    \
                                  sim_dw_ix8((d), (xs)),                       \
                                  _mm256_castsi256_ps(m), 4))
#define SIM_DW_MGS2D(v, p, m, d, xs)                                           \
  ((v) = _mm256_mask_i32gather_pd(_mm256_setzero_pd(), (p),                    \
                                  sim_dw_ix4((d), (xs)),                       \
                                  _mm256_castsi256_pd(m), 8))
#define SIM_DW_MST2F(p, v, r) _mm256_maskstore_ps((p), sim_dw_m8x32(0, r), (v))
#define SIM_DW_MST2D(p, v, r) _mm256_maskstore_pd((p), sim_dw_m4x64(0, r), (v))
#define SIM_DW_MLD5F(v, p, m) ((v) = _mm512_maskz_loadu_ps((m), (p)))
#define SIM_DW_MLD5D(v, p, m) ((v) = _mm512_maskz_loadu_pd((m), (p)))
#define SIM_DW_MGS5F(v, p, m, d, xs)                                           \
  ((v) = _mm512_mask_i32gather_ps(_mm512_setzero_ps(), (m),                    \
                                  sim_dw_ix16((d), (xs)), (p), 4))
#define SIM_DW_MGS5D(v, p, m, d, xs)                                           \
  ((v) = _mm512_mask_i32gather_pd(_mm512_setzero_pd(), (m),                    \
                                  sim_dw_ix8((d), (xs)), (p), 8))
#define SIM_DW_MST5F(p, v, r) _mm512_mask_storeu_ps((p), sim_dw_m16(0, r), (v))
#define SIM_DW_MST5D(p, v, r) _mm512_mask_storeu_pd((p), sim_dw_m8(0, r), (v))

SIM_DW_KERNELS(f32_avx2, float, SIM_DW_T2, __m256, 8, _mm256_setzero_ps(),
               _mm256_loadu_ps, _mm256_storeu_ps, _mm256_set1_ps,
               _mm256_fmadd_ps, SIM_DW_FMAF, __m256i, sim_dw_m8x32,
               SIM_DW_MLD2F, SIM_DW_MGS2F, SIM_DW_MS2_2F, SIM_DW_MST2F)
SIM_DW_KERNELS(f64_avx2, double, SIM_DW_T2, __m256d, 4, _mm256_setzero_pd(),
               _mm256_loadu_pd, _mm256_storeu_pd, _mm256_set1_pd,
               _mm256_fmadd_pd, SIM_DW_FMAD, __m256i, sim_dw_m4x64,
               SIM_DW_MLD2D, SIM_DW_MGS2D, SIM_DW_MS2_2D, SIM_DW_MST2D)
SIM_DW_KERNELS(f32_avx512, float, SIM_DW_T5, __m512, 16,
               _mm512_setzero_ps(), _mm512_loadu_ps, _mm512_storeu_ps,
               _mm512_set1_ps, _mm512_fmadd_ps, SIM_DW_FMAF, __mmask16,
               sim_dw_m16, SIM_DW_MLD5F, SIM_DW_MGS5F, SIM_DW_MS2_5F,
               SIM_DW_MST5F)
#ifdef SIM_HAVE_POST512
/* ch4 on f32 with the epilogue in registers (sim_dw_run.post) */
#define SIM_DW_PP , const sim_gpost *po
#define SIM_DW_POST2(c)                                                        \
  sim_gpost_cols4(po, (c), 0xFFFF, &a0, &a1, &a2, &a3);                        \
  sim_gpost_cols4(po, (c) + 16, 0xFFFF, &b0, &b1, &b2, &b3);
#define SIM_DW_POSTM(c, m) sim_gpost_cols4(po, (c), (m), &a0, &a1, &a2, &a3);
SIM_DW_CH4(sim_dw_ch4p_f32_avx512, float, SIM_DW_T5, __m512, 16,
           _mm512_setzero_ps(), _mm512_loadu_ps, _mm512_storeu_ps,
           _mm512_fmadd_ps, __mmask16, sim_dw_m16, SIM_DW_MLD5F, SIM_DW_MST5F,
           SIM_DW_PP, SIM_DW_POST2, SIM_DW_POSTM)
#undef SIM_DW_PP
#undef SIM_DW_POST2
#undef SIM_DW_POSTM

/* dn4 on f32 with the epilogue in registers: NV vectors of results (the
 * last one masked: zero weights, not stored) of P positions (4, or 8: two
 * groups when the results are one vector, as dn4), the multiply-adds of
 * dn4, then the epilogue on each vector of four positions
 * (sim_gpost_cols4) before the stores.  A first layer on RGB with its
 * batch norm and ReLU: the group's own loop over the result was a tenth
 * of the time.  Unrolled: else a[][] lives in memory. */
SIM_DW_T5 static inline __attribute__((always_inline)) void
sim_dw_dn4p_blk(int64_t nt, int64_t ci, const char *const *ip,
                const char *const *wp, int64_t wci, const int64_t *xsp,
                int64_t g, float *o, int64_t os, int64_t c, int64_t n,
                const sim_gpost *po, const int NV, const int P) {
  __mmask16 m[4];
  __m512 a[4][8]; /* [vector][position] */
  _Pragma("GCC unroll 4") for (int k = 0; k < NV; k++) {
    m[k] = sim_dw_m16(0, n - c - 16 * k);
    _Pragma("GCC unroll 8") for (int u = 0; u < P; u++)
      a[k][u] = _mm512_setzero_ps();
  }
  for (int64_t t = 0; t < nt; t++) {
    const int64_t xs = xsp[t];
    const float *x = (const float *)(const void *)ip[t] + g * 4 * xs;
    const float *w = (const float *)(const void *)wp[t] + c;
    for (int64_t i = 0; i < ci; i++, w += wci) {
      __m512 wv[4];
      _Pragma("GCC unroll 4") for (int k = 0; k < NV; k++)
        wv[k] = _mm512_maskz_loadu_ps(m[k], w + 16 * k);
      _Pragma("GCC unroll 8") for (int u = 0; u < P; u++) {
        __m512 xv = _mm512_set1_ps(x[u * xs + i]);
        _Pragma("GCC unroll 4") for (int k = 0; k < NV; k++)
          a[k][u] = _mm512_fmadd_ps(xv, wv[k], a[k][u]);
      }
    }
  }
  _Pragma("GCC unroll 4") for (int k = 0; k < NV; k++) {
    _Pragma("GCC unroll 2") for (int u = 0; u < P; u += 4)
      sim_gpost_cols4(po, c + 16 * k, m[k], &a[k][u], &a[k][u + 1],
                      &a[k][u + 2], &a[k][u + 3]);
    _Pragma("GCC unroll 8") for (int u = 0; u < P; u++)
      _mm512_mask_storeu_ps(o + u * os + c + 16 * k, m[k], a[k][u]);
  }
}

SIM_DW_T5 static void sim_dw_dn4p_f32_avx512(
    int64_t nt, int64_t ci, const char *const *ip, const char *const *wp,
    int64_t wci, const int64_t *xsp, int64_t ng, void *op, int64_t os,
    int64_t n, const sim_gpost *po) {
  for (int64_t g = 0; g < ng; g++) {
    float *o = (float *)op + g * 4 * os;
    if (n <= 16 && g + 1 < ng) { /* eight positions: two groups */
      sim_dw_dn4p_blk(nt, ci, ip, wp, wci, xsp, g, o, os, 0, n, po, 1, 8);
      g++;
      continue;
    }
    for (int64_t c = 0; c < n; c += 64) {
      int64_t rem = n - c;
      if (rem > 48)
        sim_dw_dn4p_blk(nt, ci, ip, wp, wci, xsp, g, o, os, c, n, po, 4, 4);
      else if (rem > 32)
        sim_dw_dn4p_blk(nt, ci, ip, wp, wci, xsp, g, o, os, c, n, po, 3, 4);
      else if (rem > 16)
        sim_dw_dn4p_blk(nt, ci, ip, wp, wci, xsp, g, o, os, c, n, po, 2, 4);
      else
        sim_dw_dn4p_blk(nt, ci, ip, wp, wci, xsp, g, o, os, c, n, po, 1, 4);
    }
  }
}
#endif
SIM_DW_KERNELS(f64_avx512, double, SIM_DW_T5, __m512d, 8,
               _mm512_setzero_pd(), _mm512_loadu_pd, _mm512_storeu_pd,
               _mm512_set1_pd, _mm512_fmadd_pd, SIM_DW_FMAD, __mmask8,
               sim_dw_m8, SIM_DW_MLD5D, SIM_DW_MGS5D, SIM_DW_MS2_5D,
               SIM_DW_MST5D)
#undef SIM_DW_T2
#undef SIM_DW_T5
#undef SIM_DW_FMAF
#undef SIM_DW_FMAD
#undef SIM_DW_MLD2F
#undef SIM_DW_MLD2D
#undef SIM_DW_MGS2F
#undef SIM_DW_MGS2D
#undef SIM_DW_MST2F
#undef SIM_DW_MST2D
#undef SIM_DW_MLD5F
#undef SIM_DW_MLD5D
#undef SIM_DW_MGS5F
#undef SIM_DW_MGS5D
#undef SIM_DW_MST5F
#undef SIM_DW_MST5D
#undef SIM_DW_MS2_2F
#undef SIM_DW_MS2_2D
#undef SIM_DW_MS2_5F
#undef SIM_DW_MS2_5D
#endif
#undef SIM_DW_KERNELS
#undef SIM_DW_CH4
#undef SIM_DW_NOPP
#undef SIM_DW_NOPOST2
#undef SIM_DW_NOPOSTM
#undef SIM_DW_DN4Q
#undef SIM_DW_DN4S
#undef SIM_DW_DNW
#undef SIM_DW_ST4X2
#undef SIM_DW_ROWX

/* [f64][portable, AVX2, AVX-512] */
static const sim_dw_k sim_dw_ks[2][3] = {
    {{sim_dw_ch_f32_port, sim_dw_ch4_f32_port, sim_dw_dn_f32_port,
      sim_dw_dn4_f32_port, sim_dw_row_f32_port},
#if SIM_DW_X86
     {sim_dw_ch_f32_avx2, sim_dw_ch4_f32_avx2, sim_dw_dn_f32_avx2,
      sim_dw_dn4_f32_avx2, sim_dw_row_f32_avx2},
     {sim_dw_ch_f32_avx512, sim_dw_ch4_f32_avx512, sim_dw_dn_f32_avx512,
      sim_dw_dn4_f32_avx512, sim_dw_row_f32_avx512}},
#else
     {NULL, NULL, NULL, NULL, NULL},
     {NULL, NULL, NULL, NULL, NULL}},
#endif
    {{sim_dw_ch_f64_port, sim_dw_ch4_f64_port, sim_dw_dn_f64_port,
      sim_dw_dn4_f64_port, sim_dw_row_f64_port},
#if SIM_DW_X86
     {sim_dw_ch_f64_avx2, sim_dw_ch4_f64_avx2, sim_dw_dn_f64_avx2,
      sim_dw_dn4_f64_avx2, sim_dw_row_f64_avx2},
     {sim_dw_ch_f64_avx512, sim_dw_ch4_f64_avx512, sim_dw_dn_f64_avx512,
      sim_dw_dn4_f64_avx512, sim_dw_row_f64_avx512}},
#else
     {NULL, NULL, NULL, NULL, NULL},
     {NULL, NULL, NULL, NULL, NULL}},
#endif
};

/* ---- the plan ---- */

typedef struct sim_dw {
  const sim_conv *c;
  sim_dw_k k;
  size_t es;
  int rows;            /* 1: the row nest, 0: the features-inner one */
  int64_t cin;         /* one group of this many input features (dn, dn4):
                          C = 1, mult = O; else 0 (depthwise) */
  int64_t C, mult;     /* input features (groups), results per feature */
  int64_t Wn, P;       /* window positions, result positions per batch */
  const int64_t *woff; /* per window position: sum_d k_d * rsp[d] */
  const char *zero;    /* C zeros (features-inner: padding reads them) */
  int32_t wtmp;        /* features-inner: weights as [j][t][c], or -1 */
  /* Row nest: the last spatial dimension's window positions, vec (see
   * sim_dw_k.row), results per row of all but the last, window rows. */
  const sim_dw_col *cols;
  int vec;
  int64_t PO, nro;
  /* Features-inner with one weight row per feature and contiguous
   * results: the last dimension's positions [ilo, ihi) read every window
   * position inside lhs, ixs elements further each position (else
   * ilo = ihi = 0). */
  int64_t ilo, ihi, ixs;
  int64_t n, grain;    /* parallel items and their grain */
} sim_dw;

typedef struct sim_dw_run {
  const sim_dw *w;
  const char *L, *R, *W; /* W: the weights as [j][t][c] (features-inner) */
  char *O;
  const sim_gpost *post; /* an epilogue on the results (sim_dw_post_ok) */
} sim_dw_run;

/* The epilogue r->post on np positions of n results from o, os elements
 * apart (those that are not done in registers). */
static void sim_dw_post_rows(const sim_dw_run *r, char *o, int64_t os,
                             int64_t np, int64_t n) {
#ifdef SIM_HAVE_POST512
  sim_gpost_region(r->post, (float *)(void *)o, os, 0, np, 0, n);
#else
  (void)r, (void)o, (void)os, (void)np, (void)n;
#endif
}

/* Window position t's weight row for multiplier j (features-inner). */
static const char *sim_dw_wrow(const sim_dw_run *r, int64_t j, int64_t t) {
  const sim_dw *w = r->w;
  return r->W ? r->W + (size_t)((j * w->Wn + t) * w->C) * w->es
              : r->R + (size_t)w->woff[t] * w->es;
}

/* One result position's window: ip[t] its lhs elements (or the row of
 * zeros) for last-dimension position ox of the row whose window rows start
 * at rows[] (-1: padding) and the last dimension's table tl (NULL: no
 * spatial dimensions). */
static void sim_dw_taps(const sim_dw_run *r, const int64_t *rows, int64_t nro,
                        int64_t KX, const int64_t *tl, int64_t ox,
                        const char **ip) {
  const sim_dw *w = r->w;
  for (int64_t i = 0, t = 0; i < nro; i++)
    for (int64_t kx = 0; kx < KX; kx++, t++) {
      int64_t v = tl ? tl[ox * KX + kx] : 0;
      ip[t] = rows[i] >= 0 && v >= 0 ? r->L + (size_t)(rows[i] + v) * w->es
                                     : w->zero;
    }
}

/* The results of one position (ob: its first) from its window ip. */
static void sim_dw_position(const sim_dw_run *r, const char *const *ip,
                            const char **wp, int64_t ob) {
  const sim_dw *w = r->w;
  const sim_conv *c = w->c;
  const size_t es = w->es;
  const int64_t C = w->C, Wn = w->Wn, ostr = c->of * w->mult;
  _Alignas(64) char buf[SIM_DW_CB * sizeof(double)];
  if (w->cin) {
    w->k.dn(Wn, w->cin, ip, wp, c->rif, r->O + (size_t)ob * es, c->O);
    if (r->post) sim_dw_post_rows(r, r->O + (size_t)ob * es, c->O, 1, c->O);
    return;
  }
  for (int64_t j = 0; j < w->mult; j++) {
    char *o = r->O + (size_t)(ob + j * c->of) * es;
    if (w->mult > 1)
      for (int64_t u = 0; u < Wn; u++) wp[u] = sim_dw_wrow(r, j, u);
    if (ostr == 1) {
      w->k.ch(Wn, ip, wp, 0, o, C);
      if (r->post) sim_dw_post_rows(r, o, C, 1, C);
      continue;
    }
    for (int64_t c0 = 0; c0 < C; c0 += SIM_DW_CB) { /* strided result */
      int64_t nc = C - c0 < SIM_DW_CB ? C - c0 : SIM_DW_CB;
      w->k.ch(Wn, ip, wp, c0, buf, nc);
      for (int64_t i = 0; i < nc; i++)
        memcpy(o + (size_t)((c0 + i) * ostr) * es, buf + (size_t)i * es, es);
    }
  }
}

/* One group's window (dn4) as fewer, longer taps: when each row of the
 * window (KX taps) reads KX * cin consecutive lhs elements with
 * consecutive weight rows (NHWC, HWIO, no padding: a 7x7 stem's rows of
 * 21 features), its taps become one of KX * cin features, so the kernel's
 * per-tap work (pointers, a loop of 3) happens 7 times, not 49.  The
 * same multiply-adds in the same order: the same sums.  Returns the
 * taps' count (0: not so). */
static int64_t sim_dw_rows_as_taps(const sim_dw_run *r, const char *const *ip,
                                   const char *const *wp, const int64_t *xs,
                                   int64_t KX, const char **ip2,
                                   const char **wp2, int64_t *xs2) {
  const sim_dw *w = r->w;
  const size_t xstep = (size_t)w->cin * w->es;
  const size_t wstep = (size_t)(w->cin * w->c->rif) * w->es;
  int64_t n = 0;
  if (KX < 2 || w->Wn % KX) return 0;
  for (int64_t t = 0; t < w->Wn; t += KX, n++) {
    for (int64_t j = 1; j < KX; j++)
      if (ip[t + j] == w->zero || ip[t + j] != ip[t] + j * xstep ||
          wp[t + j] != wp[t] + j * wstep || xs[t + j] != xs[t])
        return 0;
    if (ip[t] == w->zero) return 0;
    ip2[n] = ip[t], wp2[n] = wp[t], xs2[n] = xs[t];
  }
  return n;
}

/* SIM_DW_RUN * ng positions along the last dimension from the one whose
 * window is ip (xs: each window position's step) and whose results start
 * at element ob. */
static void sim_dw_runs(const sim_dw_run *r, const char *const *ip,
                        const char *const *wp, const int64_t *xs, int64_t ng,
                        int64_t ob) {
  const sim_dw *w = r->w;
  const sim_conv *c = w->c;
  char *o = r->O + (size_t)ob * w->es;
  const int64_t os = c->osp[c->ns - 1];
  if (w->cin) {
    const char *ip2[SIM_DW_TAPS], *wp2[SIM_DW_TAPS];
    int64_t xs2[SIM_DW_TAPS], KX = c->ns ? c->K[c->ns - 1] : 1;
    int64_t nt = sim_dw_rows_as_taps(r, ip, wp, xs, KX, ip2, wp2, xs2);
    int64_t ci = nt ? w->cin * KX : w->cin;
    if (!nt) nt = w->Wn;
    else ip = ip2, wp = wp2, xs = xs2;
#ifdef SIM_HAVE_POST512
    if (r->post) {
      sim_dw_dn4p_f32_avx512(nt, ci, ip, wp, c->rif, xs, ng, o, os, c->O,
                             r->post);
      return;
    }
#endif
    w->k.dn4(nt, ci, ip, wp, c->rif, xs, ng, o, os, c->O);
    return;
  }
#ifdef SIM_HAVE_POST512
  if (r->post) {
    sim_dw_ch4p_f32_avx512(w->Wn, ip, wp, xs, ng, o, os, w->C, r->post);
    return;
  }
#endif
  w->k.ch4(w->Wn, ip, wp, xs, ng, o, os, w->C);
}

/* Features-inner nest: result positions [q0, q1) of batch * P, a row (all
 * positions but the last dimension's) at a time: the window rows once per
 * row, then the last dimension's interior (see sim_dw) SIM_DW_RUN
 * positions at once and the others one by one. */
static void sim_dw_ch_range(void *ctx, int64_t q0, int64_t q1) {
  const sim_dw_run *r = (const sim_dw_run *)ctx;
  const sim_dw *w = r->w;
  const sim_conv *c = w->c;
  const int32_t ns = c->ns, last = ns - 1;
  const int64_t Wn = w->Wn, KX = ns ? c->K[last] : 1, nro = Wn / KX;
  const int64_t OW = ns ? c->out[last] : 1, os = ns ? c->osp[last] : 0;
  const int64_t *tl = ns ? c->tab + c->toff[last] : NULL;
  const char *ip[SIM_DW_TAPS], *wp[SIM_DW_TAPS];
  int64_t rows[SIM_DW_TAPS], xs[SIM_DW_TAPS];
  int64_t p[XRT_MAX_RANK], k[XRT_MAX_RANK], b = q0 / w->P, rest = q0 % w->P;
  for (int32_t d = last; d >= 0; d--)
    p[d] = rest % c->out[d], rest /= c->out[d];
  if (w->mult == 1 || w->cin)
    for (int64_t t = 0; t < Wn; t++) wp[t] = sim_dw_wrow(r, 0, t);
  for (int64_t q = q0; q < q1;) {
    int64_t ob = b * c->ob, ox = ns ? p[last] : 0;
    for (int32_t d = 0; d < last; d++) ob += p[d] * c->osp[d], k[d] = 0;
    for (int64_t i = 0; i < nro; i++) { /* the window's lhs rows */
      int64_t off = b * c->lb;
      for (int32_t d = 0; d < last && off >= 0; d++) {
        int64_t v = c->tab[c->toff[d] + p[d] * c->K[d] + k[d]];
        off = v >= 0 ? off + v : -1;
      }
      rows[i] = off;
      if (last > 0) sim_la_next(k, c->K, last);
    }
    int64_t end = OW - ox < q1 - q ? OW : ox + (q1 - q);
    int64_t ie = w->ihi < end ? w->ihi : end;
    /* the last SIM_DW_RUN positions of the interior, when the runs from
     * its start leave a few: once more (the same values), from here on */
    int64_t tail = ie - SIM_DW_RUN >= w->ilo && ie - SIM_DW_RUN >= ox
                       ? ie - SIM_DW_RUN : -1;
    while (ox < end) {
      if (ox >= w->ilo && ie - ox >= SIM_DW_RUN) { /* the interior */
        sim_dw_taps(r, rows, nro, KX, tl, ox, ip);
        for (int64_t t = 0; t < Wn; t++) xs[t] = ip[t] == w->zero ? 0 : w->ixs;
        int64_t n = (ie - ox) / SIM_DW_RUN;
        sim_dw_runs(r, ip, wp, xs, n, ob + ox * os);
        ox += n * SIM_DW_RUN;
        if (ox < ie && tail >= 0) {
          sim_dw_taps(r, rows, nro, KX, tl, tail, ip);
          sim_dw_runs(r, ip, wp, xs, 1, ob + tail * os);
          ox = ie;
        }
        continue;
      }
      sim_dw_taps(r, rows, nro, KX, tl, ox, ip);
      sim_dw_position(r, ip, wp, ob + ox * os);
      ox++;
    }
    q += end - (ns ? p[last] : 0);
    if (ns) p[last] = end - 1;
    if (!sim_la_next(p, c->out, ns)) b++;
  }
}

/* Row nest: rows [r0, r1) of (batch, feature, multiplier, positions of all
 * but the last spatial dimension), up to SIM_DW_ROWS of one result feature
 * at a time. */
static void sim_dw_row_range(void *ctx, int64_t r0, int64_t r1) {
  const sim_dw_run *r = (const sim_dw_run *)ctx;
  const sim_dw *w = r->w;
  const sim_conv *c = w->c;
  const size_t es = w->es;
  const int32_t last = c->ns - 1;
  const int64_t OW = c->out[last], KX = c->K[last], nro = w->nro;
  int64_t roff[SIM_DW_ROWS * SIM_DW_TAPS], p[XRT_MAX_RANK], k[XRT_MAX_RANK];
  char *acc[SIM_DW_ROWS];
  int64_t rest = r0 % w->PO, q = r0 / w->PO;
  for (int32_t d = last - 1; d >= 0; d--)
    p[d] = rest % c->out[d], rest /= c->out[d];
  int64_t j = q % w->mult, f = q / w->mult % w->C, b = q / w->mult / w->C;
  for (int64_t row = r0; row < r1;) {
    int64_t o = f * w->mult + j, nr = 0;
    int more = 1; /* rows of this result feature follow */
    while (nr < SIM_DW_ROWS && row < r1 && more) {
      int64_t ob = b * c->ob + o * c->of, *rf = roff + nr * nro;
      for (int32_t d = 0; d < last; d++) ob += p[d] * c->osp[d], k[d] = 0;
      for (int64_t i = 0; i < nro; i++) { /* the window's lhs rows */
        int64_t off = 0;
        int valid = 1;
        for (int32_t d = 0; d < last; d++) {
          int64_t v = c->tab[c->toff[d] + p[d] * c->K[d] + k[d]];
          valid &= v >= 0;
          off += v;
        }
        rf[i] = valid ? off : -1;
        sim_la_next(k, c->K, last);
      }
      acc[nr++] = r->O + (size_t)ob * es;
      row++;
      more = sim_la_next(p, c->out, last);
    }
    w->k.row(acc, nr, c->osp[last], OW,
             r->L + (size_t)(b * c->lb + f * c->lf) * es, nro, roff, KX,
             w->cols, KX, r->R + (size_t)(o * c->rof) * es, w->woff, w->vec);
    if (!more && ++j == w->mult) {
      j = 0;
      if (++f == w->C) f = 0, b++;
    }
  }
}

static xrt_status sim_run_dw(const sim_step *st, void **vals, sim_cx *cx) {
  const sim_dw *w = (const sim_dw *)st->data;
  const sim_conv *c = w->c;
  sim_dw_run r = {w, (const char *)vals[st->in[0]],
                  (const char *)vals[st->in[1]], NULL,
                  (char *)vals[st->out[0]], NULL};
  if (w->wtmp >= 0) { /* weights as [j][t][c]: rows the kernel reads */
    char *wt = (char *)vals[w->wtmp];
    const size_t es = w->es;
    for (int64_t j = 0; j < w->mult; j++)
      for (int64_t t = 0; t < w->Wn; t++)
        for (int64_t f = 0; f < w->C; f++)
          memcpy(wt + (size_t)((j * w->Wn + t) * w->C + f) * es,
                 r.R + (size_t)((f * w->mult + j) * c->rof + w->woff[t]) * es,
                 es);
    r.W = wt;
  }
  sim_parallel_for(cx, w->n, w->grain,
                   w->rows ? sim_dw_row_range : sim_dw_ch_range, &r);
  return XRT_OK;
}

/* The row nest's columns (see sim_dw_col) from the last dimension's table:
 * a run when the valid results are contiguous and their offsets affine. */
static int sim_dw_cols(sim_fcc *fc, const sim_conv *c, sim_dw *w) {
  int32_t last = c->ns - 1;
  int64_t OW = c->out[last], KX = c->K[last];
  const int64_t *tx = c->tab + c->toff[last];
  sim_dw_col *cols = (sim_dw_col *)sim_palloc(fc, sizeof *cols * (size_t)KX);
  if (!cols) return 0;
  int vec = c->osp[last] == 1 && OW < (1 << 30);
  for (int64_t kx = 0; kx < KX; kx++) {
    int64_t a = 0, e, i;
    while (a < OW && tx[a * KX + kx] < 0) a++;
    for (e = a; e < OW && tx[e * KX + kx] >= 0; e++) {}
    int64_t s = e - a >= 2 ? tx[(a + 1) * KX + kx] - tx[a * KX + kx] : 1;
    int ok = 1;
    for (i = a; ok && i < e; i++)
      ok = tx[i * KX + kx] == tx[a * KX + kx] + (i - a) * s;
    for (i = e; ok && i < OW; i++) ok = tx[i * KX + kx] < 0;
    sim_dw_col *q = &cols[kx];
    q->lo = a, q->hi = e, q->xs = s, q->x0 = e > a ? tx[a * KX + kx] : 0;
    q->tab = ok ? NULL : tx + kx;
    /* gathers index (i - lo) * xs in 32 bits */
    vec &= ok && s > 0 && s < (1 << 30) / (OW + 1);
  }
  w->cols = cols, w->vec = vec;
  return 1;
}

/* w->ilo, ihi, ixs (see sim_dw) from the last dimension's table: the
 * first run of positions whose window positions are all inside lhs and
 * move by the same number of elements from one position to the next. */
static void sim_dw_interior(const sim_conv *c, sim_dw *w) {
  w->ilo = w->ihi = w->ixs = 0;
  if (c->ns < 1 || (w->mult != 1 && !w->cin) || c->of != 1) return;
  const int32_t last = c->ns - 1;
  const int64_t OW = c->out[last], KX = c->K[last];
  const int64_t *tx = c->tab + c->toff[last];
  int64_t a = 0, e, kx;
  for (; a < OW; a++) { /* the first position inside */
    for (kx = 0; kx < KX && tx[a * KX + kx] >= 0; kx++) {}
    if (kx == KX) break;
  }
  if (a + 1 >= OW) return;
  const int64_t xs = tx[(a + 1) * KX] - tx[a * KX];
  for (e = a + 1; e < OW; e++) {
    for (kx = 0; kx < KX && tx[e * KX + kx] >= 0 &&
                 tx[e * KX + kx] == tx[a * KX + kx] + (e - a) * xs;
         kx++) {}
    if (kx < KX) break;
  }
  w->ilo = a, w->ihi = e, w->ixs = xs;
}

/* Replaces a planned static-padding f32/f64 convolution with one input
 * feature per group by the depthwise kernels.  Returns 0 (leaving st
 * alone) when it is not one. */
SIM_PRIVATE int sim_conv_dw_lower(sim_fcc *fc, const sim_conv *c,
                                  sim_step *st, xrt_status *rc) {
  const sim_la_cvt *t = &c->cv;
  *rc = XRT_OK;
  /* One group of few input features, contiguous in lhs, the kernel and
   * the result (a first layer on RGB, NHWC / HWIO), or of few results (a
   * MobileNet 1x1 projection to 16 features, which would fill half of the
   * packed GEMM's 32-wide tiles): dn and dn4. */
  int dense = c->Cg >= 1 &&
              (c->Cg <= SIM_DW_DENSE ||
               (c->O <= SIM_DW_NARROW && c->Cg <= SIM_DW_NARROW_CI)) &&
              c->o_per_fgroup == c->O && c->lf == 1 && c->rof == 1 &&
              c->of == 1;
  if (!c->tab || (t->ct != XRT_F32 && t->ct != XRT_F64) || t->lt != t->ct ||
      t->rt != t->ct || t->ot != t->ct || t->onumel == 0 ||
      (c->Cg != 1 && !dense) || c->o_per_bgroup != c->O ||
      c->o_per_fgroup < 1)
    return 0;
  int64_t C = c->O / c->o_per_fgroup, Wn = 1, P = 1;
  for (int32_t d = 0; d < c->ns; d++) Wn *= c->K[d], P *= c->out[d];
  int rows = c->lf != 1;
  /* Otherwise a single group is an ordinary convolution (GEMM); an empty
   * window and very large ones stay with the other paths too. */
  if ((C < 2 && !dense) || Wn == 0 || (rows && c->ns == 0) ||
      (rows ? Wn / c->K[c->ns - 1] : Wn) > SIM_DW_TAPS)
    return 0;
  int isa = sim_gemm_isa(fc->cc), f64 = t->ct == XRT_F64;
  int64_t nz = dense ? c->Cg : C; /* a window position's lhs elements */
  sim_dw *w = (sim_dw *)sim_palloc(fc, sizeof *w);
  int64_t *woff = (int64_t *)sim_palloc(fc, sizeof *woff * (size_t)Wn);
  char *zero = (char *)sim_palloc(fc, (size_t)nz * t->cs);
  if (!w || !woff || !zero) return (*rc = XRT_RESOURCE_EXHAUSTED), 1;
  memset(zero, 0, (size_t)nz * t->cs);
  w->c = c;
  w->cin = dense ? c->Cg : 0;
  int ki = isa == 1 || isa == 2 ? isa : 0; /* -1 (GEMM off): portable */
  w->k = sim_dw_ks[f64][sim_dw_ks[f64][ki].ch ? ki : 0];
  w->es = t->cs;
  w->rows = rows;
  w->C = C, w->mult = c->o_per_fgroup, w->Wn = Wn, w->P = P;
  int64_t k[XRT_MAX_RANK] = {0};
  for (int64_t i = 0; i < Wn; i++) {
    woff[i] = 0;
    for (int32_t d = 0; d < c->ns; d++) woff[i] += k[d] * c->rsp[d];
    sim_la_next(k, c->K, c->ns);
  }
  w->woff = woff, w->zero = zero;
  w->wtmp = -1;
  /* Pieces of about 32K multiply-adds on the device's threads. */
  if (rows) {
    int64_t OW = c->out[c->ns - 1];
    w->PO = P / OW, w->nro = Wn / c->K[c->ns - 1];
    w->n = c->NB * c->O * w->PO;
    w->grain = 32768 / (Wn * OW) + 1;
    if (!sim_dw_cols(fc, c, w)) return (*rc = XRT_RESOURCE_EXHAUSTED), 1;
  } else {
    w->n = c->NB * P;
    w->grain = 32768 / (Wn * c->O * (dense ? c->Cg : 1)) + 1;
    sim_dw_interior(c, w);
    if (!dense && (c->rof != 1 || w->mult != 1)) {
      *rc = sim_temp(fc, (size_t)(Wn * c->O) * w->es, &w->wtmp);
      if (*rc) return 1;
    }
  }
  st->data = w;
  st->run = sim_run_dw;
  return 1;
}

/* ---- results by position, for a fused epilogue (fusion.c) ---- */

/* Whether st is a depthwise step of the features-inner nest without a
 * weight copy whose results are row-major with the features innermost,
 * so that positions [q0, q1) are one contiguous run of (q1 - q0) * O. */
SIM_PRIVATE int sim_dw_by_position(const sim_step *st, int64_t *O,
                                   int64_t *np) {
  if (st->run != sim_run_dw) return 0;
  const sim_dw *w = (const sim_dw *)st->data;
  const sim_conv *c = w->c;
  if (w->rows || w->wtmp >= 0 || c->of != 1) return 0;
  int64_t s = c->O;
  for (int32_t d = c->ns - 1; d >= 0; d--) {
    if (c->out[d] != 1 && c->osp[d] != s) return 0;
    s *= c->out[d];
  }
  if (c->NB > 1 && c->ob != s) return 0;
  *O = c->O;
  *np = c->NB * w->P;
  return 1;
}

/* Positions [q0, q1) of st (sim_dw_by_position) into o: position q's
 * results start at element (q - q0) * O; with the epilogue post (NULL:
 * none; else sim_dw_post_ok) applied to them. */
SIM_PRIVATE void sim_dw_positions(const sim_step *st, void **vals, int64_t q0,
                                  int64_t q1, void *o,
                                  const sim_gpost *post) {
  const sim_dw *w = (const sim_dw *)st->data;
  /* the kernels write position q at O + q * O elements */
  uintptr_t base = (uintptr_t)o - (uintptr_t)(q0 * w->c->O) * w->es;
  sim_dw_run r = {w, (const char *)vals[st->in[0]],
                  (const char *)vals[st->in[1]], NULL, (char *)base, post};
  sim_dw_ch_range(&r, q0, q1);
}

/* Whether st (sim_dw_by_position) can apply an epilogue of column vectors
 * and numbers to its results: f32 on AVX-512, a depthwise convolution of
 * one result per feature (sim_dw_ch4p_f32_avx512) or one group of few
 * features (sim_dw_dn4p_f32_avx512; its positions at the padding take it
 * after their stores). */
SIM_PRIVATE int sim_dw_post_ok(const sim_step *st) {
#ifdef SIM_HAVE_POST512
  int64_t O, np;
  if (!sim_dw_by_position(st, &O, &np)) return 0;
  const sim_dw *w = (const sim_dw *)st->data;
  return w->es == 4 &&
         (w->cin ? w->k.dn4 == sim_dw_dn4_f32_avx512
                 : w->mult == 1 && w->k.ch4 == sim_dw_ch4_f32_avx512);
#else
  (void)st;
  return 0;
#endif
}
