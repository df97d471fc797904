/*
 * src/core/variable.c - variables: client statistics and fault kinds, region
 * copies, the variable object.
 * Part of the core of xrt; MIT licensed, see LICENSE.
 */
#include "internal.h"

/* ======================================================================
 * 13c. Variables
 *
 *   - client stats and fault kinds (thin calls into the counters and the
 *     plugin);
 *   - region copies: a box of one buffer into a box of another, by the
 *     plugin's buffer_copy_region or, lacking it, through host memory;
 *   - the variable object: a handle kind of its own, a lock, owned piece
 *     buffers in mesh order and the format key (FNV-1a over the canonical
 *     fields of shape, spec and device ids, then a 64-bit finalizer: no
 *     extra header, so vendoring xrt.c needs nothing beyond libc);
 *   - reshard: validate, plan (keep, or copy boxes from old pieces), copy
 *     in parallel over destination devices, commit under every lock;
 *   - xrt_execute_variables over xrt_execute_sharded, with donation;
 *   - variables across processes ("Across processes" below: create, reshard,
 *     execute, save and load agreed between the processes);
 *   - .npy save and load (section 14's reader and writer).
 * ==================================================================== */



/* ---- client stats and fault kinds ---- */

xrt_status xrt_client_get_stats(const xrt_client *client,
                                xrt_client_stats *out) {
  xrt__client *c = xrt__client_get(client);
  XRT__CHECK_ARG(c, "invalid client");
  XRT__CHECK_ARG(out, "out is NULL");
  memset(out, 0, sizeof *out);
  out->device_allocations = xrt__stat_sum(c, XRT__ST_ALLOCS);
  out->device_frees = xrt__stat_sum(c, XRT__ST_FREES);
  out->device_bytes_in_use = xrt__stat_sum(c, XRT__ST_BYTES_IN_USE);
  out->device_copies = xrt__stat_sum(c, XRT__ST_COPIES);
  out->device_bytes_copied = xrt__stat_sum(c, XRT__ST_BYTES_COPIED);
  out->host_to_device = xrt__stat_sum(c, XRT__ST_H2D);
  out->device_to_host = xrt__stat_sum(c, XRT__ST_D2H);
  out->executions = xrt__stat_sum(c, XRT__ST_EXECS);
  out->compiles = xrt__stat_sum(c, XRT__ST_COMPILES);
  out->compile_cache_hits = xrt__stat_sum(c, XRT__ST_CACHE_HITS);
  return XRT_OK;
}

xrt_status xrt_device_inject_fault_kind(xrt_device *device,
                                        xrt_fault_kind kind, int64_t after) {
  xrt__device *d = xrt__device_get(device);
  XRT__CHECK_ARG(d, "invalid device");
  XRT__CHECK_ARG(kind >= XRT_FAULT_KERNEL && kind <= XRT_FAULT_ALLOC,
                 "unknown fault kind");
  xrt__client *c = d->client;
  if (!c->api->inject_fault_kind)
    return xrt__fail(XRT_UNIMPLEMENTED, "plugin '%s' cannot inject faults by "
                     "kind (device %d)", c->api->name, d->index);
  xrt_plugin_error err = {{0}};
  xrt_status s = c->api->inject_fault_kind(c->pc, d->index, (int)kind, after,
                                           &err);
  return s ? xrt__fail_plugin(s, c->api->name, &err) : XRT_OK;
}

/* ---- region copies ---- */

/* A box copy between two host arrays (the fallback's last step). */
XRT__PRIVATE void xrt__region_host(const xrt_plugin_copy_region_args *a) {
  int r = a->rank;
  int64_t ss[XRT_MAX_RANK], ds[XRT_MAX_RANK], idx[XRT_MAX_RANK] = {0};
  int64_t st = (int64_t)a->elem_bytes, dt = st;
  for (int d = r - 1; d >= 0; d--) {
    if (a->extent[d] == 0) return;
    ss[d] = st;
    ds[d] = dt;
    st *= a->src_dims[d];
    dt *= a->dst_dims[d];
  }
  /* The innermost dimension is one memcpy. */
  size_t run = a->elem_bytes * (size_t)(r ? a->extent[r - 1] : 1);
  int outer = r ? r - 1 : 0;
  for (;;) {
    int64_t so = 0, dof = 0;
    for (int d = 0; d < r; d++) {
      int64_t i = (d < outer ? idx[d] : 0);
      so += (a->src_start[d] + i) * ss[d];
      dof += (a->dst_start[d] + i) * ds[d];
    }
    memcpy((char *)a->dst + dof, (const char *)a->src + so, run);
    int d = outer - 1;
    while (d >= 0 && ++idx[d] == a->extent[d]) idx[d--] = 0;
    if (d < 0) return;
  }
}

