/*
 * src/sim/internal.h - what the files of the simulator share.  The
 * simulated multi-device accelerator is a device plugin like any vendor's,
 * built into xrt (or, with -DXRT_PLUGIN_SHARED, a library of its own); it
 * includes only xrt.h.  MIT licensed; see LICENSE.
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
 * The files (src/sim/sources.txt; the generated single file xrt_sim.c is
 * this header and then these, in this order):
 *   elementwise.c integer.c bitwise.c complex.c compare.c convert.c
 *   minifloat.c quant.c   elementwise kernels: the dispatch with the pred
 *                   and float kernels; integer arithmetic; bitwise ops;
 *                   complex arithmetic; compare; convert and
 *                   bitcast_convert; the f8/f6/f4 families and
 *                   reduce_precision; quantized tensors
 *   device.c        small helpers, clients, devices and device memory,
 *                   fault kinds, region copies, zero-copy host memory
 *   plan.c          plans and steps; the planner (values, liveness, slots)
 *   move.c reduce.c gemm.c control.c   data movement, reduce, dot_general
 *                   and GEMM, control flow and structure
 *   lower.c         lowering ops to steps: the op table, quantized compute
 *   index.c         indexing and windows
 *   linalg.c conv.c fft.c solve.c batchnorm.c rng.c ragged_dot.c   linear
 *                   algebra and numerics: the shared dot kernels,
 *                   convolution, fft, triangular_solve and cholesky, batch
 *                   norm, random numbers, chlo.ragged_dot
 *   pool.c fusion.c the device thread pools; fused loops
 *   collectives.c collectives_mp.c launch.c   launches and collectives
 *                   within a process and across processes, send/recv,
 *                   fault injection, per-device frames
 *   exec.c plugin.c serialize.c   executables and execution, the platform
 *                   description and plugin table, serialized executables
 */
#if defined(__linux__) && !defined(_GNU_SOURCE)
#define _GNU_SOURCE 1 /* sched_getcpu, pthread_setaffinity_np (pool.c) */
#endif
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


/* SIM_X86: the AVX2 and AVX-512 kernels are compiled in (gcc or clang on
 * x86; the running CPU's best is chosen at run time, sim_isa_level), and
 * SIM_X86_64 those of them that need 64-bit mode.  XRT_SIM_PORTABLE
 * leaves them out, the portable kernels only: the fuzz build (make fuzz),
 * whose fuzzers aim at parsing, verifying and planning, and where
 * compiling those kernels with the sanitizers' checks took three quarters
 * of the build. */
#if !defined(XRT_SIM_PORTABLE) && (defined(__GNUC__) || defined(__clang__)) && \
    (defined(__x86_64__) || defined(__i386__))
#define SIM_X86 1
#else
#define SIM_X86 0
#endif
#if SIM_X86 && defined(__x86_64__)
#define SIM_X86_64 1
#else
#define SIM_X86_64 0
#endif

/* The even and odd lanes of two 16-lane vectors a, b (a's then b's):
 * stride-2 runs of 32 elements (pools, Winograd's NCHW patches).  The
 * builtin is clang's, and GCC's from 12 on; SIM_V16_SHUFFLE says so. */
#if defined(__clang__) || (defined(__GNUC__) && __GNUC__ >= 12)
#define SIM_V16_SHUFFLE 1
#define SIM_V16_EVEN(a, b)                                                    \
  __builtin_shufflevector(a, b, 0, 2, 4, 6, 8, 10, 12, 14, 16, 18, 20, 22,    \
                          24, 26, 28, 30)
#define SIM_V16_ODD(a, b)                                                     \
  __builtin_shufflevector(a, b, 1, 3, 5, 7, 9, 11, 13, 15, 17, 19, 21, 23,    \
                          25, 27, 29, 31)
#else
#define SIM_V16_SHUFFLE 0
#endif

/* Non-temporal stores (SSE2, every x86-64): big results bypass the cache
 * (fused loops, collectives).  Tested with #ifdef, so it must be seen by
 * every file that uses it: here, not in one file. */
#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
/* SSE2 only: <immintrin.h> (every instruction set's intrinsics) costs half
 * a second of compiling per file that includes it, more than most files
 * take, and only the few files with AVX2/AVX-512 kernels need it. */
#include <emmintrin.h>
#define SIM_HAVE_STREAM 1
#endif

/* The most participants (replicas x partitions) one launch may have. */
#define SIM_MAX_PROCS (1 << 16)

/* Functions and data that one file of src/sim defines for others: hidden
 * (extern, but not exported) in the separate build, static in the
 * generated single file, which defines SIM_AMALGAMATION. */
#if defined(SIM_AMALGAMATION)
#define SIM_PRIVATE static
#define SIM_PRIVATE_DATA static
#define SIM_EXTERN_DATA static
#elif defined(__GNUC__) && !defined(_WIN32)
#define SIM_PRIVATE __attribute__((visibility("hidden")))
#define SIM_PRIVATE_DATA __attribute__((visibility("hidden")))
#define SIM_EXTERN_DATA extern __attribute__((visibility("hidden")))
#else
#define SIM_PRIVATE
#define SIM_PRIVATE_DATA
#define SIM_EXTERN_DATA extern
#endif


/* ---- device.c ---- */
SIM_PRIVATE long sim_os_cpu_count(void);

/* ---- elementwise.c ---- */

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
/* CHLO's math without a StableHLO op (special.c), also in double. */
#define SIM_CHLO_UN_OPS(X)                                                    \
  X(ACOS) X(ACOSH) X(ASIN) X(ASINH) X(ATAN) X(ATANH) X(COSH) X(SINH) X(I1E)   \
  X(DIGAMMA) X(ERF) X(ERFC) X(ERFINV) X(LGAMMA)
#define SIM_CHLO_BIN_OPS(X) X(POLYGAMMA) X(ZETA)
#define SIM_F_ACOS(x) acos(x)
#define SIM_F_ACOSH(x) acosh(x)
#define SIM_F_ASIN(x) asin(x)
#define SIM_F_ASINH(x) asinh(x)
#define SIM_F_ATAN(x) atan(x)
#define SIM_F_ATANH(x) atanh(x)
#define SIM_F_COSH(x) cosh(x)
#define SIM_F_SINH(x) sinh(x)
#define SIM_F_ERF(x) erf(x)
#define SIM_F_ERFC(x) erfc(x)
#define SIM_F_LGAMMA(x) lgamma(x)
#define SIM_F_I1E(x) sim_bessel_i1e(x)
#define SIM_F_DIGAMMA(x) sim_digamma(x)
#define SIM_F_ERFINV(x) sim_erf_inv(x)
#define SIM_F_POLYGAMMA(n, x) sim_polygamma(n, x)
#define SIM_F_ZETA(x, q) sim_zeta(x, q)
SIM_PRIVATE double sim_bessel_i1e(double x);
SIM_PRIVATE double sim_digamma(double x);
SIM_PRIVATE double sim_erf_inv(double x);
SIM_PRIVATE double sim_polygamma(double n, double x);
SIM_PRIVATE double sim_zeta(double x, double q);
SIM_PRIVATE void sim_ADD_f32(void *const *in, void *out, size_t n, const void *ctx);
SIM_PRIVATE void sim_SUB_f32(void *const *in, void *out, size_t n, const void *ctx);
SIM_PRIVATE void sim_MUL_f32(void *const *in, void *out, size_t n, const void *ctx);
SIM_PRIVATE void sim_DIV_f32(void *const *in, void *out, size_t n, const void *ctx);
SIM_PRIVATE void sim_MAX_f32(void *const *in, void *out, size_t n, const void *ctx);
SIM_PRIVATE void sim_MIN_f32(void *const *in, void *out, size_t n, const void *ctx);
SIM_PRIVATE void sim_NEG_f32(void *const *in, void *out, size_t n, const void *ctx);
SIM_PRIVATE void sim_ABS_f32(void *const *in, void *out, size_t n, const void *ctx);
SIM_PRIVATE void sim_ADD_f64(void *const *in, void *out, size_t n, const void *ctx);
SIM_PRIVATE void sim_SUB_f64(void *const *in, void *out, size_t n, const void *ctx);
SIM_PRIVATE void sim_MUL_f64(void *const *in, void *out, size_t n, const void *ctx);
SIM_PRIVATE void sim_DIV_f64(void *const *in, void *out, size_t n, const void *ctx);
SIM_PRIVATE void sim_MAX_f64(void *const *in, void *out, size_t n, const void *ctx);
SIM_PRIVATE void sim_MIN_f64(void *const *in, void *out, size_t n, const void *ctx);
SIM_PRIVATE void sim_NEG_f64(void *const *in, void *out, size_t n, const void *ctx);
SIM_PRIVATE void sim_ABS_f64(void *const *in, void *out, size_t n, const void *ctx);

/* ---- dispatch ---- */

/* Element classes a loaded executable may apply an elementwise op to (the
 * core verifier's masks, which serialize.c checks again): bits of pred,
 * integers, floats (small ones too) and complex, and the sets in use. */
enum {
  SIM_VK_P = 1, SIM_VK_I = 2, SIM_VK_F = 4, SIM_VK_C = 8,
  SIM_VK_NONE = 0, /* not loadable from serialized bytes */
  SIM_VK_PI = SIM_VK_P | SIM_VK_I,
  SIM_VK_FC = SIM_VK_F | SIM_VK_C,
  SIM_VK_IFC = SIM_VK_I | SIM_VK_FC,
  SIM_VK_PIFC = SIM_VK_P | SIM_VK_IFC
};

/* Elementwise ops with one kernel per element type: our id, xrt opcode,
 * number of operands, element classes (SIM_VK_*) a loaded executable may
 * apply it to.  The op table (lower.c) takes its entries for these ops
 * from here. */
