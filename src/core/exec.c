/*
 * src/core/exec.c - execution: argument validation, single-device, MPMD and
 * multi-device launches.
 * Part of the core of xrt; MIT licensed, see LICENSE.
 */
#include "internal.h"

/* ======================================================================
 * 13. Execution
 *
 * An execution is one participant of a launch (replica, partition) of
 * num_replicas * num_partitions participants.  Everything is validated and
 * allocated before anything is enqueued, so a failed call leaves nothing
 * behind.  A participant's outputs share its event as their ready event.
 * ==================================================================== */

/* Arguments and results a one-device call keeps on the stack; a program
 * with more (models pass thousands of weights) takes one heap block. */
#define XRT__STACK_IO 32

/* Where one participant sits in its launch. */
typedef struct xrt__pos {
  uint64_t launch_id;
  int32_t replica, partition;
} xrt__pos;

#if defined(__GNUC__)
XRT_PRINTF_FORMAT(2, 3)
#endif
XRT__PRIVATE void xrt__msgf(char *dst, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(dst, XRT__MSG_CAP, fmt, ap);
  va_end(ap);
}

XRT__PRIVATE const char *xrt__exe_name(const xrt__executable *e) {
  return e->name;
}

/* Calls the plugin for one participant; on failure msg gets its message. */
static xrt_status xrt__plugin_execute(xrt__executable *e, int device,
                                      const xrt__pos *pos, void *const *in,
                                      int nin, void *const *out, int nout,
                                      const char *abort_message, char *msg) {
  xrt__client *c = e->client;
  xrt_plugin_execute_args a;
  memset(&a, 0, sizeof a);
  a.struct_size = sizeof a;
  a.executable = e->pexe;
  a.device = device;
  a.launch_id = pos->launch_id;
  a.replica = pos->replica;
  a.partition = pos->partition;
  a.num_replicas = e->num_replicas;
  a.num_partitions = e->num_partitions;
  a.args = in;
  a.num_args = nin;
  a.outs = out;
  a.num_outs = nout;
  a.abort_message = abort_message;
  xrt_plugin_error err;
  err.message[0] = 0; /* not = {{0}}: zeroing 1 KiB per dispatch shows */
  if (!abort_message) XRT__STAT(c, EXECS, 1);
  if (!c->api->execute) {
    xrt__msgf(msg, "plugin '%s' does not implement execute", c->api->name);
    return XRT_UNIMPLEMENTED;
  }
  int64_t t0 = xrt__trace_begin();
  xrt_status s = c->api->execute(c->pc, &a, &err);
  if (t0)
    xrt__trace_named(c, device, "execute", e->module_name,
                     xrt__exe_name(e), t0);
  if (s) /* the simulator's messages carry the program location already */
    xrt__msgf(msg, "%s", xrt__plugin_msg(&err));
  return s;
}

/* Waits for a participant's inputs, then runs it (or, when an input
 * failed, lets the plugin release the launch's other participants). */
static xrt_status xrt__exec_run(xrt__device *d, xrt__task *t, char *msg) {
  xrt_status s = XRT_OK;
  xrt__pos pos = {t->launch_id, t->replica, t->partition};
  for (int i = 0; i < t->num_args && !s; i++) {
    xrt__event *ev = t->bufs[i]->ready;
    if (ev && (s = xrt__event_wait(ev)))
      xrt__msgf(msg, "argument %d: %s", i, ev->message);
  }
  if (s) {
    char ignored[XRT__MSG_CAP];
    xrt__plugin_execute(t->exe, d->index, &pos, t->mems, t->num_args,
                        t->mems + t->num_args, t->num_outs, msg, ignored);
    return s;
  }
  return xrt__plugin_execute(t->exe, d->index, &pos, t->mems, t->num_args,
                             t->mems + t->num_args, t->num_outs, NULL, msg);
}

/* Waits for src and copies its failure, if any, into msg. */
static xrt_status xrt__wait_input(xrt__buffer *src, char *msg) {
  xrt_status s = src->ready ? xrt__event_wait(src->ready) : XRT_OK;
  if (s) xrt__msgf(msg, "%s", src->ready->message);
  return s;
}

/* The plugin function a transfer task needs, if the plugin lacks it. */
static const char *xrt__transfer_lacks(const xrt_plugin_api *api, int kind) {
  switch (kind) {
  case XRT__T_WRITE: return api->buffer_write ? NULL : "buffer_write";
  case XRT__T_READ: return api->buffer_read ? NULL : "buffer_read";
  case XRT__T_COPY: return api->buffer_copy ? NULL : "buffer_copy";
  default: return api->inject_fault ? NULL : "inject_fault";
  }
}

