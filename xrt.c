/*
 * xrt.c - the core of xrt: everything that does not depend on a device.
 * MIT licensed; see LICENSE.
 *
 * Table of contents (sections appear in the order data flows):
 *   1. Platform and includes
 *   2. Errors: status names, the per-thread last error
 *   3. Memory: allocator, arena
 *   4. Types: dtypes, shapes, opcode names
 *   5. Parse: StableHLO text to IR
 *  5b. Normalize: one attribute form for pretty and generic syntax
 *   6. Verify: op constraints on the parsed IR
 *   7. Plugins: the registry of device plugins
 *   8. Handles: generation-checked object handles
 *   9. Clients and devices
 *  10. Buffers
 *  11. Host functions and the built-in check.* targets
 *  12. Programs and compilation
 *  13. Execution
 *  14. NumPy files
 */

/* ======================================================================
 * 1. Platform and includes
 * ==================================================================== */

#if !defined(_POSIX_C_SOURCE) || _POSIX_C_SOURCE < 200809L
#undef _POSIX_C_SOURCE
#define _POSIX_C_SOURCE 200809L
#endif

#include "xrt.h"

#include <assert.h>
#include <errno.h>
#include <float.h>
#include <inttypes.h>
#include <limits.h>
#include <math.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#if defined(_MSC_VER)
#define XRT__THREAD_LOCAL __declspec(thread)
#else
#define XRT__THREAD_LOCAL _Thread_local
#endif

#define XRT__UNUSED(x) ((void)(x))
#define XRT__ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))

/* ======================================================================
 * 2. Errors
 * ==================================================================== */

typedef struct xrt__error_state {
  xrt_status code;
  char message[2048];
} xrt__error_state;

static XRT__THREAD_LOCAL xrt__error_state xrt__error;

const char *xrt_strerror(xrt_status code) {
  switch (code) {
  case XRT_OK: return "OK";
  case XRT_CANCELLED: return "CANCELLED";
  case XRT_UNKNOWN: return "UNKNOWN";
  case XRT_INVALID_ARGUMENT: return "INVALID_ARGUMENT";
  case XRT_DEADLINE_EXCEEDED: return "DEADLINE_EXCEEDED";
  case XRT_NOT_FOUND: return "NOT_FOUND";
  case XRT_ALREADY_EXISTS: return "ALREADY_EXISTS";
  case XRT_PERMISSION_DENIED: return "PERMISSION_DENIED";
  case XRT_RESOURCE_EXHAUSTED: return "RESOURCE_EXHAUSTED";
  case XRT_FAILED_PRECONDITION: return "FAILED_PRECONDITION";
  case XRT_ABORTED: return "ABORTED";
  case XRT_OUT_OF_RANGE: return "OUT_OF_RANGE";
  case XRT_UNIMPLEMENTED: return "UNIMPLEMENTED";
  case XRT_INTERNAL: return "INTERNAL";
  case XRT_UNAVAILABLE: return "UNAVAILABLE";
  case XRT_DATA_LOSS: return "DATA_LOSS";
  case XRT_UNAUTHENTICATED: return "UNAUTHENTICATED";
  case XRT_CHECK_FAILED: return "CHECK_FAILED";
  }
  return "UNKNOWN_STATUS";
}

const char *xrt_last_error(void) { return xrt__error.message; }
xrt_status xrt_last_status(void) { return xrt__error.code; }

/* Records a failure for xrt_last_error() and returns its code, so that
 * callers can write `return xrt__fail(...)`. */
#if defined(__GNUC__)
__attribute__((format(printf, 2, 3)))
#endif
static xrt_status xrt__fail(xrt_status code, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(xrt__error.message, sizeof xrt__error.message, fmt, ap);
  va_end(ap);
  xrt__error.code = code;
  return code;
}

/* Adopts a plugin's failure as this thread's last error. */
static xrt_status xrt__fail_plugin(xrt_status code, const char *plugin,
                                   const xrt_plugin_error *err) {
  if (code == XRT_OK) code = XRT_INTERNAL; /* a plugin must not fail with OK */
  const char *msg = err->message[0] ? err->message : "(no message)";
  return xrt__fail(code, "%s: %.*s", plugin, (int)sizeof err->message, msg);
}

#define XRT__CHECK_ARG(cond, what)                                          \
  do {                                                                      \
    if (!(cond)) return xrt__fail(XRT_INVALID_ARGUMENT, "%s: %s", __func__, \
                                  what);                                    \
  } while (0)

/* ======================================================================
 * 3. Memory
 * ==================================================================== */

static void *xrt__system_alloc(void *self, size_t size) {
  XRT__UNUSED(self);
  return malloc(size ? size : 1);
}
static void xrt__system_free(void *self, void *ptr) {
  XRT__UNUSED(self);
  free(ptr);
}

xrt_allocator xrt_allocator_system(void) {
  xrt_allocator a = {NULL, xrt__system_alloc, xrt__system_free};
  return a;
}

static void *xrt__alloc(const xrt_allocator *a, size_t n) {
  return a->alloc(a->self, n);
}
static void *xrt__calloc(const xrt_allocator *a, size_t count, size_t size) {
  if (size && count > SIZE_MAX / size) return NULL;
  void *p = a->alloc(a->self, count * size);
  if (p) memset(p, 0, count * size);
  return p;
}
static void xrt__free(const xrt_allocator *a, void *p) {
  if (p) a->free(a->self, p);
}

/* An arena: many small allocations freed at once (parsed programs). */
typedef struct xrt__arena_chunk {
  struct xrt__arena_chunk *next;
  size_t used, cap;
  max_align_t align_[]; /* data follows */
} xrt__arena_chunk;

typedef struct xrt__arena {
  xrt_allocator allocator;
  xrt__arena_chunk *head;
  size_t total;
} xrt__arena;

static void xrt__arena_init(xrt__arena *a, xrt_allocator allocator) {
  a->allocator = allocator;
  a->head = NULL;
  a->total = 0;
}

static void xrt__arena_release(xrt__arena *a) {
  xrt__arena_chunk *c = a->head;
  while (c) {
    xrt__arena_chunk *next = c->next;
    xrt__free(&a->allocator, c);
    c = next;
  }
  a->head = NULL;
  a->total = 0;
}

/* Zeroed, 16-byte aligned memory from the arena; NULL when out of memory. */
static void *xrt__arena_alloc(xrt__arena *a, size_t n) {
  n = (n + 15) & ~(size_t)15;
  if (n == 0) n = 16;
  xrt__arena_chunk *c = a->head;
  if (!c || c->cap - c->used < n) {
    size_t cap = a->total < 65536 ? 16384 : a->total / 2;
    if (cap < n) cap = n;
    if (cap > SIZE_MAX - sizeof(xrt__arena_chunk) - 16) return NULL;
    c = (xrt__arena_chunk *)xrt__alloc(&a->allocator,
                                       sizeof(xrt__arena_chunk) + cap + 16);
    if (!c) return NULL;
    c->next = a->head;
    c->cap = cap;
    c->used = 0;
    a->head = c;
    a->total += cap;
  }
  uintptr_t base = (uintptr_t)(c + 1);
  uintptr_t p = (base + c->used + 15) & ~(uintptr_t)15;
  c->used = (size_t)(p - base) + n;
  memset((void *)p, 0, n);
  return (void *)p;
}

static char *xrt__arena_strndup(xrt__arena *a, const char *s, size_t n) {
  char *p = (char *)xrt__arena_alloc(a, n + 1);
  if (!p) return NULL;
  memcpy(p, s, n);
  p[n] = 0;
  return p;
}

/* ======================================================================
 * 4. Types
 * ==================================================================== */

typedef struct xrt__dtype_info {
  const char *name;
  uint8_t size;  /* storage bytes */
  uint8_t bits;  /* value bits */
  uint8_t klass; /* XRT__K_* */
} xrt__dtype_info;

enum { XRT__K_NONE, XRT__K_PRED, XRT__K_SINT, XRT__K_UINT, XRT__K_FLOAT,
       XRT__K_COMPLEX };

static const xrt__dtype_info xrt__dtypes[XRT_DTYPE_COUNT] = {
    [XRT_DTYPE_INVALID] = {"invalid", 0, 0, XRT__K_NONE},
    [XRT_PRED] = {"i1", 1, 1, XRT__K_PRED},
    [XRT_S8] = {"i8", 1, 8, XRT__K_SINT},
    [XRT_S16] = {"i16", 2, 16, XRT__K_SINT},
    [XRT_S32] = {"i32", 4, 32, XRT__K_SINT},
    [XRT_S64] = {"i64", 8, 64, XRT__K_SINT},
    [XRT_U8] = {"ui8", 1, 8, XRT__K_UINT},
    [XRT_U16] = {"ui16", 2, 16, XRT__K_UINT},
    [XRT_U32] = {"ui32", 4, 32, XRT__K_UINT},
    [XRT_U64] = {"ui64", 8, 64, XRT__K_UINT},
    [XRT_F16] = {"f16", 2, 16, XRT__K_FLOAT},
    [XRT_BF16] = {"bf16", 2, 16, XRT__K_FLOAT},
    [XRT_F32] = {"f32", 4, 32, XRT__K_FLOAT},
    [XRT_F64] = {"f64", 8, 64, XRT__K_FLOAT},
    [XRT_C64] = {"complex<f32>", 8, 64, XRT__K_COMPLEX},
    [XRT_C128] = {"complex<f64>", 16, 128, XRT__K_COMPLEX},
    [XRT_S2] = {"i2", 1, 2, XRT__K_SINT},
    [XRT_S4] = {"i4", 1, 4, XRT__K_SINT},
    [XRT_U2] = {"ui2", 1, 2, XRT__K_UINT},
    [XRT_U4] = {"ui4", 1, 4, XRT__K_UINT},
    [XRT_F8E4M3FN] = {"f8E4M3FN", 1, 8, XRT__K_FLOAT},
    [XRT_F8E5M2] = {"f8E5M2", 1, 8, XRT__K_FLOAT},
    [XRT_F8E4M3FNUZ] = {"f8E4M3FNUZ", 1, 8, XRT__K_FLOAT},
    [XRT_F8E5M2FNUZ] = {"f8E5M2FNUZ", 1, 8, XRT__K_FLOAT},
    [XRT_F8E4M3B11FNUZ] = {"f8E4M3B11FNUZ", 1, 8, XRT__K_FLOAT},
    [XRT_F8E3M4] = {"f8E3M4", 1, 8, XRT__K_FLOAT},
    [XRT_F8E4M3] = {"f8E4M3", 1, 8, XRT__K_FLOAT},
    [XRT_F8E8M0FNU] = {"f8E8M0FNU", 1, 8, XRT__K_FLOAT},
    [XRT_F6E2M3FN] = {"f6E2M3FN", 1, 6, XRT__K_FLOAT},
    [XRT_F6E3M2FN] = {"f6E3M2FN", 1, 6, XRT__K_FLOAT},
    [XRT_F4E2M1FN] = {"f4E2M1FN", 1, 4, XRT__K_FLOAT},
};

static bool xrt__dtype_valid(xrt_dtype t) {
  return (int)t > 0 && (int)t < XRT_DTYPE_COUNT;
}
static int xrt__dtype_class(xrt_dtype t) {
  return xrt__dtype_valid(t) ? xrt__dtypes[t].klass : XRT__K_NONE;
}

size_t xrt_dtype_size(xrt_dtype t) {
  return xrt__dtype_valid(t) ? xrt__dtypes[t].size : 0;
}
const char *xrt_dtype_name(xrt_dtype t) {
  return xrt__dtype_valid(t) ? xrt__dtypes[t].name : "invalid";
}
int xrt_dtype_bits(xrt_dtype t) {
  return xrt__dtype_valid(t) ? xrt__dtypes[t].bits : 0;
}
xrt_dtype xrt_dtype_from_name(const char *name, size_t len) {
  if (!name) return XRT_DTYPE_INVALID;
  for (int t = 1; t < XRT_DTYPE_COUNT; t++) {
    const char *n = xrt__dtypes[t].name;
    if (strlen(n) == len && memcmp(n, name, len) == 0) return (xrt_dtype)t;
  }
  return XRT_DTYPE_INVALID;
}
bool xrt_dtype_is_float(xrt_dtype t) {
  return xrt__dtype_class(t) == XRT__K_FLOAT;
}
bool xrt_dtype_is_complex(xrt_dtype t) {
  return xrt__dtype_class(t) == XRT__K_COMPLEX;
}
bool xrt_dtype_is_signed_int(xrt_dtype t) {
  return xrt__dtype_class(t) == XRT__K_SINT;
}
bool xrt_dtype_is_unsigned_int(xrt_dtype t) {
  return xrt__dtype_class(t) == XRT__K_UINT;
}

int64_t xrt_shape_numel(const xrt_shape *s) {
  if (!s) return 0;
  int64_t n = 1;
  for (int32_t i = 0; i < s->rank && i < XRT_MAX_RANK; i++) n *= s->dims[i];
  return n;
}

size_t xrt_shape_bytes(const xrt_shape *s) {
  return s ? (size_t)xrt_shape_numel(s) * xrt_dtype_size(s->dtype) : 0;
}

size_t xrt_shape_format(const xrt_shape *s, char *buf, size_t cap) {
  char tmp[512];
  size_t n = 0;
  n += (size_t)snprintf(tmp + n, sizeof tmp - n, "tensor<");
  for (int32_t i = 0; s && i < s->rank && i < XRT_MAX_RANK; i++)
    n += (size_t)snprintf(tmp + n, sizeof tmp - n, "%" PRId64 "x", s->dims[i]);
  n += (size_t)snprintf(tmp + n, sizeof tmp - n, "%s>",
                        s ? xrt_dtype_name(s->dtype) : "invalid");
  if (cap) snprintf(buf, cap, "%s", tmp);
  return n;
}

/* Validates a user-supplied shape; the bytes it needs go to *bytes. */
static xrt_status xrt__shape_check(const xrt_shape *s, size_t *bytes) {
  if (!xrt__dtype_valid(s->dtype))
    return xrt__fail(XRT_INVALID_ARGUMENT, "invalid element type %d",
                     (int)s->dtype);
  if (s->rank < 0 || s->rank > XRT_MAX_RANK)
    return xrt__fail(XRT_INVALID_ARGUMENT, "rank %d is outside 0..%d",
                     (int)s->rank, XRT_MAX_RANK);
  uint64_t n = xrt_dtype_size(s->dtype);
  for (int32_t i = 0; i < s->rank; i++) {
    if (s->dims[i] < 0)
      return xrt__fail(XRT_INVALID_ARGUMENT, "dimension %d is negative (%" PRId64
                       ")", (int)i, s->dims[i]);
    if (s->dims[i] && n > (uint64_t)SIZE_MAX / 2 / (uint64_t)s->dims[i])
      return xrt__fail(XRT_INVALID_ARGUMENT, "shape is too large: its byte "
                       "size does not fit in size_t");
    n *= (uint64_t)s->dims[i];
  }
  *bytes = (size_t)n;
  return XRT_OK;
}

static bool xrt__shape_equal(const xrt_shape *a, const xrt_shape *b) {
  if (a->dtype != b->dtype || a->rank != b->rank) return false;
  for (int32_t i = 0; i < a->rank; i++)
    if (a->dims[i] != b->dims[i]) return false;
  return true;
}

static const char *const xrt__opcode_names[XRT_OP_COUNT] = {
    [XRT_OP_INVALID] = "invalid",
#define XRT__OPCODE_NAME(e, s) [XRT_OP_##e] = s,
    XRT_OPCODES(XRT__OPCODE_NAME)
#undef XRT__OPCODE_NAME
};

