/*
 * src/core/variable_reshard.c - variables: atomic reshard, execution over
 * variables with donation.
 * Part of the core of xrt; MIT licensed, see LICENSE.
 */
#include "internal.h"

static void xrt__rs_var_free(xrt__rs_var *r) {
  const xrt_allocator *a = &r->v->al;
  for (int k = 0; r->pieces && k < r->f.n; k++) {
    if (r->pieces[k].buf) xrt_buffer_release(r->pieces[k].buf);
    xrt__free(a, r->pieces[k].copies);
  }
  xrt__free(a, r->pieces);
  xrt__free(a, r->kept);
  xrt__free(a, r->new_bufs);
  xrt__free(a, r->new_devs);
  r->pieces = NULL;
  r->kept = NULL;
  r->new_bufs = NULL;
  r->new_devs = NULL;
}

/* The replica of old piece id to read for the new piece k on device dev:
 * one on dev if any, else the (k mod count)-th. */
static int xrt__rs_source(const xrt__var *v, const int64_t *old_piece,
                          int64_t id, xrt_device *dev, int k) {
  int count = 0, pick = -1;
  for (int j = 0; j < v->n; j++) {
    if (old_piece[j] != id) continue;
    if (v->devices[j] == dev) return j;
    count++;
  }
  int want = k % (count ? count : 1);
  for (int j = 0; j < v->n && pick < 0; j++)
    if (old_piece[j] == id && v->devices[j] != dev && want-- == 0) pick = j;
  return pick;
}

/* The box copies that fill new piece k (starting at ns) from the old
 * pieces (old_start/old_piece per old index; reps: one index per distinct
 * old piece). */
static xrt_status xrt__rs_plan_copies(xrt__rs_var *r, int k,
                                      const int64_t *ns,
                                      const int64_t *old_start,
                                      const int64_t *old_piece,
                                      const int *reps, int nreps) {
  xrt__var *v = r->v;
  int L = v->logical.rank;
  xrt__rs_piece *p = &r->pieces[k];
  p->copies = (xrt__rs_copy *)xrt__calloc(&v->al, (size_t)(nreps ? nreps : 1),
                                          sizeof *p->copies);
  if (!p->copies) return xrt__nomem("a reshard's copy plan");
  for (int j = 0; j < nreps; j++) {
    const int64_t *os = old_start + (size_t)reps[j] * XRT_MAX_RANK;
    xrt__rs_copy cp;
    bool empty = false;
    for (int d = 0; d < L && !empty; d++) {
      int64_t lo = os[d] > ns[d] ? os[d] : ns[d];
      int64_t ohi = os[d] + r->old_ext[d], nhi = ns[d] + r->new_ext[d];
      int64_t hi = ohi < nhi ? ohi : nhi;
      empty = lo >= hi;
      cp.src_start[d] = lo - os[d];
      cp.dst_start[d] = lo - ns[d];
      cp.ext[d] = hi - lo;
    }
    if (empty) continue;
    cp.src = xrt__rs_source(v, old_piece, old_piece[reps[j]],
                            r->f.devices[k], k);
    p->copies[p->ncopies++] = cp;
  }
  return XRT_OK;
}

