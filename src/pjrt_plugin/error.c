/*
 * src/pjrt_plugin/error.c - PJRT_Error: a code and a message, owned by the
 * host until PJRT_Error_Destroy; xrt statuses mapped to PJRT codes; the
 * messages of the argument checks.
 *
 * Errors are named by handles like every other object, so a destroyed or
 * foreign error given back is recognised: PJRT_Error_Destroy ignores it
 * (it cannot report), PJRT_Error_Message gives a message saying so,
 * PJRT_Error_GetCode returns an INVALID_ARGUMENT error.
 * Part of libxrt_pjrt.so; MIT licensed, see LICENSE.
 */
#include "internal.h"

struct PJRT_Error {
  PJRT_Error_Code code;
  size_t size;         /* of message, without the NUL */
  const char *message; /* NUL-terminated, in the same allocation */
};

#define XP_OOM_TEXT "out of host memory (allocating a PJRT_Error)"

/* Returned (under the reserved handle) when even an error cannot be
 * allocated; never freed. */
static const PJRT_Error xp_oom = {PJRT_Error_Code_RESOURCE_EXHAUSTED,
                                  sizeof XP_OOM_TEXT - 1, XP_OOM_TEXT};

#define XP_STALE_TEXT "invalid PJRT_Error (destroyed, or not from this plugin)"
static const PJRT_Error xp_stale = {PJRT_Error_Code_INVALID_ARGUMENT,
                                    sizeof XP_STALE_TEXT - 1, XP_STALE_TEXT};

/* The record of an error handle; NULL if it is not live. */
static const PJRT_Error *xp_error_obj(const PJRT_Error *h) {
  if ((const void *)h == xp_handle_reserved(XP_RESERVED_OOM_ERROR)) return &xp_oom;
  return (const PJRT_Error *)xp_handle_get(h, XP_KIND_ERROR);
}

static PJRT_Error *xp_error_v(PJRT_Error_Code code, const char *fmt,
                              va_list ap) {
  va_list ap2;
  va_copy(ap2, ap);
  int n = vsnprintf(NULL, 0, fmt, ap2);
  va_end(ap2);
  if (n < 0) n = 0;
  PJRT_Error *e = (PJRT_Error *)xp_malloc(sizeof *e + (size_t)n + 1);
  if (!e) return (PJRT_Error *)xp_handle_reserved(XP_RESERVED_OOM_ERROR);
  char *text = (char *)(e + 1);
  vsnprintf(text, (size_t)n + 1, fmt, ap);
  e->code = code;
  e->size = (size_t)n;
  e->message = text;
  PJRT_Error *h = (PJRT_Error *)xp_handle_new(e, XP_KIND_ERROR);
  if (h) return h;
  xp_free(e);
  return (PJRT_Error *)xp_handle_reserved(XP_RESERVED_OOM_ERROR);
}

XP_PRIVATE PJRT_Error *xp_error(PJRT_Error_Code code, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  PJRT_Error *e = xp_error_v(code, fmt, ap);
  va_end(ap);
  return e;
}

/* xrt's codes are the canonical (absl) ones PJRT uses, except
 * XRT_CHECK_FAILED (a check.* op of the program found a mismatch), which
 * PJRT has no code for: INTERNAL, as an assertion failure. */
XP_PRIVATE PJRT_Error_Code xp_code_of(xrt_status status) {
  if (status >= XRT_CANCELLED && status <= XRT_UNAUTHENTICATED)
    return (PJRT_Error_Code)status;
  if (status == XRT_CHECK_FAILED) return PJRT_Error_Code_INTERNAL;
  return PJRT_Error_Code_UNKNOWN;
}

XP_PRIVATE PJRT_Error *xp_error_xrt(const char *fn, xrt_status status) {
  const char *msg = xrt_last_error();
  if (!msg || !*msg) msg = xrt_strerror(status);
  return xp_error(xp_code_of(status), "%s: %s", fn, msg);
}

XP_PRIVATE PJRT_Error_Code xp_error_code(const PJRT_Error *error) {
  const PJRT_Error *e = xp_error_obj(error);
  return (e ? e : &xp_stale)->code;
}

