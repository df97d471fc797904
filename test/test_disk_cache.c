/*
 * test_disk_cache.c - the disk compilation cache (xrt_cache.c, issue #7):
 * its store API directly (round trip, miss, every kind of damaged file,
 * eviction by bytes of the least recently used, min_compile_ns,
 * read_only, an unwritable directory, two processes (not on Windows) and
 * two threads sharing a directory), the file format checked against a
 * layout rebuilt here, and clients that share a directory (aliases, one
 * naming another program's executable, collectives loaded from disk).
 */
#define _POSIX_C_SOURCE 200809L /* mkdtemp, fork, utimensat */

#include <dirent.h> /* POSIX; mingw-w64 has it too */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <sys/stat.h>
#include <unistd.h>
#if defined(_WIN32)
#include <sys/utime.h>
#define SEP "\\" /* xrt_cache.c names files with Windows' separator */
#else
#include <sys/wait.h>
#define SEP "/"
#endif

#include "test_plugin_abi.h"

#define XXH_INLINE_ALL
#include <xxhash.h>

#ifndef XRT_HAVE_DISK_CACHE
#error "test_disk_cache needs the disk cache (make XRT_DISK_CACHE=1)"
#endif

static const char *ID = "sim " XRT_VERSION_STRING;
static const char *KEY_A = "0123456789abcdef0123456789abcdef";
static const char *KEY_B = "fedcba9876543210fedcba9876543210";

/* ---- fixtures: a temporary directory, warnings counted ---- */

static int warnings;       /* warnings of component "cache" */
static char last_warning[1024];
static int token_reads;    /* texts the core read as tokens (debug log) */

static void count_log(void *user, xrt_log_level level, const char *component,
                      const char *message) {
  (void)user;
  if (strcmp(component, "cache") == 0 && strstr(message, "as tokens"))
    token_reads++;
  if (level == XRT_LOG_WARN && strcmp(component, "cache") == 0) {
    warnings++;
    snprintf(last_warning, sizeof last_warning, "%s", message);
  }
}

typedef struct fixture {
  char dir[64];
  xrt_disk_cache *cache;
  const xrt_cache_store *store;
  long live; /* allocations of the counting allocator not yet freed */
} fixture;

static void *count_alloc(void *self, size_t n) {
  ((fixture *)self)->live++;
  return malloc(n ? n : 1);
}
static void count_free(void *self, void *p) {
  if (p) ((fixture *)self)->live--;
  free(p);
}

static xrt_disk_cache_options opts(fixture *f) {
  xrt_disk_cache_options o;
  xrt_disk_cache_options_init(&o);
  o.directory = f->dir;
  o.allocator = (xrt_allocator){f, count_alloc, count_free};
  return o;
}

static void open_with(fixture *f, const xrt_disk_cache_options *o) {
  assert_int_equal(xrt_disk_cache_open(o, &f->cache), XRT_OK);
  f->store = xrt_disk_cache_store(f->cache);
  assert_non_null(f->store);
  assert_int_equal(f->store->struct_size, sizeof(xrt_cache_store));
}

static int setup(void **state) {
  fixture *f = calloc(1, sizeof *f);
  if (!f) return -1;
  snprintf(f->dir, sizeof f->dir, "/tmp/xrt_test_dc_XXXXXX");
  if (!mkdtemp(f->dir)) return -1;
  xrt_disk_cache_options o = opts(f);
  if (xrt_disk_cache_open(&o, &f->cache)) return -1;
  f->store = xrt_disk_cache_store(f->cache);
  warnings = 0;
  xrt_log_set_callback(count_log, NULL);
  *state = f;
  return 0;
}

static void remove_tree(const char *dir) {
  char cmd[256];
  snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
  if (system(cmd) != 0) fprintf(stderr, "could not remove %s\n", dir);
}

static int teardown(void **state) {
  fixture *f = *state;
  xrt_disk_cache_close(f->cache);
  xrt_log_set_callback(NULL, NULL);
  int leaked = f->live != 0;
  remove_tree(f->dir);
  free(f);
  return leaked ? -1 : 0;
}

/* ---- helpers ---- */

static void entry_path(const fixture *f, const char *key, char *out) {
  snprintf(out, 256, "%s" SEP "%s.xrtc", f->dir, key);
}

/* Up to max names of the files of dir (not "." or ".."), in the order
 * readdir gives them; returns how many there are. */
static int list_names(const char *dir, char (*names)[256], int max) {
  DIR *d = opendir(dir);
  assert_non_null(d);
  int n = 0;
  struct dirent *e;
  while ((e = readdir(d)) != NULL) {
    if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0) continue;
    if (n < max) snprintf(names[n], sizeof names[n], "%s", e->d_name);
    n++;
  }
  closedir(d);
  return n;
}

static bool ends_with(const char *s, const char *suffix) {
  size_t n = strlen(s), k = strlen(suffix);
  return n >= k && strcmp(s + n - k, suffix) == 0;
}

static bool exists(const char *path) {
  struct stat st;
  return stat(path, &st) == 0;
}

/* A payload of n bytes that depends on seed. */
static unsigned char *payload(size_t n, unsigned seed) {
  unsigned char *p = malloc(n ? n : 1);
  assert_non_null(p);
  for (size_t i = 0; i < n; i++) {
    seed = seed * 1103515245u + 12345u;
    p[i] = (unsigned char)(seed >> 16);
  }
  return p;
}

static void save_ok(fixture *f, const char *key, const void *data,
                    size_t n) {
  assert_int_equal(f->store->save(f->store->self, key, ID, data, n, 1000000),
                   XRT_OK);
}

/* Loads key and checks that it holds exactly want (n bytes). */
static void load_exact(fixture *f, const char *key, const void *want,
                       size_t n) {
  void *data = NULL;
  size_t size = 0;
  assert_int_equal(f->store->load(f->store->self, key, ID, &data, &size),
                   XRT_OK);
  assert_int_equal(size, n);
  assert_memory_equal(data, want, n);
  f->store->release_data(f->store->self, data);
}

static xrt_disk_cache_stats stats(fixture *f) {
  xrt_disk_cache_stats s;
  assert_int_equal(xrt_disk_cache_get_stats(f->cache, &s), XRT_OK);
  return s;
}

static void put32(unsigned char *p, uint32_t v) {
  for (int i = 0; i < 4; i++) p[i] = (unsigned char)(v >> (8 * i));
}
static void put64(unsigned char *p, uint64_t v) {
  for (int i = 0; i < 8; i++) p[i] = (unsigned char)(v >> (8 * i));
}

/* The file xrt_cache.c documents, built here from its description. */
static unsigned char *expected_file(const char *key, const char *id,
                                    const void *data, size_t n,
                                    uint32_t version, size_t *out_n) {
  size_t kl = strlen(key), il = strlen(id), total = 32 + kl + il + n + 8;
  unsigned char *b = calloc(1, total);
  assert_non_null(b);
  memcpy(b, "XRTCACHE", 8);
  put32(b + 8, version);
  put32(b + 12, (uint32_t)kl);
  put32(b + 16, (uint32_t)il);
  put64(b + 24, n);
  memcpy(b + 32, key, kl);
  memcpy(b + 32 + kl, id, il);
  memcpy(b + 32 + kl + il, data, n);
  put64(b + total - 8, XXH3_64bits(b, total - 8));
  *out_n = total;
  return b;
}

/* ---- round trip, miss, file format ---- */

static void test_round_trip_and_miss(void **state) {
  fixture *f = *state;
  unsigned char *p = payload(5000, 1);
  save_ok(f, KEY_A, p, 5000);
  load_exact(f, KEY_A, p, 5000);
  /* The file is exactly the documented layout. */
  char path[256];
  entry_path(f, KEY_A, path);
  size_t n = 0, want_n = 0;
  char *file = tu_read_file(path, &n);
  unsigned char *want = expected_file(KEY_A, ID, p, 5000, 1, &want_n);
  assert_int_equal(n, want_n);
  assert_memory_equal(file, want, n);
  free(file);
  free(want);
  /* A miss, and an empty payload. */
  void *data = (void *)1;
  size_t size = 7;
  assert_int_equal(f->store->load(f->store->self, KEY_B, ID, &data, &size),
                   XRT_NOT_FOUND);
  assert_null(data);
  save_ok(f, KEY_B, "", 0);
  load_exact(f, KEY_B, "", 0);
  xrt_disk_cache_stats s = stats(f);
  assert_int_equal(s.writes, 2);
  assert_int_equal(s.hits, 2);
  assert_int_equal(s.misses, 1);
  assert_int_equal(s.corrupt, 0);
  assert_int_equal(s.files, 2);
  assert_int_equal(s.bytes, want_n + 32 + 32 + strlen(ID) + 8);
  assert_int_equal(warnings, 0);
  /* No temporary file is left behind. */
  char names[4][256];
  assert_int_equal(list_names(f->dir, names, 4), 2);
  free(p);
}

/* ---- damaged files ---- */

typedef enum { FLIP, TRUNCATE, REPLACE, RENAME_FROM_B, OTHER_ID } damage_kind;

