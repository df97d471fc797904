/*
 * test_plugins.c - contexts, the plugin loader and its checks (issue #6):
 * ABI versions and table sizes, duplicate loads, missing symbols, corrupt
 * and missing files, directory scans, XRT_PLUGINS, misbehaving plugins,
 * unload/reload, two plugins side by side, topology, exclusive access,
 * StableHLO versions and support queries.
 *
 * The fake plugins are test/plugins/fake_*.c, built into
 * XRT_TEST_FAKE_DIR/fake_*.so (see fake_plugin.h for what they do).
 */
#if !defined(_POSIX_C_SOURCE) || _POSIX_C_SOURCE < 200809L
#undef _POSIX_C_SOURCE
#define _POSIX_C_SOURCE 200809L
#endif

#include "test_util.h"

#include <fcntl.h>
#include <pthread.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#ifndef XRT_TEST_FAKE_DIR
#define XRT_TEST_FAKE_DIR "build/plugins"
#endif

/* ---- helpers ---- */

static const char *fake(const char *name) {
  static char buf[4][512];
  static int k;
  char *b = buf[k++ % 4];
  snprintf(b, sizeof buf[0], "%s/%s.so", XRT_TEST_FAKE_DIR, name);
  return b;
}

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

static xrt_plugin *load(xrt_context *x, const char *name, const char *path) {
  xrt_plugin *p = NULL;
  xrt_status s = xrt_context_load_plugin(x, name, path, &p);
  if (s) fail_msg("loading %s: %s", path, xrt_last_error());
  assert_non_null(p);
  return p;
}

static xrt_status try_client(xrt_context *x, const char *plugin,
                             xrt_client **out) {
  xrt_client_options o = tu_client_options(x, plugin, 0);
  *out = NULL;
  return xrt_client_create(&o, out);
}

/* The plugin's info; fails the test if it cannot be read. */
static xrt_plugin_info info_of(xrt_plugin *p) {
  xrt_plugin_info info;
  assert_int_equal(xrt_plugin_get_info(p, &info), XRT_OK);
  return info;
}

/* A fresh temporary directory (removed by rm_tree). */
static void make_tmpdir(char *dir, size_t cap) {
  snprintf(dir, cap, "/tmp/xrt_test_plugins_XXXXXX");
  assert_non_null(mkdtemp(dir));
}

static void rm_tree(const char *dir, const char *const *names, int n) {
  char p[1024];
  for (int i = 0; i < n; i++) {
    snprintf(p, sizeof p, "%s/%s", dir, names[i]);
    unlink(p);
  }
  rmdir(dir);
}

/* An absolute path to a fake (symlinks must not depend on the cwd). */
static void abs_fake(const char *name, char *out, size_t cap) {
  char cwd[512];
  assert_non_null(getcwd(cwd, sizeof cwd));
  const char *p = fake(name);
  int w = p[0] == '/' ? snprintf(out, cap, "%s", p)
                      : snprintf(out, cap, "%s/%s", cwd, p);
  assert_true(w > 0 && (size_t)w < cap);
}

/* Line and column (1-based) of the first occurrence of needle in text. */
static void loc_in(const char *text, const char *needle, int *line,
                   int *col) {
  const char *at = strstr(text, needle);
  assert_non_null(at);
  *line = 1;
  const char *ls = text;
  for (const char *q = text; q < at; q++)
    if (*q == '\n') {
      (*line)++;
      ls = q + 1;
    }
  *col = (int)(at - ls) + 1;
}

static void round_trip_f32(xrt_client *c, int dev) {
  float in[5], out[5];
  for (int i = 0; i < 5; i++) in[i] = 1.5f * (float)i - 2.0f;
  xrt_shape sh = TU_SHAPE(XRT_F32, 5);
  xrt_buffer *b = NULL;
  assert_int_equal(xrt_buffer_from_host(c, xrt_client_device(c, dev), &sh, in,
                                        &b), XRT_OK);
  memset(out, 0, sizeof out);
  assert_int_equal(xrt_buffer_to_host(b, out, sizeof out), XRT_OK);
  for (int i = 0; i < 5; i++) assert_true(out[i] == 1.5f * (float)i - 2.0f);
  assert_int_equal(xrt_buffer_release(b), XRT_OK);
}

/* ---- ABI versions and table checks ---- */

static void test_old_table_loads_and_works(void **state) {
  (void)state;
  xrt_context *x = tu_context(false);
  xrt_plugin *p = load(x, NULL, fake("fake_old"));
  xrt_plugin_info info = info_of(p);
  assert_string_equal(info.name, "fake_old");
  assert_string_equal(info.platform_name, "fake_old");
  assert_string_equal(info.platform_version, "0.2.0");
  assert_int_equal(info.abi_major, 1);
  assert_int_equal(info.abi_minor, 0);
  /* Defaults for what an older plugin cannot report. */
  assert_string_equal(info.stablehlo_min, "0.0.0");
  assert_string_equal(info.stablehlo_max, xrt_stablehlo_version());
  assert_int_equal(info.capabilities, 0);
  for (int t = 1; t < XRT_DTYPE_COUNT; t++)
    assert_true(info.dtypes & ((uint64_t)1 << t));
  assert_int_equal(info.num_attributes, 0);

  xrt_client *c = tu_client_of(x, "fake_old", 2);
  assert_int_equal(xrt_client_device_count(c), 2);
  assert_string_equal(xrt_device_kind(xrt_client_device(c, 1)),
                      "fake_old_device");
  round_trip_f32(c, 0);
  round_trip_f32(c, 1);

  /* Functions it left NULL (buffer_copy, inject_fault) and the newer ones
   * (op_support) answer, never crash. */
  float v[2] = {1, 2};
  xrt_shape sh = TU_SHAPE(XRT_F32, 2);
  xrt_buffer *b = NULL, *b2 = NULL;
  assert_int_equal(xrt_buffer_from_host(c, xrt_client_device(c, 0), &sh, v,
                                        &b), XRT_OK);
  expect_fail(xrt_buffer_copy_to_device(b, xrt_client_device(c, 1), &b2),
              XRT_UNIMPLEMENTED,
              "plugin 'fake_old' does not implement buffer_copy", NULL);
  assert_null(b2);
  expect_fail(xrt_device_inject_fault(xrt_client_device(c, 0), 0),
              XRT_UNIMPLEMENTED,
              "plugin 'fake_old' does not implement inject_fault", NULL);
  const char *prog = "func.func @main(%a: tensor<2xf32>) -> tensor<2xf32> {\n"
                     "  %0 = stablehlo.add %a, %a : tensor<2xf32>\n"
                     "  func.return %0 : tensor<2xf32>\n"
                     "}\n";
  xrt_program *pg = NULL;
  assert_int_equal(xrt_program_parse(prog, strlen(prog), NULL, &pg), XRT_OK);
  xrt_support_report *r = NULL;
  assert_int_equal(xrt_client_query_support(c, pg, NULL, &r), XRT_OK);
  assert_int_equal(xrt_support_report_verdict(r), XRT_SUPPORT_MAYBE);
  assert_int_equal(xrt_support_report_count(r), 2); /* add, func.return */
  const xrt_support_issue *is = xrt_support_report_issue(r, 0);
  assert_string_equal(is->op, "stablehlo.add");
  assert_int_equal(is->verdict, XRT_SUPPORT_MAYBE);
  TU_ASSERT_CONTAINS(is->reason, "op_support");
  xrt_support_report_release(r);
  xrt_program_release(pg);
  assert_int_equal(xrt_buffer_release(b), XRT_OK);
  xrt_client_release(c);
  assert_int_equal(xrt_context_release(x), XRT_OK);
}