static xrt_status xrt__transfer_run(xrt__device *d, xrt__task *t,
                                    char *msg) {
  xrt__client *c = d->client;
  xrt_plugin_error err = {{0}};
  xrt_status s = XRT_OK;
  const char *lacks = xrt__transfer_lacks(c->api, t->kind);
  if (lacks) {
    xrt__msgf(msg, "plugin '%s' does not implement %s", c->api->name, lacks);
    return XRT_UNIMPLEMENTED;
  }
  int64_t t0 = 0; /* traced transfers: their start */
  switch (t->kind) {
  case XRT__T_WRITE:
    XRT__STAT(c, H2D, 1);
    t0 = xrt__trace_begin();
    if (t->dst->bytes)
      s = c->api->buffer_write(c->pc, t->dst->device, t->dst->mem,
                               t->host_src, t->dst->bytes, &err);
    break;
  case XRT__T_READ:
    if ((s = xrt__wait_input(t->src, msg))) return s;
    XRT__STAT(c, D2H, 1);
    t0 = xrt__trace_begin();
    if (t->src->bytes)
      s = c->api->buffer_read(c->pc, t->src->device, t->src->mem,
                              t->host_dst, t->src->bytes, &err);
    break;
  case XRT__T_COPY:
    if ((s = xrt__wait_input(t->src, msg))) return s;
    XRT__STAT(c, COPIES, 1);
    XRT__STAT(c, BYTES_COPIED, t->src->bytes);
    t0 = xrt__trace_begin();
    if (t->src->bytes)
      s = c->api->buffer_copy(c->pc, t->src->device, t->src->mem,
                              t->dst->device, t->dst->mem, t->src->bytes,
                              &err);
    break;
  default: /* XRT__T_FAULT */
    s = c->api->inject_fault(c->pc, d->index, t->steps, &err);
    break;
  }
  if (t0 && !s)
    xrt__trace_transfer(c, d->index, t->kind == XRT__T_WRITE  ? "h2d"
                                     : t->kind == XRT__T_READ ? "d2h"
                                                              : "d2d",
                        t->kind == XRT__T_READ ? &t->src->shape
                                               : &t->dst->shape, t0);
  if (s)
    xrt__msgf(msg, "%s: %s", c->api->name, xrt__plugin_msg(&err));
  return s;
}

/* Drops the task's references to buffers and its executable.  A finished
 * task does this before it completes its event: a caller woken by the
 * event who then releases its buffers frees them on the spot, so the
 * client's stats (device_frees, device_bytes_in_use) are exact once
 * xrt_buffer_release returns, not later when the worker gets round to it. */
static void xrt__task_drop_refs(xrt__task *t) {
  xrt__buffer_unref(t->src);
  xrt__buffer_unref(t->dst);
  t->src = t->dst = NULL;
  for (int i = 0; t->bufs && i < t->num_args + t->num_outs; i++) {
    xrt__buffer_unref(t->bufs[i]);
    t->bufs[i] = NULL;
  }
  if (t->exe) xrt__executable_unref(t->exe);
  t->exe = NULL;
}

XRT__PRIVATE void xrt__task_free(xrt__task *t, xrt__client *c) {
  xrt__task_drop_refs(t);
  xrt__event_unref(t->done);
  xrt__free(&c->allocator, t);
}

/* A participant is done: the launch completes with the first failure when
 * its last participant is (a cause outranks the ABORTED of the peers it
 * released, whichever finished first). */
static void xrt__launch_finish(xrt__client *c, xrt__launch *l, xrt_status s,
                               const char *msg) {
  if (s) {
    pthread_mutex_lock(&c->ev_mu);
    if (!l->code || (l->code == XRT_ABORTED && s != XRT_ABORTED)) {
      l->code = s;
      xrt__msgf(l->message, "%s", msg);
    }
    pthread_mutex_unlock(&c->ev_mu);
  }
  if (atomic_fetch_sub(&l->pending, 1) != 1) return;
  xrt__event_complete(l->done, l->code, l->message);
  xrt__event_unref(l->done);
  xrt__free(&c->allocator, l);
}

XRT__PRIVATE void xrt__task_run(xrt__device *d, xrt__task *t) {
  xrt__client *c = d->client;
  char msg[XRT__MSG_CAP];
  msg[0] = 0;
  if (t->kind == XRT__T_CALLBACKS) {
    xrt__event_run_callbacks(t->done);
  } else if (t->kind == XRT__T_EXEC) {
    xrt_status s = xrt__exec_run(d, t, msg);
    xrt__task_drop_refs(t);
    xrt__event_complete(t->done, s, msg);
    if (t->launch) xrt__launch_finish(c, t->launch, s, msg);
  } else {
    xrt_status s = xrt__transfer_run(d, t, msg);
    xrt__task_drop_refs(t);
    xrt__event_complete(t->done, s, msg);
  }
  xrt__task_free(t, c);
}

/* ---- validation ---- */

/* Checks the executable, device and outputs of a single-device call. */
static xrt_status xrt__exec_check(const xrt__executable *e,
                                  const xrt__device *d,
                                  xrt_buffer **outputs, int num_outputs,
                                  int num_args) {
  XRT__CHECK_ARG(e, "invalid or released executable");
  XRT__CHECK_ARG(d, "invalid device");
  XRT__CHECK_ARG(d->client == e->client, "device belongs to another client");
  XRT__CHECK_ARG(outputs || num_outputs == 0, "outputs is NULL");
  if (num_outputs != e->num_outputs)
    return xrt__fail(XRT_INVALID_ARGUMENT, "@%s returns %d result(s), room "
                     "for %d was given", xrt__exe_name(e), e->num_outputs,
                     num_outputs);
  if (num_args != e->num_inputs)
    return xrt__fail(XRT_INVALID_ARGUMENT, "@%s takes %d argument(s), got %d",
                     xrt__exe_name(e), e->num_inputs, num_args);
  return XRT_OK;
}

