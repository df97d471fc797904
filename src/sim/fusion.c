/*
 * src/sim/fusion.c - fusion: elementwise trees and reductions as one tiled loop.
 * Part of the simulated device; MIT licensed, see LICENSE.
 */
#include "internal.h"
/* ======================================================================
 * Fusion: elementwise trees and reductions as one tiled loop
 *
 * sim_lower_block groups each block's ops before lowering them.  Walking
 * the block backwards, an op that can end a fused loop (elementwise,
 * select, clamp, reshape, a reduce with a one-op body) becomes a root and
 * absorbs the producers of its operands when every use of the produced
 * value is by a member of the group (so the value never needs to exist in
 * full): elementwise ops, select, clamp, reshape, and broadcast_in_dim /
 * broadcast / transpose, which read their own (materialized) operand by
 * index arithmetic.  Values used anywhere else, entry results included,
 * stay materialized.
 *
 * A group lowers into ONE step over the root's index space (the reduce
 * input's for a reduce), walked in tiles of a few thousand elements: every
 * node computes its tile into a tile-sized buffer of the step's scratch
 * (L1/L2 resident), with the same typed kernels (sim_ew_fn) an unfused op
 * uses, so results are bit-identical to the unfused program for every
 * element type; but for batch_norm_inference (f32), which joins a group as
 * JAX's three operations (sim_fzbn) where its own step evaluates the
 * formula in double: a few ulp apart.  Inputs of the root's shape are
 * read in place; broadcast and transposed inputs and scalars fill their
 * tile.  The absorbed values are never defined, so liveness gives them no
 * slot.
 *
 * Reductions: every single-input reduce whose body is one add/mul/max/
 * min/and/or (fused producers or not) walks its input in row-major tiles
 * and combines runs into the output: a kept innermost dimension
 * accumulates rows into a vector of outputs (reduce over axis 0 of a
 * matrix: blocked over SIM_FZ_COLBLK columns so the accumulators stay in
 * cache, four rows at a time for f32/f64 sums of a plain input); a
 * reduced innermost dimension folds runs.  Like XLA's vectorized and
 * parallel reductions these may reassociate: f32/f64 add folds of 32 or
 * more elements (SIM_FZ_PSUM_MIN) use 32 partial sums, the four-row sums add
 * (r0 + r1) + (r2 + r3), and a big reduction to one element combines the
 * partial results of its pieces.  Everything else keeps the sequential
 * order of the unfused reduce.
 *
 * Big loops are split across the device's threads with sim_parallel_for:
 * the work is cut into at most SIM_FZ_PARTS pieces, piece p using scratch
 * p, so no piece shares tile buffers.  Loops under SIM_FZ_PAR_MIN elements
 * have one piece and a tile no bigger than the loop, but for loops of
 * elementary functions with SIM_FZ_COSTLY_MIN plain ops of work or more
 * (sim_fz_op_cost), cut in four tiles at least.  An elementwise root
 * whose output is SIM_FZ_STREAM_MIN bytes or more (bigger than what the
 * caches would keep for the next op) writes it with non-temporal stores:
 * the output's lines are never read from memory first, so the loop moves
 * a fifth fewer bytes (a*b+c: 4 arrays instead of 5), which matters most
 * when two threads share the memory bus.
 *
 * The f32/f64 kernels the fused loops call (fusion_kernels.c) for add,
 * sub, mul, div, max, min, neg, abs and the reductions are compiled three
 * times (portable, AVX2, AVX-512F, picked once at run time with
 * __builtin_cpu_supports), as
 * plain loops without -march flags, so one binary runs everywhere and
 * under valgrind.  Each element is still one IEEE operation (no
 * contraction: gcc's ISO C mode and one operation per expression), so
 * they match the plain kernels bit for bit.  Unfused elementwise steps use
 * them too (sim_lower_ew).
 *
 * A broadcast operand whose values repeat with a period that divides the
 * tile (a per-channel vector over an NHWC image: batch norm as JAX writes
 * it) is a PTILE: the tile is made a multiple of the period and the
 * operand's tile is filled once per piece, not gathered per tile.  A tree
 * that is one line of f32 add/sub/mul/div, each with a leaf operand,
 * maybe ending in a clamp with scalar bounds (batch norm + relu6), runs in
 * registers (sim_fz_chain_eval): the same IEEE operations per element, no
 * tiles in between.  A depthwise convolution whose result only the group
 * reads, as a whole operand, is lowered with it (sim_fz_lower_dw): each
 * tile of positions is convolved into an L1 buffer and the group runs on
 * it there, so the convolution's result never goes to memory.  On one
 * thread an elementwise loop is one piece.
 *
 * XRT_SIM_NO_FUSION in the environment turns grouping off (every op lowers
 * alone), to compare and debug.
 * ==================================================================== */

#define SIM_FZ_MAXN 64      /* nodes of one fused step */
#define SIM_FZ_MAXOPS 24    /* ops absorbed into one fused step */
#define SIM_FZ_PARTS 8      /* pieces one fused step is cut into, at most */
#define SIM_FZ_TILE 2048    /* elements per tile, at most */
#define SIM_FZ_BUDGET 65536 /* tile bytes of one piece, roughly */
#define SIM_FZ_PAR_MIN 65536 /* fewer elements: one piece */
/* ... unless their work (elements x sim_fz_op_cost) is this much: a
 * fork-join and the results' move to the other core cost microseconds
 * when the cores share no cache (on the 2-vCPU machine of bench/, a cache
 * line takes 200+ ns between them at times).  An LSTM gate's 2048
 * elements of two or three elementary functions (three in the cell's
 * update, two in the output's) are worth it with today's pool: rnn of the
 * model zoo at two threads, interleaved best of 5, 1.436 -> 1.346 ms, its
 * two gate steps 3.84 + 2.51 -> 2.3 + 1.6 us (per-step timer).  Four
 * times this threshold kept them on one thread. */
#define SIM_FZ_COSTLY_MIN SIM_FZ_PAR_MIN
#define SIM_FZ_STREAM_MIN ((size_t)16 << 20) /* output bytes: streamed */
#define SIM_FZ_ROW_MIN 128 /* rows read in place as tiles, at least */
#define SIM_FZ_SUB 256 /* elements a streaming root computes per store run */
#define SIM_FZ_DW_RUN 16 /* positions a depthwise producer computes at once */
#define SIM_FZ_CHAIN SIM_GPOST_OPS /* operations of a chain in registers */

/* ---- the chain kernels' instruction sets (fusion_kernels.c has the
 * loops' kernels) ---- */