/* The region copy of a plugin without buffer_copy_region: through host
 * pointers when the plugin gives them, else by staging both whole
 * buffers in host memory (reads, host copy, write back). */
static xrt_status xrt__region_fallback(xrt__client *c, xrt__buffer *src,
                                       xrt__buffer *dst,
                                       xrt_plugin_copy_region_args *a) {
  const xrt_plugin_api *api = c->api;
  void *sp = api->buffer_host_pointer
                 ? api->buffer_host_pointer(c->pc, src->device, src->mem)
                 : NULL;
  void *dp = api->buffer_host_pointer
                 ? api->buffer_host_pointer(c->pc, dst->device, dst->mem)
                 : NULL;
  if (sp && dp) {
    a->src = sp;
    a->dst = dp;
    xrt__region_host(a);
    return XRT_OK;
  }
  void *hs = xrt__alloc(&c->allocator, src->bytes ? src->bytes : 1);
  void *hd = xrt__alloc(&c->allocator, dst->bytes ? dst->bytes : 1);
  xrt_plugin_error err = {{0}};
  xrt_status s = hs && hd ? XRT_OK
                          : xrt__nomem("staging a region copy");
  if (!s && (s = api->buffer_read(c->pc, src->device, src->mem, hs,
                                  src->bytes, &err)))
    xrt__fail_plugin(s, api->name, &err);
  if (!s && (s = api->buffer_read(c->pc, dst->device, dst->mem, hd,
                                  dst->bytes, &err)))
    xrt__fail_plugin(s, api->name, &err);
  if (!s) {
    a->src = hs;
    a->dst = hd;
    xrt__region_host(a);
    if ((s = api->buffer_write(c->pc, dst->device, dst->mem, hd, dst->bytes,
                               &err)))
      xrt__fail_plugin(s, api->name, &err);
  }
  xrt__free(&c->allocator, hs);
  xrt__free(&c->allocator, hd);
  return s;
}

/* Copies the box ext at src_start of src (both in the dims src_dims) to
 * dst_start of dst (dims dst_dims); both buffers ready and owned by the
 * caller.  Ranks may be 0 (one element). */
XRT__PRIVATE xrt_status xrt__region_copy(xrt__client *c, xrt__buffer *src,
                                   xrt__buffer *dst, int rank,
                                   const int64_t *src_dims,
                                   const int64_t *src_start,
                                   const int64_t *dst_dims,
                                   const int64_t *dst_start,
                                   const int64_t *ext) {
  xrt_plugin_copy_region_args a;
  memset(&a, 0, sizeof a);
  a.struct_size = sizeof a;
  a.src_device = src->device;
  a.src = src->mem;
  a.src_dims = src_dims;
  a.src_start = src_start;
  a.dst_device = dst->device;
  a.dst = dst->mem;
  a.dst_dims = dst_dims;
  a.dst_start = dst_start;
  a.extent = ext;
  a.rank = rank;
  a.elem_bytes = xrt_dtype_size(src->shape.dtype);
  uint64_t bytes = a.elem_bytes;
  for (int d = 0; d < rank; d++) bytes *= (uint64_t)ext[d];
  XRT__STAT(c, COPIES, 1);
  XRT__STAT(c, BYTES_COPIED, bytes);
  if (!c->api->buffer_copy_region) return xrt__region_fallback(c, src, dst, &a);
  xrt_plugin_error err = {{0}};
  xrt_status s = c->api->buffer_copy_region(c->pc, &a, &err);
  return s ? xrt__fail_plugin(s, c->api->name, &err) : XRT_OK;
}

/* Releases a variable's piece once the handle holds its only reference:
 * queued work that used it (uploads, reads, executions, all complete by
 * then) lets go of it just after completing, and waiting for that frees
 * the device memory now, which the staged reshard and the callers'
 * next allocations count on. */
XRT__PRIVATE void xrt__piece_release(xrt_buffer *h) {
  xrt__buffer *b = (xrt__buffer *)xrt__hget(h, XRT__H_BUFFER);
  while (b && atomic_load(&b->refs) > 1) xrt__os_sleep_ns(20000);
  xrt_buffer_release(h);
}

