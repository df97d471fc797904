/*
 * src/sim/skinny.c - skinny f32 products: a few rows against weights.
 * Part of the simulated device; MIT licensed, see LICENSE.
 */
#include "internal.h"
#if SIM_X86
#include <immintrin.h>
#endif
/* ======================================================================
 * Skinny products
 *
 * A dot_general whose lhs has a few rows (M <= SIM_SK_MAXM: one token of a
 * decoder, the batch of an LSTM step) and whose operands both keep the
 * contracted dimension innermost (x @ W^T, as JAX writes dense layers
 * with contracting_dims = [1] x [1]) costs the packed GEMM more to pack
 * the weights than to multiply them.  Here every result is a dot product
 * of two contiguous rows, read in place: sixteen lanes of partial sums
 * over k (lane j takes k = j mod 16), added pairwise in a fixed tree, then
 * the k % 16 leftover products in order.  That is one fixed order for
 * every instruction set (portable, AVX2 and AVX-512 builds of the same
 * vector code, no FMA contraction), but not the GEMM's, so results may
 * differ from the packed path's in the last bits, as XLA's dot emitters'
 * do.  Tiles of four lhs rows by two weight rows share their loads; the
 * AVX-512 build adds the lanes of all eight sums with shuffles, in the
 * same tree.  Weights laid out the other way (x @ W, W [K, N] with N
 * innermost) are streamed row after row, each result summed over k in
 * order (below; big weights in parts of rows, each part's sums then added
 * in order).  Work is cut into (part, column chunk, batch) items, the
 * batches of a chunk next to each other, shared by the device's threads.
 * ==================================================================== */

#define SIM_SK_MAXM 16 /* lhs rows, at most */
#define SIM_SK_MINK 32 /* contracted length, at least (rows in k) */
#define SIM_SK_MINN 64 /* results per row, at least (rows in n) */

typedef struct sim_skinny {
  int64_t B, M, N, K;
  const int64_t *lb, *lm, *lk, *rb, *rn, *rk; /* offsets, as sim_dot's */
  int nn; /* weights [K, N] (x @ W), else [N, K] */
  /* Weights [N, K] that stay the same for a whole while loop (see
   * "Packed loop-invariant weights"): pseudo values of the pack flag and
   * the packed panels, np panels; flag 0 when not packed. */
  int32_t flag, pack;
  int64_t np;
  uint64_t gid; /* the panels may be kept in the client's cache */
  void (*pk)(const struct sim_skinny *s, float *out, const float *a,
             const float *pk, int64_t p);
  /* results [n0, n0 + nb) of batch bi ([N, K] weights) */
  void (*kernel)(const struct sim_skinny *s, float *out, const float *a,
                 const float *b, int64_t bi, int64_t n0, int64_t nb);
  /* [K, N] weights: the sums over weight rows [k0, k1) of results
   * [n0, n0 + nb) of batch bi, added to the results (zero: from zero) */
  void (*rows)(const struct sim_skinny *s, float *out, const float *a,
               const float *b, int64_t bi, int64_t n0, int64_t nb,
               int64_t k0, int64_t k1, int zero);
  /* the batches interleave within the weights' rows (the heads of a KV
   * cache, [T, heads, 64]): see "Batches within rows" */
  int inter;
  /* [K, N] weights in kparts parts of kp rows (see "Weights [K, N] in
   * parts"); the sums of parts 1.. in temp ptmp, [kparts - 1][B][M][N] */
  int64_t kparts, kp;
  int32_t ptmp;
} sim_skinny;

#if defined(__GNUC__)
typedef float sim_sk_v16 __attribute__((vector_size(64)));

/* The sum of a vector's lanes in a fixed tree: (0+8, 1+9, ...), then
 * halves (a macro: no function takes a vector by value). */
#define SIM_SK_HSUM(out, v)                                                   \
  do {                                                                        \
    float s8_[8], s4_[4];                                                     \
    for (int i_ = 0; i_ < 8; i_++) s8_[i_] = (v)[i_] + (v)[i_ + 8];           \
    for (int i_ = 0; i_ < 4; i_++) s4_[i_] = s8_[i_] + s8_[i_ + 4];           \
    out = (s4_[0] + s4_[2]) + (s4_[1] + s4_[3]);                              \
  } while (0)

/* s[r][j] = the lane sums of accumulators c{r}{j} (rows < nr), each in
 * SIM_SK_HSUM's tree. */
#define SIM_SK_RED_SCALAR(s, nr, c00, c10, c20, c30, c01, c11, c21, c31)      \
  do {                                                                        \
    SIM_SK_HSUM(s[0][0], c00);                                                \
    SIM_SK_HSUM(s[0][1], c01);                                                \
    if (nr > 1) {                                                             \
      SIM_SK_HSUM(s[1][0], c10);                                              \
      SIM_SK_HSUM(s[1][1], c11);                                              \
    }                                                                         \
    if (nr > 2) {                                                             \
      SIM_SK_HSUM(s[2][0], c20);                                              \
      SIM_SK_HSUM(s[2][1], c21);                                              \
    }                                                                         \
    if (nr > 3) {                                                             \
      SIM_SK_HSUM(s[3][0], c30);                                              \
      SIM_SK_HSUM(s[3][1], c31);                                              \
    }                                                                         \
  } while (0)
#define SIM_SK_RED_port SIM_SK_RED_SCALAR
#define SIM_SK_RED_avx2 SIM_SK_RED_SCALAR
/* AVX-512: the same tree for all eight at once (unused ones are zero):
 * halves of pairs of accumulators added (lane i + lane i + 8), then
 * quarters (+ 4), then (0 + 2, 1 + 3) and their sum, each step one add of
 * two shuffled vectors, so every sum takes the same additions in the same
 * order as SIM_SK_HSUM. */
#define SIM_SK_RED_avx512(s, nr, c00, c10, c20, c30, c01, c11, c21, c31)      \
  do {                                                                        \
    __m512 a0_ = (__m512)(c00), a1_ = (__m512)(c10), a2_ = (__m512)(c20);     \
    __m512 a3_ = (__m512)(c30), a4_ = (__m512)(c01), a5_ = (__m512)(c11);     \
    __m512 a6_ = (__m512)(c21), a7_ = (__m512)(c31);                          \
    __m512 b0_ = _mm512_add_ps(_mm512_shuffle_f32x4(a0_, a4_, 0x44),          \
                               _mm512_shuffle_f32x4(a0_, a4_, 0xEE));         \
    __m512 b1_ = _mm512_add_ps(_mm512_shuffle_f32x4(a1_, a5_, 0x44),          \
                               _mm512_shuffle_f32x4(a1_, a5_, 0xEE));         \
    __m512 b2_ = _mm512_add_ps(_mm512_shuffle_f32x4(a2_, a6_, 0x44),          \
                               _mm512_shuffle_f32x4(a2_, a6_, 0xEE));         \
    __m512 b3_ = _mm512_add_ps(_mm512_shuffle_f32x4(a3_, a7_, 0x44),          \
                               _mm512_shuffle_f32x4(a3_, a7_, 0xEE));         \
    /* quarters: [a0, a4, a2, a6] and [a1, a5, a3, a7] */                     \
    __m512 q0_ = _mm512_add_ps(_mm512_shuffle_f32x4(b0_, b2_, 0x88),          \
                               _mm512_shuffle_f32x4(b0_, b2_, 0xDD));         \
    __m512 q1_ = _mm512_add_ps(_mm512_shuffle_f32x4(b1_, b3_, 0x88),          \
                               _mm512_shuffle_f32x4(b1_, b3_, 0xDD));         \
    __m512 d_ = _mm512_add_ps(_mm512_shuffle_ps(q0_, q1_, 0x44),              \
                              _mm512_shuffle_ps(q0_, q1_, 0xEE));             \
    __m512 e_ = _mm512_add_ps(_mm512_shuffle_ps(d_, d_, 0x88),                \
                              _mm512_shuffle_ps(d_, d_, 0xDD));               \
    float f_[16];                                                             \
    _mm512_storeu_ps(f_, e_);                                                 \
    s[0][0] = f_[0], s[1][0] = f_[1], s[0][1] = f_[4], s[1][1] = f_[5];       \
    s[2][0] = f_[8], s[3][0] = f_[9], s[2][1] = f_[12], s[3][1] = f_[13];     \
    (void)(nr);                                                               \
  } while (0)

