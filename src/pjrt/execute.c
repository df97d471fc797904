/*
 * src/pjrt/execute.c - execute: xrt hands each participant of a launch to
 * execute on its own device's thread, concurrently (the table says
 * XRT_CAP_LAUNCH_TOGETHER); PJRT runs a launch in one
 * PJRT_LoadedExecutable_Execute over all its devices.  So the participants
 * of a launch meet (per executable, by launch_id), the last to arrive
 * makes the call with everyone's arguments and hands each its outputs,
 * and all return with the launch's status.  A launch of one participant
 * calls PJRT directly, without locks or heap allocation of ours.
 */
#include "xrt.h"
#include "internal.h"

struct xpj_launch {
  uint64_t id;
  int arrived;  /* participants in so far */
  int inside;   /* participants not yet returned */
  int done;
  int duplicate; /* two participants claimed one argument list */
  int misplaced;  /* a participant on another device than compiled for */
  const xrt_plugin_execute_args **parts; /* by argument list */
  const char *abort_message; /* the first participant's that aborted */
  xrt_status status;
  xrt_plugin_error err;
  xpj_launch *next;
};

/* The argument, output and event lists of one PJRT call. */
typedef struct xpj_lists {
  PJRT_Buffer **args;               /* [n * num_inputs] */
  PJRT_Buffer *const **arg_lists;   /* [n] */
  PJRT_Buffer **outs;               /* [n * num_outputs] */
  PJRT_Buffer ***out_lists;         /* [n] */
  PJRT_Event **events;              /* [n] */
  void *heap;                       /* what was allocated, or NULL */
} xpj_lists;

/* Points the lists into one block (the stack's or a heap one). */
static xrt_status xpj_lists_init(xpj_exe *e, int n, xpj_lists *l,
                                 void *stack, size_t stack_bytes,
                                 xrt_plugin_error *err) {
  size_t nin = (size_t)n * (size_t)e->num_inputs;
  size_t nout = (size_t)n * (size_t)e->num_outputs;
  size_t bytes = (nin + nout) * sizeof(PJRT_Buffer *) +
                 (size_t)n * (sizeof *l->arg_lists + sizeof *l->out_lists +
                              sizeof *l->events);
  char *b = (char *)stack;
  memset(l, 0, sizeof *l);
  if (bytes > stack_bytes) {
    b = (char *)(l->heap = xpj_alloc(e->c->al, bytes));
    if (!b)
      return xpj_fail(err, XRT_RESOURCE_EXHAUSTED, "plugin '%s': out of host "
                      "memory launching", e->c->p->name);
  }
  l->args = (PJRT_Buffer **)(void *)b;
  l->outs = l->args + nin;
  l->arg_lists = (PJRT_Buffer *const **)(void *)(l->outs + nout);
  l->out_lists = (PJRT_Buffer ***)(void *)(l->arg_lists + n);
  l->events = (PJRT_Event **)(void *)(l->out_lists + n);
  for (int k = 0; k < n; k++) {
    l->arg_lists[k] = l->args + (size_t)k * (size_t)e->num_inputs;
    l->out_lists[k] = l->outs + (size_t)k * (size_t)e->num_outputs;
    l->events[k] = NULL;
  }
  for (size_t j = 0; j < nout; j++) l->outs[j] = NULL;
  return XRT_OK;
}

/* Every participant's arguments as PJRT buffers of the entry's types. */
static xrt_status xpj_gather_args(xpj_exe *e,
                                  const xrt_plugin_execute_args *const *parts,
                                  int n, xpj_lists *l, xrt_plugin_error *err) {
  for (int k = 0; k < n; k++)
    for (int i = 0; i < e->num_inputs; i++) {
      xpj_mem *m = (xpj_mem *)parts[k]->args[i];
      xrt_status s = xpj_mem_ensure(e->c, parts[k]->device, m, e->in_type[i],
                                    &e->in[i], err);
      if (s) return s;
      l->args[(size_t)k * (size_t)e->num_inputs + (size_t)i] = m->buf;
    }
  return XRT_OK;
}