static xrt__link xrt__vars_live = {&xrt__vars_live, &xrt__vars_live};
static pthread_mutex_t xrt__vars_mu = PTHREAD_MUTEX_INITIALIZER;

/* Takes a reference to a live variable (NULL if the handle is not). */
XRT__PRIVATE xrt__var *xrt__var_acquire(const xrt_variable *h) {
  pthread_mutex_lock(&xrt__vars_mu);
  xrt__var *v = (xrt__var *)xrt__hget(h, XRT__H_VARIABLE);
  if (v) v->refs++;
  pthread_mutex_unlock(&xrt__vars_mu);
  return v;
}

static void xrt__var_drop_pieces(xrt__var *v) {
  for (int k = 0; k < v->n; k++) xrt_buffer_release(v->bufs[k]);
  xrt__free(&v->al, v->bufs);
  xrt__free(&v->al, v->devices);
  v->bufs = NULL;
  v->devices = NULL;
  v->n = 0;
}

XRT__PRIVATE void xrt__var_unref(xrt__var *v) {
  if (!v) return;
  pthread_mutex_lock(&xrt__vars_mu);
  bool last = --v->refs == 0;
  if (last) xrt__link_remove(&v->link);
  pthread_mutex_unlock(&xrt__vars_mu);
  if (!last) return;
  xrt__var_drop_pieces(v);
  pthread_mutex_destroy(&v->mu);
  xrt_allocator al = v->al;
  xrt__free(&al, v->name);
  xrt__free(&al, v);
}

/* Called by xrt__client_free: the client's variables die with it. */
XRT__PRIVATE void xrt__variables_release_all(xrt__client *c) {
  for (;;) {
    xrt__var *found = NULL;
    pthread_mutex_lock(&xrt__vars_mu);
    for (xrt__link *l = xrt__vars_live.next; l != &xrt__vars_live;
         l = l->next)
      if (((xrt__var *)l)->client == c && !((xrt__var *)l)->dead) {
        found = (xrt__var *)l;
        found->dead = true;
        xrt__hfree_if_live(found->handle, XRT__H_VARIABLE, found);
        break;
      }
    pthread_mutex_unlock(&xrt__vars_mu);
    if (!found) return;
    pthread_mutex_lock(&found->mu);
    xrt__var_drop_pieces(found);
    pthread_mutex_unlock(&found->mu);
    xrt__var_unref(found); /* the handle's reference */
  }
}

/* FNV-1a over 64-bit words, then splitmix64's finalizer. */
XRT__PRIVATE uint64_t xrt__key_mix(uint64_t h, uint64_t x) {
  return (h ^ x) * 0x100000001b3ull;
}

static uint64_t xrt__format_key(const xrt_shape *logical,
                                const xrt_sharding_spec *spec,
                                xrt_device *const *devs, int n) {
  uint64_t h = 0xcbf29ce484222325ull;
  h = xrt__key_mix(h, (uint64_t)logical->dtype);
  h = xrt__key_mix(h, (uint64_t)logical->rank);
  for (int d = 0; d < logical->rank; d++)
    h = xrt__key_mix(h, (uint64_t)logical->dims[d]);
  h = xrt__key_mix(h, (uint64_t)spec->rank);
  for (int d = 0; d < spec->rank; d++) {
    const xrt_dim_sharding *ds = &spec->dims[d];
    h = xrt__key_mix(h, (uint64_t)ds->kind);
    if (ds->kind == XRT_DIM_UNSTACKED) h = xrt__key_mix(h, (uint64_t)ds->size);
    if (ds->kind != XRT_DIM_CHUNKED) continue;
    h = xrt__key_mix(h, (uint64_t)ds->num_chunks);
    for (int i = 0; i < ds->num_chunks; i++)
      h = xrt__key_mix(h, (uint64_t)ds->chunks[i]);
  }
  h = xrt__key_mix(h, (uint64_t)spec->num_mesh_dims);
  for (int i = 0; i < spec->num_mesh_dims; i++) {
    const xrt_mesh_mapping *m = &spec->mesh[i];
    h = xrt__key_mix(h, (uint64_t)m->kind);
    h = xrt__key_mix(h, m->kind == XRT_MESH_REPLICATED ? (uint64_t)m->replicas
                                                       : (uint64_t)m->axis);
  }
  h = xrt__key_mix(h, (uint64_t)n);
  for (int k = 0; k < n; k++)
    h = xrt__key_mix(h, (uint64_t)xrt_device_global_id(devs[k]));
  h ^= h >> 30;
  h *= 0xbf58476d1ce4e5b9ull;
  h ^= h >> 27;
  h *= 0x94d049bb133111ebull;
  h ^= h >> 31;
  return h ? h : 1; /* 0 means invalid */
}