typedef struct damage {
  const char *what;
  damage_kind kind;
  long at;       /* FLIP: byte offset (< 0: from the end); TRUNCATE: size */
  uint32_t version; /* REPLACE: a resealed file of this version */
  const char *magic; /* REPLACE: with this magic */
} damage;

static void write_bytes(const char *path, const void *b, size_t n) {
  tu_write_file(path, b, n);
}

static void apply(fixture *f, const damage *d, const unsigned char *p,
                  size_t pn) {
  char path[256];
  entry_path(f, KEY_A, path);
  size_t n = 0;
  unsigned char *file = (unsigned char *)tu_read_file(path, &n);
  switch (d->kind) {
  case FLIP: {
    size_t at = d->at < 0 ? n - (size_t)-d->at : (size_t)d->at;
    file[at] ^= 0x20;
    write_bytes(path, file, n);
    break;
  }
  case TRUNCATE:
    write_bytes(path, file, (size_t)d->at);
    break;
  case REPLACE: {
    size_t rn = 0;
    unsigned char *r = expected_file(KEY_A, ID, p, pn, d->version, &rn);
    memcpy(r, d->magic, 8);
    put64(r + rn - 8, XXH3_64bits(r, rn - 8)); /* a valid checksum */
    write_bytes(path, r, rn);
    free(r);
    break;
  }
  case RENAME_FROM_B: {
    /* B's valid file under A's name. */
    unsigned char *q = payload(pn, 99);
    save_ok(f, KEY_B, q, pn);
    char bpath[256];
    entry_path(f, KEY_B, bpath);
    assert_int_equal(remove(path), 0); /* Windows' rename does not replace */
    assert_int_equal(rename(bpath, path), 0);
    free(q);
    break;
  }
  case OTHER_ID:
    break; /* loaded with another identity below */
  }
  free(file);
}

static void test_damaged_files(void **state) {
  fixture *f = *state;
  const size_t pn = 3000;
  unsigned char *p = payload(pn, 7);
  size_t full = 32 + strlen(KEY_A) + strlen(ID) + pn + 8;
  const damage cases[] = {
      {"flipped magic", FLIP, 0, 0, NULL},
      {"flipped version", FLIP, 8, 0, NULL},
      {"flipped key length", FLIP, 12, 0, NULL},
      {"flipped payload size", FLIP, 25, 0, NULL},
      {"flipped key byte", FLIP, 40, 0, NULL},
      {"flipped identity byte", FLIP, 32 + 32 + 2, 0, NULL},
      {"flipped payload byte", FLIP, 1500, 0, NULL},
      {"flipped last payload byte", FLIP, -9, 0, NULL},
      {"flipped checksum byte", FLIP, -1, 0, NULL},
      {"empty", TRUNCATE, 0, 0, NULL},
      {"truncated in the magic", TRUNCATE, 5, 0, NULL},
      {"truncated in the header", TRUNCATE, 31, 0, NULL},
      {"truncated in the key", TRUNCATE, 50, 0, NULL},
      {"truncated in the payload", TRUNCATE, 1000, 0, NULL},
      {"truncated in the checksum", TRUNCATE, (long)full - 3, 0, NULL},
      {"wrong magic", REPLACE, 0, 1, "XRTCACHX"},
      {"wrong version", REPLACE, 0, 2, "XRTCACHE"},
      {"wrong key", RENAME_FROM_B, 0, 0, NULL},
      {"other plugin", OTHER_ID, 0, 0, NULL},
  };
  char path[256];
  entry_path(f, KEY_A, path);
  for (size_t i = 0; i < TU_COUNT(cases); i++) {
    const damage *d = &cases[i];
    save_ok(f, KEY_A, p, pn);
    apply(f, d, p, pn);
    int w = warnings;
    uint64_t corrupt = stats(f).corrupt;
    void *data = NULL;
    size_t size = 0;
    const char *id = d->kind == OTHER_ID ? "sim 9.9.9" : ID;
    xrt_status s = f->store->load(f->store->self, KEY_A, id, &data, &size);
    if (s == XRT_OK || s == XRT_NOT_FOUND)
      fail_msg("%s: load returned %d", d->what, (int)s);
    assert_null(data);
    if (warnings != w + 1) fail_msg("%s: %d warnings", d->what, warnings - w);
    TU_ASSERT_CONTAINS(last_warning, path);
    assert_int_equal(stats(f).corrupt, corrupt + 1);
    if (exists(path)) fail_msg("%s: file not removed", d->what);
    /* The next compile writes it anew, and it loads. */
    save_ok(f, KEY_A, p, pn);
    load_exact(f, KEY_A, p, pn);
  }
  free(p);
}

/* ---- eviction, min_compile_ns, read_only ---- */

/* Sets a file's modification time to t seconds after the epoch. */
static void set_mtime(const char *path, time_t t) {
#if defined(_WIN32)
  struct __utimbuf64 u = {t, t}; /* the C runtime's SetFileTime */
  assert_int_equal(_utime64(path, &u), 0);
#else
  struct timespec ts[2] = {{t, 0}, {t, 0}};
  assert_int_equal(utimensat(AT_FDCWD, path, ts, 0), 0);
#endif
}

/* Reopens f's cache with room for three files of pn-byte payloads, not
 * four; the options to *o unless NULL.  Returns the size of one file
 * (header, key, id, payload, checksum). */
static size_t reopen_for_three(fixture *f, size_t pn,
                               xrt_disk_cache_options *o) {
  xrt_disk_cache_close(f->cache);
  size_t file = 32 + 32 + strlen(ID) + pn + 8;
  xrt_disk_cache_options three = opts(f);
  three.max_bytes = 3 * file + file / 2;
  open_with(f, &three);
  if (o) *o = three;
  return file;
}

static void test_eviction_oldest_first(void **state) {
  fixture *f = *state;
  const size_t pn = 1000;
  xrt_disk_cache_options o;
  size_t file = reopen_for_three(f, pn, &o);
  char keys[5][33];
  unsigned char *p[5];
  for (int i = 0; i < 5; i++) {
    snprintf(keys[i], sizeof keys[i], "%032x", 0x100 + i);
    p[i] = payload(pn, (unsigned)i);
  }
  /* Written in the order 0, 1, 2 with times 3000, 1000, 2000: the oldest
   * is 1, then 2, then 0. */
  const time_t when[3] = {3000, 1000, 2000};
  for (int i = 0; i < 3; i++) {
    char path[256];
    save_ok(f, keys[i], p[i], pn);
    entry_path(f, keys[i], path);
    set_mtime(path, when[i]);
  }
  assert_int_equal(stats(f).evictions, 0);
  save_ok(f, keys[3], p[3], pn);
  bool want[5] = {true, false, true, true, false};
  for (int i = 0; i < 4; i++) {
    char path[256];
    entry_path(f, keys[i], path);
    if (exists(path) != want[i]) fail_msg("after 4 writes: file %d", i);
  }
  save_ok(f, keys[4], p[4], pn);
  bool want2[5] = {true, false, false, true, true};
  for (int i = 0; i < 5; i++) {
    char path[256];
    entry_path(f, keys[i], path);
    if (exists(path) != want2[i]) fail_msg("after 5 writes: file %d", i);
  }
  xrt_disk_cache_stats s = stats(f);
  assert_int_equal(s.evictions, 2);
  assert_int_equal(s.files, 3);
  assert_int_equal(s.bytes, 3 * file);
  /* Reading a file counts as a use (below: it outlives newer files). */
  char p4[256];
  entry_path(f, keys[4], p4);
  set_mtime(p4, 5000);
  load_exact(f, keys[0], p[0], pn);
  /* A payload larger than the whole cache is declined, not written. */
  unsigned char *big = payload(4 * file, 5);
  uint64_t skipped = s.skipped;
  assert_int_equal(f->store->save(f->store->self, KEY_A, ID, big, 4 * file,
                                  1000000),
                   XRT_OK);
  char path[256];
  entry_path(f, KEY_A, path);
  assert_false(exists(path));
  assert_int_equal(stats(f).skipped, skipped + 1);
  free(big);
  /* Reopening with a smaller budget trims the directory at once. */
  xrt_disk_cache_close(f->cache);
  o.max_bytes = file + file / 2;
  open_with(f, &o);
  entry_path(f, keys[0], path);
  assert_true(exists(path)); /* the one used last stays */
  assert_false(exists(p4));
  assert_int_equal(stats(f).files, 1);
  for (int i = 0; i < 5; i++) free(p[i]);
}

/* Eviction goes by last use: a hit refreshes a file's time, so the file
 * written first but read since outlives one written later and never
 * read; a read-only cache's hits leave the times alone. */