/* After the call: waits for every device, checks the outputs are there,
 * and gives them to the participants' output memories (or frees them). */
static xrt_status xpj_finish(xpj_exe *e,
                             const xrt_plugin_execute_args *const *parts,
                             int n, xpj_lists *l, xrt_plugin_error *err) {
  const xpj_plugin *p = e->c->p;
  const char *fn = "PJRT_LoadedExecutable_Execute";
  xrt_status s = XRT_OK;
  for (int k = 0; k < n; k++) {
    xrt_plugin_error mine;
    xrt_status sk = xpj_await(p, l->events[k], fn, s ? &mine : err);
    if (!s) s = sk;
  }
  size_t nout = (size_t)n * (size_t)e->num_outputs;
  for (size_t j = 0; j < nout && !s; j++)
    if (!l->outs[j])
      s = xpj_fail(err, XRT_INTERNAL, "plugin '%s': %s returned no error and "
                   "a NULL output (%zu of device %zu)", p->name, fn,
                   j % (size_t)e->num_outputs, j / (size_t)e->num_outputs);
  for (size_t j = 0; j < nout; j++) {
    if (s) {
      xpj_buffer_destroy(p, l->outs[j]);
      continue;
    }
    size_t k = j / (size_t)e->num_outputs, o = j % (size_t)e->num_outputs;
    xpj_mem_adopt(e->c, (xpj_mem *)parts[k]->outs[o], l->outs[j],
                  e->out_type[o], &e->out[o]);
  }
  return s;
}

/* One PJRT call for the n participants (in argument-list order). */
static xrt_status xpj_run(xpj_exe *e,
                          const xrt_plugin_execute_args *const *parts, int n,
                          xrt_plugin_error *err) {
  const xpj_plugin *p = e->c->p;
  void *stack[2 * XPJ_STACK_IO + 3];
  xpj_lists l;
  xrt_status s = xpj_lists_init(e, n, &l, stack, sizeof stack, err);
  if (s) return s;
  if ((s = xpj_gather_args(e, parts, n, &l, err))) goto out;
  PJRT_ExecuteOptions o;
  memset(&o, 0, sizeof o);
  o.struct_size = PJRT_ExecuteOptions_STRUCT_SIZE;
  o.launch_id = (int)(parts[0]->launch_id & 0x7fffffff);
  PJRT_LoadedExecutable_Execute_Args a;
  memset(&a, 0, sizeof a);
  a.struct_size = PJRT_LoadedExecutable_Execute_Args_STRUCT_SIZE;
  a.executable = e->le;
  a.options = &o;
  a.argument_lists = l.arg_lists;
  a.num_devices = (size_t)n;
  a.num_args = (size_t)e->num_inputs;
  a.output_lists = l.out_lists;
  a.device_complete_events = l.events;
  /* A portable executable runs where xrt says. */
  a.execute_device = e->portable ? e->c->devs[parts[0]->device].dev : NULL;
  s = xpj_error(p, p->fn.PJRT_LoadedExecutable_Execute(&a),
                "PJRT_LoadedExecutable_Execute", err);
  if (!s) s = xpj_finish(e, parts, n, &l, err);
out:
  xpj_free(e->c->al, l.heap);
  return s;
}

/* One participant, few inputs and outputs: the dispatch path, with
 * nothing but what the PJRT call needs: no heap, no lock, the argument
 * structs filled in place, the no-error tests inline. */