/* Checks a format for a logical shape: the spec, then n distinct devices
 * of client c (any client when c is NULL). */
XRT__PRIVATE xrt_status xrt__vformat_check(xrt__client *c, const xrt_shape *logical,
                                     const xrt_variable_format *f,
                                     xrt__vformat *out) {
  XRT__CHECK_ARG(f, "format is NULL");
  int64_t n;
  xrt_status s = xrt__spec_check(f->spec, logical, &out->axes, &n);
  if (s) return s;
  if (n != f->num_devices)
    return xrt__fail(XRT_INVALID_ARGUMENT, "the sharding spec spans %" PRId64
                     " devices, the format lists %d", n, f->num_devices);
  XRT__CHECK_ARG(f->devices, "format devices is NULL");
  for (int k = 0; k < f->num_devices; k++) {
    /* Another process's device (a global device) is one of c's too. */
    xrt__device *d = xrt__device_get(f->devices[k]);
    xrt__rdev *r = d ? NULL : xrt__rdev_get(f->devices[k]);
    xrt__client *dc = d ? d->client : r ? r->client : NULL;
    if (!dc || (c && dc != c))
      return xrt__fail(XRT_INVALID_ARGUMENT, "format devices[%d] is not a "
                       "device of the variable's client", k);
    if (!c) c = dc;
    for (int j = 0; j < k; j++)
      if (f->devices[j] == f->devices[k])
        return xrt__fail(XRT_INVALID_ARGUMENT, "format devices[%d] and "
                         "devices[%d] are the same device (%d): a variable "
                         "needs distinct devices", j, k,
                         xrt_device_global_id(f->devices[k]));
  }
  out->spec = *f->spec;
  out->piece = xrt__spec_piece_shape(f->spec, logical);
  out->n = f->num_devices;
  out->devices = f->devices;
  out->key = xrt__format_key(logical, f->spec, f->devices, f->num_devices);
  return XRT_OK;
}

uint64_t xrt_variable_format_key_of(const xrt_shape *logical,
                                    const xrt_variable_format *format) {
  xrt__vformat vf;
  size_t bytes;
  if (!logical || xrt__shape_check(logical, &bytes)) return 0;
  return xrt__vformat_check(NULL, logical, format, &vf) ? 0 : vf.key;
}

/* A new variable over the pieces bufs[0..n) (taken over on success). */
XRT__PRIVATE xrt_status xrt__var_new(xrt__client *c, const char *name,
                               const xrt_shape *logical, const xrt__vformat *f,
                               xrt_buffer *const *bufs, xrt__var **out) {
  const xrt_allocator *a = &c->allocator;
  xrt__var *v = (xrt__var *)xrt__calloc(a, 1, sizeof *v);
  if (v) {
    v->al = *a;
    v->name = xrt__strdup_with(a, name ? name : "");
    v->bufs = (xrt_buffer **)xrt__calloc(a, (size_t)f->n, sizeof *v->bufs);
    v->devices = (xrt_device **)xrt__calloc(a, (size_t)f->n,
                                            sizeof *v->devices);
  }
  if (!v || !v->name || !v->bufs || !v->devices) {
    if (v) {
      xrt__free(a, v->name);
      xrt__free(a, v->bufs);
      xrt__free(a, v->devices);
    }
    xrt__free(a, v);
    return xrt__nomem("a variable");
  }
  pthread_mutex_init(&v->mu, NULL);
  v->client = c;
  v->refs = 1;
  v->logical = *logical;
  v->piece = f->piece;
  v->spec = f->spec;
  v->axes = f->axes;
  v->n = f->n;
  v->key = f->key;
  for (int k = 0; k < f->n; k++) {
    v->bufs[k] = bufs[k];
    v->devices[k] = f->devices[k];
  }
  pthread_mutex_lock(&xrt__vars_mu);
  v->handle = xrt__hnew(v, XRT__H_VARIABLE);
  if (v->handle) xrt__link_add(&xrt__vars_live, &v->link);
  pthread_mutex_unlock(&xrt__vars_mu);
  if (!v->handle) {
    v->n = 0; /* the caller keeps the pieces */
    xrt__free(a, v->bufs);
    xrt__free(a, v->devices);
    xrt__free(a, v->name);
    pthread_mutex_destroy(&v->mu);
    xrt__free(a, v);
    return xrt__fail(XRT_RESOURCE_EXHAUSTED, "out of handles");
  }
  *out = v;
  return XRT_OK;
}

