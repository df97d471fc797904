/*
 * src/core/sharding.c - sharding specs, sharded arrays (also across processes),
 * execution over sharded arrays.
 * Part of the core of xrt; MIT licensed, see LICENSE.
 */
#include "internal.h"

/* More devices than this is a malformed spec, not a machine. */
#define XRT__SPEC_MAX_DEVICES ((int64_t)1 << 20)

static int64_t xrt__mesh_size(const xrt_mesh_mapping *m,
                              const xrt__spec_axes *ax) {
  return m->kind == XRT_MESH_REPLICATED ? m->replicas : ax->size[m->axis];
}

/* Checks one dimension's entry; counts its sharded axes into *ax. */
static xrt_status xrt__spec_check_dim(const xrt_dim_sharding *ds, int d,
                                      xrt__spec_axes *ax) {
  switch (ds->kind) {
  case XRT_DIM_NO_SHARDING: return XRT_OK;
  case XRT_DIM_UNSTACKED:
    if (ds->size < 1)
      return xrt__fail(XRT_INVALID_ARGUMENT, "sharding spec: dimension %d: "
                       "Unstacked size %" PRId64 " is not positive", d,
                       ds->size);
    if (ax->n == XRT_MAX_MESH_DIMS) break;
    ax->size[ax->n++] = ds->size;
    return XRT_OK;
  case XRT_DIM_CHUNKED:
    if (ds->num_chunks < 1 || ds->num_chunks > XRT_MAX_CHUNKS)
      return xrt__fail(XRT_INVALID_ARGUMENT, "sharding spec: dimension %d: "
                       "%d chunk factors, expected 1..%d", d, ds->num_chunks,
                       XRT_MAX_CHUNKS);
    for (int i = 0; i < ds->num_chunks; i++) {
      if (ds->chunks[i] < 1 || ds->chunks[i] > XRT__SPEC_MAX_DEVICES)
        return xrt__fail(XRT_INVALID_ARGUMENT, "sharding spec: dimension %d: "
                         "chunk factor %d is %" PRId64 ", expected 1..%" PRId64,
                         d, i, ds->chunks[i], XRT__SPEC_MAX_DEVICES);
      if (ax->n == XRT_MAX_MESH_DIMS) goto too_many;
      ax->size[ax->n++] = ds->chunks[i];
    }
    return XRT_OK;
  default:
    return xrt__fail(XRT_INVALID_ARGUMENT, "sharding spec: dimension %d has "
                     "an unknown kind %d", d, (int)ds->kind);
  }
too_many:
  return xrt__fail(XRT_INVALID_ARGUMENT, "sharding spec: dimension %d: more "
                   "than %d sharded axes (each needs its own mesh dimension)",
                   d, XRT_MAX_MESH_DIMS);
}

/* Checks one mesh dimension and records which sharded axis it walks. */
static xrt_status xrt__spec_check_mesh_dim(const xrt_mesh_mapping *m, int i,
                                           xrt__spec_axes *ax) {
  if (m->kind == XRT_MESH_REPLICATED) {
    if (m->replicas < 1 || m->replicas > XRT__SPEC_MAX_DEVICES)
      return xrt__fail(XRT_INVALID_ARGUMENT, "sharding spec: mesh dimension "
                       "%d: Replicated(%" PRId64 ") must be in 1..%" PRId64, i,
                       m->replicas, XRT__SPEC_MAX_DEVICES);
    return XRT_OK;
  }
  if (m->kind != XRT_MESH_SHARDED_AXIS)
    return xrt__fail(XRT_INVALID_ARGUMENT, "sharding spec: mesh dimension %d "
                     "has an unknown kind %d", i, (int)m->kind);
  if (m->axis < 0 || m->axis >= ax->n)
    return xrt__fail(XRT_INVALID_ARGUMENT, "sharding spec: mesh dimension %d: "
                     "ShardedAxis(%d) but the spec has %d sharded axes", i,
                     m->axis, ax->n);
  if (ax->mesh_dim[m->axis] >= 0)
    return xrt__fail(XRT_INVALID_ARGUMENT, "sharding spec: sharded axis %d is "
                     "mapped twice (mesh dimensions %d and %d)", m->axis,
                     ax->mesh_dim[m->axis], i);
  ax->mesh_dim[m->axis] = i;
  return XRT_OK;
}

/* The structure of a spec, without a logical shape: valid kinds and
 * counts, every sharded axis mapped exactly once.  *out_devices (may be
 * NULL) receives the device count. */
static xrt_status xrt__spec_axes_of(const xrt_sharding_spec *spec,
                                    xrt__spec_axes *ax, int64_t *out_devices) {
  if (!spec)
    return xrt__fail(XRT_INVALID_ARGUMENT, "sharding spec is NULL");
  if (spec->rank < 0 || spec->rank > XRT_MAX_RANK)
    return xrt__fail(XRT_INVALID_ARGUMENT, "sharding spec: rank %d is outside "
                     "0..%d", spec->rank, XRT_MAX_RANK);
  if (spec->num_mesh_dims < 0 || spec->num_mesh_dims > XRT_MAX_MESH_DIMS)
    return xrt__fail(XRT_INVALID_ARGUMENT, "sharding spec: %d mesh dimensions,"
                     " expected 0..%d", spec->num_mesh_dims, XRT_MAX_MESH_DIMS);
  memset(ax, 0, sizeof *ax);
  for (int i = 0; i < XRT_MAX_MESH_DIMS; i++) ax->mesh_dim[i] = -1;
  xrt_status s;
  for (int d = 0; d < spec->rank; d++)
    if ((s = xrt__spec_check_dim(&spec->dims[d], d, ax))) return s;
  for (int i = 0; i < spec->num_mesh_dims; i++)
    if ((s = xrt__spec_check_mesh_dim(&spec->mesh[i], i, ax))) return s;
  for (int a = 0; a < ax->n; a++)
    if (ax->mesh_dim[a] < 0)
      return xrt__fail(XRT_INVALID_ARGUMENT, "sharding spec: sharded axis %d "
                       "is not mapped to any mesh dimension", a);
  int64_t devices = 1;
  for (int i = 0; i < spec->num_mesh_dims; i++) {
    devices *= xrt__mesh_size(&spec->mesh[i], ax);
    if (devices > XRT__SPEC_MAX_DEVICES)
      return xrt__fail(XRT_INVALID_ARGUMENT, "sharding spec: the mesh spans "
                       "more than %" PRId64 " devices", XRT__SPEC_MAX_DEVICES);
  }
  if (out_devices) *out_devices = devices;
  return XRT_OK;
}

static int64_t xrt__chunk_total(const xrt_dim_sharding *ds) {
  int64_t t = 1;
  for (int i = 0; i < ds->num_chunks; i++) t *= ds->chunks[i];
  return t;
}

/* Checks the spec against a logical shape; the structure is checked too. */
XRT__PRIVATE xrt_status xrt__spec_check(const xrt_sharding_spec *spec,
                                  const xrt_shape *logical,
                                  xrt__spec_axes *ax, int64_t *out_devices) {
  xrt_status s = xrt__spec_axes_of(spec, ax, out_devices);
  if (s) return s;
  if (!logical) return xrt__fail(XRT_INVALID_ARGUMENT, "logical shape is NULL");
  size_t bytes;
  if ((s = xrt__shape_check(logical, &bytes))) return s;
  if (logical->rank != spec->rank)
    return xrt__fail(XRT_INVALID_ARGUMENT, "sharding spec has rank %d, the "
                     "array has rank %d", spec->rank, (int)logical->rank);
  for (int d = 0; d < spec->rank; d++) {
    const xrt_dim_sharding *ds = &spec->dims[d];
    int64_t size = logical->dims[d];
    if (ds->kind == XRT_DIM_CHUNKED && size % xrt__chunk_total(ds))
      return xrt__fail(XRT_INVALID_ARGUMENT, "dimension %d: %" PRId64 " chunks"
                       " do not divide size %" PRId64, d, xrt__chunk_total(ds),
                       size);
    if (ds->kind == XRT_DIM_UNSTACKED && size != ds->size)
      return xrt__fail(XRT_INVALID_ARGUMENT, "dimension %d: Unstacked(%" PRId64
                       ") but the dimension has size %" PRId64, d, ds->size,
                       size);
  }
  return XRT_OK;
}

