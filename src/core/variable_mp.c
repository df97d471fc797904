/*
 * src/core/variable_mp.c - variables across processes: create, reshard, execute.
 * Part of the core of xrt; MIT licensed, see LICENSE.
 */
#include "internal.h"

/* ---- variables across processes (issue #11) ----
 *
 * Included once in section 13c of xrt.c.  A variable of a multi-process
 * client keeps devices[k] = piece k's global device (an XRT__H_RDEVICE
 * handle on another process) and bufs[k] = NULL for the pieces other
 * processes hold.  Every call here is made by every process with the same
 * arguments (see "Objects that span processes" in xrt.h).
 *
 * Agreement: a fixed-size vote per process (status, message, a digest of
 * the call's arguments), all-gathered on a core tag; the call goes on only
 * if every process succeeded and the digests match, else every process
 * returns the first failing process's error, naming it.
 *
 * Reshard across processes: (1) check, plan (section 13c's planner, with
 * sources re-picked to prefer this process), allocate the new local
 * pieces and the host staging, vote; (2) download the boxes other
 * processes need, one exchange message per peer (zeros when a download
 * failed, so nobody waits), write the received boxes into the new pieces,
 * then the device-to-device copies inside this process; (3) vote again:
 * all commit, or all drop their new pieces. */

#define XRT__MPV_STACK 8 /* votes (512 bytes each) kept on the stack */

/* One process's vote. */
typedef struct xrt__mpv_vote {
  int32_t code;
  int32_t work;    /* reshard: this process has something to move */
  uint64_t digest; /* the arguments as this process sees them */
  char message[496];
} xrt__mpv_vote;

/* All-gathers the votes of step what; *any_work (may be NULL) receives
 * whether any process has work.  The local error (local != OK) is the
 * thread's last error on entry. */
XRT__PRIVATE xrt_status xrt__mpv_agree(xrt__client *c, xrt_status local,
                                 uint64_t digest, int32_t work,
                                 int32_t *any_work, const char *what) {
  struct xrt__mp *mp = c->mp;
  xrt__mpv_vote mine;
  memset(&mine, 0, sizeof mine);
  mine.code = (int32_t)local;
  mine.work = work;
  mine.digest = digest;
  if (local) { /* truncated to the record */
    const char *e = xrt_last_error();
    size_t len = strlen(e);
    if (len >= sizeof mine.message) len = sizeof mine.message - 1;
    memcpy(mine.message, e, len);
  }
  uint64_t tag = xrt__mp_next_tag(c); /* taken even if the table fails */
  /* Up to XRT__MPV_STACK processes the table is on the stack, so that a
   * process out of host memory still votes (and says so) instead of
   * leaving the others to time out. */
  xrt__mpv_vote stack[XRT__MPV_STACK];
  xrt__mpv_vote *all = mp->nproc <= XRT__MPV_STACK
                           ? stack
                           : (xrt__mpv_vote *)xrt__calloc(
                                 &c->allocator, (size_t)mp->nproc, sizeof *all);
  if (!all) return xrt__nomem("the votes of the processes");
  xrt_status s = xrt__mp_allgather(c, tag, &mine, all, sizeof mine, what);
  for (int p = 0; !s && p < mp->nproc; p++)
    if (all[p].code)
      s = xrt__fail((xrt_status)all[p].code, "%s: process %d failed: %.*s",
                    what, p, (int)sizeof all[p].message - 1, all[p].message);
  for (int p = 1; !s && p < mp->nproc; p++)
    if (all[p].digest != all[0].digest)
      s = xrt__fail(XRT_INVALID_ARGUMENT, "%s: process %d was called with "
                    "other arguments than process 0 (every process must "
                    "make the same call)", what, p);
  int32_t w = 0;
  for (int p = 0; !s && p < mp->nproc; p++) w |= all[p].work;
  if (any_work) *any_work = w;
  if (all != stack) xrt__free(&c->allocator, all);
  return s;
}

static int xrt__mpv_proc(xrt_device *d) { return xrt_device_process_index(d); }

/* Copies the box (start, ext) of a dense host array of dims src_dims into
 * (dst_start of) a dense host array of dims dst_dims. */
