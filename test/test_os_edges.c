/*
 * test_os_edges.c - the failure paths of the file helpers of the platform
 * layer (src/core/os.c) that the disk cache and variable files rely on:
 * reading a missing file, a file over the size limit, a directory, a
 * file when the allocator is out of memory, an empty file; an atomic write
 * whose rename fails (the temporary file must be gone afterwards), whose
 * temporary file exists already, or whose directory cannot be flushed;
 * mkdir over a file and over a directory; a directory listing stopped by
 * its callback.  These helpers are not public: they are declared here as
 * os.h declares them (XRT__OS_API functions are extern in every build, the
 * generated single files included, since the cache calls them).
 */
#define _POSIX_C_SOURCE 200809L /* mkdtemp */

#include <errno.h>
#include <stdlib.h>

#include "test_util.h"

int xrt__os_read_file(const char *path, const xrt_allocator *al,
                      uint64_t max_size, void **out, size_t *out_size);
int xrt__os_write_file_atomic(const char *dir, const char *tmp,
                              const char *path, const void *data,
                              size_t size);
int xrt__os_mkdir(const char *path);
int xrt__os_unlink(const char *path);
int xrt__os_list_dir(const char *dir, int (*fn)(void *ctx, const char *name),
                     void *ctx, char *why, size_t cap);

static char dir[512];

static int setup(void **state) {
  (void)state;
  const char *t = getenv("TMPDIR");
  snprintf(dir, sizeof dir, "%s/xrt_os_edges_XXXXXX", t && *t ? t : "/tmp");
  return mkdtemp(dir) ? 0 : -1;
}

static void in_dir(char *out, size_t cap, const char *name) {
  snprintf(out, cap, "%s/%s", dir, name);
}

/* An allocator that always fails. */
static void *no_alloc(void *self, size_t n) {
  (void)self, (void)n;
  return NULL;
}

static void test_read_file(void **state) {
  (void)state;
  xrt_allocator sys = {NULL, tu_alloc, tu_free};
  char p[600];
  void *data = NULL;
  size_t n = 99;
  in_dir(p, sizeof p, "missing");
  assert_int_equal(xrt__os_read_file(p, &sys, 100, &data, &n), ENOENT);
  /* 10 bytes: over a limit of 9, within one of 10 */
  in_dir(p, sizeof p, "ten");
  tu_write_file(p, "0123456789", 10);
  assert_int_equal(xrt__os_read_file(p, &sys, 9, &data, &n), EFBIG);
  assert_null(data);
  assert_int_equal(xrt__os_read_file(p, &sys, 10, &data, &n), 0);
  assert_int_equal(n, 10);
  assert_memory_equal(data, "0123456789", 10);
  free(data);
  data = NULL;
  /* no memory for it */
  xrt_allocator none = {NULL, no_alloc, tu_free};
  assert_int_equal(xrt__os_read_file(p, &none, 100, &data, &n), ENOMEM);
  assert_null(data);
  /* an empty file: a block of one byte, size 0 */
  in_dir(p, sizeof p, "empty");
  tu_write_file(p, "", 0);
  n = 99;
  assert_int_equal(xrt__os_read_file(p, &sys, 100, &data, &n), 0);
  assert_non_null(data);
  assert_int_equal(n, 0);
  free(data);
  data = NULL;
#if !defined(_WIN32)
  /* a directory opens but cannot be read (or is empty) */
  int err = xrt__os_read_file(dir, &sys, UINT64_MAX, &data, &n);
  if (err == 0) {
    assert_int_equal(n, 0);
    free(data);
  } else {
    assert_int_equal(err, EISDIR);
    assert_null(data);
  }
#endif
}

