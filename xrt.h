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
/* ==== begin src/include/parallel.h ==== */
/* ---- src/include/parallel.h, part of xrt.h: sharding specs, sharded arrays
 * and pmap, variables, several processes, host functions. */

/* ======================================================================
 * Sharding specs, sharded arrays and pmap
 *
 * A sharding spec says how one logical array is cut into per-device
 * pieces, exactly as JAX's pmap ShardingSpec does.  Per array dimension:
 * NoSharding (every piece has the whole dimension), Chunked([c0, c1, ...])
 * (the dimension is cut into c0*c1*... equal chunks; each c is one sharded
 * mesh axis, c0 outermost) or Unstacked(n) (the dimension, of size n, is
 * removed: piece k gets index k).  The sharded axes are numbered in the
 * order they appear over the dimensions.  Per mesh dimension:
 * ShardedAxis(i) (this mesh dimension walks sharded axis i) or
 * Replicated(r) (r devices hold the same pieces).  Devices are laid out
 * row-major over the mesh dimensions in the order given, so with the
 * replication last (the usual spec) copies of a piece sit on neighbouring
 * devices.
 * ==================================================================== */

#define XRT_MAX_CHUNKS 8     /* chunk factors of one Chunked dimension */
#define XRT_MAX_MESH_DIMS 16 /* mesh dimensions of one sharding spec */

/* How one dimension of an array is cut (JAX: NoSharding, Chunked,
 * Unstacked). */
typedef enum xrt_dim_sharding_kind {
  XRT_DIM_NO_SHARDING = 0,
  XRT_DIM_CHUNKED = 1,
  XRT_DIM_UNSTACKED = 2
} xrt_dim_sharding_kind;

/* The sharding of one array dimension: its kind and that kind's fields. */
typedef struct xrt_dim_sharding {
  xrt_dim_sharding_kind kind;
  int num_chunks;                   /* Chunked: how many factors */
  int64_t chunks[XRT_MAX_CHUNKS];   /* Chunked: the factors */
  int64_t size;                     /* Unstacked: the dimension's size */
} xrt_dim_sharding;

/* What one mesh dimension does (JAX: ShardedAxis, Replicated). */
typedef enum xrt_mesh_mapping_kind {
  XRT_MESH_SHARDED_AXIS = 0,
  XRT_MESH_REPLICATED = 1
} xrt_mesh_mapping_kind;

/* One mesh dimension: its kind and that kind's field. */
typedef struct xrt_mesh_mapping {
  xrt_mesh_mapping_kind kind;
  int axis;          /* ShardedAxis: the sharded axis */
  int64_t replicas;  /* Replicated: how many copies */
} xrt_mesh_mapping;

/* A sharding spec (JAX's pmap ShardingSpec, see above): rank dimension
 * shardings and num_mesh_dims mesh mappings.  A plain value; start from
 * xrt_sharding_spec_init. */
typedef struct xrt_sharding_spec {
  int rank;                                   /* of the logical array */
  xrt_dim_sharding dims[XRT_MAX_RANK];
  int num_mesh_dims;
  xrt_mesh_mapping mesh[XRT_MAX_MESH_DIMS];
} xrt_sharding_spec;

/* A spec of the given rank with every dimension NoSharding and no mesh
 * dimension (one device holds the whole array).  Thread-safe. */
XRT_API void xrt_sharding_spec_init(xrt_sharding_spec *spec, int rank);

/* Checks the spec against a logical shape: chunks divide their dimension,
 * Unstacked sizes match, every sharded axis is mapped exactly once.
 * XRT_INVALID_ARGUMENT with a message naming the dimension otherwise.
 * Thread-safe. */
XRT_API xrt_status xrt_sharding_spec_validate(const xrt_sharding_spec *spec,
                                      const xrt_shape *logical);

/* Number of devices the spec spans (the product of the mesh sizes), or -1
 * if the spec is malformed. Thread-safe. */
XRT_API int64_t xrt_sharding_spec_num_devices(const xrt_sharding_spec *spec);

/* The shape of each device's piece of an array of shape logical.
 * Thread-safe. */
XRT_API xrt_status xrt_sharding_spec_shard_shape(const xrt_sharding_spec *spec,
                                         const xrt_shape *logical,
                                         xrt_shape *out);

/* The logical shape whose pieces have shape shard.  Thread-safe. */
XRT_API xrt_status xrt_sharding_spec_logical_shape(const xrt_sharding_spec *spec,
                                           const xrt_shape *shard,
                                           xrt_shape *out);

/* Where device number `device` (0-based, in mesh order) reads its piece:
 * start[d] of every logical dimension (an Unstacked dimension gives its
 * index; the piece's extent there is 1 and the dimension is dropped).
 * Thread-safe. */
XRT_API xrt_status xrt_sharding_spec_shard_start(const xrt_sharding_spec *spec,
                                         const xrt_shape *logical,
                                         int64_t device, int64_t *start);

/* One logical array held as pieces on several devices (one buffer per
 * device, in mesh order), with its sharding spec.  Owned by the caller
 * that created it; released with xrt_sharded_array_release. */
typedef struct xrt_sharded_array xrt_sharded_array;

/* Splits a dense row-major host array into per-device buffers by spec:
 * devices[k] gets piece k (num_devices must equal the spec's device count;
 * a device may appear more than once).  The uploads run concurrently, one
 * per device; a piece contiguous in data is uploaded from it directly,
 * others are gathered once per distinct piece.  The caller owns
 * *out_array.  Synchronous.  Thread-safe. */
XRT_API xrt_status xrt_sharded_array_from_host(xrt_client *client,
                                       const xrt_shape *logical,
                                       const void *data,
                                       const xrt_sharding_spec *spec,
                                       xrt_device *const *devices,
                                       int num_devices,
                                       xrt_sharded_array **out_array);

/* Assembles the logical array into host memory (dst_bytes at least its
 * size); replicated pieces are read once.  Waits for pending pieces and
 * returns the first one's error if any failed.  Thread-safe. */
XRT_API xrt_status xrt_sharded_array_to_host(xrt_sharded_array *array, void *dst,
                                     size_t dst_bytes);

/* Wraps existing buffers (one per device, in mesh order, each of the
 * spec's piece shape) as a sharded array.  On success the array owns the
 * buffers (release them through the array only); on failure the caller
 * still does.  Thread-safe. */
XRT_API xrt_status xrt_sharded_array_create(xrt_client *client,
                                    const xrt_shape *logical,
                                    const xrt_sharding_spec *spec,
                                    xrt_buffer *const *buffers,
                                    int num_buffers,
                                    xrt_sharded_array **out_array);

/* xrt_sharded_array_create for an array whose devices may span processes
 * (see "Objects that span processes"): devices[k] is piece k's global
 * device, in mesh order, and buffers[k] its buffer, NULL where devices[k]
 * belongs to another process (this process's buffers must sit on their
 * devices[k]).  Ownership as xrt_sharded_array_create.  Thread-safe. */
XRT_API xrt_status xrt_sharded_array_create_global(
    xrt_client *client, const xrt_shape *logical,
    const xrt_sharding_spec *spec, xrt_device *const *devices,
    xrt_buffer *const *buffers, int num_pieces,
    xrt_sharded_array **out_array);

/* Releases the array and its buffers.  NULL is ignored, a stale handle is
 * reported. Not thread-safe with other calls on the same array. */
XRT_API xrt_status xrt_sharded_array_release(xrt_sharded_array *array);

/* Number of pieces (devices) of the array; -1 if invalid. Thread-safe. */
XRT_API int xrt_sharded_array_num_shards(const xrt_sharded_array *array);
/* Piece number index (borrowed: owned by the array, do not release it), or
 * NULL with XRT_OUT_OF_RANGE / XRT_INVALID_ARGUMENT in xrt_last_error()
 * (XRT_FAILED_PRECONDITION: the piece is held by another process).
 * Thread-safe. */
XRT_API xrt_buffer *xrt_sharded_array_shard(const xrt_sharded_array *array,
                                    int index);
/* The logical (whole-array) shape, copied into *out.  XRT_INVALID_ARGUMENT
 * for an invalid array or NULL out.  Thread-safe. */
XRT_API xrt_status xrt_sharded_array_shape(const xrt_sharded_array *array,
                                   xrt_shape *out);
/* The array's sharding spec, copied into *out.  XRT_INVALID_ARGUMENT for
 * an invalid array or NULL out.  Thread-safe. */
XRT_API xrt_status xrt_sharded_array_spec(const xrt_sharded_array *array,
                                  xrt_sharding_spec *out);

