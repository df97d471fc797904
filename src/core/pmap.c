/*
 * src/core/pmap.c - pmap: a compile cache keyed by argument signature.
 * Part of the core of xrt; MIT licensed, see LICENSE.
 */
#include "internal.h"

/* ---- pmap: a compile cache keyed by argument signature ---- */

typedef enum xrt__pmap_state {
  XRT__PMAP_COMPILING = 0,
  XRT__PMAP_DONE,
  XRT__PMAP_FAILED
} xrt__pmap_state;

/* One signature: the arguments' piece shapes and the devices. */
typedef struct xrt__pmap_entry {
  int num_args, num_devices;
  xrt_shape *shapes;
  int *device_ids;
  xrt__pmap_state state;
  xrt_executable *exe;  /* when DONE */
  xrt__saved_error err; /* when FAILED */
} xrt__pmap_entry;

typedef struct xrt__pmap {
  uintptr_t handle;
  xrt_client *client;
  xrt_allocator allocator; /* a copy: the pmap may outlive the client */
  xrt_program *program;    /* fixed text, parsed once */
  xrt_pmap_source_fn source;
  void *source_user;
  xrt_compile_options compile;
  char *entry, *filename; /* owned copies of the compile option strings */
  pthread_mutex_t mu;     /* guards the entries and their states */
  pthread_cond_t cv;      /* signalled when a compilation ends */
  xrt__pmap_entry **entries;
  int num_entries, cap_entries;
} xrt__pmap;

static xrt__pmap *xrt__pmap_get(const xrt_pmap *p) {
  return (xrt__pmap *)xrt__hget(p, XRT__H_PMAP);
}

void xrt_pmap_options_init(xrt_pmap_options *o) {
  if (!o) return;
  memset(o, 0, sizeof *o);
  xrt_compile_options_init(&o->compile);
}

static char *xrt__strdup_a(const xrt_allocator *a, const char *s) {
  if (!s) return NULL;
  size_t n = strlen(s) + 1;
  char *d = (char *)xrt__alloc(a, n);
  if (d) memcpy(d, s, n);
  return d;
}

static void xrt__pmap_entry_free(xrt__pmap *p, xrt__pmap_entry *e) {
  if (e->exe) xrt_executable_release(e->exe);
  xrt__free(&p->allocator, e->shapes);
  xrt__free(&p->allocator, e->device_ids);
  xrt__free(&p->allocator, e);
}

static void xrt__pmap_free(xrt__pmap *p) {
  xrt__hfree_handle(p->handle);
  for (int i = 0; i < p->num_entries; i++)
    xrt__pmap_entry_free(p, p->entries[i]);
  xrt__free(&p->allocator, p->entries);
  xrt_program_release(p->program);
  xrt__free(&p->allocator, p->entry);
  xrt__free(&p->allocator, p->filename);
  pthread_mutex_destroy(&p->mu);
  pthread_cond_destroy(&p->cv);
  xrt_allocator a = p->allocator;
  xrt__free(&a, p);
}

/* Copies the options into the pmap and parses fixed text. */
static xrt_status xrt__pmap_setup(xrt__pmap *p, const xrt_pmap_options *o) {
  p->source = o->source;
  p->source_user = o->source_user;
  p->compile = o->compile;
  p->entry = xrt__strdup_a(&p->allocator, o->compile.entry);
  p->filename = xrt__strdup_a(&p->allocator, o->compile.filename);
  if ((o->compile.entry && !p->entry) || (o->compile.filename && !p->filename))
    return xrt__nomem("a pmap's entry and file names");
  p->compile.entry = p->entry;
  p->compile.filename = p->filename;
  p->compile.device_assignment = NULL;
  if (o->source) return XRT_OK;
  return xrt_program_parse(o->text, o->len, &p->compile, &p->program);
}

xrt_status xrt_pmap_create(xrt_client *client, const xrt_pmap_options *options,
                           xrt_pmap **out_pmap) {
  XRT__CHECK_ARG(out_pmap, "out_pmap is NULL");
  *out_pmap = NULL;
  xrt__client *c = xrt__client_get(client);
  XRT__CHECK_ARG(c, "invalid client");
  XRT__CHECK_ARG(options, "options is NULL");
  XRT__CHECK_ARG(!options->text != !options->source,
                 "give either options->text or options->source, not both");
  xrt__pmap *p = (xrt__pmap *)xrt__calloc(&c->allocator, 1, sizeof *p);
  if (!p) return xrt__nomem("a pmap");
  p->client = client;
  p->allocator = c->allocator;
  pthread_mutex_init(&p->mu, NULL);
  pthread_cond_init(&p->cv, NULL);
  xrt_status s = xrt__pmap_setup(p, options);
  if (!s && !(p->handle = xrt__hnew(p, XRT__H_PMAP)))
    s = xrt__fail(XRT_RESOURCE_EXHAUSTED, "out of handles");
  if (s) {
    xrt__saved_error err = {XRT_OK, ""};
    xrt__save_error(&err, s);
    xrt__pmap_free(p);
    return xrt__restore_error(&err);
  }
  *out_pmap = (xrt_pmap *)p->handle;
  return XRT_OK;
}