#define SIM_EW_OPS(X)                                                         \
  X(ADD, ADD, 2, PIFC) X(SUB, SUBTRACT, 2, IFC) X(MUL, MULTIPLY, 2, PIFC)     \
  X(DIV, DIVIDE, 2, IFC) X(REM, REMAINDER, 2, IFC) X(MAX, MAXIMUM, 2, PIFC)   \
  X(MIN, MINIMUM, 2, PIFC) X(POW, POWER, 2, IFC) X(AND, AND, 2, PI)           \
  X(OR, OR, 2, PI) X(XOR, XOR, 2, PI) X(SHL, SHIFT_LEFT, 2, I)                \
  X(SHRL, SHIFT_RIGHT_LOGICAL, 2, I) X(SHRA, SHIFT_RIGHT_ARITHMETIC, 2, I)    \
  X(ATAN2, ATAN2, 2, FC) X(CMK, COMPLEX, 2, NONE) X(NEG, NEGATE, 1, IFC)      \
  X(ABS, ABS, 1, IFC) X(SIGN, SIGN, 1, IFC) X(NOT, NOT, 1, PI)                \
  X(EXP, EXPONENTIAL, 1, FC) X(LOG, LOG, 1, FC) X(SQRT, SQRT, 1, FC)          \
  X(RSQRT, RSQRT, 1, FC) X(TANH, TANH, 1, FC) X(LOGISTIC, LOGISTIC, 1, FC)    \
  X(SIN, SINE, 1, FC) X(COS, COSINE, 1, FC) X(TAN, TAN, 1, FC)                \
  X(FLOOR, FLOOR, 1, F) X(CEIL, CEIL, 1, F)                                   \
  X(RAFZ, ROUND_NEAREST_AFZ, 1, F) X(REVEN, ROUND_NEAREST_EVEN, 1, F)         \
  X(POPCNT, POPCNT, 1, I) X(CLZ, COUNT_LEADING_ZEROS, 1, I)                   \
  X(EXPM1, EXPONENTIAL_MINUS_ONE, 1, FC) X(LOG1P, LOG_PLUS_ONE, 1, FC)        \
  X(CBRT, CBRT, 1, FC) X(ISFIN, IS_FINITE, 1, NONE) X(REAL, REAL, 1, NONE)    \
  X(IMAG, IMAG, 1, NONE) X(MULHI, CHLO_MULHI, 2, NONE)                       \
  X(ACOS, CHLO_ACOS, 1, FC) X(ACOSH, CHLO_ACOSH, 1, FC)                       \
  X(ASIN, CHLO_ASIN, 1, FC) X(ASINH, CHLO_ASINH, 1, FC)                       \
  X(ATAN, CHLO_ATAN, 1, FC) X(ATANH, CHLO_ATANH, 1, FC)                       \
  X(COSH, CHLO_COSH, 1, FC) X(SINH, CHLO_SINH, 1, FC)                         \
  X(I1E, CHLO_BESSEL_I1E, 1, F) X(DIGAMMA, CHLO_DIGAMMA, 1, F)                \
  X(ERF, CHLO_ERF, 1, F) X(ERFC, CHLO_ERFC, 1, F)                             \
  X(ERFINV, CHLO_ERF_INV, 1, F) X(LGAMMA, CHLO_LGAMMA, 1, F)                  \
  X(NEXTAFTER, CHLO_NEXT_AFTER, 2, F) X(POLYGAMMA, CHLO_POLYGAMMA, 2, F)      \
  X(ZETA, CHLO_ZETA, 2, F)

enum {
#define SIM_EW_ENUM(e, xo, ar, vk) SIM_EW_##e,
  SIM_EW_OPS(SIM_EW_ENUM)
#undef SIM_EW_ENUM
  SIM_EW_NOPS
};
SIM_PRIVATE int sim_ew_op_of(xrt_opcode code);
SIM_PRIVATE int sim_ew_handles(xrt_opcode code);

/* The element classes the kernels tell apart. */
enum sim_ew_class {
  SIM_EWC_NONE,      /* not an element type the kernels know */
  SIM_EWC_PRED,
  SIM_EWC_SIGNED,    /* s2 ... s64 */
  SIM_EWC_UNSIGNED,  /* u2 ... u64 */
  SIM_EWC_FLOAT,     /* f16, bf16, f32, f64 */
  SIM_EWC_MINIFLOAT, /* the f8/f6/f4 families */
  SIM_EWC_COMPLEX,
  SIM_EWC_COUNT
};
SIM_PRIVATE enum sim_ew_class sim_ew_class(xrt_dtype t);
SIM_PRIVATE int sim_ew_bits(xrt_dtype t);
SIM_PRIVATE size_t sim_ew_size(xrt_dtype t);
SIM_PRIVATE const char *sim_opcode_name(xrt_opcode code);
SIM_PRIVATE int sim_dtype_is_float(xrt_dtype t);
SIM_PRIVATE int sim_dtype_is_complex(xrt_dtype t);

/* ---- device.c ---- */
SIM_PRIVATE const char *sim_dtype_name(xrt_dtype t);

/* ---- elementwise.c ---- */
#define SIM_F_REAL(x) (x)
#define SIM_F_IMAG(x) ((x) * 0 == 0 ? 0.0 : 0.0)

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
SIM_PRIVATE void sim_q_run(void *const *in, void *out, size_t n, const void *ctx);
SIM_PRIVATE int sim_q_value(const xrt_ir_type *ty, sim_qv *q);
SIM_PRIVATE sim_ew_fn sim_ew_kernel(const xrt_allocator *al, const xrt_ir_func *f,
                               const xrt_ir_op *op, const void **ctx_out,
                               int *ctx_owned, char *why, size_t whycap);

/* ---- what the files of the elementwise kernels share ----
 *
 * The kernels are hundreds of stamped functions, split by family so that
 * every file compiles quickly: elementwise.c holds the dispatch
 * (sim_ew_kernel) and the pred and float kernels; integer.c, bitwise.c,
 * complex.c, compare.c, convert.c, minifloat.c and quant.c hold the other
 * families, whose kernels stay static and are reached through the lookups
 * and builders below.  What more than one of these files stamps or calls
 * is here: type lists, stamping macros, loads and stores, small-float
 * decoding. */

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

/* Arithmetic right shift of a w-bit pattern (also for unsigned types). */
static inline uint64_t sim_sra(uint64_t bits, uint64_t sh, int w) {
  int64_t s = sim_sext(bits, w);
  if (sh >= (uint64_t)w) return s < 0 ? ~(uint64_t)0 : 0;
  return (uint64_t)(s < 0 ? ~(~s >> sh) : s >> sh);
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

/* Integer kernels of op OP (integer.c, bitwise.c), and their table rows. */
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
#define SIM_TENT_I(OP, nm, code, T, P, W, SG) [SIM_EW_##OP][code] = sim_##OP##_##nm,
#define SIM_TROW_I(OP) SIM_INT_TYPES(SIM_TENT_I, OP)

/* Float types: name, dtype, storage T, compute type C, load, store, and the
 * totalOrder key of a stored value (compare.c defines the keys). */
#define SIM_ID(x) (x)
#define SIM_FLT_TYPES(X, OP)                                                  \
  X(OP, f32, XRT_F32, float, float, SIM_ID, SIM_ID, sim_key_f32)              \
  X(OP, f64, XRT_F64, double, double, SIM_ID, SIM_ID, sim_key_f64)            \
  X(OP, f16, XRT_F16, uint16_t, float, xrt_f16_to_f32, xrt_f32_to_f16,        \
    sim_key_h)                                                                \
  X(OP, bf16, XRT_BF16, uint16_t, float, xrt_bf16_to_f32, xrt_f32_to_bf16,    \
    sim_key_h)

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

/* Complex types: name, dtype, type of the real and imaginary parts. */
#define SIM_CPX_TYPES(X, OP)                                                  \
  X(OP, c64, XRT_C64, float)                                                  \
  X(OP, c128, XRT_C128, double)

/* Complex values travel as pairs of doubles. */
typedef struct sim_c2 {
  double re, im;
} sim_c2;
static inline sim_c2 sim_c2_mk(double re, double im) {
  sim_c2 r;
  r.re = re;
  r.im = im;
  return r;
}

/* Compare directions, as the compare tables index them. */
enum { SIM_EQ, SIM_NE, SIM_GE, SIM_GT, SIM_LE, SIM_LT, SIM_NDIRS };

/* ---- loads and stores by element type (convert, minifloat, quant) ---- */

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

/* ---- the f8/f6/f4 families (minifloat.c; quant.c decodes them too) ---- */

/* The context of a small-float kernel. */
typedef struct sim_mf {
  xrt_dtype t, r;   /* operand and result element types */
  int dir;          /* compare: SIM_EQ..SIM_LT, +8 for TOTALORDER */
  uint8_t tmask;    /* the operand's bits within its byte */
  double dec[256];  /* operand bit pattern -> value */
} sim_mf;

/* The value of bit pattern b of small-float type t. */
static inline double sim_mf_dec1(xrt_dtype t, uint8_t b) {
  xrt_minifloat_format f;
  if (!xrt_minifloat_format_of(t, &f)) return 0;
  unsigned w = f.kind == XRT_MINIFLOAT_E8M0 ? 8u : 1u + f.ebits + f.mbits;
  return xrt_minifloat_to_f64(t, (uint8_t)(b & ((1u << w) - 1u)));
}

static inline int sim_is_mf(xrt_dtype t) {
  return t >= XRT_F8E4M3FN && t <= XRT_F4E2M1FN;
}

/* ---- elementwise.c ---- */
SIM_PRIVATE void sim_copy(void *const *in, void *out, size_t n,
                          const void *ctx);
/* sim_esz[k] == k: element sizes to pass as a kernel's ctx (sim_copy). */
SIM_EXTERN_DATA const size_t sim_esz[17];
SIM_PRIVATE sim_ew_fn sim_ew_unsup(const xrt_ir_func *f, const xrt_ir_op *op,
                                   int32_t v, int32_t r,
                                   const char *why_extra, char *why,
                                   size_t whycap);
SIM_PRIVATE sim_ew_fn sim_ew_oom(int *ctx_owned, char *why, size_t whycap);

/* ---- integer.c bitwise.c complex.c compare.c ---- */
SIM_PRIVATE sim_ew_fn sim_int_kernel(int e, xrt_dtype t);
SIM_PRIVATE sim_ew_fn sim_bit_kernel(int e, xrt_dtype t);
SIM_PRIVATE sim_ew_fn sim_cpx_kernel(int e, xrt_dtype t);
SIM_PRIVATE sim_ew_fn sim_cmp_kernel(int tot, int dir, xrt_dtype t);

/* ---- convert.c ---- */
SIM_PRIVATE sim_ew_fn sim_cv_kernel(xrt_dtype t, xrt_dtype r);
SIM_PRIVATE sim_ew_fn sim_ew_bitcast(const xrt_allocator *al,
                                     const xrt_ir_func *f,
                                     const xrt_ir_op *op,
                                     const void **ctx_out, int *ctx_owned,
                                     char *why, size_t whycap);

/* ---- minifloat.c ---- */
SIM_PRIVATE uint8_t sim_mf_enc(xrt_dtype t, double d);
SIM_PRIVATE sim_mf *sim_mf_new(const xrt_allocator *al, xrt_dtype t,
                               xrt_dtype r);
SIM_PRIVATE void sim_cmp_mf(void *const *in, void *out, size_t n,
                            const void *ctx);
SIM_PRIVATE sim_ew_fn sim_mf_kernel(int e);
/* special.c: CHLO's math (SIM_CHLO_*_OPS, next_after) on floats and the
 * complex trigonometric and hyperbolic ones; NULL for other ops. */
SIM_PRIVATE sim_ew_fn sim_chlo_kernel(int e, xrt_dtype t);
SIM_PRIVATE sim_ew_fn sim_mf_cv_kernel(xrt_dtype t, xrt_dtype r);
SIM_PRIVATE sim_ew_fn sim_ew_reduce_precision(const xrt_allocator *al,
                                              const xrt_ir_func *f,
                                              const xrt_ir_op *op,
                                              const void **ctx_out,
                                              int *ctx_owned, char *why,
                                              size_t whycap);

/* ---- quant.c ---- */
SIM_PRIVATE sim_ew_fn sim_ew_quant(const xrt_allocator *al,
                                   const xrt_ir_func *f, const xrt_ir_op *op,
                                   int e, int arity, const void **ctx_out,
                                   int *ctx_owned, char *why, size_t whycap);

#define SIM_ALIGN 64
#define SIM_MAX_EW_IN 8
#define SIM_CACHE_SLOTS 8
#define SIM_CACHE_MAX_BYTES ((size_t)1 << 30)

#if defined(__GNUC__)
#define SIM_PRINTF(a, b) XRT_PRINTF_FORMAT(a, b)
#else
#define SIM_PRINTF(a, b)
#endif

/* ---- device.c ---- */
SIM_PRIVATE size_t sim_align_up(size_t n);
SIM_PRIVATE xrt_status sim_vfail(xrt_plugin_error *err, xrt_status code,
                            const char *prefix, const char *fmt, va_list ap);
SIM_PRIVATE xrt_status sim_fail(xrt_plugin_error *err, xrt_status code,
                           const char *fmt, ...) SIM_PRINTF(3, 4);
SIM_PRIVATE void sim_loc(const xrt_ir_op *op, char *buf, size_t cap);
SIM_PRIVATE xrt_status sim_fail_op(xrt_plugin_error *err, const xrt_ir_op *op,
                              xrt_status code, const char *fmt, ...)
    SIM_PRINTF(4, 5);
SIM_PRIVATE size_t sim_esize(xrt_dtype t);
SIM_PRIVATE int64_t sim_numel(const xrt_shape *s);
SIM_PRIVATE size_t sim_bytes(const xrt_shape *s);
SIM_PRIVATE void sim_strides(const xrt_shape *s, int64_t *st);

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
SIM_PRIVATE void *sim_pool_raw(sim_pool *p, size_t bytes);
SIM_PRIVATE void *sim_pool_alloc(sim_pool *p, size_t bytes);
SIM_PRIVATE void sim_pool_release(sim_pool *p);

/* A growable array for compile-time bookkeeping (freed after compile). */
typedef struct sim_vec {
  char *p;
  int32_t n, cap;
  size_t es;
} sim_vec;
SIM_PRIVATE void *sim_vec_push(const xrt_allocator *al, sim_vec *v);
SIM_PRIVATE void sim_vec_free(const xrt_allocator *al, sim_vec *v);
SIM_PRIVATE int sim_push_i32(const xrt_allocator *al, sim_vec *v, int32_t x);

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
  /* Packed GEMM operands kept across executes (gemm_cache.c), made on
   * first use. */
  _Atomic(struct sim_gcache *) gcache;
} sim_client;

