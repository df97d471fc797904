/*
 * src/pjrt/buffer.c - xrt device memories over PJRT buffers.
 *
 * xrt allocates untyped bytes and writes them; PJRT makes a buffer only
 * with an element type and dims.  So a memory (xpj_mem) holds host staging
 * bytes until its type is known (its first use as an argument, see
 * xpj_mem_ensure), and a PJRT buffer from then on; the outputs of an
 * execution are PJRT buffers from the start.  A write to a memory that
 * holds a buffer uploads with that buffer's type; a read downloads.
 */
#include "xrt.h"
#include "internal.h"

XPJ_PRIVATE PJRT_Buffer_Type xpj_type_of(xrt_dtype t) {
  switch (t) {
  case XRT_PRED: return PJRT_Buffer_Type_PRED;
  case XRT_S8: return PJRT_Buffer_Type_S8;
  case XRT_S16: return PJRT_Buffer_Type_S16;
  case XRT_S32: return PJRT_Buffer_Type_S32;
  case XRT_S64: return PJRT_Buffer_Type_S64;
  case XRT_U8: return PJRT_Buffer_Type_U8;
  case XRT_U16: return PJRT_Buffer_Type_U16;
  case XRT_U32: return PJRT_Buffer_Type_U32;
  case XRT_U64: return PJRT_Buffer_Type_U64;
  case XRT_F16: return PJRT_Buffer_Type_F16;
  case XRT_BF16: return PJRT_Buffer_Type_BF16;
  case XRT_F32: return PJRT_Buffer_Type_F32;
  case XRT_F64: return PJRT_Buffer_Type_F64;
  case XRT_C64: return PJRT_Buffer_Type_C64;
  case XRT_C128: return PJRT_Buffer_Type_C128;
  /* PJRT hosts hold sub-byte integers one per byte, as xrt does. */
  case XRT_S2: return PJRT_Buffer_Type_S2;
  case XRT_S4: return PJRT_Buffer_Type_S4;
  case XRT_U2: return PJRT_Buffer_Type_U2;
  case XRT_U4: return PJRT_Buffer_Type_U4;
  case XRT_F8E4M3FN: return PJRT_Buffer_Type_F8E4M3FN;
  case XRT_F8E5M2: return PJRT_Buffer_Type_F8E5M2;
  case XRT_F8E4M3FNUZ: return PJRT_Buffer_Type_F8E4M3FNUZ;
  case XRT_F8E5M2FNUZ: return PJRT_Buffer_Type_F8E5M2FNUZ;
  case XRT_F8E4M3B11FNUZ: return PJRT_Buffer_Type_F8E4M3B11FNUZ;
  case XRT_F8E3M4: return PJRT_Buffer_Type_F8E3M4;
  case XRT_F8E4M3: return PJRT_Buffer_Type_F8E4M3;
  default: return PJRT_Buffer_Type_INVALID; /* f8e8m0fnu, f6, f4: none */
  }
}

/* ---- events and buffers ---- */

XPJ_PRIVATE void xpj_buffer_destroy(const xpj_plugin *p, PJRT_Buffer *b) {
  if (!b) return;
  PJRT_Buffer_Destroy_Args a = {
      .struct_size = PJRT_Buffer_Destroy_Args_STRUCT_SIZE, .buffer = b};
  PJRT_Error *e = p->fn.PJRT_Buffer_Destroy(&a);
  if (e) {
    xrt_plugin_error ignored;
    xpj_error(p, e, "PJRT_Buffer_Destroy", &ignored);
  }
}

/* A new PJRT buffer of data (type t, rank dims) on device dev, once the
 * plugin is done reading data. */
static xrt_status xpj_upload(xpj_client *c, int dev, const void *data,
                             PJRT_Buffer_Type t, int32_t rank,
                             const int64_t *dims, PJRT_Buffer **out,
                             xrt_plugin_error *err) {
  const xpj_plugin *p = c->p;
  const char *fn = "PJRT_Client_BufferFromHostBuffer";
  PJRT_Client_BufferFromHostBuffer_Args a;
  memset(&a, 0, sizeof a);
  a.struct_size = PJRT_Client_BufferFromHostBuffer_Args_STRUCT_SIZE;
  a.client = c->pc;
  a.data = data;
  a.type = t;
  a.dims = dims;
  a.num_dims = (size_t)rank;
  a.host_buffer_semantics =
      PJRT_HostBufferSemantics_kImmutableUntilTransferCompletes;
  a.device = c->devs[dev].dev;
  xrt_status s = xpj_error(p, p->fn.PJRT_Client_BufferFromHostBuffer(&a), fn,
                           err);
  if (s) return s;
  s = xpj_await(p, a.done_with_host_buffer, fn, err);
  if (!s && !a.buffer)
    s = xpj_fail(err, XRT_INTERNAL, "plugin '%s': %s returned no error and "
                 "a NULL buffer", p->name, fn);
  if (s) {
    xpj_buffer_destroy(p, a.buffer);
    return s;
  }
  *out = a.buffer;
  return XRT_OK;
}