/* Checks one argument list and takes a reference to each buffer in bufs
 * (list < 0: a single-device call, else its index for messages). */
static xrt_status xrt__args_acquire(xrt__executable *e, int device,
                                    xrt_buffer *const *args, int num_args,
                                    int list, xrt__buffer **bufs) {
  if (num_args && !args) {
    if (list < 0) return xrt__fail(XRT_INVALID_ARGUMENT, "args is NULL");
    return xrt__fail(XRT_INVALID_ARGUMENT, "argument list %d is NULL", list);
  }
  int i = 0;
  const char *why = NULL;
  for (; i < num_args && !why; i++) {
    xrt__buffer *b = bufs[i] = xrt__buffer_acquire(args[i]);
    if (!b || b->client != e->client) why = "not live";
    else if (b->device != device) why = "device";
    else if (!xrt__shape_equal(&b->shape, &e->inputs[i])) why = "shape";
  }
  if (!why) return XRT_OK;
  xrt__buffer *b = bufs[--i];
  char where[64], have[128], want[128];
  if (list < 0) snprintf(where, sizeof where, "argument %d", i);
  else snprintf(where, sizeof where, "argument list %d, argument %d", list, i);
  xrt_status s;
  if (why[0] == 'n') {
    s = xrt__fail(XRT_INVALID_ARGUMENT, "%s is not a live buffer of this "
                  "executable's client", where);
  } else if (why[0] == 'd') {
    s = xrt__fail(XRT_INVALID_ARGUMENT, "%s lives on device %d, not on "
                  "device %d", where, b->device, device);
  } else {
    xrt_shape_format(&b->shape, have, sizeof have);
    xrt_shape_format(&e->inputs[i], want, sizeof want);
    s = xrt__fail(XRT_INVALID_ARGUMENT, "%s is %s, expected %s", where, have,
                  want);
  }
  for (int k = 0; k <= i; k++) xrt__buffer_unref(bufs[k]);
  return s;
}

static void xrt__bufs_unref(xrt__buffer **bufs, int n) {
  for (int i = 0; i < n; i++) xrt__buffer_unref(bufs[i]);
}

/* A fresh launch id of client c for a launch of one participant.  Ids come
 * from the client's counter in blocks kept per thread, so that a dispatch
 * costs no atomic add; the block is keyed by the client's handle, which is
 * never reused. */
static uint64_t xrt__own_launch_id(xrt__client *c) {
  enum { BLOCK = 256 };
  static XRT__THREAD_LOCAL_SMALL struct {
    uintptr_t client;
    uint64_t next, end;
  } ids;
  if (ids.client != c->handle || ids.next == ids.end) {
    ids.client = c->handle;
    ids.next = atomic_fetch_add_explicit(&c->next_launch_id, BLOCK,
                                         memory_order_relaxed);
    ids.end = ids.next + BLOCK;
  }
  return ids.next++;
}

/* The launch position of a single-device execution: its own 1x1 launch,
 * or a participant of an MPMD launch given by options. */
static xrt_status xrt__exec_position(xrt__executable *e, xrt__device *d,
                                     const xrt_execute_options *o,
                                     xrt__pos *pos) {
  int32_t R = e->num_replicas, P = e->num_partitions;
  xrt__client *c = e->client;
  if (!o || !o->launch_id) {
    if (R * P != 1)
      return xrt__fail(XRT_INVALID_ARGUMENT, "@%s was compiled for %d "
                       "replica(s) x %d partition(s): run it with "
                       "xrt_execute_multi, or give options.launch_id, "
                       "replica and partition", xrt__exe_name(e), (int)R,
                       (int)P);
    if (e->assignment[0] < 0) return xrt__mp_not_here(e, 0);
    pos->launch_id = xrt__own_launch_id(c);
    pos->replica = pos->partition = 0;
    return XRT_OK;
  }
  if (o->replica < 0 || o->replica >= R || o->partition < 0 ||
      o->partition >= P)
    return xrt__fail(XRT_INVALID_ARGUMENT, "options: replica %d, partition "
                     "%d is outside the launch of @%s (%d replica(s) x %d "
                     "partition(s))", o->replica, o->partition,
                     xrt__exe_name(e), (int)R, (int)P);
  int logical = o->replica * P + o->partition;
  if (e->assignment[logical] < 0) return xrt__mp_not_here(e, logical);
  xrt__device *want = o->devices ? xrt__device_get(o->devices[logical])
                                 : &c->devices[e->assignment[logical]];
  if (!want || want->client != c)
    return xrt__fail(XRT_INVALID_ARGUMENT, "options.devices[%d] is not a "
                     "device of this client", logical);
  if (want != d)
    return xrt__fail(XRT_INVALID_ARGUMENT, "replica %d, partition %d of the "
                     "launch runs on device %d, not on device %d", o->replica,
                     o->partition, want->index, d->index);
  pos->launch_id = o->launch_id;
  pos->replica = o->replica;
  pos->partition = o->partition;
  return XRT_OK;
}