/* out[r * ostride + j] = dot(ar[r], b[j]) for the nr <= 4 rows ar and the
 * two weight rows b[0], b[1]: up to eight named accumulators (registers),
 * specialized for each nr (a single query row sums two, not eight). */
#define SIM_SK_TILE(ISA)                                                      \
  static inline __attribute__((always_inline)) SIM_SK_T_##ISA void            \
  sim_sk_tilek_##ISA(const float *const *ar, int nr, const float *const *br,  \
                     int64_t K, float *out, int64_t ostride) {                \
    const float *a0 = ar[0], *a1 = nr > 1 ? ar[1] : a0,                       \
                *a2 = nr > 2 ? ar[2] : a0, *a3 = nr > 3 ? ar[3] : a0;         \
    const float *b0 = br[0], *b1 = br[1];                                     \
    sim_sk_v16 c00 = {0}, c10 = {0}, c20 = {0}, c30 = {0};                    \
    sim_sk_v16 c01 = {0}, c11 = {0}, c21 = {0}, c31 = {0}, u, v, x;           \
    int64_t k = 0;                                                            \
    for (; k + 16 <= K; k += 16) {                                            \
      memcpy(&u, b0 + k, sizeof u);                                           \
      memcpy(&v, b1 + k, sizeof v);                                           \
      memcpy(&x, a0 + k, sizeof x);                                           \
      c00 = c00 + x * u;                                                      \
      c01 = c01 + x * v;                                                      \
      if (nr > 1) {                                                           \
        memcpy(&x, a1 + k, sizeof x);                                         \
        c10 = c10 + x * u;                                                    \
        c11 = c11 + x * v;                                                    \
      }                                                                       \
      if (nr > 2) {                                                           \
        memcpy(&x, a2 + k, sizeof x);                                         \
        c20 = c20 + x * u;                                                    \
        c21 = c21 + x * v;                                                    \
      }                                                                       \
      if (nr > 3) {                                                           \
        memcpy(&x, a3 + k, sizeof x);                                         \
        c30 = c30 + x * u;                                                    \
        c31 = c31 + x * v;                                                    \
      }                                                                       \
    }                                                                         \
    float s[4][2];                                                            \
    SIM_SK_RED_##ISA(s, nr, c00, c10, c20, c30, c01, c11, c21, c31);          \
    for (int r = 0; r < nr; r++)                                              \
      for (int j = 0; j < 2; j++) {                                           \
        for (int64_t t = k; t < K; t++)                                       \
          s[r][j] = s[r][j] + ar[r][t] * br[j][t];                            \
        out[r * ostride + j] = s[r][j];                                       \
      }                                                                       \
  }                                                                           \
  static SIM_SK_T_##ISA void sim_sk_tile_##ISA(                               \
      const float *const *ar, int nr, const float *const *br, int64_t K,      \
      float *out, int64_t ostride) {                                          \
    switch (nr) {                                                             \
    case 1: sim_sk_tilek_##ISA(ar, 1, br, K, out, ostride); break;            \
    case 2: sim_sk_tilek_##ISA(ar, 2, br, K, out, ostride); break;            \
    case 3: sim_sk_tilek_##ISA(ar, 3, br, K, out, ostride); break;            \
    default: sim_sk_tilek_##ISA(ar, 4, br, K, out, ostride); break;           \
    }                                                                         \
  }

/* Results [n0, n0 + nb) of every lhs row of batch bi, in column pairs
 * (both weight rows then stay in L1 for every group of four lhs rows); an
 * odd last column is paired with itself and stored once (a scratch row
 * takes the duplicate). */
#define SIM_SK_KERNEL(ISA)                                                    \
  SIM_SK_TILE(ISA)                                                            \
  static SIM_SK_T_##ISA void sim_sk_nt_cols_##ISA(                            \
      const sim_skinny *s, float *out, const float *a, const float *b,        \
      int64_t bi, int64_t n0, int64_t nb) {                                   \
    float *o = out + bi * s->M * s->N;                                        \
    const float *wb = b + s->rb[bi];                                          \
    for (int64_t n = n0; n < n0 + nb; n += 2) {                               \
      int pair = n + 1 < n0 + nb;                                             \
      const float *br[2] = {wb + s->rn[n], wb + s->rn[pair ? n + 1 : n]};     \
      for (int64_t m0 = 0; m0 < s->M; m0 += 4) {                              \
        int nr = s->M - m0 < 4 ? (int)(s->M - m0) : 4;                        \
        const float *ar[4];                                                   \
        for (int r = 0; r < nr; r++) ar[r] = a + s->lb[bi] + s->lm[m0 + r];   \
        if (pair) {                                                           \
          sim_sk_tile_##ISA(ar, nr, br, s->K, o + m0 * s->N + n, s->N);       \
          continue;                                                           \
        }                                                                     \
        float two[4 * 2];                                                     \
        sim_sk_tile_##ISA(ar, nr, br, s->K, two, 2);                          \
        for (int r = 0; r < nr; r++) o[(m0 + r) * s->N + n] = two[r * 2];     \
      }                                                                       \
    }                                                                         \
  }

/* Weights with the result's dimension innermost (x @ W, W [K, N]): the
 * weight matrix is streamed once, row after row.  Columns go in chunks
 * whose sums for all lhs rows stay in L1 (they live in the result), and
 * each step reads SIM_SK_KU weight rows of the chunk and adds their
 * products to the sums of up to four lhs rows at a time, sixteen columns
 * per vector (a single lhs row: four vectors, 64 columns, so each weight
 * row is read a whole cache line at a time and the sums are loaded and
 * stored once per SIM_SK_KU rows); columns past the last whole vector one
 * at a time.  Every result is the plain sequential sum over the rows
 * from the first (a product, then an add: no contraction), so every
 * instruction set gives the same bits.
 * Streaming the rows in place reads memory sequentially (a decoder's
 * token reads each weight once): no packing. */
