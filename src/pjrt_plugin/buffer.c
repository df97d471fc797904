/*
 * src/pjrt_plugin/buffer.c - PJRT_Buffer over xrt buffers, and the
 * transfers: host to device (PJRT_Client_BufferFromHostBuffer), device to
 * host, device to device.
 * Part of libxrt_pjrt.so; MIT licensed, see LICENSE.
 *
 * Buffers are dense and row-major (PJRT's default layout: minor_to_major
 * rank-1 .. 0, no tiles).  Host data in another layout is refused with
 * UNIMPLEMENTED, except byte_strides of BufferFromHostBuffer (any strides,
 * negative included: the elements are gathered first).  Transfers run
 * synchronously, so the data is copied when the call returns whatever the
 * host_buffer_semantics, and done_with_host_buffer is ready at once.  A
 * buffer is not "on CPU" for PJRT (IsOnCpu false): the host must not alias
 * its memory.
 *
 * A PJRT_Buffer holds a reference to the core's buffer object; the
 * outputs of the dispatch path have no xrt handle until a call needs one
 * (xp_buffer_xrt: reads, copies, the general Execute path), see
 * internal.h.
 */
#include "internal.h"

/* ---- element types ---- */

XP_PRIVATE xrt_dtype xp_dtype_from_pjrt(PJRT_Buffer_Type t) {
  switch (t) {
  case PJRT_Buffer_Type_PRED: return XRT_PRED;
  case PJRT_Buffer_Type_S8: return XRT_S8;
  case PJRT_Buffer_Type_S16: return XRT_S16;
  case PJRT_Buffer_Type_S32: return XRT_S32;
  case PJRT_Buffer_Type_S64: return XRT_S64;
  case PJRT_Buffer_Type_U8: return XRT_U8;
  case PJRT_Buffer_Type_U16: return XRT_U16;
  case PJRT_Buffer_Type_U32: return XRT_U32;
  case PJRT_Buffer_Type_U64: return XRT_U64;
  case PJRT_Buffer_Type_F16: return XRT_F16;
  case PJRT_Buffer_Type_F32: return XRT_F32;
  case PJRT_Buffer_Type_F64: return XRT_F64;
  case PJRT_Buffer_Type_BF16: return XRT_BF16;
  case PJRT_Buffer_Type_C64: return XRT_C64;
  case PJRT_Buffer_Type_C128: return XRT_C128;
  case PJRT_Buffer_Type_F8E5M2: return XRT_F8E5M2;
  case PJRT_Buffer_Type_F8E4M3FN: return XRT_F8E4M3FN;
  case PJRT_Buffer_Type_F8E4M3B11FNUZ: return XRT_F8E4M3B11FNUZ;
  case PJRT_Buffer_Type_F8E5M2FNUZ: return XRT_F8E5M2FNUZ;
  case PJRT_Buffer_Type_F8E4M3FNUZ: return XRT_F8E4M3FNUZ;
  case PJRT_Buffer_Type_S4: return XRT_S4;
  case PJRT_Buffer_Type_U4: return XRT_U4;
  case PJRT_Buffer_Type_S2: return XRT_S2;
  case PJRT_Buffer_Type_U2: return XRT_U2;
  case PJRT_Buffer_Type_F8E4M3: return XRT_F8E4M3;
  case PJRT_Buffer_Type_F8E3M4: return XRT_F8E3M4;
  default: return XRT_DTYPE_INVALID; /* INVALID, TOKEN, newer types */
  }
}

XP_PRIVATE PJRT_Buffer_Type xp_dtype_to_pjrt(xrt_dtype t) {
  for (int p = PJRT_Buffer_Type_PRED; p <= PJRT_Buffer_Type_F8E3M4; p++)
    if (xp_dtype_from_pjrt((PJRT_Buffer_Type)p) == t && t != XRT_DTYPE_INVALID)
      return (PJRT_Buffer_Type)p;
  return PJRT_Buffer_Type_INVALID; /* f8E8M0FNU, f6, f4: not in PJRT 0.60 */
}

XP_PRIVATE void xp_shape_from_xrt(xp_shape *out, const xrt_shape *s) {
  out->dtype = s->dtype;
  out->type = xp_dtype_to_pjrt(s->dtype);
  out->num_dims = (size_t)s->rank;
  for (int i = 0; i < s->rank; i++) out->dims[i] = s->dims[i];
  out->bytes = xrt_shape_bytes(s);
}

static void xp_shape_to_xrt(const xp_shape *s, xrt_shape *out) {
  memset(out, 0, sizeof *out);
  out->dtype = s->dtype;
  out->rank = (int32_t)s->num_dims;
  for (size_t i = 0; i < s->num_dims; i++) out->dims[i] = s->dims[i];
}