/* Runs the executable once per shard of the arguments (every argument
 * spans the same devices in the same order; their count must be the
 * executable's num_replicas * num_partitions) and returns one sharded
 * array per output (options->output_specs, or a new leading dimension
 * Unstacked over the devices).  Logical id i runs on the arguments' shard
 * i device: options->devices, if given, must list the same devices; with
 * no argument the devices are options->devices or the executable's
 * assignment.  An output spec must span the launch's device count and
 * have pieces of the output's per-device shape.  Asynchronous like
 * xrt_execute_multi; the caller owns the outputs.  Thread-safe. */
XRT_API xrt_status xrt_execute_sharded(xrt_executable *executable,
                               xrt_sharded_array *const *args, int num_args,
                               xrt_sharded_array **outputs, int num_outputs,
                               const xrt_execute_options *options,
                               xrt_event **out_done);

/* ---- pmap: compile once per argument signature ---- */

/* A function mapped over devices, compiled once per argument signature
 * (JAX's pmap); created with xrt_pmap_create, released with
 * xrt_pmap_release. */
typedef struct xrt_pmap xrt_pmap;

/* Produces the program text for one signature (the per-device shard
 * shapes of the arguments), as JAX traces a function per signature.  Set
 * *out_text to memory from malloc (xrt frees it) and *out_len; a non-OK
 * return is remembered for the signature like a compile error. */
typedef xrt_status (*xrt_pmap_source_fn)(void *user,
                                         const xrt_shape *shard_shapes,
                                         int num_args, char **out_text,
                                         size_t *out_len);

/* Options of xrt_pmap_create; fill with xrt_pmap_options_init. */
typedef struct xrt_pmap_options {
  /* The program: either fixed text (text, len; compiled once per
   * signature, so a signature that does not match its entry fails) or a
   * source callback called once per new signature. */
  const char *text;
  size_t len;
  xrt_pmap_source_fn source;
  void *source_user;
  xrt_compile_options compile; /* entry, filename... */
} xrt_pmap_options;

/* Fills *options with defaults. Thread-safe. */
XRT_API void xrt_pmap_options_init(xrt_pmap_options *options);

/* Creates a pmap over the client.  The caller owns *out_pmap.
 * Thread-safe. */
XRT_API xrt_status xrt_pmap_create(xrt_client *client, const xrt_pmap_options *options,
                           xrt_pmap **out_pmap);

/* Calls the pmap on sharded arguments (at least one: they give the
 * devices): compiles for their signature on first use and runs like
 * xrt_execute_sharded.  The signature is the arguments' piece shapes and
 * their device list; it is compiled with num_replicas = the number of
 * devices and device_assignment = those devices.  Concurrent callers with
 * the same signature wait for one compilation; a failure (of the source
 * callback, the compile, or a program whose entry does not take the
 * pieces) is remembered and returned to every later caller of that
 * signature.  Thread-safe. */
XRT_API xrt_status xrt_pmap_call(xrt_pmap *pmap, xrt_sharded_array *const *args,
                         int num_args, xrt_sharded_array **outputs,
                         int num_outputs, const xrt_execute_options *options,
                         xrt_event **out_done);

/* Number of distinct signatures compiled (or failed) so far. Thread-safe. */
XRT_API int xrt_pmap_num_compiled(const xrt_pmap *pmap);

/* Releases the pmap and its executables (pending executions finish).
 * NULL and stale handles are ignored; it may come after the release of
 * the pmap's client.  Not thread-safe with calls on the same pmap. */
XRT_API void xrt_pmap_release(xrt_pmap *pmap);

/* ======================================================================
 * Variables
 *
 * A variable is one named logical array that lives on a set of devices
 * under a sharding spec and persists between executions (a model's
 * parameters).  Its format is (spec, device list); its format key is a
 * stable 64-bit fingerprint of that format and the logical shape: equal
 * keys mean identical layouts.  A reshard moves variables to a new format
 * by device-to-device copies of only the pieces that must move, and is
 * atomic over all the variables of the call.  Each variable has a lock:
 * executes and reshards of the same variable are serialised, those of
 * different variables run in parallel.  Variables need distinct devices
 * in their device lists.
 * ==================================================================== */

/* A target layout: spec over devices[0..num_devices) in mesh order. */
typedef struct xrt_variable_format {
  const xrt_sharding_spec *spec; /* read during the call only */
  xrt_device *const *devices;    /* distinct, in mesh order */
  int num_devices;               /* the spec's device count */
} xrt_variable_format;

/* The format key a variable of this shape would have in this format (0 if
 * the format is invalid for the shape).  Thread-safe. */
XRT_API uint64_t xrt_variable_format_key_of(const xrt_shape *logical,
                                    const xrt_variable_format *format);

/* Creates a variable from a dense row-major host array (data must hold
 * xrt_shape_bytes(logical) bytes).  name is copied (for messages and
 * traces).  The caller owns *out_variable. Thread-safe. */
XRT_API xrt_status xrt_variable_create(xrt_client *client, const char *name,
                               const xrt_shape *logical, const void *data,
                               const xrt_variable_format *format,
                               xrt_variable **out_variable);

/* Creates a variable that takes over a sharded array's pieces (no copy):
 * on success the array handle is consumed (released); on failure the
 * caller still owns it.  Thread-safe. */
XRT_API xrt_status xrt_variable_from_array(const char *name, xrt_sharded_array *array,
                                   xrt_variable **out_variable);

/* Releases the variable and its device memory, after any execute or
 * reshard of it in progress.  NULL is ignored, a stale handle is reported.
 * Thread-safe. */
XRT_API xrt_status xrt_variable_release(xrt_variable *variable);

/* Accessors (borrowed results; consistent snapshots under the variable's
 * lock).  Thread-safe. */
XRT_API const char *xrt_variable_name(const xrt_variable *variable);
/* The logical shape, copied into *out.  XRT_INVALID_ARGUMENT for an
 * invalid variable or NULL out.  Thread-safe. */
XRT_API xrt_status xrt_variable_shape(const xrt_variable *variable, xrt_shape *out);
/* The current sharding spec (it changes with reshards), copied into
 * *out.  XRT_INVALID_ARGUMENT for an invalid variable or NULL out.
 * Thread-safe. */
XRT_API xrt_status xrt_variable_spec(const xrt_variable *variable,
                             xrt_sharding_spec *out);
/* Number of devices of the current format; -1 if invalid.  Thread-safe. */
XRT_API int xrt_variable_num_devices(const xrt_variable *variable);
/* Device number index of the current format, in mesh order (borrowed
 * from the client), or NULL with XRT_OUT_OF_RANGE / XRT_INVALID_ARGUMENT
 * in xrt_last_error().  Thread-safe. */
XRT_API xrt_device *xrt_variable_device(const xrt_variable *variable, int index);
XRT_API uint64_t xrt_variable_format_key(const xrt_variable *variable); /* 0: invalid */

/* Assembles the logical array into host memory (dst_bytes at least its
 * size). Thread-safe. */
XRT_API xrt_status xrt_variable_to_host(xrt_variable *variable, void *dst,
                                size_t dst_bytes);

/* Options of xrt_variables_reshard; fill with xrt_reshard_options_init. */
typedef struct xrt_reshard_options {
  /* Move the data through host memory instead of device-to-device
   * copies (for plugins whose devices cannot copy to each other). */
  bool via_host;
} xrt_reshard_options;

/* Fills *options with defaults. Thread-safe. */
XRT_API void xrt_reshard_options_init(xrt_reshard_options *options);

/* Moves variables[i] to formats[i], for i < count, as one atomic step:
 * either every variable ends in its new format with its values, or every
 * one keeps its old format and data (an invalid format, memory
 * exhaustion, a device fault: the first error is returned).  A variable
 * already in its target format costs nothing (no allocation, no copy);
 * a call where all are is a few hundred nanoseconds.  Pieces that stay on
 * their device in the same place are kept, not copied.  When a device
 * cannot hold the old and new pieces at once, old pieces whose data has
 * already been copied everywhere it is needed are freed early; when even
 * that cannot make room, the call fails with XRT_RESOURCE_EXHAUSTED and
 * nothing changes.  A variable may appear once per call.  options may be
 * NULL.  On a client of several processes (see "Objects that span
 * processes") the call is collective, pieces move between processes
 * through host memory, no piece is freed early (new pieces that do not
 * fit beside the old ones fail the call with XRT_RESOURCE_EXHAUSTED in
 * every process, nothing changed) and a call where all variables are in
 * their target format still costs one exchange between the processes.
 * Synchronous.  Thread-safe. */
