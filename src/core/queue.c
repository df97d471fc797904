/*
 * src/core/queue.c - device queues and events: worker threads, tasks, events.
 * Part of the core of xrt; MIT licensed, see LICENSE.
 */
#include "internal.h"

XRT__PRIVATE xrt__event *xrt__event_new(xrt__client *c, int home) {
  xrt__event *ev = (xrt__event *)xrt__calloc(&c->allocator, 1, sizeof *ev);
  if (!ev) return NULL;
  ev->client = c;
  ev->home = home;
  atomic_init(&ev->refs, 1);
  atomic_init(&ev->done, 0);
  ev->cbs_tail = &ev->cbs;
  xrt__spin_lock(&c->objs_lock);
  xrt__link_add(&c->events, &ev->link);
  xrt__spin_unlock(&c->objs_lock);
  return ev;
}

XRT__PRIVATE void xrt__event_ref(xrt__event *ev) { atomic_fetch_add(&ev->refs, 1); }

XRT__PRIVATE void xrt__event_destroy(xrt__event *ev) {
  xrt__client *c = ev->client;
  while (ev->cbs) {
    xrt__cb *n = ev->cbs->next;
    xrt__free(&c->allocator, ev->cbs);
    ev->cbs = n;
  }
  xrt__free(&c->allocator, ev);
}

XRT__PRIVATE void xrt__event_unref(xrt__event *ev) {
  if (!ev || atomic_fetch_sub(&ev->refs, 1) != 1) return;
  xrt__client *c = ev->client;
  xrt__spin_lock(&c->objs_lock);
  xrt__link_remove(&ev->link);
  xrt__spin_unlock(&c->objs_lock);
  xrt__event_destroy(ev);
}

XRT__PRIVATE bool xrt__event_done(const xrt__event *ev) {
  return atomic_load_explicit(&((xrt__event *)ev)->done, memory_order_acquire);
}

/* Runs the callbacks registered so far, then any registered meanwhile;
 * only one thread at a time does this for an event (cb_running), which
 * keeps registration order. */
XRT__PRIVATE void xrt__event_run_callbacks(xrt__event *ev) {
  xrt__client *c = ev->client;
  for (;;) {
    pthread_mutex_lock(&c->ev_mu);
    xrt__cb *list = ev->cbs;
    ev->cbs = NULL;
    ev->cbs_tail = &ev->cbs;
    if (!list) ev->cb_running = false;
    pthread_mutex_unlock(&c->ev_mu);
    if (!list) return;
    while (list) {
      xrt__cb *next = list->next;
      list->fn(list->user, ev->code, ev->code ? ev->message : "");
      xrt__free(&c->allocator, list);
      list = next;
    }
  }
}

/* Completes ev (on a device worker) and runs its callbacks. */
XRT__PRIVATE void xrt__event_complete(xrt__event *ev, xrt_status code,
                                const char *msg) {
  xrt__client *c = ev->client;
  pthread_mutex_lock(&c->ev_mu);
  ev->code = code;
  if (code) snprintf(ev->message, sizeof ev->message, "%s", msg);
  atomic_store_explicit(&ev->done, 1, memory_order_release);
  bool run = ev->cbs != NULL;
  if (run) ev->cb_running = true;
  pthread_cond_broadcast(&c->ev_cv);
  pthread_mutex_unlock(&c->ev_mu);
  if (run) xrt__event_run_callbacks(ev);
}

/* Waits for ev; its code (the message stays in ev). */
XRT__PRIVATE xrt_status xrt__event_wait(xrt__event *ev) {
  if (!xrt__event_done(ev)) {
    xrt__client *c = ev->client;
    pthread_mutex_lock(&c->ev_mu);
    while (!atomic_load_explicit(&ev->done, memory_order_relaxed))
      pthread_cond_wait(&c->ev_cv, &c->ev_mu);
    pthread_mutex_unlock(&c->ev_mu);
  }
  return ev->code;
}

