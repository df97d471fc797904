/*
 * fake_plugin.h - a small fake device plugin for test_plugins.c, included
 * once by each test/plugins/fake_*.c (each built into its own .so).  It
 * calls nothing in xrt: it only uses xrt.h's types.
 *
 * Devices: args->num_devices of them, memory is malloc'd host memory.
 * Each device has attributes that echo the topology the core passed in
 * (so a test can check what the plugin received).  compile accepts any
 * module and returns a dummy executable; execute fails (the tests
 * compute with the simulator).
 *
 * Knobs, defined by the including file before the #include:
 *   FAKE_NAME        table name (required)
 *   FAKE_ABI_MAJOR / FAKE_ABI_MINOR   (default: xrt.h's)
 *   FAKE_DESCRIBE    define to implement platform_describe with
 *                    FAKE_CAPS, FAKE_SHLO_MIN, FAKE_SHLO_MAX
 *   FAKE_OP_SUPPORT  define to implement op_support: multiply NO,
 *                    divide MAYBE, everything else YES
 *   FAKE_BAD         define to misbehave as the environment variable
 *                    FAKE_BAD_MODE says (see fake_bad.c)
 */
#ifndef FAKE_PLUGIN_H
#define FAKE_PLUGIN_H

#include "xrt.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#ifndef FAKE_ABI_MAJOR
#define FAKE_ABI_MAJOR XRT_PLUGIN_ABI_MAJOR
#endif
#ifndef FAKE_ABI_MINOR
#define FAKE_ABI_MINOR XRT_PLUGIN_ABI_MINOR
#endif

#if defined(__GNUC__)
XRT_PRINTF_FORMAT(3, 4)
#endif
static xrt_status fake_fail(xrt_plugin_error *err, xrt_status code,
                            const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(err->message, sizeof err->message, fmt, ap);
  va_end(ap);
  return code;
}

/* Whether the environment asks this (FAKE_BAD) plugin to misbehave so. */
static int fake_bad(const char *mode) {
#ifdef FAKE_BAD
  const char *m = getenv("FAKE_BAD_MODE");
  return m && strcmp(m, mode) == 0;
#else
  (void)mode;
  return 0;
#endif
}

typedef struct fake_client {
  int num_devices;
  xrt_attribute attrs[6];
} fake_client;

static xrt_status fake_client_create(const xrt_plugin_client_args *args,
                                     void **out, xrt_plugin_error *err) {
  if (fake_bad("create_err"))
    return fake_fail(err, XRT_UNAVAILABLE, "%s: no device today", FAKE_NAME);
  if (fake_bad("create_null")) {
    *out = NULL;
    return XRT_OK;
  }
  fake_client *c = (fake_client *)calloc(1, sizeof *c);
  if (!c) return fake_fail(err, XRT_RESOURCE_EXHAUSTED, "out of memory");
  c->num_devices = args->num_devices;
  xrt_topology t = {-7, -7, -7, -7, -7}; /* visible if the core sent none */
  if (XRT_STRUCT_HAS(args, xrt_plugin_client_args, topology))
    t = args->topology;
  const char *names[5] = {"process_index", "process_count", "host_index",
                          "local_rank", "local_world_size"};
  int vals[5] = {t.process_index, t.process_count, t.host_index, t.local_rank,
                 t.local_world_size};
  for (int i = 0; i < 5; i++) {
    c->attrs[i].name = names[i];
    c->attrs[i].type = XRT_ATTRIBUTE_INT;
    c->attrs[i].int_value = vals[i];
  }
  c->attrs[5].name = "fake";
  c->attrs[5].type = XRT_ATTRIBUTE_STRING;
  c->attrs[5].string_value = FAKE_NAME;
  *out = c;
  return XRT_OK;
}

static void fake_client_destroy(void *client) { free(client); }

static int fake_device_count(void *client) {
  if (fake_bad("count_neg")) return -1;
  if (fake_bad("count_huge")) return 1 << 30;
  return ((fake_client *)client)->num_devices;
}

static xrt_status fake_device_describe(void *client, int device,
                                       xrt_plugin_device_desc *out,
                                       xrt_plugin_error *err) {
  fake_client *c = (fake_client *)client;
  if (device < 0 || device >= c->num_devices)
    return fake_fail(err, XRT_OUT_OF_RANGE, "no device %d", device);
  if (fake_bad("describe_err"))
    return fake_fail(err, XRT_INTERNAL, "%s: device %d is on fire", FAKE_NAME,
                     device);
  out->kind = fake_bad("describe_nokind") ? NULL : FAKE_NAME "_device";
  out->num_attributes = 6;
  out->attributes = fake_bad("describe_badattrs") ? NULL : c->attrs;
  return XRT_OK;
}

static xrt_status fake_buffer_alloc(void *client, int device, size_t bytes,
                                    void **out_mem, xrt_plugin_error *err) {
  (void)client;
  (void)device;
  if (fake_bad("alloc_err"))
    return fake_fail(err, XRT_RESOURCE_EXHAUSTED, "%s: memory is full",
                     FAKE_NAME);
  if (fake_bad("alloc_null")) {
    *out_mem = NULL;
    return XRT_OK;
  }
  *out_mem = malloc(bytes ? bytes : 1);
  return *out_mem ? XRT_OK
                  : fake_fail(err, XRT_RESOURCE_EXHAUSTED, "out of memory");
}