static void test_other_abi_versions_refused(void **state) {
  (void)state;
  xrt_context *x = tu_context(false);
  xrt_plugin *p = (xrt_plugin *)(uintptr_t)1;
  char want[64];
  snprintf(want, sizeof want, "ABI %d.3", XRT_PLUGIN_ABI_MAJOR + 1);
  char ours[64];
  snprintf(ours, sizeof ours, "ABI %d.%d", XRT_PLUGIN_ABI_MAJOR,
           XRT_PLUGIN_ABI_MINOR);
  expect_fail(xrt_context_load_plugin(x, NULL, fake("fake_major"), &p),
              XRT_FAILED_PRECONDITION, "fake_major", want, ours,
              "major version", NULL);
  assert_null(p);
  /* The pre-1.0 ABI 0.2 is an older major: refused the same way. */
  expect_fail(xrt_context_load_plugin(x, NULL, fake("fake_abi0"), &p),
              XRT_FAILED_PRECONDITION, "fake_abi0", "ABI 0.2", ours,
              "major version", NULL);
  assert_int_equal(xrt_context_plugin_count(x), 0);
  /* A statically linked table is checked the same way. */
  xrt_plugin_api t = *xrt_sim_plugin_api();
  t.abi_major = XRT_PLUGIN_ABI_MAJOR + 1;
  char sim9[64];
  snprintf(sim9, sizeof sim9, "ABI %d.%d", XRT_PLUGIN_ABI_MAJOR + 1,
           (int)t.abi_minor);
  expect_fail(xrt_context_register_plugin(x, "sim9", &t, NULL),
              XRT_FAILED_PRECONDITION, "sim9", sim9, ours, NULL);
  assert_int_equal(xrt_context_release(x), XRT_OK);
}

static void test_table_size_and_name_checked(void **state) {
  (void)state;
  xrt_context *x = tu_context(false);
  char small[64];
  snprintf(small, sizeof small, "struct_size is %zu bytes",
           offsetof(xrt_plugin_api, compile));
  expect_fail(xrt_context_load_plugin(x, NULL, fake("fake_small"), NULL),
              XRT_FAILED_PRECONDITION, small, "smaller", "execute", NULL);
  expect_fail(xrt_context_load_plugin(x, NULL, fake("fake_huge"), NULL),
              XRT_FAILED_PRECONDITION, "struct_size is 1048576 bytes",
              "not an xrt plugin table", NULL);
  expect_fail(xrt_context_load_plugin(x, NULL, fake("fake_noname"), NULL),
              XRT_FAILED_PRECONDITION, "name is NULL", NULL);
  expect_fail(xrt_context_load_plugin(x, NULL, fake("fake_nullapi"), NULL),
              XRT_FAILED_PRECONDITION, "xrt_plugin_get_api() returned NULL",
              NULL);
  assert_int_equal(xrt_context_plugin_count(x), 0);
  /* A table that implements nothing loads, and answers UNIMPLEMENTED. */
  load(x, NULL, fake("fake_empty"));
  xrt_client *c = (xrt_client *)(uintptr_t)1;
  expect_fail(try_client(x, "fake_empty", &c), XRT_UNIMPLEMENTED,
              "plugin 'fake_empty' does not implement client_create", NULL);
  assert_null(c);
  assert_int_equal(xrt_context_release(x), XRT_OK);
}

/* ---- loading ---- */

static void test_duplicate_loads_share_a_registration(void **state) {
  (void)state;
  xrt_context *x = tu_context(false);
  xrt_plugin *a = load(x, NULL, fake("fake_a"));
  assert_ptr_equal(load(x, NULL, fake("fake_a")), a);
  assert_ptr_equal(load(x, "fake_a", fake("fake_a")), a);
  /* Through a symbolic link in another directory: the same file. */
  char dir[256], link[512], target[512];
  make_tmpdir(dir, sizeof dir);
  abs_fake("fake_a", target, sizeof target);
  snprintf(link, sizeof link, "%s/other_name.so", dir);
  assert_int_equal(symlink(target, link), 0);
  assert_ptr_equal(load(x, NULL, link), a);
  assert_int_equal(xrt_context_plugin_count(x), 1);
  assert_ptr_equal(xrt_context_plugin(x, 0), a);
  assert_ptr_equal(xrt_context_find_plugin(x, "fake_a"), a);
  /* Another library under a taken name. */
  expect_fail(xrt_context_load_plugin(x, "fake_a", fake("fake_b"), NULL),
              XRT_ALREADY_EXISTS, "'fake_a'", NULL);
  assert_int_equal(xrt_context_plugin_count(x), 1);
  const char *names[] = {"other_name.so"};
  rm_tree(dir, names, 1);
  assert_int_equal(xrt_context_release(x), XRT_OK);
}