static void xrt__mpv_host_box(int rank, size_t elem, const void *src,
                              const int64_t *src_dims,
                              const int64_t *src_start, void *dst,
                              const int64_t *dst_dims,
                              const int64_t *dst_start, const int64_t *ext) {
  xrt_plugin_copy_region_args a;
  memset(&a, 0, sizeof a);
  a.src = (void *)(uintptr_t)src;
  a.src_dims = src_dims;
  a.src_start = src_start;
  a.dst = dst;
  a.dst_dims = dst_dims;
  a.dst_start = dst_start;
  a.extent = ext;
  a.rank = rank;
  a.elem_bytes = elem;
  xrt__region_host(&a);
}

static size_t xrt__mpv_box_bytes(const xrt__var *v, const xrt__rs_copy *cp) {
  size_t b = xrt_dtype_size(v->logical.dtype);
  for (int d = 0; d < v->logical.rank; d++) b *= (size_t)cp->ext[d];
  return b;
}

/* ---- create ---- */

/* Uploads piece k (of a checked format) of a host array to its device. */
XRT__PRIVATE xrt_status xrt__mpv_upload(xrt__client *c, const xrt_shape *logical,
                                  const xrt__vformat *f, const char *host,
                                  int k, xrt_buffer **out) {
  xrt__box box;
  xrt__piece_box(&f->spec, &f->axes, logical, k, &box);
  size_t bytes = xrt_shape_bytes(&f->piece);
  char *stage = (char *)xrt__alloc(&c->allocator, bytes ? bytes : 1);
  if (!stage) return xrt__nomem("staging a variable's piece");
  if (host) xrt__box_copy(&box, (char *)(uintptr_t)host, stage, true);
  xrt_status s = xrt_buffer_from_host((xrt_client *)c->handle, f->devices[k],
                                      &f->piece, stage, out);
  xrt__free(&c->allocator, stage);
  return s;
}

/* xrt_variable_create on a multi-process client: this process's pieces. */
XRT__PRIVATE xrt_status xrt__mpv_create(xrt__client *c, const char *name,
                                  const xrt_shape *logical, const void *data,
                                  const xrt__vformat *f,
                                  xrt_variable **out_variable) {
  XRT__CHECK_ARG(data || xrt_shape_bytes(logical) == 0, "data is NULL");
  xrt_buffer **bufs = (xrt_buffer **)xrt__calloc(&c->allocator, (size_t)f->n,
                                                 sizeof *bufs);
  if (!bufs) return xrt__nomem("a variable's piece list");
  xrt_status s = XRT_OK;
  for (int k = 0; k < f->n && !s; k++)
    if (xrt_device_is_addressable(f->devices[k]) == 1)
      s = xrt__mpv_upload(c, logical, f, (const char *)data, k, &bufs[k]);
  xrt__var *v = NULL;
  if (!s) s = xrt__var_new(c, name, logical, f, bufs, &v);
  if (s) {
    xrt__saved_error err = {XRT_OK, ""};
    xrt__save_error(&err, s);
    for (int k = 0; k < f->n; k++) xrt_buffer_release(bufs[k]);
    s = xrt__restore_error(&err);
  } else {
    *out_variable = (xrt_variable *)v->handle;
  }
  xrt__free(&c->allocator, bufs);
  return s;
}

/* ---- reshard ---- */

/* Re-picks each planned copy's source replica: one on the destination
 * device, else one in the destination's process, else the planner's
 * pick.  Every process computes the same. */
static void xrt__mpv_pick_sources(xrt__rs_var *r) {
  xrt__var *v = r->v;
  int64_t start[XRT_MAX_RANK], id, other;
  for (int k = 0; k < r->f.n; k++) {
    xrt__rs_piece *p = &r->pieces[k];
    int pd = xrt__mpv_proc(r->f.devices[k]);
    for (int c = 0; c < p->ncopies; c++) {
      int j0 = p->copies[c].src, best = j0;
      xrt__spec_locate(&v->spec, &v->axes, &v->logical, j0, start, &id);
      if (v->devices[j0] == r->f.devices[k]) continue;
      for (int j = 0; j < v->n; j++) {
        xrt__spec_locate(&v->spec, &v->axes, &v->logical, j, start, &other);
        if (other != id) continue;
        if (v->devices[j] == r->f.devices[k]) { best = j; break; }
        if (xrt__mpv_proc(v->devices[j]) == pd &&
            xrt__mpv_proc(v->devices[best]) != pd)
          best = j;
      }
      p->copies[c].src = best;
    }
  }
}

