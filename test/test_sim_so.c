/*
 * test_sim_so.c - the simulator built as a plugin library
 * ($(BUILD)/libxrt_sim.so) and the small test plugin
 * ($(BUILD)/libxrt_tiny.so, test/plugin_tiny.c), loaded through a context.
 *
 * The loaded simulator must compute exactly what the built-in one does;
 * two plugins live side by side in one context; op_support answers are
 * honest (a YES compiles, a NO fails to compile, at the same op); tiny is
 * exclusive.  Expected values come from reference loops written here.
 */
#include "test_util.h"

#include <dlfcn.h>
#include <stdint.h>

#ifndef XRT_TEST_PLUGIN_DIR
#define XRT_TEST_PLUGIN_DIR "build"
#endif
/* The libraries' file names (xrt_sim.dll and xrt_tiny.dll on Windows). */
#ifndef XRT_TEST_SIM_LIB
#define XRT_TEST_SIM_LIB "libxrt_sim.so"
#define XRT_TEST_TINY_LIB "libxrt_tiny.so"
#endif
#define SIM_SO XRT_TEST_PLUGIN_DIR "/" XRT_TEST_SIM_LIB
#define TINY_SO XRT_TEST_PLUGIN_DIR "/" XRT_TEST_TINY_LIB

/* ======================================================================
 * The libraries themselves (dlopen, no xrt context)
 * ==================================================================== */

/* The table a library's entry point returns; the handle stays open. */
static const xrt_plugin_api *open_table(const char *path, void **handle) {
  *handle = dlopen(path, RTLD_NOW | RTLD_LOCAL);
  if (!*handle) fail_msg("dlopen %s: %s", path, dlerror());
  xrt_plugin_get_api_fn get = NULL;
  *(void **)&get = dlsym(*handle, XRT_PLUGIN_ENTRY_SYMBOL);
  assert_non_null(get);
  const xrt_plugin_api *api = get();
  assert_non_null(api);
  return api;
}

/* Only the entry point is visible; the tables are ABI 1.0 and complete. */
static void test_libraries_export_only_the_entry(void **state) {
  (void)state;
  const char *paths[2] = {SIM_SO, TINY_SO}, *names[2] = {"sim", "tiny"};
  for (int i = 0; i < 2; i++) {
    void *h;
    const xrt_plugin_api *api = open_table(paths[i], &h);
    assert_string_equal(api->name, names[i]);
    assert_int_equal(api->abi_major, XRT_PLUGIN_ABI_MAJOR);
    assert_int_equal(api->abi_minor, XRT_PLUGIN_ABI_MINOR);
    assert_int_equal(api->struct_size, sizeof(xrt_plugin_api));
    assert_non_null(api->platform_describe);
    assert_non_null(api->op_support);
    /* hidden: the simulator's own names and anything of the core */
    assert_null(dlsym(h, "xrt_sim_plugin_api"));
    assert_null(dlsym(h, "xrt_compile"));
    assert_null(dlsym(h, "xrt_shape_format"));
    /* not the built-in table: the library has its own copy of the code */
    assert_ptr_not_equal(api, xrt_sim_plugin_api());
    dlclose(h);
  }
}

/* The platform description of a table, its struct first filled with the
 * byte fill (so what the plugin does not write shows). */
static xrt_plugin_platform_desc describe(const xrt_plugin_api *api, int fill) {
  xrt_plugin_platform_desc d;
  memset(&d, fill, sizeof d);
  d.struct_size = sizeof d;
  xrt_plugin_error err = {{0}};
  assert_int_equal(api->platform_describe(&d, &err), XRT_OK);
  return d;
}

static void test_sim_platform_description(void **state) {
  (void)state;
  void *h;
  const xrt_plugin_api *api = open_table(SIM_SO, &h);
  xrt_plugin_platform_desc d = describe(api, 0xA5);
  assert_int_equal(d.struct_size, sizeof d);
  assert_int_equal(d.capabilities,
                   XRT_CAP_ASYNC | XRT_CAP_MULTI_DEVICE | XRT_CAP_COLLECTIVES |
                       XRT_CAP_FAULT_INJECTION | XRT_CAP_HOST_MEMORY);
  assert_int_equal(d.dtypes, 0); /* every type */
  assert_string_equal(d.stablehlo_min, "0.9.0");
  /* the literal in the plugin is kept equal to the parser's version */
  assert_string_equal(d.stablehlo_max, xrt_stablehlo_version());
  assert_int_equal(d.num_attributes, 3);
  int seen = 0;
  for (int i = 0; i < d.num_attributes; i++) {
    const xrt_attribute *a = &d.attributes[i];
    if (strcmp(a->name, "max_devices") == 0) {
      assert_int_equal(a->type, XRT_ATTRIBUTE_INT);
      assert_int_equal(a->int_value, 1024);
      seen |= 1;
    } else if (strcmp(a->name, "simulated") == 0) {
      assert_int_equal(a->type, XRT_ATTRIBUTE_BOOL);
      assert_true(a->bool_value);
      seen |= 2;
    }
  }
  assert_int_equal(seen, 3);
  /* An older core's smaller struct: nothing past its end is written. */
  unsigned char buf[sizeof d];
  memset(buf, 0x5A, sizeof buf);
  xrt_plugin_platform_desc *old = (xrt_plugin_platform_desc *)buf;
  size_t cut = offsetof(xrt_plugin_platform_desc, capabilities);
  old->struct_size = cut;
  xrt_plugin_error err = {{0}};
  assert_int_equal(api->platform_describe(old, &err), XRT_OK);
  assert_int_equal(old->struct_size, cut);
  assert_string_equal(old->stablehlo_min, "0.9.0");
  for (size_t i = cut; i < sizeof buf; i++) assert_int_equal(buf[i], 0x5A);
  dlclose(h);
}

