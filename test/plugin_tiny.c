/*
 * plugin_tiny.c - "tiny", a deliberately small xrt device plugin.
 *
 * A model for vendors: everything a plugin must do, and nothing more.
 *   - One device whose memory is host memory (malloc'd buffers).
 *   - Exclusive: one client at a time.  It says so (XRT_CAP_EXCLUSIVE) and
 *     also refuses a second client itself, as a real device driver would.
 *   - Element types f32 and s32 only.
 *   - Programs made only of elementwise ops on tensors of one shape: add,
 *     subtract, multiply, divide, negate, abs, maximum, minimum, constant
 *     and func.return.  No plan is built: execute walks the IR.
 *   - op_support answers with the same check compile makes, so "yes" means
 *     the compile succeeds.
 *
 * It includes only xrt.h and calls nothing in xrt: build it with
 *   cc -std=c11 -I. -fPIC -fvisibility=hidden -shared test/plugin_tiny.c \
 *      -o libxrt_tiny.so
 * and load it with xrt_context_load_plugin(ctx, "tiny", "libxrt_tiny.so").
 */
#include "xrt.h"

#include <math.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- errors ---- */

#if defined(__GNUC__)
#define TINY_PRINTF(a, b) XRT_PRINTF_FORMAT(a, b)
#else
#define TINY_PRINTF(a, b)
#endif

static xrt_status tiny_fail(xrt_plugin_error *err, xrt_status code,
                            const char *fmt, ...) TINY_PRINTF(3, 4);
static xrt_status tiny_fail(xrt_plugin_error *err, xrt_status code,
                            const char *fmt, ...) {
  if (err) {
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(err->message, sizeof err->message, fmt, ap);
    va_end(ap);
  }
  return code;
}

/* ---- platform ---- */

static const xrt_attribute tiny_platform_attrs[] = {
    {.name = "max_devices", .type = XRT_ATTRIBUTE_INT, .int_value = 1},
    {.name = "interpreter", .type = XRT_ATTRIBUTE_BOOL, .bool_value = true},
};

static xrt_status tiny_platform_describe(xrt_plugin_platform_desc *out,
                                         xrt_plugin_error *err) {
  if (!out || out->struct_size < sizeof out->struct_size)
    return tiny_fail(err, XRT_INVALID_ARGUMENT, "bad platform description");
  xrt_plugin_platform_desc d;
  memset(&d, 0, sizeof d);
  d.stablehlo_min = "1.0.0";
  d.stablehlo_max = NULL; /* elementwise ops have not changed since 1.0 */
  d.capabilities = XRT_CAP_EXCLUSIVE | XRT_CAP_HOST_MEMORY;
  d.dtypes = (1ull << XRT_F32) | (1ull << XRT_S32);
  d.num_attributes = 2;
  d.attributes = tiny_platform_attrs;
  /* Fill only what both sides know: the core's struct may be older. */
  size_t n = out->struct_size < sizeof d ? out->struct_size : sizeof d;
  d.struct_size = n;
  memcpy(out, &d, n);
  return XRT_OK;
}

/* ---- client and device ---- */

/* The device is one per process; at most one client may hold it. */
static atomic_flag tiny_device_taken = ATOMIC_FLAG_INIT;

typedef struct tiny_client {
  xrt_allocator al;
  xrt_attribute attrs[1];
} tiny_client;

static xrt_status tiny_client_create(const xrt_plugin_client_args *args,
                                     void **out_client, xrt_plugin_error *err) {
  /* Read only the fields the core's struct has (it may be older). */
  if (!args || !out_client ||
      !XRT_STRUCT_HAS(args, xrt_plugin_client_args, allocator))
    return tiny_fail(err, XRT_INVALID_ARGUMENT, "bad client arguments");
  if (args->num_devices != 1)
    return tiny_fail(err, XRT_INVALID_ARGUMENT, "tiny has exactly one "
                     "device; %d were asked for", args->num_devices);
  if (atomic_flag_test_and_set(&tiny_device_taken))
    return tiny_fail(err, XRT_FAILED_PRECONDITION, "the tiny device is "
                     "exclusive and another client holds it");
  tiny_client *c = (tiny_client *)args->allocator.alloc(args->allocator.self,
                                                        sizeof *c);
  if (!c) {
    atomic_flag_clear(&tiny_device_taken);
    return tiny_fail(err, XRT_RESOURCE_EXHAUSTED, "out of host memory");
  }
  c->al = args->allocator;
  c->attrs[0] = (xrt_attribute){
      .name = "memory_bytes",
      .type = XRT_ATTRIBUTE_INT,
      .int_value = (int64_t)args->device_memory_bytes};
  *out_client = c;
  return XRT_OK;
}