static void test_eviction_least_recently_used(void **state) {
  fixture *f = *state;
  const size_t pn = 500;
  reopen_for_three(f, pn, NULL);
  char keys[4][33], path[4][256];
  unsigned char *p[4];
  for (int i = 0; i < 4; i++) {
    snprintf(keys[i], sizeof keys[i], "%032x", 0x200 + i);
    p[i] = payload(pn, (unsigned)(40 + i));
    entry_path(f, keys[i], path[i]);
  }
  /* Written in the order 0, 1, 2 at times 1000, 2000, 3000. */
  for (int i = 0; i < 3; i++) {
    save_ok(f, keys[i], p[i], pn);
    set_mtime(path[i], 1000 * (time_t)(i + 1));
  }
  /* A read-only cache reads 1 without touching it. */
  xrt_disk_cache_options ro = opts(f);
  ro.read_only = 1;
  xrt_disk_cache *rc = NULL;
  assert_int_equal(xrt_disk_cache_open(&ro, &rc), XRT_OK);
  const xrt_cache_store *rs = xrt_disk_cache_store(rc);
  void *data = NULL;
  size_t size = 0;
  assert_int_equal(rs->load(rs->self, keys[1], ID, &data, &size), XRT_OK);
  assert_int_equal(size, pn);
  rs->release_data(rs->self, data);
  xrt_disk_cache_close(rc);
  struct stat st;
  assert_int_equal(stat(path[1], &st), 0);
  assert_int_equal((long long)st.st_mtime, 2000);
  /* This cache reads 0: now the most recently used. */
  load_exact(f, keys[0], p[0], pn);
  assert_int_equal(stat(path[0], &st), 0);
  assert_true(st.st_mtime > 3000);
  save_ok(f, keys[3], p[3], pn); /* over budget: 1, used least, goes */
  const bool want[4] = {true, false, true, true};
  for (int i = 0; i < 4; i++)
    if (exists(path[i]) != want[i]) fail_msg("file %d: wrong one evicted", i);
  assert_int_equal(stats(f).evictions, 1);
  load_exact(f, keys[0], p[0], pn);
  for (int i = 0; i < 4; i++) free(p[i]);
}

static void test_min_compile_ns(void **state) {
  fixture *f = *state;
  xrt_disk_cache_close(f->cache);
  xrt_disk_cache_options o = opts(f);
  o.min_compile_ns = 5000000;
  open_with(f, &o);
  unsigned char *p = payload(100, 3);
  char path[256];
  entry_path(f, KEY_A, path);
  assert_int_equal(f->store->save(f->store->self, KEY_A, ID, p, 100, 4999999),
                   XRT_OK);
  assert_false(exists(path));
  assert_int_equal(stats(f).skipped, 1);
  assert_int_equal(stats(f).writes, 0);
  assert_int_equal(f->store->save(f->store->self, KEY_A, ID, p, 100, 5000000),
                   XRT_OK);
  assert_true(exists(path));
  load_exact(f, KEY_A, p, 100);
  free(p);
}

static void test_read_only(void **state) {
  fixture *f = *state;
  unsigned char *p = payload(200, 4);
  save_ok(f, KEY_A, p, 200);
  xrt_disk_cache_close(f->cache);
  xrt_disk_cache_options o = opts(f);
  o.read_only = 1;
  open_with(f, &o);
  load_exact(f, KEY_A, p, 200);
  save_ok(f, KEY_B, p, 200);
  char path[256];
  entry_path(f, KEY_B, path);
  assert_false(exists(path));
  xrt_disk_cache_stats s = stats(f);
  assert_int_equal(s.skipped, 1);
  assert_int_equal(s.writes, 0);
  assert_int_equal(s.writes_disabled, 0);
  assert_int_equal(warnings, 0);
  free(p);
}

/* ---- an unwritable directory ---- */

/* dir: a cache whose writes fail; one warning, loads miss, no failure. */
static void check_unwritable(fixture *f, const char *dir) {
  xrt_disk_cache_close(f->cache);
  f->cache = NULL;
  warnings = 0;
  xrt_disk_cache_options o = opts(f);
  o.directory = dir;
  open_with(f, &o);
  unsigned char *p = payload(300, 5);
  for (int i = 0; i < 3; i++) {
    f->store->save(f->store->self, KEY_A, ID, p, 300, 1000000);
    void *data = NULL;
    size_t size = 0;
    assert_int_not_equal(
        f->store->load(f->store->self, KEY_A, ID, &data, &size), XRT_OK);
    assert_null(data);
  }
  if (warnings != 1) fail_msg("%s: %d warnings, want 1", dir, warnings);
  TU_ASSERT_CONTAINS(last_warning, dir);
  xrt_disk_cache_stats s = stats(f);
  assert_int_equal(s.writes_disabled, 1);
  assert_int_equal(s.writes, 0);
  free(p);
}

static void test_unwritable_directory(void **state) {
  fixture *f = *state;
  /* A path under a regular file: not even root can create it. */
  char file[128], dir[160];
  snprintf(file, sizeof file, "%s/file", f->dir);
  tu_write_file(file, "x", 1);
  snprintf(dir, sizeof dir, "%s/sub", file);
  check_unwritable(f, dir);
  /* A directory that exists but takes no files (procfs; under wine too,
   * whose "/" is the Unix root). */
  check_unwritable(f, "/proc/self");
}

/* ---- bad arguments ---- */

static void test_bad_arguments(void **state) {
  fixture *f = *state;
  xrt_disk_cache *c = (xrt_disk_cache *)1;
  assert_int_equal(xrt_disk_cache_open(NULL, &c), XRT_INVALID_ARGUMENT);
  assert_null(c);
  xrt_disk_cache_options o;
  xrt_disk_cache_options_init(&o);
  assert_null(o.directory);
  assert_int_equal(o.max_bytes, (uint64_t)1 << 30);
  assert_int_equal(xrt_disk_cache_open(&o, &c), XRT_INVALID_ARGUMENT);
  TU_ASSERT_CONTAINS(xrt_last_error(), "directory");
  o.directory = "";
  assert_int_equal(xrt_disk_cache_open(&o, &c), XRT_INVALID_ARGUMENT);
  o.directory = f->dir;
  assert_int_equal(xrt_disk_cache_open(&o, NULL), XRT_INVALID_ARGUMENT);
  o.allocator.alloc = NULL;
  assert_int_equal(xrt_disk_cache_open(&o, &c), XRT_INVALID_ARGUMENT);
  assert_null(xrt_disk_cache_store(NULL));
  assert_int_equal(xrt_disk_cache_get_stats(NULL, NULL), XRT_INVALID_ARGUMENT);
  assert_int_equal(xrt_disk_cache_get_stats(f->cache, NULL),
                   XRT_INVALID_ARGUMENT);
  xrt_disk_cache_close(NULL);
  /* Keys that are not file names, missing out pointers. */
  char long_key[66];
  memset(long_key, 'a', 65); /* one more character than a file name takes */
  long_key[65] = 0;
  const char *bad_keys[] = {"", "../x", "a/b", "a.b", long_key};
  void *data = NULL;
  size_t size = 0;
  for (size_t i = 0; i < TU_COUNT(bad_keys); i++) {
    assert_int_equal(f->store->load(f->store->self, bad_keys[i], ID, &data,
                                    &size),
                     XRT_INVALID_ARGUMENT);
    assert_int_equal(f->store->save(f->store->self, bad_keys[i], ID, "x", 1,
                                    1000000),
                     XRT_INVALID_ARGUMENT);
  }
  assert_int_equal(f->store->load(f->store->self, KEY_A, ID, NULL, &size),
                   XRT_INVALID_ARGUMENT);
  assert_int_equal(f->store->save(f->store->self, KEY_A, ID, NULL, 5, 1),
                   XRT_INVALID_ARGUMENT);
  assert_int_equal(f->store->save(f->store->self, KEY_A, NULL, "x", 1, 1),
                   XRT_INVALID_ARGUMENT);
  assert_int_equal(stats(f).writes, 0);
}

/* ---- two processes, two threads ---- */

#define NKEYS 6
#define ROUNDS 150

static size_t proc_payload_size(int k) { return 2000 + 7919 * (size_t)k; }

/* Writes and reads the shared keys; returns the number of bad loads (a
 * load that is neither a miss nor the exact bytes one writer wrote). */
static int hammer(fixture *f, int writer) {
  int bad = 0;
  char keys[NKEYS][33];
  unsigned char *p[NKEYS][2];
  for (int k = 0; k < NKEYS; k++) {
    snprintf(keys[k], sizeof keys[k], "%032x", 0xabc00 + k);
    for (int w = 0; w < 2; w++)
      p[k][w] = payload(proc_payload_size(k), (unsigned)(k * 2 + w));
  }
  for (int r = 0; r < ROUNDS; r++) {
    int k = (r * 5 + writer) % NKEYS;
    if (f->store->save(f->store->self, keys[k], ID, p[k][writer],
                       proc_payload_size(k), 1000000) != XRT_OK)
      bad++;
    int j = (r * 3 + 1) % NKEYS;
    void *data = NULL;
    size_t size = 0;
    xrt_status s = f->store->load(f->store->self, keys[j], ID, &data, &size);
    if (s == XRT_OK) {
      size_t n = proc_payload_size(j);
      if (size != n || (memcmp(data, p[j][0], n) && memcmp(data, p[j][1], n)))
        bad++;
      f->store->release_data(f->store->self, data);
    } else if (s != XRT_NOT_FOUND) {
      bad++;
    }
  }
  for (int k = 0; k < NKEYS; k++)
    for (int w = 0; w < 2; w++) free(p[k][w]);
  return bad;
}