static void test_tiny_platform_description(void **state) {
  (void)state;
  void *h;
  const xrt_plugin_api *api = open_table(TINY_SO, &h);
  xrt_plugin_platform_desc d = describe(api, 0);
  assert_int_equal(d.capabilities, XRT_CAP_EXCLUSIVE | XRT_CAP_HOST_MEMORY);
  assert_int_equal(d.dtypes, (1ull << XRT_F32) | (1ull << XRT_S32));
  assert_string_equal(d.stablehlo_min, "1.0.0");
  assert_null(d.stablehlo_max);
  dlclose(h);
}

/* ======================================================================
 * op_support is honest: YES for a program exactly when it compiles
 * ==================================================================== */

/* One program per case; "want" is the verdict worked out by hand. */
typedef struct support_case {
  const char *what;
  const char *src;
  xrt_support sim, tiny;
} support_case;

static const support_case kCases[] = {
    {"add f32",
     "func.func @main(%a: tensor<4xf32>, %b: tensor<4xf32>) -> "
     "tensor<4xf32> {\n"
     "  %0 = stablehlo.add %a, %b : tensor<4xf32>\n"
     "  func.return %0 : tensor<4xf32>\n}\n",
     XRT_SUPPORT_YES, XRT_SUPPORT_YES},
    {"s32 chain with a constant",
     "func.func @main(%a: tensor<2x3xi32>) -> tensor<2x3xi32> {\n"
     "  %c = stablehlo.constant dense<7> : tensor<2x3xi32>\n"
     "  %0 = stablehlo.divide %a, %c : tensor<2x3xi32>\n"
     "  %1 = stablehlo.negate %0 : tensor<2x3xi32>\n"
     "  %2 = stablehlo.maximum %1, %a : tensor<2x3xi32>\n"
     "  func.return %2 : tensor<2x3xi32>\n}\n",
     XRT_SUPPORT_YES, XRT_SUPPORT_YES},
    {"add f64 (a type tiny lacks)",
     "func.func @main(%a: tensor<4xf64>) -> tensor<4xf64> {\n"
     "  %0 = stablehlo.add %a, %a : tensor<4xf64>\n"
     "  func.return %0 : tensor<4xf64>\n}\n",
     XRT_SUPPORT_YES, XRT_SUPPORT_NO},
    {"dot_general",
     "func.func @main(%a: tensor<2x3xf32>, %b: tensor<3x2xf32>) -> "
     "tensor<2x2xf32> {\n"
     "  %0 = stablehlo.dot_general %a, %b, contracting_dims = [1] x [0] : "
     "(tensor<2x3xf32>, tensor<3x2xf32>) -> tensor<2x2xf32>\n"
     "  func.return %0 : tensor<2x2xf32>\n}\n",
     XRT_SUPPORT_YES, XRT_SUPPORT_NO},
    {"reduce with a region",
     "func.func @main(%a: tensor<2x3xf32>) -> tensor<2xf32> {\n"
     "  %z = stablehlo.constant dense<0.0> : tensor<f32>\n"
     "  %0 = stablehlo.reduce(%a init: %z) applies stablehlo.add across "
     "dimensions = [1] : (tensor<2x3xf32>, tensor<f32>) -> tensor<2xf32>\n"
     "  func.return %0 : tensor<2xf32>\n}\n",
     XRT_SUPPORT_YES, XRT_SUPPORT_NO},
    {"cholesky, fft and exponential on complex",
     "func.func @main(%a: tensor<2x2xf32>, %x: tensor<4xcomplex<f32>>) -> "
     "(tensor<2x2xf32>, tensor<4xcomplex<f32>>) {\n"
     "  %0 = stablehlo.cholesky %a, lower = true : tensor<2x2xf32>\n"
     "  %1 = stablehlo.fft %x, type = FFT, length = [4] : "
     "(tensor<4xcomplex<f32>>) -> tensor<4xcomplex<f32>>\n"
     "  %2 = stablehlo.exponential %1 : tensor<4xcomplex<f32>>\n"
     "  func.return %0, %2 : tensor<2x2xf32>, tensor<4xcomplex<f32>>\n}\n",
     XRT_SUPPORT_YES, XRT_SUPPORT_NO},
    {"gather, iota, clamp, convert",
     "func.func @main(%a: tensor<3x2xf32>, %i: tensor<4xi32>) -> "
     "(tensor<4x2xf32>, tensor<5xf32>) {\n"
     "  %0 = \"stablehlo.gather\"(%a, %i) {dimension_numbers = "
     "#stablehlo.gather<offset_dims = [1], collapsed_slice_dims = [0], "
     "start_index_map = [0], index_vector_dim = 1>, slice_sizes = "
     "array<i64: 1, 2>} : (tensor<3x2xf32>, tensor<4xi32>) -> tensor<4x2xf32>\n"
     "  %1 = stablehlo.iota dim = 0 : tensor<5xi32>\n"
     "  %2 = stablehlo.convert %1 : (tensor<5xi32>) -> tensor<5xf32>\n"
     "  %lo = stablehlo.constant dense<1.0> : tensor<f32>\n"
     "  %hi = stablehlo.constant dense<3.0> : tensor<f32>\n"
     "  %3 = stablehlo.clamp %lo, %2, %hi : (tensor<f32>, tensor<5xf32>, "
     "tensor<f32>) -> tensor<5xf32>\n"
     "  func.return %0, %3 : tensor<4x2xf32>, tensor<5xf32>\n}\n",
     XRT_SUPPORT_YES, XRT_SUPPORT_NO},
    {"quantized dot_general, f8 add, batch_norm_inference",
     "func.func @main(%a: tensor<2x2x!quant.uniform<i8:f32, 0.5:1>>, "
     "%b: tensor<2x2x!quant.uniform<i8:f32, 2.0:0>>, %e: tensor<4xf8E4M3FN>, "
     "%x: tensor<2x3xf32>, %s: tensor<3xf32>) -> (tensor<2x2xf32>, "
     "tensor<4xf8E4M3FN>, tensor<2x3xf32>) {\n"
     "  %0 = stablehlo.dot_general %a, %b, contracting_dims = [1] x [0] : "
     "(tensor<2x2x!quant.uniform<i8:f32, 0.5:1>>, "
     "tensor<2x2x!quant.uniform<i8:f32, 2.0:0>>) -> "
     "tensor<2x2x!quant.uniform<i8:f32, 4.0:0>>\n"
     "  %1 = stablehlo.uniform_dequantize %0 : (tensor<2x2x!quant.uniform<"
     "i8:f32, 4.0:0>>) -> tensor<2x2xf32>\n"
     "  %2 = stablehlo.add %e, %e : tensor<4xf8E4M3FN>\n"
     "  %3 = \"stablehlo.batch_norm_inference\"(%x, %s, %s, %s, %s) "
     "{epsilon = 0.5 : f32, feature_index = 1 : i64} : (tensor<2x3xf32>, "
     "tensor<3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>) -> "
     "tensor<2x3xf32>\n"
     "  func.return %1, %2, %3 : tensor<2x2xf32>, tensor<4xf8E4M3FN>, "
     "tensor<2x3xf32>\n}\n",
     XRT_SUPPORT_YES, XRT_SUPPORT_NO},
    {"sort and while",
     "func.func @main(%a: tensor<5xi32>) -> (tensor<5xi32>, tensor<i32>) {\n"
     "  %r = \"stablehlo.sort\"(%a) ({\n"
     "  ^bb0(%x: tensor<i32>, %y: tensor<i32>):\n"
     "    %p = stablehlo.compare LT, %x, %y, SIGNED : (tensor<i32>, "
     "tensor<i32>) -> tensor<i1>\n"
     "    stablehlo.return %p : tensor<i1>\n"
     "  }) {dimension = 0 : i64, is_stable = true} : (tensor<5xi32>) -> "
     "tensor<5xi32>\n"
     "  %z = stablehlo.constant dense<0> : tensor<i32>\n"
     "  %w = stablehlo.while(%i = %z) : tensor<i32>\n"
     "  cond {\n"
     "    %n = stablehlo.constant dense<3> : tensor<i32>\n"
     "    %c = stablehlo.compare LT, %i, %n : (tensor<i32>, tensor<i32>) -> "
     "tensor<i1>\n"
     "    stablehlo.return %c : tensor<i1>\n"
     "  } do {\n"
     "    %o = stablehlo.constant dense<1> : tensor<i32>\n"
     "    %j = stablehlo.add %i, %o : tensor<i32>\n"
     "    stablehlo.return %j : tensor<i32>\n"
     "  }\n"
     "  func.return %r, %w : tensor<5xi32>, tensor<i32>\n}\n",
     XRT_SUPPORT_YES, XRT_SUPPORT_NO},
    {"custom_call of tensors",
     "func.func @main(%a: tensor<2xf32>) -> tensor<2xf32> {\n"
     "  %0 = stablehlo.custom_call @foo(%a) : (tensor<2xf32>) -> "
     "tensor<2xf32>\n"
     "  func.return %0 : tensor<2xf32>\n}\n",
     XRT_SUPPORT_YES, XRT_SUPPORT_NO},
    {"custom_call making a tuple (the simulator refuses)",
     "func.func private @f(%a: tensor<2xf32>) -> tensor<2xf32> {\n"
     "  %t = stablehlo.custom_call @foo(%a) : (tensor<2xf32>) -> "
     "tuple<tensor<2xf32>>\n"
     "  %0 = stablehlo.get_tuple_element %t[0] : (tuple<tensor<2xf32>>) -> "
     "tensor<2xf32>\n"
     "  func.return %0 : tensor<2xf32>\n}\n"
     "func.func @main(%a: tensor<2xf32>) -> tensor<2xf32> {\n"
     "  %0 = func.call @f(%a) : (tensor<2xf32>) -> tensor<2xf32>\n"
     "  func.return %0 : tensor<2xf32>\n}\n",
     XRT_SUPPORT_NO, XRT_SUPPORT_NO},
};

