/*
 * xrt_sim.c - the simulated multi-device accelerator: a device plugin like
 * any vendor's, built into xrt (or, with -DXRT_PLUGIN_SHARED, a .so).
 *
 * Devices.  N devices, each a byte budget over 64-byte aligned host memory.
 * Freed blocks go to a small per-device cache keyed by size, so a repeated
 * alloc/free of one size reuses pages that are already touched.
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
 * whose offsets a liveness sweep assigns at compile time, reusing a slot once
 * its value is dead; constants (and iota, get_dimension_size) point at data
 * made at compile time; function and region arguments are bound at run time;
 * the entry's results are bound straight to the output buffers when they are
 * produced by an op (else copied: arguments, constants, duplicates).
 * Tuple values are one flat block (elements at 16-byte aligned offsets,
 * nested tuples inline) and tokens hold no bytes, so every value moves by
 * memcpy of sim_vbytes bytes; only the entry function is tensors-only.
 *
 * Execution.  The executable owns one frame (arena + pointer tables of every
 * planned function) behind a mutex; a concurrent execute builds a temporary
 * frame for its call.  Region plans (reduce body, while cond/body) run on
 * the same frame with their arguments rebound per iteration or element.
 */
#define _POSIX_C_SOURCE 200809L
#include "xrt.h"

#include <assert.h>
#include <math.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Elementwise kernels (another file; inlined before release). */
#include "_dev/sim_ew.inc"

#define SIM_ALIGN 64
#define SIM_MAX_EW_IN 8
#define SIM_CACHE_SLOTS 8
#define SIM_CACHE_MAX_BYTES ((size_t)1 << 30)

#if defined(__GNUC__)
#define SIM_PRINTF(a, b) __attribute__((format(printf, a, b)))
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
} sim_pool;

/* Zeroed, 64-byte aligned memory that lives until sim_pool_release. */
static void *sim_pool_alloc(sim_pool *p, size_t bytes) {
  if (bytes > SIZE_MAX - 2 * SIM_ALIGN) return NULL;
  char *raw = (char *)p->al.alloc(p->al.self, bytes + 2 * SIM_ALIGN);
  if (!raw) return NULL;
  *(void **)raw = p->head;
  p->head = raw;
  uintptr_t at = ((uintptr_t)raw + sizeof(void *) + SIM_ALIGN - 1) &
                 ~(uintptr_t)(SIM_ALIGN - 1);
  char *data = raw + (at - (uintptr_t)raw);
  memset(data, 0, bytes);
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
} sim_blk;

typedef struct sim_device {
  pthread_mutex_t mu;
  uint64_t limit, used;
  void *cache[SIM_CACHE_SLOTS]; /* raw blocks, oldest first */
  int ncache;
  size_t cached_bytes;
  xrt_attribute attrs[4];
} sim_device;

typedef struct sim_client {
  xrt_allocator al;
  int ndev;
  sim_device *dev;
} sim_client;

static sim_blk *sim_blk_of(void *mem) {
  return (sim_blk *)((char *)mem - SIM_ALIGN);
}

static void *sim_mem_of(void *raw) { return (char *)raw + SIM_ALIGN; }