/* Plans one variable's move (see the comment above). */
XRT__PRIVATE xrt_status xrt__rs_plan(xrt__rs_var *r) {
  xrt__var *v = r->v;
  int on = v->n, nn = r->f.n, L = v->logical.rank;
  const xrt_allocator *a = &v->al;
  int64_t *old_start = (int64_t *)xrt__calloc(a, (size_t)on * XRT_MAX_RANK,
                                              sizeof(int64_t));
  int64_t *old_piece = (int64_t *)xrt__calloc(a, (size_t)on, sizeof(int64_t));
  int *reps = (int *)xrt__calloc(a, (size_t)on, sizeof(int));
  r->pieces = (xrt__rs_piece *)xrt__calloc(a, (size_t)nn, sizeof *r->pieces);
  r->kept = (bool *)xrt__calloc(a, (size_t)on, sizeof(bool));
  r->new_bufs = (xrt_buffer **)xrt__calloc(a, (size_t)nn, sizeof *r->new_bufs);
  r->new_devs = (xrt_device **)xrt__calloc(a, (size_t)nn, sizeof *r->new_devs);
  xrt_status s = XRT_OK;
  if (!old_start || !old_piece || !reps || !r->pieces || !r->kept ||
      !r->new_bufs || !r->new_devs)
    s = xrt__nomem("a reshard plan");
  int nreps = 0;
  for (int k = 0; !s && k < on; k++) {
    xrt__spec_locate(&v->spec, &v->axes, &v->logical, k,
                     old_start + (size_t)k * XRT_MAX_RANK, &old_piece[k]);
    bool seen = false;
    for (int j = 0; j < nreps && !seen; j++)
      seen = old_piece[reps[j]] == old_piece[k];
    if (!seen) reps[nreps++] = k;
  }
  xrt__spec_extent(&v->spec, &v->logical, r->old_ext);
  xrt__spec_extent(&r->f.spec, &v->logical, r->new_ext);
  bool same_ext = xrt__shape_equal(&v->piece, &r->f.piece);
  for (int d = 0; d < L; d++) same_ext = same_ext && r->old_ext[d] == r->new_ext[d];
  for (int k = 0; !s && k < nn; k++) {
    int64_t ns[XRT_MAX_RANK], id;
    xrt__spec_locate(&r->f.spec, &r->f.axes, &v->logical, k, ns, &id);
    xrt__rs_piece *p = &r->pieces[k];
    p->keep = -1;
    for (int j = 0; same_ext && j < on && p->keep < 0; j++)
      if (!r->kept[j] && v->devices[j] == r->f.devices[k] &&
          memcmp(old_start + (size_t)j * XRT_MAX_RANK, ns,
                 (size_t)L * sizeof(int64_t)) == 0)
        p->keep = j;
    if (p->keep >= 0) r->kept[p->keep] = true;
    else s = xrt__rs_plan_copies(r, k, ns, old_start, old_piece, reps, nreps);
  }
  xrt__free(a, old_start);
  xrt__free(a, old_piece);
  xrt__free(a, reps);
  return s;
}

/* Waits until every piece of a locked variable held here is computed
 * (pieces on other processes, NULL, are theirs to wait for). */
XRT__PRIVATE xrt_status xrt__var_wait_ready(xrt__var *v) {
  for (int k = 0; k < v->n; k++) {
    if (!v->bufs[k]) continue;
    xrt__buffer *b = (xrt__buffer *)xrt__hget(v->bufs[k], XRT__H_BUFFER);
    if (!b) return xrt__fail(XRT_INTERNAL, "variable '%s': piece %d is gone",
                             v->name, k);
    xrt_status s = b->ready ? xrt__event_wait(b->ready) : XRT_OK;
    if (s)
      return xrt__fail(s, "variable '%s': piece %d failed: %s", v->name, k,
                       b->ready->message);
  }
  return XRT_OK;
}

/* Allocates every new piece of the call (old ones still alive). */
static xrt_status xrt__rs_alloc(xrt__rs_var *rs, int nv) {
  for (int i = 0; i < nv; i++) {
    xrt__rs_var *r = &rs[i];
    if (r->noop) continue;
    xrt__client *c = r->v->client;
    size_t bytes = xrt_shape_bytes(&r->f.piece);
    for (int k = 0; k < r->f.n; k++) {
      if (r->pieces[k].keep >= 0) continue;
      xrt__buffer *b;
      xrt_status s = xrt__buffer_new(c, xrt_device_id(r->f.devices[k]),
                                     &r->f.piece, bytes, NULL, &b);
      if (s) return s;
      r->pieces[k].buf = (xrt_buffer *)b->handle;
    }
  }
  return XRT_OK;
}

XRT__PRIVATE void xrt__rs_free_new(xrt__rs_var *rs, int nv) {
  for (int i = 0; i < nv; i++)
    for (int k = 0; rs[i].pieces && k < rs[i].f.n; k++)
      if (rs[i].pieces[k].buf) {
        xrt__piece_release(rs[i].pieces[k].buf);
        rs[i].pieces[k].buf = NULL;
      }
}

/* Parallel copies: one task per new piece, claimed by the workers. */
typedef struct xrt__rs_task {
  xrt__rs_var *r;
  int k;
} xrt__rs_task;

typedef struct xrt__rs_exec {
  xrt__rs_task *tasks;
  int ntasks;
  _Atomic int next;
  _Atomic bool failed;
  pthread_mutex_t mu; /* guards err */
  xrt__saved_error err;
} xrt__rs_exec;