/* The piece of every device: its shape drops Unstacked dimensions and
 * divides Chunked ones. */
XRT__PRIVATE xrt_shape xrt__spec_piece_shape(const xrt_sharding_spec *spec,
                                       const xrt_shape *logical) {
  xrt_shape p;
  memset(&p, 0, sizeof p);
  p.dtype = logical->dtype;
  for (int d = 0; d < spec->rank; d++) {
    const xrt_dim_sharding *ds = &spec->dims[d];
    if (ds->kind == XRT_DIM_UNSTACKED) continue;
    p.dims[p.rank++] = ds->kind == XRT_DIM_CHUNKED
                           ? logical->dims[d] / xrt__chunk_total(ds)
                           : logical->dims[d];
  }
  return p;
}

/* Where device k's piece starts (start[d] per logical dimension) and which
 * piece it is (*piece: the row-major index over the sharded axes, so
 * replicas of a piece share it).  The spec is checked already. */
XRT__PRIVATE void xrt__spec_locate(const xrt_sharding_spec *spec,
                             const xrt__spec_axes *ax,
                             const xrt_shape *logical, int64_t k,
                             int64_t *start, int64_t *piece) {
  int64_t coord[XRT_MAX_MESH_DIMS], axis_index[XRT_MAX_MESH_DIMS] = {0};
  /* Devices are row-major over the mesh: the last mesh dimension is
   * fastest. */
  for (int i = spec->num_mesh_dims - 1; i >= 0; i--) {
    int64_t size = xrt__mesh_size(&spec->mesh[i], ax);
    coord[i] = k % size;
    k /= size;
  }
  for (int i = 0; i < spec->num_mesh_dims; i++)
    if (spec->mesh[i].kind == XRT_MESH_SHARDED_AXIS)
      axis_index[spec->mesh[i].axis] = coord[i];
  int64_t p = 0;
  for (int a = 0; a < ax->n; a++) p = p * ax->size[a] + axis_index[a];
  *piece = p;
  int a = 0;
  for (int d = 0; d < spec->rank; d++) {
    const xrt_dim_sharding *ds = &spec->dims[d];
    if (ds->kind == XRT_DIM_NO_SHARDING) {
      start[d] = 0;
    } else if (ds->kind == XRT_DIM_UNSTACKED) {
      start[d] = axis_index[a++];
    } else { /* Chunked: chunk factors c0 (outermost) .. cn */
      int64_t chunk = 0;
      for (int i = 0; i < ds->num_chunks; i++)
        chunk = chunk * ds->chunks[i] + axis_index[a++];
      start[d] = chunk * (logical->dims[d] / xrt__chunk_total(ds));
    }
  }
}

/* Extent of a piece along every logical dimension (1 where Unstacked). */
XRT__PRIVATE void xrt__spec_extent(const xrt_sharding_spec *spec,
                             const xrt_shape *logical, int64_t *ext) {
  for (int d = 0; d < spec->rank; d++) {
    const xrt_dim_sharding *ds = &spec->dims[d];
    ext[d] = ds->kind == XRT_DIM_UNSTACKED ? 1
             : ds->kind == XRT_DIM_CHUNKED
                 ? logical->dims[d] / xrt__chunk_total(ds)
                 : logical->dims[d];
  }
}

void xrt_sharding_spec_init(xrt_sharding_spec *spec, int rank) {
  if (!spec) return;
  memset(spec, 0, sizeof *spec);
  spec->rank = rank;
}

xrt_status xrt_sharding_spec_validate(const xrt_sharding_spec *spec,
                                      const xrt_shape *logical) {
  xrt__spec_axes ax;
  return xrt__spec_check(spec, logical, &ax, NULL);
}

int64_t xrt_sharding_spec_num_devices(const xrt_sharding_spec *spec) {
  xrt__spec_axes ax;
  int64_t n;
  return xrt__spec_axes_of(spec, &ax, &n) ? -1 : n;
}

xrt_status xrt_sharding_spec_shard_shape(const xrt_sharding_spec *spec,
                                         const xrt_shape *logical,
                                         xrt_shape *out) {
  XRT__CHECK_ARG(out, "out is NULL");
  xrt__spec_axes ax;
  xrt_status s = xrt__spec_check(spec, logical, &ax, NULL);
  if (s) return s;
  *out = xrt__spec_piece_shape(spec, logical);
  return XRT_OK;
}

xrt_status xrt_sharding_spec_logical_shape(const xrt_sharding_spec *spec,
                                           const xrt_shape *shard,
                                           xrt_shape *out) {
  XRT__CHECK_ARG(out && shard, "shard or out is NULL");
  xrt__spec_axes ax;
  xrt_status s = xrt__spec_axes_of(spec, &ax, NULL);
  if (s) return s;
  int unstacked = 0;
  for (int d = 0; d < spec->rank; d++)
    unstacked += spec->dims[d].kind == XRT_DIM_UNSTACKED;
  if (shard->rank != spec->rank - unstacked)
    return xrt__fail(XRT_INVALID_ARGUMENT, "sharding spec of rank %d with %d "
                     "Unstacked dimension(s) needs pieces of rank %d, got %d",
                     spec->rank, unstacked, spec->rank - unstacked,
                     (int)shard->rank);
  xrt_shape l;
  memset(&l, 0, sizeof l);
  l.dtype = shard->dtype;
  l.rank = spec->rank;
  for (int d = 0, p = 0; d < spec->rank; d++) {
    const xrt_dim_sharding *ds = &spec->dims[d];
    if (ds->kind == XRT_DIM_UNSTACKED) {
      l.dims[d] = ds->size;
      continue;
    }
    int64_t f = ds->kind == XRT_DIM_CHUNKED ? xrt__chunk_total(ds) : 1;
    if (shard->dims[p] < 0 || (f > 1 && shard->dims[p] > INT64_MAX / f))
      return xrt__fail(XRT_INVALID_ARGUMENT, "piece dimension %d (%" PRId64
                       ") is negative or too large", p, shard->dims[p]);
    l.dims[d] = shard->dims[p++] * f;
  }
  if ((s = xrt__spec_check(spec, &l, &ax, NULL))) return s;
  *out = l;
  return XRT_OK;
}

xrt_status xrt_sharding_spec_shard_start(const xrt_sharding_spec *spec,
                                         const xrt_shape *logical,
                                         int64_t device, int64_t *start) {
  XRT__CHECK_ARG(start, "start is NULL");
  xrt__spec_axes ax;
  int64_t n, piece;
  xrt_status s = xrt__spec_check(spec, logical, &ax, &n);
  if (s) return s;
  if (device < 0 || device >= n)
    return xrt__fail(XRT_OUT_OF_RANGE, "device %" PRId64 " is outside 0..%"
                     PRId64 " of the spec's mesh", device, n - 1);
  xrt__spec_locate(spec, &ax, logical, device, start, &piece);
  return XRT_OK;
}

static void xrt__box_init(xrt__box *b, const xrt_shape *logical,
                          const int64_t *start, const int64_t *ext) {
  int r = logical->rank;
  memset(b, 0, sizeof *b);
  b->rank = r;
  int64_t st = (int64_t)xrt_dtype_size(logical->dtype);
  for (int d = r - 1; d >= 0; d--) {
    b->stride[d] = st;
    st *= logical->dims[d];
    b->start[d] = start[d];
    b->ext[d] = ext[d];
    b->offset += (size_t)(start[d] * b->stride[d]);
    if (ext[d] == 0) b->empty = true;
  }
  /* Trailing dimensions taken whole merge into the run, plus the first
   * partial one from the end. */
  int d = r - 1;
  while (d >= 0 && ext[d] == logical->dims[d]) d--;
  b->outer = d < 0 ? 0 : d;
  b->run_bytes = (size_t)xrt_dtype_size(logical->dtype);
  for (int j = r - 1; j >= b->outer && j >= 0; j--)
    b->run_bytes *= (size_t)ext[j];
}

/* Whether the box is one contiguous range of the logical array. */
static bool xrt__box_contiguous(const xrt__box *b) {
  for (int d = 0; d < b->outer; d++)
    if (b->ext[d] != 1) return false;
  return true;
}

