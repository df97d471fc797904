/*
 * src/pjrt_plugin/execute.c - PJRT_LoadedExecutable_Execute.
 * Part of libxrt_pjrt.so; MIT licensed, see LICENSE.
 *
 * Three ways in:
 *  - one device (the executable's launch is 1 replica x 1 partition):
 *    on its assigned device, or on execute_device when the host gives one
 *    (PJRT's portable executables), through the core's dispatch entry
 *    xrt__pjrt_execute, or xrt_execute when that leaves the call to it
 *    (work queued on the device, arguments pending or wrong);
 *  - every device of the launch (num_devices = replicas x partitions):
 *    xrt_execute_multi, collectives included, awaited before returning;
 *  - one participant of a larger launch (execute_device set): the host
 *    launches each participant with the same options->launch_id, so it
 *    runs asynchronously (xrt_execute_async, as an MPMD participant) and
 *    its device_complete_event follows it.
 * The first two return when the work is done: on failure the call returns
 * the error and no output; device_complete_events are ready.
 *
 * The first is the dispatch path (xp_execute): it allocates nothing (the
 * output PJRT_Buffers are recycled records over core objects without xrt
 * handles, see buffer.c; completion events that are ready cost nothing,
 * see event.c) and takes no lock but the device queue's (a thread
 * reuses its own spare record without the record list's).  The others
 * keep the xrt argument and output arrays on the stack unless a launch
 * needs more than XP_STACK_PTRS buffers or XP_STACK_LISTS lists.
 */
#include "internal.h"

enum { XP_STACK_PTRS = 128, XP_STACK_LISTS = 64 };
/* Arguments and outputs of a launch on the dispatch path (xp_execute). */
enum { XP_FAST_IO = 16 };

/* PJRT launch ids live apart from xrt's own counters. */
#define XP_LAUNCH_ID_SPACE ((uint64_t)1 << 62)

/* The arrays of one call: on the stack when they fit. */
typedef struct xp_scratch {
  void *heap_bufs, *heap_lists;
  xrt_buffer *bufs[XP_STACK_PTRS];
  xrt_buffer **lists[XP_STACK_LISTS];
} xp_scratch;

static xrt_buffer **xp_scratch_bufs(xp_scratch *s, size_t n) {
  s->heap_bufs = s->heap_lists = NULL;
  if (n <= XP_STACK_PTRS) return s->bufs;
  if (n > SIZE_MAX / sizeof(xrt_buffer *)) return NULL;
  return (xrt_buffer **)(s->heap_bufs = xp_malloc(n * sizeof(xrt_buffer *)));
}

static xrt_buffer ***xp_scratch_lists(xp_scratch *s, size_t n) {
  if (n <= XP_STACK_LISTS) return s->lists;
  if (n > SIZE_MAX / sizeof(xrt_buffer **)) return NULL;
  s->heap_lists = xp_malloc(n * sizeof(xrt_buffer **));
  return (xrt_buffer ***)s->heap_lists;
}

static void xp_scratch_free(xp_scratch *s) {
  xp_free(s->heap_bufs);
  xp_free(s->heap_lists);
}

/* What one call works on. */
typedef struct xp_call {
  const char *fn;
  const PJRT_LoadedExecutable_Execute_Args *args;
  xp_exe_core *core;
  xrt_executable *xe;
  size_t num_args, num_outputs;
} xp_call;

/* The xrt buffers of argument list `list` into out. */
static PJRT_Error *xp_args_resolve(const xp_call *c, size_t list,
                                   xrt_buffer **out) {
  /* argument_lists itself may be NULL when there are no arguments (see
   * xp_call_init) */
  PJRT_Buffer *const *in =
      c->args->argument_lists ? c->args->argument_lists[list] : NULL;
  if (!in && c->num_args)
    return xp_error(PJRT_Error_Code_INVALID_ARGUMENT,
                    "%s: argument_lists[%zu] is NULL", c->fn, list);
  for (size_t j = 0; j < c->num_args; j++) {
    xp_buffer *b = (xp_buffer *)xp_handle_get(in[j], XP_KIND_BUFFER);
    xrt_buffer *xb = b ? xp_buffer_xrt(b) : NULL;
    if (!xb)
      return xp_error(PJRT_Error_Code_INVALID_ARGUMENT,
                      "%s: argument_lists[%zu][%zu] is %s", c->fn, list, j,
                      !in[j] ? "NULL"
                      : !b   ? "not a live PJRT_Buffer"
                      : atomic_load(&b->xobj)
                          ? "a PJRT_Buffer of a destroyed client"
                          : "a deleted PJRT_Buffer");
    out[j] = xb;
  }
  return NULL;
}