XRT_API xrt_status xrt_variables_reshard(xrt_variable *const *variables,
                                 const xrt_variable_format *formats, int count,
                                 const xrt_reshard_options *options);

/* One argument of xrt_execute_variables: exactly one of the two set. */
typedef struct xrt_variable_arg {
  xrt_variable *variable;    /* a variable argument, or NULL */
  xrt_sharded_array *array;  /* a sharded array argument, or NULL */
} xrt_variable_arg;

/* Runs the executable like xrt_execute_sharded over arguments that are
 * variables or sharded arrays (all spanning the same devices in the same
 * order).  updates[k] (updates may be NULL: none) is the index of a
 * variable argument that output k replaces (donation: the variable takes
 * over the output's pieces and keeps its format; the output's per-device
 * shape must equal the variable's piece shape), or -1: output k is
 * returned in outputs[k] as a new sharded array (outputs[k] is NULL for
 * updating outputs).  Waits for the execution.  On failure no variable
 * changes and no output is returned.  The variables involved are locked
 * for the call (in a global order, so concurrent calls cannot deadlock).
 * Thread-safe. */
XRT_API xrt_status xrt_execute_variables(xrt_executable *executable,
                                 const xrt_variable_arg *args, int num_args,
                                 const int *updates,
                                 xrt_sharded_array **outputs, int num_outputs,
                                 const xrt_execute_options *options);

/* Writes the whole logical array as a .npy file (as xrt_buffer_to_npy),
 * atomically: to a temporary file beside path, renamed over it only when
 * complete.  Thread-safe. */
XRT_API xrt_status xrt_variable_save(xrt_variable *variable, const char *path);

/* Replaces the variable's values with a .npy file's (same dtype and
 * shape, else XRT_INVALID_ARGUMENT naming both); the format is kept.  Any
 * error (missing, truncated, not .npy, other type or shape, device
 * failure) leaves the variable unchanged.  Thread-safe. */
XRT_API xrt_status xrt_variable_load(xrt_variable *variable, const char *path);

/* Creates a variable from a .npy file in the given format.  The caller
 * owns *out_variable. Thread-safe. */
XRT_API xrt_status xrt_variable_create_from_npy(xrt_client *client, const char *name,
                                        const char *path,
                                        const xrt_variable_format *format,
                                        xrt_variable **out_variable);

/* ======================================================================
 * Multi-process (xrt_mpi.c)
 *
 * Several processes (one per host, as JAX runs after
 * jax.distributed.initialize) form one xrt system.  xrt_mpi.c, built in
 * with `make XRT_MPI=1` (CC=mpicc, defines XRT_HAVE_MPI), runs it over MPI;
 * without it xrt stays single-process and needs no MPI.  The core itself
 * talks to other processes only through an xrt_transport (below), which
 * xrt_mpi_init installs.
 *
 * Order: xrt_mpi_init in every process, then every process creates its
 * client with the same options.  A client whose options leave
 * topology.process_count at -1 (the default) joins the system: creating
 * it is collective (every process must create one, in the same order),
 * and it sees the devices of every process (xrt_client_global_device).
 * Give topology.process_count = 1 for a client of this process alone.
 *
 * One global device set: with N processes of D devices each, global id
 * p * D + i is device i of process p.  A process addresses only its own:
 * another process's device fails every call that would touch it with
 * XRT_INVALID_ARGUMENT.  An executable compiled for more participants
 * than this process has devices (num_replicas * num_partitions up to
 * N * D; device_assignment in global ids) is run by every process with
 * xrt_execute_multi: each process passes the lists of all participants,
 * NULL for those on other processes, and runs its own (or participant by
 * participant, MPMD-style: xrt_execute_async with a launch id of
 * xrt_client_new_launch_id, each process its own).  Every process must
 * launch the same executables in the same order (launch ids are counted
 * per process and must agree).  all_reduce across processes reduces among
 * each process's devices first, then across processes (in process order:
 * every process gets the same bits); the other collectives fetch the
 * operands of other processes' participants and compute what one process
 * would.
 *
 * Objects that span processes.  A sharded array or variable may be laid
 * out over global devices of several processes: each process holds only
 * the pieces on its own devices (xrt_sharded_array_shard gives NULL with
 * XRT_FAILED_PRECONDITION for a piece held by another process, and
 * xrt_variable_device gives the other process's device).  Such objects are
 * made and used SPMD-style: every process of the client makes the same
 * calls on them, in the same order, with the same arguments (shapes, specs
 * and global device lists), as every JAX process runs the same program.
 * Calls that need other processes are collective over all processes of
 * the client (a process that holds no piece still takes part):
 * xrt_sharded_array_to_host and xrt_variable_to_host (every process
 * receives the whole array), xrt_execute_sharded, xrt_pmap_call and
 * xrt_execute_variables (each process runs its own participants; every
 * process must call, even one that runs none), xrt_variables_reshard
 * (pieces move between processes; the processes agree on the outcome
 * before any variable changes, so the call stays all-or-nothing across
 * processes: every process returns an error, and no variable changes
 * anywhere, when any process fails), xrt_variable_save (process 0 writes
 * the file) and xrt_variable_load (every process reads the file).
 * xrt_sharded_array_from_host, xrt_sharded_array_create and
 * xrt_variable_create read or take this process's pieces only (data is
 * the whole array in every process) and need no other process.
 * Collective calls of one client must be issued in the same order in
 * every process; a peer that does not take part makes them fail with
 * XRT_DEADLINE_EXCEEDED after the timeout.
 *
 * A persistent compile cache (client options.cache_store) works across
 * processes: the key does not depend on the process index, every process
 * reads the store, and only process 0 writes it (the others log "not
 * written" under XRT_LOG=info,cache); a process that misses compiles on
 * its own, without waiting for another.
 *
 * Failure: MPI errors are returned (xrt's communicator, a duplicate of the
 * given one, has MPI_ERRORS_RETURN); a peer that dies or stalls makes a
 * collective fail with XRT_DEADLINE_EXCEEDED after timeout_ms.
 * ==================================================================== */

/* One message of an exchange: bytes to or from process peer. */
typedef struct xrt_transport_msg {
  int peer;     /* the other process's index */
  void *data;   /* bytes to send, or room for those received */
  size_t bytes; /* exactly what the peer sends or expects */
} xrt_transport_msg;

/* How processes reach each other (xrt_mpi.c makes one over MPI).  Calls
 * come from any thread, concurrently; err receives a message on failure. */
typedef struct xrt_transport {
  size_t struct_size;
  void *self; /* passed back to every call */
  /* This process's place; fields resolved (no -1). */
  xrt_topology topology;
  /* Every process contributes bytes at in; out receives
   * process_count * bytes, process order.  Collective. */
  xrt_status (*allgather)(void *self, const void *in, void *out,
                          size_t bytes, char *err, size_t err_cap);
  /* Posts every send and receive, then waits for all of them (at most the
   * transport's timeout: XRT_DEADLINE_EXCEEDED).  tag identifies the
   * exchange: a receive matches only a send of the same tag from its
   * peer. */
  xrt_status (*exchange)(void *self, uint64_t tag,
                         const xrt_transport_msg *sends, int num_sends,
                         const xrt_transport_msg *recvs, int num_recvs,
                         char *err, size_t err_cap);
} xrt_transport;

/* Sets this thread's last error (xrt_last_error) to the formatted message
 * and returns code: for transports and other code built outside the core.
 * Thread-safe. */
XRT_API xrt_status xrt_report_error(xrt_status code, const char *fmt, ...)
#if defined(__GNUC__)
    XRT_PRINTF_FORMAT(2, 3)
#endif
    ;

/* Installs the transport that clients created afterwards join through
 * (NULL: none; clients alive keep the one they joined with, which must
 * outlive them).  Thread-safe. */
XRT_API xrt_status xrt_transport_install(const xrt_transport *transport);

/* Options of xrt_mpi_init; fill with xrt_mpi_options_init. */
typedef struct xrt_mpi_options {
  /* A pointer to the MPI_Comm to use (xrt duplicates it); NULL:
   * MPI_COMM_WORLD.  A void pointer so that xrt.h needs no mpi.h. */
  void *comm;
  /* -1 fields come from the environment variables of xrt_topology when
   * they are set, else from the communicator (ranks; hosts and local
   * ranks from MPI_Comm_split_type(MPI_COMM_TYPE_SHARED)).  Given fields
   * must agree with the communicator's size and rank. */
  xrt_topology topology;
  /* A collective waiting for another process gives up after this many
   * milliseconds (default 60000; 0: never). */
  int64_t timeout_ms;
} xrt_mpi_options;

