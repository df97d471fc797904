/*
 * test_plugin_abi.h - the plugin ABI used directly, as a core or the
 * conformance tool would: the arguments of a table's client_create,
 * compile and execute, the simulator's table on clients of its own, and
 * modules built by hand with the ABI's IR structs (ops the verifier would
 * refuse, so that the simulator's own checks answer).
 */
#ifndef XRT_TEST_PLUGIN_ABI_H
#define XRT_TEST_PLUGIN_ABI_H

#include "test_util.h"

static inline int64_t tu_zero_ns(void *ctx) {
  (void)ctx;
  return 0;
}

/* Arguments of a plugin table's client_create: ndev devices of
 * memory_bytes each, the system allocator, no host services. */
static inline xrt_plugin_client_args tu_plugin_client_args(
    int ndev, uint64_t memory_bytes) {
  xrt_plugin_client_args ca = {.struct_size = sizeof(xrt_plugin_client_args),
                               .num_devices = ndev,
                               .device_memory_bytes = memory_bytes,
                               .allocator = xrt_allocator_system()};
  return ca;
}

/* The index of function @main in module m; -1 if it has none. */
static inline int32_t tu_main_index(const xrt_ir_module *m) {
  int32_t entry = -1;
  for (int32_t i = 0; i < m->num_funcs; i++)
    if (strcmp(m->funcs[i].name, "main") == 0) entry = i;
  return entry;
}

/* Parses text into *prog (release it with xrt_program_release) and
 * returns its module, the index of its @main in *entry; fails the test,
 * naming what, if it does not parse or has no @main. */
static inline const xrt_ir_module *tu_parse_main(const char *text,
                                                 const char *what,
                                                 xrt_program **prog,
                                                 int32_t *entry) {
  if (xrt_program_parse(text, strlen(text), NULL, prog) != XRT_OK)
    fail_msg("%s: %s", what, xrt_last_error());
  const xrt_ir_module *m = xrt_program_module(*prog);
  *entry = tu_main_index(m);
  if (*entry < 0) fail_msg("%s: no @main", what);
  return m;
}

/* Arguments of a plugin table's compile: function entry of module for one
 * participant (one replica, one partition) on devices (may be NULL). */
static inline xrt_plugin_compile_args tu_plugin_compile_args(
    const xrt_ir_module *module, int32_t entry, const int32_t *devices) {
  xrt_plugin_compile_args a = {.struct_size = sizeof(xrt_plugin_compile_args),
                                .module = module,
                                .entry = entry,
                                .num_replicas = 1,
                                .num_partitions = 1,
                                .device_assignment = devices};
  return a;
}

/* A client of the simulator's plugin table used directly, without the
 * core (xrt_sim_plugin_api()->client_destroy releases it): one device of
 * memory_bytes, host services that log nothing and read a clock at 0.
 * The plugin keeps the host table, hence static.  Fails the test if the
 * client cannot be created. */
static inline void *tu_sim_plugin_client(uint64_t memory_bytes) {
  static const xrt_plugin_host_api host = {
      .struct_size = sizeof host, .log = tu_quiet_log, .now_ns = tu_zero_ns};
  xrt_plugin_client_args ca = tu_plugin_client_args(1, memory_bytes);
  ca.host = &host;
  void *pc = NULL;
  xrt_plugin_error err;
  if (xrt_sim_plugin_api()->client_create(&ca, &pc, &err) != XRT_OK)
    fail_msg("simulator plugin client: %s", err.message);
  return pc;
}

/* Arguments of an execute of one participant, the launch 1 x 1: nin
 * blocks ins in, nout blocks outs out, launch id 0. */
static inline xrt_plugin_execute_args tu_plugin_exec(void *exe, void **ins,
                                                     int nin, void **outs,
                                                     int nout) {
  xrt_plugin_execute_args ea = {
      .struct_size = sizeof(xrt_plugin_execute_args),
      .executable = exe,
      .num_replicas = 1,
      .num_partitions = 1,
      .args = ins,
      .num_args = nin,
      .outs = outs,
      .num_outs = nout};
  return ea;
}