static void test_missing_symbol_corrupt_and_missing_files(void **state) {
  (void)state;
  xrt_context *x = tu_context(false);
  expect_fail(xrt_context_load_plugin(x, NULL, fake("fake_nosym"), NULL),
              XRT_NOT_FOUND, fake("fake_nosym"), "xrt_plugin_get_api",
              "not an xrt plugin", NULL);
  char dir[256], bad[512];
  make_tmpdir(dir, sizeof dir);
  snprintf(bad, sizeof bad, "%s/x.so", dir);
  unsigned char junk[4096];
  for (size_t i = 0; i < sizeof junk; i++)
    junk[i] = (unsigned char)(i * 131u + 7u);
  tu_write_file(bad, junk, sizeof junk);
  /* The loader's own reason comes along ("invalid ELF header"). */
  expect_fail(xrt_context_load_plugin(x, NULL, bad, NULL),
              XRT_INVALID_ARGUMENT, bad, "not a loadable shared library",
              "ELF", NULL);
  char none[512];
  snprintf(none, sizeof none, "%s/does_not_exist.so", dir);
  expect_fail(xrt_context_load_plugin(x, NULL, none, NULL), XRT_NOT_FOUND,
              none, "No such file", NULL);
  expect_fail(xrt_context_load_plugin(x, NULL, dir, NULL),
              XRT_INVALID_ARGUMENT, "directory", NULL);
  expect_fail(xrt_context_load_plugin(x, NULL, NULL, NULL),
              XRT_INVALID_ARGUMENT, "path", NULL);
  expect_fail(xrt_context_load_plugin(NULL, NULL, fake("fake_a"), NULL),
              XRT_INVALID_ARGUMENT, "context", NULL);
  assert_int_equal(xrt_context_plugin_count(x), 0);
  const char *names[] = {"x.so"};
  rm_tree(dir, names, 1);
  assert_int_equal(xrt_context_release(x), XRT_OK);
}

static void test_directory_scan(void **state) {
  (void)state;
  char dir[256], p[512], t[512];
  make_tmpdir(dir, sizeof dir);
  const char *links[] = {"fake_a", "fake_b", "fake_nosym"};
  for (int i = 0; i < 3; i++) {
    abs_fake(links[i], t, sizeof t);
    snprintf(p, sizeof p, "%s/%s.so", dir, links[i]);
    assert_int_equal(symlink(t, p), 0);
  }
  snprintf(p, sizeof p, "%s/garbage.so", dir);
  tu_write_file(p, "not an ELF file", 15);
  snprintf(p, sizeof p, "%s/notes.txt", dir);
  tu_write_file(p, "hello", 5);
  snprintf(p, sizeof p, "%s/dangling.so", dir);
  assert_int_equal(symlink("/nonexistent/dangling.so", p), 0);

  xrt_context *x = tu_context(false);
  int n = -1;
  assert_int_equal(xrt_context_scan_directory(x, dir, &n), XRT_OK);
  assert_int_equal(n, 2); /* fake_a, fake_b: the other .so files skipped */
  assert_int_equal(xrt_context_plugin_count(x), 2);
  assert_non_null(xrt_context_find_plugin(x, "fake_a"));
  assert_non_null(xrt_context_find_plugin(x, "fake_b"));
  assert_null(xrt_context_find_plugin(x, "fake_nosym"));
  /* Again: the same registrations, nothing new. */
  assert_int_equal(xrt_context_scan_directory(x, dir, &n), XRT_OK);
  assert_int_equal(n, 2);
  assert_int_equal(xrt_context_plugin_count(x), 2);
  xrt_client *c = tu_client_of(x, "fake_b", 1);
  round_trip_f32(c, 0);
  xrt_client_release(c);
  assert_int_equal(xrt_context_release(x), XRT_OK);

  /* A library with the symbol that fails its checks fails the scan. */
  abs_fake("fake_major", t, sizeof t);
  snprintf(p, sizeof p, "%s/fake_major.so", dir);
  assert_int_equal(symlink(t, p), 0);
  x = tu_context(false);
  expect_fail(xrt_context_scan_directory(x, dir, &n), XRT_FAILED_PRECONDITION,
              "fake_major", NULL);
  assert_int_equal(xrt_context_release(x), XRT_OK);

  const char *names[] = {"fake_a.so",  "fake_b.so",     "fake_nosym.so",
                         "garbage.so", "notes.txt",     "fake_major.so",
                         "dangling.so"};
  rm_tree(dir, names, 7);
  x = tu_context(false);
  expect_fail(xrt_context_scan_directory(x, dir, &n), XRT_NOT_FOUND, dir,
              NULL);
  assert_int_equal(n, 0);
  assert_int_equal(xrt_context_release(x), XRT_OK);
}

static void test_xrt_plugins_environment(void **state) {
  (void)state;
  char spec[2048];
  snprintf(spec, sizeof spec, "fa:%s, fb:%s,", fake("fake_a"),
           fake("fake_b"));
  assert_int_equal(setenv("XRT_PLUGINS", spec, 1), 0);
  xrt_context *x = NULL;
  assert_int_equal(xrt_context_create(NULL, &x), XRT_OK);
  assert_int_equal(xrt_context_plugin_count(x), 3); /* sim, fa, fb */
  xrt_plugin_info info;
  assert_int_equal(xrt_plugin_get_info(xrt_context_plugin(x, 0), &info),
                   XRT_OK);
  assert_string_equal(info.name, "sim");
  assert_string_equal(info.path, "");
  assert_int_equal(xrt_plugin_get_info(xrt_context_find_plugin(x, "fb"),
                                       &info), XRT_OK);
  assert_string_equal(info.name, "fb");
  assert_string_equal(info.platform_name, "fake_b");
  assert_string_equal(info.path, fake("fake_b"));
  xrt_client *c = tu_client_of(x, "fa", 1);
  round_trip_f32(c, 0);
  xrt_client_release(c);
  assert_int_equal(xrt_context_release(x), XRT_OK);

  /* Malformed and failing entries are named. */
  snprintf(spec, sizeof spec, "fa:%s,oops", fake("fake_a"));
  assert_int_equal(setenv("XRT_PLUGINS", spec, 1), 0);
  x = (xrt_context *)(uintptr_t)1;
  expect_fail(xrt_context_create(NULL, &x), XRT_INVALID_ARGUMENT,
              "XRT_PLUGINS entry 2", "'oops'", "name:path", NULL);
  assert_null(x);
  assert_int_equal(setenv("XRT_PLUGINS", "fx:/nonexistent/fx.so", 1), 0);
  expect_fail(xrt_context_create(NULL, &x), XRT_NOT_FOUND,
              "XRT_PLUGINS entry 1", "/nonexistent/fx.so", NULL);
  assert_int_equal(unsetenv("XRT_PLUGINS"), 0);

  /* The same syntax from a string. */
  x = tu_context(false);
  snprintf(spec, sizeof spec, "one:%s", fake("fake_a"));
  assert_int_equal(xrt_context_load_env(x, spec), XRT_OK);
  assert_non_null(xrt_context_find_plugin(x, "one"));
  expect_fail(xrt_context_load_env(x, ":x.so"), XRT_INVALID_ARGUMENT,
              "entry 1", NULL);
  assert_int_equal(xrt_context_load_env(x, ""), XRT_OK);
  assert_int_equal(xrt_context_plugin_count(x), 1);
  assert_int_equal(xrt_context_release(x), XRT_OK);
}

