/*
 * src/core/os.h - the interface of the operating-system layer (src/core/
 * os.c), which the core and the disk cache (src/cache) share: its types,
 * macros and functions, and the macros that keep them out of libxrt's
 * exports.  Part of the core of xrt; MIT licensed, see LICENSE.
 *
 * Everything that differs between POSIX systems and Windows is here, behind
 * small xrt__os_* helpers; the rest of the code has no platform #ifdef.
 * Windows builds use mingw-w64 with its POSIX thread model, so pthreads
 * (winpthreads), <stdatomic.h> and _Thread_local work there as on Linux:
 * threads, mutexes and atomics are shared code.  What differs: dynamic
 * loading (LoadLibrary, GetProcAddress, FreeLibrary, with FormatMessage's
 * reasons), file identity, paths and directory listing (file names are
 * UTF-8, converted to UTF-16 for Windows), files read and written whole,
 * atomic replacement of a file (MoveFileExW), aligned allocation
 * (_aligned_malloc), the clocks and timed waits on the monotonic one, the
 * CPU count and the process id.  Helpers that can fail return 0 or an errno
 * value (Windows errors are mapped to errno values, so callers map failures
 * one way); those whose failures the core reports also write the system's
 * reason into why[cap].
 *
 * The first header of the core (src/core/internal.h includes it first, and
 * the generated xrt.c and xrt_cache.c begin with it): it sets the POSIX
 * level every file compiles at, before any system header.
 */
#ifndef XRT__OS_H
#define XRT__OS_H

#if !defined(_POSIX_C_SOURCE) || _POSIX_C_SOURCE < 200809L
#undef _POSIX_C_SOURCE
#define _POSIX_C_SOURCE 200809L
#endif

#include "xrt.h"

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

/* Functions and data that one file of src/core defines for others: hidden
 * (extern, but not exported) in the separate build, static in the
 * generated single file, which defines XRT__AMALGAMATION. */
#if defined(XRT__AMALGAMATION)
#define XRT__PRIVATE static
#define XRT__PRIVATE_DATA static
#define XRT__EXTERN_DATA static
#elif defined(__GNUC__) && !defined(_WIN32)
#define XRT__PRIVATE __attribute__((visibility("hidden")))
#define XRT__PRIVATE_DATA __attribute__((visibility("hidden")))
#define XRT__EXTERN_DATA extern __attribute__((visibility("hidden")))
#else
#define XRT__PRIVATE
#define XRT__PRIVATE_DATA
#define XRT__EXTERN_DATA extern
#endif

/* The functions of the layer that the disk cache calls too: hidden, as
 * XRT__PRIVATE, but never static, since in the generated single files the
 * cache (xrt_cache.c) is a file apart from the core (xrt.c). */
#if defined(__GNUC__) && !defined(_WIN32)
#define XRT__OS_API __attribute__((visibility("hidden")))
#else
#define XRT__OS_API
#endif

#if defined(_WIN32)
#ifndef WIN32_LEAN_AND_MEAN
#define WIN32_LEAN_AND_MEAN
#endif
#ifndef NOMINMAX
#define NOMINMAX
#endif
#include <malloc.h> /* _aligned_malloc */
#include <windows.h>
#define XRT__OS_LIB_EXT ".dll"
#define XRT__OS_SEP "\\" /* the directory separator of the paths xrt makes */
/* XRT_PLUGINS entries are "name;path" on Windows, where ':' belongs to
 * drive letters (as in JAX's PJRT_NAMES_AND_LIBRARY_PATHS). */
#define XRT__OS_PLUGIN_SEP ';'
#else
#include <dirent.h>
#include <dlfcn.h>
#include <sys/stat.h>
#include <unistd.h>
#if defined(__APPLE__)
#define XRT__OS_LIB_EXT ".dylib"
#else
#define XRT__OS_LIB_EXT ".so"
#endif
#define XRT__OS_SEP "/"
#define XRT__OS_PLUGIN_SEP ':'
#endif
#define XRT__OS_HERE "." XRT__OS_SEP

