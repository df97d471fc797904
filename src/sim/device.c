/*
 * src/sim/device.c - the simulator's platform calls, small helpers, clients,
 * devices and device memory, fault kinds, region copies, host memory as
 * device memory (zero-copy DLPack).
 * Part of the simulated device; MIT licensed, see LICENSE.
 */
#include "internal.h"
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

SIM_PRIVATE long sim_os_cpu_count(void) {
  return (long)GetActiveProcessorCount(ALL_PROCESSOR_GROUPS);
}
#else
#include <unistd.h>

/* The cores this process may run on (taskset, cgroup cpusets), as nproc
 * counts them: a pool sized from the online count would put two polling
 * threads on one allowed core. */
SIM_PRIVATE long sim_os_cpu_count(void) {
#if defined(__linux__)
  cpu_set_t s;
  if (sched_getaffinity(0, sizeof s, &s) == 0 && CPU_COUNT(&s) > 0)
    return CPU_COUNT(&s);
#endif
  return sysconf(_SC_NPROCESSORS_ONLN);
}
#endif

/* ======================================================================
 * Small helpers: errors, element types, compile-time memory
 * ==================================================================== */

SIM_PRIVATE size_t sim_align_up(size_t n) {
  return (n + SIM_ALIGN - 1) & ~(size_t)(SIM_ALIGN - 1);
}

SIM_PRIVATE xrt_status sim_vfail(xrt_plugin_error *err, xrt_status code,
                            const char *prefix, const char *fmt, va_list ap) {
  if (!err) return code;
  int k = snprintf(err->message, sizeof err->message, "%s", prefix);
  if (k < 0 || (size_t)k >= sizeof err->message) return code;
  vsnprintf(err->message + k, sizeof err->message - (size_t)k, fmt, ap);
  return code;
}
SIM_PRIVATE xrt_status sim_fail(xrt_plugin_error *err, xrt_status code,
                           const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  sim_vfail(err, code, "", fmt, ap);
  va_end(ap);
  return code;
}

SIM_PRIVATE void sim_loc(const xrt_ir_op *op, char *buf, size_t cap) {
  snprintf(buf, cap, "%s:%d:%d: ", op->loc.file ? op->loc.file : "<input>",
           (int)op->loc.line, (int)op->loc.col);
}

