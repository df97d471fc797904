/*
 * src/core/multiprocess.c - multi-process clients: joining, global devices, host
 * exchanges, launches across processes.
 * Part of the core of xrt; MIT licensed, see LICENSE.
 */
#include "internal.h"

/* ======================================================================
 * 13a. Multi-process clients (issue #11)
 *
 * Multi-process clients: the installed transport (xrt_transport_install),
 * a client's place in the system and its global device set (this
 * process's devices are its own xrt__device records; the others' are
 * records of their own handle kind, XRT__H_RDEVICE, which every call that
 * would touch a device refuses), executables whose launch spans processes
 * (device_assignment in global ids; logical ids of other processes hold
 * -1 in e->assignment), and their launches: each process enqueues its own
 * participants, with a launch id counted alike in every process.
 *
 * Contents: errors for extensions; the transport; joining; global
 * devices; launch shape and compile arguments; execution; the xrt_mpi_*
 * stubs of a build without MPI.
 * ==================================================================== */

/* ---- errors for code outside the core ---- */

xrt_status xrt_report_error(xrt_status code, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  xrt__error_vset(code, fmt, ap);
  va_end(ap);
  return code;
}

/* ---- the transport ---- */

static pthread_mutex_t xrt__tp_mu = PTHREAD_MUTEX_INITIALIZER;
static xrt_transport xrt__tp;
static bool xrt__tp_on;

xrt_status xrt_transport_install(const xrt_transport *t) {
  if (t && t->struct_size < sizeof *t)
    return xrt__fail(XRT_INVALID_ARGUMENT, "transport: struct_size %zu is "
                     "smaller than xrt's %zu", t->struct_size, sizeof *t);
  if (t && (!t->allgather || !t->exchange))
    return xrt__fail(XRT_INVALID_ARGUMENT, "transport: allgather or exchange "
                     "is NULL");
  if (t && (t->topology.process_count < 1 || t->topology.process_index < 0 ||
            t->topology.process_index >= t->topology.process_count))
    return xrt__fail(XRT_INVALID_ARGUMENT, "transport: process_index %d is "
                     "outside 0..%d", t->topology.process_index,
                     t->topology.process_count - 1);
  pthread_mutex_lock(&xrt__tp_mu);
  if (t) xrt__tp = *t;
  xrt__tp_on = t != NULL;
  pthread_mutex_unlock(&xrt__tp_mu);
  return XRT_OK;
}

/* Tags on the transport, three disjoint spaces: the plugin's (bits 60 and
 * 61 clear), the core's own collectives (bit 61, then the client's join
 * number from bit 40 and a counter that every process advances alike) and
 * the users' (bit 60, then their tag, below XRT_USER_TAG_LIMIT).  Launch
 * ids carry the join number too, so that two joined clients alive at once
 * never share a launch id or a tag (clients join in the same order in
 * every process). */
#define XRT__TAG_PLUGIN_MASK (~((uint64_t)3 << 60))
#define XRT__TAG_CORE ((uint64_t)1 << 61)
#define XRT__TAG_USER ((uint64_t)1 << 60)

/* Clients of this process that joined a system so far. */
static _Atomic uint64_t xrt__mp_joins;

/* Launch ids of multi-process launches: their own range, counted alike in
 * every process. */
#define XRT__MP_LAUNCH_BIT ((uint64_t)1 << 62)

static xrt_status xrt__mp_host_exchange(void *ctx, uint64_t tag,
                                        const xrt_transport_msg *sends,
                                        int nsend,
                                        const xrt_transport_msg *recvs,
                                        int nrecv, xrt_plugin_error *err) {
  xrt__client *c = (xrt__client *)ctx;
  if (!c || !c->mp) {
    if (err) snprintf(err->message, sizeof err->message, "exchange: the "
                      "client is of one process");
    return XRT_FAILED_PRECONDITION;
  }
  char tmp[1];
  tag &= XRT__TAG_PLUGIN_MASK;
  return c->mp->tp.exchange(c->mp->tp.self, tag, sends, nsend, recvs, nrecv,
                            err ? err->message : tmp,
                            err ? sizeof err->message : sizeof tmp);
}

