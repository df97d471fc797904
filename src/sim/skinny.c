/*
 * src/sim/skinny.c - skinny f32 products: a few rows against weights.
 * Part of the simulated device; MIT licensed, see LICENSE.
 */
#include "internal.h"
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
 * do.  Tiles of four lhs rows by two weight rows share their loads.
 * Weights laid out the other way (x @ W, W [K, N] with N innermost) take
 * blocks of 64 results per lhs row, summed over k in order (below).
 * ==================================================================== */

#define SIM_SK_MAXM 16 /* lhs rows, at most */
#define SIM_SK_MINK 32 /* contracted length, at least (rows in k) */
#define SIM_SK_MINN 64 /* results per row, at least (rows in n) */

typedef struct sim_skinny {
  int64_t B, M, N, K;
  const int64_t *lb, *lm, *lk, *rb, *rn, *rk; /* offsets, as sim_dot's */
  void (*kernel)(const struct sim_skinny *s, float *out, const float *a,
                 const float *b);
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

/* out[r * ostride + j] = dot(ar[r], b[j]) for the nr <= 4 rows ar and the
 * two weight rows b[0], b[1]: eight named accumulators (registers; rows
 * past nr repeat row 0 and are not stored). */
#define SIM_SK_TILE(ISA)                                                      \
  static SIM_SK_T_##ISA void sim_sk_tile_##ISA(                               \
      const float *const *ar, int nr, const float *const *br, int64_t K,      \
      float *out, int64_t ostride) {                                          \
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
      memcpy(&x, a1 + k, sizeof x);                                           \
      c10 = c10 + x * u;                                                      \
      c11 = c11 + x * v;                                                      \
      memcpy(&x, a2 + k, sizeof x);                                           \
      c20 = c20 + x * u;                                                      \
      c21 = c21 + x * v;                                                      \
      memcpy(&x, a3 + k, sizeof x);                                           \
      c30 = c30 + x * u;                                                      \
      c31 = c31 + x * v;                                                      \
    }                                                                         \
    float s[4][2];                                                            \
    SIM_SK_HSUM(s[0][0], c00);                                                \
    SIM_SK_HSUM(s[1][0], c10);                                                \
    SIM_SK_HSUM(s[2][0], c20);                                                \
    SIM_SK_HSUM(s[3][0], c30);                                                \
    SIM_SK_HSUM(s[0][1], c01);                                                \
    SIM_SK_HSUM(s[1][1], c11);                                                \
    SIM_SK_HSUM(s[2][1], c21);                                                \
    SIM_SK_HSUM(s[3][1], c31);                                                \
    for (int r = 0; r < nr; r++)                                              \
      for (int j = 0; j < 2; j++) {                                           \
        for (int64_t t = k; t < K; t++)                                       \
          s[r][j] = s[r][j] + ar[r][t] * br[j][t];                            \
        out[r * ostride + j] = s[r][j];                                       \
      }                                                                       \
  }

/* Column pairs; an odd last column is paired with itself and stored
 * once (a scratch row takes the duplicate). */
#define SIM_SK_KERNEL(ISA)                                                    \
  SIM_SK_TILE(ISA)                                                            \
  static SIM_SK_T_##ISA void sim_sk_run_##ISA(                                \
      const sim_skinny *s, float *out, const float *a, const float *b) {      \
    for (int64_t bi = 0; bi < s->B; bi++) {                                   \
      float *o = out + bi * s->M * s->N;                                      \
      for (int64_t m0 = 0; m0 < s->M; m0 += 4) {                              \
        int nr = s->M - m0 < 4 ? (int)(s->M - m0) : 4;                        \
        const float *ar[4];                                                   \
        for (int r = 0; r < nr; r++) ar[r] = a + s->lb[bi] + s->lm[m0 + r];   \
        int64_t n = 0;                                                        \
        for (; n + 2 <= s->N; n += 2) {                                       \
          const float *br[2] = {b + s->rb[bi] + s->rn[n],                     \
                                b + s->rb[bi] + s->rn[n + 1]};                \
          sim_sk_tile_##ISA(ar, nr, br, s->K, o + m0 * s->N + n, s->N);       \
        }                                                                     \
        if (n < s->N) {                                                       \
          const float *br[2] = {b + s->rb[bi] + s->rn[n],                     \
                                b + s->rb[bi] + s->rn[n]};                    \
          float two[4 * 2];                                                   \
          sim_sk_tile_##ISA(ar, nr, br, s->K, two, 2);                        \
          for (int r = 0; r < nr; r++) o[(m0 + r) * s->N + n] = two[r * 2];   \
        }                                                                     \
      }                                                                       \
    }                                                                         \
  }