/* ---- collectives.c ---- */
SIM_PRIVATE void sim_launches_free(sim_client *c);

/* ---- pool.c ---- */
SIM_PRIVATE xrt_status sim_tpools_make(sim_client *c, int threads,
                                  xrt_plugin_error *err);
SIM_PRIVATE void sim_tpools_free(sim_client *c);

/* ---- plugin.c ---- */
SIM_PRIVATE void sim_trace_attach(sim_client *c,
                             const xrt_plugin_client_args *args);

/* ---- device.c ---- */
SIM_PRIVATE void sim_client_destroy(void *client);
SIM_PRIVATE xrt_status sim_client_create(const xrt_plugin_client_args *args,
                                    void **out_client, xrt_plugin_error *err);
SIM_PRIVATE int sim_device_count(void *client);
SIM_PRIVATE xrt_status sim_check_device(sim_client *c, int device,
                                   xrt_plugin_error *err);
SIM_PRIVATE xrt_status sim_device_describe(void *client, int device,
                                      xrt_plugin_device_desc *out,
                                      xrt_plugin_error *err);
SIM_PRIVATE xrt_status sim_buffer_alloc(void *client, int device, size_t bytes,
                                   void **out_mem, xrt_plugin_error *err);
SIM_PRIVATE void sim_buffer_free(void *client, int device, void *mem);
SIM_PRIVATE xrt_status sim_buffer_write(void *client, int device, void *mem,
                                   const void *src, size_t bytes,
                                   xrt_plugin_error *err);
SIM_PRIVATE xrt_status sim_buffer_read(void *client, int device, const void *mem,
                                  void *dst, size_t bytes,
                                  xrt_plugin_error *err);
SIM_PRIVATE xrt_status sim_buffer_copy(void *client, int src_device,
                                  const void *src, int dst_device, void *dst,
                                  size_t bytes, xrt_plugin_error *err);

/* ---- plan.c ---- */

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

/* ---- pool.c ---- */
SIM_PRIVATE void sim_parallel_for(sim_cx *cx, int64_t n, int64_t grain,
                             sim_range_fn fn, void *ctx);

/* ---- launch.c ---- */
SIM_PRIVATE xrt_status sim_fault_hit(sim_cx *cx, const sim_step *s);

/* ---- plan.c ---- */
SIM_PRIVATE xrt_status sim_run_plan(const sim_plan *p, void **vals, sim_cx *cx);

/* ---- move.c ---- */

/* ======================================================================
 * Data movement kernels: strided copies and fills by element size
 * ==================================================================== */

typedef struct sim_b16 {
  uint64_t lo, hi;
} sim_b16;

/* Copies n elements with byte strides ds/ss (either may be 0 or negative). */
typedef void (*sim_inner_fn)(char *d, const char *s, int64_t n, ptrdiff_t ds,
                             ptrdiff_t ss);

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
SIM_PRIVATE void sim_xcopy_init(sim_xcopy *x, size_t es, int rank,
                           const int64_t *dims, const int64_t *ss,
                           const int64_t *ds, int64_t sbase, int64_t dbase);
SIM_PRIVATE void sim_xcopy_run(const sim_xcopy *x, char *dst, const char *src);

/* Fills n elements with the element at val. */
typedef void (*sim_fill_fn)(char *d, const char *val, int64_t n);
SIM_PRIVATE sim_fill_fn sim_fill_for(size_t es);
SIM_PRIVATE xrt_status sim_run_copy(const sim_step *st, void **vals, sim_cx *cx);
SIM_PRIVATE xrt_status sim_run_copy_all(const sim_step *st, void **vals,
                                   sim_cx *cx);
SIM_PRIVATE xrt_status sim_run_xcopy(const sim_step *st, void **vals, sim_cx *cx);

typedef struct sim_pad {
  sim_xcopy x;
  sim_fill_fn fill;
  int64_t n; /* result elements */
} sim_pad;
SIM_PRIVATE xrt_status sim_run_pad(const sim_step *st, void **vals, sim_cx *cx);

typedef struct sim_cat {
  int64_t outer;       /* product of the dimensions before the axis */
  const size_t *chunk; /* bytes of each operand per outer index */
} sim_cat;
SIM_PRIVATE xrt_status sim_run_concat(const sim_step *st, void **vals, sim_cx *cx);
SIM_PRIVATE xrt_status sim_run_select_scalar(const sim_step *st, void **vals,
                                        sim_cx *cx);
SIM_PRIVATE xrt_status sim_run_select_1(const sim_step *st, void **vals,
                              sim_cx *cx);
SIM_PRIVATE xrt_status sim_run_select_2(const sim_step *st, void **vals,
                              sim_cx *cx);
SIM_PRIVATE xrt_status sim_run_select_4(const sim_step *st, void **vals,
                              sim_cx *cx);
SIM_PRIVATE xrt_status sim_run_select_8(const sim_step *st, void **vals,
                              sim_cx *cx);
SIM_PRIVATE xrt_status sim_run_select_16(const sim_step *st, void **vals,
                               sim_cx *cx);

/* min(max(x, lo), hi) over n elements; lo/hi advance by ls/hs (0 for a
 * scalar bound, 1 for a full tensor). */
typedef void (*sim_clamp_fn)(void *out, const void *lo, const void *x,
                             const void *hi, int64_t n, int64_t ls,
                             int64_t hs);

#define SIM_LD_ID(x) (x)
#define SIM_LD_F16(x) xrt_f16_to_f32(x)
#define SIM_LD_BF16(x) xrt_bf16_to_f32(x)
SIM_PRIVATE sim_clamp_fn sim_clamp_for(xrt_dtype t);

typedef struct sim_clamp {
  sim_clamp_fn fn;
  int64_t ls, hs;
} sim_clamp;
SIM_PRIVATE xrt_status sim_run_clamp(const sim_step *st, void **vals, sim_cx *cx);
SIM_PRIVATE xrt_status sim_run_ew(const sim_step *st, void **vals, sim_cx *cx);

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
SIM_PRIVATE int sim_is_minifloat(xrt_dtype t);
SIM_PRIVATE int sim_num_supported(xrt_dtype t);
SIM_PRIVATE int64_t sim_wrap_int(xrt_dtype t, int64_t v);
SIM_PRIVATE void sim_load(xrt_dtype t, const void *p, sim_num *v);
SIM_PRIVATE int64_t sim_float_to_i64(double d);
SIM_PRIVATE void sim_store(xrt_dtype t, void *p, const sim_num *v);
SIM_PRIVATE void sim_convert(void *dst, const void *src, int64_t n, xrt_dtype from,
                        xrt_dtype to);
SIM_PRIVATE void sim_wrap_all(xrt_dtype t, void *p, int64_t n);

/* ---- reduce.c ---- */

