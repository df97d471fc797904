/*
 * plugin_minimal.c - the smallest useful xrt device plugin: one device whose
 * memory is host memory, f32 only, running functions made of stablehlo.add
 * and func.return.  Copy it to start a plugin for your own hardware (README,
 * "Writing a plugin").  It needs only xrt.h, not libxrt:
 *
 *   cc -std=c11 -O2 -shared -fPIC -I. examples/plugin_minimal.c \
 *      -o build/libxrt_minimal.so
 *
 * Load it with xrt_context_load_plugin or XRT_PLUGINS=minimal:PATH; check it
 * with build/xrt-cts build/libxrt_minimal.so.  The rules it follows: the
 * table carries the ABI version it was built against and its own size;
 * what it leaves NULL the core answers as unimplemented; argument structs
 * are read only as far as their struct_size says; failures explain
 * themselves in err->message.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "xrt.h"

/* The plugin's client: nothing to keep but the allocator it was given. */
typedef struct mini_client {
  xrt_allocator al;
} mini_client;

/* A compiled program: the entry function, borrowed from the module (the
 * core keeps the module alive until executable_destroy). */
typedef struct mini_exe {
  const xrt_ir_func *fn;
} mini_exe;

static const xrt_attribute mini_attrs[] = {
    {.name = "vendor", .type = XRT_ATTRIBUTE_STRING, .string_value = "example"},
};

/* Writes a message into err (if any) and returns code. */
static xrt_status mini_fail(xrt_plugin_error *err, xrt_status code,
                            const char *fmt, ...) {
  if (err) {
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(err->message, sizeof err->message, fmt, ap);
    va_end(ap);
  }
  return code;
}

/* Describes the platform before any client exists: f32 only, any StableHLO
 * version, no optional capabilities. */
static xrt_status mini_platform_describe(xrt_plugin_platform_desc *out,
                                         xrt_plugin_error *err) {
  if (!out || !XRT_STRUCT_HAS(out, xrt_plugin_platform_desc, attributes))
    return mini_fail(err, XRT_INVALID_ARGUMENT, "bad platform descriptor");
  out->stablehlo_min = NULL;
  out->stablehlo_max = NULL;
  out->capabilities = 0;
  out->dtypes = 1ull << XRT_F32;
  out->num_attributes = 1;
  out->attributes = mini_attrs;
  return XRT_OK;
}

/* Creates a client: one device, whatever number was asked for. */
static xrt_status mini_client_create(const xrt_plugin_client_args *args,
                                     void **out_client, xrt_plugin_error *err) {
  if (!args || !out_client ||
      !XRT_STRUCT_HAS(args, xrt_plugin_client_args, allocator))
    return mini_fail(err, XRT_INVALID_ARGUMENT, "bad client arguments");
  mini_client *c = args->allocator.alloc(args->allocator.self, sizeof *c);
  if (!c) return mini_fail(err, XRT_RESOURCE_EXHAUSTED, "out of host memory");
  c->al = args->allocator;
  *out_client = c;
  return XRT_OK;
}

/* Frees the client (the core has freed its buffers and executables). */
static void mini_client_destroy(void *client) {
  mini_client *c = client;
  if (c) c->al.free(c->al.self, c);
}

/* The number of devices: always one. */
static int mini_device_count(void *client) { return client ? 1 : -1; }

/* Describes device 0: its kind and attributes (borrowed, static). */
static xrt_status mini_device_describe(void *client, int device,
                                       xrt_plugin_device_desc *out,
                                       xrt_plugin_error *err) {
  if (!client || device != 0 || !out)
    return mini_fail(err, XRT_OUT_OF_RANGE, "device %d does not exist", device);
  out->struct_size = sizeof *out; /* the fields this plugin knows */
  out->kind = "minimal";
  out->num_attributes = 1;
  out->attributes = mini_attrs;
  return XRT_OK;
}

