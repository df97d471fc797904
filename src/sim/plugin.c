/*
 * src/sim/plugin.c - platform description and op support, tracing through the
 * core, the plugin table.
 * Part of the simulated device; MIT licensed, see LICENSE.
 */
#include "internal.h"

/* ----------------------------------------------------------------------
 * Platform description and op support (ABI 1.0).
 *
 * The newest StableHLO version the simulator accepts is the one xrt's
 * parser implements (xrt_stablehlo_version()).  It is a literal here
 * because the plugin built as a shared object calls nothing in xrt.c;
 * test_sim_so checks that the two agree.
 * -------------------------------------------------------------------- */

#define SIM_STABLEHLO_MIN "0.9.0"
#define SIM_STABLEHLO_MAX "1.8.0"

static const xrt_attribute sim_platform_attrs[] = {
    {.name = "max_devices", .type = XRT_ATTRIBUTE_INT, .int_value = 1024},
    {.name = "simulated", .type = XRT_ATTRIBUTE_BOOL, .bool_value = true},
    {.name = "vendor", .type = XRT_ATTRIBUTE_STRING, .string_value = "xrt"},
};

/* Fills the fields both sides know: the core's struct may be older
 * (smaller) or newer (larger) than ours. */
static xrt_status sim_platform_describe(xrt_plugin_platform_desc *out,
                                        xrt_plugin_error *err) {
  if (!out || out->struct_size < sizeof out->struct_size)
    return sim_fail(err, XRT_INVALID_ARGUMENT, "bad platform description");
  xrt_plugin_platform_desc d;
  memset(&d, 0, sizeof d);
  d.stablehlo_min = SIM_STABLEHLO_MIN;
  d.stablehlo_max = SIM_STABLEHLO_MAX;
  d.capabilities = XRT_CAP_ASYNC | XRT_CAP_MULTI_DEVICE | XRT_CAP_COLLECTIVES |
                   XRT_CAP_FAULT_INJECTION | XRT_CAP_HOST_MEMORY;
  d.dtypes = 0; /* every element type */
  d.num_attributes =
      (int)(sizeof sim_platform_attrs / sizeof *sim_platform_attrs);
  d.attributes = sim_platform_attrs;
  size_t n = out->struct_size < sizeof d ? out->struct_size : sizeof d;
  d.struct_size = n;
  memcpy(out, &d, n);
  return XRT_OK;
}

/* The type op computes value id in: a quantized operand or result of a
 * compute op is dequantized to its expressed type first (see "Quantized
 * operands and results of compute ops"). */
static xrt_dtype sim_os_type(const xrt_ir_func *f, int32_t id) {
  const xrt_ir_type *t = &f->value_types[id];
  return t->quant ? t->quant->expressed : t->shape.dtype;
}

/* Writes "<op> is not supported for element type <t>" into why and
 * returns 0; 1 for XRT_DTYPE_INVALID (no type to name: compile reports). */
static int sim_os_refuse(const xrt_ir_op *op, xrt_dtype t, char *why,
                         size_t cap) {
  if (t == XRT_DTYPE_INVALID) return 1;
  snprintf(why, cap, "%s is not supported for element type %s",
           op->name ? op->name : sim_opcode_name(op->code),
           sim_dtype_name(t));
  return 0;
}

/* The element-type checks of the op table's rules (enum sim_type_rule),
 * each the one the op's lowerer makes, with the same predicates
 * (sim_dot_for, sim_clamp_for, sim_la_kernels, ...).  1 if the simulator
 * takes the op's types, else 0 and a reason in why. */
typedef int (*sim_os_rule_fn)(const xrt_ir_func *f, const xrt_ir_op *op,
                              char *why, size_t cap);

static int sim_os_num_result(const xrt_ir_func *f, const xrt_ir_op *op,
                             char *why, size_t cap) {
  if (op->num_results != 1) return 1;
  xrt_dtype o = sim_os_type(f, op->results[0]);
  return sim_num_supported(o) || sim_os_refuse(op, o, why, cap);
}

