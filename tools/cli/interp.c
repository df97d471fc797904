/*
 * interp.c - the StableHLO interpreter's test ops for the xrt command-line
 * tool, as host functions on an interp_state (cli.h).  MIT licensed; see
 * LICENSE.
 *
 * The interpreter's own ops reach the CLI as custom_calls: interpreter.print
 * prints its operand, interpreter.probe records a copy of its operand per
 * probe_id and iteration, and check.expect_serialized_eq compares a value
 * with a record.  Infeed, outfeed and send/recv with is_host_transfer are
 * served from host queues; interpreter.run_parallel is in run_parallel.c.
 */
#include "cli.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* ---- host queues and the interp_state ---- */

static void hmsg_free(hmsg *m) {
  for (int i = 0; m && i < m->n; i++) free(m->t[i].data);
  free(m);
}

void hq_push(hqueue *q, hmsg *m) {
  m->next = NULL;
  if (q->tail) q->tail->next = m;
  else q->head = m;
  q->tail = m;
}

static hmsg *hq_pop(hqueue *q) {
  hmsg *m = q->head;
  if (m && !(q->head = m->next)) q->tail = NULL;
  return m;
}

static void hq_clear(hqueue *q) {
  for (hmsg *m; (m = hq_pop(q)) != NULL;) hmsg_free(m);
}

void interp_init(interp_state *st) {
  memset(st, 0, sizeof *st);
  pthread_mutex_init(&st->mu, NULL);
  pthread_mutex_init(&st->qmu, NULL);
  pthread_cond_init(&st->qcv, NULL);
}

void interp_reset(interp_state *st) {
  for (size_t i = 0; i < st->num_recs; i++) {
    free(st->recs[i].id);
    free(st->recs[i].data);
  }
  st->num_recs = 0;
  st->out.n = 0;
  if (st->out.s) st->out.s[0] = 0;
  st->module = st->module2 = NULL;
  st->prog = NULL;
  st->text = NULL;
  hq_clear(&st->infeed);
  while (st->chans) {
    hchan *c = st->chans;
    st->chans = c->next;
    hq_clear(&c->q);
    free(c);
  }
}

void interp_free(interp_state *st) {
  interp_reset(st);
  xrt_client_release(st->par);
  free(st->hold.s);
  free(st->recs);
  free(st->out.s);
  pthread_cond_destroy(&st->qcv);
  pthread_mutex_destroy(&st->qmu);
  pthread_mutex_destroy(&st->mu);
}

/* ---- interpreter.print, interpreter.probe, check.expect_serialized_eq ---- */

/* The name MLIR prints for value v of a function ("%3 = ", "%0:2 = "):
 * each op's results are one numbered group, in order, a nested region
 * continuing from its op's count.  The interpreter prints a block argument's description up to a
 * '=' it does not have, which leaves just "<". */
static int ssa_name(const xrt_ir_region *r, int32_t v, int64_t c, char *out, size_t cap) {
  for (int32_t i = 0; i < r->num_args; i++)
    if (r->args[i] == v) {
      snprintf(out, cap, "<");
      return 1;
    }
  for (int32_t i = 0; i < r->num_ops; i++) {
    const xrt_ir_op *op = &r->ops[i];
    for (int32_t k = 0; k < op->num_results; k++)
      if (op->results[k] == v) {
        if (op->num_results == 1) snprintf(out, cap, "%%%" PRId64 " = ", c);
        else snprintf(out, cap, "%%%" PRId64 ":%d = ", c, (int)op->num_results);
        return 1;
      }
    c += op->num_results > 0;
    for (int32_t k = 0; k < op->num_regions; k++)
      if (ssa_name(&op->regions[k], v, c, out, cap)) return 1;
  }
  return 0;
}

static int region_has_op(const xrt_ir_region *r, const xrt_ir_op *op) {
  for (int32_t i = 0; i < r->num_ops; i++) {
    if (&r->ops[i] == op) return 1;
    for (int32_t k = 0; k < r->ops[i].num_regions; k++)
      if (region_has_op(&r->ops[i].regions[k], op)) return 1;
  }
  return 0;
}