/* One planned box copy of a new piece that is not kept: copy c of new
 * piece k of variable i, from process `from` to process `to`.  Every
 * process lists the same moves in the same order. */
typedef struct xrt__mpv_move {
  int i, k, c, from, to;
  size_t bytes;
} xrt__mpv_move;

/* Scratch of one reshard across processes. */
typedef struct xrt__mpv_rs {
  xrt__client *c;
  int nproc, me;
  size_t *send_bytes, *recv_bytes; /* [nproc] */
  char **send, **recv;             /* [nproc] */
  char ***stage;                   /* [nv][f.n]: new pieces built on host */
  char ***old;                     /* [nv][v->n]: old pieces downloaded */
  xrt__mpv_move *moves;
  int nmoves;
} xrt__mpv_rs;

static void xrt__mpv_rs_free(xrt__mpv_rs *x, xrt__rs_var *rs, int nv) {
  const xrt_allocator *a = &x->c->allocator;
  for (int p = 0; p < x->nproc; p++) {
    if (x->send) xrt__free(a, x->send[p]);
    if (x->recv) xrt__free(a, x->recv[p]);
  }
  for (int i = 0; i < nv; i++) {
    for (int k = 0; x->stage && x->stage[i] && k < rs[i].f.n; k++)
      xrt__free(a, x->stage[i][k]);
    for (int k = 0; x->old && x->old[i] && k < rs[i].v->n; k++)
      xrt__free(a, x->old[i][k]);
    if (x->stage) xrt__free(a, x->stage[i]);
    if (x->old) xrt__free(a, x->old[i]);
  }
  xrt__free(a, x->send_bytes);
  xrt__free(a, x->recv_bytes);
  xrt__free(a, x->send);
  xrt__free(a, x->recv);
  xrt__free(a, x->stage);
  xrt__free(a, x->old);
  xrt__free(a, x->moves);
}

/* Lists the moves of the planned call. */
static xrt_status xrt__mpv_list_moves(xrt__mpv_rs *x, xrt__rs_var *rs,
                                      int nv) {
  int n = 0;
  for (int pass = 0; pass < 2; pass++) {
    n = 0;
    for (int i = 0; i < nv; i++)
      for (int k = 0; !rs[i].noop && k < rs[i].f.n; k++)
        for (int c = 0; rs[i].pieces[k].keep < 0 &&
                        c < rs[i].pieces[k].ncopies; c++, n++) {
          if (!pass) continue;
          const xrt__rs_copy *cp = &rs[i].pieces[k].copies[c];
          x->moves[n] = (xrt__mpv_move){
              i, k, c, xrt__mpv_proc(rs[i].v->devices[cp->src]),
              xrt__mpv_proc(rs[i].f.devices[k]),
              xrt__mpv_box_bytes(rs[i].v, cp)};
        }
    if (pass) break;
    x->moves = (xrt__mpv_move *)xrt__calloc(&x->c->allocator,
                                            (size_t)(n ? n : 1),
                                            sizeof *x->moves);
    if (!x->moves) return xrt__nomem("a reshard's move list");
  }
  x->nmoves = n;
  return XRT_OK;
}