static void test_write_atomic(void **state) {
  (void)state;
  char tmp[600], path[600], sub[600];
  in_dir(tmp, sizeof tmp, "w.tmp");
  in_dir(path, sizeof path, "w.bin");
  assert_int_equal(xrt__os_write_file_atomic(dir, tmp, path, "abc", 3), 0);
  size_t n;
  char *got = tu_read_file(path, &n);
  assert_int_equal(n, 3);
  assert_string_equal(got, "abc");
  free(got);
  /* replaced whole */
  assert_int_equal(xrt__os_write_file_atomic(dir, tmp, path, "de", 2), 0);
  got = tu_read_file(path, &n);
  assert_string_equal(got, "de");
  free(got);
  /* nothing to write: an empty file */
  assert_int_equal(xrt__os_write_file_atomic(dir, tmp, path, "", 0), 0);
  got = tu_read_file(path, &n);
  assert_int_equal(n, 0);
  free(got);
  assert_int_equal(xrt__os_write_file_atomic(dir, tmp, path, "de", 2), 0);
  /* the temporary name is taken: EEXIST, and path keeps its contents
   * (the taken name is removed, as on every failure) */
  tu_write_file(tmp, "x", 1);
  assert_int_equal(xrt__os_write_file_atomic(dir, tmp, path, "fg", 2), EEXIST);
  got = tu_read_file(path, &n);
  assert_string_equal(got, "de");
  free(got);
  FILE *f = fopen(tmp, "rb");
  assert_null(f);
  /* the rename fails: path is a directory that is not empty */
  in_dir(sub, sizeof sub, "d");
  assert_int_equal(xrt__os_mkdir(sub), 0);
  char inner[700];
  snprintf(inner, sizeof inner, "%s/inner", sub);
  tu_write_file(inner, "i", 1);
  int err = xrt__os_write_file_atomic(dir, tmp, sub, "hi", 2);
  assert_int_not_equal(err, 0);
  f = fopen(tmp, "rb"); /* gone */
  assert_null(f);
  /* a directory that cannot be flushed (it does not exist): best effort,
   * the write itself succeeds */
  char nodir[600];
  in_dir(nodir, sizeof nodir, "no-such-dir");
  assert_int_equal(xrt__os_write_file_atomic(nodir, tmp, path, "jk", 2), 0);
  got = tu_read_file(path, &n);
  assert_string_equal(got, "jk");
  free(got);
  assert_int_equal(xrt__os_unlink(inner), 0);
  assert_int_equal(xrt__os_unlink(inner), ENOENT);
  remove(sub);
  remove(path);
}

static void test_mkdir(void **state) {
  (void)state;
  char p[600];
  in_dir(p, sizeof p, "m");
  assert_int_equal(xrt__os_mkdir(p), 0);
  assert_int_equal(xrt__os_mkdir(p), 0); /* a directory already: fine */
  remove(p);
  in_dir(p, sizeof p, "f");
  tu_write_file(p, "x", 1);
  assert_int_equal(xrt__os_mkdir(p), ENOTDIR); /* a file of that name */
  remove(p);
  in_dir(p, sizeof p, "a/b");
  assert_int_equal(xrt__os_mkdir(p), ENOENT); /* one level only */
}

/* Counts the entries it sees, and stops the listing at the limit. */
typedef struct lister {
  int seen, stop_at;
} lister;

static int list_one(void *ctx, const char *name) {
  lister *l = (lister *)ctx;
  (void)name;
  return ++l->seen == l->stop_at ? 42 : 0;
}

static void test_list_dir(void **state) {
  (void)state;
  char p[600], why[256] = "";
  for (int i = 0; i < 4; i++) {
    char name[16];
    snprintf(name, sizeof name, "e%d", i);
    in_dir(p, sizeof p, name);
    tu_write_file(p, "x", 1);
  }
  lister all = {0, 0};
  assert_int_equal(xrt__os_list_dir(dir, list_one, &all, why, sizeof why), 0);
  assert_true(all.seen >= 4); /* with "." and ".." where the OS lists them */
  lister two = {0, 2};
  assert_int_equal(xrt__os_list_dir(dir, list_one, &two, why, sizeof why), 42);
  assert_int_equal(two.seen, 2);
  in_dir(p, sizeof p, "no-such-dir");
  assert_int_equal(xrt__os_list_dir(p, list_one, &all, why, sizeof why),
                   ENOENT);
  assert_true(why[0] != 0);
  for (int i = 0; i < 4; i++) {
    char name[16];
    snprintf(name, sizeof name, "e%d", i);
    in_dir(p, sizeof p, name);
    remove(p);
  }
}

static int teardown(void **state) {
  (void)state;
  const char *names[] = {"ten", "empty", "w.tmp", "w.bin"};
  for (size_t i = 0; i < TU_COUNT(names); i++) {
    char p[600];
    in_dir(p, sizeof p, names[i]);
    remove(p);
  }
  remove(dir);
  return 0;
}

TU_MAIN(setup, teardown, cmocka_unit_test(test_read_file),
        cmocka_unit_test(test_write_atomic), cmocka_unit_test(test_mkdir),
        cmocka_unit_test(test_list_dir))