/* minor_to_major of a dense row-major array of rank r: the last r
 * entries, (r-1, ..., 0). */
static const int64_t xp_row_major[XRT_MAX_RANK] = {15, 14, 13, 12, 11, 10, 9, 8,
                                                   7,  6,  5,  4,  3,  2,  1, 0};

/* ---- buffer objects ---- */

/* Spare buffer records: a dispatch makes one PJRT_Buffer per output and
 * the host destroys it soon after, so records are recycled instead of
 * going through malloc and free each time, and each keeps its handle
 * slot meanwhile (handle.c: no table lock then).  A spin lock guards the
 * list: it is held for a few instructions.  At most XP_SPARE_MAX are kept,
 * so a burst of live buffers gives its memory back.
 *
 * Each thread also keeps one spare record aside, so that a dispatch and
 * the destroy of its output take no lock.  Every record is on xp_all
 * (under the lock), so that one left in the slot of a thread that exited
 * is not lost: the library's unload frees them all.  Not with the test
 * hooks, whose test frees the list of spares itself. */
enum { XP_SPARE_MAX = 256 };
static atomic_flag xp_spare_lock = ATOMIC_FLAG_INIT;
static xp_buffer *xp_spare;
static unsigned xp_num_spare;
#if !defined(XP_ALLOC_HOOKS)
#define XP_THREAD_SPARE 1
static XP_TLS xp_buffer *xp_thread_spare;
static xp_buffer *xp_all;
#endif

static void xp_spare_take(void) {
  while (atomic_flag_test_and_set_explicit(&xp_spare_lock,
                                           memory_order_acquire))
    sched_yield();
}

static void xp_spare_give(void) {
  atomic_flag_clear_explicit(&xp_spare_lock, memory_order_release);
}

/* A record, spare (with its slot) or new (slot XP_NO_SLOT); NULL when out
 * of memory. */
static xp_buffer *xp_record_new(void) {
#ifdef XP_THREAD_SPARE
  xp_buffer *t = xp_thread_spare;
  if (t) {
    xp_thread_spare = NULL;
    return t;
  }
#endif
  xp_spare_take();
  xp_buffer *b = xp_spare;
  if (b) {
    xp_spare = b->next_spare;
    xp_num_spare--;
  }
  xp_spare_give();
  if (b || !(b = (xp_buffer *)xp_malloc(sizeof *b))) return b;
  b->slot = XP_NO_SLOT;
#ifdef XP_THREAD_SPARE
  xp_spare_take();
  b->all_prev = NULL;
  b->all_next = xp_all;
  if (xp_all) xp_all->all_prev = b;
  xp_all = b;
  xp_spare_give();
#endif
  return b;
}

/* Keeps a record (with its slot) for reuse, or frees both. */
static void xp_record_free(xp_buffer *b) {
#ifdef XP_THREAD_SPARE
  if (!xp_thread_spare) {
    xp_thread_spare = b;
    return;
  }
#endif
  xp_spare_take();
  int keep = xp_num_spare < XP_SPARE_MAX;
  if (keep) {
    b->next_spare = xp_spare;
    xp_spare = b;
    xp_num_spare++;
  }
#ifdef XP_THREAD_SPARE
  if (!keep) {
    if (b->all_prev) b->all_prev->all_next = b->all_next;
    else xp_all = b->all_next;
    if (b->all_next) b->all_next->all_prev = b->all_prev;
  }
#endif
  xp_spare_give();
  if (keep) return;
  if (b->slot != XP_NO_SLOT) xp_handle_slot_free(b->slot);
  xp_free(b);
}

#if defined(__GNUC__)
/* The records go when the library is unloaded (as the handle chunks
 * do). */
__attribute__((destructor)) static void xp_spares_unload(void) {
#ifdef XP_THREAD_SPARE
  while (xp_all) {
    xp_buffer *b = xp_all;
    xp_all = b->all_next;
    xp_free(b);
  }
  xp_thread_spare = NULL;
#else
  while (xp_spare) {
    xp_buffer *b = xp_spare;
    xp_spare = b->next_spare;
    xp_free(b);
  }
#endif
  xp_spare = NULL;
  xp_num_spare = 0;
}
#endif

/* Copies a shape: the fields and the dims in use (the whole array is 128
 * bytes; up to 4 dims go as one fixed-size copy, inline). */
static void xp_shape_copy(xp_shape *dst, const xp_shape *src) {
  dst->type = src->type;
  dst->dtype = src->dtype;
  dst->num_dims = src->num_dims;
  dst->bytes = src->bytes;
  memcpy(dst->dims, src->dims, 4 * sizeof src->dims[0]);
  if (src->num_dims > 4)
    memcpy(dst->dims + 4, src->dims + 4,
           (src->num_dims - 4) * sizeof src->dims[0]);
}