/* Two caches on one directory, each in a thread of its own: the races of
 * two processes (temporary names, a rename over a file the other is
 * reading), and the test of them that runs on Windows too. */
typedef struct hammer_job {
  fixture f; /* a copy of the test's, with a cache of its own */
  int writer, bad;
} hammer_job;

/* After two writers raced over the keys: every key was written by one of
 * the two, whole. */
static void assert_every_key_whole(fixture *f) {
  for (int k = 0; k < NKEYS; k++) {
    char key[33];
    snprintf(key, sizeof key, "%032x", 0xabc00 + k);
    void *data = NULL;
    size_t size = 0;
    assert_int_equal(f->store->load(f->store->self, key, ID, &data, &size),
                     XRT_OK);
    assert_int_equal(size, proc_payload_size(k));
    f->store->release_data(f->store->self, data);
  }
}

static void *hammer_thread(void *arg) {
  hammer_job *j = (hammer_job *)arg;
  j->bad = hammer(&j->f, j->writer);
  return NULL;
}

static void test_two_threads(void **state) {
  fixture *f = *state;
  hammer_job jobs[2];
  pthread_t threads[2];
  for (int w = 0; w < 2; w++) {
    jobs[w].f = *f;
    jobs[w].f.live = 0;
    jobs[w].writer = w;
    jobs[w].bad = -1;
    xrt_disk_cache_options o = opts(&jobs[w].f);
    open_with(&jobs[w].f, &o);
  }
  for (int w = 0; w < 2; w++)
    assert_int_equal(
        pthread_create(&threads[w], NULL, hammer_thread, &jobs[w]), 0);
  for (int w = 0; w < 2; w++) {
    assert_int_equal(pthread_join(threads[w], NULL), 0);
    assert_int_equal(jobs[w].bad, 0);
    assert_int_equal(stats(&jobs[w].f).corrupt, 0);
    assert_int_equal(stats(&jobs[w].f).writes_disabled, 0);
    xrt_disk_cache_close(jobs[w].f.cache);
    assert_int_equal(jobs[w].f.live, 0);
  }
  assert_int_equal(warnings, 0);
  assert_every_key_whole(f);
}

/* Not on Windows: it forks, which Windows cannot (test_two_threads runs
 * the same races there). */
#if !defined(_WIN32)
static void test_two_processes(void **state) {
  fixture *f = *state;
  pid_t pid = fork();
  assert_true(pid >= 0);
  if (pid == 0) {
    /* The child: its own cache on the same directory. */
    fixture g = *f;
    g.live = 0;
    xrt_disk_cache_options o = opts(&g);
    if (xrt_disk_cache_open(&o, &g.cache)) _exit(2);
    g.store = xrt_disk_cache_store(g.cache);
    int bad = hammer(&g, 1);
    xrt_disk_cache_stats s;
    xrt_disk_cache_get_stats(g.cache, &s);
    xrt_disk_cache_close(g.cache);
    _exit(bad || s.corrupt ? 1 : 0);
  }
  int bad = hammer(f, 0);
  int status = 0;
  assert_int_equal(waitpid(pid, &status, 0), pid);
  assert_true(WIFEXITED(status));
  assert_int_equal(WEXITSTATUS(status), 0);
  assert_int_equal(bad, 0);
  assert_int_equal(stats(f).corrupt, 0);
  assert_int_equal(warnings, 0);
  assert_every_key_whole(f);
}
#endif /* !_WIN32 */

/* ---- clients sharing a directory ---- */

/* A while loop, a func.call, a constant, a reduce, compare/select and a
 * host call: enough kinds of op, region, attribute and literal to check
 * that what comes back from disk computes what the compile did. */
static const char *kE2E =
    "module @e2e {\n"
    "func.func private @scale(%a: tensor<4xf32>) -> tensor<4xf32> {\n"
    "  %c = stablehlo.constant dense<[1.0, 2.0, 3.0, 4.0]> : tensor<4xf32>\n"
    "  %r = stablehlo.multiply %a, %c : tensor<4xf32>\n"
    "  func.return %r : tensor<4xf32>\n"
    "}\n"
    "func.func public @main(%x: tensor<4xf32>, %y: tensor<4xf32>) -> "
    "(tensor<4xf32>, tensor<f32>) {\n"
    "  %zero = stablehlo.constant dense<0> : tensor<i32>\n"
    "  %one = stablehlo.constant dense<1> : tensor<i32>\n"
    "  %three = stablehlo.constant dense<3> : tensor<i32>\n"
    "  %r:2 = stablehlo.while(%i = %zero, %acc = %x) : tensor<i32>, tensor<4xf32>\n"
    "  cond {\n"
    "    %c = stablehlo.compare LT, %i, %three : (tensor<i32>, tensor<i32>) -> tensor<i1>\n"
    "    stablehlo.return %c : tensor<i1>\n"
    "  } do {\n"
    "    %n = stablehlo.add %i, %one : tensor<i32>\n"
    "    %d = stablehlo.add %acc, %acc : tensor<4xf32>\n"
    "    stablehlo.return %n, %d : tensor<i32>, tensor<4xf32>\n"
    "  }\n"
    "  %s = func.call @scale(%r#1) : (tensor<4xf32>) -> tensor<4xf32>\n"
    "  %h = stablehlo.custom_call @negate(%s) {backend_config = \"x\"} : "
    "(tensor<4xf32>) -> tensor<4xf32>\n"
    "  %t = stablehlo.add %h, %y : tensor<4xf32>\n"
    "  %z = stablehlo.constant dense<0.0> : tensor<f32>\n"
    "  %sum = stablehlo.reduce(%t init: %z) applies stablehlo.add across "
    "dimensions = [0] : (tensor<4xf32>, tensor<f32>) -> tensor<f32>\n"
    "  %g = stablehlo.compare GT, %t, %y, FLOAT : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xi1>\n"
    "  %o = stablehlo.select %g, %t, %y : tensor<4xi1>, tensor<4xf32>\n"
    "  func.return %o, %sum : tensor<4xf32>, tensor<f32>\n"
    "}\n"
    "}\n";

static xrt_status negate(void *user, xrt_host_call *call) {
  (void)user;
  const float *in = (const float *)call->inputs[0].data;
  float *out = (float *)call->outputs[0].data;
  for (int i = 0; i < 4; i++) out[i] = -in[i];
  return XRT_OK;
}

/* A client with the disk store of f and the host function negate. */
static xrt_client *client_on(const xrt_cache_store *store) {
  xrt_client_options o;
  xrt_client_options_init(&o);
  o.cache_store = store;
  xrt_client *c = NULL;
  if (xrt_client_create(&o, &c) != XRT_OK)
    fail_msg("client: %s", xrt_last_error());
  assert_int_equal(xrt_client_register_host_function(c, "negate", negate,
                                                     NULL),
                   XRT_OK);
  return c;
}

static xrt_client *store_client(fixture *f) { return client_on(f->store); }

/* Runs kE2E on c and checks both outputs against a loop written here. */
static void run_e2e(xrt_client *c) {
  const float x[4] = {1, -2, 3, 0.5f}, y[4] = {-30, 10, 2, -1};
  float want[4], want_sum = 0;
  for (int i = 0; i < 4; i++) {
    float t = -(x[i] * 8 * (float)(i + 1)) + y[i]; /* 3 doublings, scale */
    want_sum += t;
    want[i] = t > y[i] ? t : y[i];
  }
  tu_in in[2] = {{TU_SHAPE(XRT_F32, 4), x}, {TU_SHAPE(XRT_F32, 4), y}};
  tu_out out;
  TU_RUN_OK(c, kE2E, 2, in, &out);
  assert_int_equal(out.n, 2);
  assert_memory_equal(out.data[0], want, sizeof want);
  assert_true(*(const float *)out.data[1] == want_sum);
  tu_out_free(&out);
}

static xrt_client_stats client_stats(xrt_client *c) {
  xrt_client_stats s;
  assert_int_equal(xrt_client_get_stats(c, &s), XRT_OK);
  return s;
}

static xrt_cache_stats cache_stats(xrt_client *c) {
  xrt_cache_stats s;
  assert_int_equal(xrt_client_get_cache_stats(c, &s), XRT_OK);
  return s;
}

static void test_clients_share_a_directory(void **state) {
  fixture *f = *state;
  xrt_client *a = store_client(f);
  run_e2e(a);
  assert_int_equal(client_stats(a).compiles, 1);
  assert_int_equal(cache_stats(a).store_writes, 1);
  assert_int_equal(stats(f).writes, 2); /* the executable and its alias */
  xrt_client_release(a);
  /* A fresh client (a new process would be the same): from disk. */
  xrt_client *b = store_client(f);
  run_e2e(b);
  assert_int_equal(client_stats(b).compiles, 0);
  xrt_cache_stats cs = cache_stats(b);
  assert_int_equal(cs.store_hits, 1);
  assert_int_equal(cs.store_errors, 0);
  assert_int_equal(stats(f).hits, 2); /* the alias, then the executable */
  xrt_client_release(b);
  assert_int_equal(warnings, 0);
}

