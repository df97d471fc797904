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
 * Issue #25 (coverage of src/pjrt) adds: the wrapped table called
 * directly as the core would (client, buffers, compile, participants of
 * a launch meeting by launch id, aborted, duplicated or misplaced ones),
 * and as it never does (bad arguments), with an allocator that runs out
 * at each allocation in turn; programs the adapter cannot hand to PJRT;
 * more misbehaviour of the fake (attributes, descriptions, uploads,
 * copies, ready events, executables' devices and outputs, GetCode).
 */
#if !defined(_POSIX_C_SOURCE) || _POSIX_C_SOURCE < 200809L
#undef _POSIX_C_SOURCE
#define _POSIX_C_SOURCE 200809L /* setenv, clock_gettime */
#endif
#include "test_plugin_abi.h"

#include <dlfcn.h>
#include <pthread.h>
#include <stdatomic.h>
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

/* ---- more misbehaviour of the fake (issue #25) ---- */

/* An output of exe (a PJRT buffer) on device 0, a + b. */
static xrt_buffer *pjrt_output(xrt_client *c, xrt_executable *exe,
                               const float *a, const float *b) {
  xrt_buffer *args[2] = {upload4(c, 0, a), upload4(c, 0, b)}, *out = NULL;
  if (xrt_execute(exe, xrt_client_device(c, 0), args, 2, &out, 1, NULL))
    fail_msg("execute: %s", xrt_last_error());
  xrt_buffer_release(args[0]);
  xrt_buffer_release(args[1]);
  return out;
}

/* Copying a PJRT buffer to device 1 in mode; want (XRT_OK: the copy is
 * right). */
static void copy_in_mode(const char *mode, xrt_status want, const char *s1) {
  set_mode(NULL);
  xrt_context *x = tu_context(false);
  load(x, "fp", FAKE_PJRT);
  xrt_client *c = tu_client_of(x, "fp", 2);
  xrt_executable *exe = tu_compile(c, add_src, 0, NULL);
  const float a[4] = {1, 2, 3, 4}, b[4] = {0.5f, 0.5f, 0.5f, 0.5f};
  const float sum[4] = {1.5f, 2.5f, 3.5f, 4.5f};
  xrt_buffer *out = pjrt_output(c, exe, a, b);
  set_mode(mode);
  xrt_buffer *moved = NULL;
  xrt_status s = xrt_buffer_copy_to_device(out, xrt_client_device(c, 1),
                                           &moved);
  if (want) {
    /* the failure shows at the copy or at the read of its result */
    if (!s) {
      float got[4];
      s = xrt_buffer_to_host(moved, got, sizeof got);
    }
    expect_fail(s, want, "plugin 'fp': ", s1, NULL);
  } else {
    assert_int_equal(s, XRT_OK);
    expect4(moved, sum);
  }
  if (moved) xrt_buffer_release(moved);
  set_mode(NULL);
  expect4(out, sum); /* the source is intact */
  xrt_buffer_release(out);
  xrt_client_release(c);
  assert_int_equal(xrt_context_release(x), XRT_OK);
}

/* Compiling add_src for replicas replicas fails in mode. */
static void replicated_compile_fails(const char *mode, int replicas,
                                     xrt_status want, const char *s1) {
  set_mode(mode);
  xrt_context *x = tu_context(false);
  load(x, "fp", FAKE_PJRT);
  xrt_client *c = tu_client_of(x, "fp", replicas);
  xrt_compile_options o;
  xrt_compile_options_init(&o);
  o.num_replicas = replicas;
  xrt_executable *exe = NULL;
  expect_fail(xrt_compile(c, add_src, strlen(add_src), &o, &exe), want,
              "plugin 'fp': ", s1, NULL);
  assert_null(exe);
  xrt_client_release(c);
  assert_int_equal(xrt_context_release(x), XRT_OK);
  set_mode(NULL);
}

static void test_more_misbehaviour(void **state) {
  (void)state;
  /* attributes a plugin cannot send */
  load_fails("attr_bad_name", XRT_INTERNAL,
             "PJRT_Plugin_Attributes: attribute 1 has a NULL name", NULL);
  load_fails("attr_bad_string", XRT_INTERNAL,
             "PJRT_Plugin_Attributes: attribute 1 has a NULL string", NULL);
  load_fails("attr_bad_list", XRT_INTERNAL,
             "PJRT_Plugin_Attributes: attribute 1 has a NULL int64 list",
             NULL);
  load_fails("attr_long_name", XRT_INTERNAL,
             "attribute 1 has a name longer than 4096 bytes", NULL);
  load_fails("attr_long_value", XRT_INTERNAL,
             "attribute 1 has a value longer than 65536", NULL);
  load_fails("attrs_err", XRT_INTERNAL,
             "PJRT_Plugin_Attributes: fake: no attributes today", NULL);
  load_fails("attrs_many", XRT_INTERNAL,
             "PJRT_Plugin_Attributes returned 65537 attributes, more than "
             "65536", NULL);
  /* an attribute of a newer type is left out */
  {
    set_mode("attr_new_type");
    xrt_context *x = tu_context(false);
    xrt_plugin *p = load(x, "fp", FAKE_PJRT);
    xrt_plugin_info info;
    assert_int_equal(xrt_plugin_get_info(p, &info), XRT_OK);
    assert_int_equal(info.num_attributes, 1);
    assert_string_equal(info.attributes[0].name, "fake_string");
    assert_string_equal(info.attributes[0].string_value, "hello");
    assert_int_equal(xrt_context_release(x), XRT_OK);
    set_mode(NULL);
  }
  /* device descriptions that fail */
  client_fails("desc_err", 1, XRT_INTERNAL,
               "PJRT_Device_GetDescription: fake: no desc");
  client_fails("id_err", 1, XRT_INTERNAL,
               "PJRT_DeviceDescription_Id: fake: no id");
  client_fails("kind_err", 1, XRT_INTERNAL,
               "PJRT_DeviceDescription_Kind: fake: no kind");
  client_fails("dattrs_err", 1, XRT_INTERNAL,
               "PJRT_DeviceDescription_Attributes: fake: no attributes");
  /* an empty kind: "pjrt"; a memory size passed on */
  {
    set_mode("kind_empty");
    xrt_context *x = tu_context(false);
    load(x, "fp", FAKE_PJRT);
    xrt_client_options o = tu_client_options(x, "fp", 2);
    o.device_memory_bytes = 1 << 20;
    xrt_client *c = NULL;
    assert_int_equal(xrt_client_create(&o, &c), XRT_OK);
    assert_string_equal(xrt_device_kind(xrt_client_device(c, 1)), "pjrt");
    xrt_client_release(c);
    assert_int_equal(xrt_context_release(x), XRT_OK);
    set_mode(NULL);
  }
  /* an error whose code cannot be read is UNKNOWN, its message kept */
  compile_fails("getcode_err", neg_src, XRT_UNKNOWN,
                "PJRT_Client_Compile: fake: cannot compile this");
  /* an error without a message: the function and "(no message)" */
  compile_fails("msg_null", neg_src, XRT_INVALID_ARGUMENT,
                "PJRT_Client_Compile: (no message)");
  /* uploads at launch time */
  for (int n = 1; n <= 4; n += 3) {
    run_fails("upload_null", n, XRT_INTERNAL,
              "PJRT_Client_BufferFromHostBuffer returned no error and a NULL "
              "buffer");
    run_fails("upload_event_err", n, XRT_DATA_LOSS,
              "PJRT_Client_BufferFromHostBuffer: fake: upload lost");
  }
  /* copies between devices */
  copy_in_mode("copy_null", XRT_INTERNAL,
               "PJRT_Buffer_CopyToDevice returned no error and a NULL buffer");
  copy_in_mode("ready_err", XRT_INTERNAL,
               "PJRT_Buffer_ReadyEvent: fake: unsure");
  copy_in_mode("ready_event_err", XRT_DATA_LOSS,
               "PJRT_Buffer_CopyToDevice: fake: the copy was lost");
  /* a Destroy that complains is ignored; a size query with an event */
  {
    static const char *const modes[] = {"destroy_err", "query_event"};
    for (int k = 0; k < 2; k++) {
      set_mode(modes[k]);
      xrt_context *x = tu_context(false);
      load(x, "fp", FAKE_PJRT);
      xrt_client *c = tu_client_of(x, "fp", 2);
      xrt_executable *exe = tu_compile(c, add_src, 0, NULL);
      const float a[4] = {1, 2, 3, 4}, b[4] = {-1, 5, 0.25f, 8};
      add_on(c, exe, 1, a, b);
      xrt_client_release(c);
      assert_int_equal(xrt_context_release(x), XRT_OK);
      set_mode(NULL);
    }
  }
  /* a size query that fails: the download itself goes ahead */
  copy_in_mode("tohost_query_err", XRT_OK, NULL);
  /* the devices of a loaded executable, wrong */
  replicated_compile_fails("loaded_devices_short", 4, XRT_INTERNAL,
                           "PJRT_LoadedExecutable_AddressableDevices "
                           "returned 3 devices for a launch of 4");
  replicated_compile_fails("loaded_devices_null", 4, XRT_INTERNAL,
                           "PJRT_LoadedExecutable_AddressableDevices "
                           "returned 4 devices (a NULL array) for a launch "
                           "of 4");
  replicated_compile_fails("loaded_devices_err", 4, XRT_INTERNAL,
                           "PJRT_LoadedExecutable_AddressableDevices: fake: "
                           "devices unknown");
  compile_fails("getexe_err", add_src, XRT_INTERNAL,
                "PJRT_LoadedExecutable_GetExecutable: fake: no executable");
  compile_fails("numout_err", add_src, XRT_INTERNAL,
                "PJRT_Executable_NumOutputs: fake: cannot count");
  /* no PJRT_Executable to ask: the output count is taken as it is */
  {
    set_mode("getexe_null");
    xrt_context *x = tu_context(false);
    load(x, "fp", FAKE_PJRT);
    xrt_client *c = tu_client_of(x, "fp", 1);
    xrt_executable *exe = tu_compile(c, add_src, 0, NULL);
    const float a[4] = {1, 2, 3, 4}, b[4] = {4, 3, 2, 1};
    add_on(c, exe, 0, a, b);
    xrt_client_release(c);
    assert_int_equal(xrt_context_release(x), XRT_OK);
    set_mode(NULL);
  }
  replicated_compile_fails("loaded_devices_foreign", 4, XRT_INTERNAL,
                           "PJRT_LoadedExecutable_AddressableDevices: device "
                           "1 is not one the launch was assigned");
  replicated_compile_fails("loaded_devices_twice", 4, XRT_INTERNAL,
                           "PJRT_LoadedExecutable_AddressableDevices: device "
                           "1 is not one the launch was assigned, or listed "
                           "twice");
}

/* Version attributes a PJRT plugin gets wrong are ignored; the platform
 * description and the wrapper refuse what a core never passes. */
static void test_versions_and_describe(void **state) {
  (void)state;
  static const char *const modes[] = {"shlo_neg", "shlo_huge", "shlo_mid"};
  for (size_t k = 0; k < 3; k++) {
    set_mode(modes[k]);
    xrt_context *x = tu_context(false);
    xrt_plugin *p = load(x, "fp", FAKE_PJRT);
    xrt_plugin_info info;
    assert_int_equal(xrt_plugin_get_info(p, &info), XRT_OK);
    /* none given: the core's defaults, any version up to its own */
    assert_string_equal(info.stablehlo_min, "0.0.0");
    assert_string_equal(info.stablehlo_max, xrt_stablehlo_version());
    assert_int_equal(xrt_context_release(x), XRT_OK);
  }
  set_mode(NULL);
  void *dl = dlopen(FAKE_PJRT, RTLD_NOW | RTLD_LOCAL);
  assert_non_null(dl);
  const void *(*get)(void) = NULL;
  *(void **)(&get) = dlsym(dl, "GetPjrtApi");
  expect_fail(xrt_pjrt_plugin_wrap(get(), "n", NULL, NULL),
              XRT_INVALID_ARGUMENT, "out_table is NULL", NULL);
  const xrt_plugin_api *t = NULL;
  assert_int_equal(xrt_pjrt_plugin_wrap(get(), "fpd", NULL, &t), XRT_OK);
  xrt_plugin_error err;
  assert_int_equal(t->platform_describe(NULL, &err), XRT_INVALID_ARGUMENT);
  TU_ASSERT_CONTAINS(err.message, "platform_describe: no table to describe");
  xrt_plugin_platform_desc d;
  memset(&d, 0, sizeof d);
  d.struct_size = sizeof d;
  assert_int_equal(t->platform_describe(&d, &err), XRT_INVALID_ARGUMENT);
  d.api = t;
  d.struct_size = offsetof(xrt_plugin_platform_desc, api);
  assert_int_equal(t->platform_describe(&d, &err), XRT_INVALID_ARGUMENT);
  d.struct_size = sizeof d;
  assert_int_equal(t->platform_describe(&d, &err), XRT_OK);
  assert_string_equal(d.stablehlo_min, "0.9.0");
  assert_string_equal(d.stablehlo_max, "1.99.0");
  assert_true(d.capabilities & XRT_CAP_LAUNCH_TOGETHER);
  xrt_pjrt_plugin_unwrap(t);
  dlclose(dl);
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

/* ---- the wrapped table called directly (issue #25) ---- */

/* An allocator that fails once `left` allocations have succeeded (left < 0:
 * never), counting what is live so that leaks show. */
static _Atomic int g_alloc_left = -1, g_alloc_live;
static void *count_alloc(void *self, size_t n) {
  (void)self;
  if (g_alloc_left == 0) return NULL;
  if (g_alloc_left > 0) g_alloc_left--;
  void *p = malloc(n);
  if (p) g_alloc_live++;
  return p;
}
static void count_free(void *self, void *p) {
  (void)self;
  if (p) g_alloc_live--;
  free(p);
}

static xrt_plugin_client_args table_args(const xrt_plugin_api *t, int ndev) {
  xrt_plugin_client_args a;
  memset(&a, 0, sizeof a);
  a.struct_size = sizeof a;
  a.num_devices = ndev;
  a.allocator.alloc = count_alloc;
  a.allocator.free = count_free;
  a.topology.process_count = 1;
  a.topology.local_world_size = 1;
  a.api = t;
  return a;
}

/* client_create and the buffer entries of the adapter's table, called as
 * the core would (and as it never does: bad arguments), with an allocator
 * that runs out at every step in turn. */
static void test_table_direct(void **state) {
  (void)state;
  set_mode(NULL);
  void *dl = dlopen(FAKE_PJRT, RTLD_NOW | RTLD_LOCAL);
  assert_non_null(dl);
  const void *(*get)(void) = NULL;
  *(void **)(&get) = dlsym(dl, "GetPjrtApi");
  assert_non_null(get);
  const xrt_plugin_api *t = NULL;
  assert_int_equal(xrt_pjrt_plugin_wrap(get(), "fpd", "fake", &t), XRT_OK);
  xrt_plugin_error err;
  void *c = NULL;

  /* arguments a core of ABI 1.3 never gives */
  assert_int_equal(t->client_create(NULL, &c, &err), XRT_INVALID_ARGUMENT);
  TU_ASSERT_CONTAINS(err.message, "client_create: bad arguments");
  xrt_plugin_client_args a = table_args(t, 2);
  a.api = NULL;
  assert_int_equal(t->client_create(&a, &c, &err), XRT_INVALID_ARGUMENT);
  a = table_args(t, 2);
  a.struct_size = offsetof(xrt_plugin_client_args, api);
  assert_int_equal(t->client_create(&a, &c, &err), XRT_INVALID_ARGUMENT);
  assert_null(c);

  /* out of memory at each allocation of client_create in turn: each
   * fails cleanly, until there is enough */
  a = table_args(t, 2);
  int k = 0;
  for (;; k++) {
    g_alloc_left = k;
    memset(&err, 0, sizeof err);
    xrt_status s = t->client_create(&a, &c, &err);
    g_alloc_left = -1;
    if (!s) break;
    assert_int_equal(s, XRT_RESOURCE_EXHAUSTED);
    TU_ASSERT_CONTAINS(err.message, "plugin 'fpd': out of");
    assert_int_equal(g_alloc_live, 0);
    assert_true(k < 100);
  }
  assert_true(k >= 3); /* the client, its devices, a device kind at least */
  assert_non_null(c);
  assert_int_equal(t->device_count(c), 2);
  assert_int_equal(t->device_count(NULL), -1);
  xrt_plugin_device_desc dd;
  memset(&dd, 0, sizeof dd);
  dd.struct_size = sizeof dd;
  assert_int_equal(t->device_describe(c, 2, &dd, &err), XRT_INVALID_ARGUMENT);
  TU_ASSERT_CONTAINS(err.message, "device_describe: bad arguments (device 2)");
  assert_int_equal(t->device_describe(NULL, 0, &dd, &err),
                   XRT_INVALID_ARGUMENT);
  assert_int_equal(t->device_describe(c, 0, NULL, &err),
                   XRT_INVALID_ARGUMENT);
  assert_int_equal(t->device_describe(c, -1, &dd, &err),
                   XRT_INVALID_ARGUMENT);
  assert_int_equal(t->client_create(&a, NULL, &err), XRT_INVALID_ARGUMENT);
  assert_int_equal(t->device_describe(c, 1, &dd, &err), XRT_OK);
  assert_non_null(dd.kind);

  /* buffers: bad arguments */
  void *m0 = NULL, *m1 = NULL;
  assert_int_equal(t->buffer_alloc(c, 2, 16, &m0, &err), XRT_INVALID_ARGUMENT);
  TU_ASSERT_CONTAINS(err.message, "buffer_alloc: bad arguments (device 2)");
  assert_int_equal(t->buffer_alloc(c, -1, 16, &m0, &err),
                   XRT_INVALID_ARGUMENT);
  assert_int_equal(t->buffer_alloc(c, 0, 16, NULL, &err),
                   XRT_INVALID_ARGUMENT);
  assert_int_equal(t->buffer_alloc(NULL, 0, 16, &m0, &err),
                   XRT_INVALID_ARGUMENT);
  g_alloc_left = 0;
  assert_int_equal(t->buffer_alloc(c, 0, 16, &m0, &err),
                   XRT_RESOURCE_EXHAUSTED);
  TU_ASSERT_CONTAINS(err.message,
                     "plugin 'fpd': out of host memory for a buffer record");
  g_alloc_left = -1;
  assert_int_equal(t->buffer_alloc(c, 0, 16, &m0, &err), XRT_OK);
  assert_int_equal(t->buffer_alloc(c, 1, 16, &m1, &err), XRT_OK);
  const float v[4] = {1.5f, -2, 3, 4};
  float got[4];
  assert_int_equal(t->buffer_write(c, 0, m0, v, 17, &err),
                   XRT_INVALID_ARGUMENT);
  TU_ASSERT_CONTAINS(err.message, "buffer_write: bad arguments (17 bytes)");
  assert_int_equal(t->buffer_write(c, 0, m0, NULL, 4, &err),
                   XRT_INVALID_ARGUMENT);
  assert_int_equal(t->buffer_write(c, 2, m0, v, 4, &err),
                   XRT_INVALID_ARGUMENT);
  assert_int_equal(t->buffer_write(NULL, 0, m0, v, 4, &err),
                   XRT_INVALID_ARGUMENT);
  assert_int_equal(t->buffer_read(c, 0, m0, got, 17, &err),
                   XRT_INVALID_ARGUMENT);
  TU_ASSERT_CONTAINS(err.message, "buffer_read: bad arguments (17 bytes)");
  assert_int_equal(t->buffer_read(c, 0, m0, NULL, 4, &err),
                   XRT_INVALID_ARGUMENT);
  assert_int_equal(t->buffer_read(c, -1, m0, got, 4, &err),
                   XRT_INVALID_ARGUMENT);
  assert_int_equal(t->buffer_read(c, 0, NULL, got, 4, &err),
                   XRT_INVALID_ARGUMENT);
  assert_int_equal(t->buffer_copy(c, 0, m0, 1, m1, 32, &err),
                   XRT_INVALID_ARGUMENT);
  TU_ASSERT_CONTAINS(err.message, "buffer_copy: bad arguments (32 bytes)");
  assert_int_equal(t->buffer_copy(c, 0, m0, 2, m1, 16, &err),
                   XRT_INVALID_ARGUMENT);
  assert_int_equal(t->buffer_copy(c, -1, m0, 1, m1, 16, &err),
                   XRT_INVALID_ARGUMENT);
  assert_int_equal(t->buffer_copy(c, 0, NULL, 1, m1, 16, &err),
                   XRT_INVALID_ARGUMENT);
  assert_int_equal(t->buffer_copy(NULL, 0, m0, 1, m1, 16, &err),
                   XRT_INVALID_ARGUMENT);
  assert_int_equal(t->buffer_copy(c, 0, m0, 1, NULL, 16, &err),
                   XRT_INVALID_ARGUMENT);
  assert_int_equal(t->buffer_copy(c, 2, m0, 1, m1, 16, &err),
                   XRT_INVALID_ARGUMENT);
  assert_int_equal(t->buffer_copy(c, 0, m0, -1, m1, 16, &err),
                   XRT_INVALID_ARGUMENT);
  assert_int_equal(t->buffer_read(NULL, 0, m0, got, 4, &err),
                   XRT_INVALID_ARGUMENT);
  assert_int_equal(t->buffer_read(c, 2, m0, got, 4, &err),
                   XRT_INVALID_ARGUMENT);
  assert_int_equal(t->buffer_write(c, 0, NULL, v, 4, &err),
                   XRT_INVALID_ARGUMENT);
  assert_int_equal(t->buffer_write(c, -1, m0, v, 4, &err),
                   XRT_INVALID_ARGUMENT);

  /* a memory never written reads as zeros; nothing to read is fine */
  memset(got, 0xff, sizeof got);
  assert_int_equal(t->buffer_read(c, 0, m0, got, 16, &err), XRT_OK);
  for (int i = 0; i < 4; i++) assert_true(got[i] == 0.0f);
  assert_int_equal(t->buffer_read(c, 0, m0, NULL, 0, &err), XRT_OK);
  /* staging fails when the host is out of memory */
  g_alloc_left = 0;
  assert_int_equal(t->buffer_write(c, 0, m0, v, 8, &err),
                   XRT_RESOURCE_EXHAUSTED);
  TU_ASSERT_CONTAINS(err.message,
                     "plugin 'fpd': out of host memory staging 16 bytes");
  g_alloc_left = -1;
  /* half written: staged on the host, the rest zeros */
  assert_int_equal(t->buffer_write(c, 0, m0, v, 8, &err), XRT_OK);
  assert_int_equal(t->buffer_read(c, 0, m0, got, 16, &err), XRT_OK);
  assert_true(got[0] == 1.5f && got[1] == -2.0f && got[2] == 0.0f &&
              got[3] == 0.0f);
  /* copied to the other device through the host (no PJRT buffer yet) */
  assert_int_equal(t->buffer_copy(c, 0, m0, 1, m1, 16, &err), XRT_OK);
  memset(got, 0, sizeof got);
  assert_int_equal(t->buffer_read(c, 1, m1, got, 8, &err), XRT_OK);
  assert_true(got[0] == 1.5f && got[1] == -2.0f);
  /* a part copied: the destination keeps the rest */
  assert_int_equal(t->buffer_write(c, 1, m1, v, 16, &err), XRT_OK);
  assert_int_equal(t->buffer_write(c, 0, m0, v + 2, 8, &err), XRT_OK);
  assert_int_equal(t->buffer_copy(c, 0, m0, 1, m1, 4, &err), XRT_OK);
  assert_int_equal(t->buffer_read(c, 1, m1, got, 16, &err), XRT_OK);
  assert_true(got[0] == 3.0f && got[1] == -2.0f && got[2] == 3.0f &&
              got[3] == 4.0f);
  t->buffer_free(c, 0, m0);
  t->buffer_free(c, 1, m1);
  t->buffer_free(c, 0, NULL);
  t->buffer_free(NULL, 0, NULL);
  /* a freed record is reused */
  void *m2 = NULL;
  assert_int_equal(t->buffer_alloc(c, 1, 4, &m2, &err), XRT_OK);
  assert_true(m2 == m0 || m2 == m1);
  memset(got, 0xff, sizeof got);
  assert_int_equal(t->buffer_read(c, 1, m2, got, 4, &err), XRT_OK);
  assert_true(got[0] == 0.0f);
  t->buffer_free(c, 1, m2);

  /* compile: arguments a core never gives */
  void *exe = NULL;
  assert_int_equal(t->compile(c, NULL, &exe, &err), XRT_INVALID_ARGUMENT);
  TU_ASSERT_CONTAINS(err.message, "compile: bad arguments");
  {
    xrt_plugin_compile_args z;
    memset(&z, 0, sizeof z);
    z.struct_size = sizeof z;
    assert_int_equal(t->compile(NULL, &z, &exe, &err), XRT_INVALID_ARGUMENT);
    assert_int_equal(t->compile(c, &z, NULL, &err), XRT_INVALID_ARGUMENT);
    TU_ASSERT_CONTAINS(err.message, "compile: bad arguments");
  }
  xrt_plugin_compile_args ca;
  memset(&ca, 0, sizeof ca);
  ca.struct_size = sizeof ca;
  ca.entry = -1;
  ca.num_replicas = ca.num_partitions = 1;
  assert_int_equal(t->compile(c, &ca, &exe, &err), XRT_UNIMPLEMENTED);
  TU_ASSERT_CONTAINS(err.message, "PJRT plugins compile programs, not "
                                  "serialized executables");
  assert_null(exe);
  t->executable_destroy(NULL);

  t->client_destroy(c);
  t->client_destroy(NULL);
  assert_int_equal(g_alloc_live, 0);
  xrt_pjrt_plugin_unwrap(t);
  dlclose(dl);
}

/* ---- compile and execute through the wrapped table directly ---- */

typedef struct part_run {
  const xrt_plugin_api *t;
  void *c;
  xrt_plugin_execute_args a;
  xrt_plugin_error err;
  xrt_status s;
} part_run;

static void *part_main(void *arg) {
  part_run *r = arg;
  r->s = r->t->execute(r->c, &r->a, &r->err);
  return NULL;
}

/* Two participants of one launch, run concurrently; their statuses. */
static void run_pair(part_run *p0, part_run *p1) {
  pthread_t th;
  assert_int_equal(pthread_create(&th, NULL, part_main, p0), 0);
  part_main(p1);
  pthread_join(th, NULL);
}

static void test_table_compile_execute(void **state) {
  (void)state;
  set_mode(NULL);
  void *dl = dlopen(FAKE_PJRT, RTLD_NOW | RTLD_LOCAL);
  assert_non_null(dl);
  const void *(*get)(void) = NULL;
  *(void **)(&get) = dlsym(dl, "GetPjrtApi");
  const xrt_plugin_api *t = NULL;
  assert_int_equal(xrt_pjrt_plugin_wrap(get(), "fpd", "fake", &t), XRT_OK);
  xrt_plugin_error err;
  xrt_plugin_client_args ca = table_args(t, 2);
  void *c = NULL;
  assert_int_equal(t->client_create(&ca, &c, &err), XRT_OK);
  xrt_program *prog = NULL;
  assert_int_equal(xrt_program_parse(add_src, strlen(add_src), NULL, &prog),
                   XRT_OK);
  const xrt_ir_module *m = xrt_program_module(prog);
  assert_non_null(m);

  xrt_plugin_compile_args a = tu_plugin_compile_args(m, 0, NULL);
  void *exe = NULL;
  /* what the adapter refuses before PJRT sees it */
  {
    xrt_ir_module nosrc = *m;
    nosrc.source = NULL;
    a.module = &nosrc;
    assert_int_equal(t->compile(c, &a, &exe, &err), XRT_UNIMPLEMENTED);
    TU_ASSERT_CONTAINS(err.message, "the core gave no program text");
    a.module = m;
    a.entry = 1;
    assert_int_equal(t->compile(c, &a, &exe, &err), XRT_UNIMPLEMENTED);
    a.entry = 0;
    a.num_replicas = 3;
    assert_int_equal(t->compile(c, &a, &exe, &err), XRT_INVALID_ARGUMENT);
    TU_ASSERT_CONTAINS(err.message, "a launch of 3 x 1 on 2 devices");
    a.num_replicas = 0;
    assert_int_equal(t->compile(c, &a, &exe, &err), XRT_INVALID_ARGUMENT);
    TU_ASSERT_CONTAINS(err.message, "a launch of 0 x 1 on 2 devices");
    a.num_replicas = 1;
    a.num_partitions = 0;
    assert_int_equal(t->compile(c, &a, &exe, &err), XRT_INVALID_ARGUMENT);
    TU_ASSERT_CONTAINS(err.message, "a launch of 1 x 0 on 2 devices");
    a.num_partitions = 1;
    const int32_t neg[1] = {-1};
    a.device_assignment = neg;
    assert_int_equal(t->compile(c, &a, &exe, &err), XRT_UNIMPLEMENTED);
    TU_ASSERT_CONTAINS(err.message, "logical id 0 runs on device -1");
    a.num_replicas = 2;
    const int32_t off[2] = {0, 5}, twice[2] = {1, 1};
    a.device_assignment = off;
    assert_int_equal(t->compile(c, &a, &exe, &err), XRT_UNIMPLEMENTED);
    TU_ASSERT_CONTAINS(err.message,
                       "logical id 1 runs on device 5, not one of this "
                       "process's 2");
    a.device_assignment = twice;
    assert_int_equal(t->compile(c, &a, &exe, &err), XRT_UNIMPLEMENTED);
    TU_ASSERT_CONTAINS(err.message, "device 1 runs two participants of a "
                                    "launch");
    a.struct_size = offsetof(xrt_plugin_compile_args, device_assignment);
    assert_int_equal(t->compile(c, &a, &exe, &err), XRT_INVALID_ARGUMENT);
    TU_ASSERT_CONTAINS(err.message, "compile: bad arguments");
    a.struct_size = sizeof a;
    a.device_assignment = NULL;
    assert_null(exe);
  }
  /* out of memory at each allocation of a compile in turn */
  a.num_replicas = 1;
  int k = 0, live = g_alloc_live;
  for (;; k++) {
    g_alloc_left = k;
    xrt_status s = t->compile(c, &a, &exe, &err);
    g_alloc_left = -1;
    if (!s) break;
    assert_int_equal(s, XRT_RESOURCE_EXHAUSTED);
    TU_ASSERT_CONTAINS(err.message, "out of host memory");
    assert_int_equal(g_alloc_live, live);
    assert_true(k < 100);
  }
  assert_true(k >= 2);

  /* one device: inputs written whole, an output read in part */
  const float x[4] = {1, 2, 3, 4}, y[4] = {10, 20, 30, 40};
  void *in[2] = {NULL, NULL}, *out[1] = {NULL};
  for (int i = 0; i < 2; i++) {
    assert_int_equal(t->buffer_alloc(c, 1, 16, &in[i], &err), XRT_OK);
    assert_int_equal(t->buffer_write(c, 1, in[i], i ? y : x, 16, &err),
                     XRT_OK);
  }
  assert_int_equal(t->buffer_alloc(c, 1, 16, &out[0], &err), XRT_OK);
  xrt_plugin_execute_args ea = tu_plugin_exec(exe, in, 2, out, 1);
  ea.device = 1;
  ea.launch_id = 9;
  ea.abort_message = "a sibling failed";
  assert_int_equal(t->execute(c, &ea, &err), XRT_ABORTED);
  assert_string_equal(err.message, "a sibling failed");
  ea.abort_message = NULL;
  ea.num_args = 1;
  assert_int_equal(t->execute(c, &ea, &err), XRT_INVALID_ARGUMENT);
  TU_ASSERT_CONTAINS(err.message, "execute: bad arguments");
  ea.num_args = 2;
  assert_int_equal(t->execute(NULL, &ea, &err), XRT_INVALID_ARGUMENT);
  assert_int_equal(t->execute(c, NULL, &err), XRT_INVALID_ARGUMENT);
  {
    /* each wrong field alone */
    xrt_plugin_execute_args b = ea;
    b.executable = NULL;
    assert_int_equal(t->execute(c, &b, &err), XRT_INVALID_ARGUMENT);
    b = ea;
    b.device = 2;
    assert_int_equal(t->execute(c, &b, &err), XRT_INVALID_ARGUMENT);
    b.device = -1;
    assert_int_equal(t->execute(c, &b, &err), XRT_INVALID_ARGUMENT);
    b = ea;
    b.num_outs = 2;
    assert_int_equal(t->execute(c, &b, &err), XRT_INVALID_ARGUMENT);
    b = ea;
    b.args = NULL;
    assert_int_equal(t->execute(c, &b, &err), XRT_INVALID_ARGUMENT);
    b = ea;
    b.outs = NULL;
    assert_int_equal(t->execute(c, &b, &err), XRT_INVALID_ARGUMENT);
    TU_ASSERT_CONTAINS(err.message, "execute: bad arguments");
    /* another client's executable */
    void *c2 = NULL;
    xrt_plugin_client_args ca2 = table_args(t, 2);
    assert_int_equal(t->client_create(&ca2, &c2, &err), XRT_OK);
    assert_int_equal(t->execute(c2, &ea, &err), XRT_INVALID_ARGUMENT);
    TU_ASSERT_CONTAINS(err.message, "execute: bad arguments");
    t->client_destroy(c2);
  }
  assert_int_equal(t->execute(c, &ea, &err), XRT_OK);
  float got[4];
  memset(got, 0, sizeof got);
  assert_int_equal(t->buffer_read(c, 1, out[0], got, 8, &err), XRT_OK);
  assert_true(got[0] == 11.0f && got[1] == 22.0f && got[2] == 0.0f);
  /* an argument of the wrong size for the program */
  {
    void *small = NULL;
    assert_int_equal(t->buffer_alloc(c, 1, 8, &small, &err), XRT_OK);
    void *bad_in[2] = {in[0], small};
    xrt_plugin_execute_args b = ea;
    b.args = bad_in;
    assert_int_equal(t->execute(c, &b, &err), XRT_INVALID_ARGUMENT);
    TU_ASSERT_CONTAINS(err.message, "an argument of 8 bytes where the "
                                    "program takes 16");
    t->buffer_free(c, 1, small);
  }
  /* staging a PJRT buffer back fails when its download does */
  set_mode("tohost_size");
  assert_int_equal(t->buffer_write(c, 1, in[0], x, 8, &err), XRT_INTERNAL);
  TU_ASSERT_CONTAINS(err.message, "the buffer holds 19 bytes, xrt expects 16");
  set_mode(NULL);
  /* the input, now a PJRT buffer, rewritten in part: staged back */
  const float z2[2] = {-1, -2};
  assert_int_equal(t->buffer_write(c, 1, in[0], z2, 8, &err), XRT_OK);
  assert_int_equal(t->buffer_read(c, 1, in[0], got, 16, &err), XRT_OK);
  assert_true(got[0] == -1.0f && got[1] == -2.0f && got[2] == 3.0f &&
              got[3] == 4.0f);
  /* run again (re-uploads the staged input); the output overwritten whole */
  assert_int_equal(t->execute(c, &ea, &err), XRT_OK);
  assert_int_equal(t->buffer_read(c, 1, out[0], got, 16, &err), XRT_OK);
  assert_true(got[0] == 9.0f && got[1] == 18.0f && got[2] == 33.0f &&
              got[3] == 44.0f);
  assert_int_equal(t->buffer_write(c, 1, out[0], x, 16, &err), XRT_OK);
  assert_int_equal(t->buffer_read(c, 1, out[0], got, 16, &err), XRT_OK);
  assert_memory_equal(got, x, sizeof x);
  /* copied in part to the other device; whole on the same device */
  void *o2 = NULL;
  assert_int_equal(t->buffer_alloc(c, 0, 16, &o2, &err), XRT_OK);
  assert_int_equal(t->buffer_copy(c, 1, out[0], 0, o2, 8, &err), XRT_OK);
  memset(got, 0xff, sizeof got);
  assert_int_equal(t->buffer_read(c, 0, o2, got, 16, &err), XRT_OK);
  assert_true(got[0] == 1.0f && got[1] == 2.0f && got[2] == 0.0f);
  void *o3 = NULL;
  assert_int_equal(t->buffer_alloc(c, 1, 16, &o3, &err), XRT_OK);
  assert_int_equal(t->buffer_copy(c, 1, out[0], 1, o3, 16, &err), XRT_OK);
  assert_int_equal(t->buffer_read(c, 1, o3, got, 16, &err), XRT_OK);
  assert_memory_equal(got, x, sizeof x);
  /* a partial read that cannot stage: out of host memory */
  g_alloc_left = 0;
  assert_int_equal(t->buffer_read(c, 1, out[0], got, 4, &err),
                   XRT_RESOURCE_EXHAUSTED);
  TU_ASSERT_CONTAINS(err.message, "out of host memory reading 16 bytes");
  g_alloc_left = -1;
  t->buffer_free(c, 0, o2);
  t->buffer_free(c, 1, o3);
  t->executable_destroy(exe);
  exe = NULL;

  /* two replicas on devices 1 and 0: participants meet by launch id */
  a.num_replicas = 2;
  const int32_t rev[2] = {1, 0};
  a.device_assignment = rev;
  assert_int_equal(t->compile(c, &a, &exe, &err), XRT_OK);
  void *in0[2], *out0[1], *in1[2], *out1[1];
  for (int i = 0; i < 2; i++) {
    assert_int_equal(t->buffer_alloc(c, 1, 16, &in0[i], &err), XRT_OK);
    assert_int_equal(t->buffer_write(c, 1, in0[i], i ? y : x, 16, &err),
                     XRT_OK);
    assert_int_equal(t->buffer_alloc(c, 0, 16, &in1[i], &err), XRT_OK);
    assert_int_equal(t->buffer_write(c, 0, in1[i], x, 16, &err), XRT_OK);
  }
  assert_int_equal(t->buffer_alloc(c, 1, 16, &out0[0], &err), XRT_OK);
  assert_int_equal(t->buffer_alloc(c, 0, 16, &out1[0], &err), XRT_OK);
  part_run p0, p1;
  memset(&p0, 0, sizeof p0);
  p0.t = t;
  p0.c = c;
  p0.a = ea;
  p0.a.executable = exe;
  p0.a.num_replicas = 2;
  p0.a.args = in0;
  p0.a.outs = out0;
  p0.a.device = 1;
  p0.a.replica = 0;
  p1 = p0;
  p1.a.args = in1;
  p1.a.outs = out1;
  p1.a.device = 0;
  p1.a.replica = 1;
  /* a participant outside the launch */
  p0.a.replica = 2;
  assert_int_equal(t->execute(c, &p0.a, &err), XRT_INVALID_ARGUMENT);
  TU_ASSERT_CONTAINS(err.message, "participant (2, 0) of a 2 x 1 launch, "
                                  "compiled for 2");
  p0.a.replica = -1;
  assert_int_equal(t->execute(c, &p0.a, &err), XRT_INVALID_ARGUMENT);
  p0.a.replica = 0;
  p0.a.partition = 1;
  assert_int_equal(t->execute(c, &p0.a, &err), XRT_INVALID_ARGUMENT);
  p0.a.partition = -1;
  assert_int_equal(t->execute(c, &p0.a, &err), XRT_INVALID_ARGUMENT);
  p0.a.partition = 0;
  p0.a.num_replicas = 4;
  p0.a.num_partitions = 1;
  assert_int_equal(t->execute(c, &p0.a, &err), XRT_INVALID_ARGUMENT);
  TU_ASSERT_CONTAINS(err.message, "participant (0, 0) of a 4 x 1 launch, "
                                  "compiled for 2");
  p0.a.num_replicas = 2;
  /* the launch runs */
  p0.a.launch_id = p1.a.launch_id = 100;
  run_pair(&p0, &p1);
  assert_int_equal(p0.s, XRT_OK);
  assert_int_equal(p1.s, XRT_OK);
  assert_int_equal(t->buffer_read(c, 1, out0[0], got, 16, &err), XRT_OK);
  assert_true(got[0] == 11.0f && got[3] == 44.0f);
  assert_int_equal(t->buffer_read(c, 0, out1[0], got, 16, &err), XRT_OK);
  assert_true(got[0] == 2.0f && got[3] == 8.0f);
  /* one participant aborted: both fail with its message */
  p0.a.launch_id = p1.a.launch_id = 101;
  p1.a.abort_message = "input lost";
  run_pair(&p0, &p1);
  assert_int_equal(p0.s, XRT_ABORTED);
  assert_int_equal(p1.s, XRT_ABORTED);
  assert_string_equal(p0.err.message, "input lost");
  /* both aborted: the first message that arrived is the launch's */
  p0.a.launch_id = p1.a.launch_id = 105;
  p0.a.abort_message = "input lost";
  run_pair(&p0, &p1);
  assert_int_equal(p0.s, XRT_ABORTED);
  assert_int_equal(p1.s, XRT_ABORTED);
  assert_string_equal(p1.err.message, "input lost");
  p0.a.abort_message = NULL;
  p1.a.abort_message = NULL;
  /* both claim replica 0 */
  p0.a.launch_id = p1.a.launch_id = 102;
  p1.a.replica = 0;
  run_pair(&p0, &p1);
  assert_int_equal(p0.s, XRT_INTERNAL);
  TU_ASSERT_CONTAINS(p0.err.message,
                     "two participants of launch 102 are one logical id");
  /* replica 1 on the device of replica 0 (and the other way round) */
  p0.a.launch_id = p1.a.launch_id = 103;
  p1.a.replica = 1;
  p0.a.device = 0;
  p1.a.device = 1;
  run_pair(&p0, &p1);
  assert_int_equal(p1.s, XRT_UNIMPLEMENTED);
  TU_ASSERT_CONTAINS(p1.err.message, "launch 103 runs on other devices than "
                                     "it was compiled for");
  /* out of memory gathering a launch */
  g_alloc_left = 0;
  p0.a.launch_id = 104;
  assert_int_equal(t->execute(c, &p0.a, &err), XRT_RESOURCE_EXHAUSTED);
  TU_ASSERT_CONTAINS(err.message, "out of host memory gathering a launch");
  g_alloc_left = -1;
  for (int i = 0; i < 2; i++) {
    t->buffer_free(c, 1, in0[i]);
    t->buffer_free(c, 0, in1[i]);
  }
  t->buffer_free(c, 1, out0[0]);
  t->buffer_free(c, 0, out1[0]);
  t->executable_destroy(exe);
  for (int i = 0; i < 2; i++) t->buffer_free(c, 1, in[i]);
  t->buffer_free(c, 1, out[0]);
  xrt_program_release(prog);
  t->client_destroy(c);
  assert_int_equal(g_alloc_live, 0);
  xrt_pjrt_plugin_unwrap(t);
  dlclose(dl);
}

static xrt_status never_called_host_fn(void *user, xrt_host_call *call) {
  (void)user;
  (void)call;
  fail_msg("a host function ran under a PJRT plugin");
  return XRT_INTERNAL;
}

/* Programs the adapter cannot hand to a PJRT plugin: refused before the
 * plugin sees them, with the reason. */
static void test_compile_limits(void **state) {
  (void)state;
  set_mode(NULL);
  xrt_context *x = tu_context(false);
  load(x, "fp", FAKE_PJRT);
  xrt_client *c = tu_client_of(x, "fp", 2);
  assert_int_equal(xrt_client_register_host_function(
                       c, "my_host_fn", never_called_host_fn, NULL),
                   XRT_OK);
  static const struct {
    const char *src, *entry, *msg;
    xrt_status want;
  } cases[] = {
      {"func.func @foo(%a: tensor<4xf32>, %b: tensor<4xf32>) -> "
       "tensor<4xf32> {\n"
       "  %0 = stablehlo.add %a, %b : tensor<4xf32>\n"
       "  func.return %0 : tensor<4xf32>\n"
       "}\n",
       NULL, "PJRT runs a program's @main; the entry is @foo",
       XRT_UNIMPLEMENTED},
      {"func.func @main(%a: tensor<4xf8E8M0FNU>) -> tensor<4xf8E8M0FNU> {\n"
       "  func.return %a : tensor<4xf8E8M0FNU>\n"
       "}\n",
       NULL, "argument 0 has element type", XRT_UNIMPLEMENTED},
      {"func.func @main(%a: tensor<4xf32>) -> tensor<4xf32> {\n"
       "  %0 = stablehlo.custom_call @my_host_fn(%a) : (tensor<4xf32>) -> "
       "tensor<4xf32>\n"
       "  func.return %0 : tensor<4xf32>\n"
       "}\n",
       NULL, "the program calls host functions", XRT_UNIMPLEMENTED},
  };
  for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
    xrt_compile_options o;
    xrt_compile_options_init(&o);
    o.entry = cases[k].entry;
    xrt_executable *exe = NULL;
    xrt_status s =
        xrt_compile(c, cases[k].src, strlen(cases[k].src), &o, &exe);
    tu_save_error();
    if (s != cases[k].want || !strstr(tu_msg, cases[k].msg))
      fail_msg("case %zu: %s: %s; want %s with \"%s\"", k, xrt_strerror(s),
               tu_msg, xrt_strerror(cases[k].want), cases[k].msg);
    assert_null(exe);
  }
  xrt_client_release(c);
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

/* 17 arguments through the adapter on libxrt_pjrt.so: past the adapter's
 * stack arrays for one launch. */
static void test_xrt_pjrt_so_wide(void **state) {
  (void)state;
  if (!have_pjrt_so()) return;
  enum { N = 17 };
  char src[2048];
  size_t k = (size_t)snprintf(src, sizeof src, "func.func @main(");
  for (int i = 0; i < N; i++)
    k += (size_t)snprintf(src + k, sizeof src - k, "%s%%a%d: tensor<f32>",
                          i ? ", " : "", i);
  snprintf(src + k, sizeof src - k,
           ") -> tensor<f32> {\n"
           "  %%0 = stablehlo.multiply %%a0, %%a%d : tensor<f32>\n"
           "  func.return %%0 : tensor<f32>\n}\n",
           N - 1);
  xrt_context *x = tu_context(false);
  load(x, NULL, XRT_TEST_PJRT_SO);
  xrt_client *c = tu_client_of(x, "xrt_pjrt", 1);
  xrt_executable *exe = tu_compile(c, src, 0, NULL);
  xrt_buffer *in[N], *out = NULL;
  xrt_shape s;
  memset(&s, 0, sizeof s);
  s.dtype = XRT_F32; /* rank 0 */
  for (int i = 0; i < N; i++) {
    float v = (float)i + 0.5f;
    assert_int_equal(xrt_buffer_from_host(c, xrt_client_device(c, 0), &s, &v,
                                          &in[i]), XRT_OK);
  }
  if (xrt_execute(exe, xrt_client_device(c, 0), in, N, &out, 1, NULL))
    fail_msg("execute: %s", xrt_last_error());
  float got = 0;
  assert_int_equal(xrt_buffer_to_host(out, &got, sizeof got), XRT_OK);
  assert_true(got == 0.5f * 16.5f);
  xrt_buffer_release(out);
  for (int i = 0; i < N; i++) xrt_buffer_release(in[i]);
  xrt_client_release(c);
  assert_int_equal(xrt_context_release(x), XRT_OK);
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
      cmocka_unit_test(test_more_misbehaviour),
      cmocka_unit_test(test_versions_and_describe),
      cmocka_unit_test(test_not_a_plugin),
      cmocka_unit_test(test_table_direct),
      cmocka_unit_test(test_compile_limits),
      cmocka_unit_test(test_table_compile_execute),
      cmocka_unit_test(test_xrt_pjrt_so),
      cmocka_unit_test(test_xrt_pjrt_so_wide),
      cmocka_unit_test(test_dispatch_time),
  };
  (void)pin; /* held until exit */
  return cmocka_run_group_tests(tests, NULL, NULL);
}