static int sim_os_clamp(const xrt_ir_func *f, const xrt_ir_op *op, char *why,
                        size_t cap) {
  if (op->num_results != 1) return 1;
  xrt_dtype o = sim_os_type(f, op->results[0]);
  return sim_clamp_for(o) || sim_os_refuse(op, o, why, cap);
}

static int sim_os_dot(const xrt_ir_func *f, const xrt_ir_op *op, char *why,
                      size_t cap) {
  if (op->num_operands != 2 || op->num_results != 1) return 1;
  xrt_dtype o = sim_os_type(f, op->results[0]);
  xrt_dtype a = sim_os_type(f, op->operands[0]);
  xrt_dtype b = sim_os_type(f, op->operands[1]);
  size_t acc;
  if (!sim_dot_for(sim_is_minifloat(o) ? XRT_F32 : o, &acc))
    return sim_os_refuse(op, o, why, cap);
  if (!sim_num_supported(a)) return sim_os_refuse(op, a, why, cap);
  return sim_num_supported(b) || sim_os_refuse(op, b, why, cap);
}

static int sim_os_conv(const xrt_ir_func *f, const xrt_ir_op *op, char *why,
                       size_t cap) {
  if (op->num_operands < 2 || op->num_results != 1) return 1;
  xrt_dtype o = sim_os_type(f, op->results[0]);
  sim_la_dotn_fn dotn;
  sim_la_store_fn store;
  return (sim_la_kernels(sim_is_minifloat(o) ? XRT_F32 : o, &dotn, &store) &&
          sim_num_supported(sim_os_type(f, op->operands[0])) &&
          sim_num_supported(sim_os_type(f, op->operands[1]))) ||
         sim_os_refuse(op, o, why, cap);
}

static int sim_os_ragged_dot(const xrt_ir_func *f, const xrt_ir_op *op,
                             char *why, size_t cap) {
  if (op->num_operands == 3 && op->num_results == 1 &&
      f->value_types[op->operands[2]].shape.rank != 1) {
    snprintf(why, cap, "%s: only 1-D group_sizes are supported by the "
             "simulator", op->name);
    return 0;
  }
  return sim_os_conv(f, op, why, cap);
}

/* Operand k, when there is one, holds integer indices. */
static int sim_os_index(const xrt_ir_func *f, const xrt_ir_op *op, int32_t k,
                        char *why, size_t cap) {
  if (k >= op->num_operands) return 1;
  xrt_dtype t = f->value_types[op->operands[k]].shape.dtype;
  return sim_ix_is_int(t) || sim_os_refuse(op, t, why, cap);
}

static int sim_os_gather(const xrt_ir_func *f, const xrt_ir_op *op, char *why,
                         size_t cap) {
  return sim_os_index(f, op, 1, why, cap);
}

static int sim_os_scatter(const xrt_ir_func *f, const xrt_ir_op *op,
                          char *why, size_t cap) {
  /* inputs..., scatter_indices, updates... */
  return op->num_operands < 3 ||
         sim_os_index(f, op, op->num_operands / 2, why, cap);
}

static int sim_os_linalg(const xrt_ir_func *f, const xrt_ir_op *op, char *why,
                         size_t cap) {
  if (op->num_operands < 1) return 1;
  xrt_dtype a = sim_os_type(f, op->operands[0]);
  return sim_la_linalg_type(a) || sim_os_refuse(op, a, why, cap);
}

static int sim_os_float_input(const xrt_ir_func *f, const xrt_ir_op *op,
                              char *why, size_t cap) {
  if (op->num_operands < 1) return 1;
  xrt_dtype a = sim_os_type(f, op->operands[0]);
  return sim_dtype_is_float(a) || sim_os_refuse(op, a, why, cap);
}