#if SIM_X86
#include <immintrin.h>
#include "post512.h"
#define SIM_FZ_X86 1
#define SIM_FZ_T_avx2 __attribute__((target("avx2,fma")))
#define SIM_FZ_T_avx512 __attribute__((target("avx512f")))
#endif
#define SIM_FZ_T_port
#ifdef SIM_FZ_X86
#define SIM_FZ_PICK3(name)                                                    \
  (lv == 2 ? name##_avx512 : lv == 1 ? name##_avx2 : name##_port)
#else
#define SIM_FZ_PICK3(name) name##_port
#endif

/* XRT_SIM_NO_FUSION set: every op lowers alone (to compare and debug). */
static int sim_fz_off;
static pthread_once_t sim_fz_off_once = PTHREAD_ONCE_INIT;
static void sim_fz_off_read(void) {
  sim_fz_off = getenv("XRT_SIM_NO_FUSION") != NULL;
}
static int sim_fz_disabled(void) {
  pthread_once(&sim_fz_off_once, sim_fz_off_read);
  return sim_fz_off;
}


/* ---- fused plans ---- */

enum {
  SIM_FZ_FULL,   /* a value of the space's shape, read in place */
  SIM_FZ_GATHER, /* a value read by index arithmetic into the tile */
  SIM_FZ_SPLAT,  /* one element repeated: the tile is filled once */
  SIM_FZ_PTILE,  /* a GATHER whose tiles all hold the same values (a
                  * broadcast of a period that divides the tile, such as a
                  * per-channel vector): filled once, as a SPLAT */
  SIM_FZ_EW,     /* an elementwise kernel */
  SIM_FZ_SEL,    /* select */
  SIM_FZ_CLAMP,  /* clamp */
  SIM_FZ_ID      /* reshape: the child's tile as it is */
};

typedef struct sim_fznode {
  uint8_t kind;
  int8_t nargs;
  int16_t arg[3];
  int32_t vid; /* the SSA value this node stands for */
  int32_t val; /* leaves: the materialized value read */
  size_t es, off;
  sim_ew_fn ew;
  const void *ctx;
  sim_clamp_fn clamp;
  sim_fz_sel_fn sel;
  /* GATHER: element i of the space (multi-index idx over dims, coalesced)
   * reads element base + sum idx_k * ss_k of val.  dims and ss (rank
   * entries each) live after the nodes, so that the nodes stay small: a
   * plan has thousands of them and planning is bound by their bytes. */
  int32_t rank;
  const int64_t *dims, *ss;
  int64_t base;
} sim_fznode;

/* A batch_norm_inference member (f32) becomes (x - mean) * k + offset,
 * three operations that a product's epilogue can take (sim_gpost), with
 * k = scale / sqrt(var + eps) per feature, computed in double and
 * rounded once, before each run into pseudo value k.  That is batch norm
 * as JAX writes it; the op's own f32 rounding, within a few ulp of the
 * unfused step, which evaluates the whole formula in double. */
typedef struct sim_fzbn {
  int32_t scale, var, k; /* values: operands 1 and 4, the pseudo value */
  int64_t F;
  double eps;
} sim_fzbn;

typedef struct sim_fz {
  int32_t nn;
  sim_fznode *nodes; /* post-order; the last is the root */
  int64_t numel, tile;
  size_t part_bytes;
  int32_t scratch; /* pseudo value: maxp * (part_bytes + 16) */
  int32_t maxp;    /* pieces: SIM_FZ_PARTS for big loops, else 1 */
  int stream;      /* the elementwise root stores past the cache */
  /* chain: the tree is a line of f32 add/sub/mul/div, each with one leaf
   * operand, from leaf node chx, maybe ending in a clamp with splat bounds
   * (clo, chi; else -1): evaluated in registers (sim_fz_chain_eval) */
  int chain;
  int32_t inplace; /* the input whose memory the result takes, or -1 */
  int64_t cost;    /* work an element, in plain ops (sim_fz_op_cost) */
  int32_t nbn;      /* batch norm members: their k, made before each run */
  const sim_fzbn *bn;
  int8_t nch;
  uint8_t chop[SIM_FZ_CHAIN]; /* SIM_FZC_*, + SIM_FZC_REV: b op v */
  int16_t charg[SIM_FZ_CHAIN], chx, clo, chi;
  int8_t cmm; /* the clamp is a max (1) or min (2) with splat clo */
  /* reduce roots */
  int red;
  sim_red_fn rfn;
  sim_fz_add4_fn add4;  /* f32/f64 sums over rows of a plain input */
  size_t res;           /* result element size */
  sim_fill_fn fill;
  int32_t rank;         /* coalesced reduce dimensions */
  int64_t dims[XRT_MAX_RANK], ostr[XRT_MAX_RANK];
  int64_t out_numel;
} sim_fz;

/* Element i0 of the space onwards, L elements, into d (GATHER/SPLAT). */
static void sim_fz_gather(const sim_fznode *nd, const char *src, char *d,
                          int64_t i0, int64_t L) {
  int64_t idx[XRT_MAX_RANK], rem = i0, off = nd->base;
  int last = nd->rank - 1;
  for (int k = last; k >= 0; k--) {
    idx[k] = rem % nd->dims[k];
    rem /= nd->dims[k];
    off += idx[k] * nd->ss[k];
  }
  size_t es = nd->es;
  int64_t s = nd->ss[last];
  while (L > 0) {
    int64_t run = nd->dims[last] - idx[last];
    if (run > L) run = L;
    if (s == 1) {
      memcpy(d, src + (size_t)off * es, (size_t)run * es);
    } else if (s == 0) {
      sim_fill_for(es)(d, src + (size_t)off * es, run);
    } else {
      for (int64_t j = 0; j < run; j++)
        memcpy(d + (size_t)j * es, src + (size_t)(off + j * s) * es, es);
    }
    d += (size_t)run * es;
    L -= run;
    off += run * s;
    idx[last] += run;
    for (int k = last; k > 0 && idx[k] == nd->dims[k]; k--) {
      off -= idx[k] * nd->ss[k];
      idx[k] = 0;
      idx[k - 1]++;
      off += nd->ss[k - 1];
    }
  }
}

/* Where elements [i0, i0 + L) of GATHER node nd lie in src when they are
 * one contiguous run of it (unit innermost stride, within one innermost
 * row), else NULL. */
static const char *sim_fz_run_at(const sim_fznode *nd, const char *src,
                                 int64_t i0, int64_t L) {
  int last = nd->rank - 1;
  if (last < 0 || nd->ss[last] != 1) return NULL;
  int64_t rem = i0, off = nd->base;
  int64_t first = rem % nd->dims[last];
  if (first + L > nd->dims[last]) return NULL;
  for (int k = last; k >= 0; k--) {
    off += rem % nd->dims[k] * nd->ss[k];
    rem /= nd->dims[k];
  }
  return src + (size_t)off * nd->es;
}

/* The elementwise root nd on L elements into dst with non-temporal stores,
 * SIM_FZ_SUB elements at a time through buf (its tile): short runs keep
 * the loads and the stores interleaved and buf in L1.  Measured here, one
 * whole tile and then one streaming copy was slower than plain stores. */
static void sim_fz_ew_stream(const sim_fz *z, const sim_fznode *nd,
                             const void *const *p, char *buf, char *dst,
                             int64_t L) {
  for (int64_t s = 0; s < L; s += SIM_FZ_SUB) {
    int64_t m = L - s < SIM_FZ_SUB ? L - s : SIM_FZ_SUB;
    void *in[3];
    for (int j = 0; j < nd->nargs; j++)
      in[j] = (char *)(uintptr_t)p[nd->arg[j]] +
              (size_t)s * z->nodes[nd->arg[j]].es;
    nd->ew(in, buf, (size_t)m, nd->ctx);
    sim_copy_nt(dst + (size_t)s * nd->es, buf, (size_t)m * nd->es);
  }
}

/* Evaluates the tree on elements [i0, i0 + L) of the space; the root
 * writes into dst when given (streaming when z->stream); the leaf of
 * value xv (-1: none) reads its L elements at xp.  Returns the root's
 * values. */
static const void *sim_fz_eval_x(const sim_fz *z, void **vals, char *scr,
                                 int64_t i0, int64_t L, void *dst, int32_t xv,
                                 const void *xp) {
  const void *p[SIM_FZ_MAXN];
  for (int32_t k = 0; k < z->nn; k++) {
    const sim_fznode *nd = &z->nodes[k];
    char *o = k == z->nn - 1 && dst ? (char *)dst : scr + nd->off;
    if (o == dst && z->stream) {
      sim_fz_ew_stream(z, nd, p, scr + nd->off, o, L);
      p[k] = o;
      continue;
    }
    switch (nd->kind) {
    case SIM_FZ_FULL:
      p[k] = nd->val == xv ? (const char *)xp
                           : (const char *)vals[nd->val] + (size_t)i0 * nd->es;
      continue;
    case SIM_FZ_SPLAT:
    case SIM_FZ_PTILE: p[k] = scr + nd->off; continue;
    case SIM_FZ_ID: p[k] = p[nd->arg[0]]; continue;
    case SIM_FZ_GATHER:
      if ((p[k] = sim_fz_run_at(nd, (const char *)vals[nd->val], i0, L)))
        continue; /* one contiguous run (a slice's row): read in place */
      sim_fz_gather(nd, (const char *)vals[nd->val], o, i0, L);
      break;
    case SIM_FZ_EW: {
      void *in[3];
      for (int j = 0; j < nd->nargs; j++)
        in[j] = (void *)(uintptr_t)p[nd->arg[j]];
      nd->ew(in, o, (size_t)L, nd->ctx);
      break;
    }
    case SIM_FZ_SEL:
      nd->sel((const uint8_t *)p[nd->arg[0]], p[nd->arg[1]], p[nd->arg[2]], o,
              L);
      break;
    default: /* SIM_FZ_CLAMP: a splat bound is read as one element */
      nd->clamp(o, p[nd->arg[0]], p[nd->arg[1]], p[nd->arg[2]], L,
                z->nodes[nd->arg[0]].kind != SIM_FZ_SPLAT,
                z->nodes[nd->arg[2]].kind != SIM_FZ_SPLAT);
      break;
    }
    p[k] = o;
  }
  const void *r = p[z->nn - 1];
  if (dst && r != dst)
    memcpy(dst, r, (size_t)L * z->nodes[z->nn - 1].es);
  return dst ? dst : r;
}

static const void *sim_fz_eval(const sim_fz *z, void **vals, char *scr,
                               int64_t i0, int64_t L, void *dst) {
  return sim_fz_eval_x(z, vals, scr, i0, L, dst, -1, NULL);
}

/* ---- chains in registers ---- */

/* A line of f32 operations v = v op b_j (or b_j op v), then maybe a clamp
 * with bounds that are one number each and not NaN, sixteen elements at a
 * time without storing the values in between: each element sees the same
 * IEEE operations in the same order as the node-by-node loop, so the bits
 * are the same; the clamp makes the choices of the scalar-bound kernel of
 * move.c (a strict compare for lo = -0, <= for a hi with its sign bit).
 * The operations are SIM_FZC_* (internal.h), which a product's epilogue
 * in registers (sim_gpost) shares. */

typedef struct sim_fzch {
  int n, clamp, lo_strict, hi_eq;
  float lo, hi;
  const uint8_t *op;
  const float *b[SIM_FZ_CHAIN];
} sim_fzch;

#if defined(__GNUC__)
typedef float sim_fzc_v16 __attribute__((vector_size(64)));
typedef int32_t sim_fzc_i16 __attribute__((vector_size(64)));
#define SIM_FZC_1(D, A, OP, B) D = A OP B;
#define SIM_FZC_4(D, A, OP, B)                                                \
  D##0 = A##0 OP B##0, D##1 = A##1 OP B##1, D##2 = A##2 OP B##2,              \
  D##3 = A##3 OP B##3;
#define SIM_FZC_8(D, A, OP, B)                                                \
  SIM_FZC_4(D, A, OP, B)                                                      \
  D##4 = A##4 OP B##4, D##5 = A##5 OP B##5, D##6 = A##6 OP B##6,              \
  D##7 = A##7 OP B##7;
/* Operation OPC on the value(s) v* with the operand(s) b*: W is SIM_FZC_1
 * (one vector or one number), SIM_FZC_4 or SIM_FZC_8 (a block). */
#define SIM_FZC_APPLY(W, OPC)                                                 \
  switch (OPC) {                                                              \
  case SIM_FZC_ADD: W(v, v, +, b) break;                                      \
  case SIM_FZC_SUB: W(v, v, -, b) break;                                      \
  case SIM_FZC_MUL: W(v, v, *, b) break;                                      \
  case SIM_FZC_DIV: W(v, v, /, b) break;                                      \
  case SIM_FZC_ADD + SIM_FZC_REV: W(v, b, +, v) break;                        \
  case SIM_FZC_SUB + SIM_FZC_REV: W(v, b, -, v) break;                        \
  case SIM_FZC_MUL + SIM_FZC_REV: W(v, b, *, v) break;                        \
  default: W(v, b, /, v) break;                                               \
  }
#define SIM_FZC_SEL(c, a, b)                                                  \
  ((sim_fzc_v16)(((sim_fzc_i16)(a) & (c)) | ((sim_fzc_i16)(b) & ~(c))))
/* The clamp of one vector V: SIM_FZC_CLV with vector selects, or
 * SIM_FZC_CLK with AVX-512 maximum and minimum (compares into mask
 * registers and blends when hi is -0). */
#define SIM_FZC_CLV(V)                                                        \
  {                                                                           \
    sim_fzc_i16 ta = lo_strict ? fa > V : fa >= V;                            \
    V = SIM_FZC_SEL(ta, fa, V);                                               \
    sim_fzc_i16 tb = hi_eq ? fb <= V : fb < V;                                \
    V = SIM_FZC_SEL(tb, fb, V);                                               \
  }
#ifdef SIM_FZ_X86
#define SIM_FZC_CLK(V)                                                        \
  {                                                                           \
    __m512 v_, a_, b_;                                                        \
    memcpy(&v_, &V, sizeof v_);                                               \
    memcpy(&a_, &fa, sizeof a_);                                              \
    memcpy(&b_, &fb, sizeof b_);                                              \
    if (minmax) { /* the same choices: see sim_gpost_bound512 */             \
      v_ = sim_gpost_bound512(v_, a_,                                         \
                              _mm512_set1_ps(lo_pz ? 0.0f : -0.0f), b_);      \
    } else {                                                                  \
      __mmask16 ka = lo_strict ? _mm512_cmp_ps_mask(a_, v_, _CMP_GT_OQ)       \
                               : _mm512_cmp_ps_mask(a_, v_, _CMP_GE_OQ);      \
      v_ = _mm512_mask_blend_ps(ka, v_, a_);                                  \
      __mmask16 kb = hi_eq ? _mm512_cmp_ps_mask(b_, v_, _CMP_LE_OQ)           \
                           : _mm512_cmp_ps_mask(b_, v_, _CMP_LT_OQ);          \
      v_ = _mm512_mask_blend_ps(kb, v_, b_);                                  \
    }                                                                         \
    memcpy(&V, &v_, sizeof V);                                                \
  }
#endif
/* Eight vectors a dispatch of the operation switch (AVX-512's 32
 * registers hold them and their operands). */
#define SIM_FZC_WIDE(CL)                                                      \
  for (; i + 128 <= L; i += 128) {                                            \
    sim_fzc_v16 v0, v1, v2, v3, v4, v5, v6, v7;                               \
    sim_fzc_v16 b0, b1, b2, b3, b4, b5, b6, b7;                               \
    SIM_FZC_LD8(v, x + i)                                                     \
    for (int j = 0; j < n; j++) {                                             \
      SIM_FZC_LD8(b, bp[j] + i)                                               \
      SIM_FZC_APPLY(SIM_FZC_8, op[j])                                         \
    }                                                                         \
    if (clamp) {                                                              \
      CL(v0) CL(v1) CL(v2) CL(v3) CL(v4) CL(v5) CL(v6) CL(v7)                 \
    }                                                                         \
    SIM_FZC_ST8(o + i, v)                                                     \
  }
#define SIM_FZC_LD8(V, P)                                                     \
  memcpy(&V##0, (P), 64), memcpy(&V##1, (P) + 16, 64),                        \
      memcpy(&V##2, (P) + 32, 64), memcpy(&V##3, (P) + 48, 64),               \
      memcpy(&V##4, (P) + 64, 64), memcpy(&V##5, (P) + 80, 64),               \
      memcpy(&V##6, (P) + 96, 64), memcpy(&V##7, (P) + 112, 64);
#define SIM_FZC_ST8(P, V)                                                     \
  memcpy((P), &V##0, 64), memcpy((P) + 16, &V##1, 64),                        \
      memcpy((P) + 32, &V##2, 64), memcpy((P) + 48, &V##3, 64),               \
      memcpy((P) + 64, &V##4, 64), memcpy((P) + 80, &V##5, 64),               \
      memcpy((P) + 96, &V##6, 64), memcpy((P) + 112, &V##7, 64);
#define SIM_FZC_NARROW(CL)
/* The chain's fields are read into locals first: the stores to o (through
 * memcpy) could otherwise alias them, and each would be read again.  WIDE
 * is SIM_FZC_WIDE or SIM_FZC_NARROW (no eight-vector loop). */
#define SIM_FZ_CHAINK(ISA, CL, WIDE)                                          \
  static SIM_FZ_T_##ISA void sim_fz_chain_##ISA(const sim_fzch *c,            \
                                                const float *x, float *o,     \
                                                int64_t L) {                  \
    const int n = c->n, clamp = c->clamp;                                     \
    const int lo_strict = c->lo_strict, hi_eq = c->hi_eq;                     \
    /* bounds as max and min (SIM_FZC_CLK) unless hi is -0 */                 \
    const int minmax = !(c->hi == 0 && hi_eq);                                \
    const int lo_pz = c->lo == 0 && !lo_strict;                               \
    (void)minmax, (void)lo_pz;                                                \
    uint8_t op[SIM_FZ_CHAIN];                                                 \
    const float *bp[SIM_FZ_CHAIN];                                            \
    for (int j = 0; j < n; j++) op[j] = c->op[j], bp[j] = c->b[j];            \
    sim_fzc_v16 fa, fb;                                                       \
    for (int k = 0; k < 16; k++) fa[k] = c->lo, fb[k] = c->hi;                \
    int64_t i = 0;                                                            \
    WIDE(CL)                                                                  \
    for (; i + 64 <= L; i += 64) { /* four vectors a dispatch */              \
      sim_fzc_v16 v0, v1, v2, v3, b0, b1, b2, b3;                             \
      memcpy(&v0, x + i, sizeof v0);                                          \
      memcpy(&v1, x + i + 16, sizeof v1);                                     \
      memcpy(&v2, x + i + 32, sizeof v2);                                     \
      memcpy(&v3, x + i + 48, sizeof v3);                                     \
      for (int j = 0; j < n; j++) {                                           \
        const float *q = bp[j] + i;                                           \
        memcpy(&b0, q, sizeof b0);                                            \
        memcpy(&b1, q + 16, sizeof b1);                                       \
        memcpy(&b2, q + 32, sizeof b2);                                       \
        memcpy(&b3, q + 48, sizeof b3);                                       \
        SIM_FZC_APPLY(SIM_FZC_4, op[j])                                       \
      }                                                                       \
      if (clamp) {                                                            \
        CL(v0) CL(v1) CL(v2) CL(v3)                                           \
      }                                                                       \
      memcpy(o + i, &v0, sizeof v0);                                          \
      memcpy(o + i + 16, &v1, sizeof v1);                                     \
      memcpy(o + i + 32, &v2, sizeof v2);                                     \
      memcpy(o + i + 48, &v3, sizeof v3);                                     \
    }                                                                         \
    for (; i + 16 <= L; i += 16) {                                            \
      sim_fzc_v16 v, b;                                                       \
      memcpy(&v, x + i, sizeof v);                                            \
      for (int j = 0; j < n; j++) {                                           \
        memcpy(&b, bp[j] + i, sizeof b);                                      \
        SIM_FZC_APPLY(SIM_FZC_1, op[j])                                       \
      }                                                                       \
      if (clamp) CL(v)                                                        \
      memcpy(o + i, &v, sizeof v);                                            \
    }                                                                         \
    for (; i < L; i++) {                                                      \
      float v = x[i];                                                         \
      for (int j = 0; j < n; j++) {                                           \
        float b = bp[j][i];                                                   \
        SIM_FZC_APPLY(SIM_FZC_1, op[j])                                       \
      }                                                                       \
      if (clamp) {                                                            \
        if (lo_strict ? c->lo > v : c->lo >= v) v = c->lo;                    \
        if (hi_eq ? c->hi <= v : c->hi < v) v = c->hi;                        \
      }                                                                       \
      o[i] = v;                                                               \
    }                                                                         \
  }
SIM_FZ_CHAINK(port, SIM_FZC_CLV, SIM_FZC_NARROW)
#ifdef SIM_FZ_X86
SIM_FZ_CHAINK(avx2, SIM_FZC_CLV, SIM_FZC_NARROW)
SIM_FZ_CHAINK(avx512, SIM_FZC_CLK, SIM_FZC_WIDE)
#endif
#define SIM_FZ_HAVE_CHAIN 1
#endif

/* The chain's clamp bounds (from the splat tiles of scr; none: 0 and 0)
 * and their compare choices; 0 when a bound is NaN, which the chains'
 * kernels do not handle. */
static int sim_fz_chain_bounds(const sim_fz *z, const char *scr, float *lo,
                               float *hi, int *lo_strict, int *hi_eq) {
  *lo = *hi = 0;
  if (z->clo >= 0) {
    float b = *(const float *)(const void *)(scr + z->nodes[z->clo].off);
    *lo = z->cmm == 2 ? -INFINITY : b;
    *hi = z->cmm == 1   ? INFINITY
          : z->cmm == 2 ? b
                        : *(const float *)(const void *)(scr +
                                                         z->nodes[z->chi].off);
    if (*lo != *lo || *hi != *hi) return 0;
  }
  *lo_strict = *lo == 0 && signbit(*lo);
  *hi_eq = signbit(*hi) != 0;
  return 1;
}

/* The chain on elements [i0, i0 + L) into dst (leaf xv at xp, as
 * sim_fz_eval_x); 0 when it cannot run (a NaN bound): the caller
 * evaluates node by node. */
static int sim_fz_chain_eval(const sim_fz *z, void **vals, char *scr,
                             int64_t i0, int64_t L, void *dst, int32_t xv,
                             const void *xp) {
#ifdef SIM_FZ_HAVE_CHAIN
  sim_fzch c;
  const float *p[SIM_FZ_MAXN];
  c.n = z->nch;
  c.op = z->chop;
  c.clamp = z->clo >= 0;
  if (!sim_fz_chain_bounds(z, scr, &c.lo, &c.hi, &c.lo_strict, &c.hi_eq))
    return 0;
  for (int j = -1; j < c.n; j++) {
    int32_t k = j < 0 ? z->chx : z->charg[j];
    const sim_fznode *nd = &z->nodes[k];
    const void *q = nd->kind != SIM_FZ_FULL ? (const void *)(scr + nd->off)
                    : nd->val == xv ? xp
                    : (const char *)vals[nd->val] + (size_t)i0 * nd->es;
    if (nd->kind == SIM_FZ_GATHER) { /* in place when one run, else now */
      const char *src = (const char *)vals[nd->val];
      if ((p[k] = (const float *)(const void *)sim_fz_run_at(nd, src, i0, L)))
        continue;
      sim_fz_gather(nd, src, scr + nd->off, i0, L);
    }
    p[k] = (const float *)q;
  }
  for (int j = 0; j < c.n; j++) c.b[j] = p[z->charg[j]];
  int lv = sim_isa_level();
  (void)lv;
  SIM_FZ_PICK3(sim_fz_chain)(&c, p[z->chx], (float *)dst, L);
  return 1;
#else
  (void)z, (void)vals, (void)scr, (void)i0, (void)L, (void)dst, (void)xv;
  (void)xp;
  return 0;
#endif
}

/* Whether node k is read as one element only: a splat bound of the
 * clamp (which reads a splat bound's first element), no other node's
 * operand. */
static int sim_fz_bound_only(const sim_fz *z, int32_t k) {
  int uses = 0;
  for (int32_t i = 0; i < z->nn; i++) {
    const sim_fznode *nd = &z->nodes[i];
    for (int j = 0; j < nd->nargs; j++)
      if (nd->arg[j] == k)
        uses += nd->kind == SIM_FZ_CLAMP && j != 1 ? 0 : 1;
  }
  return uses == 0;
}

/* Fills the tiles of the splat and periodic leaves of one piece. */
static void sim_fz_splats(const sim_fz *z, void **vals, char *scr) {
  for (int32_t k = 0; k < z->nn; k++) {
    const sim_fznode *nd = &z->nodes[k];
    if (nd->kind == SIM_FZ_SPLAT)
      sim_fill_for(nd->es)(scr + nd->off,
                           (const char *)vals[nd->val] +
                               (size_t)nd->base * nd->es,
                           sim_fz_bound_only(z, k) ? 1 : z->tile);
    else if (nd->kind == SIM_FZ_PTILE)
      sim_fz_gather(nd, (const char *)vals[nd->val], scr + nd->off, 0,
                    z->tile < z->numel ? z->tile : z->numel);
  }
}

typedef struct sim_fzrun {
  const sim_fz *z;
  void **vals;
  char *scr;
  char *out;
  const char *init;
  int64_t per; /* work items per piece */
  int64_t items, np;
  const void *aux; /* a convolution with this epilogue (sim_fzdw) */
  const sim_gpost *post; /* that convolution applies it (sim_fzdw.post) */
} sim_fzrun;

static char *sim_fz_piece_scratch(const sim_fzrun *r, int64_t p) {
  return r->scr + (size_t)p * r->z->part_bytes;
}

/* A depthwise convolution whose result x a group reads as a whole leaf,
 * its only use (the aux of a run: see sim_run_fused_dw). */
typedef struct sim_fzdw {
  const sim_fz *z;
  int post;      /* the group is a chain the convolution's kernels apply */
  sim_step dw;   /* the convolution's step (sim_dw_by_position) */
  int32_t x;     /* its result */
  int32_t buf;   /* pseudo value: one tile of x per piece */
  int64_t O;     /* results per position: divides the tile */
  int64_t chunk; /* tiles convolved at once: a run of positions long
                    enough for the kernels' several-position loops */
  size_t xes, xtile; /* x's element size; bytes of one piece's tiles */
} sim_fzdw;

/* Elementwise root: piece p computes its range of output elements.  With
 * a depthwise producer (r->aux), each tile of its result is computed
 * first, into the piece's tile buffer, where the group reads it. */
/* Elements [lo, hi) of an elementwise root into r->out, tile by tile from
 * lo, with scratch scr (splat tiles filled); a depthwise producer (r->aux)
 * computes each tile of its result into xb first. */
static void sim_fz_ew_span(const sim_fzrun *r, char *scr, char *xb,
                           int64_t lo, int64_t hi) {
  const sim_fz *z = r->z;
  const sim_fzdw *d = (const sim_fzdw *)r->aux;
  int32_t x = d ? d->x : -1;
  size_t es = z->nodes[z->nn - 1].es;
  if (d && r->post) { /* in registers, straight into the result */
    sim_dw_positions(&d->dw, r->vals, lo / d->O, hi / d->O,
                     r->out + (size_t)lo * es, r->post);
    return;
  }
  const int64_t span = d ? d->chunk * z->tile : 0;
  const char *xt = xb;
  for (int64_t i = lo; i < hi; i += z->tile) {
    int64_t L = hi - i < z->tile ? hi - i : z->tile;
    char *dst = r->out + (size_t)i * es;
    if (d && (i - lo) % span == 0) { /* the next chunk of positions */
      int64_t e = hi - i < span ? hi : i + span;
      sim_dw_positions(&d->dw, r->vals, i / d->O, e / d->O, xb, NULL);
      xt = xb;
    } else if (d) {
      xt += (size_t)z->tile * d->xes;
    }
    if (!z->chain || !sim_fz_chain_eval(z, r->vals, scr, i, L, dst, x, xt))
      sim_fz_eval_x(z, r->vals, scr, i, L, dst, x, xt);
  }
}

static void sim_fz_ew_pieces(void *ctx, int64_t b, int64_t e) {
  const sim_fzrun *r = (const sim_fzrun *)ctx;
  const sim_fz *z = r->z;
  const sim_fzdw *d = (const sim_fzdw *)r->aux;
  for (int64_t p = b; p < e; p++) {
    char *scr = sim_fz_piece_scratch(r, p);
    char *xb = d ? (char *)r->vals[d->buf] + (size_t)p * d->xtile : NULL;
    int64_t lo = p * r->per * z->tile, hi = lo + r->per * z->tile;
    if (hi > z->numel) hi = z->numel;
    if (lo >= hi) continue;
    if (!r->post) sim_fz_splats(z, r->vals, scr); /* else read from piece 0 */
    sim_fz_ew_span(r, scr, xb, lo, hi);
  }
  if (z->stream) sim_copy_nt_done();
}

/* Pieces for n work items: several only for big loops. */
static int64_t sim_fz_pieces(const sim_fz *z, int64_t n) {
  return n < z->maxp ? (n < 1 ? 1 : n) : z->maxp;
}

static void sim_fz_go(sim_cx *cx, sim_fzrun *r, int64_t items,
                      sim_range_fn fn) {
  int64_t np = sim_fz_pieces(r->z, items);
  r->items = items;
  r->np = np;
  r->per = (items + np - 1) / np;
  if (np > 1) sim_parallel_for(cx, np, 1, fn, r);
  else fn(r, 0, 1);
}

/* Elementwise loops: pieces on several threads, else one (each piece
 * fills its splat and periodic tiles). */
static void sim_fz_go_ew(sim_cx *cx, sim_fzrun *r, int64_t tiles,
                         sim_range_fn fn) {
  if (cx && cx->tp && cx->tp->threads > 1) {
    sim_fz_go(cx, r, tiles, fn);
    return;
  }
  r->items = r->per = tiles;
  r->np = 1;
  fn(r, 0, 1);
}

/* The per-feature factors k of z's batch norm members (sim_fzbn). */
static void sim_fz_bn_prep(const sim_fz *z, void **vals) {
  for (int32_t j = 0; j < z->nbn; j++) {
    const sim_fzbn *e = &z->bn[j];
    const float *sc = (const float *)vals[e->scale];
    const float *var = (const float *)vals[e->var];
    float *k = (float *)vals[e->k];
    for (int64_t f = 0; f < e->F; f++)
      k[f] = (float)((double)sc[f] / sqrt((double)var[f] + e->eps));
  }
}

static xrt_status sim_run_fused(const sim_step *st, void **vals, sim_cx *cx) {
  const sim_fz *z = (const sim_fz *)st->data;
  if (z->inplace >= 0) vals[st->out[0]] = vals[z->inplace];
  if (z->numel == 0) return XRT_OK;
  sim_fz_bn_prep(z, vals);
  sim_fzrun r = {z, vals, (char *)vals[z->scratch], (char *)vals[st->out[0]],
                 NULL, 0, 0, 0, NULL, NULL};
  int64_t tiles = (z->numel + z->tile - 1) / z->tile;
  sim_fz_go_ew(cx, &r, tiles, sim_fz_ew_pieces);
  return XRT_OK;
}

static int64_t sim_fz_period(const sim_fznode *nd, int64_t numel);

/* Whether GATHER node nd reads one element for every element (a number
 * broadcast, not a constant's splat). */
static int sim_fz_number(const sim_fznode *nd) {
  for (int32_t k = 0; k < nd->rank; k++)
    if (nd->ss[k] != 0 && nd->dims[k] != 1) return 0;
  return 1;
}

/* The chain of z (sim_fz_post_fits) as a product's or a convolution's
 * epilogue, its tiles in scr (filled); 0 when it cannot be (a NaN bound
 * or hi = -0). */
static int sim_fz_post_of(const sim_fz *z, void **vals, const char *scr,
                          sim_gpost *po) {
  int lo_strict, hi_eq;
  po->n = z->nch;
  if (!sim_fz_chain_bounds(z, scr, &po->lo, &po->hi, &lo_strict, &hi_eq) ||
      (z->clo >= 0 && po->hi == 0 && hi_eq))
    return 0; /* a NaN bound, or hi = -0: min(hi, v) would keep v = +0 */
  po->has_lo = z->clo >= 0 && po->lo != -INFINITY;
  po->has_hi = z->clo >= 0 && po->hi != INFINITY;
  po->lo_pz = po->has_lo && po->lo == 0 && !lo_strict;
  for (int j = 0; j < z->nch; j++) {
    const sim_fznode *nd = &z->nodes[z->charg[j]];
    po->op[j] = z->chop[j];
    po->arg[j] = nd->kind == SIM_FZ_FULL    ? SIM_GPOST_FULL
                 : nd->kind == SIM_FZ_SPLAT ? SIM_GPOST_ONE
                 : nd->kind == SIM_FZ_PTILE
                     ? (sim_fz_period(nd, z->numel) == 1 ? SIM_GPOST_ONE
                                                         : SIM_GPOST_COL)
                 : sim_fz_number(nd) ? SIM_GPOST_ONE
                                     : SIM_GPOST_ROW;
    const char *src = (const char *)vals[nd->val];
    po->b[j] = (const float *)(const void *)(
        nd->kind == SIM_FZ_FULL     ? src
        : nd->kind == SIM_FZ_GATHER ? src + (size_t)nd->base * nd->es
                                    : scr + nd->off);
  }
  return 1;
}

/* ---- a depthwise convolution with its elementwise epilogue ---- */

/* The group reads the convolution's result x as a whole leaf, its only
 * use (sim_fzdw above): sim_fz_ew_pieces convolves each tile of positions
 * into a tile buffer (L1) and runs the group on it there, so x never goes
 * to memory.  The same kernels on the same elements: the bits of the two
 * steps.  A group that is a chain of column vectors and numbers starting
 * at x (batch norm and ReLU6) goes into the convolution's kernels instead
 * (sim_gpost), which apply it to the sums of four positions in registers
 * (MobileNetV2's 3x3 layer on 56x56x144 with its batch norm and ReLU6:
 * 155 -> 127 us, the convolution alone 101). */
static xrt_status sim_run_fused_dw(const sim_step *st, void **vals,
                                   sim_cx *cx) {
  const sim_fzdw *d = (const sim_fzdw *)st->data;
  const sim_fz *z = d->z;
  if (z->numel == 0) return XRT_OK;
  sim_fz_bn_prep(z, vals);
  sim_fzrun r = {z, vals, (char *)vals[z->scratch], (char *)vals[st->out[0]],
                 NULL, 0, 0, 0, d, NULL};
  sim_gpost po;
  if (d->post) { /* piece 0's tiles hold the operands for every piece */
    char *scr = sim_fz_piece_scratch(&r, 0);
    sim_fz_splats(z, vals, scr);
    if (sim_fz_post_of(z, vals, scr, &po)) r.post = &po;
  }
  sim_fz_go_ew(cx, &r, (z->numel + z->tile - 1) / z->tile, sim_fz_ew_pieces);
  return XRT_OK;
}

/* ---- a product with its elementwise epilogue ---- */

/* A product (sim_gemm_by_rows) whose result x a group reads as whole
 * leaves, its only use: the group's result takes x's memory, and each
 * lane runs the group over its rows of x as soon as they are done
 * (sim_fz_run_product), in place while they are in its cache, so x does
 * not go to memory and come back.  The same kernels on the same
 * elements: the bits of the two steps.  A group that is a chain starting
 * at x (batch norm and ReLU6, a bias and ReLU, a residual add) goes into
 * the product's micro-kernels instead (sim_gpost), which apply it to the
 * sums in registers (mobile of the model zoo on one thread: the sum of
 * its steps' best times 5.86 -> 5.36 ms; the chain's loop over rows of x
 * cost about 1.5 ns a vector of 16). */
typedef struct sim_fzgm {
  const sim_fz *z;
  sim_step gemm; /* the product's step */
  int32_t x;     /* its result */
  int64_t N;     /* elements per row of it */
  int post;      /* the group is a chain the product's kernels apply */
  /* the group's result is an entry result: the product writes into it
   * (the caller's buffer) instead of the group taking x's memory */
  int direct;
} sim_fzgm;

typedef struct sim_fzgrun {
  sim_fzrun r;
  int64_t N;
  unsigned char filled[SIM_FZ_PARTS]; /* lane's splat tiles are filled */
} sim_fzgrun;

/* Rows [m0, m1) of the product are final: the group over their elements,
 * with the lane's scratch (tiles from a row start: see sim_fz_gemm_fits). */
static void sim_fz_gemm_rows(void *ctx, int lane, int64_t m0, int64_t m1) {
  sim_fzgrun *g = (sim_fzgrun *)ctx;
  char *scr = sim_fz_piece_scratch(&g->r, lane);
  if (!g->filled[lane]) sim_fz_splats(g->r.z, g->r.vals, scr);
  g->filled[lane] = 1;
  sim_fz_ew_span(&g->r, scr, NULL, m0 * g->N, m1 * g->N);
}

/* The product's step: a product's, or a convolution's that is one panel
 * and one product of it (sim_cg_product). */
static const sim_step *sim_fz_product(const sim_step *cs) {
  const sim_step *p = sim_cg_product(cs);
  return p ? p : cs;
}

static int sim_fz_by_rows(const sim_step *cs, int64_t *M, int64_t *N,
                          int *lanes) {
  return sim_gemm_by_rows(sim_fz_product(cs), M, N, lanes);
}

/* Runs cs with epi or po (sim_gemm_run_packed_with).  A convolution made
 * in chunks (sim_cg_chunked) takes po, never epi: then it runs alone. */
static int sim_fz_run_product(const sim_step *cs, void **vals, sim_cx *cx,
                              sim_gemm_epi_fn epi, void *ctx,
                              const sim_gpost *po) {
  int64_t n;
  if (sim_cg_chunked(cs, &n)) {
    sim_cg_run_chunks(cs, vals, cx, epi ? NULL : po);
    return !epi;
  }
  if (sim_cg_product(cs)) return sim_cg_run_with(cs, vals, cx, epi, ctx, po);
  return sim_gemm_run_packed_with(cs, vals, cx, NULL, epi, ctx, po);
}

static xrt_status sim_run_fused_gemm(const sim_step *st, void **vals,
                                     sim_cx *cx) {
  const sim_fzgm *d = (const sim_fzgm *)st->data;
  const sim_fz *z = d->z;
  if (d->direct) vals[d->x] = vals[st->out[0]];
  else vals[st->out[0]] = vals[d->x]; /* the result is the product's memory */
  sim_fz_bn_prep(z, vals);
  sim_fzgrun g = {{z, vals, (char *)vals[z->scratch], (char *)vals[st->out[0]],
                   NULL, 0, 0, 0, NULL, NULL},
                  d->N,
                  {0}};
  if (d->post) { /* piece 0's tiles hold the operands for every lane */
    sim_gpost po;
    char *scr = sim_fz_piece_scratch(&g.r, 0);
    sim_fz_splats(z, vals, scr);
    if (sim_fz_post_of(z, vals, scr, &po) &&
        sim_fz_run_product(&d->gemm, vals, cx, NULL, NULL, &po))
      return XRT_OK;
  }
  if (sim_fz_run_product(&d->gemm, vals, cx, sim_fz_gemm_rows, &g, NULL) ||
      z->numel == 0)
    return XRT_OK;
  /* the lanes split the columns: the group afterwards, as a step */
  sim_fz_go_ew(cx, &g.r, (z->numel + z->tile - 1) / z->tile, sim_fz_ew_pieces);
  return XRT_OK;
}

/* ---- a Winograd or direct convolution with its elementwise epilogue ----
 * A group that is a chain (sim_gpost) on the result of a convolution of
 * conv_wino.c goes into its output transform, which applies it to the
 * results before it stores them (the group's result takes x's memory, as
 * with a product: sim_fzgm); the same operations on the same elements.
 * A call that runs the direct way instead (non-finite data) leaves x
 * plain: the group then runs over it, as a step of its own would.  One
 * of conv_direct.c applies the chain to each tile of results it sums. */
static xrt_status sim_run_fused_conv(const sim_step *st, void **vals,
                                     sim_cx *cx) {
  const sim_fzgm *d = (const sim_fzgm *)st->data;
  const sim_fz *z = d->z;
  if (d->direct) vals[d->x] = vals[st->out[0]];
  else vals[st->out[0]] = vals[d->x];
  sim_fz_bn_prep(z, vals);
  sim_fzrun r = {z, vals, (char *)vals[z->scratch], (char *)vals[st->out[0]],
                 NULL, 0, 0, 0, NULL, NULL};
  sim_gpost po;
  char *scr = sim_fz_piece_scratch(&r, 0);
  sim_fz_splats(z, vals, scr);
  int have = sim_fz_post_of(z, vals, scr, &po);
  int64_t N;
  int applied = sim_cdir_cols(&d->gemm, &N)
                    ? sim_cdir_run_post(&d->gemm, vals, cx, have ? &po : NULL)
                    : sim_wino_run_post(&d->gemm, vals, cx, have ? &po : NULL);
  if (applied && have)
    return XRT_OK;
  if (z->numel > 0)
    sim_fz_go_ew(cx, &r, (z->numel + z->tile - 1) / z->tile,
                 sim_fz_ew_pieces);
  return XRT_OK;
}

/* ---- fused reductions ---- */

/* Walks input elements [lo, hi) (lo at the start of a dimension-0 row) in
 * tiles, combining runs into the output. */
static void sim_fz_red_walk(const sim_fzrun *r, char *scr, int64_t lo,
                            int64_t hi) {
  const sim_fz *z = r->z;
  int last = z->rank - 1, vec = z->ostr[last] != 0;
  int64_t idx[XRT_MAX_RANK], rem = lo, o = 0;
  for (int k = last; k >= 0; k--) { /* o leaves out the last dimension */
    idx[k] = rem % z->dims[k];
    rem /= z->dims[k];
    if (k < last) o += idx[k] * z->ostr[k];
  }
  size_t ies = z->nodes[z->nn - 1].es, res = z->res;
  for (int64_t i = lo; i < hi;) {
    int64_t L = hi - i < z->tile ? hi - i : z->tile;
    const char *t = (const char *)sim_fz_eval(z, r->vals, scr, i, L, NULL);
    for (int64_t j = 0; j < L;) {
      int64_t seg = z->dims[last] - idx[last];
      if (seg > L - j) seg = L - j;
      if (vec)
        z->rfn(r->out + (size_t)(o + idx[last]) * res, t + (size_t)j * ies,
               seg, 1);
      else
        z->rfn(r->out + (size_t)o * res, t + (size_t)j * ies, seg, 0);
      j += seg;
      idx[last] += seg;
      if (idx[last] < z->dims[last]) continue;
      idx[last] = 0;
      for (int k = last - 1; k >= 0; k--) {
        idx[k]++;
        o += z->ostr[k];
        if (idx[k] < z->dims[k] || k == 0) break;
        o -= idx[k] * z->ostr[k];
        idx[k] = 0;
      }
    }
    i += L;
  }
}

/* Reduce whose dimension 0 is kept: pieces own ranges of it. */
static void sim_fz_red_rows(void *ctx, int64_t b, int64_t e) {
  const sim_fzrun *r = (const sim_fzrun *)ctx;
  int64_t row = r->z->numel / r->z->dims[0];
  for (int64_t p = b; p < e; p++) {
    int64_t lo = p * r->per, hi = lo + r->per;
    if (hi > r->items) hi = r->items;
    if (lo >= hi) continue;
    char *scr = sim_fz_piece_scratch(r, p);
    sim_fz_splats(r->z, r->vals, scr);
    sim_fz_red_walk(r, scr, lo * row, hi * row);
  }
}

/* Columns per block of a reduce over the rows: whole rows stream best
 * while their accumulators stay in L1/L2. */
#define SIM_FZ_COLBLK 8192

/* [K, C] reduced over K: pieces own blocks of columns and add each row's
 * block into the outputs, which stay in cache. */
static void sim_fz_red_cols(void *ctx, int64_t b, int64_t e) {
  const sim_fzrun *r = (const sim_fzrun *)ctx;
  const sim_fz *z = r->z;
  int64_t K = z->dims[0], C = z->dims[1];
  size_t res = z->res;
  for (int64_t p = b; p < e; p++) {
    char *scr = sim_fz_piece_scratch(r, p);
    sim_fz_splats(z, r->vals, scr);
    for (int64_t blk = p * r->per; blk < (p + 1) * r->per && blk < r->items;
         blk++) {
      int64_t c0 = blk * SIM_FZ_COLBLK, c1 = c0 + SIM_FZ_COLBLK;
      if (c1 > C) c1 = C;
      int64_t k = 0;
      if (z->add4) { /* plain input: four rows at a time */
        const char *in = (const char *)r->vals[z->nodes[0].val];
        for (; k + 4 <= K; k += 4)
          z->add4(r->out + (size_t)c0 * res, in + (size_t)(k * C + c0) * res,
                  (size_t)C * res, c1 - c0);
      }
      for (; k < K; k++)
        for (int64_t c = c0; c < c1; c += z->tile) {
          int64_t len = c1 - c < z->tile ? c1 - c : z->tile;
          const void *t = sim_fz_eval(z, r->vals, scr, k * C + c, len, NULL);
          z->rfn(r->out + (size_t)c * res, t, len, 1);
        }
    }
  }
}

/* A piece's own accumulator for full reductions (after the tiles). */
static char *sim_fz_piece_acc(const sim_fzrun *r, int64_t p) {
  return r->scr + (size_t)r->z->maxp * r->z->part_bytes + 16 * (size_t)p;
}

/* Reduce to one element: piece p folds its range of tiles into its own
 * accumulator, seeded with its first element; the pieces are combined in
 * order afterwards (a reassociation, as XLA's parallel reductions). */
static void sim_fz_red_all(void *ctx, int64_t b, int64_t e) {
  const sim_fzrun *r = (const sim_fzrun *)ctx;
  const sim_fz *z = r->z;
  size_t ies = z->nodes[z->nn - 1].es;
  for (int64_t p = b; p < e; p++) {
    int64_t lo = p * r->per * z->tile, hi = lo + r->per * z->tile;
    if (hi > z->numel) hi = z->numel;
    if (lo >= hi) continue;
    char *scr = sim_fz_piece_scratch(r, p), *acc = sim_fz_piece_acc(r, p);
    sim_fz_splats(z, r->vals, scr);
    for (int64_t i = lo; i < hi; i += z->tile) {
      int64_t L = hi - i < z->tile ? hi - i : z->tile;
      const char *t = (const char *)sim_fz_eval(z, r->vals, scr, i, L, NULL);
      if (i == lo) {
        memcpy(acc, t, ies);
        t += ies;
        L--;
      }
      if (L > 0) z->rfn(acc, t, L, 0);
    }
  }
}

static xrt_status sim_run_fused_reduce(const sim_step *st, void **vals,
                                       sim_cx *cx) {
  const sim_fz *z = (const sim_fz *)st->data;
  sim_fzrun r = {z, vals, (char *)vals[z->scratch], (char *)vals[st->out[0]],
                 (const char *)vals[st->in[0]], 0, 0, 0, NULL, NULL};
  z->fill(r.out, r.init, z->out_numel);
  if (z->numel == 0) return XRT_OK;
  sim_fz_bn_prep(z, vals);
  if (z->rank == 2 && z->ostr[0] == 0 && z->ostr[1] == 1) {
    sim_fz_go(cx, &r, (z->dims[1] + SIM_FZ_COLBLK - 1) / SIM_FZ_COLBLK,
              sim_fz_red_cols);
  } else if (z->ostr[0] != 0) {
    sim_fz_go(cx, &r, z->dims[0], sim_fz_red_rows);
  } else if (z->rank == 1 && z->numel >= SIM_FZ_PAR_MIN) {
    sim_fz_go(cx, &r, (z->numel + z->tile - 1) / z->tile, sim_fz_red_all);
    for (int64_t p = 0; p < r.np; p++)
      if (p * r.per * z->tile < z->numel)
        z->rfn(r.out, sim_fz_piece_acc(&r, p), 1, 0);
  } else {
    char *scr = sim_fz_piece_scratch(&r, 0);
    sim_fz_splats(z, vals, scr);
    sim_fz_red_walk(&r, scr, 0, z->numel);
  }
  return XRT_OK;
}

/* ---- grouping ---- */

/* Uses and defining ops of a function's values, counted once. */
typedef struct sim_fzinfo {
  int32_t n;
  int32_t *nuse;
  const xrt_ir_op **def;
} sim_fzinfo;

static void sim_fz_count(sim_fzinfo *zi, const xrt_ir_region *r, int depth) {
  for (int32_t i = 0; i < r->num_ops; i++) {
    const xrt_ir_op *op = &r->ops[i];
    for (int32_t j = 0; j < op->num_operands; j++)
      if (op->operands[j] >= 0 && op->operands[j] < zi->n)
        zi->nuse[op->operands[j]]++;
    for (int32_t j = 0; j < op->num_results; j++)
      if (op->results[j] >= 0 && op->results[j] < zi->n)
        zi->def[op->results[j]] = op;
    for (int32_t j = 0; j < op->num_regions && depth < 256; j++)
      sim_fz_count(zi, &op->regions[j], depth + 1);
  }
}

SIM_PRIVATE void sim_fz_release(sim_fcc *fc) {
  sim_fzinfo *zi = (sim_fzinfo *)fc->fz;
  const xrt_allocator *al = &fc->cc->al;
  if (!zi) return;
  al->free(al->self, zi->nuse);
  al->free(al->self, (void *)zi->def);
  al->free(al->self, zi);
  fc->fz = NULL;
}

static sim_fzinfo *sim_fz_info(sim_fcc *fc) {
  if (fc->fz) return (sim_fzinfo *)fc->fz;
  const xrt_allocator *al = &fc->cc->al;
  int32_t n = fc->f->num_values;
  sim_fzinfo *zi = (sim_fzinfo *)al->alloc(al->self, sizeof *zi);
  if (!zi) return NULL;
  zi->n = n;
  zi->nuse = (int32_t *)al->alloc(al->self, sizeof(int32_t) * (size_t)n + 1);
  zi->def = (const xrt_ir_op **)al->alloc(al->self,
                                          sizeof(void *) * (size_t)n + 1);
  fc->fz = zi;
  if (!zi->nuse || !zi->def) {
    sim_fz_release(fc);
    return NULL;
  }
  memset(zi->nuse, 0, sizeof(int32_t) * (size_t)n);
  memset((void *)zi->def, 0, sizeof(void *) * (size_t)n);
  sim_fz_count(zi, &fc->f->body, 0);
  return zi;
}

static const xrt_ir_type *sim_fz_type(const sim_fcc *fc, int32_t id) {
  if (id < 0 || id >= fc->f->num_values) return NULL;
  const xrt_ir_type *t = &fc->f->value_types[id];
  return t->kind == XRT_TYPE_TENSOR && !t->quant && sim_esize(t->shape.dtype)
             ? t
             : NULL;
}

static int sim_fz_same_shape(const xrt_shape *a, const xrt_shape *b) {
  if (a->rank != b->rank) return 0;
  for (int32_t k = 0; k < a->rank; k++)
    if (a->dims[k] != b->dims[k]) return 0;
  return 1;
}

/* The reduce root: one scalar init, a body with a fast kernel, and
 * dimensions in range. */
static int sim_fz_reduce_fits(const sim_fcc *fc, const xrt_ir_op *op,
                              const xrt_shape *rs) {
  (void)rs;
  if (op->num_operands != 2 || op->num_regions != 1 ||
      sim_shape(fc, op->operands[1])->rank != 0 ||
      !sim_reduce_fast_body(fc, op))
    return 0;
  const xrt_ir_attr *a = sim_attr(op, "dimensions", XRT_ATTR_INTS);
  if (!a) return 0;
  const xrt_shape *in = sim_shape(fc, op->operands[0]);
  for (int64_t j = 0; j < a->n; j++)
    if (a->ints[j] < 0 || a->ints[j] >= in->rank) return 0;
  return 1;
}

/* The element types the fused loops have kernels for. */
static int sim_fz_ew_type(xrt_dtype t) {
  enum sim_ew_class c = sim_ew_class(t);
  return c != SIM_EWC_NONE && c != SIM_EWC_MINIFLOAT;
}

static int sim_fz_ew_fits(const sim_fcc *fc, const xrt_ir_op *op,
                          const xrt_shape *rs) {
  int arity = sim_op(op->code)->ew_arity;
  if (op->num_operands != arity) return 0;
  for (int32_t j = 0; j < arity; j++) {
    const xrt_shape *s = sim_shape(fc, op->operands[j]);
    if (!sim_fz_ew_type(s->dtype) || !sim_fz_same_shape(s, rs)) return 0;
  }
  return sim_fz_ew_type(rs->dtype);
}

static int sim_fz_select_fits(const sim_fcc *fc, const xrt_ir_op *op,
                              const xrt_shape *rs) {
  if (op->num_operands != 3) return 0;
  const xrt_shape *p = sim_shape(fc, op->operands[0]);
  return p->dtype == XRT_PRED && sim_fz_sel_for(sim_esize(rs->dtype)) &&
         (p->rank == 0 || sim_fz_same_shape(p, rs)) &&
         sim_fz_same_shape(sim_shape(fc, op->operands[1]), rs) &&
         sim_fz_same_shape(sim_shape(fc, op->operands[2]), rs);
}

static int sim_fz_clamp_fits(const sim_fcc *fc, const xrt_ir_op *op,
                             const xrt_shape *rs) {
  if (op->num_operands != 3 || !sim_clamp_for(rs->dtype) ||
      !sim_fz_same_shape(sim_shape(fc, op->operands[1]), rs))
    return 0;
  for (int j = 0; j < 3; j += 2) {
    const xrt_shape *b = sim_shape(fc, op->operands[j]);
    if (b->rank != 0 && !sim_fz_same_shape(b, rs)) return 0;
  }
  return 1;
}

static int sim_fz_reshape_fits(const sim_fcc *fc, const xrt_ir_op *op,
                               const xrt_shape *rs) {
  return op->num_operands == 1 &&
         sim_bytes(sim_shape(fc, op->operands[0])) == sim_bytes(rs);
}

/* The view ops: the strides ss (by dimension of the result, o) at which
 * op reads its operand in (whose own strides are ist); 0 if its
 * attributes or shapes do not allow that. */
static int sim_fz_bcast_in_dim_strides(const xrt_ir_op *op,
                                       const xrt_shape *in,
                                       const xrt_shape *o,
                                       const int64_t *ist, int64_t *ss) {
  const xrt_ir_attr *a = sim_attr(op, "broadcast_dimensions", XRT_ATTR_INTS);
  if (!a || a->n != in->rank) return 0;
  for (int64_t i = 0; i < a->n; i++) {
    if (a->ints[i] < 0 || a->ints[i] >= o->rank ||
        (in->dims[i] != 1 && in->dims[i] != o->dims[a->ints[i]]))
      return 0;
    if (in->dims[i] != 1) ss[a->ints[i]] = ist[i];
  }
  return 1;
}

static int sim_fz_bcast_strides(const xrt_shape *in, const xrt_shape *o,
                                const int64_t *ist, int64_t *ss) {
  if (in->rank > o->rank) return 0;
  int32_t lead = o->rank - in->rank;
  for (int32_t i = 0; i < in->rank; i++) {
    if (in->dims[i] != o->dims[lead + i]) return 0;
    ss[lead + i] = in->dims[i] == 1 ? 0 : ist[i];
  }
  return 1;
}

static int sim_fz_transpose_strides(const xrt_ir_op *op, const xrt_shape *in,
                                    const xrt_shape *o, const int64_t *ist,
                                    int64_t *ss) {
  const xrt_ir_attr *a = sim_attr(op, "permutation", XRT_ATTR_INTS);
  if (!a || a->n != in->rank || in->rank != o->rank) return 0;
  for (int64_t k = 0; k < a->n; k++) {
    if (a->ints[k] < 0 || a->ints[k] >= in->rank ||
        in->dims[a->ints[k]] != o->dims[k])
      return 0;
    ss[k] = ist[a->ints[k]];
  }
  return 1;
}

/* A slice as a gather: start offset *base, strides ist times its steps;
 * 0 if its attributes do not fit (its own lowering reports why) or its
 * innermost step is not 1 (read element by element: the copy is faster). */
static int sim_fz_slice_strides(const xrt_ir_op *op, const xrt_shape *in,
                                const xrt_shape *o, const int64_t *ist,
                                int64_t *ss, int64_t *base) {
  const xrt_ir_attr *st = sim_attr(op, "start_indices", XRT_ATTR_INTS);
  const xrt_ir_attr *lt = sim_attr(op, "limit_indices", XRT_ATTR_INTS);
  const xrt_ir_attr *sp = sim_attr(op, "strides", XRT_ATTR_INTS);
  if (!st || !lt || st->n != in->rank || lt->n != in->rank ||
      (sp && sp->n != in->rank) || o->rank != in->rank || in->rank < 1 ||
      (sp && sp->ints[in->rank - 1] != 1)) /* strided rows: a copy */
    return 0;
  *base = 0;
  for (int32_t k = 0; k < in->rank; k++) {
    int64_t s0 = st->ints[k], step = sp ? sp->ints[k] : 1;
    if (s0 < 0 || step < 1 || s0 > in->dims[k] || o->dims[k] < 0 ||
        (o->dims[k] && s0 + (o->dims[k] - 1) * step >= in->dims[k]))
      return 0;
    *base += s0 * ist[k];
    ss[k] = ist[k] * step;
  }
  return 1;
}

/* A view op (SIM_FUSE_VIEW) as the strides of a gather from its operand
 * (zero: a dimension it broadcasts) from element *base; 0 if it does not
 * fit. */
static int sim_fz_view_strides(const sim_fcc *fc, const xrt_ir_op *op,
                               int64_t ss[XRT_MAX_RANK], int64_t *base) {
  *base = 0;
  if (op->num_operands != 1) return 0;
  const xrt_shape *in = sim_shape(fc, op->operands[0]);
  const xrt_shape *o = sim_shape(fc, op->results[0]);
  int64_t ist[XRT_MAX_RANK];
  memset(ss, 0, sizeof *ss * XRT_MAX_RANK);
  sim_strides(in, ist);
  switch (op->code) {
  case XRT_OP_SLICE: return sim_fz_slice_strides(op, in, o, ist, ss, base);
  case XRT_OP_BROADCAST_IN_DIM:
    return sim_fz_bcast_in_dim_strides(op, in, o, ist, ss);
  case XRT_OP_BROADCAST: return sim_fz_bcast_strides(in, o, ist, ss);
  case XRT_OP_TRANSPOSE: return sim_fz_transpose_strides(op, in, o, ist, ss);
  default: return 0;
  }
}

/* batch_norm_inference on f32 (sim_fzbn): x of the result's shape, four
 * vectors of its features. */
static int sim_fz_bn_fits(const sim_fcc *fc, const xrt_ir_op *op,
                          const xrt_shape *rs) {
  const xrt_ir_attr *fi = sim_attr(op, "feature_index", XRT_ATTR_INT);
  if (op->num_operands != 5 || rs->dtype != XRT_F32 || !fi || fi->i < 0 ||
      fi->i >= rs->rank || !sim_fz_same_shape(sim_shape(fc, op->operands[0]),
                                              rs))
    return 0;
  for (int32_t j = 1; j < 5; j++) {
    const xrt_shape *v = sim_shape(fc, op->operands[j]);
    if (v->dtype != XRT_F32 || v->rank != 1 || v->dims[0] != rs->dims[fi->i])
      return 0;
  }
  return 1;
}

static int sim_fz_view_fits(const sim_fcc *fc, const xrt_ir_op *op,
                            const xrt_shape *rs) {
  int64_t ss[XRT_MAX_RANK], base;
  (void)rs;
  return sim_fz_view_strides(fc, op, ss, &base);
}

/* Whether op, of fusion kind k, can be fused: its types and shapes are
 * ones the fused loops handle (by kind). */
static int (*const sim_fz_fits[])(const sim_fcc *fc, const xrt_ir_op *op,
                                  const xrt_shape *rs) = {
    [SIM_FUSE_EW] = sim_fz_ew_fits,
    [SIM_FUSE_SELECT] = sim_fz_select_fits,
    [SIM_FUSE_CLAMP] = sim_fz_clamp_fits,
    [SIM_FUSE_RESHAPE] = sim_fz_reshape_fits,
    [SIM_FUSE_VIEW] = sim_fz_view_fits,
    [SIM_FUSE_REDUCE] = sim_fz_reduce_fits,
    [SIM_FUSE_BN] = sim_fz_bn_fits};

/* How op takes part in fusion (SIM_FUSE_NONE: not at all): its kind in
 * the op table, if its values are plain tensors that fit the kind. */
static enum sim_fuse_kind sim_fz_kind(const sim_fcc *fc, const xrt_ir_op *op) {
  enum sim_fuse_kind k = sim_op(op->code)->fuse;
  if (k == SIM_FUSE_NONE || op->num_results != 1) return SIM_FUSE_NONE;
  const xrt_ir_type *rt = sim_fz_type(fc, op->results[0]);
  if (!rt) return SIM_FUSE_NONE;
  for (int32_t j = 0; j < op->num_operands; j++)
    if (!sim_fz_type(fc, op->operands[j])) return SIM_FUSE_NONE;
  if (k != SIM_FUSE_REDUCE && op->num_regions) return SIM_FUSE_NONE;
  return sim_fz_fits[k](fc, op, &rt->shape) ? k : SIM_FUSE_NONE;
}

/* Operand j of a member of kind k is computed inside the group when its
 * producer is absorbed (views and a reduce's init read materialized
 * values). */
static int sim_fz_fusable_operand(enum sim_fuse_kind k, int32_t j) {
  return k == SIM_FUSE_EW || k == SIM_FUSE_SELECT || k == SIM_FUSE_CLAMP ||
         ((k == SIM_FUSE_RESHAPE || k == SIM_FUSE_REDUCE ||
           k == SIM_FUSE_BN) && j == 0);
}

/* Index of op in block r, or -1. */
static int32_t sim_fz_index(const xrt_ir_region *r, const xrt_ir_op *op) {
  if (!op || op < r->ops || op >= r->ops + r->num_ops) return -1;
  return (int32_t)(op - r->ops);
}

static int64_t sim_fz_space(const sim_fcc *fc, const xrt_ir_op *root,
                            enum sim_fuse_kind kind) {
  return sim_numel(sim_shape(fc, kind == SIM_FUSE_REDUCE ? root->operands[0]
                                                       : root->results[0]));
}

/* Forms the group rooted at op ri: grp[i] = ri for its members. */
static void sim_fz_group(const sim_fcc *fc, const sim_fzinfo *zi,
                         const xrt_ir_region *r, int32_t *grp, uint8_t *kinds,
                         int32_t ri) {
  int32_t mem[SIM_FZ_MAXOPS], nm = 1;
  int64_t space = sim_fz_space(fc, &r->ops[ri], kinds[ri]);
  mem[0] = ri;
  grp[ri] = ri;
  /* Members join at the end and are scanned in the same pass; a second
   * pass takes producers whose other users joined after them. */
  for (int pass = 0, changed = 1; pass < 2 && changed; pass++) {
    changed = 0;
    for (int32_t m = 0; m < nm && nm < SIM_FZ_MAXOPS; m++) {
      const xrt_ir_op *op = &r->ops[mem[m]];
      for (int32_t j = 0; j < op->num_operands && nm < SIM_FZ_MAXOPS; j++) {
        int32_t v = op->operands[j];
        if (!sim_fz_fusable_operand(kinds[mem[m]], j) || v < 0 || v >= zi->n)
          continue;
        int32_t pi = sim_fz_index(r, zi->def[v]);
        if (pi < 0 || grp[pi] != -1 || kinds[pi] == SIM_FUSE_NONE ||
            kinds[pi] == SIM_FUSE_REDUCE ||
            sim_numel(sim_shape(fc, v)) != space)
          continue;
        /* v's one use is this operand; else count its uses in the group */
        int32_t uses = zi->nuse[v] == 1, single = uses;
        for (int32_t q = 0; q < nm && !single; q++) {
          const xrt_ir_op *u = &r->ops[mem[q]];
          for (int32_t t = 0; t < u->num_operands; t++)
            uses += u->operands[t] == v &&
                    sim_fz_fusable_operand(kinds[mem[q]], t);
        }
        if (uses != zi->nuse[v]) continue;
        grp[pi] = ri;
        mem[nm++] = pi;
        changed = 1;
      }
    }
  }
  if (nm == 1 && kinds[ri] != SIM_FUSE_REDUCE) grp[ri] = -1;
}

/* Appends block grouping grp (n ops) to the executable's record, which
 * executable_serialize stores so that a load need not search again. */
static void sim_fz_record(sim_fcc *fc, const int32_t *grp, int32_t n) {
  sim_exe *e = fc->cc->exe;
  sim_vec *v = &e->fzrec;
  const xrt_allocator *al = &fc->cc->al;
  if (e->fzrec_lost) return;
  if (!grp || n > INT32_MAX - 1 - v->n) {
    e->fzrec_lost = 1;
    return;
  }
  if (n + 1 > v->cap - v->n) {
    int32_t cap = v->cap ? v->cap : 256;
    while (cap - v->n < n + 1 && cap <= INT32_MAX / 2) cap *= 2;
    char *p = cap - v->n >= n + 1
                  ? (char *)al->alloc(al->self, sizeof(int32_t) * (size_t)cap)
                  : NULL;
    if (!p) {
      e->fzrec_lost = 1;
      return;
    }
    if (v->n) memcpy(p, v->p, sizeof(int32_t) * (size_t)v->n);
    al->free(al->self, v->p);
    v->p = p;
    v->cap = cap;
    v->es = sizeof(int32_t);
  }
  int32_t *w = (int32_t *)(void *)v->p + v->n;
  w[0] = n;
  memcpy(w + 1, grp, sizeof(int32_t) * (size_t)n);
  v->n += n + 1;
}

/* Whether grouping grp of block r is one the fused lowering can take:
 * groups whose members come before their root, ops of fusable kinds over
 * the root's loop space, at most SIM_FZ_MAXOPS ops a group, and every use
 * of a member's value an operand that the group computes inside (so each
 * member is reached from its root, and no value the group does not
 * materialize is read elsewhere).  Checks what sim_fz_group ensures; kinds
 * are set for the grouped ops; scratch holds 2 n ints. */
static int sim_fz_grouping_ok(const sim_fcc *fc, const sim_fzinfo *zi,
                              const xrt_ir_region *r, const int32_t *grp,
                              uint8_t *kinds, int32_t *scratch) {
  int32_t n = r->num_ops - 1, *size = scratch, *inside = scratch + n;
  memset(scratch, 0, sizeof(int32_t) * 2 * (size_t)n);
  for (int32_t i = 0; i < n; i++) {
    kinds[i] = 0;
    if (grp[i] == -1) continue;
    if (grp[i] < i || grp[i] >= n || grp[grp[i]] != grp[i]) return 0;
    kinds[i] = (uint8_t)sim_fz_kind(fc, &r->ops[i]);
    if (++size[grp[i]] > SIM_FZ_MAXOPS) return 0;
  }
  for (int32_t i = 0; i < n; i++) /* roots first: members use their space */
    if (grp[i] == i &&
        (kinds[i] == SIM_FUSE_NONE || kinds[i] == SIM_FUSE_VIEW))
      return 0;
  for (int32_t i = 0; i < n; i++) {
    int32_t g = grp[i];
    if (g == -1) continue;
    enum sim_fuse_kind k = kinds[i];
    if (g != i && (k == SIM_FUSE_NONE || k == SIM_FUSE_REDUCE)) return 0;
    const xrt_ir_op *op = &r->ops[i];
    if (g != i && sim_numel(sim_shape(fc, op->results[0])) !=
                      sim_fz_space(fc, &r->ops[g], kinds[g]))
      return 0;
    for (int32_t j = 0; j < op->num_operands; j++) {
      int32_t v = op->operands[j];
      if (!sim_fz_fusable_operand(k, j) || v < 0 || v >= zi->n) continue;
      int32_t p = sim_fz_index(r, zi->def[v]);
      if (p >= 0 && p != g && grp[p] == g) inside[p]++;
    }
  }
  for (int32_t i = 0; i < n; i++)
    if (grp[i] != -1 && grp[i] != i &&
        inside[i] != zi->nuse[r->ops[i].results[0]])
      return 0;
  return 1;
}

/* Block r's grouping from serialized bytes being loaded, into grp: 1 when
 * taken, 0 when none is given (the analysis runs), -1 when it does not
 * fit the block (the load is refused: forged or damaged bytes), -2 when
 * out of memory. */
static int sim_fz_replay(sim_fcc *fc, const sim_fzinfo *zi,
                         const xrt_ir_region *r, int32_t *grp,
                         uint8_t *kinds) {
  sim_cc *cc = fc->cc;
  int32_t n = r->num_ops - 1;
  if (!cc->fzin) return 0;
  if (cc->fzin_n - cc->fzin_at < 1 ||
      cc->fzin[cc->fzin_at] != n || cc->fzin_n - cc->fzin_at - 1 < n)
    return -1;
  memcpy(grp, cc->fzin + cc->fzin_at + 1, sizeof(int32_t) * (size_t)n);
  cc->fzin_at += n + 1;
  const xrt_allocator *al = &cc->al;
  int32_t *scratch = (int32_t *)al->alloc(al->self,
                                          sizeof(int32_t) * 2 * (size_t)n);
  if (!scratch) return -2;
  int ok = sim_fz_grouping_ok(fc, zi, r, grp, kinds, scratch);
  al->free(al->self, scratch);
  return ok ? 1 : -1;
}

/* Groups block r's ops: grp[i] = -1 lowers op i alone, i: op i is a root,
 * else the root it is absorbed into.  NULL when fusion does not apply (or
 * given decisions do not fit: cc->fz_bad).  A load of serialized bytes
 * takes the decisions they carry, checked (sim_fz_replay); each grouping
 * is recorded for executable_serialize. */
static int32_t *sim_fz_plan_block(sim_fcc *fc, const xrt_ir_region *r) {
  const xrt_allocator *al = &fc->cc->al;
  if (r->num_ops < 3 || sim_fz_disabled()) return NULL;
  sim_fzinfo *zi = sim_fz_info(fc);
  int32_t n = r->num_ops - 1;
  int32_t *grp = (int32_t *)al->alloc(al->self, sizeof(int32_t) * (size_t)n);
  uint8_t *kinds = (uint8_t *)al->alloc(al->self, (size_t)n);
  if (!zi || !grp || !kinds) {
    al->free(al->self, grp);
    al->free(al->self, kinds);
    fc->cc->exe->fzrec_lost = 1;
    if (fc->cc->fzin) fc->cc->fz_bad = 2; /* cannot follow them */
    return NULL;
  }
  int given = sim_fz_replay(fc, zi, r, grp, kinds);
  if (given < 0) {
    fc->cc->fz_bad = -given;
    al->free(al->self, grp);
    al->free(al->self, kinds);
    return NULL;
  }
  if (!given) {
    for (int32_t i = 0; i < n; i++) {
      grp[i] = -1;
      kinds[i] = (uint8_t)sim_fz_kind(fc, &r->ops[i]);
    }
    for (int32_t i = n - 1; i >= 0; i--)
      if (grp[i] == -1 && kinds[i] != SIM_FUSE_NONE &&
          kinds[i] != SIM_FUSE_VIEW)
        sim_fz_group(fc, zi, r, grp, kinds, i);
  }
  al->free(al->self, kinds);
  sim_fz_record(fc, grp, n);
  return grp;
}

/* ---- building the fused step ---- */

typedef struct sim_fzb {
  sim_fcc *fc;
  const xrt_ir_region *r;
  const int32_t *grp;
  int32_t root;
  const xrt_shape *space;
  sim_fz *z;
  sim_fznode nodes[SIM_FZ_MAXN];
  int32_t vids[SIM_FZ_MAXN]; /* nodes[k].vid, scanned to share nodes */
  /* dims and ss of the gather nodes built so far (at most one per node,
   * and one node beyond SIM_FZ_MAXN before "too big" is noticed) */
  int64_t gbuf[(SIM_FZ_MAXN + 2) * 2 * XRT_MAX_RANK];
  size_t gused;
  int32_t leaves[SIM_FZ_MAXN], nleaves;
  int32_t minp; /* pieces at least (a convolution runs in them too) */
  int cached;    /* the result is written over lines in cache: no streaming */
  sim_fzbn bn[SIM_FZ_MAXOPS]; /* batch norm members, k still unset */
  int32_t bnode[SIM_FZ_MAXOPS]; /* the node reading each one's k */
  int32_t nbn;
} sim_fzb;

static xrt_status sim_fz_node(sim_fzb *b, int32_t v, int32_t *out);

/* A GATHER node of element stride map ss over the space (base offset). */
static void sim_fz_gather_init(sim_fzb *b, sim_fznode *nd,
                               const xrt_shape *space, const int64_t *ss,
                               int64_t base) {
  int64_t dims[XRT_MAX_RANK], cs[XRT_MAX_RANK];
  int32_t rank = sim_coalesce_dims(space, ss, dims, cs);
  assert(b->gused + 2 * (size_t)XRT_MAX_RANK <=
         sizeof b->gbuf / sizeof b->gbuf[0]);
  int64_t *g = b->gbuf + b->gused;
  memcpy(g, dims, sizeof *g * (size_t)rank);
  memcpy(g + rank, cs, sizeof *g * (size_t)rank);
  b->gused += 2 * (size_t)rank;
  nd->rank = rank;
  nd->dims = g;
  nd->ss = g + rank;
  nd->base = base;
}

static int sim_fz_all_zero(const sim_fznode *nd) {
  for (int32_t k = 0; k < nd->rank; k++)
    if (nd->ss[k] && nd->dims[k] > 1) return 0;
  return 1;
}

/* The view op (broadcast_in_dim, broadcast, transpose) as a GATHER (its
 * kind says it fits: sim_fz_view_strides succeeds). */
static void sim_fz_view(sim_fzb *b, const xrt_ir_op *op, sim_fznode *nd) {
  int64_t ss[XRT_MAX_RANK], base;
  sim_fz_view_strides(b->fc, op, ss, &base);
  nd->kind = SIM_FZ_GATHER;
  nd->val = op->operands[0];
  sim_fz_gather_init(b, nd, sim_shape(b->fc, op->results[0]), ss, base);
  if (sim_fz_all_zero(nd)) nd->kind = SIM_FZ_SPLAT;
}

static xrt_status sim_fz_leaf(sim_fzb *b, int32_t v, sim_fznode *nd) {
  int64_t n = sim_numel(sim_shape(b->fc, v)), space = sim_numel(b->space);
  nd->val = v;
  if (n == space) {
    nd->kind = SIM_FZ_FULL;
  } else if (n == 1) {
    int64_t ss[XRT_MAX_RANK] = {0};
    nd->kind = SIM_FZ_SPLAT;
    sim_fz_gather_init(b, nd, b->space, ss, 0);
  } else {
    return sim_fail(b->fc->cc->err, XRT_INTERNAL, "@%s: fused operand %d has "
                    "%lld elements in a loop over %lld", b->fc->f->name,
                    (int)v, (long long)n, (long long)space);
  }
  b->leaves[b->nleaves++] = v;
  return XRT_OK;
}

/* The elementwise kernel of a member op (with its context kept). */
/* What an element of op costs, in plain ops: elementary functions take
 * tens of instructions an element, so loops of them are worth cutting
 * among threads at fewer elements (sim_fz_layout). */
static int64_t sim_fz_op_cost(xrt_opcode code) {
  switch (code) {
  case XRT_OP_EXPONENTIAL: case XRT_OP_EXPONENTIAL_MINUS_ONE:
  case XRT_OP_LOG: case XRT_OP_LOG_PLUS_ONE: case XRT_OP_LOGISTIC:
  case XRT_OP_TANH: case XRT_OP_SINE: case XRT_OP_COSINE: case XRT_OP_TAN:
  case XRT_OP_POWER: case XRT_OP_ATAN2: case XRT_OP_CBRT:
    return 16;
  default:
    return 1;
  }
}

static xrt_status sim_fz_ew(sim_fzb *b, const xrt_ir_op *op, sim_fznode *nd) {
  sim_fcc *fc = b->fc;
  char why[512];
  int owned = 0;
  why[0] = 0;
  const xrt_allocator *al = &fc->cc->al;
  sim_ew_fn fn = sim_ew_kernel(al, fc->f, op, &nd->ctx, &owned, why,
                               sizeof why);
  if (!fn && owned < 0) return sim_oom(fc);
  if (!fn)
    return sim_fail_op(fc->cc->err, op, XRT_UNIMPLEMENTED, "%s",
                       why[0] ? why : "elementwise op not supported");
  if (owned && nd->ctx) {
    void **slot = (void **)sim_vec_push(al, &fc->cc->exe->owned_ctx);
    if (!slot) {
      al->free(al->self, (void *)(uintptr_t)nd->ctx);
      return sim_oom(fc);
    }
    *slot = (void *)(uintptr_t)nd->ctx;
  }
  nd->ew = sim_fz_isa_kernel(fn);
  nd->kind = SIM_FZ_EW;
  b->z->cost += sim_fz_op_cost(op->code);
  return XRT_OK;
}

/* Appends node nd, which no other use shares (vid -1), as *out. */
static xrt_status sim_fz_push(sim_fzb *b, const sim_fznode *nd,
                              int32_t *out) {
  sim_fz *z = b->z;
  if (z->nn >= SIM_FZ_MAXN)
    return sim_fail(b->fc->cc->err, XRT_INTERNAL, "@%s: fused loop too big",
                    b->fc->f->name);
  b->vids[z->nn] = -1;
  b->nodes[z->nn] = *nd;
  *out = z->nn++;
  return XRT_OK;
}

/* A feature vector v (f32) read along dimension fi of shape s. */
static xrt_status sim_fz_feature(sim_fzb *b, int32_t v, const xrt_shape *s,
                                 int64_t fi, int32_t *out) {
  int64_t ss[XRT_MAX_RANK] = {0};
  sim_fznode nd;
  memset(&nd, 0, sizeof nd);
  ss[fi] = 1;
  nd.kind = SIM_FZ_GATHER;
  nd.val = v;
  nd.es = 4;
  sim_fz_gather_init(b, &nd, s, ss, 0);
  return sim_fz_push(b, &nd, out);
}

/* An f32 add, sub or mul node on nodes x and y. */
static void sim_fz_f32_op(sim_fznode *nd, int op, int32_t x, int32_t y) {
  nd->kind = SIM_FZ_EW;
  nd->es = 4;
  nd->nargs = 2;
  nd->arg[0] = (int16_t)x, nd->arg[1] = (int16_t)y;
  nd->ew = sim_fz_isa_kernel(op == SIM_FZC_SUB   ? sim_SUB_f32
                             : op == SIM_FZC_MUL ? sim_MUL_f32
                                                 : sim_ADD_f32);
}

/* batch_norm_inference as (x - mean) * k + offset (sim_fzbn): nd is the
 * add; the pseudo value of k is made with the step (sim_fz_lower). */
static xrt_status sim_fz_bn(sim_fzb *b, const xrt_ir_op *op, sim_fznode *nd) {
  const xrt_shape *rs = sim_shape(b->fc, op->results[0]);
  const xrt_ir_attr *fi = sim_attr(op, "feature_index", XRT_ATTR_INT);
  const xrt_ir_attr *eps = sim_attr(op, "epsilon", XRT_ATTR_FLOAT);
  int32_t x, mean, k, off, d, p;
  xrt_status rc = sim_fz_node(b, op->operands[0], &x);
  if (!rc) rc = sim_fz_feature(b, op->operands[3], rs, fi->i, &mean);
  if (!rc) rc = sim_fz_feature(b, -1, rs, fi->i, &k);
  if (!rc) rc = sim_fz_feature(b, op->operands[2], rs, fi->i, &off);
  if (rc) return rc;
  sim_fznode t;
  memset(&t, 0, sizeof t);
  sim_fz_f32_op(&t, SIM_FZC_SUB, x, mean);
  if ((rc = sim_fz_push(b, &t, &d))) return rc;
  sim_fz_f32_op(&t, SIM_FZC_MUL, d, k);
  if ((rc = sim_fz_push(b, &t, &p))) return rc;
  sim_fz_f32_op(nd, SIM_FZC_ADD, p, off);
  sim_fzbn *e = &b->bn[b->nbn];
  e->scale = op->operands[1], e->var = op->operands[4], e->k = -1;
  e->F = rs->dims[fi->i];
  e->eps = eps ? (double)(float)eps->f : 0.0; /* epsilon is an f32 */
  b->bnode[b->nbn++] = k;
  for (int32_t j = 1; j < 5; j++) b->leaves[b->nleaves++] = op->operands[j];
  return XRT_OK;
}

/* A node for a member op (its operands first). */
static xrt_status sim_fz_op_node(sim_fzb *b, const xrt_ir_op *op,
                                 sim_fznode *nd) {
  enum sim_fuse_kind k = sim_op(op->code)->fuse;
  if (k == SIM_FUSE_BN) return sim_fz_bn(b, op, nd);
  if (k == SIM_FUSE_VIEW) {
    sim_fz_view(b, op, nd);
    b->leaves[b->nleaves++] = op->operands[0];
    return XRT_OK;
  }
  int32_t na = k == SIM_FUSE_RESHAPE ? 1 : op->num_operands;
  for (int32_t j = 0; j < na; j++) {
    int32_t c;
    xrt_status rc = sim_fz_node(b, op->operands[j], &c);
    if (rc) return rc;
    nd->arg[j] = (int16_t)c;
  }
  nd->nargs = (int8_t)na;
  switch (k) {
  case SIM_FUSE_RESHAPE:
    nd->kind = SIM_FZ_ID;
    return XRT_OK;
  case SIM_FUSE_SELECT:
    nd->kind = SIM_FZ_SEL;
    nd->sel = sim_fz_sel_for(nd->es);
    return XRT_OK;
  case SIM_FUSE_CLAMP:
    nd->kind = SIM_FZ_CLAMP;
    nd->clamp = sim_clamp_for(sim_shape(b->fc, op->results[0])->dtype);
    return XRT_OK;
  default:
    return sim_fz_ew(b, op, nd);
  }
}

/* The node computing value v (shared when v is used twice). */
static xrt_status sim_fz_node(sim_fzb *b, int32_t v, int32_t *out) {
  sim_fz *z = b->z;
  for (int32_t k = 0; k < z->nn; k++)
    if (b->vids[k] == v) {
      *out = k;
      return XRT_OK;
    }
  sim_fzinfo *zi = (sim_fzinfo *)b->fc->fz;
  int32_t pi = v >= 0 && v < zi->n ? sim_fz_index(b->r, zi->def[v]) : -1;
  sim_fznode nd;
  memset(&nd, 0, sizeof nd);
  nd.vid = v;
  nd.es = sim_esize(sim_shape(b->fc, v)->dtype);
  xrt_status rc = pi >= 0 && b->grp[pi] == b->root
                      ? sim_fz_op_node(b, &b->r->ops[pi], &nd)
                      : sim_fz_leaf(b, v, &nd);
  if (rc) return rc;
  if (z->nn >= SIM_FZ_MAXN)
    return sim_fail(b->fc->cc->err, XRT_INTERNAL, "@%s: fused loop too big",
                    b->fc->f->name);
  b->vids[z->nn] = v;
  b->nodes[z->nn] = nd;
  *out = z->nn++;
  return XRT_OK;
}

/* The period of GATHER node nd's values along the space (the product of
 * its dimensions after the leading broadcast ones), or 0 when it has
 * none shorter than the space. */
static int64_t sim_fz_period(const sim_fznode *nd, int64_t numel) {
  int32_t j = 0;
  while (j < nd->rank && (nd->ss[j] == 0 || nd->dims[j] == 1)) j++;
  int64_t p = 1;
  for (int32_t k = j; k < nd->rank; k++) p *= nd->dims[k];
  return j > 0 && p < numel ? p : 0;
}

static int64_t sim_fz_gcd(int64_t a, int64_t b) {
  while (b) {
    int64_t t = a % b;
    a = b;
    b = t;
  }
  return a;
}

/* Elementwise loops: a tile that is a multiple of the common period of
 * the GATHER nodes that have a short one (reading per-channel vectors
 * broadcast over an image, say), which then become PTILE nodes, filled
 * once per piece instead of gathered for every tile.  Tiles start at
 * multiples of the tile, so every tile sees the same values. */
static void sim_fz_periodic(sim_fz *z) {
  int64_t L = 1;
  if (z->red) return;
  for (int32_t k = 0; k < z->nn; k++) {
    const sim_fznode *nd = &z->nodes[k];
    if (nd->kind != SIM_FZ_GATHER) continue;
    int64_t p = sim_fz_period(nd, z->numel);
    if (p && p <= z->tile && L / sim_fz_gcd(L, p) * p <= z->tile)
      L = L / sim_fz_gcd(L, p) * p;
  }
  if (z->numel > z->tile) z->tile = z->tile / L * L;
  for (int32_t k = 0; k < z->nn; k++) {
    sim_fznode *nd = &z->nodes[k];
    if (nd->kind != SIM_FZ_GATHER) continue;
    int64_t p = sim_fz_period(nd, z->numel);
    if (p && (z->tile % p == 0 || z->numel <= z->tile))
      nd->kind = SIM_FZ_PTILE; /* one tile: filled once all the same */
  }
}

static int sim_fz_leafy(const sim_fznode *nd) {
  return nd->es == 4 && (nd->kind == SIM_FZ_FULL || nd->kind == SIM_FZ_PTILE ||
                         nd->kind == SIM_FZ_SPLAT || nd->kind == SIM_FZ_GATHER);
}

/* 1 if nd is an f32 maximum, 2 a minimum, else 0. */
static int sim_fz_minmax(const sim_fznode *nd) {
  if (nd->kind != SIM_FZ_EW || nd->nargs != 2 || nd->es != 4) return 0;
  return nd->ew == sim_fz_isa_kernel(sim_MAX_f32)   ? 1
         : nd->ew == sim_fz_isa_kernel(sim_MIN_f32) ? 2
                                                    : 0;
}

/* Node k as a chain operation (SIM_FZC_*), or -1. */
static int sim_fz_chain_op(const sim_fznode *nd) {
  if (nd->kind != SIM_FZ_EW || nd->nargs != 2 || nd->es != 4) return -1;
  if (nd->ew == sim_fz_isa_kernel(sim_ADD_f32)) return SIM_FZC_ADD;
  if (nd->ew == sim_fz_isa_kernel(sim_SUB_f32)) return SIM_FZC_SUB;
  if (nd->ew == sim_fz_isa_kernel(sim_MUL_f32)) return SIM_FZC_MUL;
  if (nd->ew == sim_fz_isa_kernel(sim_DIV_f32)) return SIM_FZC_DIV;
  return -1;
}

/* Whether the tree is a chain (see sim_fz): z->chain and its fields. */
static void sim_fz_chain_plan(sim_fz *z) {
  z->chain = 0;
  z->clo = z->chi = -1;
  z->cmm = 0;
#ifdef SIM_FZ_HAVE_CHAIN
  if (z->red || z->stream || z->nn < 2) return;
  int32_t k = z->nn - 1, inner = 0;
  const sim_fznode *root = &z->nodes[k];
  for (int32_t i = 0; i < z->nn; i++) {
    int kd = z->nodes[i].kind;
    inner += kd == SIM_FZ_EW || kd == SIM_FZ_CLAMP || kd == SIM_FZ_SEL ||
             kd == SIM_FZ_ID;
  }
  if (root->kind == SIM_FZ_CLAMP) {
    if (root->es != 4 || root->clamp != sim_clamp_for(XRT_F32) ||
        z->nodes[root->arg[0]].kind != SIM_FZ_SPLAT ||
        z->nodes[root->arg[2]].kind != SIM_FZ_SPLAT)
      return;
    z->clo = root->arg[0];
    z->chi = root->arg[2];
    k = root->arg[1];
    inner--;
  } else if ((z->cmm = (int8_t)sim_fz_minmax(root)) != 0) {
    /* max(v, c) is clamp(c, v, +inf) and min(v, c) clamp(-inf, v, c),
     * NaN and signed zeros included (c is not NaN: sim_fz_chain_eval) */
    int s = z->nodes[root->arg[1]].kind == SIM_FZ_SPLAT   ? 1
            : z->nodes[root->arg[0]].kind == SIM_FZ_SPLAT ? 0
                                                          : -1;
    if (s < 0) return;
    z->clo = root->arg[s];
    k = root->arg[1 - s];
    inner--;
  }
  int8_t n = 0;
  uint8_t op[SIM_FZ_CHAIN];
  int16_t arg[SIM_FZ_CHAIN];
  for (;;) { /* from the end of the line to its start */
    const sim_fznode *nd = &z->nodes[k];
    int o = sim_fz_chain_op(nd);
    if (o < 0 || n == SIM_FZ_CHAIN) return;
    const sim_fznode *a = &z->nodes[nd->arg[0]], *b = &z->nodes[nd->arg[1]];
    inner--;
    if (sim_fz_leafy(a) && sim_fz_leafy(b)) { /* the line's start */
      /* at the full value when only b is one (a product's result, whose
       * kernels can then take the line: sim_gpost): b op' a */
      int rev = b->kind == SIM_FZ_FULL && a->kind != SIM_FZ_FULL;
      op[n] = (uint8_t)(rev ? o + SIM_FZC_REV : o);
      arg[n++] = nd->arg[rev ? 0 : 1];
      z->chx = nd->arg[rev ? 1 : 0];
      break;
    }
    if (sim_fz_leafy(b)) { /* v op b */
      op[n] = (uint8_t)o;
      arg[n++] = nd->arg[1];
      k = nd->arg[0];
    } else if (sim_fz_leafy(a)) { /* a op v */
      op[n] = (uint8_t)(o + SIM_FZC_REV);
      arg[n++] = nd->arg[0];
      k = nd->arg[1];
    } else {
      return;
    }
  }
  if (inner != 0) return; /* every inner node is on the line */
  for (int8_t j = 0; j < n; j++) { /* in evaluation order */
    z->chop[j] = op[n - 1 - j];
    z->charg[j] = arg[n - 1 - j];
  }
  z->nch = n;
  z->chain = 1;
#endif
}

/* A reduce over the last dimension: tiles hold whole rows when a row fits,
 * so each row is folded in one call, as the unfused reduce folds it, and
 * both add in the same order. */
static void sim_fz_reduce_row_tiles(sim_fz *z) {
  int64_t row = z->red && z->rank ? z->dims[z->rank - 1] : 0;
  if (row > 1 && z->ostr[z->rank - 1] == 0 && row <= z->tile &&
      z->numel > z->tile)
    z->tile = z->tile / row * row;
}

/* Elementwise loops reading GATHER nodes with unit innermost stride (a
 * slice of rows) in rows of R elements, shorter than the tile: tiles of R
 * (when every such node's rows are multiples of R and no periodic tile
 * needs the longer one), so each tile reads one run in place instead of
 * gathering it (see sim_fz_run_at). */
static void sim_fz_slice_row_tiles(sim_fz *z) {
  int64_t R = 0;
  if (z->red) return;
  for (int32_t k = 0; k < z->nn; k++) {
    const sim_fznode *nd = &z->nodes[k];
    if (nd->kind == SIM_FZ_PTILE) return;
    if (nd->kind != SIM_FZ_GATHER || nd->rank < 1) continue;
    int64_t r = nd->dims[nd->rank - 1];
    if (nd->ss[nd->rank - 1] == 1 && (!R || r < R)) R = r;
  }
  if (R < SIM_FZ_ROW_MIN || R >= z->tile) return;
  for (int32_t k = 0; k < z->nn; k++) {
    const sim_fznode *nd = &z->nodes[k];
    if (nd->kind == SIM_FZ_GATHER && nd->rank >= 1 &&
        nd->ss[nd->rank - 1] == 1 && nd->dims[nd->rank - 1] % R)
      return;
  }
  z->tile = R;
}

/* Tile size and scratch offsets of the nodes that need a tile. */
static void sim_fz_layout(sim_fz *z) {
  size_t per_elem = 0;
  for (int32_t k = 0; k < z->nn; k++) {
    int kind = z->nodes[k].kind;
    if (kind != SIM_FZ_FULL && kind != SIM_FZ_ID) per_elem += z->nodes[k].es;
  }
  int64_t tile = SIM_FZ_TILE;
  while (tile > 64 && (size_t)tile * per_elem > SIM_FZ_BUDGET) tile /= 2;
  while (tile > 64 && tile / 2 >= z->numel) tile /= 2; /* small loops */
  /* few elements of much work: at least four tiles, for the threads */
  int costly = !z->red && z->numel < SIM_FZ_PAR_MIN &&
               z->numel * z->cost >= SIM_FZ_COSTLY_MIN;
  while (costly && tile > 64 && tile * 4 > z->numel) tile /= 2;
  z->tile = tile;
  sim_fz_periodic(z);
  sim_fz_reduce_row_tiles(z);
  sim_fz_slice_row_tiles(z);
  tile = z->tile;
  z->maxp = z->numel >= SIM_FZ_PAR_MIN || costly ? SIM_FZ_PARTS : 1;
#ifdef SIM_HAVE_STREAM
  const sim_fznode *root = &z->nodes[z->nn - 1];
  z->stream = !z->red && root->kind == SIM_FZ_EW && tile >= SIM_FZ_SUB &&
              (size_t)z->numel * root->es >= SIM_FZ_STREAM_MIN;
#endif
  size_t off = 0;
  for (int32_t k = 0; k < z->nn; k++) {
    sim_fznode *nd = &z->nodes[k];
    if (nd->kind == SIM_FZ_FULL || nd->kind == SIM_FZ_ID) continue;
    nd->off = off;
    off += sim_align_up((size_t)tile * nd->es);
  }
  z->part_bytes = off;
  sim_fz_chain_plan(z);
}

/* Reduce roots: the coalesced iteration plan and the reducer. */
static xrt_status sim_fz_reduce_root(sim_fzb *b, const xrt_ir_op *op) {
  sim_fz *z = b->z;
  const sim_fcc *fc = b->fc;
  const xrt_ir_attr *a = sim_attr(op, "dimensions", XRT_ATTR_INTS);
  sim_reduce tmp;
  memset(&tmp, 0, sizeof tmp);
  sim_reduce_dims(&tmp, b->space, a->ints, a->n);
  z->red = 1;
  z->rank = tmp.rank;
  memcpy(z->dims, tmp.dims, sizeof z->dims);
  memcpy(z->ostr, tmp.ostr, sizeof z->ostr);
  const xrt_ir_op *body = &op->regions[0].ops[0];
  xrt_dtype t = sim_shape(fc, op->results[0])->dtype;
  z->rfn = sim_red_pick_isa(body->code, t);
  if (z->nn == 1 && b->nodes[0].kind == SIM_FZ_FULL)
    z->add4 = sim_fz_add4_kernel(body->code, t);
  z->res = sim_esize(t);
  z->fill = sim_fill_for(z->res);
  z->out_numel = sim_numel(sim_shape(fc, op->results[0]));
  return XRT_OK;
}

/* The batch norm members' pseudo values k (at the step being lowered),
 * and their list in executable memory. */
static xrt_status sim_fz_bn_temps(sim_fcc *fc, sim_fzb *b, sim_fz *z) {
  if (!b->nbn) return XRT_OK;
  sim_fzbn *bn = (sim_fzbn *)sim_palloc(fc, sizeof *bn * (size_t)b->nbn);
  if (!bn) return XRT_RESOURCE_EXHAUSTED;
  for (int32_t j = 0; j < b->nbn; j++) {
    bn[j] = b->bn[j];
    xrt_status rc = sim_temp(fc, sizeof(float) * (size_t)bn[j].F, &bn[j].k);
    if (rc) return rc;
    z->nodes[b->bnode[j]].val = bn[j].k;
  }
  z->bn = bn;
  z->nbn = b->nbn;
  return XRT_OK;
}

/* Lowers the group rooted at op ri of block r into one step (in the
 * manner of sim_lower_op: uses, definition, step). */
static xrt_status sim_fz_lower(sim_fcc *fc, const xrt_ir_region *r,
                               const int32_t *grp, int32_t ri, sim_fzb *b,
                               sim_vec *steps) {
  const xrt_ir_op *op = &r->ops[ri];
  int red = op->code == XRT_OP_REDUCE;
  sim_fz zb, *z = &zb; /* built here, then copied to executable memory */
  memset(z, 0, sizeof *z);
  z->inplace = -1;
  b->nleaves = 0; /* b->nodes fill as z->nn grows */
  b->gused = 0;
  b->nbn = 0;
  b->fc = fc, b->r = r, b->grp = grp, b->root = ri, b->z = z;
  b->space = sim_shape(fc, red ? op->operands[0] : op->results[0]);
  z->numel = sim_numel(b->space);
  xrt_status rc = XRT_OK;
  if (red) {
    int32_t c;
    rc = sim_fz_node(b, op->operands[0], &c);
    if (!rc) rc = sim_fz_reduce_root(b, op);
  } else {
    sim_fznode nd;
    memset(&nd, 0, sizeof nd);
    nd.vid = op->results[0];
    nd.es = sim_esize(sim_shape(fc, op->results[0])->dtype);
    rc = sim_fz_op_node(b, op, &nd);
    if (!rc && z->nn >= SIM_FZ_MAXN) rc = sim_fail(fc->cc->err, XRT_INTERNAL,
                                                   "fused loop too big");
    if (!rc) {
      b->vids[z->nn] = nd.vid;
      b->nodes[z->nn++] = nd;
    }
  }
  if (rc) return rc;
  /* one block: the plan, its nodes, their gather maps, the step's inputs
   * (each written below; padding is never read, so it is not zeroed) */
  size_t zs = sim_align_up(sizeof *z), ns = sizeof(sim_fznode) * (size_t)z->nn;
  size_t gs = sizeof(int64_t) * b->gused;
  char *mem = (char *)sim_palloc_raw(
      fc, zs + ns + gs + sizeof(int32_t) * (size_t)(b->nleaves + 2));
  if (!mem) return XRT_RESOURCE_EXHAUSTED;
  z->nodes = (sim_fznode *)(void *)(mem + zs);
  memcpy(z->nodes, b->nodes, ns);
  int64_t *g = (int64_t *)(void *)(mem + zs + ns);
  if (gs) memcpy(g, b->gbuf, gs);
  for (int32_t k = 0; k < z->nn; k++) /* repoint the maps into the block */
    if (z->nodes[k].dims) {
      z->nodes[k].dims = g + (z->nodes[k].dims - b->gbuf);
      z->nodes[k].ss = g + (z->nodes[k].ss - b->gbuf);
    }
  int32_t *ins = (int32_t *)(void *)(mem + zs + ns + gs);
  /* inputs: a reduce's init first, then every materialized leaf */
  int32_t nin = 0;
  if (red) ins[nin++] = op->operands[1];
  for (int32_t i = 0; i < b->nleaves; i++) ins[nin++] = b->leaves[i];
  sim_fz_layout(z);
  if (b->minp > z->maxp) z->maxp = b->minp;
  if (b->cached && z->stream) {
    z->stream = 0;
    sim_fz_chain_plan(z);
  }
  z = (sim_fz *)(void *)mem;
  *z = zb;
  int32_t cur = fc->cur = fc->pos++;
  for (int32_t i = 0; i < nin && !rc; i++) rc = sim_use(fc, ins[i]);
  if (!rc) rc = sim_def(fc, op->results[0], sim_vbytes(fc, op->results[0]));
  if (!rc)
    rc = sim_temp(fc, (z->part_bytes + 16) * (size_t)z->maxp, &z->scratch);
  if (!rc) rc = sim_fz_bn_temps(fc, b, z);
  fc->cur = cur;
  if (rc) return rc;
  sim_step *st = (sim_step *)sim_vec_push(&fc->cc->al, steps);
  if (!st) return sim_oom(fc);
  memset(st, 0, sizeof *st);
  st->run = red ? sim_run_fused_reduce : sim_run_fused;
  st->in = ins;
  st->nin = nin;
  st->out = op->results;
  st->nout = 1;
  st->data = z;
  st->n = z->numel;
  st->op = op;
  return XRT_OK;
}

static void sim_fz_in_place(sim_fcc *fc, sim_vec *steps);

/* Ops that may become one step with the group that reads their result. */
static int sim_fz_producer(xrt_opcode code) {
  return code == XRT_OP_CONVOLUTION || code == XRT_OP_DOT_GENERAL ||
         code == XRT_OP_DOT;
}

/* Convolutions and products lowered with the group that reads their
 * result (as a whole leaf, its only use; sim_fz_lower_with): for such a
 * pair, defer[producer] is the root and defer[root] the producer. */
static void sim_fz_defer_convs(const sim_fcc *fc, const xrt_ir_region *r,
                               const int32_t *grp, int32_t *defer) {
  const sim_fzinfo *zi = (const sim_fzinfo *)fc->fz;
  int32_t n = r->num_ops - 1;
  for (int32_t i = 0; i < n; i++) defer[i] = -1;
  if (fc->depth > 0 || !zi) return;
  for (int32_t i = 0; i < n; i++) {
    int32_t g = grp[i];
    if (g < 0 || defer[g] >= 0 || r->ops[g].code == XRT_OP_REDUCE) continue;
    const xrt_ir_op *op = &r->ops[i];
    enum sim_fuse_kind k = sim_op(op->code)->fuse;
    int64_t space = sim_fz_space(fc, &r->ops[g], SIM_FUSE_EW);
    for (int32_t j = 0; j < op->num_operands && defer[g] < 0; j++) {
      int32_t v = op->operands[j];
      if (!sim_fz_fusable_operand(k, j) || v < 0 || v >= zi->n) continue;
      int32_t ci = sim_fz_index(r, zi->def[v]);
      if (ci < 0 || grp[ci] != -1 || defer[ci] >= 0 ||
          !sim_fz_producer(r->ops[ci].code) || zi->nuse[v] != 1 ||
          r->ops[ci].num_results != 1 || sim_numel(sim_shape(fc, v)) != space)
        continue;
      defer[ci] = g;
      defer[g] = ci;
    }
  }
}

/* The producer's step cs, taken out of steps, goes back before the group
 * just lowered (the last step): the two stay steps of their own. */
static xrt_status sim_fz_unfuse(sim_fcc *fc, sim_vec *steps,
                                const sim_step *cs) {
  if (!sim_vec_push(&fc->cc->al, steps)) return sim_oom(fc);
  sim_step *st = (sim_step *)steps->p + steps->n - 2;
  st[1] = st[0];
  st[0] = *cs;
  sim_fz_in_place(fc, steps);
  return XRT_OK;
}

/* Whether the group z just lowered (step st) can take the rows of the
 * product x (N of them per row, on up to lanes threads) as they are done,
 * in place: its result has x's elements and element size, in a slot of
 * its own; it reads x only element i for element i; its periodic tiles
 * repeat within a row, so they hold for tiles starting at any row. */
static int sim_fz_gemm_fits(const sim_fcc *fc, const sim_step *st,
                            const sim_fz *z, int32_t x, int64_t N,
                            int lanes) {
  const sim_vinfo *o = &fc->v[st->out[0]], *xv = &fc->v[x];
  if (z->red || z->inplace >= 0 || z->maxp < lanes || N < 1 ||
      z->numel != sim_numel(sim_shape(fc, x)) ||
      z->nodes[z->nn - 1].es != sim_esize(sim_shape(fc, x)->dtype) ||
      o->kind != SIM_V_SLOT || o->alias || o->vcat ||
      xv->kind != SIM_V_SLOT || xv->alias || xv->vcat ||
      xv->bytes != o->bytes)
    return 0;
  int reads = 0;
  for (int32_t k = 0; k < z->nn; k++) {
    const sim_fznode *nd = &z->nodes[k];
    if (nd->val == x && nd->kind != SIM_FZ_FULL) return 0;
    reads += nd->val == x;
    if (nd->kind == SIM_FZ_PTILE && N % sim_fz_period(nd, z->numel)) return 0;
  }
  return reads > 0;
}

/* Whether GATHER node nd reads, for element (r, c) of rows of N, element
 * base + r of its value (a per-feature vector over an NCHW result): the
 * dimensions that make up a row have stride 0, the others are row-major
 * with unit stride. */
static int sim_fz_row_vector(const sim_fznode *nd, int64_t N) {
  int32_t k = nd->rank;
  int64_t n = 1, s = 1;
  while (k > 0 && n < N) {
    k--;
    if (nd->ss[k] != 0 && nd->dims[k] != 1) return 0;
    n *= nd->dims[k];
  }
  if (n != N) return 0;
  while (k > 0) {
    k--;
    if (nd->dims[k] != 1 && nd->ss[k] != s) return 0;
    s *= nd->dims[k];
  }
  return 1;
}

/* Whether the group z on the product's result x (rows of N) is a chain
 * the product's kernels can apply (sim_gpost): x is where the line
 * starts and no operand; each operand is one number, a column vector (a
 * tile of period N, at least N long), or, per_row (a product's), a row
 * vector (sim_fz_row_vector) or a value of x's shape, read in place; a
 * number is a splat or one element broadcast (sim_fz_number, or a tile
 * of period 1). */
static int sim_fz_post_fits(const sim_fz *z, int32_t x, int64_t N,
                            int per_row) {
  if (!z->chain || z->nodes[z->chx].kind != SIM_FZ_FULL ||
      z->nodes[z->chx].val != x)
    return 0;
  for (int j = 0; j < z->nch; j++) {
    const sim_fznode *nd = &z->nodes[z->charg[j]];
    if (nd->es != 4 || nd->val == x) return 0;
    int64_t period = nd->kind == SIM_FZ_PTILE ? sim_fz_period(nd, z->numel)
                                              : 0;
    if (nd->kind == SIM_FZ_PTILE && period != 1 &&
        (period != N || z->tile < N))
      return 0;
    int number = nd->kind == SIM_FZ_GATHER && sim_fz_number(nd);
    if ((nd->kind == SIM_FZ_GATHER || nd->kind == SIM_FZ_FULL) && !per_row &&
        !number)
      return 0;
    if (nd->kind == SIM_FZ_GATHER && !number && !sim_fz_row_vector(nd, N))
      return 0;
    if (nd->kind != SIM_FZ_PTILE && nd->kind != SIM_FZ_SPLAT &&
        nd->kind != SIM_FZ_FULL && nd->kind != SIM_FZ_GATHER)
      return 0;
  }
  return 1;
}

/* Whether the chain's operands are all row vectors and numbers (no
 * column vector or full value, which a product in chunks would need
 * offset per chunk). */
static int sim_fz_post_by_rows(const sim_fz *z) {
  for (int j = 0; j < z->nch; j++) {
    const sim_fznode *nd = &z->nodes[z->charg[j]];
    if (nd->kind == SIM_FZ_FULL ||
        (nd->kind == SIM_FZ_PTILE && sim_fz_period(nd, z->numel) != 1))
      return 0;
  }
  return 1;
}

/* Makes step st (the group z) run the product cs with it (sim_fzgm); the
 * product's operands and scratch (defined since defs index ndefs) live
 * until this step, and the group's result takes the product's memory (an
 * alias, as sim_fz_in_place). */
static xrt_status sim_fz_with_gemm(sim_fcc *fc, sim_step *st, sim_fz *z,
                                   const sim_step *cs, int32_t x, int64_t N,
                                   int32_t ndefs) {
  sim_fzgm *d = (sim_fzgm *)sim_palloc(fc, sizeof *d);
  if (!d) return XRT_RESOURCE_EXHAUSTED;
  d->z = z;
  d->gemm = *cs;
  d->x = x;
  d->N = N;
  int64_t cn;
  d->post = sim_fz_post_fits(z, x, N, 1) &&
            (sim_cg_chunked(cs, &cn) ? sim_fz_post_by_rows(z)
                                     : sim_gemm_post_ok(sim_fz_product(cs)));
  xrt_status rc = XRT_OK;
  const int32_t *dv = (const int32_t *)fc->defs.p;
  for (int32_t i = 0; i < cs->nin && !rc; i++) rc = sim_use(fc, cs->in[i]);
  for (int32_t i = ndefs; i < fc->defs.n && !rc; i++) rc = sim_use(fc, dv[i]);
  if (rc) return rc;
  st->run = sim_run_fused_gemm;
  st->data = d;
  /* An entry result would be copied from x's memory after the run */
  d->direct = fc->depth == 0 && sim_entry_result(fc, st->out[0]);
  if (d->direct) return XRT_OK;
  sim_vinfo *o = &fc->v[st->out[0]], *xv = &fc->v[x];
  o->kind = SIM_V_NONE;
  o->bytes = 0;
  o->alias = x + 1;
  if (xv->last < o->last) xv->last = o->last;
  return XRT_OK;
}

/* Lowers producer ci (a convolution or a product) just before the group
 * rooted at ri, which reads its result; a depthwise convolution that
 * computes whole positions, with a tile of whole positions, becomes one
 * step with the group (sim_fzdw), and so does a product whose rows the
 * group can take as they are done (sim_fzgm). */
static xrt_status sim_fz_lower_with(sim_fcc *fc, const xrt_ir_region *r,
                                    const int32_t *grp, int32_t ri,
                                    int32_t ci, sim_fzb *b, sim_vec *steps) {
  int32_t n0 = steps->n, ndefs = fc->defs.n;
  xrt_status rc = sim_lower_op(fc, &r->ops[ci], steps);
  if (rc) return rc;
  sim_step cs, *ps = steps->n == n0 + 1 ? (sim_step *)steps->p + n0 : NULL;
  int64_t O = 0, np = 0, M = 0, N = 0;
  int lanes = 0;
  int dw = ps && sim_dw_by_position(ps, &O, &np) && O > 0;
  int gm = ps && !dw && sim_fz_by_rows(ps, &M, &N, &lanes);
  /* a convolution in chunks: the group in its kernels, or after it */
  if (ps && !dw && !gm && sim_cg_chunked(ps, &N)) gm = 1, lanes = 1;
  /* Winograd's and conv_direct.c's: the group in their output loops, or
   * after them */
  int wg = ps && !dw && !gm &&
           (sim_wino_cols(ps, &N) || sim_cdir_cols(ps, &N));
  if (dw || gm || wg) {
    cs = *ps;
    steps->n--;
  }
  b->minp = dw && np * O >= 8192 ? SIM_FZ_PARTS : gm ? lanes : 0;
  b->cached = gm;
  rc = sim_fz_lower(fc, r, grp, ri, b, steps);
  b->minp = 0, b->cached = 0;
  if (!rc && !dw && !gm && !wg) sim_fz_in_place(fc, steps);
  if (rc || (!dw && !gm && !wg)) return rc;
  sim_step *st = (sim_step *)steps->p + steps->n - 1;
  sim_fz *z = (sim_fz *)(uintptr_t)st->data;
  int32_t x = r->ops[ci].results[0];
  if (wg) {
    if (!sim_fz_post_fits(z, x, N, 1)) return sim_fz_unfuse(fc, steps, &cs);
    xrt_status wrc = sim_fz_with_gemm(fc, st, z, &cs, x, N, ndefs);
    st->run = sim_run_fused_conv;
    return wrc;
  }
  if (gm) {
    if (!sim_fz_gemm_fits(fc, st, z, x, N, lanes))
      return sim_fz_unfuse(fc, steps, &cs);
    return sim_fz_with_gemm(fc, st, z, &cs, x, N, ndefs);
  }
  if (z->numel != np * O || (z->tile % O && z->numel > z->tile))
    return sim_fz_unfuse(fc, steps, &cs); /* tiles of part positions */
  sim_fzdw *d = (sim_fzdw *)sim_palloc(fc, sizeof *d);
  if (!d) return XRT_RESOURCE_EXHAUSTED;
  d->z = z;
  d->post = sim_fz_post_fits(z, x, O, 0) && sim_dw_post_ok(&cs);
  d->dw = cs;
  d->x = x;
  d->O = O;
  d->xes = sim_esize(sim_shape(fc, x)->dtype);
  /* SIM_FZ_DW_RUN positions a chunk, within SIM_FZ_BUDGET bytes */
  d->chunk = (SIM_FZ_DW_RUN * O + z->tile - 1) / z->tile;
  while (d->chunk > 1 &&
         (size_t)(d->chunk * z->tile) * d->xes > SIM_FZ_BUDGET)
    d->chunk--;
  d->xtile = sim_align_up((size_t)(d->chunk * z->tile) * d->xes);
  /* the step (at fc->cur) now reads the convolution's operands */
  for (int32_t i = 0; i < cs.nin && !rc; i++) rc = sim_use(fc, cs.in[i]);
  if (!rc) rc = sim_temp(fc, d->xtile * (size_t)z->maxp, &d->buf);
  if (rc) return rc;
  st->run = sim_run_fused_dw;
  st->data = d;
  return XRT_OK;
}

/* The elementwise step just lowered (the last of steps) writes over an
 * input of its shape that dies there: an arena value read only by the
 * group, only element i for result element i (whole leaves, no views of
 * it), of the result's size.  The result then takes the input's memory
 * (an alias, as a free reshape): its lines were just read, so the writes
 * find them in cache, and the working set is one array smaller.  Every
 * kernel reads element i before it writes element i. */
static void sim_fz_in_place(sim_fcc *fc, sim_vec *steps) {
  const sim_fzinfo *zi = (const sim_fzinfo *)fc->fz;
  sim_step *st = (sim_step *)steps->p + steps->n - 1;
  if (fc->depth > 0 || !zi || steps->n < 1 || st->run != sim_run_fused) return;
  sim_fz *z = (sim_fz *)(uintptr_t)st->data;
  int32_t out = st->out[0];
  sim_vinfo *o = &fc->v[out];
  if (z->red || o->kind != SIM_V_SLOT || o->alias || o->vcat ||
      sim_entry_result(fc, out)) /* written straight into the caller's */
    return;
  size_t es = z->nodes[z->nn - 1].es;
  for (int32_t k = 0; k < z->nn; k++) {
    const sim_fznode *nd = &z->nodes[k];
    int32_t v = nd->val;
    if (nd->kind != SIM_FZ_FULL || nd->es != es || v < 0 || v >= zi->n ||
        zi->nuse[v] != 1 || fc->v[v].kind != SIM_V_SLOT || fc->v[v].alias ||
        fc->v[v].vcat || fc->v[v].bytes != o->bytes ||
        fc->v[v].last > fc->cur)
      continue;
    int other = 0; /* v read another way (a view) */
    for (int32_t j = 0; j < z->nn; j++)
      other |= z->nodes[j].val == v && z->nodes[j].kind != SIM_FZ_FULL;
    if (other) continue;
    o->kind = SIM_V_NONE;
    o->bytes = 0;
    o->alias = v + 1;
    if (fc->v[v].last < o->last) fc->v[v].last = o->last;
    z->inplace = v;
    return;
  }
}

/* Lowers the ops of block r (all but the terminator), fused where
 * sim_fz_plan_block groups them. */
SIM_PRIVATE xrt_status sim_fz_lower_ops(sim_fcc *fc, const xrt_ir_region *r,
                                   sim_vec *steps) {
  const xrt_allocator *al = &fc->cc->al;
  int32_t *grp = sim_fz_plan_block(fc, r);
  sim_fzb *b = NULL; /* building space, shared by the block's groups */
  int32_t *defer = NULL;
  xrt_status rc = XRT_OK;
  if (grp) {
    defer = (int32_t *)al->alloc(al->self,
                                 sizeof(int32_t) * (size_t)r->num_ops);
    if (!defer) {
      al->free(al->self, grp);
      return sim_oom(fc);
    }
    sim_fz_defer_convs(fc, r, grp, defer);
  }
  if (fc->cc->fz_bad == 2) rc = sim_oom(fc);
  else if (fc->cc->fz_bad)
    rc = sim_fail(fc->cc->err, XRT_INVALID_ARGUMENT, "@%s: stored fusion "
                  "decisions do not fit a block", fc->f->name);
  for (int32_t i = 0; i < r->num_ops - 1 && !rc; i++) {
    int deferred = defer && defer[i] >= 0;
    if (deferred && sim_fz_producer(r->ops[i].code)) {
      continue; /* lowered with the group that reads it */
    } else if (!grp || grp[i] == -1) {
      rc = sim_lower_op(fc, &r->ops[i], steps);
    } else if (grp[i] == i) {
      if (!b && (b = (sim_fzb *)al->alloc(al->self, sizeof *b)) != NULL)
        b->minp = 0, b->cached = 0;
      if (!b)
        rc = sim_oom(fc);
      else if (deferred)
        rc = sim_fz_lower_with(fc, r, grp, i, defer[i], b, steps);
      else if (!(rc = sim_fz_lower(fc, r, grp, i, b, steps)))
        sim_fz_in_place(fc, steps);
    }
  }
  al->free(al->self, defer);
  al->free(al->self, b);
  al->free(al->self, grp);
  return rc;
}