static xrt_status xrt__rs_run_task(const xrt__rs_task *t) {
  xrt__rs_var *r = t->r;
  xrt__rs_piece *p = &r->pieces[t->k];
  xrt__client *c = r->v->client;
  xrt__buffer *dst = (xrt__buffer *)xrt__hget(p->buf, XRT__H_BUFFER);
  for (int j = 0; j < p->ncopies; j++) {
    const xrt__rs_copy *cp = &p->copies[j];
    xrt__buffer *src = (xrt__buffer *)xrt__hget(r->v->bufs[cp->src],
                                                XRT__H_BUFFER);
    xrt_status s = xrt__region_copy(c, src, dst, r->v->logical.rank,
                                    r->old_ext, cp->src_start, r->new_ext,
                                    cp->dst_start, cp->ext);
    if (s) {
      xrt__saved_error err = {XRT_OK, ""};
      xrt__save_error(&err, s);
      return xrt__fail(s, "variable '%s': copying to its new piece %d on "
                       "device %d: %s", r->v->name, t->k, dst->device,
                       err.message);
    }
  }
  return XRT_OK;
}

static void *xrt__rs_worker(void *arg) {
  xrt__rs_exec *x = (xrt__rs_exec *)arg;
  while (!atomic_load(&x->failed)) {
    int t = atomic_fetch_add(&x->next, 1);
    if (t >= x->ntasks) break;
    xrt_status s = xrt__rs_run_task(&x->tasks[t]);
    if (!s) continue;
    pthread_mutex_lock(&x->mu);
    xrt__save_error(&x->err, s);
    pthread_mutex_unlock(&x->mu);
    atomic_store(&x->failed, true);
  }
  return NULL;
}

/* Bytes above which the copies of a reshard use several threads. */
#define XRT__RS_PARALLEL_BYTES ((size_t)4 << 20)

/* Runs every planned copy: in parallel over the new pieces when large. */
static xrt_status xrt__rs_copy_all(xrt__rs_var *rs, int nv) {
  int ntasks = 0;
  size_t bytes = 0;
  for (int i = 0; i < nv; i++)
    for (int k = 0; !rs[i].noop && k < rs[i].f.n; k++)
      if (rs[i].pieces[k].keep < 0) {
        ntasks++;
        bytes += xrt_shape_bytes(&rs[i].f.piece);
      }
  if (!ntasks) return XRT_OK;
  xrt__rs_exec x;
  memset(&x, 0, sizeof x);
  const xrt_allocator *a = &rs[0].v->al;
  x.tasks = (xrt__rs_task *)xrt__calloc(a, (size_t)ntasks, sizeof *x.tasks);
  if (!x.tasks) return xrt__nomem("a reshard's copy tasks");
  for (int i = 0; i < nv; i++)
    for (int k = 0; !rs[i].noop && k < rs[i].f.n; k++)
      if (rs[i].pieces[k].keep < 0) x.tasks[x.ntasks++] = (xrt__rs_task){&rs[i], k};
  pthread_mutex_init(&x.mu, NULL);
  int cores = xrt__os_cpu_count();
  int nthreads = bytes < XRT__RS_PARALLEL_BYTES ? 1 : cores > 16 ? 16 : cores;
  if (nthreads > ntasks) nthreads = ntasks;
  pthread_t tid[16];
  int started = 0;
  while (started < nthreads - 1 &&
         pthread_create(&tid[started], NULL, xrt__rs_worker, &x) == 0)
    started++;
  xrt__rs_worker(&x); /* the caller is a worker too */
  for (int i = 0; i < started; i++) pthread_join(tid[i], NULL);
  pthread_mutex_destroy(&x.mu);
  xrt__free(a, x.tasks);
  return xrt__restore_error(&x.err);
}