#define SIM_SK_KU 8 /* weight rows per step */
#define SIM_SK_NN(ISA)                                                        \
  static inline __attribute__((always_inline)) SIM_SK_T_##ISA void            \
  sim_sk_nnk_##ISA(const float *const *r, int ku, const float *xv, int nr,    \
                   float *o, int64_t ldo, int64_t nb) {                       \
    int64_t j = 0;                                                            \
    if (nr == 1) /* four vectors of sums: whole cache lines a row */         \
      for (; j + 64 <= nb; j += 64) {                                         \
        sim_sk_v16 c0, c1, c2, c3, u0, u1, u2, u3;                            \
        memcpy(&c0, o + j, sizeof c0);                                        \
        memcpy(&c1, o + j + 16, sizeof c1);                                   \
        memcpy(&c2, o + j + 32, sizeof c2);                                   \
        memcpy(&c3, o + j + 48, sizeof c3);                                   \
        for (int t = 0; t < ku; t++) {                                        \
          const float *rt = r[t] + j;                                         \
          float x = xv[t];                                                    \
          memcpy(&u0, rt, sizeof u0);                                         \
          memcpy(&u1, rt + 16, sizeof u1);                                    \
          memcpy(&u2, rt + 32, sizeof u2);                                    \
          memcpy(&u3, rt + 48, sizeof u3);                                    \
          c0 = c0 + x * u0;                                                   \
          c1 = c1 + x * u1;                                                   \
          c2 = c2 + x * u2;                                                   \
          c3 = c3 + x * u3;                                                   \
        }                                                                     \
        memcpy(o + j, &c0, sizeof c0);                                        \
        memcpy(o + j + 16, &c1, sizeof c1);                                   \
        memcpy(o + j + 32, &c2, sizeof c2);                                   \
        memcpy(o + j + 48, &c3, sizeof c3);                                   \
      }                                                                       \
    for (; j + 16 <= nb; j += 16) {                                           \
      sim_sk_v16 c0 = {0}, c1 = {0}, c2 = {0}, c3 = {0}, u;                   \
      memcpy(&c0, o + j, sizeof c0);                                          \
      if (nr > 1) memcpy(&c1, o + ldo + j, sizeof c1);                        \
      if (nr > 2) memcpy(&c2, o + 2 * ldo + j, sizeof c2);                    \
      if (nr > 3) memcpy(&c3, o + 3 * ldo + j, sizeof c3);                    \
      for (int t = 0; t < ku; t++) {                                          \
        memcpy(&u, r[t] + j, sizeof u);                                       \
        c0 = c0 + xv[t] * u;                                                  \
        if (nr > 1) c1 = c1 + xv[SIM_SK_KU + t] * u;                          \
        if (nr > 2) c2 = c2 + xv[2 * SIM_SK_KU + t] * u;                      \
        if (nr > 3) c3 = c3 + xv[3 * SIM_SK_KU + t] * u;                      \
      }                                                                       \
      memcpy(o + j, &c0, sizeof c0);                                          \
      if (nr > 1) memcpy(o + ldo + j, &c1, sizeof c1);                        \
      if (nr > 2) memcpy(o + 2 * ldo + j, &c2, sizeof c2);                    \
      if (nr > 3) memcpy(o + 3 * ldo + j, &c3, sizeof c3);                    \
    }                                                                         \
    for (; j < nb; j++)                                                       \
      for (int i = 0; i < nr; i++) {                                          \
        float acc = o[i * ldo + j];                                           \
        for (int t = 0; t < ku; t++) {                                        \
          float p = xv[i * SIM_SK_KU + t] * r[t][j];                          \
          acc = acc + p;                                                      \
        }                                                                     \
        o[i * ldo + j] = acc;                                                 \
      }                                                                       \
  }                                                                           \
  /* Results [n0, n0 + nb) of every lhs row of batch bi, summed over      \
   * weight rows [kb, ke) (onto the results, or from zero). */                \
  static SIM_SK_T_##ISA void sim_sk_nn_rows_##ISA(                            \
      const sim_skinny *s, float *out, const float *a, const float *b,        \
      int64_t bi, int64_t n0, int64_t nb, int64_t kb, int64_t ke,             \
      int zero) {                                                             \
    const int64_t M = s->M, N = s->N;                                         \
    float *o = out + bi * M * N + n0;                                         \
    const float *w = b + s->rb[bi] + n0;                                      \
    for (int64_t m = 0; zero && m < M; m++)                                   \
      memset(o + m * N, 0, sizeof(float) * (size_t)nb);                       \
    for (int64_t k0 = kb; k0 < ke; k0 += SIM_SK_KU) {                         \
      int ku = ke - k0 < SIM_SK_KU ? (int)(ke - k0) : SIM_SK_KU;              \
      const float *r[SIM_SK_KU];                                              \
      for (int t = 0; t < ku; t++) r[t] = w + s->rk[k0 + t];                  \
      for (int64_t m0 = 0; m0 < M; m0 += 4) {                                 \
        int nr = M - m0 < 4 ? (int)(M - m0) : 4;                              \
        float xv[4 * SIM_SK_KU];                                              \
        for (int i = 0; i < nr; i++) {                                        \
          const float *ai = a + s->lb[bi] + s->lm[m0 + i];                    \
          for (int t = 0; t < ku; t++)                                        \
            xv[i * SIM_SK_KU + t] = ai[s->lk[k0 + t]];                        \
        }                                                                     \
        float *om = o + m0 * N;                                               \
        if (ku == SIM_SK_KU) {                                                \
          switch (nr) {                                                       \
          case 1: sim_sk_nnk_##ISA(r, SIM_SK_KU, xv, 1, om, N, nb); break;    \
          case 2: sim_sk_nnk_##ISA(r, SIM_SK_KU, xv, 2, om, N, nb); break;    \
          case 3: sim_sk_nnk_##ISA(r, SIM_SK_KU, xv, 3, om, N, nb); break;    \
          default: sim_sk_nnk_##ISA(r, SIM_SK_KU, xv, 4, om, N, nb); break;   \
          }                                                                   \
        } else {                                                              \
          sim_sk_nnk_##ISA(r, ku, xv, nr, om, N, nb);                         \
        }                                                                     \
      }                                                                       \
    }                                                                         \
  }

#if SIM_X86
#define SIM_SK_X86 1
#define SIM_SK_T_avx2 __attribute__((target("avx2")))
#define SIM_SK_T_avx512 __attribute__((target("avx512f")))
#endif
#define SIM_SK_T_port
/* Branch coverage leaves these out: an inlined copy per constant nr. */
SIM_SK_KERNEL(port) /* GCOVR_EXCL_BR_LINE */
SIM_SK_NN(port) /* GCOVR_EXCL_BR_LINE */
#ifdef SIM_SK_X86
SIM_SK_KERNEL(avx2) /* GCOVR_EXCL_BR_LINE */
SIM_SK_NN(avx2) /* GCOVR_EXCL_BR_LINE */
SIM_SK_KERNEL(avx512) /* GCOVR_EXCL_BR_LINE */
SIM_SK_NN(avx512) /* GCOVR_EXCL_BR_LINE */
#endif

/* ======================================================================
 * Packed loop-invariant weights
 *
 * An LSTM step multiplies its few rows by the same [N, K] weights at every
 * iteration of a while loop (weights carried through the loop unchanged:
 * sim_loop_invariant).  Reading those rows in place costs a horizontal sum
 * per result and re-reads each weight row for every four lhs rows; instead
 * the first iteration of each run of the loop copies the weights into
 * panels of SIM_SK_PW columns, k-major (panel p holds W[p * PW + j][k] at
 * [p][k][j], zero past N), and every iteration multiplies up to eight lhs
 * rows by a panel with 8 x 3 vectors of sums in registers, streaming the
 * panel once: per k three panel vectors and one broadcast per row.  Every
 * result is the sequential sum over k from zero, each step one fused
 * multiply-add (fmaf in portable C: one rounding, so every instruction set
 * gives the same bits, the panels from the cache or packed now).  Panels are
 * shared by the device's threads; consecutive iterations walk them in
 * opposite directions, so the panels read last (still in cache) come
 * first.
 * ==================================================================== */
