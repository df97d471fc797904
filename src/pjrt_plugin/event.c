/*
 * src/pjrt_plugin/event.c - PJRT_Event: either ready from the start, with
 * the outcome of work that already ran (a transfer or an execution, which
 * run synchronously underneath), or following an xrt event (a buffer's
 * ready event, an asynchronous launch's participant).
 *
 * Every event ready with success (those of transfers and executions, one
 * or more per call on the dispatch path) is one static event under a
 * reserved handle: it costs no allocation and no atomic operation, and
 * destroying it does nothing.  The price: destroying such an event twice,
 * or using it after destroying it, is not reported (it answers "ready,
 * success", which stays true).  Every other event is an object of its own
 * whose second destroy is INVALID_ARGUMENT.
 * Part of libxrt_pjrt.so; MIT licensed, see LICENSE.
 */
#include "internal.h"

typedef struct xp_event {
  PJRT_Event *handle;
  xrt_event *xe;     /* followed event, or NULL: ready with `error` */
  PJRT_Error *error; /* the outcome of a ready event (NULL: success) */
} xp_event;

static PJRT_Event *xp_event_publish(xp_event *ev) {
  ev->handle = (PJRT_Event *)xp_handle_new(ev, XP_KIND_EVENT);
  if (ev->handle) return ev->handle;
  if (ev->xe) xrt_event_release(ev->xe);
  xp_error_free(ev->error);
  xp_free(ev);
  return NULL;
}

/* The event ready with success: never freed. */
static xp_event xp_event_ok;

static inline int xp_event_is_ok(const PJRT_Event *event) {
  return (const void *)event == xp_handle_reserved(XP_RESERVED_EVENT_OK);
}

XP_PRIVATE PJRT_Event *xp_event_ready(PJRT_Error *error) {
  if (!error) return (PJRT_Event *)xp_handle_reserved(XP_RESERVED_EVENT_OK);
  xp_event *ev = (xp_event *)xp_calloc(1, sizeof *ev);
  if (!ev) {
    xp_error_free(error);
    return NULL;
  }
  ev->error = error;
  return xp_event_publish(ev);
}

XP_PRIVATE PJRT_Event *xp_event_wrap(xrt_event *xe) {
  xp_event *ev = (xp_event *)xp_calloc(1, sizeof *ev);
  if (!ev) {
    xrt_event_release(xe);
    return NULL;
  }
  ev->xe = xe;
  return xp_event_publish(ev);
}

/* A new error equal to a ready event's (each call's is the caller's). */
static PJRT_Error *xp_error_copy(const PJRT_Error *e) {
  if (!e) return NULL;
  return xp_error(xp_error_code(e), "%s", xp_error_message(e));
}

/* The outcome of an event, waiting for it if needed: NULL or a new
 * error. */
static PJRT_Error *xp_event_outcome(const char *fn, xp_event *ev) {
  if (!ev->xe) return xp_error_copy(ev->error);
  xrt_status s = xrt_event_await(ev->xe);
  return s ? xp_error_xrt(fn, s) : NULL;
}

XP_PRIVATE int xp_event_free(PJRT_Event *event) {
  if (xp_event_is_ok(event)) return 1;
  xp_event *ev = (xp_event *)xp_handle_retire(event, XP_KIND_EVENT);
  if (!ev) return 0;
  if (ev->xe) xrt_event_release(ev->xe);
  xp_error_free(ev->error);
  xp_free(ev);
  return 1;
}

static xp_event *xp_event_arg(const char *fn, PJRT_Event *event,
                              PJRT_Error **err) {
  xp_event *ev = xp_event_is_ok(event)
                     ? &xp_event_ok
                     : (xp_event *)xp_handle_get(event, XP_KIND_EVENT);
  if (!ev)
    *err = event ? xp_error_stale(fn, "args->event", "PJRT_Event")
                 : xp_error_null(fn, "args->event");
  return ev;
}

static PJRT_Error *xp_event_destroy(PJRT_Event_Destroy_Args *args) {
  static const char fn[] = "PJRT_Event_Destroy";
  XP_ARGS(fn, args, PJRT_Event_Destroy_Args_STRUCT_SIZE);
  if (xp_event_is_ok(args->event)) return NULL; /* the dispatch path */
  if (!args->event || xp_event_free(args->event)) return NULL;
  return xp_error_stale(fn, "args->event", "PJRT_Event");
}