/* Damages the one file of the directory: the byte at (from the end when
 * negative; at bytes after the start of the simulator's magic when
 * magic), and reseals its checksum when reseal. */
static void damage_entry(fixture *f, long at, bool magic, bool reseal) {
  char names[8][256];
  int n_names = list_names(f->dir, names, 8), found = -1;
  assert_true(n_names <= 8);
  for (int k = 0; k < n_names; k++)
    if (ends_with(names[k], ".xrtc") && strncmp(names[k], "a-", 2) != 0)
      found = k;
  assert_true(found >= 0);
  char path[256];
  snprintf(path, sizeof path, "%s" SEP "%s", f->dir, names[found]);
  size_t n = 0;
  unsigned char *b = (unsigned char *)tu_read_file(path, &n);
  size_t i = at < 0 ? n - (size_t)-at : (size_t)at;
  if (magic) {
    for (i = 0; i + 8 <= n && memcmp(b + i, "XSIMEXE1", 8) != 0; i++) {
    }
    i += (size_t)at;
  }
  assert_true(i < n);
  b[i] ^= 0x5a;
  if (reseal) put64(b + n - 8, XXH3_64bits(b, n - 8));
  tu_write_file(path, b, n);
  free(b);
}

static void test_damaged_entry_recompiles(void **state) {
  fixture *f = *state;
  /* Damage that the file's checksum catches, then damage behind a valid
   * checksum: the core's payload header, the simulator's magic, the
   * simulator's entry index (its reader refuses them: behind xrt's own
   * file checksum it does not hash its bytes again, see
   * test_sim_hash_behind_the_file_checksum). */
  const struct {
    long at;
    bool magic, reseal;
  } cases[] = {{-20, false, false}, {100, false, true}, {0, true, true},
               {24, true, true}};
  xrt_client *a = store_client(f);
  run_e2e(a);
  xrt_client_release(a);
  for (size_t i = 0; i < TU_COUNT(cases); i++) {
    damage_entry(f, cases[i].at, cases[i].magic, cases[i].reseal);
    warnings = 0;
    xrt_client *b = store_client(f);
    run_e2e(b); /* correct results, from a fresh compile */
    xrt_client_stats s = client_stats(b);
    xrt_cache_stats cs = cache_stats(b);
    xrt_client_release(b);
    if (s.compiles != 1) fail_msg("case %zu: loaded a damaged entry", i);
    assert_int_equal(cs.store_hits, 0);
    assert_int_equal(cs.store_errors, 1);
    assert_int_equal(cs.store_writes, 1); /* written anew */
    assert_true(warnings > 0);
  }
  /* The rewritten entry loads again. */
  xrt_client *c = store_client(f);
  run_e2e(c);
  assert_int_equal(client_stats(c).compiles, 0);
  xrt_client_release(c);
}

/* ---- bytes_verified: the simulator's hash behind the file's ---- */

/* A store of the user's that reads and writes through the disk cache
 * (self: the disk cache's store): its loads passed the file checksum, but
 * the core cannot know that of a store it did not write. */
static xrt_status wrap_load(void *self, const char *key, const char *id,
                            void **data, size_t *size) {
  const xrt_cache_store *in = (const xrt_cache_store *)self;
  return in->load(in->self, key, id, data, size);
}
static void wrap_release(void *self, void *data) {
  const xrt_cache_store *in = (const xrt_cache_store *)self;
  in->release_data(in->self, data);
}
static xrt_status wrap_save(void *self, const char *key, const char *id,
                            const void *data, size_t size, uint64_t ns) {
  const xrt_cache_store *in = (const xrt_cache_store *)self;
  return in->save(in->self, key, id, data, size, ns);
}

static void file_named(fixture *f, const char *prefix, char *out);

/* Flips one bit of the simulator's own XXH3-64 (8 bytes at offset 16 of
 * its bytes, which start with its magic) in the executable's file, and
 * reseals the file's checksum: the bytes are intact but for that hash. */
static void damage_sim_hash(fixture *f) {
  char key[128], path[256];
  file_named(f, NULL, key); /* the executable's (not the alias) */
  entry_path(f, key, path);
  size_t n = 0, i = 0;
  unsigned char *b = (unsigned char *)tu_read_file(path, &n);
  while (i + 24 <= n && memcmp(b + i, "XSIMEXE1", 8) != 0) i++;
  assert_true(i + 24 <= n);
  b[i + 16] ^= 0x01;
  put64(b + n - 8, XXH3_64bits(b, n - 8));
  tu_write_file(path, b, n);
  free(b);
}

/* xrt's disk cache checks its file's checksum over the plugin's bytes, so
 * the core tells the simulator (bytes_verified) and it skips its own hash:
 * bytes whose only fault is that hash load.  The same file read through a
 * store of the user's is not vouched for: the simulator checks its hash,
 * refuses the bytes, and the core compiles (and writes the entry anew). */
static void test_sim_hash_behind_the_file_checksum(void **state) {
  fixture *f = *state;
  xrt_client *a = store_client(f);
  run_e2e(a);
  xrt_client_release(a);
  damage_sim_hash(f);
  warnings = 0;
  xrt_client *b = store_client(f);
  run_e2e(b);
  assert_int_equal(client_stats(b).compiles, 0);
  assert_int_equal(cache_stats(b).store_hits, 1);
  assert_int_equal(cache_stats(b).store_errors, 0);
  xrt_client_release(b);
  assert_int_equal(warnings, 0);
  xrt_cache_store wrap = {sizeof wrap, (void *)(uintptr_t)f->store, wrap_load,
                          wrap_release, wrap_save};
  xrt_client *c = client_on(&wrap);
  run_e2e(c); /* correct results, from a fresh compile */
  assert_int_equal(client_stats(c).compiles, 1);
  assert_int_equal(cache_stats(c).store_hits, 0);
  assert_int_equal(cache_stats(c).store_errors, 1);
  assert_int_equal(cache_stats(c).store_writes, 1);
  xrt_client_release(c);
  assert_true(warnings > 0);
  assert_non_null(strstr(last_warning, "checksum mismatch"));
  /* the entry written anew loads through either store */
  xrt_client *d = client_on(&wrap);
  run_e2e(d);
  assert_int_equal(client_stats(d).compiles, 0);
  xrt_client_release(d);
}

/* ---- aliases: raw text to key ---- */

/* Whether name is "<32 hex digits>.xrtc" (an executable's file). */
static bool is_key_file(const char *name) {
  for (int i = 0; i < 32; i++)
    if (!name[i] || !strchr("0123456789abcdef", name[i])) return false;
  return strcmp(name + 32, ".xrtc") == 0;
}

/* The name (without ".xrtc") of the directory's one file whose name
 * starts with prefix ("a-": the alias), or (prefix NULL) that is an
 * executable's. */
static void file_named(fixture *f, const char *prefix, char *out) {
  char names[8][256];
  int n = list_names(f->dir, names, 8), found = 0;
  assert_true(n <= 8);
  out[0] = 0;
  for (int k = 0; k < n; k++) {
    bool match = prefix ? strncmp(names[k], prefix, strlen(prefix)) == 0 &&
                              ends_with(names[k], ".xrtc")
                        : is_key_file(names[k]);
    if (match && found++ == 0) snprintf(out, 128, "%.127s", names[k]);
  }
  assert_int_equal(found, 1); /* exactly one */
  out[strcspn(out, ".")] = 0;
}

/* The plugin identity recorded in the file of key (header fields). */
static void file_identity(fixture *f, const char *key, char *out) {
  char path[256];
  entry_path(f, key, path);
  size_t n = 0;
  unsigned char *b = (unsigned char *)tu_read_file(path, &n);
  assert_true(n > 32);
  uint32_t kl = (uint32_t)b[12] | (uint32_t)b[13] << 8, il = b[16];
  assert_true(32 + kl + il <= n && il < 128);
  memcpy(out, b + 32 + kl, il);
  out[il] = 0;
  free(b);
}

/* What the alias file names (32 characters). */
static void alias_target(fixture *f, const char *alias, const char *id,
                         char *out) {
  void *data = NULL;
  size_t size = 0;
  assert_int_equal(f->store->load(f->store->self, alias, id, &data, &size),
                   XRT_OK);
  assert_int_equal(size, 32);
  memcpy(out, data, 32);
  out[32] = 0;
  f->store->release_data(f->store->self, data);
}

/* A fresh client runs kE2E; checks its compiles, reads of the text as
 * tokens, store hits and store errors. */
static void fresh_run(fixture *f, uint64_t compiles, int reads,
                      uint64_t store_hits, uint64_t store_errors) {
  token_reads = 0;
  xrt_client *c = store_client(f);
  run_e2e(c);
  xrt_cache_stats cs = cache_stats(c);
  assert_int_equal(client_stats(c).compiles, compiles);
  assert_int_equal(token_reads, reads);
  assert_int_equal(cs.store_hits, store_hits);
  assert_int_equal(cs.store_errors, store_errors);
  xrt_client_release(c);
}