/* Swaps in the new pieces (cannot fail: everything is allocated). */
XRT__PRIVATE void xrt__rs_commit(xrt__rs_var *r) {
  xrt__var *v = r->v;
  for (int k = 0; k < r->f.n; k++) {
    xrt__rs_piece *p = &r->pieces[k];
    r->new_bufs[k] = p->keep >= 0 ? v->bufs[p->keep] : p->buf;
    r->new_devs[k] = r->f.devices[k];
    p->buf = NULL;
  }
  for (int k = 0; k < v->n; k++)
    if (!r->kept[k] && v->bufs[k]) xrt__piece_release(v->bufs[k]);
  xrt__free(&v->al, v->bufs);
  xrt__free(&v->al, v->devices);
  v->bufs = r->new_bufs;
  v->devices = r->new_devs;
  r->new_bufs = NULL;
  r->new_devs = NULL;
  v->n = r->f.n;
  v->spec = r->f.spec;
  v->axes = r->f.axes;
  v->piece = r->f.piece;
  v->key = r->f.key;
}

/* Uploads piece k of format (spec, axes) of a logical host array to dev. */
static xrt_status xrt__var_upload_piece(xrt__var *v,
                                        const xrt_sharding_spec *spec,
                                        const xrt__spec_axes *ax,
                                        const xrt_shape *piece,
                                        const char *host, int k,
                                        xrt_device *dev, xrt_buffer **out) {
  xrt__box box;
  xrt__piece_box(spec, ax, &v->logical, k, &box);
  size_t bytes = xrt_shape_bytes(piece);
  char *stage = (char *)xrt__alloc(&v->al, bytes ? bytes : 1);
  if (!stage) return xrt__nomem("staging a variable's piece");
  xrt__box_copy(&box, (char *)(uintptr_t)host, stage, true);
  xrt_status s = xrt_buffer_from_host((xrt_client *)v->client->handle, dev,
                                      piece, stage, out);
  xrt__free(&v->al, stage);
  return s;
}

/* Rebuilds the old pieces freed early from the host copy (staged plan). */
static xrt_status xrt__rs_restore(xrt__rs_var *r, const char *host) {
  xrt__var *v = r->v;
  for (int k = 0; k < v->n; k++) {
    if (v->bufs[k]) continue;
    xrt_status s = xrt__var_upload_piece(v, &v->spec, &v->axes, &v->piece,
                                         host, k, v->devices[k], &v->bufs[k]);
    if (s) {
      xrt__saved_error err = {XRT_OK, ""};
      xrt__save_error(&err, s);
      return xrt__fail(XRT_DATA_LOSS, "variable '%s': its old piece %d on "
                       "device %d could not be rebuilt after a failed "
                       "reshard: %s", v->name, k, xrt_device_id(v->devices[k]),
                       err.message);
    }
  }
  return XRT_OK;
}

/* The staged plan (see the memory rule above); free_early = false is
 * options->via_host. */
static xrt_status xrt__rs_staged(xrt__rs_var *rs, int nv, bool free_early) {
  xrt__rs_free_new(rs, nv);
  const xrt_allocator *a = &rs[0].v->al;
  char **host = (char **)xrt__calloc(a, (size_t)nv, sizeof *host);
  if (!host) return xrt__nomem("a staged reshard");
  xrt__saved_error err = {XRT_OK, ""};
  for (int i = 0; i < nv && !err.code; i++) {
    if (rs[i].noop) continue;
    size_t bytes = xrt_shape_bytes(&rs[i].v->logical);
    host[i] = (char *)xrt__alloc(a, bytes ? bytes : 1);
    if (!host[i])
      xrt__save_error(&err, xrt__nomem("a staged reshard's host copy"));
    else xrt__save_error(&err, xrt__var_read(rs[i].v, host[i], bytes));
  }
  for (int i = 0; i < nv && !err.code && free_early; i++)
    for (int k = 0; !rs[i].noop && k < rs[i].v->n; k++)
      if (!rs[i].kept[k]) {
        xrt__piece_release(rs[i].v->bufs[k]);
        rs[i].v->bufs[k] = NULL;
      }
  bool freed = !err.code && free_early;
  for (int i = 0; i < nv && !err.code; i++)
    for (int k = 0; !rs[i].noop && k < rs[i].f.n && !err.code; k++)
      if (rs[i].pieces[k].keep < 0)
        xrt__save_error(&err, xrt__var_upload_piece(
                                  rs[i].v, &rs[i].f.spec, &rs[i].f.axes,
                                  &rs[i].f.piece, host[i], k,
                                  rs[i].f.devices[k], &rs[i].pieces[k].buf));
  if (err.code) {
    xrt__rs_free_new(rs, nv);
    for (int i = 0; i < nv && freed; i++) {
      if (rs[i].noop) continue;
      xrt_status s = xrt__rs_restore(&rs[i], host[i]);
      if (s) { /* data loss outranks the original error */
        err.code = XRT_OK;
        xrt__save_error(&err, s);
      }
    }
  }
  for (int i = 0; i < nv; i++) xrt__free(a, host[i]);
  xrt__free(a, host);
  return xrt__restore_error(&err);
}