/* ======================================================================
 * reduce
 * ==================================================================== */

/* Combines n input elements into the accumulator(s): vec = 0 folds them
 * into *acc, vec = 1 combines acc[i] with in[i]. */
typedef void (*sim_red_fn)(void *acc, const void *in, int64_t n, int vec);

/* IEEE maximum/minimum: NaN propagates, -0 < +0. */
#define SIM_FMAX(a, b, fa, fb)                                              \
  ((fa) != (fa) ? (a) : (fb) != (fb) ? (b)                                  \
   : (fa) == (fb) ? (signbit(fa) ? (b) : (a)) : (fa) > (fb) ? (a) : (b))
#define SIM_FMIN(a, b, fa, fb)                                              \
  ((fa) != (fa) ? (a) : (fb) != (fb) ? (b)                                  \
   : (fa) == (fb) ? (signbit(fa) ? (a) : (b)) : (fa) < (fb) ? (a) : (b))
SIM_PRIVATE sim_red_fn sim_red_pick(xrt_opcode code, xrt_dtype t);
SIM_PRIVATE sim_red_fn sim_red_pick_isa(xrt_opcode code, xrt_dtype t);
SIM_PRIVATE int sim_red_add_kind(sim_red_fn fn);

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
SIM_PRIVATE xrt_status sim_run_reduce(const sim_step *st, void **vals,
                                 sim_cx *cx);

/* ---- gemm.c ---- */

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
SIM_PRIVATE sim_dot_fn sim_dot_for(xrt_dtype t, size_t *acc_size);
SIM_PRIVATE xrt_status sim_run_dot(const sim_step *st, void **vals, sim_cx *cx);

/* ---- control.c ---- */

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
  /* Per carry: 1 when the body returns its argument unchanged (weights
   * carried through), read in place from the while's operand; bytes of
   * the result to copy out (0: nothing reads it). */
  const uint8_t *thru;
  const size_t *obytes;
  /* Pseudo values zeroed at every entry (pack flags of loop-invariant
   * operands, see sim_loop_invariant), nflags of them. */
  const int32_t *flags;
  int32_t nflags;
  /* Per carry: 1 when the body's result is pointed at the buffer the next
   * iteration reads before each run of the body (sim_while_redirect). */
  const uint8_t *redir;
} sim_while;
SIM_PRIVATE xrt_status sim_run_while(const sim_step *st, void **vals, sim_cx *cx);

typedef struct sim_call {
  const sim_fplan *fp;
  const size_t *bytes; /* per result */
} sim_call;
SIM_PRIVATE xrt_status sim_run_call(const sim_step *st, void **vals, sim_cx *cx);

typedef struct sim_ccall {
  xrt_host_binding host;
  const char *target;
  const xrt_host_tensor *tmpl; /* shapes and sizes of inputs, outputs */
  int32_t tmp;                 /* pseudo value: this call's tensors */
} sim_ccall;
SIM_PRIVATE xrt_status sim_run_custom_call(const sim_step *st, void **vals,
                                      sim_cx *cx);

/* ---- plan.c ---- */

/* ======================================================================
 * The planner: values, liveness and slots
 * ==================================================================== */

enum { SIM_V_NONE, SIM_V_SLOT, SIM_V_CONST, SIM_V_BOUND, SIM_V_OUT };

typedef struct sim_vinfo {
  uint8_t kind;
  int32_t def, last; /* op positions (pre-order over nested regions) */
  size_t bytes, off, cap;
  int32_t in_out; /* 1 + the entry result whose buffer holds it; 0: arena */
  int32_t alias;  /* 1 + the value whose memory it is (a free reshape) */
  /* the concatenate whose bytes this value is, never materialized: only
   * products read it, from the parts (dot_concat.c) */
  const xrt_ir_op *vcat;
  /* 1 + the concatenate result whose bytes from part_off on this value's
   * memory is (its producer writes its part in place: lower.c); 0: none */
  int32_t part_of;
  size_t part_off;
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
  /* The body of the innermost while being lowered, and its pack flags
   * (sim_loop_invariant); NULL outside one. */
  const xrt_ir_region *lbody;
  sim_vec *lflags;
} sim_fcc;

/* Whether value v is an argument of the body of the while being lowered
 * that the body returns unchanged (the same memory, never written, for
 * the whole loop).  If so, *flag is a new pseudo value of 16 bytes that the
 * while zeroes at every entry, for the reader's "packed already" state;
 * 0 otherwise, or on failure (*rc). */
SIM_PRIVATE int sim_loop_invariant(sim_fcc *fc, int32_t v, int32_t *flag,
                                   xrt_status *rc);

/* ---- device.c ---- */
/* The write generation of device memory mem: a process-wide serial that
 * changes at every allocation of and write into it, or 0 when it has none
 * (adopted host memory, a block whose host address was handed out). */
SIM_PRIVATE uint64_t sim_mem_serial(void *client, int device,
                                    const void *mem);

/* ---- gemm_cache.c ---- */
/* Packed operands kept across executes, per client: an entry belongs to a
 * planned product (gid, from sim_gcache_id), a device and an argument's
 * memory at one write generation (sim_mem_serial), never anything else.
 * sim_gcache_get returns the entry's packed bytes: ready (*fill 0), or to
 * be filled by the caller (*fill 1); NULL when there is none (the first
 * sight of a key only records it, so a product whose operand changes at
 * every call never pays for a copy; full cache; out of memory).  Every
 * non-NULL return is paired with sim_gcache_put(filled: whether the
 * bytes are now valid). */
SIM_PRIVATE uint64_t sim_gcache_id(void);
SIM_PRIVATE void *sim_gcache_get(sim_client *c, uint64_t gid, int device,
                                 const void *mem, uint64_t serial,
                                 size_t bytes, int *fill, void **entry);
SIM_PRIVATE void sim_gcache_put(sim_client *c, void *entry, int filled);
/* sim_gcache_get for mem when it is an argument of the execute cx runs and
 * has a write generation (on the execute's device); NULL otherwise. */
SIM_PRIVATE void *sim_gcache_get_arg(sim_cx *cx, uint64_t gid,
                                     const void *mem, size_t bytes, int *fill,
                                     void **entry);
/* Frees every entry (client destruction). */
SIM_PRIVATE void sim_gcache_free(sim_client *c);

/* Lowers d as a skinny product (skinny.c) when it is one: 1 (and *rc)
 * if it did, 0 to leave d to the other paths. */
SIM_PRIVATE int sim_skinny_lower_dot(sim_fcc *fc, const sim_dot *d,
                                     sim_step *st, xrt_status *rc);
typedef xrt_status (*sim_lower_fn)(sim_fcc *fc, const xrt_ir_op *op,
                                   sim_step *st);
SIM_PRIVATE xrt_status sim_oom(sim_fcc *fc);
SIM_PRIVATE void *sim_palloc(sim_fcc *fc, size_t bytes);
SIM_PRIVATE void *sim_palloc_raw(sim_fcc *fc, size_t bytes);
SIM_PRIVATE const xrt_shape *sim_shape(const sim_fcc *fc, int32_t id);
SIM_PRIVATE size_t sim_type_bytes(const xrt_ir_type *t);
SIM_PRIVATE size_t sim_tuple_off(const xrt_ir_type *t, int32_t k);
SIM_PRIVATE size_t sim_vbytes(const sim_fcc *fc, int32_t id);
SIM_PRIVATE const xrt_ir_attr *sim_named(const xrt_ir_attr *it, int32_t n,
                                    const char *name);
SIM_PRIVATE const xrt_ir_attr *sim_field(const xrt_ir_attr *dn, const char *name);
SIM_PRIVATE const xrt_ir_attr *sim_attr(const xrt_ir_op *op, const char *name,
                                   int kind);
SIM_PRIVATE xrt_status sim_ints(sim_fcc *fc, const xrt_ir_op *op, const char *name,
                           int required, const int64_t **v, int64_t *n);
SIM_PRIVATE xrt_status sim_int_attr(sim_fcc *fc, const xrt_ir_op *op,
                               const char *name, int64_t *out);
SIM_PRIVATE xrt_status sim_unsupported_type(sim_fcc *fc, const xrt_ir_op *op,
                                       xrt_dtype t);
SIM_PRIVATE xrt_status sim_new_value(sim_fcc *fc, int32_t *id);
SIM_PRIVATE int32_t sim_root(const sim_fcc *fc, int32_t id);
/* Whether id is a result of the entry function (lower.c): its memory is
 * the caller's output buffer, which nothing should alias. */
SIM_PRIVATE int sim_entry_result(const sim_fcc *fc, int32_t id);
SIM_PRIVATE xrt_status sim_keep(sim_fcc *fc, int32_t id);
SIM_PRIVATE xrt_status sim_def(sim_fcc *fc, int32_t id, size_t bytes);
SIM_PRIVATE xrt_status sim_temp(sim_fcc *fc, size_t bytes, int32_t *id);
SIM_PRIVATE xrt_status sim_use(sim_fcc *fc, int32_t id);
SIM_PRIVATE void sim_set_const(sim_fcc *fc, int32_t id, void *p);
SIM_PRIVATE void sim_extend(sim_fcc *fc, int32_t from, int32_t end);
SIM_PRIVATE xrt_status sim_assign_slots(sim_fcc *fc, size_t *arena_size);

/* ---- lower.c ---- */
SIM_PRIVATE xrt_status sim_lower_block(sim_fcc *fc, const xrt_ir_region *r,
                                  sim_plan *plan, const xrt_ir_op **term);

/* ---- exec.c ---- */
SIM_PRIVATE xrt_status sim_plan_func(sim_cc *cc, int32_t fidx, int is_entry);

/* ---- lower.c ---- */
SIM_PRIVATE xrt_status sim_lower_region(sim_fcc *fc, const xrt_ir_region *r,
                                   sim_plan *plan, const int32_t **rets,
                                   int32_t nrets, const xrt_ir_op *owner);
SIM_PRIVATE xrt_status sim_lower_iota(sim_fcc *fc, const xrt_ir_op *op,
                                 sim_step *st);
SIM_PRIVATE xrt_status sim_lower_broadcast_in_dim(sim_fcc *fc, const xrt_ir_op *op,
                                             sim_step *st);
SIM_PRIVATE xrt_status sim_lower_reshape(sim_fcc *fc, const xrt_ir_op *op,
                                    sim_step *st);