/* Wraps one device's outputs (taking them over) into output_lists[list]. */
static PJRT_Error *xp_outputs_wrap(const xp_call *c, size_t list,
                                   const xp_device *d, xrt_buffer **outs) {
  PJRT_Buffer **dst = c->args->output_lists[list];
  for (size_t j = 0; j < c->num_outputs; j++) {
    dst[j] = xp_buffer_wrap(outs[j], d, &c->core->outputs[j]);
    outs[j] = NULL;
    if (dst[j]) continue;
    for (size_t r = j + 1; r < c->num_outputs; r++)
      if (outs[r]) xrt_buffer_release(outs[r]);
    while (j > 0) { /* nothing is returned on failure */
      xp_buffer_free(dst[--j]);
      dst[j] = NULL;
    }
    return xp_error(PJRT_Error_Code_RESOURCE_EXHAUSTED,
                    "%s: out of host memory (output buffers)", c->fn);
  }
  return NULL;
}

static void xp_outputs_unwrap(const xp_call *c, size_t lists) {
  for (size_t i = 0; i < lists; i++)
    for (size_t j = 0; j < c->num_outputs; j++) {
      xp_buffer_free(c->args->output_lists[i][j]);
      c->args->output_lists[i][j] = NULL;
    }
}

static void xp_release_all(xrt_buffer **bufs, size_t n) {
  for (size_t i = 0; i < n; i++)
    if (bufs[i]) xrt_buffer_release(bufs[i]);
}

/* Wraps the outputs of every participant (taking them over). */
static PJRT_Error *xp_multi_wrap(const xp_call *c, xrt_buffer ***out_lists,
                                 size_t n) {
  for (size_t i = 0; i < n; i++) {
    const xp_device *d = xp_device_get(c->core->devices[i]);
    PJRT_Error *e = NULL;
    if (!d) {
      xp_release_all(out_lists[i], c->num_outputs);
      e = xp_error(PJRT_Error_Code_INVALID_ARGUMENT,
                   "%s: the executable's client has been destroyed", c->fn);
    } else {
      e = xp_outputs_wrap(c, i, d, out_lists[i]); /* releases list i */
    }
    if (!e) continue;
    xp_outputs_unwrap(c, i);
    for (size_t r = i + 1; r < n; r++)
      xp_release_all(out_lists[r], c->num_outputs);
    return e;
  }
  return NULL;
}

/* One participant of a launch of one device, on d; synchronous. */
static PJRT_Error *xp_run_one(const xp_call *c, const xp_device *d) {
  xp_scratch s;
  xrt_buffer **xargs = xp_scratch_bufs(&s, c->num_args + c->num_outputs);
  if (!xargs)
    return xp_error(PJRT_Error_Code_RESOURCE_EXHAUSTED,
                    "%s: out of host memory", c->fn);
  xrt_buffer **xouts = xargs + c->num_args;
  PJRT_Error *e = xp_args_resolve(c, 0, xargs);
  if (!e) {
    xrt_status st = xrt_execute(c->xe, d->xd, xargs, (int)c->num_args, xouts,
                                (int)c->num_outputs, NULL);
    e = st ? xp_error_xrt(c->fn, st) : xp_outputs_wrap(c, 0, d, xouts);
  }
  xp_scratch_free(&s);
  return e;
}