static int sim_os_rng_bits(const xrt_ir_func *f, const xrt_ir_op *op,
                           char *why, size_t cap) {
  if (op->num_results != 2) return 1;
  const xrt_ir_type *t = &f->value_types[op->results[1]];
  xrt_dtype o = t->shape.dtype;
  return (sim_esize(o) <= 8 && o != XRT_PRED && !sim_dtype_is_complex(o) &&
          !t->quant) ||
         sim_os_refuse(op, o, why, cap);
}

static int sim_os_rng(const xrt_ir_func *f, const xrt_ir_op *op, char *why,
                      size_t cap) {
  if (op->num_results != 1) return 1;
  xrt_dtype o = f->value_types[op->results[0]].shape.dtype;
  return (sim_num_supported(o) && !sim_dtype_is_complex(o)) ||
         sim_os_refuse(op, o, why, cap);
}

static const sim_os_rule_fn sim_os_rules[SIM_TR_COUNT] = {
    [SIM_TR_NUM_RESULT] = sim_os_num_result,
    [SIM_TR_CLAMP] = sim_os_clamp,
    [SIM_TR_DOT] = sim_os_dot,
    [SIM_TR_CONV] = sim_os_conv,
    [SIM_TR_RAGGED_DOT] = sim_os_ragged_dot,
    [SIM_TR_GATHER_INDEX] = sim_os_gather,
    [SIM_TR_SCATTER_INDEX] = sim_os_scatter,
    [SIM_TR_LINALG] = sim_os_linalg,
    [SIM_TR_FLOAT_INPUT] = sim_os_float_input,
    [SIM_TR_RNG_BITS] = sim_os_rng_bits,
    [SIM_TR_RNG] = sim_os_rng,
};

/* The checks the lowerer of op would make of its element types (and of
 * tuples passed to the host), so that a YES here is a compile that
 * succeeds.  0 and a reason in why when the simulator would refuse. */
static int sim_os_types_ok(const sim_op_desc *d, const xrt_ir_func *f,
                           const xrt_ir_op *op, char *why, size_t cap) {
  if (d->flags & SIM_OPF_HOST) {
    /* host calls and channels move tensors and tokens, not tuples (as
     * sim_lower_host_call and the send lowering refuse them) */
    for (int32_t i = 0; i < op->num_operands + op->num_results; i++) {
      int32_t id = i < op->num_operands ? op->operands[i]
                                        : op->results[i - op->num_operands];
      if (f->value_types[id].kind == XRT_TYPE_TUPLE) {
        snprintf(why, cap, "%s: tuple values cannot be passed to the host or "
                 "sent by the simulator", op->name);
        return 0;
      }
    }
  }
  sim_os_rule_fn rule = sim_os_rules[d->types];
  return !rule || rule(f, op, why, cap);
}

/* Whether the simulator compiles op: it has a lowerer, its values are ones
 * the simulator holds (the check sim_lower_op makes), an elementwise op has
 * a kernel for its types (sim_ew_kernel, as sim_lower_ew asks), and the
 * element types pass the lowerer's checks. */