/* A record on d with the shape, over xobj and xb (either may be NULL);
 * NULL when out of memory. */
static PJRT_Buffer *xp_buffer_record(void *xobj, xrt_buffer *xb,
                                     const xp_device *d,
                                     const xp_shape *shape) {
  xp_buffer *b = xp_record_new();
  if (!b) return NULL;
  atomic_init(&b->xobj, xobj);
  atomic_init(&b->xb, xb);
  atomic_flag_clear_explicit(&b->lock, memory_order_relaxed);
  b->device = d->handle;
  b->memory = d->memory_handle;
  xp_shape_copy(&b->shape, shape);
  b->minor_to_major = xp_row_major + (XRT_MAX_RANK - shape->num_dims);
  if (b->slot != XP_NO_SLOT) {
    b->handle = (PJRT_Buffer *)xp_handle_renew(b->slot, b, XP_KIND_BUFFER);
    return b->handle;
  }
  b->handle = (PJRT_Buffer *)xp_handle_new(b, XP_KIND_BUFFER);
  if (b->handle) {
    b->slot = xp_handle_slot(b->handle);
    return b->handle;
  }
  xp_record_free(b);
  return NULL;
}

XP_PRIVATE PJRT_Buffer *xp_buffer_wrap(xrt_buffer *xb, const xp_device *d,
                                       const xp_shape *shape) {
  void *xobj = xrt__pjrt_buffer_hold(xb); /* the record's reference */
  PJRT_Buffer *h = xobj ? xp_buffer_record(xobj, xb, d, shape) : NULL;
  if (h) return h;
  if (xobj) xrt__pjrt_buffer_unref(xobj);
  xrt_buffer_release(xb);
  return NULL;
}

XP_PRIVATE PJRT_Buffer *xp_buffer_wrap_obj(void *xobj, const xp_device *d,
                                           const xp_shape *shape) {
  PJRT_Buffer *h = xp_buffer_record(xobj, NULL, d, shape);
  if (!h) xrt__pjrt_buffer_unref(xobj);
  return h;
}

static void xp_buffer_lock(xp_buffer *b) {
  while (atomic_flag_test_and_set_explicit(&b->lock, memory_order_acquire))
    sched_yield();
}

static void xp_buffer_unlock(xp_buffer *b) {
  atomic_flag_clear_explicit(&b->lock, memory_order_release);
}

XP_PRIVATE xrt_buffer *xp_buffer_xrt(xp_buffer *b) {
  xrt_buffer *xb = atomic_load_explicit(&b->xb, memory_order_acquire);
  if (xb) return xb;
  xp_buffer_lock(b);
  xb = atomic_load_explicit(&b->xb, memory_order_acquire);
  void *xobj = atomic_load_explicit(&b->xobj, memory_order_acquire);
  /* the object went with its client, if that was destroyed (its device
   * handles die first) */
  if (!xb && xobj && xp_device_get(b->device)) {
    xb = xrt__pjrt_buffer_publish(xobj);
    atomic_store_explicit(&b->xb, xb, memory_order_release);
  }
  xp_buffer_unlock(b);
  return xb;
}

/* Drops what a record holds (the device memory goes with the last
 * reference); the object is not touched once its client is destroyed,
 * which freed it (the device handles die first). */
static void xp_buffer_drop(xp_buffer *b, void *xobj, xrt_buffer *xb) {
  if (xb) xrt_buffer_release(xb); /* a stale handle is refused safely */
  if (xobj && xp_device_get(b->device)) xrt__pjrt_buffer_unref(xobj);
}

XP_PRIVATE int xp_buffer_free(PJRT_Buffer *buffer) {
  xp_buffer *b = (xp_buffer *)xp_handle_retire_keep(buffer, XP_KIND_BUFFER);
  if (!b) return 0;
  /* The retire made this thread the object's last user (PJRT forbids
   * using a buffer while it is destroyed): no lock, plain loads. */
  void *xobj = atomic_load_explicit(&b->xobj, memory_order_acquire);
  xrt_buffer *xb = atomic_load_explicit(&b->xb, memory_order_acquire);
  atomic_store_explicit(&b->xobj, NULL, memory_order_relaxed);
  atomic_store_explicit(&b->xb, NULL, memory_order_relaxed);
  xp_buffer_drop(b, xobj, xb);
  xp_record_free(b); /* with its slot */
  return 1;
}

static xp_buffer *xp_buffer_arg(const char *fn, PJRT_Buffer *buffer,
                                const char *what, PJRT_Error **err) {
  xp_buffer *b = (xp_buffer *)xp_handle_get(buffer, XP_KIND_BUFFER);
  if (!b)
    *err = buffer ? xp_error_stale(fn, what, "PJRT_Buffer")
                  : xp_error_null(fn, what);
  return b;
}

