/*
 * src/core/client.c - clients and devices; per-thread client statistics.
 * Part of the core of xrt; MIT licensed, see LICENSE.
 */
#include "internal.h"

/* Multi-process hooks (section 13a). */

/* Stats counters are per thread: a dispatch counts five things, and five
 * atomic read-modify-writes on shared counters cost about a fifth of it.
 * Each thread adds to its own block of the client with a plain load and
 * store (it is the block's only writer); xrt_client_get_stats sums the
 * blocks.  A thread finds its block through a thread-local cache of the
 * last client it counted for; a block is keyed by the address of that
 * cache, so a later thread at the same address (the first one has exited)
 * takes it over.  Blocks live until the client is released. */
#define XRT__ST_MAXBLKS 64
XRT__PRIVATE_DATA XRT__THREAD_LOCAL_SMALL xrt__tls_stats_cache xrt__tls_stats;

/* This thread's block of c (made on first use), or NULL: count in c->st. */
static xrt__stats_blk *xrt__stats_bind(xrt__client *c) {
  uintptr_t me = (uintptr_t)&xrt__tls_stats;
  xrt__spin_lock(&c->objs_lock);
  xrt__stats_blk *b = c->st_blks;
  while (b && b->thread != me) b = b->next;
  bool room = c->st_nblks < XRT__ST_MAXBLKS;
  xrt__spin_unlock(&c->objs_lock);
  if (!b && room &&
      (b = (xrt__stats_blk *)xrt__calloc(&c->allocator, 1, sizeof *b))) {
    b->thread = me;
    xrt__spin_lock(&c->objs_lock);
    b->next = c->st_blks;
    c->st_blks = b;
    c->st_nblks++;
    xrt__spin_unlock(&c->objs_lock);
  }
  if (b && c->handle) {
    xrt__tls_stats.client = c->handle;
    xrt__tls_stats.blk = b;
  }
  return b;
}

/* Out of line: the first count of a thread for a client. */
XRT__PRIVATE void xrt__stat_add_slow(xrt__client *c, int i, uint64_t n) {
  xrt__stats_blk *b = xrt__stats_bind(c);
  if (!b) atomic_fetch_add_explicit(&c->st[i], n, memory_order_relaxed);
  else
    atomic_store_explicit(&b->v[i],
                          atomic_load_explicit(&b->v[i], memory_order_relaxed) + n,
                          memory_order_relaxed);
}

/* Counter i of c: its shared part plus every thread's block. */
XRT__PRIVATE uint64_t xrt__stat_sum(xrt__client *c, int i) {
  uint64_t v = atomic_load(&c->st[i]);
  xrt__spin_lock(&c->objs_lock);
  for (xrt__stats_blk *b = c->st_blks; b; b = b->next)
    v += atomic_load_explicit(&b->v[i], memory_order_relaxed);
  xrt__spin_unlock(&c->objs_lock);
  return v;
}

XRT__PRIVATE void xrt__link_init(xrt__link *l) { l->prev = l->next = l; }
XRT__PRIVATE void xrt__link_add(xrt__link *head, xrt__link *l) {
  l->next = head->next;
  l->prev = head;
  head->next->prev = l;
  head->next = l;
}
XRT__PRIVATE void xrt__link_remove(xrt__link *l) {
  l->prev->next = l->next;
  l->next->prev = l->prev;
  l->prev = l->next = l;
}

XRT__PRIVATE xrt__client *xrt__client_get(const xrt_client *c) {
  return (xrt__client *)xrt__hget(c, XRT__H_CLIENT);
}
XRT__PRIVATE xrt__device *xrt__device_get(const xrt_device *d) {
  return (xrt__device *)xrt__hget(d, XRT__H_DEVICE);
}

void xrt_client_options_init(xrt_client_options *o) {
  if (!o) return;
  memset(o, 0, sizeof *o);
  o->plugin = "sim";
  o->topology.process_index = o->topology.process_count = -1;
  o->topology.host_index = -1;
  o->topology.local_rank = o->topology.local_world_size = -1;
  o->num_devices = 1;
  o->device_memory_bytes = (uint64_t)4 << 30;
  o->allocator = xrt_allocator_system();
  o->compile_cache_bytes = (size_t)256 << 20;
}
/* Section 12b: a client's compilation cache. */