const char *xrt_opcode_name(xrt_opcode op) {
  return ((int)op > 0 && (int)op < XRT_OP_COUNT) ? xrt__opcode_names[op]
                                                 : "invalid";
}

/* Opcode lookup by name: a small open-addressing hash table built once. */
#define XRT__OPHASH_SIZE 512
static uint16_t xrt__ophash[XRT__OPHASH_SIZE];
static pthread_once_t xrt__ophash_once = PTHREAD_ONCE_INIT;

static uint32_t xrt__hash_bytes(const char *s, size_t n) {
  uint32_t h = 2166136261u; /* FNV-1a */
  for (size_t i = 0; i < n; i++) h = (h ^ (uint8_t)s[i]) * 16777619u;
  return h;
}

static void xrt__ophash_build(void) {
  for (int op = 1; op < XRT_OP_COUNT; op++) {
    const char *s = xrt__opcode_names[op];
    uint32_t h = xrt__hash_bytes(s, strlen(s)) & (XRT__OPHASH_SIZE - 1);
    while (xrt__ophash[h]) h = (h + 1) & (XRT__OPHASH_SIZE - 1);
    xrt__ophash[h] = (uint16_t)op;
  }
}

static xrt_opcode xrt__opcode_from_name(const char *s, size_t n) {
  pthread_once(&xrt__ophash_once, xrt__ophash_build);
  uint32_t h = xrt__hash_bytes(s, n) & (XRT__OPHASH_SIZE - 1);
  while (xrt__ophash[h]) {
    const char *name = xrt__opcode_names[xrt__ophash[h]];
    if (strlen(name) == n && memcmp(name, s, n) == 0)
      return (xrt_opcode)xrt__ophash[h];
    h = (h + 1) & (XRT__OPHASH_SIZE - 1);
  }
  return XRT_OP_INVALID;
}

/* ======================================================================
 * 5. Parse
 * ==================================================================== */

#include "_dev/parse.inc"

/* ======================================================================
 * 5b. Normalize
 *
 * Some ops spell the same attributes differently in their pretty and generic
 * forms.  This pass rewrites them into one representation, the generic
 * attribute names of the StableHLO specification, so that the verifier and
 * every plugin read a single form:
 *  - convolution's compact `[b, 0, 1, f]x[0, 1, i, o]->[b, 0, 1, f]`
 *    becomes a DICT "dimension_numbers" with INT/INTS fields
 *    input_batch_dimension, input_feature_dimension,
 *    input_spatial_dimensions, kernel_input_feature_dimension,
 *    kernel_output_feature_dimension, kernel_spatial_dimensions,
 *    output_batch_dimension, output_feature_dimension,
 *    output_spatial_dimensions;
 *  - the pretty `window = {stride, pad, lhs_dilate, rhs_dilate, reverse}`
 *    becomes window_strides, padding (flattened pairs), lhs_dilation,
 *    rhs_dilation and window_reversal.
 * ==================================================================== */

typedef struct xrt__nctx {
  xrt__arena *arena;
  const xrt_ir_op *op;
} xrt__nctx;

static xrt_status xrt__nfail(const xrt__nctx *n, const char *what) {
  const xrt_ir_loc *l = &n->op->loc;
  return xrt__fail(XRT_INVALID_ARGUMENT, "%s:%d:%d: %s: %s", l->file,
                   (int)l->line, (int)l->col, n->op->name, what);
}

/* One bracketed group of the compact form: "[b, 0, 1, f]".  Letters are
 * given in `letters` (e.g. "bf"); their positions go to role[], digit k's
 * position to spatial[k]. */
static xrt_status xrt__conv_group(const xrt__nctx *n, const char **sp,
                                  const char *letters, int64_t role[2],
                                  int64_t *spatial, int64_t *nspatial) {
  const char *s = *sp;
  while (*s == ' ') s++;
  if (*s++ != '[') return xrt__nfail(n, "malformed dimension numbers");
  int64_t pos = 0, count = 0;
  role[0] = role[1] = -1;
  for (;;) {
    while (*s == ' ' || *s == ',') s++;
    if (*s == ']') break;
    if (*s >= '0' && *s <= '9') {
      int64_t k = 0;
      while (*s >= '0' && *s <= '9' && k < XRT_MAX_RANK) k = k * 10 + (*s++ - '0');
      if (k >= XRT_MAX_RANK) return xrt__nfail(n, "spatial dimension too large");
      spatial[k] = pos;
      if (k + 1 > count) count = k + 1;
    } else if (*s == letters[0] || *s == letters[1]) {
      role[*s == letters[1]] = pos;
      s++;
    } else {
      return xrt__nfail(n, "malformed dimension numbers");
    }
    if (++pos > XRT_MAX_RANK) return xrt__nfail(n, "too many dimensions");
  }
  *sp = s + 1;
  *nspatial = count;
  if (role[0] < 0 || role[1] < 0)
    return xrt__nfail(n, "dimension numbers lack a batch/feature letter");
  return XRT_OK;
}

static xrt_ir_attr xrt__int_attr(const char *name, int64_t v) {
  xrt_ir_attr a;
  memset(&a, 0, sizeof a);
  a.name = name;
  a.kind = XRT_ATTR_INT;
  a.i = v;
  return a;
}

static xrt_status xrt__ints_attr(const xrt__nctx *n, const char *name,
                                 const int64_t *v, int64_t count,
                                 xrt_ir_attr *a) {
  int64_t *copy = (int64_t *)xrt__arena_alloc(n->arena,
                                              sizeof(int64_t) * (size_t)(count + 1));
  if (!copy) return xrt__fail(XRT_RESOURCE_EXHAUSTED, "out of memory");
  for (int64_t i = 0; i < count; i++) copy[i] = v[i];
  memset(a, 0, sizeof *a);
  a->name = name;
  a->kind = XRT_ATTR_INTS;
  a->ints = copy;
  a->n = count;
  return XRT_OK;
}

/* The compact conv form into a DICT of nine fields. */
static xrt_status xrt__conv_dims(const xrt__nctx *n, const char *s,
                                 xrt_ir_attr *out) {
  static const char *const names[3][3] = {
      {"input_batch_dimension", "input_feature_dimension",
       "input_spatial_dimensions"},
      {"kernel_input_feature_dimension", "kernel_output_feature_dimension",
       "kernel_spatial_dimensions"},
      {"output_batch_dimension", "output_feature_dimension",
       "output_spatial_dimensions"}};
  static const char *const letters[3] = {"bf", "io", "bf"};
  xrt_ir_attr *items = (xrt_ir_attr *)xrt__arena_alloc(n->arena,
                                                       9 * sizeof *items);
  if (!items) return xrt__fail(XRT_RESOURCE_EXHAUSTED, "out of memory");
  for (int g = 0; g < 3; g++) {
    int64_t role[2], spatial[XRT_MAX_RANK] = {0}, ns = 0;
    if (g == 1 && (s[0] != 'x' || !s++))
      return xrt__nfail(n, "expected 'x' in dimension numbers");
    if (g == 2 && (s[0] != '-' || s[1] != '>' || !(s += 2)))
      return xrt__nfail(n, "expected '->' in dimension numbers");
    xrt_status st = xrt__conv_group(n, &s, letters[g], role, spatial, &ns);
    if (st) return st;
    items[3 * g] = xrt__int_attr(names[g][0], role[0]);
    items[3 * g + 1] = xrt__int_attr(names[g][1], role[1]);
    if ((st = xrt__ints_attr(n, names[g][2], spatial, ns, &items[3 * g + 2])))
      return st;
  }
  memset(out, 0, sizeof *out);
  out->name = "dimension_numbers";
  out->kind = XRT_ATTR_DICT;
  out->items = items;
  out->num_items = 9;
  return XRT_OK;
}

/* Maps a pretty window field to its generic attribute. */
static const char *xrt__window_name(const char *field) {
  static const char *const map[][2] = {
      {"stride", "window_strides"}, {"pad", "padding"},
      {"lhs_dilate", "lhs_dilation"}, {"rhs_dilate", "rhs_dilation"},
      {"reverse", "window_reversal"}};
  for (size_t i = 0; i < XRT__ARRAY_SIZE(map); i++)
    if (strcmp(field, map[i][0]) == 0) return map[i][1];
  return NULL;
}

/* [[lo, hi], ...] (a LIST of two-element INTS) into flat INTS. */
static xrt_status xrt__flatten_pairs(const xrt__nctx *n, const xrt_ir_attr *a,
                                     xrt_ir_attr *out) {
  int64_t v[2 * XRT_MAX_RANK];
  if (a->num_items > XRT_MAX_RANK) return xrt__nfail(n, "too many pads");
  for (int32_t i = 0; i < a->num_items; i++) {
    const xrt_ir_attr *p = &a->items[i];
    if (p->kind != XRT_ATTR_INTS || p->n != 2)
      return xrt__nfail(n, "pad entries must be [low, high] pairs");
    v[2 * i] = p->ints[0];
    v[2 * i + 1] = p->ints[1];
  }
  return xrt__ints_attr(n, a->name, v, 2 * (int64_t)a->num_items, out);
}

static xrt_status xrt__normalize_conv(xrt__nctx *n, xrt_ir_op *op) {
  int32_t extra = 0;
  for (int32_t i = 0; i < op->num_attrs; i++)
    if (op->attrs[i].kind == XRT_ATTR_DICT && op->attrs[i].name &&
        strcmp(op->attrs[i].name, "window") == 0)
      extra += op->attrs[i].num_items;
  xrt_ir_attr *attrs = (xrt_ir_attr *)xrt__arena_alloc(
      n->arena, sizeof *attrs * (size_t)(op->num_attrs + extra + 1));
  if (!attrs) return xrt__fail(XRT_RESOURCE_EXHAUSTED, "out of memory");
  int32_t k = 0;
  for (int32_t i = 0; i < op->num_attrs; i++) {
    const xrt_ir_attr *a = &op->attrs[i];
    const char *name = a->name ? a->name : "";
    xrt_status st = XRT_OK;
    if (a->kind == XRT_ATTR_STRING && (strcmp(name, "dimension_numbers") == 0 ||
                                       strcmp(name, "dim_numbers") == 0)) {
      st = xrt__conv_dims(n, a->s, &attrs[k++]);
    } else if (a->kind == XRT_ATTR_DICT && strcmp(name, "window") == 0) {
      for (int32_t j = 0; j < a->num_items; j++) {
        const char *g = a->items[j].name ? xrt__window_name(a->items[j].name)
                                         : NULL;
        if (!g) return xrt__nfail(n, "unknown field in window");
        if (a->items[j].kind == XRT_ATTR_LIST) { /* pad = [[lo, hi], ...] */
          if ((st = xrt__flatten_pairs(n, &a->items[j], &attrs[k]))) return st;
        } else {
          attrs[k] = a->items[j];
        }
        attrs[k++].name = g;
      }
    } else {
      attrs[k++] = *a;
    }
    if (st) return st;
  }
  op->attrs = attrs;
  op->num_attrs = k;
  return XRT_OK;
}

static xrt_status xrt__normalize_region(xrt__nctx *n, const xrt_ir_region *r) {
  for (int32_t i = 0; i < r->num_ops; i++) {
    xrt_ir_op *op = (xrt_ir_op *)&r->ops[i]; /* ours until shared */
    n->op = op;
    xrt_status s = XRT_OK;
    if (op->code == XRT_OP_CONVOLUTION || op->code == XRT_OP_DYNAMIC_CONV)
      s = xrt__normalize_conv(n, op);
    for (int32_t k = 0; !s && k < op->num_regions; k++)
      s = xrt__normalize_region(n, &op->regions[k]);
    if (s) return s;
  }
  return XRT_OK;
}

static xrt_status xrt__normalize_module(xrt__arena *arena, xrt_ir_module *m) {
  xrt__nctx n = {arena, NULL};
  for (int32_t i = 0; i < m->num_funcs; i++) {
    xrt_status s = xrt__normalize_region(&n, &m->funcs[i].body);
    if (s) return s;
  }
  return XRT_OK;
}

/* ======================================================================
 * 6. Verify
 *
 * The parser gives every value a type from the program's own annotations;
 * the verifier checks that each op's operands, results and attributes obey
 * the StableHLO specification's constraints, so a device plugin receives a
 * program it can trust.  Ops without checks here are left to the plugin.
 * ==================================================================== */

typedef struct xrt__vctx {
  const xrt_ir_module *module;
  const xrt_ir_func *func;
  const xrt_ir_op *op;
} xrt__vctx;

#if defined(__GNUC__)
__attribute__((format(printf, 2, 3)))
#endif
static xrt_status xrt__vfail(const xrt__vctx *v, const char *fmt, ...) {
  char msg[768];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(msg, sizeof msg, fmt, ap);
  va_end(ap);
  const xrt_ir_loc *l = &v->op->loc;
  return xrt__fail(XRT_INVALID_ARGUMENT, "%s:%d:%d: %s: %s",
                   l->file ? l->file : "<input>", (int)l->line, (int)l->col,
                   v->op->name ? v->op->name : xrt_opcode_name(v->op->code),
                   msg);
}

static const xrt_ir_type *xrt__vtype(const xrt__vctx *v, int32_t id) {
  return &v->func->value_types[id];
}
static const xrt_shape *xrt__vshape(const xrt__vctx *v, int32_t id) {
  return &v->func->value_types[id].shape;
}
static const xrt_shape *xrt__operand(const xrt__vctx *v, int i) {
  return xrt__vshape(v, v->op->operands[i]);
}
static const xrt_shape *xrt__result(const xrt__vctx *v, int i) {
  return xrt__vshape(v, v->op->results[i]);
}

static void xrt__type_str(const xrt_ir_type *t, char *buf, size_t cap) {
  if (t->kind == XRT_TYPE_TOKEN) snprintf(buf, cap, "!stablehlo.token");
  else if (t->kind == XRT_TYPE_TUPLE) snprintf(buf, cap, "tuple<...>");
  else xrt_shape_format(&t->shape, buf, cap);
}

static bool xrt__type_equal(const xrt_ir_type *a, const xrt_ir_type *b) {
  if (a->kind != b->kind) return false;
  if (a->kind == XRT_TYPE_TOKEN) return true;
  if (a->kind == XRT_TYPE_TUPLE) {
    if (a->num_elems != b->num_elems) return false;
    for (int32_t i = 0; i < a->num_elems; i++)
      if (!xrt__type_equal(&a->elems[i], &b->elems[i])) return false;
    return true;
  }
  return xrt__shape_equal(&a->shape, &b->shape) && !a->quant == !b->quant;
}

static xrt_status xrt__vcounts(const xrt__vctx *v, int operands, int results) {
  if (operands >= 0 && v->op->num_operands != operands)
    return xrt__vfail(v, "expects %d operand(s), got %d", operands,
                      (int)v->op->num_operands);
  if (results >= 0 && v->op->num_results != results)
    return xrt__vfail(v, "expects %d result(s), got %d", results,
                      (int)v->op->num_results);
  for (int i = 0; i < v->op->num_operands; i++)
    if (xrt__vtype(v, v->op->operands[i])->kind != XRT_TYPE_TENSOR)
      return xrt__vfail(v, "operand %d must be a tensor", i);
  for (int i = 0; i < v->op->num_results; i++)
    if (xrt__vtype(v, v->op->results[i])->kind != XRT_TYPE_TENSOR)
      return xrt__vfail(v, "result %d must be a tensor", i);
  return XRT_OK;
}

/* Two types must be equal; `what` names them in the message. */
static xrt_status xrt__vsame(const xrt__vctx *v, int32_t a, int32_t b,
                             const char *what) {
  const xrt_ir_type *ta = xrt__vtype(v, a), *tb = xrt__vtype(v, b);
  if (xrt__type_equal(ta, tb)) return XRT_OK;
  char sa[160], sb[160];
  xrt__type_str(ta, sa, sizeof sa);
  xrt__type_str(tb, sb, sizeof sb);
  return xrt__vfail(v, "%s: %s vs %s", what, sa, sb);
}