static int sim_op_check(const xrt_allocator *al, const xrt_ir_func *f,
                        const xrt_ir_op *op, char *why, size_t cap) {
  const char *name = op->name ? op->name : sim_opcode_name(op->code);
  if (op->code == XRT_OP_RETURN || op->code == XRT_OP_FUNC_RETURN)
    return XRT_SUPPORT_YES; /* terminators: the plan binds their operands */
  const sim_op_desc *d = sim_op(op->code);
  sim_lower_fn lower = d->lower;
  if (!lower) {
    snprintf(why, cap, "%s is not supported by the simulator", name);
    return XRT_SUPPORT_NO;
  }
  if (sim_values_why(f, op, why, cap)) return XRT_SUPPORT_NO;
  if (lower == sim_lower_ew) {
    if (op->num_results != 1 || op->num_operands > SIM_MAX_EW_IN) {
      snprintf(why, cap, "%s with %d operands and %d results is not "
               "supported by the simulator", name, (int)op->num_operands,
               (int)op->num_results);
      return XRT_SUPPORT_NO;
    }
    const void *ctx = NULL;
    int owned = 0;
    why[0] = 0;
    sim_ew_fn fn = sim_ew_kernel(al, f, op, &ctx, &owned, why, cap);
    if (owned > 0 && ctx) al->free(al->self, (void *)(uintptr_t)ctx);
    if (!fn) {
      if (!why[0]) snprintf(why, cap, "%s: elementwise op not supported", name);
      return XRT_SUPPORT_NO;
    }
    return XRT_SUPPORT_YES;
  }
  /* A compute op with quantized values dequantizes them first: each must
   * be a quantized type the kernels handle (sim_lower_quant's check). */
  sim_fcc fc;
  memset(&fc, 0, sizeof fc);
  fc.f = f;
  if (sim_quant_computes(&fc, op))
    for (int32_t i = 0; i < op->num_operands + op->num_results; i++) {
      int32_t id = i < op->num_operands ? op->operands[i]
                                        : op->results[i - op->num_operands];
      const xrt_ir_type *t = &f->value_types[id];
      sim_qv q;
      if (t->kind == XRT_TYPE_TENSOR && t->quant && !sim_q_value(t, &q)) {
        snprintf(why, cap, "%s: quantized type with storage %s is not "
                 "supported by the simulator", name,
                 sim_dtype_name(t->shape.dtype));
        return XRT_SUPPORT_NO;
      }
    }
  return sim_os_types_ok(d, f, op, why, cap) ? XRT_SUPPORT_YES
                                             : XRT_SUPPORT_NO;
}

static void *sim_system_alloc(void *self, size_t n) {
  (void)self;
  return malloc(n ? n : 1);
}
static void sim_system_free(void *self, void *p) {
  (void)self;
  free(p);
}
/* For the rare call without a client (there is none to ask). */
static const xrt_allocator sim_system_al = {NULL, sim_system_alloc,
                                            sim_system_free};

static int sim_op_support(void *client, const xrt_ir_module *module,
                          int32_t func, const xrt_ir_op *op,
                          xrt_plugin_error *why) {
  /* The answer does not depend on the client; its allocator is used. */
  const xrt_allocator *al = client ? &((sim_client *)client)->al
                                   : &sim_system_al;
  char tmp[sizeof why->message];
  char *msg = why ? why->message : tmp;
  msg[0] = 0;
  if (!module || !op || func < 0 || func >= module->num_funcs) {
    snprintf(msg, sizeof tmp, "bad op_support arguments");
    return XRT_SUPPORT_NO;
  }
  return sim_op_check(al, &module->funcs[func], op, msg, sizeof tmp);
}

/* Only the entry point is exported from the shared object (the rest is
 * built with -fvisibility=hidden). */
#if defined(XRT_PLUGIN_SHARED)
#define SIM_EXPORT XRT_PLUGIN_EXPORT
#else
#define SIM_EXPORT
#endif
/* ----------------------------------------------------------------------
 * Tracing and logging through the core
 *
 * The core hands the plugin a host services table at client creation
 * (xrt_plugin_client_args.host, ABI 1.0).  The simulator keeps it when it
 * has the calls it uses, logs its client's shape at debug level, and
 * reports each collective a participant runs as a "collective" event on
 * its device's track.  A collective step is routed through
 * sim_run_traced_coll only when the client has those services, and that
 * asks whether a trace is recording before reading the clock, so an
 * untraced collective costs one call more.
 * -------------------------------------------------------------------- */

