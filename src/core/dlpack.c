/*
 * src/core/dlpack.c - DLPack: export and import of buffers as DLManagedTensor.
 * Part of the core of xrt; MIT licensed, see LICENSE.
 */
#include "internal.h"

/* ======================================================================
 * 15. DLPack
 *
 * xrt.c does not include dlpack.h, so that vendoring xrt needs no extra
 * header: the structs below are private copies of DLPack 0.x's DLDevice,
 * DLDataType, DLTensor and DLManagedTensor, layout-identical (DLPack keeps
 * that ABI stable; test/test_dlpack.c checks the copies against dlpack.h).
 *
 * Export.  When the plugin's memory is host-addressable the tensor points
 * into the buffer: its manager context, an export record, holds a
 * reference to the buffer, so the memory outlives xrt_buffer_release
 * until the deleter runs.  Records of such exports are on one global list
 * for two reasons: client release, which frees every buffer whatever its
 * count, first orphans its records (their deleter then only frees the
 * record), and an import of memory that a live export shares with a
 * buffer of the same device is copied, not wrapped (a plugin names device
 * memory by its address, so it could not tell the two apart).  Otherwise
 * the data is copied into a block the record owns.
 *
 * Import.  Dense row-major tensors are wrapped when the plugin can adopt
 * host memory (buffer_wrap_host): the buffer keeps the tensor in b->dl
 * and xrt__dlpack_freed calls its deleter after the plugin's buffer_free.
 * Otherwise the data is copied (strided tensors are gathered into a dense
 * block first) and the deleter runs before the import returns.
 * ==================================================================== */

/* DLDeviceType and DLDataTypeCode values.  kDLBool is DLPack 0.8's code
 * (absent from 0.6, same ABI): pred maps to it, as NumPy, PyTorch and JAX
 * do. */
enum { XRT__DL_CPU = 1, XRT__DL_CUDA_HOST = 3 };
enum { XRT__DL_INT = 0, XRT__DL_UINT = 1, XRT__DL_FLOAT = 2,
       XRT__DL_BFLOAT = 4, XRT__DL_COMPLEX = 5, XRT__DL_BOOL = 6 };

/* The layout DLPack documents, where it is easy to state (LP64). */
#if UINTPTR_MAX == UINT64_MAX
_Static_assert(offsetof(xrt__dl_tensor, device) == 8 &&
                   offsetof(xrt__dl_tensor, ndim) == 16 &&
                   offsetof(xrt__dl_tensor, dtype) == 20 &&
                   offsetof(xrt__dl_tensor, shape) == 24 &&
                   offsetof(xrt__dl_tensor, strides) == 32 &&
                   offsetof(xrt__dl_tensor, byte_offset) == 40 &&
                   sizeof(xrt__dl_tensor) == 48,
               "DLTensor layout");
_Static_assert(offsetof(struct DLManagedTensor, manager_ctx) == 48 &&
                   offsetof(struct DLManagedTensor, deleter) == 56 &&
                   sizeof(struct DLManagedTensor) == 64,
               "DLManagedTensor layout");
#endif

static const struct {
  xrt_dtype type;
  uint8_t code, bits;
} xrt__dl_types[] = {
    {XRT_PRED, XRT__DL_BOOL, 8},      {XRT_S8, XRT__DL_INT, 8},
    {XRT_S16, XRT__DL_INT, 16},       {XRT_S32, XRT__DL_INT, 32},
    {XRT_S64, XRT__DL_INT, 64},       {XRT_U8, XRT__DL_UINT, 8},
    {XRT_U16, XRT__DL_UINT, 16},      {XRT_U32, XRT__DL_UINT, 32},
    {XRT_U64, XRT__DL_UINT, 64},      {XRT_F16, XRT__DL_FLOAT, 16},
    {XRT_F32, XRT__DL_FLOAT, 32},     {XRT_F64, XRT__DL_FLOAT, 64},
    {XRT_BF16, XRT__DL_BFLOAT, 16},   {XRT_C64, XRT__DL_COMPLEX, 64},
    {XRT_C128, XRT__DL_COMPLEX, 128},
};

static xrt_status xrt__dl_dtype_of(xrt_dtype t, xrt__dl_dtype *out) {
  for (size_t i = 0; i < XRT__ARRAY_SIZE(xrt__dl_types); i++)
    if (xrt__dl_types[i].type == t) {
      out->code = xrt__dl_types[i].code;
      out->bits = xrt__dl_types[i].bits;
      out->lanes = 1;
      return XRT_OK;
    }
  return xrt__fail(XRT_UNIMPLEMENTED, "DLPack has no element type for %s",
                   xrt_dtype_name(t));
}