/* "(tensor<2xf32>, tensor<3xi32>)" into buf. */
static void xrt__format_shapes(const xrt_shape *s, int n, char *buf,
                               size_t cap) {
  size_t used = (size_t)snprintf(buf, cap, "(");
  for (int i = 0; i < n && used < cap; i++) {
    if (i) used += (size_t)snprintf(buf + used, cap - used, ", ");
    if (used < cap) used += xrt_shape_format(&s[i], buf + used, cap - used);
  }
  if (used < cap) snprintf(buf + used, cap - used, ")");
}

static bool xrt__pmap_entry_matches(const xrt__pmap_entry *e,
                                    const xrt_shape *shapes, int num_args,
                                    const int *ids, int n) {
  if (e->num_args != num_args || e->num_devices != n) return false;
  for (int i = 0; i < num_args; i++)
    if (!xrt__shape_equal(&e->shapes[i], &shapes[i])) return false;
  return memcmp(e->device_ids, ids, (size_t)n * sizeof *ids) == 0;
}

/* A new entry in state COMPILING (under p->mu). */
static xrt_status xrt__pmap_entry_add(xrt__pmap *p, const xrt_shape *shapes,
                                      int num_args, const int *ids, int n,
                                      xrt__pmap_entry **out) {
  if (p->num_entries == p->cap_entries) {
    int cap = p->cap_entries ? 2 * p->cap_entries : 8;
    xrt__pmap_entry **ne = (xrt__pmap_entry **)xrt__calloc(
        &p->allocator, (size_t)cap, sizeof *ne);
    if (!ne) return xrt__nomem("a pmap's signature table");
    if (p->num_entries)
      memcpy(ne, p->entries, (size_t)p->num_entries * sizeof *ne);
    xrt__free(&p->allocator, p->entries);
    p->entries = ne;
    p->cap_entries = cap;
  }
  xrt__pmap_entry *e = (xrt__pmap_entry *)xrt__calloc(&p->allocator, 1,
                                                      sizeof *e);
  if (e) {
    e->shapes = (xrt_shape *)xrt__calloc(
        &p->allocator, (size_t)(num_args ? num_args : 1), sizeof *e->shapes);
    e->device_ids = (int *)xrt__calloc(&p->allocator, (size_t)n, sizeof(int));
  }
  if (!e || !e->shapes || !e->device_ids) {
    if (e) xrt__pmap_entry_free(p, e);
    return xrt__nomem("a pmap signature");
  }
  e->num_args = num_args;
  e->num_devices = n;
  if (num_args) memcpy(e->shapes, shapes, (size_t)num_args * sizeof *shapes);
  memcpy(e->device_ids, ids, (size_t)n * sizeof *ids);
  e->state = XRT__PMAP_COMPILING;
  p->entries[p->num_entries++] = e;
  *out = e;
  return XRT_OK;
}

/* Checks that the compiled entry takes exactly the signature's pieces. */
static xrt_status xrt__pmap_check_inputs(xrt_executable *exe,
                                         const xrt__pmap_entry *e) {
  int n = xrt_executable_num_inputs(exe);
  bool same = n == e->num_args;
  for (int i = 0; i < n && same; i++) {
    xrt_shape want;
    xrt_executable_input_shape(exe, i, &want);
    same = xrt__shape_equal(&want, &e->shapes[i]);
  }
  if (same) return XRT_OK;
  /* The message shows the first few of each side (the formatter stops
   * at its buffer's end). */
  enum { SHOWN = 64 };
  xrt_shape want[SHOWN];
  int shown = n < SHOWN ? n : SHOWN;
  for (int i = 0; i < shown; i++) xrt_executable_input_shape(exe, i, &want[i]);
  char have_s[1024], want_s[1024];
  xrt__format_shapes(e->shapes, e->num_args, have_s, sizeof have_s);
  xrt__format_shapes(want, shown, want_s, sizeof want_s);
  return xrt__fail(XRT_INVALID_ARGUMENT, "pmap: the arguments' pieces %s do "
                   "not match the inputs %s of @%s", have_s, want_s,
                   xrt_executable_name(exe));
}