static void print_prefix(const interp_state *st, const xrt_ir_op *op, char *out, size_t cap) {
  out[0] = 0;
  for (int k = 0; k < 2; k++) {
    const xrt_ir_module *m = k ? st->module2 : st->module;
    for (int32_t i = 0; m && op && op->num_operands > 0 && i < m->num_funcs; i++)
      if (region_has_op(&m->funcs[i].body, op)) {
        ssa_name(&m->funcs[i].body, op->operands[0], 0, out, cap);
        return;
      }
  }
}

static int one_input(xrt_host_call *call) {
  return call->num_inputs == 1 && call->inputs[0].bytes == xrt_shape_bytes(&call->inputs[0].shape);
}

static xrt_status host_print(void *user, xrt_host_call *call) {
  interp_state *st = user;
  if (!one_input(call))
    return xrt_host_call_fail(call, XRT_INVALID_ARGUMENT, "%s takes one tensor", call->target);
  char prefix[64];
  print_prefix(st, call->op, prefix, sizeof prefix);
  interp_emit(st, prefix, &call->inputs[0].shape, call->inputs[0].data);
  return XRT_OK;
}

static const xrt_ir_attr *string_attr(const xrt_ir_op *op, const char *name) {
  const xrt_ir_attr *a = op ? xrt_ir_op_attr(op, name) : NULL;
  return a && a->kind == XRT_ATTR_STRING ? a : NULL;
}

/* Room for one more probe record, if memory allows (callers hold st->mu
 * and check num_recs < cap_recs). */
void cli_probe_room(interp_state *st) {
  if (st->num_recs < st->cap_recs) return;
  size_t cap = st->cap_recs ? 2 * st->cap_recs : 16;
  probe_rec *nr = realloc(st->recs, cap * sizeof *nr);
  if (nr) {
    st->recs = nr;
    st->cap_recs = cap;
  }
}

static int same_id(const probe_rec *r, const xrt_ir_attr *id) {
  return strlen(r->id) == (size_t)id->n && memcmp(r->id, id->s, (size_t)id->n) == 0;
}

static xrt_status host_probe(void *user, xrt_host_call *call) {
  interp_state *st = user;
  const xrt_ir_attr *id = string_attr(call->op, "probe_id");
  if (!one_input(call) || call->num_outputs != 1 || !id ||
      call->outputs[0].bytes != call->inputs[0].bytes)
    return xrt_host_call_fail(call, XRT_INVALID_ARGUMENT,
                              "%s takes one tensor, returns it and needs a probe_id",
                              call->target);
  const xrt_host_tensor *in = &call->inputs[0];
  if (in->bytes) memcpy(call->outputs[0].data, in->data, in->bytes);
  probe_rec r = {malloc((size_t)id->n + 1), in->shape, malloc(in->bytes ? in->bytes : 1),
                 in->bytes};
  xrt_status s = XRT_OK;
  pthread_mutex_lock(&st->mu);
  cli_probe_room(st);
  if (!r.id || !r.data || st->num_recs == st->cap_recs) {
    s = XRT_RESOURCE_EXHAUSTED;
  } else {
    memcpy(r.id, id->s, (size_t)id->n);
    r.id[id->n] = 0;
    if (in->bytes) memcpy(r.data, in->data, in->bytes);
    st->recs[st->num_recs++] = r;
  }
  pthread_mutex_unlock(&st->mu);
  if (s) {
    free(r.id);
    free(r.data);
    return xrt_host_call_fail(call, s, "out of memory recording probe");
  }
  return XRT_OK;
}