static void tiny_client_destroy(void *client) {
  tiny_client *c = (tiny_client *)client;
  if (!c) return;
  c->al.free(c->al.self, c);
  atomic_flag_clear(&tiny_device_taken);
}

static int tiny_device_count(void *client) { return client ? 1 : -1; }

static xrt_status tiny_check_device(void *client, int device,
                                    xrt_plugin_error *err) {
  if (!client) return tiny_fail(err, XRT_INVALID_ARGUMENT, "no client");
  if (device != 0)
    return tiny_fail(err, XRT_OUT_OF_RANGE, "tiny has one device (0), not %d",
                     device);
  return XRT_OK;
}

static xrt_status tiny_device_describe(void *client, int device,
                                       xrt_plugin_device_desc *out,
                                       xrt_plugin_error *err) {
  xrt_status s = tiny_check_device(client, device, err);
  if (s) return s;
  if (!out) return tiny_fail(err, XRT_INVALID_ARGUMENT, "out is NULL");
  out->struct_size = sizeof *out;
  out->kind = "tiny";
  out->num_attributes = 1;
  out->attributes = ((tiny_client *)client)->attrs;
  return XRT_OK;
}

/* ---- device memory: host memory ---- */

static xrt_status tiny_buffer_alloc(void *client, int device, size_t bytes,
                                    void **out_mem, xrt_plugin_error *err) {
  xrt_status s = tiny_check_device(client, device, err);
  if (s) return s;
  if (!out_mem) return tiny_fail(err, XRT_INVALID_ARGUMENT, "out_mem is NULL");
  *out_mem = malloc(bytes ? bytes : 1);
  return *out_mem ? XRT_OK
                  : tiny_fail(err, XRT_RESOURCE_EXHAUSTED, "out of memory "
                              "allocating %zu bytes", bytes);
}

static void tiny_buffer_free(void *client, int device, void *mem) {
  (void)client, (void)device;
  free(mem);
}

static xrt_status tiny_buffer_write(void *client, int device, void *mem,
                                    const void *src, size_t bytes,
                                    xrt_plugin_error *err) {
  xrt_status s = tiny_check_device(client, device, err);
  if (!s && bytes) memcpy(mem, src, bytes);
  return s;
}

static xrt_status tiny_buffer_read(void *client, int device, const void *mem,
                                   void *dst, size_t bytes,
                                   xrt_plugin_error *err) {
  xrt_status s = tiny_check_device(client, device, err);
  if (!s && bytes) memcpy(dst, mem, bytes);
  return s;
}

static xrt_status tiny_buffer_copy(void *client, int src_device,
                                   const void *src, int dst_device, void *dst,
                                   size_t bytes, xrt_plugin_error *err) {
  xrt_status s = tiny_check_device(client, src_device, err);
  if (!s) s = tiny_check_device(client, dst_device, err);
  if (!s && bytes) memcpy(dst, src, bytes);
  return s;
}

static void *tiny_buffer_host_pointer(void *client, int device, void *mem) {
  return client && device == 0 ? mem : NULL;
}

/* ---- what tiny runs ---- */

static int tiny_is_elementwise(xrt_opcode code) {
  switch (code) {
  case XRT_OP_ADD: case XRT_OP_SUBTRACT: case XRT_OP_MULTIPLY:
  case XRT_OP_DIVIDE: case XRT_OP_MAXIMUM: case XRT_OP_MINIMUM:
  case XRT_OP_NEGATE: case XRT_OP_ABS: return 1;
  default: return 0;
  }
}

static int tiny_is_unary(xrt_opcode code) {
  return code == XRT_OP_NEGATE || code == XRT_OP_ABS;
}

