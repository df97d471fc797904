/*
 * test_pjrt_adapter.c - PJRT plugins as xrt plugins (src/pjrt, xrt_pjrt.c).
 *
 * Against test/plugins/fake_pjrt.c (a small PJRT plugin on host memory
 * that adds f32 arrays): loading by path and through XRT_PLUGINS, the
 * platform and device descriptions, transfers, compile, one-device and
 * replicated launches, device-to-device copies, and every misbehaviour
 * the fake can be told to show (FAKE_PJRT_MODE): the exact status and a
 * message naming the plugin and the PJRT function.  Against libxrt_pjrt.so
 * (xrt's simulator as a PJRT plugin), when it was built: the round trip
 * xrt -> adapter -> PJRT -> xrt, with collectives, and the time of a
 * dispatch.
 */
#if !defined(_POSIX_C_SOURCE) || _POSIX_C_SOURCE < 200809L
#undef _POSIX_C_SOURCE
#define _POSIX_C_SOURCE 200809L /* setenv, clock_gettime */
#endif
#include "test_util.h"

#include <dlfcn.h>
#include <time.h>
#include <unistd.h>

#ifndef XRT_TEST_FAKE_DIR
#define XRT_TEST_FAKE_DIR "build/plugins"
#endif
#ifndef XRT_TEST_PJRT_SO
#define XRT_TEST_PJRT_SO "build/libxrt_pjrt.so"
#endif

#define FAKE_PJRT XRT_TEST_FAKE_DIR "/fake_pjrt.so"
#define FAKE_NOSYM XRT_TEST_FAKE_DIR "/fake_nosym.so"

static const char *add_src =
    "func.func @main(%a: tensor<4xf32>, %b: tensor<4xf32>) -> tensor<4xf32> {\n"
    "  %0 = stablehlo.add %a, %b : tensor<4xf32>\n"
    "  func.return %0 : tensor<4xf32>\n"
    "}\n";

/* Asserts a failure with code whose message contains every string of a
 * NULL-terminated list. */
static void expect_fail(xrt_status got, xrt_status want, ...) {
  tu_save_error();
  if (got != want)
    fail_msg("status %s, want %s (%s)", xrt_strerror(got), xrt_strerror(want),
             tu_msg);
  va_list ap;
  va_start(ap, want);
  for (const char *s; (s = va_arg(ap, const char *));)
    TU_ASSERT_CONTAINS(tu_msg, s);
  va_end(ap);
}

static void set_mode(const char *m) {
  if (m) assert_int_equal(setenv("FAKE_PJRT_MODE", m, 1), 0);
  else assert_int_equal(unsetenv("FAKE_PJRT_MODE"), 0);
}

static xrt_plugin *load(xrt_context *x, const char *name, const char *path) {
  xrt_plugin *p = NULL;
  xrt_status s = xrt_context_load_plugin(x, name, path, &p);
  if (s) fail_msg("loading %s: %s", path, xrt_last_error());
  return p;
}

static xrt_status try_client(xrt_context *x, const char *plugin, int ndev,
                             xrt_client **out) {
  xrt_client_options o = tu_client_options(x, plugin, ndev);
  *out = NULL;
  return xrt_client_create(&o, out);
}

static xrt_buffer *upload4(xrt_client *c, int dev, const float *v) {
  xrt_shape s = TU_SHAPE(XRT_F32, 4);
  xrt_buffer *b = NULL;
  if (xrt_buffer_from_host(c, xrt_client_device(c, dev), &s, v, &b))
    fail_msg("upload: %s", xrt_last_error());
  return b;
}

static void expect4(xrt_buffer *b, const float *want) {
  float got[4];
  if (xrt_buffer_to_host(b, got, sizeof got))
    fail_msg("download: %s", xrt_last_error());
  for (int i = 0; i < 4; i++)
    if (got[i] != want[i])
      fail_msg("element %d: %g, want %g", i, (double)got[i], (double)want[i]);
}

