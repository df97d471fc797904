/*
 * xrt_cache.c - the disk cache of compiled executables (issue #7): an
 * optional part of libxrt (make XRT_DISK_CACHE=0 leaves it out; when it is
 * in, XRT_HAVE_DISK_CACHE is defined).  MIT licensed; see LICENSE.
 *
 * One file per cache key, "<key>.xrtc", in one directory:
 *
 *   offset  size  field (integers little-endian)
 *        0     8  magic "XRTCACHE"
 *        8     4  format version (XC_VERSION)
 *       12     4  key length K
 *       16     4  plugin identity length P
 *       20     4  reserved (0)
 *       24     8  payload size N
 *       32     K  key, then P bytes of plugin identity, then N of payload
 *  32+K+P+N    8  XXH3-64 of every byte before it
 *
 * A file is written whole to a temporary name in the same directory and
 * renamed into place, so a reader (of any process) sees either no file or
 * a complete one; a file that is nonetheless damaged or foreign is
 * reported (warning, component "cache"), counted, removed, and its load
 * fails with XRT_DATA_LOSS so that the core compiles and writes it anew.
 * A hit sets the file's modification time to now (unless the cache is
 * read-only), so that eviction (oldest modification first) removes the
 * least recently used.
 *
 * Contents:
 *   1. Failures of the operating-system layer (the core's, src/core/os.h,
 *      which does mkdir, atomic write, read, touch, directory listing,
 *      unlink, pid), as the cache sees them
 *   2. The cache object, counters and messages
 *   3. File format: encode, check
 *   4. Load and save (the xrt_cache_store), eviction
 *   5. Public API: options, open, close, store, stats
 */

/* First: it sets the POSIX level before any system header. */
#include "../core/os.h"

#include "xrt.h"

#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define XXH_INLINE_ALL
#include <xxhash.h>

/* ======================================================================
 * 1. Failures of the operating-system layer: its functions return 0 or an
 * errno value (Windows errors mapped to them), which matter here as one of
 * these kinds.
 * ==================================================================== */

#define XC_SEP XRT__OS_SEP /* the directory separator of the paths built here */

enum {
  XC_OK = 0,
  XC_ENOENT = 1,    /* no such file */
  XC_EUNWRITABLE,   /* permission, read-only file system, not a directory */
  XC_EFULL,         /* no space or quota left; a file too large to read */
  XC_ENOMEM,        /* the allocator failed */
  XC_EOTHER
};

/* The kind of failure of errno value e (0: none). */
static int xc_errno_kind(int e) {
  switch (e) {
  case 0: return XC_OK;
  case ENOENT: return XC_ENOENT;
  case EACCES: case EPERM: case EROFS: case ENOTDIR: case EISDIR:
    return XC_EUNWRITABLE;
  case ENOSPC:
#ifdef EDQUOT
  case EDQUOT:
#endif
  case EFBIG:
    return XC_EFULL;
  case ENOMEM: return XC_ENOMEM;
  default: return XC_EOTHER;
  }
}

/* ======================================================================
 * 2. The cache object, counters and messages
 * ==================================================================== */

/* In xrt.c: sets xrt_last_error() (not public API). */
xrt_status xrt__set_error(xrt_status code, const char *message);

#define XC_MAGIC "XRTCACHE"
#define XC_VERSION 1u
#define XC_HEADER 32u
_Static_assert(XC_HEADER >= sizeof(void *), "room for xc_release");
#define XC_TRAILER 8u
#define XC_SUFFIX ".xrtc"
#define XC_MAX_KEY 64u
#define XC_MAX_IDENTITY 1024u
#define XC_PATH_MAX 4096u
/* A temporary file older than this belongs to a process that died. */
#define XC_STALE_TMP_NS ((int64_t)600 * 1000000000)

