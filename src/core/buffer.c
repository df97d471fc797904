/*
 * src/core/buffer.c - buffers: reference counts, transfers (sync and async).
 * Part of the core of xrt; MIT licensed, see LICENSE.
 */
#include "internal.h"

/* Without a lock: dispatch does this for every argument. */
XRT__PRIVATE xrt__buffer *xrt__buffer_acquire(const xrt_buffer *handle) {
  bool stale;
  xrt__buffer *b = (xrt__buffer *)xrt__hpin(
      handle, XRT__H_BUFFER, offsetof(xrt__buffer, refs), &stale);
  if (stale) { /* released meanwhile */
    xrt__buffer_unref(b);
    return NULL;
  }
  return b;
}

/* Buffer objects are never freed while their client lives: every one
 * ever made stays on the client's `buffers` list (which client release
 * walks), and dead ones are reused, which makes the lock-free
 * xrt__buffer_acquire safe and spares dispatch a malloc and a free.  Each
 * thread keeps one dead object aside (keyed by the client's handle, never
 * reused), so that a release followed by a dispatch on one thread takes
 * no lock; the others wait on the client's free list. */
static XRT__THREAD_LOCAL_SMALL struct {
  uintptr_t client;
  xrt__buffer *b;
} xrt__spare_buf;

/* A dead buffer object (a recycled one keeps its handle slot, the handle
 * dead) or a zeroed new one. */
XRT__PRIVATE xrt__buffer *xrt__buffer_obj(xrt__client *c) {
  xrt__buffer *b = xrt__spare_buf.b;
  if (b && xrt__spare_buf.client == c->handle) {
    xrt__spare_buf.b = NULL;
    return b;
  }
  xrt__spin_lock(&c->objs_lock);
  b = c->free_bufs;
  if (b) c->free_bufs = b->next_free;
  xrt__spin_unlock(&c->objs_lock);
  if (b) return b;
  b = (xrt__buffer *)xrt__calloc(&c->allocator, 1, sizeof *b);
  if (!b) return NULL;
  xrt__spin_lock(&c->objs_lock);
  xrt__link_add(&c->buffers, &b->link);
  xrt__spin_unlock(&c->objs_lock);
  return b;
}

/* Sets a dead buffer object aside for reuse.  A spare of another client
 * is dropped from the slot (it stays on that client's list). */
XRT__PRIVATE void xrt__buffer_recycle(xrt__client *c, xrt__buffer *b) {
  if (!xrt__spare_buf.b || xrt__spare_buf.client != c->handle) {
    xrt__spare_buf.client = c->handle;
    xrt__spare_buf.b = b;
    return;
  }
  xrt__spin_lock(&c->objs_lock);
  b->next_free = c->free_bufs;
  c->free_bufs = b;
  xrt__spin_unlock(&c->objs_lock);
}

/* Allocates device memory and the buffer object around it; ready (may be
 * NULL) is the producer's event, of which the buffer takes a reference. */
XRT__PRIVATE xrt_status xrt__buffer_new(xrt__client *c, int device,
                                  const xrt_shape *shape, size_t bytes,
                                  xrt__event *ready, xrt__buffer **out) {
  XRT__PLUGIN_NEED(c, buffer_alloc);
  xrt__buffer *b = xrt__buffer_obj(c);
  if (!b) return xrt__nomem("a buffer object");
  b->client = c;
  b->device = device;
  b->shape = *shape;
  b->bytes = bytes;
  b->ready = NULL;
  xrt_plugin_error err;
  err.message[0] = 0; /* not = {{0}}: zeroing 1 KiB per dispatch shows */
  b->mem = NULL;
  xrt_status s = c->api->buffer_alloc(c->pc, device, bytes, &b->mem, &err);
  if (s || !b->mem) { /* OK without memory: the plugin's bug, not a crash */
    xrt__buffer_recycle(c, b);
    if (!s) return xrt__fail(XRT_INTERNAL, "plugin '%s': buffer_alloc "
                             "returned OK without memory", c->api->name);
    return xrt__fail_plugin(s, c->api->name, &err);
  }
  return xrt__buffer_publish(c, b, ready, out);
}