static xrt_status xrt__dl_xrt_dtype(xrt__dl_dtype dt, xrt_dtype *out) {
  if (dt.lanes != 1)
    return xrt__fail(XRT_UNIMPLEMENTED, "xrt_buffer_from_dlpack: vector types "
                     "(%u lanes) are not supported", (unsigned)dt.lanes);
  for (size_t i = 0; i < XRT__ARRAY_SIZE(xrt__dl_types); i++)
    if (xrt__dl_types[i].code == dt.code && xrt__dl_types[i].bits == dt.bits) {
      *out = xrt__dl_types[i].type;
      return XRT_OK;
    }
  return xrt__fail(XRT_UNIMPLEMENTED, "xrt_buffer_from_dlpack: DLPack type "
                   "code %u with %u bits has no xrt element type",
                   (unsigned)dt.code, (unsigned)dt.bits);
}

/* ---- Export ---------------------------------------------------------- */

/* The manager context of an exported tensor.  A zero-copy export is on
 * xrt__dl_live while buf is set; a copying one's data follows the record
 * (at XRT__DL_DATA_AT). */
typedef struct xrt__dl_export {
  struct DLManagedTensor t;
  xrt__link link;
  xrt__buffer *buf; /* the reference keeping the memory, or NULL */
  size_t bytes;
  int64_t shape[XRT_MAX_RANK], strides[XRT_MAX_RANK];
} xrt__dl_export;

#define XRT__DL_ALIGN 64
#define XRT__DL_DATA_AT \
  ((sizeof(xrt__dl_export) + XRT__DL_ALIGN - 1) & ~(size_t)(XRT__DL_ALIGN - 1))

static pthread_mutex_t xrt__dl_mu = PTHREAD_MUTEX_INITIALIZER;
static xrt__link xrt__dl_live = {&xrt__dl_live, &xrt__dl_live};

/* The deleter of exported tensors.  The buffer is dropped outside the
 * lock: it may be a zero-copy import whose own deleter is this one. */
static void xrt__dl_export_delete(struct DLManagedTensor *t) {
  if (!t) return;
  xrt__dl_export *x = (xrt__dl_export *)t->manager_ctx;
  pthread_mutex_lock(&xrt__dl_mu);
  xrt__buffer *b = x->buf;
  if (b) xrt__link_remove(&x->link);
  x->buf = NULL;
  pthread_mutex_unlock(&xrt__dl_mu);
  xrt__buffer_unref(b);
  xrt__os_aligned_free(x);
}

/* A record for b's tensor, with room for its data when copy is set. */
static xrt_status xrt__dl_export_new(const xrt__buffer *b, bool copy,
                                     xrt__dl_export **out) {
  xrt__dl_dtype dt;
  xrt_status s = xrt__dl_dtype_of(b->shape.dtype, &dt);
  if (s) return s;
  size_t size = XRT__DL_DATA_AT + (copy ? b->bytes : 0);
  size = (size + XRT__DL_ALIGN - 1) & ~(size_t)(XRT__DL_ALIGN - 1);
  xrt__dl_export *x = (xrt__dl_export *)xrt__os_aligned_alloc(XRT__DL_ALIGN,
                                                               size);
  if (!x) return xrt__fail(XRT_RESOURCE_EXHAUSTED, "out of host memory for "
                           "a DLPack tensor of %zu bytes", b->bytes);
  memset(x, 0, sizeof *x);
  xrt__link_init(&x->link);
  x->bytes = b->bytes;
  int rank = b->shape.rank;
  int64_t stride = 1;
  for (int i = rank - 1; i >= 0; i--) {
    x->shape[i] = b->shape.dims[i];
    x->strides[i] = stride;
    stride *= b->shape.dims[i] ? b->shape.dims[i] : 1;
  }
  xrt__dl_tensor *dl = &x->t.dl_tensor;
  dl->data = copy ? (char *)x + XRT__DL_DATA_AT : NULL;
  dl->device.device_type = XRT__DL_CPU;
  dl->device.device_id = 0;
  dl->ndim = rank;
  dl->dtype = dt;
  dl->shape = x->shape;
  dl->strides = x->strides; /* explicit: some consumers reject NULL */
  dl->byte_offset = 0;
  x->t.manager_ctx = x;
  x->t.deleter = xrt__dl_export_delete;
  *out = x;
  return XRT_OK;
}