/* Every participant of the launch at once; waits for all of them. */
static PJRT_Error *xp_run_multi(const xp_call *c) {
  size_t n = c->core->num_devices, per = c->num_args + c->num_outputs;
  xp_scratch s;
  xrt_buffer **all =
      n > SIZE_MAX / (per ? per : 1) ? NULL : xp_scratch_bufs(&s, n * per);
  xrt_buffer ***arg_lists = all ? xp_scratch_lists(&s, 2 * n) : NULL;
  if (!arg_lists) {
    if (all) xp_scratch_free(&s);
    return xp_error(PJRT_Error_Code_RESOURCE_EXHAUSTED,
                    "%s: out of host memory", c->fn);
  }
  xrt_buffer **xargs = all, **xouts = all + n * c->num_args;
  xrt_buffer ***out_lists = arg_lists + n;
  PJRT_Error *e = NULL;
  for (size_t i = 0; i < n && !e; i++) {
    arg_lists[i] = xargs + i * c->num_args;
    out_lists[i] = xouts + i * c->num_outputs;
    e = xp_args_resolve(c, i, arg_lists[i]);
  }
  xrt_event *done = NULL;
  int launched = 0;
  if (!e) {
    xrt_status st = xrt_execute_multi(
        c->xe, (xrt_buffer *const *const *)arg_lists, (int)n,
        (int)c->num_args, out_lists, (int)c->num_outputs, NULL, &done);
    launched = st == XRT_OK;
    if (launched) st = xrt_event_await(done);
    if (st) e = xp_error_xrt(c->fn, st);
    if (done) xrt_event_release(done);
  }
  if (!e) e = xp_multi_wrap(c, out_lists, n);
  else if (launched) xp_release_all(xouts, n * c->num_outputs);
  xp_scratch_free(&s);
  return e;
}

/* The logical id of device d in the launch, or -1. */
static int xp_logical_of(const xp_exe_core *k, const xp_device *d) {
  for (size_t i = 0; i < k->num_devices; i++)
    if (k->xdevices[i] == d->xd) return (int)i;
  return -1;
}

/* One participant of a larger launch on d, asynchronous: *done follows
 * it. */
static PJRT_Error *xp_run_participant(const xp_call *c, const xp_device *d,
                                      const PJRT_ExecuteOptions *o,
                                      xrt_event **done) {
  int logical = xp_logical_of(c->core, d);
  if (logical < 0)
    return xp_error(PJRT_Error_Code_INVALID_ARGUMENT,
                    "%s: execute_device %d takes no part in the launch of @%s",
                    c->fn, d->index, c->core->name);
  if (!o || !o->launch_id)
    return xp_error(PJRT_Error_Code_INVALID_ARGUMENT,
                    "%s: running one participant of a launch of %zu devices "
                    "needs options->launch_id, the same for every "
                    "participant", c->fn, c->core->num_devices);
  xrt_execute_options eo;
  xrt_execute_options_init(&eo);
  eo.launch_id = XP_LAUNCH_ID_SPACE | (uint32_t)o->launch_id;
  eo.replica = logical / c->core->num_partitions;
  eo.partition = logical % c->core->num_partitions;
  xp_scratch s;
  xrt_buffer **xargs = xp_scratch_bufs(&s, c->num_args + c->num_outputs);
  if (!xargs)
    return xp_error(PJRT_Error_Code_RESOURCE_EXHAUSTED,
                    "%s: out of host memory", c->fn);
  xrt_buffer **xouts = xargs + c->num_args;
  PJRT_Error *e = xp_args_resolve(c, 0, xargs);
  if (!e) {
    xrt_status st = xrt_execute_async(c->xe, d->xd, xargs, (int)c->num_args,
                                      xouts, (int)c->num_outputs, &eo, done);
    e = st ? xp_error_xrt(c->fn, st) : xp_outputs_wrap(c, 0, d, xouts);
    if (e && *done) {
      xrt_event_release(*done);
      *done = NULL;
    }
  }
  xp_scratch_free(&s);
  return e;
}

/* Checks the options a host may give: send/recv callbacks have nothing
 * to call them in xrt (its host functions serve send and recv). */