/* ---- plugins that misbehave ---- */

typedef struct bad_case {
  const char *mode;
  int stage; /* 0 load, 1 client, 2 upload, 3 download, 4 compile, 5 query */
  xrt_status code;
  const char *sub;
} bad_case;

static const char *bad_prog =
    "func.func @main(%a: tensor<2xf32>) -> tensor<2xf32> {\n"
    "  func.return %a : tensor<2xf32>\n"
    "}\n";

/* Runs the stages in order up to the one that must fail; every earlier
 * one must succeed.  Returns the status of the failing stage. */
static xrt_status bad_run(xrt_context *x, int stage) {
  xrt_status s = xrt_context_load_plugin(x, NULL, fake("fake_bad"), NULL);
  if (s || stage == 0) return s;
  xrt_client *c = NULL;
  s = try_client(x, "fake_bad", &c);
  if (s || stage == 1) {
    assert_true(s || c);
    xrt_client_release(c);
    return s;
  }
  float v[2] = {1, 2}, w[2];
  xrt_shape sh = TU_SHAPE(XRT_F32, 2);
  xrt_buffer *b = NULL;
  s = xrt_buffer_from_host(c, xrt_client_device(c, 0), &sh, v, &b);
  if (!s && stage >= 3) s = xrt_buffer_to_host(b, w, sizeof w);
  if (!s && stage >= 4) {
    xrt_executable *e = NULL;
    s = xrt_compile(c, bad_prog, strlen(bad_prog), NULL, &e);
    if (!s && stage == 4) fail_msg("compile succeeded");
    if (e) xrt_executable_release(e);
  }
  if (!s && stage == 5) {
    xrt_program *p = NULL;
    xrt_support_report *r = NULL;
    assert_int_equal(xrt_program_parse(bad_prog, strlen(bad_prog), NULL, &p),
                     XRT_OK);
    s = xrt_client_query_support(c, p, NULL, &r);
    assert_true(s || r);
    xrt_support_report_release(r);
    xrt_program_release(p);
  }
  tu_save_error(); /* before the releases below */
  if (b) assert_int_equal(xrt_buffer_release(b), XRT_OK);
  xrt_client_release(c);
  return s;
}

static void test_plugin_returning_garbage(void **state) {
  (void)state;
  static const bad_case cases[] = {
      {"platform_err", 0, XRT_INTERNAL, "cannot describe"},
      {"platform_badver", 0, XRT_FAILED_PRECONDITION, "one.two"},
      {"create_err", 1, XRT_UNAVAILABLE, "no device today"},
      {"create_null", 1, XRT_INTERNAL, "without a client"},
      {"count_neg", 1, XRT_INTERNAL, "reports -1 devices"},
      {"count_huge", 1, XRT_INTERNAL, "reports 1073741824 devices"},
      {"count_null", 1, XRT_UNIMPLEMENTED, "does not implement device_count"},
      {"describe_err", 1, XRT_INTERNAL, "on fire"},
      {"describe_nokind", 1, XRT_INTERNAL, "without a kind"},
      {"describe_badattrs", 1, XRT_INTERNAL, "6 attributes"},
      {"alloc_err", 2, XRT_RESOURCE_EXHAUSTED, "memory is full"},
      {"alloc_null", 2, XRT_INTERNAL, "without memory"},
      {"write_err", 2, XRT_DATA_LOSS, "write failed"},
      {"read_err", 3, XRT_DATA_LOSS, "read failed"},
      {"compile_null", 4, XRT_INTERNAL, "without an executable"},
      {"op_garbage", 5, XRT_INTERNAL, "returned 7"},
  };
  for (size_t i = 0; i < TU_COUNT(cases); i++) {
    const bad_case *k = &cases[i];
    assert_int_equal(setenv("FAKE_BAD_MODE", k->mode, 1), 0);
    xrt_context *x = tu_context(false);
    xrt_status s = bad_run(x, k->stage);
    if (k->stage >= 2) { /* bad_run saved the message in tu_msg */
      if (s != k->code)
        fail_msg("%s: status %s, want %s (%s)", k->mode, xrt_strerror(s),
                 xrt_strerror(k->code), tu_msg);
      TU_ASSERT_CONTAINS(tu_msg, k->sub);
      TU_ASSERT_CONTAINS(tu_msg, "fake_bad");
    } else {
      expect_fail(s, k->code, k->sub, "fake_bad", NULL);
    }
    assert_int_equal(xrt_context_release(x), XRT_OK);
  }
  assert_int_equal(unsetenv("FAKE_BAD_MODE"), 0);
  /* And the plugin is fine when it behaves. */
  xrt_context *x = tu_context(false);
  assert_int_equal(bad_run(x, 5), XRT_OK);
  assert_int_equal(xrt_context_release(x), XRT_OK);
}

/* ---- unload, reload, release ---- */

static void test_unload_and_reload(void **state) {
  (void)state;
  xrt_context *x = tu_context(false);
  xrt_plugin *p = load(x, NULL, fake("fake_a"));
  xrt_client *c = tu_client_of(x, "fake_a", 1);
  assert_ptr_equal(xrt_client_plugin(c), p);
  float v[3] = {4, 5, 6};
  xrt_shape sh = TU_SHAPE(XRT_F32, 3);
  xrt_buffer *b = NULL;
  assert_int_equal(xrt_buffer_from_host(c, xrt_client_device(c, 0), &sh, v,
                                        &b), XRT_OK);
  expect_fail(xrt_context_unload_plugin(x, p), XRT_FAILED_PRECONDITION,
              "fake_a", "1 live client", NULL);
  expect_fail(xrt_context_release(x), XRT_FAILED_PRECONDITION, "1 live",
              NULL);
  /* Still usable after the refusals. */
  float w[3] = {0};
  assert_int_equal(xrt_buffer_to_host(b, w, sizeof w), XRT_OK);
  for (int i = 0; i < 3; i++) assert_true(w[i] == v[i]);
  xrt_client_release(c); /* its buffer goes with it */
  assert_int_equal(xrt_context_unload_plugin(x, p), XRT_OK);
  assert_int_equal(xrt_context_plugin_count(x), 0);
  xrt_plugin_info info;
  expect_fail(xrt_plugin_get_info(p, &info), XRT_INVALID_ARGUMENT, "plugin",
              NULL);
  expect_fail(xrt_context_unload_plugin(x, p), XRT_INVALID_ARGUMENT, NULL);
  xrt_client *none = NULL;
  expect_fail(try_client(x, "fake_a", &none), XRT_NOT_FOUND, "fake_a", NULL);
  /* Reload: a new registration that works. */
  xrt_plugin *p2 = load(x, NULL, fake("fake_a"));
  assert_int_equal(xrt_plugin_get_info(p2, &info), XRT_OK);
  assert_string_equal(info.name, "fake_a");
  c = tu_client_of(x, "fake_a", 1);
  round_trip_f32(c, 0);
  xrt_client_release(c);
  assert_int_equal(xrt_context_release(x), XRT_OK);
  expect_fail(xrt_context_release(x), XRT_INVALID_ARGUMENT, "context", NULL);
  assert_int_equal(xrt_context_release(NULL), XRT_OK);
}

