/*
 * test_cache_edges.c - the disk cache (src/cache/cache.c) on what
 * test_disk_cache.c leaves out: every header field of a file damaged in
 * turn (version, reserved word, key and identity lengths, size, checksum,
 * another key's file, another plugin's), a file larger than the cache, an
 * entry that is a directory (unreadable: one warning), host memory running
 * out in a load, a save, an eviction scan and an open; a payload that fits
 * max_bytes only without its header; writes turned off when the directory
 * goes away; a stale temporary file of a dead process swept by the next
 * scan; open's other checks (too long a path, max_bytes 0, trailing
 * slashes, a file in the way, a missing parent) and every key character.
 */
#define _POSIX_C_SOURCE 200809L /* mkdtemp */

#include <errno.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h> /* rmdir */
#if defined(_WIN32)
#include <sys/utime.h>
#else
#include <utime.h>
#endif

#include "test_util.h"

#ifndef XRT_HAVE_DISK_CACHE
#error "test_cache_edges needs the disk cache (make XRT_DISK_CACHE=1)"
#endif

static const char *ID = "edge-plugin 1.0";
static const char *KEY = "0123456789abcdef0123456789abcdef";
static const char *KEY2 = "ffffffffffffffffffffffffffffffff";

static char dir[512];

/* Warnings logged by the cache. */
static int warnings;
static char last_warning[1024];

static void on_log(void *user, xrt_log_level level, const char *component,
                   const char *message) {
  (void)user;
  if (level == XRT_LOG_WARN && strcmp(component, "cache") == 0) {
    warnings++;
    snprintf(last_warning, sizeof last_warning, "%s", message);
  }
}

static int setup(void **state) {
  (void)state;
  const char *t = getenv("TMPDIR");
  snprintf(dir, sizeof dir, "%s/xrt_cache_edges_XXXXXX", t && *t ? t : "/tmp");
  if (!mkdtemp(dir)) return -1;
  xrt_log_set_callback(on_log, NULL);
  return 0;
}

static int teardown(void **state) {
  (void)state;
  xrt_log_set_callback(NULL, NULL);
  remove(dir);
  return 0;
}

static void entry_path(char *out, size_t cap, const char *key) {
  snprintf(out, cap, "%s/%s.xrtc", dir, key);
}

static xrt_disk_cache *open_cache(const char *d, uint64_t max_bytes,
                                  const xrt_allocator *al) {
  xrt_disk_cache_options o;
  xrt_disk_cache_options_init(&o);
  o.directory = d;
  if (max_bytes) o.max_bytes = max_bytes;
  if (al) o.allocator = *al;
  xrt_disk_cache *c = NULL;
  if (xrt_disk_cache_open(&o, &c) != XRT_OK)
    fail_msg("open: %s", xrt_last_error());
  return c;
}

static xrt_disk_cache_stats stats_of(xrt_disk_cache *c) {
  xrt_disk_cache_stats s;
  assert_int_equal(xrt_disk_cache_get_stats(c, &s), XRT_OK);
  return s;
}

/* A file of the given bytes. */
static unsigned char *read_all(const char *path, size_t *n) {
  return (unsigned char *)tu_read_file(path, n);
}

typedef struct damage {
  const char *what;   /* the reason in the message */
  int offset;         /* the byte changed (-1: the length changes) */
  unsigned char value;
  long length_delta;  /* with offset -1 */
} damage;

/* Header layout (cache.c): magic[8], version u32 @8, key length @12,
 * identity length @16, reserved @20, payload size u64 @24, then key,
 * identity, payload and an 8-byte checksum. */
static const damage damages[] = {
    {"not an xrt cache file", 0, 'Y', 0},
    {"unknown format version", 8, 2, 0},
    {"bad header", 20, 1, 0},           /* the reserved word */
    {"bad header", 12, 65, 0},          /* a key longer than 64 */
    {"bad header", 17, 0x10, 0},        /* an identity of 4096 + ... bytes */
    {"truncated", 24, 0xff, 0},         /* a payload larger than the file */
    {"bad size", 24, 0, 0},             /* a payload smaller than the file */
    {"checksum mismatch", 70, 0x5a, 0}, /* a payload byte */
    {"truncated", -1, 0, -9},           /* cut inside the trailer */
    {"truncated header", -1, 0, -1000}, /* only the magic is left */
    {"bad size", -1, 0, 3},             /* three bytes more */
};