/* Gives b, whose device memory b->mem is set, its handle and one
 * reference (on failure frees the memory and recycles b). */
XRT__PRIVATE xrt_status xrt__buffer_publish(xrt__client *c, xrt__buffer *b,
                                      xrt__event *ready, xrt__buffer **out) {
  int device = b->device;
  size_t bytes = b->bytes;
  XRT__STAT(c, ALLOCS, 1);
  XRT__STAT(c, BYTES_IN_USE, bytes);
  b->live = true;
  /* Release: a stale acquirer that increments this count then sees the
   * old handle dead (see xrt__buffer_acquire). */
  atomic_store_explicit(&b->refs, 1, memory_order_release);
  b->handle = b->handle ? xrt__hrenew(b->handle, XRT__H_BUFFER)
                        : xrt__hnew(b, XRT__H_BUFFER);
  if (!b->handle) { /* only a new object lacks a slot: no one acquires it */
    atomic_store_explicit(&b->refs, 0, memory_order_relaxed);
    if (c->api->buffer_free) c->api->buffer_free(c->pc, device, b->mem);
    XRT__STAT(c, FREES, 1);
    XRT__STAT(c, BYTES_IN_USE, 0 - (uint64_t)bytes);
    b->live = false;
    xrt__buffer_recycle(c, b);
    return xrt__fail(XRT_RESOURCE_EXHAUSTED, "out of handles");
  }
  if (ready) xrt__event_ref(ready);
  b->ready = ready;
  *out = b;
  return XRT_OK;
}

/* Frees the memory of a buffer whose last reference is gone (its handle
 * is dead) and recycles the object. */

static void xrt__buffer_destroy(xrt__buffer *b) {
  xrt__client *c = b->client;
  if (c->api->buffer_free) c->api->buffer_free(c->pc, b->device, b->mem);
  xrt__dlpack_freed(b);
  XRT__STAT(c, FREES, 1);
  XRT__STAT(c, BYTES_IN_USE, 0 - (uint64_t)b->bytes);
  xrt__event_unref(b->ready);
  b->mem = NULL;
  b->ready = NULL;
  b->live = false;
  xrt__buffer_recycle(c, b);
}

XRT__PRIVATE void xrt__buffer_unref(xrt__buffer *b) {
  if (b && atomic_fetch_sub(&b->refs, 1) == 1) xrt__buffer_destroy(b);
}

/* Frees a buffer whose handle was never given out (failure paths). */
XRT__PRIVATE void xrt__buffer_discard(xrt__buffer *b) {
  if (!b) return;
  xrt__hkill(b->handle);
  xrt__buffer_unref(b);
}

/* Runs a task inline on a held device, as the worker would, and returns
 * the status of the event it completed; the caller keeps a reference to
 * t->done. */
static xrt_status xrt__run_held(xrt__device *d, xrt__task *t) {
  xrt__event *done = t->done;
  xrt__event_ref(done);
  xrt__task_run(d, t);
  xrt__device_unhold(d);
  xrt_status s = done->code;
  if (s) xrt__fail(s, "%s", done->message);
  xrt__event_unref(done);
  return s;
}

/* Enqueues t and waits for the event it completes (the synchronous calls
 * when the device is busy or an input is pending). */
static xrt_status xrt__run_queued(xrt__device *d, xrt__task *t) {
  xrt__event *done = t->done;
  xrt__event_ref(done);
  xrt__enqueue(d, t);
  xrt_status s = xrt__event_wait(done);
  if (s) xrt__fail(s, "%s", done->message);
  xrt__event_unref(done);
  return s;
}