/* Checks what device_describe returned: a plugin's garbage is an error. */
static xrt_status xrt__device_desc_check(const xrt__client *c, int i,
                                         const xrt_plugin_device_desc *d) {
  if (!d->kind)
    return xrt__fail(XRT_INTERNAL, "plugin '%s': device_describe(%d) "
                     "returned OK without a kind", c->api->name, i);
  if (d->num_attributes < 0 || (d->num_attributes > 0 && !d->attributes))
    return xrt__fail(XRT_INTERNAL, "plugin '%s': device_describe(%d) "
                     "returned %d attributes at %p", c->api->name, i,
                     d->num_attributes, (const void *)d->attributes);
  for (int k = 0; k < d->num_attributes; k++)
    if (!d->attributes[k].name)
      return xrt__fail(XRT_INTERNAL, "plugin '%s': device %d's attribute %d "
                       "has no name", c->api->name, i, k);
  return XRT_OK;
}

static xrt_status xrt__client_devices(xrt__client *c) {
  /* No device_count: no devices, and no client. */
  if (!c->api->device_count)
    return xrt__fail(XRT_UNIMPLEMENTED, "plugin '%s' does not implement "
                     "device_count, so it has no devices", c->api->name);
  XRT__PLUGIN_NEED(c, device_describe);
  int n = c->api->device_count(c->pc);
  if (n <= 0 || n > 65536)
    return xrt__fail(XRT_INTERNAL, "plugin '%s' reports %d devices (1..65536 "
                     "expected)", c->api->name, n);
  c->devices = (xrt__device *)xrt__calloc(&c->allocator, (size_t)n,
                                          sizeof(xrt__device));
  if (!c->devices) return xrt__nomem("the client's devices");
  c->num_devices = n;
  for (int i = 0; i < n; i++) {
    xrt__device *d = &c->devices[i];
    xrt_plugin_error err = {{0}};
    d->client = c;
    d->index = i;
    d->desc.struct_size = sizeof d->desc;
    xrt_status s = c->api->device_describe(c->pc, i, &d->desc, &err);
    if (s) return xrt__fail_plugin(s, c->api->name, &err);
    if ((s = xrt__device_desc_check(c, i, &d->desc))) return s;
    d->handle = xrt__hnew(d, XRT__H_DEVICE);
    if (!d->handle) return xrt__fail(XRT_RESOURCE_EXHAUSTED, "out of handles");
  }
  return XRT_OK;
}

static xrt_status xrt__client_open(xrt__client *c,
                                   const xrt_client_options *o) {
  const char *name = o->plugin ? o->plugin : "sim";
  xrt_status s = xrt__topology_resolve(&o->topology, &c->topology);
  if (s || (s = xrt__context_acquire(o->context, name, &c->reg))) return s;
  c->api = xrt__plugin_reg_api(c->reg);
  XRT__PLUGIN_NEED(c, client_create);
  /* What the plugin makes, it must be able to free: else every client,
   * buffer or executable would leak the plugin's memory. */
  XRT__PLUGIN_NEED(c, client_destroy);
  if (c->api->buffer_alloc || c->api->buffer_wrap_host)
    XRT__PLUGIN_NEED(c, buffer_free);
  if (c->api->compile) XRT__PLUGIN_NEED(c, executable_destroy);
  if ((s = xrt__mp_join(c, o))) return s;
  xrt_plugin_client_args args;
  memset(&args, 0, sizeof args);
  args.struct_size = sizeof args;
  args.num_devices = o->num_devices;
  args.device_memory_bytes = o->device_memory_bytes;
  args.allocator = c->allocator;
  args.threads_per_device = o->threads_per_device;
  args.topology = c->topology;
  args.api = c->reg->table;
  args.host = xrt__host_api_for(c, &c->allocator);
  if (!args.host) return xrt__nomem("the client's trace registry entry");
  xrt_plugin_error err = {{0}};
  if ((s = c->api->client_create(&args, &c->pc, &err)))
    return xrt__fail_plugin(s, c->api->name, &err);
  if (!c->pc)
    return xrt__fail(XRT_INTERNAL, "plugin '%s': client_create returned OK "
                     "without a client", c->api->name);
  if ((s = xrt__client_devices(c)) || (s = xrt__mp_devices(c))) return s;
  if ((s = xrt__host_register_builtins(c))) return s;
  if ((s = xrt__queues_start(c))) return s;
  c->handle = xrt__hnew(c, XRT__H_CLIENT);
  if (!c->handle) return xrt__fail(XRT_RESOURCE_EXHAUSTED, "out of handles");
  return XRT_OK;
}

/* The client's locks; the event condition variable waits on the monotonic
 * clock, so that await_for is immune to wall-clock changes. */
static void xrt__client_init_sync(xrt__client *c) {
  pthread_mutex_init(&c->mu, NULL);
  pthread_mutex_init(&c->ev_mu, NULL);
  pthread_mutex_init(&c->launch_mu, NULL);
  xrt__os_cond_init(&c->ev_cv);
  xrt__link_init(&c->buffers);
  xrt__link_init(&c->executables);
  xrt__link_init(&c->events);
  xrt__link_init(&c->erefs);
  xrt__link_init(&c->free_exes);
  atomic_init(&c->next_launch_id, 1);
}