static bool xrt__same_dims(const xrt_shape *a, const xrt_shape *b) {
  if (a->rank != b->rank) return false;
  for (int32_t i = 0; i < a->rank; i++)
    if (a->dims[i] != b->dims[i]) return false;
  return true;
}

/* Element-type classes an op accepts, as a bit mask of XRT__K_*. */
#define XRT__M(k) (1u << (k))
#define XRT__M_INT (XRT__M(XRT__K_SINT) | XRT__M(XRT__K_UINT))
#define XRT__M_FC (XRT__M(XRT__K_FLOAT) | XRT__M(XRT__K_COMPLEX))
#define XRT__M_NUM (XRT__M_INT | XRT__M_FC)
#define XRT__M_ALL (XRT__M_NUM | XRT__M(XRT__K_PRED))
#define XRT__M_LOGIC (XRT__M_INT | XRT__M(XRT__K_PRED))

static unsigned xrt__elementwise_mask(xrt_opcode code) {
  switch (code) {
  case XRT_OP_ADD: case XRT_OP_MULTIPLY: case XRT_OP_MAXIMUM:
  case XRT_OP_MINIMUM: return XRT__M_ALL;
  case XRT_OP_SUBTRACT: case XRT_OP_DIVIDE: case XRT_OP_POWER:
  case XRT_OP_NEGATE: return XRT__M_NUM;
  case XRT_OP_REMAINDER: case XRT_OP_SIGN: case XRT_OP_ABS:
    return XRT__M_NUM;
  case XRT_OP_AND: case XRT_OP_OR: case XRT_OP_XOR: case XRT_OP_NOT:
    return XRT__M_LOGIC;
  case XRT_OP_SHIFT_LEFT: case XRT_OP_SHIFT_RIGHT_ARITHMETIC:
  case XRT_OP_SHIFT_RIGHT_LOGICAL: case XRT_OP_POPCNT:
  case XRT_OP_COUNT_LEADING_ZEROS: return XRT__M_INT;
  case XRT_OP_EXPONENTIAL: case XRT_OP_LOG: case XRT_OP_SQRT:
  case XRT_OP_RSQRT: case XRT_OP_TANH: case XRT_OP_LOGISTIC:
  case XRT_OP_SINE: case XRT_OP_COSINE: case XRT_OP_EXPONENTIAL_MINUS_ONE:
  case XRT_OP_LOG_PLUS_ONE: case XRT_OP_CBRT: case XRT_OP_TAN:
  case XRT_OP_ATAN2: return XRT__M_FC;
  case XRT_OP_FLOOR: case XRT_OP_CEIL: case XRT_OP_ROUND_NEAREST_AFZ:
  case XRT_OP_ROUND_NEAREST_EVEN: return XRT__M(XRT__K_FLOAT);
  default: return 0;
  }
}

static bool xrt__is_binary_elementwise(xrt_opcode c) {
  switch (c) {
  case XRT_OP_ADD: case XRT_OP_SUBTRACT: case XRT_OP_MULTIPLY:
  case XRT_OP_DIVIDE: case XRT_OP_REMAINDER: case XRT_OP_MAXIMUM:
  case XRT_OP_MINIMUM: case XRT_OP_POWER: case XRT_OP_AND: case XRT_OP_OR:
  case XRT_OP_XOR: case XRT_OP_SHIFT_LEFT: case XRT_OP_SHIFT_RIGHT_ARITHMETIC:
  case XRT_OP_SHIFT_RIGHT_LOGICAL: case XRT_OP_ATAN2: return true;
  default: return false;
  }
}

static xrt_status xrt__vclass(const xrt__vctx *v, unsigned mask) {
  xrt_dtype t = xrt__operand(v, 0)->dtype;
  if (xrt__vtype(v, v->op->operands[0])->quant) return XRT_OK; /* #3 */
  if (mask & XRT__M(xrt__dtype_class(t))) return XRT_OK;
  return xrt__vfail(v, "element type %s is not allowed", xrt_dtype_name(t));
}

static xrt_status xrt__verify_elementwise(const xrt__vctx *v) {
  bool binary = xrt__is_binary_elementwise(v->op->code);
  xrt_status s = xrt__vcounts(v, binary ? 2 : 1, 1);
  if (s) return s;
  if (binary && (s = xrt__vsame(v, v->op->operands[0], v->op->operands[1],
                                "operand types differ")))
    return s;
  if ((s = xrt__vclass(v, xrt__elementwise_mask(v->op->code)))) return s;
  const xrt_shape *in = xrt__operand(v, 0), *out = xrt__result(v, 0);
  if (v->op->code == XRT_OP_ABS && xrt_dtype_is_complex(in->dtype)) {
    xrt_dtype real = in->dtype == XRT_C64 ? XRT_F32 : XRT_F64;
    if (out->dtype != real || !xrt__same_dims(in, out))
      return xrt__vfail(v, "result of abs of a complex tensor must be its "
                           "real counterpart");
    return XRT_OK;
  }
  return xrt__vsame(v, v->op->operands[0], v->op->results[0],
                    "result type differs from operand type");
}

static const xrt_ir_attr *xrt__vattr(const xrt__vctx *v, const char *name,
                                     int kind) {
  const xrt_ir_attr *a = xrt_ir_op_attr(v->op, name);
  if (a && kind >= 0 && a->kind != kind) return NULL;
  return a;
}

/* An INTS attribute: returns it, or fails with a message. An absent
 * attribute counts as empty when allow_missing is set. */
static xrt_status xrt__vints(const xrt__vctx *v, const char *name,
                             bool allow_missing, const int64_t **ints,
                             int64_t *n) {
  const xrt_ir_attr *a = xrt_ir_op_attr(v->op, name);
  if (!a) {
    if (!allow_missing) return xrt__vfail(v, "missing attribute '%s'", name);
    *ints = NULL, *n = 0;
    return XRT_OK;
  }
  if (a->kind != XRT_ATTR_INTS)
    return xrt__vfail(v, "attribute '%s' must be a list of integers", name);
  *ints = a->ints, *n = a->n;
  return XRT_OK;
}

/* Every entry of dims is a distinct dimension below rank. */
static xrt_status xrt__vdims(const xrt__vctx *v, const char *what,
                             const int64_t *dims, int64_t n, int64_t rank) {
  for (int64_t i = 0; i < n; i++) {
    if (dims[i] < 0 || dims[i] >= rank)
      return xrt__vfail(v, "%s: dimension %" PRId64 " is out of range for "
                        "rank %" PRId64, what, dims[i], rank);
    for (int64_t j = 0; j < i; j++)
      if (dims[j] == dims[i])
        return xrt__vfail(v, "%s: dimension %" PRId64 " appears twice", what,
                          dims[i]);
  }
  return XRT_OK;
}

static xrt_status xrt__verify_compare(const xrt__vctx *v) {
  xrt_status s = xrt__vcounts(v, 2, 1);
  if (s || (s = xrt__vsame(v, v->op->operands[0], v->op->operands[1],
                           "operand types differ")))
    return s;
  const xrt_shape *out = xrt__result(v, 0);
  if (out->dtype != XRT_PRED || !xrt__same_dims(out, xrt__operand(v, 0)))
    return xrt__vfail(v, "result must be i1 of the operands' shape");
  const xrt_ir_attr *d = xrt__vattr(v, "comparison_direction", XRT_ATTR_ENUM);
  static const char *const dirs[] = {"EQ", "NE", "GE", "GT", "LE", "LT"};
  for (size_t i = 0; d && i < XRT__ARRAY_SIZE(dirs); i++)
    if (strcmp(d->s, dirs[i]) == 0) return XRT_OK;
  return xrt__vfail(v, "comparison_direction must be one of EQ, NE, GE, GT, "
                       "LE, LT");
}

static xrt_status xrt__verify_select(const xrt__vctx *v) {
  xrt_status s = xrt__vcounts(v, 3, 1);
  if (s) return s;
  const xrt_shape *p = xrt__operand(v, 0), *out = xrt__result(v, 0);
  if (p->dtype != XRT_PRED || (p->rank != 0 && !xrt__same_dims(p, out)))
    return xrt__vfail(v, "pred must be i1, a scalar or of the result's shape");
  if ((s = xrt__vsame(v, v->op->operands[1], v->op->results[0],
                      "on_true type differs from result type")))
    return s;
  return xrt__vsame(v, v->op->operands[2], v->op->results[0],
                    "on_false type differs from result type");
}

static xrt_status xrt__verify_clamp(const xrt__vctx *v) {
  xrt_status s = xrt__vcounts(v, 3, 1);
  if (s || (s = xrt__vsame(v, v->op->operands[1], v->op->results[0],
                           "operand type differs from result type")))
    return s;
  const xrt_shape *x = xrt__operand(v, 1);
  for (int i = 0; i < 3; i += 2) {
    const xrt_shape *b = xrt__operand(v, i);
    if (b->dtype != x->dtype || (b->rank != 0 && !xrt__same_dims(b, x)))
      return xrt__vfail(v, "%s must be a scalar or of the operand's shape and "
                        "type", i ? "max" : "min");
  }
  return XRT_OK;
}

static xrt_status xrt__verify_convert(const xrt__vctx *v) {
  xrt_status s = xrt__vcounts(v, 1, 1);
  if (s) return s;
  if (!xrt__same_dims(xrt__operand(v, 0), xrt__result(v, 0)))
    return xrt__vfail(v, "operand and result shapes differ");
  return XRT_OK;
}

static xrt_status xrt__verify_bitcast(const xrt__vctx *v) {
  xrt_status s = xrt__vcounts(v, 1, 1);
  if (s) return s;
  const xrt_shape *in = xrt__operand(v, 0), *out = xrt__result(v, 0);
  int bi = xrt_dtype_bits(in->dtype), bo = xrt_dtype_bits(out->dtype);
  bool ok = false;
  if (bi == bo) ok = xrt__same_dims(in, out);
  else if (bi > bo) /* one to many: an extra trailing dimension */
    ok = out->rank == in->rank + 1 && out->dims[in->rank] == bi / bo &&
         bi % bo == 0 && memcmp(in->dims, out->dims,
                                sizeof(int64_t) * (size_t)in->rank) == 0;
  else /* many to one: the operand's trailing dimension disappears */
    ok = in->rank == out->rank + 1 && in->dims[out->rank] == bo / bi &&
         bo % bi == 0 && memcmp(in->dims, out->dims,
                                sizeof(int64_t) * (size_t)out->rank) == 0;
  return ok ? XRT_OK : xrt__vfail(v, "shapes do not fit a bitcast between %s "
                                  "and %s", xrt_dtype_name(in->dtype),
                                  xrt_dtype_name(out->dtype));
}

static xrt_status xrt__verify_iota(const xrt__vctx *v) {
  xrt_status s = xrt__vcounts(v, 0, 1);
  if (s) return s;
  const xrt_ir_attr *d = xrt__vattr(v, "iota_dimension", XRT_ATTR_INT);
  if (!d) return xrt__vfail(v, "missing integer attribute 'iota_dimension'");
  if (d->i < 0 || d->i >= xrt__result(v, 0)->rank)
    return xrt__vfail(v, "iota_dimension %" PRId64 " is out of range", d->i);
  return XRT_OK;
}

static xrt_status xrt__verify_broadcast_in_dim(const xrt__vctx *v) {
  xrt_status s = xrt__vcounts(v, 1, 1);
  const int64_t *dims;
  int64_t n;
  if (s || (s = xrt__vints(v, "broadcast_dimensions", false, &dims, &n)))
    return s;
  const xrt_shape *in = xrt__operand(v, 0), *out = xrt__result(v, 0);
  if (in->dtype != out->dtype) return xrt__vfail(v, "element types differ");
  if (n != in->rank)
    return xrt__vfail(v, "broadcast_dimensions has %" PRId64 " entries for an "
                      "operand of rank %d", n, (int)in->rank);
  if ((s = xrt__vdims(v, "broadcast_dimensions", dims, n, out->rank))) return s;
  for (int64_t i = 0; i < n; i++)
    if (in->dims[i] != 1 && in->dims[i] != out->dims[dims[i]])
      return xrt__vfail(v, "operand dimension %" PRId64 " (size %" PRId64
                        ") does not fit result dimension %" PRId64 " (size %"
                        PRId64 ")", i, in->dims[i], dims[i],
                        out->dims[dims[i]]);
  return XRT_OK;
}

static xrt_status xrt__verify_reshape(const xrt__vctx *v) {
  xrt_status s = xrt__vcounts(v, 1, 1);
  if (s) return s;
  const xrt_shape *in = xrt__operand(v, 0), *out = xrt__result(v, 0);
  if (in->dtype != out->dtype) return xrt__vfail(v, "element types differ");
  if (xrt_shape_numel(in) != xrt_shape_numel(out))
    return xrt__vfail(v, "operand has %" PRId64 " elements, result %" PRId64,
                      xrt_shape_numel(in), xrt_shape_numel(out));
  return XRT_OK;
}

static xrt_status xrt__verify_transpose(const xrt__vctx *v) {
  xrt_status s = xrt__vcounts(v, 1, 1);
  const int64_t *perm;
  int64_t n;
  if (s || (s = xrt__vints(v, "permutation", false, &perm, &n))) return s;
  const xrt_shape *in = xrt__operand(v, 0), *out = xrt__result(v, 0);
  if (n != in->rank || out->rank != in->rank)
    return xrt__vfail(v, "permutation must have one entry per dimension");
  if ((s = xrt__vdims(v, "permutation", perm, n, in->rank))) return s;
  for (int64_t i = 0; i < n; i++)
    if (out->dims[i] != in->dims[perm[i]])
      return xrt__vfail(v, "result dimension %" PRId64 " must be %" PRId64, i,
                        in->dims[perm[i]]);
  return in->dtype == out->dtype ? XRT_OK
                                 : xrt__vfail(v, "element types differ");
}

static xrt_status xrt__verify_slice(const xrt__vctx *v) {
  xrt_status s = xrt__vcounts(v, 1, 1);
  const int64_t *st, *li, *sd;
  int64_t n1, n2, n3;
  if (s || (s = xrt__vints(v, "start_indices", false, &st, &n1)) ||
      (s = xrt__vints(v, "limit_indices", false, &li, &n2)) ||
      (s = xrt__vints(v, "strides", true, &sd, &n3)))
    return s;
  const xrt_shape *in = xrt__operand(v, 0), *out = xrt__result(v, 0);
  if (n1 != in->rank || n2 != in->rank || (sd && n3 != in->rank) ||
      out->rank != in->rank)
    return xrt__vfail(v, "start, limit and strides need one entry per "
                         "dimension");
  for (int64_t i = 0; i < n1; i++) {
    int64_t stride = sd ? sd[i] : 1;
    if (st[i] < 0 || st[i] > li[i] || li[i] > in->dims[i] || stride <= 0)
      return xrt__vfail(v, "dimension %" PRId64 ": slice %" PRId64 ":%" PRId64
                        ":%" PRId64 " is invalid for size %" PRId64, i, st[i],
                        li[i], stride, in->dims[i]);
    if (out->dims[i] != (li[i] - st[i] + stride - 1) / stride)
      return xrt__vfail(v, "result dimension %" PRId64 " has the wrong size",
                        i);
  }
  return in->dtype == out->dtype ? XRT_OK
                                 : xrt__vfail(v, "element types differ");
}