/* Validates the arguments of from_host{,_async}. */
static xrt_status xrt__from_host_check(xrt__client *c, xrt__device *d,
                                       const xrt_shape *shape,
                                       const void *data, size_t *bytes) {
  XRT__CHECK_ARG(c, "invalid client");
  XRT__CHECK_ARG(d, "invalid device");
  XRT__CHECK_ARG(d->client == c, "device belongs to another client");
  XRT__CHECK_ARG(shape, "shape is NULL");
  xrt_status s = xrt__shape_check(shape, bytes);
  if (s) return s;
  XRT__CHECK_ARG(data || *bytes == 0, "data is NULL");
  return XRT_OK;
}

static xrt_status xrt__write_inline(xrt__client *c, xrt__device *d,
                                    const xrt_shape *shape, size_t bytes,
                                    const void *data, xrt__buffer **out) {
  if (bytes) XRT__PLUGIN_NEED(c, buffer_write);
  xrt__buffer *b;
  xrt_status s = xrt__buffer_new(c, d->index, shape, bytes, NULL, &b);
  if (s) return s;
  xrt_plugin_error err = {{0}};
  XRT__STAT(c, H2D, 1);
  int64_t t0 = xrt__trace_begin();
  if (bytes && (s = c->api->buffer_write(c->pc, d->index, b->mem, data, bytes,
                                         &err))) {
    xrt__buffer_discard(b);
    return xrt__fail_plugin(s, c->api->name, &err);
  }
  if (t0) xrt__trace_transfer(c, d->index, "h2d", shape, t0);
  *out = b;
  return XRT_OK;
}

/* A task of the given kind producing a new buffer of shape on device d:
 * the buffer has a pending ready event that the task completes, and the
 * task holds a reference to it beside its handle's. */
static xrt_status xrt__producer_task(xrt__client *c, int kind, xrt__device *d,
                                     const xrt_shape *shape, size_t bytes,
                                     xrt__task **out) {
  xrt__task *t;
  xrt_status s = xrt__task_start(c, kind, 0, d->index, &t);
  if (s) return s;
  s = xrt__buffer_new(c, d->index, shape, bytes, t->done, &t->dst);
  if (s) {
    xrt__event_unref(t->done);
    xrt__free(&c->allocator, t);
    return s;
  }
  atomic_fetch_add(&t->dst->refs, 1);
  *out = t;
  return XRT_OK;
}

/* A buffer with a pending ready event and the task that will fill it from
 * host memory. */
static xrt_status xrt__write_task(xrt__client *c, xrt__device *d,
                                  const xrt_shape *shape, size_t bytes,
                                  const void *data, xrt__task **out) {
  xrt_status s = xrt__producer_task(c, XRT__T_WRITE, d, shape, bytes, out);
  if (!s) (*out)->host_src = data;
  return s;
}

xrt_status xrt_buffer_from_host(xrt_client *client, xrt_device *device,
                                const xrt_shape *shape, const void *data,
                                xrt_buffer **out_buffer) {
  XRT__CHECK_ARG(out_buffer, "out_buffer is NULL");
  *out_buffer = NULL;
  xrt__client *c = xrt__client_get(client);
  xrt__device *d = xrt__device_get(device);
  size_t bytes = 0;
  xrt_status s = xrt__from_host_check(c, d, shape, data, &bytes);
  if (s) return s;
  xrt__buffer *b = NULL;
  if (xrt__device_hold(d)) {
    s = xrt__write_inline(c, d, shape, bytes, data, &b);
    xrt__device_unhold(d);
  } else {
    xrt__task *t;
    if ((s = xrt__write_task(c, d, shape, bytes, data, &t))) return s;
    b = t->dst;
    s = xrt__run_queued(d, t);
    if (s) {
      xrt__buffer_discard(b);
      b = NULL;
    }
  }
  if (b) *out_buffer = (xrt_buffer *)b->handle;
  return s;
}