static xrt_status host_identity(void *user, xrt_host_call *call) {
  (void)user, (void)call;
  return XRT_OK;
}

/* Asks api->op_support about every op of function fi, its regions and the
 * functions it calls (depth-limited); the worst answer, and the first NO
 * op in *no_op. */
static int ask_region(const xrt_plugin_api *api, const xrt_ir_module *m,
                      int32_t fi, const xrt_ir_region *r, int depth,
                      const xrt_ir_op **no_op);
static int ask_func(const xrt_plugin_api *api, const xrt_ir_module *m,
                    int32_t fi, int depth, const xrt_ir_op **no_op) {
  return ask_region(api, m, fi, &m->funcs[fi].body, depth, no_op);
}
static int ask_region(const xrt_plugin_api *api, const xrt_ir_module *m,
                      int32_t fi, const xrt_ir_region *r, int depth,
                      const xrt_ir_op **no_op) {
  int worst = XRT_SUPPORT_YES;
  assert_true(depth < 8);
  for (int32_t i = 0; i < r->num_ops; i++) {
    const xrt_ir_op *op = &r->ops[i];
    xrt_plugin_error why = {{0}};
    int v = api->op_support(NULL, m, fi, op, &why);
    assert_true(v == XRT_SUPPORT_YES || v == XRT_SUPPORT_NO);
    if (v == XRT_SUPPORT_NO) {
      assert_true(why.message[0] != 0); /* a NO says why */
      if (!*no_op) *no_op = op;
    }
    if (v > worst) worst = v;
    for (int32_t k = 0; k < op->num_regions; k++) {
      int w = ask_region(api, m, fi, &op->regions[k], depth + 1, no_op);
      if (w > worst) worst = w;
    }
    if (op->code == XRT_OP_FUNC_CALL) {
      int w = ask_func(api, m, op->callee, depth + 1, no_op);
      if (w > worst) worst = w;
    }
  }
  return worst;
}