/* A participant task over validated, referenced args (it takes its own
 * references), with new outputs whose ready event is the task's. */
static xrt_status xrt__exec_task(xrt__executable *e, xrt__device *d,
                                 const xrt__pos *pos, xrt__buffer **args,
                                 xrt__launch *launch, xrt__task **out) {
  xrt__client *c = e->client;
  int nin = e->num_inputs, nout = e->num_outputs, n = nin + nout;
  xrt__task *t;
  xrt_status s = xrt__task_start(
      c, XRT__T_EXEC, (size_t)n * (sizeof(xrt__buffer *) + sizeof(void *)),
      d->index, &t);
  if (s) return s;
  t->bufs = (xrt__buffer **)(void *)(t + 1);
  t->mems = (void **)(void *)(t->bufs + n);
  t->exe = e;
  atomic_fetch_add(&e->refs, 1);
  t->launch_id = pos->launch_id;
  t->replica = pos->replica;
  t->partition = pos->partition;
  t->num_args = nin;
  for (int i = 0; i < nin; i++) {
    t->bufs[i] = args[i];
    atomic_fetch_add(&args[i]->refs, 1);
    t->mems[i] = args[i]->mem;
  }
  for (int i = 0; i < nout && !s; i++) {
    xrt__buffer *b;
    s = xrt__buffer_new(c, d->index, &e->outputs[i],
                        xrt_shape_bytes(&e->outputs[i]), t->done, &b);
    if (s) break;
    atomic_fetch_add(&b->refs, 1); /* the task's, beside the handle's */
    t->bufs[nin + i] = b;
    t->mems[nin + i] = b->mem;
    t->num_outs = i + 1;
  }
  if (s) {
    for (int i = 0; i < t->num_outs; i++)
      xrt__hkill(t->bufs[nin + i]->handle);
    for (int i = 0; i < t->num_outs; i++)
      xrt__buffer_unref(t->bufs[nin + i]); /* the handle's reference */
    xrt__task_free(t, c);
    return s;
  }
  t->launch = launch;
  *out = t;
  return XRT_OK;
}

/* Gives the caller its outputs (the handles' references stay with them). */
static void xrt__exec_publish(const xrt__task *t, xrt_buffer **outputs) {
  for (int i = 0; i < t->num_outs; i++)
    outputs[i] = (xrt_buffer *)t->bufs[t->num_args + i]->handle;
}

/* Frees a task that was never enqueued, with its outputs. */
static void xrt__exec_task_cancel(xrt__task *t, xrt__client *c) {
  for (int i = 0; i < t->num_outs; i++) {
    xrt__buffer *b = t->bufs[t->num_args + i];
    xrt__hkill(b->handle);
    xrt__buffer_unref(b);
  }
  xrt__task_free(t, c);
}

/* ---- single-device execution ---- */

/* The synchronous fast path: inputs ready, device held by the caller. */
static xrt_status xrt__execute_inline(xrt__executable *e, xrt__device *d,
                                      const xrt__pos *pos, xrt__buffer **args,
                                      xrt_buffer **outputs) {
  void *stack[3 * XRT__STACK_IO];
  xrt__client *c = e->client;
  int nin = e->num_inputs, nout = e->num_outputs;
  void **in_mem = stack, **out_mem = stack + XRT__STACK_IO;
  xrt__buffer **outs = (xrt__buffer **)(void *)(stack + 2 * XRT__STACK_IO);
  void **heap = NULL;
  if (nin > XRT__STACK_IO || nout > XRT__STACK_IO) {
    heap = (void **)xrt__calloc(&c->allocator, (size_t)nin + 2 * (size_t)nout,
                                sizeof(void *));
    if (!heap) return xrt__nomem("the arguments and results of an execute");
    in_mem = heap;
    out_mem = heap + nin;
    outs = (xrt__buffer **)(void *)(out_mem + nout);
  }
  for (int i = 0; i < nout; i++) outs[i] = NULL;
  for (int i = 0; i < nin; i++) in_mem[i] = args[i]->mem;
  xrt_status s = XRT_OK;
  for (int i = 0; !s && i < nout; i++) {
    s = xrt__buffer_new(c, d->index, &e->outputs[i],
                        xrt_shape_bytes(&e->outputs[i]), NULL, &outs[i]);
    if (!s) out_mem[i] = outs[i]->mem;
  }
  if (!s) {
    char msg[XRT__MSG_CAP];
    s = xrt__plugin_execute(e, d->index, pos, in_mem, nin, out_mem, nout,
                            NULL, msg);
    if (s) xrt__fail(s, "%s", msg);
  }
  for (int i = 0; i < nout; i++) {
    if (s) xrt__buffer_discard(outs[i]);
    else outputs[i] = (xrt_buffer *)outs[i]->handle;
  }
  xrt__free(&c->allocator, heap);
  return s;
}

/* Enqueues a single-device execution; outputs get the new buffers. */
static xrt_status xrt__execute_enqueue(xrt__executable *e, xrt__device *d,
                                       const xrt__pos *pos,
                                       xrt__buffer **args,
                                       xrt_buffer **outputs,
                                       xrt__event **done) {
  xrt__task *t;
  xrt_status s = xrt__exec_task(e, d, pos, args, NULL, &t);
  if (s) return s;
  xrt__exec_publish(t, outputs);
  *done = t->done;
  xrt__event_ref(t->done);
  xrt__enqueue(d, t);
  return XRT_OK;
}