/* Runs exe on dev with a and b; checks a + b. */
static void add_on(xrt_client *c, xrt_executable *exe, int dev,
                   const float *a, const float *b) {
  xrt_buffer *args[2] = {upload4(c, dev, a), upload4(c, dev, b)}, *out = NULL;
  if (xrt_execute(exe, xrt_client_device(c, dev), args, 2, &out, 1, NULL))
    fail_msg("execute on %d: %s", dev, xrt_last_error());
  float want[4];
  for (int i = 0; i < 4; i++) want[i] = a[i] + b[i];
  expect4(out, want);
  /* Run again on the output (a PJRT buffer now) and a staged input. */
  xrt_buffer *args2[2] = {out, args[1]}, *out2 = NULL;
  if (xrt_execute(exe, xrt_client_device(c, dev), args2, 2, &out2, 1, NULL))
    fail_msg("execute again on %d: %s", dev, xrt_last_error());
  for (int i = 0; i < 4; i++) want[i] += b[i];
  expect4(out2, want);
  xrt_buffer_release(args[0]);
  xrt_buffer_release(args[1]);
  xrt_buffer_release(out);
  xrt_buffer_release(out2);
}

static void find_attr(const xrt_plugin_info *info, const char *name,
                      xrt_attribute *out) {
  for (int i = 0; i < info->num_attributes; i++)
    if (!strcmp(info->attributes[i].name, name)) {
      *out = info->attributes[i];
      return;
    }
  fail_msg("no platform attribute %s", name);
}

/* ---- the fake, well-behaved ---- */

static void test_describe(void **state) {
  (void)state;
  set_mode(NULL);
  xrt_context *x = tu_context(false);
  xrt_plugin *p = load(x, NULL, FAKE_PJRT);
  xrt_plugin_info info;
  assert_int_equal(xrt_plugin_get_info(p, &info), XRT_OK);
  assert_string_equal(info.name, "fake_pjrt"); /* from the file name */
  assert_string_equal(info.platform_name, "fake_pjrt");
  assert_string_equal(info.stablehlo_min, "0.9.0");
  assert_string_equal(info.stablehlo_max, "1.99.0");
  assert_true(info.capabilities & XRT_CAP_LAUNCH_TOGETHER);
  assert_true(info.capabilities & XRT_CAP_COLLECTIVES);
  assert_true(info.dtypes & (1ull << XRT_F32));
  assert_false(info.dtypes & (1ull << XRT_F4E2M1FN));
  xrt_attribute a;
  find_attr(&info, "fake_string", &a);
  assert_int_equal(a.type, XRT_ATTRIBUTE_STRING);
  assert_string_equal(a.string_value, "hello");
  find_attr(&info, "fake_int", &a);
  assert_int_equal(a.type, XRT_ATTRIBUTE_INT);
  assert_int_equal(a.int_value, -7);
  find_attr(&info, "fake_float", &a);
  assert_int_equal(a.type, XRT_ATTRIBUTE_FLOAT);
  assert_true(a.float_value == 0.5);
  find_attr(&info, "fake_bool", &a);
  assert_int_equal(a.type, XRT_ATTRIBUTE_BOOL);
  assert_true(a.bool_value);
  find_attr(&info, "fake_list", &a);
  assert_string_equal(a.string_value, "[1, -2, 3]");

  xrt_client *c = tu_client_of(x, "fake_pjrt", 3);
  assert_int_equal(xrt_client_device_count(c), 3);
  for (int d = 0; d < 3; d++) {
    xrt_device *dev = xrt_client_device(c, d);
    assert_string_equal(xrt_device_kind(dev), "fake_pjrt_device");
    assert_int_equal(xrt_device_attribute_find(dev, "core", &a), XRT_OK);
    assert_int_equal(a.int_value, d);
  }
  xrt_client_release(c);
  assert_int_equal(xrt_context_release(x), XRT_OK);
}

/* Upload, compile, execute on each device (a portable executable),
 * download; device-to-device copies of staged and computed buffers. */