/* Publishes a new user reference to ev (taking one). */
XRT__PRIVATE xrt_status xrt__event_publish(xrt__event *ev, xrt_event **out) {
  xrt__client *c = ev->client;
  xrt__eref *r = (xrt__eref *)xrt__calloc(&c->allocator, 1, sizeof *r);
  if (!r) return xrt__nomem("an event handle");
  r->ev = ev;
  r->handle = xrt__hnew(r, XRT__H_EVENT);
  if (!r->handle) {
    xrt__free(&c->allocator, r);
    return xrt__fail(XRT_RESOURCE_EXHAUSTED, "out of handles");
  }
  xrt__event_ref(ev);
  xrt__spin_lock(&c->objs_lock);
  xrt__link_add(&c->erefs, &r->link);
  xrt__spin_unlock(&c->objs_lock);
  *out = (xrt_event *)r->handle;
  return XRT_OK;
}

/* The event behind a user handle, with a reference the caller drops. */
static xrt__event *xrt__event_acquire(const xrt_event *handle) {
  atomic_flag *mu = xrt__hstripe(handle);
  xrt__spin_lock(mu);
  xrt__eref *r = (xrt__eref *)xrt__hget(handle, XRT__H_EVENT);
  xrt__event *ev = r ? r->ev : NULL;
  if (ev) xrt__event_ref(ev);
  xrt__spin_unlock(mu);
  return ev;
}

/* Wakes the worker if it sleeps; called under q->lock, signals after. */
static bool xrt__queue_take_sleeper(xrt__queue *q) {
  if (!atomic_load_explicit(&q->sleeping, memory_order_relaxed)) return false;
  atomic_store_explicit(&q->sleeping, false, memory_order_relaxed);
  return true;
}

static void xrt__queue_wake(xrt__queue *q) {
  pthread_mutex_lock(&q->mu);
  pthread_cond_signal(&q->work_cv);
  pthread_mutex_unlock(&q->mu);
}

/* Sleeps until a waker clears `sleeping` (set by the caller under lock). */
static void xrt__queue_sleep(xrt__queue *q) {
  pthread_mutex_lock(&q->mu);
  while (atomic_load_explicit(&q->sleeping, memory_order_relaxed))
    pthread_cond_wait(&q->work_cv, &q->mu);
  pthread_mutex_unlock(&q->mu);
}

static void *xrt__worker_main(void *arg) {
  xrt__device *d = (xrt__device *)arg;
  xrt__queue *q = &d->q;
  for (;;) {
    xrt__spin_lock(&q->lock);
    if (q->head && !q->busy) {
      xrt__task *t = q->head;
      q->head = t->next;
      if (!q->head) q->tail = NULL;
      q->busy = true;
      xrt__spin_unlock(&q->lock);
      xrt__task_run(d, t);
      xrt__spin_lock(&q->lock);
      q->busy = false;
      xrt__spin_unlock(&q->lock);
      continue;
    }
    bool stop = q->stop && !q->head;
    if (!stop) atomic_store_explicit(&q->sleeping, true, memory_order_relaxed);
    xrt__spin_unlock(&q->lock);
    if (stop) break;
    xrt__queue_sleep(q);
  }
  return NULL;
}

XRT__PRIVATE void xrt__enqueue(xrt__device *d, xrt__task *t) {
  xrt__queue *q = &d->q;
  t->next = NULL;
  xrt__spin_lock(&q->lock);
  if (q->tail) q->tail->next = t;
  else q->head = t;
  q->tail = t;
  bool wake = !q->busy && xrt__queue_take_sleeper(q);
  xrt__spin_unlock(&q->lock);
  if (wake) xrt__queue_wake(q);
}

XRT__PRIVATE void xrt__device_unhold(xrt__device *d) {
  xrt__queue *q = &d->q;
  xrt__spin_lock(&q->lock);
  q->busy = false;
  bool wake = q->head && xrt__queue_take_sleeper(q);
  xrt__spin_unlock(&q->lock);
  if (wake) xrt__queue_wake(q);
}