/* Copies the box out of (to_piece) or into the logical array. */
XRT__PRIVATE void xrt__box_copy(const xrt__box *b, char *array, char *piece,
                          bool to_piece) {
  if (b->empty) return;
  int64_t idx[XRT_MAX_RANK] = {0};
  for (;;) {
    size_t off = b->offset;
    for (int d = 0; d < b->outer; d++) off += (size_t)(idx[d] * b->stride[d]);
    if (to_piece) memcpy(piece, array + off, b->run_bytes);
    else memcpy(array + off, piece, b->run_bytes);
    piece += b->run_bytes;
    int d = b->outer - 1;
    while (d >= 0 && ++idx[d] == b->ext[d]) idx[d--] = 0;
    if (d < 0) return;
  }
}

/* Live sharded arrays of every client, so that client release frees its
 * own (a process-wide list keeps the client struct untouched). */
static xrt__link xrt__sharded_live = {&xrt__sharded_live, &xrt__sharded_live};
static pthread_mutex_t xrt__sharded_mu = PTHREAD_MUTEX_INITIALIZER;

XRT__PRIVATE xrt__sharded *xrt__sharded_get(const xrt_sharded_array *a) {
  return (xrt__sharded *)xrt__hget(a, XRT__H_SHARDED);
}

/* Frees the object; its buffers only when release_buffers is set. */
XRT__PRIVATE void xrt__sharded_free(xrt__sharded *a, bool release_buffers) {
  xrt__hfree_handle(a->handle);
  pthread_mutex_lock(&xrt__sharded_mu);
  xrt__link_remove(&a->link);
  pthread_mutex_unlock(&xrt__sharded_mu);
  for (int k = 0; release_buffers && k < a->n; k++)
    xrt_buffer_release(a->bufs[k]);
  xrt__free(&a->client->allocator, a->bufs);
  xrt__free(&a->client->allocator, a->devices);
  xrt__free(&a->client->allocator, a);
}

/* Called by xrt__client_free before it frees buffers. */
XRT__PRIVATE void xrt__sharded_release_all(xrt__client *c) {
  for (;;) {
    xrt__sharded *found = NULL;
    pthread_mutex_lock(&xrt__sharded_mu);
    for (xrt__link *l = xrt__sharded_live.next; l != &xrt__sharded_live;
         l = l->next)
      if (((xrt__sharded *)l)->client == c) {
        found = (xrt__sharded *)l;
        break;
      }
    pthread_mutex_unlock(&xrt__sharded_mu);
    if (!found) return;
    xrt__sharded_free(found, true);
  }
}

/* A new array object over n buffers (taken over only on success; the spec
 * is checked already). */
XRT__PRIVATE xrt_status xrt__sharded_new(xrt__client *c, const xrt_shape *logical,
                                   const xrt_sharding_spec *spec,
                                   const xrt__spec_axes *ax,
                                   xrt_buffer *const *bufs, int n,
                                   xrt__sharded **out) {
  xrt__sharded *a = (xrt__sharded *)xrt__calloc(&c->allocator, 1, sizeof *a);
  if (!a) return xrt__nomem("a sharded array");
  a->client = c;
  a->logical = *logical;
  a->piece = xrt__spec_piece_shape(spec, logical);
  a->spec = *spec;
  a->axes = *ax;
  a->n = n;
  a->bufs = (xrt_buffer **)xrt__calloc(&c->allocator, (size_t)n,
                                       sizeof *a->bufs);
  a->devices = (xrt_device **)xrt__calloc(&c->allocator, (size_t)n,
                                          sizeof *a->devices);
  if (a->bufs && a->devices) a->handle = xrt__hnew(a, XRT__H_SHARDED);
  if (!a->handle) {
    xrt__free(&c->allocator, a->bufs);
    xrt__free(&c->allocator, a->devices);
    xrt__free(&c->allocator, a);
    return xrt__fail(XRT_RESOURCE_EXHAUSTED, "out of host memory or handles");
  }
  for (int k = 0; k < n; k++) {
    a->bufs[k] = bufs[k];
    a->devices[k] = bufs[k] ? xrt_buffer_device(bufs[k]) : NULL;
  }
  pthread_mutex_lock(&xrt__sharded_mu);
  xrt__link_add(&xrt__sharded_live, &a->link);
  pthread_mutex_unlock(&xrt__sharded_mu);
  *out = a;
  return XRT_OK;
}

XRT__PRIVATE void xrt__save_error(xrt__saved_error *e, xrt_status code) {
  if (e->code || !code) return; /* the first failure wins */
  e->code = code;
  snprintf(e->message, sizeof e->message, "%s", xrt_last_error());
}

XRT__PRIVATE xrt_status xrt__restore_error(const xrt__saved_error *e) {
  return e->code ? xrt__fail(e->code, "%s", e->message) : XRT_OK;
}

/* Waits for and releases n events (NULL entries skipped), keeping the
 * first failure in *err. */
static void xrt__await_all(xrt_event **ev, int n, xrt__saved_error *err) {
  for (int k = 0; k < n; k++) {
    if (!ev[k]) continue;
    xrt__save_error(err, xrt_event_await(ev[k]));
    xrt_event_release(ev[k]);
    ev[k] = NULL;
  }
}

/* Per-device work of a split or an assembly. */
typedef struct xrt__split_plan {
  int64_t pieces;   /* distinct pieces */
  int64_t *piece;   /* [n]: piece of each device */
  int *first;       /* [pieces]: first device holding it */
  char **stage;     /* [pieces]: host staging, NULL when contiguous */
  xrt_event **ev;   /* [n] */
} xrt__split_plan;

static void xrt__plan_free(xrt__client *c, xrt__split_plan *p) {
  for (int64_t i = 0; p->stage && i < p->pieces; i++)
    xrt__free(&c->allocator, p->stage[i]);
  xrt__free(&c->allocator, p->piece);
  xrt__free(&c->allocator, p->first);
  xrt__free(&c->allocator, p->stage);
  xrt__free(&c->allocator, p->ev);
  memset(p, 0, sizeof *p); /* freeing again (after a failed init) is a no-op */
}

/* Finds each device's piece and the first device holding each piece. */
static xrt_status xrt__plan_init(xrt__client *c, const xrt_sharding_spec *spec,
                                 const xrt__spec_axes *ax,
                                 const xrt_shape *logical, int n,
                                 xrt__split_plan *p) {
  memset(p, 0, sizeof *p);
  p->pieces = 1;
  for (int a = 0; a < ax->n; a++) p->pieces *= ax->size[a];
  p->piece = (int64_t *)xrt__calloc(&c->allocator, (size_t)n, sizeof(int64_t));
  p->first = (int *)xrt__calloc(&c->allocator, (size_t)p->pieces, sizeof(int));
  p->stage = (char **)xrt__calloc(&c->allocator, (size_t)p->pieces,
                                  sizeof(char *));
  p->ev = (xrt_event **)xrt__calloc(&c->allocator, (size_t)n,
                                    sizeof(xrt_event *));
  if (!p->piece || !p->first || !p->stage || !p->ev) {
    xrt__plan_free(c, p);
    return xrt__nomem("a sharded upload plan");
  }
  for (int64_t i = 0; i < p->pieces; i++) p->first[i] = -1;
  int64_t start[XRT_MAX_RANK];
  for (int k = 0; k < n; k++) {
    xrt__spec_locate(spec, ax, logical, k, start, &p->piece[k]);
    if (p->first[p->piece[k]] < 0) p->first[p->piece[k]] = k;
  }
  return XRT_OK;
}

/* The box of device k's piece. */
XRT__PRIVATE void xrt__piece_box(const xrt_sharding_spec *spec,
                           const xrt__spec_axes *ax, const xrt_shape *logical,
                           int k, xrt__box *box) {
  int64_t start[XRT_MAX_RANK], ext[XRT_MAX_RANK], piece;
  xrt__spec_locate(spec, ax, logical, k, start, &piece);
  xrt__spec_extent(spec, logical, ext);
  xrt__box_init(box, logical, start, ext);
}

/* Host memory holding device k's piece: inside data when the piece is
 * contiguous there, else a staging copy made once per piece. */
static xrt_status xrt__piece_source(xrt__client *c, const xrt__sharded *a,
                                    const char *data, xrt__split_plan *p,
                                    int k, const void **out) {
  xrt__box box;
  xrt__piece_box(&a->spec, &a->axes, &a->logical, k, &box);
  if (box.empty || xrt__box_contiguous(&box)) {
    *out = box.empty ? NULL : data + box.offset; /* data may be NULL then */
    return XRT_OK;
  }
  int64_t id = p->piece[k];
  if (!p->stage[id]) {
    p->stage[id] = (char *)xrt__alloc(&c->allocator,
                                      xrt_shape_bytes(&a->piece));
    if (!p->stage[id])
      return xrt__nomem("staging a sharded array's piece");
    xrt__box_copy(&box, (char *)(uintptr_t)data, p->stage[id], true);
  }
  *out = p->stage[id];
  return XRT_OK;
}

