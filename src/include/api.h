/*
 * xrt.h - the one public header of xrt, an embeddable runtime for StableHLO
 * programs.  MIT licensed; see LICENSE.
 *
 * xrt.h is generated from src/include/ (api.h, parallel.h, plugin.h) by
 * tools/amalgamate.sh: edit those files; the build regenerates xrt.h.
 *
 * Conventions (borrowed from IREE, SQLite and PJRT):
 *  - Every call that can fail returns an xrt_status.  XRT_OK is 0.  The
 *    message of the last failure on the calling thread is xrt_last_error().
 *  - The caller owns what a *_create / *_compile / *_from_* call returns and
 *    gives it back with the matching *_release.  Accessors return borrowed
 *    pointers that live as long as the object they came from.
 *  - Options structs are filled with defaults by *_options_init before use.
 *  - Handles (clients, buffers, executables) are validated on every call: a
 *    released handle or one from another client gives XRT_INVALID_ARGUMENT,
 *    never a crash.
 *  - Thread safety is stated on each declaration.  "Thread-safe" means any
 *    number of threads may call it at once on the same objects.
 *  - Errors a declaration does not list: a NULL, released or foreign
 *    handle, a NULL out pointer or a malformed argument give
 *    XRT_INVALID_ARGUMENT; exhausted host or device memory gives
 *    XRT_RESOURCE_EXHAUSTED.  A call that fails hands the caller nothing
 *    to release.
 */
#ifndef XRT_H
#define XRT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <math.h>

/* XRT_API marks xrt's public functions.  On Windows it exports them from
 * a DLL built with XRT_BUILD_DLL (the Makefile's xrt.dll lists them in a
 * .def file instead) and, in a program built with XRT_DLL, imports them
 * from it; with GCC and Clang it gives them default visibility, so that
 * libxrt.so, built with -fvisibility=hidden, exports exactly these
 * (tools/libxrt.map checks the same at link time). */
#if defined(_WIN32) && defined(XRT_BUILD_DLL)
#define XRT_API __declspec(dllexport)
#elif defined(_WIN32) && defined(XRT_DLL)
#define XRT_API __declspec(dllimport)
#elif defined(__GNUC__) && !defined(_WIN32)
#define XRT_API __attribute__((visibility("default")))
#else
#define XRT_API
#endif

/* XRT_PLUGIN_EXPORT exports a plugin library's xrt_plugin_get_api, also
 * from a library built with -fvisibility=hidden. */
#if defined(_WIN32)
#define XRT_PLUGIN_EXPORT __declspec(dllexport)
#elif defined(__GNUC__)
#define XRT_PLUGIN_EXPORT __attribute__((visibility("default")))
#else
#define XRT_PLUGIN_EXPORT
#endif

/* Checks printf-style arguments (GCC, Clang).  xrt formats with C99's
 * printf everywhere; on mingw-w64 "printf" would check msvcrt's dialect
 * (no %zu, %lld), hence gnu_printf there. */
#if defined(__MINGW32__)
#define XRT_PRINTF_FORMAT(fmt, first) \
  __attribute__((format(gnu_printf, fmt, first)))
#elif defined(__GNUC__)
#define XRT_PRINTF_FORMAT(fmt, first) __attribute__((format(printf, fmt, first)))
#else
#define XRT_PRINTF_FORMAT(fmt, first)
#endif