static xrt_status host_serialized_eq(void *user, xrt_host_call *call) {
  interp_state *st = user;
  const xrt_ir_attr *id = string_attr(call->op, "probe_id");
  const xrt_ir_attr *it = call->op ? xrt_ir_op_attr(call->op, "iter") : NULL;
  int64_t iter = it && it->kind == XRT_ATTR_INT ? it->i : 0;
  if (!one_input(call) || !id)
    return xrt_host_call_fail(call, XRT_INVALID_ARGUMENT,
                              "%s takes one tensor and needs a probe_id", call->target);
  const xrt_ir_loc *l = &call->op->loc;
  const xrt_host_tensor *in = &call->inputs[0];
  xrt_status s = XRT_OK;
  char want[256], got[256];
  pthread_mutex_lock(&st->mu);
  const probe_rec *r = NULL;
  int64_t seen = 0;
  for (size_t i = 0; i < st->num_recs && !r; i++)
    if (same_id(&st->recs[i], id) && seen++ == iter) r = &st->recs[i];
  if (!r) {
    s = xrt_host_call_fail(call, XRT_CHECK_FAILED,
                           "%s:%d:%d: %s: probe '%.*s' has no iteration %" PRId64
                           " (it ran %" PRId64 " time%s)",
                           l->file, (int)l->line, (int)l->col, call->target, (int)id->n,
                           id->s, iter, seen, seen == 1 ? "" : "s");
  } else {
    xrt_shape_format(&r->shape, want, sizeof want);
    xrt_shape_format(&in->shape, got, sizeof got);
    int same_type = strcmp(want, got) == 0 && r->bytes == in->bytes;
    if (!same_type || (in->bytes && memcmp(r->data, in->data, in->bytes) != 0))
      s = xrt_host_call_fail(call, XRT_CHECK_FAILED,
                             "%s:%d:%d: %s: %s differs from probe '%.*s' iteration %" PRId64
                             "%s%s%s",
                             l->file, (int)l->line, (int)l->col, call->target, got,
                             (int)id->n, id->s, iter, same_type ? "" : " (which is ",
                             same_type ? "" : want, same_type ? "" : ")");
  }
  pthread_mutex_unlock(&st->mu);
  return s;
}

/* ---- the host's infeed, outfeed, send and recv ---- */

/* A recv nobody sends to fails after this long rather than hang:
 * XRT_RECV_TIMEOUT_MS, default 10 s. */
int64_t cli_recv_timeout_ms(void) {
  const char *e = getenv("XRT_RECV_TIMEOUT_MS");
  char *end;
  long long v = e ? strtoll(e, &end, 10) : 0;
  return e && *e && !*end && v > 0 && v < 86400000 ? (int64_t)v : 10000;
}

/* A copy of n host tensors as one queue entry; NULL when out of memory. */
hmsg *hmsg_new(const xrt_host_tensor *t, int n) {
  hmsg *m = calloc(1, sizeof *m + (size_t)n * sizeof *t);
  if (!m) return NULL;
  for (int i = 0; i < n; i++) {
    m->t[i] = t[i];
    m->t[i].data = malloc(t[i].bytes ? t[i].bytes : 1);
    m->n = i + 1;
    if (!m->t[i].data) {
      hmsg_free(m);
      return NULL;
    }
    if (t[i].bytes) memcpy(m->t[i].data, t[i].data, t[i].bytes);
  }
  return m;
}

/* Fills the call's outputs from a queue entry of the same types. */
static xrt_status hmsg_deliver(const hmsg *m, xrt_host_call *call, const char *what) {
  if (m->n != call->num_outputs)
    return xrt_host_call_fail(call, XRT_INVALID_ARGUMENT, "%s: %s has %d value%s but the op "
                              "takes %d", call->target, what, m->n, m->n == 1 ? "" : "s",
                              call->num_outputs);
  for (int i = 0; i < m->n; i++) {
    xrt_host_tensor *o = &call->outputs[i];
    char have[256], want[256];
    xrt_shape_format(&m->t[i].shape, have, sizeof have);
    xrt_shape_format(&o->shape, want, sizeof want);
    if (strcmp(have, want) != 0 || m->t[i].bytes != o->bytes)
      return xrt_host_call_fail(call, XRT_INVALID_ARGUMENT, "%s: value %d of %s is %s but the "
                                "op takes %s", call->target, i, what, have, want);
    if (o->bytes) memcpy(o->data, m->t[i].data, o->bytes);
  }
  return XRT_OK;
}

/* infeed: the next entry of the queue run_parallel's infeed functions
 * filled. */
static xrt_status host_infeed(void *user, xrt_host_call *call) {
  interp_state *st = user;
  pthread_mutex_lock(&st->qmu);
  hmsg *m = hq_pop(&st->infeed);
  pthread_mutex_unlock(&st->qmu);
  if (!m)
    return xrt_host_call_fail(call, XRT_OUT_OF_RANGE, "%s: the infeed queue is empty (values "
                              "come from interpreter.run_parallel's infeed = [@f, ...])",
                              call->target);
  xrt_status s = hmsg_deliver(m, call, "the next infeed entry");
  hmsg_free(m);
  return s;
}