static void test_damaged_headers(void **state) {
  (void)state;
  xrt_disk_cache *c = open_cache(dir, 0, NULL);
  const xrt_cache_store *st = xrt_disk_cache_store(c);
  unsigned char payload[100];
  for (int i = 0; i < 100; i++) payload[i] = (unsigned char)(i * 7 + 1);
  char path[1024];
  entry_path(path, sizeof path, KEY);
  for (size_t i = 0; i < TU_COUNT(damages); i++) {
    const damage *d = &damages[i];
    assert_int_equal(st->save(st->self, KEY, ID, payload, sizeof payload,
                              UINT64_MAX), XRT_OK);
    size_t n;
    unsigned char *f = read_all(path, &n);
    /* 32 + 32 + 15 + 100 + 8 */
    assert_int_equal(n, 32 + strlen(KEY) + strlen(ID) + 100 + 8);
    size_t m = n;
    if (d->offset >= 0) f[d->offset] = d->value;
    else m = (long)n + d->length_delta < 8 ? 8 : (size_t)((long)n +
                                                          d->length_delta);
    if (m > n) {
      unsigned char *g = (unsigned char *)realloc(f, m);
      assert_non_null(g);
      f = g;
      memset(f + n, 0xee, m - n);
    }
    tu_write_file(path, f, m);
    free(f);
    int w = warnings;
    void *data = NULL;
    size_t size = 0;
    assert_int_equal(st->load(st->self, KEY, ID, &data, &size), XRT_DATA_LOSS);
    assert_null(data);
    TU_ASSERT_CONTAINS(xrt_last_error(), d->what);
    assert_int_equal(warnings, w + 1);
    TU_ASSERT_CONTAINS(last_warning, d->what);
    TU_ASSERT_CONTAINS(last_warning, "removed");
    /* removed: the next load misses */
    assert_int_equal(st->load(st->self, KEY, ID, &data, &size), XRT_NOT_FOUND);
  }
  assert_int_equal(stats_of(c).corrupt, TU_COUNT(damages));
  /* another key's file under this key, another plugin's identity, and
   * identities of other lengths */
  char path2[1024];
  entry_path(path2, sizeof path2, KEY2);
  static const char *other_ids[] = {"edge-plugin 1.1", "edge-plugin 1.0x",
                                    "edge"};
  for (size_t i = 0; i < TU_COUNT(other_ids); i++) {
    assert_int_equal(st->save(st->self, KEY, ID, payload, sizeof payload,
                              UINT64_MAX), XRT_OK);
    void *data = NULL;
    size_t size = 0;
    assert_int_equal(st->load(st->self, KEY, other_ids[i], &data, &size),
                     XRT_DATA_LOSS);
    TU_ASSERT_CONTAINS(xrt_last_error(), "written by another plugin");
  }
  static const char *other_keys[] = {"ffffffffffffffffffffffffffffffff",
                                     "0123456789abcdef0123456789abcdeX",
                                     "0123"};
  for (size_t i = 0; i < TU_COUNT(other_keys); i++) {
    assert_int_equal(st->save(st->self, KEY, ID, payload, sizeof payload,
                              UINT64_MAX), XRT_OK);
    size_t n;
    unsigned char *f = read_all(path, &n);
    char p[1024];
    entry_path(p, sizeof p, other_keys[i]);
    tu_write_file(p, f, n);
    free(f);
    void *data = NULL;
    size_t size = 0;
    assert_int_equal(st->load(st->self, other_keys[i], ID, &data, &size),
                     XRT_DATA_LOSS);
    TU_ASSERT_CONTAINS(xrt_last_error(), "written for another key");
  }
  /* a good one still loads, every byte */
  void *data = NULL;
  size_t size = 0;
  assert_int_equal(st->load(st->self, KEY, ID, &data, &size), XRT_OK);
  assert_int_equal(size, sizeof payload);
  assert_memory_equal(data, payload, sizeof payload);
  st->release_data(st->self, data);
  st->release_data(st->self, NULL);
  remove(path);
  remove(path2);
  xrt_disk_cache_close(c);
}

/* A file larger than the whole cache is not read; an entry that is a
 * directory cannot be read (UNAVAILABLE, one warning for all). */