/* Allocates device memory (here: host memory; never NULL, even for 0). */
static xrt_status mini_buffer_alloc(void *client, int device, size_t bytes,
                                    void **out_mem, xrt_plugin_error *err) {
  (void)client;
  *out_mem = malloc(bytes ? bytes : 1);
  return *out_mem ? XRT_OK
                  : mini_fail(err, XRT_RESOURCE_EXHAUSTED, "device %d: cannot "
                              "allocate %zu bytes", device, bytes);
}

/* Frees device memory. */
static void mini_buffer_free(void *client, int device, void *mem) {
  (void)client, (void)device;
  free(mem);
}

/* Copies host memory to the device. */
static xrt_status mini_buffer_write(void *client, int device, void *mem,
                                    const void *src, size_t bytes,
                                    xrt_plugin_error *err) {
  (void)client, (void)device, (void)err;
  if (bytes) memcpy(mem, src, bytes);
  return XRT_OK;
}

/* Copies device memory to the host. */
static xrt_status mini_buffer_read(void *client, int device, const void *mem,
                                   void *dst, size_t bytes,
                                   xrt_plugin_error *err) {
  (void)client, (void)device, (void)err;
  if (bytes) memcpy(dst, mem, bytes);
  return XRT_OK;
}

/* Copies between two memories of the (one) device. */
static xrt_status mini_buffer_copy(void *client, int src_device,
                                   const void *src, int dst_device, void *dst,
                                   size_t bytes, xrt_plugin_error *err) {
  (void)client, (void)src_device, (void)dst_device, (void)err;
  if (bytes) memcpy(dst, src, bytes);
  return XRT_OK;
}

/* Whether a value is an f32 tensor (the only kind this plugin handles). */
static int mini_is_f32(const xrt_ir_func *fn, int32_t value) {
  const xrt_ir_type *t = &fn->value_types[value];
  return t->kind == XRT_TYPE_TENSOR && !t->quant && t->shape.dtype == XRT_F32;
}

/* Whether this plugin runs op: stablehlo.add and func.return on f32. */
static int mini_op_support(void *client, const xrt_ir_module *module,
                           int32_t func, const xrt_ir_op *op,
                           xrt_plugin_error *why) {
  (void)client;
  const xrt_ir_func *fn = &module->funcs[func];
  if (op->code != XRT_OP_ADD && op->code != XRT_OP_FUNC_RETURN) {
    mini_fail(why, XRT_UNIMPLEMENTED, "only stablehlo.add and func.return");
    return XRT_SUPPORT_NO;
  }
  for (int32_t i = 0; i < op->num_operands; i++)
    if (!mini_is_f32(fn, op->operands[i])) {
      mini_fail(why, XRT_UNIMPLEMENTED, "only f32 tensors");
      return XRT_SUPPORT_NO;
    }
  return XRT_SUPPORT_YES;
}

/* Compiles the entry function: checks every op, keeps the function. */
static xrt_status mini_compile(void *client,
                               const xrt_plugin_compile_args *args,
                               void **out_executable, xrt_plugin_error *err) {
  const xrt_ir_func *fn = &args->module->funcs[args->entry];
  for (int32_t i = 0; i < fn->body.num_ops; i++) {
    const xrt_ir_op *op = &fn->body.ops[i];
    if (mini_op_support(client, args->module, args->entry, op, err) !=
        XRT_SUPPORT_YES)
      return mini_fail(err, XRT_UNIMPLEMENTED, "%s:%d:%d: %s is not supported "
                       "(only stablehlo.add and func.return on f32)",
                       op->loc.file, op->loc.line, op->loc.col, op->name);
  }
  for (int32_t i = 0; i < fn->body.num_args; i++)
    if (!mini_is_f32(fn, fn->body.args[i]))
      return mini_fail(err, XRT_UNIMPLEMENTED, "%s: argument %d is not an f32 "
                       "tensor", fn->name, i);
  mini_exe *e = malloc(sizeof *e);
  if (!e) return mini_fail(err, XRT_RESOURCE_EXHAUSTED, "out of host memory");
  e->fn = fn;
  *out_executable = e;
  return XRT_OK;
}

