/*
 * src/sim/integer.c - the simulator's integer arithmetic kernels (add ...
 * power, negate, abs, sign, chlo.mulhi) and their table; the bitwise ops
 * are in bitwise.c.
 * Part of the simulated device; MIT licensed, see LICENSE.
 */
#include "internal.h"

/* ---- integer helpers (values travel as 64-bit two's complement) ---- */

static inline int64_t sim_sdiv(int64_t a, int64_t b) {
  if (b == 0) return -1;
  if (b == -1) return (int64_t)(0 - (uint64_t)a); /* MIN / -1 wraps to MIN */
  return a / b;
}
static inline uint64_t sim_udiv(uint64_t a, uint64_t b) {
  return b ? a / b : ~(uint64_t)0;
}
static inline int64_t sim_srem(int64_t a, int64_t b) {
  if (b == 0) return a;
  if (b == -1) return 0;
  return a % b; /* sign of the dividend, as C99 */
}
static inline uint64_t sim_urem(uint64_t a, uint64_t b) {
  return b ? a % b : a;
}

/* Square-and-multiply modulo 2^64; narrower types truncate afterwards. */
static inline uint64_t sim_upow(uint64_t base, uint64_t e) {
  uint64_t r = 1;
  for (; e; e >>= 1, base *= base)
    if (e & 1) r *= base;
  return r;
}
/* Negative exponents: 1 and -1 keep their powers, everything else gives 0
 * (the interpreter's rule). */
static inline int64_t sim_spow(int64_t base, int64_t e) {
  if (e < 0) {
    if (base == 1) return 1;
    if (base == -1) return (e & 1) ? -1 : 1;
    return 0;
  }
  return (int64_t)sim_upow((uint64_t)base, (uint64_t)e);
}

static inline uint64_t sim_iabs(int64_t v) {
  return v < 0 ? 0 - (uint64_t)v : (uint64_t)v;
}
static inline int64_t sim_isign(int64_t v) { return (v > 0) - (v < 0); }

/* ---- integer kernels ---- */

#define SIM_I_ADD(a, b, P, W, SG) ((P)(a) + (P)(b))
#define SIM_I_SUB(a, b, P, W, SG) ((P)(a) - (P)(b))
#define SIM_I_MUL(a, b, P, W, SG) ((P)(a) * (P)(b))
#define SIM_I_MAX(a, b, P, W, SG) ((a) > (b) ? (a) : (b))
#define SIM_I_MIN(a, b, P, W, SG) ((a) < (b) ? (a) : (b))
#define SIM_I_DIV(a, b, P, W, SG)                                             \
  ((SG) ? (uint64_t)sim_sdiv((int64_t)(a), (int64_t)(b))                      \
        : sim_udiv((uint64_t)(a), (uint64_t)(b)))
#define SIM_I_REM(a, b, P, W, SG)                                             \
  ((SG) ? (uint64_t)sim_srem((int64_t)(a), (int64_t)(b))                      \
        : sim_urem((uint64_t)(a), (uint64_t)(b)))
#define SIM_I_POW(a, b, P, W, SG)                                             \
  ((SG) ? (uint64_t)sim_spow((int64_t)(a), (int64_t)(b))                      \
        : sim_upow((uint64_t)(a), (uint64_t)(b)))

#define SIM_I_NEG(a, P, W, SG) ((P)0 - (P)(a))
#define SIM_I_ABS(a, P, W, SG) ((SG) ? sim_iabs((int64_t)(a)) : (uint64_t)(a))
#define SIM_I_SIGN(a, P, W, SG)                                               \
  ((SG) ? (uint64_t)sim_isign((int64_t)(a)) : (uint64_t)((a) != 0))

#define SIM_INT_BIN_OPS(X)                                                    \
  X(ADD) X(SUB) X(MUL) X(DIV) X(REM) X(MAX) X(MIN) X(POW)
#define SIM_INT_UN_OPS(X) X(NEG) X(ABS) X(SIGN)

SIM_INT_BIN_OPS(SIM_STAMP_IB)
SIM_INT_UN_OPS(SIM_STAMP_IU)

/* ---- chlo.mulhi: the high half of the double-width product ---- */

static inline uint64_t sim_umulh64(uint64_t a, uint64_t b) {
  uint64_t al = a & 0xffffffffu, ah = a >> 32, bl = b & 0xffffffffu, bh = b >> 32;
  uint64_t ll = al * bl, lh = al * bh, hl = ah * bl, hh = ah * bh;
  uint64_t mid = (ll >> 32) + (lh & 0xffffffffu) + (hl & 0xffffffffu);
  return hh + (lh >> 32) + (hl >> 32) + (mid >> 32);
}
/* a and b are w-bit values, sign- or zero-extended to 64 bits. */
static inline uint64_t sim_mulhi(uint64_t a, uint64_t b, int w, int sg) {
  if (w < 64) { /* the product fits 64 bits (w <= 32) */
    if (!sg) return (a * b) >> w;
    return sim_sra(a * b, (uint64_t)w, 64); /* two's complement product */
  }
  uint64_t h = sim_umulh64(a, b);
  if (sg) { /* signed high half from the unsigned one */
    if (a >> 63) h -= b;
    if (b >> 63) h -= a;
  }
  return h;
}
#define SIM_I_MULHI(a, b, P, W, SG)                                           \
  sim_mulhi((SG) ? (uint64_t)(int64_t)(a) : (uint64_t)(a),                    \
            (SG) ? (uint64_t)(int64_t)(b) : (uint64_t)(b), (W), (SG))
SIM_INT_TYPES(SIM_DEF_IB, MULHI)

/* Kernel table indexed by [op][operand element type]; NULL = unsupported. */
static const sim_ew_fn sim_int_tab[SIM_EW_NOPS][XRT_DTYPE_COUNT] = {
    SIM_INT_BIN_OPS(SIM_TROW_I) SIM_INT_UN_OPS(SIM_TROW_I)
    SIM_INT_TYPES(SIM_TENT_I, MULHI)
};

/* The arithmetic kernel of op e (SIM_EW_*) for integer element type t;
 * NULL: none (the bitwise ops: sim_bit_kernel). */
SIM_PRIVATE sim_ew_fn sim_int_kernel(int e, xrt_dtype t) {
  return sim_int_tab[e][t];
}
