/*
 * test_sim_plugin.c - the simulator's plugin-table entry points called
 * directly (xrt_sim_plugin_api(), as a core or the conformance tool would):
 * platform_describe and op_support (src/sim/plugin.c), compile and execute
 * (src/sim/exec.c, src/sim/launch.c) and device memory (src/sim/device.c)
 * with bad arguments, each refused with its status and message; an
 * element type the simulator has no kernel for, refused by op_support and
 * by xrt_client_query_support with the reason; a launch of one
 * participant of a program with collectives (the launch of its own); an
 * execute re-entered on a busy device from a host call (the temporary
 * frame); a region copy large enough to be split; a fault injected into
 * an allocation; and more bytes read than a block holds.  Issue #25
 * (coverage of src/sim).
 */
#include "test_plugin_abi.h"

static const xrt_plugin_api *api(void) { return xrt_sim_plugin_api(); }

/* A parsed program and its function @main. */
typedef struct prog {
  xrt_program *p;
  const xrt_ir_module *m;
  int32_t entry;
} prog;

static void prog_open(prog *g, const char *text) {
  memset(g, 0, sizeof *g);
  g->m = tu_parse_main(text, "parse", &g->p, &g->entry);
}

static const xrt_ir_op *prog_op(const prog *g, int k) {
  const xrt_ir_region *b = &g->m->funcs[g->entry].body;
  assert_true(k < b->num_ops);
  return &b->ops[k];
}

static void compile_args(xrt_plugin_compile_args *a, const prog *g,
                         const int32_t *devices,
                         const xrt_host_binding *hosts) {
  *a = tu_plugin_compile_args(g->m, g->entry, devices);
  a->host_bindings = hosts;
}

static const char *kNeg =
    "func.func @main(%a: tensor<4xf32>) -> tensor<4xf32> {\n"
    "  %0 = stablehlo.negate %a : tensor<4xf32>\n"
    "  return %0 : tensor<4xf32>\n"
    "}\n";

/* ---- platform_describe ---- */

static void test_platform_describe(void **state) {
  (void)state;
  xrt_plugin_error err;
  assert_int_equal(api()->platform_describe(NULL, &err), XRT_INVALID_ARGUMENT);
  TU_ASSERT_CONTAINS(err.message, "bad platform description");
  xrt_plugin_platform_desc d;
  memset(&d, 0, sizeof d);
  d.struct_size = 1; /* less than the size field itself */
  assert_int_equal(api()->platform_describe(&d, &err), XRT_INVALID_ARGUMENT);
  /* an older core's struct ending after stablehlo_max: only that is
   * written */
  memset(&d, 0x5a, sizeof d);
  d.struct_size = offsetof(xrt_plugin_platform_desc, capabilities);
  assert_int_equal(api()->platform_describe(&d, &err), XRT_OK);
  assert_int_equal(d.struct_size, offsetof(xrt_plugin_platform_desc,
                                           capabilities));
  assert_string_equal(d.stablehlo_min, "0.9.0");
  assert_string_equal(d.stablehlo_max, xrt_stablehlo_version());
  unsigned char tail[sizeof d - offsetof(xrt_plugin_platform_desc,
                                         capabilities)];
  memset(tail, 0x5a, sizeof tail);
  assert_memory_equal((unsigned char *)&d +
                          offsetof(xrt_plugin_platform_desc, capabilities),
                      tail, sizeof tail);
}

/* ---- op_support ---- */

static void test_op_support_arguments(void **state) {
  (void)state;
  prog g;
  prog_open(&g, kNeg);
  const xrt_ir_op *op = prog_op(&g, 0);
  xrt_plugin_error why;
  assert_int_equal(api()->op_support(NULL, NULL, g.entry, op, &why),
                   XRT_SUPPORT_NO);
  assert_string_equal(why.message, "bad op_support arguments");
  assert_int_equal(api()->op_support(NULL, g.m, g.entry, NULL, &why),
                   XRT_SUPPORT_NO);
  assert_string_equal(why.message, "bad op_support arguments");
  assert_int_equal(api()->op_support(NULL, g.m, -1, op, &why),
                   XRT_SUPPORT_NO);
  assert_int_equal(api()->op_support(NULL, g.m, g.m->num_funcs, op, &why),
                   XRT_SUPPORT_NO);
  /* no client (the system allocator) and no why: still answered */
  assert_int_equal(api()->op_support(NULL, g.m, g.entry, op, NULL),
                   XRT_SUPPORT_YES);
  assert_int_equal(api()->op_support(NULL, g.m, -1, op, NULL),
                   XRT_SUPPORT_NO);
  void *pc = tu_sim_plugin_client(1 << 20);
  assert_int_equal(api()->op_support(pc, g.m, g.entry, op, &why),
                   XRT_SUPPORT_YES);
  api()->client_destroy(pc);
  xrt_program_release(g.p);
}

/* Element types the verifier takes but the simulator has no kernel for:
 * op_support says NO with the type, as does xrt_client_query_support,
 * and a compile fails the same way. */
static void test_op_support_types(void **state) {
  (void)state;
  static const struct {
    const char *text, *op, *reason;
  } cases[] = {
      {"func.func @main(%a: tensor<2xcomplex<f32>>, %b: tensor<2xcomplex<f32>>) -> tensor<2xcomplex<f32>> {\n"
       "  %0 = stablehlo.clamp %a, %b, %a : tensor<2xcomplex<f32>>\n"
       "  return %0 : tensor<2xcomplex<f32>>\n"
       "}\n",
       "stablehlo.clamp",
       "stablehlo.clamp is not supported for element type complex<f32>"},
      {"func.func @main(%a: tensor<2x2xi1>) -> tensor<2x2xi1> {\n"
       "  %0 = stablehlo.dot_general %a, %a, contracting_dims = [1] x [0] : (tensor<2x2xi1>, tensor<2x2xi1>) -> tensor<2x2xi1>\n"
       "  return %0 : tensor<2x2xi1>\n"
       "}\n",
       "stablehlo.dot_general",
       "stablehlo.dot_general is not supported for element type i1"},
  };
  xrt_client *c = tu_client(1, 1, 0);
  for (size_t i = 0; i < TU_COUNT(cases); i++) {
    prog g;
    prog_open(&g, cases[i].text);
    xrt_plugin_error why;
    assert_int_equal(api()->op_support(NULL, g.m, g.entry, prog_op(&g, 0),
                                       &why),
                     XRT_SUPPORT_NO);
    assert_string_equal(why.message, cases[i].reason);
    xrt_support_report *r = NULL;
    assert_int_equal(xrt_client_query_support(c, g.p, NULL, &r), XRT_OK);
    assert_int_equal(xrt_support_report_verdict(r), XRT_SUPPORT_NO);
    assert_int_equal(xrt_support_report_count(r), 1);
    const xrt_support_issue *is = xrt_support_report_issue(r, 0);
    assert_string_equal(is->op, cases[i].op);
    assert_int_equal(is->line, 2);
    assert_string_equal(is->reason, cases[i].reason);
    xrt_support_report_release(r);
    xrt_executable *e = NULL;
    assert_int_equal(xrt_compile(c, cases[i].text, strlen(cases[i].text),
                                 NULL, &e),
                     XRT_UNIMPLEMENTED);
    TU_ASSERT_CONTAINS(xrt_last_error(), "not supported by the simulator");
    xrt_program_release(g.p);
  }
  xrt_client_release(c);
}