static xrt_status xrt__verify_concatenate(const xrt__vctx *v) {
  xrt_status s = xrt__vcounts(v, -1, 1);
  if (s) return s;
  if (v->op->num_operands < 1) return xrt__vfail(v, "needs an operand");
  const xrt_ir_attr *d = xrt__vattr(v, "dimension", XRT_ATTR_INT);
  const xrt_shape *out = xrt__result(v, 0);
  if (!d || d->i < 0 || d->i >= out->rank)
    return xrt__vfail(v, "dimension attribute is missing or out of range");
  int64_t total = 0;
  for (int i = 0; i < v->op->num_operands; i++) {
    const xrt_shape *in = xrt__operand(v, i);
    if (in->rank != out->rank || in->dtype != out->dtype)
      return xrt__vfail(v, "operand %d differs in rank or element type", i);
    for (int32_t k = 0; k < in->rank; k++)
      if (k != d->i && in->dims[k] != out->dims[k])
        return xrt__vfail(v, "operand %d differs in dimension %d", i, (int)k);
    total += in->dims[d->i];
  }
  if (total != out->dims[d->i])
    return xrt__vfail(v, "result dimension %" PRId64 " must be %" PRId64, d->i,
                      total);
  return XRT_OK;
}

static xrt_status xrt__verify_pad(const xrt__vctx *v) {
  xrt_status s = xrt__vcounts(v, 2, 1);
  const int64_t *lo, *hi, *in_;
  int64_t n1, n2, n3;
  if (s || (s = xrt__vints(v, "edge_padding_low", false, &lo, &n1)) ||
      (s = xrt__vints(v, "edge_padding_high", false, &hi, &n2)) ||
      (s = xrt__vints(v, "interior_padding", true, &in_, &n3)))
    return s;
  const xrt_shape *x = xrt__operand(v, 0), *pv = xrt__operand(v, 1),
                  *out = xrt__result(v, 0);
  if (pv->rank != 0 || pv->dtype != x->dtype || out->dtype != x->dtype)
    return xrt__vfail(v, "padding value must be a scalar of the operand's "
                         "element type");
  if (n1 != x->rank || n2 != x->rank || (in_ && n3 != x->rank) ||
      out->rank != x->rank)
    return xrt__vfail(v, "padding needs one entry per dimension");
  for (int64_t i = 0; i < n1; i++) {
    int64_t interior = in_ ? in_[i] : 0;
    if (interior < 0) return xrt__vfail(v, "interior padding is negative");
    int64_t size = x->dims[i] ? lo[i] + hi[i] + x->dims[i] +
                                    (x->dims[i] - 1) * interior
                              : lo[i] + hi[i];
    if (size < 0 || size != out->dims[i])
      return xrt__vfail(v, "result dimension %" PRId64 " must be %" PRId64, i,
                        size);
  }
  return XRT_OK;
}

static xrt_status xrt__verify_reverse(const xrt__vctx *v) {
  xrt_status s = xrt__vcounts(v, 1, 1);
  const int64_t *dims;
  int64_t n;
  if (s || (s = xrt__vints(v, "dimensions", false, &dims, &n)) ||
      (s = xrt__vdims(v, "dimensions", dims, n, xrt__operand(v, 0)->rank)))
    return s;
  return xrt__vsame(v, v->op->operands[0], v->op->results[0],
                    "result type differs from operand type");
}

/* The region's block arguments and terminator operands have these types. */
static xrt_status xrt__vregion_sig(const xrt__vctx *v, const xrt_ir_region *r,
                                   const char *what, int nargs,
                                   const xrt_ir_type *const *args, int nrets,
                                   const xrt_ir_type *const *rets) {
  if (r->num_args != nargs)
    return xrt__vfail(v, "%s region takes %d argument(s), expected %d", what,
                      (int)r->num_args, nargs);
  for (int i = 0; i < nargs; i++)
    if (args[i] && !xrt__type_equal(&v->func->value_types[r->args[i]], args[i]))
      return xrt__vfail(v, "%s region argument %d has the wrong type", what, i);
  const xrt_ir_op *term = r->num_ops ? &r->ops[r->num_ops - 1] : NULL;
  if (!term || term->num_operands != nrets)
    return xrt__vfail(v, "%s region must return %d value(s)", what, nrets);
  for (int i = 0; i < nrets; i++)
    if (rets[i] &&
        !xrt__type_equal(&v->func->value_types[term->operands[i]], rets[i]))
      return xrt__vfail(v, "%s region returns a value of the wrong type at "
                        "position %d", what, i);
  return XRT_OK;
}

static xrt_status xrt__verify_reduce(const xrt__vctx *v) {
  const xrt_ir_op *op = v->op;
  int n = op->num_results;
  xrt_status s = xrt__vcounts(v, 2 * n, n);
  const int64_t *dims;
  int64_t nd;
  if (s || (s = xrt__vints(v, "dimensions", false, &dims, &nd))) return s;
  if (n < 1 || op->num_regions != 1)
    return xrt__vfail(v, "needs at least one input and one body region");
  const xrt_shape *in0 = xrt__operand(v, 0);
  if ((s = xrt__vdims(v, "dimensions", dims, nd, in0->rank))) return s;
  const xrt_ir_type *sig[64];
  if (2 * n > 64) return xrt__vfail(v, "too many operands");
  for (int i = 0; i < n; i++) {
    const xrt_shape *in = xrt__operand(v, i), *init = xrt__operand(v, n + i),
                    *out = xrt__result(v, i);
    if (!xrt__same_dims(in, in0))
      return xrt__vfail(v, "inputs differ in shape");
    if (init->rank != 0 || init->dtype != out->dtype)
      return xrt__vfail(v, "init value %d must be a scalar of result %d's "
                        "element type", i, i);
    int32_t k = 0;
    for (int32_t d = 0; d < in->rank; d++) {
      bool reduced = false;
      for (int64_t j = 0; j < nd; j++) reduced |= dims[j] == d;
      if (reduced) continue;
      if (k >= out->rank || out->dims[k] != in->dims[d])
        return xrt__vfail(v, "result %d has the wrong shape", i);
      k++;
    }
    if (k != out->rank) return xrt__vfail(v, "result %d has the wrong rank", i);
    sig[i] = sig[n + i] = xrt__vtype(v, op->operands[n + i]);
  }
  return xrt__vregion_sig(v, &op->regions[0], "body", 2 * n, sig, n, sig);
}

static xrt_status xrt__dot_dims(const xrt__vctx *v, const char *name,
                                const int64_t **ints, int64_t *n) {
  const xrt_ir_attr *dn = xrt_ir_op_attr(v->op, "dot_dimension_numbers");
  const xrt_ir_attr *a = xrt_ir_attr_field(dn, name);
  *ints = NULL, *n = 0;
  if (!a) return XRT_OK;
  if (a->kind != XRT_ATTR_INTS)
    return xrt__vfail(v, "%s must be a list of integers", name);
  *ints = a->ints, *n = a->n;
  return XRT_OK;
}

static xrt_status xrt__verify_dot_general(const xrt__vctx *v) {
  xrt_status s = xrt__vcounts(v, 2, 1);
  const int64_t *lb, *rb, *lc, *rc;
  int64_t nlb, nrb, nlc, nrc;
  if (s || (s = xrt__dot_dims(v, "lhs_batching_dimensions", &lb, &nlb)) ||
      (s = xrt__dot_dims(v, "rhs_batching_dimensions", &rb, &nrb)) ||
      (s = xrt__dot_dims(v, "lhs_contracting_dimensions", &lc, &nlc)) ||
      (s = xrt__dot_dims(v, "rhs_contracting_dimensions", &rc, &nrc)))
    return s;
  const xrt_shape *l = xrt__operand(v, 0), *r = xrt__operand(v, 1),
                  *out = xrt__result(v, 0);
  if (nlb != nrb || nlc != nrc)
    return xrt__vfail(v, "lhs and rhs need as many batching and contracting "
                         "dimensions");
  int64_t ld[2 * XRT_MAX_RANK], rd[2 * XRT_MAX_RANK];
  if (nlb + nlc > XRT_MAX_RANK || nrb + nrc > XRT_MAX_RANK)
    return xrt__vfail(v, "too many dimensions");
  for (int64_t i = 0; i < nlb; i++) ld[i] = lb[i], rd[i] = rb[i];
  for (int64_t i = 0; i < nlc; i++) ld[nlb + i] = lc[i], rd[nrb + i] = rc[i];
  if ((s = xrt__vdims(v, "lhs dimensions", ld, nlb + nlc, l->rank)) ||
      (s = xrt__vdims(v, "rhs dimensions", rd, nrb + nrc, r->rank)))
    return s;
  for (int64_t i = 0; i < nlb + nlc; i++)
    if (l->dims[ld[i]] != r->dims[rd[i]])
      return xrt__vfail(v, "%s dimension sizes differ: lhs dimension %" PRId64
                        " is %" PRId64 ", rhs dimension %" PRId64 " is %"
                        PRId64, i < nlb ? "batching" : "contracting", ld[i],
                        l->dims[ld[i]], rd[i], r->dims[rd[i]]);
  /* Expected result: batch dims, lhs free dims, rhs free dims. */
  int64_t want[XRT_MAX_RANK * 2];
  int k = 0;
  for (int64_t i = 0; i < nlb; i++) want[k++] = l->dims[lb[i]];
  for (int side = 0; side < 2; side++) {
    const xrt_shape *x = side ? r : l;
    const int64_t *used = side ? rd : ld;
    int64_t nused = side ? nrb + nrc : nlb + nlc;
    for (int32_t d = 0; d < x->rank; d++) {
      bool u = false;
      for (int64_t j = 0; j < nused; j++) u |= used[j] == d;
      if (!u) want[k++] = x->dims[d];
    }
  }
  bool ok = out->rank == k;
  for (int i = 0; ok && i < k; i++) ok = out->dims[i] == want[i];
  if (!ok) return xrt__vfail(v, "result shape does not follow from the "
                                "operands and dimension numbers");
  if (l->dtype != r->dtype && !(xrt__vtype(v, v->op->operands[0])->quant ||
                                xrt__vtype(v, v->op->operands[1])->quant))
    return xrt__vfail(v, "lhs and rhs element types differ (%s vs %s)",
                      xrt_dtype_name(l->dtype), xrt_dtype_name(r->dtype));
  return XRT_OK;
}

static xrt_status xrt__verify_while(const xrt__vctx *v) {
  const xrt_ir_op *op = v->op;
  int n = op->num_operands;
  if (op->num_results != n || op->num_regions != 2)
    return xrt__vfail(v, "needs as many results as operands and two regions");
  const xrt_ir_type *sig[256];
  if (n > 256) return xrt__vfail(v, "too many loop values");
  for (int i = 0; i < n; i++) {
    xrt_status s = xrt__vsame(v, op->operands[i], op->results[i],
                              "loop value type differs from result type");
    if (s) return s;
    sig[i] = xrt__vtype(v, op->operands[i]);
  }
  xrt_status s = xrt__vregion_sig(v, &op->regions[0], "cond", n, sig, 1,
                                  (const xrt_ir_type *[]){NULL});
  if (s) return s;
  const xrt_ir_region *c = &op->regions[0];
  const xrt_ir_type *ct =
      &v->func->value_types[c->ops[c->num_ops - 1].operands[0]];
  if (ct->kind != XRT_TYPE_TENSOR || ct->shape.dtype != XRT_PRED ||
      ct->shape.rank != 0)
    return xrt__vfail(v, "cond region must return tensor<i1>");
  return xrt__vregion_sig(v, &op->regions[1], "body", n, sig, n, sig);
}

static xrt_status xrt__verify_call(const xrt__vctx *v) {
  const xrt_ir_op *op = v->op;
  if (op->callee < 0 || op->callee >= v->module->num_funcs)
    return xrt__vfail(v, "callee is not a function of this module");
  const xrt_ir_func *f = &v->module->funcs[op->callee];
  if (op->num_operands != f->body.num_args || op->num_results != f->num_results)
    return xrt__vfail(v, "@%s takes %d argument(s) and returns %d", f->name,
                      (int)f->body.num_args, (int)f->num_results);
  for (int i = 0; i < op->num_operands; i++)
    if (!xrt__type_equal(xrt__vtype(v, op->operands[i]),
                         &f->value_types[f->body.args[i]]))
      return xrt__vfail(v, "argument %d has the wrong type for @%s", i,
                        f->name);
  for (int i = 0; i < op->num_results; i++)
    if (!xrt__type_equal(xrt__vtype(v, op->results[i]), &f->result_types[i]))
      return xrt__vfail(v, "result %d has the wrong type for @%s", i, f->name);
  return XRT_OK;
}

static xrt_status xrt__verify_constant(const xrt__vctx *v) {
  xrt_status s = xrt__vcounts(v, 0, 1);
  if (s) return s;
  const xrt_ir_attr *a = xrt__vattr(v, "value", XRT_ATTR_DENSE);
  if (!a || !a->lit) return xrt__vfail(v, "missing dense attribute 'value'");
  if (!xrt__shape_equal(&a->lit->type.shape, xrt__result(v, 0)))
    return xrt__vfail(v, "value type differs from result type");
  return XRT_OK;
}

static xrt_status xrt__verify_custom_call(const xrt__vctx *v) {
  const xrt_ir_attr *t = xrt__vattr(v, "call_target_name", XRT_ATTR_STRING);
  if (!t) return xrt__vfail(v, "missing string attribute 'call_target_name'");
  return XRT_OK;
}

/* Op families with their own files (inlined before release). */
#include "_dev/verify_index.inc"
#include "_dev/verify_ctrl.inc"
#include "_dev/verify_linalg.inc"
#include "_dev/verify_types.inc"

/* is_finite, real, imag: a float or complex operand, the result's element
 * type as the spec derives it, and the operand's shape. */
static xrt_status xrt__verify_float_unary(const xrt__vctx *v) {
  xrt_status s = xrt__vcounts(v, 1, 1);
  if (s) return s;
  const xrt_shape *in = xrt__operand(v, 0), *out = xrt__result(v, 0);
  xrt_dtype t = in->dtype, want;
  bool cplx = xrt_dtype_is_complex(t);
  if (!cplx && !xrt_dtype_is_float(t) && !xrt__vtype(v, v->op->operands[0])->quant)
    return xrt__vfail(v, "operand must be a float or complex tensor, not %s",
                      xrt_dtype_name(t));
  if (v->op->code == XRT_OP_IS_FINITE) {
    if (cplx) return xrt__vfail(v, "operand must be a float tensor");
    want = XRT_PRED;
  } else {
    want = t == XRT_C64 ? XRT_F32 : t == XRT_C128 ? XRT_F64 : t;
  }
  if (out->dtype != want || !xrt__same_dims(in, out))
    return xrt__vfail(v, "result must be tensor of %s with the operand's shape",
                      xrt_dtype_name(want));
  return XRT_OK;
}

static xrt_status xrt__verify_complex(const xrt__vctx *v) {
  xrt_status s = xrt__vcounts(v, 2, 1);
  if (s || (s = xrt__vsame(v, v->op->operands[0], v->op->operands[1],
                           "operand types differ")))
    return s;
  const xrt_shape *in = xrt__operand(v, 0), *out = xrt__result(v, 0);
  xrt_dtype want = in->dtype == XRT_F32 ? XRT_C64
                 : in->dtype == XRT_F64 ? XRT_C128 : XRT_DTYPE_INVALID;
  if (!want) return xrt__vfail(v, "operands must be f32 or f64");
  if (out->dtype != want || !xrt__same_dims(in, out))
    return xrt__vfail(v, "result must be tensor of %s with the operands' shape",
                      xrt_dtype_name(want));
  return XRT_OK;
}