static void test_oversized_and_unreadable(void **state) {
  (void)state;
  xrt_disk_cache *c = open_cache(dir, 4096, NULL);
  const xrt_cache_store *st = xrt_disk_cache_store(c);
  char path[1024];
  entry_path(path, sizeof path, KEY);
  /* 4096 + 32 + 8 + 64 + 1024 bytes is the most a file may have */
  size_t big = 4096 + 32 + 8 + 64 + 1024 + 1;
  char *junk = (char *)calloc(1, big);
  assert_non_null(junk);
  tu_write_file(path, junk, big);
  free(junk);
  void *data = NULL;
  size_t size = 0;
  int w = warnings;
  assert_int_equal(st->load(st->self, KEY, ID, &data, &size), XRT_DATA_LOSS);
  TU_ASSERT_CONTAINS(xrt_last_error(), "larger than the cache");
  assert_int_equal(warnings, w + 1);
  assert_false(fopen(path, "rb")); /* removed */
#if !defined(_WIN32)
  /* a directory named like an entry */
  assert_int_equal(mkdir(path, 0777), 0);
  w = warnings;
  for (int i = 0; i < 2; i++) {
    assert_int_equal(st->load(st->self, KEY, ID, &data, &size),
                     XRT_UNAVAILABLE);
    TU_ASSERT_CONTAINS(xrt_last_error(), "disk cache: cannot read");
  }
  assert_int_equal(warnings, w + 1); /* warned once */
  TU_ASSERT_CONTAINS(last_warning, "cannot read it (warning once)");
  /* the save over it fails and turns writing off */
  assert_int_equal(st->save(st->self, KEY, ID, "abc", 3, UINT64_MAX),
                   XRT_UNAVAILABLE);
  TU_ASSERT_CONTAINS(xrt_last_error(), "disk cache: cannot write");
  TU_ASSERT_CONTAINS(last_warning, "the directory is not writable");
  xrt_disk_cache_stats s = stats_of(c);
  assert_int_equal(s.writes_disabled, 1);
  assert_int_equal(s.write_errors, 1);
  assert_int_equal(st->save(st->self, KEY2, ID, "abc", 3, UINT64_MAX), XRT_OK);
  assert_int_equal(stats_of(c).skipped, 1); /* declined */
  remove(path);
#endif
  /* a payload within max_bytes whose file is not */
  xrt_disk_cache *c2 = open_cache(dir, 100, NULL);
  const xrt_cache_store *st2 = xrt_disk_cache_store(c2);
  char pay[90] = {0};
  assert_int_equal(st2->save(st2->self, KEY, ID, pay, sizeof pay, UINT64_MAX),
                   XRT_OK);
  assert_int_equal(stats_of(c2).skipped, 1);
  assert_int_equal(stats_of(c2).writes, 0);
  assert_int_equal(st2->load(st2->self, KEY, ID, &data, &size), XRT_NOT_FOUND);
  /* arguments: a NULL cache, out_size, identity, a long identity */
  assert_int_equal(st2->load(NULL, KEY, ID, &data, &size),
                   XRT_INVALID_ARGUMENT);
  assert_int_equal(st2->load(st2->self, KEY, ID, &data, NULL),
                   XRT_INVALID_ARGUMENT);
  assert_int_equal(st2->load(st2->self, KEY, NULL, &data, &size),
                   XRT_INVALID_ARGUMENT);
  char long_id[1026];
  memset(long_id, 'i', 1025);
  long_id[1025] = 0;
  assert_int_equal(st2->save(st2->self, KEY, long_id, "x", 1, UINT64_MAX),
                   XRT_INVALID_ARGUMENT);
  assert_int_equal(st2->save(NULL, KEY, ID, "x", 1, UINT64_MAX),
                   XRT_INVALID_ARGUMENT);
  /* an empty payload with no data is fine */
  assert_int_equal(st2->save(st2->self, KEY2, ID, NULL, 0, UINT64_MAX),
                   XRT_OK);
  assert_int_equal(st2->load(st2->self, KEY2, ID, &data, &size), XRT_OK);
  assert_int_equal(size, 0);
  st2->release_data(st2->self, data);
  char p2[1024];
  entry_path(p2, sizeof p2, KEY2);
  remove(p2);
  xrt_disk_cache_close(c2);
  xrt_disk_cache_close(c);
}

/* Every character class of keys: digits, both cases, '_' and '-' are
 * file names; anything else is refused. */