/* Fills *options with defaults. Thread-safe. */
XRT_API void xrt_mpi_options_init(xrt_mpi_options *options);

/* Joins the MPI job (MPI_Init_thread when MPI is not initialized yet; the
 * program's own MPI must provide at least MPI_THREAD_SERIALIZED) and
 * installs its transport.  Collective over the communicator.
 * XRT_UNIMPLEMENTED when xrt was built without XRT_MPI=1;
 * XRT_FAILED_PRECONDITION when already initialized; XRT_INVALID_ARGUMENT
 * for a bad option or a topology the communicator contradicts (MPI, once
 * started, stays initialized: the call may be retried).  Not
 * thread-safe. */
XRT_API xrt_status xrt_mpi_init(const xrt_mpi_options *options);

/* Uninstalls the transport and frees the communicator (MPI_Finalize only
 * if xrt_mpi_init called MPI_Init).  Call after releasing every client
 * that joined.  Collective.  Not thread-safe. */
XRT_API xrt_status xrt_mpi_finalize(void);

/* Changes timeout_ms (see xrt_mpi_options) for the waits that start
 * afterwards; this process only.  XRT_FAILED_PRECONDITION before
 * xrt_mpi_init, XRT_INVALID_ARGUMENT if negative. Thread-safe. */
XRT_API xrt_status xrt_mpi_set_timeout(int64_t timeout_ms);

/* The topology xrt_mpi_init resolved.  XRT_FAILED_PRECONDITION before
 * xrt_mpi_init. Thread-safe. */
XRT_API xrt_status xrt_mpi_topology(xrt_topology *out);

/* Devices of every process of the client's system (its own count for a
 * client of one process); -1 for an invalid client. Thread-safe. */
XRT_API int xrt_client_global_device_count(const xrt_client *client);

/* The device of global id gid (borrowed): this process's own devices are
 * the handles xrt_client_device returns; others' can only be asked for
 * their ids.  NULL with XRT_OUT_OF_RANGE outside 0..count-1.
 * Thread-safe. */
XRT_API xrt_device *xrt_client_global_device(xrt_client *client, int gid);

/* Every process of the client's system contributes bytes at in; out
 * receives process_count * bytes, in process order (on a client of one
 * process: a copy of in).  Collective (see "Objects that span
 * processes").  XRT_DEADLINE_EXCEEDED when a peer does not take part in
 * time.  Thread-safe. */
XRT_API xrt_status xrt_client_process_allgather(xrt_client *client,
                                                const void *in, void *out,
                                                size_t bytes);

/* Tags of xrt_client_process_exchange are below this. */
#define XRT_USER_TAG_LIMIT ((uint64_t)1 << 48)

/* Host messages between this process and others of the client's system:
 * posts the sends and receives, then waits for all of them (at most the
 * transport's timeout: XRT_DEADLINE_EXCEEDED).  tag, below
 * XRT_USER_TAG_LIMIT, identifies the exchange: a receive matches only a
 * send of the same tag from its peer; xrt's own traffic never uses these
 * tags.  XRT_FAILED_PRECONDITION on a client of one process.
 * Thread-safe. */
XRT_API xrt_status xrt_client_process_exchange(xrt_client *client,
                                               uint64_t tag,
                                               const xrt_transport_msg *sends,
                                               int num_sends,
                                               const xrt_transport_msg *recvs,
                                               int num_recvs);

/* A device's global id (-1 if invalid). Thread-safe. */
XRT_API int xrt_device_global_id(const xrt_device *device);
/* The process a device belongs to (-1 if invalid). Thread-safe. */
XRT_API int xrt_device_process_index(const xrt_device *device);
/* Whether this process can use the device (1), not (0), -1 if invalid.
 * Thread-safe. */
XRT_API int xrt_device_is_addressable(const xrt_device *device);

/* ======================================================================
 * Host functions (targets of stablehlo.custom_call)
 * ==================================================================== */

struct xrt_ir_op;

/* One operand or result of a host call: dense row-major host memory.  A
 * token operand or result of a custom_call has no bytes: its shape is all
 * zero (dtype XRT_DTYPE_INVALID, rank 0) and data may be NULL. */
typedef struct xrt_host_tensor {
  xrt_shape shape;  /* dense row-major */
  void *data;       /* the elements (xrt_shape_bytes(&shape) of them) */
  size_t bytes;     /* size of data */
} xrt_host_tensor;

/* What a host function receives for one call: the target name, the op
 * (attributes, location), the inputs and the preallocated outputs, and a
 * buffer for an error message.  Valid during the call only. */
typedef struct xrt_host_call {
  const char *target;             /* call_target_name */
  const struct xrt_ir_op *op;     /* the op, with its attributes and loc */
  int num_inputs;
  const xrt_host_tensor *inputs;
  int num_outputs;
  xrt_host_tensor *outputs;       /* preallocated; the function fills them */
  char *error;                    /* message buffer for failures */
  size_t error_cap;
} xrt_host_call;

/* A host function returns XRT_OK, or a code with a message written into
 * call->error (use xrt_host_call_fail).  It runs on the thread that
 * executes the program, possibly on several threads at once. */
typedef xrt_status (*xrt_host_fn)(void *user, xrt_host_call *call);

/* Registers fn as the target name for custom calls compiled by this client
 * afterwards. Registering a name again replaces it. Thread-safe. */
XRT_API xrt_status xrt_client_register_host_function(xrt_client *client,
                                             const char *target,
                                             xrt_host_fn fn, void *user);

/* Writes a printf-style message into call->error and returns code (an OK
 * code becomes XRT_INTERNAL: a failure must not look like success).
 * Thread-safe. */
XRT_API xrt_status xrt_host_call_fail(xrt_host_call *call, xrt_status code,
                              const char *fmt, ...)
#if defined(__GNUC__)
    XRT_PRINTF_FORMAT(3, 4)
#endif
    ;
/* ==== end src/include/parallel.h ==== */
/* ==== begin src/include/plugin.h ==== */
/* ---- src/include/plugin.h, part of xrt.h: the plugin interface and the IR that
 * plugins receive (the plugin ABI). */

/* ======================================================================
 * Plugin interface and IR (the plugin ABI: stable from version 1.0)
 *
 * A device plugin receives programs already parsed and verified, as the
 * read-only structures below.  Values are numbered per function; an op's
 * operands and results are indices into xrt_ir_func.value_types.  Regions
 * have a single block whose last op is its terminator.
 * ==================================================================== */

