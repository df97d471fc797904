/*
 * src/sim/launch.c - send / recv between devices of a launch, fault injection,
 * per-device frames, launch shape.
 * Part of the simulated device; MIT licensed, see LICENSE.
 */
#include "internal.h"

/* ======================================================================
 * send / recv between devices of a launch (is_host_transfer = false)
 *
 * A send copies its tensors into a message queued on the launch; a recv
 * takes the oldest message of its channel, waiting for one.
 * ==================================================================== */

typedef struct sim_chan {
  int64_t channel;
  int32_t n;           /* tensors (tokens carry nothing) */
  const int32_t *ids;  /* their value ids */
  const size_t *bytes; /* their sizes */
  size_t total;
} sim_chan;

static xrt_status sim_run_d2d_send(const sim_step *st, void **vals,
                                   sim_cx *cx) {
  const sim_chan *ch = (const sim_chan *)st->data;
  struct sim_launch *l = cx->launch;
  const sim_client *c = cx->exe->cl;
  if (!l)
    return sim_fail_op(cx->err, st->op, XRT_INTERNAL, "send outside a launch");
  sim_msg *m = (sim_msg *)c->al.alloc(c->al.self, sizeof *m + ch->total + 1);
  if (!m)
    return sim_fail_op(cx->err, st->op, XRT_RESOURCE_EXHAUSTED, "send: out "
                       "of host memory for %zu bytes", ch->total);
  m->next = NULL;
  m->channel = ch->channel;
  m->bytes = ch->total;
  char *p = (char *)(m + 1);
  for (int32_t i = 0; i < ch->n; i++) {
    if (ch->bytes[i]) memcpy(p, vals[ch->ids[i]], ch->bytes[i]);
    p += ch->bytes[i];
  }
  pthread_mutex_lock(&l->mu);
  sim_msg **pp = &l->msgs;
  while (*pp) pp = &(*pp)->next;
  *pp = m;
  sim_launch_changed(l);
  pthread_mutex_unlock(&l->mu);
  return XRT_OK;
}

/* Takes the oldest message of the channel, waiting for a send.  mu held. */
static xrt_status sim_recv_take(sim_cx *cx, struct sim_launch *l,
                                const sim_step *st, const sim_chan *ch,
                                sim_msg **out) {
  uint64_t epoch = ~(uint64_t)0;
  char what[64];
  snprintf(what, sizeof what, "a send on channel %lld",
           (long long)ch->channel);
  for (;;) {
    if (l->failed) return sim_coll_peer_failed(cx, l, st->op);
    for (sim_msg **pp = &l->msgs; *pp; pp = &(*pp)->next)
      if ((*pp)->channel == ch->channel) {
        *out = *pp;
        *pp = (*pp)->next;
        return XRT_OK;
      }
    xrt_status rc = sim_launch_block(cx, l, &epoch, st->op, what);
    if (rc) return rc;
  }
}

static xrt_status sim_run_d2d_recv(const sim_step *st, void **vals,
                                   sim_cx *cx) {
  const sim_chan *ch = (const sim_chan *)st->data;
  struct sim_launch *l = cx->launch;
  const sim_client *c = cx->exe->cl;
  if (!l)
    return sim_fail_op(cx->err, st->op, XRT_INTERNAL, "recv outside a launch");
  sim_msg *m = NULL;
  pthread_mutex_lock(&l->mu);
  xrt_status rc = sim_recv_take(cx, l, st, ch, &m);
  pthread_mutex_unlock(&l->mu);
  if (rc) return rc;
  if (m->bytes != ch->total) {
    size_t got = m->bytes;
    c->al.free(c->al.self, m);
    rc = sim_fail_op(cx->err, st->op, XRT_INVALID_ARGUMENT, "recv on channel "
                     "%lld expects %zu bytes, the send had %zu",
                     (long long)ch->channel, ch->total, got);
    pthread_mutex_lock(&l->mu);
    sim_coll_self_fail(cx, l, rc);
    pthread_mutex_unlock(&l->mu);
    return rc;
  }
  const char *p = (const char *)(m + 1);
  for (int32_t i = 0; i < ch->n; i++) {
    if (ch->bytes[i]) memcpy(vals[ch->ids[i]], p, ch->bytes[i]);
    p += ch->bytes[i];
  }
  c->al.free(c->al.self, m);
  return XRT_OK;
}