static PJRT_Error *xp_options_check(const char *fn,
                                    const PJRT_ExecuteOptions *o) {
  if (!o) return NULL;
  if (o->struct_size < XP_END(PJRT_ExecuteOptions, launch_id))
    return xp_error(PJRT_Error_Code_INVALID_ARGUMENT,
                    "%s: options->struct_size is %zu, at least %zu expected",
                    fn, o->struct_size,
                    (size_t)XP_END(PJRT_ExecuteOptions, launch_id));
  if ((o->num_send_ops && o->send_callbacks) ||
      (o->num_recv_ops && o->recv_callbacks))
    return xp_error(PJRT_Error_Code_UNIMPLEMENTED,
                    "%s: send/recv callbacks are not implemented by xrt", fn);
  return NULL;
}

/* The loaded executable's live state for a call, checked. */
static PJRT_Error *xp_call_init(const char *fn,
                                const PJRT_LoadedExecutable_Execute_Args *args,
                                xp_call *c) {
  xp_loaded *l = xp_loaded_get(args->executable);
  if (!l)
    return args->executable ? xp_error_stale(fn, "args->executable",
                                             "PJRT_LoadedExecutable")
                            : xp_error_null(fn, "args->executable");
  c->fn = fn;
  c->args = args;
  c->core = l->core;
  c->xe = atomic_load_explicit(&l->core->xe, memory_order_acquire);
  if (!c->xe || atomic_load_explicit(&l->deleted, memory_order_relaxed))
    return xp_error(PJRT_Error_Code_INVALID_ARGUMENT,
                    "%s: the executable has been deleted", fn);
  /* A destroyed client is found when its devices are looked up (their
   * handles die with it), without a lookup of its own here. */
  c->num_args = args->num_args;
  c->num_outputs = l->core->num_outputs;
  if (args->num_args != (size_t)l->core->num_args)
    return xp_error(PJRT_Error_Code_INVALID_ARGUMENT,
                    "%s: @%s takes %d argument(s), num_args is %zu", fn,
                    l->core->name, l->core->num_args, args->num_args);
  if (args->num_devices && !args->argument_lists && args->num_args)
    return xp_error_null(fn, "args->argument_lists");
  if (args->num_devices && !args->output_lists)
    return xp_error_null(fn, "args->output_lists");
  for (size_t i = 0; i < args->num_devices; i++)
    if (!args->output_lists[i] && c->num_outputs)
      return xp_error(PJRT_Error_Code_INVALID_ARGUMENT,
                      "%s: output_lists[%zu] is NULL", fn, i);
  return NULL;
}

/* Runs on execute_device: *done is set for an asynchronous participant. */
static PJRT_Error *xp_run_on(const xp_call *c, PJRT_Device *device,
                             xrt_event **done) {
  const PJRT_LoadedExecutable_Execute_Args *a = c->args;
  xp_device *d = xp_device_get(device);
  if (!d) return xp_error_stale(c->fn, "args->execute_device", "PJRT_Device");
  if (d->client->handle != c->core->client)
    return xp_error(PJRT_Error_Code_INVALID_ARGUMENT,
                    "%s: execute_device belongs to another client", c->fn);
  if (a->num_devices != 1)
    return xp_error(PJRT_Error_Code_INVALID_ARGUMENT,
                    "%s: with execute_device, num_devices must be 1, not %zu",
                    c->fn, a->num_devices);
  if (c->core->num_devices == 1) return xp_run_one(c, d);
  return xp_run_participant(c, d, a->options, done);
}

static PJRT_Error *xp_run(const xp_call *c, xrt_event **done) {
  const PJRT_LoadedExecutable_Execute_Args *a = c->args;
  PJRT_Device *on = XP_HAS(a, PJRT_LoadedExecutable_Execute_Args,
                           execute_device) ? a->execute_device : NULL;
  if (on) return xp_run_on(c, on, done);
  if (a->num_devices != c->core->num_devices)
    return xp_error(PJRT_Error_Code_INVALID_ARGUMENT,
                    "%s: @%s runs on %zu device(s) (%d replica(s) x %d "
                    "partition(s)), num_devices is %zu", c->fn, c->core->name,
                    c->core->num_devices, c->core->num_replicas,
                    c->core->num_partitions, a->num_devices);
  if (a->num_devices == 1) {
    const xp_device *d = xp_device_get(c->core->devices[0]);
    if (!d)
      return xp_error(PJRT_Error_Code_INVALID_ARGUMENT,
                      "%s: the executable's client has been destroyed", c->fn);
    return xp_run_one(c, d);
  }
  return xp_run_multi(c);
}