/* op_support on single ops built by hand (the plugin ABI's IR structs):
 * element types and shapes the verifier would refuse before a core asks,
 * so that the simulator's own checks answer. */

/* The verdict of op_support for an op of code (named name) taking nin
 * values of types tin and giving nout of types tout; why->message. */
static int synth_support(xrt_opcode code, const char *name, int nin,
                         const xrt_ir_type *tin, int nout,
                         const xrt_ir_type *tout, xrt_plugin_error *why) {
  tu_ir_one o;
  const xrt_ir_module *m =
      tu_ir_one_op(&o, code, name, nin, tin, nout, tout, 0, NULL);
  int v = api()->op_support(NULL, m, 0, &o.ops[0], why);
  /* the return is always taken */
  xrt_plugin_error w2;
  assert_int_equal(api()->op_support(NULL, m, 0, &o.ops[1], &w2),
                   XRT_SUPPORT_YES);
  return v;
}

#define SUPPORT(verdict, reason, ...)                                       \
  do {                                                                      \
    xrt_plugin_error why_;                                                  \
    assert_int_equal(synth_support(__VA_ARGS__, &why_), (verdict));         \
    const char *reason_ = (reason);                                         \
    if (reason_) assert_string_equal(why_.message, reason_);                \
  } while (0)

static void test_op_support_synthetic(void **state) {
  (void)state;
  const xrt_ir_type f32s = tu_ty(XRT_F32, 0, 0, 0),
                    i64v = tu_ty(XRT_S64, 1, 1, 0);
  const xrt_ir_type u64v = tu_ty(XRT_U64, 1, 2, 0),
                    c64v = tu_ty(XRT_C64, 1, 3, 0);
  /* rng and rng_bit_generator of complex (and i1) values */
  xrt_ir_type in3[3] = {f32s, f32s, i64v};
  SUPPORT(XRT_SUPPORT_NO,
          "stablehlo.rng is not supported for element type complex<f32>",
          XRT_OP_RNG, "stablehlo.rng", 3, in3, 1, &c64v);
  xrt_ir_type out2[2] = {u64v, c64v};
  SUPPORT(XRT_SUPPORT_NO,
          "stablehlo.rng_bit_generator is not supported for element type "
          "complex<f32>",
          XRT_OP_RNG_BIT_GENERATOR, "stablehlo.rng_bit_generator", 1, &u64v, 2,
          out2);
  out2[1] = tu_ty(XRT_PRED, 1, 3, 0);
  SUPPORT(XRT_SUPPORT_NO,
          "stablehlo.rng_bit_generator is not supported for element type i1",
          XRT_OP_RNG_BIT_GENERATOR, "stablehlo.rng_bit_generator", 1, &u64v, 2,
          out2);
  out2[1] = tu_ty(XRT_U32, 1, 3, 0);
  SUPPORT(XRT_SUPPORT_YES, NULL, XRT_OP_RNG_BIT_GENERATOR,
          "stablehlo.rng_bit_generator", 1, &u64v, 2, out2);
  /* indices that are not integers */
  xrt_ir_type sc[3] = {tu_ty(XRT_F32, 1, 5, 0), tu_ty(XRT_F32, 2, 2, 1),
                       tu_ty(XRT_F32, 2, 2, 2)};
  xrt_ir_type f5 = tu_ty(XRT_F32, 1, 5, 0);
  SUPPORT(XRT_SUPPORT_NO,
          "stablehlo.scatter is not supported for element type f32",
          XRT_OP_SCATTER, "stablehlo.scatter", 3, sc, 1, &f5);
  /* ragged_dot: 1-D group sizes only */
  xrt_ir_type rd[3] = {tu_ty(XRT_F32, 2, 5, 2), tu_ty(XRT_F32, 2, 3, 2),
                       tu_ty(XRT_S32, 2, 3, 1)};
  xrt_ir_type r52 = tu_ty(XRT_F32, 2, 5, 2);
  SUPPORT(
      XRT_SUPPORT_NO,
      "chlo.ragged_dot: only 1-D group_sizes are supported by the simulator",
      XRT_OP_CHLO_RAGGED_DOT, "chlo.ragged_dot", 3, rd, 1, &r52);
  rd[2] = tu_ty(XRT_S32, 1, 3, 0);
  SUPPORT(XRT_SUPPORT_YES, NULL, XRT_OP_CHLO_RAGGED_DOT, "chlo.ragged_dot", 3,
          rd, 1, &r52);
  /* an op the simulator has no lowerer for (the core rewrites it first) */
  xrt_ir_type two[2] = {tu_ty(XRT_F32, 1, 2, 0), tu_ty(XRT_F32, 1, 2, 0)};
  SUPPORT(XRT_SUPPORT_NO,
          "chlo.broadcast_add is not supported by the simulator",
          XRT_OP_CHLO_BROADCAST_ADD, "chlo.broadcast_add", 2, two, 1, two);
  /* an elementwise op with two results */
  SUPPORT(XRT_SUPPORT_NO,
          "stablehlo.add with 2 operands and 2 results is not supported by the "
          "simulator",
          XRT_OP_ADD, "stablehlo.add", 2, two, 2, two);
  /* an elementwise op with no kernel for its type */
  SUPPORT(XRT_SUPPORT_NO, "stablehlo.not is not implemented for tensor<2xf32>",
          XRT_OP_NOT, "stablehlo.not", 1, two, 1, two);
  /* linear algebra and batch norm of integers */
  xrt_ir_type i22 = tu_ty(XRT_S32, 2, 2, 2);
  SUPPORT(XRT_SUPPORT_NO,
          "stablehlo.cholesky is not supported for element type i32",
          XRT_OP_CHOLESKY, "stablehlo.cholesky", 1, &i22, 1, &i22);
  xrt_ir_type bn[5] = {i22, tu_ty(XRT_S32, 1, 2, 0), tu_ty(XRT_S32, 1, 2, 0),
                       tu_ty(XRT_S32, 1, 2, 0), tu_ty(XRT_S32, 1, 2, 0)};
  SUPPORT(
      XRT_SUPPORT_NO,
      "stablehlo.batch_norm_inference is not supported for element type i32",
      XRT_OP_BATCH_NORM_INFERENCE, "stablehlo.batch_norm_inference", 5, bn, 1,
      &i22);
  /* a quantized type whose storage is not an integer */
  xrt_ir_quant q;
  memset(&q, 0, sizeof q);
  const double scale = 0.5;
  const int64_t zp = 0;
  q.storage = XRT_F16;
  q.expressed = XRT_F32;
  q.storage_min = -8;
  q.storage_max = 7;
  q.axis = -1;
  q.num_scales = 1;
  q.scales = &scale;
  q.zero_points = &zp;
  xrt_ir_type qt[2] = {tu_ty(XRT_F16, 1, 2, 0), tu_ty(XRT_F16, 1, 2, 0)};
  qt[0].quant = qt[1].quant = &q;
  SUPPORT(XRT_SUPPORT_NO,
          "stablehlo.dot_general: quantized type with storage f16 is not "
          "supported by the simulator",
          XRT_OP_DOT_GENERAL, "stablehlo.dot_general", 2, qt, 1, qt);
}