static PJRT_Error *xp_event_is_ready(PJRT_Event_IsReady_Args *args) {
  static const char fn[] = "PJRT_Event_IsReady";
  XP_ARGS(fn, args, PJRT_Event_IsReady_Args_STRUCT_SIZE);
  if (xp_event_is_ok(args->event)) {
    args->is_ready = true;
    return NULL;
  }
  PJRT_Error *err = NULL;
  xp_event *ev = xp_event_arg(fn, args->event, &err);
  if (!ev) return err;
  args->is_ready = !ev->xe || xrt_event_is_ready(ev->xe);
  return NULL;
}

/* The event's error as a new PJRT_Error (PJRT says to call it once the
 * event is ready; on a pending one it waits). */
static PJRT_Error *xp_event_error(PJRT_Event_Error_Args *args) {
  static const char fn[] = "PJRT_Event_Error";
  XP_ARGS(fn, args, PJRT_Event_Error_Args_STRUCT_SIZE);
  if (xp_event_is_ok(args->event)) return NULL;
  PJRT_Error *err = NULL;
  xp_event *ev = xp_event_arg(fn, args->event, &err);
  return ev ? xp_event_outcome(fn, ev) : err;
}

static PJRT_Error *xp_event_await(PJRT_Event_Await_Args *args) {
  static const char fn[] = "PJRT_Event_Await";
  XP_ARGS(fn, args, PJRT_Event_Await_Args_STRUCT_SIZE);
  if (xp_event_is_ok(args->event)) return NULL; /* the dispatch path */
  PJRT_Error *err = NULL;
  xp_event *ev = xp_event_arg(fn, args->event, &err);
  return ev ? xp_event_outcome(fn, ev) : err;
}

/* A host callback waiting on an xrt event. */
typedef struct xp_on_ready {
  PJRT_Event_OnReadyCallback callback;
  void *user_arg;
} xp_on_ready;

static void xp_on_ready_fire(void *user, xrt_status status,
                             const char *message) {
  xp_on_ready *r = (xp_on_ready *)user;
  PJRT_Error *e = NULL;
  if (status)
    e = xp_error(xp_code_of(status), "PJRT_Event_OnReady: %s",
                 message && *message ? message : xrt_strerror(status));
  r->callback(e, r->user_arg); /* the callback owns e */
  xp_free(r);
}

/* Ready events call back at once, on the calling thread; pending ones
 * when their xrt event completes, on an xrt runtime thread (the callback
 * must not wait there for other work of the plugin). */
static PJRT_Error *xp_event_on_ready(PJRT_Event_OnReady_Args *args) {
  static const char fn[] = "PJRT_Event_OnReady";
  XP_ARGS(fn, args, PJRT_Event_OnReady_Args_STRUCT_SIZE);
  PJRT_Error *err = NULL;
  xp_event *ev = xp_event_arg(fn, args->event, &err);
  if (!ev) return err;
  if (!args->callback) return xp_error_null(fn, "args->callback");
  if (!ev->xe) {
    args->callback(xp_error_copy(ev->error), args->user_arg);
    return NULL;
  }
  /* A completed xrt event also calls back here: a host callback that
   * calls the plugin again must not run on a device's own thread. */
  if (xrt_event_is_ready(ev->xe)) {
    args->callback(xp_event_outcome(fn, ev), args->user_arg);
    return NULL;
  }
  xp_on_ready *r = (xp_on_ready *)xp_malloc(sizeof *r);
  if (!r)
    return xp_error(PJRT_Error_Code_RESOURCE_EXHAUSTED,
                    "%s: out of host memory", fn);
  r->callback = args->callback;
  r->user_arg = args->user_arg;
  xrt_status s = xrt_event_on_ready(ev->xe, xp_on_ready_fire, r);
  if (s) {
    xp_free(r);
    return xp_error_xrt(fn, s);
  }
  return NULL;
}

XP_PRIVATE void xp_event_register(PJRT_Api *api) {
  api->PJRT_Event_Destroy = xp_event_destroy;
  api->PJRT_Event_IsReady = xp_event_is_ready;
  api->PJRT_Event_Error = xp_event_error;
  api->PJRT_Event_Await = xp_event_await;
  api->PJRT_Event_OnReady = xp_event_on_ready;
}
