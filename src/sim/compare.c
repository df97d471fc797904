/*
 * src/sim/compare.c - the simulator's compare kernels (integers, pred,
 * floats with TOTALORDER too, complex) and their table; the small floats'
 * one is in minifloat.c.
 * Part of the simulated device; MIT licensed, see LICENSE.
 */
#include "internal.h"

#define SIM_CMP_DIRS(X) X(EQ) X(NE) X(GE) X(GT) X(LE) X(LT)
#define SIM_CMP_EQ(x, y) ((x) == (y))
#define SIM_CMP_NE(x, y) ((x) != (y))
#define SIM_CMP_GE(x, y) ((x) >= (y))
#define SIM_CMP_GT(x, y) ((x) > (y))
#define SIM_CMP_LE(x, y) ((x) <= (y))
#define SIM_CMP_LT(x, y) ((x) < (y))
/* Complex: lexicographic on (re, im). */
#define SIM_CCMP_EQ(ar, ai, br, bi) ((ar) == (br) && (ai) == (bi))
#define SIM_CCMP_NE(ar, ai, br, bi) (!SIM_CCMP_EQ(ar, ai, br, bi))
#define SIM_CCMP_GE(ar, ai, br, bi) ((ar) > (br) || ((ar) == (br) && (ai) >= (bi)))
#define SIM_CCMP_GT(ar, ai, br, bi) ((ar) > (br) || ((ar) == (br) && (ai) > (bi)))
#define SIM_CCMP_LE(ar, ai, br, bi) ((ar) < (br) || ((ar) == (br) && (ai) <= (bi)))
#define SIM_CCMP_LT(ar, ai, br, bi) ((ar) < (br) || ((ar) == (br) && (ai) < (bi)))

/* totalOrder keys: unsigned integers ordered like -NaN < -Inf < ... < -0 <
 * +0 < ... < +Inf < +NaN (flip everything for negatives, the sign else). */
static inline uint32_t sim_key_f32(float f) {
  uint32_t u = xrt__f32_to_bits(f);
  return (u >> 31) ? ~u : u | 0x80000000u;
}
static inline uint64_t sim_key_f64(double d) {
  uint64_t u = xrt__f64_to_bits(d);
  return (u >> 63) ? ~u : u | 0x8000000000000000ull;
}
static inline uint16_t sim_key_h(uint16_t u) {
  return (uint16_t)((u >> 15) ? ~(unsigned)u : u | 0x8000u);
}

#define SIM_DEF_CMPI(DIR, nm, code, T, P, W, SG)                              \
  static void sim_cmp_##DIR##_##nm(void *const *in, void *out, size_t n,      \
                                   const void *ctx) {                         \
    const T *a = (const T *)in[0], *b = (const T *)in[1];                     \
    uint8_t *o = (uint8_t *)out;                                              \
    (void)ctx;                                                                \
    SIM_MAP2(T, a, b, o, n, (uint8_t)SIM_CMP_##DIR(X, Y));                   \
  }
#define SIM_DEF_CMPF(DIR, nm, code, T, C, LD, ST, KEY)                        \
  static void sim_cmp_##DIR##_##nm(void *const *in, void *out, size_t n,      \
                                   const void *ctx) {                         \
    const T *a = (const T *)in[0], *b = (const T *)in[1];                     \
    uint8_t *o = (uint8_t *)out;                                              \
    (void)ctx;                                                                \
    SIM_MAP2(T, a, b, o, n, (uint8_t)SIM_CMP_##DIR(LD(X), LD(Y)));           \
  }                                                                           \
  static void sim_tot_##DIR##_##nm(void *const *in, void *out, size_t n,      \
                                   const void *ctx) {                         \
    const T *a = (const T *)in[0], *b = (const T *)in[1];                     \
    uint8_t *o = (uint8_t *)out;                                              \
    (void)ctx;                                                                \
    SIM_MAP2(T, a, b, o, n, (uint8_t)SIM_CMP_##DIR(KEY(X), KEY(Y)));         \
  }
#define SIM_DEF_CMPC(DIR, nm, code, ET)                                       \
  static void sim_cmp_##DIR##_##nm(void *const *in, void *out, size_t n,      \
                                   const void *ctx) {                         \
    const ET *a = (const ET *)in[0], *b = (const ET *)in[1];                  \
    uint8_t *o = (uint8_t *)out;                                              \
    (void)ctx;                                                                \
    for (size_t i = 0; i < n; i++)                                            \
      o[i] = (uint8_t)SIM_CCMP_##DIR(a[2 * i], a[2 * i + 1], b[2 * i],        \
                                     b[2 * i + 1]);                           \
  }
#define SIM_STAMP_CMP(DIR)                                                    \
  SIM_INT_TYPES(SIM_DEF_CMPI, DIR)                                            \
  SIM_DEF_CMPI(DIR, pred, XRT_PRED, uint8_t, uint32_t, 1, 0)                  \
  SIM_FLT_TYPES(SIM_DEF_CMPF, DIR)                                            \
  SIM_CPX_TYPES(SIM_DEF_CMPC, DIR)
SIM_CMP_DIRS(SIM_STAMP_CMP)

/* Compare kernels by [totalorder][direction][element type]. */
#define SIM_CENT_I(DIR, nm, code, T, P, W, SG) [0][SIM_##DIR][code] = sim_cmp_##DIR##_##nm,
#define SIM_CENT_F(DIR, nm, code, T, C, LD, ST, KEY)                          \
  [0][SIM_##DIR][code] = sim_cmp_##DIR##_##nm,                                \
  [1][SIM_##DIR][code] = sim_tot_##DIR##_##nm,
#define SIM_CENT_C(DIR, nm, code, ET) [0][SIM_##DIR][code] = sim_cmp_##DIR##_##nm,
#define SIM_CROW(DIR)                                                         \
  SIM_INT_TYPES(SIM_CENT_I, DIR)                                              \
  [0][SIM_##DIR][XRT_PRED] = sim_cmp_##DIR##_pred,                            \
  SIM_FLT_TYPES(SIM_CENT_F, DIR) SIM_CPX_TYPES(SIM_CENT_C, DIR)
static const sim_ew_fn sim_cmp_tab[2][SIM_NDIRS][XRT_DTYPE_COUNT] = {
    SIM_CMP_DIRS(SIM_CROW)};

/* The compare kernel by TOTALORDER (1) or not, direction SIM_EQ ... SIM_LT
 * and element type t (not a small float); NULL: none. */
SIM_PRIVATE sim_ew_fn sim_cmp_kernel(int tot, int dir, xrt_dtype t) {
  return sim_cmp_tab[tot][dir][t];
}