/* ---- compile ---- */

static void test_compile_arguments(void **state) {
  (void)state;
  prog g;
  prog_open(&g, kNeg);
  void *pc = tu_sim_plugin_client(1 << 20);
  int32_t dev = 0;
  xrt_plugin_compile_args a;
  compile_args(&a, &g, &dev, NULL);
  xrt_plugin_error err;
  void *exe = (void *)1;
  assert_int_equal(api()->compile(NULL, &a, &exe, &err), XRT_INVALID_ARGUMENT);
  TU_ASSERT_CONTAINS(err.message, "bad compile arguments");
  assert_int_equal(api()->compile(pc, NULL, &exe, &err), XRT_INVALID_ARGUMENT);
  assert_int_equal(api()->compile(pc, &a, NULL, &err), XRT_INVALID_ARGUMENT);
  xrt_plugin_compile_args b = a;
  b.struct_size = offsetof(xrt_plugin_compile_args, num_replicas);
  assert_int_equal(api()->compile(pc, &b, &exe, &err), XRT_INVALID_ARGUMENT);
  TU_ASSERT_CONTAINS(err.message, "bad compile arguments");
  b = a;
  b.module = NULL;
  assert_int_equal(api()->compile(pc, &b, &exe, &err), XRT_INVALID_ARGUMENT);
  b = a;
  b.entry = g.m->num_funcs;
  assert_int_equal(api()->compile(pc, &b, &exe, &err), XRT_INVALID_ARGUMENT);
  char want[64];
  snprintf(want, sizeof want, "entry %d is not a function", (int)b.entry);
  TU_ASSERT_CONTAINS(err.message, want);
  b.entry = -1;
  assert_int_equal(api()->compile(pc, &b, &exe, &err), XRT_INVALID_ARGUMENT);
  TU_ASSERT_CONTAINS(err.message, "entry -1 is not a function");
  /* more participants than the simulator runs: 2^16 = 1 << 8 x 1 << 8 is
   * the most */
  b = a;
  b.num_replicas = 1 << 9;
  b.num_partitions = 1 << 8;
  b.device_assignment = NULL;
  assert_int_equal(api()->compile(pc, &b, &exe, &err), XRT_INVALID_ARGUMENT);
  TU_ASSERT_CONTAINS(err.message,
                     "512 replicas x 256 partitions is more than the "
                     "simulator's 65536 processes");
  api()->client_destroy(pc);
  xrt_program_release(g.p);
}

/* ---- execute ---- */

static void exec_args(xrt_plugin_execute_args *x, void *exe, void **args,
                      void **outs) {
  *x = tu_plugin_exec(exe, args, 1, outs, 1);
}

/* A program compiled (with hosts) for device 0 of the client pc, and
 * blocks in and out of n bytes there, in holding x unless it is NULL. */
typedef struct run1 {
  void *pc, *exe, *in, *out;
} run1;

static void run1_open(run1 *r, void *pc, const prog *g,
                      const xrt_host_binding *hosts, const void *x, size_t n) {
  memset(r, 0, sizeof *r);
  r->pc = pc;
  int32_t dev = 0;
  xrt_plugin_compile_args a;
  compile_args(&a, g, &dev, hosts);
  xrt_plugin_error err;
  assert_int_equal(api()->compile(pc, &a, &r->exe, &err), XRT_OK);
  assert_int_equal(api()->buffer_alloc(pc, 0, n, &r->in, &err), XRT_OK);
  assert_int_equal(api()->buffer_alloc(pc, 0, n, &r->out, &err), XRT_OK);
  if (x)
    assert_int_equal(api()->buffer_write(pc, 0, r->in, x, n, &err), XRT_OK);
}

/* Frees the blocks and the executable, and destroys the client. */
static void run1_close(run1 *r) {
  api()->buffer_free(r->pc, 0, r->in);
  api()->buffer_free(r->pc, 0, r->out);
  api()->executable_destroy(r->exe);
  api()->client_destroy(r->pc);
}