/* Moves the planned variables: direct copies, or the staged plan when the
 * devices lack memory (or via_host is asked). */
static xrt_status xrt__rs_move(xrt__rs_var *rs, int nv, bool via_host) {
  xrt_status s = XRT_OK;
  for (int i = 0; i < nv && !s; i++)
    if (!rs[i].noop) s = xrt__var_wait_ready(rs[i].v);
  if (s) return s;
  if (via_host) return xrt__rs_staged(rs, nv, false);
  /* Only device memory running out takes the staged plan, which frees old
   * pieces early: host memory running out is an error, or the restore
   * could run out too and lose the data. */
  unsigned host_oom = xrt__nomem_seen;
  s = xrt__rs_alloc(rs, nv);
  if (s == XRT_RESOURCE_EXHAUSTED && host_oom == xrt__nomem_seen)
    return xrt__rs_staged(rs, nv, true);
  if (!s) s = xrt__rs_copy_all(rs, nv);
  if (s) {
    xrt__saved_error err = {XRT_OK, ""};
    xrt__save_error(&err, s);
    xrt__rs_free_new(rs, nv);
    return xrt__restore_error(&err);
  }
  return XRT_OK;
}

void xrt_reshard_options_init(xrt_reshard_options *options) {
  if (options) memset(options, 0, sizeof *options);
}

/* Checks variable i's target against the locked variable. */
static xrt_status xrt__rs_check(xrt__rs_var *r, int i,
                                const xrt_variable_format *f,
                                xrt__client *c) {
  xrt__var *v = r->v;
  if (v->dead)
    return xrt__fail(XRT_INVALID_ARGUMENT, "variables[%d] was released", i);
  if (v->client != c)
    return xrt__fail(XRT_INVALID_ARGUMENT, "variables[%d] ('%s') belongs to "
                     "another client than variables[0]", i, v->name);
  xrt_status s = xrt__vformat_check(c, &v->logical, f, &r->f);
  if (s) {
    xrt__saved_error err = {XRT_OK, ""};
    xrt__save_error(&err, s);
    return xrt__fail(s, "variables[%d] ('%s'): %s", i, v->name, err.message);
  }
  r->noop = r->f.key == v->key;
  return XRT_OK;
}

/* Plans and moves the locked variables of a checked call. */
static xrt_status xrt__rs_locked(xrt__rs_var *rs, int count,
                                 const xrt_reshard_options *options) {
  bool any = false;
  xrt_status s = XRT_OK;
  for (int i = 0; i < count && !s; i++)
    if (!rs[i].noop) {
      any = true;
      s = xrt__rs_plan(&rs[i]);
    }
  if (s || !any) return s;
  if ((s = xrt__rs_move(rs, count, options && options->via_host))) return s;
  for (int i = 0; i < count; i++)
    if (!rs[i].noop) xrt__rs_commit(&rs[i]);
  return XRT_OK;
}

static void xrt__rs_trace(xrt__rs_var *rs, int count, int64_t t0) {
  int64_t t1 = xrt__now_ns();
  for (int i = 0; i < count; i++)
    if (!rs[i].noop)
      xrt__trace_complete(rs[i].v->client, -1, "reshard", rs[i].v->name, t0,
                          t1);
}

/* Calls with up to this many variables keep their scratch on the stack. */
#define XRT__RS_STACK_VARS 4

/* A call's scratch: its variables (rs) and the same in lock order
 * (sorted).  On the stack for a few variables; otherwise from the first
 * variable's (client's) allocator, which owner keeps alive until
 * xrt__rs_scratch_release. */
typedef struct xrt__rs_scratch {
  xrt__rs_var *rs;
  xrt__var **sorted;
  xrt__var *owner; /* NULL when on the stack */
  xrt__rs_var stack_rs[XRT__RS_STACK_VARS];
  xrt__var *stack_sorted[XRT__RS_STACK_VARS];
} xrt__rs_scratch;