/* ---- sharded arrays across processes (issue #11) ----
 *
 * Included once by section 13b of xrt.c, after the split plan.  An array
 * of a client that joins several processes keeps devices[k] = piece k's
 * global device (this process's xrt__device handle, or another process's
 * XRT__H_RDEVICE handle) and bufs[k] = NULL for pieces held elsewhere.
 * Such arrays are made and used SPMD-style (see "Objects that span
 * processes" in xrt.h): on a multi-process client, assembling to host is
 * a collective of every process, whatever devices the array spans, so
 * that the choice of path never differs between processes. */

static xrt_status xrt__sharded_start(const char *fn, xrt_client *client,
                                     const xrt_shape *logical,
                                     const xrt_sharding_spec *spec,
                                     xrt_sharded_array **out_array,
                                     xrt__client **c, xrt__spec_axes *ax,
                                     int64_t *n);
static xrt_status xrt__spec_count_check(int64_t n, int given,
                                        const char *what);

/* Whether d is another process's device of client c. */
static bool xrt__mp_remote(const xrt__client *c, const xrt_device *d) {
  const xrt__rdev *r = c->mp ? xrt__rdev_get(d) : NULL;
  return r && r->client == c;
}

/* The failure of xrt_sharded_array_shard for a piece held elsewhere. */
static xrt_status xrt__mp_not_held(const xrt__sharded *a, int k) {
  const xrt_device *d = a->devices[k];
  if (!xrt__mp_remote(a->client, d))
    return xrt__fail(XRT_INTERNAL, "shard %d has no buffer", k);
  return xrt__fail(XRT_FAILED_PRECONDITION, "shard %d is held by process %d "
                   "(global device %d); this is process %d", k,
                   xrt_device_process_index(d), xrt_device_global_id(d),
                   a->client->mp->me);
}

/* What every message of an assembly starts with: the sender's status
 * reading its own pieces, so that every process fails alike. */
typedef struct xrt__asm_hdr {
  int32_t code;
  char message[252];
} xrt__asm_hdr;

/* One assembly: which process sends each distinct piece (holder: the
 * process of its first device in mesh order, alike in every process),
 * which processes hold it, and this process's first device holding it. */
typedef struct xrt__asm {
  xrt__client *c;
  const xrt_shape *logical;
  const xrt_sharding_spec *spec;
  const xrt__spec_axes *ax;
  int n, me, np;
  size_t piece_bytes;
  xrt__split_plan p;
  int *holder;         /* [pieces] */
  int *local;          /* [pieces]: this process's first device k, or -1 */
  unsigned char *held; /* [np][pieces]: process q holds piece i */
  xrt_transport_msg *msgs; /* [2 (np - 1)]: sends, then receives */
} xrt__asm;

static void xrt__asm_free(xrt__asm *m) {
  xrt__client *c = m->c;
  for (int i = 0; m->msgs && i < 2 * (m->np - 1); i++)
    xrt__free(&c->allocator, m->msgs[i].data);
  xrt__free(&c->allocator, m->msgs);
  xrt__free(&c->allocator, m->holder);
  xrt__free(&c->allocator, m->local);
  xrt__free(&c->allocator, m->held);
  xrt__plan_free(c, &m->p);
}

/* The process of piece k's device (this one for a local device). */
static int xrt__asm_process(const xrt__asm *m, xrt_device *const *devices,
                            int k) {
  return xrt__mp_remote(m->c, devices[k])
             ? xrt_device_process_index(devices[k])
             : m->me;
}

static xrt_status xrt__asm_init(xrt__asm *m, xrt_device *const *devices) {
  xrt__client *c = m->c;
  xrt_status s = xrt__plan_init(c, m->spec, m->ax, m->logical, m->n, &m->p);
  if (s) return s;
  size_t P = (size_t)m->p.pieces, np = (size_t)m->np;
  m->holder = (int *)xrt__calloc(&c->allocator, P, sizeof(int));
  m->local = (int *)xrt__calloc(&c->allocator, P, sizeof(int));
  m->held = (unsigned char *)xrt__calloc(&c->allocator, np * P, 1);
  m->msgs = (xrt_transport_msg *)xrt__calloc(&c->allocator, 2 * np,
                                             sizeof *m->msgs);
  if (!m->holder || !m->local || !m->held || !m->msgs)
    return xrt__nomem("assembling a sharded array");
  for (size_t i = 0; i < P; i++) m->local[i] = -1;
  for (int k = 0; k < m->n; k++) {
    int q = xrt__asm_process(m, devices, k);
    size_t i = (size_t)m->p.piece[k];
    if (q < 0 || q >= m->np)
      return xrt__fail(XRT_INVALID_ARGUMENT, "piece %d's device is not a "
                       "device of this client", k);
    m->held[(size_t)q * P + i] = 1;
    if (q == m->me && m->local[i] < 0) m->local[i] = k;
  }
  for (size_t i = 0; i < P; i++)
    m->holder[i] = xrt__asm_process(m, devices, m->p.first[i]);
  return XRT_OK;
}

/* Reads every piece this process holds into dst (each once, from its
 * first local device); the first failure goes to *err. */
static void xrt__asm_read_local(xrt__asm *m, xrt_buffer *const *bufs,
                                char *dst, xrt__saved_error *err) {
  xrt__client *c = m->c;
  for (int64_t i = 0; i < m->p.pieces && !err->code; i++) {
    int k = m->local[i];
    if (k < 0) continue;
    if (!bufs[k]) {
      xrt__save_error(err, xrt__fail(XRT_INTERNAL, "piece %d of this "
                                     "process has no buffer", k));
      break;
    }
    xrt__box box;
    xrt__piece_box(m->spec, m->ax, m->logical, k, &box);
    char *to = box.empty ? NULL : dst + box.offset;
    if (!box.empty && !xrt__box_contiguous(&box)) {
      to = m->p.stage[i] = (char *)xrt__alloc(&c->allocator, m->piece_bytes);
      if (!to) {
        xrt__save_error(err, xrt__nomem("staging a sharded array's piece"));
        break;
      }
    }
    xrt__save_error(err, xrt_buffer_to_host_async(bufs[k], to,
                                                  m->piece_bytes, &m->p.ev[k]));
  }
  xrt__await_all(m->p.ev, m->n, err);
  for (int64_t i = 0; i < m->p.pieces && !err->code; i++) {
    if (!m->p.stage[i]) continue;
    xrt__box box;
    xrt__piece_box(m->spec, m->ax, m->logical, m->local[i], &box);
    xrt__box_copy(&box, dst, m->p.stage[i], false);
  }
}

/* Whether process `from` sends piece i to process `to`: it is the
 * piece's holder and `to` holds no copy. */
static bool xrt__asm_sends(const xrt__asm *m, int64_t i, int from, int to) {
  return m->holder[i] == from &&
         !m->held[(size_t)to * (size_t)m->p.pieces + (size_t)i];
}

/* Copies (pack) or places (!pack) the pieces that `from` sends `to`
 * between dst and a message's payload. */
static void xrt__asm_move(const xrt__asm *m, int from, int to, char *dst,
                          char *payload, bool pack) {
  for (int64_t i = 0; i < m->p.pieces; i++) {
    if (!xrt__asm_sends(m, i, from, to)) continue;
    xrt__box box;
    xrt__piece_box(m->spec, m->ax, m->logical, m->p.first[i], &box);
    xrt__box_copy(&box, dst, payload, pack);
    payload += m->piece_bytes;
  }
}

static size_t xrt__asm_bytes(const xrt__asm *m, int from, int to) {
  size_t bytes = sizeof(xrt__asm_hdr);
  for (int64_t i = 0; i < m->p.pieces; i++)
    if (xrt__asm_sends(m, i, from, to)) bytes += m->piece_bytes;
  return bytes;
}

/* The messages: to every other process its missing pieces of ours (after
 * our status), and room for theirs. */