static int32_t main_index(const xrt_ir_module *m) {
  for (int32_t i = 0; i < m->num_funcs; i++)
    if (strcmp(m->funcs[i].name, "main") == 0) return i;
  fail_msg("no @main");
  return -1;
}

/* For every case and both tables of the simulator (built in, loaded):
 * the answer is the one worked out by hand, and it agrees with what the
 * built-in simulator's compile does: YES compiles, NO fails
 * (UNIMPLEMENTED) at the op the answer named. */
static void test_sim_op_support_matches_compile(void **state) {
  (void)state;
  void *h;
  const xrt_plugin_api *tables[2] = {xrt_sim_plugin_api(),
                                     open_table(SIM_SO, &h)};
  xrt_client *c = tu_client(1, 1, 0);
  assert_int_equal(xrt_client_register_host_function(c, "foo", host_identity,
                                                     NULL), XRT_OK);
  for (size_t k = 0; k < TU_COUNT(kCases); k++) {
    const support_case *sc = &kCases[k];
    xrt_program *p = NULL;
    if (xrt_program_parse(sc->src, strlen(sc->src), NULL, &p) != XRT_OK)
      fail_msg("%s: %s", sc->what, xrt_last_error());
    const xrt_ir_module *m = xrt_program_module(p);
    xrt_executable *e = NULL;
    xrt_status cs = xrt_compile_program(c, p, NULL, &e);
    char msg[2048];
    snprintf(msg, sizeof msg, "%s", cs ? xrt_last_error() : "");
    for (int t = 0; t < 2; t++) {
      const xrt_ir_op *no_op = NULL;
      int v = ask_func(tables[t], m, main_index(m), 0, &no_op);
      if (v != (int)sc->sim)
        fail_msg("%s: op_support says %d, want %d", sc->what, v, sc->sim);
      if (v == XRT_SUPPORT_YES && cs != XRT_OK)
        fail_msg("%s: YES, but compile failed: %s", sc->what, msg);
      if (v == XRT_SUPPORT_NO) {
        assert_int_equal(cs, XRT_UNIMPLEMENTED);
        char at[64];
        snprintf(at, sizeof at, ":%d:%d:", (int)no_op->loc.line,
                 (int)no_op->loc.col);
        TU_ASSERT_CONTAINS(msg, at);
      }
    }
    xrt_executable_release(e);
    xrt_program_release(p);
  }
  xrt_client_release(c);
  dlclose(h);
}


/* The same for tiny, through its own table: its answer is the one worked
 * out by hand, and its compile succeeds exactly on a YES (else fails at the
 * op the answer named). */