/* Sizes the messages and allocates the host memory of the move. */
static xrt_status xrt__mpv_rs_alloc_host(xrt__mpv_rs *x, xrt__rs_var *rs,
                                         int nv) {
  const xrt_allocator *a = &x->c->allocator;
  size_t np = (size_t)x->nproc;
  x->send_bytes = (size_t *)xrt__calloc(a, np, sizeof(size_t));
  x->recv_bytes = (size_t *)xrt__calloc(a, np, sizeof(size_t));
  x->send = (char **)xrt__calloc(a, np, sizeof(char *));
  x->recv = (char **)xrt__calloc(a, np, sizeof(char *));
  x->stage = (char ***)xrt__calloc(a, (size_t)nv, sizeof(char **));
  x->old = (char ***)xrt__calloc(a, (size_t)nv, sizeof(char **));
  if (!x->send_bytes || !x->recv_bytes || !x->send || !x->recv ||
      !x->stage || !x->old)
    return xrt__nomem("a reshard's exchange tables");
  for (int i = 0; i < nv; i++) {
    if (rs[i].noop) continue;
    x->stage[i] = (char **)xrt__calloc(a, (size_t)rs[i].f.n, sizeof(char *));
    x->old[i] = (char **)xrt__calloc(a, (size_t)rs[i].v->n, sizeof(char *));
    if (!x->stage[i] || !x->old[i])
      return xrt__nomem("a reshard's exchange tables");
  }
  xrt_status s = xrt__mpv_list_moves(x, rs, nv);
  if (s) return s;
  for (int m = 0; m < x->nmoves; m++) {
    const xrt__mpv_move *w = &x->moves[m];
    if (w->from == w->to) continue;
    if (w->from == x->me) x->send_bytes[w->to] += w->bytes;
    if (w->to != x->me) continue;
    x->recv_bytes[w->from] += w->bytes;
    if (!x->stage[w->i][w->k]) {
      size_t pb = xrt_shape_bytes(&rs[w->i].f.piece);
      x->stage[w->i][w->k] = (char *)xrt__calloc(a, pb ? pb : 1, 1);
      if (!x->stage[w->i][w->k])
        return xrt__nomem("staging a reshard's piece");
    }
  }
  for (int p = 0; p < x->nproc; p++) {
    if (x->send_bytes[p] &&
        !(x->send[p] = (char *)xrt__calloc(a, x->send_bytes[p], 1)))
      return xrt__nomem("a reshard's message to another process");
    if (x->recv_bytes[p] &&
        !(x->recv[p] = (char *)xrt__calloc(a, x->recv_bytes[p], 1)))
      return xrt__nomem("a reshard's message from another process");
  }
  return XRT_OK;
}

/* Allocates the new pieces on this process's devices. */
static xrt_status xrt__mpv_rs_alloc_dev(xrt__rs_var *rs, int nv) {
  for (int i = 0; i < nv; i++) {
    xrt__rs_var *r = &rs[i];
    if (r->noop) continue;
    size_t bytes = xrt_shape_bytes(&r->f.piece);
    for (int k = 0; k < r->f.n; k++) {
      xrt__device *d = xrt__device_get(r->f.devices[k]);
      if (r->pieces[k].keep >= 0 || !d) continue;
      xrt__buffer *b;
      xrt_status s = xrt__buffer_new(r->v->client, d->index, &r->f.piece,
                                     bytes, NULL, &b);
      if (s) return s;
      r->pieces[k].buf = (xrt_buffer *)b->handle;
    }
  }
  return XRT_OK;
}

/* Step 1, local: plan, allocate, wait for the old pieces.  *work: this
 * process moves anything. */
static xrt_status xrt__mpv_rs_prepare(xrt__mpv_rs *x, xrt__rs_var *rs,
                                      int nv, int32_t *work) {
  xrt_status s = XRT_OK;
  for (int i = 0; i < nv && !s; i++) {
    if (rs[i].noop) continue;
    if (!(s = xrt__rs_plan(&rs[i]))) xrt__mpv_pick_sources(&rs[i]);
    if (!s) s = xrt__var_wait_ready(rs[i].v);
    *work = 1;
  }
  if (!s && *work) s = xrt__mpv_rs_alloc_host(x, rs, nv);
  if (!s && *work) s = xrt__mpv_rs_alloc_dev(rs, nv);
  return s;
}

/* The host copy of old piece j of variable i (downloaded once). */
static xrt_status xrt__mpv_old_piece(xrt__mpv_rs *x, xrt__rs_var *r, int i,
                                     int j, const char **out) {
  if (!x->old[i][j]) {
    size_t b = xrt_shape_bytes(&r->v->piece);
    char *h = (char *)xrt__alloc(&x->c->allocator, b ? b : 1);
    if (!h) return xrt__nomem("a reshard's host copy of a piece");
    xrt_status s = xrt_buffer_to_host(r->v->bufs[j], h, b);
    if (s) {
      xrt__free(&x->c->allocator, h);
      return s;
    }
    x->old[i][j] = h;
  }
  *out = x->old[i][j];
  return XRT_OK;
}