static void fake_buffer_free(void *client, int device, void *mem) {
  (void)client;
  (void)device;
  free(mem);
}

/* A write or read (what): copies the bytes unless FAKE_BAD_MODE is
 * what "_err". */
static xrt_status fake_move(const char *what, void *dst, const void *src,
                            size_t bytes, xrt_plugin_error *err) {
  char mode[16];
  snprintf(mode, sizeof mode, "%s_err", what);
  if (fake_bad(mode))
    return fake_fail(err, XRT_DATA_LOSS, "%s: %s failed", FAKE_NAME, what);
  memcpy(dst, src, bytes);
  return XRT_OK;
}

static xrt_status fake_buffer_write(void *client, int device, void *mem,
                                    const void *src, size_t bytes,
                                    xrt_plugin_error *err) {
  (void)client;
  (void)device;
  return fake_move("write", mem, src, bytes, err);
}

static xrt_status fake_buffer_read(void *client, int device, const void *mem,
                                   void *dst, size_t bytes,
                                   xrt_plugin_error *err) {
  (void)client;
  (void)device;
  return fake_move("read", dst, mem, bytes, err);
}

static xrt_status fake_buffer_copy(void *client, int src_device,
                                   const void *src, int dst_device, void *dst,
                                   size_t bytes, xrt_plugin_error *err) {
  (void)client;
  (void)src_device;
  (void)dst_device;
  (void)err;
  memcpy(dst, src, bytes);
  return XRT_OK;
}

static int fake_exe_token;

static xrt_status fake_compile(void *client, const xrt_plugin_compile_args *a,
                               void **out, xrt_plugin_error *err) {
  (void)client;
  (void)a;
  (void)err;
  *out = fake_bad("compile_null") ? NULL : &fake_exe_token;
  return XRT_OK;
}

static void fake_executable_destroy(void *exe) { (void)exe; }

static xrt_status fake_execute(void *client, const xrt_plugin_execute_args *a,
                               xrt_plugin_error *err) {
  (void)client;
  if (a->abort_message)
    return fake_fail(err, XRT_ABORTED, "%s", a->abort_message);
  return fake_fail(err, XRT_UNIMPLEMENTED, "%s executes nothing", FAKE_NAME);
}

#ifdef FAKE_DESCRIBE
#ifndef FAKE_CAPS
#define FAKE_CAPS 0u
#endif
#ifndef FAKE_SHLO_MIN
#define FAKE_SHLO_MIN NULL
#endif
#ifndef FAKE_SHLO_MAX
#define FAKE_SHLO_MAX NULL
#endif
static const xrt_attribute fake_platform_attrs[1] = {
    {"vendor", XRT_ATTRIBUTE_STRING, 0, 0.0, "fake corp", false}};

static xrt_status fake_platform_describe(xrt_plugin_platform_desc *out,
                                         xrt_plugin_error *err) {
  if (fake_bad("platform_err"))
    return fake_fail(err, XRT_INTERNAL, "%s: cannot describe", FAKE_NAME);
  out->stablehlo_min = fake_bad("platform_badver") ? "one.two" : FAKE_SHLO_MIN;
  out->stablehlo_max = FAKE_SHLO_MAX;
  out->capabilities = FAKE_CAPS;
  out->dtypes = (1u << XRT_F32) | (1u << XRT_S32);
  out->num_attributes = 1;
  out->attributes = fake_platform_attrs;
  return XRT_OK;
}
#endif

#ifdef FAKE_OP_SUPPORT
static int fake_op_support(void *client, const xrt_ir_module *m, int32_t func,
                           const xrt_ir_op *op, xrt_plugin_error *why) {
  (void)client;
  (void)m;
  (void)func;
  if (fake_bad("op_garbage")) return 7;
  if (op->code == XRT_OP_MULTIPLY) {
    snprintf(why->message, sizeof why->message, "%s: no multiplier",
             FAKE_NAME);
    return XRT_SUPPORT_NO;
  }
  if (op->code == XRT_OP_DIVIDE) return XRT_SUPPORT_MAYBE; /* no reason */
  return XRT_SUPPORT_YES;
}
#endif

/* The table's entries: FAKE_TABLE_BASIC are those every table has, the
 * older, shorter one of fake_old.c too (which leaves buffer_copy NULL). */
#define FAKE_TABLE_BASIC                                                      \
  .client_create = fake_client_create,                                        \
  .client_destroy = fake_client_destroy,                                      \
  .device_count = fake_device_count,                                          \
  .device_describe = fake_device_describe,                                    \
  .buffer_alloc = fake_buffer_alloc, .buffer_free = fake_buffer_free,         \
  .buffer_write = fake_buffer_write, .buffer_read = fake_buffer_read,         \
  .compile = fake_compile, .executable_destroy = fake_executable_destroy,     \
  .execute = fake_execute
#define FAKE_TABLE_FUNCS FAKE_TABLE_BASIC, .buffer_copy = fake_buffer_copy
#define FAKE_TABLE_ENTRIES                                                    \
  .name = FAKE_NAME, .version = "9.9.9", FAKE_TABLE_FUNCS

#endif /* FAKE_PLUGIN_H */