static void test_tiny_op_support_matches_compile(void **state) {
  (void)state;
  void *h;
  const xrt_plugin_api *api = open_table(TINY_SO, &h);
  xrt_plugin_client_args a;
  memset(&a, 0, sizeof a);
  a.struct_size = sizeof a;
  a.num_devices = 1;
  a.device_memory_bytes = 1 << 20;
  a.allocator.alloc = tu_alloc;
  a.allocator.free = tu_free;
  void *client = NULL;
  xrt_plugin_error err = {{0}};
  assert_int_equal(api->client_create(&a, &client, &err), XRT_OK);
  for (size_t k = 0; k < TU_COUNT(kCases); k++) {
    const support_case *sc = &kCases[k];
    xrt_program *p = NULL;
    assert_int_equal(xrt_program_parse(sc->src, strlen(sc->src), NULL, &p),
                     XRT_OK);
    const xrt_ir_module *m = xrt_program_module(p);
    const xrt_ir_op *no_op = NULL;
    int v = ask_func(api, m, main_index(m), 0, &no_op);
    if (v != (int)sc->tiny)
      fail_msg("%s: tiny's op_support says %d, want %d", sc->what, v,
               sc->tiny);
    xrt_plugin_compile_args ca;
    memset(&ca, 0, sizeof ca);
    ca.struct_size = sizeof ca;
    ca.module = m;
    ca.entry = main_index(m);
    ca.num_replicas = ca.num_partitions = 1;
    void *exe = NULL;
    err.message[0] = 0;
    xrt_status cs = api->compile(client, &ca, &exe, &err);
    if (v == XRT_SUPPORT_YES) {
      if (cs != XRT_OK) fail_msg("%s: YES, but: %s", sc->what, err.message);
      api->executable_destroy(exe);
    } else {
      assert_int_equal(cs, XRT_UNIMPLEMENTED);
      char at[64];
      snprintf(at, sizeof at, ":%d:%d:", (int)no_op->loc.line,
               (int)no_op->loc.col);
      TU_ASSERT_CONTAINS(err.message, at);
    }
    xrt_program_release(p);
  }
  api->client_destroy(client);
  dlclose(h);
}

/* ======================================================================
 * Through a context: the loaded simulator, tiny beside it
 * ==================================================================== */

/* A context with no built-in plugins, no XRT_PLUGINS, and these loaded. */
static xrt_context *context_with(int load_sim, int load_tiny) {
  xrt_context *ctx = tu_context(false);
  if (load_sim && xrt_context_load_plugin(ctx, "sim", SIM_SO, NULL) != XRT_OK)
    fail_msg("load %s: %s", SIM_SO, xrt_last_error());
  if (load_tiny &&
      xrt_context_load_plugin(ctx, "tiny", TINY_SO, NULL) != XRT_OK)
    fail_msg("load %s: %s", TINY_SO, xrt_last_error());
  return ctx;
}

static void test_context_holds_only_what_was_loaded(void **state) {
  (void)state;
  xrt_context *ctx = context_with(1, 1);
  assert_int_equal(xrt_context_plugin_count(ctx), 2);
  xrt_plugin_info si, ti;
  assert_int_equal(xrt_plugin_get_info(xrt_context_find_plugin(ctx, "sim"),
                                       &si), XRT_OK);
  assert_int_equal(xrt_plugin_get_info(xrt_context_find_plugin(ctx, "tiny"),
                                       &ti), XRT_OK);
  assert_string_equal(si.platform_name, "sim");
  assert_string_equal(ti.platform_name, "tiny");
  assert_int_equal(si.capabilities,
                   XRT_CAP_ASYNC | XRT_CAP_MULTI_DEVICE | XRT_CAP_COLLECTIVES |
                       XRT_CAP_FAULT_INJECTION | XRT_CAP_HOST_MEMORY);
  assert_int_equal(ti.capabilities, XRT_CAP_EXCLUSIVE | XRT_CAP_HOST_MEMORY);
  assert_int_equal(ti.dtypes, (1ull << XRT_F32) | (1ull << XRT_S32));
  assert_string_equal(si.stablehlo_max, xrt_stablehlo_version());
  assert_non_null(strstr(si.path, XRT_TEST_SIM_LIB));
  /* not registered: no built-in "sim" behind the loaded one */
  assert_null(xrt_context_find_plugin(ctx, "nope"));
  assert_int_equal(xrt_context_release(ctx), XRT_OK);
}

/* Compiles src on client c (device count ndev, launch of ndev replicas),
 * uploads per device the inputs in[d][0..nin), runs and downloads output
 * 0 of every device into out[d] (nbytes each). */