/* Whether the client joins the installed transport's system (options
 * leave process_count at -1), and then its topology and the plugin's
 * exchange service.  Before the plugin's client exists. */
XRT__PRIVATE xrt_status xrt__mp_join(xrt__client *c, const xrt_client_options *o) {
  pthread_mutex_lock(&xrt__tp_mu);
  bool on = xrt__tp_on && o->topology.process_count == -1;
  xrt_transport tp = xrt__tp;
  pthread_mutex_unlock(&xrt__tp_mu);
  if (!on) return XRT_OK;
  /* options.cache_store is shared: every process reads it, process 0
   * alone writes it (section 12b). */
  struct xrt__mp *mp =
      (struct xrt__mp *)xrt__calloc(&c->allocator, 1, sizeof *mp);
  if (!mp) return xrt__nomem("the client's process table");
  mp->tp = tp;
  mp->me = tp.topology.process_index;
  mp->nproc = tp.topology.process_count;
  uint64_t join = atomic_fetch_add(&xrt__mp_joins, 1) & 0x3fff;
  atomic_init(&mp->next_launch, XRT__MP_LAUNCH_BIT | join << 40 | 1);
  atomic_init(&mp->next_coll, join << 40 | 1);
  c->mp = mp;
  const xrt_topology *in = &o->topology;
  xrt_topology *t = &c->topology;
  t->process_index = mp->me;
  t->process_count = mp->nproc;
  if (in->host_index < 0) t->host_index = tp.topology.host_index;
  if (in->local_rank < 0) t->local_rank = tp.topology.local_rank;
  if (in->local_world_size < 0)
    t->local_world_size = tp.topology.local_world_size;
  xrt_plugin_host_api *h = (xrt_plugin_host_api *)xrt__host_api_for(c, &c->allocator);
  if (!h) return xrt__nomem("the plugin's host services");
  h->exchange = xrt__mp_host_exchange;
  h->process_index = mp->me;
  h->process_count = mp->nproc;
  return XRT_OK;
}

/* Every process's device count (collective), then the global table. */
XRT__PRIVATE xrt_status xrt__mp_devices(xrt__client *c) {
  struct xrt__mp *mp = c->mp;
  if (!mp) return XRT_OK;
  int *counts = (int *)xrt__calloc(&c->allocator, (size_t)mp->nproc,
                                   sizeof(int));
  mp->first = (int *)xrt__calloc(&c->allocator, (size_t)mp->nproc + 1,
                                 sizeof(int));
  if (!counts || !mp->first) {
    xrt__free(&c->allocator, counts);
    return xrt__nomem("the global device table");
  }
  char msg[1024] = "";
  xrt_status s = mp->tp.allgather(mp->tp.self, &c->num_devices, counts,
                                  sizeof(int), msg, sizeof msg);
  if (s) {
    xrt__free(&c->allocator, counts);
    return xrt__fail(s, "client creation: gathering every process's device "
                     "count failed: %s", msg);
  }
  for (int p = 0; p < mp->nproc; p++) {
    if (counts[p] < 1 || counts[p] > 65536) {
      int bad = counts[p]; /* read before counts is freed */
      xrt__free(&c->allocator, counts);
      return xrt__fail(XRT_INTERNAL, "client creation: process %d reports %d "
                       "devices", p, bad);
    }
    mp->first[p + 1] = mp->first[p] + counts[p];
  }
  xrt__free(&c->allocator, counts);
  mp->ndev = mp->first[mp->nproc];
  mp->rdevs = (xrt__rdev *)xrt__calloc(&c->allocator, (size_t)mp->ndev,
                                       sizeof(xrt__rdev));
  if (!mp->rdevs) return xrt__nomem("the global device table");
  for (int p = 0; p < mp->nproc; p++)
    for (int g = mp->first[p]; g < mp->first[p + 1]; g++) {
      xrt__rdev *r = &mp->rdevs[g];
      r->client = c;
      r->gid = g;
      r->process = p;
      if (p == mp->me) continue;
      r->handle = xrt__hnew(r, XRT__H_RDEVICE);
      if (!r->handle) return xrt__fail(XRT_RESOURCE_EXHAUSTED, "out of handles");
    }
  return XRT_OK;
}