/* X-macro of every op the parser knows: X(ENUM, "name"). */
#define XRT_OPCODES(X)                                                        \
  X(ABS, "stablehlo.abs")                                                     \
  X(ADD, "stablehlo.add")                                                     \
  X(AFTER_ALL, "stablehlo.after_all")                                         \
  X(ALL_GATHER, "stablehlo.all_gather")                                       \
  X(ALL_REDUCE, "stablehlo.all_reduce")                                       \
  X(ALL_TO_ALL, "stablehlo.all_to_all")                                       \
  X(AND, "stablehlo.and")                                                     \
  X(ATAN2, "stablehlo.atan2")                                                 \
  X(BATCH_NORM_GRAD, "stablehlo.batch_norm_grad")                             \
  X(BATCH_NORM_INFERENCE, "stablehlo.batch_norm_inference")                   \
  X(BATCH_NORM_TRAINING, "stablehlo.batch_norm_training")                     \
  X(BITCAST_CONVERT, "stablehlo.bitcast_convert")                             \
  X(BROADCAST, "stablehlo.broadcast")                                         \
  X(BROADCAST_IN_DIM, "stablehlo.broadcast_in_dim")                           \
  X(CASE, "stablehlo.case")                                                   \
  X(CBRT, "stablehlo.cbrt")                                                   \
  X(CEIL, "stablehlo.ceil")                                                   \
  X(CHOLESKY, "stablehlo.cholesky")                                           \
  X(CLAMP, "stablehlo.clamp")                                                 \
  X(COLLECTIVE_BROADCAST, "stablehlo.collective_broadcast")                   \
  X(COLLECTIVE_PERMUTE, "stablehlo.collective_permute")                       \
  X(COLLECTIVE_REDUCE, "stablehlo.collective_reduce")                         \
  X(COMPARE, "stablehlo.compare")                                             \
  X(COMPLEX, "stablehlo.complex")                                             \
  X(COMPOSITE, "stablehlo.composite")                                         \
  X(CONCATENATE, "stablehlo.concatenate")                                     \
  X(CONSTANT, "stablehlo.constant")                                           \
  X(CONVERT, "stablehlo.convert")                                             \
  X(CONVOLUTION, "stablehlo.convolution")                                     \
  X(COSINE, "stablehlo.cosine")                                               \
  X(COUNT_LEADING_ZEROS, "stablehlo.count_leading_zeros")                     \
  X(CUSTOM_CALL, "stablehlo.custom_call")                                     \
  X(DIVIDE, "stablehlo.divide")                                               \
  X(DOT, "stablehlo.dot")                                                     \
  X(DOT_GENERAL, "stablehlo.dot_general")                                     \
  X(DYNAMIC_BROADCAST_IN_DIM, "stablehlo.dynamic_broadcast_in_dim")           \
  X(DYNAMIC_CONV, "stablehlo.dynamic_conv")                                   \
  X(DYNAMIC_GATHER, "stablehlo.dynamic_gather")                               \
  X(DYNAMIC_IOTA, "stablehlo.dynamic_iota")                                   \
  X(DYNAMIC_PAD, "stablehlo.dynamic_pad")                                     \
  X(DYNAMIC_RESHAPE, "stablehlo.dynamic_reshape")                             \
  X(DYNAMIC_SLICE, "stablehlo.dynamic_slice")                                 \
  X(DYNAMIC_UPDATE_SLICE, "stablehlo.dynamic_update_slice")                   \
  X(EXPONENTIAL, "stablehlo.exponential")                                     \
  X(EXPONENTIAL_MINUS_ONE, "stablehlo.exponential_minus_one")                 \
  X(FFT, "stablehlo.fft")                                                     \
  X(FLOOR, "stablehlo.floor")                                                 \
  X(GATHER, "stablehlo.gather")                                               \
  X(GET_DIMENSION_SIZE, "stablehlo.get_dimension_size")                       \
  X(GET_TUPLE_ELEMENT, "stablehlo.get_tuple_element")                         \
  X(IF, "stablehlo.if")                                                       \
  X(IMAG, "stablehlo.imag")                                                   \
  X(INFEED, "stablehlo.infeed")                                               \
  X(IOTA, "stablehlo.iota")                                                   \
  X(IS_FINITE, "stablehlo.is_finite")                                         \
  X(LOG, "stablehlo.log")                                                     \
  X(LOG_PLUS_ONE, "stablehlo.log_plus_one")                                   \
  X(LOGISTIC, "stablehlo.logistic")                                           \
  X(MAP, "stablehlo.map")                                                     \
  X(MAXIMUM, "stablehlo.maximum")                                             \
  X(MINIMUM, "stablehlo.minimum")                                             \
  X(MULTIPLY, "stablehlo.multiply")                                           \
  X(NEGATE, "stablehlo.negate")                                               \
  X(NOT, "stablehlo.not")                                                     \
  X(OPTIMIZATION_BARRIER, "stablehlo.optimization_barrier")                   \
  X(OR, "stablehlo.or")                                                       \
  X(OUTFEED, "stablehlo.outfeed")                                             \
  X(PAD, "stablehlo.pad")                                                     \
  X(PARTITION_ID, "stablehlo.partition_id")                                   \
  X(POPCNT, "stablehlo.popcnt")                                               \
  X(POWER, "stablehlo.power")                                                 \
  X(REAL, "stablehlo.real")                                                   \
  X(RECV, "stablehlo.recv")                                                   \
  X(REDUCE, "stablehlo.reduce")                                               \
  X(REDUCE_PRECISION, "stablehlo.reduce_precision")                           \
  X(REDUCE_SCATTER, "stablehlo.reduce_scatter")                               \
  X(REDUCE_WINDOW, "stablehlo.reduce_window")                                 \
  X(REMAINDER, "stablehlo.remainder")                                         \
  X(REPLICA_ID, "stablehlo.replica_id")                                       \
  X(RESHAPE, "stablehlo.reshape")                                             \
  X(RETURN, "stablehlo.return")                                               \
  X(REVERSE, "stablehlo.reverse")                                             \
  X(RNG, "stablehlo.rng")                                                     \
  X(RNG_BIT_GENERATOR, "stablehlo.rng_bit_generator")                         \
  X(ROUND_NEAREST_AFZ, "stablehlo.round_nearest_afz")                         \
  X(ROUND_NEAREST_EVEN, "stablehlo.round_nearest_even")                       \
  X(RSQRT, "stablehlo.rsqrt")                                                 \
  X(SCATTER, "stablehlo.scatter")                                             \
  X(SELECT, "stablehlo.select")                                               \
  X(SELECT_AND_SCATTER, "stablehlo.select_and_scatter")                       \
  X(SEND, "stablehlo.send")                                                   \
  X(SHIFT_LEFT, "stablehlo.shift_left")                                       \
  X(SHIFT_RIGHT_ARITHMETIC, "stablehlo.shift_right_arithmetic")               \
  X(SHIFT_RIGHT_LOGICAL, "stablehlo.shift_right_logical")                     \
  X(SIGN, "stablehlo.sign")                                                   \
  X(SINE, "stablehlo.sine")                                                   \
  X(SLICE, "stablehlo.slice")                                                 \
  X(SORT, "stablehlo.sort")                                                   \
  X(SQRT, "stablehlo.sqrt")                                                   \
  X(SUBTRACT, "stablehlo.subtract")                                           \
  X(TAN, "stablehlo.tan")                                                     \
  X(TANH, "stablehlo.tanh")                                                   \
  X(TRANSPOSE, "stablehlo.transpose")                                         \
  X(TRIANGULAR_SOLVE, "stablehlo.triangular_solve")                           \
  X(TUPLE, "stablehlo.tuple")                                                 \
  X(UNIFORM_DEQUANTIZE, "stablehlo.uniform_dequantize")                       \
  X(UNIFORM_QUANTIZE, "stablehlo.uniform_quantize")                           \
  X(WHILE, "stablehlo.while")                                                 \
  X(XOR, "stablehlo.xor")                                                     \
  X(FUNC_CALL, "func.call")                                                   \
  X(FUNC_RETURN, "func.return")                                               \
  X(CHLO_MULHI, "chlo.mulhi")                                                 \
  X(CHLO_RAGGED_DOT, "chlo.ragged_dot")                                       \
  X(CHLO_SCAN, "chlo.scan")                                                   \
  X(CHLO_ACOS, "chlo.acos")                                                   \
  X(CHLO_ACOSH, "chlo.acosh")                                                 \
  X(CHLO_ASIN, "chlo.asin")                                                   \
  X(CHLO_ASINH, "chlo.asinh")                                                 \
  X(CHLO_ATAN, "chlo.atan")                                                   \
  X(CHLO_ATANH, "chlo.atanh")                                                 \
  X(CHLO_BESSEL_I1E, "chlo.bessel_i1e")                                       \
  X(CHLO_CONJ, "chlo.conj")                                                   \
  X(CHLO_CONSTANT, "chlo.constant")                                           \
  X(CHLO_CONSTANT_LIKE, "chlo.constant_like")                                 \
  X(CHLO_COSH, "chlo.cosh")                                                   \
  X(CHLO_DIGAMMA, "chlo.digamma")                                             \
  X(CHLO_ERF, "chlo.erf")                                                     \
  X(CHLO_ERFC, "chlo.erfc")                                                   \
  X(CHLO_ERF_INV, "chlo.erf_inv")                                             \
  X(CHLO_IS_INF, "chlo.is_inf")                                               \
  X(CHLO_IS_NEG_INF, "chlo.is_neg_inf")                                       \
  X(CHLO_IS_POS_INF, "chlo.is_pos_inf")                                       \
  X(CHLO_LGAMMA, "chlo.lgamma")                                               \
  X(CHLO_NEXT_AFTER, "chlo.next_after")                                       \
  X(CHLO_POLYGAMMA, "chlo.polygamma")                                         \
  X(CHLO_SINH, "chlo.sinh")                                                   \
  X(CHLO_TAN, "chlo.tan")                                                     \
  X(CHLO_TOP_K, "chlo.top_k")                                                 \
  X(CHLO_ZETA, "chlo.zeta")                                                   \
  X(CHLO_BROADCAST_ADD, "chlo.broadcast_add")                                 \
  X(CHLO_BROADCAST_AND, "chlo.broadcast_and")                                 \
  X(CHLO_BROADCAST_ATAN2, "chlo.broadcast_atan2")                             \
  X(CHLO_BROADCAST_COMPARE, "chlo.broadcast_compare")                         \
  X(CHLO_BROADCAST_COMPLEX, "chlo.broadcast_complex")                         \
  X(CHLO_BROADCAST_DIVIDE, "chlo.broadcast_divide")                           \
  X(CHLO_BROADCAST_MAXIMUM, "chlo.broadcast_maximum")                         \
  X(CHLO_BROADCAST_MINIMUM, "chlo.broadcast_minimum")                         \
  X(CHLO_BROADCAST_MULTIPLY, "chlo.broadcast_multiply")                       \
  X(CHLO_BROADCAST_NEXT_AFTER, "chlo.broadcast_next_after")                   \
  X(CHLO_BROADCAST_OR, "chlo.broadcast_or")                                   \
  X(CHLO_BROADCAST_POLYGAMMA, "chlo.broadcast_polygamma")                     \
  X(CHLO_BROADCAST_POWER, "chlo.broadcast_power")                             \
  X(CHLO_BROADCAST_REMAINDER, "chlo.broadcast_remainder")                     \
  X(CHLO_BROADCAST_SELECT, "chlo.broadcast_select")                           \
  X(CHLO_BROADCAST_SHIFT_LEFT, "chlo.broadcast_shift_left")                   \
  X(CHLO_BROADCAST_SHIFT_RIGHT_ARITHMETIC,                                    \
    "chlo.broadcast_shift_right_arithmetic")                                  \
  X(CHLO_BROADCAST_SHIFT_RIGHT_LOGICAL, "chlo.broadcast_shift_right_logical") \
  X(CHLO_BROADCAST_SUBTRACT, "chlo.broadcast_subtract")                       \
  X(CHLO_BROADCAST_XOR, "chlo.broadcast_xor")                                 \
  X(CHLO_BROADCAST_ZETA, "chlo.broadcast_zeta")                             \
  X(REAL_DYNAMIC_SLICE, "stablehlo.real_dynamic_slice")