static xrt_status xrt__asm_messages(xrt__asm *m, char *dst,
                                    const xrt__saved_error *local) {
  xrt__asm_hdr hdr;
  memset(&hdr, 0, sizeof hdr);
  hdr.code = (int32_t)local->code;
  snprintf(hdr.message, sizeof hdr.message, "%.*s",
           (int)sizeof hdr.message - 1, local->message); /* truncated */
  int k = 0;
  for (int q = 0; q < m->np; q++) {
    if (q == m->me) continue;
    xrt_transport_msg *snd = &m->msgs[k], *rcv = &m->msgs[m->np - 1 + k++];
    size_t sb = xrt__asm_bytes(m, m->me, q), rb = xrt__asm_bytes(m, q, m->me);
    *snd = (xrt_transport_msg){q, xrt__calloc(&m->c->allocator, 1, sb), sb};
    *rcv = (xrt_transport_msg){q, xrt__calloc(&m->c->allocator, 1, rb), rb};
    if (!snd->data || !rcv->data)
      return xrt__nomem("the messages of a sharded array's assembly");
    memcpy(snd->data, &hdr, sizeof hdr);
    if (!local->code)
      xrt__asm_move(m, m->me, q, dst, (char *)snd->data + sizeof hdr, true);
  }
  return XRT_OK;
}

/* Places the received pieces; the first process that failed to read its
 * own fails the whole assembly (in every process alike). */
static xrt_status xrt__asm_place(xrt__asm *m, char *dst) {
  for (int k = 0; k < m->np - 1; k++) {
    const xrt_transport_msg *r = &m->msgs[m->np - 1 + k];
    xrt__asm_hdr hdr;
    memcpy(&hdr, r->data, sizeof hdr);
    hdr.message[sizeof hdr.message - 1] = 0;
    if (hdr.code)
      return xrt__fail((xrt_status)hdr.code, "process %d could not read its "
                       "pieces: %s", r->peer, hdr.message);
  }
  for (int k = 0; k < m->np - 1; k++) {
    const xrt_transport_msg *r = &m->msgs[m->np - 1 + k];
    char *payload = (char *)r->data + sizeof(xrt__asm_hdr);
    xrt__asm_move(m, r->peer, m->me, dst, payload, false);
  }
  return XRT_OK;
}

/* Assembles a logical array whose pieces (bufs[k] on devices[k], NULL
 * where another process holds it) span the processes of c, into dst in
 * every process.  Collective on a multi-process client: one core tag;
 * each distinct piece is read once by its holder and sent to the
 * processes that hold no copy.  On a client of one process, a local read.
 * dst is checked by the caller (it holds the logical array). */
static xrt_status xrt__mp_assemble(xrt__client *c, const xrt_shape *logical,
                                   const xrt_sharding_spec *spec,
                                   const xrt__spec_axes *ax, int n,
                                   xrt_buffer *const *bufs,
                                   xrt_device *const *devices, void *dst) {
  /* First, so that the counters stay in step whatever fails below. */
  uint64_t tag = c->mp ? xrt__mp_next_tag(c) : 0;
  xrt__asm m;
  memset(&m, 0, sizeof m);
  m.c = c;
  m.logical = logical;
  m.spec = spec;
  m.ax = ax;
  m.n = n;
  m.me = c->mp ? c->mp->me : 0;
  m.np = c->mp ? c->mp->nproc : 1;
  xrt_shape piece = xrt__spec_piece_shape(spec, logical);
  m.piece_bytes = xrt_shape_bytes(&piece);
  xrt__saved_error local = {XRT_OK, ""};
  xrt_status s = xrt__asm_init(&m, devices);
  if (!s) xrt__asm_read_local(&m, bufs, (char *)dst, &local);
  if (!s && m.np > 1) s = xrt__asm_messages(&m, (char *)dst, &local);
  if (!s && m.np > 1)
    s = xrt__mp_exchange(c, tag, m.msgs, m.np - 1, m.msgs + m.np - 1,
                         m.np - 1, "assembling a sharded array across "
                         "processes");
  if (!s && local.code) s = xrt__restore_error(&local);
  if (!s && m.np > 1) s = xrt__asm_place(&m, (char *)dst);
  xrt__saved_error err = {XRT_OK, ""};
  xrt__save_error(&err, s);
  xrt__asm_free(&m);
  return xrt__restore_error(&err);
}

/* xrt_sharded_array_to_host's and xrt_variable_to_host's way on a client
 * of several processes: the checks of dst, then the collective. */
XRT__PRIVATE xrt_status xrt__mp_to_host(xrt__client *c, const xrt_shape *logical,
                                  const xrt_sharding_spec *spec,
                                  const xrt__spec_axes *ax, int n,
                                  xrt_buffer *const *bufs,
                                  xrt_device *const *devices, void *dst,
                                  size_t dst_bytes) {
  size_t bytes = xrt_shape_bytes(logical);
  XRT__CHECK_ARG(dst || bytes == 0, "dst is NULL");
  if (dst_bytes < bytes)
    return xrt__fail(XRT_INVALID_ARGUMENT, "destination holds %zu bytes, the "
                     "array has %zu", dst_bytes, bytes);
  return xrt__mp_assemble(c, logical, spec, ax, n, bufs, devices, dst);
}

/* Checks piece k of xrt_sharded_array_create_global: a buffer exactly
 * where devices[k] is this process's, on that device, of the piece's
 * shape. */
/* Buffer k of a piece list: of the spec's piece shape, and not one of
 * bufs[0..k) again. */
static xrt_status xrt__piece_buffer_check(const xrt_shape *piece,
                                          xrt_buffer *const *bufs, int k) {
  xrt_shape have;
  xrt_buffer_shape(bufs[k], &have);
  if (!xrt__shape_equal(&have, piece)) {
    char h[128], w[128];
    xrt_shape_format(&have, h, sizeof h);
    xrt_shape_format(piece, w, sizeof w);
    return xrt__fail(XRT_INVALID_ARGUMENT, "buffers[%d] is %s, the spec's "
                     "pieces are %s", k, h, w);
  }
  for (int j = 0; j < k; j++)
    if (bufs[j] == bufs[k])
      return xrt__fail(XRT_INVALID_ARGUMENT, "buffers[%d] and buffers[%d] are "
                       "the same buffer", j, k);
  return XRT_OK;
}

static xrt_status xrt__global_piece_check(xrt__client *c,
                                          const xrt_shape *piece,
                                          xrt_device *const *devices,
                                          xrt_buffer *const *bufs, int k) {
  xrt_device *dev = devices[k];
  if (xrt__mp_remote(c, dev)) {
    if (bufs[k])
      return xrt__fail(XRT_INVALID_ARGUMENT, "buffers[%d] is given, but "
                       "devices[%d] (global device %d) belongs to process %d; "
                       "this is process %d", k, k, xrt_device_global_id(dev),
                       xrt_device_process_index(dev), c->mp->me);
    return XRT_OK;
  }
  xrt__device *d = xrt__device_get(dev);
  if (!d || d->client != c)
    return xrt__fail(XRT_INVALID_ARGUMENT, "devices[%d] is not a device of "
                     "this client", k);
  if (!bufs[k])
    return xrt__fail(XRT_INVALID_ARGUMENT, "buffers[%d] is NULL, but "
                     "devices[%d] (global device %d) is this process's", k, k,
                     xrt_device_global_id(dev));
  xrt_device *on = xrt_buffer_device(bufs[k]);
  if (!on || xrt__device_get(on)->client != c)
    return xrt__fail(XRT_INVALID_ARGUMENT, "buffers[%d] is not a live buffer "
                     "of this client", k);
  if (on != dev)
    return xrt__fail(XRT_INVALID_ARGUMENT, "buffers[%d] is on global device "
                     "%d, devices[%d] is global device %d", k,
                     xrt_device_global_id(on), k, xrt_device_global_id(dev));
  return xrt__piece_buffer_check(piece, bufs, k);
}