XRT__PRIVATE void xrt__mp_free(xrt__client *c) {
  struct xrt__mp *mp = c->mp;
  if (!mp) return;
  for (int g = 0; mp->rdevs && g < mp->ndev; g++)
    if (mp->rdevs[g].handle) xrt__hfree_handle(mp->rdevs[g].handle);
  xrt__free(&c->allocator, mp->rdevs);
  xrt__free(&c->allocator, mp->first);
  xrt__free(&c->allocator, mp);
  c->mp = NULL;
}

/* ---- section 12b's view of the process table ----
 *
 * Here, after struct xrt__mp; declared at the top of 12b.  A persistent
 * store is shared by the processes of a job, so what the key and a stored
 * executable say about devices must read alike in every process. */

/* Devices of every process (the range of global ids). */
XRT__PRIVATE int xrt__cache_ndev(const xrt__client *c) {
  return c->mp ? c->mp->ndev : c->num_devices;
}

/* The topology part of the key: the process count and every process's
 * device count (not this process's index, nor local_world_size, which
 * differs between hosts of unequal process counts). */
XRT__PRIVATE void xrt__cache_mp_digest(const xrt__client *c, XXH3_state_t *st) {
  const struct xrt__mp *mp = c->mp;
  int32_t words[3] = {0x6d70 /* "mp" */, mp->nproc, mp->ndev};
  XXH3_128bits_update(st, words, sizeof words);
  XXH3_128bits_update(st, mp->first, sizeof *mp->first * (size_t)mp->nproc);
}

/* From the global ids at a[2n..3n): each logical id's process (a[n..2n))
 * and local device here, -1 on another process (a[0..n)), as
 * xrt__mp_executable_launch lays them out.  Ids are below ndev. */
XRT__PRIVATE void xrt__cache_mp_place(const xrt__client *c, int32_t *a,
                                int64_t n) {
  const struct xrt__mp *mp = c->mp;
  for (int64_t i = 0; i < n; i++) {
    int g = a[2 * n + i];
    int p = mp->rdevs[g].process;
    a[n + i] = p;
    a[i] = p == mp->me ? g - mp->first[mp->me] : -1;
  }
}

/* ---- global devices ---- */

int xrt_client_global_device_count(const xrt_client *client) {
  xrt__client *c = xrt__client_get(client);
  if (!c) {
    xrt__fail(XRT_INVALID_ARGUMENT, "invalid client");
    return -1;
  }
  return c->mp ? c->mp->ndev : c->num_devices;
}

xrt_device *xrt_client_global_device(xrt_client *client, int gid) {
  xrt__client *c = xrt__client_get(client);
  if (!c) {
    xrt__fail(XRT_INVALID_ARGUMENT, "invalid client");
    return NULL;
  }
  int n = c->mp ? c->mp->ndev : c->num_devices;
  if (gid < 0 || gid >= n) {
    xrt__fail(XRT_OUT_OF_RANGE, "global device id %d is outside 0..%d", gid,
              n - 1);
    return NULL;
  }
  if (!c->mp) return (xrt_device *)c->devices[gid].handle;
  const xrt__rdev *r = &c->mp->rdevs[gid];
  if (r->process != c->mp->me) return (xrt_device *)r->handle;
  return (xrt_device *)c->devices[gid - c->mp->first[c->mp->me]].handle;
}

XRT__PRIVATE xrt__rdev *xrt__rdev_get(const xrt_device *d) {
  return (xrt__rdev *)xrt__hget(d, XRT__H_RDEVICE);
}

