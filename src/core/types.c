/*
 * src/core/types.c - memory (the allocator, arenas) and types: dtypes, shapes,
 * opcode names.
 * Part of the core of xrt; MIT licensed, see LICENSE.
 */
#include "internal.h"

/* ======================================================================
 * 3. Memory
 *
 * Which allocator pays for what.  Everything a client's calls allocate on
 * the host comes from the client's xrt_allocator (xrt_client_options
 * .allocator), and the plugin gets the same one (client_args.allocator;
 * the simulator takes its device memory from it too): the client and its
 * devices, queues' tasks, events, buffers, host
 * functions, programs parsed by xrt_compile (arena and parser scratch),
 * executables, launches, sharded arrays, pmaps, variables and reshard
 * plans, staging copies, support reports, .npy data read for a client,
 * and its trace registry entry.  The allocator must outlive everything
 * made from it (a support report may outlive its client).  Objects that
 * have no client use the allocator of their owner: a context its
 * xrt_context_options.allocator (plugin records, paths, directory
 * listings); a program from xrt_program_parse, which has no client, the
 * system allocator (xrt_compile parses with the client's).  What stays on
 * malloc: the handle table's chunks (process-wide, shared by every
 * client, kept until exit), DLPack export records (their deleters may run
 * after the client and its allocator are gone), the text a pmap source
 * callback returns (malloc'd by contract), the OS layer's short-lived
 * path strings, and libc's and the threads' own memory.  Every failure is XRT_RESOURCE_EXHAUSTED naming what was
 * being allocated (xrt__nomem), and leaves nothing allocated behind.
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

XRT__PRIVATE void *xrt__calloc(const xrt_allocator *a, size_t count, size_t size) {
  if (size && count > SIZE_MAX / size) return NULL;
  void *p = a->alloc(a->self, count * size);
  if (p) memset(p, 0, count * size);
  return p;
}

/* realloc through an allocator (which has no realloc): n bytes holding
 * the first min(old, n) of p, p freed; NULL (p untouched) on failure. */
XRT__PRIVATE void *xrt__realloc(const xrt_allocator *a, void *p, size_t old,
                          size_t n) {
  void *q = a->alloc(a->self, n ? n : 1);
  if (!q) return NULL;
  if (p) memcpy(q, p, old < n ? old : n);
  xrt__free(a, p);
  return q;
}

XRT__PRIVATE char *xrt__strdup_with(const xrt_allocator *a, const char *s) {
  size_t n = strlen(s) + 1;
  char *d = (char *)a->alloc(a->self, n);
  if (d) memcpy(d, s, n);
  return d;
}

/* Host allocation failures seen by this thread (lets a caller tell them
 * from a plugin's device memory running out). */
XRT__PRIVATE_DATA XRT__THREAD_LOCAL_SMALL unsigned xrt__nomem_seen;

/* The failure of an allocation: what was being allocated, and for what. */
XRT__PRIVATE xrt_status xrt__nomem(const char *what) {
  xrt__nomem_seen++;
  return xrt__fail(XRT_RESOURCE_EXHAUSTED, "out of host memory for %s", what);
}

XRT__PRIVATE void xrt__arena_init(xrt__arena *a, xrt_allocator allocator) {
  a->allocator = allocator;
  a->head = NULL;
  a->total = 0;
}

XRT__PRIVATE void xrt__arena_release(xrt__arena *a) {
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
XRT__PRIVATE void *xrt__arena_alloc(xrt__arena *a, size_t n) {
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

XRT__PRIVATE char *xrt__arena_strndup(xrt__arena *a, const char *s, size_t n) {
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
XRT__PRIVATE int xrt__dtype_class(xrt_dtype t) {
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
    n += s->dims[i] < 0 /* XRT_DIM_DYNAMIC */
             ? (size_t)snprintf(tmp + n, sizeof tmp - n, "?x")
             : (size_t)snprintf(tmp + n, sizeof tmp - n, "%" PRId64 "x",
                                s->dims[i]);
  n += (size_t)snprintf(tmp + n, sizeof tmp - n, "%s>",
                        s ? xrt_dtype_name(s->dtype) : "invalid");
  if (cap) snprintf(buf, cap, "%s", tmp);
  return n;
}

/* Validates a user-supplied shape; the bytes it needs go to *bytes. */
XRT__PRIVATE xrt_status xrt__shape_check(const xrt_shape *s, size_t *bytes) {
  if (!xrt__dtype_valid(s->dtype))
    return xrt__fail(XRT_INVALID_ARGUMENT, "invalid element type %d",
                     (int)s->dtype);
  if (s->rank < 0 || s->rank > XRT_MAX_RANK)
    return xrt__fail(XRT_INVALID_ARGUMENT, "rank %d is outside 0..%d",
                     (int)s->rank, XRT_MAX_RANK);
  /* The bound applies to the product of the nonzero dimensions too: an
   * empty array's strides are still products of its dimensions. */
  uint64_t n = xrt_dtype_size(s->dtype);
  bool empty = false;
  for (int32_t i = 0; i < s->rank; i++) {
    if (s->dims[i] < 0)
      return xrt__fail(XRT_INVALID_ARGUMENT, "dimension %d is negative (%" PRId64
                       ")", (int)i, s->dims[i]);
    if (s->dims[i] == 0) { empty = true; continue; }
    if (n > (uint64_t)SIZE_MAX / 2 / (uint64_t)s->dims[i])
      return xrt__fail(XRT_INVALID_ARGUMENT, "shape is too large: its byte "
                       "size does not fit in size_t");
    n *= (uint64_t)s->dims[i];
  }
  *bytes = empty ? 0 : (size_t)n;
  return XRT_OK;
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

XRT__PRIVATE xrt_opcode xrt__opcode_from_name(const char *s, size_t n) {
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

/* Ops of the StableHLO dialect that xrt reads and prints but does not run
 * (XRT__OP_EXTRA_FIRST in internal.h), in code order. */
static const char *const xrt__extra_ops[XRT__OP_EXTRA_END - XRT__OP_EXTRA_FIRST] = {
    "stablehlo.async_done",         "stablehlo.async_start",
    "stablehlo.cross-replica-sum",  "stablehlo.einsum",
    "stablehlo.set_dimension_size", "stablehlo.torch_index_select",
    "stablehlo.unary_einsum"};

XRT__PRIVATE xrt_opcode xrt__extra_opcode(const char *s, size_t n) {
  for (size_t i = 0; i < XRT__ARRAY_SIZE(xrt__extra_ops); i++)
    if (strlen(xrt__extra_ops[i]) == n && !memcmp(xrt__extra_ops[i], s, n))
      return (xrt_opcode)(XRT__OP_EXTRA_FIRST + (int)i);
  return XRT_OP_INVALID;
}

XRT__PRIVATE const char *xrt__extra_op_name(int code) {
  if (code < XRT__OP_EXTRA_FIRST || code >= XRT__OP_EXTRA_END) return NULL;
  return xrt__extra_ops[code - XRT__OP_EXTRA_FIRST];
}

XRT__PRIVATE const char *xrt__dtype_spelling(xrt_dtype t) {
  return t == XRT__DT_INDEX ? "index" : xrt_dtype_name(t);
}