xrt_status xrt_sharded_array_create_global(
    xrt_client *client, const xrt_shape *logical,
    const xrt_sharding_spec *spec, xrt_device *const *devices,
    xrt_buffer *const *buffers, int num_pieces,
    xrt_sharded_array **out_array) {
  xrt__client *c = NULL;
  xrt__spec_axes ax;
  int64_t n;
  xrt_status s = xrt__sharded_start(__func__, client, logical, spec,
                                    out_array, &c, &ax, &n);
  if (s || (s = xrt__spec_count_check(n, num_pieces, "pieces"))) return s;
  XRT__CHECK_ARG(devices && buffers, "devices or buffers is NULL");
  xrt_shape piece = xrt__spec_piece_shape(spec, logical);
  for (int k = 0; k < num_pieces; k++)
    if ((s = xrt__global_piece_check(c, &piece, devices, buffers, k)))
      return s;
  xrt__sharded *a;
  if ((s = xrt__sharded_new(c, logical, spec, &ax, buffers, num_pieces, &a)))
    return s;
  for (int k = 0; k < num_pieces; k++) a->devices[k] = devices[k];
  *out_array = (xrt_sharded_array *)a->handle;
  return XRT_OK;
}

/* A launch over arrays of a multi-process client runs on the
 * executable's assignment (global devices): the arguments must lie
 * there. */
static xrt_status xrt__mp_launch_check(xrt_executable *exe,
                                       const xrt_device *const *devices,
                                       int n) {
  for (int d = 0; d < n; d++) {
    xrt_device *want = xrt_executable_device(exe, d);
    if (devices[d] != want)
      return xrt__fail(XRT_INVALID_ARGUMENT, "logical id %d of @%s runs on "
                       "global device %d, but the arguments' shard %d is on "
                       "global device %d", d, xrt_executable_name(exe),
                       xrt_device_global_id(want), d,
                       xrt_device_global_id(devices[d]));
  }
  return XRT_OK;
}

/* Checks the devices of a split: n live devices of client c (or global
 * devices of its other processes). */
static xrt_status xrt__check_devices(xrt__client *c, xrt_device *const *devs,
                                     int n, int64_t want) {
  if (n != want)
    return xrt__fail(XRT_INVALID_ARGUMENT, "the sharding spec spans %" PRId64
                     " devices, %d were given", want, n);
  XRT__CHECK_ARG(devs, "devices is NULL");
  for (int k = 0; k < n; k++) {
    xrt__device *d = xrt__device_get(devs[k]);
    if ((!d || d->client != c) && !xrt__mp_remote(c, devs[k]))
      return xrt__fail(XRT_INVALID_ARGUMENT, "devices[%d] is not a device of "
                       "this client", k);
  }
  return XRT_OK;
}

/* Enqueues every piece's upload, then waits for all of them. */
static xrt_status xrt__upload_pieces(xrt__sharded *a, const void *data,
                                     xrt_device *const *devs,
                                     xrt__split_plan *p) {
  xrt__client *c = a->client;
  xrt__saved_error err = {XRT_OK, ""};
  xrt_client *client = (xrt_client *)c->handle;
  for (int k = 0; k < a->n && !err.code; k++) {
    if (xrt__mp_remote(c, devs[k])) continue; /* another process's piece */
    const void *src = NULL;
    xrt_status s = xrt__piece_source(c, a, (const char *)data, p, k, &src);
    if (!s)
      s = xrt_buffer_from_host_async(client, devs[k], &a->piece, src,
                                     &a->bufs[k], &p->ev[k]);
    xrt__save_error(&err, s);
  }
  xrt__await_all(p->ev, a->n, &err);
  return xrt__restore_error(&err);
}

/* That as many pieces (what: "pieces", "buffers") were given as the
 * spec's n devices. */
static xrt_status xrt__spec_count_check(int64_t n, int given,
                                        const char *what) {
  if (given == n) return XRT_OK;
  return xrt__fail(XRT_INVALID_ARGUMENT, "the sharding spec spans %" PRId64
                   " devices, %d %s were given", n, given, what);
}

/* The checks that open both ways of making a sharded array, failing as
 * XRT__CHECK_ARG would in fn: out_array, the client, then the spec
 * (giving its axes and device count n). */
static xrt_status xrt__sharded_start(const char *fn, xrt_client *client,
                                     const xrt_shape *logical,
                                     const xrt_sharding_spec *spec,
                                     xrt_sharded_array **out_array,
                                     xrt__client **c, xrt__spec_axes *ax,
                                     int64_t *n) {
  if (!out_array)
    return xrt__fail(XRT_INVALID_ARGUMENT, "%s: out_array is NULL", fn);
  *out_array = NULL;
  *c = xrt__client_get(client);
  if (!*c) return xrt__fail(XRT_INVALID_ARGUMENT, "%s: invalid client", fn);
  return xrt__spec_check(spec, logical, ax, n);
}

xrt_status xrt_sharded_array_from_host(xrt_client *client,
                                       const xrt_shape *logical,
                                       const void *data,
                                       const xrt_sharding_spec *spec,
                                       xrt_device *const *devices,
                                       int num_devices,
                                       xrt_sharded_array **out_array) {
  xrt__client *c = NULL;
  xrt__spec_axes ax;
  int64_t n;
  xrt_status s = xrt__sharded_start(__func__, client, logical, spec,
                                    out_array, &c, &ax, &n);
  if (s || (s = xrt__check_devices(c, devices, num_devices, n))) return s;
  XRT__CHECK_ARG(data || xrt_shape_bytes(logical) == 0, "data is NULL");
  /* The object is built first with no buffers, then filled. */
  xrt__sharded *a;
  xrt_buffer **none = (xrt_buffer **)xrt__calloc(&c->allocator, (size_t)n,
                                                 sizeof *none);
  if (!none) return xrt__nomem("a sharded array's piece list");
  s = xrt__sharded_new(c, logical, spec, &ax, none, (int)n, &a);
  xrt__free(&c->allocator, none);
  if (s) return s;
  xrt__split_plan p;
  if (!(s = xrt__plan_init(c, spec, &ax, logical, (int)n, &p))) {
    s = xrt__upload_pieces(a, data, devices, &p);
    xrt__plan_free(c, &p);
  }
  if (s) {
    xrt__saved_error err = {XRT_OK, ""};
    xrt__save_error(&err, s);
    xrt__sharded_free(a, true);
    return xrt__restore_error(&err);
  }
  for (int k = 0; k < a->n; k++) a->devices[k] = devices[k];
  *out_array = (xrt_sharded_array *)a->handle;
  return XRT_OK;
}

xrt_status xrt_sharded_array_to_host(xrt_sharded_array *array, void *dst,
                                     size_t dst_bytes) {
  xrt__sharded *a = xrt__sharded_get(array);
  XRT__CHECK_ARG(a, "invalid or released sharded array");
  size_t bytes = xrt_shape_bytes(&a->logical);
  XRT__CHECK_ARG(dst || bytes == 0, "dst is NULL");
  if (dst_bytes < bytes)
    return xrt__fail(XRT_INVALID_ARGUMENT, "destination holds %zu bytes, the "
                     "array has %zu", dst_bytes, bytes);
  xrt__client *c = a->client;
  if (c->mp) /* collective: mp_sharded.inc */
    return xrt__mp_assemble(c, &a->logical, &a->spec, &a->axes, a->n, a->bufs,
                            a->devices, dst);
  xrt__split_plan p;
  xrt_status s = xrt__plan_init(c, &a->spec, &a->axes, &a->logical, a->n, &p);
  if (s) return s;
  xrt__saved_error err = {XRT_OK, ""};
  size_t piece_bytes = xrt_shape_bytes(&a->piece);
  /* Each distinct piece is read once, from the first device holding it. */
  for (int64_t i = 0; i < p.pieces && !err.code; i++) {
    int k = p.first[i];
    xrt__box box;
    xrt__piece_box(&a->spec, &a->axes, &a->logical, k, &box);
    char *to = box.empty ? NULL : (char *)dst + box.offset;
    if (!box.empty && !xrt__box_contiguous(&box)) {
      to = p.stage[i] = (char *)xrt__alloc(&c->allocator, piece_bytes);
      if (!to) {
        xrt__save_error(&err, xrt__nomem("staging a sharded array's "
                                         "piece"));
        break;
      }
    }
    xrt__save_error(&err, xrt_buffer_to_host_async(a->bufs[k], to,
                                                   piece_bytes, &p.ev[k]));
  }
  xrt__await_all(p.ev, a->n, &err);
  for (int64_t i = 0; i < p.pieces && !err.code; i++) {
    if (!p.stage[i]) continue;
    xrt__box box;
    xrt__piece_box(&a->spec, &a->axes, &a->logical, p.first[i], &box);
    xrt__box_copy(&box, (char *)dst, p.stage[i], false);
  }
  xrt__plan_free(c, &p);
  return xrt__restore_error(&err);
}