static void test_round_trip(void **state) {
  (void)state;
  set_mode(NULL);
  xrt_context *x = tu_context(false);
  load(x, "fp", FAKE_PJRT);
  xrt_client *c = tu_client_of(x, "fp", 2);
  xrt_executable *exe = tu_compile(c, add_src, 0, NULL);
  const float a[4] = {1, 2, 3, 4}, b[4] = {10, 20, 30, 40};
  add_on(c, exe, 0, a, b);
  add_on(c, exe, 1, b, a);

  xrt_buffer *ba = upload4(c, 0, a), *bb = upload4(c, 0, b), *out = NULL;
  xrt_buffer *staged = NULL, *computed = NULL;
  /* A staged buffer copies through the host. */
  assert_int_equal(xrt_buffer_copy_to_device(ba, xrt_client_device(c, 1),
                                             &staged), XRT_OK);
  expect4(staged, a);
  xrt_buffer *args[2] = {ba, bb};
  assert_int_equal(xrt_execute(exe, xrt_client_device(c, 0), args, 2, &out, 1,
                               NULL), XRT_OK);
  /* A PJRT buffer copies with PJRT_Buffer_CopyToDevice. */
  assert_int_equal(xrt_buffer_copy_to_device(out, xrt_client_device(c, 1),
                                             &computed), XRT_OK);
  const float sum[4] = {11, 22, 33, 44};
  expect4(computed, sum);
  xrt_buffer *args1[2] = {staged, computed}, *out1 = NULL;
  assert_int_equal(xrt_execute(exe, xrt_client_device(c, 1), args1, 2, &out1,
                               1, NULL), XRT_OK);
  const float want[4] = {12, 24, 36, 48};
  expect4(out1, want);
  xrt_client_release(c); /* frees the buffers and the executable */
  assert_int_equal(xrt_context_release(x), XRT_OK);
}

/* A launch of four (replicas x partitions): one PJRT call with four
 * argument lists, which the fake orders in reverse (its executable's
 * addressable devices). */
static void replicated(int replicas, int partitions) {
  set_mode(NULL);
  xrt_context *x = tu_context(false);
  load(x, "fp", FAKE_PJRT);
  xrt_client *c = tu_client_of(x, "fp", 4);
  xrt_compile_options o;
  xrt_compile_options_init(&o);
  o.num_replicas = replicas;
  o.num_partitions = partitions;
  const int assign[4] = {2, 0, 3, 1};
  o.device_assignment = assign;
  xrt_executable *exe = NULL;
  if (xrt_compile(c, add_src, strlen(add_src), &o, &exe))
    fail_msg("compile: %s", xrt_last_error());
  for (int round = 0; round < 3; round++) {
    xrt_buffer *in[4][2], *outs[4][1];
    xrt_buffer *const *lists[4];
    xrt_buffer **olists[4];
    float a[4][4], b[4][4];
    for (int r = 0; r < 4; r++) {
      for (int i = 0; i < 4; i++) {
        a[r][i] = (float)(100 * r + i + round);
        b[r][i] = (float)(r - i);
      }
      in[r][0] = upload4(c, assign[r], a[r]);
      in[r][1] = upload4(c, assign[r], b[r]);
      lists[r] = in[r];
      olists[r] = outs[r];
    }
    xrt_event *done = NULL;
    if (xrt_execute_multi(exe, lists, 4, 2, olists, 1, NULL, &done))
      fail_msg("execute_multi: %s", xrt_last_error());
    if (xrt_event_await(done)) fail_msg("launch: %s", xrt_last_error());
    xrt_event_release(done);
    for (int r = 0; r < 4; r++) {
      float want[4];
      for (int i = 0; i < 4; i++) want[i] = a[r][i] + b[r][i];
      expect4(outs[r][0], want);
      assert_ptr_equal(xrt_buffer_device(outs[r][0]),
                       xrt_client_device(c, assign[r]));
      xrt_buffer_release(outs[r][0]);
      xrt_buffer_release(in[r][0]);
      xrt_buffer_release(in[r][1]);
    }
  }
  xrt_client_release(c);
  assert_int_equal(xrt_context_release(x), XRT_OK);
}

static void test_replicated(void **state) {
  (void)state;
  replicated(4, 1);
  replicated(2, 2); /* the assignment's computations are partitions */
  replicated(1, 4);
}