int xrt_device_global_id(const xrt_device *device) {
  xrt__device *d = xrt__device_get(device);
  if (d)
    return d->client->mp ? d->client->mp->first[d->client->mp->me] + d->index
                         : d->index;
  xrt__rdev *r = xrt__rdev_get(device);
  return r ? r->gid : -1;
}

int xrt_device_process_index(const xrt_device *device) {
  xrt__device *d = xrt__device_get(device);
  if (d) return d->client->topology.process_index;
  xrt__rdev *r = xrt__rdev_get(device);
  return r ? r->process : -1;
}

int xrt_device_is_addressable(const xrt_device *device) {
  if (xrt__device_get(device)) return 1;
  return xrt__rdev_get(device) ? 0 : -1;
}

/* ---- host exchanges: the core's collectives and the users' ---- */

/* The tag of the core's next collective on c (multi-process).  Collective
 * calls are issued in the same order in every process, so the counters
 * agree. */
XRT__PRIVATE uint64_t xrt__mp_next_tag(xrt__client *c) {
  return XRT__TAG_CORE |
         atomic_fetch_add_explicit(&c->mp->next_coll, 1, memory_order_relaxed);
}

/* The transport's exchange, its failure reported as what's. */
XRT__PRIVATE xrt_status xrt__mp_exchange(xrt__client *c, uint64_t tag,
                                   const xrt_transport_msg *sends, int nsend,
                                   const xrt_transport_msg *recvs, int nrecv,
                                   const char *what) {
  char msg[512] = "";
  xrt_status s = c->mp->tp.exchange(c->mp->tp.self, tag, sends, nsend, recvs,
                                    nrecv, msg, sizeof msg);
  return s ? xrt__fail(s, "%s: %s", what, msg[0] ? msg : xrt_strerror(s))
           : XRT_OK;
}

/* Every process's bytes at in into out (process order), through tagged
 * exchanges: unlike the transport's allgather, several may run at once
 * from different threads.  Any client (one process: a copy). */
XRT__PRIVATE xrt_status xrt__mp_allgather(xrt__client *c, uint64_t tag,
                                    const void *in, void *out, size_t bytes,
                                    const char *what) {
  struct xrt__mp *mp = c->mp;
  int me = mp ? mp->me : 0, np = mp ? mp->nproc : 1;
  if (bytes) memmove((char *)out + (size_t)me * bytes, in, bytes);
  if (np == 1) return XRT_OK;
  /* The message lists of up to 9 processes on the stack: the votes of
   * section 13c must go out even when host memory is short. */
  xrt_transport_msg stack[16] = {{0}};
  xrt_transport_msg *m = np <= 9 ? stack
                                 : (xrt_transport_msg *)xrt__calloc(
                                       &c->allocator, 2 * (size_t)(np - 1),
                                       sizeof *m);
  if (!m) return xrt__nomem("an exchange between processes");
  int k = 0;
  for (int p = 0; p < np; p++) {
    if (p == me) continue;
    m[k] = (xrt_transport_msg){p, (char *)out + (size_t)me * bytes, bytes};
    m[np - 1 + k++] = (xrt_transport_msg){p, (char *)out + (size_t)p * bytes,
                                          bytes};
  }
  xrt_status s = xrt__mp_exchange(c, tag, m, np - 1, m + np - 1, np - 1, what);
  if (m != stack) xrt__free(&c->allocator, m);
  return s;
}

xrt_status xrt_client_process_allgather(xrt_client *client, const void *in,
                                        void *out, size_t bytes) {
  xrt__client *c = xrt__client_get(client);
  XRT__CHECK_ARG(c, "invalid client");
  XRT__CHECK_ARG(!bytes || (in && out), "in or out is NULL");
  uint64_t tag = c->mp ? xrt__mp_next_tag(c) : 0;
  return xrt__mp_allgather(c, tag, in, out, bytes,
                           "xrt_client_process_allgather");
}