/* Gives sc zeroed arrays of count entries.  On failure sc->owner says
 * whether there is anything to release. */
static xrt_status xrt__rs_scratch_get(xrt__rs_scratch *sc, xrt_variable *first,
                                      int count) {
  sc->rs = sc->stack_rs;
  sc->sorted = sc->stack_sorted;
  sc->owner = NULL;
  if (count <= XRT__RS_STACK_VARS) {
    memset(sc->rs, 0, (size_t)count * sizeof *sc->rs);
    return XRT_OK;
  }
  sc->owner = xrt__var_acquire(first);
  if (!sc->owner)
    return xrt__fail(XRT_INVALID_ARGUMENT, "variables[0] is not a live "
                     "variable");
  const xrt_allocator *a = &sc->owner->al;
  sc->rs = (xrt__rs_var *)xrt__calloc(a, (size_t)count, sizeof *sc->rs);
  sc->sorted = (xrt__var **)xrt__calloc(a, (size_t)count, sizeof *sc->sorted);
  if (!sc->rs || !sc->sorted) return xrt__nomem("a reshard of many variables");
  return XRT_OK;
}

static void xrt__rs_scratch_release(xrt__rs_scratch *sc) {
  if (!sc->owner) return;
  xrt__free(&sc->owner->al, sc->rs);
  xrt__free(&sc->owner->al, sc->sorted);
  xrt__var_unref(sc->owner);
}

/* Across processes (below). */

xrt_status xrt_variables_reshard(xrt_variable *const *variables,
                                 const xrt_variable_format *formats, int count,
                                 const xrt_reshard_options *options) {
  XRT__CHECK_ARG(count >= 0, "count is negative");
  if (count == 0) return XRT_OK;
  XRT__CHECK_ARG(variables && formats, "variables or formats is NULL");
  bool tracing = xrt__trace_on();
  int64_t t0 = tracing ? xrt__now_ns() : 0;
  xrt__rs_scratch sc;
  xrt_status s = xrt__rs_scratch_get(&sc, variables[0], count);
  if (s && !sc.owner) return s; /* nothing acquired or allocated */
  xrt__rs_var *rs = sc.rs;
  xrt__var **sorted = sc.sorted;
  int got = 0;
  for (; !s && got < count; got++) {
    rs[got].v = sorted[got] = xrt__var_acquire(variables[got]);
    if (!rs[got].v) {
      s = xrt__fail(XRT_INVALID_ARGUMENT, "variables[%d] is not a live "
                    "variable", got);
      break;
    }
    for (int j = 0; j < got && !s; j++)
      if (rs[j].v == rs[got].v)
        s = xrt__fail(XRT_INVALID_ARGUMENT, "variables[%d] and variables[%d] "
                      "are the same variable", j, got);
    if (s) { got++; break; }
  }
  if (!s) {
    xrt__vars_lock(sorted, count);
    for (int i = 0; i < count && !s; i++)
      s = xrt__rs_check(&rs[i], i, &formats[i], rs[0].v->client);
    if (rs[0].v->client->mp) s = xrt__mpv_reshard(rs, count, options, s);
    else if (!s) s = xrt__rs_locked(rs, count, options);
    if (!s && tracing) xrt__rs_trace(rs, count, t0);
    xrt__vars_unlock(sorted, count);
  }
  /* got counts the acquired variables: none when the scratch failed */
  for (int i = 0; i < got; i++) {
    if (rs[i].v) xrt__rs_var_free(&rs[i]);
  }
  xrt__saved_error err = {XRT_OK, ""};
  xrt__save_error(&err, s);
  for (int i = 0; i < got; i++) xrt__var_unref(rs[i].v);
  xrt__rs_scratch_release(&sc);
  return xrt__restore_error(&err);
}

/* Checks the arguments and acquires their variables (before locking). */
XRT__PRIVATE xrt_status xrt__xv_acquire(const xrt_variable_arg *args, int num_args,
                                  xrt__xv_call *k) {
  for (int i = 0; i < num_args; i++) {
    if (!args[i].variable == !args[i].array)
      return xrt__fail(XRT_INVALID_ARGUMENT, "argument %d: set exactly one of "
                       "variable and array", i);
    if (!args[i].variable) continue;
    k->vars[i] = xrt__var_acquire(args[i].variable);
    if (!k->vars[i])
      return xrt__fail(XRT_INVALID_ARGUMENT, "argument %d is not a live "
                       "variable", i);
    bool seen = false;
    for (int j = 0; j < k->nuniq && !seen; j++) seen = k->uniq[j] == k->vars[i];
    if (!seen) k->uniq[k->nuniq++] = k->vars[i];
  }
  return XRT_OK;
}