static void run_on(xrt_client *c, const char *src, int ndev, int nin,
                   const xrt_shape *shapes, const void *const *in,
                   void *const *out, size_t nbytes) {
  xrt_compile_options co;
  xrt_compile_options_init(&co);
  co.num_replicas = ndev;
  xrt_executable *e = NULL;
  if (xrt_compile(c, src, strlen(src), &co, &e) != XRT_OK)
    fail_msg("compile: %s", xrt_last_error());
  xrt_buffer *args[4][4] = {{NULL}}, *outs[4][1] = {{NULL}};
  xrt_buffer *const *lists[4];
  xrt_buffer **olists[4];
  for (int d = 0; d < ndev; d++) {
    for (int i = 0; i < nin; i++)
      assert_int_equal(xrt_buffer_from_host(c, xrt_client_device(c, d),
                                            &shapes[i], in[d * nin + i],
                                            &args[d][i]), XRT_OK);
    lists[d] = args[d];
    olists[d] = outs[d];
  }
  xrt_event *done = NULL;
  if (xrt_execute_multi(e, lists, ndev, nin, olists, 1, NULL, &done) != XRT_OK)
    fail_msg("execute: %s", xrt_last_error());
  assert_int_equal(xrt_event_await(done), XRT_OK);
  xrt_event_release(done);
  for (int d = 0; d < ndev; d++) {
    assert_int_equal(xrt_buffer_bytes(outs[d][0]), nbytes);
    assert_int_equal(xrt_buffer_to_host(outs[d][0], out[d], nbytes), XRT_OK);
    xrt_buffer_release(outs[d][0]);
    for (int i = 0; i < nin; i++) xrt_buffer_release(args[d][i]);
  }
  xrt_executable_release(e);
}

static const char kEw[] =
    "func.func @main(%a: tensor<2x3xf32>, %b: tensor<2x3xf32>) -> "
    "tensor<2x3xf32> {\n"
    "  %0 = stablehlo.multiply %a, %b : tensor<2x3xf32>\n"
    "  %1 = stablehlo.subtract %0, %a : tensor<2x3xf32>\n"
    "  %2 = stablehlo.sqrt %1 : tensor<2x3xf32>\n"
    "  func.return %2 : tensor<2x3xf32>\n}\n";

static const char kMatmul[] =
    "func.func @main(%a: tensor<2x3xf32>, %b: tensor<3x2xf32>) -> "
    "tensor<2x2xf32> {\n"
    "  %0 = stablehlo.dot_general %a, %b, contracting_dims = [1] x [0] : "
    "(tensor<2x3xf32>, tensor<3x2xf32>) -> tensor<2x2xf32>\n"
    "  func.return %0 : tensor<2x2xf32>\n}\n";

static const char kAllReduce[] =
    "func.func @main(%a: tensor<5xf32>) -> tensor<5xf32> {\n"
    "  %r = \"stablehlo.all_reduce\"(%a) ({\n"
    "  ^bb0(%x: tensor<f32>, %y: tensor<f32>):\n"
    "    %s = stablehlo.add %x, %y : tensor<f32>\n"
    "    stablehlo.return %s : tensor<f32>\n"
    "  }) {replica_groups = dense<[[0, 1]]> : tensor<1x2xi64>} : "
    "(tensor<5xf32>) -> tensor<5xf32>\n"
    "  func.return %r : tensor<5xf32>\n}\n";

/* The loaded simulator computes bit for bit what the built-in one does,
 * and both what the reference loops say. */
static void test_loaded_sim_matches_builtin(void **state) {
  (void)state;
  xrt_context *ctx = context_with(1, 0);
  xrt_client *loaded = tu_client_of(ctx, "sim", 2);
  xrt_client *builtin = tu_client(2, 1, 0);
  assert_string_equal(xrt_client_platform(loaded), "sim");

  /* elementwise: sqrt(a * b - a) */
  float a[6] = {1, 2, 3, 4, 5, 6}, b[6] = {2, 3, 5, 7, 11, 13};
  float want[6], got[2][6];
  for (int i = 0; i < 6; i++) want[i] = sqrtf(a[i] * b[i] - a[i]);
  xrt_shape s23 = TU_SHAPE(XRT_F32, 2, 3), s32 = TU_SHAPE(XRT_F32, 3, 2);
  const void *in_ew[2] = {a, b};
  xrt_client *cs[2] = {loaded, builtin};
  for (int k = 0; k < 2; k++) {
    void *o[1] = {got[k]};
    run_on(cs[k], kEw, 1, 2, (xrt_shape[]){s23, s23}, in_ew, o, sizeof got[k]);
  }
  assert_memory_equal(got[0], got[1], sizeof got[0]);
  for (int i = 0; i < 6; i++) assert_float_equal(got[0][i], want[i], 1e-6);

  /* dot_general: a (2x3) x m (3x2) */
  float m[6] = {1, -1, 0.5f, 2, -3, 4}, mm[2][4], mwant[4];
  for (int i = 0; i < 2; i++)
    for (int j = 0; j < 2; j++) {
      double acc = 0;
      for (int k = 0; k < 3; k++) acc += (double)a[i * 3 + k] * m[k * 2 + j];
      mwant[i * 2 + j] = (float)acc;
    }
  const void *in_mm[2] = {a, m};
  for (int k = 0; k < 2; k++) {
    void *o[1] = {mm[k]};
    run_on(cs[k], kMatmul, 1, 2, (xrt_shape[]){s23, s32}, in_mm, o,
           sizeof mm[k]);
  }
  assert_memory_equal(mm[0], mm[1], sizeof mm[0]);
  for (int i = 0; i < 4; i++) assert_float_equal(mm[0][i], mwant[i], 1e-5);

  /* all_reduce over the loaded simulator's two devices */
  float x[2][5] = {{1, 2, 3, 4, 5}, {0.5f, -2, 10, 0, 1e3f}};
  float ar[2][2][5];
  xrt_shape s5 = TU_SHAPE(XRT_F32, 5);
  const void *in_ar[2] = {x[0], x[1]};
  for (int k = 0; k < 2; k++) {
    void *o[2] = {ar[k][0], ar[k][1]};
    run_on(cs[k], kAllReduce, 2, 1, &s5, in_ar, o, sizeof ar[k][0]);
  }
  assert_memory_equal(ar[0], ar[1], sizeof ar[0]);
  for (int d = 0; d < 2; d++)
    for (int i = 0; i < 5; i++)
      assert_float_equal(ar[0][d][i], x[0][i] + x[1][i], 0);

  xrt_client_release(builtin);
  xrt_client_release(loaded);
  assert_int_equal(xrt_context_release(ctx), XRT_OK);
}