/* Takes over a sharded array's pieces: its devices must be distinct. */
static xrt_status xrt__var_adopt(const char *name, xrt__sharded *a,
                                 xrt__var **out) {
  xrt_variable_format f = {&a->spec, a->devices, a->n};
  xrt__vformat vf;
  xrt_status s = xrt__vformat_check(a->client, &a->logical, &f, &vf);
  if (s) return s;
  if ((s = xrt__var_new(a->client, name, &a->logical, &vf, a->bufs, out)))
    return s;
  xrt__sharded_free(a, false);
  return XRT_OK;
}

/* Across processes (below). */

xrt_status xrt_variable_create(xrt_client *client, const char *name,
                               const xrt_shape *logical, const void *data,
                               const xrt_variable_format *format,
                               xrt_variable **out_variable) {
  XRT__CHECK_ARG(out_variable, "out_variable is NULL");
  *out_variable = NULL;
  xrt__client *c = xrt__client_get(client);
  XRT__CHECK_ARG(c, "invalid client");
  XRT__CHECK_ARG(logical, "logical shape is NULL");
  size_t bytes;
  xrt_status s = xrt__shape_check(logical, &bytes);
  xrt__vformat vf;
  if (s || (s = xrt__vformat_check(c, logical, format, &vf))) return s;
  if (c->mp) /* across processes */
    return xrt__mpv_create(c, name, logical, data, &vf, out_variable);
  xrt_sharded_array *arr;
  if ((s = xrt_sharded_array_from_host(client, logical, data, &vf.spec,
                                       format->devices, vf.n, &arr)))
    return s;
  xrt__var *v;
  if ((s = xrt__var_adopt(name, xrt__sharded_get(arr), &v))) {
    xrt__saved_error err = {XRT_OK, ""};
    xrt__save_error(&err, s);
    xrt_sharded_array_release(arr);
    return xrt__restore_error(&err);
  }
  *out_variable = (xrt_variable *)v->handle;
  return XRT_OK;
}

xrt_status xrt_variable_from_array(const char *name, xrt_sharded_array *array,
                                   xrt_variable **out_variable) {
  XRT__CHECK_ARG(out_variable, "out_variable is NULL");
  *out_variable = NULL;
  xrt__sharded *a = xrt__sharded_get(array);
  XRT__CHECK_ARG(a, "invalid or released sharded array");
  xrt__var *v;
  xrt_status s = xrt__var_adopt(name, a, &v);
  if (s) return s;
  *out_variable = (xrt_variable *)v->handle;
  return XRT_OK;
}

xrt_status xrt_variable_release(xrt_variable *variable) {
  if (!variable) return XRT_OK;
  pthread_mutex_lock(&xrt__vars_mu);
  xrt__var *v = (xrt__var *)xrt__hget(variable, XRT__H_VARIABLE);
  if (v) {
    xrt__hfree_handle(v->handle);
    v->refs++;
  }
  pthread_mutex_unlock(&xrt__vars_mu);
  XRT__CHECK_ARG(v, "invalid or already released variable");
  pthread_mutex_lock(&v->mu); /* after any execute or reshard of it */
  v->dead = true;
  xrt__var_drop_pieces(v);
  pthread_mutex_unlock(&v->mu);
  xrt__var_unref(v); /* the handle's */
  xrt__var_unref(v);
  return XRT_OK;
}

/* Acquires and locks a live variable; on failure nothing is held. */
XRT__PRIVATE xrt_status xrt__var_open(const xrt_variable *h, const char *fn,
                                xrt__var **out) {
  xrt__var *v = xrt__var_acquire(h);
  if (!v)
    return xrt__fail(XRT_INVALID_ARGUMENT, "%s: invalid or released "
                     "variable", fn);
  pthread_mutex_lock(&v->mu);
  if (v->dead) {
    pthread_mutex_unlock(&v->mu);
    xrt__var_unref(v);
    return xrt__fail(XRT_INVALID_ARGUMENT, "%s: released variable", fn);
  }
  *out = v;
  return XRT_OK;
}

