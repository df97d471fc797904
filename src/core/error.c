/*
 * src/core/error.c - status codes and their names, the per-thread last error,
 * and the helpers that set it (xrt__fail, plugin errors).
 * Part of the core of xrt; MIT licensed, see LICENSE.
 */
#include "internal.h"

XRT__PRIVATE_DATA XRT__THREAD_LOCAL_SMALL xrt__error_state xrt__error;

/* Frees a thread's message when it exits (the key's destructor). */
static pthread_key_t xrt__error_key;
static pthread_once_t xrt__error_once = PTHREAD_ONCE_INIT;
static _Atomic int xrt__error_key_made;

/* Runs on the exiting thread, whose thread-locals are still there: a
 * later key destructor that fails an xrt call gets a new buffer (or the
 * fallback) instead of writing into this freed one. */
static void xrt__error_thread_exit(void *message) {
  if (xrt__error.message == message) xrt__error.message = NULL;
  free(message);
}

static void xrt__error_key_make(void) {
  if (!pthread_key_create(&xrt__error_key, xrt__error_thread_exit))
    atomic_store(&xrt__error_key_made, 1);
}

XRT__PRIVATE char *xrt__error_buf(size_t *cap) {
  if (!xrt__error.message) {
    pthread_once(&xrt__error_once, xrt__error_key_make);
    char *m = atomic_load(&xrt__error_key_made)
                  ? (char *)malloc(XRT__ERROR_MAX) : NULL;
    if (m && pthread_setspecific(xrt__error_key, m)) {
      free(m);
      m = NULL;
    }
    xrt__error.message = m;
  }
  if (xrt__error.message) {
    *cap = XRT__ERROR_MAX;
    return xrt__error.message;
  }
  *cap = sizeof xrt__error.fallback;
  return xrt__error.fallback;
}

#if defined(__GNUC__)
/* When the library holding this copy of xrt is unloaded (dlclose of
 * libxrt.so or of a plugin that embeds xrt), no thread may run the key's
 * destructor any more: the key goes, and with it this thread's message.
 * Other threads' messages, if any, are left (they cannot be reached). */
__attribute__((destructor)) static void xrt__error_unload(void) {
  if (!atomic_load(&xrt__error_key_made)) return;
  pthread_key_delete(xrt__error_key);
  free(xrt__error.message);
  xrt__error.message = NULL;
}
#endif

XRT__PRIVATE xrt_status xrt__error_vset(xrt_status code, const char *fmt,
                                        va_list ap) {
  size_t cap;
  char *buf = xrt__error_buf(&cap);
  if (fmt) vsnprintf(buf, cap, fmt, ap);
  else buf[0] = 0;
  xrt__error.code = code;
  if (code) xrt__log_failure(code, buf); /* debug level, section 2b */
  return code;
}

const char *xrt_strerror(xrt_status code) {
  switch (code) {
  case XRT_OK: return "OK";
  case XRT_CANCELLED: return "CANCELLED";
  case XRT_UNKNOWN: return "UNKNOWN";
  case XRT_INVALID_ARGUMENT: return "INVALID_ARGUMENT";
  case XRT_DEADLINE_EXCEEDED: return "DEADLINE_EXCEEDED";
  case XRT_NOT_FOUND: return "NOT_FOUND";
  case XRT_ALREADY_EXISTS: return "ALREADY_EXISTS";
  case XRT_PERMISSION_DENIED: return "PERMISSION_DENIED";
  case XRT_RESOURCE_EXHAUSTED: return "RESOURCE_EXHAUSTED";
  case XRT_FAILED_PRECONDITION: return "FAILED_PRECONDITION";
  case XRT_ABORTED: return "ABORTED";
  case XRT_OUT_OF_RANGE: return "OUT_OF_RANGE";
  case XRT_UNIMPLEMENTED: return "UNIMPLEMENTED";
  case XRT_INTERNAL: return "INTERNAL";
  case XRT_UNAVAILABLE: return "UNAVAILABLE";
  case XRT_DATA_LOSS: return "DATA_LOSS";
  case XRT_UNAUTHENTICATED: return "UNAUTHENTICATED";
  case XRT_CHECK_FAILED: return "CHECK_FAILED";
  }
  return "UNKNOWN_STATUS";
}

const char *xrt_last_error(void) {
  if (xrt__error.message) return xrt__error.message;
  return xrt__error.fallback; /* "" until a failure */
}
xrt_status xrt_last_status(void) { return xrt__error.code; }

/* Records a failure for xrt_last_error() and returns its code, so that
 * callers can write `return xrt__fail(...)`. */
#if defined(__GNUC__)
XRT_PRINTF_FORMAT(2, 3)
#endif
XRT__PRIVATE xrt_status xrt__fail(xrt_status code, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  xrt__error_vset(code, fmt, ap);
  va_end(ap);
  return code;
}

/* For xrt_cache.c (same library, another translation unit): records its
 * failures as xrt__fail does.  Not in xrt.h; tools/libxrt.map keeps it
 * out of libxrt.so's exports. */
xrt_status xrt__set_error(xrt_status code, const char *message);
xrt_status xrt__set_error(xrt_status code, const char *message) {
  return xrt__fail(code, "%s", message);
}

/* A plugin's error message, terminated (a plugin may fill all of it
 * without a NUL) and never empty. */
XRT__PRIVATE const char *xrt__plugin_msg(xrt_plugin_error *err) {
  err->message[sizeof err->message - 1] = 0;
  return err->message[0] ? err->message : "(no message)";
}

/* Adopts a plugin's failure as this thread's last error. */
XRT__PRIVATE xrt_status xrt__fail_plugin(xrt_status code, const char *plugin,
                                   const xrt_plugin_error *err) {
  if (code == XRT_OK) code = XRT_INTERNAL; /* a plugin must not fail with OK */
  const char *msg = err->message[0] ? err->message : "(no message)";
  return xrt__fail(code, "%s: %.*s", plugin, (int)sizeof err->message, msg);
}