static void test_key_characters(void **state) {
  (void)state;
  xrt_disk_cache *c = open_cache(dir, 0, NULL);
  const xrt_cache_store *st = xrt_disk_cache_store(c);
  static const char *good[] = {"09", "az", "AZ", "a_b-c", "_", "-"};
  for (size_t i = 0; i < TU_COUNT(good); i++) {
    assert_int_equal(st->save(st->self, good[i], ID, "k", 1, UINT64_MAX),
                     XRT_OK);
    void *data = NULL;
    size_t size = 0;
    assert_int_equal(st->load(st->self, good[i], ID, &data, &size), XRT_OK);
    assert_int_equal(size, 1);
    assert_memory_equal(data, "k", 1);
    st->release_data(st->self, data);
    char p[1024];
    entry_path(p, sizeof p, good[i]);
    remove(p);
  }
  static const char *bad[] = {"a b", "a/", "/", "a\\b", "a:b", "a@", "a[",
                              "a`", "a{", "a~", "\x7f", "a+", "a=", "\xc3\xa9"};
  for (size_t i = 0; i < TU_COUNT(bad); i++) {
    void *data = NULL;
    size_t size = 0;
    if (st->load(st->self, bad[i], ID, &data, &size) != XRT_INVALID_ARGUMENT)
      fail_msg("key \"%s\" was taken", bad[i]);
    assert_int_equal(st->save(st->self, bad[i], ID, "k", 1, UINT64_MAX),
                     XRT_INVALID_ARGUMENT);
  }
  xrt_disk_cache_close(c);
}

/* Host memory running out in a load (the file's block), a save (the
 * encoded file), an eviction scan (its file list: the write stands, the
 * counts are not updated) and an open. */
static void test_out_of_memory(void **state) {
  (void)state;
  tu_counting_alloc a;
  tu_counting_init(&a, 0);
  xrt_allocator al = tu_counting_allocator(&a);
  xrt_disk_cache *c = open_cache(dir, 0, &al);
  const xrt_cache_store *st = xrt_disk_cache_store(c);
  assert_int_equal(st->save(st->self, KEY, ID, "payload", 7, UINT64_MAX),
                   XRT_OK);
  void *data = NULL;
  size_t size = 0;
  a.fail_at = atomic_load(&a.calls) + 1;
  assert_int_equal(st->load(st->self, KEY, ID, &data, &size),
                   XRT_RESOURCE_EXHAUSTED);
  TU_ASSERT_CONTAINS(xrt_last_error(), "disk cache: out of memory");
  assert_null(data);
  a.fail_at = atomic_load(&a.calls) + 1; /* the encoded file */
  assert_int_equal(st->save(st->self, KEY2, ID, "other", 5, UINT64_MAX),
                   XRT_RESOURCE_EXHAUSTED);
  TU_ASSERT_CONTAINS(xrt_last_error(), "disk cache: out of memory");
  xrt_disk_cache_stats s = stats_of(c);
  assert_int_equal(s.write_errors, 1);
  assert_int_equal(s.files, 1);
  a.fail_at = atomic_load(&a.calls) + 2; /* the scan's list, after it */
  assert_int_equal(st->save(st->self, KEY2, ID, "other", 5, UINT64_MAX),
                   XRT_OK);
  s = stats_of(c);
  assert_int_equal(s.writes, 2);
  assert_int_equal(s.files, 1); /* not recounted */
  assert_int_equal(st->load(st->self, KEY2, ID, &data, &size), XRT_OK);
  assert_int_equal(size, 5);
  assert_memory_equal(data, "other", 5);
  st->release_data(st->self, data);
  char p[1024];
  entry_path(p, sizeof p, KEY);
  remove(p);
  entry_path(p, sizeof p, KEY2);
  remove(p);
  xrt_disk_cache_close(c);
  /* an open whose first or second block fails */
  for (long k = 1; k <= 2; k++) {
    xrt_disk_cache_options o;
    xrt_disk_cache_options_init(&o);
    o.directory = dir;
    o.allocator = al;
    a.fail_at = atomic_load(&a.calls) + k;
    xrt_disk_cache *x = (xrt_disk_cache *)&x;
    assert_int_equal(xrt_disk_cache_open(&o, &x), XRT_RESOURCE_EXHAUSTED);
    assert_null(x);
    TU_ASSERT_CONTAINS(xrt_last_error(), "xrt_disk_cache_open: out of memory");
  }
  a.fail_at = 0;
  assert_int_equal(atomic_load(&a.live), 0);
}