/* The same with mem[0, nin) in, then mem[nin, nin + nout) out, as
 * launch 1. */
static inline xrt_plugin_execute_args tu_plugin_exec_args(void *exe,
                                                          void **mem, int nin,
                                                          int nout) {
  xrt_plugin_execute_args ea = tu_plugin_exec(exe, mem, nin, mem + nin, nout);
  ea.launch_id = 1;
  return ea;
}

/* ---- a spy: the simulator's table named "spy", whose clients record
 * the host services the core gave them ---- */

static inline const xrt_plugin_host_api **tu_spy_host(void) {
  static const xrt_plugin_host_api *host;
  return &host;
}

static inline xrt_status tu_spy_create(const xrt_plugin_client_args *a,
                                       void **out, xrt_plugin_error *err) {
  *tu_spy_host() = a->host;
  return xrt_sim_plugin_api()->client_create(a, out, err);
}

/* A context holding the spy (tu_context_with); no host recorded yet. */
static inline xrt_context *tu_spy_context(void) {
  static xrt_plugin_api spy;
  spy = tu_sim_table("spy");
  spy.client_create = tu_spy_create;
  *tu_spy_host() = NULL;
  return tu_context_with(&spy);
}

/* ---- modules built by hand ---- */

/* A tensor type of rank <= 2 (dimensions past the rank are 0). */
static inline xrt_ir_type tu_ty(xrt_dtype dt, int rank, int64_t d0,
                                int64_t d1) {
  xrt_ir_type t = {.kind = XRT_TYPE_TENSOR,
                   .shape = {.dtype = dt, .rank = rank, .dims = {d0, d1}}};
  return t;
}

/* Attributes: an integer list, an integer, a dictionary of n items. */
static inline xrt_ir_attr tu_ir_ints(const char *name, const int64_t *v,
                                     int64_t n) {
  xrt_ir_attr a = {.name = name, .kind = XRT_ATTR_INTS, .ints = v, .n = n};
  return a;
}

static inline xrt_ir_attr tu_ir_int(const char *name, int64_t v) {
  xrt_ir_attr a = {.name = name, .kind = XRT_ATTR_INT, .i = v};
  return a;
}

static inline xrt_ir_attr tu_ir_dict(const char *name,
                                     const xrt_ir_attr *items, int n) {
  xrt_ir_attr a = {
      .name = name, .kind = XRT_ATTR_DICT, .num_items = n, .items = items};
  return a;
}

/* An op of code (named name) of nin operands and nout results, calling
 * nothing; the rest zero. */
static inline void tu_ir_op(xrt_ir_op *op, xrt_opcode code, const char *name,
                            int nin, const int32_t *operands, int nout,
                            const int32_t *results) {
  *op = (xrt_ir_op){.code = code,
                    .name = name,
                    .num_operands = nin,
                    .operands = operands,
                    .num_results = nout,
                    .results = results,
                    .callee = -1};
}

/* A block of nargs arguments running nops ops. */
static inline xrt_ir_region tu_ir_block(int nargs, const int32_t *args,
                                        int nops, const xrt_ir_op *ops) {
  xrt_ir_region r = {
      .num_args = nargs, .args = args, .num_ops = nops, .ops = ops};
  return r;
}

/* The public function @main of nv values of types, whose body takes nargs
 * arguments and runs nops ops; no results declared. */
static inline void tu_ir_main(xrt_ir_func *f, int nv,
                              const xrt_ir_type *types, int nargs,
                              const int32_t *args, int nops,
                              const xrt_ir_op *ops) {
  *f = (xrt_ir_func){.name = "main",
                     .is_public = true,
                     .num_values = nv,
                     .value_types = types,
                     .body = tu_ir_block(nargs, args, nops, ops)};
}