/* A fresh client finds the key through the alias without reading the
 * text as tokens; a garbage alias, one naming a missing key and a
 * missing executable each fall back to reading the text, and the alias is
 * written anew. */
static void test_alias_skips_the_text(void **state) {
  fixture *f = *state;
  assert_int_equal(xrt_log_configure("debug,cache"), XRT_OK);
  fresh_run(f, 1, 1, 0, 0); /* compiles, writes executable and alias */
  char alias[128], key[128], id[160], named[33];
  file_named(f, "a-", alias);
  file_named(f, NULL, key);
  assert_int_equal(strlen(key), 32);
  file_identity(f, key, id);
  alias_target(f, alias, id, named);
  assert_string_equal(named, key);
  fresh_run(f, 0, 0, 1, 0); /* the alias: no token read, no compile */
  assert_int_equal(warnings, 0);
  /* Garbage behind a valid file: a warning, a store error, a read. */
  assert_int_equal(f->store->save(f->store->self, alias, id,
                                  "not a key, not hex digits at all", 32,
                                  UINT64_MAX),
                   XRT_OK);
  fresh_run(f, 0, 1, 1, 1);
  assert_int_equal(warnings, 1);
  TU_ASSERT_CONTAINS(last_warning, alias);
  alias_target(f, alias, id, named);
  assert_string_equal(named, key); /* written anew */
  /* An alias naming a key with no file: read, then the real key loads. */
  assert_int_equal(f->store->save(f->store->self, alias, id, KEY_A, 32,
                                  UINT64_MAX),
                   XRT_OK);
  fresh_run(f, 0, 1, 1, 0);
  alias_target(f, alias, id, named);
  assert_string_equal(named, key);
  /* The executable gone: the alias leads nowhere, one compile. */
  char path[256];
  entry_path(f, key, path);
  assert_int_equal(unlink(path), 0);
  fresh_run(f, 1, 1, 0, 0);
  assert_true(exists(path));
  fresh_run(f, 0, 0, 1, 0);
  assert_int_equal(warnings, 1);
  assert_int_equal(xrt_log_configure("warn"), XRT_OK);
}

/* Another program with kE2E's signature: x + y, and the sum of x.  An
 * alias that led kE2E to its executable would run without an error and
 * give these wrong results. */
static const char *kOther =
    "module @other {\n"
    "func.func public @main(%x: tensor<4xf32>, %y: tensor<4xf32>) -> "
    "(tensor<4xf32>, tensor<f32>) {\n"
    "  %t = stablehlo.add %x, %y : tensor<4xf32>\n"
    "  %z = stablehlo.constant dense<0.0> : tensor<f32>\n"
    "  %sum = stablehlo.reduce(%x init: %z) applies stablehlo.add across "
    "dimensions = [0] : (tensor<4xf32>, tensor<f32>) -> tensor<f32>\n"
    "  func.return %t, %sum : tensor<4xf32>, tensor<f32>\n"
    "}\n"
    "}\n";

/* Runs kOther on c and checks it against a loop written here. */
static void run_other(xrt_client *c) {
  const float x[4] = {1, 2, 3, 4}, y[4] = {10, 20, 30, 40};
  float want[4], want_sum = 0;
  for (int i = 0; i < 4; i++) {
    want[i] = x[i] + y[i];
    want_sum += x[i];
  }
  tu_in in[2] = {{TU_SHAPE(XRT_F32, 4), x}, {TU_SHAPE(XRT_F32, 4), y}};
  tu_out out;
  TU_RUN_OK(c, kOther, 2, in, &out);
  assert_memory_equal(out.data[0], want, sizeof want);
  assert_true(*(const float *)out.data[1] == want_sum);
  tu_out_free(&out);
}

/* The name (without ".xrtc") of the one alias file that is not except. */
static void other_alias(fixture *f, const char *except, char *out) {
  char names[8][256];
  int n = list_names(f->dir, names, 8), found = 0;
  assert_true(n <= 8);
  for (int k = 0; k < n; k++)
    if (strncmp(names[k], "a-", 2) == 0 && ends_with(names[k], ".xrtc") &&
        strncmp(names[k], except, strlen(except)) != 0 && found++ == 0)
      snprintf(out, 128, "%.127s", names[k]);
  assert_int_equal(found, 1);
  out[strcspn(out, ".")] = 0;
}

/* An alias is not trusted blindly: one that names another program's
 * executable (stale, or forged behind a valid checksum) is caught, both
 * on disk and in memory, by what the executable records of its text;
 * the right executable is used (read as tokens, then loaded) and the
 * alias is replaced. */
static void test_alias_names_another_program(void **state) {
  fixture *f = *state;
  assert_int_equal(xrt_log_configure("debug,cache"), XRT_OK);
  xrt_client *a = store_client(f);
  run_e2e(a);
  char alias_e2e[128], alias_other[128], id[160];
  char key_e2e[33], key_other[33], named[33];
  file_named(f, "a-", alias_e2e);
  run_other(a);
  other_alias(f, alias_e2e, alias_other);
  assert_int_equal(xrt_compile_cache_key(a, kE2E, strlen(kE2E), NULL,
                                         key_e2e), XRT_OK);
  assert_int_equal(xrt_compile_cache_key(a, kOther, strlen(kOther), NULL,
                                         key_other), XRT_OK);
  assert_string_not_equal(key_e2e, key_other);
  xrt_client_release(a);
  file_identity(f, key_e2e, id);
  alias_target(f, alias_other, id, named);
  assert_string_equal(named, key_other);
  for (int in_memory = 0; in_memory < 2; in_memory++) {
    /* kE2E's alias now names kOther's executable. */
    assert_int_equal(f->store->save(f->store->self, alias_e2e, id, key_other,
                                    32, UINT64_MAX),
                     XRT_OK);
    warnings = 0;
    xrt_client *b = store_client(f);
    if (in_memory) run_other(b); /* kOther's executable is in memory */
    token_reads = 0;
    run_e2e(b); /* kE2E's results, not kOther's */
    assert_int_equal(token_reads, 1);
    assert_int_equal(client_stats(b).compiles, 0); /* loaded, by its key */
    assert_int_equal(cache_stats(b).store_hits, 1 + (uint64_t)in_memory);
    xrt_client_release(b);
    assert_int_equal(warnings, 1);
    TU_ASSERT_CONTAINS(last_warning, alias_e2e);
    TU_ASSERT_CONTAINS(last_warning, key_other);
    alias_target(f, alias_e2e, id, named);
    assert_string_equal(named, key_e2e); /* replaced */
  }
  /* The replaced alias is trusted again: no read of the text. */
  token_reads = 0;
  xrt_client *c = store_client(f);
  run_e2e(c);
  assert_int_equal(token_reads, 0);
  xrt_client_release(c);
  assert_int_equal(xrt_log_configure("warn"), XRT_OK);
}

/* ---- collectives from disk ---- */

/* An all_reduce in two groups of two replicas, and a permute by pairs:
 * read back from disk as one flat list, the groups would sum all four. */
static const char *kGroups =
    "module @groups attributes {mhlo.num_replicas = 4 : i32} {\n"
    "func.func @main(%a: tensor<2xf32>) -> tensor<2xf32> {\n"
    "  %r = \"stablehlo.all_reduce\"(%a) ({\n"
    "    ^bb0(%x: tensor<f32>, %y: tensor<f32>):\n"
    "      %s = stablehlo.add %x, %y : tensor<f32>\n"
    "      stablehlo.return %s : tensor<f32>\n"
    "  }) {replica_groups = dense<[[0, 2], [1, 3]]> : tensor<2x2xi64>}\n"
    "    : (tensor<2xf32>) -> tensor<2xf32>\n"
    "  %p = \"stablehlo.collective_permute\"(%r) {source_target_pairs = "
    "dense<[[0, 1], [1, 2], [2, 3], [3, 0]]> : tensor<4x2xi64>}\n"
    "    : (tensor<2xf32>) -> tensor<2xf32>\n"
    "  return %p : tensor<2xf32>\n"
    "}\n}\n";

/* Runs kGroups on c's 4 devices; checks against a loop written here. */
static void run_groups(xrt_client *c) {
  xrt_executable *exe = NULL;
  if (xrt_compile(c, kGroups, strlen(kGroups), NULL, &exe))
    fail_msg("compile: %s", xrt_last_error());
  float in[4][2], want[4][2];
  for (int p = 0; p < 4; p++)
    for (int i = 0; i < 2; i++) in[p][i] = (float)(10 * p + i + 1);
  for (int p = 0; p < 4; p++) { /* p receives from p - 1, group {q, q+2} */
    int q = (p + 3) % 4;
    for (int i = 0; i < 2; i++) want[p][i] = in[q % 2][i] + in[q % 2 + 2][i];
  }
  xrt_buffer *args[4] = {0}, *outs[4] = {0};
  xrt_buffer *const *lists[4];
  xrt_buffer **olists[4];
  xrt_shape sh = TU_SHAPE(XRT_F32, 2);
  for (int p = 0; p < 4; p++) {
    assert_int_equal(xrt_buffer_from_host(c, xrt_executable_device(exe, p),
                                          &sh, in[p], &args[p]), XRT_OK);
    lists[p] = &args[p];
    olists[p] = &outs[p];
  }
  xrt_event *done = NULL;
  assert_int_equal(xrt_execute_multi(exe, lists, 4, 1, olists, 1, NULL,
                                     &done), XRT_OK);
  assert_int_equal(xrt_event_await(done), XRT_OK);
  xrt_event_release(done);
  for (int p = 0; p < 4; p++) {
    float got[2];
    assert_int_equal(xrt_buffer_to_host(outs[p], got, sizeof got), XRT_OK);
    assert_memory_equal(got, want[p], sizeof got);
    xrt_buffer_release(args[p]);
    xrt_buffer_release(outs[p]);
  }
  xrt_executable_release(exe);
}