/* XRT_PLUGINS names a PJRT library like any other. */
static void test_env(void **state) {
  (void)state;
  set_mode(NULL);
  xrt_context *x = tu_context(false);
  assert_int_equal(xrt_context_load_env(x, "penv:" FAKE_PJRT), XRT_OK);
  assert_non_null(xrt_context_find_plugin(x, "penv"));
  xrt_client *c = tu_client_of(x, "penv", 1);
  xrt_executable *exe = tu_compile(c, add_src, 0, NULL);
  const float a[4] = {0.5f, -1, 1e30f, 7}, b[4] = {0.25f, 1, 1e30f, -7};
  add_on(c, exe, 0, a, b);
  xrt_client_release(c);
  assert_int_equal(xrt_context_release(x), XRT_OK);

  assert_int_equal(setenv("XRT_PLUGINS", "penv2:" FAKE_PJRT, 1), 0);
  xrt_context_options co;
  xrt_context_options_init(&co);
  co.builtin_plugins = false;
  assert_int_equal(xrt_context_create(&co, &x), XRT_OK);
  assert_int_equal(unsetenv("XRT_PLUGINS"), 0);
  assert_non_null(xrt_context_find_plugin(x, "penv2"));
  assert_int_equal(xrt_context_release(x), XRT_OK);
}

/* The PJRT table registered directly, and the wrapper's own checks. */
static void test_register(void **state) {
  (void)state;
  set_mode(NULL);
  void *dl = dlopen(FAKE_PJRT, RTLD_NOW | RTLD_LOCAL);
  assert_non_null(dl);
  const void *(*get)(void) = NULL;
  *(void **)(&get) = dlsym(dl, "GetPjrtApi");
  assert_non_null(get);
  xrt_context *x = tu_context(false);
  xrt_plugin *p = NULL;
  assert_int_equal(xrt_context_register_pjrt(x, NULL, get(), &p), XRT_OK);
  assert_ptr_equal(xrt_context_find_plugin(x, "pjrt"), p);
  xrt_client *c = tu_client_of(x, "pjrt", 1);
  xrt_executable *exe = tu_compile(c, add_src, 0, NULL);
  const float a[4] = {1, 1, 1, 1}, b[4] = {2, 3, 4, 5};
  add_on(c, exe, 0, a, b);
  xrt_client_release(c);
  assert_int_equal(xrt_context_release(x), XRT_OK);

  const xrt_plugin_api *t = NULL;
  expect_fail(xrt_pjrt_plugin_wrap(NULL, "n", NULL, &t), XRT_INVALID_ARGUMENT,
              "pjrt_api is NULL", NULL);
  assert_null(t);
  assert_int_equal(xrt_pjrt_plugin_wrap(get(), NULL, NULL, &t), XRT_OK);
  assert_string_equal(t->name, "pjrt");
  xrt_pjrt_plugin_unwrap(t);
  xrt_pjrt_plugin_unwrap(NULL);
  dlclose(dl);
}

/* Optional functions NULL or UNIMPLEMENTED: everything still works. */
static void degrade(const char *mode) {
  set_mode(mode);
  xrt_context *x = tu_context(false);
  xrt_plugin *p = load(x, "fp", FAKE_PJRT);
  xrt_plugin_info info;
  assert_int_equal(xrt_plugin_get_info(p, &info), XRT_OK);
  assert_int_equal(info.num_attributes, 0);
  xrt_client *c = tu_client_of(x, "fp", 2);
  assert_string_equal(xrt_device_kind(xrt_client_device(c, 1)), "pjrt");
  xrt_executable *exe = tu_compile(c, add_src, 0, NULL);
  const float a[4] = {1, 2, 3, 4}, b[4] = {4, 3, 2, 1}, sum[4] = {5, 5, 5, 5};
  add_on(c, exe, 1, a, b);
  xrt_buffer *args[2] = {upload4(c, 0, a), upload4(c, 0, b)}, *out = NULL;
  xrt_buffer *moved = NULL;
  assert_int_equal(xrt_execute(exe, xrt_client_device(c, 0), args, 2, &out, 1,
                               NULL), XRT_OK);
  assert_int_equal(xrt_buffer_copy_to_device(out, xrt_client_device(c, 1),
                                             &moved), XRT_OK);
  expect4(moved, sum);
  xrt_client_release(c);
  assert_int_equal(xrt_context_release(x), XRT_OK);
  set_mode(NULL);
}