static void test_execute_arguments(void **state) {
  (void)state;
  prog g;
  prog_open(&g, kNeg);
  const float x[4] = {1.5f, -2.0f, 0.0f, 3.25f};
  run1 r;
  run1_open(&r, tu_sim_plugin_client(1 << 20), &g, NULL, x, sizeof x);
  void *pc = r.pc, *exe = r.exe, *out = r.out;
  void *pc2 = tu_sim_plugin_client(1 << 20);
  xrt_plugin_error err;
  void *args[1] = {r.in}, *outs[1] = {out};
  xrt_plugin_execute_args e;
  assert_int_equal(api()->execute(pc, NULL, &err), XRT_INVALID_ARGUMENT);
  TU_ASSERT_CONTAINS(err.message, "bad execute arguments");
  exec_args(&e, exe, args, outs);
  e.struct_size = 8;
  assert_int_equal(api()->execute(pc, &e, &err), XRT_INVALID_ARGUMENT);
  TU_ASSERT_CONTAINS(err.message, "bad execute arguments");
  exec_args(&e, exe, args, outs);
  assert_int_equal(api()->execute(NULL, &e, &err), XRT_INVALID_ARGUMENT);
  TU_ASSERT_CONTAINS(err.message, "client is NULL");
  e.device = 1;
  assert_int_equal(api()->execute(pc, &e, &err), XRT_OUT_OF_RANGE);
  TU_ASSERT_CONTAINS(err.message, "device 1 does not exist (the client has 1)");
  exec_args(&e, NULL, args, outs);
  assert_int_equal(api()->execute(pc, &e, &err), XRT_INVALID_ARGUMENT);
  TU_ASSERT_CONTAINS(err.message, "bad executable");
  exec_args(&e, exe, args, outs);
  assert_int_equal(api()->execute(pc2, &e, &err), XRT_INVALID_ARGUMENT);
  TU_ASSERT_CONTAINS(err.message, "bad executable");
  static const int32_t shapes[][4] = {
      /* replicas, partitions, replica, partition */
      {0, 1, 0, 0}, {1, 0, 0, 0}, {1 << 9, 1 << 8, 0, 0}};
  for (size_t i = 0; i < TU_COUNT(shapes); i++) {
    exec_args(&e, exe, args, outs);
    e.num_replicas = shapes[i][0];
    e.num_partitions = shapes[i][1];
    assert_int_equal(api()->execute(pc, &e, &err), XRT_INVALID_ARGUMENT);
    char want[80];
    snprintf(want, sizeof want, "bad launch shape: %d replica(s) x %d "
             "partition(s)", shapes[i][0], shapes[i][1]);
    TU_ASSERT_CONTAINS(err.message, want);
  }
  static const int32_t places[][2] = {{-1, 0}, {1, 0}, {0, -1}, {0, 1}};
  for (size_t i = 0; i < TU_COUNT(places); i++) {
    exec_args(&e, exe, args, outs);
    e.replica = places[i][0];
    e.partition = places[i][1];
    assert_int_equal(api()->execute(pc, &e, &err), XRT_INVALID_ARGUMENT);
    char want[80];
    snprintf(want, sizeof want, "participant (replica %d, partition %d) is "
             "outside a launch of 1 x 1", places[i][0], places[i][1]);
    TU_ASSERT_CONTAINS(err.message, want);
  }
  /* argument and result counts */
  exec_args(&e, exe, args, outs);
  e.num_args = 2;
  assert_int_equal(api()->execute(pc, &e, &err), XRT_INVALID_ARGUMENT);
  TU_ASSERT_CONTAINS(err.message, "@main takes 1 argument(s) and 1 result(s), "
                                  "got 2 and 1");
  exec_args(&e, exe, args, outs);
  e.num_outs = 0;
  assert_int_equal(api()->execute(pc, &e, &err), XRT_INVALID_ARGUMENT);
  TU_ASSERT_CONTAINS(err.message, "got 1 and 0");
  exec_args(&e, exe, NULL, outs);
  assert_int_equal(api()->execute(pc, &e, &err), XRT_INVALID_ARGUMENT);
  exec_args(&e, exe, args, NULL);
  assert_int_equal(api()->execute(pc, &e, &err), XRT_INVALID_ARGUMENT);
  /* and the good call */
  exec_args(&e, exe, args, outs);
  assert_int_equal(api()->execute(pc, &e, &err), XRT_OK);
  float y[4];
  assert_int_equal(api()->buffer_read(pc, 0, out, y, sizeof y, &err), XRT_OK);
  const float want[4] = {-1.5f, 2.0f, -0.0f, -3.25f};
  assert_memory_equal(y, want, sizeof y);
  run1_close(&r);
  api()->client_destroy(pc2);
  xrt_program_release(g.p);
}

/* A program with a collective run as a launch of one participant: the
 * simulator makes the launch its own (no registry).  all_reduce of one
 * participant is the input itself. */
static const char *kAllReduce =
    "func.func @main(%a: tensor<3xf32>) -> tensor<3xf32> {\n"
    "  %0 = \"stablehlo.all_reduce\"(%a) ({\n"
    "  ^bb0(%x: tensor<f32>, %y: tensor<f32>):\n"
    "    %s = stablehlo.add %x, %y : tensor<f32>\n"
    "    stablehlo.return %s : tensor<f32>\n"
    "  }) {replica_groups = dense<[[0]]> : tensor<1x1xi64>} : (tensor<3xf32>) -> tensor<3xf32>\n"
    "  return %0 : tensor<3xf32>\n"
    "}\n";

static void test_launch_of_one(void **state) {
  (void)state;
  prog g;
  prog_open(&g, kAllReduce);
  const float x[3] = {1.0f, 2.5f, -4.0f};
  run1 r;
  run1_open(&r, tu_sim_plugin_client(1 << 20), &g, NULL, x, sizeof x);
  xrt_plugin_error err;
  void *args[1] = {r.in}, *outs[1] = {r.out};
  xrt_plugin_execute_args e;
  exec_args(&e, r.exe, args, outs);
  for (int rep = 0; rep < 2; rep++) {
    assert_int_equal(api()->execute(r.pc, &e, &err), XRT_OK);
    float y[3];
    assert_int_equal(api()->buffer_read(r.pc, 0, r.out, y, sizeof y, &err),
                     XRT_OK);
    assert_memory_equal(y, x, sizeof y);
  }
  /* compiled for one participant: a launch of two is refused */
  e.num_replicas = 2;
  assert_int_equal(api()->execute(r.pc, &e, &err), XRT_INVALID_ARGUMENT);
  TU_ASSERT_CONTAINS(err.message, "@main was compiled for 1 replica(s) x 1 "
                                  "partition(s); the launch has 2 x 1");
  run1_close(&r);
  xrt_program_release(g.p);
}

/* The core's services: a collective reports itself as a "collective"
 * event on its device's track when a trace records; a table without
 * trace_event, or too old to have now_ns, is not used. */
typedef struct tracer {
  int events, device;
  char category[32], name[32];
  int64_t clock, start, end;
} tracer;

static bool tr_enabled(void *ctx) {
  (void)ctx;
  return true;
}
static void tr_event(void *ctx, int device, const char *category,
                     const char *name, int64_t start_ns, int64_t end_ns) {
  tracer *t = (tracer *)ctx;
  t->events++;
  t->device = device;
  snprintf(t->category, sizeof t->category, "%s", category);
  snprintf(t->name, sizeof t->name, "%s", name);
  t->start = start_ns;
  t->end = end_ns;
}
static int64_t tr_now(void *ctx) { return ++((tracer *)ctx)->clock * 100; }

/* Runs kAllReduce once on a client with host services h. */
static void traced_run(const xrt_plugin_host_api *h) {
  prog g;
  prog_open(&g, kAllReduce);
  xrt_plugin_client_args ca = tu_plugin_client_args(1, 1 << 20);
  ca.host = h;
  void *pc = NULL;
  xrt_plugin_error err;
  assert_int_equal(api()->client_create(&ca, &pc, &err), XRT_OK);
  const float x[3] = {1, -2, 4};
  run1 r;
  run1_open(&r, pc, &g, NULL, x, sizeof x);
  xrt_plugin_execute_args e;
  exec_args(&e, r.exe, &r.in, &r.out);
  assert_int_equal(api()->execute(pc, &e, &err), XRT_OK);
  float y[3];
  assert_int_equal(api()->buffer_read(pc, 0, r.out, y, sizeof y, &err),
                   XRT_OK);
  assert_memory_equal(y, x, sizeof y);
  run1_close(&r);
  xrt_program_release(g.p);
}