/* outfeed: the interpreter keeps the values for no one; neither do we. */
static xrt_status host_outfeed(void *user, xrt_host_call *call) {
  (void)user;
  (void)call;
  return XRT_OK;
}

int cli_channel_handle(const xrt_ir_op *op, int64_t *out) {
  const xrt_ir_attr *ch = op ? xrt_ir_op_attr(op, "channel_handle") : NULL;
  const xrt_ir_attr *h = xrt_ir_attr_field(ch, "handle");
  if (!h || h->kind != XRT_ATTR_INT) return -1;
  *out = h->i;
  return 0;
}

/* The channel of a handle, created on first use; call with qmu held. */
static hchan *find_channel(interp_state *st, int64_t handle) {
  for (hchan *c = st->chans; c; c = c->next)
    if (c->handle == handle) return c;
  hchan *c = calloc(1, sizeof *c);
  if (!c) return NULL;
  c->handle = handle;
  c->next = st->chans;
  st->chans = c;
  return c;
}

/* --mpi: the process at the other end of a host transfer on handle when
 * that is not this one (sending: the receiver's, receiving: the
 * sender's), with the transfer's number on its route; -1: it stays here,
 * on the channel's queue; -2: the channel cannot be routed. */
static int route_peer(interp_state *st, int64_t handle, int sending, uint64_t *seq) {
  int peer = -1;
  if (!cli_mpi_job.on) return -1;
  pthread_mutex_lock(&st->qmu);
  for (int i = 0; i < st->nroutes; i++) {
    rp_route *r = &st->routes[i];
    if (r->handle != handle) continue;
    int other = sending ? r->recv_proc : r->send_proc;
    if (r->spread) {
      peer = -2;
    } else if (other >= 0 && other != cli_mpi_job.me) {
      peer = other;
      *seq = sending ? r->nsent++ : r->nrecv++;
    }
    break;
  }
  pthread_mutex_unlock(&st->qmu);
  return peer;
}

static xrt_status route_spread(xrt_host_call *call, int64_t handle) {
  return xrt_host_call_fail(call, XRT_UNIMPLEMENTED, "%s: channel %" PRId64 " has senders or "
                            "receivers on several processes (--mpi routes a host channel "
                            "between one process and one other)", call->target, handle);
}

/* The exchange tag of a host transfer, alike at both ends: the launch's
 * number, the channel, the transfer's number (48 bits, below
 * XRT_USER_TAG_LIMIT). */
static uint64_t route_tag(const interp_state *st, int64_t handle, uint64_t seq) {
  return (st->launch_no & 0xFFFFF) << 28 | ((uint64_t)handle & 0xFFF) << 16 | (seq & 0xFFFF);
}

/* Moves a host transfer's values to (send: its inputs) or from (recv:
 * its outputs) process peer, as one message. */
static xrt_status remote_transfer(interp_state *st, xrt_host_call *call, int64_t handle,
                                  int peer, uint64_t seq, int send) {
  const xrt_host_tensor *t = send ? call->inputs : call->outputs;
  int n = send ? call->num_inputs : call->num_outputs;
  size_t total = 0, off = 0;
  for (int i = 0; i < n; i++) total += t[i].bytes;
  char *buf = malloc(total ? total : 1);
  if (!buf) return xrt_host_call_fail(call, XRT_RESOURCE_EXHAUSTED, "%s: out of memory",
                                      call->target);
  for (int i = 0; send && i < n; off += t[i].bytes, i++)
    if (t[i].bytes) memcpy(buf + off, t[i].data, t[i].bytes);
  xrt_transport_msg m = {peer, buf, total};
  uint64_t tag = route_tag(st, handle, seq);
  xrt_status s = send ? xrt_client_process_exchange(st->par, tag, &m, 1, NULL, 0)
                      : xrt_client_process_exchange(st->par, tag, NULL, 0, &m, 1);
  for (int i = 0; !s && !send && i < n; off += t[i].bytes, i++)
    if (t[i].bytes) memcpy(call->outputs[i].data, buf + off, t[i].bytes);
  free(buf);
  if (s)
    return xrt_host_call_fail(call, s, "%s: channel %" PRId64 " %s process %d: %s",
                              call->target, handle, send ? "to" : "from", peer,
                              xrt_last_error());
  return XRT_OK;
}