/* An unnamed module of nfuncs functions, one replica, one partition. */
static inline void tu_ir_module(xrt_ir_module *m, const xrt_ir_func *funcs,
                                int nfuncs) {
  *m = (xrt_ir_module){.name = "",
                       .num_funcs = nfuncs,
                       .funcs = funcs,
                       .num_replicas = 1,
                       .num_partitions = 1,
                       .stablehlo_version = "1.0.0"};
}

/* A module whose only function @main runs one op and a func.return of
 * nothing: values 0..nin-1 are the arguments and the op's operands,
 * nin..nin+nout-1 its results.  The parts point at each other: fill it
 * in place (tu_ir_one_op) and do not copy it. */
typedef struct tu_ir_one {
  xrt_ir_type types[8];
  int32_t ids[8];
  xrt_ir_op ops[2];
  xrt_ir_func f;
  xrt_ir_module m;
} tu_ir_one;

static inline const xrt_ir_module *
tu_ir_one_op(tu_ir_one *o, xrt_opcode code, const char *name, int nin,
             const xrt_ir_type *tin, int nout, const xrt_ir_type *tout,
             int nattrs, const xrt_ir_attr *attrs) {
  assert_true(nin + nout <= 8);
  for (int i = 0; i < nin + nout; i++) {
    o->types[i] = i < nin ? tin[i] : tout[i - nin];
    o->ids[i] = i;
  }
  tu_ir_op(&o->ops[0], code, name, nin, o->ids, nout, o->ids + nin);
  o->ops[0].num_attrs = nattrs;
  o->ops[0].attrs = attrs;
  tu_ir_op(&o->ops[1], XRT_OP_FUNC_RETURN, "func.return", 0, NULL, 0, NULL);
  tu_ir_main(&o->f, nin + nout, o->types, nin, o->ids, 2, o->ops);
  tu_ir_module(&o->m, &o->f, 1);
  return &o->m;
}

/* Compiles entry 0 of m for one participant on device 0 of pc (a client
 * of the simulator's table); the status, the message in err (empty when
 * the compile says nothing). */
static inline xrt_status tu_sim_compile_on(void *pc, const xrt_ir_module *m,
                                           void **exe, xrt_plugin_error *err) {
  const int32_t dev = 0;
  xrt_plugin_compile_args a = tu_plugin_compile_args(m, 0, &dev);
  err->message[0] = 0;
  return xrt_sim_plugin_api()->compile(pc, &a, exe, err);
}

/* The same on a client of its own (tu_sim_plugin_client), executable and
 * client released. */
static inline xrt_status tu_sim_compile_module(const xrt_ir_module *m,
                                               xrt_plugin_error *err) {
  const xrt_plugin_api *api = xrt_sim_plugin_api();
  void *pc = tu_sim_plugin_client(1 << 20), *exe = NULL;
  xrt_status st = tu_sim_compile_on(pc, m, &exe, err);
  if (exe) api->executable_destroy(exe);
  api->client_destroy(pc);
  return st;
}

/* Fails the test (naming the caller's line) unless st is want and, when
 * why is not NULL, message contains why. */
static inline void tu_expect_status(int line, xrt_status st, xrt_status want,
                                    const char *message, const char *why) {
  if (st != want)
    fail_msg("line %d: status %d (%s), want %d", line, (int)st,
             st ? message : "", (int)want);
  if (why) TU_ASSERT_CONTAINS(message, why);
}

/* Calls fn(..., &error) and checks its status and message as
 * tu_expect_status does. */
#define TU_EXPECT_PLUGIN(want, why, fn, ...)                                \
  do {                                                                      \
    xrt_plugin_error e_;                                                    \
    tu_expect_status(__LINE__, fn(__VA_ARGS__, &e_), (want), e_.message,    \
                     (why));                                                \
  } while (0)

#endif /* XRT_TEST_PLUGIN_ABI_H */