/* Keeps the core's services when they are complete enough to use. */
SIM_PRIVATE void sim_trace_attach(sim_client *c,
                             const xrt_plugin_client_args *args) {
  c->host = NULL;
  if (!XRT_STRUCT_HAS(args, xrt_plugin_client_args, host) || !args->host)
    return;
  const xrt_plugin_host_api *h = args->host;
  if (!XRT_STRUCT_HAS(h, xrt_plugin_host_api, now_ns)) return;
  c->host = h;
  if (h->log) {
    char msg[160];
    snprintf(msg, sizeof msg, "simulator client: %d device(s) of %llu bytes, "
             "%d thread(s) per device", c->ndev,
             (unsigned long long)args->device_memory_bytes,
             args->threads_per_device);
    h->log(h->ctx, XRT_LOG_DEBUG, "sim", msg);
  }
}

/* "all_reduce" for "stablehlo.all_reduce". */
static const char *sim_trace_op_name(const xrt_ir_op *op) {
  const char *dot = op->name ? strrchr(op->name, '.') : NULL;
  return dot ? dot + 1 : op->name ? op->name : "collective";
}

/* A collective step that reports itself when a trace is recording. */
static xrt_status sim_run_traced_coll(const sim_step *st, void **vals,
                                      sim_cx *cx) {
  const xrt_plugin_host_api *h = cx->exe->cl->host;
  sim_run_fn run = sim_op(st->op->code)->coll;
  if (!h->trace_enabled(h->ctx)) return run(st, vals, cx);
  int64_t t0 = h->now_ns(h->ctx);
  xrt_status rc = run(st, vals, cx);
  int64_t t1 = h->now_ns(h->ctx);
  h->trace_event(h->ctx, cx->xa ? cx->xa->device : -1, "collective",
                 sim_trace_op_name(st->op), t0, t1);
  return rc;
}

/* sim_lower_op's hook: routes a lowered collective through the tracer
 * when the client has the core's trace services. */
SIM_PRIVATE void sim_trace_wrap(const sim_fcc *fc, sim_step *st) {
  const sim_client *cl = fc->cc->exe ? fc->cc->exe->cl : NULL;
  const xrt_plugin_host_api *h = cl ? cl->host : NULL;
  if (!h || !h->trace_enabled || !h->trace_event || !h->now_ns) return;
  if (st->run && st->op && st->run == sim_op(st->op->code)->coll)
    st->run = sim_run_traced_coll;
}

static const xrt_plugin_api sim_api = {
    .struct_size = sizeof(xrt_plugin_api),
    .abi_major = XRT_PLUGIN_ABI_MAJOR,
    .abi_minor = XRT_PLUGIN_ABI_MINOR,
    .name = "sim",
    .version = "0.3.0",
    .client_create = sim_client_create,
    .client_destroy = sim_client_destroy,
    .device_count = sim_device_count,
    .device_describe = sim_device_describe,
    .buffer_alloc = sim_buffer_alloc,
    .buffer_free = sim_buffer_free,
    .buffer_write = sim_buffer_write,
    .buffer_read = sim_buffer_read,
    .buffer_copy = sim_buffer_copy,
    .compile = sim_compile,
    .executable_destroy = sim_executable_destroy,
    .execute = sim_execute,
    .inject_fault = sim_inject_fault,
    /* ABI 1.0 (helpers: add your entries on their own lines below) */
    .buffer_host_pointer = sim_buffer_host_pointer,
    .buffer_wrap_host = sim_buffer_wrap_host,
    .platform_describe = sim_platform_describe,
    .op_support = sim_op_support,
    .inject_fault_kind = sim_inject_fault_kind,
    .buffer_copy_region = sim_buffer_copy_region,
    .executable_serialize = sim_executable_serialize,
    .serialized_free = sim_serialized_free,
    .executable_deserialize = sim_executable_deserialize,
};

/* Built into libxrt, the core finds the table here; built as its own
 * library, the simulator exports only the plugin entry point. */
#ifdef XRT_PLUGIN_SHARED
SIM_EXPORT const xrt_plugin_api *xrt_plugin_get_api(void) { return &sim_api; }
#else
const xrt_plugin_api *xrt_sim_plugin_api(void) { return &sim_api; }
#endif
