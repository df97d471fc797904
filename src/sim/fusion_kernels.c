/*
 * src/sim/fusion_kernels.c - the fused loops' kernels: f32/f64 elementwise
 * operations and reductions compiled per instruction set, the choice of
 * one for the running CPU, and selects by element size.
 * Part of the simulated device; MIT licensed, see LICENSE.
 */
#include "internal.h"

/* Each f32/f64 kernel exists portable, for AVX2 and for AVX-512F, as
 * plain loops without -march flags (target attributes), so one binary
 * runs everywhere and under valgrind; sim_fz_isa_kernel and
 * sim_red_pick_isa give the running CPU's (see fusion.c's header). */

#if SIM_X86
#define SIM_FK_X86 1
#define SIM_FK_T_avx2 __attribute__((target("avx2,fma")))
#define SIM_FK_T_avx512 __attribute__((target("avx512f")))
#endif
#define SIM_FK_T_port

#define SIM_FK_EWB(ISA, OP, nm, T)                                            \
  static SIM_FK_T_##ISA void sim_fz_##OP##_##nm##_##ISA(                      \
      void *const *in, void *out, size_t n, const void *ctx) {                \
    const T *a = (const T *)in[0], *b = (const T *)in[1];                     \
    T *o = (T *)out;                                                          \
    (void)ctx;                                                                \
    SIM_MAP2(T, a, b, o, n, (T)SIM_F_##OP(X, Y));                             \
  }
#define SIM_FK_EWU(ISA, OP, nm, T)                                            \
  static SIM_FK_T_##ISA void sim_fz_##OP##_##nm##_##ISA(                      \
      void *const *in, void *out, size_t n, const void *ctx) {                \
    const T *a = (const T *)in[0];                                            \
    T *o = (T *)out;                                                          \
    (void)ctx;                                                                \
    SIM_MAP1(T, a, o, n, (T)SIM_F_##OP(X));                                   \
  }

/* Reducers: vec = 1 combines acc[i] with in[i] (no overlap); vec = 0
 * folds in into *acc, with partial sums for add folds of SIM_FK_PSUM_MIN
 * or more elements: one chain of additions waits on each one's latency
 * (an NCHW global average pool of 1000 features over 13x13: 126 us, 22
 * in ONNX Runtime), 32 lanes do not (256 elements were the threshold). */
#define SIM_FK_PSUM_MIN 32
/* acc[i] = acc[i] OP in[i]: restrict parameters and fixed-size blocks,
 * which gcc -O2 vectorizes. */
#define SIM_FK_VEC(ISA, OPN, nm, T, COMB)                                     \
  static SIM_FK_T_##ISA void sim_fz_vec_##OPN##_##nm##_##ISA(                 \
      T *restrict acc, const T *restrict in, int64_t n) {                     \
    int64_t i = 0;                                                            \
    for (; i + 32 <= n; i += 32)                                              \
      for (int k = 0; k < 32; k++) {                                          \
        T a = acc[i + k], b = in[i + k];                                      \
        acc[i + k] = (T)(COMB);                                               \
      }                                                                       \
    for (; i < n; i++) {                                                      \
      T a = acc[i], b = in[i];                                                \
      acc[i] = (T)(COMB);                                                     \
    }                                                                         \
  }

/* Four rows added into the sums at once (reassociated: a column's sum
 * adds (r0 + r1) + (r2 + r3)), a quarter of the accumulator traffic. */
#define SIM_FK_ADD4(ISA, nm, T)                                               \
  static SIM_FK_T_##ISA void sim_fz_add4t_##nm##_##ISA(                       \
      T *restrict acc, const T *restrict r0, const T *restrict r1,            \
      const T *restrict r2, const T *restrict r3, int64_t n) {                \
    int64_t i = 0;                                                            \
    for (; i + 32 <= n; i += 32)                                              \
      for (int k = 0; k < 32; k++)                                            \
        acc[i + k] += (r0[i + k] + r1[i + k]) + (r2[i + k] + r3[i + k]);      \
    for (; i < n; i++) acc[i] += (r0[i] + r1[i]) + (r2[i] + r3[i]);           \
  }                                                                           \
  static void sim_fz_add4_##nm##_##ISA(void *acc, const void *rows,           \
                                       size_t stride, int64_t n) {            \
    const char *p = (const char *)rows;                                       \
    sim_fz_add4t_##nm##_##ISA((T *)acc, (const T *)p,                         \
                              (const T *)(p + stride),                        \
                              (const T *)(p + 2 * stride),                    \
                              (const T *)(p + 3 * stride), n);                \
  }