#ifdef __cplusplus
extern "C" {
#endif

/* The version of this header and of the library built with it (semantic
 * versioning; while the major is 0 a minor release may change the API).
 * libxrt.so's soname is libxrt.so.MAJOR; xrt.pc and the CMake package
 * carry the same version. */
#define XRT_VERSION_MAJOR 0 /* incompatible changes (the soname's number) */
#define XRT_VERSION_MINOR 4 /* additions */
#define XRT_VERSION_PATCH 0 /* fixes */
/* The version as a string, "MAJOR.MINOR.PATCH". */
#define XRT_VERSION_STRING "0.4.0"

/* Largest tensor rank xrt accepts. */
#define XRT_MAX_RANK 16

/* ======================================================================
 * Status codes and errors
 * ==================================================================== */

/* Codes follow the canonical (absl / gRPC) set that PJRT uses, so that a
 * plugin can pass its vendor's code straight through. */
typedef enum xrt_status {
  XRT_OK = 0,
  XRT_CANCELLED = 1,
  XRT_UNKNOWN = 2,
  XRT_INVALID_ARGUMENT = 3,  /* misuse of the API, or an invalid program */
  XRT_DEADLINE_EXCEEDED = 4,
  XRT_NOT_FOUND = 5,         /* a named function, file or target is missing */
  XRT_ALREADY_EXISTS = 6,
  XRT_PERMISSION_DENIED = 7,
  XRT_RESOURCE_EXHAUSTED = 8, /* out of host or device memory */
  XRT_FAILED_PRECONDITION = 9,
  XRT_ABORTED = 10,
  XRT_OUT_OF_RANGE = 11,
  XRT_UNIMPLEMENTED = 12,    /* an op, type or feature xrt does not have */
  XRT_INTERNAL = 13,
  XRT_UNAVAILABLE = 14,
  XRT_DATA_LOSS = 15,
  XRT_UNAUTHENTICATED = 16,
  XRT_CHECK_FAILED = 17      /* a check.* op in the program found a mismatch */
} xrt_status;

/* A static, human-readable name for a status code ("INVALID_ARGUMENT").
 * Thread-safe. Never NULL. */
XRT_API const char *xrt_strerror(xrt_status code);

/* The message of the most recent failed call on this thread ("" if none).
 * Borrowed; valid until the next xrt call on this thread.  Thread-safe. */
XRT_API const char *xrt_last_error(void);

/* The status of the most recent failed call on this thread. Thread-safe. */
XRT_API xrt_status xrt_last_status(void);

/* ======================================================================
 * Allocator
 * ==================================================================== */

/* Host memory allocator, passed by value (IREE style).  alloc returns NULL
 * on failure (the call that needed it returns XRT_RESOURCE_EXHAUSTED,
 * naming what it was allocating, and leaks nothing) or memory aligned as
 * malloc's; free accepts NULL.  Both may be called from any thread.  The
 * default uses malloc/free. */
typedef struct xrt_allocator {
  void *self;                              /* passed to alloc and free */
  void *(*alloc)(void *self, size_t size); /* NULL when out of memory */
  void (*free)(void *self, void *ptr);     /* accepts NULL */
} xrt_allocator;

/* The system allocator (malloc/free). Thread-safe. */
XRT_API xrt_allocator xrt_allocator_system(void);

/* ======================================================================
 * Logging and tracing
 *
 * Logging: the environment variable XRT_LOG=level[,component...] (read
 * once, at the first xrt call that logs) sets the level ("off", "error",
 * "warn", "info", "debug", "trace"; default "warn") for every component,
 * or only for the named ones ("debug,compile,exec").  Messages go to
 * stderr as "xrt <level> <component>: message" unless the embedding
 * program installs a callback.  Components: "core", "parse", "compile",
 * "exec", "buffer", "plugin", "var", "cache", and plugins' own names.
 *
 * Tracing: XRT_TRACE=file.json (read at the first client creation), or
 * xrt_trace_start, records a Chrome trace-event file (it opens in
 * Perfetto and chrome://tracing) with one track per device: transfers,
 * executions (named after the program's entry and module), collectives
 * (reported by the plugin), reshards, compiles and cache hits.  The file
 * is complete JSON once tracing stops (xrt_trace_stop, or process exit).
 * ==================================================================== */

/* Severity of a log message, and the threshold a component logs at (a
 * message is emitted when its level is at most the threshold). */
typedef enum xrt_log_level {
  XRT_LOG_OFF = 0,
  XRT_LOG_ERROR = 1,
  XRT_LOG_WARN = 2,
  XRT_LOG_INFO = 3,
  XRT_LOG_DEBUG = 4,
  XRT_LOG_TRACE = 5
} xrt_log_level;

/* Receives one log message (borrowed strings, valid during the call).  It
 * may be called from any thread, concurrently; it must not call xrt. */
typedef void (*xrt_log_fn)(void *user, xrt_log_level level,
                           const char *component, const char *message);

/* Sends log messages to fn (NULL: back to stderr).  Thread-safe. */
XRT_API void xrt_log_set_callback(xrt_log_fn fn, void *user);

/* Sets levels from a string in XRT_LOG's syntax ("info", "debug,exec").
 * XRT_INVALID_ARGUMENT (nothing changed) for an unknown level.
 * Thread-safe. */
XRT_API xrt_status xrt_log_configure(const char *spec);

/* Whether a message of this level from component would be emitted.
 * Thread-safe. */
XRT_API bool xrt_log_enabled(xrt_log_level level, const char *component);

/* Emits a printf-style message (for the embedding program and plugins
 * sharing xrt's log).  Thread-safe. */
XRT_API void xrt_log(xrt_log_level level, const char *component, const char *fmt, ...)
#if defined(__GNUC__)
    XRT_PRINTF_FORMAT(3, 4)
#endif
    ;

/* Starts writing a trace to path (replacing a trace in progress, which is
 * finished first).  XRT_NOT_FOUND / XRT_PERMISSION_DENIED when the file
 * cannot be created.  Thread-safe. */
XRT_API xrt_status xrt_trace_start(const char *path);

/* Finishes the trace in progress (writes the closing bracket and closes the
 * file); nothing when none is.  Thread-safe. */
XRT_API xrt_status xrt_trace_stop(void);

/* Whether a trace is being recorded. Thread-safe. */
XRT_API bool xrt_trace_enabled(void);

/* ======================================================================
 * Element types and shapes
 * ==================================================================== */

/* Element types.  Values are stable (they are part of the plugin ABI).
 * Storage: pred is one byte (0 or 1); the sub-byte integers s2/s4/u2/u4 take
 * one byte each (sign- or zero-extended); f16/bf16 are their 16-bit patterns;
 * complex types are (real, imag) pairs; the f8/f6/f4 families take one byte
 * each holding their bit pattern in the low bits. */
typedef enum xrt_dtype {
  XRT_DTYPE_INVALID = 0,
  XRT_PRED = 1,
  XRT_S8 = 2,
  XRT_S16 = 3,
  XRT_S32 = 4,
  XRT_S64 = 5,
  XRT_U8 = 6,
  XRT_U16 = 7,
  XRT_U32 = 8,
  XRT_U64 = 9,
  XRT_F16 = 10,
  XRT_BF16 = 11,
  XRT_F32 = 12,
  XRT_F64 = 13,
  XRT_C64 = 14,  /* complex<f32> */
  XRT_C128 = 15, /* complex<f64> */
  XRT_S2 = 16,
  XRT_S4 = 17,
  XRT_U2 = 18,
  XRT_U4 = 19,
  XRT_F8E4M3FN = 20,
  XRT_F8E5M2 = 21,
  XRT_F8E4M3FNUZ = 22,
  XRT_F8E5M2FNUZ = 23,
  XRT_F8E4M3B11FNUZ = 24,
  XRT_F8E3M4 = 25,
  XRT_F8E4M3 = 26,
  XRT_F8E8M0FNU = 27,
  XRT_F6E2M3FN = 28,
  XRT_F6E3M2FN = 29,
  XRT_F4E2M1FN = 30,
  XRT_DTYPE_COUNT = 31
} xrt_dtype;

/* Bytes one element occupies in a buffer; 0 for an invalid type. Thread-safe. */
XRT_API size_t xrt_dtype_size(xrt_dtype t);
/* The MLIR spelling ("f32", "i1", "ui8", "complex<f32>"); "invalid" for an
 * invalid type. Thread-safe. */
XRT_API const char *xrt_dtype_name(xrt_dtype t);
/* Parses an MLIR spelling; XRT_DTYPE_INVALID if unknown. Thread-safe. */
XRT_API xrt_dtype xrt_dtype_from_name(const char *name, size_t len);
/* Classes of element types; all thread-safe. */
XRT_API bool xrt_dtype_is_float(xrt_dtype t);   /* f16, bf16, f32, f64, f8/f6/f4 */
XRT_API bool xrt_dtype_is_complex(xrt_dtype t); /* c64, c128 */
/* s2, s4, s8 ... s64 (signed integers).  Thread-safe. */
XRT_API bool xrt_dtype_is_signed_int(xrt_dtype t);
/* u2, u4, u8 ... u64 (unsigned integers; excludes pred).  Thread-safe. */
XRT_API bool xrt_dtype_is_unsigned_int(xrt_dtype t);
/* The MLIR bit width of the type's values: 1 for pred, 4 for s4, 64 for
 * complex<f32>, 128 for complex<f64>; 0 if invalid. Thread-safe. */
XRT_API int xrt_dtype_bits(xrt_dtype t);

/* A dense array shape.  Row-major, no padding. */
typedef struct xrt_shape {
  xrt_dtype dtype;            /* element type */
  int32_t rank;               /* 0..XRT_MAX_RANK */
  int64_t dims[XRT_MAX_RANK]; /* dims[0..rank), outermost first */
} xrt_shape;

/* A dimension whose size is not known before compilation (`?` in
 * tensor<?x4xf32>): found only in the types of a parsed shape-polymorphic
 * program (xrt_program_module), never in a compiled one's. */
#define XRT_DIM_DYNAMIC (-1)

/* Number of elements (1 for rank 0). Thread-safe. */
XRT_API int64_t xrt_shape_numel(const xrt_shape *s);
/* Number of bytes of a dense array of this shape. Thread-safe. */
XRT_API size_t xrt_shape_bytes(const xrt_shape *s);
/* Writes "tensor<2x3xf32>" into buf (always NUL-terminated when cap > 0);
 * returns the length it needed. Thread-safe. */
XRT_API size_t xrt_shape_format(const xrt_shape *s, char *buf, size_t cap);

/* ---- half-precision conversions (round to nearest even) ---- */

static inline float xrt__bits_to_f32(uint32_t u) {
  union { uint32_t u; float f; } v; v.u = u; return v.f;
}
static inline uint32_t xrt__f32_to_bits(float f) {
  union { uint32_t u; float f; } v; v.f = f; return v.u;
}
static inline uint64_t xrt__f64_to_bits(double d) {
  union { uint64_t u; double d; } v; v.d = d; return v.u;
}

/* IEEE binary16 bits to float (exact). Thread-safe. */
static inline float xrt_f16_to_f32(uint16_t h) {
  uint32_t sign = (uint32_t)(h & 0x8000u) << 16;
  uint32_t exp = (h >> 10) & 0x1fu, man = h & 0x3ffu;
  if (exp == 0x1f) return xrt__bits_to_f32(sign | 0x7f800000u | (man << 13));
  if (exp == 0) {
    float f = (float)man * (1.0f / 16777216.0f); /* man * 2^-24 */
    return sign ? -f : f;
  }
  return xrt__bits_to_f32(sign | ((exp + 112u) << 23) | (man << 13));
}

/* double to IEEE binary16 bits, correctly rounded (no double rounding).
 * Thread-safe. */
static inline uint16_t xrt_f64_to_f16(double d) {
  uint64_t u = xrt__f64_to_bits(d);
  uint16_t sign = (uint16_t)((u >> 48) & 0x8000u);
  int exp = (int)((u >> 52) & 0x7ff);
  uint64_t man = u & 0xfffffffffffffull;
  if (exp == 0x7ff) /* inf or nan (keep a quiet nan) */
    return (uint16_t)(sign | 0x7c00u | (man ? 0x200u | (uint16_t)(man >> 42) : 0));
  int e = exp - 1023 + 15;          /* biased half exponent */
  if (e >= 0x1f) return (uint16_t)(sign | 0x7c00u);
  uint64_t full = man | (exp ? (1ull << 52) : 0); /* 53-bit significand */
  int shift;                        /* bits to drop from full */
  uint16_t base;
  if (e <= 0) {                     /* subnormal half */
    shift = 42 + 1 - e;
    if (shift > 63) return sign;
    base = 0;
  } else {
    shift = 42;
    base = (uint16_t)(e << 10);
    full &= (1ull << 52) - 1;
  }
  uint64_t kept = full >> shift, rest = full & ((1ull << shift) - 1);
  uint64_t half = 1ull << (shift - 1);
  uint32_t r = (uint32_t)(base + kept);
  if (rest > half || (rest == half && (kept & 1))) r++; /* may carry into exp */
  return (uint16_t)(sign | r);
}

/* float to IEEE binary16 bits, round to nearest even. Thread-safe. */
static inline uint16_t xrt_f32_to_f16(float f) { return xrt_f64_to_f16((double)f); }

/* bfloat16 bits to float (exact). Thread-safe. */
static inline float xrt_bf16_to_f32(uint16_t b) {
  return xrt__bits_to_f32((uint32_t)b << 16);
}

/* float to bfloat16 bits, round to nearest even; NaN stays NaN.
 * Thread-safe. */
static inline uint16_t xrt_f32_to_bf16(float f) {
  uint32_t u = xrt__f32_to_bits(f);
  if ((u & 0x7fffffffu) > 0x7f800000u) return (uint16_t)((u >> 16) | 0x40u);
  u += 0x7fffu + ((u >> 16) & 1u);
  return (uint16_t)(u >> 16);
}

static inline int xrt__abs_gt(double a, double b) {
  return (a < 0 ? -a : a) > (b < 0 ? -b : b);
}

/* double to bfloat16 bits, correctly rounded (no double rounding).
 * Thread-safe. */
static inline uint16_t xrt_f64_to_bf16(double d) {
  float f = (float)d;
  /* Rounding to float first can double-round; fix by rounding to odd. */
  if (f == f && (double)f != d && f - f == 0) {
    uint32_t u = xrt__f32_to_bits(f);
    if (xrt__abs_gt((double)f, d)) u--; /* truncate toward zero ... */
    u |= 1u;                         /* ... and keep a sticky bit: round to odd */
    f = xrt__bits_to_f32(u);
  }
  return xrt_f32_to_bf16(f);
}

/* ---- the f8/f6/f4 families (one byte per element, low bits) ---- */

/* How a small float type encodes infinities, NaN and negative zero. */
typedef enum xrt_minifloat_kind {
  XRT_MINIFLOAT_IEEE = 0,   /* infinities and NaNs as IEEE (f8E5M2, f8E4M3) */
  XRT_MINIFLOAT_FN = 1,     /* no infinity; NaN is all-ones (f8E4M3FN) */
  XRT_MINIFLOAT_FNUZ = 2,   /* no infinity, no -0; NaN is 0x80 */
  XRT_MINIFLOAT_FINITE = 3, /* neither infinity nor NaN (f6, f4) */
  XRT_MINIFLOAT_E8M0 = 4    /* powers of two only, no sign, NaN is 0xff */
} xrt_minifloat_kind;

/* The layout of a small float type: exponent and mantissa bits, its
 * xrt_minifloat_kind and the exponent bias. */
typedef struct xrt_minifloat_format {
  uint8_t ebits, mbits, kind;
  int16_t bias;
} xrt_minifloat_format;

/* The layout of a small float type; false for other types. Thread-safe. */
static inline bool xrt_minifloat_format_of(xrt_dtype t,
                                           xrt_minifloat_format *f) {
  static const xrt_minifloat_format table[] = {
      {4, 3, XRT_MINIFLOAT_FN, 7},      /* f8E4M3FN */
      {5, 2, XRT_MINIFLOAT_IEEE, 15},   /* f8E5M2 */
      {4, 3, XRT_MINIFLOAT_FNUZ, 8},    /* f8E4M3FNUZ */
      {5, 2, XRT_MINIFLOAT_FNUZ, 16},   /* f8E5M2FNUZ */
      {4, 3, XRT_MINIFLOAT_FNUZ, 11},   /* f8E4M3B11FNUZ */
      {3, 4, XRT_MINIFLOAT_IEEE, 3},    /* f8E3M4 */
      {4, 3, XRT_MINIFLOAT_IEEE, 7},    /* f8E4M3 */
      {8, 0, XRT_MINIFLOAT_E8M0, 127},  /* f8E8M0FNU */
      {2, 3, XRT_MINIFLOAT_FINITE, 1},  /* f6E2M3FN */
      {3, 2, XRT_MINIFLOAT_FINITE, 3},  /* f6E3M2FN */
      {2, 1, XRT_MINIFLOAT_FINITE, 1},  /* f4E2M1FN */
  };
  if ((int)t < XRT_F8E4M3FN || (int)t > XRT_F4E2M1FN) return false;
  *f = table[(int)t - XRT_F8E4M3FN];
  return true;
}

/* Decodes a small float's bit pattern exactly. Thread-safe. */
static inline double xrt_minifloat_to_f64(xrt_dtype t, uint8_t bits) {
  xrt_minifloat_format f;
  if (!xrt_minifloat_format_of(t, &f)) return (double)NAN;
  const double nan = (double)NAN;
  unsigned mw = f.ebits + f.mbits; /* magnitude width */
  if (f.kind == XRT_MINIFLOAT_E8M0)
    return bits == 0xff ? nan : ldexp(1.0, (int)bits - 127);
  unsigned sign = (bits >> mw) & 1u, mag = bits & ((1u << mw) - 1u);
  unsigned e = mag >> f.mbits, m = mag & ((1u << f.mbits) - 1u);
  unsigned emax = (1u << f.ebits) - 1u;
  if (f.kind == XRT_MINIFLOAT_FNUZ && sign && mag == 0) return nan;
  if (f.kind == XRT_MINIFLOAT_FN && mag == (1u << mw) - 1u) return nan;
  if (f.kind == XRT_MINIFLOAT_IEEE && e == emax)
    return m ? nan : (sign ? -(double)INFINITY : (double)INFINITY);
  double v = e ? ldexp(1.0 + (double)m / (double)(1u << f.mbits),
                                (int)e - f.bias)
               : ldexp((double)m, 1 - f.bias - f.mbits);
  return sign ? -v : v;
}

/* Rounds d to nearest even as a small float; -1 when the value cannot be
 * represented (beyond the largest finite value of a format without
 * infinity, or NaN/infinity in a format without them). Thread-safe. */
static inline int32_t xrt_minifloat_from_f64(xrt_dtype t, double d) {
  xrt_minifloat_format f;
  if (!xrt_minifloat_format_of(t, &f)) return -1;
  unsigned mw = f.ebits + f.mbits, all = (1u << mw) - 1u;
  int32_t nan = f.kind == XRT_MINIFLOAT_FNUZ ? (int32_t)(1u << mw)
              : f.kind == XRT_MINIFLOAT_E8M0 ? 0xff
              : f.kind == XRT_MINIFLOAT_FINITE ? -1 : (int32_t)all;
  unsigned sign = (d < 0 || (d == 0 && 1.0 / d < 0)) ? 1u << mw : 0u;
  if (d != d) return nan < 0 ? -1 : (int32_t)((unsigned)nan | sign);
  if (f.kind == XRT_MINIFLOAT_E8M0) {
    if (d <= 0) return d == 0 ? 0 : 0xff; /* no zero: its smallest value */
    sign = 0;
  }
  unsigned inf = ((1u << f.ebits) - 1u) << f.mbits;
  unsigned maxmag = f.kind == XRT_MINIFLOAT_IEEE ? inf - 1u
                  : f.kind == XRT_MINIFLOAT_FN ? all - 1u
                  : f.kind == XRT_MINIFLOAT_E8M0 ? 254u : all;
  double a = d < 0 ? -d : d;
  if (a == 0) return f.kind == XRT_MINIFLOAT_FNUZ ? 0 : (int32_t)sign;
  if (isinf(a)) { /* frexp leaves the exponent of an infinity unspecified */
    if (f.kind == XRT_MINIFLOAT_IEEE) return (int32_t)(sign | inf);
    return nan < 0 ? -1 : (int32_t)((unsigned)nan | sign);
  }
  int e2;
  frexp(a, &e2);
  int e = e2 - 1; /* a = 1.x * 2^e */
  int emin = f.kind == XRT_MINIFLOAT_E8M0 ? -127 : 1 - f.bias;
  int qexp = (e < emin ? emin : e) - f.mbits; /* exponent of one ulp */
  double scaled = ldexp(a, -qexp);
  if (scaled > 4096.0) scaled = 4096.0; /* far beyond every format */
  double fl = (double)(uint32_t)scaled, rest = scaled - fl;
  uint32_t q = (uint32_t)fl;
  if (rest > 0.5 || (rest == 0.5 && (q & 1u))) q++;
  unsigned mag;
  if (e < emin) {
    mag = f.kind == XRT_MINIFLOAT_E8M0 ? 0u : q; /* subnormal */
  } else {
    int be = e + f.bias;
    if (q == (2u << f.mbits)) be++, q >>= 1;
    mag = ((unsigned)be << f.mbits) | (q - (1u << f.mbits));
  }
  if (mag > maxmag) {
    if (f.kind == XRT_MINIFLOAT_IEEE) return (int32_t)(sign | inf);
    return f.kind == XRT_MINIFLOAT_FINITE ? -1 : (int32_t)((unsigned)nan | sign);
  }
  if (mag == 0 && f.kind == XRT_MINIFLOAT_FNUZ) return 0;
  return (int32_t)(sign | mag);
}

/* ======================================================================
 * Objects
 * ==================================================================== */

typedef struct xrt_client xrt_client;         /* a set of devices of one plugin */
typedef struct xrt_device xrt_device;         /* borrowed from its client */
typedef struct xrt_buffer xrt_buffer;         /* an array resident on one device */
typedef struct xrt_program xrt_program;       /* a parsed, verified module */
typedef struct xrt_executable xrt_executable; /* a program compiled for a client */
typedef struct xrt_context xrt_context;       /* a registry of device plugins */
typedef struct xrt_plugin xrt_plugin;         /* one plugin, borrowed from its context */
typedef struct xrt_variable xrt_variable;     /* a named sharded array that persists */
typedef struct xrt_plugin_api xrt_plugin_api; /* a plugin's function table */
typedef struct xrt_compile_options xrt_compile_options;

/* ======================================================================
 * Clients and devices
 * ==================================================================== */

/* Where this process sits in a multi-process job (PyTorch/XLA's
 * DevicePlugin topology).  A field of -1 is read from the environment:
 * process_index from RANK, process_count from WORLD_SIZE, local_rank from
 * LOCAL_RANK, local_world_size from LOCAL_WORLD_SIZE, host_index from
 * XRT_HOST_INDEX, else GROUP_RANK, else NODE_RANK; absent variables give
 * 0, 1, 0, 1 and 0.  Inconsistent values (index >= count, negative) are
 * XRT_INVALID_ARGUMENT at client creation, naming the field and where it
 * came from. */
typedef struct xrt_topology {
  int process_index, process_count;
  int host_index;
  int local_rank, local_world_size;
} xrt_topology;

/* Options of xrt_client_create; fill with xrt_client_options_init, then
 * change what you need. */
typedef struct xrt_client_options {
  /* Name of the device plugin in the context: "sim" (the built-in
   * simulator) is the default.  NULL means the default. */
  const char *plugin;
  /* The plugin registry to find it in; NULL: the process's default
   * context (the built-in plugins plus those XRT_PLUGINS names, created on
   * first use).  A context outlives its clients. */
  xrt_context *context;
  /* Filled with -1 (from the environment) by xrt_client_options_init. */
  xrt_topology topology;
  /* Number of devices the simulator exposes (default 1; 1..1024). */
  int num_devices;
  /* Memory per simulated device in bytes (default 4 GiB). */
  uint64_t device_memory_bytes;
  /* Host allocator for everything the client and its plugin allocate on
   * the host (device memory too on the simulator); it must outlive them,
   * and the client's support reports. */
  xrt_allocator allocator;
  /* Worker threads each simulated device may use for one large op (its
   * thread pool); 0 means the cores this process may run on (as nproc
   * counts them) divided by num_devices, at least 1.  Small ops always run on the device's own queue thread. */
  int threads_per_device;
  /* Bytes of executables the client's in-memory compilation cache keeps
   * (least recently used evicted first); default 256 MiB, 0 turns the
   * in-memory cache off.  An entry is charged its records plus twice its
   * parsed program (the IR, and as much again for the plugin's executable,
   * whose size xrt cannot see), or twice the bytes it was loaded from; an
   * entry larger than the budget is not kept.  See "Compilation cache". */
  size_t compile_cache_bytes;
  /* A persistent store consulted after an in-memory miss and filled after
   * a compile (xrt_disk_cache_store() of xrt_cache.c, or your own); NULL:
   * none.  Borrowed: it must outlive the client. */
  const struct xrt_cache_store *cache_store;
} xrt_client_options;

/* Fills *options with defaults. Thread-safe. */
XRT_API void xrt_client_options_init(xrt_client_options *options);

/* Creates a client. options may be NULL for defaults. The caller owns
 * *out_client. Thread-safe. */
XRT_API xrt_status xrt_client_create(const xrt_client_options *options,
                             xrt_client **out_client);

/* Waits for the work queued on every device of the client, then releases
 * the client and every buffer, executable, event and sharded array still
 * alive on it.  NULL is ignored.  Not thread-safe with other calls on the
 * same client or its objects. */
XRT_API void xrt_client_release(xrt_client *client);

/* Name of the plugin serving the client ("sim"); borrowed. Thread-safe. */
XRT_API const char *xrt_client_platform(const xrt_client *client);

/* The plugin serving the client (borrowed from its context). Thread-safe. */
XRT_API xrt_plugin *xrt_client_plugin(const xrt_client *client);

/* The client's process topology, as resolved at creation. Thread-safe. */
XRT_API xrt_status xrt_client_topology(const xrt_client *client, xrt_topology *out);

/* Counters of the device work a client has done (monotonic, except
 * device_bytes_in_use).  Tests use them to prove that an operation did no
 * work (a no-op reshard moves none of them). */
typedef struct xrt_client_stats {
  uint64_t device_allocations;   /* device memory blocks allocated */
  uint64_t device_frees;         /* ... and freed */
  uint64_t device_bytes_in_use;  /* bytes allocated and not yet freed */
  uint64_t device_copies;        /* device-to-device copies */
  uint64_t device_bytes_copied;
  uint64_t host_to_device;       /* transfers from host memory */
  uint64_t device_to_host;       /* transfers to host memory */
  uint64_t executions;           /* participants run (one per device) */
  uint64_t compiles;             /* programs compiled by the plugin */
  uint64_t compile_cache_hits;   /* compiles answered from a cache */
} xrt_client_stats;

/* Reads the client's counters. Thread-safe. */
XRT_API xrt_status xrt_client_get_stats(const xrt_client *client,
                                xrt_client_stats *out);

/* Number of devices. -1 for an invalid client. Thread-safe. */
XRT_API int xrt_client_device_count(const xrt_client *client);

/* Device number index (borrowed, lives as long as the client), or NULL with
 * XRT_OUT_OF_RANGE if index is out of range. Thread-safe. */
XRT_API xrt_device *xrt_client_device(xrt_client *client, int index);

/* A device's id (its index in the client), -1 if invalid. Thread-safe. */
XRT_API int xrt_device_id(const xrt_device *device);
/* A device's kind as the plugin names it ("sim"); borrowed. Thread-safe. */
XRT_API const char *xrt_device_kind(const xrt_device *device);

/* Device attributes: typed values the plugin reports ("memory_bytes",
 * "cores", ...). */
typedef enum xrt_attribute_type {
  XRT_ATTRIBUTE_INT = 0,
  XRT_ATTRIBUTE_FLOAT = 1,
  XRT_ATTRIBUTE_STRING = 2,
  XRT_ATTRIBUTE_BOOL = 3
} xrt_attribute_type;

/* One attribute: its name, its type, and the value in the field of that
 * type (strings borrowed from the plugin). */
typedef struct xrt_attribute {
  const char *name;          /* "memory_bytes" */
  xrt_attribute_type type;   /* which of the fields below holds the value */
  int64_t int_value;         /* XRT_ATTRIBUTE_INT */
  double float_value;        /* XRT_ATTRIBUTE_FLOAT */
  const char *string_value;  /* XRT_ATTRIBUTE_STRING (borrowed) */
  bool bool_value;           /* XRT_ATTRIBUTE_BOOL */
} xrt_attribute;

/* Number of attributes of a device (-1 if the device is invalid).
 * Thread-safe. */
XRT_API int xrt_device_attribute_count(const xrt_device *device);
/* Attribute number index; borrowed strings. Thread-safe. */
XRT_API xrt_status xrt_device_attribute_get(const xrt_device *device, int index,
                                    xrt_attribute *out);
/* Attribute by name; XRT_NOT_FOUND if absent. Thread-safe. */
XRT_API xrt_status xrt_device_attribute_find(const xrt_device *device,
                                     const char *name, xrt_attribute *out);

/* ======================================================================
 * Contexts and plugins
 *
 * A context is a registry of device plugins; clients are created from it
 * (xrt_client_options.context).  Plugins come from a statically linked
 * table (xrt_context_register_plugin), a shared library by path, the
 * environment variable XRT_PLUGINS ("name:path,name:path"; on Windows
 * "name;path,name;path", as ':' follows drive letters), or a
 * directory scan.  A shared library exports one symbol,
 * xrt_plugin_get_api (XRT_PLUGIN_ENTRY_SYMBOL), returning its function
 * table (see "Plugin ABI" below).  Loading is checked: the file must
 * exist and be a loadable library with that symbol, the table's
 * struct_size and ABI version must be in range (same major, minor at
 * least XRT_PLUGIN_ABI_MIN_MINOR), and every failure says which of these
 * it was, with the dynamic loader's own reason.  No plugin client is
 * created until a client asks for it.
 * ==================================================================== */

/* Options of xrt_context_create; fill with xrt_context_options_init. */
typedef struct xrt_context_options {
  /* Host allocator for the context's own records. */
  xrt_allocator allocator;
  /* Register the plugins compiled into this program ("sim" when
   * xrt_sim.c is linked).  Default true. */
  bool builtin_plugins;
  /* Load the plugins XRT_PLUGINS names at creation (a failure fails the
   * creation, with the entry named).  Default true. */
  bool env_plugins;
} xrt_context_options;

/* Fills *options with defaults. Thread-safe. */
XRT_API void xrt_context_options_init(xrt_context_options *options);

/* Creates a context (options may be NULL).  The caller owns *out_context.
 * Thread-safe. */
XRT_API xrt_status xrt_context_create(const xrt_context_options *options,
                              xrt_context **out_context);

/* Releases the context and unloads its plugins.  XRT_FAILED_PRECONDITION
 * (nothing released) while a client created from it is alive.  NULL is
 * ignored.  Not thread-safe with other calls on the same context. */
XRT_API xrt_status xrt_context_release(xrt_context *context);

/* Registers a statically linked plugin table under name (NULL: the
 * table's own name).  The table is validated as a loaded one is.
 * *out_plugin (may be NULL) is borrowed from the context.  Registering
 * the same table under the same name again returns the existing
 * registration; another table under a taken name is XRT_ALREADY_EXISTS.
 * Thread-safe. */
XRT_API xrt_status xrt_context_register_plugin(xrt_context *context, const char *name,
                                       const xrt_plugin_api *api,
                                       xrt_plugin **out_plugin);

/* Loads a plugin from a shared library (dlopen).  name NULL: the table's
 * own name.  Loading the same file again (by any path that resolves to
 * it) returns the same registration.  Errors: XRT_NOT_FOUND (no such
 * file, or no xrt_plugin_get_api symbol), XRT_INVALID_ARGUMENT (not a
 * loadable library: the loader's message is included),
 * XRT_FAILED_PRECONDITION (ABI version or table size out of range: both
 * versions and the rule are named), XRT_ALREADY_EXISTS (name taken by
 * another plugin).  Thread-safe. */
XRT_API xrt_status xrt_context_load_plugin(xrt_context *context, const char *name,
                                   const char *path, xrt_plugin **out_plugin);

/* Loads every "name:path" ("name;path" on Windows) entry of spec
 * (comma-separated; NULL: the value of XRT_PLUGINS; empty or unset:
 * nothing).  Stops at the first failure, naming the entry.  Thread-safe. */
XRT_API xrt_status xrt_context_load_env(xrt_context *context, const char *spec);

/* Loads every file of dir whose name ends in ".so" (".dylib", ".dll"
 * elsewhere) and exports xrt_plugin_get_api; other files are skipped (and
 * logged).  *out_loaded (may be NULL) counts the plugins registered.  A
 * library with the symbol that fails validation fails the scan.
 * Thread-safe. */
XRT_API xrt_status xrt_context_scan_directory(xrt_context *context, const char *dir,
                                      int *out_loaded);

/* Unloads a plugin (dlclose for a loaded library); its handle becomes
 * invalid.  XRT_FAILED_PRECONDITION while any client of it is alive (its
 * buffers and executables die with their client).  Thread-safe. */
XRT_API xrt_status xrt_context_unload_plugin(xrt_context *context, xrt_plugin *plugin);

/* The number of plugins of a context (-1 with XRT_INVALID_ARGUMENT for an
 * invalid context).  Thread-safe. */
XRT_API int xrt_context_plugin_count(const xrt_context *context);
/* The plugin at index, in registration order (borrowed from the context,
 * valid until it is unloaded), or NULL with XRT_OUT_OF_RANGE /
 * XRT_INVALID_ARGUMENT in xrt_last_error().  Thread-safe. */
XRT_API xrt_plugin *xrt_context_plugin(const xrt_context *context, int index);
/* By name; NULL with XRT_NOT_FOUND if absent. Thread-safe. */
XRT_API xrt_plugin *xrt_context_find_plugin(const xrt_context *context,
                                    const char *name);

/* Plugin capabilities (xrt_plugin_info.capabilities bits). */
#define XRT_CAP_ASYNC (1u << 0)           /* devices run concurrently */
#define XRT_CAP_MULTI_DEVICE (1u << 1)    /* launches over several devices */
#define XRT_CAP_COLLECTIVES (1u << 2)     /* collective ops, send/recv */
#define XRT_CAP_EXCLUSIVE (1u << 3)       /* one client per device at a time */
#define XRT_CAP_FAULT_INJECTION (1u << 4) /* inject_fault works */
#define XRT_CAP_HOST_MEMORY (1u << 5)     /* device memory is host-addressable */
/* The participants of a launch over several devices must run at once (a
 * PJRT plugin runs them in one call): the core never runs them one after
 * another on the calling thread. */
#define XRT_CAP_LAUNCH_TOGETHER (1u << 6)

/* What a plugin says of itself, before any client exists.  Strings are
 * borrowed from the plugin and live until it is unloaded. */
typedef struct xrt_plugin_info {
  const char *name;             /* registration name */
  const char *path;             /* library path; "" for a linked table */
  const char *platform_name;    /* "sim" */
  const char *platform_version; /* the plugin's own version */
  uint32_t abi_major, abi_minor;/* of the table it was built against */
  const char *stablehlo_min;    /* StableHLO versions it accepts, "1.0.0" */
  const char *stablehlo_max;
  uint32_t capabilities;        /* XRT_CAP_* */
  uint64_t dtypes;              /* bit (1 << xrt_dtype) per supported type */
  int num_attributes;           /* platform attributes */
  const xrt_attribute *attributes;
} xrt_plugin_info;

/* Fills *out (all of it, with defaults for what an older plugin does not
 * report: every dtype, no capabilities, StableHLO "0.0.0".."<xrt's>").
 * Thread-safe. */
XRT_API xrt_status xrt_plugin_get_info(const xrt_plugin *plugin, xrt_plugin_info *out);

/* The StableHLO version xrt's parser implements ("1.8.0" style); a program
 * may state its own with the module attribute stablehlo.version = "X.Y.Z"
 * (absent: this one).  Thread-safe. */
XRT_API const char *xrt_stablehlo_version(void);

/* ---- asking a plugin before compiling ---- */

/* A plugin's answer to "can you run this?" (xrt_client_query_support). */
typedef enum xrt_support {
  XRT_SUPPORT_YES = 0,   /* every op is supported */
  XRT_SUPPORT_MAYBE = 1, /* the plugin cannot tell for some op */
  XRT_SUPPORT_NO = 2     /* some op (or the program's version) is not */
} xrt_support;

/* An op the plugin refused or could not judge. */
typedef struct xrt_support_issue {
  const char *op;       /* "stablehlo.dot_general"; "module" for the version */
  const char *file;     /* the op's location in the program */
  int32_t line, col;
  xrt_support verdict;  /* NO or MAYBE */
  const char *reason;   /* the plugin's words ("f64 is not supported") */
} xrt_support_issue;

/* The answer of xrt_client_query_support: a verdict and the ops behind it;
 * released with xrt_support_report_release. */
typedef struct xrt_support_report xrt_support_report;

/* Asks the client's plugin whether it can run the program's entry (and
 * every function it calls), without compiling: the StableHLO version
 * against the plugin's range, then every op through the plugin's
 * op_support (a plugin without it answers MAYBE for every op).  options
 * may be NULL (entry "main").  The caller owns *out_report.
 * Thread-safe. */
XRT_API xrt_status xrt_client_query_support(xrt_client *client,
                                    const xrt_program *program,
                                    const xrt_compile_options *options,
                                    xrt_support_report **out_report);
/* The overall answer: NO if any issue is NO, else MAYBE if any, else
 * YES.  Thread-safe. */
XRT_API xrt_support xrt_support_report_verdict(const xrt_support_report *report);
/* The number of issues (-1 for an invalid report).  Thread-safe. */
XRT_API int xrt_support_report_count(const xrt_support_report *report);
/* Issue number index, in program order (borrowed from the report: valid
 * until xrt_support_report_release), or NULL with XRT_OUT_OF_RANGE /
 * XRT_INVALID_ARGUMENT in xrt_last_error().  Thread-safe. */
XRT_API const xrt_support_issue *xrt_support_report_issue(
    const xrt_support_report *report, int index);
/* NULL is ignored.  Not thread-safe with other calls on the report. */
XRT_API void xrt_support_report_release(xrt_support_report *report);

/* ======================================================================
 * Buffers
 * ==================================================================== */

/* Copies a dense row-major host array onto a device.  data must hold
 * xrt_shape_bytes(shape) bytes (it may be NULL only when that is 0).  The
 * caller owns *out_buffer. Thread-safe. */
XRT_API xrt_status xrt_buffer_from_host(xrt_client *client, xrt_device *device,
                                const xrt_shape *shape, const void *data,
                                xrt_buffer **out_buffer);

/* Copies the buffer's contents to host memory; dst_bytes must be at least
 * xrt_buffer_bytes(buffer). Thread-safe. */
XRT_API xrt_status xrt_buffer_to_host(xrt_buffer *buffer, void *dst, size_t dst_bytes);

/* Copies the buffer to another device of the same client. Thread-safe. */
XRT_API xrt_status xrt_buffer_copy_to_device(xrt_buffer *buffer, xrt_device *device,
                                     xrt_buffer **out_buffer);

/* The buffer's shape (copied into *out). Thread-safe. */
XRT_API xrt_status xrt_buffer_shape(const xrt_buffer *buffer, xrt_shape *out);
/* Size in bytes (0 for an invalid buffer). Thread-safe. */
XRT_API size_t xrt_buffer_bytes(const xrt_buffer *buffer);
/* The device holding the buffer (borrowed), NULL if invalid. Thread-safe. */
XRT_API xrt_device *xrt_buffer_device(const xrt_buffer *buffer);

/* Drops the caller's buffer: the handle is invalid at once, the memory is
 * freed when work already queued on the buffer is done (before that
 * work's event completes, so that xrt_client_get_stats counts it freed once
 * the event is ready).  NULL is ignored;
 * a stale handle is reported, not dereferenced (of two threads releasing
 * one handle at once, one gets XRT_OK, the other XRT_INVALID_ARGUMENT).
 * Thread-safe. */
XRT_API xrt_status xrt_buffer_release(xrt_buffer *buffer);

/* Reads a .npy file (little-endian numeric dtypes, C order) onto a device.
 * The caller owns *out_buffer. Thread-safe. */
XRT_API xrt_status xrt_buffer_from_npy(xrt_client *client, xrt_device *device,
                               const char *path, xrt_buffer **out_buffer);
/* Writes the buffer as a .npy file (version 1.0); pred becomes '|b1'.
 * bf16, sub-byte and f8/f6/f4 types have no NumPy code: XRT_UNIMPLEMENTED.
 * Thread-safe (for different paths). */
XRT_API xrt_status xrt_buffer_to_npy(xrt_buffer *buffer, const char *path);

/* ---- DLPack exchange (dlpack.h's DLManagedTensor, DLPack 0.x ABI) ----
 *
 * xrt.h does not include dlpack.h; include it yourself to use the struct.
 * Element types map both ways for bool, int8..64, uint8..64, float16/32/64,
 * bfloat16 and complex64/128; others are XRT_UNIMPLEMENTED.  bool is
 * kDLBool (code 6, 8 bits: DLPack 0.8's code, absent from 0.6's header). */
struct DLManagedTensor;

/* Exports the buffer (after it is ready) as a DLManagedTensor owned by the
 * caller, who calls its deleter once done.  When the plugin's device
 * memory is host-addressable (the simulator's is), the tensor points into
 * the buffer itself (device kDLCPU, zero copy) and keeps the buffer's
 * memory alive until the deleter runs, even after xrt_buffer_release; the
 * consumer must not write to it (xrt buffers are immutable).  Otherwise
 * the data is copied to host memory the tensor owns.  xrt_client_release
 * frees the buffer's memory even while such a tensor is out (call the
 * deleters first; a deleter called later is still safe).  Thread-safe. */
XRT_API xrt_status xrt_buffer_to_dlpack(xrt_buffer *buffer,
                                struct DLManagedTensor **out_tensor);

/* Imports a kDLCPU (or kDLCUDAHost) tensor onto device.  On success xrt
 * owns the tensor and calls its deleter exactly once, when it no longer
 * needs the memory: at once after copying, or, zero-copy (the tensor is
 * dense row-major, suitably aligned, and the plugin can adopt host
 * memory), when the buffer's memory is freed (possibly on a device's
 * worker thread).  The producer must not write to the memory while xrt
 * holds it.  On failure the caller still
 * owns the tensor (its deleter has not been called).  Strided tensors are
 * copied (compacted); byte_offset is honoured.  Thread-safe. */
XRT_API xrt_status xrt_buffer_from_dlpack(xrt_client *client, xrt_device *device,
                                  struct DLManagedTensor *tensor,
                                  xrt_buffer **out_buffer);

/* ======================================================================
 * Events and asynchronous work
 *
 * Every device has its own worker thread with an in-order queue.  The
 * *_async calls enqueue work and return at once; what they produce (a
 * buffer, a completed copy, an execution) is signalled by an event.  Every
 * buffer carries a ready event: work that reads the buffer waits for it,
 * and a buffer whose producer failed is "poisoned": whatever is computed
 * from it fails with the original message, and reading it to the host
 * returns that error.  The synchronous calls above (xrt_buffer_from_host,
 * xrt_buffer_to_host, xrt_execute...) enqueue and wait.
 * ==================================================================== */

typedef struct xrt_event xrt_event; /* a one-shot completion, with a status */

/* Called once when the event completes, on a runtime thread (a device's
 * worker, never the thread that registered it), with the event's status
 * and message ("" when OK; borrowed for the duration of the call).  It must
 * not block on other xrt events. */
typedef void (*xrt_event_callback)(void *user, xrt_status status,
                                   const char *message);

/* Blocks until the event completes and returns its status; on failure
 * xrt_last_error() is the event's message.  Thread-safe. */
XRT_API xrt_status xrt_event_await(xrt_event *event);

/* Like xrt_event_await, giving up after timeout_ns nanoseconds with
 * XRT_DEADLINE_EXCEEDED (the event stays pending). Thread-safe. */
XRT_API xrt_status xrt_event_await_for(xrt_event *event, int64_t timeout_ns);

/* Whether the event has completed (false for an invalid handle).
 * Thread-safe. */
XRT_API bool xrt_event_is_ready(const xrt_event *event);

/* The status of a completed event without waiting: XRT_OK, the error it
 * failed with (message in xrt_last_error()), or XRT_UNAVAILABLE while it is
 * still pending. Thread-safe. */
XRT_API xrt_status xrt_event_status(const xrt_event *event);

/* Registers a callback to run when the event completes (at once, on a
 * runtime thread, when it already has).  Callbacks run in registration
 * order.  Thread-safe. */
XRT_API xrt_status xrt_event_on_ready(xrt_event *event, xrt_event_callback callback,
                              void *user);

/* Drops the caller's reference; pending work still completes.  NULL is
 * ignored, a stale handle is reported.  Thread-safe. */
XRT_API xrt_status xrt_event_release(xrt_event *event);

/* A new reference to the buffer's ready event (the caller releases it).
 * Thread-safe. */
XRT_API xrt_status xrt_buffer_ready_event(xrt_buffer *buffer, xrt_event **out_event);

/* Enqueues a host-to-device copy.  *out_buffer is returned at once, with a
 * ready event that completes when the copy has.  data must stay valid and
 * unchanged until *out_done completes (out_done may be NULL only when the
 * caller waits on the buffer's ready event instead).  Thread-safe. */
XRT_API xrt_status xrt_buffer_from_host_async(xrt_client *client, xrt_device *device,
                                      const xrt_shape *shape, const void *data,
                                      xrt_buffer **out_buffer,
                                      xrt_event **out_done);

/* Enqueues a device-to-host copy after the buffer is ready; dst must stay
 * valid until *out_done completes.  Thread-safe. */
XRT_API xrt_status xrt_buffer_to_host_async(xrt_buffer *buffer, void *dst,
                                    size_t dst_bytes, xrt_event **out_done);

/* Enqueues a copy to another device of the same client; the new buffer is
 * returned at once with its ready event.  Thread-safe. */
XRT_API xrt_status xrt_buffer_copy_to_device_async(xrt_buffer *buffer,
                                           xrt_device *device,
                                           xrt_buffer **out_buffer);

/* Fault injection (tests of error handling).  The next execution on the
 * device fails after it has run after_steps of its kernels, with a message
 * naming the device, as a hardware fault would; the device and every other
 * buffer stay usable.  XRT_UNIMPLEMENTED if the plugin cannot inject
 * faults.  Thread-safe. */
XRT_API xrt_status xrt_device_inject_fault(xrt_device *device, int64_t after_steps);

/* What a finer-grained injected fault hits. */
typedef enum xrt_fault_kind {
  XRT_FAULT_KERNEL = 0,     /* a kernel of an execution on the device */
  XRT_FAULT_TRANSFER = 1,   /* a host<->device transfer or a device copy
                               from or to the device */
  XRT_FAULT_COLLECTIVE = 2, /* a collective op the device takes part in */
  XRT_FAULT_ALLOC = 3       /* a device memory allocation on the device:
                               fails as out of memory */
} xrt_fault_kind;

/* Makes the device fail the (after + 1)-th operation of the given kind
 * from now (after = 0: the next one), once; the message names the device
 * and the operation.  Operations that do not depend on it, and buffers
 * and variables it did not touch, stay valid.  after < 0 cancels a
 * pending fault of that kind.  XRT_UNIMPLEMENTED if the plugin cannot.
 * Thread-safe. */
XRT_API xrt_status xrt_device_inject_fault_kind(xrt_device *device,
                                        xrt_fault_kind kind, int64_t after);

/* ======================================================================
 * Programs and compilation
 * ==================================================================== */

/* Options of parsing and compiling (may be NULL for defaults); fill with
 * xrt_compile_options_init. */
typedef struct xrt_compile_options {
  /* Function to run: NULL means "main", or the only function if there is
   * one and none is called main. */
  const char *entry;
  /* Name used in error locations ("model.mlir"); NULL means "<input>". */
  const char *filename;
  /* Added to every line number, for a chunk cut from a larger file. */
  int line_offset;
  /* Replicas and partitions of one launch; 0 takes the module's
   * mhlo.num_replicas / mhlo.num_partitions (default 1). */
  int num_replicas, num_partitions;
  /* Device ids by logical id (replica * num_partitions + partition),
   * num_replicas * num_partitions of them; NULL: logical id i runs on
   * device i.  Copied by the compile call. */
  const int *device_assignment;
  /* Compilation cache: 1 keeps debug locations (loc(...), #loc lines) and
   * comments in the cache key; by default (0) programs that differ only in
   * those share one key. */
  int cache_keep_locations;
  /* 1: this compile neither reads nor fills any cache. */
  int cache_disable;
  /* Shapes of the entry function's arguments (num_arg_shapes of them, one
   * per argument; 0 and NULL: its own types), for shape-polymorphic
   * programs: an argument type with `?` dimensions (tensor<?x4xf32>, as
   * jax.export writes symbolic shapes) takes the given static shape, which
   * must have its rank, element type and static dimensions (else
   * XRT_INVALID_ARGUMENT naming the argument), and the compile refines
   * every shape in the program from these (see "Shape-polymorphic
   * programs"); the executable is static.  A program without `?` checks
   * them against its own.  Keyed by the compilation cache.  Copied by the
   * compile call. */
  int num_arg_shapes;
  const xrt_shape *arg_shapes;
} xrt_compile_options;

/* Fills *options with defaults. Thread-safe. */
XRT_API void xrt_compile_options_init(xrt_compile_options *options);

/* Parses and verifies StableHLO text (len bytes; need not be NUL-terminated;
 * options may be NULL).  Errors carry file:line:col.  The caller owns
 * *out_program; executables compiled from it keep what they need, so it may
 * be released before them.  Thread-safe. */
XRT_API xrt_status xrt_program_parse(const char *text, size_t len,
                             const xrt_compile_options *options,
                             xrt_program **out_program);
/* Releases a program; NULL and stale handles are ignored.  Not thread-safe
 * with other calls on the same program. */
XRT_API void xrt_program_release(xrt_program *program);
/* Writes the program as a StableHLO portable artifact: MLIR bytecode of
 * the VHLO dialect, what jax.export and StableHLO's serializer write and
 * what xrt_program_parse / xrt_compile read back.  target_version
 * ("1.8.0"; NULL, "" or "current": the newest version whose artifacts
 * xrt reads, 1.20.0 today) picks each op's VHLO version and the bytecode
 * format; versions 0.9.0 and up are written.  An op, or an attribute that
 * differs from its default, that the target version lacks is refused
 * (XRT_UNIMPLEMENTED, naming it), as are ops without a portable form
 * (CHLO math that xrt runs directly).  *out_data (*out_size bytes) is
 * allocated with malloc: the caller frees it with free().  Thread-safe
 * (the program is only read). */
XRT_API xrt_status xrt_program_serialize(const xrt_program *program,
                                         const char *target_version,
                                         char **out_data, size_t *out_size);
/* Number of functions of the program (-1 if invalid). Thread-safe. */
XRT_API int xrt_program_function_count(const xrt_program *program);
/* The name of function number index, without the "@" (borrowed from the
 * program; NULL if the program is invalid or index out of range).
 * Thread-safe. */
XRT_API const char *xrt_program_function_name(const xrt_program *program, int index);
/* Writes the program as StableHLO text in one canonical form, which
 * depends only on what was parsed (not on pretty or generic syntax, value
 * names, locations or comments) and parses back to the same program: the
 * module and functions in their pretty form, every op in MLIR's generic
 * form with its attributes sorted by name, floats exact (shortest decimal
 * or hex), no locations.  *out_text (NUL-terminated, *out_len bytes
 * without the NUL; out_len may be NULL) is allocated with malloc: the
 * caller frees it with free().  Thread-safe. */
XRT_API xrt_status xrt_program_print(const xrt_program *program,
                                     char **out_text, size_t *out_len);

/* Compiles a parsed program for the client's devices (options may be NULL;
 * options->entry, num_replicas, num_partitions and device_assignment are
 * read: the program keeps its own file name and line offset).  The launch
 * must fit the client: num_replicas * num_partitions <= its devices, and a
 * device assignment names distinct devices in range (else
 * XRT_INVALID_ARGUMENT).  The caller owns *out_executable. Thread-safe. */
XRT_API xrt_status xrt_compile_program(xrt_client *client, const xrt_program *program,
                               const xrt_compile_options *options,
                               xrt_executable **out_executable);

/* Parse + verify + compile in one call (options may be NULL). The caller
 * owns *out_executable. Thread-safe. */
XRT_API xrt_status xrt_compile(xrt_client *client, const char *text, size_t len,
                       const xrt_compile_options *options,
                       xrt_executable **out_executable);

/* ======================================================================
 * Compilation cache
 *
 * Every compile (xrt_compile, xrt_compile_program) is looked up by a key:
 * XXH3-128 over the program text with debug locations and comments
 * removed (unless cache_keep_locations), the compile options that change
 * the result (entry, replicas, partitions, device assignment; not the
 * file name or line offset), the plugin's name and version and the device
 * topology (device count and kinds, process count, and for a client of
 * several processes every process's device count; not this process's
 * index, so the processes of a job share a store).  In memory, a key is
 * compiled once even when many threads ask at once (the others wait and
 * share the executable); a failed compile is remembered and its status and
 * message returned to every later caller of that key (messages name the
 * file and locations of the compile that failed; failures that may pass
 * later are not kept: NOT_FOUND, e.g. a host function not yet registered,
 * and exhausted memory or internal errors).  Every caller gets its own
 * executable handle; handles of one key share the plugin's executable, so
 * runtime messages cite the locations of the program compiled first.  A
 * hit whose host functions were registered again since compiles afresh.
 * A device_assignment with num_replicas or num_partitions 0 is not keyed
 * (such compiles bypass the cache).  XRT_LOG=info,cache logs each key
 * with hit or miss.  Behind the in-memory cache an optional
 * xrt_cache_store (the disk cache of xrt_cache.c) keeps serialized
 * executables across processes; a store entry that is damaged or that the
 * plugin refuses is a warning and a compile, never a failure.
 * ==================================================================== */

/* Characters of a cache key in text form (hex), without the NUL. */
#define XRT_CACHE_KEY_CHARS 32

/* Writes the cache key that compiling text with options on client would
 * use, as 32 lowercase hex digits and a NUL, into out_key.
 * XRT_INVALID_ARGUMENT for options that are not keyed (see above).
 * Thread-safe. */
XRT_API xrt_status xrt_compile_cache_key(xrt_client *client, const char *text,
                                 size_t len,
                                 const xrt_compile_options *options,
                                 char out_key[XRT_CACHE_KEY_CHARS + 1]);

/* Counters of a client's compilation cache (monotonic except entries and
 * bytes). */
typedef struct xrt_cache_stats {
  uint64_t hits;            /* compiles answered from memory */
  uint64_t misses;          /* compiles that found nothing in memory */
  uint64_t evictions;       /* entries dropped to stay within the budget */
  uint64_t entries;         /* entries held now (failures and compiles
                             * in progress included) */
  uint64_t bytes;           /* bytes held now */
  uint64_t failures_cached; /* compile failures remembered */
  uint64_t store_hits;      /* misses answered by the cache_store */
  uint64_t store_misses;    /* ... not found there */
  uint64_t store_writes;    /* executables handed to the store */
  uint64_t store_errors;    /* store entries rejected or failed writes */
} xrt_cache_stats;

/* Reads the client's cache counters. Thread-safe. */
XRT_API xrt_status xrt_client_get_cache_stats(const xrt_client *client,
                                      xrt_cache_stats *out);

/* Drops every in-memory cache entry of the client (executables already
 * handed out stay valid).  Thread-safe. */
XRT_API xrt_status xrt_client_clear_cache(xrt_client *client);

/* A persistent store of serialized executables, keyed by cache key and
 * plugin identity ("name version"), e.g. the disk cache below.  The core
 * calls it from any thread, concurrently.  Next to each executable it
 * also keeps an alias: key "a-" and 30 hex digits (a hash of the raw
 * text, options and client), payload the 32 hex digits of the cache key,
 * so that a fresh process finds the key without reading the text as
 * tokens; an alias naming nothing usable only costs that read.  Each
 * executable records the alias of the text it was compiled from, and an
 * alias naming another text's executable (stale or forged) is a warning,
 * that read, and the alias written anew. */
typedef struct xrt_cache_store {
  size_t struct_size; /* sizeof(xrt_cache_store) */
  void *self;         /* passed to every call */
  /* A hit returns XRT_OK and *out_data, *out_size (freed with
   * release_data); a miss returns XRT_NOT_FOUND; any other status is an
   * unusable entry (damaged, foreign): the core logs a warning, counts a
   * store error and compiles. */
  xrt_status (*load)(void *self, const char *key, const char *plugin_identity,
                     void **out_data, size_t *out_size);
  void (*release_data)(void *self, void *data);
  /* Offers an executable compiled in compile_ns nanoseconds; the store may
   * decline (too cheap, read-only, full).  A failure is counted, never
   * reported to the compile's caller. */
  xrt_status (*save)(void *self, const char *key, const char *plugin_identity,
                     const void *data, size_t size, uint64_t compile_ns);
} xrt_cache_store;

/* ---- The disk cache (xrt_cache.c, optional; XRT_HAVE_DISK_CACHE) ----
 * One file per key in a directory: a header (magic, format version, key,
 * plugin identity, payload size), the payload and a checksum.  A corrupt,
 * truncated or foreign file is logged as a warning, ignored and replaced
 * by the next compile.  Writes go to a temporary file renamed into place,
 * so several processes may share a directory (the directory is flushed
 * after the rename on POSIX, so a crash cannot lose a completed entry).
 * The directory is kept under max_bytes by removing the least recently
 * used files (a hit refreshes a file's time, unless read_only).  An unwritable or full
 * directory turns writing off with one warning.  Its store's load returns
 * XRT_DATA_LOSS for a damaged or foreign file (removed); its save returns
 * XRT_OK when it declines (counted as skipped) and XRT_UNAVAILABLE when
 * the write fails.  Keys are file names: 1 to 64 of [0-9A-Za-z_-]. */
/* A disk cache: a directory of executables, opened by xrt_disk_cache_open. */
typedef struct xrt_disk_cache xrt_disk_cache;

/* Options of xrt_disk_cache_open; fill with xrt_disk_cache_options_init. */
typedef struct xrt_disk_cache_options {
  const char *directory;   /* created (one level) if missing; required */
  uint64_t max_bytes;      /* default 1 GiB */
  uint64_t min_compile_ns; /* compiles faster than this are not written */
  int read_only;           /* 1: load only (e.g. every process but one) */
  xrt_allocator allocator; /* for the cache and the data it returns */
} xrt_disk_cache_options;

/* Fills *options with defaults (directory NULL). Thread-safe. */
XRT_API void xrt_disk_cache_options_init(xrt_disk_cache_options *options);

/* Opens a disk cache; the caller owns *out_cache.  Thread-safe. */
XRT_API xrt_status xrt_disk_cache_open(const xrt_disk_cache_options *options,
                               xrt_disk_cache **out_cache);

/* Closes a disk cache (NULL ignored); no client may still use its store.
 * Not thread-safe with calls on the same cache. */
XRT_API void xrt_disk_cache_close(xrt_disk_cache *cache);

/* The store to put in xrt_client_options.cache_store (borrowed from the
 * cache). Thread-safe. */
XRT_API const xrt_cache_store *xrt_disk_cache_store(xrt_disk_cache *cache);

/* Counters of a disk cache. */
typedef struct xrt_disk_cache_stats {
  uint64_t hits, misses;   /* loads answered, loads that found no file */
  uint64_t corrupt;        /* files rejected (damaged, foreign), removed */
  uint64_t writes;         /* files written */
  uint64_t skipped;        /* saves declined (cheap, read-only, disabled) */
  uint64_t write_errors;   /* failed writes */
  uint64_t evictions;      /* files removed to stay under max_bytes */
  uint64_t files, bytes;   /* what the directory holds, as last seen */
  int writes_disabled;     /* 1 after an unwritable or full directory */
} xrt_disk_cache_stats;

/* Reads the counters. Thread-safe. */
XRT_API xrt_status xrt_disk_cache_get_stats(xrt_disk_cache *cache,
                                    xrt_disk_cache_stats *out);

/* Releases an executable: the handle is invalid at once; executions
 * already queued still run.  NULL is ignored, a stale handle is reported.
 * Thread-safe. */
XRT_API xrt_status xrt_executable_release(xrt_executable *executable);

/* Number of inputs of the entry function. -1 if invalid. Thread-safe. */
XRT_API int xrt_executable_num_inputs(const xrt_executable *executable);
/* Number of outputs of the entry function. -1 if invalid. Thread-safe. */
XRT_API int xrt_executable_num_outputs(const xrt_executable *executable);
/* The shape of input number index (per device, for a launch over several)
 * copied into *out; XRT_OUT_OF_RANGE for a bad index, XRT_INVALID_ARGUMENT
 * for an invalid executable or a NULL out.  Thread-safe. */
XRT_API xrt_status xrt_executable_input_shape(const xrt_executable *executable,
                                      int index, xrt_shape *out);
/* The shape of output number index, as xrt_executable_input_shape.
 * Thread-safe. */
XRT_API xrt_status xrt_executable_output_shape(const xrt_executable *executable,
                                       int index, xrt_shape *out);
/* Name of the entry function (borrowed from the executable). Thread-safe. */
XRT_API const char *xrt_executable_name(const xrt_executable *executable);
/* Replicas the executable was compiled for (-1 if invalid). Thread-safe. */
XRT_API int xrt_executable_num_replicas(const xrt_executable *executable);
/* Partitions the executable was compiled for (-1 if invalid).
 * Thread-safe. */
XRT_API int xrt_executable_num_partitions(const xrt_executable *executable);
/* The device that logical id (replica * num_partitions + partition) runs
 * on (borrowed from the client), or NULL with XRT_OUT_OF_RANGE /
 * XRT_INVALID_ARGUMENT in xrt_last_error().  Thread-safe. */
XRT_API xrt_device *xrt_executable_device(const xrt_executable *executable,
                                  int logical_id);

/* ======================================================================
 * Execution
 * ==================================================================== */

/* Options of the execute calls (may be NULL for defaults); fill with
 * xrt_execute_options_init. */
typedef struct xrt_execute_options {
  /* Multi-program (MPMD) launches: executions given the same nonzero
   * launch_id form one launch, whose collectives, send and recv meet each
   * other; each says which participant it is.  launch_size is
   * num_replicas * num_partitions of the launch (0: the executable's).  Ids
   * must be unique among launches in flight on the client
   * (xrt_client_new_launch_id gives one).  0 (the default): the execution
   * is a launch of its own. */
  uint64_t launch_id;
  int replica, partition;
  /* Devices of the launch by logical id (replica * num_partitions +
   * partition): NULL uses the executable's device assignment.  Read by
   * xrt_execute_multi and for MPMD launches. */
  xrt_device *const *devices;
  /* xrt_execute_sharded: one spec per output, NULL for the default (pmap's
   * out_axes=0: a new leading dimension Unstacked over the devices). */
  const struct xrt_sharding_spec *const *output_specs;
} xrt_execute_options;

/* Fills *options with defaults. Thread-safe. */
XRT_API void xrt_execute_options_init(xrt_execute_options *options);

/* Runs the executable on one device and waits.  args[i] must live on that
 * device and match input i's shape.  outputs receives num_outputs new
 * buffers owned by the caller (num_outputs must equal
 * xrt_executable_num_outputs).  On failure no output is returned.  options
 * may be NULL. Thread-safe. */
XRT_API xrt_status xrt_execute(xrt_executable *executable, xrt_device *device,
                       xrt_buffer *const *args, int num_args,
                       xrt_buffer **outputs, int num_outputs,
                       const xrt_execute_options *options);

/* Enqueues an execution on one device and returns at once.  The outputs
 * are returned immediately, each with a ready event; *out_done (may be
 * NULL) completes when the execution has, with its status.  Arguments may
 * still be pending: the execution waits for them, and fails (poisoning its
 * outputs) if one of them failed.  Errors found before enqueueing (wrong
 * shapes, stale handles) are returned directly and produce no outputs.
 * Thread-safe. */
XRT_API xrt_status xrt_execute_async(xrt_executable *executable, xrt_device *device,
                             xrt_buffer *const *args, int num_args,
                             xrt_buffer **outputs, int num_outputs,
                             const xrt_execute_options *options,
                             xrt_event **out_done);

/* Runs the executable on every device of its launch at once, PJRT style:
 * argument_lists[i][j] is argument j for logical device i (replica-major:
 * i = replica * num_partitions + partition), output_lists[i] receives that
 * device's num_outputs results.  num_lists must equal num_replicas *
 * num_partitions of the executable.  Devices come from options->devices or
 * the executable's device assignment.  Asynchronous like
 * xrt_execute_async: *out_done (may be NULL) completes when every
 * participant has, with the first failure if any; a failing participant
 * fails the whole launch (collectives waiting on it are released with its
 * message).  Thread-safe. */
XRT_API xrt_status xrt_execute_multi(xrt_executable *executable,
                             xrt_buffer *const *const *argument_lists,
                             int num_lists, int num_args,
                             xrt_buffer **const *output_lists,
                             int num_outputs,
                             const xrt_execute_options *options,
                             xrt_event **out_done);

/* A launch id not used before on this client (for MPMD launches).  On a
 * client of several processes ids are counted alike in every process (as
 * long as every process asks as often, in the same order), so each
 * process can launch its own participants of one launch with
 * xrt_execute_async and options.launch_id, replica and partition.
 * Thread-safe. */
XRT_API uint64_t xrt_client_new_launch_id(xrt_client *client);