struct xrt_disk_cache {
  xrt_allocator al;
  char *dir;
  uint64_t max_bytes, min_compile_ns;
  int read_only;
  xrt_cache_store store;
  _Atomic int writes_disabled, read_warned;
  _Atomic uint64_t hits, misses, corrupt, writes, skipped, write_errors,
      evictions, files, bytes;
};

/* Temporary names differ across processes (pid) and threads (seq). */
static _Atomic uint64_t xc_tmp_seq;

#if defined(__GNUC__)
XRT_PRINTF_FORMAT(2, 3)
#endif
static xrt_status xc_fail(xrt_status code, const char *fmt, ...) {
  char msg[1024];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(msg, sizeof msg, fmt, ap);
  va_end(ap);
  return xrt__set_error(code, msg);
}

static void xc_inc(_Atomic uint64_t *c) { atomic_fetch_add(c, 1); }

/* Keys name files: hex digits and a few safe characters only. */
static int xc_key_ok(const char *key) {
  size_t n = key ? strlen(key) : 0;
  if (n == 0 || n > XC_MAX_KEY) return 0;
  for (size_t i = 0; i < n; i++) {
    char c = key[i];
    if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') ||
          (c >= 'A' && c <= 'Z') || c == '_' || c == '-'))
      return 0;
  }
  return 1;
}

static int xc_path(const xrt_disk_cache *c, const char *key, char *out) {
  int n = snprintf(out, XC_PATH_MAX, "%s" XC_SEP "%s" XC_SUFFIX, c->dir, key);
  return n > 0 && (size_t)n < XC_PATH_MAX;
}

/* Turns writing off for good, warning once (the first caller wins). */
static void xc_disable_writes(xrt_disk_cache *c, const char *why) {
  if (atomic_exchange(&c->writes_disabled, 1) == 0)
    xrt_log(XRT_LOG_WARN, "cache",
            "disk cache %s: %s; not writing to it any more", c->dir, why);
}

/* ======================================================================
 * 3. File format
 * ==================================================================== */

static void xc_put32(unsigned char *p, uint32_t v) {
  for (int i = 0; i < 4; i++) p[i] = (unsigned char)(v >> (8 * i));
}
static void xc_put64(unsigned char *p, uint64_t v) {
  for (int i = 0; i < 8; i++) p[i] = (unsigned char)(v >> (8 * i));
}
static uint32_t xc_get32(const unsigned char *p) {
  uint32_t v = 0;
  for (int i = 3; i >= 0; i--) v = v << 8 | p[i];
  return v;
}
static uint64_t xc_get64(const unsigned char *p) {
  uint64_t v = 0;
  for (int i = 7; i >= 0; i--) v = v << 8 | p[i];
  return v;
}

/* The whole file for a payload, from al; NULL when out of memory. */
static unsigned char *xc_encode(const xrt_allocator *al, const char *key,
                                const char *identity, const void *data,
                                size_t size, size_t *out_size) {
  size_t kl = strlen(key), il = strlen(identity);
  size_t total = XC_HEADER + kl + il + size + XC_TRAILER;
  if (size > SIZE_MAX - XC_HEADER - kl - il - XC_TRAILER) return NULL;
  unsigned char *f = (unsigned char *)al->alloc(al->self, total);
  if (!f) return NULL;
  memcpy(f, XC_MAGIC, 8);
  xc_put32(f + 8, XC_VERSION);
  xc_put32(f + 12, (uint32_t)kl);
  xc_put32(f + 16, (uint32_t)il);
  xc_put32(f + 20, 0);
  xc_put64(f + 24, (uint64_t)size);
  memcpy(f + XC_HEADER, key, kl);
  memcpy(f + XC_HEADER + kl, identity, il);
  if (size) memcpy(f + XC_HEADER + kl + il, data, size);
  xc_put64(f + total - XC_TRAILER, XXH3_64bits(f, total - XC_TRAILER));
  *out_size = total;
  return f;
}

/* What is wrong with file f (n bytes) as the entry for key and identity,
 * or NULL when it is that entry; *payload_at is then the payload's offset
 * and *payload_size its size. */