static int tiny_type_ok(const xrt_ir_type *t) {
  return t->kind == XRT_TYPE_TENSOR && !t->quant &&
         (t->shape.dtype == XRT_F32 || t->shape.dtype == XRT_S32);
}

static int tiny_same_type(const xrt_ir_type *a, const xrt_ir_type *b) {
  if (a->shape.dtype != b->shape.dtype || a->shape.rank != b->shape.rank)
    return 0;
  for (int32_t i = 0; i < a->shape.rank; i++)
    if (a->shape.dims[i] != b->shape.dims[i]) return 0;
  return 1;
}

/* The one check behind both op_support and compile: 1 if tiny runs op
 * (of function f), else 0 with the reason in why. */
static int tiny_op_ok(const xrt_ir_func *f, const xrt_ir_op *op, char *why,
                      size_t cap) {
  const char *name = op->name ? op->name : "this op";
  const xrt_ir_type *vt = f->value_types;
  if (op->code == XRT_OP_FUNC_RETURN) {
    for (int32_t i = 0; i < op->num_operands; i++)
      if (!tiny_type_ok(&vt[op->operands[i]])) {
        snprintf(why, cap, "tiny returns only f32 and s32 tensors");
        return 0;
      }
    return 1;
  }
  if (op->code == XRT_OP_CONSTANT) {
    const xrt_ir_attr *v = xrt_ir_op_attr(op, "value");
    if (op->num_results != 1 || !tiny_type_ok(&vt[op->results[0]]) || !v ||
        v->kind != XRT_ATTR_DENSE || !v->lit) {
      snprintf(why, cap, "tiny supports only dense f32 and s32 constants");
      return 0;
    }
    return 1;
  }
  if (!tiny_is_elementwise(op->code)) {
    snprintf(why, cap, "%s is not supported by tiny (only elementwise add, "
             "subtract, multiply, divide, negate, abs, maximum, minimum)",
             name);
    return 0;
  }
  int arity = tiny_is_unary(op->code) ? 1 : 2;
  if (op->num_operands != arity || op->num_results != 1) {
    snprintf(why, cap, "%s must have %d operand(s) and one result", name,
             arity);
    return 0;
  }
  const xrt_ir_type *r = &vt[op->results[0]];
  for (int i = 0; i < arity; i++) {
    const xrt_ir_type *a = &vt[op->operands[i]];
    if (!tiny_type_ok(a) || !tiny_same_type(a, r)) {
      snprintf(why, cap, "%s: tiny supports only f32 and s32 tensors of "
               "one shape", name);
      return 0;
    }
  }
  return 1;
}

static int tiny_op_support(void *client, const xrt_ir_module *module,
                           int32_t func, const xrt_ir_op *op,
                           xrt_plugin_error *why) {
  (void)client;
  char tmp[sizeof why->message];
  char *msg = why ? why->message : tmp;
  if (!module || !op || func < 0 || func >= module->num_funcs) {
    snprintf(msg, sizeof tmp, "bad op_support arguments");
    return XRT_SUPPORT_NO;
  }
  return tiny_op_ok(&module->funcs[func], op, msg, sizeof tmp)
             ? XRT_SUPPORT_YES : XRT_SUPPORT_NO;
}

/* ---- compile: check, and keep the function ---- */

typedef struct tiny_exe {
  xrt_allocator al;
  const xrt_ir_func *f; /* the module outlives the executable */
} tiny_exe;

static xrt_status tiny_compile(void *client,
                               const xrt_plugin_compile_args *args,
                               void **out_executable, xrt_plugin_error *err) {
  tiny_client *c = (tiny_client *)client;
  if (!c || !args || !out_executable ||
      !XRT_STRUCT_HAS(args, xrt_plugin_compile_args, entry) || !args->module ||
      args->entry < 0 || args->entry >= args->module->num_funcs)
    return tiny_fail(err, XRT_INVALID_ARGUMENT, "bad compile arguments");
  /* Only ops are checked, as op_support answers per op: an argument that
   * no op reads may have any type (func.return checks what it returns). */
  const xrt_ir_func *f = &args->module->funcs[args->entry];
  for (int32_t i = 0; i < f->body.num_ops; i++) {
    const xrt_ir_op *op = &f->body.ops[i];
    char why[512];
    if (!tiny_op_ok(f, op, why, sizeof why))
      return tiny_fail(err, XRT_UNIMPLEMENTED, "%s:%d:%d: %s",
                       op->loc.file ? op->loc.file : "", (int)op->loc.line,
                       (int)op->loc.col, why);
  }
  tiny_exe *e = (tiny_exe *)c->al.alloc(c->al.self, sizeof *e);
  if (!e) return tiny_fail(err, XRT_RESOURCE_EXHAUSTED, "out of host memory");
  e->al = c->al;
  e->f = f;
  *out_executable = e;
  return XRT_OK;
}