SIM_PRIVATE void sim_pad_range(int64_t in, int64_t out, int64_t lo, int64_t step,
                          int64_t *j0, int64_t *cnt);

/* ---- fusion_kernels.c ---- */
/* The running CPU's version of a plain f32/f64 elementwise kernel (or of
 * vmath.c's), else fn itself. */
SIM_PRIVATE sim_ew_fn sim_fz_isa_kernel(sim_ew_fn fn);
/* Adds rows r, r + stride, r + 2 stride, r + 3 stride (bytes) into acc. */
typedef void (*sim_fz_add4_fn)(void *acc, const void *rows, size_t stride,
                               int64_t n);
/* That for an f32/f64 add reduce, else NULL. */
SIM_PRIVATE sim_fz_add4_fn sim_fz_add4_kernel(xrt_opcode code, xrt_dtype t);
/* out[i] = p[i] ? a[i] : b[i] for elements of es bytes (1-16), else NULL. */
typedef void (*sim_fz_sel_fn)(const uint8_t *p, const void *a, const void *b,
                              void *out, int64_t n);
SIM_PRIVATE sim_fz_sel_fn sim_fz_sel_for(size_t es);

/* ---- lower.c ---- */
SIM_PRIVATE xrt_status sim_lower_ew(sim_fcc *fc, const xrt_ir_op *op,
                               sim_step *st);
SIM_PRIVATE const xrt_ir_op *sim_region_binop(const xrt_ir_region *r);
SIM_PRIVATE sim_red_fn sim_reduce_fast_body(const sim_fcc *fc, const xrt_ir_op *op);
SIM_PRIVATE int32_t sim_coalesce_dims(const xrt_shape *sh, const int64_t *str,
                                 int64_t *dims, int64_t *ostr);
SIM_PRIVATE void sim_reduce_dims(sim_reduce *r, const xrt_shape *in,
                            const int64_t *rd, int64_t nrd);
SIM_PRIVATE void sim_enum_offsets(int64_t nd, const int64_t *sizes,
                             const int64_t *st1, const int64_t *st2,
                             int64_t *o1, int64_t *o2);
SIM_PRIVATE int64_t sim_free_dims(const xrt_shape *x, const int64_t *a, int64_t na,
                             const int64_t *b, int64_t nb, int64_t *out);
SIM_PRIVATE int64_t *sim_dot_table(sim_fcc *fc, const xrt_shape *x,
                              const int64_t *dims, int64_t nd,
                              const xrt_shape *y, const int64_t *ydims,
                              int64_t **ytab, int64_t *count);

/* ---- gemm.c ---- */
SIM_PRIVATE int sim_gemm_lower_dot(sim_fcc *fc, const sim_dot *d, sim_step *st,
                              xrt_status *rc);
/* Chunked convolutions' products, one per thread (gemm.c). */
SIM_PRIVATE int64_t sim_gemm_kc_for(sim_fcc *fc, xrt_dtype t, int64_t N,
                                    int64_t K);
SIM_PRIVATE int sim_gemm_slots(const sim_step *st);
/* An epilogue of a product: rows [m0, m1) of its result are final. */
typedef void (*sim_gemm_epi_fn)(void *ctx, int lane, int64_t m0, int64_t m1);
SIM_PRIVATE int sim_gemm_by_rows(const sim_step *st, int64_t *M, int64_t *N,
                                 int *lanes);
SIM_PRIVATE int sim_gemm_run_epi(const sim_step *st, void **vals, sim_cx *cx,
                                 sim_gemm_epi_fn epi, void *ctx);

/* ---- a product's epilogue in registers ----
 * A line of f32 operations on each element v of C (row r, column c), in
 * order: v = v op b_j, or b_j op v (+ SIM_FZC_REV), then maybe bounds:
 * v = max(lo, v) (lo > v takes lo, so a NaN v stays), plus 0 when lo is
 * +0 (so that -0 becomes +0, as move.c's clamp makes it: lo >= v takes
 * lo), then v = min(hi, v) (hi is not -0).  A fused group that
 * is such a line (fusion.c's chains) hands it to the product, whose
 * micro-kernels apply it to the final sums before they store them: C is
 * written once, and each element sees the same IEEE operations in the
 * same order as the group's own loops. */
enum { SIM_FZC_ADD, SIM_FZC_SUB, SIM_FZC_MUL, SIM_FZC_DIV, SIM_FZC_REV = 4 };
#define SIM_GPOST_OPS 8
typedef enum sim_gpost_arg {
  SIM_GPOST_COL,  /* b_j[c]: a vector along C's columns */
  SIM_GPOST_ONE,  /* b_j[0]: one number */
  SIM_GPOST_FULL, /* b_j[r * N + c]: a value of C's shape */
  SIM_GPOST_ROW   /* b_j[r]: a vector along C's rows (NCHW features) */
} sim_gpost_arg;
typedef struct sim_gpost {
  int n;
  uint8_t op[SIM_GPOST_OPS];
  uint8_t arg[SIM_GPOST_OPS]; /* sim_gpost_arg */
  const float *b[SIM_GPOST_OPS];
  int has_lo, has_hi, lo_pz; /* bounds; lo is +0 */
  float lo, hi;
} sim_gpost;
/* Whether st (sim_gemm_by_rows) can take such an epilogue on this CPU. */
SIM_PRIVATE int sim_gemm_post_ok(const sim_step *st);
SIM_PRIVATE int sim_gemm_out_rows(sim_fcc *fc, sim_step *st, int64_t stride,
                                  xrt_status *rc);
SIM_PRIVATE void sim_gemm_keep_a(sim_step *st);
SIM_PRIVATE const char *sim_gemm_apre(const sim_step *st, const char *A,
                                      sim_cx *cx, void **entry);
SIM_PRIVATE void sim_gemm_apre_put(sim_cx *cx, void *entry);
SIM_PRIVATE void sim_gemm_run_slot(const sim_step *st, void **vals,
                                   const char *A, const char *B, char *C,
                                   const char *apre, const char *bpre,
                                   int slot, const sim_gpost *po);
/* Whether st can take an epilogue of row vectors and numbers with its
 * result rows further apart than its columns (sim_gemm_run_slot's po). */
SIM_PRIVATE int sim_gemm_post_rows_ok(const sim_step *st);
/* How st's B operand is packed, for a caller that builds it packed itself
 * (sim_gemm_bgeom returns 0 when st cannot take it so). */
typedef struct sim_gbgeom {
  int64_t K, kc, np, nr; /* rows, K block, columns padded, micro-panel */
  int64_t bt;            /* batches */
} sim_gbgeom;
SIM_PRIVATE int sim_gemm_bgeom(const sim_step *st, sim_gbgeom *geo);
/* Packs all of st's B operand (every batch) into dst, the layout
 * sim_gemm_run_packed takes: bt * K * np elements (sim_gemm_bgeom). */
SIM_PRIVATE void sim_gemm_pack_b(const sim_step *st, const void *B,
                                 void *dst, sim_cx *cx);
/* The same for the A operand: its bytes packed (0: st packs no A), the
 * packing into dst, and a run of st that reads A packed at apre. */
SIM_PRIVATE size_t sim_gemm_apack_bytes(const sim_step *st);
SIM_PRIVATE void sim_gemm_pack_a(const sim_step *st, const void *A,
                                 void *dst, sim_cx *cx);
SIM_PRIVATE void sim_gemm_run_apre(const sim_step *st, void **vals,
                                   sim_cx *cx, const char *apre);
SIM_PRIVATE void sim_gemm_run_packed(const sim_step *st, void **vals,
                                     sim_cx *cx, const char *bpre);
/* Runs st (sim_gemm_by_rows) with B packed at bpre (or NULL: as st packs
 * it), and epi as sim_gemm_run_epi, or the epilogue po (then 1 when
 * run, 0 when nothing ran: st cannot take po, sim_gemm_post_ok). */
SIM_PRIVATE int sim_gemm_run_packed_with(const sim_step *st, void **vals,
                                         sim_cx *cx, const char *bpre,
                                         sim_gemm_epi_fn epi, void *ctx,
                                         const sim_gpost *po);

/* ---- dot_concat.c ---- */
/* A concatenate only dot_generals read (directly or through reshapes):
 * 1 when it is left unmaterialized (vcat of its value set), else 0. */
SIM_PRIVATE int sim_dc_lower_concat(sim_fcc *fc, const xrt_ir_op *op);
/* A reshape of such a value: unmaterialized too. */
SIM_PRIVATE void sim_dc_lower_reshape(sim_fcc *fc, const xrt_ir_op *op);
/* A dot_general reading one: a product per part. */
SIM_PRIVATE xrt_status sim_dc_lower_dot(sim_fcc *fc, const xrt_ir_op *op,
                                        sim_step *st, const int64_t *lb,
                                        const int64_t *rb, const int64_t *lc,
                                        const int64_t *rc, int64_t nb,
                                        int64_t nc);

/* ---- lower.c ---- */
SIM_PRIVATE const int64_t *sim_dot_field(const xrt_ir_attr *dn, const char *name,
                                    int64_t *n);
SIM_PRIVATE xrt_status sim_lower_call_to(sim_fcc *fc, const xrt_ir_op *op,
                                    sim_step *st, int32_t fidx);
SIM_PRIVATE xrt_status sim_lower_host_call(sim_fcc *fc, const xrt_ir_op *op,
                                      sim_step *st, const char *target,
                                      const int32_t *in, int32_t nin,
                                      const int32_t *out, int32_t nout);

/* ---- index.c ---- */
SIM_PRIVATE int sim_ix_is_int(xrt_dtype t);
SIM_PRIVATE xrt_status sim_lower_gather(sim_fcc *fc, const xrt_ir_op *op,
                                   sim_step *st);
SIM_PRIVATE xrt_status sim_lower_dynamic_gather(sim_fcc *fc, const xrt_ir_op *op,
                                           sim_step *st);
SIM_PRIVATE xrt_status sim_lower_scatter(sim_fcc *fc, const xrt_ir_op *op,
                                    sim_step *st);
SIM_PRIVATE xrt_status sim_lower_dynamic_slice(sim_fcc *fc, const xrt_ir_op *op,
                                          sim_step *st);
SIM_PRIVATE bool sim_dus_update_in_place(sim_step *st, int32_t operand);
SIM_PRIVATE xrt_status sim_lower_dynamic_update_slice(sim_fcc *fc,
                                                 const xrt_ir_op *op,
                                                 sim_step *st);