/* ---- two plugins at once ---- */

static void test_two_plugins_through_the_host(void **state) {
  (void)state;
  xrt_context *x = tu_context(true);
  load(x, NULL, fake("fake_a"));
  xrt_client *sim = tu_client_of(x, "sim", 1);
  xrt_client *fa = tu_client_of(x, "fake_a", 2);
  assert_string_equal(xrt_client_platform(sim), "sim");
  assert_string_equal(xrt_client_platform(fa), "fake_a");
  enum { N = 6 };
  float x0[N], host[N], got[N];
  for (int i = 0; i < N; i++) x0[i] = (float)(i * i) - 3.25f;
  xrt_shape sh = TU_SHAPE(XRT_F32, N);
  /* fake_a device 1 -> host -> sim: y = x * x + x -> host -> fake_a. */
  xrt_buffer *on_fa = NULL, *on_sim = NULL, *out = NULL, *back = NULL;
  assert_int_equal(xrt_buffer_from_host(fa, xrt_client_device(fa, 1), &sh,
                                        x0, &on_fa), XRT_OK);
  assert_int_equal(xrt_buffer_to_host(on_fa, host, sizeof host), XRT_OK);
  assert_int_equal(xrt_buffer_from_host(sim, xrt_client_device(sim, 0), &sh,
                                        host, &on_sim), XRT_OK);
  const char *prog = "func.func @main(%a: tensor<6xf32>) -> tensor<6xf32> {\n"
                     "  %0 = stablehlo.multiply %a, %a : tensor<6xf32>\n"
                     "  %1 = stablehlo.add %0, %a : tensor<6xf32>\n"
                     "  func.return %1 : tensor<6xf32>\n"
                     "}\n";
  xrt_executable *e = tu_compile(sim, prog, 1, NULL);
  assert_int_equal(xrt_execute(e, xrt_client_device(sim, 0), &on_sim, 1, &out,
                               1, NULL), XRT_OK);
  assert_int_equal(xrt_buffer_to_host(out, host, sizeof host), XRT_OK);
  assert_int_equal(xrt_buffer_from_host(fa, xrt_client_device(fa, 0), &sh,
                                        host, &back), XRT_OK);
  assert_int_equal(xrt_buffer_to_host(back, got, sizeof got), XRT_OK);
  for (int i = 0; i < N; i++) assert_true(got[i] == x0[i] * x0[i] + x0[i]);
  xrt_client_release(fa);
  xrt_client_release(sim);
  assert_int_equal(xrt_context_release(x), XRT_OK);
}

static void test_static_registration(void **state) {
  (void)state;
  xrt_context *x = tu_context(false);
  xrt_plugin *p = NULL, *q = NULL;
  assert_int_equal(xrt_context_register_plugin(x, NULL, xrt_sim_plugin_api(),
                                               &p), XRT_OK);
  assert_int_equal(xrt_context_register_plugin(x, NULL, xrt_sim_plugin_api(),
                                               &q), XRT_OK);
  assert_ptr_equal(p, q);
  xrt_plugin_api copy = *xrt_sim_plugin_api();
  expect_fail(xrt_context_register_plugin(x, "sim", &copy, NULL),
              XRT_ALREADY_EXISTS, "'sim'", NULL);
  assert_int_equal(xrt_context_register_plugin(x, "sim_copy", &copy, &q),
                   XRT_OK);
  assert_true(p != q);
  assert_int_equal(xrt_context_plugin_count(x), 2);
  expect_fail(xrt_context_register_plugin(x, "z", NULL, NULL),
              XRT_INVALID_ARGUMENT, "api", NULL);
  xrt_client *c = tu_client_of(x, "sim_copy", 1);
  float a[3] = {1, -2, 3.5f}, r[3];
  tu_in in = {TU_SHAPE(XRT_F32, 3), a};
  tu_out o;
  TU_RUN_OK(c, "func.func @main(%a: tensor<3xf32>) -> tensor<3xf32> {\n"
               "  %0 = stablehlo.add %a, %a : tensor<3xf32>\n"
               "  func.return %0 : tensor<3xf32>\n}\n", 1, &in, &o);
  memcpy(r, o.data[0], sizeof r);
  for (int i = 0; i < 3; i++) assert_true(r[i] == a[i] + a[i]);
  tu_out_free(&o);
  xrt_client_release(c);
  assert_int_equal(xrt_context_release(x), XRT_OK);
}

/* ---- topology ---- */

static const char *const topo_vars[] = {
    "RANK", "WORLD_SIZE", "LOCAL_RANK", "LOCAL_WORLD_SIZE", "XRT_HOST_INDEX",
    "GROUP_RANK", "NODE_RANK"};

static void clear_topology_env(void) {
  for (size_t i = 0; i < TU_COUNT(topo_vars); i++) unsetenv(topo_vars[i]);
}

/* The topology the fake plugin received, from its device attributes. */
static void plugin_topology(xrt_client *c, int want[5]) {
  static const char *names[5] = {"process_index", "process_count",
                                 "host_index", "local_rank",
                                 "local_world_size"};
  for (int i = 0; i < 5; i++) {
    xrt_attribute a;
    assert_int_equal(xrt_device_attribute_find(xrt_client_device(c, 0),
                                               names[i], &a), XRT_OK);
    assert_int_equal(a.int_value, want[i]);
  }
}

static xrt_status topo_client(xrt_context *x, const xrt_topology *t,
                              xrt_client **out) {
  xrt_client_options o = tu_client_options(x, "fake_a", 0);
  if (t) o.topology = *t;
  *out = NULL;
  return xrt_client_create(&o, out);
}