static void test_trace_services(void **state) {
  (void)state;
  tracer t;
  memset(&t, 0, sizeof t);
  xrt_plugin_host_api h = {.struct_size = sizeof(xrt_plugin_host_api),
                           .ctx = &t,
                           .trace_enabled = tr_enabled,
                           .trace_event = tr_event,
                           .now_ns = tr_now}; /* and no log */
  traced_run(&h);
  assert_int_equal(t.events, 1);
  assert_int_equal(t.device, 0);
  assert_string_equal(t.category, "collective");
  assert_string_equal(t.name, "all_reduce");
  assert_true(t.start < t.end);
  /* without trace_event, and a table that ends before now_ns: no events */
  memset(&t, 0, sizeof t);
  xrt_plugin_host_api h2 = h;
  h2.trace_event = NULL;
  traced_run(&h2);
  h2 = h;
  h2.struct_size = offsetof(xrt_plugin_host_api, now_ns);
  traced_run(&h2);
  assert_int_equal(t.events, 0);
}

/* A host call that executes the same executable again on the same device
 * while the first execute holds the device's frame: the inner one runs in
 * a temporary frame. */
typedef struct reenter {
  void *pc, *exe, *in, *out;
  int depth;
  xrt_status inner;
  float inner_out[2];
} reenter;

static xrt_status reenter_host(void *user, xrt_host_call *call) {
  reenter *r = (reenter *)user;
  if (call->num_inputs != 1 || call->num_outputs != 1) return XRT_INTERNAL;
  const float *in = (const float *)call->inputs[0].data;
  float *out = (float *)call->outputs[0].data;
  for (int i = 0; i < 2; i++) out[i] = in[i] * 2.0f;
  if (r->depth++ == 0) {
    void *args[1] = {r->in}, *outs[1] = {r->out};
    xrt_plugin_execute_args e;
    exec_args(&e, r->exe, args, outs);
    xrt_plugin_error err;
    r->inner = api()->execute(r->pc, &e, &err);
    if (r->inner == XRT_OK)
      api()->buffer_read(r->pc, 0, r->out, r->inner_out, sizeof r->inner_out,
                         &err);
  }
  return XRT_OK;
}

static void test_reentered_device(void **state) {
  (void)state;
  prog g;
  prog_open(&g,
            "func.func @main(%a: tensor<2xf32>) -> tensor<2xf32> {\n"
            "  %0 = stablehlo.add %a, %a : tensor<2xf32>\n"
            "  %1 = stablehlo.custom_call @test.twice(%0) : (tensor<2xf32>) -> tensor<2xf32>\n"
            "  %2 = stablehlo.add %1, %a : tensor<2xf32>\n"
            "  return %2 : tensor<2xf32>\n"
            "}\n");
  reenter r;
  memset(&r, 0, sizeof r);
  xrt_host_binding hosts[1] = {{reenter_host, &r}};
  const float x[2] = {1.0f, -3.0f};
  run1 o;
  run1_open(&o, tu_sim_plugin_client(1 << 20), &g, hosts, x, sizeof x);
  r.pc = o.pc;
  r.exe = o.exe;
  r.in = o.in;
  xrt_plugin_error err;
  assert_int_equal(api()->buffer_alloc(r.pc, 0, 8, &r.out, &err), XRT_OK);
  void *args[1] = {o.in}, *outs[1] = {o.out};
  xrt_plugin_execute_args e;
  exec_args(&e, r.exe, args, outs);
  assert_int_equal(api()->execute(r.pc, &e, &err), XRT_OK);
  assert_int_equal(r.depth, 2);
  assert_int_equal(r.inner, XRT_OK);
  /* (x + x) * 2 + x = 5x, both times */
  const float want[2] = {5.0f, -15.0f};
  float y[2];
  assert_int_equal(api()->buffer_read(r.pc, 0, o.out, y, sizeof y, &err),
                   XRT_OK);
  assert_memory_equal(y, want, sizeof y);
  assert_memory_equal(r.inner_out, want, sizeof want);
  api()->buffer_free(r.pc, 0, r.out);
  run1_close(&o);
  xrt_program_release(g.p);
}

/* A client of two devices (no host services). */
static void *client2(void) {
  xrt_plugin_client_args ca = tu_plugin_client_args(2, 1 << 20);
  void *pc = NULL;
  xrt_plugin_error err;
  assert_int_equal(api()->client_create(&ca, &pc, &err), XRT_OK);
  return pc;
}

/* A launch of two joined wrongly: the same participant twice, and a
 * participant that says the launch has another shape.  Participants that
 * come with abort_message set join and leave without running (nor
 * waiting), so the launch is driven from one thread. */