static void test_degrade(void **state) {
  (void)state;
  degrade("no_optional");
  degrade("unimplemented");
}

/* ---- the fake, misbehaving ---- */

/* Loading fails. */
static void load_fails(const char *mode, xrt_status want, const char *s1,
                       const char *s2) {
  set_mode(mode);
  xrt_context *x = tu_context(false);
  xrt_plugin *p = NULL;
  expect_fail(xrt_context_load_plugin(x, NULL, FAKE_PJRT, &p), want,
              "plugin 'fake_pjrt'", FAKE_PJRT, s1, s2, NULL);
  assert_null(p);
  assert_int_equal(xrt_context_plugin_count(x), 0);
  assert_int_equal(xrt_context_release(x), XRT_OK);
  set_mode(NULL);
}

static void test_bad_tables(void **state) {
  (void)state;
  load_fails("major", XRT_FAILED_PRECONDITION, "was built for PJRT C API 1.",
             "loads only major version 0");
  load_fails("small", XRT_FAILED_PRECONDITION, "too small to hold "
             "PJRT_Client_Create", "bytes needed");
  load_fails("tiny", XRT_FAILED_PRECONDITION, "struct_size is 8 bytes",
             "too small to hold its version");
  load_fails("null_fns", XRT_FAILED_PRECONDITION,
             "lacks PJRT_Client_Compile, PJRT_Buffer_ToHostBuffer", NULL);
  load_fails("init_err", XRT_FAILED_PRECONDITION,
             "PJRT_Plugin_Initialize: fake: no hardware", NULL);
  load_fails("attrs_null", XRT_INTERNAL,
             "PJRT_Plugin_Attributes returned 2 attributes but a NULL array",
             NULL);
}

/* Client creation fails. */
static void client_fails(const char *mode, int ndev, xrt_status want,
                         const char *s1) {
  set_mode(mode);
  xrt_context *x = tu_context(false);
  load(x, "fp", FAKE_PJRT);
  xrt_client *c = NULL;
  expect_fail(try_client(x, "fp", ndev, &c), want, "plugin 'fp': ", s1, NULL);
  assert_null(c);
  assert_int_equal(xrt_context_release(x), XRT_OK);
  set_mode(NULL);
}

static void test_bad_clients(void **state) {
  (void)state;
  client_fails("create_err", 1, XRT_RESOURCE_EXHAUSTED,
               "PJRT_Client_Create: fake: no devices today");
  client_fails("create_null", 1, XRT_INTERNAL,
               "PJRT_Client_Create returned no error and a NULL client");
  client_fails("devices_null", 1, XRT_INTERNAL,
               "PJRT_Client_AddressableDevices returned 3 devices but a NULL "
               "array");
  client_fails("devices_huge", 1, XRT_INTERNAL,
               "PJRT_Client_AddressableDevices returned 18446744073709551615 "
               "devices");
  client_fails("devices_zero", 1, XRT_INTERNAL,
               "PJRT_Client_AddressableDevices returned 0 devices");
  client_fails("device_nullentry", 2, XRT_INTERNAL,
               "PJRT_Client_AddressableDevices returned a NULL device at "
               "index 1");
}

/* Compiling add_src (or src) fails. */
static void compile_fails(const char *mode, const char *src, xrt_status want,
                          const char *s1) {
  set_mode(mode);
  xrt_context *x = tu_context(false);
  load(x, "fp", FAKE_PJRT);
  xrt_client *c = tu_client_of(x, "fp", 1);
  xrt_executable *exe = NULL;
  expect_fail(xrt_compile(c, src, strlen(src), NULL, &exe), want,
              "plugin 'fp': ", s1, NULL);
  assert_null(exe);
  xrt_client_release(c);
  assert_int_equal(xrt_context_release(x), XRT_OK);
  set_mode(NULL);
}