#define SIM_FK_RED(ISA, OPN, nm, T, COMB, PARTIAL)                            \
  SIM_FK_VEC(ISA, OPN, nm, T, COMB)                                           \
  static SIM_FK_T_##ISA void sim_fz_red_##OPN##_##nm##_##ISA(                 \
      void *accp, const void *inp, int64_t n, int vec) {                      \
    T *restrict acc = (T *)accp;                                              \
    const T *restrict in = (const T *)inp;                                    \
    int64_t i = 0;                                                            \
    if (vec) {                                                                \
      sim_fz_vec_##OPN##_##nm##_##ISA(acc, in, n);                            \
      return;                                                                 \
    }                                                                         \
    T a = *acc;                                                               \
    if (PARTIAL && n >= SIM_FK_PSUM_MIN) {                                    \
      T s[32] = {0};                                                          \
      for (; i + 32 <= n; i += 32)                                            \
        for (int k = 0; k < 32; k++) s[k] += in[i + k];                       \
      for (int w = 16; w > 0; w /= 2)                                         \
        for (int k = 0; k < w; k++) s[k] += s[k + w];                         \
      a += s[0];                                                              \
    }                                                                         \
    for (; i < n; i++) {                                                      \
      T b = in[i];                                                            \
      a = (T)(COMB);                                                          \
    }                                                                         \
    *acc = a;                                                                 \
  }

#define SIM_FK_FLT_KERNELS(ISA, nm, T)                                        \
  SIM_FK_EWB(ISA, ADD, nm, T)                                                 \
  SIM_FK_EWB(ISA, SUB, nm, T)                                                 \
  SIM_FK_EWB(ISA, MUL, nm, T)                                                 \
  SIM_FK_EWB(ISA, DIV, nm, T)                                                 \
  SIM_FK_EWB(ISA, MAX, nm, T)                                                 \
  SIM_FK_EWB(ISA, MIN, nm, T)                                                 \
  SIM_FK_EWU(ISA, NEG, nm, T)                                                 \
  SIM_FK_EWU(ISA, ABS, nm, T)                                               \
  SIM_FK_RED(ISA, add, nm, T, a + b, 1)                                       \
  SIM_FK_ADD4(ISA, nm, T)                                                     \
  SIM_FK_RED(ISA, mul, nm, T, a * b, 0)                                       \
  SIM_FK_RED(ISA, max, nm, T, SIM_FMAX(a, b, a, b), 0)                        \
  SIM_FK_RED(ISA, min, nm, T, SIM_FMIN(a, b, a, b), 0)
#define SIM_FK_ISA_KERNELS(ISA)                                               \
  SIM_FK_FLT_KERNELS(ISA, f32, float)                                         \
  SIM_FK_FLT_KERNELS(ISA, f64, double)

SIM_FK_ISA_KERNELS(port)
#ifdef SIM_FK_X86
SIM_FK_ISA_KERNELS(avx2)
SIM_FK_ISA_KERNELS(avx512)
#endif

/* 0 portable, 1 AVX2, 2 AVX-512F: the best the running CPU has. */
static int sim_fz_isa_level;
static pthread_once_t sim_fz_isa_once = PTHREAD_ONCE_INIT;
static void sim_fz_isa_detect(void) {
#ifdef SIM_FK_X86
  __builtin_cpu_init();
  if (__builtin_cpu_supports("avx512f")) sim_fz_isa_level = 2;
  else if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma"))
    sim_fz_isa_level = 1;
  if (sim_fz_isa_level > sim_isa_cap()) sim_fz_isa_level = sim_isa_cap();
#endif
}
static int sim_fz_isa(void) {
  pthread_once(&sim_fz_isa_once, sim_fz_isa_detect);
  return sim_fz_isa_level;
}
SIM_PRIVATE int sim_isa_level(void) { return sim_fz_isa(); }