/* Step 2a: packs every box this process sends (failures leave zeros). */
static xrt_status xrt__mpv_rs_pack(xrt__mpv_rs *x, xrt__rs_var *rs) {
  xrt__saved_error err = {XRT_OK, ""};
  size_t *at = (size_t *)xrt__calloc(&x->c->allocator, (size_t)x->nproc,
                                     sizeof(size_t));
  if (!at) return xrt__nomem("a reshard's message offsets");
  int64_t zero[XRT_MAX_RANK] = {0};
  for (int m = 0; m < x->nmoves; m++) {
    const xrt__mpv_move *w = &x->moves[m];
    if (w->from != x->me || w->to == x->me) continue;
    xrt__rs_var *r = &rs[w->i];
    const xrt__rs_copy *cp = &r->pieces[w->k].copies[w->c];
    const char *src = NULL;
    if (!err.code)
      xrt__save_error(&err, xrt__mpv_old_piece(x, r, w->i, cp->src, &src));
    if (src)
      xrt__mpv_host_box(r->v->logical.rank, xrt_dtype_size(r->v->logical.dtype),
                        src, r->old_ext, cp->src_start,
                        x->send[w->to] + at[w->to], cp->ext, zero, cp->ext);
    at[w->to] += w->bytes;
  }
  xrt__free(&x->c->allocator, at);
  return xrt__restore_error(&err);
}

/* Step 2b: the exchange, one message per peer each way. */
static xrt_status xrt__mpv_rs_exchange(xrt__mpv_rs *x) {
  const xrt_allocator *a = &x->c->allocator;
  uint64_t tag = xrt__mp_next_tag(x->c);
  xrt_transport_msg *m = (xrt_transport_msg *)xrt__calloc(
      a, 2 * (size_t)x->nproc, sizeof *m);
  if (!m) return xrt__nomem("a reshard's messages");
  int ns = 0, nr = 0;
  for (int p = 0; p < x->nproc; p++) {
    if (x->send_bytes[p])
      m[ns++] = (xrt_transport_msg){p, x->send[p], x->send_bytes[p]};
    if (x->recv_bytes[p])
      m[x->nproc + nr++] = (xrt_transport_msg){p, x->recv[p], x->recv_bytes[p]};
  }
  xrt_status s = ns || nr ? xrt__mp_exchange(x->c, tag, m, ns, m + x->nproc,
                                             nr, "xrt_variables_reshard: "
                                             "moving pieces between processes")
                          : XRT_OK;
  xrt__free(a, m);
  return s;
}

/* Writes a host-built new piece into its (new, unshared) buffer. */
static xrt_status xrt__mpv_write(xrt__client *c, xrt_buffer *h,
                                 const void *host) {
  xrt__buffer *b = (xrt__buffer *)xrt__hget(h, XRT__H_BUFFER);
  if (!b) return xrt__fail(XRT_INTERNAL, "a new piece is gone");
  xrt_plugin_error err = {{0}};
  XRT__STAT(c, H2D, 1);
  xrt_status s = c->api->buffer_write(c->pc, b->device, b->mem, host,
                                      b->bytes, &err);
  return s ? xrt__fail_plugin(s, c->api->name, &err) : XRT_OK;
}

/* Step 2c: the received boxes into the staged new pieces, those written to
 * their devices, then the copies inside this process. */
static xrt_status xrt__mpv_rs_fill(xrt__mpv_rs *x, xrt__rs_var *rs, int nv) {
  size_t *at = (size_t *)xrt__calloc(&x->c->allocator, (size_t)x->nproc,
                                     sizeof(size_t));
  if (!at) return xrt__nomem("a reshard's message offsets");
  int64_t zero[XRT_MAX_RANK] = {0};
  for (int m = 0; m < x->nmoves; m++) {
    const xrt__mpv_move *w = &x->moves[m];
    if (w->to != x->me || w->from == x->me) continue;
    xrt__rs_var *r = &rs[w->i];
    const xrt__rs_copy *cp = &r->pieces[w->k].copies[w->c];
    xrt__mpv_host_box(r->v->logical.rank, xrt_dtype_size(r->v->logical.dtype),
                      x->recv[w->from] + at[w->from], cp->ext, zero,
                      x->stage[w->i][w->k], r->new_ext, cp->dst_start,
                      cp->ext);
    at[w->from] += w->bytes;
  }
  xrt__free(&x->c->allocator, at);
  xrt_status s = XRT_OK;
  for (int i = 0; i < nv && !s; i++)
    for (int k = 0; !rs[i].noop && k < rs[i].f.n && !s; k++)
      if (x->stage[i][k]) s = xrt__mpv_write(x->c, rs[i].pieces[k].buf,
                                             x->stage[i][k]);
  for (int m = 0; !s && m < x->nmoves; m++) {
    const xrt__mpv_move *w = &x->moves[m];
    if (w->from != x->me || w->to != x->me) continue;
    xrt__rs_var *r = &rs[w->i];
    const xrt__rs_copy *cp = &r->pieces[w->k].copies[w->c];
    xrt__buffer *src = (xrt__buffer *)xrt__hget(r->v->bufs[cp->src],
                                                XRT__H_BUFFER);
    xrt__buffer *dst = (xrt__buffer *)xrt__hget(r->pieces[w->k].buf,
                                                XRT__H_BUFFER);
    s = src && dst ? xrt__region_copy(x->c, src, dst, r->v->logical.rank,
                                      r->old_ext, cp->src_start, r->new_ext,
                                      cp->dst_start, cp->ext)
                   : xrt__fail(XRT_INTERNAL, "a reshard's piece is gone");
  }
  return s;
}