static void sim_cache_drop_all(sim_device *d) {
  for (int i = 0; i < d->ncache; i++) free(d->cache[i]);
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
static void sim_cache_put(sim_device *d, void *raw) {
  size_t cap = ((sim_blk *)raw)->cap;
  if (cap > SIM_CACHE_MAX_BYTES) {
    free(raw);
    return;
  }
  while (d->ncache > 0 && (d->ncache == SIM_CACHE_SLOTS ||
                           d->cached_bytes + cap > SIM_CACHE_MAX_BYTES)) {
    d->cached_bytes -= ((sim_blk *)d->cache[0])->cap;
    free(d->cache[0]);
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
  d->attrs[1].int_value = 1; /* one execute runs on one host thread */
  d->attrs[2].int_value = index;
  d->attrs[3].type = XRT_ATTRIBUTE_STRING;
  d->attrs[3].string_value = "xrt simulator";
}

static void sim_client_destroy(void *client) {
  sim_client *c = (sim_client *)client;
  if (!c) return;
  for (int i = 0; i < c->ndev; i++) {
    sim_cache_drop_all(&c->dev[i]);
    pthread_mutex_destroy(&c->dev[i].mu);
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
  c->al = al;
  c->dev = d;
  c->ndev = 0;
  for (int i = 0; i < args->num_devices; i++, c->ndev++) {
    if (pthread_mutex_init(&d[i].mu, NULL) != 0) {
      sim_client_destroy(c);
      return sim_fail(err, XRT_INTERNAL, "pthread_mutex_init failed");
    }
    d[i].limit = args->device_memory_bytes;
    sim_device_attrs(&d[i], i);
  }
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

/* Device memory is host memory from aligned_alloc rather than the client
 * allocator: blocks must be 64-byte aligned and are cached and reused
 * across buffers, which the allocator interface cannot express. */
static xrt_status sim_buffer_alloc(void *client, int device, size_t bytes,
                                   void **out_mem, xrt_plugin_error *err) {
  sim_client *c = (sim_client *)client;
  xrt_status s = sim_check_device(c, device, err);
  if (s) return s;
  if (!out_mem) return sim_fail(err, XRT_INVALID_ARGUMENT, "out_mem is NULL");
  *out_mem = NULL;
  sim_device *d = &c->dev[device];
  if (bytes > SIZE_MAX / 2)
    return sim_fail(err, XRT_RESOURCE_EXHAUSTED, "device %d: cannot allocate "
                    "%zu bytes", device, bytes);
  size_t cap = sim_align_up(bytes ? bytes : 1);
  pthread_mutex_lock(&d->mu);
  uint64_t avail = d->limit - d->used;
  if ((uint64_t)bytes > avail) {
    pthread_mutex_unlock(&d->mu);
    return sim_fail(err, XRT_RESOURCE_EXHAUSTED, "device %d: cannot allocate "
                    "%zu bytes; %llu of %llu bytes available", device, bytes,
                    (unsigned long long)avail, (unsigned long long)d->limit);
  }
  void *raw = sim_cache_take(d, cap);
  d->used += bytes;
  pthread_mutex_unlock(&d->mu);
  if (!raw) raw = aligned_alloc(SIM_ALIGN, cap + SIM_ALIGN);
  if (!raw) {
    pthread_mutex_lock(&d->mu);
    d->used -= bytes;
    pthread_mutex_unlock(&d->mu);
    return sim_fail(err, XRT_RESOURCE_EXHAUSTED, "device %d: host memory for "
                    "%zu bytes is exhausted", device, bytes);
  }
  ((sim_blk *)raw)->bytes = bytes;
  ((sim_blk *)raw)->cap = cap;
  *out_mem = sim_mem_of(raw);
  return XRT_OK;
}

static void sim_buffer_free(void *client, int device, void *mem) {
  sim_client *c = (sim_client *)client;
  if (!c || !mem || device < 0 || device >= c->ndev) return;
  sim_device *d = &c->dev[device];
  sim_blk *b = sim_blk_of(mem);
  pthread_mutex_lock(&d->mu);
  d->used -= b->bytes;
  sim_cache_put(d, b);
  pthread_mutex_unlock(&d->mu);
}

static xrt_status sim_check_mem(sim_client *c, int device, const void *mem,
                                size_t bytes, xrt_plugin_error *err) {
  xrt_status s = sim_check_device(c, device, err);
  if (s) return s;
  if (!mem) return sim_fail(err, XRT_INVALID_ARGUMENT, "device memory is NULL");
  size_t have = sim_blk_of((void *)(uintptr_t)mem)->bytes;
  if (bytes > have)
    return sim_fail(err, XRT_OUT_OF_RANGE, "device %d: %zu bytes do not fit "
                    "a block of %zu bytes", device, bytes, have);
  return XRT_OK;
}

static xrt_status sim_buffer_write(void *client, int device, void *mem,
                                   const void *src, size_t bytes,
                                   xrt_plugin_error *err) {
  xrt_status s = sim_check_mem((sim_client *)client, device, mem, bytes, err);
  if (s) return s;
  if (bytes && !src) return sim_fail(err, XRT_INVALID_ARGUMENT, "src is NULL");
  if (bytes) memcpy(mem, src, bytes);
  return XRT_OK;
}

static xrt_status sim_buffer_read(void *client, int device, const void *mem,
                                  void *dst, size_t bytes,
                                  xrt_plugin_error *err) {
  xrt_status s = sim_check_mem((sim_client *)client, device, mem, bytes, err);
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
} sim_exe;

struct sim_cx {
  void **allvals; /* the frame's vals of every function */
  const sim_exe *exe;
  xrt_plugin_error *err;
};

static xrt_status sim_run_plan(const sim_plan *p, void **vals, sim_cx *cx) {
  for (int32_t i = 0; i < p->n; i++) {
    const sim_step *s = &p->steps[i];
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

static xrt_status sim_run_copy(const sim_step *st, void **vals, sim_cx *cx) {
  (void)cx;
  if (st->n) memcpy(vals[st->out[0]], vals[st->in[0]], (size_t)st->n);
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
  (void)cx;
  sim_xcopy_run((const sim_xcopy *)st->data, (char *)vals[st->out[0]],
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
  void *cptr;
} sim_vinfo;

typedef struct sim_cc {
  xrt_allocator al;
  sim_exe *exe;
  const xrt_ir_module *m;
  xrt_plugin_error *err;
  const xrt_host_binding *hosts; /* by custom_call op->callee */
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

static const xrt_ir_attr *sim_attr(const xrt_ir_op *op, const char *name,
                                   int kind) {
  const xrt_ir_attr *a = xrt_ir_op_attr(op, name);
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

/* A free-list allocator over arena offsets: best fit, no splitting. */
typedef struct sim_slots {
  size_t *off, *cap;
  int32_t n;
  size_t top;
} sim_slots;

static void sim_slot_alloc(sim_slots *s, sim_vinfo *v) {
  int32_t best = -1;
  for (int32_t i = 0; i < s->n; i++)
    if (s->cap[i] >= v->bytes && (best < 0 || s->cap[i] < s->cap[best]))
      best = i;
  if (best >= 0) {
    v->off = s->off[best];
    v->cap = s->cap[best];
    s->off[best] = s->off[s->n - 1];
    s->cap[best] = s->cap[--s->n];
    return;
  }
  v->off = s->top;
  v->cap = sim_align_up(v->bytes);
  s->top += v->cap;
}

static void sim_slot_free(sim_slots *s, const sim_vinfo *v) {
  s->off[s->n] = v->off;
  s->cap[s->n++] = v->cap;
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
  size_t *sb = (size_t *)al->alloc(al->self, sizeof(size_t) * 2 * (size_t)nv + 1);
  if (!buf || !sb) {
    al->free(al->self, buf);
    al->free(al->self, sb);
    return sim_oom(fc);
  }
  int32_t *cnt = buf, *byd = buf + P + 1, *byl = byd + nv;
  sim_sort_by(fc, 0, cnt, byd);
  sim_sort_by(fc, 1, cnt, byl);
  sim_slots s = {sb, sb + nv, 0, 0};
  int32_t di = 0, li = 0, total = 0;
  for (int32_t i = 0; i < nv; i++) total += sim_has_slot(&fc->v[i]);
  for (int32_t p = 0; p < P; p++) {
    while (di < total && fc->v[byd[di]].def == p)
      sim_slot_alloc(&s, &fc->v[byd[di++]]);
    while (li < total && fc->v[byl[li]].last == p)
      sim_slot_free(&s, &fc->v[byl[li++]]);
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
  char *p = (char *)sim_palloc(fc, bytes);
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
  sim_ew_fn fn = sim_ew_kernel(fc->f, op, &ctx, &owned, why, sizeof why);
  if (!fn)
    return sim_fail_op(fc->cc->err, op, XRT_UNIMPLEMENTED, "%s",
                       why[0] ? why : "elementwise op not supported");
  if (owned && ctx) {
    void **slot = (void **)sim_vec_push(&fc->cc->al, &fc->cc->exe->owned_ctx);
    if (!slot) {
      free((void *)(uintptr_t)ctx);
      return sim_oom(fc);
    }
    *slot = (void *)(uintptr_t)ctx;
  }
  st->run = sim_run_ew;
  st->ew = fn;
  st->ew_ctx = ctx;
  st->n = sim_numel(sim_shape(fc, op->results[0]));
  return XRT_OK;
}

/* The typed loop when the body is one add/mul/max/min/and/or of its two
 * arguments (either order) on the input's own type, else NULL. */
static sim_red_fn sim_reduce_fast_body(const sim_fcc *fc, const xrt_ir_op *op) {
  const xrt_ir_region *r = &op->regions[0];
  if (op->num_operands != 2 || r->num_args != 2 || r->num_ops != 2)
    return NULL;
  const xrt_ir_op *b = &r->ops[0], *t = &r->ops[1];
  if (b->num_operands != 2 || b->num_results != 1 || b->num_regions ||
      t->num_operands != 1 || t->operands[0] != b->results[0])
    return NULL;
  int32_t a0 = r->args[0], a1 = r->args[1];
  if (!((b->operands[0] == a0 && b->operands[1] == a1) ||
        (b->operands[0] == a1 && b->operands[1] == a0)))
    return NULL;
  const xrt_ir_type *in = &fc->f->value_types[op->operands[0]];
  const xrt_ir_type *res = &fc->f->value_types[op->results[0]];
  const xrt_ir_type *bt = &fc->f->value_types[b->results[0]];
  if (in->quant || res->quant || bt->quant ||
      in->shape.dtype != res->shape.dtype || bt->shape.dtype != res->shape.dtype)
    return NULL;
  return sim_red_pick(b->code, res->shape.dtype);
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
  int32_t n = 0;
  for (int32_t k = 0; k < in->rank; k++) {
    if (in->dims[k] == 1) continue;
    if (n > 0 && r->ostr[n - 1] == ostr[k] * in->dims[k]) {
      r->dims[n - 1] *= in->dims[k];
      r->ostr[n - 1] = ostr[k];
      continue;
    }
    r->dims[n] = in->dims[k];
    r->ostr[n++] = ostr[k];
  }
  if (n == 0) {
    r->dims[0] = 1;
    r->ostr[0] = 0;
    n = 1;
  }
  r->rank = n;
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
  int64_t *t = (int64_t *)sim_palloc(fc, sizeof *t * (size_t)(c ? c : 1));
  int64_t *u = y ? (int64_t *)sim_palloc(fc, sizeof *u * (size_t)(c ? c : 1))
                 : NULL;
  if (!t || (y && !u)) return NULL;
  sim_enum_offsets(nd, sizes, s1, y ? s2 : NULL, t, u);
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
  d->acc = -1;
  xrt_status rc = sim_dot_convert_temps(fc, d);
  if (!rc && d->unit_n) rc = sim_temp(fc, (size_t)d->N * asz, &d->acc);
  st->data = d;
  st->run = sim_run_dot;
  return rc;
}

static const int64_t *sim_dot_field(const xrt_ir_attr *dn, const char *name,
                                    int64_t *n) {
  const xrt_ir_attr *a = xrt_ir_attr_field(dn, name);
  *n = a && a->kind == XRT_ATTR_INTS ? a->n : 0;
  return *n ? a->ints : NULL;
}

static xrt_status sim_lower_dot_general(sim_fcc *fc, const xrt_ir_op *op,
                                        sim_step *st) {
  const xrt_ir_attr *dn = xrt_ir_op_attr(op, "dot_dimension_numbers");
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

/* Op families in their own files (inlined before release). */
#include "_dev/sim_index.inc"
#include "_dev/sim_ctrl.inc"
#include "_dev/sim_linalg.inc"

/* Lowerers of the ops the simulator implements directly; elementwise ops
 * go to sim_ew_kernel. */
static sim_lower_fn sim_lowerer(xrt_opcode code) {
  static const sim_lower_fn table[XRT_OP_COUNT] = {
      [XRT_OP_CONSTANT] = sim_lower_constant,
      [XRT_OP_IOTA] = sim_lower_iota,
      [XRT_OP_GET_DIMENSION_SIZE] = sim_lower_get_dimension_size,
      [XRT_OP_REPLICA_ID] = sim_lower_replica_id,
      [XRT_OP_PARTITION_ID] = sim_lower_replica_id,
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
      [XRT_OP_SEND] = sim_lower_send,
      [XRT_OP_RECV] = sim_lower_recv,
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
  case XRT_OP_SEND: case XRT_OP_RECV: case XRT_OP_COMPOSITE: return 1;
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

/* Every value the op touches is a value of this function that the
 * simulator can hold: tensors, and for some ops tuples and tokens. */
static xrt_status sim_check_values(sim_fcc *fc, const xrt_ir_op *op) {
  for (int32_t i = 0; i < op->num_operands + op->num_results; i++) {
    int32_t id = i < op->num_operands ? op->operands[i]
                                      : op->results[i - op->num_operands];
    if (id < 0 || id >= fc->f->num_values)
      return sim_fail_op(fc->cc->err, op, XRT_INTERNAL, "%s refers to value "
                         "%d, which does not exist", op->name, (int)id);
    const xrt_ir_type *t = &fc->f->value_types[id];
    if (t->kind != XRT_TYPE_TENSOR && !sim_takes_tuples(op->code))
      return sim_fail_op(fc->cc->err, op, XRT_UNIMPLEMENTED, "%s: tuple and "
                         "token values are not supported by the simulator",
                         op->name);
    if (!sim_type_ok(t, 0))
      return sim_fail_op(fc->cc->err, op, XRT_UNIMPLEMENTED, "%s: a value "
                         "has an element type the simulator cannot store",
                         op->name);
  }
  return XRT_OK;
}

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
  if (rc || (rc = lower(fc, op, &st))) return rc;
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
  for (int32_t i = 0; i < r->num_ops - 1 && !rc; i++)
    rc = sim_lower_op(fc, &r->ops[i], &steps);
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
  int32_t ns = 0, nc = 0;
  for (int32_t i = 0; i < fc->nv; i++) {
    ns += fc->v[i].kind == SIM_V_SLOT;
    nc += fc->v[i].kind == SIM_V_CONST;
  }
  int32_t *sid = (int32_t *)sim_palloc(fc, sizeof *sid * (size_t)(ns + 1));
  size_t *soff = (size_t *)sim_palloc(fc, sizeof *soff * (size_t)(ns + 1));
  int32_t *cid = (int32_t *)sim_palloc(fc, sizeof *cid * (size_t)(nc + 1));
  void **cptr = (void **)sim_palloc(fc, sizeof *cptr * (size_t)(nc + 1));
  if (!sid || !soff || !cid || !cptr) return XRT_RESOURCE_EXHAUSTED;
  ns = nc = 0;
  for (int32_t i = 0; i < fc->nv; i++) {
    if (fc->v[i].kind == SIM_V_SLOT) {
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
  for (int32_t i = 0; i < fc.f->num_values && !rc; i++) {
    int32_t id;
    rc = sim_new_value(&fc, &id);
  }
  if (!rc) rc = sim_plan_body(&fc, fp, is_entry);
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
  for (int32_t i = 0; i < e->owned_ctx.n; i++)
    free(((void **)(void *)e->owned_ctx.p)[i]);
  sim_vec_free(&e->cl->al, &e->owned_ctx);
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

static xrt_status sim_compile(void *client, const xrt_plugin_compile_args *args,
                              void **out_executable, xrt_plugin_error *err) {
  sim_client *c = (sim_client *)client;
  if (!c || !args || !out_executable || args->struct_size < sizeof *args ||
      !args->module)
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
  sim_cc cc = {c->al, e, m, err, args->host_bindings};
  xrt_status rc = XRT_OK;
  e->fp = (sim_fplan *)sim_pool_alloc(&e->pool, sizeof *e->fp *
                                                    (size_t)m->num_funcs);
  if (!e->fp)
    rc = sim_fail(err, XRT_RESOURCE_EXHAUSTED, "out of host memory");
  if (!rc) rc = sim_plan_func(&cc, args->entry, 1);
  if (!rc) {
    sim_layout(e);
    rc = sim_frame_make(e, &e->frame, err);
  }
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

/* Binds arguments and outputs, runs the entry plan, copies the results
 * that are not bound to their output buffer. */
static xrt_status sim_run_entry(const sim_exe *e, sim_frame *fr,
                                void *const *args, void *const *outs,
                                xrt_plugin_error *err) {
  const sim_fplan *fp = &e->fp[e->entry];
  void **vals = fr->vals + fp->vbase;
  for (int32_t i = 0; i < fp->nargs; i++) vals[fp->args[i]] = args[i];
  for (int32_t j = 0; j < fp->nrets; j++)
    if (fp->ret_direct[j]) vals[fp->rets[j]] = outs[j];
  sim_cx cx = {fr->vals, e, err};
  xrt_status rc = sim_run_plan(&fp->body, vals, &cx);
  if (rc) return rc;
  for (int32_t j = 0; j < fp->nrets; j++) {
    const void *src = vals[fp->rets[j]];
    if (!fp->ret_direct[j] && fp->ret_bytes[j] && src != outs[j])
      memcpy(outs[j], src, fp->ret_bytes[j]);
  }
  return XRT_OK;
}

static xrt_status sim_execute(void *client, void *executable, int device,
                              void *const *args, int num_args,
                              void *const *outs, int num_outs,
                              xrt_plugin_error *err) {
  sim_client *c = (sim_client *)client;
  sim_exe *e = (sim_exe *)executable;
  xrt_status rc = sim_check_device(c, device, err);
  if (rc) return rc;
  if (!e || e->cl != c)
    return sim_fail(err, XRT_INVALID_ARGUMENT, "bad executable");
  const sim_fplan *fp = &e->fp[e->entry];
  if (num_args != fp->nargs || num_outs != fp->nrets ||
      (num_args && !args) || (num_outs && !outs))
    return sim_fail(err, XRT_INVALID_ARGUMENT, "@%s takes %d argument(s) and "
                    "%d result(s), got %d and %d", e->m->funcs[e->entry].name,
                    (int)fp->nargs, (int)fp->nrets, num_args, num_outs);
  if (pthread_mutex_trylock(&e->mu) == 0) {
    rc = sim_run_entry(e, &e->frame, args, outs, err);
    pthread_mutex_unlock(&e->mu);
    return rc;
  }
  sim_frame tmp; /* the owned frame is busy: a concurrent execute */
  memset(&tmp, 0, sizeof tmp);
  if ((rc = sim_frame_make(e, &tmp, err))) return rc;
  rc = sim_run_entry(e, &tmp, args, outs, err);
  sim_frame_free(e, &tmp);
  return rc;
}

/* ======================================================================
 * The plugin table
 * ==================================================================== */

static const xrt_plugin_api sim_api = {
    sizeof(xrt_plugin_api),
    XRT_PLUGIN_ABI_MAJOR,
    XRT_PLUGIN_ABI_MINOR,
    "sim",
    "0.1.0",
    sim_client_create,
    sim_client_destroy,
    sim_device_count,
    sim_device_describe,
    sim_buffer_alloc,
    sim_buffer_free,
    sim_buffer_write,
    sim_buffer_read,
    sim_buffer_copy,
    sim_compile,
    sim_executable_destroy,
    sim_execute,
};

const xrt_plugin_api *xrt_sim_plugin_api(void) { return &sim_api; }

#ifdef XRT_PLUGIN_SHARED
const xrt_plugin_api *xrt_plugin_get_api(void);
const xrt_plugin_api *xrt_plugin_get_api(void) { return &sim_api; }
#endif