static const char *neg_src =
    "func.func @main(%a: tensor<4xf32>) -> tensor<4xf32> {\n"
    "  %0 = stablehlo.negate %a : tensor<4xf32> // fake_compile_error\n"
    "  func.return %0 : tensor<4xf32>\n"
    "}\n";

static void test_bad_compiles(void **state) {
  (void)state;
  compile_fails(NULL, neg_src, XRT_INVALID_ARGUMENT,
                "PJRT_Client_Compile: fake: cannot compile this");
  compile_fails("bad_code", neg_src, XRT_UNKNOWN,
                "PJRT_Client_Compile: fake: cannot compile this");
  compile_fails("compile_null", add_src, XRT_INTERNAL,
                "PJRT_Client_Compile returned no error and a NULL executable");
  compile_fails("num_outputs", add_src, XRT_INTERNAL,
                "PJRT_Executable_NumOutputs says 5 outputs; the program's "
                "entry has 1");
}

/* Executing (or reading back) fails; ndev replicas. */
static void run_fails(const char *mode, int replicas, xrt_status want,
                      const char *s1) {
  set_mode(NULL);
  xrt_context *x = tu_context(false);
  load(x, "fp", FAKE_PJRT);
  xrt_client *c = tu_client_of(x, "fp", replicas);
  xrt_compile_options o;
  xrt_compile_options_init(&o);
  o.num_replicas = replicas;
  xrt_executable *exe = NULL;
  if (xrt_compile(c, add_src, strlen(add_src), &o, &exe))
    fail_msg("compile: %s", xrt_last_error());
  set_mode(mode);
  const float v[4] = {1, 2, 3, 4};
  xrt_buffer *in[4][2], *outs[4][1];
  xrt_buffer *const *lists[4];
  xrt_buffer **olists[4];
  for (int r = 0; r < replicas; r++) {
    in[r][0] = upload4(c, r, v);
    in[r][1] = upload4(c, r, v);
    lists[r] = in[r];
    olists[r] = outs[r];
  }
  xrt_status s;
  if (replicas == 1) {
    s = xrt_execute(exe, xrt_client_device(c, 0), in[0], 2, outs[0], 1, NULL);
    if (!s) {
      float got[4];
      s = xrt_buffer_to_host(outs[0][0], got, sizeof got);
    }
  } else {
    xrt_event *done = NULL;
    s = xrt_execute_multi(exe, lists, replicas, 2, olists, 1, NULL, &done);
    if (!s) s = xrt_event_await(done);
    xrt_event_release(done);
  }
  expect_fail(s, want, "plugin 'fp': ", s1, NULL);
  xrt_client_release(c);
  assert_int_equal(xrt_context_release(x), XRT_OK);
  set_mode(NULL);
}

static void test_bad_executions(void **state) {
  (void)state;
  for (int n = 1; n <= 4; n += 3) {
    run_fails("execute_err", n, XRT_INTERNAL,
              "PJRT_LoadedExecutable_Execute: fake: device on fire");
    run_fails("outputs_null", n, XRT_INTERNAL,
              "PJRT_LoadedExecutable_Execute returned no error and a NULL "
              "output");
    run_fails("event_err", n, XRT_DATA_LOSS,
              "PJRT_LoadedExecutable_Execute: fake: lost the results");
  }
  run_fails("tohost_size", 1, XRT_INTERNAL,
            "PJRT_Buffer_ToHostBuffer: the buffer holds 19 bytes, xrt "
            "expects 16");
}

/* A library with neither entry symbol. */
static void test_not_a_plugin(void **state) {
  (void)state;
  xrt_context *x = tu_context(false);
  expect_fail(xrt_context_load_plugin(x, NULL, FAKE_NOSYM, NULL),
              XRT_NOT_FOUND, FAKE_NOSYM, "xrt_plugin_get_api", "GetPjrtApi",
              NULL);
  assert_int_equal(xrt_context_release(x), XRT_OK);
}

/* ---- libxrt_pjrt.so: xrt -> adapter -> PJRT -> xrt's simulator ---- */

static int have_pjrt_so(void) {
  if (access(XRT_TEST_PJRT_SO, R_OK) == 0) return 1;
  print_message("(skipped: %s not built)\n", XRT_TEST_PJRT_SO);
  return 0;
}

