/*
 * src/sim/bitwise.c - the simulator's bitwise kernels on integers (and, or,
 * xor, not, the shifts, popcnt, count_leading_zeros) and their table.
 * Part of the simulated device; MIT licensed, see LICENSE.
 */
#include "internal.h"

static inline int sim_popcnt(uint64_t x) {
#if defined(__GNUC__)
  return __builtin_popcountll(x);
#else
  int c = 0;
  for (; x; x &= x - 1) c++;
  return c;
#endif
}

#define SIM_I_AND(a, b, P, W, SG) ((P)(a) & (P)(b))
#define SIM_I_OR(a, b, P, W, SG) ((P)(a) | (P)(b))
#define SIM_I_XOR(a, b, P, W, SG) ((P)(a) ^ (P)(b))
/* Shift counts are read as unsigned W-bit values: negative ones are huge. */
#define SIM_I_SHL(a, b, P, W, SG)                                             \
  ((uint64_t)(P)(b) >= (W) ? 0 : (P)(a) << (uint64_t)(P)(b))
#define SIM_I_SHRL(a, b, P, W, SG)                                            \
  ((uint64_t)(P)(b) >= (W)                                                    \
       ? 0                                                                    \
       : ((uint64_t)(P)(a) & SIM_M64(W)) >> (uint64_t)(P)(b))
#define SIM_I_SHRA(a, b, P, W, SG)                                            \
  sim_sra((uint64_t)(P)(a), (uint64_t)(P)(b) & SIM_M64(W), (W))

#define SIM_I_NOT(a, P, W, SG) ((P) ~(P)(a))
#define SIM_I_POPCNT(a, P, W, SG)                                             \
  ((uint64_t)sim_popcnt((uint64_t)(P)(a) & SIM_M64(W)))
#define SIM_I_CLZ(a, P, W, SG)                                                \
  ((uint64_t)sim_clz((uint64_t)(P)(a) & SIM_M64(W), (W)))

#define SIM_BIT_BIN_OPS(X) X(AND) X(OR) X(XOR) X(SHL) X(SHRL) X(SHRA)
#define SIM_BIT_UN_OPS(X) X(NOT) X(POPCNT) X(CLZ)

SIM_BIT_BIN_OPS(SIM_STAMP_IB)
SIM_BIT_UN_OPS(SIM_STAMP_IU)

/* Kernel table indexed by [op][operand element type]; NULL = unsupported. */
static const sim_ew_fn sim_bit_tab[SIM_EW_NOPS][XRT_DTYPE_COUNT] = {
    SIM_BIT_BIN_OPS(SIM_TROW_I) SIM_BIT_UN_OPS(SIM_TROW_I)};

/* The bitwise kernel of op e (SIM_EW_*) for integer element type t; NULL:
 * none. */
SIM_PRIVATE sim_ew_fn sim_bit_kernel(int e, xrt_dtype t) {
  return sim_bit_tab[e][t];
}