/* A failure about one op: "file:line:col: message". */
SIM_PRIVATE xrt_status sim_fail_op(xrt_plugin_error *err, const xrt_ir_op *op,
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
SIM_PRIVATE size_t sim_esize(xrt_dtype t) {
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

SIM_PRIVATE const char *sim_dtype_name(xrt_dtype t) {
  static const char *const names[XRT_DTYPE_COUNT] = {
      "invalid", "i1", "i8", "i16", "i32", "i64", "ui8", "ui16", "ui32",
      "ui64", "f16", "bf16", "f32", "f64", "complex<f32>", "complex<f64>",
      "i2", "i4", "ui2", "ui4", "f8E4M3FN", "f8E5M2", "f8E4M3FNUZ",
      "f8E5M2FNUZ", "f8E4M3B11FNUZ", "f8E3M4", "f8E4M3", "f8E8M0FNU",
      "f6E2M3FN", "f6E3M2FN", "f4E2M1FN"};
  return (unsigned)t < XRT_DTYPE_COUNT ? names[t] : "invalid";
}

SIM_PRIVATE int64_t sim_numel(const xrt_shape *s) {
  int64_t n = 1;
  for (int32_t i = 0; i < s->rank; i++) n *= s->dims[i];
  return n;
}

SIM_PRIVATE size_t sim_bytes(const xrt_shape *s) {
  return (size_t)sim_numel(s) * sim_esize(s->dtype);
}

/* Row-major strides in elements. */
SIM_PRIVATE void sim_strides(const xrt_shape *s, int64_t *st) {
  int64_t acc = 1;
  for (int32_t i = s->rank - 1; i >= 0; i--) {
    st[i] = acc;
    acc *= s->dims[i];
  }
}

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
SIM_PRIVATE void *sim_pool_raw(sim_pool *p, size_t bytes) {
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
SIM_PRIVATE void *sim_pool_alloc(sim_pool *p, size_t bytes) {
  void *data = sim_pool_raw(p, bytes);
  if (data) memset(data, 0, bytes);
  return data;
}

SIM_PRIVATE void sim_pool_release(sim_pool *p) {
  while (p->head) {
    void *next = *(void **)p->head;
    p->al.free(p->al.self, p->head);
    p->head = next;
  }
}

SIM_PRIVATE void *sim_vec_push(const xrt_allocator *al, sim_vec *v) {
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

SIM_PRIVATE void sim_vec_free(const xrt_allocator *al, sim_vec *v) {
  al->free(al->self, v->p);
  v->p = NULL;
  v->n = v->cap = 0;
}

SIM_PRIVATE int sim_push_i32(const xrt_allocator *al, sim_vec *v, int32_t x) {
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
  /* Write generation (sim_mem_serial): a new process-wide serial at every
   * allocation and every write into the block; 0 once its host address
   * was handed out (it may change behind the device's back). */
  _Atomic uint64_t serial;
} sim_blk;

static _Atomic uint64_t sim_serial_next = 1;

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

SIM_PRIVATE void sim_client_destroy(void *client) {
  sim_client *c = (sim_client *)client;
  if (!c) return;
  sim_launches_free(c);
  sim_tpools_free(c);
  sim_gcache_free(c);
  for (int i = 0; i < c->ndev; i++) {
    sim_cache_drop_all(&c->al, &c->dev[i]);
  }
  xrt_allocator al = c->al;
  al.free(al.self, c->dev);
  al.free(al.self, c);
}

SIM_PRIVATE xrt_status sim_client_create(const xrt_plugin_client_args *args,
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

SIM_PRIVATE int sim_device_count(void *client) {
  return client ? ((sim_client *)client)->ndev : -1;
}

SIM_PRIVATE xrt_status sim_check_device(sim_client *c, int device,
                                   xrt_plugin_error *err) {
  if (!c) return sim_fail(err, XRT_INVALID_ARGUMENT, "client is NULL");
  if (device < 0 || device >= c->ndev)
    return sim_fail(err, XRT_OUT_OF_RANGE, "device %d does not exist (the "
                    "client has %d)", device, c->ndev);
  return XRT_OK;
}

SIM_PRIVATE xrt_status sim_device_describe(void *client, int device,
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

SIM_PRIVATE xrt_status sim_buffer_alloc(void *client, int device, size_t bytes,
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
  atomic_store_explicit(&((sim_blk *)raw)->serial,
                        atomic_fetch_add(&sim_serial_next, 1),
                        memory_order_relaxed);
  *out_mem = sim_mem_of(raw);
  return XRT_OK;
}

/* Host memory adopted for zero-copy DLPack imports ("Host memory as device memory" below):
 * it has no sim_blk header. */
static bool sim_adopt_bytes(const sim_client *c, int device, const void *mem,
                           size_t *bytes);
static bool sim_adopt_forget(sim_client *c, int device, void *mem);

SIM_PRIVATE void sim_buffer_free(void *client, int device, void *mem) {
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

/* The block header of device memory mem, or NULL when mem is not one of
 * the device's blocks (adopted host memory has no header) or the
 * arguments name no device. */
static sim_blk *sim_device_blk(const sim_client *c, int device,
                               const void *mem) {
  size_t have;
  if (!c || !mem || device < 0 || device >= c->ndev ||
      sim_adopt_bytes(c, device, mem, &have))
    return NULL;
  return sim_blk_of((void *)(uintptr_t)mem);
}

/* A write into device memory mem: a block takes a new serial (unless its
 * host address was handed out); adopted host memory has none. */
static void sim_mem_touch(sim_client *c, int device, const void *mem) {
  sim_blk *b = sim_device_blk(c, device, mem);
  if (b && atomic_load_explicit(&b->serial, memory_order_relaxed))
    atomic_store_explicit(&b->serial, atomic_fetch_add(&sim_serial_next, 1),
                          memory_order_relaxed);
}

SIM_PRIVATE uint64_t sim_mem_serial(void *client, int device,
                                    const void *mem) {
  sim_blk *b = sim_device_blk((sim_client *)client, device, mem);
  return b ? atomic_load_explicit(&b->serial, memory_order_relaxed) : 0;
}

SIM_PRIVATE xrt_status sim_buffer_write(void *client, int device, void *mem,
                                   const void *src, size_t bytes,
                                   xrt_plugin_error *err) {
  xrt_status s = sim_check_mem((sim_client *)client, device, mem, bytes, err);
  if (!s) s = sim_fault_check((sim_client *)client, device, XRT_FAULT_TRANSFER,
                              "host-to-device transfer", err);
  if (s) return s;
  if (bytes && !src) return sim_fail(err, XRT_INVALID_ARGUMENT, "src is NULL");
  if (bytes) memcpy(mem, src, bytes);
  sim_mem_touch((sim_client *)client, device, mem);
  return XRT_OK;
}

SIM_PRIVATE xrt_status sim_buffer_read(void *client, int device, const void *mem,
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

SIM_PRIVATE xrt_status sim_buffer_copy(void *client, int src_device,
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
  sim_mem_touch(c, dst_device, dst);
  return XRT_OK;
}
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

SIM_PRIVATE xrt_status sim_fault_coll(sim_cx *cx, const xrt_ir_op *op) {
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

SIM_PRIVATE xrt_status sim_inject_fault_kind(void *client, int device, int kind,
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

SIM_PRIVATE xrt_status sim_buffer_copy_region(void *client,
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
  sim_mem_touch(c, a->dst_device, a->dst); /* before any return below */
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

SIM_PRIVATE void *sim_buffer_host_pointer(void *client, int device, void *mem) {
  /* writable behind the device's back from now on: no write generation */
  sim_blk *b = sim_device_blk((sim_client *)client, device, mem);
  if (b) atomic_store_explicit(&b->serial, 0, memory_order_relaxed);
  return mem;
}

SIM_PRIVATE xrt_status sim_buffer_wrap_host(void *client, int device, void *host,
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