/* Compiles the program for one signature (no lock held). */
static xrt_status xrt__pmap_compile(xrt__pmap *p, xrt__pmap_entry *e,
                                    xrt_executable **out) {
  xrt_compile_options o = p->compile;
  o.num_replicas = e->num_devices;
  o.num_partitions = 1;
  o.device_assignment = e->device_ids;
  xrt_status s;
  if (p->program) {
    s = xrt_compile_program(p->client, p->program, &o, out);
  } else {
    char *text = NULL;
    size_t len = 0;
    s = p->source(p->source_user, e->shapes, e->num_args, &text, &len);
    if (s) {
      char sig[1024];
      xrt__format_shapes(e->shapes, e->num_args, sig, sizeof sig);
      free(text);
      return xrt__fail(s, "pmap: the source callback failed with %s for the "
                       "signature %s", xrt_strerror(s), sig);
    }
    s = xrt_compile(p->client, text, text ? len : 0, &o, out);
    free(text); /* malloc'd by the callback, as documented */
  }
  if (s) return s;
  if ((s = xrt__pmap_check_inputs(*out, e))) {
    xrt__saved_error err = {XRT_OK, ""};
    xrt__save_error(&err, s);
    xrt_executable_release(*out);
    *out = NULL;
    return xrt__restore_error(&err);
  }
  return XRT_OK;
}

/* The executable of a signature: compiled by the first caller, waited for
 * by the others; a failure is remembered and returned to everyone. */
static xrt_status xrt__pmap_lookup(xrt__pmap *p, const xrt_shape *shapes,
                                   int num_args, const int *ids, int n,
                                   xrt_executable **out) {
  int64_t t0 = xrt__trace_begin();
  pthread_mutex_lock(&p->mu);
  xrt__pmap_entry *e = NULL;
  for (int i = 0; i < p->num_entries && !e; i++)
    if (xrt__pmap_entry_matches(p->entries[i], shapes, num_args, ids, n))
      e = p->entries[i];
  bool hit = e != NULL;
  if (!e) {
    xrt_status s = xrt__pmap_entry_add(p, shapes, num_args, ids, n, &e);
    pthread_mutex_unlock(&p->mu);
    if (s) return s;
    xrt_executable *exe = NULL;
    s = xrt__pmap_compile(p, e, &exe);
    pthread_mutex_lock(&p->mu);
    xrt__save_error(&e->err, s);
    e->exe = exe;
    e->state = s ? XRT__PMAP_FAILED : XRT__PMAP_DONE;
    pthread_cond_broadcast(&p->cv);
  } else {
    xrt__client *pc = xrt__client_get(p->client);
    if (pc) XRT__STAT(pc, CACHE_HITS, 1);
  }
  while (e->state == XRT__PMAP_COMPILING) pthread_cond_wait(&p->cv, &p->mu);
  xrt_executable *exe = e->exe;
  xrt__saved_error err = e->err;
  pthread_mutex_unlock(&p->mu);
  if (t0 && hit && exe)
    xrt__trace_cache_hit(xrt__client_get(p->client), "pmap",
                         xrt_executable_name(exe), t0);
  *out = exe;
  return xrt__restore_error(&err);
}

xrt_status xrt_pmap_call(xrt_pmap *pmap, xrt_sharded_array *const *args,
                         int num_args, xrt_sharded_array **outputs,
                         int num_outputs, const xrt_execute_options *options,
                         xrt_event **out_done) {
  if (out_done) *out_done = NULL;
  XRT__CHECK_ARG(outputs || num_outputs == 0, "outputs is NULL");
  for (int j = 0; j < num_outputs; j++) outputs[j] = NULL;
  xrt__pmap *p = xrt__pmap_get(pmap);
  XRT__CHECK_ARG(p, "invalid or released pmap");
  XRT__CHECK_ARG(xrt__client_get(p->client), "the pmap's client was released");
  XRT__CHECK_ARG(num_args >= 1, "pmap needs at least one argument (its "
                 "arguments give its devices)");
  /* The call's sharded arrays and their pieces' shapes: on the stack for
   * a few arguments, else one heap block. */
  enum { STACK = 16 };
  xrt__sharded *a_stack[STACK], **a = a_stack;
  xrt_shape shapes_stack[STACK], *shapes = shapes_stack;
  void *heap = NULL;
  if (num_args > STACK) {
    heap = xrt__calloc(&p->allocator, (size_t)num_args,
                       sizeof *a + sizeof *shapes);
    if (!heap) return xrt__nomem("a pmap call's arguments");
    shapes = (xrt_shape *)heap; /* the stricter alignment first */
    a = (xrt__sharded **)(void *)(shapes + num_args);
  }
  xrt_status s = xrt__sharded_args(args, num_args, a);
  if (!s && a[0]->client != xrt__client_get(p->client))
    s = xrt__fail(XRT_INVALID_ARGUMENT, "the arguments belong to another "
                  "client than the pmap");
  int n = s ? 0 : a[0]->n;
  int *ids = NULL;
  if (!s && !(ids = (int *)xrt__calloc(&p->allocator, (size_t)n, sizeof(int))))
    s = xrt__nomem("a pmap call's device list");
  xrt_executable *exe = NULL;
  if (!s) {
    for (int i = 0; i < num_args; i++) shapes[i] = a[i]->piece;
    for (int d = 0; d < n; d++)
      ids[d] = xrt_device_global_id(a[0]->devices[d]);
    s = xrt__pmap_lookup(p, shapes, num_args, ids, n, &exe);
  }
  xrt__free(&p->allocator, ids);
  xrt__free(&p->allocator, heap);
  if (s) return s;
  return xrt_execute_sharded(exe, args, num_args, outputs, num_outputs,
                             options, out_done);
}