static void check_topology(xrt_client *c, int pi, int pc, int h, int lr,
                           int lw) {
  xrt_topology t;
  assert_int_equal(xrt_client_topology(c, &t), XRT_OK);
  assert_int_equal(t.process_index, pi);
  assert_int_equal(t.process_count, pc);
  assert_int_equal(t.host_index, h);
  assert_int_equal(t.local_rank, lr);
  assert_int_equal(t.local_world_size, lw);
  int want[5] = {pi, pc, h, lr, lw};
  plugin_topology(c, want);
}

static void test_topology_from_options_and_env(void **state) {
  (void)state;
  clear_topology_env();
  xrt_context *x = tu_context(false);
  load(x, NULL, fake("fake_a"));
  xrt_client *c;
  assert_int_equal(topo_client(x, NULL, &c), XRT_OK);
  check_topology(c, 0, 1, 0, 0, 1); /* nothing set: one process */
  xrt_client_release(c);

  xrt_topology t = {5, 8, 1, 1, 4};
  assert_int_equal(topo_client(x, &t, &c), XRT_OK);
  check_topology(c, 5, 8, 1, 1, 4);
  xrt_client_release(c);

  setenv("RANK", "6", 1);
  setenv("WORLD_SIZE", "16", 1);
  setenv("LOCAL_RANK", "2", 1);
  setenv("LOCAL_WORLD_SIZE", "4", 1);
  setenv("GROUP_RANK", "1", 1);
  setenv("NODE_RANK", "9", 1);
  assert_int_equal(topo_client(x, NULL, &c), XRT_OK);
  check_topology(c, 6, 16, 1, 2, 4); /* GROUP_RANK before NODE_RANK */
  xrt_client_release(c);
  setenv("XRT_HOST_INDEX", "3", 1);
  /* Options win over the environment, field by field. */
  xrt_topology mixed = {-1, -1, -1, 0, -1};
  assert_int_equal(topo_client(x, &mixed, &c), XRT_OK);
  check_topology(c, 6, 16, 3, 0, 4);
  xrt_client_release(c);

  setenv("RANK", "six", 1);
  expect_fail(topo_client(x, NULL, &c), XRT_INVALID_ARGUMENT, "RANK", "'six'",
              NULL);
  assert_null(c);
  setenv("RANK", "16", 1);
  expect_fail(topo_client(x, NULL, &c), XRT_INVALID_ARGUMENT,
              "process_index 16", "RANK", "process_count 16", "WORLD_SIZE",
              NULL);
  setenv("RANK", "1", 1);
  setenv("LOCAL_RANK", "4", 1);
  expect_fail(topo_client(x, NULL, &c), XRT_INVALID_ARGUMENT, "local_rank 4",
              "LOCAL_RANK", "LOCAL_WORLD_SIZE", NULL);
  setenv("LOCAL_RANK", "-1", 1);
  expect_fail(topo_client(x, NULL, &c), XRT_INVALID_ARGUMENT, "LOCAL_RANK",
              NULL);
  clear_topology_env();
  xrt_topology bad = {2, 2, 0, 0, 1};
  expect_fail(topo_client(x, &bad, &c), XRT_INVALID_ARGUMENT,
              "process_index 2", "the options", NULL);
  xrt_topology neg = {0, 1, -5, 0, 1};
  expect_fail(topo_client(x, &neg, &c), XRT_INVALID_ARGUMENT, "host_index",
              NULL);
  assert_int_equal(xrt_context_release(x), XRT_OK);
}

/* ---- exclusive access ---- */

static void test_exclusive_access(void **state) {
  (void)state;
  xrt_context *x = tu_context(false);
  xrt_plugin *p = load(x, NULL, fake("fake_caps"));
  xrt_plugin_info info = info_of(p);
  assert_true(info.capabilities & XRT_CAP_EXCLUSIVE);
  xrt_client *c1 = tu_client_of(x, "fake_caps", 1), *c2 = NULL;
  expect_fail(try_client(x, "fake_caps", &c2), XRT_FAILED_PRECONDITION,
              "device(s) of plugin 'fake_caps' are held by another client "
              "(exclusive access)", NULL);
  assert_null(c2);
  /* A plugin without the capability takes several clients. */
  load(x, NULL, fake("fake_a"));
  xrt_client *a1 = tu_client_of(x, "fake_a", 1), *a2 = tu_client_of(x, "fake_a", 1);
  xrt_client_release(a1);
  xrt_client_release(a2);
  xrt_client_release(c1);
  c2 = tu_client_of(x, "fake_caps", 1);
  round_trip_f32(c2, 0);
  xrt_client_release(c2);
  assert_int_equal(xrt_context_release(x), XRT_OK);
}

/* Threads loading one file into one context, then racing for the
 * exclusive plugin's devices. */
typedef struct race_arg {
  xrt_context *x;
  const char *path;
  xrt_plugin *loaded;
  xrt_status st;
  xrt_client *client;
} race_arg;

static void *race_load(void *p) {
  race_arg *a = (race_arg *)p;
  a->st = xrt_context_load_plugin(a->x, NULL, a->path, &a->loaded);
  if (!a->st) a->st = try_client(a->x, "fake_caps", &a->client);
  return NULL;
}

static void test_concurrent_loads_and_exclusive_clients(void **state) {
  (void)state;
  enum { T = 4 };
  xrt_context *x = tu_context(false);
  race_arg args[T];
  pthread_t th[T];
  for (int i = 0; i < T; i++) {
    memset(&args[i], 0, sizeof args[i]);
    args[i].x = x;
    args[i].path = fake("fake_caps");
    assert_int_equal(pthread_create(&th[i], NULL, race_load, &args[i]), 0);
  }
  int won = 0, refused = 0;
  for (int i = 0; i < T; i++) {
    assert_int_equal(pthread_join(th[i], NULL), 0);
    assert_non_null(args[i].loaded);
    assert_ptr_equal(args[i].loaded, args[0].loaded);
    if (args[i].st == XRT_OK) won++;
    else if (args[i].st == XRT_FAILED_PRECONDITION) refused++;
  }
  /* No thread releases its client before all are joined: exactly one
   * holds the devices, the others were refused. */
  assert_int_equal(won, 1);
  assert_int_equal(refused, T - 1);
  assert_int_equal(xrt_context_plugin_count(x), 1);
  int live = 0;
  for (int i = 0; i < T; i++) live += args[i].client != NULL;
  assert_int_equal(live, 1);
  for (int i = 0; i < T; i++) xrt_client_release(args[i].client);
  assert_int_equal(xrt_context_release(x), XRT_OK);
}