static const char *xc_check(const unsigned char *f, size_t n, const char *key,
                            const char *identity, size_t *payload_at,
                            size_t *payload_size) {
  if (n < 8 || memcmp(f, XC_MAGIC, 8) != 0) return "not an xrt cache file";
  if (n < XC_HEADER + XC_TRAILER) return "truncated header";
  if (xc_get32(f + 8) != XC_VERSION) return "unknown format version";
  uint64_t kl = xc_get32(f + 12), il = xc_get32(f + 16),
           size = xc_get64(f + 24);
  if (kl > XC_MAX_KEY || il > XC_MAX_IDENTITY || xc_get32(f + 20) != 0)
    return "bad header";
  if (size > n || XC_HEADER + kl + il + size + XC_TRAILER != n)
    return n < XC_HEADER + kl + il + size + XC_TRAILER ? "truncated"
                                                        : "bad size";
  if (XXH3_64bits(f, n - XC_TRAILER) != xc_get64(f + n - XC_TRAILER))
    return "checksum mismatch";
  if (kl != strlen(key) || memcmp(f + XC_HEADER, key, kl) != 0)
    return "written for another key";
  if (il != strlen(identity) ||
      memcmp(f + XC_HEADER + kl, identity, il) != 0)
    return "written by another plugin";
  *payload_at = (size_t)(XC_HEADER + kl + il);
  *payload_size = (size_t)size;
  return NULL;
}

/* ======================================================================
 * 4. Load and save, eviction
 * ==================================================================== */

static xrt_status xc_load(void *self, const char *key, const char *identity,
                          void **out_data, size_t *out_size) {
  xrt_disk_cache *c = (xrt_disk_cache *)self;
  char path[XC_PATH_MAX];
  if (!c || !out_data || !out_size || !identity || !xc_key_ok(key) ||
      !xc_path(c, key, path))
    return xc_fail(XRT_INVALID_ARGUMENT, "disk cache load: bad arguments");
  *out_data = NULL;
  *out_size = 0;
  void *buf = NULL;
  size_t n = 0;
  /* No file may be larger than the whole cache. */
  uint64_t max_size = c->max_bytes + XC_HEADER + XC_TRAILER + XC_MAX_KEY +
                      XC_MAX_IDENTITY;
  int err = xrt__os_read_file(path, &c->al, max_size, &buf, &n);
  /* A component of path that is not a directory: no such entry either. */
  int kind = err == ENOTDIR ? XC_ENOENT : xc_errno_kind(err);
  if (kind == XC_ENOENT) {
    xc_inc(&c->misses);
    xrt_log(XRT_LOG_DEBUG, "cache", "disk miss %s", key);
    return xc_fail(XRT_NOT_FOUND, "disk cache: no entry %s", key);
  }
  if (kind == XC_ENOMEM)
    return xc_fail(XRT_RESOURCE_EXHAUSTED, "disk cache: out of memory");
  if (kind != XC_OK && kind != XC_EFULL) {
    if (atomic_exchange(&c->read_warned, 1) == 0)
      xrt_log(XRT_LOG_WARN, "cache", "%s: cannot read it (warning once)",
              path);
    return xc_fail(XRT_UNAVAILABLE, "disk cache: cannot read %s", path);
  }
  size_t at = 0, size = 0;
  const char *why = kind == XC_EFULL
                        ? "larger than the cache"
                        : xc_check((const unsigned char *)buf, n, key,
                                   identity, &at, &size);
  if (why) {
    c->al.free(c->al.self, buf);
    xc_inc(&c->corrupt);
    xrt__os_unlink(path);
    xrt_log(XRT_LOG_WARN, "cache", "%s: %s; removed", path, why);
    return xc_fail(XRT_DATA_LOSS, "disk cache %s: %s", path, why);
  }
  /* The payload is handed out in place (no copy of a large payload); the
   * 8 bytes before it (identity or key, already checked) now hold the
   * block's address for xc_release. */
  char *payload = (char *)buf + at;
  memcpy(payload - sizeof buf, &buf, sizeof buf);
  if (!c->read_only) xrt__os_touch(path); /* eviction goes by last use */
  xc_inc(&c->hits);
  xrt_log(XRT_LOG_DEBUG, "cache", "disk hit %s (%zu bytes)", key, size);
  *out_data = payload;
  *out_size = size;
  return XRT_OK;
}