static xrt_status xrt__verify_op(xrt__vctx *v) {
  switch (v->op->code) {
  case XRT_OP_IS_FINITE: case XRT_OP_REAL: case XRT_OP_IMAG:
    return xrt__verify_float_unary(v);
  case XRT_OP_COMPLEX: return xrt__verify_complex(v);
  case XRT_OP_REPLICA_ID: case XRT_OP_PARTITION_ID: {
    xrt_status s = xrt__vcounts(v, 0, 1);
    const xrt_shape *r = s ? NULL : xrt__result(v, 0);
    if (!s && (r->rank != 0 || r->dtype != XRT_U32))
      s = xrt__vfail(v, "result must be tensor<ui32>");
    return s;
  }
  case XRT_OP_COMPARE: return xrt__verify_compare(v);
  case XRT_OP_SELECT: return xrt__verify_select(v);
  case XRT_OP_CLAMP: return xrt__verify_clamp(v);
  case XRT_OP_CONVERT: return xrt__verify_convert(v);
  case XRT_OP_BITCAST_CONVERT: return xrt__verify_bitcast(v);
  case XRT_OP_IOTA: return xrt__verify_iota(v);
  case XRT_OP_BROADCAST_IN_DIM: return xrt__verify_broadcast_in_dim(v);
  case XRT_OP_RESHAPE: return xrt__verify_reshape(v);
  case XRT_OP_TRANSPOSE: return xrt__verify_transpose(v);
  case XRT_OP_SLICE: return xrt__verify_slice(v);
  case XRT_OP_CONCATENATE: return xrt__verify_concatenate(v);
  case XRT_OP_PAD: return xrt__verify_pad(v);
  case XRT_OP_REVERSE: return xrt__verify_reverse(v);
  case XRT_OP_REDUCE: return xrt__verify_reduce(v);
  case XRT_OP_DOT_GENERAL: return xrt__verify_dot_general(v);
  case XRT_OP_WHILE: return xrt__verify_while(v);
  case XRT_OP_FUNC_CALL: return xrt__verify_call(v);
  case XRT_OP_CONSTANT: return xrt__verify_constant(v);
  case XRT_OP_CUSTOM_CALL: return xrt__verify_custom_call(v);
  default: {
    xrt_status s = XRT_OK;
    if (xrt__elementwise_mask(v->op->code)) {
      /* quantized operands have further rules in the types family */
      s = xrt__verify_elementwise(v);
      return s ? s : xrt__verify_types(v);
    }
    s = xrt__verify_index(v);
    if (!s) s = xrt__verify_ctrl(v);
    if (!s) s = xrt__verify_linalg(v);
    if (!s) s = xrt__verify_types(v);
    return s;
  }
  }
}

static bool xrt__is_terminator(xrt_opcode c) {
  return c == XRT_OP_RETURN || c == XRT_OP_FUNC_RETURN;
}

static xrt_status xrt__verify_region(xrt__vctx *v, const xrt_ir_region *r,
                                     int depth) {
  if (depth > 256) return xrt__vfail(v, "regions are nested too deeply");
  for (int32_t i = 0; i < r->num_ops; i++) {
    const xrt_ir_op *op = &r->ops[i];
    v->op = op;
    bool last = i == r->num_ops - 1;
    if (xrt__is_terminator(op->code) != last)
      return xrt__vfail(v, last ? "a region must end with a return"
                                : "a return must be the last op of its region");
    xrt_status s = xrt__verify_op(v);
    if (s) return s;
    for (int32_t k = 0; k < op->num_regions; k++) {
      if ((s = xrt__verify_region(v, &op->regions[k], depth + 1))) return s;
      v->op = op;
    }
  }
  if (r->num_ops == 0) return xrt__fail(XRT_INVALID_ARGUMENT,
                                        "%s:%d:%d: empty region in @%s",
                                        v->func->loc.file, (int)v->func->loc.line,
                                        (int)v->func->loc.col, v->func->name);
  return XRT_OK;
}

static xrt_status xrt__verify_func(xrt__vctx *v) {
  const xrt_ir_func *f = v->func;
  xrt_status s = xrt__verify_region(v, &f->body, 0);
  if (s) return s;
  const xrt_ir_op *ret = &f->body.ops[f->body.num_ops - 1];
  v->op = ret;
  if (ret->num_operands != f->num_results)
    return xrt__vfail(v, "@%s returns %d value(s) but is declared with %d",
                      f->name, (int)ret->num_operands, (int)f->num_results);
  for (int32_t i = 0; i < f->num_results; i++)
    if (!xrt__type_equal(&f->value_types[ret->operands[i]],
                         &f->result_types[i]))
      return xrt__vfail(v, "returned value %d of @%s has the wrong type",
                        (int)i, f->name);
  return XRT_OK;
}

static xrt_status xrt__verify_module(const xrt_ir_module *m) {
  xrt__vctx v = {m, NULL, NULL};
  for (int32_t i = 0; i < m->num_funcs; i++) {
    v.func = &m->funcs[i];
    xrt_status s = xrt__verify_func(&v);
    if (s) return s;
  }
  return XRT_OK;
}


/* ======================================================================
 * 7. Plugins
 *
 * A device is reached only through an xrt_plugin_api table.  The simulator
 * registers itself when xrt_sim.c is linked in: with XRT_WITH_SIM defined
 * the reference is strong (what the Makefile does, so that a static archive
 * pulls the simulator in); otherwise on GCC/Clang it is weak, so copying
 * xrt.c alone still links, and copying xrt_sim.c beside it enables it.
 * ==================================================================== */

#if defined(XRT_WITH_SIM)
#define XRT__SIM_LINKED() 1
#elif defined(__GNUC__) && !defined(XRT_NO_SIM) && !defined(_WIN32)
#pragma weak xrt_sim_plugin_api
/* A weak function's address is NULL when nothing defines it. */
static bool xrt__sim_linked(void) {
  const xrt_plugin_api *(*volatile fn)(void) = xrt_sim_plugin_api;
  return fn != NULL;
}
#define XRT__SIM_LINKED() xrt__sim_linked()
#endif

static const xrt_plugin_api *xrt__builtin_plugin(const char *name) {
#ifdef XRT__SIM_LINKED
  if (strcmp(name, "sim") == 0 && XRT__SIM_LINKED()) return xrt_sim_plugin_api();
#else
  XRT__UNUSED(name);
#endif
  return NULL;
}

/* The fields of a plugin table that the core calls unconditionally. */
static xrt_status xrt__plugin_validate(const xrt_plugin_api *api,
                                       const char *name) {
  if (!api || api->struct_size < sizeof(xrt_plugin_api))
    return xrt__fail(XRT_FAILED_PRECONDITION, "plugin '%s' has a table of "
                     "unexpected size", name);
  if (api->abi_major != XRT_PLUGIN_ABI_MAJOR)
    return xrt__fail(XRT_FAILED_PRECONDITION, "plugin '%s' has ABI %u.%u, xrt "
                     "needs major version %d", name, api->abi_major,
                     api->abi_minor, XRT_PLUGIN_ABI_MAJOR);
  if (!api->client_create || !api->client_destroy || !api->device_count ||
      !api->device_describe || !api->buffer_alloc || !api->buffer_free ||
      !api->buffer_write || !api->buffer_read || !api->buffer_copy ||
      !api->compile || !api->executable_destroy || !api->execute)
    return xrt__fail(XRT_FAILED_PRECONDITION, "plugin '%s' lacks a required "
                     "function", name);
  return XRT_OK;
}

/* ======================================================================
 * 8. Handles
 *
 * Public object pointers are handles, not addresses: an index into a
 * process-wide slot table plus the slot's generation.  A released or
 * foreign handle fails the lookup instead of touching freed memory, which is
 * how xrt turns use-after-release into XRT_INVALID_ARGUMENT.  Slots live in
 * chunks that never move, so lookups take no lock.
 * ==================================================================== */

enum { XRT__H_FREE = 0, XRT__H_CLIENT, XRT__H_DEVICE, XRT__H_BUFFER,
       XRT__H_PROGRAM, XRT__H_EXECUTABLE };

#define XRT__HCHUNK 4096u
#define XRT__HMAXCHUNKS 4096u
#define XRT__HIDX_BITS 24u /* 16M live handles */
#define XRT__HIDX_MASK ((1u << XRT__HIDX_BITS) - 1u)
#define XRT__HGEN_MASK ((uint64_t)(UINTPTR_MAX >> XRT__HIDX_BITS))

typedef struct xrt__hslot {
  _Atomic uint64_t tag; /* generation << 8 | kind */
  void *obj;
  uint32_t next_free;
} xrt__hslot;

static _Atomic(xrt__hslot *) xrt__hchunks[XRT__HMAXCHUNKS];
static pthread_mutex_t xrt__hmu = PTHREAD_MUTEX_INITIALIZER;
static uint32_t xrt__hcount;
static uint32_t xrt__hfree = UINT32_MAX;

static xrt__hslot *xrt__hslot_at(uint32_t idx) {
  xrt__hslot *c = atomic_load_explicit(&xrt__hchunks[idx / XRT__HCHUNK],
                                       memory_order_acquire);
  return c ? &c[idx % XRT__HCHUNK] : NULL;
}

/* Takes a free slot index (under xrt__hmu); UINT32_MAX when full. */
static uint32_t xrt__hslot_take(void) {
  if (xrt__hfree != UINT32_MAX) {
    uint32_t idx = xrt__hfree;
    xrt__hfree = xrt__hslot_at(idx)->next_free;
    return idx;
  }
  if (xrt__hcount >= XRT__HIDX_MASK) return UINT32_MAX;
  uint32_t chunk = xrt__hcount / XRT__HCHUNK;
  if (xrt__hcount % XRT__HCHUNK == 0) {
    /* Handle chunks are process-wide and live until exit. */
    xrt__hslot *c = (xrt__hslot *)calloc(XRT__HCHUNK, sizeof(xrt__hslot));
    if (!c) return UINT32_MAX;
    atomic_store_explicit(&xrt__hchunks[chunk], c, memory_order_release);
  }
  return xrt__hcount++;
}

/* Registers obj; returns its handle, or 0 when out of memory. */
static uintptr_t xrt__hnew(void *obj, int kind) {
  pthread_mutex_lock(&xrt__hmu);
  uint32_t idx = xrt__hslot_take();
  uintptr_t h = 0;
  if (idx != UINT32_MAX) {
    xrt__hslot *s = xrt__hslot_at(idx);
    uint64_t gen = ((atomic_load(&s->tag) >> 8) + 1) & XRT__HGEN_MASK;
    if (gen == 0) gen = 1;
    s->obj = obj;
    atomic_store_explicit(&s->tag, gen << 8 | (uint64_t)kind,
                          memory_order_release);
    h = (uintptr_t)(gen << XRT__HIDX_BITS) | (uintptr_t)(idx + 1);
  }
  pthread_mutex_unlock(&xrt__hmu);
  return h;
}

static void *xrt__hget(const void *handle, int kind) {
  uintptr_t h = (uintptr_t)handle;
  uint32_t idx = (uint32_t)(h & XRT__HIDX_MASK);
  if (idx == 0 || idx - 1 >= XRT__HCHUNK * XRT__HMAXCHUNKS) return NULL;
  xrt__hslot *s = xrt__hslot_at(idx - 1);
  if (!s) return NULL;
  uint64_t want = (uint64_t)(h >> XRT__HIDX_BITS) << 8 | (uint64_t)kind;
  if (atomic_load_explicit(&s->tag, memory_order_acquire) != want) return NULL;
  return s->obj;
}

/* Invalidates a handle (the generation stays, so old copies fail). */
static void xrt__hfree_handle(uintptr_t h) {
  if (!h) return;
  uint32_t idx = (uint32_t)(h & XRT__HIDX_MASK) - 1;
  pthread_mutex_lock(&xrt__hmu);
  xrt__hslot *s = xrt__hslot_at(idx);
  uint64_t tag = atomic_load(&s->tag);
  atomic_store_explicit(&s->tag, tag & ~(uint64_t)0xff, memory_order_release);
  s->obj = NULL;
  s->next_free = xrt__hfree;
  xrt__hfree = idx;
  pthread_mutex_unlock(&xrt__hmu);
}

/* ======================================================================
 * 9. Clients and devices
 * ==================================================================== */

typedef struct xrt__client xrt__client;

typedef struct xrt__device {
  xrt__client *client;
  int index;
  uintptr_t handle;
  xrt_plugin_device_desc desc;
} xrt__device;

typedef struct xrt__host_entry {
  char *target;
  xrt_host_fn fn;
  void *user;
} xrt__host_entry;

/* Live objects of a client, so that client release can free them. */
typedef struct xrt__link {
  struct xrt__link *prev, *next;
} xrt__link;

struct xrt__client {
  xrt_allocator allocator;
  const xrt_plugin_api *api;
  void *pc; /* the plugin's client */
  int num_devices;
  xrt__device *devices;
  uintptr_t handle;
  pthread_mutex_t mu; /* guards the lists and the host registry */
  xrt__link buffers, executables;
  xrt__host_entry *hosts;
  int num_hosts, cap_hosts;
};

static void xrt__link_init(xrt__link *l) { l->prev = l->next = l; }
static void xrt__link_add(xrt__link *head, xrt__link *l) {
  l->next = head->next;
  l->prev = head;
  head->next->prev = l;
  head->next = l;
}
static void xrt__link_remove(xrt__link *l) {
  l->prev->next = l->next;
  l->next->prev = l->prev;
  l->prev = l->next = l;
}

static xrt__client *xrt__client_get(const xrt_client *c) {
  return (xrt__client *)xrt__hget(c, XRT__H_CLIENT);
}
static xrt__device *xrt__device_get(const xrt_device *d) {
  return (xrt__device *)xrt__hget(d, XRT__H_DEVICE);
}

void xrt_client_options_init(xrt_client_options *o) {
  if (!o) return;
  memset(o, 0, sizeof *o);
  o->plugin = "sim";
  o->num_devices = 1;
  o->device_memory_bytes = (uint64_t)4 << 30;
  o->allocator = xrt_allocator_system();
}

static xrt_status xrt_host_register_builtins(xrt__client *c);
static void xrt__client_free(xrt__client *c);

static xrt_status xrt__client_devices(xrt__client *c) {
  int n = c->api->device_count(c->pc);
  if (n <= 0 || n > 65536)
    return xrt__fail(XRT_INTERNAL, "plugin '%s' reports %d devices",
                     c->api->name, n);
  c->devices = (xrt__device *)xrt__calloc(&c->allocator, (size_t)n,
                                          sizeof(xrt__device));
  if (!c->devices) return xrt__fail(XRT_RESOURCE_EXHAUSTED, "out of memory");
  c->num_devices = n;
  for (int i = 0; i < n; i++) {
    xrt__device *d = &c->devices[i];
    xrt_plugin_error err = {{0}};
    d->client = c;
    d->index = i;
    d->desc.struct_size = sizeof d->desc;
    xrt_status s = c->api->device_describe(c->pc, i, &d->desc, &err);
    if (s) return xrt__fail_plugin(s, c->api->name, &err);
    if (!d->desc.kind) d->desc.kind = c->api->name;
    d->handle = xrt__hnew(d, XRT__H_DEVICE);
    if (!d->handle) return xrt__fail(XRT_RESOURCE_EXHAUSTED, "out of handles");
  }
  return XRT_OK;
}