xrt_status xrt_buffer_from_host_async(xrt_client *client, xrt_device *device,
                                      const xrt_shape *shape, const void *data,
                                      xrt_buffer **out_buffer,
                                      xrt_event **out_done) {
  XRT__CHECK_ARG(out_buffer, "out_buffer is NULL");
  *out_buffer = NULL;
  if (out_done) *out_done = NULL;
  xrt__client *c = xrt__client_get(client);
  xrt__device *d = xrt__device_get(device);
  size_t bytes = 0;
  xrt_status s = xrt__from_host_check(c, d, shape, data, &bytes);
  if (s) return s;
  xrt__task *t;
  if ((s = xrt__write_task(c, d, shape, bytes, data, &t))) return s;
  if (out_done && (s = xrt__event_publish(t->done, out_done))) {
    xrt__buffer_discard(t->dst);
    xrt__task_free(t, c);
    return s;
  }
  *out_buffer = (xrt_buffer *)t->dst->handle;
  xrt__enqueue(d, t);
  return XRT_OK;
}

/* Validates a read of b into dst. */
static xrt_status xrt__read_check(const xrt__buffer *b, const void *dst,
                                  size_t dst_bytes) {
  XRT__CHECK_ARG(dst || b->bytes == 0, "dst is NULL");
  if (dst_bytes < b->bytes)
    return xrt__fail(XRT_INVALID_ARGUMENT, "destination holds %zu bytes, the "
                     "buffer has %zu", dst_bytes, b->bytes);
  return XRT_OK;
}

/* A task reading b (whose reference it takes over) into dst. */
static xrt_status xrt__read_task(xrt__buffer *b, void *dst, xrt__task **out) {
  xrt__client *c = b->client;
  xrt__task *t;
  xrt_status s = xrt__task_start(c, XRT__T_READ, 0, b->device, &t);
  if (s) return s;
  t->src = b;
  t->host_dst = dst;
  *out = t;
  return XRT_OK;
}

xrt_status xrt_buffer_to_host(xrt_buffer *buffer, void *dst,
                              size_t dst_bytes) {
  xrt__buffer *b = xrt__buffer_acquire(buffer);
  XRT__CHECK_ARG(b, "invalid or released buffer");
  xrt__client *c = b->client;
  xrt__device *d = &c->devices[b->device];
  xrt_status s = xrt__read_check(b, dst, dst_bytes);
  xrt_status st = s ? s : xrt__buffer_state(b);
  if (s || (st != XRT_UNAVAILABLE && (st || xrt__device_hold(d)))) {
    if (!s && st) { /* poisoned: its producer's error */
      s = xrt__fail(st, "%s", b->ready->message);
    } else if (!s) {
      xrt_plugin_error err = {{0}};
      XRT__STAT(c, D2H, 1);
      int64_t t0 = xrt__trace_begin();
      if (b->bytes && !c->api->buffer_read)
        s = xrt__plugin_lacks(c->api, "buffer_read");
      else if (b->bytes &&
               (s = c->api->buffer_read(c->pc, b->device, b->mem, dst,
                                        b->bytes, &err)))
        xrt__fail_plugin(s, c->api->name, &err);
      if (t0 && !s) xrt__trace_transfer(c, b->device, "d2h", &b->shape, t0);
      xrt__device_unhold(d);
    }
    xrt__buffer_unref(b);
    return s;
  }
  xrt__task *t;
  if ((s = xrt__read_task(b, dst, &t))) {
    xrt__buffer_unref(b);
    return s;
  }
  return xrt__run_queued(d, t);
}