SIM_PRIVATE xrt_status sim_lower_reduce_window(sim_fcc *fc, const xrt_ir_op *op,
                                          sim_step *st);
SIM_PRIVATE xrt_status sim_lower_select_and_scatter(sim_fcc *fc,
                                               const xrt_ir_op *op,
                                               sim_step *st);
SIM_PRIVATE xrt_status sim_lower_dynamic_broadcast_in_dim(sim_fcc *fc,
                                                     const xrt_ir_op *op,
                                                     sim_step *st);
SIM_PRIVATE xrt_status sim_lower_dynamic_iota(sim_fcc *fc, const xrt_ir_op *op,
                                         sim_step *st);
SIM_PRIVATE xrt_status sim_lower_dynamic_reshape(sim_fcc *fc, const xrt_ir_op *op,
                                            sim_step *st);
SIM_PRIVATE xrt_status sim_lower_dynamic_pad(sim_fcc *fc, const xrt_ir_op *op,
                                        sim_step *st);

/* ---- control.c ---- */
SIM_PRIVATE xrt_status sim_lower_if(sim_fcc *fc, const xrt_ir_op *op,
                               sim_step *st);
SIM_PRIVATE xrt_status sim_lower_case(sim_fcc *fc, const xrt_ir_op *op,
                                 sim_step *st);
SIM_PRIVATE xrt_status sim_lower_map(sim_fcc *fc, const xrt_ir_op *op,
                                sim_step *st);
SIM_PRIVATE xrt_status sim_lower_sort(sim_fcc *fc, const xrt_ir_op *op,
                                 sim_step *st);
SIM_PRIVATE xrt_status sim_lower_composite(sim_fcc *fc, const xrt_ir_op *op,
                                      sim_step *st);
SIM_PRIVATE xrt_status sim_lower_tuple(sim_fcc *fc, const xrt_ir_op *op,
                                  sim_step *st);
SIM_PRIVATE xrt_status sim_lower_get_tuple_element(sim_fcc *fc, const xrt_ir_op *op,
                                              sim_step *st);
SIM_PRIVATE xrt_status sim_lower_after_all(sim_fcc *fc, const xrt_ir_op *op,
                                      sim_step *st);
SIM_PRIVATE xrt_status sim_lower_infeed(sim_fcc *fc, const xrt_ir_op *op,
                                   sim_step *st);
SIM_PRIVATE xrt_status sim_lower_outfeed(sim_fcc *fc, const xrt_ir_op *op,
                                    sim_step *st);
SIM_PRIVATE xrt_status sim_lower_send(sim_fcc *fc, const xrt_ir_op *op,
                                 sim_step *st);
SIM_PRIVATE xrt_status sim_lower_recv(sim_fcc *fc, const xrt_ir_op *op,
                                 sim_step *st);
SIM_PRIVATE xrt_status sim_lower_chlo_scan(sim_fcc *fc, const xrt_ir_op *op,
                                      sim_step *st);

/* ---- linalg.c ---- */

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
SIM_PRIVATE int sim_la_kernels(xrt_dtype ct, sim_la_dotn_fn *dotn,
                          sim_la_store_fn *store);

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
SIM_PRIVATE xrt_status sim_la_cvt_init(sim_fcc *fc, const xrt_ir_op *op,
                                  sim_la_cvt *c, int32_t lid, int32_t rid);
SIM_PRIVATE void sim_la_cvt_pre(const sim_la_cvt *c, void **vals, const void **l,
                           const void **r, void **res, void *out);
SIM_PRIVATE void sim_la_cvt_post(const sim_la_cvt *c, void **vals, void *out);
SIM_PRIVATE const char *sim_la_enum(const xrt_ir_op *op, const char *name);

/* The helpers below are inline so that the kernels of conv.c, fft.c,
 * solve.c, rng.c and ragged_dot.c compile as they did in one file. */

/* An integer element of any integer type as int64 (u64 wraps). */
static inline int64_t sim_la_geti(xrt_dtype t, const void *base, int64_t i) {
  sim_num v;
  sim_load(t, (const char *)base + (size_t)i * sim_esize(t), &v);
  return v.is_int ? v.i : sim_float_to_i64(v.re);
}

/* Row-major multi-index increment; 0 once every index wrapped. */
static inline int sim_la_next(int64_t *idx, const int64_t *dims, int n) {
  for (int k = n - 1; k >= 0; k--) {
    if (++idx[k] < dims[k]) return 1;
    idx[k] = 0;
  }
  return 0;
}