/* Checks buffers given to xrt_sharded_array_create. */
static xrt_status xrt__check_pieces(xrt__client *c, const xrt_shape *piece,
                                    xrt_buffer *const *bufs, int n) {
  XRT__CHECK_ARG(bufs, "buffers is NULL");
  for (int k = 0; k < n; k++) {
    xrt_device *dev = xrt_buffer_device(bufs[k]);
    xrt__device *d = xrt__device_get(dev);
    if (!dev || !d || d->client != c)
      return xrt__fail(XRT_INVALID_ARGUMENT, "buffers[%d] is not a live buffer"
                       " of this client", k);
    xrt_status s = xrt__piece_buffer_check(piece, bufs, k);
    if (s) return s;
  }
  return XRT_OK;
}

xrt_status xrt_sharded_array_create(xrt_client *client,
                                    const xrt_shape *logical,
                                    const xrt_sharding_spec *spec,
                                    xrt_buffer *const *buffers,
                                    int num_buffers,
                                    xrt_sharded_array **out_array) {
  xrt__client *c = NULL;
  xrt__spec_axes ax;
  int64_t n;
  xrt_status s = xrt__sharded_start(__func__, client, logical, spec,
                                    out_array, &c, &ax, &n);
  if (s || (s = xrt__spec_count_check(n, num_buffers, "buffers"))) return s;
  xrt_shape piece = xrt__spec_piece_shape(spec, logical);
  if ((s = xrt__check_pieces(c, &piece, buffers, num_buffers))) return s;
  xrt__sharded *a;
  if ((s = xrt__sharded_new(c, logical, spec, &ax, buffers, num_buffers, &a)))
    return s;
  *out_array = (xrt_sharded_array *)a->handle;
  return XRT_OK;
}

xrt_status xrt_sharded_array_release(xrt_sharded_array *array) {
  if (!array) return XRT_OK;
  xrt__sharded *a = xrt__sharded_get(array);
  XRT__CHECK_ARG(a, "invalid or already released sharded array");
  xrt__sharded_free(a, true);
  return XRT_OK;
}

int xrt_sharded_array_num_shards(const xrt_sharded_array *array) {
  xrt__sharded *a = xrt__sharded_get(array);
  return a ? a->n : -1;
}

xrt_buffer *xrt_sharded_array_shard(const xrt_sharded_array *array,
                                    int index) {
  xrt__sharded *a = xrt__sharded_get(array);
  if (!a) {
    xrt__fail(XRT_INVALID_ARGUMENT, "xrt_sharded_array_shard: invalid or "
              "released sharded array");
    return NULL;
  }
  if (index < 0 || index >= a->n) {
    xrt__fail(XRT_OUT_OF_RANGE, "shard %d is outside 0..%d", index, a->n - 1);
    return NULL;
  }
  if (!a->bufs[index]) xrt__mp_not_held(a, index); /* another process's */
  return a->bufs[index];
}

xrt_status xrt_sharded_array_shape(const xrt_sharded_array *array,
                                   xrt_shape *out) {
  xrt__sharded *a = xrt__sharded_get(array);
  XRT__CHECK_ARG(a, "invalid or released sharded array");
  XRT__CHECK_ARG(out, "out is NULL");
  *out = a->logical;
  return XRT_OK;
}

xrt_status xrt_sharded_array_spec(const xrt_sharded_array *array,
                                  xrt_sharding_spec *out) {
  xrt__sharded *a = xrt__sharded_get(array);
  XRT__CHECK_ARG(a, "invalid or released sharded array");
  XRT__CHECK_ARG(out, "out is NULL");
  *out = a->spec;
  return XRT_OK;
}

/* ---- execute over sharded arrays ---- */

/* pmap's out_axes=0: a new leading dimension Unstacked over n devices. */
static void xrt__default_out_spec(int rank, int n, xrt_sharding_spec *spec) {
  xrt_sharding_spec_init(spec, rank + 1);
  spec->dims[0].kind = XRT_DIM_UNSTACKED;
  spec->dims[0].size = n;
  spec->num_mesh_dims = 1;
  spec->mesh[0].kind = XRT_MESH_SHARDED_AXIS;
  spec->mesh[0].axis = 0;
}

/* The devices every argument spans, checked to be the same list. */
XRT__PRIVATE xrt_status xrt__sharded_args(xrt_sharded_array *const *args,
                                    int num_args, xrt__sharded **out) {
  XRT__CHECK_ARG(args || num_args == 0, "args is NULL");
  for (int i = 0; i < num_args; i++) {
    out[i] = xrt__sharded_get(args[i]);
    if (!out[i])
      return xrt__fail(XRT_INVALID_ARGUMENT, "argument %d is not a live "
                       "sharded array", i);
    if (out[i]->client != out[0]->client)
      return xrt__fail(XRT_INVALID_ARGUMENT, "argument %d belongs to another "
                       "client than argument 0", i);
    if (out[i]->n != out[0]->n)
      return xrt__fail(XRT_INVALID_ARGUMENT, "argument %d spans %d devices, "
                       "argument 0 spans %d", i, out[i]->n, out[0]->n);
    for (int k = 0; k < out[i]->n; k++)
      if (out[i]->devices[k] != out[0]->devices[k])
        return xrt__fail(XRT_INVALID_ARGUMENT, "argument %d has shard %d on "
                         "device %d, argument 0 on device %d", i, k,
                         xrt_device_global_id(out[i]->devices[k]),
                         xrt_device_global_id(out[0]->devices[k]));
  }
  return XRT_OK;
}

/* Output j's spec and logical shape, checked against the per-device
 * output shape of the executable. */
XRT__PRIVATE xrt_status xrt__output_spec(xrt_executable *exe,
                                   const xrt_execute_options *o, int j, int n,
                                   xrt_sharding_spec *spec, xrt_shape *logical,
                                   xrt__spec_axes *ax) {
  xrt_shape piece;
  xrt_status s = xrt_executable_output_shape(exe, j, &piece);
  if (s) return s;
  if (o && o->output_specs && o->output_specs[j]) *spec = *o->output_specs[j];
  else xrt__default_out_spec(piece.rank, n, spec);
  int64_t devices;
  if ((s = xrt_sharding_spec_logical_shape(spec, &piece, logical)) ||
      (s = xrt__spec_check(spec, logical, ax, &devices))) {
    xrt__saved_error err = {XRT_OK, ""};
    xrt__save_error(&err, s);
    return xrt__fail(s, "output %d: %s", j, err.message);
  }
  if (devices != n)
    return xrt__fail(XRT_INVALID_ARGUMENT, "output %d: the sharding spec spans"
                     " %" PRId64 " devices, the execution runs on %d", j,
                     devices, n);
  return XRT_OK;
}

/* Scratch of one xrt_execute_sharded call. */
typedef struct xrt__sharded_call {
  xrt__sharded **args;
  xrt_sharding_spec *specs;
  xrt_shape *logical;
  xrt__spec_axes *axes;
  xrt_buffer **in, **out;          /* [n][num_args], [n][num_outputs] */
  xrt_buffer ***in_rows, ***out_rows; /* [n]: one row per device */
  xrt_device **devices;
} xrt__sharded_call;

static void xrt__call_free(xrt__client *c, xrt__sharded_call *k) {
  xrt__free(&c->allocator, k->args);
  xrt__free(&c->allocator, k->specs);
  xrt__free(&c->allocator, k->logical);
  xrt__free(&c->allocator, k->axes);
  xrt__free(&c->allocator, k->in);
  xrt__free(&c->allocator, k->out);
  xrt__free(&c->allocator, k->in_rows);
  xrt__free(&c->allocator, k->out_rows);
  xrt__free(&c->allocator, k->devices);
}