/* Every op the parser knows: XRT_OP_ADD for "stablehlo.add", and so on
 * (XRT_OPCODES lists them with their names). */
typedef enum xrt_opcode {
  XRT_OP_INVALID = 0,
#define XRT__OPCODE_ENUM(e, s) XRT_OP_##e,
  XRT_OPCODES(XRT__OPCODE_ENUM)
#undef XRT__OPCODE_ENUM
  XRT_OP_COUNT
} xrt_opcode;

/* The op's MLIR name ("stablehlo.add"); "invalid" if out of range.
 * Thread-safe. */
XRT_API const char *xrt_opcode_name(xrt_opcode op);

/* A source location: file (borrowed from the program), 1-based line/col. */
typedef struct xrt_ir_loc {
  const char *file;
  int32_t line;
  int32_t col;
} xrt_ir_loc;

/* What an xrt_ir_type is. */
typedef enum xrt_ir_type_kind {
  XRT_TYPE_TENSOR = 0,
  XRT_TYPE_TUPLE = 1,
  XRT_TYPE_TOKEN = 2
} xrt_ir_type_kind;

/* Per-tensor or per-axis uniform quantization (!quant.uniform). */
typedef struct xrt_ir_quant {
  xrt_dtype storage;       /* i8, ... */
  xrt_dtype expressed;     /* f32, ... */
  int64_t storage_min, storage_max;
  int32_t axis;            /* -1 for per-tensor */
  int32_t num_scales;
  const double *scales;
  const int64_t *zero_points;
} xrt_ir_quant;

/* A value's type: a tensor (shape, maybe quantized), a tuple of types or
 * a token. */
typedef struct xrt_ir_type {
  uint8_t kind;            /* xrt_ir_type_kind */
  xrt_shape shape;         /* for tensors; dtype is the storage type */
  const xrt_ir_quant *quant; /* non-NULL for quantized element types */
  int32_t num_elems;       /* tuples */
  const struct xrt_ir_type *elems;
} xrt_ir_type;

/* A dense literal.  data holds the elements in buffer storage format
 * (see xrt_dtype); when splat is true it holds one element that stands for
 * every element of type. */
typedef struct xrt_ir_literal {
  xrt_ir_type type;
  const void *data;
  size_t bytes;
  bool splat;
} xrt_ir_literal;

/* What an xrt_ir_attr holds, and in which of its fields. */
typedef enum xrt_ir_attr_kind {
  XRT_ATTR_UNIT = 0,    /* present, no value */
  XRT_ATTR_INT = 1,     /* i */
  XRT_ATTR_FLOAT = 2,   /* f */
  XRT_ATTR_BOOL = 3,    /* i (0/1) */
  XRT_ATTR_STRING = 4,  /* s ("..." contents, unescaped), n = length */
  XRT_ATTR_ENUM = 5,    /* s: #stablehlo<comparison_direction LT> -> "LT",
                           or a bare keyword such as FLOAT */
  XRT_ATTR_INTS = 6,    /* ints[n]: [1, 2], array<i64: 1, 2>, dense<[1,2]> of
                           an integer type */
  XRT_ATTR_DENSE = 7,   /* lit: any other dense<...> : type */
  XRT_ATTR_TYPE = 8,    /* type */
  XRT_ATTR_SYMBOL = 9,  /* s: @name -> "name" */
  XRT_ATTR_LIST = 10,   /* items[num_items]: [...] of non-integers */
  XRT_ATTR_DICT = 11    /* items[num_items], each named: {a = 1} and
                           #dialect.struct<a = 1> */
} xrt_ir_attr_kind;

/* One attribute of an op (or an item of a list or dictionary attribute);
 * kind says which fields hold its value. */
typedef struct xrt_ir_attr {
  const char *name;     /* NULL inside lists */
  uint8_t kind;         /* xrt_ir_attr_kind */
  int64_t i;
  double f;
  const char *s;
  int64_t n;
  const int64_t *ints;
  const xrt_ir_literal *lit;
  const xrt_ir_type *type;
  int32_t num_items;
  const struct xrt_ir_attr *items;
} xrt_ir_attr;

struct xrt_ir_region;

/* One op: operands and results are value ids of the enclosing function
 * (indices into xrt_ir_func.value_types). */
typedef struct xrt_ir_op {
  xrt_opcode code;
  const char *name;      /* as written, e.g. "stablehlo.add" */
  int32_t num_operands;
  const int32_t *operands;
  int32_t num_results;
  const int32_t *results;
  int32_t num_attrs;
  const xrt_ir_attr *attrs;
  int32_t num_regions;
  const struct xrt_ir_region *regions;
  xrt_ir_loc loc;
  /* func.call: index into xrt_ir_module.funcs.  custom_call, infeed,
   * outfeed, send, recv: index into xrt_plugin_compile_args.host_bindings
   * (the last four call host functions named "xrt.infeed", "xrt.outfeed",
   * "xrt.send" and "xrt.recv"). */
  int32_t callee;
} xrt_ir_op;

/* A region (one block): its arguments and ops. */
typedef struct xrt_ir_region {
  int32_t num_args;
  const int32_t *args;   /* value ids of the block arguments */
  int32_t num_ops;
  const xrt_ir_op *ops;  /* last op is the terminator */
} xrt_ir_region;

/* One func.func: its body, the types of all its values, its results. */
typedef struct xrt_ir_func {
  const char *name;
  bool is_public;
  int32_t num_values;
  const xrt_ir_type *value_types; /* indexed by value id */
  xrt_ir_region body;             /* body.args are the function arguments */
  int32_t num_results;
  const xrt_ir_type *result_types;
  xrt_ir_loc loc;
} xrt_ir_func;

/* A parsed, verified module: what a plugin compiles (read-only). */
typedef struct xrt_ir_module {
  const char *name;      /* "" if unnamed */
  int32_t num_custom_calls; /* ops that call the host, see xrt_ir_op.callee */
  int32_t num_funcs;
  const xrt_ir_func *funcs;
  int32_t num_replicas;  /* mhlo.num_replicas, default 1 */
  int32_t num_partitions;/* mhlo.num_partitions, default 1 */
  /* The module attribute stablehlo.version ("1.8.0"), or
   * xrt_stablehlo_version() when absent. */
  const char *stablehlo_version;
  /* ---- ABI 1.3 ---- */
  /* The program as xrt received it (StableHLO text, or the bytes of a
   * portable artifact; source_size bytes, NUL-terminated), for plugins that hand programs on to another
   * compiler (xrt_pjrt.c passes it to PJRT_Client_Compile). */
  const char *source;
  size_t source_size;
} xrt_ir_module;

/* The module of a parsed program (borrowed from it; read-only). Thread-safe. */
XRT_API const xrt_ir_module *xrt_program_module(const xrt_program *program);