static void xc_release(void *self, void *data) {
  xrt_disk_cache *c = (xrt_disk_cache *)self;
  void *block = NULL;
  if (!c || !data) return;
  memcpy(&block, (char *)data - sizeof block, sizeof block);
  c->al.free(c->al.self, block);
}

/* The directory's cache files as eviction sees them. */
typedef struct xc_file {
  char name[XC_MAX_KEY + sizeof XC_SUFFIX];
  uint64_t size;
  int64_t mtime;
} xc_file;

typedef struct xc_scan {
  xrt_disk_cache *c;
  xc_file *files;
  size_t n, cap;
  uint64_t bytes;
  int64_t now;
  int oom;
} xc_scan;

static int xc_is_entry_name(const char *name) {
  size_t n = strlen(name), s = sizeof XC_SUFFIX - 1;
  return n > s && n - s <= XC_MAX_KEY && strcmp(name + n - s, XC_SUFFIX) == 0;
}

/* Per entry of the directory (an xrt__os_dir_fn): its regular files, with
 * their size and modification time. */
static int xc_scan_entry(void *ctx, const char *name) {
  xc_scan *sc = (xc_scan *)ctx;
  char path[XC_PATH_MAX];
  xrt__os_file_info info;
  if (snprintf(path, sizeof path, "%s" XC_SEP "%s", sc->c->dir, name) >=
          (int)sizeof path ||
      xrt__os_file_stat(path, &info) != 0 || !info.is_file)
    return 0;
  if (strncmp(name, ".tmp.", 5) == 0 &&
      sc->now - info.mtime_ns > XC_STALE_TMP_NS) {
    xrt__os_unlink(path); /* left by a process that died mid-write */
    return 0;
  }
  if (!xc_is_entry_name(name)) return 0;
  if (sc->n == sc->cap) {
    size_t cap = sc->cap ? 2 * sc->cap : 64;
    const xrt_allocator *al = &sc->c->al;
    xc_file *f = (xc_file *)al->alloc(al->self, cap * sizeof *f);
    if (!f) {
      sc->oom = 1;
      return 0;
    }
    if (sc->n) memcpy(f, sc->files, sc->n * sizeof *f);
    al->free(al->self, sc->files);
    sc->files = f;
    sc->cap = cap;
  }
  xc_file *f = &sc->files[sc->n++];
  snprintf(f->name, sizeof f->name, "%s", name);
  f->size = info.size;
  f->mtime = info.mtime_ns;
  sc->bytes += info.size;
  return 0;
}

static int xc_older(const void *a, const void *b) {
  const xc_file *x = (const xc_file *)a, *y = (const xc_file *)b;
  if (x->mtime != y->mtime) return x->mtime < y->mtime ? -1 : 1;
  return strcmp(x->name, y->name);
}

/* Removes the files used least recently (oldest modification time: a hit
 * refreshes it) until the directory holds at most max_bytes, and records
 * what it holds. */
