/*
 * xrt_sim.c - the simulated multi-device accelerator: a device plugin like
 * any vendor's, built into xrt (or, with -DXRT_PLUGIN_SHARED, a .so).
 *
 * Devices.  N devices, each a byte budget over 64-byte aligned host memory.
 * Freed blocks go to a small per-device cache keyed by size, so a repeated
 * alloc/free of one size reuses pages that are already touched.  Each
 * device has a thread pool (threads_per_device) that large ops split their
 * work over ("The device thread pools"); its workers start on first use.
 *
 * Compilation lowers the entry function, its func.call callees and every
 * nested region ONCE into plans: arrays of steps, each a kernel function
 * pointer plus data precomputed for its shapes (coalesced stride maps for
 * data movement, reduce iteration plans, dot_general offset tables).  Kernels
 * are picked at compile time by element size (data movement) or element type
 * (math), so execute does no parsing, no dtype switch and no allocation.
 *
 * Values.  Each SSA value of a function (plus "pseudo" values: per-op
 * scratch such as while loop buffers) owns an entry in the function's frame,
 * an array of pointers.  Intermediates live in slots of one scratch arena
 * whose offsets a liveness sweep assigns at compile time, reusing memory once
 * its value is dead (values that die before an entry result is written may
 * borrow that result's output buffer instead); constants (and iota,
 * get_dimension_size) point at data made at compile time; function and
 * region arguments are bound at run time; the entry's results are bound
 * straight to the output buffers when they are produced by an op (else
 * copied: arguments, constants, duplicates).
 * Tuple values are one flat block (elements at 16-byte aligned offsets,
 * nested tuples inline) and tokens hold no bytes, so every value moves by
 * memcpy of sim_vbytes bytes; only the entry function is tensors-only.
 *
 * Execution.  The executable owns one frame (arena + pointer tables of every
 * planned function) per device, made on the device's first execute and
 * reused; a concurrent execute on a device whose frame is busy builds a
 * temporary frame for its call.  Executions of one launch meet in its
 * collectives ("Launches and collectives").  Region plans (reduce body, while
 * cond/body) run on the same frame with their arguments rebound per iteration or element.
 *
 * Contents, in order:
 *   Elementwise kernels (unary, binary, compare, convert, bitcast, types)
 *   Small helpers; client, devices and device memory; plans and steps
 *   Data movement, select and clamp, scalar conversion, reduce, dot_general,
 *   while / func.call / custom_call
 *   The planner (values, liveness, slots) and lowering ops to steps
 *   Indexing and windows (gather, scatter, dynamic slices, reduce_window,
 *   select_and_scatter, dynamic shape ops)
 *   Control flow and structure (if, case, map, sort, composite, tuples,
 *   tokens, host I/O, chlo.scan)
 *   Linear algebra and numerics (convolution, fft, triangular_solve,
 *   cholesky, batch norm, random numbers, chlo.ragged_dot)
 *   The device thread pools; parallel and blocked data movement
 *   GEMM: packed, cache-blocked f32/f64 matrix products (dot_general and
 *   convolution), with portable / AVX2 / AVX-512 micro-kernels
 *   Fusion: elementwise trees and reductions as one tiled loop
 *   Launches and collectives: process groups, rendezvous, send/recv between
 *   devices, fault injection, per-device frames, launch shape; collectives
 *   across processes (hierarchical all_reduce, stand-in participants)
 *   The op table; quantized compute ops (dequantize, the float op,
 *   quantize); lowering one op
 *   Planning functions, executables and execution
 *   Platform description and op support (ABI 1.0); fault kinds and region
 *   copies; host memory as device memory (zero-copy DLPack); trace events
 *   of collectives; serialized executables (ABI 1.1, the disk cache: the
 *   module, its fusion decisions) and their validation; the plugin table
 */
#define _POSIX_C_SOURCE 200809L
#include "xrt.h"

#include <assert.h>
#include <math.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ----------------------------------------------------------------------
 * Platform: the simulator's only operating-system calls (it is
 * self-contained, so that it builds alone as a plugin library).  On
 * Windows (mingw-w64, POSIX thread model) pthreads, sched_yield and
 * atomics are as on POSIX; the CPU count differs.
 * -------------------------------------------------------------------- */
#if defined(_WIN32)
#define WIN32_LEAN_AND_MEAN
#define NOMINMAX
#include <windows.h>

static long sim_os_cpu_count(void) {
  return (long)GetActiveProcessorCount(ALL_PROCESSOR_GROUPS);
}
#else
#include <unistd.h>

static long sim_os_cpu_count(void) { return sysconf(_SC_NPROCESSORS_ONLN); }
#endif

/* Non-temporal stores (SSE2, every x86-64): big results bypass the cache. */
#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#include <emmintrin.h>
#define SIM_HAVE_STREAM 1
#endif

/* ----------------------------------------------------------------------
 * Elementwise kernels of the simulated device.
 *
 * One function per op x element type, stamped out by X-macros, so a loop
 * has no per-element switch on the type and the plain int/f32/f64 loops
 * vectorize. The output may be the same pointer as an input (never a
 * partial overlap): every loop reads element i before it writes element i,
 * and the kernels whose output elements are wider than their inputs run
 * backwards.
 *
 * Semantics follow the StableHLO spec and its reference interpreter.  Where
 * the spec leaves a value implementation-defined we take XLA's choice:
 *   x / 0 = -1 (all ones), x % 0 = x, MIN / -1 = MIN, MIN % -1 = 0;
 *   shifts by >= the bit width give 0 (arithmetic right: the sign fill);
 *   float -> int truncates and saturates, NaN -> 0 (APFloat's rule).
 * Integer arithmetic is done in unsigned types so overflow wraps without UB;
 * sub-byte integers compute in a wider type and wrap to their width.
 * f16/bf16 compute in float and round to nearest even (float has more than
 * 2p+2 bits, so + - * / sqrt stay correctly rounded); complex division and
 * transcendentals compute in double complex as the interpreter does.
 * -------------------------------------------------------------------- */
#include <complex.h>
#undef complex /* keep the short names out of the including file */
#undef I
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef void (*sim_ew_fn)(void *const *in, void *out, size_t n,
                          const void *ctx);

/* ---- integer helpers (values travel as 64-bit two's complement) ---- */

/* Low w (< 64) bits of v as a w-bit integer, sign-extended when sg. */
static inline uint64_t sim_wrap(uint64_t v, int w, int sg) {
  uint64_t h = (uint64_t)1 << ((w - 1) & 63);
  v &= (h << 1) - 1;
  return sg ? (v ^ h) - h : v;
}

static inline int64_t sim_sext(uint64_t bits, int w) {
  return (int64_t)(w >= 64 ? bits : sim_wrap(bits, w, 1));
}

/* Mask of the low W bits, W in 1..64 (the & 63 keeps W = 64 shift-safe). */
#define SIM_M64(W) ((W) >= 64 ? ~(uint64_t)0 : ((uint64_t)1 << ((W) & 63)) - 1)

/* Stores v into storage type T of width W: sub-byte widths wrap. */
#define SIM_ST(T, W, SG, v)                                                   \
  ((W) == 8 * (int)sizeof(T) ? (T)(v) : (T)sim_wrap((uint64_t)(v), (W), (SG)))

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

/* Arithmetic right shift of a w-bit pattern (also for unsigned types). */
static inline uint64_t sim_sra(uint64_t bits, uint64_t sh, int w) {
  int64_t s = sim_sext(bits, w);
  if (sh >= (uint64_t)w) return s < 0 ? ~(uint64_t)0 : 0;
  return (uint64_t)(s < 0 ? ~(~s >> sh) : s >> sh);
}

static inline uint64_t sim_iabs(int64_t v) {
  return v < 0 ? 0 - (uint64_t)v : (uint64_t)v;
}
static inline int64_t sim_isign(int64_t v) { return (v > 0) - (v < 0); }

static inline int sim_popcnt(uint64_t x) {
#if defined(__GNUC__)
  return __builtin_popcountll(x);
#else
  int c = 0;
  for (; x; x &= x - 1) c++;
  return c;
#endif
}
/* Leading zeros of x viewed as a w-bit number. */
static inline int sim_clz(uint64_t x, int w) {
#if defined(__GNUC__)
  return x ? __builtin_clzll(x) - (64 - w) : w;
#else
  int k = w;
  for (; x; x >>= 1) k--;
  return k;
#endif
}

/* ---- loop skeletons ---- */

/* o[i] = E for i < n, where E reads X = a[i] (and Y = b[i]).  Each block of
 * inputs is copied before its outputs are written: an in-place call stays
 * correct, and gcc's -O2 vectorizer (cost model "very-cheap", which refuses
 * runtime alias checks and scalar epilogues) vectorizes the fixed-size
 * inner loops. */
#define SIM_BLK 16
#define SIM_MAP1(TA, a, o, n, E)                                              \
  do {                                                                        \
    size_t i_ = 0;                                                            \
    for (; i_ + SIM_BLK <= (n); i_ += SIM_BLK) {                              \
      TA xs_[SIM_BLK];                                                        \
      for (int k_ = 0; k_ < SIM_BLK; k_++) xs_[k_] = (a)[i_ + k_];            \
      for (int k_ = 0; k_ < SIM_BLK; k_++) {                                  \
        TA X = xs_[k_];                                                       \
        (o)[i_ + k_] = E;                                                     \
      }                                                                       \
    }                                                                         \
    for (; i_ < (n); i_++) {                                                  \
      TA X = (a)[i_];                                                         \
      (o)[i_] = E;                                                            \
    }                                                                         \
  } while (0)
#define SIM_MAP2(TA, a, b, o, n, E)                                           \
  do {                                                                        \
    size_t i_ = 0;                                                            \
    for (; i_ + SIM_BLK <= (n); i_ += SIM_BLK) {                              \
      TA xs_[SIM_BLK], ys_[SIM_BLK];                                          \
      for (int k_ = 0; k_ < SIM_BLK; k_++) {                                  \
        xs_[k_] = (a)[i_ + k_];                                               \
        ys_[k_] = (b)[i_ + k_];                                               \
      }                                                                       \
      for (int k_ = 0; k_ < SIM_BLK; k_++) {                                  \
        TA X = xs_[k_], Y = ys_[k_];                                          \
        (o)[i_ + k_] = E;                                                     \
      }                                                                       \
    }                                                                         \
    for (; i_ < (n); i_++) {                                                  \
      TA X = (a)[i_], Y = (b)[i_];                                            \
      (o)[i_] = E;                                                            \
    }                                                                         \
  } while (0)

/* ---- integer kernels ---- */

/* Integer element types: name, dtype, storage T, unsigned compute type P
 * (never narrower than unsigned int, so no promotion to signed int), width
 * W, signedness SG.  OP is passed through for the caller's macro X. */
#define SIM_INT_TYPES(X, OP)                                                  \
  X(OP, s8, XRT_S8, int8_t, uint32_t, 8, 1)                                   \
  X(OP, s16, XRT_S16, int16_t, uint32_t, 16, 1)                               \
  X(OP, s32, XRT_S32, int32_t, uint32_t, 32, 1)                               \
  X(OP, s64, XRT_S64, int64_t, uint64_t, 64, 1)                               \
  X(OP, u8, XRT_U8, uint8_t, uint32_t, 8, 0)                                  \
  X(OP, u16, XRT_U16, uint16_t, uint32_t, 16, 0)                              \
  X(OP, u32, XRT_U32, uint32_t, uint32_t, 32, 0)                              \
  X(OP, u64, XRT_U64, uint64_t, uint64_t, 64, 0)                              \
  X(OP, s2, XRT_S2, int8_t, uint32_t, 2, 1)                                   \
  X(OP, s4, XRT_S4, int8_t, uint32_t, 4, 1)                                   \
  X(OP, u2, XRT_U2, uint8_t, uint32_t, 2, 0)                                  \
  X(OP, u4, XRT_U4, uint8_t, uint32_t, 4, 0)

#define SIM_I_ADD(a, b, P, W, SG) ((P)(a) + (P)(b))
#define SIM_I_SUB(a, b, P, W, SG) ((P)(a) - (P)(b))
#define SIM_I_MUL(a, b, P, W, SG) ((P)(a) * (P)(b))
#define SIM_I_AND(a, b, P, W, SG) ((P)(a) & (P)(b))
#define SIM_I_OR(a, b, P, W, SG) ((P)(a) | (P)(b))
#define SIM_I_XOR(a, b, P, W, SG) ((P)(a) ^ (P)(b))
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
/* Shift counts are read as unsigned W-bit values: negative ones are huge. */
#define SIM_I_SHL(a, b, P, W, SG)                                             \
  ((uint64_t)(P)(b) >= (W) ? 0 : (P)(a) << (uint64_t)(P)(b))
#define SIM_I_SHRL(a, b, P, W, SG)                                            \
  ((uint64_t)(P)(b) >= (W)                                                    \
       ? 0                                                                    \
       : ((uint64_t)(P)(a) & SIM_M64(W)) >> (uint64_t)(P)(b))
#define SIM_I_SHRA(a, b, P, W, SG)                                            \
  sim_sra((uint64_t)(P)(a), (uint64_t)(P)(b) & SIM_M64(W), (W))

#define SIM_I_NEG(a, P, W, SG) ((P)0 - (P)(a))
#define SIM_I_ABS(a, P, W, SG) ((SG) ? sim_iabs((int64_t)(a)) : (uint64_t)(a))
#define SIM_I_SIGN(a, P, W, SG)                                               \
  ((SG) ? (uint64_t)sim_isign((int64_t)(a)) : (uint64_t)((a) != 0))
#define SIM_I_NOT(a, P, W, SG) ((P) ~(P)(a))
#define SIM_I_POPCNT(a, P, W, SG)                                             \
  ((uint64_t)sim_popcnt((uint64_t)(P)(a) & SIM_M64(W)))
#define SIM_I_CLZ(a, P, W, SG)                                                \
  ((uint64_t)sim_clz((uint64_t)(P)(a) & SIM_M64(W), (W)))

#define SIM_INT_BIN_OPS(X)                                                    \
  X(ADD) X(SUB) X(MUL) X(DIV) X(REM) X(MAX) X(MIN) X(POW) X(AND) X(OR)        \
  X(XOR) X(SHL) X(SHRL) X(SHRA)
#define SIM_INT_UN_OPS(X) X(NEG) X(ABS) X(SIGN) X(NOT) X(POPCNT) X(CLZ)

#define SIM_DEF_IB(OP, nm, code, T, P, W, SG)                                 \
  static void sim_##OP##_##nm(void *const *in, void *out, size_t n,           \
                              const void *ctx) {                              \
    const T *a = (const T *)in[0], *b = (const T *)in[1];                     \
    T *o = (T *)out;                                                          \
    (void)ctx;                                                                \
    SIM_MAP2(T, a, b, o, n, SIM_ST(T, W, SG, SIM_I_##OP(X, Y, P, W, SG)));   \
  }
#define SIM_DEF_IU(OP, nm, code, T, P, W, SG)                                 \
  static void sim_##OP##_##nm(void *const *in, void *out, size_t n,           \
                              const void *ctx) {                              \
    const T *a = (const T *)in[0];                                            \
    T *o = (T *)out;                                                          \
    (void)ctx;                                                                \
    SIM_MAP1(T, a, o, n, SIM_ST(T, W, SG, SIM_I_##OP(X, P, W, SG)));         \
  }
#define SIM_STAMP_IB(OP) SIM_INT_TYPES(SIM_DEF_IB, OP)
#define SIM_STAMP_IU(OP) SIM_INT_TYPES(SIM_DEF_IU, OP)
SIM_INT_BIN_OPS(SIM_STAMP_IB)
SIM_INT_UN_OPS(SIM_STAMP_IU)

/* ---- pred (i1) kernels: arithmetic on booleans as the spec defines it ---- */

#define SIM_PRED_BIN_OPS(X)                                                   \
  X(ADD, |) X(MUL, &) X(MAX, |) X(MIN, &) X(AND, &) X(OR, |) X(XOR, ^)
#define SIM_DEF_PB(OP, sym)                                                   \
  static void sim_##OP##_pred(void *const *in, void *out, size_t n,           \
                              const void *ctx) {                              \
    const uint8_t *a = (const uint8_t *)in[0], *b = (const uint8_t *)in[1];   \
    uint8_t *o = (uint8_t *)out;                                              \
    (void)ctx;                                                                \
    SIM_MAP2(uint8_t, a, b, o, n, (uint8_t)((X sym Y) & 1));                  \
  }
SIM_PRED_BIN_OPS(SIM_DEF_PB)

static void sim_NOT_pred(void *const *in, void *out, size_t n,
                         const void *ctx) {
  const uint8_t *a = (const uint8_t *)in[0];
  uint8_t *o = (uint8_t *)out;
  (void)ctx;
  SIM_MAP1(uint8_t, a, o, n, (uint8_t)!X);
}

/* ---- float kernels ---- */

/* Float types: name, dtype, storage T, compute type C, load, store, and the
 * totalOrder key of a stored value. */
#define SIM_ID(x) (x)
#define SIM_FLT_TYPES(X, OP)                                                  \
  X(OP, f32, XRT_F32, float, float, SIM_ID, SIM_ID, sim_key_f32)              \
  X(OP, f64, XRT_F64, double, double, SIM_ID, SIM_ID, sim_key_f64)            \
  X(OP, f16, XRT_F16, uint16_t, float, xrt_f16_to_f32, xrt_f32_to_f16,        \
    sim_key_h)                                                                \
  X(OP, bf16, XRT_BF16, uint16_t, float, xrt_bf16_to_f32, xrt_f32_to_bf16,    \
    sim_key_h)

/* Calls the float or double flavour of a libm-style function. */
#define SIM_M(fn, x) _Generic((x), float : fn##f, default : fn)(x)
#define SIM_M2(fn, x, y) _Generic((x), float : fn##f, default : fn)(x, y)

/* Round half to even without depending on the fenv rounding mode. */
static inline double sim_reven(double x) {
  double r = round(x);
  return fabs(x - trunc(x)) == 0.5 ? 2.0 * round(0.5 * x) : r;
}
static inline float sim_revenf(float x) {
  float r = roundf(x);
  return fabsf(x - truncf(x)) == 0.5f ? 2.0f * roundf(0.5f * x) : r;
}

#define SIM_F_ADD(x, y) ((x) + (y))
#define SIM_F_SUB(x, y) ((x) - (y))
#define SIM_F_MUL(x, y) ((x) * (y))
#define SIM_F_DIV(x, y) ((x) / (y))
#define SIM_F_REM(x, y) SIM_M2(fmod, x, y) /* sign of the dividend */
/* NaN wins; -0 < +0 (IEEE maximum/minimum, not fmax/fmin). */
#define SIM_F_MAX(x, y)                                                       \
  ((x) != (x)   ? (x)                                                         \
   : (y) != (y) ? (y)                                                         \
   : (x) > (y)  ? (x)                                                         \
   : (y) > (x)  ? (y)                                                         \
   : signbit(x) ? (y)                                                         \
                : (x))
#define SIM_F_MIN(x, y)                                                       \
  ((x) != (x)   ? (x)                                                         \
   : (y) != (y) ? (y)                                                         \
   : (x) < (y)  ? (x)                                                         \
   : (y) < (x)  ? (y)                                                         \
   : signbit(x) ? (x)                                                         \
                : (y))

#define SIM_F_NEG(x) (-(x))
#define SIM_F_ABS(x) SIM_M(fabs, x)
/* sign keeps NaN and signed zeros. */
#define SIM_F_SIGN(x) ((x) > 0 ? 1 : (x) < 0 ? -1 : (x))
#define SIM_F_SQRT(x) SIM_M(sqrt, x)
#define SIM_F_FLOOR(x) SIM_M(floor, x)
#define SIM_F_CEIL(x) SIM_M(ceil, x)
#define SIM_F_RAFZ(x) SIM_M(round, x)
#define SIM_F_REVEN(x) SIM_M(sim_reven, x)

/* Transcendentals compute in double whatever the element type and round
 * once to it, as the interpreter does (mapWithUpcastToDouble): f32 and f16
 * results are then within half an ulp plus 2^-29 ulps of the exact value. */
#define SIM_F_POW(x, y) pow(x, y)
#define SIM_F_ATAN2(x, y) atan2(x, y)
#define SIM_F_EXP(x) exp(x)
#define SIM_F_LOG(x) log(x)
#define SIM_F_RSQRT(x) (1 / sqrt(x))
#define SIM_F_TANH(x) tanh(x)
#define SIM_F_LOGISTIC(x) (1 / (1 + exp(-(x))))
#define SIM_F_SIN(x) sin(x)
#define SIM_F_COS(x) cos(x)
#define SIM_F_TAN(x) tan(x)
#define SIM_F_EXPM1(x) expm1(x)
#define SIM_F_LOG1P(x) log1p(x)
#define SIM_F_CBRT(x) cbrt(x)

/* Ops computed in the element's compute type C (correctly rounded there,
 * and float has the 2p+2 bits that make f16/bf16 results exact too) ... */
#define SIM_FLT_BIN_OPS(X) X(ADD) X(SUB) X(MUL) X(DIV) X(REM) X(MAX) X(MIN)
#define SIM_FLT_UN_OPS(X)                                                     \
  X(NEG) X(ABS) X(SIGN) X(SQRT) X(FLOOR) X(CEIL) X(RAFZ) X(REVEN)
/* ... and ops computed in double. */
#define SIM_FLT_BIN_DOPS(X) X(POW) X(ATAN2)
#define SIM_FLT_UN_DOPS(X)                                                    \
  X(EXP) X(LOG) X(RSQRT) X(TANH) X(LOGISTIC) X(SIN) X(COS) X(TAN) X(EXPM1)    \
  X(LOG1P) X(CBRT)

/* Stores a double into a float element type with one rounding. */
#define SIM_STD_f32(v) ((float)(v))
#define SIM_STD_f64(v) (v)
#define SIM_STD_f16(v) xrt_f64_to_f16(v)
#define SIM_STD_bf16(v) xrt_f64_to_bf16(v)

#define SIM_DEF_FB(OP, nm, code, T, C, LD, ST, KEY)                           \
  static void sim_##OP##_##nm(void *const *in, void *out, size_t n,           \
                              const void *ctx) {                              \
    const T *a = (const T *)in[0], *b = (const T *)in[1];                     \
    T *o = (T *)out;                                                          \
    (void)ctx;                                                                \
    SIM_MAP2(T, a, b, o, n, ST((C)SIM_F_##OP((C)LD(X), (C)LD(Y))));          \
  }
#define SIM_DEF_FU(OP, nm, code, T, C, LD, ST, KEY)                           \
  static void sim_##OP##_##nm(void *const *in, void *out, size_t n,           \
                              const void *ctx) {                              \
    const T *a = (const T *)in[0];                                            \
    T *o = (T *)out;                                                          \
    (void)ctx;                                                                \
    SIM_MAP1(T, a, o, n, ST((C)SIM_F_##OP((C)LD(X))));                       \
  }
#define SIM_DEF_FBD(OP, nm, code, T, C, LD, ST, KEY)                          \
  static void sim_##OP##_##nm(void *const *in, void *out, size_t n,           \
                              const void *ctx) {                              \
    const T *a = (const T *)in[0], *b = (const T *)in[1];                     \
    T *o = (T *)out;                                                          \
    (void)ctx;                                                                \
    SIM_MAP2(T, a, b, o, n,                                                   \
             SIM_STD_##nm(SIM_F_##OP((double)LD(X), (double)LD(Y))));         \
  }
#define SIM_DEF_FUD(OP, nm, code, T, C, LD, ST, KEY)                          \
  static void sim_##OP##_##nm(void *const *in, void *out, size_t n,           \
                              const void *ctx) {                              \
    const T *a = (const T *)in[0];                                            \
    T *o = (T *)out;                                                          \
    (void)ctx;                                                                \
    SIM_MAP1(T, a, o, n, SIM_STD_##nm(SIM_F_##OP((double)LD(X))));           \
  }
#define SIM_STAMP_FB(OP) SIM_FLT_TYPES(SIM_DEF_FB, OP)
#define SIM_STAMP_FU(OP) SIM_FLT_TYPES(SIM_DEF_FU, OP)
#define SIM_STAMP_FBD(OP) SIM_FLT_TYPES(SIM_DEF_FBD, OP)
#define SIM_STAMP_FUD(OP) SIM_FLT_TYPES(SIM_DEF_FUD, OP)
SIM_FLT_BIN_OPS(SIM_STAMP_FB)
SIM_FLT_UN_OPS(SIM_STAMP_FU)
SIM_FLT_BIN_DOPS(SIM_STAMP_FBD)
SIM_FLT_UN_DOPS(SIM_STAMP_FUD)

/* is_finite: float -> pred (output never wider than input). */
#define SIM_DEF_ISFIN(OP, nm, code, T, C, LD, ST, KEY)                        \
  static void sim_ISFIN_##nm(void *const *in, void *out, size_t n,            \
                             const void *ctx) {                               \
    const T *a = (const T *)in[0];                                            \
    uint8_t *o = (uint8_t *)out;                                              \
    (void)ctx;                                                                \
    SIM_MAP1(T, a, o, n, (uint8_t)(isfinite(LD(X)) != 0));                   \
  }
SIM_FLT_TYPES(SIM_DEF_ISFIN, ISFIN)

/* ---- complex kernels: values travel as pairs of doubles ---- */

typedef struct sim_c2 {
  double re, im;
} sim_c2;
typedef double _Complex sim_cd;

static inline sim_c2 sim_c2_mk(double re, double im) {
  sim_c2 r;
  r.re = re;
  r.im = im;
  return r;
}
/* A union avoids x + y*I, which turns an infinite y into NaNs. */
static inline sim_cd sim_cd_of(sim_c2 a) {
  union {
    sim_cd z;
    double d[2];
  } u;
  u.d[0] = a.re;
  u.d[1] = a.im;
  return u.z;
}
static inline sim_c2 sim_c2_of(sim_cd z) { return sim_c2_mk(creal(z), cimag(z)); }

static inline sim_c2 sim_c_ADD(sim_c2 a, sim_c2 b) {
  return sim_c2_mk(a.re + b.re, a.im + b.im);
}
static inline sim_c2 sim_c_SUB(sim_c2 a, sim_c2 b) {
  return sim_c2_mk(a.re - b.re, a.im - b.im);
}
static inline sim_c2 sim_c_MUL(sim_c2 a, sim_c2 b) {
  return sim_c2_mk(a.re * b.re - a.im * b.im, a.re * b.im + a.im * b.re);
}
/* C's complex division scales to avoid overflow (Annex G / __divdc3). */
static inline sim_c2 sim_c_DIV(sim_c2 a, sim_c2 b) {
  return sim_c2_of(sim_cd_of(a) / sim_cd_of(b));
}
static inline sim_c2 sim_c_POW(sim_c2 a, sim_c2 b) {
  return sim_c2_of(cpow(sim_cd_of(a), sim_cd_of(b)));
}
/* atan2(y, x) = -i * log((x + i*y) / sqrt(x*x + y*y)), y = lhs. */
static inline sim_c2 sim_c_ATAN2(sim_c2 y, sim_c2 x) {
  sim_c2 w = sim_c2_mk(x.re - y.im, x.im + y.re);
  sim_c2 s = sim_c_ADD(sim_c_MUL(x, x), sim_c_MUL(y, y));
  sim_cd l = clog(sim_cd_of(w) / csqrt(sim_cd_of(s)));
  return sim_c2_mk(cimag(l), -creal(l));
}
/* Lexicographic on (re, im), as the interpreter orders complex numbers. */
static inline sim_c2 sim_c_MAX(sim_c2 a, sim_c2 b) {
  int gt = a.re == b.re ? a.im > b.im : a.re > b.re;
  return gt ? a : b;
}
static inline sim_c2 sim_c_MIN(sim_c2 a, sim_c2 b) {
  int lt = a.re == b.re ? a.im < b.im : a.re < b.re;
  return lt ? a : b;
}

static inline sim_c2 sim_c_NEG(sim_c2 a) { return sim_c2_mk(-a.re, -a.im); }
static inline sim_c2 sim_c_SIGN(sim_c2 a) {
  if (isnan(a.re) || isnan(a.im)) return sim_c2_mk(NAN, NAN);
  if (a.re == 0 && a.im == 0) return a;
  double h = hypot(a.re, a.im);
  return sim_c2_mk(a.re / h, a.im / h);
}
#define SIM_C_LIBM(OP, f)                                                     \
  static inline sim_c2 sim_c_##OP(sim_c2 a) {                                 \
    return sim_c2_of(f(sim_cd_of(a)));                                        \
  }
SIM_C_LIBM(EXP, cexp)
SIM_C_LIBM(LOG, clog)
SIM_C_LIBM(SQRT, csqrt)
SIM_C_LIBM(TANH, ctanh)
SIM_C_LIBM(SIN, csin)
SIM_C_LIBM(COS, ccos)
SIM_C_LIBM(TAN, ctan)
static inline sim_c2 sim_c_RSQRT(sim_c2 a) {
  return sim_c2_of(1.0 / csqrt(sim_cd_of(a)));
}
static inline sim_c2 sim_c_LOGISTIC(sim_c2 a) {
  return sim_c2_of(1.0 / (1.0 + cexp(sim_cd_of(sim_c_NEG(a)))));
}
/* exp(z) - 1 without cancellation near 0: expm1(x)cos(y) - 2sin^2(y/2). */
static inline sim_c2 sim_c_EXPM1(sim_c2 a) {
  double s = sin(0.5 * a.im);
  return sim_c2_mk(expm1(a.re) * cos(a.im) - 2 * s * s, exp(a.re) * sin(a.im));
}
/* log(1 + z): |1+z|^2 - 1 = x(2 + x) + y^2 keeps precision near 0. */
static inline sim_c2 sim_c_LOG1P(sim_c2 a) {
  double t = a.re * (2 + a.re) + a.im * a.im;
  if (!isfinite(t) || t > 1) /* far from 0: the plain formula is fine */
    return sim_c2_of(clog(sim_cd_of(sim_c2_mk(1 + a.re, a.im))));
  return sim_c2_mk(0.5 * log1p(t), atan2(a.im, 1 + a.re));
}
/* Principal cube root: cbrt(|z|) at a third of the argument. */
static inline sim_c2 sim_c_CBRT(sim_c2 a) {
  if (a.re == 0 && a.im == 0) return a;
  double r = cbrt(hypot(a.re, a.im)), t = atan2(a.im, a.re) / 3;
  return sim_c2_mk(r * cos(t), r * sin(t));
}

#define SIM_CPX_TYPES(X, OP)                                                  \
  X(OP, c64, XRT_C64, float)                                                  \
  X(OP, c128, XRT_C128, double)
#define SIM_CPX_BIN_OPS(X)                                                    \
  X(ADD) X(SUB) X(MUL) X(DIV) X(POW) X(ATAN2) X(MAX) X(MIN)
#define SIM_CPX_UN_OPS(X)                                                     \
  X(NEG) X(SIGN) X(EXP) X(LOG) X(SQRT) X(RSQRT) X(TANH) X(LOGISTIC) X(SIN)    \
  X(COS) X(TAN) X(EXPM1) X(LOG1P) X(CBRT)

#define SIM_DEF_CB(OP, nm, code, ET)                                          \
  static void sim_##OP##_##nm(void *const *in, void *out, size_t n,           \
                              const void *ctx) {                              \
    const ET *a = (const ET *)in[0], *b = (const ET *)in[1];                  \
    ET *o = (ET *)out;                                                        \
    (void)ctx;                                                                \
    for (size_t i = 0; i < n; i++) {                                          \
      sim_c2 r = sim_c_##OP(sim_c2_mk(a[2 * i], a[2 * i + 1]),                \
                            sim_c2_mk(b[2 * i], b[2 * i + 1]));               \
      o[2 * i] = (ET)r.re;                                                    \
      o[2 * i + 1] = (ET)r.im;                                                \
    }                                                                         \
  }
#define SIM_DEF_CU(OP, nm, code, ET)                                          \
  static void sim_##OP##_##nm(void *const *in, void *out, size_t n,           \
                              const void *ctx) {                              \
    const ET *a = (const ET *)in[0];                                          \
    ET *o = (ET *)out;                                                        \
    (void)ctx;                                                                \
    for (size_t i = 0; i < n; i++) {                                          \
      sim_c2 r = sim_c_##OP(sim_c2_mk(a[2 * i], a[2 * i + 1]));               \
      o[2 * i] = (ET)r.re;                                                    \
      o[2 * i + 1] = (ET)r.im;                                                \
    }                                                                         \
  }
#define SIM_STAMP_CB(OP) SIM_CPX_TYPES(SIM_DEF_CB, OP)
#define SIM_STAMP_CU(OP) SIM_CPX_TYPES(SIM_DEF_CU, OP)
SIM_CPX_BIN_OPS(SIM_STAMP_CB)
SIM_CPX_UN_OPS(SIM_STAMP_CU)

/* Complex -> real element type: abs, real and imag (outputs are narrower, so
 * forward loops stay alias-safe).  On real inputs real is a copy and imag 0. */
#define SIM_DEF_CR(OP, nm, code, ET)                                          \
  static void sim_##OP##_##nm(void *const *in, void *out, size_t n,           \
                              const void *ctx) {                              \
    const ET *a = (const ET *)in[0];                                          \
    ET *o = (ET *)out;                                                        \
    (void)ctx;                                                                \
    for (size_t i = 0; i < n; i++) o[i] = (ET)SIM_CR_##OP(a[2 * i], a[2 * i + 1]); \
  }
#define SIM_CR_ABS(re, im) hypot(re, im)
#define SIM_CR_REAL(re, im) (re)
#define SIM_CR_IMAG(re, im) (im)
SIM_CPX_TYPES(SIM_DEF_CR, ABS)
SIM_CPX_TYPES(SIM_DEF_CR, REAL)
SIM_CPX_TYPES(SIM_DEF_CR, IMAG)

/* complex(re, im): output twice as wide as the inputs, so run backwards. */
#define SIM_DEF_CMK(OP, nm, code, ET)                                         \
  static void sim_CMK_##nm(void *const *in, void *out, size_t n,              \
                           const void *ctx) {                                 \
    const ET *a = (const ET *)in[0], *b = (const ET *)in[1];                  \
    ET *o = (ET *)out;                                                        \
    (void)ctx;                                                                \
    for (size_t i = n; i-- > 0;) {                                            \
      ET re = a[i], im = b[i];                                                \
      o[2 * i] = re;                                                          \
      o[2 * i + 1] = im;                                                      \
    }                                                                         \
  }
SIM_CPX_TYPES(SIM_DEF_CMK, CMK)

/* Same-size copy (real of a real type, bitcast); NULL-safe for n == 0. */
static void sim_copy(void *const *in, void *out, size_t n, const void *ctx) {
  size_t esz = *(const size_t *)ctx;
  if (n && in[0] != out) memcpy(out, in[0], n * esz);
}
static void sim_zero(void *const *in, void *out, size_t n, const void *ctx) {
  size_t esz = *(const size_t *)ctx;
  (void)in;
  if (n) memset(out, 0, n * esz); /* +0.0 is all zero bits */
}
static const size_t sim_esz[17] = {0, 1, 2, 3, 4, 5, 6, 7, 8,
                                   9, 10, 11, 12, 13, 14, 15, 16};

/* ---- compare ---- */

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

/* ---- convert ---- */

/* A conversion loads the source into one of four intermediates - i (int64),
 * u (uint64), f (double, exact for every float type), c (a pair of doubles)
 * - and the destination stores from that intermediate. */

/* Float -> integer: truncate, saturate, NaN -> 0 (APFloat's convertToInteger).
 * Returns the W-bit pattern; the checks come before any cast (no UB). */
static inline uint64_t sim_f2i(double d, int w, int sg) {
  double lim = ldexp(1.0, sg ? w - 1 : w); /* exact; folds for constant w */
  if (d != d) return 0;
  if (sg) { /* d > -lim - 1 means trunc(d) >= -lim (for w = 64 the bound
             * rounds to -lim, whose saturated result is the same value) */
    if (!(d > -lim - 1)) return (uint64_t)0 - ((uint64_t)1 << ((w - 1) & 63));
    if (d >= lim) return ((uint64_t)1 << ((w - 1) & 63)) - 1;
    return (uint64_t)(int64_t)d; /* in range: the cast truncates */
  }
  if (!(d > -1)) return 0;
  if (d >= lim) return SIM_M64(w);
  return (uint64_t)d;
}

/* Integer -> double rounded to odd, so a second rounding to a narrower float
 * is still correct (no double rounding for |v| >= 2^53). */
static inline double sim_u2d_odd(uint64_t m) {
  if (m < ((uint64_t)1 << 53)) return (double)m;
  int drop = 11 - sim_clz(m, 64); /* keep the top 53 bits */
  uint64_t kept = m >> drop;
  if (m & (((uint64_t)1 << drop) - 1)) kept |= 1;
  return ldexp((double)kept, drop);
}
static inline double sim_i2d_odd(int64_t v) {
  return v < 0 ? -sim_u2d_odd(0 - (uint64_t)v) : sim_u2d_odd((uint64_t)v);
}

/* Loads: name, storage T, intermediate kind. */
#define SIM_LD(nm, T, K, expr)                                                \
  static inline K sim_ld_##nm(const void *p, size_t i) {                      \
    const T *a = (const T *)p;                                                \
    return expr;                                                              \
  }
SIM_LD(pred, uint8_t, uint64_t, a[i] != 0)
SIM_LD(s2, int8_t, int64_t, a[i])
SIM_LD(s4, int8_t, int64_t, a[i])
SIM_LD(s8, int8_t, int64_t, a[i])
SIM_LD(s16, int16_t, int64_t, a[i])
SIM_LD(s32, int32_t, int64_t, a[i])
SIM_LD(s64, int64_t, int64_t, a[i])
SIM_LD(u2, uint8_t, uint64_t, a[i])
SIM_LD(u4, uint8_t, uint64_t, a[i])
SIM_LD(u8, uint8_t, uint64_t, a[i])
SIM_LD(u16, uint16_t, uint64_t, a[i])
SIM_LD(u32, uint32_t, uint64_t, a[i])
SIM_LD(u64, uint64_t, uint64_t, a[i])
SIM_LD(f16, uint16_t, double, xrt_f16_to_f32(a[i]))
SIM_LD(bf16, uint16_t, double, xrt_bf16_to_f32(a[i]))
SIM_LD(f32, float, double, a[i])
SIM_LD(f64, double, double, a[i])
SIM_LD(c64, float, sim_c2, sim_c2_mk(a[2 * i], a[2 * i + 1]))
SIM_LD(c128, double, sim_c2, sim_c2_mk(a[2 * i], a[2 * i + 1]))

/* Stores: sim_st_<dst>_<kind>(out, i, value). */
#define SIM_ST_FNS(nm, T, ei, eu, ef, ec)                                     \
  static inline void sim_st_##nm##_i(void *p, size_t i, int64_t v) {          \
    T *o = (T *)p;                                                            \
    ei;                                                                       \
  }                                                                           \
  static inline void sim_st_##nm##_u(void *p, size_t i, uint64_t v) {         \
    T *o = (T *)p;                                                            \
    eu;                                                                       \
  }                                                                           \
  static inline void sim_st_##nm##_f(void *p, size_t i, double v) {           \
    T *o = (T *)p;                                                            \
    ef;                                                                       \
  }                                                                           \
  static inline void sim_st_##nm##_c(void *p, size_t i, sim_c2 v) {           \
    T *o = (T *)p;                                                            \
    ec;                                                                       \
  }
/* Integers wrap from integers, saturate from floats, ignore imag parts. */
#define SIM_ST_INT(nm, T, W, SG)                                              \
  SIM_ST_FNS(nm, T, o[i] = SIM_ST(T, W, SG, (uint64_t)v),                     \
             o[i] = SIM_ST(T, W, SG, v),                                      \
             o[i] = SIM_ST(T, W, SG, sim_f2i(v, W, SG)),                      \
             o[i] = SIM_ST(T, W, SG, sim_f2i(v.re, W, SG)))
/* Floats: fi/fu/fd convert an int64 / uint64 / double, correctly rounded. */
#define SIM_ST_FLT(nm, T, fi, fu, fd)                                         \
  SIM_ST_FNS(nm, T, o[i] = fi(v), o[i] = fu(v), o[i] = fd(v), o[i] = fd(v.re))
#define SIM_ST_CPX(nm, ET)                                                    \
  SIM_ST_FNS(nm, ET, (o[2 * i] = (ET)v, o[2 * i + 1] = 0),                    \
             (o[2 * i] = (ET)v, o[2 * i + 1] = 0),                            \
             (o[2 * i] = (ET)v, o[2 * i + 1] = 0),                            \
             (o[2 * i] = (ET)v.re, o[2 * i + 1] = (ET)v.im))

SIM_ST_FNS(pred, uint8_t, o[i] = v != 0, o[i] = v != 0, o[i] = v != 0,
           o[i] = v.re != 0)
SIM_ST_INT(s2, int8_t, 2, 1)
SIM_ST_INT(s4, int8_t, 4, 1)
SIM_ST_INT(s8, int8_t, 8, 1)
SIM_ST_INT(s16, int16_t, 16, 1)
SIM_ST_INT(s32, int32_t, 32, 1)
SIM_ST_INT(s64, int64_t, 64, 1)
SIM_ST_INT(u2, uint8_t, 2, 0)
SIM_ST_INT(u4, uint8_t, 4, 0)
SIM_ST_INT(u8, uint8_t, 8, 0)
SIM_ST_INT(u16, uint16_t, 16, 0)
SIM_ST_INT(u32, uint32_t, 32, 0)
SIM_ST_INT(u64, uint64_t, 64, 0)
#define SIM_I2F16(v) xrt_f64_to_f16(sim_i2d_odd(v))
#define SIM_U2F16(v) xrt_f64_to_f16(sim_u2d_odd(v))
#define SIM_I2BF16(v) xrt_f64_to_bf16(sim_i2d_odd(v))
#define SIM_U2BF16(v) xrt_f64_to_bf16(sim_u2d_odd(v))
#define SIM_TOF(v) ((float)(v))
#define SIM_TOD(v) ((double)(v))
SIM_ST_FLT(f16, uint16_t, SIM_I2F16, SIM_U2F16, xrt_f64_to_f16)
SIM_ST_FLT(bf16, uint16_t, SIM_I2BF16, SIM_U2BF16, xrt_f64_to_bf16)
SIM_ST_FLT(f32, float, SIM_TOF, SIM_TOF, SIM_TOF)
SIM_ST_FLT(f64, double, SIM_TOD, SIM_TOD, SIM_TOD)
SIM_ST_CPX(c64, float)
SIM_ST_CPX(c128, double)

/* Convertible types: name, dtype, element bytes, load kind (i/u/f/c). */
#define SIM_CV_SRCS(X)                                                        \
  X(pred, XRT_PRED, 1, u) X(s2, XRT_S2, 1, i) X(s4, XRT_S4, 1, i)             \
  X(s8, XRT_S8, 1, i) X(s16, XRT_S16, 2, i) X(s32, XRT_S32, 4, i)             \
  X(s64, XRT_S64, 8, i) X(u2, XRT_U2, 1, u) X(u4, XRT_U4, 1, u)               \
  X(u8, XRT_U8, 1, u) X(u16, XRT_U16, 2, u) X(u32, XRT_U32, 4, u)             \
  X(u64, XRT_U64, 8, u) X(f16, XRT_F16, 2, f) X(bf16, XRT_BF16, 2, f)         \
  X(f32, XRT_F32, 4, f) X(f64, XRT_F64, 8, f) X(c64, XRT_C64, 8, c)           \
  X(c128, XRT_C128, 16, c)
/* The same list again, carrying the source's parameters (A, B, K). */
#define SIM_CV_DSTS(X, A, B, K)                                               \
  X(A, B, K, pred, XRT_PRED, 1) X(A, B, K, s2, XRT_S2, 1)                     \
  X(A, B, K, s4, XRT_S4, 1) X(A, B, K, s8, XRT_S8, 1)                         \
  X(A, B, K, s16, XRT_S16, 2) X(A, B, K, s32, XRT_S32, 4)                     \
  X(A, B, K, s64, XRT_S64, 8) X(A, B, K, u2, XRT_U2, 1)                       \
  X(A, B, K, u4, XRT_U4, 1) X(A, B, K, u8, XRT_U8, 1)                         \
  X(A, B, K, u16, XRT_U16, 2) X(A, B, K, u32, XRT_U32, 4)                     \
  X(A, B, K, u64, XRT_U64, 8) X(A, B, K, f16, XRT_F16, 2)                     \
  X(A, B, K, bf16, XRT_BF16, 2) X(A, B, K, f32, XRT_F32, 4)                   \
  X(A, B, K, f64, XRT_F64, 8) X(A, B, K, c64, XRT_C64, 8)                     \
  X(A, B, K, c128, XRT_C128, 16)

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

/* ---- dispatch ---- */

/* Elementwise ops with one kernel per element type: our id, xrt opcode,
 * number of operands. */
#define SIM_EW_OPS(X)                                                         \
  X(ADD, ADD, 2) X(SUB, SUBTRACT, 2) X(MUL, MULTIPLY, 2) X(DIV, DIVIDE, 2)    \
  X(REM, REMAINDER, 2) X(MAX, MAXIMUM, 2) X(MIN, MINIMUM, 2)                  \
  X(POW, POWER, 2) X(AND, AND, 2) X(OR, OR, 2) X(XOR, XOR, 2)                 \
  X(SHL, SHIFT_LEFT, 2) X(SHRL, SHIFT_RIGHT_LOGICAL, 2)                       \
  X(SHRA, SHIFT_RIGHT_ARITHMETIC, 2) X(ATAN2, ATAN2, 2) X(CMK, COMPLEX, 2)    \
  X(NEG, NEGATE, 1) X(ABS, ABS, 1) X(SIGN, SIGN, 1) X(NOT, NOT, 1)            \
  X(EXP, EXPONENTIAL, 1) X(LOG, LOG, 1) X(SQRT, SQRT, 1) X(RSQRT, RSQRT, 1)   \
  X(TANH, TANH, 1) X(LOGISTIC, LOGISTIC, 1) X(SIN, SINE, 1) X(COS, COSINE, 1) \
  X(TAN, TAN, 1) X(FLOOR, FLOOR, 1) X(CEIL, CEIL, 1)                          \
  X(RAFZ, ROUND_NEAREST_AFZ, 1) X(REVEN, ROUND_NEAREST_EVEN, 1)               \
  X(POPCNT, POPCNT, 1) X(CLZ, COUNT_LEADING_ZEROS, 1)                         \
  X(EXPM1, EXPONENTIAL_MINUS_ONE, 1) X(LOG1P, LOG_PLUS_ONE, 1)                \
  X(CBRT, CBRT, 1) X(ISFIN, IS_FINITE, 1) X(REAL, REAL, 1) X(IMAG, IMAG, 1)    \
  X(MULHI, CHLO_MULHI, 2)

enum {
#define SIM_EW_ENUM(e, xo, ar) SIM_EW_##e,
  SIM_EW_OPS(SIM_EW_ENUM)
#undef SIM_EW_ENUM
  SIM_EW_NOPS
};

/* Kernel table indexed by [op][operand element type]; NULL = unsupported. */
#define SIM_TENT_I(OP, nm, code, T, P, W, SG) [SIM_EW_##OP][code] = sim_##OP##_##nm,
#define SIM_TENT_F(OP, nm, code, T, C, LD, ST, KEY) [SIM_EW_##OP][code] = sim_##OP##_##nm,
#define SIM_TENT_C(OP, nm, code, ET) [SIM_EW_##OP][code] = sim_##OP##_##nm,
#define SIM_TENT_P(OP, sym) [SIM_EW_##OP][XRT_PRED] = sim_##OP##_pred,
#define SIM_TROW_I(OP) SIM_INT_TYPES(SIM_TENT_I, OP)
#define SIM_TROW_F(OP) SIM_FLT_TYPES(SIM_TENT_F, OP)
#define SIM_TROW_C(OP) SIM_CPX_TYPES(SIM_TENT_C, OP)
static const sim_ew_fn sim_ew_tab[SIM_EW_NOPS][XRT_DTYPE_COUNT] = {
    SIM_INT_BIN_OPS(SIM_TROW_I) SIM_INT_UN_OPS(SIM_TROW_I)
    SIM_FLT_BIN_OPS(SIM_TROW_F) SIM_FLT_UN_OPS(SIM_TROW_F)
    SIM_FLT_BIN_DOPS(SIM_TROW_F) SIM_FLT_UN_DOPS(SIM_TROW_F)
    SIM_CPX_BIN_OPS(SIM_TROW_C) SIM_CPX_UN_OPS(SIM_TROW_C)
    SIM_PRED_BIN_OPS(SIM_TENT_P)
    [SIM_EW_NOT][XRT_PRED] = sim_NOT_pred,
    SIM_FLT_TYPES(SIM_TENT_F, ISFIN)
    SIM_CPX_TYPES(SIM_TENT_C, ABS)
    SIM_CPX_TYPES(SIM_TENT_C, REAL)
    SIM_CPX_TYPES(SIM_TENT_C, IMAG)
    [SIM_EW_CMK][XRT_F32] = sim_CMK_c64,
    [SIM_EW_CMK][XRT_F64] = sim_CMK_c128,
    SIM_INT_TYPES(SIM_TENT_I, MULHI)
};

/* Compare kernels by [totalorder][direction][element type]. */
enum { SIM_EQ, SIM_NE, SIM_GE, SIM_GT, SIM_LE, SIM_LT, SIM_NDIRS };
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

static int sim_ew_op_of(xrt_opcode code) {
  switch (code) {
#define SIM_EW_CASE(e, xo, ar)                                                \
  case XRT_OP_##xo:                                                           \
    return SIM_EW_##e;
    SIM_EW_OPS(SIM_EW_CASE)
#undef SIM_EW_CASE
  default:
    return -1;
  }
}

static const int sim_ew_arity[SIM_EW_NOPS] = {
#define SIM_EW_AR(e, xo, ar) [SIM_EW_##e] = ar,
    SIM_EW_OPS(SIM_EW_AR)
#undef SIM_EW_AR
};

/* True if the op code is one sim_ew_kernel handles. */
static int sim_ew_handles(xrt_opcode code) {
  return sim_ew_op_of(code) >= 0 || code == XRT_OP_COMPARE ||
         code == XRT_OP_CONVERT || code == XRT_OP_BITCAST_CONVERT ||
         code == XRT_OP_REDUCE_PRECISION ||
         code == XRT_OP_UNIFORM_QUANTIZE || code == XRT_OP_UNIFORM_DEQUANTIZE;
}

/* Element class: 'p' pred, 's'/'u' integers, 'f' f16/bf16/f32/f64, 'm' the
 * small floats (f8/f6/f4), 'c' complex. */
static int sim_ew_class(xrt_dtype t) {
  switch (t) {
  case XRT_PRED: return 'p';
  case XRT_S2: case XRT_S4: case XRT_S8: case XRT_S16: case XRT_S32:
  case XRT_S64: return 's';
  case XRT_U2: case XRT_U4: case XRT_U8: case XRT_U16: case XRT_U32:
  case XRT_U64: return 'u';
  case XRT_F16: case XRT_BF16: case XRT_F32: case XRT_F64: return 'f';
  case XRT_C64: case XRT_C128: return 'c';
  case XRT_F8E4M3FN: case XRT_F8E5M2: case XRT_F8E4M3FNUZ:
  case XRT_F8E5M2FNUZ: case XRT_F8E4M3B11FNUZ: case XRT_F8E3M4:
  case XRT_F8E4M3: case XRT_F8E8M0FNU: case XRT_F6E2M3FN: case XRT_F6E3M2FN:
  case XRT_F4E2M1FN: return 'm';
  default: return 0;
  }
}

/* Bit width of an element type (the MLIR one: 64 for c64). */
static int sim_ew_bits(xrt_dtype t) {
  static const int8_t bits[XRT_DTYPE_COUNT] = {
      [XRT_PRED] = 1, [XRT_S8] = 8, [XRT_S16] = 16, [XRT_S32] = 32,
      [XRT_S64] = 64, [XRT_U8] = 8, [XRT_U16] = 16, [XRT_U32] = 32,
      [XRT_U64] = 64, [XRT_F16] = 16, [XRT_BF16] = 16, [XRT_F32] = 32,
      [XRT_F64] = 64, [XRT_C64] = 64, [XRT_S2] = 2, [XRT_S4] = 4,
      [XRT_U2] = 2, [XRT_U4] = 4, [XRT_F8E4M3FN] = 8, [XRT_F8E5M2] = 8,
      [XRT_F8E4M3FNUZ] = 8, [XRT_F8E5M2FNUZ] = 8, [XRT_F8E4M3B11FNUZ] = 8,
      [XRT_F8E3M4] = 8, [XRT_F8E4M3] = 8, [XRT_F8E8M0FNU] = 8,
      [XRT_F6E2M3FN] = 6, [XRT_F6E3M2FN] = 6, [XRT_F4E2M1FN] = 4};
  if (t == XRT_C128) return 128; /* does not fit the int8_t table */
  return (unsigned)t < XRT_DTYPE_COUNT ? bits[t] : 0;
}
/* Bytes per element in buffers. */
static size_t sim_ew_size(xrt_dtype t) {
  int b = sim_ew_bits(t);
  return b <= 8 ? (b > 0) : (size_t)b / 8;
}

/* The core's opcode names, dtype classes and shape spelling, repeated here
 * so that the plugin built as a shared object calls nothing in xrt.c. */
static const char *sim_opcode_name(xrt_opcode code) {
  static const char *const names[XRT_OP_COUNT] = {
      [XRT_OP_INVALID] = "invalid",
#define SIM_OPCODE_NAME(e, s) [XRT_OP_##e] = s,
      XRT_OPCODES(SIM_OPCODE_NAME)
#undef SIM_OPCODE_NAME
  };
  return (unsigned)code < XRT_OP_COUNT ? names[code] : "invalid";
}
static int sim_dtype_is_float(xrt_dtype t) {
  int c = sim_ew_class(t);
  return c == 'f' || c == 'm';
}
static int sim_dtype_is_complex(xrt_dtype t) { return sim_ew_class(t) == 'c'; }
static const char *sim_dtype_name(xrt_dtype t);
/* "tensor<2x3xf32>" into buf (cap > 0), truncated if it does not fit. */
static void sim_shape_format(const xrt_shape *s, char *buf, size_t cap) {
  size_t n = (size_t)snprintf(buf, cap, "tensor<");
  for (int32_t i = 0; i < s->rank && i < XRT_MAX_RANK && n < cap; i++)
    n += (size_t)snprintf(buf + n, cap - n, "%lldx", (long long)s->dims[i]);
  if (n < cap) snprintf(buf + n, cap - n, "%s>", sim_dtype_name(s->dtype));
}

/* Writes "<op> is not implemented for <type>[ -> <type>]" and returns NULL. */
static sim_ew_fn sim_ew_unsup(const xrt_ir_func *f, const xrt_ir_op *op,
                              int32_t v, int32_t r, const char *why_extra,
                              char *why, size_t whycap) {
  char a[128] = "", b[128] = "";
  sim_shape_format(&f->value_types[v].shape, a, sizeof a);
  if (r >= 0) sim_shape_format(&f->value_types[r].shape, b, sizeof b);
  if (why && whycap)
    snprintf(why, whycap, "%s is not implemented for %s%s%s%s",
             op->name ? op->name : sim_opcode_name(op->code), a,
             r >= 0 ? " -> " : "", b, why_extra ? why_extra : "");
  return NULL;
}

/* A kernel context could not be allocated: *ctx_owned = -1 tells the
 * caller (out of memory, not unsupported). */
static sim_ew_fn sim_ew_oom(int *ctx_owned, char *why, size_t whycap) {
  *ctx_owned = -1;
  if (why && whycap)
    snprintf(why, whycap, "out of host memory for an elementwise kernel's "
             "context");
  return NULL;
}

/* ---- the f8/f6/f4 families ---- */

/* Every op decodes through a 256-entry table (exact in double), computes in
 * double and rounds once to the result type, as the interpreter's APFloat
 * arithmetic and mapWithUpcastToDouble do.  Values a format cannot hold
 * follow APFloat's convert: formats with infinities overflow to them, the
 * FN/FNUZ and E8M0 formats (NaN but no infinity) give NaN, and the FP6/FP4
 * formats (neither) saturate to their largest value; NaN becomes +0 there. */
typedef struct sim_mf {
  xrt_dtype t, r;   /* operand and result element types */
  int dir;          /* compare: SIM_EQ..SIM_LT, +8 for TOTALORDER */
  uint8_t tmask;    /* the operand's bits within its byte */
  double dec[256];  /* operand bit pattern -> value */
} sim_mf;

static uint8_t sim_mf_enc(xrt_dtype t, double d) {
  xrt_minifloat_format f;
  if (!xrt_minifloat_format_of(t, &f)) return 0;
  unsigned mw = (unsigned)(f.ebits + f.mbits), all = (1u << mw) - 1u;
  unsigned neg = d < 0 && f.kind != XRT_MINIFLOAT_E8M0 ? 1u << mw : 0u;
  if (d != d) { /* NaN; FP6/FP4 have none */
    int32_t r = xrt_minifloat_from_f64(t, d);
    return (uint8_t)(r >= 0 ? r : 0);
  }
  if (d - d != 0) { /* infinity */
    switch (f.kind) {
    case XRT_MINIFLOAT_IEEE: return (uint8_t)(neg | (all >> f.mbits << f.mbits));
    case XRT_MINIFLOAT_FN: return (uint8_t)(neg | all);
    case XRT_MINIFLOAT_FNUZ: return (uint8_t)(1u << mw);
    case XRT_MINIFLOAT_E8M0: return 0xff;
    default: return (uint8_t)(neg | all); /* saturate */
    }
  }
  int32_t r = xrt_minifloat_from_f64(t, d);
  return (uint8_t)(r >= 0 ? r : (int32_t)(neg | all)); /* FP6/FP4 saturate */
}

static inline double sim_mf_dec1(xrt_dtype t, uint8_t b) {
  xrt_minifloat_format f;
  if (!xrt_minifloat_format_of(t, &f)) return 0;
  unsigned w = f.kind == XRT_MINIFLOAT_E8M0 ? 8u : 1u + f.ebits + f.mbits;
  return xrt_minifloat_to_f64(t, (uint8_t)(b & ((1u << w) - 1u)));
}

/* totalOrder key of a sign-magnitude pattern of width w (E8M0: unsigned). */
static inline unsigned sim_mf_key(const sim_mf *m, uint8_t b) {
  unsigned v = b & m->tmask, h = (m->tmask + 1u) >> 1;
  if (m->t == XRT_F8E8M0FNU) return v;
  return (v & h) ? m->tmask - v : v | h; /* negatives reversed below */
}

#define SIM_DEF_MB(OP)                                                        \
  static void sim_##OP##_mf(void *const *in, void *out, size_t n,             \
                            const void *ctx) {                                \
    const sim_mf *m = (const sim_mf *)ctx;                                    \
    const uint8_t *a = (const uint8_t *)in[0], *b = (const uint8_t *)in[1];   \
    uint8_t *o = (uint8_t *)out;                                              \
    for (size_t i = 0; i < n; i++)                                            \
      o[i] = sim_mf_enc(m->r, (double)SIM_F_##OP(m->dec[a[i]], m->dec[b[i]])); \
  }
#define SIM_DEF_MU(OP)                                                        \
  static void sim_##OP##_mf(void *const *in, void *out, size_t n,             \
                            const void *ctx) {                                \
    const sim_mf *m = (const sim_mf *)ctx;                                    \
    const uint8_t *a = (const uint8_t *)in[0];                                \
    uint8_t *o = (uint8_t *)out;                                              \
    for (size_t i = 0; i < n; i++)                                            \
      o[i] = sim_mf_enc(m->r, (double)SIM_F_##OP(m->dec[a[i]]));              \
  }
#define SIM_F_REAL(x) (x)
#define SIM_F_IMAG(x) ((x) * 0 == 0 ? 0.0 : 0.0)
SIM_FLT_BIN_OPS(SIM_DEF_MB)
SIM_FLT_BIN_DOPS(SIM_DEF_MB)
SIM_FLT_UN_OPS(SIM_DEF_MU)
SIM_FLT_UN_DOPS(SIM_DEF_MU)
SIM_DEF_MU(REAL)
SIM_DEF_MU(IMAG)

static void sim_ISFIN_mf(void *const *in, void *out, size_t n,
                         const void *ctx) {
  const sim_mf *m = (const sim_mf *)ctx;
  const uint8_t *a = (const uint8_t *)in[0];
  uint8_t *o = (uint8_t *)out;
  for (size_t i = 0; i < n; i++) o[i] = (uint8_t)(isfinite(m->dec[a[i]]) != 0);
}

static void sim_cmp_mf(void *const *in, void *out, size_t n,
                       const void *ctx) {
  const sim_mf *m = (const sim_mf *)ctx;
  const uint8_t *a = (const uint8_t *)in[0], *b = (const uint8_t *)in[1];
  uint8_t *o = (uint8_t *)out;
  for (size_t i = 0; i < n; i++) {
    int r = 0;
    if (m->dir >= 8) { /* TOTALORDER on the bit patterns */
      unsigned x = sim_mf_key(m, a[i]), y = sim_mf_key(m, b[i]);
      switch (m->dir - 8) {
      case SIM_EQ: r = x == y; break;
      case SIM_NE: r = x != y; break;
      case SIM_GE: r = x >= y; break;
      case SIM_GT: r = x > y; break;
      case SIM_LE: r = x <= y; break;
      default: r = x < y; break;
      }
    } else {
      double x = m->dec[a[i]], y = m->dec[b[i]];
      switch (m->dir) {
      case SIM_EQ: r = x == y; break;
      case SIM_NE: r = x != y; break;
      case SIM_GE: r = x >= y; break;
      case SIM_GT: r = x > y; break;
      case SIM_LE: r = x <= y; break;
      default: r = x < y; break;
      }
    }
    o[i] = (uint8_t)r;
  }
}

/* Conversions: a small float to any other type goes through its exact
 * double value; anything to a small float through a double rounded to odd
 * (integers) or exact (floats), so the final rounding is the only one. */
static inline double sim_k2d_i(int64_t v) { return sim_i2d_odd(v); }
static inline double sim_k2d_u(uint64_t v) { return sim_u2d_odd(v); }
static inline double sim_k2d_f(double v) { return v; }
static inline double sim_k2d_c(sim_c2 v) { return v.re; }

#define SIM_DEF_CV_TOMF(S, code, SSZ, K)                                      \
  static void sim_cv_##S##_mf(void *const *in, void *out, size_t n,           \
                              const void *ctx) {                              \
    const sim_mf *m = (const sim_mf *)ctx;                                    \
    uint8_t *o = (uint8_t *)out;                                              \
    for (size_t i = 0; i < n; i++)                                            \
      o[i] = sim_mf_enc(m->r, sim_k2d_##K(sim_ld_##S(in[0], i)));            \
  }
SIM_CV_SRCS(SIM_DEF_CV_TOMF)

#define SIM_DEF_CV_FROMMF(A, B, K, D, dcode, DSZ)                             \
  static void sim_cv_mf_##D(void *const *in, void *out, size_t n,             \
                            const void *ctx) {                                \
    const sim_mf *m = (const sim_mf *)ctx;                                    \
    const uint8_t *a = (const uint8_t *)in[0];                                \
    for (size_t i = n; i-- > 0;) /* never narrower: backwards */             \
      sim_st_##D##_f(out, i, m->dec[a[i]]);                                   \
  }
SIM_CV_DSTS(SIM_DEF_CV_FROMMF, 0, 0, 0)

static void sim_cv_mf_mf(void *const *in, void *out, size_t n,
                         const void *ctx) {
  const sim_mf *m = (const sim_mf *)ctx;
  const uint8_t *a = (const uint8_t *)in[0];
  uint8_t *o = (uint8_t *)out;
  for (size_t i = 0; i < n; i++) o[i] = sim_mf_enc(m->r, m->dec[a[i]]);
}

#define SIM_CV_TOMF_ENT(S, code, SSZ, K) [code] = sim_cv_##S##_mf,
static const sim_ew_fn sim_cv_tomf_tab[XRT_DTYPE_COUNT] = {
    SIM_CV_SRCS(SIM_CV_TOMF_ENT)};
#define SIM_CV_FROMMF_ENT(A, B, K, D, dcode, DSZ) [dcode] = sim_cv_mf_##D,
static const sim_ew_fn sim_cv_frommf_tab[XRT_DTYPE_COUNT] = {
    SIM_CV_DSTS(SIM_CV_FROMMF_ENT, 0, 0, 0)};

static inline int sim_is_mf(xrt_dtype t) {
  return t >= XRT_F8E4M3FN && t <= XRT_F4E2M1FN;
}

/* A context for small-float kernels, from al (the caller frees it). */
static sim_mf *sim_mf_new(const xrt_allocator *al, xrt_dtype t, xrt_dtype r) {
  sim_mf *m = (sim_mf *)al->alloc(al->self, sizeof *m);
  if (!m) return NULL;
  m->t = t, m->r = r, m->dir = 0, m->tmask = 0xff;
  xrt_minifloat_format f;
  if (xrt_minifloat_format_of(t, &f) && f.kind != XRT_MINIFLOAT_E8M0)
    m->tmask = (uint8_t)((2u << (f.ebits + f.mbits)) - 1u);
  for (int b = 0; b < 256; b++)
    m->dec[b] = sim_is_mf(t) ? sim_mf_dec1(t, (uint8_t)b) : 0;
  return m;
}

/* ---- reduce_precision ---- */

/* The interpreter's bit recipe on the element's pattern: round the mantissa
 * to nearest even at the new width, then flush exponents beyond the new
 * range to signed zero or infinity; NaN stays itself (becomes +inf when no
 * mantissa bits are left). */
typedef struct sim_rp {
  xrt_dtype t;
  int width, sm, se;  /* bit width, source mantissa / exponent bits */
  int eb, mb;         /* exponent_bits, mantissa_bits */
  uint64_t inf;       /* +inf pattern (NaN for formats without infinity) */
} sim_rp;

static uint64_t sim_rp_bits(const sim_rp *c, uint64_t x, int isnan_) {
  uint64_t orig = x, wmask = SIM_M64(c->width);
  if (c->mb < c->sm) {
    int sh = c->sm - c->mb;
    uint64_t last = (uint64_t)1 << sh;
    uint64_t bias = ((x & last) >> sh) + ((last >> 1) - 1);
    x = ((x + bias) & ~(last - 1)) & wmask;
  }
  if (c->eb < c->se) {
    uint64_t sign = (uint64_t)1 << (c->width - 1);
    uint64_t emask = (((uint64_t)1 << c->se) - 1) << c->sm;
    uint64_t ebias = ((uint64_t)1 << (c->se - 1)) - 1;
    uint64_t rbias = ((uint64_t)1 << (c->eb - 1)) - 1;
    uint64_t xe = x & emask;
    if (xe > (ebias + rbias) << c->sm) x = (x & sign) | emask;
    else if (xe <= (ebias - rbias) << c->sm) x &= sign;
  }
  if (isnan_) return c->mb > 0 ? orig : c->inf;
  return x;
}

static void sim_rp_run(void *const *in, void *out, size_t n,
                       const void *ctx) {
  const sim_rp *c = (const sim_rp *)ctx;
  switch (c->t) {
  case XRT_F32: {
    const uint32_t *a = (const uint32_t *)in[0];
    uint32_t *o = (uint32_t *)out;
    for (size_t i = 0; i < n; i++)
      o[i] = (uint32_t)sim_rp_bits(c, a[i], (a[i] & 0x7fffffffu) > 0x7f800000u);
    break;
  }
  case XRT_F64: {
    const uint64_t *a = (const uint64_t *)in[0];
    uint64_t *o = (uint64_t *)out;
    for (size_t i = 0; i < n; i++)
      o[i] = sim_rp_bits(c, a[i], (a[i] << 1) > ((uint64_t)0x7ff << 53));
    break;
  }
  case XRT_F16: case XRT_BF16: {
    const uint16_t *a = (const uint16_t *)in[0];
    uint16_t *o = (uint16_t *)out;
    uint16_t inf = c->t == XRT_F16 ? 0x7c00u : 0x7f80u;
    for (size_t i = 0; i < n; i++)
      o[i] = (uint16_t)sim_rp_bits(c, a[i], (a[i] & 0x7fffu) > inf);
    break;
  }
  default: { /* small floats */
    const uint8_t *a = (const uint8_t *)in[0];
    uint8_t *o = (uint8_t *)out;
    for (size_t i = 0; i < n; i++) {
      uint8_t b = (uint8_t)(a[i] & SIM_M64(c->width));
      o[i] = (uint8_t)sim_rp_bits(c, b, isnan(sim_mf_dec1(c->t, b)));
    }
    break;
  }
  }
}

static sim_ew_fn sim_ew_reduce_precision(const xrt_allocator *al,
                                         const xrt_ir_func *f,
                                         const xrt_ir_op *op,
                                         const void **ctx_out, int *ctx_owned,
                                         char *why, size_t whycap) {
  xrt_dtype t = f->value_types[op->operands[0]].shape.dtype;
  const xrt_ir_attr *e = xrt_ir_op_attr(op, "exponent_bits");
  const xrt_ir_attr *m = xrt_ir_op_attr(op, "mantissa_bits");
  static const int8_t mant[XRT_DTYPE_COUNT] = {
      [XRT_F16] = 10, [XRT_BF16] = 7, [XRT_F32] = 23, [XRT_F64] = 52};
  int width = sim_ew_bits(t), sm = (unsigned)t < XRT_DTYPE_COUNT ? mant[t] : 0;
  xrt_minifloat_format mf;
  if (xrt_minifloat_format_of(t, &mf)) sm = mf.mbits;
  else if (!sm) width = 0;
  if (!width || f->value_types[op->results[0]].shape.dtype != t)
    return sim_ew_unsup(f, op, op->operands[0], op->results[0], "", why, whycap);
  if (!e || e->kind != XRT_ATTR_INT || !m || m->kind != XRT_ATTR_INT ||
      e->i < 1 || m->i < 0) {
    if (why && whycap)
      snprintf(why, whycap, "%s needs exponent_bits >= 1 and mantissa_bits "
               ">= 0", op->name ? op->name : "stablehlo.reduce_precision");
    return NULL;
  }
  sim_rp *c = (sim_rp *)al->alloc(al->self, sizeof *c);
  if (!c) return sim_ew_oom(ctx_owned, why, whycap);
  c->t = t, c->width = width, c->sm = sm, c->se = width - sm - 1;
  c->eb = e->i > 64 ? 64 : (int)e->i, c->mb = m->i > 64 ? 64 : (int)m->i;
  if (sim_is_mf(t)) c->inf = sim_mf_enc(t, (double)INFINITY);
  else c->inf = (((uint64_t)1 << c->se) - 1) << sm;
  *ctx_out = c;
  *ctx_owned = 1;
  return sim_rp_run;
}

/* ---- quantized tensors (!quant.uniform) ---- */

/* Quantized ops follow the spec's dequantize_op_quantize: each quantized
 * operand becomes its expressed type ((q - zero_point) * scale, the zero
 * point subtracted in 64-bit integers as the interpreter's quant-to-math
 * lowering does), the op runs in the expressed type, and a quantized result
 * is x / scale + zero_point clamped to [storage_min, storage_max] and
 * rounded to nearest even.  Every step rounds to the expressed type.
 * Per-axis parameters are picked by the element's index along the axis,
 * (flat index / stride) % dim. */
typedef struct sim_qv {
  xrt_dtype dt;          /* element type in the buffer (storage if quant) */
  xrt_dtype ex;          /* expressed type; dt for plain float values */
  int quant;
  int64_t smin, smax;
  size_t stride, dim;    /* per-axis: index = (i / stride) % dim */
  const double *scales;
  const int64_t *zps;
} sim_qv;

enum { SIM_Q_QUANTIZE = -2, SIM_Q_DEQUANTIZE = -3, SIM_Q_COMPARE = -4 };

typedef struct sim_q {
  int e;                 /* SIM_EW_* op, or one of SIM_Q_* */
  int dir;               /* compare direction */
  int nin, back;         /* operands; run backwards (wider result) */
  sim_qv v[3];           /* operands, then the result */
} sim_q;

/* Rounds d to the float type t (the expressed type of a computation). */
static double sim_q_rnd(xrt_dtype t, double d) {
  switch (t) {
  case XRT_F32: return (double)(float)d;
  case XRT_F16: return xrt_f16_to_f32(xrt_f64_to_f16(d));
  case XRT_BF16: return xrt_bf16_to_f32(xrt_f64_to_bf16(d));
  case XRT_F64: return d;
  default: return sim_is_mf(t) ? sim_mf_dec1(t, sim_mf_enc(t, d)) : d;
  }
}

/* Element i of a buffer of type t as a double (floats) or integer. */
static double sim_q_ldf(xrt_dtype t, const void *p, size_t i) {
  switch (t) {
  case XRT_F32: return sim_ld_f32(p, i);
  case XRT_F64: return sim_ld_f64(p, i);
  case XRT_F16: return sim_ld_f16(p, i);
  case XRT_BF16: return sim_ld_bf16(p, i);
  default: return sim_mf_dec1(t, ((const uint8_t *)p)[i]);
  }
}
static int64_t sim_q_ldi(xrt_dtype t, const void *p, size_t i) {
  switch (t) {
  case XRT_S2: case XRT_S4: case XRT_S8: return sim_ld_s8(p, i);
  case XRT_S16: return sim_ld_s16(p, i);
  case XRT_S32: return sim_ld_s32(p, i);
  case XRT_S64: return sim_ld_s64(p, i);
  case XRT_U2: case XRT_U4: case XRT_U8: return (int64_t)sim_ld_u8(p, i);
  case XRT_U16: return (int64_t)sim_ld_u16(p, i);
  case XRT_U32: return (int64_t)sim_ld_u32(p, i);
  default: return (int64_t)sim_ld_u64(p, i);
  }
}
static void sim_q_sti(xrt_dtype t, void *p, size_t i, int64_t v) {
  switch (t) {
  case XRT_S2: sim_st_s2_i(p, i, v); break;
  case XRT_S4: sim_st_s4_i(p, i, v); break;
  case XRT_S8: sim_st_s8_i(p, i, v); break;
  case XRT_S16: sim_st_s16_i(p, i, v); break;
  case XRT_S32: sim_st_s32_i(p, i, v); break;
  case XRT_S64: sim_st_s64_i(p, i, v); break;
  case XRT_U2: sim_st_u2_i(p, i, v); break;
  case XRT_U4: sim_st_u4_i(p, i, v); break;
  case XRT_U8: sim_st_u8_i(p, i, v); break;
  case XRT_U16: sim_st_u16_i(p, i, v); break;
  case XRT_U32: sim_st_u32_i(p, i, v); break;
  default: sim_st_u64_i(p, i, v); break;
  }
}
static void sim_q_stf(xrt_dtype t, void *p, size_t i, double v) {
  switch (t) {
  case XRT_F32: sim_st_f32_f(p, i, v); break;
  case XRT_F64: sim_st_f64_f(p, i, v); break;
  case XRT_F16: sim_st_f16_f(p, i, v); break;
  case XRT_BF16: sim_st_bf16_f(p, i, v); break;
  case XRT_PRED: sim_st_pred_f(p, i, v); break;
  default: ((uint8_t *)p)[i] = sim_mf_enc(t, v); break;
  }
}

static inline size_t sim_q_axis(const sim_qv *q, size_t i) {
  return q->dim > 1 ? (i / q->stride) % q->dim : 0;
}

/* The value of element i in the expressed type. */
static double sim_q_load(const sim_qv *q, const void *p, size_t i) {
  if (!q->quant) return sim_q_ldf(q->dt, p, i);
  size_t k = sim_q_axis(q, i);
  /* wraps (no UB) only for zero points the verifier rejects */
  int64_t d = (int64_t)((uint64_t)sim_q_ldi(q->dt, p, i) - (uint64_t)q->zps[k]);
  return sim_q_rnd(q->ex, (double)d * sim_q_rnd(q->ex, q->scales[k]));
}

static void sim_q_store(const sim_qv *q, void *p, size_t i, double x) {
  if (!q->quant) {
    sim_q_stf(q->dt, p, i, x);
    return;
  }
  size_t k = sim_q_axis(q, i);
  double s = sim_q_rnd(q->ex, q->scales[k]);
  double y = sim_q_rnd(q->ex, sim_q_rnd(q->ex, x / s) + (double)q->zps[k]);
  double lo = (double)q->smin, hi = (double)q->smax;
  y = y != y ? 0 : y < lo ? lo : y > hi ? hi : y; /* NaN: zero, as convert */
  sim_q_sti(q->dt, p, i, (int64_t)sim_reven(y));
}

static double sim_q_apply(int e, double x, double y) {
  switch (e) {
#define SIM_Q_B(OP) case SIM_EW_##OP: return (double)SIM_F_##OP(x, y);
#define SIM_Q_U(OP) case SIM_EW_##OP: return (double)SIM_F_##OP(x);
    SIM_FLT_BIN_OPS(SIM_Q_B) SIM_FLT_BIN_DOPS(SIM_Q_B)
    SIM_FLT_UN_OPS(SIM_Q_U) SIM_FLT_UN_DOPS(SIM_Q_U)
#undef SIM_Q_B
#undef SIM_Q_U
  default: return x; /* uniform_quantize / uniform_dequantize */
  }
}

static int sim_q_cmp(int dir, double x, double y) {
  switch (dir) {
  case SIM_EQ: return x == y;
  case SIM_NE: return x != y;
  case SIM_GE: return x >= y;
  case SIM_GT: return x > y;
  case SIM_LE: return x <= y;
  default: return x < y;
  }
}

static void sim_q_one(const sim_q *c, void *const *in, void *out, size_t i) {
  double x = sim_q_load(&c->v[0], in[0], i);
  double y = c->nin > 1 ? sim_q_load(&c->v[1], in[1], i) : 0;
  if (c->e == SIM_Q_COMPARE) {
    ((uint8_t *)out)[i] = (uint8_t)sim_q_cmp(c->dir, x, y);
    return;
  }
  double r = sim_q_apply(c->e, x, y);
  const sim_qv *res = &c->v[c->nin];
  sim_q_store(res, out, i, sim_q_rnd(res->quant ? res->ex : res->dt, r));
}

static void sim_q_run(void *const *in, void *out, size_t n, const void *ctx) {
  const sim_q *c = (const sim_q *)ctx;
  if (c->back) {
    for (size_t i = n; i-- > 0;) sim_q_one(c, in, out, i);
  } else {
    for (size_t i = 0; i < n; i++) sim_q_one(c, in, out, i);
  }
}

static int sim_q_is_storage(xrt_dtype t) {
  int c = sim_ew_class(t);
  return c == 's' || c == 'u';
}
static int sim_q_is_float(xrt_dtype t) {
  int c = sim_ew_class(t);
  return c == 'f' || c == 'm';
}

/* Describes value v for the quantized kernel; 0 if its type is unusable. */
static int sim_q_value(const xrt_ir_type *ty, sim_qv *q) {
  memset(q, 0, sizeof *q);
  q->dt = q->ex = ty->shape.dtype;
  q->dim = 1, q->stride = 1;
  const xrt_ir_quant *u = ty->quant;
  if (!u) return sim_q_is_float(q->dt) || q->dt == XRT_PRED;
  if (!sim_q_is_storage(u->storage) || u->storage != q->dt ||
      !sim_q_is_float(u->expressed) || u->num_scales < 1 || !u->scales ||
      !u->zero_points)
    return 0;
  q->quant = 1, q->ex = u->expressed;
  q->smin = u->storage_min, q->smax = u->storage_max;
  q->scales = u->scales, q->zps = u->zero_points;
  if (u->axis >= 0) {
    if (u->axis >= ty->shape.rank || ty->shape.dims[u->axis] != u->num_scales)
      return 0;
    q->dim = (size_t)u->num_scales;
    for (int32_t d = u->axis + 1; d < ty->shape.rank; d++)
      q->stride *= (size_t)ty->shape.dims[d];
  }
  return 1;
}

/* Kernel for uniform_quantize / uniform_dequantize and for float ops with
 * quantized operands or results. */
static sim_ew_fn sim_ew_quant(const xrt_allocator *al, const xrt_ir_func *f,
                              const xrt_ir_op *op, int e, int arity,
                              const void **ctx_out, int *ctx_owned, char *why,
                              size_t whycap) {
  sim_q c;
  memset(&c, 0, sizeof c);
  c.nin = arity;
  c.e = op->code == XRT_OP_UNIFORM_QUANTIZE     ? SIM_Q_QUANTIZE
        : op->code == XRT_OP_UNIFORM_DEQUANTIZE ? SIM_Q_DEQUANTIZE
        : op->code == XRT_OP_COMPARE            ? SIM_Q_COMPARE
                                                : e;
  int known = c.e <= SIM_Q_QUANTIZE; /* reduce_precision, convert: no */
#define SIM_Q_K(OP) known |= e == SIM_EW_##OP;
  SIM_FLT_BIN_OPS(SIM_Q_K) SIM_FLT_BIN_DOPS(SIM_Q_K)
  SIM_FLT_UN_OPS(SIM_Q_K) SIM_FLT_UN_DOPS(SIM_Q_K)
#undef SIM_Q_K
  if (!known)
    return sim_ew_unsup(f, op, op->operands[0], op->results[0],
                        " (quantized)", why, whycap);
  size_t rsz = sim_ew_size(f->value_types[op->results[0]].shape.dtype);
  for (int k = 0; k <= arity; k++) {
    int32_t v = k < arity ? op->operands[k] : op->results[0];
    if (!sim_q_value(&f->value_types[v], &c.v[k]))
      return sim_ew_unsup(f, op, v, -1, " (quantized)", why, whycap);
    if (k < arity && sim_ew_size(c.v[k].dt) < rsz) c.back = 1;
  }
  const sim_qv *r = &c.v[arity];
  if (c.e == SIM_Q_COMPARE) {
    static const char *const dirs[SIM_NDIRS] = {"EQ", "NE", "GE",
                                                "GT", "LE", "LT"};
    const xrt_ir_attr *d = xrt_ir_op_attr(op, "comparison_direction");
    c.dir = -1;
    for (int k = 0; d && d->s && k < SIM_NDIRS; k++)
      if (!strcmp(d->s, dirs[k])) c.dir = k;
    if (c.dir < 0 || r->dt != XRT_PRED || r->quant)
      return sim_ew_unsup(f, op, op->operands[0], op->results[0], "", why,
                          whycap);
  } else if (r->dt == XRT_PRED || (c.e == SIM_Q_QUANTIZE && !r->quant) ||
             (c.e == SIM_Q_DEQUANTIZE && (r->quant || !c.v[0].quant))) {
    return sim_ew_unsup(f, op, op->operands[0], op->results[0], "", why,
                        whycap);
  }
  for (int k = 0; k < arity; k++)
    if (c.v[k].dt == XRT_PRED)
      return sim_ew_unsup(f, op, op->operands[k], -1, "", why, whycap);
  sim_q *m = (sim_q *)al->alloc(al->self, sizeof *m);
  if (!m) return sim_ew_oom(ctx_owned, why, whycap);
  *m = c;
  *ctx_out = m;
  *ctx_owned = 1;
  return sim_q_run;
}

/* Compare: direction and compare_type attributes pick the kernel. */
static sim_ew_fn sim_ew_compare(const xrt_allocator *al, const xrt_ir_func *f,
                                const xrt_ir_op *op, const void **ctx_out,
                                int *ctx_owned, char *why, size_t whycap) {
  static const char *const dirs[SIM_NDIRS] = {"EQ", "NE", "GE",
                                              "GT", "LE", "LT"};
  xrt_dtype t = f->value_types[op->operands[0]].shape.dtype;
  xrt_dtype r = f->value_types[op->results[0]].shape.dtype;
  const xrt_ir_attr *d = xrt_ir_op_attr(op, "comparison_direction");
  const xrt_ir_attr *ct = xrt_ir_op_attr(op, "compare_type");
  int cls = sim_ew_class(t), dir = -1, tot = 0;
  if (f->value_types[op->operands[1]].shape.dtype != t || r != XRT_PRED)
    return sim_ew_unsup(f, op, op->operands[0], op->results[0], "", why, whycap);
  for (int k = 0; d && d->s && k < SIM_NDIRS; k++)
    if (!strcmp(d->s, dirs[k])) dir = k;
  if (dir < 0)
    return sim_ew_unsup(f, op, op->operands[0], -1,
                        " (bad comparison_direction)", why, whycap);
  if (ct && ct->s) { /* the type must fit the elements (spec (C3)) */
    const char *s = ct->s;
    tot = !strcmp(s, "TOTALORDER");
    int ok = ((cls == 'f' || cls == 'm') && (tot || !strcmp(s, "FLOAT"))) ||
             (cls == 'c' && !strcmp(s, "FLOAT")) ||
             (cls == 's' && !strcmp(s, "SIGNED")) ||
             ((cls == 'u' || cls == 'p') && !strcmp(s, "UNSIGNED"));
    if (!ok)
      return sim_ew_unsup(f, op, op->operands[0], -1,
                          " with this compare_type", why, whycap);
  }
  if (cls == 'm') {
    sim_mf *m = sim_mf_new(al, t, r);
    if (!m) return sim_ew_oom(ctx_owned, why, whycap);
    m->dir = dir + (tot ? 8 : 0);
    *ctx_out = m;
    *ctx_owned = 1;
    return sim_cmp_mf;
  }
  sim_ew_fn fn = cls ? sim_cmp_tab[tot][dir][t] : NULL;
  return fn ? fn : sim_ew_unsup(f, op, op->operands[0], -1, "", why, whycap);
}

/* bitcast_convert: n counts result elements (the operand has n * bits(r) /
 * bits(t) of them).  Whole-byte types copy bytes, assuming a little-endian
 * host like the rest of the simulator. */
static sim_ew_fn sim_ew_bitcast(const xrt_allocator *al, const xrt_ir_func *f,
                                const xrt_ir_op *op, const void **ctx_out,
                                int *ctx_owned, char *why, size_t whycap) {
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

/* real/imag of a real element type: a copy and zeros. */
static sim_ew_fn sim_ew_real_imag(int e, xrt_dtype t, const void **ctx_out) {
  if (sim_ew_class(t) != 'f') return NULL;
  *ctx_out = &sim_esz[sim_ew_size(t)];
  return e == SIM_EW_REAL ? sim_copy : sim_zero;
}

/* The element type a result must have for an op whose operand has type t. */
static xrt_dtype sim_ew_result_type(int e, xrt_dtype t) {
  int c = sim_ew_class(t);
  if (e == SIM_EW_ISFIN) return XRT_PRED;
  if (e == SIM_EW_CMK) return t == XRT_F32 ? XRT_C64 : XRT_C128;
  if ((e == SIM_EW_ABS || e == SIM_EW_REAL || e == SIM_EW_IMAG) && c == 'c')
    return t == XRT_C64 ? XRT_F32 : XRT_F64;
  return t;
}

/* Small-float kernels by op (NULL: the op does not apply to floats). */
static const sim_ew_fn sim_mf_tab[SIM_EW_NOPS] = {
#define SIM_MF_ENT(OP) [SIM_EW_##OP] = sim_##OP##_mf,
    SIM_FLT_BIN_OPS(SIM_MF_ENT) SIM_FLT_BIN_DOPS(SIM_MF_ENT)
    SIM_FLT_UN_OPS(SIM_MF_ENT) SIM_FLT_UN_DOPS(SIM_MF_ENT)
    SIM_MF_ENT(REAL) SIM_MF_ENT(IMAG) SIM_MF_ENT(ISFIN)
#undef SIM_MF_ENT
};

/* A kernel with a sim_mf context: operand type t, result type r. */
static sim_ew_fn sim_ew_mf(const xrt_allocator *al, const xrt_ir_func *f,
                           const xrt_ir_op *op, sim_ew_fn fn, xrt_dtype t,
                           xrt_dtype r, const void **ctx_out, int *ctx_owned,
                           char *why, size_t whycap) {
  if (!fn)
    return sim_ew_unsup(f, op, op->operands[0], op->results[0], "", why, whycap);
  sim_mf *m = sim_mf_new(al, t, r);
  if (!m) return sim_ew_oom(ctx_owned, why, whycap);
  *ctx_out = m;
  *ctx_owned = 1;
  return fn;
}

/* convert between any two element types (small floats included). */
static sim_ew_fn sim_ew_convert(const xrt_allocator *al, const xrt_ir_func *f,
                                const xrt_ir_op *op, const void **ctx_out,
                                int *ctx_owned, char *why, size_t whycap) {
  xrt_dtype t = f->value_types[op->operands[0]].shape.dtype;
  xrt_dtype r = f->value_types[op->results[0]].shape.dtype;
  int ct = sim_ew_class(t), cr = sim_ew_class(r);
  if (!ct || !cr)
    return sim_ew_unsup(f, op, op->operands[0], op->results[0], "", why, whycap);
  if (ct == 'm' || cr == 'm') {
    sim_ew_fn fn = ct == 'm' && cr == 'm' ? sim_cv_mf_mf
                   : ct == 'm'            ? sim_cv_frommf_tab[r]
                                          : sim_cv_tomf_tab[t];
    return sim_ew_mf(al, f, op, fn, t, r, ctx_out, ctx_owned, why, whycap);
  }
  sim_ew_fn fn = sim_cv_tab[t][r];
  return fn ? fn : sim_ew_unsup(f, op, op->operands[0], op->results[0], "", why, whycap);
}

/* Kernel for an elementwise op whose operands all have the result's shape
 * (n elements each; for a bitcast_convert that changes the element width, n
 * counts result elements).  ctx_out receives a pointer (may be NULL) passed
 * back as ctx on every call; *ctx_owned is 1 if the caller must free it
 * with al (it came from al), -1 (and NULL returned) when al failed.
 * Returns NULL and writes a reason into why if unsupported.  Quantized
 * operands or results (and uniform_quantize/dequantize) go to sim_ew_quant,
 * which needs the result's shape to find per-axis parameters. */
static sim_ew_fn sim_ew_kernel(const xrt_allocator *al, const xrt_ir_func *f,
                               const xrt_ir_op *op, const void **ctx_out,
                               int *ctx_owned, char *why, size_t whycap) {
  *ctx_out = NULL;
  *ctx_owned = 0;
  int e = sim_ew_op_of(op->code);
  int arity = e >= 0 ? sim_ew_arity[e] : op->code == XRT_OP_COMPARE ? 2 : 1;
  if (!sim_ew_handles(op->code) || op->num_operands != arity ||
      op->num_results != 1) {
    if (why && whycap)
      snprintf(why, whycap, "%s is not an elementwise op with %d operand(s)",
               op->name ? op->name : sim_opcode_name(op->code), arity);
    return NULL;
  }
  int quant = op->code == XRT_OP_UNIFORM_QUANTIZE ||
              op->code == XRT_OP_UNIFORM_DEQUANTIZE;
  for (int k = 0; k <= arity; k++) {
    int32_t v = k < arity ? op->operands[k] : op->results[0];
    const xrt_ir_type *ty = &f->value_types[v];
    if (ty->kind != XRT_TYPE_TENSOR)
      return sim_ew_unsup(f, op, v, -1, "", why, whycap);
    if (ty->quant) quant = 1;
  }
  xrt_dtype t = f->value_types[op->operands[0]].shape.dtype;
  xrt_dtype r = f->value_types[op->results[0]].shape.dtype;
  /* a bitcast between a quantized type and its storage type is a copy */
  if (op->code == XRT_OP_BITCAST_CONVERT)
    return sim_ew_bitcast(al, f, op, ctx_out, ctx_owned, why, whycap);
  if (quant)
    return sim_ew_quant(al, f, op, e, arity, ctx_out, ctx_owned, why, whycap);
  if (op->code == XRT_OP_COMPARE)
    return sim_ew_compare(al, f, op, ctx_out, ctx_owned, why, whycap);
  if (op->code == XRT_OP_CONVERT)
    return sim_ew_convert(al, f, op, ctx_out, ctx_owned, why, whycap);
  if (op->code == XRT_OP_REDUCE_PRECISION)
    return sim_ew_reduce_precision(al, f, op, ctx_out, ctx_owned, why,
                                   whycap);
  if (arity == 2 && f->value_types[op->operands[1]].shape.dtype != t)
    return sim_ew_unsup(f, op, op->operands[1], op->results[0],
                        " (operand types differ)", why, whycap);
  if (!sim_ew_class(t) || r != sim_ew_result_type(e, t))
    return sim_ew_unsup(f, op, op->operands[0], op->results[0], "", why, whycap);
  if (sim_ew_class(t) == 'm')
    return sim_ew_mf(al, f, op, sim_mf_tab[e], t, r, ctx_out, ctx_owned, why,
                     whycap);
  sim_ew_fn fn = sim_ew_tab[e][t];
  if (!fn && (e == SIM_EW_REAL || e == SIM_EW_IMAG))
    fn = sim_ew_real_imag(e, t, ctx_out);
  return fn ? fn : sim_ew_unsup(f, op, op->operands[0], -1, "", why, whycap);
}

#define SIM_ALIGN 64
#define SIM_MAX_EW_IN 8
#define SIM_CACHE_SLOTS 8
#define SIM_CACHE_MAX_BYTES ((size_t)1 << 30)

#if defined(__GNUC__)
#define SIM_PRINTF(a, b) XRT_PRINTF_FORMAT(a, b)
#else
#define SIM_PRINTF(a, b)
#endif

/* ======================================================================
 * Small helpers: errors, element types, compile-time memory
 * ==================================================================== */

static size_t sim_align_up(size_t n) {
  return (n + SIM_ALIGN - 1) & ~(size_t)(SIM_ALIGN - 1);
}

static xrt_status sim_vfail(xrt_plugin_error *err, xrt_status code,
                            const char *prefix, const char *fmt, va_list ap) {
  if (!err) return code;
  int k = snprintf(err->message, sizeof err->message, "%s", prefix);
  if (k < 0 || (size_t)k >= sizeof err->message) return code;
  vsnprintf(err->message + k, sizeof err->message - (size_t)k, fmt, ap);
  return code;
}

static xrt_status sim_fail(xrt_plugin_error *err, xrt_status code,
                           const char *fmt, ...) SIM_PRINTF(3, 4);
static xrt_status sim_fail(xrt_plugin_error *err, xrt_status code,
                           const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  sim_vfail(err, code, "", fmt, ap);
  va_end(ap);
  return code;
}

static void sim_loc(const xrt_ir_op *op, char *buf, size_t cap) {
  snprintf(buf, cap, "%s:%d:%d: ", op->loc.file ? op->loc.file : "<input>",
           (int)op->loc.line, (int)op->loc.col);
}

/* A failure about one op: "file:line:col: message". */
static xrt_status sim_fail_op(xrt_plugin_error *err, const xrt_ir_op *op,
                              xrt_status code, const char *fmt, ...)
    SIM_PRINTF(4, 5);
static xrt_status sim_fail_op(xrt_plugin_error *err, const xrt_ir_op *op,
                              xrt_status code, const char *fmt, ...) {
  char prefix[320];
  sim_loc(op, prefix, sizeof prefix);
  va_list ap;
  va_start(ap, fmt);
  sim_vfail(err, code, prefix, fmt, ap);
  va_end(ap);
  return code;
}

/* Bytes per element.  Self-contained (no core calls) so that the plugin can
 * also be built as a shared object. */
static size_t sim_esize(xrt_dtype t) {
  switch (t) {
  case XRT_DTYPE_INVALID:
  case XRT_DTYPE_COUNT: return 0;
  case XRT_S16: case XRT_U16: case XRT_F16: case XRT_BF16: return 2;
  case XRT_S32: case XRT_U32: case XRT_F32: return 4;
  case XRT_S64: case XRT_U64: case XRT_F64: case XRT_C64: return 8;
  case XRT_C128: return 16;
  default: return 1;
  }
}

static const char *sim_dtype_name(xrt_dtype t) {
  static const char *const names[XRT_DTYPE_COUNT] = {
      "invalid", "i1", "i8", "i16", "i32", "i64", "ui8", "ui16", "ui32",
      "ui64", "f16", "bf16", "f32", "f64", "complex<f32>", "complex<f64>",
      "i2", "i4", "ui2", "ui4", "f8E4M3FN", "f8E5M2", "f8E4M3FNUZ",
      "f8E5M2FNUZ", "f8E4M3B11FNUZ", "f8E3M4", "f8E4M3", "f8E8M0FNU",
      "f6E2M3FN", "f6E3M2FN", "f4E2M1FN"};
  return (unsigned)t < XRT_DTYPE_COUNT ? names[t] : "invalid";
}

static int64_t sim_numel(const xrt_shape *s) {
  int64_t n = 1;
  for (int32_t i = 0; i < s->rank; i++) n *= s->dims[i];
  return n;
}

static size_t sim_bytes(const xrt_shape *s) {
  return (size_t)sim_numel(s) * sim_esize(s->dtype);
}

/* Row-major strides in elements. */
static void sim_strides(const xrt_shape *s, int64_t *st) {
  int64_t acc = 1;
  for (int32_t i = s->rank - 1; i >= 0; i--) {
    st[i] = acc;
    acc *= s->dims[i];
  }
}

/* A list of host blocks from the client allocator, freed together (plans,
 * constants: everything an executable keeps). */
typedef struct sim_pool {
  xrt_allocator al;
  void *head;
  /* Small requests are carved from the newest chunk (a plan makes
   * thousands; one malloc each was a tenth of a disk cache hit). */
  char *bump;
  size_t bump_left;
} sim_pool;

/* Measured on bench_disk_cache: larger requests or chunks (2 KB, 64 KB)
 * left freed chunks at the heap's top, which malloc trims, so every
 * compile faulted hundreds of fresh pages in again. */
#define SIM_POOL_SMALL 512 /* bytes: carved from a chunk */
#define SIM_POOL_CHUNK ((size_t)16 << 10)

static void *sim_pool_block(sim_pool *p, size_t bytes) {
  if (bytes > SIZE_MAX - 2 * SIM_ALIGN) return NULL;
  char *raw = (char *)p->al.alloc(p->al.self, bytes + 2 * SIM_ALIGN);
  if (!raw) return NULL;
  *(void **)raw = p->head;
  p->head = raw;
  uintptr_t at = ((uintptr_t)raw + sizeof(void *) + SIM_ALIGN - 1) &
                 ~(uintptr_t)(SIM_ALIGN - 1);
  return raw + (at - (uintptr_t)raw);
}

/* 64-byte aligned memory (not zeroed) that lives until sim_pool_release. */
static void *sim_pool_raw(sim_pool *p, size_t bytes) {
  if (bytes > SIM_POOL_SMALL) return sim_pool_block(p, bytes);
  size_t need = bytes ? (bytes + SIM_ALIGN - 1) & ~(size_t)(SIM_ALIGN - 1)
                      : SIM_ALIGN;
  if (need > p->bump_left) {
    char *c = (char *)sim_pool_block(p, SIM_POOL_CHUNK);
    if (!c) return NULL;
    p->bump = c;
    p->bump_left = SIM_POOL_CHUNK;
  }
  void *data = p->bump;
  p->bump += need;
  p->bump_left -= need;
  return data;
}

/* Zeroed, 64-byte aligned memory that lives until sim_pool_release. */
static void *sim_pool_alloc(sim_pool *p, size_t bytes) {
  void *data = sim_pool_raw(p, bytes);
  if (data) memset(data, 0, bytes);
  return data;
}

static void sim_pool_release(sim_pool *p) {
  while (p->head) {
    void *next = *(void **)p->head;
    p->al.free(p->al.self, p->head);
    p->head = next;
  }
}

/* A growable array for compile-time bookkeeping (freed after compile). */
typedef struct sim_vec {
  char *p;
  int32_t n, cap;
  size_t es;
} sim_vec;

static void *sim_vec_push(const xrt_allocator *al, sim_vec *v) {
  if (v->n == v->cap) {
    int32_t cap = v->cap ? 2 * v->cap : 16;
    char *p = (char *)al->alloc(al->self, v->es * (size_t)cap);
    if (!p) return NULL;
    if (v->n) memcpy(p, v->p, v->es * (size_t)v->n);
    al->free(al->self, v->p);
    v->p = p;
    v->cap = cap;
  }
  void *e = v->p + v->es * (size_t)v->n++;
  memset(e, 0, v->es);
  return e;
}

static void sim_vec_free(const xrt_allocator *al, sim_vec *v) {
  al->free(al->self, v->p);
  v->p = NULL;
  v->n = v->cap = 0;
}

static int sim_push_i32(const xrt_allocator *al, sim_vec *v, int32_t x) {
  int32_t *e = (int32_t *)sim_vec_push(al, v);
  if (!e) return 0;
  *e = x;
  return 1;
}

/* ======================================================================
 * Client, devices and device memory
 * ==================================================================== */

/* Header in front of every device block (keeps the size for free/cache). */
typedef struct sim_blk {
  size_t bytes; /* requested */
  size_t cap;   /* usable, a multiple of SIM_ALIGN */
  void *raw;    /* what the client allocator returned (freed with it) */
} sim_blk;

typedef struct sim_device {
  /* A spin lock: held for a few instructions per alloc or free, where a
   * mutex would cost two atomic operations per call instead of one. */
  atomic_flag mu;
  uint64_t limit, used;
  void *cache[SIM_CACHE_SLOTS]; /* raw blocks, oldest first */
  int ncache;
  size_t cached_bytes;
  xrt_attribute attrs[4];
  /* inject_fault: after_steps + 1 of the next execution; 0: none armed */
  _Atomic int64_t fault;
  /* inject_fault_kind: operations of each xrt_fault_kind until one fails,
   * plus one; 0: none armed (see "Fault kinds" below). */
  _Atomic int64_t fault_kind[4];
} sim_device;

struct sim_launch;

typedef struct sim_client {
  xrt_allocator al;
  int ndev;
  sim_device *dev;
  /* Launches with participants in flight (see "Launches and collectives"). */
  pthread_mutex_t lmu;
  int lmu_ok;
  struct sim_launch *launches, *spare;
  /* Launches whose first participant could not allocate their record:
   * the others fail at once instead of waiting for it (under lmu).
   * dead_cv: a slot was freed (see sim_launch_join). */
  struct { uint64_t id; int left, proc; } dead[16];
  pthread_cond_t dead_cv;
  struct sim_tpool *tp; /* one thread pool per device ("The device thread pools") */
  int ntp;
  const xrt_plugin_host_api *host; /* the core's services (sim_trace.inc) */
  int32_t xp_threads; /* cores per process of this host ("Collectives
                         across processes") */
} sim_client;

static sim_blk *sim_blk_of(void *mem) {
  return (sim_blk *)((char *)mem - SIM_ALIGN);
}

static void *sim_mem_of(void *raw) { return (char *)raw + SIM_ALIGN; }

static void sim_dev_lock(sim_device *d) {
  while (atomic_flag_test_and_set_explicit(&d->mu, memory_order_acquire))
    sched_yield();
}

static void sim_dev_unlock(sim_device *d) {
  atomic_flag_clear_explicit(&d->mu, memory_order_release);
}

/* Frees a device block (its header) back to the client allocator. */
static void sim_blk_free(const xrt_allocator *al, void *hdr) {
  al->free(al->self, ((sim_blk *)hdr)->raw);
}

static void sim_cache_drop_all(const xrt_allocator *al, sim_device *d) {
  for (int i = 0; i < d->ncache; i++) sim_blk_free(al, d->cache[i]);
  d->ncache = 0;
  d->cached_bytes = 0;
}

/* Takes a cached block of exactly cap usable bytes, or NULL. Locked. */
static void *sim_cache_take(sim_device *d, size_t cap) {
  for (int i = d->ncache - 1; i >= 0; i--) {
    sim_blk *b = (sim_blk *)d->cache[i];
    if (b->cap != cap) continue;
    void *raw = d->cache[i];
    memmove(&d->cache[i], &d->cache[i + 1],
            sizeof(void *) * (size_t)(d->ncache - i - 1));
    d->ncache--;
    d->cached_bytes -= cap;
    return raw;
  }
  return NULL;
}

/* Keeps a freed block for reuse, evicting the oldest when full. Locked. */
static void sim_cache_put(const xrt_allocator *al, sim_device *d, void *raw) {
  size_t cap = ((sim_blk *)raw)->cap;
  if (cap > SIM_CACHE_MAX_BYTES) {
    sim_blk_free(al, raw);
    return;
  }
  while (d->ncache > 0 && (d->ncache == SIM_CACHE_SLOTS ||
                           d->cached_bytes + cap > SIM_CACHE_MAX_BYTES)) {
    d->cached_bytes -= ((sim_blk *)d->cache[0])->cap;
    sim_blk_free(al, d->cache[0]);
    memmove(&d->cache[0], &d->cache[1],
            sizeof(void *) * (size_t)(d->ncache - 1));
    d->ncache--;
  }
  d->cache[d->ncache++] = raw;
  d->cached_bytes += cap;
}

static void sim_device_attrs(sim_device *d, int index) {
  static const char *const names[4] = {"memory_bytes", "cores",
                                       "device_index", "model"};
  for (int i = 0; i < 4; i++) {
    d->attrs[i].name = names[i];
    d->attrs[i].type = XRT_ATTRIBUTE_INT;
  }
  d->attrs[0].int_value = (int64_t)d->limit;
  d->attrs[1].int_value = 1; /* its pool's threads: sim_tpools_make */
  d->attrs[2].int_value = index;
  d->attrs[3].type = XRT_ATTRIBUTE_STRING;
  d->attrs[3].string_value = "xrt simulator";
}

static void sim_launches_free(sim_client *c);
static xrt_status sim_tpools_make(sim_client *c, int threads,
                                  xrt_plugin_error *err);
static void sim_tpools_free(sim_client *c);
static void sim_trace_attach(sim_client *c,
                             const xrt_plugin_client_args *args);

/* The threads an all_reduce across processes runs on here: the host's
 * cores shared among its processes (see "Collectives across processes"),
 * or XRT_SIM_XP_THREADS. */
static void sim_xp_attach(sim_client *c, const xrt_plugin_client_args *args) {
  long cores = sim_os_cpu_count();
  int local = 1;
  if (XRT_STRUCT_HAS(args, xrt_plugin_client_args, topology) &&
      args->topology.local_world_size > 1)
    local = args->topology.local_world_size;
  long t = cores / local;
  const char *env = getenv("XRT_SIM_XP_THREADS");
  if (env && *env) t = strtol(env, NULL, 10);
  c->xp_threads = t < 1 ? 1 : t > 4096 ? 4096 : (int32_t)t;
}

static void sim_client_destroy(void *client) {
  sim_client *c = (sim_client *)client;
  if (!c) return;
  sim_launches_free(c);
  sim_tpools_free(c);
  for (int i = 0; i < c->ndev; i++) {
    sim_cache_drop_all(&c->al, &c->dev[i]);
  }
  xrt_allocator al = c->al;
  al.free(al.self, c->dev);
  al.free(al.self, c);
}

static xrt_status sim_client_create(const xrt_plugin_client_args *args,
                                    void **out_client, xrt_plugin_error *err) {
  if (!args || !out_client || args->struct_size < sizeof *args)
    return sim_fail(err, XRT_INVALID_ARGUMENT, "bad client arguments");
  *out_client = NULL;
  if (args->num_devices < 1 || args->num_devices > 1024)
    return sim_fail(err, XRT_INVALID_ARGUMENT, "num_devices must be 1..1024, "
                    "not %d", args->num_devices);
  xrt_allocator al = args->allocator;
  sim_client *c = (sim_client *)al.alloc(al.self, sizeof *c);
  sim_device *d = c ? (sim_device *)al.alloc(
                          al.self, sizeof *d * (size_t)args->num_devices)
                    : NULL;
  if (!d) {
    if (c) al.free(al.self, c);
    return sim_fail(err, XRT_RESOURCE_EXHAUSTED, "out of host memory");
  }
  memset(d, 0, sizeof *d * (size_t)args->num_devices);
  memset(c, 0, sizeof *c);
  c->al = al;
  c->dev = d;
  c->ndev = 0;
  if (pthread_mutex_init(&c->lmu, NULL) != 0) {
    sim_client_destroy(c);
    return sim_fail(err, XRT_INTERNAL, "pthread_mutex_init failed");
  }
  if (pthread_cond_init(&c->dead_cv, NULL) != 0) {
    pthread_mutex_destroy(&c->lmu);
    sim_client_destroy(c);
    return sim_fail(err, XRT_INTERNAL, "pthread_cond_init failed");
  }
  c->lmu_ok = 1;
  for (int i = 0; i < args->num_devices; i++, c->ndev++) {
    atomic_flag_clear(&d[i].mu);
    d[i].limit = args->device_memory_bytes;
    sim_device_attrs(&d[i], i);
  }
  xrt_status ts = sim_tpools_make(c, args->threads_per_device, err);
  if (ts) {
    sim_client_destroy(c);
    return ts;
  }
  sim_trace_attach(c, args);
  sim_xp_attach(c, args);
  *out_client = c;
  return XRT_OK;
}

static int sim_device_count(void *client) {
  return client ? ((sim_client *)client)->ndev : -1;
}

static xrt_status sim_check_device(sim_client *c, int device,
                                   xrt_plugin_error *err) {
  if (!c) return sim_fail(err, XRT_INVALID_ARGUMENT, "client is NULL");
  if (device < 0 || device >= c->ndev)
    return sim_fail(err, XRT_OUT_OF_RANGE, "device %d does not exist (the "
                    "client has %d)", device, c->ndev);
  return XRT_OK;
}

static xrt_status sim_device_describe(void *client, int device,
                                      xrt_plugin_device_desc *out,
                                      xrt_plugin_error *err) {
  sim_client *c = (sim_client *)client;
  xrt_status s = sim_check_device(c, device, err);
  if (s) return s;
  if (!out) return sim_fail(err, XRT_INVALID_ARGUMENT, "out is NULL");
  out->struct_size = sizeof *out;
  out->kind = "sim";
  out->num_attributes = 4;
  out->attributes = c->dev[device].attrs;
  return XRT_OK;
}

/* Fails the operation op on device when a fault of kind is due. */
static xrt_status sim_fault_check(sim_client *c, int device, int kind,
                                  const char *op, xrt_plugin_error *err);

/* Device memory is host memory from the client allocator, over-allocated
 * so that the block (after its sim_blk header) is 64-byte aligned; freed
 * blocks are cached per device and reused (sim_cache_put). */
static void *sim_blk_new(const xrt_allocator *al, size_t cap) {
  if (cap > SIZE_MAX - 2 * SIM_ALIGN) return NULL;
  void *raw = al->alloc(al->self, cap + 2 * SIM_ALIGN);
  if (!raw) return NULL;
  uintptr_t at = ((uintptr_t)raw + SIM_ALIGN - 1) & ~(uintptr_t)(SIM_ALIGN - 1);
  sim_blk *hdr = (sim_blk *)(void *)((char *)raw + (at - (uintptr_t)raw));
  hdr->raw = raw;
  return hdr;
}

static xrt_status sim_buffer_alloc(void *client, int device, size_t bytes,
                                   void **out_mem, xrt_plugin_error *err) {
  sim_client *c = (sim_client *)client;
  xrt_status s = sim_check_device(c, device, err);
  if (s) return s;
  if (!out_mem) return sim_fail(err, XRT_INVALID_ARGUMENT, "out_mem is NULL");
  *out_mem = NULL;
  if ((s = sim_fault_check(c, device, XRT_FAULT_ALLOC,
                           "device memory allocation", err)))
    return s;
  sim_device *d = &c->dev[device];
  if (bytes > SIZE_MAX / 2)
    return sim_fail(err, XRT_RESOURCE_EXHAUSTED, "device %d: cannot allocate "
                    "%zu bytes", device, bytes);
  size_t cap = sim_align_up(bytes ? bytes : 1);
  sim_dev_lock(d);
  uint64_t avail = d->limit - d->used;
  if ((uint64_t)bytes > avail) {
    sim_dev_unlock(d);
    return sim_fail(err, XRT_RESOURCE_EXHAUSTED, "device %d: cannot allocate "
                    "%zu bytes; %llu of %llu bytes available", device, bytes,
                    (unsigned long long)avail, (unsigned long long)d->limit);
  }
  void *raw = sim_cache_take(d, cap);
  d->used += bytes;
  sim_dev_unlock(d);
  if (!raw) raw = sim_blk_new(&c->al, cap);
  if (!raw) {
    sim_dev_lock(d);
    d->used -= bytes;
    sim_dev_unlock(d);
    return sim_fail(err, XRT_RESOURCE_EXHAUSTED, "device %d: host memory for "
                    "%zu bytes is exhausted", device, bytes);
  }
  ((sim_blk *)raw)->bytes = bytes;
  ((sim_blk *)raw)->cap = cap;
  *out_mem = sim_mem_of(raw);
  return XRT_OK;
}

/* Host memory adopted for zero-copy DLPack imports ("Host memory as device memory" below):
 * it has no sim_blk header. */
static bool sim_adopt_bytes(const sim_client *c, int device, const void *mem,
                           size_t *bytes);
static bool sim_adopt_forget(sim_client *c, int device, void *mem);

static void sim_buffer_free(void *client, int device, void *mem) {
  sim_client *c = (sim_client *)client;
  if (!c || !mem || device < 0 || device >= c->ndev) return;
  if (sim_adopt_forget(c, device, mem)) return;
  sim_device *d = &c->dev[device];
  sim_blk *b = sim_blk_of(mem);
  sim_dev_lock(d);
  d->used -= b->bytes;
  sim_cache_put(&c->al, d, b);
  sim_dev_unlock(d);
}

static xrt_status sim_check_mem(sim_client *c, int device, const void *mem,
                                size_t bytes, xrt_plugin_error *err) {
  xrt_status s = sim_check_device(c, device, err);
  if (s) return s;
  if (!mem) return sim_fail(err, XRT_INVALID_ARGUMENT, "device memory is NULL");
  size_t have;
  if (!sim_adopt_bytes(c, device, mem, &have))
    have = sim_blk_of((void *)(uintptr_t)mem)->bytes;
  if (bytes > have)
    return sim_fail(err, XRT_OUT_OF_RANGE, "device %d: %zu bytes do not fit "
                    "a block of %zu bytes", device, bytes, have);
  return XRT_OK;
}

static xrt_status sim_buffer_write(void *client, int device, void *mem,
                                   const void *src, size_t bytes,
                                   xrt_plugin_error *err) {
  xrt_status s = sim_check_mem((sim_client *)client, device, mem, bytes, err);
  if (!s) s = sim_fault_check((sim_client *)client, device, XRT_FAULT_TRANSFER,
                              "host-to-device transfer", err);
  if (s) return s;
  if (bytes && !src) return sim_fail(err, XRT_INVALID_ARGUMENT, "src is NULL");
  if (bytes) memcpy(mem, src, bytes);
  return XRT_OK;
}

static xrt_status sim_buffer_read(void *client, int device, const void *mem,
                                  void *dst, size_t bytes,
                                  xrt_plugin_error *err) {
  xrt_status s = sim_check_mem((sim_client *)client, device, mem, bytes, err);
  if (!s) s = sim_fault_check((sim_client *)client, device, XRT_FAULT_TRANSFER,
                              "device-to-host transfer", err);
  if (s) return s;
  if (bytes && !dst) return sim_fail(err, XRT_INVALID_ARGUMENT, "dst is NULL");
  if (bytes) memcpy(dst, mem, bytes);
  return XRT_OK;
}

static xrt_status sim_buffer_copy(void *client, int src_device,
                                  const void *src, int dst_device, void *dst,
                                  size_t bytes, xrt_plugin_error *err) {
  sim_client *c = (sim_client *)client;
  xrt_status s = sim_check_mem(c, src_device, src, bytes, err);
  if (s || (s = sim_check_mem(c, dst_device, dst, bytes, err))) return s;
  if ((s = sim_fault_check(c, src_device, XRT_FAULT_TRANSFER,
                           "device copy (source)", err)) ||
      (s = sim_fault_check(c, dst_device, XRT_FAULT_TRANSFER,
                           "device copy (destination)", err)))
    return s;
  if (bytes && src != dst) memmove(dst, src, bytes);
  return XRT_OK;
}

/* ======================================================================
 * Plans and steps
 * ==================================================================== */

typedef struct sim_step sim_step;
typedef struct sim_cx sim_cx;

/* A kernel: reads operands and writes results through the frame vals. */
typedef xrt_status (*sim_run_fn)(const sim_step *st, void **vals, sim_cx *cx);

struct sim_step {
  sim_run_fn run;
  const int32_t *in, *out; /* value ids */
  int32_t nin, nout;
  const void *data;        /* the op's precomputed plan */
  sim_ew_fn ew;            /* elementwise kernel and its context */
  const void *ew_ctx;
  int64_t n;               /* element or byte count, per kernel */
  const xrt_ir_op *op;
};

typedef struct sim_plan {
  const sim_step *steps;
  int32_t n;
} sim_plan;

/* A planned function: its steps, how its frame is laid out, and its
 * interface.  vbase/abase place it in the executable-wide frame. */
typedef struct sim_fplan {
  int state; /* 0 not planned, 1 being planned, 2 done */
  int32_t nvals, vbase;
  size_t asize, abase;
  sim_plan body;
  int32_t nargs, nrets;
  const int32_t *args, *rets;
  const size_t *ret_bytes;
  const uint8_t *ret_direct; /* entry only: bound to the output buffer */
  int32_t nslots, nconsts;
  const int32_t *slot_ids, *const_ids;
  const size_t *slot_offs;
  /* Entry only: values placed in an output buffer (see sim_outs), bound
   * at each run to that buffer (the value obind_base) plus an offset. */
  int32_t nobind;
  const int32_t *obind_ids, *obind_base;
  const size_t *obind_offs;
  void *const *const_ptrs;
} sim_fplan;

typedef struct sim_frame {
  void *block;
  void **vals;
  char *arena;
} sim_frame;

typedef struct sim_exe {
  sim_client *cl;
  sim_pool pool;
  const xrt_ir_module *m;
  int32_t entry;
  sim_fplan *fp; /* one per module function; planned ones have state 2 */
  int32_t total_vals;
  size_t arena_bytes;
  pthread_mutex_t mu;
  int mu_ok;
  sim_frame frame;
  sim_vec owned_ctx; /* malloc'd elementwise contexts */
  /* Launch shape it was compiled for; ops that meet other participants
   * (collectives, device-to-device send/recv) need one. */
  int32_t nrep, npart;
  int has_coll;
  /* Several processes ("Collectives across processes"): the process of each logical id
   * (NULL: all are this one's) and this process. */
  const int32_t *xp_proc;
  int32_t xp_me;
  /* One frame per device, made on first use under mu (busy: in use). */
  sim_frame *dframes;
  _Atomic unsigned char *dbusy;
  /* The fusion decisions of its blocks, in planning order (each: the op
   * count n, then n group ids, see sim_fz_plan_block), which
   * executable_serialize stores; fzrec_lost: one could not be recorded. */
  sim_vec fzrec;
  int fzrec_lost;
} sim_exe;

struct sim_launch;
struct sim_tpool;

struct sim_cx {
  void **allvals; /* the frame's vals of every function */
  const sim_exe *exe;
  xrt_plugin_error *err;
  /* The launch this execution is a participant of (collectives). */
  const xrt_plugin_execute_args *xa;
  struct sim_launch *launch;
  uint32_t coll_seq;     /* collectives this participant has entered */
  int64_t fault_steps;   /* steps until an injected fault; -1: none */
  struct sim_tpool *tp;  /* the device's thread pool (NULL: serial) */
  int64_t fault_after;   /* the after_steps of an armed fault */
};

/* Runs fn over [0, n) in pieces of at least grain items, on the device's
 * thread pool when cx has one and n is large, else on the calling thread.
 * fn must be safe to run concurrently on disjoint ranges. */
typedef void (*sim_range_fn)(void *ctx, int64_t begin, int64_t end);
static void sim_parallel_for(sim_cx *cx, int64_t n, int64_t grain,
                             sim_range_fn fn, void *ctx);

static xrt_status sim_fault_hit(sim_cx *cx, const sim_step *s);

static xrt_status sim_run_plan(const sim_plan *p, void **vals, sim_cx *cx) {
  for (int32_t i = 0; i < p->n; i++) {
    const sim_step *s = &p->steps[i];
    if (cx->fault_steps >= 0 && cx->fault_steps-- == 0)
      return sim_fault_hit(cx, s);
    xrt_status rc = s->run(s, vals, cx);
    if (rc) return rc;
  }
  return XRT_OK;
}

/* ======================================================================
 * Data movement kernels: strided copies and fills by element size
 * ==================================================================== */

typedef struct sim_b16 {
  uint64_t lo, hi;
} sim_b16;

/* Copies n elements with byte strides ds/ss (either may be 0 or negative). */
typedef void (*sim_inner_fn)(char *d, const char *s, int64_t n, ptrdiff_t ds,
                             ptrdiff_t ss);

#define SIM_INNER_DEF(NAME, T)                                              \
  static void NAME(char *d, const char *s, int64_t n, ptrdiff_t ds,         \
                   ptrdiff_t ss) {                                          \
    if (ds == (ptrdiff_t)sizeof(T) && ss == (ptrdiff_t)sizeof(T)) {         \
      memcpy(d, s, (size_t)n * sizeof(T));                                  \
      return;                                                               \
    }                                                                       \
    for (int64_t i = 0; i < n; i++, d += ds, s += ss)                       \
      *(T *)(void *)d = *(const T *)(const void *)s;                        \
  }
SIM_INNER_DEF(sim_inner_1, uint8_t)
SIM_INNER_DEF(sim_inner_2, uint16_t)
SIM_INNER_DEF(sim_inner_4, uint32_t)
SIM_INNER_DEF(sim_inner_8, uint64_t)
SIM_INNER_DEF(sim_inner_16, sim_b16)

static sim_inner_fn sim_inner_for(size_t es) {
  switch (es) {
  case 1: return sim_inner_1;
  case 2: return sim_inner_2;
  case 4: return sim_inner_4;
  case 8: return sim_inner_8;
  default: return sim_inner_16;
  }
}

/* A strided copy dst[dbase + sum i_k*ds_k] = src[sbase + sum i_k*ss_k] over
 * dims, with adjacent dimensions merged where both sides are contiguous.
 * Covers broadcast, transpose, slice, reverse and the body of pad. */
typedef struct sim_xcopy {
  int32_t rank; /* after coalescing; >= 1 unless empty */
  int empty;
  int64_t dims[XRT_MAX_RANK];
  ptrdiff_t ss[XRT_MAX_RANK], ds[XRT_MAX_RANK]; /* bytes */
  ptrdiff_t sbase, dbase;                       /* bytes */
  int tiled; /* the last two dims are copied in tiles (a transpose) */
  sim_inner_fn inner;
} sim_xcopy;

#define SIM_TILE 32

/* A transpose-like copy (dst contiguous on the last dimension, src
 * contiguous on another) goes tile by tile so both sides stay in cache:
 * moves the src-contiguous dimension next to the last one.  The order in
 * which elements are copied does not matter. */
static void sim_xcopy_pick_tile(sim_xcopy *x) {
  int q = x->rank - 1;
  if (q < 1 || x->ss[q] == 1 || x->ds[q] != 1 || x->dims[q] < SIM_TILE / 4)
    return;
  for (int p = q - 1; p >= 0; p--) {
    if (x->ss[p] != 1 || x->dims[p] < SIM_TILE / 4) continue;
    int64_t d = x->dims[p];
    ptrdiff_t a = x->ss[p], b = x->ds[p];
    for (int k = p; k < q - 1; k++) {
      x->dims[k] = x->dims[k + 1];
      x->ss[k] = x->ss[k + 1];
      x->ds[k] = x->ds[k + 1];
    }
    x->dims[q - 1] = d, x->ss[q - 1] = a, x->ds[q - 1] = b;
    x->tiled = 1;
    return;
  }
}

/* Strides and bases are in elements here. */
static void sim_xcopy_init(sim_xcopy *x, size_t es, int rank,
                           const int64_t *dims, const int64_t *ss,
                           const int64_t *ds, int64_t sbase, int64_t dbase) {
  memset(x, 0, sizeof *x);
  x->inner = sim_inner_for(es);
  x->sbase = (ptrdiff_t)(sbase * (int64_t)es);
  x->dbase = (ptrdiff_t)(dbase * (int64_t)es);
  int r = 0;
  for (int k = 0; k < rank; k++) {
    if (dims[k] == 0) x->empty = 1;
    if (dims[k] == 1) continue;
    if (r > 0 && x->ss[r - 1] == ss[k] * dims[k] &&
        x->ds[r - 1] == ds[k] * dims[k]) {
      x->dims[r - 1] *= dims[k];
      x->ss[r - 1] = ss[k];
      x->ds[r - 1] = ds[k];
      continue;
    }
    x->dims[r] = dims[k];
    x->ss[r] = ss[k];
    x->ds[r] = ds[k];
    r++;
  }
  if (r == 0) { /* a single element */
    x->dims[0] = 1;
    x->ss[0] = x->ds[0] = 1;
    r = 1;
  }
  x->rank = r;
  sim_xcopy_pick_tile(x);
  for (int k = 0; k < r; k++) {
    x->ss[k] *= (ptrdiff_t)es;
    x->ds[k] *= (ptrdiff_t)es;
  }
}

/* The innermost dimension, or the last two in tiles. */
static void sim_xcopy_leaf(const sim_xcopy *x, char *d, const char *s) {
  int b = x->rank - 1, a = b - 1;
  if (!x->tiled) {
    x->inner(d, s, x->dims[b], x->ds[b], x->ss[b]);
    return;
  }
  for (int64_t i0 = 0; i0 < x->dims[a]; i0 += SIM_TILE)
    for (int64_t j0 = 0; j0 < x->dims[b]; j0 += SIM_TILE) {
      int64_t ie = i0 + SIM_TILE < x->dims[a] ? i0 + SIM_TILE : x->dims[a];
      int64_t jn = j0 + SIM_TILE < x->dims[b] ? SIM_TILE : x->dims[b] - j0;
      for (int64_t i = i0; i < ie; i++)
        x->inner(d + i * x->ds[a] + j0 * x->ds[b],
                 s + i * x->ss[a] + j0 * x->ss[b], jn, x->ds[b], x->ss[b]);
    }
}

static void sim_xcopy_run(const sim_xcopy *x, char *dst, const char *src) {
  if (x->empty) return;
  int nout = x->rank - (x->tiled ? 2 : 1);
  ptrdiff_t so = x->sbase, dof = x->dbase;
  int64_t idx[XRT_MAX_RANK];
  memset(idx, 0, sizeof idx);
  for (;;) {
    sim_xcopy_leaf(x, dst + dof, src + so);
    int k = nout - 1;
    for (; k >= 0; k--) {
      so += x->ss[k];
      dof += x->ds[k];
      if (++idx[k] < x->dims[k]) break;
      so -= x->ss[k] * (ptrdiff_t)x->dims[k];
      dof -= x->ds[k] * (ptrdiff_t)x->dims[k];
      idx[k] = 0;
    }
    if (k < 0) return;
  }
}

/* Fills n elements with the element at val. */
typedef void (*sim_fill_fn)(char *d, const char *val, int64_t n);

#define SIM_FILL_DEF(NAME, T)                                           \
  static void NAME(char *d, const char *val, int64_t n) {               \
    T v;                                                                \
    memcpy(&v, val, sizeof v);                                          \
    T *o = (T *)(void *)d;                                              \
    for (int64_t i = 0; i < n; i++) o[i] = v;                           \
  }
SIM_FILL_DEF(sim_fill_2, uint16_t)
SIM_FILL_DEF(sim_fill_4, uint32_t)
SIM_FILL_DEF(sim_fill_8, uint64_t)
SIM_FILL_DEF(sim_fill_16, sim_b16)

static void sim_fill_1(char *d, const char *val, int64_t n) {
  memset(d, (unsigned char)*val, (size_t)n);
}

static sim_fill_fn sim_fill_for(size_t es) {
  switch (es) {
  case 1: return sim_fill_1;
  case 2: return sim_fill_2;
  case 4: return sim_fill_4;
  case 8: return sim_fill_8;
  default: return sim_fill_16;
  }
}

/* Big copies run on the device's thread pool ("The device thread pools"). */
static void sim_memcpy_par(sim_cx *cx, void *dst, const void *src, size_t n);
static void sim_xcopy_par(sim_cx *cx, const sim_xcopy *x, char *dst,
                          const char *src);

static xrt_status sim_run_copy(const sim_step *st, void **vals, sim_cx *cx) {
  sim_memcpy_par(cx, vals[st->out[0]], vals[st->in[0]], (size_t)st->n);
  return XRT_OK;
}

/* optimization_barrier: result i = operand i. */
static xrt_status sim_run_copy_all(const sim_step *st, void **vals,
                                   sim_cx *cx) {
  const size_t *bytes = (const size_t *)st->data;
  (void)cx;
  for (int32_t i = 0; i < st->nout; i++)
    if (bytes[i]) memcpy(vals[st->out[i]], vals[st->in[i]], bytes[i]);
  return XRT_OK;
}

static xrt_status sim_run_xcopy(const sim_step *st, void **vals, sim_cx *cx) {
  sim_xcopy_par(cx, (const sim_xcopy *)st->data, (char *)vals[st->out[0]],
                (const char *)vals[st->in[0]]);
  return XRT_OK;
}

typedef struct sim_pad {
  sim_xcopy x;
  sim_fill_fn fill;
  int64_t n; /* result elements */
} sim_pad;

static xrt_status sim_run_pad(const sim_step *st, void **vals, sim_cx *cx) {
  const sim_pad *p = (const sim_pad *)st->data;
  char *out = (char *)vals[st->out[0]];
  (void)cx;
  p->fill(out, (const char *)vals[st->in[1]], p->n);
  sim_xcopy_run(&p->x, out, (const char *)vals[st->in[0]]);
  return XRT_OK;
}

typedef struct sim_cat {
  int64_t outer;       /* product of the dimensions before the axis */
  const size_t *chunk; /* bytes of each operand per outer index */
} sim_cat;

static xrt_status sim_run_concat(const sim_step *st, void **vals, sim_cx *cx) {
  const sim_cat *c = (const sim_cat *)st->data;
  char *d = (char *)vals[st->out[0]];
  (void)cx;
  for (int64_t o = 0; o < c->outer; o++)
    for (int32_t k = 0; k < st->nin; k++) {
      size_t b = c->chunk[k];
      if (!b) continue;
      memcpy(d, (const char *)vals[st->in[k]] + (size_t)o * b, b);
      d += b;
    }
  return XRT_OK;
}

/* ======================================================================
 * select and clamp
 * ==================================================================== */

static xrt_status sim_run_select_scalar(const sim_step *st, void **vals,
                                        sim_cx *cx) {
  (void)cx;
  const uint8_t *p = (const uint8_t *)vals[st->in[0]];
  const void *src = vals[st->in[*p ? 1 : 2]];
  if (st->n) memcpy(vals[st->out[0]], src, (size_t)st->n);
  return XRT_OK;
}

#define SIM_SELECT_DEF(NAME, T)                                             \
  static xrt_status NAME(const sim_step *st, void **vals, sim_cx *cx) {     \
    (void)cx;                                                               \
    const uint8_t *p = (const uint8_t *)vals[st->in[0]];                    \
    const T *a = (const T *)vals[st->in[1]], *b = (const T *)vals[st->in[2]]; \
    T *o = (T *)vals[st->out[0]];                                           \
    for (int64_t i = 0; i < st->n; i++) o[i] = p[i] ? a[i] : b[i];          \
    return XRT_OK;                                                          \
  }
SIM_SELECT_DEF(sim_run_select_1, uint8_t)
SIM_SELECT_DEF(sim_run_select_2, uint16_t)
SIM_SELECT_DEF(sim_run_select_4, uint32_t)
SIM_SELECT_DEF(sim_run_select_8, uint64_t)
SIM_SELECT_DEF(sim_run_select_16, sim_b16)

/* min(max(x, lo), hi) over n elements; lo/hi advance by ls/hs (0 for a
 * scalar bound, 1 for a full tensor). */
typedef void (*sim_clamp_fn)(void *out, const void *lo, const void *x,
                             const void *hi, int64_t n, int64_t ls,
                             int64_t hs);

#define SIM_CLAMP_INT(NAME, T)                                              \
  static void NAME(void *out, const void *lo, const void *x,                \
                   const void *hi, int64_t n, int64_t ls, int64_t hs) {     \
    T *o = (T *)out;                                                        \
    const T *l = (const T *)lo, *v = (const T *)x, *h = (const T *)hi;      \
    for (int64_t i = 0; i < n; i++) {                                       \
      T t = v[i], a = l[i * ls], b = h[i * hs];                             \
      t = t < a ? a : t;                                                    \
      o[i] = t > b ? b : t;                                                 \
    }                                                                       \
  }
SIM_CLAMP_INT(sim_clamp_s8, int8_t)
SIM_CLAMP_INT(sim_clamp_s16, int16_t)
SIM_CLAMP_INT(sim_clamp_s32, int32_t)
SIM_CLAMP_INT(sim_clamp_s64, int64_t)
SIM_CLAMP_INT(sim_clamp_u8, uint8_t)
SIM_CLAMP_INT(sim_clamp_u16, uint16_t)
SIM_CLAMP_INT(sim_clamp_u32, uint32_t)
SIM_CLAMP_INT(sim_clamp_u64, uint64_t)

#define SIM_LD_ID(x) (x)
#define SIM_LD_F16(x) xrt_f16_to_f32(x)
#define SIM_LD_BF16(x) xrt_bf16_to_f32(x)

/* Floats: IEEE maximum/minimum (NaN propagates, -0 < +0); the result is
 * the bit pattern of the chosen input. */
#define SIM_CLAMP_FLT(NAME, T, F, LD)                                       \
  static void NAME(void *out, const void *lo, const void *x,                \
                   const void *hi, int64_t n, int64_t ls, int64_t hs) {     \
    T *o = (T *)out;                                                        \
    const T *l = (const T *)lo, *v = (const T *)x, *h = (const T *)hi;      \
    for (int64_t i = 0; i < n; i++) {                                       \
      T r = v[i];                                                           \
      F fx = LD(r), fa = LD(l[i * ls]), fb = LD(h[i * hs]);                 \
      if (fx == fx && (fa != fa || fa > fx || (fa == fx && signbit(fx)))) { \
        r = l[i * ls];                                                      \
        fx = fa;                                                            \
      }                                                                     \
      if (fx == fx && (fb != fb || fb < fx || (fb == fx && signbit(fb))))   \
        r = h[i * hs];                                                      \
      o[i] = r;                                                             \
    }                                                                       \
  }
SIM_CLAMP_FLT(sim_clamp_f32, float, float, SIM_LD_ID)
SIM_CLAMP_FLT(sim_clamp_f64, double, double, SIM_LD_ID)
SIM_CLAMP_FLT(sim_clamp_f16, uint16_t, float, SIM_LD_F16)
SIM_CLAMP_FLT(sim_clamp_bf16, uint16_t, float, SIM_LD_BF16)

/* The f8/f6/f4 families (one byte each): as SIM_CLAMP_FLT, comparing the
 * exactly decoded values of type t. */
static void sim_clamp_mini(xrt_dtype t, void *out, const void *lo,
                           const void *x, const void *hi, int64_t n,
                           int64_t ls, int64_t hs) {
  uint8_t *o = (uint8_t *)out;
  const uint8_t *l = (const uint8_t *)lo, *v = (const uint8_t *)x,
                *h = (const uint8_t *)hi;
  for (int64_t i = 0; i < n; i++) {
    uint8_t r = v[i];
    double fx = xrt_minifloat_to_f64(t, r);
    double fa = xrt_minifloat_to_f64(t, l[i * ls]);
    double fb = xrt_minifloat_to_f64(t, h[i * hs]);
    if (fx == fx && (fa != fa || fa > fx || (fa == fx && signbit(fx)))) {
      r = l[i * ls];
      fx = fa;
    }
    if (fx == fx && (fb != fb || fb < fx || (fb == fx && signbit(fb))))
      r = h[i * hs];
    o[i] = r;
  }
}

#define SIM_CLAMP_MINI(NAME, DT)                                            \
  static void NAME(void *out, const void *lo, const void *x,                \
                   const void *hi, int64_t n, int64_t ls, int64_t hs) {     \
    sim_clamp_mini(DT, out, lo, x, hi, n, ls, hs);                          \
  }
SIM_CLAMP_MINI(sim_clamp_f8e4m3fn, XRT_F8E4M3FN)
SIM_CLAMP_MINI(sim_clamp_f8e5m2, XRT_F8E5M2)
SIM_CLAMP_MINI(sim_clamp_f8e4m3fnuz, XRT_F8E4M3FNUZ)
SIM_CLAMP_MINI(sim_clamp_f8e5m2fnuz, XRT_F8E5M2FNUZ)
SIM_CLAMP_MINI(sim_clamp_f8e4m3b11fnuz, XRT_F8E4M3B11FNUZ)
SIM_CLAMP_MINI(sim_clamp_f8e3m4, XRT_F8E3M4)
SIM_CLAMP_MINI(sim_clamp_f8e4m3, XRT_F8E4M3)
SIM_CLAMP_MINI(sim_clamp_f8e8m0fnu, XRT_F8E8M0FNU)
SIM_CLAMP_MINI(sim_clamp_f6e2m3fn, XRT_F6E2M3FN)
SIM_CLAMP_MINI(sim_clamp_f6e3m2fn, XRT_F6E3M2FN)
SIM_CLAMP_MINI(sim_clamp_f4e2m1fn, XRT_F4E2M1FN)

static sim_clamp_fn sim_clamp_for(xrt_dtype t) {
  switch (t) {
  case XRT_S2: case XRT_S4: case XRT_S8: return sim_clamp_s8;
  case XRT_S16: return sim_clamp_s16;
  case XRT_S32: return sim_clamp_s32;
  case XRT_S64: return sim_clamp_s64;
  case XRT_PRED: case XRT_U2: case XRT_U4: case XRT_U8: return sim_clamp_u8;
  case XRT_U16: return sim_clamp_u16;
  case XRT_U32: return sim_clamp_u32;
  case XRT_U64: return sim_clamp_u64;
  case XRT_F32: return sim_clamp_f32;
  case XRT_F64: return sim_clamp_f64;
  case XRT_F16: return sim_clamp_f16;
  case XRT_BF16: return sim_clamp_bf16;
  case XRT_F8E4M3FN: return sim_clamp_f8e4m3fn;
  case XRT_F8E5M2: return sim_clamp_f8e5m2;
  case XRT_F8E4M3FNUZ: return sim_clamp_f8e4m3fnuz;
  case XRT_F8E5M2FNUZ: return sim_clamp_f8e5m2fnuz;
  case XRT_F8E4M3B11FNUZ: return sim_clamp_f8e4m3b11fnuz;
  case XRT_F8E3M4: return sim_clamp_f8e3m4;
  case XRT_F8E4M3: return sim_clamp_f8e4m3;
  case XRT_F8E8M0FNU: return sim_clamp_f8e8m0fnu;
  case XRT_F6E2M3FN: return sim_clamp_f6e2m3fn;
  case XRT_F6E3M2FN: return sim_clamp_f6e3m2fn;
  case XRT_F4E2M1FN: return sim_clamp_f4e2m1fn;
  default: return NULL;
  }
}

typedef struct sim_clamp {
  sim_clamp_fn fn;
  int64_t ls, hs;
} sim_clamp;

static xrt_status sim_run_clamp(const sim_step *st, void **vals, sim_cx *cx) {
  const sim_clamp *c = (const sim_clamp *)st->data;
  (void)cx;
  c->fn(vals[st->out[0]], vals[st->in[0]], vals[st->in[1]], vals[st->in[2]],
        st->n, c->ls, c->hs);
  return XRT_OK;
}

static xrt_status sim_run_ew(const sim_step *st, void **vals, sim_cx *cx) {
  void *in[SIM_MAX_EW_IN];
  (void)cx;
  for (int32_t i = 0; i < st->nin; i++) in[i] = vals[st->in[i]];
  st->ew(in, vals[st->out[0]], (size_t)st->n, st->ew_ctx);
  return XRT_OK;
}

/* ======================================================================
 * Scalar conversion (compile-time data, mixed-type dot_general)
 * ==================================================================== */

typedef struct sim_c64 {
  float re, im;
} sim_c64;
typedef struct sim_c128 {
  double re, im;
} sim_c128;

/* A number in transit between element types. */
typedef struct sim_num {
  double re, im;
  int64_t i;
  int is_int;
} sim_num;

static int sim_is_minifloat(xrt_dtype t) {
  return t >= XRT_F8E4M3FN && t <= XRT_F4E2M1FN;
}

static int sim_num_supported(xrt_dtype t) {
  return t >= XRT_PRED && t <= XRT_F4E2M1FN;
}

/* Rounds to a small float; values beyond its range saturate and NaN
 * becomes 0 in formats that have neither infinity nor NaN. */
static uint8_t sim_minifloat_store(xrt_dtype t, double d) {
  int32_t r = xrt_minifloat_from_f64(t, d);
  xrt_minifloat_format f;
  if (r >= 0 || d != d || !xrt_minifloat_format_of(t, &f))
    return (uint8_t)(r >= 0 ? r : 0);
  unsigned mw = (unsigned)(f.ebits + f.mbits), all = (1u << mw) - 1u;
  unsigned mag = f.kind == XRT_MINIFLOAT_FN ? all - 1u
               : f.kind == XRT_MINIFLOAT_E8M0 ? 254u : all;
  unsigned sign = d < 0 && f.kind != XRT_MINIFLOAT_E8M0 ? 1u << mw : 0u;
  return (uint8_t)(mag | sign);
}

/* Two's-complement wrap of v into an integer type's range. */
static int64_t sim_wrap_int(xrt_dtype t, int64_t v) {
  uint64_t u = (uint64_t)v;
  switch (t) {
  case XRT_PRED: return (int64_t)(u & 1u);
  case XRT_S2: u &= 3u; return u >= 2 ? (int64_t)u - 4 : (int64_t)u;
  case XRT_S4: u &= 15u; return u >= 8 ? (int64_t)u - 16 : (int64_t)u;
  case XRT_U2: return (int64_t)(u & 3u);
  case XRT_U4: return (int64_t)(u & 15u);
  default: return v;
  }
}

static void sim_load(xrt_dtype t, const void *p, sim_num *v) {
  memset(v, 0, sizeof *v);
  v->is_int = 1;
  switch (t) {
  case XRT_PRED: case XRT_U8: case XRT_U2: case XRT_U4:
    v->i = *(const uint8_t *)p; break;
  case XRT_S8: case XRT_S2: case XRT_S4: v->i = *(const int8_t *)p; break;
  case XRT_S16: v->i = *(const int16_t *)p; break;
  case XRT_U16: v->i = *(const uint16_t *)p; break;
  case XRT_S32: v->i = *(const int32_t *)p; break;
  case XRT_U32: v->i = *(const uint32_t *)p; break;
  case XRT_S64: case XRT_U64: v->i = *(const int64_t *)p; break;
  default: v->is_int = 0; break;
  }
  if (v->is_int) {
    v->re = t == XRT_U64 ? (double)(uint64_t)v->i : (double)v->i;
    return;
  }
  switch (t) {
  case XRT_F16: v->re = xrt_f16_to_f32(*(const uint16_t *)p); break;
  case XRT_BF16: v->re = xrt_bf16_to_f32(*(const uint16_t *)p); break;
  case XRT_F32: v->re = *(const float *)p; break;
  case XRT_F64: v->re = *(const double *)p; break;
  case XRT_C64:
    v->re = ((const sim_c64 *)p)->re;
    v->im = ((const sim_c64 *)p)->im;
    break;
  case XRT_C128:
    v->re = ((const sim_c128 *)p)->re;
    v->im = ((const sim_c128 *)p)->im;
    break;
  default:
    if (sim_is_minifloat(t)) v->re = xrt_minifloat_to_f64(t, *(const uint8_t *)p);
    break;
  }
}

/* Float to integer: truncates toward zero, saturating (NaN gives 0). */
static int64_t sim_float_to_i64(double d) {
  if (d != d) return 0;
  if (d >= 9223372036854775807.0) return INT64_MAX;
  if (d <= -9223372036854775808.0) return INT64_MIN;
  return (int64_t)d;
}

static void sim_store(xrt_dtype t, void *p, const sim_num *v) {
  int64_t i = sim_wrap_int(t, v->is_int ? v->i : sim_float_to_i64(v->re));
  switch (t) {
  case XRT_PRED: *(uint8_t *)p = v->is_int ? v->i != 0 : v->re != 0; break;
  case XRT_S8: case XRT_U8: case XRT_S2: case XRT_S4: case XRT_U2:
  case XRT_U4: *(uint8_t *)p = (uint8_t)i; break;
  case XRT_S16: case XRT_U16: *(uint16_t *)p = (uint16_t)i; break;
  case XRT_S32: case XRT_U32: *(uint32_t *)p = (uint32_t)i; break;
  case XRT_S64: case XRT_U64: *(uint64_t *)p = (uint64_t)i; break;
  case XRT_F16: *(uint16_t *)p = xrt_f64_to_f16(v->re); break;
  case XRT_BF16: *(uint16_t *)p = xrt_f64_to_bf16(v->re); break;
  case XRT_F32: *(float *)p = (float)v->re; break;
  case XRT_F64: *(double *)p = v->re; break;
  case XRT_C64:
    ((sim_c64 *)p)->re = (float)v->re;
    ((sim_c64 *)p)->im = (float)v->im;
    break;
  case XRT_C128:
    ((sim_c128 *)p)->re = v->re;
    ((sim_c128 *)p)->im = v->im;
    break;
  default:
    if (sim_is_minifloat(t))
      *(uint8_t *)p = sim_minifloat_store(t, v->is_int ? (double)v->i : v->re);
    break;
  }
}

/* Slow path (mixed-type dot_general only): converts n elements. */
static void sim_convert(void *dst, const void *src, int64_t n, xrt_dtype from,
                        xrt_dtype to) {
  size_t fs = sim_esize(from), ts = sim_esize(to);
  for (int64_t i = 0; i < n; i++) {
    sim_num v;
    sim_load(from, (const char *)src + (size_t)i * fs, &v);
    sim_store(to, (char *)dst + (size_t)i * ts, &v);
  }
}

/* Re-wraps sub-byte integers after byte-wide arithmetic. */
static void sim_wrap_all(xrt_dtype t, void *p, int64_t n) {
  uint8_t *b = (uint8_t *)p;
  for (int64_t i = 0; i < n; i++)
    b[i] = (uint8_t)sim_wrap_int(t, t == XRT_S2 || t == XRT_S4
                                        ? (int64_t)(int8_t)b[i]
                                        : (int64_t)b[i]);
}

/* ======================================================================
 * reduce
 * ==================================================================== */

/* Combines n input elements into the accumulator(s): vec = 0 folds them
 * into *acc, vec = 1 combines acc[i] with in[i]. */
typedef void (*sim_red_fn)(void *acc, const void *in, int64_t n, int vec);

#define SIM_RED_DEF(NAME, T, COMB)                                          \
  static void NAME(void *accp, const void *inp, int64_t n, int vec) {       \
    T *acc = (T *)accp;                                                     \
    const T *in = (const T *)inp;                                           \
    if (vec) {                                                              \
      for (int64_t i = 0; i < n; i++) {                                     \
        T a = acc[i], b = in[i];                                            \
        acc[i] = (T)(COMB);                                                 \
      }                                                                     \
      return;                                                               \
    }                                                                       \
    T a = *acc;                                                             \
    for (int64_t i = 0; i < n; i++) {                                       \
      T b = in[i];                                                          \
      a = (T)(COMB);                                                        \
    }                                                                       \
    *acc = a;                                                               \
  }

/* IEEE maximum/minimum: NaN propagates, -0 < +0. */
#define SIM_FMAX(a, b, fa, fb)                                              \
  ((fa) != (fa) ? (a) : (fb) != (fb) ? (b)                                  \
   : (fa) == (fb) ? (signbit(fa) ? (b) : (a)) : (fa) > (fb) ? (a) : (b))
#define SIM_FMIN(a, b, fa, fb)                                              \
  ((fa) != (fa) ? (a) : (fb) != (fb) ? (b)                                  \
   : (fa) == (fb) ? (signbit(fa) ? (a) : (b)) : (fa) < (fb) ? (a) : (b))

SIM_RED_DEF(sim_red_add_f32, float, a + b)
SIM_RED_DEF(sim_red_mul_f32, float, a * b)
SIM_RED_DEF(sim_red_max_f32, float, SIM_FMAX(a, b, a, b))
SIM_RED_DEF(sim_red_min_f32, float, SIM_FMIN(a, b, a, b))
SIM_RED_DEF(sim_red_add_f64, double, a + b)
SIM_RED_DEF(sim_red_mul_f64, double, a * b)
SIM_RED_DEF(sim_red_max_f64, double, SIM_FMAX(a, b, a, b))
SIM_RED_DEF(sim_red_min_f64, double, SIM_FMIN(a, b, a, b))
/* f16/bf16 round after every step, as the body would (an f32 add/mul of
 * two halves rounds correctly to half). */
SIM_RED_DEF(sim_red_add_f16, uint16_t,
            xrt_f32_to_f16(xrt_f16_to_f32(a) + xrt_f16_to_f32(b)))
SIM_RED_DEF(sim_red_mul_f16, uint16_t,
            xrt_f32_to_f16(xrt_f16_to_f32(a) * xrt_f16_to_f32(b)))
SIM_RED_DEF(sim_red_max_f16, uint16_t,
            SIM_FMAX(a, b, xrt_f16_to_f32(a), xrt_f16_to_f32(b)))
SIM_RED_DEF(sim_red_min_f16, uint16_t,
            SIM_FMIN(a, b, xrt_f16_to_f32(a), xrt_f16_to_f32(b)))
SIM_RED_DEF(sim_red_add_bf16, uint16_t,
            xrt_f32_to_bf16(xrt_bf16_to_f32(a) + xrt_bf16_to_f32(b)))
SIM_RED_DEF(sim_red_mul_bf16, uint16_t,
            xrt_f32_to_bf16(xrt_bf16_to_f32(a) * xrt_bf16_to_f32(b)))
SIM_RED_DEF(sim_red_max_bf16, uint16_t,
            SIM_FMAX(a, b, xrt_bf16_to_f32(a), xrt_bf16_to_f32(b)))
SIM_RED_DEF(sim_red_min_bf16, uint16_t,
            SIM_FMIN(a, b, xrt_bf16_to_f32(a), xrt_bf16_to_f32(b)))

/* Integers: add/mul/and/or wrap identically for signed and unsigned, so
 * they run on unsigned types (no signed overflow). */
#define SIM_RED_INTS(BITS, W)                                                  \
  SIM_RED_DEF(sim_red_add_u##BITS, uint##BITS##_t, (W)a + (W)b)                \
  SIM_RED_DEF(sim_red_mul_u##BITS, uint##BITS##_t, (W)a * (W)b)                \
  SIM_RED_DEF(sim_red_and_u##BITS, uint##BITS##_t, a & b)                      \
  SIM_RED_DEF(sim_red_or_u##BITS, uint##BITS##_t, a | b)                       \
  SIM_RED_DEF(sim_red_max_u##BITS, uint##BITS##_t, a > b ? a : b)              \
  SIM_RED_DEF(sim_red_min_u##BITS, uint##BITS##_t, a < b ? a : b)              \
  SIM_RED_DEF(sim_red_max_s##BITS, int##BITS##_t, a > b ? a : b)               \
  SIM_RED_DEF(sim_red_min_s##BITS, int##BITS##_t, a < b ? a : b)
SIM_RED_INTS(8, uint32_t)
SIM_RED_INTS(16, uint32_t)
SIM_RED_INTS(32, uint32_t)
SIM_RED_INTS(64, uint64_t)

#define SIM_RED_PICK_INT(BITS, SIGNED)                                        \
  switch (code) {                                                             \
  case XRT_OP_ADD: return sim_red_add_u##BITS;                                \
  case XRT_OP_MULTIPLY: return sim_red_mul_u##BITS;                           \
  case XRT_OP_AND: return sim_red_and_u##BITS;                                \
  case XRT_OP_OR: return sim_red_or_u##BITS;                                  \
  case XRT_OP_MAXIMUM: return SIGNED ? sim_red_max_s##BITS : sim_red_max_u##BITS; \
  case XRT_OP_MINIMUM: return SIGNED ? sim_red_min_s##BITS : sim_red_min_u##BITS; \
  default: return NULL;                                                       \
  }

#define SIM_RED_PICK_FLT(SUF)                                                 \
  switch (code) {                                                             \
  case XRT_OP_ADD: return sim_red_add_##SUF;                                  \
  case XRT_OP_MULTIPLY: return sim_red_mul_##SUF;                             \
  case XRT_OP_MAXIMUM: return sim_red_max_##SUF;                              \
  case XRT_OP_MINIMUM: return sim_red_min_##SUF;                              \
  default: return NULL;                                                       \
  }

/* The typed loop for a body that is one binary op, or NULL. */
static sim_red_fn sim_red_pick(xrt_opcode code, xrt_dtype t) {
  switch (t) {
  case XRT_F32: SIM_RED_PICK_FLT(f32)
  case XRT_F64: SIM_RED_PICK_FLT(f64)
  case XRT_F16: SIM_RED_PICK_FLT(f16)
  case XRT_BF16: SIM_RED_PICK_FLT(bf16)
  case XRT_S8: SIM_RED_PICK_INT(8, 1)
  case XRT_U8: SIM_RED_PICK_INT(8, 0)
  case XRT_S16: SIM_RED_PICK_INT(16, 1)
  case XRT_U16: SIM_RED_PICK_INT(16, 0)
  case XRT_S32: SIM_RED_PICK_INT(32, 1)
  case XRT_U32: SIM_RED_PICK_INT(32, 0)
  case XRT_S64: SIM_RED_PICK_INT(64, 1)
  case XRT_U64: SIM_RED_PICK_INT(64, 0)
  case XRT_PRED:
    if (code == XRT_OP_AND || code == XRT_OP_MINIMUM) return sim_red_and_u8;
    if (code == XRT_OP_OR || code == XRT_OP_MAXIMUM) return sim_red_or_u8;
    return NULL;
  default: return NULL;
  }
}

/* The iteration plan walks the inputs once in row-major order; for each
 * input element the output element is sum idx_k * ostr_k (ostr 0 on reduced
 * dimensions).  Row-major input order visits each output's elements in
 * row-major order of the reduced dimensions, i.e. the sequential schedule. */
typedef struct sim_reduce {
  int32_t n;    /* inputs (= results) */
  int32_t rank; /* coalesced dimensions, >= 1 */
  int64_t dims[XRT_MAX_RANK], ostr[XRT_MAX_RANK];
  int64_t in_numel, out_numel;
  const size_t *es;          /* element size per input/result */
  const sim_fill_fn *fill;   /* per result */
  sim_red_fn fast;           /* single-op body, or NULL: run body */
  sim_plan body;
  const int32_t *bargs;      /* 2n: accumulators, then input elements */
  const int32_t *brets;      /* n */
  int32_t tmp;               /* pseudo value holding n body results */
  const size_t *toff;        /* offsets of the results in tmp */
} sim_reduce;

/* Runs the body for output element o and input element i. */
static xrt_status sim_reduce_elem(const sim_step *st, const sim_reduce *r,
                                  void **vals, sim_cx *cx, int64_t o,
                                  int64_t i) {
  int32_t n = r->n;
  for (int32_t j = 0; j < n; j++) {
    vals[r->bargs[j]] = (char *)vals[st->out[j]] + (size_t)o * r->es[j];
    vals[r->bargs[n + j]] = (char *)vals[st->in[j]] + (size_t)i * r->es[j];
  }
  xrt_status rc = sim_run_plan(&r->body, vals, cx);
  if (rc) return rc;
  if (n == 1) {
    memmove(vals[r->bargs[0]], vals[r->brets[0]], r->es[0]);
    return XRT_OK;
  }
  /* Through tmp: a result may be another accumulator. */
  char *tmp = (char *)vals[r->tmp];
  for (int32_t j = 0; j < n; j++)
    memcpy(tmp + r->toff[j], vals[r->brets[j]], r->es[j]);
  for (int32_t j = 0; j < n; j++)
    memcpy(vals[r->bargs[j]], tmp + r->toff[j], r->es[j]);
  return XRT_OK;
}

/* One innermost run of len input elements starting at i. */
static xrt_status sim_reduce_run_inner(const sim_step *st,
                                       const sim_reduce *r, void **vals,
                                       sim_cx *cx, int64_t o, int64_t i,
                                       int64_t len, int vec) {
  if (r->fast) {
    r->fast((char *)vals[st->out[0]] + (size_t)o * r->es[0],
            (const char *)vals[st->in[0]] + (size_t)i * r->es[0], len, vec);
    return XRT_OK;
  }
  for (int64_t k = 0; k < len; k++) {
    xrt_status rc = sim_reduce_elem(st, r, vals, cx, vec ? o + k : o, i + k);
    if (rc) return rc;
  }
  return XRT_OK;
}

static xrt_status sim_run_reduce(const sim_step *st, void **vals,
                                 sim_cx *cx) {
  const sim_reduce *r = (const sim_reduce *)st->data;
  for (int32_t j = 0; j < r->n; j++)
    r->fill[j]((char *)vals[st->out[j]], (const char *)vals[st->in[r->n + j]],
               r->out_numel);
  if (r->in_numel == 0) return XRT_OK;
  int last = r->rank - 1;
  int64_t len = r->dims[last], idx[XRT_MAX_RANK], o = 0, i = 0;
  int vec = r->ostr[last] != 0;
  memset(idx, 0, sizeof idx);
  for (;;) {
    xrt_status rc = sim_reduce_run_inner(st, r, vals, cx, o, i, len, vec);
    if (rc) return rc;
    i += len;
    int k = last - 1;
    for (; k >= 0; k--) {
      o += r->ostr[k];
      if (++idx[k] < r->dims[k]) break;
      o -= r->ostr[k] * r->dims[k];
      idx[k] = 0;
    }
    if (k < 0) return XRT_OK;
  }
}

/* ======================================================================
 * dot_general
 * ==================================================================== */

typedef struct sim_dot sim_dot;
typedef void (*sim_dot_fn)(const sim_dot *d, void *out, const void *lhs,
                           const void *rhs, void *acc);

/* result[b, m, n] = sum_k lhs[lb[b] + lm[m] + lk[k]] * rhs[rb[b] + rn[n] +
 * rk[k]] with element offsets precomputed for any layout. */
struct sim_dot {
  sim_dot_fn fn;
  int64_t B, M, N, K;
  const int64_t *lb, *lm, *lk, *rb, *rn, *rk;
  int unit_n;    /* rn[n] == n: rows of rhs are contiguous (i-k-j order) */
  int32_t acc;   /* pseudo value: an accumulator row of N, or -1 */
  xrt_dtype lt, rt, ot, ct; /* ct: the type the kernel computes in */
  int32_t ltmp, rtmp; /* pseudo values for converted operands, or -1 */
  int32_t otmp;       /* result in ct before rounding to ot, or -1 */
  int64_t lnumel, rnumel, onumel;
  xrt_dtype wrap; /* sub-byte result type to re-wrap, else invalid */
};

/* Both loop orders add the products of one output in k order, so results
 * do not depend on the layout. */
#define SIM_DOT_DEF(NAME, T, A, ZERO, LD, ST, MAC)                            \
  static void NAME(const sim_dot *d, void *out, const void *lhs,              \
                   const void *rhs, void *accp) {                             \
    const T *L = (const T *)lhs, *R = (const T *)rhs;                         \
    T *O = (T *)out;                                                          \
    A *restrict acc = (A *)accp;                                              \
    int64_t N = d->N, K = d->K;                                               \
    for (int64_t b = 0; b < d->B; b++)                                        \
      for (int64_t m = 0; m < d->M; m++, O += N) {                            \
        const T *lrow = L + d->lb[b] + d->lm[m], *rb = R + d->rb[b];          \
        if (d->unit_n) {                                                      \
          for (int64_t n = 0; n < N; n++) acc[n] = ZERO;                      \
          for (int64_t k = 0; k < K; k++) {                                   \
            A a = LD(lrow[d->lk[k]]);                                         \
            const T *restrict rr = rb + d->rk[k];                             \
            int64_t n = 0;                                                    \
            for (; n + 4 <= N; n += 4) { /* unrolled for SLP vectorizing */  \
              MAC(acc[n], a, LD(rr[n]));                                      \
              MAC(acc[n + 1], a, LD(rr[n + 1]));                              \
              MAC(acc[n + 2], a, LD(rr[n + 2]));                              \
              MAC(acc[n + 3], a, LD(rr[n + 3]));                              \
            }                                                                 \
            for (; n < N; n++) MAC(acc[n], a, LD(rr[n]));                     \
          }                                                                   \
          for (int64_t n = 0; n < N; n++) O[n] = ST(acc[n]);                  \
          continue;                                                           \
        }                                                                     \
        int64_t n = 0;                                                        \
        for (; n + 4 <= N; n += 4) { /* four outputs at once, for ILP */      \
          const T *r0 = rb + d->rn[n], *r1 = rb + d->rn[n + 1];               \
          const T *r2 = rb + d->rn[n + 2], *r3 = rb + d->rn[n + 3];           \
          A s0 = ZERO, s1 = ZERO, s2 = ZERO, s3 = ZERO;                       \
          for (int64_t k = 0; k < K; k++) {                                   \
            A a = LD(lrow[d->lk[k]]);                                         \
            int64_t o = d->rk[k];                                             \
            MAC(s0, a, LD(r0[o]));                                            \
            MAC(s1, a, LD(r1[o]));                                            \
            MAC(s2, a, LD(r2[o]));                                            \
            MAC(s3, a, LD(r3[o]));                                            \
          }                                                                   \
          O[n] = ST(s0), O[n + 1] = ST(s1), O[n + 2] = ST(s2);                \
          O[n + 3] = ST(s3);                                                  \
        }                                                                     \
        for (; n < N; n++) {                                                  \
          const T *rr = rb + d->rn[n];                                        \
          A s = ZERO;                                                         \
          for (int64_t k = 0; k < K; k++)                                     \
            MAC(s, LD(lrow[d->lk[k]]), LD(rr[d->rk[k]]));                     \
          O[n] = ST(s);                                                       \
        }                                                                     \
      }                                                                       \
  }

#define SIM_MAC_F(acc, a, b) ((acc) += (a) * (b))
#define SIM_MAC_U32(acc, a, b) \
  ((acc) = (uint32_t)((uint32_t)(acc) + (uint32_t)(a) * (uint32_t)(b)))
#define SIM_MAC_U64(acc, a, b) \
  ((acc) = (uint64_t)((uint64_t)(acc) + (uint64_t)(a) * (uint64_t)(b)))
#define SIM_MAC_C(A, acc, a, b)                                              \
  do {                                                                       \
    A sim_a_ = (a), sim_b_ = (b);                                            \
    (acc).re += sim_a_.re * sim_b_.re - sim_a_.im * sim_b_.im;               \
    (acc).im += sim_a_.re * sim_b_.im + sim_a_.im * sim_b_.re;               \
  } while (0)
#define SIM_MAC_C64(acc, a, b) SIM_MAC_C(sim_c64, acc, a, b)
#define SIM_MAC_C128(acc, a, b) SIM_MAC_C(sim_c128, acc, a, b)
#define SIM_ST_F16(x) xrt_f32_to_f16(x)
#define SIM_ST_BF16(x) xrt_f32_to_bf16(x)

static const sim_c64 sim_c64_zero = {0, 0};
static const sim_c128 sim_c128_zero = {0, 0};

SIM_DOT_DEF(sim_dot_f32, float, float, 0.0f, SIM_LD_ID, SIM_LD_ID, SIM_MAC_F)
SIM_DOT_DEF(sim_dot_f64, double, double, 0.0, SIM_LD_ID, SIM_LD_ID, SIM_MAC_F)
SIM_DOT_DEF(sim_dot_f16, uint16_t, float, 0.0f, SIM_LD_F16, SIM_ST_F16,
            SIM_MAC_F)
SIM_DOT_DEF(sim_dot_bf16, uint16_t, float, 0.0f, SIM_LD_BF16, SIM_ST_BF16,
            SIM_MAC_F)
SIM_DOT_DEF(sim_dot_u8, uint8_t, uint8_t, 0, SIM_LD_ID, SIM_LD_ID, SIM_MAC_U32)
SIM_DOT_DEF(sim_dot_u16, uint16_t, uint16_t, 0, SIM_LD_ID, SIM_LD_ID,
            SIM_MAC_U32)
SIM_DOT_DEF(sim_dot_u32, uint32_t, uint32_t, 0, SIM_LD_ID, SIM_LD_ID,
            SIM_MAC_U32)
SIM_DOT_DEF(sim_dot_u64, uint64_t, uint64_t, 0, SIM_LD_ID, SIM_LD_ID,
            SIM_MAC_U64)
SIM_DOT_DEF(sim_dot_c64, sim_c64, sim_c64, sim_c64_zero, SIM_LD_ID, SIM_LD_ID,
            SIM_MAC_C64)
SIM_DOT_DEF(sim_dot_c128, sim_c128, sim_c128, sim_c128_zero, SIM_LD_ID,
            SIM_LD_ID, SIM_MAC_C128)

/* Kernel and accumulator element size for a result type. Signed and
 * sub-byte integers use the unsigned kernels (same bits mod 2^w). */
static sim_dot_fn sim_dot_for(xrt_dtype t, size_t *acc_size) {
  *acc_size = sim_esize(t);
  switch (t) {
  case XRT_F32: return sim_dot_f32;
  case XRT_F64: return sim_dot_f64;
  case XRT_F16: *acc_size = 4; return sim_dot_f16;
  case XRT_BF16: *acc_size = 4; return sim_dot_bf16;
  case XRT_S8: case XRT_U8: case XRT_S2: case XRT_S4: case XRT_U2:
  case XRT_U4: return sim_dot_u8;
  case XRT_S16: case XRT_U16: return sim_dot_u16;
  case XRT_S32: case XRT_U32: return sim_dot_u32;
  case XRT_S64: case XRT_U64: return sim_dot_u64;
  case XRT_C64: return sim_dot_c64;
  case XRT_C128: return sim_dot_c128;
  default: return NULL;
  }
}

static xrt_status sim_run_dot(const sim_step *st, void **vals, sim_cx *cx) {
  const sim_dot *d = (const sim_dot *)st->data;
  const void *l = vals[st->in[0]], *r = vals[st->in[1]];
  void *out = vals[st->out[0]];
  void *res = d->otmp >= 0 ? vals[d->otmp] : out;
  (void)cx;
  if (d->ltmp >= 0) {
    sim_convert(vals[d->ltmp], l, d->lnumel, d->lt, d->ct);
    l = vals[d->ltmp];
  }
  if (d->rtmp >= 0) {
    sim_convert(vals[d->rtmp], r, d->rnumel, d->rt, d->ct);
    r = vals[d->rtmp];
  }
  d->fn(d, res, l, r, d->acc >= 0 ? vals[d->acc] : NULL);
  if (d->otmp >= 0) sim_convert(out, res, d->onumel, d->ct, d->ot);
  if (d->wrap != XRT_DTYPE_INVALID) sim_wrap_all(d->wrap, out, d->onumel);
  return XRT_OK;
}

/* ======================================================================
 * while, func.call, custom_call
 * ==================================================================== */

/* Loop values live in two buffers each (a, b); the region arguments point
 * at the current one and the body's results are copied into the other,
 * which then becomes current, so swaps and pass-throughs stay correct. */
typedef struct sim_while {
  int32_t n;
  sim_plan cond, body;
  const int32_t *cargs, *bargs, *bufa, *bufb, *brets;
  int32_t cret;
  const size_t *bytes;
} sim_while;

static void *sim_while_other(const sim_while *w, void **vals, int32_t i) {
  void *a = vals[w->bufa[i]];
  return vals[w->bargs[i]] == a ? vals[w->bufb[i]] : a;
}

static void sim_while_advance(const sim_while *w, void **vals) {
  for (int32_t i = 0; i < w->n; i++)
    if (w->bytes[i])
      memcpy(sim_while_other(w, vals, i), vals[w->brets[i]], w->bytes[i]);
  for (int32_t i = 0; i < w->n; i++)
    vals[w->bargs[i]] = vals[w->cargs[i]] = sim_while_other(w, vals, i);
}

static xrt_status sim_run_while(const sim_step *st, void **vals, sim_cx *cx) {
  const sim_while *w = (const sim_while *)st->data;
  for (int32_t i = 0; i < w->n; i++) {
    void *a = vals[w->bufa[i]];
    if (w->bytes[i]) memcpy(a, vals[st->in[i]], w->bytes[i]);
    vals[w->bargs[i]] = vals[w->cargs[i]] = a;
  }
  for (;;) {
    xrt_status rc = sim_run_plan(&w->cond, vals, cx);
    if (rc) return rc;
    if (!*(const uint8_t *)vals[w->cret]) break;
    if ((rc = sim_run_plan(&w->body, vals, cx))) return rc;
    sim_while_advance(w, vals);
  }
  for (int32_t i = 0; i < w->n; i++)
    if (w->bytes[i]) memcpy(vals[st->out[i]], vals[w->bargs[i]], w->bytes[i]);
  return XRT_OK;
}

typedef struct sim_call {
  const sim_fplan *fp;
  const size_t *bytes; /* per result */
} sim_call;

static xrt_status sim_run_call(const sim_step *st, void **vals, sim_cx *cx) {
  const sim_call *c = (const sim_call *)st->data;
  const sim_fplan *fp = c->fp;
  void **cv = cx->allvals + fp->vbase;
  for (int32_t i = 0; i < st->nin; i++) cv[fp->args[i]] = vals[st->in[i]];
  xrt_status rc = sim_run_plan(&fp->body, cv, cx);
  if (rc) return rc;
  for (int32_t i = 0; i < st->nout; i++)
    if (c->bytes[i]) memcpy(vals[st->out[i]], cv[fp->rets[i]], c->bytes[i]);
  return XRT_OK;
}

typedef struct sim_ccall {
  xrt_host_binding host;
  const char *target;
  const xrt_host_tensor *tmpl; /* shapes and sizes of inputs, outputs */
  int32_t tmp;                 /* pseudo value: this call's tensors */
} sim_ccall;

static xrt_status sim_run_custom_call(const sim_step *st, void **vals,
                                      sim_cx *cx) {
  const sim_ccall *c = (const sim_ccall *)st->data;
  const xrt_ir_op *op = st->op;
  int32_t nt = st->nin + st->nout;
  xrt_host_tensor *t = nt ? (xrt_host_tensor *)vals[c->tmp] : NULL;
  if (nt) memcpy(t, c->tmpl, sizeof *t * (size_t)nt);
  for (int32_t i = 0; i < st->nin; i++) t[i].data = vals[st->in[i]];
  for (int32_t i = 0; i < st->nout; i++)
    t[st->nin + i].data = vals[st->out[i]];
  char msg[sizeof cx->err->message];
  msg[0] = 0;
  xrt_host_call call = {c->target, op, st->nin, t, st->nout,
                        t ? t + st->nin : NULL, msg, sizeof msg};
  xrt_status rc = c->host.fn(c->host.user, &call);
  if (rc == XRT_OK) return XRT_OK;
  char prefix[320];
  sim_loc(op, prefix, sizeof prefix);
  if (!msg[0])
    return sim_fail_op(cx->err, op, rc, "%s @%s failed (code %d)",
                       op->code == XRT_OP_CUSTOM_CALL ? "custom_call"
                                                      : op->name,
                       c->target, (int)rc);
  if (strncmp(msg, prefix, strlen(prefix)) == 0) /* already located */
    return sim_fail(cx->err, rc, "%s", msg);
  return sim_fail_op(cx->err, op, rc, "%s", msg);
}

/* ======================================================================
 * The planner: values, liveness and slots
 * ==================================================================== */

enum { SIM_V_NONE, SIM_V_SLOT, SIM_V_CONST, SIM_V_BOUND, SIM_V_OUT };

typedef struct sim_vinfo {
  uint8_t kind;
  int32_t def, last; /* op positions (pre-order over nested regions) */
  size_t bytes, off, cap;
  int32_t in_out; /* 1 + the entry result whose buffer holds it; 0: arena */
  void *cptr;
} sim_vinfo;

/* An offset table of sim_dot_table, kept so that a dot_general of the
 * same shapes reuses it (tables are read-only once made). */
typedef struct sim_dot_memo {
  int64_t nd, sizes[XRT_MAX_RANK], s1[XRT_MAX_RANK], s2[XRT_MAX_RANK];
  int has_y;
  int64_t *t, *u, count;
} sim_dot_memo;

#define SIM_DOT_MEMO 8

typedef struct sim_cc {
  xrt_allocator al;
  sim_exe *exe;
  const xrt_ir_module *m;
  xrt_plugin_error *err;
  const xrt_host_binding *hosts; /* by custom_call op->callee */
  sim_dot_memo dmemo[SIM_DOT_MEMO]; /* recent tables, round robin */
  unsigned ndmemo;
  /* Fusion decisions given by serialized bytes (NULL: analyse), read in
   * the order sim_exe.fzrec was written; fz_bad: 1 they did not fit, 2 out
   * of memory while following them. */
  const int32_t *fzin;
  int32_t fzin_n, fzin_at;
  int fz_bad;
  /* sim_gemm_path, read once a compile (getenv per dot_general was a
   * fiftieth of a disk cache hit); gemm_known says it is set */
  int gemm_path, gemm_known;
} sim_cc;

/* Planning state of one function. */
typedef struct sim_fcc {
  sim_cc *cc;
  const xrt_ir_func *f;
  sim_vinfo *v; /* real values, then pseudo values */
  int32_t nv, capv;
  int32_t pos, cur, depth;
  sim_vec defs;   /* value ids in definition order */
  sim_vec nested; /* ids that must live to the end of the current top op */
  /* Quantized compute ops (sim_lower_quant): a copy of the function whose
   * value_types also cover pseudo values, grown in pool memory. */
  xrt_ir_func xf;
  xrt_ir_type *xt;
  int32_t xcap;
  void *fz; /* fusion: uses and definitions of values (see "Fusion") */
} sim_fcc;

typedef xrt_status (*sim_lower_fn)(sim_fcc *fc, const xrt_ir_op *op,
                                   sim_step *st);

static xrt_status sim_oom(sim_fcc *fc) {
  return sim_fail(fc->cc->err, XRT_RESOURCE_EXHAUSTED, "out of host memory "
                  "while compiling @%s", fc->f->name);
}

/* Executable-lifetime memory; sets the error on failure. */
static void *sim_palloc(sim_fcc *fc, size_t bytes) {
  void *p = sim_pool_alloc(&fc->cc->exe->pool, bytes);
  if (!p) sim_oom(fc);
  return p;
}

/* Not zeroed: for memory the caller writes whole at once. */
static void *sim_palloc_raw(sim_fcc *fc, size_t bytes) {
  void *p = sim_pool_raw(&fc->cc->exe->pool, bytes);
  if (!p) sim_oom(fc);
  return p;
}

static const xrt_shape *sim_shape(const sim_fcc *fc, int32_t id) {
  return &fc->f->value_types[id].shape;
}

/* Tuples are stored flat: each element at a 16-byte aligned offset of one
 * block (nested tuples inline), so copying a tuple is one memcpy and
 * get_tuple_element copies a sub-range.  Tokens hold no bytes. */
#define SIM_TUPLE_ALIGN 16

static size_t sim_tuple_pad(size_t off) {
  return (off + SIM_TUPLE_ALIGN - 1) & ~(size_t)(SIM_TUPLE_ALIGN - 1);
}

static size_t sim_type_bytes(const xrt_ir_type *t) {
  if (t->kind == XRT_TYPE_TOKEN) return 0;
  if (t->kind != XRT_TYPE_TUPLE) return sim_bytes(&t->shape);
  size_t off = 0;
  for (int32_t i = 0; i < t->num_elems; i++)
    off = sim_tuple_pad(off) + sim_type_bytes(&t->elems[i]);
  return off;
}

/* Byte offset of element k inside a tuple value. */
static size_t sim_tuple_off(const xrt_ir_type *t, int32_t k) {
  size_t off = 0;
  for (int32_t i = 0; i < k; i++)
    off = sim_tuple_pad(off) + sim_type_bytes(&t->elems[i]);
  return sim_tuple_pad(off);
}

/* Bytes of any value: tensor, tuple or token. */
static size_t sim_vbytes(const sim_fcc *fc, int32_t id) {
  return sim_type_bytes(&fc->f->value_types[id]);
}

/* The first of n attributes named name (NULL names skipped), as
 * xrt_ir_op_attr and xrt_ir_attr_field find it; libc's strcmp after a
 * first-letter test (their byte loops were a twentieth of a disk cache
 * hit's planning: names such as "lhs_contracting_dimensions" are long). */
static const xrt_ir_attr *sim_named(const xrt_ir_attr *it, int32_t n,
                                    const char *name) {
  for (int32_t i = 0; i < n; i++) {
    const char *a = it[i].name;
    if (a && a[0] == name[0] && strcmp(a, name) == 0) return &it[i];
  }
  return NULL;
}

/* A field of a DICT attribute (NULL: none, or dn is not a DICT). */
static const xrt_ir_attr *sim_field(const xrt_ir_attr *dn, const char *name) {
  return dn && dn->kind == XRT_ATTR_DICT
             ? sim_named(dn->items, dn->num_items, name)
             : NULL;
}

static const xrt_ir_attr *sim_attr(const xrt_ir_op *op, const char *name,
                                   int kind) {
  const xrt_ir_attr *a = sim_named(op->attrs, op->num_attrs, name);
  return a && a->kind == kind ? a : NULL;
}

/* An INTS attribute (absent means empty unless required). */
static xrt_status sim_ints(sim_fcc *fc, const xrt_ir_op *op, const char *name,
                           int required, const int64_t **v, int64_t *n) {
  const xrt_ir_attr *a = sim_attr(op, name, XRT_ATTR_INTS);
  *v = a ? a->ints : NULL;
  *n = a ? a->n : 0;
  if (!a && required)
    return sim_fail_op(fc->cc->err, op, XRT_INVALID_ARGUMENT,
                       "%s needs the integer list attribute '%s'", op->name,
                       name);
  return XRT_OK;
}

static xrt_status sim_int_attr(sim_fcc *fc, const xrt_ir_op *op,
                               const char *name, int64_t *out) {
  const xrt_ir_attr *a = sim_attr(op, name, XRT_ATTR_INT);
  if (!a)
    return sim_fail_op(fc->cc->err, op, XRT_INVALID_ARGUMENT,
                       "%s needs the integer attribute '%s'", op->name, name);
  *out = a->i;
  return XRT_OK;
}

static xrt_status sim_unsupported_type(sim_fcc *fc, const xrt_ir_op *op,
                                       xrt_dtype t) {
  return sim_fail_op(fc->cc->err, op, XRT_UNIMPLEMENTED, "%s is not supported "
                     "by the simulator for element type %s", op->name,
                     sim_dtype_name(t));
}

static xrt_status sim_new_value(sim_fcc *fc, int32_t *id) {
  if (fc->nv == fc->capv) {
    const xrt_allocator *al = &fc->cc->al;
    int32_t cap = fc->capv ? 2 * fc->capv : 64;
    sim_vinfo *v = (sim_vinfo *)al->alloc(al->self, sizeof *v * (size_t)cap);
    if (!v) return sim_oom(fc);
    if (fc->nv) memcpy(v, fc->v, sizeof *v * (size_t)fc->nv);
    al->free(al->self, fc->v);
    fc->v = v;
    fc->capv = cap;
  }
  memset(&fc->v[fc->nv], 0, sizeof *fc->v);
  *id = fc->nv++;
  return XRT_OK;
}

static xrt_status sim_keep(sim_fcc *fc, int32_t id) {
  return sim_push_i32(&fc->cc->al, &fc->nested, id) ? XRT_OK : sim_oom(fc);
}

/* id is written by the current op and needs bytes of scratch. */
static xrt_status sim_def(sim_fcc *fc, int32_t id, size_t bytes) {
  sim_vinfo *v = &fc->v[id];
  v->kind = SIM_V_SLOT;
  v->def = v->last = fc->cur;
  v->bytes = bytes;
  if (!sim_push_i32(&fc->cc->al, &fc->defs, id)) return sim_oom(fc);
  return fc->depth > 0 ? sim_keep(fc, id) : XRT_OK;
}

/* Scratch for the current op (a pseudo value). */
static xrt_status sim_temp(sim_fcc *fc, size_t bytes, int32_t *id) {
  xrt_status rc = sim_new_value(fc, id);
  return rc ? rc : sim_def(fc, *id, bytes);
}

/* The current op reads id.  Inside a region the value must outlive the
 * whole top-level op, which may run the region many times. */
static xrt_status sim_use(sim_fcc *fc, int32_t id) {
  if (fc->depth > 0) return sim_keep(fc, id);
  if (fc->v[id].last < fc->cur) fc->v[id].last = fc->cur;
  return XRT_OK;
}

static void sim_set_const(sim_fcc *fc, int32_t id, void *p) {
  fc->v[id].kind = SIM_V_CONST;
  fc->v[id].cptr = p;
}

/* Extends values defined since defs index from, and kept ones, to end. */
static void sim_extend(sim_fcc *fc, int32_t from, int32_t end) {
  const int32_t *d = (const int32_t *)fc->defs.p;
  const int32_t *k = (const int32_t *)fc->nested.p;
  for (int32_t i = from; i < fc->defs.n; i++)
    if (fc->v[d[i]].last < end) fc->v[d[i]].last = end;
  for (int32_t i = 0; i < fc->nested.n; i++)
    if (fc->v[k[i]].last < end) fc->v[k[i]].last = end;
  fc->nested.n = 0;
}

/* A free list of arena ranges sorted by offset.  A value takes the best
 * fitting range (the rest of it stays free); a value that fits nowhere
 * grows the free range that ends at the top, if any; a freed range merges
 * with its neighbours.  So values of mixed sizes reuse memory the way one
 * size does, and the arena stays close to the largest live set. */
typedef struct sim_slots {
  size_t *off, *cap;
  int32_t n;
  size_t top;
} sim_slots;

static void sim_slot_drop(sim_slots *s, int32_t i) {
  memmove(&s->off[i], &s->off[i + 1], sizeof *s->off * (size_t)(s->n - i - 1));
  memmove(&s->cap[i], &s->cap[i + 1], sizeof *s->cap * (size_t)(s->n - i - 1));
  s->n--;
}

/* Places v below limit bytes; 0 if it does not fit. */
static int sim_slot_alloc(sim_slots *s, sim_vinfo *v, size_t limit) {
  size_t need = sim_align_up(v->bytes);
  int32_t best = -1;
  for (int32_t i = 0; i < s->n; i++)
    if (s->cap[i] >= need && (best < 0 || s->cap[i] < s->cap[best]))
      best = i;
  v->cap = need;
  if (best >= 0) {
    v->off = s->off[best];
    s->off[best] += need;
    if ((s->cap[best] -= need) == 0) sim_slot_drop(s, best);
    return 1;
  }
  int grow = s->n > 0 && s->off[s->n - 1] + s->cap[s->n - 1] == s->top;
  size_t off = grow ? s->off[s->n - 1] : s->top;
  if (need > limit || off > limit - need) return 0;
  s->n -= grow;
  v->off = off;
  s->top = off + need;
  return 1;
}

static void sim_slot_free(sim_slots *s, const sim_vinfo *v) {
  int32_t i = 0;
  while (i < s->n && s->off[i] < v->off) i++;
  if (i > 0 && s->off[i - 1] + s->cap[i - 1] == v->off) {
    s->cap[i - 1] += v->cap;
    if (i < s->n && s->off[i - 1] + s->cap[i - 1] == s->off[i]) {
      s->cap[i - 1] += s->cap[i];
      sim_slot_drop(s, i);
    }
    return;
  }
  if (i < s->n && v->off + v->cap == s->off[i]) {
    s->off[i] = v->off;
    s->cap[i] += v->cap;
    return;
  }
  memmove(&s->off[i + 1], &s->off[i], sizeof *s->off * (size_t)(s->n - i));
  memmove(&s->cap[i + 1], &s->cap[i], sizeof *s->cap * (size_t)(s->n - i));
  s->off[i] = v->off;
  s->cap[i] = v->cap;
  s->n++;
}

/* The entry's results that an op writes lend their output buffers to
 * values that die before that op: the buffers exist anyway, and the arena
 * shrinks by what fits there (a chain's intermediates, typically), so the
 * peak is the largest live set rather than it plus the results. */
#define SIM_OUT_REGIONS 4
#define SIM_OUT_MIN ((size_t)64 << 10)

typedef struct sim_outs {
  int32_t n;
  int32_t id[SIM_OUT_REGIONS];    /* the result value */
  int32_t until[SIM_OUT_REGIONS]; /* the op that writes it */
  size_t size[SIM_OUT_REGIONS];
  sim_slots s[SIM_OUT_REGIONS];
} sim_outs;

static void sim_outs_init(const sim_fcc *fc, sim_outs *o, size_t *sb) {
  o->n = 0;
  for (int32_t i = 0; i < fc->nv && o->n < SIM_OUT_REGIONS; i++) {
    const sim_vinfo *v = &fc->v[i];
    if (v->kind != SIM_V_OUT || v->bytes < SIM_OUT_MIN) continue;
    o->id[o->n] = i;
    o->until[o->n] = v->def;
    o->size[o->n] = v->bytes & ~(size_t)(SIM_ALIGN - 1);
    o->s[o->n] = (sim_slots){sb, sb + fc->nv, 0, 0};
    sb += 2 * (size_t)fc->nv;
    o->n++;
  }
}

static void sim_place(sim_slots *arena, sim_outs *o, sim_vinfo *v) {
  v->in_out = 0;
  for (int32_t r = 0; r < o->n; r++)
    if (v->last < o->until[r] && sim_slot_alloc(&o->s[r], v, o->size[r])) {
      v->in_out = o->id[r] + 1;
      return;
    }
  sim_slot_alloc(arena, v, SIZE_MAX);
}

static void sim_unplace(sim_slots *arena, sim_outs *o, const sim_vinfo *v) {
  for (int32_t r = 0; r < o->n; r++)
    if (v->in_out == o->id[r] + 1) {
      sim_slot_free(&o->s[r], v);
      return;
    }
  sim_slot_free(arena, v);
}

static int sim_has_slot(const sim_vinfo *v) {
  return v->kind == SIM_V_SLOT && v->bytes > 0;
}

/* Sorts the slot values by def and by last use (counting sort). */
static void sim_sort_by(const sim_fcc *fc, int by_last, int32_t *cnt,
                        int32_t *out) {
  int32_t P = fc->pos;
  memset(cnt, 0, sizeof *cnt * (size_t)(P + 1));
  for (int32_t i = 0; i < fc->nv; i++)
    if (sim_has_slot(&fc->v[i]))
      cnt[(by_last ? fc->v[i].last : fc->v[i].def) + 1]++;
  for (int32_t p = 0; p < P; p++) cnt[p + 1] += cnt[p];
  for (int32_t i = 0; i < fc->nv; i++)
    if (sim_has_slot(&fc->v[i]))
      out[cnt[by_last ? fc->v[i].last : fc->v[i].def]++] = i;
}

/* Sweeps op positions: a value takes a slot at its definition and gives
 * it back after its last use (after the results of that op are placed, so
 * an op never writes over its own operands). */
static xrt_status sim_assign_slots(sim_fcc *fc, size_t *arena_size) {
  const xrt_allocator *al = &fc->cc->al;
  int32_t P = fc->pos, nv = fc->nv;
  size_t words = (size_t)(P + 1) + 2 * (size_t)nv;
  int32_t *buf = (int32_t *)al->alloc(al->self, sizeof(int32_t) * words + 1);
  size_t *sb = (size_t *)al->alloc(
      al->self, sizeof(size_t) * 2 * (size_t)nv * (1 + SIM_OUT_REGIONS) + 1);
  if (!buf || !sb) {
    al->free(al->self, buf);
    al->free(al->self, sb);
    return sim_oom(fc);
  }
  int32_t *cnt = buf, *byd = buf + P + 1, *byl = byd + nv;
  sim_sort_by(fc, 0, cnt, byd);
  sim_sort_by(fc, 1, cnt, byl);
  sim_slots s = {sb, sb + nv, 0, 0};
  sim_outs o;
  sim_outs_init(fc, &o, sb + 2 * (size_t)nv);
  int32_t di = 0, li = 0, total = 0;
  for (int32_t i = 0; i < nv; i++) total += sim_has_slot(&fc->v[i]);
  for (int32_t p = 0; p < P; p++) {
    while (di < total && fc->v[byd[di]].def == p)
      sim_place(&s, &o, &fc->v[byd[di++]]);
    while (li < total && fc->v[byl[li]].last == p)
      sim_unplace(&s, &o, &fc->v[byl[li++]]);
  }
  assert(di == total && li == total);
  *arena_size = s.top;
  al->free(al->self, buf);
  al->free(al->self, sb);
  return XRT_OK;
}

/* ======================================================================
 * Lowering ops to steps
 * ==================================================================== */

static xrt_status sim_lower_block(sim_fcc *fc, const xrt_ir_region *r,
                                  sim_plan *plan, const xrt_ir_op **term);
static xrt_status sim_plan_func(sim_cc *cc, int32_t fidx, int is_entry);

/* Nested region: arguments are bound at run time by the owning step. */
static xrt_status sim_lower_region(sim_fcc *fc, const xrt_ir_region *r,
                                   sim_plan *plan, const int32_t **rets,
                                   int32_t nrets, const xrt_ir_op *owner) {
  fc->depth++;
  for (int32_t i = 0; i < r->num_args; i++)
    fc->v[r->args[i]].kind = SIM_V_BOUND;
  const xrt_ir_op *term = NULL;
  xrt_status rc = sim_lower_block(fc, r, plan, &term);
  fc->depth--;
  if (rc) return rc;
  if (term->num_operands != nrets)
    return sim_fail_op(fc->cc->err, owner, XRT_INVALID_ARGUMENT, "a region of "
                       "%s returns %d value(s), expected %d", owner->name,
                       (int)term->num_operands, (int)nrets);
  *rets = term->operands;
  return XRT_OK;
}

static xrt_status sim_lower_constant(sim_fcc *fc, const xrt_ir_op *op,
                                     sim_step *st) {
  const xrt_ir_attr *a = sim_attr(op, "value", XRT_ATTR_DENSE);
  const xrt_shape *s = sim_shape(fc, op->results[0]);
  size_t es = sim_esize(s->dtype), bytes = sim_bytes(s);
  (void)st;
  if (!a || !a->lit || !es)
    return sim_fail_op(fc->cc->err, op, XRT_INVALID_ARGUMENT,
                       "stablehlo.constant needs a dense 'value'");
  const xrt_ir_literal *lit = a->lit;
  if (lit->splat ? lit->bytes < es : lit->bytes != bytes)
    return sim_fail_op(fc->cc->err, op, XRT_INVALID_ARGUMENT, "constant data "
                       "has %zu bytes for a %zu-byte value", lit->bytes, bytes);
  char *p = (char *)sim_palloc_raw(fc, bytes); /* every byte written below */
  if (!p) return XRT_RESOURCE_EXHAUSTED;
  if (lit->splat) sim_fill_for(es)(p, (const char *)lit->data, sim_numel(s));
  else if (bytes) memcpy(p, lit->data, bytes);
  sim_set_const(fc, op->results[0], p);
  return XRT_OK;
}

/* iota is data known at compile time: materialized like a constant. */
static xrt_status sim_lower_iota(sim_fcc *fc, const xrt_ir_op *op,
                                 sim_step *st) {
  const xrt_shape *s = sim_shape(fc, op->results[0]);
  int64_t dim = 0, str[XRT_MAX_RANK];
  xrt_status rc = sim_int_attr(fc, op, "iota_dimension", &dim);
  (void)st;
  if (rc) return rc;
  if (dim < 0 || dim >= s->rank)
    return sim_fail_op(fc->cc->err, op, XRT_INVALID_ARGUMENT,
                       "iota_dimension %lld is out of range", (long long)dim);
  if (!sim_num_supported(s->dtype))
    return sim_unsupported_type(fc, op, s->dtype);
  size_t es = sim_esize(s->dtype);
  char *p = (char *)sim_palloc(fc, sim_bytes(s));
  if (!p) return XRT_RESOURCE_EXHAUSTED;
  sim_strides(s, str);
  for (int64_t i = 0, n = sim_numel(s); i < n; i++) {
    int64_t k = (i / str[dim]) % s->dims[dim];
    sim_num v = {(double)k, 0, k, 1};
    sim_store(s->dtype, p + (size_t)i * es, &v);
  }
  sim_set_const(fc, op->results[0], p);
  return XRT_OK;
}

static xrt_status sim_lower_get_dimension_size(sim_fcc *fc,
                                               const xrt_ir_op *op,
                                               sim_step *st) {
  const xrt_shape *in = sim_shape(fc, op->operands[0]);
  const xrt_shape *s = sim_shape(fc, op->results[0]);
  int64_t dim = 0;
  xrt_status rc = sim_int_attr(fc, op, "dimension", &dim);
  (void)st;
  if (rc) return rc;
  if (dim < 0 || dim >= in->rank || s->rank != 0 ||
      !sim_num_supported(s->dtype))
    return sim_fail_op(fc->cc->err, op, XRT_INVALID_ARGUMENT,
                       "bad get_dimension_size");
  char *p = (char *)sim_palloc(fc, sim_esize(s->dtype));
  if (!p) return XRT_RESOURCE_EXHAUSTED;
  sim_num v = {(double)in->dims[dim], 0, in->dims[dim], 1};
  sim_store(s->dtype, p, &v);
  sim_set_const(fc, op->results[0], p);
  return XRT_OK;
}

/* A strided copy into the (row-major) result: result element idx reads
 * operand element sbase + sum idx_k * ss_k. */
static xrt_status sim_lower_gather_view(sim_fcc *fc, const xrt_ir_op *op,
                                        sim_step *st, const int64_t *ss,
                                        int64_t sbase) {
  const xrt_shape *o = sim_shape(fc, op->results[0]);
  int64_t ds[XRT_MAX_RANK];
  sim_xcopy *x = (sim_xcopy *)sim_palloc(fc, sizeof *x);
  if (!x) return XRT_RESOURCE_EXHAUSTED;
  sim_strides(o, ds);
  sim_xcopy_init(x, sim_esize(o->dtype), o->rank, o->dims, ss, ds, sbase, 0);
  st->data = x;
  st->run = sim_run_xcopy;
  return XRT_OK;
}

static xrt_status sim_lower_broadcast_in_dim(sim_fcc *fc, const xrt_ir_op *op,
                                             sim_step *st) {
  const xrt_shape *in = sim_shape(fc, op->operands[0]);
  const xrt_shape *o = sim_shape(fc, op->results[0]);
  const int64_t *bd;
  int64_t n, ist[XRT_MAX_RANK], ss[XRT_MAX_RANK] = {0};
  xrt_status rc = sim_ints(fc, op, "broadcast_dimensions", 1, &bd, &n);
  if (rc) return rc;
  if (n != in->rank)
    return sim_fail_op(fc->cc->err, op, XRT_INVALID_ARGUMENT,
                       "bad broadcast_dimensions");
  sim_strides(in, ist);
  for (int64_t i = 0; i < n; i++) {
    if (bd[i] < 0 || bd[i] >= o->rank)
      return sim_fail_op(fc->cc->err, op, XRT_INVALID_ARGUMENT,
                         "bad broadcast_dimensions");
    if (in->dims[i] != 1) ss[bd[i]] = ist[i];
  }
  return sim_lower_gather_view(fc, op, st, ss, 0);
}

/* The older stablehlo.broadcast: new leading dimensions. */
static xrt_status sim_lower_broadcast(sim_fcc *fc, const xrt_ir_op *op,
                                      sim_step *st) {
  const xrt_shape *in = sim_shape(fc, op->operands[0]);
  const xrt_shape *o = sim_shape(fc, op->results[0]);
  int64_t ist[XRT_MAX_RANK], ss[XRT_MAX_RANK] = {0};
  int32_t lead = o->rank - in->rank;
  if (lead < 0)
    return sim_fail_op(fc->cc->err, op, XRT_INVALID_ARGUMENT,
                       "bad broadcast");
  sim_strides(in, ist);
  for (int32_t i = 0; i < in->rank; i++)
    ss[lead + i] = in->dims[i] == 1 ? 0 : ist[i];
  return sim_lower_gather_view(fc, op, st, ss, 0);
}

static xrt_status sim_lower_transpose(sim_fcc *fc, const xrt_ir_op *op,
                                      sim_step *st) {
  const xrt_shape *in = sim_shape(fc, op->operands[0]);
  const int64_t *perm;
  int64_t n, ist[XRT_MAX_RANK], ss[XRT_MAX_RANK];
  xrt_status rc = sim_ints(fc, op, "permutation", 1, &perm, &n);
  if (rc) return rc;
  if (n != in->rank || sim_shape(fc, op->results[0])->rank != in->rank)
    return sim_fail_op(fc->cc->err, op, XRT_INVALID_ARGUMENT,
                       "bad permutation");
  sim_strides(in, ist);
  for (int64_t k = 0; k < n; k++) {
    if (perm[k] < 0 || perm[k] >= in->rank)
      return sim_fail_op(fc->cc->err, op, XRT_INVALID_ARGUMENT,
                         "bad permutation");
    ss[k] = ist[perm[k]];
  }
  return sim_lower_gather_view(fc, op, st, ss, 0);
}

static xrt_status sim_lower_slice(sim_fcc *fc, const xrt_ir_op *op,
                                  sim_step *st) {
  const xrt_shape *in = sim_shape(fc, op->operands[0]);
  const int64_t *start, *limit, *step;
  int64_t n1, n2, n3, ist[XRT_MAX_RANK], ss[XRT_MAX_RANK], base = 0;
  xrt_status rc = sim_ints(fc, op, "start_indices", 1, &start, &n1);
  if (rc || (rc = sim_ints(fc, op, "limit_indices", 1, &limit, &n2)) ||
      (rc = sim_ints(fc, op, "strides", 0, &step, &n3)))
    return rc;
  if (n1 != in->rank || (step && n3 != in->rank))
    return sim_fail_op(fc->cc->err, op, XRT_INVALID_ARGUMENT, "bad slice");
  sim_strides(in, ist);
  for (int32_t k = 0; k < in->rank; k++) {
    base += start[k] * ist[k];
    ss[k] = ist[k] * (step ? step[k] : 1);
  }
  return sim_lower_gather_view(fc, op, st, ss, base);
}

static xrt_status sim_lower_reverse(sim_fcc *fc, const xrt_ir_op *op,
                                    sim_step *st) {
  const xrt_shape *in = sim_shape(fc, op->operands[0]);
  const int64_t *dims;
  int64_t n, ss[XRT_MAX_RANK], base = 0;
  xrt_status rc = sim_ints(fc, op, "dimensions", 1, &dims, &n);
  if (rc) return rc;
  sim_strides(in, ss);
  for (int64_t i = 0; i < n; i++) {
    int64_t d = dims[i];
    if (d < 0 || d >= in->rank)
      return sim_fail_op(fc->cc->err, op, XRT_INVALID_ARGUMENT,
                         "bad reverse dimensions");
    if (ss[d] < 0) continue; /* listed twice */
    if (in->dims[d] > 0) base += (in->dims[d] - 1) * ss[d];
    ss[d] = -ss[d];
  }
  return sim_lower_gather_view(fc, op, st, ss, base);
}

static xrt_status sim_lower_reshape(sim_fcc *fc, const xrt_ir_op *op,
                                    sim_step *st) {
  size_t in = sim_bytes(sim_shape(fc, op->operands[0]));
  if (in != sim_bytes(sim_shape(fc, op->results[0])))
    return sim_fail_op(fc->cc->err, op, XRT_INVALID_ARGUMENT,
                       "reshape changes the number of elements");
  st->run = sim_run_copy;
  st->n = (int64_t)in;
  return XRT_OK;
}

static xrt_status sim_lower_barrier(sim_fcc *fc, const xrt_ir_op *op,
                                    sim_step *st) {
  if (op->num_operands != op->num_results)
    return sim_fail_op(fc->cc->err, op, XRT_INVALID_ARGUMENT,
                       "bad optimization_barrier");
  size_t *b = (size_t *)sim_palloc(fc, sizeof *b * (size_t)(op->num_results + 1));
  if (!b) return XRT_RESOURCE_EXHAUSTED;
  for (int32_t i = 0; i < op->num_results; i++)
    b[i] = sim_vbytes(fc, op->results[i]);
  st->data = b;
  st->run = sim_run_copy_all;
  return XRT_OK;
}

/* Which operand indices j of one dimension land inside the result:
 * position lo + j*step for j in [*j0, *j0 + *cnt). */
static void sim_pad_range(int64_t in, int64_t out, int64_t lo, int64_t step,
                          int64_t *j0, int64_t *cnt) {
  int64_t first = lo >= 0 ? 0 : (-lo + step - 1) / step;
  int64_t end = out - 1 - lo < 0 ? 0 : (out - 1 - lo) / step + 1;
  if (end > in) end = in;
  *j0 = first;
  *cnt = end > first ? end - first : 0;
}

static xrt_status sim_lower_pad(sim_fcc *fc, const xrt_ir_op *op,
                                sim_step *st) {
  const xrt_shape *in = sim_shape(fc, op->operands[0]);
  const xrt_shape *o = sim_shape(fc, op->results[0]);
  const int64_t *lo, *hi, *inter;
  int64_t n1, n2, n3, ist[XRT_MAX_RANK], ost[XRT_MAX_RANK];
  int64_t dims[XRT_MAX_RANK], ss[XRT_MAX_RANK], ds[XRT_MAX_RANK];
  int64_t sbase = 0, dbase = 0;
  xrt_status rc = sim_ints(fc, op, "edge_padding_low", 1, &lo, &n1);
  if (rc || (rc = sim_ints(fc, op, "edge_padding_high", 1, &hi, &n2)) ||
      (rc = sim_ints(fc, op, "interior_padding", 0, &inter, &n3)))
    return rc;
  if (n1 != in->rank || o->rank != in->rank || (inter && n3 != in->rank))
    return sim_fail_op(fc->cc->err, op, XRT_INVALID_ARGUMENT, "bad pad");
  sim_pad *p = (sim_pad *)sim_palloc(fc, sizeof *p);
  if (!p) return XRT_RESOURCE_EXHAUSTED;
  sim_strides(in, ist);
  sim_strides(o, ost);
  for (int32_t k = 0; k < in->rank; k++) {
    int64_t step = (inter ? inter[k] : 0) + 1, j0;
    sim_pad_range(in->dims[k], o->dims[k], lo[k], step, &j0, &dims[k]);
    sbase += j0 * ist[k];
    dbase += (lo[k] + j0 * step) * ost[k];
    ss[k] = ist[k];
    ds[k] = step * ost[k];
    if (dims[k] == 0) sbase = dbase = 0; /* nothing copied; keep in range */
  }
  size_t es = sim_esize(o->dtype);
  sim_xcopy_init(&p->x, es, in->rank, dims, ss, ds, sbase, dbase);
  p->fill = sim_fill_for(es);
  p->n = sim_numel(o);
  st->data = p;
  st->run = sim_run_pad;
  return XRT_OK;
}

static xrt_status sim_lower_concatenate(sim_fcc *fc, const xrt_ir_op *op,
                                        sim_step *st) {
  const xrt_shape *o = sim_shape(fc, op->results[0]);
  int64_t axis = 0;
  xrt_status rc = sim_int_attr(fc, op, "dimension", &axis);
  if (rc) return rc;
  if (axis < 0 || axis >= o->rank)
    return sim_fail_op(fc->cc->err, op, XRT_INVALID_ARGUMENT,
                       "bad concatenate dimension");
  sim_cat *c = (sim_cat *)sim_palloc(fc, sizeof *c);
  size_t *chunk = (size_t *)sim_palloc(
      fc, sizeof *chunk * (size_t)(op->num_operands + 1));
  if (!c || !chunk) return XRT_RESOURCE_EXHAUSTED;
  int64_t inner = 1;
  c->outer = 1;
  for (int32_t k = 0; k < axis; k++) c->outer *= o->dims[k];
  for (int32_t k = (int32_t)axis + 1; k < o->rank; k++) inner *= o->dims[k];
  for (int32_t i = 0; i < op->num_operands; i++)
    chunk[i] = (size_t)(sim_shape(fc, op->operands[i])->dims[axis] * inner) *
               sim_esize(o->dtype);
  c->chunk = chunk;
  st->data = c;
  st->run = sim_run_concat;
  return XRT_OK;
}

static xrt_status sim_lower_select(sim_fcc *fc, const xrt_ir_op *op,
                                   sim_step *st) {
  const xrt_shape *p = sim_shape(fc, op->operands[0]);
  const xrt_shape *o = sim_shape(fc, op->results[0]);
  if (p->rank == 0) {
    st->run = sim_run_select_scalar;
    st->n = (int64_t)sim_bytes(o);
    return XRT_OK;
  }
  static const sim_run_fn by_size[17] = {
      [1] = sim_run_select_1, [2] = sim_run_select_2, [4] = sim_run_select_4,
      [8] = sim_run_select_8, [16] = sim_run_select_16};
  st->run = by_size[sim_esize(o->dtype)];
  st->n = sim_numel(o);
  return st->run ? XRT_OK : sim_unsupported_type(fc, op, o->dtype);
}

static xrt_status sim_lower_clamp(sim_fcc *fc, const xrt_ir_op *op,
                                  sim_step *st) {
  const xrt_shape *o = sim_shape(fc, op->results[0]);
  sim_clamp_fn fn = sim_clamp_for(o->dtype);
  if (!fn || fc->f->value_types[op->results[0]].quant)
    return sim_unsupported_type(fc, op, o->dtype);
  sim_clamp *c = (sim_clamp *)sim_palloc(fc, sizeof *c);
  if (!c) return XRT_RESOURCE_EXHAUSTED;
  c->fn = fn;
  c->ls = sim_shape(fc, op->operands[0])->rank == 0 && o->rank != 0 ? 0 : 1;
  c->hs = sim_shape(fc, op->operands[2])->rank == 0 && o->rank != 0 ? 0 : 1;
  st->data = c;
  st->run = sim_run_clamp;
  st->n = sim_numel(o);
  return XRT_OK;
}

static sim_ew_fn sim_fz_isa_kernel(sim_ew_fn fn); /* see "Fusion" */

static xrt_status sim_lower_ew(sim_fcc *fc, const xrt_ir_op *op,
                               sim_step *st) {
  char why[512];
  const void *ctx = NULL;
  int owned = 0;
  why[0] = 0;
  if (op->num_results != 1 || op->num_operands > SIM_MAX_EW_IN)
    return sim_fail_op(fc->cc->err, op, XRT_UNIMPLEMENTED, "%s with %d "
                       "operands and %d results is not supported by the "
                       "simulator", op->name, (int)op->num_operands,
                       (int)op->num_results);
  const xrt_allocator *al = &fc->cc->al;
  sim_ew_fn fn = sim_ew_kernel(al, fc->f, op, &ctx, &owned, why, sizeof why);
  if (!fn && owned < 0) return sim_oom(fc);
  if (!fn)
    return sim_fail_op(fc->cc->err, op, XRT_UNIMPLEMENTED, "%s",
                       why[0] ? why : "elementwise op not supported");
  if (owned && ctx) {
    void **slot = (void **)sim_vec_push(al, &fc->cc->exe->owned_ctx);
    if (!slot) {
      al->free(al->self, (void *)(uintptr_t)ctx);
      return sim_oom(fc);
    }
    *slot = (void *)(uintptr_t)ctx;
  }
  st->run = sim_run_ew;
  st->ew = sim_fz_isa_kernel(fn); /* f32/f64: AVX2/AVX-512 if the CPU has */
  st->ew_ctx = ctx;
  st->n = sim_numel(sim_shape(fc, op->results[0]));
  return XRT_OK;
}

/* The binary op of a region that is one binary op of its two arguments
 * (either order) and returns its result, else NULL. */
static const xrt_ir_op *sim_region_binop(const xrt_ir_region *r) {
  if (r->num_args != 2 || r->num_ops != 2) return NULL;
  const xrt_ir_op *b = &r->ops[0], *t = &r->ops[1];
  if (b->num_operands != 2 || b->num_results != 1 || b->num_regions ||
      t->num_operands != 1 || t->operands[0] != b->results[0])
    return NULL;
  int32_t a0 = r->args[0], a1 = r->args[1];
  if (!((b->operands[0] == a0 && b->operands[1] == a1) ||
        (b->operands[0] == a1 && b->operands[1] == a0)))
    return NULL;
  return b;
}

/* The typed loop when the body is one add/mul/max/min/and/or of its two
 * arguments (either order) on the input's own type, else NULL. */
static sim_red_fn sim_reduce_fast_body(const sim_fcc *fc, const xrt_ir_op *op) {
  if (op->num_operands != 2) return NULL;
  const xrt_ir_op *b = sim_region_binop(&op->regions[0]);
  if (!b) return NULL;
  const xrt_ir_type *in = &fc->f->value_types[op->operands[0]];
  const xrt_ir_type *res = &fc->f->value_types[op->results[0]];
  const xrt_ir_type *bt = &fc->f->value_types[b->results[0]];
  if (in->quant || res->quant || bt->quant ||
      in->shape.dtype != res->shape.dtype || bt->shape.dtype != res->shape.dtype)
    return NULL;
  return sim_red_pick(b->code, res->shape.dtype);
}

/* Drops the unit dimensions of shape sh (strides str) and joins neighbours
 * whose strides make them one run, into dims/ostr; returns the new rank
 * (>= 1: a scalar becomes one dimension of size 1, stride 0). */
static int32_t sim_coalesce_dims(const xrt_shape *sh, const int64_t *str,
                                 int64_t *dims, int64_t *ostr) {
  int32_t n = 0;
  for (int32_t k = 0; k < sh->rank; k++) {
    if (sh->dims[k] == 1) continue;
    if (n > 0 && ostr[n - 1] == str[k] * sh->dims[k]) {
      dims[n - 1] *= sh->dims[k];
      ostr[n - 1] = str[k];
      continue;
    }
    dims[n] = sh->dims[k];
    ostr[n++] = str[k];
  }
  if (n == 0) {
    dims[0] = 1;
    ostr[0] = 0;
    n = 1;
  }
  return n;
}

/* Merges dimensions for the single input pass: drops size-1 dimensions and
 * joins neighbours that are both reduced or both kept. */
static void sim_reduce_dims(sim_reduce *r, const xrt_shape *in,
                            const int64_t *rd, int64_t nrd) {
  int64_t ostr[XRT_MAX_RANK], acc = 1;
  for (int32_t k = in->rank - 1; k >= 0; k--) {
    int reduced = 0;
    for (int64_t j = 0; j < nrd; j++) reduced |= rd[j] == k;
    ostr[k] = reduced ? 0 : acc;
    if (!reduced) acc *= in->dims[k];
  }
  r->rank = sim_coalesce_dims(in, ostr, r->dims, r->ostr);
}

static xrt_status sim_reduce_body(sim_fcc *fc, const xrt_ir_op *op,
                                  sim_reduce *r) {
  int32_t n = r->n;
  if (n > 1) {
    size_t *toff = (size_t *)sim_palloc(fc, sizeof *toff * (size_t)n);
    if (!toff) return XRT_RESOURCE_EXHAUSTED;
    size_t total = 0;
    for (int32_t j = 0; j < n; j++) {
      toff[j] = total;
      total += r->es[j];
    }
    r->toff = toff;
    xrt_status rc = sim_temp(fc, total, &r->tmp);
    if (rc) return rc;
  }
  const xrt_ir_region *reg = &op->regions[0];
  if (reg->num_args != 2 * n)
    return sim_fail_op(fc->cc->err, op, XRT_INVALID_ARGUMENT,
                       "reduce body must take %d arguments", 2 * (int)n);
  r->bargs = reg->args;
  return sim_lower_region(fc, reg, &r->body, &r->brets, n, op);
}

static xrt_status sim_lower_reduce(sim_fcc *fc, const xrt_ir_op *op,
                                   sim_step *st) {
  int32_t n = op->num_results;
  const int64_t *rd;
  int64_t nrd;
  xrt_status rc = sim_ints(fc, op, "dimensions", 1, &rd, &nrd);
  if (rc) return rc;
  if (n < 1 || op->num_operands != 2 * n || op->num_regions != 1)
    return sim_fail_op(fc->cc->err, op, XRT_INVALID_ARGUMENT, "bad reduce");
  sim_reduce *r = (sim_reduce *)sim_palloc(fc, sizeof *r);
  size_t *es = (size_t *)sim_palloc(fc, sizeof *es * (size_t)n);
  sim_fill_fn *fill = (sim_fill_fn *)sim_palloc(fc, sizeof *fill * (size_t)n);
  if (!r || !es || !fill) return XRT_RESOURCE_EXHAUSTED;
  const xrt_shape *in = sim_shape(fc, op->operands[0]);
  for (int32_t j = 0; j < n; j++) {
    const xrt_shape *ij = sim_shape(fc, op->operands[j]);
    const xrt_shape *oj = sim_shape(fc, op->results[j]);
    es[j] = sim_esize(oj->dtype);
    if (sim_esize(ij->dtype) != es[j] || sim_numel(ij) != sim_numel(in))
      return sim_unsupported_type(fc, op, ij->dtype);
    fill[j] = sim_fill_for(es[j]);
  }
  r->n = n;
  r->es = es;
  r->fill = fill;
  r->tmp = -1;
  r->in_numel = sim_numel(in);
  r->out_numel = sim_numel(sim_shape(fc, op->results[0]));
  sim_reduce_dims(r, in, rd, nrd);
  r->fast = sim_reduce_fast_body(fc, op);
  if (!r->fast && (rc = sim_reduce_body(fc, op, r))) return rc;
  st->data = r;
  st->run = sim_run_reduce;
  return XRT_OK;
}

/* Offsets of every index combination (row-major) over the listed
 * dimensions, in two operands at once. */
static void sim_enum_offsets(int64_t nd, const int64_t *sizes,
                             const int64_t *st1, const int64_t *st2,
                             int64_t *o1, int64_t *o2) {
  int64_t idx[2 * XRT_MAX_RANK] = {0}, count = 1, a = 0, b = 0;
  for (int64_t j = 0; j < nd; j++) count *= sizes[j];
  for (int64_t c = 0; c < count; c++) {
    o1[c] = a;
    if (o2) o2[c] = b;
    for (int64_t j = nd - 1; j >= 0; j--) {
      a += st1[j];
      b += st2 ? st2[j] : 0;
      if (++idx[j] < sizes[j]) break;
      a -= st1[j] * sizes[j];
      b -= st2 ? st2[j] * sizes[j] : 0;
      idx[j] = 0;
    }
  }
}

/* The dimensions of x not listed in a or b. */
static int64_t sim_free_dims(const xrt_shape *x, const int64_t *a, int64_t na,
                             const int64_t *b, int64_t nb, int64_t *out) {
  int64_t n = 0;
  for (int32_t d = 0; d < x->rank; d++) {
    int used = 0;
    for (int64_t j = 0; j < na; j++) used |= a[j] == d;
    for (int64_t j = 0; j < nb; j++) used |= b[j] == d;
    if (!used) out[n++] = d;
  }
  return n;
}

/* Offset table over dims of x (sizes and strides of x), count entries. */
static int64_t *sim_dot_table(sim_fcc *fc, const xrt_shape *x,
                              const int64_t *dims, int64_t nd,
                              const xrt_shape *y, const int64_t *ydims,
                              int64_t **ytab, int64_t *count) {
  int64_t xs[XRT_MAX_RANK], ys[XRT_MAX_RANK];
  int64_t sizes[XRT_MAX_RANK], s1[XRT_MAX_RANK], s2[XRT_MAX_RANK], c = 1;
  sim_strides(x, xs);
  if (y) sim_strides(y, ys);
  for (int64_t j = 0; j < nd; j++) {
    sizes[j] = x->dims[dims[j]];
    s1[j] = xs[dims[j]];
    s2[j] = y ? ys[ydims[j]] : 0;
    c *= sizes[j];
  }
  /* Layers of one model repeat their shapes: reuse an equal table. */
  size_t kb = sizeof(int64_t) * (size_t)nd;
  sim_cc *cc = fc->cc;
  for (unsigned i = 0; i < SIM_DOT_MEMO && i < cc->ndmemo; i++) {
    const sim_dot_memo *k = &cc->dmemo[i];
    if (k->nd == nd && k->has_y == (y != NULL) && !memcmp(k->sizes, sizes, kb) &&
        !memcmp(k->s1, s1, kb) && !memcmp(k->s2, s2, kb)) {
      if (ytab) *ytab = k->u;
      *count = k->count;
      return k->t;
    }
  }
  int64_t *t = (int64_t *)sim_palloc(fc, sizeof *t * (size_t)(c ? c : 1));
  int64_t *u = y ? (int64_t *)sim_palloc(fc, sizeof *u * (size_t)(c ? c : 1))
                 : NULL;
  if (!t || (y && !u)) return NULL;
  sim_enum_offsets(nd, sizes, s1, y ? s2 : NULL, t, u);
  sim_dot_memo *k = &cc->dmemo[cc->ndmemo++ % SIM_DOT_MEMO];
  k->nd = nd;
  k->has_y = y != NULL;
  memcpy(k->sizes, sizes, kb);
  memcpy(k->s1, s1, kb);
  memcpy(k->s2, s2, kb);
  k->t = t, k->u = u, k->count = c;
  if (ytab) *ytab = u;
  *count = c;
  return t;
}

typedef struct sim_dot_dims {
  const int64_t *lb, *rb, *lc, *rc;
  int64_t nb, nc;
} sim_dot_dims;

static xrt_status sim_dot_convert_temps(sim_fcc *fc, sim_dot *d) {
  size_t cs = sim_esize(d->ct);
  xrt_status rc = XRT_OK;
  d->ltmp = d->rtmp = d->otmp = -1;
  if (d->lt != d->ct)
    rc = sim_temp(fc, (size_t)d->lnumel * cs, &d->ltmp);
  if (!rc && d->rt != d->ct)
    rc = sim_temp(fc, (size_t)d->rnumel * cs, &d->rtmp);
  if (!rc && d->ot != d->ct)
    rc = sim_temp(fc, (size_t)d->onumel * cs, &d->otmp);
  return rc;
}

static int sim_gemm_lower_dot(sim_fcc *fc, const sim_dot *d, sim_step *st,
                              xrt_status *rc);

static xrt_status sim_lower_dot_dims(sim_fcc *fc, const xrt_ir_op *op,
                                     sim_step *st, const sim_dot_dims *dd) {
  const xrt_shape *L = sim_shape(fc, op->operands[0]);
  const xrt_shape *R = sim_shape(fc, op->operands[1]);
  const xrt_shape *O = sim_shape(fc, op->results[0]);
  const xrt_ir_type *types = fc->f->value_types;
  size_t asz;
  /* Small floats compute in f32 (exact products, one rounding at the end). */
  xrt_dtype ct = sim_is_minifloat(O->dtype) ? XRT_F32 : O->dtype;
  sim_dot_fn fn = sim_dot_for(ct, &asz);
  if (!fn || types[op->operands[0]].quant || types[op->operands[1]].quant ||
      types[op->results[0]].quant)
    return sim_unsupported_type(fc, op, O->dtype);
  if (!sim_num_supported(L->dtype) || !sim_num_supported(R->dtype))
    return sim_unsupported_type(fc, op, L->dtype);
  sim_dot *d = (sim_dot *)sim_palloc(fc, sizeof *d);
  if (!d) return XRT_RESOURCE_EXHAUSTED;
  int64_t lf[XRT_MAX_RANK], rf[XRT_MAX_RANK], nlf, nrf, c2;
  nlf = sim_free_dims(L, dd->lb, dd->nb, dd->lc, dd->nc, lf);
  nrf = sim_free_dims(R, dd->rb, dd->nb, dd->rc, dd->nc, rf);
  int64_t *rb = NULL, *rk = NULL;
  d->lb = sim_dot_table(fc, L, dd->lb, dd->nb, R, dd->rb, &rb, &d->B);
  d->lk = sim_dot_table(fc, L, dd->lc, dd->nc, R, dd->rc, &rk, &d->K);
  d->lm = sim_dot_table(fc, L, lf, nlf, NULL, NULL, NULL, &d->M);
  d->rn = sim_dot_table(fc, R, rf, nrf, NULL, NULL, NULL, &d->N);
  if (!d->lb || !d->lk || !d->lm || !d->rn) return XRT_RESOURCE_EXHAUSTED;
  d->rb = rb;
  d->rk = rk;
  c2 = d->B * d->M * d->N;
  if (c2 != sim_numel(O))
    return sim_fail_op(fc->cc->err, op, XRT_INVALID_ARGUMENT,
                       "dot result shape does not fit its operands");
  d->fn = fn;
  d->unit_n = 1;
  for (int64_t n = 0; n < d->N; n++) d->unit_n &= d->rn[n] == n;
  d->lt = L->dtype, d->rt = R->dtype, d->ot = O->dtype, d->ct = ct;
  d->lnumel = sim_numel(L), d->rnumel = sim_numel(R), d->onumel = c2;
  d->wrap = O->dtype == XRT_S2 || O->dtype == XRT_S4 || O->dtype == XRT_U2 ||
                    O->dtype == XRT_U4
                ? O->dtype
                : XRT_DTYPE_INVALID;
  xrt_status grc; /* large f32/f64 products: packed GEMM (sim_gemm.inc) */
  if (sim_gemm_lower_dot(fc, d, st, &grc)) return grc;
  d->acc = -1;
  xrt_status rc = sim_dot_convert_temps(fc, d);
  if (!rc && d->unit_n) rc = sim_temp(fc, (size_t)d->N * asz, &d->acc);
  st->data = d;
  st->run = sim_run_dot;
  return rc;
}

static const int64_t *sim_dot_field(const xrt_ir_attr *dn, const char *name,
                                    int64_t *n) {
  const xrt_ir_attr *a = sim_field(dn, name);
  *n = a && a->kind == XRT_ATTR_INTS ? a->n : 0;
  return *n ? a->ints : NULL;
}

static xrt_status sim_lower_dot_general(sim_fcc *fc, const xrt_ir_op *op,
                                        sim_step *st) {
  const xrt_ir_attr *dn =
      sim_named(op->attrs, op->num_attrs, "dot_dimension_numbers");
  sim_dot_dims dd;
  int64_t n1, n2, n3, n4;
  dd.lb = sim_dot_field(dn, "lhs_batching_dimensions", &n1);
  dd.rb = sim_dot_field(dn, "rhs_batching_dimensions", &n2);
  dd.lc = sim_dot_field(dn, "lhs_contracting_dimensions", &n3);
  dd.rc = sim_dot_field(dn, "rhs_contracting_dimensions", &n4);
  if (n1 != n2 || n3 != n4 || n1 > XRT_MAX_RANK || n3 > XRT_MAX_RANK)
    return sim_fail_op(fc->cc->err, op, XRT_INVALID_ARGUMENT,
                       "bad dot_dimension_numbers");
  dd.nb = n1;
  dd.nc = n3;
  return sim_lower_dot_dims(fc, op, st, &dd);
}

/* stablehlo.dot: contracts the last lhs dimension with the first rhs one. */
static xrt_status sim_lower_dot(sim_fcc *fc, const xrt_ir_op *op,
                                sim_step *st) {
  static const int64_t zero = 0, one = 1;
  const xrt_shape *L = sim_shape(fc, op->operands[0]);
  if (L->rank < 1 || L->rank > 2 || sim_shape(fc, op->operands[1])->rank < 1)
    return sim_fail_op(fc->cc->err, op, XRT_INVALID_ARGUMENT, "bad dot");
  sim_dot_dims dd = {NULL, NULL, L->rank == 1 ? &zero : &one, &zero, 0, 1};
  return sim_lower_dot_dims(fc, op, st, &dd);
}

static xrt_status sim_while_buffers(sim_fcc *fc, const xrt_ir_op *op,
                                    sim_while *w) {
  int32_t n = op->num_operands;
  int32_t *a = (int32_t *)sim_palloc(fc, sizeof *a * (size_t)(n + 1));
  int32_t *b = (int32_t *)sim_palloc(fc, sizeof *b * (size_t)(n + 1));
  size_t *bytes = (size_t *)sim_palloc(fc, sizeof *bytes * (size_t)(n + 1));
  if (!a || !b || !bytes) return XRT_RESOURCE_EXHAUSTED;
  for (int32_t i = 0; i < n; i++) {
    bytes[i] = sim_vbytes(fc, op->operands[i]);
    xrt_status rc = sim_temp(fc, bytes[i], &a[i]);
    if (rc || (rc = sim_temp(fc, bytes[i], &b[i]))) return rc;
  }
  w->n = n;
  w->bufa = a;
  w->bufb = b;
  w->bytes = bytes;
  return XRT_OK;
}

static xrt_status sim_lower_while(sim_fcc *fc, const xrt_ir_op *op,
                                  sim_step *st) {
  if (op->num_regions != 2 || op->num_results != op->num_operands ||
      op->regions[0].num_args != op->num_operands ||
      op->regions[1].num_args != op->num_operands)
    return sim_fail_op(fc->cc->err, op, XRT_INVALID_ARGUMENT, "bad while");
  sim_while *w = (sim_while *)sim_palloc(fc, sizeof *w);
  if (!w) return XRT_RESOURCE_EXHAUSTED;
  const int32_t *cret;
  xrt_status rc = sim_while_buffers(fc, op, w);
  if (rc ||
      (rc = sim_lower_region(fc, &op->regions[0], &w->cond, &cret, 1, op)) ||
      (rc = sim_lower_region(fc, &op->regions[1], &w->body, &w->brets,
                             op->num_operands, op)))
    return rc;
  const xrt_shape *cs = sim_shape(fc, cret[0]);
  if (cs->dtype != XRT_PRED || cs->rank != 0)
    return sim_fail_op(fc->cc->err, op, XRT_INVALID_ARGUMENT,
                       "while cond must return tensor<i1>");
  w->cret = cret[0];
  w->cargs = op->regions[0].args;
  w->bargs = op->regions[1].args;
  st->data = w;
  st->run = sim_run_while;
  return XRT_OK;
}

/* A call of module function fidx (func.call, composite). */
static xrt_status sim_lower_call_to(sim_fcc *fc, const xrt_ir_op *op,
                                    sim_step *st, int32_t fidx) {
  const xrt_ir_module *m = fc->cc->m;
  if (fidx < 0 || fidx >= m->num_funcs)
    return sim_fail_op(fc->cc->err, op, XRT_INVALID_ARGUMENT,
                       "%s of an unknown function", op->name);
  const xrt_ir_func *g = &m->funcs[fidx];
  sim_fplan *fp = &fc->cc->exe->fp[fidx];
  if (fp->state == 1)
    return sim_fail_op(fc->cc->err, op, XRT_UNIMPLEMENTED, "recursive call of "
                       "@%s is not supported by the simulator", g->name);
  if (op->num_operands != g->body.num_args || op->num_results != g->num_results)
    return sim_fail_op(fc->cc->err, op, XRT_INVALID_ARGUMENT,
                       "%s does not match @%s", op->name, g->name);
  xrt_status rc = sim_plan_func(fc->cc, fidx, 0);
  if (rc) return rc;
  sim_call *c = (sim_call *)sim_palloc(fc, sizeof *c);
  size_t *b = (size_t *)sim_palloc(fc, sizeof *b * (size_t)(op->num_results + 1));
  if (!c || !b) return XRT_RESOURCE_EXHAUSTED;
  for (int32_t i = 0; i < op->num_results; i++)
    b[i] = sim_vbytes(fc, op->results[i]);
  c->fp = fp;
  c->bytes = b;
  st->data = c;
  st->run = sim_run_call;
  return XRT_OK;
}

static xrt_status sim_lower_call(sim_fcc *fc, const xrt_ir_op *op,
                                 sim_step *st) {
  return sim_lower_call_to(fc, op, st, op->callee);
}

/* A step that calls the host function bound to op->callee with the
 * tensors in[0..nin) and out[0..nout) (custom_call: all operands and
 * results; infeed/outfeed/send/recv: all but the tokens). */
static xrt_status sim_lower_host_call(sim_fcc *fc, const xrt_ir_op *op,
                                      sim_step *st, const char *target,
                                      const int32_t *in, int32_t nin,
                                      const int32_t *out, int32_t nout) {
  const xrt_host_binding *hosts = fc->cc->hosts;
  if (!hosts || op->callee < 0 || op->callee >= fc->cc->m->num_custom_calls ||
      !hosts[op->callee].fn)
    return sim_fail_op(fc->cc->err, op, XRT_NOT_FOUND, "%s target "
                       "'%s' has no host function",
                       op->code == XRT_OP_CUSTOM_CALL ? "custom_call"
                                                      : op->name, target);
  int32_t nt = nin + nout;
  sim_ccall *c = (sim_ccall *)sim_palloc(fc, sizeof *c);
  xrt_host_tensor *tm = (xrt_host_tensor *)sim_palloc(
      fc, sizeof *tm * (size_t)(nt + 1));
  if (!c || !tm) return XRT_RESOURCE_EXHAUSTED;
  for (int32_t i = 0; i < nt; i++) {
    int32_t id = i < nin ? in[i] : out[i - nin];
    if (fc->f->value_types[id].kind == XRT_TYPE_TOKEN) { /* no bytes */
      memset(&tm[i], 0, sizeof tm[i]);
      continue;
    }
    if (fc->f->value_types[id].kind != XRT_TYPE_TENSOR)
      return sim_fail_op(fc->cc->err, op, XRT_UNIMPLEMENTED, "%s: tuple "
                         "values cannot be passed to a host function",
                         op->name);
    tm[i].shape = *sim_shape(fc, id);
    tm[i].bytes = sim_bytes(&tm[i].shape);
  }
  st->in = in, st->nin = nin;
  st->out = out, st->nout = nout;
  c->target = target;
  c->host = hosts[op->callee];
  c->tmpl = tm;
  c->tmp = -1;
  st->data = c;
  st->run = sim_run_custom_call;
  return nt ? sim_temp(fc, sizeof *tm * (size_t)nt, &c->tmp) : XRT_OK;
}

static xrt_status sim_lower_custom_call(sim_fcc *fc, const xrt_ir_op *op,
                                        sim_step *st) {
  const xrt_ir_attr *t = sim_attr(op, "call_target_name", XRT_ATTR_STRING);
  return sim_lower_host_call(fc, op, st, t ? t->s : op->name, op->operands,
                             op->num_operands, op->results, op->num_results);
}

/* ----------------------------------------------------------------------
 * Indexing and windows: gather, scatter, dynamic slices, reduce_window,
 * select_and_scatter, and the dynamic_* ops on static shapes.
 *
 * Data movement goes by element size (sim_xcopy), so every element type
 * works. Index values are read at run time from tensors of any integer
 * type. Regions (scatter's update_computation, reduce_window's body,
 * select_and_scatter's select and scatter) run per element like reduce's
 * body; a region that is one add/mul/max/min/and/or of its two arguments
 * runs as a typed loop instead.
 * -------------------------------------------------------------------- */

#define SIM_IX_MAXN 32 /* operands of a variadic scatter / reduce_window */
#define SIM_IX_BIG ((int64_t)1 << 56) /* |index| beyond any tensor */

/* ---- small helpers ---- */

static int sim_ix_is_int(xrt_dtype t) {
  switch (t) {
  case XRT_S2: case XRT_S4: case XRT_S8: case XRT_S16: case XRT_S32:
  case XRT_S64: case XRT_U2: case XRT_U4: case XRT_U8: case XRT_U16:
  case XRT_U32: case XRT_U64: return 1;
  default: return 0;
  }
}

/* An index read at run time, saturated to +-2^56 so that sums of a few of
 * them never overflow. */
static int64_t sim_ix_load(xrt_dtype t, const void *p) {
  int64_t v;
  if (t == XRT_U64) {
    uint64_t u;
    memcpy(&u, p, sizeof u);
    v = u > (uint64_t)SIM_IX_BIG ? SIM_IX_BIG : (int64_t)u;
  } else {
    sim_num n;
    sim_load(t, p, &n);
    v = n.i;
  }
  return v > SIM_IX_BIG ? SIM_IX_BIG : v < -SIM_IX_BIG ? -SIM_IX_BIG : v;
}

static int64_t sim_ix_clamp(int64_t v, int64_t lo, int64_t hi) {
  return v < lo ? lo : v > hi ? hi : v;
}

/* A field of a dimension-numbers DICT: an INTS list (absent = empty). */
static const int64_t *sim_ix_field(const xrt_ir_attr *dn, const char *name,
                                   int64_t *n) {
  const xrt_ir_attr *a = sim_field(dn, name);
  *n = a && a->kind == XRT_ATTR_INTS ? a->n : 0;
  return *n ? a->ints : NULL;
}

static int64_t sim_ix_field_int(const xrt_ir_attr *dn, const char *name) {
  const xrt_ir_attr *a = xrt_ir_attr_field(dn, name);
  return a && a->kind == XRT_ATTR_INT ? a->i : 0;
}

static int sim_ix_has(const int64_t *v, int64_t n, int64_t x) {
  for (int64_t i = 0; i < n; i++)
    if (v[i] == x) return 1;
  return 0;
}

/* Every entry of v is a dimension below rank (and n fits a rank). */
static int sim_ix_dims_ok(const int64_t *v, int64_t n, int64_t rank) {
  if (n > XRT_MAX_RANK) return 0;
  for (int64_t i = 0; i < n; i++)
    if (v[i] < 0 || v[i] >= rank) return 0;
  return 1;
}

static xrt_status sim_ix_bad(sim_fcc *fc, const xrt_ir_op *op,
                             const char *what) {
  return sim_fail_op(fc->cc->err, op, XRT_INVALID_ARGUMENT, "%s: bad %s",
                     op->name, what);
}

/* Compares n integers read at run time (any integer type) with want;
 * a located error names them when they differ. */
static xrt_status sim_ix_check_ints(const sim_step *st, sim_cx *cx,
                                    const void *p, xrt_dtype t,
                                    const int64_t *want, int32_t n,
                                    const char *what) {
  size_t es = sim_esize(t);
  for (int32_t i = 0; i < n; i++) {
    int64_t v = sim_ix_load(t, (const char *)p + (size_t)i * es);
    if (v != want[i])
      return sim_fail_op(cx->err, st->op, XRT_INVALID_ARGUMENT, "%s: %s[%d] "
                         "is %lld at run time but the static result type "
                         "needs %lld", st->op->name, what, (int)i,
                         (long long)v, (long long)want[i]);
  }
  return XRT_OK;
}

/* ---- a region applied to one element (scatter, reduce_window, ...) ---- */

typedef struct sim_ix_body {
  int32_t n;
  const size_t *es;   /* per accumulator */
  sim_red_fn fast;    /* one binary op of both arguments, or NULL */
  int keep;           /* 1: returns its 2nd argument, 2: its 1st */
  sim_plan plan;
  const int32_t *args, *rets;
  int32_t tmp;        /* n > 1: holds the results before they are stored */
  const size_t *toff;
} sim_ix_body;

/* acc[j] = body(acc[j]..., elem[j]...). */
static xrt_status sim_ix_apply(const sim_ix_body *b, void **vals,
                               sim_cx *cx, char *const *acc,
                               const char *const *elem) {
  if (b->fast) {
    b->fast(acc[0], elem[0], 1, 0);
    return XRT_OK;
  }
  if (b->keep) {
    if (b->keep == 1) memcpy(acc[0], elem[0], b->es[0]);
    return XRT_OK;
  }
  int32_t n = b->n;
  for (int32_t j = 0; j < n; j++) {
    vals[b->args[j]] = acc[j];
    vals[b->args[n + j]] = (void *)(uintptr_t)elem[j];
  }
  xrt_status rc = sim_run_plan(&b->plan, vals, cx);
  if (rc) return rc;
  if (n == 1) {
    memmove(acc[0], vals[b->rets[0]], b->es[0]);
    return XRT_OK;
  }
  char *tmp = (char *)vals[b->tmp]; /* a result may be another argument */
  for (int32_t j = 0; j < n; j++)
    memcpy(tmp + b->toff[j], vals[b->rets[j]], b->es[j]);
  for (int32_t j = 0; j < n; j++) memcpy(acc[j], tmp + b->toff[j], b->es[j]);
  return XRT_OK;
}

/* The region is one op of its two arguments (a typed loop), or returns one
 * of them unchanged. */
static void sim_ix_pick_fast(const sim_fcc *fc, const xrt_ir_region *r,
                             xrt_dtype t, sim_ix_body *b) {
  const xrt_ir_type *types = fc->f->value_types;
  if (r->num_args != 2 || r->num_ops < 1 || r->num_ops > 2) return;
  for (int i = 0; i < 2; i++)
    if (types[r->args[i]].quant || types[r->args[i]].shape.dtype != t ||
        types[r->args[i]].shape.rank != 0)
      return;
  const xrt_ir_op *term = &r->ops[r->num_ops - 1];
  if (term->num_operands != 1) return;
  int32_t a0 = r->args[0], a1 = r->args[1], res = term->operands[0];
  if (r->num_ops == 1) {
    b->keep = res == a1 ? 1 : res == a0 ? 2 : 0;
    return;
  }
  const xrt_ir_op *o = &r->ops[0];
  if (o->num_operands != 2 || o->num_results != 1 || o->num_regions ||
      res != o->results[0] || types[res].quant ||
      types[res].shape.dtype != t)
    return;
  if ((o->operands[0] == a0 && o->operands[1] == a1) ||
      (o->operands[0] == a1 && o->operands[1] == a0))
    b->fast = sim_red_pick(o->code, t);
}

/* Plans region k of op as a body over n accumulators of the given types. */
static xrt_status sim_ix_body_lower(sim_fcc *fc, const xrt_ir_op *op, int k,
                                    int32_t n, const xrt_dtype *types,
                                    sim_ix_body *b) {
  const xrt_ir_region *r = &op->regions[k];
  size_t *es = (size_t *)sim_palloc(fc, sizeof *es * (size_t)n);
  if (!es) return XRT_RESOURCE_EXHAUSTED;
  for (int32_t j = 0; j < n; j++) es[j] = sim_esize(types[j]);
  b->n = n;
  b->es = es;
  b->tmp = -1;
  if (r->num_args != 2 * n)
    return sim_fail_op(fc->cc->err, op, XRT_INVALID_ARGUMENT, "a region of "
                       "%s must take %d arguments", op->name, 2 * (int)n);
  for (int32_t j = 0; j < 2 * n; j++) {
    const xrt_ir_type *at = &fc->f->value_types[r->args[j]];
    if (at->kind != XRT_TYPE_TENSOR || sim_esize(at->shape.dtype) != es[j % n])
      return sim_fail_op(fc->cc->err, op, XRT_UNIMPLEMENTED, "%s: a region "
                         "argument type that differs from the operand's is "
                         "not supported by the simulator", op->name);
  }
  if (n == 1) {
    sim_ix_pick_fast(fc, r, types[0], b);
    if (b->fast || b->keep) return XRT_OK;
  } else {
    size_t *toff = (size_t *)sim_palloc(fc, sizeof *toff * (size_t)n);
    if (!toff) return XRT_RESOURCE_EXHAUSTED;
    size_t total = 0;
    for (int32_t j = 0; j < n; j++) {
      toff[j] = total;
      total += es[j];
    }
    b->toff = toff;
    xrt_status rc = sim_temp(fc, total, &b->tmp);
    if (rc) return rc;
  }
  b->args = r->args;
  return sim_lower_region(fc, r, &b->plan, &b->rets, n, op);
}

/* ======================================================================
 * gather and dynamic_gather
 * ==================================================================== */

typedef struct sim_gather {
  sim_xcopy win;      /* one slice into the result's offset dimensions */
  int64_t nb;         /* index vectors */
  const int64_t *rofs, *iofs, *bofs; /* per index vector, in elements:
                         result, start_indices, operand (batching dims) */
  int32_t nidx;
  int64_t istep;      /* elements between index vector components */
  int64_t ostr[XRT_MAX_RANK], hi[XRT_MAX_RANK]; /* per component */
  xrt_dtype it;
  size_t ies, es;
} sim_gather;

static xrt_status sim_run_gather(const sim_step *st, void **vals,
                                 sim_cx *cx) {
  const sim_gather *g = (const sim_gather *)st->data;
  const char *src = (const char *)vals[st->in[0]];
  const char *idx = (const char *)vals[st->in[1]];
  char *out = (char *)vals[st->out[0]];
  (void)cx;
  if (g->win.empty) return XRT_OK;
  for (int64_t b = 0; b < g->nb; b++) {
    int64_t off = g->bofs[b];
    const char *ip = idx + (size_t)g->iofs[b] * g->ies;
    for (int32_t k = 0; k < g->nidx; k++) {
      int64_t v = sim_ix_load(g->it, ip + (size_t)(k * g->istep) * g->ies);
      off += sim_ix_clamp(v, 0, g->hi[k]) * g->ostr[k];
    }
    sim_xcopy_run(&g->win, out + (size_t)g->rofs[b] * g->es,
                  src + (size_t)off * g->es);
  }
  return XRT_OK;
}

/* The dimension numbers gather and scatter share, in this order: window
 * dimensions of W (the result or the updates), collapsed / inserted
 * dimensions of O, batching dimensions of O and of I, and the map from
 * index vector entries to dimensions of O; plus index_vector_dim. */
typedef struct sim_ixdn {
  const int64_t *f[5];
  int64_t n[5], ivd;
} sim_ixdn;

/* Reads the fields named in names[] into *x and checks them against the
 * operand O, the indices I and W; 0 when they are inconsistent. */
static int sim_ix_read_dn(const xrt_ir_attr *dn, const char *const names[5],
                          const xrt_shape *O, const xrt_shape *I,
                          const xrt_shape *W, sim_ixdn *x) {
  for (int k = 0; k < 5; k++) x->f[k] = sim_ix_field(dn, names[k], &x->n[k]);
  x->ivd = sim_ix_field_int(dn, "index_vector_dim");
  if (x->ivd < 0 || x->ivd > I->rank) return 0;
  int64_t nvec = x->ivd < I->rank ? I->dims[x->ivd] : 1;
  const int64_t ranks[5] = {W->rank, O->rank, O->rank, I->rank, O->rank};
  for (int k = 0; k < 5; k++)
    if (!sim_ix_dims_ok(x->f[k], x->n[k], ranks[k])) return 0;
  return x->n[4] == nvec && x->n[2] == x->n[3] &&
         x->n[0] + x->n[1] + x->n[2] == O->rank &&
         W->rank == x->n[0] + I->rank - (x->ivd < I->rank);
}

typedef struct sim_gdims {
  const int64_t *od, *csd, *obd, *sibd, *sim;
  int64_t nod, ncsd, nobd, nsibd, nsim, ivd;
} sim_gdims;

static xrt_status sim_gather_dims(sim_fcc *fc, const xrt_ir_op *op,
                                  sim_gdims *d) {
  const xrt_ir_attr *dn = sim_attr(op, "dimension_numbers", XRT_ATTR_DICT);
  const xrt_shape *O = sim_shape(fc, op->operands[0]);
  const xrt_shape *I = sim_shape(fc, op->operands[1]);
  const xrt_shape *R = sim_shape(fc, op->results[0]);
  static const char *const names[5] = {
      "offset_dims", "collapsed_slice_dims", "operand_batching_dims",
      "start_indices_batching_dims", "start_index_map"};
  sim_ixdn x;
  if (!dn) return sim_ix_bad(fc, op, "dimension_numbers");
  int ok = sim_ix_read_dn(dn, names, O, I, R, &x);
  d->od = x.f[0], d->nod = x.n[0];
  d->csd = x.f[1], d->ncsd = x.n[1];
  d->obd = x.f[2], d->nobd = x.n[2];
  d->sibd = x.f[3], d->nsibd = x.n[3];
  d->sim = x.f[4], d->nsim = x.n[4];
  d->ivd = x.ivd;
  if (!ok) return sim_ix_bad(fc, op, "dimension numbers");
  if (!sim_ix_is_int(I->dtype))
    return sim_unsupported_type(fc, op, I->dtype);
  return XRT_OK;
}

/* Per index vector: the result, start_indices and batching offsets. */
static xrt_status sim_gather_tables(sim_fcc *fc, const xrt_ir_op *op,
                                    const sim_gdims *d, sim_gather *g) {
  const xrt_shape *O = sim_shape(fc, op->operands[0]);
  const xrt_shape *I = sim_shape(fc, op->operands[1]);
  const xrt_shape *R = sim_shape(fc, op->results[0]);
  int64_t ostr[XRT_MAX_RANK], istr[XRT_MAX_RANK], rstr[XRT_MAX_RANK];
  int64_t sizes[XRT_MAX_RANK], rs[XRT_MAX_RANK], is[XRT_MAX_RANK],
      bs[XRT_MAX_RANK];
  sim_strides(O, ostr);
  sim_strides(I, istr);
  sim_strides(R, rstr);
  int64_t nbd = 0, rd = 0, nb = 1;
  for (int32_t k = 0; k < I->rank; k++) {
    if (k == d->ivd) continue;
    while (sim_ix_has(d->od, d->nod, rd)) rd++; /* next result batch dim */
    if (R->dims[rd] != I->dims[k]) return sim_ix_bad(fc, op, "result shape");
    sizes[nbd] = I->dims[k];
    rs[nbd] = rstr[rd++];
    is[nbd] = istr[k];
    bs[nbd] = 0;
    for (int64_t i = 0; i < d->nsibd; i++)
      if (d->sibd[i] == k) bs[nbd] += ostr[d->obd[i]];
    nb *= sizes[nbd++];
  }
  size_t cnt = (size_t)(nb ? nb : 1);
  int64_t *rofs = (int64_t *)sim_palloc(fc, sizeof *rofs * cnt);
  int64_t *iofs = (int64_t *)sim_palloc(fc, sizeof *iofs * cnt);
  int64_t *bofs = (int64_t *)sim_palloc(fc, sizeof *bofs * cnt);
  if (!rofs || !iofs || !bofs) return XRT_RESOURCE_EXHAUSTED;
  sim_enum_offsets(nbd, sizes, rs, is, rofs, iofs);
  sim_enum_offsets(nbd, sizes, bs, NULL, bofs, NULL);
  g->nb = nb, g->rofs = rofs, g->iofs = iofs, g->bofs = bofs;
  g->istep = d->ivd < I->rank ? istr[d->ivd] : 0;
  return XRT_OK;
}

/* Gather with slice sizes S (an attribute, or inferred for dynamic_gather). */
static xrt_status sim_gather_plan(sim_fcc *fc, const xrt_ir_op *op,
                                  sim_step *st, const sim_gdims *d,
                                  const int64_t *S) {
  const xrt_shape *O = sim_shape(fc, op->operands[0]);
  const xrt_shape *I = sim_shape(fc, op->operands[1]);
  const xrt_shape *R = sim_shape(fc, op->results[0]);
  sim_gather *g = (sim_gather *)sim_palloc(fc, sizeof *g);
  if (!g) return XRT_RESOURCE_EXHAUSTED;
  int64_t ostr[XRT_MAX_RANK], rstr[XRT_MAX_RANK];
  int64_t wd[XRT_MAX_RANK], ws[XRT_MAX_RANK], wr[XRT_MAX_RANK];
  sim_strides(O, ostr);
  sim_strides(R, rstr);
  int32_t j = 0;
  for (int32_t k = 0; k < O->rank; k++) {
    if (S[k] < 0 || S[k] > O->dims[k]) return sim_ix_bad(fc, op, "slice_sizes");
    if (sim_ix_has(d->csd, d->ncsd, k) || sim_ix_has(d->obd, d->nobd, k))
      continue;
    if (j >= d->nod || R->dims[d->od[j]] != S[k])
      return sim_ix_bad(fc, op, "result shape");
    wd[j] = S[k], ws[j] = ostr[k], wr[j] = rstr[d->od[j]];
    j++;
  }
  g->es = sim_esize(O->dtype);
  g->it = I->dtype;
  g->ies = sim_esize(I->dtype);
  sim_xcopy_init(&g->win, g->es, j, wd, ws, wr, 0, 0);
  if (sim_numel(R) == 0) g->win.empty = 1;
  g->nidx = (int32_t)d->nsim;
  for (int32_t k = 0; k < g->nidx; k++) {
    g->ostr[k] = ostr[d->sim[k]];
    g->hi[k] = O->dims[d->sim[k]] - S[d->sim[k]];
  }
  xrt_status rc = sim_gather_tables(fc, op, d, g);
  if (rc) return rc;
  st->data = g;
  st->run = sim_run_gather;
  return XRT_OK;
}

static xrt_status sim_lower_gather(sim_fcc *fc, const xrt_ir_op *op,
                                   sim_step *st) {
  sim_gdims d = {0};
  const int64_t *S;
  int64_t ns;
  if (op->num_operands != 2) return sim_ix_bad(fc, op, "operands");
  xrt_status rc = sim_gather_dims(fc, op, &d);
  if (rc || (rc = sim_ints(fc, op, "slice_sizes", 1, &S, &ns))) return rc;
  if (ns != sim_shape(fc, op->operands[0])->rank)
    return sim_ix_bad(fc, op, "slice_sizes");
  return sim_gather_plan(fc, op, st, &d, S);
}

/* ---- shape operands checked at run time (dynamic_* on static shapes) ---- */

typedef struct sim_dyncheck {
  sim_run_fn run;     /* the wrapped kernel, or NULL (check only) */
  const void *data;
  int64_t n;
  int32_t operand;    /* which operand holds the sizes */
  xrt_dtype t;
  int32_t count;
  int64_t want[XRT_MAX_RANK];
  const char *what;
} sim_dyncheck;

static xrt_status sim_run_dyncheck(const sim_step *st, void **vals,
                                   sim_cx *cx) {
  const sim_dyncheck *c = (const sim_dyncheck *)st->data;
  xrt_status rc = sim_ix_check_ints(st, cx, vals[st->in[c->operand]], c->t,
                                    c->want, c->count, c->what);
  if (rc || !c->run) return rc;
  sim_step inner = *st;
  inner.run = c->run;
  inner.data = c->data;
  inner.n = c->n;
  return c->run(&inner, vals, cx);
}

/* Wraps the step st (already lowered) with a run-time check that operand k
 * holds the integers want[0..count). */
static xrt_status sim_ix_wrap_check(sim_fcc *fc, const xrt_ir_op *op,
                                    sim_step *st, int32_t k,
                                    const int64_t *want, int32_t count,
                                    const char *what) {
  const xrt_shape *s = sim_shape(fc, op->operands[k]);
  if (!sim_ix_is_int(s->dtype) || s->rank != 1 || s->dims[0] != count ||
      count > XRT_MAX_RANK)
    return sim_fail_op(fc->cc->err, op, XRT_INVALID_ARGUMENT, "%s: %s must "
                       "be a 1-d integer tensor of %d elements", op->name,
                       what, (int)count);
  sim_dyncheck *c = (sim_dyncheck *)sim_palloc(fc, sizeof *c);
  if (!c) return XRT_RESOURCE_EXHAUSTED;
  c->run = st->run;
  c->data = st->data;
  c->n = st->n;
  c->operand = k;
  c->t = s->dtype;
  c->count = count;
  for (int32_t i = 0; i < count; i++) c->want[i] = want[i];
  c->what = what;
  st->run = sim_run_dyncheck;
  st->data = c;
  return XRT_OK;
}

/* slice_sizes are an operand whose values must match the result type:
 * the static sizes follow from the result, the values are checked when
 * the op runs. */
static xrt_status sim_lower_dynamic_gather(sim_fcc *fc, const xrt_ir_op *op,
                                           sim_step *st) {
  sim_gdims d = {0};
  if (op->num_operands != 3) return sim_ix_bad(fc, op, "operands");
  xrt_status rc = sim_gather_dims(fc, op, &d);
  if (rc) return rc;
  const xrt_shape *O = sim_shape(fc, op->operands[0]);
  const xrt_shape *R = sim_shape(fc, op->results[0]);
  int64_t S[XRT_MAX_RANK];
  int64_t j = 0;
  for (int32_t k = 0; k < O->rank; k++) {
    if (sim_ix_has(d.csd, d.ncsd, k) || sim_ix_has(d.obd, d.nobd, k))
      S[k] = 1;
    else
      S[k] = j < d.nod ? R->dims[d.od[j++]] : 0;
  }
  if ((rc = sim_gather_plan(fc, op, st, &d, S))) return rc;
  return sim_ix_wrap_check(fc, op, st, 2, S, O->rank, "slice_sizes");
}

/* ======================================================================
 * scatter
 * ==================================================================== */

typedef struct sim_scatter {
  sim_ix_body body;
  int32_t n;
  const size_t *bytes;              /* per input: the initial copy */
  int32_t urank;
  int64_t udims[XRT_MAX_RANK];
  int64_t unumel;
  uint8_t is_win[XRT_MAX_RANK];     /* per update dim: window or scatter */
  int64_t ipos[XRT_MAX_RANK];       /* scatter dim: start_indices stride */
  int32_t bop[XRT_MAX_RANK];        /* scatter dim: batching operand dim, -1 */
  int32_t wop[XRT_MAX_RANK];        /* window dim: its operand dim */
  int32_t nidx;
  int32_t sop[XRT_MAX_RANK];        /* index component: its operand dim */
  int64_t istep;
  xrt_dtype it;
  size_t ies;
  int32_t orank;
  int64_t odims[XRT_MAX_RANK], ostr[XRT_MAX_RANK];
} sim_scatter;

/* The start (start index + batching index) of the window that update
 * index u belongs to, per operand dimension. */
static void sim_scatter_start(const sim_scatter *s, const char *idx,
                              const int64_t *u, int64_t *start) {
  int64_t ioff = 0;
  for (int32_t d = 0; d < s->orank; d++) start[d] = 0;
  for (int32_t k = 0; k < s->urank; k++) {
    if (s->is_win[k]) continue;
    ioff += u[k] * s->ipos[k];
    if (s->bop[k] >= 0) start[s->bop[k]] += u[k];
  }
  for (int32_t k = 0; k < s->nidx; k++)
    start[s->sop[k]] += sim_ix_load(
        s->it, idx + (size_t)(ioff + k * s->istep) * s->ies);
}

/* The result offset of update index u, or -1 when it is out of bounds
 * (such updates are skipped, as the spec says). */
static int64_t sim_scatter_target(const sim_scatter *s, const int64_t *u,
                                  const int64_t *start) {
  int64_t full[XRT_MAX_RANK], off = 0;
  memcpy(full, start, sizeof(int64_t) * (size_t)s->orank);
  for (int32_t k = 0; k < s->urank; k++)
    if (s->is_win[k]) full[s->wop[k]] += u[k];
  for (int32_t d = 0; d < s->orank; d++) {
    if (full[d] < 0 || full[d] >= s->odims[d]) return -1;
    off += full[d] * s->ostr[d];
  }
  return off;
}

static xrt_status sim_run_scatter(const sim_step *st, void **vals,
                                  sim_cx *cx) {
  const sim_scatter *s = (const sim_scatter *)st->data;
  int32_t n = s->n;
  for (int32_t j = 0; j < n; j++)
    if (s->bytes[j] && vals[st->out[j]] != vals[st->in[j]])
      memcpy(vals[st->out[j]], vals[st->in[j]], s->bytes[j]);
  const char *idx = (const char *)vals[st->in[n]];
  int64_t u[XRT_MAX_RANK] = {0}, start[XRT_MAX_RANK];
  char *acc[SIM_IX_MAXN];
  const char *elem[SIM_IX_MAXN];
  int dirty = 1;
  for (int64_t e = 0; e < s->unumel; e++) {
    if (dirty) sim_scatter_start(s, idx, u, start);
    dirty = 0;
    int64_t off = sim_scatter_target(s, u, start);
    if (off >= 0) {
      for (int32_t j = 0; j < n; j++) {
        acc[j] = (char *)vals[st->out[j]] + (size_t)off * s->body.es[j];
        elem[j] = (const char *)vals[st->in[n + 1 + j]] +
                  (size_t)e * s->body.es[j];
      }
      xrt_status rc = sim_ix_apply(&s->body, vals, cx, acc, elem);
      if (rc) return rc;
    }
    for (int32_t k = s->urank - 1; k >= 0; k--) { /* row-major order */
      dirty |= !s->is_win[k];
      if (++u[k] < s->udims[k]) break;
      u[k] = 0;
    }
  }
  return XRT_OK;
}

typedef struct sim_sdims {
  const int64_t *uwd, *iwd, *ibd, *sibd, *sdod;
  int64_t nuwd, niwd, nibd, nsibd, nsdod, ivd;
} sim_sdims;

static xrt_status sim_scatter_dims(sim_fcc *fc, const xrt_ir_op *op,
                                   sim_sdims *d, int32_t n) {
  const xrt_ir_attr *dn =
      sim_attr(op, "scatter_dimension_numbers", XRT_ATTR_DICT);
  const xrt_shape *O = sim_shape(fc, op->operands[0]);
  const xrt_shape *I = sim_shape(fc, op->operands[n]);
  const xrt_shape *U = sim_shape(fc, op->operands[n + 1]);
  static const char *const names[5] = {
      "update_window_dims", "inserted_window_dims", "input_batching_dims",
      "scatter_indices_batching_dims", "scatter_dims_to_operand_dims"};
  sim_ixdn x;
  if (!dn) return sim_ix_bad(fc, op, "scatter_dimension_numbers");
  int ok = sim_ix_read_dn(dn, names, O, I, U, &x);
  d->uwd = x.f[0], d->nuwd = x.n[0];
  d->iwd = x.f[1], d->niwd = x.n[1];
  d->ibd = x.f[2], d->nibd = x.n[2];
  d->sibd = x.f[3], d->nsibd = x.n[3];
  d->sdod = x.f[4], d->nsdod = x.n[4];
  d->ivd = x.ivd;
  if (!ok) return sim_ix_bad(fc, op, "scatter_dimension_numbers");
  if (!sim_ix_is_int(I->dtype))
    return sim_unsupported_type(fc, op, I->dtype);
  return XRT_OK;
}

/* Maps each update dimension to its role. */
static xrt_status sim_scatter_roles(sim_fcc *fc, const xrt_ir_op *op,
                                    const sim_sdims *d, sim_scatter *s) {
  const xrt_shape *O = sim_shape(fc, op->operands[0]);
  const xrt_shape *I = sim_shape(fc, op->operands[s->n]);
  int64_t istr[XRT_MAX_RANK];
  sim_strides(I, istr);
  int32_t wk = 0, ik = 0; /* next window operand dim, next indices dim */
  for (int32_t k = 0; k < s->urank; k++) {
    s->bop[k] = -1;
    if (sim_ix_has(d->uwd, d->nuwd, k)) {
      while (sim_ix_has(d->iwd, d->niwd, wk) || sim_ix_has(d->ibd, d->nibd, wk))
        wk++;
      s->is_win[k] = 1;
      s->wop[k] = wk++;
      continue;
    }
    if (ik == d->ivd) ik++;
    if (s->udims[k] != I->dims[ik]) return sim_ix_bad(fc, op, "updates shape");
    s->ipos[k] = istr[ik];
    for (int64_t i = 0; i < d->nsibd; i++)
      if (d->sibd[i] == ik) s->bop[k] = (int32_t)d->ibd[i];
    ik++;
  }
  s->nidx = (int32_t)d->nsdod;
  for (int32_t k = 0; k < s->nidx; k++) s->sop[k] = (int32_t)d->sdod[k];
  s->istep = d->ivd < I->rank ? istr[d->ivd] : 0;
  s->orank = O->rank;
  memcpy(s->odims, O->dims, sizeof s->odims);
  sim_strides(O, s->ostr);
  return XRT_OK;
}

static xrt_status sim_lower_scatter(sim_fcc *fc, const xrt_ir_op *op,
                                    sim_step *st) {
  int32_t n = op->num_results;
  if (n < 1 || n > SIM_IX_MAXN || op->num_operands != 2 * n + 1 ||
      op->num_regions != 1)
    return sim_ix_bad(fc, op, "operands");
  sim_sdims d = {0};
  xrt_status rc = sim_scatter_dims(fc, op, &d, n);
  if (rc) return rc;
  sim_scatter *s = (sim_scatter *)sim_palloc(fc, sizeof *s);
  size_t *bytes = (size_t *)sim_palloc(fc, sizeof *bytes * (size_t)n);
  if (!s || !bytes) return XRT_RESOURCE_EXHAUSTED;
  xrt_dtype types[SIM_IX_MAXN];
  const xrt_shape *U = sim_shape(fc, op->operands[n + 1]);
  for (int32_t j = 0; j < n; j++) {
    const xrt_shape *in = sim_shape(fc, op->operands[j]);
    const xrt_shape *up = sim_shape(fc, op->operands[n + 1 + j]);
    types[j] = sim_shape(fc, op->results[j])->dtype;
    bytes[j] = sim_bytes(in);
    if (sim_esize(in->dtype) != sim_esize(types[j]) ||
        sim_esize(up->dtype) != sim_esize(types[j]) ||
        bytes[j] != sim_bytes(sim_shape(fc, op->results[j])) ||
        sim_numel(up) != sim_numel(U))
      return sim_ix_bad(fc, op, "operand types");
  }
  s->n = n;
  s->bytes = bytes;
  s->urank = U->rank;
  memcpy(s->udims, U->dims, sizeof s->udims);
  s->unumel = sim_numel(U);
  const xrt_shape *I = sim_shape(fc, op->operands[n]);
  s->it = I->dtype;
  s->ies = sim_esize(I->dtype);
  if ((rc = sim_scatter_roles(fc, op, &d, s)) ||
      (rc = sim_ix_body_lower(fc, op, 0, n, types, &s->body))) return rc;
  st->data = s;
  st->run = sim_run_scatter;
  return XRT_OK;
}

/* ======================================================================
 * dynamic_slice and dynamic_update_slice
 * ==================================================================== */

typedef struct sim_dslice {
  sim_xcopy x;
  int32_t rank, first; /* first start-index operand */
  int64_t hi[XRT_MAX_RANK], str[XRT_MAX_RANK];
  xrt_dtype t[XRT_MAX_RANK];
  size_t es, bytes;    /* bytes: update_slice's initial copy */
} sim_dslice;

/* Element offset of the clamped start indices. */
static int64_t sim_dslice_base(const sim_dslice *d, const sim_step *st,
                               void **vals) {
  int64_t base = 0;
  for (int32_t k = 0; k < d->rank; k++) {
    int64_t v = sim_ix_load(d->t[k], vals[st->in[d->first + k]]);
    base += sim_ix_clamp(v, 0, d->hi[k]) * d->str[k];
  }
  return base;
}

static xrt_status sim_run_dynamic_slice(const sim_step *st, void **vals,
                                        sim_cx *cx) {
  const sim_dslice *d = (const sim_dslice *)st->data;
  (void)cx;
  if (d->x.empty) return XRT_OK;
  int64_t base = sim_dslice_base(d, st, vals);
  sim_xcopy_run(&d->x, (char *)vals[st->out[0]],
                (const char *)vals[st->in[0]] + (size_t)base * d->es);
  return XRT_OK;
}

static xrt_status sim_run_dynamic_update_slice(const sim_step *st,
                                               void **vals, sim_cx *cx) {
  const sim_dslice *d = (const sim_dslice *)st->data;
  char *out = (char *)vals[st->out[0]];
  (void)cx;
  if (d->bytes && out != vals[st->in[0]])
    memcpy(out, vals[st->in[0]], d->bytes);
  if (d->x.empty) return XRT_OK;
  int64_t base = sim_dslice_base(d, st, vals);
  sim_xcopy_run(&d->x, out + (size_t)base * d->es,
                (const char *)vals[st->in[1]]);
  return XRT_OK;
}

/* The slice (or update) has shape W inside the operand O. */
static xrt_status sim_dslice_plan(sim_fcc *fc, const xrt_ir_op *op,
                                  const xrt_shape *O, const xrt_shape *W,
                                  int32_t first, sim_dslice *d) {
  if (W->rank != O->rank || op->num_operands != first + O->rank)
    return sim_ix_bad(fc, op, "operands");
  sim_strides(O, d->str);
  for (int32_t k = 0; k < O->rank; k++) {
    const xrt_shape *s = sim_shape(fc, op->operands[first + k]);
    if (W->dims[k] > O->dims[k]) return sim_ix_bad(fc, op, "slice sizes");
    if (!sim_ix_is_int(s->dtype) || s->rank != 0)
      return sim_ix_bad(fc, op, "start index");
    d->t[k] = s->dtype;
    d->hi[k] = O->dims[k] - W->dims[k];
  }
  d->rank = O->rank;
  d->first = first;
  d->es = sim_esize(O->dtype);
  d->bytes = sim_bytes(O);
  return XRT_OK;
}

static xrt_status sim_lower_dynamic_slice(sim_fcc *fc, const xrt_ir_op *op,
                                          sim_step *st) {
  const xrt_shape *O = sim_shape(fc, op->operands[0]);
  const xrt_shape *R = sim_shape(fc, op->results[0]);
  sim_dslice *d = (sim_dslice *)sim_palloc(fc, sizeof *d);
  if (!d) return XRT_RESOURCE_EXHAUSTED;
  xrt_status rc = sim_dslice_plan(fc, op, O, R, 1, d);
  if (rc) return rc;
  int64_t rstr[XRT_MAX_RANK];
  sim_strides(R, rstr);
  sim_xcopy_init(&d->x, d->es, R->rank, R->dims, d->str, rstr, 0, 0);
  st->data = d;
  st->run = sim_run_dynamic_slice;
  return XRT_OK;
}

static xrt_status sim_lower_dynamic_update_slice(sim_fcc *fc,
                                                 const xrt_ir_op *op,
                                                 sim_step *st) {
  if (op->num_operands < 2) return sim_ix_bad(fc, op, "operands");
  const xrt_shape *O = sim_shape(fc, op->operands[0]);
  const xrt_shape *U = sim_shape(fc, op->operands[1]);
  sim_dslice *d = (sim_dslice *)sim_palloc(fc, sizeof *d);
  if (!d) return XRT_RESOURCE_EXHAUSTED;
  xrt_status rc = sim_dslice_plan(fc, op, O, U, 2, d);
  if (rc) return rc;
  if (sim_esize(U->dtype) != d->es ||
      sim_bytes(sim_shape(fc, op->results[0])) != d->bytes)
    return sim_ix_bad(fc, op, "update type");
  int64_t ustr[XRT_MAX_RANK];
  sim_strides(U, ustr);
  sim_xcopy_init(&d->x, d->es, U->rank, U->dims, ustr, d->str, 0, 0);
  st->data = d;
  st->run = sim_run_dynamic_update_slice;
  return XRT_OK;
}

/* ======================================================================
 * reduce_window and select_and_scatter
 * ==================================================================== */

/* Window geometry: for result (or source) index i and window index k of
 * dimension d, tab[d][i * wdims[d] + k] is the operand element offset
 * along d, or -1 where the window covers padding (edges or the holes of
 * base dilation). */
typedef struct sim_win {
  int32_t rank;
  int64_t odims[XRT_MAX_RANK], wdims[XRT_MAX_RANK];
  int64_t onumel, wnumel;
  const int64_t *tab[XRT_MAX_RANK];
} sim_win;

typedef struct sim_win_attrs {
  const int64_t *wd, *ws, *bd, *wdl, *pad;
  int64_t nwd, nws, nbd, nwdl, npad;
} sim_win_attrs;

static xrt_status sim_win_attrs_get(sim_fcc *fc, const xrt_ir_op *op,
                                    int32_t rank, sim_win_attrs *a) {
  xrt_status rc = sim_ints(fc, op, "window_dimensions", 1, &a->wd, &a->nwd);
  if (rc || (rc = sim_ints(fc, op, "window_strides", 0, &a->ws, &a->nws)) ||
      (rc = sim_ints(fc, op, "base_dilations", 0, &a->bd, &a->nbd)) ||
      (rc = sim_ints(fc, op, "window_dilations", 0, &a->wdl, &a->nwdl)) ||
      (rc = sim_ints(fc, op, "padding", 0, &a->pad, &a->npad)))
    return rc;
  if (a->nwd != rank || (a->ws && a->nws != rank) ||
      (a->bd && a->nbd != rank) || (a->wdl && a->nwdl != rank) ||
      (a->pad && a->npad != 2 * rank))
    return sim_ix_bad(fc, op, "window attributes");
  for (int32_t d = 0; d < rank; d++) {
    int64_t v[5] = {a->wd[d], a->ws ? a->ws[d] : 1, a->bd ? a->bd[d] : 1,
                    a->wdl ? a->wdl[d] : 1, 1};
    for (int i = 0; i < 5; i++)
      if (v[i] < 1 || v[i] > ((int64_t)1 << 32))
        return sim_ix_bad(fc, op, "window attributes");
    if (a->pad && (a->pad[2 * d] < -SIM_IX_BIG || a->pad[2 * d] > SIM_IX_BIG))
      return sim_ix_bad(fc, op, "padding");
  }
  return XRT_OK;
}

/* The tables over operand shape X (strides in elements of X) for results
 * of shape R. */
static xrt_status sim_win_plan(sim_fcc *fc, const xrt_shape *X,
                               const xrt_shape *R, const sim_win_attrs *a,
                               sim_win *w) {
  int64_t xstr[XRT_MAX_RANK];
  sim_strides(X, xstr);
  w->rank = X->rank;
  w->onumel = sim_numel(R);
  w->wnumel = 1;
  if (w->onumel == 0) return XRT_OK; /* no windows: no tables */
  for (int32_t d = 0; d < X->rank; d++) {
    int64_t W = a->wd[d], S = a->ws ? a->ws[d] : 1;
    int64_t B = a->bd ? a->bd[d] : 1, D = a->wdl ? a->wdl[d] : 1;
    int64_t lo = a->pad ? a->pad[2 * d] : 0, n = R->dims[d];
    w->odims[d] = n;
    w->wdims[d] = W;
    w->wnumel *= W;
    if (n > (INT64_MAX / 16) / W) return sim_oom(fc); /* table too big */
    int64_t *t = (int64_t *)sim_palloc(fc, sizeof *t * (size_t)(n * W + 1));
    if (!t) return XRT_RESOURCE_EXHAUSTED;
    for (int64_t i = 0; i < n; i++)
      for (int64_t k = 0; k < W; k++) {
        int64_t p = i * S + k * D - lo; /* in the padded, dilated operand */
        int ok = p >= 0 && p % B == 0 && p / B < X->dims[d];
        t[i * W + k] = ok ? (p / B) * xstr[d] : -1;
      }
    w->tab[d] = t;
  }
  return XRT_OK;
}

/* Operand offset of window element wi of result element ri, or -1. */
static int64_t sim_win_at(const sim_win *w, const int64_t *ri,
                          const int64_t *wi) {
  int64_t off = 0;
  for (int32_t d = 0; d < w->rank; d++) {
    int64_t t = w->tab[d][ri[d] * w->wdims[d] + wi[d]];
    if (t < 0) return -1;
    off += t;
  }
  return off;
}

static void sim_win_next(int32_t rank, const int64_t *dims, int64_t *idx) {
  for (int32_t d = rank - 1; d >= 0; d--) {
    if (++idx[d] < dims[d]) return;
    idx[d] = 0;
  }
}

typedef struct sim_rwin {
  sim_win w;
  sim_ix_body body;
  int32_t n;
} sim_rwin;

static xrt_status sim_run_reduce_window(const sim_step *st, void **vals,
                                        sim_cx *cx) {
  const sim_rwin *r = (const sim_rwin *)st->data;
  const sim_win *w = &r->w;
  int32_t n = r->n;
  int64_t ri[XRT_MAX_RANK] = {0};
  char *acc[SIM_IX_MAXN];
  const char *elem[SIM_IX_MAXN];
  for (int64_t o = 0; o < w->onumel; o++) {
    for (int32_t j = 0; j < n; j++) {
      acc[j] = (char *)vals[st->out[j]] + (size_t)o * r->body.es[j];
      memcpy(acc[j], vals[st->in[n + j]], r->body.es[j]);
    }
    int64_t wi[XRT_MAX_RANK] = {0};
    for (int64_t e = 0; e < w->wnumel; e++) {
      int64_t off = sim_win_at(w, ri, wi);
      for (int32_t j = 0; j < n; j++) /* padding holds the init value */
        elem[j] = off < 0 ? (const char *)vals[st->in[n + j]]
                          : (const char *)vals[st->in[j]] +
                                (size_t)off * r->body.es[j];
      xrt_status rc = sim_ix_apply(&r->body, vals, cx, acc, elem);
      if (rc) return rc;
      sim_win_next(w->rank, w->wdims, wi);
    }
    sim_win_next(w->rank, w->odims, ri);
  }
  return XRT_OK;
}

static xrt_status sim_lower_reduce_window(sim_fcc *fc, const xrt_ir_op *op,
                                          sim_step *st) {
  int32_t n = op->num_results;
  if (n < 1 || n > SIM_IX_MAXN || op->num_operands != 2 * n ||
      op->num_regions != 1)
    return sim_ix_bad(fc, op, "operands");
  const xrt_shape *X = sim_shape(fc, op->operands[0]);
  const xrt_shape *R = sim_shape(fc, op->results[0]);
  xrt_dtype types[SIM_IX_MAXN];
  for (int32_t j = 0; j < n; j++) {
    const xrt_shape *in = sim_shape(fc, op->operands[j]);
    const xrt_shape *o = sim_shape(fc, op->results[j]);
    types[j] = o->dtype;
    if (sim_esize(in->dtype) != sim_esize(o->dtype) ||
        sim_esize(sim_shape(fc, op->operands[n + j])->dtype) !=
            sim_esize(o->dtype) ||
        sim_numel(in) != sim_numel(X) || sim_numel(o) != sim_numel(R) ||
        R->rank != X->rank)
      return sim_ix_bad(fc, op, "operand types");
  }
  sim_win_attrs a;
  sim_rwin *r = (sim_rwin *)sim_palloc(fc, sizeof *r);
  if (!r) return XRT_RESOURCE_EXHAUSTED;
  xrt_status rc = sim_win_attrs_get(fc, op, X->rank, &a);
  if (rc || (rc = sim_win_plan(fc, X, R, &a, &r->w)) ||
      (rc = sim_ix_body_lower(fc, op, 0, n, types, &r->body)))
    return rc;
  r->n = n;
  st->data = r;
  st->run = sim_run_reduce_window;
  return XRT_OK;
}

typedef struct sim_sas {
  sim_win w;          /* over the operand, one window per source element */
  sim_plan sel;
  const int32_t *sargs;
  int32_t sret;
  sim_ix_body scat;
  size_t es;
  int64_t numel;      /* of the operand and result */
  sim_fill_fn fill;
} sim_sas;

/* The element of a window that the select region picks: the first one,
 * replaced by each later one for which select(chosen, later) is false. */
static xrt_status sim_sas_pick(const sim_step *st, const sim_sas *s,
                               void **vals, sim_cx *cx, const int64_t *si,
                               int64_t *pick) {
  const char *x = (const char *)vals[st->in[0]];
  int64_t wi[XRT_MAX_RANK] = {0};
  *pick = -1;
  for (int64_t e = 0; e < s->w.wnumel; e++) {
    int64_t off = sim_win_at(&s->w, si, wi);
    sim_win_next(s->w.rank, s->w.wdims, wi);
    if (off < 0) continue;
    if (*pick < 0) {
      *pick = off;
      continue;
    }
    vals[s->sargs[0]] = (void *)(uintptr_t)(x + (size_t)*pick * s->es);
    vals[s->sargs[1]] = (void *)(uintptr_t)(x + (size_t)off * s->es);
    xrt_status rc = sim_run_plan(&s->sel, vals, cx);
    if (rc) return rc;
    if (!*(const uint8_t *)vals[s->sret]) *pick = off;
  }
  return XRT_OK;
}

static xrt_status sim_run_select_and_scatter(const sim_step *st, void **vals,
                                             sim_cx *cx) {
  const sim_sas *s = (const sim_sas *)st->data;
  char *out = (char *)vals[st->out[0]];
  const char *src = (const char *)vals[st->in[1]];
  int64_t si[XRT_MAX_RANK] = {0};
  s->fill(out, (const char *)vals[st->in[2]], s->numel);
  for (int64_t o = 0; o < s->w.onumel; o++) {
    int64_t pick;
    xrt_status rc = sim_sas_pick(st, s, vals, cx, si, &pick);
    if (rc) return rc;
    if (pick >= 0) {
      char *acc = out + (size_t)pick * s->es;
      const char *elem = src + (size_t)o * s->es;
      if ((rc = sim_ix_apply(&s->scat, vals, cx, &acc, &elem))) return rc;
    }
    sim_win_next(s->w.rank, s->w.odims, si);
  }
  return XRT_OK;
}

static xrt_status sim_lower_select_and_scatter(sim_fcc *fc,
                                               const xrt_ir_op *op,
                                               sim_step *st) {
  if (op->num_operands != 3 || op->num_results != 1 || op->num_regions != 2)
    return sim_ix_bad(fc, op, "operands");
  const xrt_shape *X = sim_shape(fc, op->operands[0]);
  const xrt_shape *S = sim_shape(fc, op->operands[1]);
  const xrt_shape *R = sim_shape(fc, op->results[0]);
  size_t es = sim_esize(X->dtype);
  if (S->rank != X->rank || sim_esize(S->dtype) != es ||
      sim_esize(R->dtype) != es || sim_numel(R) != sim_numel(X) ||
      sim_esize(sim_shape(fc, op->operands[2])->dtype) != es)
    return sim_ix_bad(fc, op, "operand types");
  sim_win_attrs a;
  sim_sas *s = (sim_sas *)sim_palloc(fc, sizeof *s);
  if (!s) return XRT_RESOURCE_EXHAUSTED;
  xrt_status rc = sim_win_attrs_get(fc, op, X->rank, &a);
  if (rc) return rc;
  a.bd = a.wdl = NULL; /* select_and_scatter has no dilations */
  if ((rc = sim_win_plan(fc, X, S, &a, &s->w))) return rc;
  const xrt_ir_region *sel = &op->regions[0];
  const int32_t *rets;
  if (sel->num_args != 2) return sim_ix_bad(fc, op, "select region");
  if ((rc = sim_lower_region(fc, sel, &s->sel, &rets, 1, op))) return rc;
  const xrt_shape *rs = sim_shape(fc, rets[0]);
  if (rs->dtype != XRT_PRED || rs->rank != 0)
    return sim_ix_bad(fc, op, "select region result");
  s->sargs = sel->args;
  s->sret = rets[0];
  xrt_dtype t = R->dtype;
  if ((rc = sim_ix_body_lower(fc, op, 1, 1, &t, &s->scat))) return rc;
  s->es = es;
  s->numel = sim_numel(R);
  s->fill = sim_fill_for(es);
  st->data = s;
  st->run = sim_run_select_and_scatter;
  return XRT_OK;
}

/* ======================================================================
 * dynamic_broadcast_in_dim, dynamic_iota, dynamic_pad, dynamic_reshape
 * ==================================================================== */

static xrt_status sim_lower_dynamic_broadcast_in_dim(sim_fcc *fc,
                                                     const xrt_ir_op *op,
                                                     sim_step *st) {
  const xrt_shape *R = sim_shape(fc, op->results[0]);
  if (op->num_operands != 2) return sim_ix_bad(fc, op, "operands");
  xrt_status rc = sim_lower_broadcast_in_dim(fc, op, st);
  if (rc) return rc;
  return sim_ix_wrap_check(fc, op, st, 1, R->dims, R->rank,
                           "output_dimensions");
}

static xrt_status sim_lower_dynamic_iota(sim_fcc *fc, const xrt_ir_op *op,
                                         sim_step *st) {
  const xrt_shape *R = sim_shape(fc, op->results[0]);
  if (op->num_operands != 1) return sim_ix_bad(fc, op, "operands");
  xrt_status rc = sim_lower_iota(fc, op, st); /* a constant */
  if (rc) return rc;
  return sim_ix_wrap_check(fc, op, st, 0, R->dims, R->rank, "output_shape");
}

static xrt_status sim_lower_dynamic_reshape(sim_fcc *fc, const xrt_ir_op *op,
                                            sim_step *st) {
  const xrt_shape *R = sim_shape(fc, op->results[0]);
  if (op->num_operands != 2) return sim_ix_bad(fc, op, "operands");
  xrt_status rc = sim_lower_reshape(fc, op, st);
  if (rc) return rc;
  return sim_ix_wrap_check(fc, op, st, 1, R->dims, R->rank, "output_shape");
}

/* dynamic_pad: the paddings are read when the op runs; they may differ
 * between runs as long as they give the static result shape. */
typedef struct sim_dpad {
  xrt_shape in, out;
  xrt_dtype lt, ht, it;
  size_t es;
  sim_fill_fn fill;
} sim_dpad;

static xrt_status sim_dpad_read(const sim_step *st, void **vals, sim_cx *cx,
                                const sim_dpad *p, int64_t *lo,
                                int64_t *inter) {
  const xrt_dtype ts[3] = {p->lt, p->ht, p->it};
  for (int32_t k = 0; k < p->in.rank; k++) {
    int64_t v[3];
    for (int i = 0; i < 3; i++)
      v[i] = sim_ix_load(ts[i], (const char *)vals[st->in[2 + i]] +
                                    (size_t)k * sim_esize(ts[i]));
    int64_t dim = p->in.dims[k], size = -1;
    if (v[2] >= 0 && (dim < 2 || v[2] <= (INT64_MAX / 4) / (dim - 1)))
      size = v[0] + v[1] + dim + (dim ? (dim - 1) * v[2] : 0);
    if (size != p->out.dims[k])
      return sim_fail_op(cx->err, st->op, XRT_INVALID_ARGUMENT, "%s: "
                         "paddings (low %lld, high %lld, interior %lld) of "
                         "dimension %d at run time do not give the static "
                         "result size %lld", st->op->name, (long long)v[0],
                         (long long)v[1], (long long)v[2], (int)k,
                         (long long)p->out.dims[k]);
    lo[k] = v[0];
    inter[k] = v[2];
  }
  return XRT_OK;
}

static xrt_status sim_run_dynamic_pad(const sim_step *st, void **vals,
                                      sim_cx *cx) {
  const sim_dpad *p = (const sim_dpad *)st->data;
  int64_t lo[XRT_MAX_RANK], inter[XRT_MAX_RANK];
  xrt_status rc = sim_dpad_read(st, vals, cx, p, lo, inter);
  if (rc) return rc;
  int64_t ist[XRT_MAX_RANK], ost[XRT_MAX_RANK], dims[XRT_MAX_RANK];
  int64_t ss[XRT_MAX_RANK], ds[XRT_MAX_RANK], sbase = 0, dbase = 0;
  sim_strides(&p->in, ist);
  sim_strides(&p->out, ost);
  for (int32_t k = 0; k < p->in.rank; k++) { /* as sim_lower_pad */
    int64_t step = inter[k] + 1, j0;
    sim_pad_range(p->in.dims[k], p->out.dims[k], lo[k], step, &j0, &dims[k]);
    sbase += j0 * ist[k];
    dbase += (lo[k] + j0 * step) * ost[k];
    ss[k] = ist[k];
    ds[k] = step * ost[k];
    if (dims[k] == 0) sbase = dbase = 0;
  }
  sim_xcopy x;
  char *out = (char *)vals[st->out[0]];
  sim_xcopy_init(&x, p->es, p->in.rank, dims, ss, ds, sbase, dbase);
  p->fill(out, (const char *)vals[st->in[1]], sim_numel(&p->out));
  sim_xcopy_run(&x, out, (const char *)vals[st->in[0]]);
  return XRT_OK;
}

static xrt_status sim_lower_dynamic_pad(sim_fcc *fc, const xrt_ir_op *op,
                                        sim_step *st) {
  if (op->num_operands != 5) return sim_ix_bad(fc, op, "operands");
  const xrt_shape *X = sim_shape(fc, op->operands[0]);
  const xrt_shape *R = sim_shape(fc, op->results[0]);
  sim_dpad *p = (sim_dpad *)sim_palloc(fc, sizeof *p);
  if (!p) return XRT_RESOURCE_EXHAUSTED;
  xrt_dtype ts[3];
  for (int i = 0; i < 3; i++) {
    const xrt_shape *s = sim_shape(fc, op->operands[2 + i]);
    if (!sim_ix_is_int(s->dtype) || s->rank != 1 || s->dims[0] != X->rank)
      return sim_ix_bad(fc, op, "padding operand");
    ts[i] = s->dtype;
  }
  if (R->rank != X->rank || sim_esize(R->dtype) != sim_esize(X->dtype) ||
      sim_esize(sim_shape(fc, op->operands[1])->dtype) != sim_esize(X->dtype))
    return sim_ix_bad(fc, op, "operand types");
  p->in = *X;
  p->out = *R;
  p->lt = ts[0], p->ht = ts[1], p->it = ts[2];
  p->es = sim_esize(X->dtype);
  p->fill = sim_fill_for(p->es);
  st->data = p;
  st->run = sim_run_dynamic_pad;
  return XRT_OK;
}
/* ----------------------------------------------------------------------
 * Control flow and structure: if, case, map, sort, composite, tuples,
 * tokens and host-callback I/O, chlo.scan.
 *
 * Tuple values are flat blocks (see sim_type_bytes), tokens hold no bytes,
 * so region results of any kind are moved with memmove of their bytes.
 * -------------------------------------------------------------------- */

/* An elementwise kernel for an op inside a region (its context, if the
 * kernel needs a malloc'd one, is freed with the executable). */
static sim_ew_fn sim_ctrl_ew(sim_fcc *fc, const xrt_ir_op *op,
                             const void **ctx) {
  int owned = 0;
  const xrt_allocator *al = &fc->cc->al;
  /* Out of memory only loses this fast path: the region is interpreted. */
  sim_ew_fn fn = sim_ew_kernel(al, fc->f, op, ctx, &owned, NULL, 0);
  if (fn && owned && *ctx) {
    void **slot = (void **)sim_vec_push(al, &fc->cc->exe->owned_ctx);
    if (!slot) {
      al->free(al->self, (void *)(uintptr_t)*ctx);
      return NULL;
    }
    *slot = (void *)(uintptr_t)*ctx;
  }
  return fn;
}

/* Bytes of each result of op (pool memory), or NULL when out of memory. */
static size_t *sim_ctrl_result_bytes(sim_fcc *fc, const xrt_ir_op *op) {
  size_t *b = (size_t *)sim_palloc(fc, sizeof *b * (size_t)(op->num_results + 1));
  for (int32_t i = 0; b && i < op->num_results; i++)
    b[i] = sim_vbytes(fc, op->results[i]);
  return b;
}

/* ======================================================================
 * if and case: run one region, copy its results
 * ==================================================================== */

typedef struct sim_branch {
  int32_t nb;              /* branches */
  int is_if;               /* if: branch 0 when the predicate is true */
  const sim_plan *plans;   /* per branch */
  const int32_t **rets;    /* per branch: the values it returns */
  const size_t *bytes;     /* per result */
} sim_branch;

static xrt_status sim_run_branch(const sim_step *st, void **vals,
                                 sim_cx *cx) {
  const sim_branch *b = (const sim_branch *)st->data;
  int32_t k;
  if (b->is_if) {
    k = *(const uint8_t *)vals[st->in[0]] ? 0 : 1;
  } else { /* an index out of range runs the last branch (the default) */
    int32_t i;
    memcpy(&i, vals[st->in[0]], sizeof i);
    k = i < 0 || i >= b->nb ? b->nb - 1 : i;
  }
  xrt_status rc = sim_run_plan(&b->plans[k], vals, cx);
  if (rc) return rc;
  for (int32_t j = 0; j < st->nout; j++)
    if (b->bytes[j]) memmove(vals[st->out[j]], vals[b->rets[k][j]], b->bytes[j]);
  return XRT_OK;
}

static xrt_status sim_lower_branches(sim_fcc *fc, const xrt_ir_op *op,
                                     sim_step *st, int is_if) {
  const xrt_shape *p = sim_shape(fc, op->operands[0]);
  if (op->num_operands != 1 || op->num_regions < 1 ||
      (is_if && op->num_regions != 2) || p->rank != 0 ||
      p->dtype != (is_if ? XRT_PRED : XRT_S32))
    return sim_fail_op(fc->cc->err, op, XRT_INVALID_ARGUMENT, "bad %s",
                       op->name);
  int32_t nb = op->num_regions;
  sim_branch *b = (sim_branch *)sim_palloc(fc, sizeof *b);
  sim_plan *plans = (sim_plan *)sim_palloc(fc, sizeof *plans * (size_t)nb);
  const int32_t **rets =
      (const int32_t **)sim_palloc(fc, sizeof *rets * (size_t)nb);
  size_t *bytes = sim_ctrl_result_bytes(fc, op);
  if (!b || !plans || !rets || !bytes) return XRT_RESOURCE_EXHAUSTED;
  for (int32_t k = 0; k < nb; k++) {
    if (op->regions[k].num_args != 0)
      return sim_fail_op(fc->cc->err, op, XRT_INVALID_ARGUMENT, "a branch "
                         "of %s takes no arguments", op->name);
    xrt_status rc = sim_lower_region(fc, &op->regions[k], &plans[k], &rets[k],
                                     op->num_results, op);
    if (rc) return rc;
    for (int32_t j = 0; j < op->num_results; j++)
      if (sim_vbytes(fc, rets[k][j]) != bytes[j])
        return sim_fail_op(fc->cc->err, op, XRT_INVALID_ARGUMENT, "branch %d "
                           "of %s returns a value of the wrong type at "
                           "position %d", (int)k, op->name, (int)j);
  }
  b->nb = nb;
  b->is_if = is_if;
  b->plans = plans;
  b->rets = rets;
  b->bytes = bytes;
  st->data = b;
  st->run = sim_run_branch;
  return XRT_OK;
}

static xrt_status sim_lower_if(sim_fcc *fc, const xrt_ir_op *op,
                               sim_step *st) {
  return sim_lower_branches(fc, op, st, 1);
}

static xrt_status sim_lower_case(sim_fcc *fc, const xrt_ir_op *op,
                                 sim_step *st) {
  return sim_lower_branches(fc, op, st, 0);
}

/* ======================================================================
 * map: the region per element, or its single elementwise op at once
 * ==================================================================== */

typedef struct sim_map {
  int64_t n;              /* elements */
  const size_t *es;       /* element size per operand */
  size_t oes;
  sim_plan body;
  const int32_t *bargs;
  int32_t bret;
  sim_ew_fn fast;         /* the body is one elementwise op of the args */
  const void *fast_ctx;
  const int32_t *perm;    /* fast: kernel input k is operand perm[k] */
  int32_t nperm;
} sim_map;

static xrt_status sim_run_map(const sim_step *st, void **vals, sim_cx *cx) {
  const sim_map *m = (const sim_map *)st->data;
  char *out = (char *)vals[st->out[0]];
  if (m->fast) {
    void *in[SIM_MAX_EW_IN];
    for (int32_t k = 0; k < m->nperm; k++) in[k] = vals[st->in[m->perm[k]]];
    if (m->n) m->fast(in, out, (size_t)m->n, m->fast_ctx);
    return XRT_OK;
  }
  for (int64_t e = 0; e < m->n; e++) {
    for (int32_t i = 0; i < st->nin; i++)
      vals[m->bargs[i]] = (char *)vals[st->in[i]] + (size_t)e * m->es[i];
    xrt_status rc = sim_run_plan(&m->body, vals, cx);
    if (rc) return rc;
    memcpy(out + (size_t)e * m->oes, vals[m->bret], m->oes);
  }
  return XRT_OK;
}

/* A body "%r = OP %argI, %argJ...; return %r" runs as one kernel call. */
static void sim_map_fast(sim_fcc *fc, const xrt_ir_op *op, sim_map *m) {
  const xrt_ir_region *r = &op->regions[0];
  if (r->num_ops != 2) return;
  const xrt_ir_op *b = &r->ops[0], *t = &r->ops[1];
  if (b->num_results != 1 || b->num_regions || b->num_operands > SIM_MAX_EW_IN ||
      !sim_ew_handles(b->code) || t->num_operands != 1 ||
      t->operands[0] != b->results[0])
    return;
  int32_t *perm = (int32_t *)sim_palloc(fc, sizeof *perm * (size_t)(b->num_operands + 1));
  if (!perm) return;
  for (int32_t k = 0; k < b->num_operands; k++) {
    perm[k] = -1;
    for (int32_t i = 0; i < r->num_args; i++)
      if (b->operands[k] == r->args[i]) perm[k] = i;
    if (perm[k] < 0) return;
  }
  const void *ctx = NULL;
  sim_ew_fn fn = sim_ctrl_ew(fc, b, &ctx);
  if (!fn) return;
  m->fast = fn;
  m->fast_ctx = ctx;
  m->perm = perm;
  m->nperm = b->num_operands;
}

static xrt_status sim_lower_map(sim_fcc *fc, const xrt_ir_op *op,
                                sim_step *st) {
  const xrt_shape *o = sim_shape(fc, op->results[0]);
  int32_t n = op->num_operands;
  if (n < 1 || op->num_results != 1 || op->num_regions != 1 ||
      op->regions[0].num_args != n)
    return sim_fail_op(fc->cc->err, op, XRT_INVALID_ARGUMENT, "bad map");
  sim_map *m = (sim_map *)sim_palloc(fc, sizeof *m);
  size_t *es = (size_t *)sim_palloc(fc, sizeof *es * (size_t)n);
  if (!m || !es) return XRT_RESOURCE_EXHAUSTED;
  for (int32_t i = 0; i < n; i++) {
    const xrt_shape *s = sim_shape(fc, op->operands[i]);
    if (sim_numel(s) != sim_numel(o))
      return sim_fail_op(fc->cc->err, op, XRT_INVALID_ARGUMENT,
                         "map operands and result differ in shape");
    es[i] = sim_esize(s->dtype);
  }
  m->n = sim_numel(o);
  m->es = es;
  m->oes = sim_esize(o->dtype);
  sim_map_fast(fc, op, m);
  if (!m->fast) {
    const int32_t *rets;
    xrt_status rc = sim_lower_region(fc, &op->regions[0], &m->body, &rets, 1, op);
    if (rc) return rc;
    if (sim_vbytes(fc, rets[0]) != m->oes)
      return sim_fail_op(fc->cc->err, op, XRT_INVALID_ARGUMENT, "the map "
                         "body must return one element of the result type");
    m->bargs = op->regions[0].args;
    m->bret = rets[0];
  }
  st->data = m;
  st->run = sim_run_map;
  return XRT_OK;
}

/* ======================================================================
 * sort: a stable merge sort of indices per line, driven by the comparator
 * ==================================================================== */

typedef struct sim_sort {
  int32_t n;                /* operands (= results) */
  int64_t outer, len, inner; /* elements = outer * len * inner */
  const size_t *es;
  sim_plan cmp;             /* comparator region, when not fast */
  const int32_t *cargs;     /* 2n: lhs and rhs element of each operand */
  int32_t cret;
  sim_ew_fn fast;           /* comparator = one compare of operand fk */
  const void *fast_ctx;
  int32_t fk;
  int fswap;                /* the compare reads (rhs, lhs) */
  int32_t tidx;             /* pseudo value: 2 * len int64 indices */
} sim_sort;

/* comparator(a, b) for elements at offsets a and b (in elements). */
static xrt_status sim_sort_less(const sim_step *st, const sim_sort *s,
                                void **vals, sim_cx *cx, int64_t a, int64_t b,
                                int *less) {
  if (s->fast) {
    int32_t k = s->fk;
    void *in[2];
    uint8_t r = 0;
    in[s->fswap] = (char *)vals[st->in[k]] + (size_t)a * s->es[k];
    in[1 - s->fswap] = (char *)vals[st->in[k]] + (size_t)b * s->es[k];
    s->fast(in, &r, 1, s->fast_ctx);
    *less = r != 0;
    return XRT_OK;
  }
  for (int32_t k = 0; k < s->n; k++) {
    char *base = (char *)vals[st->in[k]];
    vals[s->cargs[2 * k]] = base + (size_t)a * s->es[k];
    vals[s->cargs[2 * k + 1]] = base + (size_t)b * s->es[k];
  }
  xrt_status rc = sim_run_plan(&s->cmp, vals, cx);
  if (rc) return rc;
  *less = *(const uint8_t *)vals[s->cret] != 0;
  return XRT_OK;
}

/* Bottom-up merge sort of idx[0..len) (element offsets base + i*inner);
 * a right element moves ahead only when strictly less: stable.  Returns
 * the buffer holding the sorted order in *sorted. */
static xrt_status sim_sort_line(const sim_step *st, const sim_sort *s,
                                void **vals, sim_cx *cx, int64_t base,
                                int64_t *idx, int64_t *tmp,
                                int64_t **sorted) {
  int64_t len = s->len, inner = s->inner;
  for (int64_t i = 0; i < len; i++) idx[i] = i;
  int64_t *src = idx, *dst = tmp;
  for (int64_t w = 1; w < len; w *= 2) {
    for (int64_t lo = 0; lo < len; lo += 2 * w) {
      int64_t mid = lo + w < len ? lo + w : len;
      int64_t hi = mid + w < len ? mid + w : len, i = lo, j = mid, o = lo;
      while (i < mid && j < hi) {
        int less = 0;
        xrt_status rc = sim_sort_less(st, s, vals, cx, base + src[j] * inner,
                                      base + src[i] * inner, &less);
        if (rc) return rc;
        dst[o++] = less ? src[j++] : src[i++];
      }
      while (i < mid) dst[o++] = src[i++];
      while (j < hi) dst[o++] = src[j++];
    }
    int64_t *t = src;
    src = dst;
    dst = t;
  }
  *sorted = src;
  return XRT_OK;
}

static xrt_status sim_run_sort(const sim_step *st, void **vals, sim_cx *cx) {
  const sim_sort *s = (const sim_sort *)st->data;
  if (s->len == 0 || s->outer == 0 || s->inner == 0) return XRT_OK;
  int64_t *idx = (int64_t *)vals[s->tidx], *tmp = idx + s->len;
  for (int64_t o = 0; o < s->outer; o++)
    for (int64_t in = 0; in < s->inner; in++) {
      int64_t base = o * s->len * s->inner + in, *perm;
      xrt_status rc = sim_sort_line(st, s, vals, cx, base, idx, tmp, &perm);
      if (rc) return rc;
      for (int32_t k = 0; k < s->n; k++) {
        size_t es = s->es[k];
        const char *src = (const char *)vals[st->in[k]];
        char *dst = (char *)vals[st->out[k]];
        for (int64_t j = 0; j < s->len; j++)
          memcpy(dst + (size_t)(base + j * s->inner) * es,
                 src + (size_t)(base + perm[j] * s->inner) * es, es);
      }
    }
  return XRT_OK;
}

/* The comparator "%p = compare %argX, %argY; return %p" where X, Y are the
 * lhs and rhs of one operand runs as the compare kernel itself. */
static void sim_sort_fast(sim_fcc *fc, const xrt_ir_op *op, sim_sort *s) {
  const xrt_ir_region *r = &op->regions[0];
  if (r->num_ops != 2) return;
  const xrt_ir_op *c = &r->ops[0], *t = &r->ops[1];
  if (c->code != XRT_OP_COMPARE || c->num_operands != 2 ||
      c->num_results != 1 || t->num_operands != 1 ||
      t->operands[0] != c->results[0])
    return;
  for (int32_t k = 0; k < s->n; k++) {
    int32_t l = r->args[2 * k], h = r->args[2 * k + 1];
    int swap;
    if (c->operands[0] == l && c->operands[1] == h) swap = 0;
    else if (c->operands[0] == h && c->operands[1] == l) swap = 1;
    else continue;
    const void *ctx = NULL;
    sim_ew_fn fn = sim_ctrl_ew(fc, c, &ctx);
    if (!fn) return;
    s->fast = fn;
    s->fast_ctx = ctx;
    s->fk = k;
    s->fswap = swap;
    return;
  }
}

static xrt_status sim_lower_sort(sim_fcc *fc, const xrt_ir_op *op,
                                 sim_step *st) {
  int32_t n = op->num_operands;
  int64_t dim = 0;
  xrt_status rc = XRT_OK;
  const xrt_ir_attr *da = sim_attr(op, "dimension", XRT_ATTR_INT);
  if (da) dim = da->i;
  else dim = -1; /* the spec default */
  if (n < 1 || op->num_results != n || op->num_regions != 1 ||
      op->regions[0].num_args != 2 * n)
    return sim_fail_op(fc->cc->err, op, XRT_INVALID_ARGUMENT, "bad sort");
  const xrt_shape *s0 = sim_shape(fc, op->operands[0]);
  if (dim < 0) dim += s0->rank;
  if (s0->rank > 0 && (dim < 0 || dim >= s0->rank))
    return sim_fail_op(fc->cc->err, op, XRT_INVALID_ARGUMENT, "sort "
                       "dimension is out of range");
  sim_sort *s = (sim_sort *)sim_palloc(fc, sizeof *s);
  size_t *es = (size_t *)sim_palloc(fc, sizeof *es * (size_t)n);
  if (!s || !es) return XRT_RESOURCE_EXHAUSTED;
  for (int32_t k = 0; k < n; k++) {
    const xrt_shape *sk = sim_shape(fc, op->operands[k]);
    if (sk->rank != s0->rank || sim_numel(sk) != sim_numel(s0) ||
        sim_vbytes(fc, op->results[k]) != sim_bytes(sk))
      return sim_fail_op(fc->cc->err, op, XRT_INVALID_ARGUMENT, "sort "
                         "operands and results must have one shape");
    es[k] = sim_esize(sk->dtype);
  }
  s->n = n;
  s->es = es;
  s->outer = s->inner = 1;
  s->len = s0->rank ? s0->dims[dim] : 1;
  for (int32_t d = 0; d < s0->rank; d++) {
    if (d < dim) s->outer *= s0->dims[d];
    if (d > dim) s->inner *= s0->dims[d];
  }
  sim_sort_fast(fc, op, s);
  if (!s->fast) {
    const int32_t *rets;
    rc = sim_lower_region(fc, &op->regions[0], &s->cmp, &rets, 1, op);
    if (rc) return rc;
    const xrt_ir_type *rt = &fc->f->value_types[rets[0]];
    if (rt->kind != XRT_TYPE_TENSOR || rt->shape.dtype != XRT_PRED ||
        rt->shape.rank != 0)
      return sim_fail_op(fc->cc->err, op, XRT_INVALID_ARGUMENT, "the sort "
                         "comparator must return tensor<i1>");
    s->cargs = op->regions[0].args;
    s->cret = rets[0];
  }
  rc = sim_temp(fc, sizeof(int64_t) * 2 * (size_t)(s->len ? s->len : 1),
                &s->tidx);
  st->data = s;
  st->run = sim_run_sort;
  return rc;
}

/* ======================================================================
 * composite: a call of its decomposition function
 * ==================================================================== */

static xrt_status sim_lower_composite(sim_fcc *fc, const xrt_ir_op *op,
                                      sim_step *st) {
  const xrt_ir_attr *d = sim_attr(op, "decomposition", XRT_ATTR_SYMBOL);
  const xrt_ir_module *m = fc->cc->m;
  if (!d || !d->s)
    return sim_fail_op(fc->cc->err, op, XRT_INVALID_ARGUMENT, "composite "
                       "needs the symbol attribute 'decomposition'");
  for (int32_t i = 0; i < m->num_funcs; i++)
    if (m->funcs[i].name && !strcmp(m->funcs[i].name, d->s))
      return sim_lower_call_to(fc, op, st, i);
  return sim_fail_op(fc->cc->err, op, XRT_NOT_FOUND, "composite "
                     "decomposition @%s is not a function of the module", d->s);
}

/* ======================================================================
 * Tuples and tokens
 * ==================================================================== */

/* Copies operand i into the result block at offs[i]. */
static xrt_status sim_run_tuple(const sim_step *st, void **vals, sim_cx *cx) {
  const size_t *offs = (const size_t *)st->data, *bytes = offs + st->nin;
  char *out = (char *)vals[st->out[0]];
  (void)cx;
  for (int32_t i = 0; i < st->nin; i++)
    if (bytes[i]) memcpy(out + offs[i], vals[st->in[i]], bytes[i]);
  return XRT_OK;
}

static xrt_status sim_lower_tuple(sim_fcc *fc, const xrt_ir_op *op,
                                  sim_step *st) {
  const xrt_ir_type *t = &fc->f->value_types[op->results[0]];
  if (op->num_results != 1 || t->kind != XRT_TYPE_TUPLE ||
      t->num_elems != op->num_operands)
    return sim_fail_op(fc->cc->err, op, XRT_INVALID_ARGUMENT, "bad tuple");
  int32_t n = op->num_operands;
  size_t *d = (size_t *)sim_palloc(fc, sizeof *d * (size_t)(2 * n + 1));
  if (!d) return XRT_RESOURCE_EXHAUSTED;
  for (int32_t i = 0; i < n; i++) {
    d[i] = sim_tuple_off(t, i);
    d[n + i] = sim_vbytes(fc, op->operands[i]);
    if (d[n + i] != sim_type_bytes(&t->elems[i]))
      return sim_fail_op(fc->cc->err, op, XRT_INVALID_ARGUMENT, "tuple "
                         "element %d has the wrong type", (int)i);
  }
  st->data = d;
  st->run = sim_run_tuple;
  return XRT_OK;
}

/* st->n bytes from the operand at byte offset *(size_t *)data. */
static xrt_status sim_run_copy_from(const sim_step *st, void **vals,
                                    sim_cx *cx) {
  (void)cx;
  if (st->n)
    memcpy(vals[st->out[0]],
           (const char *)vals[st->in[0]] + *(const size_t *)st->data,
           (size_t)st->n);
  return XRT_OK;
}

static xrt_status sim_lower_get_tuple_element(sim_fcc *fc, const xrt_ir_op *op,
                                              sim_step *st) {
  const xrt_ir_type *t = &fc->f->value_types[op->operands[0]];
  int64_t k = 0;
  xrt_status rc = sim_int_attr(fc, op, "index", &k);
  if (rc) return rc;
  if (op->num_operands != 1 || op->num_results != 1 ||
      t->kind != XRT_TYPE_TUPLE || k < 0 || k >= t->num_elems ||
      sim_type_bytes(&t->elems[k]) != sim_vbytes(fc, op->results[0]))
    return sim_fail_op(fc->cc->err, op, XRT_INVALID_ARGUMENT,
                       "bad get_tuple_element");
  size_t *off = (size_t *)sim_palloc(fc, sizeof *off);
  if (!off) return XRT_RESOURCE_EXHAUSTED;
  *off = sim_tuple_off(t, (int32_t)k);
  st->data = off;
  st->n = (int64_t)sim_vbytes(fc, op->results[0]);
  st->run = sim_run_copy_from;
  return XRT_OK;
}

/* A token carries no data: after_all orders nothing in a sequential
 * simulator, so it has no step. */
static xrt_status sim_lower_after_all(sim_fcc *fc, const xrt_ir_op *op,
                                      sim_step *st) {
  (void)st;
  for (int32_t i = 0; i < op->num_operands + op->num_results; i++) {
    int32_t id = i < op->num_operands ? op->operands[i]
                                      : op->results[i - op->num_operands];
    if (fc->f->value_types[id].kind != XRT_TYPE_TOKEN)
      return sim_fail_op(fc->cc->err, op, XRT_INVALID_ARGUMENT,
                         "after_all takes and makes tokens");
  }
  return XRT_OK;
}

/* ======================================================================
 * infeed, outfeed, send, recv: host functions xrt.infeed ... on tensors
 * ==================================================================== */

/* The tensor values of ids[0..n) (pool memory). */
static int32_t *sim_ctrl_tensors(sim_fcc *fc, const int32_t *ids, int32_t n,
                                 int32_t *count) {
  int32_t *t = (int32_t *)sim_palloc(fc, sizeof *t * (size_t)(n + 1));
  *count = 0;
  for (int32_t i = 0; t && i < n; i++)
    if (fc->f->value_types[ids[i]].kind != XRT_TYPE_TOKEN) t[(*count)++] = ids[i];
  return t;
}

static xrt_status sim_lower_host_io(sim_fcc *fc, const xrt_ir_op *op,
                                    sim_step *st, const char *target) {
  int32_t nin = 0, nout = 0;
  int32_t *in = sim_ctrl_tensors(fc, op->operands, op->num_operands, &nin);
  int32_t *out = sim_ctrl_tensors(fc, op->results, op->num_results, &nout);
  if (!in || !out) return XRT_RESOURCE_EXHAUSTED;
  return sim_lower_host_call(fc, op, st, target, in, nin, out, nout);
}

static xrt_status sim_lower_infeed(sim_fcc *fc, const xrt_ir_op *op,
                                   sim_step *st) {
  return sim_lower_host_io(fc, op, st, "xrt.infeed");
}

static xrt_status sim_lower_outfeed(sim_fcc *fc, const xrt_ir_op *op,
                                    sim_step *st) {
  return sim_lower_host_io(fc, op, st, "xrt.outfeed");
}

static xrt_status sim_lower_send(sim_fcc *fc, const xrt_ir_op *op,
                                 sim_step *st) {
  return sim_lower_host_io(fc, op, st, "xrt.send");
}

static xrt_status sim_lower_recv(sim_fcc *fc, const xrt_ir_op *op,
                                 sim_step *st) {
  return sim_lower_host_io(fc, op, st, "xrt.recv");
}

/* ======================================================================
 * chlo.scan: operands (inputs..., inits...), results (outputs...,
 * carries...); the body takes the inputs' slices at position i of
 * `dimension` and the carries, and returns the outputs' slices at i and
 * the new carries.  is_reverse runs i from the end.
 * ==================================================================== */

/* A tensor seen as outer x len x inner around the scan dimension. */
typedef struct sim_scan_view {
  int64_t outer, inner;
  size_t es;
} sim_scan_view;

typedef struct sim_scan {
  int32_t ni, nc, no;
  int64_t len;
  int reverse;
  const sim_scan_view *iv, *ov;  /* per input, per output */
  const size_t *cbytes;          /* per carry */
  sim_plan body;
  const int32_t *bargs, *brets;
  const int32_t *islice;         /* pseudo values: one input slice each */
  const int32_t *bufa, *bufb;    /* pseudo values: two buffers per carry */
} sim_scan;

/* Copies slice i between a whole tensor and a contiguous slice buffer. */
static void sim_scan_slice(const sim_scan_view *v, int64_t len, int64_t i,
                           char *whole, char *slice, int to_slice) {
  size_t row = (size_t)v->inner * v->es;
  if (!row) return;
  for (int64_t o = 0; o < v->outer; o++) {
    char *w = whole + (size_t)((o * len + i) * v->inner) * v->es;
    char *s = slice + (size_t)o * row;
    if (to_slice) memcpy(s, w, row);
    else memcpy(w, s, row);
  }
}

static xrt_status sim_run_scan(const sim_step *st, void **vals, sim_cx *cx) {
  const sim_scan *s = (const sim_scan *)st->data;
  int32_t ni = s->ni, nc = s->nc, no = s->no;
  for (int32_t j = 0; j < nc; j++) { /* carries start as the inits */
    void *a = vals[s->bufa[j]];
    if (s->cbytes[j]) memcpy(a, vals[st->in[ni + j]], s->cbytes[j]);
    vals[s->bargs[ni + j]] = a;
  }
  for (int64_t t = 0; t < s->len; t++) {
    int64_t i = s->reverse ? s->len - 1 - t : t;
    for (int32_t k = 0; k < ni; k++) {
      char *sl = (char *)vals[s->islice[k]];
      sim_scan_slice(&s->iv[k], s->len, i, (char *)vals[st->in[k]], sl, 1);
      vals[s->bargs[k]] = sl;
    }
    xrt_status rc = sim_run_plan(&s->body, vals, cx);
    if (rc) return rc;
    for (int32_t k = 0; k < no; k++)
      sim_scan_slice(&s->ov[k], s->len, i, (char *)vals[st->out[k]],
                     (char *)vals[s->brets[k]], 0);
    for (int32_t j = 0; j < nc; j++) { /* into the buffer not in use */
      void *a = vals[s->bufa[j]];
      void *next = vals[s->bargs[ni + j]] == a ? vals[s->bufb[j]] : a;
      if (s->cbytes[j]) memcpy(next, vals[s->brets[no + j]], s->cbytes[j]);
    }
    for (int32_t j = 0; j < nc; j++) {
      void *a = vals[s->bufa[j]];
      vals[s->bargs[ni + j]] = vals[s->bargs[ni + j]] == a ? vals[s->bufb[j]] : a;
    }
  }
  for (int32_t j = 0; j < nc; j++)
    if (s->cbytes[j])
      memcpy(vals[st->out[no + j]], vals[s->bargs[ni + j]], s->cbytes[j]);
  return XRT_OK;
}

/* How many operands are inits: operandSegmentSizes, else the trailing
 * operands whose body argument has the operand's own type (an input's
 * argument is a slice, one rank lower). */
static int32_t sim_scan_num_inits(const sim_fcc *fc, const xrt_ir_op *op) {
  const xrt_ir_attr *seg = sim_attr(op, "operandSegmentSizes", XRT_ATTR_INTS);
  if (seg && seg->n == 2) return (int32_t)seg->ints[1];
  const xrt_ir_region *r = &op->regions[0];
  int32_t nc = 0;
  for (int32_t k = op->num_operands - 1; k >= 0; k--) {
    const xrt_shape *a = sim_shape(fc, op->operands[k]);
    const xrt_shape *b = sim_shape(fc, r->args[k]);
    if (a->rank != b->rank) break;
    nc++;
  }
  return nc;
}

static xrt_status sim_scan_view_of(sim_fcc *fc, const xrt_ir_op *op,
                                   int32_t id, int64_t dim, int64_t *len,
                                   sim_scan_view *v) {
  const xrt_shape *s = sim_shape(fc, id);
  if (fc->f->value_types[id].kind != XRT_TYPE_TENSOR || dim >= s->rank ||
      (*len >= 0 && s->dims[dim] != *len))
    return sim_fail_op(fc->cc->err, op, XRT_INVALID_ARGUMENT, "chlo.scan "
                       "inputs and outputs must share the scan dimension");
  *len = s->dims[dim];
  v->outer = v->inner = 1;
  for (int32_t d = 0; d < s->rank; d++) {
    if (d < dim) v->outer *= s->dims[d];
    if (d > dim) v->inner *= s->dims[d];
  }
  v->es = sim_esize(s->dtype);
  return XRT_OK;
}

static int sim_attr_true(const xrt_ir_op *op, const char *name) {
  const xrt_ir_attr *a = xrt_ir_op_attr(op, name);
  if (!a) return 0;
  return a->kind == XRT_ATTR_UNIT ||
         ((a->kind == XRT_ATTR_BOOL || a->kind == XRT_ATTR_INT) && a->i != 0);
}

static xrt_status sim_scan_buffers(sim_fcc *fc, const xrt_ir_op *op,
                                   sim_scan *s) {
  int32_t *isl = (int32_t *)sim_palloc(fc, sizeof *isl * (size_t)(s->ni + 1));
  int32_t *a = (int32_t *)sim_palloc(fc, sizeof *a * (size_t)(s->nc + 1));
  int32_t *b = (int32_t *)sim_palloc(fc, sizeof *b * (size_t)(s->nc + 1));
  size_t *cb = (size_t *)sim_palloc(fc, sizeof *cb * (size_t)(s->nc + 1));
  if (!isl || !a || !b || !cb) return XRT_RESOURCE_EXHAUSTED;
  xrt_status rc = XRT_OK;
  for (int32_t k = 0; k < s->ni && !rc; k++)
    rc = sim_temp(fc, (size_t)(s->iv[k].outer * s->iv[k].inner) * s->iv[k].es,
                  &isl[k]);
  for (int32_t j = 0; j < s->nc && !rc; j++) {
    cb[j] = sim_vbytes(fc, op->operands[s->ni + j]);
    if (cb[j] != sim_vbytes(fc, op->results[s->no + j]))
      return sim_fail_op(fc->cc->err, op, XRT_INVALID_ARGUMENT, "chlo.scan "
                         "carry %d changes type", (int)j);
    rc = sim_temp(fc, cb[j], &a[j]);
    if (!rc) rc = sim_temp(fc, cb[j], &b[j]);
  }
  s->islice = isl, s->bufa = a, s->bufb = b, s->cbytes = cb;
  return rc;
}

static xrt_status sim_lower_chlo_scan(sim_fcc *fc, const xrt_ir_op *op,
                                      sim_step *st) {
  int64_t dim = 0, len = -1;
  xrt_status rc = sim_int_attr(fc, op, "dimension", &dim);
  if (rc) return rc;
  if (op->num_regions != 1 || op->regions[0].num_args != op->num_operands)
    return sim_fail_op(fc->cc->err, op, XRT_INVALID_ARGUMENT, "bad chlo.scan");
  int32_t nc = sim_scan_num_inits(fc, op);
  int32_t ni = op->num_operands - nc, no = op->num_results - nc;
  if (nc < 0 || ni < 0 || no < 0 || ni + no == 0 || dim < 0)
    return sim_fail_op(fc->cc->err, op, XRT_INVALID_ARGUMENT, "bad chlo.scan "
                       "operands, results or dimension");
  sim_scan *s = (sim_scan *)sim_palloc(fc, sizeof *s);
  sim_scan_view *iv = (sim_scan_view *)sim_palloc(fc, sizeof *iv * (size_t)(ni + 1));
  sim_scan_view *ov = (sim_scan_view *)sim_palloc(fc, sizeof *ov * (size_t)(no + 1));
  if (!s || !iv || !ov) return XRT_RESOURCE_EXHAUSTED;
  for (int32_t k = 0; k < ni && !rc; k++)
    rc = sim_scan_view_of(fc, op, op->operands[k], dim, &len, &iv[k]);
  for (int32_t k = 0; k < no && !rc; k++)
    rc = sim_scan_view_of(fc, op, op->results[k], dim, &len, &ov[k]);
  if (rc) return rc;
  s->ni = ni, s->nc = nc, s->no = no, s->len = len;
  s->iv = iv, s->ov = ov;
  s->reverse = sim_attr_true(op, "is_reverse");
  if ((rc = sim_scan_buffers(fc, op, s))) return rc;
  rc = sim_lower_region(fc, &op->regions[0], &s->body, &s->brets,
                        op->num_results, op);
  if (rc) return rc;
  for (int32_t k = 0; k < no; k++)
    if (sim_vbytes(fc, s->brets[k]) != (size_t)(ov[k].outer * ov[k].inner) * ov[k].es)
      return sim_fail_op(fc->cc->err, op, XRT_INVALID_ARGUMENT, "chlo.scan "
                         "body output %d does not fit result %d", (int)k, (int)k);
  s->bargs = op->regions[0].args;
  st->data = s;
  st->run = sim_run_scan;
  return XRT_OK;
}

/* replica_id and partition_id: see "Launches and collectives". */
/* ----------------------------------------------------------------------
 * Linear algebra and numerics: convolution, fft, triangular_solve,
 * cholesky, batch norm, random numbers, chlo.ragged_dot.
 * -------------------------------------------------------------------- */

/* ======================================================================
 * Shared: dot-product kernels by compute type
 * ==================================================================== */

/* An accumulator of any compute type. */
typedef union sim_la_acc {
  float f;
  double d;
  uint32_t u32;
  uint64_t u64;
  uint8_t b;
  sim_c64 c64;
  sim_c128 c128;
} sim_la_acc;

/* acc += sum_i a[i*as] * b[i*bs] (byte strides), in the compute type. */
typedef void (*sim_la_dotn_fn)(sim_la_acc *acc, const char *a, ptrdiff_t as,
                               const char *b, ptrdiff_t bs, int64_t n);
typedef void (*sim_la_store_fn)(void *out, const sim_la_acc *acc);

/* Zeros that stand for padding elements (any element size, stride 0). */
static const double sim_la_zero[2] = {0.0, 0.0};

#define SIM_LA_DOTN(NAME, T, FIELD, LD, MAC)                                 \
  static void NAME(sim_la_acc *acc, const char *a, ptrdiff_t as,            \
                   const char *b, ptrdiff_t bs, int64_t n) {                \
    for (int64_t i = 0; i < n; i++, a += as, b += bs)                       \
      MAC(acc->FIELD, LD(*(const T *)(const void *)a),                      \
          LD(*(const T *)(const void *)b));                                 \
  }
#define SIM_LA_MAC_PRED(acc, a, b) ((acc) = (uint8_t)((acc) | ((a) & (b))))

SIM_LA_DOTN(sim_la_dotn_f32, float, f, SIM_LD_ID, SIM_MAC_F)
SIM_LA_DOTN(sim_la_dotn_f64, double, d, SIM_LD_ID, SIM_MAC_F)
SIM_LA_DOTN(sim_la_dotn_f16, uint16_t, f, SIM_LD_F16, SIM_MAC_F)
SIM_LA_DOTN(sim_la_dotn_bf16, uint16_t, f, SIM_LD_BF16, SIM_MAC_F)
SIM_LA_DOTN(sim_la_dotn_u8, uint8_t, u32, SIM_LD_ID, SIM_MAC_U32)
SIM_LA_DOTN(sim_la_dotn_u16, uint16_t, u32, SIM_LD_ID, SIM_MAC_U32)
SIM_LA_DOTN(sim_la_dotn_u32, uint32_t, u32, SIM_LD_ID, SIM_MAC_U32)
SIM_LA_DOTN(sim_la_dotn_u64, uint64_t, u64, SIM_LD_ID, SIM_MAC_U64)
SIM_LA_DOTN(sim_la_dotn_c64, sim_c64, c64, SIM_LD_ID, SIM_MAC_C64)
SIM_LA_DOTN(sim_la_dotn_c128, sim_c128, c128, SIM_LD_ID, SIM_MAC_C128)
SIM_LA_DOTN(sim_la_dotn_pred, uint8_t, b, SIM_LD_ID, SIM_LA_MAC_PRED)

#define SIM_LA_STORE(NAME, T, EXPR)                                          \
  static void NAME(void *out, const sim_la_acc *acc) {                      \
    *(T *)out = (T)(EXPR);                                                  \
  }
SIM_LA_STORE(sim_la_store_f32, float, acc->f)
SIM_LA_STORE(sim_la_store_f64, double, acc->d)
SIM_LA_STORE(sim_la_store_f16, uint16_t, xrt_f32_to_f16(acc->f))
SIM_LA_STORE(sim_la_store_bf16, uint16_t, xrt_f32_to_bf16(acc->f))
SIM_LA_STORE(sim_la_store_u8, uint8_t, acc->u32)
SIM_LA_STORE(sim_la_store_u16, uint16_t, acc->u32)
SIM_LA_STORE(sim_la_store_u32, uint32_t, acc->u32)
SIM_LA_STORE(sim_la_store_u64, uint64_t, acc->u64)
static void sim_la_store_c64(void *out, const sim_la_acc *acc) {
  *(sim_c64 *)out = acc->c64;
}
static void sim_la_store_c128(void *out, const sim_la_acc *acc) {
  *(sim_c128 *)out = acc->c128;
}
SIM_LA_STORE(sim_la_store_pred, uint8_t, acc->b)

/* Kernels for a compute type; 0 if there are none.  Signed and sub-byte
 * integers use the unsigned kernels (same bits mod 2^w). */
static int sim_la_kernels(xrt_dtype ct, sim_la_dotn_fn *dotn,
                          sim_la_store_fn *store) {
  switch (ct) {
  case XRT_F32: *dotn = sim_la_dotn_f32, *store = sim_la_store_f32; return 1;
  case XRT_F64: *dotn = sim_la_dotn_f64, *store = sim_la_store_f64; return 1;
  case XRT_F16: *dotn = sim_la_dotn_f16, *store = sim_la_store_f16; return 1;
  case XRT_BF16: *dotn = sim_la_dotn_bf16, *store = sim_la_store_bf16; return 1;
  case XRT_S8: case XRT_U8: case XRT_S2: case XRT_S4: case XRT_U2:
  case XRT_U4: *dotn = sim_la_dotn_u8, *store = sim_la_store_u8; return 1;
  case XRT_S16: case XRT_U16:
    *dotn = sim_la_dotn_u16, *store = sim_la_store_u16; return 1;
  case XRT_S32: case XRT_U32:
    *dotn = sim_la_dotn_u32, *store = sim_la_store_u32; return 1;
  case XRT_S64: case XRT_U64:
    *dotn = sim_la_dotn_u64, *store = sim_la_store_u64; return 1;
  case XRT_C64: *dotn = sim_la_dotn_c64, *store = sim_la_store_c64; return 1;
  case XRT_C128: *dotn = sim_la_dotn_c128, *store = sim_la_store_c128; return 1;
  case XRT_PRED: *dotn = sim_la_dotn_pred, *store = sim_la_store_pred; return 1;
  default: return 0;
  }
}

static int sim_la_is_subbyte(xrt_dtype t) {
  return t == XRT_S2 || t == XRT_S4 || t == XRT_U2 || t == XRT_U4;
}

/* Operands and result of a contraction op: operands are converted to the
 * compute type (the result type; f32 for small floats) before the kernel
 * runs, and the result converted back, like the interpreter, which
 * computes a convolution of i8 operands into an i32 result in i32. */
typedef struct sim_la_cvt {
  xrt_dtype lt, rt, ot, ct;
  int32_t ltmp, rtmp, otmp; /* pseudo values, or -1 */
  int64_t lnumel, rnumel, onumel;
  sim_la_dotn_fn dotn;
  sim_la_store_fn store;
  size_t cs; /* compute element size */
} sim_la_cvt;

static xrt_status sim_la_cvt_init(sim_fcc *fc, const xrt_ir_op *op,
                                  sim_la_cvt *c, int32_t lid, int32_t rid) {
  const xrt_ir_type *types = fc->f->value_types;
  const xrt_shape *L = sim_shape(fc, lid), *R = sim_shape(fc, rid);
  const xrt_shape *O = sim_shape(fc, op->results[0]);
  if (types[lid].quant || types[rid].quant || types[op->results[0]].quant)
    return sim_fail_op(fc->cc->err, op, XRT_UNIMPLEMENTED, "%s of quantized "
                       "tensors is not supported by the simulator", op->name);
  c->lt = L->dtype, c->rt = R->dtype, c->ot = O->dtype;
  c->ct = sim_is_minifloat(O->dtype) ? XRT_F32 : O->dtype;
  if (!sim_la_kernels(c->ct, &c->dotn, &c->store) ||
      !sim_num_supported(c->lt) || !sim_num_supported(c->rt))
    return sim_unsupported_type(fc, op, O->dtype);
  c->cs = sim_esize(c->ct);
  c->lnumel = sim_numel(L), c->rnumel = sim_numel(R), c->onumel = sim_numel(O);
  c->ltmp = c->rtmp = c->otmp = -1;
  xrt_status rc = XRT_OK;
  if (c->lt != c->ct) rc = sim_temp(fc, (size_t)c->lnumel * c->cs, &c->ltmp);
  if (!rc && c->rt != c->ct)
    rc = sim_temp(fc, (size_t)c->rnumel * c->cs, &c->rtmp);
  if (!rc && c->ot != c->ct)
    rc = sim_temp(fc, (size_t)c->onumel * c->cs, &c->otmp);
  return rc;
}

/* Operands in the compute type and where the kernel writes its result. */
static void sim_la_cvt_pre(const sim_la_cvt *c, void **vals, const void **l,
                           const void **r, void **res, void *out) {
  if (c->ltmp >= 0) {
    sim_convert(vals[c->ltmp], *l, c->lnumel, c->lt, c->ct);
    *l = vals[c->ltmp];
  }
  if (c->rtmp >= 0) {
    sim_convert(vals[c->rtmp], *r, c->rnumel, c->rt, c->ct);
    *r = vals[c->rtmp];
  }
  *res = c->otmp >= 0 ? vals[c->otmp] : out;
}

static void sim_la_cvt_post(const sim_la_cvt *c, void **vals, void *out) {
  if (c->otmp >= 0) sim_convert(out, vals[c->otmp], c->onumel, c->ct, c->ot);
  if (sim_la_is_subbyte(c->ot)) sim_wrap_all(c->ot, out, c->onumel);
}

/* Row-major multi-index increment; 0 once every index wrapped. */
static int sim_la_next(int64_t *idx, const int64_t *dims, int n) {
  for (int k = n - 1; k >= 0; k--) {
    if (++idx[k] < dims[k]) return 1;
    idx[k] = 0;
  }
  return 0;
}

static int sim_la_flag(const xrt_ir_op *op, const char *name, int dflt) {
  const xrt_ir_attr *a = xrt_ir_op_attr(op, name);
  if (a && (a->kind == XRT_ATTR_BOOL || a->kind == XRT_ATTR_INT))
    return a->i != 0;
  return dflt;
}

static const char *sim_la_enum(const xrt_ir_op *op, const char *name) {
  const xrt_ir_attr *a = xrt_ir_op_attr(op, name);
  return a && (a->kind == XRT_ATTR_ENUM || a->kind == XRT_ATTR_STRING) && a->s
             ? a->s
             : "";
}

/* An integer element of any integer type as int64 (u64 wraps). */
static int64_t sim_la_geti(xrt_dtype t, const void *base, int64_t i) {
  sim_num v;
  sim_load(t, (const char *)base + (size_t)i * sim_esize(t), &v);
  return v.is_int ? v.i : sim_float_to_i64(v.re);
}

/* ======================================================================
 * convolution, dynamic_conv
 * ==================================================================== */

/* result[b, o, p...] = sum over kernel positions k... and input features
 * i of lhs[batch, feature, x...] * rhs[k..., i, o], where the lhs
 * position per spatial dimension comes from a table: tab[p*K + k] is the
 * element offset of the lhs row that window position k of output p reads,
 * or -1 for padding and lhs-dilation holes. */
typedef struct sim_conv {
  sim_la_cvt cv;
  int32_t ns;                   /* spatial dimensions */
  int64_t ws[XRT_MAX_RANK], ld[XRT_MAX_RANK], rd[XRT_MAX_RANK];
  uint8_t rev[XRT_MAX_RANK];
  int64_t K[XRT_MAX_RANK], in[XRT_MAX_RANK], out[XRT_MAX_RANK];
  int64_t lsp[XRT_MAX_RANK], rsp[XRT_MAX_RANK], osp[XRT_MAX_RANK];
  int64_t toff[XRT_MAX_RANK];   /* start of each dimension's table */
  int64_t tab_n;
  int64_t lb, lf, rif, rof, ob, of; /* strides (elements) */
  int64_t NB, O, Cg;            /* result batch, result features, features
                                   per group */
  int64_t nb_per_group, o_per_bgroup, o_per_fgroup;
  int64_t pad[2 * XRT_MAX_RANK];
  const int64_t *tab;           /* static padding: tables, else NULL */
  int32_t ttmp;                 /* dynamic padding: tables at run time */
  int zero_mul;                 /* floats multiply padding zeros too */
  xrt_dtype pt;                 /* dynamic_conv: padding element type */
} sim_conv;

/* Fills the tables for padding pad (lo, hi per dimension). */
static void sim_conv_tables(const sim_conv *c, const int64_t *pad,
                            int64_t *tab) {
  for (int32_t d = 0; d < c->ns; d++) {
    int64_t *t = tab + c->toff[d], K = c->K[d];
    for (int64_t p = 0; p < c->out[d]; p++)
      for (int64_t k = 0; k < K; k++) {
        int64_t kk = c->rev[d] ? K - 1 - k : k;
        int64_t x = p * c->ws[d] + kk * c->rd[d] - pad[2 * d];
        int ok = x >= 0 && x % c->ld[d] == 0 && x / c->ld[d] < c->in[d];
        t[p * K + k] = ok ? x / c->ld[d] * c->lsp[d] : -1;
      }
  }
}

/* The number of windows along spatial dimension d (spec C26). */
static int64_t sim_conv_windows(const sim_conv *c, int32_t d, int64_t lo,
                                int64_t hi) {
  int64_t dil = c->in[d] == 0 ? 0 : (c->in[d] - 1) * c->ld[d] + 1;
  int64_t padded = lo + dil + hi;
  int64_t win = c->K[d] == 0 ? 0 : (c->K[d] - 1) * c->rd[d] + 1;
  if (padded <= 0 || win > padded) return 0;
  return (padded - win) / c->ws[d] + 1;
}

/* One result element: the sum over kernel positions and features. */
static void sim_conv_elem(const sim_conv *c, const int64_t *tab,
                          const char *L, const char *R, int64_t lbase,
                          int64_t rbase, const int64_t *p, sim_la_acc *acc) {
  int64_t k[XRT_MAX_RANK] = {0};
  size_t cs = c->cv.cs;
  ptrdiff_t lfs = (ptrdiff_t)(c->lf * (int64_t)cs);
  ptrdiff_t rfs = (ptrdiff_t)(c->rif * (int64_t)cs);
  do {
    int64_t loff = lbase, roff = rbase;
    int valid = 1;
    for (int32_t d = 0; d < c->ns; d++) {
      int64_t t = tab[c->toff[d] + p[d] * c->K[d] + k[d]];
      valid &= t >= 0;
      loff += t;
      roff += k[d] * c->rsp[d];
    }
    const char *rp = R + (size_t)roff * cs;
    if (valid)
      c->cv.dotn(acc, L + (size_t)loff * cs, lfs, rp, rfs, c->Cg);
    else if (c->zero_mul) /* as the interpreter: 0 * w, so 0 * inf = nan */
      c->cv.dotn(acc, (const char *)sim_la_zero, 0, rp, rfs, c->Cg);
  } while (sim_la_next(k, c->K, c->ns));
}

static void sim_conv_run_tabs(const sim_conv *c, const int64_t *tab,
                              const char *L, const char *R, char *res) {
  int64_t p[XRT_MAX_RANK] = {0};
  size_t cs = c->cv.cs;
  if (c->cv.onumel == 0) return;
  do {
    int64_t obase = 0;
    for (int32_t d = 0; d < c->ns; d++) obase += p[d] * c->osp[d];
    for (int64_t b = 0; b < c->NB; b++)
      for (int64_t o = 0; o < c->O; o++) {
        int64_t lbatch = o / c->o_per_bgroup * c->nb_per_group + b;
        int64_t lbase = lbatch * c->lb + o / c->o_per_fgroup * c->Cg * c->lf;
        sim_la_acc acc;
        memset(&acc, 0, sizeof acc);
        sim_conv_elem(c, tab, L, R, lbase, o * c->rof, p, &acc);
        c->cv.store(res + (size_t)(obase + b * c->ob + o * c->of) * cs, &acc);
      }
  } while (sim_la_next(p, c->out, c->ns));
}

static xrt_status sim_run_conv(const sim_step *st, void **vals, sim_cx *cx) {
  const sim_conv *c = (const sim_conv *)st->data;
  const void *l = vals[st->in[0]], *r = vals[st->in[1]];
  void *out = vals[st->out[0]], *res;
  const int64_t *tab = c->tab;
  if (!tab) {
    int64_t pad[2 * XRT_MAX_RANK];
    const void *pv = vals[st->in[2]];
    xrt_dtype pt = c->pt;
    for (int32_t d = 0; d < c->ns; d++) {
      pad[2 * d] = sim_la_geti(pt, pv, 2 * d);
      pad[2 * d + 1] = sim_la_geti(pt, pv, 2 * d + 1);
      if (pad[2 * d] < -(1ll << 40) || pad[2 * d] > (1ll << 40) ||
          pad[2 * d + 1] < -(1ll << 40) || pad[2 * d + 1] > (1ll << 40))
        return sim_fail_op(cx->err, st->op, XRT_OUT_OF_RANGE, "padding of "
                           "spatial dimension %d is out of range", (int)d);
      int64_t n = sim_conv_windows(c, d, pad[2 * d], pad[2 * d + 1]);
      if (n != c->out[d])
        return sim_fail_op(cx->err, st->op, XRT_INVALID_ARGUMENT, "padding "
                           "[%lld, %lld] of spatial dimension %d gives %lld "
                           "windows, but the result has %lld",
                           (long long)pad[2 * d], (long long)pad[2 * d + 1],
                           (int)d, (long long)n, (long long)c->out[d]);
    }
    int64_t *t = (int64_t *)vals[c->ttmp];
    sim_conv_tables(c, pad, t);
    tab = t;
  }
  sim_la_cvt_pre(&c->cv, vals, &l, &r, &res, out);
  sim_conv_run_tabs(c, tab, (const char *)l, (const char *)r, (char *)res);
  sim_la_cvt_post(&c->cv, vals, out);
  return XRT_OK;
}

static int64_t sim_conv_dn(const xrt_ir_attr *dn, const char *name, int *ok) {
  const xrt_ir_attr *a = xrt_ir_attr_field(dn, name);
  if (!a || a->kind != XRT_ATTR_INT) {
    *ok = 0;
    return 0;
  }
  return a->i;
}

static const int64_t *sim_conv_dns(const xrt_ir_attr *dn, const char *name,
                                   int64_t want, int *ok) {
  const xrt_ir_attr *a = xrt_ir_attr_field(dn, name);
  if (!a || a->kind != XRT_ATTR_INTS || a->n != want) {
    *ok = 0;
    return NULL;
  }
  return a->ints;
}

/* An optional per-spatial-dimension list: absent gives dflt. */
static int sim_conv_list(const xrt_ir_op *op, const char *name, int32_t ns,
                         int64_t dflt, int64_t *out) {
  const xrt_ir_attr *a = sim_attr(op, name, XRT_ATTR_INTS);
  if (xrt_ir_op_attr(op, name) && !a) return 0;
  if (a && a->n != ns) return 0;
  for (int32_t d = 0; d < ns; d++) out[d] = a ? a->ints[d] : dflt;
  return 1;
}

static int64_t sim_conv_count(const xrt_ir_op *op, const char *name) {
  const xrt_ir_attr *a = sim_attr(op, name, XRT_ATTR_INT);
  return a ? a->i : 1;
}

static int sim_dim_ok(int64_t d, int32_t rank) { return d >= 0 && d < rank; }

/* Dimension numbers into strides and sizes. */
static int sim_conv_dims(sim_fcc *fc, const xrt_ir_op *op, sim_conv *c) {
  const xrt_shape *L = sim_shape(fc, op->operands[0]);
  const xrt_shape *R = sim_shape(fc, op->operands[1]);
  const xrt_shape *O = sim_shape(fc, op->results[0]);
  const xrt_ir_attr *dn = xrt_ir_op_attr(op, "dimension_numbers");
  int ok = 1;
  int32_t ns = c->ns, rk = L->rank;
  int64_t ib = sim_conv_dn(dn, "input_batch_dimension", &ok);
  int64_t ifd = sim_conv_dn(dn, "input_feature_dimension", &ok);
  int64_t kif = sim_conv_dn(dn, "kernel_input_feature_dimension", &ok);
  int64_t kof = sim_conv_dn(dn, "kernel_output_feature_dimension", &ok);
  int64_t obd = sim_conv_dn(dn, "output_batch_dimension", &ok);
  int64_t ofd = sim_conv_dn(dn, "output_feature_dimension", &ok);
  const int64_t *isp = sim_conv_dns(dn, "input_spatial_dimensions", ns, &ok);
  const int64_t *ksp = sim_conv_dns(dn, "kernel_spatial_dimensions", ns, &ok);
  const int64_t *osp = sim_conv_dns(dn, "output_spatial_dimensions", ns, &ok);
  ok = ok && sim_dim_ok(ib, rk) && sim_dim_ok(ifd, rk) && sim_dim_ok(kif, rk) &&
       sim_dim_ok(kof, rk) && sim_dim_ok(obd, rk) && sim_dim_ok(ofd, rk);
  for (int32_t d = 0; ok && d < ns; d++)
    ok = sim_dim_ok(isp[d], rk) && sim_dim_ok(ksp[d], rk) &&
         sim_dim_ok(osp[d], rk);
  if (!ok) return 0;
  int64_t ls[XRT_MAX_RANK], rs[XRT_MAX_RANK], os[XRT_MAX_RANK];
  sim_strides(L, ls);
  sim_strides(R, rs);
  sim_strides(O, os);
  for (int32_t d = 0; d < ns; d++) {
    c->K[d] = R->dims[ksp[d]], c->in[d] = L->dims[isp[d]];
    c->out[d] = O->dims[osp[d]];
    c->lsp[d] = ls[isp[d]], c->rsp[d] = rs[ksp[d]], c->osp[d] = os[osp[d]];
  }
  c->lb = ls[ib], c->lf = ls[ifd], c->rif = rs[kif], c->rof = rs[kof];
  c->ob = os[obd], c->of = os[ofd];
  c->NB = O->dims[obd], c->O = O->dims[ofd], c->Cg = R->dims[kif];
  int64_t bg = sim_conv_count(op, "batch_group_count");
  int64_t fg = sim_conv_count(op, "feature_group_count");
  if (bg < 1 || fg < 1 || L->dims[ib] % bg || c->O % bg || c->O % fg ||
      c->Cg * fg != L->dims[ifd] || c->NB * bg != L->dims[ib] ||
      c->O != R->dims[kof])
    return 0;
  c->nb_per_group = c->NB;
  c->o_per_bgroup = c->O / bg ? c->O / bg : 1;
  c->o_per_fgroup = c->O / fg ? c->O / fg : 1;
  return 1;
}

static int sim_gemm_lower_conv(sim_fcc *fc, const sim_conv *c, sim_step *st,
                               xrt_status *rc);

static xrt_status sim_lower_conv_common(sim_fcc *fc, const xrt_ir_op *op,
                                        sim_step *st, int dynamic) {
  const xrt_shape *L = sim_shape(fc, op->operands[0]);
  sim_conv *c = (sim_conv *)sim_palloc(fc, sizeof *c);
  if (!c) return XRT_RESOURCE_EXHAUSTED;
  c->ns = L->rank - 2;
  int ok = op->num_operands == 2 + dynamic && c->ns >= 0 &&
           sim_shape(fc, op->operands[1])->rank == L->rank &&
           sim_shape(fc, op->results[0])->rank == L->rank;
  ok = ok && sim_conv_list(op, "window_strides", c->ns, 1, c->ws) &&
       sim_conv_list(op, "lhs_dilation", c->ns, 1, c->ld) &&
       sim_conv_list(op, "rhs_dilation", c->ns, 1, c->rd) &&
       sim_conv_dims(fc, op, c);
  int64_t rev[XRT_MAX_RANK];
  ok = ok && sim_conv_list(op, "window_reversal", c->ns, 0, rev);
  const xrt_ir_attr *pa = sim_attr(op, "padding", XRT_ATTR_INTS);
  if (!dynamic && pa && pa->n != 2 * c->ns) ok = 0;
  for (int32_t d = 0; ok && d < c->ns; d++) {
    ok = c->ws[d] > 0 && c->ld[d] > 0 && c->rd[d] > 0;
    c->rev[d] = rev[d] != 0;
    c->pad[2 * d] = pa && !dynamic ? pa->ints[2 * d] : 0;
    c->pad[2 * d + 1] = pa && !dynamic ? pa->ints[2 * d + 1] : 0;
    if (ok && !dynamic)
      ok = c->pad[2 * d] > -(1ll << 40) && c->pad[2 * d] < (1ll << 40) &&
           c->pad[2 * d + 1] > -(1ll << 40) && c->pad[2 * d + 1] < (1ll << 40) &&
           sim_conv_windows(c, d, c->pad[2 * d], c->pad[2 * d + 1]) ==
               c->out[d];
  }
  if (!ok)
    return sim_fail_op(fc->cc->err, op, XRT_INVALID_ARGUMENT, "%s: invalid "
                       "dimension numbers, window attributes or shapes",
                       op->name);
  xrt_status rc = sim_la_cvt_init(fc, op, &c->cv, op->operands[0],
                                  op->operands[1]);
  if (rc) return rc;
  c->zero_mul = sim_dtype_is_float(c->cv.ct) || sim_dtype_is_complex(c->cv.ct);
  for (int32_t d = 0; d < c->ns; d++) {
    c->toff[d] = c->tab_n;
    c->tab_n += c->out[d] * c->K[d];
  }
  size_t tb = sizeof(int64_t) * (size_t)(c->tab_n ? c->tab_n : 1);
  c->ttmp = -1;
  if (dynamic) {
    const xrt_shape *ps = sim_shape(fc, op->operands[2]);
    c->pt = ps->dtype;
    if (sim_numel(ps) != 2 * c->ns || !sim_num_supported(c->pt) ||
        sim_dtype_is_float(c->pt) || sim_dtype_is_complex(c->pt))
      return sim_fail_op(fc->cc->err, op, XRT_INVALID_ARGUMENT, "%s: padding "
                         "must be an integer tensor<%dx2>", op->name,
                         (int)c->ns);
    rc = sim_temp(fc, tb, &c->ttmp);
    if (rc) return rc;
  } else {
    int64_t *t = (int64_t *)sim_palloc(fc, tb);
    if (!t) return XRT_RESOURCE_EXHAUSTED;
    sim_conv_tables(c, c->pad, t);
    c->tab = t;
    xrt_status grc; /* large f32/f64 convolutions: packed GEMM */
    if (sim_gemm_lower_conv(fc, c, st, &grc)) return grc;
  }
  st->data = c;
  st->run = sim_run_conv;
  return XRT_OK;
}

static xrt_status sim_lower_convolution(sim_fcc *fc, const xrt_ir_op *op,
                                        sim_step *st) {
  return sim_lower_conv_common(fc, op, st, 0);
}

static xrt_status sim_lower_dynamic_conv(sim_fcc *fc, const xrt_ir_op *op,
                                         sim_step *st) {
  return sim_lower_conv_common(fc, op, st, 1);
}

/* ======================================================================
 * fft
 * ==================================================================== */

/* One transformed axis: a forward DFT of length n, radix-2 when n is a
 * power of two, else Bluestein's chirp-z through a power-of-two FFT of
 * length m >= 2n - 1.  Computed in double precision. */
typedef struct sim_fft_axis {
  int64_t n, m;
  const sim_c128 *tw;    /* m/2 twiddles exp(-2 pi i k / m) */
  const sim_c128 *chirp; /* Bluestein: exp(-pi i k^2 / n), k < n */
  const sim_c128 *filt;  /* Bluestein: FFT of the conjugate chirp, m */
} sim_fft_axis;

typedef struct sim_fft {
  int kind;                /* 0 FFT, 1 IFFT, 2 RFFT, 3 IRFFT */
  int32_t L, rank;
  int64_t dims[XRT_MAX_RANK]; /* the complex work shape */
  int64_t in_last, out_last;  /* last dimension of operand and result */
  sim_fft_axis ax[3];      /* for the last L dimensions, outermost first */
  xrt_dtype it, ot;
  int32_t work, line;      /* pseudo values: work buffer, line scratch */
} sim_fft;

static int sim_is_pow2(int64_t n) { return n > 0 && (n & (n - 1)) == 0; }

static sim_c128 sim_cmul(sim_c128 a, sim_c128 b) {
  sim_c128 r = {a.re * b.re - a.im * b.im, a.re * b.im + a.im * b.re};
  return r;
}

/* In-place iterative radix-2 FFT of length m (a power of two). */
static void sim_fft_pow2(sim_c128 *x, int64_t m, const sim_c128 *tw) {
  for (int64_t i = 1, j = 0; i < m; i++) {
    int64_t bit = m >> 1;
    for (; j & bit; bit >>= 1) j ^= bit;
    j |= bit;
    if (i < j) {
      sim_c128 t = x[i];
      x[i] = x[j];
      x[j] = t;
    }
  }
  for (int64_t len = 2; len <= m; len <<= 1) {
    int64_t half = len >> 1, step = m / len;
    for (int64_t s = 0; s < m; s += len)
      for (int64_t k = 0; k < half; k++) {
        sim_c128 u = x[s + k], v = sim_cmul(x[s + k + half], tw[k * step]);
        x[s + k].re = u.re + v.re, x[s + k].im = u.im + v.im;
        x[s + k + half].re = u.re - v.re, x[s + k + half].im = u.im - v.im;
      }
  }
}

/* Forward DFT of x (length n) in place; scratch holds m elements. */
static void sim_fft_line(const sim_fft_axis *a, sim_c128 *x,
                         sim_c128 *scratch) {
  if (a->n <= 1) return;
  if (a->m == a->n) {
    sim_fft_pow2(x, a->n, a->tw);
    return;
  }
  int64_t n = a->n, m = a->m;
  for (int64_t k = 0; k < m; k++) {
    sim_c128 z = {0, 0};
    scratch[k] = k < n ? sim_cmul(x[k], a->chirp[k]) : z;
  }
  sim_fft_pow2(scratch, m, a->tw);
  for (int64_t k = 0; k < m; k++) {
    scratch[k] = sim_cmul(scratch[k], a->filt[k]);
    scratch[k].im = -scratch[k].im; /* inverse by conjugation */
  }
  sim_fft_pow2(scratch, m, a->tw);
  for (int64_t k = 0; k < n; k++) {
    sim_c128 v = {scratch[k].re / (double)m, -scratch[k].im / (double)m};
    x[k] = sim_cmul(v, a->chirp[k]);
  }
}

/* Transforms every line of buf (shape dims) along dimension d. */
static void sim_fft_axis_run(const sim_fft_axis *a, sim_c128 *buf,
                             const int64_t *dims, int32_t rank, int32_t d,
                             int inverse, sim_c128 *line) {
  int64_t outer = 1, inner = 1, n = dims[d];
  for (int32_t k = 0; k < d; k++) outer *= dims[k];
  for (int32_t k = d + 1; k < rank; k++) inner *= dims[k];
  sim_c128 *scratch = line + n;
  for (int64_t o = 0; o < outer; o++)
    for (int64_t i = 0; i < inner; i++) {
      sim_c128 *base = buf + o * n * inner + i;
      for (int64_t k = 0; k < n; k++) {
        line[k] = base[k * inner];
        if (inverse) line[k].im = -line[k].im;
      }
      sim_fft_line(a, line, scratch);
      for (int64_t k = 0; k < n; k++) {
        sim_c128 v = line[k];
        if (inverse) v.re /= (double)n, v.im = -v.im / (double)n;
        base[k * inner] = v;
      }
    }
}

static void sim_fft_load(const sim_fft *f, const void *in, sim_c128 *w,
                         int64_t count) {
  for (int64_t i = 0; i < count; i++) {
    sim_num v;
    sim_load(f->it, (const char *)in + (size_t)i * sim_esize(f->it), &v);
    w[i].re = v.re, w[i].im = v.im;
  }
}

/* IRFFT's last dimension: the Hermitian extension of the half spectrum,
 * inverse transformed; the real part is the result. */
static void sim_fft_irfft_last(const sim_fft *f, sim_c128 *w, void *out,
                               sim_c128 *line, int64_t lines) {
  const sim_fft_axis *a = &f->ax[f->L - 1];
  int64_t n = a->n, h = f->in_last;
  size_t es = sim_esize(f->ot);
  for (int64_t l = 0; l < lines; l++) {
    const sim_c128 *src = w + l * h;
    for (int64_t k = 0; k < n; k++) {
      sim_c128 v = k < h ? src[k] : src[n - k];
      if (k >= h) v.im = -v.im;
      line[k].re = v.re, line[k].im = -v.im; /* conjugate: inverse */
    }
    sim_fft_line(a, line, line + n);
    for (int64_t k = 0; k < n; k++) {
      sim_num v = {line[k].re / (double)n, 0, 0, 0};
      sim_store(f->ot, (char *)out + (size_t)(l * n + k) * es, &v);
    }
  }
}

static xrt_status sim_run_fft(const sim_step *st, void **vals, sim_cx *cx) {
  const sim_fft *f = (const sim_fft *)st->data;
  sim_c128 *w = (sim_c128 *)vals[f->work], *line = (sim_c128 *)vals[f->line];
  void *out = vals[st->out[0]];
  int64_t total = 1;
  (void)cx;
  for (int32_t k = 0; k < f->rank; k++) total *= f->dims[k];
  if (total == 0) return XRT_OK;
  int inverse = f->kind == 1 || f->kind == 3;
  int32_t axes = f->kind == 3 ? f->L - 1 : f->L;
  sim_fft_load(f, vals[st->in[0]], w, total);
  for (int32_t j = 0; j < axes; j++) {
    int32_t d = f->rank - f->L + j;
    sim_fft_axis_run(&f->ax[j], w, f->dims, f->rank, d, inverse, line);
  }
  if (f->kind == 3) {
    sim_fft_irfft_last(f, w, out, line, total / f->in_last);
    return XRT_OK;
  }
  /* Copy out, keeping the first out_last entries of the last dimension. */
  size_t es = sim_esize(f->ot);
  int64_t lines = total / f->in_last;
  for (int64_t l = 0; l < lines; l++)
    for (int64_t k = 0; k < f->out_last; k++) {
      sim_c128 v = w[l * f->in_last + k];
      sim_num nv = {v.re, v.im, 0, 0};
      sim_store(f->ot, (char *)out + (size_t)(l * f->out_last + k) * es, &nv);
    }
  return XRT_OK;
}

/* Twiddles, chirp and filter of one axis (compile time). */
static xrt_status sim_fft_plan_axis(sim_fcc *fc, sim_fft_axis *a, int64_t n) {
  const double pi = 3.14159265358979323846;
  a->n = n;
  a->m = n;
  if (n <= 1) return XRT_OK;
  if (!sim_is_pow2(n)) {
    a->m = 1;
    while (a->m < 2 * n - 1) a->m <<= 1;
  }
  int64_t m = a->m;
  sim_c128 *tw = (sim_c128 *)sim_palloc(fc, sizeof *tw * (size_t)(m / 2 + 1));
  if (!tw) return XRT_RESOURCE_EXHAUSTED;
  for (int64_t k = 0; k < m / 2; k++) {
    tw[k].re = cos(-2 * pi * (double)k / (double)m);
    tw[k].im = sin(-2 * pi * (double)k / (double)m);
  }
  a->tw = tw;
  if (m == n) return XRT_OK;
  sim_c128 *ch = (sim_c128 *)sim_palloc(fc, sizeof *ch * (size_t)n);
  sim_c128 *fl = (sim_c128 *)sim_palloc(fc, sizeof *fl * (size_t)m);
  if (!ch || !fl) return XRT_RESOURCE_EXHAUSTED;
  for (int64_t k = 0; k < n; k++) {
    /* k^2 mod 2n keeps the angle exact for large k (n < 2^31). */
    uint64_t q = ((uint64_t)k * (uint64_t)k) % (uint64_t)(2 * n);
    ch[k].re = cos(-pi * (double)q / (double)n);
    ch[k].im = sin(-pi * (double)q / (double)n);
  }
  for (int64_t k = 0; k < n; k++) {
    sim_c128 c = {ch[k].re, -ch[k].im};
    fl[k] = c;
    if (k) fl[m - k] = c;
  }
  sim_fft_pow2(fl, m, tw);
  a->chirp = ch;
  a->filt = fl;
  return XRT_OK;
}

static int sim_fft_kind(const char *s) {
  static const char *const names[] = {"FFT", "IFFT", "RFFT", "IRFFT"};
  for (int i = 0; i < 4; i++)
    if (strcmp(s, names[i]) == 0) return i;
  return -1;
}

static xrt_status sim_lower_fft(sim_fcc *fc, const xrt_ir_op *op,
                                sim_step *st) {
  const xrt_shape *I = sim_shape(fc, op->operands[0]);
  const xrt_shape *O = sim_shape(fc, op->results[0]);
  const int64_t *len;
  int64_t nl;
  xrt_status rc = sim_ints(fc, op, "fft_length", 1, &len, &nl);
  if (rc) return rc;
  sim_fft *f = (sim_fft *)sim_palloc(fc, sizeof *f);
  if (!f) return XRT_RESOURCE_EXHAUSTED;
  f->kind = sim_fft_kind(sim_la_enum(op, "fft_type"));
  int ok = f->kind >= 0 && nl >= 1 && nl <= 3 && nl <= I->rank &&
           I->rank == O->rank;
  for (int32_t d = 0; ok && d < I->rank; d++) {
    int last = d == I->rank - 1;
    ok = last || I->dims[d] == O->dims[d];
    if (ok && d >= I->rank - nl) {
      int64_t want = len[d - (I->rank - nl)];
      int64_t have = f->kind == 2 ? I->dims[d] : f->kind == 3 && last
                   ? O->dims[d] : I->dims[d];
      ok = want == have && want < (1ll << 31);
    }
  }
  if (ok) {
    int64_t n = len[nl - 1], h = n == 0 ? 0 : n / 2 + 1;
    int64_t il = I->dims[I->rank - 1], ol = O->dims[O->rank - 1];
    ok = f->kind == 2 ? ol == h : f->kind == 3 ? il == h : il == ol;
  }
  if (!ok)
    return sim_fail_op(fc->cc->err, op, XRT_INVALID_ARGUMENT, "%s: fft_type, "
                       "fft_length and shapes do not agree", op->name);
  if (!sim_dtype_is_complex(f->kind == 3 ? I->dtype : O->dtype) ||
      !(sim_dtype_is_complex(I->dtype) || I->dtype == XRT_F32 ||
        I->dtype == XRT_F64) ||
      !(sim_dtype_is_complex(O->dtype) || O->dtype == XRT_F32 ||
        O->dtype == XRT_F64))
    return sim_unsupported_type(fc, op, I->dtype);
  f->it = I->dtype, f->ot = O->dtype;
  f->L = (int32_t)nl, f->rank = I->rank;
  for (int32_t d = 0; d < I->rank; d++) f->dims[d] = I->dims[d];
  f->in_last = I->rank ? I->dims[I->rank - 1] : 1;
  f->out_last = O->rank ? O->dims[O->rank - 1] : 1;
  int64_t biggest = 1, total = sim_numel(I);
  for (int32_t j = 0; j < f->L; j++) {
    if ((rc = sim_fft_plan_axis(fc, &f->ax[j], len[j]))) return rc;
    int64_t need = f->ax[j].n + f->ax[j].m;
    if (need > biggest) biggest = need;
  }
  rc = sim_temp(fc, sizeof(sim_c128) * (size_t)(total ? total : 1), &f->work);
  if (!rc) rc = sim_temp(fc, sizeof(sim_c128) * (size_t)biggest, &f->line);
  st->data = f;
  st->run = sim_run_fft;
  return rc;
}

/* ======================================================================
 * triangular_solve, cholesky (computed in complex double precision)
 * ==================================================================== */

typedef struct sim_trsv {
  int left, lower, unit, trans; /* trans: 0 none, 1 transpose, 2 adjoint */
  int64_t batch, M, N;          /* a: M x M; b: M x N (left) or N x M */
  xrt_dtype t;
  int32_t work;                 /* pseudo value: T (M*M) and X (M*N) */
} sim_trsv;

static sim_c128 sim_la_getc(xrt_dtype t, const void *base, int64_t i) {
  sim_num v;
  sim_load(t, (const char *)base + (size_t)i * sim_esize(t), &v);
  sim_c128 c = {v.re, v.im};
  return c;
}

static void sim_la_putc(xrt_dtype t, void *base, int64_t i, sim_c128 c) {
  sim_num v = {c.re, c.im, 0, 0};
  sim_store(t, (char *)base + (size_t)i * sim_esize(t), &v);
}

static sim_c128 sim_cdiv(sim_c128 a, sim_c128 b) {
  if (b.im == 0) {
    sim_c128 r = {a.re / b.re, a.im / b.re};
    return r;
  }
  double d = b.re * b.re + b.im * b.im;
  sim_c128 r = {(a.re * b.re + a.im * b.im) / d,
                (a.im * b.re - a.re * b.im) / d};
  return r;
}

/* T = the matrix that multiplies X from the left once a right-side
 * problem X op(a) = b is transposed into op(a)^T X^T = b^T.  Only the
 * triangle of a named by `lower` is read. */
static void sim_trsv_matrix(const sim_trsv *s, const void *a, int64_t ab,
                            sim_c128 *T) {
  int64_t M = s->M;
  for (int64_t i = 0; i < M; i++)
    for (int64_t j = 0; j < M; j++) {
      /* T[i][j] = opA[i][j] (left) or opA[j][i] (right). */
      int64_t r = s->left ? i : j, c = s->left ? j : i;
      int64_t ar = s->trans ? c : r, ac = s->trans ? r : c; /* A index */
      int in_tri = s->lower ? ac <= ar : ac >= ar;
      sim_c128 v = {0, 0};
      if (ar == ac && s->unit) v.re = 1;
      else if (in_tri) v = sim_la_getc(s->t, a, ab + ar * M + ac);
      if (s->trans == 2) v.im = -v.im;
      T[i * M + j] = v;
    }
}

static xrt_status sim_run_trsv(const sim_step *st, void **vals, sim_cx *cx) {
  const sim_trsv *s = (const sim_trsv *)st->data;
  int64_t M = s->M, N = s->N;
  sim_c128 *T = (sim_c128 *)vals[s->work], *X = T + M * M;
  const void *a = vals[st->in[0]], *b = vals[st->in[1]];
  void *out = vals[st->out[0]];
  /* T is lower triangular when lower, flipped by a transpose and by the
   * right side's transposition. */
  int tlow = s->lower ^ (s->trans != 0) ^ !s->left;
  (void)cx;
  for (int64_t bi = 0; bi < s->batch; bi++) {
    int64_t bb = bi * M * N;
    sim_trsv_matrix(s, a, bi * M * M, T);
    for (int64_t i = 0; i < M; i++) /* X = b (left) or b^T (right) */
      for (int64_t j = 0; j < N; j++)
        X[i * N + j] = sim_la_getc(s->t, b, bb + (s->left ? i * N + j
                                                         : j * M + i));
    for (int64_t q = 0; q < M; q++) {
      int64_t i = tlow ? q : M - 1 - q;
      for (int64_t j = 0; j < N; j++) {
        sim_c128 acc = X[i * N + j];
        for (int64_t k = 0; k < M; k++) {
          if (tlow ? k >= i : k <= i) continue;
          sim_c128 p = sim_cmul(T[i * M + k], X[k * N + j]);
          acc.re -= p.re, acc.im -= p.im;
        }
        X[i * N + j] = sim_cdiv(acc, T[i * M + i]);
      }
    }
    for (int64_t i = 0; i < M; i++)
      for (int64_t j = 0; j < N; j++)
        sim_la_putc(s->t, out, bb + (s->left ? i * N + j : j * M + i),
                    X[i * N + j]);
  }
  return XRT_OK;
}

static int sim_la_linalg_type(xrt_dtype t) {
  return t == XRT_F16 || t == XRT_BF16 || t == XRT_F32 || t == XRT_F64 ||
         t == XRT_C64 || t == XRT_C128 || sim_is_minifloat(t);
}

static xrt_status sim_lower_triangular_solve(sim_fcc *fc, const xrt_ir_op *op,
                                             sim_step *st) {
  const xrt_shape *A = sim_shape(fc, op->operands[0]);
  const xrt_shape *B = sim_shape(fc, op->operands[1]);
  sim_trsv *s = (sim_trsv *)sim_palloc(fc, sizeof *s);
  if (!s) return XRT_RESOURCE_EXHAUSTED;
  s->left = sim_la_flag(op, "left_side", 0);
  s->lower = sim_la_flag(op, "lower", 0);
  s->unit = sim_la_flag(op, "unit_diagonal", 0);
  const char *tr = sim_la_enum(op, "transpose_a");
  s->trans = strcmp(tr, "TRANSPOSE") == 0 ? 1
             : strcmp(tr, "ADJOINT") == 0 ? 2 : 0;
  int r = A->rank, ok = r >= 2 && B->rank == r && A->dims[r - 1] == A->dims[r - 2];
  for (int d = 0; ok && d < r - 2; d++) ok = A->dims[d] == B->dims[d];
  if (ok) {
    s->M = A->dims[r - 1];
    s->N = B->dims[s->left ? r - 1 : r - 2];
    ok = B->dims[s->left ? r - 2 : r - 1] == s->M;
  }
  if (!ok)
    return sim_fail_op(fc->cc->err, op, XRT_INVALID_ARGUMENT, "%s: shapes of "
                       "a and b do not agree", op->name);
  if (!sim_la_linalg_type(A->dtype) || B->dtype != A->dtype)
    return sim_unsupported_type(fc, op, A->dtype);
  s->t = A->dtype;
  s->batch = 1;
  for (int d = 0; d < r - 2; d++) s->batch *= A->dims[d];
  st->data = s;
  st->run = sim_run_trsv;
  size_t w = (size_t)(s->M * s->M + s->M * s->N);
  return sim_temp(fc, sizeof(sim_c128) * (w ? w : 1), &s->work);
}

typedef struct sim_chol {
  int lower;
  int64_t batch, n;
  xrt_dtype t;
  int32_t work; /* pseudo value: L (n*n) */
} sim_chol;

/* L L^H = a from the triangle of a named by lower (the other one is
 * read as its conjugate mirror); the other triangle of the result is 0,
 * as in the spec's example.  A matrix that is not positive definite gives
 * NaNs, like XLA. */
static void sim_chol_one(const sim_chol *c, const void *a, int64_t base,
                         sim_c128 *Lm) {
  int64_t n = c->n;
  for (int64_t j = 0; j < n; j++) {
    for (int64_t i = j; i < n; i++) {
      /* Hermitian element H[i][j], i >= j. */
      sim_c128 h = c->lower ? sim_la_getc(c->t, a, base + i * n + j)
                            : sim_la_getc(c->t, a, base + j * n + i);
      if (!c->lower) h.im = -h.im;
      for (int64_t k = 0; k < j; k++) {
        sim_c128 y = Lm[j * n + k];
        y.im = -y.im;
        sim_c128 p = sim_cmul(Lm[i * n + k], y);
        h.re -= p.re, h.im -= p.im;
      }
      if (i == j) {
        sim_c128 d = {sqrt(h.re), 0};
        Lm[j * n + j] = d;
      } else {
        Lm[i * n + j] = sim_cdiv(h, Lm[j * n + j]);
      }
    }
    for (int64_t i = 0; i < j; i++) {
      sim_c128 z = {0, 0};
      Lm[i * n + j] = z;
    }
  }
}

static xrt_status sim_run_chol(const sim_step *st, void **vals, sim_cx *cx) {
  const sim_chol *c = (const sim_chol *)st->data;
  sim_c128 *Lm = (sim_c128 *)vals[c->work];
  int64_t n = c->n;
  (void)cx;
  for (int64_t b = 0; b < c->batch; b++) {
    int64_t base = b * n * n;
    sim_chol_one(c, vals[st->in[0]], base, Lm);
    for (int64_t i = 0; i < n; i++)
      for (int64_t j = 0; j < n; j++) {
        sim_c128 v = c->lower ? Lm[i * n + j] : Lm[j * n + i];
        if (!c->lower) v.im = -v.im; /* U = L^H */
        sim_la_putc(c->t, vals[st->out[0]], base + i * n + j, v);
      }
  }
  return XRT_OK;
}

static xrt_status sim_lower_cholesky(sim_fcc *fc, const xrt_ir_op *op,
                                     sim_step *st) {
  const xrt_shape *A = sim_shape(fc, op->operands[0]);
  int r = A->rank;
  if (r < 2 || A->dims[r - 1] != A->dims[r - 2])
    return sim_fail_op(fc->cc->err, op, XRT_INVALID_ARGUMENT, "%s: a must be "
                       "a batch of square matrices", op->name);
  if (!sim_la_linalg_type(A->dtype)) return sim_unsupported_type(fc, op, A->dtype);
  sim_chol *c = (sim_chol *)sim_palloc(fc, sizeof *c);
  if (!c) return XRT_RESOURCE_EXHAUSTED;
  c->lower = sim_la_flag(op, "lower", 0);
  c->n = A->dims[r - 1];
  c->t = A->dtype;
  c->batch = 1;
  for (int d = 0; d < r - 2; d++) c->batch *= A->dims[d];
  st->data = c;
  st->run = sim_run_chol;
  size_t w = (size_t)(c->n * c->n);
  return sim_temp(fc, sizeof(sim_c128) * (w ? w : 1), &c->work);
}

/* ======================================================================
 * batch_norm_inference, batch_norm_training, batch_norm_grad
 * ==================================================================== */

/* Elements of operand at (o, f, i) are at (o * F + f) * inner + i, with f
 * along feature_index.  Computed in double precision, rounded once. */
typedef struct sim_bn {
  int64_t outer, F, inner;
  double eps;
  xrt_dtype t;
  int32_t work; /* pseudo value: per-feature doubles */
} sim_bn;

static double sim_la_getd(xrt_dtype t, const void *base, int64_t i) {
  sim_num v;
  sim_load(t, (const char *)base + (size_t)i * sim_esize(t), &v);
  return v.re;
}

static void sim_la_putd(xrt_dtype t, void *base, int64_t i, double d) {
  sim_num v = {d, 0, 0, 0};
  sim_store(t, (char *)base + (size_t)i * sim_esize(t), &v);
}

static int64_t sim_bn_at(const sim_bn *b, int64_t o, int64_t f, int64_t i) {
  return (o * b->F + f) * b->inner + i;
}

/* Per feature f: sum of x (and of (x - mean)^2 when mean is given). */
static double sim_bn_sum(const sim_bn *b, const void *x, int64_t f,
                         const double *center) {
  double s = 0;
  for (int64_t o = 0; o < b->outer; o++)
    for (int64_t i = 0; i < b->inner; i++) {
      double v = sim_la_getd(b->t, x, sim_bn_at(b, o, f, i));
      if (center) v = (v - *center) * (v - *center);
      s += v;
    }
  return s;
}

static void sim_bn_normalize(const sim_bn *b, const void *x, void *y,
                             int64_t f, double scale, double offset,
                             double mean, double var) {
  double sd = sqrt(var + b->eps);
  for (int64_t o = 0; o < b->outer; o++)
    for (int64_t i = 0; i < b->inner; i++) {
      int64_t at = sim_bn_at(b, o, f, i);
      double v = (sim_la_getd(b->t, x, at) - mean) / sd;
      sim_la_putd(b->t, y, at, scale * v + offset);
    }
}

static xrt_status sim_run_bn_inference(const sim_step *st, void **vals,
                                       sim_cx *cx) {
  const sim_bn *b = (const sim_bn *)st->data;
  (void)cx;
  for (int64_t f = 0; f < b->F; f++)
    sim_bn_normalize(b, vals[st->in[0]], vals[st->out[0]], f,
                     sim_la_getd(b->t, vals[st->in[1]], f),
                     sim_la_getd(b->t, vals[st->in[2]], f),
                     sim_la_getd(b->t, vals[st->in[3]], f),
                     sim_la_getd(b->t, vals[st->in[4]], f));
  return XRT_OK;
}

static xrt_status sim_run_bn_training(const sim_step *st, void **vals,
                                      sim_cx *cx) {
  const sim_bn *b = (const sim_bn *)st->data;
  double n = (double)(b->outer * b->inner);
  (void)cx;
  for (int64_t f = 0; f < b->F; f++) {
    const void *x = vals[st->in[0]];
    double mean = sim_bn_sum(b, x, f, NULL) / n;
    double var = sim_bn_sum(b, x, f, &mean) / n;
    sim_bn_normalize(b, x, vals[st->out[0]], f,
                     sim_la_getd(b->t, vals[st->in[1]], f),
                     sim_la_getd(b->t, vals[st->in[2]], f), mean, var);
    sim_la_putd(b->t, vals[st->out[1]], f, mean);
    sim_la_putd(b->t, vals[st->out[2]], f, var);
  }
  return XRT_OK;
}

/* The spec's decomposition (XLA's batchnorm_expander). */
static xrt_status sim_run_bn_grad(const sim_step *st, void **vals,
                                  sim_cx *cx) {
  const sim_bn *b = (const sim_bn *)st->data;
  const void *x = vals[st->in[0]], *dy = vals[st->in[4]];
  double n = (double)(b->outer * b->inner);
  (void)cx;
  for (int64_t f = 0; f < b->F; f++) {
    double scale = sim_la_getd(b->t, vals[st->in[1]], f);
    double mean = sim_la_getd(b->t, vals[st->in[2]], f);
    double ve = sim_la_getd(b->t, vals[st->in[3]], f) + b->eps;
    double sd = sqrt(ve), sum_dy = 0, sum_dyc = 0;
    for (int64_t o = 0; o < b->outer; o++)
      for (int64_t i = 0; i < b->inner; i++) {
        int64_t at = sim_bn_at(b, o, f, i);
        double g = sim_la_getd(b->t, dy, at);
        sum_dy += g;
        sum_dyc += g * (sim_la_getd(b->t, x, at) - mean);
      }
    for (int64_t o = 0; o < b->outer; o++)
      for (int64_t i = 0; i < b->inner; i++) {
        int64_t at = sim_bn_at(b, o, f, i);
        double c = sim_la_getd(b->t, x, at) - mean;
        double i1 = sim_la_getd(b->t, dy, at) * n, i5 = sum_dyc * c / ve;
        sim_la_putd(b->t, vals[st->out[0]], at,
                    scale / sd / n * (i1 - sum_dy - i5));
      }
    sim_la_putd(b->t, vals[st->out[1]], f, sum_dyc / sd);
    sim_la_putd(b->t, vals[st->out[2]], f, sum_dy);
  }
  return XRT_OK;
}

/* Checks the 1-D operands and results (size F) and sets up b. */
static xrt_status sim_lower_bn(sim_fcc *fc, const xrt_ir_op *op, sim_step *st,
                               int nops, int nres, unsigned full_mask,
                               sim_run_fn run) {
  if (op->num_operands != nops || op->num_results != nres)
    return sim_fail_op(fc->cc->err, op, XRT_INVALID_ARGUMENT, "bad %s",
                       op->name);
  const xrt_shape *X = sim_shape(fc, op->operands[0]);
  int64_t fi = 0;
  xrt_status rc = sim_int_attr(fc, op, "feature_index", &fi);
  if (rc) return rc;
  const xrt_ir_attr *e = sim_attr(op, "epsilon", XRT_ATTR_FLOAT);
  if (fi < 0 || fi >= X->rank)
    return sim_fail_op(fc->cc->err, op, XRT_INVALID_ARGUMENT, "%s: "
                       "feature_index %lld is out of range", op->name,
                       (long long)fi);
  if (!sim_dtype_is_float(X->dtype)) return sim_unsupported_type(fc, op, X->dtype);
  sim_bn *b = (sim_bn *)sim_palloc(fc, sizeof *b);
  if (!b) return XRT_RESOURCE_EXHAUSTED;
  b->t = X->dtype;
  b->eps = e ? (double)(float)e->f : 0.0; /* epsilon is an f32 */
  b->F = X->dims[fi];
  b->outer = b->inner = 1;
  for (int32_t d = 0; d < fi; d++) b->outer *= X->dims[d];
  for (int32_t d = (int32_t)fi + 1; d < X->rank; d++) b->inner *= X->dims[d];
  for (int i = 0; i < nops + nres; i++) {
    int32_t id = i < nops ? op->operands[i] : op->results[i - nops];
    const xrt_shape *s = sim_shape(fc, id);
    int full = (full_mask >> i) & 1u;
    if (s->dtype != X->dtype || (full ? sim_numel(s) != sim_numel(X)
                                      : s->rank != 1 || s->dims[0] != b->F))
      return sim_fail_op(fc->cc->err, op, XRT_INVALID_ARGUMENT, "%s: "
                         "operand and result shapes do not agree", op->name);
  }
  st->data = b;
  st->run = run;
  return XRT_OK;
}

static xrt_status sim_lower_batch_norm_inference(sim_fcc *fc,
                                                 const xrt_ir_op *op,
                                                 sim_step *st) {
  return sim_lower_bn(fc, op, st, 5, 1, 0x21u, sim_run_bn_inference);
}

static xrt_status sim_lower_batch_norm_training(sim_fcc *fc,
                                                const xrt_ir_op *op,
                                                sim_step *st) {
  return sim_lower_bn(fc, op, st, 3, 3, 0x09u, sim_run_bn_training);
}

static xrt_status sim_lower_batch_norm_grad(sim_fcc *fc, const xrt_ir_op *op,
                                            sim_step *st) {
  return sim_lower_bn(fc, op, st, 5, 3, 0x31u, sim_run_bn_grad);
}

/* ======================================================================
 * rng_bit_generator, rng
 * ==================================================================== */

static uint32_t sim_rotl32(uint32_t v, int r) {
  return (v << r) | (v >> (32 - r));
}

/* Threefry-2x32 with 20 rounds (Salmon et al. 2011), as XLA's prng.cc. */
static void sim_threefry2x32(uint32_t k0, uint32_t k1, uint32_t x[2]) {
  static const int rot[8] = {13, 15, 26, 6, 17, 29, 16, 24};
  uint32_t ks[3] = {k0, k1, 0x1BD11BDAu ^ k0 ^ k1};
  x[0] += ks[0];
  x[1] += ks[1];
  for (int i = 0; i < 5; i++) {
    for (int j = 0; j < 4; j++) {
      x[0] += x[1];
      x[1] = sim_rotl32(x[1], rot[(i % 2) * 4 + j]) ^ x[0];
    }
    x[0] += ks[(i + 1) % 3];
    x[1] += ks[(i + 2) % 3] + (uint32_t)(i + 1);
  }
}

/* Philox-4x32 with 10 rounds, as XLA's prng.cc. */
static void sim_philox4x32(uint32_t k0, uint32_t k1, uint32_t x[4]) {
  for (int r = 0; r < 10; r++) {
    uint64_t p0 = (uint64_t)x[0] * 0xD2511F53u;
    uint64_t p1 = (uint64_t)x[2] * 0xCD9E8D57u;
    uint32_t y0 = (uint32_t)(p1 >> 32) ^ x[1] ^ k0, y1 = (uint32_t)p1;
    uint32_t y2 = (uint32_t)(p0 >> 32) ^ x[3] ^ k1, y3 = (uint32_t)p0;
    x[0] = y0, x[1] = y1, x[2] = y2, x[3] = y3;
    k0 += 0x9E3779B9u;
    k1 += 0xBB67AE85u;
  }
}

typedef struct sim_rbg {
  int philox;            /* else three fry */
  int32_t rank, split;   /* three fry 32: the dimension split in halves */
  int64_t dims[XRT_MAX_RANK], numel, nstate;
  size_t es;             /* output element size */
  int bits;              /* output bit width */
  xrt_dtype ot;
} sim_rbg;

/* Stores the low bits of w as one output element. */
static void sim_rbg_put(const sim_rbg *g, void *out, int64_t i, uint64_t w) {
  char *p = (char *)out + (size_t)i * g->es;
  switch (g->es) {
  case 1: {
    uint8_t b = (uint8_t)(w & ((1u << (g->bits < 8 ? g->bits : 8)) - 1u));
    if (g->ot == XRT_S2 || g->ot == XRT_S4)
      b = (uint8_t)sim_wrap_int(g->ot, (int64_t)b);
    *(uint8_t *)p = b;
    break;
  }
  case 2: *(uint16_t *)(void *)p = (uint16_t)w; break;
  case 4: *(uint32_t *)(void *)p = (uint32_t)w; break;
  default: *(uint64_t *)(void *)p = w; break;
  }
}

/* Three fry, 32 bits or fewer: one counter per pair of elements along the
 * split dimension (XLA's SplitShapeIntoHalves); returns counters used. */
static uint64_t sim_rbg_threefry32(const sim_rbg *g, uint64_t key,
                                   uint64_t ctr, void *out) {
  uint32_t k0 = (uint32_t)key, k1 = (uint32_t)(key >> 32);
  if (g->rank == 0) {
    uint32_t x[2] = {(uint32_t)ctr, (uint32_t)(ctr >> 32)};
    sim_threefry2x32(k0, k1, x);
    sim_rbg_put(g, out, 0, x[0]);
    return 1;
  }
  int64_t half[XRT_MAX_RANK], ostr[XRT_MAX_RANK], idx[XRT_MAX_RANK] = {0};
  xrt_shape s;
  memset(&s, 0, sizeof s);
  s.rank = g->rank;
  int64_t hn = 1;
  for (int32_t d = 0; d < g->rank; d++) {
    s.dims[d] = g->dims[d];
    half[d] = d == g->split ? (g->dims[d] + 1) / 2 : g->dims[d];
    hn *= half[d];
  }
  sim_strides(&s, ostr);
  if (hn == 0) return 0;
  for (int64_t h = 0; h < hn; h++) {
    uint64_t c = ctr + (uint64_t)h;
    uint32_t x[2] = {(uint32_t)c, (uint32_t)(c >> 32)};
    sim_threefry2x32(k0, k1, x);
    int64_t off = 0;
    for (int32_t d = 0; d < g->rank; d++)
      off += (d == g->split ? 2 * idx[d] : idx[d]) * ostr[d];
    sim_rbg_put(g, out, off, x[0]);
    if (2 * idx[g->split] + 1 < g->dims[g->split])
      sim_rbg_put(g, out, off + ostr[g->split], x[1]);
    sim_la_next(idx, half, g->rank);
  }
  return (uint64_t)hn;
}

static uint64_t sim_rbg_threefry64(const sim_rbg *g, uint64_t key,
                                   uint64_t ctr, void *out) {
  for (int64_t i = 0; i < g->numel; i++) {
    uint64_t c = ctr + (uint64_t)i;
    uint32_t x[2] = {(uint32_t)c, (uint32_t)(c >> 32)};
    sim_threefry2x32((uint32_t)key, (uint32_t)(key >> 32), x);
    sim_rbg_put(g, out, i, (uint64_t)x[0] | (uint64_t)x[1] << 32);
  }
  return (uint64_t)g->numel;
}

/* Philox: counter c (128 bits: lo, hi) + j gives four words per j, laid
 * out round robin; returns the number of counters used. */
static uint64_t sim_rbg_philox(const sim_rbg *g, uint64_t key, uint64_t lo,
                               uint64_t hi, void *out) {
  int wide = g->es == 8;
  int64_t words = wide ? 2 * g->numel : g->numel;
  uint64_t nv = (uint64_t)((words + 3) / 4);
  for (uint64_t j = 0; j < nv; j++) {
    uint64_t l = lo + j, h = l < lo ? hi + 1 : hi;
    uint32_t x[4] = {(uint32_t)l, (uint32_t)(l >> 32), (uint32_t)h,
                     (uint32_t)(h >> 32)};
    sim_philox4x32((uint32_t)key, (uint32_t)(key >> 32), x);
    for (int q = 0; q < (wide ? 2 : 4); q++) {
      int64_t i = (int64_t)j * (wide ? 2 : 4) + q;
      if (i >= g->numel) break;
      uint64_t w = wide ? (uint64_t)x[2 * q] | (uint64_t)x[2 * q + 1] << 32
                        : x[q];
      sim_rbg_put(g, out, i, w);
    }
  }
  return nv;
}

static xrt_status sim_run_rbg(const sim_step *st, void **vals, sim_cx *cx) {
  const sim_rbg *g = (const sim_rbg *)st->data;
  const uint64_t *s = (const uint64_t *)vals[st->in[0]];
  uint64_t *ns = (uint64_t *)vals[st->out[0]];
  void *out = vals[st->out[1]];
  uint64_t key = s[0];
  (void)cx;
  if (!g->philox) {
    uint64_t used = g->es == 8 ? sim_rbg_threefry64(g, key, s[1], out)
                               : sim_rbg_threefry32(g, key, s[1], out);
    ns[0] = key;
    ns[1] = s[1] + used;
    return XRT_OK;
  }
  /* A 3-word state is (key, counter lo, counter hi); a 2-word one is
   * (key, counter lo) with the key doubling as counter hi, as XLA. */
  uint64_t lo = s[1], hi = g->nstate >= 3 ? s[2] : s[0];
  uint64_t used = sim_rbg_philox(g, key, lo, hi, out);
  uint64_t nl = lo + used;
  ns[0] = key;
  ns[1] = nl;
  if (g->nstate >= 3) ns[2] = nl < lo ? hi + 1 : hi;
  return XRT_OK;
}

static xrt_status sim_lower_rng_bit_generator(sim_fcc *fc,
                                              const xrt_ir_op *op,
                                              sim_step *st) {
  if (op->num_operands != 1 || op->num_results != 2)
    return sim_fail_op(fc->cc->err, op, XRT_INVALID_ARGUMENT, "bad %s",
                       op->name);
  const xrt_shape *S = sim_shape(fc, op->operands[0]);
  const xrt_shape *NS = sim_shape(fc, op->results[0]);
  const xrt_shape *O = sim_shape(fc, op->results[1]);
  const char *alg = sim_la_enum(op, "rng_algorithm");
  sim_rbg *g = (sim_rbg *)sim_palloc(fc, sizeof *g);
  if (!g) return XRT_RESOURCE_EXHAUSTED;
  g->philox = strcmp(alg, "THREE_FRY") != 0; /* DEFAULT is Philox, as XLA */
  g->nstate = S->rank == 1 ? S->dims[0] : 0;
  if (sim_esize(S->dtype) != 8 || S->rank != 1 || NS->rank != 1 ||
      NS->dims[0] != g->nstate ||
      (g->philox ? g->nstate != 2 && g->nstate != 3 : g->nstate != 2))
    return sim_fail_op(fc->cc->err, op, XRT_INVALID_ARGUMENT, "%s: the state "
                       "must be a 64-bit tensor<%sxui64>", op->name,
                       g->philox ? "2 or 3" : "2");
  g->ot = O->dtype;
  g->es = sim_esize(O->dtype);
  g->bits = sim_ew_bits(O->dtype);
  if (!g->es || g->es > 8 || O->dtype == XRT_PRED ||
      sim_dtype_is_complex(O->dtype) || fc->f->value_types[op->results[1]].quant)
    return sim_unsupported_type(fc, op, O->dtype);
  g->rank = O->rank;
  g->numel = sim_numel(O);
  for (int32_t d = 0; d < O->rank; d++) g->dims[d] = O->dims[d];
  /* XLA splits the first even dimension, else the first largest one. */
  g->split = -1;
  for (int32_t d = 0; d < O->rank && g->split < 0; d++)
    if (O->dims[d] % 2 == 0) g->split = d;
  if (g->split < 0)
    for (int32_t d = 0; d < O->rank; d++)
      if (g->split < 0 || O->dims[d] > O->dims[g->split]) g->split = d;
  if (g->split < 0) g->split = 0;
  st->data = g;
  st->run = sim_run_rbg;
  return XRT_OK;
}

/* rng: numbers are Threefry-2x32 bits keyed by the op's source position
 * and counted per execution, so a compiled program draws the same
 * sequence every time it is compiled (the interpreter leaves the values
 * implementation-defined). */
typedef struct sim_rng {
  int normal;
  xrt_dtype t, st;     /* result and shape-operand element types */
  int64_t numel;
  int32_t rank;
  int64_t dims[XRT_MAX_RANK];
  uint64_t key;
  _Atomic uint64_t calls;
} sim_rng;

/* 64 random bits for element i of call `call`, stream s. */
static uint64_t sim_rng_bits(const sim_rng *r, uint64_t call, int64_t i,
                             uint32_t s) {
  uint32_t x[2] = {(uint32_t)i, (uint32_t)((uint64_t)i >> 32) ^ (s << 31)};
  sim_threefry2x32((uint32_t)r->key, (uint32_t)(r->key >> 32) ^ (uint32_t)call,
                   x);
  return (uint64_t)x[0] | (uint64_t)x[1] << 32;
}

static double sim_rng_unit(uint64_t b) { /* [0, 1) */
  return (double)(b >> 11) * (1.0 / 9007199254740992.0);
}

static void sim_rng_uniform(const sim_rng *r, sim_num a, sim_num b,
                            uint64_t call, void *out) {
  size_t es = sim_esize(r->t);
  for (int64_t i = 0; i < r->numel; i++) {
    char *p = (char *)out + (size_t)i * es;
    uint64_t bits = sim_rng_bits(r, call, i, 0);
    sim_num v = a;
    if (a.is_int) {
      uint64_t range = (uint64_t)b.i - (uint64_t)a.i;
      int up = r->t == XRT_U64 ? (uint64_t)b.i > (uint64_t)a.i : b.i > a.i;
      if (up)
        v.i = (int64_t)((uint64_t)a.i + bits % range);
      v.re = (double)v.i;
      sim_store(r->t, p, &v);
      continue;
    }
    v.re = a.re + (b.re - a.re) * sim_rng_unit(bits);
    sim_store(r->t, p, &v);
    sim_num back;
    sim_load(r->t, p, &back);
    if (a.re < b.re && back.re >= b.re) sim_store(r->t, p, &a); /* rounding */
  }
}

/* Box-Muller: mean a, standard deviation b. */
static void sim_rng_normal(const sim_rng *r, sim_num a, sim_num b,
                           uint64_t call, void *out) {
  const double two_pi = 6.28318530717958647692;
  size_t es = sim_esize(r->t);
  for (int64_t i = 0; i < r->numel; i++) {
    double u1 = 1.0 - sim_rng_unit(sim_rng_bits(r, call, i, 0)); /* (0,1] */
    double u2 = sim_rng_unit(sim_rng_bits(r, call, i, 1));
    sim_num v = {a.re + b.re * sqrt(-2.0 * log(u1)) * cos(two_pi * u2), 0, 0,
                 0};
    sim_store(r->t, (char *)out + (size_t)i * es, &v);
  }
}

static xrt_status sim_run_rng(const sim_step *st, void **vals, sim_cx *cx) {
  sim_rng *r = (sim_rng *)(uintptr_t)st->data; /* calls is the one field
                                                  that changes */
  const void *shape = vals[st->in[2]];
  for (int32_t d = 0; d < r->rank; d++)
    if (sim_la_geti(r->st, shape, d) != r->dims[d])
      return sim_fail_op(cx->err, st->op, XRT_INVALID_ARGUMENT, "the shape "
                         "operand's dimension %d is %lld, the result's %lld",
                         (int)d, (long long)sim_la_geti(r->st, shape, d),
                         (long long)r->dims[d]);
  uint64_t call = r->calls++;
  sim_num a, b;
  sim_load(r->t, vals[st->in[0]], &a);
  sim_load(r->t, vals[st->in[1]], &b);
  if (r->normal) sim_rng_normal(r, a, b, call, vals[st->out[0]]);
  else sim_rng_uniform(r, a, b, call, vals[st->out[0]]);
  return XRT_OK;
}

static xrt_status sim_lower_rng(sim_fcc *fc, const xrt_ir_op *op,
                                sim_step *st) {
  if (op->num_operands != 3 || op->num_results != 1)
    return sim_fail_op(fc->cc->err, op, XRT_INVALID_ARGUMENT, "bad %s",
                       op->name);
  const xrt_shape *O = sim_shape(fc, op->results[0]);
  const xrt_shape *S = sim_shape(fc, op->operands[2]);
  sim_rng *r = (sim_rng *)sim_palloc(fc, sizeof *r);
  if (!r) return XRT_RESOURCE_EXHAUSTED;
  r->normal = strcmp(sim_la_enum(op, "rng_distribution"), "NORMAL") == 0;
  r->t = O->dtype;
  r->st = S->dtype;
  if (S->rank != 1 || S->dims[0] != O->rank || sim_dtype_is_float(S->dtype) ||
      sim_dtype_is_complex(S->dtype) || !sim_num_supported(S->dtype))
    return sim_fail_op(fc->cc->err, op, XRT_INVALID_ARGUMENT, "%s: shape must "
                       "be a 1-D integer tensor of the result's rank",
                       op->name);
  if (!sim_num_supported(O->dtype) || sim_dtype_is_complex(O->dtype) ||
      (r->normal && !sim_dtype_is_float(O->dtype)))
    return sim_unsupported_type(fc, op, O->dtype);
  r->rank = O->rank;
  for (int32_t d = 0; d < O->rank; d++) r->dims[d] = O->dims[d];
  r->numel = sim_numel(O);
  /* FNV-1a of the source position: a fixed key per op. */
  uint64_t h = 1469598103934665603ull;
  int64_t parts[3] = {op->loc.line, op->loc.col, (int64_t)fc->pos};
  for (int i = 0; i < 3; i++) h = (h ^ (uint64_t)parts[i]) * 1099511628211ull;
  r->key = h;
  r->calls = 0;
  st->data = r;
  st->run = sim_run_rng;
  return XRT_OK;
}

/* ======================================================================
 * chlo.ragged_dot
 * ==================================================================== */

/* A dot_general whose lhs ragged dimension is cut into groups by the
 * 1-D group_sizes: mode 1 (ragged lhs non-contracting dimension): rows
 * of group g multiply rhs slice g of rhs_group_dimensions, rows past the
 * groups give 0; mode 2 (ragged contracting dimension): result slice g
 * contracts only the group's range; mode 3 (ragged batch dimension): a
 * plain dot_general. */
typedef struct sim_ragged {
  sim_la_cvt cv;
  int mode;
  int64_t G, B, M, N, K;
  const int64_t *lb, *rb, *lm, *rn, *lk, *rk;
  const int64_t *m_r, *k_r; /* ragged index of each m (mode 1), k (mode 2) */
  int64_t rgs;              /* rhs stride of the group dimension */
  xrt_dtype gt;
  int32_t ends;             /* pseudo value: G cumulative group ends */
} sim_ragged;

static void sim_ragged_elem(const sim_ragged *g, const char *L,
                            const char *R, int64_t lo, int64_t ro,
                            int64_t kmin, int64_t kmax, sim_la_acc *acc) {
  size_t cs = g->cv.cs;
  for (int64_t k = 0; k < g->K; k++) {
    if (g->mode == 2 && (g->k_r[k] < kmin || g->k_r[k] >= kmax)) continue;
    g->cv.dotn(acc, L + (size_t)(lo + g->lk[k]) * cs, 0,
               R + (size_t)(ro + g->rk[k]) * cs, 0, 1);
  }
}

static xrt_status sim_run_ragged(const sim_step *st, void **vals, sim_cx *cx) {
  const sim_ragged *g = (const sim_ragged *)st->data;
  const void *l = vals[st->in[0]], *r = vals[st->in[1]];
  void *out = vals[st->out[0]], *res;
  int64_t *ends = (int64_t *)vals[g->ends], acc_end = 0;
  (void)cx;
  for (int64_t i = 0; i < g->G; i++) { /* negative sizes count as 0 */
    int64_t s = sim_la_geti(g->gt, vals[st->in[2]], i);
    if (s > 0 && acc_end <= INT64_MAX - s) acc_end += s;
    ends[i] = acc_end;
  }
  sim_la_cvt_pre(&g->cv, vals, &l, &r, &res, out);
  const char *L = (const char *)l, *R = (const char *)r;
  char *O = (char *)res;
  int64_t groups = g->mode == 2 ? g->G : 1, o = 0;
  for (int64_t gi = 0; gi < groups; gi++) {
    int64_t kmin = gi ? ends[gi - 1] : 0, kmax = g->mode == 2 ? ends[gi] : 0;
    for (int64_t b = 0; b < g->B; b++)
      for (int64_t m = 0; m < g->M; m++) {
        int64_t grp = 0;
        if (g->mode == 1)
          while (grp < g->G && g->m_r[m] >= ends[grp]) grp++;
        for (int64_t n = 0; n < g->N; n++, o++) {
          sim_la_acc acc;
          memset(&acc, 0, sizeof acc);
          if (grp < g->G)
            sim_ragged_elem(g, L, R, g->lb[b] + g->lm[m],
                            g->rb[b] + g->rn[n] + grp * g->rgs, kmin, kmax,
                            &acc);
          g->cv.store(O + (size_t)o * g->cv.cs, &acc);
        }
      }
  }
  sim_la_cvt_post(&g->cv, vals, out);
  return XRT_OK;
}

/* For each entry of the offset table over dims (row-major), the index
 * along dimension `which` of x. */
static const int64_t *sim_ragged_index(sim_fcc *fc, const xrt_shape *x,
                                       const int64_t *dims, int64_t nd,
                                       int64_t which) {
  int64_t sizes[XRT_MAX_RANK], st1[XRT_MAX_RANK], c = 1;
  for (int64_t j = 0; j < nd; j++) {
    sizes[j] = x->dims[dims[j]];
    st1[j] = dims[j] == which;
    c *= sizes[j];
  }
  int64_t *t = (int64_t *)sim_palloc(fc, sizeof *t * (size_t)(c ? c : 1));
  if (t) sim_enum_offsets(nd, sizes, st1, NULL, t, NULL);
  return t;
}

static int sim_ragged_has(const int64_t *v, int64_t n, int64_t x) {
  for (int64_t i = 0; i < n; i++)
    if (v[i] == x) return 1;
  return 0;
}

static xrt_status sim_lower_chlo_ragged_dot(sim_fcc *fc, const xrt_ir_op *op,
                                            sim_step *st) {
  const xrt_ir_attr *dn = xrt_ir_op_attr(op, "ragged_dot_dimension_numbers");
  int64_t nlb, nrb, nlc, nrc, nlr, nrg;
  const int64_t *lbd = sim_dot_field(dn, "lhs_batching_dimensions", &nlb);
  const int64_t *rbd = sim_dot_field(dn, "rhs_batching_dimensions", &nrb);
  const int64_t *lcd = sim_dot_field(dn, "lhs_contracting_dimensions", &nlc);
  const int64_t *rcd = sim_dot_field(dn, "rhs_contracting_dimensions", &nrc);
  const int64_t *lrd = sim_dot_field(dn, "lhs_ragged_dimensions", &nlr);
  const int64_t *rgd = sim_dot_field(dn, "rhs_group_dimensions", &nrg);
  if (op->num_operands != 3 || nlb != nrb || nlc != nrc || nlr != 1 ||
      nrg > 1)
    return sim_fail_op(fc->cc->err, op, XRT_INVALID_ARGUMENT, "bad "
                       "ragged_dot_dimension_numbers");
  const xrt_shape *L = sim_shape(fc, op->operands[0]);
  const xrt_shape *R = sim_shape(fc, op->operands[1]);
  const xrt_shape *GS = sim_shape(fc, op->operands[2]);
  const xrt_shape *O = sim_shape(fc, op->results[0]);
  sim_ragged *g = (sim_ragged *)sim_palloc(fc, sizeof *g);
  if (!g) return XRT_RESOURCE_EXHAUSTED;
  int64_t rdim = lrd[0];
  g->mode = sim_ragged_has(lcd, nlc, rdim) ? 2
          : sim_ragged_has(lbd, nlb, rdim) ? 3 : 1;
  if (GS->rank != 1 || (g->mode == 1) != (nrg == 1))
    return sim_fail_op(fc->cc->err, op, XRT_UNIMPLEMENTED, "%s: only 1-D "
                       "group_sizes, with rhs_group_dimensions exactly when "
                       "the ragged dimension is a non-contracting one",
                       op->name);
  g->G = GS->dims[0];
  g->gt = GS->dtype;
  int64_t lf[XRT_MAX_RANK], rf[XRT_MAX_RANK], nlf, nrf;
  nlf = sim_free_dims(L, lbd, nlb, lcd, nlc, lf);
  nrf = sim_free_dims(R, rbd, nrb, rcd, nrc, rf);
  if (g->mode == 1) { /* the group dimension is not a result dimension */
    int64_t k = 0;
    for (int64_t i = 0; i < nrf; i++)
      if (rf[i] != rgd[0]) rf[k++] = rf[i];
    nrf = k;
  }
  int64_t *rb = NULL, *rk = NULL;
  g->lb = sim_dot_table(fc, L, lbd, nlb, R, rbd, &rb, &g->B);
  g->lk = sim_dot_table(fc, L, lcd, nlc, R, rcd, &rk, &g->K);
  g->lm = sim_dot_table(fc, L, lf, nlf, NULL, NULL, NULL, &g->M);
  g->rn = sim_dot_table(fc, R, rf, nrf, NULL, NULL, NULL, &g->N);
  if (!g->lb || !g->lk || !g->lm || !g->rn) return XRT_RESOURCE_EXHAUSTED;
  g->rb = rb, g->rk = rk;
  if (g->mode == 1) {
    int64_t rs[XRT_MAX_RANK];
    sim_strides(R, rs);
    g->rgs = rs[rgd[0]];
    g->m_r = sim_ragged_index(fc, L, lf, nlf, rdim);
    if (!g->m_r) return XRT_RESOURCE_EXHAUSTED;
    if (R->dims[rgd[0]] != g->G) goto bad;
  }
  if (g->mode == 2 &&
      !(g->k_r = sim_ragged_index(fc, L, lcd, nlc, rdim)))
    return XRT_RESOURCE_EXHAUSTED;
  if ((g->mode == 2 ? g->G : 1) * g->B * g->M * g->N != sim_numel(O))
    goto bad;
  xrt_status rc = sim_la_cvt_init(fc, op, &g->cv, op->operands[0],
                                  op->operands[1]);
  if (!rc) rc = sim_temp(fc, sizeof(int64_t) * (size_t)(g->G + 1), &g->ends);
  st->data = g;
  st->run = sim_run_ragged;
  return rc;
bad:
  return sim_fail_op(fc->cc->err, op, XRT_INVALID_ARGUMENT, "%s: result "
                     "shape does not follow from the operands", op->name);
}

/* ======================================================================
 * The device thread pools
 *
 * Each device owns a pool of threads_per_device - 1 workers; the thread
 * that executes on the device is the last participant.  Workers start on
 * the pool's first parallel loop (a client with many devices and small
 * programs starts none) and are joined when the client is destroyed.
 *
 * sim_parallel_for cuts [0, n) into chunks of at least grain items that
 * the participants claim with an atomic counter, so a participant that the
 * OS delays (a loaded machine) just takes fewer chunks.  A pool runs one
 * loop at a time: a loop started while it is busy (a nested call from a
 * chunk, or a concurrent execute on the same device) runs serially on its
 * caller.  No allocation per loop.
 * ==================================================================== */

#include <stdatomic.h>

#define SIM_MAX_THREADS 256 /* per device */

struct sim_tpool {
  pthread_mutex_t mu;
  pthread_cond_t wake, done;
  atomic_int busy;     /* a loop owns the pool */
  int threads;         /* participants wanted, including the caller */
  int nworkers;        /* started */
  int started, stop;
  pthread_t *tid;      /* threads - 1 slots */
  /* The current loop (written under mu before wake is broadcast). */
  uint64_t gen, gen0; /* loops run; gen when the workers started */
  sim_range_fn fn;
  void *ctx;
  int64_t n, chunk, nchunks;
  atomic_llong next;   /* next chunk to claim */
  int pending;         /* workers that have not finished this loop */
};

/* Claims and runs chunks of the current loop until none is left. */
static void sim_tpool_work(struct sim_tpool *tp) {
  for (;;) {
    int64_t k = (int64_t)atomic_fetch_add(&tp->next, 1);
    if (k >= tp->nchunks) return;
    int64_t b = k * tp->chunk, e = b + tp->chunk;
    tp->fn(tp->ctx, b, e < tp->n ? e : tp->n);
  }
}

static void *sim_tpool_main(void *arg) {
  struct sim_tpool *tp = (struct sim_tpool *)arg;
  pthread_mutex_lock(&tp->mu);
  uint64_t seen = tp->gen0; /* the loop that started us may be running */
  for (;;) {
    while (!tp->stop && tp->gen == seen) pthread_cond_wait(&tp->wake, &tp->mu);
    if (tp->stop) break;
    seen = tp->gen;
    pthread_mutex_unlock(&tp->mu);
    sim_tpool_work(tp);
    pthread_mutex_lock(&tp->mu);
    if (--tp->pending == 0) pthread_cond_signal(&tp->done);
  }
  pthread_mutex_unlock(&tp->mu);
  return NULL;
}

/* Starts the workers once; a thread that cannot be created leaves the pool
 * smaller (still correct: the caller runs every unclaimed chunk). Locked. */
static void sim_tpool_start(struct sim_tpool *tp) {
  tp->started = 1;
  tp->gen0 = tp->gen;
  while (tp->nworkers < tp->threads - 1 &&
         pthread_create(&tp->tid[tp->nworkers], NULL, sim_tpool_main, tp) == 0)
    tp->nworkers++;
}

static void sim_tpool_stop(struct sim_tpool *tp) {
  pthread_mutex_lock(&tp->mu);
  tp->stop = 1;
  pthread_cond_broadcast(&tp->wake);
  pthread_mutex_unlock(&tp->mu);
  for (int i = 0; i < tp->nworkers; i++) pthread_join(tp->tid[i], NULL);
  tp->nworkers = 0;
}

static void sim_parallel_for(sim_cx *cx, int64_t n, int64_t grain,
                             sim_range_fn fn, void *ctx) {
  struct sim_tpool *tp = cx ? cx->tp : NULL;
  if (n <= 0) return;
  if (grain < 1) grain = 1;
  int expect = 0;
  if (!tp || tp->threads < 2 || n < 2 * grain ||
      !atomic_compare_exchange_strong(&tp->busy, &expect, 1)) {
    fn(ctx, 0, n);
    return;
  }
  /* About four chunks per participant balance a loaded machine without
   * making chunks small. */
  int64_t want = (int64_t)tp->threads * 4;
  int64_t chunk = (n + want - 1) / want;
  if (chunk < grain) chunk = grain;
  pthread_mutex_lock(&tp->mu);
  if (!tp->started) sim_tpool_start(tp);
  if (tp->nworkers == 0) {
    pthread_mutex_unlock(&tp->mu);
    atomic_store(&tp->busy, 0);
    fn(ctx, 0, n);
    return;
  }
  tp->fn = fn;
  tp->ctx = ctx;
  tp->n = n;
  tp->chunk = chunk;
  tp->nchunks = (n + chunk - 1) / chunk;
  atomic_store(&tp->next, 0);
  tp->pending = tp->nworkers;
  tp->gen++;
  pthread_cond_broadcast(&tp->wake);
  pthread_mutex_unlock(&tp->mu);
  sim_tpool_work(tp);
  pthread_mutex_lock(&tp->mu);
  while (tp->pending > 0) pthread_cond_wait(&tp->done, &tp->mu);
  pthread_mutex_unlock(&tp->mu);
  atomic_store(&tp->busy, 0);
}

/* threads_per_device 0: the online cores shared among the devices. */
static int sim_threads_default(int ndev) {
  long cores = sim_os_cpu_count();
  long t = cores > 0 ? cores / (ndev > 0 ? ndev : 1) : 1;
  return t < 1 ? 1 : t > SIM_MAX_THREADS ? SIM_MAX_THREADS : (int)t;
}

static void sim_tpools_free(sim_client *c) {
  if (!c->tp) return;
  for (int i = 0; i < c->ntp; i++) {
    struct sim_tpool *tp = &c->tp[i];
    sim_tpool_stop(tp);
    pthread_cond_destroy(&tp->done);
    pthread_cond_destroy(&tp->wake);
    pthread_mutex_destroy(&tp->mu);
    c->al.free(c->al.self, tp->tid);
  }
  c->al.free(c->al.self, c->tp);
  c->tp = NULL;
  c->ntp = 0;
}

static xrt_status sim_tpool_init(sim_client *c, struct sim_tpool *tp,
                                 int threads, xrt_plugin_error *err) {
  memset(tp, 0, sizeof *tp);
  atomic_init(&tp->busy, 0);
  atomic_init(&tp->next, 0);
  tp->threads = threads;
  tp->tid = (pthread_t *)c->al.alloc(c->al.self,
                                     sizeof(pthread_t) * (size_t)threads);
  if (!tp->tid) return sim_fail(err, XRT_RESOURCE_EXHAUSTED, "out of host "
                                "memory for a thread pool");
  int ok = pthread_mutex_init(&tp->mu, NULL) == 0;
  if (ok && pthread_cond_init(&tp->wake, NULL) != 0) {
    pthread_mutex_destroy(&tp->mu);
    ok = 0;
  }
  if (ok && pthread_cond_init(&tp->done, NULL) != 0) {
    pthread_cond_destroy(&tp->wake);
    pthread_mutex_destroy(&tp->mu);
    ok = 0;
  }
  if (!ok) {
    c->al.free(c->al.self, tp->tid);
    tp->tid = NULL;
    return sim_fail(err, XRT_INTERNAL, "cannot initialise a thread pool");
  }
  return XRT_OK;
}

/* One pool per device, no threads yet; also reports the thread count as
 * the devices' "cores" attribute. */
static xrt_status sim_tpools_make(sim_client *c, int threads,
                                  xrt_plugin_error *err) {
  if (threads < 0 || threads > SIM_MAX_THREADS)
    return sim_fail(err, XRT_INVALID_ARGUMENT, "threads_per_device must be "
                    "0..%d, not %d", SIM_MAX_THREADS, threads);
  if (threads == 0) threads = sim_threads_default(c->ndev);
  c->tp = (struct sim_tpool *)c->al.alloc(
      c->al.self, sizeof *c->tp * (size_t)c->ndev);
  if (!c->tp)
    return sim_fail(err, XRT_RESOURCE_EXHAUSTED, "out of host memory");
  c->ntp = 0;
  for (int i = 0; i < c->ndev; i++, c->ntp++) {
    xrt_status s = sim_tpool_init(c, &c->tp[i], threads, err);
    if (s) return s;
    c->dev[i].attrs[1].int_value = threads;
  }
  return XRT_OK;
}

static struct sim_tpool *sim_tpool_of(const sim_client *c, int device) {
  return c->tp && device >= 0 && device < c->ntp ? &c->tp[device] : NULL;
}

/* ======================================================================
 * Parallel and blocked data movement
 * ==================================================================== */

/* Copies below this many bytes stay on the calling thread; a chunk of a
 * parallel copy moves at least SIM_PAR_GRAIN bytes. */
#define SIM_PAR_MIN ((size_t)1 << 20)
#define SIM_PAR_GRAIN ((size_t)128 << 10)

typedef struct sim_memcpy_job {
  char *d;
  const char *s;
} sim_memcpy_job;

static void sim_memcpy_range(void *ctx, int64_t b, int64_t e) {
  const sim_memcpy_job *j = (const sim_memcpy_job *)ctx;
  memcpy(j->d + b, j->s + b, (size_t)(e - b));
}

static void sim_memcpy_par(sim_cx *cx, void *dst, const void *src,
                           size_t n) {
  if (n < SIM_PAR_MIN || !cx->tp) {
    if (n) memcpy(dst, src, n);
    return;
  }
  sim_memcpy_job j = {(char *)dst, (const char *)src};
  sim_parallel_for(cx, (int64_t)n, (int64_t)SIM_PAR_GRAIN, sim_memcpy_range,
                   &j);
}

/* ---- transposing blocks: d[i][j] = s[j][i], i < ni, j < nj ----
 * d rows are ds bytes apart and s rows ss bytes apart (either may be
 * negative); elements are contiguous along both rows. */
typedef void (*sim_tr_fn)(char *d, ptrdiff_t ds, const char *s, ptrdiff_t ss,
                          int64_t ni, int64_t nj);

#define SIM_TR_DEF(NAME, T)                                                 \
  static void NAME(char *d, ptrdiff_t ds, const char *s, ptrdiff_t ss,      \
                   int64_t ni, int64_t nj) {                                \
    for (int64_t i = 0; i < ni; i++) {                                      \
      T *o = (T *)(void *)(d + i * ds);                                     \
      const char *c = s + i * (ptrdiff_t)sizeof(T);                         \
      for (int64_t j = 0; j < nj; j++)                                      \
        o[j] = *(const T *)(const void *)(c + j * ss);                      \
    }                                                                       \
  }
SIM_TR_DEF(sim_tr_1, uint8_t)
SIM_TR_DEF(sim_tr_2, uint16_t)
SIM_TR_DEF(sim_tr_4, uint32_t)
SIM_TR_DEF(sim_tr_8, uint64_t)
SIM_TR_DEF(sim_tr_16, sim_b16)

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#define SIM_TR_X86 1
#include <immintrin.h>

/* 8x8 of 32-bit elements through AVX2 registers. */
__attribute__((target("avx2"))) static inline void
sim_tr8x8_avx2(char *d, ptrdiff_t ds, const char *s, ptrdiff_t ss) {
  __m256 r0 = _mm256_loadu_ps((const float *)(const void *)(s + 0 * ss));
  __m256 r1 = _mm256_loadu_ps((const float *)(const void *)(s + 1 * ss));
  __m256 r2 = _mm256_loadu_ps((const float *)(const void *)(s + 2 * ss));
  __m256 r3 = _mm256_loadu_ps((const float *)(const void *)(s + 3 * ss));
  __m256 r4 = _mm256_loadu_ps((const float *)(const void *)(s + 4 * ss));
  __m256 r5 = _mm256_loadu_ps((const float *)(const void *)(s + 5 * ss));
  __m256 r6 = _mm256_loadu_ps((const float *)(const void *)(s + 6 * ss));
  __m256 r7 = _mm256_loadu_ps((const float *)(const void *)(s + 7 * ss));
  __m256 t0 = _mm256_unpacklo_ps(r0, r1), t1 = _mm256_unpackhi_ps(r0, r1);
  __m256 t2 = _mm256_unpacklo_ps(r2, r3), t3 = _mm256_unpackhi_ps(r2, r3);
  __m256 t4 = _mm256_unpacklo_ps(r4, r5), t5 = _mm256_unpackhi_ps(r4, r5);
  __m256 t6 = _mm256_unpacklo_ps(r6, r7), t7 = _mm256_unpackhi_ps(r6, r7);
  __m256 u0 = _mm256_shuffle_ps(t0, t2, 0x44), u1 = _mm256_shuffle_ps(t0, t2, 0xEE);
  __m256 u2 = _mm256_shuffle_ps(t1, t3, 0x44), u3 = _mm256_shuffle_ps(t1, t3, 0xEE);
  __m256 u4 = _mm256_shuffle_ps(t4, t6, 0x44), u5 = _mm256_shuffle_ps(t4, t6, 0xEE);
  __m256 u6 = _mm256_shuffle_ps(t5, t7, 0x44), u7 = _mm256_shuffle_ps(t5, t7, 0xEE);
  _mm256_storeu_ps((float *)(void *)(d + 0 * ds), _mm256_permute2f128_ps(u0, u4, 0x20));
  _mm256_storeu_ps((float *)(void *)(d + 1 * ds), _mm256_permute2f128_ps(u1, u5, 0x20));
  _mm256_storeu_ps((float *)(void *)(d + 2 * ds), _mm256_permute2f128_ps(u2, u6, 0x20));
  _mm256_storeu_ps((float *)(void *)(d + 3 * ds), _mm256_permute2f128_ps(u3, u7, 0x20));
  _mm256_storeu_ps((float *)(void *)(d + 4 * ds), _mm256_permute2f128_ps(u0, u4, 0x31));
  _mm256_storeu_ps((float *)(void *)(d + 5 * ds), _mm256_permute2f128_ps(u1, u5, 0x31));
  _mm256_storeu_ps((float *)(void *)(d + 6 * ds), _mm256_permute2f128_ps(u2, u6, 0x31));
  _mm256_storeu_ps((float *)(void *)(d + 7 * ds), _mm256_permute2f128_ps(u3, u7, 0x31));
}

/* 4x4 of 64-bit elements through AVX2 registers. */
__attribute__((target("avx2"))) static inline void
sim_tr4x4_avx2(char *d, ptrdiff_t ds, const char *s, ptrdiff_t ss) {
  __m256d r0 = _mm256_loadu_pd((const double *)(const void *)(s + 0 * ss));
  __m256d r1 = _mm256_loadu_pd((const double *)(const void *)(s + 1 * ss));
  __m256d r2 = _mm256_loadu_pd((const double *)(const void *)(s + 2 * ss));
  __m256d r3 = _mm256_loadu_pd((const double *)(const void *)(s + 3 * ss));
  __m256d t0 = _mm256_unpacklo_pd(r0, r1), t1 = _mm256_unpackhi_pd(r0, r1);
  __m256d t2 = _mm256_unpacklo_pd(r2, r3), t3 = _mm256_unpackhi_pd(r2, r3);
  _mm256_storeu_pd((double *)(void *)(d + 0 * ds), _mm256_permute2f128_pd(t0, t2, 0x20));
  _mm256_storeu_pd((double *)(void *)(d + 1 * ds), _mm256_permute2f128_pd(t1, t3, 0x20));
  _mm256_storeu_pd((double *)(void *)(d + 2 * ds), _mm256_permute2f128_pd(t0, t2, 0x31));
  _mm256_storeu_pd((double *)(void *)(d + 3 * ds), _mm256_permute2f128_pd(t1, t3, 0x31));
}

/* 16x16 of 32-bit elements through AVX-512 registers: whole cache lines in
 * and out.  Unpacks and in-lane shuffles make 4x4 transposes in every
 * 128-bit lane; two rounds of lane shuffles put the lanes in place. */
__attribute__((target("avx512f"))) static inline void
sim_tr16x16_avx512(char *d, ptrdiff_t ds, const char *s, ptrdiff_t ss) {
  __m512 r[16], t[16], u[16], v[16];
  for (int k = 0; k < 16; k++)
    r[k] = _mm512_loadu_ps((const float *)(const void *)(s + k * ss));
  for (int m = 0; m < 8; m++) {
    t[2 * m] = _mm512_unpacklo_ps(r[2 * m], r[2 * m + 1]);
    t[2 * m + 1] = _mm512_unpackhi_ps(r[2 * m], r[2 * m + 1]);
  }
  for (int m = 0; m < 4; m++) {
    u[4 * m + 0] = _mm512_shuffle_ps(t[4 * m], t[4 * m + 2], 0x44);
    u[4 * m + 1] = _mm512_shuffle_ps(t[4 * m], t[4 * m + 2], 0xEE);
    u[4 * m + 2] = _mm512_shuffle_ps(t[4 * m + 1], t[4 * m + 3], 0x44);
    u[4 * m + 3] = _mm512_shuffle_ps(t[4 * m + 1], t[4 * m + 3], 0xEE);
  }
  /* u[4m + c], lane L: rows 4m..4m+3 of column 4L + c. */
  for (int c = 0; c < 4; c++) {
    v[c] = _mm512_shuffle_f32x4(u[c], u[4 + c], 0x88);
    v[4 + c] = _mm512_shuffle_f32x4(u[c], u[4 + c], 0xDD);
    v[8 + c] = _mm512_shuffle_f32x4(u[8 + c], u[12 + c], 0x88);
    v[12 + c] = _mm512_shuffle_f32x4(u[8 + c], u[12 + c], 0xDD);
  }
  for (int c = 0; c < 4; c++) {
    _mm512_storeu_ps((float *)(void *)(d + c * ds),
                     _mm512_shuffle_f32x4(v[c], v[8 + c], 0x88));
    _mm512_storeu_ps((float *)(void *)(d + (4 + c) * ds),
                     _mm512_shuffle_f32x4(v[4 + c], v[12 + c], 0x88));
    _mm512_storeu_ps((float *)(void *)(d + (8 + c) * ds),
                     _mm512_shuffle_f32x4(v[c], v[8 + c], 0xDD));
    _mm512_storeu_ps((float *)(void *)(d + (12 + c) * ds),
                     _mm512_shuffle_f32x4(v[4 + c], v[12 + c], 0xDD));
  }
}

/* A block in M x M micro-blocks by KERNEL, the ragged edges by FALLBACK. */
#define SIM_TR_SIMD_DEF(NAME, TARGET, KERNEL, M, ES, FALLBACK)              \
  __attribute__((target(TARGET))) static void NAME(                         \
      char *d, ptrdiff_t ds, const char *s, ptrdiff_t ss, int64_t ni,       \
      int64_t nj) {                                                         \
    int64_t mi = ni - ni % (M), mj = nj - nj % (M);                         \
    for (int64_t j = 0; j < mj; j += (M))                                   \
      for (int64_t i = 0; i < mi; i += (M))                                 \
        KERNEL(d + i * ds + j * (ES), ds, s + j * ss + i * (ES), ss);       \
    if (mj < nj)                                                            \
      FALLBACK(d + mj * (ES), ds, s + mj * ss, ss, ni, nj - mj);            \
    if (mi < ni)                                                            \
      FALLBACK(d + mi * ds, ds, s + mi * (ES), ss, ni - mi, mj);            \
  }
SIM_TR_SIMD_DEF(sim_tr_4_avx2, "avx2", sim_tr8x8_avx2, 8, 4, sim_tr_4)
SIM_TR_SIMD_DEF(sim_tr_8_avx2, "avx2", sim_tr4x4_avx2, 4, 8, sim_tr_8)
SIM_TR_SIMD_DEF(sim_tr_4_avx512, "avx512f", sim_tr16x16_avx512, 16, 4,
                sim_tr_4)
#endif

/* The highest instruction set the kernels may use, whatever the CPU has:
 * XRT_SIM_ISA=portable (0), avx2 (1) or avx512 (2, the default), read
 * once.  valgrind (3.19) cannot run AVX-512 code, so `make test-valgrind`
 * sets portable; it also lets one compare the kernels on one machine. */
static int sim_isa_cap_level = 2;
static pthread_once_t sim_isa_cap_once = PTHREAD_ONCE_INIT;
static void sim_isa_cap_read(void) {
  const char *e = getenv("XRT_SIM_ISA");
  if (!e || !*e) return;
  if (!strcmp(e, "portable")) sim_isa_cap_level = 0;
  else if (!strcmp(e, "avx2")) sim_isa_cap_level = 1;
}
static int sim_isa_cap(void) {
  pthread_once(&sim_isa_cap_once, sim_isa_cap_read);
  return sim_isa_cap_level;
}

/* The running CPU's best block transpose for element size es. */
static sim_tr_fn sim_tr_for(size_t es) {
  switch (es) {
  case 1: return sim_tr_1;
  case 2: return sim_tr_2;
#if SIM_TR_X86
  case 4:
    if (sim_isa_cap() >= 2 && __builtin_cpu_supports("avx512f"))
      return sim_tr_4_avx512;
    return sim_isa_cap() >= 1 && __builtin_cpu_supports("avx2")
               ? sim_tr_4_avx2 : sim_tr_4;
  case 8:
    return sim_isa_cap() >= 1 && __builtin_cpu_supports("avx2")
               ? sim_tr_8_avx2 : sim_tr_8;
#else
  case 4: return sim_tr_4;
  case 8: return sim_tr_8;
#endif
  default: return sim_tr_16;
  }
}

/* ---- a strided copy cut into items for sim_parallel_for ----
 * An item is part of the innermost loop for one outer index: a band of
 * SIM_TR_BAND rows of a tiled copy (swept along the other dimension), or
 * a piece of the innermost row of a plain one. */
#define SIM_TR_BAND 32

typedef struct sim_xjob {
  const sim_xcopy *x;
  char *d;
  const char *s;
  int nout;         /* outer dimensions */
  int64_t per;      /* items per outer index */
  int64_t piece;    /* elements of a plain row per item */
  sim_tr_fn tr;
} sim_xjob;

/* Item k of outer position (so, dof). */
static void sim_xjob_item(const sim_xjob *j, ptrdiff_t so, ptrdiff_t dof,
                          int64_t k) {
  const sim_xcopy *x = j->x;
  int b = x->rank - 1, a = b - 1;
  if (!x->tiled) {
    int64_t lo = k * j->piece, n = x->dims[b] - lo;
    x->inner(j->d + dof + lo * x->ds[b], j->s + so + lo * x->ss[b],
             n < j->piece ? n : j->piece, x->ds[b], x->ss[b]);
    return;
  }
  int64_t lo = k * SIM_TR_BAND, n = x->dims[a] - lo;
  /* dims[a] is contiguous in the source, dims[b] in the destination. */
  j->tr(j->d + dof + lo * x->ds[a], x->ds[a], j->s + so + lo * x->ss[a],
        x->ss[b], n < SIM_TR_BAND ? n : SIM_TR_BAND, x->dims[b]);
}

static void sim_xjob_range(void *ctx, int64_t begin, int64_t end) {
  const sim_xjob *j = (const sim_xjob *)ctx;
  const sim_xcopy *x = j->x;
  int64_t idx[XRT_MAX_RANK], o = begin / j->per, k = begin % j->per;
  ptrdiff_t so = x->sbase, dof = x->dbase;
  for (int q = j->nout - 1; q >= 0; q--) {
    idx[q] = o % x->dims[q];
    o /= x->dims[q];
    so += (ptrdiff_t)idx[q] * x->ss[q];
    dof += (ptrdiff_t)idx[q] * x->ds[q];
  }
  for (int64_t it = begin; it < end; it++) {
    sim_xjob_item(j, so, dof, k);
    if (++k < j->per) continue;
    k = 0;
    for (int q = j->nout - 1; q >= 0; q--) {
      so += x->ss[q];
      dof += x->ds[q];
      if (++idx[q] < x->dims[q]) break;
      so -= x->ss[q] * (ptrdiff_t)x->dims[q];
      dof -= x->ds[q] * (ptrdiff_t)x->dims[q];
      idx[q] = 0;
    }
  }
}

static size_t sim_inner_es(sim_inner_fn f) {
  return f == sim_inner_1 ? 1 : f == sim_inner_2 ? 2 : f == sim_inner_4 ? 4
       : f == sim_inner_8 ? 8 : 16;
}

/* sim_xcopy_run with blocked transposes, on the device's pool when big. */
static void sim_xcopy_par(sim_cx *cx, const sim_xcopy *x, char *dst,
                          const char *src) {
  if (x->empty) return;
  int64_t total = 1;
  for (int q = 0; q < x->rank; q++) total *= x->dims[q];
  size_t es = sim_inner_es(x->inner);
  size_t bytes = (size_t)total * es;
  if (!x->tiled && (!cx->tp || bytes < SIM_PAR_MIN)) {
    sim_xcopy_run(x, dst, src);
    return;
  }
  sim_xjob j = {x, dst, src, x->rank - (x->tiled ? 2 : 1), 1, 0, NULL};
  int b = x->rank - 1;
  if (x->tiled) {
    j.tr = sim_tr_for(es);
    j.per = (x->dims[b - 1] + SIM_TR_BAND - 1) / SIM_TR_BAND;
  } else {
    /* Rows longer than a chunk are cut in chunk-sized pieces. */
    int64_t ebytes = x->ds[b] < 0 ? -x->ds[b] : x->ds[b];
    int64_t chunk = (int64_t)SIM_PAR_GRAIN / (ebytes ? ebytes : 1);
    j.piece = x->dims[b] > chunk ? chunk : x->dims[b];
    j.per = (x->dims[b] + j.piece - 1) / j.piece;
  }
  int64_t items = total / x->dims[b] / (x->tiled ? x->dims[b - 1] : 1) * j.per;
  int64_t item_bytes = (int64_t)(bytes / (size_t)items) + 1;
  int64_t grain = (int64_t)SIM_PAR_GRAIN / item_bytes;
  if (bytes < SIM_PAR_MIN) grain = items; /* serial */
  sim_parallel_for(cx, items, grain < 1 ? 1 : grain, sim_xjob_range, &j);
}
/* ======================================================================
 * GEMM: packed, cache-blocked f32/f64 matrix products (dot_general and
 * convolution)
 *
 * C[b, m, n] = sum_k A[b, m, k] * B[b, k, n] in the GotoBLAS/BLIS order,
 * with the roles of the operands chosen for a row-major C: the micro-kernel
 * holds an MR x NR tile of C in vector registers, NR along n (vectors) and
 * MR along m (broadcasts).  So a packed A micro-panel (MR x kc) stays in
 * L1, the packed B block (kc x nc) of one worker in L2 and the packed A
 * block (mc x kc) in L2/L3.  The device's threads each take one lane: a
 * range of C's rows or columns, with its own pack buffers:
 *
 *   per lane, for ic in its rows by mc, pc in K by kc: pack A block
 *     for jc in its columns by nc: pack B block
 *       for each A micro-panel, for each B micro-panel: kernel into C
 *
 * Full tiles go straight to C (the kernel stores or adds), edge tiles
 * through a small tile buffer.  A lane whose columns fit one column block
 * (N <= nc, as in most convolutions) runs sim_gemm_narrow instead: B packed
 * once per K block (all of K when it fits), each A micro-panel packed just
 * before its kernels.  f32 convolutions with contiguous features pack A in
 * strips of 16 k (SIM_GK_STRIP: vector copies of feature runs, no
 * transpose) for a kernel variant that reads that layout (sim_gk.fs).
 * Operands are read through element-offset tables (the ones dot_general
 * computes for any dimension layout, or a convolution's windows), so no
 * transposing copy is made; affine tables get strided fast paths.  Every
 * buffer is plan scratch, so execute allocates nothing.  Kernels exist for
 * AVX-512, AVX2+FMA and portable C, picked at compile time of the program
 * from the running CPU (XRT_SIM_GEMM=c|avx2|avx512|off forces one, for
 * tests; off keeps the plain loops).  With XRT_WITH_CBLAS large products in
 * a BLAS layout call cblas_sgemm / cblas_dgemm instead when CBLAS timed
 * faster on this machine (sim_blas_faster).
 * ==================================================================== */

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#define SIM_GEMM_X86 1
#include <immintrin.h>
#else
#define SIM_GEMM_X86 0
#endif
#ifdef XRT_WITH_CBLAS
#include <cblas.h>
#endif

/* Computes the MR x NR tile a * b over kc (a: kc x MR, b: kc x NR, both
 * packed k-major) into rows c + i * ldc: stores it when first, else adds
 * it to what is there. */
typedef void (*sim_gk_fn)(int64_t kc, const void *a, const void *b, void *c,
                          int64_t ldc, int first);

typedef struct sim_gk {
  const char *name;
  int mr, nr;
  int64_t mc, kc, nc; /* cache blocks: mc, nc multiples of mr, nr */
  sim_gk_fn fn;
  /* f32 packing transposes 16 x 16 blocks with this, when not NULL */
  void (*tr16)(const float *const *src, int nr, int64_t kk, float *dst,
               int64_t ldd);
  /* When not NULL: fn for A packed in strips (see SIM_GK_STRIP) */
  sim_gk_fn fs;
} sim_gk;
#define SIM_GK_STRIP 16 /* k per strip of a strip-packed A */

/* ---- portable micro-kernels ---- */

#define SIM_GK_C_DEF(NAME, T, MR, NR)                                        \
  static void NAME(int64_t kc, const void *ap, const void *bp, void *cp,   \
                   int64_t ldc, int first) {                                 \
    const T *a = (const T *)ap, *b = (const T *)bp;                          \
    T acc[MR][NR];                                                           \
    memset(acc, 0, sizeof acc);                                              \
    for (int64_t k = 0; k < kc; k++, a += MR, b += NR)                       \
      for (int i = 0; i < MR; i++) {                                         \
        T ai = a[i];                                                         \
        for (int j = 0; j < NR; j++) acc[i][j] += ai * b[j];                 \
      }                                                                      \
    for (int i = 0; i < MR; i++) {                                           \
      T *c = (T *)cp + i * ldc;                                              \
      for (int j = 0; j < NR; j++) c[j] = first ? acc[i][j] : c[j] + acc[i][j]; \
    }                                                                        \
  }
SIM_GK_C_DEF(sim_gk_f32_c, float, 4, 16)
SIM_GK_C_DEF(sim_gk_f64_c, double, 4, 8)

#if SIM_GEMM_X86
/* ---- AVX-512: 12 x 2 vectors of accumulators (24 of 32 registers) ---- */

#define SIM_GK_ROWS12(X) X(0) X(1) X(2) X(3) X(4) X(5) X(6) X(7) X(8) X(9) \
  X(10) X(11)
#define SIM_GK_ROWS6(X) X(0) X(1) X(2) X(3) X(4) X(5)

#define SIM_GK_Z_DECL(i) V c##i##a = ZERO(), c##i##b = ZERO();
#define SIM_GK_Z_FMA(i)                                                      \
  {                                                                          \
    V ai = SET1(a[i]);                                                       \
    c##i##a = FMA(ai, b0, c##i##a);                                          \
    c##i##b = FMA(ai, b1, c##i##b);                                          \
  }
#define SIM_GK_Z_STORE(i)                                                    \
  if (!first) {                                                              \
    c##i##a = ADD(c##i##a, LOAD(c + (i) * ldc));                             \
    c##i##b = ADD(c##i##b, LOAD(c + (i) * ldc + W));                         \
  }                                                                          \
  STORE(c + (i) * ldc, c##i##a);                                             \
  STORE(c + (i) * ldc + W, c##i##b);

#define SIM_GK_VEC_DEF(NAME, TGT, T, MR, ROWS)                               \
  __attribute__((target(TGT))) static void NAME(                            \
      int64_t kc, const void *ap, const void *bp, void *cp, int64_t ldc,     \
      int first) {                                                           \
    const T *a = (const T *)ap, *b = (const T *)bp;                          \
    T *c = (T *)cp;                                                          \
    ROWS(SIM_GK_Z_DECL)                                                      \
    for (int64_t k = 0; k < kc; k++, a += MR, b += 2 * W) {                  \
      V b0 = LOAD(b), b1 = LOAD(b + W);                                      \
      ROWS(SIM_GK_Z_FMA)                                                     \
    }                                                                        \
    ROWS(SIM_GK_Z_STORE)                                                     \
  }

#define V __m512
#define W 16
#define ZERO _mm512_setzero_ps
#define SET1 _mm512_set1_ps
#define FMA _mm512_fmadd_ps
#define LOAD _mm512_loadu_ps
#define STORE _mm512_storeu_ps
#define ADD _mm512_add_ps
SIM_GK_VEC_DEF(sim_gk_f32_avx512, "avx512f", float, 12, SIM_GK_ROWS12)

/* The same tile with A packed in strips of SIM_GK_STRIP k: strip s holds
 * A[i, 16 s + t] at [s * 16 * MR + i * 16 + t], a last short strip of r
 * k at stride r.  So packing copies runs of k (a convolution's features)
 * instead of transposing them, and the kernel's broadcasts read at fixed
 * offsets from one pointer. */
#define SIM_GK_S_FMA(i)                                                      \
  {                                                                          \
    V ai = SET1(a[(i) * S]);                                                 \
    c##i##a = FMA(ai, b0, c##i##a);                                          \
    c##i##b = FMA(ai, b1, c##i##b);                                          \
  }
__attribute__((target("avx512f"))) static void sim_gk_f32_avx512_strip(
    int64_t kc, const void *ap, const void *bp, void *cp, int64_t ldc,
    int first) {
  const float *as = (const float *)ap, *b = (const float *)bp;
  float *c = (float *)cp;
  SIM_GK_ROWS12(SIM_GK_Z_DECL)
  int64_t k = 0;
  for (; k + SIM_GK_STRIP <= kc; k += SIM_GK_STRIP, as += SIM_GK_STRIP * 12) {
    const float *a = as;
    enum { S = SIM_GK_STRIP };
    for (int t = 0; t < SIM_GK_STRIP; t++, a++, b += 2 * W) {
      V b0 = LOAD(b), b1 = LOAD(b + W);
      SIM_GK_ROWS12(SIM_GK_S_FMA)
    }
  }
  const float *a = as;
  const int64_t S = kc - k;
  for (; k < kc; k++, a++, b += 2 * W) {
    V b0 = LOAD(b), b1 = LOAD(b + W);
    SIM_GK_ROWS12(SIM_GK_S_FMA)
  }
  SIM_GK_ROWS12(SIM_GK_Z_STORE)
}
#undef V
#undef W
#undef ZERO
#undef SET1
#undef FMA
#undef LOAD
#undef STORE
#undef ADD

#define V __m512d
#define W 8
#define ZERO _mm512_setzero_pd
#define SET1 _mm512_set1_pd
#define FMA _mm512_fmadd_pd
#define LOAD _mm512_loadu_pd
#define STORE _mm512_storeu_pd
#define ADD _mm512_add_pd
SIM_GK_VEC_DEF(sim_gk_f64_avx512, "avx512f", double, 12, SIM_GK_ROWS12)
#undef V
#undef W
#undef ZERO
#undef SET1
#undef FMA
#undef LOAD
#undef STORE
#undef ADD

/* ---- AVX2 + FMA: 6 x 2 vectors of accumulators (12 of 16) ---- */

#define V __m256
#define W 8
#define ZERO _mm256_setzero_ps
#define SET1 _mm256_set1_ps
#define FMA _mm256_fmadd_ps
#define LOAD _mm256_loadu_ps
#define STORE _mm256_storeu_ps
#define ADD _mm256_add_ps
SIM_GK_VEC_DEF(sim_gk_f32_avx2, "avx2,fma", float, 6, SIM_GK_ROWS6)
#undef V
#undef W
#undef ZERO
#undef SET1
#undef FMA
#undef LOAD
#undef STORE
#undef ADD

#define V __m256d
#define W 4
#define ZERO _mm256_setzero_pd
#define SET1 _mm256_set1_pd
#define FMA _mm256_fmadd_pd
#define LOAD _mm256_loadu_pd
#define STORE _mm256_storeu_pd
#define ADD _mm256_add_pd
SIM_GK_VEC_DEF(sim_gk_f64_avx2, "avx2,fma", double, 6, SIM_GK_ROWS6)
#undef V
#undef W
#undef ZERO
#undef SET1
#undef FMA
#undef LOAD
#undef STORE
#undef ADD

/* Packs a block by a 16 x 16 transpose: source row r (r < nr, zero
 * after) is src[r][0 .. kk), kk <= 16; writes lanes [0, nr) of
 * dst + k * ldd for k < kk.  nr <= 16. */
__attribute__((target("avx512f"))) static void sim_tr16_f32(
    const float *const *src, int nr, int64_t kk, float *dst, int64_t ldd) {
  __m512 r[16], t[16], u[16], v[16];
  __mmask16 km = (__mmask16)((1u << kk) - 1), om = (__mmask16)((1u << nr) - 1);
  for (int i = 0; i < 16; i++)
    r[i] = i < nr ? _mm512_maskz_loadu_ps(km, src[i]) : _mm512_setzero_ps();
  for (int i = 0; i < 16; i += 2) {
    t[i] = _mm512_unpacklo_ps(r[i], r[i + 1]);
    t[i + 1] = _mm512_unpackhi_ps(r[i], r[i + 1]);
  }
  for (int i = 0; i < 16; i += 4) { /* u[i + e]: element e of rows i..i+3 */
    u[i] = _mm512_shuffle_ps(t[i], t[i + 2], 0x44);
    u[i + 1] = _mm512_shuffle_ps(t[i], t[i + 2], 0xEE);
    u[i + 2] = _mm512_shuffle_ps(t[i + 1], t[i + 3], 0x44);
    u[i + 3] = _mm512_shuffle_ps(t[i + 1], t[i + 3], 0xEE);
  }
  for (int h = 0; h < 16; h += 8)
    for (int e = 0; e < 4; e++) {
      v[h + e] = _mm512_shuffle_f32x4(u[h + e], u[h + 4 + e], 0x88);
      v[h + 4 + e] = _mm512_shuffle_f32x4(u[h + e], u[h + 4 + e], 0xDD);
    }
  for (int e = 0; e < 8; e++) { /* v[e], v[8 + e]: elements e and e + 8 */
    __m512 lo = _mm512_shuffle_f32x4(v[e], v[8 + e], 0x88);
    __m512 hi = _mm512_shuffle_f32x4(v[e], v[8 + e], 0xDD);
    if (e < kk) _mm512_mask_storeu_ps(dst + e * ldd, om, lo);
    if (e + 8 < kk) _mm512_mask_storeu_ps(dst + (e + 8) * ldd, om, hi);
  }
}
#endif /* SIM_GEMM_X86 */

/* Kernel tables: [0] portable, [1] AVX2, [2] AVX-512; f32 then f64. */
static const sim_gk sim_gks[2][3] = {
    {{"c", 4, 16, 1024, 256, 256, sim_gk_f32_c, NULL, NULL},
#if SIM_GEMM_X86
     {"avx2", 6, 16, 2040, 384, 256, sim_gk_f32_avx2, NULL, NULL},
     {"avx512", 12, 32, 2040, 384, 320, sim_gk_f32_avx512, sim_tr16_f32,
      sim_gk_f32_avx512_strip}},
#else
     {NULL, 0, 0, 0, 0, 0, NULL, NULL, NULL},
     {NULL, 0, 0, 0, 0, 0, NULL, NULL, NULL}},
#endif
    {{"c", 4, 8, 1024, 256, 128, sim_gk_f64_c, NULL, NULL},
#if SIM_GEMM_X86
     {"avx2", 6, 8, 1020, 256, 256, sim_gk_f64_avx2, NULL, NULL},
     {"avx512", 12, 16, 1020, 256, 240, sim_gk_f64_avx512, NULL, NULL}},
#else
     {NULL, 0, 0, 0, 0, 0, NULL, NULL, NULL},
     {NULL, 0, 0, 0, 0, 0, NULL, NULL, NULL}},
#endif
};

/* The best path the CPU runs, or the one XRT_SIM_GEMM names (clamped to
 * what the CPU runs); -1: off. */
static int sim_gemm_path(void) {
  int best = 0;
#if SIM_GEMM_X86
  __builtin_cpu_init();
  if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma"))
    best = 1;
  if (best == 1 && __builtin_cpu_supports("avx512f")) best = 2;
#endif
  if (best > sim_isa_cap()) best = sim_isa_cap();
  const char *e = getenv("XRT_SIM_GEMM");
  if (!e || !*e) return best;
  if (!strcmp(e, "off")) return -1;
  int want = !strcmp(e, "c") ? 0 : !strcmp(e, "avx2") ? 1 : 2;
  return want < best ? want : best;
}

/* A convolution's lhs as the A operand: row m is (batch, output position),
 * column k is (window position, input feature), feature fastest.  A[m, k]
 * is lhs[off] with off = row[m] + kf[k] + sum_d tab_d[pos_d(m), win_d(k)],
 * or 0 where a table says padding / lhs-dilation hole. */
typedef struct sim_gconv {
  int32_t ns;
  const int64_t *tab;        /* sim_conv tables */
  int64_t toff[XRT_MAX_RANK], K[XRT_MAX_RANK];
  const int32_t *mpos;       /* per row, ns entries: pos_d * K_d + toff_d */
  const int32_t *kwin;       /* per window position, ns entries: win_d */
  int64_t Cg, lf;            /* features per group, their lhs stride */
} sim_gconv;

typedef struct sim_gemm {
  const sim_gk *k;
  size_t es;
  int64_t BT, M, N, K;
  int64_t mc, kc, nc;
  /* Element offsets: batch (ab, bb, cb), rows and columns of each
   * operand; a stride s > 0 means the table is i * s (fast paths). */
  const int64_t *ab, *bb, *cb, *am, *ak, *bk, *bn, *cm, *cn;
  int64_t am_s, ak_s, bk_s, bn_s, cm_s, cn_s;
  const sim_gconv *conv; /* A is a convolution's windows, else NULL */
  int32_t apack, bpack;  /* scratch */
  int lanes;             /* workers, each with its own B block */
  size_t apack_lane, bpack_lane; /* elements */
  int blas;              /* call CBLAS (XRT_WITH_CBLAS) */
  int astrip;            /* A strip-packed for k->fs (see SIM_GK_STRIP) */
} sim_gemm;

/* ---- packing ---- */

/* The packing and tile store functions of element type T. */
#define SIM_GPACK_DEF(SFX, T)                                                \
  /* Lane x (x < nl) of a panel, read from src + off[x], to dst[k * R + x]   \
   * for k < kb: at ks + k in blocks of 16 k (a transpose, one line each)    \
   * when kmap is NULL, else at kmap[k]. */                                  \
  static void sim_gpack_lanes_##SFX(T *dst, int R, const T *src,             \
                                    const int64_t *off, int64_t nl,          \
                                    int64_t ks, const int64_t *kmap,         \
                                    int64_t kb) {                            \
    if (!kmap) {                                                             \
      for (int64_t k = 0; k < kb; k += 16) {                                 \
        int64_t kk = kb - k < 16 ? kb - k : 16;                              \
        for (int64_t x = 0; x < nl; x++) {                                   \
          const T *s = src + off[x] + ks + k;                                \
          T *d = dst + k * R + x;                                            \
          for (int64_t t = 0; t < kk; t++) d[t * R] = s[t];                  \
        }                                                                    \
      }                                                                      \
      return;                                                                \
    }                                                                        \
    for (int64_t x = 0; x < nl; x++) {                                       \
      const T *s = src + off[x];                                             \
      T *d = dst + x;                                                        \
      for (int64_t k = 0; k < kb; k++) d[k * R] = s[kmap[k]];                \
    }                                                                        \
  }                                                                          \
                                                                             \
  /* One A micro-panel: rows r0 .. r0+mv (mv <= MR, rest zero) of columns    \
   * k0 .. k0+kb, into dst[k * MR + i]. */                                   \
  static void sim_gpack_a_##SFX(const sim_gemm *g, const T *a, int64_t r0,  \
                                int64_t mv, int64_t k0, int64_t kb,          \
                                T *dst) {                                    \
    const int MR = g->k->mr;                                                 \
    if (mv < MR)                                                             \
      for (int64_t k = 0; k < kb; k++)                                       \
        for (int i = (int)mv; i < MR; i++) dst[k * MR + i] = 0;              \
    if (g->am_s == 1) {                                                      \
      for (int64_t k = 0; k < kb; k++) {                                     \
        const T *s = a + g->am[r0] + g->ak[k0 + k];                          \
        for (int64_t i = 0; i < mv; i++) dst[k * MR + i] = s[i];             \
      }                                                                      \
      return;                                                                \
    }                                                                        \
    if (g->ak_s == 1 && TR16(g)) {                                           \
      const float *rows[16];                                                 \
      for (int64_t i = 0; i < mv; i++)                                       \
        rows[i] = (const float *)(const void *)(a + g->am[r0 + i] + k0);     \
      for (int64_t k = 0; k < kb; k += 16, dst += 16 * MR) {                 \
        g->k->tr16(rows, (int)mv, kb - k < 16 ? kb - k : 16,                 \
                   (float *)(void *)dst, MR);                                \
        for (int64_t i = 0; i < mv; i++) rows[i] += 16;                      \
      }                                                                      \
      return;                                                                \
    }                                                                        \
    if (g->ak_s == 1)                                                        \
      sim_gpack_lanes_##SFX(dst, MR, a, g->am + r0, mv, k0, NULL, kb);       \
    else                                                                     \
      sim_gpack_lanes_##SFX(dst, MR, a, g->am + r0, mv, 0, g->ak + k0, kb);  \
  }                                                                          \
                                                                             \
  /* A micro-panel of a convolution: runs of Cg features per window. */     \
  static void sim_gpack_conv_##SFX(const sim_gemm *g, const T *a,           \
                                   int64_t r0, int64_t mv, int64_t k0,       \
                                   int64_t kb, T *dst) {                     \
    const int MR = g->k->mr;                                                 \
    const sim_gconv *cv = g->conv;                                           \
    int32_t ns = cv->ns;                                                     \
    for (int64_t i = 0; i < MR; i++) {                                       \
      T *d = dst + i;                                                        \
      if (i >= mv) {                                                         \
        for (int64_t k = 0; k < kb; k++) d[k * MR] = 0;                      \
        continue;                                                            \
      }                                                                      \
      const int32_t *mp = cv->mpos + (r0 + i) * ns;                          \
      const T *row = a + g->am[r0 + i];                                      \
      for (int64_t k = 0; k < kb;) {                                         \
        int64_t kk = k0 + k, w = kk / cv->Cg, f = kk % cv->Cg;               \
        int64_t run = cv->Cg - f < kb - k ? cv->Cg - f : kb - k;             \
        const int32_t *kw = cv->kwin + w * ns;                               \
        int64_t off = 0;                                                     \
        int ok = 1;                                                          \
        for (int32_t s = 0; s < ns; s++) {                                   \
          int64_t t = cv->tab[mp[s] + kw[s]];                                \
          ok &= t >= 0;                                                      \
          off += t;                                                          \
        }                                                                    \
        T *o = d + k * MR;                                                   \
        if (!ok) {                                                           \
          for (int64_t j = 0; j < run; j++) o[j * MR] = 0;                   \
        } else {                                                             \
          const T *s = row + off + f * cv->lf;                               \
          if (cv->lf == 1)                                                   \
            for (int64_t j = 0; j < run; j++) o[j * MR] = s[j];              \
          else                                                               \
            for (int64_t j = 0; j < run; j++) o[j * MR] = s[j * cv->lf];     \
        }                                                                    \
        k += run;                                                            \
      }                                                                      \
    }                                                                        \
  }                                                                          \
                                                                             \
  /* One B micro-panel: columns c0 .. c0+nv (rest zero), rows k0 .. k0+kb,  \
   * into dst[k * NR + j]. */                                                \
  static void sim_gpack_b_##SFX(const sim_gemm *g, const T *b, int64_t c0,  \
                                int64_t nv, int64_t k0, int64_t kb,          \
                                T *dst) {                                    \
    const int NR = g->k->nr;                                                 \
    if (nv < NR)                                                             \
      for (int64_t k = 0; k < kb; k++)                                       \
        for (int j = (int)nv; j < NR; j++) dst[k * NR + j] = 0;              \
    if (g->bn_s == 1) {                                                      \
      const T *s = b + g->bn[c0];                                            \
      const int64_t *bk = g->bk + k0;                                        \
      if (nv * sizeof(T) == 128) /* constant size: inline copies */          \
        for (int64_t k = 0; k < kb; k++) memcpy(dst + k * NR, s + bk[k], 128); \
      else if (nv * sizeof(T) == 64)                                         \
        for (int64_t k = 0; k < kb; k++) memcpy(dst + k * NR, s + bk[k], 64); \
      else                                                                   \
        for (int64_t k = 0; k < kb; k++)                                     \
          memcpy(dst + k * NR, s + bk[k], sizeof(T) * (size_t)nv);           \
      return;                                                                \
    }                                                                        \
    if (g->bk_s == 1 && TR16(g)) {                                           \
      for (int64_t j0 = 0; j0 < nv; j0 += 16) {                              \
        const float *cols[16];                                               \
        int64_t nj = nv - j0 < 16 ? nv - j0 : 16;                            \
        for (int64_t j = 0; j < nj; j++)                                     \
          cols[j] = (const float *)(const void *)(b + g->bn[c0 + j0 + j] +   \
                                                  g->bk[k0]);                \
        T *d = dst + j0;                                                     \
        for (int64_t k = 0; k < kb; k += 16, d += 16 * NR) {                 \
          g->k->tr16(cols, (int)nj, kb - k < 16 ? kb - k : 16,               \
                     (float *)(void *)d, NR);                                \
          for (int64_t j = 0; j < nj; j++) cols[j] += 16;                    \
        }                                                                    \
      }                                                                      \
      return;                                                                \
    }                                                                        \
    if (g->bk_s == 1)                                                        \
      sim_gpack_lanes_##SFX(dst, NR, b, g->bn + c0, nv, g->bk[k0], NULL, kb); \
    else                                                                     \
      sim_gpack_lanes_##SFX(dst, NR, b, g->bn + c0, nv, 0, g->bk + k0, kb);  \
  }                                                                          \
                                                                             \
  /* Adds (or stores, when first) the valid mv x nv part of a tile. */      \
  static void sim_gstore_##SFX(const sim_gemm *g, T *c, const T *tile,      \
                               int64_t r0, int64_t mv, int64_t c0,           \
                               int64_t nv, int first) {                      \
    const int NR = g->k->nr;                                                 \
    for (int64_t i = 0; i < mv; i++, tile += NR) {                           \
      T *row = c + g->cm[r0 + i];                                            \
      if (g->cn_s == 1) {                                                    \
        T *restrict o = row + c0;                                            \
        if (first)                                                           \
          memcpy(o, tile, sizeof(T) * (size_t)nv);                           \
        else                                                                 \
          for (int64_t j = 0; j < nv; j++) o[j] += tile[j];                  \
      } else {                                                               \
        const int64_t *cn = g->cn + c0;                                      \
        if (first)                                                           \
          for (int64_t j = 0; j < nv; j++) row[cn[j]] = tile[j];             \
        else                                                                 \
          for (int64_t j = 0; j < nv; j++) row[cn[j]] += tile[j];            \
      }                                                                      \
    }                                                                        \
  }                                                                          \

#define TR16(g) ((g)->k->tr16 != NULL)
SIM_GPACK_DEF(f32, float)
#undef TR16
#define TR16(g) 0
SIM_GPACK_DEF(f64, double)
#undef TR16

/* ---- the blocked loops ---- */

/* One (batch, ic, pc) block's state shared by the workers. */
typedef struct sim_gblk {
  const sim_gemm *g;
  const char *a, *b;
  char *c;
  char *apack, *bpack;
  int64_t ic, mb, pc, kb;
  int first;
  int lanes; /* in use: at most g->lanes, at most the pool's threads */
} sim_gblk;

/* Copies n elements of one row of A, from column k of the panel on, into
 * a strip-packed micro-panel of kb columns (see SIM_GK_STRIP); src NULL
 * means zeros. */
static void sim_gstrip_put(float *dst, int64_t MR, int64_t kb, int64_t i,
                           int64_t k, int64_t n, const float *src) {
  while (n > 0) {
    int64_t s0 = k / SIM_GK_STRIP * SIM_GK_STRIP, t = k - s0;
    int64_t S = kb - s0 < SIM_GK_STRIP ? kb - s0 : SIM_GK_STRIP;
    int64_t c = S - t < n ? S - t : n;
    float *d = dst + s0 * MR + i * S + t;
    if (c == SIM_GK_STRIP && src) /* constant size: one vector copy */
      memcpy(d, src, sizeof(float) * SIM_GK_STRIP);
    else if (src)
      memcpy(d, src, sizeof(float) * (size_t)c);
    else
      memset(d, 0, sizeof(float) * (size_t)c);
    k += c, n -= c;
    if (src) src += c;
  }
}

#if SIM_GEMM_X86
/* sim_gstrip_put for whole strips: k and n multiples of SIM_GK_STRIP and
 * the panel's columns too (kb % 16 == 0). */
__attribute__((target("avx512f"))) static void sim_gstrip_put16(
    float *dst, int64_t MR, int64_t i, int64_t k, int64_t n,
    const float *src) {
  float *d = dst + k * MR + i * SIM_GK_STRIP;
  __m512 z = _mm512_setzero_ps();
  for (int64_t j = 0; j < n; j += 16, d += 16 * MR)
    _mm512_storeu_ps(d, src ? _mm512_loadu_ps(src + j) : z);
}
#endif

/* A convolution micro-panel for f32 with contiguous features (lf == 1),
 * strip-packed: per window position each row copies a run of features, or
 * zeros (padding, rows past mv). */
static void sim_gpack_conv_strip(const sim_gemm *g, const float *a,
                                 int64_t r0, int64_t mv, int64_t k0,
                                 int64_t kb, float *dst) {
  const int64_t MR = g->k->mr;
  const sim_gconv *cv = g->conv;
  int32_t ns = cv->ns;
  /* Only the AVX-512 kernel has strips (k->fs), so the vector copy runs. */
  int whole = cv->Cg % SIM_GK_STRIP == 0 && k0 % SIM_GK_STRIP == 0 &&
              kb % SIM_GK_STRIP == 0;
  (void)whole;
  for (int64_t k = 0; k < kb;) {
    int64_t kk = k0 + k, w = kk / cv->Cg, f = kk % cv->Cg;
    int64_t run = cv->Cg - f < kb - k ? cv->Cg - f : kb - k;
    const int32_t *kw = cv->kwin + w * ns;
    for (int64_t i = 0; i < MR; i++) {
      const float *src = NULL;
      if (i < mv) {
        const int32_t *mp = cv->mpos + (r0 + i) * ns;
        int64_t off = 0;
        int ok = 1;
        for (int32_t s = 0; s < ns; s++) {
          int64_t t = cv->tab[mp[s] + kw[s]];
          ok &= t >= 0;
          off += t;
        }
        if (ok) src = a + g->am[r0 + i] + off + f;
      }
#if SIM_GEMM_X86
      if (whole) {
        sim_gstrip_put16(dst, MR, i, k, run, src);
        continue;
      }
#endif
      sim_gstrip_put(dst, MR, kb, i, k, run, src);
    }
    k += run;
  }
}

static void sim_gpack_a_panel(const sim_gblk *x, int64_t p) {
  const sim_gemm *g = x->g;
  int64_t MR = g->k->mr, r0 = x->ic + p * MR;
  int64_t mv = x->mb - p * MR < MR ? x->mb - p * MR : MR;
  char *dst = x->apack + (size_t)(p * MR * x->kb) * g->es;
  if (g->es == 4) {
    if (g->astrip) {
      sim_gpack_conv_strip(g, (const float *)(const void *)x->a, r0, mv,
                           x->pc, x->kb, (float *)(void *)dst);
      return;
    }
    if (g->conv)
      sim_gpack_conv_f32(g, (const float *)(const void *)x->a, r0, mv, x->pc,
                         x->kb, (float *)(void *)dst);
    else
      sim_gpack_a_f32(g, (const float *)(const void *)x->a, r0, mv, x->pc,
                      x->kb, (float *)(void *)dst);
  } else if (g->conv) {
    sim_gpack_conv_f64(g, (const double *)(const void *)x->a, r0, mv, x->pc,
                       x->kb, (double *)(void *)dst);
  } else {
    sim_gpack_a_f64(g, (const double *)(const void *)x->a, r0, mv, x->pc,
                    x->kb, (double *)(void *)dst);
  }
}

static void sim_gpack_b_panel(const sim_gblk *x, int64_t c0, int64_t nv,
                              char *dst) {
  const sim_gemm *g = x->g;
  if (g->es == 4)
    sim_gpack_b_f32(g, (const float *)(const void *)x->b, c0, nv, x->pc,
                    x->kb, (float *)(void *)dst);
  else
    sim_gpack_b_f64(g, (const double *)(const void *)x->b, c0, nv, x->pc,
                    x->kb, (double *)(void *)dst);
}

static void sim_gstore_tile(const sim_gblk *x, const void *tile, int64_t r0,
                            int64_t mv, int64_t c0, int64_t nv) {
  const sim_gemm *g = x->g;
  if (g->es == 4)
    sim_gstore_f32(g, (float *)(void *)x->c, (const float *)tile, r0, mv, c0,
                   nv, x->first);
  else
    sim_gstore_f64(g, (double *)(void *)x->c, (const double *)tile, r0, mv,
                   c0, nv, x->first);
}

/* Packs the B block of columns [c0, c0 + nb) into micro-panels at bp. */
static void sim_gpack_b_block(const sim_gblk *x, int64_t c0, int64_t nb,
                              char *bp) {
  const int64_t NR = x->g->k->nr;
  for (int64_t j = 0; j < nb; j += NR)
    sim_gpack_b_panel(x, c0 + j, nb - j < NR ? nb - j : NR,
                      bp + (size_t)(j * x->kb) * x->g->es);
}

/* The packed A micro-panel ap (C rows r0 .. r0 + mv) times the packed B
 * block bp (C columns c0 .. c0 + nb): full tiles straight into C where its
 * rows are strided and columns dense, others through a tile. */
static void sim_gemm_panel_row(const sim_gblk *x, const char *ap,
                               const char *bp, int64_t r0, int64_t mv,
                               int64_t c0, int64_t nb) {
  const sim_gemm *g = x->g;
  const int64_t MR = g->k->mr, NR = g->k->nr;
  size_t es = g->es;
  sim_gk_fn fn = g->astrip ? g->k->fs : g->k->fn;
  _Alignas(64) char tile[12 * 32 * sizeof(float)];
  for (int64_t j = 0; j < nb; j += NR) {
    const char *bj = bp + (size_t)(j * x->kb) * es;
    int64_t nv = nb - j < NR ? nb - j : NR;
    if (mv == MR && nv == NR && g->cm_s && g->cn_s == 1) {
      char *c = x->c + (size_t)(g->cm[r0] + c0 + j) * es;
      fn(x->kb, ap, bj, c, g->cm_s, x->first);
      continue;
    }
    fn(x->kb, ap, bj, tile, NR, 1);
    sim_gstore_tile(x, tile, r0, mv, c0 + j, nv);
  }
}

/* Worker lane: A micro-panels [pa, pe) times columns [n0, n1), in column
 * blocks of nc packed into the lane's own B block. */
static void sim_gemm_rect(const sim_gblk *x, int lane, int64_t pa, int64_t pe,
                          int64_t n0, int64_t n1) {
  const sim_gemm *g = x->g;
  const int64_t MR = g->k->mr;
  size_t es = g->es;
  char *bp = x->bpack + g->bpack_lane * (size_t)lane * es;
  for (int64_t jc = n0; jc < n1; jc += g->nc) {
    int64_t nb = n1 - jc < g->nc ? n1 - jc : g->nc;
    sim_gpack_b_block(x, jc, nb, bp);
    for (int64_t p = pa; p < pe; p++) {
      const char *ap = x->apack + (size_t)(p * MR * x->kb) * es;
      int64_t mv = x->mb - p * MR < MR ? x->mb - p * MR : MR;
      sim_gemm_panel_row(x, ap, bp, x->ic + p * MR, mv, jc, nb);
    }
  }
}

/* A lane's share of C that is one column block (few columns, as in most
 * convolutions): the B block is packed once per K block, and each A
 * micro-panel is packed right before its kernels, so it is read back from
 * L1 rather than through a large A block that would only meet a few B
 * micro-panels. */
static void sim_gemm_narrow(sim_gblk *x, int lane, int64_t m0, int64_t m1,
                            int64_t n0, int64_t n1) {
  const sim_gemm *g = x->g;
  const int64_t MR = g->k->mr;
  size_t es = g->es;
  char *bp = x->bpack + g->bpack_lane * (size_t)lane * es;
  int64_t nb = n1 - n0;
  for (x->pc = 0; x->pc < g->K; x->pc += g->kc) {
    x->kb = g->K - x->pc < g->kc ? g->K - x->pc : g->kc;
    x->first = x->pc == 0;
    sim_gpack_b_block(x, n0, nb, bp);
    for (int64_t r0 = m0; r0 < m1; r0 += MR) {
      int64_t mv = m1 - r0 < MR ? m1 - r0 : MR;
      x->ic = r0, x->mb = mv;
      sim_gpack_a_panel(x, 0); /* at apack: one panel, reused from L1 */
      sim_gemm_panel_row(x, x->apack, bp, r0, mv, n0, nb);
    }
  }
}

/* One lane's whole loop nest over its share of C: a row range or a column
 * range.  Each lane packs into its own A and B blocks, so a product is one
 * fork-join on the pool (a loaded machine delays every join), at the price
 * of packing the operand that is not split once per lane: the split is
 * along the longer side so that operand is the smaller one. */
static void sim_gemm_lane(const sim_gblk *base, int64_t l) {
  sim_gblk x = *base;
  const sim_gemm *g = x.g;
  int64_t MR = g->k->mr, NR = g->k->nr, L = x.lanes;
  int64_t pn = (g->N + NR - 1) / NR, pmt = (g->M + MR - 1) / MR;
  int64_t m0 = 0, m1 = g->M, n0 = 0, n1 = g->N;
  if (pn >= L && (g->N >= g->M || pmt < L)) {
    n0 = l * pn / L * NR, n1 = (l + 1) * pn / L * NR;
    n1 = n1 < g->N ? n1 : g->N;
  } else {
    m0 = l * pmt / L * MR, m1 = (l + 1) * pmt / L * MR;
    m1 = m1 < g->M ? m1 : g->M;
  }
  if (m0 >= m1 || n0 >= n1) return;
  x.apack += g->apack_lane * g->es * (size_t)l;
  if (n1 - n0 <= g->nc) {
    sim_gemm_narrow(&x, (int)l, m0, m1, n0, n1);
    return;
  }
  for (x.ic = m0; x.ic < m1; x.ic += g->mc) {
    x.mb = m1 - x.ic < g->mc ? m1 - x.ic : g->mc;
    int64_t pm = (x.mb + MR - 1) / MR;
    for (x.pc = 0; x.pc < g->K; x.pc += g->kc) {
      x.kb = g->K - x.pc < g->kc ? g->K - x.pc : g->kc;
      x.first = x.pc == 0;
      for (int64_t p = 0; p < pm; p++) sim_gpack_a_panel(&x, p);
      sim_gemm_rect(&x, (int)l, 0, pm, n0, n1);
    }
  }
}

static void sim_gemm_lanes(void *ctx, int64_t begin, int64_t end) {
  for (int64_t l = begin; l < end; l++)
    sim_gemm_lane((const sim_gblk *)ctx, l);
}

static void sim_gemm_zero(const sim_gemm *g, char *c) {
  for (int64_t m = 0; m < g->M; m++)
    for (int64_t n = 0; n < g->N; n++)
      memset(c + (size_t)(g->cm[m] + g->cn[n]) * g->es, 0, g->es);
}

#ifdef XRT_WITH_CBLAS
/* One batch through CBLAS (the plan checked the layout). */
static void sim_gemm_blas(const sim_gemm *g, const char *a, const char *b,
                          char *c) {
  CBLAS_TRANSPOSE ta = g->ak_s == 1 ? CblasNoTrans : CblasTrans;
  CBLAS_TRANSPOSE tb = g->bn_s == 1 ? CblasNoTrans : CblasTrans;
  int lda = (int)(g->ak_s == 1 ? g->am_s : g->ak_s);
  int ldb = (int)(g->bn_s == 1 ? g->bk_s : g->bn_s);
  int M = (int)g->M, N = (int)g->N, K = (int)g->K, ldc = (int)g->cm_s;
  if (g->es == 4)
    cblas_sgemm(CblasRowMajor, ta, tb, M, N, K, 1.0f,
                (const float *)(const void *)a, lda,
                (const float *)(const void *)b, ldb, 0.0f,
                (float *)(void *)c, ldc);
  else
    cblas_dgemm(CblasRowMajor, ta, tb, M, N, K, 1.0,
                (const double *)(const void *)a, lda,
                (const double *)(const void *)b, ldb, 0.0,
                (double *)(void *)c, ldc);
}
#endif

static void sim_gemm_exec(const sim_gemm *g, const char *A, const char *B,
                          char *C, void **vals, sim_cx *cx) {
  size_t es = g->es;
  sim_gblk x = {g, NULL, NULL, NULL, NULL, NULL, 0, 0, 0, 0, 0, 1};
  /* One lane per thread of the device's pool (the plan has buffers for
   * g->lanes); serial: one lane, so an A micro-panel meets every column. */
  int threads = cx && cx->tp ? cx->tp->threads : 1;
  x.lanes = threads < 1 ? 1 : threads < g->lanes ? threads : g->lanes;
  x.apack = (char *)vals[g->apack];
  x.bpack = (char *)vals[g->bpack];
  for (int64_t bt = 0; bt < g->BT; bt++) {
    x.a = A + (size_t)g->ab[bt] * es;
    x.b = B + (size_t)g->bb[bt] * es;
    x.c = C + (size_t)g->cb[bt] * es;
#ifdef XRT_WITH_CBLAS
    if (g->blas) {
      sim_gemm_blas(g, x.a, x.b, x.c);
      continue;
    }
#endif
    if (g->K == 0)
      sim_gemm_zero(g, x.c);
    else
      sim_parallel_for(cx, x.lanes, 1, sim_gemm_lanes, &x);
  }
}

/* A dot, or a convolution planned as GEMM: C = A x B of its operands. */
static xrt_status sim_run_gemm(const sim_step *st, void **vals, sim_cx *cx) {
  const sim_gemm *g = (const sim_gemm *)st->data;
  sim_gemm_exec(g, (const char *)vals[st->in[0]],
                (const char *)vals[st->in[1]], (char *)vals[st->out[0]], vals,
                cx);
  return XRT_OK;
}

/* ---- planning ---- */

/* s if t[i] == i * s for every i (s from t[1]), else 0. */
static int64_t sim_gemm_affine(const int64_t *t, int64_t n) {
  if (n <= 1) return 1;
  int64_t s = t[1] - t[0];
  if (t[0] != 0 || s <= 0) return 0;
  for (int64_t i = 2; i < n; i++)
    if (t[i] != i * s) return 0;
  return s;
}

static int64_t *sim_gemm_iota(sim_fcc *fc, int64_t n, int64_t s) {
  int64_t *t = (int64_t *)sim_palloc(fc, sizeof *t * (size_t)(n ? n : 1));
  if (t)
    for (int64_t i = 0; i < n; i++) t[i] = i * s;
  return t;
}

static int64_t sim_gemm_roundup(int64_t x, int64_t m) {
  return (x + m - 1) / m * m;
}

/* Threads of the pools of the client's devices (all alike): the most
 * lanes a product can use. */
static int64_t sim_gemm_threads(const sim_fcc *fc) {
  const struct sim_tpool *tp = sim_tpool_of(fc->cc->exe->cl, 0);
  int t = tp ? tp->threads : 1;
  return t < 1 ? 1 : t > 64 ? 64 : t;
}

/* Block sizes and lanes (at most threads), once the tables are set. */
static void sim_gemm_blocks(sim_gemm *g, int64_t threads) {
  const sim_gk *k = g->k;
  assert(k->mr * k->nr * (int)g->es <= 1536); /* sim_gemm_rect's tile */
  assert(k->mr <= 16 && k->nc % k->nr == 0 && k->mc % k->mr == 0);
  g->am_s = sim_gemm_affine(g->am, g->M);
  g->ak_s = g->conv ? 0 : sim_gemm_affine(g->ak, g->K);
  g->bk_s = sim_gemm_affine(g->bk, g->K);
  g->bn_s = sim_gemm_affine(g->bn, g->N);
  g->cm_s = sim_gemm_affine(g->cm, g->M);
  g->cn_s = sim_gemm_affine(g->cn, g->N);
  g->mc = g->M < k->mc ? sim_gemm_roundup(g->M ? g->M : 1, k->mr) : k->mc;
  g->kc = g->K < k->kc ? (g->K ? g->K : 1) : k->kc;
  /* Near-equal K blocks: no thin last block. */
  if (g->K > k->kc) {
    int64_t nk = (g->K + k->kc - 1) / k->kc;
    g->kc = (g->K + nk - 1) / nk;
  }
  if (g->M > k->mc) { /* near-equal M blocks too */
    int64_t nm = (g->M + k->mc - 1) / k->mc;
    g->mc = sim_gemm_roundup((g->M + nm - 1) / nm, k->mr);
  }
  g->nc = g->N < k->nc ? sim_gemm_roundup(g->N ? g->N : 1, k->nr) : k->nc;
  /* One column block (sim_gemm_narrow): all of K in one block when its B
   * block fits L2 with room and an A micro-panel half of L1, so C is
   * written once. */
  if (g->N <= g->nc && g->K <= 2 * k->kc &&
      (size_t)(g->K * g->nc) * g->es <= 256 * 1024 &&
      (size_t)(g->K * k->mr) * g->es <= 32 * 1024)
    g->kc = g->K;
  int64_t pn = (g->N + k->nr - 1) / k->nr, pm = (g->M + k->mr - 1) / k->mr;
  int64_t L = threads;
  if (pn < L && pm < L) L = pn > pm ? pn : pm;
  g->lanes = (int)(L > 0 ? L : 1);
  g->bpack_lane = (size_t)(g->kc * g->nc);
  /* one column block: sim_gemm_narrow packs one A micro-panel at a time */
  g->apack_lane = (size_t)((g->N <= g->nc ? k->mr : g->mc) * g->kc);
}

/* Block sizes, lanes and scratch, once the tables are set. */
static xrt_status sim_gemm_finish(sim_fcc *fc, sim_gemm *g) {
  sim_gemm_blocks(g, sim_gemm_threads(fc));
  xrt_status rc =
      sim_temp(fc, g->apack_lane * g->es * (size_t)g->lanes, &g->apack);
  if (!rc)
    rc = sim_temp(fc, g->bpack_lane * (size_t)g->lanes * g->es, &g->bpack);
  return rc;
}

#ifdef XRT_WITH_CBLAS
/* Large products whose operands are plain or transposed matrices can go
 * to BLAS (sim_blas_faster decides whether they do). */
static int sim_gemm_blas_ok(const sim_gemm *g) {
  int64_t lim = 0x7fffffff;
  if (g->conv || g->M < 2 || g->N < 2 || g->K < 2 ||
      (double)g->M * (double)g->N * (double)g->K < 128.0 * 128 * 128)
    return 0;
  if (!g->am_s || !g->ak_s || !g->bk_s || !g->bn_s || g->cn_s != 1 ||
      g->cm_s != g->N)
    return 0;
  if ((g->am_s != 1 && g->ak_s != 1) || (g->bk_s != 1 && g->bn_s != 1))
    return 0;
  return g->M < lim && g->N < lim && g->K < lim && g->am_s < lim &&
         g->ak_s < lim && g->bk_s < lim && g->bn_s < lim;
}

/* ---- CBLAS or ours: timed once per process ----
 * An XRT_BLAS=1 build hands a product to CBLAS only where CBLAS is the
 * faster on the running machine, as autotuners decide: a library may have
 * no kernel for a new CPU (Debian 12's OpenBLAS runs its AVX2 "Haswell"
 * kernel on AMD Zen 5, at about half the speed of xrt's AVX-512 one).  The
 * first compile that meets such a product times both on a SIM_BLAS_N cube
 * of its element type with the device's threads (best of three after a
 * warm-up, alternating); the answer is kept for the process, per element
 * size and thread count.  XRT_SIM_BLAS=1 always calls CBLAS, =0 never. */
#include <time.h>
enum { SIM_BLAS_N = 384 };

static double sim_blas_now(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

/* Seconds of one C = A B through g (CBLAS when blas). */
static double sim_blas_run(sim_gemm *g, int blas, const char *a,
                           const char *b, char *c, void **vals, sim_cx *cx) {
  g->blas = blas;
  double t0 = sim_blas_now();
  sim_gemm_exec(g, a, b, c, vals, cx);
  return sim_blas_now() - t0;
}

/* Whether CBLAS multiplies a SIM_BLAS_N cube faster than kernel k does on
 * threads lanes of pool tp; no when memory is short. */
static int sim_blas_measure(const xrt_allocator *al, const sim_gk *k,
                            size_t es, struct sim_tpool *tp, int64_t threads) {
  const int64_t n = SIM_BLAS_N;
  int64_t tab[2 * SIM_BLAS_N + 1]; /* 0, then i, then i * n */
  tab[0] = 0;
  for (int64_t i = 0; i < n; i++) tab[1 + i] = i, tab[1 + n + i] = i * n;
  sim_gemm g;
  memset(&g, 0, sizeof g);
  g.k = k, g.es = es, g.BT = 1, g.M = g.N = g.K = n;
  g.ab = g.bb = g.cb = tab;
  g.am = g.bk = g.cm = tab + 1 + n;
  g.ak = g.bn = g.cn = tab + 1;
  g.apack = 0, g.bpack = 1;
  sim_gemm_blocks(&g, threads);
  size_t mat = sim_align_up((size_t)(n * n) * es);
  size_t ap = sim_align_up(g.apack_lane * es * (size_t)g.lanes);
  size_t bp = sim_align_up(g.bpack_lane * es * (size_t)g.lanes);
  char *raw = (char *)al->alloc(al->self, 3 * mat + ap + bp + SIM_ALIGN);
  if (!raw) return 0;
  char *a = raw + (sim_align_up((size_t)(uintptr_t)raw) - (uintptr_t)raw);
  char *b = a + mat, *c = b + mat;
  void *vals[2] = {c + mat, c + mat + ap};
  memset(a, 0x3f, 2 * mat); /* normal numbers in f32 and f64 */
  sim_cx cx;
  memset(&cx, 0, sizeof cx);
  cx.tp = tp;
  double ours = 1e30, theirs = 1e30;
  for (int r = 0; r < 4; r++) {
    double t = sim_blas_run(&g, 0, a, b, c, vals, &cx);
    double u = sim_blas_run(&g, 1, a, b, c, vals, &cx);
    if (r > 0) {
      ours = t < ours ? t : ours;
      theirs = u < theirs ? u : theirs;
    }
  }
  al->free(al->self, raw);
  return theirs < ours;
}

static pthread_mutex_t sim_blas_mu = PTHREAD_MUTEX_INITIALIZER;
static signed char sim_blas_known[2][65]; /* 0 unknown, 1 ours, 2 CBLAS */

/* Whether products of element size es that CBLAS can take should go to it
 * (see above). */
static int sim_blas_faster(sim_fcc *fc, const sim_gk *k, size_t es) {
  const char *e = getenv("XRT_SIM_BLAS");
  if (e && (!strcmp(e, "0") || !strcmp(e, "1"))) return e[0] == '1';
  int64_t threads = sim_gemm_threads(fc);
  pthread_mutex_lock(&sim_blas_mu);
  signed char *known = &sim_blas_known[es == 8][threads];
  if (!*known)
    *known = sim_blas_measure(&fc->cc->al, k, es,
                              sim_tpool_of(fc->cc->exe->cl, 0), threads)
                 ? 2
                 : 1;
  int r = *known == 2;
  pthread_mutex_unlock(&sim_blas_mu);
  return r;
}
#endif

/* Whether a product pays for packing (K = 0 counts as a small K). */
static int sim_gemm_big(int64_t M, int64_t N, int64_t K) {
  return M > 0 && N > 0 && (double)M * (double)N * (double)(K ? K : 64) >= 4096;
}

/* A kernel for element type t, or NULL (then the plain loops run). */
static const sim_gk *sim_gemm_kernel(sim_cc *cc, xrt_dtype t) {
  if (!cc->gemm_known) cc->gemm_path = sim_gemm_path(), cc->gemm_known = 1;
  int p = cc->gemm_path;
  if (p < 0 || (t != XRT_F32 && t != XRT_F64)) return NULL;
  const sim_gk *k = &sim_gks[t == XRT_F64][p];
  return k->fn ? k : &sim_gks[t == XRT_F64][0];
}

/* Replaces a planned f32/f64 dot_general by the packed GEMM when it is big
 * enough to pay for packing.  Returns 0 (leaving st alone) otherwise. */
static int sim_gemm_lower_dot(sim_fcc *fc, const sim_dot *d, sim_step *st,
                              xrt_status *rc) {
  const sim_gk *k = sim_gemm_kernel(fc->cc, d->ct);
  *rc = XRT_OK;
  if (!k || d->lt != d->ct || d->rt != d->ct || d->ot != d->ct ||
      !sim_gemm_big(d->M, d->N, d->K))
    return 0;
  sim_gemm *g = (sim_gemm *)sim_palloc(fc, sizeof *g);
  if (!g) return (*rc = XRT_RESOURCE_EXHAUSTED), 1;
  memset(g, 0, sizeof *g);
  g->k = k;
  g->es = sim_esize(d->ct);
  g->BT = d->B, g->M = d->M, g->N = d->N, g->K = d->K;
  g->ab = d->lb, g->bb = d->rb, g->am = d->lm, g->ak = d->lk;
  g->bk = d->rk, g->bn = d->rn;
  g->cb = sim_gemm_iota(fc, d->B, d->M * d->N);
  g->cm = sim_gemm_iota(fc, d->M, d->N);
  g->cn = sim_gemm_iota(fc, d->N, 1);
  if (!g->cb || !g->cm || !g->cn) return (*rc = XRT_RESOURCE_EXHAUSTED), 1;
  if ((*rc = sim_gemm_finish(fc, g))) return 1;
#ifdef XRT_WITH_CBLAS
  g->blas = sim_gemm_blas_ok(g) && sim_blas_faster(fc, k, g->es);
#endif
  st->data = g;
  st->run = sim_run_gemm;
  return 1;
}

/* ---- convolution as GEMM ---- */

/* Rows: (result batch, output position), position row-major. */
static int sim_gemm_conv_rows(sim_fcc *fc, const sim_conv *c, sim_gemm *g,
                              sim_gconv *cv) {
  int32_t ns = c->ns;
  int64_t P = 1;
  for (int32_t d = 0; d < ns; d++) P *= c->out[d];
  int64_t *am = (int64_t *)sim_palloc(fc, sizeof *am * (size_t)(g->M + 1));
  int64_t *cm = (int64_t *)sim_palloc(fc, sizeof *cm * (size_t)(g->M + 1));
  int32_t *mp = (int32_t *)sim_palloc(
      fc, sizeof *mp * (size_t)(g->M * (ns ? ns : 1) + 1));
  if (!am || !cm || !mp) return 0;
  for (int64_t b = 0, m = 0; b < c->NB; b++) {
    int64_t p[XRT_MAX_RANK] = {0};
    for (int64_t q = 0; q < P; q++, m++) {
      am[m] = b * c->lb;
      cm[m] = b * c->ob;
      for (int32_t d = 0; d < ns; d++) {
        cm[m] += p[d] * c->osp[d];
        mp[m * ns + d] = (int32_t)(c->toff[d] + p[d] * c->K[d]);
      }
      sim_la_next(p, c->out, ns);
    }
  }
  g->am = am, g->cm = cm, cv->mpos = mp;
  return 1;
}

/* Columns of A / rows of B: (window position, feature), feature fastest. */
static int sim_gemm_conv_cols(sim_fcc *fc, const sim_conv *c, sim_gemm *g,
                              sim_gconv *cv) {
  int32_t ns = c->ns;
  int64_t Wn = 1;
  for (int32_t d = 0; d < ns; d++) Wn *= c->K[d];
  int64_t *bk = (int64_t *)sim_palloc(fc, sizeof *bk * (size_t)(g->K + 1));
  int32_t *kw = (int32_t *)sim_palloc(
      fc, sizeof *kw * (size_t)(Wn * (ns ? ns : 1) + 1));
  if (!bk || !kw) return 0;
  int64_t w[XRT_MAX_RANK] = {0};
  for (int64_t i = 0; i < Wn; i++) {
    int64_t r = 0;
    for (int32_t d = 0; d < ns; d++) {
      r += w[d] * c->rsp[d];
      kw[i * ns + d] = (int32_t)w[d];
    }
    for (int64_t f = 0; f < c->Cg; f++) bk[i * c->Cg + f] = r + f * c->rif;
    sim_la_next(w, c->K, ns);
  }
  g->bk = bk, cv->kwin = kw;
  return 1;
}

/* Groups are batches: feature groups split lhs features and result
 * features, batch groups split lhs batches and result features. */
static int sim_gemm_conv_groups(sim_fcc *fc, const sim_conv *c, sim_gemm *g,
                                int64_t G, int fgroups) {
  int64_t *ab = (int64_t *)sim_palloc(fc, sizeof *ab * (size_t)G);
  int64_t *bb = (int64_t *)sim_palloc(fc, sizeof *bb * (size_t)G);
  int64_t *cb = (int64_t *)sim_palloc(fc, sizeof *cb * (size_t)G);
  if (!ab || !bb || !cb) return 0;
  for (int64_t i = 0; i < G; i++) {
    ab[i] = fgroups ? i * c->Cg * c->lf : i * c->NB * c->lb;
    bb[i] = i * g->N * c->rof;
    cb[i] = i * g->N * c->of;
  }
  g->ab = ab, g->bb = bb, g->cb = cb;
  g->bn = sim_gemm_iota(fc, g->N, c->rof);
  g->cn = sim_gemm_iota(fc, g->N, c->of);
  return g->bn && g->cn;
}

/* Replaces a planned static-padding f32/f64 convolution by the packed GEMM
 * when it is big enough.  Returns 0 (leaving st alone) otherwise. */
static int sim_gemm_lower_conv(sim_fcc *fc, const sim_conv *c, sim_step *st,
                               xrt_status *rc) {
  const sim_la_cvt *t = &c->cv;
  const sim_gk *k = sim_gemm_kernel(fc->cc, t->ct);
  *rc = XRT_OK;
  if (!k || !c->tab || t->lt != t->ct || t->rt != t->ct || t->ot != t->ct ||
      c->tab_n >= INT32_MAX)
    return 0;
  int64_t fg = c->o_per_fgroup ? c->O / c->o_per_fgroup : 1;
  int64_t bg = c->o_per_bgroup ? c->O / c->o_per_bgroup : 1;
  if (fg > 1 && bg > 1) return 0;
  int64_t G = fg > 1 ? fg : bg, P = 1, Wn = 1;
  for (int32_t d = 0; d < c->ns; d++) P *= c->out[d], Wn *= c->K[d];
  sim_gemm g0;
  memset(&g0, 0, sizeof g0);
  g0.M = c->NB * P, g0.N = G ? c->O / G : 0, g0.K = Wn * c->Cg, g0.BT = G;
  if (!sim_gemm_big(g0.M, g0.N, g0.K)) return 0;
  sim_gemm *g = (sim_gemm *)sim_palloc(fc, sizeof *g);
  sim_gconv *cv = (sim_gconv *)sim_palloc(fc, sizeof *cv);
  if (!g || !cv) return (*rc = XRT_RESOURCE_EXHAUSTED), 1;
  *g = g0;
  memset(cv, 0, sizeof *cv);
  g->k = k;
  g->es = sim_esize(t->ct);
  g->conv = cv;
  cv->ns = c->ns, cv->tab = c->tab, cv->Cg = c->Cg, cv->lf = c->lf;
  if (!sim_gemm_conv_rows(fc, c, g, cv) || !sim_gemm_conv_cols(fc, c, g, cv) ||
      !sim_gemm_conv_groups(fc, c, g, G, fg > 1))
    return (*rc = XRT_RESOURCE_EXHAUSTED), 1;
  g->ak = g->bk; /* unused by the convolution packer */
  /* Features in runs: copy them into strips rather than transpose. */
  g->astrip = g->es == 4 && c->lf == 1 && k->fs != NULL;
  if ((*rc = sim_gemm_finish(fc, g))) return 1;
  st->data = g;
  st->run = sim_run_gemm;
  return 1;
}
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
 * element type.  Inputs of the root's shape are read in place; broadcast
 * and transposed inputs and scalars fill their tile.  The absorbed values
 * are never defined, so liveness gives them no slot.
 *
 * Reductions: every single-input reduce whose body is one add/mul/max/
 * min/and/or (fused producers or not) walks its input in row-major tiles
 * and combines runs into the output: a kept innermost dimension
 * accumulates rows into a vector of outputs (reduce over axis 0 of a
 * matrix: blocked over SIM_FZ_COLBLK columns so the accumulators stay in
 * cache, four rows at a time for f32/f64 sums of a plain input); a
 * reduced innermost dimension folds runs.  Like XLA's vectorized and
 * parallel reductions these may reassociate: f32/f64 add folds of 256 or
 * more elements use 32 partial sums, the four-row sums add
 * (r0 + r1) + (r2 + r3), and a big reduction to one element combines the
 * partial results of its pieces.  Everything else keeps the sequential
 * order of the unfused reduce.
 *
 * Big loops are split across the device's threads with sim_parallel_for:
 * the work is cut into at most SIM_FZ_PARTS pieces, piece p using scratch
 * p, so no piece shares tile buffers.  Loops under SIM_FZ_PAR_MIN elements
 * have one piece and a tile no bigger than the loop.  An elementwise root
 * whose output is SIM_FZ_STREAM_MIN bytes or more (bigger than what the
 * caches would keep for the next op) writes it with non-temporal stores:
 * the output's lines are never read from memory first, so the loop moves
 * a fifth fewer bytes (a*b+c: 4 arrays instead of 5), which matters most
 * when two threads share the memory bus.
 *
 * The f32/f64 kernels the fused loops call for add, sub, mul, div, max,
 * min, neg, abs and the reductions are compiled three times (portable,
 * AVX2, AVX-512F, picked once at run time with __builtin_cpu_supports), as
 * plain loops without -march flags, so one binary runs everywhere and
 * under valgrind.  Each element is still one IEEE operation (no
 * contraction: gcc's ISO C mode and one operation per expression), so
 * they match the plain kernels bit for bit.  Unfused elementwise steps use
 * them too (sim_lower_ew).
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
#define SIM_FZ_STREAM_MIN ((size_t)16 << 20) /* output bytes: streamed */
#define SIM_FZ_SUB 256 /* elements a streaming root computes per store run */

/* ---- kernels compiled per instruction set ---- */

#if defined(__GNUC__) && (defined(__x86_64__) || defined(__i386__))
#define SIM_FZ_X86 1
#define SIM_FZ_T_avx2 __attribute__((target("avx2,fma")))
#define SIM_FZ_T_avx512 __attribute__((target("avx512f")))
#endif
#define SIM_FZ_T_port

#define SIM_FZ_EWB(ISA, OP, nm, T)                                            \
  static SIM_FZ_T_##ISA void sim_fz_##OP##_##nm##_##ISA(                      \
      void *const *in, void *out, size_t n, const void *ctx) {                \
    const T *a = (const T *)in[0], *b = (const T *)in[1];                     \
    T *o = (T *)out;                                                          \
    (void)ctx;                                                                \
    SIM_MAP2(T, a, b, o, n, (T)SIM_F_##OP(X, Y));                             \
  }
#define SIM_FZ_EWU(ISA, OP, nm, T)                                            \
  static SIM_FZ_T_##ISA void sim_fz_##OP##_##nm##_##ISA(                      \
      void *const *in, void *out, size_t n, const void *ctx) {                \
    const T *a = (const T *)in[0];                                            \
    T *o = (T *)out;                                                          \
    (void)ctx;                                                                \
    SIM_MAP1(T, a, o, n, (T)SIM_F_##OP(X));                                   \
  }

/* Reducers: vec = 1 combines acc[i] with in[i] (no overlap); vec = 0
 * folds in into *acc, with partial sums for long add folds. */
/* acc[i] = acc[i] OP in[i]: restrict parameters and fixed-size blocks,
 * which gcc -O2 vectorizes. */
#define SIM_FZ_VEC(ISA, OPN, nm, T, COMB)                                     \
  static SIM_FZ_T_##ISA void sim_fz_vec_##OPN##_##nm##_##ISA(                 \
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
#define SIM_FZ_ADD4(ISA, nm, T)                                               \
  static SIM_FZ_T_##ISA void sim_fz_add4t_##nm##_##ISA(                       \
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

#define SIM_FZ_RED(ISA, OPN, nm, T, COMB, PARTIAL)                            \
  SIM_FZ_VEC(ISA, OPN, nm, T, COMB)                                           \
  static SIM_FZ_T_##ISA void sim_fz_red_##OPN##_##nm##_##ISA(                 \
      void *accp, const void *inp, int64_t n, int vec) {                      \
    T *restrict acc = (T *)accp;                                              \
    const T *restrict in = (const T *)inp;                                    \
    int64_t i = 0;                                                            \
    if (vec) {                                                                \
      sim_fz_vec_##OPN##_##nm##_##ISA(acc, in, n);                            \
      return;                                                                 \
    }                                                                         \
    T a = *acc;                                                               \
    if (PARTIAL && n >= 256) {                                                \
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

#define SIM_FZ_FLT_KERNELS(ISA, nm, T)                                        \
  SIM_FZ_EWB(ISA, ADD, nm, T)                                                 \
  SIM_FZ_EWB(ISA, SUB, nm, T)                                                 \
  SIM_FZ_EWB(ISA, MUL, nm, T)                                                 \
  SIM_FZ_EWB(ISA, DIV, nm, T)                                                 \
  SIM_FZ_EWB(ISA, MAX, nm, T)                                                 \
  SIM_FZ_EWB(ISA, MIN, nm, T)                                                 \
  SIM_FZ_EWU(ISA, NEG, nm, T)                                                 \
  SIM_FZ_EWU(ISA, ABS, nm, T)                                               \
  SIM_FZ_RED(ISA, add, nm, T, a + b, 1)                                       \
  SIM_FZ_ADD4(ISA, nm, T)                                                     \
  SIM_FZ_RED(ISA, mul, nm, T, a * b, 0)                                       \
  SIM_FZ_RED(ISA, max, nm, T, SIM_FMAX(a, b, a, b), 0)                        \
  SIM_FZ_RED(ISA, min, nm, T, SIM_FMIN(a, b, a, b), 0)
#define SIM_FZ_ISA_KERNELS(ISA)                                               \
  SIM_FZ_FLT_KERNELS(ISA, f32, float)                                         \
  SIM_FZ_FLT_KERNELS(ISA, f64, double)

SIM_FZ_ISA_KERNELS(port)
#ifdef SIM_FZ_X86
SIM_FZ_ISA_KERNELS(avx2)
SIM_FZ_ISA_KERNELS(avx512)
#endif

/* 0 portable, 1 AVX2, 2 AVX-512F: the best the running CPU has. */
static int sim_fz_isa_level;
static pthread_once_t sim_fz_isa_once = PTHREAD_ONCE_INIT;
static void sim_fz_isa_detect(void) {
#ifdef SIM_FZ_X86
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

#ifdef SIM_FZ_X86
#define SIM_FZ_PICK3(name)                                                    \
  (lv == 2 ? name##_avx512 : lv == 1 ? name##_avx2 : name##_port)
#else
#define SIM_FZ_PICK3(name) name##_port
#endif

/* The per-ISA version of a plain elementwise kernel, or fn itself. */
static sim_ew_fn sim_fz_isa_kernel(sim_ew_fn fn) {
  int lv = sim_fz_isa();
  (void)lv;
#define SIM_FZ_MAPK(OP, nm)                                                   \
  if (fn == sim_##OP##_##nm) return SIM_FZ_PICK3(sim_fz_##OP##_##nm);
#define SIM_FZ_MAPK2(nm)                                                      \
  SIM_FZ_MAPK(ADD, nm) SIM_FZ_MAPK(SUB, nm) SIM_FZ_MAPK(MUL, nm)              \
  SIM_FZ_MAPK(DIV, nm) SIM_FZ_MAPK(MAX, nm) SIM_FZ_MAPK(MIN, nm)              \
  SIM_FZ_MAPK(NEG, nm)                                                        \
  SIM_FZ_MAPK(ABS, nm)
  SIM_FZ_MAPK2(f32)
  SIM_FZ_MAPK2(f64)
#undef SIM_FZ_MAPK2
#undef SIM_FZ_MAPK
  return fn;
}

/* The reducer for a one-op body on f32/f64 (ours), else the plain one. */
static sim_red_fn sim_fz_red_kernel(xrt_opcode code, xrt_dtype t) {
  int lv = sim_fz_isa();
  (void)lv;
#define SIM_FZ_REDK(OPC, opn, nm)                                             \
  if (code == XRT_OP_##OPC) return SIM_FZ_PICK3(sim_fz_red_##opn##_##nm);
#define SIM_FZ_REDK4(nm)                                                      \
  SIM_FZ_REDK(ADD, add, nm) SIM_FZ_REDK(MULTIPLY, mul, nm)                    \
  SIM_FZ_REDK(MAXIMUM, max, nm) SIM_FZ_REDK(MINIMUM, min, nm)
  if (t == XRT_F32) { SIM_FZ_REDK4(f32) }
  if (t == XRT_F64) { SIM_FZ_REDK4(f64) }
#undef SIM_FZ_REDK4
#undef SIM_FZ_REDK
  return sim_red_pick(code, t);
}

/* Adds rows r, r + stride, r + 2 stride, r + 3 stride (bytes) into acc. */
typedef void (*sim_fz_add4_fn)(void *acc, const void *rows, size_t stride,
                               int64_t n);

static sim_fz_add4_fn sim_fz_add4_kernel(xrt_opcode code, xrt_dtype t) {
  int lv = sim_fz_isa();
  (void)lv;
  if (code != XRT_OP_ADD) return NULL;
  if (t == XRT_F32) return SIM_FZ_PICK3(sim_fz_add4_f32);
  if (t == XRT_F64) return SIM_FZ_PICK3(sim_fz_add4_f64);
  return NULL;
}

/* ---- select by element size ---- */

typedef void (*sim_fz_sel_fn)(const uint8_t *p, const void *a, const void *b,
                              void *out, int64_t n);
#define SIM_FZ_SEL_DEF(NAME, T)                                               \
  static void NAME(const uint8_t *p, const void *a, const void *b, void *out, \
                   int64_t n) {                                               \
    const T *x = (const T *)a, *y = (const T *)b;                             \
    T *o = (T *)out;                                                          \
    for (int64_t i = 0; i < n; i++) o[i] = p[i] ? x[i] : y[i];                \
  }
SIM_FZ_SEL_DEF(sim_fz_sel_1, uint8_t)
SIM_FZ_SEL_DEF(sim_fz_sel_2, uint16_t)
SIM_FZ_SEL_DEF(sim_fz_sel_4, uint32_t)
SIM_FZ_SEL_DEF(sim_fz_sel_8, uint64_t)
SIM_FZ_SEL_DEF(sim_fz_sel_16, sim_b16)

static sim_fz_sel_fn sim_fz_sel_for(size_t es) {
  switch (es) {
  case 1: return sim_fz_sel_1;
  case 2: return sim_fz_sel_2;
  case 4: return sim_fz_sel_4;
  case 8: return sim_fz_sel_8;
  case 16: return sim_fz_sel_16;
  default: return NULL;
  }
}

/* ---- fused plans ---- */

enum {
  SIM_FZ_FULL,   /* a value of the space's shape, read in place */
  SIM_FZ_GATHER, /* a value read by index arithmetic into the tile */
  SIM_FZ_SPLAT,  /* one element repeated: the tile is filled once */
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

typedef struct sim_fz {
  int32_t nn;
  sim_fznode *nodes; /* post-order; the last is the root */
  int64_t numel, tile;
  size_t part_bytes;
  int32_t scratch; /* pseudo value: maxp * (part_bytes + 16) */
  int32_t maxp;    /* pieces: SIM_FZ_PARTS for big loops, else 1 */
  int stream;      /* the elementwise root stores past the cache */
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

static void sim_copy_nt(void *dst, const void *src, size_t n);
static void sim_copy_nt_done(void);

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
 * writes into dst when given (streaming when z->stream).  Returns the
 * root's values. */
static const void *sim_fz_eval(const sim_fz *z, void **vals, char *scr,
                               int64_t i0, int64_t L, void *dst) {
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
      p[k] = (const char *)vals[nd->val] + (size_t)i0 * nd->es;
      continue;
    case SIM_FZ_SPLAT: p[k] = scr + nd->off; continue;
    case SIM_FZ_ID: p[k] = p[nd->arg[0]]; continue;
    case SIM_FZ_GATHER:
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
    default: /* SIM_FZ_CLAMP */
      nd->clamp(o, p[nd->arg[0]], p[nd->arg[1]], p[nd->arg[2]], L, 1, 1);
      break;
    }
    p[k] = o;
  }
  const void *r = p[z->nn - 1];
  if (dst && r != dst)
    memcpy(dst, r, (size_t)L * z->nodes[z->nn - 1].es);
  return dst ? dst : r;
}

/* Fills the tiles of the splat leaves of one piece. */
static void sim_fz_splats(const sim_fz *z, void **vals, char *scr) {
  for (int32_t k = 0; k < z->nn; k++) {
    const sim_fznode *nd = &z->nodes[k];
    if (nd->kind == SIM_FZ_SPLAT)
      sim_fill_for(nd->es)(scr + nd->off,
                           (const char *)vals[nd->val] +
                               (size_t)nd->base * nd->es,
                           z->tile);
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
} sim_fzrun;

static char *sim_fz_piece_scratch(const sim_fzrun *r, int64_t p) {
  return r->scr + (size_t)p * r->z->part_bytes;
}

/* Elementwise root: piece p computes its range of output elements. */
static void sim_fz_ew_pieces(void *ctx, int64_t b, int64_t e) {
  const sim_fzrun *r = (const sim_fzrun *)ctx;
  const sim_fz *z = r->z;
  size_t es = z->nodes[z->nn - 1].es;
  for (int64_t p = b; p < e; p++) {
    char *scr = sim_fz_piece_scratch(r, p);
    int64_t lo = p * r->per * z->tile, hi = lo + r->per * z->tile;
    if (hi > z->numel) hi = z->numel;
    if (lo >= hi) continue;
    sim_fz_splats(z, r->vals, scr);
    for (int64_t i = lo; i < hi; i += z->tile) {
      int64_t L = hi - i < z->tile ? hi - i : z->tile;
      sim_fz_eval(z, r->vals, scr, i, L, r->out + (size_t)i * es);
    }
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

static xrt_status sim_run_fused(const sim_step *st, void **vals, sim_cx *cx) {
  const sim_fz *z = (const sim_fz *)st->data;
  if (z->numel == 0) return XRT_OK;
  sim_fzrun r = {z, vals, (char *)vals[z->scratch], (char *)vals[st->out[0]],
                 NULL, 0, 0, 0};
  int64_t tiles = (z->numel + z->tile - 1) / z->tile;
  sim_fz_go(cx, &r, tiles, sim_fz_ew_pieces);
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
                 (const char *)vals[st->in[0]], 0, 0, 0};
  z->fill(r.out, r.init, z->out_numel);
  if (z->numel == 0) return XRT_OK;
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

static void sim_fz_release(sim_fcc *fc) {
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

/* How op takes part in fusion: 'e' elementwise, 's' select, 'c' clamp,
 * 'r' reshape, 'v' a view (broadcast, transpose), 'R' a reduce root;
 * 0: not at all. */
static int sim_fz_kind(const sim_fcc *fc, const xrt_ir_op *op) {
  if (op->num_results != 1) return 0;
  const xrt_ir_type *rt = sim_fz_type(fc, op->results[0]);
  if (!rt) return 0;
  for (int32_t j = 0; j < op->num_operands; j++)
    if (!sim_fz_type(fc, op->operands[j])) return 0;
  const xrt_shape *rs = &rt->shape;
  if (op->code == XRT_OP_REDUCE) {
    const int64_t *rd;
    int64_t nrd;
    if (op->num_operands != 2 || op->num_regions != 1 ||
        sim_shape(fc, op->operands[1])->rank != 0 ||
        !sim_reduce_fast_body(fc, op))
      return 0;
    const xrt_ir_attr *a = sim_attr(op, "dimensions", XRT_ATTR_INTS);
    if (!a) return 0;
    rd = a->ints, nrd = a->n;
    const xrt_shape *in = sim_shape(fc, op->operands[0]);
    for (int64_t j = 0; j < nrd; j++)
      if (rd[j] < 0 || rd[j] >= in->rank) return 0;
    return 'R';
  }
  if (op->num_regions) return 0;
  int e = sim_ew_op_of(op->code);
  if (e >= 0 || op->code == XRT_OP_COMPARE || op->code == XRT_OP_CONVERT) {
    int arity = e >= 0 ? sim_ew_arity[e] : op->code == XRT_OP_COMPARE ? 2 : 1;
    if (op->num_operands != arity) return 0;
    for (int32_t j = 0; j < arity; j++) {
      const xrt_shape *s = sim_shape(fc, op->operands[j]);
      int c = sim_ew_class(s->dtype);
      if (!c || c == 'm' || !sim_fz_same_shape(s, rs)) return 0;
    }
    int c = sim_ew_class(rs->dtype);
    return c && c != 'm' ? 'e' : 0;
  }
  switch (op->code) {
  case XRT_OP_SELECT: {
    if (op->num_operands != 3) return 0;
    const xrt_shape *p = sim_shape(fc, op->operands[0]);
    if (p->dtype != XRT_PRED ||
        !sim_fz_sel_for(sim_esize(rs->dtype)) ||
        (p->rank != 0 && !sim_fz_same_shape(p, rs)) ||
        !sim_fz_same_shape(sim_shape(fc, op->operands[1]), rs) ||
        !sim_fz_same_shape(sim_shape(fc, op->operands[2]), rs))
      return 0;
    return 's';
  }
  case XRT_OP_CLAMP:
    if (op->num_operands != 3 || !sim_clamp_for(rs->dtype) ||
        !sim_fz_same_shape(sim_shape(fc, op->operands[1]), rs))
      return 0;
    for (int j = 0; j < 3; j += 2) {
      const xrt_shape *b = sim_shape(fc, op->operands[j]);
      if (b->rank != 0 && !sim_fz_same_shape(b, rs)) return 0;
    }
    return 'c';
  case XRT_OP_RESHAPE:
    return op->num_operands == 1 &&
                   sim_bytes(sim_shape(fc, op->operands[0])) == sim_bytes(rs)
               ? 'r'
               : 0;
  case XRT_OP_BROADCAST_IN_DIM: {
    const xrt_ir_attr *a = sim_attr(op, "broadcast_dimensions", XRT_ATTR_INTS);
    if (op->num_operands != 1) return 0;
    const xrt_shape *in = sim_shape(fc, op->operands[0]);
    if (!a || a->n != in->rank) return 0;
    for (int64_t i = 0; i < a->n; i++)
      if (a->ints[i] < 0 || a->ints[i] >= rs->rank ||
          (in->dims[i] != 1 && in->dims[i] != rs->dims[a->ints[i]]))
        return 0;
    return 'v';
  }
  case XRT_OP_BROADCAST: {
    if (op->num_operands != 1) return 0;
    const xrt_shape *in = sim_shape(fc, op->operands[0]);
    if (in->rank > rs->rank) return 0;
    for (int32_t i = 0; i < in->rank; i++)
      if (in->dims[i] != rs->dims[rs->rank - in->rank + i]) return 0;
    return 'v';
  }
  case XRT_OP_TRANSPOSE: {
    const xrt_ir_attr *a = sim_attr(op, "permutation", XRT_ATTR_INTS);
    if (op->num_operands != 1) return 0;
    const xrt_shape *in = sim_shape(fc, op->operands[0]);
    if (!a || a->n != in->rank || in->rank != rs->rank) return 0;
    for (int64_t k = 0; k < a->n; k++)
      if (a->ints[k] < 0 || a->ints[k] >= in->rank ||
          in->dims[a->ints[k]] != rs->dims[k])
        return 0;
    return 'v';
  }
  default:
    return 0;
  }
}

/* Operand j of a member of kind k is computed inside the group when its
 * producer is absorbed (views and a reduce's init read materialized
 * values). */
static int sim_fz_fusable_operand(int k, int32_t j) {
  return k == 'e' || k == 's' || k == 'c' || ((k == 'r' || k == 'R') && j == 0);
}

/* Index of op in block r, or -1. */
static int32_t sim_fz_index(const xrt_ir_region *r, const xrt_ir_op *op) {
  if (!op || op < r->ops || op >= r->ops + r->num_ops) return -1;
  return (int32_t)(op - r->ops);
}

static int64_t sim_fz_space(const sim_fcc *fc, const xrt_ir_op *root,
                            int kind) {
  return sim_numel(sim_shape(fc, kind == 'R' ? root->operands[0]
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
        if (pi < 0 || grp[pi] != -1 || !kinds[pi] || kinds[pi] == 'R' ||
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
  if (nm == 1 && kinds[ri] != 'R') grp[ri] = -1;
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
    if (grp[i] == i && (!kinds[i] || kinds[i] == 'v')) return 0;
  for (int32_t i = 0; i < n; i++) {
    int32_t g = grp[i];
    if (g == -1) continue;
    int k = kinds[i];
    if (g != i && (!k || k == 'R')) return 0;
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
      if (grp[i] == -1 && kinds[i] && kinds[i] != 'v')
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

/* The view op (broadcast_in_dim, broadcast, transpose) as a GATHER. */
static void sim_fz_view(sim_fzb *b, const xrt_ir_op *op, sim_fznode *nd) {
  const sim_fcc *fc = b->fc;
  const xrt_shape *in = sim_shape(fc, op->operands[0]);
  const xrt_shape *o = sim_shape(fc, op->results[0]);
  int64_t ist[XRT_MAX_RANK], ss[XRT_MAX_RANK] = {0};
  sim_strides(in, ist);
  if (op->code == XRT_OP_BROADCAST_IN_DIM) {
    const xrt_ir_attr *a = sim_attr(op, "broadcast_dimensions", XRT_ATTR_INTS);
    for (int64_t i = 0; i < a->n; i++)
      if (in->dims[i] != 1) ss[a->ints[i]] = ist[i];
  } else if (op->code == XRT_OP_BROADCAST) {
    int32_t lead = o->rank - in->rank;
    for (int32_t i = 0; i < in->rank; i++)
      ss[lead + i] = in->dims[i] == 1 ? 0 : ist[i];
  } else {
    const xrt_ir_attr *a = sim_attr(op, "permutation", XRT_ATTR_INTS);
    for (int64_t k = 0; k < a->n; k++) ss[k] = ist[a->ints[k]];
  }
  nd->kind = SIM_FZ_GATHER;
  nd->val = op->operands[0];
  sim_fz_gather_init(b, nd, o, ss, 0);
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
  return XRT_OK;
}

/* A node for a member op (its operands first). */
static xrt_status sim_fz_op_node(sim_fzb *b, const xrt_ir_op *op,
                                 sim_fznode *nd) {
  if (op->code == XRT_OP_BROADCAST_IN_DIM || op->code == XRT_OP_BROADCAST ||
      op->code == XRT_OP_TRANSPOSE) {
    sim_fz_view(b, op, nd);
    b->leaves[b->nleaves++] = op->operands[0];
    return XRT_OK;
  }
  int32_t na = op->code == XRT_OP_RESHAPE ? 1 : op->num_operands;
  for (int32_t j = 0; j < na; j++) {
    int32_t c;
    xrt_status rc = sim_fz_node(b, op->operands[j], &c);
    if (rc) return rc;
    nd->arg[j] = (int16_t)c;
  }
  nd->nargs = (int8_t)na;
  if (op->code == XRT_OP_RESHAPE) {
    nd->kind = SIM_FZ_ID;
    return XRT_OK;
  }
  if (op->code == XRT_OP_SELECT) {
    nd->kind = SIM_FZ_SEL;
    nd->sel = sim_fz_sel_for(nd->es);
    return XRT_OK;
  }
  if (op->code == XRT_OP_CLAMP) {
    nd->kind = SIM_FZ_CLAMP;
    nd->clamp = sim_clamp_for(sim_shape(b->fc, op->results[0])->dtype);
    return XRT_OK;
  }
  return sim_fz_ew(b, op, nd);
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
  z->tile = tile;
  z->maxp = z->numel >= SIM_FZ_PAR_MIN ? SIM_FZ_PARTS : 1;
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
  z->rfn = sim_fz_red_kernel(body->code, t);
  if (z->nn == 1 && b->nodes[0].kind == SIM_FZ_FULL)
    z->add4 = sim_fz_add4_kernel(body->code, t);
  z->res = sim_esize(t);
  z->fill = sim_fill_for(z->res);
  z->out_numel = sim_numel(sim_shape(fc, op->results[0]));
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
  b->nleaves = 0; /* b->nodes fill as z->nn grows */
  b->gused = 0;
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
  z = (sim_fz *)(void *)mem;
  *z = zb;
  int32_t cur = fc->cur = fc->pos++;
  for (int32_t i = 0; i < nin && !rc; i++) rc = sim_use(fc, ins[i]);
  if (!rc) rc = sim_def(fc, op->results[0], sim_vbytes(fc, op->results[0]));
  if (!rc)
    rc = sim_temp(fc, (z->part_bytes + 16) * (size_t)z->maxp, &z->scratch);
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

static xrt_status sim_lower_op(sim_fcc *fc, const xrt_ir_op *op,
                               sim_vec *steps);

/* Lowers the ops of block r (all but the terminator), fused where
 * sim_fz_plan_block groups them. */
static xrt_status sim_fz_lower_ops(sim_fcc *fc, const xrt_ir_region *r,
                                   sim_vec *steps) {
  const xrt_allocator *al = &fc->cc->al;
  int32_t *grp = sim_fz_plan_block(fc, r);
  sim_fzb *b = NULL; /* building space, shared by the block's groups */
  xrt_status rc = XRT_OK;
  if (fc->cc->fz_bad == 2) return sim_oom(fc);
  if (fc->cc->fz_bad)
    return sim_fail(fc->cc->err, XRT_INVALID_ARGUMENT, "@%s: stored fusion "
                    "decisions do not fit a block", fc->f->name);
  for (int32_t i = 0; i < r->num_ops - 1 && !rc; i++) {
    if (!grp || grp[i] == -1) {
      rc = sim_lower_op(fc, &r->ops[i], steps);
    } else if (grp[i] == i) {
      if (!b && !(b = (sim_fzb *)al->alloc(al->self, sizeof *b)))
        rc = sim_oom(fc);
      else
        rc = sim_fz_lower(fc, r, grp, i, b, steps);
    }
  }
  al->free(al->self, b);
  al->free(al->self, grp);
  return rc;
}
/* ======================================================================
 * Launches and collectives
 *
 * A launch is the set of num_replicas * num_partitions participants that
 * execute calls with one launch_id, each on its own thread.  The client
 * keeps a registry of launches in flight: the first participant to arrive
 * makes the entry, the last to leave frees it.  A participant that fails
 * (kernel error, injected fault, abort_message) marks its launch failed,
 * which releases every participant waiting for it.
 *
 * Collectives meet in rendezvous.  Each participant has a slot in the
 * launch holding the collective it is in (its own count of collectives
 * entered, seq), the op's signature, its frame (so peers find its operands
 * and results) and how far it got (tick = seq << 8 | phase).  A collective
 * publishes, waits until its group reached the same phase, computes by
 * reading the peers' memory directly (the simulation of device-to-device
 * transfers), and waits again before leaving, so that no participant
 * releases or overwrites memory a peer still reads.  Every wait gives up
 * when the launch failed, when the peer it waits for has left, or when no
 * participant can move any more (deadlock, e.g. a recv nobody sends to).
 * ==================================================================== */

/* Collectives across processes ("Collectives across processes"). */
struct sim_launch;
struct sim_coll;
static void sim_xp_launch_init(struct sim_launch *l, const sim_exe *e);
static xrt_status sim_xp_compile(sim_exe *e, const xrt_plugin_compile_args *a,
                                 xrt_plugin_error *err);
static xrt_status sim_xp_gather(sim_cx *cx, const sim_step *st,
                                const struct sim_coll *k,
                                struct sim_launch *l, uint32_t seq);
static void sim_xp_launch_end(sim_client *c, struct sim_launch *l);
static xrt_status sim_xp_all_reduce(const sim_step *st, void **vals,
                                    sim_cx *cx, const struct sim_coll *k,
                                    int *handled);

typedef struct sim_part {
  uint64_t tick;        /* seq << 8 | phase reached */
  uint32_t seq;         /* collective published */
  uint64_t sig;         /* its signature: peers must agree */
  void **vals;          /* the frame of the publishing step */
  const sim_step *st;
  int joined, departed, device;
} sim_part;

/* A device-to-device send waiting for its recv (data follows). */
typedef struct sim_msg {
  struct sim_msg *next;
  int64_t channel;
  size_t bytes;
} sim_msg;

struct sim_launch {
  struct sim_launch *next;
  uint64_t id;
  int n, npart, cap;
  int joined, departed;
  pthread_mutex_t mu;
  pthread_cond_t cv;
  /* Deadlock detection: participants that found they cannot move since the
   * last change of state (epoch). */
  uint64_t epoch;
  int nwait;
  int failed;
  xrt_status fail_code;
  int fail_proc, fail_dev;
  char fail_msg[sizeof(((xrt_plugin_error *)0)->message)];
  sim_part *parts;
  sim_msg *msgs;
  /* Other processes' participants ("Collectives across processes"): the collective
   * (seq + 1) whose remote operands are in, and their memory. */
  uint64_t xp_ready;
  void *xp_mem;
};

#define SIM_SPARE_LAUNCHES 4

/* Frees a launch's messages (never received) and ends its lock and
 * condition: all of it for one on the stack, the start of destroying one. */
static void sim_launch_own_end(sim_client *c, struct sim_launch *l) {
  for (sim_msg *m = l->msgs, *next; m; m = next) { /* never received */
    next = m->next;
    c->al.free(c->al.self, m);
  }
  pthread_cond_destroy(&l->cv);
  pthread_mutex_destroy(&l->mu);
}

static void sim_launch_destroy(sim_client *c, struct sim_launch *l) {
  sim_launch_own_end(c, l);
  c->al.free(c->al.self, l->parts);
  c->al.free(c->al.self, l);
}

static void sim_launches_free(sim_client *c) {
  if (!c->lmu_ok) return;
  for (struct sim_launch *l = c->launches, *next; l; l = next) {
    next = l->next;
    sim_launch_destroy(c, l);
  }
  for (struct sim_launch *l = c->spare, *next; l; l = next) {
    next = l->next;
    sim_launch_destroy(c, l);
  }
  c->launches = c->spare = NULL;
  pthread_cond_destroy(&c->dead_cv);
  pthread_mutex_destroy(&c->lmu);
  c->lmu_ok = 0;
}

/* A launch with room for n participants: a spare one, or new.  lmu held. */
static struct sim_launch *sim_launch_new(sim_client *c, int n) {
  struct sim_launch **pp = &c->spare;
  for (; *pp; pp = &(*pp)->next)
    if ((*pp)->cap >= n) {
      struct sim_launch *l = *pp;
      *pp = l->next;
      return l;
    }
  struct sim_launch *l =
      (struct sim_launch *)c->al.alloc(c->al.self, sizeof *l);
  sim_part *parts =
      l ? (sim_part *)c->al.alloc(c->al.self, sizeof *parts * (size_t)n) : NULL;
  if (!parts) {
    if (l) c->al.free(c->al.self, l);
    return NULL;
  }
  memset(l, 0, sizeof *l);
  l->parts = parts;
  l->cap = n;
  if (pthread_mutex_init(&l->mu, NULL) != 0) {
    c->al.free(c->al.self, parts);
    c->al.free(c->al.self, l);
    return NULL;
  }
  if (pthread_cond_init(&l->cv, NULL) != 0) {
    pthread_mutex_destroy(&l->mu);
    c->al.free(c->al.self, parts);
    c->al.free(c->al.self, l);
    return NULL;
  }
  return l;
}

static void sim_launch_reset(struct sim_launch *l, uint64_t id, int n,
                             int npart) {
  l->id = id;
  l->n = n;
  l->npart = npart;
  l->joined = l->departed = 0;
  l->epoch = 0;
  l->nwait = 0;
  l->failed = 0;
  l->fail_code = XRT_OK;
  l->fail_proc = l->fail_dev = -1;
  l->fail_msg[0] = 0;
  l->msgs = NULL;
  memset(l->parts, 0, sizeof *l->parts * (size_t)n);
}

/* A free slot of the dead table, or -1.  lmu held. */
static int sim_dead_slot(const sim_client *c) {
  int n = (int)(sizeof c->dead / sizeof c->dead[0]);
  for (int i = 0; i < n; i++)
    if (c->dead[i].left == 0) return i;
  return -1;
}

/* Remembers (without allocating) that launch id has no record: its
 * first participant, proc, ran out of memory making it; the left others
 * will fail when they arrive.  sim_launch_join made sure a slot is free:
 * a lost entry would leave the others waiting for proc forever.  lmu
 * held. */
static void sim_launch_bury(sim_client *c, uint64_t id, int left, int proc) {
  int i = sim_dead_slot(c);
  assert(i >= 0);
  if (i < 0 || left <= 0) return;
  c->dead[i].id = id;
  c->dead[i].left = left;
  c->dead[i].proc = proc;
}

/* Participants of an n-participant launch of e that run in this process
 * (the others, in other processes, never arrive here). */
static int sim_launch_locals(const sim_exe *e, int n) {
  if (!e || !e->xp_proc || (int64_t)e->nrep * e->npart != n) return n;
  int k = 0;
  for (int q = 0; q < n; q++) k += e->xp_proc[q] == e->xp_me;
  return k;
}

/* Fails a participant of a launch sim_launch_bury remembers.  lmu held. */
static xrt_status sim_launch_dead(sim_client *c,
                                  const xrt_plugin_execute_args *a, int n,
                                  int proc, xrt_plugin_error *err) {
  int nd = (int)(sizeof c->dead / sizeof c->dead[0]);
  for (int i = 0; i < nd; i++) {
    if (c->dead[i].left == 0 || c->dead[i].id != a->launch_id) continue;
    int first = c->dead[i].proc;
    if (--c->dead[i].left == 0) pthread_cond_broadcast(&c->dead_cv);
    return sim_fail(err, XRT_RESOURCE_EXHAUSTED, "launch %llu: participant "
                    "(replica %d, partition %d) ran out of host memory for "
                    "the launch before it started, so participant %d of %d "
                    "cannot run", (unsigned long long)a->launch_id,
                    first / a->num_partitions, first % a->num_partitions,
                    proc, n);
  }
  return XRT_OK;
}

/* Participant `proc` of launch a->launch_id arrives. */
static xrt_status sim_launch_join(sim_client *c,
                                  const xrt_plugin_execute_args *a, int proc,
                                  struct sim_launch **out,
                                  xrt_plugin_error *err) {
  int n = a->num_replicas * a->num_partitions;
  xrt_status rc = XRT_OK;
  const sim_exe *e = (const sim_exe *)a->executable;
  pthread_mutex_lock(&c->lmu);
  struct sim_launch *l;
  for (;;) {
    l = c->launches;
    while (l && l->id != a->launch_id) l = l->next;
    if (!l && (rc = sim_launch_dead(c, a, n, proc, err))) {
      pthread_mutex_unlock(&c->lmu);
      return rc;
    }
    if (l || sim_dead_slot(c) >= 0) break;
    /* Every slot holds a launch whose first participant failed: making
     * this record may fail too, with nowhere to say so.  The peers of
     * those launches free slots as they arrive (they come: launches are
     * queued in one order on every device), so wait for them; peers of
     * this launch arriving meanwhile wait here as well. */
    pthread_cond_wait(&c->dead_cv, &c->lmu);
  }
  if (!l) {
    l = sim_launch_new(c, n);
    if (!l) {
      sim_launch_bury(c, a->launch_id, sim_launch_locals(e, n) - 1, proc);
      pthread_mutex_unlock(&c->lmu);
      return sim_fail(err, XRT_RESOURCE_EXHAUSTED, "out of host memory for "
                      "launch %llu", (unsigned long long)a->launch_id);
    }
    sim_launch_reset(l, a->launch_id, n, a->num_partitions);
    sim_xp_launch_init(l, e);
    l->next = c->launches;
    c->launches = l;
  }
  pthread_mutex_lock(&l->mu);
  if (l->n != n || l->npart != a->num_partitions)
    rc = sim_fail(err, XRT_INVALID_ARGUMENT, "launch %llu: participants "
                  "disagree on its shape (%d x %d here)",
                  (unsigned long long)a->launch_id, (int)a->num_replicas,
                  (int)a->num_partitions);
  else if (l->parts[proc].joined)
    rc = sim_fail(err, XRT_INVALID_ARGUMENT, "launch %llu: participant "
                  "(replica %d, partition %d) arrived twice",
                  (unsigned long long)a->launch_id, (int)a->replica,
                  (int)a->partition);
  if (!rc) {
    l->parts[proc].joined = 1;
    l->parts[proc].device = a->device;
    l->joined++;
  }
  pthread_mutex_unlock(&l->mu);
  pthread_mutex_unlock(&c->lmu);
  *out = rc ? NULL : l;
  return rc;
}

/* Something changed: every waiter must look again.  mu held. */
static void sim_launch_changed(struct sim_launch *l) {
  l->epoch++;
  l->nwait = 0;
  pthread_cond_broadcast(&l->cv);
}

/* Marks the launch failed (first failure wins).  mu held. */
static void sim_launch_fail(struct sim_launch *l, int proc, xrt_status code,
                            const char *msg) {
  if (l->failed) return;
  l->failed = 1;
  l->fail_code = code ? code : XRT_INTERNAL;
  l->fail_proc = proc;
  l->fail_dev = proc >= 0 ? l->parts[proc].device : -1;
  snprintf(l->fail_msg, sizeof l->fail_msg, "%s", msg && *msg ? msg : "?");
  sim_launch_changed(l);
}

/* Participant proc leaves, with rc and its message if it failed; the last
 * one to leave frees the launch. */
static void sim_launch_leave(sim_client *c, struct sim_launch *l, int proc,
                             xrt_status rc, const char *msg) {
  pthread_mutex_lock(&l->mu);
  if (rc) sim_launch_fail(l, proc, rc, msg);
  l->parts[proc].departed = 1;
  l->departed++;
  sim_launch_changed(l);
  int last = l->departed == l->n;
  pthread_mutex_unlock(&l->mu);
  if (!last) return;
  pthread_mutex_lock(&c->lmu);
  struct sim_launch **pp = &c->launches;
  while (*pp != l) pp = &(*pp)->next;
  *pp = l->next;
  for (sim_msg *m = l->msgs, *next; m; m = next) { /* sends never received */
    next = m->next;
    c->al.free(c->al.self, m);
  }
  l->msgs = NULL;
  sim_xp_launch_end(c, l);
  int spares = 0;
  for (struct sim_launch *s = c->spare; s; s = s->next) spares++;
  if (spares < SIM_SPARE_LAUNCHES) {
    l->next = c->spare;
    c->spare = l;
    l = NULL;
  }
  pthread_mutex_unlock(&c->lmu);
  if (l) sim_launch_destroy(c, l);
}

/* ---- waiting ---- */

static int sim_proc_of(const sim_cx *cx) {
  return cx->xa->replica * cx->xa->num_partitions + cx->xa->partition;
}

static xrt_status sim_coll_fail(sim_cx *cx, const xrt_ir_op *op,
                                xrt_status code, const char *fmt, ...)
    SIM_PRINTF(4, 5);
/* "<op> at file:line:col: message" */
static xrt_status sim_coll_fail(sim_cx *cx, const xrt_ir_op *op,
                                xrt_status code, const char *fmt, ...) {
  char prefix[400];
  const char *name = strncmp(op->name, "stablehlo.", 10) == 0
                         ? op->name + 10 : op->name;
  int n = snprintf(prefix, sizeof prefix, "%s at ", name);
  size_t used = n < 0 ? 0 : (size_t)n < sizeof prefix ? (size_t)n
                                                       : sizeof prefix - 1;
  sim_loc(op, prefix + used, sizeof prefix - used); /* cut as one would be */
  va_list ap;
  va_start(ap, fmt);
  sim_vfail(cx->err, code, prefix, fmt, ap);
  va_end(ap);
  return code;
}

/* The error of a participant released because another one failed.
 * mu held. */
static xrt_status sim_coll_peer_failed(sim_cx *cx, struct sim_launch *l,
                                       const xrt_ir_op *op) {
  if (l->fail_proc < 0)
    return sim_coll_fail(cx, op, XRT_ABORTED, "%s", l->fail_msg);
  return sim_coll_fail(cx, op, XRT_ABORTED, "participant (replica %d, "
                       "partition %d) on device %d failed: %s",
                       l->fail_proc / l->npart, l->fail_proc % l->npart,
                       l->fail_dev, l->fail_msg);
}

/* An injected COLLECTIVE fault of the participant's device, if due: fails
 * it and its launch (so the peers are released).  See sim_faults.inc. */
static xrt_status sim_fault_coll(sim_cx *cx, const xrt_ir_op *op);

/* Records this participant's own failure in the launch.  mu held. */
static xrt_status sim_coll_self_fail(sim_cx *cx, struct sim_launch *l,
                                     xrt_status rc) {
  sim_launch_fail(l, sim_proc_of(cx), rc, cx->err ? cx->err->message : "");
  return rc;
}

/* Blocks on the launch's condition; fails the launch when every
 * participant still running is blocked too.  mu held. */
static xrt_status sim_launch_block(sim_cx *cx, struct sim_launch *l,
                                   uint64_t *epoch, const xrt_ir_op *op,
                                   const char *what) {
  if (*epoch != l->epoch) {
    *epoch = l->epoch;
    l->nwait++;
  }
  if (l->nwait + l->departed >= l->n) {
    sim_coll_fail(cx, op, XRT_FAILED_PRECONDITION, "deadlock: every "
                  "participant of the launch is waiting (this one for %s)",
                  what);
    return sim_coll_self_fail(cx, l, XRT_FAILED_PRECONDITION);
  }
  pthread_cond_wait(&l->cv, &l->mu);
  return XRT_OK;
}

/* Waits until participants mem[0..nm) reached tick t.  mu held. */
static xrt_status sim_wait_ticks(sim_cx *cx, struct sim_launch *l,
                                 const int32_t *mem, int32_t nm, uint64_t t,
                                 const xrt_ir_op *op) {
  uint64_t epoch = ~(uint64_t)0;
  for (;;) {
    if (l->failed) return sim_coll_peer_failed(cx, l, op);
    int32_t q = -1;
    for (int32_t k = 0; k < nm && q < 0; k++)
      if (l->parts[mem[k]].tick < t) q = mem[k];
    if (q < 0) return XRT_OK;
    if (l->parts[q].departed) {
      sim_coll_fail(cx, op, XRT_FAILED_PRECONDITION, "participant (replica "
                    "%d, partition %d) on device %d finished without "
                    "reaching this collective", q / l->npart, q % l->npart,
                    l->parts[q].device);
      return sim_coll_self_fail(cx, l, XRT_FAILED_PRECONDITION);
    }
    char what[96];
    snprintf(what, sizeof what, "participant (replica %d, partition %d)",
             q / l->npart, q % l->npart);
    xrt_status rc = sim_launch_block(cx, l, &epoch, op, what);
    if (rc) return rc;
  }
}

/* ======================================================================
 * Process groups (computed at compile time)
 * ==================================================================== */

enum { SIM_PG_REPLICA, SIM_PG_PARTITION, SIM_PG_REPLICA_PARTITION,
       SIM_PG_FLAT };

/* A collective's plan: its process groups over the launch it was compiled
 * for, its geometry, and how it reduces. */
typedef struct sim_coll {
  int32_t n, nrep, npart;
  int32_t ngroups;
  const int32_t *gstart; /* ngroups + 1 */
  const int32_t *gmem;   /* members, group after group, process ids */
  const int32_t *pgroup; /* n: group of each process (-1: none) */
  const int32_t *pindex; /* n: index in its group */
  const int32_t *psrc, *pdst; /* collective_permute: peers (-1: none) */
  uint64_t sig;
  int32_t nops;
  const size_t *es;      /* element size per operand */
  const int64_t *numel;  /* elements per operand */
  const int64_t *outer, *inner; /* per operand: around the op's dimension */
  int64_t dim_in, dim_out;      /* unused by all_reduce */
  /* all_to_all */
  int32_t rank, sdim, cdim;
  const int64_t *shapes; /* per operand: rank dims */
  /* reduction */
  const sim_red_fn *fast; /* per operand, NULL: run the body */
  sim_plan body;
  const int32_t *bargs, *brets;
  int64_t root_operand; /* collective_broadcast has_dynamic_root: index */
} sim_coll;

typedef struct sim_pgb { /* group builder */
  int32_t *gstart, *gmem;
  int32_t ng, nm;
} sim_pgb;

static uint64_t sim_fnv(uint64_t h, int64_t v) {
  for (int i = 0; i < 8; i++) {
    h ^= (uint64_t)(v >> (8 * i)) & 0xff;
    h *= 1099511628211ull;
  }
  return h;
}

/* The ids of replica_groups (or source_target_pairs) as rows of width w;
 * -1 pads ragged rows. */
static xrt_status sim_pg_rows(sim_fcc *fc, const xrt_ir_op *op,
                              const char *name, const int64_t **ids,
                              int64_t *nrows, int64_t *w) {
  const xrt_ir_attr *a = xrt_ir_op_attr(op, name);
  *ids = NULL;
  *nrows = *w = 0;
  if (!a) return XRT_OK;
  if (a->kind != XRT_ATTR_INTS)
    return sim_fail_op(fc->cc->err, op, XRT_INVALID_ARGUMENT, "%s: %s must "
                       "be a 2-dimensional integer tensor", op->name, name);
  *ids = a->ints;
  if (a->lit && a->lit->type.shape.rank == 2) {
    *nrows = a->lit->type.shape.dims[0];
    *w = a->lit->type.shape.dims[1];
  } else if (a->n > 0) {
    *nrows = 1; /* a flat list is one group */
    *w = a->n;
  }
  if (*nrows * *w != a->n)
    return sim_fail_op(fc->cc->err, op, XRT_INVALID_ARGUMENT, "%s: %s has a "
                       "bad shape", op->name, name);
  return XRT_OK;
}

static int64_t sim_channel_id(const xrt_ir_op *op) {
  const xrt_ir_attr *a = xrt_ir_op_attr(op, "channel_handle");
  const xrt_ir_attr *h = xrt_ir_attr_field(a, "handle");
  if (h && h->kind == XRT_ATTR_INT) return h->i;
  if (a && a->kind == XRT_ATTR_INT) return a->i;
  return 0;
}

static int sim_flag(const xrt_ir_op *op, const char *name) {
  const xrt_ir_attr *a = xrt_ir_op_attr(op, name);
  if (!a) return 0;
  if (a->kind == XRT_ATTR_UNIT) return 1;
  return (a->kind == XRT_ATTR_BOOL || a->kind == XRT_ATTR_INT) && a->i != 0;
}

static const char *sim_pg_name(int mode) {
  switch (mode) {
  case SIM_PG_REPLICA: return "cross_replica";
  case SIM_PG_PARTITION: return "cross_partition";
  case SIM_PG_REPLICA_PARTITION: return "cross_replica_and_partition";
  default: return "flattened_ids";
  }
}

/* Bound of the ids in replica_groups for a grouping mode. */
static int32_t sim_pg_bound(const sim_coll *k, int mode) {
  return mode == SIM_PG_PARTITION ? k->npart
       : mode == SIM_PG_FLAT ? k->n : k->nrep;
}

/* Checks ids: in range, unique; with cover, every id in [0, bound) once. */
static xrt_status sim_pg_check(sim_fcc *fc, const xrt_ir_op *op,
                               const char *name, const int64_t *ids,
                               int64_t cnt, int32_t bound, int mode,
                               int cover, int pairs) {
  uint8_t *seen = (uint8_t *)sim_palloc(fc, (size_t)bound * 2 + 1);
  if (!seen) return XRT_RESOURCE_EXHAUSTED;
  for (int64_t i = 0; i < cnt; i++) {
    if (ids[i] == -1 && !pairs) continue;
    if (ids[i] < 0 || ids[i] >= bound)
      return sim_fail_op(fc->cc->err, op, XRT_INVALID_ARGUMENT, "%s: id %lld "
                         "in %s is out of range: %s over %d %s",
                         op->name, (long long)ids[i], name, sim_pg_name(mode),
                         (int)bound, mode == SIM_PG_PARTITION ? "partitions"
                         : mode == SIM_PG_FLAT ? "processes" : "replicas");
    uint8_t *s = &seen[pairs ? (i & 1) * bound + ids[i] : ids[i]];
    if (*s)
      return sim_fail_op(fc->cc->err, op, XRT_INVALID_ARGUMENT, "%s: id %lld "
                         "appears twice in %s%s", op->name,
                         (long long)ids[i], name,
                         pairs ? (i & 1 ? " as a target" : " as a source")
                               : "");
    *s = 1;
  }
  for (int32_t i = 0; cover && i < bound; i++)
    if (!seen[i])
      return sim_fail_op(fc->cc->err, op, XRT_INVALID_ARGUMENT, "%s: %s "
                         "leaves id %d out: with %s every id in [0, %d) must "
                         "be in exactly one group", op->name, name, (int)i,
                         sim_pg_name(mode), (int)bound);
  return XRT_OK;
}

/* Adds the process groups of one row of ids (-1 entries skipped). */
static void sim_pg_add_row(sim_coll *k, sim_pgb *b, const int64_t *row,
                           int64_t w, int mode) {
  int32_t outer = mode == SIM_PG_REPLICA ? k->npart
                : mode == SIM_PG_PARTITION ? k->nrep : 1;
  for (int32_t o = 0; o < outer; o++) {
    int32_t inner = mode == SIM_PG_REPLICA_PARTITION ? k->npart : 1;
    for (int32_t p2 = 0; p2 < inner; p2++)
      for (int64_t j = 0; j < w; j++) {
        int64_t id = row[j];
        if (id < 0) continue;
        int32_t proc;
        switch (mode) {
        case SIM_PG_REPLICA: proc = (int32_t)id * k->npart + o; break;
        case SIM_PG_PARTITION: proc = o * k->npart + (int32_t)id; break;
        case SIM_PG_REPLICA_PARTITION:
          proc = (int32_t)id * k->npart + p2;
          break;
        default: proc = (int32_t)id; break;
        }
        b->gmem[b->nm++] = proc;
      }
    b->gstart[++b->ng] = b->nm;
  }
}

/* Builds k's groups from rows of ids; an empty list is one group of all. */
static xrt_status sim_pg_build(sim_fcc *fc, sim_coll *k, const int64_t *ids,
                               int64_t nrows, int64_t w, int mode) {
  int32_t bound = sim_pg_bound(k, mode);
  int64_t *all = NULL;
  if (nrows == 0) {
    all = (int64_t *)sim_palloc(fc, sizeof *all * (size_t)bound);
    if (!all) return XRT_RESOURCE_EXHAUSTED;
    for (int32_t i = 0; i < bound; i++) all[i] = i;
    ids = all, nrows = 1, w = bound;
  }
  int32_t outer = mode == SIM_PG_REPLICA ? k->npart
                : mode == SIM_PG_PARTITION ? k->nrep : 1;
  int32_t inner = mode == SIM_PG_REPLICA_PARTITION ? k->npart : 1;
  size_t maxg = (size_t)nrows * (size_t)outer + 1;
  size_t maxm = (size_t)nrows * (size_t)w * (size_t)outer * (size_t)inner + 1;
  sim_pgb b = {(int32_t *)sim_palloc(fc, sizeof(int32_t) * maxg),
               (int32_t *)sim_palloc(fc, sizeof(int32_t) * maxm), 0, 0};
  int32_t *pg = (int32_t *)sim_palloc(fc, sizeof(int32_t) * (size_t)k->n);
  int32_t *pi = (int32_t *)sim_palloc(fc, sizeof(int32_t) * (size_t)k->n);
  if (!b.gstart || !b.gmem || !pg || !pi) return XRT_RESOURCE_EXHAUSTED;
  b.gstart[0] = 0;
  for (int64_t r = 0; r < nrows; r++) sim_pg_add_row(k, &b, ids + r * w, w, mode);
  for (int32_t p = 0; p < k->n; p++) pg[p] = pi[p] = -1;
  for (int32_t g = 0; g < b.ng; g++)
    for (int32_t j = b.gstart[g]; j < b.gstart[g + 1]; j++) {
      pg[b.gmem[j]] = g;
      pi[b.gmem[j]] = j - b.gstart[g];
    }
  k->ngroups = b.ng;
  k->gstart = b.gstart;
  k->gmem = b.gmem;
  k->pgroup = pg;
  k->pindex = pi;
  for (int32_t j = 0; j < b.nm; j++) k->sig = sim_fnv(k->sig, b.gmem[j]);
  return XRT_OK;
}

/* The grouping mode of all_gather, all_reduce, reduce_scatter. */
static xrt_status sim_pg_mode3(sim_fcc *fc, const xrt_ir_op *op, int *mode) {
  int64_t ch = sim_channel_id(op);
  int global = sim_flag(op, "use_global_device_ids");
  if (global && ch <= 0)
    return sim_fail_op(fc->cc->err, op, XRT_INVALID_ARGUMENT, "%s: "
                       "use_global_device_ids needs a channel_handle with "
                       "handle > 0", op->name);
  *mode = ch <= 0 ? SIM_PG_REPLICA
        : global ? SIM_PG_FLAT : SIM_PG_REPLICA_PARTITION;
  return XRT_OK;
}

/* replica_groups of op in mode; cover: a partition of all ids; equal: all
 * groups the same size (*gs). */
static xrt_status sim_pg_groups(sim_fcc *fc, const xrt_ir_op *op,
                                sim_coll *k, int mode, int cover,
                                int32_t *gs) {
  const int64_t *ids;
  int64_t nrows, w;
  xrt_status rc = sim_pg_rows(fc, op, "replica_groups", &ids, &nrows, &w);
  if (rc) return rc;
  int32_t bound = sim_pg_bound(k, mode);
  if ((rc = sim_pg_check(fc, op, "replica_groups", ids, nrows * w, bound,
                         mode, cover, 0)) ||
      (rc = sim_pg_build(fc, k, ids, nrows, w, mode)))
    return rc;
  if (gs) {
    *gs = k->ngroups ? k->gstart[1] - k->gstart[0] : 0;
    for (int32_t g = 0; g < k->ngroups; g++)
      if (k->gstart[g + 1] - k->gstart[g] != *gs)
        return sim_fail_op(fc->cc->err, op, XRT_INVALID_ARGUMENT, "%s: "
                           "replica_groups must all have the same size "
                           "(group %d has %d processes, group 0 has %d)",
                           op->name, (int)g,
                           (int)(k->gstart[g + 1] - k->gstart[g]), (int)*gs);
  }
  return XRT_OK;
}

/* ======================================================================
 * Common lowering
 * ==================================================================== */

static sim_coll *sim_coll_new(sim_fcc *fc, const xrt_ir_op *op,
                              int32_t nops) {
  sim_coll *k = (sim_coll *)sim_palloc(fc, sizeof *k);
  size_t *es = (size_t *)sim_palloc(fc, sizeof *es * (size_t)(nops + 1));
  int64_t *ne = (int64_t *)sim_palloc(fc, sizeof *ne * (size_t)(nops + 1));
  int64_t *ou = (int64_t *)sim_palloc(fc, sizeof *ou * (size_t)(nops + 1));
  int64_t *in = (int64_t *)sim_palloc(fc, sizeof *in * (size_t)(nops + 1));
  if (!k || !es || !ne || !ou || !in) return NULL;
  sim_exe *e = fc->cc->exe;
  k->nrep = e->nrep;
  k->npart = e->npart;
  k->n = e->nrep * e->npart;
  k->nops = nops;
  k->es = es, k->numel = ne, k->outer = ou, k->inner = in;
  k->root_operand = -1;
  k->sig = sim_fnv(1469598103934665603ull, op->code);
  for (int32_t j = 0; j < nops; j++) {
    const xrt_shape *s = sim_shape(fc, op->operands[j]);
    es[j] = sim_esize(s->dtype);
    ne[j] = sim_numel(s);
    k->sig = sim_fnv(sim_fnv(k->sig, (int64_t)es[j]), ne[j]);
  }
  e->has_coll = 1;
  return k;
}

/* Operands and results are tensors, as many results as operands. */
static xrt_status sim_coll_check_values(sim_fcc *fc, const xrt_ir_op *op,
                                        int32_t nops) {
  if (nops < 1 || op->num_results != nops)
    return sim_fail_op(fc->cc->err, op, XRT_INVALID_ARGUMENT, "%s takes as "
                       "many results as operands (at least one)", op->name);
  for (int32_t j = 0; j < nops; j++) {
    const xrt_ir_type *a = &fc->f->value_types[op->operands[j]];
    const xrt_ir_type *b = &fc->f->value_types[op->results[j]];
    if (a->kind != XRT_TYPE_TENSOR || b->kind != XRT_TYPE_TENSOR ||
        a->shape.dtype != b->shape.dtype)
      return sim_fail_op(fc->cc->err, op, XRT_INVALID_ARGUMENT, "%s: result "
                         "%d must be a tensor of operand %d's element type",
                         op->name, (int)j, (int)j);
  }
  return XRT_OK;
}

/* As sim_coll_check_values, and each result has its operand's element
 * count (the ops that keep the data's size). */
static xrt_status sim_coll_check_same_size(sim_fcc *fc, const xrt_ir_op *op,
                                           int32_t nops) {
  xrt_status rc = sim_coll_check_values(fc, op, nops);
  if (rc) return rc;
  for (int32_t j = 0; j < nops; j++)
    if (sim_numel(sim_shape(fc, op->operands[j])) !=
        sim_numel(sim_shape(fc, op->results[j])))
      return sim_fail_op(fc->cc->err, op, XRT_INVALID_ARGUMENT, "%s: result "
                         "%d must have operand %d's shape", op->name, (int)j,
                         (int)j);
  return XRT_OK;
}

/* Product of dims [from, to) of s. */
static int64_t sim_dims_prod(const xrt_shape *s, int32_t from, int32_t to) {
  int64_t p = 1;
  for (int32_t i = from; i < to; i++) p *= s->dims[i];
  return p;
}

/* An integer attribute naming a dimension of every operand. */
static xrt_status sim_coll_dim(sim_fcc *fc, const xrt_ir_op *op,
                               const char *name, int64_t *d) {
  xrt_status rc = sim_int_attr(fc, op, name, d);
  if (rc) return rc;
  for (int32_t j = 0; j < op->num_operands; j++) {
    int32_t r = sim_shape(fc, op->operands[j])->rank;
    if (*d < 0 || *d >= r || sim_shape(fc, op->results[j])->rank != r)
      return sim_fail_op(fc->cc->err, op, XRT_INVALID_ARGUMENT, "%s: %s = "
                         "%lld is not a dimension of operand %d (rank %d) "
                         "and its result", op->name, name, (long long)*d,
                         (int)j, (int)r);
  }
  return XRT_OK;
}

/* ---- the reduction computation ---- */

/* The typed loop when the body is one binary op of its two arguments. */
static sim_red_fn sim_coll_fast(const sim_fcc *fc, const xrt_ir_op *op,
                                int32_t j) {
  const xrt_ir_region *r = &op->regions[0];
  const xrt_ir_op *b = sim_region_binop(r);
  if (!b) return NULL;
  int32_t a0 = r->args[0];
  const xrt_ir_type *in = &fc->f->value_types[op->operands[j]];
  const xrt_ir_type *bt = &fc->f->value_types[b->results[0]];
  const xrt_ir_type *at = &fc->f->value_types[a0];
  if (in->quant || bt->quant || at->quant ||
      bt->shape.dtype != in->shape.dtype || at->shape.dtype != in->shape.dtype)
    return NULL;
  return sim_red_pick(b->code, in->shape.dtype);
}

static xrt_status sim_coll_body(sim_fcc *fc, const xrt_ir_op *op,
                                sim_coll *k) {
  if (op->num_regions != 1)
    return sim_fail_op(fc->cc->err, op, XRT_INVALID_ARGUMENT, "%s needs a "
                       "computation region", op->name);
  const xrt_ir_region *reg = &op->regions[0];
  if (reg->num_args != 2)
    return sim_fail_op(fc->cc->err, op, XRT_INVALID_ARGUMENT, "%s: the "
                       "computation must take 2 arguments", op->name);
  sim_red_fn *fast = (sim_red_fn *)sim_palloc(fc, sizeof *fast *
                                                      (size_t)k->nops);
  if (!fast) return XRT_RESOURCE_EXHAUSTED;
  int slow = 0;
  for (int32_t j = 0; j < k->nops; j++) {
    fast[j] = sim_coll_fast(fc, op, j);
    slow |= !fast[j];
    for (int32_t a = 0; a < 2; a++) {
      const xrt_ir_type *t = &fc->f->value_types[reg->args[a]];
      if (t->kind != XRT_TYPE_TENSOR || sim_numel(&t->shape) != 1 ||
          sim_esize(t->shape.dtype) != k->es[j])
        return sim_fail_op(fc->cc->err, op, XRT_INVALID_ARGUMENT, "%s: the "
                           "computation's arguments must be scalars of "
                           "operand %d's element type", op->name, (int)j);
    }
  }
  k->fast = fast;
  k->bargs = reg->args;
  if (!slow) return XRT_OK;
  xrt_status rc = sim_lower_region(fc, reg, &k->body, &k->brets, 1, op);
  if (rc) return rc;
  const xrt_ir_type *rt = &fc->f->value_types[k->brets[0]];
  for (int32_t j = 0; j < k->nops; j++)
    if (rt->kind != XRT_TYPE_TENSOR || sim_esize(rt->shape.dtype) != k->es[j])
      return sim_fail_op(fc->cc->err, op, XRT_INVALID_ARGUMENT, "%s: the "
                         "computation must return a scalar of operand %d's "
                         "element type", op->name, (int)j);
  return XRT_OK;
}

/* acc[i] = computation(acc[i], in[i]) for i in [0, n), operand j. */
static xrt_status sim_coll_combine(const sim_coll *k, int32_t j, void **vals,
                                   sim_cx *cx, char *acc, const char *in,
                                   int64_t n) {
  if (k->fast[j]) {
    k->fast[j](acc, in, n, 1);
    return XRT_OK;
  }
  size_t es = k->es[j];
  for (int64_t i = 0; i < n; i++) {
    vals[k->bargs[0]] = acc + (size_t)i * es;
    vals[k->bargs[1]] = (void *)(uintptr_t)(in + (size_t)i * es);
    xrt_status rc = sim_run_plan(&k->body, vals, cx);
    if (rc) return rc;
    memmove(acc + (size_t)i * es, vals[k->brets[0]], es);
  }
  return XRT_OK;
}

/* ======================================================================
 * Running a collective: publish, wait, compute, wait
 * ==================================================================== */

/* This participant's view of one collective in flight. */
typedef struct sim_cview {
  struct sim_launch *l;
  int32_t proc;
  uint32_t seq;
  const int32_t *mem; /* its group */
  int32_t gs, me;
} sim_cview;

/* Operand j and result j of process q (which published this collective). */
static const char *sim_peer_in(const sim_cview *v, int32_t q, int32_t j) {
  const sim_part *p = &v->l->parts[q];
  return (const char *)p->vals[p->st->in[j]];
}
static char *sim_peer_out(const sim_cview *v, int32_t q, int32_t j) {
  const sim_part *p = &v->l->parts[q];
  return (char *)p->vals[p->st->out[j]];
}

/* Enters the collective: publishes this participant's frame and waits for
 * the peers in wait[0..nw) (its group by default) to publish the same
 * collective. */
static xrt_status sim_coll_enter(const sim_step *st, void **vals,
                                 sim_cx *cx, const sim_coll *k,
                                 sim_cview *v, const int32_t *wait,
                                 int32_t nw) {
  memset(v, 0, sizeof *v);
  xrt_status frc = sim_fault_coll(cx, st->op);
  if (frc) return frc;
  v->seq = cx->coll_seq++;
  v->l = cx->launch;
  v->proc = sim_proc_of(cx);
  int32_t g = k->pgroup ? k->pgroup[v->proc] : -1;
  if (g >= 0) {
    v->mem = k->gmem + k->gstart[g];
    v->gs = k->gstart[g + 1] - k->gstart[g];
    v->me = k->pindex[v->proc];
  }
  if (!wait) wait = v->mem, nw = v->gs;
  struct sim_launch *l = v->l;
  if (!l) return XRT_OK;
  pthread_mutex_lock(&l->mu);
  sim_part *me = &l->parts[v->proc];
  me->seq = v->seq;
  me->sig = k->sig;
  me->vals = vals;
  me->st = st;
  me->tick = (uint64_t)v->seq << 8 | 1;
  sim_launch_changed(l);
  xrt_status rc = sim_xp_gather(cx, st, k, l, v->seq); /* collectives across processes */
  if (!rc) rc = sim_wait_ticks(cx, l, wait, nw, me->tick, st->op);
  for (int32_t i = 0; i < nw && !rc; i++) {
    const sim_part *p = &l->parts[wait[i]];
    if (p->seq != v->seq || p->sig != k->sig) {
      sim_coll_fail(cx, st->op, XRT_FAILED_PRECONDITION, "participant "
                    "(replica %d, partition %d) is in a different collective "
                    "(collectives must be entered in the same order, with "
                    "the same shapes and groups)", wait[i] / l->npart,
                    wait[i] % l->npart);
      rc = sim_coll_self_fail(cx, l, XRT_FAILED_PRECONDITION);
    }
  }
  pthread_mutex_unlock(&l->mu);
  return rc;
}

/* Moves to phase ph and waits for wait[0..nw) (default: the group) to get
 * there too. */
static xrt_status sim_coll_phase(sim_cx *cx, const sim_step *st,
                                 const sim_cview *v, int ph,
                                 const int32_t *wait, int32_t nw) {
  struct sim_launch *l = v->l;
  if (!l) return XRT_OK;
  if (!wait) wait = v->mem, nw = v->gs;
  pthread_mutex_lock(&l->mu);
  l->parts[v->proc].tick = (uint64_t)v->seq << 8 | (uint64_t)ph;
  sim_launch_changed(l);
  xrt_status rc = sim_wait_ticks(cx, l, wait, nw,
                                 (uint64_t)v->seq << 8 | (uint64_t)ph, st->op);
  pthread_mutex_unlock(&l->mu);
  return rc;
}

/* A failure of this participant's own computation inside a collective:
 * peers waiting for it must be released. */
static xrt_status sim_coll_own_error(sim_cx *cx, const sim_cview *v,
                                     xrt_status rc) {
  if (!v->l) return rc;
  pthread_mutex_lock(&v->l->mu);
  sim_coll_self_fail(cx, v->l, rc);
  pthread_mutex_unlock(&v->l->mu);
  return rc;
}

/* ---- all_reduce ---- */

/* Elements [lo, hi) of slice s of n elements cut in gs pieces. */
static void sim_slice(int64_t n, int32_t gs, int32_t s, int64_t *lo,
                      int64_t *hi) {
  *lo = n * s / gs;
  *hi = n * (s + 1) / gs;
}

#define SIM_COLL_BLOCK 16384 /* bytes combined while in cache */
#define SIM_STREAM_MIN (1 << 20)

/* Copies n bytes with non-temporal stores where the machine has them: a
 * collective's result is written once and read by others later, so
 * reading its lines into the cache first would only cost bandwidth. */
static void sim_copy_nt(void *dst, const void *src, size_t n) {
#ifdef SIM_HAVE_STREAM
  size_t head = (size_t)(-(uintptr_t)dst & 15);
  if (n >= 64 + head) {
    memcpy(dst, src, head);
    char *d = (char *)dst + head;
    const char *s = (const char *)src + head;
    size_t k = (n - head) / 64;
    for (size_t i = 0; i < k; i++, s += 64, d += 64) {
      __m128i x0 = _mm_loadu_si128((const __m128i *)(const void *)s);
      __m128i x1 = _mm_loadu_si128((const __m128i *)(const void *)(s + 16));
      __m128i x2 = _mm_loadu_si128((const __m128i *)(const void *)(s + 32));
      __m128i x3 = _mm_loadu_si128((const __m128i *)(const void *)(s + 48));
      _mm_stream_si128((__m128i *)(void *)d, x0);
      _mm_stream_si128((__m128i *)(void *)(d + 16), x1);
      _mm_stream_si128((__m128i *)(void *)(d + 32), x2);
      _mm_stream_si128((__m128i *)(void *)(d + 48), x3);
    }
    memcpy(d, s, (n - head) % 64);
    return;
  }
#endif
  if (n) memcpy(dst, src, n);
}

/* Orders the non-temporal stores before peers are told to read. */
static void sim_copy_nt_done(void) {
#ifdef SIM_HAVE_STREAM
  _mm_sfence();
#endif
}

/* Big copies stream; small ones go through the cache. */
static void sim_copy_stream(void *dst, const void *src, size_t n) {
  if (n >= SIM_STREAM_MIN) sim_copy_nt(dst, src, n);
  else if (n) memcpy(dst, src, n);
}

/* acc[0, len) = ins[0][i] + ins[1][i] + ... in group order (the same
 * rounding as folding one input at a time), for float sums: one pass over
 * the inputs, four vectors at a time.  0 when it does not apply. */
#ifdef SIM_HAVE_STREAM
/* sim_fold_add's whole 256-byte blocks with AVX-512: bytes done. */
__attribute__((target("avx512f"))) static size_t
sim_fold_add_avx512(int f32, char *acc, const char *const *ins, int32_t gs,
                    size_t off, size_t bytes) {
  size_t i = 0;
  for (; i + 256 <= bytes; i += 256) {
    const char *s = ins[0] + off + i;
    __m512 x0 = _mm512_loadu_ps((const void *)s);
    __m512 x1 = _mm512_loadu_ps((const void *)(s + 64));
    __m512 x2 = _mm512_loadu_ps((const void *)(s + 128));
    __m512 x3 = _mm512_loadu_ps((const void *)(s + 192));
    __m512d y0 = _mm512_castps_pd(x0), y1 = _mm512_castps_pd(x1);
    __m512d y2 = _mm512_castps_pd(x2), y3 = _mm512_castps_pd(x3);
    for (int32_t m = 1; m < gs; m++) {
      s = ins[m] + off + i;
      if (f32) {
        x0 = _mm512_add_ps(x0, _mm512_loadu_ps((const void *)s));
        x1 = _mm512_add_ps(x1, _mm512_loadu_ps((const void *)(s + 64)));
        x2 = _mm512_add_ps(x2, _mm512_loadu_ps((const void *)(s + 128)));
        x3 = _mm512_add_ps(x3, _mm512_loadu_ps((const void *)(s + 192)));
      } else {
        y0 = _mm512_add_pd(y0, _mm512_loadu_pd((const void *)s));
        y1 = _mm512_add_pd(y1, _mm512_loadu_pd((const void *)(s + 64)));
        y2 = _mm512_add_pd(y2, _mm512_loadu_pd((const void *)(s + 128)));
        y3 = _mm512_add_pd(y3, _mm512_loadu_pd((const void *)(s + 192)));
      }
    }
    if (!f32) {
      x0 = _mm512_castpd_ps(y0), x1 = _mm512_castpd_ps(y1);
      x2 = _mm512_castpd_ps(y2), x3 = _mm512_castpd_ps(y3);
    }
    _mm512_storeu_ps((void *)(acc + i), x0);
    _mm512_storeu_ps((void *)(acc + i + 64), x1);
    _mm512_storeu_ps((void *)(acc + i + 128), x2);
    _mm512_storeu_ps((void *)(acc + i + 192), x3);
  }
  return i;
}
#endif

static int sim_fold_add(const sim_coll *k, int32_t j, char *acc,
                        const char *const *ins, int32_t gs, size_t off,
                        int64_t len) {
#ifdef SIM_HAVE_STREAM
  int f32 = k->fast[j] == sim_red_add_f32;
  if (!f32 && k->fast[j] != sim_red_add_f64) return 0;
  size_t bytes = (size_t)len * k->es[j], i = 0;
  if (sim_isa_cap() >= 2 && __builtin_cpu_supports("avx512f"))
    i = sim_fold_add_avx512(f32, acc, ins, gs, off, bytes);
  for (; i + 64 <= bytes; i += 64) {
    const char *s = ins[0] + off + i;
    __m128 x0 = _mm_loadu_ps((const float *)(const void *)s);
    __m128 x1 = _mm_loadu_ps((const float *)(const void *)(s + 16));
    __m128 x2 = _mm_loadu_ps((const float *)(const void *)(s + 32));
    __m128 x3 = _mm_loadu_ps((const float *)(const void *)(s + 48));
    __m128d y0 = _mm_castps_pd(x0), y1 = _mm_castps_pd(x1);
    __m128d y2 = _mm_castps_pd(x2), y3 = _mm_castps_pd(x3);
    for (int32_t m = 1; m < gs; m++) {
      s = ins[m] + off + i;
      if (f32) {
        x0 = _mm_add_ps(x0, _mm_loadu_ps((const float *)(const void *)s));
        x1 = _mm_add_ps(x1, _mm_loadu_ps((const float *)(const void *)(s + 16)));
        x2 = _mm_add_ps(x2, _mm_loadu_ps((const float *)(const void *)(s + 32)));
        x3 = _mm_add_ps(x3, _mm_loadu_ps((const float *)(const void *)(s + 48)));
      } else {
        y0 = _mm_add_pd(y0, _mm_loadu_pd((const double *)(const void *)s));
        y1 = _mm_add_pd(y1, _mm_loadu_pd((const double *)(const void *)(s + 16)));
        y2 = _mm_add_pd(y2, _mm_loadu_pd((const double *)(const void *)(s + 32)));
        y3 = _mm_add_pd(y3, _mm_loadu_pd((const double *)(const void *)(s + 48)));
      }
    }
    if (!f32) {
      x0 = _mm_castpd_ps(y0), x1 = _mm_castpd_ps(y1);
      x2 = _mm_castpd_ps(y2), x3 = _mm_castpd_ps(y3);
    }
    _mm_storeu_ps((float *)(void *)(acc + i), x0);
    _mm_storeu_ps((float *)(void *)(acc + i + 16), x1);
    _mm_storeu_ps((float *)(void *)(acc + i + 32), x2);
    _mm_storeu_ps((float *)(void *)(acc + i + 48), x3);
  }
  if (i < bytes) { /* the tail, a whole number of elements */
    int64_t rest = (int64_t)((bytes - i) / k->es[j]);
    memcpy(acc + i, ins[0] + off + i, bytes - i);
    for (int32_t m = 1; m < gs; m++)
      k->fast[j](acc + i, ins[m] + off + i, rest, 1);
  }
  return 1;
#else
  (void)k, (void)j, (void)acc, (void)ins, (void)gs, (void)off, (void)len;
  return 0;
#endif
}

/* outs[*][lo, hi) = fold of the members' inputs over [lo, hi), in group
 * order, a cache-sized block at a time: folded in a buffer that stays in
 * cache, then written to every output (streamed when the range is big). */
static xrt_status sim_fold_range(const sim_coll *k, int32_t j, void **vals,
                                 sim_cx *cx, const sim_cview *v,
                                 char *const *outs, int32_t nout,
                                 const char *const *ins, int64_t lo,
                                 int64_t hi) {
  size_t es = k->es[j];
  int64_t blk = (int64_t)(SIM_COLL_BLOCK / es);
  int stream = (size_t)(hi - lo) * es >= SIM_STREAM_MIN;
  _Alignas(64) char tmp[SIM_COLL_BLOCK];
  for (int64_t b = lo; b < hi; b += blk) {
    int64_t len = hi - b < blk ? hi - b : blk;
    size_t off = (size_t)b * es, bytes = (size_t)len * es;
    char *acc = stream || nout > 1 ? tmp : outs[0] + off;
    if (!sim_fold_add(k, j, acc, ins, v->gs, off, len)) {
      memcpy(acc, ins[0] + off, bytes);
      for (int32_t m = 1; m < v->gs; m++) {
        xrt_status rc = sim_coll_combine(k, j, vals, cx, acc, ins[m] + off,
                                         len);
        if (rc) return rc;
      }
    }
    for (int32_t o = 0; acc == tmp && o < nout; o++)
      if (stream) sim_copy_nt(outs[o] + off, tmp, bytes);
      else memcpy(outs[o] + off, tmp, bytes);
  }
  return XRT_OK;
}

#define SIM_COLL_MAXG 64 /* group members whose inputs are listed on the
                            stack; larger groups fold pairwise */

/* outs[*][lo, hi) of operand j reduced over the group (reads peers'
 * inputs): outs[0] alone (nout = 1), or every member's output in group
 * order (nout = gs, groups of at most SIM_COLL_MAXG). */
static xrt_status sim_reduce_slice(const sim_coll *k, int32_t j, void **vals,
                                   sim_cx *cx, const sim_cview *v,
                                   char *const *outs, int32_t nout,
                                   int64_t in_off, int64_t lo, int64_t hi) {
  const char *ins[SIM_COLL_MAXG];
  size_t es = k->es[j];
  if (v->gs <= SIM_COLL_MAXG) {
    for (int32_t m = 0; m < v->gs; m++)
      ins[m] = sim_peer_in(v, v->mem[m], j) + (size_t)in_off * es;
    return sim_fold_range(k, j, vals, cx, v, outs, nout, ins, lo, hi);
  }
  char *out = outs[0] + (size_t)lo * es;
  memcpy(out, sim_peer_in(v, v->mem[0], j) + (size_t)(in_off + lo) * es,
         (size_t)(hi - lo) * es);
  for (int32_t m = 1; m < v->gs; m++) {
    xrt_status rc = sim_coll_combine(
        k, j, vals, cx, out,
        sim_peer_in(v, v->mem[m], j) + (size_t)(in_off + lo) * es, hi - lo);
    if (rc) return rc;
  }
  return XRT_OK;
}

/* Copies the slices the other members reduced into this one's outputs
 * (the all-gather half of all_reduce, for groups too big to write every
 * member's output in one pass). */
static void sim_gather_slices(const sim_step *st, void **vals,
                              const sim_coll *k, const sim_cview *v) {
  for (int32_t j = 0; j < k->nops; j++) {
    char *out = (char *)vals[st->out[j]];
    for (int32_t m = 0; m < v->gs; m++) {
      if (m == v->me) continue;
      int64_t lo, hi;
      sim_slice(k->numel[j], v->gs, m, &lo, &hi);
      if (hi > lo)
        sim_copy_stream(out + (size_t)lo * k->es[j],
                        sim_peer_out(v, v->mem[m], j) + (size_t)lo * k->es[j],
                        (size_t)(hi - lo) * k->es[j]);
    }
  }
  sim_copy_nt_done();
}

/* Each member reduces its 1/gs slice of every operand (reading the peers'
 * inputs) and writes it into every member's output: one pass, each input
 * byte read once and each output byte written once, as a memcpy of the
 * same bytes would.  Inputs are only read in the reader's own slice, so an
 * output in place of its input would be safe.  Groups larger than
 * SIM_COLL_MAXG write their own output, then gather the others' slices. */
static xrt_status sim_run_all_reduce(const sim_step *st, void **vals,
                                     sim_cx *cx) {
  const sim_coll *k = (const sim_coll *)st->data;
  sim_cview v;
  if (cx->exe && cx->exe->xp_proc) { /* collectives across processes */
    int handled;
    xrt_status xrc = sim_xp_all_reduce(st, vals, cx, k, &handled);
    if (handled) return xrc;
  }
  xrt_status rc = sim_coll_enter(st, vals, cx, k, &v, NULL, 0);
  if (rc) return rc;
  char *outs[SIM_COLL_MAXG];
  int32_t nout = v.l && v.gs > 1 && v.gs <= SIM_COLL_MAXG ? v.gs : 1;
  for (int32_t j = 0; j < k->nops && !rc; j++) {
    int64_t lo, hi;
    sim_slice(k->numel[j], v.gs, v.me, &lo, &hi);
    outs[0] = (char *)vals[st->out[j]];
    for (int32_t m = 0; nout > 1 && m < nout; m++)
      outs[m] = sim_peer_out(&v, v.mem[m], j);
    rc = sim_reduce_slice(k, j, vals, cx, &v, outs, nout, 0, lo, hi);
  }
  sim_copy_nt_done();
  if (rc) return sim_coll_own_error(cx, &v, rc);
  if (nout > 1 || v.gs <= 1) return sim_coll_phase(cx, st, &v, 2, NULL, 0);
  if ((rc = sim_coll_phase(cx, st, &v, 2, NULL, 0))) return rc;
  sim_gather_slices(st, vals, k, &v);
  return sim_coll_phase(cx, st, &v, 3, NULL, 0);
}

/* The collective of op's operands over the replica groups of its
 * channel mode (group size to *gs unless NULL), with its reduction body
 * when body is set. */
static xrt_status sim_coll_grouped(sim_fcc *fc, const xrt_ir_op *op,
                                   int body, int32_t *gs, sim_coll **out) {
  sim_coll *k = sim_coll_new(fc, op, op->num_operands);
  int mode = 0; /* set by sim_pg_mode3 (gcc cannot see it once inlined) */
  if (!k) return XRT_RESOURCE_EXHAUSTED;
  xrt_status rc;
  if ((rc = sim_pg_mode3(fc, op, &mode)) ||
      (rc = sim_pg_groups(fc, op, k, mode, 1, gs)) ||
      (body && (rc = sim_coll_body(fc, op, k))))
    return rc;
  *out = k;
  return XRT_OK;
}

static xrt_status sim_lower_all_reduce(sim_fcc *fc, const xrt_ir_op *op,
                                       sim_step *st) {
  int32_t nops = op->num_operands;
  xrt_status rc = sim_coll_check_same_size(fc, op, nops);
  if (rc) return rc;
  sim_coll *k;
  if ((rc = sim_coll_grouped(fc, op, 1, NULL, &k))) return rc;
  st->data = k;
  st->run = sim_run_all_reduce;
  return XRT_OK;
}

/* ======================================================================
 * Collectives across processes (issue #11)
 *
 * Collectives whose groups span processes.  The core compiles an
 * executable for the launch of every process (participant_process says
 * where each logical id runs) and runs only this process's participants;
 * the others are counted as departed in the launch, and reached through
 * the core's exchange service (host->exchange, ABI 1.2).
 *
 * all_reduce is hierarchical and pipelined.  The group's members on this
 * process meet in the launch as usual.  The operand is cut in chunks of
 * SIM_XP_CHUNK bytes, numbered alike on every process.  For each chunk,
 * one local member folds it over the local members (group order) into a
 * scratch block that stays in cache, reduces that with the other
 * processes (a reduce-scatter and an all-gather between processes: each
 * process folds a 1/P piece in process order, so every process gets the
 * same bits), and streams it into every local member's output.  Memory is
 * read once and written once; the exchanges read cached bytes.  Chunks go
 * round-robin over the first S local members, S = the cores this process
 * may use (cores / processes on the host, at least 1, at most the local
 * members; XRT_SIM_XP_THREADS sets it): more threads than cores would only
 * take turns.  S may differ
 * between processes: exchanges are tagged by chunk, and each thread takes
 * its chunks in ascending order, so the lowest unfinished chunk always
 * has both sides at it and no wait can form a cycle.
 *
 * The other collectives (all_gather, reduce_scatter, all_to_all,
 * collective_permute, collective_broadcast) fetch the operands of the
 * other processes' participants (every local participant's operands go to
 * every other process in one exchange) and install them in the launch as
 * stand-in participants that have reached every phase: the collective
 * then runs unchanged, reading the stand-ins as it reads local peers, and
 * gives exactly the single-process result.  That moves every operand to
 * every process: simple and exact, not bandwidth-optimal.
 * ==================================================================== */

#define SIM_XP_MAXP 64 /* processes in one group */
/* Bytes of an all_reduce folded, exchanged and written at a time: they
 * stay in a core's L2 between the three (with the exchange's buffers). */
#define SIM_XP_CHUNK ((size_t)1 << 19)

/* ---- compile ---- */

static xrt_status sim_xp_compile(sim_exe *e, const xrt_plugin_compile_args *a,
                                 xrt_plugin_error *err) {
  if (!XRT_STRUCT_HAS(a, xrt_plugin_compile_args, process_index) ||
      !a->participant_process)
    return XRT_OK;
  int64_t n = (int64_t)e->nrep * e->npart;
  int remote = 0;
  for (int64_t i = 0; i < n; i++) {
    if (a->participant_process[i] < 0)
      return sim_fail(err, XRT_INVALID_ARGUMENT, "participant_process[%lld] "
                      "is %d", (long long)i, (int)a->participant_process[i]);
    remote |= a->participant_process[i] != a->process_index;
  }
  if (!remote) return XRT_OK; /* every participant is here */
  const xrt_plugin_host_api *h = e->cl->host;
  if (!h || !XRT_STRUCT_HAS(h, xrt_plugin_host_api, process_count) ||
      !h->exchange)
    return sim_fail(err, XRT_FAILED_PRECONDITION, "@%s runs on other "
                    "processes too, but the core offers no exchange between "
                    "processes", a->module->funcs[a->entry].name);
  int32_t *pp = (int32_t *)sim_pool_alloc(&e->pool, sizeof *pp * (size_t)n);
  if (!pp) return sim_fail(err, XRT_RESOURCE_EXHAUSTED, "out of host memory");
  memcpy(pp, a->participant_process, sizeof *pp * (size_t)n);
  e->xp_proc = pp;
  e->xp_me = a->process_index;
  return XRT_OK;
}

/* ---- launches ---- */

/* Participants of other processes never join here: they count as
 * departed, so that the last local one to leave frees the launch and
 * deadlock detection counts only local ones.  mu held or private. */
static void sim_xp_launch_init(struct sim_launch *l, const sim_exe *e) {
  l->xp_ready = 0;
  l->xp_mem = NULL;
  if (!e || !e->xp_proc || (int64_t)e->nrep * e->npart != l->n) return;
  for (int q = 0; q < l->n; q++)
    if (e->xp_proc[q] != e->xp_me) l->departed++;
}

static int sim_xp_remote(const sim_exe *e, int32_t q) {
  return q >= 0 && e->xp_proc[q] != e->xp_me;
}

static void sim_xp_launch_end(sim_client *c, struct sim_launch *l) {
  c->al.free(c->al.self, l->xp_mem);
  l->xp_mem = NULL;
  l->xp_ready = 0;
}

/* Whether collective k meets participants of different processes: a
 * group with members on two, or a permute pair across two (the same
 * answer on every process). */
static int sim_xp_spans(const sim_exe *e, const sim_coll *k) {
  for (int32_t g = 0; k->gstart && g < k->ngroups; g++)
    for (int32_t m = k->gstart[g] + 1; m < k->gstart[g + 1]; m++)
      if (e->xp_proc[k->gmem[m]] != e->xp_proc[k->gmem[k->gstart[g]]])
        return 1;
  for (int32_t q = 0; q < k->n; q++)
    if ((k->psrc && k->psrc[q] >= 0 &&
         e->xp_proc[k->psrc[q]] != e->xp_proc[q]) ||
        (k->pdst && k->pdst[q] >= 0 &&
         e->xp_proc[k->pdst[q]] != e->xp_proc[q]))
      return 1;
  return 0;
}

#define SIM_XP_MAXL 1024 /* participants of one process (its devices) */

/* The other processes' participants as stand-ins in the launch: frames
 * whose operand values point at their inputs, received from their
 * processes.  Run by the first local participant with mu released. */
typedef struct sim_xpx {
  const sim_exe *e;
  const sim_step *st;
  const sim_coll *k;
  struct sim_launch *l;
  const int32_t *loc;
  int32_t nl;
  int32_t nv;        /* frame entries a stand-in needs */
  size_t stride;     /* bytes of one stand-in: frame, then inputs */
  char *mem;
} sim_xpx;

static size_t sim_xp_up(size_t n) { return (n + 63) & ~(size_t)63; }

/* Bytes and layout of the stand-ins. */
static void sim_xp_layout(sim_xpx *x) {
  int32_t nv = 0;
  for (int32_t j = 0; j < x->st->nin; j++)
    if (x->st->in[j] + 1 > nv) nv = x->st->in[j] + 1;
  for (int32_t j = 0; j < x->st->nout; j++)
    if (x->st->out[j] + 1 > nv) nv = x->st->out[j] + 1;
  x->nv = nv;
  x->stride = sim_xp_up(sizeof(void *) * (size_t)nv);
  for (int32_t j = 0; j < x->k->nops; j++)
    x->stride += sim_xp_up((size_t)x->k->numel[j] * x->k->es[j]);
}

/* Stand-in q's frame, with its operand pointers set. */
static void **sim_xp_standin(const sim_xpx *x, int32_t q) {
  char *base = x->mem + x->stride * (size_t)q;
  void **vals = (void **)(void *)base;
  char *d = base + sim_xp_up(sizeof(void *) * (size_t)x->nv);
  for (int32_t i = 0; i < x->nv; i++) vals[i] = NULL;
  for (int32_t j = 0; j < x->k->nops; j++) {
    vals[x->st->in[j]] = d;
    d += sim_xp_up((size_t)x->k->numel[j] * x->k->es[j]);
  }
  return vals;
}

/* Sends every local participant's operands to every other process and
 * receives theirs into the stand-ins (one tagged exchange; messages
 * between two processes match in posting order). */
static xrt_status sim_xp_fetch(sim_cx *cx, sim_xpx *x, uint32_t seq) {
  const sim_exe *e = x->e;
  const sim_coll *k = x->k;
  int32_t n = k->n, procs[SIM_XP_MAXP], np = 0;
  for (int32_t q = 0; q < n; q++) {
    int32_t p = e->xp_proc[q], t = 0;
    if (p == e->xp_me) continue;
    while (t < np && procs[t] != p) t++;
    if (t == np) {
      if (np == SIM_XP_MAXP)
        return sim_coll_fail(cx, x->st->op, XRT_UNIMPLEMENTED, "more than "
                             "%d processes in one launch", SIM_XP_MAXP);
      procs[np++] = p;
    }
  }
  size_t nsend = (size_t)x->nl * (size_t)k->nops * (size_t)np;
  size_t nrecv = (size_t)(n - x->nl) * (size_t)k->nops;
  const xrt_allocator *al = &e->cl->al;
  xrt_transport_msg *m = (xrt_transport_msg *)al->alloc(
      al->self, sizeof *m * (nsend + nrecv + 1));
  if (!m)
    return sim_coll_fail(cx, x->st->op, XRT_RESOURCE_EXHAUSTED, "out of host "
                         "memory");
  size_t s = 0, r = nsend;
  for (int32_t i = 0; i < x->nl; i++) {
    const sim_part *p = &x->l->parts[x->loc[i]];
    for (int32_t j = 0; j < k->nops; j++)
      for (int32_t t = 0; t < np; t++)
        m[s++] = (xrt_transport_msg){procs[t], p->vals[p->st->in[j]],
                                     (size_t)k->numel[j] * k->es[j]};
  }
  for (int32_t q = 0; q < n; q++) {
    if (e->xp_proc[q] == e->xp_me) continue;
    void **vals = sim_xp_standin(x, q);
    for (int32_t j = 0; j < k->nops; j++)
      m[r++] = (xrt_transport_msg){e->xp_proc[q], vals[x->st->in[j]],
                                   (size_t)k->numel[j] * k->es[j]};
  }
  const xrt_plugin_host_api *h = e->cl->host;
  xrt_plugin_error e2;
  e2.message[0] = 0;
  uint64_t tag = sim_fnv(sim_fnv(sim_fnv(cx->xa->launch_id, seq), 0x5eed),
                         k->sig);
  xrt_status rc = h->exchange(h->ctx, tag, m, (int)nsend, m + nsend,
                              (int)nrecv, &e2);
  al->free(al->self, m);
  if (rc)
    sim_coll_fail(cx, x->st->op, rc, "exchange with the other processes "
                  "failed: %s", e2.message[0] ? e2.message : "?");
  return rc;
}

/* Places the stand-ins in the launch as participants that reached every
 * phase of collective seq.  mu held. */
static void sim_xp_install(sim_xpx *x, uint32_t seq) {
  for (int32_t q = 0; q < x->k->n; q++) {
    if (x->e->xp_proc[q] == x->e->xp_me) continue;
    sim_part *p = &x->l->parts[q];
    p->seq = seq;
    p->sig = x->k->sig;
    p->vals = (void **)(void *)(x->mem + x->stride * (size_t)q);
    p->st = x->st;
    p->tick = (uint64_t)seq << 8 | 0xff;
  }
  x->l->xp_mem = x->mem;
  x->l->xp_ready = (uint64_t)seq + 1;
  sim_launch_changed(x->l);
}

/* A collective (other than all_reduce, which is hierarchical) that meets
 * participants of other processes: once every local participant has
 * published it, the first one fetches the others' operands and installs
 * them as stand-ins; then the collective runs as on one process, reading
 * the stand-ins like any peer (and computing exactly what one process
 * would).  mu held; released during the exchange. */
static xrt_status sim_xp_gather(sim_cx *cx, const sim_step *st,
                                const sim_coll *k, struct sim_launch *l,
                                uint32_t seq) {
  const sim_exe *e = cx->exe;
  if (!e || !e->xp_proc || st->op->code == XRT_OP_ALL_REDUCE ||
      st->op->code == XRT_OP_COLLECTIVE_REDUCE || !sim_xp_spans(e, k))
    return XRT_OK;
  int32_t loc[SIM_XP_MAXL], nl = 0;
  for (int32_t q = 0; q < k->n && nl < SIM_XP_MAXL; q++)
    if (e->xp_proc[q] == e->xp_me) loc[nl++] = q;
  uint64_t tick = (uint64_t)seq << 8 | 1;
  xrt_status rc = sim_wait_ticks(cx, l, loc, nl, tick, st->op);
  if (rc) return rc;
  if (loc[0] != sim_proc_of(cx)) { /* wait for the first one's fetch */
    uint64_t epoch = ~(uint64_t)0;
    while (l->xp_ready != (uint64_t)seq + 1 && !rc) {
      if (l->failed) return sim_coll_peer_failed(cx, l, st->op);
      rc = sim_launch_block(cx, l, &epoch, st->op,
                            "the exchange with the other processes");
    }
    return rc;
  }
  sim_xpx x = {e, st, k, l, loc, nl, 0, 0, NULL};
  sim_xp_layout(&x);
  const xrt_allocator *al = &e->cl->al;
  /* Every local participant has moved on from the previous collective. */
  al->free(al->self, l->xp_mem);
  l->xp_mem = NULL;
  pthread_mutex_unlock(&l->mu);
  x.mem = (char *)al->alloc(al->self, x.stride * (size_t)k->n + 64);
  if (!x.mem)
    rc = sim_coll_fail(cx, st->op, XRT_RESOURCE_EXHAUSTED, "out of host "
                       "memory for the other processes' operands");
  else rc = sim_xp_fetch(cx, &x, seq);
  pthread_mutex_lock(&l->mu);
  if (rc) {
    al->free(al->self, x.mem);
    return sim_coll_self_fail(cx, l, rc);
  }
  sim_xp_install(&x, seq);
  return XRT_OK;
}

/* ---- a group across processes ---- */

typedef struct sim_xpg {
  int32_t g;                         /* the group */
  int32_t loc[SIM_COLL_MAXG], nl, li; /* members here (group order), me */
  int32_t procs[SIM_XP_MAXP], np, pi; /* its processes, ascending; mine */
  int32_t slices;                    /* local members that take chunks */
} sim_xpg;

/* The group of this participant as seen from its process; 0 when it has
 * no member elsewhere (the plain path runs it). */
static int sim_xp_group(const sim_cx *cx, const sim_coll *k, sim_xpg *x,
                        xrt_status *rc) {
  const sim_exe *e = cx->exe;
  int32_t proc = sim_proc_of(cx);
  *rc = XRT_OK;
  memset(x, 0, sizeof *x);
  x->g = k->pgroup ? k->pgroup[proc] : -1;
  if (x->g < 0) return 0;
  const int32_t *mem = k->gmem + k->gstart[x->g];
  int32_t gs = k->gstart[x->g + 1] - k->gstart[x->g];
  int remote = 0;
  for (int32_t m = 0; m < gs; m++) remote |= sim_xp_remote(e, mem[m]);
  if (!remote) return 0;
  for (int32_t m = 0; m < gs && !*rc; m++) {
    int32_t p = e->xp_proc[mem[m]], t = 0;
    if (p == e->xp_me) {
      if (x->nl == SIM_COLL_MAXG) *rc = XRT_UNIMPLEMENTED;
      else {
        if (mem[m] == proc) x->li = x->nl;
        x->loc[x->nl++] = mem[m];
      }
    }
    while (t < x->np && x->procs[t] < p) t++;
    if (t < x->np && x->procs[t] == p) continue;
    if (x->np == SIM_XP_MAXP) {
      *rc = XRT_UNIMPLEMENTED;
      break;
    }
    memmove(x->procs + t + 1, x->procs + t, sizeof *x->procs * (size_t)(x->np - t));
    x->procs[t] = p;
    x->np++;
  }
  for (int32_t t = 0; t < x->np; t++)
    if (x->procs[t] == e->xp_me) x->pi = t;
  x->slices = x->nl < e->cl->xp_threads ? x->nl : e->cl->xp_threads;
  return 1;
}

/* One exchange of the collective (phase 1 or 2 of chunk ci of operand
 * j); its failure becomes the op's. */
static xrt_status sim_xp_exchange(sim_cx *cx, const sim_step *st,
                                  const sim_cview *v, const sim_xpg *x,
                                  int32_t j, int64_t ci, int phase,
                                  const xrt_transport_msg *sends,
                                  const xrt_transport_msg *recvs, int n) {
  const xrt_plugin_host_api *h = cx->exe->cl->host;
  uint64_t tag = sim_fnv(sim_fnv(sim_fnv(sim_fnv(sim_fnv(
      cx->xa->launch_id, v->seq), x->g), (uint64_t)ci), j), phase);
  xrt_plugin_error e2;
  e2.message[0] = 0;
  xrt_status rc = h->exchange(h->ctx, tag, sends, n, recvs, n, &e2);
  if (rc)
    sim_coll_fail(cx, st->op, rc, "exchange with the other processes failed: "
                  "%s", e2.message[0] ? e2.message : "?");
  return rc;
}

/* Piece t of P of a slice of L elements. */
static void sim_xp_piece(int64_t L, int32_t P, int32_t t, int64_t *lo,
                         int64_t *len) {
  *lo = L * t / P;
  *len = L * (t + 1) / P - *lo;
}

/* part[0, L) holds this process's fold of chunk ci; afterwards, the
 * fold over every process (reduce-scatter, then all-gather). */
static xrt_status sim_xp_reduce_procs(sim_cx *cx, const sim_step *st,
                                      void **vals, const sim_coll *k,
                                      const sim_cview *v, const sim_xpg *x,
                                      int32_t j, int64_t ci, char *part,
                                      int64_t L, char *rbuf) {
  size_t es = k->es[j];
  xrt_transport_msg sends[SIM_XP_MAXP], recvs[SIM_XP_MAXP];
  int64_t mylo, mylen;
  sim_xp_piece(L, x->np, x->pi, &mylo, &mylen);
  int n = 0;
  for (int32_t t = 0; t < x->np; t++) {
    if (t == x->pi) continue;
    int64_t lo, len;
    sim_xp_piece(L, x->np, t, &lo, &len);
    sends[n] = (xrt_transport_msg){x->procs[t], part + (size_t)lo * es,
                                   (size_t)len * es};
    recvs[n] = (xrt_transport_msg){x->procs[t],
                                   rbuf + (size_t)t * (size_t)mylen * es,
                                   (size_t)mylen * es};
    n++;
  }
  xrt_status rc = sim_xp_exchange(cx, st, v, x, j, ci, 1, sends, recvs, n);
  if (rc) return rc;
  /* Fold the pieces in process order (the same on every process). */
  char *acc = rbuf + (size_t)x->np * (size_t)mylen * es, *mine =
      part + (size_t)mylo * es;
  memcpy(acc, x->pi == 0 ? mine : rbuf, (size_t)mylen * es);
  for (int32_t t = 1; t < x->np && !rc; t++)
    rc = sim_coll_combine(k, j, vals, cx, acc,
                          t == x->pi ? mine
                                     : rbuf + (size_t)t * (size_t)mylen * es,
                          mylen);
  if (rc) return rc;
  memcpy(mine, acc, (size_t)mylen * es);
  n = 0;
  for (int32_t t = 0; t < x->np; t++) {
    if (t == x->pi) continue;
    int64_t lo, len;
    sim_xp_piece(L, x->np, t, &lo, &len);
    sends[n] = (xrt_transport_msg){x->procs[t], mine, (size_t)mylen * es};
    recvs[n] = (xrt_transport_msg){x->procs[t], part + (size_t)lo * es,
                                   (size_t)len * es};
    n++;
  }
  return sim_xp_exchange(cx, st, v, x, j, ci, 2, sends, recvs, n);
}

/* part[0, n) = the fold of the local members' inputs over [at, at + n)
 * of operand j, in group order. */
static xrt_status sim_xp_fold_chunk(const sim_coll *k, int32_t j,
                                    void **vals, sim_cx *cx,
                                    const sim_cview *v, const sim_xpg *x,
                                    char *part, int64_t at, int64_t n) {
  /* A chunk is below sim_fold_range's streaming size, so the fold lands
   * in part through the cache, where the exchange reads it next. */
  _Static_assert(SIM_XP_CHUNK < SIM_STREAM_MIN, "chunks fold into cache");
  size_t off = (size_t)at * k->es[j];
  const char *ins[SIM_COLL_MAXG];
  for (int32_t m = 0; m < x->nl; m++)
    ins[m] = sim_peer_in(v, x->loc[m], j) + off;
  sim_cview lv = *v;
  lv.gs = x->nl;
  char *outs[1] = {part};
  return sim_fold_range(k, j, vals, cx, &lv, outs, 1, ins, 0, n);
}

/* Operand j's chunks x->li, x->li + S, ... (S = x->slices): each folded
 * here, reduced across processes and written to every local output. */
static xrt_status sim_xp_chunks(sim_cx *cx, const sim_step *st, void **vals,
                                const sim_coll *k, const sim_cview *v,
                                const sim_xpg *x, int32_t j) {
  size_t es = k->es[j];
  int64_t N = k->numel[j], C = (int64_t)(SIM_XP_CHUNK / es);
  if (N <= (int64_t)x->li * C) return XRT_OK; /* no chunk for this member */
  int64_t C0 = N < C ? N : C, piece = C0 / x->np + 1;
  size_t pbytes = ((size_t)C0 * es + 63) & ~(size_t)63;
  size_t rbytes = ((size_t)x->np + 1) * (size_t)piece * es;
  /* Scratch from the device's own memory: its block cache hands back the
   * same (already touched) pages call after call. */
  sim_client *cl = cx->exe->cl;
  void *mem = NULL;
  xrt_plugin_error e2;
  e2.message[0] = 0;
  if (sim_buffer_alloc(cl, cx->xa->device, pbytes + rbytes, &mem, &e2))
    return sim_coll_fail(cx, st->op, XRT_RESOURCE_EXHAUSTED, "no scratch "
                         "for the exchange between processes: %s",
                         e2.message);
  char *part = (char *)mem, *rbuf = part + pbytes;
  xrt_status rc = XRT_OK;
  for (int64_t ci = x->li; ci * C < N && !rc; ci += x->slices) {
    int64_t at = ci * C, n = N - at < C ? N - at : C;
    rc = sim_xp_fold_chunk(k, j, vals, cx, v, x, part, at, n);
    if (!rc) rc = sim_xp_reduce_procs(cx, st, vals, k, v, x, j, ci, part, n,
                                      rbuf);
    for (int32_t m = 0; m < x->nl && !rc; m++)
      sim_copy_nt(sim_peer_out(v, x->loc[m], j) + (size_t)at * es, part,
                  (size_t)n * es);
  }
  sim_buffer_free(cl, cx->xa->device, mem);
  return rc;
}

/* all_reduce over a group with members on other processes; *handled 0:
 * it has none (the plain path runs it). */
static xrt_status sim_xp_all_reduce(const sim_step *st, void **vals,
                                    sim_cx *cx, const sim_coll *k,
                                    int *handled) {
  sim_xpg x;
  xrt_status rc;
  *handled = sim_xp_group(cx, k, &x, &rc);
  if (!*handled) return XRT_OK;
  if (rc)
    return sim_coll_fail(cx, st->op, rc, "a group with more than %d "
                         "members on one process or %d processes is not "
                         "supported across processes", SIM_COLL_MAXG,
                         SIM_XP_MAXP);
  sim_cview v;
  if ((rc = sim_coll_enter(st, vals, cx, k, &v, x.loc, x.nl))) return rc;
  for (int32_t j = 0; j < k->nops && !rc && x.li < x.slices; j++)
    rc = sim_xp_chunks(cx, st, vals, k, &v, &x, j);
  sim_copy_nt_done();
  if (rc) return sim_coll_own_error(cx, &v, rc);
  return sim_coll_phase(cx, st, &v, 2, x.loc, x.nl);
}

/* ---- reduce_scatter ---- */

/* Each member reduces its block of the scatter dimension over the group. */
static xrt_status sim_run_reduce_scatter(const sim_step *st, void **vals,
                                         sim_cx *cx) {
  const sim_coll *k = (const sim_coll *)st->data;
  sim_cview v;
  xrt_status rc = sim_coll_enter(st, vals, cx, k, &v, NULL, 0);
  if (rc) return rc;
  for (int32_t j = 0; j < k->nops && !rc; j++) {
    int64_t blk = k->inner[j]; /* result elements per outer index */
    char *out = (char *)vals[st->out[j]];
    for (int64_t o = 0; o < k->outer[j] && !rc; o++)
    {
      char *dst = out + (size_t)(o * blk) * k->es[j];
      rc = sim_reduce_slice(k, j, vals, cx, &v, &dst, 1,
                            (o * v.gs + v.me) * blk, 0, blk);
    }
  }
  if (rc) return sim_coll_own_error(cx, &v, rc);
  return sim_coll_phase(cx, st, &v, 2, NULL, 0);
}

/* Checks that each result is its operand with dimension d divided by
 * (reduce_scatter) or times (gather) the group size gs, and sets the
 * operand's outer count and block (the smaller side's dims from d on). */
static xrt_status sim_coll_blocks(sim_fcc *fc, const xrt_ir_op *op,
                                  sim_coll *k, int64_t d, int32_t gs,
                                  int gather) {
  int64_t *outer = (int64_t *)(uintptr_t)k->outer;
  int64_t *inner = (int64_t *)(uintptr_t)k->inner;
  for (int32_t j = 0; j < k->nops; j++) {
    const xrt_shape *in = sim_shape(fc, op->operands[j]);
    const xrt_shape *out = sim_shape(fc, op->results[j]);
    const xrt_shape *big = gather ? out : in, *small = gather ? in : out;
    for (int32_t i = 0; i < in->rank; i++)
      if (small->dims[i] * (i == d ? gs : 1) != big->dims[i])
        return sim_fail_op(fc->cc->err, op, XRT_INVALID_ARGUMENT, "%s: "
                           "result %d must be operand %d with dimension %lld "
                           "%s the group size %d", op->name, (int)j, (int)j,
                           (long long)d, gather ? "times" : "divided by",
                           (int)gs);
    outer[j] = sim_dims_prod(in, 0, (int32_t)d);
    inner[j] = sim_dims_prod(small, (int32_t)d, small->rank); /* block */
  }
  return XRT_OK;
}

static xrt_status sim_lower_reduce_scatter(sim_fcc *fc, const xrt_ir_op *op,
                                           sim_step *st) {
  int32_t nops = op->num_operands, gs;
  int64_t d;
  xrt_status rc = sim_coll_check_values(fc, op, nops);
  if (rc || (rc = sim_coll_dim(fc, op, "scatter_dimension", &d))) return rc;
  sim_coll *k;
  if ((rc = sim_coll_grouped(fc, op, 1, &gs, &k))) return rc;
  if ((rc = sim_coll_blocks(fc, op, k, d, gs, 0))) return rc;
  st->data = k;
  st->run = sim_run_reduce_scatter;
  return XRT_OK;
}

/* ---- all_gather ---- */

static xrt_status sim_run_all_gather(const sim_step *st, void **vals,
                                     sim_cx *cx) {
  const sim_coll *k = (const sim_coll *)st->data;
  sim_cview v;
  xrt_status rc = sim_coll_enter(st, vals, cx, k, &v, NULL, 0);
  if (rc) return rc;
  for (int32_t j = 0; j < k->nops; j++) {
    size_t chunk = (size_t)k->inner[j] * k->es[j];
    char *out = (char *)vals[st->out[j]];
    for (int32_t m = 0; m < v.gs; m++) {
      const char *in = sim_peer_in(&v, v.mem[m], j);
      for (int64_t o = 0; o < k->outer[j]; o++)
        memcpy(out + ((size_t)o * (size_t)v.gs + (size_t)m) * chunk,
               in + (size_t)o * chunk, chunk);
    }
  }
  return sim_coll_phase(cx, st, &v, 2, NULL, 0);
}

static xrt_status sim_lower_all_gather(sim_fcc *fc, const xrt_ir_op *op,
                                       sim_step *st) {
  int32_t nops = op->num_operands, gs;
  int64_t d;
  xrt_status rc = sim_coll_check_values(fc, op, nops);
  if (rc || (rc = sim_coll_dim(fc, op, "all_gather_dim", &d))) return rc;
  sim_coll *k;
  if ((rc = sim_coll_grouped(fc, op, 0, &gs, &k))) return rc;
  if ((rc = sim_coll_blocks(fc, op, k, d, gs, 1))) return rc;
  st->data = k;
  st->run = sim_run_all_gather;
  return XRT_OK;
}

/* ---- all_to_all ---- */

/* Copies block b (rank r, element size es) from src at offsets so (shape
 * ss) into dst at offsets do (shape ds). */
static void sim_block_copy(char *dst, const int64_t *ds, const int64_t *dof,
                           const char *src, const int64_t *ss,
                           const int64_t *sof, const int64_t *b, int32_t r,
                           size_t es) {
  int64_t dstr[XRT_MAX_RANK], sstr[XRT_MAX_RANK], idx[XRT_MAX_RANK];
  int64_t da = 1, sa = 1, total = 1;
  for (int32_t i = r - 1; i >= 0; i--) {
    dstr[i] = da, sstr[i] = sa;
    da *= ds[i], sa *= ss[i];
    total *= b[i];
  }
  if (total == 0) return;
  if (r == 0) {
    memcpy(dst, src, es);
    return;
  }
  memset(idx, 0, sizeof idx);
  size_t run = (size_t)b[r - 1] * es;
  for (;;) {
    int64_t d = 0, s = 0;
    for (int32_t i = 0; i < r; i++) {
      d += (dof[i] + (i == r - 1 ? 0 : idx[i])) * dstr[i];
      s += (sof[i] + (i == r - 1 ? 0 : idx[i])) * sstr[i];
    }
    memcpy(dst + (size_t)d * es, src + (size_t)s * es, run);
    int32_t i = r - 2;
    for (; i >= 0; i--) {
      if (++idx[i] < b[i]) break;
      idx[i] = 0;
    }
    if (i < 0) return;
  }
}

static xrt_status sim_run_all_to_all(const sim_step *st, void **vals,
                                     sim_cx *cx) {
  const sim_coll *k = (const sim_coll *)st->data;
  sim_cview v;
  xrt_status rc = sim_coll_enter(st, vals, cx, k, &v, NULL, 0);
  if (rc) return rc;
  int32_t r = k->rank;
  for (int32_t j = 0; j < k->nops; j++) {
    const int64_t *ss = k->shapes + (size_t)j * 2 * XRT_MAX_RANK;
    const int64_t *ds = ss + XRT_MAX_RANK;
    int64_t b[XRT_MAX_RANK], so[XRT_MAX_RANK], dof[XRT_MAX_RANK];
    for (int32_t i = 0; i < r; i++) b[i] = ss[i], so[i] = dof[i] = 0;
    b[k->sdim] = ss[k->sdim] / v.gs;
    so[k->sdim] = v.me * b[k->sdim];
    for (int32_t m = 0; m < v.gs; m++) {
      dof[k->cdim] = m * b[k->cdim];
      sim_block_copy((char *)vals[st->out[j]], ds, dof,
                     sim_peer_in(&v, v.mem[m], j), ss, so, b, r, k->es[j]);
    }
  }
  return sim_coll_phase(cx, st, &v, 2, NULL, 0);
}

static xrt_status sim_lower_all_to_all(sim_fcc *fc, const xrt_ir_op *op,
                                       sim_step *st) {
  int32_t nops = op->num_operands, gs;
  int64_t sd, cd, count = 0;
  xrt_status rc = sim_coll_check_values(fc, op, nops);
  if (rc || (rc = sim_coll_dim(fc, op, "split_dimension", &sd)) ||
      (rc = sim_coll_dim(fc, op, "concat_dimension", &cd)) ||
      (rc = sim_int_attr(fc, op, "split_count", &count)))
    return rc;
  sim_coll *k = sim_coll_new(fc, op, nops);
  if (!k) return XRT_RESOURCE_EXHAUSTED;
  int mode = sim_channel_id(op) > 0 ? SIM_PG_PARTITION : SIM_PG_REPLICA;
  if ((rc = sim_pg_groups(fc, op, k, mode, 1, &gs))) return rc;
  if (count != gs)
    return sim_fail_op(fc->cc->err, op, XRT_INVALID_ARGUMENT, "%s: "
                       "split_count %lld must equal the group size %d",
                       op->name, (long long)count, (int)gs);
  int64_t *shapes = (int64_t *)sim_palloc(
      fc, sizeof *shapes * 2 * XRT_MAX_RANK * (size_t)nops);
  if (!shapes) return XRT_RESOURCE_EXHAUSTED;
  k->rank = sim_shape(fc, op->operands[0])->rank;
  for (int32_t j = 0; j < nops; j++) {
    const xrt_shape *in = sim_shape(fc, op->operands[j]);
    const xrt_shape *out = sim_shape(fc, op->results[j]);
    if (in->rank != k->rank || in->dims[sd] % gs != 0)
      return sim_fail_op(fc->cc->err, op, XRT_INVALID_ARGUMENT, "%s: operand "
                         "%d's dimension %lld must divide by split_count %d "
                         "(and every operand have the same rank)", op->name,
                         (int)j, (long long)sd, (int)gs);
    for (int32_t i = 0; i < in->rank; i++) {
      int64_t want = in->dims[i];
      if (i == sd) want /= gs;
      if (i == cd) want *= gs;
      if (out->dims[i] != want)
        return sim_fail_op(fc->cc->err, op, XRT_INVALID_ARGUMENT, "%s: result "
                           "%d has dimension %d of size %lld, expected %lld",
                           op->name, (int)j, (int)i, (long long)out->dims[i],
                           (long long)want);
      shapes[(size_t)j * 2 * XRT_MAX_RANK + (size_t)i] = in->dims[i];
      shapes[(size_t)j * 2 * XRT_MAX_RANK + XRT_MAX_RANK + (size_t)i] =
          out->dims[i];
    }
  }
  k->shapes = shapes;
  k->sdim = (int32_t)sd;
  k->cdim = (int32_t)cd;
  k->sig = sim_fnv(sim_fnv(k->sig, sd), cd);
  st->data = k;
  st->run = sim_run_all_to_all;
  return XRT_OK;
}

/* ---- collective_permute ---- */

/* Pairwise: wait for the source to publish, copy, then wait for the
 * target to have read this participant's operand. */
static xrt_status sim_run_collective_permute(const sim_step *st, void **vals,
                                             sim_cx *cx) {
  const sim_coll *k = (const sim_coll *)st->data;
  sim_cview v;
  int32_t proc = sim_proc_of(cx);
  int32_t src = k->psrc[proc], dst = k->pdst[proc];
  xrt_status rc = sim_coll_enter(st, vals, cx, k, &v, &src, src >= 0);
  if (rc) return rc;
  for (int32_t j = 0; j < k->nops; j++) {
    size_t bytes = (size_t)k->numel[j] * k->es[j];
    if (src < 0) memset(vals[st->out[j]], 0, bytes);
    else if (bytes) memcpy(vals[st->out[j]], sim_peer_in(&v, src, j), bytes);
  }
  return sim_coll_phase(cx, st, &v, 2, &dst, dst >= 0);
}

static xrt_status sim_lower_collective_permute(sim_fcc *fc,
                                               const xrt_ir_op *op,
                                               sim_step *st) {
  int32_t nops = op->num_operands;
  xrt_status rc = sim_coll_check_same_size(fc, op, nops);
  if (rc) return rc;
  sim_coll *k = sim_coll_new(fc, op, nops);
  if (!k) return XRT_RESOURCE_EXHAUSTED;
  int mode = sim_channel_id(op) > 0 ? SIM_PG_PARTITION : SIM_PG_REPLICA;
  const int64_t *ids;
  int64_t nrows, w;
  if ((rc = sim_pg_rows(fc, op, "source_target_pairs", &ids, &nrows, &w)))
    return rc;
  if (nrows > 0 && w != 2)
    return sim_fail_op(fc->cc->err, op, XRT_INVALID_ARGUMENT, "%s: "
                       "source_target_pairs must be a Nx2 tensor", op->name);
  int32_t bound = sim_pg_bound(k, mode);
  if ((rc = sim_pg_check(fc, op, "source_target_pairs", ids, nrows * w, bound,
                         mode, 0, 1)))
    return rc;
  int32_t *psrc = (int32_t *)sim_palloc(fc, sizeof *psrc * (size_t)k->n);
  int32_t *pdst = (int32_t *)sim_palloc(fc, sizeof *pdst * (size_t)k->n);
  if (!psrc || !pdst) return XRT_RESOURCE_EXHAUSTED;
  for (int32_t p = 0; p < k->n; p++) psrc[p] = pdst[p] = -1;
  int32_t outer = mode == SIM_PG_REPLICA ? k->npart : k->nrep;
  for (int64_t i = 0; i < nrows; i++)
    for (int32_t o = 0; o < outer; o++) {
      int32_t s = (int32_t)ids[2 * i], t = (int32_t)ids[2 * i + 1];
      int32_t ps = mode == SIM_PG_REPLICA ? s * k->npart + o : o * k->npart + s;
      int32_t pt = mode == SIM_PG_REPLICA ? t * k->npart + o : o * k->npart + t;
      psrc[pt] = ps;
      pdst[ps] = pt;
      k->sig = sim_fnv(sim_fnv(k->sig, ps), pt);
    }
  k->psrc = psrc;
  k->pdst = pdst;
  st->data = k;
  st->run = sim_run_collective_permute;
  return XRT_OK;
}

/* ---- collective_broadcast ---- */

static xrt_status sim_run_collective_broadcast(const sim_step *st,
                                               void **vals, sim_cx *cx) {
  const sim_coll *k = (const sim_coll *)st->data;
  sim_cview v;
  xrt_status rc = sim_coll_enter(st, vals, cx, k, &v, NULL, 0);
  if (rc) return rc;
  int32_t nd = k->root_operand >= 0 ? (int32_t)k->root_operand : k->nops;
  for (int32_t j = 0; j < nd; j++) {
    size_t bytes = (size_t)k->numel[j] * k->es[j];
    if (v.gs == 0) {
      memset(vals[st->out[j]], 0, bytes);
      continue;
    }
    int32_t root = 0;
    if (k->root_operand >= 0) { /* has_dynamic_root: my root operand */
      const int32_t *ri = (const int32_t *)vals[st->in[k->root_operand]];
      root = ri[j];
      if (root < 0 || root >= v.gs) {
        rc = sim_coll_fail(cx, st->op, XRT_OUT_OF_RANGE, "root %d of "
                           "operand %d is not an index of the group of %d",
                           (int)root, (int)j, (int)v.gs);
        return sim_coll_own_error(cx, &v, rc);
      }
    }
    if (bytes)
      memcpy(vals[st->out[j]], sim_peer_in(&v, v.mem[root], j), bytes);
  }
  return sim_coll_phase(cx, st, &v, 2, NULL, 0);
}

static xrt_status sim_lower_collective_broadcast(sim_fcc *fc,
                                                 const xrt_ir_op *op,
                                                 sim_step *st) {
  int32_t nops = op->num_operands, nd = nops;
  int dyn = sim_flag(op, "has_dynamic_root");
  if (dyn) { /* data operands, then one i32 root index per data operand */
    nd = nops - 1;
    const xrt_shape *r = nd >= 1 ? sim_shape(fc, op->operands[nd]) : NULL;
    if (!r || r->dtype != XRT_S32 || sim_numel(r) != nd ||
        op->num_results != nd)
      return sim_fail_op(fc->cc->err, op, XRT_INVALID_ARGUMENT, "%s: "
                         "has_dynamic_root takes the data operands and a "
                         "tensor<%dxi32> of roots", op->name, (int)nd);
  }
  xrt_status rc = sim_coll_check_same_size(fc, op, nd);
  if (rc) return rc;
  sim_coll *k = sim_coll_new(fc, op, nops);
  if (!k) return XRT_RESOURCE_EXHAUSTED;
  int mode = sim_channel_id(op) > 0 ? SIM_PG_PARTITION : SIM_PG_REPLICA;
  if ((rc = sim_pg_groups(fc, op, k, mode, 0, NULL))) return rc;
  if (dyn) k->root_operand = nd;
  st->data = k;
  st->run = sim_run_collective_broadcast;
  return XRT_OK;
}

/* ---- replica_id, partition_id ---- */

static xrt_status sim_run_replica_id(const sim_step *st, void **vals,
                                     sim_cx *cx) {
  uint32_t id = 0;
  if (cx->xa)
    id = (uint32_t)(st->op->code == XRT_OP_PARTITION_ID ? cx->xa->partition
                                                        : cx->xa->replica);
  memcpy(vals[st->out[0]], &id, sizeof id);
  return XRT_OK;
}

static xrt_status sim_lower_process_id(sim_fcc *fc, const xrt_ir_op *op,
                                       sim_step *st) {
  const xrt_shape *s = op->num_results == 1 ? sim_shape(fc, op->results[0])
                                            : NULL;
  if (!s || s->rank != 0 || s->dtype != XRT_U32)
    return sim_fail_op(fc->cc->err, op, XRT_INVALID_ARGUMENT, "%s must "
                       "return tensor<ui32>", op->name);
  st->run = sim_run_replica_id;
  return XRT_OK;
}

/* ======================================================================
 * send / recv between devices of a launch (is_host_transfer = false)
 *
 * A send copies its tensors into a message queued on the launch; a recv
 * takes the oldest message of its channel, waiting for one.
 * ==================================================================== */


typedef struct sim_chan {
  int64_t channel;
  int32_t n;           /* tensors (tokens carry nothing) */
  const int32_t *ids;  /* their value ids */
  const size_t *bytes; /* their sizes */
  size_t total;
} sim_chan;

static xrt_status sim_run_d2d_send(const sim_step *st, void **vals,
                                   sim_cx *cx) {
  const sim_chan *ch = (const sim_chan *)st->data;
  struct sim_launch *l = cx->launch;
  const sim_client *c = cx->exe->cl;
  if (!l)
    return sim_fail_op(cx->err, st->op, XRT_INTERNAL, "send outside a launch");
  sim_msg *m = (sim_msg *)c->al.alloc(c->al.self, sizeof *m + ch->total + 1);
  if (!m)
    return sim_fail_op(cx->err, st->op, XRT_RESOURCE_EXHAUSTED, "send: out "
                       "of host memory for %zu bytes", ch->total);
  m->next = NULL;
  m->channel = ch->channel;
  m->bytes = ch->total;
  char *p = (char *)(m + 1);
  for (int32_t i = 0; i < ch->n; i++) {
    if (ch->bytes[i]) memcpy(p, vals[ch->ids[i]], ch->bytes[i]);
    p += ch->bytes[i];
  }
  pthread_mutex_lock(&l->mu);
  sim_msg **pp = &l->msgs;
  while (*pp) pp = &(*pp)->next;
  *pp = m;
  sim_launch_changed(l);
  pthread_mutex_unlock(&l->mu);
  return XRT_OK;
}

/* Takes the oldest message of the channel, waiting for a send.  mu held. */
static xrt_status sim_recv_take(sim_cx *cx, struct sim_launch *l,
                                const sim_step *st, const sim_chan *ch,
                                sim_msg **out) {
  uint64_t epoch = ~(uint64_t)0;
  char what[64];
  snprintf(what, sizeof what, "a send on channel %lld",
           (long long)ch->channel);
  for (;;) {
    if (l->failed) return sim_coll_peer_failed(cx, l, st->op);
    for (sim_msg **pp = &l->msgs; *pp; pp = &(*pp)->next)
      if ((*pp)->channel == ch->channel) {
        *out = *pp;
        *pp = (*pp)->next;
        return XRT_OK;
      }
    xrt_status rc = sim_launch_block(cx, l, &epoch, st->op, what);
    if (rc) return rc;
  }
}

static xrt_status sim_run_d2d_recv(const sim_step *st, void **vals,
                                   sim_cx *cx) {
  const sim_chan *ch = (const sim_chan *)st->data;
  struct sim_launch *l = cx->launch;
  const sim_client *c = cx->exe->cl;
  if (!l)
    return sim_fail_op(cx->err, st->op, XRT_INTERNAL, "recv outside a launch");
  sim_msg *m = NULL;
  pthread_mutex_lock(&l->mu);
  xrt_status rc = sim_recv_take(cx, l, st, ch, &m);
  pthread_mutex_unlock(&l->mu);
  if (rc) return rc;
  if (m->bytes != ch->total) {
    size_t got = m->bytes;
    c->al.free(c->al.self, m);
    rc = sim_fail_op(cx->err, st->op, XRT_INVALID_ARGUMENT, "recv on channel "
                     "%lld expects %zu bytes, the send had %zu",
                     (long long)ch->channel, ch->total, got);
    pthread_mutex_lock(&l->mu);
    sim_coll_self_fail(cx, l, rc);
    pthread_mutex_unlock(&l->mu);
    return rc;
  }
  const char *p = (const char *)(m + 1);
  for (int32_t i = 0; i < ch->n; i++) {
    if (ch->bytes[i]) memcpy(vals[ch->ids[i]], p, ch->bytes[i]);
    p += ch->bytes[i];
  }
  c->al.free(c->al.self, m);
  return XRT_OK;
}

/* The tensor values among ids[0..n) and their sizes. */
static xrt_status sim_chan_plan(sim_fcc *fc, const xrt_ir_op *op,
                                const int32_t *ids, int32_t n,
                                sim_step *st) {
  sim_chan *ch = (sim_chan *)sim_palloc(fc, sizeof *ch);
  int32_t *t = (int32_t *)sim_palloc(fc, sizeof *t * (size_t)(n + 1));
  size_t *b = (size_t *)sim_palloc(fc, sizeof *b * (size_t)(n + 1));
  if (!ch || !t || !b) return XRT_RESOURCE_EXHAUSTED;
  ch->channel = sim_channel_id(op);
  for (int32_t i = 0; i < n; i++) {
    const xrt_ir_type *ty = &fc->f->value_types[ids[i]];
    if (ty->kind == XRT_TYPE_TOKEN) continue;
    if (ty->kind != XRT_TYPE_TENSOR)
      return sim_fail_op(fc->cc->err, op, XRT_UNIMPLEMENTED, "%s: tuple "
                         "values cannot be sent", op->name);
    t[ch->n] = ids[i];
    b[ch->n] = sim_bytes(&ty->shape);
    ch->total += b[ch->n++];
  }
  ch->ids = t;
  ch->bytes = b;
  st->data = ch;
  fc->cc->exe->has_coll = 1;
  return XRT_OK;
}

/* send/recv: to the host (is_host_transfer) or to a device of the launch. */
static xrt_status sim_lower_send_any(sim_fcc *fc, const xrt_ir_op *op,
                                     sim_step *st) {
  if (sim_flag(op, "is_host_transfer")) return sim_lower_send(fc, op, st);
  xrt_status rc = sim_chan_plan(fc, op, op->operands, op->num_operands, st);
  if (!rc) st->run = sim_run_d2d_send;
  return rc;
}

static xrt_status sim_lower_recv_any(sim_fcc *fc, const xrt_ir_op *op,
                                     sim_step *st) {
  if (sim_flag(op, "is_host_transfer")) return sim_lower_recv(fc, op, st);
  xrt_status rc = sim_chan_plan(fc, op, op->results, op->num_results, st);
  if (!rc) st->run = sim_run_d2d_recv;
  return rc;
}

/* ======================================================================
 * Fault injection
 * ==================================================================== */

/* Names the kernel it stops at (op and location), so that a dependent's
 * error says which device and which operation failed. */
static xrt_status sim_fault_hit(sim_cx *cx, const sim_step *s) {
  char where[320] = "a kernel";
  if (s && s->op) {
    const char *name = s->op->name;
    if (strncmp(name, "stablehlo.", 10) == 0) name += 10;
    int n = snprintf(where, sizeof where, "the %s kernel at ", name);
    if (n > 0 && (size_t)n < sizeof where)
      sim_loc(s->op, where + n, sizeof where - (size_t)n);
    size_t len = strlen(where);
    if (len >= 2 && where[len - 2] == ':') where[len - 2] = 0; /* "l:c: " */
  }
  return sim_fail(cx->err, XRT_INTERNAL, "device %d: injected fault after "
                  "%lld steps of @%s, in %s", cx->xa ? cx->xa->device : 0,
                  (long long)cx->fault_after,
                  cx->exe->m->funcs[cx->exe->entry].name, where);
}

static xrt_status sim_inject_fault(void *client, int device,
                                   int64_t after_steps,
                                   xrt_plugin_error *err) {
  sim_client *c = (sim_client *)client;
  xrt_status rc = sim_check_device(c, device, err);
  if (rc) return rc;
  if (after_steps < 0 || after_steps == INT64_MAX)
    return sim_fail(err, XRT_INVALID_ARGUMENT, "after_steps must be >= 0, "
                    "not %lld", (long long)after_steps);
  atomic_store(&c->dev[device].fault, after_steps + 1);
  return XRT_OK;
}

/* The armed fault of the device, disarmed (one-shot); -1: none. */
static int64_t sim_fault_take(sim_client *c, int device) {
  _Atomic int64_t *f = &c->dev[device].fault;
  if (atomic_load_explicit(f, memory_order_relaxed) == 0) return -1;
  return atomic_exchange(f, 0) - 1;
}

/* ======================================================================
 * Per-device frames
 * ==================================================================== */

static xrt_status sim_frame_make(const sim_exe *e, sim_frame *fr,
                                 xrt_plugin_error *err);
static void sim_frame_free(const sim_exe *e, sim_frame *fr);

/* The device's frame of e, made on first use; *tmp when it is busy (a
 * concurrent execute on the same device). */
static xrt_status sim_frame_acquire(sim_exe *e, int device, sim_frame *tmp,
                                    sim_frame **out, xrt_plugin_error *err) {
  *out = NULL;
  if (!atomic_exchange(&e->dbusy[device], 1)) {
    sim_frame *fr = &e->dframes[device];
    xrt_status rc = XRT_OK;
    pthread_mutex_lock(&e->mu);
    if (!fr->block) rc = sim_frame_make(e, fr, err);
    pthread_mutex_unlock(&e->mu);
    if (rc) {
      atomic_store(&e->dbusy[device], 0);
      return rc;
    }
    *out = fr;
    return XRT_OK;
  }
  memset(tmp, 0, sizeof *tmp);
  xrt_status rc = sim_frame_make(e, tmp, err);
  if (!rc) *out = tmp;
  return rc;
}

static void sim_frame_release(sim_exe *e, int device, sim_frame *fr,
                              sim_frame *tmp) {
  if (fr == tmp) sim_frame_free(e, tmp);
  else if (fr) atomic_store(&e->dbusy[device], 0);
}

/* ======================================================================
 * Launch shape: compile and execute
 * ==================================================================== */


#define SIM_MAX_PROCS (1 << 16)

/* The replicas and partitions an executable runs in: the compile
 * arguments', else the module's. */
static xrt_status sim_compile_launch_shape(sim_exe *e,
                                           const xrt_plugin_compile_args *a,
                                           xrt_plugin_error *err) {
  int32_t r = a->num_replicas > 0 ? a->num_replicas : a->module->num_replicas;
  int32_t p = a->num_partitions > 0 ? a->num_partitions
                                    : a->module->num_partitions;
  e->nrep = r > 0 ? r : 1;
  e->npart = p > 0 ? p : 1;
  if ((int64_t)e->nrep * e->npart > SIM_MAX_PROCS)
    return sim_fail(err, XRT_INVALID_ARGUMENT, "%d replicas x %d partitions "
                    "is more than the simulator's %d processes",
                    (int)e->nrep, (int)e->npart, SIM_MAX_PROCS);
  return XRT_OK;
}

static xrt_status sim_check_launch_args(const xrt_plugin_execute_args *a,
                                        xrt_plugin_error *err) {
  if (a->num_replicas < 1 || a->num_partitions < 1 ||
      (int64_t)a->num_replicas * a->num_partitions > SIM_MAX_PROCS)
    return sim_fail(err, XRT_INVALID_ARGUMENT, "bad launch shape: %d "
                    "replica(s) x %d partition(s)", (int)a->num_replicas,
                    (int)a->num_partitions);
  if (a->replica < 0 || a->replica >= a->num_replicas || a->partition < 0 ||
      a->partition >= a->num_partitions)
    return sim_fail(err, XRT_INVALID_ARGUMENT, "participant (replica %d, "
                    "partition %d) is outside a launch of %d x %d",
                    (int)a->replica, (int)a->partition, (int)a->num_replicas,
                    (int)a->num_partitions);
  return XRT_OK;
}

/* A launch of one participant, outside the registry. */
static xrt_status sim_launch_own(struct sim_launch *l, sim_part *part,
                                 const xrt_plugin_execute_args *a,
                                 xrt_plugin_error *err) {
  memset(l, 0, sizeof *l);
  if (pthread_mutex_init(&l->mu, NULL) != 0)
    return sim_fail(err, XRT_INTERNAL, "pthread_mutex_init failed");
  if (pthread_cond_init(&l->cv, NULL) != 0) {
    pthread_mutex_destroy(&l->mu);
    return sim_fail(err, XRT_INTERNAL, "pthread_cond_init failed");
  }
  l->parts = part;
  l->cap = 1;
  sim_launch_reset(l, a->launch_id, 1, 1);
  part->joined = 1;
  part->device = a->device;
  l->joined = 1;
  return XRT_OK;
}

/* collective_reduce: an all_reduce whose result only the first member of
 * each group keeps (the root); the other members get zeros. */
static xrt_status sim_run_collective_reduce(const sim_step *st, void **vals,
                                            sim_cx *cx) {
  const sim_coll *k = (const sim_coll *)st->data;
  xrt_status rc = sim_run_all_reduce(st, vals, cx);
  int32_t proc = sim_proc_of(cx);
  if (rc || !k->pgroup || k->pgroup[proc] < 0 || k->pindex[proc] == 0)
    return rc;
  for (int32_t j = 0; j < k->nops; j++) /* peers are done reading it */
    memset(vals[st->out[j]], 0, (size_t)k->numel[j] * k->es[j]);
  return XRT_OK;
}

static xrt_status sim_lower_collective_reduce(sim_fcc *fc, const xrt_ir_op *op,
                                              sim_step *st) {
  xrt_status rc = sim_lower_all_reduce(fc, op, st);
  if (!rc) st->run = sim_run_collective_reduce;
  return rc;
}

/* Lowerers of the ops the simulator implements directly; elementwise ops
 * go to sim_ew_kernel. */
static sim_lower_fn sim_lowerer(xrt_opcode code) {
  static const sim_lower_fn table[XRT_OP_COUNT] = {
      [XRT_OP_CONSTANT] = sim_lower_constant,
      [XRT_OP_IOTA] = sim_lower_iota,
      [XRT_OP_GET_DIMENSION_SIZE] = sim_lower_get_dimension_size,
      [XRT_OP_REPLICA_ID] = sim_lower_process_id,
      [XRT_OP_PARTITION_ID] = sim_lower_process_id,
      [XRT_OP_ALL_REDUCE] = sim_lower_all_reduce,
      [XRT_OP_ALL_GATHER] = sim_lower_all_gather,
      [XRT_OP_REDUCE_SCATTER] = sim_lower_reduce_scatter,
      [XRT_OP_ALL_TO_ALL] = sim_lower_all_to_all,
      [XRT_OP_COLLECTIVE_PERMUTE] = sim_lower_collective_permute,
      [XRT_OP_COLLECTIVE_BROADCAST] = sim_lower_collective_broadcast,
      [XRT_OP_COLLECTIVE_REDUCE] = sim_lower_collective_reduce,
      [XRT_OP_BROADCAST_IN_DIM] = sim_lower_broadcast_in_dim,
      [XRT_OP_BROADCAST] = sim_lower_broadcast,
      [XRT_OP_RESHAPE] = sim_lower_reshape,
      [XRT_OP_TRANSPOSE] = sim_lower_transpose,
      [XRT_OP_SLICE] = sim_lower_slice,
      [XRT_OP_CONCATENATE] = sim_lower_concatenate,
      [XRT_OP_PAD] = sim_lower_pad,
      [XRT_OP_REVERSE] = sim_lower_reverse,
      [XRT_OP_SELECT] = sim_lower_select,
      [XRT_OP_CLAMP] = sim_lower_clamp,
      [XRT_OP_REDUCE] = sim_lower_reduce,
      [XRT_OP_DOT_GENERAL] = sim_lower_dot_general,
      [XRT_OP_DOT] = sim_lower_dot,
      [XRT_OP_WHILE] = sim_lower_while,
      [XRT_OP_FUNC_CALL] = sim_lower_call,
      [XRT_OP_CUSTOM_CALL] = sim_lower_custom_call,
      [XRT_OP_OPTIMIZATION_BARRIER] = sim_lower_barrier,
      [XRT_OP_GATHER] = sim_lower_gather,
      [XRT_OP_SCATTER] = sim_lower_scatter,
      [XRT_OP_DYNAMIC_SLICE] = sim_lower_dynamic_slice,
      [XRT_OP_DYNAMIC_UPDATE_SLICE] = sim_lower_dynamic_update_slice,
      [XRT_OP_DYNAMIC_GATHER] = sim_lower_dynamic_gather,
      [XRT_OP_REDUCE_WINDOW] = sim_lower_reduce_window,
      [XRT_OP_SELECT_AND_SCATTER] = sim_lower_select_and_scatter,
      [XRT_OP_DYNAMIC_BROADCAST_IN_DIM] = sim_lower_dynamic_broadcast_in_dim,
      [XRT_OP_DYNAMIC_IOTA] = sim_lower_dynamic_iota,
      [XRT_OP_DYNAMIC_PAD] = sim_lower_dynamic_pad,
      [XRT_OP_DYNAMIC_RESHAPE] = sim_lower_dynamic_reshape,
      [XRT_OP_IF] = sim_lower_if,
      [XRT_OP_CASE] = sim_lower_case,
      [XRT_OP_MAP] = sim_lower_map,
      [XRT_OP_SORT] = sim_lower_sort,
      [XRT_OP_COMPOSITE] = sim_lower_composite,
      [XRT_OP_TUPLE] = sim_lower_tuple,
      [XRT_OP_GET_TUPLE_ELEMENT] = sim_lower_get_tuple_element,
      [XRT_OP_AFTER_ALL] = sim_lower_after_all,
      [XRT_OP_INFEED] = sim_lower_infeed,
      [XRT_OP_OUTFEED] = sim_lower_outfeed,
      [XRT_OP_SEND] = sim_lower_send_any,
      [XRT_OP_RECV] = sim_lower_recv_any,
      [XRT_OP_CHLO_SCAN] = sim_lower_chlo_scan,
      [XRT_OP_CONVOLUTION] = sim_lower_convolution,
      [XRT_OP_DYNAMIC_CONV] = sim_lower_dynamic_conv,
      [XRT_OP_FFT] = sim_lower_fft,
      [XRT_OP_TRIANGULAR_SOLVE] = sim_lower_triangular_solve,
      [XRT_OP_CHOLESKY] = sim_lower_cholesky,
      [XRT_OP_BATCH_NORM_INFERENCE] = sim_lower_batch_norm_inference,
      [XRT_OP_BATCH_NORM_TRAINING] = sim_lower_batch_norm_training,
      [XRT_OP_BATCH_NORM_GRAD] = sim_lower_batch_norm_grad,
      [XRT_OP_RNG] = sim_lower_rng,
      [XRT_OP_RNG_BIT_GENERATOR] = sim_lower_rng_bit_generator,
      [XRT_OP_CHLO_RAGGED_DOT] = sim_lower_chlo_ragged_dot,
  };
  if ((unsigned)code < XRT_OP_COUNT && table[code]) return table[code];
  if ((unsigned)code < XRT_OP_COUNT && code != XRT_OP_INVALID &&
      sim_ew_handles(code))
    return sim_lower_ew;
  return NULL;
}

/* Ops that may take or make tuple and token values. */
static int sim_takes_tuples(xrt_opcode code) {
  switch (code) {
  case XRT_OP_TUPLE: case XRT_OP_GET_TUPLE_ELEMENT: case XRT_OP_WHILE:
  case XRT_OP_IF: case XRT_OP_CASE: case XRT_OP_OPTIMIZATION_BARRIER:
  case XRT_OP_FUNC_CALL: case XRT_OP_RETURN: case XRT_OP_FUNC_RETURN:
  case XRT_OP_AFTER_ALL: case XRT_OP_INFEED: case XRT_OP_OUTFEED:
  case XRT_OP_SEND: case XRT_OP_RECV: case XRT_OP_COMPOSITE:
  case XRT_OP_CUSTOM_CALL: /* tokens: no bytes; tuples: refused when lowered */
    return 1;
  default: return 0;
  }
}

/* Tensors (also inside tuples) have element types the simulator stores. */
static int sim_type_ok(const xrt_ir_type *t, int depth) {
  if (t->kind == XRT_TYPE_TOKEN) return 1;
  if (t->kind == XRT_TYPE_TENSOR) return sim_esize(t->shape.dtype) != 0;
  if (t->kind != XRT_TYPE_TUPLE || depth > 64) return 0;
  for (int32_t i = 0; i < t->num_elems; i++)
    if (!sim_type_ok(&t->elems[i], depth + 1)) return 0;
  return 1;
}

/* Every value the op touches is a value of f that the simulator can
 * hold: tensors, and for some ops tuples and tokens.  XRT_OK, or the
 * status with the reason in why (also op_support's answer). */
static xrt_status sim_values_why(const xrt_ir_func *f, const xrt_ir_op *op,
                                 char *why, size_t cap) {
  for (int32_t i = 0; i < op->num_operands + op->num_results; i++) {
    int32_t id = i < op->num_operands ? op->operands[i]
                                      : op->results[i - op->num_operands];
    if (id < 0 || id >= f->num_values) {
      snprintf(why, cap, "%s refers to value %d, which does not exist",
               op->name, (int)id);
      return XRT_INTERNAL;
    }
    const xrt_ir_type *t = &f->value_types[id];
    if (t->kind != XRT_TYPE_TENSOR && !sim_takes_tuples(op->code)) {
      snprintf(why, cap, "%s: tuple and token values are not supported by "
               "the simulator", op->name);
      return XRT_UNIMPLEMENTED;
    }
    if (!sim_type_ok(t, 0)) {
      snprintf(why, cap, "%s: a value has an element type the simulator "
               "cannot store", op->name);
      return XRT_UNIMPLEMENTED;
    }
  }
  return XRT_OK;
}

static xrt_status sim_check_values(sim_fcc *fc, const xrt_ir_op *op) {
  char why[256];
  xrt_status rc = sim_values_why(fc->f, op, why, sizeof why);
  return rc ? sim_fail_op(fc->cc->err, op, rc, "%s", why) : XRT_OK;
}

/* ----------------------------------------------------------------------
 * Quantized operands and results of compute ops.
 *
 * The spec defines dot_general, convolution, clamp, select (with
 * differing quantization parameters), reduce_precision, batch norm,
 * cholesky and triangular_solve on quantized tensors as
 * dequantize_op_quantize: every quantized operand becomes its expressed
 * type, the float op runs, and a quantized result is quantized again
 * (hybrid_dequantize_then_op: a float lhs with a quantized rhs dequantizes
 * the rhs only and makes a float result).  Such an op lowers into one step
 * that runs a small plan: dequantize kernels into float pseudo values, the
 * op's own lowering applied to a copy of the op that reads and writes those
 * values, and quantize kernels into the real results.  The pseudo values
 * get their float types through fc->xf, a copy of the function whose
 * value_types also cover pseudo values, which is what fc->f points at while
 * the op's lowerer runs.
 *
 * Data movement ops (reshape, transpose, slice, broadcast_in_dim,
 * concatenate, pad, reverse, gather, scatter, dynamic slices, tuples,
 * control flow, ...) move storage values and need nothing; the ops with
 * regions (reduce, reduce_window, sort, scatter, select_and_scatter, map)
 * do their arithmetic in the region, whose elementwise ops are quantized
 * kernels themselves.
 * -------------------------------------------------------------------- */

static int sim_quant_eq(const xrt_ir_quant *a, const xrt_ir_quant *b) {
  if (a == b) return 1;
  if (!a || !b || a->storage != b->storage || a->expressed != b->expressed ||
      a->storage_min != b->storage_min || a->storage_max != b->storage_max ||
      a->axis != b->axis || a->num_scales != b->num_scales)
    return 0;
  for (int32_t i = 0; i < a->num_scales; i++)
    if (a->scales[i] != b->scales[i] || a->zero_points[i] != b->zero_points[i])
      return 0;
  return 1;
}

/* The type operand (i < num_operands) or result i of op is computed in
 * when it differs from the value's own: the expressed type of a quantized
 * value, or for a reduce / reduce_window input the wider quantized type of
 * its result.  Returns 0 to use the value as it is. */
static int sim_quant_want(const sim_fcc *fc, const xrt_ir_op *op, int32_t i,
                          xrt_ir_type *w) {
  int32_t nin = op->num_operands;
  int32_t id = i < nin ? op->operands[i] : op->results[i - nin];
  const xrt_ir_type *t = &fc->f->value_types[id];
  if (t->kind != XRT_TYPE_TENSOR || !t->quant) return 0;
  *w = *t;
  if (op->code == XRT_OP_REDUCE || op->code == XRT_OP_REDUCE_WINDOW) {
    int32_t n = op->num_results;
    if (i >= n || nin != 2 * n) return 0;
    const xrt_ir_type *r = &fc->f->value_types[op->results[i]];
    if (!r->quant || r->shape.dtype == t->shape.dtype) return 0;
    w->shape.dtype = r->shape.dtype;
    w->quant = r->quant;
    return 1;
  }
  w->shape.dtype = t->quant->expressed;
  w->quant = NULL;
  return 1;
}

/* True if op is a compute op with a quantized operand or result. */
static int sim_quant_computes(const sim_fcc *fc, const xrt_ir_op *op) {
  const xrt_ir_type *t = fc->f->value_types;
  switch (op->code) {
  case XRT_OP_DOT_GENERAL: case XRT_OP_DOT: case XRT_OP_CONVOLUTION:
  case XRT_OP_DYNAMIC_CONV: case XRT_OP_CLAMP: case XRT_OP_REDUCE_PRECISION:
  case XRT_OP_BATCH_NORM_INFERENCE: case XRT_OP_BATCH_NORM_TRAINING:
  case XRT_OP_BATCH_NORM_GRAD: case XRT_OP_CHOLESKY:
  case XRT_OP_TRIANGULAR_SOLVE: case XRT_OP_CHLO_RAGGED_DOT:
    break;
  case XRT_OP_SELECT:
    /* dequantize_select_quantize; a plain copy of storage values when the
     * branches and the result share their parameters */
    if (op->num_operands != 3 || op->num_results != 1) return 0;
    return (t[op->operands[1]].quant || t[op->operands[2]].quant ||
            t[op->results[0]].quant) &&
           !(sim_quant_eq(t[op->operands[1]].quant, t[op->results[0]].quant) &&
             sim_quant_eq(t[op->operands[2]].quant, t[op->results[0]].quant));
  case XRT_OP_REDUCE: case XRT_OP_REDUCE_WINDOW: {
    /* is_promotable: quantized inputs whose body and results use a wider
     * storage type are converted first */
    xrt_ir_type w;
    for (int32_t i = 0; i < op->num_operands; i++)
      if (sim_quant_want(fc, op, i, &w)) return 1;
    return 0;
  }
  default:
    return 0;
  }
  for (int32_t i = 0; i < op->num_operands + op->num_results; i++) {
    int32_t id = i < op->num_operands ? op->operands[i]
                                      : op->results[i - op->num_operands];
    if (t[id].kind == XRT_TYPE_TENSOR && t[id].quant) return 1;
  }
  return 0;
}

/* Points fc->xf at a copy of the function's types covering every value id
 * so far (pseudo values typeless until set). */
static xrt_status sim_quant_types(sim_fcc *fc, const xrt_ir_func *f) {
  if (fc->nv > fc->xcap) {
    int32_t cap = fc->nv + (fc->xcap > 16 ? fc->xcap : 16);
    xrt_ir_type *t = (xrt_ir_type *)sim_palloc(fc, sizeof *t * (size_t)cap);
    if (!t) return XRT_RESOURCE_EXHAUSTED;
    memset(t, 0, sizeof *t * (size_t)cap);
    if (fc->xcap) memcpy(t, fc->xt, sizeof *t * (size_t)fc->xcap);
    else memcpy(t, f->value_types, sizeof *t * (size_t)f->num_values);
    fc->xt = t;
    fc->xcap = cap;
  }
  fc->xf = *f;
  fc->xf.value_types = fc->xt;
  fc->xf.num_values = fc->nv;
  return XRT_OK;
}

/* A step converting value `from` (type a) into value `to` (type b), one of
 * them quantized, by the quantized elementwise kernel. */
static xrt_status sim_quant_step(sim_fcc *fc, const xrt_ir_op *op,
                                 const int32_t *from, const int32_t *to,
                                 const xrt_ir_type *a, const xrt_ir_type *b,
                                 sim_step *st) {
  sim_q *c = (sim_q *)sim_palloc(fc, sizeof *c);
  if (!c) return XRT_RESOURCE_EXHAUSTED;
  memset(c, 0, sizeof *c);
  c->e = b->quant ? SIM_Q_QUANTIZE : SIM_Q_DEQUANTIZE;
  c->nin = 1;
  if (!sim_q_value(a, &c->v[0]) || !sim_q_value(b, &c->v[1]))
    return sim_fail_op(fc->cc->err, op, XRT_UNIMPLEMENTED, "%s: quantized "
                       "type with storage %s is not supported by the "
                       "simulator", op->name, sim_dtype_name(a->shape.dtype));
  c->back = sim_ew_size(a->shape.dtype) < sim_ew_size(b->shape.dtype);
  memset(st, 0, sizeof *st);
  st->run = sim_run_ew;
  st->ew = sim_q_run;
  st->ew_ctx = c;
  st->in = from;
  st->out = to;
  st->nin = st->nout = 1;
  st->n = sim_numel(&a->shape);
  st->op = op;
  return XRT_OK;
}

static xrt_status sim_run_seq(const sim_step *st, void **vals, sim_cx *cx) {
  return sim_run_plan((const sim_plan *)st->data, vals, cx);
}

/* Lowers a compute op with quantized operands or results (see above). */
static xrt_status sim_lower_quant(sim_fcc *fc, const xrt_ir_op *op,
                                  sim_step *st, sim_lower_fn lower) {
  const xrt_ir_func *f = fc->f;
  int32_t nin = op->num_operands, nout = op->num_results, ns = 0;
  int32_t *ids = (int32_t *)sim_palloc(fc, sizeof *ids *
                                               (size_t)(nin + nout + 1));
  sim_step *steps = (sim_step *)sim_palloc(fc, sizeof *steps *
                                                   (size_t)(nin + nout + 1));
  xrt_ir_op *o2 = (xrt_ir_op *)sim_palloc(fc, sizeof *o2);
  sim_plan *plan = (sim_plan *)sim_palloc(fc, sizeof *plan);
  if (!ids || !steps || !o2 || !plan) return XRT_RESOURCE_EXHAUSTED;
  xrt_status rc = XRT_OK;
  xrt_ir_type *want = (xrt_ir_type *)sim_palloc(fc, sizeof *want *
                                                      (size_t)(nin + nout + 1));
  if (!want) return XRT_RESOURCE_EXHAUSTED;
  /* pseudo values for the operands and results computed in another type */
  for (int32_t i = 0; i < nin + nout && !rc; i++) {
    ids[i] = i < nin ? op->operands[i] : op->results[i - nin];
    if (!sim_quant_want(fc, op, i, &want[i])) continue;
    if (!sim_esize(want[i].shape.dtype))
      return sim_unsupported_type(fc, op, want[i].shape.dtype);
    rc = sim_temp(fc, sim_bytes(&want[i].shape), &ids[i]);
  }
  if (rc || (rc = sim_quant_types(fc, f))) return rc;
  for (int32_t i = 0; i < nin + nout; i++) {
    int32_t id = i < nin ? op->operands[i] : op->results[i - nin];
    if (ids[i] != id) fc->xt[ids[i]] = want[i];
  }
  /* dequantize, the op on floats, quantize */
  for (int32_t i = 0; i < nin && !rc; i++)
    if (ids[i] != op->operands[i])
      rc = sim_quant_step(fc, op, &op->operands[i], &ids[i],
                          &f->value_types[op->operands[i]], &fc->xt[ids[i]],
                          &steps[ns++]);
  if (rc) return rc;
  *o2 = *op;
  o2->operands = ids;
  o2->results = ids + nin;
  sim_step s2;
  memset(&s2, 0, sizeof s2);
  s2.in = o2->operands;
  s2.out = o2->results;
  s2.nin = nin;
  s2.nout = nout;
  s2.op = o2;
  fc->f = &fc->xf;
  rc = lower(fc, o2, &s2);
  fc->f = f;
  if (rc) return rc;
  if (s2.run) steps[ns++] = s2;
  for (int32_t j = 0; j < nout && !rc; j++)
    if (ids[nin + j] != op->results[j])
      rc = sim_quant_step(fc, op, &ids[nin + j], &op->results[j],
                          &fc->xt[ids[nin + j]],
                          &f->value_types[op->results[j]], &steps[ns++]);
  if (rc) return rc;
  plan->steps = steps;
  plan->n = ns;
  st->run = sim_run_seq;
  st->data = plan;
  return XRT_OK;
}

static void sim_trace_wrap(const sim_fcc *fc, sim_step *st);

/* Records the op's uses and definitions, then lowers it into one step. */
static xrt_status sim_lower_op(sim_fcc *fc, const xrt_ir_op *op,
                               sim_vec *steps) {
  sim_lower_fn lower = sim_lowerer(op->code);
  if (!lower)
    return sim_fail_op(fc->cc->err, op, XRT_UNIMPLEMENTED, "%s is not "
                       "supported by the simulator", op->name);
  xrt_status rc = sim_check_values(fc, op);
  if (rc) return rc;
  int32_t cur = fc->cur = fc->pos++, ndefs = fc->defs.n;
  for (int32_t i = 0; i < op->num_operands && !rc; i++) {
    rc = sim_use(fc, op->operands[i]);
    /* A region may read the operands while it runs. */
    if (!rc && op->num_regions && fc->depth == 0)
      rc = sim_keep(fc, op->operands[i]);
  }
  for (int32_t i = 0; i < op->num_results && !rc; i++)
    rc = sim_def(fc, op->results[i], sim_vbytes(fc, op->results[i]));
  sim_step st;
  memset(&st, 0, sizeof st);
  st.in = op->operands;
  st.out = op->results;
  st.nin = op->num_operands;
  st.nout = op->num_results;
  st.op = op;
  if (!rc && sim_quant_computes(fc, op))
    rc = sim_lower_quant(fc, op, &st, lower);
  else if (!rc)
    rc = lower(fc, op, &st);
  if (rc) return rc;
  sim_trace_wrap(fc, &st); /* collectives report to a trace */
  fc->cur = cur;
  if (fc->depth == 0 && fc->pos - 1 > cur) sim_extend(fc, ndefs, fc->pos - 1);
  if (!st.run) return XRT_OK;
  sim_step *slot = (sim_step *)sim_vec_push(&fc->cc->al, steps);
  if (!slot) return sim_oom(fc);
  *slot = st;
  return XRT_OK;
}

/* Lowers a block's ops into plan; *term is its terminator. */
static xrt_status sim_lower_block(sim_fcc *fc, const xrt_ir_region *r,
                                  sim_plan *plan, const xrt_ir_op **term) {
  sim_vec steps = {NULL, 0, 0, sizeof(sim_step)};
  xrt_status rc = XRT_OK;
  if (r->num_ops < 1)
    return sim_fail(fc->cc->err, XRT_INVALID_ARGUMENT, "@%s: a block has no "
                    "terminator", fc->f->name);
  rc = sim_fz_lower_ops(fc, r, &steps); /* each op, or fused groups */
  const xrt_ir_op *t = &r->ops[r->num_ops - 1];
  if (!rc && t->code != XRT_OP_RETURN && t->code != XRT_OP_FUNC_RETURN)
    rc = sim_fail_op(fc->cc->err, t, XRT_INVALID_ARGUMENT, "a block must end "
                     "with a return, not %s", t->name);
  if (!rc) rc = sim_check_values(fc, t);
  fc->cur = fc->pos++;
  for (int32_t i = 0; i < t->num_operands && !rc; i++)
    rc = sim_use(fc, t->operands[i]);
  sim_step *arr = NULL;
  if (!rc && steps.n) {
    arr = (sim_step *)sim_palloc(fc, sizeof *arr * (size_t)steps.n);
    if (!arr) rc = XRT_RESOURCE_EXHAUSTED;
    else memcpy(arr, steps.p, sizeof *arr * (size_t)steps.n);
  }
  plan->steps = arr;
  plan->n = rc ? 0 : steps.n;
  *term = t;
  sim_vec_free(&fc->cc->al, &steps);
  return rc;
}

/* ======================================================================
 * Planning functions
 * ==================================================================== */

/* The entry's results that an op writes are bound to the output buffers
 * (each value once); the rest are copied after the run. */
static xrt_status sim_bind_outputs(sim_fcc *fc, sim_fplan *fp) {
  uint8_t *direct = (uint8_t *)sim_palloc(fc, (size_t)fp->nrets + 1);
  if (!direct) return XRT_RESOURCE_EXHAUSTED;
  for (int32_t j = 0; j < fp->nrets; j++) {
    sim_vinfo *v = &fc->v[fp->rets[j]];
    if (v->kind != SIM_V_SLOT) continue;
    v->kind = SIM_V_OUT;
    direct[j] = 1;
  }
  fp->ret_direct = direct;
  return XRT_OK;
}

/* Tables that let a frame point every slot and constant value. */
static xrt_status sim_frame_tables(sim_fcc *fc, sim_fplan *fp) {
  int32_t ns = 0, nc = 0, nb = 0;
  for (int32_t i = 0; i < fc->nv; i++) {
    ns += fc->v[i].kind == SIM_V_SLOT && !fc->v[i].in_out;
    nb += fc->v[i].kind == SIM_V_SLOT && fc->v[i].in_out;
    nc += fc->v[i].kind == SIM_V_CONST;
  }
  int32_t *sid = (int32_t *)sim_palloc(fc, sizeof *sid * (size_t)(ns + 1));
  size_t *soff = (size_t *)sim_palloc(fc, sizeof *soff * (size_t)(ns + 1));
  int32_t *cid = (int32_t *)sim_palloc(fc, sizeof *cid * (size_t)(nc + 1));
  void **cptr = (void **)sim_palloc(fc, sizeof *cptr * (size_t)(nc + 1));
  int32_t *bid = (int32_t *)sim_palloc(fc, sizeof *bid * (size_t)(2 * nb + 1));
  size_t *boff = (size_t *)sim_palloc(fc, sizeof *boff * (size_t)(nb + 1));
  if (!sid || !soff || !cid || !cptr || !bid || !boff)
    return XRT_RESOURCE_EXHAUSTED;
  fp->nobind = nb, fp->obind_ids = bid, fp->obind_base = bid + nb;
  fp->obind_offs = boff;
  ns = nc = nb = 0;
  for (int32_t i = 0; i < fc->nv; i++) {
    if (fc->v[i].kind == SIM_V_SLOT && fc->v[i].in_out) {
      bid[nb] = i;
      bid[fp->nobind + nb] = fc->v[i].in_out - 1;
      boff[nb++] = fc->v[i].off;
    } else if (fc->v[i].kind == SIM_V_SLOT) {
      sid[ns] = i;
      soff[ns++] = fc->v[i].bytes ? fc->v[i].off : 0;
    } else if (fc->v[i].kind == SIM_V_CONST) {
      cid[nc] = i;
      cptr[nc++] = fc->v[i].cptr;
    }
  }
  fp->nslots = ns, fp->slot_ids = sid, fp->slot_offs = soff;
  fp->nconsts = nc, fp->const_ids = cid, fp->const_ptrs = cptr;
  return XRT_OK;
}

static xrt_status sim_plan_body(sim_fcc *fc, sim_fplan *fp, int is_entry) {
  const xrt_ir_func *f = fc->f;
  const xrt_ir_op *term = NULL;
  for (int32_t i = 0; i < f->body.num_args; i++) {
    if (f->body.args[i] < 0 || f->body.args[i] >= f->num_values)
      return sim_fail(fc->cc->err, XRT_INTERNAL, "@%s: bad argument id",
                      f->name);
    fc->v[f->body.args[i]].kind = SIM_V_BOUND;
  }
  xrt_status rc = sim_lower_block(fc, &f->body, &fp->body, &term);
  if (rc) return rc;
  fp->nargs = f->body.num_args;
  fp->args = f->body.args;
  fp->nrets = term->num_operands;
  fp->rets = term->operands;
  size_t *rb = (size_t *)sim_palloc(fc, sizeof *rb * (size_t)(fp->nrets + 1));
  if (!rb) return XRT_RESOURCE_EXHAUSTED;
  for (int32_t j = 0; j < fp->nrets; j++)
    rb[j] = sim_vbytes(fc, fp->rets[j]);
  fp->ret_bytes = rb;
  if (is_entry && (rc = sim_bind_outputs(fc, fp))) return rc;
  if ((rc = sim_assign_slots(fc, &fp->asize))) return rc;
  fp->nvals = fc->nv;
  return sim_frame_tables(fc, fp);
}

static xrt_status sim_plan_func(sim_cc *cc, int32_t fidx, int is_entry) {
  sim_fplan *fp = &cc->exe->fp[fidx];
  if (fp->state == 2) return XRT_OK;
  fp->state = 1;
  sim_fcc fc;
  memset(&fc, 0, sizeof fc);
  fc.cc = cc;
  fc.f = &cc->m->funcs[fidx];
  fc.defs.es = fc.nested.es = sizeof(int32_t);
  xrt_status rc = XRT_OK;
  /* The real values at once, in the capacity sim_new_value would have
   * grown to (copying the table at each doubling cost a twentieth of a
   * plan; tables sized otherwise, larger ones too, made malloc map and
   * fault in fresh pages on every compile), with room for pseudo values
   * (a scratch per dot_general or fused loop: about one per four values
   * in an MLP; growing for them once copied the whole table). */
  int32_t cap = 64, nv = fc.f->num_values > 0 ? fc.f->num_values : 0;
  int32_t want = nv <= INT32_MAX - nv / 4 ? nv + nv / 4 : nv;
  while (cap < want && cap <= INT32_MAX / 2) cap *= 2;
  if (cap >= nv) {
    fc.v = (sim_vinfo *)cc->al.alloc(cc->al.self, sizeof *fc.v * (size_t)cap);
    if (!fc.v) {
      rc = sim_oom(&fc);
    } else {
      memset(fc.v, 0, sizeof *fc.v * (size_t)nv);
      fc.capv = cap;
      fc.nv = nv;
    }
  }
  for (int32_t i = fc.nv; i < fc.f->num_values && !rc; i++) {
    int32_t id;
    rc = sim_new_value(&fc, &id);
  }
  if (!rc) rc = sim_plan_body(&fc, fp, is_entry);
  sim_fz_release(&fc);
  cc->al.free(cc->al.self, fc.v);
  sim_vec_free(&cc->al, &fc.defs);
  sim_vec_free(&cc->al, &fc.nested);
  fp->state = rc ? 0 : 2;
  return rc;
}

/* ======================================================================
 * Executables and execution
 * ==================================================================== */

static void sim_frame_free(const sim_exe *e, sim_frame *fr) {
  if (fr->block) e->cl->al.free(e->cl->al.self, fr->block);
  memset(fr, 0, sizeof *fr);
}

/* One allocation: the vals of every planned function, then the arena. */
static xrt_status sim_frame_make(const sim_exe *e, sim_frame *fr,
                                 xrt_plugin_error *err) {
  size_t vb = sim_align_up(sizeof(void *) * (size_t)(e->total_vals + 1));
  const xrt_allocator *al = &e->cl->al;
  char *block = (char *)al->alloc(al->self, vb + e->arena_bytes + SIM_ALIGN);
  if (!block)
    return sim_fail(err, XRT_RESOURCE_EXHAUSTED, "out of host memory for a "
                    "%zu-byte scratch arena", e->arena_bytes);
  fr->block = block;
  fr->vals = (void **)(void *)block;
  uintptr_t a = ((uintptr_t)(block + vb) + SIM_ALIGN - 1) &
                ~(uintptr_t)(SIM_ALIGN - 1);
  fr->arena = block + (a - (uintptr_t)block);
  memset(fr->vals, 0, sizeof(void *) * (size_t)e->total_vals);
  for (int32_t f = 0; f < e->m->num_funcs; f++) {
    const sim_fplan *fp = &e->fp[f];
    if (fp->state != 2) continue;
    void **v = fr->vals + fp->vbase;
    for (int32_t i = 0; i < fp->nslots; i++)
      v[fp->slot_ids[i]] = fr->arena + fp->abase + fp->slot_offs[i];
    for (int32_t i = 0; i < fp->nconsts; i++)
      v[fp->const_ids[i]] = fp->const_ptrs[i];
  }
  return XRT_OK;
}

static void sim_executable_destroy(void *executable) {
  sim_exe *e = (sim_exe *)executable;
  if (!e) return;
  sim_frame_free(e, &e->frame);
  for (int i = 0; e->dframes && i < e->cl->ndev; i++)
    sim_frame_free(e, &e->dframes[i]);
  for (int32_t i = 0; i < e->owned_ctx.n; i++)
    e->cl->al.free(e->cl->al.self, ((void **)(void *)e->owned_ctx.p)[i]);
  sim_vec_free(&e->cl->al, &e->owned_ctx);
  sim_vec_free(&e->cl->al, &e->fzrec);
  if (e->mu_ok) pthread_mutex_destroy(&e->mu);
  sim_pool_release(&e->pool);
  e->cl->al.free(e->cl->al.self, e);
}

/* Places every planned function in the shared frame. */
static void sim_layout(sim_exe *e) {
  int32_t vals = 0;
  size_t arena = 0;
  for (int32_t f = 0; f < e->m->num_funcs; f++) {
    sim_fplan *fp = &e->fp[f];
    if (fp->state != 2) continue;
    fp->vbase = vals;
    fp->abase = arena;
    vals += fp->nvals;
    arena += sim_align_up(fp->asize);
  }
  e->total_vals = vals;
  e->arena_bytes = arena;
}

/* Compile arguments must have every field up to ABI 1.2's signature;
 * bytes_verified, appended later, is read through XRT_STRUCT_HAS. */
#define SIM_COMPILE_ARGS_MIN offsetof(xrt_plugin_compile_args, bytes_verified)

/* sim_compile, following the fusion decisions fzin (nfzin ints; NULL:
 * none) that serialized bytes carry (see "Serialized executables"). */
static xrt_status sim_compile_given(void *client,
                                    const xrt_plugin_compile_args *args,
                                    const int32_t *fzin, int32_t nfzin,
                                    void **out_executable,
                                    xrt_plugin_error *err) {
  sim_client *c = (sim_client *)client;
  if (!c || !args || !out_executable ||
      args->struct_size < SIM_COMPILE_ARGS_MIN || !args->module)
    return sim_fail(err, XRT_INVALID_ARGUMENT, "bad compile arguments");
  *out_executable = NULL;
  const xrt_ir_module *m = args->module;
  if (args->entry < 0 || args->entry >= m->num_funcs)
    return sim_fail(err, XRT_INVALID_ARGUMENT, "entry %d is not a function",
                    (int)args->entry);
  sim_exe *e = (sim_exe *)c->al.alloc(c->al.self, sizeof *e);
  if (!e) return sim_fail(err, XRT_RESOURCE_EXHAUSTED, "out of host memory");
  memset(e, 0, sizeof *e);
  e->cl = c;
  e->pool.al = c->al;
  e->m = m;
  e->entry = args->entry;
  e->owned_ctx.es = sizeof(void *);
  sim_cc cc = {c->al, e, m, err, args->host_bindings, {{0}}, 0,
               nfzin > 0 ? fzin : NULL, nfzin, 0, 0, 0, 0};
  xrt_status rc = sim_compile_launch_shape(e, args, err);
  if (!rc) rc = sim_xp_compile(e, args, err);
  e->fp = (sim_fplan *)sim_pool_alloc(&e->pool, sizeof *e->fp *
                                                    (size_t)m->num_funcs);
  e->dframes = (sim_frame *)sim_pool_alloc(&e->pool, sizeof *e->dframes *
                                                         (size_t)c->ndev);
  e->dbusy = (_Atomic unsigned char *)sim_pool_alloc(&e->pool,
                                                     (size_t)c->ndev);
  if (!rc && (!e->fp || !e->dframes || !e->dbusy))
    rc = sim_fail(err, XRT_RESOURCE_EXHAUSTED, "out of host memory");
  if (!rc) rc = sim_plan_func(&cc, args->entry, 1);
  if (!rc) sim_layout(e); /* frames: per device, on first use */
  if (!rc && pthread_mutex_init(&e->mu, NULL) != 0)
    rc = sim_fail(err, XRT_INTERNAL, "pthread_mutex_init failed");
  e->mu_ok = !rc;
  if (rc) {
    sim_executable_destroy(e);
    return rc;
  }
  *out_executable = e;
  return XRT_OK;
}

static xrt_status sim_compile(void *client, const xrt_plugin_compile_args *args,
                              void **out_executable, xrt_plugin_error *err) {
  return sim_compile_given(client, args, NULL, 0, out_executable, err);
}

/* Binds arguments and outputs, runs the entry plan, copies the results
 * that are not bound to their output buffer. */
static xrt_status sim_run_entry(const sim_exe *e, sim_frame *fr,
                                void *const *args, void *const *outs,
                                sim_cx *cx) {
  const sim_fplan *fp = &e->fp[e->entry];
  void **vals = fr->vals + fp->vbase;
  for (int32_t i = 0; i < fp->nargs; i++) vals[fp->args[i]] = args[i];
  for (int32_t j = 0; j < fp->nrets; j++)
    if (fp->ret_direct[j]) vals[fp->rets[j]] = outs[j];
  for (int32_t i = 0; i < fp->nobind; i++)
    vals[fp->obind_ids[i]] = (char *)vals[fp->obind_base[i]] + fp->obind_offs[i];
  cx->allvals = fr->vals;
  cx->exe = e;
  xrt_status rc = sim_run_plan(&fp->body, vals, cx);
  if (rc) return rc;
  for (int32_t j = 0; j < fp->nrets; j++) {
    const void *src = vals[fp->rets[j]];
    if (!fp->ret_direct[j] && fp->ret_bytes[j] && src != outs[j])
      memcpy(outs[j], src, fp->ret_bytes[j]);
  }
  return XRT_OK;
}

/* The device's frame of e when it is free and already made: one exchange
 * and no lock, the common case of repeated executes (sim_frame_acquire
 * takes e->mu to make it on first use, or builds a temporary one). */
static xrt_status sim_frame_get(sim_exe *e, int device, sim_frame *tmp,
                                sim_frame **out, xrt_plugin_error *err) {
  if (!atomic_exchange_explicit(&e->dbusy[device], 1, memory_order_acquire)) {
    if (e->dframes[device].block) {
      *out = &e->dframes[device];
      return XRT_OK;
    }
    atomic_store_explicit(&e->dbusy[device], 0, memory_order_release);
  }
  return sim_frame_acquire(e, device, tmp, out, err);
}

static void sim_frame_put(sim_exe *e, int device, sim_frame *fr,
                          sim_frame *tmp) {
  if (fr == &e->dframes[device])
    atomic_store_explicit(&e->dbusy[device], 0, memory_order_release);
  else sim_frame_release(e, device, fr, tmp);
}

/* Runs participant a of launch l (NULL: a launch of its own without
 * collectives). */
static xrt_status sim_execute_in(sim_client *c, sim_exe *e,
                                 const xrt_plugin_execute_args *a,
                                 struct sim_launch *l, xrt_plugin_error *err) {
  const sim_fplan *fp = &e->fp[e->entry];
  if (a->num_args != fp->nargs || a->num_outs != fp->nrets ||
      (a->num_args && !a->args) || (a->num_outs && !a->outs))
    return sim_fail(err, XRT_INVALID_ARGUMENT, "@%s takes %d argument(s) and "
                    "%d result(s), got %d and %d", e->m->funcs[e->entry].name,
                    (int)fp->nargs, (int)fp->nrets, a->num_args, a->num_outs);
  if (e->has_coll &&
      (a->num_replicas != e->nrep || a->num_partitions != e->npart))
    return sim_fail(err, XRT_INVALID_ARGUMENT, "@%s was compiled for %d "
                    "replica(s) x %d partition(s); the launch has %d x %d",
                    e->m->funcs[e->entry].name, (int)e->nrep, (int)e->npart,
                    (int)a->num_replicas, (int)a->num_partitions);
  sim_frame tmp, *fr;
  xrt_status rc = sim_frame_get(e, a->device, &tmp, &fr, err);
  if (rc) return rc;
  sim_cx cx;
  memset(&cx, 0, sizeof cx);
  cx.err = err;
  cx.xa = a;
  cx.launch = l;
  cx.fault_steps = cx.fault_after = sim_fault_take(c, a->device);
  cx.tp = sim_tpool_of(c, a->device);
  rc = sim_run_entry(e, fr, a->args, a->outs, &cx);
  sim_frame_put(e, a->device, fr, &tmp);
  return rc;
}

static xrt_status sim_execute(void *client, const xrt_plugin_execute_args *a,
                              xrt_plugin_error *err) {
  sim_client *c = (sim_client *)client;
  if (!a || a->struct_size < sizeof *a)
    return sim_fail(err, XRT_INVALID_ARGUMENT, "bad execute arguments");
  sim_exe *e = (sim_exe *)a->executable;
  xrt_status rc = sim_check_device(c, a->device, err);
  if (rc) return rc;
  if (!e || e->cl != c)
    return sim_fail(err, XRT_INVALID_ARGUMENT, "bad executable");
  if ((rc = sim_check_launch_args(a, err))) return rc;
  int proc = a->replica * a->num_partitions + a->partition;
  int n = a->num_replicas * a->num_partitions;
  struct sim_launch *l = NULL, own;
  sim_part own_part;
  if (n > 1) {
    if ((rc = sim_launch_join(c, a, proc, &l, err))) return rc;
  } else if (e->has_coll) { /* a launch of one: private */
    if ((rc = sim_launch_own(&own, &own_part, a, err))) return rc;
    l = &own;
  }
  if (!a->abort_message) rc = sim_execute_in(c, e, a, l, err);
  if (l == &own) sim_launch_own_end(c, &own);
  else if (l)
    sim_launch_leave(c, l, proc, a->abort_message ? XRT_ABORTED : rc,
                     a->abort_message ? a->abort_message
                                      : err ? err->message : "failed");
  return rc;
}

/* ----------------------------------------------------------------------
 * Platform description and op support (ABI 1.0).
 *
 * The newest StableHLO version the simulator accepts is the one xrt's
 * parser implements (xrt_stablehlo_version()).  It is a literal here
 * because the plugin built as a shared object calls nothing in xrt.c;
 * test_sim_so checks that the two agree.
 * -------------------------------------------------------------------- */

#define SIM_STABLEHLO_MIN "0.9.0"
#define SIM_STABLEHLO_MAX "1.8.0"

static const xrt_attribute sim_platform_attrs[] = {
    {.name = "max_devices", .type = XRT_ATTRIBUTE_INT, .int_value = 1024},
    {.name = "simulated", .type = XRT_ATTRIBUTE_BOOL, .bool_value = true},
    {.name = "vendor", .type = XRT_ATTRIBUTE_STRING, .string_value = "xrt"},
};

/* Fills the fields both sides know: the core's struct may be older
 * (smaller) or newer (larger) than ours. */
static xrt_status sim_platform_describe(xrt_plugin_platform_desc *out,
                                        xrt_plugin_error *err) {
  if (!out || out->struct_size < sizeof out->struct_size)
    return sim_fail(err, XRT_INVALID_ARGUMENT, "bad platform description");
  xrt_plugin_platform_desc d;
  memset(&d, 0, sizeof d);
  d.stablehlo_min = SIM_STABLEHLO_MIN;
  d.stablehlo_max = SIM_STABLEHLO_MAX;
  d.capabilities = XRT_CAP_ASYNC | XRT_CAP_MULTI_DEVICE | XRT_CAP_COLLECTIVES |
                   XRT_CAP_FAULT_INJECTION | XRT_CAP_HOST_MEMORY;
  d.dtypes = 0; /* every element type */
  d.num_attributes =
      (int)(sizeof sim_platform_attrs / sizeof *sim_platform_attrs);
  d.attributes = sim_platform_attrs;
  size_t n = out->struct_size < sizeof d ? out->struct_size : sizeof d;
  d.struct_size = n;
  memcpy(out, &d, n);
  return XRT_OK;
}

/* The type op computes value id in: a quantized operand or result of a
 * compute op is dequantized to its expressed type first (see "Quantized
 * operands and results of compute ops"). */
static xrt_dtype sim_os_type(const xrt_ir_func *f, int32_t id) {
  const xrt_ir_type *t = &f->value_types[id];
  return t->quant ? t->quant->expressed : t->shape.dtype;
}

/* The element-type checks the lowerers of the ops below make (with the
 * same predicates: sim_dot_for, sim_clamp_for, sim_la_kernels, ...), so
 * that a YES here is a compile that succeeds.  0 and a reason in why when
 * the simulator would refuse. */
static int sim_os_types_ok(const xrt_ir_func *f, const xrt_ir_op *op,
                           char *why, size_t cap) {
  const int32_t *in = op->operands, *out = op->results;
  int nin = op->num_operands, nout = op->num_results;
  xrt_dtype bad = XRT_DTYPE_INVALID;
  size_t acc;
  sim_la_dotn_fn dotn;
  sim_la_store_fn store;
  switch (op->code) {
  case XRT_OP_IOTA:
    if (nout == 1 && !sim_num_supported(sim_os_type(f, out[0])))
      bad = sim_os_type(f, out[0]);
    break;
  case XRT_OP_CLAMP:
    if (nout == 1 && !sim_clamp_for(sim_os_type(f, out[0])))
      bad = sim_os_type(f, out[0]);
    break;
  case XRT_OP_DOT_GENERAL: case XRT_OP_DOT: {
    if (nin != 2 || nout != 1) break;
    xrt_dtype o = sim_os_type(f, out[0]);
    if (!sim_dot_for(sim_is_minifloat(o) ? XRT_F32 : o, &acc)) bad = o;
    else if (!sim_num_supported(sim_os_type(f, in[0])))
      bad = sim_os_type(f, in[0]);
    else if (!sim_num_supported(sim_os_type(f, in[1])))
      bad = sim_os_type(f, in[1]);
    break;
  }
  case XRT_OP_CONVOLUTION: case XRT_OP_DYNAMIC_CONV:
  case XRT_OP_CHLO_RAGGED_DOT: {
    if (nin < 2 || nout != 1) break;
    xrt_dtype o = sim_os_type(f, out[0]);
    if (!sim_la_kernels(sim_is_minifloat(o) ? XRT_F32 : o, &dotn, &store) ||
        !sim_num_supported(sim_os_type(f, in[0])) ||
        !sim_num_supported(sim_os_type(f, in[1])))
      bad = o;
    if (op->code == XRT_OP_CHLO_RAGGED_DOT && nin == 3 &&
        f->value_types[in[2]].shape.rank != 1) {
      snprintf(why, cap, "%s: only 1-D group_sizes are supported by the "
               "simulator", op->name);
      return 0;
    }
    break;
  }
  case XRT_OP_GATHER: case XRT_OP_DYNAMIC_GATHER:
    if (nin >= 2 && !sim_ix_is_int(f->value_types[in[1]].shape.dtype))
      bad = f->value_types[in[1]].shape.dtype;
    break;
  case XRT_OP_SCATTER: /* inputs..., scatter_indices, updates... */
    if (nin >= 3 && !sim_ix_is_int(f->value_types[in[nin / 2]].shape.dtype))
      bad = f->value_types[in[nin / 2]].shape.dtype;
    break;
  case XRT_OP_CHOLESKY: case XRT_OP_TRIANGULAR_SOLVE:
    if (nin >= 1 && !sim_la_linalg_type(sim_os_type(f, in[0])))
      bad = sim_os_type(f, in[0]);
    break;
  case XRT_OP_BATCH_NORM_INFERENCE: case XRT_OP_BATCH_NORM_TRAINING:
  case XRT_OP_BATCH_NORM_GRAD:
    if (nin >= 1 && !sim_dtype_is_float(sim_os_type(f, in[0])))
      bad = sim_os_type(f, in[0]);
    break;
  case XRT_OP_RNG_BIT_GENERATOR: {
    if (nout != 2) break;
    xrt_dtype o = f->value_types[out[1]].shape.dtype;
    if (sim_esize(o) > 8 || o == XRT_PRED || sim_dtype_is_complex(o) ||
        f->value_types[out[1]].quant)
      bad = o;
    break;
  }
  case XRT_OP_RNG: {
    if (nout != 1) break;
    xrt_dtype o = f->value_types[out[0]].shape.dtype;
    if (!sim_num_supported(o) || sim_dtype_is_complex(o)) bad = o;
    break;
  }
  case XRT_OP_CUSTOM_CALL: case XRT_OP_SEND: case XRT_OP_OUTFEED:
  case XRT_OP_INFEED: case XRT_OP_RECV:
    /* host calls and channels move tensors and tokens, not tuples (as
     * sim_lower_host_call and the send lowering refuse them) */
    for (int i = 0; i < nin + nout; i++)
      if (f->value_types[i < nin ? in[i] : out[i - nin]].kind ==
          XRT_TYPE_TUPLE) {
        snprintf(why, cap, "%s: tuple values cannot be passed to the host or "
                 "sent by the simulator", op->name);
        return 0;
      }
    break;
  default: break;
  }
  if (bad == XRT_DTYPE_INVALID) return 1;
  snprintf(why, cap, "%s is not supported for element type %s",
           op->name ? op->name : sim_opcode_name(op->code),
           sim_dtype_name(bad));
  return 0;
}

/* Whether the simulator compiles op: it has a lowerer, its values are ones
 * the simulator holds (the check sim_lower_op makes), an elementwise op has
 * a kernel for its types (sim_ew_kernel, as sim_lower_ew asks), and the
 * element types pass the lowerer's checks. */
static int sim_op_check(const xrt_allocator *al, const xrt_ir_func *f,
                        const xrt_ir_op *op, char *why, size_t cap) {
  const char *name = op->name ? op->name : sim_opcode_name(op->code);
  if (op->code == XRT_OP_RETURN || op->code == XRT_OP_FUNC_RETURN)
    return XRT_SUPPORT_YES; /* terminators: the plan binds their operands */
  sim_lower_fn lower = sim_lowerer(op->code);
  if (!lower) {
    snprintf(why, cap, "%s is not supported by the simulator", name);
    return XRT_SUPPORT_NO;
  }
  if (sim_values_why(f, op, why, cap)) return XRT_SUPPORT_NO;
  if (lower == sim_lower_ew) {
    if (op->num_results != 1 || op->num_operands > SIM_MAX_EW_IN) {
      snprintf(why, cap, "%s with %d operands and %d results is not "
               "supported by the simulator", name, (int)op->num_operands,
               (int)op->num_results);
      return XRT_SUPPORT_NO;
    }
    const void *ctx = NULL;
    int owned = 0;
    why[0] = 0;
    sim_ew_fn fn = sim_ew_kernel(al, f, op, &ctx, &owned, why, cap);
    if (owned > 0 && ctx) al->free(al->self, (void *)(uintptr_t)ctx);
    if (!fn) {
      if (!why[0]) snprintf(why, cap, "%s: elementwise op not supported", name);
      return XRT_SUPPORT_NO;
    }
    return XRT_SUPPORT_YES;
  }
  /* A compute op with quantized values dequantizes them first: each must
   * be a quantized type the kernels handle (sim_lower_quant's check). */
  sim_fcc fc;
  memset(&fc, 0, sizeof fc);
  fc.f = f;
  if (sim_quant_computes(&fc, op))
    for (int32_t i = 0; i < op->num_operands + op->num_results; i++) {
      int32_t id = i < op->num_operands ? op->operands[i]
                                        : op->results[i - op->num_operands];
      const xrt_ir_type *t = &f->value_types[id];
      sim_qv q;
      if (t->kind == XRT_TYPE_TENSOR && t->quant && !sim_q_value(t, &q)) {
        snprintf(why, cap, "%s: quantized type with storage %s is not "
                 "supported by the simulator", name,
                 sim_dtype_name(t->shape.dtype));
        return XRT_SUPPORT_NO;
      }
    }
  return sim_os_types_ok(f, op, why, cap) ? XRT_SUPPORT_YES : XRT_SUPPORT_NO;
}

static void *sim_system_alloc(void *self, size_t n) {
  (void)self;
  return malloc(n ? n : 1);
}
static void sim_system_free(void *self, void *p) {
  (void)self;
  free(p);
}
/* For the rare call without a client (there is none to ask). */
static const xrt_allocator sim_system_al = {NULL, sim_system_alloc,
                                            sim_system_free};

static int sim_op_support(void *client, const xrt_ir_module *module,
                          int32_t func, const xrt_ir_op *op,
                          xrt_plugin_error *why) {
  /* The answer does not depend on the client; its allocator is used. */
  const xrt_allocator *al = client ? &((sim_client *)client)->al
                                   : &sim_system_al;
  char tmp[sizeof why->message];
  char *msg = why ? why->message : tmp;
  msg[0] = 0;
  if (!module || !op || func < 0 || func >= module->num_funcs) {
    snprintf(msg, sizeof tmp, "bad op_support arguments");
    return XRT_SUPPORT_NO;
  }
  return sim_op_check(al, &module->funcs[func], op, msg, sizeof tmp);
}

/* Only the entry point is exported from the shared object (the rest is
 * built with -fvisibility=hidden). */
#if defined(XRT_PLUGIN_SHARED)
#define SIM_EXPORT XRT_PLUGIN_EXPORT
#else
#define SIM_EXPORT
#endif
/* ======================================================================
 * Fault kinds (xrt_device_inject_fault_kind)
 *
 * Each device keeps one one-shot counter per xrt_fault_kind: after + 1
 * operations of that kind until the one that fails, 0 when none is armed.
 * KERNEL reuses the execution fault of sim_inject_fault (after = kernels
 * run before the failing one); the others count operations: TRANSFER the
 * writes, reads and copies (plain or region) touching the device,
 * COLLECTIVE the collective ops the device enters, ALLOC the allocations.
 * ==================================================================== */

static const char *sim_fault_kind_name(int kind) {
  switch (kind) {
  case XRT_FAULT_KERNEL: return "kernel";
  case XRT_FAULT_TRANSFER: return "transfer";
  case XRT_FAULT_COLLECTIVE: return "collective";
  default: return "allocation";
  }
}

/* Counts one operation of kind on the device; true when it is the one
 * that must fail (the counter is then disarmed). */
static bool sim_fault_due(sim_client *c, int device, int kind) {
  _Atomic int64_t *f = &c->dev[device].fault_kind[kind];
  int64_t v = atomic_load_explicit(f, memory_order_relaxed);
  while (v > 0) {
    if (atomic_compare_exchange_weak(f, &v, v - 1)) return v == 1;
  }
  return false;
}

static xrt_status sim_fault_check(sim_client *c, int device, int kind,
                                  const char *op, xrt_plugin_error *err) {
  if (!sim_fault_due(c, device, kind)) return XRT_OK;
  return sim_fail(err, kind == XRT_FAULT_ALLOC ? XRT_RESOURCE_EXHAUSTED
                                               : XRT_INTERNAL,
                  "device %d: injected %s fault in a %s", device,
                  sim_fault_kind_name(kind), op);
}

static xrt_status sim_fault_coll(sim_cx *cx, const xrt_ir_op *op) {
  if (!cx->xa || !sim_fault_due(cx->exe->cl,
                                cx->xa->device, XRT_FAULT_COLLECTIVE))
    return XRT_OK;
  xrt_status rc = sim_coll_fail(cx, op, XRT_INTERNAL, "device %d: injected "
                                "collective fault", cx->xa->device);
  struct sim_launch *l = cx->launch;
  if (!l) return rc;
  pthread_mutex_lock(&l->mu);
  sim_coll_self_fail(cx, l, rc); /* releases the peers waiting on it */
  pthread_mutex_unlock(&l->mu);
  return rc;
}

static xrt_status sim_inject_fault_kind(void *client, int device, int kind,
                                        int64_t after,
                                        xrt_plugin_error *err) {
  sim_client *c = (sim_client *)client;
  xrt_status rc = sim_check_device(c, device, err);
  if (rc) return rc;
  if (kind < XRT_FAULT_KERNEL || kind > XRT_FAULT_ALLOC)
    return sim_fail(err, XRT_INVALID_ARGUMENT, "unknown fault kind %d", kind);
  if (after == INT64_MAX)
    return sim_fail(err, XRT_INVALID_ARGUMENT, "after is too large");
  int64_t armed = after < 0 ? 0 : after + 1;
  if (kind == XRT_FAULT_KERNEL) atomic_store(&c->dev[device].fault, armed);
  else atomic_store(&c->dev[device].fault_kind[kind], armed);
  return XRT_OK;
}

/* ======================================================================
 * Region copies (buffer_copy_region)
 *
 * Device memory is host memory, so a box copy between devices is a
 * strided memcpy.  Trailing dimensions that both arrays hold whole merge
 * with the innermost partial one into one contiguous run; the runs (cut
 * into pieces when there are few long ones) go over the destination
 * device's thread pool when the copy is large.
 * ==================================================================== */

typedef struct sim_region_job {
  const char *src;
  char *dst;
  int outer;                      /* dimensions walked */
  int64_t ext[XRT_MAX_RANK];      /* of the walked dimensions */
  int64_t sstride[XRT_MAX_RANK];  /* bytes */
  int64_t dstride[XRT_MAX_RANK];
  size_t run;                     /* bytes per run */
  int64_t cuts;                   /* pieces per run */
  size_t cut;                     /* bytes per piece (the last may be less) */
} sim_region_job;

static void sim_region_range(void *ctx, int64_t b, int64_t e) {
  const sim_region_job *j = (const sim_region_job *)ctx;
  for (int64_t item = b; item < e; item++) {
    int64_t r = item / j->cuts, piece = item % j->cuts;
    int64_t so = 0, dof = 0;
    for (int d = j->outer - 1; d >= 0; d--) {
      int64_t i = r % j->ext[d];
      r /= j->ext[d];
      so += i * j->sstride[d];
      dof += i * j->dstride[d];
    }
    size_t off = (size_t)piece * j->cut;
    size_t n = j->run - off < j->cut ? j->run - off : j->cut;
    memcpy(j->dst + dof + off, j->src + so + off, n);
  }
}

/* Byte strides of a row-major array's dimensions; its size in *bytes. */
static void sim_region_strides(const int64_t *dims, int rank, size_t es,
                               int64_t *stride, size_t *bytes) {
  int64_t st = (int64_t)es;
  for (int d = rank - 1; d >= 0; d--) {
    stride[d] = st;
    st *= dims[d];
  }
  *bytes = (size_t)st;
}

static xrt_status sim_region_check(const xrt_plugin_copy_region_args *a,
                                   xrt_plugin_error *err) {
  if (!a || a->struct_size < sizeof *a || a->rank < 0 ||
      a->rank > XRT_MAX_RANK || a->elem_bytes == 0 ||
      (a->rank && (!a->src_dims || !a->src_start || !a->dst_dims ||
                   !a->dst_start || !a->extent)))
    return sim_fail(err, XRT_INVALID_ARGUMENT, "bad region copy arguments");
  for (int d = 0; d < a->rank; d++)
    if (a->extent[d] < 0 || a->src_start[d] < 0 || a->dst_start[d] < 0 ||
        a->src_start[d] + a->extent[d] > a->src_dims[d] ||
        a->dst_start[d] + a->extent[d] > a->dst_dims[d])
      return sim_fail(err, XRT_OUT_OF_RANGE, "region copy: dimension %d "
                      "(extent %lld) leaves an array", d,
                      (long long)a->extent[d]);
  return XRT_OK;
}

static xrt_status sim_buffer_copy_region(void *client,
                                         const xrt_plugin_copy_region_args *a,
                                         xrt_plugin_error *err) {
  sim_client *c = (sim_client *)client;
  xrt_status s = sim_region_check(a, err);
  if (s) return s;
  int r = a->rank;
  sim_region_job j;
  memset(&j, 0, sizeof j);
  int64_t ss[XRT_MAX_RANK], ds[XRT_MAX_RANK];
  size_t sbytes, dbytes;
  sim_region_strides(a->src_dims, r, a->elem_bytes, ss, &sbytes);
  sim_region_strides(a->dst_dims, r, a->elem_bytes, ds, &dbytes);
  if ((s = sim_check_mem(c, a->src_device, a->src, sbytes, err)) ||
      (s = sim_check_mem(c, a->dst_device, a->dst, dbytes, err)) ||
      (s = sim_fault_check(c, a->src_device, XRT_FAULT_TRANSFER,
                           "region copy (source)", err)) ||
      (s = sim_fault_check(c, a->dst_device, XRT_FAULT_TRANSFER,
                           "region copy (destination)", err)))
    return s;
  int64_t so = 0, dof = 0, runs = 1;
  for (int d = 0; d < r; d++) {
    if (a->extent[d] == 0) return XRT_OK;
    so += a->src_start[d] * ss[d];
    dof += a->dst_start[d] * ds[d];
  }
  /* Dimensions after `inner` are whole in both arrays: one run. */
  int inner = r - 1;
  while (inner >= 0 && a->extent[inner] == a->src_dims[inner] &&
         a->extent[inner] == a->dst_dims[inner])
    inner--;
  j.outer = inner < 0 ? 0 : inner;
  j.run = a->elem_bytes;
  for (int d = r - 1; d >= j.outer && d >= 0; d--) j.run *= (size_t)a->extent[d];
  for (int d = 0; d < j.outer; d++) {
    j.ext[d] = a->extent[d];
    j.sstride[d] = ss[d];
    j.dstride[d] = ds[d];
    runs *= a->extent[d];
  }
  j.src = (const char *)a->src + so;
  j.dst = (char *)a->dst + dof;
  /* Few long runs: cut each into grain-sized pieces for the pool. */
  j.cuts = 1;
  j.cut = j.run;
  if (runs < 64 && j.run >= 2 * SIM_PAR_GRAIN) {
    j.cuts = (int64_t)((j.run + SIM_PAR_GRAIN - 1) / SIM_PAR_GRAIN);
    j.cut = SIM_PAR_GRAIN;
  }
  int64_t items = runs * j.cuts;
  size_t total = j.run * (size_t)runs;
  sim_cx cx;
  memset(&cx, 0, sizeof cx);
  cx.tp = sim_tpool_of(c, a->dst_device);
  if (total < SIM_PAR_MIN || !cx.tp) {
    sim_region_range(&j, 0, items);
    return XRT_OK;
  }
  int64_t per_item = (int64_t)(total / (size_t)items);
  int64_t grain = (int64_t)SIM_PAR_GRAIN / (per_item > 0 ? per_item : 1);
  sim_parallel_for(&cx, items, grain < 1 ? 1 : grain, sim_region_range, &j);
  return XRT_OK;
}
/* ======================================================================
 * Host memory as device memory (zero-copy DLPack)
 *
 * Device memory is host memory, so buffer_host_pointer is the identity.
 * buffer_wrap_host adopts host memory the core hands in: such memory has
 * no sim_blk header in front of it, so the wrapped addresses are kept in
 * one hash set, keyed by (client, device, address), that sim_buffer_free
 * and sim_check_mem consult first (only while it is non-empty: an atomic
 * count keeps the common path to one load).  The same address may be
 * wrapped several times with the same size (a count); another size is
 * declined, so that accounting stays exact.  The core never asks to wrap
 * memory of one of the sim's own live blocks on that device (it copies
 * instead), so an address is either wrapped or a block, never both.
 *
 * Wrapped bytes count against the device's memory budget like allocated
 * ones, so an import behaves the same whether it is copied or not.
 * Alignment: 16 bytes, the natural alignment of every element type (the
 * kernels make no wider assumption: the vector loops load unaligned).
 * ==================================================================== */

#define SIM_ADOPT_ALIGN 16

typedef struct sim_adopted {
  const sim_client *c; /* NULL: empty slot */
  const void *p;
  int device;
  int count;
  size_t bytes;
} sim_adopted;

static pthread_mutex_t sim_adopts_mu = PTHREAD_MUTEX_INITIALIZER;
static sim_adopted *sim_adopts;        /* open addressing, linear probing */
static size_t sim_adopts_cap;          /* a power of two, or 0 */
static size_t sim_adopts_n;            /* used slots */
static _Atomic size_t sim_adopts_live; /* == sim_adopts_n, read unlocked */

static size_t sim_adopt_hash(const sim_client *c, int device, const void *p) {
  uint64_t h = (uint64_t)(uintptr_t)p ^ ((uint64_t)(uintptr_t)c << 7) ^
               (uint64_t)(unsigned)device;
  h ^= h >> 33;
  h *= 0xff51afd7ed558ccdULL;
  h ^= h >> 33;
  return (size_t)h;
}

/* The slot of the key, or of the empty slot ending its probe. Locked. */
static size_t sim_adopt_slot(const sim_client *c, int device, const void *p) {
  size_t mask = sim_adopts_cap - 1, i = sim_adopt_hash(c, device, p) & mask;
  while (sim_adopts[i].c &&
         (sim_adopts[i].c != c || sim_adopts[i].device != device ||
          sim_adopts[i].p != p))
    i = (i + 1) & mask;
  return i;
}

/* Doubles the table (or makes the first one). Locked.  The table is
 * process-wide (every client's imports), so it comes from malloc, not a
 * client's allocator; it is freed as soon as no import is live. */
static bool sim_adopts_grow(void) {
  size_t cap = sim_adopts_cap ? sim_adopts_cap * 2 : 16;
  sim_adopted *old = sim_adopts, *t = (sim_adopted *)calloc(cap, sizeof *t);
  if (!t) return false;
  size_t old_cap = sim_adopts_cap;
  sim_adopts = t;
  sim_adopts_cap = cap;
  for (size_t i = 0; i < old_cap; i++)
    if (old[i].c) sim_adopts[sim_adopt_slot(old[i].c, old[i].device, old[i].p)] =
        old[i];
  free(old);
  return true;
}

/* Empties slot i, moving later entries of its probe run back (no
 * tombstones); frees the table when it becomes empty. Locked. */
static void sim_adopts_remove(size_t i) {
  size_t mask = sim_adopts_cap - 1, j = i;
  sim_adopts[i].c = NULL;
  for (;;) {
    j = (j + 1) & mask;
    if (!sim_adopts[j].c) break;
    size_t home = sim_adopt_hash(sim_adopts[j].c, sim_adopts[j].device,
                                sim_adopts[j].p) & mask;
    /* j may move to the hole i unless its home lies cyclically in (i, j] */
    if (i <= j ? (i < home && home <= j) : (i < home || home <= j)) continue;
    sim_adopts[i] = sim_adopts[j];
    sim_adopts[j].c = NULL;
    i = j;
  }
  if (--sim_adopts_n == 0) {
    free(sim_adopts);
    sim_adopts = NULL;
    sim_adopts_cap = 0;
  }
  atomic_store(&sim_adopts_live, sim_adopts_n);
}

/* The size of wrapped memory mem of device, if it is wrapped memory. */
static bool sim_adopt_bytes(const sim_client *c, int device, const void *mem,
                           size_t *bytes) {
  if (atomic_load_explicit(&sim_adopts_live, memory_order_acquire) == 0)
    return false;
  pthread_mutex_lock(&sim_adopts_mu);
  bool found = false;
  if (sim_adopts_cap) {
    sim_adopted *w = &sim_adopts[sim_adopt_slot(c, device, mem)];
    if ((found = w->c != NULL)) *bytes = w->bytes;
  }
  pthread_mutex_unlock(&sim_adopts_mu);
  return found;
}

/* sim_buffer_free of wrapped memory: forgets one wrap of mem (the memory
 * is the importer's) and returns true; false if mem is not wrapped. */
static bool sim_adopt_forget(sim_client *c, int device, void *mem) {
  if (atomic_load_explicit(&sim_adopts_live, memory_order_acquire) == 0)
    return false;
  pthread_mutex_lock(&sim_adopts_mu);
  size_t bytes = 0;
  bool found = false;
  if (sim_adopts_cap) {
    size_t i = sim_adopt_slot(c, device, mem);
    if ((found = sim_adopts[i].c != NULL)) {
      bytes = sim_adopts[i].bytes;
      if (--sim_adopts[i].count == 0) sim_adopts_remove(i);
    }
  }
  pthread_mutex_unlock(&sim_adopts_mu);
  if (found) {
    sim_device *d = &c->dev[device];
    sim_dev_lock(d);
    d->used -= bytes;
    sim_dev_unlock(d);
  }
  return found;
}

/* Charges bytes to device d's budget. */
static xrt_status sim_adopt_charge(sim_device *d, int device, size_t bytes,
                                  xrt_plugin_error *err) {
  sim_dev_lock(d);
  uint64_t avail = d->limit - d->used;
  bool fits = (uint64_t)bytes <= avail;
  if (fits) d->used += bytes;
  sim_dev_unlock(d);
  if (!fits)
    return sim_fail(err, XRT_RESOURCE_EXHAUSTED, "device %d: cannot adopt "
                    "%zu bytes of host memory; %llu of %llu bytes available",
                    device, bytes, (unsigned long long)avail,
                    (unsigned long long)d->limit);
  return XRT_OK;
}

/* Records one more wrap of host (bytes long) on device. Locked. */
static xrt_status sim_adopt_add(sim_client *c, int device, void *host,
                               size_t bytes, xrt_plugin_error *err) {
  if (sim_adopts_cap) {
    sim_adopted *w = &sim_adopts[sim_adopt_slot(c, device, host)];
    if (w->c && w->bytes != bytes)
      return sim_fail(err, XRT_FAILED_PRECONDITION, "device %d already "
                      "adopted %zu bytes at %p", device, w->bytes, host);
    if (w->c) {
      w->count++;
      return XRT_OK;
    }
  }
  if ((sim_adopts_n + 1) * 2 > sim_adopts_cap && !sim_adopts_grow())
    return sim_fail(err, XRT_RESOURCE_EXHAUSTED, "out of host memory");
  sim_adopted *w = &sim_adopts[sim_adopt_slot(c, device, host)];
  *w = (sim_adopted){c, host, device, 1, bytes};
  atomic_store(&sim_adopts_live, ++sim_adopts_n);
  return XRT_OK;
}

static void *sim_buffer_host_pointer(void *client, int device, void *mem) {
  (void)client;
  (void)device;
  return mem;
}

static xrt_status sim_buffer_wrap_host(void *client, int device, void *host,
                                       size_t bytes, void **out_mem,
                                       xrt_plugin_error *err) {
  sim_client *c = (sim_client *)client;
  xrt_status s = sim_check_device(c, device, err);
  if (s) return s;
  if (!out_mem || !host)
    return sim_fail(err, XRT_INVALID_ARGUMENT, "host or out_mem is NULL");
  *out_mem = NULL;
  if ((uintptr_t)host % SIM_ADOPT_ALIGN)
    return sim_fail(err, XRT_FAILED_PRECONDITION, "host memory at %p is not "
                    "%d-byte aligned", host, SIM_ADOPT_ALIGN);
  if ((s = sim_adopt_charge(&c->dev[device], device, bytes, err))) return s;
  pthread_mutex_lock(&sim_adopts_mu);
  s = sim_adopt_add(c, device, host, bytes, err);
  pthread_mutex_unlock(&sim_adopts_mu);
  if (s) {
    sim_dev_lock(&c->dev[device]);
    c->dev[device].used -= bytes;
    sim_dev_unlock(&c->dev[device]);
    return s;
  }
  *out_mem = host;
  return XRT_OK;
}
/* ----------------------------------------------------------------------
 * Tracing and logging through the core
 *
 * The core hands the plugin a host services table at client creation
 * (xrt_plugin_client_args.host, ABI 1.0).  The simulator keeps it when it
 * has the calls it uses, logs its client's shape at debug level, and
 * reports each collective a participant runs as a "collective" event on
 * its device's track.  A collective step is routed through
 * sim_run_traced_coll only when the client has those services, and that
 * asks whether a trace is recording before reading the clock, so an
 * untraced collective costs one call more.
 * -------------------------------------------------------------------- */

/* Keeps the core's services when they are complete enough to use. */
static void sim_trace_attach(sim_client *c,
                             const xrt_plugin_client_args *args) {
  c->host = NULL;
  if (!XRT_STRUCT_HAS(args, xrt_plugin_client_args, host) || !args->host)
    return;
  const xrt_plugin_host_api *h = args->host;
  if (!XRT_STRUCT_HAS(h, xrt_plugin_host_api, now_ns)) return;
  c->host = h;
  if (h->log) {
    char msg[160];
    snprintf(msg, sizeof msg, "simulator client: %d device(s) of %llu bytes, "
             "%d thread(s) per device", c->ndev,
             (unsigned long long)args->device_memory_bytes,
             args->threads_per_device);
    h->log(h->ctx, XRT_LOG_DEBUG, "sim", msg);
  }
}

/* The kernel of a collective op (NULL for other ops). */
static sim_run_fn sim_coll_runner(xrt_opcode code) {
  switch (code) {
  case XRT_OP_ALL_REDUCE: return sim_run_all_reduce;
  case XRT_OP_ALL_GATHER: return sim_run_all_gather;
  case XRT_OP_REDUCE_SCATTER: return sim_run_reduce_scatter;
  case XRT_OP_ALL_TO_ALL: return sim_run_all_to_all;
  case XRT_OP_COLLECTIVE_PERMUTE: return sim_run_collective_permute;
  case XRT_OP_COLLECTIVE_BROADCAST: return sim_run_collective_broadcast;
  case XRT_OP_COLLECTIVE_REDUCE: return sim_run_collective_reduce;
  default: return NULL;
  }
}

/* "all_reduce" for "stablehlo.all_reduce". */
static const char *sim_trace_op_name(const xrt_ir_op *op) {
  const char *dot = op->name ? strrchr(op->name, '.') : NULL;
  return dot ? dot + 1 : op->name ? op->name : "collective";
}

/* A collective step that reports itself when a trace is recording. */
static xrt_status sim_run_traced_coll(const sim_step *st, void **vals,
                                      sim_cx *cx) {
  const xrt_plugin_host_api *h = cx->exe->cl->host;
  sim_run_fn run = sim_coll_runner(st->op->code);
  if (!h->trace_enabled(h->ctx)) return run(st, vals, cx);
  int64_t t0 = h->now_ns(h->ctx);
  xrt_status rc = run(st, vals, cx);
  int64_t t1 = h->now_ns(h->ctx);
  h->trace_event(h->ctx, cx->xa ? cx->xa->device : -1, "collective",
                 sim_trace_op_name(st->op), t0, t1);
  return rc;
}

/* sim_lower_op's hook: routes a lowered collective through the tracer
 * when the client has the core's trace services. */
static void sim_trace_wrap(const sim_fcc *fc, sim_step *st) {
  const sim_client *cl = fc->cc->exe ? fc->cc->exe->cl : NULL;
  const xrt_plugin_host_api *h = cl ? cl->host : NULL;
  if (!h || !h->trace_enabled || !h->trace_event || !h->now_ns) return;
  if (st->run && st->op && st->run == sim_coll_runner(st->op->code))
    st->run = sim_run_traced_coll;
}

/* ======================================================================
 * The plugin table
 * ==================================================================== */

/* ======================================================================
 * Serialized executables (ABI 1.1: executable_serialize, serialized_free,
 * executable_deserialize; the persistent compilation cache of issue #7)
 *
 * The bytes are the verified IR module the executable was planned from,
 * in a binary form, its entry, and the fusion decisions the planner made
 * for it: loading them skips parsing, the normalizer and the verifier
 * (most of a cold compile) and the search for fused groups, and re-runs
 * the rest of the planner.  They stay valid across processes of the same
 * simulator version and host (native byte order, checked by a marker).
 *
 *   "XSIMEXE1", u32 format version (4), u32 byte-order marker, u64 XXH3-64
 *   of every byte after it, i32 entry,
 *   the module: name, custom calls, replicas, partitions, version, funcs;
 *   each func: name, public, value count, a table of the distinct value
 *   types and a u32 index into it per value, body region, result types,
 *   loc;
 *   each region: arg ids, ops; each op: code, u8 1 when its name is the
 *   code's (else 0 and the name), operand and result ids, attrs, regions,
 *   loc, callee; types, attrs and literals nest; an attribute's name is a
 *   u8 index into the last SIM_SER_NAMES names or SIM_SER_NEWNAME and the
 *   name;
 *   the fusion decisions: i32 count, then that many i32: per block the
 *   planner fused, in planning order, its op count n (terminator aside)
 *   and n group ids (-1: alone, i: a root, > i: the root absorbing it;
 *   sim_fz_plan_block).  A count of 0 (say, a decision that could not be
 *   recorded) makes the load search as a cold compile does.
 * Versions 3 and 2 (types in full per value, op names as strings, no
 * decisions) are still read, and re-planned from scratch.
 *
 * Strings are a u32 length + 1 (0: NULL) and the bytes; SIM_SER_SAME
 * repeats the previous string of the same slot (op names and file names
 * repeat op after op).  Integers are native-endian.
 *
 * Deserialize reads the bytes as untrusted (they come from disk): every
 * read is bounds-checked, every count bounded by the bytes left, every
 * value id, callee, opcode, dtype, rank, dim and literal size checked, no
 * tensor larger than a device's memory, and nesting depth limited;
 * anything wrong is XRT_INVALID_ARGUMENT.  The bytes carry their own
 * XXH3-64, checked first, so that damage a store without a checksum lets
 * through is refused; it is skipped when the core says its store checked
 * a hash over exactly these bytes (bytes_verified, ABI 1.2: xrt's disk
 * cache, whose file checksum covers them; hashing them twice was a
 * twentieth of a disk cache hit).  A hash is not a validity
 * check, though (bytes can be damaged and resealed, or written on
 * purpose), so the rebuilt module is then validated to the level the
 * planner relies on ("validating what was read" below: scoping of values,
 * terminators, op names matching codes, and a copy of the verifier's
 * rules for each op that may load from bytes; other ops and quantized
 * types are refused), and a module the planner still refuses is
 * XRT_INVALID_ARGUMENT too.  The fusion decisions are taken only after
 * the checks of sim_fz_grouping_ok (cheaper than the search they replace:
 * roots and members of fusable kinds, members before their root over its
 * loop space, every use of a member's value inside its group); decisions
 * that do not fit the blocks make the load XRT_INVALID_ARGUMENT.  The
 * rebuilt module lives in blocks of a sim_pool that the executable's own
 * pool adopts.
 * ==================================================================== */

#define SIM_SER_MAGIC "XSIMEXE1"
/* 3: a 2-D integer tensor attribute (replica groups, source-target pairs)
 * keeps its shape, so collectives load; 2 is still read, without them.
 * 4: a function's value types are a table of distinct types and an index
 * per value, an op named as its code says has a flag instead of the name,
 * and the fusion decisions follow the functions; 3 and 2 are still read
 * (and re-planned from scratch). */
#define SIM_SER_VERSION 4u
#define SIM_SER_ORDER 0x01020304u
#define SIM_SER_SAME 0xffffffffu
#define SIM_SER_DEPTH 64 /* nesting of regions, types and attributes */
#define SIM_SER_HASH_AT 16 /* offset of the hash; it covers what follows */

#define XXH_INLINE_ALL
#include <xxhash.h>

enum { SIM_SLOT_OPNAME, SIM_SLOT_FILE, SIM_SLOT_COUNT };

/* Version 4: an attribute name is a u8, the index of one of the last
 * SIM_SER_NAMES distinct names written (a ring both sides keep alike), or
 * SIM_SER_NEWNAME and the string, which then takes the next ring slot. */
#define SIM_SER_NAMES 16
#define SIM_SER_NEWNAME 0xffu

/* ---- writing ---- */

typedef struct sim_wbuf {
  unsigned char *p;
  size_t n, cap;
  int oom;
  const char *last[SIM_SLOT_COUNT];
  const char *names[SIM_SER_NAMES]; /* the ring of attribute names */
  unsigned nnames;
} sim_wbuf;

static void sim_w(sim_wbuf *w, const void *src, size_t n) {
  if (w->oom || !n) return;
  if (n > w->cap - w->n) {
    size_t cap = w->cap ? w->cap : 4096;
    while (cap - w->n < n) {
      if (cap > SIZE_MAX / 2) {
        w->oom = 1;
        return;
      }
      cap *= 2;
    }
    unsigned char *p = (unsigned char *)realloc(w->p, cap);
    if (!p) {
      w->oom = 1;
      return;
    }
    w->p = p;
    w->cap = cap;
  }
  memcpy(w->p + w->n, src, n);
  w->n += n;
}

static void sim_w32(sim_wbuf *w, uint32_t v) { sim_w(w, &v, sizeof v); }
static void sim_wi32(sim_wbuf *w, int32_t v) { sim_w(w, &v, sizeof v); }
static void sim_wi64(sim_wbuf *w, int64_t v) { sim_w(w, &v, sizeof v); }
static void sim_wu8(sim_wbuf *w, unsigned v) {
  unsigned char b = (unsigned char)v;
  sim_w(w, &b, 1);
}

/* n bytes of s (NULL allowed); slot >= 0 lets a repeat cost 4 bytes. */
static void sim_wstrn(sim_wbuf *w, const char *s, size_t n, int slot) {
  if (slot >= 0 && s && w->last[slot] &&
      (s == w->last[slot] ||
       (strlen(w->last[slot]) == n && memcmp(w->last[slot], s, n) == 0))) {
    sim_w32(w, SIM_SER_SAME);
    return;
  }
  if (s && n >= SIM_SER_SAME - 1) {
    w->oom = 1;
    return;
  }
  sim_w32(w, s ? (uint32_t)n + 1 : 0);
  if (s) sim_w(w, s, n);
  if (slot >= 0 && s) w->last[slot] = s;
}

static void sim_wstr(sim_wbuf *w, const char *s, int slot) {
  sim_wstrn(w, s, s ? strlen(s) : 0, slot);
}

static void sim_wids(sim_wbuf *w, const int32_t *ids, int32_t n) {
  sim_wi32(w, n);
  if (n > 0) sim_w(w, ids, sizeof *ids * (size_t)n);
}

static void sim_wloc(sim_wbuf *w, const xrt_ir_loc *loc) {
  sim_wstr(w, loc->file, SIM_SLOT_FILE);
  sim_wi32(w, loc->line);
  sim_wi32(w, loc->col);
}

static void sim_wtype(sim_wbuf *w, const xrt_ir_type *t) {
  sim_wu8(w, t->kind);
  if (t->kind == XRT_TYPE_TUPLE) {
    sim_wi32(w, t->num_elems);
    for (int32_t i = 0; i < t->num_elems; i++) sim_wtype(w, &t->elems[i]);
    return;
  }
  if (t->kind != XRT_TYPE_TENSOR) return;
  sim_wu8(w, (unsigned)t->shape.dtype);
  sim_wu8(w, (unsigned)t->shape.rank);
  sim_w(w, t->shape.dims, sizeof(int64_t) * (size_t)t->shape.rank);
  const xrt_ir_quant *q = t->quant;
  sim_wu8(w, q != NULL);
  if (!q) return;
  sim_wu8(w, (unsigned)q->storage);
  sim_wu8(w, (unsigned)q->expressed);
  sim_wi64(w, q->storage_min);
  sim_wi64(w, q->storage_max);
  sim_wi32(w, q->axis);
  sim_wi32(w, q->num_scales);
  sim_w(w, q->scales, sizeof(double) * (size_t)q->num_scales);
  sim_w(w, q->zero_points, sizeof(int64_t) * (size_t)q->num_scales);
}

static void sim_wlit(sim_wbuf *w, const xrt_ir_literal *l) {
  sim_wtype(w, &l->type);
  sim_wu8(w, l->splat);
  sim_wi64(w, (int64_t)l->bytes);
  sim_w(w, l->data, l->bytes);
}

static void sim_wname(sim_wbuf *w, const char *s) {
  for (unsigned k = 0; s && k < SIM_SER_NAMES && k < w->nnames; k++)
    if (strcmp(w->names[k], s) == 0) {
      sim_wu8(w, k);
      return;
    }
  sim_wu8(w, SIM_SER_NEWNAME);
  sim_wstr(w, s, -1);
  if (s) w->names[w->nnames++ % SIM_SER_NAMES] = s;
}

static void sim_wattr(sim_wbuf *w, const xrt_ir_attr *a) {
  sim_wname(w, a->name);
  sim_wu8(w, a->kind);
  sim_wi64(w, a->i);
  sim_w(w, &a->f, sizeof a->f);
  sim_wi64(w, a->n);
  switch (a->kind) {
  case XRT_ATTR_STRING:
    sim_wstrn(w, a->s, (size_t)a->n, -1);
    break;
  case XRT_ATTR_ENUM:
  case XRT_ATTR_SYMBOL:
    sim_wstr(w, a->s, -1);
    break;
  case XRT_ATTR_INTS: {
    sim_w(w, a->ints, sizeof(int64_t) * (size_t)a->n);
    int rows = a->lit && a->lit->type.shape.rank == 2; /* version 3 */
    sim_wu8(w, (unsigned)rows);
    if (rows) {
      sim_wi64(w, a->lit->type.shape.dims[0]);
      sim_wi64(w, a->lit->type.shape.dims[1]);
    }
    break;
  }
  case XRT_ATTR_DENSE:
    sim_wlit(w, a->lit);
    break;
  case XRT_ATTR_TYPE:
    sim_wtype(w, a->type);
    break;
  case XRT_ATTR_LIST:
  case XRT_ATTR_DICT:
    sim_wi32(w, a->num_items);
    for (int32_t i = 0; i < a->num_items; i++) sim_wattr(w, &a->items[i]);
    break;
  default:
    break;
  }
}

static void sim_wregion(sim_wbuf *w, const xrt_ir_region *r);

static void sim_wop(sim_wbuf *w, const xrt_ir_op *op) {
  sim_wi32(w, (int32_t)op->code);
  const char *cn = sim_opcode_name(op->code);
  int named = cn && op->name && strcmp(op->name, cn) == 0;
  sim_wu8(w, (unsigned)named); /* 1: the name is the code's */
  if (!named) sim_wstr(w, op->name, SIM_SLOT_OPNAME);
  sim_wids(w, op->operands, op->num_operands);
  sim_wids(w, op->results, op->num_results);
  sim_wi32(w, op->num_attrs);
  for (int32_t i = 0; i < op->num_attrs; i++) sim_wattr(w, &op->attrs[i]);
  sim_wi32(w, op->num_regions);
  for (int32_t i = 0; i < op->num_regions; i++)
    sim_wregion(w, &op->regions[i]);
  sim_wloc(w, &op->loc);
  sim_wi32(w, op->callee);
}

static void sim_wregion(sim_wbuf *w, const xrt_ir_region *r) {
  sim_wids(w, r->args, r->num_args);
  sim_wi32(w, r->num_ops);
  for (int32_t i = 0; i < r->num_ops; i++) sim_wop(w, &r->ops[i]);
}

/* Plain tensor types (and tokens) that are equal; others never are (the
 * table keeps them apart, which costs bytes, not correctness). */
static int sim_wsame_type(const xrt_ir_type *a, const xrt_ir_type *b) {
  if (a->kind != b->kind) return 0;
  if (a->kind == XRT_TYPE_TOKEN) return 1;
  if (a->kind != XRT_TYPE_TENSOR || a->quant || b->quant) return 0;
  return a->shape.dtype == b->shape.dtype && a->shape.rank == b->shape.rank &&
         memcmp(a->shape.dims, b->shape.dims,
                sizeof(int64_t) * (size_t)a->shape.rank) == 0;
}

#define SIM_SER_TYPE_LOOKBACK 16 /* table entries searched for a type */

/* The value types: a table of distinct types (a type is looked for among
 * the last entries only, so writing stays linear), then one u32 index
 * per value. */
static void sim_wvalue_types(sim_wbuf *w, const xrt_ir_func *f) {
  int32_t n = f->num_values, nt = 0;
  int32_t *tab = (int32_t *)malloc(sizeof(int32_t) * (size_t)(n + 1));
  uint32_t *idx = (uint32_t *)malloc(sizeof(uint32_t) * (size_t)(n + 1));
  if (!tab || !idx) {
    free(tab);
    free(idx);
    w->oom = 1;
    return;
  }
  const xrt_ir_type *vt = f->value_types;
  for (int32_t i = 0; i < n; i++) {
    int32_t k = nt - 1, stop = nt - SIM_SER_TYPE_LOOKBACK;
    while (k >= 0 && k >= stop && !sim_wsame_type(&vt[tab[k]], &vt[i])) k--;
    if (k < 0 || k < stop) tab[k = nt++] = i;
    idx[i] = (uint32_t)k;
  }
  sim_wi32(w, nt);
  for (int32_t k = 0; k < nt; k++) sim_wtype(w, &vt[tab[k]]);
  sim_w(w, idx, sizeof *idx * (size_t)n);
  free(tab);
  free(idx);
}

static void sim_wfunc(sim_wbuf *w, const xrt_ir_func *f) {
  sim_wstr(w, f->name, -1);
  sim_wu8(w, f->is_public);
  sim_wi32(w, f->num_values);
  sim_wvalue_types(w, f);
  sim_wregion(w, &f->body);
  sim_wi32(w, f->num_results);
  for (int32_t i = 0; i < f->num_results; i++)
    sim_wtype(w, &f->result_types[i]);
  sim_wloc(w, &f->loc);
}

static xrt_status sim_executable_serialize(void *executable, void **out_data,
                                           size_t *out_size,
                                           xrt_plugin_error *err) {
  const sim_exe *e = (const sim_exe *)executable;
  if (!e || !out_data || !out_size || !e->m)
    return sim_fail(err, XRT_INVALID_ARGUMENT, "bad serialize arguments");
  *out_data = NULL;
  *out_size = 0;
  const xrt_ir_module *m = e->m;
  sim_wbuf w;
  memset(&w, 0, sizeof w);
  sim_w(&w, SIM_SER_MAGIC, 8);
  sim_w32(&w, SIM_SER_VERSION);
  sim_w32(&w, SIM_SER_ORDER);
  sim_wi64(&w, 0); /* the hash, below */
  sim_wi32(&w, e->entry);
  sim_wstr(&w, m->name, -1);
  sim_wi32(&w, m->num_custom_calls);
  sim_wi32(&w, m->num_replicas);
  sim_wi32(&w, m->num_partitions);
  sim_wstr(&w, m->stablehlo_version, -1);
  sim_wi32(&w, m->num_funcs);
  for (int32_t i = 0; i < m->num_funcs; i++) sim_wfunc(&w, &m->funcs[i]);
  /* the fusion decisions (none when one could not be recorded) */
  int32_t nfz = e->fzrec_lost ? 0 : e->fzrec.n;
  sim_wi32(&w, nfz);
  if (nfz) sim_w(&w, e->fzrec.p, sizeof(int32_t) * (size_t)nfz);
  if (w.oom) {
    free(w.p);
    return sim_fail(err, XRT_RESOURCE_EXHAUSTED, "out of host memory");
  }
  uint64_t h = XXH3_64bits(w.p + SIM_SER_HASH_AT + 8,
                           w.n - SIM_SER_HASH_AT - 8);
  memcpy(w.p + SIM_SER_HASH_AT, &h, sizeof h);
  *out_data = w.p;
  *out_size = w.n;
  return XRT_OK;
}

static void sim_serialized_free(void *data) { free(data); }

/* ---- reading ---- */

/* A bump allocator over blocks of a sim_pool (zeroed, 8-byte aligned). */
typedef struct sim_rbuf {
  const unsigned char *p;
  size_t n, at;
  const char *why; /* first problem found; reading stops there */
  int depth;
  sim_pool pool;
  char *blk;
  size_t blk_left;
  const char *last[SIM_SLOT_COUNT];
  const char *names[SIM_SER_NAMES]; /* version 4: as sim_wbuf's */
  unsigned nnames;
  /* The function being read: value ids must be below num_values. */
  int32_t num_values, num_funcs, num_custom_calls;
  /* A tensor larger than a device's memory cannot run (and would have
   * the planner allocate it for an iota): the bytes are refused. */
  uint64_t max_tensor_bytes;
  uint32_t version; /* of the bytes (SIM_SER_VERSION, 3 or 2) */
  int verified; /* the core's store checked a hash over them (skip ours) */
  /* Version 4: the fusion decisions (nfz ints), for sim_compile_given. */
  const int32_t *fz;
  int32_t nfz;
} sim_rbuf;

static int sim_rbad(sim_rbuf *r, const char *why) {
  if (!r->why) r->why = why;
  return 0;
}

/* A new block for at least bytes (8-aligned); 0 when out of memory. */
static int sim_rblock(sim_rbuf *r, size_t bytes) {
  /* blocks below the usual mmap threshold, not zeroed: a hit touches
   * only the bytes it uses and reuses freed heap memory (1 MB blocks
   * were mapped and faulted in afresh on every load) */
  size_t sz = bytes > ((size_t)64 << 10) ? bytes : ((size_t)64 << 10);
  char *b = (char *)sim_pool_raw(&r->pool, sz);
  if (!b) return sim_rbad(r, "out of host memory");
  r->blk = b;
  r->blk_left = sz;
  return 1;
}

/* Not zeroed: for bytes the caller overwrites at once. */
static inline void *sim_ralloc_raw(sim_rbuf *r, size_t bytes) {
  if (r->why) return NULL;
  bytes = (bytes + 7) & ~(size_t)7;
  if (bytes > r->blk_left && !sim_rblock(r, bytes)) return NULL;
  void *p = r->blk;
  r->blk += bytes;
  r->blk_left -= bytes;
  return p;
}

static void *sim_ralloc(sim_rbuf *r, size_t bytes) {
  void *p = sim_ralloc_raw(r, bytes);
  return p ? memset(p, 0, bytes) : NULL;
}

/* Zeroed memory for bytes > 0 items; for none, a non-NULL pointer that
 * is never read (most ops have no regions, many no attributes). */
static void *sim_rnone_or_zeroed(sim_rbuf *r, size_t bytes) {
  return bytes ? sim_ralloc(r, bytes) : sim_ralloc_raw(r, 8);
}

static int sim_r(sim_rbuf *r, void *dst, size_t n) {
  if (r->why) return 0;
  if (n > r->n - r->at) return sim_rbad(r, "truncated");
  if (n) memcpy(dst, r->p + r->at, n);
  r->at += n;
  return 1;
}

/* The fixed-size reads inline their common case (a third of decoding
 * was calls of sim_r). */
static inline int32_t sim_ri32(sim_rbuf *r) {
  int32_t v = 0;
  if (!r->why && r->n - r->at >= sizeof v) {
    memcpy(&v, r->p + r->at, sizeof v);
    r->at += sizeof v;
    return v;
  }
  sim_r(r, &v, sizeof v);
  return v;
}
static inline int64_t sim_ri64(sim_rbuf *r) {
  int64_t v = 0;
  if (!r->why && r->n - r->at >= sizeof v) {
    memcpy(&v, r->p + r->at, sizeof v);
    r->at += sizeof v;
    return v;
  }
  sim_r(r, &v, sizeof v);
  return v;
}
static inline unsigned sim_ru8(sim_rbuf *r) {
  if (!r->why && r->at < r->n) return r->p[r->at++];
  unsigned char v = 0;
  sim_r(r, &v, 1);
  return v;
}

/* A count of items that take at least min_bytes each in what is left. */
static inline int32_t sim_rcount(sim_rbuf *r, size_t min_bytes) {
  int32_t n = sim_ri32(r);
  if (r->why) return 0;
  if (n < 0 || (size_t)n > (r->n - r->at) / min_bytes) {
    sim_rbad(r, "bad count");
    return 0;
  }
  return n;
}

/* A copy of n items of size bytes each, read straight from the input. */
static void *sim_rarray(sim_rbuf *r, size_t n, size_t size) {
  if (r->why || !n) return NULL;
  if (n > (r->n - r->at) / size) {
    sim_rbad(r, "truncated array");
    return NULL;
  }
  void *p = sim_ralloc_raw(r, n * size); /* n * size bytes are left */
  if (p) memcpy(p, r->p + r->at, n * size), r->at += n * size;
  return p;
}

/* A NUL-terminated copy (NULL stays NULL); *out_n is its length. */
static const char *sim_rstrn(sim_rbuf *r, int slot, size_t *out_n) {
  uint32_t len = 0;
  if (out_n) *out_n = 0;
  if (!sim_r(r, &len, sizeof len)) return NULL;
  if (len == SIM_SER_SAME) {
    if (slot < 0 || !r->last[slot]) {
      sim_rbad(r, "bad string reference");
      return NULL;
    }
    if (out_n) *out_n = strlen(r->last[slot]);
    return r->last[slot];
  }
  if (len == 0) return NULL;
  size_t n = (size_t)len - 1;
  if (n > r->n - r->at) {
    sim_rbad(r, "truncated string");
    return NULL;
  }
  char *s = (char *)sim_ralloc_raw(r, n + 1);
  if (!s) return NULL;
  sim_r(r, s, n);
  s[n] = 0;
  if (out_n) *out_n = n;
  if (slot >= 0) r->last[slot] = s;
  return s;
}

static const char *sim_rstr(sim_rbuf *r, int slot) {
  return sim_rstrn(r, slot, NULL);
}

/* Value ids of the current function (a third of an op's decoding: the
 * count, copy and range check run inline). */
static inline const int32_t *sim_rids(sim_rbuf *r, int32_t *out_n) {
  int32_t n = sim_ri32(r);
  *out_n = 0;
  if (r->why) return NULL;
  size_t bytes = sizeof(int32_t) * (size_t)n;
  if (n < 0 || (size_t)n > (r->n - r->at) / sizeof(int32_t)) {
    sim_rbad(r, "bad count");
    return NULL;
  }
  if (!n) return NULL;
  int32_t *ids = (int32_t *)sim_ralloc_raw(r, bytes);
  if (!ids) return NULL;
  /* copied and checked in one pass (most ops have one to three) */
  const unsigned char *src = r->p + r->at;
  uint32_t bad = 0, nv = (uint32_t)r->num_values;
  for (int32_t i = 0; i < n; i++) {
    int32_t id;
    memcpy(&id, src + sizeof id * (size_t)i, sizeof id);
    ids[i] = id;
    bad |= (uint32_t)id >= nv; /* (negative ids wrap above) */
  }
  r->at += bytes;
  if (bad) return sim_rbad(r, "value id out of range"), NULL;
  *out_n = n;
  return ids;
}

static void sim_rloc(sim_rbuf *r, xrt_ir_loc *loc) {
  loc->file = sim_rstr(r, SIM_SLOT_FILE);
  loc->line = sim_ri32(r);
  loc->col = sim_ri32(r);
}

static int sim_rdtype_ok(unsigned d) {
  return d > XRT_DTYPE_INVALID && d < XRT_DTYPE_COUNT;
}

static void sim_rquant(sim_rbuf *r, xrt_ir_type *t) {
  xrt_ir_quant *q = (xrt_ir_quant *)sim_ralloc(r, sizeof *q);
  if (!q) return;
  unsigned st = sim_ru8(r), ex = sim_ru8(r);
  q->storage = (xrt_dtype)st;
  q->expressed = (xrt_dtype)ex;
  q->storage_min = sim_ri64(r);
  q->storage_max = sim_ri64(r);
  q->axis = sim_ri32(r);
  q->num_scales = sim_rcount(r, sizeof(double) + sizeof(int64_t));
  q->scales = (const double *)sim_rarray(r, (size_t)q->num_scales,
                                         sizeof(double));
  q->zero_points = (const int64_t *)sim_rarray(r, (size_t)q->num_scales,
                                               sizeof(int64_t));
  if (r->why) return;
  int per_axis = q->axis >= 0;
  if (!sim_rdtype_ok(st) || !sim_rdtype_ok(ex) ||
      q->storage_min > q->storage_max || q->axis < -1 ||
      q->axis >= t->shape.rank || q->num_scales < 1 ||
      (!per_axis && q->num_scales != 1) ||
      (per_axis && q->num_scales != t->shape.dims[q->axis]))
    sim_rbad(r, "bad quantization");
  t->quant = q;
}

static void sim_rtype(sim_rbuf *r, xrt_ir_type *t) {
  if (++r->depth > SIM_SER_DEPTH) sim_rbad(r, "types nest too deep");
  unsigned kind = sim_ru8(r);
  t->kind = (uint8_t)kind;
  if (kind == XRT_TYPE_TUPLE) {
    t->num_elems = sim_rcount(r, 1);
    xrt_ir_type *el = (xrt_ir_type *)sim_ralloc(
        r, sizeof *el * (size_t)(t->num_elems ? t->num_elems : 1));
    for (int32_t i = 0; el && i < t->num_elems && !r->why; i++)
      sim_rtype(r, &el[i]);
    t->elems = el;
  } else if (kind == XRT_TYPE_TENSOR) {
    unsigned dt = sim_ru8(r), rank = sim_ru8(r);
    if (!r->why && (!sim_rdtype_ok(dt) || rank > XRT_MAX_RANK))
      sim_rbad(r, "bad tensor type");
    t->shape.dtype = (xrt_dtype)dt;
    t->shape.rank = (int32_t)rank;
    if (!r->why) sim_r(r, t->shape.dims, sizeof(int64_t) * rank);
    /* Dims are sizes (>= 0) whose product fits in an int64 of bytes. */
    uint64_t numel = 1;
    for (unsigned i = 0; i < rank && !r->why; i++) {
      int64_t d = t->shape.dims[i];
      /* (both below 2^28: the product fits, no division needed) */
      if (d < 0 || (d && (numel | (uint64_t)d) >= ((uint64_t)1 << 28) &&
                    numel > ((uint64_t)1 << 56) / (uint64_t)d))
        sim_rbad(r, "bad dimension");
      numel *= (uint64_t)(d > 0 ? d : 1);
    }
    if (!r->why && numel * sim_esize((xrt_dtype)dt) > r->max_tensor_bytes)
      sim_rbad(r, "tensor larger than a device's memory");
    if (sim_ru8(r)) sim_rquant(r, t);
  } else if (kind != XRT_TYPE_TOKEN) {
    sim_rbad(r, "bad type kind");
  }
  r->depth--;
}

static uint64_t sim_rnumel(const xrt_shape *s) {
  uint64_t n = 1;
  for (int32_t i = 0; i < s->rank; i++) n *= (uint64_t)s->dims[i];
  return n;
}

static const xrt_ir_literal *sim_rlit(sim_rbuf *r) {
  xrt_ir_literal *l = (xrt_ir_literal *)sim_ralloc(r, sizeof *l);
  if (!l) return NULL;
  sim_rtype(r, &l->type);
  l->splat = sim_ru8(r) != 0;
  int64_t bytes = sim_ri64(r);
  if (r->why) return NULL;
  if (l->type.kind != XRT_TYPE_TENSOR || bytes < 0 ||
      (uint64_t)bytes != (l->splat ? 1 : sim_rnumel(&l->type.shape)) *
                             sim_esize(l->type.shape.dtype)) {
    sim_rbad(r, "bad literal");
    return NULL;
  }
  l->bytes = (size_t)bytes;
  l->data = sim_rarray(r, l->bytes, 1);
  if (!l->data && l->bytes == 0) l->data = r->blk; /* non-NULL, no bytes */
  return r->why ? NULL : l;
}

/* The shape of a 2-D integer tensor attribute of n values (version 3):
 * a literal without data (sim_pg_rows reads only its shape). */
static const xrt_ir_literal *sim_rrows(sim_rbuf *r, int64_t n) {
  int64_t d0 = sim_ri64(r), d1 = sim_ri64(r);
  if (r->why) return NULL;
  bool fits = d1 > 0 ? d0 == n / d1 && n % d1 == 0 : d1 == 0 && n == 0;
  if (d0 < 0 || !fits)
    return sim_rbad(r, "bad integer tensor shape"), NULL;
  xrt_ir_literal *l = (xrt_ir_literal *)sim_ralloc(r, sizeof *l);
  if (!l) return NULL;
  l->type.kind = XRT_TYPE_TENSOR;
  l->type.shape.dtype = XRT_S64;
  l->type.shape.rank = 2;
  l->type.shape.dims[0] = d0;
  l->type.shape.dims[1] = d1;
  return l;
}

/* An attribute name (version 4: from the ring, or a new one). */
static const char *sim_rname(sim_rbuf *r) {
  if (r->version < 4) return sim_rstr(r, -1);
  unsigned k = sim_ru8(r);
  if (r->why) return NULL;
  if (k != SIM_SER_NEWNAME) {
    if (k >= SIM_SER_NAMES || k >= r->nnames) {
      sim_rbad(r, "bad attribute name reference");
      return NULL;
    }
    return r->names[k];
  }
  const char *s = sim_rstr(r, -1);
  if (s) r->names[r->nnames++ % SIM_SER_NAMES] = s;
  return s;
}

static void sim_rattr(sim_rbuf *r, xrt_ir_attr *a) {
  if (++r->depth > SIM_SER_DEPTH) sim_rbad(r, "attributes nest too deep");
  a->name = sim_rname(r);
  unsigned kind = sim_ru8(r);
  a->kind = (uint8_t)kind;
  a->i = sim_ri64(r);
  _Static_assert(sizeof a->f == sizeof(int64_t), "a double is 8 bytes");
  int64_t fbits = sim_ri64(r); /* (inline, as the integers) */
  memcpy(&a->f, &fbits, sizeof a->f);
  a->n = sim_ri64(r);
  size_t sn = 0;
  switch (kind) {
  case XRT_ATTR_UNIT: case XRT_ATTR_INT: case XRT_ATTR_FLOAT:
  case XRT_ATTR_BOOL:
    break;
  case XRT_ATTR_STRING:
    a->s = sim_rstrn(r, -1, &sn);
    if (!r->why && (!a->s || a->n < 0 || (uint64_t)a->n != sn))
      sim_rbad(r, "bad string attribute");
    break;
  case XRT_ATTR_ENUM: case XRT_ATTR_SYMBOL:
    a->s = sim_rstr(r, -1);
    if (!r->why && !a->s) sim_rbad(r, "bad name attribute");
    break;
  case XRT_ATTR_INTS:
    if (a->n < 0 || a->n > INT32_MAX) sim_rbad(r, "bad integer list");
    else a->ints = (const int64_t *)sim_rarray(r, (size_t)a->n, sizeof(int64_t));
    if (r->version >= 3 && sim_ru8(r)) a->lit = sim_rrows(r, a->n);
    break;
  case XRT_ATTR_DENSE:
    a->lit = sim_rlit(r);
    break;
  case XRT_ATTR_TYPE: {
    xrt_ir_type *t = (xrt_ir_type *)sim_ralloc(r, sizeof *t);
    if (t) sim_rtype(r, t);
    a->type = t;
    break;
  }
  case XRT_ATTR_LIST: case XRT_ATTR_DICT: {
    a->num_items = sim_rcount(r, 1);
    xrt_ir_attr *it = (xrt_ir_attr *)sim_ralloc(
        r, sizeof *it * (size_t)(a->num_items ? a->num_items : 1));
    for (int32_t i = 0; it && i < a->num_items && !r->why; i++)
      sim_rattr(r, &it[i]);
    a->items = it;
    break;
  }
  default:
    sim_rbad(r, "bad attribute kind");
  }
  r->depth--;
}

static void sim_rregion(sim_rbuf *r, xrt_ir_region *g);

/* Whether op->callee indexes what op's code calls (other ops' callee is
 * not read: the parser leaves 0 or -1 there). */
static int sim_rcallee_ok(const sim_rbuf *r, const xrt_ir_op *op) {
  switch (op->code) {
  case XRT_OP_FUNC_CALL:
    return op->callee >= 0 && op->callee < r->num_funcs;
  case XRT_OP_CUSTOM_CALL: case XRT_OP_INFEED: case XRT_OP_OUTFEED:
  case XRT_OP_SEND: case XRT_OP_RECV:
    return op->callee >= 0 && op->callee < r->num_custom_calls;
  default:
    return 1;
  }
}

static void sim_rop(sim_rbuf *r, xrt_ir_op *op) {
  int32_t code = sim_ri32(r);
  if (!r->why && (code < 0 || code >= XRT_OP_COUNT)) sim_rbad(r, "bad opcode");
  op->code = (xrt_opcode)code;
  if (r->version >= 4 && sim_ru8(r))
    op->name = r->why ? NULL : sim_opcode_name(op->code);
  else
    op->name = sim_rstr(r, SIM_SLOT_OPNAME);
  if (!r->why && !op->name) sim_rbad(r, "op without a name");
  op->operands = sim_rids(r, &op->num_operands);
  op->results = sim_rids(r, &op->num_results);
  op->num_attrs = sim_rcount(r, 1);
  xrt_ir_attr *at = (xrt_ir_attr *)sim_rnone_or_zeroed(
      r, sizeof *at * (size_t)op->num_attrs);
  for (int32_t i = 0; at && i < op->num_attrs && !r->why; i++)
    sim_rattr(r, &at[i]);
  op->attrs = at;
  op->num_regions = sim_rcount(r, 1);
  xrt_ir_region *rg = (xrt_ir_region *)sim_rnone_or_zeroed(
      r, sizeof *rg * (size_t)op->num_regions);
  for (int32_t i = 0; rg && i < op->num_regions && !r->why; i++)
    sim_rregion(r, &rg[i]);
  op->regions = rg;
  sim_rloc(r, &op->loc);
  op->callee = sim_ri32(r);
  if (!r->why && !sim_rcallee_ok(r, op)) sim_rbad(r, "bad callee");
}

static void sim_rregion(sim_rbuf *r, xrt_ir_region *g) {
  if (++r->depth > SIM_SER_DEPTH) sim_rbad(r, "regions nest too deep");
  g->args = sim_rids(r, &g->num_args);
  g->num_ops = sim_rcount(r, 1);
  /* A block ends with its terminator. */
  if (!r->why && g->num_ops < 1) sim_rbad(r, "empty region");
  /* (not zeroed: sim_rop sets every field of an op it reads) */
  xrt_ir_op *ops = (xrt_ir_op *)sim_ralloc_raw(
      r, sizeof *ops * (size_t)(g->num_ops ? g->num_ops : 1));
  for (int32_t i = 0; ops && i < g->num_ops && !r->why; i++)
    sim_rop(r, &ops[i]);
  g->ops = ops;
  r->depth--;
}

/* Version 4 value types: the table, then an index per value into it (the
 * value's type is a copy of the entry: tuples share their elements). */
static void sim_rvalue_types(sim_rbuf *r, xrt_ir_type *vt, int32_t n) {
  int32_t nt = sim_rcount(r, 1);
  xrt_ir_type *tab = (xrt_ir_type *)sim_ralloc(
      r, sizeof *tab * (size_t)(nt ? nt : 1));
  for (int32_t k = 0; tab && k < nt && !r->why; k++) sim_rtype(r, &tab[k]);
  if (r->why) return;
  if ((size_t)n > (r->n - r->at) / sizeof(uint32_t)) {
    sim_rbad(r, "truncated value types");
    return;
  }
  const unsigned char *p = r->p + r->at;
  for (int32_t i = 0; i < n; i++) {
    uint32_t k;
    memcpy(&k, p + sizeof k * (size_t)i, sizeof k);
    if (k >= (uint32_t)nt) {
      sim_rbad(r, "value type index out of range");
      return;
    }
    vt[i] = tab[k];
  }
  r->at += sizeof(uint32_t) * (size_t)n;
}

static void sim_rfunc(sim_rbuf *r, xrt_ir_func *f) {
  f->name = sim_rstr(r, -1);
  if (!r->why && !f->name) sim_rbad(r, "function without a name");
  f->is_public = sim_ru8(r) != 0;
  /* (version 4: each value takes its u32 type index) */
  f->num_values = sim_rcount(r, r->version >= 4 ? sizeof(uint32_t) : 1);
  size_t vbytes =
      sizeof(xrt_ir_type) * (size_t)(f->num_values ? f->num_values : 1);
  int table = r->version >= 4; /* else each value's type in full */
  xrt_ir_type *vt = (xrt_ir_type *)(table ? sim_ralloc_raw(r, vbytes)
                                          : sim_ralloc(r, vbytes));
  if (vt && table) sim_rvalue_types(r, vt, f->num_values);
  for (int32_t i = 0; vt && !table && i < f->num_values && !r->why; i++)
    sim_rtype(r, &vt[i]);
  f->value_types = vt;
  r->num_values = f->num_values;
  sim_rregion(r, &f->body);
  f->num_results = sim_rcount(r, 1);
  xrt_ir_type *rt = (xrt_ir_type *)sim_ralloc(
      r, sizeof *rt * (size_t)(f->num_results ? f->num_results : 1));
  for (int32_t i = 0; rt && i < f->num_results && !r->why; i++)
    sim_rtype(r, &rt[i]);
  f->result_types = rt;
  sim_rloc(r, &f->loc);
}

static const char *sim_vmodule(sim_rbuf *r, const xrt_ir_module *m,
                               int32_t entry);

/* The module of serialized bytes, or NULL with r->why. */
static const xrt_ir_module *sim_rmodule(sim_rbuf *r, int32_t *out_entry) {
  char magic[8] = {0};
  sim_r(r, magic, 8);
  uint32_t version = (uint32_t)sim_ri32(r), order = (uint32_t)sim_ri32(r);
  if (r->why || memcmp(magic, SIM_SER_MAGIC, 8) != 0)
    return sim_rbad(r, "not a serialized sim executable"), NULL;
  if (version < 2 || version > SIM_SER_VERSION || order != SIM_SER_ORDER)
    return sim_rbad(r, "other format version or byte order"), NULL;
  r->version = version;
  uint64_t hash = (uint64_t)sim_ri64(r);
  if (r->why ||
      (!r->verified && hash != XXH3_64bits(r->p + r->at, r->n - r->at)))
    return sim_rbad(r, "checksum mismatch"), NULL;
  int32_t entry = sim_ri32(r);
  xrt_ir_module *m = (xrt_ir_module *)sim_ralloc(r, sizeof *m);
  if (!m) return NULL;
  m->name = sim_rstr(r, -1);
  m->num_custom_calls = sim_ri32(r);
  m->num_replicas = sim_ri32(r);
  m->num_partitions = sim_ri32(r);
  m->stablehlo_version = sim_rstr(r, -1);
  m->num_funcs = sim_rcount(r, 1);
  if (r->why) return NULL;
  if (!m->name || !m->stablehlo_version || m->num_custom_calls < 0 ||
      m->num_replicas < 1 || m->num_partitions < 1 || m->num_funcs < 1 ||
      entry < 0 || entry >= m->num_funcs)
    return sim_rbad(r, "bad module header"), NULL;
  r->num_funcs = m->num_funcs;
  r->num_custom_calls = m->num_custom_calls;
  xrt_ir_func *fs = (xrt_ir_func *)sim_ralloc(r, sizeof *fs * (size_t)m->num_funcs);
  for (int32_t i = 0; fs && i < m->num_funcs && !r->why; i++)
    sim_rfunc(r, &fs[i]);
  m->funcs = fs;
  if (version >= 4) { /* checked as the planner follows them */
    r->nfz = sim_rcount(r, sizeof(int32_t));
    r->fz = (const int32_t *)sim_rarray(r, (size_t)r->nfz, sizeof(int32_t));
  }
  if (!r->why && r->at != r->n) sim_rbad(r, "trailing bytes");
  if (!r->why) {
    const char *bad = sim_vmodule(r, m, entry);
    if (bad) sim_rbad(r, bad);
  }
  *out_entry = entry;
  return r->why ? NULL : m;
}

/* ---- validating what was read ----
 *
 * The bytes were read as well-formed, but only the verifier's per-op rules
 * make a module the planner can lower without reading out of bounds, and
 * a hash proves nothing about bytes someone wrote on purpose (or damage
 * after which the hash was recomputed).  So the rebuilt module is checked
 * again here, in the simulator's own code: values are defined once and
 * used in scope, regions end with their terminator, and every op passes a
 * copy of the core verifier's rules for it.  Only ops with such a copy
 * load from bytes; any other op (and any quantized type) makes the bytes
 * XRT_INVALID_ARGUMENT, and the core compiles the program instead. */

typedef struct sim_vchk {
  const xrt_ir_module *m;
  const xrt_ir_func *f;
  const xrt_ir_op *op;
  unsigned char *state; /* per value: 0 not yet, 1 in scope, 2 gone */
  const char *why;
  int depth;
  bool collectives; /* version 3 bytes: groups and pairs keep shape */
} sim_vchk;

static int sim_vbad(sim_vchk *v, const char *why) {
  if (!v->why) v->why = why;
  return 0;
}

static int sim_vtype_eq(const xrt_ir_type *a, const xrt_ir_type *b) {
  if (a->kind != b->kind) return 0;
  if (a->kind == XRT_TYPE_TOKEN) return 1;
  if (a->kind == XRT_TYPE_TUPLE) {
    if (a->num_elems != b->num_elems) return 0;
    for (int32_t i = 0; i < a->num_elems; i++)
      if (!sim_vtype_eq(&a->elems[i], &b->elems[i])) return 0;
    return 1;
  }
  if (a->shape.dtype != b->shape.dtype || a->shape.rank != b->shape.rank)
    return 0;
  for (int32_t i = 0; i < a->shape.rank; i++)
    if (a->shape.dims[i] != b->shape.dims[i]) return 0;
  return !a->quant == !b->quant;
}

/* Quantized types are not loaded from bytes (their rules are many). */
static int sim_vtype_plain(const xrt_ir_type *t) {
  if (t->kind == XRT_TYPE_TUPLE) {
    for (int32_t i = 0; i < t->num_elems; i++)
      if (!sim_vtype_plain(&t->elems[i])) return 0;
    return 1;
  }
  return t->kind == XRT_TYPE_TOKEN || (t->kind == XRT_TYPE_TENSOR && !t->quant);
}

static const xrt_ir_type *sim_vty(const sim_vchk *v, int32_t id) {
  return &v->f->value_types[id];
}
static const xrt_shape *sim_vin(const sim_vchk *v, int i) {
  return &sim_vty(v, v->op->operands[i])->shape;
}
static const xrt_shape *sim_vout(const sim_vchk *v, int i) {
  return &sim_vty(v, v->op->results[i])->shape;
}

static int sim_vdims_eq(const xrt_shape *a, const xrt_shape *b) {
  if (a->rank != b->rank) return 0;
  for (int32_t i = 0; i < a->rank; i++)
    if (a->dims[i] != b->dims[i]) return 0;
  return 1;
}
static int sim_vshape_eq(const xrt_shape *a, const xrt_shape *b) {
  return a->dtype == b->dtype && sim_vdims_eq(a, b);
}

/* Operand and result counts (-1: any), all tensors. */
static int sim_vcounts(sim_vchk *v, int operands, int results) {
  const xrt_ir_op *op = v->op;
  if ((operands >= 0 && op->num_operands != operands) ||
      (results >= 0 && op->num_results != results))
    return sim_vbad(v, "wrong operand or result count");
  const xrt_ir_type *vt = v->f->value_types;
  int bad = 0;
  for (int32_t i = 0; i < op->num_operands; i++)
    bad |= vt[op->operands[i]].kind != XRT_TYPE_TENSOR;
  for (int32_t i = 0; i < op->num_results; i++)
    bad |= vt[op->results[i]].kind != XRT_TYPE_TENSOR;
  return !bad || sim_vbad(v, "operand or result is not a tensor");
}

static int sim_vsame(sim_vchk *v, int32_t a, int32_t b) {
  return sim_vtype_eq(sim_vty(v, a), sim_vty(v, b)) ||
         sim_vbad(v, "types differ");
}

/* An INTS attribute, required. */
static int sim_vints(sim_vchk *v, const char *name, const int64_t **ints,
                     int64_t *n) {
  const xrt_ir_attr *a = sim_attr(v->op, name, XRT_ATTR_INTS);
  if (!a) return sim_vbad(v, "missing integer list attribute");
  *ints = a->ints;
  *n = a->n;
  return 1;
}

/* Distinct dimensions below rank. */
static int sim_vdims(sim_vchk *v, const int64_t *d, int64_t n, int64_t rank) {
  for (int64_t i = 0; i < n; i++) {
    if (d[i] < 0 || d[i] >= rank) return sim_vbad(v, "dimension out of range");
    for (int64_t j = 0; j < i; j++)
      if (d[j] == d[i]) return sim_vbad(v, "dimension repeated");
  }
  return 1;
}

static int sim_vcontains(const int64_t *d, int64_t n, int64_t x) {
  for (int64_t i = 0; i < n; i++)
    if (d[i] == x) return 1;
  return 0;
}

/* Element classes of the elementwise ops (the core verifier's masks):
 * bits of 'p' pred, 'i' integers, 'f' floats, 'c' complex. */
enum { SIM_VK_P = 1, SIM_VK_I = 2, SIM_VK_F = 4, SIM_VK_C = 8 };

static unsigned sim_vclass(xrt_dtype t) {
  switch (sim_ew_class(t)) {
  case 'p': return SIM_VK_P;
  case 's': case 'u': return SIM_VK_I;
  case 'f': case 'm': return SIM_VK_F;
  case 'c': return SIM_VK_C;
  default: return 0;
  }
}

static unsigned sim_vew_mask(xrt_opcode code) {
  const unsigned num = SIM_VK_I | SIM_VK_F | SIM_VK_C;
  switch (code) {
  case XRT_OP_ADD: case XRT_OP_MULTIPLY: case XRT_OP_MAXIMUM:
  case XRT_OP_MINIMUM: return num | SIM_VK_P;
  case XRT_OP_SUBTRACT: case XRT_OP_DIVIDE: case XRT_OP_POWER:
  case XRT_OP_NEGATE: case XRT_OP_REMAINDER: case XRT_OP_SIGN:
  case XRT_OP_ABS: return num;
  case XRT_OP_AND: case XRT_OP_OR: case XRT_OP_XOR: case XRT_OP_NOT:
    return SIM_VK_I | SIM_VK_P;
  case XRT_OP_SHIFT_LEFT: case XRT_OP_SHIFT_RIGHT_ARITHMETIC:
  case XRT_OP_SHIFT_RIGHT_LOGICAL: case XRT_OP_POPCNT:
  case XRT_OP_COUNT_LEADING_ZEROS: return SIM_VK_I;
  case XRT_OP_EXPONENTIAL: case XRT_OP_LOG: case XRT_OP_SQRT:
  case XRT_OP_RSQRT: case XRT_OP_TANH: case XRT_OP_LOGISTIC:
  case XRT_OP_SINE: case XRT_OP_COSINE: case XRT_OP_EXPONENTIAL_MINUS_ONE:
  case XRT_OP_LOG_PLUS_ONE: case XRT_OP_CBRT: case XRT_OP_TAN:
  case XRT_OP_ATAN2: return SIM_VK_F | SIM_VK_C;
  case XRT_OP_FLOOR: case XRT_OP_CEIL: case XRT_OP_ROUND_NEAREST_AFZ:
  case XRT_OP_ROUND_NEAREST_EVEN: return SIM_VK_F;
  default: return 0;
  }
}

static int sim_vew_binary(xrt_opcode c) {
  switch (c) {
  case XRT_OP_ADD: case XRT_OP_SUBTRACT: case XRT_OP_MULTIPLY:
  case XRT_OP_DIVIDE: case XRT_OP_REMAINDER: case XRT_OP_MAXIMUM:
  case XRT_OP_MINIMUM: case XRT_OP_POWER: case XRT_OP_AND: case XRT_OP_OR:
  case XRT_OP_XOR: case XRT_OP_SHIFT_LEFT: case XRT_OP_SHIFT_RIGHT_ARITHMETIC:
  case XRT_OP_SHIFT_RIGHT_LOGICAL: case XRT_OP_ATAN2: return 1;
  default: return 0;
  }
}

static int sim_vew(sim_vchk *v) {
  const xrt_ir_op *op = v->op;
  int binary = sim_vew_binary(op->code);
  if (!sim_vcounts(v, binary ? 2 : 1, 1)) return 0;
  if (binary && !sim_vsame(v, op->operands[0], op->operands[1])) return 0;
  const xrt_shape *in = sim_vin(v, 0), *out = sim_vout(v, 0);
  if (!(sim_vew_mask(op->code) & sim_vclass(in->dtype)))
    return sim_vbad(v, "element type not allowed");
  if (op->code == XRT_OP_ABS && sim_dtype_is_complex(in->dtype))
    return (out->dtype == (in->dtype == XRT_C64 ? XRT_F32 : XRT_F64) &&
            sim_vdims_eq(in, out)) ||
           sim_vbad(v, "abs of complex must be real");
  return sim_vsame(v, op->operands[0], op->results[0]);
}

static int sim_vcompare(sim_vchk *v) {
  if (!sim_vcounts(v, 2, 1) ||
      !sim_vsame(v, v->op->operands[0], v->op->operands[1]))
    return 0;
  const xrt_shape *out = sim_vout(v, 0);
  if (out->dtype != XRT_PRED || !sim_vdims_eq(out, sim_vin(v, 0)))
    return sim_vbad(v, "compare result must be i1 of the operands' shape");
  const xrt_ir_attr *d = sim_attr(v->op, "comparison_direction", XRT_ATTR_ENUM);
  static const char *const dirs[] = {"EQ", "NE", "GE", "GT", "LE", "LT"};
  for (size_t i = 0; d && i < sizeof dirs / sizeof *dirs; i++)
    if (strcmp(d->s, dirs[i]) == 0) return 1;
  return sim_vbad(v, "bad comparison_direction");
}

static int sim_vselect(sim_vchk *v) {
  if (!sim_vcounts(v, 3, 1)) return 0;
  const xrt_shape *p = sim_vin(v, 0), *out = sim_vout(v, 0);
  if (p->dtype != XRT_PRED || (p->rank != 0 && !sim_vdims_eq(p, out)))
    return sim_vbad(v, "bad select predicate");
  return sim_vsame(v, v->op->operands[1], v->op->results[0]) &&
         sim_vsame(v, v->op->operands[2], v->op->results[0]);
}

static int sim_vclamp(sim_vchk *v) {
  if (!sim_vcounts(v, 3, 1) ||
      !sim_vsame(v, v->op->operands[1], v->op->results[0]))
    return 0;
  const xrt_shape *x = sim_vin(v, 1);
  for (int i = 0; i < 3; i += 2) {
    const xrt_shape *b = sim_vin(v, i);
    if (b->dtype != x->dtype || (b->rank != 0 && !sim_vdims_eq(b, x)))
      return sim_vbad(v, "bad clamp bound");
  }
  return 1;
}

static int sim_vconvert(sim_vchk *v) {
  return sim_vcounts(v, 1, 1) &&
         (sim_vdims_eq(sim_vin(v, 0), sim_vout(v, 0)) ||
          sim_vbad(v, "convert changes the shape"));
}

static int sim_viota(sim_vchk *v) {
  if (!sim_vcounts(v, 0, 1)) return 0;
  const xrt_ir_attr *d = sim_attr(v->op, "iota_dimension", XRT_ATTR_INT);
  return (d && d->i >= 0 && d->i < sim_vout(v, 0)->rank) ||
         sim_vbad(v, "bad iota_dimension");
}

static int sim_vbroadcast_in_dim(sim_vchk *v) {
  const int64_t *dims;
  int64_t n;
  if (!sim_vcounts(v, 1, 1) ||
      !sim_vints(v, "broadcast_dimensions", &dims, &n))
    return 0;
  const xrt_shape *in = sim_vin(v, 0), *out = sim_vout(v, 0);
  if (in->dtype != out->dtype || n != in->rank)
    return sim_vbad(v, "bad broadcast_in_dim");
  if (!sim_vdims(v, dims, n, out->rank)) return 0;
  for (int64_t i = 0; i < n; i++)
    if (in->dims[i] != 1 && in->dims[i] != out->dims[dims[i]])
      return sim_vbad(v, "bad broadcast_in_dim sizes");
  return 1;
}

static int sim_vreshape(sim_vchk *v) {
  if (!sim_vcounts(v, 1, 1)) return 0;
  const xrt_shape *in = sim_vin(v, 0), *out = sim_vout(v, 0);
  return (in->dtype == out->dtype && sim_rnumel(in) == sim_rnumel(out)) ||
         sim_vbad(v, "bad reshape");
}

static int sim_vtranspose(sim_vchk *v) {
  const int64_t *perm;
  int64_t n;
  if (!sim_vcounts(v, 1, 1) || !sim_vints(v, "permutation", &perm, &n))
    return 0;
  const xrt_shape *in = sim_vin(v, 0), *out = sim_vout(v, 0);
  if (n != in->rank || out->rank != in->rank || in->dtype != out->dtype)
    return sim_vbad(v, "bad transpose");
  if (!sim_vdims(v, perm, n, in->rank)) return 0;
  for (int64_t i = 0; i < n; i++)
    if (out->dims[i] != in->dims[perm[i]])
      return sim_vbad(v, "bad transpose result");
  return 1;
}

/* Region r takes nargs values of types args and returns nrets of types
 * rets (NULL entries: any type). */
static int sim_vregion_sig(sim_vchk *v, const xrt_ir_region *r, int nargs,
                           const xrt_ir_type *const *args, int nrets,
                           const xrt_ir_type *const *rets) {
  if (r->num_args != nargs) return sim_vbad(v, "region argument count");
  for (int i = 0; i < nargs; i++)
    if (args[i] && !sim_vtype_eq(sim_vty(v, r->args[i]), args[i]))
      return sim_vbad(v, "region argument type");
  const xrt_ir_op *term = &r->ops[r->num_ops - 1];
  if (term->num_operands != nrets) return sim_vbad(v, "region result count");
  for (int i = 0; i < nrets; i++)
    if (rets[i] && !sim_vtype_eq(sim_vty(v, term->operands[i]), rets[i]))
      return sim_vbad(v, "region result type");
  return 1;
}

static int sim_vreduce(sim_vchk *v) {
  const xrt_ir_op *op = v->op;
  int n = op->num_results;
  const int64_t *dims;
  int64_t nd;
  if (n < 1 || n > 32 || op->num_regions != 1)
    return sim_vbad(v, "bad reduce");
  if (!sim_vcounts(v, 2 * n, n) || !sim_vints(v, "dimensions", &dims, &nd))
    return 0;
  const xrt_shape *in0 = sim_vin(v, 0);
  if (!sim_vdims(v, dims, nd, in0->rank)) return 0;
  const xrt_ir_type *sig[64];
  for (int i = 0; i < n; i++) {
    const xrt_shape *in = sim_vin(v, i), *init = sim_vin(v, n + i),
                    *out = sim_vout(v, i);
    if (!sim_vdims_eq(in, in0) || init->rank != 0 ||
        init->dtype != out->dtype)
      return sim_vbad(v, "bad reduce operands");
    int32_t k = 0;
    for (int32_t d = 0; d < in->rank; d++) {
      if (sim_vcontains(dims, nd, d)) continue;
      if (k >= out->rank || out->dims[k] != in->dims[d])
        return sim_vbad(v, "bad reduce result");
      k++;
    }
    if (k != out->rank) return sim_vbad(v, "bad reduce result rank");
    sig[i] = sig[n + i] = sim_vty(v, op->operands[n + i]);
  }
  return sim_vregion_sig(v, &op->regions[0], 2 * n, sig, n, sig);
}

static int sim_vdot_field(sim_vchk *v, const xrt_ir_attr *dn, const char *name,
                          const int64_t **ints, int64_t *n) {
  const xrt_ir_attr *a = sim_field(dn, name);
  *ints = NULL;
  *n = 0;
  if (!a) return 1;
  if (a->kind != XRT_ATTR_INTS) return sim_vbad(v, "bad dimension numbers");
  *ints = a->ints;
  *n = a->n;
  return 1;
}

static int sim_vdot_general(sim_vchk *v) {
  const int64_t *lb, *rb, *lc, *rc;
  int64_t nlb, nrb, nlc, nrc;
  const xrt_ir_attr *dn =
      sim_named(v->op->attrs, v->op->num_attrs, "dot_dimension_numbers");
  if (!sim_vcounts(v, 2, 1) ||
      !sim_vdot_field(v, dn, "lhs_batching_dimensions", &lb, &nlb) ||
      !sim_vdot_field(v, dn, "rhs_batching_dimensions", &rb, &nrb) ||
      !sim_vdot_field(v, dn, "lhs_contracting_dimensions", &lc, &nlc) ||
      !sim_vdot_field(v, dn, "rhs_contracting_dimensions", &rc, &nrc))
    return 0;
  const xrt_shape *l = sim_vin(v, 0), *r = sim_vin(v, 1), *out = sim_vout(v, 0);
  if (nlb != nrb || nlc != nrc || nlb + nlc > XRT_MAX_RANK ||
      l->dtype != r->dtype)
    return sim_vbad(v, "bad dot_general");
  int64_t ld[XRT_MAX_RANK], rd[XRT_MAX_RANK];
  for (int64_t i = 0; i < nlb; i++) ld[i] = lb[i], rd[i] = rb[i];
  for (int64_t i = 0; i < nlc; i++) ld[nlb + i] = lc[i], rd[nrb + i] = rc[i];
  if (!sim_vdims(v, ld, nlb + nlc, l->rank) ||
      !sim_vdims(v, rd, nrb + nrc, r->rank))
    return 0;
  for (int64_t i = 0; i < nlb + nlc; i++)
    if (l->dims[ld[i]] != r->dims[rd[i]])
      return sim_vbad(v, "dot_general dimension sizes differ");
  int64_t want[2 * XRT_MAX_RANK];
  int k = 0;
  for (int64_t i = 0; i < nlb; i++) want[k++] = l->dims[lb[i]];
  for (int side = 0; side < 2; side++) {
    const xrt_shape *x = side ? r : l;
    const int64_t *used = side ? rd : ld;
    for (int32_t d = 0; d < x->rank; d++)
      if (!sim_vcontains(used, nlb + nlc, d)) want[k++] = x->dims[d];
  }
  if (out->rank != k) return sim_vbad(v, "bad dot_general result");
  for (int i = 0; i < k; i++)
    if (out->dims[i] != want[i]) return sim_vbad(v, "bad dot_general result");
  return 1;
}

static int sim_vwhile(sim_vchk *v) {
  const xrt_ir_op *op = v->op;
  int n = op->num_operands;
  if (op->num_results != n || op->num_regions != 2 || n > 256)
    return sim_vbad(v, "bad while");
  const xrt_ir_type *sig[256];
  for (int i = 0; i < n; i++) {
    if (!sim_vsame(v, op->operands[i], op->results[i])) return 0;
    sig[i] = sim_vty(v, op->operands[i]);
  }
  const xrt_ir_type *any[1] = {NULL};
  if (!sim_vregion_sig(v, &op->regions[0], n, sig, 1, any)) return 0;
  const xrt_ir_region *c = &op->regions[0];
  const xrt_ir_type *ct = sim_vty(v, c->ops[c->num_ops - 1].operands[0]);
  if (ct->kind != XRT_TYPE_TENSOR || ct->shape.dtype != XRT_PRED ||
      ct->shape.rank != 0)
    return sim_vbad(v, "while cond must return tensor<i1>");
  return sim_vregion_sig(v, &op->regions[1], n, sig, n, sig);
}

static int sim_vcall(sim_vchk *v) {
  const xrt_ir_op *op = v->op;
  const xrt_ir_func *f = &v->m->funcs[op->callee]; /* checked when read */
  if (op->num_operands != f->body.num_args || op->num_results != f->num_results)
    return sim_vbad(v, "call does not fit its callee");
  for (int32_t i = 0; i < op->num_operands; i++)
    if (!sim_vtype_eq(sim_vty(v, op->operands[i]),
                      &f->value_types[f->body.args[i]]))
      return sim_vbad(v, "call argument type");
  for (int32_t i = 0; i < op->num_results; i++)
    if (!sim_vtype_eq(sim_vty(v, op->results[i]), &f->result_types[i]))
      return sim_vbad(v, "call result type");
  return 1;
}

static int sim_vconstant(sim_vchk *v) {
  if (!sim_vcounts(v, 0, 1)) return 0;
  const xrt_ir_attr *a = sim_attr(v->op, "value", XRT_ATTR_DENSE);
  return (a && a->lit && !a->lit->type.quant &&
          sim_vshape_eq(&a->lit->type.shape, sim_vout(v, 0))) ||
         sim_vbad(v, "bad constant");
}

static int sim_vcustom_call(sim_vchk *v) {
  return sim_attr(v->op, "call_target_name", XRT_ATTR_STRING) != NULL ||
         sim_vbad(v, "custom_call without call_target_name");
}

/* all_reduce and collective_permute (a multi-process job's executables,
 * issue #11): results of the operands' types, and all_reduce's reducer
 * takes and returns scalars of their element type; the planner checks
 * groups, pairs and sizes against the launch itself. */
static int sim_vcollective(sim_vchk *v) {
  const xrt_ir_op *op = v->op;
  int n = op->num_operands, ar = op->code == XRT_OP_ALL_REDUCE;
  if (!v->collectives) /* flat groups would read as one group */
    return sim_vbad(v, "op not loadable from serialized bytes");
  if (n < 1 || op->num_results != n || op->num_regions != ar)
    return sim_vbad(v, "bad collective");
  for (int i = 0; i < n; i++)
    if (!sim_vsame(v, op->operands[i], op->results[i])) return 0;
  if (!ar) return 1;
  const xrt_ir_region *r = &op->regions[0];
  const xrt_ir_type *t = r->num_args == 2 ? sim_vty(v, r->args[0]) : NULL;
  if (!t || t->kind != XRT_TYPE_TENSOR || t->shape.rank != 0)
    return sim_vbad(v, "bad all_reduce computation");
  for (int i = 0; i < n; i++)
    if (sim_vin(v, i)->dtype != t->shape.dtype)
      return sim_vbad(v, "bad all_reduce computation");
  const xrt_ir_type *sig[2] = {t, t};
  return sim_vregion_sig(v, r, 2, sig, 1, sig);
}

/* The per-op rules; ops without a copy here are refused. */
static int sim_vop_rules(sim_vchk *v) {
  const xrt_ir_op *op = v->op;
  if (op->num_regions != 0 && op->code != XRT_OP_REDUCE &&
      op->code != XRT_OP_WHILE && op->code != XRT_OP_ALL_REDUCE)
    return sim_vbad(v, "unexpected region");
  switch (op->code) {
  case XRT_OP_COMPARE: return sim_vcompare(v);
  case XRT_OP_SELECT: return sim_vselect(v);
  case XRT_OP_CLAMP: return sim_vclamp(v);
  case XRT_OP_CONVERT: return sim_vconvert(v);
  case XRT_OP_IOTA: return sim_viota(v);
  case XRT_OP_BROADCAST_IN_DIM: return sim_vbroadcast_in_dim(v);
  case XRT_OP_RESHAPE: return sim_vreshape(v);
  case XRT_OP_TRANSPOSE: return sim_vtranspose(v);
  case XRT_OP_REDUCE: return sim_vreduce(v);
  case XRT_OP_DOT_GENERAL: return sim_vdot_general(v);
  case XRT_OP_WHILE: return sim_vwhile(v);
  case XRT_OP_FUNC_CALL: return sim_vcall(v);
  case XRT_OP_CONSTANT: return sim_vconstant(v);
  case XRT_OP_CUSTOM_CALL: return sim_vcustom_call(v);
  case XRT_OP_ALL_REDUCE: case XRT_OP_COLLECTIVE_PERMUTE:
    return sim_vcollective(v);
  case XRT_OP_RETURN: case XRT_OP_FUNC_RETURN:
    return op->num_results == 0 || sim_vbad(v, "return with results");
  default:
    if (sim_vew_mask(op->code)) return sim_vew(v);
    return sim_vbad(v, "op not loadable from serialized bytes");
  }
}

static int sim_vdefine(sim_vchk *v, const int32_t *ids, int32_t n) {
  for (int32_t i = 0; i < n; i++) {
    if (v->state[ids[i]]) return sim_vbad(v, "value defined twice");
    const xrt_ir_type *t = sim_vty(v, ids[i]);
    if ((t->kind != XRT_TYPE_TENSOR || t->quant) && !sim_vtype_plain(t))
      return sim_vbad(v, "quantized types are not loaded from bytes");
    v->state[ids[i]] = 1;
  }
  return 1;
}

static void sim_vforget(sim_vchk *v, const int32_t *ids, int32_t n) {
  for (int32_t i = 0; i < n; i++) v->state[ids[i]] = 2;
}

static int sim_vregion(sim_vchk *v, const xrt_ir_region *r);

static int sim_vop(sim_vchk *v, const xrt_ir_op *op, int last) {
  v->op = op;
  const char *cn = sim_opcode_name(op->code); /* (version 4: the same) */
  if (!op->name || (op->name != cn && strcmp(op->name, cn) != 0))
    return sim_vbad(v, "op name does not match its code");
  int term = op->code == XRT_OP_RETURN || op->code == XRT_OP_FUNC_RETURN;
  if (term != last) return sim_vbad(v, "misplaced terminator");
  for (int32_t i = 0; i < op->num_attrs; i++)
    if (!op->attrs[i].name) return sim_vbad(v, "attribute without a name");
  for (int32_t i = 0; i < op->num_operands; i++)
    if (v->state[op->operands[i]] != 1)
      return sim_vbad(v, "value used out of scope");
  for (int32_t i = 0; i < op->num_regions; i++) {
    if (!sim_vregion(v, &op->regions[i])) return 0;
    v->op = op;
  }
  return sim_vop_rules(v) && sim_vdefine(v, op->results, op->num_results);
}

static int sim_vregion(sim_vchk *v, const xrt_ir_region *r) {
  if (++v->depth > SIM_SER_DEPTH) return sim_vbad(v, "regions nest too deep");
  if (!sim_vdefine(v, r->args, r->num_args)) return 0;
  for (int32_t i = 0; i < r->num_ops; i++)
    if (!sim_vop(v, &r->ops[i], i == r->num_ops - 1)) return 0;
  for (int32_t i = 0; i < r->num_ops; i++)
    sim_vforget(v, r->ops[i].results, r->ops[i].num_results);
  sim_vforget(v, r->args, r->num_args);
  v->depth--;
  return 1;
}

static int sim_vfunc(sim_vchk *v, const xrt_ir_func *f) {
  v->f = f;
  v->op = NULL;
  v->depth = 0;
  memset(v->state, 0, (size_t)f->num_values);
  for (int32_t i = 0; i < f->num_results; i++)
    if (!sim_vtype_plain(&f->result_types[i]))
      return sim_vbad(v, "quantized types are not loaded from bytes");
  const xrt_ir_region *b = &f->body;
  const xrt_ir_op *ret = &b->ops[b->num_ops - 1];
  if (!sim_vregion(v, b)) return 0;
  if (ret->code != XRT_OP_FUNC_RETURN || ret->num_operands != f->num_results)
    return sim_vbad(v, "function does not return its results");
  for (int32_t i = 0; i < f->num_results; i++)
    if (!sim_vtype_eq(sim_vty(v, ret->operands[i]), &f->result_types[i]))
      return sim_vbad(v, "function returns a value of the wrong type");
  return 1;
}

/* NULL if m is a module the planner can take, else what is wrong.  The
 * scratch comes from r's pool (it lives as long as the module). */
static const char *sim_vmodule(sim_rbuf *r, const xrt_ir_module *m,
                               int32_t entry) {
  /* The entry takes and returns tensors only (buffers). */
  const xrt_ir_func *e = &m->funcs[entry];
  for (int32_t i = 0; i < e->body.num_args; i++)
    if (e->value_types[e->body.args[i]].kind != XRT_TYPE_TENSOR)
      return "the entry takes a value that is not a tensor";
  for (int32_t i = 0; i < e->num_results; i++)
    if (e->result_types[i].kind != XRT_TYPE_TENSOR)
      return "the entry returns a value that is not a tensor";
  int32_t most = 1;
  for (int32_t i = 0; i < m->num_funcs; i++)
    if (m->funcs[i].num_values > most) most = m->funcs[i].num_values;
  sim_vchk v;
  memset(&v, 0, sizeof v);
  v.m = m;
  v.collectives = r->version >= 3;
  v.state = (unsigned char *)sim_ralloc(r, (size_t)most);
  if (!v.state) return "out of host memory";
  for (int32_t i = 0; i < m->num_funcs && !v.why; i++)
    sim_vfunc(&v, &m->funcs[i]);
  return v.why;
}

/* Hands the blocks of from to the pool to (freed with it). */
static void sim_pool_adopt(sim_pool *to, sim_pool *from) {
  if (!from->head) return;
  void *tail = from->head;
  while (*(void **)tail) tail = *(void **)tail;
  *(void **)tail = to->head;
  to->head = from->head;
  from->head = NULL;
}

static bool sim_same_shape(const xrt_ir_type *t, const xrt_shape *s) {
  if (t->kind != XRT_TYPE_TENSOR || t->shape.dtype != s->dtype ||
      t->shape.rank != s->rank)
    return false;
  for (int32_t d = 0; d < s->rank; d++)
    if (t->shape.dims[d] != s->dims[d]) return false;
  return true;
}

/* The core sizes argument and result buffers, and host bindings, by its
 * own record of the executable: decoded bytes that disagree with it (yet
 * pass every other check) would make kernels read or write past them.
 * NULL when they agree (or the core is older and says nothing). */
static const char *sim_signature_mismatch(const xrt_ir_module *m,
                                          int32_t entry,
                                          const xrt_plugin_compile_args *a) {
  if (!XRT_STRUCT_HAS(a, xrt_plugin_compile_args, output_shapes))
    return NULL;
  if (m->num_custom_calls != a->num_host_bindings) return "host call count";
  const xrt_ir_func *f = &m->funcs[entry];
  if (f->body.num_args != a->num_inputs || f->num_results != a->num_outputs)
    return "entry signature";
  for (int32_t i = 0; i < a->num_inputs; i++)
    if (!a->input_shapes ||
        !sim_same_shape(&f->value_types[f->body.args[i]], &a->input_shapes[i]))
      return "an entry input shape";
  for (int32_t i = 0; i < a->num_outputs; i++)
    if (!a->output_shapes ||
        !sim_same_shape(&f->result_types[i], &a->output_shapes[i]))
      return "an entry output shape";
  return NULL;
}

static xrt_status sim_executable_deserialize(void *client,
                                             const xrt_plugin_compile_args *args,
                                             const void *data, size_t size,
                                             void **out_executable,
                                             xrt_plugin_error *err) {
  sim_client *c = (sim_client *)client;
  if (!c || !args || args->struct_size < SIM_COMPILE_ARGS_MIN ||
      !out_executable || (!data && size))
    return sim_fail(err, XRT_INVALID_ARGUMENT, "bad deserialize arguments");
  *out_executable = NULL;
  sim_rbuf r;
  memset(&r, 0, sizeof r);
  r.p = (const unsigned char *)data;
  r.n = size;
  r.verified = XRT_STRUCT_HAS(args, xrt_plugin_compile_args, bytes_verified) &&
               args->bytes_verified;
  r.pool.al = c->al;
  for (int i = 0; i < c->ndev; i++)
    if (c->dev[i].limit > r.max_tensor_bytes)
      r.max_tensor_bytes = c->dev[i].limit;
  int32_t entry = -1;
  const xrt_ir_module *m = sim_rmodule(&r, &entry);
  if (!m) {
    sim_pool_release(&r.pool);
    int oom = r.why && strcmp(r.why, "out of host memory") == 0;
    return sim_fail(err, oom ? XRT_RESOURCE_EXHAUSTED : XRT_INVALID_ARGUMENT,
                    "serialized executable: %s at byte %zu of %zu",
                    r.why ? r.why : "unreadable", r.at, size);
  }
  const char *bad = sim_signature_mismatch(m, entry, args);
  if (bad) {
    sim_pool_release(&r.pool);
    return sim_fail(err, XRT_INVALID_ARGUMENT,
                    "serialized executable: %s differs from what the core "
                    "expects", bad);
  }
  xrt_plugin_compile_args a; /* (an older core's may be shorter) */
  memset(&a, 0, sizeof a);
  memcpy(&a, args, args->struct_size < sizeof a ? args->struct_size : sizeof a);
  a.module = m;
  a.entry = entry;
  sim_exe *e = NULL;
  xrt_status rc = sim_compile_given(client, &a, r.fz, r.nfz, (void **)&e,
                                    err);
  if (rc) {
    sim_pool_release(&r.pool);
    /* Bytes the planner refuses (say, a compare_type it has no kernel
     * for) are bytes this simulator does not recognise. */
    if (rc == XRT_RESOURCE_EXHAUSTED) return rc;
    char why[sizeof err->message] = "does not compile";
    if (err) memcpy(why, err->message, sizeof why - 1);
    return sim_fail(err, XRT_INVALID_ARGUMENT, "serialized executable: %s",
                    why);
  }
  sim_pool_adopt(&e->pool, &r.pool); /* the module lives as long as e */
  *out_executable = e;
  return XRT_OK;
}

static const xrt_plugin_api sim_api = {
    .struct_size = sizeof(xrt_plugin_api),
    .abi_major = XRT_PLUGIN_ABI_MAJOR,
    .abi_minor = XRT_PLUGIN_ABI_MINOR,
    .name = "sim",
    .version = "0.3.0",
    .client_create = sim_client_create,
    .client_destroy = sim_client_destroy,
    .device_count = sim_device_count,
    .device_describe = sim_device_describe,
    .buffer_alloc = sim_buffer_alloc,
    .buffer_free = sim_buffer_free,
    .buffer_write = sim_buffer_write,
    .buffer_read = sim_buffer_read,
    .buffer_copy = sim_buffer_copy,
    .compile = sim_compile,
    .executable_destroy = sim_executable_destroy,
    .execute = sim_execute,
    .inject_fault = sim_inject_fault,
    /* ABI 1.0 (helpers: add your entries on their own lines below) */
    .buffer_host_pointer = sim_buffer_host_pointer,
    .buffer_wrap_host = sim_buffer_wrap_host,
    .platform_describe = sim_platform_describe,
    .op_support = sim_op_support,
    .inject_fault_kind = sim_inject_fault_kind,
    .buffer_copy_region = sim_buffer_copy_region,
    .executable_serialize = sim_executable_serialize,
    .serialized_free = sim_serialized_free,
    .executable_deserialize = sim_executable_deserialize,
};

const xrt_plugin_api *xrt_sim_plugin_api(void) { return &sim_api; }

#ifdef XRT_PLUGIN_SHARED
SIM_EXPORT const xrt_plugin_api *xrt_plugin_get_api(void) { return &sim_api; }
#endif