/* The xrt buffer of a buffer that is not deleted, or NULL with *err. */
static xrt_buffer *xp_buffer_live(const char *fn, xp_buffer *b,
                                  PJRT_Error **err) {
  xrt_buffer *xb = xp_buffer_xrt(b);
  if (xb) return xb;
  if (!atomic_load_explicit(&b->xobj, memory_order_acquire))
    *err = xp_error(PJRT_Error_Code_INVALID_ARGUMENT,
                    "%s: the buffer has been deleted", fn);
  else if (!xp_device_get(b->device))
    *err = xp_error(PJRT_Error_Code_INVALID_ARGUMENT,
                    "%s: the buffer's client has been destroyed", fn);
  else
    *err = xp_error_xrt(fn, xrt_last_status()); /* out of handles */
  return NULL;
}

/* The device record of a buffer; NULL (with *err) once its client is
 * destroyed. */
static xp_device *xp_buffer_device(const char *fn, xp_buffer *b,
                                   PJRT_Error **err) {
  xp_device *d = xp_device_get(b->device);
  if (!d)
    *err = xp_error(PJRT_Error_Code_INVALID_ARGUMENT,
                    "%s: the buffer's client has been destroyed", fn);
  return d;
}

#define XP_BUFFER_ARG(fn, args, type, field)                               \
  XP_ARGS(fn, args, type##_STRUCT_SIZE);                                   \
  PJRT_Error *err_ = NULL;                                                 \
  xp_buffer *b = xp_buffer_arg(fn, args->field, "args->" #field, &err_);   \
  if (!b) return err_

/* ---- layouts ---- */

static int64_t xp_dense_stride(const xp_shape *s, size_t dim, size_t es) {
  int64_t st = (int64_t)es;
  for (size_t i = dim + 1; i < s->num_dims; i++) st *= s->dims[i];
  return st;
}

/* Whether byte strides describe the dense row-major layout (strides of
 * dimensions of size 1 do not matter, nor any of an empty array). */
static int xp_strides_dense(const xp_shape *s, const int64_t *strides,
                            size_t es) {
  for (size_t i = 0; i < s->num_dims; i++)
    if (s->dims[i] == 0) return 1;
  for (size_t i = 0; i < s->num_dims; i++)
    if (s->dims[i] > 1 && strides[i] != xp_dense_stride(s, i, es)) return 0;
  return 1;
}

/* Whether a layout the host gives is the dense row-major one. */
static PJRT_Error *xp_layout_check(const char *fn, const char *what,
                                   const PJRT_Buffer_MemoryLayout *l,
                                   const xp_shape *s) {
  if (l->struct_size < PJRT_Buffer_MemoryLayout_STRUCT_SIZE)
    return xp_error(PJRT_Error_Code_INVALID_ARGUMENT,
                    "%s: %s->struct_size is %zu, at least %zu expected", fn,
                    what, l->struct_size,
                    (size_t)PJRT_Buffer_MemoryLayout_STRUCT_SIZE);
  size_t es = xrt_dtype_size(s->dtype);
  int dense = 0;
  if (l->type == PJRT_Buffer_MemoryLayout_Type_Tiled) {
    const PJRT_Buffer_MemoryLayout_Tiled *t = &l->tiled;
    dense = t->minor_to_major_size == s->num_dims && t->num_tiles == 0 &&
            (s->num_dims == 0 || t->minor_to_major);
    for (size_t i = 0; dense && i < s->num_dims; i++)
      dense = t->minor_to_major[i] == (int64_t)(s->num_dims - 1 - i);
  } else if (l->type == PJRT_Buffer_MemoryLayout_Type_Strides) {
    const PJRT_Buffer_MemoryLayout_Strides *st = &l->strides;
    dense = st->num_byte_strides == s->num_dims &&
            (s->num_dims == 0 || st->byte_strides) &&
            xp_strides_dense(s, st->byte_strides, es);
  }
  if (dense) return NULL;
  return xp_error(PJRT_Error_Code_UNIMPLEMENTED,
                  "%s: %s is not the dense row-major layout; xrt has no "
                  "other", fn, what);
}

/* Copies a strided host array into dense row-major dst. */
static void xp_gather(uint8_t *dst, const uint8_t *src, const xp_shape *s,
                      const int64_t *strides, size_t es) {
  size_t rank = s->num_dims;
  if (rank == 0) {
    memcpy(dst, src, es);
    return;
  }
  int64_t idx[XRT_MAX_RANK] = {0};
  int64_t inner = s->dims[rank - 1], step = strides[rank - 1];
  for (;;) {
    const uint8_t *p = src;
    for (size_t d = 0; d + 1 < rank; d++) p += idx[d] * strides[d];
    for (int64_t k = 0; k < inner; k++, dst += es) memcpy(dst, p + k * step, es);
    size_t d = rank - 1;
    while (d > 0 && ++idx[d - 1] == s->dims[d - 1]) idx[--d] = 0;
    if (d == 0) return;
  }
}

/* ---- host to device ---- */

/* The shape of a host buffer, checked. */
static PJRT_Error *xp_host_shape(const char *fn,
                                 const PJRT_Client_BufferFromHostBuffer_Args *a,
                                 xp_shape *s) {
  memset(s, 0, sizeof *s);
  s->type = a->type;
  s->dtype = xp_dtype_from_pjrt(a->type);
  /* INVALID and values outside the enum are the host's mistake; a real
   * type xrt lacks (TOKEN) is unimplemented. */
  if (a->type == PJRT_Buffer_Type_INVALID ||
      (unsigned)a->type > (unsigned)PJRT_Buffer_Type_F8E3M4)
    return xp_error(PJRT_Error_Code_INVALID_ARGUMENT,
                    "%s: %d is not a PJRT element type", fn, (int)a->type);
  if (s->dtype == XRT_DTYPE_INVALID)
    return xp_error(PJRT_Error_Code_UNIMPLEMENTED,
                    "%s: element type %d is not supported by xrt", fn,
                    (int)a->type);
  if (a->num_dims > XRT_MAX_RANK)
    return xp_error(PJRT_Error_Code_UNIMPLEMENTED,
                    "%s: rank %zu; xrt takes at most %d dimensions", fn,
                    a->num_dims, XRT_MAX_RANK);
  if (a->num_dims && !a->dims) return xp_error_null(fn, "args->dims");
  s->num_dims = a->num_dims;
  for (size_t i = 0; i < a->num_dims; i++) {
    if (a->dims[i] < 0)
      return xp_error(PJRT_Error_Code_INVALID_ARGUMENT,
                      "%s: dims[%zu] is %lld", fn, i, (long long)a->dims[i]);
    s->dims[i] = a->dims[i];
  }
  xrt_shape xs;
  xp_shape_to_xrt(s, &xs);
  s->bytes = xrt_shape_bytes(&xs);
  return NULL;
}

/* The destination device: args->memory's, else args->device. */
static PJRT_Error *xp_host_target(const char *fn,
                                  const PJRT_Client_BufferFromHostBuffer_Args *a,
                                  xp_client *c, xp_device **out) {
  PJRT_Memory *mem = a->memory;
  xp_device *d = NULL;
  if (mem && !(d = xp_memory_get(mem)))
    return xp_error_stale(fn, "args->memory", "PJRT_Memory");
  if (a->device) {
    xp_device *dd = xp_device_get(a->device);
    if (!dd) return xp_error_stale(fn, "args->device", "PJRT_Device");
    if (d && d != dd)
      return xp_error(PJRT_Error_Code_INVALID_ARGUMENT,
                      "%s: args->memory is not a memory of args->device", fn);
    d = dd;
  }
  if (!d) return xp_error_null(fn, "args->device (and args->memory)");
  if (d->client != c)
    return xp_error(PJRT_Error_Code_INVALID_ARGUMENT,
                    "%s: the device belongs to another client", fn);
  *out = d;
  return NULL;
}

/* Uploads data (dense, or gathered from byte_strides) to d. */
static PJRT_Error *xp_upload(const char *fn,
                             const PJRT_Client_BufferFromHostBuffer_Args *a,
                             xp_client *c, xp_device *d, const xp_shape *s,
                             xrt_buffer **out) {
  xrt_shape xs;
  xp_shape_to_xrt(s, &xs);
  size_t es = xrt_dtype_size(s->dtype), bytes = s->bytes;
  if (bytes && !a->data) return xp_error_null(fn, "args->data");
  const void *src = a->data;
  uint8_t *tmp = NULL;
  if (a->byte_strides && a->num_byte_strides) {
    if (a->num_byte_strides != s->num_dims)
      return xp_error(PJRT_Error_Code_INVALID_ARGUMENT,
                      "%s: %zu byte_strides for %zu dimensions", fn,
                      a->num_byte_strides, s->num_dims);
    if (bytes && !xp_strides_dense(s, a->byte_strides, es)) {
      if (!(tmp = (uint8_t *)xp_malloc(bytes)))
        return xp_error(PJRT_Error_Code_RESOURCE_EXHAUSTED,
                        "%s: out of host memory (%zu bytes to gather strided "
                        "data)", fn, bytes);
      xp_gather(tmp, (const uint8_t *)a->data, s, a->byte_strides, es);
      src = tmp;
    }
  }
  xrt_status st = xrt_buffer_from_host(c->xc, d->xd, &xs, src, out);
  xp_free(tmp);
  return st ? xp_error_xrt(fn, st) : NULL;
}

static PJRT_Error *xp_from_host(PJRT_Client_BufferFromHostBuffer_Args *args) {
  static const char fn[] = "PJRT_Client_BufferFromHostBuffer";
  XP_ARGS(fn, args, PJRT_Client_BufferFromHostBuffer_Args_STRUCT_SIZE);
  args->buffer = NULL; /* nothing is returned on failure */
  args->done_with_host_buffer = NULL;
  xp_client *c = xp_client_get(args->client);
  if (!c)
    return args->client ? xp_error_stale(fn, "args->client", "PJRT_Client")
                        : xp_error_null(fn, "args->client");
  if ((unsigned)args->host_buffer_semantics >
      (unsigned)PJRT_HostBufferSemantics_kMutableZeroCopy)
    return xp_error(PJRT_Error_Code_INVALID_ARGUMENT,
                    "%s: unknown host_buffer_semantics %d", fn,
                    (int)args->host_buffer_semantics);
  xp_shape s;
  xp_device *d = NULL;
  PJRT_Error *e = xp_host_shape(fn, args, &s);
  if (!e) e = xp_host_target(fn, args, c, &d);
  if (!e && args->device_layout)
    e = xp_layout_check(fn, "args->device_layout", args->device_layout, &s);
  xrt_buffer *xb = NULL;
  if (!e) e = xp_upload(fn, args, c, d, &s, &xb);
  if (e) return e;
  PJRT_Buffer *buf = xp_buffer_wrap(xb, d, &s);
  PJRT_Event *done = buf ? xp_event_ready(NULL) : NULL;
  if (!done) {
    xp_buffer_free(buf);
    return xp_error(PJRT_Error_Code_RESOURCE_EXHAUSTED,
                    "%s: out of host memory", fn);
  }
  args->buffer = buf;
  args->done_with_host_buffer = done;
  return NULL;
}

/* ---- the buffer's entry points ---- */

static PJRT_Error *xp_buffer_destroy(PJRT_Buffer_Destroy_Args *args) {
  static const char fn[] = "PJRT_Buffer_Destroy";
  XP_ARGS(fn, args, PJRT_Buffer_Destroy_Args_STRUCT_SIZE);
  if (!args->buffer) return NULL;
  if (!xp_buffer_free(args->buffer))
    return xp_error_stale(fn, "args->buffer", "PJRT_Buffer");
  return NULL;
}

static PJRT_Error *xp_buffer_type(PJRT_Buffer_ElementType_Args *args) {
  XP_BUFFER_ARG("PJRT_Buffer_ElementType", args, PJRT_Buffer_ElementType_Args,
                buffer);
  args->type = b->shape.type;
  return NULL;
}

static PJRT_Error *xp_buffer_dims(PJRT_Buffer_Dimensions_Args *args) {
  XP_BUFFER_ARG("PJRT_Buffer_Dimensions", args, PJRT_Buffer_Dimensions_Args,
                buffer);
  args->dims = b->shape.dims;
  args->num_dims = b->shape.num_dims;
  return NULL;
}

static PJRT_Error *xp_buffer_unpadded_dims(
    PJRT_Buffer_UnpaddedDimensions_Args *args) {
  XP_BUFFER_ARG("PJRT_Buffer_UnpaddedDimensions", args,
                PJRT_Buffer_UnpaddedDimensions_Args, buffer);
  args->unpadded_dims = b->shape.dims; /* shapes are static */
  args->num_dims = b->shape.num_dims;
  return NULL;
}

static PJRT_Error *xp_buffer_dynamic_dims(
    PJRT_Buffer_DynamicDimensionIndices_Args *args) {
  XP_BUFFER_ARG("PJRT_Buffer_DynamicDimensionIndices", args,
                PJRT_Buffer_DynamicDimensionIndices_Args, buffer);
  (void)b;
  args->dynamic_dim_indices = NULL;
  args->num_dynamic_dims = 0;
  return NULL;
}

static PJRT_Error *xp_buffer_layout(PJRT_Buffer_GetMemoryLayout_Args *args) {
  XP_BUFFER_ARG("PJRT_Buffer_GetMemoryLayout", args,
                PJRT_Buffer_GetMemoryLayout_Args, buffer);
  PJRT_Buffer_MemoryLayout *l = &args->layout;
  memset(l, 0, sizeof *l);
  l->struct_size = PJRT_Buffer_MemoryLayout_STRUCT_SIZE;
  l->type = PJRT_Buffer_MemoryLayout_Type_Tiled;
  l->tiled.struct_size = PJRT_Buffer_MemoryLayout_Tiled_STRUCT_SIZE;
  l->tiled.minor_to_major = b->minor_to_major;
  l->tiled.minor_to_major_size = b->shape.num_dims;
  l->tiled.num_tiles = 0;
  return NULL;
}

static PJRT_Error *xp_buffer_size(PJRT_Buffer_OnDeviceSizeInBytes_Args *args) {
  XP_BUFFER_ARG("PJRT_Buffer_OnDeviceSizeInBytes", args,
                PJRT_Buffer_OnDeviceSizeInBytes_Args, buffer);
  args->on_device_size_in_bytes = b->shape.bytes;
  return NULL;
}

static PJRT_Error *xp_buffer_device_get(PJRT_Buffer_Device_Args *args) {
  static const char fn[] = "PJRT_Buffer_Device";
  XP_BUFFER_ARG(fn, args, PJRT_Buffer_Device_Args, buffer);
  xp_device *d = xp_buffer_device(fn, b, &err_);
  if (!d) return err_;
  args->device = d->handle;
  return NULL;
}

static PJRT_Error *xp_buffer_memory(PJRT_Buffer_Memory_Args *args) {
  static const char fn[] = "PJRT_Buffer_Memory";
  XP_BUFFER_ARG(fn, args, PJRT_Buffer_Memory_Args, buffer);
  xp_device *d = xp_buffer_device(fn, b, &err_);
  if (!d) return err_;
  args->memory = d->memory_handle;
  return NULL;
}

/* Frees the device memory (once queued work on it is done); the object
 * stays for IsDeleted and Destroy. */
static PJRT_Error *xp_buffer_delete(PJRT_Buffer_Delete_Args *args) {
  XP_BUFFER_ARG("PJRT_Buffer_Delete", args, PJRT_Buffer_Delete_Args, buffer);
  xp_buffer_lock(b);
  void *xobj = atomic_exchange(&b->xobj, NULL);
  xrt_buffer *xb = atomic_exchange(&b->xb, NULL);
  xp_buffer_unlock(b);
  xp_buffer_drop(b, xobj, xb);
  return NULL;
}

static PJRT_Error *xp_buffer_is_deleted(PJRT_Buffer_IsDeleted_Args *args) {
  XP_BUFFER_ARG("PJRT_Buffer_IsDeleted", args, PJRT_Buffer_IsDeleted_Args,
                buffer);
  args->is_deleted = atomic_load(&b->xobj) == NULL;
  return NULL;
}

/* Copies b to device dst of the same client (PJRT: not to its own). */
static PJRT_Error *xp_buffer_copy(const char *fn, xp_buffer *b, xp_device *dst,
                                  PJRT_Buffer **out) {
  PJRT_Error *err = NULL;
  xrt_buffer *xb = xp_buffer_live(fn, b, &err);
  xp_device *src = xb ? xp_buffer_device(fn, b, &err) : NULL;
  if (!src) return err;
  if (src->client != dst->client)
    return xp_error(PJRT_Error_Code_INVALID_ARGUMENT,
                    "%s: the destination belongs to another client", fn);
  if (src == dst)
    return xp_error(PJRT_Error_Code_INVALID_ARGUMENT,
                    "%s: the buffer is already on device %d", fn, dst->index);
  xrt_buffer *copy = NULL;
  xrt_status s = xrt_buffer_copy_to_device(xb, dst->xd, &copy);
  if (s) return xp_error_xrt(fn, s);
  if (!(*out = xp_buffer_wrap(copy, dst, &b->shape)))
    return xp_error(PJRT_Error_Code_RESOURCE_EXHAUSTED,
                    "%s: out of host memory", fn);
  return NULL;
}

static PJRT_Error *xp_buffer_to_device(PJRT_Buffer_CopyToDevice_Args *args) {
  static const char fn[] = "PJRT_Buffer_CopyToDevice";
  XP_BUFFER_ARG(fn, args, PJRT_Buffer_CopyToDevice_Args, buffer);
  args->dst_buffer = NULL;
  xp_device *dst = xp_device_get(args->dst_device);
  if (!dst)
    return args->dst_device
               ? xp_error_stale(fn, "args->dst_device", "PJRT_Device")
               : xp_error_null(fn, "args->dst_device");
  return xp_buffer_copy(fn, b, dst, &args->dst_buffer);
}

static PJRT_Error *xp_buffer_to_memory(PJRT_Buffer_CopyToMemory_Args *args) {
  static const char fn[] = "PJRT_Buffer_CopyToMemory";
  XP_BUFFER_ARG(fn, args, PJRT_Buffer_CopyToMemory_Args, buffer);
  args->dst_buffer = NULL;
  xp_device *dst = xp_memory_get(args->dst_memory);
  if (!dst)
    return args->dst_memory
               ? xp_error_stale(fn, "args->dst_memory", "PJRT_Memory")
               : xp_error_null(fn, "args->dst_memory");
  return xp_buffer_copy(fn, b, dst, &args->dst_buffer);
}

/* dst NULL asks for the size; otherwise the copy has finished when the
 * call returns and args->event is ready. */
static PJRT_Error *xp_buffer_to_host(PJRT_Buffer_ToHostBuffer_Args *args) {
  static const char fn[] = "PJRT_Buffer_ToHostBuffer";
  XP_BUFFER_ARG(fn, args, PJRT_Buffer_ToHostBuffer_Args, src);
  if (args->host_layout) {
    PJRT_Error *e = xp_layout_check(fn, "args->host_layout", args->host_layout,
                                    &b->shape);
    if (e) return e;
  }
  args->event = NULL;
  if (!args->dst) {
    args->dst_size = b->shape.bytes;
    return NULL;
  }
  if (args->dst_size < b->shape.bytes)
    return xp_error(PJRT_Error_Code_INVALID_ARGUMENT,
                    "%s: dst_size is %zu, the buffer has %zu bytes", fn,
                    args->dst_size, b->shape.bytes);
  xrt_buffer *xb = xp_buffer_live(fn, b, &err_);
  if (!xb) return err_;
  xrt_status s = xrt_buffer_to_host(xb, args->dst, args->dst_size);
  if (s) return xp_error_xrt(fn, s);
  if (!(args->event = xp_event_ready(NULL)))
    return xp_error(PJRT_Error_Code_RESOURCE_EXHAUSTED,
                    "%s: out of host memory", fn);
  return NULL;
}

static PJRT_Error *xp_buffer_is_on_cpu(PJRT_Buffer_IsOnCpu_Args *args) {
  XP_BUFFER_ARG("PJRT_Buffer_IsOnCpu", args, PJRT_Buffer_IsOnCpu_Args, buffer);
  (void)b;
  args->is_on_cpu = false; /* see the top of this file */
  return NULL;
}

/* A deleted buffer's event is ready with an error (as PJRT says). */
static PJRT_Error *xp_buffer_ready_event(PJRT_Buffer_ReadyEvent_Args *args) {
  static const char fn[] = "PJRT_Buffer_ReadyEvent";
  XP_BUFFER_ARG(fn, args, PJRT_Buffer_ReadyEvent_Args, buffer);
  args->event = NULL;
  /* Without a handle it is an output of the dispatch path: ready. */
  int live = atomic_load_explicit(&b->xobj, memory_order_acquire) != NULL;
  xrt_buffer *xb = atomic_load_explicit(&b->xb, memory_order_acquire);
  if (live && !xb && !xp_buffer_device(fn, b, &err_)) return err_;
  xrt_event *xe = NULL;
  xrt_status s = live && xb ? xrt_buffer_ready_event(xb, &xe) : XRT_OK;
  if (s) return xp_error_xrt(fn, s);
  args->event = xe     ? xp_event_wrap(xe)
                : live ? xp_event_ready(NULL)
                       : xp_event_ready(xp_error(
                             PJRT_Error_Code_FAILED_PRECONDITION,
                             "%s: the buffer has been deleted", fn));
  if (!args->event)
    return xp_error(PJRT_Error_Code_RESOURCE_EXHAUSTED,
                    "%s: out of host memory", fn);
  return NULL;
}

XP_PRIVATE void xp_buffer_register(PJRT_Api *api) {
  api->PJRT_Client_BufferFromHostBuffer = xp_from_host;
  api->PJRT_Buffer_Destroy = xp_buffer_destroy;
  api->PJRT_Buffer_ElementType = xp_buffer_type;
  api->PJRT_Buffer_Dimensions = xp_buffer_dims;
  api->PJRT_Buffer_UnpaddedDimensions = xp_buffer_unpadded_dims;
  api->PJRT_Buffer_DynamicDimensionIndices = xp_buffer_dynamic_dims;
  api->PJRT_Buffer_GetMemoryLayout = xp_buffer_layout;
  api->PJRT_Buffer_OnDeviceSizeInBytes = xp_buffer_size;
  api->PJRT_Buffer_Device = xp_buffer_device_get;
  api->PJRT_Buffer_Memory = xp_buffer_memory;
  api->PJRT_Buffer_Delete = xp_buffer_delete;
  api->PJRT_Buffer_IsDeleted = xp_buffer_is_deleted;
  api->PJRT_Buffer_CopyToDevice = xp_buffer_to_device;
  api->PJRT_Buffer_ToHostBuffer = xp_buffer_to_host;
  api->PJRT_Buffer_IsOnCpu = xp_buffer_is_on_cpu;
  api->PJRT_Buffer_ReadyEvent = xp_buffer_ready_event;
  api->PJRT_Buffer_CopyToMemory = xp_buffer_to_memory;
}