static void xc_evict(xrt_disk_cache *c) {
  xc_scan sc = {c, NULL, 0, 0, 0, xrt__os_wall_ns(), 0};
  char why[256]; /* not reported: eviction is best effort */
  if (xrt__os_list_dir(c->dir, xc_scan_entry, &sc, why, sizeof why) != 0 ||
      sc.oom) {
    c->al.free(c->al.self, sc.files);
    return;
  }
  if (sc.bytes > c->max_bytes) qsort(sc.files, sc.n, sizeof *sc.files, xc_older);
  size_t i = 0;
  for (; i < sc.n && sc.bytes > c->max_bytes; i++) {
    char path[XC_PATH_MAX];
    if (snprintf(path, sizeof path, "%s" XC_SEP "%s", c->dir,
                 sc.files[i].name) >= (int)sizeof path)
      continue;
    xrt__os_unlink(path);
    sc.bytes -= sc.files[i].size;
    xc_inc(&c->evictions);
    xrt_log(XRT_LOG_DEBUG, "cache", "evicted %s (%" PRIu64 " bytes)",
            sc.files[i].name, sc.files[i].size);
  }
  atomic_store(&c->files, (uint64_t)(sc.n - i));
  atomic_store(&c->bytes, sc.bytes);
  c->al.free(c->al.self, sc.files);
}

/* Declines a save: counted, not an error. */
static xrt_status xc_skip(xrt_disk_cache *c, const char *key, const char *why) {
  xc_inc(&c->skipped);
  xrt_log(XRT_LOG_DEBUG, "cache", "not writing %s: %s", key, why);
  return XRT_OK;
}

static xrt_status xc_save(void *self, const char *key, const char *identity,
                          const void *data, size_t size, uint64_t compile_ns) {
  xrt_disk_cache *c = (xrt_disk_cache *)self;
  char path[XC_PATH_MAX], tmp[XC_PATH_MAX];
  if (!c || !identity || strlen(identity) > XC_MAX_IDENTITY ||
      (!data && size) || !xc_key_ok(key) || !xc_path(c, key, path))
    return xc_fail(XRT_INVALID_ARGUMENT, "disk cache save: bad arguments");
  if (c->read_only) return xc_skip(c, key, "read-only");
  if (atomic_load(&c->writes_disabled)) return xc_skip(c, key, "disabled");
  if (compile_ns < c->min_compile_ns) return xc_skip(c, key, "cheap compile");
  if (size > c->max_bytes) return xc_skip(c, key, "larger than max_bytes");
  size_t n = 0;
  unsigned char *f = xc_encode(&c->al, key, identity, data, size, &n);
  if (!f) {
    xc_inc(&c->write_errors);
    return xc_fail(XRT_RESOURCE_EXHAUSTED, "disk cache: out of memory");
  }
  if (n > c->max_bytes) {
    c->al.free(c->al.self, f);
    return xc_skip(c, key, "larger than max_bytes");
  }
  snprintf(tmp, sizeof tmp, "%s" XC_SEP ".tmp.%ld.%" PRIu64 ".%s", c->dir,
           xrt__os_pid(), atomic_fetch_add(&xc_tmp_seq, 1), key);
  int kind = xc_errno_kind(xrt__os_write_file_atomic(c->dir, tmp, path, f, n));
  c->al.free(c->al.self, f);
  if (kind) {
    xc_inc(&c->write_errors);
    if (kind == XC_EUNWRITABLE || kind == XC_EFULL || kind == XC_ENOENT)
      xc_disable_writes(c, kind == XC_EFULL ? "the disk is full"
                                            : "the directory is not writable");
    return xc_fail(XRT_UNAVAILABLE, "disk cache: cannot write %s", path);
  }
  xc_inc(&c->writes);
  xrt_log(XRT_LOG_DEBUG, "cache", "wrote %s (%zu bytes)", key, size);
  xc_evict(c);
  return XRT_OK;
}

/* ======================================================================
 * 5. Public API
 * ==================================================================== */

void xrt_disk_cache_options_init(xrt_disk_cache_options *options) {
  if (!options) return;
  memset(options, 0, sizeof *options);
  options->max_bytes = (uint64_t)1 << 30;
  options->allocator = xrt_allocator_system();
}