/* The first failed argument's error ("argument N: ..."); XRT_UNAVAILABLE
 * if one is still pending; XRT_OK if all are ready. */
static xrt_status xrt__args_state(xrt__buffer **args, int n) {
  xrt_status pending = XRT_OK;
  for (int i = 0; i < n; i++) {
    xrt_status s = xrt__buffer_state(args[i]);
    if (s == XRT_UNAVAILABLE) pending = s;
    else if (s)
      return xrt__fail(s, "argument %d: %s", i, args[i]->ready->message);
  }
  return pending;
}

/* The checks and references every one-device execute starts with: on
 * success the caller holds *e and the argument buffers, in *bufs: stack
 * (XRT__STACK_IO entries) when they fit, else a heap array that
 * xrt__exec_end frees. */
static xrt_status xrt__exec_begin(xrt_executable *executable,
                                  xrt_device *device, xrt_buffer *const *args,
                                  int num_args, xrt_buffer **outputs,
                                  int num_outputs,
                                  const xrt_execute_options *options,
                                  xrt__executable **e_out, xrt__device **d_out,
                                  xrt__pos *pos, xrt__buffer **stack,
                                  xrt__buffer ***bufs) {
  xrt__executable *e = xrt__executable_acquire(executable);
  xrt__device *d = xrt__device_get(device);
  xrt_status s = xrt__exec_check(e, d, outputs, num_outputs, num_args);
  if (!s) s = xrt__exec_position(e, d, options, pos);
  *bufs = stack;
  if (!s && num_args > XRT__STACK_IO) {
    *bufs = (xrt__buffer **)xrt__calloc(&e->client->allocator,
                                        (size_t)num_args, sizeof **bufs);
    if (!*bufs) s = xrt__nomem("the arguments of an execute");
  }
  if (!s) s = xrt__args_acquire(e, d->index, args, num_args, -1, *bufs);
  if (s) {
    if (e && *bufs != stack) xrt__free(&e->client->allocator, *bufs);
    if (e) xrt__executable_unref(e);
    return s;
  }
  *e_out = e;
  *d_out = d;
  return XRT_OK;
}

/* Drops what xrt__exec_begin took. */
static void xrt__exec_end(xrt__executable *e, xrt__buffer **stack,
                          xrt__buffer **bufs, int num_args) {
  xrt__bufs_unref(bufs, num_args);
  if (bufs != stack) xrt__free(&e->client->allocator, bufs);
  xrt__executable_unref(e);
}

xrt_status xrt_execute(xrt_executable *executable, xrt_device *device,
                       xrt_buffer *const *args, int num_args,
                       xrt_buffer **outputs, int num_outputs,
                       const xrt_execute_options *options) {
  xrt__executable *e;
  xrt__device *d;
  xrt__buffer *stack[XRT__STACK_IO], **bufs;
  xrt__pos pos;
  xrt_status s = xrt__exec_begin(executable, device, args, num_args, outputs,
                                 num_outputs, options, &e, &d, &pos, stack,
                                 &bufs);
  if (s) return s;
  s = xrt__args_state(bufs, num_args);
  if (!s && xrt__device_hold(d)) {
    s = xrt__execute_inline(e, d, &pos, bufs, outputs);
    xrt__device_unhold(d);
  } else if (!s || s == XRT_UNAVAILABLE) {
    xrt__event *done = NULL;
    s = xrt__execute_enqueue(e, d, &pos, bufs, outputs, &done);
    if (!s && (s = xrt__event_wait(done))) {
      xrt__fail(s, "%s", done->message);
      for (int i = 0; i < num_outputs; i++) {
        xrt_buffer_release(outputs[i]);
        outputs[i] = NULL;
      }
    }
    xrt__event_unref(done);
  }
  xrt__exec_end(e, stack, bufs, num_args);
  return s;
}

xrt_status xrt_execute_async(xrt_executable *executable, xrt_device *device,
                             xrt_buffer *const *args, int num_args,
                             xrt_buffer **outputs, int num_outputs,
                             const xrt_execute_options *options,
                             xrt_event **out_done) {
  if (out_done) *out_done = NULL;
  xrt__executable *e;
  xrt__device *d;
  xrt__buffer *stack[XRT__STACK_IO], **bufs;
  xrt__pos pos;
  xrt_status s = xrt__exec_begin(executable, device, args, num_args, outputs,
                                 num_outputs, options, &e, &d, &pos, stack,
                                 &bufs);
  if (s) return s;
  xrt__task *t;
  s = xrt__exec_task(e, d, &pos, bufs, NULL, &t);
  if (!s && out_done && (s = xrt__event_publish(t->done, out_done)))
    xrt__exec_task_cancel(t, e->client);
  if (!s) {
    xrt__exec_publish(t, outputs);
    xrt__enqueue(d, t);
  }
  xrt__exec_end(e, stack, bufs, num_args);
  return s;
}