/* The bytes of b on the host (dense, major-to-minor), or 0 with *known 0
 * when the plugin cannot say. */
static size_t xpj_host_size(const xpj_plugin *p, PJRT_Buffer *b, int *known) {
  PJRT_Buffer_ToHostBuffer_Args a;
  memset(&a, 0, sizeof a);
  a.struct_size = PJRT_Buffer_ToHostBuffer_Args_STRUCT_SIZE;
  a.src = b;
  PJRT_Error *e = p->fn.PJRT_Buffer_ToHostBuffer(&a);
  *known = !e;
  if (e) {
    xrt_plugin_error ignored; /* the download itself will say */
    xpj_error(p, e, "PJRT_Buffer_ToHostBuffer", &ignored);
    return 0;
  }
  if (a.event) xpj_await(p, a.event, "PJRT_Buffer_ToHostBuffer", NULL);
  return a.dst_size;
}

/* Downloads m's buffer (m->bytes of it) into dst. */
static xrt_status xpj_download(xpj_client *c, const xpj_mem *m, void *dst,
                               xrt_plugin_error *err) {
  const xpj_plugin *p = c->p;
  const char *fn = "PJRT_Buffer_ToHostBuffer";
  int known = 0;
  size_t need = xpj_host_size(p, m->buf, &known);
  if (known && need != m->bytes)
    return xpj_fail(err, XRT_INTERNAL, "plugin '%s': %s: the buffer holds "
                    "%zu bytes, xrt expects %zu", p->name, fn, need, m->bytes);
  PJRT_Buffer_ToHostBuffer_Args a;
  memset(&a, 0, sizeof a);
  a.struct_size = PJRT_Buffer_ToHostBuffer_Args_STRUCT_SIZE;
  a.src = m->buf;
  a.dst = dst;
  a.dst_size = m->bytes;
  xrt_status s = xpj_error(p, p->fn.PJRT_Buffer_ToHostBuffer(&a), fn, err);
  if (!s) s = xpj_await(p, a.event, fn, err);
  return s;
}

/* ---- memory records ---- */

/* Gives m host staging bytes (zeroed), keeping what its buffer held. */
static xrt_status xpj_mem_stage(xpj_client *c, xpj_mem *m,
                                xrt_plugin_error *err) {
  if (m->host) return XRT_OK;
  m->host = (unsigned char *)xpj_alloc(c->al, m->bytes);
  if (!m->host)
    return xpj_fail(err, XRT_RESOURCE_EXHAUSTED, "plugin '%s': out of host "
                    "memory staging %zu bytes", c->p->name, m->bytes);
  if (!m->buf) return XRT_OK;
  xrt_status s = xpj_download(c, m, m->host, err);
  if (s) {
    xpj_free(c->al, m->host);
    m->host = NULL;
    return s;
  }
  xpj_buffer_destroy(c->p, m->buf);
  m->buf = NULL;
  return XRT_OK;
}

XPJ_PRIVATE xrt_status xpj_mem_ensure(xpj_client *c, int dev, xpj_mem *m,
                                      PJRT_Buffer_Type t, const xrt_shape *s,
                                      xrt_plugin_error *err) {
  if (xpj_mem_ready(m, t, s)) return XRT_OK;
  size_t want = xrt_shape_bytes(s);
  if (want != m->bytes)
    return xpj_fail(err, XRT_INVALID_ARGUMENT, "plugin '%s': an argument of "
                    "%zu bytes where the program takes %zu", c->p->name,
                    m->bytes, want);
  xrt_status st = xpj_mem_stage(c, m, err); /* the bytes, on the host */
  PJRT_Buffer *b = NULL;
  if (!st) st = xpj_upload(c, dev, m->host, t, s->rank, s->dims, &b, err);
  if (!st) xpj_mem_adopt(c, m, b, t, s);
  return st;
}

/* ---- the xrt entries ---- */