/* A digest of the call's variables and formats (old and new keys). */
static uint64_t xrt__mpv_rs_digest(const xrt__rs_var *rs, int nv) {
  uint64_t h = xrt__key_mix(0xcbf29ce484222325ull, (uint64_t)nv);
  for (int i = 0; i < nv; i++) {
    h = xrt__key_mix(h, rs[i].v->key);
    h = xrt__key_mix(h, rs[i].f.key);
  }
  return h;
}

/* xrt_variables_reshard's locked part on a multi-process client; checked
 * is the status of the local checks (which every process must hear of). */
XRT__PRIVATE xrt_status xrt__mpv_reshard(xrt__rs_var *rs, int nv,
                                   const xrt_reshard_options *options,
                                   xrt_status checked) {
  XRT__UNUSED(options); /* every move is host-staged across processes */
  xrt__mpv_rs x;
  memset(&x, 0, sizeof x);
  x.c = rs[0].v->client;
  x.nproc = x.c->mp->nproc;
  x.me = x.c->mp->me;
  int32_t work = 0, any = 0;
  xrt_status s = checked ? checked : xrt__mpv_rs_prepare(&x, rs, nv, &work);
  s = xrt__mpv_agree(x.c, s, checked ? 0 : xrt__mpv_rs_digest(rs, nv), work,
                     &any, "xrt_variables_reshard");
  if (!s && any) {
    xrt__saved_error err = {XRT_OK, ""};
    if (work) xrt__save_error(&err, xrt__mpv_rs_pack(&x, rs));
    xrt_status e = xrt__mpv_rs_exchange(&x);
    if (!e && work && !err.code) e = xrt__mpv_rs_fill(&x, rs, nv);
    xrt__save_error(&err, e);
    /* A failed exchange may have missed peers: still vote, so that the
     * ones that heard everything do not commit alone. */
    if (err.code) xrt__fail(err.code, "%s", err.message);
    s = xrt__mpv_agree(x.c, err.code, 0, 0, NULL, "xrt_variables_reshard");
  }
  xrt__mpv_rs_free(&x, rs, nv); /* before the commit changes v->n */
  if (!s)
    for (int i = 0; i < nv; i++)
      if (!rs[i].noop) xrt__rs_commit(&rs[i]);
  if (s) {
    xrt__saved_error err = {XRT_OK, ""};
    xrt__save_error(&err, s);
    xrt__rs_free_new(rs, nv);
    s = xrt__restore_error(&err);
  }
  return s;
}

/* ---- execution ---- */

/* Piece lists of argument i (a locked variable or a sharded array). */
static xrt_status xrt__mpv_arg(const xrt_variable_arg *arg, xrt__var *v,
                               int i, int *n, xrt_buffer *const **bufs,
                               xrt_device *const **devs) {
  if (v) {
    if (v->dead)
      return xrt__fail(XRT_INVALID_ARGUMENT, "argument %d: variable was "
                       "released", i);
    *n = v->n;
    *bufs = v->bufs;
    *devs = v->devices;
    return XRT_OK;
  }
  xrt__sharded *a = xrt__sharded_get(arg->array);
  if (!a)
    return xrt__fail(XRT_INVALID_ARGUMENT, "argument %d is not a live sharded "
                     "array", i);
  *n = a->n;
  *bufs = a->bufs;
  *devs = a->devices;
  return XRT_OK;
}

/* Scratch of one execution over variables across processes. */
typedef struct xrt__mpv_xv {
  xrt_buffer **in, **out;        /* [n][num_args], [n][num_outputs] */
  xrt_buffer *const **lists;     /* [n] */
  xrt_buffer ***olists;          /* [n] */
  xrt_sharding_spec *specs;      /* [num_outputs] */
  xrt_shape *logical;
  xrt__spec_axes *axes;
} xrt__mpv_xv;