static void tiny_executable_destroy(void *executable) {
  tiny_exe *e = (tiny_exe *)executable;
  if (e) e->al.free(e->al.self, e);
}

/* ---- execute: walk the ops ---- */

/* s32 arithmetic wraps (computed unsigned); x / 0 = -1 and MIN / -1 = MIN,
 * as XLA defines them. */
static int32_t tiny_s32(xrt_opcode code, int32_t a, int32_t b) {
  uint32_t ua = (uint32_t)a, ub = (uint32_t)b;
  switch (code) {
  case XRT_OP_ADD: return (int32_t)(ua + ub);
  case XRT_OP_SUBTRACT: return (int32_t)(ua - ub);
  case XRT_OP_MULTIPLY: return (int32_t)(ua * ub);
  case XRT_OP_DIVIDE:
    if (b == 0) return -1;
    if (a == INT32_MIN && b == -1) return INT32_MIN;
    return a / b;
  case XRT_OP_MAXIMUM: return a > b ? a : b;
  case XRT_OP_MINIMUM: return a < b ? a : b;
  case XRT_OP_NEGATE: return (int32_t)(0u - ua);
  default: return a < 0 ? (int32_t)(0u - ua) : a; /* abs */
  }
}

/* maximum and minimum propagate NaN. */
static float tiny_f32(xrt_opcode code, float a, float b) {
  switch (code) {
  case XRT_OP_ADD: return a + b;
  case XRT_OP_SUBTRACT: return a - b;
  case XRT_OP_MULTIPLY: return a * b;
  case XRT_OP_DIVIDE: return a / b;
  case XRT_OP_MAXIMUM: return isnan(a) || isnan(b) ? NAN : a > b ? a : b;
  case XRT_OP_MINIMUM: return isnan(a) || isnan(b) ? NAN : a < b ? a : b;
  case XRT_OP_NEGATE: return -a;
  default: return fabsf(a);
  }
}

static int64_t tiny_numel(const xrt_shape *s) {
  int64_t n = 1;
  for (int32_t i = 0; i < s->rank; i++) n *= s->dims[i];
  return n;
}

/* Runs one op of f, writing its result into vals (4-byte elements). */
static xrt_status tiny_run_op(const tiny_exe *e, const xrt_ir_op *op,
                              void **vals, void **owned,
                              xrt_plugin_error *err) {
  const xrt_ir_type *rt = &e->f->value_types[op->results[0]];
  int64_t n = tiny_numel(&rt->shape);
  void *out = e->al.alloc(e->al.self, (size_t)n * 4 + 1);
  if (!out) return tiny_fail(err, XRT_RESOURCE_EXHAUSTED, "out of memory");
  vals[op->results[0]] = owned[op->results[0]] = out;
  if (op->code == XRT_OP_CONSTANT) {
    const xrt_ir_literal *lit = xrt_ir_op_attr(op, "value")->lit;
    if (lit->bytes < (lit->splat ? 4 : (size_t)n * 4))
      return tiny_fail(err, XRT_INVALID_ARGUMENT, "constant data too short");
    for (int64_t i = 0; i < n; i++)
      memcpy((char *)out + i * 4,
             (const char *)lit->data + (lit->splat ? 0 : i * 4), 4);
    return XRT_OK;
  }
  const void *a = vals[op->operands[0]];
  const void *b = tiny_is_unary(op->code) ? a : vals[op->operands[1]];
  if (rt->shape.dtype == XRT_F32)
    for (int64_t i = 0; i < n; i++)
      ((float *)out)[i] = tiny_f32(op->code, ((const float *)a)[i],
                                   ((const float *)b)[i]);
  else
    for (int64_t i = 0; i < n; i++)
      ((int32_t *)out)[i] = tiny_s32(op->code, ((const int32_t *)a)[i],
                                     ((const int32_t *)b)[i]);
  return XRT_OK;
}