#ifdef SIM_FK_X86
#define SIM_FK_PICK3(name)                                                    \
  (lv == 2 ? name##_avx512 : lv == 1 ? name##_avx2 : name##_port)
#else
#define SIM_FK_PICK3(name) name##_port
#endif

/* The per-ISA version of a plain elementwise kernel, or fn itself. */
SIM_PRIVATE sim_ew_fn sim_fz_isa_kernel(sim_ew_fn fn) {
  int lv = sim_fz_isa();
  (void)lv;
#define SIM_FK_MAPK(OP, nm)                                                   \
  if (fn == sim_##OP##_##nm) return SIM_FK_PICK3(sim_fz_##OP##_##nm);
#define SIM_FK_MAPK2(nm)                                                      \
  SIM_FK_MAPK(ADD, nm) SIM_FK_MAPK(SUB, nm) SIM_FK_MAPK(MUL, nm)              \
  SIM_FK_MAPK(DIV, nm) SIM_FK_MAPK(MAX, nm) SIM_FK_MAPK(MIN, nm)              \
  SIM_FK_MAPK(NEG, nm)                                                        \
  SIM_FK_MAPK(ABS, nm)
  SIM_FK_MAPK2(f32)
  SIM_FK_MAPK2(f64)
#undef SIM_FK_MAPK2
#undef SIM_FK_MAPK
  /* f32 exp, tanh, logistic, rsqrt: the vectorized ones of vmath.c */
  sim_ew_fn v = sim_vm_kernel(fn, lv);
  return v ? v : fn;
}

/* The reducer for a one-op body on f32/f64 (ours), else the plain one.
 * Unfused reduces use it too, so a row reduced in one call adds in the same
 * order fused or not (an f32 add of 32 or more keeps 32 partial sums). */
SIM_PRIVATE sim_red_fn sim_red_pick_isa(xrt_opcode code, xrt_dtype t) {
  int lv = sim_fz_isa();
  (void)lv;
#define SIM_FK_REDK(OPC, opn, nm)                                             \
  if (code == XRT_OP_##OPC) return SIM_FK_PICK3(sim_fz_red_##opn##_##nm);
#define SIM_FK_REDK4(nm)                                                      \
  SIM_FK_REDK(ADD, add, nm) SIM_FK_REDK(MULTIPLY, mul, nm)                    \
  SIM_FK_REDK(MAXIMUM, max, nm) SIM_FK_REDK(MINIMUM, min, nm)
  if (t == XRT_F32) { SIM_FK_REDK4(f32) }
  if (t == XRT_F64) { SIM_FK_REDK4(f64) }
#undef SIM_FK_REDK4
#undef SIM_FK_REDK
  return sim_red_pick(code, t);
}

SIM_PRIVATE sim_fz_add4_fn sim_fz_add4_kernel(xrt_opcode code,
                                             xrt_dtype t) {
  int lv = sim_fz_isa();
  (void)lv;
  if (code != XRT_OP_ADD) return NULL;
  if (t == XRT_F32) return SIM_FK_PICK3(sim_fz_add4_f32);
  if (t == XRT_F64) return SIM_FK_PICK3(sim_fz_add4_f64);
  return NULL;
}

/* ---- select by element size ---- */

#define SIM_FK_SEL_DEF(NAME, T)                                               \
  static void NAME(const uint8_t *p, const void *a, const void *b, void *out, \
                   int64_t n) {                                               \
    const T *x = (const T *)a, *y = (const T *)b;                             \
    T *o = (T *)out;                                                          \
    for (int64_t i = 0; i < n; i++) o[i] = p[i] ? x[i] : y[i];                \
  }
/* Integer widths by masks, no branch: a ReLU's mask is unpredictable
 * (half the elements each way), so a branch mispredicts half the time. */
#define SIM_FK_SELM_DEF(NAME, T)                                              \
  static void NAME(const uint8_t *p, const void *a, const void *b, void *out, \
                   int64_t n) {                                               \
    const T *x = (const T *)a, *y = (const T *)b;                             \
    T *o = (T *)out;                                                          \
    for (int64_t i = 0; i < n; i++) {                                         \
      T m = (T)((T)0 - (T)(p[i] != 0));                                       \
      o[i] = (T)((x[i] & m) | (y[i] & (T)~m));                                \
    }                                                                         \
  }
SIM_FK_SELM_DEF(sim_fz_sel_1, uint8_t)
SIM_FK_SELM_DEF(sim_fz_sel_2, uint16_t)
SIM_FK_SELM_DEF(sim_fz_sel_4, uint32_t)
SIM_FK_SELM_DEF(sim_fz_sel_8, uint64_t)
SIM_FK_SEL_DEF(sim_fz_sel_16, sim_b16)

SIM_PRIVATE sim_fz_sel_fn sim_fz_sel_for(size_t es) {
  switch (es) {
  case 1: return sim_fz_sel_1;
  case 2: return sim_fz_sel_2;
  case 4: return sim_fz_sel_4;
  case 8: return sim_fz_sel_8;
  case 16: return sim_fz_sel_16;
  default: return NULL;
  }
}