/* Waits for b's producer; a poisoned buffer gives its error. */
static xrt_status xrt__dl_wait_ready(const xrt__buffer *b) {
  if (!b->ready) return XRT_OK;
  xrt_status s = xrt__event_wait(b->ready);
  return s ? xrt__fail(s, "%s", b->ready->message) : XRT_OK;
}

/* The host address of b's memory, or NULL if the plugin has none. */
static void *xrt__dl_host_pointer(const xrt__buffer *b) {
  const xrt__client *c = b->client;
  if (!c->api->buffer_host_pointer) return NULL;
  return c->api->buffer_host_pointer(c->pc, b->device, b->mem);
}

xrt_status xrt_buffer_to_dlpack(xrt_buffer *buffer,
                                struct DLManagedTensor **out_tensor) {
  XRT__CHECK_ARG(out_tensor, "out_tensor is NULL");
  *out_tensor = NULL;
  xrt__buffer *b = xrt__buffer_acquire(buffer);
  XRT__CHECK_ARG(b, "invalid or released buffer");
  xrt__dl_export *x = NULL;
  void *host = NULL;
  xrt_status s = xrt__dl_wait_ready(b);
  if (!s) host = xrt__dl_host_pointer(b);
  if (!s) s = xrt__dl_export_new(b, !host, &x);
  if (!s && host) { /* the record takes over the acquired reference */
    x->t.dl_tensor.data = host;
    pthread_mutex_lock(&xrt__dl_mu);
    x->buf = b;
    xrt__link_add(&xrt__dl_live, &x->link);
    pthread_mutex_unlock(&xrt__dl_mu);
    b = NULL;
  } else if (!s && x->bytes &&
             (s = xrt_buffer_to_host(buffer, x->t.dl_tensor.data, x->bytes))) {
    xrt__os_aligned_free(x);
  }
  xrt__buffer_unref(b);
  if (s) return s;
  xrt__log(XRT_LOG_DEBUG, "buffer", "DLPack export of %zu bytes (%s)",
           x->bytes, host ? "zero copy" : "copied");
  *out_tensor = &x->t;
  return XRT_OK;
}

/* Client release frees every buffer: tensors exported from them lose
 * their data (the deleter stays safe to call: it only frees the record). */
XRT__PRIVATE void xrt__dlpack_client_gone(xrt__client *c) {
  int orphans = 0;
  pthread_mutex_lock(&xrt__dl_mu);
  for (xrt__link *l = xrt__dl_live.next, *next; l != &xrt__dl_live; l = next) {
    next = l->next;
    xrt__dl_export *x =
        (xrt__dl_export *)(void *)((char *)l - offsetof(xrt__dl_export, link));
    if (x->buf->client != c) continue;
    xrt__link_remove(l);
    x->buf = NULL;
    orphans++;
  }
  pthread_mutex_unlock(&xrt__dl_mu);
  if (orphans)
    xrt__log(XRT_LOG_WARN, "buffer", "client released while %d zero-copy "
             "DLPack tensors exported from it were alive: their data is "
             "freed", orphans);
}

/* Whether [p, p + bytes) overlaps memory of a live zero-copy export of a
 * buffer on device of c. */
static bool xrt__dl_exported(const xrt__client *c, int device, const void *p,
                             size_t bytes) {
  uintptr_t lo = (uintptr_t)p, hi = lo + bytes;
  bool found = false;
  pthread_mutex_lock(&xrt__dl_mu);
  for (xrt__link *l = xrt__dl_live.next; l != &xrt__dl_live && !found;
       l = l->next) {
    const xrt__dl_export *x = (const xrt__dl_export *)(const void *)(
        (const char *)l - offsetof(xrt__dl_export, link));
    uintptr_t xlo = (uintptr_t)x->t.dl_tensor.data, xhi = xlo + x->bytes;
    found = x->buf->client == c && x->buf->device == device && lo < xhi &&
            xlo < hi;
  }
  pthread_mutex_unlock(&xrt__dl_mu);
  return found;
}

/* ---- Import ---------------------------------------------------------- */

/* A validated tensor: its xrt shape, first byte and element strides. */
typedef struct xrt__dl_view {
  xrt_shape shape;
  size_t bytes;
  const char *base;
  const int64_t *strides; /* NULL: dense */
  bool dense;             /* row-major without gaps */
} xrt__dl_view;

/* Strides of a dense row-major array are implied; dimensions of size 1
 * may have any stride (NumPy and PyTorch give them arbitrary ones). */