XRT__PRIVATE void xrt__var_close(xrt__var *v) {
  pthread_mutex_unlock(&v->mu);
  xrt__var_unref(v);
}

const char *xrt_variable_name(const xrt_variable *variable) {
  xrt__var *v = (xrt__var *)xrt__hget(variable, XRT__H_VARIABLE);
  return v ? v->name : NULL;
}

xrt_status xrt_variable_shape(const xrt_variable *variable, xrt_shape *out) {
  XRT__CHECK_ARG(out, "out is NULL");
  xrt__var *v;
  xrt_status s = xrt__var_open(variable, __func__, &v);
  if (s) return s;
  *out = v->logical;
  xrt__var_close(v);
  return XRT_OK;
}

xrt_status xrt_variable_spec(const xrt_variable *variable,
                             xrt_sharding_spec *out) {
  XRT__CHECK_ARG(out, "out is NULL");
  xrt__var *v;
  xrt_status s = xrt__var_open(variable, __func__, &v);
  if (s) return s;
  *out = v->spec;
  xrt__var_close(v);
  return XRT_OK;
}

int xrt_variable_num_devices(const xrt_variable *variable) {
  xrt__var *v;
  if (xrt__var_open(variable, __func__, &v)) return -1;
  int n = v->n;
  xrt__var_close(v);
  return n;
}

xrt_device *xrt_variable_device(const xrt_variable *variable, int index) {
  xrt__var *v;
  if (xrt__var_open(variable, __func__, &v)) return NULL;
  xrt_device *d = index >= 0 && index < v->n ? v->devices[index] : NULL;
  if (!d)
    xrt__fail(XRT_OUT_OF_RANGE, "device index %d is outside 0..%d", index,
              v->n - 1);
  xrt__var_close(v);
  return d;
}

uint64_t xrt_variable_format_key(const xrt_variable *variable) {
  xrt__var *v;
  if (xrt__var_open(variable, __func__, &v)) return 0;
  uint64_t key = v->key;
  xrt__var_close(v);
  return key;
}

/* A sharded-array view of a locked variable's pieces (freed with
 * xrt__sharded_free(view, false): the pieces stay the variable's). */
XRT__PRIVATE xrt_status xrt__var_view(xrt__var *v, xrt__sharded **out) {
  return xrt__sharded_new(v->client, &v->logical, &v->spec, &v->axes, v->bufs,
                          v->n, out);
}

/* Reads a locked variable's logical array. */
XRT__PRIVATE xrt_status xrt__var_read(xrt__var *v, void *dst, size_t dst_bytes) {
  if (v->client->mp) /* collective: 13b's xrt__mp_to_host */
    return xrt__mp_to_host(v->client, &v->logical, &v->spec, &v->axes, v->n,
                           v->bufs, v->devices, dst, dst_bytes);
  xrt__sharded *view;
  xrt_status s = xrt__var_view(v, &view);
  if (s) return s;
  s = xrt_sharded_array_to_host((xrt_sharded_array *)view->handle, dst,
                                dst_bytes);
  xrt__saved_error err = {XRT_OK, ""};
  xrt__save_error(&err, s);
  xrt__sharded_free(view, false);
  return xrt__restore_error(&err);
}

xrt_status xrt_variable_to_host(xrt_variable *variable, void *dst,
                                size_t dst_bytes) {
  xrt__var *v;
  xrt_status s = xrt__var_open(variable, __func__, &v);
  if (s) return s;
  s = xrt__var_read(v, dst, dst_bytes);
  xrt__var_close(v);
  return s;
}

/* Locks distinct variables in handle order (no deadlock between calls). */
static int xrt__var_cmp(const void *a, const void *b) {
  uintptr_t x = (*(xrt__var *const *)a)->handle;
  uintptr_t y = (*(xrt__var *const *)b)->handle;
  return x < y ? -1 : x > y;
}

XRT__PRIVATE void xrt__vars_lock(xrt__var **sorted, int n) {
  qsort(sorted, (size_t)n, sizeof *sorted, xrt__var_cmp);
  for (int i = 0; i < n; i++) pthread_mutex_lock(&sorted[i]->mu);
}

XRT__PRIVATE void xrt__vars_unlock(xrt__var **sorted, int n) {
  for (int i = n - 1; i >= 0; i--) pthread_mutex_unlock(&sorted[i]->mu);
}