/* One completion event per device list, ready or following done. */
static PJRT_Error *xp_complete_events(const xp_call *c, xrt_event *done) {
  PJRT_Event **ev = c->args->device_complete_events;
  size_t n = c->args->num_devices;
  for (size_t i = 0; i < n; i++) {
    ev[i] = done ? xp_event_wrap(done) : xp_event_ready(NULL);
    done = NULL;
    if (ev[i]) continue;
    while (i > 0) {
      xp_event_free(ev[--i]);
      ev[i] = NULL;
    }
    return xp_error(PJRT_Error_Code_RESOURCE_EXHAUSTED,
                    "%s: out of host memory (events)", c->fn);
  }
  return NULL;
}

/* The general path: every check with its own message, every way in. */
static PJRT_Error *xp_execute_general(const char *fn,
                                      PJRT_LoadedExecutable_Execute_Args *args) {
  xp_call c;
  PJRT_Error *e = xp_call_init(fn, args, &c);
  if (!e) e = xp_options_check(fn, args->options);
  if (e) return e;
  xrt_event *done = NULL;
  if ((e = xp_run(&c, &done))) return e;
  if (!args->device_complete_events) {
    if (done) xrt_event_release(done);
    return NULL;
  }
  if ((e = xp_complete_events(&c, done)))
    xp_outputs_unwrap(&c, args->num_devices);
  return e;
}

/* Whether the dispatch path takes a call: a launch of one device, few
 * arguments and outputs, every list there and options it accepts.
 * Anything else (errors included) goes the general way, which reports
 * it; nothing has happened yet when this says no. */
static int xp_fast_ok(const PJRT_LoadedExecutable_Execute_Args *a,
                      const xp_loaded *l, const xp_exe_core *k) {
  const PJRT_ExecuteOptions *o = a->options;
  size_t nin = a->num_args, nout = k->num_outputs;
  return k->num_devices == 1 && a->num_devices == 1 &&
         nin == (size_t)k->num_args && nin <= XP_FAST_IO &&
         nout <= XP_FAST_IO &&
         !atomic_load_explicit(&l->deleted, memory_order_relaxed) &&
         (!nin || (a->argument_lists && a->argument_lists[0])) &&
         a->output_lists && (!nout || a->output_lists[0]) &&
         (!o || (o->struct_size >= XP_END(PJRT_ExecuteOptions, launch_id) &&
                 !(o->num_send_ops && o->send_callbacks) &&
                 !(o->num_recv_ops && o->recv_callbacks)));
}

/* The dispatch path's call when xrt__pjrt_execute leaves it to
 * xrt_execute (work queued on the device, arguments pending or failed or
 * invalid): the same call through handles, which waits for what it must
 * and reports what is wrong. */
static PJRT_Error *xp_execute_slow(const char *fn,
                                   PJRT_LoadedExecutable_Execute_Args *args,
                                   xp_exe_core *k, xrt_executable *xe,
                                   const xp_device *d, xp_buffer *const *rec) {
  xp_call c;
  c.fn = fn;
  c.args = args;
  c.core = k;
  c.xe = xe;
  c.num_args = args->num_args;
  c.num_outputs = k->num_outputs;
  xrt_buffer *x[2 * XP_FAST_IO];
  for (size_t j = 0; j < c.num_args; j++)
    if (!(x[j] = xp_buffer_xrt(rec[j]))) return xp_execute_general(fn, args);
  xrt_status st = xrt_execute(xe, d->xd, x, (int)c.num_args, x + c.num_args,
                              (int)c.num_outputs, NULL);
  if (st) return xp_error_xrt(fn, st);
  PJRT_Error *e = xp_outputs_wrap(&c, 0, d, x + c.num_args);
  if (!e && args->device_complete_events)
    args->device_complete_events[0] =
        (PJRT_Event *)xp_handle_reserved(XP_RESERVED_EVENT_OK);
  return e;
}