/* send with is_host_transfer: queues a copy on its channel (--mpi: sends
 * it to the receiver's process when that is another). */
static xrt_status host_send(void *user, xrt_host_call *call) {
  interp_state *st = user;
  int64_t handle;
  if (cli_channel_handle(call->op, &handle))
    return xrt_host_call_fail(call, XRT_INVALID_ARGUMENT, "%s needs a channel_handle",
                              call->target);
  uint64_t seq = 0;
  int peer = route_peer(st, handle, 1, &seq);
  if (peer == -2) return route_spread(call, handle);
  if (peer >= 0) return remote_transfer(st, call, handle, peer, seq, 1);
  hmsg *m = hmsg_new(call->inputs, call->num_inputs);
  pthread_mutex_lock(&st->qmu);
  hchan *c = m ? find_channel(st, handle) : NULL;
  if (c) hq_push(&c->q, m);
  pthread_cond_broadcast(&st->qcv);
  pthread_mutex_unlock(&st->qmu);
  if (!c) {
    hmsg_free(m);
    return xrt_host_call_fail(call, XRT_RESOURCE_EXHAUSTED, "%s: out of memory", call->target);
  }
  return XRT_OK;
}

/* recv with is_host_transfer: the oldest value sent on its channel,
 * waiting RECV_TIMEOUT_S seconds for one at most. */
static xrt_status host_recv(void *user, xrt_host_call *call) {
  interp_state *st = user;
  int64_t handle;
  if (cli_channel_handle(call->op, &handle))
    return xrt_host_call_fail(call, XRT_INVALID_ARGUMENT, "%s needs a channel_handle",
                              call->target);
  uint64_t seq = 0;
  int peer = route_peer(st, handle, 0, &seq);
  if (peer == -2) return route_spread(call, handle);
  if (peer >= 0) return remote_transfer(st, call, handle, peer, seq, 0);
  int64_t ms = cli_recv_timeout_ms();
  struct timespec until;
  clock_gettime(CLOCK_REALTIME, &until);
  until.tv_sec += (time_t)(ms / 1000);
  until.tv_nsec += (long)(ms % 1000) * 1000000L;
  if (until.tv_nsec >= 1000000000L) {
    until.tv_sec++;
    until.tv_nsec -= 1000000000L;
  }
  hmsg *m = NULL;
  int timed_out = 0, oom = 0;
  pthread_mutex_lock(&st->qmu);
  for (;;) {
    hchan *c = find_channel(st, handle);
    if (!c) {
      oom = 1;
      break;
    }
    if ((m = hq_pop(&c->q)) != NULL || timed_out) break;
    timed_out = pthread_cond_timedwait(&st->qcv, &st->qmu, &until) ==
                ETIMEDOUT;
  }
  pthread_mutex_unlock(&st->qmu);
  if (!m)
    return oom ? xrt_host_call_fail(call, XRT_RESOURCE_EXHAUSTED, "%s: out of memory",
                                    call->target)
               : xrt_host_call_fail(call, XRT_DEADLINE_EXCEEDED,
                                    "%s: nothing was sent on channel %" PRId64
                                    " within %" PRId64 " ms", call->target, handle, ms);
  xrt_status s = hmsg_deliver(m, call, "what was sent");
  hmsg_free(m);
  return s;
}

xrt_status interp_register(xrt_client *c, interp_state *st) {
  xrt_status s = xrt_client_register_host_function(c, "interpreter.print", host_print, st);
  if (!s) s = xrt_client_register_host_function(c, "interpreter.probe", host_probe, st);
  if (!s)
    s = xrt_client_register_host_function(c, "check.expect_serialized_eq",
                                          host_serialized_eq, st);
  if (!s) s = xrt_client_register_host_function(c, "xrt.infeed", host_infeed, st);
  if (!s) s = xrt_client_register_host_function(c, "xrt.outfeed", host_outfeed, st);
  if (!s) s = xrt_client_register_host_function(c, "xrt.send", host_send, st);
  if (!s) s = xrt_client_register_host_function(c, "xrt.recv", host_recv, st);
  if (!s)
    s = xrt_client_register_host_function(c, "interpreter.run_parallel",
                                          cli_host_run_parallel, st);
  return s;
}