/* ---- the dispatch of libxrt_pjrt.so ----
 *
 * libxrt_pjrt.so (src/pjrt_plugin: xrt as a PJRT plugin) holds one
 * reference to the buffer object behind each of its PJRT buffers (the
 * buffer's handle, when it has one, holds its own), and its dispatch path
 * runs on objects: xrt__pjrt_execute pins the arguments with one atomic
 * operation each (objects are recycled, never freed while their client
 * lives, so that is safe without a look-up; the plugin keeps its
 * reference to the executable until no call can use it), runs the
 * execution inline as xrt_execute would, and makes outputs without
 * handles, which the plugin publishes only if a host call needs one
 * (xrt__pjrt_buffer_publish): a dispatch whose outputs are destroyed or
 * passed on touches no handle.  It runs only where xrt_execute would run
 * inline on the calling thread; anything else (arguments invalid, pending
 * or failed, work queued on the device, a launch of several participants)
 * it leaves to xrt_execute, having done nothing. */

XRT__PJRT_API void *xrt__pjrt_device_obj(const xrt_device *device) {
  return xrt__device_get(device);
}

XRT__PJRT_API void *xrt__pjrt_executable_obj(const xrt_executable *exe) {
  return xrt__executable_get(exe);
}

XRT__PJRT_API void *xrt__pjrt_buffer_hold(const xrt_buffer *buffer) {
  return xrt__buffer_acquire(buffer);
}

XRT__PJRT_API void xrt__pjrt_buffer_unref(void *obj) {
  xrt__buffer_unref((xrt__buffer *)obj);
}

XRT__PJRT_API xrt_buffer *xrt__pjrt_buffer_publish(void *obj) {
  xrt__buffer *b = (xrt__buffer *)obj;
  atomic_fetch_add(&b->refs, 1); /* the handle's */
  uintptr_t h = b->handle ? xrt__hrenew(b->handle, XRT__H_BUFFER)
                          : xrt__hnew(b, XRT__H_BUFFER);
  if (!h) {
    atomic_fetch_sub(&b->refs, 1);
    xrt__fail(XRT_RESOURCE_EXHAUSTED, "out of handles");
    return NULL;
  }
  b->handle = h;
  return (xrt_buffer *)h;
}

/* Takes a reference to an object its caller holds one to (0: the object
 * died meanwhile, released by another thread). */
static bool xrt__pjrt_pin(_Atomic int *refs) {
  int r = atomic_load_explicit(refs, memory_order_relaxed);
  do {
    if (r == 0) return false;
  } while (!atomic_compare_exchange_weak_explicit(
      refs, &r, r + 1, memory_order_acquire, memory_order_relaxed));
  return true;
}

/* A buffer of the executable's output i on d without a handle (its one
 * reference is the caller's): as xrt__buffer_new, without publishing. */
static xrt_status xrt__pjrt_output(xrt__client *c, xrt__device *d,
                                   const xrt_shape *shape, size_t bytes,
                                   xrt__buffer **out) {
  xrt__buffer *b = xrt__buffer_obj(c);
  if (!b) return xrt__nomem("a buffer object");
  b->client = c;
  b->device = d->index;
  b->shape = *shape;
  b->bytes = bytes;
  b->ready = NULL;
  b->mem = NULL;
  xrt_plugin_error err;
  err.message[0] = 0;
  xrt_status s = c->api->buffer_alloc(c->pc, d->index, bytes, &b->mem, &err);
  if (s || !b->mem) {
    xrt__buffer_recycle(c, b);
    if (!s) return xrt__fail(XRT_INTERNAL, "plugin '%s': buffer_alloc "
                             "returned OK without memory", c->api->name);
    return xrt__fail_plugin(s, c->api->name, &err);
  }
  XRT__STAT(c, ALLOCS, 1);
  XRT__STAT(c, BYTES_IN_USE, bytes);
  b->live = true;
  atomic_store_explicit(&b->refs, 1, memory_order_release);
  *out = b;
  return XRT_OK;
}

XRT__PJRT_API xrt_status xrt__pjrt_execute(void *exe, void *device,
                                           void *const *args, int num_args,
                                           void **outputs, int num_outputs,
                                           const size_t *output_bytes,
                                           bool *ran) {
  xrt__executable *e = (xrt__executable *)exe;
  xrt__device *d = (xrt__device *)device;
  xrt__buffer *bufs[XRT__STACK_IO];
  void *mems[2 * XRT__STACK_IO];
  *ran = false;
  if (num_args > XRT__STACK_IO || num_outputs > XRT__STACK_IO) return XRT_OK;
  xrt__client *c = e->client;
  bool ok = d->client == c && num_args == e->num_inputs &&
            num_outputs == e->num_outputs &&
            e->num_replicas * e->num_partitions == 1 &&
            e->assignment[0] >= 0 && c->api->buffer_alloc && c->api->execute;
  int n = 0;
  for (; ok && n < num_args; n++) {
    xrt__buffer *b = (xrt__buffer *)args[n];
    if (!xrt__pjrt_pin(&b->refs)) break;
    bufs[n] = b;
    mems[n] = b->mem;
    ok = b->client == c && b->device == d->index &&
         xrt__shape_equal(&b->shape, &e->inputs[n]) &&
         xrt__buffer_state(b) == XRT_OK;
  }
  xrt_status s = XRT_OK;
  if (ok && n == num_args && xrt__device_hold(d)) {
    *ran = true;
    int made = 0;
    for (; !s && made < num_outputs; made++) {
      xrt__buffer *o = NULL;
      s = xrt__pjrt_output(c, d, &e->outputs[made], output_bytes[made], &o);
      if (s) break;
      outputs[made] = o;
      mems[num_args + made] = o->mem;
    }
    if (!s) {
      char msg[XRT__MSG_CAP];
      xrt__pos pos = {xrt__own_launch_id(c), 0, 0};
      s = xrt__plugin_execute(e, d->index, &pos, mems, num_args,
                              mems + num_args, num_outputs, NULL, msg);
      if (s) xrt__fail(s, "%s", msg);
    }
    xrt__device_unhold(d);
    if (s)
      for (int i = 0; i < made; i++) {
        xrt__buffer_unref((xrt__buffer *)outputs[i]);
        outputs[i] = NULL;
      }
  }
  xrt__bufs_unref(bufs, n);
  return s;
}