/* The tensor values among ids[0..n) and their sizes. */
static xrt_status sim_chan_plan(sim_fcc *fc, const xrt_ir_op *op,
                                const int32_t *ids, int32_t n,
                                sim_step *st) {
  sim_chan *ch = (sim_chan *)sim_palloc(fc, sizeof *ch);
  int32_t *t = (int32_t *)sim_palloc(fc, sizeof *t * (size_t)(n + 1));
  size_t *b = (size_t *)sim_palloc(fc, sizeof *b * (size_t)(n + 1));
  if (!ch || !t || !b) return XRT_RESOURCE_EXHAUSTED;
  ch->channel = sim_channel_id(op);
  for (int32_t i = 0; i < n; i++) {
    const xrt_ir_type *ty = &fc->f->value_types[ids[i]];
    if (ty->kind == XRT_TYPE_TOKEN) continue;
    if (ty->kind != XRT_TYPE_TENSOR)
      return sim_fail_op(fc->cc->err, op, XRT_UNIMPLEMENTED, "%s: tuple "
                         "values cannot be sent", op->name);
    t[ch->n] = ids[i];
    b[ch->n] = sim_bytes(&ty->shape);
    ch->total += b[ch->n++];
  }
  ch->ids = t;
  ch->bytes = b;
  st->data = ch;
  fc->cc->exe->has_coll = 1;
  return XRT_OK;
}

/* send/recv: to the host (is_host_transfer) or to a device of the launch. */
SIM_PRIVATE xrt_status sim_lower_send_any(sim_fcc *fc, const xrt_ir_op *op,
                                     sim_step *st) {
  if (sim_flag(op, "is_host_transfer")) return sim_lower_send(fc, op, st);
  xrt_status rc = sim_chan_plan(fc, op, op->operands, op->num_operands, st);
  if (!rc) st->run = sim_run_d2d_send;
  return rc;
}

SIM_PRIVATE xrt_status sim_lower_recv_any(sim_fcc *fc, const xrt_ir_op *op,
                                     sim_step *st) {
  if (sim_flag(op, "is_host_transfer")) return sim_lower_recv(fc, op, st);
  xrt_status rc = sim_chan_plan(fc, op, op->results, op->num_results, st);
  if (!rc) st->run = sim_run_d2d_recv;
  return rc;
}

/* ======================================================================
 * Fault injection
 * ==================================================================== */

/* Names the kernel it stops at (op and location), so that a dependent's
 * error says which device and which operation failed. */
SIM_PRIVATE xrt_status sim_fault_hit(sim_cx *cx, const sim_step *s) {
  char where[320] = "a kernel";
  if (s && s->op) {
    const char *name = s->op->name;
    if (strncmp(name, "stablehlo.", 10) == 0) name += 10;
    int n = snprintf(where, sizeof where, "the %s kernel at ", name);
    if (n > 0 && (size_t)n < sizeof where)
      sim_loc(s->op, where + n, sizeof where - (size_t)n);
    size_t len = strlen(where);
    if (len >= 2 && where[len - 2] == ':') where[len - 2] = 0; /* "l:c: " */
  }
  return sim_fail(cx->err, XRT_INTERNAL, "device %d: injected fault after "
                  "%lld steps of @%s, in %s", cx->xa ? cx->xa->device : 0,
                  (long long)cx->fault_after,
                  cx->exe->m->funcs[cx->exe->entry].name, where);
}

SIM_PRIVATE xrt_status sim_inject_fault(void *client, int device,
                                   int64_t after_steps,
                                   xrt_plugin_error *err) {
  sim_client *c = (sim_client *)client;
  xrt_status rc = sim_check_device(c, device, err);
  if (rc) return rc;
  if (after_steps < 0 || after_steps == INT64_MAX)
    return sim_fail(err, XRT_INVALID_ARGUMENT, "after_steps must be >= 0, "
                    "not %lld", (long long)after_steps);
  atomic_store(&c->dev[device].fault, after_steps + 1);
  return XRT_OK;
}

/* The armed fault of the device, disarmed (one-shot); -1: none. */
SIM_PRIVATE int64_t sim_fault_take(sim_client *c, int device) {
  _Atomic int64_t *f = &c->dev[device].fault;
  if (atomic_load_explicit(f, memory_order_relaxed) == 0) return -1;
  return atomic_exchange(f, 0) - 1;
}