static bool xrt__dl_is_dense(const xrt_shape *s, const int64_t *strides) {
  if (!strides) return true;
  int64_t want = 1;
  for (int i = s->rank - 1; i >= 0; i--) {
    if (s->dims[i] == 0) return true;
    if (s->dims[i] != 1 && strides[i] != want) return false;
    want *= s->dims[i];
  }
  return true;
}

/* Checks that every element's offset from the first, sum(idx[i] *
 * strides[i]), and that times the element size fit an int64 (so the
 * gather cannot overflow): each stride's span and the sums of the
 * positive and of the negative spans stay within XRT__DL_SPAN. */
#define XRT__DL_SPAN (INT64_MAX / 16)

static xrt_status xrt__dl_check_strides(const xrt_shape *s,
                                        const int64_t *strides) {
  int64_t up = 0, down = 0;
  for (int i = 0; i < s->rank; i++)
    if (s->dims[i] == 0) return XRT_OK; /* empty: nothing is read */
  for (int i = 0; i < s->rank; i++) {
    int64_t st = strides[i], ext = s->dims[i] - 1;
    int64_t mag = st < 0 ? (st == INT64_MIN ? INT64_MAX : -st) : st;
    if (ext && mag > XRT__DL_SPAN / ext)
      return xrt__fail(XRT_INVALID_ARGUMENT, "xrt_buffer_from_dlpack: stride "
                       "%" PRId64 " of dimension %d is out of range", st, i);
    int64_t *sum = st < 0 ? &down : &up;
    if (*sum > XRT__DL_SPAN - mag * ext)
      return xrt__fail(XRT_INVALID_ARGUMENT, "xrt_buffer_from_dlpack: the "
                       "strides span more elements than an int64 counts");
    *sum += mag * ext;
  }
  return XRT_OK;
}

static xrt_status xrt__dl_view_of(const xrt__dl_tensor *t, xrt__dl_view *v) {
  memset(v, 0, sizeof *v);
  if (t->device.device_type != XRT__DL_CPU &&
      t->device.device_type != XRT__DL_CUDA_HOST)
    return xrt__fail(XRT_UNIMPLEMENTED, "xrt_buffer_from_dlpack: device type "
                     "%d is not host memory (xrt imports kDLCPU and "
                     "kDLCUDAHost tensors)", t->device.device_type);
  if (t->ndim < 0 || t->ndim > XRT_MAX_RANK)
    return xrt__fail(XRT_INVALID_ARGUMENT, "xrt_buffer_from_dlpack: ndim %d "
                     "is outside 0..%d", t->ndim, XRT_MAX_RANK);
  if (!t->shape && t->ndim > 0)
    return xrt__fail(XRT_INVALID_ARGUMENT, "xrt_buffer_from_dlpack: the "
                     "tensor's shape is NULL");
  xrt_status s = xrt__dl_xrt_dtype(t->dtype, &v->shape.dtype);
  if (s) return s;
  v->shape.rank = t->ndim;
  for (int i = 0; i < t->ndim; i++) v->shape.dims[i] = t->shape[i];
  if ((s = xrt__shape_check(&v->shape, &v->bytes))) return s;
  if (!t->data && v->bytes)
    return xrt__fail(XRT_INVALID_ARGUMENT, "xrt_buffer_from_dlpack: the "
                     "tensor's data is NULL");
  if (t->data && t->byte_offset > UINTPTR_MAX - (uintptr_t)t->data)
    return xrt__fail(XRT_INVALID_ARGUMENT, "xrt_buffer_from_dlpack: "
                     "byte_offset %" PRIu64 " runs past the address space",
                     t->byte_offset);
  if (t->strides && (s = xrt__dl_check_strides(&v->shape, t->strides)))
    return s;
  v->base = (const char *)t->data + (t->data ? t->byte_offset : 0);
  v->strides = t->strides;
  v->dense = xrt__dl_is_dense(&v->shape, t->strides);
  return XRT_OK;
}

/* Copies a strided view's elements to dst in row-major order, a row (the
 * last dimension) at a time. */
static void xrt__dl_gather(const xrt__dl_view *v, char *dst) {
  const xrt_shape *s = &v->shape;
  size_t es = xrt_dtype_size(s->dtype);
  if (v->bytes == 0) return;
  if (s->rank == 0) {
    memcpy(dst, v->base, es);
    return;
  }
  int r = s->rank - 1;
  int64_t idx[XRT_MAX_RANK] = {0}, off = 0; /* element offset of the row */
  int64_t rows = xrt_shape_numel(s) / s->dims[r], inner = v->strides[r];
  for (int64_t k = 0; k < rows; k++) {
    for (int64_t j = 0; j < s->dims[r]; j++, dst += es)
      memcpy(dst, v->base + (off + j * inner) * (int64_t)es, es);
    for (int i = r - 1; i >= 0; i--) { /* next row */
      if (++idx[i] < s->dims[i]) {
        off += v->strides[i];
        break;
      }
      off -= v->strides[i] * (s->dims[i] - 1);
      idx[i] = 0;
    }
  }
}

