/*
 * pjrt_host_util.h - the PJRT host side shared by the tests that drive a
 * PJRT plugin through its table (test_pjrt_host.c, test_pjrt_dispatch.c,
 * test_pjrt_plugin_alloc.c): argument structs, errors checked by code and
 * message, clients, devices, events and buffers.  The including test sets
 * g_api (from dlopen + GetPjrtApi, or from the plugin compiled in) before
 * any of these run.  Include after cmocka.h and src/pjrt/pjrt_abi.h.
 */
#ifndef XRT_TEST_PJRT_HOST_UTIL_H
#define XRT_TEST_PJRT_HOST_UTIL_H

#include <stdint.h>
#include <stdio.h>
#include <string.h>

#define COUNT(a) (sizeof(a) / sizeof((a)[0]))

/* The plugin's table. */
static const PJRT_Api *g_api;
#define API g_api

/* An args struct of type T named v, zeroed, with its struct_size. */
#define ARGS(T, v)          \
  T v;                      \
  memset(&v, 0, sizeof v);  \
  v.struct_size = T##_STRUCT_SIZE

/* ---- errors ---- */

static inline void err_destroy(PJRT_Error *e) {
  ARGS(PJRT_Error_Destroy_Args, a);
  a.error = e;
  API->PJRT_Error_Destroy(&a);
}

/* The message of e, NUL-terminated into buf (the PJRT string is not). */
static inline void err_text(PJRT_Error *e, char *buf, size_t cap) {
  ARGS(PJRT_Error_Message_Args, a);
  a.error = e;
  API->PJRT_Error_Message(&a);
  size_t n = a.message_size < cap - 1 ? a.message_size : cap - 1;
  if (a.message && n) memcpy(buf, a.message, n);
  buf[n] = 0;
}

static inline int err_code(PJRT_Error *e) {
  ARGS(PJRT_Error_GetCode_Args, a);
  a.error = e;
  a.code = (PJRT_Error_Code)0;
  PJRT_Error *e2 = API->PJRT_Error_GetCode(&a);
  if (e2) {
    err_destroy(e2);
    return -1;
  }
  return (int)a.code;
}

static inline const char *code_name(int c) {
  static const char *names[] = {
      "OK",        "CANCELLED",         "UNKNOWN",
      "INVALID_ARGUMENT", "DEADLINE_EXCEEDED", "NOT_FOUND",
      "ALREADY_EXISTS", "PERMISSION_DENIED", "RESOURCE_EXHAUSTED",
      "FAILED_PRECONDITION", "ABORTED", "OUT_OF_RANGE",
      "UNIMPLEMENTED", "INTERNAL", "UNAVAILABLE",
      "DATA_LOSS", "UNAUTHENTICATED"};
  return c >= 0 && c < (int)COUNT(names) ? names[c] : "?";
}

/* A call that must succeed: on an error, fail with its code and message. */
#define OK(call) ok_at((call), #call, __LINE__)
static inline void ok_at(PJRT_Error *e, const char *what, int line) {
  if (!e) return;
  char m[1024];
  int c = err_code(e);
  err_text(e, m, sizeof m);
  err_destroy(e);
  fail_msg("line %d: %s failed: %s (%d): %s", line, what, code_name(c), c,
           m);
}

/* A call that must fail with code `want` (or `alt` when alt >= 0) and a
 * message containing `sub` (when not NULL); the error is destroyed. */
#define EXPECT_ERR(call, want, sub) \
  expect_err_at((call), (want), -1, (sub), #call, __LINE__)
#define EXPECT_ERR2(call, want, alt, sub) \
  expect_err_at((call), (want), (alt), (sub), #call, __LINE__)
static inline void expect_err_at(PJRT_Error *e, int want, int alt, const char *sub,
                          const char *what, int line) {
  if (!e)
    fail_msg("line %d: %s succeeded; want %s", line, what, code_name(want));
  char m[1024];
  int c = err_code(e);
  err_text(e, m, sizeof m);
  err_destroy(e);
  if (c != want && (alt < 0 || c != alt))
    fail_msg("line %d: %s: code %s (%d), want %s%s%s; message: %s", line,
             what, code_name(c), c, code_name(want), alt >= 0 ? " or " : "",
             alt >= 0 ? code_name(alt) : "", m);
  if (!m[0]) fail_msg("line %d: %s: empty error message", line, what);
  if (sub && !strstr(m, sub))
    fail_msg("line %d: %s: message \"%s\" lacks \"%s\"", line, what, m, sub);
}

/* ---- clients, devices, events, buffers ---- */

static inline PJRT_NamedValue nv_int(const char *name, int64_t v) {
  PJRT_NamedValue nv;
  memset(&nv, 0, sizeof nv);
  nv.struct_size = PJRT_NamedValue_STRUCT_SIZE;
  nv.name = name;
  nv.name_size = strlen(name);
  nv.type = PJRT_NamedValue_kInt64;
  nv.int64_value = v;
  nv.value_size = 1;
  return nv;
}

static inline void client_destroy(PJRT_Client *c) {
  ARGS(PJRT_Client_Destroy_Args, a);
  a.client = c;
  OK(API->PJRT_Client_Destroy(&a));
}

/* The addressable devices of c (exactly n of them) into d. */
static inline void get_devices(PJRT_Client *c, PJRT_Device **d, size_t n) {
  ARGS(PJRT_Client_AddressableDevices_Args, a);
  a.client = c;
  OK(API->PJRT_Client_AddressableDevices(&a));
  assert_int_equal(a.num_addressable_devices, n);
  assert_non_null(a.addressable_devices);
  for (size_t i = 0; i < n; i++) {
    d[i] = a.addressable_devices[i];
    assert_non_null(d[i]);
  }
}

static inline void event_destroy(PJRT_Event *ev) {
  ARGS(PJRT_Event_Destroy_Args, a);
  a.event = ev;
  OK(API->PJRT_Event_Destroy(&a));
}

/* Await ev (must succeed), check it is then ready without error, destroy. */
static inline void await_ok(PJRT_Event *ev) {
  assert_non_null(ev);
  ARGS(PJRT_Event_Await_Args, w);
  w.event = ev;
  OK(API->PJRT_Event_Await(&w));
  ARGS(PJRT_Event_IsReady_Args, r);
  r.event = ev;
  OK(API->PJRT_Event_IsReady(&r));
  assert_true(r.is_ready);
  ARGS(PJRT_Event_Error_Args, e);
  e.event = ev;
  OK(API->PJRT_Event_Error(&e));
  event_destroy(ev);
}

/* Destroys b (NULL: nothing to do). */
static inline void buffer_destroy(PJRT_Buffer *b) {
  if (!b) return;
  ARGS(PJRT_Buffer_Destroy_Args, a);
  a.buffer = b;
  OK(API->PJRT_Buffer_Destroy(&a));
}

#endif