xrt_status xrt_disk_cache_open(const xrt_disk_cache_options *options,
                               xrt_disk_cache **out_cache) {
  if (out_cache) *out_cache = NULL;
  if (!options || !out_cache)
    return xc_fail(XRT_INVALID_ARGUMENT, "xrt_disk_cache_open: NULL %s",
                   options ? "out_cache" : "options");
  const xrt_allocator *al = &options->allocator;
  if (!al->alloc || !al->free)
    return xc_fail(XRT_INVALID_ARGUMENT,
                   "xrt_disk_cache_open: allocator without alloc or free");
  size_t dl = options->directory ? strlen(options->directory) : 0;
  if (dl == 0 || dl > XC_PATH_MAX - XC_MAX_KEY - 64)
    return xc_fail(XRT_INVALID_ARGUMENT,
                   "xrt_disk_cache_open: directory %s",
                   dl ? "path too long" : "missing (NULL or empty)");
  if (options->max_bytes == 0)
    return xc_fail(XRT_INVALID_ARGUMENT, "xrt_disk_cache_open: max_bytes 0");
  xrt_disk_cache *c = (xrt_disk_cache *)al->alloc(al->self, sizeof *c);
  char *dir = (char *)al->alloc(al->self, dl + 1);
  if (!c || !dir) {
    al->free(al->self, c);
    al->free(al->self, dir);
    return xc_fail(XRT_RESOURCE_EXHAUSTED, "xrt_disk_cache_open: out of memory");
  }
  memset(c, 0, sizeof *c);
  memcpy(dir, options->directory, dl + 1);
  while (dl > 1 && dir[dl - 1] == '/') dir[--dl] = 0;
  c->al = *al;
  c->dir = dir;
  c->max_bytes = options->max_bytes;
  c->min_compile_ns = options->min_compile_ns;
  c->read_only = options->read_only != 0;
  c->store = (xrt_cache_store){sizeof(xrt_cache_store), c, xc_load,
                               xc_release, xc_save};
  if (!c->read_only) {
    int kind = xc_errno_kind(xrt__os_mkdir(dir));
    if (kind)
      xc_disable_writes(c, kind == XC_ENOENT ? "its parent does not exist"
                                             : "cannot create the directory");
    else
      xc_evict(c); /* counts what is there, trims to a smaller max_bytes */
  }
  *out_cache = c;
  return XRT_OK;
}

void xrt_disk_cache_close(xrt_disk_cache *cache) {
  if (!cache) return;
  xrt_allocator al = cache->al;
  al.free(al.self, cache->dir);
  al.free(al.self, cache);
}

const xrt_cache_store *xrt_disk_cache_store(xrt_disk_cache *cache) {
  if (!cache) {
    xc_fail(XRT_INVALID_ARGUMENT, "xrt_disk_cache_store: NULL cache");
    return NULL;
  }
  return &cache->store;
}

/* For xrt.c (not public API): whether store's loads are this file's,
 * which hand out only payloads whose file checksum matched (xc_check), so
 * that a plugin may skip hashing them again (bytes_verified).  By the load
 * function, not the table's address: a copy of the table loads alike. */
int xrt__disk_cache_verifies(const xrt_cache_store *store);
int xrt__disk_cache_verifies(const xrt_cache_store *store) {
  return store && store->load == xc_load;
}

xrt_status xrt_disk_cache_get_stats(xrt_disk_cache *cache,
                                    xrt_disk_cache_stats *out) {
  if (!cache || !out)
    return xc_fail(XRT_INVALID_ARGUMENT, "xrt_disk_cache_get_stats: NULL %s",
                   cache ? "out" : "cache");
  memset(out, 0, sizeof *out);
  out->hits = atomic_load(&cache->hits);
  out->misses = atomic_load(&cache->misses);
  out->corrupt = atomic_load(&cache->corrupt);
  out->writes = atomic_load(&cache->writes);
  out->skipped = atomic_load(&cache->skipped);
  out->write_errors = atomic_load(&cache->write_errors);
  out->evictions = atomic_load(&cache->evictions);
  out->files = atomic_load(&cache->files);
  out->bytes = atomic_load(&cache->bytes);
  out->writes_disabled = atomic_load(&cache->writes_disabled);
  return XRT_OK;
}