xrt_status xrt_client_process_exchange(xrt_client *client, uint64_t tag,
                                       const xrt_transport_msg *sends,
                                       int num_sends,
                                       const xrt_transport_msg *recvs,
                                       int num_recvs) {
  xrt__client *c = xrt__client_get(client);
  XRT__CHECK_ARG(c, "invalid client");
  if (!c->mp)
    return xrt__fail(XRT_FAILED_PRECONDITION, "xrt_client_process_exchange: "
                     "the client is of one process");
  if (tag >= XRT_USER_TAG_LIMIT)
    return xrt__fail(XRT_INVALID_ARGUMENT, "tag %" PRIu64 " is not below "
                     "XRT_USER_TAG_LIMIT", tag);
  XRT__CHECK_ARG(num_sends >= 0 && num_recvs >= 0, "negative message count");
  XRT__CHECK_ARG((!num_sends || sends) && (!num_recvs || recvs),
                 "sends or recvs is NULL");
  const xrt_transport_msg *lists[2] = {sends, recvs};
  int counts[2] = {num_sends, num_recvs};
  for (int l = 0; l < 2; l++)
    for (int i = 0; i < counts[l]; i++) {
      const xrt_transport_msg *m = &lists[l][i];
      if (m->peer < 0 || m->peer >= c->mp->nproc || m->peer == c->mp->me)
        return xrt__fail(XRT_INVALID_ARGUMENT, "%s[%d].peer is %d: another "
                         "process of 0..%d is needed", l ? "recvs" : "sends",
                         i, m->peer, c->mp->nproc - 1);
      if (m->bytes && !m->data)
        return xrt__fail(XRT_INVALID_ARGUMENT, "%s[%d].data is NULL",
                         l ? "recvs" : "sends", i);
    }
  return xrt__mp_exchange(c, XRT__TAG_USER | tag, sends, num_sends, recvs,
                          num_recvs, "xrt_client_process_exchange");
}

/* ---- launch shape and compile arguments ---- */

/* The process of global device g. */
static int xrt__mp_process_of(const struct xrt__mp *mp, int g) {
  return mp->rdevs[g].process;
}

/* e->assignment holds 3n entries: the local device of each logical id (-1
 * on another process), then its process, then its global id. */
XRT__PRIVATE xrt_status xrt__mp_executable_launch(xrt__executable *e,
                                            const xrt_compile_options *o) {
  const xrt_ir_module *m = e->program->module;
  xrt__client *c = e->client;
  struct xrt__mp *mp = c->mp;
  int64_t R = o && o->num_replicas ? o->num_replicas : m->num_replicas;
  int64_t P = o && o->num_partitions ? o->num_partitions : m->num_partitions;
  if (R < 1 || P < 1)
    return xrt__fail(XRT_INVALID_ARGUMENT, "num_replicas (%" PRId64 ") and "
                     "num_partitions (%" PRId64 ") must be at least 1", R, P);
  if (R * P > mp->ndev)
    return xrt__fail(XRT_INVALID_ARGUMENT, "%" PRId64 " replica(s) x %" PRId64
                     " partition(s) need %" PRId64 " devices, the %d "
                     "processes have %d", R, P, R * P, mp->nproc, mp->ndev);
  int64_t n = R * P;
  e->num_replicas = (int32_t)R;
  e->num_partitions = (int32_t)P;
  e->assignment = (int32_t *)xrt__calloc(&c->allocator, (size_t)(3 * n),
                                         sizeof(int32_t));
  if (!e->assignment) return xrt__nomem("the device assignment");
  int32_t *proc = e->assignment + n, *gids = e->assignment + 2 * n;
  for (int64_t i = 0; i < n; i++) {
    int g = o && o->device_assignment ? o->device_assignment[i] : (int)i;
    if (g < 0 || g >= mp->ndev)
      return xrt__fail(XRT_INVALID_ARGUMENT, "device_assignment[%" PRId64 "] "
                       "is %d, outside the global ids 0..%d", i, g,
                       mp->ndev - 1);
    for (int64_t j = 0; j < i; j++)
      if (gids[j] == g)
        return xrt__fail(XRT_INVALID_ARGUMENT, "device_assignment[%" PRId64
                         "] and [%" PRId64 "] are both device %d", j, i, g);
    gids[i] = g;
    proc[i] = xrt__mp_process_of(mp, g);
    e->assignment[i] = proc[i] == mp->me ? g - mp->first[mp->me] : -1;
  }
  return XRT_OK;
}