/* ---- multi-device execution ---- */

/* The devices of a launch by logical id, checked: of this client and
 * distinct (two participants on one in-order queue would wait on each
 * other forever). */
static xrt_status xrt__multi_devices(xrt__executable *e, int n,
                                      const xrt_execute_options *o,
                                      xrt__device **devs) {
  xrt__client *c = e->client;
  for (int i = 0; i < n; i++) {
    devs[i] = o && o->devices ? xrt__device_get(o->devices[i])
                              : &c->devices[e->assignment[i]];
    if (!devs[i] || devs[i]->client != c)
      return xrt__fail(XRT_INVALID_ARGUMENT, "options.devices[%d] is not a "
                       "device of this client", i);
    for (int j = 0; j < i; j++)
      if (devs[j] == devs[i])
        return xrt__fail(XRT_INVALID_ARGUMENT, "options.devices[%d] and "
                         "options.devices[%d] are both device %d", j, i,
                         devs[i]->index);
  }
  return XRT_OK;
}

static xrt_status xrt__multi_check(xrt__executable *e, int num_lists,
                                   int num_args, int num_outputs,
                                   const void *argument_lists,
                                   xrt_buffer **const *output_lists) {
  XRT__CHECK_ARG(e, "invalid or released executable");
  int n = e->num_replicas * e->num_partitions;
  if (num_lists > e->client->num_devices)
    return xrt__fail(XRT_INVALID_ARGUMENT, "num_lists is %d, but the client "
                     "has only %d device(s)", num_lists,
                     e->client->num_devices);
  if (num_lists != n)
    return xrt__fail(XRT_INVALID_ARGUMENT, "num_lists is %d, @%s runs on %d "
                     "replica(s) x %d partition(s) = %d device(s)", num_lists,
                     xrt__exe_name(e), (int)e->num_replicas,
                     (int)e->num_partitions, n);
  if (num_args != e->num_inputs)
    return xrt__fail(XRT_INVALID_ARGUMENT, "@%s takes %d argument(s), got %d",
                     xrt__exe_name(e), e->num_inputs, num_args);
  if (num_outputs != e->num_outputs)
    return xrt__fail(XRT_INVALID_ARGUMENT, "@%s returns %d result(s), room "
                     "for %d was given", xrt__exe_name(e), e->num_outputs,
                     num_outputs);
  XRT__CHECK_ARG(argument_lists || num_args == 0, "argument_lists is NULL");
  XRT__CHECK_ARG(output_lists || num_outputs == 0, "output_lists is NULL");
  for (int i = 0; i < n && num_outputs; i++)
    if (!output_lists[i])
      return xrt__fail(XRT_INVALID_ARGUMENT, "output list %d is NULL", i);
  return XRT_OK;
}

XRT__PRIVATE void xrt__multi_free(xrt__executable *e, xrt__multi *m, bool enqueued) {
  xrt__client *c = e->client;
  for (int i = 0; i < m->num_acquired; i++)
    xrt__bufs_unref(m->bufs + (size_t)i * (size_t)e->num_inputs,
                    e->num_inputs);
  for (int i = 0; !enqueued && m->tasks && i < m->n; i++)
    if (m->tasks[i]) xrt__exec_task_cancel(m->tasks[i], c);
  if (!enqueued && m->launch) {
    xrt__event_unref(m->launch->done);
    xrt__free(&c->allocator, m->launch);
  }
  xrt__free(&c->allocator, m->bufs);
  xrt__free(&c->allocator, m->tasks);
}

/* Validates every argument list, then makes the launch and its tasks.
 * Participant k runs logical id lids[k] (lids NULL: k) of the launch id
 * *fixed_id, or (fixed_id NULL) of o->launch_id or a new id. */