/* Checks updates[] against the arguments and the executable's outputs. */
XRT__PRIVATE xrt_status xrt__xv_check_updates(xrt_executable *exe,
                                        const xrt__xv_call *k, int num_args,
                                        const int *updates, int num_outputs) {
  for (int j = 0; updates && j < num_outputs; j++) {
    int u = updates[j];
    if (u == -1) continue;
    if (u < 0 || u >= num_args || !k->vars[u])
      return xrt__fail(XRT_INVALID_ARGUMENT, "updates[%d] = %d is not the "
                       "index of a variable argument", j, u);
    for (int i = 0; i < j; i++)
      if (updates[i] >= 0 && k->vars[updates[i]] == k->vars[u])
        return xrt__fail(XRT_INVALID_ARGUMENT, "outputs %d and %d both update "
                         "variable '%s'", i, j, k->vars[u]->name);
    xrt_shape out;
    xrt_status s = xrt_executable_output_shape(exe, j, &out);
    if (s) return s;
    if (!xrt__shape_equal(&out, &k->vars[u]->piece)) {
      char h[128], w[128];
      xrt_shape_format(&out, h, sizeof h);
      xrt_shape_format(&k->vars[u]->piece, w, sizeof w);
      return xrt__fail(XRT_INVALID_ARGUMENT, "output %d is %s per device; the "
                       "variable '%s' (argument %d) it updates has pieces %s",
                       j, h, k->vars[u]->name, u, w);
    }
  }
  return XRT_OK;
}

/* Builds the sharded arguments: views of the (locked) variables. */
XRT__PRIVATE xrt_status xrt__xv_views(const xrt_variable_arg *args, int num_args,
                                xrt__xv_call *k) {
  for (int i = 0; i < num_args; i++) {
    if (!k->vars[i]) {
      k->arrays[i] = args[i].array;
      continue;
    }
    if (k->vars[i]->dead)
      return xrt__fail(XRT_INVALID_ARGUMENT, "argument %d: variable was "
                       "released", i);
    xrt_status s = xrt__var_view(k->vars[i], &k->views[i]);
    if (s) return s;
    k->arrays[i] = (xrt_sharded_array *)k->views[i]->handle;
  }
  return XRT_OK;
}

/* Runs and waits; on failure releases every output. */
XRT__PRIVATE xrt_status xrt__xv_run(xrt_executable *exe, xrt__xv_call *k,
                              int num_args, const int *updates,
                              xrt_sharded_array **outs, int num_outputs,
                              const xrt_execute_options *options) {
  const xrt_sharding_spec **specs = k->specs;
  xrt_execute_options o;
  xrt_execute_options_init(&o);
  if (options) o = *options;
  for (int j = 0; j < num_outputs; j++)
    specs[j] = updates && updates[j] >= 0 ? &k->vars[updates[j]]->spec
               : options && options->output_specs ? options->output_specs[j]
                                                  : NULL;
  o.output_specs = specs;
  xrt_event *done = NULL;
  xrt_status s = xrt_execute_sharded(exe, k->arrays, num_args, outs,
                                     num_outputs, &o, &done);
  if (!s) {
    s = xrt_event_await(done);
    xrt__saved_error err = {XRT_OK, ""};
    xrt__save_error(&err, s);
    xrt_event_release(done);
    s = xrt__restore_error(&err);
  }
  if (s)
    for (int j = 0; j < num_outputs; j++) {
      xrt_sharded_array_release(outs[j]);
      outs[j] = NULL;
    }
  return s;
}

/* Donation: variable u takes over the output's pieces. */
XRT__PRIVATE void xrt__xv_donate(xrt__var *v, xrt_sharded_array *out) {
  xrt__sharded *a = xrt__sharded_get(out);
  for (int d = 0; d < v->n; d++) {
    xrt__piece_release(v->bufs[d]);
    v->bufs[d] = a->bufs[d];
  }
  xrt__sharded_free(a, false);
}