/* all_reduce and collective_permute load from disk with their groups and
 * pairs intact (the simulator's bytes keep a 2-D attribute's shape). */
static void test_collectives_from_disk(void **state) {
  fixture *f = *state;
  xrt_client_options o;
  xrt_client_options_init(&o);
  o.num_devices = 4;
  o.cache_store = f->store;
  for (int round = 0; round < 2; round++) {
    xrt_client *c = NULL;
    assert_int_equal(xrt_client_create(&o, &c), XRT_OK);
    run_groups(c);
    assert_int_equal(client_stats(c).compiles, round ? 0 : 1);
    assert_int_equal(cache_stats(c).store_hits, round ? 1 : 0);
    assert_int_equal(cache_stats(c).store_errors, 0);
    xrt_client_release(c);
  }
  assert_int_equal(warnings, 0);
}

/* ---- the simulator's serialized executables, directly ---- */

static xrt_status nop_host(void *user, xrt_host_call *call) {
  (void)user, (void)call;
  return XRT_OK;
}

/* The simulator's bytes carry an XXH3-64 of everything after byte 24 at
 * byte 16 (_dev/sim_serialize.inc); sets it for the first n bytes. */
static void sim_reseal(unsigned char *b, size_t n) {
  if (n < 24) return;
  uint64_t h = XXH3_64bits(b + 24, n - 24);
  memcpy(b + 16, &h, sizeof h);
}

/* Fills what the core tells executable_deserialize to expect (ABI 1.2):
 * the entry's signature as the module has it, into ins/outs (8 each). */
static void expect_signature(xrt_plugin_compile_args *d,
                             const xrt_ir_module *m, int32_t entry,
                             xrt_shape *ins, xrt_shape *outs) {
  const xrt_ir_func *f = &m->funcs[entry];
  assert_true(f->body.num_args <= 8 && f->num_results <= 8);
  for (int32_t i = 0; i < f->body.num_args; i++)
    ins[i] = f->value_types[f->body.args[i]].shape;
  for (int32_t i = 0; i < f->num_results; i++)
    outs[i] = f->result_types[i].shape;
  d->num_host_bindings = m->num_custom_calls;
  d->num_inputs = f->body.num_args;
  d->num_outputs = f->num_results;
  d->input_shapes = ins;
  d->output_shapes = outs;
}

/* Serializes kE2E compiled by the simulator's table, then checks that
 * the bytes load back to an executable that serializes to the same bytes;
 * that every truncation (its hash resealed, so that the reader's bounds
 * checks are what refuses it), a wrong magic or version, a trailing byte
 * are refused with XRT_INVALID_ARGUMENT; and that every flipped byte is
 * refused by the hash (ASan runs this too). */
/* Executable back (then destroyed) serializes to exactly bytes[0, n). */
static void assert_reserializes(const xrt_plugin_api *api, void *back,
                                const void *bytes, size_t n) {
  xrt_plugin_error err;
  void *bytes2 = NULL;
  size_t n2 = 0;
  assert_int_equal(api->executable_serialize(back, &bytes2, &n2, &err),
                   XRT_OK);
  assert_int_equal(n2, n);
  assert_memory_equal(bytes2, bytes, n);
  api->serialized_free(bytes2);
  api->executable_destroy(back);
}

static void test_sim_serialized_bytes(void **state) {
  (void)state;
  xrt_program *prog = NULL;
  int32_t entry;
  const xrt_ir_module *m = tu_parse_main(kE2E, "kE2E", &prog, &entry);
  const xrt_plugin_api *api = xrt_sim_plugin_api();
  assert_non_null(api->executable_serialize);
  assert_non_null(api->executable_deserialize);
  void *pc = tu_sim_plugin_client(1 << 26);
  xrt_plugin_error err;
  xrt_host_binding hosts[1] = {{nop_host, NULL}};
  int32_t device = 0;
  xrt_plugin_compile_args a = tu_plugin_compile_args(m, entry, &device);
  a.host_bindings = hosts;
  void *exe = NULL, *back = NULL, *bytes = NULL;
  size_t n = 0;
  assert_int_equal(api->compile(pc, &a, &exe, &err), XRT_OK);
  assert_int_equal(api->executable_serialize(exe, &bytes, &n, &err), XRT_OK);
  assert_true(n > 16);
  xrt_plugin_compile_args d = a;
  d.module = NULL;
  d.entry = -1;
  xrt_shape ins[8], outs[8];
  expect_signature(&d, m, entry, ins, outs);
  /* Bytes that disagree with the core's record of the executable (its
   * host calls, its outputs, an input's type) are refused. */
  xrt_plugin_compile_args wrong = d;
  wrong.num_host_bindings++;
  assert_int_equal(api->executable_deserialize(pc, &wrong, bytes, n, &back,
                                               &err), XRT_INVALID_ARGUMENT);
  wrong = d;
  wrong.num_outputs++;
  assert_int_equal(api->executable_deserialize(pc, &wrong, bytes, n, &back,
                                               &err), XRT_INVALID_ARGUMENT);
  assert_true(d.num_inputs > 0);
  xrt_shape other[8];
  memcpy(other, ins, sizeof other);
  other[0].dtype = other[0].dtype == XRT_F32 ? XRT_F64 : XRT_F32;
  wrong = d;
  wrong.input_shapes = other;
  assert_int_equal(api->executable_deserialize(pc, &wrong, bytes, n, &back,
                                               &err), XRT_INVALID_ARGUMENT);
  assert_int_equal(api->executable_deserialize(pc, &d, bytes, n, &back, &err),
                   XRT_OK);
  assert_reserializes(api, back, bytes, n);
  unsigned char *b = malloc(n + 1);
  assert_non_null(b);
  /* Bytes whose only fault is the simulator's own hash: refused unless the
   * core says its store checked a hash over them (bytes_verified), and
   * then loaded as they are (they serialize back to the original).  A core
   * whose struct ends before bytes_verified is not read there. */
  memcpy(b, bytes, n);
  b[16] ^= 0x01;
  assert_int_equal(api->executable_deserialize(pc, &d, b, n, &back, &err),
                   XRT_INVALID_ARGUMENT);
  assert_non_null(strstr(err.message, "checksum mismatch"));
  xrt_plugin_compile_args vouched = d;
  vouched.bytes_verified = 1;
  assert_int_equal(api->executable_deserialize(pc, &vouched, b, n, &back,
                                               &err), XRT_OK);
  assert_reserializes(api, back, bytes, n);
  xrt_plugin_compile_args older = vouched;
  older.struct_size = offsetof(xrt_plugin_compile_args, bytes_verified);
  assert_int_equal(api->executable_deserialize(pc, &older, b, n, &back,
                                               &err), XRT_INVALID_ARGUMENT);
  assert_int_equal(api->executable_deserialize(pc, &older, bytes, n, &back,
                                               &err), XRT_OK);
  api->executable_destroy(back);
  for (size_t cut = 0; cut < n; cut++) {
    memcpy(b, bytes, cut);
    sim_reseal(b, cut);
    back = (void *)1;
    if (api->executable_deserialize(pc, &d, b, cut, &back, &err) !=
        XRT_INVALID_ARGUMENT)
      fail_msg("cut to %zu bytes: not refused", cut);
    assert_null(back);
  }
  const size_t fields[] = {0, 8, n}; /* magic, version, one byte more */
  for (size_t i = 0; i < TU_COUNT(fields); i++) {
    memcpy(b, bytes, n);
    b[n] = 0;
    if (fields[i] < n) b[fields[i]] ^= 0x40;
    sim_reseal(b, n + (fields[i] == n));
    assert_int_equal(api->executable_deserialize(pc, &d, b, n + (fields[i] == n),
                                                 &back, &err),
                     XRT_INVALID_ARGUMENT);
  }
  int loaded = 0, refused = 0;
  for (size_t i = 0; i < n; i++) {
    memcpy(b, bytes, n);
    b[i] ^= 0xff;
    back = NULL;
    if (api->executable_deserialize(pc, &d, b, n, &back, &err) == XRT_OK) {
      assert_non_null(back);
      api->executable_destroy(back);
      loaded++;
    } else {
      assert_null(back);
      refused++;
    }
  }
  assert_int_equal(loaded, 0);
  assert_int_equal(refused, (int)n);
  free(b);
  api->serialized_free(bytes);
  api->executable_destroy(exe);
  api->client_destroy(pc);
  xrt_program_release(prog);
}

