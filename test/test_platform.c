/*
 * test_platform.c - what differs between POSIX systems and Windows in
 * loading plugins (xrt.c's "Operating system services"), checked on each:
 * the XRT_PLUGINS separator (':' on POSIX, ';' on Windows, where ':' is in
 * drive letters), absolute paths, one registration per file whatever path
 * names it, directory scans by the platform's library extension, and the
 * loader's own reason in a failure.  Uses the simulator built as a plugin
 * library, XRT_TEST_PLUGIN_DIR/XRT_TEST_SIM_LIB (the Makefile's).
 */
#define _XOPEN_SOURCE 700 /* mkdtemp, realpath */
#include "test_util.h"

#include <stdlib.h>
#include <unistd.h> /* rmdir */

#ifndef XRT_TEST_PLUGIN_DIR
#define XRT_TEST_PLUGIN_DIR "build"
#endif
#ifndef XRT_TEST_SIM_LIB
#define XRT_TEST_SIM_LIB "libxrt_sim.so"
#endif
#define SIM_LIB XRT_TEST_PLUGIN_DIR "/" XRT_TEST_SIM_LIB

#if defined(_WIN32)
#define SEP ';'
#define OTHER_SEP ':'
#define LIB_EXT ".dll"
#else
#define SEP ':'
#define OTHER_SEP ';'
#define LIB_EXT ".so"
#endif

/* path made absolute (a drive letter and backslashes on Windows). */
static void absolute(const char *path, char *out, size_t cap) {
#if defined(_WIN32)
  assert_non_null(_fullpath(out, path, cap));
  assert_int_equal(out[1], ':');
#else
  char *r = realpath(path, NULL);
  assert_non_null(r);
  assert_true(strlen(r) < cap);
  snprintf(out, cap, "%s", r);
  free(r);
#endif
}

/* The simulator's library by another file name (a copy: a new file). */
static void copy_file(const char *from, const char *to) {
  size_t n;
  char *data = tu_read_file(from, &n);
  assert_true(n > 1000);
  tu_write_file(to, data, n);
  free(data);
}

static void make_tmpdir(char *dir, size_t cap) {
  snprintf(dir, cap, "/tmp/xrt_test_platform_XXXXXX");
  assert_non_null(mkdtemp(dir));
}

/* Runs a program on plugin `name` of ctx: 1 + 2 = 3 on the loaded code. */
static void check_runs(xrt_context *ctx, const char *name) {
  xrt_client *c = tu_client_of(ctx, name, 1);
  tu_out o;
  TU_RUN_OK(c, "func.func @main() -> tensor<i32> {\n"
               "  %a = stablehlo.constant dense<1> : tensor<i32>\n"
               "  %b = stablehlo.constant dense<2> : tensor<i32>\n"
               "  %c = stablehlo.add %a, %b : tensor<i32>\n"
               "  func.return %c : tensor<i32>\n}\n", 0, NULL, &o);
  assert_int_equal(o.n, 1);
  assert_int_equal(*(const int32_t *)o.data[0], 3);
  tu_out_free(&o);
  xrt_client_release(c);
}

/* "name<SEP>path": the platform's separator loads; an absolute path
 * (with its drive letter on Windows) works; the other separator is not
 * an entry, and the message shows the one to use. */
static void test_plugin_list_separator(void **state) {
  (void)state;
  char abs[1024], spec[1200];
  absolute(SIM_LIB, abs, sizeof abs);
  xrt_context *ctx = tu_context(false);
  snprintf(spec, sizeof spec, " rel%c%s , abs%c%s", SEP, SIM_LIB, SEP, abs);
  assert_int_equal(xrt_context_load_env(ctx, spec), XRT_OK);
  /* two paths to one file: one registration, under the first name */
  assert_int_equal(xrt_context_plugin_count(ctx), 1);
  assert_non_null(xrt_context_find_plugin(ctx, "rel"));
  check_runs(ctx, "rel");

  snprintf(spec, sizeof spec, "other%c%s", OTHER_SEP, SIM_LIB);
  /* "other:build-win/xrt_sim.dll" on Windows has no ';', and
   * "other;build/libxrt_sim.so" elsewhere no ':' */
  char want[32];
  snprintf(want, sizeof want, "is not name%cpath", SEP);
  assert_int_equal(xrt_context_load_env(ctx, spec), XRT_INVALID_ARGUMENT);
  assert_non_null(strstr(xrt_last_error(), want));
  assert_int_equal(xrt_context_plugin_count(ctx), 1);
  assert_int_equal(xrt_context_release(ctx), XRT_OK);
}

/* One file by several spellings of its path is one registration; a copy
 * of it is another file, so another registration. */