/* Whether the device has nothing queued or running. */
static bool xrt__device_idle(xrt__device *d) {
  xrt__queue *q = &d->q;
  xrt__spin_lock(&q->lock);
  bool idle = !q->head && !q->busy;
  xrt__spin_unlock(&q->lock);
  return idle;
}

XRT__PRIVATE void xrt__queues_stop(xrt__client *c) {
  if (!c->devices) return;
  /* Work may enqueue work on other devices (late callbacks): drain until a
   * whole pass finds every queue idle.  Polling is fine at client release. */
  for (bool all_idle = false; !all_idle;) {
    all_idle = true;
    for (int i = 0; i < c->num_devices; i++)
      if (c->devices[i].q.started && !xrt__device_idle(&c->devices[i])) {
        all_idle = false;
        xrt__os_sleep_ns(100000);
        break;
      }
  }
  for (int i = 0; i < c->num_devices; i++) {
    xrt__queue *q = &c->devices[i].q;
    if (!q->inited) continue;
    if (q->started) {
      xrt__spin_lock(&q->lock);
      q->stop = true;
      bool wake = xrt__queue_take_sleeper(q);
      xrt__spin_unlock(&q->lock);
      if (wake) xrt__queue_wake(q);
      pthread_join(q->thread, NULL);
    }
    pthread_cond_destroy(&q->work_cv);
    pthread_mutex_destroy(&q->mu);
    q->inited = q->started = false;
  }
}

XRT__PRIVATE xrt_status xrt__queues_start(xrt__client *c) {
  for (int i = 0; i < c->num_devices; i++) {
    xrt__device *d = &c->devices[i];
    pthread_mutex_init(&d->q.mu, NULL);
    pthread_cond_init(&d->q.work_cv, NULL);
    atomic_init(&d->q.sleeping, false);
    d->q.inited = true;
    int rc = pthread_create(&d->q.thread, NULL, xrt__worker_main, d);
    if (rc)
      return xrt__fail(XRT_RESOURCE_EXHAUSTED, "cannot start the worker "
                       "thread of device %d: %s", i, strerror(rc));
    d->q.started = true;
  }
  return XRT_OK;
}

static xrt__task *xrt__task_new(xrt__client *c, int kind, size_t extra) {
  xrt__task *t = (xrt__task *)xrt__calloc(&c->allocator, 1,
                                          sizeof *t + extra);
  if (t) t->kind = kind;
  return t;
}

/* A task as xrt__task_new with its completion event, homed on device home
 * (a failure leaves nothing behind). */
XRT__PRIVATE xrt_status xrt__task_start(xrt__client *c, int kind, size_t extra,
                                  int home, xrt__task **out) {
  xrt__task *t = xrt__task_new(c, kind, extra);
  xrt__event *ev = t ? xrt__event_new(c, home) : NULL;
  if (!ev) {
    xrt__free(&c->allocator, t);
    return xrt__nomem("a device task and its event");
  }
  t->done = ev;
  *out = t;
  return XRT_OK;
}

/* ---- the public event calls ---- */

xrt_status xrt_event_await(xrt_event *event) {
  xrt__event *ev = xrt__event_acquire(event);
  XRT__CHECK_ARG(ev, "invalid or released event");
  xrt_status s = xrt__event_wait(ev);
  if (s) xrt__fail(s, "%s", ev->message);
  xrt__event_unref(ev);
  return s;
}

/* timeout_ns from now on xrt__os_now_ns's clock (saturating). */
static int64_t xrt__deadline(int64_t timeout_ns) {
  int64_t now = xrt__os_now_ns();
  return timeout_ns > INT64_MAX - now ? INT64_MAX : now + timeout_ns;
}