/* ---- every byte of a serialized executable, flipped and resealed ---- */

/* No host call, every value used, and no loop: a flipped operand id can
 * make a valid loop that never ends (so the fuzzer does not run what it
 * loads), while this test runs what loads. */
static const char *kSweep =
    "module @sweep {\n"
    "func.func private @scale(%a: tensor<4xf32>) -> tensor<4xf32> {\n"
    "  %c = stablehlo.constant dense<[1.0, 2.0, 3.0, 4.0]> : tensor<4xf32>\n"
    "  %r = stablehlo.multiply %a, %c : tensor<4xf32>\n"
    "  func.return %r : tensor<4xf32>\n"
    "}\n"
    "func.func public @main(%x: tensor<4xf32>, %y: tensor<4xf32>) -> "
    "(tensor<4xf32>, tensor<f32>) {\n"
    "  %s = func.call @scale(%x) : (tensor<4xf32>) -> tensor<4xf32>\n"
    "  %t = stablehlo.add %s, %y : tensor<4xf32>\n"
    "  %z = stablehlo.constant dense<0.0> : tensor<f32>\n"
    "  %sum = stablehlo.reduce(%t init: %z) applies stablehlo.add across "
    "dimensions = [0] : (tensor<4xf32>, tensor<f32>) -> tensor<f32>\n"
    "  %g = stablehlo.compare GT, %t, %y, FLOAT : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xi1>\n"
    "  %o = stablehlo.select %g, %t, %y : tensor<4xi1>, tensor<4xf32>\n"
    "  func.return %o, %sum : tensor<4xf32>, tensor<f32>\n"
    "}\n"
    "}\n";

typedef struct sweep_rig {
  const xrt_plugin_api *api;
  void *pc;
  void *mem[4]; /* x, y, o, sum on device 0 */
} sweep_rig;

/* Runs exe on x, y: XRT_OK with o and sum read back, or its error. */
static xrt_status sweep_run(sweep_rig *g, void *exe, const float *x,
                            const float *y, float *o, float *sum) {
  xrt_plugin_error err;
  assert_int_equal(g->api->buffer_write(g->pc, 0, g->mem[0], x, 16, &err),
                   XRT_OK);
  assert_int_equal(g->api->buffer_write(g->pc, 0, g->mem[1], y, 16, &err),
                   XRT_OK);
  xrt_plugin_execute_args ea = tu_plugin_exec_args(exe, g->mem, 2, 2);
  xrt_status s = g->api->execute(g->pc, &ea, &err);
  if (s) return s;
  assert_int_equal(g->api->buffer_read(g->pc, 0, g->mem[2], o, 16, &err),
                   XRT_OK);
  assert_int_equal(g->api->buffer_read(g->pc, 0, g->mem[3], sum, 4, &err),
                   XRT_OK);
  return XRT_OK;
}

/* For every byte of kSweep's serialized executable and two flips of it
 * (all bits, the lowest bit), with the simulator's hash resealed so that
 * only the reader's validation stands between the bytes and the planner:
 * the load is refused with XRT_INVALID_ARGUMENT, or gives an executable
 * that runs or refuses to run with an error.  A flip can make another valid program (an operand id that
 * names another value of the same type, a constant's data), which then
 * computes that program: no validity check can tell, only the hash
 * (which a reseal defeats).  So a run's output is compared with the
 * original's and the test counts those that match; the rest must still
 * run without a fault (ASan checks this too).  The unflipped bytes must
 * load and compute what a loop written here does. */
static void test_sim_bytes_sweep(void **state) {
  (void)state;
  xrt_program *prog = NULL;
  int32_t entry;
  const xrt_ir_module *m = tu_parse_main(kSweep, "kSweep", &prog, &entry);
  sweep_rig g = {xrt_sim_plugin_api(), tu_sim_plugin_client(1 << 24), {NULL}};
  xrt_plugin_error err;
  const size_t sizes[4] = {16, 16, 16, 4};
  for (int i = 0; i < 4; i++)
    assert_int_equal(g.api->buffer_alloc(g.pc, 0, sizes[i], &g.mem[i], &err),
                     XRT_OK);
  int32_t device = 0;
  xrt_plugin_compile_args a = tu_plugin_compile_args(m, entry, &device);
  void *exe = NULL, *bytes = NULL;
  size_t n = 0;
  assert_int_equal(g.api->compile(g.pc, &a, &exe, &err), XRT_OK);
  assert_int_equal(g.api->executable_serialize(exe, &bytes, &n, &err),
                   XRT_OK);
  g.api->executable_destroy(exe);
  xrt_plugin_compile_args d = a;
  d.module = NULL;
  d.entry = -1;
  xrt_shape ins[8], outs[8];
  expect_signature(&d, m, entry, ins, outs);

  const float x[4] = {1, -2, 3, 0.5f}, y[4] = {-30, 10, 2, -1};
  float want[4], want_sum = 0, o[4], sum;
  for (int i = 0; i < 4; i++) {
    float t = x[i] * (float)(i + 1) + y[i];
    want_sum += t;
    want[i] = t > y[i] ? t : y[i];
  }
  void *back = NULL;
  assert_int_equal(g.api->executable_deserialize(g.pc, &d, bytes, n, &back,
                                                 &err), XRT_OK);
  assert_int_equal(sweep_run(&g, back, x, y, o, &sum), XRT_OK);
  assert_memory_equal(o, want, sizeof want);
  assert_true(sum == want_sum);
  g.api->executable_destroy(back);

  unsigned char *b = malloc(n);
  assert_non_null(b);
  int refused = 0, same = 0, other = 0;
  const unsigned masks[2] = {0xff, 0x01};
  for (size_t k = 0; k < 2; k++) {
    for (size_t i = 0; i < n; i++) {
      memcpy(b, bytes, n);
      b[i] ^= (unsigned char)masks[k];
      sim_reseal(b, n);
      back = NULL;
      xrt_status s = g.api->executable_deserialize(g.pc, &d, b, n, &back,
                                                   &err);
      if (s) {
        if (s != XRT_INVALID_ARGUMENT)
          fail_msg("byte %zu ^ 0x%x: status %d (%s)", i, masks[k], (int)s,
                   err.message);
        assert_null(back);
        refused++;
        continue;
      }
      assert_non_null(back);
      s = sweep_run(&g, back, x, y, o, &sum);
      g.api->executable_destroy(back);
      if (s) refused++; /* say, the entry became @scale: refused at run */
      else if (memcmp(o, want, sizeof want) == 0 && sum == want_sum) same++;
      else other++;
    }
  }
  /* The header, ids, counts, names and types are refused; locations and
   * unused attribute payloads are not read by the planner. */
  print_message("%zu bytes x 2 flips: %d refused, %d same output, %d "
                "another output\n", n, refused, same, other);
  assert_int_equal(refused + same + other, (int)(2 * n));
  assert_true(refused > (int)n);
  assert_true(same > 0);
  free(b);
  g.api->serialized_free(bytes);
  for (int i = 0; i < 4; i++) g.api->buffer_free(g.pc, 0, g.mem[i]);
  g.api->client_destroy(g.pc);
  xrt_program_release(prog);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test_setup_teardown(test_round_trip_and_miss, setup,
                                      teardown),
      cmocka_unit_test_setup_teardown(test_damaged_files, setup, teardown),
      cmocka_unit_test_setup_teardown(test_eviction_oldest_first, setup,
                                      teardown),
      cmocka_unit_test_setup_teardown(test_eviction_least_recently_used,
                                      setup, teardown),
      cmocka_unit_test_setup_teardown(test_min_compile_ns, setup, teardown),
      cmocka_unit_test_setup_teardown(test_read_only, setup, teardown),
      cmocka_unit_test_setup_teardown(test_unwritable_directory, setup,
                                      teardown),
      cmocka_unit_test_setup_teardown(test_bad_arguments, setup, teardown),
#if !defined(_WIN32)
      cmocka_unit_test_setup_teardown(test_two_processes, setup, teardown),
#endif
      cmocka_unit_test_setup_teardown(test_two_threads, setup, teardown),
      cmocka_unit_test_setup_teardown(test_clients_share_a_directory, setup,
                                      teardown),
      cmocka_unit_test_setup_teardown(test_sim_hash_behind_the_file_checksum,
                                      setup, teardown),
      cmocka_unit_test_setup_teardown(test_damaged_entry_recompiles, setup,
                                      teardown),
      cmocka_unit_test_setup_teardown(test_alias_skips_the_text, setup,
                                      teardown),
      cmocka_unit_test_setup_teardown(test_alias_names_another_program,
                                      setup, teardown),
      cmocka_unit_test_setup_teardown(test_collectives_from_disk, setup,
                                      teardown),
      cmocka_unit_test(test_sim_serialized_bytes),
      cmocka_unit_test(test_sim_bytes_sweep),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