/* A buffer over the view's memory if the plugin adopts it; *out stays
 * NULL (XRT_OK) when it declines, so that the caller copies. */
static xrt_status xrt__dl_wrap(xrt__client *c, int device,
                               const xrt__dl_view *v, xrt__buffer **out) {
  *out = NULL;
  if (!c->api->buffer_wrap_host || !v->dense || v->bytes == 0 ||
      xrt__dl_exported(c, device, v->base, v->bytes))
    return XRT_OK;
  xrt__buffer *b = xrt__buffer_obj(c);
  if (!b) return xrt__nomem("a buffer object");
  b->client = c;
  b->device = device;
  b->shape = v->shape;
  b->bytes = v->bytes;
  b->ready = NULL;
  xrt_plugin_error err = {{0}};
  void *host = (void *)(uintptr_t)v->base; /* adopted, never written */
  xrt_status s =
      c->api->buffer_wrap_host(c->pc, device, host, v->bytes, &b->mem, &err);
  if (s) {
    xrt__buffer_recycle(c, b);
    if (s == XRT_UNIMPLEMENTED || s == XRT_FAILED_PRECONDITION) {
      xrt__log(XRT_LOG_DEBUG, "buffer", "DLPack import copies: %s",
               xrt__plugin_msg(&err));
      return XRT_OK;
    }
    return xrt__fail_plugin(s, c->api->name, &err);
  }
  return xrt__buffer_publish(c, b, NULL, out);
}

/* A new buffer holding a copy of the view's elements. */
static xrt_status xrt__dl_copy(xrt_client *client, xrt_device *device,
                               const xrt__dl_view *v, xrt_buffer **out) {
  if (v->dense)
    return xrt_buffer_from_host(client, device, &v->shape, v->base, out);
  const xrt_allocator *a = &xrt__client_get(client)->allocator;
  char *tmp = (char *)xrt__alloc(a, v->bytes);
  if (!tmp) return xrt__fail(XRT_RESOURCE_EXHAUSTED, "out of host memory "
                             "to compact a strided DLPack tensor of %zu "
                             "bytes", v->bytes);
  xrt__dl_gather(v, tmp);
  xrt_status s = xrt_buffer_from_host(client, device, &v->shape, tmp, out);
  xrt__free(a, tmp);
  return s;
}

xrt_status xrt_buffer_from_dlpack(xrt_client *client, xrt_device *device,
                                  struct DLManagedTensor *tensor,
                                  xrt_buffer **out_buffer) {
  XRT__CHECK_ARG(out_buffer, "out_buffer is NULL");
  *out_buffer = NULL;
  xrt__client *c = xrt__client_get(client);
  xrt__device *d = xrt__device_get(device);
  XRT__CHECK_ARG(c, "invalid client");
  XRT__CHECK_ARG(d, "invalid device");
  XRT__CHECK_ARG(d->client == c, "device belongs to another client");
  XRT__CHECK_ARG(tensor, "tensor is NULL");
  xrt__dl_view v;
  xrt_status s = xrt__dl_view_of(&tensor->dl_tensor, &v);
  xrt__buffer *b = NULL;
  if (!s) s = xrt__dl_wrap(c, d->index, &v, &b);
  if (s) return s;
  if (b) { /* zero copy: the deleter runs when the memory is freed */
    b->dl = tensor;
    *out_buffer = (xrt_buffer *)b->handle;
    xrt__log(XRT_LOG_DEBUG, "buffer", "DLPack import of %zu bytes (zero "
             "copy)", v.bytes);
    return XRT_OK;
  }
  if ((s = xrt__dl_copy(client, device, &v, out_buffer))) return s;
  xrt__log(XRT_LOG_DEBUG, "buffer", "DLPack import of %zu bytes (copied)",
           v.bytes);
  if (tensor->deleter) tensor->deleter(tensor);
  return XRT_OK;
}

/* Called once b's device memory is freed: a zero-copy import's tensor is
 * no longer needed. */
XRT__PRIVATE void xrt__dlpack_freed(xrt__buffer *b) {
  struct DLManagedTensor *t = b->dl;
  b->dl = NULL;
  if (t && t->deleter) t->deleter(t);
}