XRT__PRIVATE xrt_status xrt__multi_fill(xrt__executable *e, xrt__multi *m,
                                  const int *lids,
                                  xrt_buffer *const *const *lists,
                                  const xrt_execute_options *o,
                                  const uint64_t *fixed_id) {
  xrt__client *c = e->client;
  int nin = e->num_inputs;
  m->bufs = (xrt__buffer **)xrt__calloc(&c->allocator,
                                        (size_t)m->n * (size_t)nin + 1,
                                        sizeof(xrt__buffer *));
  m->tasks = (xrt__task **)xrt__calloc(&c->allocator, (size_t)m->n,
                                       sizeof(xrt__task *));
  m->launch = (xrt__launch *)xrt__calloc(&c->allocator, 1, sizeof(xrt__launch));
  if (!m->bufs || !m->tasks || !m->launch ||
      !(m->launch->done = xrt__event_new(c, m->devs[0]->index)))
    return xrt__nomem("a multi-device launch");
  atomic_init(&m->launch->pending, m->n);
  for (int k = 0; k < m->n; k++) {
    int lid = lids ? lids[k] : k;
    xrt_status s = xrt__args_acquire(e, m->devs[k]->index,
                                     nin ? lists[lid] : NULL, nin, lid,
                                     m->bufs + (size_t)k * (size_t)nin);
    if (s) return s;
    m->num_acquired = k + 1;
  }
  uint64_t id = fixed_id           ? *fixed_id
                : o && o->launch_id ? o->launch_id
                                    : atomic_fetch_add_explicit(
                                          &c->next_launch_id, 1,
                                          memory_order_relaxed);
  for (int k = 0; k < m->n; k++) {
    int lid = lids ? lids[k] : k;
    xrt__pos pos = {id, (int32_t)(lid / e->num_partitions),
                    (int32_t)(lid % e->num_partitions)};
    xrt_status s = xrt__exec_task(e, m->devs[k], &pos,
                                  m->bufs + (size_t)k * (size_t)nin,
                                  m->launch, &m->tasks[k]);
    if (s) return s;
  }
  return XRT_OK;
}

static xrt_status xrt__multi_prepare(xrt__executable *e, xrt__multi *m,
                                     xrt_buffer *const *const *lists,
                                     const xrt_execute_options *o) {
  return xrt__multi_fill(e, m, NULL, lists, o, NULL);
}

/* Holds every device of an inline-able launch whose inputs are all
 * complete (so no participant waits), or none. */
static bool xrt__multi_hold(const xrt__executable *e, const xrt__multi *m) {
  if (!e->inline_ok) return false;
  for (size_t i = 0; i < (size_t)m->n * (size_t)e->num_inputs; i++)
    if (xrt__buffer_state(m->bufs[i]) == XRT_UNAVAILABLE) return false;
  for (int i = 0; i < m->n; i++)
    if (!xrt__device_hold(m->devs[i])) {
      while (i-- > 0) xrt__device_unhold(m->devs[i]);
      return false;
    }
  return true;
}

/* Publishes a prepared launch (its done event, each participant's
 * outputs: outs[lids[k]], lids NULL meaning k, outs NULL meaning none)
 * and starts it: inline when cheap with ready inputs and idle devices,
 * else on every device queue at once under the client's launch lock. */
XRT__PRIVATE xrt_status xrt__multi_start(xrt__executable *e, xrt__multi *m,
                                   const int *lids, xrt_buffer **const *outs,
                                   xrt_event **out_done) {
  xrt__client *c = e->client;
  if (out_done) {
    xrt_status s = xrt__event_publish(m->launch->done, out_done);
    if (s) return s;
  }
  for (int k = 0; k < m->n; k++)
    xrt__exec_publish(m->tasks[k], outs ? outs[lids ? lids[k] : k] : NULL);
  if (xrt__multi_hold(e, m)) { /* cheap, inputs ready, devices idle */
    for (int k = 0; k < m->n; k++) xrt__task_run(m->devs[k], m->tasks[k]);
    for (int k = 0; k < m->n; k++) xrt__device_unhold(m->devs[k]);
  } else {
    pthread_mutex_lock(&c->launch_mu);
    for (int k = 0; k < m->n; k++) xrt__enqueue(m->devs[k], m->tasks[k]);
    pthread_mutex_unlock(&c->launch_mu);
  }
  return XRT_OK;
}

xrt_status xrt_execute_multi(xrt_executable *executable,
                             xrt_buffer *const *const *argument_lists,
                             int num_lists, int num_args,
                             xrt_buffer **const *output_lists,
                             int num_outputs,
                             const xrt_execute_options *options,
                             xrt_event **out_done) {
  if (out_done) *out_done = NULL;
  xrt__executable *e = xrt__executable_acquire(executable);
  if (e && e->client->mp) /* section 13a */
    return xrt__mp_execute_multi(e, argument_lists, num_lists, num_args,
                                 output_lists, num_outputs, options, out_done);
  xrt_status s = xrt__multi_check(e, num_lists, num_args, num_outputs,
                                  argument_lists, output_lists);
  if (s) {
    if (e) xrt__executable_unref(e);
    return s;
  }
  xrt__multi m;
  memset(&m, 0, sizeof m);
  m.n = num_lists;
  s = xrt__multi_devices(e, m.n, options, m.devs);
  if (!s) s = xrt__multi_prepare(e, &m, argument_lists, options);
  if (!s) s = xrt__multi_start(e, &m, NULL, output_lists, out_done);
  xrt__multi_free(e, &m, !s);
  xrt__executable_unref(e);
  return s;
}