/* Runs src on the one device of c with f32/s32 inputs of shape s. */
static void run1(xrt_client *c, const char *src, int nin, const xrt_shape *s,
                 const void *const *in, void *out, size_t nbytes) {
  xrt_shape shapes[4];
  for (int i = 0; i < nin; i++) shapes[i] = *s;
  void *o[1] = {out};
  run_on(c, src, 1, nin, shapes, in, o, nbytes);
}

static const char kTinyS32[] =
    "func.func @main(%a: tensor<6xi32>, %b: tensor<6xi32>) -> tensor<6xi32> {\n"
    "  %0 = stablehlo.divide %a, %b : tensor<6xi32>\n"
    "  %1 = stablehlo.abs %0 : tensor<6xi32>\n"
    "  %2 = stablehlo.minimum %1, %b : tensor<6xi32>\n"
    "  func.return %2 : tensor<6xi32>\n}\n";

static const char kTinyF32[] =
    "func.func @main(%a: tensor<4xf32>, %b: tensor<4xf32>) -> tensor<4xf32> {\n"
    "  %c = stablehlo.constant dense<[1.5, -2.0, 0.0, 4.0]> : tensor<4xf32>\n"
    "  %0 = stablehlo.add %a, %c : tensor<4xf32>\n"
    "  %1 = stablehlo.maximum %0, %b : tensor<4xf32>\n"
    "  %2 = stablehlo.negate %1 : tensor<4xf32>\n"
    "  func.return %2 : tensor<4xf32>\n}\n";

/* Clients of both plugins alive at once, data moved between them through
 * the host; tiny's arithmetic as XLA defines it (x / 0 = -1, MIN / -1 =
 * MIN, NaN-propagating maximum), the same as the simulator's. */
static void test_two_plugins_side_by_side(void **state) {
  (void)state;
  xrt_context *ctx = context_with(1, 1);
  xrt_client *sim = tu_client_of(ctx, "sim", 1);
  xrt_client *tiny = tu_client_of(ctx, "tiny", 1);
  assert_string_equal(xrt_device_kind(xrt_client_device(tiny, 0)), "tiny");

  int32_t a[6] = {7, -7, INT32_MIN, 100, 5, -9};
  int32_t b[6] = {2, 2, -1, 0, -3, 4};
  int32_t want[6], got_t[6], got_s[6];
  for (int i = 0; i < 6; i++) {
    int64_t q = b[i] == 0 ? -1
                : (a[i] == INT32_MIN && b[i] == -1) ? INT32_MIN
                                                     : a[i] / b[i];
    int64_t ab = q < 0 ? -q : q;
    if (ab > INT32_MAX) ab = INT32_MIN; /* |MIN| wraps to MIN */
    want[i] = (int32_t)(ab < b[i] ? ab : b[i]);
  }
  xrt_shape s6 = TU_SHAPE(XRT_S32, 6);
  const void *in[2] = {a, b};
  run1(tiny, kTinyS32, 2, &s6, in, got_t, sizeof got_t);
  run1(sim, kTinyS32, 2, &s6, in, got_s, sizeof got_s);
  assert_memory_equal(got_t, want, sizeof want);
  assert_memory_equal(got_s, want, sizeof want);

  /* tiny's result, through the host, into the simulator and back */
  float x[4] = {1, 2, 3, 4}, y[4] = {0, 10, NAN, -1}, ft[4], fs[4];
  xrt_shape s4 = TU_SHAPE(XRT_F32, 4);
  const void *fin[2] = {x, y};
  run1(tiny, kTinyF32, 2, &s4, fin, ft, sizeof ft);
  const float c[4] = {1.5f, -2, 0, 4};
  for (int i = 0; i < 4; i++) {
    float s = x[i] + c[i];
    float w = isnan(y[i]) ? NAN : -(s > y[i] ? s : y[i]);
    if (isnan(w)) assert_true(isnan(ft[i]));
    else assert_float_equal(ft[i], w, 0);
  }
  const void *fin2[2] = {ft, x};
  run1(sim, kTinyF32, 2, &s4, fin2, fs, sizeof fs);
  for (int i = 0; i < 4; i++) {
    float s = ft[i] + c[i];
    float w = isnan(s) || isnan(x[i]) ? NAN : -(s > x[i] ? s : x[i]);
    if (isnan(w)) assert_true(isnan(fs[i]));
    else assert_float_equal(fs[i], w, 0);
  }
  xrt_client_release(tiny);
  xrt_client_release(sim);
  assert_int_equal(xrt_context_release(ctx), XRT_OK);
}

