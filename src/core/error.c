/*
 * src/core/error.c - status codes and their names, the per-thread last error,
 * and the helpers that set it (xrt__fail, plugin errors).
 * Part of the core of xrt; MIT licensed, see LICENSE.
 */
#include "internal.h"

XRT__PRIVATE_DATA XRT__THREAD_LOCAL xrt__error_state xrt__error;

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

const char *xrt_last_error(void) { return xrt__error.message; }
xrt_status xrt_last_status(void) { return xrt__error.code; }

/* Records a failure for xrt_last_error() and returns its code, so that
 * callers can write `return xrt__fail(...)`. */
#if defined(__GNUC__)
XRT_PRINTF_FORMAT(2, 3)
#endif
XRT__PRIVATE xrt_status xrt__fail(xrt_status code, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(xrt__error.message, sizeof xrt__error.message, fmt, ap);
  va_end(ap);
  xrt__error.code = code;
  xrt__log_failure(code, xrt__error.message); /* debug level, section 2b */
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