/* Each thread keeps one spare record aside, of the client whose serial
 * it names, so that a dispatch and the release of its output take no
 * lock.  A spare of another client is dropped from the slot (it stays on
 * that client's all_mems, which its destroy frees). */
static XPJ_TLS struct {
  uint64_t client;
  xpj_mem *m;
} xpj_spare;

static void xpj_lock(xpj_client *c) {
  while (atomic_flag_test_and_set_explicit(&c->free_lock,
                                           memory_order_acquire))
    sched_yield();
}

static void xpj_unlock(xpj_client *c) {
  atomic_flag_clear_explicit(&c->free_lock, memory_order_release);
}

static xrt_status xpj_buffer_alloc(void *client, int device, size_t bytes,
                                   void **out_mem, xrt_plugin_error *err) {
  xpj_client *c = (xpj_client *)client;
  if (!c || !out_mem || device < 0 || device >= c->n)
    return xpj_fail(err, XRT_INVALID_ARGUMENT, "buffer_alloc: bad "
                    "arguments (device %d)", device);
  xpj_mem *m = xpj_spare.m;
  if (m && xpj_spare.client == c->serial) {
    xpj_spare.m = NULL;
  } else {
    xpj_lock(c);
    m = c->free_mems;
    if (m) c->free_mems = m->next_free;
    xpj_unlock(c);
  }
  if (!m) {
    if (!(m = (xpj_mem *)xpj_alloc(c->al, sizeof *m)))
      return xpj_fail(err, XRT_RESOURCE_EXHAUSTED, "plugin '%s': out of "
                      "host memory for a buffer record", c->p->name);
    xpj_lock(c);
    m->next_all = c->all_mems;
    c->all_mems = m;
    xpj_unlock(c);
  }
  m->bytes = bytes;
  m->buf = NULL;
  m->host = NULL;
  m->rank = 0;
  m->next_free = NULL;
  *out_mem = m;
  return XRT_OK;
}

static void xpj_buffer_free(void *client, int device, void *mem) {
  xpj_client *c = (xpj_client *)client;
  xpj_mem *m = (xpj_mem *)mem;
  (void)device;
  if (!c || !m) return;
  if (m->buf) {
    xpj_buffer_destroy(c->p, m->buf);
    m->buf = NULL;
  }
  if (m->host) { /* tested here: xpj_free takes the allocator by value */
    xpj_free(c->al, m->host);
    m->host = NULL;
  }
  if (!xpj_spare.m || xpj_spare.client != c->serial) {
    xpj_spare.client = c->serial;
    xpj_spare.m = m;
    return;
  }
  xpj_lock(c);
  m->next_free = c->free_mems;
  c->free_mems = m;
  xpj_unlock(c);
}

static xrt_status xpj_buffer_write(void *client, int device, void *mem,
                                   const void *src, size_t bytes,
                                   xrt_plugin_error *err) {
  xpj_client *c = (xpj_client *)client;
  xpj_mem *m = (xpj_mem *)mem;
  if (!c || !m || (!src && bytes) || bytes > m->bytes || device < 0 ||
      device >= c->n)
    return xpj_fail(err, XRT_INVALID_ARGUMENT, "buffer_write: bad "
                    "arguments (%zu bytes)", bytes);
  if (m->buf && bytes == m->bytes) { /* the type is known: upload */
    PJRT_Buffer *b = NULL;
    xrt_shape s;
    s.rank = m->rank;
    memcpy(s.dims, m->dims, (size_t)m->rank * sizeof m->dims[0]);
    xrt_status st = xpj_upload(c, device, src, m->type, m->rank, m->dims, &b,
                               err);
    if (!st) xpj_mem_adopt(c, m, b, m->type, &s);
    return st;
  }
  xrt_status st = xpj_mem_stage(c, m, err);
  if (!st && bytes) memcpy(m->host, src, bytes);
  return st;
}

static xrt_status xpj_buffer_read(void *client, int device, const void *mem,
                                  void *dst, size_t bytes,
                                  xrt_plugin_error *err) {
  xpj_client *c = (xpj_client *)client;
  const xpj_mem *m = (const xpj_mem *)mem;
  if (!c || !m || (!dst && bytes) || bytes > m->bytes || device < 0 ||
      device >= c->n)
    return xpj_fail(err, XRT_INVALID_ARGUMENT, "buffer_read: bad "
                    "arguments (%zu bytes)", bytes);
  if (!bytes) return XRT_OK;
  if (!m->buf) {
    if (m->host) memcpy(dst, m->host, bytes);
    else memset(dst, 0, bytes);
    return XRT_OK;
  }
  if (bytes == m->bytes) return xpj_download(c, m, dst, err);
  unsigned char *tmp = (unsigned char *)xpj_alloc(c->al, m->bytes);
  if (!tmp)
    return xpj_fail(err, XRT_RESOURCE_EXHAUSTED, "plugin '%s': out of host "
                    "memory reading %zu bytes", c->p->name, m->bytes);
  xrt_status s = xpj_download(c, m, tmp, err);
  if (!s) memcpy(dst, tmp, bytes);
  xpj_free(c->al, tmp);
  return s;
}