static xrt_status xrt__client_open(xrt__client *c,
                                   const xrt_client_options *o) {
  const char *name = o->plugin ? o->plugin : "sim";
  c->api = xrt__builtin_plugin(name);
  if (!c->api)
    return xrt__fail(XRT_NOT_FOUND, "no device plugin named '%s' is built in",
                     name);
  xrt_status s = xrt__plugin_validate(c->api, name);
  if (s) return s;
  xrt_plugin_client_args args = {sizeof args, o->num_devices,
                                 o->device_memory_bytes, c->allocator};
  xrt_plugin_error err = {{0}};
  if ((s = c->api->client_create(&args, &c->pc, &err)))
    return xrt__fail_plugin(s, name, &err);
  if ((s = xrt__client_devices(c))) return s;
  if ((s = xrt_host_register_builtins(c))) return s;
  c->handle = xrt__hnew(c, XRT__H_CLIENT);
  if (!c->handle) return xrt__fail(XRT_RESOURCE_EXHAUSTED, "out of handles");
  return XRT_OK;
}

xrt_status xrt_client_create(const xrt_client_options *options,
                             xrt_client **out_client) {
  XRT__CHECK_ARG(out_client, "out_client is NULL");
  *out_client = NULL;
  xrt_client_options o;
  xrt_client_options_init(&o);
  if (options) o = *options;
  if (!o.allocator.alloc || !o.allocator.free)
    return xrt__fail(XRT_INVALID_ARGUMENT, "allocator lacks alloc or free");
  if (o.num_devices < 1 || o.num_devices > 1024)
    return xrt__fail(XRT_INVALID_ARGUMENT, "num_devices must be in 1..1024, "
                     "got %d", o.num_devices);
  if (o.device_memory_bytes == 0)
    return xrt__fail(XRT_INVALID_ARGUMENT, "device_memory_bytes is 0");
  xrt__client *c = (xrt__client *)xrt__calloc(&o.allocator, 1, sizeof *c);
  if (!c) return xrt__fail(XRT_RESOURCE_EXHAUSTED, "out of memory");
  c->allocator = o.allocator;
  pthread_mutex_init(&c->mu, NULL);
  xrt__link_init(&c->buffers);
  xrt__link_init(&c->executables);
  xrt_status s = xrt__client_open(c, &o);
  if (s) {
    xrt__client_free(c);
    return s;
  }
  *out_client = (xrt_client *)c->handle;
  return XRT_OK;
}

const char *xrt_client_platform(const xrt_client *client) {
  xrt__client *c = xrt__client_get(client);
  return c ? c->api->name : NULL;
}

int xrt_client_device_count(const xrt_client *client) {
  xrt__client *c = xrt__client_get(client);
  return c ? c->num_devices : -1;
}

xrt_device *xrt_client_device(xrt_client *client, int index) {
  xrt__client *c = xrt__client_get(client);
  if (!c) {
    xrt__fail(XRT_INVALID_ARGUMENT, "xrt_client_device: invalid client");
    return NULL;
  }
  if (index < 0 || index >= c->num_devices) {
    xrt__fail(XRT_OUT_OF_RANGE, "device index %d is outside 0..%d", index,
              c->num_devices - 1);
    return NULL;
  }
  return (xrt_device *)c->devices[index].handle;
}

int xrt_device_id(const xrt_device *device) {
  xrt__device *d = xrt__device_get(device);
  return d ? d->index : -1;
}

const char *xrt_device_kind(const xrt_device *device) {
  xrt__device *d = xrt__device_get(device);
  return d ? d->desc.kind : NULL;
}

int xrt_device_attribute_count(const xrt_device *device) {
  xrt__device *d = xrt__device_get(device);
  return d ? d->desc.num_attributes : -1;
}

xrt_status xrt_device_attribute_get(const xrt_device *device, int index,
                                    xrt_attribute *out) {
  xrt__device *d = xrt__device_get(device);
  XRT__CHECK_ARG(d, "invalid device");
  XRT__CHECK_ARG(out, "out is NULL");
  if (index < 0 || index >= d->desc.num_attributes)
    return xrt__fail(XRT_OUT_OF_RANGE, "attribute index %d is outside 0..%d",
                     index, d->desc.num_attributes - 1);
  *out = d->desc.attributes[index];
  return XRT_OK;
}

xrt_status xrt_device_attribute_find(const xrt_device *device,
                                     const char *name, xrt_attribute *out) {
  xrt__device *d = xrt__device_get(device);
  XRT__CHECK_ARG(d, "invalid device");
  XRT__CHECK_ARG(name && out, "name or out is NULL");
  for (int i = 0; i < d->desc.num_attributes; i++)
    if (d->desc.attributes[i].name &&
        strcmp(d->desc.attributes[i].name, name) == 0) {
      *out = d->desc.attributes[i];
      return XRT_OK;
    }
  return xrt__fail(XRT_NOT_FOUND, "device %d has no attribute '%s'", d->index,
                   name);
}

/* ======================================================================
 * 10. Buffers
 * ==================================================================== */

typedef struct xrt__buffer {
  xrt__link link; /* first: the client's list */
  xrt__client *client;
  int device;
  xrt_shape shape;
  size_t bytes;
  void *mem;
  uintptr_t handle;
} xrt__buffer;

static xrt__buffer *xrt__buffer_get(const xrt_buffer *b) {
  return (xrt__buffer *)xrt__hget(b, XRT__H_BUFFER);
}

/* Allocates device memory and the buffer object around it. */
static xrt_status xrt__buffer_new(xrt__client *c, int device,
                                  const xrt_shape *shape, size_t bytes,
                                  xrt__buffer **out) {
  xrt__buffer *b = (xrt__buffer *)xrt__alloc(&c->allocator, sizeof *b);
  if (!b) return xrt__fail(XRT_RESOURCE_EXHAUSTED, "out of host memory");
  memset(b, 0, sizeof *b);
  b->client = c;
  b->device = device;
  b->shape = *shape;
  b->bytes = bytes;
  xrt_plugin_error err = {{0}};
  xrt_status s = c->api->buffer_alloc(c->pc, device, bytes, &b->mem, &err);
  if (s) {
    xrt__free(&c->allocator, b);
    return xrt__fail_plugin(s, c->api->name, &err);
  }
  b->handle = xrt__hnew(b, XRT__H_BUFFER);
  if (!b->handle) {
    c->api->buffer_free(c->pc, device, b->mem);
    xrt__free(&c->allocator, b);
    return xrt__fail(XRT_RESOURCE_EXHAUSTED, "out of handles");
  }
  pthread_mutex_lock(&c->mu);
  xrt__link_add(&c->buffers, &b->link);
  pthread_mutex_unlock(&c->mu);
  *out = b;
  return XRT_OK;
}

/* Frees a buffer whose handle is still registered. */
static void xrt__buffer_destroy(xrt__buffer *b, bool unlink) {
  xrt__client *c = b->client;
  xrt__hfree_handle(b->handle);
  if (unlink) {
    pthread_mutex_lock(&c->mu);
    xrt__link_remove(&b->link);
    pthread_mutex_unlock(&c->mu);
  }
  c->api->buffer_free(c->pc, b->device, b->mem);
  xrt__free(&c->allocator, b);
}

xrt_status xrt_buffer_from_host(xrt_client *client, xrt_device *device,
                                const xrt_shape *shape, const void *data,
                                xrt_buffer **out_buffer) {
  XRT__CHECK_ARG(out_buffer, "out_buffer is NULL");
  *out_buffer = NULL;
  xrt__client *c = xrt__client_get(client);
  xrt__device *d = xrt__device_get(device);
  XRT__CHECK_ARG(c, "invalid client");
  XRT__CHECK_ARG(d, "invalid device");
  XRT__CHECK_ARG(d->client == c, "device belongs to another client");
  XRT__CHECK_ARG(shape, "shape is NULL");
  size_t bytes = 0;
  xrt_status s = xrt__shape_check(shape, &bytes);
  if (s) return s;
  XRT__CHECK_ARG(data || bytes == 0, "data is NULL");
  xrt__buffer *b;
  if ((s = xrt__buffer_new(c, d->index, shape, bytes, &b))) return s;
  xrt_plugin_error err = {{0}};
  if (bytes && (s = c->api->buffer_write(c->pc, d->index, b->mem, data, bytes,
                                         &err))) {
    xrt__buffer_destroy(b, true);
    return xrt__fail_plugin(s, c->api->name, &err);
  }
  *out_buffer = (xrt_buffer *)b->handle;
  return XRT_OK;
}

xrt_status xrt_buffer_to_host(xrt_buffer *buffer, void *dst,
                              size_t dst_bytes) {
  xrt__buffer *b = xrt__buffer_get(buffer);
  XRT__CHECK_ARG(b, "invalid or released buffer");
  XRT__CHECK_ARG(dst || b->bytes == 0, "dst is NULL");
  if (dst_bytes < b->bytes)
    return xrt__fail(XRT_INVALID_ARGUMENT, "destination holds %zu bytes, the "
                     "buffer has %zu", dst_bytes, b->bytes);
  if (!b->bytes) return XRT_OK;
  xrt_plugin_error err = {{0}};
  xrt__client *c = b->client;
  xrt_status s = c->api->buffer_read(c->pc, b->device, b->mem, dst, b->bytes,
                                     &err);
  return s ? xrt__fail_plugin(s, c->api->name, &err) : XRT_OK;
}

xrt_status xrt_buffer_copy_to_device(xrt_buffer *buffer, xrt_device *device,
                                     xrt_buffer **out_buffer) {
  XRT__CHECK_ARG(out_buffer, "out_buffer is NULL");
  *out_buffer = NULL;
  xrt__buffer *b = xrt__buffer_get(buffer);
  xrt__device *d = xrt__device_get(device);
  XRT__CHECK_ARG(b, "invalid or released buffer");
  XRT__CHECK_ARG(d, "invalid device");
  XRT__CHECK_ARG(d->client == b->client, "device belongs to another client");
  xrt__client *c = b->client;
  xrt__buffer *nb;
  xrt_status s = xrt__buffer_new(c, d->index, &b->shape, b->bytes, &nb);
  if (s) return s;
  xrt_plugin_error err = {{0}};
  if (b->bytes && (s = c->api->buffer_copy(c->pc, b->device, b->mem, d->index,
                                           nb->mem, b->bytes, &err))) {
    xrt__buffer_destroy(nb, true);
    return xrt__fail_plugin(s, c->api->name, &err);
  }
  *out_buffer = (xrt_buffer *)nb->handle;
  return XRT_OK;
}

xrt_status xrt_buffer_shape(const xrt_buffer *buffer, xrt_shape *out) {
  xrt__buffer *b = xrt__buffer_get(buffer);
  XRT__CHECK_ARG(b, "invalid or released buffer");
  XRT__CHECK_ARG(out, "out is NULL");
  *out = b->shape;
  return XRT_OK;
}

size_t xrt_buffer_bytes(const xrt_buffer *buffer) {
  xrt__buffer *b = xrt__buffer_get(buffer);
  return b ? b->bytes : 0;
}

xrt_device *xrt_buffer_device(const xrt_buffer *buffer) {
  xrt__buffer *b = xrt__buffer_get(buffer);
  return b ? (xrt_device *)b->client->devices[b->device].handle : NULL;
}

xrt_status xrt_buffer_release(xrt_buffer *buffer) {
  if (!buffer) return XRT_OK;
  xrt__buffer *b = xrt__buffer_get(buffer);
  XRT__CHECK_ARG(b, "invalid or already released buffer");
  xrt__buffer_destroy(b, true);
  return XRT_OK;
}

/* ======================================================================
 * 11. Host functions and the built-in check.* targets
 * ==================================================================== */

xrt_status xrt_host_call_fail(xrt_host_call *call, xrt_status code,
                              const char *fmt, ...) {
  if (call && call->error && call->error_cap) {
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(call->error, call->error_cap, fmt, ap);
    va_end(ap);
  }
  return code == XRT_OK ? XRT_INTERNAL : code;
}

static xrt_status xrt__host_register(xrt__client *c, const char *target,
                                     xrt_host_fn fn, void *user) {
  for (int i = 0; i < c->num_hosts; i++)
    if (strcmp(c->hosts[i].target, target) == 0) {
      c->hosts[i].fn = fn;
      c->hosts[i].user = user;
      return XRT_OK;
    }
  if (c->num_hosts == c->cap_hosts) {
    int cap = c->cap_hosts ? 2 * c->cap_hosts : 8;
    xrt__host_entry *h = (xrt__host_entry *)xrt__calloc(
        &c->allocator, (size_t)cap, sizeof *h);
    if (!h) return xrt__fail(XRT_RESOURCE_EXHAUSTED, "out of memory");
    if (c->num_hosts) memcpy(h, c->hosts, sizeof *h * (size_t)c->num_hosts);
    xrt__free(&c->allocator, c->hosts);
    c->hosts = h;
    c->cap_hosts = cap;
  }
  size_t len = strlen(target);
  char *name = (char *)xrt__alloc(&c->allocator, len + 1);
  if (!name) return xrt__fail(XRT_RESOURCE_EXHAUSTED, "out of memory");
  memcpy(name, target, len + 1);
  c->hosts[c->num_hosts++] = (xrt__host_entry){name, fn, user};
  return XRT_OK;
}

xrt_status xrt_client_register_host_function(xrt_client *client,
                                             const char *target,
                                             xrt_host_fn fn, void *user) {
  xrt__client *c = xrt__client_get(client);
  XRT__CHECK_ARG(c, "invalid client");
  XRT__CHECK_ARG(target && *target, "target is NULL or empty");
  XRT__CHECK_ARG(fn, "fn is NULL");
  pthread_mutex_lock(&c->mu);
  xrt_status s = xrt__host_register(c, target, fn, user);
  pthread_mutex_unlock(&c->mu);
  return s;
}

static bool xrt__host_lookup(xrt__client *c, const char *target,
                             xrt_host_fn *fn, void **user) {
  bool found = false;
  pthread_mutex_lock(&c->mu);
  for (int i = 0; i < c->num_hosts && !found; i++)
    if (strcmp(c->hosts[i].target, target) == 0) {
      *fn = c->hosts[i].fn;
      *user = c->hosts[i].user;
      found = true;
    }
  pthread_mutex_unlock(&c->mu);
  return found;
}

/* One element read from a host tensor, widened for comparison. */
typedef struct xrt__scalar {
  int klass;      /* XRT__K_* */
  int64_t i;      /* signed ints and pred */
  uint64_t u;     /* unsigned ints */
  double re, im;  /* floats (re) and complex */
  uint64_t bits;  /* float bit pattern (of re for complex) */
  uint64_t bits_im;
} xrt__scalar;

static void xrt__scalar_read(xrt_dtype t, const void *data, size_t i,
                             xrt__scalar *s) {
  const unsigned char *p = (const unsigned char *)data + i * xrt_dtype_size(t);
  memset(s, 0, sizeof *s);
  s->klass = xrt__dtype_class(t);
  switch (t) {
  case XRT_PRED: s->i = p[0] != 0; break;
  case XRT_S2: case XRT_S4: case XRT_S8: s->i = (int8_t)p[0]; break;
  case XRT_U2: case XRT_U4: case XRT_U8: s->u = p[0]; break;
  case XRT_S16: { int16_t v; memcpy(&v, p, 2); s->i = v; break; }
  case XRT_U16: { uint16_t v; memcpy(&v, p, 2); s->u = v; break; }
  case XRT_S32: { int32_t v; memcpy(&v, p, 4); s->i = v; break; }
  case XRT_U32: { uint32_t v; memcpy(&v, p, 4); s->u = v; break; }
  case XRT_S64: memcpy(&s->i, p, 8); break;
  case XRT_U64: memcpy(&s->u, p, 8); break;
  case XRT_F16: case XRT_BF16: {
    uint16_t v;
    memcpy(&v, p, 2);
    s->bits = v;
    s->re = t == XRT_F16 ? xrt_f16_to_f32(v) : xrt_bf16_to_f32(v);
    break;
  }
  case XRT_F32: case XRT_C64: {
    float v[2] = {0, 0};
    memcpy(v, p, t == XRT_C64 ? 8 : 4);
    s->re = v[0], s->im = v[1];
    s->bits = xrt__f32_to_bits(v[0]), s->bits_im = xrt__f32_to_bits(v[1]);
    break;
  }
  case XRT_F64: case XRT_C128: {
    double v[2] = {0, 0};
    memcpy(v, p, t == XRT_C128 ? 16 : 8);
    s->re = v[0], s->im = v[1];
    s->bits = xrt__f64_to_bits(v[0]), s->bits_im = xrt__f64_to_bits(v[1]);
    break;
  }
  default:
    if (xrt_dtype_is_float(t)) { /* the f8/f6/f4 families */
      s->bits = p[0];
      s->re = xrt_minifloat_to_f64(t, p[0]);
    } else {
      s->klass = XRT__K_NONE;
    }
    break;
  }
}