static xrt_status xpj_run1(xpj_exe *e, const xrt_plugin_execute_args *a,
                           xrt_plugin_error *err) {
  static const char fn[] = "PJRT_LoadedExecutable_Execute";
  xpj_client *c = e->c;
  const xpj_plugin *p = c->p;
  PJRT_Buffer *args[XPJ_STACK_IO], *outs[XPJ_STACK_IO];
  PJRT_Buffer *const *arg_list = args;
  PJRT_Buffer **out_list = outs;
  PJRT_Event *event = NULL;
  int nout = e->num_outputs;
  for (int i = 0; i < e->num_inputs; i++) {
    xpj_mem *m = (xpj_mem *)a->args[i];
    if (!xpj_mem_ready(m, e->in_type[i], &e->in[i])) {
      xrt_status s = xpj_mem_ensure(c, a->device, m, e->in_type[i],
                                    &e->in[i], err);
      if (s) return s;
    }
    args[i] = m->buf;
  }
  /* outs start NULL, so that a plugin returning none is caught.  The
   * first by itself: the compiler makes the loop a memset call, which
   * then runs only for two outputs or more. */
  outs[0] = NULL;
  for (int j = 1; j < nout; j++) outs[j] = NULL;
  /* Every member set one by one: an initialiser leaves gcc a memset
   * call to make. */
  PJRT_ExecuteOptions o;
  o.struct_size = PJRT_ExecuteOptions_STRUCT_SIZE;
  o.extension_start = NULL;
  o.send_callbacks = NULL;
  o.recv_callbacks = NULL;
  o.num_send_ops = 0;
  o.num_recv_ops = 0;
  o.launch_id = 0;
  o.non_donatable_input_indices = NULL;
  o.num_non_donatable_input_indices = 0;
  PJRT_LoadedExecutable_Execute_Args x;
  x.struct_size = PJRT_LoadedExecutable_Execute_Args_STRUCT_SIZE;
  x.extension_start = NULL;
  x.executable = e->le;
  x.options = &o;
  x.argument_lists = &arg_list;
  x.num_devices = 1;
  x.num_args = (size_t)e->num_inputs;
  x.output_lists = &out_list;
  x.device_complete_events = &event;
  x.execute_device = c->devs[a->device].dev; /* portable */
  PJRT_Error *pe = p->fn.PJRT_LoadedExecutable_Execute(&x);
  if (pe) return xpj_error(p, pe, fn, err);
  /* The completion wait stays: an execution that fails after the call
   * returned reports it here, and so fails this execute. */
  xrt_status s = xpj_await(p, event, fn, err);
  for (int j = 0; j < nout && !s; j++)
    if (!outs[j])
      s = xpj_fail(err, XRT_INTERNAL, "plugin '%s': %s returned no error and "
                   "a NULL output (%d of device 0)", p->name, fn, j);
  if (s) {
    for (int j = 0; j < nout; j++) xpj_buffer_destroy(p, outs[j]);
    return s;
  }
  for (int j = 0; j < nout; j++)
    xpj_mem_adopt(c, (xpj_mem *)a->outs[j], outs[j], e->out_type[j],
                  &e->out[j]);
  return XRT_OK;
}

/* ---- gathering a launch of several participants ---- */

static xpj_launch *xpj_launch_find(xpj_exe *e, uint64_t id) {
  for (xpj_launch *l = e->launches; l; l = l->next)
    if (l->id == id) return l;
  return NULL;
}

/* The launch id's record (under e->mu), made by its first participant. */
static xpj_launch *xpj_launch_get(xpj_exe *e, uint64_t id) {
  xpj_launch *l = xpj_launch_find(e, id);
  if (l) return l;
  l = (xpj_launch *)xpj_alloc(e->c->al, sizeof *l);
  if (!l) return NULL;
  l->parts = (const xrt_plugin_execute_args **)xpj_alloc(
      e->c->al, (size_t)e->num_parts * sizeof *l->parts);
  if (!l->parts) {
    xpj_free(e->c->al, l);
    return NULL;
  }
  l->id = id;
  l->inside = e->num_parts;
  l->next = e->launches;
  e->launches = l;
  return l;
}

static void xpj_launch_unlink(xpj_exe *e, xpj_launch *l) {
  xpj_launch **pp = &e->launches;
  while (*pp && *pp != l) pp = &(*pp)->next;
  if (*pp) *pp = l->next;
}