static void test_file_identity(void **state) {
  (void)state;
  char dir[256], copy[300], dotted[300];
  make_tmpdir(dir, sizeof dir);
  snprintf(copy, sizeof copy, "%s/copy%s", dir, LIB_EXT);
  copy_file(SIM_LIB, copy);
  xrt_context *ctx = tu_context(false);
  xrt_plugin *a = NULL, *b = NULL, *c = NULL, *d = NULL;
  assert_int_equal(xrt_context_load_plugin(ctx, "a", SIM_LIB, &a), XRT_OK);
  snprintf(dotted, sizeof dotted, "%s/./%s", XRT_TEST_PLUGIN_DIR,
           XRT_TEST_SIM_LIB);
  assert_int_equal(xrt_context_load_plugin(ctx, "b", dotted, &b), XRT_OK);
  assert_ptr_equal(a, b);
#if defined(_WIN32)
  char back[300];
  snprintf(back, sizeof back, "%s\\%s", XRT_TEST_PLUGIN_DIR, XRT_TEST_SIM_LIB);
  assert_int_equal(xrt_context_load_plugin(ctx, "c", back, &c), XRT_OK);
#else
  assert_int_equal(xrt_context_load_plugin(ctx, "c", dotted, &c), XRT_OK);
#endif
  assert_ptr_equal(a, c);
  assert_int_equal(xrt_context_load_plugin(ctx, "d", copy, &d), XRT_OK);
  assert_ptr_not_equal(a, d);
  assert_int_equal(xrt_context_plugin_count(ctx), 2);
  check_runs(ctx, "d");
  assert_int_equal(xrt_context_release(ctx), XRT_OK);
  assert_int_equal(remove(copy), 0);
  assert_int_equal(rmdir(dir), 0);
}

/* A scan loads the files with the platform's extension that are plugins,
 * and skips the rest: a text file with the extension, other names. */
static void test_scan_directory(void **state) {
  (void)state;
  char dir[256], lib[300], junk[300], other[300];
  make_tmpdir(dir, sizeof dir);
  snprintf(lib, sizeof lib, "%s/sim%s", dir, LIB_EXT);
  snprintf(junk, sizeof junk, "%s/junk%s", dir, LIB_EXT);
  snprintf(other, sizeof other, "%s/sim%s", dir,
           strcmp(LIB_EXT, ".so") ? ".so" : ".dll");
  copy_file(SIM_LIB, lib);
  copy_file(SIM_LIB, other); /* a library, but not by this platform's name */
  tu_write_file(junk, "not a library\n", 14);
  xrt_context *ctx = tu_context(false);
  int loaded = -1;
  assert_int_equal(xrt_context_scan_directory(ctx, dir, &loaded), XRT_OK);
  assert_int_equal(loaded, 1);
  assert_int_equal(xrt_context_plugin_count(ctx), 1);
  assert_non_null(xrt_context_find_plugin(ctx, "sim"));
  check_runs(ctx, "sim");
  assert_int_equal(xrt_context_release(ctx), XRT_OK);
  /* a directory that is not there */
  ctx = tu_context(false);
  char missing[300];
  snprintf(missing, sizeof missing, "%s/none", dir);
  assert_int_equal(xrt_context_scan_directory(ctx, missing, &loaded),
                   XRT_NOT_FOUND);
  assert_non_null(strstr(xrt_last_error(), missing));
  assert_int_equal(xrt_context_release(ctx), XRT_OK);
  assert_int_equal(remove(lib), 0);
  assert_int_equal(remove(junk), 0);
  assert_int_equal(remove(other), 0);
  assert_int_equal(rmdir(dir), 0);
}

/* Failures name the file and carry the system's reason. */
static void test_load_errors(void **state) {
  (void)state;
  char dir[256], junk[300], missing[300];
  make_tmpdir(dir, sizeof dir);
  snprintf(junk, sizeof junk, "%s/junk%s", dir, LIB_EXT);
  snprintf(missing, sizeof missing, "%s/missing%s", dir, LIB_EXT);
  tu_write_file(junk, "not a library\n", 14);
  xrt_context *ctx = tu_context(false);
  assert_int_equal(xrt_context_load_plugin(ctx, NULL, missing, NULL),
                   XRT_NOT_FOUND);
  assert_non_null(strstr(xrt_last_error(), missing));
  assert_int_equal(xrt_context_load_plugin(ctx, NULL, junk, NULL),
                   XRT_INVALID_ARGUMENT);
  const char *m = xrt_last_error();
  const char *why = strstr(m, "not a loadable shared library: ");
  assert_non_null(why);
  assert_non_null(strstr(m, junk));
  /* the loader's reason follows, not empty */
  assert_true(strlen(why) > strlen("not a loadable shared library: ") + 3);
  assert_int_equal(xrt_context_load_plugin(ctx, NULL, dir, NULL),
                   XRT_INVALID_ARGUMENT);
  assert_non_null(strstr(xrt_last_error(), "is a directory"));
  assert_int_equal(xrt_context_plugin_count(ctx), 0);
  assert_int_equal(xrt_context_release(ctx), XRT_OK);
  assert_int_equal(remove(junk), 0);
  assert_int_equal(rmdir(dir), 0);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_plugin_list_separator),
      cmocka_unit_test(test_file_identity),
      cmocka_unit_test(test_scan_directory),
      cmocka_unit_test(test_load_errors),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