/* The 1-based line and column where needle starts in text. */
static void find_loc(const char *text, const char *needle, int *line,
                     int *col) {
  const char *p = strstr(text, needle);
  assert_non_null(p);
  *line = 1;
  const char *bol = text;
  for (const char *q = text; q < p; q++)
    if (*q == '\n') (*line)++, bol = q + 1;
  *col = (int)(p - bol) + 1;
}

static xrt_support_report *query(xrt_client *c, const char *src) {
  xrt_program *p = NULL;
  assert_int_equal(xrt_program_parse(src, strlen(src), NULL, &p), XRT_OK);
  xrt_support_report *r = NULL;
  if (xrt_client_query_support(c, p, NULL, &r) != XRT_OK)
    fail_msg("query: %s", xrt_last_error());
  xrt_program_release(p);
  return r;
}

static void test_query_support_is_honest(void **state) {
  (void)state;
  xrt_context *ctx = context_with(1, 1);
  xrt_client *sim = tu_client_of(ctx, "sim", 1);
  xrt_client *tiny = tu_client_of(ctx, "tiny", 1);
  const char *add = kCases[0].src;

  xrt_support_report *r = query(tiny, add);
  assert_int_equal(xrt_support_report_verdict(r), XRT_SUPPORT_YES);
  assert_int_equal(xrt_support_report_count(r), 0);
  xrt_support_report_release(r);

  r = query(tiny, kMatmul);
  assert_int_equal(xrt_support_report_verdict(r), XRT_SUPPORT_NO);
  assert_int_equal(xrt_support_report_count(r), 1);
  const xrt_support_issue *is = xrt_support_report_issue(r, 0);
  int line, col;
  find_loc(kMatmul, "stablehlo.dot_general", &line, &col);
  assert_string_equal(is->op, "stablehlo.dot_general");
  assert_int_equal(is->line, line);
  assert_int_equal(is->col, col);
  assert_int_equal(is->verdict, XRT_SUPPORT_NO);
  TU_ASSERT_CONTAINS(is->reason, "not supported by tiny");
  xrt_support_report_release(r);
  /* ... and tiny's compile refuses it at the same place */
  xrt_executable *e = NULL;
  assert_int_equal(xrt_compile(tiny, kMatmul, strlen(kMatmul), NULL, &e),
                   XRT_UNIMPLEMENTED);
  char at[32];
  snprintf(at, sizeof at, ":%d:%d:", line, col);
  TU_ASSERT_CONTAINS(xrt_last_error(), at);

  const char *srcs[2] = {add, kMatmul};
  for (int i = 0; i < 2; i++) {
    r = query(sim, srcs[i]);
    assert_int_equal(xrt_support_report_verdict(r), XRT_SUPPORT_YES);
    assert_int_equal(xrt_support_report_count(r), 0);
    xrt_support_report_release(r);
  }
  xrt_client_release(tiny);
  xrt_client_release(sim);
  assert_int_equal(xrt_context_release(ctx), XRT_OK);
}

/* A second client of the exclusive tiny device fails, the first keeps
 * working, and after its release the device can be taken again. */
static void test_tiny_is_exclusive(void **state) {
  (void)state;
  xrt_context *ctx = context_with(0, 1);
  xrt_client *first = tu_client_of(ctx, "tiny", 1);
  xrt_client_options o = tu_client_options(ctx, "tiny", 0);
  xrt_client *second = NULL;
  assert_int_equal(xrt_client_create(&o, &second), XRT_FAILED_PRECONDITION);
  assert_null(second);
  TU_ASSERT_CONTAINS(xrt_last_error(), "tiny");
  /* tiny has one device and says so */
  o.num_devices = 2;
  xrt_client_release(first);
  assert_int_not_equal(xrt_client_create(&o, &second), XRT_OK);
  assert_null(second);
  o.num_devices = 1;
  assert_int_equal(xrt_client_create(&o, &second), XRT_OK);
  int32_t v[6] = {1, 2, 3, 4, 5, 6}, w[6] = {1, 1, 1, 1, 1, 1}, got[6];
  xrt_shape s6 = TU_SHAPE(XRT_S32, 6);
  const void *in[2] = {v, w};
  run1(second, kTinyS32, 2, &s6, in, got, sizeof got);
  for (int i = 0; i < 6; i++) assert_int_equal(got[i], 1); /* min(|v|, 1) */
  xrt_client_release(second);
  assert_int_equal(xrt_context_release(ctx), XRT_OK);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_libraries_export_only_the_entry),
      cmocka_unit_test(test_sim_platform_description),
      cmocka_unit_test(test_tiny_platform_description),
      cmocka_unit_test(test_sim_op_support_matches_compile),
      cmocka_unit_test(test_tiny_op_support_matches_compile),
      cmocka_unit_test(test_context_holds_only_what_was_loaded),
      cmocka_unit_test(test_loaded_sim_matches_builtin),
      cmocka_unit_test(test_two_plugins_side_by_side),
      cmocka_unit_test(test_query_support_is_honest),
      cmocka_unit_test(test_tiny_is_exclusive),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