xrt_status xrt_buffer_to_host_async(xrt_buffer *buffer, void *dst,
                                    size_t dst_bytes, xrt_event **out_done) {
  XRT__CHECK_ARG(out_done, "out_done is NULL");
  *out_done = NULL;
  xrt__buffer *b = xrt__buffer_acquire(buffer);
  XRT__CHECK_ARG(b, "invalid or released buffer");
  xrt__client *c = b->client;
  xrt__task *t = NULL;
  xrt_status s = xrt__read_check(b, dst, dst_bytes);
  if (!s) s = xrt__read_task(b, dst, &t);
  if (!s && (s = xrt__event_publish(t->done, out_done))) {
    xrt__task_free(t, c);
    return s;
  }
  if (s) {
    xrt__buffer_unref(b);
    return s;
  }
  xrt__enqueue(&c->devices[b->device], t);
  return XRT_OK;
}

/* A task copying src (whose reference it takes over) to a new buffer on
 * device d, whose ready event it completes. */
static xrt_status xrt__copy_task(xrt__buffer *src, xrt__device *d,
                                 xrt__task **out) {
  xrt_status s = xrt__producer_task(src->client, XRT__T_COPY, d, &src->shape,
                                    src->bytes, out);
  if (!s) (*out)->src = src;
  return s;
}

static xrt_status xrt__copy_check(xrt__buffer *b, xrt__device *d,
                                  xrt_buffer **out_buffer) {
  XRT__CHECK_ARG(b, "invalid or released buffer");
  XRT__CHECK_ARG(d, "invalid device");
  XRT__CHECK_ARG(d->client == b->client, "device belongs to another client");
  XRT__CHECK_ARG(out_buffer, "out_buffer is NULL");
  return XRT_OK;
}

static xrt_status xrt__copy_inline(xrt__buffer *b, xrt__device *d,
                                   xrt__buffer **out) {
  xrt__client *c = b->client;
  if (b->bytes) XRT__PLUGIN_NEED(c, buffer_copy);
  xrt__buffer *nb;
  xrt_status s = xrt__buffer_new(c, d->index, &b->shape, b->bytes, NULL, &nb);
  if (s) return s;
  xrt_plugin_error err = {{0}};
  XRT__STAT(c, COPIES, 1);
  XRT__STAT(c, BYTES_COPIED, b->bytes);
  int64_t t0 = xrt__trace_begin();
  if (b->bytes && (s = c->api->buffer_copy(c->pc, b->device, b->mem, d->index,
                                           nb->mem, b->bytes, &err))) {
    xrt__buffer_discard(nb);
    return xrt__fail_plugin(s, c->api->name, &err);
  }
  if (t0) /* on the source's track: its queue orders the copy */
    xrt__trace_transfer(c, b->device, "d2d", &b->shape, t0);
  *out = nb;
  return XRT_OK;
}

xrt_status xrt_buffer_copy_to_device(xrt_buffer *buffer, xrt_device *device,
                                     xrt_buffer **out_buffer) {
  if (out_buffer) *out_buffer = NULL;
  xrt__buffer *b = xrt__buffer_acquire(buffer);
  xrt__device *d = xrt__device_get(device);
  xrt_status s = xrt__copy_check(b, d, out_buffer);
  if (s) {
    xrt__buffer_unref(b);
    return s;
  }
  xrt__device *sd = &b->client->devices[b->device];
  xrt_status st = xrt__buffer_state(b);
  xrt__buffer *nb = NULL;
  if (st && st != XRT_UNAVAILABLE) {
    s = xrt__fail(st, "%s", b->ready->message);
  } else if (!st && xrt__device_hold(sd)) {
    s = xrt__copy_inline(b, d, &nb);
    xrt__device_unhold(sd);
  } else {
    xrt__task *t;
    atomic_fetch_add(&b->refs, 1); /* for the task */
    if ((s = xrt__copy_task(b, d, &t))) {
      xrt__buffer_unref(b);
    } else {
      nb = t->dst;
      s = xrt__run_queued(sd, t);
      if (s) {
        xrt__buffer_discard(nb);
        nb = NULL;
      }
    }
  }
  xrt__buffer_unref(b);
  if (nb) *out_buffer = (xrt_buffer *)nb->handle;
  return s;
}