/* PJRT_Buffer_CopyToDevice, when the plugin has it: 1 when it did the
 * copy (or failed: *s says), 0 when the caller should stage instead. */
static int xpj_copy_on_device(xpj_client *c, const xpj_mem *src,
                              int dst_device, xpj_mem *dst, xrt_status *s,
                              xrt_plugin_error *err) {
  const xpj_plugin *p = c->p;
  const char *fn = "PJRT_Buffer_CopyToDevice";
  if (!p->fn.PJRT_Buffer_CopyToDevice) return 0;
  PJRT_Buffer_CopyToDevice_Args a;
  memset(&a, 0, sizeof a);
  a.struct_size = PJRT_Buffer_CopyToDevice_Args_STRUCT_SIZE;
  a.buffer = src->buf;
  a.dst_device = c->devs[dst_device].dev;
  PJRT_Error *e = p->fn.PJRT_Buffer_CopyToDevice(&a);
  if (e && xpj_unimplemented(p, e)) return 0;
  *s = xpj_error(p, e, fn, err);
  if (!*s && !a.dst_buffer)
    *s = xpj_fail(err, XRT_INTERNAL, "plugin '%s': %s returned no error "
                  "and a NULL buffer", p->name, fn);
  if (!*s && p->fn.PJRT_Buffer_ReadyEvent) { /* its failure, now */
    PJRT_Buffer_ReadyEvent_Args r;
    memset(&r, 0, sizeof r);
    r.struct_size = PJRT_Buffer_ReadyEvent_Args_STRUCT_SIZE;
    r.buffer = a.dst_buffer;
    PJRT_Error *re = p->fn.PJRT_Buffer_ReadyEvent(&r);
    if (re && !xpj_unimplemented(p, re))
      *s = xpj_error(p, re, "PJRT_Buffer_ReadyEvent", err);
    else if (!re)
      *s = xpj_await(p, r.event, fn, err);
  }
  if (*s) {
    xpj_buffer_destroy(p, a.dst_buffer);
    return 1;
  }
  xrt_shape shape;
  shape.rank = src->rank;
  memcpy(shape.dims, src->dims, (size_t)src->rank * sizeof src->dims[0]);
  xpj_mem_adopt(c, dst, a.dst_buffer, src->type, &shape);
  return 1;
}

static xrt_status xpj_buffer_copy(void *client, int src_device,
                                  const void *src, int dst_device, void *dst,
                                  size_t bytes, xrt_plugin_error *err) {
  xpj_client *c = (xpj_client *)client;
  const xpj_mem *s = (const xpj_mem *)src;
  xpj_mem *d = (xpj_mem *)dst;
  if (!c || !s || !d || bytes > s->bytes || bytes > d->bytes ||
      src_device < 0 || src_device >= c->n || dst_device < 0 ||
      dst_device >= c->n)
    return xpj_fail(err, XRT_INVALID_ARGUMENT, "buffer_copy: bad "
                    "arguments (%zu bytes)", bytes);
  xrt_status st = XRT_OK;
  if (s->buf && src_device != dst_device && bytes == s->bytes &&
      bytes == d->bytes && xpj_copy_on_device(c, s, dst_device, d, &st, err))
    return st;
  /* Through the host: the destination keeps staged bytes. */
  if (bytes == d->bytes) { /* overwritten whole: nothing to keep */
    xpj_buffer_destroy(c->p, d->buf);
    d->buf = NULL;
  }
  if ((st = xpj_mem_stage(c, d, err))) return st;
  return xpj_buffer_read(client, src_device, src, d->host, bytes, err);
}

XPJ_PRIVATE void xpj_buffer_fill(xrt_plugin_api *t) {
  t->buffer_alloc = xpj_buffer_alloc;
  t->buffer_free = xpj_buffer_free;
  t->buffer_write = xpj_buffer_write;
  t->buffer_read = xpj_buffer_read;
  t->buffer_copy = xpj_buffer_copy;
}