/* PJRT_LoadedExecutable_Execute.  The dispatch path (one device) looks up
 * the executable, the device and each argument once, runs
 * xrt__pjrt_execute on the core's objects (internal.h), wraps its outputs
 * (objects without xrt handles) in recycled records and hands out the
 * shared ready event: no allocation, no lock but the device queue's. */
static PJRT_Error *xp_execute(PJRT_LoadedExecutable_Execute_Args *args) {
  static const char fn[] = "PJRT_LoadedExecutable_Execute";
  /* execute_device came in PJRT 0.3x: older callers stop before it. */
  XP_ARGS(fn, args,
          XP_END(PJRT_LoadedExecutable_Execute_Args, device_complete_events));
  xp_loaded *l = xp_loaded_get(args->executable);
  xp_exe_core *k = l ? l->core : NULL;
  xrt_executable *xe =
      k ? atomic_load_explicit(&k->xe, memory_order_acquire) : NULL;
  if (!xe || !xp_fast_ok(args, l, k)) return xp_execute_general(fn, args);
  PJRT_Device *on = XP_HAS(args, PJRT_LoadedExecutable_Execute_Args,
                           execute_device) ? args->execute_device : NULL;
  xp_device *d = xp_device_get(on ? on : k->devices[0]);
  if (!d || (on && d->client->handle != k->client))
    return xp_execute_general(fn, args);
  size_t nin = args->num_args, nout = k->num_outputs;
  /* The core's objects of the arguments, then of the outputs. */
  void *o[2 * XP_FAST_IO];
  xp_buffer *rec[XP_FAST_IO];
  PJRT_Buffer *const *in = nin ? args->argument_lists[0] : NULL;
  for (size_t j = 0; j < nin; j++) {
    xp_buffer *b = rec[j] = (xp_buffer *)xp_handle_get(in[j], XP_KIND_BUFFER);
    /* on d, else the general way says what is wrong (another device, a
     * destroyed client whose objects are gone) */
    if (!b || b->device != d->handle ||
        !(o[j] = atomic_load_explicit(&b->xobj, memory_order_acquire)))
      return xp_execute_general(fn, args);
  }
  bool ran = false;
  xrt_status st = XRT_OK;
  if (k->xobj && d->xobj)
    st = xrt__pjrt_execute(k->xobj, d->xobj, o, (int)nin, o + nin, (int)nout,
                           k->output_bytes, &ran);
  if (!ran) /* queued work, pending arguments, errors: the general way */
    return xp_execute_slow(fn, args, k, xe, d, rec);
  if (st) return xp_error_xrt(fn, st);
  PJRT_Buffer **dst = args->output_lists[0];
  for (size_t j = 0; j < nout; j++) {
    dst[j] = xp_buffer_wrap_obj(o[nin + j], d, &k->outputs[j]);
    if (dst[j]) continue;
    for (size_t r = j + 1; r < nout; r++) xrt__pjrt_buffer_unref(o[nin + r]);
    while (j > 0) { /* nothing is returned on failure */
      xp_buffer_free(dst[--j]);
      dst[j] = NULL;
    }
    return xp_error(PJRT_Error_Code_RESOURCE_EXHAUSTED,
                    "%s: out of host memory (output buffers)", fn);
  }
  if (args->device_complete_events)
    /* The shared success event, as xp_event_ready(NULL) gives it. */
    args->device_complete_events[0] =
        (PJRT_Event *)xp_handle_reserved(XP_RESERVED_EVENT_OK);
  return NULL;
}

XP_PRIVATE void xp_execute_register(PJRT_Api *api) {
  api->PJRT_LoadedExecutable_Execute = xp_execute;
}