static const char *all_reduce_src =
    "func.func @main(%a: tensor<4xf32>) -> tensor<4xf32> {\n"
    "  %0 = \"stablehlo.all_reduce\"(%a) ({\n"
    "  ^bb0(%x: tensor<f32>, %y: tensor<f32>):\n"
    "    %s = stablehlo.add %x, %y : tensor<f32>\n"
    "    stablehlo.return %s : tensor<f32>\n"
    "  }) {replica_groups = dense<[[0, 1, 2, 3]]> : tensor<1x4xi64>}"
    " : (tensor<4xf32>) -> tensor<4xf32>\n"
    "  func.return %0 : tensor<4xf32>\n"
    "}\n";

static void test_xrt_pjrt_so(void **state) {
  (void)state;
  if (!have_pjrt_so()) return;
  xrt_context *x = tu_context(false);
  xrt_plugin *p = load(x, NULL, XRT_TEST_PJRT_SO);
  xrt_plugin_info info;
  assert_int_equal(xrt_plugin_get_info(p, &info), XRT_OK);
  assert_string_equal(info.name, "xrt_pjrt");
  xrt_client *c = tu_client_of(x, "xrt_pjrt", 4);
  assert_int_equal(xrt_client_device_count(c), 4);

  /* add, on two devices, and a copy between them */
  xrt_executable *add = tu_compile(c, add_src, 0, NULL);
  const float a[4] = {1, 2, 3, 4}, b[4] = {0.5f, -2, 1e-3f, 1e30f};
  add_on(c, add, 0, a, b);
  add_on(c, add, 3, b, a);
  xrt_buffer *ba = upload4(c, 0, a), *bb = upload4(c, 0, b), *sum = NULL;
  xrt_buffer *args[2] = {ba, bb}, *moved = NULL;
  assert_int_equal(xrt_execute(add, xrt_client_device(c, 0), args, 2, &sum, 1,
                               NULL), XRT_OK);
  assert_int_equal(xrt_buffer_copy_to_device(sum, xrt_client_device(c, 2),
                                             &moved), XRT_OK);
  float want[4];
  for (int i = 0; i < 4; i++) want[i] = a[i] + b[i];
  expect4(moved, want);

  /* a replicated all_reduce over the four devices */
  xrt_compile_options o;
  xrt_compile_options_init(&o);
  o.num_replicas = 4;
  xrt_executable *ar = NULL;
  if (xrt_compile(c, all_reduce_src, strlen(all_reduce_src), &o, &ar))
    fail_msg("compile all_reduce: %s", xrt_last_error());
  xrt_buffer *in[4][1], *outs[4][1];
  xrt_buffer *const *lists[4];
  xrt_buffer **olists[4];
  float v[4][4], total[4] = {0, 0, 0, 0};
  for (int r = 0; r < 4; r++) {
    for (int i = 0; i < 4; i++) total[i] += v[r][i] = (float)((r + 1) * (i + 2));
    in[r][0] = upload4(c, r, v[r]);
    lists[r] = in[r];
    olists[r] = outs[r];
  }
  xrt_event *done = NULL;
  if (xrt_execute_multi(ar, lists, 4, 1, olists, 1, NULL, &done))
    fail_msg("all_reduce: %s", xrt_last_error());
  if (xrt_event_await(done)) fail_msg("all_reduce: %s", xrt_last_error());
  xrt_event_release(done);
  for (int r = 0; r < 4; r++) expect4(outs[r][0], total);
  xrt_client_release(c);

  /* The plugin's own failure, with its message: too little device memory
   * for the arguments of a launch. */
  xrt_client_options co = tu_client_options(x, "xrt_pjrt", 1);
  co.device_memory_bytes = 16;
  assert_int_equal(xrt_client_create(&co, &c), XRT_OK);
  add = tu_compile(c, add_src, 0, NULL);
  xrt_buffer *small[2] = {upload4(c, 0, a), upload4(c, 0, b)}, *o1 = NULL;
  xrt_status s = xrt_execute(add, xrt_client_device(c, 0), small, 2, &o1, 1,
                             NULL);
  expect_fail(s, XRT_RESOURCE_EXHAUSTED, "plugin 'xrt_pjrt': PJRT_", NULL);
  xrt_client_release(c);
  assert_int_equal(xrt_context_release(x), XRT_OK);
}