static int xrt__scalar_format(const xrt__scalar *s, char *buf, size_t cap) {
  switch (s->klass) {
  case XRT__K_PRED: return snprintf(buf, cap, "%s", s->i ? "true" : "false");
  case XRT__K_SINT: return snprintf(buf, cap, "%" PRId64, s->i);
  case XRT__K_UINT: return snprintf(buf, cap, "%" PRIu64, s->u);
  case XRT__K_FLOAT: return snprintf(buf, cap, "%.17g", s->re);
  case XRT__K_COMPLEX: return snprintf(buf, cap, "(%.17g, %.17g)", s->re, s->im);
  }
  return snprintf(buf, cap, "?");
}

/* "[1, 2]" for flat index i of a shape. */
static void xrt__index_format(const xrt_shape *sh, size_t i, char *buf,
                              size_t cap) {
  int64_t idx[XRT_MAX_RANK];
  for (int32_t d = sh->rank - 1; d >= 0; d--) {
    int64_t n = sh->dims[d] ? sh->dims[d] : 1;
    idx[d] = (int64_t)i % n;
    i /= (size_t)n;
  }
  size_t n = (size_t)snprintf(buf, cap, "[");
  for (int32_t d = 0; d < sh->rank && n < cap; d++)
    n += (size_t)snprintf(buf + n, cap - n, d ? ", %" PRId64 : "%" PRId64,
                          idx[d]);
  if (n < cap) snprintf(buf + n, cap - n, "]");
}

typedef enum { XRT__CHECK_EQ, XRT__CHECK_ALMOST, XRT__CHECK_CLOSE,
               XRT__CHECK_LEGACY_EQ } xrt__check_kind;

typedef struct xrt__check_params {
  xrt__check_kind kind;
  double tolerance;
  uint64_t min_ulp, max_ulp;
} xrt__check_params;

/* IEEE equality, as the reference interpreter's expect_eq uses. */
static bool xrt__scalar_eq(const xrt__scalar *a, const xrt__scalar *b) {
  switch (a->klass) {
  case XRT__K_PRED: case XRT__K_SINT: return a->i == b->i;
  case XRT__K_UINT: return a->u == b->u;
  case XRT__K_FLOAT: return a->re == b->re;
  case XRT__K_COMPLEX: return a->re == b->re && a->im == b->im;
  }
  return false;
}

/* The reference interpreter's approximate equality of two floats. */
static bool xrt__float_almost(double f, double g, double tol) {
  if (f == g) return true;
  if (f != f || g != g) return (f != f) == (g != g);
  bool f_special = isinf(f) || f == 0, g_special = isinf(g) || g == 0;
  if ((f_special || g_special) && f != 0 && g != 0) return false;
  if (signbit(f) != signbit(g)) return false;
  return fabs(f - g) <= tol;
}

/* Magnitude bits, sign, nan and inf of a float pattern of type t. */
static void xrt__float_parts(xrt_dtype t, uint64_t bits, uint64_t *mag,
                             bool *neg, bool *nan, bool *inf) {
  xrt_minifloat_format mf;
  if (xrt_minifloat_format_of(t, &mf)) {
    int mw = mf.ebits + mf.mbits;
    double d = xrt_minifloat_to_f64(t, (uint8_t)bits);
    *neg = mf.kind != XRT_MINIFLOAT_E8M0 && ((bits >> mw) & 1u);
    *mag = mf.kind == XRT_MINIFLOAT_E8M0 ? bits : bits & ((1u << mw) - 1u);
    *nan = isnan(d);
    *inf = isinf(d);
    return;
  }
  int w = xrt_dtype_bits(t == XRT_C64 ? XRT_F32 : t == XRT_C128 ? XRT_F64 : t);
  int ebits = w == 64 ? 11 : w == 32 ? 8 : t == XRT_BF16 ? 8 : 5;
  int mbits = w - 1 - ebits;
  uint64_t sign = 1ull << (w - 1);
  *neg = (bits & sign) != 0;
  *mag = bits & (sign - 1);
  uint64_t emax = ((1ull << ebits) - 1) << mbits;
  *nan = (*mag & emax) == emax && (*mag & ((1ull << mbits) - 1));
  *inf = *mag == emax;
}

/* ULP distance as the reference interpreter's expect_close defines it. */
static uint64_t xrt__ulp_diff(xrt_dtype t, uint64_t f, uint64_t g) {
  if (f == g) return 0;
  uint64_t a, b;
  bool fn, gn, fnan, gnan, finf, ginf;
  xrt__float_parts(t, f, &a, &fn, &fnan, &finf);
  xrt__float_parts(t, g, &b, &gn, &gnan, &ginf);
  if (!fnan && !gnan && !finf && !ginf)
    return fn != gn ? a + b : (a > b ? a - b : b - a);
  if (fnan && gnan) return 0;
  return UINT64_MAX;
}

static bool xrt__check_element(xrt_dtype t, const xrt__check_params *p,
                               const xrt__scalar *a, const xrt__scalar *b,
                               uint64_t *ulp) {
  bool fp = a->klass == XRT__K_FLOAT || a->klass == XRT__K_COMPLEX;
  if (p->kind == XRT__CHECK_CLOSE && fp) {
    *ulp = xrt__ulp_diff(t, a->bits, b->bits);
    if (a->klass == XRT__K_COMPLEX) {
      uint64_t u2 = xrt__ulp_diff(t, a->bits_im, b->bits_im);
      if (u2 > *ulp) *ulp = u2;
    }
    return *ulp >= p->min_ulp && *ulp <= p->max_ulp;
  }
  if ((p->kind == XRT__CHECK_ALMOST || p->kind == XRT__CHECK_LEGACY_EQ) && fp)
    return xrt__float_almost(a->re, b->re, p->tolerance) &&
           (a->klass != XRT__K_COMPLEX ||
            xrt__float_almost(a->im, b->im, p->tolerance));
  return xrt__scalar_eq(a, b);
}

static xrt_status xrt__check_run(xrt_host_call *call,
                                 const xrt__check_params *p) {
  const xrt_ir_loc *l = &call->op->loc;
  if (call->num_inputs != 2)
    return xrt_host_call_fail(call, XRT_INVALID_ARGUMENT, "%s:%d:%d: %s takes "
                              "2 operands", l->file, (int)l->line, (int)l->col,
                              call->target);
  const xrt_host_tensor *x = &call->inputs[0], *y = &call->inputs[1];
  if (!xrt__shape_equal(&x->shape, &y->shape))
    return xrt_host_call_fail(call, XRT_INVALID_ARGUMENT, "%s:%d:%d: %s: "
                              "operand types differ", l->file, (int)l->line,
                              (int)l->col, call->target);
  xrt_dtype t = x->shape.dtype;
  if (xrt__dtype_class(t) == XRT__K_NONE)
    return xrt_host_call_fail(call, XRT_UNIMPLEMENTED, "%s:%d:%d: %s does not "
                              "support %s yet", l->file, (int)l->line,
                              (int)l->col, call->target, xrt_dtype_name(t));
  size_t n = (size_t)xrt_shape_numel(&x->shape);
  for (size_t i = 0; i < n; i++) {
    xrt__scalar a, b;
    uint64_t ulp = 0;
    xrt__scalar_read(t, x->data, i, &a);
    xrt__scalar_read(t, y->data, i, &b);
    if (xrt__check_element(t, p, &a, &b, &ulp)) continue;
    char sa[96], sb[96], si[128], extra[64] = "";
    xrt__scalar_format(&a, sa, sizeof sa);
    xrt__scalar_format(&b, sb, sizeof sb);
    xrt__index_format(&x->shape, i, si, sizeof si);
    if (p->kind == XRT__CHECK_CLOSE)
      snprintf(extra, sizeof extra, " (%" PRIu64 " ULP apart, allowed %" PRIu64
               "..%" PRIu64 ")", ulp, p->min_ulp, p->max_ulp);
    else if (p->kind == XRT__CHECK_ALMOST)
      snprintf(extra, sizeof extra, " (tolerance %g)", p->tolerance);
    return xrt_host_call_fail(call, XRT_CHECK_FAILED, "%s:%d:%d: %s failed at "
                              "element %s: actual %s, expected %s%s", l->file,
                              (int)l->line, (int)l->col, call->target, si, sa,
                              sb, extra);
  }
  return XRT_OK;
}

static double xrt__attr_number(const xrt_ir_op *op, const char *name,
                               double dflt) {
  const xrt_ir_attr *a = op ? xrt_ir_op_attr(op, name) : NULL;
  if (!a) return dflt;
  if (a->kind == XRT_ATTR_FLOAT) return a->f;
  if (a->kind == XRT_ATTR_INT) return (double)a->i;
  return dflt;
}

static xrt_status xrt__check_eq_fn(void *user, xrt_host_call *call) {
  xrt__check_params p = {(xrt__check_kind)(intptr_t)user, 1e-3, 0, 3};
  if (p.kind == XRT__CHECK_ALMOST)
    p.tolerance = xrt__attr_number(call->op, "tolerance", 1e-3);
  if (p.kind == XRT__CHECK_LEGACY_EQ) p.tolerance = 1e-4;
  if (p.kind == XRT__CHECK_CLOSE) {
    p.min_ulp = (uint64_t)xrt__attr_number(call->op, "min_ulp_difference", 0);
    p.max_ulp = (uint64_t)xrt__attr_number(call->op, "max_ulp_difference", 3);
  }
  return xrt__check_run(call, &p);
}

static xrt_status xrt_host_register_builtins(xrt__client *c) {
  static const struct { const char *name; xrt__check_kind kind; } checks[] = {
      {"check.expect_eq", XRT__CHECK_EQ},
      {"check.expect_almost_eq", XRT__CHECK_ALMOST},
      {"check.expect_close", XRT__CHECK_CLOSE},
      {"check.eq", XRT__CHECK_LEGACY_EQ},
  };
  for (size_t i = 0; i < XRT__ARRAY_SIZE(checks); i++) {
    xrt_status s = xrt__host_register(c, checks[i].name, xrt__check_eq_fn,
                                      (void *)(intptr_t)checks[i].kind);
    if (s) return s;
  }
  return XRT_OK;
}

/* ======================================================================
 * 12. Programs and compilation
 * ==================================================================== */

/* A parsed, verified program.  Executables hold a reference to it, so the
 * IR they were compiled from outlives the user's handle. */
typedef struct xrt__program {
  xrt_allocator allocator;
  xrt__arena arena;
  xrt_ir_module *module;
  const xrt_ir_op **custom_calls; /* by op->callee */
  _Atomic int refs;
  uintptr_t handle;
} xrt__program;

typedef struct xrt__executable {
  xrt__link link; /* first: the client's list */
  xrt__client *client;
  xrt__program *program;
  int32_t entry;
  void *pexe;
  xrt_host_binding *bindings;
  int num_inputs, num_outputs;
  xrt_shape *inputs, *outputs;
  uintptr_t handle;
} xrt__executable;

void xrt_compile_options_init(xrt_compile_options *o) {
  if (o) memset(o, 0, sizeof *o);
}

void xrt_execute_options_init(xrt_execute_options *o) {
  if (o) memset(o, 0, sizeof *o);
}

/* The host function an op calls: custom_call's target, or the fixed names
 * under which a program's infeed/outfeed/send/recv reach the host. */
static const char *xrt__host_target(const xrt_ir_op *op) {
  switch (op->code) {
  case XRT_OP_CUSTOM_CALL: {
    const xrt_ir_attr *t = xrt_ir_op_attr(op, "call_target_name");
    return t ? t->s : NULL;
  }
  case XRT_OP_INFEED: return "xrt.infeed";
  case XRT_OP_OUTFEED: return "xrt.outfeed";
  case XRT_OP_SEND: return "xrt.send";
  case XRT_OP_RECV: return "xrt.recv";
  default: return NULL;
  }
}

/* Numbers the ops that call the host (op->callee) into a list. */
static int32_t xrt__number_custom_calls(const xrt_ir_region *r,
                                        const xrt_ir_op **list, int32_t n) {
  for (int32_t i = 0; i < r->num_ops; i++) {
    xrt_ir_op *op = (xrt_ir_op *)&r->ops[i]; /* still ours: not yet shared */
    for (int32_t k = 0; k < op->num_regions; k++)
      n = xrt__number_custom_calls(&op->regions[k], list, n);
    if (!xrt__host_target(op)) continue;
    if (list) list[n] = op;
    op->callee = n++;
  }
  return n;
}

static xrt_status xrt__program_index(xrt__program *p) {
  xrt_ir_module *m = p->module;
  int32_t n = 0;
  for (int32_t i = 0; i < m->num_funcs; i++)
    n = xrt__number_custom_calls(&m->funcs[i].body, NULL, n);
  p->custom_calls = (const xrt_ir_op **)xrt__arena_alloc(
      &p->arena, sizeof(xrt_ir_op *) * (size_t)(n + 1));
  if (!p->custom_calls) return xrt__fail(XRT_RESOURCE_EXHAUSTED, "out of memory");
  n = 0;
  for (int32_t i = 0; i < m->num_funcs; i++)
    n = xrt__number_custom_calls(&m->funcs[i].body, p->custom_calls, n);
  m->num_custom_calls = n;
  return XRT_OK;
}

/* Parses and verifies text into the program's arena. */
static xrt_status xrt__program_build(xrt__program *p, const char *text,
                                     size_t len, const xrt_compile_options *o) {
  const char *file = o && o->filename ? o->filename : "<input>";
  int line_offset = o ? o->line_offset : 0;
  char *fname = xrt__arena_strndup(&p->arena, file, strlen(file));
  if (!fname) return xrt__fail(XRT_RESOURCE_EXHAUSTED, "out of memory");
  xrt_status s = xrt__parse_module(&p->arena, text, len, fname, line_offset,
                                   &p->module);
  if (s) return s;
  if (p->module->num_funcs == 0)
    return xrt__fail(XRT_INVALID_ARGUMENT, "%s:%d:1: the program has no "
                     "function", file, 1 + line_offset);
  if ((s = xrt__normalize_module(&p->arena, p->module)) ||
      (s = xrt__verify_module(p->module)))
    return s;
  return xrt__program_index(p);
}

static xrt__program *xrt__program_get(const xrt_program *p) {
  return (xrt__program *)xrt__hget(p, XRT__H_PROGRAM);
}

static void xrt__program_unref(xrt__program *p) {
  if (atomic_fetch_sub(&p->refs, 1) != 1) return;
  xrt_allocator a = p->allocator;
  xrt__arena_release(&p->arena);
  xrt__free(&a, p);
}