static void xrt__mpv_xv_free(xrt__client *c, xrt__mpv_xv *x) {
  xrt__free(&c->allocator, x->in);
  xrt__free(&c->allocator, x->out);
  xrt__free(&c->allocator, (void *)x->lists);
  xrt__free(&c->allocator, x->olists);
  xrt__free(&c->allocator, x->specs);
  xrt__free(&c->allocator, x->logical);
  xrt__free(&c->allocator, x->axes);
}

/* Fills the launch's lists: the arguments must span the executable's
 * participants, in order. */
static xrt_status xrt__mpv_xv_lists(xrt_executable *exe, xrt__client *c,
                                    const xrt_variable_arg *args, int na,
                                    xrt__xv_call *k, int n, int no,
                                    xrt__mpv_xv *x) {
  size_t sa = (size_t)(na ? na : 1), so = (size_t)(no ? no : 1);
  x->in = (xrt_buffer **)xrt__calloc(&c->allocator, (size_t)n * sa,
                                     sizeof *x->in);
  x->out = (xrt_buffer **)xrt__calloc(&c->allocator, (size_t)n * so,
                                      sizeof *x->out);
  x->lists = (xrt_buffer *const **)xrt__calloc(&c->allocator, (size_t)n,
                                               sizeof *x->lists);
  x->olists = (xrt_buffer ***)xrt__calloc(&c->allocator, (size_t)n,
                                          sizeof *x->olists);
  x->specs = (xrt_sharding_spec *)xrt__calloc(&c->allocator, so,
                                              sizeof *x->specs);
  x->logical = (xrt_shape *)xrt__calloc(&c->allocator, so, sizeof *x->logical);
  x->axes = (xrt__spec_axes *)xrt__calloc(&c->allocator, so, sizeof *x->axes);
  if (!x->in || !x->out || !x->lists || !x->olists || !x->specs ||
      !x->logical || !x->axes)
    return xrt__nomem("an execution's argument tables");
  for (int p = 0; p < n; p++) {
    bool here = xrt_device_is_addressable(xrt_executable_device(exe, p)) == 1;
    x->lists[p] = here ? x->in + (size_t)p * sa : NULL;
    x->olists[p] = here ? x->out + (size_t)p * so : NULL;
  }
  for (int i = 0; i < na; i++) {
    int m = 0;
    xrt_buffer *const *bufs = NULL;
    xrt_device *const *devs = NULL;
    xrt_status s = xrt__mpv_arg(&args[i], k->vars[i], i, &m, &bufs, &devs);
    if (s) return s;
    if (m != n)
      return xrt__fail(XRT_INVALID_ARGUMENT, "argument %d spans %d devices, "
                       "@%s runs on %d", i, m, xrt_executable_name(exe), n);
    for (int p = 0; p < n; p++) {
      int want = xrt_device_global_id(xrt_executable_device(exe, p));
      if (xrt_device_global_id(devs[p]) != want)
        return xrt__fail(XRT_INVALID_ARGUMENT, "argument %d has piece %d on "
                         "global device %d, @%s runs participant %d on global "
                         "device %d", i, p, xrt_device_global_id(devs[p]),
                         xrt_executable_name(exe), p, want);
      if (x->lists[p]) x->in[(size_t)p * sa + (size_t)i] = bufs[p];
    }
  }
  return XRT_OK;
}

/* The output specs: an updated variable's, else the options' or pmap's. */
static xrt_status xrt__mpv_xv_specs(xrt_executable *exe, xrt__xv_call *k,
                                    const int *updates, int no, int n,
                                    const xrt_execute_options *options,
                                    xrt__mpv_xv *x) {
  const xrt_sharding_spec **specs = k->specs;
  xrt_execute_options o;
  xrt_execute_options_init(&o);
  if (options) o = *options;
  for (int j = 0; j < no; j++)
    specs[j] = updates && updates[j] >= 0 ? &k->vars[updates[j]]->spec
               : options && options->output_specs ? options->output_specs[j]
                                                  : NULL;
  o.output_specs = specs;
  for (int j = 0; j < no; j++) {
    xrt_status s = xrt__output_spec(exe, &o, j, n, &x->specs[j],
                                    &x->logical[j], &x->axes[j]);
    if (s) return s;
  }
  return XRT_OK;
}