static int64_t now_ns(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (int64_t)t.tv_sec * 1000000000 + t.tv_nsec;
}

/* ns per xrt_execute of a 4-element add on client c. */
static double dispatch_ns(xrt_client *c, int iters) {
  xrt_executable *exe = tu_compile(c, add_src, 0, NULL);
  const float a[4] = {1, 2, 3, 4};
  xrt_buffer *args[2] = {upload4(c, 0, a), upload4(c, 0, a)};
  xrt_device *d = xrt_client_device(c, 0);
  double best = 1e30;
  for (int rep = 0; rep < 5; rep++) {
    int64_t t0 = now_ns();
    for (int i = 0; i < iters; i++) {
      xrt_buffer *out = NULL;
      if (xrt_execute(exe, d, args, 2, &out, 1, NULL))
        fail_msg("execute: %s", xrt_last_error());
      xrt_buffer_release(out);
    }
    double ns = (double)(now_ns() - t0) / iters;
    if (ns < best) best = ns;
  }
  xrt_buffer_release(args[0]);
  xrt_buffer_release(args[1]);
  xrt_executable_release(exe);
  return best;
}

/* Prints the time of a dispatch through the adapter (informational: the
 * benchmark holds the target). */
static void test_dispatch_time(void **state) {
  (void)state;
  int iters = getenv("XRT_PJRT_BENCH_ITERS") ? atoi(getenv("XRT_PJRT_BENCH_ITERS"))
                                             : 2000;
  if (iters < 1) iters = 1;
  xrt_context *x = tu_context(true);
  xrt_client *sim = tu_client_of(x, "sim", 1);
  double direct = dispatch_ns(sim, iters);
  xrt_client_release(sim);
  set_mode(NULL);
  load(x, "fp", FAKE_PJRT);
  xrt_client *fp = tu_client_of(x, "fp", 1);
  double fake = dispatch_ns(fp, iters);
  xrt_client_release(fp);
  print_message("dispatch.add_f32x4.ns = %.0f\n", direct);
  print_message("dispatch.fake_pjrt_add_f32x4.ns = %.0f\n", fake);
  if (access(XRT_TEST_PJRT_SO, R_OK) == 0) {
    load(x, "xp", XRT_TEST_PJRT_SO);
    xrt_client *xp = tu_client_of(x, "xp", 1);
    double via = dispatch_ns(xp, iters);
    xrt_client_release(xp);
    print_message("dispatch.pjrt_add_f32x4.ns = %.0f (%.2fx)\n", via,
                  via / direct);
  }
  assert_int_equal(xrt_context_release(x), XRT_OK);
}

int main(void) {
  /* libxrt_pjrt.so keeps process-wide tables (its handles) that it never
   * frees; loaded and unloaded by every context, they would read as
   * leaks.  Holding one reference until exit keeps it resident, as a
   * process that uses a PJRT plugin does. */
  void *pin = access(XRT_TEST_PJRT_SO, R_OK) == 0
                  ? dlopen(XRT_TEST_PJRT_SO, RTLD_NOW | RTLD_LOCAL)
                  : NULL;
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_describe),
      cmocka_unit_test(test_round_trip),
      cmocka_unit_test(test_replicated),
      cmocka_unit_test(test_env),
      cmocka_unit_test(test_register),
      cmocka_unit_test(test_degrade),
      cmocka_unit_test(test_bad_tables),
      cmocka_unit_test(test_bad_clients),
      cmocka_unit_test(test_bad_compiles),
      cmocka_unit_test(test_bad_executions),
      cmocka_unit_test(test_not_a_plugin),
      cmocka_unit_test(test_xrt_pjrt_so),
      cmocka_unit_test(test_dispatch_time),
  };
  (void)pin; /* held until exit */
  return cmocka_run_group_tests(tests, NULL, NULL);
}