static xrt_status xrt__program_create(xrt_allocator a, const char *text,
                                      size_t len,
                                      const xrt_compile_options *options,
                                      xrt__program **out) {
  xrt__program *p = (xrt__program *)xrt__calloc(&a, 1, sizeof *p);
  if (!p) return xrt__fail(XRT_RESOURCE_EXHAUSTED, "out of memory");
  p->allocator = a;
  atomic_init(&p->refs, 1);
  xrt__arena_init(&p->arena, a);
  xrt_status s = xrt__program_build(p, text, len, options);
  if (s) {
    xrt__program_unref(p);
    return s;
  }
  *out = p;
  return XRT_OK;
}

xrt_status xrt_program_parse(const char *text, size_t len,
                             const xrt_compile_options *options,
                             xrt_program **out_program) {
  XRT__CHECK_ARG(out_program, "out_program is NULL");
  *out_program = NULL;
  XRT__CHECK_ARG(text || len == 0, "text is NULL");
  xrt__program *p;
  xrt_status s = xrt__program_create(xrt_allocator_system(), text ? text : "",
                                     len, options, &p);
  if (s) return s;
  if (!(p->handle = xrt__hnew(p, XRT__H_PROGRAM))) {
    xrt__program_unref(p);
    return xrt__fail(XRT_RESOURCE_EXHAUSTED, "out of handles");
  }
  *out_program = (xrt_program *)p->handle;
  return XRT_OK;
}

void xrt_program_release(xrt_program *program) {
  xrt__program *p = xrt__program_get(program);
  if (!p) return;
  xrt__hfree_handle(p->handle);
  xrt__program_unref(p);
}

int xrt_program_function_count(const xrt_program *program) {
  xrt__program *p = xrt__program_get(program);
  return p ? p->module->num_funcs : -1;
}

const char *xrt_program_function_name(const xrt_program *program, int index) {
  xrt__program *p = xrt__program_get(program);
  if (!p || index < 0 || index >= p->module->num_funcs) return NULL;
  return p->module->funcs[index].name;
}

const xrt_ir_module *xrt_program_module(const xrt_program *program) {
  xrt__program *p = xrt__program_get(program);
  return p ? p->module : NULL;
}

/* The entry function: the one named, else main, else the only one. */
static xrt_status xrt__find_entry(const xrt_ir_module *m, const char *entry,
                                  int32_t *out) {
  const char *want = entry ? entry : "main";
  for (int32_t i = 0; i < m->num_funcs; i++)
    if (strcmp(m->funcs[i].name, want) == 0) return *out = i, XRT_OK;
  if (!entry && m->num_funcs == 1) return *out = 0, XRT_OK;
  return xrt__fail(XRT_NOT_FOUND, "the program has no function @%s (it has "
                   "%d function(s), e.g. @%s)", want, (int)m->num_funcs,
                   m->num_funcs ? m->funcs[0].name : "");
}

/* Looks up the client's host function for every custom_call op. */
static xrt_status xrt__bind_custom_calls(xrt__executable *e) {
  xrt__program *p = e->program;
  int32_t n = p->module->num_custom_calls;
  e->bindings = (xrt_host_binding *)xrt__calloc(
      &e->client->allocator, (size_t)n + 1, sizeof(xrt_host_binding));
  if (!e->bindings) return xrt__fail(XRT_RESOURCE_EXHAUSTED, "out of memory");
  for (int32_t k = 0; k < n; k++) {
    const xrt_ir_op *op = p->custom_calls[k];
    const char *target = xrt__host_target(op);
    if (!xrt__host_lookup(e->client, target, &e->bindings[k].fn,
                          &e->bindings[k].user))
      return xrt__fail(XRT_NOT_FOUND, "%s:%d:%d: %s: no host function named "
                       "'%s' is registered (see "
                       "xrt_client_register_host_function)", op->loc.file,
                       (int)op->loc.line, (int)op->loc.col, op->name, target);
  }
  return XRT_OK;
}

static xrt_status xrt__entry_shapes(xrt__executable *e) {
  const xrt_ir_func *f = &e->program->module->funcs[e->entry];
  e->num_inputs = f->body.num_args;
  e->num_outputs = f->num_results;
  e->inputs = (xrt_shape *)xrt__calloc(&e->client->allocator,
                                       (size_t)e->num_inputs + 1,
                                       sizeof(xrt_shape));
  e->outputs = (xrt_shape *)xrt__calloc(&e->client->allocator,
                                        (size_t)e->num_outputs + 1,
                                        sizeof(xrt_shape));
  if (!e->inputs || !e->outputs)
    return xrt__fail(XRT_RESOURCE_EXHAUSTED, "out of memory");
  for (int i = 0; i < e->num_inputs + e->num_outputs; i++) {
    bool in = i < e->num_inputs;
    const xrt_ir_type *t = in ? &f->value_types[f->body.args[i]]
                              : &f->result_types[i - e->num_inputs];
    if (t->kind != XRT_TYPE_TENSOR)
      return xrt__fail(XRT_UNIMPLEMENTED, "%s:%d:%d: @%s: %s %d is not a "
                       "tensor; only tensors cross the entry function's "
                       "boundary", f->loc.file, (int)f->loc.line,
                       (int)f->loc.col, f->name, in ? "argument" : "result",
                       in ? i : i - e->num_inputs);
    if (in) e->inputs[i] = t->shape;
    else e->outputs[i - e->num_inputs] = t->shape;
  }
  return XRT_OK;
}

static void xrt__executable_free(xrt__executable *e, bool unlink) {
  xrt__client *c = e->client;
  xrt__hfree_handle(e->handle);
  if (unlink) {
    pthread_mutex_lock(&c->mu);
    xrt__link_remove(&e->link);
    pthread_mutex_unlock(&c->mu);
  }
  if (e->pexe) c->api->executable_destroy(e->pexe);
  xrt__free(&c->allocator, e->bindings);
  xrt__free(&c->allocator, e->inputs);
  xrt__free(&c->allocator, e->outputs);
  xrt__program_unref(e->program);
  xrt__free(&c->allocator, e);
}

static xrt_status xrt__executable_build(xrt__executable *e, const char *entry) {
  xrt__client *c = e->client;
  const xrt_ir_module *m = e->program->module;
  xrt_status s = xrt__find_entry(m, entry, &e->entry);
  if (s || (s = xrt__entry_shapes(e)) || (s = xrt__bind_custom_calls(e)))
    return s;
  xrt_plugin_compile_args args = {sizeof args, m, e->entry, e->bindings};
  xrt_plugin_error err = {{0}};
  if ((s = c->api->compile(c->pc, &args, &e->pexe, &err)))
    return xrt__fail_plugin(s, c->api->name, &err);
  e->handle = xrt__hnew(e, XRT__H_EXECUTABLE);
  return e->handle ? XRT_OK
                   : xrt__fail(XRT_RESOURCE_EXHAUSTED, "out of handles");
}

/* Compiles a program for a client; the executable takes a reference. */
static xrt_status xrt__compile(xrt__client *c, xrt__program *p,
                               const char *entry, xrt_executable **out) {
  xrt__executable *e = (xrt__executable *)xrt__calloc(&c->allocator, 1,
                                                      sizeof *e);
  if (!e) return xrt__fail(XRT_RESOURCE_EXHAUSTED, "out of memory");
  e->client = c;
  e->program = p;
  atomic_fetch_add(&p->refs, 1);
  xrt__link_init(&e->link);
  xrt_status s = xrt__executable_build(e, entry);
  if (s) {
    xrt__executable_free(e, false);
    return s;
  }
  pthread_mutex_lock(&c->mu);
  xrt__link_add(&c->executables, &e->link);
  pthread_mutex_unlock(&c->mu);
  *out = (xrt_executable *)e->handle;
  return XRT_OK;
}

xrt_status xrt_compile(xrt_client *client, const char *text, size_t len,
                       const xrt_compile_options *options,
                       xrt_executable **out_executable) {
  XRT__CHECK_ARG(out_executable, "out_executable is NULL");
  *out_executable = NULL;
  xrt__client *c = xrt__client_get(client);
  XRT__CHECK_ARG(c, "invalid client");
  XRT__CHECK_ARG(text || len == 0, "text is NULL");
  xrt__program *p;
  xrt_status s = xrt__program_create(c->allocator, text ? text : "", len,
                                     options, &p);
  if (s) return s;
  s = xrt__compile(c, p, options ? options->entry : NULL, out_executable);
  xrt__program_unref(p);
  return s;
}

xrt_status xrt_compile_program(xrt_client *client, const xrt_program *program,
                               const xrt_compile_options *options,
                               xrt_executable **out_executable) {
  XRT__CHECK_ARG(out_executable, "out_executable is NULL");
  *out_executable = NULL;
  xrt__client *c = xrt__client_get(client);
  xrt__program *p = xrt__program_get(program);
  XRT__CHECK_ARG(c, "invalid client");
  XRT__CHECK_ARG(p, "invalid or released program");
  return xrt__compile(c, p, options ? options->entry : NULL, out_executable);
}

static xrt__executable *xrt__executable_get(const xrt_executable *e) {
  return (xrt__executable *)xrt__hget(e, XRT__H_EXECUTABLE);
}

xrt_status xrt_executable_release(xrt_executable *executable) {
  if (!executable) return XRT_OK;
  xrt__executable *e = xrt__executable_get(executable);
  XRT__CHECK_ARG(e, "invalid or already released executable");
  xrt__executable_free(e, true);
  return XRT_OK;
}

int xrt_executable_num_inputs(const xrt_executable *executable) {
  xrt__executable *e = xrt__executable_get(executable);
  return e ? e->num_inputs : -1;
}

int xrt_executable_num_outputs(const xrt_executable *executable) {
  xrt__executable *e = xrt__executable_get(executable);
  return e ? e->num_outputs : -1;
}

static xrt_status xrt__executable_shape(const xrt_executable *executable,
                                        int index, bool input, xrt_shape *out) {
  xrt__executable *e = xrt__executable_get(executable);
  XRT__CHECK_ARG(e, "invalid executable");
  XRT__CHECK_ARG(out, "out is NULL");
  int n = input ? e->num_inputs : e->num_outputs;
  if (index < 0 || index >= n)
    return xrt__fail(XRT_OUT_OF_RANGE, "%s index %d is outside 0..%d",
                     input ? "input" : "output", index, n - 1);
  *out = input ? e->inputs[index] : e->outputs[index];
  return XRT_OK;
}

xrt_status xrt_executable_input_shape(const xrt_executable *executable,
                                      int index, xrt_shape *out) {
  return xrt__executable_shape(executable, index, true, out);
}

xrt_status xrt_executable_output_shape(const xrt_executable *executable,
                                       int index, xrt_shape *out) {
  return xrt__executable_shape(executable, index, false, out);
}

const char *xrt_executable_name(const xrt_executable *executable) {
  xrt__executable *e = xrt__executable_get(executable);
  return e ? e->program->module->funcs[e->entry].name : NULL;
}

/* ======================================================================
 * 13. Execution
 * ==================================================================== */

#define XRT__MAX_IO 64 /* arguments and results kept on the stack */

static xrt_status xrt__bind_args(xrt__executable *e, int device,
                                 xrt_buffer *const *args, int num_args,
                                 void **mems) {
  if (num_args != e->num_inputs)
    return xrt__fail(XRT_INVALID_ARGUMENT, "@%s takes %d argument(s), got %d",
                     e->program->module->funcs[e->entry].name, e->num_inputs, num_args);
  XRT__CHECK_ARG(args || num_args == 0, "args is NULL");
  for (int i = 0; i < num_args; i++) {
    xrt__buffer *b = xrt__buffer_get(args[i]);
    if (!b || b->client != e->client)
      return xrt__fail(XRT_INVALID_ARGUMENT, "argument %d is not a live "
                       "buffer of this executable's client", i);
    if (b->device != device)
      return xrt__fail(XRT_INVALID_ARGUMENT, "argument %d lives on device %d, "
                       "not on device %d", i, b->device, device);
    if (!xrt__shape_equal(&b->shape, &e->inputs[i])) {
      char have[128], want[128];
      xrt_shape_format(&b->shape, have, sizeof have);
      xrt_shape_format(&e->inputs[i], want, sizeof want);
      return xrt__fail(XRT_INVALID_ARGUMENT, "argument %d is %s, expected %s",
                       i, have, want);
    }
    mems[i] = b->mem;
  }
  return XRT_OK;
}

static void xrt__release_outputs(xrt__buffer **outs, int n) {
  for (int i = 0; i < n; i++)
    if (outs[i]) xrt__buffer_destroy(outs[i], true);
}

xrt_status xrt_execute(xrt_executable *executable, xrt_device *device,
                       xrt_buffer *const *args, int num_args,
                       xrt_buffer **outputs, int num_outputs,
                       const xrt_execute_options *options) {
  XRT__UNUSED(options);
  xrt__executable *e = xrt__executable_get(executable);
  xrt__device *d = xrt__device_get(device);
  XRT__CHECK_ARG(e, "invalid or released executable");
  XRT__CHECK_ARG(d, "invalid device");
  XRT__CHECK_ARG(d->client == e->client, "device belongs to another client");
  XRT__CHECK_ARG(outputs || num_outputs == 0, "outputs is NULL");
  if (num_outputs != e->num_outputs)
    return xrt__fail(XRT_INVALID_ARGUMENT, "@%s returns %d result(s), room "
                     "for %d was given", e->program->module->funcs[e->entry].name,
                     e->num_outputs, num_outputs);
  if (num_args > XRT__MAX_IO || num_outputs > XRT__MAX_IO)
    return xrt__fail(XRT_UNIMPLEMENTED, "more than %d arguments or results",
                     XRT__MAX_IO);
  void *in_mem[XRT__MAX_IO], *out_mem[XRT__MAX_IO];
  xrt__buffer *outs[XRT__MAX_IO] = {NULL};
  xrt_status s = xrt__bind_args(e, d->index, args, num_args, in_mem);
  for (int i = 0; !s && i < num_outputs; i++) {
    s = xrt__buffer_new(e->client, d->index, &e->outputs[i],
                        xrt_shape_bytes(&e->outputs[i]), &outs[i]);
    if (!s) out_mem[i] = outs[i]->mem;
  }
  if (!s) {
    xrt__client *c = e->client;
    xrt_plugin_error err = {{0}};
    s = c->api->execute(c->pc, e->pexe, d->index, in_mem, num_args, out_mem,
                        num_outputs, &err);
    if (s) {
      /* A check failure carries the program location already. */
      xrt__fail(s == XRT_OK ? XRT_INTERNAL : s, "%s", err.message);
    }
  }
  if (s) {
    xrt__release_outputs(outs, num_outputs);
    return s;
  }
  for (int i = 0; i < num_outputs; i++) outputs[i] = (xrt_buffer *)outs[i]->handle;
  return XRT_OK;
}

/* Releasing a client releases everything still alive on it. */
static void xrt__client_free(xrt__client *c) {
  while (c->executables.next != &c->executables)
    xrt__executable_free((xrt__executable *)c->executables.next, true);
  while (c->buffers.next != &c->buffers)
    xrt__buffer_destroy((xrt__buffer *)c->buffers.next, true);
  for (int i = 0; c->devices && i < c->num_devices; i++)
    xrt__hfree_handle(c->devices[i].handle);
  if (c->pc) c->api->client_destroy(c->pc);
  for (int i = 0; i < c->num_hosts; i++)
    xrt__free(&c->allocator, c->hosts[i].target);
  xrt__free(&c->allocator, c->hosts);
  xrt__free(&c->allocator, c->devices);
  xrt__hfree_handle(c->handle);
  pthread_mutex_destroy(&c->mu);
  xrt_allocator a = c->allocator;
  xrt__free(&a, c);
}

void xrt_client_release(xrt_client *client) {
  xrt__client *c = xrt__client_get(client);
  if (c) xrt__client_free(c);
}

/* ======================================================================
 * 14. NumPy files
 * ==================================================================== */

#include "_dev/npy.inc"