XRT__PRIVATE void xrt__mp_compile_args(const xrt__executable *e,
                                 xrt_plugin_compile_args *a) {
  const struct xrt__mp *mp = e->client->mp;
  if (!mp) return;
  a->participant_process =
      e->assignment + (size_t)e->num_replicas * (size_t)e->num_partitions;
  a->process_index = mp->me;
}

XRT__PRIVATE xrt_device *xrt__mp_device_of(const xrt__executable *e, int logical) {
  size_t n = (size_t)e->num_replicas * (size_t)e->num_partitions;
  const struct xrt__mp *mp = e->client->mp;
  return (xrt_device *)mp->rdevs[e->assignment[2 * n + (size_t)logical]]
      .handle;
}

XRT__PRIVATE xrt_status xrt__mp_not_here(const xrt__executable *e, int logical) {
  size_t n = (size_t)e->num_replicas * (size_t)e->num_partitions;
  return xrt__fail(XRT_INVALID_ARGUMENT, "replica %d, partition %d of @%s "
                   "runs on device %d of process %d: this is process %d",
                   logical / e->num_partitions, logical % e->num_partitions,
                   xrt__exe_name(e), (int)e->assignment[2 * n + (size_t)logical],
                   (int)e->assignment[n + (size_t)logical],
                   e->client->mp->me);
}

/* ---- execution ---- */

static xrt_status xrt__mp_multi_check(xrt__executable *e, int num_lists,
                                      int num_args, int num_outputs,
                                      xrt_buffer *const *const *lists,
                                      xrt_buffer **const *outs,
                                      const xrt_execute_options *o) {
  int n = e->num_replicas * e->num_partitions;
  if (num_lists != n)
    return xrt__fail(XRT_INVALID_ARGUMENT, "num_lists is %d, @%s runs on %d "
                     "replica(s) x %d partition(s) = %d device(s) of all "
                     "processes", num_lists, xrt__exe_name(e),
                     (int)e->num_replicas, (int)e->num_partitions, n);
  if (num_args != e->num_inputs)
    return xrt__fail(XRT_INVALID_ARGUMENT, "@%s takes %d argument(s), got %d",
                     xrt__exe_name(e), e->num_inputs, num_args);
  if (num_outputs != e->num_outputs)
    return xrt__fail(XRT_INVALID_ARGUMENT, "@%s returns %d result(s), room "
                     "for %d was given", xrt__exe_name(e), e->num_outputs,
                     num_outputs);
  if (o && o->devices)
    return xrt__fail(XRT_INVALID_ARGUMENT, "options.devices: a launch over "
                     "several processes runs on the executable's device "
                     "assignment");
  XRT__CHECK_ARG(lists || num_args == 0, "argument_lists is NULL");
  XRT__CHECK_ARG(outs || num_outputs == 0, "output_lists is NULL");
  for (int i = 0; i < n; i++)
    if (e->assignment[i] >= 0 && ((num_args && !lists[i]) ||
                                  (num_outputs && !outs[i])))
      return xrt__fail(XRT_INVALID_ARGUMENT, "the argument or output list of "
                       "participant %d (on this process) is NULL", i);
  return XRT_OK;
}

/* xrt_execute_multi on a multi-process client: this process's
 * participants only (it holds e). */