static xrt_status xrt__call_alloc(xrt__client *c, xrt__sharded_call *k, int n,
                                  int num_args, int num_outputs) {
  size_t na = (size_t)(num_args ? num_args : 1);
  size_t no = (size_t)(num_outputs ? num_outputs : 1);
  k->specs = (xrt_sharding_spec *)xrt__calloc(&c->allocator, no,
                                              sizeof *k->specs);
  k->logical = (xrt_shape *)xrt__calloc(&c->allocator, no, sizeof *k->logical);
  k->axes = (xrt__spec_axes *)xrt__calloc(&c->allocator, no, sizeof *k->axes);
  k->in = (xrt_buffer **)xrt__calloc(&c->allocator, (size_t)n * na,
                                     sizeof *k->in);
  k->out = (xrt_buffer **)xrt__calloc(&c->allocator, (size_t)n * no,
                                      sizeof *k->out);
  k->in_rows = (xrt_buffer ***)xrt__calloc(&c->allocator, (size_t)n,
                                           sizeof *k->in_rows);
  k->out_rows = (xrt_buffer ***)xrt__calloc(&c->allocator, (size_t)n,
                                            sizeof *k->out_rows);
  k->devices = (xrt_device **)xrt__calloc(&c->allocator, (size_t)n,
                                          sizeof *k->devices);
  if (!k->specs || !k->logical || !k->axes || !k->in || !k->out ||
      !k->in_rows || !k->out_rows || !k->devices)
    return xrt__nomem("a sharded execution's argument tables");
  return XRT_OK;
}

/* Launches the executable over the argument shards. */
static xrt_status xrt__sharded_launch(xrt_executable *exe,
                                      const xrt_execute_options *options,
                                      xrt__sharded_call *k, int n,
                                      int num_args, int num_outputs,
                                      xrt_event **out_done) {
  for (int d = 0; d < n; d++) {
    k->in_rows[d] = k->in + (size_t)d * (size_t)num_args;
    k->out_rows[d] = k->out + (size_t)d * (size_t)num_outputs;
    for (int i = 0; i < num_args; i++) k->in_rows[d][i] = k->args[i]->bufs[d];
  }
  xrt_execute_options o;
  xrt_execute_options_init(&o);
  if (options) o = *options;
  o.devices = k->devices;
  if (xrt__executable_get(exe)->client->mp) /* 13a: the assignment's */
    o.devices = NULL;
  o.output_specs = NULL;
  return xrt_execute_multi(exe, (xrt_buffer *const *const *)k->in_rows, n,
                           num_args, k->out_rows, num_outputs, &o, out_done);
}

/* The devices of the launch: the arguments', which options->devices (if
 * given) must repeat; with no argument, options->devices or the
 * executable's assignment. */
static xrt_status xrt__launch_devices(xrt_executable *exe,
                                      const xrt_execute_options *o,
                                      xrt__sharded_call *k, int num_args,
                                      int n) {
  for (int d = 0; d < n; d++) {
    xrt_device *want = num_args ? k->args[0]->devices[d]
                       : o && o->devices ? o->devices[d]
                                         : xrt_executable_device(exe, d);
    if (num_args && o && o->devices && o->devices[d] != want)
      return xrt__fail(XRT_INVALID_ARGUMENT, "options->devices[%d] is device "
                       "%d, but the arguments' shard %d is on device %d", d,
                       xrt_device_global_id(o->devices[d]), d,
                       xrt_device_global_id(want));
    if (!want)
      return xrt__fail(XRT_INVALID_ARGUMENT, "no device for logical id %d", d);
    k->devices[d] = want;
  }
  return XRT_OK;
}

/* Checks the arguments and output specs of an xrt_execute_sharded call. */
static xrt_status xrt__sharded_prepare(xrt_executable *exe, xrt__client *c,
                                       xrt_sharded_array *const *args,
                                       int num_args, int num_outputs,
                                       const xrt_execute_options *o,
                                       xrt__sharded_call *k, int n) {
  xrt_status s = xrt__sharded_args(args, num_args, k->args);
  if (s) return s;
  if (num_args && k->args[0]->client != c)
    return xrt__fail(XRT_INVALID_ARGUMENT, "the arguments belong to another "
                     "client than the executable");
  if (num_args && k->args[0]->n != n)
    return xrt__fail(XRT_INVALID_ARGUMENT, "the arguments span %d devices, the "
                     "executable runs on %d (%d replica(s) x %d partition(s))",
                     k->args[0]->n, n, xrt_executable_num_replicas(exe),
                     xrt_executable_num_partitions(exe));
  if ((s = xrt__launch_devices(exe, o, k, num_args, n))) return s;
  if (c->mp && (s = xrt__mp_launch_check(
                    exe, (const xrt_device *const *)k->devices, n)))
    return s;
  for (int j = 0; j < num_outputs; j++)
    if ((s = xrt__output_spec(exe, o, j, n, &k->specs[j], &k->logical[j],
                              &k->axes[j])))
      return s;
  return XRT_OK;
}

/* Wraps the launch's per-device outputs as sharded arrays; on failure
 * every output buffer is released. */
static xrt_status xrt__sharded_wrap(xrt__client *c, xrt__sharded_call *k,
                                    int n, int num_outputs,
                                    xrt_sharded_array **outputs) {
  xrt_status s = XRT_OK;
  xrt_buffer **col = (xrt_buffer **)xrt__calloc(&c->allocator, (size_t)n,
                                                sizeof *col);
  if (!col) s = xrt__nomem("a sharded execution's output column");
  int j = 0;
  for (; !s && j < num_outputs; j++) {
    for (int d = 0; d < n; d++)
      col[d] = k->out[(size_t)d * (size_t)num_outputs + (size_t)j];
    xrt__sharded *a;
    s = xrt__sharded_new(c, &k->logical[j], &k->specs[j], &k->axes[j], col, n,
                         &a);
    for (int d = 0; !s && d < n; d++) /* another process's pieces */
      if (!a->devices[d]) a->devices[d] = k->devices[d];
    if (!s) outputs[j] = (xrt_sharded_array *)a->handle;
  }
  xrt__free(&c->allocator, col);
  if (!s) return XRT_OK;
  xrt__saved_error err = {XRT_OK, ""};
  xrt__save_error(&err, s);
  for (int i = 0; i < num_outputs; i++) {
    if (i < j - 1) {
      xrt_sharded_array_release(outputs[i]);
      outputs[i] = NULL;
      continue;
    }
    for (int d = 0; d < n; d++)
      xrt_buffer_release(k->out[(size_t)d * (size_t)num_outputs + (size_t)i]);
  }
  return xrt__restore_error(&err);
}

xrt_status xrt_execute_sharded(xrt_executable *executable,
                               xrt_sharded_array *const *args, int num_args,
                               xrt_sharded_array **outputs, int num_outputs,
                               const xrt_execute_options *options,
                               xrt_event **out_done) {
  if (out_done) *out_done = NULL;
  XRT__CHECK_ARG(outputs || num_outputs == 0, "outputs is NULL");
  XRT__CHECK_ARG(num_args >= 0 && num_outputs >= 0, "negative count");
  for (int j = 0; j < num_outputs; j++) outputs[j] = NULL;
  xrt__executable *e = xrt__executable_get(executable);
  XRT__CHECK_ARG(e, "invalid or released executable");
  int want_outputs = xrt_executable_num_outputs(executable);
  if (num_outputs != want_outputs)
    return xrt__fail(XRT_INVALID_ARGUMENT, "@%s returns %d result(s), room "
                     "for %d was given", xrt_executable_name(executable),
                     want_outputs, num_outputs);
  int n = xrt_executable_num_replicas(executable) *
          xrt_executable_num_partitions(executable);
  if (n < 1)
    return xrt__fail(XRT_INVALID_ARGUMENT, "executable runs on no device");
  xrt__client *c = e->client;
  xrt__sharded_call k;
  memset(&k, 0, sizeof k);
  k.args = (xrt__sharded **)xrt__calloc(
      &c->allocator, (size_t)(num_args ? num_args : 1), sizeof *k.args);
  xrt_status s = k.args ? xrt__call_alloc(c, &k, n, num_args, num_outputs)
                        : xrt__nomem("a sharded execution's arguments");
  if (!s) s = xrt__sharded_prepare(executable, c, args, num_args, num_outputs,
                                   options, &k, n);
  xrt_event *done = NULL;
  if (!s) s = xrt__sharded_launch(executable, options, &k, n, num_args,
                                  num_outputs, out_done ? &done : NULL);
  if (!s) s = xrt__sharded_wrap(c, &k, n, num_outputs, outputs);
  if (s && done) {
    xrt__saved_error err = {XRT_OK, ""};
    xrt__save_error(&err, s);
    xrt_event_release(done);
    done = NULL;
    s = xrt__restore_error(&err);
  }
  xrt__call_free(c, &k);
  if (out_done) *out_done = done;
  return s;
}