static void test_launch_join_errors(void **state) {
  (void)state;
  prog g;
  prog_open(&g, kNeg);
  void *pc = client2();
  xrt_plugin_error err;
  int32_t devs[2] = {0, 1};
  xrt_plugin_compile_args a;
  compile_args(&a, &g, devs, NULL);
  a.num_replicas = 2;
  void *exe = NULL, *in[2] = {0}, *out[2] = {0};
  assert_int_equal(api()->compile(pc, &a, &exe, &err), XRT_OK);
  for (int d = 0; d < 2; d++) {
    assert_int_equal(api()->buffer_alloc(pc, d, 16, &in[d], &err), XRT_OK);
    assert_int_equal(api()->buffer_alloc(pc, d, 16, &out[d], &err), XRT_OK);
  }
  xrt_plugin_execute_args e[2];
  for (int d = 0; d < 2; d++) {
    exec_args(&e[d], exe, &in[d], &out[d]);
    e[d].device = d;
    e[d].replica = d;
    e[d].num_replicas = 2;
    e[d].launch_id = 7;
  }
  xrt_plugin_execute_args first = e[0];
  first.abort_message = "not run";
  assert_int_equal(api()->execute(pc, &first, &err), XRT_OK);
  assert_int_equal(api()->execute(pc, &e[0], &err), XRT_INVALID_ARGUMENT);
  TU_ASSERT_CONTAINS(err.message, "launch 7: participant (replica 0, "
                                  "partition 0) arrived twice");
  xrt_plugin_execute_args other = e[1];
  other.num_replicas = 1;
  other.num_partitions = 2;
  other.replica = 0;
  other.partition = 1;
  assert_int_equal(api()->execute(pc, &other, &err), XRT_INVALID_ARGUMENT);
  TU_ASSERT_CONTAINS(err.message, "launch 7: participants disagree on its "
                                  "shape (1 x 2 here)");
  xrt_plugin_execute_args last = e[1];
  last.abort_message = "not run either";
  assert_int_equal(api()->execute(pc, &last, &err), XRT_OK);
  /* the launch is over; the next one runs (one participant after the
   * other: the program has no collective to wait at) */
  for (int d = 0; d < 2; d++) {
    const float x[4] = {1, 2, 3, (float)d};
    assert_int_equal(api()->buffer_write(pc, d, in[d], x, sizeof x, &err),
                     XRT_OK);
  }
  for (int d = 0; d < 2; d++) {
    e[d].launch_id = 8;
  }
  assert_int_equal(api()->execute(pc, &e[0], &err), XRT_OK);
  assert_int_equal(api()->execute(pc, &e[1], &err), XRT_OK);
  for (int d = 0; d < 2; d++) {
    float y[4];
    const float want[4] = {-1, -2, -3, -(float)d};
    assert_int_equal(api()->buffer_read(pc, d, out[d], y, sizeof y, &err),
                     XRT_OK);
    assert_memory_equal(y, want, sizeof y);
  }
  for (int d = 0; d < 2; d++) {
    api()->buffer_free(pc, d, in[d]);
    api()->buffer_free(pc, d, out[d]);
  }
  api()->executable_destroy(exe);
  api()->client_destroy(pc);
  xrt_program_release(g.p);
}

/* Send and recv between the two participants of a launch, run one after
 * the other (a send does not wait): a recv whose tensor is bigger than
 * what was sent is refused; a message nobody receives is dropped with
 * the launch. */
static const char *kSend =
    "func.func @main(%a: tensor<3xi32>) -> tensor<3xi32> {\n"
    "  %t = stablehlo.after_all : !stablehlo.token\n"
    "  %s = \"stablehlo.send\"(%a, %t) {\n"
    "      channel_handle = #stablehlo.channel_handle<handle = 7, type = 1>}\n"
    "    : (tensor<3xi32>, !stablehlo.token) -> !stablehlo.token\n"
    "  %s2 = \"stablehlo.send\"(%a, %s) {\n"
    "      channel_handle = #stablehlo.channel_handle<handle = 7, type = 1>}\n"
    "    : (tensor<3xi32>, !stablehlo.token) -> !stablehlo.token\n"
    "  return %a : tensor<3xi32>\n"
    "}\n";
static const char *kRecv4 =
    "func.func @main(%a: tensor<3xi32>) -> tensor<3xi32> {\n"
    "  %t = stablehlo.after_all : !stablehlo.token\n"
    "  %r:2 = \"stablehlo.recv\"(%t) {\n"
    "      channel_handle = #stablehlo.channel_handle<handle = 7, type = 1>}\n"
    "    : (!stablehlo.token) -> (tensor<4xi32>, !stablehlo.token)\n"
    "  return %a : tensor<3xi32>\n"
    "}\n";

static void test_send_recv_mismatch(void **state) {
  (void)state;
  prog gs, gr;
  prog_open(&gs, kSend);
  prog_open(&gr, kRecv4);
  void *pc = client2();
  xrt_plugin_error err;
  int32_t devs[2] = {0, 1};
  xrt_plugin_compile_args a;
  void *xs = NULL, *xr = NULL, *in[2] = {0}, *out[2] = {0};
  compile_args(&a, &gs, devs, NULL);
  a.num_replicas = 2;
  assert_int_equal(api()->compile(pc, &a, &xs, &err), XRT_OK);
  compile_args(&a, &gr, devs, NULL);
  a.num_replicas = 2;
  assert_int_equal(api()->compile(pc, &a, &xr, &err), XRT_OK);
  for (int d = 0; d < 2; d++) {
    assert_int_equal(api()->buffer_alloc(pc, d, 12, &in[d], &err), XRT_OK);
    assert_int_equal(api()->buffer_alloc(pc, d, 12, &out[d], &err), XRT_OK);
    const int32_t x[3] = {1, 2, 3};
    assert_int_equal(api()->buffer_write(pc, d, in[d], x, sizeof x, &err),
                     XRT_OK);
  }
  xrt_plugin_execute_args e[2];
  for (int d = 0; d < 2; d++) {
    exec_args(&e[d], d ? xr : xs, &in[d], &out[d]);
    e[d].device = d;
    e[d].replica = d;
    e[d].num_replicas = 2;
    e[d].launch_id = 11;
  }
  assert_int_equal(api()->execute(pc, &e[0], &err), XRT_OK);
  assert_int_equal(api()->execute(pc, &e[1], &err), XRT_INVALID_ARGUMENT);
  TU_ASSERT_CONTAINS(err.message, "recv on channel 7 expects 16 bytes, the "
                                  "send had 12");
  for (int d = 0; d < 2; d++) {
    api()->buffer_free(pc, d, in[d]);
    api()->buffer_free(pc, d, out[d]);
  }
  api()->executable_destroy(xs);
  api()->executable_destroy(xr);
  api()->client_destroy(pc);
  xrt_program_release(gs.p);
  xrt_program_release(gr.p);
}

/* ---- host calls and calls ---- */

static xrt_status silent_fail(void *user, xrt_host_call *call) {
  (void)user, (void)call;
  return XRT_DATA_LOSS; /* no message written */
}

static const char *kHostCall =
    "func.func @main(%a: tensor<2xf32>) -> tensor<2xf32> {\n"
    "  %0 = stablehlo.custom_call @test.quiet(%a) : (tensor<2xf32>) -> tensor<2xf32>\n"
    "  return %0 : tensor<2xf32>\n"
    "}\n";

/* A custom_call with no host function bound is refused at compile; one
 * whose function fails without a message is reported with its code. */