/* ---- StableHLO versions and support queries ---- */

static char *versioned(const char *version) {
  static char buf[1024];
  snprintf(buf, sizeof buf,
           "module attributes {stablehlo.version = \"%s\"} {\n"
           "  func.func @main(%%a: tensor<2xf32>) -> tensor<2xf32> {\n"
           "    %%0 = stablehlo.add %%a, %%a : tensor<2xf32>\n"
           "    func.return %%0 : tensor<2xf32>\n"
           "  }\n"
           "}\n", version);
  return buf;
}

static void test_stablehlo_versions(void **state) {
  (void)state;
  int v[3];
  assert_int_equal(sscanf(xrt_stablehlo_version(), "%d.%d.%d", &v[0], &v[1],
                          &v[2]), 3);
  assert_true(v[0] >= 1);
  xrt_program *p = NULL;
  const char *text = versioned("1.2.0");
  assert_int_equal(xrt_program_parse(text, strlen(text), NULL, &p), XRT_OK);
  assert_string_equal(xrt_program_module(p)->stablehlo_version, "1.2.0");
  xrt_program_release(p);
  const char *plain = "func.func @main(%a: tensor<2xf32>) -> tensor<2xf32> {\n"
                      "  func.return %a : tensor<2xf32>\n}\n";
  assert_int_equal(xrt_program_parse(plain, strlen(plain), NULL, &p), XRT_OK);
  assert_string_equal(xrt_program_module(p)->stablehlo_version,
                      xrt_stablehlo_version());
  xrt_program_release(p);
  /* A malformed version is a located parse error. */
  text = versioned("1.x");
  int line, col;
  loc_in(text, "stablehlo.version", &line, &col);
  char where[64];
  snprintf(where, sizeof where, "<input>:%d:%d:", line, col);
  tu_parse_fails(text, NULL, XRT_INVALID_ARGUMENT, where, "\"1.x\"");
  tu_parse_fails(versioned("1.2"), NULL, XRT_INVALID_ARGUMENT, where,
                 "stablehlo.version");

  /* fake_caps accepts 1.0.0..1.5.0. */
  xrt_context *x = tu_context(false);
  load(x, NULL, fake("fake_caps"));
  xrt_client *c = tu_client_of(x, "fake_caps", 1);
  xrt_executable *e = NULL;
  text = versioned("1.5.0");
  assert_int_equal(xrt_compile(c, text, strlen(text), NULL, &e), XRT_OK);
  xrt_executable_release(e);
  text = versioned("1.0.0");
  assert_int_equal(xrt_compile(c, text, strlen(text), NULL, &e), XRT_OK);
  xrt_executable_release(e);
  e = NULL;
  text = versioned("1.10.0"); /* numerically above 1.5.0 */
  expect_fail(xrt_compile(c, text, strlen(text), NULL, &e), XRT_UNIMPLEMENTED,
              "StableHLO 1.10.0", "fake_caps", "(1.0.0..1.5.0)", NULL);
  assert_null(e);
  text = versioned("0.9.3");
  expect_fail(xrt_compile(c, text, strlen(text), NULL, &e), XRT_UNIMPLEMENTED,
              "StableHLO 0.9.3", "(1.0.0..1.5.0)", NULL);
  /* No attribute: xrt's own version, which is newer than 1.5.0. */
  char own[64];
  snprintf(own, sizeof own, "StableHLO %s", xrt_stablehlo_version());
  expect_fail(xrt_compile(c, plain, strlen(plain), NULL, &e),
              XRT_UNIMPLEMENTED, own, "(1.0.0..1.5.0)", NULL);
  /* The query says NO for the version, at op "module". */
  text = versioned("2.0.0");
  assert_int_equal(xrt_program_parse(text, strlen(text), NULL, &p), XRT_OK);
  xrt_support_report *r = NULL;
  assert_int_equal(xrt_client_query_support(c, p, NULL, &r), XRT_OK);
  assert_int_equal(xrt_support_report_verdict(r), XRT_SUPPORT_NO);
  assert_int_equal(xrt_support_report_count(r), 1);
  const xrt_support_issue *is = xrt_support_report_issue(r, 0);
  assert_string_equal(is->op, "module");
  assert_int_equal(is->verdict, XRT_SUPPORT_NO);
  TU_ASSERT_CONTAINS(is->reason, "2.0.0");
  TU_ASSERT_CONTAINS(is->reason, "1.0.0..1.5.0");
  xrt_support_report_release(r);
  xrt_program_release(p);
  xrt_client_release(c);
  assert_int_equal(xrt_context_release(x), XRT_OK);
}

static const char *query_prog =
    "module attributes {stablehlo.version = \"1.1.0\"} {\n"
    "  func.func @main(%a: tensor<4xf32>) -> tensor<f32> {\n"
    "    %s = stablehlo.add %a, %a : tensor<4xf32>\n"
    "    %c = func.call @helper(%s) : (tensor<4xf32>) -> tensor<4xf32>\n"
    "    %i = stablehlo.constant dense<1.0> : tensor<f32>\n"
    "    %r = \"stablehlo.reduce\"(%c, %i) ({\n"
    "    ^bb0(%p: tensor<f32>, %q: tensor<f32>):\n"
    "      %m = stablehlo.multiply %p, %q : tensor<f32>\n"
    "      stablehlo.return %m : tensor<f32>\n"
    "    }) {dimensions = array<i64: 0>} : (tensor<4xf32>, tensor<f32>) -> "
    "tensor<f32>\n"
    "    func.return %r : tensor<f32>\n"
    "  }\n"
    "  func.func private @helper(%x: tensor<4xf32>) -> tensor<4xf32> {\n"
    "    %d = stablehlo.divide %x, %x : tensor<4xf32>\n"
    "    func.return %d : tensor<4xf32>\n"
    "  }\n"
    "  func.func private @unused(%x: tensor<4xf32>) -> tensor<4xf32> {\n"
    "    %u = stablehlo.multiply %x, %x : tensor<4xf32>\n"
    "    func.return %u : tensor<4xf32>\n"
    "  }\n"
    "}\n";

static void expect_issue(const xrt_support_report *r, int i, const char *op,
                         const char *needle, xrt_support verdict,
                         const char *reason) {
  const xrt_support_issue *is = xrt_support_report_issue(r, i);
  assert_non_null(is);
  int line, col;
  loc_in(query_prog, needle, &line, &col);
  assert_string_equal(is->op, op);
  assert_string_equal(is->file, "q.mlir");
  assert_int_equal(is->line, line);
  assert_int_equal(is->col, col);
  assert_int_equal(is->verdict, verdict);
  TU_ASSERT_CONTAINS(is->reason, reason);
}