/* Finds an attribute of op by name; NULL if absent. Thread-safe. */
static inline const xrt_ir_attr *xrt_ir_op_attr(const xrt_ir_op *op,
                                                const char *name) {
  for (int32_t i = 0; i < op->num_attrs; i++) {
    const char *a = op->attrs[i].name, *b = name;
    while (*a && *a == *b) a++, b++;
    if (*a == *b) return &op->attrs[i];
  }
  return 0;
}

/* Finds a named field of a DICT attribute (such as the dot_dimension_numbers
 * of dot_general); NULL if absent or attr is not a DICT. Thread-safe. */
static inline const xrt_ir_attr *xrt_ir_attr_field(const xrt_ir_attr *attr,
                                                   const char *name) {
  if (!attr || attr->kind != XRT_ATTR_DICT) return 0;
  for (int32_t i = 0; i < attr->num_items; i++) {
    const char *a = attr->items[i].name, *b = name;
    if (!a) continue;
    while (*a && *a == *b) a++, b++;
    if (*a == *b) return &attr->items[i];
  }
  return 0;
}

/* ---- Plugin ABI ----
 *
 * Versioning (PJRT style): a plugin's table carries the ABI major/minor it
 * was built against and its struct_size.  xrt loads a table with the same
 * major and a minor of at least XRT_PLUGIN_ABI_MIN_MINOR; functions and
 * fields are only ever appended, so an older plugin's smaller table reads
 * as NULL for what it lacks, and every NULL function answers
 * XRT_UNIMPLEMENTED ("plugin 'x' does not implement <function>").  Every
 * argument struct starts with struct_size, set by whoever fills it: a
 * plugin reads a field only when XRT_STRUCT_HAS says the struct has it,
 * and fills only the fields its own headers had.
 *
 * Threading: the core calls a plugin's functions for one device from that
 * device's worker thread, and different devices' calls concurrently;
 * compile, client and query functions from any thread. */

/* The plugin ABI version of this header: a plugin built with it sets
 * abi_major and abi_minor of its table to these. */
#define XRT_PLUGIN_ABI_MAJOR 1 /* changes only when the ABI breaks */
#define XRT_PLUGIN_ABI_MINOR 3 /* grows with each append to the ABI */
/* The oldest minor of this major that xrt still loads. */
#define XRT_PLUGIN_ABI_MIN_MINOR 0

/* The symbol a plugin library exports, and its type. */
#define XRT_PLUGIN_ENTRY_SYMBOL "xrt_plugin_get_api"
/* The type of a plugin library's xrt_plugin_get_api. */
typedef const struct xrt_plugin_api *(*xrt_plugin_get_api_fn)(void);

/* Whether a struct that starts with struct_size includes field. */
#define XRT_STRUCT_HAS(ptr, type, field)                                      \
  ((ptr)->struct_size >= offsetof(type, field) + sizeof(((type *)0)->field))

/* Every plugin call that can fail gets one of these to explain why. */
typedef struct xrt_plugin_error {
  char message[1024];
} xrt_plugin_error;

/* Services the core offers a plugin (logging and tracing into xrt's). */
typedef struct xrt_plugin_host_api {
  size_t struct_size;
  void *ctx;  /* pass back to every call */
  /* Logs a message under component (the plugin's name is a good one). */
  void (*log)(void *ctx, xrt_log_level level, const char *component,
              const char *message);
  /* Whether a trace is being recorded (cheap; check before timing). */
  bool (*trace_enabled)(void *ctx);
  /* Records one complete event on a device's track: category "collective",
   * "kernel", "transfer"...; times from now_ns. */
  void (*trace_event)(void *ctx, int device, const char *category,
                      const char *name, int64_t start_ns, int64_t end_ns);
  /* The trace clock (monotonic nanoseconds). */
  int64_t (*now_ns)(void *ctx);
  /* ---- ABI 1.2: several processes (see "Multi-process") ---- */
  /* Sends and receives bytes between this process and others, for
   * collectives that span processes (see xrt_transport.exchange; peers are
   * process indices).  NULL, or process_count 1: the client is of this
   * process alone. */
  xrt_status (*exchange)(void *ctx, uint64_t tag,
                         const xrt_transport_msg *sends, int num_sends,
                         const xrt_transport_msg *recvs, int num_recvs,
                         xrt_plugin_error *err);
  int process_index, process_count;
} xrt_plugin_host_api;

/* What client_create receives: the client's options and topology, and
 * the core's services (host). */
typedef struct xrt_plugin_client_args {
  size_t struct_size;
  int num_devices;
  uint64_t device_memory_bytes;
  xrt_allocator allocator;
  int threads_per_device;  /* for one op on one device; 0: the plugin picks */
  /* ---- ABI 1.0 ---- */
  xrt_topology topology;   /* resolved, no -1 */
  const xrt_plugin_host_api *host; /* valid until client_destroy */
  /* ---- ABI 1.3 ---- */
  /* The table this call came through, so that one set of functions can
   * serve several tables (xrt_pjrt.c makes one per PJRT plugin). */
  const struct xrt_plugin_api *api;
} xrt_plugin_client_args;

/* A box copy: the elements of extent[0..rank) starting at src_start in
 * the array of src_dims at src (on src_device) go to dst_start in the
 * array of dst_dims at dst (on dst_device).  Elements are elem_bytes
 * each.  The regions lie inside their arrays (the core checks); src and
 * dst are different memories. */
typedef struct xrt_plugin_copy_region_args {
  size_t struct_size;
  int src_device;
  const void *src;
  const int64_t *src_dims, *src_start;
  int dst_device;
  void *dst;
  const int64_t *dst_dims, *dst_start;
  const int64_t *extent;
  int rank;
  size_t elem_bytes;
} xrt_plugin_copy_region_args;

/* What a plugin says of itself before any client (platform_describe).
 * Strings and arrays are borrowed from the plugin for its lifetime. */
typedef struct xrt_plugin_platform_desc {
  size_t struct_size;
  const char *stablehlo_min;     /* accepted StableHLO versions; NULL: any */
  const char *stablehlo_max;
  uint32_t capabilities;         /* XRT_CAP_* */
  uint64_t dtypes;               /* bit (1 << xrt_dtype) per type; 0: all */
  int num_attributes;
  const xrt_attribute *attributes;
  /* ---- ABI 1.3 ---- */
  /* Set by the core: the table platform_describe was called through (see
   * xrt_plugin_client_args.api). */
  const struct xrt_plugin_api *api;
} xrt_plugin_platform_desc;

/* What device_describe reports of one device. */
typedef struct xrt_plugin_device_desc {
  size_t struct_size;
  const char *kind;                 /* borrowed from the plugin */
  int num_attributes;
  const xrt_attribute *attributes;  /* borrowed from the plugin */
} xrt_plugin_device_desc;

/* The host function a custom_call op is bound to. */
typedef struct xrt_host_binding {
  xrt_host_fn fn;
  void *user;
} xrt_host_binding;

/* What compile receives: the module, its entry, host bindings and the
 * launch shape. */
typedef struct xrt_plugin_compile_args {
  size_t struct_size;
  const xrt_ir_module *module;
  int32_t entry;                    /* index into module->funcs */
  /* One per op that calls the host (custom_call, infeed, outfeed, send,
   * recv; module->num_custom_calls of them), indexed by the op's callee;
   * valid until executable_destroy. */
  const xrt_host_binding *host_bindings;
  /* The launch shape this executable runs in (>= 1 each), and the device
   * of every logical id (replica * num_partitions + partition). */
  int32_t num_replicas, num_partitions;
  const int32_t *device_assignment;
  /* ---- ABI 1.2 ---- */
  /* The process of every logical id (NULL: all are this process's), and
   * this process's index: participants of other processes are run there
   * (their device_assignment entries are -1 here), and reached through
   * host->exchange. */
  const int32_t *participant_process;
  int32_t process_index;
  /* What the core expects of the entry function, set for
   * executable_deserialize (zero for compile): the number of host
   * bindings, and the entry's input and output shapes.  A plugin refuses
   * (XRT_INVALID_ARGUMENT) bytes that disagree, since the core sizes
   * buffers by these. */
  int32_t num_host_bindings;
  int32_t num_inputs, num_outputs;
  const xrt_shape *input_shapes, *output_shapes;
  /* executable_deserialize only (read it when XRT_STRUCT_HAS says it is
   * there): nonzero when the core's store checked an integrity hash over
   * exactly these bytes after reading them, so the plugin may skip a hash
   * of its own.  The core sets it only for its own disk cache (xrt_cache.c,
   * whose load checks the file's XXH3-64 over every byte), never for other
   * xrt_cache_store implementations.  A hash is not a validity check:
   * bytes written on purpose pass it, so every other check still applies. */
  int bytes_verified;
} xrt_plugin_compile_args;