int xrt_pmap_num_compiled(const xrt_pmap *pmap) {
  xrt__pmap *p = xrt__pmap_get(pmap);
  if (!p) return -1;
  pthread_mutex_lock(&p->mu);
  int done = 0;
  for (int i = 0; i < p->num_entries; i++)
    done += p->entries[i]->state != XRT__PMAP_COMPILING;
  pthread_mutex_unlock(&p->mu);
  return done;
}

void xrt_pmap_release(xrt_pmap *pmap) {
  xrt__pmap *p = xrt__pmap_get(pmap);
  if (p) xrt__pmap_free(p);
}

/* Releasing a client releases everything still alive on it.  Queued work
 * finishes first; then nothing else runs, so objects are freed whatever
 * their counts. */

XRT__PRIVATE void xrt__client_free(xrt__client *c) {
  xrt__queues_stop(c);
  xrt__variables_release_all(c);
  xrt__sharded_release_all(c);
  while (c->executables.next != &c->executables) {
    xrt__executable *e = (xrt__executable *)c->executables.next;
    if (xrt__hget((const void *)e->handle, XRT__H_EXECUTABLE) == e)
      xrt__hkill(e->handle);
    xrt__executable_destroy(e);
  }
  while (c->free_exes.next != &c->free_exes) {
    xrt__executable *e = (xrt__executable *)(void *)c->free_exes.next;
    xrt__link_remove(&e->link);
    xrt__hfree_handle(e->handle);
    xrt__free(&c->allocator, e);
  }
  xrt__cache_free(c); /* 12b: before the plugin's client goes */
  xrt__dlpack_client_gone(c);
  /* Every buffer object, live or dead (see xrt__buffer_obj). */
  while (c->buffers.next != &c->buffers) {
    xrt__buffer *b = (xrt__buffer *)c->buffers.next;
    xrt__link_remove(&b->link);
    if (b->live && c->api->buffer_free)
      c->api->buffer_free(c->pc, b->device, b->mem);
    xrt__dlpack_freed(b);
    xrt__hfree_handle(b->handle); /* ready: freed below with every event */
    xrt__free(&c->allocator, b);
  }
  while (c->erefs.next != &c->erefs) {
    xrt__eref *r = (xrt__eref *)c->erefs.next;
    xrt__hfree_if_live(r->handle, XRT__H_EVENT, r);
    xrt__link_remove(&r->link);
    xrt__free(&c->allocator, r);
  }
  while (c->events.next != &c->events) {
    xrt__event *ev = (xrt__event *)c->events.next;
    xrt__link_remove(&ev->link);
    xrt__event_destroy(ev);
  }
  for (int i = 0; c->devices && i < c->num_devices; i++)
    xrt__hfree_handle(c->devices[i].handle);
  xrt__mp_free(c);
  if (c->pc && c->api->client_destroy) c->api->client_destroy(c->pc);
  xrt__trace_client_closed(c); /* 2b: frees its host services table */
  xrt__plugin_reg_unref(c->reg); /* after the plugin is done with it */
  for (int i = 0; i < c->num_hosts; i++)
    xrt__free(&c->allocator, c->hosts[i].target);
  xrt__free(&c->allocator, c->hosts);
  xrt__free(&c->allocator, c->devices);
  while (c->st_blks) { /* every counting thread is done */
    xrt__stats_blk *b = c->st_blks;
    c->st_blks = b->next;
    xrt__free(&c->allocator, b);
  }
  xrt__hfree_handle(c->handle);
  pthread_mutex_destroy(&c->mu);
  pthread_mutex_destroy(&c->ev_mu);
  pthread_mutex_destroy(&c->launch_mu);
  pthread_cond_destroy(&c->ev_cv);
  xrt_allocator a = c->allocator;
  xrt__free(&a, c);
}

void xrt_client_release(xrt_client *client) {
  xrt__client *c = xrt__client_get(client);
  if (c) xrt__client_free(c);
}