/* Weights with the result's dimension innermost (x @ W, W [K, N]): each
 * block of 64 results of four lhs rows accumulates over k in order, one
 * weight row block loaded per k for the four rows (sixteen registers of
 * sums); results past the last whole block, one at a time, also in k
 * order.  Every result is then the plain sequential sum. */
#define SIM_SK_NN(ISA)                                                        \
  static SIM_SK_T_##ISA void sim_sk_nn_block_##ISA(                           \
      const sim_skinny *s, const float *const *ar, int nr, const float *w,    \
      float *out) {                                                           \
    sim_sk_v16 c[4][4] = {{{0}}};                                             \
    for (int64_t k = 0; k < s->K; k++) {                                      \
      const float *row = w + s->rk[k];                                        \
      sim_sk_v16 u[4];                                                        \
      for (int j = 0; j < 4; j++) memcpy(&u[j], row + 16 * j, sizeof u[j]);   \
      for (int r = 0; r < 4; r++) {                                           \
        float x = ar[r < nr ? r : 0][s->lk[k]];                               \
        for (int j = 0; j < 4; j++) c[r][j] = c[r][j] + x * u[j];             \
      }                                                                       \
    }                                                                         \
    for (int r = 0; r < nr; r++)                                              \
      memcpy(out + r * s->N, c[r], sizeof c[r]);                              \
  }                                                                           \
  static SIM_SK_T_##ISA void sim_sk_nn_##ISA(                                 \
      const sim_skinny *s, float *out, const float *a, const float *b) {      \
    for (int64_t bi = 0; bi < s->B; bi++) {                                   \
      float *o = out + bi * s->M * s->N;                                      \
      const float *w = b + s->rb[bi];                                         \
      for (int64_t m0 = 0; m0 < s->M; m0 += 4) {                              \
        int nr = s->M - m0 < 4 ? (int)(s->M - m0) : 4;                        \
        const float *ar[4];                                                   \
        for (int r = 0; r < nr; r++) ar[r] = a + s->lb[bi] + s->lm[m0 + r];   \
        int64_t n = 0;                                                        \
        for (; n + 64 <= s->N; n += 64)                                       \
          sim_sk_nn_block_##ISA(s, ar, nr, w + n, o + m0 * s->N + n);         \
        for (; n < s->N; n++)                                                 \
          for (int r = 0; r < nr; r++) {                                      \
            float acc = 0;                                                    \
            for (int64_t k = 0; k < s->K; k++)                                \
              acc = acc + ar[r][s->lk[k]] * w[s->rk[k] + n];                  \
            o[(m0 + r) * s->N + n] = acc;                                     \
          }                                                                   \
      }                                                                       \
    }                                                                         \
  }

#if defined(__x86_64__) || defined(__i386__)
#define SIM_SK_X86 1
#define SIM_SK_T_avx2 __attribute__((target("avx2")))
#define SIM_SK_T_avx512 __attribute__((target("avx512f")))
#endif
#define SIM_SK_T_port

SIM_SK_KERNEL(port)
SIM_SK_NN(port)
#ifdef SIM_SK_X86
SIM_SK_KERNEL(avx2)
SIM_SK_NN(avx2)
SIM_SK_KERNEL(avx512)
SIM_SK_NN(avx512)
#endif

static xrt_status sim_run_skinny(const sim_step *st, void **vals,
                                 sim_cx *cx) {
  const sim_skinny *s = (const sim_skinny *)st->data;
  (void)cx;
  s->kernel(s, (float *)vals[st->out[0]], (const float *)vals[st->in[0]],
            (const float *)vals[st->in[1]]);
  return XRT_OK;
}
#endif /* __GNUC__ */

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
  s->kernel = nt ? sim_sk_run_port : sim_sk_nn_port;
#ifdef SIM_SK_X86
  if (level == 2) s->kernel = nt ? sim_sk_run_avx512 : sim_sk_nn_avx512;
  else if (level == 1) s->kernel = nt ? sim_sk_run_avx2 : sim_sk_nn_avx2;
#endif
  st->data = s;
  st->run = sim_run_skinny;
  return 1;
#endif
}