xrt_status xrt_event_await_for(xrt_event *event, int64_t timeout_ns) {
  XRT__CHECK_ARG(timeout_ns >= 0, "timeout_ns is negative");
  xrt__event *ev = xrt__event_acquire(event);
  XRT__CHECK_ARG(ev, "invalid or released event");
  xrt__client *c = ev->client;
  if (!xrt__event_done(ev)) {
    int64_t until = xrt__deadline(timeout_ns);
    pthread_mutex_lock(&c->ev_mu);
    int rc = 0;
    while (!atomic_load_explicit(&ev->done, memory_order_relaxed) &&
           rc != ETIMEDOUT)
      rc = xrt__os_cond_wait_until(&c->ev_cv, &c->ev_mu, until);
    pthread_mutex_unlock(&c->ev_mu);
  }
  xrt_status s;
  if (!xrt__event_done(ev))
    s = xrt__fail(XRT_DEADLINE_EXCEEDED, "the event did not complete within "
                  "%" PRId64 " ns", timeout_ns);
  else if ((s = ev->code))
    xrt__fail(s, "%s", ev->message);
  xrt__event_unref(ev);
  return s;
}

bool xrt_event_is_ready(const xrt_event *event) {
  xrt__event *ev = xrt__event_acquire(event);
  if (!ev) return false;
  bool done = xrt__event_done(ev);
  xrt__event_unref(ev);
  return done;
}

xrt_status xrt_event_status(const xrt_event *event) {
  xrt__event *ev = xrt__event_acquire(event);
  XRT__CHECK_ARG(ev, "invalid or released event");
  xrt_status s;
  if (!xrt__event_done(ev))
    s = xrt__fail(XRT_UNAVAILABLE, "the event is still pending");
  else if ((s = ev->code))
    xrt__fail(s, "%s", ev->message);
  xrt__event_unref(ev);
  return s;
}

xrt_status xrt_event_on_ready(xrt_event *event, xrt_event_callback callback,
                              void *user) {
  XRT__CHECK_ARG(callback, "callback is NULL");
  xrt__event *ev = xrt__event_acquire(event);
  XRT__CHECK_ARG(ev, "invalid or released event");
  xrt__client *c = ev->client;
  xrt__cb *cb = (xrt__cb *)xrt__calloc(&c->allocator, 1, sizeof *cb);
  xrt__task *t = xrt__task_new(c, XRT__T_CALLBACKS, 0);
  if (!cb || !t) {
    xrt__free(&c->allocator, cb);
    xrt__free(&c->allocator, t);
    xrt__event_unref(ev);
    return xrt__nomem("an event callback");
  }
  cb->fn = callback;
  cb->user = user;
  pthread_mutex_lock(&c->ev_mu);
  *ev->cbs_tail = cb;
  ev->cbs_tail = &cb->next;
  /* A completed event with no thread running its callbacks: hand them to
   * its home device's worker (never run on the registering thread). */
  bool late = atomic_load_explicit(&ev->done, memory_order_relaxed) &&
              !ev->cb_running;
  if (late) ev->cb_running = true;
  pthread_mutex_unlock(&c->ev_mu);
  if (late) {
    t->done = ev; /* the task takes our reference */
    xrt__enqueue(&c->devices[ev->home], t);
  } else {
    xrt__free(&c->allocator, t);
    xrt__event_unref(ev);
  }
  return XRT_OK;
}

xrt_status xrt_event_release(xrt_event *event) {
  if (!event) return XRT_OK;
  xrt__eref *r = (xrt__eref *)xrt__hrevoke(event, XRT__H_EVENT);
  XRT__CHECK_ARG(r, "invalid or already released event");
  xrt__event *ev = r->ev;
  xrt__client *c = ev->client;
  xrt__spin_lock(&c->objs_lock);
  xrt__link_remove(&r->link);
  xrt__spin_unlock(&c->objs_lock);
  xrt__free(&c->allocator, r);
  xrt__event_unref(ev);
  return XRT_OK;
}