static inline sim_c128 sim_cmul(sim_c128 a, sim_c128 b) {
  sim_c128 r = {a.re * b.re - a.im * b.im, a.re * b.im + a.im * b.re};
  return r;
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

/* Whether c is a 2D convolution of f32 throughout, one group, static
 * padding (conv.c). */
SIM_PRIVATE int sim_conv_2d_f32(const sim_conv *c);

/* ---- gemm.c ---- */
SIM_PRIVATE int sim_gemm_lower_conv(sim_fcc *fc, const sim_conv *c, sim_step *st,
                               xrt_status *rc);
/* The GEMM micro-kernels' instruction set: -1 off, 0 portable, 1 AVX2,
 * 2 AVX-512 (XRT_SIM_GEMM, XRT_SIM_ISA and the CPU decide). */
SIM_PRIVATE int sim_gemm_isa(sim_cc *cc);

/* ---- conv_dw.c ---- */
SIM_PRIVATE int sim_conv_dw_lower(sim_fcc *fc, const sim_conv *c, sim_step *st,
                                  xrt_status *rc);
/* A depthwise step that computes whole result positions (features
 * innermost and contiguous): *O results per position, *np positions;
 * sim_dw_positions computes positions [q0, q1) into o (row-major), with an
 * epilogue or not. */
SIM_PRIVATE int sim_dw_by_position(const sim_step *st, int64_t *O,
                                   int64_t *np);
SIM_PRIVATE void sim_dw_positions(const sim_step *st, void **vals, int64_t q0,
                                  int64_t q1, void *o, const sim_gpost *post);
/* Whether sim_dw_positions of st takes an epilogue (sim_gpost) of column
 * vectors (results of a position) and numbers. */
SIM_PRIVATE int sim_dw_post_ok(const sim_step *st);

/* ---- conv_direct.c ---- */
/* f32 NCHW convolutions of few lhs features (stems) summed from the image
 * split by phase, AVX-512: 1 (and *rc) if it planned st, else 0.
 * sim_cdir_cols: whether st is one (*N: its result positions per
 * feature); sim_cdir_run_post runs it with the epilogue po (or none). */
SIM_PRIVATE int sim_conv_direct_lower(sim_fcc *fc, const sim_conv *c,
                                      sim_step *st, xrt_status *rc);
SIM_PRIVATE int sim_cdir_cols(const sim_step *st, int64_t *N);
SIM_PRIVATE int sim_cdir_run_post(const sim_step *st, void **vals,
                                  sim_cx *cx, const sim_gpost *po);

/* ---- conv_wino.c ---- */
/* f32 3x3 convolutions of stride 1, padding 1 and many features, NHWC,
 * by Winograd's F(2x2, 3x3): 1 (and *rc) if it planned st, else 0. */
SIM_PRIVATE int sim_conv_wino_lower(sim_fcc *fc, const sim_conv *c,
                                    sim_step *st, xrt_status *rc);
/* Whether st is such a step, and *N, its result's columns in the sense of
 * an epilogue (sim_gpost: rows of N, NHWC features, NCHW positions). */
SIM_PRIVATE int sim_wino_cols(const sim_step *st, int64_t *N);
/* Runs st with the epilogue po (or NULL) applied to its results: 1; 0
 * when it ran the direct way instead (non-finite data), without po. */
SIM_PRIVATE int sim_wino_run_post(const sim_step *st, void **vals,
                                  sim_cx *cx, const sim_gpost *po);

/* ---- conv_gemm.c ---- */
/* f32/f64 convolutions as plain products (NCHW results: kernel x im2col;
 * NHWC 1x1 ones and ones of few positions: lhs or im2col x kernel):
 * 1 (and *rc) if it planned st, 0 to leave c to the other paths. */
SIM_PRIVATE int sim_conv_gemm_lower(sim_fcc *fc, const sim_conv *c,
                                    sim_step *st, xrt_status *rc);
/* The product of st when st is such a convolution that is one panel and
 * one product of it (sim_gemm_by_rows of that gives its rows), else
 * NULL; sim_cg_run_with runs st with an epilogue on the product's rows,
 * as sim_gemm_run_packed_with. */
SIM_PRIVATE const sim_step *sim_cg_product(const sim_step *st);
SIM_PRIVATE int sim_cg_run_with(const sim_step *st, void **vals, sim_cx *cx,
                                sim_gemm_epi_fn epi, void *ctx,
                                const sim_gpost *po);
/* Whether st is such a convolution made in chunks, each one thread's
 * panel and product (an NCHW stem), whose products can take an epilogue
 * of row vectors and numbers; *N: its result's row length (positions). */
SIM_PRIVATE int sim_cg_chunked(const sim_step *st, int64_t *N);
/* Runs st (sim_cg_chunked) with po (NULL: none) on every chunk. */
SIM_PRIVATE void sim_cg_run_chunks(const sim_step *st, void **vals,
                                   sim_cx *cx, const sim_gpost *po);

/* ---- conv.c ---- */
SIM_PRIVATE xrt_status sim_lower_convolution(sim_fcc *fc, const xrt_ir_op *op,
                                        sim_step *st);
SIM_PRIVATE xrt_status sim_lower_dynamic_conv(sim_fcc *fc, const xrt_ir_op *op,
                                         sim_step *st);

/* ---- fft.c ---- */
SIM_PRIVATE xrt_status sim_lower_fft(sim_fcc *fc, const xrt_ir_op *op,
                                sim_step *st);

/* ---- solve.c ---- */
SIM_PRIVATE int sim_la_linalg_type(xrt_dtype t);
SIM_PRIVATE xrt_status sim_lower_triangular_solve(sim_fcc *fc, const xrt_ir_op *op,
                                             sim_step *st);
SIM_PRIVATE xrt_status sim_lower_cholesky(sim_fcc *fc, const xrt_ir_op *op,
                                     sim_step *st);

/* ---- batchnorm.c ---- */
SIM_PRIVATE xrt_status sim_lower_batch_norm_inference(sim_fcc *fc,
                                                 const xrt_ir_op *op,
                                                 sim_step *st);
SIM_PRIVATE xrt_status sim_lower_batch_norm_training(sim_fcc *fc,
                                                const xrt_ir_op *op,
                                                sim_step *st);
SIM_PRIVATE xrt_status sim_lower_batch_norm_grad(sim_fcc *fc, const xrt_ir_op *op,
                                            sim_step *st);

/* ---- rng.c ---- */
SIM_PRIVATE xrt_status sim_lower_rng_bit_generator(sim_fcc *fc,
                                              const xrt_ir_op *op,
                                              sim_step *st);
SIM_PRIVATE xrt_status sim_lower_rng(sim_fcc *fc, const xrt_ir_op *op,
                                sim_step *st);

/* ---- ragged_dot.c ---- */
SIM_PRIVATE xrt_status sim_lower_chlo_ragged_dot(sim_fcc *fc, const xrt_ir_op *op,
                                            sim_step *st);

/* ---- pool.c ---- */

/* ======================================================================
 * The device thread pools
 *
 * Each device owns a pool of threads_per_device - 1 workers; the thread
 * that executes on the device is the last participant.  Workers start on
 * the pool's first parallel loop (a client with many devices and small
 * programs starts none) and are joined when the client is destroyed.
 *
 * sim_parallel_for cuts [0, n) into chunks of at least grain items and
 * gives each participant a home run of them, in order (the caller the
 * first, worker w run w + 1): consecutive loops over the same rows then
 * find them in the cache of the core that wrote them, where a shared
 * counter sent each chunk to whichever thread came first and the data
 * across the cores.  A participant that is done claims what is left of
 * the others' runs, so one that the OS delays (a loaded machine) just
 * takes fewer chunks.  A pool runs one
 * loop at a time: a loop started while it is busy (a nested call from a
 * chunk, or a concurrent execute on the same device) runs serially on its
 * caller.  No allocation per loop.  Between loops, workers poll for the
 * next one a few tens of microseconds before they sleep, and the caller
 * polls for the workers' end before it does, when every thread of every
 * pool has a core of its own (a wake-up costs about as long).
 * ==================================================================== */

#include <stdatomic.h>

struct sim_tpool {
  pthread_mutex_t mu;
  pthread_cond_t wake, done;
  atomic_int busy;     /* a loop owns the pool */
  int threads;         /* participants wanted, including the caller */
  int nworkers;        /* started */
  int started, stop;
  pthread_t *tid;      /* threads - 1 slots */
  int spin;            /* idle workers and the waiting caller poll first */
  /* The current loop (written under mu before gen is bumped and wake is
   * broadcast; workers that poll read gen with acquire). */
  atomic_ullong gen;   /* loops run */
  uint64_t gen0;       /* gen when the workers started */
  sim_range_fn fn;
  void *ctx;
  int64_t n, chunk, nchunks;
  struct sim_tcursor *cur; /* per participant: next chunk of its home run */
  /* The current loop's entry (pool.c, SIM_TP_*): its generation, whether
   * workers may still join it, and how many joined and have not left */
  atomic_ullong state;
  atomic_int nextid;   /* the participant number of the next worker */
  atomic_int caller_cpu; /* the core the current loop's caller is on, or -1 */
};
/* A cache line each: the participants claim from their own. */
struct sim_tcursor {
  atomic_llong next;
  char pad[64 - sizeof(atomic_llong)];
};
static inline struct sim_tpool *sim_tpool_of(const sim_client *c, int device) {
  return c->tp && device >= 0 && device < c->ntp ? &c->tp[device] : NULL;
}

/* ---- move.c ---- */

/* ======================================================================
 * Parallel and blocked data movement
 * ==================================================================== */

/* Copies below this many bytes stay on the calling thread; a chunk of a
 * parallel copy moves at least SIM_PAR_GRAIN bytes. */
#define SIM_PAR_MIN ((size_t)1 << 20)
#define SIM_PAR_GRAIN ((size_t)128 << 10)
SIM_PRIVATE int sim_isa_cap(void);
/* The plain elementwise kernel of op e (SIM_EW_*) on type t (elementwise.c)
 * and, for plain kernel fn, vmath.c's vectorized one for ISA level 0-2, or
 * NULL. */
SIM_PRIVATE sim_ew_fn sim_ew_plain(int e, xrt_dtype t);
SIM_PRIVATE sim_ew_fn sim_vm_kernel(sim_ew_fn fn, int level);
/* 0 portable, 1 AVX2, 2 AVX-512F: what the running CPU has, capped by
 * XRT_SIM_ISA (fusion_kernels.c). */
SIM_PRIVATE int sim_isa_level(void);

/* ---- collectives.c ---- */
SIM_PRIVATE void sim_copy_nt(void *dst, const void *src, size_t n);
SIM_PRIVATE void sim_copy_nt_done(void);

/* ---- fusion.c ---- */
SIM_PRIVATE void sim_fz_release(sim_fcc *fc);

/* ---- lower.c ---- */
SIM_PRIVATE xrt_status sim_lower_op(sim_fcc *fc, const xrt_ir_op *op,
                               sim_vec *steps);

/* ---- fusion.c ---- */
SIM_PRIVATE xrt_status sim_fz_lower_ops(sim_fcc *fc, const xrt_ir_region *r,
                                   sim_vec *steps);

/* ---- collectives.c ---- */
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

/* ---- collectives_mp.c ---- */
SIM_PRIVATE void sim_xp_launch_init(struct sim_launch *l, const sim_exe *e);
SIM_PRIVATE xrt_status sim_xp_compile(sim_exe *e, const xrt_plugin_compile_args *a,
                                 xrt_plugin_error *err);
SIM_PRIVATE xrt_status sim_xp_gather(sim_cx *cx, const sim_step *st,
                                const struct sim_coll *k,
                                struct sim_launch *l, uint32_t seq);
SIM_PRIVATE void sim_xp_launch_end(sim_client *c, struct sim_launch *l);
SIM_PRIVATE xrt_status sim_xp_all_reduce(const sim_step *st, void **vals,
                                    sim_cx *cx, const struct sim_coll *k,
                                    int *handled);

/* ---- collectives.c ---- */

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
SIM_PRIVATE void sim_launch_own_end(sim_client *c, struct sim_launch *l);
SIM_PRIVATE void sim_launch_reset(struct sim_launch *l, uint64_t id, int n,
                             int npart);
SIM_PRIVATE xrt_status sim_launch_join(sim_client *c,
                                  const xrt_plugin_execute_args *a, int proc,
                                  struct sim_launch **out,
                                  xrt_plugin_error *err);
SIM_PRIVATE void sim_launch_changed(struct sim_launch *l);
SIM_PRIVATE void sim_launch_leave(sim_client *c, struct sim_launch *l, int proc,
                             xrt_status rc, const char *msg);
SIM_PRIVATE int sim_proc_of(const sim_cx *cx);
SIM_PRIVATE xrt_status sim_coll_fail(sim_cx *cx, const xrt_ir_op *op,
                                xrt_status code, const char *fmt, ...)
    SIM_PRINTF(4, 5);
SIM_PRIVATE xrt_status sim_coll_peer_failed(sim_cx *cx, struct sim_launch *l,
                                       const xrt_ir_op *op);

/* ---- device.c ---- */
SIM_PRIVATE xrt_status sim_fault_coll(sim_cx *cx, const xrt_ir_op *op);

/* ---- collectives.c ---- */
SIM_PRIVATE xrt_status sim_coll_self_fail(sim_cx *cx, struct sim_launch *l,
                                     xrt_status rc);
SIM_PRIVATE xrt_status sim_launch_block(sim_cx *cx, struct sim_launch *l,
                                   uint64_t *epoch, const xrt_ir_op *op,
                                   const char *what);
SIM_PRIVATE xrt_status sim_wait_ticks(sim_cx *cx, struct sim_launch *l,
                                 const int32_t *mem, int32_t nm, uint64_t t,
                                 const xrt_ir_op *op);

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
SIM_PRIVATE uint64_t sim_fnv(uint64_t h, int64_t v);
SIM_PRIVATE xrt_status sim_pg_rows(sim_fcc *fc, const xrt_ir_op *op,
                              const char *name, const int64_t **ids,
                              int64_t *nrows, int64_t *w);
SIM_PRIVATE int64_t sim_channel_id(const xrt_ir_op *op);
SIM_PRIVATE int sim_flag(const xrt_ir_op *op, const char *name);
SIM_PRIVATE int32_t sim_pg_bound(const sim_coll *k, int mode);
SIM_PRIVATE xrt_status sim_pg_check(sim_fcc *fc, const xrt_ir_op *op,
                               const char *name, const int64_t *ids,
                               int64_t cnt, int32_t bound, int mode,
                               int cover, int pairs);
SIM_PRIVATE xrt_status sim_pg_groups(sim_fcc *fc, const xrt_ir_op *op,
                                sim_coll *k, int mode, int cover,
                                int32_t *gs);
SIM_PRIVATE sim_coll *sim_coll_new(sim_fcc *fc, const xrt_ir_op *op,
                              int32_t nops);
SIM_PRIVATE xrt_status sim_coll_check_values(sim_fcc *fc, const xrt_ir_op *op,
                                        int32_t nops);
SIM_PRIVATE xrt_status sim_coll_check_same_size(sim_fcc *fc, const xrt_ir_op *op,
                                           int32_t nops);
SIM_PRIVATE int64_t sim_dims_prod(const xrt_shape *s, int32_t from, int32_t to);
SIM_PRIVATE xrt_status sim_coll_dim(sim_fcc *fc, const xrt_ir_op *op,
                               const char *name, int64_t *d);
SIM_PRIVATE xrt_status sim_coll_combine(const sim_coll *k, int32_t j, void **vals,
                                   sim_cx *cx, char *acc, const char *in,
                                   int64_t n);

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
SIM_PRIVATE const char *sim_peer_in(const sim_cview *v, int32_t q, int32_t j);
SIM_PRIVATE char *sim_peer_out(const sim_cview *v, int32_t q, int32_t j);
SIM_PRIVATE xrt_status sim_coll_enter(const sim_step *st, void **vals,
                                 sim_cx *cx, const sim_coll *k,
                                 sim_cview *v, const int32_t *wait,
                                 int32_t nw);
SIM_PRIVATE xrt_status sim_coll_phase(sim_cx *cx, const sim_step *st,
                                 const sim_cview *v, int ph,
                                 const int32_t *wait, int32_t nw);
SIM_PRIVATE xrt_status sim_coll_own_error(sim_cx *cx, const sim_cview *v,
                                     xrt_status rc);
#define SIM_STREAM_MIN (1 << 20)
SIM_PRIVATE xrt_status sim_fold_range(const sim_coll *k, int32_t j, void **vals,
                                 sim_cx *cx, const sim_cview *v,
                                 char *const *outs, int32_t nout,
                                 const char *const *ins, int64_t lo,
                                 int64_t hi);

#define SIM_COLL_MAXG 64 /* group members whose inputs are listed on the
                            stack; larger groups fold pairwise */
SIM_PRIVATE xrt_status sim_reduce_slice(const sim_coll *k, int32_t j, void **vals,
                                   sim_cx *cx, const sim_cview *v,
                                   char *const *outs, int32_t nout,
                                   int64_t in_off, int64_t lo, int64_t hi);
SIM_PRIVATE xrt_status sim_run_all_reduce(const sim_step *st, void **vals,
                                     sim_cx *cx);
SIM_PRIVATE xrt_status sim_coll_grouped(sim_fcc *fc, const xrt_ir_op *op,
                                   int body, int32_t *gs, sim_coll **out);
SIM_PRIVATE xrt_status sim_lower_all_reduce(sim_fcc *fc, const xrt_ir_op *op,
                                       sim_step *st);

/* ---- collectives_mp.c ---- */
SIM_PRIVATE xrt_status sim_run_reduce_scatter(const sim_step *st, void **vals,
                                         sim_cx *cx);
SIM_PRIVATE xrt_status sim_lower_reduce_scatter(sim_fcc *fc, const xrt_ir_op *op,
                                           sim_step *st);
SIM_PRIVATE xrt_status sim_run_all_gather(const sim_step *st, void **vals,
                                     sim_cx *cx);
SIM_PRIVATE xrt_status sim_lower_all_gather(sim_fcc *fc, const xrt_ir_op *op,
                                       sim_step *st);
SIM_PRIVATE xrt_status sim_run_all_to_all(const sim_step *st, void **vals,
                                     sim_cx *cx);
SIM_PRIVATE xrt_status sim_lower_all_to_all(sim_fcc *fc, const xrt_ir_op *op,
                                       sim_step *st);
SIM_PRIVATE xrt_status sim_run_collective_permute(const sim_step *st, void **vals,
                                             sim_cx *cx);
SIM_PRIVATE xrt_status sim_lower_collective_permute(sim_fcc *fc,
                                               const xrt_ir_op *op,
                                               sim_step *st);
SIM_PRIVATE xrt_status sim_run_collective_broadcast(const sim_step *st,
                                               void **vals, sim_cx *cx);
SIM_PRIVATE xrt_status sim_lower_collective_broadcast(sim_fcc *fc,
                                                 const xrt_ir_op *op,
                                                 sim_step *st);
SIM_PRIVATE xrt_status sim_lower_process_id(sim_fcc *fc, const xrt_ir_op *op,
                                       sim_step *st);

/* ---- launch.c ---- */
SIM_PRIVATE xrt_status sim_lower_send_any(sim_fcc *fc, const xrt_ir_op *op,
                                     sim_step *st);
SIM_PRIVATE xrt_status sim_lower_recv_any(sim_fcc *fc, const xrt_ir_op *op,
                                     sim_step *st);
SIM_PRIVATE xrt_status sim_inject_fault(void *client, int device,
                                   int64_t after_steps,
                                   xrt_plugin_error *err);
SIM_PRIVATE int64_t sim_fault_take(sim_client *c, int device);

/* ---- exec.c ---- */
SIM_PRIVATE xrt_status sim_frame_make(const sim_exe *e, sim_frame *fr,
                                 xrt_plugin_error *err);
SIM_PRIVATE void sim_frame_free(const sim_exe *e, sim_frame *fr);

/* ---- launch.c ---- */
SIM_PRIVATE xrt_status sim_frame_acquire(sim_exe *e, int device, sim_frame *tmp,
                                    sim_frame **out, xrt_plugin_error *err);
SIM_PRIVATE void sim_frame_release(sim_exe *e, int device, sim_frame *fr,
                              sim_frame *tmp);
SIM_PRIVATE xrt_status sim_compile_launch_shape(sim_exe *e,
                                           const xrt_plugin_compile_args *a,
                                           xrt_plugin_error *err);
SIM_PRIVATE xrt_status sim_launch_own(struct sim_launch *l, sim_part *part,
                                 const xrt_plugin_execute_args *a,
                                 xrt_plugin_error *err);
SIM_PRIVATE xrt_status sim_run_collective_reduce(const sim_step *st, void **vals,
                                            sim_cx *cx);
SIM_PRIVATE xrt_status sim_lower_collective_reduce(sim_fcc *fc, const xrt_ir_op *op,
                                              sim_step *st);

/* ---- lower.c: the op table ---- */

/* How an op takes part in fusion ("Fusion", fusion.c). */
enum sim_fuse_kind {
  SIM_FUSE_NONE,    /* lowered alone */
  SIM_FUSE_EW,      /* an elementwise kernel */
  SIM_FUSE_SELECT,
  SIM_FUSE_CLAMP,
  SIM_FUSE_RESHAPE, /* its operand's bytes, renamed */
  SIM_FUSE_VIEW,    /* broadcast_in_dim, broadcast, transpose: a gather */
  SIM_FUSE_REDUCE,  /* only as the root of a group */
  SIM_FUSE_BN       /* batch_norm_inference on f32: three operations */
};

/* The element-type check op_support makes (plugin.c): the one the op's
 * lowerer makes, so that a YES is a compile that succeeds. */
enum sim_type_rule {
  SIM_TR_ANY,          /* none beyond the values' (sim_values_why) */
  SIM_TR_NUM_RESULT,   /* iota */
  SIM_TR_CLAMP,
  SIM_TR_DOT,          /* dot_general, dot */
  SIM_TR_CONV,         /* convolution, dynamic_conv */
  SIM_TR_RAGGED_DOT,   /* as SIM_TR_CONV, with 1-D group sizes */
  SIM_TR_GATHER_INDEX, /* gather, dynamic_gather: integer indices */
  SIM_TR_SCATTER_INDEX,
  SIM_TR_LINALG,       /* cholesky, triangular_solve */
  SIM_TR_FLOAT_INPUT,  /* the batch norms */
  SIM_TR_RNG_BITS,     /* rng_bit_generator */
  SIM_TR_RNG,
  SIM_TR_COUNT
};

/* Which quantized values a compute op dequantizes before it runs (see
 * "Quantized operands and results of compute ops", lower.c). */
enum sim_quant_rule {
  SIM_QR_NONE,   /* moves storage values, or quantizes in its kernels */
  SIM_QR_ALL,    /* dequantize_op_quantize: every quantized value */
  SIM_QR_SELECT, /* branches and result unless they share parameters */
  SIM_QR_WIDEN   /* reduce, reduce_window: inputs of a wider result type */
};

enum {
  SIM_OPF_TUPLES = 1, /* may take or make tuple and token values */
  SIM_OPF_HOST = 2,   /* calls a host function or channel: op->callee
                       * indexes the custom call bindings, no tuples */
  SIM_OPF_CALL = 4    /* op->callee indexes the module's functions */
};

/* What the simulator knows of an opcode: one entry each in sim_ops
 * (lower.c); a zero entry is an op the simulator refuses. */
typedef struct sim_op_desc {
  sim_lower_fn lower;         /* lowers it into a step; NULL: refused */
  sim_run_fn coll;            /* a collective's kernel (traced, plugin.c) */
  unsigned flags;             /* SIM_OPF_* */
  int ew_arity;               /* operands of an op sim_ew_kernel runs (0:
                               * another op) */
  unsigned vk;                /* element classes a loaded executable may
                               * give an elementwise op (SIM_VK_*) */
  enum sim_type_rule types;   /* op_support's element-type check */
  enum sim_fuse_kind fuse;
  enum sim_quant_rule quant;
} sim_op_desc;
SIM_PRIVATE const sim_op_desc *sim_op(xrt_opcode code);
SIM_PRIVATE xrt_status sim_values_why(const xrt_ir_func *f, const xrt_ir_op *op,
                                 char *why, size_t cap);
SIM_PRIVATE int sim_quant_computes(const sim_fcc *fc, const xrt_ir_op *op);

/* ---- plugin.c ---- */
SIM_PRIVATE void sim_trace_wrap(const sim_fcc *fc, sim_step *st);

/* ---- exec.c ---- */
SIM_PRIVATE void sim_executable_destroy(void *executable);

/* Compile arguments must have every field up to ABI 1.2's signature;
 * bytes_verified, appended later, is read through XRT_STRUCT_HAS. */
#define SIM_COMPILE_ARGS_MIN offsetof(xrt_plugin_compile_args, bytes_verified)
SIM_PRIVATE xrt_status sim_compile_given(void *client,
                                    const xrt_plugin_compile_args *args,
                                    const int32_t *fzin, int32_t nfzin,
                                    void **out_executable,
                                    xrt_plugin_error *err);
SIM_PRIVATE xrt_status sim_compile(void *client, const xrt_plugin_compile_args *args,
                              void **out_executable, xrt_plugin_error *err);
SIM_PRIVATE xrt_status sim_execute(void *client, const xrt_plugin_execute_args *a,
                              xrt_plugin_error *err);

/* ---- device.c ---- */
SIM_PRIVATE xrt_status sim_inject_fault_kind(void *client, int device, int kind,
                                        int64_t after,
                                        xrt_plugin_error *err);
SIM_PRIVATE xrt_status sim_buffer_copy_region(void *client,
                                         const xrt_plugin_copy_region_args *a,
                                         xrt_plugin_error *err);
SIM_PRIVATE void *sim_buffer_host_pointer(void *client, int device, void *mem);
SIM_PRIVATE xrt_status sim_buffer_wrap_host(void *client, int device, void *host,
                                       size_t bytes, void **out_mem,
                                       xrt_plugin_error *err);

/* ---- serialize.c ---- */

#define XXH_INLINE_ALL
#include <xxhash.h>
SIM_PRIVATE xrt_status sim_executable_serialize(void *executable, void **out_data,
                                           size_t *out_size,
                                           xrt_plugin_error *err);
SIM_PRIVATE void sim_serialized_free(void *data);
SIM_PRIVATE xrt_status sim_executable_deserialize(void *client,
                                             const xrt_plugin_compile_args *args,
                                             const void *data, size_t size,
                                             void **out_executable,
                                             xrt_plugin_error *err);