/* One participant of a launch.  Every participant of a launch (all
 * num_replicas * num_partitions of them) is handed to execute exactly once,
 * each on its device's own thread, concurrently; a participant the core
 * cannot run (a failed input) comes with abort_message set instead, so
 * that the others' collectives fail rather than wait forever.  (A launch
 * of a small program with no collectives, host calls or loops, whose
 * devices are idle, may run its participants one after another on the
 * calling thread: they must not wait for each other then.) */
typedef struct xrt_plugin_execute_args {
  size_t struct_size;
  void *executable;
  int device;
  uint64_t launch_id;       /* shared by the participants of one launch */
  int32_t replica, partition;
  int32_t num_replicas, num_partitions;
  void *const *args;        /* device memories of the entry's inputs */
  int num_args;
  void *const *outs;        /* preallocated memories of its results */
  int num_outs;
  const char *abort_message; /* non-NULL: do not run; fail the launch */
} xrt_plugin_execute_args;

/* Plugin objects are opaque to the core: void pointers the plugin made. */
typedef struct xrt_plugin_api {
  size_t struct_size;
  uint32_t abi_major;
  uint32_t abi_minor;
  const char *name;                 /* platform name, e.g. "sim" */
  const char *version;

  xrt_status (*client_create)(const xrt_plugin_client_args *args,
                              void **out_client, xrt_plugin_error *err);
  void (*client_destroy)(void *client);
  int (*device_count)(void *client);
  xrt_status (*device_describe)(void *client, int device,
                                xrt_plugin_device_desc *out,
                                xrt_plugin_error *err);

  /* Device memory.  mem is an opaque device address. */
  xrt_status (*buffer_alloc)(void *client, int device, size_t bytes,
                             void **out_mem, xrt_plugin_error *err);
  void (*buffer_free)(void *client, int device, void *mem);
  xrt_status (*buffer_write)(void *client, int device, void *mem,
                             const void *src, size_t bytes,
                             xrt_plugin_error *err);
  xrt_status (*buffer_read)(void *client, int device, const void *mem,
                            void *dst, size_t bytes, xrt_plugin_error *err);
  xrt_status (*buffer_copy)(void *client, int src_device, const void *src,
                            int dst_device, void *dst, size_t bytes,
                            xrt_plugin_error *err);

  /* Compiles the entry function of a verified module.  The module stays
   * alive until executable_destroy. */
  xrt_status (*compile)(void *client, const xrt_plugin_compile_args *args,
                        void **out_executable, xrt_plugin_error *err);
  void (*executable_destroy)(void *executable);
  /* Runs one participant of a launch (see xrt_plugin_execute_args). */
  xrt_status (*execute)(void *client, const xrt_plugin_execute_args *args,
                        xrt_plugin_error *err);

  /* ---- optional (NULL when absent) ---- */

  /* Makes the next execution on device fail after after_steps kernels. */
  xrt_status (*inject_fault)(void *client, int device, int64_t after_steps,
                             xrt_plugin_error *err);

  /* ---- ABI 1.0 (all optional) ---- */

  /* Fills *out (out->struct_size set by the core) without a client. */
  xrt_status (*platform_describe)(xrt_plugin_platform_desc *out,
                                  xrt_plugin_error *err);
  /* Whether the plugin can run op (of module->funcs[func]): an
   * xrt_support value; on NO or MAYBE it may explain in why.  client may
   * be that of the querying xrt client. */
  int (*op_support)(void *client, const xrt_ir_module *module, int32_t func,
                    const xrt_ir_op *op, xrt_plugin_error *why);
  /* See xrt_device_inject_fault_kind (kind is an xrt_fault_kind). */
  xrt_status (*inject_fault_kind)(void *client, int device, int kind,
                                  int64_t after, xrt_plugin_error *err);
  /* The host address of device memory mem, or NULL when it is not
   * host-addressable (zero-copy DLPack export). */
  void *(*buffer_host_pointer)(void *client, int device, void *mem);
  /* Adopts bytes of host memory at host as device memory (zero-copy
   * DLPack import): *out_mem is then freed with buffer_free, which must
   * not free host itself.  XRT_UNIMPLEMENTED / FAILED_PRECONDITION (e.g.
   * alignment) make the core copy instead. */
  xrt_status (*buffer_wrap_host)(void *client, int device, void *host,
                                 size_t bytes, void **out_mem,
                                 xrt_plugin_error *err);
  /* Copies a box of elements between two dense row-major arrays, on the
   * same device or from one device to another (see
   * xrt_plugin_copy_region_args).  NULL: the core stages through host
   * memory (or uses buffer_host_pointer). */
  xrt_status (*buffer_copy_region)(void *client,
                                   const xrt_plugin_copy_region_args *args,
                                   xrt_plugin_error *err);

  /* ---- ABI 1.1: persistent compilation cache ---- */

  /* Writes an executable as bytes that executable_deserialize of the same
   * plugin name and version can load in another process: *out_data is
   * allocated by the plugin and freed with serialized_free.  NULL (or
   * XRT_UNIMPLEMENTED): this plugin's executables are not kept on disk. */
  xrt_status (*executable_serialize)(void *executable, void **out_data,
                                     size_t *out_size, xrt_plugin_error *err);
  void (*serialized_free)(void *data);
  /* Recreates an executable from executable_serialize's bytes.  args are
   * what compile got (host bindings, launch shape, device assignment)
   * except that args->module is NULL and args->entry is -1: the bytes must
   * be enough.  Bytes the plugin does not recognise are
   * XRT_INVALID_ARGUMENT (the core then compiles). */
  xrt_status (*executable_deserialize)(void *client,
                                       const xrt_plugin_compile_args *args,
                                       const void *data, size_t size,
                                       void **out_executable,
                                       xrt_plugin_error *err);
} xrt_plugin_api;

/* The simulator's table, when xrt_sim.c is compiled in. Thread-safe. */
XRT_API const xrt_plugin_api *xrt_sim_plugin_api(void);

/* ---- PJRT plugins as xrt plugins (xrt_pjrt.c, optional) ----
 * A library that exports GetPjrtApi (OpenXLA's PJRT C API: every vendor's
 * device plugin) instead of xrt_plugin_get_api loads as an xrt plugin when
 * xrt_pjrt.c is compiled in: xrt_context_load_plugin, XRT_PLUGINS and
 * directory scans find the symbol and wrap the PJRT_Api table it returns. */

/* The symbol a PJRT plugin library exports. */
#define XRT_PJRT_ENTRY_SYMBOL "GetPjrtApi"

/* Wraps pjrt_api (the const PJRT_Api * a PJRT plugin's GetPjrtApi
 * returned) as an xrt plugin table named name (NULL: "pjrt"); label names
 * the plugin in messages (its path, say; may be NULL).  Checks the table's
 * version and size and calls PJRT_Plugin_Initialize.  The caller owns
 * *out_table (release with xrt_pjrt_plugin_unwrap after every client of
 * it is gone); pjrt_api must outlive it.  XRT_FAILED_PRECONDITION: another
 * PJRT major version, or a table too small.  Thread-safe. */
XRT_API xrt_status xrt_pjrt_plugin_wrap(const void *pjrt_api, const char *name,
                                        const char *label,
                                        const xrt_plugin_api **out_table);
/* Frees what xrt_pjrt_plugin_wrap made (NULL: nothing). */
XRT_API void xrt_pjrt_plugin_unwrap(const xrt_plugin_api *table);

/* Registers a PJRT plugin's table (what its GetPjrtApi returned) in a
 * context under name (NULL: "pjrt"), wrapped by xrt_pjrt_plugin_wrap; the
 * context frees the wrapper when it unloads the plugin.  XRT_UNIMPLEMENTED
 * when xrt_pjrt.c is not compiled in.  Thread-safe. */
XRT_API xrt_status xrt_context_register_pjrt(xrt_context *context,
                                             const char *name,
                                             const void *pjrt_api,
                                             xrt_plugin **out_plugin);

/* What a plugin library defines (built with XRT_PLUGIN_SHARED for the
 * simulator): its function table, static for the library's lifetime.  The
 * core calls it once per load, from any thread. */
XRT_PLUGIN_EXPORT const xrt_plugin_api *xrt_plugin_get_api(void);

#ifdef __cplusplus
}
#endif
#endif /* XRT_H */
/* ==== end src/include/plugin.h ==== */