/* ======================================================================
 * Per-device frames
 * ==================================================================== */

/* The device's frame of e, made on first use; *tmp when it is busy (a
 * concurrent execute on the same device). */
SIM_PRIVATE xrt_status sim_frame_acquire(sim_exe *e, int device, sim_frame *tmp,
                                    sim_frame **out, xrt_plugin_error *err) {
  *out = NULL;
  if (!atomic_exchange(&e->dbusy[device], 1)) {
    sim_frame *fr = &e->dframes[device];
    xrt_status rc = XRT_OK;
    pthread_mutex_lock(&e->mu);
    if (!fr->block) rc = sim_frame_make(e, fr, err);
    pthread_mutex_unlock(&e->mu);
    if (rc) {
      atomic_store(&e->dbusy[device], 0);
      return rc;
    }
    *out = fr;
    return XRT_OK;
  }
  memset(tmp, 0, sizeof *tmp);
  xrt_status rc = sim_frame_make(e, tmp, err);
  if (!rc) *out = tmp;
  return rc;
}

SIM_PRIVATE void sim_frame_release(sim_exe *e, int device, sim_frame *fr,
                              sim_frame *tmp) {
  if (fr == tmp) sim_frame_free(e, tmp);
  else if (fr) atomic_store(&e->dbusy[device], 0);
}

/* ======================================================================
 * Launch shape: compile and execute
 * ==================================================================== */

/* The replicas and partitions an executable runs in: the compile
 * arguments', else the module's. */
SIM_PRIVATE xrt_status sim_compile_launch_shape(sim_exe *e,
                                           const xrt_plugin_compile_args *a,
                                           xrt_plugin_error *err) {
  int32_t r = a->num_replicas > 0 ? a->num_replicas : a->module->num_replicas;
  int32_t p = a->num_partitions > 0 ? a->num_partitions
                                    : a->module->num_partitions;
  e->nrep = r > 0 ? r : 1;
  e->npart = p > 0 ? p : 1;
  if ((int64_t)e->nrep * e->npart > SIM_MAX_PROCS)
    return sim_fail(err, XRT_INVALID_ARGUMENT, "%d replicas x %d partitions "
                    "is more than the simulator's %d processes",
                    (int)e->nrep, (int)e->npart, SIM_MAX_PROCS);
  return XRT_OK;
}

/* A launch of one participant, outside the registry. */
SIM_PRIVATE xrt_status sim_launch_own(struct sim_launch *l, sim_part *part,
                                 const xrt_plugin_execute_args *a,
                                 xrt_plugin_error *err) {
  memset(l, 0, sizeof *l);
  if (pthread_mutex_init(&l->mu, NULL) != 0)
    return sim_fail(err, XRT_INTERNAL, "pthread_mutex_init failed");
  if (pthread_cond_init(&l->cv, NULL) != 0) {
    pthread_mutex_destroy(&l->mu);
    return sim_fail(err, XRT_INTERNAL, "pthread_cond_init failed");
  }
  l->parts = part;
  l->cap = 1;
  sim_launch_reset(l, a->launch_id, 1, 1);
  part->joined = 1;
  part->device = a->device;
  l->joined = 1;
  return XRT_OK;
}

/* collective_reduce: an all_reduce whose result only the first member of
 * each group keeps (the root); the other members get zeros. */
SIM_PRIVATE xrt_status sim_run_collective_reduce(const sim_step *st, void **vals,
                                            sim_cx *cx) {
  const sim_coll *k = (const sim_coll *)st->data;
  xrt_status rc = sim_run_all_reduce(st, vals, cx);
  int32_t proc = sim_proc_of(cx);
  if (rc || !k->pgroup || k->pgroup[proc] < 0 || k->pindex[proc] == 0)
    return rc;
  for (int32_t j = 0; j < k->nops; j++) /* peers are done reading it */
    memset(vals[st->out[j]], 0, (size_t)k->numel[j] * k->es[j]);
  return XRT_OK;
}

SIM_PRIVATE xrt_status sim_lower_collective_reduce(sim_fcc *fc, const xrt_ir_op *op,
                                              sim_step *st) {
  xrt_status rc = sim_lower_all_reduce(fc, op, st);
  if (!rc) st->run = sim_run_collective_reduce;
  return rc;
}