XP_PRIVATE const char *xp_error_message(const PJRT_Error *error) {
  const PJRT_Error *e = xp_error_obj(error);
  return (e ? e : &xp_stale)->message;
}

/* Retires and frees an error; 0 if it was not live (the reserved one
 * counts as live and stays). */
static int xp_error_release(PJRT_Error *error) {
  if ((void *)error == xp_handle_reserved(XP_RESERVED_OOM_ERROR)) return 1;
  PJRT_Error *e = (PJRT_Error *)xp_handle_retire(error, XP_KIND_ERROR);
  xp_free(e);
  return e != NULL;
}

XP_PRIVATE void xp_error_free(PJRT_Error *error) {
  if (error) xp_error_release(error);
}

XP_PRIVATE PJRT_Error *xp_check_args(const char *fn, const void *args,
                                     size_t min_size) {
  if (!args)
    return xp_error(PJRT_Error_Code_INVALID_ARGUMENT, "%s: args is NULL", fn);
  size_t size = *(const size_t *)args; /* struct_size, every struct's first */
  if (size < min_size)
    return xp_error(PJRT_Error_Code_INVALID_ARGUMENT,
                    "%s: args->struct_size is %zu, at least %zu expected (the "
                    "PJRT C API %d.%d struct size)",
                    fn, size, min_size, PJRT_API_MAJOR, PJRT_API_MINOR);
  return NULL;
}

XP_PRIVATE PJRT_Error *xp_error_null(const char *fn, const char *what) {
  return xp_error(PJRT_Error_Code_INVALID_ARGUMENT, "%s: %s is NULL", fn,
                  what);
}

XP_PRIVATE PJRT_Error *xp_error_stale(const char *fn, const char *what,
                                      const char *type) {
  return xp_error(PJRT_Error_Code_INVALID_ARGUMENT,
                  "%s: %s is not a live %s (destroyed, or not from this "
                  "plugin)", fn, what, type);
}

XP_PRIVATE char *xp_strndup(const char *s, size_t n) {
  char *d = (char *)xp_malloc(n + 1);
  if (!d) return NULL;
  if (n) memcpy(d, s, n);
  d[n] = '\0';
  return d;
}

XP_PRIVATE char *xp_format(const char *fmt, ...) {
  va_list ap, ap2;
  va_start(ap, fmt);
  va_copy(ap2, ap);
  int n = vsnprintf(NULL, 0, fmt, ap2);
  va_end(ap2);
  char *d = n < 0 ? NULL : (char *)xp_malloc((size_t)n + 1);
  if (d) vsnprintf(d, (size_t)n + 1, fmt, ap);
  va_end(ap);
  return d;
}

/* ---- the entry points ---- */

static void xp_error_destroy(PJRT_Error_Destroy_Args *args) {
  if (!args || args->struct_size < XP_END(PJRT_Error_Destroy_Args, error))
    return; /* nothing to report through: the call returns void */
  if (args->error) xp_error_release(args->error); /* stale: ignored */
}

static void xp_error_message_get(PJRT_Error_Message_Args *args) {
  if (!args || args->struct_size < PJRT_Error_Message_Args_STRUCT_SIZE) return;
  if (!args->error) {
    args->message = "";
    args->message_size = 0;
    return;
  }
  const PJRT_Error *e = xp_error_obj(args->error);
  if (!e) e = &xp_stale;
  args->message = e->message;
  args->message_size = e->size;
}

static PJRT_Error *xp_error_get_code(PJRT_Error_GetCode_Args *args) {
  XP_ARGS("PJRT_Error_GetCode", args, PJRT_Error_GetCode_Args_STRUCT_SIZE);
  if (!args->error) return xp_error_null("PJRT_Error_GetCode", "args->error");
  const PJRT_Error *e = xp_error_obj(args->error);
  if (!e)
    return xp_error_stale("PJRT_Error_GetCode", "args->error", "PJRT_Error");
  args->code = e->code;
  return NULL;
}

XP_PRIVATE void xp_error_register(PJRT_Api *api) {
  api->PJRT_Error_Destroy = xp_error_destroy;
  api->PJRT_Error_Message = xp_error_message_get;
  api->PJRT_Error_GetCode = xp_error_get_code;
}