/* A loaded library's symbol, as a function pointer (cast it to its type). */
typedef void (*xrt__os_fn)(void);
/* Two paths name one file iff their ids are equal. */
typedef struct xrt__os_file_id {
  uint64_t dev, ino;
} xrt__os_file_id;
/* What xrt__os_file_stat tells of a path (symbolic links followed, except
 * that on Windows a reparse point is neither a file nor followed). */
typedef struct xrt__os_file_info {
  bool is_file, is_dir; /* a regular file; a directory */
  uint64_t size;        /* in bytes */
  int64_t mtime_ns;     /* last modification, as xrt__os_wall_ns counts */
} xrt__os_file_info;
/* Called per directory entry; nonzero stops the listing with that value. */
typedef int (*xrt__os_dir_fn)(void *ctx, const char *name);
XRT__PRIVATE int64_t xrt__os_now_ns(void);
/* The wall clock in nanoseconds since 1970 (comparable with file times). */
XRT__OS_API int64_t xrt__os_wall_ns(void);
XRT__PRIVATE void xrt__os_sleep_ns(long ns);
XRT__PRIVATE int xrt__os_cpu_count(void);
XRT__OS_API long xrt__os_pid(void);
XRT__PRIVATE void xrt__os_cond_init(pthread_cond_t *cv);
XRT__PRIVATE int xrt__os_cond_wait_until(pthread_cond_t *cv, pthread_mutex_t *mu,
                                   int64_t deadline_ns);
XRT__PRIVATE void *xrt__os_aligned_alloc(size_t align, size_t size);
XRT__PRIVATE void xrt__os_aligned_free(void *p);
XRT__PRIVATE void *xrt__os_dl_open(const char *path, char *why, size_t cap);
XRT__PRIVATE xrt__os_fn xrt__os_dl_sym(void *lib, const char *name, char *why,
                                 size_t cap);
XRT__PRIVATE void xrt__os_dl_close(void *lib);
XRT__PRIVATE int xrt__os_file_identify(const char *path, xrt__os_file_id *id,
                                 bool *is_dir, char *why, size_t cap);
XRT__OS_API int xrt__os_file_stat(const char *path, xrt__os_file_info *info);
XRT__PRIVATE bool xrt__os_path_is_bare(const char *path);
XRT__OS_API int xrt__os_list_dir(const char *dir, xrt__os_dir_fn fn, void *ctx,
                                 char *why, size_t cap);
/* Creates directory path (one level); an existing directory is fine,
 * anything else of that name fails with ENOTDIR. */
XRT__OS_API int xrt__os_mkdir(const char *path);
XRT__PRIVATE FILE *xrt__os_fopen(const char *path, const char *mode);
/* Reads the whole file at path into a block from al: *out, *out_size bytes
 * (the block has a byte more, so that an empty file has one too; a file
 * that shrinks while read comes out short).  A file larger than max_size
 * fails with EFBIG. */
XRT__OS_API int xrt__os_read_file(const char *path, const xrt_allocator *al,
                                  uint64_t max_size, void **out,
                                  size_t *out_size);
XRT__PRIVATE int xrt__os_temp_file(char *tmpl, char *why, size_t cap);
XRT__PRIVATE int xrt__os_replace_file(const char *from, const char *to, char *why,
                                size_t cap);
/* Writes data to tmp, a new file in directory dir, flushes it to the disk
 * and renames it over path (in dir too), then flushes dir: readers of any
 * process see the old file or the whole new one, even after a crash.  On
 * failure tmp is gone. */
XRT__OS_API int xrt__os_write_file_atomic(const char *dir, const char *tmp,
                                          const char *path, const void *data,
                                          size_t size);
/* Sets the file's modification time to now (best effort: a read-only
 * directory keeps the old time). */
XRT__OS_API void xrt__os_touch(const char *path);
XRT__OS_API int xrt__os_unlink(const char *path);

#endif /* XRT__OS_H */