static void test_host_calls(void **state) {
  (void)state;
  prog g;
  prog_open(&g, kHostCall);
  void *pc = tu_sim_plugin_client(1 << 20);
  int32_t dev = 0;
  xrt_plugin_compile_args a;
  compile_args(&a, &g, &dev, NULL);
  xrt_plugin_error err;
  void *exe = NULL;
  assert_int_equal(api()->compile(pc, &a, &exe, &err), XRT_NOT_FOUND);
  TU_ASSERT_CONTAINS(err.message, "custom_call target 'test.quiet' has no "
                                  "host function");
  xrt_host_binding unbound[1] = {{NULL, NULL}};
  a.host_bindings = unbound;
  assert_int_equal(api()->compile(pc, &a, &exe, &err), XRT_NOT_FOUND);
  xrt_host_binding hosts[1] = {{silent_fail, NULL}};
  run1 r;
  run1_open(&r, pc, &g, hosts, NULL, 8);
  void *args[1] = {r.in}, *outs[1] = {r.out};
  xrt_plugin_execute_args e;
  exec_args(&e, r.exe, args, outs);
  assert_int_equal(api()->execute(pc, &e, &err), XRT_DATA_LOSS);
  char want[80];
  snprintf(want, sizeof want, "custom_call @test.quiet failed (code %d)",
           (int)XRT_DATA_LOSS);
  TU_ASSERT_CONTAINS(err.message, want);
  run1_close(&r);
  xrt_program_release(g.p);
}

/* A function that calls itself: the simulator has no call stack. */
static void test_recursive_call(void **state) {
  (void)state;
  const char *text =
      "func.func private @f(%a: tensor<2xf32>) -> tensor<2xf32> {\n"
      "  %0 = func.call @f(%a) : (tensor<2xf32>) -> tensor<2xf32>\n"
      "  return %0 : tensor<2xf32>\n"
      "}\n"
      "func.func @main(%a: tensor<2xf32>) -> tensor<2xf32> {\n"
      "  %0 = func.call @f(%a) : (tensor<2xf32>) -> tensor<2xf32>\n"
      "  return %0 : tensor<2xf32>\n"
      "}\n";
  xrt_client *c = tu_client(1, 1, 0);
  xrt_executable *e = NULL;
  assert_int_equal(xrt_compile(c, text, strlen(text), NULL, &e),
                   XRT_UNIMPLEMENTED);
  TU_ASSERT_CONTAINS(xrt_last_error(), "recursive call of @f is not "
                                       "supported by the simulator");
  xrt_client_release(c);
}

/* ---- device memory ---- */

static void test_client_arguments(void **state) {
  (void)state;
  xrt_plugin_client_args ca = tu_plugin_client_args(1, 1 << 20);
  void *pc = NULL;
  xrt_plugin_error err;
  assert_int_equal(api()->client_create(NULL, &pc, &err), XRT_INVALID_ARGUMENT);
  TU_ASSERT_CONTAINS(err.message, "bad client arguments");
  assert_int_equal(api()->client_create(&ca, NULL, &err), XRT_INVALID_ARGUMENT);
  xrt_plugin_client_args b = ca;
  b.struct_size = 8;
  assert_int_equal(api()->client_create(&b, &pc, &err), XRT_INVALID_ARGUMENT);
  TU_ASSERT_CONTAINS(err.message, "bad client arguments");
  const int bad[] = {0, 1025};
  for (size_t i = 0; i < TU_COUNT(bad); i++) {
    b = ca;
    b.num_devices = bad[i];
    assert_int_equal(api()->client_create(&b, &pc, &err),
                     XRT_INVALID_ARGUMENT);
    char want[64];
    snprintf(want, sizeof want, "num_devices must be 1..1024, not %d", bad[i]);
    TU_ASSERT_CONTAINS(err.message, want);
  }
  /* a topology of two local processes: still a client of its devices */
  b = ca;
  b.topology.local_world_size = 2;
  b.topology.process_count = 2;
  assert_int_equal(api()->client_create(&b, &pc, &err), XRT_OK);
  assert_int_equal(api()->device_count(pc), 1);
  api()->client_destroy(pc);
}

static void test_memory_arguments(void **state) {
  (void)state;
  void *pc = tu_sim_plugin_client(1 << 20);
  xrt_plugin_error err;
  void *mem = NULL;
  assert_int_equal(api()->buffer_alloc(pc, 0, SIZE_MAX / 2 + 1, &mem, &err),
                   XRT_RESOURCE_EXHAUSTED);
  TU_ASSERT_CONTAINS(err.message, "device 0: cannot allocate");
  assert_int_equal(api()->buffer_alloc(pc, 0, 16, &mem, &err), XRT_OK);
  char buf[32] = {0};
  /* more bytes than the block holds */
  assert_int_equal(api()->buffer_read(pc, 0, mem, buf, 32, &err),
                   XRT_OUT_OF_RANGE);
  TU_ASSERT_CONTAINS(err.message, "device 0: 32 bytes do not fit a block of "
                                  "16 bytes");
  assert_int_equal(api()->buffer_write(pc, 0, mem, buf, 17, &err),
                   XRT_OUT_OF_RANGE);
  /* fault kinds: unknown, too large an after; an injected allocation
   * fault, and one in a transfer */
  assert_int_equal(api()->inject_fault_kind(pc, 0, -1, 0, &err),
                   XRT_INVALID_ARGUMENT);
  TU_ASSERT_CONTAINS(err.message, "unknown fault kind -1");
  assert_int_equal(api()->inject_fault_kind(pc, 0, XRT_FAULT_ALLOC + 1, 0,
                                            &err),
                   XRT_INVALID_ARGUMENT);
  TU_ASSERT_CONTAINS(err.message, "unknown fault kind 4");
  assert_int_equal(api()->inject_fault_kind(pc, 0, XRT_FAULT_ALLOC, INT64_MAX,
                                            &err),
                   XRT_INVALID_ARGUMENT);
  TU_ASSERT_CONTAINS(err.message, "after is too large");
  assert_int_equal(api()->inject_fault_kind(pc, 0, XRT_FAULT_ALLOC, 0, &err),
                   XRT_OK);
  void *m2 = NULL;
  assert_int_equal(api()->buffer_alloc(pc, 0, 16, &m2, &err),
                   XRT_RESOURCE_EXHAUSTED);
  TU_ASSERT_CONTAINS(err.message, "device 0: injected allocation fault in a "
                                  "device memory allocation");
  assert_int_equal(api()->buffer_alloc(pc, 0, 16, &m2, &err), XRT_OK);
  /* NULL out parameters and buffers */
  assert_int_equal(api()->buffer_alloc(pc, 0, 16, NULL, &err),
                   XRT_INVALID_ARGUMENT);
  TU_ASSERT_CONTAINS(err.message, "out_mem is NULL");
  assert_int_equal(api()->device_describe(pc, 0, NULL, &err),
                   XRT_INVALID_ARGUMENT);
  TU_ASSERT_CONTAINS(err.message, "out is NULL");
  assert_int_equal(api()->buffer_write(pc, 0, mem, NULL, 4, &err),
                   XRT_INVALID_ARGUMENT);
  TU_ASSERT_CONTAINS(err.message, "src is NULL");
  assert_int_equal(api()->buffer_read(pc, 0, mem, NULL, 4, &err),
                   XRT_INVALID_ARGUMENT);
  TU_ASSERT_CONTAINS(err.message, "dst is NULL");
  assert_int_equal(api()->buffer_read(pc, 0, NULL, buf, 4, &err),
                   XRT_INVALID_ARGUMENT);
  TU_ASSERT_CONTAINS(err.message, "device memory is NULL");
  assert_int_equal(api()->buffer_copy(pc, 0, mem, 0, NULL, 4, &err),
                   XRT_INVALID_ARGUMENT);
  assert_int_equal(api()->buffer_copy(pc, 0, mem, 1, mem, 4, &err),
                   XRT_OUT_OF_RANGE);
  /* a copy onto itself leaves the bytes */
  const char text[16] = "fifteen chars..";
  assert_int_equal(api()->buffer_write(pc, 0, mem, text, 16, &err), XRT_OK);
  assert_int_equal(api()->buffer_copy(pc, 0, mem, 0, mem, 16, &err), XRT_OK);
  assert_int_equal(api()->buffer_read(pc, 0, mem, buf, 16, &err), XRT_OK);
  assert_memory_equal(buf, text, 16);
  /* wrap_host: NULLs */
  void *w = NULL;
  assert_int_equal(api()->buffer_wrap_host(pc, 0, NULL, 16, &w, &err),
                   XRT_INVALID_ARGUMENT);
  TU_ASSERT_CONTAINS(err.message, "host or out_mem is NULL");
  assert_int_equal(api()->buffer_wrap_host(pc, 0, buf, 16, NULL, &err),
                   XRT_INVALID_ARGUMENT);
  api()->buffer_free(pc, 0, mem);
  api()->buffer_free(pc, 0, m2);
  api()->client_destroy(pc);
}