/* The last participant in: runs the launch (e->mu is not held). */
static void xpj_launch_run(xpj_exe *e, xpj_launch *l) {
  if (l->abort_message) {
    l->status = xpj_fail(&l->err, XRT_ABORTED, "%s", l->abort_message);
  } else if (l->duplicate) {
    l->status = xpj_fail(&l->err, XRT_INTERNAL, "plugin '%s': two "
                         "participants of launch %llu are one logical id",
                         e->c->p->name, (unsigned long long)l->id);
  } else if (l->misplaced) {
    l->status = xpj_fail(&l->err, XRT_UNIMPLEMENTED, "plugin '%s': launch "
                         "%llu runs on other devices than it was compiled "
                         "for; a PJRT executable runs where it was compiled",
                         e->c->p->name, (unsigned long long)l->id);
  } else {
    l->err.message[0] = 0;
    l->status = xpj_run(e, l->parts, e->num_parts, &l->err);
  }
}

static xrt_status xpj_execute_together(xpj_exe *e,
                                       const xrt_plugin_execute_args *a,
                                       int lid, xrt_plugin_error *err) {
  int slot = e->slot_of_lid[lid];
  pthread_mutex_lock(&e->mu);
  xpj_launch *l = xpj_launch_get(e, a->launch_id);
  if (!l) {
    /* Others may wait for this one: nothing to do but report.  (A
     * launch's first participant failing here leaves no record, so the
     * next one makes it again; the launch then never completes only if
     * memory stays exhausted.) */
    pthread_mutex_unlock(&e->mu);
    return xpj_fail(err, XRT_RESOURCE_EXHAUSTED, "plugin '%s': out of host "
                    "memory gathering a launch", e->c->p->name);
  }
  if (l->parts[slot]) l->duplicate = 1;
  else l->parts[slot] = a;
  if (e->device_of_lid[lid] != a->device) l->misplaced = 1;
  if (a->abort_message && !l->abort_message) l->abort_message = a->abort_message;
  if (++l->arrived == e->num_parts) {
    xpj_launch_unlink(e, l);
    pthread_mutex_unlock(&e->mu);
    xpj_launch_run(e, l);
    pthread_mutex_lock(&e->mu);
    l->done = 1;
    pthread_cond_broadcast(&e->cv);
  }
  while (!l->done) pthread_cond_wait(&e->cv, &e->mu);
  xrt_status s = l->status;
  if (s && err) memcpy(err->message, l->err.message, sizeof err->message);
  int last = --l->inside == 0;
  pthread_mutex_unlock(&e->mu);
  if (last) {
    xpj_free(e->c->al, l->parts);
    xpj_free(e->c->al, l);
  }
  return s;
}

static xrt_status xpj_execute(void *client, const xrt_plugin_execute_args *a,
                              xrt_plugin_error *err) {
  xpj_exe *e = a ? (xpj_exe *)a->executable : NULL;
  if (!client || !e || e->c != client || a->device < 0 ||
      a->device >= e->c->n || a->num_args != e->num_inputs ||
      a->num_outs != e->num_outputs || (a->num_args && !a->args) ||
      (a->num_outs && !a->outs))
    return xpj_fail(err, XRT_INVALID_ARGUMENT, "execute: bad arguments");
  if (e->num_parts == 1) {
    if (a->abort_message)
      return xpj_fail(err, XRT_ABORTED, "%s", a->abort_message);
    if (e->num_inputs <= XPJ_STACK_IO && e->num_outputs <= XPJ_STACK_IO)
      return xpj_run1(e, a, err);
    return xpj_run(e, &a, 1, err);
  }
  if (a->num_replicas * a->num_partitions != e->num_parts ||
      a->replica < 0 || a->replica >= a->num_replicas || a->partition < 0 ||
      a->partition >= a->num_partitions)
    return xpj_fail(err, XRT_INVALID_ARGUMENT, "plugin '%s': participant "
                    "(%d, %d) of a %d x %d launch, compiled for %d",
                    e->c->p->name, a->replica, a->partition, a->num_replicas,
                    a->num_partitions, e->num_parts);
  return xpj_execute_together(e, a, a->replica * a->num_partitions +
                                        a->partition, err);
}

XPJ_PRIVATE void xpj_execute_fill(xrt_plugin_api *t) {
  t->execute = xpj_execute;
}