/* Frees an executable. */
static void mini_executable_destroy(void *executable) { free(executable); }

/* Elements of an f32 tensor value. */
static size_t mini_numel(const xrt_ir_func *fn, int32_t value) {
  const xrt_shape *s = &fn->value_types[value].shape;
  size_t n = 1;
  for (int32_t d = 0; d < s->rank; d++) n *= (size_t)s->dims[d];
  return n;
}

/* Runs the entry function: every value gets host memory (arguments point
 * at theirs), adds run in order, func.return copies into the outputs. */
static xrt_status mini_execute(void *client,
                               const xrt_plugin_execute_args *args,
                               xrt_plugin_error *err) {
  (void)client;
  if (!XRT_STRUCT_HAS(args, xrt_plugin_execute_args, abort_message))
    return mini_fail(err, XRT_INVALID_ARGUMENT, "bad execute arguments");
  if (args->abort_message)
    return mini_fail(err, XRT_ABORTED, "%s", args->abort_message);
  const xrt_ir_func *fn = ((const mini_exe *)args->executable)->fn;
  float **val = calloc((size_t)fn->num_values + 1, sizeof *val);
  char *owned = calloc((size_t)fn->num_values + 1, 1);
  xrt_status s = val && owned ? XRT_OK
                 : mini_fail(err, XRT_RESOURCE_EXHAUSTED, "out of host memory");
  for (int32_t i = 0; !s && i < fn->body.num_args && i < args->num_args; i++)
    val[fn->body.args[i]] = args->args[i];
  for (int32_t i = 0; !s && i < fn->body.num_ops; i++) {
    const xrt_ir_op *op = &fn->body.ops[i];
    if (op->code == XRT_OP_FUNC_RETURN) {
      for (int32_t k = 0; k < op->num_operands && k < args->num_outs; k++)
        memcpy(args->outs[k], val[op->operands[k]],
               mini_numel(fn, op->operands[k]) * sizeof(float));
      break;
    }
    size_t n = mini_numel(fn, op->results[0]);
    float *r = malloc(n ? n * sizeof *r : 1);
    if (!r) {
      s = mini_fail(err, XRT_RESOURCE_EXHAUSTED, "device 0: out of memory");
      break;
    }
    const float *a = val[op->operands[0]], *b = val[op->operands[1]];
    for (size_t j = 0; j < n; j++) r[j] = a[j] + b[j];
    val[op->results[0]] = r;
    owned[op->results[0]] = 1;
  }
  for (int32_t v = 0; val && owned && v < fn->num_values; v++)
    if (owned[v]) free(val[v]);
  free(val);
  free(owned);
  return s;
}

/* The function table.  Designated initializers: whatever is not named is
 * NULL, which the core reports as unimplemented. */
static const xrt_plugin_api mini_api = {
    .struct_size = sizeof(xrt_plugin_api),
    .abi_major = XRT_PLUGIN_ABI_MAJOR,
    .abi_minor = XRT_PLUGIN_ABI_MINOR,
    .name = "minimal",
    .version = "1.0.0",
    .client_create = mini_client_create,
    .client_destroy = mini_client_destroy,
    .device_count = mini_device_count,
    .device_describe = mini_device_describe,
    .buffer_alloc = mini_buffer_alloc,
    .buffer_free = mini_buffer_free,
    .buffer_write = mini_buffer_write,
    .buffer_read = mini_buffer_read,
    .buffer_copy = mini_buffer_copy,
    .compile = mini_compile,
    .executable_destroy = mini_executable_destroy,
    .execute = mini_execute,
    .platform_describe = mini_platform_describe,
    .op_support = mini_op_support,
};

/* The one symbol xrt looks up in the library. */
const xrt_plugin_api *xrt_plugin_get_api(void) { return &mini_api; }