#define SIM_SK_PW 48 /* columns per panel: three vectors */

/* The body of a panel function: panel pi of pk (its nc columns from n0)
 * for every lhs row, GROUP rows at a time, each group through KCALL(ISA,
 * nr) (a switch on nr into the kernel's inlined copies). */
#define SIM_SK_PANEL_ROWS(ISA, GROUP, KCALL)                                  \
  int64_t n0 = pi * SIM_SK_PW;                                                \
  int64_t nc = s->N - n0 < SIM_SK_PW ? s->N - n0 : SIM_SK_PW;                 \
  const float *p = pk + pi * SIM_SK_PW * s->K;                                \
  for (int64_t m0 = 0; m0 < s->M; m0 += (GROUP)) {                            \
    int nr = s->M - m0 < (GROUP) ? (int)(s->M - m0) : (GROUP);                \
    const float *ar[GROUP];                                                   \
    for (int r = 0; r < nr; r++) ar[r] = a + s->lb[0] + s->lm[m0 + r];        \
    float *o = out + m0 * s->N + n0;                                          \
    KCALL(ISA, nr);                                                           \
  }
#define SIM_SK_PK_CALL(ISA, nr)                                               \
  switch (nr) {                                                               \
  case 1: sim_sk_pkk_##ISA(ar, 1, p, s->K, o, s->N, nc); break;               \
  case 2: sim_sk_pkk_##ISA(ar, 2, p, s->K, o, s->N, nc); break;               \
  case 3: sim_sk_pkk_##ISA(ar, 3, p, s->K, o, s->N, nc); break;               \
  case 4: sim_sk_pkk_##ISA(ar, 4, p, s->K, o, s->N, nc); break;               \
  case 5: sim_sk_pkk_##ISA(ar, 5, p, s->K, o, s->N, nc); break;               \
  case 6: sim_sk_pkk_##ISA(ar, 6, p, s->K, o, s->N, nc); break;               \
  case 7: sim_sk_pkk_##ISA(ar, 7, p, s->K, o, s->N, nc); break;               \
  default: sim_sk_pkk_##ISA(ar, 8, p, s->K, o, s->N, nc); break;              \
  }
#define SIM_SK_PNN_CALL(ISA, nr)                                              \
  switch (nr) {                                                               \
  case 1: sim_sk_pnnk_##ISA(s, ar, 1, p, o, s->N, nc); break;                 \
  case 2: sim_sk_pnnk_##ISA(s, ar, 2, p, o, s->N, nc); break;                 \
  case 3: sim_sk_pnnk_##ISA(s, ar, 3, p, o, s->N, nc); break;                 \
  default: sim_sk_pnnk_##ISA(s, ar, 4, p, o, s->N, nc); break;                \
  }

#define SIM_SK_PK(ISA)                                                        \
  static inline __attribute__((always_inline)) SIM_SK_TP_##ISA void           \
  sim_sk_pkk_##ISA(const float *const *ar, int nr, const float *p,            \
                   int64_t K, float *o, int64_t ldo, int64_t nc) {            \
    sim_sk_v16 c00 = {0}, c01 = {0}, c02 = {0}, c10 = {0}, c11 = {0};         \
    sim_sk_v16 c12 = {0}, c20 = {0}, c21 = {0}, c22 = {0}, c30 = {0};         \
    sim_sk_v16 c31 = {0}, c32 = {0}, c40 = {0}, c41 = {0}, c42 = {0};         \
    sim_sk_v16 c50 = {0}, c51 = {0}, c52 = {0}, c60 = {0}, c61 = {0};         \
    sim_sk_v16 c62 = {0}, c70 = {0}, c71 = {0}, c72 = {0}, u0, u1, u2;        \
    for (int64_t k = 0; k < K; k++, p += SIM_SK_PW) {                         \
      memcpy(&u0, p, sizeof u0);                                              \
      memcpy(&u1, p + 16, sizeof u1);                                         \
      memcpy(&u2, p + 32, sizeof u2);                                         \
      SIM_SK_PROW(ISA, 0);                                                    \
      if (nr > 1) SIM_SK_PROW(ISA, 1);                                        \
      if (nr > 2) SIM_SK_PROW(ISA, 2);                                        \
      if (nr > 3) SIM_SK_PROW(ISA, 3);                                        \
      if (nr > 4) SIM_SK_PROW(ISA, 4);                                        \
      if (nr > 5) SIM_SK_PROW(ISA, 5);                                        \
      if (nr > 6) SIM_SK_PROW(ISA, 6);                                        \
      if (nr > 7) SIM_SK_PROW(ISA, 7);                                        \
    }                                                                         \
    float t_[3 * 16];                                                         \
    SIM_SK_PSTORE(0);                                                         \
    if (nr > 1) SIM_SK_PSTORE(1);                                             \
    if (nr > 2) SIM_SK_PSTORE(2);                                             \
    if (nr > 3) SIM_SK_PSTORE(3);                                             \
    if (nr > 4) SIM_SK_PSTORE(4);                                             \
    if (nr > 5) SIM_SK_PSTORE(5);                                             \
    if (nr > 6) SIM_SK_PSTORE(6);                                             \
    if (nr > 7) SIM_SK_PSTORE(7);                                             \
  }                                                                           \
  /* Panel pi for every lhs row, in groups of eight. */                       \
  static SIM_SK_TP_##ISA void sim_sk_pk_##ISA(                               \
      const sim_skinny *s, float *out, const float *a, const float *pk,       \
      int64_t pi) {                                                           \
    SIM_SK_PANEL_ROWS(ISA, 8, SIM_SK_PK_CALL);                                \
  }
/* Row r's three sums += its k-th value times the panel's vectors, each
 * lane one fused multiply-add (one rounding: the same bits on every
 * instruction set). */
#define SIM_SK_PROW(ISA, r)                                                   \
  do {                                                                        \
    float x_ = ar[r][k];                                                      \
    SIM_SK_FMA_##ISA(c##r##0, x_, u0);                                        \
    SIM_SK_FMA_##ISA(c##r##1, x_, u1);                                        \
    SIM_SK_FMA_##ISA(c##r##2, x_, u2);                                        \
  } while (0)
#define SIM_SK_FMA_port(c, x, u)                                              \
  do {                                                                        \
    for (int l_ = 0; l_ < 16; l_++) (c)[l_] = fmaf((x), (u)[l_], (c)[l_]);    \
  } while (0)
#define SIM_SK_TP_port
#ifdef SIM_SK_X86
#define SIM_SK_TP_avx2 __attribute__((target("avx2,fma")))
#define SIM_SK_TP_avx512 __attribute__((target("avx512f")))
#define SIM_SK_FMA_avx512(c, x, u)                                            \
  (c) = (sim_sk_v16)_mm512_fmadd_ps(_mm512_set1_ps(x), (__m512)(u),           \
                                    (__m512)(c))
/* two halves of eight lanes */
#define SIM_SK_FMA_avx2(c, x, u)                                              \
  do {                                                                        \
    __m256 l_, h_, ul_, uh_, x_b = _mm256_set1_ps(x);                         \
    memcpy(&l_, &(c), 32);                                                    \
    memcpy(&h_, (char *)&(c) + 32, 32);                                       \
    memcpy(&ul_, &(u), 32);                                                   \
    memcpy(&uh_, (const char *)&(u) + 32, 32);                                \
    l_ = _mm256_fmadd_ps(x_b, ul_, l_);                                       \
    h_ = _mm256_fmadd_ps(x_b, uh_, h_);                                       \
    memcpy(&(c), &l_, 32);                                                    \
    memcpy((char *)&(c) + 32, &h_, 32);                                       \
  } while (0)