xrt_status xrt_client_create(const xrt_client_options *options,
                             xrt_client **out_client) {
  XRT__CHECK_ARG(out_client, "out_client is NULL");
  *out_client = NULL;
  xrt_client_options o;
  xrt_client_options_init(&o);
  if (options) o = *options;
  if (!o.allocator.alloc || !o.allocator.free)
    return xrt__fail(XRT_INVALID_ARGUMENT, "allocator lacks alloc or free");
  if (o.num_devices < 1 || o.num_devices > 1024)
    return xrt__fail(XRT_INVALID_ARGUMENT, "num_devices must be in 1..1024, "
                     "got %d", o.num_devices);
  if (o.device_memory_bytes == 0)
    return xrt__fail(XRT_INVALID_ARGUMENT, "device_memory_bytes is 0");
  xrt__client *c = (xrt__client *)xrt__calloc(&o.allocator, 1, sizeof *c);
  if (!c) return xrt__nomem("the client");
  c->allocator = o.allocator;
  xrt__client_init_sync(c);
  xrt_status s = xrt__client_open(c, &o);
  if (!s) s = xrt__cache_create(c, &o);
  if (s) {
    xrt__client_free(c);
    return s;
  }
  xrt__trace_client_opened(c, c->api->name, c->num_devices); /* 2b */
  *out_client = (xrt_client *)c->handle;
  return XRT_OK;
}

const char *xrt_client_platform(const xrt_client *client) {
  xrt__client *c = xrt__client_get(client);
  return c ? c->api->name : NULL;
}

int xrt_client_device_count(const xrt_client *client) {
  xrt__client *c = xrt__client_get(client);
  return c ? c->num_devices : -1;
}

xrt_device *xrt_client_device(xrt_client *client, int index) {
  xrt__client *c = xrt__client_get(client);
  if (!c) {
    xrt__fail(XRT_INVALID_ARGUMENT, "xrt_client_device: invalid client");
    return NULL;
  }
  if (index < 0 || index >= c->num_devices) {
    xrt__fail(XRT_OUT_OF_RANGE, "device index %d is outside 0..%d", index,
              c->num_devices - 1);
    return NULL;
  }
  return (xrt_device *)c->devices[index].handle;
}

uint64_t xrt_client_new_launch_id(xrt_client *client) {
  xrt__client *c = xrt__client_get(client);
  if (!c) {
    xrt__fail(XRT_INVALID_ARGUMENT, "xrt_client_new_launch_id: invalid "
              "client");
    return 0;
  }
  if (c->mp) return xrt__mp_new_launch_id(c); /* alike in every process */
  return atomic_fetch_add_explicit(&c->next_launch_id, 1,
                                   memory_order_relaxed);
}

int xrt_device_id(const xrt_device *device) {
  xrt__device *d = xrt__device_get(device);
  return d ? d->index : -1;
}

const char *xrt_device_kind(const xrt_device *device) {
  xrt__device *d = xrt__device_get(device);
  return d ? d->desc.kind : NULL;
}

int xrt_device_attribute_count(const xrt_device *device) {
  xrt__device *d = xrt__device_get(device);
  return d ? d->desc.num_attributes : -1;
}

xrt_status xrt_device_attribute_get(const xrt_device *device, int index,
                                    xrt_attribute *out) {
  xrt__device *d = xrt__device_get(device);
  XRT__CHECK_ARG(d, "invalid device");
  XRT__CHECK_ARG(out, "out is NULL");
  if (index < 0 || index >= d->desc.num_attributes)
    return xrt__fail(XRT_OUT_OF_RANGE, "attribute index %d is outside 0..%d",
                     index, d->desc.num_attributes - 1);
  *out = d->desc.attributes[index];
  return XRT_OK;
}

xrt_status xrt_device_attribute_find(const xrt_device *device,
                                     const char *name, xrt_attribute *out) {
  xrt__device *d = xrt__device_get(device);
  XRT__CHECK_ARG(d, "invalid device");
  XRT__CHECK_ARG(name && out, "name or out is NULL");
  for (int i = 0; i < d->desc.num_attributes; i++)
    if (d->desc.attributes[i].name &&
        strcmp(d->desc.attributes[i].name, name) == 0) {
      *out = d->desc.attributes[i];
      return XRT_OK;
    }
  return xrt__fail(XRT_NOT_FOUND, "device %d has no attribute '%s'", d->index,
                   name);
}
