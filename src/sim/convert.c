/*
 * src/sim/convert.c - the simulator's convert kernels between element
 * types other than the small floats (minifloat.c converts those), and
 * bitcast_convert.
 * Part of the simulated device; MIT licensed, see LICENSE.
 */
#include "internal.h"

/* ---- convert ---- */

/* Widening conversions run backwards so an in-place call stays safe. */
#define SIM_DEF_CV(S, SSZ, K, D, dcode, DSZ)                                  \
  static void sim_cv_##S##_##D(void *const *in, void *out, size_t n,          \
                               const void *ctx) {                             \
    const void *a = in[0];                                                    \
    (void)ctx;                                                                \
    if ((DSZ) > (SSZ)) {                                                      \
      for (size_t i = n; i-- > 0;) sim_st_##D##_##K(out, i, sim_ld_##S(a, i)); \
    } else {                                                                  \
      for (size_t i = 0; i < n; i++) sim_st_##D##_##K(out, i, sim_ld_##S(a, i)); \
    }                                                                         \
  }
#define SIM_CV_ROW(S, code, SSZ, K) SIM_CV_DSTS(SIM_DEF_CV, S, SSZ, K)
SIM_CV_SRCS(SIM_CV_ROW)

#define SIM_CV_TENT(S, scode, K, D, dcode, DSZ) [scode][dcode] = sim_cv_##S##_##D,
#define SIM_CV_TROW(S, code, SSZ, K) SIM_CV_DSTS(SIM_CV_TENT, S, code, K)
static const sim_ew_fn sim_cv_tab[XRT_DTYPE_COUNT][XRT_DTYPE_COUNT] = {
    SIM_CV_SRCS(SIM_CV_TROW)};

/* The convert kernel from t to r, neither a small float; NULL: none. */
SIM_PRIVATE sim_ew_fn sim_cv_kernel(xrt_dtype t, xrt_dtype r) {
  return sim_cv_tab[t][r];
}

/* ---- bitcast_convert between element types of equal bit width ---- */

/* Sub-byte types keep their bits in the low part of a byte; a bitcast
 * re-extends them for the destination (s4 -8 = 0xF8 becomes u4 8). */
typedef struct sim_bc_sub {
  int w, sg;
} sim_bc_sub;
/* Indexed [width / 2 - 1][signed]: 2-, 4- and 6-bit types. */
static const sim_bc_sub sim_bc_subs[3][2] = {
    {{2, 0}, {2, 1}}, {{4, 0}, {4, 1}}, {{6, 0}, {6, 1}}};
static void sim_bc_rewrap(void *const *in, void *out, size_t n,
                          const void *ctx) {
  const sim_bc_sub *s = (const sim_bc_sub *)ctx;
  const uint8_t *a = (const uint8_t *)in[0];
  uint8_t *o = (uint8_t *)out;
  for (size_t i = 0; i < n; i++) o[i] = (uint8_t)sim_wrap(a[i], s->w, s->sg);
}

/* Bitcasts between different widths, n = result elements.  The value is the
 * bit string of the elements, element 0 in the lowest bits (little-endian),
 * sub-byte elements and i1 contributing their low bits only. */
typedef struct sim_bc_bits {
  int bt, br, rsg;  /* bits per input / result element; result signed */
  size_t st, sr;    /* bytes per input / result element */
} sim_bc_bits;
static void sim_bc_bit1(const sim_bc_bits *c, const uint8_t *a, uint8_t *o,
                        size_t j) {
  uint8_t acc[16] = {0}; /* the result element, gathered before writing */
  for (int k = 0; k < c->br; k++) {
    size_t bit = j * (size_t)c->br + (size_t)k, e = bit / (size_t)c->bt;
    int off = (int)(bit % (size_t)c->bt);
    if ((a[e * c->st + (size_t)off / 8] >> (off % 8)) & 1)
      acc[k / 8] |= (uint8_t)(1u << (k % 8));
  }
  if (c->br < 8) acc[0] = (uint8_t)sim_wrap(acc[0], c->br, c->rsg);
  memcpy(o + j * c->sr, acc, c->sr);
}
static void sim_bc_bits_run(void *const *in, void *out, size_t n,
                            const void *ctx) {
  const sim_bc_bits *c = (const sim_bc_bits *)ctx;
  /* results wider than the input bytes they consume go backwards (in place) */
  if (c->sr * (size_t)c->bt > (size_t)c->br * c->st) {
    for (size_t j = n; j-- > 0;) sim_bc_bit1(c, in[0], out, j);
  } else {
    for (size_t j = 0; j < n; j++) sim_bc_bit1(c, in[0], out, j);
  }
}
static void sim_bc_bytes(void *const *in, void *out, size_t n,
                         const void *ctx) {
  size_t esz = *(const size_t *)ctx; /* whole bytes: a little-endian copy */
  if (n && in[0] != out) memmove(out, in[0], n * esz);
}

/* bitcast_convert: n counts result elements (the operand has n * bits(r) /
 * bits(t) of them).  Whole-byte types copy bytes, assuming a little-endian
 * host like the rest of the simulator. */
SIM_PRIVATE sim_ew_fn sim_ew_bitcast(const xrt_allocator *al,
                                     const xrt_ir_func *f,
                                     const xrt_ir_op *op,
                                     const void **ctx_out, int *ctx_owned,
                                     char *why, size_t whycap) {
  xrt_dtype t = f->value_types[op->operands[0]].shape.dtype;
  xrt_dtype r = f->value_types[op->results[0]].shape.dtype;
  int bt = sim_ew_bits(t), br = sim_ew_bits(r);
  if (!bt || !br || (bt % br && br % bt))
    return sim_ew_unsup(f, op, op->operands[0], op->results[0], "", why, whycap);
  if (bt == br && (bt >= 8 || bt == 1)) {
    *ctx_out = &sim_esz[sim_ew_size(t)];
    return sim_copy;
  }
  if (bt == br) { /* 2-, 4- and 6-bit types: re-extend the low bits */
    *ctx_out = &sim_bc_subs[bt / 2 - 1][r == XRT_S2 || r == XRT_S4];
    return sim_bc_rewrap;
  }
  if (bt % 8 == 0 && br % 8 == 0) {
    *ctx_out = &sim_esz[sim_ew_size(r)];
    return sim_bc_bytes;
  }
  sim_bc_bits *c = (sim_bc_bits *)al->alloc(al->self, sizeof *c);
  if (!c) return sim_ew_oom(ctx_owned, why, whycap);
  c->bt = bt, c->br = br, c->rsg = r == XRT_S2 || r == XRT_S4;
  c->st = sim_ew_size(t), c->sr = sim_ew_size(r);
  *ctx_out = c;
  *ctx_owned = 1;
  return sim_bc_bits_run;
}