static xrt_status tiny_run(const tiny_exe *e, const xrt_plugin_execute_args *a,
                           void **vals, void **owned, xrt_plugin_error *err) {
  const xrt_ir_func *f = e->f;
  for (int32_t i = 0; i < f->body.num_args; i++)
    vals[f->body.args[i]] = a->args[i];
  for (int32_t i = 0; i < f->body.num_ops; i++) {
    const xrt_ir_op *op = &f->body.ops[i];
    if (op->code != XRT_OP_FUNC_RETURN) {
      xrt_status s = tiny_run_op(e, op, vals, owned, err);
      if (s) return s;
      continue;
    }
    for (int32_t k = 0; k < op->num_operands; k++) {
      const xrt_shape *s = &f->value_types[op->operands[k]].shape;
      memcpy(a->outs[k], vals[op->operands[k]], (size_t)tiny_numel(s) * 4);
    }
  }
  return XRT_OK;
}

static xrt_status tiny_execute(void *client, const xrt_plugin_execute_args *a,
                               xrt_plugin_error *err) {
  if (!a || !XRT_STRUCT_HAS(a, xrt_plugin_execute_args, abort_message))
    return tiny_fail(err, XRT_INVALID_ARGUMENT, "bad execute arguments");
  xrt_status s = tiny_check_device(client, a->device, err);
  if (s) return s;
  if (a->abort_message)
    return tiny_fail(err, XRT_ABORTED, "%s", a->abort_message);
  const tiny_exe *e = (const tiny_exe *)a->executable;
  if (!e) return tiny_fail(err, XRT_INVALID_ARGUMENT, "no executable");
  const xrt_ir_func *f = e->f;
  if (a->num_args != f->body.num_args || a->num_outs != f->num_results ||
      (a->num_args && !a->args) || (a->num_outs && !a->outs))
    return tiny_fail(err, XRT_INVALID_ARGUMENT, "@%s takes %d argument(s) and "
                     "%d result(s), got %d and %d", f->name,
                     (int)f->body.num_args, (int)f->num_results, a->num_args,
                     a->num_outs);
  /* vals: every value's data; owned: the ones this call allocated. */
  size_t nv = (size_t)f->num_values + 1;
  void **vals = (void **)e->al.alloc(e->al.self, 2 * nv * sizeof *vals);
  if (!vals) return tiny_fail(err, XRT_RESOURCE_EXHAUSTED, "out of memory");
  memset(vals, 0, 2 * nv * sizeof *vals);
  s = tiny_run(e, a, vals, vals + nv, err);
  for (size_t i = 0; i < nv; i++) e->al.free(e->al.self, vals[nv + i]);
  e->al.free(e->al.self, vals);
  return s;
}

/* ---- the table ---- */

static const xrt_plugin_api tiny_api = {
    .struct_size = sizeof(xrt_plugin_api),
    .abi_major = XRT_PLUGIN_ABI_MAJOR,
    .abi_minor = XRT_PLUGIN_ABI_MINOR,
    .name = "tiny",
    .version = "1.0.0",
    .client_create = tiny_client_create,
    .client_destroy = tiny_client_destroy,
    .device_count = tiny_device_count,
    .device_describe = tiny_device_describe,
    .buffer_alloc = tiny_buffer_alloc,
    .buffer_free = tiny_buffer_free,
    .buffer_write = tiny_buffer_write,
    .buffer_read = tiny_buffer_read,
    .buffer_copy = tiny_buffer_copy,
    .compile = tiny_compile,
    .executable_destroy = tiny_executable_destroy,
    .execute = tiny_execute,
    .platform_describe = tiny_platform_describe,
    .op_support = tiny_op_support,
    .buffer_host_pointer = tiny_buffer_host_pointer,
};

XRT_PLUGIN_EXPORT const xrt_plugin_api *xrt_plugin_get_api(void) {
  return &tiny_api;
}