#endif
/* Row r's nc results: straight from the registers, or through t_. */
#define SIM_SK_PSTORE(r)                                                      \
  do {                                                                        \
    float *or_ = o + (r) * ldo;                                               \
    if (nc == SIM_SK_PW) {                                                    \
      memcpy(or_, &c##r##0, sizeof c##r##0);                                  \
      memcpy(or_ + 16, &c##r##1, sizeof c##r##1);                             \
      memcpy(or_ + 32, &c##r##2, sizeof c##r##2);                             \
    } else {                                                                  \
      memcpy(t_, &c##r##0, sizeof c##r##0);                                   \
      memcpy(t_ + 16, &c##r##1, sizeof c##r##1);                              \
      memcpy(t_ + 32, &c##r##2, sizeof c##r##2);                              \
      memcpy(or_, t_, sizeof(float) * (size_t)nc);                            \
    }                                                                         \
  } while (0)

/* With sixteen vector registers (AVX2, portable C) eight rows of three
 * vectors would spill: one vector of sixteen columns for up to four rows
 * at a time, the same sums in the same order. */
#define SIM_SK_PKN(ISA)                                                       \
  static inline __attribute__((always_inline)) SIM_SK_TP_##ISA void           \
  sim_sk_pkn_##ISA(const float *const *ar, int nr, const float *p,            \
                   int64_t K, float *o, int64_t ldo, int64_t nc) {            \
    sim_sk_v16 c00 = {0}, c10 = {0}, c20 = {0}, c30 = {0}, u0;                \
    for (int64_t k = 0; k < K; k++, p += SIM_SK_PW) {                         \
      memcpy(&u0, p, sizeof u0);                                              \
      SIM_SK_FMA_##ISA(c00, ar[0][k], u0);                                    \
      if (nr > 1) SIM_SK_FMA_##ISA(c10, ar[1][k], u0);                        \
      if (nr > 2) SIM_SK_FMA_##ISA(c20, ar[2][k], u0);                        \
      if (nr > 3) SIM_SK_FMA_##ISA(c30, ar[3][k], u0);                        \
    }                                                                         \
    sim_sk_v16 *cs[4] = {&c00, &c10, &c20, &c30};                             \
    for (int r = 0; r < nr; r++)                                              \
      memcpy(o + r * ldo, cs[r], sizeof(float) * (size_t)nc);                 \
  }                                                                           \
  static SIM_SK_TP_##ISA void sim_sk_pk_##ISA(                               \
      const sim_skinny *s, float *out, const float *a, const float *pk,       \
      int64_t pi) {                                                           \
    int64_t n0 = pi * SIM_SK_PW;                                              \
    const float *p = pk + pi * SIM_SK_PW * s->K;                              \
    for (int64_t v = 0; v < SIM_SK_PW && n0 + v < s->N; v += 16) {            \
      int64_t nc = s->N - n0 - v < 16 ? s->N - n0 - v : 16;                   \
      for (int64_t m0 = 0; m0 < s->M; m0 += 4) {                              \
        int nr = s->M - m0 < 4 ? (int)(s->M - m0) : 4;                        \
        const float *ar[4];                                                   \
        for (int r = 0; r < nr; r++) ar[r] = a + s->lb[0] + s->lm[m0 + r];    \
        float *o = out + m0 * s->N + n0 + v;                                  \
        switch (nr) {                                                         \
        case 1: sim_sk_pkn_##ISA(ar, 1, p + v, s->K, o, s->N, nc); break;     \
        case 2: sim_sk_pkn_##ISA(ar, 2, p + v, s->K, o, s->N, nc); break;     \
        case 3: sim_sk_pkn_##ISA(ar, 3, p + v, s->K, o, s->N, nc); break;     \
        default: sim_sk_pkn_##ISA(ar, 4, p + v, s->K, o, s->N, nc); break;    \
        }                                                                     \
      }                                                                       \
    }                                                                         \
  }

SIM_SK_PKN(port) /* GCOVR_EXCL_BR_LINE */
#ifdef SIM_SK_X86
SIM_SK_PKN(avx2) /* GCOVR_EXCL_BR_LINE */
SIM_SK_PK(avx512) /* GCOVR_EXCL_BR_LINE */
#endif

/* ---- Weights [K, N] in panels ----
 * Weights [K, N] streamed in place (sim_sk_nn_rows) read SIM_SK_KU rows at
 * once, a stream per row, and reload the sums for every row step: on this
 * machine one thread so reads 31-34 GB/s, where the same weights copied
 * into panels of SIM_SK_PW columns, k-major (W[k][p PW + j] at [p][k][j]),
 * stream at 55-58 (a measured GEMV of 768 x 3072 over seven matrices out
 * of the caches): one sequential stream, the sums in registers.  So when
 * the weights are an argument of the execute (a decoder's projections)
 * and big enough to come from memory, their panels are kept in the
 * client's cache (as the GEMM's packed operands, gemm_cache.c) and read
 * instead.  Each result is the same sum as sim_sk_nn_rows makes: per part
 * of rows (see "Weights [K, N] in parts") a product, then an add, in row
 * order from zero, the parts' sums then added in order; so a call from
 * the panels and one in place give the same bits. */
#define SIM_SK_NN_PANEL_MIN ((int64_t)2 << 20) /* weight bytes, at least */
/* Row r's part sums += its k-th value times the panel's vectors. */
#define SIM_SK_NROW(r)                                                        \
  do {                                                                        \
    float x_ = ar[r][k];                                                      \
    d##r##0 = d##r##0 + x_ * u0;                                              \
    d##r##1 = d##r##1 + x_ * u1;                                              \
    d##r##2 = d##r##2 + x_ * u2;                                              \
  } while (0)
/* Row r's results: part q's sums (the first part's), or plus them. */
#define SIM_SK_NTOT(r)                                                        \
  do {                                                                        \
    c##r##0 = q ? c##r##0 + d##r##0 : d##r##0;                                \
    c##r##1 = q ? c##r##1 + d##r##1 : d##r##1;                                \
    c##r##2 = q ? c##r##2 + d##r##2 : d##r##2;                                \
  } while (0)
#define SIM_SK_PNN(ISA)                                                       \
  static inline __attribute__((always_inline)) SIM_SK_T_##ISA void            \
  sim_sk_pnnk_##ISA(const sim_skinny *s, const float *const *ar, int nr,      \
                    const float *p, float *o, int64_t ldo, int64_t nc) {      \
    sim_sk_v16 c00 = {0}, c01 = {0}, c02 = {0}, c10 = {0}, c11 = {0};         \
    sim_sk_v16 c12 = {0}, c20 = {0}, c21 = {0}, c22 = {0}, c30 = {0};         \
    sim_sk_v16 c31 = {0}, c32 = {0}, u0, u1, u2;                              \
    for (int64_t q = 0; q < s->kparts; q++) {                                 \
      int64_t k = q * s->kp, k1 = k + s->kp < s->K ? k + s->kp : s->K;        \
      sim_sk_v16 d00 = {0}, d01 = {0}, d02 = {0}, d10 = {0}, d11 = {0};       \
      sim_sk_v16 d12 = {0}, d20 = {0}, d21 = {0}, d22 = {0}, d30 = {0};       \
      sim_sk_v16 d31 = {0}, d32 = {0};                                        \
      for (const float *pp = p + k * SIM_SK_PW; k < k1;                       \
           k++, pp += SIM_SK_PW) {                                            \
        memcpy(&u0, pp, sizeof u0);                                           \
        memcpy(&u1, pp + 16, sizeof u1);                                      \
        memcpy(&u2, pp + 32, sizeof u2);                                      \
        SIM_SK_NROW(0);                                                       \
        if (nr > 1) SIM_SK_NROW(1);                                           \
        if (nr > 2) SIM_SK_NROW(2);                                           \
        if (nr > 3) SIM_SK_NROW(3);                                           \
      }                                                                       \
      SIM_SK_NTOT(0);                                                         \
      if (nr > 1) SIM_SK_NTOT(1);                                             \
      if (nr > 2) SIM_SK_NTOT(2);                                             \
      if (nr > 3) SIM_SK_NTOT(3);                                             \
    }                                                                         \
    float t_[3 * 16];                                                         \
    SIM_SK_PSTORE(0);                                                         \
    if (nr > 1) SIM_SK_PSTORE(1);                                             \
    if (nr > 2) SIM_SK_PSTORE(2);                                             \
    if (nr > 3) SIM_SK_PSTORE(3);                                             \
  }                                                                           \
  /* Panel pi of [K, N] weights for every lhs row, four at a time. */         \
  static SIM_SK_T_##ISA void sim_sk_pnn_##ISA(                               \
      const sim_skinny *s, float *out, const float *a, const float *pk,       \
      int64_t pi) {                                                           \
    SIM_SK_PANEL_ROWS(ISA, 4, SIM_SK_PNN_CALL);                               \
  }

SIM_SK_PNN(port) /* GCOVR_EXCL_BR_LINE */
#ifdef SIM_SK_X86
SIM_SK_PNN(avx2) /* GCOVR_EXCL_BR_LINE */
SIM_SK_PNN(avx512) /* GCOVR_EXCL_BR_LINE */
#endif

typedef struct sim_sk_pjob {
  const sim_skinny *s;
  float *out, *pk;
  const float *a, *b;
  int back; /* panels in reverse order */
} sim_sk_pjob;

/* Packs panels [begin, end): W[n][k] to [p][k][n - p * PW], zero past N. */
static void sim_sk_pack_range(void *ctx, int64_t begin, int64_t end) {
  const sim_sk_pjob *j = (const sim_sk_pjob *)ctx;
  const sim_skinny *s = j->s;
  const int64_t K = s->K;
  for (int64_t pi = begin; pi < end; pi++) {
    float *p = j->pk + pi * SIM_SK_PW * K;
    for (int64_t c = 0; c < SIM_SK_PW; c++) {
      int64_t n = pi * SIM_SK_PW + c;
      if (n >= s->N) {
        for (int64_t k = 0; k < K; k++) p[k * SIM_SK_PW + c] = 0;
        continue;
      }
      const float *w = j->b + s->rb[0] + s->rn[n];
      for (int64_t k = 0; k < K; k++) p[k * SIM_SK_PW + c] = w[k];
    }
  }
}

/* Packs panels [begin, end) of [K, N] weights: W[k][n] to
 * [p][k][n - p * PW], zero past N. */
static void sim_sk_pack_nn_range(void *ctx, int64_t begin, int64_t end) {
  const sim_sk_pjob *j = (const sim_sk_pjob *)ctx;
  const sim_skinny *s = j->s;
  for (int64_t pi = begin; pi < end; pi++) {
    float *p = j->pk + pi * SIM_SK_PW * s->K;
    int64_t n0 = pi * SIM_SK_PW;
    size_t nc = (size_t)(s->N - n0 < SIM_SK_PW ? s->N - n0 : SIM_SK_PW);
    for (int64_t k = 0; k < s->K; k++, p += SIM_SK_PW) {
      memcpy(p, j->b + s->rb[0] + s->rk[k] + n0, sizeof(float) * nc);
      memset(p + nc, 0, sizeof(float) * (SIM_SK_PW - nc));
    }
  }
}

static void sim_sk_panels(void *ctx, int64_t begin, int64_t end) {
  const sim_sk_pjob *j = (const sim_sk_pjob *)ctx;
  for (int64_t i = begin; i < end; i++) {
    int64_t pi = j->back ? j->s->np - 1 - i : i;
    j->s->pk(j->s, j->out, j->a, j->pk, pi);
  }
}

/* The panels of weights b from the client's cache when b is an argument
 * of this execute with a write generation (as sim_gemm_bpre: packed now
 * when the cache asks), else NULL; *entry as sim_gcache_get's. */
static float *sim_sk_cached(const sim_skinny *s, const float *b, sim_cx *cx,
                            void **entry) {
  int fill;
  float *p = (float *)sim_gcache_get_arg(
      cx, s->gid, b,
      sizeof(float) * (size_t)(s->np * SIM_SK_PW) * (size_t)s->K, &fill,
      entry);
  if (p && fill) {
    sim_sk_pjob pj = {s, NULL, p, NULL, b, 0};
    int threads = cx->tp && cx->tp->threads > 1 ? cx->tp->threads : 1;
    sim_parallel_for(threads > 1 ? cx : NULL, s->np, 1,
                     s->nn ? sim_sk_pack_nn_range : sim_sk_pack_range, &pj);
  }
  return p;
}

static xrt_status sim_run_skinny_packed(const sim_step *st, void **vals,
                                        sim_cx *cx) {
  const sim_skinny *s = (const sim_skinny *)st->data;
  uint64_t *flag = (uint64_t *)vals[s->flag];
  sim_sk_pjob j = {s, (float *)vals[st->out[0]], (float *)vals[s->pack],
                   (const float *)vals[st->in[0]],
                   (const float *)vals[st->in[1]], 0};
  int threads = cx && cx->tp && cx->tp->threads > 1 ? cx->tp->threads : 1;
  /* flag[0]: iterations of this run of the loop; flag[1]: 1 when the
   * plan's own panels are packed (the client's cache had none) */
  void *entry = NULL;
  float *cached = flag[1] ? NULL : sim_sk_cached(s, j.b, cx, &entry);
  if (cached) {
    j.pk = cached;
  } else if (!flag[1]) { /* packed once per run of the loop */
    sim_parallel_for(threads > 1 ? cx : NULL, s->np, 1, sim_sk_pack_range,
                     &j);
    flag[1] = 1;
  }
  j.back = (int)(flag[0] & 1);
  flag[0] += 1;
  /* a thread's part is at least two panels */
  sim_parallel_for(threads > 1 ? cx : NULL, s->np, 2, sim_sk_panels, &j);
  if (entry) sim_gcache_put(cx->exe->cl, entry, 1);
  return XRT_OK;
}

/* ======================================================================
 * Weights [K, N] in parts
 *
 * A decoder's token reads each weight matrix once, from memory: the
 * product is as fast as the weights stream in.  Threads that split the
 * columns read every weight row in pieces, interleaved with the other
 * threads' pieces, and on the 2-vCPU machine of bench/ two threads so
 * read 16-22 GB/s in all where one thread reading alone streams 39 and
 * two threads each streaming its own half of the matrix 62.  So weights
 * of SIM_SK_PART_MIN bytes or more (a batch's) are cut into kparts parts of
 * kp consecutive rows, about a MiB each, the threads take whole parts
 * (the caller the first ones: consecutive memory on each), part p sums
 * its rows into its own [M, N] block (part 0 into the result), and the
 * blocks are then added to the result in part order.  Every result is
 * thus the sequential sum over each part's rows, the parts' sums added in
 * order: the parts depend on K and N only, so one thread and many give
 * the same bits (a reordering of the sum, within the product's rounding,
 * as the packed kernels' K blocks are).
 * ==================================================================== */
#define SIM_SK_PART_MIN ((int64_t)2 << 20) /* weight bytes: cut in parts */
#define SIM_SK_PART_BYTES ((int64_t)1 << 20) /* a part's weights, about */
#define SIM_SK_PARTS_MAX 8

/* The parts of K rows of weights of the given bytes, parts of about
 * part bytes when there are at least min of them (rows *kp each): 1 when
 * not cut. */
static int64_t sim_sk_parts(int64_t K, double bytes, double min,
                            double part, int64_t *kp) {
  *kp = K;
  if (bytes < min) return 1;
  int64_t want = bytes >= SIM_SK_PARTS_MAX * part
                     ? SIM_SK_PARTS_MAX
                     : (int64_t)(bytes / part);
  int64_t rows = (K + want - 1) / want;
  rows = (rows + SIM_SK_KU - 1) / SIM_SK_KU * SIM_SK_KU;
  int64_t parts = (K + rows - 1) / rows;
  if (parts < 2) return 1;
  *kp = rows;
  return parts;
}

/* ---- Batches within rows ----
 * Weights whose batches interleave within a row (a decoder's KV cache
 * [T, heads, 64], one head a batch) are read as a whole in order of
 * address, not once per batch (each pass touching one head's 256 bytes
 * of every 3 KiB row, twelve passes over the cache from memory): [N, K]
 * weights in chunks of SIM_SK_IROWS rows, every batch of a chunk before
 * the next (the same sums as otherwise); [K, N] weights in parts of rows
 * of about SIM_SK_IPART bytes (all batches), SIM_SK_IKROWS rows at a time
 * for every batch (each result the sum over its part's rows in order),
 * the parts' sums then added in order.  The rows SIM_SK_IAHEAD chunks or
 * steps ahead are prefetched: the hardware's prefetchers do not follow a
 * batch's pieces of rows.  Gains at one thread in gpt_decode (per-step
 * profiler): the key products 202 -> 148 us, the value products 167 ->
 * 157 (both from memory, a slow phase of the machine). */
#define SIM_SK_IROWS 8       /* [N, K]: rows of a chunk */
#define SIM_SK_IKROWS 32     /* [K, N]: rows of a step */
#define SIM_SK_IPART (256 << 10) /* [K, N]: a part's bytes (all batches) */
#define SIM_SK_IAHEAD 2      /* chunks or steps read ahead */

/* Asks for weight rows [r0, r1) (row offsets rows[], every batch) to be
 * brought into the cache. */
static void sim_sk_prefetch_rows(const sim_skinny *s, const float *b,
                                 const int64_t *rows, int64_t r0,
                                 int64_t r1) {
  int64_t lo = s->rb[0] < s->rb[s->B - 1] ? s->rb[0] : s->rb[s->B - 1];
  int64_t span = s->rb[0] + s->rb[s->B - 1] - 2 * lo + (s->nn ? s->N : s->K);
  for (int64_t r = r0; r < r1; r++)
    for (int64_t e = 0; e < span; e += 16)
      __builtin_prefetch(b + lo + rows[r] + e);
}

/* One call's work: items are (part, batch, column chunk of nc). */
typedef struct sim_sk_job {
  const sim_skinny *s;
  float *out;
  const float *a, *b;
  int64_t nc, nch; /* columns per chunk, chunks per batch */
  float *ptmp;     /* the sums of parts 1.. (s->ptmp) */
} sim_sk_job;

/* Item i is part i / (B nch); in it, chunk r / B of batch r % B (r the
 * rest): the batches of one chunk run together, so weights whose batches
 * interleave (the heads of a KV cache, [T, heads, 64]) are read from
 * cache once, not once a head. */
static void sim_sk_items(void *ctx, int64_t begin, int64_t end) {
  const sim_sk_job *j = (const sim_sk_job *)ctx;
  const sim_skinny *s = j->s;
  int64_t per = s->B * j->nch;
  for (int64_t i = begin; i < end; i++) {
    int64_t part = i / per, r = i % per;
    int64_t bi = r % s->B, n0 = r / s->B * j->nc;
    int64_t nb = s->N - n0 < j->nc ? s->N - n0 : j->nc;
    int64_t na = n0 + SIM_SK_IAHEAD * j->nc; /* the chunk read ahead */
    if (s->inter && bi == 0 && na < s->N)
      sim_sk_prefetch_rows(s, j->b, s->rn, na,
                           s->N - na < j->nc ? s->N : na + j->nc);
    if (!s->nn) {
      s->kernel(s, j->out, j->a, j->b, bi, n0, nb);
      continue;
    }
    int64_t k0 = part * s->kp, k1 = k0 + s->kp < s->K ? k0 + s->kp : s->K;
    float *o = part ? j->ptmp + (part - 1) * s->B * s->M * s->N : j->out;
    s->rows(s, o, j->a, j->b, bi, n0, nb, k0, k1, 1);
  }
}

/* Parts [begin, end) of [K, N] weights whose batches interleave. */
static void sim_sk_inter_parts(void *ctx, int64_t begin, int64_t end) {
  const sim_sk_job *j = (const sim_sk_job *)ctx;
  const sim_skinny *s = j->s;
  int64_t MN = s->M * s->N, step = SIM_SK_IKROWS;
  for (int64_t p = begin; p < end; p++) {
    int64_t k0 = p * s->kp, k1 = k0 + s->kp < s->K ? k0 + s->kp : s->K;
    float *o = p ? j->ptmp + (p - 1) * s->B * MN : j->out;
    memset(o, 0, sizeof(float) * (size_t)(s->B * MN));
    for (int64_t k = k0; k < k1; k += step) {
      int64_t ka = k + SIM_SK_IAHEAD * step, ke = k1 - k < step ? k1 : k + step;
      if (ka < k1) sim_sk_prefetch_rows(s, j->b, s->rk, ka,
                                        k1 - ka < step ? k1 : ka + step);
      for (int64_t b = 0; b < s->B; b++)
        s->rows(s, o, j->a, j->b, b, 0, s->N, k, ke, 0);
    }
  }
}

/* The result plus the parts' sums, in part order. */
static void sim_sk_add_parts(const sim_skinny *s, float *out,
                             const float *ptmp) {
  int64_t n = s->B * s->M * s->N;
  for (int64_t p = 1; p < s->kparts; p++) {
    const float *t = ptmp + (p - 1) * n;
    for (int64_t i = 0; i < n; i++) out[i] = out[i] + t[i];
  }
}

static xrt_status sim_run_skinny(const sim_step *st, void **vals,
                                 sim_cx *cx) {
  const sim_skinny *s = (const sim_skinny *)st->data;
  sim_sk_job j = {s, (float *)vals[st->out[0]],
                  (const float *)vals[st->in[0]],
                  (const float *)vals[st->in[1]], 0, 0,
                  s->kparts > 1 ? (float *)vals[s->ptmp] : NULL};
  int threads = cx && cx->tp && cx->tp->threads > 1 ? cx->tp->threads : 1;
  void *entry = NULL;
  float *pk = s->nn && s->gid ? sim_sk_cached(s, j.b, cx, &entry) : NULL;
  if (pk) { /* the weights' panels (a thread's part: two at least) */
    sim_sk_pjob pj = {s, j.out, pk, j.a, j.b, 0};
    sim_parallel_for(threads > 1 ? cx : NULL, s->np, 2, sim_sk_panels, &pj);
    sim_gcache_put(cx->exe->cl, entry, 1);
    return XRT_OK;
  }
  int64_t krows = s->nn ? s->kp : s->K; /* weight rows an item reads */
  if (s->inter && s->nn) {
    sim_parallel_for(threads > 1 ? cx : NULL, s->kparts, 1,
                     sim_sk_inter_parts, &j);
    if (s->kparts > 1) sim_sk_add_parts(s, j.out, j.ptmp);
    return XRT_OK;
  }
  if (s->inter) {
    j.nc = SIM_SK_IROWS;
  } else if (s->nn) {
    /* the sums of all lhs rows of a chunk fit L1 (16 KiB of 32) */
    j.nc = 4096 / s->M / 16 * 16;
    j.nc = j.nc < 256 ? 256 : j.nc;
    /* one chunk for every thread: a thread's rows are read in segments
     * as long as they can be (four chunks a thread measured slower) */
    int64_t per = (s->N + threads - 1) / threads;
    per = (per + 63) / 64 * 64;
    if (threads > 1 && s->B * s->kparts < threads && per < j.nc) j.nc = per;
  } else {
    j.nc = 64; /* weight rows of the other layout: pairs, in any chunks */
  }
  j.nch = (s->N + j.nc - 1) / j.nc;
  /* a thread's part reads at least 64 KiB of weights */
  int64_t grain = (int64_t)(65536 / ((uint64_t)j.nc * (uint64_t)krows * 4 + 1));
  sim_parallel_for(threads > 1 ? cx : NULL, s->kparts * s->B * j.nch,
                   grain + 1, sim_sk_items, &j);
  if (s->kparts > 1) sim_sk_add_parts(s, j.out, j.ptmp);
  return XRT_OK;
}
#endif /* __GNUC__ */

/* Whether s's batches interleave within its weights' rows (the batch
 * stride under the row stride); [K, N] weights then only when the sums
 * of every batch fit L1 (16 KiB). */
static int sim_sk_interleaved(const sim_skinny *s) {
  const int64_t *rows = s->nn ? s->rk : s->rn;
  int64_t nrows = s->nn ? s->K : s->N;
  if (s->B < 2 || nrows < 2) return 0;
  if (s->nn && s->B * s->M * s->N > 4096) return 0;
  int64_t rs = rows[1] - rows[0], bs = s->rb[1] - s->rb[0];
  rs = rs < 0 ? -rs : rs, bs = bs < 0 ? -bs : bs;
  return bs < rs;
}

SIM_PRIVATE int sim_skinny_lower_dot(sim_fcc *fc, const sim_dot *d,
                                     sim_step *st, xrt_status *rc) {
  *rc = XRT_OK;
#if !defined(__GNUC__)
  (void)fc, (void)d, (void)st;
  return 0; /* no vector extensions: the other paths */
#else
  if (d->ct != XRT_F32 || d->lt != XRT_F32 || d->rt != XRT_F32 ||
      d->ot != XRT_F32 || d->M < 1 || d->M > SIM_SK_MAXM ||
      d->K < 1 || d->N < 1 || d->B < 1)
    return 0;
  int nt = d->K >= SIM_SK_MINK; /* both rows contiguous in k */
  for (int64_t k = 0; nt && k < d->K; k++)
    nt = d->lk[k] == k && d->rk[k] == k;
  /* or the result's dimension contiguous in the weights */
  int nn = !nt && d->unit_n && d->N >= SIM_SK_MINN;
  if (!nt && !nn) return 0;
  sim_skinny *s = (sim_skinny *)sim_palloc(fc, sizeof *s);
  if (!s) {
    *rc = XRT_RESOURCE_EXHAUSTED;
    return 1;
  }
  s->B = d->B, s->M = d->M, s->N = d->N, s->K = d->K;
  s->lb = d->lb, s->lm = d->lm, s->lk = d->lk;
  s->rb = d->rb, s->rn = d->rn, s->rk = d->rk;
  int level = sim_isa_level();
  (void)level;
  s->nn = !nt;
  s->kernel = sim_sk_nt_cols_port;
  s->rows = sim_sk_nn_rows_port;
#ifdef SIM_SK_X86
  if (level == 2)
    s->kernel = sim_sk_nt_cols_avx512, s->rows = sim_sk_nn_rows_avx512;
  else if (level == 1)
    s->kernel = sim_sk_nt_cols_avx2, s->rows = sim_sk_nn_rows_avx2;
#endif
  s->kparts = 1, s->kp = s->K, s->ptmp = -1;
  s->inter = sim_sk_interleaved(s);
  double wb = (double)s->K * (double)s->N * sizeof(float); /* a batch's */
  if (s->nn && s->inter)
    s->kparts = sim_sk_parts(s->K, wb * (double)s->B, 2.0 * SIM_SK_IPART,
                             SIM_SK_IPART, &s->kp);
  else if (s->nn)
    s->kparts = sim_sk_parts(s->K, wb, (double)SIM_SK_PART_MIN,
                             (double)SIM_SK_PART_BYTES, &s->kp);
  if (s->kparts > 1) {
    size_t tb = sizeof(float) * (size_t)((s->kparts - 1) * s->B) *
                (size_t)(s->M * s->N);
    if ((*rc = sim_temp(fc, tb, &s->ptmp))) return 1;
  }
  st->data = s;
  st->run = sim_run_skinny;
  s->flag = s->pack = 0;
  s->np = 0;
  s->gid = 0;
  s->pk = NULL;
  /* [K, N] weights from memory: their panels, when an argument */
  int lk_unit = 1;
  for (int64_t k = 0; lk_unit && k < s->K; k++) lk_unit = s->lk[k] == k;
  if (s->nn && !s->inter && s->B == 1 && lk_unit &&
      wb >= (double)SIM_SK_NN_PANEL_MIN) {
    s->np = (s->N + SIM_SK_PW - 1) / SIM_SK_PW;
    s->gid = sim_gcache_id();
    s->pk = sim_sk_pnn_port;
#ifdef SIM_SK_X86
    if (level == 2) s->pk = sim_sk_pnn_avx512;
    else if (level == 1) s->pk = sim_sk_pnn_avx2;
#endif
  }
  /* [N, K] weights the same for the whole loop: packed once per run */
  int32_t flag = 0;
  if (nt && s->B == 1 && s->M >= 2 &&
      sim_loop_invariant(fc, st->in[1], &flag, rc)) {
    s->np = (s->N + SIM_SK_PW - 1) / SIM_SK_PW;
    size_t pb = sizeof(float) * (size_t)(s->np * SIM_SK_PW) * (size_t)s->K;
    if ((*rc = sim_temp(fc, pb, &s->pack))) return 1;
    s->flag = flag;
    s->gid = sim_gcache_id();
    s->pk = sim_sk_pk_port;
#ifdef SIM_SK_X86
    if (level == 2) s->pk = sim_sk_pk_avx512;
    else if (level == 1) s->pk = sim_sk_pk_avx2;
#endif
    st->run = sim_run_skinny_packed;
  }
  return 1;
#endif
}