/* Output j as a sharded array over the executable's global devices. */
static xrt_status xrt__mpv_xv_wrap(xrt_executable *exe, xrt__client *c,
                                   xrt__mpv_xv *x, int j, int n, int no,
                                   xrt_sharded_array **out) {
  xrt_buffer **col = (xrt_buffer **)xrt__calloc(&c->allocator, (size_t)n,
                                                sizeof *col);
  if (!col) return xrt__nomem("an execution's output column");
  for (int p = 0; p < n; p++)
    col[p] = x->out[(size_t)p * (size_t)(no ? no : 1) + (size_t)j];
  xrt__sharded *a = NULL;
  xrt_status s = xrt__sharded_new(c, &x->logical[j], &x->specs[j],
                                  &x->axes[j], col, n, &a);
  xrt__free(&c->allocator, col);
  if (s) return s;
  for (int p = 0; p < n; p++) a->devices[p] = xrt_executable_device(exe, p);
  for (int p = 0; p < n; p++) /* the array owns them now */
    x->out[(size_t)p * (size_t)(no ? no : 1) + (size_t)j] = NULL;
  *out = (xrt_sharded_array *)a->handle;
  return XRT_OK;
}

/* A digest of an execution's arguments as this process sees them. */
static uint64_t xrt__mpv_xv_digest(const xrt__xv_call *k, int na,
                                   const int *updates, int no) {
  uint64_t h = xrt__key_mix(xrt__key_mix(0xcbf29ce484222325ull,
                                         (uint64_t)na), (uint64_t)no);
  for (int i = 0; i < na; i++)
    h = xrt__key_mix(h, k->vars[i] ? k->vars[i]->key : 0);
  for (int j = 0; updates && j < no; j++)
    h = xrt__key_mix(h, (uint64_t)(int64_t)updates[j]);
  return h;
}

/* xrt_execute_variables' locked part on a multi-process client: each
 * process launches its participants, then all vote; donation replaces
 * this process's pieces only. */
XRT__PRIVATE xrt_status xrt__mpv_execute(xrt_executable *exe,
                                   const xrt_variable_arg *args, int na,
                                   xrt__xv_call *k, const int *updates,
                                   xrt_sharded_array **outputs, int no,
                                   const xrt_execute_options *options) {
  xrt__client *c = xrt__executable_get(exe)->client;
  int n = xrt_executable_num_replicas(exe) *
          xrt_executable_num_partitions(exe);
  size_t so = (size_t)(no ? no : 1);
  xrt__mpv_xv x;
  memset(&x, 0, sizeof x);
  xrt_status s = xrt__mpv_xv_lists(exe, c, args, na, k, n, no, &x);
  if (!s) s = xrt__mpv_xv_specs(exe, k, updates, no, n, options, &x);
  if (!s) {
    xrt_execute_options o;
    xrt_execute_options_init(&o);
    if (options) o = *options;
    o.output_specs = NULL;
    xrt_event *done = NULL;
    s = xrt_execute_multi(exe, x.lists, n, na, x.olists, no, &o, &done);
    if (!s) s = xrt_event_await(done);
    xrt__saved_error err = {XRT_OK, ""};
    xrt__save_error(&err, s);
    xrt_event_release(done);
    s = xrt__restore_error(&err);
  }
  s = xrt__mpv_agree(c, s, xrt__mpv_xv_digest(k, na, updates, no), 0, NULL,
                     "xrt_execute_variables");
  for (int j = 0; !s && j < no; j++) {
    if (!updates || updates[j] < 0) {
      s = xrt__mpv_xv_wrap(exe, c, &x, j, n, no, &outputs[j]);
      continue;
    }
    xrt__var *v = k->vars[updates[j]];
    for (int p = 0; p < n; p++) {
      xrt_buffer **o = &x.out[(size_t)p * so + (size_t)j];
      if (!*o) continue;
      xrt__piece_release(v->bufs[p]);
      v->bufs[p] = *o;
      *o = NULL;
    }
  }
  if (s)
    for (int j = 0; j < no; j++) {
      xrt_sharded_array_release(outputs[j]);
      outputs[j] = NULL;
    }
  for (size_t i = 0; x.out && i < (size_t)n * so; i++)
    xrt_buffer_release(x.out[i]);
  xrt__mpv_xv_free(c, &x);
  return s;
}