XRT__PRIVATE xrt_status xrt__mp_execute_multi(
    xrt__executable *e, xrt_buffer *const *const *lists, int num_lists,
    int num_args, xrt_buffer **const *outs, int num_outputs,
    const xrt_execute_options *o, xrt_event **out_done) {
  xrt__client *c = e->client;
  xrt__multi m;
  memset(&m, 0, sizeof m);
  int lids[XRT__ARRAY_SIZE(m.devs)];
  xrt_status s = xrt__mp_multi_check(e, num_lists, num_args, num_outputs,
                                     lists, outs, o);
  for (int i = 0; !s && i < num_lists; i++) {
    if (e->assignment[i] < 0) continue;
    if (m.n == (int)XRT__ARRAY_SIZE(m.devs)) {
      s = xrt__fail(XRT_INVALID_ARGUMENT, "more than %d participants on one "
                    "process", m.n);
      break;
    }
    lids[m.n] = i;
    m.devs[m.n++] = &c->devices[e->assignment[i]];
  }
  /* Counted even when this process runs nobody, so ids stay in step. */
  uint64_t id = o && o->launch_id
                    ? o->launch_id
                    : atomic_fetch_add_explicit(&c->mp->next_launch, 1,
                                                memory_order_relaxed);
  if (!s && m.n == 0) { /* nothing here: done at once */
    xrt__executable_unref(e);
    if (!out_done) return XRT_OK;
    xrt__event *ev = xrt__event_new(c, 0);
    if (!ev) return xrt__nomem("an event");
    xrt__event_complete(ev, XRT_OK, NULL);
    s = xrt__event_publish(ev, out_done);
    xrt__event_unref(ev);
    return s;
  }
  if (!s) s = xrt__multi_fill(e, &m, lids, lists, NULL, &id); /* ours */
  if (!s) s = xrt__multi_start(e, &m, lids, num_outputs ? outs : NULL,
                               out_done);
  xrt__multi_free(e, &m, !s);
  xrt__executable_unref(e);
  return s;
}

/* ---- per-participant launches across processes (issue #11) ----
 *
 * Included once in section 13a.  Besides xrt_execute_multi, a launch of a
 * multi-process executable can be made participant by participant, as
 * MPMD launches are (xrt_execute_async with options.launch_id, replica and
 * partition: xrt__exec_position refuses a participant of another process).
 * Every process then runs its own participants under one launch id, so
 * the id must be the same in every process: xrt_client_new_launch_id on a
 * multi-process client counts from the same counter as
 * xrt__mp_execute_multi, which every process advances alike as long as
 * they issue the same launches in the same order. */

XRT__PRIVATE uint64_t xrt__mp_new_launch_id(xrt__client *c) {
  return atomic_fetch_add_explicit(&c->mp->next_launch, 1,
                                   memory_order_relaxed);
}

/* ---- without MPI: the calls exist and say so ---- */

#ifndef XRT_HAVE_MPI
void xrt_mpi_options_init(xrt_mpi_options *options) {
  if (!options) return;
  memset(options, 0, sizeof *options);
  options->topology.process_index = options->topology.process_count = -1;
  options->topology.host_index = -1;
  options->topology.local_rank = options->topology.local_world_size = -1;
  options->timeout_ms = 60000;
}

xrt_status xrt_mpi_init(const xrt_mpi_options *options) {
  XRT__UNUSED(options);
  return xrt__fail(XRT_UNIMPLEMENTED, "xrt_mpi_init: xrt was built without "
                   "MPI (build with make XRT_MPI=1)");
}

xrt_status xrt_mpi_finalize(void) {
  return xrt__fail(XRT_UNIMPLEMENTED, "xrt_mpi_finalize: xrt was built "
                   "without MPI (build with make XRT_MPI=1)");
}

xrt_status xrt_mpi_set_timeout(int64_t timeout_ms) {
  XRT__UNUSED(timeout_ms);
  return xrt__fail(XRT_UNIMPLEMENTED, "xrt_mpi_set_timeout: xrt was built "
                   "without MPI (build with make XRT_MPI=1)");
}

xrt_status xrt_mpi_topology(xrt_topology *out) {
  XRT__UNUSED(out);
  return xrt__fail(XRT_UNIMPLEMENTED, "xrt_mpi_topology: xrt was built "
                   "without MPI (build with make XRT_MPI=1)");
}
#endif