xrt_status xrt_buffer_copy_to_device_async(xrt_buffer *buffer,
                                           xrt_device *device,
                                           xrt_buffer **out_buffer) {
  if (out_buffer) *out_buffer = NULL;
  xrt__buffer *b = xrt__buffer_acquire(buffer);
  xrt__device *d = xrt__device_get(device);
  xrt_status s = xrt__copy_check(b, d, out_buffer);
  xrt__task *t = NULL;
  if (!s) s = xrt__copy_task(b, d, &t);
  if (s) {
    xrt__buffer_unref(b);
    return s;
  }
  *out_buffer = (xrt_buffer *)t->dst->handle;
  xrt__enqueue(&b->client->devices[b->device], t);
  return XRT_OK;
}

xrt_status xrt_buffer_ready_event(xrt_buffer *buffer, xrt_event **out_event) {
  XRT__CHECK_ARG(out_event, "out_event is NULL");
  *out_event = NULL;
  xrt__buffer *b = xrt__buffer_acquire(buffer);
  XRT__CHECK_ARG(b, "invalid or released buffer");
  xrt__client *c = b->client;
  xrt__event *ev = b->ready;
  xrt_status s = XRT_OK;
  if (ev) {
    xrt__event_ref(ev);
  } else if ((ev = xrt__event_new(c, b->device))) {
    atomic_store(&ev->done, 1); /* made ready: nobody else sees it yet */
  } else {
    s = xrt__nomem("a buffer's ready event");
  }
  if (ev) {
    s = xrt__event_publish(ev, out_event);
    xrt__event_unref(ev);
  }
  xrt__buffer_unref(b);
  return s;
}

xrt_status xrt_buffer_shape(const xrt_buffer *buffer, xrt_shape *out) {
  XRT__CHECK_ARG(out, "out is NULL");
  xrt__buffer *b = xrt__buffer_acquire(buffer);
  XRT__CHECK_ARG(b, "invalid or released buffer");
  *out = b->shape;
  xrt__buffer_unref(b);
  return XRT_OK;
}

size_t xrt_buffer_bytes(const xrt_buffer *buffer) {
  xrt__buffer *b = xrt__buffer_acquire(buffer);
  size_t n = b ? b->bytes : 0;
  xrt__buffer_unref(b);
  return n;
}

xrt_device *xrt_buffer_device(const xrt_buffer *buffer) {
  xrt__buffer *b = xrt__buffer_acquire(buffer);
  xrt_device *d = b ? (xrt_device *)b->client->devices[b->device].handle
                    : NULL;
  xrt__buffer_unref(b);
  return d;
}

xrt_status xrt_buffer_release(xrt_buffer *buffer) {
  if (!buffer) return XRT_OK;
  xrt__buffer *b = (xrt__buffer *)xrt__hrevoke(buffer, XRT__H_BUFFER);
  XRT__CHECK_ARG(b, "invalid or already released buffer");
  xrt__buffer_unref(b);
  return XRT_OK;
}

xrt_status xrt_device_inject_fault(xrt_device *device, int64_t after_steps) {
  xrt__device *d = xrt__device_get(device);
  XRT__CHECK_ARG(d, "invalid device");
  XRT__CHECK_ARG(after_steps >= 0, "after_steps is negative");
  xrt__client *c = d->client;
  XRT__PLUGIN_NEED(c, inject_fault);
  /* Through the queue: the fault hits the next execution enqueued after
   * this call, and the plugin sees it on the device's own thread. */
  xrt__task *t;
  xrt_status s = xrt__task_start(c, XRT__T_FAULT, 0, d->index, &t);
  if (s) return s;
  t->steps = after_steps;
  return xrt__device_hold(d) ? xrt__run_held(d, t) : xrt__run_queued(d, t);
}