/* Region copies: bad arguments, a box leaving its array, and a box of
 * many elements per row (split in parts), checked against a reference. */
static void test_region_copy(void **state) {
  (void)state;
  /* four threads per device: big copies are split among them */
  xrt_plugin_client_args ca = tu_plugin_client_args(1, 1 << 24);
  ca.threads_per_device = 4;
  void *pc = NULL;
  xrt_plugin_error err;
  assert_int_equal(api()->client_create(&ca, &pc, &err), XRT_OK);
  enum { R = 4, C = 100000 }; /* the box: 3 rows of 400 KB */
  void *src = NULL, *dst = NULL;
  assert_int_equal(api()->buffer_alloc(pc, 0, (size_t)R * C * 4, &src, &err),
                   XRT_OK);
  assert_int_equal(api()->buffer_alloc(pc, 0, (size_t)R * C * 4, &dst, &err),
                   XRT_OK);
  int32_t *h = malloc((size_t)R * C * 4), *got = malloc((size_t)R * C * 4);
  assert_non_null(h);
  assert_non_null(got);
  for (int i = 0; i < R * C; i++) h[i] = i * 7 + 1;
  assert_int_equal(api()->buffer_write(pc, 0, src, h, (size_t)R * C * 4, &err),
                   XRT_OK);
  memset(got, 0, (size_t)R * C * 4);
  assert_int_equal(api()->buffer_write(pc, 0, dst, got, (size_t)R * C * 4,
                                       &err),
                   XRT_OK);
  int64_t dims[2] = {R, C}, sstart[2] = {1, 3}, dstart[2] = {0, 0},
          ext[2] = {3, C - 5};
  xrt_plugin_copy_region_args a;
  memset(&a, 0, sizeof a);
  a.struct_size = sizeof a;
  a.src = src;
  a.dst = dst;
  a.src_dims = a.dst_dims = dims;
  a.src_start = sstart;
  a.dst_start = dstart;
  a.extent = ext;
  a.rank = 2;
  a.elem_bytes = 4;
  xrt_plugin_copy_region_args b = a;
  b.extent = NULL;
  assert_int_equal(api()->buffer_copy_region(pc, &b, &err),
                   XRT_INVALID_ARGUMENT);
  TU_ASSERT_CONTAINS(err.message, "bad region copy arguments");
  b = a;
  b.elem_bytes = 0;
  assert_int_equal(api()->buffer_copy_region(pc, &b, &err),
                   XRT_INVALID_ARGUMENT);
  int64_t far[2] = {0, 6};
  b = a;
  b.dst_start = far; /* 6 + C - 5 > C */
  assert_int_equal(api()->buffer_copy_region(pc, &b, &err), XRT_OUT_OF_RANGE);
  TU_ASSERT_CONTAINS(err.message, "region copy: dimension 1 (extent 99995) "
                                  "leaves an array");
  b = a;
  b.rank = XRT_MAX_RANK + 1;
  assert_int_equal(api()->buffer_copy_region(pc, &b, &err),
                   XRT_INVALID_ARGUMENT);
  b = a;
  b.struct_size = 8;
  assert_int_equal(api()->buffer_copy_region(pc, &b, &err),
                   XRT_INVALID_ARGUMENT);
  /* an empty box copies nothing */
  int64_t none[2] = {0, C - 5};
  b = a;
  b.extent = none;
  assert_int_equal(api()->buffer_copy_region(pc, &b, &err), XRT_OK);
  assert_int_equal(api()->buffer_copy_region(pc, &a, &err), XRT_OK);
  assert_int_equal(api()->buffer_read(pc, 0, dst, got, (size_t)R * C * 4,
                                      &err),
                   XRT_OK);
  for (int r = 0; r < R; r++)
    for (int c = 0; c < C; c++) {
      int32_t want = r < 3 && c < C - 5 ? h[(r + 1) * C + c + 3] : 0;
      if (got[r * C + c] != want)
        fail_msg("[%d][%d] = %d, want %d", r, c, got[r * C + c], want);
    }
  free(h);
  free(got);
  api()->buffer_free(pc, 0, src);
  api()->buffer_free(pc, 0, dst);
  api()->client_destroy(pc);
}

TU_MAIN(NULL, NULL, cmocka_unit_test(test_platform_describe),
        cmocka_unit_test(test_op_support_arguments),
        cmocka_unit_test(test_op_support_types),
        cmocka_unit_test(test_op_support_synthetic),
        cmocka_unit_test(test_compile_arguments),
        cmocka_unit_test(test_execute_arguments),
        cmocka_unit_test(test_launch_of_one),
        cmocka_unit_test(test_reentered_device),
        cmocka_unit_test(test_trace_services),
        cmocka_unit_test(test_launch_join_errors),
        cmocka_unit_test(test_send_recv_mismatch),
        cmocka_unit_test(test_host_calls),
        cmocka_unit_test(test_recursive_call),
        cmocka_unit_test(test_client_arguments),
        cmocka_unit_test(test_memory_arguments),
        cmocka_unit_test(test_region_copy))