static void test_query_support_walks_calls_and_regions(void **state) {
  (void)state;
  xrt_context *x = tu_context(false);
  load(x, NULL, fake("fake_caps"));
  xrt_client *c = tu_client_of(x, "fake_caps", 1);
  xrt_compile_options co;
  xrt_compile_options_init(&co);
  co.filename = "q.mlir";
  xrt_program *p = NULL;
  assert_int_equal(xrt_program_parse(query_prog, strlen(query_prog), &co, &p),
                   XRT_OK);
  xrt_support_report *r = NULL;
  assert_int_equal(xrt_client_query_support(c, p, NULL, &r), XRT_OK);
  assert_int_equal(xrt_support_report_verdict(r), XRT_SUPPORT_NO);
  /* The multiply in the reduce body (NO), then the divide of @helper
   * (MAYBE, reached through func.call); @unused's multiply is not asked. */
  assert_int_equal(xrt_support_report_count(r), 2);
  /* (An op's location is that of its name.) */
  expect_issue(r, 0, "stablehlo.multiply", "stablehlo.multiply %p",
               XRT_SUPPORT_NO, "fake_caps: no multiplier");
  expect_issue(r, 1, "stablehlo.divide", "stablehlo.divide %x",
               XRT_SUPPORT_MAYBE, "cannot tell");
  assert_null(xrt_support_report_issue(r, 2));
  assert_null(xrt_support_report_issue(r, -1));
  xrt_support_report_release(r);
  /* Entry @helper alone: only MAYBE. */
  co.entry = "helper";
  assert_int_equal(xrt_client_query_support(c, p, &co, &r), XRT_OK);
  assert_int_equal(xrt_support_report_verdict(r), XRT_SUPPORT_MAYBE);
  assert_int_equal(xrt_support_report_count(r), 1);
  xrt_support_report_release(r);
  co.entry = "nope";
  r = (xrt_support_report *)(uintptr_t)1;
  expect_fail(xrt_client_query_support(c, p, &co, &r), XRT_NOT_FOUND, "nope",
              NULL);
  assert_null(r);
  /* A program of supported ops only: YES, no issues. */
  xrt_program *ok = NULL;
  const char *text = versioned("1.3.0");
  assert_int_equal(xrt_program_parse(text, strlen(text), NULL, &ok), XRT_OK);
  assert_int_equal(xrt_client_query_support(c, ok, NULL, &r), XRT_OK);
  assert_int_equal(xrt_support_report_verdict(r), XRT_SUPPORT_YES);
  assert_int_equal(xrt_support_report_count(r), 0);
  xrt_support_report_release(r);
  xrt_support_report_release(r); /* stale: ignored */
  assert_int_equal(xrt_support_report_count(r), -1);
  expect_fail(xrt_client_query_support(NULL, ok, NULL, &r),
              XRT_INVALID_ARGUMENT, "client", NULL);
  xrt_program_release(ok);
  xrt_program_release(p);
  xrt_client_release(c);
  assert_int_equal(xrt_context_release(x), XRT_OK);
}

/* ---- accessors ---- */

static void test_info_and_accessors(void **state) {
  (void)state;
  xrt_context *x = tu_context(true);
  xrt_plugin *b = load(x, NULL, fake("fake_b"));
  xrt_plugin_info info = info_of(b);
  assert_string_equal(info.platform_version, "9.9.9");
  assert_int_equal(info.capabilities, XRT_CAP_ASYNC);
  assert_true(info.dtypes == (((uint64_t)1 << XRT_F32) |
                              ((uint64_t)1 << XRT_S32)));
  assert_int_equal(info.num_attributes, 1);
  assert_string_equal(info.attributes[0].name, "vendor");
  assert_string_equal(info.attributes[0].string_value, "fake corp");
  assert_int_equal(xrt_context_plugin_count(x), 2);
  assert_ptr_equal(xrt_context_plugin(x, 1), b);
  assert_null(xrt_context_plugin(x, 2));
  assert_int_equal(xrt_last_status(), XRT_OUT_OF_RANGE);
  assert_null(xrt_context_find_plugin(x, "nope"));
  assert_int_equal(xrt_last_status(), XRT_NOT_FOUND);
  assert_int_equal(xrt_context_plugin_count(NULL), -1);
  xrt_client *c = NULL;
  expect_fail(try_client(x, "nope", &c), XRT_NOT_FOUND, "'nope'", "'sim'",
              "'fake_b'", NULL);
  expect_fail(xrt_plugin_get_info(b, NULL), XRT_INVALID_ARGUMENT, NULL);
  xrt_topology t;
  expect_fail(xrt_client_topology(NULL, &t), XRT_INVALID_ARGUMENT, NULL);
  assert_null(xrt_client_plugin(NULL));
  /* The default context serves context == NULL, with "sim" in it. */
  xrt_client *d = NULL;
  assert_int_equal(xrt_client_create(NULL, &d), XRT_OK);
  assert_int_equal(xrt_plugin_get_info(xrt_client_plugin(d), &info), XRT_OK);
  assert_string_equal(info.name, "sim");
  xrt_client_release(d);
  assert_int_equal(xrt_context_release(x), XRT_OK);
}

int main(void) {
  /* The default context reads XRT_PLUGINS once: create it first, before
   * any test sets the variable. */
  xrt_client *c = NULL;
  if (xrt_client_create(NULL, &c) != XRT_OK) return 1;
  xrt_client_release(c);
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_old_table_loads_and_works),
      cmocka_unit_test(test_other_abi_versions_refused),
      cmocka_unit_test(test_table_size_and_name_checked),
      cmocka_unit_test(test_duplicate_loads_share_a_registration),
      cmocka_unit_test(test_missing_symbol_corrupt_and_missing_files),
      cmocka_unit_test(test_directory_scan),
      cmocka_unit_test(test_xrt_plugins_environment),
      cmocka_unit_test(test_plugin_returning_garbage),
      cmocka_unit_test(test_unload_and_reload),
      cmocka_unit_test(test_two_plugins_through_the_host),
      cmocka_unit_test(test_static_registration),
      cmocka_unit_test(test_topology_from_options_and_env),
      cmocka_unit_test(test_exclusive_access),
      cmocka_unit_test(test_concurrent_loads_and_exclusive_clients),
      cmocka_unit_test(test_stablehlo_versions),
      cmocka_unit_test(test_query_support_walks_calls_and_regions),
      cmocka_unit_test(test_info_and_accessors),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