/* open: the remaining checks, and directories it cannot write. */
static void test_open_edges(void **state) {
  (void)state;
  xrt_disk_cache_options_init(NULL); /* ignored */
  xrt_disk_cache_options o;
  xrt_disk_cache_options_init(&o);
  xrt_disk_cache *c = NULL;
  o.directory = dir;
  o.max_bytes = 0;
  assert_int_equal(xrt_disk_cache_open(&o, &c), XRT_INVALID_ARGUMENT);
  TU_ASSERT_CONTAINS(xrt_last_error(), "max_bytes 0");
  o.max_bytes = 1 << 20;
  o.allocator.free = NULL;
  assert_int_equal(xrt_disk_cache_open(&o, &c), XRT_INVALID_ARGUMENT);
  TU_ASSERT_CONTAINS(xrt_last_error(), "allocator without alloc or free");
  o.allocator = xrt_allocator_system();
  char *lng = (char *)malloc(5000);
  assert_non_null(lng);
  memset(lng, 'd', 4999);
  lng[4999] = 0;
  o.directory = lng;
  assert_int_equal(xrt_disk_cache_open(&o, &c), XRT_INVALID_ARGUMENT);
  TU_ASSERT_CONTAINS(xrt_last_error(), "path too long");
  free(lng);
  /* trailing slashes are dropped: entries land in the directory */
  char slashed[600];
  snprintf(slashed, sizeof slashed, "%s///", dir);
  c = open_cache(slashed, 0, NULL);
  const xrt_cache_store *st = xrt_disk_cache_store(c);
  assert_int_equal(st->save(st->self, KEY, ID, "s", 1, UINT64_MAX), XRT_OK);
  char p[1024];
  entry_path(p, sizeof p, KEY);
  size_t n;
  free(read_all(p, &n));
  assert_int_equal(n, 32 + 32 + strlen(ID) + 1 + 8);
  remove(p);
  xrt_disk_cache_close(c);
  /* a missing parent, and a file in the way: opened, writes off */
  static const struct { const char *sub, *why; } unwritable[] = {
      {"no-parent/cache", "its parent does not exist"},
      {"a-file", "cannot create the directory"},
  };
  char file[700];
  snprintf(file, sizeof file, "%s/a-file", dir);
  tu_write_file(file, "x", 1);
  for (size_t i = 0; i < TU_COUNT(unwritable); i++) {
    char d[700];
    snprintf(d, sizeof d, "%s/%s", dir, unwritable[i].sub);
    int w = warnings;
    c = open_cache(d, 0, NULL);
    assert_int_equal(warnings, w + 1);
    TU_ASSERT_CONTAINS(last_warning, unwritable[i].why);
    assert_int_equal(stats_of(c).writes_disabled, 1);
    st = xrt_disk_cache_store(c);
    assert_int_equal(st->save(st->self, KEY, ID, "s", 1, UINT64_MAX), XRT_OK);
    assert_int_equal(stats_of(c).skipped, 1);
    void *data = NULL;
    size_t size = 0;
    assert_int_equal(st->load(st->self, KEY, ID, &data, &size),
                     XRT_NOT_FOUND);
    xrt_disk_cache_close(c);
  }
  remove(file);
  /* the directory removed under an open cache: the write fails with
   * ENOENT and writing is turned off */
  char gone[700];
  snprintf(gone, sizeof gone, "%s/gone", dir);
  c = open_cache(gone, 0, NULL);
  assert_int_equal(rmdir(gone), 0);
  st = xrt_disk_cache_store(c);
  assert_int_equal(st->save(st->self, KEY, ID, "s", 1, UINT64_MAX),
                   XRT_UNAVAILABLE);
  assert_int_equal(stats_of(c).writes_disabled, 1);
  xrt_disk_cache_close(c);
}

/* A temporary file of a process that died ten minutes ago or more is
 * removed by the next scan; a fresh one is left alone. */
static void test_stale_temporary_file(void **state) {
  (void)state;
  char stale[700], fresh[700];
  snprintf(stale, sizeof stale, "%s/.tmp.99999.1.%s", dir, KEY);
  snprintf(fresh, sizeof fresh, "%s/.tmp.99999.2.%s", dir, KEY);
  tu_write_file(stale, "partial", 7);
  tu_write_file(fresh, "partial", 7);
  struct utimbuf old;
  old.actime = old.modtime = time(NULL) - 3600;
  assert_int_equal(utime(stale, &old), 0);
  xrt_disk_cache *c = open_cache(dir, 0, NULL); /* scans */
  FILE *f = fopen(stale, "rb");
  assert_null(f);
  f = fopen(fresh, "rb");
  assert_non_null(f);
  fclose(f);
  assert_int_equal(stats_of(c).files, 0); /* neither is an entry */
  remove(fresh);
  xrt_disk_cache_close(c);
}

TU_MAIN(setup, teardown, cmocka_unit_test(test_damaged_headers),
        cmocka_unit_test(test_oversized_and_unreadable),
        cmocka_unit_test(test_key_characters),
        cmocka_unit_test(test_out_of_memory), cmocka_unit_test(test_open_edges),
        cmocka_unit_test(test_stale_temporary_file))
